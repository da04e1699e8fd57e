/* bench_retry — ns per bw_retry_next (each jitter kind), per retry-budget
 * check, per rate-limiter admit; allocations during the timed loops; and, with
 * --peers, retry wrappers of other libraries around a no-op that succeeds
 * (cockatiel, tenacity, backoff: bench/peers/run.sh --only retry).
 *
 *   build/bench/bench_retry [--n N] [--reps R] [--peers] [--quick]
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakwater/breakwater.h"
#include "bench_util.h"

#ifndef BW_SOURCE_DIR
#define BW_SOURCE_DIR "."
#endif

static long long g_n = 20000000;
static int g_reps = 5;
static volatile int64_t g_sink;

/* Runs fn(arg) g_reps times; returns the median ns/op, *best the fastest. */
typedef double (*bench_fn)(void *arg);
static double measure(bench_fn fn, void *arg, double *best,
                      unsigned long long *allocs) {
  double runs[16];
  for (int r = 0; r < g_reps; r++) {
    unsigned long long before = bench_allocs();
    runs[r] = fn(arg);
    *allocs += bench_allocs() - before;
  }
  return bench_median(runs, g_reps, best);
}

/* The floor, measured in the same run: this VM has slow phases in which
 * every figure doubles; read the others against it. */
static double b_floor_clock(void *arg) {
  return bench_clock_ns(arg, g_n);
}

static double b_floor_rand(void *arg) {
  bw_rand_t r;
  double t;
  (void)arg;
  bw_rand_seed(&r, 1);
  t = bench_now_s();
  for (long long i = 0; i < g_n; i++)
    g_sink += (int64_t)bw_rand_next(&r);
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static bw_retry_policy_t *policy(bw_jitter_t j, bw_budget_t *budget) {
  bw_retry_config_t cfg;
  bw_error_t err;
  bw_retry_policy_t *p;
  bw_retry_config_init(&cfg);
  cfg.max_attempts = 0;
  cfg.max_elapsed_ms = 1000LL * 1000 * 1000 * 1000; /* never in the loop */
  cfg.jitter = j;
  cfg.seed = 42;
  cfg.budget = budget;
  p = bw_retry_policy_new(&cfg, &err);
  if (p == NULL) {
    fprintf(stderr, "bench_retry: %s\n", err.message);
    exit(1);
  }
  return p;
}

/* bw_retry_next after a transient failure: the decision and the delay. The
 * iterator is restarted every 8 retries so delays stay on the curve. */
static double b_next(void *arg) {
  const bw_retry_policy_t *p = arg;
  bw_retry_t r;
  int64_t delay = 0, now = 0;
  double t;
  bw_retry_begin(&r, p, now);
  t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    if ((i & 7) == 7) bw_retry_begin(&r, p, now);
    bw_retry_next(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, now, &delay);
    g_sink += delay;
  }
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

/* What a peer's "retry around a no-op that succeeds" costs us: begin, then
 * next(OK). */
static double b_wrap_success(void *arg) {
  const bw_retry_policy_t *p = arg;
  bw_retry_t r;
  int64_t delay = 0;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    bw_retry_begin(&r, p, 0);
    g_sink += bw_retry_next(&r, BW_VERDICT_OK, BW_RETRY_AFTER_NONE, 0, &delay);
  }
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double b_budget_try(void *arg) {
  bw_budget_t *b = arg;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++)
    g_sink += bw_budget_try_retry(b);
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double b_budget_request(void *arg) {
  bw_budget_t *b = arg;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++)
    bw_budget_on_request(b);
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double b_ratelimit(void *arg) {
  bw_ratelimit_t *rl = arg;
  int64_t wait = 0;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    g_sink += bw_ratelimit_try_acquire(rl, &wait);
  }
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static bw_budget_t *budget(bw_budget_kind_t kind, const bw_clock_t *clock) {
  bw_budget_config_t cfg;
  bw_error_t err;
  bw_budget_t *b;
  bw_budget_config_init(&cfg);
  cfg.kind = kind;
  cfg.clock = clock;
  cfg.min_retries_per_sec = 1e9; /* ratio: the floor always allows */
  b = bw_budget_new(&cfg, &err);
  if (b == NULL) {
    fprintf(stderr, "bench_retry: %s\n", err.message);
    exit(1);
  }
  return b;
}

static bw_ratelimit_t *limiter(const bw_clock_t *clock) {
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  bw_ratelimit_t *rl;
  bw_ratelimit_config_init(&cfg);
  cfg.rate_per_sec = 1e9; /* always admits: measures the decision */
  cfg.burst = 1000000;
  cfg.clock = clock;
  rl = bw_ratelimit_new(&cfg, &err);
  if (rl == NULL) {
    fprintf(stderr, "bench_retry: %s\n", err.message);
    exit(1);
  }
  return rl;
}

int main(int argc, char **argv) {
  int peers = 0, quick = 0;
  unsigned long long allocs = 0;
  double med, best, wrap_ns = 0;
  char date[32];
  time_t tt = time(NULL);
  static const struct {
    const char *label;
    bw_jitter_t j;
  } kinds[] = {{"none", BW_JITTER_NONE},
               {"full", BW_JITTER_FULL},
               {"equal", BW_JITTER_EQUAL},
               {"decorrelated", BW_JITTER_DECORRELATED},
               {"additive", BW_JITTER_ADDITIVE}};
  int bad = bench_parse_flags(argc, argv, "bench_retry", &g_n, &g_reps, &peers,
                              &quick);
  if (bad != 0) return bad;
  bench_count_allocations();
  strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&tt));
  printf("# bench_retry  %s  breakwater %s  n=%lld reps=%d\n\n", date,
         bw_version(), g_n, g_reps);
  printf("ns per operation, median (best) of the runs.\n\n");
  printf("| operation | ns/op |\n|---|---:|\n");
  med = measure(b_floor_clock, (void *)bw_clock_monotonic_coarse(), &best,
                &allocs);
  printf("| floor: clock read, CLOCK_MONOTONIC_COARSE | %.2f (%.2f) |\n", med,
         best);
  med = measure(b_floor_rand, NULL, &best, &allocs);
  printf("| floor: bw_rand_next | %.2f (%.2f) |\n", med, best);
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    bw_retry_policy_t *p = policy(kinds[k].j, NULL);
    med = measure(b_next, p, &best, &allocs);
    printf("| bw_retry_next, transient, jitter %s | %.2f (%.2f) |\n",
           kinds[k].label, med, best);
    if (kinds[k].j == BW_JITTER_FULL) {
      wrap_ns = measure(b_wrap_success, p, &best, &allocs);
      printf(
          "| bw_retry_begin + bw_retry_next(OK), jitter full | %.2f (%.2f) "
          "|\n",
          wrap_ns, best);
    }
    bw_retry_policy_free(p);
  }
  {
    /* A ratio budget whose per-second floor always allows: every retry
     * asks the budget and is granted, so the loop measures the full path
     * (a token bucket would soon deny and measure the give-up path). */
    bw_budget_t *open = budget(BW_BUDGET_RATIO, bw_clock_monotonic_coarse());
    bw_budget_t *tb = budget(BW_BUDGET_TOKEN_BUCKET, NULL);
    bw_retry_policy_t *p = policy(BW_JITTER_FULL, open);
    med = measure(b_next, p, &best, &allocs);
    printf(
        "| bw_retry_next, transient, full jitter, ratio budget granting "
        "(coarse clock) | %.2f (%.2f) |\n",
        med, best);
    bw_retry_policy_free(p);
    bw_budget_free(open);
    med = measure(b_budget_try, tb, &best, &allocs);
    printf(
        "| budget check: bw_budget_try_retry, token bucket | %.2f (%.2f) "
        "|\n",
        med, best);
    bw_budget_free(tb);
  }
  {
    bw_budget_t *rb = budget(BW_BUDGET_RATIO, bw_clock_monotonic_coarse());
    med = measure(b_budget_request, rb, &best, &allocs);
    printf(
        "| budget: bw_budget_on_request, ratio (coarse clock) | %.2f "
        "(%.2f) |\n",
        med, best);
    med = measure(b_budget_try, rb, &best, &allocs);
    printf(
        "| budget check: bw_budget_try_retry, ratio (coarse clock), granting "
        "| %.2f "
        "(%.2f) |\n",
        med, best);
    bw_budget_free(rb);
  }
  {
    bw_ratelimit_t *rl = limiter(bw_clock_monotonic_coarse());
    med = measure(b_ratelimit, rl, &best, &allocs);
    printf(
        "| rate limiter admit: try_acquire (coarse clock) | %.2f (%.2f) "
        "|\n",
        med, best);
    bw_ratelimit_free(rl);
    rl = limiter(bw_clock_monotonic());
    med = measure(b_ratelimit, rl, &best, &allocs);
    printf(
        "| rate limiter admit: try_acquire (monotonic clock) | %.2f (%.2f) "
        "|\n",
        med, best);
    bw_ratelimit_free(rl);
  }
  /* The floor again: this VM has slow phases (every row ~1.7x); a run
   * that entered one shows it as a floor that moved. */
  med = measure(b_floor_clock, (void *)bw_clock_monotonic_coarse(), &best,
                &allocs);
  printf("| floor again: clock read, CLOCK_MONOTONIC_COARSE | %.2f (%.2f) |\n",
         med, best);
  printf("\nallocations during the timed loops: %llu\n", allocs);
  if (peers)
    bench_run_peers(
        BW_SOURCE_DIR, "retry", "a retry wrapper around a no-op that succeeds",
        "breakwater (begin + next(OK), full jitter)", wrap_ns, quick);
  return 0;
}

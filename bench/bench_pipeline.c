/* Benchmark: ns per pipeline call — a concurrency limit, a breaker and a
 * retry around a no-op that succeeds, driven through bw_pipeline_begin /
 * bw_pipeline_report as any driver does — and, with --peers, cockatiel's
 * wrap(bulkhead, retry, breaker) around a no-op in the same run (issue 5's
 * target: >= 10x faster).
 *
 *   build/bench/bench_pipeline [--n N] [--reps R] [--peers] [--quick]
 *
 * Single thread; the time per call includes the two clock reads a driver
 * makes (begin and report) on the coarse clock, which the strategies here
 * read too (a bulkhead without a timeout reads none). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "breakwater/breakwater.h"

static long long g_n = 20000000;
static int g_reps = 5;

typedef struct kit_s {
  bw_pipeline_t *pl;
  const bw_clock_t *clock;
} kit_t;

static double run_once(const kit_t *k) {
  bw_pipeline_call_t c;
  double t0 = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    int step = bw_pipeline_begin_at(k->pl, &c, bw_deadline_none(),
                                    bw_clock_now(k->clock));
    if (step == BW_STEP_ATTEMPT)
      step = bw_pipeline_report(&c, BW_VERDICT_OK, BW_RETRY_AFTER_NONE,
                                bw_clock_now(k->clock));
    if (step != BW_STEP_DONE || c.failure != BW_FAILURE_NONE) {
      fprintf(stderr, "bench_pipeline: a call failed (%s)\n",
              bw_failure_name(c.failure));
      exit(1);
    }
  }
  return (bench_now_s() - t0) * 1e9 / (double)g_n;
}

static double measure(const kit_t *k, double *best,
                      unsigned long long *allocs) {
  double v[16];
  unsigned long long a0;
  run_once(k); /* warm-up */
  a0 = bench_allocs();
  for (int r = 0; r < g_reps; r++)
    v[r] = run_once(k);
  *allocs += bench_allocs() - a0;
  return bench_median(v, g_reps, best);
}

static void die(const char *what, const bw_error_t *err) {
  fprintf(stderr, "bench_pipeline: %s: %s\n", what, err->message);
  exit(1);
}

int main(int argc, char **argv) {
  int peers = 0, quick = 0;
  int bad = bench_parse_flags(argc, argv, "bench_pipeline", &g_n, &g_reps,
                              &peers, &quick);
  if (bad != 0) return bad;
  bench_count_allocations();
  const bw_clock_t *coarse = bw_clock_monotonic_coarse();
  bw_error_t err;

  bw_bulkhead_config_t hc;
  bw_bulkhead_config_init(&hc);
  hc.max_concurrent = 10;
  hc.timeout_ms = 0;
  hc.clock = coarse;
  bw_bulkhead_t *bh = bw_bulkhead_new(&hc, &err);
  if (bh == NULL) die("bulkhead", &err);
  bw_limiter_config_t lc;
  bw_limiter_config_init(&lc);
  lc.clock = coarse;
  bw_limiter_t *lim = bw_limiter_new(&lc, &err);
  if (lim == NULL) die("limiter", &err);
  bw_breaker_config_t bc;
  bw_breaker_config_init(&bc);
  bc.clock = coarse;
  bw_breaker_t *br = bw_breaker_new(&bc, &err);
  if (br == NULL) die("breaker", &err);
  bw_retry_config_t rc;
  bw_retry_config_init(&rc);
  rc.max_attempts = 3;
  rc.seed = 4;
  bw_retry_policy_t *rp = bw_retry_policy_new(&rc, &err);
  if (rp == NULL) die("retry", &err);

  struct {
    const char *label;
    bw_limit_t *limit; /* NULL: none */
    bool breaker, retry;
  } rows[] = {
      {"retry alone", NULL, false, true},
      {"breaker + retry", NULL, true, true},
      {"bulkhead + breaker + retry", bw_bulkhead_as_limit(bh), true, true},
      {"AIMD limiter + breaker + retry", bw_limiter_as_limit(lim), true, true},
  };
  char date[32];
  time_t tt = time(NULL);
  strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&tt));
  printf("# bench_pipeline  %s  breakwater %s  n=%lld reps=%d\n\n", date,
         bw_version(), g_n, g_reps);
  printf(
      "ns per logical call (begin + report OK, two coarse clock reads "
      "included), median (best).\n\n");
  printf("| pipeline | ns/call |\n|---|---:|\n");
  unsigned long long allocs = 0;
  double full = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    bw_pipeline_config_t pc;
    bw_pipeline_config_init(&pc);
    if (rows[i].limit != NULL) bw_pipeline_add_limit(&pc, rows[i].limit, 0);
    if (rows[i].breaker) bw_pipeline_add_breaker(&pc, br);
    if (rows[i].retry) bw_pipeline_add_retry(&pc, rp);
    kit_t k = {bw_pipeline_new(&pc, &err), coarse};
    if (k.pl == NULL) die("pipeline", &err);
    double best, med = measure(&k, &best, &allocs);
    printf("| %s | %.2f (%.2f) |\n", rows[i].label, med, best);
    if (i == 2) full = med;
    bw_pipeline_free(k.pl);
  }
  printf("\nallocations during the timed loops: %llu\n", allocs);
  if (peers)
    bench_run_peers(BW_SOURCE_DIR, "pipeline",
                    "limit + retry + breaker around a no-op that succeeds",
                    "breakwater (bulkhead + breaker + retry pipeline)", full,
                    quick);
  bw_retry_policy_free(rp);
  bw_breaker_free(br);
  bw_limiter_free(lim);
  bw_bulkhead_free(bh);
  return 0;
}

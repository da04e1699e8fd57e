/* bench_breaker — ns per acquire+release on a closed breaker for each trip
 * rule (1 thread, then 2 threads on one breaker), ns per rejection when open,
 * the floor measured in the same run (one uncontended atomic fetch-add, one
 * clock read), allocations during the timed loops, and — with --peers — the
 * peer libraries side by side (bench/peers/run.sh).
 *
 * Not a test: it prints numbers. BENCHMARKS.md records them with the command.
 *
 *   build/bench/bench_breaker [--n N] [--reps R] [--peers] [--quick]
 */
#include <pthread.h>
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

/* ---- the floor ---------------------------------------------------------- */
static double bench_fetch_add(void) {
  static _Atomic uint64_t counter;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++)
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double bench_clock(const bw_clock_t *c) {
  return bench_clock_ns(c, g_n / 4);
}

/* ---- breakers ---------------------------------------------------------------
 */
typedef struct {
  const char *label;
  bw_trip_rule_t rule;
  const bw_clock_t *clock;
  int64_t slow_call_ms;
} variant_t;

static bw_breaker_t *make(const variant_t *v) {
  bw_breaker_config_t cfg;
  bw_error_t err;
  bw_breaker_t *b;
  bw_breaker_config_init(&cfg);
  cfg.name = v->label;
  cfg.trip_rule = v->rule;
  cfg.clock = v->clock;
  cfg.slow_call_ms = v->slow_call_ms;
  b = bw_breaker_new(&cfg, &err);
  if (b == NULL) {
    fprintf(stderr, "bench_breaker: %s\n", err.message);
    exit(1);
  }
  return b;
}

typedef struct {
  bw_breaker_t *b;
  long long n;
  atomic_int *go;
  double ns;
} loop_t;

static void *closed_loop(void *arg) {
  loop_t *l = arg;
  bw_permit_t p;
  double t;
  while (l->go != NULL && !atomic_load(l->go)) {
  }
  t = bench_now_s();
  for (long long i = 0; i < l->n; i++) {
    if (bw_breaker_acquire(l->b, &p) == BW_OK)
      bw_breaker_release(l->b, &p, BW_SUCCESS);
  }
  l->ns = (bench_now_s() - t) * 1e9 / (double)l->n;
  return NULL;
}

/* threads > 1 with own_breakers: each thread gets its own breaker, so nothing
 * is shared — the control that shows what the machine itself does to two
 * busy threads (on this VM the two vCPUs can slow each other down). */
static double bench_closed(const variant_t *v, int threads, int own_breakers,
                           unsigned long long *allocs, double *best) {
  double runs[16];
  for (int r = 0; r < g_reps; r++) {
    bw_breaker_t *b = make(v);
    bw_breaker_t *own[8] = {NULL};
    pthread_t th[8];
    loop_t l[8];
    atomic_int go = 0;
    double worst = 0;
    unsigned long long before;
    for (int i = 1; own_breakers && i < threads; i++)
      own[i] = make(v);
    before = bench_allocs();
    for (int i = 0; i < threads; i++) {
      l[i].b = own[i] != NULL ? own[i] : b;
      l[i].n = g_n;
      l[i].go = &go;
      pthread_create(&th[i], NULL, closed_loop, &l[i]);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < threads; i++) {
      pthread_join(th[i], NULL);
      if (l[i].ns > worst) worst = l[i].ns;
    }
    *allocs += bench_allocs() - before;
    runs[r] = worst; /* per-op cost seen by the slowest thread */
    bw_breaker_free(b);
    for (int i = 0; i < threads; i++)
      bw_breaker_free(own[i]);
  }
  return bench_median(runs, g_reps, best);
}

static double bench_rejection(const variant_t *v, unsigned long long *allocs,
                              double *best) {
  double runs[16];
  for (int r = 0; r < g_reps; r++) {
    bw_breaker_t *b = make(v);
    bw_permit_t p;
    unsigned long long before;
    double t;
    long long rejected = 0;
    /* Open it: failure_threshold (5) consecutive failures; the 30 s break
     * outlasts the loop. */
    for (int i = 0; i < 5; i++) {
      bw_breaker_acquire(b, &p);
      bw_breaker_release(b, &p, BW_FAILURE);
    }
    if (bw_breaker_state(b) != BW_OPEN) {
      fprintf(stderr, "bench_breaker: breaker did not open\n");
      exit(1);
    }
    before = bench_allocs();
    t = bench_now_s();
    for (long long i = 0; i < g_n; i++)
      rejected += bw_breaker_acquire(b, &p) == BW_E_OPEN;
    runs[r] = (bench_now_s() - t) * 1e9 / (double)g_n;
    *allocs += bench_allocs() - before;
    if (rejected != g_n) {
      fprintf(stderr, "bench_breaker: %lld of %lld rejected\n", rejected, g_n);
      exit(1);
    }
    bw_breaker_free(b);
  }
  return bench_median(runs, g_reps, best);
}

/* ---- peers ------------------------------------------------------------------
 */
int main(int argc, char **argv) {
  int peers = 0, quick = 0;
  unsigned long long allocs = 0;
  double one[8], two[8], rej[2], one_b[8], two_b[8], rej_b[2];
  double sep[8], sep_b[8];
  double fa, ck, ckc, ckr;
  char date[32];
  time_t tt = time(NULL);
  const variant_t variants[] = {
      {"consecutive", BW_TRIP_CONSECUTIVE, NULL, 0},
      {"count_window", BW_TRIP_COUNT_WINDOW, NULL, 0},
      {"time_window (monotonic clock)", BW_TRIP_TIME_WINDOW, NULL, 0},
      {"time_window (coarse clock)", BW_TRIP_TIME_WINDOW, NULL, 0},
      {"count_window + slow-call (coarse clock)", BW_TRIP_COUNT_WINDOW, NULL,
       1000},
  };
  const int nv = (int)(sizeof(variants) / sizeof(variants[0]));
  variant_t v[8];
  int rc = bench_parse_flags(argc, argv, "bench_breaker", &g_n, &g_reps, &peers,
                             &quick);
  if (rc != 0) return rc;
  memcpy(v, variants, sizeof(variants));
  v[3].clock = bw_clock_monotonic_coarse();
  v[4].clock = bw_clock_monotonic_coarse();
  bench_count_allocations();

  fa = bench_fetch_add();
  ck = bench_clock(bw_clock_monotonic());
  ckc = bench_clock(bw_clock_monotonic_coarse());
  ckr = bench_clock(bw_clock_realtime());
  strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&tt));
  printf("# bench_breaker  %s  breakwater %s  n=%lld reps=%d (median)\n\n",
         date, bw_version(), g_n, g_reps);
  printf("## Floor (same run)\n\n| operation | ns |\n|---|---:|\n");
  printf("| atomic fetch-add, uncontended | %.2f |\n", fa);
  printf("| clock read, CLOCK_MONOTONIC | %.2f |\n", ck);
  printf("| clock read, CLOCK_MONOTONIC_COARSE | %.2f |\n", ckc);
  printf("| clock read, CLOCK_REALTIME | %.2f |\n\n", ckr);

  for (int i = 0; i < nv; i++) {
    one[i] = bench_closed(&v[i], 1, 0, &allocs, &one_b[i]);
    two[i] = bench_closed(&v[i], 2, 0, &allocs, &two_b[i]);
    sep[i] = bench_closed(&v[i], 2, 1, &allocs, &sep_b[i]);
  }
  {
    variant_t o = v[0];
    rej[0] = bench_rejection(&o, &allocs, &rej_b[0]);
    o.clock = bw_clock_monotonic_coarse();
    rej[1] = bench_rejection(&o, &allocs, &rej_b[1]);
  }
  printf("## Closed breaker: acquire + release(SUCCESS)\n\n");
  printf(
      "ns per operation, median (best) of the runs. 2 threads: the per-op "
      "cost of the slower thread, on one shared breaker, and (control) each "
      "on its own breaker.\n\n");
  printf(
      "| trip rule | 1 thread | 2 threads, one breaker | 2 threads, own "
      "breakers | shared / 1T | shared / own |\n");
  printf("|---|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < nv; i++)
    printf("| %s | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | %.2f | %.2f |\n",
           v[i].label, one[i], one_b[i], two[i], two_b[i], sep[i], sep_b[i],
           two[i] / one[i], two[i] / sep[i]);
  printf(
      "\n## Open breaker: rejected acquire\n\n| clock | ns/op median "
      "(best) |\n|---|---:|\n");
  printf("| monotonic | %.2f (%.2f) |\n| coarse | %.2f (%.2f) |\n", rej[0],
         rej_b[0], rej[1], rej_b[1]);
  printf("\nallocations during the timed loops: %llu\n", allocs);
  fflush(stdout);
  if (peers)
    bench_run_peers(
        BW_SOURCE_DIR, "breaker",
        "a breaker wrapping a no-op that succeeds, sequential calls",
        "breakwater (consecutive, 1 thread)", one[0], quick);
  return 0;
}

/* bench_limit — ns per acquire+release for the bulkhead and each adaptive
 * limiter, 1 thread and 2 threads on one object, next to the floor measured
 * in the same run: an uncontended atomic increment+decrement pair (what a
 * counting semaphore cannot go below) and one clock read (every permit reads
 * the clock once at acquire and once at release).
 *
 * Not a test: it prints numbers (median of the runs, and the best).
 *
 *   build/bench/bench_limit [--n N] [--reps R] [--quick]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakwater/breakwater.h"
#include "bench_util.h"
#include "breakwater/bulkhead.h"
#include "breakwater/limiter.h"

static long long g_n = 5000000;
static int g_reps = 5;

/* ---- the floor ----------------------------------------------------------- */
static double floor_atomic_pair(void) {
  static _Atomic uint32_t c;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    atomic_fetch_add_explicit(&c, 1, memory_order_acq_rel);
    atomic_fetch_sub_explicit(&c, 1, memory_order_acq_rel);
  }
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double floor_clock(void) {
  const bw_clock_t *c = bw_clock_monotonic();
  volatile int64_t sink = 0;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++)
    sink += bw_clock_now(c);
  (void)sink;
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

/* ---- one loop over the interface ----------------------------------------- */
typedef struct {
  bw_limit_t *l;
  double ns;
  long long refused;
  pthread_barrier_t *start;
} job_t;

static void *loop(void *arg) {
  job_t *j = arg;
  bw_permit_t p;
  double t;
  if (j->start != NULL) pthread_barrier_wait(j->start);
  t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    if (bw_limit_try_acquire(j->l, &p) != BW_OK) {
      j->refused++;
      continue;
    }
    bw_limit_release(j->l, &p, BW_LIMIT_SUCCESS);
  }
  j->ns = (bench_now_s() - t) * 1e9 / (double)g_n;
  return NULL;
}

static double run(bw_limit_t *l, int threads) {
  job_t jobs[2];
  pthread_t th[2];
  pthread_barrier_t b;
  double worst = 0;
  memset(jobs, 0, sizeof(jobs));
  if (threads == 1) {
    jobs[0].l = l;
    loop(&jobs[0]);
    return jobs[0].ns;
  }
  pthread_barrier_init(&b, NULL, (unsigned)threads);
  for (int i = 0; i < threads; i++) {
    jobs[i].l = l;
    jobs[i].start = &b;
    pthread_create(&th[i], NULL, loop, &jobs[i]);
  }
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    if (jobs[i].ns > worst) worst = jobs[i].ns;
  }
  pthread_barrier_destroy(&b);
  return worst; /* ns per call pair, per thread */
}

static bw_limit_t *make(int which) {
  if (which == 0) {
    bw_bulkhead_config_t cfg;
    bw_bulkhead_config_init(&cfg);
    cfg.name = "bench";
    cfg.max_concurrent = 64;
    return bw_bulkhead_as_limit(bw_bulkhead_new(&cfg, NULL));
  } else {
    bw_limiter_config_t cfg;
    bw_limiter_config_init(&cfg);
    cfg.name = "bench";
    cfg.algorithm = (bw_limiter_algorithm_t)(which - 1);
    cfg.initial_limit = 64;
    return bw_limiter_as_limit(bw_limiter_new(&cfg, NULL));
  }
}

int main(int argc, char **argv) {
  static const char *names[] = {"bulkhead", "aimd", "gradient2", "vegas"};
  double v[64], best1, best2, m1, m2;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
      g_n = atoll(argv[++i]);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      g_reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--quick") == 0)
      g_n = 200000, g_reps = 3;
  }
  if (g_reps < 1 || g_reps > 64 || g_n < 1) {
    fprintf(stderr, "usage: %s [--n N] [--reps 1..64] [--quick]\n", argv[0]);
    return 2;
  }
  printf(
      "bench_limit: n=%lld per thread, %d runs, median (best) ns per "
      "acquire+release\n\n",
      g_n, g_reps);
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_atomic_pair();
  m1 = bench_median(v, g_reps, &best1);
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_clock();
  m2 = bench_median(v, g_reps, &best2);
  printf(
      "floor: atomic add+sub pair %.1f (%.1f) ns, clock read %.1f (%.1f) "
      "ns\n\n",
      m1, best1, m2, best2);
  printf("%-10s %18s %18s\n", "object", "1 thread", "2 threads (each)");
  for (int w = 0; w < 4; w++) {
    bw_limit_t *l = make(w);
    double a[64], b[64];
    if (l == NULL) {
      fprintf(stderr, "cannot create %s\n", names[w]);
      return 1;
    }
    for (int r = 0; r < g_reps; r++)
      a[r] = run(l, 1);
    for (int r = 0; r < g_reps; r++)
      b[r] = run(l, 2);
    m1 = bench_median(a, g_reps, &best1);
    m2 = bench_median(b, g_reps, &best2);
    printf("%-10s %10.1f (%5.1f) %10.1f (%5.1f)\n", names[w], m1, best1, m2,
           best2);
    bw_limit_free(l);
  }
  return 0;
}

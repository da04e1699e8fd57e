/* bench_limit — ns per acquire+release for the bulkhead and each adaptive
 * limiter, 1 thread and 2 threads on one object, through the bw_limit_t
 * interface (what drivers and pipelines call), next to the floors measured
 * in the same run: an uncontended atomic increment+decrement pair (what a
 * counting semaphore cannot go below) and one read of each clock.
 *
 * Rows:
 * - bulkhead, timeout_ms 0: no deadline anywhere, so no clock is read;
 * - bulkhead, timeout_ms 30000 with the default clock (coarse, since the
 *   timeout is >= 1 s) and with the precise clock given explicitly;
 * - aimd, gradient2, vegas with the default precise clock and with the
 *   coarse one (two readings per call: start and RTT), then with
 *   rtt_sample_every 8 (one call in 8 timed: no clock read and, for
 *   gradient2 and vegas, no lock on the other 7).
 * Every row's allocations during the timed loops are counted (target 0).
 *
 * The last column is what is left of the 1-thread median once the
 * unavoidable part is taken off: the atomic pair (a slot taken and given
 * back) and the row's clock reads at the core's own cost (clock_gettime
 * called directly, as the core reads them; 2 per call timed, 2 in 8 with
 * sampling). That is the library's bookkeeping, the part its code decides.
 *
 * --peers runs `bash bench/peers/run.sh --only bulkhead` (cockatiel's
 * bulkhead(10, 0) around a no-op, Node.js) and prints the comparison.
 *
 * Not a test: it prints numbers (median of the runs, and the best).
 *
 *   build/bench/bench_limit [--n N] [--reps R] [--peers] [--quick]
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

#ifndef BW_SOURCE_DIR
#define BW_SOURCE_DIR "."
#endif

static long long g_n = 5000000;
static int g_reps = 5;

/* ---- the floors ---------------------------------------------------------- */
static double floor_atomic_pair(void) {
  static _Atomic uint32_t c;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    atomic_fetch_add_explicit(&c, 1, memory_order_acq_rel);
    atomic_fetch_sub_explicit(&c, 1, memory_order_acq_rel);
  }
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double floor_clock(const bw_clock_t *c) {
  return bench_clock_ns(c, g_n);
}

/* One clock read the way the core reads the built-in clocks: clock_gettime
 * called directly, with no function pointer in between. */
static double floor_core_clock(clockid_t id) {
  volatile int64_t sink = 0;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    struct timespec ts;
    clock_gettime(id, &ts);
    sink += (int64_t)ts.tv_sec * BW_NS_PER_S + ts.tv_nsec;
  }
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

static double run(bw_limit_t *l, int threads, long long *refused) {
  job_t jobs[2];
  pthread_t th[2];
  pthread_barrier_t b;
  double worst = 0;
  memset(jobs, 0, sizeof(jobs));
  if (threads == 1) {
    jobs[0].l = l;
    loop(&jobs[0]);
    *refused += jobs[0].refused;
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
    *refused += jobs[i].refused;
    if (jobs[i].ns > worst) worst = jobs[i].ns;
  }
  pthread_barrier_destroy(&b);
  return worst; /* ns per call pair, per thread */
}

/* ---- the objects --------------------------------------------------------- */
typedef struct {
  const char *label;
  int kind; /* 0 bulkhead, 1 + bw_limiter_algorithm_t */
  int64_t timeout_ms;
  const bw_clock_t *(*clock)(void); /* NULL: the default */
  uint32_t sample;                  /* limiters: rtt_sample_every (0 = 1) */
} row_t;

static const row_t g_rows[] = {
    {"bulkhead timeout 0 (no clock)", 0, 0, NULL, 0},
    {"bulkhead timeout 30 s, default (coarse)", 0, 30000, NULL, 0},
    {"bulkhead timeout 30 s, precise clock", 0, 30000, bw_clock_monotonic, 0},
    {"aimd, default (precise)", 1, 0, NULL, 0},
    {"aimd, coarse clock", 1, 0, bw_clock_monotonic_coarse, 0},
    {"gradient2, default (precise)", 2, 0, NULL, 0},
    {"gradient2, coarse clock", 2, 0, bw_clock_monotonic_coarse, 0},
    {"vegas, default (precise)", 3, 0, NULL, 0},
    {"vegas, coarse clock", 3, 0, bw_clock_monotonic_coarse, 0},
    {"aimd, precise, RTT 1 call in 8", 1, 0, NULL, 8},
    {"aimd, coarse, RTT 1 call in 8", 1, 0, bw_clock_monotonic_coarse, 8},
    {"gradient2, precise, RTT 1 call in 8", 2, 0, NULL, 8},
    {"gradient2, coarse, RTT 1 call in 8", 2, 0, bw_clock_monotonic_coarse, 8},
    {"vegas, precise, RTT 1 call in 8", 3, 0, NULL, 8},
    {"vegas, coarse, RTT 1 call in 8", 3, 0, bw_clock_monotonic_coarse, 8},
};

static bw_limit_t *make(const row_t *r) {
  bw_error_t err;
  bw_limit_t *l;
  if (r->kind == 0) {
    bw_bulkhead_config_t cfg;
    bw_bulkhead_config_init(&cfg);
    cfg.name = "bench";
    cfg.max_concurrent = 64;
    cfg.timeout_ms = r->timeout_ms;
    cfg.clock = r->clock != NULL ? r->clock() : NULL;
    l = bw_bulkhead_as_limit(bw_bulkhead_new(&cfg, &err));
  } else {
    bw_limiter_config_t cfg;
    bw_limiter_config_init(&cfg);
    cfg.name = "bench";
    cfg.algorithm = (bw_limiter_algorithm_t)(r->kind - 1);
    cfg.initial_limit = 64;
    cfg.clock = r->clock != NULL ? r->clock() : NULL;
    if (r->sample > 0) cfg.rtt_sample_every = r->sample;
    l = bw_limiter_as_limit(bw_limiter_new(&cfg, &err));
  }
  if (l == NULL) {
    fprintf(stderr, "bench_limit: cannot create %s: %s\n", r->label,
            err.message);
    exit(1);
  }
  return l;
}

/* The clock a row reads (the bulkhead's default for a timeout of 1 s or
 * more is the coarse one, a limiter's the precise one), and how many reads
 * a call pair makes. */
static const bw_clock_t *row_clock(const row_t *r) {
  if (r->clock != NULL) return r->clock();
  return r->kind == 0 ? bw_clock_monotonic_coarse() : bw_clock_monotonic();
}
static double row_reads(const row_t *r) {
  if (r->kind == 0) return r->timeout_ms > 0 ? 2.0 : 0.0;
  return r->sample > 1 ? 2.0 / (double)r->sample : 2.0;
}

int main(int argc, char **argv) {
  double v[64], best1, best2, m1, m2, m3, best3, ours = 0;
  double pair, core_precise, core_coarse;
  int peers = 0, quick = 0;
  unsigned long long allocs_before, allocs = 0;
  long long refused = 0;
  char date[32];
  time_t tt = time(NULL);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      g_n = atoll(argv[++i]);
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      g_reps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--quick") == 0) {
      g_n = 200000, g_reps = 3, quick = 1;
    } else if (strcmp(argv[i], "--peers") == 0) {
      peers = 1;
    } else {
      g_reps = 0; /* usage below */
      break;
    }
  }
  if (g_reps < 1 || g_reps > 64 || g_n < 1) {
    fprintf(stderr, "usage: %s [--n N] [--reps 1..64] [--peers] [--quick]\n",
            argv[0]);
    return 2;
  }
  if (bench_count_allocations() != BW_OK) {
    fprintf(stderr, "bench_limit: cannot install the allocator hooks\n");
    return 1;
  }
  strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&tt));
  printf("# bench_limit  %s  breakwater %s  n=%lld per thread, %d runs\n\n",
         date, bw_version(), g_n, g_reps);
  printf("median (best) ns per acquire+release, through bw_limit_t\n\n");
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_atomic_pair();
  m1 = bench_median(v, g_reps, &best1);
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_clock(bw_clock_monotonic());
  m2 = bench_median(v, g_reps, &best2);
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_clock(bw_clock_monotonic_coarse());
  m3 = bench_median(v, g_reps, &best3);
  printf(
      "floor: atomic add+sub pair %.1f (%.1f) ns, precise clock read %.1f "
      "(%.1f) ns, coarse clock read %.1f (%.1f) ns\n",
      m1, best1, m2, best2, m3, best3);
  pair = m1;
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_core_clock(CLOCK_MONOTONIC);
  core_precise = bench_median(v, g_reps, NULL);
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_core_clock(CLOCK_MONOTONIC_COARSE);
  core_coarse = bench_median(v, g_reps, NULL);
  printf(
      "       the core's own clock reads (no function pointer): precise "
      "%.1f ns, coarse %.1f ns\n\n",
      core_precise, core_coarse);
  printf("%-42s %18s %18s %6s\n", "object", "1 thread", "2 threads (each)",
         "own");
  for (size_t w = 0; w < sizeof(g_rows) / sizeof(g_rows[0]); w++) {
    bw_limit_t *l = make(&g_rows[w]);
    double a[64], b[64];
    allocs_before = bench_allocs();
    for (int r = 0; r < g_reps; r++)
      a[r] = run(l, 1, &refused);
    for (int r = 0; r < g_reps; r++)
      b[r] = run(l, 2, &refused);
    allocs += bench_allocs() - allocs_before;
    m1 = bench_median(a, g_reps, &best1);
    m2 = bench_median(b, g_reps, &best2);
    if (w == 0) ours = m1;
    /* own: the 1-thread median less the pair and the row's clock reads. */
    printf("%-42s %10.1f (%5.1f) %10.1f (%5.1f) %6.1f\n", g_rows[w].label, m1,
           best1, m2, best2,
           m1 - pair -
               row_reads(&g_rows[w]) *
                   (row_clock(&g_rows[w]) == bw_clock_monotonic_coarse()
                        ? core_coarse
                        : core_precise));
    bw_limit_free(l);
  }
  /* The floors again: this VM has slow phases (everything ~2x); a row
   * measured in one shows up as floors that moved between here and above. */
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_atomic_pair();
  m1 = bench_median(v, g_reps, &best1);
  for (int r = 0; r < g_reps; r++)
    v[r] = floor_clock(bw_clock_monotonic());
  m2 = bench_median(v, g_reps, &best2);
  printf(
      "\nfloor again: atomic add+sub pair %.1f (%.1f) ns, precise clock "
      "read %.1f (%.1f) ns\n",
      m1, best1, m2, best2);
  /* Thread creation allocates in libc, not through breakwater's hooks; a
   * new thread's first call claims a counter stripe without allocating. */
  printf("allocations in breakwater during the timed loops: %llu\n", allocs);
  printf("refused acquires (limit 64, at most 2 in flight): %lld\n", refused);
  if (peers)
    bench_run_peers(BW_SOURCE_DIR, "bulkhead",
                    "a bulkhead (10 slots, no queue) around a no-op",
                    "breakwater (try_acquire + release, timeout 0, 1 thread)",
                    ours, quick);
  return 0;
}

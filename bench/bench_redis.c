/* bench_redis — the Redis-backed breaker's decision cost per call (acquire +
 * release, CLOSED, sync thread running against a real local redis-server
 * this program starts) next to the local bw_breaker_t in the same run, the
 * cost of a rejection when open, allocations in the timed loops, and the
 * sync round trip (one EVALSHA carrying this process's counts). Skips with
 * a message when redis-server cannot be started.
 *
 * Not a test: it prints numbers. BENCHMARKS.md records them with the
 * command.
 *
 *   build/bench/bench_redis [--n N] [--reps R] [--syncs S]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/redis_fixture.h"
#include "bench_util.h"
#include "breakwater/breakwater.h"
#include "breakwater/store_redis.h"

static long long g_n = 10000000;
static int g_reps = 5;
static int g_syncs = 2000;

static double loop_local(bw_breaker_t *b) {
  bw_permit_t p;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    if (bw_breaker_acquire(b, &p) == BW_OK)
      bw_breaker_release(b, &p, BW_SUCCESS);
  }
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double loop_redis(bw_redis_breaker_t *b) {
  bw_permit_t p;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++) {
    if (bw_redis_breaker_acquire(b, &p) == BW_OK)
      bw_redis_breaker_release(b, &p, BW_SUCCESS);
  }
  return (bench_now_s() - t) * 1e9 / (double)g_n;
}

static double loop_local_rejected(bw_breaker_t *b) {
  bw_permit_t p;
  long long rejected = 0;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++)
    rejected += bw_breaker_acquire(b, &p) == BW_E_OPEN;
  t = (bench_now_s() - t) * 1e9 / (double)g_n;
  if (rejected != g_n) fprintf(stderr, "warning: not all calls rejected\n");
  return t;
}

static double loop_redis_rejected(bw_redis_breaker_t *b) {
  bw_permit_t p;
  long long rejected = 0;
  double t = bench_now_s();
  for (long long i = 0; i < g_n; i++)
    rejected += bw_redis_breaker_acquire(b, &p) == BW_E_OPEN;
  t = (bench_now_s() - t) * 1e9 / (double)g_n;
  if (rejected != g_n) fprintf(stderr, "warning: not all calls rejected\n");
  return t;
}

int main(int argc, char **argv) {
  bwt_redis_t srv;
  bw_breaker_config_t lc;
  bw_redis_breaker_config_t rc;
  bw_breaker_t *local;
  bw_redis_breaker_t *shared, *manual;
  bw_redis_breaker_stats_t st;
  bw_error_t err;
  double v_local[32], v_redis[32], v_rej[32], *v_sync, best_l, best_r, best_j,
      best_s;
  double med_l, med_r, med_j, med_s;
  unsigned long long allocs_before, allocs_loops;
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
      g_n = atoll(argv[++i]);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      g_reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--syncs") == 0 && i + 1 < argc)
      g_syncs = atoi(argv[++i]);
  }
  if (g_reps < 1 || g_reps > 32) g_reps = 5;
  if (g_syncs < 10) g_syncs = 10;
  if (g_n < 1000) g_n = 1000;
  if (bwt_redis_start(&srv, NULL, false) != 0) {
    printf("bench_redis: skipped: cannot start redis-server: %s\n", srv.error);
    return 0;
  }
  bench_count_allocations();
  bw_breaker_config_init(&lc);
  lc.name = "local";
  local = bw_breaker_new(&lc, &err);
  bw_redis_breaker_config_init(&rc);
  rc.breaker.name = "shared";
  rc.breaker.failure_threshold = 1;
  rc.breaker.break_ms = 3600000;
  rc.redis.port = srv.port;
  rc.sync_interval_ms = 10; /* a busy sync thread: the worst case */
  shared = bw_redis_breaker_new(&rc, &err);
  if (local == NULL || shared == NULL) {
    fprintf(stderr, "bench_redis: cannot create breakers: %s\n", err.message);
    bwt_redis_cleanup(&srv);
    return 1;
  }
  allocs_before = bench_allocs();
  for (i = 0; i < g_reps; i++) {
    v_local[i] = loop_local(local);
    v_redis[i] = loop_redis(shared);
  }
  allocs_loops = bench_allocs() - allocs_before;
  med_l = bench_median(v_local, g_reps, &best_l);
  med_r = bench_median(v_redis, g_reps, &best_r);
  bw_redis_breaker_stats(shared, &st);
  printf("closed acquire+release, 1 thread, %lld calls x %d reps:\n", g_n,
         g_reps);
  printf("  bw_breaker_t (local)        median %6.2f ns  best %6.2f ns\n",
         med_l, best_l);
  printf(
      "  bw_redis_breaker_t (shared) median %6.2f ns  best %6.2f ns  "
      "(%.2fx local; %llu syncs ran meanwhile)\n",
      med_r, best_r, med_r / med_l, (unsigned long long)st.syncs);
  printf("  allocations in the timed loops: %llu (sync thread included)\n",
         allocs_loops);

  /* Open: one failure trips it (threshold 1) at the next sync. */
  {
    bw_permit_t p;
    int k;
    bw_redis_breaker_acquire(shared, &p);
    bw_redis_breaker_release(shared, &p, BW_FAILURE);
    for (k = 0; k < 1000 && bw_redis_breaker_state(shared) != BW_OPEN; k++)
      bwt__sleep_ms(2);
  }
  {
    bw_permit_t p;
    int k;
    for (k = 0; k < 5; k++) {
      bw_breaker_acquire(local, &p);
      bw_breaker_release(local, &p, BW_FAILURE);
    }
  }
  for (i = 0; i < g_reps; i++)
    v_rej[i] = loop_local_rejected(local);
  med_j = bench_median(v_rej, g_reps, &best_j);
  printf("open rejection (local)        median %6.2f ns  best %6.2f ns\n",
         med_j, best_j);
  for (i = 0; i < g_reps; i++)
    v_rej[i] = loop_redis_rejected(shared);
  med_j = bench_median(v_rej, g_reps, &best_j);
  printf("open rejection (shared)       median %6.2f ns  best %6.2f ns\n",
         med_j, best_j);

  /* The sync round trip, driven by hand. */
  rc.breaker.name = "manual";
  rc.sync_thread = false;
  manual = bw_redis_breaker_new(&rc, &err);
  v_sync = calloc((size_t)g_syncs, sizeof(double));
  if (manual != NULL && v_sync != NULL) {
    int failed = 0;
    for (i = 0; i < g_syncs; i++) {
      bw_permit_t p;
      double t;
      if (bw_redis_breaker_acquire(manual, &p) == BW_OK)
        bw_redis_breaker_release(manual, &p, BW_SUCCESS);
      t = bench_now_s();
      failed += bw_redis_breaker_sync(manual) != BW_OK;
      v_sync[i] = (bench_now_s() - t) * 1e6;
    }
    med_s = bench_median(v_sync, g_syncs, &best_s);
    printf(
        "sync round trip (EVALSHA, loopback), %d syncs: median %.1f us  "
        "best %.1f us  p99 %.1f us  (%d failed)\n",
        g_syncs, med_s, best_s, v_sync[g_syncs * 99 / 100], failed);
    printf("  = %.0fx the shared hot path\n", med_s * 1000.0 / med_r);
  }
  free(v_sync);
  bw_redis_breaker_free(manual);
  bw_redis_breaker_free(shared);
  bw_breaker_free(local);
  bwt_redis_cleanup(&srv);
  return 0;
}

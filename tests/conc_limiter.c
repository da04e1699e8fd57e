/* Concurrency test: adaptive limiters with held slots (TIMED_OUT) under
 * threads.
 *
 * Conservation law checked: every admitted permit is released exactly once,
 * so admitted = successes + drops + ignored, timed_out counts the TIMED_OUT
 * releases, and once every hold has expired (the clock moved past them and
 * an acquire freed them) in_flight and held return to 0. The limit never
 * leaves [min_limit, max_limit]; with the threads gone, it is the floor of
 * the estimate (the algorithms' updates under the lock, below).
 *
 * Stuck timeouts: the cut attempts that timed out are counted once each
 * (stuck_timeouts), and their longer holds end like the others.
 *
 * Drop tolerance: a tolerated drop is also counted as a drop, and both the
 * tolerated and the counted path run while threads race.
 *
 * Refusal summaries: the limiter_rejected events (emitted while the threads
 * race, and at the free) add up to the limiter's `rejected`, exactly: no
 * refusal is reported twice or lost. Runs under ThreadSanitizer in CI. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "breakwater/limiter.h"
#include "bw_test.h"

#define THREADS 4
#define ITERS 20000

/* A clock every read of which moves it 1 us on: holds (half an RTT) end
 * while the threads run, so acquire keeps freeing them concurrently. */
static _Atomic int64_t g_now;
static int64_t ticking_now(const bw_clock_t *c) {
  (void)c;
  return atomic_fetch_add(&g_now, 1000) + 1000;
}
static const bw_clock_t ticking = {ticking_now, NULL};

typedef struct worker_s {
  bw_limiter_t *lim;
  unsigned seed;
  bool near_limit; /* outcomes: a drop in 8, else success; or any of 4 */
  uint64_t admitted, timed_out;
  uint64_t cut_timed_out; /* TIMED_OUT releases of attempts the limiter cut
                             (stuck_timeout), when it does */
} worker_t;

static void *work(void *arg) {
  worker_t *w = arg;
  bw_permit_t p;
  for (int i = 0; i < ITERS; i++) {
    bw_limit_outcome_t o;
    if (bw_limiter_try_acquire(w->lim, &p) != BW_OK) continue;
    w->admitted++;
    /* Ask for the attempt's time limit as a pipeline would (a no-op
     * without stuck_timeout). 2 ms: a cut slot is held 3 ms from its
     * admission, a few thousand clock reads, so holds keep ending while
     * the threads run. */
    (void)bw_limiter_attempt_timeout(w->lim, &p, 2);
    w->seed = w->seed * 1103515245u + 12345u;
    if (w->near_limit)
      o = (w->seed >> 16) % 8 == 0 ? BW_LIMIT_DROPPED : BW_LIMIT_SUCCESS;
    else
      o = (bw_limit_outcome_t)((w->seed >> 16) % 4);
    if (o == BW_LIMIT_TIMED_OUT) w->timed_out++;
    if (o == BW_LIMIT_TIMED_OUT && (p.flags & BW_PERMIT_FLAG_STUCK_TIMEOUT))
      w->cut_timed_out++;
    assert_status(bw_limiter_release(w->lim, &p, o), BW_OK);
  }
  return NULL;
}

/* THREADS workers on lim until each has tried ITERS acquires; sums what
 * they counted. */
static uint64_t g_cut_timed_out; /* the last run_workers' sum */
static void run_workers(bw_limiter_t *lim, bool near_limit, unsigned seed,
                        uint64_t *admitted, uint64_t *timed_out) {
  pthread_t t[THREADS];
  worker_t w[THREADS];
  *admitted = *timed_out = 0;
  g_cut_timed_out = 0;
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker_t){lim, (unsigned)(i + 1) * seed, near_limit, 0, 0, 0};
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    *admitted += w[i].admitted;
    *timed_out += w[i].timed_out;
    g_cut_timed_out += w[i].cut_timed_out;
  }
}

/* The limiters the workers run on: `alg` on the ticking clock, starting at
 * `initial`, at most 64. */
static void ticking_config(bw_limiter_config_t *cfg, bw_limiter_algorithm_t alg,
                           uint32_t initial) {
  bw_limiter_config_init(cfg);
  cfg->algorithm = alg;
  cfg->initial_limit = initial;
  cfg->max_limit = 64;
  cfg->clock = &ticking;
}

/* With the threads gone, the clock an hour on (past every hold and every
 * stuck threshold): one acquire, admitted. */
static bw_permit_t take_an_hour_later(bw_limiter_t *lim) {
  bw_permit_t p;
  atomic_fetch_add(&g_now, INT64_C(3600) * BW_NS_PER_S);
  assert_status(bw_limiter_try_acquire(lim, &p), BW_OK);
  return p;
}

/* The end of a conservation run: p, the one permit left, released leaves
 * nothing held and nothing in flight. */
static void last_release_leaves_nothing(bw_limiter_t *lim, bw_permit_t *p) {
  bw_limiter_stats_t s;
  assert_status(bw_limiter_release(lim, p, BW_LIMIT_IGNORED), BW_OK);
  bw_limiter_stats(lim, &s);
  assert_u64_eq(s.held, 0);
  assert_u64_eq(s.in_flight, 0);
}

/* With the threads gone: an hour later, nothing is left held or in flight
 * once the one permit then taken is released; frees lim. */
static void ends_empty(bw_limiter_t *lim) {
  bw_permit_t p = take_an_hour_later(lim);
  last_release_leaves_nothing(lim, &p);
  bw_limiter_free(lim);
}

/* The workers' run on lim (any of the four outcomes) and the law every
 * run keeps: each admitted permit released once (admitted = successes +
 * drops + ignored), the TIMED_OUT releases counted, the limit inside
 * [min_limit, max_limit]. Returns the limiter's stats after the run. */
static bw_limiter_stats_t run_and_conserve(bw_limiter_t *lim,
                                           const bw_limiter_config_t *cfg,
                                           unsigned seed, uint64_t *admitted) {
  uint64_t timed_out;
  bw_limiter_stats_t s;
  run_workers(lim, false, seed, admitted, &timed_out);
  bw_limiter_stats(lim, &s);
  assert_u64_eq(s.admitted, *admitted);
  assert_u64_eq(s.successes + s.drops + s.ignored, *admitted);
  assert_u64_eq(s.timed_out, timed_out);
  assert_true(s.limit >= cfg->min_limit && s.limit <= cfg->max_limit);
  return s;
}

static void held_slots_conserve(bw_limiter_algorithm_t alg) {
  bw_limiter_config_t cfg;
  ticking_config(&cfg, alg, 16);
  cfg.timeout_hold_ratio = 0.5;
  bw_limiter_t *lim = bw_limiter_new(&cfg, NULL);
  assert_non_null(lim);
  uint64_t admitted;
  run_and_conserve(lim, &cfg, 7919u, &admitted);
  /* Every hold has ended long ago (the clock moved 1 us per read); one
   * acquire frees what is left, and its release leaves nothing. */
  ends_empty(lim);
}

static void aimd_held_slots_conserve(void **state) {
  (void)state;
  held_slots_conserve(BW_LIMITER_AIMD);
}
static void gradient2_held_slots_conserve(void **state) {
  (void)state;
  held_slots_conserve(BW_LIMITER_GRADIENT2);
}
static void vegas_held_slots_conserve(void **state) {
  (void)state;
  held_slots_conserve(BW_LIMITER_VEGAS);
}

/* Stuck calls (stuck_ratio): each timed call is counted in the age ring
 * at admission (one bucket, by CAS) and taken out at release; buckets are
 * reused by later epochs while other threads count and uncount in them
 * (the ticking clock makes RTTs of a few us, so the ring's 128 buckets
 * wrap constantly), and scans and cuts run from every thread. Law: every
 * counted call is taken out exactly once, so with the threads gone and the
 * clock far past any threshold, a look finds no call stuck (stuck_calls
 * 0), nothing is in flight, and every permit was released once. */
static void stuck_calls_conserve(bw_limiter_algorithm_t alg) {
  bw_limiter_config_t cfg;
  ticking_config(&cfg, alg, 16);
  cfg.stuck_ratio = 1.0;
  bw_limiter_t *lim = bw_limiter_new(&cfg, NULL);
  assert_non_null(lim);
  uint64_t admitted;
  bw_limiter_stats_t s = run_and_conserve(lim, &cfg, 104729u, &admitted);
  print_message("%s: %llu admitted, %llu stuck events\n",
                bw_limiter_algorithm_name(alg), (unsigned long long)admitted,
                (unsigned long long)s.stuck);
  bw_permit_t p = take_an_hour_later(lim);
  assert_int_equal(p.flags, BW_PERMIT_FLAG_AGED); /* the ring is running */
  bw_limiter_stats(lim, &s);
  assert_u64_eq(s.stuck_calls, 0);
  last_release_leaves_nothing(lim, &p);
  bw_limiter_free(lim);
}

/* Stuck timeouts (stuck_timeout): attempts cut to the stuck age while the
 * proven level and the stuck age move under other threads. Law: the cut
 * attempts that timed out are counted exactly once (stuck_timeouts equals
 * the TIMED_OUT releases of permits marked cut), and their longer holds
 * end like any other: with the clock far past them, nothing is held or in
 * flight. */
static void stuck_timeouts_conserve(bw_limiter_algorithm_t alg) {
  bw_limiter_config_t cfg;
  ticking_config(&cfg, alg, 16);
  cfg.stuck_ratio = 1.0;
  cfg.stuck_timeout = true;
  /* The band of the proven range that is cut is probe_headroom x proven:
   * at 1 every attempt is cut once a stuck age is known, so the cut path
   * races on every call. */
  cfg.probe_headroom = 1.0;
  bw_limiter_t *lim = bw_limiter_new(&cfg, NULL);
  assert_non_null(lim);
  uint64_t admitted;
  bw_limiter_stats_t s = run_and_conserve(lim, &cfg, 15485863u, &admitted);
  assert_u64_eq(s.stuck_timeouts, g_cut_timed_out);
  assert_true(s.stuck_timeouts > 0); /* the path was taken */
  print_message("%s: %llu admitted, %llu cut attempts timed out\n",
                bw_limiter_algorithm_name(alg), (unsigned long long)admitted,
                (unsigned long long)s.stuck_timeouts);
  ends_empty(lim);
}

static void aimd_stuck_timeouts_conserve(void **state) {
  (void)state;
  stuck_timeouts_conserve(BW_LIMITER_AIMD);
}
static void vegas_stuck_timeouts_conserve(void **state) {
  (void)state;
  stuck_timeouts_conserve(BW_LIMITER_VEGAS);
}

/* Drop tolerance (drop_tolerance): each drop reads the stripes' counts
 * and updates its round under the lock while other threads release. Law:
 * every admitted permit is released once (run_and_conserve), a tolerated
 * drop is also a drop (tolerated_drops <= drops), both paths ran (some
 * drops tolerated, some not: half the outcomes are drops, far above the
 * 0.25 share), and nothing is left held or in flight. */
static void drop_tolerance_conserves(bw_limiter_algorithm_t alg) {
  bw_limiter_config_t cfg;
  ticking_config(&cfg, alg, 16);
  cfg.drop_tolerance = 0.25;
  bw_limiter_t *lim = bw_limiter_new(&cfg, NULL);
  assert_non_null(lim);
  uint64_t admitted;
  bw_limiter_stats_t s = run_and_conserve(lim, &cfg, 7927u, &admitted);
  assert_true(s.tolerated_drops > 0);
  assert_true(s.tolerated_drops < s.drops);
  print_message("%s: %llu admitted, %llu drops, %llu tolerated\n",
                bw_limiter_algorithm_name(alg), (unsigned long long)admitted,
                (unsigned long long)s.drops,
                (unsigned long long)s.tolerated_drops);
  ends_empty(lim);
}

static void aimd_drop_tolerance_conserves(void **state) {
  (void)state;
  drop_tolerance_conserves(BW_LIMITER_AIMD);
}
static void vegas_drop_tolerance_conserves(void **state) {
  (void)state;
  drop_tolerance_conserves(BW_LIMITER_VEGAS);
}

static void aimd_stuck_calls_conserve(void **state) {
  (void)state;
  stuck_calls_conserve(BW_LIMITER_AIMD);
}
static void gradient2_stuck_calls_conserve(void **state) {
  (void)state;
  stuck_calls_conserve(BW_LIMITER_GRADIENT2);
}
static void vegas_stuck_calls_conserve(void **state) {
  (void)state;
  stuck_calls_conserve(BW_LIMITER_VEGAS);
}

/* Gradient2 updates its estimate and long-term RTT under the limiter's lock,
 * and publishes the limit under it; Vegas does the same at the end of a
 * round. Law: with the threads gone, limit == floor(estimate) (every
 * estimate's move was published), inside [min, max], and every permit
 * was released once. Threads run near the limit (initial 4, 4 threads), so
 * the estimate moves on successes and on drops (one in 8), in races. */
static void estimate_and_limit_agree(bw_limiter_algorithm_t alg) {
  bw_limiter_config_t cfg;
  ticking_config(&cfg, alg, 4);
  cfg.min_limit = 1;
  bw_limiter_t *lim = bw_limiter_new(&cfg, NULL);
  assert_non_null(lim);
  uint64_t admitted, timed_out;
  run_workers(lim, true, 104729u, &admitted, &timed_out);
  assert_u64_eq(timed_out, 0);
  bw_limiter_stats_t s;
  bw_limiter_stats(lim, &s);
  assert_u64_eq(s.admitted, admitted);
  assert_u64_eq(s.successes + s.drops, admitted);
  assert_u64_eq(s.in_flight, 0);
  assert_true(s.drops > 0 && s.limit_changes > 0);
  assert_true(s.estimate >= 1.0 && s.estimate <= 64.0);
  assert_u64_eq(s.limit, (uint64_t)s.estimate);
  bw_limiter_free(lim);
}

static void gradient2_estimate_and_limit_agree(void **state) {
  (void)state;
  estimate_and_limit_agree(BW_LIMITER_GRADIENT2);
}
static void vegas_estimate_and_limit_agree(void **state) {
  (void)state;
  estimate_and_limit_agree(BW_LIMITER_VEGAS);
}

/* Releases with nothing in flight (a permit released twice), from 4
 * threads at once: each gives its slot back with one atomic subtraction
 * and puts it back on finding nothing there, or a count another such
 * release wrapped. Law: every one is refused with BW_E_INVAL, and once
 * they are done nothing is in flight and the whole limit can be taken. */
typedef struct {
  bw_limiter_t *lim;
  atomic_int *go;
  int refused;
} twice_t;

static void *release_twice(void *arg) {
  twice_t *w = arg;
  bw_permit_t p;
  memset(&p, 0, sizeof(p));
  p.start_ns = BW_LIMITER_UNTIMED;
  while (!atomic_load(w->go)) {
  }
  for (int i = 0; i < ITERS * 5; i++)
    w->refused +=
        bw_limiter_release(w->lim, &p, BW_LIMIT_IGNORED) == BW_E_INVAL;
  return NULL;
}

static void releases_with_nothing_in_flight_leave_nothing(void **state) {
  (void)state;
  for (int round = 0; round < 10; round++) {
    bw_limiter_config_t cfg;
    bw_limiter_config_init(&cfg);
    cfg.initial_limit = 10;
    bw_limiter_t *lim = bw_limiter_new(&cfg, NULL);
    assert_non_null(lim);
    atomic_int go;
    atomic_init(&go, 0);
    pthread_t t[THREADS];
    twice_t w[THREADS];
    for (int i = 0; i < THREADS; i++) {
      w[i] = (twice_t){lim, &go, 0};
      assert_int_equal(pthread_create(&t[i], NULL, release_twice, &w[i]), 0);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < THREADS; i++) {
      assert_int_equal(pthread_join(t[i], NULL), 0);
      assert_int_equal(w[i].refused, ITERS * 5);
    }
    bw_limiter_stats_t s;
    bw_limiter_stats(lim, &s);
    assert_u64_eq(s.in_flight, 0);
    bw_permit_t p[10];
    for (int i = 0; i < 10; i++)
      assert_status(bw_limiter_try_acquire(lim, &p[i]), BW_OK);
    for (int i = 0; i < 10; i++)
      assert_status(bw_limiter_release(lim, &p[i], BW_LIMIT_IGNORED), BW_OK);
    bw_limiter_free(lim);
  }
}

/* A clock every read of which moves it 100 us on: a second passes every
 * 10,000 reads, so refusal summaries fall due while the threads race. */
static _Atomic int64_t g_slow_now;
static int64_t fast_now(const bw_clock_t *c) {
  (void)c;
  return atomic_fetch_add(&g_slow_now, 100000) + 100000;
}
static const bw_clock_t fast = {fast_now, NULL};

/* Checked on the emitting threads; a malformed summary is counted (a
 * cmocka assertion may not jump out of another thread). */
static _Atomic uint64_t g_summed, g_summaries, g_malformed;
static void on_limiter_rejected(const bw_event_t *ev, void *ud) {
  (void)ud;
  if (ev->type != BW_EV_LIMITER_REJECTED) return;
  if (ev->field_count != 3 || strcmp(ev->fields[0].key, "count") != 0 ||
      ev->fields[0].v.u < 1) {
    atomic_fetch_add(&g_malformed, 1);
    return;
  }
  atomic_fetch_add(&g_summed, ev->fields[0].v.u);
  atomic_fetch_add(&g_summaries, 1);
}

static void rejected_summaries_add_up_to_rejected(void **state) {
  bw_limiter_config_t cfg;
  bw_limiter_stats_t s;
  bw_sink_t *sink = bw_sink_callback_new(on_limiter_rejected, NULL, NULL);
  bw_limiter_t *lim;
  uint64_t admitted, timed_out;
  (void)state;
  assert_non_null(sink);
  bw_limiter_config_init(&cfg);
  cfg.initial_limit = 1; /* one in flight: threads overlapping refuse */
  cfg.min_limit = 1;
  cfg.max_limit = 1;
  cfg.clock = &fast;
  cfg.sink = sink;
  lim = bw_limiter_new(&cfg, NULL);
  assert_non_null(lim);
  /* A first round while this thread holds the only slot: every acquire is
   * refused, whatever the scheduler does (waiting for the threads to
   * overlap on their own failed on a loaded machine). Then a round that
   * admits and refuses as they race. */
  {
    bw_permit_t mine;
    assert_status(bw_limiter_try_acquire(lim, &mine), BW_OK);
    run_workers(lim, true, 104729u, &admitted, &timed_out);
    assert_u64_eq(admitted, 0);
    assert_status(bw_limiter_release(lim, &mine, BW_LIMIT_IGNORED), BW_OK);
  }
  run_workers(lim, true, 104723u, &admitted, &timed_out);
  bw_limiter_stats(lim, &s);
  assert_true(s.rejected > 0);
  assert_u64_eq(s.successes + s.drops + s.ignored, s.admitted);
  bw_limiter_free(lim); /* the last summary */
  assert_u64_eq(atomic_load(&g_malformed), 0);
  assert_u64_eq(atomic_load(&g_summed), s.rejected);
  assert_true(atomic_load(&g_summaries) >= 1);
  print_message("%llu refusals in %llu limiter_rejected summaries\n",
                (unsigned long long)s.rejected,
                (unsigned long long)atomic_load(&g_summaries));
  bw_sink_free(sink);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(aimd_held_slots_conserve),
      cmocka_unit_test(aimd_stuck_timeouts_conserve),
      cmocka_unit_test(vegas_stuck_timeouts_conserve),
      cmocka_unit_test(aimd_drop_tolerance_conserves),
      cmocka_unit_test(vegas_drop_tolerance_conserves),
      cmocka_unit_test(rejected_summaries_add_up_to_rejected),
      cmocka_unit_test(gradient2_held_slots_conserve),
      cmocka_unit_test(vegas_held_slots_conserve),
      cmocka_unit_test(aimd_stuck_calls_conserve),
      cmocka_unit_test(gradient2_stuck_calls_conserve),
      cmocka_unit_test(vegas_stuck_calls_conserve),
      cmocka_unit_test(gradient2_estimate_and_limit_agree),
      cmocka_unit_test(vegas_estimate_and_limit_agree),
      cmocka_unit_test(releases_with_nothing_in_flight_leave_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

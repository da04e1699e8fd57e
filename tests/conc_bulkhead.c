/* Concurrency: threads hammer one bulkhead through all three ways in — a
 * try_acquire, a blocking acquire (short real waits) and a queued callback
 * that is cancelled if it has not been granted by the time its thread looks.
 *
 * Conservation laws checked exactly:
 *   attempts (counted by the threads)
 *     = admitted + rejected_full + wait_timeouts + cancelled   (stats)
 *   admitted (stats) = admissions seen by the threads = released (stats)
 *   timeouts (stats) = BW_E_TIMEOUT answers seen by the threads
 *   in_use = 0 and waiting = 0 at the end
 *   the bulkhead_rejected summaries (emitted while the threads race, and at
 *   the free) add up to rejected_full, rejected_deadline and wait_timeouts
 * and safety: the number of threads inside the bulkhead at once, counted by
 * the threads themselves, never exceeds max_concurrent.
 *
 * The adaptive limiters get the same treatment through the shared bw_limit_t
 * interface, with a random mix of outcomes and RTTs:
 *   attempts = admitted + rejected; admitted = successes + drops + ignored
 *   (each also equal to the threads' own counts), in_flight = 0 at the end,
 *   and the limit stays in [min_limit, max_limit] throughout, and the calls
 *   inside at once (counted by the threads) never exceed max_limit. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"
#include "breakwater/bulkhead.h"
#include "breakwater/limiter.h"
#include "breakwater/threads.h"

#define THREADS 6
#define OPS_PER_THREAD 60000
#define MAX_CONCURRENT 3

static _Atomic int g_inside;
static _Atomic int g_max_inside;

typedef struct {
  bw_bulkhead_t *bh;
  bw_clock_t *clock;
  uint64_t seed;
  uint64_t attempts, admitted, timeouts, async_grants;
} worker_t;

typedef struct {
  bw_bulkhead_waiter_t w;
  bw_permit_t permit;
  _Atomic int granted;
} async_req_t;

static void on_grant(bw_bulkhead_waiter_t *w, const bw_permit_t *p, void *ud) {
  async_req_t *r = ud;
  (void)w;
  r->permit = *p;
  atomic_store_explicit(&r->granted, 1, memory_order_release);
}

/* Counts one more call inside and raises *max to the most seen at once. */
static void enter_and_note_max(_Atomic int *inside, _Atomic int *max) {
  int in = atomic_fetch_add(inside, 1) + 1;
  int seen = atomic_load(max);
  while (in > seen && !atomic_compare_exchange_weak(max, &seen, in)) {
  }
}

/* Every attempt ended one way, every admitted permit was released once, and
 * nothing is left in use or waiting. */
static void assert_drained(const bw_bulkhead_stats_t *st, uint64_t attempts,
                           uint64_t admitted) {
  assert_int_equal(attempts, (uint64_t)THREADS * OPS_PER_THREAD);
  assert_int_equal(st->admitted + st->rejected_full + st->wait_timeouts +
                       st->cancelled + st->rejected_deadline,
                   attempts);
  assert_int_equal(st->rejected_deadline, 0);
  assert_int_equal(st->admitted, admitted);
  assert_int_equal(st->released, admitted);
  assert_int_equal(st->in_use, 0);
  assert_int_equal(st->waiting, 0);
}

/* Inside the bulkhead: count ourselves, check the bound, move time a bit,
 * then leave and release. */
static void run_call(worker_t *w, const bw_permit_t *p, uint64_t x) {
  enter_and_note_max(&g_inside, &g_max_inside);
  w->admitted++;
  /* 1 ms per call on a shared manual clock; timeout_ms is 3, so calls that
   * straddle enough advances by other threads time out. */
  bw_clock_manual_advance(w->clock, 1000000);
  if (x % 7 == 0) sched_yield();
  atomic_fetch_sub(&g_inside, 1);
  if (bw_bulkhead_release(w->bh, p) == BW_E_TIMEOUT) w->timeouts++;
}

static void *work(void *arg) {
  worker_t *w = arg;
  bw_rand_t r;
  bw_rand_seed(&r, w->seed);
  for (int i = 0; i < OPS_PER_THREAD; i++) {
    bw_permit_t p;
    uint64_t x = bw_rand_next(&r);
    int mode = (int)(x % 3);
    w->attempts++;
    if (mode == 0) {
      if (bw_bulkhead_try_acquire(w->bh, &p) == BW_OK) run_call(w, &p, x >> 8);
    } else if (mode == 1) {
      if (bw_bulkhead_acquire(w->bh, &p) == BW_OK) run_call(w, &p, x >> 8);
    } else {
      async_req_t req;
      int rc;
      memset(&req, 0, sizeof(req));
      rc = bw_bulkhead_acquire_async(w->bh, &p, &req.w, on_grant, &req);
      if (rc == BW_OK) {
        run_call(w, &p, x >> 8);
      } else if (rc == BW_BULKHEAD_QUEUED) {
        if ((x >> 8) % 2 == 0 && bw_bulkhead_cancel(w->bh, &req.w) == BW_OK)
          continue; /* cancelled in the queue */
        /* Granted (or about to be): wait for the callback to finish. */
        while (!atomic_load_explicit(&req.granted, memory_order_acquire))
          sched_yield();
        w->async_grants++;
        run_call(w, &req.permit, x >> 8);
      }
    }
  }
  return NULL;
}

static _Atomic uint64_t g_sum_full, g_sum_deadline, g_sum_waits, g_summaries;

static void on_rejected(const bw_event_t *ev, void *ud) {
  (void)ud;
  if (ev->type != BW_EV_BULKHEAD_REJECTED || ev->field_count != 5) return;
  atomic_fetch_add(&g_summaries, 1);
  atomic_fetch_add(&g_sum_full, ev->fields[1].v.u);
  atomic_fetch_add(&g_sum_deadline, ev->fields[2].v.u);
  atomic_fetch_add(&g_sum_waits, ev->fields[3].v.u);
}

static void conserves_and_never_exceeds_max_concurrent(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  bw_bulkhead_t *bh;
  worker_t w[THREADS];
  pthread_t th[THREADS];
  bw_bulkhead_stats_t st;
  uint64_t attempts = 0, admitted = 0, timeouts = 0, grants = 0;
  bw_sink_t *sink = bw_sink_callback_new(on_rejected, NULL, NULL);
  (void)state;
  assert_non_null(sink);

  bw_bulkhead_config_init(&cfg);
  cfg.name = "hammered";
  cfg.sink = sink;
  cfg.max_concurrent = MAX_CONCURRENT;
  cfg.max_wait_ms = 1;
  cfg.timeout_ms = 3;
  cfg.max_waiting = 4;
  cfg.clock = clock;
  bh = bw_bulkhead_new(&cfg, &err);
  assert_non_null(bh);

  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].bh = bh;
    w[i].clock = clock;
    w[i].seed = 77 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    attempts += w[i].attempts;
    admitted += w[i].admitted;
    timeouts += w[i].timeouts;
    grants += w[i].async_grants;
  }
  bw_bulkhead_stats(bh, &st);

  assert_drained(&st, attempts, admitted);
  assert_int_equal(st.timeouts, timeouts);
  assert_int_equal(st.available, MAX_CONCURRENT);
  assert_true(atomic_load(&g_max_inside) <= MAX_CONCURRENT);
  assert_true(atomic_load(&g_max_inside) >= 1);
  assert_true(st.admitted_after_wait >= grants);
  /* Every path must have run for the laws to mean anything. */
  print_message(
      "admitted %llu (after wait %llu, callbacks %llu), full %llu, "
      "wait timeouts %llu, cancelled %llu, timeouts %llu\n",
      (unsigned long long)st.admitted,
      (unsigned long long)st.admitted_after_wait, (unsigned long long)grants,
      (unsigned long long)st.rejected_full,
      (unsigned long long)st.wait_timeouts, (unsigned long long)st.cancelled,
      (unsigned long long)st.timeouts);
  assert_true(grants > 0);
  assert_true(st.rejected_full > 0);
  assert_true(st.cancelled > 0);
  assert_true(st.timeouts > 0);

  bw_bulkhead_free(bh); /* the last summary */
  assert_int_equal(atomic_load(&g_sum_full), st.rejected_full);
  assert_int_equal(atomic_load(&g_sum_deadline), st.rejected_deadline);
  assert_int_equal(atomic_load(&g_sum_waits), st.wait_timeouts);
  assert_true(atomic_load(&g_summaries) >= 1);
  print_message("%llu bulkhead_rejected summaries\n",
                (unsigned long long)atomic_load(&g_summaries));
  bw_sink_free(sink);
  bw_clock_free(clock);
}

/* ---- adaptive limiters through the interface ----------------------------- */

#define LIM_OPS 200000
#define LIM_MIN 2
#define LIM_MAX 16

static _Atomic int g_lim_inside;
static _Atomic int g_lim_max_inside;

typedef struct {
  bw_limit_t *l;
  bw_clock_t *clock;
  uint64_t seed;
  uint64_t attempts, admitted, rejected, succ, drop, ign, out_of_range;
} lworker_t;

static void *lwork(void *arg) {
  lworker_t *w = arg;
  bw_rand_t r;
  bw_rand_seed(&r, w->seed);
  for (int i = 0; i < LIM_OPS; i++) {
    bw_permit_t p;
    uint64_t x = bw_rand_next(&r);
    uint32_t cur = bw_limit_current(w->l);
    bw_limit_outcome_t o;
    if (cur < LIM_MIN || cur > LIM_MAX) w->out_of_range++;
    w->attempts++;
    if (bw_limit_try_acquire(w->l, &p) != BW_OK) {
      w->rejected++;
      continue;
    }
    w->admitted++;
    enter_and_note_max(&g_lim_inside, &g_lim_max_inside);
    /* RTTs of 0..3 ms; slow phases every 20000 calls; 5% drops. */
    bw_clock_manual_advance(
        w->clock, (int64_t)(x % 4) * 1000000 * ((i / 20000) % 2 == 1 ? 3 : 1));
    o = (x >> 8) % 100 < 5    ? BW_LIMIT_DROPPED
        : (x >> 8) % 100 < 10 ? BW_LIMIT_IGNORED
                              : BW_LIMIT_SUCCESS;
    if ((x >> 16) % 5 == 0) sched_yield();
    atomic_fetch_sub(&g_lim_inside, 1);
    assert_int_equal(bw_limit_release(w->l, &p, o), BW_OK);
    if (o == BW_LIMIT_SUCCESS) w->succ++;
    if (o == BW_LIMIT_DROPPED) w->drop++;
    if (o == BW_LIMIT_IGNORED) w->ign++;
  }
  return NULL;
}

static void hammer_limiter(bw_limiter_algorithm_t alg) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_limiter_config_t cfg;
  bw_error_t err;
  bw_limiter_t *lim;
  lworker_t w[THREADS];
  pthread_t th[THREADS];
  bw_limiter_stats_t st;
  uint64_t attempts = 0, admitted = 0, rejected = 0, succ = 0, drop = 0,
           ign = 0, out = 0;

  bw_limiter_config_init(&cfg);
  cfg.name = "hammered";
  cfg.algorithm = alg;
  cfg.min_limit = LIM_MIN;
  cfg.max_limit = LIM_MAX;
  cfg.initial_limit = 4;
  cfg.gradient2_queue_size = 2;
  cfg.aimd_timeout_ms = 0; /* drops are only the scripted ones */
  cfg.clock = clock;
  lim = bw_limiter_new(&cfg, &err);
  assert_non_null(lim);
  atomic_store(&g_lim_max_inside, 0);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].l = bw_limiter_as_limit(lim);
    w[i].clock = clock;
    w[i].seed = 500 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, lwork, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    attempts += w[i].attempts;
    admitted += w[i].admitted;
    rejected += w[i].rejected;
    succ += w[i].succ;
    drop += w[i].drop;
    ign += w[i].ign;
    out += w[i].out_of_range;
  }
  bw_limiter_stats(lim, &st);
  assert_int_equal(attempts, (uint64_t)THREADS * LIM_OPS);
  assert_int_equal(st.admitted + st.rejected, attempts);
  assert_int_equal(st.admitted, admitted);
  assert_int_equal(st.rejected, rejected);
  assert_int_equal(st.successes + st.drops + st.ignored, st.admitted);
  assert_int_equal(st.successes, succ);
  assert_int_equal(st.drops, drop);
  assert_int_equal(st.ignored, ign);
  assert_int_equal(st.in_flight, 0);
  assert_int_equal(out, 0);
  /* A limit never admits more than max_limit at once (a lowered limit may
   * leave more than the new limit in flight, never more than the max). */
  assert_true(atomic_load(&g_lim_max_inside) <= LIM_MAX);
  assert_true(atomic_load(&g_lim_max_inside) >= 2);
  assert_true(st.limit >= LIM_MIN && st.limit <= LIM_MAX);
  assert_true(st.limit_changes >
              0); /* it adapted, so the run meant something */
  bw_limiter_free(lim);
  bw_clock_free(clock);
}

static void aimd_conserves_through_the_interface(void **state) {
  (void)state;
  hammer_limiter(BW_LIMITER_AIMD);
}
static void gradient2_conserves_through_the_interface(void **state) {
  (void)state;
  hammer_limiter(BW_LIMITER_GRADIENT2);
}
static void vegas_conserves_through_the_interface(void **state) {
  (void)state;
  hammer_limiter(BW_LIMITER_VEGAS);
}

/* ---- added: the clock-free path and limit_changed events ----------------
 *
 * A bulkhead with no timeout admits without reading a clock unless the
 * thread has a deadline. Threads mix both kinds of admission (half of them
 * under a one-day thread deadline) and the blocking form; the same laws
 * hold, exactly:
 *   attempts = admitted + rejected_full + wait_timeouts;
 *   admitted = released = the threads' own count; no timeouts;
 *   a clock-free permit has start_ns 0 and no deadline, a deadline-bound one
 *   a deadline (counted by the threads: both kinds occur, no mismatches);
 *   the calls inside at once never exceed max_concurrent. */
typedef struct {
  bw_bulkhead_t *bh;
  uint64_t seed;
  uint64_t attempts, admitted, free_permits, timed_permits, mismatches;
} fworker_t;

static _Atomic int g_f_inside;
static _Atomic int g_f_max_inside;

static void *fwork(void *arg) {
  fworker_t *w = arg;
  bw_rand_t r;
  bw_rand_seed(&r, w->seed);
  for (int i = 0; i < OPS_PER_THREAD; i++) {
    bw_permit_t p;
    uint64_t x = bw_rand_next(&r);
    bool under_deadline = x % 2 == 0;
    bool blocking = (x >> 1) % 4 == 0;
    bw_deadline_t prev = bw_deadline_none();
    int rc;
    if (under_deadline)
      prev = bw_deadline_set(
          bw_deadline_in(bw_clock_now(bw_clock_monotonic()), 86400000));
    w->attempts++;
    rc = blocking ? bw_bulkhead_acquire(w->bh, &p)
                  : bw_bulkhead_try_acquire(w->bh, &p);
    if (under_deadline) bw_deadline_set(prev);
    if (rc != BW_OK) continue;
    w->admitted++;
    enter_and_note_max(&g_f_inside, &g_f_max_inside);
    if (bw_bulkhead_deadline_ns(&p) == INT64_MAX) {
      w->free_permits++;
      /* A clock-free admission (start 0); only the blocking form may also
       * get a slot handed over in the queue (stamped with the time). */
      if (under_deadline || (!blocking && p.start_ns != 0)) w->mismatches++;
    } else {
      w->timed_permits++;
      if (!under_deadline) w->mismatches++;
    }
    if ((x >> 8) % 5 == 0) sched_yield();
    atomic_fetch_sub(&g_f_inside, 1);
    if (bw_bulkhead_release(w->bh, &p) != BW_OK) w->mismatches++;
  }
  return NULL;
}

static void clock_free_admissions_conserve_and_never_exceed_the_max(
    void **state) {
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  bw_bulkhead_t *bh;
  fworker_t w[THREADS];
  pthread_t th[THREADS];
  bw_bulkhead_stats_t st;
  uint64_t attempts = 0, admitted = 0, free_p = 0, timed_p = 0, bad = 0;
  (void)state;
  bw_bulkhead_config_init(&cfg);
  cfg.name = "clock-free";
  cfg.max_concurrent = MAX_CONCURRENT;
  cfg.max_wait_ms = 1;
  cfg.timeout_ms = 0;
  cfg.max_waiting = 4;
  bh = bw_bulkhead_new(&cfg, &err);
  assert_non_null(bh);
  atomic_store(&g_f_max_inside, 0);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].bh = bh;
    w[i].seed = 900 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, fwork, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    attempts += w[i].attempts;
    admitted += w[i].admitted;
    free_p += w[i].free_permits;
    timed_p += w[i].timed_permits;
    bad += w[i].mismatches;
  }
  bw_bulkhead_stats(bh, &st);
  assert_drained(&st, attempts, admitted);
  assert_int_equal(st.timeouts, 0);
  assert_int_equal(free_p + timed_p, admitted);
  assert_true(free_p > 0);
  assert_true(timed_p > 0);
  assert_int_equal(bad, 0);
  assert_true(atomic_load(&g_f_max_inside) <= MAX_CONCURRENT);
  bw_bulkhead_free(bh);
}

/* limit_changed events under threads: with change_interval_ms 0 every
 * change of the limit is exactly one event (events = stats.limit_changes),
 * each a real move (old != new) inside [min_limit, max_limit]. With an
 * interval, at most one report per interval is elected: 1 <= events <=
 * changes, each still a move inside the bounds. The same sink gets the
 * limiter_rejected summaries: they add up to stats.rejected, exactly, once
 * the limiter is freed. Any other event is bad. */
typedef struct {
  _Atomic uint64_t events; /* limit_changed */
  _Atomic uint64_t bad;
  _Atomic uint64_t rejected; /* the sum of the limiter_rejected counts */
} ev_count_t;

static void count_event(const bw_event_t *ev, void *ud) {
  ev_count_t *c = ud;
  uint64_t old, now;
  if (ev->type == BW_EV_LIMITER_REJECTED && ev->field_count == 3 &&
      ev->fields[0].v.u >= 1) {
    atomic_fetch_add(&c->rejected, ev->fields[0].v.u);
    return;
  }
  atomic_fetch_add(&c->events, 1);
  if (ev->type != BW_EV_LIMIT_CHANGED || ev->field_count != 3) {
    atomic_fetch_add(&c->bad, 1);
    return;
  }
  old = ev->fields[0].v.u;
  now = ev->fields[1].v.u;
  if (old == now || now < LIM_MIN || now > LIM_MAX || old < LIM_MIN ||
      old > LIM_MAX)
    atomic_fetch_add(&c->bad, 1);
}

static void hammer_events(bw_limiter_algorithm_t alg, int64_t interval_ms) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_limiter_config_t cfg;
  bw_error_t err;
  bw_limiter_t *lim;
  bw_sink_t *sink;
  ev_count_t c;
  lworker_t w[THREADS];
  pthread_t th[THREADS];
  bw_limiter_stats_t st;
  atomic_init(&c.events, 0);
  atomic_init(&c.bad, 0);
  atomic_init(&c.rejected, 0);
  sink = bw_sink_callback_new(count_event, &c, &err);
  assert_non_null(sink);
  bw_limiter_config_init(&cfg);
  cfg.name = "evented";
  cfg.algorithm = alg;
  cfg.min_limit = LIM_MIN;
  cfg.max_limit = LIM_MAX;
  cfg.initial_limit = 4;
  cfg.gradient2_queue_size = 2;
  cfg.aimd_timeout_ms = 0;
  cfg.clock = clock;
  cfg.sink = sink;
  cfg.change_interval_ms = interval_ms;
  lim = bw_limiter_new(&cfg, &err);
  assert_non_null(lim);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].l = bw_limiter_as_limit(lim);
    w[i].clock = clock;
    w[i].seed = 700 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, lwork, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  bw_limiter_stats(lim, &st);
  assert_true(st.limit_changes > 0);
  if (interval_ms == 0) {
    assert_int_equal(atomic_load(&c.events), st.limit_changes);
  } else {
    assert_true(atomic_load(&c.events) >= 1);
    assert_true(atomic_load(&c.events) <= st.limit_changes);
  }
  assert_int_equal(atomic_load(&c.bad), 0);
  bw_limiter_free(lim); /* the last refusal summary */
  assert_int_equal(atomic_load(&c.rejected), st.rejected);
  assert_int_equal(atomic_load(&c.bad), 0);
  bw_sink_free(sink);
  bw_clock_free(clock);
}

static void every_limit_change_is_one_event_under_threads(void **state) {
  (void)state;
  for (int a = 0; a < 3; a++)
    hammer_events((bw_limiter_algorithm_t)a, 0);
}

static void rate_limited_events_stay_within_the_changes_under_threads(
    void **state) {
  (void)state;
  for (int a = 0; a < 3; a++)
    hammer_events((bw_limiter_algorithm_t)a, 50);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conserves_and_never_exceeds_max_concurrent),
      cmocka_unit_test(aimd_conserves_through_the_interface),
      cmocka_unit_test(gradient2_conserves_through_the_interface),
      cmocka_unit_test(vegas_conserves_through_the_interface),
      cmocka_unit_test(clock_free_admissions_conserve_and_never_exceed_the_max),
      cmocka_unit_test(every_limit_change_is_one_event_under_threads),
      cmocka_unit_test(
          rate_limited_events_stay_within_the_changes_under_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

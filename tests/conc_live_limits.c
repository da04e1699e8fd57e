/* Concurrency: threads call a bulkhead, an adaptive limiter, a rate limiter
 * and a ratio retry budget while another thread changes their limits back
 * and forth (a configuration reload during traffic): bw_bulkhead_set_max_
 * concurrent, bw_limiter_set_bounds, bw_ratelimit_set_rate,
 * bw_budget_set_ratio.
 *
 * Conservation laws checked exactly:
 *   bulkhead   try acquisitions = admitted_at_once + rejected_full, and
 *              every queued waiter is granted once: admitted = the
 *              callers' admissions = released; in_use and waiting end at
 *              0; the callers' own count of slots held at once never
 *              exceeds the larger of the two max_concurrent values;
 *   limiter    acquisitions (counted by the threads) = admitted + rejected,
 *              admitted = successes + drops + ignored, in_flight ends at 0,
 *              and the limit ends inside the bounds applied last;
 *   ratelimit  acquisitions = admitted + limited;
 *   budget     requests = the callers' requests, asks = allowed + denied.
 * After the last change each object reads back (config_of) exactly the
 * values applied last. Under ThreadSanitizer, the limits' reads on the hot
 * paths race with nothing. Bounded: OPS per thread, at most MAX_CHANGES
 * changes, made until the callers are done; the real monotonic clock. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define THREADS 3
#define OPS 50000
#define MAX_CHANGES 2000000

typedef struct shared_s {
  bw_bulkhead_t *bh;
  bw_limiter_t *lim;
  bw_ratelimit_t *rl;
  bw_budget_t *bu;
  atomic_uint held; /* bulkhead slots held by the callers now */
  atomic_uint peak;
  atomic_bool done;
} shared_t;

typedef struct work_s {
  shared_t *s;
  unsigned seed;
  uint64_t bh_tries, bh_try_ok, bh_admitted, bh_queued;
  uint64_t lim_acq, lim_rel;
  uint64_t rl_acq, bu_req, bu_asks;
} work_t;

/* A queued caller's permit, filled by the grant callback on the thread
 * that hands the slot over. */
typedef struct slot_s {
  bw_permit_t permit;
  atomic_bool ready;
} slot_t;

static void granted(bw_bulkhead_waiter_t *w, const bw_permit_t *p, void *ud) {
  slot_t *sl = ud;
  (void)w;
  sl->permit = *p;
  atomic_store_explicit(&sl->ready, true, memory_order_release);
}

static void hold(shared_t *s) {
  unsigned now = atomic_fetch_add(&s->held, 1) + 1;
  unsigned pk = atomic_load(&s->peak);
  while (now > pk && !atomic_compare_exchange_weak(&s->peak, &pk, now)) {
  }
}

static void *caller(void *arg) {
  work_t *w = arg;
  shared_t *s = w->s;
  for (int i = 0; i < OPS; i++) {
    bw_permit_t p;
    int64_t wait_ms;
    w->seed = w->seed * 1103515245u + 12345u;
    /* The bulkhead: a try, or a queued wait every 4th call. */
    if ((w->seed >> 16) % 4 == 0) {
      bw_bulkhead_waiter_t wt;
      slot_t sl;
      int rc;
      memset(&wt, 0, sizeof wt);
      memset(&sl, 0, sizeof sl);
      atomic_init(&sl.ready, false);
      rc = bw_bulkhead_acquire_async(s->bh, &sl.permit, &wt, granted, &sl);
      if (rc == BW_BULKHEAD_QUEUED) {
        w->bh_queued++;
        while (!atomic_load_explicit(&sl.ready, memory_order_acquire))
          sched_yield();
        rc = BW_OK;
      }
      if (rc == BW_OK) {
        w->bh_admitted++;
        hold(s);
        atomic_fetch_sub(&s->held, 1);
        bw_bulkhead_release(s->bh, &sl.permit);
      }
    } else {
      w->bh_tries++;
      if (bw_bulkhead_try_acquire(s->bh, &p) == BW_OK) {
        w->bh_try_ok++;
        w->bh_admitted++;
        hold(s);
        atomic_fetch_sub(&s->held, 1);
        bw_bulkhead_release(s->bh, &p);
      }
    }
    /* The limiter. */
    w->lim_acq++;
    if (bw_limiter_try_acquire(s->lim, &p) == BW_OK) {
      bw_limiter_release(
          s->lim, &p,
          (w->seed >> 20) % 8 == 0 ? BW_LIMIT_DROPPED : BW_LIMIT_SUCCESS);
      w->lim_rel++;
    }
    /* The rate limiter and the budget. */
    w->rl_acq++;
    (void)bw_ratelimit_try_acquire(s->rl, &wait_ms);
    bw_budget_on_request(s->bu);
    w->bu_req++;
    if ((w->seed >> 18) % 2 == 0) {
      (void)bw_budget_try_retry(s->bu);
      w->bu_asks++;
    }
  }
  return NULL;
}

typedef struct flipper_s {
  shared_t *s;
  int failures;
  long count;
} flipper_t;

static void *flipper(void *arg) {
  flipper_t *f = arg;
  shared_t *s = f->s;
  bw_error_t err;
  for (long i = 0; i < MAX_CHANGES && !atomic_load(&s->done); i++) {
    int odd = (int)(i & 1);
    if (bw_bulkhead_set_max_concurrent(s->bh, odd ? 1 : 3, &err) != BW_OK)
      f->failures++;
    if (bw_limiter_set_bounds(s->lim, odd ? 2 : 1, odd ? 4 : 30, &err) != BW_OK)
      f->failures++;
    if (bw_ratelimit_set_rate(s->rl, odd ? 1000.0 : 1e6, odd ? 1 : 50, &err) !=
        BW_OK)
      f->failures++;
    if (bw_budget_set_ratio(s->bu, odd ? 10.0 : 50.0, odd ? 0.0 : 5.0, &err) !=
        BW_OK)
      f->failures++;
    f->count++;
  }
  /* The last word, whatever the count's parity. */
  if (bw_bulkhead_set_max_concurrent(s->bh, 2, &err) != BW_OK ||
      bw_limiter_set_bounds(s->lim, 3, 7, &err) != BW_OK ||
      bw_ratelimit_set_rate(s->rl, 250.0, 5, &err) != BW_OK ||
      bw_budget_set_ratio(s->bu, 25.0, 2.0, &err) != BW_OK)
    f->failures++;
  return NULL;
}

static void test_live_limits_under_threads(void **state) {
  shared_t s;
  work_t w[THREADS];
  flipper_t f;
  pthread_t t[THREADS], ft;
  bw_error_t err;
  (void)state;
  memset(&s, 0, sizeof s);
  atomic_init(&s.held, 0);
  atomic_init(&s.peak, 0);
  atomic_init(&s.done, false);
  {
    bw_bulkhead_config_t c;
    bw_bulkhead_config_init(&c);
    c.max_concurrent = 3;
    c.timeout_ms = 0;
    s.bh = bw_bulkhead_new(&c, &err);
  }
  {
    bw_limiter_config_t c;
    bw_limiter_config_init(&c);
    c.initial_limit = 10;
    c.min_limit = 1;
    c.max_limit = 30;
    s.lim = bw_limiter_new(&c, &err);
  }
  {
    bw_ratelimit_config_t c;
    bw_ratelimit_config_init(&c);
    c.rate_per_sec = 1e6;
    c.burst = 50;
    s.rl = bw_ratelimit_new(&c, &err);
  }
  {
    bw_budget_config_t c;
    bw_budget_config_init(&c);
    c.kind = BW_BUDGET_RATIO;
    c.window_ms = 1000;
    s.bu = bw_budget_new(&c, &err);
  }
  assert_non_null(s.bh);
  assert_non_null(s.lim);
  assert_non_null(s.rl);
  assert_non_null(s.bu);
  memset(&f, 0, sizeof f);
  f.s = &s;
  assert_int_equal(pthread_create(&ft, NULL, flipper, &f), 0);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].s = &s;
    w[i].seed = 12345u + (unsigned)i * 7919u;
    assert_int_equal(pthread_create(&t[i], NULL, caller, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  atomic_store(&s.done, true);
  pthread_join(ft, NULL);
  assert_int_equal(f.failures, 0);
  assert_true(f.count > 0);
  {
    uint64_t tries = 0, try_ok = 0, admitted = 0, queued = 0;
    bw_bulkhead_stats_t st;
    bw_bulkhead_config_t c;
    for (int i = 0; i < THREADS; i++) {
      tries += w[i].bh_tries;
      try_ok += w[i].bh_try_ok;
      admitted += w[i].bh_admitted;
      queued += w[i].bh_queued;
    }
    bw_bulkhead_stats(s.bh, &st);
    assert_int_equal(st.admitted, admitted);
    assert_int_equal(st.released, admitted);
    assert_int_equal(st.admitted_after_wait, queued);
    /* A try is admitted at once or refused (a queued wait never is: the
     * queue holds at most THREADS of max_waiting 1000). */
    assert_int_equal(st.rejected_full, tries - try_ok);
    assert_int_equal(st.in_use, 0);
    assert_int_equal(st.waiting, 0);
    assert_true(atomic_load(&s.peak) <= 3);
    bw_bulkhead_config_of(s.bh, &c);
    assert_int_equal(c.max_concurrent, 2);
  }
  {
    uint64_t acq = 0, rel = 0;
    bw_limiter_stats_t st;
    bw_limiter_config_t c;
    for (int i = 0; i < THREADS; i++) {
      acq += w[i].lim_acq;
      rel += w[i].lim_rel;
    }
    bw_limiter_stats(s.lim, &st);
    assert_int_equal(st.admitted + st.rejected, acq);
    assert_int_equal(st.admitted, rel);
    assert_int_equal(st.successes + st.drops + st.ignored, rel);
    assert_int_equal(st.in_flight, 0);
    assert_true(st.limit >= 3 && st.limit <= 7);
    bw_limiter_config_of(s.lim, &c);
    assert_int_equal(c.min_limit, 3);
    assert_int_equal(c.max_limit, 7);
  }
  {
    uint64_t acq = 0;
    bw_ratelimit_stats_t st;
    bw_ratelimit_config_t c;
    for (int i = 0; i < THREADS; i++)
      acq += w[i].rl_acq;
    bw_ratelimit_stats(s.rl, &st);
    assert_int_equal(st.admitted + st.limited, acq);
    bw_ratelimit_config_of(s.rl, &c);
    assert_true(c.rate_per_sec == 250.0);
    assert_int_equal(c.burst, 5);
  }
  {
    uint64_t req = 0, asks = 0;
    bw_budget_stats_t st;
    bw_budget_config_t c;
    for (int i = 0; i < THREADS; i++) {
      req += w[i].bu_req;
      asks += w[i].bu_asks;
    }
    bw_budget_stats(s.bu, &st);
    assert_int_equal(st.requests, req);
    assert_int_equal(st.allowed + st.denied, asks);
    bw_budget_config_of(s.bu, &c);
    assert_true(c.budget_percent == 25.0);
    assert_true(c.min_retries_per_sec == 2.0);
  }
  bw_bulkhead_free(s.bh);
  bw_limiter_free(s.lim);
  bw_ratelimit_free(s.rl);
  bw_budget_free(s.bu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_live_limits_under_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

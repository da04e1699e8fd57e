/* Concurrency test: one throttle shared by 4 threads (throttle.h).
 *
 * Conservation law: every request that entered the throttle ends in exactly
 * one of accepts, rejected (the partner shed it), throttled (refused here)
 * or withdrawn (never went out), so once every thread has finished
 *   requests = accepts + rejected + throttled + withdrawn,
 * and each of those equals the sum of what the threads themselves saw
 * (an admission or a refusal from enter, and the outcome they left with).
 * The window is a day long, so the window's counts equal the totals less
 * the withdrawn requests. Bounded: 4 x 20,000 calls. */
#include <pthread.h>

#include "breakwater/breakwater.h"
#include "bw_test.h"

#define THREADS 4
#define CALLS 20000

typedef struct worker_s {
  bw_throttle_t *t;
  unsigned id;
  uint64_t admitted, refused, accepts, rejected, withdrawn;
} worker_t;

static void *run(void *arg) {
  worker_t *w = arg;
  bw_strategy_if_t *s = bw_throttle_strategy(w->t);
  for (unsigned i = 0; i < CALLS; i++) {
    bw_permit_t permit;
    bw_deadline_t d = bw_deadline_none();
    int64_t timeout = -1;
    bw_strategy_ctx_t ctx = {&permit, &d, &timeout, 0, 0, 0};
    bw_refusal_t r = {BW_FAILURE_NONE, 0, false};
    memset(&permit, 0, sizeof permit);
    if (s->vt->enter(s, &ctx, BWT_T0_NS, &r) != BW_OK) {
      w->refused++;
      continue;
    }
    w->admitted++;
    /* A partner that accepts 3 calls in 10; 1 in 10 never goes out. */
    unsigned k = (i * 7 + w->id) % 10;
    if (k < 3) {
      ctx.attempt = 1;
      s->vt->leave(s, &ctx, BW_SUCCESS);
      w->accepts++;
    } else if (k == 3) {
      s->vt->leave(s, &ctx, BW_IGNORED); /* attempt still 0: withdrawn */
      w->withdrawn++;
    } else {
      ctx.attempt = 1;
      s->vt->leave(s, &ctx, k == 4 ? BW_TIMED_OUT : BW_FAILURE);
      w->rejected++;
    }
  }
  return NULL;
}

static void requests_are_conserved_under_contention(void **state) {
  (void)state;
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_throttle_config_t cfg;
  bw_error_t err;
  pthread_t th[THREADS];
  worker_t w[THREADS];
  bw_throttle_stats_t st;
  uint64_t admitted = 0, refused = 0, accepts = 0, rejected = 0, withdrawn = 0;
  assert_non_null(clock);
  bw_throttle_config_init(&cfg);
  cfg.window_ms = 86400000;
  cfg.buckets = 1;
  cfg.seed = 17;
  cfg.clock = clock;
  bw_throttle_t *t = bw_throttle_new(&cfg, &err);
  assert_non_null(t);
  for (unsigned i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].t = t;
    w[i].id = i;
    assert_int_equal(pthread_create(&th[i], NULL, run, &w[i]), 0);
  }
  for (unsigned i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    admitted += w[i].admitted;
    refused += w[i].refused;
    accepts += w[i].accepts;
    rejected += w[i].rejected;
    withdrawn += w[i].withdrawn;
  }
  bw_throttle_stats(t, &st);
  assert_int_equal(st.requests, (uint64_t)THREADS * CALLS);
  assert_int_equal(st.requests,
                   st.accepts + st.rejected + st.throttled + st.withdrawn);
  assert_int_equal(st.throttled, refused);
  assert_int_equal(st.accepts, accepts);
  assert_int_equal(st.rejected, rejected);
  assert_int_equal(st.withdrawn, withdrawn);
  assert_int_equal(admitted, accepts + rejected + withdrawn);
  assert_int_equal(st.window_requests, st.requests - st.withdrawn);
  assert_int_equal(st.window_accepts, st.accepts);
  /* A partner accepting 3 in 10 of what went out is past K = 2's
   * tolerance: the throttle refused some. */
  assert_true(st.throttled > 0);
  bw_throttle_free(t);
  bw_clock_free(clock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(requests_are_conserved_under_contention),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Concurrency: many threads share one hedge policy (and its budget), as
 * the calls of one dependency do.
 *
 * Laws checked:
 *   calls = the bw_hedge_begin calls made, armed + not_idempotent = calls;
 *   hedges = the BW_HEDGE_SEND answers the threads got, and denied = the
 *   budget refusals they saw; with a budget of its own, the budget's
 *   allowed = hedges and denied = denied (every hedge asked it once);
 *   samples = the latencies recorded, and the delay a thread reads is
 *   always one of the latencies some thread recorded (the quantile of a
 *   ring that only ever held those values) or the configured delay. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define THREADS 4
#define CALLS 20000

typedef struct {
  bw_hedge_t *h;
  pthread_barrier_t *barrier;
  unsigned id;
  uint64_t calls, sends, denied, records, bad_delays;
} worker_t;

/* Latencies recorded are whole multiples of 10 ms in [10, 200] ms; the
 * delay read must be one of them (in ms), or the configured 500. */
static bool plausible(int64_t ms) {
  return ms == 500 || (ms >= 10 && ms <= 200 && ms % 10 == 0);
}

static void *work(void *arg) {
  worker_t *w = arg;
  bw_rand_t rng;
  bw_rand_seed(&rng, 1000 + w->id);
  pthread_barrier_wait(w->barrier);
  for (int i = 0; i < CALLS; i++) {
    bw_hedge_call_t hc;
    int64_t in_ms;
    bool idem = (i % 7) != 0;
    int64_t now = (int64_t)i * BW_NS_PER_MS;
    w->calls++;
    if (bw_hedge_begin(w->h, &hc, idem, now, &in_ms) == BW_HEDGE_ARM) {
      if (!plausible(in_ms)) w->bad_delays++;
      while (bw_hedge_fire(&hc, now + in_ms * BW_NS_PER_MS, &in_ms) ==
             BW_HEDGE_SEND)
        w->sends++;
      if (bw_hedge_denied(&hc)) w->denied++;
    }
    bw_hedge_record(w->h,
                    (10 + 10 * bw_rand_range(&rng, 0, 19)) * BW_NS_PER_MS);
    w->records++;
    if (!plausible(bw_hedge_delay_ms(w->h))) w->bad_delays++;
  }
  return NULL;
}

static void threads_share_a_hedge_and_its_budget(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(INT64_C(1000) * BW_NS_PER_S);
  bw_budget_config_t bc;
  bw_budget_t *b;
  bw_hedge_config_t hc;
  bw_hedge_t *h;
  bw_hedge_stats_t hs;
  bw_budget_stats_t bs;
  pthread_barrier_t barrier;
  pthread_t tid[THREADS];
  worker_t w[THREADS];
  uint64_t calls = 0, sends = 0, denied = 0, records = 0, bad = 0;
  (void)state;
  bw_budget_config_init(&bc);
  bc.kind = BW_BUDGET_RATIO;
  bc.budget_percent = 5;
  bc.min_retries_per_sec = 0;
  bc.window_ms = 1000000; /* one window for the whole test (a manual clock) */
  bc.clock = clock;
  b = bw_budget_new(&bc, NULL);
  assert_non_null(b);
  bw_hedge_config_init(&hc);
  hc.delay_ms = 500;
  hc.window = 64;
  hc.min_samples = 16;
  hc.max_hedges = 2;
  hc.budget = b;
  hc.budget_requests = true;
  h = bw_hedge_new(&hc, NULL);
  assert_non_null(h);
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (unsigned i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].h = h;
    w[i].barrier = &barrier;
    w[i].id = i;
    assert_int_equal(pthread_create(&tid[i], NULL, work, &w[i]), 0);
  }
  for (unsigned i = 0; i < THREADS; i++) {
    pthread_join(tid[i], NULL);
    calls += w[i].calls;
    sends += w[i].sends;
    denied += w[i].denied;
    records += w[i].records;
    bad += w[i].bad_delays;
  }
  bw_hedge_stats(h, &hs);
  bw_budget_stats(b, &bs);
  assert_int_equal(hs.calls, calls);
  assert_int_equal(hs.armed + hs.not_idempotent, calls);
  assert_int_equal(hs.hedges, sends);
  assert_int_equal(hs.denied, denied);
  assert_int_equal(hs.samples, records);
  assert_int_equal(bs.requests, calls);
  assert_int_equal(bs.allowed, sends);
  assert_int_equal(bs.denied, denied);
  /* The budget's exact allowance: 5 % of every request. */
  assert_int_equal(sends, calls * 5 / 100);
  assert_int_equal(bad, 0);
  bw_hedge_free(h);
  bw_budget_free(b);
  bw_clock_free(clock);
  pthread_barrier_destroy(&barrier);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_share_a_hedge_and_its_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Concurrency: many threads share one GCRA rate limiter.
 *
 * Laws checked:
 *   admitted + limited = try_acquire calls made by the threads, and
 *   reserved = reserve calls;
 *   at one instant exactly `burst` calls are admitted, however many threads
 *   race for them;
 *   concurrent reservations at one instant take distinct slots: sorted,
 *   their waits are exactly burst zeros, then T, 2T, 3T, ...;
 *   on a shared manual clock that the threads themselves advance, admitted
 *   never exceeds burst + elapsed / T (the k-th admission needs the clock
 *   at (k - burst) * T after creation, whatever the interleaving);
 *   with a sink, the counts of the rate_limited summaries, emitted while the
 *   threads race on a moving clock and once more at the free, add up to
 *   exactly `limited`, each summary at least 1. */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define THREADS 4

typedef struct {
  bw_ratelimit_t *rl;
  bw_clock_t *clock;
  pthread_barrier_t *barrier;
  int rounds;
  int calls;
  int64_t advance_ns;
  int64_t *waits; /* reserve: this thread's waits */
  uint64_t attempts, admitted, limited;
} worker_t;

static bw_ratelimit_t *make(double rate, uint32_t burst, bw_clock_t *clock) {
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  bw_ratelimit_t *rl;
  bw_ratelimit_config_init(&cfg);
  cfg.name = "shared";
  cfg.rate_per_sec = rate;
  cfg.burst = burst;
  cfg.clock = clock;
  rl = bw_ratelimit_new(&cfg, &err);
  assert_non_null(rl);
  return rl;
}

static void count(worker_t *w, int rc) {
  w->attempts++;
  if (rc == BW_OK)
    w->admitted++;
  else if (rc == BW_E_FULL)
    w->limited++;
}

/* ---- a burst at one instant ---------------------------------------------- */

static void *burst_work(void *arg) {
  worker_t *w = arg;
  for (int r = 0; r < w->rounds; r++) {
    pthread_barrier_wait(w->barrier); /* main moved the clock */
    for (int i = 0; i < w->calls; i++)
      count(w, bw_ratelimit_try_acquire(w->rl, NULL));
    pthread_barrier_wait(w->barrier); /* main checks */
  }
  return NULL;
}

static void exactly_the_burst_is_admitted_at_one_instant(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_ratelimit_t *rl = make(10, 1000, clock); /* refills in 100 s */
  worker_t w[THREADS];
  pthread_t th[THREADS];
  /* On the heap: if a check fails, the threads stay parked on memory that
   * the next test cannot reuse. */
  pthread_barrier_t *barrier = malloc(sizeof(*barrier));
  uint64_t admitted = 0, limited = 0, attempts = 0;
  const int rounds = 100;
  bw_ratelimit_stats_t st;
  (void)state;
  assert_non_null(barrier);
  assert_int_equal(pthread_barrier_init(barrier, NULL, THREADS + 1), 0);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].rl = rl;
    w[i].barrier = barrier;
    w[i].rounds = rounds;
    w[i].calls = 1000; /* 4000 race for 1000 slots */
    assert_int_equal(pthread_create(&th[i], NULL, burst_work, &w[i]), 0);
  }
  for (int r = 0; r < rounds; r++) {
    pthread_barrier_wait(barrier);
    pthread_barrier_wait(barrier);
    bw_ratelimit_stats(rl, &st);
    assert_int_equal(st.admitted, 1000 * (uint64_t)(r + 1));
    assert_int_equal(st.limited, 3000 * (uint64_t)(r + 1));
    bw_clock_manual_advance(clock, 100 * BW_NS_PER_S); /* a whole burst */
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    admitted += w[i].admitted;
    limited += w[i].limited;
    attempts += w[i].attempts;
  }
  bw_ratelimit_stats(rl, &st);
  assert_int_equal(st.admitted, admitted);
  assert_int_equal(st.limited, limited);
  assert_int_equal(admitted + limited, attempts);
  pthread_barrier_destroy(barrier);
  free(barrier);
  bw_ratelimit_free(rl);
  bw_clock_free(clock);
}

/* ---- reservations take distinct slots ------------------------------------ */

static void *reserve_work(void *arg) {
  worker_t *w = arg;
  for (int i = 0; i < w->calls; i++)
    w->waits[i] = bw_ratelimit_reserve_ns(w->rl);
  return NULL;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void concurrent_reservations_take_distinct_slots(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(5 * BW_NS_PER_S);
  bw_ratelimit_t *rl = make(1e6, 5, clock); /* T = 1000 ns */
  const int per = 100000, n = THREADS * per;
  int64_t *all = calloc((size_t)n, sizeof(int64_t));
  worker_t w[THREADS];
  pthread_t th[THREADS];
  bw_ratelimit_stats_t st;
  int bad = 0;
  (void)state;
  assert_non_null(all);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].rl = rl;
    w[i].calls = per;
    w[i].waits = all + (size_t)i * per;
    assert_int_equal(pthread_create(&th[i], NULL, reserve_work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  qsort(all, (size_t)n, sizeof(int64_t), cmp_i64);
  for (int k = 0; k < n; k++) {
    int64_t want = k < 5 ? 0 : (int64_t)(k - 4) * 1000;
    if (all[k] != want && bad++ < 5)
      fprintf(stderr, "slot %d: wait %lld ns, expected %lld\n", k,
              (long long)all[k], (long long)want);
  }
  assert_int_equal(bad, 0);
  bw_ratelimit_stats(rl, &st);
  assert_int_equal(st.reserved, n);
  assert_int_equal(st.reserved_waiting, n - 5);
  assert_int_equal(st.admitted + st.limited, 0);
  free(all);
  bw_ratelimit_free(rl);
  bw_clock_free(clock);
}

/* ---- a moving clock ------------------------------------------------------ */

static void *moving_work(void *arg) {
  worker_t *w = arg;
  for (int i = 0; i < w->calls; i++) {
    bw_clock_manual_advance(w->clock, w->advance_ns);
    count(w, bw_ratelimit_try_acquire(w->rl, NULL));
  }
  return NULL;
}

static void admissions_never_outrun_burst_plus_rate_on_a_moving_clock(
    void **state) {
  const int64_t start = 1000 * BW_NS_PER_S;
  bw_clock_t *clock = bw_clock_manual_new(start);
  bw_ratelimit_t *rl = make(1e6, 5, clock); /* T = 1000 ns */
  worker_t w[THREADS];
  pthread_t th[THREADS];
  uint64_t admitted = 0, limited = 0, attempts = 0, bound;
  int64_t elapsed;
  bw_ratelimit_stats_t st;
  (void)state;
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].rl = rl;
    w[i].clock = clock;
    w[i].calls = 1000000;
    /* 100 ns a call per thread: about one slot per ten calls, so both
     * answers are frequent and threads race for each slot. */
    w[i].advance_ns = 100;
    assert_int_equal(pthread_create(&th[i], NULL, moving_work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    admitted += w[i].admitted;
    limited += w[i].limited;
    attempts += w[i].attempts;
  }
  elapsed = bw_clock_now(clock) - start;
  assert_int_equal(elapsed, (int64_t)THREADS * 1000000 * 100);
  bound = 5 + (uint64_t)(elapsed / 1000);
  bw_ratelimit_stats(rl, &st);
  assert_int_equal(attempts, (uint64_t)THREADS * 1000000);
  assert_int_equal(admitted + limited, attempts);
  assert_int_equal(st.admitted, admitted);
  assert_int_equal(st.limited, limited);
  if (admitted > bound) {
    fprintf(stderr,
            "%llu admitted in %lld ns: more than burst + elapsed/T = "
            "%llu\n",
            (unsigned long long)admitted, (long long)elapsed,
            (unsigned long long)bound);
    fail();
  }
  assert_true(admitted > 0 && limited > 0);
  fprintf(stderr, "moving clock: %llu admitted of at most %llu\n",
          (unsigned long long)admitted, (unsigned long long)bound);
  bw_ratelimit_free(rl);
  bw_clock_free(clock);
}

/* ---- refusal summaries --------------------------------------------------- */

static _Atomic uint64_t summed, summaries, empty_summaries;

static void on_summary(const bw_event_t *ev, void *userdata) {
  (void)userdata;
  if (ev->type != BW_EV_RATE_LIMITED || ev->field_count < 1) return;
  atomic_fetch_add(&summaries, 1);
  if (ev->fields[0].v.u == 0) atomic_fetch_add(&empty_summaries, 1);
  atomic_fetch_add(&summed, ev->fields[0].v.u);
}

static void summaries_account_for_every_refusal(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(1000 * BW_NS_PER_S);
  bw_sink_t *sink = bw_sink_callback_new(on_summary, NULL, NULL);
  bw_ratelimit_config_t cfg;
  bw_ratelimit_t *rl;
  worker_t w[THREADS];
  pthread_t th[THREADS];
  uint64_t limited = 0;
  bw_ratelimit_stats_t st;
  (void)state;
  assert_non_null(sink);
  bw_ratelimit_config_init(&cfg);
  cfg.name = "summarised";
  cfg.rate_per_sec = 100; /* T = 10 ms */
  cfg.clock = clock;
  cfg.sink = sink;
  rl = bw_ratelimit_new(&cfg, NULL);
  assert_non_null(rl);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].rl = rl;
    w[i].clock = clock;
    w[i].calls = 50000;
    w[i].advance_ns = BW_NS_PER_MS; /* 200 s of clock in all */
    assert_int_equal(pthread_create(&th[i], NULL, moving_work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    limited += w[i].limited;
  }
  bw_ratelimit_stats(rl, &st);
  assert_int_equal(st.limited, limited);
  bw_ratelimit_free(rl); /* the last summary */
  assert_int_equal(atomic_load(&summed), limited);
  assert_int_equal(atomic_load(&empty_summaries), 0);
  /* At most one a clock second (200 s of clock), and the last. How many
   * below that depends on the scheduler, not on the limiter: a summariser
   * descheduled with the summary's lock held lets the other threads run
   * the clock on by seconds, whose refusals the next summary then carries
   * (counted in `summed` all the same). Under load this test saw 151 and
   * fewer than 100; "one when a second is due" is checked exactly in
   * test_ratelimit (refusals_are_summarised_at_most_once_a_second). */
  assert_true(atomic_load(&summaries) >= 1);
  assert_true(atomic_load(&summaries) <= 201);
  fprintf(stderr, "summaries: %llu events for %llu refusals\n",
          (unsigned long long)atomic_load(&summaries),
          (unsigned long long)limited);
  bw_sink_free(sink);
  bw_clock_free(clock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exactly_the_burst_is_admitted_at_one_instant),
      cmocka_unit_test(concurrent_reservations_take_distinct_slots),
      cmocka_unit_test(
          admissions_never_outrun_burst_plus_rate_on_a_moving_clock),
      cmocka_unit_test(summaries_account_for_every_refusal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

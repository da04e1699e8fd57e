/* Concurrency: threads call one breaker while another thread reconfigures
 * its thresholds back and forth (a configuration reload during traffic).
 *
 * Conservation laws checked exactly, for each trip rule:
 *   acquisitions (counted by the threads) = stats.admitted + stats.rejected
 *   releases (counted by the threads)     = stats.calls
 *                                         = successes + failures + ignored
 *   admitted = releases (every admitted permit is released once)
 * and after the last reconfigure the breaker reads back (config_of) exactly
 * the configuration applied last. Under ThreadSanitizer, the threshold
 * reads on the hot path race with nothing. Bounded: OPS per thread, and at
 * most MAX_RECONFIGURES, reconfiguring until the callers are done; on the
 * real monotonic clock (breaks of 1-2 ms, so the breaker goes through
 * every state). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define THREADS 3
#define OPS 200000
#define MAX_RECONFIGURES 5000000 /* the flipper stops when the callers do */

typedef struct work_s {
  bw_breaker_t *b;
  unsigned seed;
  uint64_t acquisitions, releases;
} work_t;

static void *caller(void *arg) {
  work_t *w = arg;
  for (int i = 0; i < OPS; i++) {
    bw_permit_t p;
    w->acquisitions++;
    if (bw_breaker_acquire(w->b, &p) != BW_OK) continue;
    w->seed = w->seed * 1103515245u + 12345u;
    bw_breaker_release(w->b, &p,
                       (w->seed >> 16) % 3 == 0 ? BW_FAILURE : BW_SUCCESS);
    w->releases++;
  }
  return NULL;
}

typedef struct flipper_s {
  bw_breaker_t *b;
  bw_breaker_config_t a, z;
  atomic_bool done; /* set when every caller has finished */
  int failures;
  long count; /* reconfigures made */
} flipper_t;

static void *flipper(void *arg) {
  flipper_t *f = arg;
  /* At least one of each, then until the callers are done. */
  for (f->count = 0; f->count < MAX_RECONFIGURES; f->count++) {
    if (f->count >= 2 && atomic_load(&f->done)) break;
    if (bw_breaker_reconfigure(f->b, f->count % 2 ? &f->z : &f->a, NULL) !=
        BW_OK)
      f->failures++;
  }
  return NULL;
}

static void run(bw_trip_rule_t rule) {
  bw_breaker_config_t c;
  bw_breaker_stats_t st;
  bw_error_t err;
  pthread_t th[THREADS + 1];
  work_t w[THREADS];
  flipper_t fl;
  bw_breaker_config_init(&c);
  c.trip_rule = rule;
  c.window_size = 50;
  c.minimum_calls = 10;
  c.break_ms = 1;
  c.slow_call_ms = rule == BW_TRIP_CONSECUTIVE ? 0 : 50; /* window rules */
  bw_breaker_t *b = bw_breaker_new(&c, &err);
  assert_non_null(b);
  memset(&fl, 0, sizeof fl);
  atomic_init(&fl.done, false);
  fl.b = b;
  fl.a = c;
  fl.a.failure_threshold = 2;
  fl.a.failure_ratio = 0.3;
  fl.a.success_threshold = 1;
  fl.z = c;
  fl.z.failure_threshold = 7;
  fl.z.failure_ratio = 0.9;
  fl.z.minimum_calls = 20;
  fl.z.success_threshold = 3;
  fl.z.half_open_max_calls = 3;
  fl.z.break_ms = 2;
  fl.z.slow_call_ms = rule == BW_TRIP_CONSECUTIVE ? 0 : 80;
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].b = b;
    w[i].seed = (unsigned)i + 1;
    assert_int_equal(pthread_create(&th[i], NULL, caller, &w[i]), 0);
  }
  assert_int_equal(pthread_create(&th[THREADS], NULL, flipper, &fl), 0);
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  atomic_store(&fl.done, true);
  pthread_join(th[THREADS], NULL);
  assert_int_equal(fl.failures, 0);
  uint64_t acq = 0, rel = 0;
  for (int i = 0; i < THREADS; i++) {
    acq += w[i].acquisitions;
    rel += w[i].releases;
  }
  bw_breaker_stats(b, &st);
  assert_true(st.admitted + st.rejected == acq);
  assert_true(st.calls == rel);
  assert_true(st.successes + st.failures + st.ignored == rel);
  assert_true(st.admitted == rel);
  assert_true(st.opens > 0);
  /* The last reconfigure, number count - 1, applied z when odd. */
  const bw_breaker_config_t *last = (fl.count - 1) % 2 ? &fl.z : &fl.a;
  bw_breaker_config_t now;
  bw_breaker_config_of(b, &now);
  assert_int_equal(now.failure_threshold, last->failure_threshold);
  assert_true(now.failure_ratio == last->failure_ratio);
  assert_int_equal(now.minimum_calls, last->minimum_calls);
  assert_int_equal(now.success_threshold, last->success_threshold);
  assert_int_equal(now.half_open_max_calls, last->half_open_max_calls);
  assert_int_equal(now.break_ms, last->break_ms);
  assert_int_equal(now.slow_call_ms, last->slow_call_ms);
  bw_breaker_free(b);
}

static void consecutive(void **state) {
  (void)state;
  run(BW_TRIP_CONSECUTIVE);
}
static void count_window(void **state) {
  (void)state;
  run(BW_TRIP_COUNT_WINDOW);
}
static void time_window(void **state) {
  (void)state;
  run(BW_TRIP_TIME_WINDOW);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(consecutive),
      cmocka_unit_test(count_window),
      cmocka_unit_test(time_window),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

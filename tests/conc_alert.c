/* Concurrency: many threads feed one alert rule (alert.h) at interleaved
 * times on a 1 ms window, while its events go to a recording sink.
 *
 * Laws checked:
 *   observed = every observe call made by the threads;
 *   matched + late = the watched calls among them (each watched event is
 *   counted in its window or as late, never both, never lost);
 *   the alert's own events, in the order the sink saw them, alternate
 *   firing, resolved, firing, ... starting with firing, and number exactly
 *   fired + resolved; firing at the end = (fired - resolved == 1). */
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
#define ROUNDS 20000

typedef struct {
  bw_alert_t *a;
  pthread_barrier_t *barrier;
  int id;
  uint64_t calls, watched;
} worker_t;

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static int rec[4 * ROUNDS];
static size_t nrec;

static void record(const bw_event_t *ev, void *userdata) {
  (void)userdata;
  pthread_mutex_lock(&rec_lock);
  if (nrec < sizeof(rec) / sizeof(rec[0])) rec[nrec++] = (int)ev->type;
  pthread_mutex_unlock(&rec_lock);
}

static void *work(void *arg) {
  worker_t *w = arg;
  pthread_barrier_wait(w->barrier);
  for (int i = 0; i < ROUNDS; i++) {
    /* Times interleave across threads; each thread's are increasing. A
     * watched event on 3 of every 4 rounds (so windows breach and not). */
    int64_t t = ((int64_t)i * THREADS + w->id) * 250000; /* 0.25 ms steps */
    bool watched = (i + w->id) % 4 != 0;
    bw_alert_observe(w->a,
                     watched ? BW_EV_CIRCUIT_OPENED : BW_EV_CIRCUIT_CLOSED,
                     (i % 7 == 0) ? "other" : "payments", t);
    w->calls++;
    if (watched && i % 7 != 0) w->watched++;
  }
  return NULL;
}

static void many_feeders_lose_nothing_and_events_alternate(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_sink_t *sink = bw_sink_callback_new(record, NULL, NULL);
  bw_alert_config_t c;
  bw_alert_t *a;
  bw_alert_stats_t st;
  pthread_barrier_t barrier;
  pthread_t th[THREADS];
  worker_t w[THREADS];
  uint64_t calls = 0, watched = 0;
  (void)state;
  bw_alert_config_init(&c);
  c.watch_name = "payments";
  c.n = 2;
  c.m = 3;
  c.window_ms = 1;
  c.clock = clock;
  c.wall_clock = clock;
  c.sink = sink;
  a = bw_alert_new(&c, NULL);
  assert_non_null(a);
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker_t){a, &barrier, i, 0, 0};
    assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    calls += w[i].calls;
    watched += w[i].watched;
  }
  bw_alert_stats(a, &st);
  assert_int_equal(st.observed, calls);
  assert_int_equal(st.matched + st.late, watched);
  assert_int_equal(nrec, st.fired + st.resolved);
  assert_true(st.fired > 0);
  for (size_t i = 0; i < nrec; i++)
    assert_int_equal(rec[i],
                     i % 2 == 0 ? BW_EV_ALERT_FIRING : BW_EV_ALERT_RESOLVED);
  assert_int_equal(st.firing, st.fired - st.resolved == 1);
  assert_true(st.fired - st.resolved <= 1);
  pthread_barrier_destroy(&barrier);
  bw_alert_free(a);
  bw_sink_free(sink);
  bw_clock_free(clock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(many_feeders_lose_nothing_and_events_alternate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

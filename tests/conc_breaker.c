/* Concurrency: many threads hammer one breaker through every state.
 *
 * Conservation laws checked exactly, for each trip rule:
 *   acquisitions (counted by the threads) = stats.admitted + stats.rejected
 *   releases (counted by the threads)     = stats.calls
 *                                         = successes + failures + ignored
 *   per-outcome releases by the threads   = the matching stats counter
 *   admitted = releases (every admitted permit is released once)
 * and transitions happen exactly once: the events seen by the sink equal the
 * transition counters, and they form one valid path of states (each event's
 * "from" is the state the previous event entered). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define THREADS 4
#define OPS_PER_THREAD 1000000

typedef struct {
  pthread_mutex_t lock;
  uint64_t opened, half_opened, closed, other;
  int last_to; /* state the previous event entered */
  int path_errors;
} recorder_t;

static int to_state(bw_event_type_t t) {
  switch (t) {
  case BW_EV_CIRCUIT_OPENED:
    return BW_OPEN;
  case BW_EV_CIRCUIT_HALF_OPENED:
    return BW_HALF_OPEN;
  case BW_EV_CIRCUIT_CLOSED:
    return BW_CLOSED;
  default:
    return -1;
  }
}

static void on_event(const bw_event_t *ev, void *ud) {
  recorder_t *r = ud;
  int to = to_state(ev->type);
  pthread_mutex_lock(&r->lock);
  if (to < 0) {
    r->other++;
  } else {
    const char *from = NULL;
    for (size_t i = 0; i < ev->field_count; i++)
      if (strcmp(ev->fields[i].key, "from") == 0) from = ev->fields[i].v.s;
    if (from == NULL ||
        strcmp(from, bw_state_name((bw_state_t)r->last_to)) != 0)
      r->path_errors++;
    r->last_to = to;
    if (to == BW_OPEN) r->opened++;
    if (to == BW_HALF_OPEN) r->half_opened++;
    if (to == BW_CLOSED) r->closed++;
  }
  pthread_mutex_unlock(&r->lock);
}

typedef struct {
  bw_breaker_t *b;
  bw_clock_t *clock;
  uint64_t seed;
  uint64_t acquires, rejected, releases, succ, fail, ign;
} worker_t;

static void *work(void *arg) {
  worker_t *w = arg;
  bw_rand_t r;
  bw_rand_seed(&r, w->seed);
  for (int i = 0; i < OPS_PER_THREAD; i++) {
    bw_permit_t p;
    /* Alternate healthy and failing phases of 20k operations so the breaker
     * opens, probes and closes many times during the run. */
    int failing = (i / 20000) % 2 == 1;
    double x = bw_rand_double(&r);
    bw_outcome_t o = x < 0.05  ? BW_IGNORED
                     : failing ? (x < 0.8 ? BW_FAILURE : BW_SUCCESS)
                               : (x < 0.1 ? BW_FAILURE : BW_SUCCESS);
    /* Time moves 1 us per operation per thread. */
    bw_clock_manual_advance(w->clock, 1000);
    w->acquires++;
    if (bw_breaker_acquire(w->b, &p) != BW_OK) {
      w->rejected++;
      continue;
    }
    bw_breaker_release(w->b, &p, o);
    w->releases++;
    if (o == BW_SUCCESS) w->succ++;
    if (o == BW_FAILURE) w->fail++;
    if (o == BW_IGNORED) w->ign++;
  }
  return NULL;
}

static void hammer(bw_trip_rule_t rule) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  recorder_t rec;
  bw_error_t err;
  bw_sink_t *sink;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  worker_t w[THREADS];
  pthread_t th[THREADS];
  bw_breaker_stats_t st;
  uint64_t acq = 0, rej = 0, rel = 0, succ = 0, fail = 0, ign = 0;

  memset(&rec, 0, sizeof(rec));
  pthread_mutex_init(&rec.lock, NULL);
  rec.last_to = BW_CLOSED;
  sink = bw_sink_callback_new(on_event, &rec, &err);
  assert_non_null(sink);
  bw_breaker_config_init(&cfg);
  cfg.name = "hammered";
  cfg.trip_rule = rule;
  cfg.failure_threshold = 5;
  cfg.window_size = 50;
  cfg.minimum_calls = 20;
  cfg.window_ms = 10;
  cfg.window_buckets = 5;
  cfg.break_ms = 2;
  cfg.half_open_max_calls = 2;
  cfg.success_threshold = 3;
  cfg.half_open_timeout_ms = 5;
  cfg.clock = clock;
  cfg.sink = sink;
  b = bw_breaker_new(&cfg, &err);
  assert_non_null(b);

  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].b = b;
    w[i].clock = clock;
    w[i].seed = 1000 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    acq += w[i].acquires;
    rej += w[i].rejected;
    rel += w[i].releases;
    succ += w[i].succ;
    fail += w[i].fail;
    ign += w[i].ign;
  }
  bw_breaker_stats(b, &st);

  assert_int_equal(acq, (uint64_t)THREADS * OPS_PER_THREAD);
  assert_int_equal(st.admitted + st.rejected, acq);
  assert_int_equal(st.rejected, rej);
  assert_int_equal(st.admitted, rel);
  assert_int_equal(st.calls, rel);
  assert_int_equal(st.successes, succ);
  assert_int_equal(st.failures, fail);
  assert_int_equal(st.ignored, ign);
  assert_int_equal(st.successes + st.failures + st.ignored, st.calls);
  assert_int_equal(st.shadow_rejected, 0);

  /* The run must have gone through many transitions to prove anything. */
  assert_true(st.opens > 100);
  assert_true(st.closes > 10);
  assert_int_equal(rec.opened, st.opens);
  assert_int_equal(rec.half_opened, st.half_opens);
  assert_int_equal(rec.closed, st.closes);
  assert_int_equal(rec.path_errors, 0);
  assert_int_equal(rec.last_to, (int)st.state);

  bw_breaker_free(b);
  bw_sink_free(sink);
  bw_clock_free(clock);
  pthread_mutex_destroy(&rec.lock);
}

static void consecutive_rule_conserves_and_transitions_once(void **state) {
  (void)state;
  hammer(BW_TRIP_CONSECUTIVE);
}
static void count_window_conserves_and_transitions_once(void **state) {
  (void)state;
  hammer(BW_TRIP_COUNT_WINDOW);
}
static void time_window_conserves_and_transitions_once(void **state) {
  (void)state;
  hammer(BW_TRIP_TIME_WINDOW);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(consecutive_rule_conserves_and_transitions_once),
      cmocka_unit_test(count_window_conserves_and_transitions_once),
      cmocka_unit_test(time_window_conserves_and_transitions_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Concurrency: many threads pick levels and report outcomes on one
 * degradation machine while the dependency alternates between healthy and
 * failing phases, and one thread also feeds breaker and gauge signals.
 *
 * Laws checked exactly:
 *   every pick's level is in [0, level_count), and a probe's level is one
 *     above the level current at the pick (so never below 0);
 *   picks (counted by the threads)   = stats.picks = sum of stats.picks_at
 *   probes (counted by the threads)  = stats.probes
 *   reports accepted by the machine  = successes + failures + ignored
 *   reports refused as stale         = stats.stale
 *   every change is reported exactly once: callbacks = stats.changes =
 *     downs + ups, numbered 1, 2, 3, ... in order, and they form one path
 *     (each change's `from` is the previous change's `to`; the last `to` is
 *     the final level), at non-decreasing clock readings; a climb is always
 *     exactly one level, a drop exactly one unless forced. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"
#include "breakwater/degrade.h"

#define THREADS 4
#define OPS_PER_THREAD 200000
#define LEVELS 5u

typedef struct {
  pthread_mutex_t lock;
  uint64_t calls, ups, downs;
  uint32_t last_to;
  int64_t last_at; /* change times never go back */
  uint64_t errors; /* path, numbering or step-size violations */
} recorder_t;

static void on_change(const bw_degrade_change_t *c, void *ud) {
  recorder_t *r = ud;
  pthread_mutex_lock(&r->lock);
  r->calls++;
  if (c->changes != r->calls) r->errors++;
  if (c->from != r->last_to) r->errors++;
  if (c->at_ns < r->last_at) r->errors++;
  r->last_at = c->at_ns;
  if (c->to >= LEVELS || c->from == c->to) r->errors++;
  if (c->to < c->from) {
    r->ups++;
    if (c->from - c->to != 1 || c->reason != BW_DEGRADE_PROBES) r->errors++;
  } else {
    r->downs++;
    if (c->reason != BW_DEGRADE_FORCED && c->to - c->from != 1) r->errors++;
  }
  r->last_to = c->to;
  pthread_mutex_unlock(&r->lock);
}

typedef struct {
  bw_degrade_t *d;
  bw_clock_t *clock;
  uint64_t seed;
  bool signals; /* this thread also feeds breaker and gauge signals */
  uint64_t picks, probes, accepted, stale, bad_level, bad_rc;
} worker_t;

static void *work(void *arg) {
  worker_t *w = arg;
  bw_rand_t r;
  bw_rand_seed(&r, w->seed);
  for (int i = 0; i < OPS_PER_THREAD; i++) {
    bw_degrade_pick_t p;
    bw_outcome_t o;
    int rc;
    /* Phases of 10k operations: the dependency fails most full-load calls
     * in odd phases, while probes (light load) mostly succeed. */
    bool failing = (i / 10000) % 2 == 1;
    double x = bw_rand_double(&r);
    bw_clock_manual_advance(w->clock, 1000); /* 1 us per op per thread */
    if (bw_degrade_pick(w->d, &p) != BW_OK) w->bad_rc++;
    w->picks++;
    if (p.probe) w->probes++;
    if (p.level >= LEVELS || (p.probe && p.level + 1 >= LEVELS)) w->bad_level++;
    if (bw_degrade_level(w->d) >= LEVELS) w->bad_level++;
    if (x < 0.05)
      o = BW_IGNORED;
    else if (p.probe)
      o = x < 0.9 ? BW_SUCCESS : BW_FAILURE;
    else
      o = (failing ? x < 0.8 : x < 0.1) ? BW_FAILURE : BW_SUCCESS;
    rc = bw_degrade_report(w->d, &p, o);
    if (rc == BW_OK)
      w->accepted++;
    else if (rc == BW_E_STALE)
      w->stale++, w->accepted++;
    else
      w->bad_rc++;
    if (w->signals && i % 997 == 0) {
      bw_state_t st = (i / 997) % 3 == 0 ? BW_OPEN : BW_CLOSED;
      if (bw_degrade_observe_breaker(w->d, st) != BW_OK) w->bad_rc++;
    }
    if (w->signals && i % 50021 == 0 &&
        bw_degrade_force_down_to(w->d, LEVELS - 2) != BW_OK)
      w->bad_rc++;
  }
  return NULL;
}

static void many_threads_pick_and_report(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  recorder_t rec;
  bw_error_t err;
  bw_degrade_config_t cfg;
  bw_degrade_t *d;
  worker_t w[THREADS];
  pthread_t th[THREADS];
  bw_degrade_stats_t st;
  uint64_t picks = 0, probes = 0, accepted = 0, stale = 0, sum_at = 0;
  (void)state;

  assert_non_null(clock);
  memset(&rec, 0, sizeof(rec));
  pthread_mutex_init(&rec.lock, NULL);
  bw_degrade_config_init(&cfg);
  cfg.name = "conc";
  cfg.level_count = LEVELS;
  cfg.min_dwell_ms = 1;
  cfg.probe_every = 4;
  cfg.probe_successes_to_recover = 3;
  cfg.failures_to_degrade = 5;
  cfg.clock = clock;
  cfg.on_change = on_change;
  cfg.on_change_userdata = &rec;
  d = bw_degrade_new(&cfg, &err);
  assert_non_null(d);

  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].d = d;
    w[i].clock = clock;
    w[i].seed = 1000 + (uint64_t)i;
    w[i].signals = i == 0;
    assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(w[i].bad_level, 0);
    assert_int_equal(w[i].bad_rc, 0);
    picks += w[i].picks;
    probes += w[i].probes;
    accepted += w[i].accepted;
    stale += w[i].stale;
  }

  bw_degrade_stats(d, &st);
  for (unsigned i = 0; i < BW_DEGRADE_MAX_LEVELS; i++)
    sum_at += st.picks_at[i];
  assert_true(st.level < LEVELS);
  assert_int_equal(picks, (uint64_t)THREADS * OPS_PER_THREAD);
  assert_int_equal(st.picks, picks);
  assert_int_equal(sum_at, picks);
  assert_int_equal(st.probes, probes);
  assert_int_equal(st.successes + st.failures + st.ignored, accepted);
  assert_int_equal(accepted, picks);
  assert_int_equal(st.stale, stale);

  /* Every change reported exactly once, in order, along one path. */
  assert_int_equal(rec.errors, 0);
  assert_int_equal(rec.calls, st.changes);
  assert_int_equal(st.changes, st.downs + st.ups);
  assert_int_equal(rec.ups, st.ups);
  assert_int_equal(rec.downs, st.downs);
  assert_int_equal(rec.last_to, st.level);
  /* The phases must have moved it both ways many times, or this test would
   * prove nothing. */
  assert_true(st.ups > 100);
  assert_true(st.downs > 100);
  assert_true(probes > 1000);

  bw_degrade_free(d);
  bw_clock_free(clock);
  pthread_mutex_destroy(&rec.lock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(many_threads_pick_and_report),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

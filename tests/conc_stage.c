/* Concurrency tests: the backpressure stage under many producers and
 * consumers, with a ticker thread moving the manual clock so deadlines
 * expire, completions go stale and rate windows close mid-run.
 *
 * Law checked (stage), exactly, after the threads are joined:
 *   submitted = admitted + rejected
 *   admitted  = processed + failed + shed + expired + queued + in_flight
 * and every admitted item meets exactly one fate (processed, failed, shed,
 * expired, or drained at the end); the stage's counters equal the sums of
 * what the threads saw; the queue never exceeds its bound and the work in
 * flight never exceeds the concurrency. Same law with the thread-pool
 * runner doing the consuming.
 *
 * Events (the stage has a sink): the stage_dropped summaries, emitted while
 * the threads race and at the free, add up to rejected_ceiling,
 * rejected_full, shed and expired exactly; and there is exactly one
 * stage_regime_changed per regime transition (stats.transitions), each a
 * real change (from != to). */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"
#include "breakwater/stage.h"
#include "breakwater/threads.h"

#define PRODUCERS 4
#define CONSUMERS 3
#define PER_PRODUCER 20000
#define ITEMS (PRODUCERS * PER_PRODUCER)
#define QSIZE 64
#define CONC 2

static _Atomic uint8_t fate[ITEMS];
static _Atomic uint8_t was_admitted[ITEMS];
static atomic_ullong expired_seen;

static size_t id_of(const void *p) {
  return (size_t)(uintptr_t)p - 1;
}

static void on_expired(const bw_queue_item_t *it, int64_t now, void *ud) {
  (void)now;
  (void)ud;
  atomic_fetch_add(&fate[id_of(it->data)], 1);
  atomic_fetch_add(&expired_seen, 1);
}

typedef struct {
  bw_stage_t *s;
  bw_clock_t *clock;
  int index;
  atomic_bool *producers_done;
  uint64_t submitted, admitted, rejected, shed, processed, failed;
  uint32_t max_in_flight;
} worker_t;

static void *produce(void *arg) {
  worker_t *w = arg;
  uint64_t r = (uint64_t)w->index * 0x9E3779B97F4A7C15u + 1;
  for (int i = 0; i < PER_PRODUCER; i++) {
    size_t id = (size_t)w->index * PER_PRODUCER + (size_t)i;
    bw_stage_result_t res;
    int64_t dl = BW_QUEUE_NO_DEADLINE;
    int rc;
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    if (r % 4 == 0)
      dl = bw_clock_now(w->clock) + (int64_t)(r % 3) * BW_NS_PER_MS;
    rc = bw_stage_submit(w->s, (void *)(uintptr_t)(id + 1),
                         (uint32_t)((r >> 8) % 10), dl, &res);
    w->submitted++;
    if (i % 16 == 0) sched_yield();
    if (rc == BW_QUEUE_REJECTED) {
      assert_true(res.retry_after_ms >= 1);
      w->rejected++;
      sched_yield();
      continue;
    }
    assert_true(rc == BW_QUEUE_ADMITTED || rc == BW_QUEUE_SHED);
    atomic_store(&was_admitted[id], 1);
    w->admitted++;
    if (rc == BW_QUEUE_SHED) {
      atomic_fetch_add(&fate[id_of(res.dropped.data)], 1);
      w->shed++;
    }
  }
  return NULL;
}

static void *consume(void *arg) {
  worker_t *w = arg;
  uint64_t n = 0;
  for (;;) {
    bw_stage_item_t it;
    int rc = bw_stage_next(w->s, &it);
    if (rc == BW_OK) {
      bw_stage_stats_t st;
      bool ok = (++n % 5) != 0;
      bw_stage_stats(w->s, &st);
      if (st.in_flight > w->max_in_flight) w->max_in_flight = st.in_flight;
      atomic_fetch_add(&fate[id_of(it.data)], 1);
      if (n % 2 == 0) sched_yield();
      assert_int_equal(
          bw_stage_done(w->s, &it, ok ? BW_STAGE_PROCESSED : BW_STAGE_FAILED),
          BW_OK);
      if (ok)
        w->processed++;
      else
        w->failed++;
    } else if (rc == BW_E_NOTFOUND || rc == BW_E_FULL) {
      if (rc == BW_E_NOTFOUND && atomic_load(w->producers_done)) return NULL;
      sched_yield();
    } else {
      fail_msg("next: %s", bw_err_name(rc));
    }
  }
}

typedef struct {
  bw_stage_t *s;
  bw_clock_t *clock;
  atomic_bool stop;
  uint32_t max_queued, max_in_flight;
} ticker_t;

static void *tick(void *arg) {
  ticker_t *t = arg;
  while (!atomic_load(&t->stop)) {
    bw_stage_stats_t st;
    bw_stage_stats(t->s, &st);
    if (st.queued > t->max_queued) t->max_queued = st.queued;
    if (st.in_flight > t->max_in_flight) t->max_in_flight = st.in_flight;
    (void)bw_stage_retry_after_ms(t->s);
    bw_clock_manual_advance(t->clock, 100000); /* 0.1 ms a round */
  }
  return NULL;
}

/* What the stage's sink received (checked on the emitting threads: a
 * cmocka assertion may not jump out of another thread). */
static atomic_ullong ev_dropped[4], ev_regimes, ev_bad;
static void on_event(const bw_event_t *ev, void *ud) {
  (void)ud;
  if (ev->type == BW_EV_STAGE_DROPPED && ev->field_count == 5) {
    for (int i = 0; i < 4; i++)
      atomic_fetch_add(&ev_dropped[i], ev->fields[i + 1].v.u);
  } else if (ev->type == BW_EV_STAGE_REGIME_CHANGED && ev->field_count == 3 &&
             strcmp(ev->fields[0].v.s, ev->fields[1].v.s) != 0) {
    atomic_fetch_add(&ev_regimes, 1);
  } else {
    atomic_fetch_add(&ev_bad, 1);
  }
}
static bw_sink_t *g_sink;

/* Frees the stage (its last summary) and checks the events against its
 * final counters. */
static void free_and_check_events(bw_stage_t *s) {
  bw_stage_stats_t st;
  bw_stage_stats(s, &st);
  bw_stage_free(s);
  assert_int_equal(atomic_load(&ev_bad), 0);
  assert_int_equal(atomic_load(&ev_dropped[0]), st.rejected_ceiling);
  assert_int_equal(atomic_load(&ev_dropped[1]), st.rejected_full);
  assert_int_equal(atomic_load(&ev_dropped[2]), st.shed);
  assert_int_equal(atomic_load(&ev_dropped[3]), st.expired);
  assert_int_equal(atomic_load(&ev_regimes), st.transitions);
  printf("events: %llu regime changes, %llu dropped\n",
         (unsigned long long)atomic_load(&ev_regimes),
         (unsigned long long)(st.rejected + st.shed + st.expired));
}

static bw_stage_t *make(bw_clock_t *clock, bw_queue_policy_t policy) {
  bw_stage_config_t cfg;
  bw_error_t err;
  bw_stage_t *s;
  if (g_sink == NULL) g_sink = bw_sink_callback_new(on_event, NULL, NULL);
  assert_non_null(g_sink);
  for (int i = 0; i < 4; i++)
    atomic_store(&ev_dropped[i], 0);
  atomic_store(&ev_regimes, 0);
  atomic_store(&ev_bad, 0);
  memset((void *)fate, 0, sizeof(fate));
  memset((void *)was_admitted, 0, sizeof(was_admitted));
  atomic_store(&expired_seen, 0);
  bw_stage_config_init(&cfg);
  cfg.name = "conc";
  cfg.queue_size = QSIZE;
  cfg.concurrency = CONC;
  cfg.policy = policy;
  cfg.clock = clock;
  cfg.on_expired = on_expired;
  cfg.sink = g_sink;
  cfg.wall_clock = clock;
  cfg.rate_window_ms = 1;
  cfg.retry_jitter = 0.5;
  cfg.seed = 7;
  s = bw_stage_new(&cfg, &err);
  if (s == NULL) fail_msg("bw_stage_new: %s", err.message);
  return s;
}

/* Drains what is left (each a fate), then checks every item and the law. */
static void check_fates(bw_stage_t *s, const char *what, uint64_t submitted,
                        uint64_t admitted, uint64_t rejected, uint64_t shed,
                        uint64_t processed, uint64_t failed) {
  bw_stage_stats_t st;
  bw_stage_item_t it;
  uint64_t drained = 0;
  bw_stage_stats(s, &st);
  assert_int_equal(st.in_flight, 0);
  assert_int_equal(st.submitted, submitted);
  assert_int_equal(st.admitted, admitted);
  assert_int_equal(st.rejected, rejected);
  assert_int_equal(st.shed, shed);
  assert_int_equal(st.processed, processed);
  assert_int_equal(st.failed, failed);
  assert_int_equal(st.expired, atomic_load(&expired_seen));
  assert_int_equal(st.submitted, st.admitted + st.rejected);
  assert_int_equal(st.admitted, st.processed + st.failed + st.shed +
                                    st.expired + st.queued + st.in_flight);
  assert_true(st.max_queue_seen <= QSIZE);
  assert_true(st.max_in_flight_seen <= CONC);
  while (bw_stage_next(s, &it) == BW_OK) {
    atomic_fetch_add(&fate[id_of(it.data)], 1);
    assert_int_equal(bw_stage_done(s, &it, BW_STAGE_FAILED), BW_OK);
    drained++;
  }
  for (size_t id = 0; id < ITEMS; id++) {
    unsigned f = atomic_load(&fate[id]);
    unsigned a = atomic_load(&was_admitted[id]);
    if (f != a)
      fail_msg("%s: item %zu admitted %u but met %u fates", what, id, a, f);
  }
  bw_stage_stats(s, &st);
  assert_int_equal(st.queued, 0);
  assert_int_equal(st.admitted,
                   st.processed + st.failed + st.shed + st.expired);
  printf(
      "%s: submitted %llu admitted %llu rejected %llu (ceiling %llu) shed "
      "%llu expired %llu processed %llu failed %llu stale %llu drained "
      "%llu\n",
      what, (unsigned long long)st.submitted, (unsigned long long)st.admitted,
      (unsigned long long)st.rejected, (unsigned long long)st.rejected_ceiling,
      (unsigned long long)st.shed, (unsigned long long)st.expired,
      (unsigned long long)st.processed, (unsigned long long)st.failed,
      (unsigned long long)st.stale, (unsigned long long)drained);
}

static void run(bw_queue_policy_t policy) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_stage_t *s = make(clock, policy);
  pthread_t pt[PRODUCERS], ct[CONSUMERS], tt;
  worker_t pw[PRODUCERS], cw[CONSUMERS];
  atomic_bool done = false;
  ticker_t ticker;
  uint64_t submitted = 0, admitted = 0, rejected = 0, shed = 0;
  uint64_t processed = 0, failed = 0;

  memset(&ticker, 0, sizeof(ticker));
  ticker.s = s;
  ticker.clock = clock;
  assert_int_equal(pthread_create(&tt, NULL, tick, &ticker), 0);
  for (int i = 0; i < CONSUMERS; i++) {
    memset(&cw[i], 0, sizeof(cw[i]));
    cw[i].s = s;
    cw[i].producers_done = &done;
    assert_int_equal(pthread_create(&ct[i], NULL, consume, &cw[i]), 0);
  }
  for (int i = 0; i < PRODUCERS; i++) {
    memset(&pw[i], 0, sizeof(pw[i]));
    pw[i].s = s;
    pw[i].clock = clock;
    pw[i].index = i;
    assert_int_equal(pthread_create(&pt[i], NULL, produce, &pw[i]), 0);
  }
  for (int i = 0; i < PRODUCERS; i++)
    pthread_join(pt[i], NULL);
  atomic_store(&done, true);
  for (int i = 0; i < CONSUMERS; i++)
    pthread_join(ct[i], NULL);
  atomic_store(&ticker.stop, true);
  pthread_join(tt, NULL);

  for (int i = 0; i < PRODUCERS; i++) {
    submitted += pw[i].submitted;
    admitted += pw[i].admitted;
    rejected += pw[i].rejected;
    shed += pw[i].shed;
  }
  for (int i = 0; i < CONSUMERS; i++) {
    processed += cw[i].processed;
    failed += cw[i].failed;
    assert_true(cw[i].max_in_flight <= CONC);
  }
  assert_int_equal(submitted, (uint64_t)ITEMS);
  assert_true(ticker.max_queued <= QSIZE);
  assert_true(ticker.max_in_flight <= CONC);
  check_fates(s, bw_queue_policy_name(policy), submitted, admitted, rejected,
              shed, processed, failed);
  free_and_check_events(s);
  bw_clock_free(clock);
}

static void reject_conserves_every_item(void **state) {
  (void)state;
  run(BW_QUEUE_REJECT);
}
static void drop_oldest_conserves_every_item(void **state) {
  (void)state;
  run(BW_QUEUE_DROP_OLDEST);
}
static void drop_lowest_conserves_every_item(void **state) {
  (void)state;
  run(BW_QUEUE_DROP_LOWEST);
}

/* ---- the runner --------------------------------------------------------- */

static atomic_ullong handled_ok, handled_failed;

static bw_stage_outcome_t handler(const bw_stage_item_t *it, void *ud) {
  uint64_t n;
  (void)ud;
  atomic_fetch_add(&fate[id_of(it->data)], 1);
  n = (uint64_t)(uintptr_t)it->data;
  if (n % 7 == 0) {
    atomic_fetch_add(&handled_failed, 1);
    return BW_STAGE_FAILED;
  }
  atomic_fetch_add(&handled_ok, 1);
  return BW_STAGE_PROCESSED;
}

static void runner_conserves_every_item(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_stage_t *s = make(clock, BW_QUEUE_DROP_OLDEST);
  bw_runner_config_t rc;
  bw_runner_t *r, *second;
  bw_error_t err;
  pthread_t pt[PRODUCERS], tt;
  worker_t pw[PRODUCERS];
  ticker_t ticker;
  bw_stage_stats_t st;
  uint64_t submitted = 0, admitted = 0, rejected = 0, shed = 0;
  (void)state;
  atomic_store(&handled_ok, 0);
  atomic_store(&handled_failed, 0);
  bw_runner_config_init(&rc);
  rc.threads = 3;
  rc.handler = handler;
  r = bw_stage_runner_new(s, &rc, &err);
  if (r == NULL) fail_msg("runner: %s", err.message);
  second = bw_stage_runner_new(s, &rc, &err); /* one runner per stage */
  assert_null(second);
  memset(&ticker, 0, sizeof(ticker));
  ticker.s = s;
  ticker.clock = clock;
  assert_int_equal(pthread_create(&tt, NULL, tick, &ticker), 0);
  for (int i = 0; i < PRODUCERS; i++) {
    memset(&pw[i], 0, sizeof(pw[i]));
    pw[i].s = s;
    pw[i].clock = clock;
    pw[i].index = i;
    assert_int_equal(pthread_create(&pt[i], NULL, produce, &pw[i]), 0);
  }
  for (int i = 0; i < PRODUCERS; i++)
    pthread_join(pt[i], NULL);
  /* Let the runner drain (no timing assumed: wait for the state). */
  for (;;) {
    bw_stage_stats(s, &st);
    if (st.queued == 0 && st.in_flight == 0) break;
    sched_yield();
  }
  bw_runner_free(r);
  atomic_store(&ticker.stop, true);
  pthread_join(tt, NULL);
  for (int i = 0; i < PRODUCERS; i++) {
    submitted += pw[i].submitted;
    admitted += pw[i].admitted;
    rejected += pw[i].rejected;
    shed += pw[i].shed;
  }
  check_fates(s, "runner", submitted, admitted, rejected, shed,
              atomic_load(&handled_ok), atomic_load(&handled_failed));
  /* A new runner may be attached once the old one is gone. */
  r = bw_stage_runner_new(s, &rc, &err);
  assert_non_null(r);
  bw_runner_free(r);
  bw_runner_free(NULL);
  free_and_check_events(s);
  bw_clock_free(clock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reject_conserves_every_item),
      cmocka_unit_test(drop_oldest_conserves_every_item),
      cmocka_unit_test(drop_lowest_conserves_every_item),
      cmocka_unit_test(runner_conserves_every_item),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  bw_sink_free(g_sink);
  return rc;
}

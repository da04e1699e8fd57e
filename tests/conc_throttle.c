/* Concurrency test: one throttle shared by 4 threads (throttle.h).
 *
 * Conservation law: every request that entered the throttle ends in exactly
 * one of accepts, rejected (the partner shed it), throttled (refused here)
 * or withdrawn (never went out), so once every thread has finished
 *   requests = accepts + rejected + throttled + withdrawn,
 * and each of those equals the sum of what the threads themselves saw
 * (an admission or a refusal from enter, and the outcome they left with).
 * The window is a day long, so the window's counts equal the totals less
 * the withdrawn requests. Bounded: 4 x 20,000 calls.
 *
 * Second law, with a sink: every refusal is reported in exactly one
 * throttle_refused summary, so once the throttle is freed (its free flushes
 * the last one) the summaries' counts add up to the stats' throttled, and
 * no summary reports zero. The threads move time on (10 ms a call each) so
 * that summaries fall due and race each other through the run. Bounded: 4
 * x 20,000 calls. */
#include <pthread.h>
#include <stdatomic.h>

#include "breakwater/breakwater.h"
#include "bw_test.h"

#define THREADS 4
#define CALLS 20000

typedef struct worker_s {
  bw_throttle_t *t;
  unsigned id;
  bool moving; /* time moves on: 10 ms a call */
  uint64_t admitted, refused, accepts, rejected, withdrawn;
} worker_t;

static void *run(void *arg) {
  worker_t *w = arg;
  bw_strategy_if_t *s = bw_throttle_strategy(w->t);
  for (unsigned i = 0; i < CALLS; i++) {
    bw_permit_t permit;
    bw_deadline_t d = bw_deadline_none();
    int64_t timeout = -1;
    bw_strategy_ctx_t ctx = {&permit, &d, &timeout, 0, 0, 0, false};
    bw_refusal_t r = {BW_FAILURE_NONE, 0, false};
    memset(&permit, 0, sizeof permit);
    int64_t now = BWT_T0_NS + (w->moving ? (int64_t)i * 10 * BW_NS_PER_MS : 0);
    if (s->vt->enter(s, &ctx, now, &r) != BW_OK) {
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

/* A throttle whose window spans the whole test (one bucket of a day), on
 * clock, with the given seed and sink (NULL for none). */
static bw_throttle_t *new_throttle(bw_clock_t *clock, uint64_t seed,
                                   bw_sink_t *sink) {
  bw_throttle_config_t cfg;
  bw_error_t err;
  bw_throttle_t *t;
  bw_throttle_config_init(&cfg);
  cfg.window_ms = 86400000;
  cfg.buckets = 1;
  cfg.seed = seed;
  cfg.clock = clock;
  cfg.sink = sink;
  t = bw_throttle_new(&cfg, &err);
  assert_non_null(t);
  return t;
}

/* Runs THREADS workers over t (moving: their calls 10 ms apart) and
 * waits for them; w[i] holds what worker i counted. */
static void run_workers(bw_throttle_t *t, worker_t *w, bool moving) {
  pthread_t th[THREADS];
  for (unsigned i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].t = t;
    w[i].id = i;
    w[i].moving = moving;
    assert_int_equal(pthread_create(&th[i], NULL, run, &w[i]), 0);
  }
  for (unsigned i = 0; i < THREADS; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
}

static void requests_are_conserved_under_contention(void **state) {
  (void)state;
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  worker_t w[THREADS];
  bw_throttle_stats_t st;
  uint64_t admitted = 0, refused = 0, accepts = 0, rejected = 0, withdrawn = 0;
  assert_non_null(clock);
  bw_throttle_t *t = new_throttle(clock, 17, NULL);
  run_workers(t, w, false);
  for (unsigned i = 0; i < THREADS; i++) {
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

/* What the summaries said, from any thread. */
typedef struct sums_s {
  _Atomic uint64_t count; /* the counts added up */
  _Atomic uint64_t events;
  _Atomic uint64_t zero; /* summaries that reported nothing */
} sums_t;

static void add_summary(const bw_event_t *ev, void *ud) {
  sums_t *s = ud;
  if (ev->type != BW_EV_THROTTLE_REFUSED) return;
  uint64_t n = ev->fields[0].v.u; /* "count" comes first */
  atomic_fetch_add(&s->count, n);
  atomic_fetch_add(&s->events, 1);
  if (n == 0) atomic_fetch_add(&s->zero, 1);
}

static void summaries_add_up_to_the_refusals(void **state) {
  (void)state;
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_error_t err;
  worker_t w[THREADS];
  bw_throttle_stats_t st;
  sums_t sums;
  uint64_t refused = 0;
  atomic_init(&sums.count, 0);
  atomic_init(&sums.events, 0);
  atomic_init(&sums.zero, 0);
  bw_sink_t *sink = bw_sink_callback_new(add_summary, &sums, &err);
  assert_non_null(clock);
  assert_non_null(sink);
  bw_throttle_t *t = new_throttle(clock, 23, sink);
  run_workers(t, w, true);
  for (unsigned i = 0; i < THREADS; i++)
    refused += w[i].refused;
  bw_throttle_stats(t, &st);
  assert_int_equal(st.throttled, refused);
  assert_true(st.throttled > 0);
  bw_throttle_free(t); /* the last summary */
  assert_int_equal(atomic_load(&sums.count), st.throttled);
  assert_int_equal(atomic_load(&sums.zero), 0);
  /* 200 s of calls: many summaries, at most one a second plus the last. */
  assert_true(atomic_load(&sums.events) > 1);
  assert_true(atomic_load(&sums.events) <= 201);
  bw_sink_free(sink);
  bw_clock_free(clock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(requests_are_conserved_under_contention),
      cmocka_unit_test(summaries_add_up_to_the_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

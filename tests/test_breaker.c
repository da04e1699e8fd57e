/* Specification tests: the circuit breaker's state machine.
 *
 * Every test runs on manual clocks (bw_test.h: monotonic at BWT_T0_NS, a whole
 * number of seconds, and wall at 2026-08-07T14:12:03.418Z) and asserts exact
 * values. The reference articles' scenarios (docs/references.md) are
 * written step by step:
 *   the asyncio toolkit — a Python breaker and its registry configs (hotel_api
 *         5/2/30 s, payment_api 3/3/60 s, search_agent 10/1/15 s);
 *   the tenacity article — pybreaker with exclude=[4xx]: a 4xx is the
 *         caller's fault and neither counts nor resets;
 *   the Polly lab — Polly's failure-ratio breaker (0.5 over 10 s, minimum 20
 * calls, 15 s break), including its documented calm-traffic pitfall. */
#include "breakwater/ext.h"
#include "bw_test.h"

#define MS BW_NS_PER_MS
#define SEC BW_NS_PER_S

static void restore_context(const bw_context_t *prev) {
  bw_context_set(prev);
}

/* A breaker with the consecutive rule, threshold `threshold`, break
 * `break_ms`, other fields at their defaults. */
static bw_breaker_t *consecutive(bwt_env_t *e, const char *name,
                                 uint32_t threshold, int64_t break_ms) {
  bw_breaker_config_t cfg;
  bwt_config(e, &cfg, name);
  cfg.failure_threshold = threshold;
  cfg.break_ms = break_ms;
  return bwt_breaker(e, &cfg);
}

/* ==== the permit protocol
 * ===================================================== */

static void acquire_when_closed_fills_a_normal_permit(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t p, q;
  bw_breaker_stats_t s;

  bwt_config(e, &cfg, "svc");
  b = bwt_breaker(e, &cfg);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 0);

  memset(&p, 0xCD, sizeof(p));
  assert_status(bw_breaker_acquire(b, &p), BW_OK);
  assert_int_equal(p.kind, BW_PERMIT_NORMAL);
  assert_u64_eq(p.generation, bwt_stats(b).generation);
  assert_null(p.context); /* acquire never leaves a stale context behind */
  /* the fields a breaker does not use hold their neutral values */
  assert_i64_eq(p.deadline_ns, INT64_MAX);
  assert_u64_eq(p.lease_slot, BW_PERMIT_NO_SLOT);
  assert_u64_eq(p.inflight_at_acquire, 0);
  assert_u64_eq(p.limit_at_acquire, 0);
  assert_u64_eq(p.flags, 0);

  bwt_advance_ms(e, 5);
  memset(&q, 0xCD, sizeof(q));
  assert_status(bw_breaker_acquire(b, &q), BW_OK);
  assert_int_equal(q.kind, BW_PERMIT_NORMAL);
  assert_u64_eq(q.generation, p.generation);

  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_status(bw_breaker_release(b, &q, BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.admitted, 2);
  assert_u64_eq(s.rejected, 0);
  assert_u64_eq(s.calls, 2);
  assert_u64_eq(s.successes, 2);
  assert_u64_eq(s.failures, 0);
  assert_u64_eq(s.ignored, 0);
  assert_u64_eq(s.stale, 0);
  assert_i64_eq(s.retry_in_ms, 0);
  assert_int_equal(e->rec->count, 0);
}

/* permit.start_ns is the clock reading at acquire wherever the breaker
 * reads the clock anyway: with slow-call detection on, for probes, and on
 * every non-CLOSED path. The plain CLOSED/DISABLED path without slow-call
 * detection reads no clock (it would triple its cost) and leaves 0
 * (docs/breaker.md). */
static void a_permit_carries_the_clock_reading_when_the_breaker_needs_it(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 1000);
  bw_breaker_t *slow;
  bw_breaker_config_t cfg;
  bw_permit_t p;

  p = bwt_acquire(b); /* CLOSED, consecutive rule: no clock read */
  assert_i64_eq(p.start_ns, 0);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  bwt_advance_ms(e, 5);
  p = bwt_acquire(b);
  assert_i64_eq(p.start_ns, 0);
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);

  bwt_advance_ms(e, 1000); /* HALF_OPEN probe: the clock is read */
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_i64_eq(p.start_ns, BWT_T0_NS + 1005 * MS);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);

  bw_breaker_disable(b); /* DISABLED: the fast path again */
  bwt_advance_ms(e, 7);
  p = bwt_acquire(b);
  assert_i64_eq(p.start_ns, 0);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);

  /* Slow-call detection on: every CLOSED permit carries its start. */
  bwt_config(e, &cfg, "slow");
  cfg.trip_rule = BW_TRIP_COUNT_WINDOW;
  cfg.window_size = 10;
  cfg.minimum_calls = 5;
  cfg.slow_call_ms = 100;
  slow = bwt_breaker(e, &cfg);
  p = bwt_acquire(slow);
  assert_i64_eq(p.start_ns, BWT_T0_NS + 1012 * MS);
  assert_status(bw_breaker_release(slow, &p, BW_SUCCESS), BW_OK);
}

static void rejected_acquire_leaves_the_permit_untouched(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 1000);
  bw_permit_t p, copy;

  bwt_call(b, BW_FAILURE);
  memset(&p, 0xCD, sizeof(p));
  memcpy(&copy, &p, sizeof(p));
  assert_status(bw_breaker_acquire(b, &p), BW_E_OPEN);
  assert_memory_equal(&p, &copy, sizeof(p));
}

static void release_with_an_unknown_outcome_is_refused_and_counts_nothing(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 1000);
  bw_permit_t p = bwt_acquire(b);
  bw_breaker_stats_t s;

  assert_status(bw_breaker_release(b, &p, (bw_outcome_t)3), BW_E_INVAL);
  assert_status(bw_breaker_release(b, &p, (bw_outcome_t)-1), BW_E_INVAL);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED); /* threshold 1: a counted failure opens */
  assert_u64_eq(s.calls, 0);
  assert_u64_eq(s.successes, 0);
  assert_u64_eq(s.failures, 0);
  assert_u64_eq(s.ignored, 0);
  assert_u64_eq(s.stale, 0);

  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_u64_eq(s.calls, 1);
  assert_u64_eq(s.successes, 1);
  assert_int_equal(e->rec->count, 0);
}

/* ==== consecutive rule
 * ========================================================= */

static void failures_below_the_threshold_keep_the_breaker_closed(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 4);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.consecutive_failures, 4);
  assert_u64_eq(s.failures, 4);
  assert_u64_eq(s.opens, 0);
  assert_int_equal(e->rec->count, 0);
}

static void the_threshold_th_consecutive_failure_opens_the_breaker(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b;
  bw_permit_t p[5];
  uint64_t g0;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;
  int i;

  b = consecutive(e, "payment_api", 5, 30000);
  g0 = bwt_stats(b).generation;
  for (i = 0; i < 5; i++)
    p[i] = bwt_acquire(b);
  bwt_advance_ms(e, 250);
  for (i = 0; i < 4; i++) {
    assert_status(bw_breaker_release(b, &p[i], BW_FAILURE), BW_OK);
    assert_state(bw_breaker_state(b), BW_CLOSED);
  }
  assert_int_equal(e->rec->count, 0);
  assert_status(bw_breaker_release(b, &p[4], BW_FAILURE), BW_OK);

  assert_state(bw_breaker_state(b), BW_OPEN);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.generation, g0 + 1);
  assert_u64_eq(s.failures, 5);
  assert_i64_eq(s.current_break_ms, 30000);
  assert_i64_eq(s.retry_in_ms, 30000);

  assert_int_equal(e->rec->count, 1);
  ev = bwt_event_at(e->rec, 0);
  assert_event(ev, BW_EV_CIRCUIT_OPENED,
               "5 consecutive failures (failure_threshold 5)");
  assert_string_equal(ev->name, "payment_api");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 250 * MS);
  assert_i64_eq(ev->wall_ns, BWT_WALL0_NS + 250 * MS);
  assert_int_equal(ev->field_count, 2);
  assert_field_int(ev, 0, "break_ms", 30000);
  assert_field_str(ev, 1, "from", "closed");
}

static void a_success_resets_the_consecutive_count(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);

  bwt_calls(b, BW_FAILURE, 4);
  bwt_call(b, BW_SUCCESS);
  assert_u64_eq(bwt_stats(b).consecutive_failures, 0);
  bwt_calls(b, BW_FAILURE, 4);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_stats(b).consecutive_failures, 4);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_u64_eq(bwt_stats(b).failures, 9);
}

/* Permits acquired while CLOSED and released after the breaker opened belong
 * to an older generation: counted in the totals and as stale, deciding
 * nothing. */
static void failures_released_after_the_open_are_stale(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_permit_t p[7];
  bw_breaker_stats_t s;
  int i;

  for (i = 0; i < 7; i++)
    p[i] = bwt_acquire(b);
  for (i = 0; i < 5; i++)
    assert_status(bw_breaker_release(b, &p[i], BW_FAILURE), BW_OK);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_status(bw_breaker_release(b, &p[5], BW_FAILURE), BW_E_STALE);
  assert_status(bw_breaker_release(b, &p[6], BW_SUCCESS), BW_E_STALE);

  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.calls, 7);
  assert_u64_eq(s.failures, 6);
  assert_u64_eq(s.successes, 1);
  assert_u64_eq(s.stale, 2);
  assert_i64_eq(s.retry_in_ms, 30000);
  assert_int_equal(bwt_transition_count(e->rec), 1);
}

/* ==== OPEN
 * ========================================================================= */

static void open_breaker_rejects_until_the_break_ends(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_breaker_stats_t s;
  bw_permit_t p;
  const bwt_event_t *ev;

  bwt_calls(b, BW_FAILURE, 5); /* opened at t = T0 */
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 30000);

  bwt_advance_ms(e, 10500); /* t + 10.5 s */
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 19500);

  bwt_advance_ns(e, INT64_C(19499100000)); /* t + 29999.1 ms */
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.rejected, 3);
  assert_u64_eq(s.admitted, 5);
  assert_i64_eq(s.retry_in_ms, 1);
  assert_int_equal(bwt_transition_count(e->rec), 1);

  bwt_advance_ns(e, 900000); /* t + 30000 ms exactly: the break is over */
  assert_i64_eq(bw_breaker_retry_in_ms(b), 0);
  memset(&p, 0, sizeof(p));
  assert_status(bw_breaker_acquire(b, &p), BW_OK);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_i64_eq(p.start_ns, BWT_T0_NS + 30 * SEC);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);

  s = bwt_stats(b);
  assert_u64_eq(s.rejected, 3);
  assert_u64_eq(s.admitted, 6);
  assert_u64_eq(s.half_opens, 1);
  assert_u64_eq(s.half_open_in_flight, 1);
  assert_u64_eq(p.generation, s.generation);
  assert_int_equal(bwt_transition_count(e->rec), 2);
  ev = bwt_transition_at(e->rec, 1);
  assert_event(ev, BW_EV_CIRCUIT_HALF_OPENED, "break of 30000 ms elapsed");
  assert_int_equal(ev->field_count, 1);
  assert_field_str(ev, 0, "from", "open");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 30 * SEC);
}

/* The break is timed from the opening, not from the last failure: a call
 * admitted before the open that fails during the break is stale and does not
 * push the end of the break back (the asyncio toolkit's breaker waits from its
 * last failure). */
static void the_break_is_timed_from_the_opening_not_from_the_last_failure(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_permit_t p[6], q;
  int i;

  for (i = 0; i < 6; i++)
    p[i] = bwt_acquire(b);
  for (i = 0; i < 5; i++)
    assert_status(bw_breaker_release(b, &p[i], BW_FAILURE), BW_OK);
  assert_state(bw_breaker_state(b), BW_OPEN); /* opened at T0 */

  bwt_advance_ms(e, 10000); /* a late failure, 10 s into the break */
  assert_status(bw_breaker_release(b, &p[5], BW_FAILURE), BW_E_STALE);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 20000);

  bwt_advance_ns(e, 20 * SEC - 1);
  assert_rejected(b);
  bwt_advance_ns(e, 1); /* T0 + 30 s: the break is over */
  q = bwt_acquire(b);
  assert_int_equal(q.kind, BW_PERMIT_PROBE);
  assert_u64_eq(bwt_stats(b).failures, 6);
  assert_u64_eq(bwt_stats(b).opens, 1);
}

static void state_is_lazy_until_an_acquire_or_a_poll(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_breaker_stats_t s;
  bw_permit_t p;

  bwt_calls(b, BW_FAILURE, 5);
  bwt_advance_ms(e, 45000); /* well past the break */
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_state(bwt_stats(b).state, BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 0);
  assert_int_equal(bwt_transition_count(e->rec), 1);

  bw_breaker_poll(b); /* the transition, admitting nothing */
  s = bwt_stats(b);
  assert_state(s.state, BW_HALF_OPEN);
  assert_u64_eq(s.half_open_in_flight, 0);
  assert_i64_eq(s.retry_in_ms, 0); /* a probe slot is free */
  assert_u64_eq(s.admitted, 5);
  assert_u64_eq(s.half_opens, 1);
  assert_int_equal(bwt_transition_count(e->rec), 2);
  assert_event(bwt_transition_at(e->rec, 1), BW_EV_CIRCUIT_HALF_OPENED,
               "break of 30000 ms elapsed");
  assert_i64_eq(bwt_transition_at(e->rec, 1)->mono_ns, BWT_T0_NS + 45 * SEC);

  bw_breaker_poll(b); /* nothing more is due */
  assert_int_equal(bwt_transition_count(e->rec), 2);

  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_u64_eq(bwt_stats(b).half_open_in_flight, 1);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_int_equal(bwt_transition_count(e->rec), 3);
}

static void poll_before_anything_is_due_changes_nothing(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);

  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_calls(b, BW_FAILURE, 5);
  bwt_advance_ns(e, 30 * SEC - 1);
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1);
  assert_int_equal(e->rec->count, 1);
}

/* ==== HALF_OPEN
 * ==================================================================== */

static void half_open_admits_at_most_half_open_max_calls_probes(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t a, bb, d;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.half_open_max_calls = 2;
  cfg.success_threshold = 2;
  b = bwt_breaker(e, &cfg);

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  a = bwt_acquire(b);
  bb = bwt_acquire(b);
  assert_int_equal(a.kind, BW_PERMIT_PROBE);
  assert_int_equal(bb.kind, BW_PERMIT_PROBE);
  assert_rejected(b); /* the third concurrent acquire */
  assert_i64_eq(bw_breaker_retry_in_ms(b), 0);
  s = bwt_stats(b);
  assert_state(s.state, BW_HALF_OPEN);
  assert_u64_eq(s.half_open_in_flight, 2);
  assert_u64_eq(s.rejected, 1);
  assert_i64_eq(s.retry_in_ms, 0);

  /* A released probe frees its slot. */
  assert_status(bw_breaker_release(b, &a, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN); /* 1 of 2 successes */
  assert_u64_eq(bwt_stats(b).half_open_in_flight, 1);
  d = bwt_acquire(b);
  assert_int_equal(d.kind, BW_PERMIT_PROBE);
  assert_rejected(b);
  assert_u64_eq(bwt_stats(b).rejected, 2);

  /* The second probe success closes; the probe still out is now stale. */
  assert_status(bw_breaker_release(b, &bb, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  ev = bwt_transition_at(e->rec, 2);
  assert_event(ev, BW_EV_CIRCUIT_CLOSED,
               "2 probe successes (success_threshold 2)");
  assert_int_equal(ev->field_count, 1);
  assert_field_str(ev, 0, "from", "half_open");

  assert_status(bw_breaker_release(b, &d, BW_FAILURE), BW_E_STALE);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.closes, 1);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.stale, 1);
  assert_u64_eq(s.consecutive_failures, 0);
  assert_u64_eq(s.half_open_in_flight, 0);
  assert_int_equal(bwt_transition_count(e->rec), 3);
}

static void a_probe_failure_reopens_the_breaker(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_permit_t p;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;

  bwt_calls(b, BW_FAILURE, 5);
  bwt_advance_ms(e, 30000);
  p = bwt_acquire(b);
  bwt_advance_ms(e, 20);
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);

  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 2);
  assert_u64_eq(s.half_opens, 1);
  assert_u64_eq(s.closes, 0);
  assert_i64_eq(s.retry_in_ms, 30000); /* a fresh break from the reopen */
  assert_rejected(b);
  assert_int_equal(bwt_transition_count(e->rec), 3);
  ev = bwt_transition_at(e->rec, 2);
  assert_event(ev, BW_EV_CIRCUIT_OPENED, "probe failed in half-open");
  assert_field_int(ev, 0, "break_ms", 30000);
  assert_field_str(ev, 1, "from", "half_open");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 30020 * MS);

  bwt_advance_ns(e, 30 * SEC - 1);
  assert_rejected(b);
  bwt_advance_ns(e, 1);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
}

static void an_ignored_probe_frees_its_slot_and_counts_neither_way(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t p;
  bw_breaker_stats_t s;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.success_threshold = 2;
  b = bwt_breaker(e, &cfg);
  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);

  p = bwt_acquire(b);
  assert_rejected(b); /* the only slot is taken */
  assert_status(bw_breaker_release(b, &p, BW_IGNORED), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_HALF_OPEN);
  assert_u64_eq(s.half_open_in_flight, 0);
  assert_u64_eq(s.ignored, 1);

  p = bwt_acquire(b); /* the slot is free again */
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN); /* 1 of 2 */

  p = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &p, BW_IGNORED), BW_OK);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN); /* still 1 of 2 */

  p = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  s = bwt_stats(b);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.closes, 1);
  assert_u64_eq(s.ignored, 2);
  assert_event(bwt_transition_at(e->rec, 2), BW_EV_CIRCUIT_CLOSED,
               "2 probe successes (success_threshold 2)");
}

static void sequential_probes_close_after_success_threshold(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t p;
  int i;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.half_open_max_calls = 1;
  cfg.success_threshold = 3;
  b = bwt_breaker(e, &cfg);
  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);

  for (i = 1; i <= 3; i++) {
    p = bwt_acquire(b);
    assert_int_equal(p.kind, BW_PERMIT_PROBE);
    bwt_advance_ms(e, 10);
    assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
    assert_state(bw_breaker_state(b), i < 3 ? BW_HALF_OPEN : BW_CLOSED);
  }
  assert_int_equal(bwt_transition_count(e->rec), 3);
  assert_event(bwt_transition_at(e->rec, 2), BW_EV_CIRCUIT_CLOSED,
               "3 probe successes (success_threshold 3)");
  assert_u64_eq(bwt_stats(b).successes, 3);
}

static void closing_clears_the_consecutive_count(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 3, 1000);
  bw_permit_t p;

  bwt_calls(b, BW_FAILURE, 3);
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_stats(b).consecutive_failures, 0);
  bwt_calls(b, BW_FAILURE, 2);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

/* ==== break growth
 * ================================================================= */

/* The break lasts exactly `break_ms` (rejected 1 ns before its end); then a
 * probe is admitted and fails: the breaker reopens. */
static void probe_fails_after(bwt_env_t *e, bw_breaker_t *b, int64_t break_ms) {
  bw_permit_t p;
  bwt_advance_ns(e, break_ms * MS - 1);
  assert_rejected(b);
  bwt_advance_ns(e, 1);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

static void the_break_grows_on_consecutive_opens_up_to_max_break_ms(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  static const int64_t expected[] = {1000, 2000, 4000, 5000, 5000};
  bw_permit_t p;
  size_t i;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.break_multiplier = 2.0;
  cfg.max_break_ms = 5000;
  b = bwt_breaker(e, &cfg);
  assert_i64_eq(bwt_stats(b).current_break_ms, 1000);

  bwt_call(b, BW_FAILURE);
  for (i = 0; i < 5; i++) {
    const bwt_event_t *ev;
    if (i > 0) probe_fails_after(e, b, expected[i - 1]);
    ev = bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, i);
    assert_field_int(ev, 0, "break_ms", expected[i]);
    assert_i64_eq(bwt_stats(b).current_break_ms, expected[i]);
    assert_i64_eq(bw_breaker_retry_in_ms(b), expected[i]);
  }
  assert_u64_eq(bwt_stats(b).opens, 5);

  /* A close resets growth. */
  bwt_advance_ms(e, 5000);
  p = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_i64_eq(bwt_stats(b).current_break_ms, 1000);
  bwt_call(b, BW_FAILURE);
  assert_field_int(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, 5), 0, "break_ms",
                   1000);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1000);
}

static void a_fractional_multiplier_grows_the_break_exactly(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  static const int64_t expected[] = {1000, 1500, 2250, 3375};
  size_t i;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.break_multiplier = 1.5;
  cfg.max_break_ms = 10000;
  b = bwt_breaker(e, &cfg);
  bwt_call(b, BW_FAILURE);
  for (i = 0; i < 4; i++) {
    if (i > 0) probe_fails_after(e, b, expected[i - 1]);
    assert_field_int(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, i), 0, "break_ms",
                     expected[i]);
    assert_i64_eq(bw_breaker_retry_in_ms(b), expected[i]);
  }
}

static void max_break_ms_zero_means_the_break_never_grows(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  size_t i;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.break_multiplier = 2.0;
  cfg.max_break_ms = 0;
  b = bwt_breaker(e, &cfg);
  bwt_call(b, BW_FAILURE);
  for (i = 0; i < 3; i++) {
    if (i > 0) probe_fails_after(e, b, 1000);
    assert_field_int(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, i), 0, "break_ms",
                     1000);
    assert_i64_eq(bwt_stats(b).current_break_ms, 1000);
  }
}

/* ==== stuck half-open guard
 * ======================================================== */

static bw_breaker_t *stuck_breaker(bwt_env_t *e, uint32_t max_calls,
                                   uint32_t success_threshold) {
  bw_breaker_config_t cfg;
  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.break_multiplier = 2.0;
  cfg.max_break_ms = 10000;
  cfg.half_open_max_calls = max_calls;
  cfg.success_threshold = success_threshold;
  cfg.half_open_timeout_ms = 5000;
  return bwt_breaker(e, &cfg);
}

static void a_stuck_half_open_probe_reopens_with_the_grown_break(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = stuck_breaker(e, 1, 1);
  bw_permit_t p, q;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(b); /* the probe that never comes back */
  bwt_advance_ms(e, 4999);
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  assert_int_equal(bwt_transition_count(e->rec), 2);

  bwt_advance_ms(e, 1); /* 5000 ms without a probe admitted or released */
  assert_status(bw_breaker_acquire(b, &q), BW_E_OPEN);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 2);
  assert_i64_eq(s.current_break_ms, 2000);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 2000);
  assert_int_equal(bwt_transition_count(e->rec), 3);
  ev = bwt_transition_at(e->rec, 2);
  assert_event(ev, BW_EV_CIRCUIT_OPENED, "half-open probes stuck for 5000 ms");
  assert_field_int(ev, 0, "break_ms", 2000);
  assert_field_str(ev, 1, "from", "half_open");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 6000 * MS);

  /* The stuck probe finally returns: it decides nothing. */
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_E_STALE);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.stale, 1);
  assert_u64_eq(s.successes, 1);
  assert_u64_eq(s.closes, 0);

  bwt_advance_ms(e, 2000);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
}

/* A probe from an earlier half-open (abandoned by the stuck guard) must not
 * decide a later half-open: it carries an older generation. */
static void a_probe_from_an_earlier_half_open_is_stale(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = stuck_breaker(e, 2, 1);
  bw_permit_t old1, old2, probe;
  bw_breaker_stats_t s;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  old1 = bwt_acquire(b);
  old2 = bwt_acquire(b);
  bwt_advance_ms(e, 5000);
  bw_breaker_poll(b); /* stuck: OPEN for 2000 ms */
  assert_state(bw_breaker_state(b), BW_OPEN);
  bwt_advance_ms(e, 2000);
  probe = bwt_acquire(b);
  assert_int_equal(probe.kind, BW_PERMIT_PROBE);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);

  assert_status(bw_breaker_release(b, &old1, BW_SUCCESS), BW_E_STALE);
  s = bwt_stats(b);
  assert_state(s.state, BW_HALF_OPEN); /* success_threshold 1: not closed */
  assert_u64_eq(s.half_open_in_flight, 1);
  assert_u64_eq(s.closes, 0);
  assert_status(bw_breaker_release(b, &old2, BW_FAILURE), BW_E_STALE);
  s = bwt_stats(b);
  assert_state(s.state, BW_HALF_OPEN); /* nor reopened */
  assert_u64_eq(s.half_open_in_flight, 1);
  assert_u64_eq(s.opens, 2);
  assert_u64_eq(s.stale, 2);

  assert_status(bw_breaker_release(b, &probe, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
}

static void admitting_a_probe_restarts_the_stuck_timer(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = stuck_breaker(e, 2, 2);
  bw_permit_t a, c;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  a = bwt_acquire(b);
  bwt_advance_ms(e, 3000);
  c = bwt_acquire(b);
  bwt_advance_ms(e, 4999); /* 7999 ms after the first probe */
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  bwt_advance_ms(e, 1);
  bw_breaker_poll(b); /* the poll applies it too */
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 2), BW_EV_CIRCUIT_OPENED,
               "half-open probes stuck for 5000 ms");
  assert_i64_eq(bwt_transition_at(e->rec, 2)->mono_ns, BWT_T0_NS + 9000 * MS);
  assert_status(bw_breaker_release(b, &a, BW_SUCCESS), BW_E_STALE);
  assert_status(bw_breaker_release(b, &c, BW_SUCCESS), BW_E_STALE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_u64_eq(bwt_stats(b).stale, 2);
}

static void releasing_a_probe_restarts_the_stuck_timer(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = stuck_breaker(e, 2, 3);
  bw_permit_t a, c, d;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  a = bwt_acquire(b);
  c = bwt_acquire(b); /* both slots taken at T0 + 1000 */
  bwt_advance_ms(e, 3000);
  assert_status(bw_breaker_release(b, &a, BW_SUCCESS), BW_OK);
  d = bwt_acquire(b); /* full again, at T0 + 4000: the timer restarted */
  assert_int_equal(d.kind, BW_PERMIT_PROBE);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  bwt_advance_ms(e, 4999); /* 7999 ms after the first probes */
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  bwt_advance_ms(e, 1);
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 2), BW_EV_CIRCUIT_OPENED,
               "half-open probes stuck for 5000 ms");
  assert_status(bw_breaker_release(b, &c, BW_SUCCESS), BW_E_STALE);
  assert_status(bw_breaker_release(b, &d, BW_SUCCESS), BW_E_STALE);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

/* Stuck means every probe slot is taken: while a slot is free the next
 * caller becomes a probe, which is progress. Acquire and poll agree. */
static void a_free_probe_slot_is_progress_not_stuck(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = stuck_breaker(e, 2, 1);
  bw_permit_t stuck, second, q;
  bw_breaker_stats_t s;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  stuck = bwt_acquire(b); /* 1 of 2 slots, never comes back */
  bwt_advance_ms(e, 5000);
  second = bwt_acquire(b); /* the free slot admits a probe */
  assert_int_equal(second.kind, BW_PERMIT_PROBE);
  s = bwt_stats(b);
  assert_state(s.state, BW_HALF_OPEN);
  assert_u64_eq(s.half_open_in_flight, 2);
  assert_u64_eq(s.opens, 1);
  bwt_advance_ms(e, 4999);
  memset(&q, 0, sizeof(q));
  assert_status(bw_breaker_acquire(b, &q), BW_E_OPEN); /* full, not stuck */
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  bwt_advance_ms(e, 1);
  assert_status(bw_breaker_acquire(b, &q), BW_E_OPEN); /* full and stuck */
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 2);
  assert_i64_eq(s.retry_in_ms, 2000);
  assert_event(bwt_transition_at(e->rec, 2), BW_EV_CIRCUIT_OPENED,
               "half-open probes stuck for 5000 ms");
  assert_status(bw_breaker_release(b, &stuck, BW_SUCCESS), BW_E_STALE);
  assert_status(bw_breaker_release(b, &second, BW_SUCCESS), BW_E_STALE);
}

static void poll_leaves_half_open_alone_while_a_probe_slot_is_free(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = stuck_breaker(e, 2, 1);
  bw_permit_t stuck, second;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  stuck = bwt_acquire(b);
  bwt_advance_ms(e, 50000);
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  second = bwt_acquire(b);
  assert_int_equal(second.kind, BW_PERMIT_PROBE);
  bwt_advance_ms(e, 5000);
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 2), BW_EV_CIRCUIT_OPENED,
               "half-open probes stuck for 5000 ms");
  assert_status(bw_breaker_release(b, &stuck, BW_SUCCESS), BW_E_STALE);
  assert_status(bw_breaker_release(b, &second, BW_SUCCESS), BW_E_STALE);
}

static void half_open_without_probes_in_flight_is_never_stuck(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = stuck_breaker(e, 1, 1);
  bw_permit_t p;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  bwt_advance_ms(e, 50000);
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_int_equal(bwt_count(e->rec, BW_EV_CIRCUIT_OPENED), 1);
}

/* ==== count window
 * ================================================================== */

static bw_breaker_t *count_window(bwt_env_t *e, uint32_t size, uint32_t minimum,
                                  double ratio, int64_t slow_call_ms) {
  bw_breaker_config_t cfg;
  bwt_config(e, &cfg, "svc");
  cfg.trip_rule = BW_TRIP_COUNT_WINDOW;
  cfg.window_size = size;
  cfg.minimum_calls = minimum;
  cfg.failure_ratio = ratio;
  cfg.slow_call_ms = slow_call_ms;
  return bwt_breaker(e, &cfg);
}

static void count_window_opens_when_the_failure_ratio_is_reached(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  bw_breaker_stats_t s;
  const bwt_event_t *ev;

  bwt_calls(b, BW_SUCCESS, 4);
  bwt_calls(b, BW_FAILURE, 5); /* 9 calls: below minimum_calls */
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 9);
  assert_u64_eq(s.window_failures, 5);
  assert_dbl_eq(s.window_failure_ratio, 5.0 / 9.0, 1e-12);

  bwt_call(b, BW_FAILURE); /* 6 of 10 */
  assert_state(bw_breaker_state(b), BW_OPEN);
  ev = bwt_transition_at(e->rec, 0);
  assert_event(ev, BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.60 >= 0.50 over the last 10 calls");
  assert_field_int(ev, 0, "break_ms", 30000);
  assert_field_str(ev, 1, "from", "closed");
}

static void count_window_below_minimum_calls_never_opens(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 20, 10, 0.5, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 9);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 9);
  assert_u64_eq(s.window_failures, 9);
  assert_dbl_eq(s.window_failure_ratio, 1.0, 0);
  assert_int_equal(e->rec->count, 0);
}

static void count_window_ratio_is_inclusive_and_the_window_slides(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_SUCCESS, 6);
  bwt_calls(b, BW_FAILURE, 4);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 10);
  assert_u64_eq(s.window_failures, 4);
  assert_dbl_eq(s.window_failure_ratio, 0.4, 1e-12);

  bwt_call(b, BW_FAILURE); /* the oldest success slides out: 5 of 10 */
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.50 >= 0.50 over the last 10 calls");
}

static void count_window_a_success_never_opens(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 9);
  bwt_call(b, BW_SUCCESS); /* 10 calls, 9 failures: but a success decides */
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 10);
  assert_u64_eq(s.window_failures, 9);
  assert_int_equal(e->rec->count, 0);

  bwt_call(b, BW_FAILURE); /* oldest failure out, this one in: 9 of 10 */
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.90 >= 0.50 over the last 10 calls");
}

/* The window rules decide when the evidence that can open a breaker arrives:
 * a failure (or a slow call). A success that is not slow never opens, even the
 * one that brings the window to minimum_calls with the ratio already past the
 * threshold (Polly's rule; resilience4j would open on that fifth call).
 * F,F,F,S,S at 50 % with 5 minimum calls stays CLOSED; the next failure opens
 * it. */
static void
a_count_window_breaker_stays_closed_when_a_success_reaches_the_minimum(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 5, 0.5, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 3); /* 3 calls: below minimum_calls */
  bwt_calls(b, BW_SUCCESS, 2); /* 5 calls, 3 failures: 0.6 >= 0.5 */
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 5);
  assert_u64_eq(s.window_failures, 3);
  assert_dbl_eq(s.window_failure_ratio, 0.6, 1e-12);
  assert_u64_eq(s.opens, 0);
  assert_int_equal(e->rec->count, 0);

  bwt_call(b, BW_FAILURE); /* the next failure: 4 of 6 */
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 1);
  assert_int_equal(bwt_transition_count(e->rec), 1);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.67 >= 0.50 over the last 6 calls");
}

static void count_window_holds_only_the_last_window_size_outcomes(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 4, 4, 0.75, 0);
  bw_breaker_stats_t s;

  bwt_call(b, BW_FAILURE);
  bwt_calls(b, BW_SUCCESS, 4);
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 4);
  assert_u64_eq(s.window_failures, 0);
  assert_dbl_eq(s.window_failure_ratio, 0.0, 0);
  assert_u64_eq(s.calls, 5);
  assert_u64_eq(s.failures, 1);

  bwt_calls(b, BW_FAILURE, 2); /* [S S F F]: 0.5 */
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE); /* [S F F F]: 0.75 */
  assert_state(bw_breaker_state(b), BW_OPEN);
}

static void count_window_ignored_outcomes_do_not_enter(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 9);
  bwt_calls(b, BW_IGNORED, 5);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 9);
  assert_u64_eq(s.ignored, 5);
  assert_u64_eq(s.calls, 14);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 1.00 >= 0.50 over the last 10 calls");
}

/* With window_size 100 and minimum_calls 20, the breaker may open on 20
 * calls; the reason then tells how many calls the ratio was taken over. */
static void count_window_reason_names_the_calls_in_the_window(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 100, 20, 0.5, 0);

  bwt_calls(b, BW_FAILURE, 19);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_u64_eq(bwt_stats(b).window_calls, 20);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 1.00 >= 0.50 over the last 20 calls");
}

static void count_window_is_cleared_when_the_breaker_closes(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  bw_permit_t p;
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 10);
  assert_state(bw_breaker_state(b), BW_OPEN);
  bwt_advance_ms(e, 30000);
  p = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 0);
  assert_u64_eq(s.window_failures, 0);

  bwt_calls(b, BW_FAILURE, 9); /* minimum_calls counts afresh */
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

/* The window lives from one close (or reset) to the next: opening does not
 * clear it, and neither do isolate and disable. While the breaker is not
 * CLOSED nothing enters it (probes decide half-open on their own). Only a
 * close or a reset empties it; the time window also forgets by age. */
static void the_window_is_kept_until_the_breaker_closes_or_is_reset(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  bw_breaker_stats_t s;
  bw_permit_t p;

  bwt_calls(b, BW_SUCCESS, 4);
  bwt_calls(b, BW_FAILURE, 6); /* 6 of 10: opens */
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.window_calls, 10);
  assert_u64_eq(s.window_failures, 6);

  bwt_advance_ms(e, 30000);
  p = bwt_acquire(b); /* HALF_OPEN: the probe fails, OPEN again */
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.window_calls, 10); /* the probe did not enter */
  assert_u64_eq(s.window_failures, 6);

  bw_breaker_isolate(b);
  assert_u64_eq(bwt_stats(b).window_calls, 10);
  bw_breaker_disable(b);
  bwt_calls(b, BW_FAILURE, 3); /* DISABLED: counted in totals only */
  s = bwt_stats(b);
  assert_state(s.state, BW_DISABLED);
  assert_u64_eq(s.window_calls, 10);
  assert_u64_eq(s.window_failures, 6);
  assert_u64_eq(s.failures, 10);

  bw_breaker_reset(b);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 0);
  assert_u64_eq(s.window_failures, 0);
}

/* ==== time window
 * ================================================================== */

static bw_breaker_t *time_window(bwt_env_t *e, const char *name,
                                 uint32_t minimum, int64_t slow_call_ms) {
  bw_breaker_config_t cfg;
  bwt_config(e, &cfg, name);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.failure_ratio = 0.5;
  cfg.window_ms = 10000;
  cfg.window_buckets = 10;
  cfg.minimum_calls = minimum;
  cfg.break_ms = 15000;
  cfg.slow_call_ms = slow_call_ms;
  return bwt_breaker(e, &cfg);
}

/* The Polly lab: FailureRatio 0.5, SamplingDuration 10 s, MinimumThroughput 20,
 * BreakDuration 15 s. 22 calls over 8.4 s, 12 of them failing: opens at the
 * 22nd (the first failure with >= 20 calls and a ratio >= 0.5). */
static void polly_lab_opens_at_22_calls_with_12_failures(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "gateway_pagamento", 20, 0);
  bw_breaker_stats_t s;
  bw_permit_t p;
  const bwt_event_t *ev;
  int k;

  for (k = 0; k < 21; k++) {
    if (k > 0) bwt_advance_ms(e, 400);
    bwt_call(b, k < 11 ? BW_FAILURE : BW_SUCCESS);
    assert_state(bw_breaker_state(b), BW_CLOSED);
  }
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 21);
  assert_u64_eq(s.window_failures, 11);

  bwt_advance_ms(e, 400); /* T0 + 8.4 s */
  bwt_call(b, BW_FAILURE);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.window_calls, 22);
  assert_u64_eq(s.window_failures, 12);
  assert_dbl_eq(s.window_failure_ratio, 12.0 / 22.0, 1e-12);
  assert_i64_eq(s.retry_in_ms, 15000);
  assert_int_equal(bwt_transition_count(e->rec), 1);
  ev = bwt_transition_at(e->rec, 0);
  assert_event(ev, BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.55 >= 0.50 over 10000 ms (22 calls)");
  assert_string_equal(ev->name, "gateway_pagamento");
  assert_field_int(ev, 0, "break_ms", 15000);
  assert_field_str(ev, 1, "from", "closed");

  /* BrokenCircuitException for 15 s: nothing touches the network. */
  assert_rejected(b);
  bwt_advance_ns(e, 15 * SEC - 1);
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1);
  bwt_advance_ns(e, 1);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_event(bwt_transition_at(e->rec, 1), BW_EV_CIRCUIT_HALF_OPENED,
               "break of 15000 ms elapsed");
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 0);
}

/* The Polly lab's documented pitfall: on calm traffic 20 calls in 10 s never
 * happen, and the breaker never opens although every call fails. */
static void polly_lab_calm_traffic_below_minimum_calls_never_opens(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "gateway_pagamento", 20, 0);
  bw_breaker_stats_t s;
  int k;

  for (k = 0; k < 19; k++) {
    if (k > 0) bwt_advance_ms(e, 500);
    bwt_call(b, BW_FAILURE);
  }
  s = bwt_stats(b); /* T0 + 9 s: all 19 in the window */
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 19);
  assert_u64_eq(s.window_failures, 19);
  assert_dbl_eq(s.window_failure_ratio, 1.0, 0);
  assert_int_equal(e->rec->count, 0);
}

static void polly_lab_calm_traffic_failing_forever_never_opens(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "gateway_pagamento", 20, 0);
  bw_breaker_stats_t s;
  int k;

  /* One call every 600 ms: at most 17 calls in any 10-bucket window. */
  for (k = 0; k < 100; k++) {
    if (k > 0) bwt_advance_ms(e, 600);
    bwt_call(b, BW_FAILURE);
  }
  s = bwt_stats(b); /* T0 + 59.4 s: buckets 50..59 hold calls 84..99 */
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.failures, 100);
  assert_u64_eq(s.window_calls, 16);
  assert_u64_eq(s.window_failures, 16);
  assert_int_equal(e->rec->count, 0);
}

static void time_window_counts_outcomes_up_to_the_oldest_bucket(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 20, 0);

  bwt_calls(b, BW_FAILURE, 19); /* bucket 0 */
  bwt_advance_ms(e, 9999);      /* bucket 9: bucket 0 still counts */
  assert_u64_eq(bwt_stats(b).window_calls, 19);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 1.00 >= 0.50 over 10000 ms (20 calls)");
}

/* The window's buckets are numbered from the clock's reading: a reading
 * whose bucket index is 2^31 or more (mod 2^32) counts like any other. */
static void time_window_counts_at_any_clock_reading(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 20, 0);

  bw_clock_manual_set(e->clock, (INT64_C(1) << 31) * BW_NS_PER_S);
  bwt_calls(b, BW_FAILURE, 19);
  assert_u64_eq(bwt_stats(b).window_calls, 19);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

/* The window-word rules of ext.h, which the shared-memory breaker uses. */
static void window_words_count_recycle_and_saturate(void **state) {
  uint64_t next = 0;
  (void)state;
  /* an empty word starts counting in any bucket */
  assert_true(bw_window_word_next(0, 7, &next));
  assert_u64_eq(next, (UINT64_C(7) << 32) | 1);
  assert_true(bw_window_word_next(0, UINT32_C(0x80000000), &next));
  assert_u64_eq(next, (UINT64_C(0x80000000) << 32) | 1);
  /* the same bucket adds one; a newer one recycles the word */
  assert_true(bw_window_word_next((UINT64_C(7) << 32) | 5, 7, &next));
  assert_u64_eq(next, (UINT64_C(7) << 32) | 6);
  assert_true(bw_window_word_next((UINT64_C(7) << 32) | 5, 9, &next));
  assert_u64_eq(next, (UINT64_C(9) << 32) | 1);
  /* an older bucket and a saturated count write nothing */
  assert_false(bw_window_word_next((UINT64_C(9) << 32) | 1, 8, &next));
  assert_false(bw_window_word_next((UINT64_C(9) << 32) | UINT32_MAX, 9, &next));
  /* a word counts while its bucket is one of the last `buckets` */
  assert_int_equal(bw_window_word_count((UINT64_C(7) << 32) | 5, 7, 10), 5);
  assert_int_equal(bw_window_word_count((UINT64_C(7) << 32) | 5, 16, 10), 5);
  assert_int_equal(bw_window_word_count((UINT64_C(7) << 32) | 5, 17, 10), 0);
  assert_int_equal(bw_window_word_count((UINT64_C(7) << 32) | 5, 6, 10), 0);
  assert_int_equal(bw_window_word_count(0, 0, 10), 0);
}

static void time_window_forgets_outcomes_older_than_the_window(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 20, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 19); /* bucket 0 */
  bwt_advance_ms(e, 10000);     /* bucket 10: bucket 0 is out */
  bwt_call(b, BW_FAILURE);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 1);
  assert_u64_eq(s.window_failures, 1);
  assert_u64_eq(s.failures, 20);
  assert_int_equal(e->rec->count, 0);
}

/* Buckets are aligned to multiples of the bucket length (1000 ms) from 0: an
 * outcome released at T+999 ms lives in the bucket [T, T+1000) and leaves the
 * window at T+10000 ms, 9001 ms after its release. */
static void time_window_buckets_are_aligned_to_the_bucket_length(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b;
  bw_breaker_stats_t s;

  b = time_window(e, "svc", 20, 0);
  bwt_advance_ms(e, 999); /* T0 + 999 ms */
  bwt_calls(b, BW_FAILURE, 19);
  bwt_advance_ms(e, 9000); /* T0 + 9999 ms: same window */
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);

  b = time_window(e, "svc", 20, 0); /* a fresh breaker */
  bwt_advance_ms(e, 20001);         /* T0 + 30000 ms: a bucket boundary */
  bwt_advance_ms(e, 999);           /* T1 + 999 ms */
  bwt_calls(b, BW_FAILURE, 19);
  bwt_advance_ms(e, 9001); /* T1 + 10000 ms: bucket T1 is out */
  bwt_call(b, BW_FAILURE);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 1);
}

static void time_window_stats_follow_the_clock(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 20, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 5); /* bucket 0 */
  bwt_advance_ms(e, 5000);
  bwt_calls(b, BW_SUCCESS, 5); /* bucket 5 */
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 10);
  assert_u64_eq(s.window_failures, 5);
  bwt_advance_ms(e, 5000); /* bucket 10: bucket 0 is out, nothing released */
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 5);
  assert_u64_eq(s.window_failures, 0);
  assert_dbl_eq(s.window_failure_ratio, 0.0, 0);
  bwt_advance_ms(e, 5000); /* bucket 15: everything is out */
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 0);
  assert_dbl_eq(s.window_failure_ratio, 0.0, 0);
}

/* Small buckets (window_ms 10, 10 buckets of 1 ms) after a long quiet spell:
 * 2^32 ms later (~49.7 days) the old outcomes are long out of the window and
 * must not come back. */
static void time_window_forgets_outcomes_after_a_long_quiet_spell(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_breaker_stats_t s;

  bwt_config(e, &cfg, "svc");
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.window_ms = 10;
  cfg.window_buckets = 10;
  cfg.minimum_calls = 20;
  b = bwt_breaker(e, &cfg);
  bwt_calls(b, BW_FAILURE, 19);
  assert_u64_eq(bwt_stats(b).window_calls, 19);

  bwt_advance_ms(e, INT64_C(4294967296));
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 0);
  bwt_call(b, BW_FAILURE);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 1);
}

static void time_window_a_success_never_opens(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 20, 0);

  bwt_calls(b, BW_FAILURE, 10);
  bwt_calls(b, BW_SUCCESS, 10); /* 20 calls, ratio 0.5: but successes */
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE); /* 11 of 21 */
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.52 >= 0.50 over 10000 ms (21 calls)");
}

/* The same boundary on the time window: F,F,F,S,S at 50 % with 5 minimum
 * calls stays CLOSED after the fifth call; the next failure opens it. */
static void
a_time_window_breaker_stays_closed_when_a_success_reaches_the_minimum(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 5, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 3);
  bwt_advance_ms(e, 1500); /* another bucket, same window */
  bwt_calls(b, BW_SUCCESS, 2);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 5);
  assert_u64_eq(s.window_failures, 3);
  assert_dbl_eq(s.window_failure_ratio, 0.6, 1e-12);
  assert_int_equal(e->rec->count, 0);

  bwt_advance_ms(e, 1500);
  bwt_call(b, BW_FAILURE); /* 4 of 6 */
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_int_equal(bwt_transition_count(e->rec), 1);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.67 >= 0.50 over 10000 ms (6 calls)");
  assert_i64_eq(bwt_transition_at(e->rec, 0)->mono_ns, BWT_T0_NS + 3000 * MS);
}

static void time_window_ignored_outcomes_do_not_enter(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 20, 0);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_FAILURE, 19);
  bwt_calls(b, BW_IGNORED, 10);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 19);
  assert_u64_eq(s.ignored, 10);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 1.00 >= 0.50 over 10000 ms (20 calls)");
}

/* ==== slow calls
 * ==================================================================== */

static void slow_calls_open_a_count_window_breaker(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 1000);
  bw_breaker_stats_t s;
  int i;

  for (i = 0; i < 10; i++) {
    bw_permit_t p = bwt_acquire(b);
    bwt_advance_ms(e, 1000);
    assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
    if (i == 8) {
      s = bwt_stats(b);
      assert_state(s.state, BW_CLOSED);
      assert_u64_eq(s.slow, 9);
      assert_u64_eq(s.window_slow, 9);
      assert_dbl_eq(s.window_slow_ratio, 1.0, 0);
      assert_u64_eq(s.window_failures, 0);
    }
  }
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.slow, 10);
  assert_u64_eq(s.successes, 10);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "slow call ratio 1.00 >= 1.00 over the last 10 calls");
  assert_field_str(bwt_transition_at(e->rec, 0), 1, "from", "closed");
}

static void slow_calls_open_a_time_window_breaker(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = time_window(e, "svc", 20, 1000);
  bw_permit_t p[20];
  bw_breaker_stats_t s;
  int i;

  for (i = 0; i < 20; i++)
    p[i] = bwt_acquire(b);
  bwt_advance_ms(e, 1000);
  for (i = 0; i < 19; i++)
    assert_status(bw_breaker_release(b, &p[i], BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.window_calls, 19);
  assert_u64_eq(s.window_slow, 19);
  assert_status(bw_breaker_release(b, &p[19], BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.slow, 20);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "slow call ratio 1.00 >= 1.00 over 10000 ms (20 calls)");
  assert_field_int(bwt_transition_at(e->rec, 0), 0, "break_ms", 15000);
}

static void slow_call_threshold_is_inclusive(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 1000);
  bw_permit_t p;
  bw_breaker_stats_t s;

  p = bwt_acquire(b);
  bwt_advance_ns(e, 1000 * MS - 1);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_u64_eq(bwt_stats(b).slow, 0);

  p = bwt_acquire(b);
  bwt_advance_ns(e, 1000 * MS);
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);
  s = bwt_stats(b);
  assert_u64_eq(s.slow, 1);
  assert_u64_eq(s.window_slow, 1);
  assert_u64_eq(s.window_failures, 1); /* slow and failed: both */
  assert_u64_eq(s.window_calls, 2);
}

static void ignored_outcomes_are_never_slow(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 1000);
  bw_permit_t p = bwt_acquire(b);
  bw_breaker_stats_t s;

  bwt_advance_ms(e, 5000);
  assert_status(bw_breaker_release(b, &p, BW_IGNORED), BW_OK);
  s = bwt_stats(b);
  assert_u64_eq(s.slow, 0);
  assert_u64_eq(s.window_slow, 0);
  assert_u64_eq(s.window_calls, 0);
}

static void slow_call_detection_is_off_when_slow_call_ms_is_zero(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  int i;

  for (i = 0; i < 10; i++) {
    bw_permit_t p = bwt_acquire(b);
    bwt_advance_ms(e, 3600 * 1000);
    assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  }
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_stats(b).slow, 0);
  assert_u64_eq(bwt_stats(b).window_slow, 0);
}

/* "After a FAILURE (or a slow call)": a slow success also evaluates the
 * failure ratio. */
static void a_slow_success_evaluates_the_failure_ratio(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 1000);
  bw_permit_t p;

  bwt_calls(b, BW_FAILURE, 5);
  bwt_calls(b, BW_SUCCESS, 4);
  p = bwt_acquire(b);
  bwt_advance_ms(e, 1000);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "failure ratio 0.50 >= 0.50 over the last 10 calls");
}

static void a_slow_probe_success_counts_as_a_probe_failure(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 1000);
  bw_permit_t p;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;

  bwt_calls(b, BW_FAILURE, 10);
  assert_state(bw_breaker_state(b), BW_OPEN);
  bwt_advance_ms(e, 30000);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  bwt_advance_ms(e, 1000);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 2);
  assert_u64_eq(s.closes, 0);
  assert_i64_eq(s.retry_in_ms, 30000);
  ev = bwt_transition_at(e->rec, 2);
  assert_int_equal(ev->type, BW_EV_CIRCUIT_OPENED);
  assert_field_int(ev, 0, "break_ms", 30000);
  assert_field_str(ev, 1, "from", "half_open");

  /* A fast probe closes. */
  bwt_advance_ms(e, 30000);
  p = bwt_acquire(b);
  bwt_advance_ns(e, 1000 * MS - 1);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);

  /* It counts as a probe failure, and the reason says why. */
  assert_event(ev, BW_EV_CIRCUIT_OPENED,
               "probe slow in half-open (1000 ms >= slow_call_ms 1000)");
}

/* ==== operator controls
 * ============================================================ */

static void isolate_rejects_every_call_until_reset(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_breaker_stats_t s;
  const bwt_event_t *ev;
  bw_permit_t p;

  bwt_call(b, BW_SUCCESS);
  bw_breaker_isolate(b);
  assert_state(bw_breaker_state(b), BW_ISOLATED);
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), -1);
  ev = bwt_transition_at(e->rec, 0);
  assert_event(ev, BW_EV_CIRCUIT_ISOLATED, "operator");
  assert_int_equal(ev->field_count, 1);
  assert_field_str(ev, 0, "from", "closed");

  bwt_advance_ms(e, 3600 * 1000); /* an hour: no break ends an isolation */
  bw_breaker_poll(b);
  assert_state(bw_breaker_state(b), BW_ISOLATED);
  assert_rejected(b);
  s = bwt_stats(b);
  assert_state(s.state, BW_ISOLATED);
  assert_i64_eq(s.retry_in_ms, -1);
  assert_u64_eq(s.rejected, 2);

  bw_breaker_reset(b);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  ev = bwt_transition_at(e->rec, 1);
  assert_event(ev, BW_EV_CIRCUIT_RESET, "operator");
  assert_field_str(ev, 0, "from", "isolated");
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_NORMAL);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 0);
  assert_int_equal(bwt_transition_count(e->rec), 2);
}

static void isolating_makes_permits_in_flight_stale(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 30000);
  bw_permit_t p = bwt_acquire(b);

  bw_breaker_isolate(b);
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_E_STALE);
  assert_state(bw_breaker_state(b), BW_ISOLATED);
  assert_u64_eq(bwt_stats(b).stale, 1);
  assert_u64_eq(bwt_stats(b).opens, 0);
}

static void reset_clears_counts_windows_and_growth_but_keeps_totals(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 2;
  cfg.break_ms = 1000;
  cfg.break_multiplier = 2.0;
  cfg.max_break_ms = 8000;
  b = bwt_breaker(e, &cfg);

  bwt_calls(b, BW_FAILURE, 2);   /* open, 1000 ms */
  probe_fails_after(e, b, 1000); /* reopen, 2000 ms */
  assert_i64_eq(bwt_stats(b).current_break_ms, 2000);

  bw_breaker_reset(b);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_i64_eq(s.current_break_ms, 1000);
  assert_u64_eq(s.consecutive_failures, 0);
  assert_u64_eq(s.failures, 3); /* totals are kept */
  assert_u64_eq(s.calls, 3);
  assert_u64_eq(s.opens, 2);
  assert_i64_eq(s.retry_in_ms, 0);
  ev = bwt_transition_at(e->rec, 3);
  assert_event(ev, BW_EV_CIRCUIT_RESET, "operator");
  assert_field_str(ev, 0, "from", "open");

  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_field_int(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, 2), 0, "break_ms",
                   1000);

  /* A count window is emptied too. */
  b = count_window(e, 10, 10, 0.5, 0);
  bwt_calls(b, BW_FAILURE, 9);
  bw_breaker_reset(b);
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 0);
  assert_u64_eq(s.window_failures, 0);
  assert_u64_eq(s.failures, 9);
  bwt_calls(b, BW_FAILURE, 9);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

/* Operator calls are commands, not state changes: each emits its event and
 * bumps the generation even when the breaker is already in the target state
 * (a reset of a CLOSED breaker clears its window and makes permits in flight
 * stale). Switching metrics-only to the value it has emits nothing. */
static void an_operator_call_emits_its_event_even_when_nothing_changes(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  uint64_t g0 = bwt_stats(b).generation;
  bw_permit_t p;

  bwt_calls(b, BW_FAILURE, 2);
  p = bwt_acquire(b);
  bw_breaker_reset(b); /* CLOSED -> CLOSED */
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_stats(b).generation, g0 + 1);
  assert_u64_eq(bwt_stats(b).consecutive_failures, 0);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_RESET, "operator");
  assert_field_str(bwt_transition_at(e->rec, 0), 0, "from", "closed");
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_E_STALE);

  bw_breaker_isolate(b);
  bw_breaker_isolate(b); /* ISOLATED -> ISOLATED */
  assert_u64_eq(bwt_stats(b).generation, g0 + 3);
  assert_event(bwt_transition_at(e->rec, 2), BW_EV_CIRCUIT_ISOLATED,
               "operator");
  assert_field_str(bwt_transition_at(e->rec, 2), 0, "from", "isolated");

  bw_breaker_disable(b);
  bw_breaker_disable(b); /* DISABLED -> DISABLED */
  assert_u64_eq(bwt_stats(b).generation, g0 + 5);
  assert_event(bwt_transition_at(e->rec, 4), BW_EV_CIRCUIT_DISABLED,
               "operator");
  assert_field_str(bwt_transition_at(e->rec, 4), 0, "from", "disabled");

  bw_breaker_set_metrics_only(b, false); /* already off: no event */
  assert_int_equal(e->rec->count, 5);
  assert_int_equal(bwt_transition_count(e->rec), 5);
}

static void disable_always_admits_and_never_trips(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_breaker_stats_t s;
  const bwt_event_t *ev;
  bw_permit_t p;

  bw_breaker_disable(b);
  assert_state(bw_breaker_state(b), BW_DISABLED);
  ev = bwt_transition_at(e->rec, 0);
  assert_event(ev, BW_EV_CIRCUIT_DISABLED, "operator");
  assert_field_str(ev, 0, "from", "closed");

  bwt_calls(b, BW_FAILURE, 100);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_NORMAL);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_DISABLED);
  assert_u64_eq(s.failures, 100);
  assert_u64_eq(s.successes, 1);
  assert_u64_eq(s.calls, 101);
  assert_u64_eq(s.opens, 0);
  assert_u64_eq(s.rejected, 0);
  assert_i64_eq(s.retry_in_ms, 0);
  assert_int_equal(bwt_transition_count(e->rec), 1);

  bw_breaker_reset(b);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_field_str(bwt_transition_at(e->rec, 1), 0, "from", "disabled");
  bwt_calls(b, BW_FAILURE, 4);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

static void disabling_an_open_breaker_admits_at_once(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_permit_t p;

  bwt_calls(b, BW_FAILURE, 5);
  bw_breaker_disable(b);
  assert_field_str(bwt_transition_at(e->rec, 1), 0, "from", "open");
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_NORMAL);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 0);
}

/* ==== metrics-only
 * =================================================================== */

static void metrics_only_runs_the_state_machine_but_never_rejects(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_breaker_stats_t s;
  bw_permit_t pt, probe, pt2;
  uint32_t consecutive_at_open;

  bwt_config(e, &cfg, "shadow");
  cfg.failure_threshold = 3;
  cfg.break_ms = 10000;
  cfg.metrics_only = true;
  b = bwt_breaker(e, &cfg);
  assert_true(bwt_stats(b).metrics_only);

  bwt_calls(b, BW_FAILURE, 3);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "3 consecutive failures (failure_threshold 3)");
  consecutive_at_open = bwt_stats(b).consecutive_failures;

  /* Would be rejected: admitted as a passthrough. */
  memset(&pt, 0, sizeof(pt));
  assert_status(bw_breaker_acquire(b, &pt), BW_OK);
  assert_int_equal(pt.kind, BW_PERMIT_PASSTHROUGH);
  s = bwt_stats(b);
  assert_u64_eq(s.shadow_rejected, 1);
  assert_u64_eq(s.rejected, 0);
  assert_u64_eq(s.admitted, 4);

  /* Passthrough outcomes count in the totals only. */
  assert_status(bw_breaker_release(b, &pt, BW_FAILURE), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.failures, 4);
  assert_u64_eq(s.stale, 0);
  assert_u64_eq(s.consecutive_failures, consecutive_at_open);
  assert_u64_eq(s.opens, 1);
  pt = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &pt, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_int_equal(bwt_transition_count(e->rec), 1);

  /* The same transitions as a normal breaker. */
  bwt_advance_ms(e, 10000);
  probe = bwt_acquire(b);
  assert_int_equal(probe.kind, BW_PERMIT_PROBE);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  pt2 = bwt_acquire(b); /* beyond the probe cap */
  assert_int_equal(pt2.kind, BW_PERMIT_PASSTHROUGH);
  s = bwt_stats(b);
  assert_u64_eq(s.shadow_rejected, 3);
  assert_u64_eq(s.rejected, 0);
  assert_u64_eq(s.half_open_in_flight, 1);
  assert_status(bw_breaker_release(b, &pt2, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN); /* not a probe */
  assert_status(bw_breaker_release(b, &probe, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);

  assert_int_equal(bwt_transition_count(e->rec), 3);
  assert_event(bwt_transition_at(e->rec, 1), BW_EV_CIRCUIT_HALF_OPENED,
               "break of 10000 ms elapsed");
  assert_int_equal(bwt_transition_at(e->rec, 2)->type, BW_EV_CIRCUIT_CLOSED);
  s = bwt_stats(b);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.half_opens, 1);
  assert_u64_eq(s.closes, 1);
  assert_u64_eq(s.calls, s.successes + s.failures + s.ignored);
}

static void metrics_only_can_be_switched_at_runtime(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 3, 10000);
  bw_breaker_stats_t s;
  bw_permit_t p;

  bwt_calls(b, BW_FAILURE, 3);
  assert_rejected(b);
  bw_breaker_set_metrics_only(b, true);
  assert_true(bwt_stats(b).metrics_only);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PASSTHROUGH);
  assert_state(bw_breaker_state(b), BW_OPEN);
  bw_breaker_set_metrics_only(b, false);
  assert_false(bwt_stats(b).metrics_only);
  assert_rejected(b);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.rejected, 2);
  assert_u64_eq(s.shadow_rejected, 1);
  assert_u64_eq(s.successes, 1);
  assert_int_equal(bwt_transition_count(e->rec), 1);
}

static void metrics_only_passes_through_an_isolated_breaker(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t p;

  bwt_config(e, &cfg, "svc");
  cfg.metrics_only = true;
  b = bwt_breaker(e, &cfg);
  bw_breaker_isolate(b);
  assert_state(bw_breaker_state(b), BW_ISOLATED);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PASSTHROUGH);
  assert_u64_eq(bwt_stats(b).shadow_rejected, 1);
  assert_u64_eq(bwt_stats(b).rejected, 0);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_ISOLATED,
               "operator");
}

/* ==== events
 * ====================================================================== */

static void each_transition_emits_exactly_one_event_and_bumps_the_generation(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "payment_api", 2, 1000);
  static const struct {
    bw_event_type_t type;
    const char *from;
  } expected[] = {
      {BW_EV_CIRCUIT_OPENED, "closed"},    {BW_EV_CIRCUIT_HALF_OPENED, "open"},
      {BW_EV_CIRCUIT_CLOSED, "half_open"}, {BW_EV_CIRCUIT_ISOLATED, "closed"},
      {BW_EV_CIRCUIT_RESET, "isolated"},   {BW_EV_CIRCUIT_DISABLED, "closed"},
      {BW_EV_CIRCUIT_RESET, "disabled"},
  };
  uint64_t g0 = bwt_stats(b).generation;
  bw_breaker_stats_t s;
  bw_permit_t p;
  size_t i;

  bwt_calls(b, BW_FAILURE, 2);
  assert_u64_eq(bwt_stats(b).generation, g0 + 1);
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(b);
  assert_u64_eq(bwt_stats(b).generation, g0 + 2);
  assert_u64_eq(p.generation, g0 + 2);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_u64_eq(bwt_stats(b).generation, g0 + 3);
  s = bwt_stats(b);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.half_opens, 1);
  assert_u64_eq(s.closes, 1);
  bw_breaker_isolate(b);
  assert_u64_eq(bwt_stats(b).generation, g0 + 4);
  bw_breaker_reset(b);
  assert_u64_eq(bwt_stats(b).generation, g0 + 5);
  bw_breaker_disable(b);
  assert_u64_eq(bwt_stats(b).generation, g0 + 6);
  bw_breaker_reset(b);
  assert_u64_eq(bwt_stats(b).generation, g0 + 7);

  assert_int_equal(e->rec->count, 7); /* no rejections: no summaries */
  for (i = 0; i < 7; i++) {
    const bwt_event_t *ev = bwt_event_at(e->rec, i);
    assert_int_equal(ev->type, expected[i].type);
    assert_string_equal(ev->name, "payment_api");
    assert_false(ev->has_context);
    assert_field_str(ev, ev->type == BW_EV_CIRCUIT_OPENED ? 1 : 0, "from",
                     expected[i].from);
    assert_i64_eq(ev->wall_ns - BWT_WALL0_NS, ev->mono_ns - BWT_T0_NS);
  }
}

static const bw_kv_t request_items[] = {{"request_id", "3e7a9c10"},
                                        {"tenant", "acme"}};
static const bw_context_t request_ctx = {request_items, 2};
static const bw_kv_t order_items[] = {{"order_id", "A-17"}};
static const bw_context_t order_ctx = {order_items, 1};

static void events_carry_the_threads_context(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 1000);
  const bw_context_t *prev;
  const bwt_event_t *ev;
  bw_permit_t p;

  prev = bw_context_set(&request_ctx);
  assert_ptr_equal(bw_context_current(), &request_ctx);
  bwt_call(b, BW_FAILURE); /* opens: caused by this thread's release */
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(b); /* half-opens: caused by this thread's acquire */
  assert_ptr_equal(bw_context_set(prev), &request_ctx);

  ev = bwt_transition_at(e->rec, 0);
  assert_true(ev->has_context);
  assert_int_equal(ev->context_count, 2);
  assert_string_equal(ev->context[0].key, "request_id");
  assert_string_equal(ev->context[0].value, "3e7a9c10");
  assert_string_equal(ev->context[1].key, "tenant");
  assert_string_equal(ev->context[1].value, "acme");
  ev = bwt_transition_at(e->rec, 1);
  assert_true(ev->has_context);
  assert_int_equal(ev->context_count, 2);

  /* Without a context, events carry none. */
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  ev = bwt_transition_at(e->rec, 2);
  assert_int_equal(ev->type, BW_EV_CIRCUIT_CLOSED);
  assert_false(ev->has_context);
  restore_context(prev);
}

static void a_permits_context_overrides_the_threads(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 1000);
  const bw_context_t *prev;
  const bwt_event_t *ev;
  bw_permit_t p;

  prev = bw_context_set(&request_ctx);
  p = bwt_acquire(b);
  p.context = &order_ctx;
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);
  restore_context(prev);

  ev = bwt_transition_at(e->rec, 0);
  assert_int_equal(ev->type, BW_EV_CIRCUIT_OPENED);
  assert_true(ev->has_context);
  assert_int_equal(ev->context_count, 1);
  assert_string_equal(ev->context[0].key, "order_id");
  assert_string_equal(ev->context[0].value, "A-17");

  /* A permit context works with no thread context at all. */
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(b);
  p.context = &order_ctx;
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  ev = bwt_transition_at(e->rec, 2);
  assert_int_equal(ev->type, BW_EV_CIRCUIT_CLOSED);
  assert_true(ev->has_context);
  assert_string_equal(ev->context[0].value, "A-17");
  assert_false(bwt_transition_at(e->rec, 1)->has_context); /* the acquire */
}

typedef struct reader_s {
  bw_breaker_t *b;
  size_t events;
  bw_state_t state_seen[8];
  uint64_t opens_seen[8];
} reader_t;

static void read_stats_cb(const bw_event_t *ev, void *userdata) {
  reader_t *r = userdata;
  bw_breaker_stats_t s;
  (void)ev;
  bw_breaker_stats(r->b, &s); /* documented as fine from a sink callback */
  (void)bw_breaker_retry_in_ms(r->b);
  if (r->events < 8) {
    r->state_seen[r->events] = bw_breaker_state(r->b);
    r->opens_seen[r->events] = s.opens;
  }
  r->events++;
}

/* A sink may read the emitting breaker's stats from its callback (no
 * deadlock), and sees the state the event announces. */
static void a_sink_callback_may_read_the_breakers_stats(void **state) {
  bwt_env_t *e = *state;
  reader_t r;
  bw_sink_t *sink;
  bw_breaker_config_t cfg;
  bw_permit_t p;

  memset(&r, 0, sizeof(r));
  sink = bw_sink_callback_new(read_stats_cb, &r, NULL);
  assert_non_null(sink);
  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1000;
  cfg.sink = sink;
  r.b = bwt_breaker(e, &cfg);
  bwt_call(r.b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(r.b);
  assert_status(bw_breaker_release(r.b, &p, BW_SUCCESS), BW_OK);
  bw_breaker_isolate(r.b);
  assert_int_equal(r.events, 4);
  assert_state(r.state_seen[0], BW_OPEN);
  assert_u64_eq(r.opens_seen[0], 1);
  assert_state(r.state_seen[1], BW_HALF_OPEN);
  assert_state(r.state_seen[2], BW_CLOSED);
  assert_state(r.state_seen[3], BW_ISOLATED);
  bw_breaker_free(r.b);
  e->b = NULL;
  bw_sink_free(sink);
}

/* ==== rejection summaries
 * ============================================================ */

static void rejections_are_summarised_at_most_once_a_second(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  const bwt_event_t *ev;
  int i;

  bwt_calls(b, BW_FAILURE, 5); /* opens at t = T0 */
  for (i = 0; i < 100; i++)
    assert_rejected(b);
  bwt_advance_ns(e, 1000 * MS - 1);
  assert_rejected(b);
  assert_int_equal(bwt_count(e->rec, BW_EV_CALLS_REJECTED), 0);

  bwt_advance_ns(e, 1); /* t + 1000 ms */
  assert_rejected(b);
  assert_int_equal(e->rec->count, 2);
  ev = bwt_event_at(e->rec, 1);
  assert_int_equal(ev->type, BW_EV_CALLS_REJECTED);
  assert_string_equal(ev->name, "svc");
  assert_int_equal(ev->field_count, 2);
  assert_field_uint(ev, 0, "count", 102);
  assert_field_str(ev, 1, "state", "open");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 1000 * MS);

  bwt_advance_ms(e, 500); /* t + 1500 ms: 500 ms since the last summary */
  for (i = 0; i < 5; i++)
    assert_rejected(b);
  assert_int_equal(e->rec->count, 2);

  /* The half-open transition flushes the 5 pending first. */
  bwt_advance_ms(e, 28500);
  (void)bwt_acquire(b);
  assert_int_equal(e->rec->count, 4);
  ev = bwt_event_at(e->rec, 2);
  assert_int_equal(ev->type, BW_EV_CALLS_REJECTED);
  assert_field_uint(ev, 0, "count", 5);
  assert_field_str(ev, 1, "state", "open");
  assert_event(bwt_event_at(e->rec, 3), BW_EV_CIRCUIT_HALF_OPENED,
               "break of 30000 ms elapsed");
  assert_u64_eq(bwt_stats(b).rejected, 107);
}

/* Freeing a breaker flushes the rejections not yet summarised: no rejection
 * goes unreported because its breaker went away. */
static void freeing_a_breaker_reports_the_rejections_not_yet_summarised(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  const bwt_event_t *ev;
  int i;

  bwt_calls(b, BW_FAILURE, 5);
  bwt_advance_ms(e, 200);
  for (i = 0; i < 7; i++)
    assert_rejected(b);
  assert_int_equal(bwt_count(e->rec, BW_EV_CALLS_REJECTED), 0);
  bw_breaker_free(b);
  e->b = NULL;
  assert_int_equal(bwt_count(e->rec, BW_EV_CALLS_REJECTED), 1);
  ev = bwt_nth_of(e->rec, BW_EV_CALLS_REJECTED, 0);
  assert_field_uint(ev, 0, "count", 7);
  assert_field_str(ev, 1, "state", "open");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 200 * MS);
}

/* With nothing pending, freeing emits nothing. */
static void freeing_a_breaker_with_nothing_pending_emits_nothing(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  size_t before;
  bwt_calls(b, BW_FAILURE, 5);
  before = e->rec->count;
  bw_breaker_free(b);
  e->b = NULL;
  assert_int_equal(e->rec->count, before);
}

static void a_summary_waits_a_second_after_the_last_one(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  const bwt_event_t *ev;

  bwt_calls(b, BW_FAILURE, 5);
  bwt_advance_ms(e, 2000);
  assert_rejected(b); /* 2 s after entering OPEN: summarised at once */
  assert_int_equal(bwt_count(e->rec, BW_EV_CALLS_REJECTED), 1);
  assert_field_uint(bwt_nth_of(e->rec, BW_EV_CALLS_REJECTED, 0), 0, "count", 1);
  bwt_advance_ms(e, 999);
  assert_rejected(b);
  assert_int_equal(bwt_count(e->rec, BW_EV_CALLS_REJECTED), 1);
  bwt_advance_ms(e, 1);
  assert_rejected(b);
  assert_int_equal(bwt_count(e->rec, BW_EV_CALLS_REJECTED), 2);
  ev = bwt_nth_of(e->rec, BW_EV_CALLS_REJECTED, 1);
  assert_field_uint(ev, 0, "count", 2);
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 3000 * MS);
}

static void pending_rejections_are_flushed_before_a_reset(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  const bwt_event_t *ev;

  bw_breaker_isolate(b);
  assert_rejected(b);
  assert_rejected(b);
  assert_rejected(b);
  bw_breaker_reset(b);
  assert_int_equal(e->rec->count, 3);
  assert_int_equal(bwt_event_at(e->rec, 0)->type, BW_EV_CIRCUIT_ISOLATED);
  ev = bwt_event_at(e->rec, 1);
  assert_int_equal(ev->type, BW_EV_CALLS_REJECTED);
  assert_field_uint(ev, 0, "count", 3);
  assert_field_str(ev, 1, "state", "isolated");
  assert_int_equal(bwt_event_at(e->rec, 2)->type, BW_EV_CIRCUIT_RESET);
}

static void pending_half_open_rejections_are_flushed_before_the_close(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 1000);
  const bwt_event_t *ev;
  bw_permit_t p;

  bwt_call(b, BW_FAILURE);
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(b);
  assert_rejected(b);
  assert_rejected(b);
  assert_int_equal(e->rec->count, 2);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_int_equal(e->rec->count, 4);
  ev = bwt_event_at(e->rec, 2);
  assert_int_equal(ev->type, BW_EV_CALLS_REJECTED);
  assert_field_uint(ev, 0, "count", 2);
  assert_field_str(ev, 1, "state", "half_open");
  assert_int_equal(bwt_event_at(e->rec, 3)->type, BW_EV_CIRCUIT_CLOSED);
}

/* ==== stats
 * ========================================================================== */

static void time_in_state_includes_the_current_state(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_breaker_stats_t s;
  bw_permit_t p;

  bwt_advance_ms(e, 5000);
  bwt_calls(b, BW_FAILURE, 5);
  bwt_advance_ms(e, 2500);
  s = bwt_stats(b);
  assert_i64_eq(s.time_in_state_ms[BW_CLOSED], 5000);
  assert_i64_eq(s.time_in_state_ms[BW_OPEN], 2500);
  assert_i64_eq(s.time_in_state_ms[BW_HALF_OPEN], 0);
  assert_i64_eq(s.time_in_state_ms[BW_ISOLATED], 0);
  assert_i64_eq(s.time_in_state_ms[BW_DISABLED], 0);

  bwt_advance_ms(e, 27500);
  p = bwt_acquire(b);
  bwt_advance_ms(e, 100);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  bwt_advance_ms(e, 400);
  s = bwt_stats(b);
  assert_i64_eq(s.time_in_state_ms[BW_CLOSED], 5400);
  assert_i64_eq(s.time_in_state_ms[BW_OPEN], 30000);
  assert_i64_eq(s.time_in_state_ms[BW_HALF_OPEN], 100);

  bw_breaker_isolate(b);
  bwt_advance_ms(e, 700);
  bw_breaker_disable(b);
  bwt_advance_ms(e, 300);
  s = bwt_stats(b);
  assert_i64_eq(s.time_in_state_ms[BW_ISOLATED], 700);
  assert_i64_eq(s.time_in_state_ms[BW_DISABLED], 300);
  assert_i64_eq(s.time_in_state_ms[BW_CLOSED], 5400);
}

/* Conservation: calls = successes + failures + ignored; admitted + rejected =
 * acquisitions; and the totals match what the caller did. */
static void stats_conserve_calls_and_acquisitions(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_breaker_stats_t s;
  uint64_t acquisitions = 0, admitted = 0, rejected = 0;
  uint64_t n[3] = {0, 0, 0}, stale = 0;
  bw_permit_t held[4];
  int nheld = 0, i;

  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 3;
  cfg.break_ms = 500;
  cfg.half_open_max_calls = 2;
  cfg.success_threshold = 2;
  b = bwt_breaker(e, &cfg);

  for (i = 0; i < 2000; i++) {
    bw_permit_t p;
    bw_outcome_t o = (bw_outcome_t)((i * 7 + i / 13) % 3);
    acquisitions++;
    if (bw_breaker_acquire(b, &p) != BW_OK) {
      rejected++;
    } else {
      admitted++;
      if (i % 11 == 0 && nheld < 4) {
        held[nheld++] = p; /* released later, maybe stale */
      } else {
        int rc = bw_breaker_release(b, &p, o);
        assert_true(rc == BW_OK || rc == BW_E_STALE);
        if (rc == BW_E_STALE) stale++;
        n[o]++;
      }
    }
    if (nheld == 4 || (i % 97 == 0 && nheld > 0)) {
      while (nheld > 0) {
        int rc = bw_breaker_release(b, &held[--nheld], BW_FAILURE);
        assert_true(rc == BW_OK || rc == BW_E_STALE);
        if (rc == BW_E_STALE) stale++;
        n[BW_FAILURE]++;
      }
    }
    bwt_advance_ms(e, 37);
  }
  while (nheld > 0) {
    int rc = bw_breaker_release(b, &held[--nheld], BW_FAILURE);
    if (rc == BW_E_STALE) stale++;
    n[BW_FAILURE]++;
  }

  s = bwt_stats(b);
  assert_u64_eq(s.calls, s.successes + s.failures + s.ignored);
  assert_u64_eq(s.successes, n[BW_SUCCESS]);
  assert_u64_eq(s.failures, n[BW_FAILURE]);
  assert_u64_eq(s.ignored, n[BW_IGNORED]);
  assert_u64_eq(s.stale, stale);
  assert_u64_eq(s.admitted + s.rejected, acquisitions);
  assert_u64_eq(s.admitted, admitted);
  assert_u64_eq(s.rejected, rejected);
  assert_true(s.opens > 0); /* the traffic did exercise the state machine */
  assert_true(s.rejected > 0);
  assert_u64_eq(s.opens, bwt_count(e->rec, BW_EV_CIRCUIT_OPENED));
  assert_u64_eq(s.half_opens, bwt_count(e->rec, BW_EV_CIRCUIT_HALF_OPENED));
  assert_u64_eq(s.closes, bwt_count(e->rec, BW_EV_CIRCUIT_CLOSED));
}

/* stats.rejected (like every total) counts over the breaker's whole life: a
 * close, a new open and a reset leave it alone. */
static void rejected_counts_every_refusal_over_the_breakers_life(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 1, 1000);
  bw_permit_t p;

  bwt_call(b, BW_FAILURE);
  assert_rejected(b);
  assert_rejected(b);
  bwt_advance_ms(e, 1000);
  p = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_stats(b).rejected, 2);

  bwt_call(b, BW_FAILURE);
  assert_rejected(b);
  assert_u64_eq(bwt_stats(b).rejected, 3);
  bw_breaker_isolate(b);
  assert_rejected(b);
  bw_breaker_reset(b);
  assert_u64_eq(bwt_stats(b).rejected, 4);
  assert_u64_eq(bwt_stats(b).admitted, 3); /* the refusals are not in it */
}

/* ==== the asyncio toolkit: the Python breaker's registry configs
 * ===================================== */

typedef struct agents_s {
  const char *name;
  uint32_t failure_threshold;
  uint32_t success_threshold;
  int64_t break_ms; /* recovery_timeout */
} agent_case_t;

static void run_agent_case(bwt_env_t *e, const agent_case_t *sc) {
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_breaker_stats_t s;
  const bwt_event_t *ev;
  bw_permit_t p;
  char reason[128];
  uint32_t i;

  bwt_config(e, &cfg, sc->name);
  cfg.failure_threshold = sc->failure_threshold;
  cfg.success_threshold = sc->success_threshold;
  cfg.break_ms = sc->break_ms;
  b = bwt_breaker(e, &cfg);

  /* 1. threshold - 1 failures: still closed */
  bwt_calls(b, BW_FAILURE, (int)sc->failure_threshold - 1);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.consecutive_failures, sc->failure_threshold - 1);
  assert_int_equal(e->rec->count, 0);

  /* 2. the threshold-th opens */
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_int_equal(bwt_transition_count(e->rec), 1);
  ev = bwt_transition_at(e->rec, 0);
  snprintf(reason, sizeof(reason),
           "%u consecutive failures (failure_threshold %u)",
           sc->failure_threshold, sc->failure_threshold);
  assert_event(ev, BW_EV_CIRCUIT_OPENED, reason);
  assert_string_equal(ev->name, sc->name);
  assert_field_int(ev, 0, "break_ms", sc->break_ms);
  assert_field_str(ev, 1, "from", "closed");

  /* 3. CircuitOpenError during the break, with the time left */
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), sc->break_ms);
  bwt_advance_ms(e, sc->break_ms / 2);
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), sc->break_ms - sc->break_ms / 2);
  bwt_advance_ms(e, sc->break_ms - sc->break_ms / 2 - 1);
  assert_rejected(b);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1);
  s = bwt_stats(b);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.rejected, 3);

  /* 4. half-open once the recovery timeout has passed */
  bwt_advance_ms(e, 1);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  assert_int_equal(bwt_transition_count(e->rec), 2);
  ev = bwt_transition_at(e->rec, 1);
  snprintf(reason, sizeof(reason), "break of %lld ms elapsed",
           (long long)sc->break_ms);
  assert_event(ev, BW_EV_CIRCUIT_HALF_OPENED, reason);
  assert_field_str(ev, 0, "from", "open");

  /* 5. success_threshold probe successes close it (one probe at a time) */
  for (i = 1; i <= sc->success_threshold; i++) {
    if (i > 1) {
      p = bwt_acquire(b);
      assert_int_equal(p.kind, BW_PERMIT_PROBE);
    }
    assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
    assert_state(bw_breaker_state(b),
                 i < sc->success_threshold ? BW_HALF_OPEN : BW_CLOSED);
  }
  assert_int_equal(bwt_transition_count(e->rec), 3);
  ev = bwt_transition_at(e->rec, 2);
  assert_int_equal(ev->type, BW_EV_CIRCUIT_CLOSED);
  if (sc->success_threshold > 1) {
    snprintf(reason, sizeof(reason),
             "%u probe successes (success_threshold %u)", sc->success_threshold,
             sc->success_threshold);
    assert_event(ev, BW_EV_CIRCUIT_CLOSED, reason);
  }
  assert_field_str(ev, 0, "from", "half_open");
  s = bwt_stats(b);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.half_opens, 1);
  assert_u64_eq(s.closes, 1);
  assert_u64_eq(s.consecutive_failures, 0);
  assert_u64_eq(s.failures, sc->failure_threshold);
  assert_u64_eq(s.successes, sc->success_threshold);
  assert_u64_eq(s.rejected, 3);

  /* 6. closed again, counting from zero */
  bwt_calls(b, BW_FAILURE, (int)sc->failure_threshold - 1);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), sc->break_ms);
}

static void agents_hotel_api_5_failures_2_successes_30s(void **state) {
  static const agent_case_t sc = {"hotel_api", 5, 2, 30000};
  run_agent_case(*state, &sc);
}

static void agents_payment_api_3_failures_3_successes_60s(void **state) {
  static const agent_case_t sc = {"payment_api", 3, 3, 60000};
  run_agent_case(*state, &sc);
}

static void agents_search_agent_10_failures_1_success_15s(void **state) {
  static const agent_case_t sc = {"search_agent", 10, 1, 15000};
  run_agent_case(*state, &sc);
}

/* ==== the tenacity article: pybreaker, exclude=[4xx]
 * ====================================================== */

/* A client bug sending 422 systematically must not open the breaker: the
 * remote service is healthy, the caller is wrong. */
static void tenacity_client_errors_alone_never_open(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "notificacoes", 5, 30000);
  bw_breaker_stats_t s;

  bwt_calls(b, BW_IGNORED, 1000);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.calls, 1000);
  assert_u64_eq(s.ignored, 1000);
  assert_u64_eq(s.consecutive_failures, 0);
  assert_int_equal(e->rec->count, 0);
}

static void tenacity_client_errors_between_failures_neither_count_nor_reset(
    void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "notificacoes", 5, 30000);
  static const bw_outcome_t seq[] = {BW_FAILURE, BW_IGNORED, BW_FAILURE,
                                     BW_IGNORED, BW_IGNORED, BW_FAILURE,
                                     BW_FAILURE, BW_IGNORED};
  bw_breaker_stats_t s;
  size_t i;

  for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
    bwt_call(b, seq[i]);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.consecutive_failures, 4);
  assert_u64_eq(s.ignored, 4);
  assert_u64_eq(s.failures, 4);

  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "5 consecutive failures (failure_threshold 5)");
}

static void tenacity_a_client_error_on_a_probe_decides_nothing(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "notificacoes", 5, 30000);
  bw_permit_t p;

  bwt_calls(b, BW_FAILURE, 5);
  bwt_advance_ms(e, 30000);
  p = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &p, BW_IGNORED), BW_OK);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  assert_u64_eq(bwt_stats(b).half_open_in_flight, 0);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
}

/* ==== stale permits
 * ============================================================================
 */

/* A call started before the breaker opened cannot close it; one started
 * before it closed again cannot count towards a new open. */
static void stale_permits_count_in_totals_but_decide_nothing(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = consecutive(e, "svc", 5, 30000);
  bw_permit_t old[4], probe;
  bw_breaker_stats_t s;
  int i;

  for (i = 0; i < 4; i++)
    old[i] = bwt_acquire(b); /* CLOSED generation */
  bwt_calls(b, BW_FAILURE, 5);
  assert_state(bw_breaker_state(b), BW_OPEN);

  /* released while OPEN */
  assert_status(bw_breaker_release(b, &old[0], BW_SUCCESS), BW_E_STALE);
  assert_state(bw_breaker_state(b), BW_OPEN);

  /* released while HALF_OPEN: a success must not close (threshold 1) */
  bwt_advance_ms(e, 30000);
  probe = bwt_acquire(b);
  assert_status(bw_breaker_release(b, &old[1], BW_SUCCESS), BW_E_STALE);
  s = bwt_stats(b);
  assert_state(s.state, BW_HALF_OPEN);
  assert_u64_eq(s.half_open_in_flight, 1);
  assert_u64_eq(s.closes, 0);
  assert_status(bw_breaker_release(b, &probe, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);

  /* released after closing again: a failure must not count */
  bwt_calls(b, BW_FAILURE, 4);
  assert_status(bw_breaker_release(b, &old[2], BW_FAILURE), BW_E_STALE);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.consecutive_failures, 4);
  assert_status(bw_breaker_release(b, &old[3], BW_IGNORED), BW_E_STALE);

  s = bwt_stats(b);
  assert_u64_eq(s.stale, 4);
  assert_u64_eq(s.successes, 3); /* old[0], old[1], the probe */
  assert_u64_eq(s.failures, 10); /* 5 + 4 + old[2] */
  assert_u64_eq(s.ignored, 1);   /* old[3] */
  assert_u64_eq(s.calls, 14);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.closes, 1);
  assert_int_equal(bwt_transition_count(e->rec), 3);

  bwt_call(b, BW_FAILURE); /* the 5th counted failure since the close */
  assert_state(bw_breaker_state(b), BW_OPEN);
}

static void stale_permits_do_not_enter_a_window(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_t *b = count_window(e, 10, 10, 0.5, 0);
  bw_permit_t old;
  bw_breaker_stats_t s;

  old = bwt_acquire(b);
  bw_breaker_isolate(b);
  bw_breaker_reset(b);
  assert_status(bw_breaker_release(b, &old, BW_FAILURE), BW_E_STALE);
  s = bwt_stats(b);
  assert_u64_eq(s.window_calls, 0);
  assert_u64_eq(s.window_failures, 0);
  assert_u64_eq(s.failures, 1);
  assert_u64_eq(s.stale, 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, bwt_setup, bwt_teardown)

/* bw_breaker_open_for (ext.h): opened for the remaining break of a breaker
 * kept elsewhere, then the local half-open rules. */
static void open_for_a_remaining_break_then_probes(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t p, q;
  bwt_config(e, &cfg, "open_for");
  cfg.break_ms = 1000;
  cfg.half_open_max_calls = 1;
  b = bwt_breaker(e, &cfg);
  bw_breaker_open_for(b, 250 * BW_NS_PER_MS, "set elsewhere");
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_event(bwt_transition_at(e->rec, 0), BW_EV_CIRCUIT_OPENED,
               "set elsewhere");
  assert_field_int(bwt_transition_at(e->rec, 0), 0, "break_ms", 250);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 250);
  assert_status(bw_breaker_acquire(b, &p), BW_E_OPEN);
  bwt_advance_ms(e, 250);
  assert_status(bw_breaker_acquire(b, &p), BW_OK);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_breaker_acquire(b, &q), BW_E_OPEN);
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1000);
  /* 0: half-open at the next acquire; an operator's isolation wins. */
  bw_breaker_open_for(b, -5, NULL);
  assert_status(bw_breaker_acquire(b, &p), BW_OK);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  bw_breaker_isolate(b);
  bw_breaker_open_for(b, 0, "ignored");
  assert_state(bw_breaker_state(b), BW_ISOLATED);
  bw_breaker_open_for(NULL, 0, NULL);
}

/* ==== per-call listeners ================================================ */

typedef struct heard_s {
  int n;
  bw_call_event_t what[16];
  int status[16];
  bw_outcome_t outcome[16];
  bw_state_t state[16]; /* the breaker's state when the listener ran */
  const bw_breaker_t *b;
  int mark;
} heard_t;

static void hear(const bw_breaker_t *b, bw_call_event_t what, int status,
                 bw_outcome_t outcome, void *userdata) {
  heard_t *h = userdata;
  assert_int_equal(h->mark, 0x600d);
  assert_ptr_equal(b, h->b);
  assert_true(h->n < 16);
  h->what[h->n] = what;
  h->status[h->n] = status;
  h->outcome[h->n] = outcome;
  h->state[h->n] = bw_breaker_state(b);
  h->n++;
}

static void assert_heard(const heard_t *h, int i, bw_call_event_t what,
                         int status, bw_outcome_t outcome, bw_state_t st) {
  assert_int_equal(h->what[i], what);
  assert_status(h->status[i], status);
  assert_int_equal(h->outcome[i], outcome);
  assert_state(h->state[i], st);
}

/* The listener hears every acquire (admitted or rejected, with the
 * acquire's answer) and every release (with its outcome and answer), after
 * the breaker decided; calls refused for bad arguments are not heard. */
static void a_listener_hears_every_acquire_and_release(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t p, old;
  heard_t h;
  memset(&h, 0, sizeof h);
  h.mark = 0x600d;
  bwt_config(e, &cfg, "svc");
  cfg.failure_threshold = 2;
  cfg.break_ms = 1000;
  cfg.listener = hear;
  cfg.listener_userdata = &h;
  b = bwt_breaker(e, &cfg);
  h.b = b;

  assert_status(bw_breaker_acquire(b, &old), BW_OK);           /* 0 */
  assert_status(bw_breaker_acquire(b, &p), BW_OK);             /* 1 */
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK); /* 2 */
  assert_status(bw_breaker_acquire(b, &p), BW_OK);             /* 3 */
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK); /* 4: opens */
  assert_status(bw_breaker_acquire(b, &p), BW_E_OPEN);         /* 5 */
  assert_status(bw_breaker_release(b, &old, BW_SUCCESS), BW_E_STALE); /* 6 */
  assert_status(bw_breaker_acquire(NULL, &p), BW_E_INVAL);
  assert_status(bw_breaker_acquire(b, NULL), BW_E_INVAL);
  assert_status(bw_breaker_release(b, NULL, BW_SUCCESS), BW_E_INVAL);
  assert_status(bw_breaker_release(b, &p, (bw_outcome_t)99), BW_E_INVAL);
  bwt_advance_ms(e, 1000);
  assert_status(bw_breaker_acquire(b, &p), BW_OK);             /* 7: probe */
  assert_status(bw_breaker_release(b, &p, BW_IGNORED), BW_OK); /* 8 */
  assert_status(bw_breaker_acquire(b, &p), BW_OK);             /* 9 */
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK); /* 10: closes */

  assert_int_equal(h.n, 11);
  assert_heard(&h, 0, BW_CALL_ADMITTED, BW_OK, BW_SUCCESS, BW_CLOSED);
  assert_heard(&h, 1, BW_CALL_ADMITTED, BW_OK, BW_SUCCESS, BW_CLOSED);
  assert_heard(&h, 2, BW_CALL_RELEASED, BW_OK, BW_FAILURE, BW_CLOSED);
  assert_heard(&h, 3, BW_CALL_ADMITTED, BW_OK, BW_SUCCESS, BW_CLOSED);
  assert_heard(&h, 4, BW_CALL_RELEASED, BW_OK, BW_FAILURE, BW_OPEN);
  assert_heard(&h, 5, BW_CALL_REJECTED, BW_E_OPEN, BW_SUCCESS, BW_OPEN);
  assert_heard(&h, 6, BW_CALL_RELEASED, BW_E_STALE, BW_SUCCESS, BW_OPEN);
  assert_heard(&h, 7, BW_CALL_ADMITTED, BW_OK, BW_SUCCESS, BW_HALF_OPEN);
  assert_heard(&h, 8, BW_CALL_RELEASED, BW_OK, BW_IGNORED, BW_HALF_OPEN);
  assert_heard(&h, 9, BW_CALL_ADMITTED, BW_OK, BW_SUCCESS, BW_HALF_OPEN);
  assert_heard(&h, 10, BW_CALL_RELEASED, BW_OK, BW_SUCCESS, BW_CLOSED);
}

/* The NULL policy: every verb of the breaker, the breaker interface, the
 * limit interface, the pipeline, the budget and the retry delay answers
 * BW_E_INVAL (or its documented neutral value / no-op) for a NULL object,
 * never a crash. */
static void every_verb_answers_null_without_crashing(void **state) {
  (void)state;
  bw_permit_t p;
  memset(&p, 0, sizeof p);
  bw_breaker_stats_t bs;
  memset(&bs, 0xA5, sizeof bs);
  /* the in-process breaker */
  assert_status(bw_breaker_acquire(NULL, &p), BW_E_INVAL);
  assert_status(bw_breaker_release(NULL, &p, BW_SUCCESS), BW_E_INVAL);
  assert_state(bw_breaker_state(NULL), BW_CLOSED);
  assert_i64_eq(bw_breaker_retry_in_ms(NULL), 0);
  assert_string_equal(bw_breaker_name(NULL), "");
  bw_breaker_poll(NULL);
  bw_breaker_isolate(NULL);
  bw_breaker_reset(NULL);
  bw_breaker_disable(NULL);
  bw_breaker_set_metrics_only(NULL, true);
  bw_breaker_stats(NULL, &bs);
  assert_u64_eq(bs.calls, 0);
  bw_breaker_stats(NULL, NULL);
  bw_breaker_free(NULL);
  /* the breaker interface */
  assert_null(bw_breaker_iface(NULL));
  assert_status(bw_breaker_if_try_acquire(NULL, &p), BW_E_INVAL);
  assert_status(bw_breaker_if_release(NULL, &p, BW_SUCCESS), BW_E_INVAL);
  assert_state(bw_breaker_if_state(NULL), BW_CLOSED);
  assert_i64_eq(bw_breaker_if_retry_in_ms(NULL), 0);
  assert_string_equal(bw_breaker_if_name(NULL), "");
  assert_string_equal(bw_breaker_if_kind(NULL), "");
  bw_breaker_if_free(NULL);
  /* the limit interface */
  assert_status(bw_limit_try_acquire(NULL, &p), BW_E_INVAL);
  assert_status(bw_limit_release(NULL, &p, BW_SUCCESS), BW_E_INVAL);
  assert_u64_eq(bw_limit_current(NULL), 0);
  assert_u64_eq(bw_limit_in_flight(NULL), 0);
  assert_string_equal(bw_limit_name(NULL), "");
  bw_limit_free(NULL);
  /* the pipeline and the strategy interface */
  bw_pipeline_call_t c;
  memset(&c, 0, sizeof c);
  assert_status(bw_pipeline_begin(NULL, &c, 0), BW_E_INVAL);
  assert_status(bw_pipeline_report(NULL, BW_VERDICT_OK, 0, 0), BW_E_INVAL);
  assert_status(bw_pipeline_report_timeout(NULL, 0), BW_E_INVAL);
  assert_status(bw_pipeline_resume(NULL, 0), BW_E_INVAL);
  assert_status(bw_pipeline_resume(&c, 0), BW_E_INVAL); /* never begun */
  assert_null(bw_pipeline_attach_key(NULL, 0));
  bw_pipeline_cancel(NULL);
  assert_string_equal(bw_pipeline_name(NULL), "");
  assert_status(bw_pipeline_add_breaker_if(NULL, NULL), BW_E_INVAL);
  assert_status(bw_pipeline_add_strategy(NULL, NULL, 0), BW_E_INVAL);
  assert_string_equal(bw_strategy_if_kind(NULL), "");
  bw_pipeline_free(NULL);
  /* the status forms of the budget and the retry delay */
  assert_status(bw_budget_try_retry_ex(NULL), BW_E_INVAL);
  int64_t ms = -7;
  assert_status(bw_retry_delay_ms_ex(NULL, 1, NULL, NULL, &ms), BW_E_INVAL);
  assert_i64_eq(ms, -7);
  /* the one outcome enum: the limit names alias it */
  assert_int_equal(BW_LIMIT_DROPPED, BW_FAILURE);
  assert_int_equal(BW_LIMIT_TIMED_OUT, BW_TIMED_OUT);
  assert_string_equal(bw_outcome_name(BW_TIMED_OUT), "timed_out");
  assert_string_equal(bw_outcome_name(BW_DROPPED), "failure");
  assert_string_equal(bw_limit_outcome_name(BW_DROPPED), "dropped");
  assert_string_equal(bw_outcome_name((bw_outcome_t)9), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      T(acquire_when_closed_fills_a_normal_permit),
      T(open_for_a_remaining_break_then_probes),
      T(a_permit_carries_the_clock_reading_when_the_breaker_needs_it),
      T(rejected_acquire_leaves_the_permit_untouched),
      T(release_with_an_unknown_outcome_is_refused_and_counts_nothing),
      T(failures_below_the_threshold_keep_the_breaker_closed),
      T(the_threshold_th_consecutive_failure_opens_the_breaker),
      T(a_success_resets_the_consecutive_count),
      T(failures_released_after_the_open_are_stale),
      T(open_breaker_rejects_until_the_break_ends),
      T(the_break_is_timed_from_the_opening_not_from_the_last_failure),
      T(state_is_lazy_until_an_acquire_or_a_poll),
      T(poll_before_anything_is_due_changes_nothing),
      T(half_open_admits_at_most_half_open_max_calls_probes),
      T(a_probe_failure_reopens_the_breaker),
      T(an_ignored_probe_frees_its_slot_and_counts_neither_way),
      T(sequential_probes_close_after_success_threshold),
      T(closing_clears_the_consecutive_count),
      T(the_break_grows_on_consecutive_opens_up_to_max_break_ms),
      T(a_fractional_multiplier_grows_the_break_exactly),
      T(max_break_ms_zero_means_the_break_never_grows),
      T(a_stuck_half_open_probe_reopens_with_the_grown_break),
      T(a_probe_from_an_earlier_half_open_is_stale),
      T(admitting_a_probe_restarts_the_stuck_timer),
      T(releasing_a_probe_restarts_the_stuck_timer),
      T(a_free_probe_slot_is_progress_not_stuck),
      T(poll_leaves_half_open_alone_while_a_probe_slot_is_free),
      T(half_open_without_probes_in_flight_is_never_stuck),
      T(count_window_opens_when_the_failure_ratio_is_reached),
      T(count_window_below_minimum_calls_never_opens),
      T(count_window_ratio_is_inclusive_and_the_window_slides),
      T(count_window_a_success_never_opens),
      T(a_count_window_breaker_stays_closed_when_a_success_reaches_the_minimum),
      T(count_window_holds_only_the_last_window_size_outcomes),
      T(count_window_ignored_outcomes_do_not_enter),
      T(count_window_reason_names_the_calls_in_the_window),
      T(count_window_is_cleared_when_the_breaker_closes),
      T(the_window_is_kept_until_the_breaker_closes_or_is_reset),
      T(polly_lab_opens_at_22_calls_with_12_failures),
      T(polly_lab_calm_traffic_below_minimum_calls_never_opens),
      T(polly_lab_calm_traffic_failing_forever_never_opens),
      T(time_window_counts_outcomes_up_to_the_oldest_bucket),
      T(time_window_counts_at_any_clock_reading),
      cmocka_unit_test(window_words_count_recycle_and_saturate),
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      T(a_listener_hears_every_acquire_and_release),
      T(time_window_forgets_outcomes_older_than_the_window),
      T(time_window_buckets_are_aligned_to_the_bucket_length),
      T(time_window_stats_follow_the_clock),
      T(time_window_forgets_outcomes_after_a_long_quiet_spell),
      T(time_window_a_success_never_opens),
      T(a_time_window_breaker_stays_closed_when_a_success_reaches_the_minimum),
      T(time_window_ignored_outcomes_do_not_enter),
      T(slow_calls_open_a_count_window_breaker),
      T(slow_calls_open_a_time_window_breaker),
      T(slow_call_threshold_is_inclusive),
      T(ignored_outcomes_are_never_slow),
      T(slow_call_detection_is_off_when_slow_call_ms_is_zero),
      T(a_slow_success_evaluates_the_failure_ratio),
      T(a_slow_probe_success_counts_as_a_probe_failure),
      T(isolate_rejects_every_call_until_reset),
      T(isolating_makes_permits_in_flight_stale),
      T(reset_clears_counts_windows_and_growth_but_keeps_totals),
      T(an_operator_call_emits_its_event_even_when_nothing_changes),
      T(disable_always_admits_and_never_trips),
      T(disabling_an_open_breaker_admits_at_once),
      T(metrics_only_runs_the_state_machine_but_never_rejects),
      T(metrics_only_can_be_switched_at_runtime),
      T(metrics_only_passes_through_an_isolated_breaker),
      T(each_transition_emits_exactly_one_event_and_bumps_the_generation),
      T(events_carry_the_threads_context),
      T(a_permits_context_overrides_the_threads),
      T(a_sink_callback_may_read_the_breakers_stats),
      T(rejections_are_summarised_at_most_once_a_second),
      T(freeing_a_breaker_reports_the_rejections_not_yet_summarised),
      T(freeing_a_breaker_with_nothing_pending_emits_nothing),
      T(a_summary_waits_a_second_after_the_last_one),
      T(pending_rejections_are_flushed_before_a_reset),
      T(pending_half_open_rejections_are_flushed_before_the_close),
      T(time_in_state_includes_the_current_state),
      T(stats_conserve_calls_and_acquisitions),
      T(rejected_counts_every_refusal_over_the_breakers_life),
      T(agents_hotel_api_5_failures_2_successes_30s),
      T(agents_payment_api_3_failures_3_successes_60s),
      T(agents_search_agent_10_failures_1_success_15s),
      T(tenacity_client_errors_alone_never_open),
      T(tenacity_client_errors_between_failures_neither_count_nor_reset),
      T(tenacity_a_client_error_on_a_probe_decides_nothing),
      T(stale_permits_count_in_totals_but_decide_nothing),
      T(stale_permits_do_not_enter_a_window),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

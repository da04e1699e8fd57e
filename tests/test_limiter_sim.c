/* Scenario tests: the adaptive limiters as the admission gate of clients
 * that always have work, against the Polly lab's partner, in virtual time
 * (bw_sim_gate_run, sim.h), and the limiter rules those runs rely on.
 *
 * Issue 4's acceptance, for each algorithm with its documented defaults
 * (max_limit raised to 1000: the default 200 is below the capacity): 800
 * closed-loop clients, 60 s of virtual time, capacity 400, per-attempt
 * timeout 2000 ms, a refused attempt waits 10 ms and asks again (not a
 * network call). The limit must be within +-15 % of the capacity ([340,
 * 460]) within 10 s and stay there to the end; >= 99 % of the network calls
 * must succeed; the partner's in-flight count must stay <= 460 once the
 * limit has settled. Deterministic: fixed seeds, no real time.
 *
 * All three pass it with the limiter's default guards (a timed-out call
 * keeps its slot for half its round trip; growth stops just above the
 * proven in-flight level and below a recently disproven one: limiter.h);
 * VEGAS decides once per round trip on the round's smallest RTT, which
 * filters out the partner's latency jitter (80-180 ms, uniform) that its
 * per-sample estimate used to read as queueing
 * (docs/internals/limiter-settling.md). bench/bench_limiter_sim prints the
 * same figures. Also: the limiter rules the runs rely on, and the gate
 * driver's conservation, drain
 * and determinism. */
#include "breakwater/limiter.h"
#include "breakwater/sim.h"
#include "bw_test.h"

#define MS BW_NS_PER_MS

/* ==== the limiter rules the scenario relies on =========================== */

static bw_limiter_t *limiter_at(bw_clock_t *clock, bw_limiter_algorithm_t alg,
                                uint32_t initial) {
  bw_limiter_config_t cfg;
  bw_error_t err;
  bw_limiter_t *lim;
  bw_limiter_config_init(&cfg);
  cfg.algorithm = alg;
  cfg.initial_limit = initial;
  cfg.max_limit = 1000;
  cfg.clock = clock;
  lim = bw_limiter_new(&cfg, &err);
  if (lim == NULL) fail_msg("bw_limiter_new: %s", err.message);
  return lim;
}

static bw_permit_t take(bw_limiter_t *lim) {
  bw_permit_t p;
  assert_status(bw_limiter_try_acquire(lim, &p), BW_OK);
  return p;
}

static void give(bw_limiter_t *lim, bw_permit_t *p, bw_limit_outcome_t o) {
  assert_status(bw_limiter_release(lim, p, o), BW_OK);
}

/* Calls already in flight when a drop decreased the limit report the same
 * congestion: their drops are counted but decrease nothing more; a call
 * admitted after the decrease may decrease again. */
static void one_decrease_per_congestion_event(void **state) {
  static const bw_limiter_algorithm_t algs[2] = {BW_LIMITER_AIMD,
                                                 BW_LIMITER_GRADIENT2};
  (void)state;
  for (int a = 0; a < 2; a++) {
    bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
    bw_limiter_t *lim = limiter_at(clock, algs[a], 10);
    bw_limiter_stats_t s;
    bw_permit_t p[5], q;
    for (int i = 0; i < 5; i++)
      p[i] = take(lim);
    bw_clock_manual_advance(clock, 100 * MS);
    give(lim, &p[0], BW_LIMIT_DROPPED);
    assert_u64_eq(bw_limiter_limit(lim), 9); /* floor(10 * 0.9) */
    for (int i = 1; i < 5; i++)
      give(lim, &p[i], BW_LIMIT_DROPPED);
    bw_limiter_stats(lim, &s);
    assert_u64_eq(s.limit, 9); /* the same event */
    assert_u64_eq(s.drops, 5);
    q = take(lim);
    give(lim, &q, BW_LIMIT_DROPPED);
    /* a new event: floor(9 * 0.9) = 8 (Gradient2: 9 * 0.9 = 8.1) */
    assert_u64_eq(bw_limiter_limit(lim), 8);
    bw_limiter_free(lim);
    bw_clock_free(clock);
  }
}

/* AIMD: a drop backs off from the limit in force when the dropped call was
 * admitted, if the limit grew since (slow start outran the signal). */
static void aimd_backs_off_from_the_limit_at_acquire(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_limiter_t *lim = limiter_at(clock, BW_LIMITER_AIMD, 10);
  bw_permit_t held[10], p;
  (void)state;
  for (int i = 0; i < 10; i++)
    held[i] = take(lim); /* admitted at limit 10 */
  /* Four successes, each acquired with 10 in flight (saturated): 10 -> 14. */
  give(lim, &held[9], BW_LIMIT_SUCCESS);
  for (int i = 0; i < 2; i++) {
    p = take(lim);
    give(lim, &p, BW_LIMIT_SUCCESS);
  }
  assert_u64_eq(bw_limiter_limit(lim), 13);
  p = take(lim);
  give(lim, &p, BW_LIMIT_SUCCESS);
  assert_u64_eq(bw_limiter_limit(lim), 14);
  give(lim, &held[0], BW_LIMIT_DROPPED);
  assert_u64_eq(bw_limiter_limit(lim), 9); /* floor(10 * 0.9), not 12 */
  for (int i = 1; i < 9; i++)
    give(lim, &held[i], BW_LIMIT_IGNORED);
  bw_limiter_free(lim);
  bw_clock_free(clock);
}

/* AIMD: +1 per success until the first decrease (slow start), then +1 per
 * `limit` saturated successes (one per round trip). */
static void aimd_adds_one_per_limit_successes_after_a_drop(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_limiter_t *lim = limiter_at(clock, BW_LIMITER_AIMD, 10);
  bw_permit_t held[8], p;
  (void)state;
  p = take(lim);
  give(lim, &p, BW_LIMIT_DROPPED);
  assert_u64_eq(bw_limiter_limit(lim), 9);
  for (int i = 0; i < 8; i++)
    held[i] = take(lim);
  for (int i = 0; i < 8; i++) { /* acquired with 9 in flight: saturated */
    p = take(lim);
    give(lim, &p, BW_LIMIT_SUCCESS);
    assert_u64_eq(bw_limiter_limit(lim), 9);
  }
  p = take(lim);
  give(lim, &p, BW_LIMIT_SUCCESS); /* the 9th */
  assert_u64_eq(bw_limiter_limit(lim), 10);
  for (int i = 0; i < 8; i++)
    give(lim, &held[i], BW_LIMIT_IGNORED);
  bw_limiter_free(lim);
  bw_clock_free(clock);
}

/* ==== the closed-loop gate =============================================== */

typedef struct run_s {
  bw_sim_gate_results_t r;
  uint32_t samples;
} run_t;

static void count_sample(void *user, int64_t now_ns, uint32_t limit,
                         uint32_t partner_in_flight) {
  (void)now_ns;
  (void)limit;
  (void)partner_in_flight;
  ((run_t *)user)->samples++;
}

static run_t run_gate(bw_limiter_algorithm_t alg, uint32_t clients,
                      int64_t duration_ms) {
  bw_error_t err;
  bw_sim_t *sim = bw_sim_new(NULL, &err);
  bw_sim_partner_t *partner;
  bw_limiter_config_t lc;
  bw_limiter_t *lim;
  bw_sim_gate_config_t gc;
  run_t run;
  assert_non_null(sim);
  partner = bw_sim_partner_new(NULL, &err); /* the Polly lab: capacity 400 */
  assert_non_null(partner);
  bw_limiter_config_init(&lc);
  lc.algorithm = alg;
  lc.max_limit = 1000;
  lc.clock = bw_sim_clock(sim);
  lim = bw_limiter_new(&lc, &err);
  assert_non_null(lim);
  bw_sim_gate_config_init(&gc);
  gc.clients = clients;
  gc.duration_ms = duration_ms;
  gc.on_sample = count_sample;
  gc.userdata = &run;
  memset(&run, 0, sizeof(run));
  assert_status(bw_sim_gate_run(sim, partner, bw_limiter_as_limit(lim), &gc,
                                &run.r, &err),
                BW_OK);
  assert_u64_eq(bw_limit_in_flight(bw_limiter_as_limit(lim)), 0); /* drained */
  bw_limiter_free(lim);
  bw_sim_partner_free(partner);
  bw_sim_free(sim);
  return run;
}

static void the_gate_conserves_calls_and_is_deterministic(void **state) {
  run_t a = run_gate(BW_LIMITER_AIMD, 100, 5000);
  run_t b = run_gate(BW_LIMITER_AIMD, 100, 5000);
  (void)state;
  assert_u64_eq(a.r.asks, a.r.network_calls + a.r.refused);
  assert_u64_eq(a.r.network_calls, a.r.ok + a.r.throttled + a.r.timeouts);
  /* 100 clients never reach the capacity: every call is a fast 200 */
  assert_u64_eq(a.r.ok, a.r.network_calls);
  assert_true(a.r.network_calls > 100 * 5000 / 180);
  assert_u64_eq(a.r.partner_max_in_flight, 100);
  assert_u64_eq(a.samples, 11); /* 0, 0.5, ..., 5 s */
  assert_int_equal(memcmp(&a.r, &b.r, sizeof(a.r)), 0);
}

static void the_gate_refuses_bad_configuration(void **state) {
  bw_error_t err;
  bw_sim_t *sim = bw_sim_new(NULL, &err);
  bw_sim_partner_t *partner = bw_sim_partner_new(NULL, &err);
  bw_limiter_t *lim = limiter_at(NULL, BW_LIMITER_AIMD, 10);
  bw_sim_gate_config_t gc;
  bw_sim_gate_results_t r;
  (void)state;
  bw_sim_gate_config_init(&gc);
  assert_u64_eq(gc.clients, 800);
  assert_i64_eq(gc.duration_ms, 60000);
  assert_i64_eq(gc.timeout_ms, 2000);
  assert_i64_eq(gc.backoff_ms, 10);
  gc.band_hi = 1;
  assert_status(
      bw_sim_gate_run(sim, partner, bw_limiter_as_limit(lim), &gc, &r, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "band_hi");
  assert_status(bw_sim_gate_run(sim, partner, NULL, NULL, &r, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "gate");
  bw_limiter_free(lim);
  bw_sim_partner_free(partner);
  bw_sim_free(sim);
}

/* ==== issue 4's acceptance =============================================== */

static void settles_near_the_capacity(bw_limiter_algorithm_t alg) {
  run_t run = run_gate(alg, 800, 60000);
  const bw_sim_gate_results_t *r = &run.r;
  /* within +-15 % of 400 by 10 s, and there to the end */
  assert_true(r->settled_ns >= 0);
  assert_true(r->settled_ns <= 10 * BW_NS_PER_S);
  assert_true(r->limit_min_after_settle >= 340);
  assert_true(r->limit_max_after_settle <= 460);
  /* >= 99 % of the network calls succeed */
  assert_true(r->network_calls > 0);
  assert_true((double)r->ok >= 0.99 * (double)r->network_calls);
  /* the partner never holds more than 460 once settled */
  assert_true(r->max_in_flight_after_settle <= 460);
}

static void aimd_settles_near_the_capacity(void **state) {
  (void)state;
  settles_near_the_capacity(BW_LIMITER_AIMD);
}
static void gradient2_settles_near_the_capacity(void **state) {
  (void)state;
  settles_near_the_capacity(BW_LIMITER_GRADIENT2);
}
static void vegas_settles_near_the_capacity(void **state) {
  (void)state;
  settles_near_the_capacity(BW_LIMITER_VEGAS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_decrease_per_congestion_event),
      cmocka_unit_test(aimd_backs_off_from_the_limit_at_acquire),
      cmocka_unit_test(aimd_adds_one_per_limit_successes_after_a_drop),
      cmocka_unit_test(the_gate_conserves_calls_and_is_deterministic),
      cmocka_unit_test(the_gate_refuses_bad_configuration),
      cmocka_unit_test(aimd_settles_near_the_capacity),
      cmocka_unit_test(gradient2_settles_near_the_capacity),
      cmocka_unit_test(vegas_settles_near_the_capacity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Specification tests: the simulator's hedged client (sim.h, "the hedged
 * client") and the lab's hedging case (lab.h). Partners whose latencies are
 * fixed (ok_min = ok_max, tail_ratio 0 or 1) make every time exact; the
 * seeded runs check the conservation laws and the acceptance target: in
 * virtual time, against a partner with a 5 % slow tail, p99 falls by at
 * least 2x for at most 10 % extra calls, on several seeds. */
#include "bw_test.h"
#include "breakwater/lab.h"
#include "breakwater/sim.h"

#define MS BW_NS_PER_MS

typedef struct run_s {
  bw_sim_t *sim;
  bw_sim_partner_t *partner;
  bw_hedge_t *hedge;
  bw_sim_hedge_results_t r;
} run_t;

/* A partner whose every answer takes `ms` (a 200). */
static bw_sim_partner_config_t fixed_partner(int64_t ms) {
  bw_sim_partner_config_t p;
  bw_sim_partner_config_init(&p);
  p.tail_ratio = 1.0;
  p.tail_ms = ms;
  return p;
}

static void run(run_t *x, const bw_sim_partner_config_t *pc,
                bw_sim_hedge_config_t *hc, const bw_hedge_config_t *h) {
  bw_error_t err;
  memset(x, 0, sizeof *x);
  x->sim = bw_sim_new(NULL, NULL);
  x->partner = bw_sim_partner_new(pc, NULL);
  assert_non_null(x->sim);
  assert_non_null(x->partner);
  if (h != NULL) {
    x->hedge = bw_hedge_new(h, &err);
    assert_non_null(x->hedge);
    hc->hedge = x->hedge;
  }
  if (bw_sim_hedge_run(x->sim, x->partner, hc, &x->r, &err) != BW_OK)
    fail_msg("bw_sim_hedge_run: %s: %s", err.field, err.message);
  /* Conservation, whatever the run. */
  assert_u64_eq(x->r.successes + x->r.failed, x->r.requests);
  assert_u64_eq(x->r.network_calls, x->r.requests + x->r.hedges);
  assert_true(x->r.hedge_wins <= x->r.hedges);
  bw_sim_partner_stats_t ps;
  bw_sim_partner_stats(x->partner, &ps);
  assert_u64_eq(ps.in_flight, 0); /* abandoned copies were released too */
  assert_u64_eq(ps.received, x->r.network_calls);
}

static void done(run_t *x) {
  bw_sim_free(x->sim);
  bw_sim_partner_free(x->partner);
  bw_hedge_free(x->hedge);
}

static bw_hedge_config_t fixed_hedge(int64_t ms, uint32_t max) {
  bw_hedge_config_t h;
  bw_hedge_config_init(&h);
  h.delay = BW_HEDGE_FIXED;
  h.delay_ms = ms;
  h.max_hedges = max;
  return h;
}

static bw_sim_hedge_config_t one_request(void) {
  bw_sim_hedge_config_t c;
  bw_sim_hedge_config_init(&c);
  c.requests = 1;
  return c;
}

static void defaults(void **state) {
  bw_sim_hedge_config_t c;
  bw_lab_hedge_config_t l;
  (void)state;
  bw_sim_hedge_config_init(&c);
  assert_u64_eq(c.requests, 10000);
  assert_dbl_eq(c.rate_per_s, 100.0, 0);
  assert_i64_eq(c.timeout_ms, 10000);
  assert_u64_eq(c.seed, 4);
  assert_null(c.hedge);
  assert_true(c.idempotent);
  bw_lab_hedge_config_init(&l);
  assert_dbl_eq(l.partner.tail_ratio, 0.05, 0);
  assert_i64_eq(l.partner.tail_ms, 2000);
  assert_u64_eq(l.partner.capacity, 400);
  assert_dbl_eq(l.budget_percent, 10.0, 0);
  assert_int_equal(l.hedge.delay, BW_HEDGE_QUANTILE);
  assert_dbl_eq(l.hedge.quantile, 0.95, 0);
}

/* Every copy takes 1000 ms; a hedge at 300 ms does not help: the first copy
 * answers first, at 1000 ms, and the hedge (answering at 1300 ms) is
 * abandoned. */
static void the_first_good_answer_wins_and_the_other_is_abandoned(
    void **state) {
  bw_sim_partner_config_t p = fixed_partner(1000);
  bw_sim_hedge_config_t c = one_request();
  bw_hedge_config_t h = fixed_hedge(300, 1);
  run_t x;
  (void)state;
  run(&x, &p, &c, &h);
  assert_u64_eq(x.r.successes, 1);
  assert_u64_eq(x.r.network_calls, 2);
  assert_u64_eq(x.r.hedges, 1);
  assert_u64_eq(x.r.hedge_wins, 0);
  assert_i64_eq(x.r.latency_p99_ns, 1000 * MS);
  /* The partner kept the loser until its own latency ended. */
  assert_i64_eq(bw_sim_now_ns(x.sim), 1300 * MS);
  done(&x);
}

/* Under-capacity answers of exactly 100 ms, with no tail: a 300 ms hedge
 * sends nothing (the answer cancels its timer). */
static void a_fast_answer_sends_no_hedge(void **state) {
  bw_sim_partner_config_t p;
  bw_sim_hedge_config_t c;
  bw_hedge_config_t h = fixed_hedge(300, 1);
  run_t x;
  (void)state;
  bw_sim_partner_config_init(&p);
  p.ok_min_ms = p.ok_max_ms = 100;
  bw_sim_hedge_config_init(&c);
  c.requests = 500;
  run(&x, &p, &c, &h);
  assert_u64_eq(x.r.successes, 500);
  assert_u64_eq(x.r.network_calls, 500);
  assert_u64_eq(x.r.hedges, 0);
  assert_i64_eq(x.r.latency_max_ns, 100 * MS);
  done(&x);
}

/* Copies time out at 500 ms: the hedges are sent at 200 and 400 ms, and the
 * request fails when the last one times out, at 900 ms. */
static void when_every_copy_fails_the_request_fails_after_the_last(
    void **state) {
  bw_sim_partner_config_t p = fixed_partner(1000);
  bw_sim_hedge_config_t c = one_request();
  bw_hedge_config_t h = fixed_hedge(200, 2);
  run_t x;
  (void)state;
  c.timeout_ms = 500;
  run(&x, &p, &c, &h);
  assert_u64_eq(x.r.failed, 1);
  assert_u64_eq(x.r.network_calls, 3);
  assert_i64_eq(x.r.latency_max_ns, 900 * MS);
  done(&x);
}

/* A copy that fails before the hedge is due, with no other copy out, sends
 * the hedge at once: the first times out at 500 ms (the hedge was due at
 * 800), the hedge goes at 500 and times out at 1000. */
static void a_failure_with_nothing_else_out_hedges_at_once(void **state) {
  bw_sim_partner_config_t p = fixed_partner(1000);
  bw_sim_hedge_config_t c = one_request();
  bw_hedge_config_t h = fixed_hedge(800, 1);
  run_t x;
  (void)state;
  c.timeout_ms = 500;
  run(&x, &p, &c, &h);
  assert_u64_eq(x.r.failed, 1);
  assert_u64_eq(x.r.network_calls, 2);
  assert_i64_eq(x.r.latency_max_ns, 1000 * MS);
  done(&x);
}

static void non_idempotent_requests_are_not_hedged(void **state) {
  bw_sim_partner_config_t p = fixed_partner(1000);
  bw_sim_hedge_config_t c = one_request();
  bw_hedge_config_t h = fixed_hedge(300, 1);
  run_t x;
  (void)state;
  c.idempotent = false;
  c.requests = 10;
  run(&x, &p, &c, &h);
  assert_u64_eq(x.r.network_calls, 10);
  assert_u64_eq(x.r.hedges, 0);
  done(&x);
}

static void bad_configurations_are_refused_naming_the_field(void **state) {
  bw_sim_t *sim = bw_sim_new(NULL, NULL);
  bw_sim_partner_t *p = bw_sim_partner_new(NULL, NULL);
  bw_sim_hedge_config_t c;
  bw_sim_hedge_results_t r;
  bw_lab_hedge_config_t l;
  bw_lab_hedge_results_t lr;
  bw_error_t err;
  (void)state;
  bw_sim_hedge_config_init(&c);
  c.requests = 0;
  assert_status(bw_sim_hedge_run(sim, p, &c, &r, &err), BW_E_INVAL);
  assert_string_equal(err.field, "requests");
  bw_sim_hedge_config_init(&c);
  c.rate_per_s = 0;
  assert_status(bw_sim_hedge_run(sim, p, &c, &r, &err), BW_E_INVAL);
  assert_string_equal(err.field, "rate_per_s");
  bw_sim_hedge_config_init(&c);
  c.timeout_ms = 0;
  assert_status(bw_sim_hedge_run(sim, p, &c, &r, &err), BW_E_INVAL);
  assert_string_equal(err.field, "timeout_ms");
  assert_status(bw_sim_hedge_run(NULL, p, &c, &r, &err), BW_E_INVAL);
  assert_string_equal(err.field, "sim");
  assert_status(bw_sim_hedge_run(sim, NULL, &c, &r, &err), BW_E_INVAL);
  assert_status(bw_sim_hedge_run(sim, p, NULL, &r, &err), BW_E_INVAL);
  assert_status(bw_sim_hedge_run(sim, p, &c, NULL, &err), BW_E_INVAL);
  bw_lab_hedge_config_init(&l);
  l.partner.tail_ms = -3;
  assert_status(bw_lab_hedge_run(&l, &lr, &err), BW_E_INVAL);
  assert_string_equal(err.field, "partner.tail_ms");
  bw_lab_hedge_config_init(&l);
  l.hedge.quantile = 1.0;
  assert_status(bw_lab_hedge_run(&l, &lr, &err), BW_E_INVAL);
  assert_string_equal(err.field, "hedge.quantile");
  bw_lab_hedge_config_init(&l);
  l.budget_percent = 101;
  assert_status(bw_lab_hedge_run(&l, &lr, &err), BW_E_INVAL);
  assert_string_equal(err.field, "budget_percent");
  bw_lab_hedge_config_init(&l);
  l.seed = 0;
  assert_status(bw_lab_hedge_run(&l, &lr, &err), BW_E_INVAL);
  assert_string_equal(err.field, "seed");
  assert_status(bw_lab_hedge_run(NULL, &lr, &err), BW_E_INVAL);
  assert_status(bw_lab_hedge_run(&l, NULL, &err), BW_E_INVAL);
  bw_sim_free(sim);
  bw_sim_partner_free(p);
}

/* The acceptance target on seeds 1..5: p99 at least 2x lower, at most 10 %
 * extra calls, every request served. */
static void against_a_five_percent_tail_p99_halves_for_under_ten_percent(
    void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 5; seed++) {
    bw_lab_hedge_config_t l;
    bw_lab_hedge_results_t r;
    bw_error_t err;
    bw_lab_hedge_config_init(&l);
    l.seed = seed;
    if (bw_lab_hedge_run(&l, &r, &err) != BW_OK)
      fail_msg("bw_lab_hedge_run: %s: %s", err.field, err.message);
    assert_u64_eq(r.off.requests, 10000);
    assert_u64_eq(r.off.successes, 10000);
    assert_u64_eq(r.on.successes, 10000);
    assert_u64_eq(r.off.hedges, 0);
    /* The same partner seed: the baseline's tail is about 5 %. */
    assert_true(r.off.partner_tail >= 400 && r.off.partner_tail <= 600);
    assert_true(r.off.latency_p99_ns >= 2 * r.on.latency_p99_ns);
    assert_true(r.on.hedges * 10 <= r.on.requests);
    assert_true(r.on.hedge_wins > 0);
  }
}

static void the_lab_case_is_deterministic(void **state) {
  bw_lab_hedge_config_t l;
  bw_lab_hedge_results_t a, b;
  (void)state;
  bw_lab_hedge_config_init(&l);
  l.requests = 2000;
  assert_status(bw_lab_hedge_run(&l, &a, NULL), BW_OK);
  assert_status(bw_lab_hedge_run(&l, &b, NULL), BW_OK);
  assert_memory_equal(&a, &b, sizeof a);
  l.seed = 5;
  assert_status(bw_lab_hedge_run(&l, &b, NULL), BW_OK);
  assert_memory_not_equal(&a.on, &b.on, sizeof a.on);
}

/* A budget of 0 % refuses every hedge: the hedged run is the baseline. */
static void a_zero_budget_refuses_every_hedge(void **state) {
  bw_lab_hedge_config_t l;
  bw_lab_hedge_results_t r;
  (void)state;
  bw_lab_hedge_config_init(&l);
  l.requests = 2000;
  l.budget_percent = 0;
  assert_status(bw_lab_hedge_run(&l, &r, NULL), BW_OK);
  assert_u64_eq(r.on.hedges, 0);
  assert_true(r.on.hedges_denied > 0);
  assert_i64_eq(r.on.latency_p99_ns, r.off.latency_p99_ns);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults),
      cmocka_unit_test(the_first_good_answer_wins_and_the_other_is_abandoned),
      cmocka_unit_test(a_fast_answer_sends_no_hedge),
      cmocka_unit_test(when_every_copy_fails_the_request_fails_after_the_last),
      cmocka_unit_test(a_failure_with_nothing_else_out_hedges_at_once),
      cmocka_unit_test(non_idempotent_requests_are_not_hedged),
      cmocka_unit_test(bad_configurations_are_refused_naming_the_field),
      cmocka_unit_test(
          against_a_five_percent_tail_p99_halves_for_under_ten_percent),
      cmocka_unit_test(the_lab_case_is_deterministic),
      cmocka_unit_test(a_zero_budget_refuses_every_hedge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Specification tests: the lab (lab.h) — the Polly lab's modes run in virtual
 * time against the simulated partner. Exact and deterministic: a run is a
 * function of its configuration. */
#include "breakwater/lab.h"
#include "bw_test.h"

typedef struct trace_s {
  uint64_t hash; /* FNV-1a over every sample's fields */
  uint32_t samples;
  uint32_t max_in_flight;
  int64_t last_t_ms;
  bool monotonic;
} trace_t;

static void mix(uint64_t *h, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    *h ^= (v >> (8 * i)) & 0xff;
    *h *= 1099511628211ull;
  }
}

static void on_sample(void *userdata, const bw_lab_sample_t *s) {
  trace_t *t = userdata;
  if (t->samples > 0 && s->t_ms <= t->last_t_ms) t->monotonic = false;
  t->last_t_ms = s->t_ms;
  t->samples++;
  if (s->partner_in_flight > t->max_in_flight)
    t->max_in_flight = s->partner_in_flight;
  mix(&t->hash, (uint64_t)s->t_ms);
  mix(&t->hash, s->partner_in_flight);
  mix(&t->hash, s->ok);
  mix(&t->hash, s->throttled);
  mix(&t->hash, s->timeouts);
  mix(&t->hash, s->network_calls);
  mix(&t->hash, s->completed);
  mix(&t->hash, (uint64_t)s->breaker);
  mix(&t->hash, s->limit);
}

static bw_lab_results_t run(bw_lab_mode_t mode, uint32_t clients, uint64_t seed,
                            trace_t *trace) {
  bw_lab_run_config_t cfg;
  bw_lab_results_t r;
  bw_error_t err;
  bw_lab_run_config_init(&cfg);
  cfg.mode = mode;
  cfg.clients = clients;
  cfg.seed = seed;
  if (trace != NULL) {
    memset(trace, 0, sizeof *trace);
    trace->hash = 1469598103934665603ull;
    trace->monotonic = true;
    cfg.on_sample = on_sample;
    cfg.userdata = trace;
  }
  if (bw_lab_run_virtual(&cfg, &r, &err) != BW_OK)
    fail_msg("bw_lab_run_virtual: %s", err.message);
  return r;
}

/* Every logical request ends exactly one way; every attempt the client
 * sent is one the partner received. */
static void assert_conserved(const bw_lab_results_t *r, uint32_t clients) {
  const bw_sim_results_t *s = &r->sim;
  assert_u64_eq(s->requests, clients);
  assert_u64_eq(s->completed, clients);
  assert_u64_eq(s->successes + s->failed_429 + s->failed_timeout +
                    s->failed_status + s->rejected + s->gave_up,
                s->completed);
  uint64_t by_kind = 0;
  for (int k = 0; k < BW_SIM_REJECT__COUNT; k++)
    by_kind += s->rejected_by[k];
  assert_u64_eq(by_kind, s->rejected);
  assert_u64_eq(s->network_calls, s->partner_received);
  assert_u64_eq(s->attempts_200 + s->attempts_429 + s->attempts_other +
                    s->attempts_timeout,
                s->network_calls);
}

static void same_seed_same_results_and_timeline(void **state) {
  (void)state;
  for (int m = 0; m < BW_LAB__COUNT; m++) {
    trace_t t1, t2;
    bw_lab_results_t a = run((bw_lab_mode_t)m, 800, 4, &t1);
    bw_lab_results_t b = run((bw_lab_mode_t)m, 800, 4, &t2);
    assert_memory_equal(&a, &b, sizeof a);
    assert_u64_eq(t1.hash, t2.hash);
    assert_u64_eq(t1.samples, t2.samples);
    assert_true(t1.samples > 0);
    assert_true(t1.monotonic);
    assert_conserved(&a, 800);
    /* The timeline saw the partner's peak (sampled, so at most the peak). */
    assert_true(t1.max_in_flight <= a.sim.partner_max_in_flight);
  }
  /* Another seed moves the draws. */
  bw_lab_results_t x = run(BW_LAB_NAIVE, 800, 4, NULL);
  bw_lab_results_t y = run(BW_LAB_NAIVE, 800, 5, NULL);
  assert_true(memcmp(&x, &y, sizeof x) != 0);
}

/* The acceptance: at 800 clients against a capacity of 400, the
 * breakwater mode succeeds for >= 99 % with <= 1.1 network calls per
 * logical request. */
static void breakwater_mode_calms_the_storm(void **state) {
  (void)state;
  bw_lab_results_t r = run(BW_LAB_BREAKWATER, 800, 4, NULL);
  assert_conserved(&r, 800);
  assert_true(r.sim.successes * 100 >= 99 * r.sim.requests);
  assert_true(r.sim.network_calls * 10 <= 11 * r.sim.requests);
  /* The limiter kept the partner at or under its capacity. */
  assert_true(r.sim.partner_max_in_flight <= 400);
  assert_true(r.final_limit >= 1);
}

/* The naive loop multiplies calls: every failed attempt is repeated at
 * once, and the partner is pushed to all 800 in flight. */
static void naive_mode_multiplies_calls(void **state) {
  (void)state;
  bw_lab_results_t n = run(BW_LAB_NAIVE, 800, 4, NULL);
  bw_lab_results_t b = run(BW_LAB_BREAKWATER, 800, 4, NULL);
  assert_conserved(&n, 800);
  assert_true(n.sim.network_calls * 100 >= 120 * n.sim.requests);
  assert_true(n.sim.network_calls > b.sim.network_calls);
  assert_u64_eq(n.sim.partner_max_in_flight, 800);
  /* No attempt beyond the third. */
  assert_true(n.sim.network_calls <= 3 * n.sim.requests);
}

/* Polly's pipeline under a harder storm: once the breaker opens, calls are
 * rejected without a network call, and a rejection is never retried. */
static void polly_mode_breaker_rejections_make_no_calls(void **state) {
  (void)state;
  bw_lab_results_t p = run(BW_LAB_POLLY, 4000, 4, NULL);
  assert_conserved(&p, 4000);
  assert_true(p.breaker_opens >= 1);
  assert_true(p.sim.rejected_by[BW_SIM_REJECT_BREAKER] >= 1);
  /* Each rejected request made at most the attempts before the rejection;
   * each breaker rejection ended a request (no retry after it). */
  assert_u64_eq(p.sim.rejected_by[BW_SIM_REJECT_BREAKER], p.breaker_rejected);
  assert_true(p.sim.network_calls <= 3 * p.sim.requests);
}

/* The oracle is the ideal the other modes are measured against: a fixed
 * limit at the partner's true capacity (the lab tells it the capacity).
 * It never puts the partner over capacity, so every call is fast, every
 * request succeeds, and no request costs more than one call. */
static void oracle_mode_never_exceeds_capacity(void **state) {
  (void)state;
  static const struct {
    uint32_t clients, capacity;
    bw_sim_arrival_t arrival;
  } cases[] = {
      {800, 400, BW_SIM_ARRIVAL_BURST},  {1600, 400, BW_SIM_ARRIVAL_BURST},
      {8000, 400, BW_SIM_ARRIVAL_BURST}, {800, 25, BW_SIM_ARRIVAL_BURST},
      {8000, 400, BW_SIM_ARRIVAL_RAMP},  {40, 1, BW_SIM_ARRIVAL_BURST}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (uint64_t seed = 1; seed <= 3; seed++) {
      bw_lab_run_config_t cfg;
      bw_lab_results_t r;
      bw_error_t err;
      bw_lab_run_config_init(&cfg);
      cfg.mode = BW_LAB_ORACLE;
      cfg.clients = cases[i].clients;
      cfg.partner.capacity = cases[i].capacity;
      cfg.arrival = cases[i].arrival;
      cfg.seed = seed;
      if (bw_lab_run_virtual(&cfg, &r, &err) != BW_OK)
        fail_msg("bw_lab_run_virtual: %s", err.message);
      assert_conserved(&r, cases[i].clients);
      assert_true(r.sim.partner_max_in_flight <= cases[i].capacity);
      assert_u64_eq(r.sim.successes, cases[i].clients);
      assert_u64_eq(r.sim.network_calls, cases[i].clients);
      assert_u64_eq(r.sim.attempts_200, cases[i].clients);
      assert_u64_eq(r.final_limit, 0); /* no adaptive limiter */
    }
  }
  /* The kit: a bulkhead at oracle_limit, nothing else but the pipeline. */
  bw_lab_kit_config_t kc;
  bw_lab_kit_t kit;
  bw_error_t err;
  bw_lab_kit_config_init(&kc);
  kc.mode = BW_LAB_ORACLE;
  kc.oracle_limit = 37;
  assert_status(bw_lab_kit_init(&kit, &kc, &err), BW_OK);
  assert_non_null(kit.bulkhead);
  assert_null(kit.limiter);
  assert_null(kit.retry);
  assert_null(kit.breaker);
  assert_int_equal(bw_limit_current(bw_bulkhead_as_limit(kit.bulkhead)), 37);
  bw_lab_kit_destroy(&kit);
  kc.oracle_limit = 0;
  bwt_prefill_error(&err);
  assert_status(bw_lab_kit_init(&kit, &kc, &err), BW_E_INVAL);
  assert_true(bwt_error_names(&err, "oracle_limit"));
}

/* The breakwater kit's limiter sits inside the retry: each attempt takes a
 * slot of its own. A call waiting out its backoff holds none, and its retry
 * is admitted under the limit in force then: here lowered to 18 by the
 * congestion its first attempt met, and those 18 slots are all taken
 * meanwhile, so the retry waits for one (the limit's poll,
 * 5 ms) and goes out only once a slot is freed. Exact, on a manual clock. */
static void breakwater_mode_retry_takes_a_new_slot(void **state) {
  (void)state;
  const int64_t ms = BW_NS_PER_MS, t0 = BWT_T0_NS;
  bw_clock_t *clk = bw_clock_manual_new(t0);
  bw_lab_kit_config_t kc;
  bw_lab_kit_t kit;
  bw_error_t err;
  bw_limiter_stats_t ls;
  bw_pipeline_call_t call;
  bw_permit_t held[20];
  bw_lab_kit_config_init(&kc);
  kc.mode = BW_LAB_BREAKWATER;
  kc.clock = clk;
  assert_status(bw_lab_kit_init(&kit, &kc, &err), BW_OK);
  assert_int_equal(bw_limiter_limit(kit.limiter), 20);
  /* Two other calls fail first: sparse drops, within the mode's
   * drop_tolerance (0.1 x 20 = 2 a round), lower nothing. */
  for (int i = 0; i < 2; i++) {
    assert_status(bw_limiter_try_acquire(kit.limiter, &held[i]), BW_OK);
    assert_status(bw_limiter_release(kit.limiter, &held[i], BW_LIMIT_DROPPED),
                  BW_OK);
  }
  bw_limiter_stats(kit.limiter, &ls);
  assert_int_equal(ls.limit, 20);
  assert_int_equal(ls.tolerated_drops, 2);
  assert_int_equal(
      bw_pipeline_begin_at(kit.pipeline, &call, bw_deadline_none(), t0),
      BW_STEP_ATTEMPT);
  bw_limiter_stats(kit.limiter, &ls);
  assert_int_equal(ls.in_flight, 1);
  /* A 503 after 100 ms: the attempt's slot is given back, and the round's
   * third drop is congestion. */
  bw_clock_manual_set(clk, t0 + 100 * ms);
  int step = bw_pipeline_report(&call, BW_VERDICT_TRANSIENT,
                                BW_RETRY_AFTER_NONE, t0 + 100 * ms);
  assert_int_equal(step, BW_STEP_WAIT);
  assert_int_equal(call.delay_ms, 107); /* full jitter over 200 ms, seed 4 */
  bw_limiter_stats(kit.limiter, &ls);
  assert_int_equal(ls.in_flight, 0); /* the backoff holds no slot */
  assert_int_equal(ls.drops, 3);
  assert_int_equal(ls.tolerated_drops, 2);
  assert_int_equal(ls.limit, 18); /* 20 x 0.9 */
  /* Other calls take all 18 slots of the lowered limit meanwhile. */
  bw_clock_manual_set(clk, t0 + 150 * ms);
  for (int i = 0; i < 18; i++)
    assert_status(bw_limiter_try_acquire(kit.limiter, &held[i]), BW_OK);
  /* The retry asks for a slot after its backoff: none, it polls. */
  bw_clock_manual_set(clk, t0 + 207 * ms);
  assert_int_equal(bw_pipeline_resume(&call, t0 + 207 * ms), BW_STEP_WAIT);
  assert_int_equal(call.delay_ms, 5);
  assert_int_equal(call.attempt, 1);
  /* One call ends: the retry takes its slot at the next poll. */
  bw_clock_manual_set(clk, t0 + 210 * ms);
  assert_status(bw_limiter_release(kit.limiter, &held[17], BW_LIMIT_SUCCESS),
                BW_OK);
  bw_clock_manual_set(clk, t0 + 212 * ms);
  assert_int_equal(bw_pipeline_resume(&call, t0 + 212 * ms), BW_STEP_ATTEMPT);
  assert_int_equal(call.attempt, 2);
  bw_limiter_stats(kit.limiter, &ls);
  assert_int_equal(ls.in_flight, 18);
  assert_int_equal(ls.admitted, 22); /* 2 failed, 2 attempts + 18 others */
  assert_int_equal(ls.rejected, 1);
  bw_clock_manual_set(clk, t0 + 342 * ms);
  assert_int_equal(bw_pipeline_report(&call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE,
                                      t0 + 342 * ms),
                   BW_STEP_DONE);
  assert_int_equal(call.failure, BW_FAILURE_NONE);
  for (int i = 0; i < 17; i++)
    assert_status(bw_limiter_release(kit.limiter, &held[i], BW_LIMIT_SUCCESS),
                  BW_OK);
  bw_limiter_stats(kit.limiter, &ls);
  assert_int_equal(ls.in_flight, 0);
  bw_clock_free(clk);
  bw_lab_kit_destroy(&kit);
}

/* --sre-k: the breakwater mode with a client-side throttle (throttle.h)
 * inside the retry. Every attempt entered it, so once the run is over
 * (nothing in flight) the throttle's conservation law holds and the
 * attempts that went out are exactly its accepts and rejections. */
typedef struct throttle_check_s {
  int calls;
  bw_throttle_stats_t ts;
  bw_pipeline_stats_t ps;
} throttle_check_t;

static void on_kit_throttle(void *userdata, const bw_lab_kit_t *kit) {
  throttle_check_t *c = userdata;
  c->calls++;
  assert_non_null(kit->throttle);
  bw_throttle_stats(kit->throttle, &c->ts);
  bw_pipeline_stats(kit->pipeline, &c->ps);
}

static void breakwater_mode_with_sre_k_runs_the_throttle(void **state) {
  (void)state;
  bw_lab_run_config_t cfg;
  bw_lab_results_t r;
  bw_error_t err;
  throttle_check_t c;
  memset(&c, 0, sizeof c);
  bw_lab_run_config_init(&cfg);
  cfg.clients = 1600;
  /* A capacity of 25 under an initial limit of 20: the limiter's first
   * growth step passes it, so the partner answers 429s (at capacity 400
   * the limiter's startup meets too few of them for K = 1 to act). */
  cfg.partner.capacity = 25;
  cfg.partner.slow_min_ms = 5; /* fast rejections */
  cfg.partner.slow_max_ms = 20;
  cfg.sre_k = 1.0;
  cfg.seed = 3;
  cfg.on_kit = on_kit_throttle;
  cfg.kit_userdata = &c;
  if (bw_lab_run_virtual(&cfg, &r, &err) != BW_OK)
    fail_msg("bw_lab_run_virtual: %s", err.message);
  assert_int_equal(c.calls, 1);
  assert_conserved(&r, 1600);
  assert_int_equal(c.ts.requests, c.ts.accepts + c.ts.rejected +
                                      c.ts.throttled + c.ts.withdrawn);
  assert_int_equal(c.ts.accepts + c.ts.rejected, c.ps.attempts);
  assert_int_equal(c.ts.accepts + c.ts.rejected, r.sim.network_calls);
  assert_int_equal(r.throttle_refused, c.ts.throttled);
  /* K = 1 refuses as soon as requests pass accepts: the burst's 429s made
   * it refuse some attempts, and none of those was a network call. */
  assert_true(c.ts.throttled > 0);

  /* Without sre_k there is no throttle. */
  bw_lab_kit_config_t kc;
  bw_lab_kit_t kit;
  bw_lab_kit_config_init(&kc);
  kc.mode = BW_LAB_BREAKWATER;
  assert_status(bw_lab_kit_init(&kit, &kc, &err), BW_OK);
  assert_null(kit.throttle);
  bw_lab_kit_destroy(&kit);
  kc.sre_k = 2.0;
  assert_status(bw_lab_kit_init(&kit, &kc, &err), BW_OK);
  assert_non_null(kit.throttle);
  bw_lab_kit_destroy(&kit);
  /* Out of range: named. */
  kc.sre_k = 0.5;
  bwt_prefill_error(&err);
  assert_status(bw_lab_kit_init(&kit, &kc, &err), BW_E_INVAL);
  assert_true(bwt_error_names(&err, "sre_k"));
}

/* 8,000 requests ramped over 10 s (seed 1; about 104 in flight against a
 * capacity of 400) against `partner`, in the breakwater mode: every one
 * accounted for, at least per_mille_ok of 1000 succeed, and the median
 * request waits at most 10 % longer than the oracle's on the same partner.
 * `what` names the case in the printed line. */
static void ramp_as_well_as_the_oracle(const bw_sim_partner_config_t *partner,
                                       unsigned per_mille_ok,
                                       const char *what) {
  bw_lab_run_config_t cfg;
  bw_lab_results_t bw, oracle;
  bw_error_t err;
  bw_lab_run_config_init(&cfg);
  cfg.clients = 8000;
  cfg.arrival = BW_SIM_ARRIVAL_RAMP;
  cfg.ramp_ms = 10000;
  cfg.seed = 1;
  cfg.partner = *partner;
  cfg.mode = BW_LAB_ORACLE;
  if (bw_lab_run_virtual(&cfg, &oracle, &err) != BW_OK)
    fail_msg("bw_lab_run_virtual: %s", err.message);
  cfg.mode = BW_LAB_BREAKWATER;
  if (bw_lab_run_virtual(&cfg, &bw, &err) != BW_OK)
    fail_msg("bw_lab_run_virtual: %s", err.message);
  assert_conserved(&bw, 8000);
  print_message("%s: %llu of 8000, p50 %.1f ms (oracle %.1f ms)\n", what,
                (unsigned long long)bw.sim.successes,
                (double)bw.sim.latency_p50_ns / 1e6,
                (double)oracle.sim.latency_p50_ns / 1e6);
  assert_true(bw.sim.successes * 1000 >= 8000u * per_mille_ok);
  assert_true(bw.sim.latency_p50_ns * 10 <= oracle.sim.latency_p50_ns * 11);
}

/* Under normal load the breakwater mode stays out of the way even when
 * the partner has a latency tail: 2 % of answers taking 1 s, or 5 % taking
 * 500 ms. The tail's calls are stuck by the limiter's standard (older than
 * twice the slowest usual answer) and its attempts are cut and retried,
 * but a steady few percent of stuck calls is no congestion, and a cut
 * attempt is no drop: every request succeeds but a few whose two attempts
 * both met the tail (at most 0.1 %), and the median request waits as long
 * as the oracle's (before, the limit fell to a few calls and 90 % of the
 * requests ran out of their deadline). */
static void breakwater_mode_ignores_a_latency_tail(void **state) {
  static const struct {
    double ratio;
    int64_t ms;
  } tails[] = {{0.02, 1000}, {0.05, 500}};
  (void)state;
  for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
    bw_lab_run_config_t cfg;
    char what[64];
    bw_lab_run_config_init(&cfg);
    cfg.partner.tail_ratio = tails[i].ratio;
    cfg.partner.tail_ms = tails[i].ms;
    snprintf(what, sizeof what, "tail %.0f %% at %lld ms", tails[i].ratio * 100,
             (long long)tails[i].ms);
    ramp_as_well_as_the_oracle(&cfg.partner, 999, what);
  }
}

/* A flaky partner (error_ratio: a share of the answers under capacity are
 * 500s), on the same ramp: the errors are retried, and sparse drops are no
 * congestion (drop_tolerance 0.1 in the breakwater mode), so every request
 * succeeds but those whose two attempts both failed (about ratio^2: at
 * most 0.1 % at 2 %, 0.5 % at 5 %), and the median request waits as long
 * as the oracle's (before, the limit fell to 1 and 88 % of the requests
 * ran out of their deadline at 2 %). */
static void breakwater_mode_keeps_its_limit_under_sparse_errors(void **state) {
  static const struct {
    double ratio;
    unsigned per_mille_ok;
  } flaky[] = {{0.02, 999}, {0.05, 995}};
  (void)state;
  for (size_t i = 0; i < sizeof flaky / sizeof flaky[0]; i++) {
    bw_lab_run_config_t cfg;
    char what[64];
    bw_lab_run_config_init(&cfg);
    cfg.partner.error_ratio = flaky[i].ratio;
    snprintf(what, sizeof what, "errors %.0f %%", flaky[i].ratio * 100);
    ramp_as_well_as_the_oracle(&cfg.partner, flaky[i].per_mille_ok, what);
  }
}

static void bad_configurations_name_the_field(void **state) {
  (void)state;
  bw_lab_run_config_t cfg;
  bw_lab_results_t r;
  bw_error_t err;
  bw_lab_run_config_init(&cfg);
  cfg.seed = 0;
  bwt_prefill_error(&err);
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_true(bwt_error_names(&err, "seed"));

  bw_lab_run_config_init(&cfg);
  cfg.partner.capacity = 0;
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_true(bwt_error_names(&err, "capacity"));

  bw_lab_run_config_init(&cfg);
  cfg.clients = 0;
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_true(bwt_error_names(&err, "requests"));

  bw_lab_run_config_init(&cfg);
  cfg.mode = (bw_lab_mode_t)7;
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_true(bwt_error_names(&err, "mode"));

  bw_lab_run_config_init(&cfg);
  cfg.attempt_timeout_ms = 0;
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_true(bwt_error_names(&err, "attempt_timeout_ms"));

  bw_lab_mode_t m;
  assert_status(bw_lab_mode_parse("polly", &m), BW_OK);
  assert_int_equal(m, BW_LAB_POLLY);
  assert_status(bw_lab_mode_parse("Polly", &m), BW_E_NOTFOUND);
  assert_status(bw_lab_mode_parse("", &m), BW_E_NOTFOUND);
  assert_string_equal(bw_lab_mode_name(BW_LAB_BREAKWATER), "breakwater");
  assert_string_equal(bw_lab_mode_name((bw_lab_mode_t)9), "unknown");
  assert_status(bw_lab_mode_parse("oracle", &m), BW_OK);
  assert_int_equal(m, BW_LAB_ORACLE);
  assert_string_equal(bw_lab_mode_name(BW_LAB_ORACLE), "oracle");
  /* The oracle and the breakwater mode hand slots off; the others poll. */
  assert_true(bw_lab_mode_hands_off(BW_LAB_ORACLE));
  assert_true(bw_lab_mode_hands_off(BW_LAB_BREAKWATER));
  assert_false(bw_lab_mode_hands_off(BW_LAB_NAIVE));
  assert_false(bw_lab_mode_hands_off(BW_LAB_POLLY));
  assert_false(bw_lab_mode_hands_off((bw_lab_mode_t)9));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_seed_same_results_and_timeline),
      cmocka_unit_test(breakwater_mode_calms_the_storm),
      cmocka_unit_test(naive_mode_multiplies_calls),
      cmocka_unit_test(polly_mode_breaker_rejections_make_no_calls),
      cmocka_unit_test(oracle_mode_never_exceeds_capacity),
      cmocka_unit_test(breakwater_mode_retry_takes_a_new_slot),
      cmocka_unit_test(breakwater_mode_with_sre_k_runs_the_throttle),
      cmocka_unit_test(breakwater_mode_ignores_a_latency_tail),
      cmocka_unit_test(breakwater_mode_keeps_its_limit_under_sparse_errors),
      cmocka_unit_test(bad_configurations_name_the_field),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

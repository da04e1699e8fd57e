/* Specification tests: the hedging policy (hedge.h) — when a call sends
 * another copy of a slow attempt, how many, the budget check, and the p95
 * tracker. Time is an input (and the budget's clock a manual one): every
 * value is exact. */
#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS

static bw_hedge_t *make(const bw_hedge_config_t *cfg) {
  bw_error_t err;
  bw_hedge_t *h = bw_hedge_new(cfg, &err);
  if (h == NULL) fail_msg("bw_hedge_new: %s: %s", err.field, err.message);
  return h;
}

static bw_hedge_config_t fixed(int64_t delay_ms, uint32_t max_hedges) {
  bw_hedge_config_t c;
  bw_hedge_config_init(&c);
  c.delay = BW_HEDGE_FIXED;
  c.delay_ms = delay_ms;
  c.max_hedges = max_hedges;
  return c;
}

static void config_init_fills_documented_defaults(void **state) {
  bw_hedge_config_t c;
  (void)state;
  bw_hedge_config_init(&c);
  assert_string_equal(c.name, "hedge");
  assert_int_equal(c.delay, BW_HEDGE_QUANTILE);
  assert_i64_eq(c.delay_ms, 200);
  assert_dbl_eq(c.quantile, 0.95, 0);
  assert_u64_eq(c.window, 200);
  assert_u64_eq(c.min_samples, 20);
  assert_i64_eq(c.min_delay_ms, 1);
  assert_i64_eq(c.max_delay_ms, 10000);
  assert_u64_eq(c.max_hedges, 1);
  assert_false(c.non_idempotent);
  assert_null(c.budget);
  assert_false(c.budget_requests);
  assert_status(bw_hedge_config_validate(&c, NULL), BW_OK);
}

static void expect_refused(const bw_hedge_config_t *c, const char *field,
                           const char *rule) {
  bw_error_t err;
  bwt_prefill_error(&err);
  assert_status(bw_hedge_config_validate(c, &err), BW_E_INVAL);
  assert_string_equal(err.field, field);
  assert_contains(err.message, rule);
  bwt_prefill_error(&err);
  assert_null(bw_hedge_new(c, &err));
  assert_string_equal(err.field, field);
}

static void every_invalid_field_is_refused_naming_the_field(void **state) {
  bw_hedge_config_t c;
  (void)state;
#define REFUSED(stmt, field, rule)   \
  do {                               \
    bw_hedge_config_init(&c);        \
    stmt;                            \
    expect_refused(&c, field, rule); \
  } while (0)
  REFUSED(c.name = "", "name", "name");
  REFUSED(c.delay = (bw_hedge_delay_t)7, "delay", "FIXED or QUANTILE (got 7)");
  REFUSED(c.delay_ms = 0, "delay_ms", "[1, 86400000] (got 0)");
  REFUSED(c.max_hedges = 0, "max_hedges", "[1, 4] (got 0)");
  REFUSED(c.max_hedges = 5, "max_hedges", "[1, 4] (got 5)");
  REFUSED(c.quantile = 1.0, "quantile", "(0, 1) (got 1)");
  REFUSED(c.quantile = 0.0, "quantile", "(0, 1) (got 0)");
  REFUSED(c.window = 0, "window", "[1, 4096] (got 0)");
  REFUSED(c.window = 4097, "window", "[1, 4096] (got 4097)");
  REFUSED(c.min_samples = 201, "min_samples", "[1, window = 200] (got 201)");
  REFUSED(c.min_delay_ms = 0, "min_delay_ms", "(got 0)");
  REFUSED(c.max_delay_ms = 0, "max_delay_ms", "min_delay_ms = 1");
#undef REFUSED
  /* A fixed delay does not read the tracker's fields. */
  c = fixed(50, 1);
  c.quantile = 7.0;
  c.window = 0;
  assert_status(bw_hedge_config_validate(&c, NULL), BW_OK);
}

static void a_fixed_delay_arms_once_and_sends_one_copy(void **state) {
  bw_hedge_config_t c = fixed(150, 1);
  bw_hedge_t *h = make(&c);
  bw_hedge_call_t hc;
  int64_t in_ms = 99;
  (void)state;
  assert_int_equal(bw_hedge_begin(h, &hc, true, 1000 * MS, &in_ms),
                   BW_HEDGE_ARM);
  assert_i64_eq(in_ms, 150);
  assert_int_equal(bw_hedge_fire(&hc, 1150 * MS, &in_ms), BW_HEDGE_SEND);
  assert_i64_eq(in_ms, -1); /* the last one allowed */
  assert_u64_eq(bw_hedge_sent(&hc), 1);
  assert_int_equal(bw_hedge_fire(&hc, 1300 * MS, &in_ms), BW_HEDGE_NONE);
  assert_i64_eq(in_ms, -1);
  assert_u64_eq(bw_hedge_sent(&hc), 1);
  assert_false(bw_hedge_denied(&hc));
  bw_hedge_free(h);
}

static void hedge_n_is_due_at_begin_plus_n_delays(void **state) {
  bw_hedge_config_t c = fixed(100, 3);
  bw_hedge_t *h = make(&c);
  bw_hedge_call_t hc;
  int64_t in_ms;
  (void)state;
  assert_int_equal(bw_hedge_begin(h, &hc, true, 0, &in_ms), BW_HEDGE_ARM);
  assert_i64_eq(in_ms, 100);
  assert_int_equal(bw_hedge_fire(&hc, 100 * MS, &in_ms), BW_HEDGE_SEND);
  assert_i64_eq(in_ms, 100); /* the second at 200 ms */
  /* The timer fired 30 ms late: the third is still due at 300 ms. */
  assert_int_equal(bw_hedge_fire(&hc, 230 * MS, &in_ms), BW_HEDGE_SEND);
  assert_i64_eq(in_ms, 70);
  assert_int_equal(bw_hedge_fire(&hc, 300 * MS, &in_ms), BW_HEDGE_SEND);
  assert_i64_eq(in_ms, -1);
  assert_int_equal(bw_hedge_fire(&hc, 400 * MS, &in_ms), BW_HEDGE_NONE);
  assert_u64_eq(bw_hedge_sent(&hc), 3);
  /* Very late: the next one is due now, not in the past. */
  assert_int_equal(bw_hedge_begin(h, &hc, true, 0, &in_ms), BW_HEDGE_ARM);
  assert_int_equal(bw_hedge_fire(&hc, 450 * MS, &in_ms), BW_HEDGE_SEND);
  assert_i64_eq(in_ms, 0);
  bw_hedge_free(h);
}

static void non_idempotent_calls_are_not_hedged_unless_allowed(void **state) {
  bw_hedge_config_t c = fixed(100, 1);
  bw_hedge_t *h = make(&c);
  bw_hedge_call_t hc;
  bw_hedge_stats_t st;
  int64_t in_ms = 5;
  (void)state;
  assert_int_equal(bw_hedge_begin(h, &hc, false, 0, &in_ms), BW_HEDGE_NONE);
  assert_i64_eq(in_ms, -1);
  assert_int_equal(bw_hedge_fire(&hc, 100 * MS, &in_ms), BW_HEDGE_NONE);
  assert_u64_eq(bw_hedge_sent(&hc), 0);
  bw_hedge_stats(h, &st);
  assert_u64_eq(st.calls, 1);
  assert_u64_eq(st.armed, 0);
  assert_u64_eq(st.not_idempotent, 1);
  assert_u64_eq(st.hedges, 0);
  bw_hedge_free(h);
  c.non_idempotent = true;
  h = make(&c);
  assert_int_equal(bw_hedge_begin(h, &hc, false, 0, &in_ms), BW_HEDGE_ARM);
  assert_int_equal(bw_hedge_fire(&hc, 100 * MS, &in_ms), BW_HEDGE_SEND);
  bw_hedge_free(h);
}

static void the_quantile_is_the_nearest_rank_of_the_window(void **state) {
  bw_hedge_config_t c;
  bw_hedge_t *h;
  bw_hedge_call_t hc;
  bw_hedge_stats_t st;
  int64_t in_ms;
  (void)state;
  bw_hedge_config_init(&c);
  c.window = 100;
  c.min_samples = 20;
  c.delay_ms = 500;
  h = make(&c);
  /* Fewer than min_samples: the configured delay. */
  for (int i = 1; i <= 19; i++)
    assert_status(bw_hedge_record(h, i * MS), BW_OK);
  assert_i64_eq(bw_hedge_delay_ms(h), 500);
  /* 1..100 ms: the 95th of 100 is 95 ms. */
  for (int i = 20; i <= 100; i++)
    bw_hedge_record(h, i * MS);
  assert_i64_eq(bw_hedge_delay_ms(h), 95);
  assert_int_equal(bw_hedge_begin(h, &hc, true, 0, &in_ms), BW_HEDGE_ARM);
  assert_i64_eq(in_ms, 95);
  /* The ring keeps the last 100: 94 records of 10 ms replace 1..94 ms, and
   * 95..100 ms are the top six, the 95th is 95 ms; one more replaces 95 ms,
   * and the 95th of 95 x 10 ms and 96..100 ms is 10 ms. */
  for (int i = 0; i < 94; i++)
    bw_hedge_record(h, 10 * MS);
  assert_i64_eq(bw_hedge_delay_ms(h), 95);
  bw_hedge_record(h, 10 * MS);
  assert_i64_eq(bw_hedge_delay_ms(h), 10);
  /* A fraction of a ms rounds up: a hedge never leaves before the p95. */
  for (int i = 0; i < 100; i++)
    bw_hedge_record(h, 10 * MS + 1);
  assert_i64_eq(bw_hedge_delay_ms(h), 11);
  bw_hedge_stats(h, &st);
  assert_u64_eq(st.samples, 295);
  assert_i64_eq(st.delay_ms, 11);
  assert_status(bw_hedge_record(h, -1), BW_E_RANGE);
  bw_hedge_free(h);
}

static void the_quantile_delay_is_clamped(void **state) {
  bw_hedge_config_t c;
  bw_hedge_t *h;
  (void)state;
  bw_hedge_config_init(&c);
  c.window = 20;
  c.min_delay_ms = 30;
  c.max_delay_ms = 400;
  h = make(&c);
  for (int i = 0; i < 20; i++)
    bw_hedge_record(h, 2 * MS);
  assert_i64_eq(bw_hedge_delay_ms(h), 30);
  for (int i = 0; i < 20; i++)
    bw_hedge_record(h, 5000 * MS);
  assert_i64_eq(bw_hedge_delay_ms(h), 400);
  bw_hedge_free(h);
}

static void hedges_spend_the_budget_and_a_refusal_ends_hedging(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_budget_config_t bc;
  bw_budget_t *b;
  bw_budget_stats_t bs;
  bw_hedge_config_t c = fixed(100, 2);
  bw_hedge_t *h;
  bw_hedge_call_t hc[20];
  bw_hedge_stats_t st;
  int64_t in_ms;
  unsigned sent = 0;
  (void)state;
  /* Hedges at most 10 % of requests, no floor. */
  bw_budget_config_init(&bc);
  bc.kind = BW_BUDGET_RATIO;
  bc.budget_percent = 10;
  bc.min_retries_per_sec = 0;
  bc.clock = clock;
  b = bw_budget_new(&bc, NULL);
  assert_non_null(b);
  c.budget = b;
  c.budget_requests = true; /* the hedge's own budget */
  h = make(&c);
  for (int i = 0; i < 20; i++)
    assert_int_equal(bw_hedge_begin(h, &hc[i], true, 0, &in_ms), BW_HEDGE_ARM);
  /* 20 requests: 2 hedges allowed, whichever calls ask. */
  assert_int_equal(bw_hedge_fire(&hc[0], 100 * MS, &in_ms), BW_HEDGE_SEND);
  assert_i64_eq(in_ms, 100);
  assert_int_equal(bw_hedge_fire(&hc[0], 200 * MS, &in_ms), BW_HEDGE_SEND);
  for (int i = 1; i < 20; i++)
    if (bw_hedge_fire(&hc[i], 100 * MS, &in_ms) == BW_HEDGE_SEND) sent++;
  assert_u64_eq(sent, 0);
  assert_true(bw_hedge_denied(&hc[1]));
  assert_false(bw_hedge_denied(&hc[0]));
  /* A denied call does not ask again. */
  assert_int_equal(bw_hedge_fire(&hc[1], 200 * MS, &in_ms), BW_HEDGE_NONE);
  bw_budget_stats(b, &bs);
  assert_u64_eq(bs.requests, 20);
  assert_u64_eq(bs.allowed, 2);
  assert_u64_eq(bs.denied, 19);
  bw_hedge_stats(h, &st);
  assert_u64_eq(st.hedges, 2);
  assert_u64_eq(st.denied, 19);
  bw_hedge_free(h);
  /* Without budget_requests the requests are the retry's to report. */
  c.budget_requests = false;
  h = make(&c);
  bw_hedge_begin(h, &hc[0], true, 0, &in_ms);
  bw_budget_stats(b, &bs);
  assert_u64_eq(bs.requests, 20);
  bw_hedge_free(h);
  bw_budget_free(b);
  bw_clock_free(clock);
}

static void every_verb_answers_null_without_crashing(void **state) {
  bw_hedge_call_t hc;
  bw_hedge_stats_t st;
  bw_error_t err;
  int64_t in_ms;
  bw_hedge_config_t c = fixed(10, 1);
  bw_hedge_t *h = make(&c);
  (void)state;
  bw_hedge_config_init(NULL);
  assert_status(bw_hedge_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_hedge_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_status(bw_hedge_begin(NULL, &hc, true, 0, &in_ms), BW_E_INVAL);
  assert_status(bw_hedge_begin(h, NULL, true, 0, &in_ms), BW_E_INVAL);
  assert_status(bw_hedge_begin(h, &hc, true, 0, NULL), BW_E_INVAL);
  assert_status(bw_hedge_fire(NULL, 0, &in_ms), BW_E_INVAL);
  memset(&hc, 0, sizeof hc); /* never begun */
  assert_status(bw_hedge_fire(&hc, 0, &in_ms), BW_E_INVAL);
  bw_hedge_begin(h, &hc, true, 0, &in_ms);
  assert_status(bw_hedge_fire(&hc, 0, NULL), BW_E_INVAL);
  assert_false(bw_hedge_denied(NULL));
  assert_u64_eq(bw_hedge_sent(NULL), 0);
  assert_status(bw_hedge_record(NULL, 1), BW_E_INVAL);
  assert_i64_eq(bw_hedge_delay_ms(NULL), 0);
  memset(&st, 0xA5, sizeof st);
  bw_hedge_stats(NULL, &st);
  assert_u64_eq(st.calls, 0);
  bw_hedge_stats(h, NULL);
  assert_string_equal(bw_hedge_name(NULL), "");
  assert_string_equal(bw_hedge_name(h), "hedge");
  assert_string_equal(bw_hedge_delay_name(BW_HEDGE_FIXED), "fixed");
  assert_string_equal(bw_hedge_delay_name(BW_HEDGE_QUANTILE), "quantile");
  assert_string_equal(bw_hedge_delay_name((bw_hedge_delay_t)9), "unknown");
  bw_hedge_free(NULL);
  bw_hedge_free(h);
}

static int oom_scenario(void *ctx) {
  bw_hedge_config_t c;
  bw_error_t err;
  bw_hedge_t *h;
  (void)ctx;
  bw_hedge_config_init(&c);
  h = bw_hedge_new(&c, &err);
  if (h == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    return BW_E_NOMEM;
  }
  bw_hedge_record(h, 1); /* no allocation after creation */
  bw_hedge_free(h);
  return BW_OK;
}

static void creation_survives_every_allocation_failure(void **state) {
  long n;
  (void)state;
  n = oom_walk(oom_scenario, NULL, false);
  /* The object, its name, the ring and its scratch copy. */
  assert_int_equal(n, 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_init_fills_documented_defaults),
      cmocka_unit_test(every_invalid_field_is_refused_naming_the_field),
      cmocka_unit_test(a_fixed_delay_arms_once_and_sends_one_copy),
      cmocka_unit_test(hedge_n_is_due_at_begin_plus_n_delays),
      cmocka_unit_test(non_idempotent_calls_are_not_hedged_unless_allowed),
      cmocka_unit_test(the_quantile_is_the_nearest_rank_of_the_window),
      cmocka_unit_test(the_quantile_delay_is_clamped),
      cmocka_unit_test(hedges_spend_the_budget_and_a_refusal_ends_hedging),
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(creation_survives_every_allocation_failure),
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

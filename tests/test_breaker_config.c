/* Specification tests: breaker configuration — documented defaults, and the
 * rule that a constructor refuses every bad field with an error naming it,
 * never a silent clamp. */
#include "bw_test.h"

/* ---- defaults
 * ------------------------------------------------------------------- */

static void config_init_fills_documented_defaults(void **state) {
  bw_breaker_config_t cfg;
  (void)state;
  memset(&cfg, 0x5A, sizeof(cfg));
  bw_breaker_config_init(&cfg);

  assert_non_null(cfg.name);
  assert_string_equal(cfg.name, "breaker");
  assert_int_equal(cfg.trip_rule, BW_TRIP_CONSECUTIVE);
  assert_u64_eq(cfg.failure_threshold, 5);
  assert_dbl_eq(cfg.failure_ratio, 0.5, 0);
  assert_u64_eq(cfg.window_size, 100);
  assert_i64_eq(cfg.window_ms, 10000);
  assert_u64_eq(cfg.window_buckets, 10);
  assert_u64_eq(cfg.minimum_calls, 20);
  assert_i64_eq(cfg.slow_call_ms, 0);
  assert_dbl_eq(cfg.slow_call_ratio, 1.0, 0);
  assert_i64_eq(cfg.break_ms, 30000);
  assert_dbl_eq(cfg.break_multiplier, 1.0, 0);
  assert_i64_eq(cfg.max_break_ms, 0);
  assert_u64_eq(cfg.half_open_max_calls, 1);
  assert_u64_eq(cfg.success_threshold, 1);
  assert_i64_eq(cfg.half_open_timeout_ms, 60000);
  assert_false(cfg.metrics_only);
  assert_null(cfg.clock);
  assert_null(cfg.wall_clock);
  assert_null(cfg.sink);
}

static void default_config_is_valid_and_creates_a_closed_breaker(void **state) {
  bw_breaker_config_t cfg;
  bw_error_t err;
  bw_breaker_t *b;
  bw_breaker_stats_t s;
  (void)state;
  bw_breaker_config_init(&cfg);
  assert_status(bw_breaker_config_validate(&cfg, &err), BW_OK);
  b = bw_breaker_new(&cfg, &err);
  assert_non_null(b);
  assert_string_equal(bw_breaker_name(b), "breaker");
  assert_state(bw_breaker_state(b), BW_CLOSED);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_false(s.metrics_only);
  assert_i64_eq(s.current_break_ms, 30000);
  assert_u64_eq(s.calls, 0);
  assert_u64_eq(s.admitted, 0);
  assert_u64_eq(s.rejected, 0);
  bw_breaker_free(b);
}

/* ---- validation, table-driven
 * -------------------------------------------------- */

typedef void (*mutate_fn)(bw_breaker_config_t *cfg);

typedef struct invalid_case_s {
  const char *what;  /* the rule broken, for the failure message */
  mutate_fn mutate;  /* applied to the defaults */
  const char *field; /* the field the error must name */
} invalid_case_t;

static char long_name[202]; /* 201 bytes + NUL, filled by the test */

#define MUT(fn, body)                      \
  static void fn(bw_breaker_config_t *c) { \
    body;                                  \
  }

/* Rules shared by every trip rule (tested on the default, consecutive rule). */
MUT(m_failure_threshold_0, c->failure_threshold = 0)
MUT(m_break_ms_0, c->break_ms = 0)
MUT(m_break_ms_neg, c->break_ms = -1)
MUT(m_break_multiplier_below_1, c->break_multiplier = 0.999)
MUT(m_break_multiplier_0, c->break_multiplier = 0.0)
MUT(m_break_multiplier_nan, c->break_multiplier = NAN)
MUT(m_max_break_neg, c->max_break_ms = -1)
MUT(m_max_break_below_break, c->max_break_ms = 29999)
MUT(m_max_break_below_break2, {
  c->break_ms = 1000;
  c->max_break_ms = 999;
})
MUT(m_half_open_max_calls_0, c->half_open_max_calls = 0)
MUT(m_success_threshold_0, c->success_threshold = 0)
MUT(m_half_open_timeout_0, c->half_open_timeout_ms = 0)
MUT(m_half_open_timeout_neg, c->half_open_timeout_ms = -5)
MUT(m_trip_rule_unknown, c->trip_rule = (bw_trip_rule_t)7)
MUT(m_name_null, c->name = NULL)
MUT(m_name_empty, c->name = "")
MUT(m_name_too_long, c->name = long_name)
MUT(m_slow_neg_consecutive, c->slow_call_ms = -1)
MUT(m_slow_with_consecutive, c->slow_call_ms = 100)

/* Window rules. */
MUT(m_tw_failure_ratio_0, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->failure_ratio = 0.0;
})
MUT(m_tw_failure_ratio_neg, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->failure_ratio = -0.25;
})
MUT(m_tw_failure_ratio_above_1, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->failure_ratio = 1.0000001;
})
MUT(m_tw_failure_ratio_nan, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->failure_ratio = NAN;
})
MUT(m_cw_failure_ratio_nan, {
  c->trip_rule = BW_TRIP_COUNT_WINDOW;
  c->failure_ratio = NAN;
})
MUT(m_cw_window_size_0, {
  c->trip_rule = BW_TRIP_COUNT_WINDOW;
  c->window_size = 0;
})
MUT(m_tw_window_ms_0, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->window_ms = 0;
})
MUT(m_tw_window_ms_neg, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->window_ms = -10000;
})
MUT(m_tw_buckets_0, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->window_buckets = 0;
})
MUT(m_tw_buckets_above_window_ms, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->window_ms = 5;
  c->window_buckets = 6;
})
MUT(m_tw_minimum_calls_0, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->minimum_calls = 0;
})
MUT(m_cw_minimum_calls_0, {
  c->trip_rule = BW_TRIP_COUNT_WINDOW;
  c->minimum_calls = 0;
})
MUT(m_cw_minimum_above_window_size, {
  c->trip_rule = BW_TRIP_COUNT_WINDOW;
  c->window_size = 10;
  c->minimum_calls = 11;
})
MUT(m_tw_slow_neg, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->slow_call_ms = -1;
})
MUT(m_tw_slow_ratio_0, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->slow_call_ms = 1000;
  c->slow_call_ratio = 0.0;
})
MUT(m_tw_slow_ratio_neg, {
  c->trip_rule = BW_TRIP_TIME_WINDOW;
  c->slow_call_ms = 1000;
  c->slow_call_ratio = -1.0;
})
MUT(m_cw_slow_ratio_above_1, {
  c->trip_rule = BW_TRIP_COUNT_WINDOW;
  c->slow_call_ms = 1000;
  c->slow_call_ratio = 1.01;
})
MUT(m_cw_slow_ratio_nan, {
  c->trip_rule = BW_TRIP_COUNT_WINDOW;
  c->slow_call_ms = 1000;
  c->slow_call_ratio = NAN;
})

static const invalid_case_t invalid_cases[] = {
    {"failure_threshold 0", m_failure_threshold_0, "failure_threshold"},
    {"failure_ratio 0 (time window)", m_tw_failure_ratio_0, "failure_ratio"},
    {"failure_ratio < 0 (time window)", m_tw_failure_ratio_neg,
     "failure_ratio"},
    {"failure_ratio > 1 (time window)", m_tw_failure_ratio_above_1,
     "failure_ratio"},
    {"failure_ratio NaN (time window)", m_tw_failure_ratio_nan,
     "failure_ratio"},
    {"failure_ratio NaN (count window)", m_cw_failure_ratio_nan,
     "failure_ratio"},
    {"window_size 0 (count window)", m_cw_window_size_0, "window_size"},
    {"window_ms 0 (time window)", m_tw_window_ms_0, "window_ms"},
    {"window_ms < 0 (time window)", m_tw_window_ms_neg, "window_ms"},
    {"window_buckets 0 (time window)", m_tw_buckets_0, "window_buckets"},
    {"window_buckets > window_ms (time window)", m_tw_buckets_above_window_ms,
     "window_buckets"},
    {"minimum_calls 0 (time window)", m_tw_minimum_calls_0, "minimum_calls"},
    {"minimum_calls 0 (count window)", m_cw_minimum_calls_0, "minimum_calls"},
    {"minimum_calls > window_size (count window)",
     m_cw_minimum_above_window_size, "minimum_calls"},
    {"slow_call_ms < 0 (time window)", m_tw_slow_neg, "slow_call_ms"},
    {"slow_call_ms < 0 (consecutive)", m_slow_neg_consecutive, "slow_call_ms"},
    {"slow_call_ms > 0 with the consecutive rule", m_slow_with_consecutive,
     "slow_call_ms"},
    {"slow_call_ratio 0 (time window)", m_tw_slow_ratio_0, "slow_call_ratio"},
    {"slow_call_ratio < 0 (time window)", m_tw_slow_ratio_neg,
     "slow_call_ratio"},
    {"slow_call_ratio > 1 (count window)", m_cw_slow_ratio_above_1,
     "slow_call_ratio"},
    {"slow_call_ratio NaN (count window)", m_cw_slow_ratio_nan,
     "slow_call_ratio"},
    {"break_ms 0", m_break_ms_0, "break_ms"},
    {"break_ms < 0", m_break_ms_neg, "break_ms"},
    {"break_multiplier 0.999", m_break_multiplier_below_1, "break_multiplier"},
    {"break_multiplier 0", m_break_multiplier_0, "break_multiplier"},
    {"break_multiplier NaN", m_break_multiplier_nan, "break_multiplier"},
    {"max_break_ms < 0", m_max_break_neg, "max_break_ms"},
    {"max_break_ms 29999 < break_ms 30000", m_max_break_below_break,
     "max_break_ms"},
    {"max_break_ms 999 < break_ms 1000", m_max_break_below_break2,
     "max_break_ms"},
    {"half_open_max_calls 0", m_half_open_max_calls_0, "half_open_max_calls"},
    {"success_threshold 0", m_success_threshold_0, "success_threshold"},
    {"half_open_timeout_ms 0", m_half_open_timeout_0, "half_open_timeout_ms"},
    {"half_open_timeout_ms < 0", m_half_open_timeout_neg,
     "half_open_timeout_ms"},
    {"trip_rule 7", m_trip_rule_unknown, "trip_rule"},
    {"name NULL", m_name_null, "name"},
    {"name \"\"", m_name_empty, "name"},
    {"name of 201 bytes", m_name_too_long, "name"},
};

static void fill_long_name(size_t len) {
  memset(long_name, 'n', sizeof(long_name));
  long_name[len] = '\0';
}

static int check_invalid_case(const invalid_case_t *tc) {
  bw_breaker_config_t cfg;
  bw_error_t err;
  bw_breaker_t *b;
  int ok = 1;

  bw_breaker_config_init(&cfg);
  tc->mutate(&cfg);

  /* bw_breaker_config_validate */
  bwt_prefill_error(&err);
  {
    int rc = bw_breaker_config_validate(&cfg, &err);
    if (rc != BW_E_INVAL) {
      print_error("[%s] validate returned %s, expected E_INVAL\n", tc->what,
                  bw_err_name(rc));
      ok = 0;
    }
  }
  if (err.code != BW_E_INVAL || strcmp(err.field, tc->field) != 0 ||
      strstr(err.message, tc->field) == NULL) {
    print_error(
        "[%s] validate: err = {%s, \"%s\", \"%s\"}, expected "
        "{E_INVAL, \"%s\", a message naming it}\n",
        tc->what, bw_err_name(err.code), err.field, err.message, tc->field);
    ok = 0;
  }

  /* bw_breaker_new gives the same answer */
  bwt_prefill_error(&err);
  b = bw_breaker_new(&cfg, &err);
  if (b != NULL) {
    print_error("[%s] bw_breaker_new accepted the configuration\n", tc->what);
    bw_breaker_free(b);
    ok = 0;
  }
  if (err.code != BW_E_INVAL || strcmp(err.field, tc->field) != 0 ||
      strstr(err.message, tc->field) == NULL) {
    print_error(
        "[%s] new: err = {%s, \"%s\", \"%s\"}, expected "
        "{E_INVAL, \"%s\", a message naming it}\n",
        tc->what, bw_err_name(err.code), err.field, err.message, tc->field);
    ok = 0;
  }

  /* err may be NULL: still refused, no crash */
  b = bw_breaker_new(&cfg, NULL);
  if (b != NULL) {
    print_error("[%s] bw_breaker_new(cfg, NULL) accepted the configuration\n",
                tc->what);
    bw_breaker_free(b);
    ok = 0;
  }
  return ok;
}

static void every_invalid_field_is_refused_naming_the_field(void **state) {
  size_t i, failed = 0;
  (void)state;
  fill_long_name(201);
  for (i = 0; i < sizeof(invalid_cases) / sizeof(invalid_cases[0]); i++)
    if (!check_invalid_case(&invalid_cases[i])) failed++;
  if (failed != 0) {
    print_error(
        "%zu of %zu invalid configurations were not refused as "
        "specified\n",
        failed, sizeof(invalid_cases) / sizeof(invalid_cases[0]));
    fail();
  }
}

static void null_config_is_refused(void **state) {
  bw_error_t err;
  (void)state;
  bwt_prefill_error(&err);
  assert_null(bw_breaker_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_null(bw_breaker_new(NULL, NULL));
  bwt_prefill_error(&err);
  assert_status(bw_breaker_config_validate(NULL, &err), BW_E_INVAL);
  assert_status(err.code, BW_E_INVAL);
}

/* ---- accepted configurations
 * ---------------------------------------------------- */

static void accept(bw_breaker_config_t *cfg, const char *what) {
  bw_error_t err;
  bw_breaker_t *b;
  bwt_prefill_error(&err);
  if (bw_breaker_config_validate(cfg, &err) != BW_OK) {
    print_error("[%s] validate refused: %s [%s] %s\n", what,
                bw_err_name(err.code), err.field, err.message);
    fail();
  }
  b = bw_breaker_new(cfg, &err);
  if (b == NULL) {
    print_error("[%s] new refused: %s [%s] %s\n", what, bw_err_name(err.code),
                err.field, err.message);
    fail();
  }
  bw_breaker_free(b);
}

static void boundary_values_are_accepted(void **state) {
  bw_breaker_config_t cfg;
  (void)state;

  bw_breaker_config_init(&cfg);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.failure_ratio = 1.0;
  cfg.slow_call_ms = 1;
  cfg.slow_call_ratio = 1.0;
  cfg.window_ms = 5;
  cfg.window_buckets = 5;
  cfg.minimum_calls = 1;
  accept(&cfg, "ratios 1.0, window_buckets == window_ms, minimum_calls 1");

  bw_breaker_config_init(&cfg);
  cfg.trip_rule = BW_TRIP_COUNT_WINDOW;
  cfg.window_size = 10;
  cfg.minimum_calls = 10;
  cfg.failure_ratio = 0.0001;
  accept(&cfg, "minimum_calls == window_size");

  bw_breaker_config_init(&cfg);
  cfg.trip_rule = BW_TRIP_COUNT_WINDOW;
  cfg.window_size = 1;
  cfg.minimum_calls = 1;
  accept(&cfg, "window_size 1");

  bw_breaker_config_init(&cfg);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.minimum_calls = 500; /* > window_size: only the count rule cares */
  accept(&cfg, "time window with minimum_calls > window_size");

  bw_breaker_config_init(&cfg);
  cfg.failure_threshold = 1;
  cfg.break_ms = 1;
  cfg.break_multiplier = 1.0;
  cfg.max_break_ms = 1; /* == break_ms */
  cfg.half_open_max_calls = 1;
  cfg.success_threshold = 1;
  cfg.half_open_timeout_ms = 1;
  accept(&cfg, "smallest values");

  bw_breaker_config_init(&cfg);
  fill_long_name(200);
  cfg.name = long_name;
  accept(&cfg, "name of 200 bytes");
}

static void fields_of_other_rules_are_not_checked(void **state) {
  bw_breaker_config_t cfg;
  (void)state;

  /* The consecutive rule uses no window field. */
  bw_breaker_config_init(&cfg);
  cfg.window_size = 0;
  cfg.window_ms = 0;
  cfg.window_buckets = 0;
  cfg.minimum_calls = 0;
  accept(&cfg, "consecutive rule with zeroed window fields");

  /* The count window ignores the time window's fields. */
  bw_breaker_config_init(&cfg);
  cfg.trip_rule = BW_TRIP_COUNT_WINDOW;
  cfg.window_ms = 0;
  cfg.window_buckets = 0;
  accept(&cfg, "count window with zeroed time-window fields");

  /* The time window ignores window_size. */
  bw_breaker_config_init(&cfg);
  cfg.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.window_size = 0;
  accept(&cfg, "time window with window_size 0");
}

static void name_is_copied_at_creation(void **state) {
  bw_breaker_config_t cfg;
  char name[32];
  bw_breaker_t *b;
  (void)state;
  snprintf(name, sizeof(name), "%s", "hotel_api");
  bw_breaker_config_init(&cfg);
  cfg.name = name;
  b = bw_breaker_new(&cfg, NULL);
  assert_non_null(b);
  snprintf(name, sizeof(name), "%s", "overwritten");
  assert_string_equal(bw_breaker_name(b), "hotel_api");
  bw_breaker_free(b);

  fill_long_name(200);
  cfg.name = long_name;
  b = bw_breaker_new(&cfg, NULL);
  assert_non_null(b);
  assert_int_equal(strlen(bw_breaker_name(b)), 200);
  assert_string_equal(bw_breaker_name(b), long_name);
  bw_breaker_free(b);
}

/* Nothing is clamped: a failure_threshold of 1 opens on the first failure, a
 * break of 1 ms lasts exactly 1 ms, a threshold of 1000 needs 1000. */
static void valid_extreme_values_are_used_exactly(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_permit_t p;
  bw_breaker_stats_t s;

  bwt_config(e, &cfg, "tiny");
  cfg.failure_threshold = 1;
  cfg.break_ms = 1;
  b = bwt_breaker(e, &cfg);
  assert_i64_eq(bwt_stats(b).current_break_ms, 1);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1);
  assert_rejected(b);
  bwt_advance_ns(e, BW_NS_PER_MS - 1);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 1);
  assert_rejected(b);
  bwt_advance_ns(e, 1);
  p = bwt_acquire(b);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);

  bwt_config(e, &cfg, "huge");
  cfg.failure_threshold = 1000;
  cfg.break_ms = INT64_C(86400000); /* a day */
  b = bwt_breaker(e, &cfg);
  bwt_calls(b, BW_FAILURE, 999);
  s = bwt_stats(b);
  assert_state(s.state, BW_CLOSED);
  assert_u64_eq(s.consecutive_failures, 999);
  bwt_call(b, BW_FAILURE);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 86400000);
  assert_i64_eq(bwt_stats(b).current_break_ms, 86400000);
}

static void state_and_rule_names(void **state) {
  (void)state;
  assert_string_equal(bw_state_name(BW_CLOSED), "closed");
  assert_string_equal(bw_state_name(BW_OPEN), "open");
  assert_string_equal(bw_state_name(BW_HALF_OPEN), "half_open");
  assert_string_equal(bw_state_name(BW_ISOLATED), "isolated");
  assert_string_equal(bw_state_name(BW_DISABLED), "disabled");
  assert_string_equal(bw_state_name(BW_STATE__COUNT), "unknown");
  assert_string_equal(bw_state_name((bw_state_t)-1), "unknown");
  assert_string_equal(bw_trip_rule_name(BW_TRIP_CONSECUTIVE), "consecutive");
  assert_string_equal(bw_trip_rule_name(BW_TRIP_COUNT_WINDOW), "count_window");
  assert_string_equal(bw_trip_rule_name(BW_TRIP_TIME_WINDOW), "time_window");
  assert_string_equal(bw_trip_rule_name((bw_trip_rule_t)7), "unknown");
}

static void free_accepts_null(void **state) {
  (void)state;
  bw_breaker_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_init_fills_documented_defaults),
      cmocka_unit_test(default_config_is_valid_and_creates_a_closed_breaker),
      cmocka_unit_test(every_invalid_field_is_refused_naming_the_field),
      cmocka_unit_test(null_config_is_refused),
      cmocka_unit_test(boundary_values_are_accepted),
      cmocka_unit_test(fields_of_other_rules_are_not_checked),
      cmocka_unit_test(name_is_copied_at_creation),
      cmocka_unit_test_setup_teardown(valid_extreme_values_are_used_exactly,
                                      bwt_setup, bwt_teardown),
      cmocka_unit_test(state_and_rule_names),
      cmocka_unit_test(free_accepts_null),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Specification tests: a live breaker's thresholds change
 * (bw_breaker_reconfigure) without losing its state, and what its memory
 * was laid out for is refused; bw_breaker_config_of reads back what is in
 * force. Every step on a manual clock. */
#include "bw_test.h"

static void fail_n(bw_breaker_t *b, int n) {
  for (int i = 0; i < n; i++) {
    bw_permit_t p;
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_FAILURE);
  }
}

static void succeed_n(bw_breaker_t *b, int n) {
  for (int i = 0; i < n; i++) {
    bw_permit_t p;
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_SUCCESS);
  }
}

/* Loosening during an incident: the count so far is kept, the new
 * threshold decides. */
static void loosened_threshold_keeps_the_count(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c;
  bw_error_t err;
  bwt_config(e, &c, "payments");
  c.failure_threshold = 3;
  bw_breaker_t *b = bwt_breaker(e, &c);
  fail_n(b, 2);
  c.failure_threshold = 5;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  fail_n(b, 2);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_stats(b).consecutive_failures, 4);
  fail_n(b, 1);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

/* Tightened below the count so far: no decision without an outcome; the
 * next failure opens it. */
static void tightened_threshold_decides_at_the_next_outcome(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c;
  bw_error_t err;
  bwt_config(e, &c, "payments");
  bw_breaker_t *b = bwt_breaker(e, &c);
  fail_n(b, 3);
  c.failure_threshold = 2;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  fail_n(b, 1);
  assert_state(bw_breaker_state(b), BW_OPEN);
}

/* An open breaker keeps the break it opened with; the next opening uses
 * the new one. success_threshold changes while half-open count. */
static void break_and_probes_change_from_the_next_decision(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c;
  bw_error_t err;
  bwt_config(e, &c, "payments");
  c.failure_threshold = 1;
  c.break_ms = 30000;
  c.success_threshold = 3;
  bw_breaker_t *b = bwt_breaker(e, &c);
  fail_n(b, 1);
  c.break_ms = 10000;
  c.success_threshold = 2;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 30000);
  bwt_advance_ms(e, 30000);
  succeed_n(b, 1);
  assert_state(bw_breaker_state(b), BW_HALF_OPEN);
  succeed_n(b, 1);
  assert_state(bw_breaker_state(b), BW_CLOSED);
  fail_n(b, 1);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 10000);
  assert_i64_eq(bwt_stats(b).current_break_ms, 10000);
}

/* A time window's ratio and minimum change; its window does not. */
static void window_ratio_changes_live(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c;
  bw_error_t err;
  bwt_config(e, &c, "search");
  c.trip_rule = BW_TRIP_TIME_WINDOW;
  c.failure_ratio = 0.5;
  c.minimum_calls = 10;
  bw_breaker_t *b = bwt_breaker(e, &c);
  succeed_n(b, 4);
  fail_n(b, 5); /* 5 of 9: below the minimum */
  c.failure_ratio = 0.8;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  fail_n(b, 1); /* 6 of 10 = 0.6 < 0.8 */
  assert_state(bw_breaker_state(b), BW_CLOSED);
  c.failure_ratio = 0.6;
  c.minimum_calls = 11;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  succeed_n(b, 1); /* 6 of 11 = 0.545 < 0.6 */
  assert_state(bw_breaker_state(b), BW_CLOSED);
  fail_n(b, 1); /* 7 of 12 = 0.583 < 0.6 */
  assert_state(bw_breaker_state(b), BW_CLOSED);
  fail_n(b, 1); /* 8 of 13 = 0.615 */
  assert_state(bw_breaker_state(b), BW_OPEN);
}

typedef struct fixed_s {
  const char *field;
  bw_trip_rule_t rule;
  const char *message;
} fixed_t;

/* What the memory was laid out for is refused, naming the field, and
 * nothing changes (not even the fields that could). */
static void fixed_fields_are_refused_whole(void **state) {
  bwt_env_t *e = *state;
  static const fixed_t cases[] = {
      {"trip_rule", BW_TRIP_CONSECUTIVE,
       "trip_rule is fixed at creation (consecutive; got count_window)"},
      {"window_size", BW_TRIP_COUNT_WINDOW,
       "window_size is fixed at creation (100; got 200)"},
      {"window_ms", BW_TRIP_TIME_WINDOW,
       "window_ms and window_buckets are fixed at creation (10000 ms in 10; "
       "got 20000 ms in 10)"},
      {"window_buckets", BW_TRIP_TIME_WINDOW,
       "window_ms and window_buckets are fixed at creation (10000 ms in 10; "
       "got 10000 ms in 20)"},
      {"slow_call_ms", BW_TRIP_TIME_WINDOW,
       "slow_call_ms cannot be turned on after creation (only its threshold "
       "can change)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bw_breaker_config_t c, now;
    bw_error_t err;
    bwt_config(e, &c, "x");
    c.trip_rule = cases[i].rule;
    bw_breaker_t *b = bwt_breaker(e, &c);
    c.failure_threshold = 9;
    c.failure_ratio = 0.9;
    if (i == 0) c.trip_rule = BW_TRIP_COUNT_WINDOW;
    if (i == 1) c.window_size = 200;
    if (i == 2) c.window_ms = 20000;
    if (i == 3) c.window_buckets = 20;
    if (i == 4) c.slow_call_ms = 500;
    bwt_prefill_error(&err);
    assert_status(bw_breaker_reconfigure(b, &c, &err), BW_E_INVAL);
    assert_string_equal(err.field, cases[i].field);
    assert_string_equal(err.message, cases[i].message);
    bw_breaker_config_of(b, &now);
    assert_u64_eq(now.failure_threshold, 5);
    assert_dbl_eq(now.failure_ratio, 0.5, 0);
  }
}

/* A slow-call threshold changes while its rule stays on, and cannot be
 * turned off either. */
static void slow_call_threshold_changes_but_stays_on(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c, now;
  bw_error_t err;
  bwt_config(e, &c, "x");
  c.trip_rule = BW_TRIP_COUNT_WINDOW;
  c.window_size = 10;
  c.minimum_calls = 2;
  c.slow_call_ms = 1000;
  c.slow_call_ratio = 1.0;
  bw_breaker_t *b = bwt_breaker(e, &c);
  c.slow_call_ms = 100;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  for (int i = 0; i < 2; i++) {
    bw_permit_t p;
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bwt_advance_ms(e, 100); /* slow by the new threshold, not the old */
    bw_breaker_release(b, &p, BW_SUCCESS);
  }
  assert_state(bw_breaker_state(b), BW_OPEN);
  c.slow_call_ms = 0;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_E_INVAL);
  assert_string_equal(err.message,
                      "slow_call_ms cannot be turned off after creation "
                      "(only its threshold can change)");
  bw_breaker_config_of(b, &now);
  assert_i64_eq(now.slow_call_ms, 100);
}

/* An invalid configuration is refused by the same validation as new. */
static void invalid_config_is_refused(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c;
  bw_error_t err;
  bwt_config(e, &c, "x");
  bw_breaker_t *b = bwt_breaker(e, &c);
  c.failure_threshold = 0;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "failure_threshold");
  c.failure_threshold = 5;
  c.max_break_ms = 10;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "max_break_ms");
}

/* config_of reads back what new or reconfigure set, field by field. */
static void config_of_reads_back(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c, now;
  bw_error_t err;
  bwt_config(e, &c, "x");
  c.trip_rule = BW_TRIP_TIME_WINDOW;
  c.slow_call_ms = 700;
  bw_breaker_t *b = bwt_breaker(e, &c);
  c.failure_threshold = 11;
  c.failure_ratio = 0.25;
  c.minimum_calls = 7;
  c.slow_call_ms = 900;
  c.slow_call_ratio = 0.75;
  c.break_ms = 1500;
  c.break_multiplier = 2.5;
  c.max_break_ms = 60000;
  c.half_open_max_calls = 4;
  c.success_threshold = 3;
  c.half_open_timeout_ms = 9000;
  c.metrics_only = true;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  bw_breaker_config_of(b, &now);
  size_t n;
  const bw_config_field_t *f = bw_config_fields(BW_CONFIG_BREAKER, &n);
  for (size_t i = 0; i < n; i++) {
    char want[128], got[128];
    if (f[i].type == BW_CONFIG_T_POINTER) continue;
    assert_status(bw_config_get(BW_CONFIG_BREAKER, &c, f[i].name, want,
                                sizeof want, NULL),
                  BW_OK);
    assert_status(bw_config_get(BW_CONFIG_BREAKER, &now, f[i].name, got,
                                sizeof got, NULL),
                  BW_OK);
    if (strcmp(want, got) != 0) print_error("field %s\n", f[i].name);
    assert_string_equal(got, want);
  }
  assert_ptr_equal(now.clock, e->clock);
  assert_ptr_equal(now.sink, e->sink);
  assert_true(bwt_stats(b).metrics_only);
  /* max_break_ms 0 reads back as 0 (= break_ms), not as break_ms. */
  c.max_break_ms = 0;
  assert_status(bw_breaker_reconfigure(b, &c, &err), BW_OK);
  bw_breaker_config_of(b, &now);
  assert_i64_eq(now.max_break_ms, 0);
}

static void every_verb_answers_null_without_crashing(void **state) {
  bwt_env_t *e = *state;
  bw_breaker_config_t c;
  bw_error_t err;
  bwt_config(e, &c, "x");
  bw_breaker_t *b = bwt_breaker(e, &c);
  assert_status(bw_breaker_reconfigure(NULL, &c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "b");
  assert_status(bw_breaker_reconfigure(b, NULL, &err), BW_E_INVAL);
  assert_string_equal(err.field, "cfg");
  bw_breaker_config_of(NULL, &c);
  bw_breaker_config_of(b, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(loosened_threshold_keeps_the_count,
                                      bwt_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          tightened_threshold_decides_at_the_next_outcome, bwt_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(
          break_and_probes_change_from_the_next_decision, bwt_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(window_ratio_changes_live, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(fixed_fields_are_refused_whole, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(slow_call_threshold_changes_but_stays_on,
                                      bwt_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(invalid_config_is_refused, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(config_of_reads_back, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(every_verb_answers_null_without_crashing,
                                      bwt_setup, bwt_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

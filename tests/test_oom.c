/* Out of memory: every constructor of the core fails cleanly at every
 * allocation site — NULL and BW_E_NOMEM, never a crash, never a leak — and
 * succeeds once memory is there. The loop fails the 1st, 2nd, ... allocation
 * until a run completes with no failure injected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"
#include "oom.h"

static void noop_cb(const bw_event_t *ev, void *ud) {
  (void)ev;
  (void)ud;
}

/* Builds everything a program would, then frees it. Returns BW_OK, or
 * BW_E_NOMEM when an allocation failed (after freeing what it had). */
static int scenario(void *ctx) {
  bw_trip_rule_t rule = *(const bw_trip_rule_t *)ctx;
  bw_error_t err;
  bw_clock_t *clock = NULL;
  bw_sink_t *cb = NULL, *json = NULL, *tee = NULL;
  bw_breaker_t *b = NULL;
  bw_breaker_config_t cfg;
  FILE *fp = NULL;
  int rc = BW_E_NOMEM;

  clock = bw_clock_manual_new(0);
  if (clock == NULL) goto out;
  cb = bw_sink_callback_new(noop_cb, NULL, &err);
  if (cb == NULL) {
    assert_int_equal(err.code, BW_E_NOMEM);
    goto out;
  }
  fp = fopen("/dev/null", "w");
  assert_non_null(fp);
  json = bw_sink_json_new(fp, &err);
  if (json == NULL) {
    assert_int_equal(err.code, BW_E_NOMEM);
    goto out;
  }
  tee = bw_sink_tee_new(cb, json, &err);
  if (tee == NULL) {
    assert_int_equal(err.code, BW_E_NOMEM);
    goto out;
  }
  bw_breaker_config_init(&cfg);
  cfg.name = "oom";
  cfg.trip_rule = rule;
  cfg.minimum_calls = 2;
  cfg.failure_threshold = 2;
  cfg.clock = clock;
  cfg.sink = tee;
  b = bw_breaker_new(&cfg, &err);
  if (b == NULL) {
    assert_int_equal(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    goto out;
  }
  /* Drive it through a transition so the event path runs too (it allocates
   * nothing for short lines). */
  for (int i = 0; i < 3; i++) {
    bw_permit_t p;
    if (bw_breaker_acquire(b, &p) == BW_OK)
      bw_breaker_release(b, &p, BW_FAILURE);
  }
  assert_int_equal(bw_breaker_state(b), BW_OPEN);
  rc = BW_OK;
out:
  bw_breaker_free(b);
  bw_sink_free(tee);
  bw_sink_free(json);
  bw_sink_free(cb);
  if (fp != NULL) fclose(fp);
  bw_clock_free(clock);
  return rc;
}

static void walk(bw_trip_rule_t rule) {
  long n = oom_walk(scenario, &rule, false);
  /* At least the clock, three sinks, the breaker and its name allocate. */
  assert_true(n > 6);
  assert_true(n < 1000);
}

static void constructors_survive_every_allocation_failure_consecutive(
    void **s) {
  (void)s;
  walk(BW_TRIP_CONSECUTIVE);
}
static void constructors_survive_every_allocation_failure_count_window(
    void **s) {
  (void)s;
  walk(BW_TRIP_COUNT_WINDOW);
}
static void constructors_survive_every_allocation_failure_time_window(
    void **s) {
  (void)s;
  walk(BW_TRIP_TIME_WINDOW);
}

static void allocator_hooks_refuse_null(void **s) {
  (void)s;
  assert_int_equal(bw_replace_allocator(NULL, NULL, NULL, NULL), BW_E_INVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(allocator_hooks_refuse_null),
      cmocka_unit_test(
          constructors_survive_every_allocation_failure_consecutive),
      cmocka_unit_test(
          constructors_survive_every_allocation_failure_count_window),
      cmocka_unit_test(
          constructors_survive_every_allocation_failure_time_window),
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

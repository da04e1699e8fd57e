/* Specification tests: the alert rule over events (alert.h), on a manual
 * clock, exactly — the Polly lab's alarm (a circuit_opened in each of 3
 * one-minute windows), other N/M rules, long gaps, late events, the rule
 * grammar, feeding from a sink, the Prometheus text. */
#include "bw_test.h"

/* 2026-08-07T14:12:00.000Z: a whole minute, so windows are minutes. */
#define T0 (INT64_C(1786111920) * BW_NS_PER_S)
#define SEC(s) (T0 + (int64_t)(s)*BW_NS_PER_S)

typedef struct env_s {
  bw_clock_t *clock; /* both the alert's clock and its wall clock */
  bw_sink_t *sink;
  char out[8192]; /* the JSON lines emitted, in order */
  size_t len;
  bw_alert_t *a;
} env_t;

static void capture(const bw_event_t *ev, void *userdata) {
  env_t *e = userdata;
  e->len += bw_event_format_json(ev, e->out + e->len, sizeof(e->out) - e->len);
}

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(T0);
  e->sink = bw_sink_callback_new(capture, e, NULL);
  *state = e;
  return e->clock != NULL && e->sink != NULL ? 0 : -1;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_alert_free(e->a);
  bw_sink_free(e->sink);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static bw_alert_t *make(env_t *e, uint32_t n, uint32_t m, int64_t window_ms,
                        const char *watch_name) {
  bw_alert_config_t c;
  bw_error_t err;
  bw_alert_config_init(&c);
  c.name = "payments_opening";
  c.n = n;
  c.m = m;
  c.window_ms = window_ms;
  c.watch_name = watch_name;
  c.clock = e->clock;
  c.wall_clock = e->clock;
  c.sink = e->sink;
  e->a = bw_alert_new(&c, &err);
  if (e->a == NULL) fail_msg("%s", err.message);
  return e->a;
}

/* Moves the clock to t and tells the alert. */
static int at(env_t *e, int64_t t) {
  bw_clock_manual_set(e->clock, t);
  return bw_alert_advance(e->a, t);
}

static int opened(env_t *e, const char *name, int64_t t) {
  bw_clock_manual_set(e->clock, t);
  return bw_alert_observe(e->a, BW_EV_CIRCUIT_OPENED, name, t);
}

#define FIRING_3_3                                                          \
  "{\"event\":\"alert_firing\",\"ts\":\"2026-08-07T14:15:00.000Z\","        \
  "\"kind\":\"alert\",\"name\":\"payments_opening\",\"reason\":"            \
  "\"circuit_opened of payments in 3 of the last 3 windows of 60000 ms\","  \
  "\"watch\":\"circuit_opened\",\"watch_name\":\"payments\",\"windows\":3," \
  "\"n\":3,\"m\":3,\"window_ms\":60000}\n"

static void the_polly_alarm_fires_at_the_end_of_the_third_minute(void **state) {
  env_t *e = *state;
  bw_alert_stats_t st;
  make(e, 3, 3, 60000, "payments");
  assert_int_equal(opened(e, "payments", SEC(10)), 0);
  assert_int_equal(opened(e, "payments", SEC(70)), 0);
  assert_int_equal(opened(e, "payments", SEC(130)), 0); /* window 2 open */
  assert_int_equal(at(e, SEC(180) - 1), 0);
  assert_int_equal(e->len, 0);
  assert_int_equal(at(e, SEC(180)), 1); /* window 2 closes: 3 of 3 */
  assert_true(bw_alert_firing(e->a));
  assert_string_equal(e->out, FIRING_3_3);
  bw_alert_stats(e->a, &st);
  assert_u64_eq(st.observed, 3);
  assert_u64_eq(st.matched, 3);
  assert_u64_eq(st.windows_closed, 3);
  assert_u64_eq(st.fired, 1);
  assert_int_equal(st.breaching, 3);
  assert_int_equal(st.open_window_start_ns, SEC(180));
}

static void a_quiet_minute_resolves_it_and_the_stamp_is_the_windows_end(
    void **state) {
  env_t *e = *state;
  make(e, 3, 3, 60000, "payments");
  opened(e, "payments", SEC(0));
  opened(e, "payments", SEC(60));
  opened(e, "payments", SEC(120));
  opened(e, "payments", SEC(190)); /* closes window 2 (fires), counts in 3 */
  assert_string_equal(e->out, FIRING_3_3);
  assert_int_equal(at(e, SEC(240)), 1); /* 1, 2, 3 breached: still firing */
  /* Window 4 is quiet; the alert hears of it only at 06:30, but the
   * resolution is stamped 14:17:00, the end of the window that decided. */
  assert_int_equal(at(e, SEC(390)), 0);
  assert_string_equal(
      e->out + strlen(FIRING_3_3),
      "{\"event\":\"alert_resolved\",\"ts\":\"2026-08-07T14:17:00.000Z\","
      "\"kind\":\"alert\",\"name\":\"payments_opening\",\"reason\":"
      "\"circuit_opened of payments in 3 of the last 3 windows of 60000 ms\","
      "\"watch\":\"circuit_opened\",\"watch_name\":\"payments\",\"windows\":2,"
      "\"n\":3,\"m\":3,\"window_ms\":60000}\n");
  assert_false(bw_alert_firing(e->a));
}

static void other_objects_other_events_and_repeats_do_not_count(void **state) {
  env_t *e = *state;
  bw_alert_stats_t st;
  int i;
  make(e, 2, 2, 60000, "payments");
  for (i = 0; i < 5; i++) /* five openings in one window are one window */
    opened(e, "payments", SEC(1 + i));
  opened(e, "inventory", SEC(61));
  bw_alert_observe(e->a, BW_EV_CIRCUIT_CLOSED, "payments", SEC(62));
  bw_alert_observe(e->a, BW_EV_CIRCUIT_OPENED, NULL, SEC(63));
  assert_int_equal(at(e, SEC(120)), 0); /* windows 0 and 1: 1 of 2 */
  bw_alert_stats(e->a, &st);
  assert_u64_eq(st.observed, 8);
  assert_u64_eq(st.matched, 5);
  assert_int_equal(st.breaching, 1);
  assert_int_equal(e->len, 0);
}

static void without_a_name_any_object_counts_and_n_of_m_is_a_count(
    void **state) {
  env_t *e = *state;
  make(e, 2, 3, 60000, NULL);
  opened(e, "inventory", SEC(5));  /* window 0 */
  opened(e, "payments", SEC(125)); /* window 2: closes 0 and 1 */
  assert_false(bw_alert_firing(e->a));
  assert_int_equal(at(e, SEC(180)), 1); /* 0, 1, 2 = yes, no, yes */
  assert_contains(e->out, "\"event\":\"alert_firing\"");
  assert_contains(e->out, "\"ts\":\"2026-08-07T14:15:00.000Z\"");
  assert_contains(e->out,
                  "\"reason\":\"circuit_opened in 2 of the last 3 "
                  "windows of 60000 ms\"");
  assert_contains(e->out, "\"watch_name\":\"\",\"windows\":2,\"n\":2");
  /* 1, 2, 3 = no, yes, no: resolved at the end of window 3 */
  assert_int_equal(at(e, SEC(240)), 0);
  assert_contains(e->out,
                  "\"event\":\"alert_resolved\",\"ts\":\"2026-08-07T"
                  "14:16:00.000Z\"");
}

static void a_long_gap_closes_every_window_in_a_few_steps(void **state) {
  env_t *e = *state;
  bw_alert_stats_t st;
  make(e, 1, 2, 1000, "payments");
  opened(e, "payments", SEC(0));
  /* A day later: window 0 fired at 1 s, resolved once two quiet windows
   * had closed (at 3 s); 86400 windows closed in all. */
  assert_int_equal(at(e, SEC(86400)), 0);
  bw_alert_stats(e->a, &st);
  assert_u64_eq(st.windows_closed, 86400);
  assert_u64_eq(st.fired, 1);
  assert_u64_eq(st.resolved, 1);
  assert_int_equal(st.breaching, 0);
  assert_int_equal(st.open_window_start_ns, SEC(86400));
  assert_contains(e->out,
                  "\"event\":\"alert_firing\",\"ts\":\"2026-08-07T"
                  "14:12:01.000Z\"");
  assert_contains(e->out,
                  "\"event\":\"alert_resolved\",\"ts\":\"2026-08-07T"
                  "14:12:03.000Z\"");
}

static void an_event_older_than_the_open_window_is_late(void **state) {
  env_t *e = *state;
  bw_alert_stats_t st;
  make(e, 1, 1, 60000, "payments");
  at(e, SEC(120));
  assert_int_equal(
      bw_alert_observe(e->a, BW_EV_CIRCUIT_OPENED, "payments", SEC(119)), 0);
  bw_alert_stats(e->a, &st);
  assert_u64_eq(st.late, 1);
  assert_u64_eq(st.matched, 0);
  assert_int_equal(st.open_count, 0);
  /* an advance back in time closes nothing */
  assert_int_equal(bw_alert_advance(e->a, SEC(0)), 0);
  bw_alert_stats(e->a, &st);
  assert_u64_eq(st.windows_closed, 2);
}

static void the_alert_listens_to_a_breaker_through_its_sink(void **state) {
  env_t *e = *state;
  bw_breaker_config_t bc;
  bw_breaker_t *b;
  bw_sink_t *feed;
  bw_permit_t p;
  int minute;
  make(e, 3, 3, 60000, "payments");
  feed = bw_alert_sink_new(e->a, NULL);
  assert_non_null(feed);
  bw_breaker_config_init(&bc);
  bc.name = "payments";
  bc.failure_threshold = 1;
  bc.break_ms = 10000;
  bc.clock = e->clock;
  bc.sink = feed;
  b = bw_breaker_new(&bc, NULL);
  assert_non_null(b);
  for (minute = 0; minute < 3; minute++) {
    bw_clock_manual_set(e->clock, SEC(60 * minute + 5));
    bw_breaker_reset(b); /* closed again (circuit_reset: not watched) */
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_FAILURE); /* circuit_opened */
  }
  assert_int_equal(at(e, SEC(180)), 1);
  assert_string_equal(e->out, FIRING_3_3);
  bw_breaker_free(b);
  bw_sink_free(feed);
}

static void prometheus_text(void **state) {
  env_t *e = *state;
  char *buf = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&buf, &n);
  make(e, 3, 3, 60000, "payments");
  opened(e, "payments", SEC(1));
  opened(e, "payments", SEC(61));
  opened(e, "payments", SEC(121));
  at(e, SEC(180));
  assert_status(bw_alert_write_prometheus(e->a, fp), BW_OK);
  fclose(fp);
  assert_string_equal(
      buf,
      "# HELP breakwater_alert_firing 1 while the alert rule holds (N of the "
      "last M windows breached).\n"
      "# TYPE breakwater_alert_firing gauge\n"
      "breakwater_alert_firing{alert=\"payments_opening\"} 1\n"
      "# HELP breakwater_alert_breaching_windows Breaching windows among the "
      "last M closed.\n"
      "# TYPE breakwater_alert_breaching_windows gauge\n"
      "breakwater_alert_breaching_windows{alert=\"payments_opening\"} 3\n"
      "# HELP breakwater_alert_fired_total Transitions to firing.\n"
      "# TYPE breakwater_alert_fired_total counter\n"
      "breakwater_alert_fired_total{alert=\"payments_opening\"} 1\n"
      "# HELP breakwater_alert_resolved_total Transitions back to resolved.\n"
      "# TYPE breakwater_alert_resolved_total counter\n"
      "breakwater_alert_resolved_total{alert=\"payments_opening\"} 0\n"
      "# HELP breakwater_alert_events_total Watched events counted in a "
      "window.\n"
      "# TYPE breakwater_alert_events_total counter\n"
      "breakwater_alert_events_total{alert=\"payments_opening\"} 3\n");
  free(buf);
}

static void validate_names_the_field_and_the_rule(void **state) {
  bw_alert_config_t c;
  bw_error_t err;
  (void)state;
  bw_alert_config_init(&c);
  assert_int_equal(c.watch, BW_EV_CIRCUIT_OPENED);
  assert_int_equal(c.n, 3);
  assert_int_equal(c.m, 3);
  assert_int_equal(c.window_ms, 60000);
  assert_status(bw_alert_config_validate(&c, &err), BW_OK);
  c.m = 65;
  assert_status(bw_alert_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "m");
  assert_string_equal(err.message, "m must be in [1, 64] (got 65)");
  c.m = 2;
  assert_status(bw_alert_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.message, "n must be in [1, m] (got 3 with m 2)");
  c.n = 0;
  assert_status(bw_alert_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "n");
  bw_alert_config_init(&c);
  c.window_ms = 0;
  assert_status(bw_alert_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.message,
                      "window_ms must be in [1, 86400000] (got 0)");
  bw_alert_config_init(&c);
  c.watch = BW_EV_ALERT_FIRING;
  assert_status(bw_alert_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "watch");
  c.watch = BW_EV__COUNT;
  assert_status(bw_alert_config_validate(&c, &err), BW_E_INVAL);
  bw_alert_config_init(&c);
  c.name = "";
  assert_null(bw_alert_new(&c, &err));
  assert_string_equal(err.field, "name");
}

static void the_rule_grammar(void **state) {
  bw_alert_config_t c;
  bw_error_t err;
  char name[BW_NAME_MAX + 1];
  static const struct {
    const char *rule, *message;
  } bad[] = {
      {"breaker_opened 3/3",
       "rule must be 'EVENT [name=NAME] N/M WINDOW', e.g. 'breaker_opened "
       "name=payments 3/3 60s' (got 2 tokens)"},
      {"breaker_closed 3/3 60s",
       "rule: unknown event 'breaker_closed' (an event name of "
       "docs/events.md, or breaker_opened)"},
      {"breaker_opened nom=payments 3/3 60s",
       "rule: expected name=NAME, got 'nom=payments'"},
      {"breaker_opened name= 3/3 60s",
       "rule: the name in 'name=' must be 1 to 200 bytes"},
      {"breaker_opened 3-3 60s",
       "rule: expected N/M (windows with the event / windows looked at, e.g. "
       "3/3), got '3-3'"},
      {"breaker_opened 4/3 60s", "rule: '4/3' needs 1 <= N <= M <= 64"},
      {"breaker_opened 1/65 60s", "rule: '1/65' needs 1 <= N <= M <= 64"},
      {"breaker_opened 0/3 60s", "rule: '0/3' needs 1 <= N <= M <= 64"},
      {"breaker_opened 3/3 60",
       "rule: the window '60' must be a whole number with a unit ms, s, m or "
       "h, from 1ms to 24h"},
      {"breaker_opened 3/3 25h",
       "rule: the window '25h' must be a whole number with a unit ms, s, m or "
       "h, from 1ms to 24h"},
      {"breaker_opened 3/3 0s",
       "rule: the window '0s' must be a whole number with a unit ms, s, m or "
       "h, from 1ms to 24h"},
      {"breaker_opened 3/3 -1s",
       "rule: the window '-1s' must be a whole number with a unit ms, s, m or "
       "h, from 1ms to 24h"},
      {"a b c d e f",
       "rule has too many tokens: expected 'EVENT [name=NAME] N/M WINDOW'"},
  };
  size_t i;
  (void)state;
  bw_alert_config_init(&c);
  assert_status(bw_alert_parse_rule("breaker_opened name=payments 3/3 60s", &c,
                                    name, &err),
                BW_OK);
  assert_int_equal(c.watch, BW_EV_CIRCUIT_OPENED);
  assert_string_equal(c.watch_name, "payments");
  assert_ptr_equal(c.watch_name, name);
  assert_int_equal(c.n, 3);
  assert_int_equal(c.m, 3);
  assert_int_equal(c.window_ms, 60000);
  assert_status(
      bw_alert_parse_rule("  rate_limited   2/5  500ms ", &c, name, &err),
      BW_OK);
  assert_int_equal(c.watch, BW_EV_RATE_LIMITED);
  assert_null(c.watch_name);
  assert_int_equal(c.n, 2);
  assert_int_equal(c.m, 5);
  assert_int_equal(c.window_ms, 500);
  assert_status(bw_alert_parse_rule("circuit_opened 1/1 24h", &c, name, &err),
                BW_OK);
  assert_int_equal(c.window_ms, 86400000);
  assert_status(bw_alert_parse_rule("circuit_opened 1/1 2m", &c, name, &err),
                BW_OK);
  assert_int_equal(c.window_ms, 120000);
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    bw_alert_config_init(&c);
    if (bw_alert_parse_rule(bad[i].rule, &c, name, &err) != BW_E_INVAL)
      fail_msg("accepted '%s'", bad[i].rule);
    assert_string_equal(err.field, "rule");
    assert_string_equal(err.message, bad[i].message);
    assert_int_equal(c.n, 3); /* cfg untouched */
  }
  assert_status(bw_alert_parse_rule(NULL, &c, name, &err), BW_E_INVAL);
  assert_status(bw_alert_parse_rule("x", &c, NULL, &err), BW_E_INVAL);
}

static void every_verb_answers_null_without_crashing(void **state) {
  bw_alert_stats_t st;
  bw_error_t err;
  (void)state;
  assert_status(bw_alert_observe(NULL, BW_EV_CIRCUIT_OPENED, "x", 0),
                BW_E_INVAL);
  assert_status(bw_alert_advance(NULL, 0), BW_E_INVAL);
  assert_false(bw_alert_firing(NULL));
  assert_string_equal(bw_alert_name(NULL), "");
  memset(&st, 0xAB, sizeof(st));
  bw_alert_stats(NULL, &st);
  assert_u64_eq(st.observed, 0);
  bw_alert_stats(NULL, NULL);
  assert_null(bw_alert_sink_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_status(bw_alert_write_prometheus(NULL, stdout), BW_E_INVAL);
  assert_null(bw_alert_new(NULL, &err));
  bw_alert_config_init(NULL);
  assert_status(bw_alert_config_validate(NULL, &err), BW_E_INVAL);
  bw_alert_free(NULL);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(the_polly_alarm_fires_at_the_end_of_the_third_minute),
      T(a_quiet_minute_resolves_it_and_the_stamp_is_the_windows_end),
      T(other_objects_other_events_and_repeats_do_not_count),
      T(without_a_name_any_object_counts_and_n_of_m_is_a_count),
      T(a_long_gap_closes_every_window_in_a_few_steps),
      T(an_event_older_than_the_open_window_is_late),
      T(the_alert_listens_to_a_breaker_through_its_sink),
      T(prometheus_text),
      T(validate_names_the_field_and_the_rule),
      T(the_rule_grammar),
      T(every_verb_answers_null_without_crashing),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}

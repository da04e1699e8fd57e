/* Specification tests: typed events, the JSON-lines format and the sinks.
 *
 * A JSON line is one object (docs/events.md, docs/events.schema.json):
 * "event", "ts" (ISO-8601 UTC with milliseconds, from wall_ns), "kind",
 * "name", "reason", then the fields in order, then the caller's context as
 * an object under "ctx", then "\n". Strings are escaped, and bytes that are
 * not UTF-8 become U+FFFD; integers are integers; doubles have at most 17
 * significant digits and NaN/inf become null. */
#include <ctype.h>

#include "bw_test.h"

#define LINE_MAX_LEN 4096

static size_t format(const bw_event_t *ev, char *buf, size_t size) {
  memset(buf, 0x7E, size);
  return bw_event_format_json(ev, buf, size);
}

static bw_event_t make_event(bw_event_type_t type, int64_t wall_ns,
                             const char *name, const char *reason,
                             const bw_field_t *fields, size_t n,
                             const bw_context_t *ctx) {
  bw_event_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.type = type;
  ev.wall_ns = wall_ns;
  ev.mono_ns = 42;
  ev.name = name;
  ev.reason = reason;
  ev.fields = fields;
  ev.field_count = n;
  ev.context = ctx;
  return ev;
}

/* Asserts that bw_event_format_json writes exactly `expected` and returns its
 * length. */
static void assert_json(const bw_event_t *ev, const char *expected) {
  char buf[LINE_MAX_LEN];
  size_t n = format(ev, buf, sizeof(buf));
  assert_string_equal(buf, expected);
  assert_int_equal(n, strlen(expected));
}

/* ---- timestamps
 * ------------------------------------------------------------------ */

static void iso8601_formats_utc_with_milliseconds(void **state) {
  static const struct {
    int64_t ns;
    const char *text;
  } cases[] = {
      {INT64_C(1786111923418000000), "2026-08-07T14:12:03.418Z"},
      {INT64_C(0), "1970-01-01T00:00:00.000Z"},
      {INT64_C(1709251199999000000), "2024-02-29T23:59:59.999Z"},
      {INT64_C(951868800000000000), "2000-03-01T00:00:00.000Z"},
      {INT64_C(4107542400123000000), "2100-03-01T00:00:00.123Z"},
      {INT64_C(1000), "1970-01-01T00:00:00.000Z"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char buf[25];
    memset(buf, 'x', sizeof(buf));
    assert_ptr_equal(bw_format_iso8601_ms(cases[i].ns, buf, sizeof(buf)), buf);
    assert_string_equal(buf, cases[i].text);
  }
}

/* Milliseconds are truncated, never rounded up (a rounded .9995 s would claim
 * an instant that has not happened yet, and could carry into the next day). */
static void iso8601_truncates_sub_millisecond_time(void **state) {
  char buf[32];
  (void)state;
  bw_format_iso8601_ms(INT64_C(1786111923418999999), buf, sizeof(buf));
  assert_string_equal(buf, "2026-08-07T14:12:03.418Z");
  bw_format_iso8601_ms(INT64_C(946684799999999999), buf, sizeof(buf));
  assert_string_equal(buf, "1999-12-31T23:59:59.999Z");
}

/* Before the epoch the instant is floored too (toward the past, not toward
 * zero): 1 ns before the epoch is 23:59:59.999 on 1969-12-31. */
static void iso8601_floors_times_before_the_epoch(void **state) {
  char buf[32];
  (void)state;
  bw_format_iso8601_ms(INT64_C(-1), buf, sizeof(buf));
  assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
  bw_format_iso8601_ms(INT64_C(-1500000000), buf, sizeof(buf));
  assert_string_equal(buf, "1969-12-31T23:59:58.500Z");
}

/* ---- the JSON line
 * ------------------------------------------------------------------ */

static void json_line_has_keys_in_order_and_ends_with_newline(void **state) {
  bw_field_t fields[2];
  bw_event_t ev;
  (void)state;
  fields[0] = bw_field_int("break_ms", 60000);
  fields[1] = bw_field_str("from", "closed");
  ev = make_event(BW_EV_CIRCUIT_OPENED, INT64_C(1786111923418000000),
                  "payment_api", "3 consecutive failures (failure_threshold 3)",
                  fields, 2, NULL);
  assert_json(
      &ev,
      "{\"event\":\"circuit_opened\",\"ts\":\"2026-08-07T14:12:03.418Z\","
      "\"kind\":\"breaker\",\"name\":\"payment_api\",\"reason\":\"3 "
      "consecutive failures "
      "(failure_threshold 3)\",\"break_ms\":60000,\"from\":\"closed\"}"
      "\n");
}

static void json_line_without_fields_keeps_an_empty_reason(void **state) {
  bw_event_t ev;
  (void)state;
  ev = make_event(BW_EV_CIRCUIT_RESET, 0, "b", "", NULL, 0, NULL);
  assert_json(
      &ev,
      "{\"event\":\"circuit_reset\",\"ts\":\"1970-01-01T00:00:"
      "00.000Z\",\"kind\":\"breaker\",\"name\":\"b\",\"reason\":\"\"}\n");
}

static void json_field_types_are_written_as_json_values(void **state) {
  bw_field_t fields[8];
  bw_event_t ev;
  (void)state;
  fields[0] = bw_field_int("neg", -5);
  fields[1] = bw_field_int("min", INT64_MIN);
  fields[2] = bw_field_uint("count", UINT64_MAX);
  fields[3] = bw_field_double("half", 0.5);
  fields[4] = bw_field_double("ratio", -2.25);
  fields[5] = bw_field_bool("yes", true);
  fields[6] = bw_field_bool("no", false);
  fields[7] = bw_field_str("state", "half_open");
  ev = make_event(BW_EV_CALLS_REJECTED, 0, "n", "r", fields, 8, NULL);
  assert_json(
      &ev,
      "{\"event\":\"calls_rejected\",\"ts\":\"1970-01-01T00:00:00.000Z\","
      "\"kind\":\"breaker\",\"name\":\"n\",\"reason\":\"r\",\"neg\":-5,"
      "\"min\":-9223372036854775808,\"count\":18446744073709551615,"
      "\"half\":0.5,\"ratio\":-2.25,\"yes\":true,\"no\":false,"
      "\"state\":\"half_open\"}\n");
}

static void json_nan_and_infinities_are_null(void **state) {
  bw_field_t fields[3];
  bw_event_t ev;
  (void)state;
  fields[0] = bw_field_double("nan", NAN);
  fields[1] = bw_field_double("inf", INFINITY);
  fields[2] = bw_field_double("ninf", -INFINITY);
  ev = make_event(BW_EV_CIRCUIT_OPENED, 0, "n", "r", fields, 3, NULL);
  assert_json(&ev,
              "{\"event\":\"circuit_opened\",\"ts\":\"1970-01-01T00:00:"
              "00.000Z\",\"kind\":\"breaker\",\"name\":\"n\",\"reason\":\"r\","
              "\"nan\":null,"
              "\"inf\":null,\"ninf\":null}\n");
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_json_number(const char *s, size_t n) {
  size_t i = 0;
  if (i < n && s[i] == '-') i++;
  if (i >= n || !isdigit((unsigned char)s[i])) return false;
  if (s[i] == '0') {
    i++;
  } else {
    while (i < n && isdigit((unsigned char)s[i]))
      i++;
  }
  if (i < n && s[i] == '.') {
    i++;
    if (i >= n || !isdigit((unsigned char)s[i])) return false;
    while (i < n && isdigit((unsigned char)s[i]))
      i++;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (i >= n || !isdigit((unsigned char)s[i])) return false;
    while (i < n && isdigit((unsigned char)s[i]))
      i++;
  }
  return i == n;
}

static size_t significant_digits(const char *s, size_t n) {
  size_t i, digits = 0;
  bool leading = true;
  for (i = 0; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
    if (!isdigit((unsigned char)s[i])) continue;
    if (leading && s[i] == '0') continue;
    leading = false;
    digits++;
  }
  return digits;
}

static void json_doubles_round_trip_with_at_most_17_digits(void **state) {
  static const double values[] = {0.1,     1.0 / 3.0, 12.0 / 22.0,   1e300,
                                  -1e-300, 5e-324,    123456789.125, 2.0};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
    char buf[LINE_MAX_LEN];
    bw_field_t f = bw_field_double("v", values[i]);
    bw_event_t ev = make_event(BW_EV_CIRCUIT_OPENED, 0, "n", "r", &f, 1, NULL);
    const char *start, *end;
    char num[64];
    size_t len;
    format(&ev, buf, sizeof(buf));
    start = strstr(buf, "\"v\":");
    assert_non_null(start);
    start += 4;
    end = strchr(start, '}');
    assert_non_null(end);
    len = (size_t)(end - start);
    assert_true(len < sizeof(num));
    memcpy(num, start, len);
    num[len] = '\0';
    if (!is_json_number(num, len)) {
      print_error("%.17g written as \"%s\": not a JSON number\n", values[i],
                  num);
      fail();
    }
    if (significant_digits(num, len) > 17) {
      print_error("%.17g written as \"%s\": more than 17 digits\n", values[i],
                  num);
      fail();
    }
    if (strtod(num, NULL) != values[i]) {
      print_error("%.17g written as \"%s\": does not read back\n", values[i],
                  num);
      fail();
    }
    assert_string_equal(end, "}\n");
  }
}

static void json_strings_are_escaped(void **state) {
  bw_field_t f;
  bw_event_t ev;
  char buf[LINE_MAX_LEN];
  const char *lower, *upper;
  (void)state;
  f = bw_field_str("detail", "C:\\tmp \"x\"");
  ev = make_event(BW_EV_CIRCUIT_OPENED, 0, "pay\"ment",
                  "say \"hi\" \\ path\nnext\x01\x1f caf\xc3\xa9", &f, 1, NULL);
  format(&ev, buf, sizeof(buf));
  /* \u00XX escapes may use either case of hex digit; accept both. */
  lower =
      "{\"event\":\"circuit_opened\",\"ts\":\"1970-01-01T00:00:00.000Z\","
      "\"kind\":\"breaker\",\"name\":\"pay\\\"ment\",\"reason\":\"say "
      "\\\"hi\\\" \\\\ path\\n"
      "next\\u0001\\u001f caf\xc3\xa9\",\"detail\":\"C:\\\\tmp "
      "\\\"x\\\"\"}\n";
  upper =
      "{\"event\":\"circuit_opened\",\"ts\":\"1970-01-01T00:00:00.000Z\","
      "\"kind\":\"breaker\",\"name\":\"pay\\\"ment\",\"reason\":\"say "
      "\\\"hi\\\" \\\\ path\\n"
      "next\\u0001\\u001F caf\xc3\xa9\",\"detail\":\"C:\\\\tmp "
      "\\\"x\\\"\"}\n";
  if (strcmp(buf, lower) != 0 && strcmp(buf, upper) != 0) {
    print_error("got      %s\nexpected %s", buf, lower);
    fail();
  }
}

/* The caller's context goes under its own key, "ctx", so it can never
 * overwrite the line's own keys or a field. */
static void json_context_items_go_under_ctx_after_the_fields(void **state) {
  static const bw_kv_t items[] = {{"request_id", "3e7a9c10"}, {"note", "a\"b"}};
  static const bw_context_t ctx = {items, 2};
  bw_field_t f = bw_field_int("break_ms", 15000);
  bw_event_t ev;
  (void)state;
  ev = make_event(
      BW_EV_CIRCUIT_OPENED, INT64_C(1786111923418000000), "gateway_pagamento",
      "failure ratio 0.55 >= 0.50 over 10000 ms (22 calls)", &f, 1, &ctx);
  assert_json(
      &ev,
      "{\"event\":\"circuit_opened\",\"ts\":\"2026-08-07T14:12:03.418Z\","
      "\"kind\":\"breaker\",\"name\":\"gateway_pagamento\",\"reason\":"
      "\"failure ratio 0.55 "
      ">= 0.50 over 10000 ms (22 calls)\",\"break_ms\":15000,"
      "\"ctx\":{\"request_id\":\"3e7a9c10\",\"note\":\"a\\\"b\"}}\n");
}

/* Bytes that are not well-formed UTF-8 (a stray continuation byte, a
 * truncated sequence, an overlong encoding, a surrogate, a byte above F4)
 * become U+FFFD, one per byte; well-formed sequences of 2, 3 and 4 bytes
 * pass through. Every line stays valid JSON whatever a name holds. */
static void json_invalid_utf8_becomes_the_replacement_character(void **state) {
  bw_event_t ev;
  (void)state;
  ev = make_event(BW_EV_CIRCUIT_RESET, 0,
                  "a\x80"
                  "b\xc3"
                  "c\xc0\xaf"
                  "d\xed\xa0\x80"
                  "e\xf5"
                  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
                  "", NULL, 0, NULL);
  assert_json(&ev,
              "{\"event\":\"circuit_reset\",\"ts\":\"1970-01-01T00:00:"
              "00.000Z\",\"kind\":\"breaker\",\"name\":\"a\\ufffdb\\ufffdc"
              "\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffde\\ufffd"
              "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"reason\":\"\"}\n");
}

/* A field named like one of the line's own keys cannot duplicate or
 * overwrite it: it is written as "<key>_field". */
static void json_fields_never_reuse_the_lines_own_keys(void **state) {
  bw_field_t f[6];
  bw_event_t ev;
  (void)state;
  f[0] = bw_field_str("event", "e");
  f[1] = bw_field_str("ts", "t");
  f[2] = bw_field_str("kind", "k");
  f[3] = bw_field_str("name", "n");
  f[4] = bw_field_str("reason", "r");
  f[5] = bw_field_str("ctx", "c");
  ev = make_event(BW_EV_CIRCUIT_RESET, 0, "b", "why", f, 6, NULL);
  assert_json(&ev,
              "{\"event\":\"circuit_reset\",\"ts\":\"1970-01-01T00:00:"
              "00.000Z\",\"kind\":\"breaker\",\"name\":\"b\",\"reason\":"
              "\"why\",\"event_field\":\"e\",\"ts_field\":\"t\","
              "\"kind_field\":\"k\",\"name_field\":\"n\",\"reason_field\":"
              "\"r\",\"ctx_field\":\"c\"}\n");
}

/* Every event type has a kind: the kind of object that emits it. */
static void event_types_name_the_kind_of_object_that_emits_them(void **state) {
  (void)state;
  assert_string_equal(bw_event_type_kind(BW_EV_CIRCUIT_OPENED), "breaker");
  assert_string_equal(bw_event_type_kind(BW_EV_CALLS_REJECTED), "breaker");
  assert_string_equal(bw_event_type_kind(BW_EV_REGISTRY_EVICTED), "registry");
  assert_string_equal(bw_event_type_kind(BW_EV_RETRY_GAVE_UP), "retry");
  assert_string_equal(bw_event_type_kind(BW_EV_REGIME_CHANGED), "gauge");
  assert_string_equal(bw_event_type_kind(BW_EV_DEGRADE_LEVEL_CHANGED),
                      "degrade");
  assert_string_equal(bw_event_type_kind(BW_EV_DEAD_LETTERED), "queue");
  assert_string_equal(bw_event_type_kind(BW_EV_REDIS_RESTORED), "redis");
  assert_string_equal(bw_event_type_kind(BW_EV_LIMIT_CHANGED), "limiter");
  assert_string_equal(bw_event_type_kind(BW_EV__COUNT), "unknown");
  for (int t = 0; t < BW_EV__COUNT; t++)
    assert_string_not_equal(bw_event_type_kind((bw_event_type_t)t), "unknown");
}

static void json_format_reports_the_full_length_when_cut(void **state) {
  bw_field_t fields[2];
  bw_event_t ev;
  char full[LINE_MAX_LEN], small[16], none[4];
  size_t n;
  (void)state;
  fields[0] = bw_field_int("break_ms", 60000);
  fields[1] = bw_field_str("from", "closed");
  ev = make_event(BW_EV_CIRCUIT_OPENED, 0, "payment_api", "why", fields, 2,
                  NULL);
  n = format(&ev, full, sizeof(full));
  assert_int_equal(n, strlen(full));

  assert_int_equal(format(&ev, small, sizeof(small)), n);
  assert_int_equal(small[sizeof(small) - 1], '\0');
  assert_int_equal(strlen(small), sizeof(small) - 1);
  assert_memory_equal(small, full, sizeof(small) - 1);

  memset(none, 'z', sizeof(none));
  assert_int_equal(bw_event_format_json(&ev, none, 0), n);
  assert_memory_equal(none, "zzzz", 4); /* size 0: nothing written */

  /* exactly enough room for the line and its NUL */
  {
    char *exact = malloc(n + 1);
    assert_non_null(exact);
    assert_int_equal(bw_event_format_json(&ev, exact, n + 1), n);
    assert_string_equal(exact, full);
    free(exact);
  }
}

static void event_type_names_are_the_wire_names(void **state) {
  (void)state;
  assert_string_equal(bw_event_type_name(BW_EV_CIRCUIT_OPENED),
                      "circuit_opened");
  assert_string_equal(bw_event_type_name(BW_EV_CIRCUIT_HALF_OPENED),
                      "circuit_half_opened");
  assert_string_equal(bw_event_type_name(BW_EV_CIRCUIT_CLOSED),
                      "circuit_closed");
  assert_string_equal(bw_event_type_name(BW_EV_CIRCUIT_ISOLATED),
                      "circuit_isolated");
  assert_string_equal(bw_event_type_name(BW_EV_CIRCUIT_DISABLED),
                      "circuit_disabled");
  assert_string_equal(bw_event_type_name(BW_EV_CIRCUIT_RESET), "circuit_reset");
  assert_string_equal(bw_event_type_name(BW_EV_CALLS_REJECTED),
                      "calls_rejected");
  assert_string_equal(bw_event_type_name(BW_EV_REGISTRY_EVICTED),
                      "registry_evicted");
  assert_string_equal(bw_event_type_name(BW_EV_METRICS_ONLY_CHANGED),
                      "metrics_only_changed");
  assert_string_equal(bw_event_type_name(BW_EV__COUNT), "unknown");
  assert_string_equal(bw_event_type_name((bw_event_type_t)-1), "unknown");
}

/* ---- sinks
 * ---------------------------------------------------------------------------
 */

/* Reads a whole stream from the start into buf (NUL-terminated). */
static size_t slurp(FILE *fp, char *buf, size_t size) {
  size_t n;
  fflush(fp);
  rewind(fp);
  n = fread(buf, 1, size - 1, fp);
  buf[n] = '\0';
  return n;
}

static void json_sink_writes_the_breakers_events_as_lines(void **state) {
  static const bw_kv_t items[] = {{"request_id", "3e7a9c10"}};
  static const bw_context_t ctx = {items, 1};
  FILE *fp = tmpfile();
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_clock_t *wall = bw_clock_manual_new(INT64_C(1786111923418000000));
  bw_breaker_config_t cfg;
  bw_breaker_t *b;
  bw_sink_t *sink;
  bw_error_t err;
  bw_permit_t p;
  char text[LINE_MAX_LEN];
  int i;
  (void)state;

  assert_non_null(fp);
  sink = bw_sink_json_new(fp, &err);
  assert_non_null(sink);
  bw_breaker_config_init(&cfg);
  cfg.name = "payment_api";
  cfg.failure_threshold = 3;
  cfg.success_threshold = 3;
  cfg.break_ms = 60000;
  cfg.clock = clock;
  cfg.wall_clock = wall;
  cfg.sink = sink;
  b = bw_breaker_new(&cfg, &err);
  assert_non_null(b);

  for (i = 0; i < 3; i++) {
    p = bwt_acquire(b);
    assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);
  }
  slurp(fp, text, sizeof(text));
  assert_string_equal(
      text,
      "{\"event\":\"circuit_opened\",\"ts\":\"2026-08-07T14:12:03.418Z\","
      "\"kind\":\"breaker\",\"name\":\"payment_api\",\"reason\":\"3 "
      "consecutive failures "
      "(failure_threshold 3)\",\"break_ms\":60000,\"from\":\"closed\"}\n");

  /* A minute later, with a request context. */
  bw_clock_manual_advance(clock, 60 * BW_NS_PER_S);
  bw_clock_manual_advance(wall, 60 * BW_NS_PER_S + 7 * BW_NS_PER_MS);
  bw_context_set(&ctx);
  p = bwt_acquire(b);
  bw_context_set(NULL);
  slurp(fp, text, sizeof(text));
  assert_string_equal(
      text,
      "{\"event\":\"circuit_opened\",\"ts\":\"2026-08-07T14:12:03.418Z\","
      "\"kind\":\"breaker\",\"name\":\"payment_api\",\"reason\":\"3 "
      "consecutive failures "
      "(failure_threshold 3)\",\"break_ms\":60000,\"from\":\"closed\"}\n"
      "{\"event\":\"circuit_half_opened\",\"ts\":\"2026-08-07T14:13:03.425Z\","
      "\"kind\":\"breaker\",\"name\":\"payment_api\",\"reason\":\"break of "
      "60000 ms elapsed\","
      "\"from\":\"open\",\"ctx\":{\"request_id\":\"3e7a9c10\"}}\n");
  assert_status(bw_breaker_release(b, &p, BW_IGNORED), BW_OK);

  bw_breaker_free(b);
  bw_sink_free(sink);
  bw_clock_free(clock);
  bw_clock_free(wall);
  fclose(fp);
}

static void json_sink_writes_emitted_events_in_order(void **state) {
  FILE *fp = tmpfile();
  bw_sink_t *sink;
  bw_field_t f[2];
  bw_event_t ev;
  char text[LINE_MAX_LEN];
  (void)state;
  assert_non_null(fp);
  sink = bw_sink_json_new(fp, NULL);
  assert_non_null(sink);
  f[0] = bw_field_uint("count", 101);
  f[1] = bw_field_str("state", "open");
  ev = make_event(BW_EV_CALLS_REJECTED, INT64_C(1786111923418000000), "a", "",
                  f, 2, NULL);
  bw_sink_emit(sink, &ev);
  ev = make_event(BW_EV_CIRCUIT_RESET, INT64_C(1786111924000000000), "a",
                  "operator", NULL, 0, NULL);
  bw_sink_emit(sink, &ev);
  slurp(fp, text, sizeof(text));
  assert_string_equal(
      text,
      "{\"event\":\"calls_rejected\",\"ts\":\"2026-08-07T14:12:03.418Z\","
      "\"kind\":\"breaker\",\"name\":\"a\",\"reason\":\"\",\"count\":101,"
      "\"state\":\"open\"}\n"
      "{\"event\":\"circuit_reset\",\"ts\":\"2026-08-07T14:12:04.000Z\","
      "\"kind\":\"breaker\",\"name\":\"a\",\"reason\":\"operator\"}\n");
  bw_sink_free(sink);
  fclose(fp);
}

/* A line longer than any internal buffer is still written whole. */
static void json_sink_writes_long_lines_whole(void **state) {
  static char big[5001];
  static char text[8192];
  char expected[8192];
  bw_kv_t item;
  bw_context_t ctx;
  FILE *fp = tmpfile();
  bw_sink_t *sink;
  bw_event_t ev;
  (void)state;
  assert_non_null(fp);
  memset(big, 'q', 5000);
  big[5000] = '\0';
  item.key = "blob";
  item.value = big;
  ctx.items = &item;
  ctx.count = 1;
  sink = bw_sink_json_new(fp, NULL);
  assert_non_null(sink);
  ev = make_event(BW_EV_CIRCUIT_RESET, 0, "a", "operator", NULL, 0, &ctx);
  bw_sink_emit(sink, &ev);
  snprintf(expected, sizeof(expected),
           "{\"event\":\"circuit_reset\",\"ts\":\"1970-01-01T00:00:00.000Z\","
           "\"kind\":\"breaker\",\"name\":\"a\",\"reason\":\"operator\","
           "\"ctx\":{\"blob\":\"%s\"}}\n",
           big);
  slurp(fp, text, sizeof(text));
  assert_int_equal(strlen(text), strlen(expected));
  assert_string_equal(text, expected);
  bw_sink_free(sink);
  fclose(fp);
}

static void sinks_refuse_missing_arguments(void **state) {
  bw_error_t err;
  (void)state;
  memset(&err, 0, sizeof(err));
  assert_null(bw_sink_callback_new(NULL, NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  memset(&err, 0, sizeof(err));
  assert_null(bw_sink_json_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_null(bw_sink_callback_new(NULL, NULL, NULL));
}

static void callback_sink_delivers_the_event_as_emitted(void **state) {
  static const bw_kv_t items[] = {{"k", "v"}};
  static const bw_context_t ctx = {items, 1};
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_sink_t *sink;
  bw_field_t f[2];
  bw_event_t ev;
  const bwt_event_t *got;
  (void)state;
  assert_non_null(rec);
  sink = bw_sink_callback_new(bwt_record_cb, rec, NULL);
  assert_non_null(sink);
  f[0] = bw_field_int("break_ms", 30000);
  f[1] = bw_field_str("from", "closed");
  ev = make_event(BW_EV_CIRCUIT_OPENED, 123456789, "svc", "why", f, 2, &ctx);
  bw_sink_emit(sink, &ev);
  assert_int_equal(rec->count, 1);
  got = &rec->events[0];
  assert_int_equal(got->type, BW_EV_CIRCUIT_OPENED);
  assert_i64_eq(got->wall_ns, 123456789);
  assert_i64_eq(got->mono_ns, 42);
  assert_string_equal(got->name, "svc");
  assert_string_equal(got->reason, "why");
  assert_field_int(got, 0, "break_ms", 30000);
  assert_field_str(got, 1, "from", "closed");
  assert_true(got->has_context);
  assert_string_equal(got->context[0].key, "k");
  bw_sink_free(sink);
  free(rec);
}

static void tee_sink_forwards_to_both_in_order(void **state) {
  bwt_recorder_t *r1 = calloc(1, sizeof(*r1));
  bwt_recorder_t *r2 = calloc(1, sizeof(*r2));
  bw_sink_t *a, *b, *t;
  bw_event_t ev;
  (void)state;
  assert_non_null(r1);
  assert_non_null(r2);
  a = bw_sink_callback_new(bwt_record_cb, r1, NULL);
  b = bw_sink_callback_new(bwt_record_cb, r2, NULL);
  t = bw_sink_tee_new(a, b, NULL);
  assert_non_null(t);
  ev = make_event(BW_EV_CIRCUIT_ISOLATED, 1, "x", "operator", NULL, 0, NULL);
  bw_sink_emit(t, &ev);
  ev = make_event(BW_EV_CIRCUIT_RESET, 2, "x", "operator", NULL, 0, NULL);
  bw_sink_emit(t, &ev);
  assert_int_equal(r1->count, 2);
  assert_int_equal(r2->count, 2);
  assert_int_equal(r1->events[0].type, BW_EV_CIRCUIT_ISOLATED);
  assert_int_equal(r1->events[1].type, BW_EV_CIRCUIT_RESET);
  assert_int_equal(r2->events[0].type, BW_EV_CIRCUIT_ISOLATED);
  assert_int_equal(r2->events[1].type, BW_EV_CIRCUIT_RESET);
  bw_sink_free(t);
  bw_sink_free(a);
  bw_sink_free(b);
  free(r1);
  free(r2);
}

static void null_sink_emit_and_free_are_no_ops(void **state) {
  bw_event_t ev = make_event(BW_EV_CIRCUIT_RESET, 0, "x", "", NULL, 0, NULL);
  (void)state;
  bw_sink_emit(NULL, &ev);
  bw_sink_free(NULL);
}

/* The NULL policy: every sink and event function answers NULL (with
 * BW_E_INVAL in err) or its documented neutral value, never a crash; emit
 * and free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_error_t err;
  char buf[8] = "x";
  (void)state;
  assert_null(bw_sink_callback_new(NULL, NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_null(bw_sink_json_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_null(bw_sink_tee_new(NULL, NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  bw_sink_emit(NULL, NULL);
  bw_sink_free(NULL);
  assert_int_equal(bw_event_format_json(NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "");
  assert_int_equal(bw_event_format_json(NULL, NULL, 0), 0);
  assert_null(bw_format_iso8601_ms(0, NULL, 0));
  assert_string_equal(bw_event_type_name((bw_event_type_t)999), "unknown");
  assert_string_equal(bw_event_type_kind((bw_event_type_t)999), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(iso8601_formats_utc_with_milliseconds),
      cmocka_unit_test(iso8601_truncates_sub_millisecond_time),
      cmocka_unit_test(iso8601_floors_times_before_the_epoch),
      cmocka_unit_test(json_line_has_keys_in_order_and_ends_with_newline),
      cmocka_unit_test(json_line_without_fields_keeps_an_empty_reason),
      cmocka_unit_test(json_field_types_are_written_as_json_values),
      cmocka_unit_test(json_nan_and_infinities_are_null),
      cmocka_unit_test(json_doubles_round_trip_with_at_most_17_digits),
      cmocka_unit_test(json_strings_are_escaped),
      cmocka_unit_test(json_invalid_utf8_becomes_the_replacement_character),
      cmocka_unit_test(json_fields_never_reuse_the_lines_own_keys),
      cmocka_unit_test(event_types_name_the_kind_of_object_that_emits_them),
      cmocka_unit_test(json_context_items_go_under_ctx_after_the_fields),
      cmocka_unit_test(json_format_reports_the_full_length_when_cut),
      cmocka_unit_test(event_type_names_are_the_wire_names),
      cmocka_unit_test(json_sink_writes_the_breakers_events_as_lines),
      cmocka_unit_test(json_sink_writes_emitted_events_in_order),
      cmocka_unit_test(json_sink_writes_long_lines_whole),
      cmocka_unit_test(sinks_refuse_missing_arguments),
      cmocka_unit_test(callback_sink_delivers_the_event_as_emitted),
      cmocka_unit_test(tee_sink_forwards_to_both_in_order),
      cmocka_unit_test(null_sink_emit_and_free_are_no_ops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

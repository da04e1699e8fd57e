/* Specification tests: W3C Trace Context (trace.h) — traceparent parsing and
 * formatting, tracestate validation, the inbound helper, new span ids, the
 * per-thread current trace, and trace_id in events. */
#include <pthread.h>

#include "bw_test.h"

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static const uint8_t TID[16] = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
                                0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
static const uint8_t PID[8] = {0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};

static int parse(const char *s, bw_trace_t *t) {
  return bw_traceparent_parse(s, strlen(s), t);
}

static void the_spec_example_parses_and_formats_back(void **state) {
  bw_trace_t t;
  char buf[BW_TRACEPARENT_LEN + 1];
  (void)state;
  memset(&t, 0x55, sizeof(t));
  assert_status(parse(TP, &t), BW_OK);
  assert_memory_equal(t.trace_id, TID, 16);
  assert_memory_equal(t.parent_id, PID, 8);
  assert_int_equal(t.flags, BW_TRACE_SAMPLED);
  assert_string_equal(t.tracestate, "");
  assert_true(bw_trace_is_valid(&t));
  assert_int_equal(bw_traceparent_format(&t, buf, sizeof(buf)), 55);
  assert_string_equal(buf, TP);
  assert_int_equal(bw_trace_id_hex(&t, buf, 33), 32);
  assert_string_equal(buf, "4bf92f3577b34da6a3ce929d0e0e4736");
  /* surrounding spaces and tabs (HTTP's OWS) are not part of the value */
  assert_status(parse(" \t" TP "\t ", &t), BW_OK);
  /* flags 00 (not sampled) and any other byte are kept as they are */
  assert_status(
      parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", &t),
      BW_OK);
  assert_int_equal(t.flags, 0);
  assert_status(
      parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-fe", &t),
      BW_OK);
  assert_int_equal(t.flags, 0xfe);
}

static void hostile_traceparents_are_refused_and_leave_out_untouched(
    void **state) {
  static const char *const bad[] = {
      "",
      "00",
      /* 54 and 56 bytes */
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",
      /* version 00 with anything after it, even a dash */
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
      /* upper case, in each part */
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
      "0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      /* not hex, wrong separators */
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7- 1",
      /* all-zero ids */
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      /* version ff is invalid forever */
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      /* a later version must not run on into more hex */
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
      /* whitespace inside */
      "00-4bf92f3577b34da6a3ce929d0e0e4736 00f067aa0ba902b7-01",
  };
  bw_trace_t t, before;
  size_t i;
  (void)state;
  memset(&t, 0x5A, sizeof(t));
  before = t;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    if (parse(bad[i], &t) != BW_E_INVAL) fail_msg("accepted '%s'", bad[i]);
    assert_memory_equal(&t, &before, sizeof(t));
  }
  /* a NUL inside the value counts as a byte, not as the end */
  assert_status(bw_traceparent_parse(TP "\0", 56, &t), BW_E_INVAL);
  assert_status(bw_traceparent_parse(NULL, 55, &t), BW_E_INVAL);
  assert_status(bw_traceparent_parse(TP, 55, NULL), BW_E_INVAL);
}

static void a_later_version_is_read_by_its_first_55_bytes(void **state) {
  bw_trace_t t;
  char buf[64];
  (void)state;
  assert_status(
      parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &t),
      BW_OK);
  assert_status(
      parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-"
            "ever",
            &t),
      BW_OK);
  assert_memory_equal(t.trace_id, TID, 16);
  /* and is sent on as version 00 */
  assert_int_equal(bw_traceparent_format(&t, buf, sizeof(buf)), 55);
  assert_string_equal(buf, TP);
}

static void format_refuses_invalid_contexts_and_small_buffers(void **state) {
  bw_trace_t t;
  char buf[64];
  (void)state;
  memset(&t, 0, sizeof(t));
  strcpy(buf, "x");
  assert_status(bw_traceparent_format(&t, buf, sizeof(buf)), BW_E_INVAL);
  assert_string_equal(buf, "");
  assert_status(parse(TP, &t), BW_OK);
  strcpy(buf, "x");
  assert_status(bw_traceparent_format(&t, buf, 55), BW_E_RANGE);
  assert_string_equal(buf, "");
  assert_status(bw_traceparent_format(NULL, buf, sizeof(buf)), BW_E_INVAL);
  assert_status(bw_traceparent_format(&t, NULL, 64), BW_E_INVAL);
  assert_status(bw_trace_id_hex(&t, buf, 32), BW_E_RANGE);
  assert_status(bw_trace_id_hex(NULL, buf, 33), BW_E_INVAL);
  assert_false(bw_trace_is_valid(NULL));
}

static void tracestate_grammar(void **state) {
  static const char *const good[] = {
      "",
      "congo=t61rcWkgMzE",
      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
      " rojo=00f067aa0ba902b7 ,\tcongo=t61rcWkgMzE ",
      "a=1,,b=2", /* empty members are allowed */
      "fw529a3039@dt=b",
      "0tenant@sys=v",
      "k_-*/9=v a l", /* spaces inside a value */
      "k=!~",
      "k=v ", /* the member is trimmed */
  };
  static const char *const bad[] = {
      "congo",      /* no '=' */
      "=v",         /* no key */
      "k=",         /* no value */
      "Congo=v",    /* upper-case key */
      "9k=v",       /* a simple key starts with a letter */
      "k=a,b",      /* (a second member "b" has no '=') */
      "k=a=b",      /* '=' in a value */
      "t@=v",       /* empty system id */
      "@s=v",       /* empty tenant id */
      "t@s@x=v",    /* two '@' */
      "t@9s=v",     /* a system id starts with a letter */
      "k=v\x7f",    /* DEL */
      "k=v\x01",    /* a control byte */
      "k=\xc3\xa9", /* not ASCII */
      "a=1,a=2",    /* a key twice */
      "k=v\n",      /* a newline */
  };
  char big[600];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
    if (bw_tracestate_check(good[i], strlen(good[i])) != BW_OK)
      fail_msg("refused '%s'", good[i]);
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    if (bw_tracestate_check(bad[i], strlen(bad[i])) != BW_E_INVAL)
      fail_msg("accepted '%s'", bad[i]);
  /* 32 members pass, 33 do not */
  big[0] = '\0';
  for (i = 0; i < 33; i++) {
    char m[16];
    snprintf(m, sizeof(m), "%sk%zu=v", i > 0 ? "," : "", i);
    strcat(big, m);
    assert_status(bw_tracestate_check(big, strlen(big)),
                  i < 32 ? BW_OK : BW_E_INVAL);
  }
  /* a value of 256 bytes passes, of 257 does not */
  memset(big, 'v', sizeof(big));
  memcpy(big, "k=", 2);
  assert_status(bw_tracestate_check(big, 2 + 256), BW_OK);
  assert_status(bw_tracestate_check(big, 2 + 257), BW_E_INVAL);
  /* 512 bytes pass, 513 do not: "a=" 254 v, ",", "b=" 253 or 254 v */
  memset(big, 'v', sizeof(big));
  memcpy(big, "a=", 2);
  memcpy(big + 256, ",b=", 3);
  assert_status(bw_tracestate_check(big, 512), BW_OK);
  assert_status(bw_tracestate_check(big, 513), BW_E_INVAL);
  assert_status(bw_tracestate_check(NULL, 3), BW_E_INVAL);
}

static void from_headers_drops_a_bad_tracestate_but_keeps_the_parent(
    void **state) {
  bw_trace_t t, before;
  const char *ts = " rojo=00f067aa0ba902b7,congo=t61rcWkgMzE ";
  (void)state;
  memset(&t, 0x33, sizeof(t));
  before = t;
  assert_status(bw_trace_from_headers(NULL, 0, ts, strlen(ts), &t),
                BW_E_NOTFOUND);
  assert_memory_equal(&t, &before, sizeof(t));
  assert_status(bw_trace_from_headers("00-zz", 5, ts, strlen(ts), &t),
                BW_E_INVAL);
  assert_memory_equal(&t, &before, sizeof(t));
  assert_status(bw_trace_from_headers(TP, 55, ts, strlen(ts), &t), BW_OK);
  assert_memory_equal(t.trace_id, TID, 16);
  assert_string_equal(t.tracestate, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  assert_status(bw_trace_from_headers(TP, 55, "Bad=1", 5, &t), BW_OK);
  assert_string_equal(t.tracestate, "");
  assert_status(bw_trace_from_headers(TP, 55, NULL, 0, &t), BW_OK);
  assert_string_equal(t.tracestate, "");
  assert_status(bw_trace_from_headers(TP, 55, NULL, 0, NULL), BW_E_INVAL);
}

static void a_child_keeps_the_trace_and_gets_a_new_parent_id(void **state) {
  bw_trace_t parent, child, c2;
  bw_rand_t r1, r2;
  (void)state;
  assert_status(parse(TP, &parent), BW_OK);
  strcpy(parent.tracestate, "congo=t61rcWkgMzE");
  bw_rand_seed(&r1, 7);
  bw_rand_seed(&r2, 7);
  assert_status(bw_trace_child(&parent, &r1, &child), BW_OK);
  assert_status(bw_trace_child(&parent, &r2, &c2), BW_OK);
  assert_memory_equal(child.trace_id, TID, 16);
  assert_int_equal(child.flags, parent.flags);
  assert_string_equal(child.tracestate, "congo=t61rcWkgMzE");
  assert_memory_not_equal(child.parent_id, parent.parent_id, 8);
  assert_true(bw_trace_is_valid(&child));
  assert_memory_equal(child.parent_id, c2.parent_id, 8); /* same seed */
  /* in place, and with the thread's generator */
  c2 = child;
  assert_status(bw_trace_child(&c2, NULL, &c2), BW_OK);
  assert_memory_equal(c2.trace_id, TID, 16);
  assert_memory_not_equal(c2.parent_id, child.parent_id, 8);
  memset(&parent, 0, sizeof(parent));
  assert_status(bw_trace_child(&parent, &r1, &child), BW_E_INVAL);
  assert_status(bw_trace_child(NULL, &r1, &child), BW_E_INVAL);
  assert_status(bw_trace_child(&c2, &r1, NULL), BW_E_INVAL);
}

static void start_makes_a_valid_new_trace(void **state) {
  bw_trace_t a, b;
  bw_rand_t r;
  (void)state;
  bw_rand_seed(&r, 1);
  assert_status(bw_trace_start(&r, BW_TRACE_SAMPLED, &a), BW_OK);
  assert_status(bw_trace_start(NULL, 0, &b), BW_OK);
  assert_true(bw_trace_is_valid(&a));
  assert_true(bw_trace_is_valid(&b));
  assert_int_equal(a.flags, 1);
  assert_int_equal(b.flags, 0);
  assert_string_equal(a.tracestate, "");
  assert_memory_not_equal(a.trace_id, b.trace_id, 16);
  assert_status(bw_trace_start(&r, 0, NULL), BW_E_INVAL);
}

static void *other_thread(void *arg) {
  (void)arg;
  return (void *)bw_trace_current();
}

static void the_current_trace_is_per_thread_with_save_and_restore(
    void **state) {
  bw_trace_t a, b;
  const bw_trace_t *prev;
  pthread_t th;
  void *seen = (void *)&a;
  (void)state;
  assert_null(bw_trace_current());
  assert_status(parse(TP, &a), BW_OK);
  assert_status(bw_trace_start(NULL, 0, &b), BW_OK);
  assert_null(bw_trace_set(&a));
  prev = bw_trace_set(&b);
  assert_ptr_equal(prev, &a);
  assert_ptr_equal(bw_trace_current(), &b);
  assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);
  pthread_join(th, &seen);
  assert_null(seen); /* a new thread starts with none */
  assert_ptr_equal(bw_trace_set(prev), &b);
  assert_ptr_equal(bw_trace_set(NULL), &a);
  assert_null(bw_trace_current());
}

static void capture(const bw_event_t *ev, void *userdata) {
  char *line = userdata;
  bw_event_format_json(ev, line, 1024);
}

static void events_carry_the_current_trace_id(void **state) {
  bw_trace_t t;
  bw_breaker_config_t c;
  bw_breaker_t *b;
  bw_permit_t p;
  bw_clock_t *clk = bw_clock_manual_new(0), *wall = bw_clock_manual_new(0);
  char line[1024] = "";
  bw_sink_t *sink = bw_sink_callback_new(capture, line, NULL);
  (void)state;
  assert_status(parse(TP, &t), BW_OK);
  bw_breaker_config_init(&c);
  c.name = "pay";
  c.failure_threshold = 1;
  c.clock = clk;
  c.wall_clock = wall;
  c.sink = sink;
  b = bw_breaker_new(&c, NULL);
  assert_non_null(b);
  bw_trace_set(&t);
  assert_status(bw_breaker_acquire(b, &p), BW_OK);
  bw_breaker_release(b, &p, BW_FAILURE);
  bw_trace_set(NULL);
  assert_string_equal(
      line,
      "{\"event\":\"circuit_opened\",\"ts\":\"1970-01-01T00:00:00.000Z\","
      "\"kind\":\"breaker\",\"name\":\"pay\",\"reason\":\"1 consecutive "
      "failures (failure_threshold 1)\",\"break_ms\":30000,\"from\":"
      "\"closed\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\"}\n");
  /* no trace, or an invalid one: no key */
  bw_clock_manual_advance(clk, 30000 * BW_NS_PER_MS);
  memset(&t, 0, sizeof(t));
  bw_trace_set(&t);
  bw_breaker_reset(b);
  bw_trace_set(NULL);
  assert_null(strstr(line, "trace_id"));
  bw_breaker_free(b);
  bw_sink_free(sink);
  bw_clock_free(clk);
  bw_clock_free(wall);
}

static void a_field_named_trace_id_cannot_forge_the_key(void **state) {
  bw_field_t f = bw_field_str("trace_id", "forged");
  bw_event_t ev;
  char line[512];
  (void)state;
  memset(&ev, 0, sizeof(ev));
  ev.type = BW_EV_CIRCUIT_RESET;
  ev.name = "n";
  ev.reason = "";
  ev.fields = &f;
  ev.field_count = 1;
  bw_event_format_json(&ev, line, sizeof(line));
  assert_string_equal(line,
                      "{\"event\":\"circuit_reset\",\"ts\":\"1970-01-01T00:00:"
                      "00.000Z\",\"kind\":\"breaker\",\"name\":\"n\","
                      "\"reason\":\"\",\"trace_id_field\":\"forged\"}\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_spec_example_parses_and_formats_back),
      cmocka_unit_test(
          hostile_traceparents_are_refused_and_leave_out_untouched),
      cmocka_unit_test(a_later_version_is_read_by_its_first_55_bytes),
      cmocka_unit_test(format_refuses_invalid_contexts_and_small_buffers),
      cmocka_unit_test(tracestate_grammar),
      cmocka_unit_test(
          from_headers_drops_a_bad_tracestate_but_keeps_the_parent),
      cmocka_unit_test(a_child_keeps_the_trace_and_gets_a_new_parent_id),
      cmocka_unit_test(start_makes_a_valid_new_trace),
      cmocka_unit_test(the_current_trace_is_per_thread_with_save_and_restore),
      cmocka_unit_test(events_carry_the_current_trace_id),
      cmocka_unit_test(a_field_named_trace_id_cannot_forge_the_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

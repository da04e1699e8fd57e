/* Specification tests: deadlines (the value type, its arithmetic at the
 * int64 extremes, the per-thread current deadline) and the X-Timeout-Budget
 * header of the asyncio toolkit.
 *
 * The asyncio toolkit (a Python service) keeps the budget in a contextvar,
 * sends str(remaining seconds) as X-Timeout-Budget, refuses to call a
 * downstream agent with less than 1 s left, and gives its bulkhead min(timeout,
 * budget). Clock readings here are plain numbers: a deadline is pure
 * arithmetic on whatever clock the caller reads. */
#include <pthread.h>

#include "bw_test.h"

#define MS BW_NS_PER_MS
#define T0 BWT_T0_NS

static bw_deadline_t at(int64_t ns) {
  bw_deadline_t d;
  d.at_ns = ns;
  return d;
}

/* ==== the value type =====================================================
 */

static void none_has_all_the_time_in_the_world(void **state) {
  bw_deadline_t n = bw_deadline_none();
  (void)state;
  assert_true(bw_deadline_is_none(n));
  assert_i64_eq(n.at_ns, BW_DEADLINE_NONE_NS);
  assert_i64_eq(bw_deadline_remaining_ms(n, T0), INT64_MAX);
  assert_i64_eq(bw_deadline_remaining_ms(n, INT64_MAX), INT64_MAX);
  assert_false(bw_deadline_expired(n, T0));
  assert_false(bw_deadline_expired(n, INT64_MAX));
  assert_status(bw_deadline_check(n, T0, 0), BW_OK);
  assert_status(bw_deadline_check(n, INT64_MAX, INT64_MAX), BW_OK);
  assert_i64_eq(bw_deadline_timeout_ms(n, T0, 2000), 2000);
  assert_i64_eq(bw_deadline_timeout_ms(n, T0, 0), INT64_MAX);
  assert_i64_eq(bw_deadline_timeout_ms(n, T0, -5), INT64_MAX);
}

static void in_adds_milliseconds_to_now(void **state) {
  bw_deadline_t d = bw_deadline_in(T0, 2500);
  (void)state;
  assert_false(bw_deadline_is_none(d));
  assert_i64_eq(d.at_ns, T0 + 2500 * MS);
  assert_i64_eq(bw_deadline_in(-7 * MS, 2).at_ns, -5 * MS);
  assert_i64_eq(bw_deadline_in(0, 0).at_ns, 0);
}

/* ms < 0 counts as 0: the deadline is now, so it has already expired. */
static void a_negative_or_zero_duration_expires_at_once(void **state) {
  (void)state;
  assert_i64_eq(bw_deadline_in(T0, -1).at_ns, T0);
  assert_i64_eq(bw_deadline_in(T0, INT64_MIN).at_ns, T0);
  assert_true(bw_deadline_expired(bw_deadline_in(T0, -1), T0));
  assert_true(bw_deadline_expired(bw_deadline_in(T0, 0), T0));
  assert_false(bw_deadline_expired(bw_deadline_in(T0, 0), T0 - 1));
}

static void expiry_is_inclusive_of_the_deadline_instant(void **state) {
  bw_deadline_t d = at(T0);
  (void)state;
  assert_false(bw_deadline_expired(d, T0 - 1));
  assert_true(bw_deadline_expired(d, T0));
  assert_true(bw_deadline_expired(d, T0 + 1));
  assert_true(bw_deadline_expired(d, INT64_MAX));
  assert_false(bw_deadline_expired(d, INT64_MIN));
}

static void remaining_is_rounded_down_and_never_negative(void **state) {
  bw_deadline_t d = at(T0 + 2 * MS);
  (void)state;
  assert_i64_eq(bw_deadline_remaining_ms(d, T0), 2);
  assert_i64_eq(bw_deadline_remaining_ms(d, T0 + 1), 1); /* 1.999999 ms */
  assert_i64_eq(bw_deadline_remaining_ms(d, T0 + MS), 1);
  assert_i64_eq(bw_deadline_remaining_ms(d, T0 + MS + 1), 0);
  assert_i64_eq(bw_deadline_remaining_ms(d, T0 + 2 * MS), 0);
  assert_i64_eq(bw_deadline_remaining_ms(d, T0 + 3 * MS), 0);
  assert_i64_eq(bw_deadline_remaining_ms(d, INT64_MAX), 0);
}

/* A callee's deadline never extends its caller's. */
static void min_keeps_the_earlier_deadline(void **state) {
  bw_deadline_t a = at(T0), b = at(T0 + 1), n = bw_deadline_none();
  (void)state;
  assert_i64_eq(bw_deadline_min(a, b).at_ns, T0);
  assert_i64_eq(bw_deadline_min(b, a).at_ns, T0);
  assert_i64_eq(bw_deadline_min(a, n).at_ns, T0);
  assert_i64_eq(bw_deadline_min(n, b).at_ns, T0 + 1);
  assert_true(bw_deadline_is_none(bw_deadline_min(n, n)));
  assert_i64_eq(bw_deadline_min(at(INT64_MIN), n).at_ns, INT64_MIN);
}

/* The asyncio toolkit: with less than 1 s left, the downstream agent is not
 * called. */
static void agents_check_refuses_with_less_than_a_second_left(void **state) {
  bw_deadline_t d = bw_deadline_in(T0, 3000);
  (void)state;
  assert_status(bw_deadline_check(d, T0, 1000), BW_OK);
  assert_status(bw_deadline_check(d, T0 + 2000 * MS, 1000), BW_OK);
  assert_status(bw_deadline_check(d, T0 + 2000 * MS + 1, 1000), BW_E_DEADLINE);
  assert_status(bw_deadline_check(d, T0 + 2999 * MS, 1000), BW_E_DEADLINE);
  assert_status(bw_deadline_check(d, T0 + 3000 * MS, 1000), BW_E_DEADLINE);
}

static void check_with_no_minimum_fails_only_once_expired(void **state) {
  bw_deadline_t d = at(T0);
  (void)state;
  assert_status(bw_deadline_check(d, T0 - 1, 0), BW_OK); /* 1 ns left */
  assert_status(bw_deadline_check(d, T0, 0), BW_E_DEADLINE);
  assert_status(bw_deadline_check(d, T0 + MS, 0), BW_E_DEADLINE);
}

static void check_refuses_a_negative_minimum(void **state) {
  (void)state;
  assert_status(bw_deadline_check(at(T0), T0 - MS, -1), BW_E_INVAL);
  assert_status(bw_deadline_check(bw_deadline_none(), T0, -1), BW_E_INVAL);
  assert_status(bw_deadline_check(at(T0), T0, INT64_MIN), BW_E_INVAL);
}

/* The asyncio toolkit: the bulkhead's timeout becomes min(timeout, budget). */
static void agents_timeout_is_the_smaller_of_its_own_and_the_budget(
    void **state) {
  bw_deadline_t d = bw_deadline_in(T0, 2500);
  (void)state;
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, 10000), 2500);
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, 1000), 1000);
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, 2500), 2500);
  assert_i64_eq(bw_deadline_timeout_ms(d, T0 + 500 * MS, 10000), 2000);
}

static void timeout_without_its_own_is_the_remaining_time(void **state) {
  bw_deadline_t d = bw_deadline_in(T0, 2500);
  (void)state;
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, 0), 2500);
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, -1), 2500);
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, INT64_MIN), 2500);
}

static void timeout_is_zero_once_expired(void **state) {
  bw_deadline_t d = at(T0);
  (void)state;
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, 1000), 0);
  assert_i64_eq(bw_deadline_timeout_ms(d, T0, 0), 0);
  assert_i64_eq(bw_deadline_timeout_ms(d, T0 + 10 * MS, INT64_MAX), 0);
}

/* ==== int64 extremes (UBSan must stay quiet) ==============================
 */

/* A sum past the end saturates one below "none": still a deadline. */
static void in_saturates_below_none(void **state) {
  const int64_t last = BW_DEADLINE_NONE_NS - 1;
  (void)state;
  assert_i64_eq(bw_deadline_in(INT64_MAX, 0).at_ns, last);
  assert_i64_eq(bw_deadline_in(INT64_MAX, INT64_MAX).at_ns, last);
  assert_i64_eq(bw_deadline_in(last, 0).at_ns, last);
  assert_i64_eq(bw_deadline_in(last - MS, 1).at_ns, last);
  assert_i64_eq(bw_deadline_in(last - MS + 1, 1).at_ns, last);
  assert_i64_eq(bw_deadline_in(last - MS - 1, 1).at_ns, last - 1);
  assert_i64_eq(bw_deadline_in(0, INT64_MAX).at_ns, last);
  assert_i64_eq(bw_deadline_in(-1, INT64_MAX).at_ns, last);
  assert_i64_eq(bw_deadline_in(T0, INT64_MAX / MS).at_ns, last);
  assert_false(bw_deadline_is_none(bw_deadline_in(INT64_MAX, INT64_MAX)));
  /* Saturated at the last instant, it expires there, not never. */
  assert_true(bw_deadline_expired(bw_deadline_in(INT64_MAX, 0), INT64_MAX));
}

/* From the bottom of the range the product ms * 10^6 may exceed INT64_MAX
 * while the sum is still representable. */
static void in_from_int64_min_is_exact_while_representable(void **state) {
  (void)state;
  assert_i64_eq(bw_deadline_in(INT64_MIN, 1).at_ns, INT64_MIN + MS);
  assert_i64_eq(bw_deadline_in(INT64_MIN, INT64_C(9223372036854)).at_ns,
                INT64_C(-775808));
  /* 18446744073709 * 10^6 = 18446744073709000000 > INT64_MAX */
  assert_i64_eq(bw_deadline_in(INT64_MIN, INT64_C(18446744073709)).at_ns,
                INT64_C(9223372036854224192));
  assert_i64_eq(bw_deadline_in(INT64_MIN, INT64_C(18446744073710)).at_ns,
                BW_DEADLINE_NONE_NS - 1);
  assert_i64_eq(bw_deadline_in(INT64_MIN, INT64_MAX).at_ns,
                BW_DEADLINE_NONE_NS - 1);
}

static void remaining_spans_the_whole_range(void **state) {
  (void)state;
  /* (2^64 - 2) ns, rounded down to ms */
  assert_i64_eq(bw_deadline_remaining_ms(at(INT64_MAX - 1), INT64_MIN),
                INT64_C(18446744073709));
  assert_i64_eq(bw_deadline_remaining_ms(at(0), INT64_MIN),
                INT64_C(9223372036854));
  assert_i64_eq(bw_deadline_remaining_ms(at(INT64_MIN), INT64_MAX), 0);
  assert_i64_eq(bw_deadline_remaining_ms(at(INT64_MIN), INT64_MIN), 0);
  assert_true(bw_deadline_expired(at(INT64_MIN), INT64_MIN));
  assert_status(
      bw_deadline_check(at(INT64_MAX - 1), INT64_MIN, INT64_C(18446744073709)),
      BW_OK);
  assert_status(
      bw_deadline_check(at(INT64_MAX - 1), INT64_MIN, INT64_C(18446744073710)),
      BW_E_DEADLINE);
  assert_status(bw_deadline_check(at(INT64_MAX - 1), INT64_MIN, INT64_MAX),
                BW_E_DEADLINE);
  assert_i64_eq(bw_deadline_timeout_ms(at(INT64_MAX - 1), INT64_MIN, 0),
                INT64_C(18446744073709));
  assert_i64_eq(bw_deadline_timeout_ms(at(INT64_MAX - 1), INT64_MIN, INT64_MAX),
                INT64_C(18446744073709));
}

/* ==== the per-thread current deadline ======================================
 */

static void the_current_deadline_starts_as_none(void **state) {
  (void)state;
  assert_true(bw_deadline_is_none(bw_deadline_current()));
}

static void set_returns_the_previous_deadline_for_restoring(void **state) {
  bw_deadline_t outer = at(T0 + 5000 * MS), inner = at(T0 + 2000 * MS);
  bw_deadline_t prev;
  (void)state;
  prev = bw_deadline_set(outer);
  assert_true(bw_deadline_is_none(prev));
  assert_i64_eq(bw_deadline_current().at_ns, outer.at_ns);

  /* A nested call narrows the deadline, then restores it. */
  prev = bw_deadline_set(bw_deadline_min(bw_deadline_current(), inner));
  assert_i64_eq(prev.at_ns, outer.at_ns);
  assert_i64_eq(bw_deadline_current().at_ns, inner.at_ns);
  /* A later deadline does not widen it through min. */
  bw_deadline_set(bw_deadline_min(bw_deadline_current(), outer));
  assert_i64_eq(bw_deadline_current().at_ns, inner.at_ns);
  bw_deadline_set(prev);
  assert_i64_eq(bw_deadline_current().at_ns, outer.at_ns);

  prev = bw_deadline_set(bw_deadline_none());
  assert_i64_eq(prev.at_ns, outer.at_ns);
  assert_true(bw_deadline_is_none(bw_deadline_current()));
}

typedef struct thread_arg_s {
  pthread_barrier_t *barrier;
  int64_t mine;
  bool started_as_none;
  int64_t seen_after_both_set;
  int64_t restored;
} thread_arg_t;

static void *deadline_thread(void *p) {
  thread_arg_t *a = p;
  bw_deadline_t prev;
  a->started_as_none = bw_deadline_is_none(bw_deadline_current());
  prev = bw_deadline_set(at(a->mine));
  pthread_barrier_wait(a->barrier); /* both threads have set theirs */
  a->seen_after_both_set = bw_deadline_current().at_ns;
  pthread_barrier_wait(a->barrier); /* both have read */
  bw_deadline_set(prev);
  a->restored = bw_deadline_current().at_ns;
  return NULL;
}

/* Each thread has its own current deadline: two threads set different ones,
 * wait until both have, and each still sees its own; a new thread starts
 * with none even when its creator has one. */
static void each_thread_has_its_own_current_deadline(void **state) {
  pthread_barrier_t barrier;
  pthread_t th[2];
  thread_arg_t args[2];
  bw_deadline_t prev;
  int i;
  (void)state;

  prev = bw_deadline_set(at(T0 + 777));
  assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
  for (i = 0; i < 2; i++) {
    memset(&args[i], 0, sizeof(args[i]));
    args[i].barrier = &barrier;
    args[i].mine = T0 + (i + 1) * 1000 * MS;
    assert_int_equal(pthread_create(&th[i], NULL, deadline_thread, &args[i]),
                     0);
  }
  for (i = 0; i < 2; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  pthread_barrier_destroy(&barrier);

  for (i = 0; i < 2; i++) {
    assert_true(args[i].started_as_none);
    assert_i64_eq(args[i].seen_after_both_set, T0 + (i + 1) * 1000 * MS);
    assert_i64_eq(args[i].restored, BW_DEADLINE_NONE_NS);
  }
  assert_i64_eq(bw_deadline_current().at_ns, T0 + 777);
  bw_deadline_set(prev);
}

/* ==== X-Timeout-Budget: format =============================================
 */

static void fmt__expect(int64_t ms, const char *want, const char *file,
                        int line) {
  char buf[BW_DEADLINE_HEADER_MAX];
  int n;
  memset(buf, 'X', sizeof(buf));
  n = bw_deadline_header_format(ms, buf, sizeof(buf));
  if (n < 0 || (size_t)n != strlen(want) || strcmp(buf, want) != 0) {
    print_error("format(%" PRId64 "): %d \"%.*s\"; expected \"%s\"\n", ms, n,
                (int)sizeof(buf), buf, want);
    _fail(file, line);
  }
}
#define assert_fmt(ms, want) fmt__expect((ms), (want), __FILE__, __LINE__)

static void budget_is_seconds_with_at_most_three_decimals(void **state) {
  (void)state;
  assert_fmt(0, "0");
  assert_fmt(2500, "2.5");
  assert_fmt(1, "0.001");
  assert_fmt(30000, "30");
  assert_fmt(1234567, "1234.567");
  assert_fmt(10, "0.01");
  assert_fmt(100, "0.1");
  assert_fmt(999, "0.999");
  assert_fmt(1000, "1");
  assert_fmt(1010, "1.01");
  assert_fmt(10001, "10.001");
  assert_fmt(INT64_C(999999999999), "999999999.999");
  assert_fmt(INT64_C(1000000000000), "1000000000"); /* the largest */
}

static void format_refuses_no_deadline_and_negative_budgets(void **state) {
  char buf[BW_DEADLINE_HEADER_MAX];
  (void)state;
  memset(buf, 'X', sizeof(buf));
  assert_status(bw_deadline_header_format(INT64_MAX, buf, sizeof(buf)),
                BW_E_INVAL);
  assert_int_equal(buf[0], '\0');
  memset(buf, 'X', sizeof(buf));
  assert_status(bw_deadline_header_format(-1, buf, sizeof(buf)), BW_E_INVAL);
  assert_int_equal(buf[0], '\0');
  assert_status(bw_deadline_header_format(INT64_MIN, buf, sizeof(buf)),
                BW_E_INVAL);
  assert_status(bw_deadline_header_format(5, NULL, 32), BW_E_INVAL);
  assert_status(bw_deadline_header_format(5, NULL, 0), BW_E_INVAL);
}

/* What the parser would refuse is never written. */
static void format_refuses_budgets_above_a_billion_seconds(void **state) {
  char buf[BW_DEADLINE_HEADER_MAX];
  (void)state;
  memset(buf, 'X', sizeof(buf));
  assert_status(
      bw_deadline_header_format(INT64_C(1000000000001), buf, sizeof(buf)),
      BW_E_RANGE);
  assert_int_equal(buf[0], '\0');
  assert_status(bw_deadline_header_format(INT64_MAX - 1, buf, sizeof(buf)),
                BW_E_RANGE);
}

static void format_needs_room_for_the_text_and_its_nul(void **state) {
  char buf[8];
  (void)state;
  memset(buf, 'X', sizeof(buf));
  assert_int_equal(bw_deadline_header_format(2500, buf, 4), 3);
  assert_string_equal(buf, "2.5");
  assert_int_equal(buf[4], 'X'); /* nothing written past size */
  memset(buf, 'X', sizeof(buf));
  assert_status(bw_deadline_header_format(2500, buf, 3), BW_E_RANGE);
  assert_int_equal(buf[0], '\0');
  assert_int_equal(buf[1], 'X');
  memset(buf, 'X', sizeof(buf));
  assert_status(bw_deadline_header_format(2500, buf, 0), BW_E_RANGE);
  assert_int_equal(buf[0], 'X'); /* size 0: not one byte written */
  assert_int_equal(bw_deadline_header_format(0, buf, 2), 1);
  assert_string_equal(buf, "0");
}

/* ==== X-Timeout-Budget: parse ==============================================
 */

static void parse__expect(const char *s, size_t n, int want_rc, int64_t want_ms,
                          const char *file, int line) {
  const int64_t untouched = INT64_C(-0x5A5A5A5A);
  char *copy = malloc(n > 0 ? n : 1); /* exactly n bytes: no NUL after */
  int64_t ms = untouched;
  int rc;
  assert_non_null(copy);
  if (n > 0) memcpy(copy, s, n);
  rc = bw_deadline_header_parse(copy, n, &ms);
  free(copy);
  if (want_rc != BW_OK) want_ms = untouched;
  if (rc != want_rc || ms != want_ms) {
    print_error("parse(\"%.*s\"): %s, %" PRId64 "; expected %s, %" PRId64 "\n",
                (int)n, s, bw_err_name(rc), ms, bw_err_name(want_rc), want_ms);
    _fail(file, line);
  }
}
#define assert_parse(s, ms) \
  parse__expect((s), strlen(s), BW_OK, (ms), __FILE__, __LINE__)
#define assert_parse_err(s, rc) \
  parse__expect((s), strlen(s), (rc), 0, __FILE__, __LINE__)

static void budget_parses_decimal_seconds_to_milliseconds(void **state) {
  (void)state;
  assert_parse("2.5", 2500);
  assert_parse("30", 30000);
  assert_parse("0", 0);
  assert_parse("0.000", 0);
  assert_parse("0.001", 1);
  assert_parse("1234.567", 1234567);
  assert_parse("000002.5", 2500);
  assert_parse("1000000000", INT64_C(1000000000000));
  assert_parse("1000000000.000000000", INT64_C(1000000000000));
}

/* The asyncio toolkit's sender is Python's str(float): "10.0" has a trailing
 * zero. */
static void agents_python_floats_are_read(void **state) {
  (void)state;
  assert_parse(" 10.0 ", 10000);
  assert_parse("10.0", 10000);
  assert_parse("\t2.5\t", 2500);
  assert_parse("29.987654321", 29987);
}

static void fractions_below_a_millisecond_are_rounded_down(void **state) {
  (void)state;
  assert_parse("0.0015", 1);
  assert_parse("0.0009", 0);
  assert_parse("0.999999999", 999);
  assert_parse("1.234567890", 1234);
  assert_parse("1.9999", 1999);
  /* The asyncio toolkit's sender: str(float) with many decimals, rounded down.
   */
  assert_parse("29.87654321098765", 29876);
  assert_parse("1.2345678901", 1234);
  assert_parse("0.0000000001", 0);
}

static void budget_refuses_anything_but_plain_decimals(void **state) {
  static const char *const bad[] = {
      "",         " ",     "\t",    "-1",       "+1",    "-0",  "1e3",  "1E3",
      "1e-3",     "inf",   "nan",   "Infinity", "NaN",   ".5",  "1.",   "1.2.3",
      "1,5",      "0x1",   "0X1",   "1 .5",     "1. 5",  "1 5", "2.5s", "s2.5",
      "\v2.5",    "2.5\n", "\r2.5", "- 1",      "1e-05", /* Python's str(float)
                                                            below 1e-4: an
                                                            exponent */
      "\xd9\xa2", "１",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_parse_err(bad[i], BW_E_INVAL);
}

static void budget_above_a_billion_seconds_is_out_of_range(void **state) {
  (void)state;
  assert_parse_err("1000000000.001", BW_E_RANGE);
  assert_parse_err("1000000000.0000001", BW_E_RANGE); /* rounds to 10^12 ms,
                                                         but is above */
  assert_parse_err("1000000001", BW_E_RANGE);
  assert_parse_err("99999999999999999999", BW_E_RANGE);
  assert_parse_err("99999999999999999999999999999999", BW_E_RANGE);
  /* Syntax first: a bad value is invalid, whatever its size. */
  assert_parse_err("99999999999999999999x", BW_E_INVAL);
  assert_parse_err("1000000001.", BW_E_INVAL);
}

static void budget_is_at_most_32_bytes_and_only_len_is_read(void **state) {
  char buf[40];
  int64_t ms = 7;
  (void)state;
  memset(buf, ' ', sizeof(buf));
  memcpy(buf + 10, "2.5", 3);
  parse__expect(buf, 32, BW_OK, 2500, __FILE__, __LINE__);
  parse__expect(buf, 33, BW_E_INVAL, 0, __FILE__, __LINE__);
  memset(buf, '0', sizeof(buf));
  buf[31] = '9';
  parse__expect(buf, 32, BW_OK, 9000, __FILE__, __LINE__);
  parse__expect("2.5x", 3, BW_OK, 2500, __FILE__, __LINE__);
  parse__expect("2.55", 3, BW_OK, 2500, __FILE__, __LINE__);
  parse__expect("2.5", 2, BW_E_INVAL, 0, __FILE__, __LINE__); /* "2." */
  assert_status(bw_deadline_header_parse(NULL, 0, &ms), BW_E_INVAL);
  assert_status(bw_deadline_header_parse(NULL, 3, &ms), BW_E_INVAL);
  assert_i64_eq(ms, 7);
  assert_status(bw_deadline_header_parse("2.5", 3, NULL), BW_E_INVAL);
}

static void rt__check(int64_t ms, const char *file, int line) {
  char buf[BW_DEADLINE_HEADER_MAX];
  int64_t back = -1;
  int n = bw_deadline_header_format(ms, buf, sizeof(buf));
  int rc = n < 0 ? n : bw_deadline_header_parse(buf, (size_t)n, &back);
  if (n < 0 || rc != BW_OK || back != ms) {
    print_error("round trip %" PRId64 ": format %d \"%s\", parse %s -> %" PRId64
                "\n",
                ms, n, n < 0 ? "" : buf, bw_err_name(rc), back);
    _fail(file, line);
  }
}

/* parse(format(x)) == x: every value up to 100 s, every power of ten and
 * its neighbours, and 100000 random values over the whole range. */
static void format_then_parse_gives_back_the_same_milliseconds(void **state) {
  int64_t ms, p;
  bw_rand_t rng;
  int i;
  (void)state;
  for (ms = 0; ms <= 100000; ms++)
    rt__check(ms, __FILE__, __LINE__);
  for (p = 1; p <= INT64_C(1000000000000); p *= 10) {
    rt__check(p - 1, __FILE__, __LINE__);
    rt__check(p, __FILE__, __LINE__);
    if (p < INT64_C(1000000000000)) rt__check(p + 1, __FILE__, __LINE__);
  }
  bw_rand_seed(&rng, 20260807);
  for (i = 0; i < 100000; i++)
    rt__check(bw_rand_range(&rng, 0, INT64_C(1000000000000)), __FILE__,
              __LINE__);
}

/* The asyncio toolkit end to end: service A has 2.5 s left and sends the
 * header; service B, on its own clock, starts its budget from it. */
static void agents_a_budget_travels_between_services(void **state) {
  const int64_t a_now = T0, b_now = INT64_C(-123456789);
  bw_deadline_t a_deadline = bw_deadline_in(a_now, 2500), b_deadline;
  char header[BW_DEADLINE_HEADER_MAX];
  int64_t ms = 0;
  int n;
  (void)state;
  assert_status(bw_deadline_check(a_deadline, a_now + 100 * MS, 1000), BW_OK);
  n = bw_deadline_header_format(
      bw_deadline_remaining_ms(a_deadline, a_now + 100 * MS), header,
      sizeof(header));
  assert_int_equal(n, 3);
  assert_string_equal(header, "2.4");
  assert_status(bw_deadline_header_parse(header, (size_t)n, &ms), BW_OK);
  b_deadline = bw_deadline_in(b_now, ms);
  assert_i64_eq(bw_deadline_remaining_ms(b_deadline, b_now), 2400);
  /* B's bulkhead: min(10 s, budget). */
  assert_i64_eq(bw_deadline_timeout_ms(b_deadline, b_now, 10000), 2400);
  /* 1.5 s later B may not call further down. */
  assert_status(bw_deadline_check(b_deadline, b_now + 1500 * MS, 1000),
                BW_E_DEADLINE);
}

static int64_t grpc_ms(const char *v) {
  int64_t ms = -42;
  int rc = bw_grpc_timeout_parse(v, strlen(v), &ms);
  return rc == BW_OK ? ms : INT64_MIN;
}

static void grpc_timeout_units_to_milliseconds(void **state) {
  (void)state;
  assert_int_equal(grpc_ms("100m"), 100);
  assert_int_equal(grpc_ms("5S"), 5000);
  assert_int_equal(grpc_ms("2M"), 120000);
  assert_int_equal(grpc_ms("1H"), 3600000);
  assert_int_equal(grpc_ms("1500u"), 1);
  assert_int_equal(grpc_ms("999u"), 0); /* rounded down, never up */
  assert_int_equal(grpc_ms("2999999n"), 2);
  assert_int_equal(grpc_ms("0m"), 0);
  assert_int_equal(grpc_ms(" 7S\t"), 7000);
  assert_int_equal(grpc_ms("00000001S"), 1000);
  assert_int_equal(grpc_ms("99999999H"), INT64_C(99999999) * 3600000);
}

static void grpc_timeout_refuses_anything_else(void **state) {
  static const char *const bad[] = {"",     "S",          "5",    "5s",  "5 S",
                                    "+5S",  "-5S",        "5.0S", "5SS", "5Sx",
                                    "x5S",  "5h",         "5ms",  "5K",  "1e3m",
                                    "0x5S", "123456789S", /* nine digits */
                                    " ",    "5S\r",       "\t"};
  size_t i;
  int64_t ms = 77;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_status(bw_grpc_timeout_parse(bad[i], strlen(bad[i]), &ms),
                  BW_E_INVAL);
    assert_int_equal(ms, 77); /* untouched */
  }
  assert_status(bw_grpc_timeout_parse(NULL, 0, &ms), BW_E_INVAL);
  assert_status(bw_grpc_timeout_parse("5S", 2, NULL), BW_E_INVAL);
  /* Only len bytes are read: "5Sxyz" with len 2 is "5S". */
  assert_status(bw_grpc_timeout_parse("5Sxyz", 2, &ms), BW_OK);
  assert_int_equal(ms, 5000);
  /* At most 32 bytes, whitespace included. */
  assert_status(
      bw_grpc_timeout_parse("                              5S", 32, &ms),
      BW_OK);
  assert_status(
      bw_grpc_timeout_parse("                               5S", 33, &ms),
      BW_E_INVAL);
}

static void from_header_reads_either_header_and_keeps_the_earlier(
    void **state) {
  const int64_t now = 5 * BW_NS_PER_S;
  bw_deadline_t d;
  (void)state;
  assert_status(bw_deadline_from_header("2.5", 3, NULL, 0, now, 10000, &d),
                BW_OK);
  assert_int_equal(d.at_ns, now + 2500 * MS);
  assert_status(bw_deadline_from_header(NULL, 0, "100m", 4, now, 10000, &d),
                BW_OK);
  assert_int_equal(d.at_ns, now + 100 * MS);
  assert_status(bw_deadline_from_header("2.5", 3, "3S", 2, now, 10000, &d),
                BW_OK);
  assert_int_equal(d.at_ns, now + 2500 * MS);
  assert_status(bw_deadline_from_header("2.5", 3, "1S", 2, now, 10000, &d),
                BW_OK);
  assert_int_equal(d.at_ns, now + 1000 * MS);
  /* One malformed, one valid: the valid one. */
  assert_status(bw_deadline_from_header("2,5", 3, "1S", 2, now, 10000, &d),
                BW_OK);
  assert_int_equal(d.at_ns, now + 1000 * MS);
}

static void from_header_defaults_to_ten_seconds(void **state) {
  const int64_t now = 5 * BW_NS_PER_S;
  bw_deadline_t d;
  (void)state;
  assert_status(bw_deadline_from_header(NULL, 0, NULL, 0, now,
                                        BW_DEADLINE_DEFAULT_MS, &d),
                BW_E_NOTFOUND);
  assert_int_equal(d.at_ns, now + 10000 * MS);
  /* Malformed headers are not trusted: the default, and BW_E_INVAL. */
  assert_status(bw_deadline_from_header("-1", 2, "5s", 2, now,
                                        BW_DEADLINE_DEFAULT_MS, &d),
                BW_E_INVAL);
  assert_int_equal(d.at_ns, now + 10000 * MS);
  /* The default is configurable; negative means no deadline. */
  assert_status(bw_deadline_from_header(NULL, 0, NULL, 0, now, 3000, &d),
                BW_E_NOTFOUND);
  assert_int_equal(d.at_ns, now + 3000 * MS);
  assert_status(bw_deadline_from_header(NULL, 0, NULL, 0, now, -1, &d),
                BW_E_NOTFOUND);
  assert_true(bw_deadline_is_none(d));
  assert_status(bw_deadline_from_header("1", 1, NULL, 0, now, -1, NULL),
                BW_E_INVAL);
}

static void the_reference_toolkits_budget_is_thirty_seconds(void **state) {
  const int64_t now = 7 * BW_NS_PER_S;
  bw_deadline_t d;
  (void)state;
  assert_int_equal(BW_DEADLINE_DEFAULT_BUDGET_MS, 30000);
  /* at the edge of the system, as the default of the inbound helper */
  assert_status(bw_deadline_from_header(NULL, 0, NULL, 0, now,
                                        BW_DEADLINE_DEFAULT_BUDGET_MS, &d),
                BW_E_NOTFOUND);
  assert_int_equal(bw_deadline_remaining_ms(d, now), 30000);
  /* a header narrower than it still wins */
  assert_status(bw_deadline_from_header("2.5", 3, NULL, 0, now,
                                        BW_DEADLINE_DEFAULT_BUDGET_MS, &d),
                BW_OK);
  assert_int_equal(bw_deadline_remaining_ms(d, now), 2500);
}

static void from_header_then_the_one_second_refusal(void **state) {
  const int64_t now = 5 * BW_NS_PER_S;
  bw_deadline_t d;
  (void)state;
  /* 1.5 s arrive; 500 ms later exactly 1 s is left: still allowed. */
  assert_status(bw_deadline_from_header("1.5", 3, NULL, 0, now,
                                        BW_DEADLINE_DEFAULT_MS, &d),
                BW_OK);
  assert_status(bw_deadline_check(d, now + 500 * MS, BW_DEADLINE_MIN_CALL_MS),
                BW_OK);
  assert_status(
      bw_deadline_check(d, now + 500 * MS + 1, BW_DEADLINE_MIN_CALL_MS),
      BW_E_DEADLINE);
  /* grpc-timeout "999m": refused at once. */
  assert_status(bw_deadline_from_header(NULL, 0, "999m", 4, now,
                                        BW_DEADLINE_DEFAULT_MS, &d),
                BW_OK);
  assert_status(bw_deadline_check(d, now, BW_DEADLINE_MIN_CALL_MS),
                BW_E_DEADLINE);
}

#define T(f) cmocka_unit_test(f)

/* The NULL policy: the functions that take pointers answer BW_E_INVAL for
 * NULL, never a crash. */
static void every_verb_answers_null_without_crashing(void **state) {
  int64_t ms = 7;
  (void)state;
  assert_int_equal(bw_deadline_header_parse(NULL, 0, &ms), BW_E_INVAL);
  assert_int_equal(bw_deadline_header_parse("5", 1, NULL), BW_E_INVAL);
  assert_int_equal(bw_grpc_timeout_parse(NULL, 0, &ms), BW_E_INVAL);
  assert_int_equal(bw_grpc_timeout_parse("5m", 2, NULL), BW_E_INVAL);
  assert_int_equal(bw_deadline_header_format(5, NULL, 0), BW_E_INVAL);
  assert_int_equal(bw_deadline_from_header(NULL, 0, NULL, 0, 0, 1000, NULL),
                   BW_E_INVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      T(none_has_all_the_time_in_the_world),
      T(in_adds_milliseconds_to_now),
      T(a_negative_or_zero_duration_expires_at_once),
      T(expiry_is_inclusive_of_the_deadline_instant),
      T(remaining_is_rounded_down_and_never_negative),
      T(min_keeps_the_earlier_deadline),
      T(agents_check_refuses_with_less_than_a_second_left),
      T(check_with_no_minimum_fails_only_once_expired),
      T(check_refuses_a_negative_minimum),
      T(agents_timeout_is_the_smaller_of_its_own_and_the_budget),
      T(timeout_without_its_own_is_the_remaining_time),
      T(timeout_is_zero_once_expired),
      T(in_saturates_below_none),
      T(in_from_int64_min_is_exact_while_representable),
      T(remaining_spans_the_whole_range),
      T(the_current_deadline_starts_as_none),
      T(set_returns_the_previous_deadline_for_restoring),
      T(each_thread_has_its_own_current_deadline),
      T(budget_is_seconds_with_at_most_three_decimals),
      T(format_refuses_no_deadline_and_negative_budgets),
      T(format_refuses_budgets_above_a_billion_seconds),
      T(format_needs_room_for_the_text_and_its_nul),
      T(budget_parses_decimal_seconds_to_milliseconds),
      T(agents_python_floats_are_read),
      T(fractions_below_a_millisecond_are_rounded_down),
      T(budget_refuses_anything_but_plain_decimals),
      T(budget_above_a_billion_seconds_is_out_of_range),
      T(budget_is_at_most_32_bytes_and_only_len_is_read),
      T(format_then_parse_gives_back_the_same_milliseconds),
      T(agents_a_budget_travels_between_services),
      T(grpc_timeout_units_to_milliseconds),
      T(grpc_timeout_refuses_anything_else),
      T(from_header_reads_either_header_and_keeps_the_earlier),
      T(from_header_defaults_to_ten_seconds),
      T(the_reference_toolkits_budget_is_thirty_seconds),
      T(from_header_then_the_one_second_refusal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

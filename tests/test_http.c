/* Specification tests: HTTP semantics for retries — the verdict table,
 * Retry-After (RFC 9110 §10.2.3, HTTP-date of §5.6.7) and gRPC pushback.
 *
 * Every parser call goes through a helper that copies the input into a heap
 * block of exactly `len` bytes with no NUL after it, so AddressSanitizer
 * catches any read past len. The fixed "now" is the wall clock of bw_test.h:
 * 2026-08-07T14:12:03.418Z, a Friday. Expected instants were computed
 * independently (Python's calendar.timegm) and are written out here; the
 * calendar sweep checks the parser against the C library's gmtime_r. */
#include <limits.h>
#include <time.h>

#include "bw_test.h"

#define NOW_MS (BWT_WALL0_NS / BW_NS_PER_MS) /* 1786111923418 */
#define S INT64_C(1000)

/* ---- helpers -------------------------------------------------------------
 */

static const char *verdict_str(bw_verdict_t v) {
  switch (v) {
  case BW_VERDICT_OK:
    return "OK";
  case BW_VERDICT_TRANSIENT:
    return "TRANSIENT";
  case BW_VERDICT_NOT_SENT:
    return "NOT_SENT";
  case BW_VERDICT_PERMANENT:
    return "PERMANENT";
  case BW_VERDICT_REJECTED:
    return "REJECTED";
  default:
    return "?";
  }
}

static void verdict__eq(int status, bw_transport_t t, bw_verdict_t want,
                        const char *file, int line) {
  bw_verdict_t got = bw_http_classify(status, t);
  if (got != want) {
    print_error("bw_http_classify(%d, transport %d): %s, expected %s\n", status,
                (int)t, verdict_str(got), verdict_str(want));
    _fail(file, line);
  }
}
#define assert_verdict(status, t, want) \
  verdict__eq((status), (t), (want), __FILE__, __LINE__)

/* A heap copy of exactly n bytes (at least one byte is allocated so that
 * malloc(0) cannot return NULL; that byte is never counted in n). */
static char *exact_copy(const char *s, size_t n) {
  char *p = malloc(n > 0 ? n : 1);
  assert_non_null(p);
  if (n > 0) memcpy(p, s, n);
  return p;
}

static void ra__expect(const char *s, size_t n, int64_t now, int want_rc,
                       int64_t want_delay, const char *file, int line) {
  char *copy = exact_copy(s, n);
  int64_t delay = INT64_C(0x5A5A5A5A5A5A5A5A);
  int rc = bw_retry_after_parse(copy, n, now, &delay);
  free(copy);
  if (rc != want_rc || delay != want_delay) {
    print_error("Retry-After \"%.*s\" at %" PRId64 ": %s, delay %" PRId64
                "; expected %s, delay %" PRId64 "\n",
                (int)n, s, now, bw_err_name(rc), delay, bw_err_name(want_rc),
                want_delay);
    _fail(file, line);
  }
}
/* Parses at NOW_MS and expects BW_OK with that delay. */
#define assert_ra(s, delay) \
  ra__expect((s), strlen(s), NOW_MS, BW_OK, (delay), __FILE__, __LINE__)
#define assert_ra_at(s, now, delay) \
  ra__expect((s), strlen(s), (now), BW_OK, (delay), __FILE__, __LINE__)
/* Expects an error; the delay must then be BW_RETRY_AFTER_NONE. */
#define assert_ra_err(s, rc)                                              \
  ra__expect((s), strlen(s), NOW_MS, (rc), BW_RETRY_AFTER_NONE, __FILE__, \
             __LINE__)
#define assert_ra_err_at(s, now, rc)                                     \
  ra__expect((s), strlen(s), (now), (rc), BW_RETRY_AFTER_NONE, __FILE__, \
             __LINE__)

static void pb__expect(const char *s, size_t n, int want_rc, int64_t want_delay,
                       const char *file, int line) {
  char *copy = exact_copy(s, n);
  int64_t delay = INT64_C(0x5A5A5A5A5A5A5A5A);
  int rc = bw_grpc_pushback_parse(copy, n, &delay);
  free(copy);
  if (rc != want_rc || delay != want_delay) {
    print_error("pushback \"%.*s\": %s, delay %" PRId64
                "; expected %s, delay %" PRId64 "\n",
                (int)n, s, bw_err_name(rc), delay, bw_err_name(want_rc),
                want_delay);
    _fail(file, line);
  }
}
#define assert_pb(s, rc, delay) \
  pb__expect((s), strlen(s), (rc), (delay), __FILE__, __LINE__)

/* ==== classification =====================================================
 */

static void every_2xx_is_ok(void **state) {
  int s;
  (void)state;
  for (s = 200; s <= 299; s++)
    assert_verdict(s, BW_TRANSPORT_NONE, BW_VERDICT_OK);
}

static void informational_and_redirect_statuses_are_permanent(void **state) {
  int s;
  (void)state;
  for (s = 100; s <= 199; s++)
    assert_verdict(s, BW_TRANSPORT_NONE, BW_VERDICT_PERMANENT);
  for (s = 300; s <= 399; s++)
    assert_verdict(s, BW_TRANSPORT_NONE, BW_VERDICT_PERMANENT);
}

static void client_errors_are_permanent_except_408_and_429(void **state) {
  int s;
  (void)state;
  for (s = 400; s <= 499; s++) {
    if (s == 408 || s == 429) continue;
    assert_verdict(s, BW_TRANSPORT_NONE, BW_VERDICT_PERMANENT);
  }
  assert_verdict(408, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
  assert_verdict(429, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
}

static void server_errors_are_transient_except_501_and_505(void **state) {
  int s;
  (void)state;
  for (s = 500; s <= 599; s++) {
    if (s == 501 || s == 505) continue;
    assert_verdict(s, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
  }
  assert_verdict(501, BW_TRANSPORT_NONE, BW_VERDICT_PERMANENT);
  assert_verdict(505, BW_TRANSPORT_NONE, BW_VERDICT_PERMANENT);
}

static void statuses_outside_100_to_599_are_permanent(void **state) {
  static const int bad[] = {INT_MIN, -200, -1,  0,    1,      99,
                            600,     700,  999, 1000, INT_MAX};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_verdict(bad[i], BW_TRANSPORT_NONE, BW_VERDICT_PERMANENT);
}

/* A transport error decides alone: whatever status the caller passes (0, a
 * stale 200, a 404) is not read. */
static void transport_errors_decide_whatever_the_status(void **state) {
  static const int statuses[] = {0, 200, 404, 429, 503, -1, 1000};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
    int s = statuses[i];
    assert_verdict(s, BW_TRANSPORT_REFUSED, BW_VERDICT_NOT_SENT);
    assert_verdict(s, BW_TRANSPORT_DNS, BW_VERDICT_NOT_SENT);
    assert_verdict(s, BW_TRANSPORT_TLS, BW_VERDICT_NOT_SENT);
    assert_verdict(s, BW_TRANSPORT_TIMEOUT, BW_VERDICT_TRANSIENT);
    assert_verdict(s, BW_TRANSPORT_RESET, BW_VERDICT_TRANSIENT);
    assert_verdict(s, BW_TRANSPORT_OTHER, BW_VERDICT_TRANSIENT);
  }
}

/* A value outside the enum is a caller's bug: never a reason to retry. */
static void an_unknown_transport_value_is_permanent(void **state) {
  (void)state;
  assert_verdict(200, (bw_transport_t)(BW_TRANSPORT_OTHER + 1),
                 BW_VERDICT_PERMANENT);
  assert_verdict(503, (bw_transport_t)99, BW_VERDICT_PERMANENT);
  assert_verdict(503, (bw_transport_t)-1, BW_VERDICT_PERMANENT);
}

/* The tenacity article: retry only timeouts, connection errors and 5xx; never a
 * 4xx. */
static void tenacity_retries_timeouts_connect_errors_and_5xx_never_4xx(
    void **state) {
  static const int client[] = {400, 401, 403, 404, 405, 409, 410, 422};
  size_t i;
  (void)state;
  assert_verdict(0, BW_TRANSPORT_TIMEOUT, BW_VERDICT_TRANSIENT);
  assert_verdict(0, BW_TRANSPORT_REFUSED, BW_VERDICT_NOT_SENT);
  assert_verdict(500, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
  assert_verdict(502, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
  assert_verdict(503, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
  assert_verdict(504, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
  for (i = 0; i < sizeof(client) / sizeof(client[0]); i++)
    assert_verdict(client[i], BW_TRANSPORT_NONE, BW_VERDICT_PERMANENT);
}

/* The Polly lab: the naive loop retried a 429 at once. A 429 is transient, and
 * it is one of the statuses whose Retry-After must be read. */
static void polly_lab_a_429_is_transient_and_carries_a_retry_hint(
    void **state) {
  (void)state;
  assert_verdict(429, BW_TRANSPORT_NONE, BW_VERDICT_TRANSIENT);
  assert_true(bw_http_has_retry_hint(429));
}

static void retry_hints_are_read_for_429_503_and_every_3xx(void **state) {
  int s;
  (void)state;
  assert_true(bw_http_has_retry_hint(429));
  assert_true(bw_http_has_retry_hint(503));
  for (s = 300; s <= 399; s++)
    assert_true(bw_http_has_retry_hint(s));
  for (s = -1; s <= 1000; s++) {
    if (s == 429 || s == 503 || (s >= 300 && s <= 399)) continue;
    if (bw_http_has_retry_hint(s)) {
      print_error("bw_http_has_retry_hint(%d) is true\n", s);
      fail();
    }
  }
  assert_false(bw_http_has_retry_hint(INT_MIN));
  assert_false(bw_http_has_retry_hint(INT_MAX));
}

/* ==== Retry-After: delta-seconds =========================================
 */

static void delta_seconds_are_whole_seconds(void **state) {
  (void)state;
  assert_ra("0", 0);
  assert_ra("1", 1 * S);
  assert_ra("120", 120 * S);
  assert_ra("007", 7 * S);
  assert_ra("1000000000", INT64_C(1000000000) * S); /* the largest */
}

static void delta_seconds_may_have_surrounding_spaces_and_tabs(void **state) {
  (void)state;
  assert_ra(" 120", 120 * S);
  assert_ra("120 ", 120 * S);
  assert_ra("  120  ", 120 * S);
  assert_ra("\t120\t", 120 * S);
  assert_ra(" \t 0 \t ", 0);
}

/* Leading zeros do not count against the value, only against the length. */
static void a_64_byte_value_is_read_and_65_bytes_are_refused(void **state) {
  char buf[80];
  (void)state;
  memset(buf, '0', sizeof(buf));
  memcpy(buf + 61, "120", 3);
  ra__expect(buf, 64, NOW_MS, BW_OK, 120 * S, __FILE__, __LINE__);
  memcpy(buf + 62, "120", 3);
  ra__expect(buf, 65, NOW_MS, BW_E_INVAL, BW_RETRY_AFTER_NONE, __FILE__,
             __LINE__);
  memset(buf, ' ', sizeof(buf)); /* whitespace counts too */
  buf[0] = '5';
  ra__expect(buf, 64, NOW_MS, BW_OK, 5 * S, __FILE__, __LINE__);
  ra__expect(buf, 65, NOW_MS, BW_E_INVAL, BW_RETRY_AFTER_NONE, __FILE__,
             __LINE__);
}

static void malformed_delta_seconds_are_refused(void **state) {
  static const char *const bad[] = {
      "",      " ",     "\t",    "abc",
      "1.5",   "-1",    "+1",    "1e3",
      "0x10",  "12 34", "120s",  "1,000",
      "1_000", "\v120", "120\r", "\n120",
      "1\t2",  "--1",   "-0",    "+0",
      "0.0",   ".5",    "5.",    "\xd9\xa2" /* ARABIC-INDIC DIGIT TWO */,
      "１２",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_ra_err(bad[i], BW_E_INVAL);
}

static void delta_seconds_above_a_billion_are_out_of_range(void **state) {
  char nines[61];
  (void)state;
  assert_ra_err("1000000001", BW_E_RANGE);
  assert_ra_err("99999999999999999999", BW_E_RANGE);
  assert_ra_err("18446744073709551616", BW_E_RANGE); /* 2^64 */
  assert_ra_err("9223372036854775808", BW_E_RANGE);  /* 2^63 */
  memset(nines, '9', 60);
  nines[60] = '\0';
  assert_ra_err(nines, BW_E_RANGE);
  /* Garbage wins over size: the value is not a number at all. */
  assert_ra_err("99999999999999999999x", BW_E_INVAL);
}

/* The parser reads len bytes, not up to a NUL. */
static void only_len_bytes_are_read(void **state) {
  (void)state;
  ra__expect("1234", 3, NOW_MS, BW_OK, 123 * S, __FILE__, __LINE__);
  ra__expect("120x", 3, NOW_MS, BW_OK, 120 * S, __FILE__, __LINE__);
  ra__expect("Fri, 07 Aug 2026 14:14:03 GMTxyz", 29, NOW_MS, BW_OK, 119582,
             __FILE__, __LINE__);
  ra__expect("Fri, 07 Aug 2026 14:14:03 GMT", 28, NOW_MS, BW_E_INVAL,
             BW_RETRY_AFTER_NONE, __FILE__, __LINE__);
}

static void null_arguments_are_refused(void **state) {
  int64_t delay = 42;
  (void)state;
  assert_status(bw_retry_after_parse(NULL, 0, NOW_MS, &delay), BW_E_INVAL);
  assert_i64_eq(delay, BW_RETRY_AFTER_NONE);
  delay = 42;
  assert_status(bw_retry_after_parse(NULL, 3, NOW_MS, &delay), BW_E_INVAL);
  assert_i64_eq(delay, BW_RETRY_AFTER_NONE);
  assert_status(bw_retry_after_parse("120", 3, NOW_MS, NULL), BW_E_INVAL);
}

/* ==== Retry-After: HTTP-date =============================================
 */

/* Delays are exact to now's millisecond: NOW_MS is 14:12:03.418. */
static void an_imf_fixdate_gives_the_exact_delay(void **state) {
  (void)state;
  assert_ra("Fri, 07 Aug 2026 14:14:03 GMT", 119582);
  assert_ra("Fri, 07 Aug 2026 14:12:04 GMT", 582);
  assert_ra("Sat, 08 Aug 2026 00:00:00 GMT", 35276582);
  assert_ra("Sun, 09 Aug 2026 00:00:00 GMT", 121676582);
  assert_ra("Tue, 01 Jan 2030 00:00:00 GMT", INT64_C(107344076582));
  assert_ra("  Fri, 07 Aug 2026 14:14:03 GMT\t", 119582);
}

static void a_date_in_the_past_or_this_second_gives_zero(void **state) {
  (void)state;
  assert_ra("Fri, 07 Aug 2026 14:12:03 GMT", 0); /* 418 ms ago */
  assert_ra("Fri, 07 Aug 2026 14:12:02 GMT", 0);
  assert_ra("Sun, 06 Nov 1994 08:49:37 GMT", 0);
  assert_ra("Thu, 01 Jan 1970 00:00:00 GMT", 0);
  assert_ra("Mon, 01 Jan 0001 00:00:00 GMT", 0);
  /* At exactly the date's instant, no time is left. */
  assert_ra_at("Fri, 07 Aug 2026 14:14:03 GMT", INT64_C(1786112043000), 0);
  assert_ra_at("Fri, 07 Aug 2026 14:14:03 GMT", INT64_C(1786112042999), 1);
}

static void an_rfc850_date_gives_the_exact_delay(void **state) {
  (void)state;
  assert_ra("Friday, 07-Aug-26 14:14:03 GMT", 119582);
  assert_ra("Saturday, 08-Aug-26 00:00:00 GMT", 35276582);
  assert_ra("Sunday, 06-Nov-94 08:49:37 GMT", 0); /* 1994 */
  assert_ra(" Friday, 07-Aug-26 14:14:03 GMT ", 119582);
}

static void an_asctime_date_gives_the_exact_delay(void **state) {
  (void)state;
  assert_ra("Fri Aug  7 14:14:03 2026", 119582);
  assert_ra("Fri Aug 07 14:14:03 2026", 119582);
  assert_ra("Sun Aug  9 00:00:00 2026", 121676582);
  assert_ra("Sun Nov  6 08:49:37 1994", 0);
  assert_ra("\tFri Aug  7 14:14:03 2026 ", 119582);
}

static void leap_days_and_the_last_representable_date_are_read(void **state) {
  (void)state;
  assert_ra("Tue, 29 Feb 2028 00:00:00 GMT", INT64_C(49283276582));
  assert_ra("Fri, 31 Dec 9999 23:59:59 GMT", INT64_C(251616188875582));
  assert_ra("Tue, 29 Feb 2000 12:00:00 GMT", 0); /* 2000 was a leap year */
}

/* RFC 5322 §3.3 allows second 60 for a leap second; POSIX time has no such
 * second, so 23:59:60 is read as the next day's 00:00:00. */
static void a_leap_second_is_the_next_days_midnight(void **state) {
  (void)state;
  assert_ra("Wed, 31 Dec 2036 23:59:60 GMT", INT64_C(328268876582));
  assert_ra("Thu, 01 Jan 2037 00:00:00 GMT", INT64_C(328268876582));
  /* The last day's leap second is 10000-01-01T00:00:00Z: still a date of
   * year 9999, so it is read. */
  assert_ra("Fri, 31 Dec 9999 23:59:60 GMT", INT64_C(253402300800000) - NOW_MS);
  assert_ra_err("Wed, 31 Dec 2036 23:58:60 GMT", BW_E_INVAL);
  assert_ra_err("Wed, 31 Dec 2036 12:59:60 GMT", BW_E_INVAL);
  assert_ra_err("Wed, 31 Dec 2036 23:59:61 GMT", BW_E_INVAL);
}

static void impossible_dates_are_refused(void **state) {
  static const char *const bad[] = {
      "Mon, 30 Feb 2026 00:00:00 GMT", /* no 30 February */
      "Sun, 29 Feb 2027 00:00:00 GMT", /* 2027 is not a leap year */
      "Mon, 29 Feb 2100 00:00:00 GMT", /* nor is 2100 */
      "Fri, 31 Apr 2026 00:00:00 GMT", /* April has 30 days */
      "Fri, 00 Aug 2026 00:00:00 GMT", /* day 0 */
      "Fri, 32 Aug 2026 00:00:00 GMT", /* day 32 */
      "Fri, 07 Aug 2026 24:00:00 GMT", /* hour 24 */
      "Fri, 07 Aug 2026 14:60:00 GMT", /* minute 60 */
      "Fri, 07 Aug 2026 14:00:99 GMT", /* second 99 */
      "Fri, 07 Aug 2026 99:99:99 GMT",  "Friday, 30-Feb-26 00:00:00 GMT",
      "Friday, 07-Aug-26 24:00:00 GMT", "Mon Feb 30 00:00:00 2026",
      "Fri Aug  0 00:00:00 2026",       "Fri Aug 07 25:00:00 2026",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_ra_err(bad[i], BW_E_INVAL);
}

/* RFC 5322 §3.3: the day-of-week MUST be the one the date falls on. A date
 * that contradicts itself is refused rather than half-believed. */
static void a_weekday_that_contradicts_the_date_is_refused(void **state) {
  (void)state;
  assert_ra_err("Sat, 07 Aug 2026 14:14:03 GMT", BW_E_INVAL);
  assert_ra_err("Mon, 06 Nov 1994 08:49:37 GMT", BW_E_INVAL);
  assert_ra_err("Thursday, 07-Aug-26 14:14:03 GMT", BW_E_INVAL);
  assert_ra_err("Sat Aug  7 14:14:03 2026", BW_E_INVAL);
}

/* RFC 9110 §5.6.7: "HTTP-date is case sensitive". */
static void names_are_case_sensitive(void **state) {
  static const char *const bad[] = {
      "sun, 06 Nov 1994 08:49:37 GMT",  "SUN, 06 Nov 1994 08:49:37 GMT",
      "Sun, 06 nov 1994 08:49:37 GMT",  "Sun, 06 NOV 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 08:49:37 gmt",  "Sun, 06 Nov 1994 08:49:37 Gmt",
      "sunday, 06-Nov-94 08:49:37 GMT", "SUNDAY, 06-Nov-94 08:49:37 GMT",
      "Sunday, 06-nov-94 08:49:37 GMT", "sun Nov  6 08:49:37 1994",
      "Sun nov  6 08:49:37 1994",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_ra_err(bad[i], BW_E_INVAL);
}

static void only_gmt_is_accepted_as_the_zone(void **state) {
  static const char *const bad[] = {
      "Sun, 06 Nov 1994 08:49:37 UTC",
      "Sun, 06 Nov 1994 08:49:37 UT",
      "Sun, 06 Nov 1994 08:49:37 +0000",
      "Sun, 06 Nov 1994 08:49:37 GMT+1",
      "Sun, 06 Nov 1994 08:49:37 EST",
      "Sun, 06 Nov 1994 08:49:37 Z",
      "Sun, 06 Nov 1994 08:49:37",
      "Sunday, 06-Nov-94 08:49:37 UTC",
      "Sunday, 06-Nov-94 08:49:37",
      "Sun Nov  6 08:49:37 1994 GMT",
      "1994-11-06T08:49:37Z",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_ra_err(bad[i], BW_E_INVAL);
}

/* One SP where the grammar has SP; each form with its own separators, day
 * name length and year width. */
static void the_grammar_is_followed_to_the_letter(void **state) {
  static const char *const bad[] = {
      "Sun,  06 Nov 1994 08:49:37 GMT", /* two spaces */
      "Sun, 06  Nov 1994 08:49:37 GMT", /* two spaces */
      "Sun,\t06 Nov 1994 08:49:37 GMT", /* a tab for SP */
      "Sun,06 Nov 1994 08:49:37 GMT",   /* no space */
      "Sun 06 Nov 1994 08:49:37 GMT",   /* no comma */
      "Sun, 6 Nov 1994 08:49:37 GMT",   /* one-digit day */
      "Sun, 06 Nov 94 08:49:37 GMT",    /* two-digit year in IMF */
      "Sun, 06 Nov 994 08:49:37 GMT",   /* three-digit year */
      "Sun, 06 Nov 101 08:49:37 GMT",   /* 101-11-06 was a Sunday: still no */
      "Sun Nov  6 08:49:37 101",
      "Sun Nov  6 08:49:37 5",
      "Sun, 06 Nov 1994 8:49:37 GMT",    /* one-digit hour */
      "Sun, 06 Nov 1994 08:49 GMT",      /* no seconds */
      "Sun, 06 Nov 1994 08:49:37.5 GMT", /* fraction */
      "Sun, 06 Nov 1994 08-49-37 GMT",   /* wrong separator */
      "Sun, 06-Nov-1994 08:49:37 GMT",   /* dashes in IMF */
      "Sun, 06 Nov 1994 08:49:37 GMTx",  /* trailing garbage */
      "Sun, 06 Nov 1994 08:49:37 GMT,",
      "Sunday, 06 Nov 1994 08:49:37 GMT", /* long name with IMF body */
      "Sun, 06-Nov-94 08:49:37 GMT",      /* short name with RFC 850 body */
      "Sunday, 06-Nov-1994 08:49:37 GMT", /* four-digit RFC 850 year */
      "Sunday, 6-Nov-94 08:49:37 GMT",
      "Sunday, 06-Nov-94 08:49:37 GMTx", /* trailing garbage */
      "Sunday, 06-Nov-94 08:49:37 GMT GMT",
      "Sun Nov  6 08:49:37 1994x",
      "Sundays, 06-Nov-94 08:49:37 GMT",
      "Sun Nov 6 08:49:37 1994",   /* asctime: a one-digit day needs 2 SP */
      "Sun Nov   6 08:49:37 1994", /* three spaces */
      "Sun Nov  06 08:49:37 1994",
      "Sun Nov  6 08:49:37 94", /* two-digit asctime year */
      "Sun Nov  6 08:49:37  1994",
      "Sunday Nov  6 08:49:37 1994",
      "Sun, Nov  6 08:49:37 1994",
      "Sux, 06 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nox 1994 08:49:37 GMT",
      "Sun",
      "Sun,",
      "Sun, 06 Nov 1994",
      "GMT",
      ",",
      "\xc3\xa9, 06 Nov 1994 08:49:37 GMT",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_ra_err(bad[i], BW_E_INVAL);
}

/* year = 4DIGIT: a longer year is still a date, one past year 9999. Bad
 * syntax elsewhere is still INVAL. */
static void a_year_past_9999_is_out_of_range(void **state) {
  (void)state;
  assert_ra_err("Sat, 01 Jan 10000 00:00:00 GMT", BW_E_RANGE);
  assert_ra_err("Sat, 01 Jan 123456789 00:00:00 GMT", BW_E_RANGE);
  assert_ra_err("Sat Jan  1 00:00:00 10000", BW_E_RANGE);
  assert_ra_err("Sat, 01 Jan 10000 00:00:00 UTC", BW_E_INVAL);
  assert_ra_err("Sat, 01 Jan 10000 00:00 GMT", BW_E_INVAL);
}

/* RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in
 * the past century. Now is 2026-08-07T14:12:03.418Z; 50 years on is
 * 2076-08-07T14:12:03.418Z. */
static void an_rfc850_year_more_than_50_years_ahead_is_in_the_past_century(
    void **state) {
  (void)state;
  /* 2076-08-07 14:12:03 is not later than now + 50 years: it stays 2076
   * (a Friday). */
  assert_ra("Friday, 07-Aug-76 14:12:03 GMT", INT64_C(1577923199582));
  /* One second later it is more than 50 years ahead: 1976 (a Saturday). */
  assert_ra("Saturday, 07-Aug-76 14:12:04 GMT", 0);
  assert_ra_err("Friday, 07-Aug-76 14:12:04 GMT", BW_E_INVAL);
  /* 99 would be 2099, 73 years ahead: 1999. */
  assert_ra("Friday, 31-Dec-99 23:59:59 GMT", 0);
  /* 69 is 2069, 43 years ahead: kept. */
  assert_ra("Tuesday, 31-Dec-69 23:59:59 GMT", INT64_C(1369648075582));
}

/* The window follows now: read in 2090, "10" is 2110 (20 years ahead), and
 * "40" flips from 2140 to 2040 at exactly 50 years. */
static void the_rfc850_century_window_moves_with_now(void **state) {
  const int64_t now2090 = INT64_C(3786912000000); /* 2090-01-01T00:00:00Z */
  (void)state;
  assert_ra_at("Wednesday, 01-Jan-10 00:00:00 GMT", now2090,
               INT64_C(631065600000));
  assert_ra_err_at("Friday, 01-Jan-10 00:00:00 GMT", now2090, BW_E_INVAL);
  assert_ra_at("Friday, 01-Jan-40 00:00:00 GMT", now2090,
               INT64_C(1577750400000));
  assert_ra_at("Sunday, 01-Jan-40 00:00:01 GMT", now2090, 0);
}

/* Absurd clocks: the delay saturates instead of overflowing, and a
 * two-digit year that resolves outside 0..9999 is out of range. */
static void extreme_clocks_never_overflow(void **state) {
  (void)state;
  assert_ra_at("Sun, 06 Nov 1994 08:49:37 GMT", INT64_MIN, INT64_MAX);
  assert_ra_at("Sun, 06 Nov 1994 08:49:37 GMT", INT64_MAX, 0);
  assert_ra_at("Fri, 31 Dec 9999 23:59:59 GMT", INT64_MIN, INT64_MAX);
  assert_ra_at("120", INT64_MIN, 120 * S); /* delta-seconds ignore now */
  assert_ra_at("120", INT64_MAX, 120 * S);
  assert_ra_err_at("Sunday, 06-Nov-94 08:49:37 GMT", INT64_MAX, BW_E_RANGE);
  assert_ra_err_at("Sunday, 06-Nov-94 08:49:37 GMT", INT64_MIN, BW_E_RANGE);
}

/* The calendar against the C library: for instants spread over years 1970
 * to 9999 (and every day of 1999..2101, which holds the 2000 and 2100
 * rules), gmtime_r gives the fields, each form is written from them, and the
 * parser must return the instant exactly — and refuse the same text with the
 * next weekday. */
static const char *const wday_short[7] = {"Sun", "Mon", "Tue", "Wed",
                                          "Thu", "Fri", "Sat"};
static const char *const wday_long[7] = {"Sunday",    "Monday",   "Tuesday",
                                         "Wednesday", "Thursday", "Friday",
                                         "Saturday"};
static const char *const month_names[12] = {"Jan", "Feb", "Mar", "Apr",
                                            "May", "Jun", "Jul", "Aug",
                                            "Sep", "Oct", "Nov", "Dec"};

static void check_instant(time_t t) {
  struct tm tm;
  char buf[3][64];
  int i, n[3], w;
  int64_t now = 0, want = (int64_t)t * 1000;

  assert_non_null(gmtime_r(&t, &tm));
  w = tm.tm_wday;
  n[0] = snprintf(buf[0], sizeof(buf[0]), "%s, %02d %s %04d %02d:%02d:%02d GMT",
                  wday_short[w], tm.tm_mday, month_names[tm.tm_mon],
                  tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  n[1] = snprintf(buf[1], sizeof(buf[1]), "%s %s %2d %02d:%02d:%02d %04d",
                  wday_short[w], month_names[tm.tm_mon], tm.tm_mday, tm.tm_hour,
                  tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
  n[2] = snprintf(buf[2], sizeof(buf[2]), "%s, %02d-%s-%02d %02d:%02d:%02d GMT",
                  wday_long[w], tm.tm_mday, month_names[tm.tm_mon],
                  (tm.tm_year + 1900) % 100, tm.tm_hour, tm.tm_min, tm.tm_sec);
  for (i = 0; i < 3; i++) {
    /* RFC 850 years are read relative to now: read them from the instant
     * itself, so the year is within the window. */
    int64_t at = i == 2 ? want : now;
    int64_t expect = i == 2 ? 0 : (want > 0 ? want : 0);
    ra__expect(buf[i], (size_t)n[i], at, BW_OK, expect, __FILE__, __LINE__);
    /* and one millisecond before, the delay is exactly 1 ms */
    if (i == 2)
      ra__expect(buf[i], (size_t)n[i], want - 1, BW_OK, 1, __FILE__, __LINE__);
  }
  /* The same dates with the next weekday's name are refused. */
  w = (w + 1) % 7;
  n[0] = snprintf(buf[0], sizeof(buf[0]), "%s, %02d %s %04d %02d:%02d:%02d GMT",
                  wday_short[w], tm.tm_mday, month_names[tm.tm_mon],
                  tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  ra__expect(buf[0], (size_t)n[0], now, BW_E_INVAL, BW_RETRY_AFTER_NONE,
             __FILE__, __LINE__);
}

static void the_calendar_agrees_with_gmtime(void **state) {
  time_t t;
  const time_t y1999 = (time_t)915148800;  /* 1999-01-01 */
  const time_t y2102 = (time_t)4165516800; /* 2102-01-01 */
  const time_t y10000 = (time_t)INT64_C(253402300800);
  (void)state;
  for (t = y1999; t < y2102; t += 86400 + 37)
    check_instant(t);
  for (t = 0; t < y10000; t += (time_t)3600 * 997 + 13)
    check_instant(t);
  check_instant(y10000 - 1);
}

/* ==== gRPC pushback ======================================================
 */

static void pushback_is_milliseconds(void **state) {
  (void)state;
  assert_pb("0", BW_OK, 0);
  assert_pb("250", BW_OK, 250);
  assert_pb("007", BW_OK, 7);
  assert_pb(" 250 ", BW_OK, 250);
  assert_pb("\t250\t", BW_OK, 250);
  assert_pb("1000000000000", BW_OK, INT64_C(1000000000000));
  assert_pb("-0", BW_OK, 0); /* zero, not a negative number */
}

/* gRFC A6: a negative pushback means "do not retry". */
static void a_negative_pushback_means_never(void **state) {
  (void)state;
  assert_pb("-1", BW_OK, BW_RETRY_AFTER_NEVER);
  assert_pb("-250", BW_OK, BW_RETRY_AFTER_NEVER);
  assert_pb(" -1 ", BW_OK, BW_RETRY_AFTER_NEVER);
  assert_pb("-99999999999999999999999999", BW_OK, BW_RETRY_AFTER_NEVER);
}

/* gRFC A6: an unparseable pushback also means "do not retry". */
static void a_malformed_pushback_is_refused_and_means_never(void **state) {
  static const char *const bad[] = {
      "",  " ",     "abc",   "+5",    "1.5", "1e3", "0x10", "--1",      "- 1",
      "-", "12 34", "250ms", "1,000", "\v1", "1\n", "-+1",  "\xd9\xa2",
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_pb(bad[i], BW_E_INVAL, BW_RETRY_AFTER_NEVER);
}

static void a_pushback_above_10_to_the_12_is_out_of_range(void **state) {
  (void)state;
  assert_pb("1000000000001", BW_E_RANGE, BW_RETRY_AFTER_NEVER);
  assert_pb("9223372036854775807", BW_E_RANGE, BW_RETRY_AFTER_NEVER);
  assert_pb("9223372036854775808", BW_E_RANGE, BW_RETRY_AFTER_NEVER);
  assert_pb("99999999999999999999999999", BW_E_RANGE, BW_RETRY_AFTER_NEVER);
}

static void pushback_reads_only_len_bytes_and_at_most_64(void **state) {
  char buf[80];
  int64_t delay = 1;
  (void)state;
  pb__expect("2501", 3, BW_OK, 250, __FILE__, __LINE__);
  pb__expect("-1", 1, BW_E_INVAL, BW_RETRY_AFTER_NEVER, __FILE__, __LINE__);
  memset(buf, '0', sizeof(buf));
  buf[63] = '7';
  pb__expect(buf, 64, BW_OK, 7, __FILE__, __LINE__);
  pb__expect(buf, 65, BW_E_INVAL, BW_RETRY_AFTER_NEVER, __FILE__, __LINE__);
  assert_status(bw_grpc_pushback_parse(NULL, 0, &delay), BW_E_INVAL);
  assert_i64_eq(delay, BW_RETRY_AFTER_NEVER);
  delay = 1;
  assert_status(bw_grpc_pushback_parse(NULL, 2, &delay), BW_E_INVAL);
  assert_i64_eq(delay, BW_RETRY_AFTER_NEVER);
  assert_status(bw_grpc_pushback_parse("5", 1, NULL), BW_E_INVAL);
}

/* ---- header lines ------------------------------------------------------ */

/* The value of `line` (strlen bytes) as header `name`, or "<no match>". */
static const char *hv(const char *line, const char *name, char *buf,
                      size_t size) {
  const char *v = (const char *)0x1;
  size_t n = 12345;
  if (!bw_http_header_value(line, strlen(line), name, &v, &n)) {
    assert_true(v == (const char *)0x1 && n == 12345); /* untouched */
    snprintf(buf, size, "<no match>");
  } else {
    assert_true(v >= line && v + n <= line + strlen(line));
    snprintf(buf, size, "%.*s", (int)n, v);
  }
  return buf;
}

static void a_header_line_is_matched_by_name_and_trimmed(void **state) {
  char b[64];
  (void)state;
  assert_string_equal(hv("Retry-After: 120\r\n", "retry-after", b, 64), "120");
  assert_string_equal(hv("RETRY-AFTER:\t 7 \t\r\n", "retry-after", b, 64), "7");
  assert_string_equal(hv("retry-after:120", "Retry-After", b, 64), "120");
  assert_string_equal(hv("retry-after:\r\n", "retry-after", b, 64), "");
  assert_string_equal(hv("retry-after: a b \n", "retry-after", b, 64), "a b");
  /* a stray CR before the end is trailing whitespace too */
  assert_string_equal(hv("Retry-After: 5 \r ", "retry-after", b, 64), "5");
  assert_string_equal(
      hv("grpc-retry-pushback-ms: -1\r\n", "grpc-retry-pushback-ms", b, 64),
      "-1");
  /* not this header: another name, a longer name, a space before the
   * colon (a malformed line), no colon, too short, a status line */
  assert_string_equal(hv("Retry-After-X: 1\r\n", "retry-after", b, 64),
                      "<no match>");
  assert_string_equal(hv("Retry-Afte: 1\r\n", "retry-after", b, 64),
                      "<no match>");
  assert_string_equal(hv("Retry-After : 1\r\n", "retry-after", b, 64),
                      "<no match>");
  assert_string_equal(hv("Retry-After 1\r\n", "retry-after", b, 64),
                      "<no match>");
  assert_string_equal(hv("Retry-After", "retry-after", b, 64), "<no match>");
  assert_string_equal(hv("HTTP/1.1 503 Busy\r\n", "retry-after", b, 64),
                      "<no match>");
  assert_string_equal(hv("Retry-After: 1", "", b, 64), "<no match>");
}

static void a_header_line_reads_only_len_bytes_and_refuses_nulls(void **st) {
  const char *v = NULL;
  size_t n = 0;
  (void)st;
  /* "Retry-After: 5" of a longer buffer: the rest is not read */
  assert_true(
      bw_http_header_value("Retry-After: 5XYZ", 14, "retry-after", &v, &n));
  assert_int_equal(n, 1);
  assert_int_equal(v[0], '5');
  assert_false(bw_http_header_value("Retry-After: 5", 11, "retry-after", &v,
                                    &n)); /* "Retry-After", no colon */
  assert_false(bw_http_header_value(NULL, 0, "retry-after", &v, &n));
  assert_false(bw_http_header_value("a: 1", 4, NULL, &v, &n));
  assert_false(bw_http_header_value("a: 1", 4, "a", NULL, &n));
  assert_false(bw_http_header_value("a: 1", 4, "a", &v, NULL));
}

#define T(f) cmocka_unit_test(f)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(every_2xx_is_ok),
      T(informational_and_redirect_statuses_are_permanent),
      T(client_errors_are_permanent_except_408_and_429),
      T(server_errors_are_transient_except_501_and_505),
      T(statuses_outside_100_to_599_are_permanent),
      T(transport_errors_decide_whatever_the_status),
      T(an_unknown_transport_value_is_permanent),
      T(tenacity_retries_timeouts_connect_errors_and_5xx_never_4xx),
      T(polly_lab_a_429_is_transient_and_carries_a_retry_hint),
      T(retry_hints_are_read_for_429_503_and_every_3xx),
      T(delta_seconds_are_whole_seconds),
      T(delta_seconds_may_have_surrounding_spaces_and_tabs),
      T(a_64_byte_value_is_read_and_65_bytes_are_refused),
      T(malformed_delta_seconds_are_refused),
      T(delta_seconds_above_a_billion_are_out_of_range),
      T(only_len_bytes_are_read),
      T(null_arguments_are_refused),
      T(an_imf_fixdate_gives_the_exact_delay),
      T(a_date_in_the_past_or_this_second_gives_zero),
      T(an_rfc850_date_gives_the_exact_delay),
      T(an_asctime_date_gives_the_exact_delay),
      T(leap_days_and_the_last_representable_date_are_read),
      T(a_leap_second_is_the_next_days_midnight),
      T(impossible_dates_are_refused),
      T(a_weekday_that_contradicts_the_date_is_refused),
      T(names_are_case_sensitive),
      T(only_gmt_is_accepted_as_the_zone),
      T(the_grammar_is_followed_to_the_letter),
      T(a_year_past_9999_is_out_of_range),
      T(an_rfc850_year_more_than_50_years_ahead_is_in_the_past_century),
      T(the_rfc850_century_window_moves_with_now),
      T(extreme_clocks_never_overflow),
      T(the_calendar_agrees_with_gmtime),
      T(pushback_is_milliseconds),
      T(a_negative_pushback_means_never),
      T(a_malformed_pushback_is_refused_and_means_never),
      T(a_pushback_above_10_to_the_12_is_out_of_range),
      T(pushback_reads_only_len_bytes_and_at_most_64),
      T(a_header_line_is_matched_by_name_and_trimmed),
      T(a_header_line_reads_only_len_bytes_and_refuses_nulls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

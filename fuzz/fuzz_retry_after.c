/* Fuzz harness: bw_retry_after_parse (RFC 9110 Retry-After).
 *
 * The input is the header value, parsed straight from libFuzzer's buffer
 * (exactly `size` bytes, no NUL: AddressSanitizer catches any read past
 * len). Invariants checked for every input:
 * - the status is BW_OK, BW_E_INVAL or BW_E_RANGE; BW_OK gives a delay >= 0,
 *   an error gives BW_RETRY_AFTER_NONE; more than 64 bytes is BW_E_INVAL;
 * - the same input gives the same answer twice, and the same answer when
 *   wrapped in spaces and tabs;
 * - delta-seconds do not depend on now, are whole seconds, at most 10^9 s;
 * - an IMF-fixdate or asctime date is accepted or refused whatever now is;
 *   read at 1 ms before year 0 its delay gives back the exact instant, and
 *   every other now's delay follows from that instant (0 in the past,
 *   saturating at INT64_MAX);
 * - that instant, written again as an IMF-fixdate by the C library's
 *   gmtime_r (an independent calendar), parses back to the same instant, and
 *   an accepted IMF-fixdate is byte for byte its own canonical form (except a
 *   leap second, which becomes the next day's midnight — and 9999-12-31
 *   23:59:60, whose instant no IMF-fixdate can write);
 * - an RFC 850 date is never more than 50 years after now. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "breakwater/http.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW_2026 INT64_C(1786111923418) /* 2026-08-07T14:12:03.418Z */
/* 2076-08-07T14:12:03Z: the last RFC 850 instant read as ahead of NOW_2026 */
#define LIMIT_2076 INT64_C(3364035123000)
/* 1 ms before 0000-01-01T00:00:00Z: every IMF or asctime date lies after. */
#define BEFORE_YEAR_0 (INT64_C(-62167219200000) - 1)

static const char *const wday[7] = {"Sun", "Mon", "Tue", "Wed",
                                    "Thu", "Fri", "Sat"};
static const char *const mon[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* The IMF-fixdate of a Unix second, from the C library's calendar. */
static size_t imf(int64_t unix_s, char out[64]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  int n;
  CHECK(gmtime_r(&t, &tm) != NULL);
  n = snprintf(out, 64, "%s, %02d %s %04d %02d:%02d:%02d GMT", wday[tm.tm_wday],
               tm.tm_mday, mon[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
               tm.tm_min, tm.tm_sec);
  CHECK(n > 0 && n < 64);
  return (size_t)n;
}

static int parse(const void *p, size_t size, int64_t now, int64_t *delay) {
  int64_t again;
  int rc = bw_retry_after_parse((const char *)p, size, now, delay);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  if (rc == BW_OK)
    CHECK(*delay >= 0);
  else
    CHECK(*delay == BW_RETRY_AFTER_NONE);
  if (size > 64) CHECK(rc == BW_E_INVAL);
  CHECK(bw_retry_after_parse((const char *)p, size, now, &again) == rc);
  CHECK(again == *delay);
  return rc;
}

static bool is_ows(uint8_t c) {
  return c == ' ' || c == '\t';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int64_t nows[] = {BEFORE_YEAR_0, NOW_2026, 0, -1,
                                 INT64_MIN,     INT64_MAX};
  enum { N = sizeof(nows) / sizeof(nows[0]) };
  int64_t d[N];
  int rc[N];
  size_t b = 0, e = size, i;
  bool delta, rfc850;

  for (i = 0; i < N; i++)
    rc[i] = parse(data, size, nows[i], &d[i]);

  while (b < e && is_ows(data[b]))
    b++;
  while (e > b && is_ows(data[e - 1]))
    e--;
  delta = b < e && data[b] >= '0' && data[b] <= '9';
  rfc850 = b < e && memchr(data + b, '-', e - b) != NULL;

  /* Surrounding whitespace never changes the answer. */
  if (size + 3 <= 64) {
    uint8_t wrapped[64];
    int64_t w;
    wrapped[0] = ' ';
    wrapped[1] = '\t';
    if (size > 0) memcpy(wrapped + 2, data, size);
    wrapped[size + 2] = ' ';
    CHECK(parse(wrapped, size + 3, NOW_2026, &w) == rc[1]);
    CHECK(w == d[1]);
  }

  if (delta) {
    for (i = 1; i < N; i++) {
      CHECK(rc[i] == rc[0]);
      CHECK(d[i] == d[0]);
    }
    if (rc[0] == BW_OK) {
      CHECK(d[0] % 1000 == 0);
      CHECK(d[0] <= INT64_C(1000000000000));
      for (i = b; i < e; i++)
        CHECK(data[i] >= '0' && data[i] <= '9');
    }
    return 0;
  }

  if (!rfc850) { /* IMF-fixdate or asctime: now only moves the delay */
    int64_t t_ms, back;
    char canon[64];
    size_t n;
    for (i = 1; i < N; i++)
      CHECK(rc[i] == rc[0]);
    if (rc[0] != BW_OK) return 0;
    CHECK(d[0] > 0);
    t_ms = BEFORE_YEAR_0 + d[0];
    CHECK(t_ms % 1000 == 0);
    CHECK(t_ms <= INT64_C(253402300800000)); /* 10000-01-01T00:00:00Z */
    CHECK(d[1] == (t_ms > NOW_2026 ? t_ms - NOW_2026 : 0));
    CHECK(d[2] == (t_ms > 0 ? t_ms : 0));
    CHECK(d[3] == (t_ms > -1 ? t_ms + 1 : 0));
    /* From INT64_MIN the true delay t_ms + 2^63 fits only for t_ms < 0. */
    CHECK(d[4] == (t_ms >= 0
                       ? INT64_MAX
                       : (int64_t)((uint64_t)t_ms - (uint64_t)INT64_MIN)));
    CHECK(d[5] == 0);

    /* 9999-12-31 23:59:60 is 10000-01-01 00:00:00, which no IMF-fixdate
     * can write; every other instant has a canonical form. */
    if (t_ms == INT64_C(253402300800000)) return 0;
    n = imf(t_ms / 1000, canon);
    CHECK(parse(canon, n, BEFORE_YEAR_0, &back) == BW_OK);
    CHECK(back == d[0]);
    if (e - b > 3 && data[b + 3] == ',') { /* IMF-fixdate: fixed length */
      CHECK(e - b == 29);
      if (memcmp(data + b + 23, "60", 2) != 0) { /* not a leap second */
        CHECK(n == 29);
        CHECK(memcmp(canon, data + b, n) == 0);
      }
    }
    return 0;
  }

  /* RFC 850: the year depends on now; never more than 50 years ahead. */
  if (rc[1] == BW_OK && d[1] > 0) {
    int64_t t_ms = NOW_2026 + d[1], back;
    char canon[64];
    size_t n;
    CHECK(t_ms % 1000 == 0);
    CHECK(t_ms <= LIMIT_2076);
    n = imf(t_ms / 1000, canon);
    CHECK(parse(canon, n, NOW_2026, &back) == BW_OK);
    CHECK(back == d[1]);
  }
  return 0;
}

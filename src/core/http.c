/* HTTP semantics for retries: the verdict of a status or transport error,
 * Retry-After (RFC 9110 §10.2.3 with the HTTP-date of §5.6.7) and gRPC's
 * grpc-retry-pushback-ms (gRFC A6).
 *
 * The parsers share one discipline (docs/http.md has the user's view):
 * - they read exactly `len` bytes, never past it, and need no NUL;
 * - the length is bounded before anything is read, so their cost is bounded;
 * - they never allocate, never read the locale (no ctype.h, no strtol, no
 *   strptime) and never call timegm (not POSIX): the calendar arithmetic is
 *   done here, in 64-bit integers, over the proleptic Gregorian calendar;
 * - anything the grammar does not produce is an error, never a guess: a
 *   Retry-After the client cannot read means "no hint", and the retry policy
 *   falls back on its own backoff, which is always safe. */
#include <string.h>

#include "internal.h"

/* Longest Retry-After or pushback value read, surrounding whitespace
 * included. The longest legal HTTP-date (RFC 850 with "Wednesday") is 30
 * bytes; 64 leaves room for padding without letting a hostile peer make us
 * scan a megabyte. */
#define BW__HINT_MAX_LEN 64
/* delta-seconds above this are BW_E_RANGE: 10^9 s is about 31.7 years, far
 * beyond any sane hint, and keeps every product below in int64. */
#define BW__DELTA_MAX_S INT64_C(1000000000)
/* The same bound for gRPC pushback, in its unit. */
#define BW__PUSHBACK_MAX_MS (BW__DELTA_MAX_S * 1000)

#define BW__S_PER_DAY INT64_C(86400)
#define BW__MS_PER_DAY (BW__S_PER_DAY * 1000)

/* ---- classification ------------------------------------------------------ */

bw_verdict_t bw_http_classify(int status, bw_transport_t transport) {
  switch (transport) {
  case BW_TRANSPORT_NONE:
    break;
  case BW_TRANSPORT_REFUSED:
  case BW_TRANSPORT_DNS:
  case BW_TRANSPORT_TLS:
    return BW_VERDICT_NOT_SENT;
  case BW_TRANSPORT_TIMEOUT:
  case BW_TRANSPORT_RESET:
  case BW_TRANSPORT_OTHER:
    return BW_VERDICT_TRANSIENT;
  default:
    /* Not a member of the enum: a bug in the caller (an uninitialised
     * variable, a cast). Retrying on garbage could storm; giving up cannot. */
    return BW_VERDICT_PERMANENT;
  }
  if (status >= 200 && status <= 299) return BW_VERDICT_OK;
  switch (status) {
  case 408: /* Request Timeout: the server gave up waiting for us */
  case 429: /* Too Many Requests: retry, but after its Retry-After */
    return BW_VERDICT_TRANSIENT;
  case 501: /* Not Implemented and HTTP Version Not Supported will not */
  case 505: /* change by asking again */
    return BW_VERDICT_PERMANENT;
  default:
    break;
  }
  if (status >= 500 && status <= 599) return BW_VERDICT_TRANSIENT;
  /* Other 4xx (the caller is wrong), 1xx and 3xx (not a final answer a retry
   * could improve), and anything outside 100..599 (not HTTP). */
  return BW_VERDICT_PERMANENT;
}

bool bw_http_has_retry_hint(int status) {
  return status == 429 || status == 503 || (status >= 300 && status <= 399);
}

/* ---- shared scanning helpers --------------------------------------------- */

typedef struct bw__scan_s {
  const char *p;
  const char *end;
} bw__scan_t;

static bool bw__is_digit(char c) {
  return c >= '0' && c <= '9';
}

static bool bw__is_alpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool bw__is_ows(char c) {
  return c == ' ' || c == '\t';
}

/* Drops optional whitespace (SP, HTAB) at both ends. */
static void bw__trim(bw__scan_t *s) {
  while (s->p < s->end && bw__is_ows(*s->p))
    s->p++;
  while (s->end > s->p && bw__is_ows(s->end[-1]))
    s->end--;
}

/* Consumes the exact byte c. */
static bool bw__take(bw__scan_t *s, char c) {
  if (s->p >= s->end || *s->p != c) return false;
  s->p++;
  return true;
}

/* Consumes exactly n digits (n <= 4) into *out. */
static bool bw__take_digits(bw__scan_t *s, int n, int *out) {
  int v = 0, i;
  if (s->end - s->p < n) return false;
  for (i = 0; i < n; i++) {
    if (!bw__is_digit(s->p[i])) return false;
    v = v * 10 + (s->p[i] - '0');
  }
  s->p += n;
  *out = v;
  return true;
}

/* Consumes a run of one or more digits into *out, stopping the value (not
 * the scan) once it passes `cap`, so that *out > cap means "too large"
 * whatever the length of the run. */
static bool bw__take_number(bw__scan_t *s, int64_t cap, int64_t *out) {
  int64_t v = 0;
  const char *start = s->p;
  while (s->p < s->end && bw__is_digit(*s->p)) {
    if (v <= cap) v = v * 10 + (*s->p - '0');
    s->p++;
  }
  *out = v;
  return s->p > start;
}

/* Consumes exactly the n bytes of lit (case-sensitive: RFC 9110 §5.6.7 says
 * HTTP-date is case-sensitive). */
static bool bw__take_lit(bw__scan_t *s, const char *lit, size_t n) {
  size_t i;
  if ((size_t)(s->end - s->p) < n) return false;
  for (i = 0; i < n; i++)
    if (s->p[i] != lit[i]) return false;
  s->p += n;
  return true;
}

/* ---- the calendar ---------------------------------------------------------
 *
 * Days since 1970-01-01 in the proleptic Gregorian calendar, both ways. The
 * trick that makes them branch-free: count years from March, so that the leap
 * day is the last day of the (shifted) year, and split time into 400-year
 * eras of exactly 146097 days. Valid for any year an int64 day count can
 * hold; days past the end of a month simply run into the next one (callers
 * check the day against bw__days_in_month when that matters). */

static int64_t bw__days_from_civil(int64_t year, int month, int day) {
  int64_t y = month <= 2 ? year - 1 : year; /* the year that began in March */
  int64_t era = bw__floor_div(y, 400);
  int64_t yoe = y - era * 400;                         /* [0, 399] */
  int64_t mp = month <= 2 ? month + 9 : month - 3;     /* March = 0 */
  int64_t doy = (153 * mp + 2) / 5 + day - 1;          /* [0, 365] */
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
  /* 719468 days separate 0000-03-01 from 1970-01-01. */
  return era * 146097 + doe - 719468;
}

static void bw__civil_from_days(int64_t days, int64_t *year, int *month,
                                int *day) {
  int64_t z = days + 719468;
  int64_t era = bw__floor_div(z, 146097);
  int64_t doe = z - era * 146097; /* [0, 146096] */
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *day = (int)(doy - (153 * mp + 2) / 5 + 1);
  *month = (int)(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2 ? 1 : 0);
}

static bool bw__is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int bw__days_in_month(int64_t y, int month) {
  static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && bw__is_leap(y) ? 29 : dim[month - 1];
}

/* 0 = Sunday. 1970-01-01 was a Thursday. */
static int bw__weekday(int64_t days) {
  int64_t w = (days + 4) % 7;
  return (int)(w < 0 ? w + 7 : w);
}

/* ---- HTTP-date ----------------------------------------------------------- */

static const char bw__wday_short[7][4] = {"Sun", "Mon", "Tue", "Wed",
                                          "Thu", "Fri", "Sat"};
static const char *const bw__wday_long[7] = {"Sunday",    "Monday",   "Tuesday",
                                             "Wednesday", "Thursday", "Friday",
                                             "Saturday"};
static const char bw__months[12][4] = {"Jan", "Feb", "Mar", "Apr",
                                       "May", "Jun", "Jul", "Aug",
                                       "Sep", "Oct", "Nov", "Dec"};

/* A parsed HTTP-date before its meaning is checked. */
typedef struct bw__date_s {
  int wday;       /* 0 = Sunday */
  int64_t year;   /* resolved year (RFC 850: see bw__resolve_two_digit) */
  int two_digit;  /* RFC 850: the two-digit year, else -1 */
  bool year_wide; /* more than four digits: beyond year 9999 */
  int month;      /* 1..12 */
  int day, hour, min, sec;
} bw__date_t;

static bool bw__take_month(bw__scan_t *s, int *month) {
  int i;
  for (i = 0; i < 12; i++) {
    if (bw__take_lit(s, bw__months[i], 3)) {
      *month = i + 1;
      return true;
    }
  }
  return false;
}

/* time-of-day = hour ":" minute ":" second, two digits each. */
static bool bw__take_time(bw__scan_t *s, bw__date_t *d) {
  return bw__take_digits(s, 2, &d->hour) && bw__take(s, ':') &&
         bw__take_digits(s, 2, &d->min) && bw__take(s, ':') &&
         bw__take_digits(s, 2, &d->sec);
}

/* year = 4DIGIT. More digits are still a date, one this parser cannot
 * represent (BW_E_RANGE); fewer are not a date. */
static bool bw__take_year(bw__scan_t *s, bw__date_t *d) {
  const char *start = s->p;
  int64_t y;
  if (!bw__take_number(s, 9999, &y) || s->p - start < 4) return false;
  d->year_wide = s->p - start > 4;
  d->year = y;
  return true;
}

/* Parses the three forms of RFC 9110 §5.6.7 (syntax only):
 *   IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
 *   rfc850-date  Sunday, 06-Nov-94 08:49:37 GMT
 *   asctime-date Sun Nov  6 08:49:37 1994 */
static bool bw__take_http_date(bw__scan_t *s, bw__date_t *d) {
  size_t n = 0;
  int i;

  d->two_digit = -1;
  d->year_wide = false;
  while (s->p + n < s->end && bw__is_alpha(s->p[n]))
    n++;
  /* The day name decides the form: a three-letter name starts an
   * IMF-fixdate or an asctime date, a full name an RFC 850 date. */
  d->wday = -1;
  for (i = 0; i < 7 && d->wday < 0; i++) {
    const char *name = n == 3 ? bw__wday_short[i] : bw__wday_long[i];
    if (n == strlen(name) && bw__take_lit(s, name, n)) d->wday = i;
  }
  if (d->wday < 0) return false;

  if (n > 3) { /* rfc850-date */
    return bw__take_lit(s, ", ", 2) && bw__take_digits(s, 2, &d->day) &&
           bw__take(s, '-') && bw__take_month(s, &d->month) &&
           bw__take(s, '-') && bw__take_digits(s, 2, &d->two_digit) &&
           bw__take(s, ' ') && bw__take_time(s, d) &&
           bw__take_lit(s, " GMT", 4) && s->p == s->end;
  }
  if (bw__take(s, ',')) { /* IMF-fixdate */
    return bw__take(s, ' ') && bw__take_digits(s, 2, &d->day) &&
           bw__take(s, ' ') && bw__take_month(s, &d->month) &&
           bw__take(s, ' ') && bw__take_year(s, d) && bw__take(s, ' ') &&
           bw__take_time(s, d) && bw__take_lit(s, " GMT", 4) && s->p == s->end;
  }
  /* asctime-date: the day is two digits or a space and one digit. */
  if (!(bw__take(s, ' ') && bw__take_month(s, &d->month) && bw__take(s, ' ')))
    return false;
  if (bw__take(s, ' ')) {
    if (!bw__take_digits(s, 1, &d->day)) return false;
  } else if (!bw__take_digits(s, 2, &d->day)) {
    return false;
  }
  return bw__take(s, ' ') && bw__take_time(s, d) && bw__take(s, ' ') &&
         bw__take_year(s, d) && s->p == s->end;
}

/* Seconds since the epoch of a date whose fields are in range (the leap
 * second 23:59:60 lands on the next day's 00:00:00, as in POSIX time). */
static int64_t bw__date_seconds(int64_t year, const bw__date_t *d) {
  return bw__days_from_civil(year, d->month, d->day) * BW__S_PER_DAY +
         d->hour * 3600 + d->min * 60 + d->sec;
}

/* RFC 9110 §5.6.7: a two-digit year that "appears to be more than 50 years
 * in the future" means the most recent past year with the same two digits.
 * So the year is the latest one ending in those digits whose timestamp is no
 * later than now + 50 calendar years (the same month, day and time of day,
 * 50 years on). Three candidates always suffice. */
static int64_t bw__resolve_two_digit(const bw__date_t *d, int64_t now_ms) {
  /* Floor division by parts: now_days * BW__MS_PER_DAY itself can fall
   * below INT64_MIN when now_ms is near it. */
  int64_t now_days = now_ms / BW__MS_PER_DAY;
  int64_t ms_of_day = now_ms % BW__MS_PER_DAY;
  int64_t cy, limit_s, base;
  int cm, cd;

  if (ms_of_day < 0) {
    ms_of_day += BW__MS_PER_DAY;
    now_days--;
  }
  bw__civil_from_days(now_days, &cy, &cm, &cd);
  /* A whole-second limit is exact: the date has whole seconds, so it is
   * later than now + 50 years (with its milliseconds) iff it is later than
   * the whole second that starts that instant. */
  limit_s =
      bw__days_from_civil(cy + 50, cm, cd) * BW__S_PER_DAY + ms_of_day / 1000;
  base = bw__floor_div(cy, 100) * 100 + d->two_digit;
  if (bw__date_seconds(base + 100, d) <= limit_s) return base + 100;
  if (bw__date_seconds(base, d) <= limit_s) return base;
  return base - 100;
}

/* Checks a parsed date's meaning and converts it to Unix seconds. */
static int bw__date_check(bw__date_t *d, int64_t now_ms, int64_t *unix_s) {
  int64_t days;
  if (d->year_wide) return BW_E_RANGE;
  /* Range-check the fields before any arithmetic uses them. */
  if (d->day < 1 || d->hour > 23 || d->min > 59 || d->sec > 60)
    return BW_E_INVAL;
  /* RFC 5322 §3.3 (whose semantics RFC 9110 adopts) allows second 60 for a
   * leap second; leap seconds happen only at 23:59:60 UTC. */
  if (d->sec == 60 && !(d->hour == 23 && d->min == 59)) return BW_E_INVAL;
  if (d->two_digit >= 0) {
    d->year = bw__resolve_two_digit(d, now_ms);
    if (d->year < 0 || d->year > 9999) return BW_E_RANGE;
  }
  if (d->day > bw__days_in_month(d->year, d->month)) return BW_E_INVAL;
  days = bw__days_from_civil(d->year, d->month, d->day);
  /* RFC 5322 §3.3: the day-of-week MUST be the day implied by the date. A
   * date that contradicts itself is not a date we can trust either half of;
   * refusing it makes the retry fall back on its own backoff. */
  if (bw__weekday(days) != d->wday) return BW_E_INVAL;
  *unix_s = bw__date_seconds(d->year, d);
  return BW_OK;
}

/* ---- Retry-After --------------------------------------------------------- */

/* target_ms - now_ms, or 0 if the target is not later; saturates at
 * INT64_MAX (only an absurd now_ms can get there). Unsigned arithmetic: the
 * true difference of two int64 always fits in uint64. */
static int64_t bw__ms_until(int64_t target_ms, int64_t now_ms) {
  uint64_t diff;
  if (target_ms <= now_ms) return 0;
  diff = (uint64_t)target_ms - (uint64_t)now_ms;
  return diff > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)diff;
}

int bw_retry_after_parse(const char *value, size_t len, int64_t now_unix_ms,
                         int64_t *delay_ms) {
  bw__scan_t s;
  int64_t v;
  int rc;

  if (delay_ms == NULL) return BW_E_INVAL;
  *delay_ms = BW_RETRY_AFTER_NONE;
  /* NULL is refused even with len 0: NULL + 0 is not a valid pointer sum. */
  if (value == NULL || len > BW__HINT_MAX_LEN) return BW_E_INVAL;
  s.p = value;
  s.end = value + len;
  bw__trim(&s);
  if (s.p == s.end) return BW_E_INVAL;

  if (bw__is_digit(*s.p)) { /* delta-seconds = 1*DIGIT */
    if (!bw__take_number(&s, BW__DELTA_MAX_S, &v) || s.p != s.end)
      return BW_E_INVAL;
    if (v > BW__DELTA_MAX_S) return BW_E_RANGE;
    *delay_ms = v * 1000;
    return BW_OK;
  }

  {
    bw__date_t d;
    int64_t unix_s;
    if (!bw__take_http_date(&s, &d)) return BW_E_INVAL;
    rc = bw__date_check(&d, now_unix_ms, &unix_s);
    if (rc != BW_OK) return rc;
    /* |unix_s| < 2.6e11 for years 0..9999: the product fits. */
    *delay_ms = bw__ms_until(unix_s * 1000, now_unix_ms);
  }
  return BW_OK;
}

/* ---- gRPC pushback ------------------------------------------------------- */

int bw_grpc_pushback_parse(const char *value, size_t len, int64_t *delay_ms) {
  bw__scan_t s;
  bool negative;
  int64_t v;

  if (delay_ms == NULL) return BW_E_INVAL;
  *delay_ms = BW_RETRY_AFTER_NEVER;
  /* NULL is refused even with len 0: NULL + 0 is not a valid pointer sum. */
  if (value == NULL || len > BW__HINT_MAX_LEN) return BW_E_INVAL;
  s.p = value;
  s.end = value + len;
  bw__trim(&s);
  negative = bw__take(&s, '-');
  if (!bw__take_number(&s, BW__PUSHBACK_MAX_MS, &v) || s.p != s.end)
    return BW_E_INVAL;
  /* Any negative integer means "do not retry", however large: its magnitude
   * carries no meaning, so it cannot be out of range. "-0" is zero. */
  if (negative && v != 0) return BW_OK;
  if (v > BW__PUSHBACK_MAX_MS) return BW_E_RANGE;
  *delay_ms = v;
  return BW_OK;
}

/* ---- header lines -------------------------------------------------------- */

static char bw__lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool bw_http_header_value(const char *line, size_t len, const char *name,
                          const char **value, size_t *vlen) {
  size_t k, b, e;
  if (line == NULL || name == NULL || value == NULL || vlen == NULL)
    return false;
  k = strlen(name);
  if (k == 0 || len <= k || line[k] != ':') return false;
  for (size_t i = 0; i < k; i++)
    if (bw__lower(line[i]) != bw__lower(name[i])) return false;
  b = k + 1;
  e = len;
  /* trailing: any mix of CR, LF, SP, HTAB (a stray "\r " is not value) */
  while (e > b && (line[e - 1] == '\r' || line[e - 1] == '\n' ||
                   bw__is_ows(line[e - 1])))
    e--;
  while (b < e && bw__is_ows(line[b]))
    b++;
  *value = line + b;
  *vlen = e - b;
  return true;
}

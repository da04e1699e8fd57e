/* Deadlines: an absolute clock reading carried down a call chain, a
 * per-thread current deadline, and the X-Timeout-Budget header that carries
 * the remaining time between services (the asyncio toolkit).
 *
 * Every function is total over int64: clock readings may be anywhere in the
 * int64 range (a manual clock may start negative), so differences and sums
 * are computed so that they cannot overflow — in uint64, where the true
 * difference of two int64 always fits, or after a bound check — and saturate
 * where the true value does not fit. UBSan must stay quiet for any input. */
#include "internal.h"

/* The latest instant a real deadline may have: one below "none", so that a
 * deadline far in the future never turns into no deadline at all. */
#define BW__DEADLINE_LAST (BW_DEADLINE_NONE_NS - 1)
/* X-Timeout-Budget values above 10^9 s (about 31.7 years) are refused by the
 * parser and never produced by the formatter. */
#define BW__BUDGET_MAX_S INT64_C(1000000000)
#define BW__BUDGET_MAX_MS (BW__BUDGET_MAX_S * 1000)

/* Shared with the core's hot paths through internal.h (bw__current). */
_Thread_local bw_deadline_t bw__current
    __attribute__((tls_model("initial-exec"))) = {BW_DEADLINE_NONE_NS};

/* Converts a uint64 holding an int64's two's-complement bits back, without
 * relying on implementation-defined conversion. */
static int64_t bw__to_i64(uint64_t u) {
  if (u <= (uint64_t)INT64_MAX) return (int64_t)u;
  return -(int64_t)(UINT64_MAX - u) - 1;
}

bw_deadline_t bw_deadline_none(void) {
  bw_deadline_t d = {BW_DEADLINE_NONE_NS};
  return d;
}

bw_deadline_t bw_deadline_in(int64_t now_ns, int64_t ms) {
  bw_deadline_t d = {BW__DEADLINE_LAST};
  uint64_t room;
  if (ms < 0) ms = 0; /* documented: the time is already up */
  if (now_ns >= BW__DEADLINE_LAST) return d;
  /* Nanoseconds between now and the last instant: exact in uint64. */
  room = (uint64_t)BW__DEADLINE_LAST - (uint64_t)now_ns;
  if ((uint64_t)ms > room / (uint64_t)BW_NS_PER_MS) return d;
  /* now + ms * 10^6 <= BW__DEADLINE_LAST, but the product alone may exceed
   * INT64_MAX when now is negative: add in uint64 (modular), then convert. */
  d.at_ns = bw__to_i64((uint64_t)now_ns + (uint64_t)ms * BW_NS_PER_MS);
  return d;
}

bool bw_deadline_is_none(bw_deadline_t d) {
  return d.at_ns == BW_DEADLINE_NONE_NS;
}

bw_deadline_t bw_deadline_min(bw_deadline_t a, bw_deadline_t b) {
  return a.at_ns <= b.at_ns ? a : b;
}

int64_t bw_deadline_remaining_ms(bw_deadline_t d, int64_t now_ns) {
  if (bw_deadline_is_none(d)) return INT64_MAX;
  if (now_ns >= d.at_ns) return 0;
  /* At most (2^64 - 1) / 10^6: fits in int64. */
  return (int64_t)(((uint64_t)d.at_ns - (uint64_t)now_ns) /
                   (uint64_t)BW_NS_PER_MS);
}

bool bw_deadline_expired(bw_deadline_t d, int64_t now_ns) {
  return !bw_deadline_is_none(d) && now_ns >= d.at_ns;
}

int bw_deadline_check(bw_deadline_t d, int64_t now_ns,
                      int64_t min_remaining_ms) {
  if (min_remaining_ms < 0) return BW_E_INVAL;
  if (bw_deadline_is_none(d)) return BW_OK;
  if (bw_deadline_expired(d, now_ns)) return BW_E_DEADLINE;
  /* Whole milliseconds suffice: "at least m ms left" for an integer m holds
   * iff the left-over nanoseconds, rounded down to ms, are at least m. */
  return bw_deadline_remaining_ms(d, now_ns) >= min_remaining_ms
             ? BW_OK
             : BW_E_DEADLINE;
}

int64_t bw_deadline_timeout_ms(bw_deadline_t d, int64_t now_ns,
                               int64_t timeout_ms) {
  int64_t left = bw_deadline_remaining_ms(d, now_ns);
  if (timeout_ms <= 0) return left;
  return timeout_ms < left ? timeout_ms : left;
}

bw_deadline_t bw_deadline_current(void) {
  return bw__current;
}

bw_deadline_t bw_deadline_set(bw_deadline_t d) {
  bw_deadline_t prev = bw__current;
  bw__current = d;
  return prev;
}

/* ---- X-Timeout-Budget ---------------------------------------------------- */

int bw_deadline_header_format(int64_t remaining_ms, char *buf, size_t size) {
  char tmp[BW_DEADLINE_HEADER_MAX];
  size_t n = 0, i;
  int64_t whole, frac;
  int rc = BW_OK;

  if (buf == NULL) return BW_E_INVAL;
  if (remaining_ms < 0 || remaining_ms == INT64_MAX)
    rc = BW_E_INVAL;
  else if (remaining_ms > BW__BUDGET_MAX_MS)
    rc = BW_E_RANGE;
  if (rc != BW_OK) {
    if (size > 0) buf[0] = '\0';
    return rc;
  }

  /* Digits of the whole seconds, backwards, then reversed. No snprintf: the
   * output must not depend on the locale, and this is on the request path. */
  whole = remaining_ms / 1000;
  frac = remaining_ms % 1000;
  do {
    tmp[n++] = (char)('0' + whole % 10);
    whole /= 10;
  } while (whole > 0);
  for (i = 0; i < n / 2; i++) {
    char c = tmp[i];
    tmp[i] = tmp[n - 1 - i];
    tmp[n - 1 - i] = c;
  }
  if (frac > 0) {
    int digits = 3;
    while (frac % 10 == 0) { /* no trailing zeros: 2500 -> "2.5" */
      frac /= 10;
      digits--;
    }
    tmp[n++] = '.';
    for (i = (size_t)digits; i > 0; i--) {
      tmp[n + i - 1] = (char)('0' + frac % 10);
      frac /= 10;
    }
    n += (size_t)digits;
  }
  if (size < n + 1) {
    if (size > 0) buf[0] = '\0';
    return BW_E_RANGE;
  }
  for (i = 0; i < n; i++)
    buf[i] = tmp[i];
  buf[n] = '\0';
  return (int)n;
}

/* Narrows [*p, *end) to drop the spaces and tabs around a header value. */
static void bw__trim(const char **p, const char **end) {
  while (*p < *end && (**p == ' ' || **p == '\t'))
    (*p)++;
  while (*end > *p && ((*end)[-1] == ' ' || (*end)[-1] == '\t'))
    (*end)--;
}

static bool bw__is_digit(char c) {
  return c >= '0' && c <= '9';
}

int bw_deadline_header_parse(const char *value, size_t len,
                             int64_t *remaining_ms) {
  const char *p, *end;
  int64_t whole = 0, ms = 0;
  bool nonzero_fraction = false;
  int nfrac = 0;

  if (remaining_ms == NULL || value == NULL || len == 0 ||
      len > BW_DEADLINE_HEADER_MAX)
    return BW_E_INVAL;
  p = value;
  end = value + len;
  bw__trim(&p, &end);

  /* Whole seconds: at least one digit (".5" is refused). The value stops
   * growing once it passes the limit, so a long run of digits cannot
   * overflow; the length bound keeps the run short anyway. */
  if (p == end || !bw__is_digit(*p)) return BW_E_INVAL;
  while (p < end && bw__is_digit(*p)) {
    if (whole <= BW__BUDGET_MAX_S) whole = whole * 10 + (*p - '0');
    p++;
  }
  /* Fraction: a dot and one or more digits ("1." is refused); digits past
   * the third are below a millisecond and are dropped (rounding down). Any
   * number of them is accepted, within the input's length bound: the asyncio
   * toolkit's Python sender writes str(float), e.g. "29.87654321098765". */
  if (p < end && *p == '.') {
    p++;
    while (p < end && bw__is_digit(*p)) {
      if (++nfrac <= 3) ms = ms * 10 + (*p - '0');
      if (*p != '0') nonzero_fraction = true;
      p++;
    }
    if (nfrac == 0) return BW_E_INVAL;
    for (; nfrac < 3; nfrac++)
      ms *= 10;
  }
  if (p != end) return BW_E_INVAL; /* signs, exponents, "1.2.3", "1,5" ... */
  if (whole > BW__BUDGET_MAX_S ||
      (whole == BW__BUDGET_MAX_S && nonzero_fraction))
    return BW_E_RANGE;
  *remaining_ms = whole * 1000 + ms;
  return BW_OK;
}

/* grpc-timeout (gRPC over HTTP/2: "Timeout -> TimeoutValue TimeoutUnit",
 * at most 8 digits, then one of H M S m u n). */
int bw_grpc_timeout_parse(const char *value, size_t len, int64_t *ms) {
  const char *p, *end;
  int64_t v = 0;
  int digits = 0;
  if (ms == NULL || value == NULL || len == 0 || len > BW_DEADLINE_HEADER_MAX)
    return BW_E_INVAL;
  p = value;
  end = value + len;
  bw__trim(&p, &end);
  while (p < end && bw__is_digit(*p)) {
    if (++digits > 8) return BW_E_INVAL;
    v = v * 10 + (*p - '0');
    p++;
  }
  if (digits == 0 || end - p != 1) return BW_E_INVAL;
  switch (*p) {
  case 'H':
    *ms = v * 3600000;
    return BW_OK;
  case 'M':
    *ms = v * 60000;
    return BW_OK;
  case 'S':
    *ms = v * 1000;
    return BW_OK;
  case 'm':
    *ms = v;
    return BW_OK;
  case 'u': /* below a millisecond: rounded down, never up */
    *ms = v / 1000;
    return BW_OK;
  case 'n':
    *ms = v / 1000000;
    return BW_OK;
  default:
    return BW_E_INVAL;
  }
}

int bw_deadline_from_header(const char *budget, size_t budget_len,
                            const char *grpc_timeout, size_t grpc_len,
                            int64_t now_ns, int64_t default_ms,
                            bw_deadline_t *out) {
  bw_deadline_t d = bw_deadline_none();
  bool found = false, present = false;
  int64_t ms;
  if (out == NULL) return BW_E_INVAL;
  if (budget != NULL) {
    present = true;
    if (bw_deadline_header_parse(budget, budget_len, &ms) == BW_OK) {
      d = bw_deadline_min(d, bw_deadline_in(now_ns, ms));
      found = true;
    }
  }
  if (grpc_timeout != NULL) {
    present = true;
    if (bw_grpc_timeout_parse(grpc_timeout, grpc_len, &ms) == BW_OK) {
      d = bw_deadline_min(d, bw_deadline_in(now_ns, ms));
      found = true;
    }
  }
  if (found) {
    *out = d;
    return BW_OK;
  }
  *out =
      default_ms >= 0 ? bw_deadline_in(now_ns, default_ms) : bw_deadline_none();
  return present ? BW_E_INVAL : BW_E_NOTFOUND;
}

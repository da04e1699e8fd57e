/* breakwater — the value parsers of configuration by name (config.h).
 *
 * Pure functions over their arguments: no allocation, no global state, no
 * ctype.h (its answers depend on the locale). Only the final conversion of
 * a decimal number goes through strtod, after the syntax has been checked
 * here, so what is accepted never depends on the C library. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/config.h"

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

static char lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int eq_nocase(const char *a, const char *b) {
  for (; *a != '\0' && *b != '\0'; a++, b++)
    if (lower(*a) != lower(*b)) return 0;
  return *a == *b;
}

/* Digits [s, end) into *out: BW_E_INVAL when empty or not all digits,
 * BW_E_RANGE past UINT64_MAX. */
static int digits_u64(const char *s, const char *end, uint64_t *out) {
  uint64_t v = 0;
  if (s == end) return BW_E_INVAL;
  for (const char *c = s; c < end; c++)
    if (!is_digit(*c)) return BW_E_INVAL;
  for (const char *c = s; c < end; c++) {
    uint64_t d = (uint64_t)(*c - '0');
    if (v > (UINT64_MAX - d) / 10) return BW_E_RANGE;
    v = v * 10 + d;
  }
  *out = v;
  return BW_OK;
}

int bw_config_parse_u64(const char *s, uint64_t *out) {
  if (s == NULL || out == NULL) return BW_E_INVAL;
  return digits_u64(s, s + strlen(s), out);
}

int bw_config_parse_i64(const char *s, int64_t *out) {
  uint64_t v;
  int neg = 0, rc;
  if (s == NULL || out == NULL) return BW_E_INVAL;
  if (*s == '+' || *s == '-') neg = *s++ == '-';
  rc = digits_u64(s, s + strlen(s), &v);
  if (rc != BW_OK) return rc;
  if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
    return BW_E_RANGE;
  *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v)
             : (int64_t)v;
  return BW_OK;
}

/* The length of the decimal number at the start of s ([+-]digits[.digits]
 * [e[+-]digits], with at least one digit before the exponent), 0 if none. */
static size_t number_len(const char *s) {
  size_t i = 0, mant = 0;
  if (s[i] == '+' || s[i] == '-') i++;
  while (is_digit(s[i]))
    i++, mant++;
  if (s[i] == '.') {
    i++;
    while (is_digit(s[i]))
      i++, mant++;
  }
  if (mant == 0) return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    size_t j = i + 1;
    if (s[j] == '+' || s[j] == '-') j++;
    if (!is_digit(s[j])) return i; /* "1e": the number is "1" */
    while (is_digit(s[j]))
      j++;
    i = j;
  }
  return i;
}

/* Converts the first len bytes of s, already checked by number_len. */
static int convert(const char *s, size_t len, double *out) {
  char buf[96];
  char *end = NULL;
  double v;
  if (len >= sizeof buf) return BW_E_INVAL; /* no sane value is this long */
  memcpy(buf, s, len);
  buf[len] = '\0';
  errno = 0;
  v = strtod(buf, &end);
  if (end != buf + len) return BW_E_INVAL; /* a locale with another point */
  if (errno == ERANGE || !isfinite(v)) return BW_E_RANGE;
  *out = v;
  return BW_OK;
}

int bw_config_parse_double(const char *s, double *out) {
  size_t n;
  if (s == NULL || out == NULL) return BW_E_INVAL;
  n = number_len(s);
  if (n == 0 || s[n] != '\0') return BW_E_INVAL;
  return convert(s, n, out);
}

int bw_config_parse_ratio(const char *s, double *out) {
  size_t n;
  double v;
  int rc;
  if (s == NULL || out == NULL) return BW_E_INVAL;
  n = number_len(s);
  if (n == 0 || (s[n] != '\0' && !(s[n] == '%' && s[n + 1] == '\0')))
    return BW_E_INVAL;
  rc = convert(s, n, &v);
  if (rc != BW_OK) return rc;
  *out = s[n] == '%' ? v / 100.0 : v;
  return BW_OK;
}

int bw_config_parse_duration_ms(const char *s, int64_t *ms) {
  /* Exact: the integer and fraction digits are scaled in integers, so
   * "1.5s" is 1500 and "0.1s" 100, with no binary rounding. */
  static const struct {
    const char *unit;
    uint64_t ms;
  } units[] = {{"ms", 1},      {"s", 1000},     {"m", 60000},
               {"h", 3600000}, {"d", 86400000}, {"", 1}};
  const char *p = s, *int_b, *int_e, *frac_b = NULL, *frac_e = NULL;
  uint64_t mult = 0, ip, total;
  int neg = 0, rc;
  if (s == NULL || ms == NULL) return BW_E_INVAL;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  int_b = p;
  while (is_digit(*p))
    p++;
  int_e = p;
  if (*p == '.') {
    frac_b = ++p;
    while (is_digit(*p))
      p++;
    frac_e = p;
  }
  if (int_b == int_e && (frac_b == NULL || frac_b == frac_e)) return BW_E_INVAL;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(p, units[i].unit) == 0) {
      mult = units[i].ms;
      break;
    }
  if (mult == 0) return BW_E_INVAL;
  ip = 0;
  if (int_b != int_e) {
    rc = digits_u64(int_b, int_e, &ip);
    if (rc != BW_OK) return rc;
  }
  if (ip > UINT64_MAX / mult) return BW_E_RANGE;
  total = ip * mult;
  if (frac_b != NULL && frac_b != frac_e) {
    /* fraction digits f over 10^k, times mult, must be whole */
    uint64_t f = 0, scale = 1, part;
    const char *e = frac_e;
    while (e > frac_b && e[-1] == '0')
      e--; /* trailing zeros change nothing */
    /* 86400000 = 2^10 x 3^3 x 5^5: no fraction of more than 10 digits
     * (after its trailing zeros) is a whole number of ms of any unit, and
     * f x mult stays below 10^10 x 86400000 < 2^64. */
    if (e - frac_b > 10) return BW_E_INVAL;
    for (const char *c = frac_b; c < e; c++) {
      f = f * 10 + (uint64_t)(*c - '0');
      scale *= 10;
    }
    if ((f * mult) % scale != 0) return BW_E_INVAL; /* not whole ms */
    part = f * mult / scale;
    if (total > UINT64_MAX - part) return BW_E_RANGE;
    total += part;
  }
  if (total > (uint64_t)INT64_MAX) return BW_E_RANGE;
  *ms = neg ? -(int64_t)total : (int64_t)total;
  return BW_OK;
}

int bw_config_parse_bool(const char *s, bool *out) {
  static const char *const yes[] = {"true", "on", "yes", "1"};
  static const char *const no[] = {"false", "off", "no", "0"};
  if (s == NULL || out == NULL) return BW_E_INVAL;
  for (size_t i = 0; i < 4; i++) {
    if (eq_nocase(s, yes[i])) {
      *out = true;
      return BW_OK;
    }
    if (eq_nocase(s, no[i])) {
      *out = false;
      return BW_OK;
    }
  }
  return BW_E_INVAL;
}

int bw_config_parse_u64_range(const char *s, uint64_t *first, uint64_t *last) {
  const char *dots, *end;
  uint64_t a, b;
  int rc;
  if (s == NULL || first == NULL || last == NULL) return BW_E_INVAL;
  dots = strstr(s, "..");
  end = s + strlen(s);
  if (dots == NULL) {
    rc = digits_u64(s, end, &a);
    b = a;
  } else {
    rc = digits_u64(s, dots, &a);
    if (rc == BW_OK) rc = digits_u64(dots + 2, end, &b);
  }
  if (rc != BW_OK) return rc;
  *first = a;
  *last = b;
  return BW_OK;
}

/* The reader of JSON event lines (event_json.h): a strict RFC 8259 parser
 * by recursive descent, bounded in depth, that captures three top-level
 * string members. */
#include "event_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BW__JSON_MAX_DEPTH 32

typedef struct bw__json_s {
  const unsigned char *s;
  size_t n, i;
  char *err;
  size_t err_size;
  bool failed;
} bw__json_t;

static void bw__fail(bw__json_t *j, const char *fmt, ...) {
  va_list ap;
  if (j->failed) return; /* the first error is the one reported */
  j->failed = true;
  if (j->err == NULL || j->err_size == 0) return;
  va_start(ap, fmt);
  vsnprintf(j->err, j->err_size, fmt, ap);
  va_end(ap);
}

static void bw__ws(bw__json_t *j) {
  while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' ||
                         j->s[j->i] == '\n' || j->s[j->i] == '\r'))
    j->i++;
}

/* Appends code point cp as UTF-8 to out (cap bytes, *len used); false when
 * it does not fit. out may be NULL (nothing kept). */
static bool bw__put_cp(char *out, size_t cap, size_t *len, uint32_t cp) {
  unsigned char b[4];
  size_t k;
  if (cp < 0x80) {
    b[0] = (unsigned char)cp;
    k = 1;
  } else if (cp < 0x800) {
    b[0] = (unsigned char)(0xC0 | cp >> 6);
    b[1] = (unsigned char)(0x80 | (cp & 0x3F));
    k = 2;
  } else if (cp < 0x10000) {
    b[0] = (unsigned char)(0xE0 | cp >> 12);
    b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[2] = (unsigned char)(0x80 | (cp & 0x3F));
    k = 3;
  } else {
    b[0] = (unsigned char)(0xF0 | cp >> 18);
    b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (cp & 0x3F));
    k = 4;
  }
  if (out == NULL) return true;
  if (*len + k > cap) return false;
  memcpy(out + *len, b, k);
  *len += k;
  return true;
}

/* One well-formed UTF-8 sequence starting at j->i (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF); its code point, or -1. */
static int32_t bw__utf8(bw__json_t *j) {
  const unsigned char *p = j->s + j->i;
  size_t left = j->n - j->i, k;
  uint32_t cp, min;
  if (p[0] < 0x80) {
    j->i++;
    return p[0];
  }
  if (p[0] >= 0xC2 && p[0] <= 0xDF) {
    k = 2;
    cp = p[0] & 0x1Fu;
    min = 0x80;
  } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
    k = 3;
    cp = p[0] & 0x0Fu;
    min = 0x800;
  } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
    k = 4;
    cp = p[0] & 0x07u;
    min = 0x10000;
  } else {
    return -1;
  }
  if (left < k) return -1;
  for (size_t t = 1; t < k; t++) {
    if ((p[t] & 0xC0) != 0x80) return -1;
    cp = cp << 6 | (p[t] & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  j->i += k;
  return (int32_t)cp;
}

static int bw__hex4(const unsigned char *p) {
  int v = 0;
  for (int t = 0; t < 4; t++) {
    int c = p[t], d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -1;
    v = v << 4 | d;
  }
  return v;
}

/* A string at j->i (the opening quote). Decoded into out (cap bytes, may
 * be NULL: validated only); *len the decoded length; *too_long when it did
 * not fit; *has_nul when it holds U+0000. */
static void bw__string(bw__json_t *j, char *out, size_t cap, size_t *len,
                       bool *too_long, bool *has_nul) {
  size_t start = j->i;
  *len = 0;
  *too_long = *has_nul = false;
  j->i++; /* the quote */
  for (;;) {
    unsigned char c;
    uint32_t cp;
    if (j->i >= j->n) {
      bw__fail(j, "byte %zu: a string that never ends (opened at byte %zu)",
               j->i, start);
      return;
    }
    c = j->s[j->i];
    if (c == '"') {
      j->i++;
      return;
    }
    if (c < 0x20) {
      bw__fail(j, "byte %zu: a raw control character in a string", j->i);
      return;
    }
    if (c == '\\') {
      unsigned char e;
      if (j->i + 1 >= j->n) {
        bw__fail(j, "byte %zu: an escape cut short", j->i);
        return;
      }
      e = j->s[j->i + 1];
      j->i += 2;
      switch (e) {
      case '"':
      case '\\':
      case '/':
        cp = e;
        break;
      case 'b':
        cp = '\b';
        break;
      case 'f':
        cp = '\f';
        break;
      case 'n':
        cp = '\n';
        break;
      case 'r':
        cp = '\r';
        break;
      case 't':
        cp = '\t';
        break;
      case 'u': {
        int v = j->i + 4 <= j->n ? bw__hex4(j->s + j->i) : -1;
        if (v < 0) {
          bw__fail(j, "byte %zu: \\u needs four hex digits", j->i - 2);
          return;
        }
        j->i += 4;
        cp = (uint32_t)v;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a pair: \uD83D\uDE00 */
          int lo =
              j->i + 6 <= j->n && j->s[j->i] == '\\' && j->s[j->i + 1] == 'u'
                  ? bw__hex4(j->s + j->i + 2)
                  : -1;
          if (lo < 0xDC00 || lo > 0xDFFF) {
            bw__fail(j, "byte %zu: a high surrogate without its low half",
                     j->i - 6);
            return;
          }
          j->i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          bw__fail(j, "byte %zu: a lone low surrogate", j->i - 6);
          return;
        }
        break;
      }
      default:
        bw__fail(j, "byte %zu: an unknown escape '\\%c'", j->i - 2,
                 e >= 0x20 && e < 0x7F ? e : '?');
        return;
      }
    } else {
      int32_t u = bw__utf8(j);
      if (u < 0) {
        bw__fail(j, "byte %zu: not UTF-8", j->i);
        return;
      }
      cp = (uint32_t)u;
    }
    if (cp == 0) *has_nul = true;
    if (!*too_long && !bw__put_cp(out, cap, len, cp)) *too_long = true;
  }
}

static bool bw__digits(bw__json_t *j) {
  size_t b = j->i;
  while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
    j->i++;
  return j->i > b;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static void bw__number(bw__json_t *j) {
  size_t b = j->i;
  if (j->s[j->i] == '-') j->i++;
  if (j->i < j->n && j->s[j->i] == '0') {
    j->i++;
  } else if (!(j->i < j->n && j->s[j->i] >= '1' && j->s[j->i] <= '9') ||
             !bw__digits(j)) {
    bw__fail(j, "byte %zu: not a JSON number", b);
    return;
  }
  if (j->i < j->n && j->s[j->i] == '.') {
    j->i++;
    if (!bw__digits(j)) {
      bw__fail(j, "byte %zu: not a JSON number", b);
      return;
    }
  }
  if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
    j->i++;
    if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-')) j->i++;
    if (!bw__digits(j)) bw__fail(j, "byte %zu: not a JSON number", b);
  }
}

static void bw__value(bw__json_t *j, int depth);

static void bw__literal(bw__json_t *j, const char *w) {
  size_t k = strlen(w);
  if (j->n - j->i < k || memcmp(j->s + j->i, w, k) != 0) {
    bw__fail(j, "byte %zu: not a JSON value", j->i);
    return;
  }
  j->i += k;
}

/* An array or an object at j->i; members of an object are validated and
 * dropped (the top level has its own loop). */
static void bw__container(bw__json_t *j, int depth) {
  bool obj = j->s[j->i] == '{';
  char close = obj ? '}' : ']';
  if (depth >= BW__JSON_MAX_DEPTH) {
    bw__fail(j, "byte %zu: nested deeper than %d", j->i, BW__JSON_MAX_DEPTH);
    return;
  }
  j->i++;
  bw__ws(j);
  if (j->i < j->n && j->s[j->i] == close) {
    j->i++;
    return;
  }
  for (;;) {
    if (obj) {
      size_t len;
      bool tl, nul;
      if (j->i >= j->n || j->s[j->i] != '"') {
        bw__fail(j, "byte %zu: expected a member name", j->i);
        return;
      }
      bw__string(j, NULL, 0, &len, &tl, &nul);
      if (j->failed) return;
      bw__ws(j);
      if (j->i >= j->n || j->s[j->i] != ':') {
        bw__fail(j, "byte %zu: expected ':'", j->i);
        return;
      }
      j->i++;
    }
    bw__value(j, depth + 1);
    if (j->failed) return;
    bw__ws(j);
    if (j->i < j->n && j->s[j->i] == ',') {
      j->i++;
      bw__ws(j);
      continue;
    }
    if (j->i < j->n && j->s[j->i] == close) {
      j->i++;
      return;
    }
    bw__fail(j, "byte %zu: expected ',' or '%c'", j->i, close);
    return;
  }
}

static void bw__value(bw__json_t *j, int depth) {
  size_t len;
  bool tl, nul;
  bw__ws(j);
  if (j->i >= j->n) {
    bw__fail(j, "byte %zu: a value is missing", j->i);
    return;
  }
  switch (j->s[j->i]) {
  case '{':
  case '[':
    bw__container(j, depth);
    break;
  case '"':
    bw__string(j, NULL, 0, &len, &tl, &nul);
    break;
  case 't':
    bw__literal(j, "true");
    break;
  case 'f':
    bw__literal(j, "false");
    break;
  case 'n':
    bw__literal(j, "null");
    break;
  default:
    if (j->s[j->i] == '-' || (j->s[j->i] >= '0' && j->s[j->i] <= '9'))
      bw__number(j);
    else
      bw__fail(j, "byte %zu: not a JSON value", j->i);
  }
}

static bool bw__leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t bw__days(int64_t y, int64_t m, int64_t d) {
  int64_t era, yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = y - era * 400;
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool bw_event_line_ts(const char *s, size_t len, int64_t *ns) {
  static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int64_t v[7] = {0}, y, mo, d, h, mi, se, ms;
  size_t k = 0;
  if (s == NULL || len != 24) return false;
  for (size_t i = 0; i < 24; i++) {
    if (shape[i] == 'd') {
      if (s[i] < '0' || s[i] > '9') return false;
      v[k] = v[k] * 10 + (s[i] - '0');
    } else {
      if (s[i] != shape[i]) return false;
      k++;
    }
  }
  y = v[0], mo = v[1], d = v[2], h = v[3], mi = v[4], se = v[5], ms = v[6];
  /* The years whose every instant fits in int64 nanoseconds. */
  if (y < BW_EVENT_LINE_YEAR_MIN || y > BW_EVENT_LINE_YEAR_MAX) return false;
  if (mo < 1 || mo > 12 || d < 1 ||
      d > mdays[mo - 1] + (mo == 2 && bw__leap(y) ? 1 : 0) || h > 23 ||
      mi > 59 || se > 59)
    return false;
  *ns = (((bw__days(y, mo, d) * 24 + h) * 60 + mi) * 60 + se) *
            INT64_C(1000000000) +
        ms * INT64_C(1000000);
  return true;
}

int bw_event_line_parse(const char *line, size_t len, bw_event_line_t *out,
                        char *err, size_t err_size) {
  bw__json_t j;
  char ts[32];
  bool got_event = false, got_name = false, got_ts = false;
  size_t ts_len = 0;
  if (err != NULL && err_size > 0) err[0] = '\0';
  j.s = (const unsigned char *)line;
  j.n = len;
  j.i = 0;
  j.err = err;
  j.err_size = err_size;
  j.failed = false;
  if (line == NULL || out == NULL) {
    bw__fail(&j, "no line");
    return -1;
  }
  if (len > BW_EVENT_LINE_MAX) {
    bw__fail(&j, "a line longer than %d bytes", BW_EVENT_LINE_MAX);
    return -1;
  }
  if (j.n > 0 && j.s[j.n - 1] == '\r') j.n--;
  memset(out, 0, sizeof(*out));
  bw__ws(&j);
  if (j.i >= j.n || j.s[j.i] != '{') {
    bw__fail(&j, "byte %zu: an event line is a JSON object", j.i);
    return -1;
  }
  j.i++;
  bw__ws(&j);
  if (j.i < j.n && j.s[j.i] == '}') {
    j.i++;
  } else {
    for (;;) {
      char key[16];
      size_t klen, vlen;
      bool ktl, knul, vtl, vnul;
      int which = 0; /* 1 event, 2 name, 3 ts */
      if (j.i >= j.n || j.s[j.i] != '"') {
        bw__fail(&j, "byte %zu: expected a member name", j.i);
        return -1;
      }
      bw__string(&j, key, sizeof(key) - 1, &klen, &ktl, &knul);
      if (j.failed) return -1;
      if (!ktl && !knul) {
        key[klen] = '\0';
        which = strcmp(key, "event") == 0  ? 1
                : strcmp(key, "name") == 0 ? 2
                : strcmp(key, "ts") == 0   ? 3
                                           : 0;
      }
      bw__ws(&j);
      if (j.i >= j.n || j.s[j.i] != ':') {
        bw__fail(&j, "byte %zu: expected ':'", j.i);
        return -1;
      }
      j.i++;
      bw__ws(&j);
      if (which != 0) {
        static const char *const names[] = {"", "event", "name", "ts"};
        bool *got = which == 1 ? &got_event : which == 2 ? &got_name : &got_ts;
        char *dst = which == 1 ? out->event : which == 2 ? out->name : ts;
        size_t cap = which == 1   ? BW_EVENT_LINE_EVENT_MAX
                     : which == 2 ? BW_EVENT_LINE_NAME_MAX
                                  : sizeof(ts) - 1;
        if (*got) {
          bw__fail(&j, "\"%s\" appears twice", names[which]);
          return -1;
        }
        if (j.i >= j.n || j.s[j.i] != '"') {
          bw__fail(&j, "\"%s\" must be a string", names[which]);
          return -1;
        }
        bw__string(&j, dst, cap, &vlen, &vtl, &vnul);
        if (j.failed) return -1;
        if (vtl) {
          bw__fail(&j, "\"%s\" is longer than %zu bytes", names[which], cap);
          return -1;
        }
        if (vnul) {
          bw__fail(&j, "\"%s\" holds U+0000", names[which]);
          return -1;
        }
        dst[vlen] = '\0';
        if (which == 3) ts_len = vlen;
        *got = true;
      } else {
        bw__value(&j, 1);
        if (j.failed) return -1;
      }
      bw__ws(&j);
      if (j.i < j.n && j.s[j.i] == ',') {
        j.i++;
        bw__ws(&j);
        continue;
      }
      if (j.i < j.n && j.s[j.i] == '}') {
        j.i++;
        break;
      }
      bw__fail(&j, "byte %zu: expected ',' or '}'", j.i);
      return -1;
    }
  }
  bw__ws(&j);
  if (j.i != j.n) {
    bw__fail(&j, "byte %zu: something after the object", j.i);
    return -1;
  }
  if (!got_event || !got_name || !got_ts) {
    bw__fail(&j, "the line has no \"%s\" (docs/events.md)",
             !got_event  ? "event"
             : !got_name ? "name"
                         : "ts");
    return -1;
  }
  if (!bw_event_line_ts(ts, ts_len, &out->wall_ns)) {
    bw__fail(&j,
             "\"ts\" must be a UTC time like 2026-08-07T14:12:03.418Z (got "
             "'%.32s')",
             ts);
    return -1;
  }
  return 0;
}

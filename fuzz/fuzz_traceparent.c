/* Fuzz harness: W3C Trace Context — traceparent and tracestate (trace.h).
 *
 * The input is a header value straight from libFuzzer's buffer (exactly
 * `size` bytes, no NUL). Invariants:
 * - bw_traceparent_parse: BW_OK or BW_E_INVAL; accepted exactly when an
 *   independent reading of the grammar accepts it (below); on success the
 *   ids are not all zero and formatting gives back the value's first 55
 *   bytes with the version set to 00; an error leaves the output untouched;
 * - bw_tracestate_check: BW_OK or BW_E_INVAL; accepted only when at most
 *   512 bytes of printable ASCII, spaces and tabs;
 * - bw_trace_from_headers with the input as both headers: the same answer
 *   as the parser, and a tracestate copied only when the check accepts it,
 *   NUL-terminated within its buffer;
 * - bw_trace_child of an accepted context keeps the trace-id and changes
 *   the parent-id. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "breakwater/trace.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool zeros(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != '0') return false;
  return true;
}

/* The grammar, written out independently of the parser. */
static bool reference(const char *v, size_t n) {
  size_t b = 0, e = n;
  static const size_t dash[] = {2, 35, 52};
  while (b < e && (v[b] == ' ' || v[b] == '\t'))
    b++;
  while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\t'))
    e--;
  v += b;
  n = e - b;
  if (n < 55) return false;
  for (size_t i = 0; i < 55; i++) {
    bool is_dash = i == dash[0] || i == dash[1] || i == dash[2];
    if (is_dash ? v[i] != '-' : !hex(v[i])) return false;
  }
  if (v[0] == 'f' && v[1] == 'f') return false;
  if (v[0] == '0' && v[1] == '0') {
    if (n != 55) return false;
  } else if (n > 55 && v[55] != '-') {
    return false;
  }
  return !zeros(v + 3, 32) && !zeros(v + 36, 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *v = (const char *)data;
  bw_trace_t t, u, c;
  char buf[BW_TRACEPARENT_LEN + 1];
  int rc, ts_rc;
  memset(&t, 0x5A, sizeof(t));
  u = t;
  rc = bw_traceparent_parse(v, size, &t);
  CHECK(rc == BW_OK || rc == BW_E_INVAL);
  CHECK((rc == BW_OK) == reference(v, size));
  if (rc == BW_OK) {
    size_t b = 0;
    while (v[b] == ' ' || v[b] == '\t')
      b++;
    CHECK(bw_trace_is_valid(&t));
    CHECK(t.tracestate[0] == '\0');
    CHECK(bw_traceparent_format(&t, buf, sizeof(buf)) == BW_TRACEPARENT_LEN);
    CHECK(memcmp(buf, "00", 2) == 0);
    CHECK(memcmp(buf + 2, v + b + 2, BW_TRACEPARENT_LEN - 2) == 0);
    CHECK(bw_trace_child(&t, NULL, &c) == BW_OK);
    CHECK(memcmp(c.trace_id, t.trace_id, 16) == 0);
    CHECK(memcmp(c.parent_id, t.parent_id, 8) != 0);
  } else {
    CHECK(memcmp(&t, &u, sizeof(t)) == 0);
  }

  ts_rc = bw_tracestate_check(v, size);
  CHECK(ts_rc == BW_OK || ts_rc == BW_E_INVAL);
  if (ts_rc == BW_OK) {
    CHECK(size <= BW_TRACESTATE_MAX);
    for (size_t i = 0; i < size; i++)
      CHECK((v[i] >= 0x20 && v[i] <= 0x7E) || v[i] == '\t');
  }

  memset(&u, 0x5A, sizeof(u));
  rc = bw_trace_from_headers(v, size, v, size, &u);
  CHECK(rc == bw_traceparent_parse(v, size, &t));
  if (rc == BW_OK) {
    size_t n = strnlen(u.tracestate, sizeof(u.tracestate));
    CHECK(n < sizeof(u.tracestate));
    /* copied only when the whole (trimmed) list passed the check */
    if (n > 0) CHECK(bw_tracestate_check(u.tracestate, n) == BW_OK);
  }
  return 0;
}

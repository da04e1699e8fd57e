/* Fuzz harness: gRPC's grpc-timeout and the inbound deadline.
 *
 * The input is parsed as a header value straight from libFuzzer's buffer
 * (exactly `size` bytes, no NUL). Invariants:
 * - parse: BW_OK or BW_E_INVAL, nothing else; accepted exactly when the
 *   value, without surrounding spaces and tabs, is 1 to 8 digits and one of
 *   H M S m u n, and it is at most 32 bytes; the result is the reference
 *   computation (u and n rounded down), between 0 and 99999999 hours; an
 *   error leaves the output untouched;
 * - bw_deadline_from_header with the input as the grpc-timeout: BW_OK and
 *   now + ms when the parser accepts it, else BW_E_INVAL and the default;
 *   with the input also as the X-Timeout-Budget, the deadline is never
 *   later than either header's alone. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "breakwater/deadline.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UNTOUCHED INT64_C(-0x5A5A5A5A5A)
#define NOW INT64_C(1000000000000)

/* The grammar, written out independently of the parser. */
static bool reference(const char *v, size_t n, int64_t *ms) {
  size_t b = 0, e = n, i;
  int64_t x = 0;
  if (n == 0 || n > BW_DEADLINE_HEADER_MAX) return false;
  while (b < e && (v[b] == ' ' || v[b] == '\t'))
    b++;
  while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\t'))
    e--;
  if (e - b < 2 || e - b > 9) return false;
  for (i = b; i < e - 1; i++) {
    if (v[i] < '0' || v[i] > '9') return false;
    x = x * 10 + (v[i] - '0');
  }
  switch (v[e - 1]) {
  case 'H':
    *ms = x * 60 * 60 * 1000;
    return true;
  case 'M':
    *ms = x * 60 * 1000;
    return true;
  case 'S':
    *ms = x * 1000;
    return true;
  case 'm':
    *ms = x;
    return true;
  case 'u':
    *ms = x / 1000;
    return true;
  case 'n':
    *ms = x / 1000 / 1000;
    return true;
  default:
    return false;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *v = (const char *)data;
  int64_t ms = UNTOUCHED, want = UNTOUCHED, budget_ms = UNTOUCHED;
  bw_deadline_t d, alone;
  int rc = bw_grpc_timeout_parse(v, size, &ms);
  bool ok = reference(v, size, &want);
  CHECK(rc == BW_OK || rc == BW_E_INVAL);
  CHECK((rc == BW_OK) == ok);
  if (ok) {
    CHECK(ms == want);
    CHECK(ms >= 0 && ms <= INT64_C(99999999) * 3600000);
  } else {
    CHECK(ms == UNTOUCHED);
  }

  rc = bw_deadline_from_header(NULL, 0, v, size, NOW, 10000, &d);
  if (ok) {
    CHECK(rc == BW_OK);
    CHECK(d.at_ns == bw_deadline_in(NOW, want).at_ns);
  } else {
    CHECK(rc == BW_E_INVAL);
    CHECK(d.at_ns == NOW + 10000 * INT64_C(1000000));
  }
  alone = d;
  rc = bw_deadline_from_header(v, size, v, size, NOW, 10000, &d);
  if (bw_deadline_header_parse(v, size, &budget_ms) == BW_OK) {
    CHECK(rc == BW_OK);
    CHECK(d.at_ns <= bw_deadline_in(NOW, budget_ms).at_ns);
    if (ok) CHECK(d.at_ns <= alone.at_ns);
  } else {
    CHECK(d.at_ns == alone.at_ns);
  }
  return 0;
}

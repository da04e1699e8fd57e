/* Fuzz harness: the X-Timeout-Budget header and deadline arithmetic.
 *
 * The input is parsed as a header value straight from libFuzzer's buffer
 * (exactly `size` bytes, no NUL), and its first bytes are also read as
 * int64 numbers for the formatter and the arithmetic. Invariants:
 * - parse: BW_OK, BW_E_INVAL or BW_E_RANGE; BW_OK gives 0 <= ms <= 10^12;
 *   an error leaves the output untouched; more than 32 bytes is BW_E_INVAL;
 *   any accepted value re-formats and re-parses to the same ms, and the
 *   re-formatted text is never longer than the trimmed input;
 * - format: accepts exactly 0..10^12; parse(format(x)) == x; a buffer one
 *   byte too small is refused with "" written and nothing past it (the
 *   buffer is an exact-size heap block, so ASan sees any overflow);
 * - arithmetic at any int64 (UBSan aborts on any overflow): a deadline from
 *   bw_deadline_in is never none; remaining_ms is never negative and agrees
 *   with expired and check; min is commutative and never later than either;
 *   timeout_ms is never more than the remaining time. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "breakwater/deadline.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MS INT64_C(1000000000000)
#define UNTOUCHED INT64_C(-0x5A5A5A5A5A)

static int64_t read_i64(const uint8_t *data, size_t size, size_t at) {
  uint64_t u = 0;
  size_t i;
  for (i = 0; i < 8; i++)
    u = (u << 8) | (at + i < size ? data[at + i] : 0);
  /* The bits as an int64 without implementation-defined conversion. */
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

static void check_format(int64_t x) {
  char buf[BW_DEADLINE_HEADER_MAX];
  int n = bw_deadline_header_format(x, buf, sizeof(buf));
  if (x < 0 || x == INT64_MAX) {
    CHECK(n == BW_E_INVAL);
    CHECK(buf[0] == '\0');
  } else if (x > MAX_MS) {
    CHECK(n == BW_E_RANGE);
    CHECK(buf[0] == '\0');
  } else {
    int64_t back = UNTOUCHED;
    char *exact;
    CHECK(n > 0 && (size_t)n == strlen(buf));
    CHECK(bw_deadline_header_parse(buf, (size_t)n, &back) == BW_OK);
    CHECK(back == x);
    /* No trailing zeros after a dot, no leading zeros before a digit. */
    CHECK(buf[n - 1] != '.' &&
          (memchr(buf, '.', (size_t)n) == NULL || buf[n - 1] != '0'));
    CHECK(!(n > 1 && buf[0] == '0' && buf[1] != '.'));
    /* Exactly n + 1 bytes suffice; n do not. */
    exact = malloc((size_t)n + 1);
    CHECK(exact != NULL);
    CHECK(bw_deadline_header_format(x, exact, (size_t)n + 1) == n);
    CHECK(memcmp(exact, buf, (size_t)n + 1) == 0);
    CHECK(bw_deadline_header_format(x, exact, (size_t)n) == BW_E_RANGE);
    CHECK(exact[0] == '\0');
    free(exact);
  }
}

static void check_arithmetic(int64_t now, int64_t ms, int64_t other,
                             int64_t t) {
  bw_deadline_t d = bw_deadline_in(now, ms), o, m;
  int64_t left = bw_deadline_remaining_ms(d, t), tmo;
  o.at_ns = other;
  CHECK(!bw_deadline_is_none(d));
  CHECK(left >= 0);
  CHECK(bw_deadline_expired(d, t) == (t >= d.at_ns));
  if (bw_deadline_expired(d, t)) CHECK(left == 0);
  CHECK((bw_deadline_check(d, t, 0) == BW_OK) == !bw_deadline_expired(d, t));
  if (!bw_deadline_expired(d, t)) {
    CHECK(bw_deadline_check(d, t, left) == BW_OK);
    if (left < INT64_MAX)
      CHECK(bw_deadline_check(d, t, left + 1) == BW_E_DEADLINE);
  }
  /* The deadline is where bw_deadline_in put it. */
  if (ms <= 0) CHECK(d.at_ns == (now == INT64_MAX ? INT64_MAX - 1 : now));
  if (ms >= 0 && ms <= INT64_C(1000000) && now >= INT64_MIN / 2 &&
      now <= INT64_MAX / 2)
    CHECK(d.at_ns == now + ms * BW_NS_PER_MS);
  if (!bw_deadline_expired(d, now) && ms > 0)
    CHECK(bw_deadline_remaining_ms(d, now) <= ms);
  m = bw_deadline_min(d, o);
  CHECK(m.at_ns == bw_deadline_min(o, d).at_ns);
  CHECK(m.at_ns <= d.at_ns && m.at_ns <= o.at_ns);
  CHECK(m.at_ns == d.at_ns || m.at_ns == o.at_ns);
  tmo = bw_deadline_timeout_ms(d, t, other);
  CHECK(tmo >= 0 && tmo <= left);
  if (other > 0) CHECK(tmo <= other);
  CHECK(bw_deadline_remaining_ms(bw_deadline_none(), t) == INT64_MAX);
  CHECK(!bw_deadline_expired(bw_deadline_none(), t));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t ms = UNTOUCHED, x;
  int rc = bw_deadline_header_parse((const char *)data, size, &ms);
  size_t b = 0, e = size;

  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  if (size > BW_DEADLINE_HEADER_MAX) CHECK(rc == BW_E_INVAL);
  if (rc != BW_OK) {
    CHECK(ms == UNTOUCHED);
  } else {
    char buf[BW_DEADLINE_HEADER_MAX];
    int64_t back = UNTOUCHED;
    int n;
    CHECK(ms >= 0 && ms <= MAX_MS);
    n = bw_deadline_header_format(ms, buf, sizeof(buf));
    CHECK(n > 0);
    CHECK(bw_deadline_header_parse(buf, (size_t)n, &back) == BW_OK);
    CHECK(back == ms);
    while (b < e && (data[b] == ' ' || data[b] == '\t'))
      b++;
    while (e > b && (data[e - 1] == ' ' || data[e - 1] == '\t'))
      e--;
    /* The canonical text is never longer, except that leading zeros and
     * decimals beyond the third are dropped, never added. */
    CHECK((size_t)n <= e - b);
  }

  x = read_i64(data, size, 0);
  check_format(x);
  check_format(x < 0 ? -(x + 1) : x); /* also the mirrored, non-negative one */
  check_format(x & INT64_C(0xFFFFFFFFFF)); /* mostly within 0..10^12 */
  check_arithmetic(x, read_i64(data, size, 8), read_i64(data, size, 16),
                   read_i64(data, size, 24));
  check_arithmetic(read_i64(data, size, 8), x, read_i64(data, size, 24),
                   read_i64(data, size, 16));
  return 0;
}

/* Fuzz harness: bw_grpc_pushback_parse (grpc-retry-pushback-ms, gRFC A6).
 *
 * The input is the metadata value, parsed straight from libFuzzer's buffer
 * (exactly `size` bytes, no NUL). Invariants checked for every input:
 * - the status is BW_OK, BW_E_INVAL or BW_E_RANGE; an error always leaves
 *   BW_RETRY_AFTER_NEVER (unparseable means do not retry); more than 64
 *   bytes is BW_E_INVAL; the same input gives the same answer twice;
 * - BW_OK gives either a delay in [0, 10^12] or BW_RETRY_AFTER_NEVER, and
 *   NEVER only for a value that starts with '-';
 * - an accepted delay written back in decimal parses to the same delay;
 * - an independent oracle: a value of at most 64 bytes that is 1 to 18
 *   plain digits once trimmed is accepted exactly when it is at most 10^12,
 * with the value strtoll reads. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "breakwater/http.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MS INT64_C(1000000000000)

static int parse(const void *p, size_t size, int64_t *delay) {
  int64_t again;
  int rc = bw_grpc_pushback_parse((const char *)p, size, delay);
  CHECK(rc == BW_OK || rc == BW_E_INVAL || rc == BW_E_RANGE);
  if (rc != BW_OK) CHECK(*delay == BW_RETRY_AFTER_NEVER);
  if (rc == BW_OK)
    CHECK(*delay == BW_RETRY_AFTER_NEVER || (*delay >= 0 && *delay <= MAX_MS));
  if (size > 64) CHECK(rc == BW_E_INVAL);
  CHECK(bw_grpc_pushback_parse((const char *)p, size, &again) == rc);
  CHECK(again == *delay);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t delay;
  int rc = parse(data, size, &delay);
  size_t b = 0, e = size, i;
  bool digits_only;

  while (b < e && (data[b] == ' ' || data[b] == '\t'))
    b++;
  while (e > b && (data[e - 1] == ' ' || data[e - 1] == '\t'))
    e--;

  if (rc == BW_OK && delay == BW_RETRY_AFTER_NEVER) CHECK(data[b] == '-');

  if (rc == BW_OK && delay >= 0) {
    char buf[32];
    int64_t back;
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)delay);
    CHECK(n > 0 && (size_t)n < sizeof(buf));
    CHECK(parse(buf, (size_t)n, &back) == BW_OK);
    CHECK(back == delay);
  }

  digits_only = size <= 64 && e > b && e - b <= 18;
  for (i = b; digits_only && i < e; i++)
    digits_only = data[i] >= '0' && data[i] <= '9';
  if (digits_only) {
    char buf[19];
    long long v;
    memcpy(buf, data + b, e - b);
    buf[e - b] = '\0';
    v = strtoll(buf, NULL, 10);
    if (v <= MAX_MS) {
      CHECK(rc == BW_OK);
      CHECK(delay == v);
    } else {
      CHECK(rc == BW_E_RANGE);
    }
  }
  return 0;
}

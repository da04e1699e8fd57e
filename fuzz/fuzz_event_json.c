/* Fuzz harness: the JSON event-line reader of `breakwater alert`
 * (tools/event_json.c).
 *
 * The input is one line straight from libFuzzer's buffer (exactly `size`
 * bytes, no NUL). Invariants:
 * - bw_event_line_parse answers 0 or -1, and -1 always comes with a
 *   non-empty message;
 * - on success event and name are NUL-terminated within their buffers and
 *   hold no byte below 0x20 other than what an escape decoded (no NUL), the
 *   whole line was at most BW_EVENT_LINE_MAX bytes, and the time is that
 *   of a ts the ts reader accepts (a multiple of 1 ms);
 * - the ts reader, given the input itself, accepts only 24-byte values and
 *   gives a whole number of milliseconds within years 1678..2261 (all of
 *   which fit in int64 nanoseconds). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "event_json.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1678-01-01T00:00:00.000 and 2261-12-31T23:59:59.999 in ns since the
 * epoch. */
#define MIN_NS (INT64_C(-9214560000) * 1000000000)
#define MAX_NS (INT64_C(9214646399999) * 1000000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  bw_event_line_t ev;
  char err[256];
  int64_t ns;
  int rc;
  memset(err, 0x5A, sizeof(err));
  rc = bw_event_line_parse(s, size, &ev, err, sizeof(err));
  CHECK(rc == 0 || rc == -1);
  CHECK(memchr(err, '\0', sizeof(err)) != NULL);
  if (rc == -1) {
    CHECK(err[0] != '\0');
  } else {
    CHECK(size <= BW_EVENT_LINE_MAX);
    CHECK(memchr(ev.event, '\0', sizeof(ev.event)) != NULL);
    CHECK(memchr(ev.name, '\0', sizeof(ev.name)) != NULL);
    CHECK(ev.wall_ns % 1000000 == 0);
    CHECK(ev.wall_ns >= MIN_NS && ev.wall_ns <= MAX_NS);
  }
  if (bw_event_line_ts(s, size, &ns)) {
    CHECK(size == 24);
    CHECK(ns % 1000000 == 0);
    CHECK(ns >= MIN_NS && ns <= MAX_NS);
  }
  return 0;
}

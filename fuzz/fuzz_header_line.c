/* Fuzz harness: bw_http_header_value, the header-line matcher of the curl
 * driver, and the hint parsers it feeds (as the driver's header callback
 * does).
 *
 * The input is a block of header lines, split at '\n' (each line keeps its
 * '\n', as libcurl hands it over), every line read straight from
 * libFuzzer's buffer (exactly its bytes, no NUL: AddressSanitizer catches
 * any read past it). For every line and each of the two names the driver
 * asks for, invariants:
 * - it matches exactly when a reference reading says so: the line is longer
 *   than the name, the name's bytes equal the line's case-insensitively
 *   (ASCII), and a ':' follows directly;
 * - on a match the value lies inside the line after the colon, has no
 *   leading space or tab and no trailing space, tab, CR or LF, and is what
 *   the reference trimming gives; on no match the outputs are untouched;
 * - the answer is the same twice, and the same for the line with its name
 *   written in upper or lower case;
 * - the value, given to bw_retry_after_parse / bw_grpc_pushback_parse as
 *   the driver does, answers BW_OK, BW_E_INVAL or BW_E_RANGE, and the same
 *   as the whole line after the colon would (the parsers trim the same
 *   whitespace themselves) whenever that part has no CR or LF in it. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "breakwater/http.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW_2026 INT64_C(1786111923418)

static char lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static char upper(char c) {
  return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

static bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

/* The reference reading: the value's offset and length, or false. */
static bool reference(const char *line, size_t len, const char *name,
                      size_t *off, size_t *vlen) {
  size_t k = strlen(name), b, e;
  if (len <= k || line[k] != ':') return false;
  for (size_t i = 0; i < k; i++)
    if (lower(line[i]) != lower(name[i])) return false;
  b = k + 1;
  e = len;
  while (e > b &&
         (line[e - 1] == '\r' || line[e - 1] == '\n' || is_ows(line[e - 1])))
    e--;
  while (b < e && is_ows(line[b]))
    b++;
  *off = b;
  *vlen = e - b;
  return true;
}

static void check_line(const char *line, size_t len, const char *name,
                       bool pushback) {
  const char *v = (const char *)&len, *v2 = NULL;
  size_t n = 7, n2 = 0, off = 0, rn = 0;
  bool m = bw_http_header_value(line, len, name, &v, &n);
  CHECK(m == reference(line, len, name, &off, &rn));
  if (!m) {
    CHECK(v == (const char *)&len && n == 7); /* untouched */
    return;
  }
  CHECK(v == line + off && n == rn);
  CHECK(v > line && v + n <= line + len);
  if (n > 0) {
    CHECK(!is_ows(v[0]));
    CHECK(!is_ows(v[n - 1]) && v[n - 1] != '\r' && v[n - 1] != '\n');
  }
  CHECK(bw_http_header_value(line, len, name, &v2, &n2));
  CHECK(v2 == v && n2 == n);
  {
    /* the name in another case matches the same way */
    char copy[128];
    size_t k = strlen(name);
    if (len <= sizeof(copy)) {
      memcpy(copy, line, len);
      for (size_t i = 0; i < k; i++)
        copy[i] = (i & 1) ? upper(copy[i]) : lower(copy[i]);
      CHECK(bw_http_header_value(copy, len, name, &v2, &n2));
      CHECK(v2 == copy + off && n2 == n);
    }
  }
  {
    /* the parsers answer the same for the value and for the raw rest of
     * the line (their own trimming), when that rest has no CR/LF */
    const char *rest = line + strlen(name) + 1;
    size_t rlen = len - strlen(name) - 1;
    int64_t a, b;
    int ra, rb;
    if (pushback) {
      ra = bw_grpc_pushback_parse(v, n, &a);
      CHECK(ra == BW_OK || ra == BW_E_INVAL || ra == BW_E_RANGE);
      if (memchr(rest, '\r', rlen) == NULL &&
          memchr(rest, '\n', rlen) == NULL) {
        rb = bw_grpc_pushback_parse(rest, rlen, &b);
        if (rlen <= 64) CHECK(rb == ra && b == a);
      }
    } else {
      ra = bw_retry_after_parse(v, n, NOW_2026, &a);
      CHECK(ra == BW_OK || ra == BW_E_INVAL || ra == BW_E_RANGE);
      if (memchr(rest, '\r', rlen) == NULL &&
          memchr(rest, '\n', rlen) == NULL) {
        rb = bw_retry_after_parse(rest, rlen, NOW_2026, &b);
        if (rlen <= 64) CHECK(rb == ra && b == a);
      }
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
    check_line(p, len, "retry-after", false);
    check_line(p, len, "grpc-retry-pushback-ms", true);
    p += len;
  }
  return 0;
}

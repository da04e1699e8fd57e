/* Fuzz harness: bw_storm_metric (tools/storm_metrics.c), the reader of the
 * metrics text `breakwater storm --url` fetches from the partner.
 *
 * The input is the text, read straight from libFuzzer's buffer (exactly
 * `size` bytes, no NUL: AddressSanitizer catches any read past it), asked
 * for the two samples the storm reads and a one-letter name. Invariants:
 * - the answer is 1, 0 or -1; err is NUL-terminated, empty unless -1, and
 *   names the metric when -1; *out is untouched unless 1;
 * - the same answer twice;
 * - appending "\n# comment\n" changes nothing (comments are skipped);
 * - appending "\n<name> <value>\n" to a text without the sample makes it
 *   found with that value; to a text that has it, makes it -1 (twice);
 * - an answer of 1 means a line of the text starts with the name and a
 *   space or tab, and writing "<name> <value>\n" parses back to the value. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "storm_metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UNSET UINT64_C(0xA5A5A5A5A5A5A5A5)

static int ask(const char *text, size_t len, const char *name, uint64_t *v) {
  char err[256];
  uint64_t again = UNSET;
  int rc;
  memset(err, 'x', sizeof(err));
  *v = UNSET;
  rc = bw_storm_metric(text, len, name, v, err, sizeof(err));
  CHECK(rc == 1 || rc == 0 || rc == -1);
  CHECK(memchr(err, '\0', sizeof(err)) != NULL);
  if (rc == -1) {
    CHECK(strstr(err, "partner metric ") == err);
    CHECK(strncmp(err + 15, name, strlen(name)) == 0);
  } else {
    CHECK(err[0] == '\0');
  }
  if (rc != 1) CHECK(*v == UNSET);
  CHECK(bw_storm_metric(text, len, name, &again, err, sizeof(err)) == rc);
  if (rc == 1) CHECK(again == *v);
  return rc;
}

/* text + suffix in a fresh exact-size heap block (ASan sees overreads). */
static char *cat(const uint8_t *data, size_t size, const char *suffix,
                 size_t *len) {
  size_t n = strlen(suffix);
  char *t = malloc(size + n + 1);
  CHECK(t != NULL);
  if (size > 0) memcpy(t, data, size);
  memcpy(t + size, suffix, n);
  *len = size + n;
  return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"breakwater_partner_network_calls_total",
                                      "breakwater_partner_max_in_flight", "c"};
  const char *text = (const char *)data;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const char *name = names[i];
    uint64_t v, w;
    size_t len;
    char line[96], *t;
    int rc = ask(text, size, name, &v);

    t = cat(data, size, "\n# comment\n", &len);
    CHECK(ask(t, len, name, &w) == rc);
    if (rc == 1) CHECK(w == v);
    free(t);

    snprintf(line, sizeof(line), "\n%s 1234567\n", name);
    t = cat(data, size, line, &len);
    if (rc == 0) {
      CHECK(ask(t, len, name, &w) == 1);
      CHECK(w == 1234567);
    } else if (rc == 1) {
      CHECK(ask(t, len, name, &w) == -1);
    }
    free(t);

    if (rc == 1) {
      size_t k = strlen(name);
      bool seen = false;
      for (const char *p = text; p != NULL && p < text + size;) {
        size_t left = (size_t)(text + size - p);
        if (left > k && memcmp(p, name, k) == 0 &&
            (p[k] == ' ' || p[k] == '\t'))
          seen = true;
        p = memchr(p, '\n', left);
        if (p != NULL) p++;
      }
      CHECK(seen);
      snprintf(line, sizeof(line), "%s %llu\n", name, (unsigned long long)v);
      CHECK(ask(line, strlen(line), name, &w) == 1);
      CHECK(w == v);
    }
  }
  return 0;
}

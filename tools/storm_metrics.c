/* The partner's metrics text: see storm_metrics.h. */
#include "storm_metrics.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

/* Up to 40 bytes of the line for a message, printable ASCII only. */
static void excerpt(const char *p, size_t n, char out[48]) {
  size_t i, k = 0;
  for (i = 0; i < n && k < 40; i++)
    out[k++] = (p[i] >= 0x20 && p[i] < 0x7f) ? p[i] : '?';
  if (i < n) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = '\0';
}

/* Parses one sample line's rest (after the name and its blanks): a value,
 * optionally blanks and a timestamp, optionally blanks and a CR. */
static int parse_rest(const char *p, const char *end, const char *name,
                      uint64_t *out, char *err, size_t err_size) {
  const char *s = p;
  uint64_t v = 0;
  char ex[48];
  if (s == end || *s < '0' || *s > '9') goto bad;
  while (s < end && *s >= '0' && *s <= '9') {
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) {
      excerpt(p, (size_t)(end - p), ex);
      snprintf(err, err_size,
               "partner metric %s: value must be at most %llu (got \"%s\")",
               name, (unsigned long long)UINT64_MAX, ex);
      return -1;
    }
    v = v * 10 + d;
    s++;
  }
  if (s < end && is_blank(*s)) { /* an optional timestamp (ms, may be < 0) */
    while (s < end && is_blank(*s))
      s++;
    if (s < end && *s == '-') s++;
    while (s < end && *s >= '0' && *s <= '9')
      s++;
    while (s < end && is_blank(*s))
      s++;
  }
  if (s < end && *s == '\r') s++;
  if (s != end) goto bad;
  *out = v;
  return 1;
bad:
  excerpt(p, (size_t)(end - p), ex);
  snprintf(err, err_size,
           "partner metric %s: value must be a whole number of digits, "
           "optionally followed by a timestamp (got \"%s\")",
           name, ex);
  return -1;
}

int bw_storm_metric(const char *text, size_t len, const char *name,
                    uint64_t *out, char *err, size_t err_size) {
  size_t n = strlen(name);
  const char *p = text, *end = text + len;
  uint64_t v = 0;
  int found = 0;
  if (err_size > 0) err[0] = '\0';
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *eol = nl != NULL ? nl : end;
    if ((size_t)(eol - p) > n && memcmp(p, name, n) == 0 && is_blank(p[n])) {
      const char *s = p + n;
      int rc;
      uint64_t x;
      while (s < eol && is_blank(*s))
        s++;
      rc = parse_rest(s, eol, name, &x, err, err_size);
      if (rc < 0) return -1;
      if (found) {
        snprintf(err, err_size,
                 "partner metric %s: the sample appears twice (a metric has "
                 "one unlabelled sample)",
                 name);
        return -1;
      }
      found = 1;
      v = x;
    }
    p = nl != NULL ? nl + 1 : end;
  }
  if (found) *out = v;
  return found;
}

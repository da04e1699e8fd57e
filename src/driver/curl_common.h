/* breakwater — private to src/driver/: what both libcurl drivers (the multi
 * driver, curl.c, and the easy helper, curl_easy.c) do the same way: read
 * the retry hint from the response's header lines, and build an attempt's
 * request headers. Static inline, so that neither library exports or
 * imports a private symbol. */
#ifndef BW_DRIVER_CURL_COMMON_H
#define BW_DRIVER_CURL_COMMON_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "breakwater/clock.h"
#include "breakwater/deadline.h"
#include "breakwater/http.h"
#include "breakwater/trace.h"

/* The retry hints of the response being received. */
typedef struct bw__curl_hint_s {
  bool has_ra, has_push;
  int64_t ra_ms, push_ms;
} bw__curl_hint_t;

/* Appends n bytes of a response body to buf (len bytes used, room for max
 * and a NUL), keeping it a C string; what does not fit is dropped and
 * *truncated set. Returns n: libcurl reads the rest and it is dropped. */
static inline size_t bw__curl_body_append(char *buf, size_t *len, size_t max,
                                          bool *truncated, const char *data,
                                          size_t n) {
  size_t room = max - *len, take = n < room ? n : room;
  if (take > 0) {
    memcpy(buf + *len, data, take);
    *len += take;
    buf[*len] = '\0';
  }
  if (take < n) *truncated = true;
  return n;
}

static inline void bw__curl_hint_reset(bw__curl_hint_t *h) {
  h->has_ra = h->has_push = false;
  h->ra_ms = h->push_ms = BW_RETRY_AFTER_NONE;
}

/* One header line as libcurl's header callback hands it over. */
static inline void bw__curl_hint_line(bw__curl_hint_t *h, const char *line,
                                      size_t n, const bw_clock_t *wall) {
  const char *v;
  size_t vlen;
  if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
    /* A new response (after a 100 Continue, say): its own hints only. */
    bw__curl_hint_reset(h);
  } else if (bw_http_header_value(line, n, "retry-after", &v, &vlen)) {
    int64_t unix_ms = bw_clock_now(wall) / BW_NS_PER_MS;
    h->has_ra = bw_retry_after_parse(v, vlen, unix_ms, &h->ra_ms) == BW_OK;
  } else if (bw_http_header_value(line, n, "grpc-retry-pushback-ms", &v,
                                  &vlen)) {
    /* An unparseable pushback means "do not retry" (gRFC A6): the parser
     * says NEVER in that case too. */
    bw_grpc_pushback_parse(v, vlen, &h->push_ms);
    h->has_push = true;
  }
}

/* The hint to report: the pushback when there is one, else Retry-After for
 * a status where it means a minimum delay (429, 503). */
static inline int64_t bw__curl_hint_value(const bw__curl_hint_t *h,
                                          bw_transport_t t, int status) {
  if (h->has_push) return h->push_ms;
  if (t == BW_TRANSPORT_NONE && h->has_ra && bw_http_has_retry_hint(status))
    return h->ra_ms;
  return BW_RETRY_AFTER_NONE;
}

static inline struct curl_slist *bw__curl_append(struct curl_slist *list,
                                                 const char *s, bool *ok) {
  struct curl_slist *n;
  if (!*ok) return list;
  n = curl_slist_append(list, s);
  if (n == NULL) {
    *ok = false;
    return list;
  }
  return n;
}

/* W3C Trace Context for one attempt (trace.h): under the caller's trace, a
 * traceparent with the same trace-id and flags and a new parent-id (every
 * attempt is a span of its own, drawn from rng; NULL: the thread's
 * generator), and the tracestate unchanged. Appends nothing when trace is
 * NULL or invalid. *ok turns false when a line could not be allocated. */
static inline struct curl_slist *bw__curl_trace_headers(struct curl_slist *list,
                                                        const bw_trace_t *trace,
                                                        bw_rand_t *rng,
                                                        bool *ok) {
  bw_trace_t span;
  char line[BW_TRACESTATE_MAX + 16];
  if (!bw_trace_is_valid(trace) || bw_trace_child(trace, rng, &span) != BW_OK)
    return list;
  memcpy(line, "traceparent: ", 13);
  bw_traceparent_format(&span, line + 13, sizeof(line) - 13);
  list = bw__curl_append(list, line, ok);
  if (span.tracestate[0] != '\0') {
    snprintf(line, sizeof(line), "tracestate: %s", span.tracestate);
    list = bw__curl_append(list, line, ok);
  }
  return list;
}

/* An attempt's request headers: the caller's, then X-Timeout-Budget (when
 * the call has a deadline, read at now_ns), Idempotency-Key (when key is
 * not ""), an empty Expect (no 100-continue round trip), and the attempt's
 * own span under `trace` (bw__curl_trace_headers; NULL: none). Every
 * attempt, and every hedged copy of one, builds its headers here. *ok
 * turns false when a line could not be allocated. */
static inline struct curl_slist *bw__curl_attempt_headers(
    const struct curl_slist *user, bw_deadline_t d, int64_t now_ns,
    const char *key, const bw_trace_t *trace, bw_rand_t *rng, bool *ok) {
  struct curl_slist *list = NULL;
  char line[96], budget[BW_DEADLINE_HEADER_MAX];
  const struct curl_slist *it;
  for (it = user; it != NULL; it = it->next)
    list = bw__curl_append(list, it->data, ok);
  if (!bw_deadline_is_none(d) &&
      bw_deadline_header_format(bw_deadline_remaining_ms(d, now_ns), budget,
                                sizeof(budget)) >= 0) {
    snprintf(line, sizeof(line), "X-Timeout-Budget: %s", budget);
    list = bw__curl_append(list, line, ok);
  }
  if (key[0] != '\0') {
    snprintf(line, sizeof(line), "Idempotency-Key: %s", key);
    list = bw__curl_append(list, line, ok);
  }
  list = bw__curl_append(list, "Expect:", ok);
  return bw__curl_trace_headers(list, trace, rng, ok);
}

#endif

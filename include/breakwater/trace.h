/* breakwater — W3C Trace Context (https://www.w3.org/TR/trace-context/):
 * the `traceparent` and `tracestate` headers, and a trace context in the
 * caller's context, so that a call keeps its trace across services and a
 * breaker's opening can be found in a trace (events carry `trace_id`).
 *
 *   traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
 *                ^^ ^ trace-id (16 bytes)             ^ parent-id (8)   ^ flags
 *
 * Inbound, read both headers (bw_trace_from_headers, or bw_ev_http_trace for
 * an evhttp request) and make the result this thread's current trace
 * (bw_trace_set, save and restore around the request, like bw_context_set).
 * Outbound, the curl drivers send, on every attempt, a `traceparent` with the
 * same trace-id and flags and a new parent-id (the attempt is a new span:
 * bw_trace_child), and the `tracestate` unchanged. Events emitted while a
 * trace is current carry its trace-id under "trace_id" (docs/events.md).
 *
 * Parsing is strict, because the header comes from outside: version 00 is
 * exactly 55 bytes of lowercase hex and dashes (surrounding spaces and tabs
 * allowed), ids not all zero; version ff is refused; a later version
 * (01..fe) is read by its first 55 bytes when what follows is empty or
 * starts with '-' (the spec's forward compatibility) and is sent on as
 * version 00. Everything here is pure (apart from the per-thread current
 * trace and the per-thread generator of bw_trace_child with a NULL rng),
 * never allocates, and is thread-safe. */
#ifndef BREAKWATER_TRACE_H
#define BREAKWATER_TRACE_H

#include "common.h"
#include "rand.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The length of a version-00 traceparent value. */
#define BW_TRACEPARENT_LEN 55
/* The longest tracestate kept (the spec's limit), without the NUL. */
#define BW_TRACESTATE_MAX 512
/* trace-flags bit 0: the caller may have recorded the trace. */
#define BW_TRACE_SAMPLED 0x01u

typedef struct bw_trace_s {
  uint8_t trace_id[16]; /* never all zero in a valid context */
  uint8_t parent_id[8]; /* the caller's span; never all zero */
  uint8_t flags;        /* trace-flags (BW_TRACE_SAMPLED) */
  char tracestate[BW_TRACESTATE_MAX + 1]; /* "" when none */
} bw_trace_t;

/* True when t has a non-zero trace-id and parent-id. False for NULL. */
BW_EXTERN bool bw_trace_is_valid(const bw_trace_t *t);

/* Parses a traceparent value (len bytes, need not be NUL-terminated) into
 * out's trace_id, parent_id and flags; out->tracestate becomes "". BW_OK;
 * BW_E_INVAL (out untouched) for anything the spec refuses: another length,
 * upper-case or non-hex digits, a missing dash, version ff, an all-zero
 * trace-id or parent-id, bytes after a version-00 value, NULL arguments. */
BW_EXTERN int bw_traceparent_parse(const char *value, size_t len,
                                   bw_trace_t *out);

/* Writes t as a version-00 traceparent (55 characters and a NUL) into buf.
 * Returns 55; BW_E_INVAL for a NULL or invalid t or a NULL buf; BW_E_RANGE
 * when size < 56. On error buf is "" when size > 0. */
BW_EXTERN int bw_traceparent_format(const bw_trace_t *t, char *buf,
                                    size_t size);

/* BW_OK when value (len bytes) is a valid tracestate: at most 512 bytes, at
 * most 32 comma-separated list members, each `key=value` (or empty) with
 * optional spaces and tabs around it; key a simple key (a lowercase letter,
 * then up to 255 of a-z 0-9 _ - * /) or tenant@system (a lowercase letter or
 * digit then up to 240 of those, '@', a lowercase letter then up to 13);
 * value 1 to 256 printable ASCII characters other than ',' and '=', not
 * ending with a space; no key twice. Else BW_E_INVAL (NULL value with a
 * non-zero len too). An empty value (len 0) is valid: no state. */
BW_EXTERN int bw_tracestate_check(const char *value, size_t len);

/* The trace context of an inbound request, from its headers' values (NULL:
 * the header is absent). BW_OK: a valid traceparent, out filled, with the
 * tracestate copied when it is valid (an invalid one is dropped: "", as the
 * spec says); BW_E_NOTFOUND: no traceparent (out untouched); BW_E_INVAL: a
 * malformed traceparent (out untouched, the tracestate is not read), or a
 * NULL out. */
BW_EXTERN int bw_trace_from_headers(const char *traceparent, size_t tp_len,
                                    const char *tracestate, size_t ts_len,
                                    bw_trace_t *out);

/* A new trace (a new request with none): random non-zero trace-id and
 * parent-id from rng (NULL: this thread's generator, seeded from the OS),
 * the given flags, no tracestate. BW_E_INVAL for a NULL out. */
BW_EXTERN int bw_trace_start(bw_rand_t *rng, uint8_t flags, bw_trace_t *out);

/* The context to send on an outgoing call made under `parent`: the same
 * trace-id, flags and tracestate, and a new random non-zero parent-id
 * (different from parent's) from rng (NULL: this thread's generator). child
 * may be parent. BW_E_INVAL for NULL arguments or an invalid parent. */
BW_EXTERN int bw_trace_child(const bw_trace_t *parent, bw_rand_t *rng,
                             bw_trace_t *child);

/* The trace-id as 32 lowercase hex characters and a NUL. Returns 32;
 * BW_E_INVAL for a NULL t or buf, BW_E_RANGE when size < 33 (buf "" when
 * size > 0). */
BW_EXTERN int bw_trace_id_hex(const bw_trace_t *t, char *buf, size_t size);

/* Sets this thread's current trace (NULL clears it) and returns the previous
 * one, to be restored when the request ends. The pointed-to context must
 * stay valid while it is current; an invalid one (all-zero ids) counts as
 * none for the drivers and events. A new thread starts with none. */
BW_EXTERN const bw_trace_t *bw_trace_set(const bw_trace_t *t);
/* This thread's current trace, or NULL. */
BW_EXTERN const bw_trace_t *bw_trace_current(void);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_TRACE_H */

/* breakwater — HTTP semantics with no dependencies: what a status code or a
 * transport error means for a retry (its verdict), Retry-After, and gRPC's
 * retry pushback. Parsers are strict: bad input is an error, never a guess. */
#ifndef BREAKWATER_HTTP_H
#define BREAKWATER_HTTP_H

#include "common.h"
#include "retry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_transport_e {
  BW_TRANSPORT_NONE = 0, /* a response arrived: judge the status */
  BW_TRANSPORT_TIMEOUT,  /* no answer in time (the request may have run) */
  BW_TRANSPORT_REFUSED,  /* connection refused: never reached the server */
  BW_TRANSPORT_DNS,      /* name did not resolve: never reached the server */
  BW_TRANSPORT_RESET,    /* connection reset/closed after sending */
  BW_TRANSPORT_TLS,      /* TLS handshake failed: never reached the app */
  BW_TRANSPORT_OTHER     /* anything else: treated as TRANSIENT */
} bw_transport_t;

/* The verdict for one attempt (the tenacity article: never retry a 4xx; the
 * Polly lab's naive code retried a 429 at once, the opposite of what the
 * partner asked): transport REFUSED, DNS, TLS          -> BW_VERDICT_NOT_SENT
 *   transport TIMEOUT, RESET, OTHER      -> BW_VERDICT_TRANSIENT
 *   2xx                                   -> BW_VERDICT_OK
 *   408, 429, 500, 502, 503, 504         -> BW_VERDICT_TRANSIENT
 *   other 5xx except 501 and 505         -> BW_VERDICT_TRANSIENT
 *   501, 505, other 4xx, 1xx, 3xx        -> BW_VERDICT_PERMANENT
 *   status outside 100..599              -> BW_VERDICT_PERMANENT
 * With a transport error the status is not read. A transport value outside
 * the enum (a caller's bug) is BW_VERDICT_PERMANENT: garbage must not cause
 * retries. Pure; thread-safe. */
BW_EXTERN bw_verdict_t bw_http_classify(int status, bw_transport_t transport);

/* Should a response's Retry-After be read? True for 429 and 503 (where the
 * hint is the minimum delay), and for 3xx per RFC 9110 (ignored by retry).
 * Pure; thread-safe. */
BW_EXTERN bool bw_http_has_retry_hint(int status);

/* Parses a Retry-After value (len bytes, need not be NUL-terminated), RFC
 * 9110 §10.2.3: either delta-seconds (1*DIGIT) or an HTTP-date in any of the
 * three forms recipients must accept (§5.6.7):
 *   IMF-fixdate  "Sun, 06 Nov 1994 08:49:37 GMT"
 *   RFC 850      "Sunday, 06-Nov-94 08:49:37 GMT"  (obsolete)
 *   asctime      "Sun Nov  6 08:49:37 1994"        (obsolete; a one-digit
 *                day is preceded by two spaces, or written "06")
 * now_unix_ms is the current wall-clock time. On BW_OK *delay_ms is >= 0: a
 * date in the past gives 0 (retry now is allowed); a date's delay is exact to
 * the millisecond of now and saturates at INT64_MAX instead of overflowing.
 * The grammar is followed to the letter: names and "GMT" are case-sensitive,
 * no zone other than GMT, single spaces where the grammar has SP, the
 * weekday must be the one the date falls on (RFC 5322 §3.3), hours 00..23,
 * minutes 00..59, seconds 00..59 or the leap second 23:59:60 (read as the
 * next day's 00:00:00). An RFC 850 two-digit year more than 50 years in the
 * future (compared with now_unix_ms) is in the previous century.
 * BW_E_INVAL: empty, garbage, a sign, a fraction, an impossible date, over
 * 64 bytes (surrounding whitespace included), a NULL value (even with len
 * 0), a NULL delay_ms. BW_E_RANGE: delta-seconds above 10^9 (about 31 years) or
 * a date past year 9999 (a year of more than four digits, or an RFC 850 year
 * that resolves outside 0..9999). Surrounding spaces and tabs are allowed. On
 * any error *delay_ms (if not NULL) is BW_RETRY_AFTER_NONE: the response
 * carried no usable hint, which bw_retry_next takes as it is. Never allocates;
 * reads no locale; thread-safe. */
BW_EXTERN int bw_retry_after_parse(const char *value, size_t len,
                                   int64_t now_unix_ms, int64_t *delay_ms);

/* Parses a grpc-retry-pushback-ms value (gRFC A6): a decimal integer of
 * milliseconds, optionally with surrounding spaces/tabs and a leading '-'
 * ('+' is refused). BW_OK with *delay_ms >= 0: retry no sooner. A negative
 * value means "do not retry": BW_OK with *delay_ms = BW_RETRY_AFTER_NEVER,
 * whatever its magnitude ("-0" is zero, not negative). Garbage, over 64
 * bytes or a NULL value: BW_E_INVAL; above 10^12 ms (10^9 s, the
 * Retry-After bound): BW_E_RANGE; in both cases *delay_ms =
 * BW_RETRY_AFTER_NEVER too — gRPC says an unparseable pushback also means no
 * retry. BW_E_INVAL for NULL delay_ms. Never allocates; thread-safe. */
BW_EXTERN int bw_grpc_pushback_parse(const char *value, size_t len,
                                     int64_t *delay_ms);

/* Whether one header line, as an HTTP/1 client library hands it over
 * ("Name: value\r\n", `len` bytes, not NUL-terminated; libcurl's header
 * callback), is the header `name`: the name matched case-insensitively
 * (RFC 9110 §5.1) and followed directly by ':' (no whitespace before the
 * colon: RFC 9112 §5.1 makes that a malformed line, so it is not a match).
 * On a match, *value and *vlen are the field value without its leading
 * spaces and tabs and its trailing spaces, tabs, CRs and LFs (possibly
 * empty; *value points into line). false, and *value / *vlen untouched, for any
 * other line, including NULL line, NULL or empty name, NULL value or vlen.
 * Reads exactly len bytes of line; never allocates; thread-safe. The curl
 * driver reads Retry-After and grpc-retry-pushback-ms with it. */
BW_EXTERN bool bw_http_header_value(const char *line, size_t len,
                                    const char *name, const char **value,
                                    size_t *vlen);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_HTTP_H */

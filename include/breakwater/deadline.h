/* breakwater — deadlines: the time a whole request may still take, carried
 * down the call chain and between services (the asyncio toolkit's timeout
 * budget).
 *
 * A deadline is a value type: an absolute reading of some clock, or "none".
 * Each thread has a current deadline with save/restore (the asyncio toolkit's
 * contextvar), so code deep in a call chain can ask how much time is left
 * without a parameter. Between services it travels as the X-Timeout-Budget
 * header: the remaining time in decimal seconds ("2.5").
 *
 * Every function here is pure (apart from the per-thread current deadline),
 * thread-safe, never allocates, and is defined for every int64 input: sums
 * saturate instead of overflowing. A deadline is only meaningful with the
 * clock it was read from; never mix clocks. */
#ifndef BREAKWATER_DEADLINE_H
#define BREAKWATER_DEADLINE_H

#include "clock.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_deadline_s {
  int64_t at_ns; /* absolute clock reading; BW_DEADLINE_NONE_NS = none */
} bw_deadline_t;

#define BW_DEADLINE_NONE_NS INT64_MAX

/* No deadline. */
BW_EXTERN bw_deadline_t bw_deadline_none(void);
/* A deadline `ms` from `now_ns` (ms < 0 counts as 0: already expired at
 * now_ns). Always a deadline, never none: a sum past the end of the int64
 * range saturates at BW_DEADLINE_NONE_NS - 1. */
BW_EXTERN bw_deadline_t bw_deadline_in(int64_t now_ns, int64_t ms);
/* True if d is "none". */
BW_EXTERN bool bw_deadline_is_none(bw_deadline_t d);
/* The earlier of two deadlines (a callee's deadline never extends its
 * caller's). */
BW_EXTERN bw_deadline_t bw_deadline_min(bw_deadline_t a, bw_deadline_t b);
/* Milliseconds left at now_ns, rounded down, never negative; INT64_MAX for
 * none. */
BW_EXTERN int64_t bw_deadline_remaining_ms(bw_deadline_t d, int64_t now_ns);
/* True once now_ns >= the deadline. Never for none. */
BW_EXTERN bool bw_deadline_expired(bw_deadline_t d, int64_t now_ns);
/* BW_OK if at least min_remaining_ms are left at now_ns, else BW_E_DEADLINE
 * (the asyncio toolkit refuses to call a downstream agent with less than 1 s
 * left: min_remaining_ms = 1000, exactly 1000 ms left passes). An expired
 * deadline always fails, even with min_remaining_ms 0; none always passes.
 * BW_E_INVAL for a negative min_remaining_ms. */
BW_EXTERN int bw_deadline_check(bw_deadline_t d, int64_t now_ns,
                                int64_t min_remaining_ms);
/* min(timeout_ms, remaining): the timeout to give one attempt, a bulkhead
 * wait, an HTTP call (the asyncio toolkit: min(bulkhead timeout, budget)).
 * timeout_ms
 * <= 0 means "no timeout of its own": the remaining time (INT64_MAX for
 * none). A result of 0 means no time is left: do not start the call. */
BW_EXTERN int64_t bw_deadline_timeout_ms(bw_deadline_t d, int64_t now_ns,
                                         int64_t timeout_ms);

/* This thread's current deadline (none until set). A new thread starts with
 * none: deadlines do not cross threads by themselves (pass the value). */
BW_EXTERN bw_deadline_t bw_deadline_current(void);
/* Sets this thread's current deadline and returns the previous one, to be
 * restored when the request ends:
 *   bw_deadline_t prev = bw_deadline_set(bw_deadline_min(
 *       bw_deadline_current(), bw_deadline_in(now_ns, 2500)));
 *   ... handle the request ...
 *   bw_deadline_set(prev); */
BW_EXTERN bw_deadline_t bw_deadline_set(bw_deadline_t d);

/* X-Timeout-Budget: the remaining time as decimal seconds with up to three
 * decimals and no trailing zeros ("2.5", "0.001", "30"; 0 -> "0"). Writes
 * into buf (NUL-terminated); returns the length (without the NUL). Errors:
 * BW_E_INVAL for a NULL buf, a negative remaining_ms or remaining_ms ==
 * INT64_MAX (no deadline: send no header); BW_E_RANGE for remaining_ms above
 * 10^12 (10^9 s, which the parser would refuse) or if buf is too small
 * (BW_DEADLINE_HEADER_MAX bytes always suffice). On error buf is "" when
 * size > 0. Locale-independent. */
#define BW_DEADLINE_HEADER_MAX 32
BW_EXTERN int bw_deadline_header_format(int64_t remaining_ms, char *buf,
                                        size_t size);
/* Parses an X-Timeout-Budget value (len bytes, need not be NUL-terminated):
 * optional surrounding spaces/tabs, one or more digits, optionally '.' and
 * one or more digits (rounded down to ms): "2.5", "0.0015" (1 ms), " 10.0 ",
 * and Python's str(float) such as "29.87654321098765" (29876 ms).
 * At most BW_DEADLINE_HEADER_MAX bytes, surrounding whitespace included.
 * Refuses (with BW_E_INVAL) empty, signs, exponents, hex, inf/nan, a leading
 * or trailing dot (".5", "1."), several dots, a comma, trailing garbage,
 * over-long input, NULL arguments; BW_E_RANGE for values above 1e9 seconds.
 * On success *remaining_ms is set; on error it is left untouched. Anything
 * bw_deadline_header_format writes parses back to the same milliseconds. */
BW_EXTERN int bw_deadline_header_parse(const char *value, size_t len,
                                       int64_t *remaining_ms);

/* The inbound side. The asyncio toolkit gives a request without a budget
 * header 10 s, and refuses to call a downstream agent with less than 1 s
 * left: before each downstream call,
 *   bw_deadline_check(d, now_ns, BW_DEADLINE_MIN_CALL_MS) != BW_OK -> refuse
 * (exactly 1000 ms left passes). */
#define BW_DEADLINE_DEFAULT_MS 10000
#define BW_DEADLINE_MIN_CALL_MS 1000
/* The reference toolkit's whole-request budget: its budget context variable
 * starts at 30 s, so a request that starts the chain (no inbound header,
 * nothing narrower) gets 30 s:
 *   bw_deadline_t d = bw_deadline_in(now_ns, BW_DEADLINE_DEFAULT_BUDGET_MS);
 * or as bw_deadline_from_header's default_ms at the edge of the system. */
#define BW_DEADLINE_DEFAULT_BUDGET_MS 30000

/* Parses a grpc-timeout value (gRPC over HTTP/2): TimeoutValue, 1 to 8
 * ASCII digits, then TimeoutUnit, one of H (hours), M (minutes), S
 * (seconds), m (milliseconds), u (microseconds), n (nanoseconds): "100m",
 * "5S", "1H". Microseconds and nanoseconds are rounded down to whole
 * milliseconds ("999u" is 0). Surrounding spaces and tabs are allowed; at
 * most BW_DEADLINE_HEADER_MAX bytes. BW_E_INVAL for anything else (empty, a
 * sign, more than 8 digits, a missing, unknown or lower-case-for-upper unit,
 * trailing bytes, NULL arguments). On success *ms (0 .. 99999999 hours in
 * ms) is set; on error it is left untouched. Never allocates; thread-safe. */
BW_EXTERN int bw_grpc_timeout_parse(const char *value, size_t len, int64_t *ms);

/* The deadline of an inbound request, at now_ns, from its headers' values
 * (NULL: the header is absent; need not be NUL-terminated): X-Timeout-Budget
 * (bw_deadline_header_parse) and grpc-timeout (bw_grpc_timeout_parse). When
 * both are valid the earlier deadline wins. When neither header is present
 * or valid, *out is default_ms from now_ns (BW_DEADLINE_DEFAULT_MS is the
 * asyncio toolkit's 10 s; a negative default_ms means no deadline). Returns
 * BW_OK when a header set the deadline, BW_E_NOTFOUND when neither header
 * was there, BW_E_INVAL when one was there but malformed (a malformed value
 * is never trusted; the default applies), or for a NULL out (nothing set).
 * Narrow, never widen, the thread's deadline with it:
 *   bw_deadline_t prev = bw_deadline_set(bw_deadline_min(
 *       bw_deadline_current(), d)); ... bw_deadline_set(prev); */
BW_EXTERN int bw_deadline_from_header(const char *budget, size_t budget_len,
                                      const char *grpc_timeout, size_t grpc_len,
                                      int64_t now_ns, int64_t default_ms,
                                      bw_deadline_t *out);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_DEADLINE_H */

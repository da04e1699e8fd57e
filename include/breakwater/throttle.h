/* breakwater — client-side adaptive throttling (Google SRE book, "Handling
 * Overload": each client refuses locally a share of its own requests when
 * the partner has been rejecting them).
 *
 * Over a sliding window the throttle counts
 *   requests: every request whose fate is known: refused here (counted at
 *             once), or answered or timed out (counted when it ends),
 *   accepts:  the requests the partner accepted (answered them, even with a
 *             4xx: it did the work),
 * and refuses a new request, before it goes out, with probability
 *   p = max(0, (requests - K * accepts) / (requests + 1)).
 * While the partner accepts everything p is 0 (requests <= accepts <= K *
 * accepts). When it sheds (a fast 429 or 503, or no answer in time), accepts
 * stop growing and p rises towards 1 - K * accepts / requests: the client
 * sends about K times what the partner accepted and refuses the rest itself,
 * instead of spending a network call (and the partner's work to reject it)
 * on each. K = 2 (the book's choice) still lets twice the accepted traffic
 * out, so the throttle notices within a window when the partner recovers.
 * Lower K throttles sooner and harder; higher K wastes more calls.
 *
 * It fits partners whose overload answer is fast (a rejection costs them
 * little but not nothing); against a partner that answers overload slowly
 * an adaptive concurrency limit (limiter.h) sees more (docs/throttle.md has
 * the lab's figures).
 *
 * As a strategy (strategy.h) it joins a pipeline with
 *   bw_pipeline_add_strategy(&pc, bw_throttle_strategy(t), 0);
 * enter refuses with probability p (the call ends with BW_FAILURE_LIMIT,
 * at once: a local refusal is not waited out) and counts the refusal as a
 * request; leave counts the request, and an accept on SUCCESS and on
 * IGNORED when an attempt went out after the throttle admitted the call (a
 * 4xx answer); FAILURE and TIMED_OUT (a 5xx, a 429, a timeout) are the
 * partner's rejections. An IGNORED with no attempt out since enter (a
 * strategy further in refused, the call was cancelled) is withdrawn: the
 * partner never saw it, and the window does not count it; so is a call
 * cancelled with its attempt out, whose answer nobody knows. Calls in flight
 * count nowhere yet (the book counts requests as they are sent; in its
 * steady state that differs only by the calls in flight, but a burst from
 * cold would read its own unanswered requests as rejections). Inside the
 * retry, each attempt is a request; outside, each call.
 *
 * Every function is thread-safe (one mutex per throttle: clarity first; the
 * critical section sums the window's buckets), allocation-free after
 * bw_throttle_new, and deterministic for a seed and a sequence of calls and
 * clock readings. */
#ifndef BREAKWATER_THROTTLE_H
#define BREAKWATER_THROTTLE_H

#include "clock.h"
#include "common.h"
#include "event.h"
#include "strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_throttle_config_s {
  const char *name;  /* copied; default "throttle"; 1..BW_NAME_MAX bytes */
  double k;          /* the multiplier K; default 2.0, in [1, 10] */
  int64_t window_ms; /* default 60000, in [10, 86400000]. The SRE book uses
                        two minutes; a minute reacts sooner to a recovery */
  uint32_t buckets;  /* the window's buckets; default 60, in [1, 1000], and
                        window_ms * 1e6 a multiple of it. An event counts
                        until the end of the buckets-th bucket from its own,
                        i.e. for between (buckets - 1) / buckets and 1
                        window_ms */
  uint64_t seed;     /* the refusal draws (bw_rand_t); default 0: a seed from
                        the operating system. Any other value makes the
                        refusals reproducible */
  const bw_clock_t *clock;      /* default NULL: the monotonic clock; a clock
                                   given must have now_ns and must outlive the
                                   throttle. A pipeline's strategies and the
                                   pipeline's driver must share it */
  const bw_clock_t *wall_clock; /* event timestamps; default NULL: realtime */
  bw_sink_t *sink; /* throttle_refused summaries (docs/events.md): the
                      refusals since the last one, at most one a second, and
                      the last at bw_throttle_free; default NULL (none). The
                      clock, wall clock and sink must outlive the throttle:
                      its free flushes the last summary through them */
} bw_throttle_config_t;

typedef struct bw_throttle_s bw_throttle_t;

typedef struct bw_throttle_stats_s {
  /* Since creation. requests = accepts + rejected + throttled + withdrawn
   * + the requests admitted and not yet left. */
  uint64_t requests;  /* enters (admitted or refused) */
  uint64_t accepts;   /* left SUCCESS, or IGNORED after an attempt */
  uint64_t rejected;  /* left FAILURE or TIMED_OUT: the partner shed it */
  uint64_t throttled; /* refused here */
  uint64_t withdrawn; /* left IGNORED with no attempt out, or cancelled */
  /* In the window now. */
  uint64_t window_requests;
  uint64_t window_accepts;
  double probability; /* the refusal probability now (bw_throttle_probability)
                       */
} bw_throttle_stats_t;

/* Fills the documented defaults. NULL is ignored. */
BW_EXTERN void bw_throttle_config_init(bw_throttle_config_t *cfg);
/* Checks a configuration: BW_OK, or BW_E_INVAL with err (may be NULL)
 * naming the field and the rule. */
BW_EXTERN int bw_throttle_config_validate(const bw_throttle_config_t *cfg,
                                          bw_error_t *err);
/* Creates a throttle with an empty window. NULL with err naming the field
 * (BW_E_INVAL), or BW_E_NOMEM. */
BW_EXTERN bw_throttle_t *bw_throttle_new(const bw_throttle_config_t *cfg,
                                         bw_error_t *err);
/* Frees a throttle (NULL is fine). No call may be in flight through it. */
BW_EXTERN void bw_throttle_free(bw_throttle_t *t);
/* The refusal probability at the throttle's clock now:
 * max(0, (requests - K * accepts) / (requests + 1)) over the window. NULL:
 * 0. */
BW_EXTERN double bw_throttle_probability(const bw_throttle_t *t);
/* A snapshot taken under the throttle's lock. NULL t fills zeros; NULL out
 * is ignored. */
BW_EXTERN void bw_throttle_stats(const bw_throttle_t *t,
                                 bw_throttle_stats_t *out);
/* The name given at creation ("" for NULL). */
BW_EXTERN const char *bw_throttle_name(const bw_throttle_t *t);
/* Changes K live (a configuration reload): BW_OK, or BW_E_INVAL with err
 * naming "k" and the rule, as at creation ([1, 10]; NULL t: field "t");
 * nothing changes then. The window keeps its counts: the next decision
 * reads them with the new K. Thread-safe against every other call (it
 * takes the throttle's lock). */
BW_EXTERN int bw_throttle_set_k(bw_throttle_t *t, double k, bw_error_t *err);
/* Fills cfg with the throttle's configuration now (after any live change):
 * name pointing at the throttle's own, clocks resolved (never NULL), seed
 * as given (0 stays 0: the operating system's seed is not kept). NULL t or
 * cfg: nothing. */
BW_EXTERN void bw_throttle_config_of(const bw_throttle_t *t,
                                     bw_throttle_config_t *cfg);
/* The throttle as a pipeline strategy (kind "throttle", its name the
 * throttle's); it lives as long as the throttle. NULL for NULL (which
 * bw_pipeline_add_strategy refuses with BW_E_INVAL). */
BW_EXTERN bw_strategy_if_t *bw_throttle_strategy(bw_throttle_t *t);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_THROTTLE_H */

/* breakwater — retry budgets: a cap on retries shared by every call to one
 * dependency, so that retries cannot multiply load when it is failing.
 *
 * Two kinds (beyond the reference articles; anchors: gRPC retry throttling,
 * Envoy and Finagle retry budgets, the AWS SDK retry quota):
 * - TOKEN_BUCKET (gRPC): starts full with max_tokens; each failed attempt
 *   costs 1 token, each success adds token_ratio (up to max_tokens); a retry
 *   is allowed only while tokens > max_tokens / 2. Asking costs nothing: only
 *   outcomes move the tokens. Tokens are kept in thousandths (fixed point),
 *   so max_tokens and token_ratio must be whole multiples of 0.001; other
 *   values are refused, never rounded (gRPC truncates to 3 decimals).
 * - RATIO (Envoy): over a sliding window_ms, retries may be at most
 *   budget_percent of requests, but never fewer than min_retries_per_sec per
 *   second of window, so low traffic can still retry:
 *     allowance = max(min_retries_per_sec * window_ms / 1000,
 *                     budget_percent / 100 * requests in the window)
 *   and a retry is allowed while retries in the window < allowance. The
 *   window is 10 buckets of window_ms / 10 aligned to the clock: an event
 *   counts until the end of the 10th bucket from its own, i.e. for between
 *   0.9 and 1.0 window_ms.
 *
 * The retry iterator (retry.h) drives a budget: it reports each request,
 * success and failure, and asks before each retry. A denied retry gives up
 * with reason "budget". Every function is thread-safe, lock-free and
 * allocation-free after bw_budget_new. The token bucket's tokens stay within
 * [0, max_tokens] at every instant. The ratio budget grants exactly the
 * allowance of the requests it has seen, under any contention: never more
 * retries in a window, and no refusal while the window has room (a grant is
 * one CAS on the window's retry count, made only if that count leaves
 * room). A thread whose clock reading is a bucket behind another thread's
 * decision is refused. At most 2^28 - 1 retries are granted a bucket. */
#ifndef BREAKWATER_BUDGET_H
#define BREAKWATER_BUDGET_H

#include "clock.h"
#include "common.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_budget_kind_e {
  BW_BUDGET_TOKEN_BUCKET = 0,
  BW_BUDGET_RATIO = 1
} bw_budget_kind_t;

/* "token_bucket", "ratio" or "unknown". */
BW_EXTERN const char *bw_budget_kind_name(bw_budget_kind_t kind);

/* Only the fields of the chosen kind are checked (and used). */
typedef struct bw_budget_config_s {
  const char *name;             /* copied; default "budget"; 1..BW_NAME_MAX
                                   bytes */
  bw_budget_kind_t kind;        /* default TOKEN_BUCKET */
  double max_tokens;            /* token bucket; default 10, in (0, 1e6], a
                                   multiple of 0.001 */
  double token_ratio;           /* token bucket; default 0.1, in (0, max], a
                                   multiple of 0.001 */
  double budget_percent;        /* ratio; default 20, in [0, 100] */
  double min_retries_per_sec;   /* ratio; default 3, in [0, 1e9] */
  int64_t window_ms;            /* ratio; default 10000, in [10, 86400000] */
  const bw_clock_t *clock;      /* ratio window; default NULL: the coarse
                                   monotonic clock when window_ms >= 1000 (its
                                   1-4 ms ticks are noise next to buckets of
                                   100 ms or more, and it costs a few ns a read
                                   instead of ~20), the precise one otherwise;
                                   a clock given must have now_ns; with a
                                   sink, a token bucket reads it to time its
                                   summaries (default: the coarse clock) */
  const bw_clock_t *wall_clock; /* event timestamps; default NULL: realtime */
  bw_sink_t *sink; /* retries_refused summaries and budget_exhausted (the
                      first refusal after an allowed retry or creation;
                      docs/events.md); default
                      NULL (none). The clocks and sink must outlive the
                      budget: its free flushes the last summary */
} bw_budget_config_t;

typedef struct bw_budget_s bw_budget_t;

typedef struct bw_budget_stats_s {
  uint64_t requests; /* first attempts reported */
  uint64_t successes;
  uint64_t failures;
  uint64_t allowed;         /* retries allowed */
  uint64_t denied;          /* retries refused; allowed + denied = asks */
  double tokens;            /* token bucket: tokens now; ratio: 0 */
  uint64_t window_requests; /* ratio: in the current window; bucket: 0 */
  uint64_t window_retries;  /* ratio: allowed retries in the window */
} bw_budget_stats_t;

/* Changes a ratio budget's budget_percent and min_retries_per_sec live (a
 * configuration reload): BW_OK, or BW_E_INVAL with err naming the field and
 * the rule, as at creation (budget_percent in [0, 100],
 * min_retries_per_sec in [0, 1e9]), or naming kind for a token bucket
 * (whose fields are fixed at creation); nothing changes then. The window's
 * counts are kept: the new share and floor decide from the next retry on.
 * Thread-safe against every other call; a decision made during the change
 * may see the old share with the new floor or the reverse. */
BW_EXTERN int bw_budget_set_ratio(bw_budget_t *b, double budget_percent,
                                  double min_retries_per_sec, bw_error_t *err);
/* Fills cfg with the budget's configuration now (after any live change):
 * name pointing at the budget's own, wall clock resolved; a ratio budget's
 * clock resolved too. NULL b or cfg: nothing. */
BW_EXTERN void bw_budget_config_of(const bw_budget_t *b,
                                   bw_budget_config_t *cfg);

/* Fills the documented defaults. */
BW_EXTERN void bw_budget_config_init(bw_budget_config_t *cfg);
/* Checks a configuration without creating anything: BW_OK, or BW_E_INVAL
 * with err (may be NULL) naming the field and the rule. */
BW_EXTERN int bw_budget_config_validate(const bw_budget_config_t *cfg,
                                        bw_error_t *err);
/* Creates a budget (a token bucket starts full). NULL and err naming the
 * field on bad configuration (BW_E_INVAL), or BW_E_NOMEM. */
BW_EXTERN bw_budget_t *bw_budget_new(const bw_budget_config_t *cfg,
                                     bw_error_t *err);
/* A first attempt (a logical request) starts. Retries are not requests: do
 * not report them here. NULL b: no-op. */
BW_EXTERN void bw_budget_on_request(bw_budget_t *b);
/* An attempt (first or retry) succeeded / failed (a failure that may be
 * retried). NULL b: no-op. */
BW_EXTERN void bw_budget_on_success(bw_budget_t *b);
BW_EXTERN void bw_budget_on_failure(bw_budget_t *b);
/* Asks for one retry: true (and counted as a retry) or false (denied).
 * Thread-safe, lock-free; ratio: a grant is one CAS; a refusal changes no
 * count (it may still write caches: the first decision in a bucket moves
 * the retry count to it and sums the earlier buckets once, and a thread's
 * first decision in a bucket moves its own stripe there). NULL b: false. */
BW_EXTERN bool bw_budget_try_retry(bw_budget_t *b);
/* bw_budget_try_retry with a status, like every other verb: BW_OK (granted,
 * counted as a retry), BW_E_FULL (denied), BW_E_INVAL (NULL b). The bool
 * form stays; new code should prefer this one. */
BW_EXTERN int bw_budget_try_retry_ex(bw_budget_t *b);
/* A snapshot (each counter read atomically, not all at one instant). NULL b
 * fills zeros; NULL out is ignored. */
BW_EXTERN void bw_budget_stats(const bw_budget_t *b, bw_budget_stats_t *out);
/* The name given at creation ("" for NULL). */
BW_EXTERN const char *bw_budget_name(const bw_budget_t *b);
/* Frees a budget (NULL is fine). No call may be in flight on it. */
BW_EXTERN void bw_budget_free(bw_budget_t *b);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_BUDGET_H */

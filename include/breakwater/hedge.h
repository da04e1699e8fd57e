/* breakwater — hedging (Polly's hedging strategy, gRPC's hedging policy):
 * when an attempt has not answered after a delay, send another copy of it,
 * take the first good answer and cancel the others. It trades a few extra
 * calls for a shorter tail: against a dependency whose slow answers are
 * rare and independent of the request, a hedge sent at the p95 of recent
 * latencies turns most of the slowest 5 % into a p95 plus a fast answer.
 *
 * The policy decides; a driver waits and sends (the curl multi driver, the
 * simulator). Per logical call a value-type iterator, bw_hedge_call_t:
 *
 *   bw_hedge_call_t hc;
 *   int64_t in_ms;
 *   if (bw_hedge_begin(hedge, &hc, idempotent, now_ns, &in_ms) == BW_HEDGE_ARM)
 *     arm_timer(in_ms);                       // the first attempt is sent
 *   on_timer:                                  // and no good answer yet
 *     if (bw_hedge_fire(&hc, now_ns, &in_ms) == BW_HEDGE_SEND) {
 *       send_another_copy();
 *       if (in_ms >= 0) arm_timer(in_ms);      // more hedges allowed
 *     }
 *   on_good_answer:                            // the first one wins
 *     bw_hedge_record(hedge, now - that_copy_sent_ns);  // the p95 tracker
 *     cancel the other copies and the timer;
 *
 * Rules, in the order bw_hedge_fire applies them:
 * 1. only idempotent requests are hedged, unless the configuration says
 *    non_idempotent (then the driver must send an Idempotency-Key, the same
 *    on every copy): a non-idempotent call is begun with BW_HEDGE_NONE;
 * 2. at most max_hedges extra copies per call (gRPC's maxAttempts - 1);
 * 3. each copy is an extra call: it asks the budget (budget.h,
 *    bw_budget_try_retry: counted as a retry), and a refusal ends hedging
 *    for that call (reason budget). Share the retry's budget, so that
 *    retries and hedges together stay within one cap.
 * Hedge n (n >= 1) is due at begin + n x the delay fixed at begin.
 *
 * The delay: FIXED (delay_ms), or QUANTILE: the `quantile` (default 0.95) of
 * the last `window` latencies given to bw_hedge_record (nearest rank),
 * clamped to [min_delay_ms, max_delay_ms]; while fewer than min_samples
 * were recorded, delay_ms. Record the winning answer's own latency (from
 * the send of the copy that won to its answer): the dependency's latency,
 * not the caller's. A caller's latency includes the hedge delay, and a
 * tracker fed with it chases its own delay upward whenever the slow share
 * is near 1 - quantile.
 *
 * A hedge policy is thread-safe (the tracker takes a mutex; the quantile is
 * recomputed at most once per record); an iterator belongs to one call and
 * one thread at a time. Nothing here sleeps, reads a clock or does I/O. */
#ifndef BREAKWATER_HEDGE_H
#define BREAKWATER_HEDGE_H

#include "budget.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_hedge_delay_e {
  BW_HEDGE_FIXED = 0,   /* delay_ms, always */
  BW_HEDGE_QUANTILE = 1 /* the quantile of recent latencies */
} bw_hedge_delay_t;

/* "fixed", "quantile" or "unknown". */
BW_EXTERN const char *bw_hedge_delay_name(bw_hedge_delay_t d);

#define BW_HEDGE_MAX_HEDGES 4u
#define BW_HEDGE_MAX_WINDOW 4096u

typedef struct bw_hedge_config_s {
  const char *name;       /* copied; default "hedge"; 1..BW_NAME_MAX bytes */
  bw_hedge_delay_t delay; /* default QUANTILE */
  int64_t delay_ms;       /* FIXED: the delay; QUANTILE: the delay until
                             min_samples are recorded; default 200, >= 1 */
  double quantile;        /* QUANTILE: default 0.95, in (0, 1) */
  uint32_t window;        /* QUANTILE: latencies kept; default 200,
                             1..BW_HEDGE_MAX_WINDOW */
  uint32_t min_samples;   /* QUANTILE: default 20, 1..window */
  int64_t min_delay_ms;   /* QUANTILE: the delay's floor; default 1, >= 1 */
  int64_t max_delay_ms;   /* QUANTILE: its ceiling; default 10000,
                             >= min_delay_ms */
  uint32_t max_hedges;    /* extra copies per call; default 1,
                             1..BW_HEDGE_MAX_HEDGES */
  bool non_idempotent;    /* default false: non-idempotent calls are not
                             hedged; true: they are (send an
                             Idempotency-Key) */
  bw_budget_t *budget;    /* optional, borrowed: every hedge asks it */
  bool budget_requests;   /* default false: the budget is a retry's, which
                             reports each logical request; true: the
                             budget is the hedge's own and bw_hedge_begin
                             reports the request (bw_budget_on_request) */
} bw_hedge_config_t;

typedef struct bw_hedge_s bw_hedge_t;

/* Counters since creation (each read atomically). */
typedef struct bw_hedge_stats_s {
  uint64_t calls;          /* bw_hedge_begin calls */
  uint64_t armed;          /* calls that may hedge (BW_HEDGE_ARM) */
  uint64_t not_idempotent; /* calls not hedged: not idempotent */
  uint64_t hedges;         /* extra copies allowed (BW_HEDGE_SEND) */
  uint64_t denied;         /* hedges the budget refused */
  uint64_t samples;        /* latencies recorded */
  int64_t delay_ms;        /* the delay a call begun now would get */
} bw_hedge_stats_t;

/* Fills the documented defaults. NULL is ignored. */
BW_EXTERN void bw_hedge_config_init(bw_hedge_config_t *cfg);
/* BW_OK, or BW_E_INVAL with err naming the field and the rule. */
BW_EXTERN int bw_hedge_config_validate(const bw_hedge_config_t *cfg,
                                       bw_error_t *err);
/* NULL with err set on a bad configuration (BW_E_INVAL) or BW_E_NOMEM. */
BW_EXTERN bw_hedge_t *bw_hedge_new(const bw_hedge_config_t *cfg,
                                   bw_error_t *err);
/* NULL is fine. No call may still use it. */
BW_EXTERN void bw_hedge_free(bw_hedge_t *h);
/* The name given at creation ("" for NULL). */
BW_EXTERN const char *bw_hedge_name(const bw_hedge_t *h);

/* The iterator: treat the fields as private. */
typedef struct bw_hedge_call_s {
  bw_hedge_t *h;
  int64_t start_ns;
  int64_t delay_ms; /* fixed at begin */
  uint32_t hedges;  /* copies sent after the first */
  bool armed;       /* may still hedge */
  bool denied;      /* the budget refused a hedge */
} bw_hedge_call_t;

/* bw_hedge_begin's and bw_hedge_fire's answers. */
#define BW_HEDGE_NONE 0 /* no (more) hedging for this call */
#define BW_HEDGE_ARM 1  /* begin: arm a timer for *in_ms */
#define BW_HEDGE_SEND 2 /* fire: send one more copy now */

/* A call's first attempt is sent at now_ns. BW_HEDGE_ARM with *in_ms the
 * delay until the first hedge, or BW_HEDGE_NONE (*in_ms = -1) when the call
 * is not idempotent (and the policy does not hedge those). With
 * budget_requests, reports the request to the budget. BW_E_INVAL for NULL
 * h, c or in_ms (c untouched). */
BW_EXTERN int bw_hedge_begin(bw_hedge_t *h, bw_hedge_call_t *c, bool idempotent,
                             int64_t now_ns, int64_t *in_ms);
/* The hedge timer fired at now_ns with no good answer yet. BW_HEDGE_SEND:
 * send one more copy now; *in_ms is the time until the next hedge (>= 0),
 * or -1 when this was the last one allowed. BW_HEDGE_NONE (*in_ms = -1):
 * send nothing — max_hedges reached, the budget refused (bw_hedge_denied
 * tells), or the call was never armed. BW_E_INVAL for NULL c or in_ms, or
 * an iterator never begun. */
BW_EXTERN int bw_hedge_fire(bw_hedge_call_t *c, int64_t now_ns, int64_t *in_ms);
/* Whether the budget refused a hedge of this call (false for NULL). */
BW_EXTERN bool bw_hedge_denied(const bw_hedge_call_t *c);
/* Copies sent after the first so far (0 for NULL). */
BW_EXTERN uint32_t bw_hedge_sent(const bw_hedge_call_t *c);

/* Records the latency of a winning answer, from its own copy's send (ns >=
 * 0; negative values are refused: BW_E_RANGE). BW_E_INVAL for NULL h. */
BW_EXTERN int bw_hedge_record(bw_hedge_t *h, int64_t latency_ns);
/* The delay a call begun now would get, in ms (0 for NULL). */
BW_EXTERN int64_t bw_hedge_delay_ms(bw_hedge_t *h);
/* A snapshot (zeros for NULL h; NULL out is ignored). */
BW_EXTERN void bw_hedge_stats(bw_hedge_t *h, bw_hedge_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_HEDGE_H */

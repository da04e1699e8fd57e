/* breakwater — the strategy interface: what a pipeline stacks (pipeline.h).
 *
 * A pipeline is a list of strategies, outermost first. It walks the list:
 * it ENTERS each strategy in turn (which admits the call or refuses it),
 * makes the attempt once all are entered, then LEAVES every strategy it
 * entered, innermost first, with the outcome of what that strategy wrapped.
 * The built-in strategies (deadline, rate limit, limit, breaker, timeout)
 * are implemented through this interface inside the pipeline; the retry is
 * the pipeline's loop point, not a strategy object (docs/pipeline.md). A
 * user's own strategy is added with bw_pipeline_add_strategy:
 *
 *   typedef struct { bw_strategy_if_t head; atomic_uint calls; } counter_t;
 *   static int counter_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
 *                            int64_t now_ns, bw_refusal_t *r) {
 *     atomic_fetch_add(&((counter_t *)s)->calls, 1);
 *     return BW_OK;                                   // admit
 *   }
 *   static const bw_strategy_vtable_t counter_vt = {
 *       "counter", counter_enter, NULL, counter_name};
 *   counter_t k = {{&counter_vt}, 0};
 *   bw_pipeline_add_strategy(&cfg, &k.head, 0);
 *
 * Contract. enter never waits, sleeps or does I/O (the core decides, it
 * never waits): it answers at once, BW_OK to admit, or a negative BW_E_*
 * code with *r filled to refuse; the pipeline then waits (if the strategy's
 * max_wait_ms and r->retry_in_ms allow) and enters it again, or ends the
 * call with r->failure. A strategy whose enter admitted is left exactly once
 * (if its table has a leave). A refused enter is never left. Both are called
 * on whichever thread drives the call; a strategy shared by pipelines used
 * from many threads must be thread-safe. Per-call state goes in
 * ctx->permit, the strategy's own slot in the call. */
#ifndef BREAKWATER_STRATEGY_H
#define BREAKWATER_STRATEGY_H

#include "common.h"
#include "deadline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a call failed. */
typedef enum bw_failure_e {
  BW_FAILURE_NONE = 0,        /* it succeeded */
  BW_FAILURE_BREAKER = 1,     /* a breaker was open (or its half-open probes
                                 were all out) */
  BW_FAILURE_LIMIT = 2,       /* a bulkhead or limiter had no slot within its
                                 wait */
  BW_FAILURE_RATELIMIT = 3,   /* a rate limiter had no token within its wait */
  BW_FAILURE_BUDGET = 4,      /* the retry budget refused a retry */
  BW_FAILURE_EXHAUSTED = 5,   /* the last attempt failed and no retry was left
                                 (or there was no retry strategy) */
  BW_FAILURE_PERMANENT = 6,   /* the last attempt failed for good (a 4xx) */
  BW_FAILURE_DEADLINE = 7,    /* the call's deadline passed, or a retry would
                                 have ended past it */
  BW_FAILURE_RETRY_AFTER = 8, /* the dependency asked for a wait beyond the
                                 policy's limits or the deadline, or said
                                 "do not retry" (pushback) */
  BW_FAILURE_NOT_IDEMPOTENT = 9, /* a non-idempotent call without a key was
                                    not retried */
  BW_FAILURE_ELAPSED = 10,       /* the retry's max_elapsed_ms ran out */
  BW_FAILURE__COUNT = 11
} bw_failure_t;

/* "none", "breaker", "limit", "ratelimit", "budget", "exhausted",
 * "permanent", "deadline", "retry_after", "not_idempotent", "elapsed" or
 * "unknown". */
BW_EXTERN const char *bw_failure_name(bw_failure_t f);

/* What a strategy sees of the call it is entered into or left by. Built by
 * the pipeline for the duration of one enter or leave; the pointers point
 * into the call (bw_pipeline_call_t) and must not be kept. */
typedef struct bw_strategy_ctx_s {
  bw_permit_t *permit;     /* this strategy's slot in the call: enter may
                              fill it; leave gets it back as enter left it */
  bw_deadline_t *deadline; /* the call's deadline; enter may narrow it
                              (bw_deadline_min), never widen it */
  int64_t *timeout_ms;     /* this attempt's time limit, -1 = none; enter
                              may narrow it (reset to -1 before each attempt's
                              strategies are entered again) */
  int64_t start_ns;        /* when the call began (bw_pipeline_begin) */
  uint32_t attempt;        /* attempts made so far (0 before the first) */
  uint32_t asks;           /* enter: how many times this strategy refused
                              in the current admission wait (0 at first) */
  bool cancelled;          /* leave: the call was cancelled
                              (bw_pipeline_cancel); an attempt it had out
                              has no known outcome (the outcome is IGNORED) */
} bw_strategy_ctx_t;

/* A refusal, filled by enter when it does not admit. */
typedef struct bw_refusal_s {
  bw_failure_t failure; /* the call's failure kind if it ends here (a user's
                           strategy picks the closest, e.g. LIMIT; NONE or
                           an unknown value is taken as LIMIT) */
  int64_t retry_in_ms;  /* when asking again may admit: >= 0 lets the
                           pipeline wait (within the strategy's max_wait_ms
                           and the deadline) and enter it again; -1 = do not
                           wait, end the call now */
  bool exact;           /* retry_in_ms is exact (a rate limiter's next
                           token): when it is beyond the wait still allowed,
                           refuse now instead of waiting for nothing. false:
                           a hint (a poll interval), cut to the wait left */
} bw_refusal_t;

typedef struct bw_strategy_if_s bw_strategy_if_t;

/* The table behind the interface (for implementers). enter and name are
 * required; leave may be NULL (nothing to give back, e.g. a rate limiter's
 * token). */
typedef struct bw_strategy_vtable_s {
  const char *kind; /* "deadline", "ratelimit", "limit", "breaker",
                       "timeout", or the user's own */
  /* Admit (BW_OK) or refuse (a negative BW_E_*, *r filled; r->failure
   * defaults to BW_FAILURE_LIMIT and r->retry_in_ms to -1 when enter leaves
   * them untouched). now_ns is the driver's reading of the pipeline's
   * clock. */
  int (*enter)(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx, int64_t now_ns,
               bw_refusal_t *r);
  /* The call (outside the retry) or the attempt (inside) that this strategy
   * wrapped ended: SUCCESS, FAILURE, TIMED_OUT (the attempt got no answer in
   * time) or IGNORED (a 4xx, a cancelled call, an attempt that never went
   * out). */
  void (*leave)(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx, bw_outcome_t o);
  const char *(*name)(const bw_strategy_if_t *s);
} bw_strategy_vtable_t;

/* The head of every strategy object. */
struct bw_strategy_if_s {
  const bw_strategy_vtable_t *vt;
};

/* The strategy's name and kind; "" for NULL (or a NULL table). */
BW_EXTERN const char *bw_strategy_if_name(const bw_strategy_if_t *s);
BW_EXTERN const char *bw_strategy_if_kind(const bw_strategy_if_t *s);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_STRATEGY_H */

/* breakwater — pipelines: strategies stacked in the order given, outermost
 * first (Polly's builder), driven through one sans-I/O state machine so the
 * same pipeline runs blocking, in an event loop or in the simulator.
 *
 *   bw_pipeline_config_t cfg;
 *   bw_pipeline_config_init(&cfg);
 *   bw_pipeline_add_deadline(&cfg, 5000);        // the whole call: 5 s
 *   bw_pipeline_add_limit(&cfg, limiter, 2000);  // wait up to 2 s for a slot
 *   bw_pipeline_add_breaker(&cfg, breaker);      // outside the retry
 *   bw_pipeline_add_retry(&cfg, retry_policy);   // few attempts, budgeted
 *   bw_pipeline_add_timeout(&cfg, 2000);         // each attempt: 2 s
 *   bw_pipeline_t *pl = bw_pipeline_new(&cfg, &err);
 *
 *   bw_pipeline_call_t c;
 *   int step = bw_pipeline_begin(pl, &c, now_ns());
 *   while (step != BW_STEP_DONE) {
 *     if (step == BW_STEP_WAIT) {
 *       sleep_ms(c.delay_ms);                    // the driver decides how
 *       step = bw_pipeline_resume(&c, now_ns());
 *     } else {                                   // BW_STEP_ATTEMPT
 *       int status = http_post(..., c.attempt_timeout_ms);
 *       step = bw_pipeline_report(&c, bw_http_classify(status, t),
 *                                 retry_after_ms, now_ns());
 *     }
 *   }
 *   if (c.failure != BW_FAILURE_NONE) ... bw_failure_name(c.failure)
 *
 * Order semantics. The strategies before the retry (or all of them when
 * there is no retry) are entered once per logical call; those after it once
 * per attempt. An entered strategy is left exactly once, with the outcome of
 * what it wrapped:
 * - breaker: SUCCESS when the last attempt it wrapped was OK, FAILURE when
 *   it was TRANSIENT or NOT_SENT (a timeout, a 5xx, a 429), IGNORED when it
 *   was PERMANENT (a 4xx says the dependency is healthy) or when no attempt
 *   was made (our own refusal says nothing about the dependency). With the
 *   breaker outside the retry one logical call counts once; inside, every
 *   attempt counts.
 * - limit (bulkhead or adaptive limiter, limit.h): SUCCESS on OK (its
 *   round-trip time is a sample), DROPPED on TRANSIENT or NOT_SENT (a
 *   congestion signal) — TIMED_OUT when the attempt was reported with
 *   bw_pipeline_report_timeout — IGNORED otherwise.
 * - rate limit: takes one token when entered; nothing to give back.
 * A refusal by any strategy (breaker open, limit full after its wait, rate
 * limited after its wait) ends the call with that strategy's failure kind.
 * Inside a retry it is reported to the retry as BW_VERDICT_REJECTED, which
 * a retry never retries: a breaker rejection is never retried, whichever
 * the order (the Polly lab's pipeline, retry outside, is expressible and safe).
 *
 * Deadline. The call's deadline is the earliest of: begin's now_ns + the
 * deadline strategy's ms (from the moment the deadline strategy is entered:
 * it bounds what it wraps, so put it first to bound everything), and the
 * deadline passed with bw_pipeline_begin_at (the inbound request's,
 * X-Timeout-Budget). It bounds every wait (a slot
 * wait, a retry delay: the retry gives up with reason deadline instead of
 * scheduling past it) and every attempt (attempt_timeout_ms is the smaller
 * of the per-attempt timeout and what remains). A deadline that passes ends
 * the call with BW_FAILURE_DEADLINE at the next step.
 *
 * Fallback. When a call fails, the pipeline's fallback (if any) runs once,
 * from bw_pipeline_report / resume / begin, before BW_STEP_DONE is returned,
 * with the failure kind (the tenacity article: park the work for later instead
 * of losing it). Its return value becomes c.fallback_rc.
 *
 * A pipeline is immutable after creation and shared freely between
 * threads; the objects it points at (breakers, limiters, policies) are
 * borrowed and must outlive it. A call (bw_pipeline_call_t) lives in the
 * caller's storage and belongs to one thread at a time. No step allocates,
 * locks (beyond what the strategies themselves do) or reads a clock: time is
 * the now_ns the driver passes, on the same clock as the strategies' own. */
#ifndef BREAKWATER_PIPELINE_H
#define BREAKWATER_PIPELINE_H

#include "breaker.h"
#include "common.h"
#include "deadline.h"
#include "limit.h"
#include "ratelimit.h"
#include "retry.h"
#include "strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of strategy. */
typedef enum bw_strategy_kind_e {
  BW_STRATEGY_DEADLINE = 0,  /* the whole call's time: ms; must come before
                                the retry */
  BW_STRATEGY_RATELIMIT = 1, /* a bw_ratelimit_t; waits up to max_wait_ms */
  BW_STRATEGY_LIMIT = 2,     /* a bw_limit_t (bulkhead or adaptive limiter);
                                waits up to max_wait_ms for a slot */
  BW_STRATEGY_BREAKER = 3,   /* any breaker: a bw_breaker_if_t (in-process,
                                shared-memory, Redis, or a user's) */
  BW_STRATEGY_RETRY = 4,     /* a bw_retry_policy_t (its budget included) */
  BW_STRATEGY_TIMEOUT = 5,   /* each attempt's time: ms; must come after the
                                retry when there is one */
  BW_STRATEGY_CUSTOM = 6     /* a user's bw_strategy_if_t (strategy.h); may
                                wait up to max_wait_ms when it refuses with a
                                retry hint */
} bw_strategy_kind_t;

/* "deadline", "ratelimit", "limit", "breaker", "retry", "timeout", "custom"
 * or "unknown". */
BW_EXTERN const char *bw_strategy_kind_name(bw_strategy_kind_t k);

/* bw_failure_t and bw_failure_name are in strategy.h. */

/* One strategy. Fill it through the bw_pipeline_add_* helpers. */
typedef struct bw_strategy_s {
  bw_strategy_kind_t kind;
  void *object;        /* RATELIMIT: bw_ratelimit_t; LIMIT: bw_limit_t;
                          BREAKER: bw_breaker_if_t (a bw_breaker_t * is one:
                          its interface is its first member); RETRY:
                          bw_retry_policy_t; CUSTOM: bw_strategy_if_t; NULL
                          for DEADLINE and TIMEOUT */
  int64_t ms;          /* DEADLINE, TIMEOUT: the time, >= 1 */
  int64_t max_wait_ms; /* RATELIMIT, LIMIT, CUSTOM: how long a call may
                          wait for admission (0 = refuse at once); bounded
                          by the deadline */
  int64_t poll_ms;     /* LIMIT: how soon a waiting call first asks again;
                          >= 1, default 5. Each further refusal doubles the
                          interval, up to 8 x poll_ms, so that many waiting
                          calls do not turn into a polling storm of their
                          own (a rate limiter says how long to wait) */
} bw_strategy_t;

#define BW_PIPELINE_MAX_STRATEGIES 8

/* The pipeline's fallback: runs once when a call fails, with the reason and
 * the call. Its return value is stored in the call's fallback_rc. */
struct bw_pipeline_call_s;
typedef int (*bw_fallback_fn)(void *userdata, bw_failure_t why,
                              const struct bw_pipeline_call_s *call);

/* Most bounds of a pipeline's latency histogram (besides +Inf). */
#define BW_PIPELINE_MAX_BUCKETS 16

typedef struct bw_pipeline_config_s {
  const char *name; /* copied; default "pipeline"; 1..BW_NAME_MAX bytes */
  uint32_t count;   /* strategies used, 0..BW_PIPELINE_MAX_STRATEGIES */
  bw_strategy_t strategies[BW_PIPELINE_MAX_STRATEGIES]; /* outermost first */
  bw_fallback_fn fallback;                              /* optional */
  void *fallback_userdata;
  /* The latency histogram's upper bounds, in microseconds, strictly
   * increasing, each > 0; latency_bucket_count 0 (default) = the defaults
   * 1, 2.5, 5, 10, 25, 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30 s. */
  uint32_t latency_bucket_count; /* 0..BW_PIPELINE_MAX_BUCKETS */
  int64_t latency_buckets_us[BW_PIPELINE_MAX_BUCKETS];
  /* pipeline_gave_up events, one per call that ends in a failure (before
   * the fallback runs; docs/events.md); default NULL (none). Its time is
   * the now_ns the call was driven with; the sink and wall clock must
   * outlive the pipeline. */
  bw_sink_t *sink;
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
  /* The least deadline an attempt is sent with: with less than this left
   * of the call's deadline, the call ends with BW_FAILURE_DEADLINE instead
   * of sending (the strategies inside the retry are left IGNORED: nothing
   * went out). An attempt that cannot be answered before the caller stops
   * waiting still costs the dependency its work, and under overload most
   * requests reach the end of their deadline in a queue. Set it near the
   * dependency's slowest usual answer. Without a deadline it does nothing.
   * Default 0 = off; 0..86400000. */
  int64_t min_attempt_ms;
} bw_pipeline_config_t;

/* Fills the documented defaults: no strategy, no fallback. */
BW_EXTERN void bw_pipeline_config_init(bw_pipeline_config_t *cfg);

/* Append one strategy (innermost so far). BW_OK; BW_E_INVAL for a NULL cfg
 * or object; BW_E_LIMIT when BW_PIPELINE_MAX_STRATEGIES are already there.
 * The rules between strategies are checked by validate / new. */
BW_EXTERN int bw_pipeline_add_deadline(bw_pipeline_config_t *cfg, int64_t ms);
BW_EXTERN int bw_pipeline_add_ratelimit(bw_pipeline_config_t *cfg,
                                        bw_ratelimit_t *rl,
                                        int64_t max_wait_ms);
BW_EXTERN int bw_pipeline_add_limit(bw_pipeline_config_t *cfg, bw_limit_t *l,
                                    int64_t max_wait_ms);
/* The in-process breaker: bw_pipeline_add_breaker_if(cfg,
 * bw_breaker_iface(b)). */
BW_EXTERN int bw_pipeline_add_breaker(bw_pipeline_config_t *cfg,
                                      bw_breaker_t *b);
/* Any breaker through its interface (breaker.h: bw_breaker_iface,
 * bw_shm_breaker_iface, bw_redis_breaker_iface, or a user's). Its refusal
 * ends the call with BW_FAILURE_BREAKER, is never retried, and a breaker
 * never waits (it is refused at once). BW_E_INVAL for a NULL cfg or b, or b
 * without a table. */
BW_EXTERN int bw_pipeline_add_breaker_if(bw_pipeline_config_t *cfg,
                                         bw_breaker_if_t *b);
/* A user's strategy (strategy.h), entered once per call before the retry,
 * once per attempt after it. max_wait_ms: how long a call may wait when the
 * strategy refuses with a retry hint (0 = refuse at once). The object is
 * borrowed and must outlive the pipeline. BW_E_INVAL for a NULL cfg or s,
 * or s without a table. */
BW_EXTERN int bw_pipeline_add_strategy(bw_pipeline_config_t *cfg,
                                       bw_strategy_if_t *s,
                                       int64_t max_wait_ms);
BW_EXTERN int bw_pipeline_add_retry(bw_pipeline_config_t *cfg,
                                    const bw_retry_policy_t *p);
BW_EXTERN int bw_pipeline_add_timeout(bw_pipeline_config_t *cfg, int64_t ms);

/* Checks a configuration: BW_OK, or BW_E_INVAL with err naming the field
 * ("strategies[3].ms must be >= 1", "strategies[1]: at most one retry",
 * "strategies[0]: a deadline must come before the retry", "strategies[4]: a
 * timeout must come after the retry", count, name). */
BW_EXTERN int bw_pipeline_config_validate(const bw_pipeline_config_t *cfg,
                                          bw_error_t *err);

typedef struct bw_pipeline_s bw_pipeline_t;

/* Creates a pipeline (the strategies are copied; their objects borrowed).
 * NULL with err set on a bad configuration (BW_E_INVAL) or BW_E_NOMEM. */
BW_EXTERN bw_pipeline_t *bw_pipeline_new(const bw_pipeline_config_t *cfg,
                                         bw_error_t *err);
/* Frees a pipeline (NULL is fine). No call may be in progress. */
BW_EXTERN void bw_pipeline_free(bw_pipeline_t *pl);
/* The name given at creation ("" for NULL). */
BW_EXTERN const char *bw_pipeline_name(const bw_pipeline_t *pl);
/* The strategies a pipeline was made with, read back (e.g. by a binding
 * that wraps a pipeline a configuration file made). count: how many (0 for
 * NULL). strategy_at copies the i-th as configured, outermost first (kind,
 * object, ms, max_wait_ms, poll_ms, as bw_pipeline_config_t held it): BW_OK;
 * BW_E_INVAL (out untouched) for a NULL pl or out, or i >= count. Read-only
 * and thread-safe: a pipeline never changes after creation. */
BW_EXTERN uint32_t bw_pipeline_strategy_count(const bw_pipeline_t *pl);
BW_EXTERN int bw_pipeline_strategy_at(const bw_pipeline_t *pl, uint32_t i,
                                      bw_strategy_t *out);

/* What the driver must do next. */
#define BW_STEP_ATTEMPT                                                    \
  0                    /* make one attempt now, within attempt_timeout_ms, \
                          then bw_pipeline_report */
#define BW_STEP_WAIT 1 /* wait delay_ms, then bw_pipeline_resume */
#define BW_STEP_DONE 2 /* the call ended: failure says how */

/* A call in progress. Read the public fields; change none. */
typedef struct bw_pipeline_call_s {
  /* public */
  uint32_t attempt;           /* attempts made so far, the one about to be
                                 made included once ATTEMPT is returned */
  int64_t delay_ms;           /* WAIT: how long */
  int64_t attempt_timeout_ms; /* ATTEMPT: the attempt's time limit, or -1
                                 (none: no timeout and no deadline) */
  bw_deadline_t deadline;     /* the call's deadline (none if no deadline) */
  bw_failure_t failure;       /* DONE: why it failed, or NONE */
  bw_verdict_t last_verdict;  /* the last attempt's verdict (OK if none) */
  int fallback_rc;            /* DONE after a failure with a fallback */
  bool fallback_ran;
  /* The caller's own pointer for this call, handed to the fallback with
   * the call (e.g. the work to park, a bw_park_work_t: store.h). Set it
   * before bw_pipeline_begin, which never touches it; NULL when unused. */
  const void *user;
  /* private */
  const bw_pipeline_t *pl;
  uint8_t phase;
  uint8_t index;   /* the next strategy to enter */
  uint8_t entered; /* bit i: strategy i entered and not yet left */
  uint8_t reject;  /* the bw_failure_t of a strategy's refusal */
  bool attempted;  /* an attempt was made (last_verdict is its verdict) */
  bool waiting;    /* an admission wait is running (wait_until_ns is set) */
  bool timed_out;  /* the last attempt got no answer in time */
  uint8_t asks;    /* refusals so far in the admission wait */
  int64_t wait_until_ns; /* the admission wait's end */
  int64_t start_ns;      /* begin's now_ns */
  int64_t timeout_ms;    /* the attempt's timeout from its strategies, -1 */
  bw_permit_t permits[BW_PIPELINE_MAX_STRATEGIES];
  bw_retry_t retry;
} bw_pipeline_call_t;

/* Starts a call at now_ns and runs it to its first step: ATTEMPT, WAIT or
 * DONE (refused at once). The call's deadline is the earlier of this
 * thread's current deadline (bw_deadline_current, a reading of the same
 * clock) and the deadline strategy's (if any) from now_ns. Returns the step,
 * or BW_E_INVAL (nothing entered) for NULL arguments. */
BW_EXTERN int bw_pipeline_begin(const bw_pipeline_t *pl, bw_pipeline_call_t *c,
                                int64_t now_ns);
/* The same with an outer deadline (e.g. the inbound request's), which the
 * deadline strategy can only narrow. */
BW_EXTERN int bw_pipeline_begin_at(const bw_pipeline_t *pl,
                                   bw_pipeline_call_t *c, bw_deadline_t outer,
                                   int64_t now_ns);
/* After ATTEMPT: the attempt's verdict and its hint (retry.h:
 * BW_RETRY_AFTER_NONE, BW_RETRY_AFTER_NEVER or a delay in ms). Returns the
 * next step; BW_E_INVAL (call untouched) when the call is not waiting for a
 * report, or for a bad verdict or hint. */
BW_EXTERN int bw_pipeline_report(bw_pipeline_call_t *c, bw_verdict_t v,
                                 int64_t retry_after_ms, int64_t now_ns);
/* After ATTEMPT, when the attempt got no answer within attempt_timeout_ms:
 * the same as bw_pipeline_report with BW_VERDICT_TRANSIENT and no hint, and
 * the limits the attempt passed through are left with BW_LIMIT_TIMED_OUT
 * (the dependency may still be working on it: an adaptive limiter keeps the
 * slot a while, limiter.h). Returns the next step, or BW_E_INVAL as
 * bw_pipeline_report. */
BW_EXTERN int bw_pipeline_report_timeout(bw_pipeline_call_t *c, int64_t now_ns);
/* After WAIT: the wait is over. Returns the next step; BW_E_INVAL when the
 * call is not waiting. */
BW_EXTERN int bw_pipeline_resume(bw_pipeline_call_t *c, int64_t now_ns);
/* Gives the call an idempotency key (a UUIDv7 from unix_ms), so that a
 * non-idempotent retry policy may retry it after any transient failure; send
 * it with every attempt (an Idempotency-Key header). Call it once the first
 * ATTEMPT step was returned; later calls return the same key. NULL when the
 * pipeline has no retry or the retry was not entered yet. */
BW_EXTERN const char *bw_pipeline_attach_key(bw_pipeline_call_t *c,
                                             int64_t unix_ms);
/* Abandons a call that is not DONE (the driver is shutting down): leaves
 * every entered strategy with IGNORED, runs no fallback. The call is DONE
 * with failure NONE unless it had one. NULL and finished calls are fine. */
BW_EXTERN void bw_pipeline_cancel(bw_pipeline_call_t *c);
/* After WAIT: the limit whose slot the call waits for (a LIMIT strategy
 * refused it), or NULL for any other wait (a retry's backoff, a rate
 * limiter's token, a custom strategy). A slot wait may end early: a driver
 * that sees a slot of that limit freed (an attempt of its own ended) may
 * call bw_pipeline_resume at once, oldest waiter first, instead of waiting
 * out delay_ms; the call then asks the limit again, and a refusal is a new
 * WAIT. Other waits must run their full delay_ms. */
BW_EXTERN bw_limit_t *bw_pipeline_slot_wait(const bw_pipeline_call_t *c);

/* Counters since creation (each read atomically; the set is not one
 * instant). Conservation: calls = successes + the sum of failures[1..] +
 * cancelled + calls in progress. */
typedef struct bw_pipeline_stats_s {
  uint64_t calls;    /* bw_pipeline_begin / _begin_at */
  uint64_t attempts; /* ATTEMPT steps returned */
  uint64_t successes;
  uint64_t failures[BW_FAILURE__COUNT]; /* by kind; [BW_FAILURE_NONE] = 0 */
  uint64_t cancelled; /* calls abandoned with bw_pipeline_cancel */
  /* Each finished call's duration (begin to DONE, on the caller's clock;
   * cancelled calls are not counted): per bucket, not cumulative;
   * latency_counts[latency_bucket_count] counts the calls above the last
   * bound. Their sum = successes + the sum of failures[1..]. */
  uint32_t latency_bucket_count;
  int64_t latency_buckets_us[BW_PIPELINE_MAX_BUCKETS];
  uint64_t latency_counts[BW_PIPELINE_MAX_BUCKETS + 1];
  uint64_t latency_sum_ns; /* total duration of the counted calls */
} bw_pipeline_stats_t;

/* Fills *out (zeros for NULL pl; NULL out is ignored). */
BW_EXTERN void bw_pipeline_stats(const bw_pipeline_t *pl,
                                 bw_pipeline_stats_t *out);

/* bw_pipeline_execute and bw_attempt_fn moved to breakwater/threads.h. */

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_PIPELINE_H */

/* breakwater — the standard HTTP pipeline in one call: what Polly's
 * AddStandardResilienceHandler builds, with breakwater's extras.
 *
 *   bw_http_standard_config_t cfg;
 *   bw_http_standard_config_init(&cfg);      // every field overridable:
 *   cfg.breaker.break_ms = 10000;            // the sub-configs are the
 *   bw_http_standard_t *std =                // objects' own config structs
 *       bw_http_standard_new(&cfg, &err);
 *   bw_curl_easy_perform(bw_http_standard_pipeline(std), easy, &res);
 *   bw_http_standard_free(std);
 *
 * The pipeline, outermost first (each part can be turned off):
 *   1. deadline      the whole call, retries and waits included: 30 s
 *                    (Polly's total request timeout; the reference
 *                    toolkit's default budget)
 *   2. limit         an adaptive concurrency limiter (AIMD, up to 1000 in
 *                    flight: Polly's concurrency limiter, but adaptive);
 *                    a call waits up to limit_wait_ms for a slot
 *   3. breaker       outside the retry, so a logical call counts once:
 *                    failure ratio 0.1 over 30 s, at least 100 calls, 5 s
 *                    break (Polly's standard breaker)
 *   4. retry         4 attempts (Polly: 3 retries), exponential from 2 s
 *                    with decorrelated jitter, capped at 30 s; 408, 429 and
 *                    5xx and transport errors retried, other 4xx never
 *                    (bw_http_classify); Retry-After and gRPC's
 *                    grpc-retry-pushback-ms honoured (the drivers read
 *                    them); a ratio retry budget (retries at most 20 % of
 *                    requests, at least 3 a second: Envoy's)
 *   5. timeout       each attempt: 10 s (Polly's attempt timeout)
 * With limit_per_attempt the limiter moves inside the retry, just before
 * the attempt timeout: deadline -> breaker -> retry -> limit -> timeout.
 * Each attempt then takes a slot of its own (waiting up to limit_wait_ms,
 * within the deadline); a call waiting out its backoff holds none, and its
 * retry is admitted under the limit in force when it asks, lowered by the
 * congestion its first attempt met. It is what the lab's breakwater mode
 * does (docs/internals/limiter-startup.md, "Pacing and an attempt
 * timeout..."), and what the limiter's stuck_timeout needs: only a limit inside
 * the retry may cut an attempt short (an attempt admitted above the proven
 * level gets its stuck age) and have it retried. A slot refusal is still never
 * retried: the call ends with the limit's failure. Default false: the order
 * above, one slot per logical call, held across the retry's waits.
 * Non-idempotent requests: the curl drivers send an Idempotency-Key (one per
 * logical call, the same on every attempt) when the request says it is not
 * idempotent (bw_curl_easy_options_t.idempotent, bw_curl_request_t), which
 * is what lets the retry retry it.
 *
 * `clock` and `sink`, when set, replace the sub-configs' own: every part
 * then reads that clock and emits to that sink. The object owns
 * its breaker, limiter, retry policy, budget and pipeline; the pipeline is
 * thread-safe and shared freely (pipeline.h). */
#ifndef BREAKWATER_HTTP_STANDARD_H
#define BREAKWATER_HTTP_STANDARD_H

#include "breaker.h"
#include "budget.h"
#include "common.h"
#include "limiter.h"
#include "pipeline.h"
#include "retry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_http_standard_config_s {
  const char *name;            /* the pipeline's; default "http" */
  int64_t deadline_ms;         /* default 30000; 0 = no deadline */
  bool use_limiter;            /* default true */
  bw_limiter_config_t limiter; /* AIMD, max_limit 1000, name "http" */
  int64_t limit_wait_ms;       /* default 1000: a slot wait, within the
                                  deadline; 0 = refuse at once */
  bool use_breaker;            /* default true */
  bw_breaker_config_t breaker; /* time window, 0.1 over 30 s, 100 calls,
                                  5 s break, name "http" */
  bool use_retry;              /* default true */
  bw_retry_config_t retry;     /* 4 attempts, exponential 2 s, decorrelated
                                  jitter, cap 30 s, name "http" (its budget
                                  field is set to the budget below) */
  bool use_budget;             /* default true (needs use_retry) */
  bw_budget_config_t budget;   /* ratio 20 %, 3/s, 10 s window, name "http" */
  int64_t attempt_timeout_ms;  /* default 10000; 0 = none */
  const bw_clock_t *clock;     /* default NULL: each part's own (monotonic);
                                  set: the limiter, breaker and budget read
                                  it (a manual clock in tests, a simulator's) */
  bw_sink_t *sink;             /* default NULL: each part's own (none); set:
                                  every part emits to it */
  bool limit_per_attempt;      /* default false: the limiter outside the
                                  breaker and the retry, a slot per call;
                                  true: inside the retry, a slot per attempt
                                  (needed by limiter.stuck_timeout). Last in
                                  the struct so that the layout of the
                                  fields before it does not move. */
  int64_t min_attempt_ms;      /* default 0 = off: the pipeline's
                                  min_attempt_ms (pipeline.h), no attempt
                                  with less of the deadline left;
                                  0..86400000. Appended, as above. */
} bw_http_standard_config_t;

typedef struct bw_http_standard_s bw_http_standard_t;

/* Fills the defaults above. NULL is ignored. */
BW_EXTERN void bw_http_standard_config_init(bw_http_standard_config_t *cfg);
/* Checks every part without creating anything: BW_OK, or BW_E_INVAL with
 * err's field prefixed by the part ("breaker.failure_ratio",
 * "retry.base_ms", "deadline_ms", "use_budget": use_budget without
 * use_retry; "limiter.stuck_timeout": stuck_timeout with a limiter and a
 * retry but without limit_per_attempt, where it could never cut an
 * attempt). */
BW_EXTERN int bw_http_standard_config_validate(
    const bw_http_standard_config_t *cfg, bw_error_t *err);
/* Builds the objects and the pipeline. NULL with err set (BW_E_INVAL as
 * validate says, or BW_E_NOMEM; nothing is left allocated). */
BW_EXTERN bw_http_standard_t *bw_http_standard_new(
    const bw_http_standard_config_t *cfg, bw_error_t *err);
/* Adds the preset's strategies to pc in the preset's order (deadline,
 * limit, breaker, retry, timeout; with limit_per_attempt the limit after
 * the retry), over the parts given (NULL: that part is off): what
 * bw_http_standard_new does with its own parts, for a caller that owns
 * them elsewhere (a configuration file's [http.NAME] builds its pipeline
 * of registry objects with it). cfg's deadline_ms, limit_wait_ms,
 * limit_per_attempt and attempt_timeout_ms are read. BW_OK, or the first
 * add's error (BW_E_INVAL for NULL pc or cfg; BW_E_LIMIT when pc has no
 * room for them). */
BW_EXTERN int bw_http_standard_add_strategies(
    bw_pipeline_config_t *pc, const bw_http_standard_config_t *cfg,
    bw_limiter_t *limiter, bw_breaker_t *breaker, bw_retry_policy_t *retry);
/* Frees everything it owns (NULL is fine). No call may be in progress. */
BW_EXTERN void bw_http_standard_free(bw_http_standard_t *s);

/* The parts (NULL for NULL s or a part turned off). Borrowed: they live
 * until bw_http_standard_free. */
BW_EXTERN const bw_pipeline_t *bw_http_standard_pipeline(
    const bw_http_standard_t *s);
BW_EXTERN bw_breaker_t *bw_http_standard_breaker(const bw_http_standard_t *s);
BW_EXTERN bw_limiter_t *bw_http_standard_limiter(const bw_http_standard_t *s);
BW_EXTERN bw_retry_policy_t *bw_http_standard_retry(
    const bw_http_standard_t *s);
BW_EXTERN bw_budget_t *bw_http_standard_budget(const bw_http_standard_t *s);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_HTTP_STANDARD_H */

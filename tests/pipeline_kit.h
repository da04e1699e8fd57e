/* Test helpers shared by the pipeline and driver tests: a constant-delay
 * retry policy, a consecutive-failure breaker, and a pipeline of
 * [deadline] -> [breaker] -> [retry] -> [timeout], each optional. Every
 * failure fails the test with the library's message. */
#ifndef BW_PIPELINE_KIT_H
#define BW_PIPELINE_KIT_H

#include "breakwater/pipeline.h"
#include "bw_test.h"

/* `attempts` in all, constant base_ms delays (no jitter, max 5 s),
 * idempotent as given; events to sink (may be NULL). */
static inline bw_retry_policy_t *bwt_constant_retry(uint32_t attempts,
                                                    int64_t base_ms,
                                                    bool idempotent,
                                                    bw_sink_t *sink) {
  bw_retry_config_t rc;
  bw_error_t err;
  bw_retry_policy_t *p;
  bw_retry_config_init(&rc);
  rc.max_attempts = attempts;
  rc.backoff = BW_BACKOFF_CONSTANT;
  rc.base_ms = base_ms;
  rc.jitter = BW_JITTER_NONE;
  rc.max_ms = 5000;
  rc.idempotent = idempotent;
  rc.sink = sink;
  p = bw_retry_policy_new(&rc, &err);
  if (p == NULL) fail_msg("bw_retry_policy_new: %s", err.message);
  return p;
}

/* Opens after `threshold` consecutive failures, for a 60 s break. */
static inline bw_breaker_t *bwt_make_breaker(const char *name,
                                             uint32_t threshold,
                                             const bw_clock_t *clock) {
  bw_breaker_config_t bc;
  bw_error_t err;
  bw_breaker_t *b;
  bw_breaker_config_init(&bc);
  bc.name = name;
  bc.failure_threshold = threshold;
  bc.break_ms = 60000;
  bc.clock = clock;
  b = bw_breaker_new(&bc, &err);
  if (b == NULL) fail_msg("bw_breaker_new: %s", err.message);
  return b;
}

/* [deadline] -> [breaker] -> [retry] -> [timeout]; a time <= 0 or a NULL
 * object leaves that strategy out. */
static inline bw_pipeline_t *bwt_pipeline(const char *name, int64_t deadline_ms,
                                          bw_breaker_t *b,
                                          const bw_retry_policy_t *r,
                                          int64_t timeout_ms) {
  bw_pipeline_config_t pc;
  bw_error_t err;
  bw_pipeline_t *pl;
  bw_pipeline_config_init(&pc);
  pc.name = name;
  if (deadline_ms > 0)
    assert_status(bw_pipeline_add_deadline(&pc, deadline_ms), BW_OK);
  if (b != NULL) assert_status(bw_pipeline_add_breaker(&pc, b), BW_OK);
  if (r != NULL) assert_status(bw_pipeline_add_retry(&pc, r), BW_OK);
  if (timeout_ms > 0)
    assert_status(bw_pipeline_add_timeout(&pc, timeout_ms), BW_OK);
  pl = bw_pipeline_new(&pc, &err);
  if (pl == NULL) fail_msg("bw_pipeline_new: %s", err.message);
  return pl;
}

#endif

/* The pipeline behaviour every breaker must show through the breaker
 * interface (breaker.h, bw_pipeline_add_breaker_if), run by test_pipeline
 * (in-process), test_shm (shared memory) and test_store_redis (Redis) on a
 * breaker each makes with failure_threshold 2 (consecutive) and a break of
 * at least 1 s:
 * - outside a retry of 3 attempts, one logical call counts once: three
 *   failed attempts are ONE failure, so the first call leaves the breaker
 *   CLOSED and the second opens it;
 * - the open breaker refuses the next call before any attempt, failure kind
 *   BREAKER;
 * - with the retry outside and the breaker inside, the refusal is never
 *   retried (one refusal, no attempt, failure kind BREAKER).
 * The driver is the test, on its manual clock, so every step is exact. */
#ifndef BWT_BREAKER_PIPELINE_H
#define BWT_BREAKER_PIPELINE_H

#include "breakwater/pipeline.h"
#include "bw_test.h"

typedef struct bwt_brk_kit_s {
  bw_breaker_if_t *bi;
  void *ud;
  int64_t (*now)(void *ud);              /* the breaker's clock, ns */
  void (*advance_ms)(void *ud, int64_t); /* moves that clock */
  void (*sync)(void *ud);         /* makes the breaker decide on what it counted
                                     (Redis: a sync); NULL when it does at once */
  uint64_t (*failures)(void *ud); /* failures counted (this process) */
} bwt_brk_kit_t;

static bw_retry_policy_t *bwt_brk_retry(uint32_t attempts) {
  bw_retry_config_t cfg;
  bw_error_t err;
  bw_retry_config_init(&cfg);
  cfg.max_attempts = attempts;
  cfg.backoff = BW_BACKOFF_CONSTANT;
  cfg.base_ms = 100;
  cfg.max_ms = 10000;
  cfg.jitter = BW_JITTER_NONE;
  bw_retry_policy_t *p = bw_retry_policy_new(&cfg, &err);
  if (p == NULL) fail_msg("bw_retry_policy_new: %s", err.message);
  return p;
}

/* One logical call whose every attempt fails: EXHAUSTED after 3. */
static void bwt_brk_failing_call(const bwt_brk_kit_t *k,
                                 const bw_pipeline_t *pl) {
  bw_pipeline_call_t c;
  assert_int_equal(bw_pipeline_begin(pl, &c, k->now(k->ud)), BW_STEP_ATTEMPT);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT,
                                        BW_RETRY_AFTER_NONE, k->now(k->ud)),
                     BW_STEP_WAIT);
    assert_i64_eq(c.delay_ms, 100);
    k->advance_ms(k->ud, c.delay_ms);
    assert_int_equal(bw_pipeline_resume(&c, k->now(k->ud)), BW_STEP_ATTEMPT);
  }
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT,
                                      BW_RETRY_AFTER_NONE, k->now(k->ud)),
                   BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_EXHAUSTED);
  assert_u64_eq(c.attempt, 3);
  if (k->sync != NULL) k->sync(k->ud);
}

static void bwt_breaker_pipeline_behaviour(const bwt_brk_kit_t *k) {
  bw_retry_policy_t *retry = bwt_brk_retry(3);
  bw_pipeline_config_t cfg;
  bw_error_t err;
  bw_pipeline_config_init(&cfg);
  assert_status(bw_pipeline_add_breaker_if(&cfg, k->bi), BW_OK);
  assert_status(bw_pipeline_add_retry(&cfg, retry), BW_OK);
  bw_pipeline_t *pl = bw_pipeline_new(&cfg, &err);
  if (pl == NULL) fail_msg("bw_pipeline_new: %s", err.message);

  /* Outside the retry: three failed attempts are one failure. */
  uint64_t f0 = k->failures(k->ud);
  bwt_brk_failing_call(k, pl);
  assert_u64_eq(k->failures(k->ud), f0 + 1);
  assert_state(bw_breaker_if_state(k->bi), BW_CLOSED);
  bwt_brk_failing_call(k, pl);
  assert_u64_eq(k->failures(k->ud), f0 + 2);
  assert_state(bw_breaker_if_state(k->bi), BW_OPEN);

  /* Open: refused before any attempt, as a breaker failure. */
  bw_pipeline_call_t c;
  assert_int_equal(bw_pipeline_begin(pl, &c, k->now(k->ud)), BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
  assert_u64_eq(c.attempt, 0);
  bw_pipeline_free(pl);

  /* The retry outside, the breaker inside: the refusal is never retried. */
  bw_pipeline_config_init(&cfg);
  assert_status(bw_pipeline_add_retry(&cfg, retry), BW_OK);
  assert_status(bw_pipeline_add_breaker_if(&cfg, k->bi), BW_OK);
  pl = bw_pipeline_new(&cfg, &err);
  if (pl == NULL) fail_msg("bw_pipeline_new: %s", err.message);
  assert_int_equal(bw_pipeline_begin(pl, &c, k->now(k->ud)), BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
  assert_u64_eq(c.attempt, 0);
  bw_pipeline_stats_t ps;
  bw_pipeline_stats(pl, &ps);
  assert_u64_eq(ps.attempts, 0);
  assert_u64_eq(ps.failures[BW_FAILURE_BREAKER], 1);
  assert_u64_eq(k->failures(k->ud), f0 + 2);
  bw_pipeline_free(pl);
  bw_retry_policy_free(retry);
}

#endif /* BWT_BREAKER_PIPELINE_H */

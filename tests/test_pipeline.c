/* Specification tests: pipelines (docs/pipeline.md; the tenacity article's
 * breaker outside the retry, the Polly lab's Polly pipeline with the retry
 * outside).
 *
 * Every test drives the sans-I/O state machine by hand on a manual clock
 * starting at BWT_T0_NS: the test is the driver, so each step (ATTEMPT,
 * WAIT, DONE), each delay and each count is exact. */
#include "breakwater/breakwater.h"
#include "breakwater/threads.h"
#include "breaker_pipeline.h"
#include "bw_test.h"

#define MS BW_NS_PER_MS

typedef struct env_s {
  bw_clock_t *clock;
  bw_breaker_t *breaker;
  bw_retry_policy_t *retry;
  bw_budget_t *budget;
  bw_bulkhead_t *bulkhead;
  bw_ratelimit_t *rl;
  bw_pipeline_t *pl;
  /* fallback record */
  int fallback_calls;
  bw_failure_t fallback_why;
} env_t;

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  *state = e;
  return e->clock == NULL ? -1 : 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_deadline_set(bw_deadline_none());
  bw_pipeline_free(e->pl);
  bw_breaker_free(e->breaker);
  bw_retry_policy_free(e->retry);
  bw_budget_free(e->budget);
  bw_bulkhead_free(e->bulkhead);
  bw_ratelimit_free(e->rl);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static int64_t now(const env_t *e) {
  return bw_clock_now(e->clock);
}
static void advance_ms(env_t *e, int64_t ms) {
  bw_clock_manual_advance(e->clock, ms * MS);
}

/* One step of the driver, checked: begin, report (no hint), resume. Macros,
 * so a failure names the test's line. */
#define BEGIN(c, step) \
  assert_int_equal(bw_pipeline_begin(e->pl, (c), now(e)), (step))
#define REPORT(c, v, step)                                                    \
  assert_int_equal(bw_pipeline_report((c), (v), BW_RETRY_AFTER_NONE, now(e)), \
                   (step))
#define RESUME(c, step) \
  assert_int_equal(bw_pipeline_resume((c), now(e)), (step))

static bw_breaker_t *make_breaker(env_t *e, uint32_t threshold) {
  bw_breaker_config_t cfg;
  bw_error_t err;
  bw_breaker_config_init(&cfg);
  cfg.name = "partner";
  cfg.failure_threshold = threshold;
  cfg.break_ms = 1000;
  cfg.clock = e->clock;
  e->breaker = bw_breaker_new(&cfg, &err);
  if (e->breaker == NULL) fail_msg("bw_breaker_new: %s", err.message);
  return e->breaker;
}

/* 3 attempts, constant 100 ms, no jitter: every delay is exact. */
static bw_retry_policy_t *make_retry(env_t *e, uint32_t attempts,
                                     bool with_budget) {
  bw_retry_config_t cfg;
  bw_error_t err;
  bw_retry_config_init(&cfg);
  cfg.max_attempts = attempts;
  cfg.backoff = BW_BACKOFF_CONSTANT;
  cfg.base_ms = 100;
  cfg.max_ms = 10000;
  cfg.jitter = BW_JITTER_NONE;
  if (with_budget) {
    bw_budget_config_t bc;
    bw_budget_config_init(&bc);
    bc.max_tokens = 2; /* retries while tokens > 1: a failure costs 1 */
    bc.token_ratio = 0.1;
    e->budget = bw_budget_new(&bc, &err);
    if (e->budget == NULL) fail_msg("bw_budget_new: %s", err.message);
    cfg.budget = e->budget;
  }
  e->retry = bw_retry_policy_new(&cfg, &err);
  if (e->retry == NULL) fail_msg("bw_retry_policy_new: %s", err.message);
  return e->retry;
}

static bw_bulkhead_t *make_bulkhead(env_t *e, uint32_t max) {
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = max;
  cfg.timeout_ms = 0;
  cfg.clock = e->clock;
  e->bulkhead = bw_bulkhead_new(&cfg, &err);
  if (e->bulkhead == NULL) fail_msg("bw_bulkhead_new: %s", err.message);
  return e->bulkhead;
}

static int record_fallback(void *userdata, bw_failure_t why,
                           const bw_pipeline_call_t *call) {
  env_t *e = userdata;
  (void)call;
  e->fallback_calls++;
  e->fallback_why = why;
  return 42;
}

static bw_pipeline_t *build(env_t *e, bw_pipeline_config_t *cfg) {
  bw_error_t err;
  cfg->fallback = record_fallback;
  cfg->fallback_userdata = e;
  e->pl = bw_pipeline_new(cfg, &err);
  if (e->pl == NULL) fail_msg("bw_pipeline_new: %s", err.message);
  return e->pl;
}

static bw_breaker_stats_t bstats(const env_t *e) {
  bw_breaker_stats_t s;
  bw_breaker_stats(e->breaker, &s);
  return s;
}

/* The default order: a breaker (opening after `threshold` consecutive
 * failures) outside a retry of `attempts` (constant 100 ms). */
static void breaker_retry_pipeline(env_t *e, uint32_t threshold,
                                   uint32_t attempts, bool with_budget) {
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_breaker(&cfg, make_breaker(e, threshold));
  bw_pipeline_add_retry(&cfg, make_retry(e, attempts, with_budget));
  build(e, &cfg);
}

/* A pipeline of one bulkhead of `slots` that waits up to max_wait_ms. */
static bw_limit_t *limit_pipeline(env_t *e, uint32_t slots,
                                  int64_t max_wait_ms) {
  bw_limit_t *l = bw_bulkhead_as_limit(make_bulkhead(e, slots));
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_limit(&cfg, l, max_wait_ms);
  build(e, &cfg);
  return l;
}

/* ---- the default order: breaker outside, retry inside --------------- */

static void test_breaker_outside_counts_one_logical_call_once(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  assert_status(bw_pipeline_add_breaker(&cfg, make_breaker(e, 5)), BW_OK);
  assert_status(bw_pipeline_add_retry(&cfg, make_retry(e, 3, false)), BW_OK);
  build(e, &cfg);

  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  assert_u64_eq(c.attempt, 1);
  assert_i64_eq(c.attempt_timeout_ms, -1); /* no timeout, no deadline */
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  assert_i64_eq(c.delay_ms, 100);
  advance_ms(e, 100);
  RESUME(&c, BW_STEP_ATTEMPT);
  assert_u64_eq(c.attempt, 2);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, 100);
  RESUME(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_OK, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_NONE);
  assert_false(c.fallback_ran);
  /* Two failed attempts, one successful logical call: the breaker saw one
   * call, a success. */
  bw_breaker_stats_t s = bstats(e);
  assert_u64_eq(s.calls, 1);
  assert_u64_eq(s.successes, 1);
  assert_u64_eq(s.failures, 0);

  /* A logical call that fails all its attempts counts one failure. */
  BEGIN(&c, BW_STEP_ATTEMPT);
  for (int i = 0; i < 2; i++) {
    REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
    advance_ms(e, c.delay_ms);
    RESUME(&c, BW_STEP_ATTEMPT);
  }
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_EXHAUSTED);
  assert_u64_eq(c.attempt, 3);
  s = bstats(e);
  assert_u64_eq(s.calls, 2);
  assert_u64_eq(s.failures, 1);
  assert_int_equal(e->fallback_calls, 1);
  assert_int_equal(e->fallback_why, BW_FAILURE_EXHAUSTED);
  assert_true(c.fallback_ran);
  assert_int_equal(c.fallback_rc, 42);
}

static void test_open_breaker_vetoes_before_any_retry_budget(void **state) {
  env_t *e = *state;
  breaker_retry_pipeline(e, 1, 3, true);
  bw_pipeline_call_t c;
  /* One logical failure (after its retries) opens the breaker. */
  BEGIN(&c, BW_STEP_ATTEMPT);
  int step;
  while ((step = bw_pipeline_report(&c, BW_VERDICT_TRANSIENT,
                                    BW_RETRY_AFTER_NONE, now(e))) ==
         BW_STEP_WAIT) {
    advance_ms(e, c.delay_ms);
    RESUME(&c, BW_STEP_ATTEMPT);
  }
  assert_int_equal(step, BW_STEP_DONE);
  assert_state(bw_breaker_state(e->breaker), BW_OPEN);
  bw_budget_stats_t before;
  bw_budget_stats(e->budget, &before);

  /* The next call: refused by the breaker, no attempt, no budget touched. */
  BEGIN(&c, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
  assert_u64_eq(c.attempt, 0);
  bw_budget_stats_t after;
  bw_budget_stats(e->budget, &after);
  assert_u64_eq(after.requests, before.requests);
  assert_u64_eq(after.allowed, before.allowed);
  assert_int_equal(e->fallback_why, BW_FAILURE_BREAKER);
  assert_int_equal(e->fallback_calls, 2);
}

/* ---- the reverse order: retry outside, breaker inside (the Polly lab) ------
 */

static void test_retry_outside_never_retries_a_breaker_rejection(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, make_retry(e, 5, false));
  bw_pipeline_add_breaker(&cfg, make_breaker(e, 2));
  build(e, &cfg);
  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, c.delay_ms);
  RESUME(&c, BW_STEP_ATTEMPT);
  /* The second failed attempt opens the breaker (inside: each attempt
   * counts). */
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  assert_state(bw_breaker_state(e->breaker), BW_OPEN);
  advance_ms(e, c.delay_ms);
  /* The third attempt is refused by the breaker: the call ends, rejected,
   * although the retry had 3 attempts left. */
  RESUME(&c, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
  assert_u64_eq(c.attempt, 2);
  bw_breaker_stats_t s = bstats(e);
  assert_u64_eq(s.failures, 2);
  assert_u64_eq(s.rejected, 1);
  assert_int_equal(e->fallback_why, BW_FAILURE_BREAKER);
}

/* ---- admission waits ---------------------------------------------------- */

static void test_limit_full_waits_then_refuses(void **state) {
  env_t *e = *state;
  bw_limit_t *l = limit_pipeline(e, 1, 12);
  bw_pipeline_call_t a, b;
  BEGIN(&a, BW_STEP_ATTEMPT);
  /* The slot is taken: b polls after 5 ms, then 10 (each refusal doubles
   * the interval), for up to 12 ms. */
  BEGIN(&b, BW_STEP_WAIT);
  assert_i64_eq(b.delay_ms, 5);
  advance_ms(e, 5);
  RESUME(&b, BW_STEP_WAIT);
  assert_i64_eq(b.delay_ms, 7); /* 10, cut to the wait's end */
  advance_ms(e, 7);
  RESUME(&b, BW_STEP_DONE);
  assert_int_equal(b.failure, BW_FAILURE_LIMIT);
  assert_u64_eq(b.attempt, 0);
  REPORT(&a, BW_VERDICT_OK, BW_STEP_DONE);
  assert_u64_eq(bw_limit_in_flight(l), 0);
}

static void test_limit_poll_interval_doubles_up_to_eight_times(void **state) {
  env_t *e = *state;
  bw_limit_t *l = limit_pipeline(e, 1, 10000);
  bw_pipeline_call_t a, b;
  BEGIN(&a, BW_STEP_ATTEMPT);
  BEGIN(&b, BW_STEP_WAIT);
  const int64_t want[] = {5, 10, 20, 40, 40, 40};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    assert_i64_eq(b.delay_ms, want[i]);
    advance_ms(e, b.delay_ms);
    if (i + 1 < sizeof want / sizeof want[0]) RESUME(&b, BW_STEP_WAIT);
  }
  bw_pipeline_cancel(&a);
  RESUME(&b, BW_STEP_ATTEMPT);
  bw_pipeline_cancel(&b);
  assert_u64_eq(bw_limit_in_flight(l), 0);
}

static void test_limit_wait_ends_when_a_slot_frees(void **state) {
  env_t *e = *state;
  bw_limit_t *l = limit_pipeline(e, 1, 1000);
  bw_pipeline_call_t a, b;
  BEGIN(&a, BW_STEP_ATTEMPT);
  BEGIN(&b, BW_STEP_WAIT);
  advance_ms(e, 3);
  REPORT(&a, BW_VERDICT_OK, BW_STEP_DONE);
  advance_ms(e, 2);
  RESUME(&b, BW_STEP_ATTEMPT);
  assert_u64_eq(bw_limit_in_flight(l), 1);
  /* A transient failure leaves the limit as DROPPED, freeing the slot. */
  REPORT(&b, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(b.failure, BW_FAILURE_EXHAUSTED);
  assert_u64_eq(bw_limit_in_flight(l), 0);
}

/* bw_pipeline_slot_wait names the limit only while a call waits for one of
 * its slots; such a wait may end before its delay (a driver resumes it when
 * a slot frees), and a retry's backoff is no slot wait. */
static void test_slot_wait_names_the_limit_of_a_slot_wait_only(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, make_retry(e, 2, false));
  bw_limit_t *l = bw_bulkhead_as_limit(make_bulkhead(e, 1));
  bw_pipeline_add_limit(&cfg, l, 1000);
  build(e, &cfg);
  bw_pipeline_call_t a, b;
  assert_null(bw_pipeline_slot_wait(NULL));
  BEGIN(&a, BW_STEP_ATTEMPT);
  assert_null(bw_pipeline_slot_wait(&a)); /* an attempt, not a wait */
  BEGIN(&b, BW_STEP_WAIT);
  assert_ptr_equal(bw_pipeline_slot_wait(&b), l);
  assert_i64_eq(b.delay_ms, 5);
  /* a's attempt fails and frees the slot at 2 ms; b, resumed then rather
   * than at 5 ms, takes it. */
  advance_ms(e, 2);
  REPORT(&a, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  assert_null(bw_pipeline_slot_wait(&a)); /* the retry's 100 ms backoff */
  assert_i64_eq(a.delay_ms, 100);
  RESUME(&b, BW_STEP_ATTEMPT);
  assert_null(bw_pipeline_slot_wait(&b));
  assert_u64_eq(bw_limit_in_flight(l), 1);
  /* After its backoff a finds the slot taken: a slot wait again. */
  advance_ms(e, 100);
  RESUME(&a, BW_STEP_WAIT);
  assert_ptr_equal(bw_pipeline_slot_wait(&a), l);
  REPORT(&b, BW_VERDICT_OK, BW_STEP_DONE);
  assert_null(bw_pipeline_slot_wait(&b)); /* done */
  RESUME(&a, BW_STEP_ATTEMPT);
  REPORT(&a, BW_VERDICT_OK, BW_STEP_DONE);
  assert_u64_eq(bw_limit_in_flight(l), 0);
}

static void test_ratelimit_waits_as_told(void **state) {
  env_t *e = *state;
  bw_ratelimit_config_t rc;
  bw_error_t err;
  bw_ratelimit_config_init(&rc);
  rc.rate_per_sec = 10; /* one token every 100 ms */
  rc.burst = 1;
  rc.clock = e->clock;
  e->rl = bw_ratelimit_new(&rc, &err);
  assert_non_null(e->rl);
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_ratelimit(&cfg, e->rl, 150);
  build(e, &cfg);
  bw_pipeline_call_t a, b, d;
  BEGIN(&a, BW_STEP_ATTEMPT);
  BEGIN(&b, BW_STEP_WAIT);
  assert_i64_eq(b.delay_ms, 100);
  advance_ms(e, 100);
  RESUME(&b, BW_STEP_ATTEMPT);
  /* b waited 100 ms of its 150. Now the next token is 100 ms away: a call
   * that may wait only 50 ms is refused at once, since the limiter says
   * exactly when a token comes. */
  bw_pipeline_cancel(&a);
  bw_pipeline_cancel(&b);
  bw_pipeline_free(e->pl); /* no call in progress on it any more */
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_ratelimit(&cfg, e->rl, 50);
  build(e, &cfg);
  BEGIN(&d, BW_STEP_DONE);
  assert_int_equal(d.failure, BW_FAILURE_RATELIMIT);
}

/* ---- deadline and per-attempt timeout ---------------------------------- */

static void test_deadline_bounds_attempts_and_retries(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_deadline(&cfg, 250);
  bw_pipeline_add_retry(&cfg, make_retry(e, 5, false));
  bw_pipeline_add_timeout(&cfg, 200);
  build(e, &cfg);
  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, 200); /* min(200, 250 left) */
  assert_i64_eq(c.deadline.at_ns, now(e) + 250 * MS);
  advance_ms(e, 100);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, c.delay_ms); /* 100: 50 ms are left */
  RESUME(&c, BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, 50);
  advance_ms(e, 40);
  /* 10 ms left, a retry would wait 100: the retry gives up (deadline). */
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_DEADLINE);
  assert_int_equal(e->fallback_why, BW_FAILURE_DEADLINE);
}

static void test_outer_deadline_narrows_and_expired_refuses(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_deadline(&cfg, 5000);
  bw_pipeline_add_timeout(&cfg, 2000);
  build(e, &cfg);
  bw_pipeline_call_t c;
  /* The inbound request has 300 ms left: it wins over the 5 s. */
  assert_int_equal(
      bw_pipeline_begin_at(e->pl, &c, bw_deadline_in(now(e), 300), now(e)),
      BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, 300);
  bw_pipeline_cancel(&c);
  /* The thread's deadline is taken by bw_pipeline_begin. */
  bw_deadline_set(bw_deadline_in(now(e), 70));
  BEGIN(&c, BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, 70);
  bw_pipeline_cancel(&c);
  /* Already expired: refused before any attempt. */
  advance_ms(e, 70);
  BEGIN(&c, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_DEADLINE);
  assert_u64_eq(c.attempt, 0);
  bw_deadline_set(bw_deadline_none());
}

/* ---- verdicts, hints and reasons ---------------------------------------- */

static void test_retry_after_hint_and_permanent(void **state) {
  env_t *e = *state;
  breaker_retry_pipeline(e, 5, 3, false);
  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  /* A 429 with Retry-After: 2 s: the hint is the minimum delay. */
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT, 2000, now(e)),
                   BW_STEP_WAIT);
  assert_i64_eq(c.delay_ms, 2000);
  advance_ms(e, 2000);
  RESUME(&c, BW_STEP_ATTEMPT);
  /* A 4xx: permanent, no retry, and the breaker ignores it. */
  REPORT(&c, BW_VERDICT_PERMANENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_PERMANENT);
  bw_breaker_stats_t s = bstats(e);
  assert_u64_eq(s.ignored, 1);
  assert_u64_eq(s.failures, 0);
  /* Pushback "do not retry". */
  BEGIN(&c, BW_STEP_ATTEMPT);
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT,
                                      BW_RETRY_AFTER_NEVER, now(e)),
                   BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_RETRY_AFTER);
}

static void test_budget_failure_reason(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, make_retry(e, 3, true));
  build(e, &cfg);
  bw_pipeline_call_t c;
  /* max_tokens 2: the first failure leaves 1 token, not > 1: no retry. */
  BEGIN(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BUDGET);
  assert_int_equal(e->fallback_why, BW_FAILURE_BUDGET);
}

static void test_no_retry_single_attempt(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  build(e, &cfg);
  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  assert_null(bw_pipeline_attach_key(&c, 1786111923418));
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_EXHAUSTED);
  /* A report when none is expected is refused and changes nothing. */
  assert_status(
      bw_pipeline_report(&c, BW_VERDICT_OK, BW_RETRY_AFTER_NONE, now(e)),
      BW_E_INVAL);
  assert_status(bw_pipeline_resume(&c, now(e)), BW_E_INVAL);
  assert_int_equal(c.failure, BW_FAILURE_EXHAUSTED);
}

static void test_idempotency_key_allows_non_idempotent_retry(void **state) {
  env_t *e = *state;
  bw_retry_config_t rc;
  bw_error_t err;
  bw_retry_config_init(&rc);
  rc.max_attempts = 2;
  rc.backoff = BW_BACKOFF_CONSTANT;
  rc.base_ms = 10;
  rc.jitter = BW_JITTER_NONE;
  rc.idempotent = false;
  e->retry = bw_retry_policy_new(&rc, &err);
  assert_non_null(e->retry);
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, e->retry);
  build(e, &cfg);
  bw_pipeline_call_t c;
  /* Without a key: a transient failure of a non-idempotent call is final. */
  BEGIN(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_NOT_IDEMPOTENT);
  /* With a key it is retried, and the key stays the same. */
  BEGIN(&c, BW_STEP_ATTEMPT);
  const char *k1 = bw_pipeline_attach_key(&c, 1786111923418);
  assert_non_null(k1);
  assert_int_equal(strlen(k1), 36);
  char saved[37];
  memcpy(saved, k1, 37);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, c.delay_ms);
  RESUME(&c, BW_STEP_ATTEMPT);
  assert_string_equal(bw_pipeline_attach_key(&c, 1786111923999), saved);
  REPORT(&c, BW_VERDICT_OK, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_NONE);
}

/* ---- cancel, stats, execute ------------------------------------------- */

static void test_cancel_leaves_everything_and_stats_conserve(void **state) {
  env_t *e = *state;
  bw_limit_t *l = bw_bulkhead_as_limit(make_bulkhead(e, 2));
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_limit(&cfg, l, 0);
  bw_pipeline_add_breaker(&cfg, make_breaker(e, 5));
  bw_pipeline_add_retry(&cfg, make_retry(e, 2, false));
  build(e, &cfg);
  bw_pipeline_call_t a, b, d;
  BEGIN(&a, BW_STEP_ATTEMPT);
  BEGIN(&b, BW_STEP_ATTEMPT);
  BEGIN(&d, BW_STEP_DONE);
  assert_int_equal(d.failure, BW_FAILURE_LIMIT);
  bw_pipeline_cancel(&a);
  assert_u64_eq(bw_limit_in_flight(l), 1);
  bw_pipeline_cancel(&a); /* twice: nothing more */
  assert_u64_eq(bw_limit_in_flight(l), 1);
  REPORT(&b, BW_VERDICT_OK, BW_STEP_DONE);
  assert_u64_eq(bw_limit_in_flight(l), 0);
  bw_breaker_stats_t s = bstats(e);
  assert_u64_eq(s.ignored, 1); /* the cancelled call */
  assert_u64_eq(s.successes, 1);
  bw_pipeline_stats_t ps;
  bw_pipeline_stats(e->pl, &ps);
  assert_u64_eq(ps.calls, 3);
  assert_u64_eq(ps.attempts, 2);
  assert_u64_eq(ps.successes, 1);
  assert_u64_eq(ps.failures[BW_FAILURE_LIMIT], 1);
  assert_u64_eq(ps.cancelled, 1);
  uint64_t ended = ps.successes + ps.cancelled;
  for (int f = 1; f < BW_FAILURE__COUNT; f++)
    ended += ps.failures[f];
  assert_u64_eq(ended, ps.calls);
}

typedef struct script_s {
  int calls;
  bw_verdict_t verdicts[4];
} script_t;

static bw_verdict_t scripted(void *userdata, const bw_pipeline_call_t *call,
                             int64_t *retry_after_ms) {
  script_t *s = userdata;
  (void)call;
  *retry_after_ms = BW_RETRY_AFTER_NONE;
  return s->verdicts[s->calls++];
}

static void test_execute_runs_to_the_end(void **state) {
  env_t *e = *state;
  bw_retry_config_t rc;
  bw_error_t err;
  bw_retry_config_init(&rc);
  rc.max_attempts = 3;
  rc.backoff = BW_BACKOFF_CONSTANT;
  rc.base_ms = 1; /* real sleeps: 2 x 1 ms */
  rc.jitter = BW_JITTER_NONE;
  e->retry = bw_retry_policy_new(&rc, &err);
  assert_non_null(e->retry);
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, e->retry);
  build(e, &cfg);
  script_t s = {0,
                {BW_VERDICT_TRANSIENT, BW_VERDICT_TRANSIENT, BW_VERDICT_OK,
                 BW_VERDICT_OK}};
  bw_pipeline_call_t c;
  assert_int_equal(bw_pipeline_execute(e->pl, NULL, scripted, &s, &c),
                   BW_FAILURE_NONE);
  assert_int_equal(s.calls, 3);
  assert_u64_eq(c.attempt, 3);
  assert_status(bw_pipeline_execute(NULL, NULL, scripted, &s, NULL),
                BW_E_INVAL);
}

/* ---- configuration ----------------------------------------------------- */

static void test_config_errors_name_the_strategy(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t cfg;
  bw_error_t err;
  make_retry(e, 3, false);

  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, e->retry);
  bw_pipeline_add_deadline(&cfg, 100);
  bwt_prefill_error(&err);
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_contains(err.message, "strategies[1]: a deadline must come before");

  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_timeout(&cfg, 100);
  bw_pipeline_add_retry(&cfg, e->retry);
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_contains(err.message, "strategies[0]: a timeout must come after");

  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, e->retry);
  bw_pipeline_add_retry(&cfg, e->retry);
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "strategies[1]"));
  assert_contains(err.message, "at most one retry");

  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_deadline(&cfg, 0);
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "strategies[0]"));
  assert_contains(err.message, "strategies[0].ms must be in [1, ");

  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_limit(&cfg, bw_bulkhead_as_limit(make_bulkhead(e, 1)), -1);
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_contains(err.message, "strategies[0].max_wait_ms must be in [0, ");

  bw_pipeline_config_init(&cfg);
  cfg.strategies[0].kind = (bw_strategy_kind_t)99;
  cfg.count = 1;
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_contains(err.message, "strategies[0].kind must be");

  bw_pipeline_config_init(&cfg);
  cfg.name = "";
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "name"));

  bw_pipeline_config_init(&cfg);
  for (int i = 0; i < BW_PIPELINE_MAX_STRATEGIES; i++)
    assert_status(bw_pipeline_add_timeout(&cfg, 1), BW_OK);
  assert_status(bw_pipeline_add_timeout(&cfg, 1), BW_E_LIMIT);
  assert_status(bw_pipeline_add_breaker(&cfg, NULL), BW_E_INVAL);

  assert_string_equal(bw_failure_name(BW_FAILURE_RETRY_AFTER), "retry_after");
  assert_string_equal(bw_failure_name((bw_failure_t)99), "unknown");
  assert_string_equal(bw_strategy_kind_name(BW_STRATEGY_TIMEOUT), "timeout");
  assert_status(bw_pipeline_begin(NULL, NULL, 0), BW_E_INVAL);
}

/* An adaptive limiter from 10 that gives up on stuck attempts
 * (stuck_ratio 2, stuck_timeout), on the env's clock. */
static bw_limiter_t *stuck_limiter(env_t *e) {
  bw_limiter_config_t lc;
  bw_limiter_config_init(&lc);
  lc.initial_limit = 10;
  lc.stuck_ratio = 2.0;
  lc.stuck_timeout = true;
  lc.clock = e->clock;
  bw_limiter_t *lim = bw_limiter_new(&lc, NULL);
  assert_non_null(lim);
  return lim;
}

/* The env's pipeline: retry, then lim (no wait for a slot), then a 2 s
 * attempt timeout: the limiter inside the retry. */
static void build_limit_inside(env_t *e, bw_retry_policy_t *retry,
                               bw_limiter_t *lim) {
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, retry);
  bw_pipeline_add_limit(&cfg, bw_limiter_as_limit(lim), 0);
  bw_pipeline_add_timeout(&cfg, 2000);
  build(e, &cfg);
}

/* On the env's pipeline (build_limit_inside, a fresh stuck_limiter): 16
 * calls one after another, each keeping its own 2 s (no stuck age the
 * limiter trusts yet) and answered in 100 ms (proven 1, stuck age 200 ms,
 * set by 16 good answers); then b, admitted at level 1 (a proven level),
 * keeps its own 2 s, and c, at level 2 above it, is cut to 200 ms, which
 * have passed on return. */
static void b_holds_c_is_cut(env_t *e, bw_pipeline_call_t *b,
                             bw_pipeline_call_t *c) {
  bw_pipeline_call_t a;
  for (int i = 0; i < 16; i++) {
    BEGIN(&a, BW_STEP_ATTEMPT);
    assert_i64_eq(a.attempt_timeout_ms, 2000);
    advance_ms(e, 100);
    REPORT(&a, BW_VERDICT_OK, BW_STEP_DONE);
  }
  BEGIN(b, BW_STEP_ATTEMPT);
  assert_i64_eq(b->attempt_timeout_ms, 2000);
  BEGIN(c, BW_STEP_ATTEMPT);
  assert_i64_eq(c->attempt_timeout_ms, 200);
  advance_ms(e, 200);
}

/* A limiter with stuck_timeout inside the retry cuts the attempt of a call
 * admitted above its proven level to its stuck age (stuck_ratio x the
 * slowest good answer); a proven level, a limit outside the retry and a
 * limit without the table bit keep the attempt's own timeout. */
static void test_a_limiter_inside_the_retry_cuts_a_stuck_attempt(void **state) {
  env_t *e = *state;
  bw_limiter_stats_t s;
  bw_pipeline_call_t a, b, c;
  bw_limiter_t *lim = stuck_limiter(e);
  build_limit_inside(e, make_retry(e, 2, false), lim);
  b_holds_c_is_cut(e, &b, &c);
  /* Given up, and retried at once: no backoff (the retry's would be
   * 100 ms), the limit paces it, and a slot is free (3 of 10). */
  assert_int_equal(bw_pipeline_report_timeout(&c, now(e)), BW_STEP_ATTEMPT);
  assert_int_equal(c.attempt, 2);
  assert_i64_eq(c.delay_ms, 0);
  bw_limiter_stats(lim, &s);
  assert_u64_eq(s.stuck_timeouts, 1);
  assert_u64_eq(s.timed_out, 1);
  assert_u64_eq(s.held, 1);      /* the partner may still be at it */
  assert_u64_eq(s.in_flight, 3); /* b, the held slot, the retry */
  bw_pipeline_cancel(&c);
  REPORT(&b, BW_VERDICT_OK, BW_STEP_DONE);
  bw_pipeline_free(e->pl);
  e->pl = NULL;
  bw_limiter_free(lim);
  /* Outside the retry the permit is the call's, never cut: a fresh limiter
   * that has seen the same 16 good answers (proven 1, stuck age 200 ms). */
  bw_permit_t p;
  bw_pipeline_config_t cfg;
  lim = stuck_limiter(e);
  for (int i = 0; i < 16; i++) {
    assert_status(bw_limiter_try_acquire(lim, &p), BW_OK);
    advance_ms(e, 100);
    assert_status(bw_limiter_release(lim, &p, BW_LIMIT_SUCCESS), BW_OK);
  }
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_limit(&cfg, bw_limiter_as_limit(lim), 0);
  bw_pipeline_add_retry(&cfg, e->retry);
  bw_pipeline_add_timeout(&cfg, 2000);
  build(e, &cfg);
  BEGIN(&a, BW_STEP_ATTEMPT);
  BEGIN(&b, BW_STEP_ATTEMPT);
  bw_limiter_stats(lim, &s);
  assert_true(s.in_flight > s.proven); /* b is above the proven level */
  assert_i64_eq(b.attempt_timeout_ms, 2000);
  bw_pipeline_cancel(&a);
  bw_pipeline_cancel(&b);
  bw_pipeline_free(e->pl);
  e->pl = NULL;
  /* By hand, the second call's attempt would be cut. */
  bw_permit_t q;
  assert_status(bw_limiter_try_acquire(lim, &p), BW_OK);
  assert_status(bw_limiter_try_acquire(lim, &q), BW_OK);
  assert_u64_eq(q.inflight_at_acquire, 2);
  assert_i64_eq(bw_limiter_attempt_timeout(lim, &p, 2000), 2000);
  assert_i64_eq(bw_limiter_attempt_timeout(lim, &q, 2000), 200);
  assert_u64_eq(q.flags & BW_PERMIT_FLAG_STUCK_TIMEOUT,
                BW_PERMIT_FLAG_STUCK_TIMEOUT);
  assert_u64_eq(q.timeout_ms, 2000);
  assert_status(bw_limiter_release(lim, &p, BW_LIMIT_IGNORED), BW_OK);
  assert_status(bw_limiter_release(lim, &q, BW_LIMIT_IGNORED), BW_OK);
  /* A bulkhead has no attempt_timeout: the generic call keeps the limit. */
  bw_limit_t *bh = bw_bulkhead_as_limit(make_bulkhead(e, 1));
  assert_status(bw_limit_try_acquire(bh, &p), BW_OK);
  assert_i64_eq(bw_limit_attempt_timeout(bh, &p, 2000), 2000);
  assert_u64_eq(p.flags, 0);
  assert_status(bw_limit_release(bh, &p, BW_LIMIT_SUCCESS), BW_OK);
  assert_i64_eq(bw_limit_attempt_timeout(NULL, &p, 2000), 2000);
  bw_limiter_free(lim);
}

/* An attempt that timed out reaches the limits as TIMED_OUT: an adaptive
 * limiter keeps its slot a while (the dependency may still be at it). */
static void test_a_timed_out_attempt_reaches_the_limit_as_timed_out(
    void **state) {
  env_t *e = *state;
  bw_limiter_config_t lc;
  bw_limiter_config_init(&lc);
  lc.initial_limit = 10;
  lc.clock = e->clock;
  bw_limiter_t *lim = bw_limiter_new(&lc, NULL);
  assert_non_null(lim);
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_limit(&cfg, bw_limiter_as_limit(lim), 0);
  bw_pipeline_add_retry(&cfg, make_retry(e, 2, false));
  build(e, &cfg);
  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  advance_ms(e, 2000);
  assert_int_equal(bw_pipeline_report_timeout(&c, now(e)), BW_STEP_WAIT);
  advance_ms(e, c.delay_ms);
  RESUME(&c, BW_STEP_ATTEMPT);
  advance_ms(e, 2000);
  assert_int_equal(bw_pipeline_report_timeout(&c, now(e)), BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_EXHAUSTED);
  assert_int_equal(c.last_verdict, BW_VERDICT_TRANSIENT);
  bw_limiter_stats_t s;
  bw_limiter_stats(lim, &s);
  assert_u64_eq(s.timed_out, 1); /* the limit was entered once, outside */
  assert_u64_eq(s.held, 1);
  assert_u64_eq(s.in_flight, 1);
  /* A report_timeout when no attempt is out is refused. */
  assert_status(bw_pipeline_report_timeout(&c, now(e)), BW_E_INVAL);
  /* A plain transient report is a DROPPED: nothing held. */
  BEGIN(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, c.delay_ms);
  RESUME(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  bw_limiter_stats(lim, &s);
  assert_u64_eq(s.timed_out, 1);
  assert_u64_eq(s.held, 1);
  bw_pipeline_free(e->pl);
  e->pl = NULL;
  bw_limiter_free(lim);
}

/* The strategies inside the retry are entered again for each attempt; when
 * one of them refuses before the attempt goes out, the others entered for
 * it are left IGNORED, not with the previous attempt's outcome. */
static void test_an_attempt_that_never_went_out_counts_nothing(void **state) {
  env_t *e = *state;
  bw_ratelimit_config_t rc;
  bw_ratelimit_config_init(&rc);
  rc.rate_per_sec = 1; /* one token now, the next in 1 s */
  rc.burst = 1;
  rc.clock = e->clock;
  e->rl = bw_ratelimit_new(&rc, NULL);
  assert_non_null(e->rl);
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_retry(&cfg, make_retry(e, 3, false));
  bw_pipeline_add_breaker(&cfg, make_breaker(e, 5));
  bw_pipeline_add_ratelimit(&cfg, e->rl, 0);
  build(e, &cfg);
  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, c.delay_ms); /* 100 ms: no token yet */
  RESUME(&c, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_RATELIMIT);
  assert_u64_eq(c.attempt, 1);
  bw_breaker_stats_t s = bstats(e);
  assert_u64_eq(s.admitted, 2);
  assert_u64_eq(s.failures, 1); /* the one attempt made */
  assert_u64_eq(s.ignored, 1);  /* the one that never went out */

  /* The same when the deadline passes before the second attempt. */
  bw_pipeline_free(e->pl);
  bw_breaker_free(e->breaker);
  bw_retry_policy_free(e->retry);
  bw_limiter_config_t lc;
  bw_limiter_config_init(&lc);
  lc.initial_limit = 10;
  lc.clock = e->clock;
  bw_limiter_t *lim = bw_limiter_new(&lc, NULL);
  assert_non_null(lim);
  bw_pipeline_config_init(&cfg);
  bw_pipeline_add_deadline(&cfg, 150);
  bw_pipeline_add_retry(&cfg, make_retry(e, 3, false));
  bw_pipeline_add_limit(&cfg, bw_limiter_as_limit(lim), 0);
  bw_pipeline_add_breaker(&cfg, make_breaker(e, 5));
  build(e, &cfg);
  BEGIN(&c, BW_STEP_ATTEMPT);
  advance_ms(e, 10);
  assert_int_equal(bw_pipeline_report_timeout(&c, now(e)), BW_STEP_WAIT);
  advance_ms(e, c.delay_ms); /* 110 ms in: the second attempt goes out */
  RESUME(&c, BW_STEP_ATTEMPT);
  bw_limiter_stats_t ls;
  bw_limiter_stats(lim, &ls);
  assert_u64_eq(ls.timed_out, 1);
  bw_pipeline_cancel(&c);
  bw_limiter_stats(lim, &ls);
  assert_u64_eq(ls.timed_out, 1); /* cancelled: IGNORED, not TIMED_OUT */
  bw_pipeline_free(e->pl);
  e->pl = NULL;
  bw_limiter_free(lim);
}

/* ---- any breaker through the breaker interface ------------------------- */

static int64_t kit_now(void *ud) {
  return now(ud);
}
static void kit_advance(void *ud, int64_t ms) {
  advance_ms(ud, ms);
}
static uint64_t kit_failures(void *ud) {
  return bstats(ud).failures;
}

/* The behaviour test_shm and test_store_redis run with their breakers. */
static void test_breaker_interface_in_a_pipeline(void **state) {
  env_t *e = *state;
  make_breaker(e, 2);
  bw_breaker_if_t *bi = bw_breaker_iface(e->breaker);
  assert_ptr_equal(bi, (void *)e->breaker); /* the first member */
  assert_string_equal(bw_breaker_if_kind(bi), "breaker");
  assert_string_equal(bw_breaker_if_name(bi), "partner");
  bwt_brk_kit_t k = {bi, e, kit_now, kit_advance, NULL, kit_failures};
  bwt_breaker_pipeline_behaviour(&k);
  assert_int_equal(bw_breaker_if_retry_in_ms(bi),
                   bw_breaker_retry_in_ms(e->breaker));
  /* The interface's release takes any outcome: TIMED_OUT is a failure; the
   * direct release keeps its contract (BW_E_INVAL for it). */
  bw_breaker_reset(e->breaker);
  bw_permit_t p;
  assert_status(bw_breaker_if_try_acquire(bi, &p), BW_OK);
  assert_status(bw_breaker_release(e->breaker, &p, BW_TIMED_OUT), BW_E_INVAL);
  assert_status(bw_breaker_if_release(bi, &p, BW_TIMED_OUT), BW_OK);
  assert_u64_eq(bstats(e).failures, 3);
}

/* ---- a user's strategy --------------------------------------------------- */

/* Counts the calls it wraps; refuses while `refuse` is set, with the hint
 * `hint_ms` (-1: do not wait). */
typedef struct counter_s {
  bw_strategy_if_t head;
  int enters;
  int leaves;
  int refusals;
  bw_outcome_t outcomes[8];
  bool refuse;
  int64_t hint_ms;
  uint32_t last_asks;
  bw_failure_t failure;
} counter_t;

static int counter_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                         int64_t now_ns, bw_refusal_t *r) {
  counter_t *k = (counter_t *)s;
  (void)now_ns;
  k->last_asks = ctx->asks;
  if (k->refuse) {
    k->refusals++;
    r->failure = k->failure;
    r->retry_in_ms = k->hint_ms;
    return BW_E_FULL;
  }
  ctx->permit->start_ns = (int64_t)k->enters; /* per-call state */
  k->enters++;
  return BW_OK;
}

static void counter_leave(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                          bw_outcome_t o) {
  counter_t *k = (counter_t *)s;
  assert_i64_eq(ctx->permit->start_ns, k->leaves); /* its own slot back */
  k->outcomes[k->leaves++ & 7] = o;
}

static const char *counter_name(const bw_strategy_if_t *s) {
  (void)s;
  return "calls";
}

static const bw_strategy_vtable_t counter_vt = {"counter", counter_enter,
                                                counter_leave, counter_name};

/* Two failed attempts, then a success. */
static void fail_twice_then_succeed(env_t *e) {
  bw_pipeline_call_t c;
  BEGIN(&c, BW_STEP_ATTEMPT);
  for (int i = 0; i < 2; i++) {
    REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
    advance_ms(e, c.delay_ms);
    RESUME(&c, BW_STEP_ATTEMPT);
  }
  REPORT(&c, BW_VERDICT_OK, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_NONE);
}

static void test_a_users_strategy_counts_calls_outside_and_attempts_inside(
    void **state) {
  env_t *e = *state;
  counter_t out = {{&counter_vt}, 0, 0, 0, {0}, false, -1, 0, BW_FAILURE_LIMIT};
  counter_t in = out;
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  assert_status(bw_pipeline_add_strategy(&cfg, &out.head, 0), BW_OK);
  assert_status(bw_pipeline_add_retry(&cfg, make_retry(e, 3, false)), BW_OK);
  assert_status(bw_pipeline_add_strategy(&cfg, &in.head, 0), BW_OK);
  assert_int_equal(cfg.strategies[0].kind, BW_STRATEGY_CUSTOM);
  build(e, &cfg);
  fail_twice_then_succeed(e);
  /* Outside the retry: one logical call, left once with its outcome. */
  assert_int_equal(out.enters, 1);
  assert_int_equal(out.leaves, 1);
  assert_int_equal(out.outcomes[0], BW_SUCCESS);
  /* Inside: every attempt, each left with its own outcome. */
  assert_int_equal(in.enters, 3);
  assert_int_equal(in.leaves, 3);
  assert_int_equal(in.outcomes[0], BW_FAILURE);
  assert_int_equal(in.outcomes[1], BW_FAILURE);
  assert_int_equal(in.outcomes[2], BW_SUCCESS);
  assert_string_equal(bw_strategy_if_kind(&in.head), "counter");
  assert_string_equal(bw_strategy_if_name(&in.head), "calls");
  assert_string_equal(bw_strategy_kind_name(BW_STRATEGY_CUSTOM), "custom");
  assert_string_equal(bw_strategy_if_name(NULL), "");
}

static void test_a_users_refusal_waits_as_hinted_or_ends_the_call(
    void **state) {
  env_t *e = *state;
  counter_t k = {{&counter_vt}, 0, 0, 0, {0}, true, 20, 0, BW_FAILURE_LIMIT};
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  assert_status(bw_pipeline_add_strategy(&cfg, &k.head, 50), BW_OK);
  build(e, &cfg);
  bw_pipeline_call_t c;
  /* A hint of 20 ms within a 50 ms wait: WAIT 20, 20, then the 10 left. */
  BEGIN(&c, BW_STEP_WAIT);
  assert_i64_eq(c.delay_ms, 20);
  assert_u64_eq(k.last_asks, 0);
  advance_ms(e, 20);
  RESUME(&c, BW_STEP_WAIT);
  assert_u64_eq(k.last_asks, 1);
  advance_ms(e, 20);
  RESUME(&c, BW_STEP_WAIT);
  assert_i64_eq(c.delay_ms, 10);
  k.refuse = false;
  advance_ms(e, 10);
  RESUME(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_PERMANENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_PERMANENT);
  assert_int_equal(k.leaves, 1);
  assert_int_equal(k.outcomes[0], BW_IGNORED);
  /* No hint: the call ends at once, with the strategy's failure kind. */
  k.refuse = true;
  k.hint_ms = -1;
  BEGIN(&c, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_LIMIT);
  assert_int_equal(k.refusals, 4);
  assert_int_equal(k.leaves, 1); /* a refused enter is never left */
  k.failure = (bw_failure_t)77;  /* a bad kind is taken as LIMIT */
  BEGIN(&c, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_LIMIT);
  k.failure = BW_FAILURE_RATELIMIT;
  BEGIN(&c, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_RATELIMIT);

  /* A strategy without a table is refused. */
  bw_pipeline_config_init(&cfg);
  bw_strategy_if_t bad = {NULL};
  assert_status(bw_pipeline_add_strategy(&cfg, &bad, 0), BW_E_INVAL);
  assert_status(bw_pipeline_add_strategy(&cfg, NULL, 0), BW_E_INVAL);
  static const bw_strategy_vtable_t no_enter = {"x", NULL, NULL, counter_name};
  bad.vt = &no_enter;
  cfg.strategies[0].kind = BW_STRATEGY_CUSTOM;
  cfg.strategies[0].object = &bad;
  cfg.count = 1;
  bw_error_t err;
  assert_null(bw_pipeline_new(&cfg, &err));
  assert_contains(err.message, "strategies[0].object's table must be set");
}

/* ---- events ------------------------------------------------------------ */

/* A cut attempt (stuck_timeout) is retried without the retry's backoff:
 * its limit paces it. Retry: 3 attempts, a constant 100 ms, its events
 * recorded. After one good answer of 100 ms (proven 1, stuck age 200 ms),
 * b holds level 1 and c, at level 2, is cut to 200 ms: its timeout
 * schedules the retry in 0 ms, "paced by its limit", and the retry goes
 * out at once (level 3, cut too). When that one times out the first probe
 * is stuck and the limit falls to the proven 1: the next retry, also at
 * once, meets the full limit and the call ends there (a limit that does
 * not wait). b's own timeout, not a cut, waits the 100 ms backoff. */
static void test_a_cut_attempt_is_retried_paced_by_its_limit(void **state) {
  env_t *e = *state;
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_retry_config_t rc;
  bw_pipeline_call_t b, c;
  assert_non_null(rec);
  bw_sink_t *sink = bw_sink_callback_new(bwt_record_cb, rec, NULL);
  assert_non_null(sink);
  bw_retry_config_init(&rc);
  rc.max_attempts = 3;
  rc.backoff = BW_BACKOFF_CONSTANT;
  rc.base_ms = 100;
  rc.jitter = BW_JITTER_NONE;
  rc.sink = sink;
  rc.wall_clock = e->clock;
  e->retry = bw_retry_policy_new(&rc, NULL);
  assert_non_null(e->retry);
  bw_limiter_t *lim = stuck_limiter(e);
  build_limit_inside(e, e->retry, lim);
  b_holds_c_is_cut(e, &b, &c);
  assert_int_equal(bw_pipeline_report_timeout(&c, now(e)), BW_STEP_ATTEMPT);
  assert_int_equal(c.attempt, 2);
  assert_i64_eq(c.attempt_timeout_ms, 200); /* level 3: cut again */
  assert_int_equal(rec->count, 1);
  assert_int_equal(bwt_event_at(rec, 0)->type, BW_EV_RETRY_SCHEDULED);
  assert_string_equal(bwt_event_at(rec, 0)->reason,
                      "transient failure, retry 1 of 2 in 0 ms (paced by its "
                      "limit)");
  assert_field_int(bwt_event_at(rec, 0), 1, "delay_ms", 0);
  advance_ms(e, 200);
  assert_int_equal(bw_pipeline_report_timeout(&c, now(e)), BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_LIMIT);
  assert_int_equal(c.attempt, 2);
  assert_u64_eq(bw_limiter_limit(lim), 1);
  assert_int_equal(rec->count, 3);
  assert_string_equal(bwt_event_at(rec, 1)->reason,
                      "transient failure, retry 2 of 2 in 0 ms (paced by its "
                      "limit)");
  assert_int_equal(bwt_event_at(rec, 2)->type, BW_EV_RETRY_GAVE_UP);
  assert_string_equal(bwt_event_at(rec, 2)->reason,
                      "rejected by a breaker, bulkhead or limiter: never "
                      "retried");
  /* b, at the proven level, times out on its own 2 s: the backoff. */
  advance_ms(e, 1600);
  assert_int_equal(bw_pipeline_report_timeout(&b, now(e)), BW_STEP_WAIT);
  assert_i64_eq(b.delay_ms, 100);
  assert_string_equal(bwt_event_at(rec, 3)->reason,
                      "transient failure, retry 1 of 2 in 100 ms");
  bw_pipeline_cancel(&b);
  bw_pipeline_free(e->pl);
  e->pl = NULL;
  bw_limiter_free(lim);
  bw_sink_free(sink);
  free(rec);
}

/* min_attempt_ms: an attempt goes out only with at least that much of the
 * call's deadline left; with less, the call ends with `deadline` and the
 * breaker inside the retry, entered for it, is left IGNORED (nothing went
 * out). Deadline 1 s, 3 attempts 100 ms apart, min_attempt_ms 200: the
 * second attempt leaves at 800 ms with exactly 200 ms left and goes out;
 * the third would leave at 950 ms with 50 ms left. With 0 (off) it goes. */
static void test_an_attempt_needs_min_attempt_ms_left(void **state) {
  env_t *e = *state;
  bw_error_t err;
  make_retry(e, 3, false);
  for (int64_t min = 200; min >= 0; min -= 200) {
    bw_pipeline_config_t cfg;
    bw_pipeline_call_t c;
    bw_pipeline_config_init(&cfg);
    cfg.min_attempt_ms = min;
    bw_pipeline_add_deadline(&cfg, 1000);
    bw_pipeline_add_retry(&cfg, e->retry);
    bw_pipeline_add_breaker(&cfg, make_breaker(e, 5));
    build(e, &cfg);
    BEGIN(&c, BW_STEP_ATTEMPT);
    advance_ms(e, 700);
    REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
    advance_ms(e, c.delay_ms);
    RESUME(&c, BW_STEP_ATTEMPT); /* 800 ms: 200 left */
    assert_i64_eq(c.attempt_timeout_ms, 200);
    advance_ms(e, 50);
    REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
    advance_ms(e, c.delay_ms); /* 950 ms: 50 left */
    if (min > 0) {
      RESUME(&c, BW_STEP_DONE);
      assert_int_equal(c.failure, BW_FAILURE_DEADLINE);
      assert_u64_eq(c.attempt, 2);
      bw_breaker_stats_t s = bstats(e);
      assert_u64_eq(s.admitted, 3);
      assert_u64_eq(s.failures, 2);
      assert_u64_eq(s.ignored, 1); /* the attempt not sent */
    } else {
      RESUME(&c, BW_STEP_ATTEMPT);
      assert_u64_eq(c.attempt, 3);
      assert_i64_eq(c.attempt_timeout_ms, 50);
      bw_pipeline_cancel(&c);
    }
    bw_pipeline_free(e->pl);
    e->pl = NULL;
    bw_breaker_free(e->breaker);
    e->breaker = NULL;
  }
  /* Out of range: named. */
  bw_pipeline_config_t bad;
  bw_pipeline_config_init(&bad);
  bad.min_attempt_ms = -1;
  assert_status(bw_pipeline_config_validate(&bad, &err), BW_E_INVAL);
  assert_string_equal(err.field, "min_attempt_ms");
  assert_string_equal(err.message,
                      "min_attempt_ms must be in [0, 86400000], "
                      "0 for off (got -1)");
  bad.min_attempt_ms = 86400001;
  assert_status(bw_pipeline_config_validate(&bad, &err), BW_E_INVAL);
  assert_string_equal(err.field, "min_attempt_ms");
}

/* A call that ends in a failure emits one pipeline_gave_up with its failure
 * kind, attempts and time taken, at the now_ns it was driven with; a call
 * that succeeds emits none. */
static void test_a_give_up_is_an_event(void **state) {
  env_t *e = *state;
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_sink_t *sink;
  bw_pipeline_config_t cfg;
  bw_pipeline_call_t c;
  const bwt_event_t *ev;
  assert_non_null(rec);
  sink = bw_sink_callback_new(bwt_record_cb, rec, NULL);
  assert_non_null(sink);
  bw_pipeline_config_init(&cfg);
  cfg.name = "checkout";
  cfg.sink = sink;
  cfg.wall_clock = e->clock;
  bw_pipeline_add_breaker(&cfg, make_breaker(e, 2));
  bw_pipeline_add_retry(&cfg, make_retry(e, 2, false));
  build(e, &cfg);

  BEGIN(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_OK, BW_STEP_DONE);
  assert_int_equal(rec->count, 0);

  BEGIN(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, 100);
  RESUME(&c, BW_STEP_ATTEMPT);
  advance_ms(e, 20);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_EXHAUSTED);
  assert_int_equal(rec->count, 1);
  ev = bwt_event_at(rec, 0);
  assert_int_equal(ev->type, BW_EV_PIPELINE_GAVE_UP);
  assert_string_equal(ev->name, "checkout");
  assert_string_equal(ev->reason, "gave up (exhausted) after 2 attempts");
  assert_int_equal(ev->field_count, 3);
  assert_field_str(ev, 0, "failure", "exhausted");
  assert_field_uint(ev, 1, "attempts", 2);
  assert_field_int(ev, 2, "elapsed_ms", 120);
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 120 * MS);
  assert_i64_eq(ev->wall_ns, BWT_T0_NS + 120 * MS);
  assert_int_equal(e->fallback_calls, 1);

  BEGIN(&c, BW_STEP_ATTEMPT); /* the second failed call opens the breaker */
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_WAIT);
  advance_ms(e, 100);
  RESUME(&c, BW_STEP_ATTEMPT);
  REPORT(&c, BW_VERDICT_TRANSIENT, BW_STEP_DONE);
  assert_int_equal(rec->count, 2);
  assert_field_str(bwt_event_at(rec, 1), 0, "failure", "exhausted");
  assert_field_uint(bwt_event_at(rec, 1), 1, "attempts", 2);
  assert_field_int(bwt_event_at(rec, 1), 2, "elapsed_ms", 100);
  assert_int_equal(bw_breaker_state(e->breaker), BW_OPEN);
  BEGIN(&c, BW_STEP_DONE); /* refused by the open breaker */
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
  assert_int_equal(rec->count, 3);
  ev = bwt_event_at(rec, 2);
  assert_string_equal(ev->reason, "gave up (breaker) after 0 attempts");
  assert_field_str(ev, 0, "failure", "breaker");
  assert_field_uint(ev, 1, "attempts", 0);
  assert_field_int(ev, 2, "elapsed_ms", 0);
  assert_int_equal(e->fallback_calls, 3);
  bw_pipeline_free(e->pl);
  e->pl = NULL;
  bw_sink_free(sink);
  free(rec);
}

/* ---- reading the strategies back ---------------------------------------- */

/* A pipeline hands back the strategies it was made with, outermost first,
 * every field as configured; the copy is the pipeline's own, so changing
 * the configuration afterwards changes nothing. */
static void test_the_strategies_read_back_as_configured(void **state) {
  env_t *e = *state;
  bw_breaker_t *b = make_breaker(e, 5);
  bw_retry_policy_t *r = make_retry(e, 3, false);
  bw_limit_t *l = bw_bulkhead_as_limit(make_bulkhead(e, 2));
  bw_pipeline_config_t cfg;
  bw_pipeline_config_init(&cfg);
  assert_int_equal(bw_pipeline_add_deadline(&cfg, 5000), BW_OK);
  assert_int_equal(bw_pipeline_add_breaker(&cfg, b), BW_OK);
  assert_int_equal(bw_pipeline_add_retry(&cfg, r), BW_OK);
  assert_int_equal(bw_pipeline_add_limit(&cfg, l, 1500), BW_OK);
  cfg.strategies[3].poll_ms = 7; /* not the default 5: read back as set */
  assert_int_equal(bw_pipeline_add_timeout(&cfg, 2000), BW_OK);
  build(e, &cfg);
  cfg.strategies[0].ms = 1; /* the pipeline keeps its own copy */
  cfg.count = 1;

  assert_int_equal(bw_pipeline_strategy_count(e->pl), 5);
  const struct {
    bw_strategy_kind_t kind;
    void *object;
    int64_t ms, max_wait_ms, poll_ms;
  } want[5] = {
      {BW_STRATEGY_DEADLINE, NULL, 5000, 0, 0},
      {BW_STRATEGY_BREAKER, bw_breaker_iface(b), 0, 0, 0},
      {BW_STRATEGY_RETRY, r, 0, 0, 0},
      {BW_STRATEGY_LIMIT, l, 0, 1500, 7},
      {BW_STRATEGY_TIMEOUT, NULL, 2000, 0, 0},
  };
  for (uint32_t i = 0; i < 5; i++) {
    bw_strategy_t s;
    memset(&s, 0xab, sizeof s);
    assert_int_equal(bw_pipeline_strategy_at(e->pl, i, &s), BW_OK);
    assert_int_equal(s.kind, want[i].kind);
    assert_ptr_equal(s.object, want[i].object);
    assert_i64_eq(s.ms, want[i].ms);
    assert_i64_eq(s.max_wait_ms, want[i].max_wait_ms);
    assert_i64_eq(s.poll_ms, want[i].poll_ms);
  }
  /* the breaker's object is its interface, which names it */
  bw_strategy_t s;
  assert_int_equal(bw_pipeline_strategy_at(e->pl, 1, &s), BW_OK);
  assert_string_equal(bw_breaker_if_name(s.object), "partner");

  /* out of range and NULL: BW_E_INVAL, *out untouched */
  memset(&s, 0xab, sizeof s);
  bw_strategy_t untouched;
  memset(&untouched, 0xab, sizeof untouched);
  assert_int_equal(bw_pipeline_strategy_at(e->pl, 5, &s), BW_E_INVAL);
  assert_int_equal(bw_pipeline_strategy_at(e->pl, UINT32_MAX, &s), BW_E_INVAL);
  assert_int_equal(bw_pipeline_strategy_at(NULL, 0, &s), BW_E_INVAL);
  assert_memory_equal(&s, &untouched, sizeof s);
  assert_int_equal(bw_pipeline_strategy_at(e->pl, 0, NULL), BW_E_INVAL);
  assert_int_equal(bw_pipeline_strategy_count(NULL), 0);

  /* a pipeline of no strategy has none to read */
  bw_pipeline_config_t none;
  bw_pipeline_config_init(&none);
  bw_error_t err;
  bw_pipeline_t *empty = bw_pipeline_new(&none, &err);
  assert_non_null(empty);
  assert_int_equal(bw_pipeline_strategy_count(empty), 0);
  assert_int_equal(bw_pipeline_strategy_at(empty, 0, &s), BW_E_INVAL);
  bw_pipeline_free(empty);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
      T(test_breaker_outside_counts_one_logical_call_once),
      T(test_open_breaker_vetoes_before_any_retry_budget),
      T(test_retry_outside_never_retries_a_breaker_rejection),
      T(test_limit_full_waits_then_refuses),
      T(test_limit_poll_interval_doubles_up_to_eight_times),
      T(test_limit_wait_ends_when_a_slot_frees),
      T(test_slot_wait_names_the_limit_of_a_slot_wait_only),
      T(test_ratelimit_waits_as_told),
      T(test_deadline_bounds_attempts_and_retries),
      T(test_outer_deadline_narrows_and_expired_refuses),
      T(test_retry_after_hint_and_permanent),
      T(test_budget_failure_reason),
      T(test_no_retry_single_attempt),
      T(test_a_give_up_is_an_event),
      T(test_idempotency_key_allows_non_idempotent_retry),
      T(test_cancel_leaves_everything_and_stats_conserve),
      T(test_execute_runs_to_the_end),
      T(test_a_timed_out_attempt_reaches_the_limit_as_timed_out),
      T(test_a_limiter_inside_the_retry_cuts_a_stuck_attempt),
      T(test_a_cut_attempt_is_retried_paced_by_its_limit),
      T(test_an_attempt_needs_min_attempt_ms_left),
      T(test_an_attempt_that_never_went_out_counts_nothing),
      T(test_config_errors_name_the_strategy),
      T(test_breaker_interface_in_a_pipeline),
      T(test_a_users_strategy_counts_calls_outside_and_attempts_inside),
      T(test_a_users_refusal_waits_as_hinted_or_ends_the_call),
      T(test_the_strategies_read_back_as_configured),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Specification tests: the standard HTTP pipeline preset
 * (http_standard.h). Its composition is checked by driving calls through
 * the pipeline's state machine on a manual clock: the order of the
 * strategies (deadline, limit, breaker, retry, timeout; with
 * limit_per_attempt deadline, breaker, retry, limit, timeout, where the
 * limiter's stuck_timeout cuts an attempt), that a 503 with
 * Retry-After waits exactly that long, that a 400 is never retried, that
 * gRPC pushback stops the retry, and that the breaker opens after its
 * threshold — exact values, no sleeps. */
#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define SEC BW_NS_PER_S

typedef struct env_s {
  bw_clock_t *clock;
  bw_http_standard_t *std;
  const bw_pipeline_t *pl;
} env_t;

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  bw_http_standard_config_t cfg;
  bw_error_t err;
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  bw_http_standard_config_init(&cfg);
  cfg.clock = e->clock;
  cfg.retry.seed = 7; /* reproducible jitter */
  e->std = bw_http_standard_new(&cfg, &err);
  if (e->std == NULL) {
    fprintf(stderr, "bw_http_standard_new: %s: %s\n", err.field, err.message);
    return -1;
  }
  e->pl = bw_http_standard_pipeline(e->std);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_http_standard_free(e->std);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static int64_t now(const env_t *e) {
  return bw_clock_now(e->clock);
}

static void config_init_fills_documented_defaults(void **state) {
  bw_http_standard_config_t c;
  (void)state;
  bw_http_standard_config_init(&c);
  assert_string_equal(c.name, "http");
  assert_i64_eq(c.deadline_ms, 30000);
  assert_true(c.use_limiter);
  assert_int_equal(c.limiter.algorithm, BW_LIMITER_AIMD);
  assert_u64_eq(c.limiter.max_limit, 1000);
  assert_string_equal(c.limiter.name, "http");
  assert_i64_eq(c.limit_wait_ms, 1000);
  assert_true(c.use_breaker);
  assert_int_equal(c.breaker.trip_rule, BW_TRIP_TIME_WINDOW);
  assert_dbl_eq(c.breaker.failure_ratio, 0.1, 0);
  assert_i64_eq(c.breaker.window_ms, 30000);
  assert_u64_eq(c.breaker.minimum_calls, 100);
  assert_i64_eq(c.breaker.break_ms, 5000);
  assert_true(c.use_retry);
  assert_u64_eq(c.retry.max_attempts, 4);
  assert_int_equal(c.retry.backoff, BW_BACKOFF_EXPONENTIAL);
  assert_i64_eq(c.retry.base_ms, 2000);
  assert_i64_eq(c.retry.max_ms, 30000);
  assert_int_equal(c.retry.jitter, BW_JITTER_DECORRELATED);
  assert_true(c.retry.honor_retry_after);
  assert_true(c.retry.idempotent);
  assert_true(c.use_budget);
  assert_int_equal(c.budget.kind, BW_BUDGET_RATIO);
  assert_dbl_eq(c.budget.budget_percent, 20.0, 0);
  assert_dbl_eq(c.budget.min_retries_per_sec, 3.0, 0);
  assert_i64_eq(c.attempt_timeout_ms, 10000);
  assert_null(c.clock);
  assert_null(c.sink);
  assert_false(c.limit_per_attempt);
  assert_i64_eq(c.min_attempt_ms, 0);
  assert_false(c.limiter.stuck_timeout);
  assert_status(bw_http_standard_config_validate(&c, NULL), BW_OK);
}

/* validate refuses c, naming `field`. */
static void expect_refused(const bw_http_standard_config_t *c,
                           const char *field) {
  bw_error_t err;
  assert_status(bw_http_standard_config_validate(c, &err), BW_E_INVAL);
  assert_string_equal(err.field, field);
}

static void a_bad_part_is_refused_naming_the_part_and_field(void **state) {
  bw_http_standard_config_t c;
  bw_error_t err;
  (void)state;
  bw_http_standard_config_init(&c);
  c.breaker.failure_ratio = 1.5;
  bwt_prefill_error(&err);
  assert_null(bw_http_standard_new(&c, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "breaker.failure_ratio");
  assert_contains(err.message, "failure_ratio");
  bw_http_standard_config_init(&c);
  c.retry.base_ms = -1;
  expect_refused(&c, "retry.base_ms");
  bw_http_standard_config_init(&c);
  c.limiter.max_limit = 0;
  expect_refused(&c, "limiter.max_limit");
  bw_http_standard_config_init(&c);
  c.budget.budget_percent = 101;
  expect_refused(&c, "budget.budget_percent");
  bw_http_standard_config_init(&c);
  c.deadline_ms = -1;
  expect_refused(&c, "deadline_ms");
  bw_http_standard_config_init(&c);
  c.attempt_timeout_ms = -5;
  expect_refused(&c, "attempt_timeout_ms");
  bw_http_standard_config_init(&c);
  c.limit_wait_ms = -1;
  expect_refused(&c, "limit_wait_ms");
  bw_http_standard_config_init(&c);
  c.min_attempt_ms = -1;
  expect_refused(&c, "min_attempt_ms");
  bw_http_standard_config_init(&c);
  c.use_retry = false;
  assert_status(bw_http_standard_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "use_budget");
  assert_contains(err.message, "use_budget needs use_retry");
  bw_http_standard_config_init(&c);
  c.name = "";
  expect_refused(&c, "name");
}

/* stuck_timeout cuts attempts only from a limit inside the retry (the
 * pipeline asks no other): with the limiter outside it the option would do
 * nothing, so it is refused, naming the limiter's field and the rule. */
static void stuck_timeout_needs_the_limiter_inside_the_retry(void **state) {
  bw_http_standard_config_t c;
  bw_error_t err;
  (void)state;
  bw_http_standard_config_init(&c);
  c.limiter.stuck_ratio = 2.0;
  c.limiter.stuck_timeout = true;
  bwt_prefill_error(&err);
  assert_null(bw_http_standard_new(&c, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "limiter.stuck_timeout");
  assert_contains(err.message, "limiter.stuck_timeout needs limit_per_attempt");
  assert_contains(err.message, "the limiter inside the retry");
  /* Inside the retry: accepted. */
  c.limit_per_attempt = true;
  assert_status(bw_http_standard_config_validate(&c, &err), BW_OK);
  /* Without a retry the attempt is the call: the limit is asked. */
  c.limit_per_attempt = false;
  c.use_retry = false;
  c.use_budget = false;
  assert_status(bw_http_standard_config_validate(&c, &err), BW_OK);
  /* Without a limiter its options are not read. */
  c.use_retry = true;
  c.use_budget = true;
  c.use_limiter = false;
  assert_status(bw_http_standard_config_validate(&c, &err), BW_OK);
  /* The limiter's own rule comes first: stuck_timeout needs stuck_ratio. */
  c.use_limiter = true;
  c.limiter.stuck_ratio = 0;
  expect_refused(&c, "limiter.stuck_timeout");
  assert_status(bw_http_standard_config_validate(&c, &err), BW_E_INVAL);
  assert_contains(err.message, "needs stuck_ratio");
}

/* The kinds of pl's strategies, outermost first, are want[0..n). */
static void expect_order(const bw_pipeline_t *pl,
                         const bw_strategy_kind_t *want, uint32_t n) {
  bw_strategy_t st;
  assert_int_equal(bw_pipeline_strategy_count(pl), n);
  for (uint32_t i = 0; i < n; i++) {
    assert_status(bw_pipeline_strategy_at(pl, i, &st), BW_OK);
    if (st.kind != want[i])
      fail_msg("strategy %u is %s, not %s", (unsigned)i,
               bw_strategy_kind_name(st.kind), bw_strategy_kind_name(want[i]));
  }
}

/* Deadline outermost, limit outside the breaker, breaker outside the
 * retry, timeout inside it: one logical call with a retry holds one limiter
 * slot across its wait, counts once in the breaker, and each attempt gets
 * the 10 s timeout under the 30 s deadline. */
static void the_strategies_are_deadline_limit_breaker_retry_timeout(
    void **state) {
  env_t *e = *state;
  bw_pipeline_call_t c;
  bw_limiter_stats_t ls;
  bw_breaker_stats_t bs;
  bw_pipeline_stats_t ps;
  int64_t t0 = now(e);
  static const bw_strategy_kind_t order[] = {
      BW_STRATEGY_DEADLINE, BW_STRATEGY_LIMIT, BW_STRATEGY_BREAKER,
      BW_STRATEGY_RETRY, BW_STRATEGY_TIMEOUT};
  bw_strategy_t st;
  expect_order(e->pl, order, 5);
  assert_status(bw_pipeline_strategy_at(e->pl, 1, &st), BW_OK);
  assert_ptr_equal(st.object,
                   bw_limiter_as_limit(bw_http_standard_limiter(e->std)));
  assert_i64_eq(st.max_wait_ms, 1000);
  assert_int_equal(bw_pipeline_begin(e->pl, &c, t0), BW_STEP_ATTEMPT);
  assert_i64_eq(c.deadline.at_ns, t0 + 30 * SEC);
  assert_i64_eq(c.attempt_timeout_ms, 10000);
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT,
                                      BW_RETRY_AFTER_NONE, t0 + 100 * MS),
                   BW_STEP_WAIT);
  bw_limiter_stats(bw_http_standard_limiter(e->std), &ls);
  assert_u64_eq(ls.in_flight, 1); /* held across the retry's wait */
  bw_clock_manual_advance(e->clock, 100 * MS + c.delay_ms * MS);
  assert_int_equal(bw_pipeline_resume(&c, now(e)), BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, 10000);
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_OK, BW_RETRY_AFTER_NONE,
                                      now(e) + 50 * MS),
                   BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_NONE);
  bw_limiter_stats(bw_http_standard_limiter(e->std), &ls);
  assert_u64_eq(ls.admitted, 1);
  assert_u64_eq(ls.in_flight, 0);
  bw_breaker_stats(bw_http_standard_breaker(e->std), &bs);
  assert_u64_eq(bs.calls, 1);
  assert_u64_eq(bs.successes, 1);
  bw_pipeline_stats(e->pl, &ps);
  assert_u64_eq(ps.calls, 1);
  assert_u64_eq(ps.attempts, 2);
  /* Near the deadline the attempt gets what is left, not 10 s. */
  t0 = now(e);
  assert_int_equal(bw_pipeline_begin(e->pl, &c, t0), BW_STEP_ATTEMPT);
  assert_int_equal(
      bw_pipeline_report(&c, BW_VERDICT_TRANSIENT, 25000, t0 + 10 * MS),
      BW_STEP_WAIT);
  assert_i64_eq(c.delay_ms, 25000);
  assert_int_equal(bw_pipeline_resume(&c, t0 + 25010 * MS), BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, 4990);
  bw_pipeline_cancel(&c);
}

/* limit_per_attempt: deadline, breaker, retry, limit, timeout. Each
 * attempt takes a slot of its own (the backoff holds none) while the
 * breaker still counts the logical call once; and the limiter's
 * stuck_timeout reaches the attempts: after one 100 ms good answer (proven
 * level 1, stuck age 2 x 100 ms), an attempt admitted above the proven
 * level gets 200 ms instead of the preset's 10 s, and when it times out it
 * is retried, its slot held for the dependency. */
static void limit_per_attempt_puts_the_limiter_inside_the_retry(void **state) {
  bw_http_standard_config_t cfg;
  bw_http_standard_t *s;
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_pipeline_call_t a, b, c;
  bw_limiter_stats_t ls;
  bw_breaker_stats_t bs;
  bw_pipeline_stats_t ps;
  bw_strategy_t st;
  bw_error_t err;
  static const bw_strategy_kind_t order[] = {
      BW_STRATEGY_DEADLINE, BW_STRATEGY_BREAKER, BW_STRATEGY_RETRY,
      BW_STRATEGY_LIMIT, BW_STRATEGY_TIMEOUT};
  (void)state;
  assert_non_null(clock);
  bw_http_standard_config_init(&cfg);
  cfg.clock = clock;
  cfg.retry.seed = 7;
  cfg.limit_per_attempt = true;
  cfg.limiter.stuck_ratio = 2.0;
  cfg.limiter.stuck_timeout = true;
  s = bw_http_standard_new(&cfg, &err);
  if (s == NULL) fail_msg("%s: %s", err.field, err.message);
  const bw_pipeline_t *pl = bw_http_standard_pipeline(s);
  bw_limiter_t *lim = bw_http_standard_limiter(s);
  expect_order(pl, order, 5);
  assert_status(bw_pipeline_strategy_at(pl, 3, &st), BW_OK);
  assert_ptr_equal(st.object, bw_limiter_as_limit(lim));
  assert_i64_eq(st.max_wait_ms, 1000); /* limit_wait_ms, per attempt */
  assert_status(bw_pipeline_strategy_at(pl, 1, &st), BW_OK);
  assert_ptr_equal(st.object, bw_http_standard_breaker(s));

  /* A 503 then a 200: the backoff holds no slot, the retry takes a new
   * one, and the breaker sees one call. No good answer yet: nothing is
   * known to be stuck, the attempts get the preset's 10 s. */
  int64_t t0 = bw_clock_now(clock);
  assert_int_equal(bw_pipeline_begin(pl, &a, t0), BW_STEP_ATTEMPT);
  assert_i64_eq(a.attempt_timeout_ms, 10000);
  bw_clock_manual_advance(clock, 100 * MS);
  assert_int_equal(bw_pipeline_report(&a, BW_VERDICT_TRANSIENT,
                                      BW_RETRY_AFTER_NONE, bw_clock_now(clock)),
                   BW_STEP_WAIT);
  bw_limiter_stats(lim, &ls);
  assert_u64_eq(ls.in_flight, 0); /* the outer order holds 1 here */
  assert_u64_eq(ls.admitted, 1);
  bw_clock_manual_advance(clock, a.delay_ms * MS);
  assert_int_equal(bw_pipeline_resume(&a, bw_clock_now(clock)),
                   BW_STEP_ATTEMPT);
  bw_limiter_stats(lim, &ls);
  assert_u64_eq(ls.admitted, 2); /* the retry's own slot */
  assert_u64_eq(ls.in_flight, 1);
  assert_i64_eq(a.attempt_timeout_ms, 10000);
  bw_clock_manual_advance(clock, 100 * MS);
  assert_int_equal(bw_pipeline_report(&a, BW_VERDICT_OK, BW_RETRY_AFTER_NONE,
                                      bw_clock_now(clock)),
                   BW_STEP_DONE);
  assert_int_equal(a.failure, BW_FAILURE_NONE);
  bw_breaker_stats(bw_http_standard_breaker(s), &bs);
  assert_u64_eq(bs.calls, 1);
  assert_u64_eq(bs.successes, 1);
  bw_limiter_stats(lim, &ls);
  assert_u64_eq(ls.in_flight, 0);
  assert_u64_eq(ls.proven, 1); /* the 100 ms answer: stuck age 200 ms */
  /* 15 more calls answered in 100 ms, each with its own 10 s: the stuck
   * age is trusted from the 16th good answer on. */
  for (int i = 0; i < 15; i++) {
    assert_int_equal(bw_pipeline_begin(pl, &b, bw_clock_now(clock)),
                     BW_STEP_ATTEMPT);
    assert_i64_eq(b.attempt_timeout_ms, 10000);
    bw_clock_manual_advance(clock, 100 * MS);
    assert_int_equal(bw_pipeline_report(&b, BW_VERDICT_OK, BW_RETRY_AFTER_NONE,
                                        bw_clock_now(clock)),
                     BW_STEP_DONE);
  }

  /* Admitted at 1, the proven level: its own 10 s. */
  t0 = bw_clock_now(clock);
  assert_int_equal(bw_pipeline_begin(pl, &b, t0), BW_STEP_ATTEMPT);
  assert_i64_eq(b.attempt_timeout_ms, 10000);
  /* Admitted at 2, above it: cut to the stuck age. */
  assert_int_equal(bw_pipeline_begin(pl, &c, t0), BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, 200);
  bw_clock_manual_advance(clock, 200 * MS);
  /* Given up, and retried at once (no backoff: the limit paces it, and
   * it has a free slot). */
  assert_int_equal(bw_pipeline_report_timeout(&c, bw_clock_now(clock)),
                   BW_STEP_ATTEMPT);
  assert_int_equal(c.attempt, 2);
  bw_limiter_stats(lim, &ls);
  assert_u64_eq(ls.stuck_timeouts, 1);
  assert_u64_eq(ls.timed_out, 1);
  assert_u64_eq(ls.held, 1);      /* the dependency may still be at it */
  assert_u64_eq(ls.in_flight, 3); /* b, the held slot, the retry */
  bw_pipeline_cancel(&c);
  assert_int_equal(bw_pipeline_report(&b, BW_VERDICT_OK, BW_RETRY_AFTER_NONE,
                                      bw_clock_now(clock)),
                   BW_STEP_DONE);
  bw_pipeline_stats(pl, &ps);
  assert_u64_eq(ps.attempts, 20); /* a twice, 15 more, b, c, c's retry */
  bw_http_standard_free(s);
  bw_clock_free(clock);
}

static void a_503_with_retry_after_waits_that_long(void **state) {
  env_t *e = *state;
  bw_pipeline_call_t c;
  int64_t t0 = now(e);
  assert_int_equal(bw_pipeline_begin(e->pl, &c, t0), BW_STEP_ATTEMPT);
  /* 503 with Retry-After: 7 (the driver parses it into 7000 ms). */
  assert_int_equal(bw_http_classify(503, BW_TRANSPORT_NONE),
                   BW_VERDICT_TRANSIENT);
  assert_int_equal(bw_pipeline_report(
                       &c, bw_http_classify(503, BW_TRANSPORT_NONE), 7000, t0),
                   BW_STEP_WAIT);
  assert_i64_eq(c.delay_ms, 7000); /* the jitter's first delay is < 2.8 s */
  bw_clock_manual_advance(e->clock, 7000 * MS);
  assert_int_equal(bw_pipeline_resume(&c, now(e)), BW_STEP_ATTEMPT);
  assert_u64_eq(c.attempt, 2);
  assert_int_equal(
      bw_pipeline_report(&c, BW_VERDICT_OK, BW_RETRY_AFTER_NONE, now(e)),
      BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_NONE);
}

static void a_400_is_not_retried_and_does_not_count_against_the_breaker(
    void **state) {
  env_t *e = *state;
  bw_pipeline_call_t c;
  bw_breaker_stats_t bs;
  assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_ATTEMPT);
  assert_int_equal(
      bw_pipeline_report(&c, bw_http_classify(400, BW_TRANSPORT_NONE),
                         BW_RETRY_AFTER_NONE, now(e)),
      BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_PERMANENT);
  assert_u64_eq(c.attempt, 1);
  bw_breaker_stats(bw_http_standard_breaker(e->std), &bs);
  assert_u64_eq(bs.ignored, 1);
  assert_u64_eq(bs.failures, 0);
}

static void grpc_pushback_forbids_the_retry(void **state) {
  env_t *e = *state;
  bw_pipeline_call_t c;
  assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_ATTEMPT);
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT,
                                      BW_RETRY_AFTER_NEVER, now(e)),
                   BW_STEP_DONE);
  assert_u64_eq(c.attempt, 1);
  assert_int_not_equal(c.failure, BW_FAILURE_NONE);
}

/* 100 logical calls failing (the minimum throughput) open the breaker; the
 * 101st is refused without an attempt, after taking and giving back a
 * limiter slot (the limit is outside the breaker). */
static void the_breaker_opens_after_its_threshold(void **state) {
  env_t *e = *state;
  bw_pipeline_call_t c;
  bw_limiter_stats_t ls;
  bw_pipeline_stats_t ps;
  for (int i = 0; i < 100; i++) {
    assert_state(bw_breaker_state(bw_http_standard_breaker(e->std)), BW_CLOSED);
    assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_ATTEMPT);
    /* A 503 whose pushback says "do not retry": one attempt per call. */
    assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT,
                                        BW_RETRY_AFTER_NEVER, now(e)),
                     BW_STEP_DONE);
  }
  assert_state(bw_breaker_state(bw_http_standard_breaker(e->std)), BW_OPEN);
  assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
  bw_limiter_stats(bw_http_standard_limiter(e->std), &ls);
  assert_u64_eq(ls.admitted, 101);
  assert_u64_eq(ls.ignored, 1);
  bw_pipeline_stats(e->pl, &ps);
  assert_u64_eq(ps.attempts, 100);
  /* After the 5 s break, a probe goes through. */
  bw_clock_manual_advance(e->clock, 5 * SEC);
  assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_ATTEMPT);
  bw_pipeline_cancel(&c);
}

/* min_attempt_ms reaches the preset's pipeline: under a 1 s deadline,
 * attempts 400 ms apart (constant, no jitter, nothing else in the way),
 * the one due at 800 ms has 200 ms left, under 250: the call ends with
 * `deadline` after two attempts. */
static void min_attempt_ms_reaches_the_pipeline(void **state) {
  bw_http_standard_config_t c;
  bw_http_standard_t *s;
  bw_pipeline_call_t call;
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_error_t err;
  (void)state;
  assert_non_null(clock);
  bw_http_standard_config_init(&c);
  c.clock = clock;
  c.deadline_ms = 1000;
  c.use_limiter = false;
  c.use_breaker = false;
  c.use_budget = false;
  c.attempt_timeout_ms = 0;
  c.retry.backoff = BW_BACKOFF_CONSTANT;
  c.retry.base_ms = 400;
  c.retry.jitter = BW_JITTER_NONE;
  c.min_attempt_ms = 250;
  s = bw_http_standard_new(&c, &err);
  if (s == NULL) fail_msg("%s: %s", err.field, err.message);
  const bw_pipeline_t *pl = bw_http_standard_pipeline(s);
  assert_int_equal(bw_pipeline_begin(pl, &call, bw_clock_now(clock)),
                   BW_STEP_ATTEMPT);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(
        bw_pipeline_report(&call, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE,
                           bw_clock_now(clock)),
        BW_STEP_WAIT);
    assert_i64_eq(call.delay_ms, 400);
    bw_clock_manual_advance(clock, 400 * MS);
    assert_int_equal(bw_pipeline_resume(&call, bw_clock_now(clock)),
                     i == 0 ? BW_STEP_ATTEMPT : BW_STEP_DONE);
  }
  assert_int_equal(call.failure, BW_FAILURE_DEADLINE);
  assert_u64_eq(call.attempt, 2);
  bw_http_standard_free(s);
  bw_clock_free(clock);
}

static void parts_can_be_turned_off(void **state) {
  bw_http_standard_config_t cfg;
  bw_http_standard_t *s;
  bw_pipeline_call_t c;
  (void)state;
  bw_http_standard_config_init(&cfg);
  cfg.use_limiter = false;
  cfg.use_breaker = false;
  cfg.use_budget = false;
  cfg.deadline_ms = 0;
  cfg.attempt_timeout_ms = 0;
  s = bw_http_standard_new(&cfg, NULL);
  assert_non_null(s);
  assert_null(bw_http_standard_limiter(s));
  assert_null(bw_http_standard_breaker(s));
  assert_null(bw_http_standard_budget(s));
  assert_non_null(bw_http_standard_retry(s));
  assert_string_equal(bw_pipeline_name(bw_http_standard_pipeline(s)), "http");
  assert_int_equal(bw_pipeline_begin(bw_http_standard_pipeline(s), &c, 0),
                   BW_STEP_ATTEMPT);
  assert_i64_eq(c.attempt_timeout_ms, -1); /* no timeout, no deadline */
  bw_pipeline_cancel(&c);
  bw_http_standard_free(s);
}

static void every_verb_answers_null_without_crashing(void **state) {
  bw_error_t err;
  (void)state;
  bw_http_standard_config_init(NULL);
  assert_status(bw_http_standard_config_validate(NULL, &err), BW_E_INVAL);
  assert_null(bw_http_standard_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_null(bw_http_standard_pipeline(NULL));
  assert_null(bw_http_standard_breaker(NULL));
  assert_null(bw_http_standard_limiter(NULL));
  assert_null(bw_http_standard_retry(NULL));
  assert_null(bw_http_standard_budget(NULL));
  {
    bw_http_standard_config_t cfg;
    bw_pipeline_config_t pc;
    bw_http_standard_config_init(&cfg);
    bw_pipeline_config_init(&pc);
    assert_status(bw_http_standard_add_strategies(NULL, &cfg, NULL, NULL, NULL),
                  BW_E_INVAL);
    assert_status(bw_http_standard_add_strategies(&pc, NULL, NULL, NULL, NULL),
                  BW_E_INVAL);
    /* No parts: the deadline and the attempt timeout alone. */
    assert_status(bw_http_standard_add_strategies(&pc, &cfg, NULL, NULL, NULL),
                  BW_OK);
    assert_u64_eq(pc.count, 2);
  }
  bw_http_standard_free(NULL);
}

static int oom_scenario(void *ctx) {
  bw_http_standard_config_t c;
  bw_error_t err;
  bw_http_standard_t *s;
  (void)ctx;
  bw_http_standard_config_init(&c);
  s = bw_http_standard_new(&c, &err);
  if (s == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    return BW_E_NOMEM;
  }
  bw_http_standard_free(s);
  return BW_OK;
}

static void creation_survives_every_allocation_failure(void **state) {
  long n;
  (void)state;
  n = oom_walk(oom_scenario, NULL, false);
  assert_true(n > 5); /* the preset and each of its five parts */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_init_fills_documented_defaults),
      cmocka_unit_test(a_bad_part_is_refused_naming_the_part_and_field),
      cmocka_unit_test(stuck_timeout_needs_the_limiter_inside_the_retry),
      cmocka_unit_test(limit_per_attempt_puts_the_limiter_inside_the_retry),
      cmocka_unit_test(parts_can_be_turned_off),
      cmocka_unit_test(min_attempt_ms_reaches_the_pipeline),
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(creation_survives_every_allocation_failure),
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(the_strategies_are_deadline_limit_breaker_retry_timeout),
      T(a_503_with_retry_after_waits_that_long),
      T(a_400_is_not_retried_and_does_not_count_against_the_breaker),
      T(grpc_pushback_forbids_the_retry),
      T(the_breaker_opens_after_its_threshold),
#undef T
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

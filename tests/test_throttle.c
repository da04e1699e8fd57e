/* Specification tests: client-side adaptive throttling (Google SRE's
 * accepts/requests rule, throttle.h).
 *
 * Everything runs on a manual clock starting at BWT_T0_NS (a whole number of
 * seconds, so the window's buckets start exactly there). The refusals are
 * random draws from a seeded generator: the tests replay the same formula on
 * a bw_rand_t seeded alike (a draw only when p > 0, as documented) and
 * assert the exact count of refusals. */
#include "breakwater/breakwater.h"
#include "bw_test.h"
#include "oom.h"

#include <math.h>

#define MS BW_NS_PER_MS

typedef struct env_s {
  bw_clock_t *clock;
  bw_throttle_t *t;
  bw_pipeline_t *pl;
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
  bw_pipeline_free(e->pl);
  bw_throttle_free(e->t);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static int64_t now(const env_t *e) {
  return bw_clock_now(e->clock);
}

/* A throttle with K = k, a window of window_ms in `buckets` buckets, seed
 * `seed`, on the manual clock. */
static bw_throttle_t *make(env_t *e, double k, int64_t window_ms,
                           uint32_t buckets, uint64_t seed) {
  bw_throttle_config_t cfg;
  bw_error_t err;
  bw_throttle_config_init(&cfg);
  cfg.name = "partner";
  cfg.k = k;
  cfg.window_ms = window_ms;
  cfg.buckets = buckets;
  cfg.seed = seed;
  cfg.clock = e->clock;
  e->t = bw_throttle_new(&cfg, &err);
  if (e->t == NULL)
    fail_msg("bw_throttle_new: [%s] %s", err.field, err.message);
  return e->t;
}

/* One call through the strategy by hand: enter, and if admitted an attempt
 * (the call's count goes 0 -> 1) and leave with o. Returns enter's code. */
static int call(env_t *e, bw_outcome_t o) {
  bw_strategy_if_t *s = bw_throttle_strategy(e->t);
  bw_permit_t permit;
  bw_deadline_t d = bw_deadline_none();
  int64_t timeout = -1;
  bw_strategy_ctx_t ctx = {&permit, &d, &timeout, now(e), 0, 0, false};
  bw_refusal_t r = {BW_FAILURE_NONE, 0, false};
  memset(&permit, 0, sizeof permit);
  int rc = s->vt->enter(s, &ctx, now(e), &r);
  if (rc != BW_OK) {
    assert_int_equal(r.failure, BW_FAILURE_LIMIT);
    assert_int_equal(r.retry_in_ms, -1);
    return rc;
  }
  ctx.attempt = 1; /* the attempt went out */
  s->vt->leave(s, &ctx, o);
  return rc;
}

/* The formula, as the tests replay it. */
static double formula(double k, double req, double acc) {
  double p = (req - k * acc) / (req + 1.0);
  return p > 0.0 ? p : 0.0;
}

/* Whether the throttle, replayed with rng, refuses the next request after
 * req requests and acc accepts (a draw only when p > 0, as it does). */
static bool draws_refusal(bw_rand_t *rng, double k, uint64_t req,
                          uint64_t acc) {
  double p = formula(k, (double)req, (double)acc);
  return p > 0.0 && bw_rand_double(rng) < p;
}

/* One more request that fails, replayed: asserts the throttle refuses it
 * exactly when the replay does, counts it in *req, returns the refusal. */
static bool fail_replayed(env_t *e, bw_rand_t *rng, uint64_t *req) {
  bool r = draws_refusal(rng, 1.0, *req, 0);
  (*req)++;
  assert_int_equal(call(e, BW_FAILURE) != BW_OK, r);
  return r;
}

static void config_init_fills_documented_defaults(void **state) {
  (void)state;
  bw_throttle_config_t cfg;
  bw_throttle_config_init(&cfg);
  assert_string_equal(cfg.name, "throttle");
  assert_true(cfg.k == 2.0);
  assert_int_equal(cfg.window_ms, 60000);
  assert_int_equal(cfg.buckets, 60);
  assert_int_equal(cfg.seed, 0);
  assert_null(cfg.clock);
  assert_null(cfg.wall_clock);
  assert_null(cfg.sink);
  assert_status(bw_throttle_config_validate(&cfg, NULL), BW_OK);
  bw_throttle_config_init(NULL); /* ignored */
}

static void expect_field(const bw_throttle_config_t *cfg, const char *field) {
  bw_error_t err;
  memset(&err, 0, sizeof err);
  assert_null(bw_throttle_new(cfg, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, field);
  assert_non_null(strstr(err.message, field));
}

static void bad_configs_are_refused_naming_the_field(void **state) {
  (void)state;
  bw_throttle_config_t cfg;
  bw_clock_t no_now = {NULL, NULL};
  expect_field(NULL, "cfg");
#define BAD(stmt, field)           \
  do {                             \
    bw_throttle_config_init(&cfg); \
    stmt;                          \
    expect_field(&cfg, field);     \
  } while (0)
  BAD(cfg.name = NULL, "name");
  BAD(cfg.name = "", "name");
  BAD(cfg.k = 0.99, "k");
  BAD(cfg.k = 10.01, "k");
  BAD(cfg.k = NAN, "k");
  BAD(cfg.window_ms = 9, "window_ms");
  BAD(cfg.window_ms = 86400001, "window_ms");
  BAD(cfg.buckets = 0, "buckets");
  BAD(cfg.buckets = 1001, "buckets");
  BAD((cfg.window_ms = 10, cfg.buckets = 7), "buckets"); /* 10 ms / 7 */
  BAD(cfg.clock = &no_now, "clock");
  BAD(cfg.wall_clock = &no_now, "wall_clock");
#undef BAD
  /* The bounds themselves are accepted. */
  bw_throttle_config_init(&cfg);
  cfg.k = 1.0;
  cfg.window_ms = 10;
  cfg.buckets = 1000;
  assert_status(bw_throttle_config_validate(&cfg, NULL), BW_OK);
  cfg.k = 10.0;
  cfg.window_ms = 86400000;
  cfg.buckets = 1;
  assert_status(bw_throttle_config_validate(&cfg, NULL), BW_OK);
}

static void null_objects_are_harmless(void **state) {
  (void)state;
  bw_throttle_stats_t st;
  bw_pipeline_config_t pc;
  assert_null(bw_throttle_strategy(NULL));
  assert_true(bw_throttle_probability(NULL) == 0.0);
  assert_string_equal(bw_throttle_name(NULL), "");
  bw_throttle_stats(NULL, &st);
  assert_int_equal(st.requests, 0);
  bw_throttle_stats(NULL, NULL);
  bw_throttle_free(NULL);
  bw_pipeline_config_init(&pc);
  assert_status(bw_pipeline_add_strategy(&pc, bw_throttle_strategy(NULL), 0),
                BW_E_INVAL);
}

static void the_strategy_has_a_kind_and_the_throttles_name(void **state) {
  env_t *e = *state;
  make(e, 2.0, 1000, 10, 7);
  assert_string_equal(bw_strategy_if_kind(bw_throttle_strategy(e->t)),
                      "throttle");
  assert_string_equal(bw_strategy_if_name(bw_throttle_strategy(e->t)),
                      "partner");
  assert_string_equal(bw_throttle_name(e->t), "partner");
}

/* Requests count whether admitted or refused; accepts only on SUCCESS. So
 * the counts are known whatever the draws, and p follows from them. */
static void the_probability_follows_the_formula_at_known_counts(void **state) {
  env_t *e = *state;
  bw_throttle_stats_t st;
  make(e, 2.0, 60000, 60, 11);
  assert_true(bw_throttle_probability(e->t) == 0.0); /* empty: 0 / 1 */
  call(e, BW_SUCCESS);
  call(e, BW_SUCCESS); /* 2 requests, 2 accepts: p = 0 */
  assert_true(bw_throttle_probability(e->t) == 0.0);
  for (int i = 0; i < 4; i++) /* up to 6 requests: 6 - 2 * 2 = 2 */
    call(e, BW_FAILURE);
  assert_true(bw_throttle_probability(e->t) == 2.0 / 7.0);
  for (int i = 0; i < 4; i++)
    call(e, BW_FAILURE); /* 10 requests, 2 accepts */
  assert_true(bw_throttle_probability(e->t) == 6.0 / 11.0);
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 10);
  assert_int_equal(st.accepts, 2);
  assert_int_equal(st.window_requests, 10);
  assert_int_equal(st.window_accepts, 2);
  assert_int_equal(st.rejected + st.throttled, 8);
  assert_true(st.probability == 6.0 / 11.0);
  /* K = 1: refusals start as soon as requests pass accepts. */
  bw_throttle_free(e->t);
  make(e, 1.0, 60000, 60, 11);
  for (int i = 0; i < 3; i++)
    call(e, BW_SUCCESS);
  assert_true(bw_throttle_probability(e->t) == 0.0);
  call(e, BW_FAILURE); /* p was 0 at its enter: admitted */
  assert_true(bw_throttle_probability(e->t) == 1.0 / 5.0);
  assert_true(bw_throttle_probability(e->t) == formula(1.0, 4, 3));
}

static void no_refusal_while_accepts_keep_up(void **state) {
  env_t *e = *state;
  bw_throttle_stats_t st;
  make(e, 2.0, 1000, 10, 3);
  /* Every call accepted, the clock moving 1 ms a call across many
   * windows: requests never pass K * accepts, so nothing is drawn or
   * refused. Even with one failure in every two calls, K = 2 keeps p at
   * 0: requests = 2 * accepts at most. */
  for (int i = 0; i < 5000; i++) {
    assert_status(call(e, i % 2 == 0 ? BW_SUCCESS : BW_FAILURE), BW_OK);
    bw_clock_manual_advance(e->clock, 1 * MS);
  }
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 5000);
  assert_int_equal(st.throttled, 0);
  assert_int_equal(st.accepts, 2500);
  assert_int_equal(st.rejected, 2500);
  assert_true(st.probability == 0.0);
}

/* After 100 accepted calls the partner rejects everything: the refusals
 * are exactly the draws below p, replayed here with the same seed. */
static void refusals_follow_the_formula_and_the_seed(void **state) {
  env_t *e = *state;
  const uint64_t seed = 42;
  const int n = 2000;
  bw_throttle_stats_t st;
  bw_rand_t rng;
  uint64_t expect = 0, req = 0, acc = 0;
  make(e, 2.0, 60000, 60, seed);
  bw_rand_seed(&rng, seed);
  for (int i = 0; i < 100; i++) {
    assert_status(call(e, BW_SUCCESS), BW_OK);
    req++;
    acc++;
  }
  for (int i = 0; i < n; i++) {
    bool refused = draws_refusal(&rng, 2.0, req, acc);
    if (refused) expect++;
    req++;
    assert_int_equal(call(e, BW_FAILURE) != BW_OK, refused);
  }
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.throttled, expect);
  assert_int_equal(st.rejected, (uint64_t)n - expect);
  assert_int_equal(st.requests, 100 + (uint64_t)n);
  /* What the formula implies, whatever the seed: p stays 0 until
   * requests pass 2 * 100, so the first 100 rejected calls all go out;
   * after that the r-th request goes out with probability 201 / (r + 1),
   * so about 100 + sum(201 / (r + 1)) of them go out in all (~572 here,
   * against 2,000 without the throttle): within five standard deviations
   * (each a Bernoulli draw: variance at most the mean). */
  double mean = 100.0;
  for (int r = 200; r < 100 + n; r++)
    mean += 201.0 / (r + 1.0);
  assert_true(st.rejected >= 100);
  assert_true(fabs((double)st.rejected - mean) < 5.0 * sqrt(mean));
  assert_true(st.rejected < (uint64_t)n / 3);
  assert_true(st.probability == formula(2.0, 100.0 + n, 100.0));
}

static void the_window_slides_and_old_counts_expire(void **state) {
  env_t *e = *state;
  bw_throttle_stats_t st;
  make(e, 2.0, 1000, 10, 5); /* buckets of 100 ms */
  for (int i = 0; i < 10; i++)
    call(e, BW_FAILURE); /* bucket 0: 10 requests, no accept */
  assert_true(bw_throttle_probability(e->t) == 10.0 / 11.0);
  bw_clock_manual_advance(e->clock, 500 * MS);
  for (int i = 0; i < 5; i++)
    call(e, BW_FAILURE); /* bucket 5: 5 more */
  assert_true(bw_throttle_probability(e->t) == 15.0 / 16.0);
  /* The last instant of bucket 9: bucket 0 still counts. */
  bw_clock_manual_set(e->clock, BWT_T0_NS + 1000 * MS - 1);
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.window_requests, 15);
  /* Bucket 10: bucket 0's requests are gone, bucket 5's remain. */
  bw_clock_manual_set(e->clock, BWT_T0_NS + 1000 * MS);
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.window_requests, 5);
  assert_int_equal(st.window_accepts, 0);
  assert_true(st.probability == 5.0 / 6.0);
  assert_int_equal(st.requests, 15); /* the totals keep everything */
  /* Bucket 15: the window is empty, nothing is refused. */
  bw_clock_manual_set(e->clock, BWT_T0_NS + 1500 * MS);
  assert_true(bw_throttle_probability(e->t) == 0.0);
  assert_status(call(e, BW_SUCCESS), BW_OK);
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.window_requests, 1);
  assert_int_equal(st.window_accepts, 1);
}

/* A request joins the window when its fate is known, in the bucket of
 * then: calls in flight count nowhere (a burst from cold is not throttled
 * by its own unanswered requests). */
static void requests_count_when_their_fate_is_known(void **state) {
  env_t *e = *state;
  bw_throttle_stats_t st;
  bw_strategy_if_t *s;
  bw_permit_t permits[100];
  bw_deadline_t d = bw_deadline_none();
  int64_t timeout = -1;
  make(e, 2.0, 1000, 10, 5);
  s = bw_throttle_strategy(e->t);
  bw_strategy_ctx_t ctx = {NULL, &d, &timeout, now(e), 0, 0, false};
  bw_refusal_t r = {BW_FAILURE_NONE, 0, false};
  for (int i = 0; i < 100; i++) { /* a burst: 100 admitted, none answered */
    ctx.permit = &permits[i];
    assert_status(s->vt->enter(s, &ctx, now(e), &r), BW_OK);
  }
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 100);
  assert_int_equal(st.window_requests, 0);
  assert_true(st.probability == 0.0);
  /* The answers come 900 ms later: 50 accepted, 50 shed. */
  bw_clock_manual_advance(e->clock, 900 * MS);
  ctx.attempt = 1;
  for (int i = 0; i < 100; i++) {
    ctx.permit = &permits[i];
    s->vt->leave(s, &ctx, i < 50 ? BW_SUCCESS : BW_FAILURE);
  }
  /* 100 ms on, bucket 0 (the enters') has left the window; bucket 9 (the
   * answers') has not. */
  bw_clock_manual_advance(e->clock, 100 * MS);
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.window_requests, 100);
  assert_int_equal(st.window_accepts, 50);
  assert_true(st.probability == 0.0); /* 100 - 2 * 50 = 0 */
}

/* ---- inside a pipeline ------------------------------------------------- */

/* A strategy that always refuses (to stand for a full limit further in). */
static int refuse_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                        int64_t now_ns, bw_refusal_t *r) {
  (void)s;
  (void)ctx;
  (void)now_ns;
  r->failure = BW_FAILURE_LIMIT;
  r->retry_in_ms = -1;
  return BW_E_FULL;
}
static const char *refuse_name(const bw_strategy_if_t *s) {
  (void)s;
  return "refuser";
}
static const bw_strategy_vtable_t refuse_vt = {"refuser", refuse_enter, NULL,
                                               refuse_name};

static void in_a_pipeline_rejections_raise_local_refusals(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t pc;
  bw_pipeline_stats_t ps;
  bw_throttle_stats_t st;
  bw_error_t err;
  bw_rand_t rng;
  uint64_t refused = 0, req = 0, acc = 0;
  make(e, 2.0, 60000, 60, 9);
  bw_rand_seed(&rng, 9);
  bw_pipeline_config_init(&pc);
  assert_status(bw_pipeline_add_strategy(&pc, bw_throttle_strategy(e->t), 0),
                BW_OK);
  assert_status(bw_pipeline_add_timeout(&pc, 100), BW_OK);
  e->pl = bw_pipeline_new(&pc, &err);
  assert_non_null(e->pl);
  /* 20 calls answered 200, then 4xx (accepted: the partner did the work),
   * then 300 calls answered 429 (TRANSIENT). */
  for (int i = 0; i < 340; i++) {
    bw_pipeline_call_t c;
    bw_verdict_t v = i < 20   ? BW_VERDICT_OK
                     : i < 40 ? BW_VERDICT_PERMANENT
                              : BW_VERDICT_TRANSIENT;
    bool refuse = draws_refusal(&rng, 2.0, req, acc);
    req++;
    int step = bw_pipeline_begin(e->pl, &c, now(e));
    if (refuse) {
      refused++;
      assert_int_equal(step, BW_STEP_DONE);
      assert_int_equal(c.failure, BW_FAILURE_LIMIT);
      assert_int_equal(c.attempt, 0); /* no network call */
      continue;
    }
    assert_int_equal(step, BW_STEP_ATTEMPT);
    if (v != BW_VERDICT_TRANSIENT) acc++;
    assert_int_equal(bw_pipeline_report(&c, v, BW_RETRY_AFTER_NONE, now(e)),
                     BW_STEP_DONE);
  }
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 340);
  assert_int_equal(st.accepts, 40);
  assert_int_equal(st.throttled, refused);
  assert_int_equal(st.rejected, 300 - refused);
  assert_true(refused > 0);
  bw_pipeline_stats(e->pl, &ps);
  assert_int_equal(ps.failures[BW_FAILURE_LIMIT], refused);
  assert_int_equal(ps.attempts, 340 - refused);
}

static void a_call_refused_further_in_is_withdrawn(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t pc;
  bw_throttle_stats_t st;
  bw_error_t err;
  bw_strategy_if_t refuser = {&refuse_vt};
  bw_pipeline_call_t c;
  make(e, 2.0, 60000, 60, 9);
  bw_pipeline_config_init(&pc);
  assert_status(bw_pipeline_add_strategy(&pc, bw_throttle_strategy(e->t), 0),
                BW_OK);
  assert_status(bw_pipeline_add_strategy(&pc, &refuser, 0), BW_OK);
  e->pl = bw_pipeline_new(&pc, &err);
  assert_non_null(e->pl);
  for (int i = 0; i < 10; i++) {
    assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_DONE);
    assert_int_equal(c.failure, BW_FAILURE_LIMIT);
  }
  /* The partner never saw them: not requests of the window, so they do
   * not make the throttle refuse later calls. */
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 10);
  assert_int_equal(st.withdrawn, 10);
  assert_int_equal(st.throttled, 0);
  assert_int_equal(st.window_requests, 0);
  assert_true(st.probability == 0.0);
}

/* A call cancelled while its attempt is out has no known answer: it is
 * withdrawn, neither an accept nor a rejection; a 4xx answer (PERMANENT,
 * left IGNORED) is an accept. */
static void a_call_cancelled_during_its_attempt_is_withdrawn(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t pc;
  bw_throttle_stats_t st;
  bw_error_t err;
  bw_pipeline_call_t c;
  make(e, 2.0, 60000, 60, 9);
  bw_pipeline_config_init(&pc);
  assert_status(bw_pipeline_add_strategy(&pc, bw_throttle_strategy(e->t), 0),
                BW_OK);
  e->pl = bw_pipeline_new(&pc, &err);
  assert_non_null(e->pl);
  for (int i = 0; i < 5; i++) {
    assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_ATTEMPT);
    bw_pipeline_cancel(&c);
  }
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 5);
  assert_int_equal(st.withdrawn, 5);
  assert_int_equal(st.accepts, 0);
  assert_int_equal(st.rejected, 0);
  assert_int_equal(st.window_requests, 0);
  assert_int_equal(st.window_accepts, 0);
  assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_ATTEMPT);
  assert_int_equal(
      bw_pipeline_report(&c, BW_VERDICT_PERMANENT, BW_RETRY_AFTER_NONE, now(e)),
      BW_STEP_DONE);
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 6);
  assert_int_equal(st.withdrawn, 5);
  assert_int_equal(st.accepts, 1);
  assert_int_equal(st.window_requests, 1);
  assert_int_equal(st.window_accepts, 1);
}

static void inside_a_retry_each_attempt_is_a_request(void **state) {
  env_t *e = *state;
  bw_pipeline_config_t pc;
  bw_retry_config_t rc;
  bw_retry_policy_t *rp;
  bw_throttle_stats_t st;
  bw_error_t err;
  bw_pipeline_call_t c;
  make(e, 2.0, 60000, 60, 9);
  bw_retry_config_init(&rc);
  rc.max_attempts = 3;
  rc.backoff = BW_BACKOFF_CONSTANT;
  rc.base_ms = 100;
  rc.max_ms = 100;
  rc.jitter = BW_JITTER_NONE;
  rc.seed = 1;
  rp = bw_retry_policy_new(&rc, &err);
  assert_non_null(rp);
  bw_pipeline_config_init(&pc);
  assert_status(bw_pipeline_add_retry(&pc, rp), BW_OK);
  assert_status(bw_pipeline_add_strategy(&pc, bw_throttle_strategy(e->t), 0),
                BW_OK);
  e->pl = bw_pipeline_new(&pc, &err);
  assert_non_null(e->pl);
  /* First attempt: p = 0 (empty); it fails. Second: requests 1, accepts
   * 0: p = 1/2 — a draw; the replay says whether it goes out. */
  bw_rand_t rng;
  bw_rand_seed(&rng, 9);
  bool second_refused = bw_rand_double(&rng) < 0.5;
  assert_int_equal(bw_pipeline_begin(e->pl, &c, now(e)), BW_STEP_ATTEMPT);
  assert_int_equal(
      bw_pipeline_report(&c, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, now(e)),
      BW_STEP_WAIT);
  bw_clock_manual_advance(e->clock, 100 * MS);
  int step = bw_pipeline_resume(&c, now(e));
  bw_throttle_stats(e->t, &st);
  assert_int_equal(st.requests, 2);
  assert_int_equal(st.rejected, 1);
  if (second_refused) {
    /* A local refusal inside the retry is never retried. */
    assert_int_equal(step, BW_STEP_DONE);
    assert_int_equal(c.failure, BW_FAILURE_LIMIT);
    assert_int_equal(st.throttled, 1);
  } else {
    assert_int_equal(step, BW_STEP_ATTEMPT);
    assert_int_equal(
        bw_pipeline_report(&c, BW_VERDICT_OK, BW_RETRY_AFTER_NONE, now(e)),
        BW_STEP_DONE);
    bw_throttle_stats(e->t, &st);
    assert_int_equal(st.accepts, 1);
  }
  bw_pipeline_free(e->pl);
  e->pl = NULL;
  bw_retry_policy_free(rp);
}

/* bw_throttle_set_k: the next decision reads the window's counts with the
 * new K; a bad K is refused naming the field and changes nothing. */
static void set_k_changes_the_multiplier_live(void **state) {
  env_t *e = *state;
  bw_throttle_config_t c;
  bw_error_t err;
  make(e, 2.0, 60000, 60, 11);
  call(e, BW_SUCCESS);
  call(e, BW_SUCCESS);
  for (int i = 0; i < 4; i++)
    call(e, BW_FAILURE); /* 6 requests (refused or not), 2 accepts */
  assert_true(bw_throttle_probability(e->t) == 2.0 / 7.0);
  assert_status(bw_throttle_set_k(e->t, 1.0, &err), BW_OK);
  assert_int_equal(err.code, BW_OK);
  assert_true(bw_throttle_probability(e->t) == 4.0 / 7.0);
  bw_throttle_config_of(e->t, &c);
  assert_true(c.k == 1.0);
  /* Refused, naming k and the rule: K stays 1. */
  assert_status(bw_throttle_set_k(e->t, 0.5, &err), BW_E_INVAL);
  assert_string_equal(err.field, "k");
  assert_string_equal(err.message, "k must be in [1, 10] (got 0.5)");
  assert_status(bw_throttle_set_k(e->t, 10.5, &err), BW_E_INVAL);
  assert_string_equal(err.field, "k");
  assert_status(bw_throttle_set_k(e->t, NAN, &err), BW_E_INVAL);
  assert_string_equal(err.field, "k");
  assert_true(bw_throttle_probability(e->t) == 4.0 / 7.0);
  assert_status(bw_throttle_set_k(NULL, 2.0, &err), BW_E_INVAL);
  assert_string_equal(err.field, "t");
  /* K = 10 tolerates 20 requests on 2 accepts: p is 0, so the next 14
   * rejected calls all go out (no draw is made at p = 0). */
  assert_status(bw_throttle_set_k(e->t, 10.0, NULL), BW_OK);
  assert_true(bw_throttle_probability(e->t) == 0.0);
  for (int i = 0; i < 14; i++)
    assert_status(call(e, BW_FAILURE), BW_OK);
  assert_true(bw_throttle_probability(e->t) == 0.0); /* 20 - 10 * 2 */
  call(e, BW_FAILURE);
  assert_true(bw_throttle_probability(e->t) == 1.0 / 22.0);
}

static void config_of_reads_back_the_configuration(void **state) {
  env_t *e = *state;
  bw_throttle_config_t c;
  make(e, 3.5, 2000, 20, 99);
  bw_throttle_config_of(e->t, &c);
  assert_string_equal(c.name, "partner");
  assert_ptr_equal(c.name, bw_throttle_name(e->t)); /* the throttle's own */
  assert_true(c.k == 3.5);
  assert_int_equal(c.window_ms, 2000);
  assert_int_equal(c.buckets, 20);
  assert_int_equal(c.seed, 99);
  assert_ptr_equal(c.clock, e->clock);
  assert_ptr_equal(c.wall_clock, bw_clock_realtime()); /* resolved */
  assert_null(c.sink);
  assert_status(bw_throttle_config_validate(&c, NULL), BW_OK);
  memset(&c, 0x5a, sizeof c);
  bw_throttle_config_of(NULL, &c); /* nothing */
  assert_true(c.buckets == 0x5a5a5a5au);
  bw_throttle_config_of(e->t, NULL);
}

/* What a summary sink records. */
typedef struct seen_s {
  int n;
  uint64_t count[8];
  double probability[8];
  uint64_t window_requests[8], window_accepts[8];
  double k[8];
  int64_t mono_ns[8];
  char name[8][32];
  char reason[8][160];
  char kind[8][16];
} seen_t;

static void record(const bw_event_t *ev, void *ud) {
  seen_t *s = ud;
  if (ev->type != BW_EV_THROTTLE_REFUSED || s->n == 8) return;
  int i = s->n++;
  assert_int_equal(ev->field_count, 5);
  assert_string_equal(ev->fields[0].key, "count");
  assert_string_equal(ev->fields[1].key, "probability");
  assert_string_equal(ev->fields[2].key, "window_requests");
  assert_string_equal(ev->fields[3].key, "window_accepts");
  assert_string_equal(ev->fields[4].key, "k");
  s->count[i] = ev->fields[0].v.u;
  s->probability[i] = ev->fields[1].v.d;
  s->window_requests[i] = ev->fields[2].v.u;
  s->window_accepts[i] = ev->fields[3].v.u;
  s->k[i] = ev->fields[4].v.d;
  s->mono_ns[i] = ev->mono_ns;
  snprintf(s->name[i], sizeof s->name[i], "%s", ev->name);
  snprintf(s->reason[i], sizeof s->reason[i], "%s", ev->reason);
  snprintf(s->kind[i], sizeof s->kind[i], "%s", bw_event_type_kind(ev->type));
}

/* Refusals are summarised at most once a second (the first summary a
 * second after creation, on the refusal that finds it due), and the rest
 * at free: each summary's count is the refusals since the previous one,
 * with the window as it reads at that moment. Replayed with the seed. */
static void refusals_are_summarised_once_a_second_and_at_free(void **state) {
  env_t *e = *state;
  bw_throttle_config_t cfg;
  bw_error_t err;
  seen_t seen;
  bw_rand_t rng;
  uint64_t req = 0, refused = 0, total = 0;
  memset(&seen, 0, sizeof seen);
  bw_sink_t *sink = bw_sink_callback_new(record, &seen, &err);
  assert_non_null(sink);
  bw_throttle_config_init(&cfg);
  cfg.name = "partner";
  cfg.k = 1.0;
  cfg.seed = 42;
  cfg.clock = e->clock;
  cfg.sink = sink;
  e->t = bw_throttle_new(&cfg, &err);
  assert_non_null(e->t);
  bw_rand_seed(&rng, 42);
  /* Within the first second: refusals, no summary yet. */
  for (int i = 0; i < 20; i++)
    refused += fail_replayed(e, &rng, &req);
  assert_true(refused > 0);
  assert_int_equal(seen.n, 0);
  /* A second later, the first refusal is summarised with all so far. */
  bw_clock_manual_advance(e->clock, BW_NS_PER_S);
  while (!fail_replayed(e, &rng, &req)) {
  }
  refused++;
  assert_int_equal(seen.n, 1);
  assert_int_equal(seen.count[0], refused);
  assert_int_equal(seen.window_requests[0], req);
  assert_int_equal(seen.window_accepts[0], 0);
  assert_true(seen.probability[0] == formula(1.0, (double)req, 0.0));
  assert_true(seen.k[0] == 1.0);
  assert_int_equal(seen.mono_ns[0], BWT_T0_NS + BW_NS_PER_S);
  assert_string_equal(seen.name[0], "partner");
  assert_string_equal(seen.kind[0], "throttle");
  {
    char want[160];
    snprintf(want, sizeof want,
             "%llu requests refused locally (p %.3f: %llu requests, 0 "
             "accepts in the window, K 1)",
             (unsigned long long)refused, seen.probability[0],
             (unsigned long long)req);
    assert_string_equal(seen.reason[0], want);
  }
  total = refused;
  /* More refusals within that second: none summarised until free. */
  refused = 0;
  for (int i = 0; i < 30; i++)
    refused += fail_replayed(e, &rng, &req);
  assert_true(refused > 0);
  assert_int_equal(seen.n, 1);
  bw_clock_manual_advance(e->clock, 500 * MS);
  bw_throttle_free(e->t);
  e->t = NULL;
  assert_int_equal(seen.n, 2);
  assert_int_equal(seen.count[1], refused);
  assert_int_equal(seen.window_requests[1], req);
  assert_int_equal(seen.mono_ns[1], BWT_T0_NS + 1500 * MS);
  total += refused;
  /* The summaries add up to every refusal. */
  assert_int_equal(seen.count[0] + seen.count[1], total);
  bw_sink_free(sink);
}

/* Without a refusal since the last summary, free emits nothing. */
static void no_refusal_no_summary(void **state) {
  env_t *e = *state;
  bw_throttle_config_t cfg;
  bw_error_t err;
  seen_t seen;
  memset(&seen, 0, sizeof seen);
  bw_sink_t *sink = bw_sink_callback_new(record, &seen, &err);
  assert_non_null(sink);
  bw_throttle_config_init(&cfg);
  cfg.clock = e->clock;
  cfg.sink = sink;
  e->t = bw_throttle_new(&cfg, &err);
  assert_non_null(e->t);
  for (int i = 0; i < 10; i++)
    assert_status(call(e, BW_SUCCESS), BW_OK);
  bw_clock_manual_advance(e->clock, 5 * BW_NS_PER_S);
  bw_throttle_free(e->t);
  e->t = NULL;
  assert_int_equal(seen.n, 0);
  bw_sink_free(sink);
}

/* After creation nothing allocates: the strategy's enter and leave (refusals
 * included), the readers and the live setter. */
static void the_verbs_allocate_nothing(void **state) {
  env_t *e = *state;
  bw_throttle_stats_t st;
  bw_throttle_config_t c;
  long attempts;
  make(e, 1.0, 1000, 10, 5);
  oom_fail_at(1, true);
  call(e, BW_SUCCESS);
  for (int i = 0; i < 50; i++)
    call(e, BW_FAILURE); /* refusals among them */
  (void)bw_throttle_probability(e->t);
  bw_throttle_stats(e->t, &st);
  bw_throttle_config_of(e->t, &c);
  (void)bw_throttle_set_k(e->t, 2.0, NULL);
  attempts = oom_attempts();
  oom_fail_at(0, false);
  assert_int_equal(attempts, 0);
  assert_int_equal(st.requests, 51);
  assert_true(st.throttled > 0);
}

static int oom_scenario(void *sink) {
  bw_throttle_config_t cfg;
  bw_error_t err;
  bw_throttle_t *t;
  bw_throttle_config_init(&cfg);
  cfg.name = "oom";
  cfg.sink = sink;
  t = bw_throttle_new(&cfg, &err);
  if (t == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    return BW_E_NOMEM;
  }
  assert_string_equal(bw_throttle_name(t), "oom");
  bw_throttle_free(t);
  return BW_OK;
}

/* Creation fails cleanly at each allocation (the throttle with its window,
 * and its name), with or without a sink: NULL and BW_E_NOMEM, nothing
 * leaked. */
static void creation_survives_every_allocation_failure(void **state) {
  (void)state;
  bw_sink_t *sink = bw_sink_callback_new(record, NULL, NULL);
  assert_non_null(sink);
  /* Three runs: the throttle, its name, then none failing. */
  assert_int_equal(oom_walk(oom_scenario, NULL, false), 3);
  assert_int_equal(oom_walk(oom_scenario, sink, false), 3);
  bw_sink_free(sink);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_init_fills_documented_defaults),
      cmocka_unit_test(bad_configs_are_refused_naming_the_field),
      cmocka_unit_test(null_objects_are_harmless),
      cmocka_unit_test_setup_teardown(
          the_strategy_has_a_kind_and_the_throttles_name, setup, teardown),
      cmocka_unit_test_setup_teardown(
          the_probability_follows_the_formula_at_known_counts, setup, teardown),
      cmocka_unit_test_setup_teardown(no_refusal_while_accepts_keep_up, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(refusals_follow_the_formula_and_the_seed,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(the_window_slides_and_old_counts_expire,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(requests_count_when_their_fate_is_known,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          in_a_pipeline_rejections_raise_local_refusals, setup, teardown),
      cmocka_unit_test_setup_teardown(a_call_refused_further_in_is_withdrawn,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_call_cancelled_during_its_attempt_is_withdrawn, setup, teardown),
      cmocka_unit_test_setup_teardown(inside_a_retry_each_attempt_is_a_request,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(set_k_changes_the_multiplier_live, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(config_of_reads_back_the_configuration,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          refusals_are_summarised_once_a_second_and_at_free, setup, teardown),
      cmocka_unit_test_setup_teardown(no_refusal_no_summary, setup, teardown),
      cmocka_unit_test_setup_teardown(the_verbs_allocate_nothing, setup,
                                      teardown),
      cmocka_unit_test(creation_survives_every_allocation_failure),
  };
  if (oom_install() != BW_OK) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

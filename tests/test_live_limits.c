/* Live limits: the setters a configuration reload uses on live objects —
 * bw_bulkhead_set_max_concurrent, bw_ratelimit_set_rate,
 * bw_limiter_set_bounds, bw_budget_set_ratio — and the config_of readers
 * behind the reload's report. Exact, on a manual clock: what a call is
 * answered right after each change, what the calls already in do, and that
 * a refused change changes nothing. */
#include "bw_test.h"

/* ---- bulkhead ------------------------------------------------------------ */

typedef struct granted_s {
  int n;
  bw_permit_t p[4];
} granted_t;

static void on_grant(bw_bulkhead_waiter_t *w, const bw_permit_t *p, void *ud) {
  granted_t *g = ud;
  (void)w;
  g->p[g->n++] = *p;
}

static bw_bulkhead_t *bulkhead(bwt_env_t *e, uint32_t max) {
  bw_bulkhead_config_t c;
  bw_error_t err;
  bw_bulkhead_t *bh;
  bw_bulkhead_config_init(&c);
  c.name = "payment_agent";
  c.max_concurrent = max;
  c.timeout_ms = 0;
  c.clock = e->clock;
  bh = bw_bulkhead_new(&c, &err);
  assert_non_null(bh);
  return bh;
}

/* Raising max_concurrent hands the new slots to the queued waiters at once,
 * oldest first; a newcomer cannot take one ahead of them. */
static void test_bulkhead_raise_admits_waiters_in_order(void **state) {
  bwt_env_t *e = *state;
  bw_bulkhead_t *bh = bulkhead(e, 1);
  bw_bulkhead_waiter_t w1, w2;
  granted_t g1 = {0}, g2 = {0};
  bw_permit_t a, x;
  bw_bulkhead_stats_t st;
  bw_error_t err;
  memset(&w1, 0, sizeof w1);
  memset(&w2, 0, sizeof w2);
  assert_status(bw_bulkhead_try_acquire(bh, &a), BW_OK);
  assert_int_equal(bw_bulkhead_acquire_async(bh, &x, &w1, on_grant, &g1),
                   BW_BULKHEAD_QUEUED);
  assert_int_equal(bw_bulkhead_acquire_async(bh, &x, &w2, on_grant, &g2),
                   BW_BULKHEAD_QUEUED);
  assert_status(bw_bulkhead_set_max_concurrent(bh, 2, &err), BW_OK);
  assert_int_equal(g1.n, 1); /* the oldest waiter, at once */
  assert_int_equal(g2.n, 0);
  assert_status(bw_bulkhead_try_acquire(bh, &x), BW_E_FULL); /* queued: w2 */
  assert_status(bw_bulkhead_set_max_concurrent(bh, 3, &err), BW_OK);
  assert_int_equal(g2.n, 1);
  bw_bulkhead_stats(bh, &st);
  assert_int_equal(st.max_concurrent, 3);
  assert_int_equal(st.in_use, 3);
  assert_int_equal(st.waiting, 0);
  assert_int_equal(st.admitted_after_wait, 2);
  assert_status(bw_bulkhead_release(bh, &a), BW_OK);
  assert_status(bw_bulkhead_release(bh, &g1.p[0]), BW_OK);
  assert_status(bw_bulkhead_release(bh, &g2.p[0]), BW_OK);
  bw_bulkhead_free(bh);
}

/* Lowering max_concurrent revokes nothing: the three calls in finish; new
 * calls are refused, and a queued waiter waits, until in-use is below the
 * new bound; a released slot is given back, not passed on, meanwhile. */
static void test_bulkhead_lower_revokes_nothing(void **state) {
  bwt_env_t *e = *state;
  bw_bulkhead_t *bh = bulkhead(e, 3);
  bw_bulkhead_waiter_t w;
  granted_t g = {0};
  bw_permit_t p[3], x;
  bw_bulkhead_stats_t st;
  bw_error_t err;
  memset(&w, 0, sizeof w);
  for (int i = 0; i < 3; i++)
    assert_status(bw_bulkhead_try_acquire(bh, &p[i]), BW_OK);
  assert_status(bw_bulkhead_set_max_concurrent(bh, 1, &err), BW_OK);
  bw_bulkhead_stats(bh, &st);
  assert_int_equal(st.max_concurrent, 1);
  assert_int_equal(st.in_use, 3);
  assert_int_equal(st.available, 0);
  assert_status(bw_bulkhead_try_acquire(bh, &x), BW_E_FULL);
  assert_int_equal(bw_bulkhead_acquire_async(bh, &x, &w, on_grant, &g),
                   BW_BULKHEAD_QUEUED);
  assert_status(bw_bulkhead_release(bh, &p[0]), BW_OK); /* 3 -> 2 */
  assert_int_equal(g.n, 0);
  assert_status(bw_bulkhead_release(bh, &p[1]), BW_OK); /* 2 -> 1 */
  assert_int_equal(g.n, 0);
  bw_bulkhead_stats(bh, &st);
  assert_int_equal(st.in_use, 1);
  assert_int_equal(st.waiting, 1);
  assert_status(bw_bulkhead_release(bh, &p[2]), BW_OK); /* the waiter's turn */
  assert_int_equal(g.n, 1);
  bw_bulkhead_stats(bh, &st);
  assert_int_equal(st.in_use, 1);
  assert_int_equal(st.waiting, 0);
  assert_status(bw_bulkhead_try_acquire(bh, &x), BW_E_FULL);
  assert_status(bw_bulkhead_release(bh, &g.p[0]), BW_OK);
  assert_status(bw_bulkhead_try_acquire(bh, &x), BW_OK);
  assert_status(bw_bulkhead_release(bh, &x), BW_OK);
  bw_bulkhead_free(bh);
}

/* A refused value names the field and changes nothing; config_of reads
 * back the live value and the creation ones. */
static void test_bulkhead_bad_values_and_config_of(void **state) {
  bwt_env_t *e = *state;
  bw_bulkhead_t *bh = bulkhead(e, 4);
  bw_bulkhead_config_t c;
  bw_error_t err;
  bwt_prefill_error(&err);
  assert_status(bw_bulkhead_set_max_concurrent(bh, 0, &err), BW_E_INVAL);
  assert_string_equal(err.field, "max_concurrent");
  assert_contains(err.message, "max_concurrent must be in 1..1000000 (got 0)");
  assert_status(bw_bulkhead_set_max_concurrent(bh, 1000001, &err), BW_E_INVAL);
  assert_string_equal(err.field, "max_concurrent");
  assert_status(bw_bulkhead_set_max_concurrent(NULL, 3, &err), BW_E_INVAL);
  bw_bulkhead_config_of(bh, &c);
  assert_int_equal(c.max_concurrent, 4);
  assert_status(bw_bulkhead_set_max_concurrent(bh, 7, &err), BW_OK);
  bw_bulkhead_config_of(bh, &c);
  assert_string_equal(c.name, "payment_agent");
  assert_int_equal(c.max_concurrent, 7);
  assert_int_equal(c.max_wait_ms, 2000);
  assert_int_equal(c.timeout_ms, 0);
  assert_int_equal(c.max_waiting, 1000);
  assert_ptr_equal(c.clock, e->clock);
  assert_non_null(c.wall_clock);
  assert_null(c.sink);
  bw_bulkhead_config_of(NULL, &c); /* nothing */
  bw_bulkhead_config_of(bh, NULL);
  bw_bulkhead_free(bh);
}

/* ---- rate limiter -------------------------------------------------------- */

static bw_ratelimit_t *ratelimit(bwt_env_t *e, double rate, uint32_t burst) {
  bw_ratelimit_config_t c;
  bw_error_t err;
  bw_ratelimit_t *rl;
  bw_ratelimit_config_init(&c);
  c.name = "geo_api";
  c.rate_per_sec = rate;
  c.burst = burst;
  c.clock = e->clock;
  rl = bw_ratelimit_new(&c, &err);
  assert_non_null(rl);
  return rl;
}

#define ADMIT(rl)                                              \
  do {                                                         \
    int64_t w_ = -1;                                           \
    assert_status(bw_ratelimit_try_acquire((rl), &w_), BW_OK); \
    assert_int_equal(w_, 0);                                   \
  } while (0)
#define REFUSE(rl, ms)                                             \
  do {                                                             \
    int64_t w_ = -1;                                               \
    assert_status(bw_ratelimit_try_acquire((rl), &w_), BW_E_FULL); \
    assert_int_equal(w_, (ms));                                    \
  } while (0)

/* GCRA with a new rate and burst: the time already booked stays booked,
 * then calls are spaced by the new rate with the new burst. */
static void test_ratelimit_set_rate_exact(void **state) {
  bwt_env_t *e = *state;
  bw_ratelimit_t *rl = ratelimit(e, 10, 1); /* one call per 100 ms */
  bw_ratelimit_stats_t st;
  bw_ratelimit_config_t c;
  bw_error_t err;
  ADMIT(rl); /* TAT = t0 + 100 ms */
  REFUSE(rl, 100);
  assert_status(bw_ratelimit_set_rate(rl, 100, 1, &err), BW_OK); /* T 10 ms */
  REFUSE(rl, 100); /* the booked 100 ms stay booked */
  bwt_advance_ms(e, 100);
  ADMIT(rl); /* TAT = t0 + 110 ms */
  REFUSE(rl, 10);
  assert_status(bw_ratelimit_set_rate(rl, 100, 5, &err), BW_OK); /* tau 40 */
  ADMIT(rl); /* ahead 10 ms: TAT 120 */
  ADMIT(rl); /* 20: TAT 130 */
  ADMIT(rl); /* 30: TAT 140 */
  ADMIT(rl); /* 40 <= tau: TAT 150 */
  REFUSE(rl, 10);
  assert_status(bw_ratelimit_set_rate(rl, 1, 1, &err), BW_OK); /* T 1 s */
  REFUSE(rl, 50);
  bwt_advance_ms(e, 50);
  ADMIT(rl); /* TAT = t0 + 1150 ms */
  bwt_advance_ms(e, 999);
  REFUSE(rl, 1);
  bwt_advance_ms(e, 1);
  ADMIT(rl);
  bw_ratelimit_stats(rl, &st);
  assert_int_equal(st.admitted, 8);
  assert_int_equal(st.limited, 6);
  bw_ratelimit_config_of(rl, &c);
  assert_string_equal(c.name, "geo_api");
  assert_true(c.rate_per_sec == 1.0);
  assert_int_equal(c.burst, 1);
  assert_ptr_equal(c.clock, e->clock);
  bw_ratelimit_free(rl);
}

/* A refused change names the field and the rule, and changes nothing. */
static void test_ratelimit_bad_values(void **state) {
  bwt_env_t *e = *state;
  bw_ratelimit_t *rl = ratelimit(e, 10, 2);
  bw_ratelimit_config_t c;
  bw_error_t err;
  bwt_prefill_error(&err);
  assert_status(bw_ratelimit_set_rate(rl, 0, 1, &err), BW_E_INVAL);
  assert_string_equal(err.field, "rate_per_sec");
  assert_status(bw_ratelimit_set_rate(rl, 10, 0, &err), BW_E_INVAL);
  assert_string_equal(err.field, "burst");
  assert_status(bw_ratelimit_set_rate(rl, 1e-6, 100, &err), BW_E_INVAL);
  assert_string_equal(err.field, "burst");
  assert_contains(err.message, "at most a year");
  assert_status(bw_ratelimit_set_rate(NULL, 10, 1, &err), BW_E_INVAL);
  bw_ratelimit_config_of(rl, &c);
  assert_true(c.rate_per_sec == 10.0);
  assert_int_equal(c.burst, 2);
  ADMIT(rl);
  ADMIT(rl);
  REFUSE(rl, 100);
  bw_ratelimit_free(rl);
}

/* ---- adaptive limiter ---------------------------------------------------- */

static bw_limiter_t *limiter(bwt_env_t *e) {
  bw_limiter_config_t c;
  bw_error_t err;
  bw_limiter_t *lim;
  bw_limiter_config_init(&c);
  c.name = "search_agent";
  c.algorithm = BW_LIMITER_AIMD;
  c.initial_limit = 20;
  c.min_limit = 1;
  c.max_limit = 200;
  c.clock = e->clock;
  c.sink = e->sink;
  c.wall_clock = e->wall;
  lim = bw_limiter_new(&c, &err);
  assert_non_null(lim);
  return lim;
}

/* The limit is clamped into the new range at once (reported as a change);
 * growth stops at the new max_limit, a drop at the new min_limit; the
 * calls in flight above a lowered limit finish. */
static void test_limiter_set_bounds_exact(void **state) {
  bwt_env_t *e = *state;
  bw_limiter_t *lim = limiter(e);
  bw_permit_t p[10], x;
  bw_limiter_config_t c;
  bw_error_t err;
  assert_status(bw_limiter_set_bounds(lim, 1, 8, &err), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 8);
  for (int i = 0; i < 8; i++)
    assert_status(bw_limiter_try_acquire(lim, &p[i]), BW_OK);
  assert_status(bw_limiter_try_acquire(lim, &x), BW_E_FULL);
  bwt_advance_ms(e, 10);
  /* A success admitted at in-flight 8 grows AIMD's limit by one in slow
   * start: held at the new max. */
  assert_status(bw_limiter_release(lim, &p[7], BW_LIMIT_SUCCESS), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 8);
  /* Widened back: the same kind of success grows it. */
  assert_status(bw_limiter_set_bounds(lim, 1, 200, &err), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 8);
  assert_status(bw_limiter_release(lim, &p[6], BW_LIMIT_SUCCESS), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 9);
  /* Lowered below the calls in flight (6): they finish, new ones wait. */
  assert_status(bw_limiter_set_bounds(lim, 3, 5, &err), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 5);
  assert_status(bw_limiter_try_acquire(lim, &x), BW_E_FULL);
  assert_status(bw_limiter_release(lim, &p[5], BW_LIMIT_SUCCESS), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 5); /* growth held at max 5 */
  assert_status(bw_limiter_try_acquire(lim, &x), BW_E_FULL); /* 5 in flight */
  assert_status(bw_limiter_release(lim, &p[4], BW_LIMIT_SUCCESS), BW_OK);
  assert_status(bw_limiter_try_acquire(lim, &p[8]), BW_OK); /* 4 < 5 */
  /* A raised min_limit lifts the limit, and a drop stops there. */
  assert_status(bw_limiter_set_bounds(lim, 7, 10, &err), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 7);
  assert_status(bw_limiter_release(lim, &p[3], BW_LIMIT_DROPPED), BW_OK);
  assert_int_equal(bw_limiter_limit(lim), 7);
  /* Every change of the limit was reported: 20->8, 8->9, 9->5, 5->7. */
  assert_int_equal(bwt_count(e->rec, BW_EV_LIMIT_CHANGED), 4);
  bw_limiter_config_of(lim, &c);
  assert_string_equal(c.name, "search_agent");
  assert_int_equal(c.min_limit, 7);
  assert_int_equal(c.max_limit, 10);
  assert_int_equal(c.initial_limit, 20); /* the creation value */
  assert_int_equal(c.algorithm, BW_LIMITER_AIMD);
  assert_ptr_equal(c.clock, e->clock);
  for (int i = 0; i < 3; i++)
    assert_status(bw_limiter_release(lim, &p[i], BW_LIMIT_IGNORED), BW_OK);
  assert_status(bw_limiter_release(lim, &p[8], BW_LIMIT_IGNORED), BW_OK);
  bw_limiter_free(lim);
}

/* The live range stays inside the creation range; a refused change names
 * the field and the rule and changes nothing. */
static void test_limiter_bad_bounds(void **state) {
  bwt_env_t *e = *state;
  bw_limiter_t *lim = limiter(e);
  bw_limiter_config_t c;
  bw_error_t err;
  assert_status(bw_limiter_set_bounds(lim, 5, 50, &err), BW_OK);
  bwt_prefill_error(&err);
  assert_status(bw_limiter_set_bounds(lim, 0, 50, &err), BW_E_INVAL);
  assert_string_equal(err.field, "min_limit");
  assert_contains(err.message, "min_limit must be in [1, 200]");
  assert_status(bw_limiter_set_bounds(lim, 5, 201, &err), BW_E_INVAL);
  assert_string_equal(err.field, "max_limit");
  assert_contains(err.message, "max_limit must be in [min_limit 5, 200]");
  assert_status(bw_limiter_set_bounds(lim, 9, 8, &err), BW_E_INVAL);
  assert_string_equal(err.field, "max_limit");
  assert_status(bw_limiter_set_bounds(NULL, 1, 2, &err), BW_E_INVAL);
  bw_limiter_config_of(lim, &c);
  assert_int_equal(c.min_limit, 5);
  assert_int_equal(c.max_limit, 50);
  assert_int_equal(bw_limiter_limit(lim), 20);
  bw_limiter_free(lim);
}

/* ---- retry budget -------------------------------------------------------- */

/* A ratio budget's share and floor change live; the window's counts are
 * kept. 10 requests in the window: 20% allows 2 retries, 50% 5, and a
 * floor of 1 a second over the 10 s window 10 whatever the share. */
static void test_budget_set_ratio_exact(void **state) {
  bwt_env_t *e = *state;
  bw_budget_config_t c;
  bw_error_t err;
  bw_budget_t *b, *tb;
  bw_budget_stats_t st;
  int allowed = 0;
  bw_budget_config_init(&c);
  c.name = "payment_api";
  c.kind = BW_BUDGET_RATIO;
  c.budget_percent = 20;
  c.min_retries_per_sec = 0;
  c.window_ms = 10000;
  c.clock = e->clock;
  b = bw_budget_new(&c, &err);
  assert_non_null(b);
  for (int i = 0; i < 10; i++)
    bw_budget_on_request(b);
  while (allowed < 20 && bw_budget_try_retry(b))
    allowed++;
  assert_int_equal(allowed, 2);
  assert_status(bw_budget_set_ratio(b, 50, 0, &err), BW_OK);
  while (allowed < 20 && bw_budget_try_retry(b))
    allowed++;
  assert_int_equal(allowed, 5);
  assert_status(bw_budget_set_ratio(b, 0, 1, &err), BW_OK);
  while (allowed < 20 && bw_budget_try_retry(b))
    allowed++;
  assert_int_equal(allowed, 10);
  bw_budget_stats(b, &st);
  assert_int_equal(st.allowed, 10);
  assert_int_equal(st.denied, 3);
  assert_int_equal(st.window_retries, 10);
  bwt_prefill_error(&err);
  assert_status(bw_budget_set_ratio(b, 101, 1, &err), BW_E_INVAL);
  assert_string_equal(err.field, "budget_percent");
  assert_status(bw_budget_set_ratio(b, 20, -1, &err), BW_E_INVAL);
  assert_string_equal(err.field, "min_retries_per_sec");
  assert_status(bw_budget_set_ratio(NULL, 20, 1, &err), BW_E_INVAL);
  bw_budget_config_of(b, &c);
  assert_string_equal(c.name, "payment_api");
  assert_true(c.budget_percent == 0.0);
  assert_true(c.min_retries_per_sec == 1.0);
  assert_int_equal(c.window_ms, 10000);
  assert_ptr_equal(c.clock, e->clock);
  /* A token bucket's fields are fixed: refused, naming kind. */
  bw_budget_config_init(&c);
  c.max_tokens = 2.5;
  tb = bw_budget_new(&c, &err);
  assert_non_null(tb);
  assert_status(bw_budget_set_ratio(tb, 20, 1, &err), BW_E_INVAL);
  assert_string_equal(err.field, "kind");
  bw_budget_config_of(tb, &c);
  assert_int_equal(c.kind, BW_BUDGET_TOKEN_BUCKET);
  assert_true(c.max_tokens == 2.5);
  assert_true(c.token_ratio == 0.1);
  bw_budget_free(tb);
  bw_budget_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_bulkhead_raise_admits_waiters_in_order, bwt_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_bulkhead_lower_revokes_nothing,
                                      bwt_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_bulkhead_bad_values_and_config_of,
                                      bwt_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_ratelimit_set_rate_exact, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(test_ratelimit_bad_values, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(test_limiter_set_bounds_exact, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(test_limiter_bad_bounds, bwt_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(test_budget_set_ratio_exact, bwt_setup,
                                      bwt_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

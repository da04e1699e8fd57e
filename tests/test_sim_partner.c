/* Specification tests: the partner model of the Polly lab
 * (simulador/Program.cs).
 *
 * Capacity C requests in flight (the arriving request included: Program.cs
 * increments, then compares). At or under C: 200 after uniform [80, 180] ms.
 * Above C: uniform [800, 2500] ms, then 429 with probability 0.6, else 200;
 * an optional Retry-After on the 429. In-flight accounting is the caller's
 * done. Everything is seeded: the counts below are exact for their seeds. */
#include "bw_test.h"
#include "breakwater/rand.h"
#include "breakwater/sim.h"

/* 429s among 100,000 over-capacity requests with seed 2026 (expected 60,000,
 * sd 155). */
#define SEED2026_429 59998
/* Tail answers among 100,000 with tail_ratio 0.05 and seed 2026 (expected
 * 5,000, sd 69). */
#define SEED2026_TAIL 4902
/* 500s among 100,000 answers under capacity with error_ratio 0.05 and seed
 * 2026 (expected 5,000, sd 69). */
#define SEED2026_500 4902

static bw_sim_partner_t *partner(const bw_sim_partner_config_t *cfg) {
  bw_error_t err;
  bw_sim_partner_t *p = bw_sim_partner_new(cfg, &err);
  if (p == NULL) fail_msg("bw_sim_partner_new: %s", err.message);
  return p;
}

static bw_sim_partner_stats_t stats(const bw_sim_partner_t *p) {
  bw_sim_partner_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_sim_partner_stats(p, &s);
  return s;
}

static void defaults_are_the_polly_labs_numbers(void **state) {
  bw_sim_partner_config_t cfg;
  (void)state;
  memset(&cfg, 0xA5, sizeof(cfg));
  bw_sim_partner_config_init(&cfg);
  assert_u64_eq(cfg.capacity, 400);
  assert_i64_eq(cfg.ok_min_ms, 80);
  assert_i64_eq(cfg.ok_max_ms, 180);
  assert_i64_eq(cfg.slow_min_ms, 800);
  assert_i64_eq(cfg.slow_max_ms, 2500);
  assert_dbl_eq(cfg.throttle_ratio, 0.6, 0);
  assert_i64_eq(cfg.retry_after_s, -1);
  assert_u64_eq(cfg.seed, 4);
  assert_status(bw_sim_partner_config_validate(&cfg, NULL), BW_OK);
  bw_sim_partner_config_init(NULL); /* ignored */
}

static void bad_configurations_are_refused_naming_the_field(void **state) {
  static const struct {
    const char *field;
    const char *message;
  } want[] = {
      {"capacity", "capacity must be >= 1 (got 0)"},
      {"ok_min_ms", "ok_min_ms must be >= 0 (got -1)"},
      {"ok_max_ms", "ok_max_ms must be >= ok_min_ms (got 79 < 80)"},
      {"slow_min_ms", "slow_min_ms must be >= 0 (got -5)"},
      {"slow_max_ms", "slow_max_ms must be >= slow_min_ms (got 799 < 800)"},
      {"throttle_ratio", "throttle_ratio must be in [0, 1] (got 1.5)"},
      {"throttle_ratio", "throttle_ratio must be in [0, 1] (got nan)"},
      {"retry_after_s",
       "retry_after_s must be -1 (no header) or in [0, 86400] (got -2)"},
      {"retry_after_s",
       "retry_after_s must be -1 (no header) or in [0, 86400] (got 86401)"},
      {"slow_max_ms", "latencies must be <= 86400000 ms (one day)"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    bw_sim_partner_config_t cfg;
    bw_error_t err;
    bw_sim_partner_config_init(&cfg);
    switch (i) {
    case 0:
      cfg.capacity = 0;
      break;
    case 1:
      cfg.ok_min_ms = -1;
      break;
    case 2:
      cfg.ok_max_ms = 79;
      break;
    case 3:
      cfg.slow_min_ms = -5;
      break;
    case 4:
      cfg.slow_max_ms = 799;
      break;
    case 5:
      cfg.throttle_ratio = 1.5;
      break;
    case 6:
      cfg.throttle_ratio = NAN;
      break;
    case 7:
      cfg.retry_after_s = -2;
      break;
    case 8:
      cfg.retry_after_s = 86401;
      break;
    default:
      cfg.slow_max_ms = INT64_C(86400001);
      break;
    }
    memset(&err, 0, sizeof(err));
    assert_null(bw_sim_partner_new(&cfg, &err));
    assert_status(err.code, BW_E_INVAL);
    assert_string_equal(err.field, want[i].field);
    assert_string_equal(err.message, want[i].message);
  }
  {
    bw_error_t err;
    assert_status(bw_sim_partner_config_validate(NULL, &err), BW_E_INVAL);
    assert_string_equal(err.message, "config must not be NULL");
  }
}

/* 400 requests at once against capacity 400: none is over capacity. */
static void under_capacity_every_answer_is_a_fast_200(void **state) {
  bw_sim_partner_t *p = partner(NULL);
  bw_sim_partner_stats_t s;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  int i;
  (void)state;
  for (i = 0; i < 400; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    assert_int_equal(r.status, 200);
    assert_true(r.latency_ms >= 80 && r.latency_ms <= 180);
    assert_i64_eq(r.retry_after_ms, -1);
    if (r.latency_ms < lo) lo = r.latency_ms;
    if (r.latency_ms > hi) hi = r.latency_ms;
  }
  s = stats(p);
  assert_u64_eq(s.received, 400);
  assert_u64_eq(s.status_200, 400);
  assert_u64_eq(s.status_429, 0);
  assert_u64_eq(s.over_capacity, 0);
  assert_u64_eq(s.in_flight, 400);
  assert_u64_eq(s.max_in_flight, 400);
  assert_u64_eq(s.completed, 0);
  /* Uniform over the inclusive range: both ends are reached in 400 draws of
   * 101 values (exact for the default seed). */
  assert_i64_eq(lo, 80);
  assert_i64_eq(hi, 180);
  for (i = 0; i < 400; i++)
    assert_status(bw_sim_partner_done(p), BW_OK);
  s = stats(p);
  assert_u64_eq(s.in_flight, 0);
  assert_u64_eq(s.completed, 400);
  assert_u64_eq(s.max_in_flight, 400);
  /* A done without an admit is refused and changes nothing. */
  assert_status(bw_sim_partner_done(p), BW_E_INVAL);
  assert_u64_eq(stats(p).completed, 400);
  bw_sim_partner_free(p);
}

/* The arriving request counts itself: with C in flight the next is over. */
static void the_request_beyond_capacity_is_the_first_slow_one(void **state) {
  bw_sim_partner_config_t cfg;
  bw_sim_partner_t *p;
  bw_sim_reply_t r;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.capacity = 3;
  cfg.throttle_ratio = 1.0; /* every slow answer is a 429 */
  p = partner(&cfg);
  r = bw_sim_partner_admit(p, 0);
  assert_int_equal(r.status, 200);
  r = bw_sim_partner_admit(p, 0);
  assert_int_equal(r.status, 200);
  r = bw_sim_partner_admit(p, 0); /* in flight 3 == C: still normal */
  assert_int_equal(r.status, 200);
  assert_true(r.latency_ms >= 80 && r.latency_ms <= 180);
  r = bw_sim_partner_admit(p, 0); /* in flight 4 > C */
  assert_int_equal(r.status, 429);
  assert_true(r.latency_ms >= 800 && r.latency_ms <= 2500);
  assert_i64_eq(r.retry_after_ms, -1);
  assert_u64_eq(stats(p).over_capacity, 1);
  /* Two leave: in flight 2, the next arrival makes 3 == C: normal again. */
  assert_status(bw_sim_partner_done(p), BW_OK);
  assert_status(bw_sim_partner_done(p), BW_OK);
  r = bw_sim_partner_admit(p, 0);
  assert_int_equal(r.status, 200);
  assert_true(r.latency_ms >= 80 && r.latency_ms <= 180);
  assert_u64_eq(stats(p).in_flight, 3);
  assert_u64_eq(stats(p).max_in_flight, 4);
  bw_sim_partner_free(p);
}

/* 100,000 requests above capacity: about 60% are 429 (exact for the seed),
 * every latency in [800, 2500], both ends reached. */
static void over_capacity_sixty_percent_are_429(void **state) {
  bw_sim_partner_config_t cfg;
  bw_sim_partner_t *p;
  bw_sim_partner_stats_t s;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  uint64_t n429 = 0, slow200 = 0;
  int i;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.capacity = 10;
  cfg.seed = 2026;
  p = partner(&cfg);
  for (i = 0; i < 10; i++)
    assert_int_equal(bw_sim_partner_admit(p, 0).status, 200);
  for (i = 0; i < 100000; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    assert_true(r.latency_ms >= 800 && r.latency_ms <= 2500);
    assert_i64_eq(r.retry_after_ms, -1);
    if (r.status == 429)
      n429++;
    else if (r.status == 200)
      slow200++;
    else
      fail_msg("unexpected status %d", r.status);
    if (r.latency_ms < lo) lo = r.latency_ms;
    if (r.latency_ms > hi) hi = r.latency_ms;
  }
  assert_i64_eq(lo, 800);
  assert_i64_eq(hi, 2500);
  assert_u64_eq(n429, SEED2026_429);
  assert_true(n429 > 59000 && n429 < 61000); /* 0.6 within 1% of n */
  s = stats(p);
  assert_u64_eq(s.received, 100010);
  assert_u64_eq(s.status_429, n429);
  assert_u64_eq(s.status_200, 10 + slow200);
  assert_u64_eq(s.over_capacity, 100000);
  assert_u64_eq(s.in_flight, 100010);
  assert_u64_eq(s.max_in_flight, 100010);
  for (i = 0; i < 100010; i++)
    assert_status(bw_sim_partner_done(p), BW_OK);
  s = stats(p);
  assert_u64_eq(s.in_flight, 0);
  assert_u64_eq(s.completed, 100010);
  bw_sim_partner_free(p);
}

static void retry_after_rides_on_429s_only(void **state) {
  bw_sim_partner_config_t cfg;
  bw_sim_partner_t *p;
  int i, seen429 = 0, seen200 = 0;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.capacity = 1;
  cfg.retry_after_s = 3;
  p = partner(&cfg);
  assert_i64_eq(bw_sim_partner_admit(p, 0).retry_after_ms, -1);
  for (i = 0; i < 200; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    if (r.status == 429) {
      assert_i64_eq(r.retry_after_ms, 3000);
      seen429++;
    } else {
      assert_i64_eq(r.retry_after_ms, -1);
      seen200++;
    }
  }
  assert_true(seen429 > 0 && seen200 > 0);
  bw_sim_partner_free(p);
  /* Retry-After: 0 is a header too ("retry now"). */
  cfg.retry_after_s = 0;
  cfg.throttle_ratio = 1.0;
  p = partner(&cfg);
  (void)bw_sim_partner_admit(p, 0);
  assert_i64_eq(bw_sim_partner_admit(p, 0).retry_after_ms, 0);
  bw_sim_partner_free(p);
}

static void throttle_ratio_zero_makes_slow_200s(void **state) {
  bw_sim_partner_config_t cfg;
  bw_sim_partner_t *p;
  int i;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.capacity = 1;
  cfg.throttle_ratio = 0.0;
  p = partner(&cfg);
  (void)bw_sim_partner_admit(p, 0);
  for (i = 0; i < 1000; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    assert_int_equal(r.status, 200);
    assert_true(r.latency_ms >= 800);
  }
  assert_u64_eq(stats(p).status_429, 0);
  assert_u64_eq(stats(p).over_capacity, 1000);
  bw_sim_partner_free(p);
}

static void same_seed_same_answers_other_seed_other_answers(void **state) {
  bw_sim_partner_config_t cfg;
  bw_sim_partner_t *a, *b, *c;
  int i, differ = 0;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.capacity = 50;
  a = partner(&cfg);
  b = partner(&cfg);
  cfg.seed = 5;
  c = partner(&cfg);
  for (i = 0; i < 500; i++) {
    bw_sim_reply_t ra = bw_sim_partner_admit(a, i);
    bw_sim_reply_t rb = bw_sim_partner_admit(b, i);
    bw_sim_reply_t rc = bw_sim_partner_admit(c, i);
    assert_int_equal(ra.status, rb.status);
    assert_i64_eq(ra.latency_ms, rb.latency_ms);
    if (ra.latency_ms != rc.latency_ms || ra.status != rc.status) differ++;
  }
  assert_true(differ > 400);
  bw_sim_partner_free(a);
  bw_sim_partner_free(b);
  bw_sim_partner_free(c);
}

static void null_partner_is_handled(void **state) {
  bw_sim_reply_t r = bw_sim_partner_admit(NULL, 0);
  bw_sim_partner_stats_t s;
  (void)state;
  assert_int_equal(r.status, 0);
  assert_i64_eq(r.latency_ms, 0);
  assert_i64_eq(r.retry_after_ms, -1);
  assert_status(bw_sim_partner_done(NULL), BW_E_INVAL);
  memset(&s, 0xA5, sizeof(s));
  bw_sim_partner_stats(NULL, &s);
  assert_u64_eq(s.received, 0);
  assert_u64_eq(s.max_in_flight, 0);
  bw_sim_partner_stats(NULL, NULL);
  bw_sim_partner_free(NULL);
}

/* The slow tail (hedging's case): with probability tail_ratio an answer
 * under capacity takes tail_ms instead. Without a tail nothing more is
 * drawn, so every existing seed keeps its answers. */
static void a_slow_tail_replaces_the_ok_latency(void **state) {
  bw_sim_partner_config_t cfg, tail;
  bw_sim_partner_t *a, *b;
  bw_error_t err;
  uint64_t slow = 0;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  assert_dbl_eq(cfg.tail_ratio, 0.0, 0);
  assert_i64_eq(cfg.tail_ms, 2000);
  tail = cfg;
  tail.tail_ratio = 1.5;
  assert_status(bw_sim_partner_config_validate(&tail, &err), BW_E_INVAL);
  assert_string_equal(err.field, "tail_ratio");
  assert_string_equal(err.message, "tail_ratio must be in [0, 1] (got 1.5)");
  tail.tail_ratio = 0.05;
  tail.tail_ms = -1;
  assert_status(bw_sim_partner_config_validate(&tail, &err), BW_E_INVAL);
  assert_string_equal(err.field, "tail_ms");
  assert_string_equal(err.message, "tail_ms must be in [0, 86400000] (got -1)");
  /* No tail: the same answers whatever tail_ms says. */
  tail = cfg;
  tail.tail_ms = 7;
  a = partner(&cfg);
  b = partner(&tail);
  for (int i = 0; i < 1000; i++) {
    bw_sim_reply_t x = bw_sim_partner_admit(a, 0);
    bw_sim_reply_t y = bw_sim_partner_admit(b, 0);
    assert_i64_eq(x.latency_ms, y.latency_ms);
    bw_sim_partner_done(a);
    bw_sim_partner_done(b);
  }
  assert_u64_eq(stats(b).tail, 0);
  bw_sim_partner_free(a);
  bw_sim_partner_free(b);
  /* Every answer in the tail. */
  tail.tail_ratio = 1.0;
  tail.tail_ms = 2000;
  a = partner(&tail);
  for (int i = 0; i < 100; i++) {
    bw_sim_reply_t x = bw_sim_partner_admit(a, 0);
    assert_int_equal(x.status, 200);
    assert_i64_eq(x.latency_ms, 2000);
    bw_sim_partner_done(a);
  }
  assert_u64_eq(stats(a).tail, 100);
  bw_sim_partner_free(a);
  /* 5 % of 100,000 with seed 2026: expected 5,000, sd 69. */
  tail.tail_ratio = 0.05;
  tail.seed = 2026;
  a = partner(&tail);
  for (int i = 0; i < 100000; i++) {
    if (bw_sim_partner_admit(a, 0).latency_ms == 2000) slow++;
    bw_sim_partner_done(a);
  }
  assert_u64_eq(stats(a).tail, slow);
  assert_u64_eq(slow, SEED2026_TAIL);
  bw_sim_partner_free(a);
}

/* The model's draws, replayed on a generator of the same seed: under
 * capacity the ok latency, then the tail's draw (when tail_ratio > 0), then
 * the error's (when error_ratio > 0); above capacity the slow latency, then
 * the 429's. `in_flight` is the count with the arriving request. */
static bw_sim_reply_t replay(const bw_sim_partner_config_t *cfg, bw_rand_t *g,
                             uint32_t in_flight) {
  bw_sim_reply_t r = {200, 0, -1};
  if (in_flight <= cfg->capacity) {
    r.latency_ms = bw_rand_range(g, cfg->ok_min_ms, cfg->ok_max_ms);
    if (cfg->tail_ratio > 0.0 && bw_rand_double(g) < cfg->tail_ratio)
      r.latency_ms = cfg->tail_ms;
    if (cfg->error_ratio > 0.0 && bw_rand_double(g) < cfg->error_ratio)
      r.status = 500;
  } else {
    r.latency_ms = bw_rand_range(g, cfg->slow_min_ms, cfg->slow_max_ms);
    if (bw_rand_double(g) < cfg->throttle_ratio) r.status = 429;
  }
  return r;
}

/* Admits `n` requests under a load that climbs to capacity + 3 and falls
 * back (so both branches draw), checking every answer against replay(). */
static void admit_as_replayed(const bw_sim_partner_config_t *cfg, int n) {
  bw_sim_partner_t *p = partner(cfg);
  bw_rand_t g;
  uint32_t in_flight = 0;
  bw_rand_seed(&g, cfg->seed);
  for (int i = 0; i < n; i++) {
    bw_sim_reply_t want, got;
    if (in_flight == cfg->capacity + 3) {
      while (in_flight > 0) {
        assert_status(bw_sim_partner_done(p), BW_OK);
        in_flight--;
      }
    }
    want = replay(cfg, &g, ++in_flight);
    got = bw_sim_partner_admit(p, 0);
    assert_int_equal(got.status, want.status);
    assert_i64_eq(got.latency_ms, want.latency_ms);
    assert_i64_eq(got.retry_after_ms, -1);
  }
  bw_sim_partner_free(p);
}

/* A flaky backend (error_ratio): a share of the answers under capacity are
 * 500s, after the latency they would have had. */
static void error_ratio_defaults_to_none_and_is_validated(void **state) {
  static const double bad[] = {1.5, -0.25, NAN, INFINITY};
  static const char *const msg[] = {"error_ratio must be in [0, 1] (got 1.5)",
                                    "error_ratio must be in [0, 1] (got -0.25)",
                                    "error_ratio must be in [0, 1] (got nan)",
                                    "error_ratio must be in [0, 1] (got inf)"};
  bw_sim_partner_config_t cfg;
  bw_error_t err;
  (void)state;
  memset(&cfg, 0xA5, sizeof(cfg));
  bw_sim_partner_config_init(&cfg);
  assert_dbl_eq(cfg.error_ratio, 0.0, 0);
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    bw_sim_partner_config_t c = cfg;
    c.error_ratio = bad[i];
    memset(&err, 0, sizeof(err));
    assert_status(bw_sim_partner_config_validate(&c, &err), BW_E_INVAL);
    assert_string_equal(err.field, "error_ratio");
    assert_string_equal(err.message, msg[i]);
    assert_null(bw_sim_partner_new(&c, &err));
    assert_string_equal(err.field, "error_ratio");
  }
  cfg.error_ratio = 1.0; /* both ends are valid */
  assert_status(bw_sim_partner_config_validate(&cfg, NULL), BW_OK);
  cfg.error_ratio = 0.0;
  assert_status(bw_sim_partner_config_validate(&cfg, NULL), BW_OK);
}

/* Without errors the model draws exactly what it drew before error_ratio
 * existed (the replay has no error draw then), with or without a tail; with
 * them the error's draw comes after the tail's. */
static void error_ratio_zero_keeps_every_draw(void **state) {
  bw_sim_partner_config_t cfg;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.capacity = 5;
  admit_as_replayed(&cfg, 5000); /* plain */
  cfg.tail_ratio = 0.05;
  admit_as_replayed(&cfg, 5000); /* tail only */
  cfg.error_ratio = 0.3;
  admit_as_replayed(&cfg, 5000); /* tail, then error */
  cfg.tail_ratio = 0.0;
  admit_as_replayed(&cfg, 5000); /* error only */
}

/* error_ratio 1: every answer under capacity is a 500 with the ok latency
 * (exactly the one drawn); above capacity nothing changes (slow 200s at
 * throttle_ratio 0). */
static void error_ratio_one_fails_every_answer_under_capacity(void **state) {
  bw_sim_partner_config_t cfg;
  bw_sim_partner_t *p;
  bw_sim_partner_stats_t s;
  bw_rand_t g;
  int i;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.capacity = 10;
  cfg.throttle_ratio = 0.0;
  cfg.retry_after_s = 3;
  cfg.error_ratio = 1.0;
  p = partner(&cfg);
  bw_rand_seed(&g, cfg.seed);
  for (i = 0; i < 10; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    int64_t ok = bw_rand_range(&g, 80, 180);
    (void)bw_rand_double(&g); /* the error's draw: always < 1 */
    assert_int_equal(r.status, 500);
    assert_i64_eq(r.latency_ms, ok);
    assert_i64_eq(r.retry_after_ms, -1); /* Retry-After is the 429's */
  }
  for (i = 0; i < 100; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    int64_t slow = bw_rand_range(&g, 800, 2500);
    (void)bw_rand_double(&g); /* the 429's draw: never < 0 */
    assert_int_equal(r.status, 200);
    assert_i64_eq(r.latency_ms, slow);
    assert_i64_eq(r.retry_after_ms, -1);
  }
  s = stats(p);
  assert_u64_eq(s.received, 110);
  assert_u64_eq(s.status_500, 10);
  assert_u64_eq(s.status_200, 100);
  assert_u64_eq(s.status_429, 0);
  assert_u64_eq(s.over_capacity, 100);
  assert_u64_eq(s.received, s.status_200 + s.status_429 + s.status_500);
  bw_sim_partner_free(p);
  /* A tail and an error are independent: both at 1, a 500 after tail_ms. */
  cfg.tail_ratio = 1.0;
  cfg.tail_ms = 1234;
  p = partner(&cfg);
  for (i = 0; i < 10; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    assert_int_equal(r.status, 500);
    assert_i64_eq(r.latency_ms, 1234);
  }
  assert_u64_eq(stats(p).tail, 10);
  assert_u64_eq(stats(p).status_500, 10);
  bw_sim_partner_free(p);
}

/* 5 % of 100,000 answers under capacity with seed 2026: expected 5,000,
 * sd 69; the count is exact for the seed and within 4 sd of the mean. */
static void five_percent_errors_over_100000(void **state) {
  bw_sim_partner_config_t cfg;
  bw_sim_partner_t *p;
  bw_sim_partner_stats_t s;
  uint64_t n500 = 0;
  (void)state;
  bw_sim_partner_config_init(&cfg);
  cfg.error_ratio = 0.05;
  cfg.seed = 2026;
  p = partner(&cfg);
  for (int i = 0; i < 100000; i++) {
    bw_sim_reply_t r = bw_sim_partner_admit(p, 0);
    assert_true(r.latency_ms >= 80 && r.latency_ms <= 180);
    if (r.status == 500)
      n500++;
    else
      assert_int_equal(r.status, 200);
    bw_sim_partner_done(p);
  }
  s = stats(p);
  assert_u64_eq(s.status_500, n500);
  assert_u64_eq(s.status_200, 100000 - n500);
  assert_u64_eq(s.over_capacity, 0);
  assert_u64_eq(n500, SEED2026_500);
  assert_true(n500 >= 5000 - 4 * 69 && n500 <= 5000 + 4 * 69);
  bw_sim_partner_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_are_the_polly_labs_numbers),
      cmocka_unit_test(bad_configurations_are_refused_naming_the_field),
      cmocka_unit_test(under_capacity_every_answer_is_a_fast_200),
      cmocka_unit_test(the_request_beyond_capacity_is_the_first_slow_one),
      cmocka_unit_test(over_capacity_sixty_percent_are_429),
      cmocka_unit_test(retry_after_rides_on_429s_only),
      cmocka_unit_test(throttle_ratio_zero_makes_slow_200s),
      cmocka_unit_test(same_seed_same_answers_other_seed_other_answers),
      cmocka_unit_test(null_partner_is_handled),
      cmocka_unit_test(a_slow_tail_replaces_the_ok_latency),
      cmocka_unit_test(error_ratio_defaults_to_none_and_is_validated),
      cmocka_unit_test(error_ratio_zero_keeps_every_draw),
      cmocka_unit_test(error_ratio_one_fails_every_answer_under_capacity),
      cmocka_unit_test(five_percent_errors_over_100000),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

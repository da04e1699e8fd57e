/* Specification tests: retry budgets.
 *
 * The token bucket is gRPC's retry throttling (a failure costs 1 token, a
 * success adds token_ratio, retries only while tokens > max / 2), kept in
 * thousandths. The ratio budget is Envoy's retry budget over a sliding
 * window of 10 buckets, with a per-second floor. Every time-dependent test
 * runs on a manual clock that starts at BWT_T0_NS (a whole number of
 * seconds, so buckets of any whole number of ms dividing 1000 s start
 * exactly there) and asserts exact values. */
#include <pthread.h>

#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define SEC BW_NS_PER_S

typedef struct env_s {
  bw_clock_t *clock; /* manual, at BWT_T0_NS */
  bw_budget_t *b;    /* the budget under test, freed by teardown */
} env_t;

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  if (e->clock == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_budget_free(e->b);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static bw_budget_t *make(env_t *e, const bw_budget_config_t *cfg,
                         const char *file, int line) {
  bw_error_t err;
  memset(&err, 0, sizeof(err));
  bw_budget_free(e->b);
  e->b = bw_budget_new(cfg, &err);
  if (e->b == NULL) {
    print_error("bw_budget_new failed: %s [%s] %s\n", bw_err_name(err.code),
                err.field, err.message);
    _fail(file, line);
  }
  return e->b;
}
#define MAKE(e, cfg) make((e), (cfg), __FILE__, __LINE__)

/* A token bucket with max_tokens `max` and token_ratio `ratio`. */
static bw_budget_t *bucket(env_t *e, double max, double ratio) {
  bw_budget_config_t cfg;
  bw_budget_config_init(&cfg);
  cfg.name = "bucket";
  cfg.max_tokens = max;
  cfg.token_ratio = ratio;
  return MAKE(e, &cfg);
}

/* A ratio budget on the manual clock. */
static bw_budget_t *ratio(env_t *e, double percent, double floor_rps,
                          int64_t window_ms) {
  bw_budget_config_t cfg;
  bw_budget_config_init(&cfg);
  cfg.name = "ratio";
  cfg.kind = BW_BUDGET_RATIO;
  cfg.budget_percent = percent;
  cfg.min_retries_per_sec = floor_rps;
  cfg.window_ms = window_ms;
  cfg.clock = e->clock;
  return MAKE(e, &cfg);
}

static bw_budget_stats_t stats(const bw_budget_t *b) {
  bw_budget_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_budget_stats(b, &s);
  return s;
}

static void failures(bw_budget_t *b, int n) {
  for (int i = 0; i < n; i++)
    bw_budget_on_failure(b);
}
static void successes(bw_budget_t *b, int n) {
  for (int i = 0; i < n; i++)
    bw_budget_on_success(b);
}
static void requests(bw_budget_t *b, int n) {
  for (int i = 0; i < n; i++)
    bw_budget_on_request(b);
}
/* Asks n times; returns how many were allowed. */
static int asks(bw_budget_t *b, int n) {
  int ok = 0;
  for (int i = 0; i < n; i++)
    ok += bw_budget_try_retry(b);
  return ok;
}

/* ==== configuration ======================================================= */

static void config_init_fills_documented_defaults(void **state) {
  bw_budget_config_t cfg;
  (void)state;
  memset(&cfg, 0x5A, sizeof(cfg));
  bw_budget_config_init(&cfg);
  assert_string_equal(cfg.name, "budget");
  assert_int_equal(cfg.kind, BW_BUDGET_TOKEN_BUCKET);
  assert_dbl_eq(cfg.max_tokens, 10.0, 0);
  assert_dbl_eq(cfg.token_ratio, 0.1, 0);
  assert_dbl_eq(cfg.budget_percent, 20.0, 0);
  assert_dbl_eq(cfg.min_retries_per_sec, 3.0, 0);
  assert_i64_eq(cfg.window_ms, 10000);
  assert_null(cfg.clock);
  bw_budget_config_init(NULL); /* harmless */
}

static void default_config_creates_a_full_token_bucket(void **state) {
  bw_budget_config_t cfg;
  bw_error_t err;
  bw_budget_t *b;
  bw_budget_stats_t s;
  (void)state;
  bw_budget_config_init(&cfg);
  assert_status(bw_budget_config_validate(&cfg, &err), BW_OK);
  assert_status(err.code, BW_OK);
  assert_string_equal(err.field, "");
  b = bw_budget_new(&cfg, &err);
  assert_non_null(b);
  assert_string_equal(bw_budget_name(b), "budget");
  s = stats(b);
  assert_dbl_eq(s.tokens, 10.0, 0);
  assert_u64_eq(s.requests, 0);
  assert_u64_eq(s.successes, 0);
  assert_u64_eq(s.failures, 0);
  assert_u64_eq(s.allowed, 0);
  assert_u64_eq(s.denied, 0);
  assert_u64_eq(s.window_requests, 0);
  assert_u64_eq(s.window_retries, 0);
  bw_budget_free(b);
}

/* With no clock given, the ratio budget picks one itself and works. (Only
 * counts inside a window of a day are asserted: no timing.) */
static void a_ratio_budget_without_a_clock_uses_the_monotonic_one(
    void **state) {
  bw_budget_config_t cfg;
  bw_budget_t *b;
  (void)state;
  bw_budget_config_init(&cfg);
  cfg.kind = BW_BUDGET_RATIO;
  cfg.window_ms = 86400000;
  b = bw_budget_new(&cfg, NULL);
  assert_non_null(b);
  bw_budget_on_request(b);
  assert_true(bw_budget_try_retry(b)); /* the floor: 3/s over a day */
  assert_u64_eq(stats(b).window_requests, 1);
  assert_u64_eq(stats(b).window_retries, 1);
  bw_budget_free(b);

  cfg.window_ms = 999; /* below a second: the precise clock */
  b = bw_budget_new(&cfg, NULL);
  assert_non_null(b);
  bw_budget_free(b);
}

typedef void (*mutate_fn)(bw_budget_config_t *cfg);

typedef struct invalid_case_s {
  const char *what;  /* the rule broken, for the failure message */
  mutate_fn mutate;  /* applied to the defaults */
  const char *field; /* the field the error must name */
} invalid_case_t;

static char long_name[202];

#define MUT(fn, body)                     \
  static void fn(bw_budget_config_t *c) { \
    body;                                 \
  }
#define RATIO(body)            \
  {                            \
    c->kind = BW_BUDGET_RATIO; \
    body;                      \
  }

MUT(m_name_null, c->name = NULL)
MUT(m_name_empty, c->name = "")
MUT(m_name_too_long, c->name = long_name)
MUT(m_kind_unknown, c->kind = (bw_budget_kind_t)2)
MUT(m_kind_negative, c->kind = (bw_budget_kind_t)-1)
MUT(m_max_0, c->max_tokens = 0.0)
MUT(m_max_neg, c->max_tokens = -1.0)
MUT(m_max_above_1e6, c->max_tokens = 1000000.001)
MUT(m_max_nan, c->max_tokens = NAN)
MUT(m_max_inf, c->max_tokens = INFINITY)
MUT(m_max_finer_than_milli, c->max_tokens = 10.0005)
MUT(m_ratio_0, c->token_ratio = 0.0)
MUT(m_ratio_neg, c->token_ratio = -0.1)
MUT(m_ratio_above_max, c->token_ratio = 10.001)
MUT(m_ratio_nan, c->token_ratio = NAN)
MUT(m_ratio_finer_than_milli, c->token_ratio = 0.0125)
MUT(m_ratio_below_milli, c->token_ratio = 0.0004)
MUT(m_percent_neg, RATIO(c->budget_percent = -0.001))
MUT(m_percent_above_100, RATIO(c->budget_percent = 100.001))
MUT(m_percent_nan, RATIO(c->budget_percent = NAN))
MUT(m_floor_neg, RATIO(c->min_retries_per_sec = -1.0))
MUT(m_floor_nan, RATIO(c->min_retries_per_sec = NAN))
MUT(m_floor_inf, RATIO(c->min_retries_per_sec = INFINITY))
MUT(m_floor_above_1e9, RATIO(c->min_retries_per_sec = 1.5e9))
MUT(m_window_9, RATIO(c->window_ms = 9))
MUT(m_window_0, RATIO(c->window_ms = 0))
MUT(m_window_neg, RATIO(c->window_ms = -10000))
MUT(m_window_above_a_day, RATIO(c->window_ms = 86400001))
static const bw_clock_t broken_clock = {NULL, NULL};
MUT(m_clock_without_now, RATIO(c->clock = &broken_clock))

static const invalid_case_t invalid_cases[] = {
    {"name NULL", m_name_null, "name"},
    {"name \"\"", m_name_empty, "name"},
    {"name of 201 bytes", m_name_too_long, "name"},
    {"kind 2", m_kind_unknown, "kind"},
    {"kind -1", m_kind_negative, "kind"},
    {"max_tokens 0", m_max_0, "max_tokens"},
    {"max_tokens < 0", m_max_neg, "max_tokens"},
    {"max_tokens > 1e6", m_max_above_1e6, "max_tokens"},
    {"max_tokens NaN", m_max_nan, "max_tokens"},
    {"max_tokens inf", m_max_inf, "max_tokens"},
    {"max_tokens 10.0005 (finer than 0.001)", m_max_finer_than_milli,
     "max_tokens"},
    {"token_ratio 0", m_ratio_0, "token_ratio"},
    {"token_ratio < 0", m_ratio_neg, "token_ratio"},
    {"token_ratio > max_tokens", m_ratio_above_max, "token_ratio"},
    {"token_ratio NaN", m_ratio_nan, "token_ratio"},
    {"token_ratio 0.0125 (finer than 0.001)", m_ratio_finer_than_milli,
     "token_ratio"},
    {"token_ratio 0.0004 (below 0.001)", m_ratio_below_milli, "token_ratio"},
    {"budget_percent < 0", m_percent_neg, "budget_percent"},
    {"budget_percent > 100", m_percent_above_100, "budget_percent"},
    {"budget_percent NaN", m_percent_nan, "budget_percent"},
    {"min_retries_per_sec < 0", m_floor_neg, "min_retries_per_sec"},
    {"min_retries_per_sec NaN", m_floor_nan, "min_retries_per_sec"},
    {"min_retries_per_sec inf", m_floor_inf, "min_retries_per_sec"},
    {"min_retries_per_sec > 1e9", m_floor_above_1e9, "min_retries_per_sec"},
    {"window_ms 9", m_window_9, "window_ms"},
    {"window_ms 0", m_window_0, "window_ms"},
    {"window_ms < 0", m_window_neg, "window_ms"},
    {"window_ms > a day", m_window_above_a_day, "window_ms"},
    {"clock without now_ns", m_clock_without_now, "clock"},
};

static int check_invalid_case(const invalid_case_t *tc) {
  bw_budget_config_t cfg;
  bw_error_t err;
  bw_budget_t *b;
  int ok = 1, rc;

  bw_budget_config_init(&cfg);
  tc->mutate(&cfg);
  bwt_prefill_error(&err);
  rc = bw_budget_config_validate(&cfg, &err);
  if (rc != BW_E_INVAL || !bwt_error_names(&err, tc->field)) {
    print_error(
        "[%s] validate: %s {%s, \"%s\", \"%s\"}, expected E_INVAL "
        "naming \"%s\"\n",
        tc->what, bw_err_name(rc), bw_err_name(err.code), err.field,
        err.message, tc->field);
    ok = 0;
  }
  bwt_prefill_error(&err);
  b = bw_budget_new(&cfg, &err);
  if (b != NULL || !bwt_error_names(&err, tc->field)) {
    print_error(
        "[%s] new: %s {%s, \"%s\", \"%s\"}, expected NULL naming "
        "\"%s\"\n",
        tc->what, b ? "created" : "NULL", bw_err_name(err.code), err.field,
        err.message, tc->field);
    bw_budget_free(b);
    ok = 0;
  }
  b = bw_budget_new(&cfg, NULL);
  if (b != NULL) {
    print_error("[%s] new(cfg, NULL) accepted it\n", tc->what);
    bw_budget_free(b);
    ok = 0;
  }
  return ok;
}

static void every_invalid_field_is_refused_naming_the_field(void **state) {
  size_t i, n = sizeof(invalid_cases) / sizeof(invalid_cases[0]), failed = 0;
  (void)state;
  memset(long_name, 'n', sizeof(long_name));
  long_name[201] = '\0';
  for (i = 0; i < n; i++)
    if (!check_invalid_case(&invalid_cases[i])) failed++;
  if (failed != 0) {
    print_error(
        "%zu of %zu invalid configurations were not refused as "
        "specified\n",
        failed, n);
    fail();
  }
}

/* The message says what the rule is, not only which field broke it. */
static void messages_state_the_rule_and_the_value(void **state) {
  bw_budget_config_t cfg;
  bw_error_t err;
  (void)state;
  bw_budget_config_init(&cfg);
  cfg.token_ratio = 0.0125;
  assert_status(bw_budget_config_validate(&cfg, &err), BW_E_INVAL);
  assert_contains(err.message, "multiple of 0.001");
  assert_contains(err.message, "0.0125");

  bw_budget_config_init(&cfg);
  cfg.max_tokens = NAN;
  assert_status(bw_budget_config_validate(&cfg, &err), BW_E_INVAL);
  assert_contains(err.message, "(0, 1e6]");
  assert_contains(err.message, "nan");

  bw_budget_config_init(&cfg);
  cfg.kind = BW_BUDGET_RATIO;
  cfg.window_ms = 9;
  assert_status(bw_budget_config_validate(&cfg, &err), BW_E_INVAL);
  assert_contains(err.message, "[10, 86400000]");
  assert_contains(err.message, "got 9");
}

static void null_config_is_refused(void **state) {
  bw_error_t err;
  (void)state;
  bwt_prefill_error(&err);
  assert_null(bw_budget_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_null(bw_budget_new(NULL, NULL));
  bwt_prefill_error(&err);
  assert_status(bw_budget_config_validate(NULL, &err), BW_E_INVAL);
  assert_status(err.code, BW_E_INVAL);
  assert_status(bw_budget_config_validate(NULL, NULL), BW_E_INVAL);
}

static void accept(const bw_budget_config_t *cfg, const char *what) {
  bw_error_t err;
  bw_budget_t *b;
  bwt_prefill_error(&err);
  if (bw_budget_config_validate(cfg, &err) != BW_OK) {
    print_error("[%s] validate refused: [%s] %s\n", what, err.field,
                err.message);
    fail();
  }
  b = bw_budget_new(cfg, &err);
  if (b == NULL) {
    print_error("[%s] new refused: [%s] %s\n", what, err.field, err.message);
    fail();
  }
  bw_budget_free(b);
}

static void boundary_values_are_accepted(void **state) {
  bw_budget_config_t cfg;
  (void)state;
  bw_budget_config_init(&cfg);
  cfg.max_tokens = 1e6;
  cfg.token_ratio = 1e6;
  accept(&cfg, "max_tokens 1e6, token_ratio == max_tokens");

  bw_budget_config_init(&cfg);
  cfg.max_tokens = 0.001;
  cfg.token_ratio = 0.001;
  accept(&cfg, "max_tokens and token_ratio at the resolution, 0.001");

  bw_budget_config_init(&cfg);
  cfg.max_tokens = 123456.789;
  cfg.token_ratio = 0.3;
  accept(&cfg, "decimal literals with 3 decimals");

  bw_budget_config_init(&cfg);
  cfg.kind = BW_BUDGET_RATIO;
  cfg.budget_percent = 0.0;
  cfg.min_retries_per_sec = 0.0;
  cfg.window_ms = 10;
  accept(&cfg, "percent 0, no floor, window_ms 10");

  bw_budget_config_init(&cfg);
  cfg.kind = BW_BUDGET_RATIO;
  cfg.budget_percent = 100.0;
  cfg.min_retries_per_sec = 1e9;
  cfg.window_ms = 86400000;
  accept(&cfg, "percent 100, floor 1e9, window a day");

  bw_budget_config_init(&cfg);
  memset(long_name, 'n', sizeof(long_name));
  long_name[200] = '\0';
  cfg.name = long_name;
  accept(&cfg, "name of 200 bytes");
}

static void fields_of_the_other_kind_are_not_checked(void **state) {
  bw_budget_config_t cfg;
  (void)state;
  bw_budget_config_init(&cfg);
  cfg.budget_percent = -5;
  cfg.min_retries_per_sec = NAN;
  cfg.window_ms = 0;
  accept(&cfg, "token bucket with broken ratio fields");

  bw_budget_config_init(&cfg);
  cfg.kind = BW_BUDGET_RATIO;
  cfg.max_tokens = 0;
  cfg.token_ratio = NAN;
  accept(&cfg, "ratio with broken token fields");
}

static void name_is_copied_at_creation(void **state) {
  bw_budget_config_t cfg;
  char name[32];
  bw_budget_t *b;
  (void)state;
  snprintf(name, sizeof(name), "%s", "payment_api");
  bw_budget_config_init(&cfg);
  cfg.name = name;
  b = bw_budget_new(&cfg, NULL);
  assert_non_null(b);
  snprintf(name, sizeof(name), "%s", "overwritten");
  assert_string_equal(bw_budget_name(b), "payment_api");
  bw_budget_free(b);
}

static void kind_names(void **state) {
  (void)state;
  assert_string_equal(bw_budget_kind_name(BW_BUDGET_TOKEN_BUCKET),
                      "token_bucket");
  assert_string_equal(bw_budget_kind_name(BW_BUDGET_RATIO), "ratio");
  assert_string_equal(bw_budget_kind_name((bw_budget_kind_t)2), "unknown");
  assert_string_equal(bw_budget_kind_name((bw_budget_kind_t)-1), "unknown");
}

/* ==== token bucket ======================================================== */

static void a_full_bucket_allows_retries_and_asking_costs_nothing(
    void **state) {
  env_t *e = *state;
  bw_budget_t *b = bucket(e, 10, 0.1);
  bw_budget_stats_t s;
  assert_int_equal(asks(b, 1000), 1000);
  s = stats(b);
  assert_dbl_eq(s.tokens, 10.0, 0); /* only outcomes move the tokens */
  assert_u64_eq(s.allowed, 1000);
  assert_u64_eq(s.denied, 0);
}

/* gRPC's rule: retries while tokens > max / 2. With max 10 that is > 5:
 * after 4 failures (6 tokens) a retry is allowed, after the 5th (5 tokens)
 * it is not. */
static void the_failure_that_brings_tokens_to_half_denies_retries(
    void **state) {
  env_t *e = *state;
  bw_budget_t *b = bucket(e, 10, 0.1);
  failures(b, 4);
  assert_dbl_eq(stats(b).tokens, 6.0, 0);
  assert_true(bw_budget_try_retry(b));
  bw_budget_on_failure(b);
  assert_dbl_eq(stats(b).tokens, 5.0, 0);
  assert_false(bw_budget_try_retry(b));
  assert_false(bw_budget_try_retry(b));
  assert_u64_eq(stats(b).allowed, 1);
  assert_u64_eq(stats(b).denied, 2);
  /* The status form: BW_E_FULL for a denial, counted the same. */
  assert_status(bw_budget_try_retry_ex(b), BW_E_FULL);
  assert_u64_eq(stats(b).denied, 3);
  bw_budget_on_success(b); /* 5.1 tokens: allowed */
  assert_status(bw_budget_try_retry_ex(b), BW_OK);
  assert_u64_eq(stats(b).allowed, 2);
}

/* From 4 tokens each success adds 0.1: after 10 successes the bucket holds
 * 5.0 (still denied: 5 > 5 is false); the 11th makes 5.1 and the very next
 * ask is allowed. */
static void successes_refill_by_token_ratio_until_retries_return(void **state) {
  env_t *e = *state;
  bw_budget_t *b = bucket(e, 10, 0.1);
  failures(b, 6);
  assert_dbl_eq(stats(b).tokens, 4.0, 0);
  for (int i = 1; i <= 10; i++) {
    bw_budget_on_success(b);
    assert_dbl_eq(stats(b).tokens, (40.0 + i) / 10.0, 0);
    assert_false(bw_budget_try_retry(b));
  }
  bw_budget_on_success(b);
  assert_dbl_eq(stats(b).tokens, 5.1, 0);
  assert_true(bw_budget_try_retry(b));
  bw_budget_on_failure(b); /* 4.1: denied again */
  assert_dbl_eq(stats(b).tokens, 4.1, 0);
  assert_false(bw_budget_try_retry(b));
}

static void tokens_never_leave_zero_to_max(void **state) {
  env_t *e = *state;
  bw_budget_t *b = bucket(e, 10, 0.1);
  successes(b, 100); /* already full */
  assert_dbl_eq(stats(b).tokens, 10.0, 0);
  failures(b, 25);
  assert_dbl_eq(stats(b).tokens, 0.0, 0);
  assert_false(bw_budget_try_retry(b));
  /* An empty bucket is not in debt: 51 successes make 5.1 whatever the
   * number of failures beyond empty. */
  successes(b, 51);
  assert_dbl_eq(stats(b).tokens, 5.1, 0);
  assert_true(bw_budget_try_retry(b));
  successes(b, 1000);
  assert_dbl_eq(stats(b).tokens, 10.0, 0);
  assert_u64_eq(stats(b).failures, 25);
  assert_u64_eq(stats(b).successes, 1151);
}

/* The threshold is strict in thousandths: with max 0.003 (3 thousandths)
 * retries need 2 thousandths (2 > 1.5), i.e. tokens > max / 2 exactly, as
 * gRPC computes it with integer thousandths. */
static void an_odd_max_in_thousandths_keeps_the_strict_half(void **state) {
  env_t *e = *state;
  bw_budget_t *b = bucket(e, 0.003, 0.001);
  assert_true(bw_budget_try_retry(b));
  bw_budget_on_failure(b); /* 1 token from 0.003: empty */
  assert_dbl_eq(stats(b).tokens, 0.0, 0);
  assert_false(bw_budget_try_retry(b));
  bw_budget_on_success(b);
  assert_dbl_eq(stats(b).tokens, 0.001, 0);
  assert_false(bw_budget_try_retry(b)); /* 0.001 > 0.0015: no */
  bw_budget_on_success(b);
  assert_dbl_eq(stats(b).tokens, 0.002, 0);
  assert_true(bw_budget_try_retry(b)); /* 0.002 > 0.0015 */

  b = bucket(e, 3, 1);
  bw_budget_on_failure(b);
  assert_true(bw_budget_try_retry(b)); /* 2 > 1.5 */
  bw_budget_on_failure(b);
  assert_false(bw_budget_try_retry(b)); /* 1 > 1.5: no */
}

/* The resolution is exact, with no drift: 0.001 added 501 times is 0.501. */
static void the_smallest_ratio_refills_exactly_one_thousandth(void **state) {
  env_t *e = *state;
  bw_budget_t *b = bucket(e, 1, 0.001);
  bw_budget_on_failure(b);
  assert_dbl_eq(stats(b).tokens, 0.0, 0);
  successes(b, 500);
  assert_dbl_eq(stats(b).tokens, 0.5, 0);
  assert_false(bw_budget_try_retry(b));
  bw_budget_on_success(b);
  assert_dbl_eq(stats(b).tokens, 0.501, 0);
  assert_true(bw_budget_try_retry(b));
}

static void a_token_bucket_counts_everything_and_has_no_window(void **state) {
  env_t *e = *state;
  bw_budget_t *b = bucket(e, 10, 0.5);
  bw_budget_stats_t s;
  requests(b, 7);
  failures(b, 3);
  successes(b, 2);
  assert_int_equal(asks(b, 4), 4);
  failures(b, 3); /* 10 - 3 + 1 - 3 = 5 */
  assert_int_equal(asks(b, 2), 0);
  s = stats(b);
  assert_u64_eq(s.requests, 7);
  assert_u64_eq(s.failures, 6);
  assert_u64_eq(s.successes, 2);
  assert_u64_eq(s.allowed, 4);
  assert_u64_eq(s.denied, 2);
  assert_dbl_eq(s.tokens, 5.0, 0);
  assert_u64_eq(s.window_requests, 0);
  assert_u64_eq(s.window_retries, 0);
}

/* ==== ratio budget ======================================================== */

/* A storm: every call fails and asks for a retry. With 20% and a floor of
 * 30 per window, the n-th request may bring the retries to max(30,
 * ceil(n / 5)): 1000 requests allow exactly 200 retries, never more at any
 * step. */
static void under_total_failure_retries_stay_within_the_budget_share(
    void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 20, 3, 10000);
  bw_budget_stats_t s;
  uint64_t allowed = 0;
  for (uint64_t n = 1; n <= 1000; n++) {
    uint64_t cap = n <= 150 ? 30 : (n + 4) / 5;
    bw_budget_on_request(b);
    bw_budget_on_failure(b);
    allowed += bw_budget_try_retry(b);
    if (allowed != (n < 30 ? n : cap)) {
      print_error("after request %" PRIu64 ": %" PRIu64
                  " retries allowed, expected %" PRIu64 "\n",
                  n, allowed, n < 30 ? n : cap);
      fail();
    }
  }
  s = stats(b);
  assert_u64_eq(s.allowed, 200);
  assert_u64_eq(s.denied, 800);
  assert_u64_eq(s.window_requests, 1000);
  assert_u64_eq(s.window_retries, 200);
  assert_u64_eq(s.requests, 1000);
  assert_u64_eq(s.failures, 1000);
  assert_dbl_eq(s.tokens, 0.0, 0);
  /* More asks change nothing until more requests come. */
  assert_int_equal(asks(b, 100), 0);
  requests(b, 5);
  assert_int_equal(asks(b, 100), 1); /* 201 < 0.2 * 1005 */
}

static void the_floor_lets_low_traffic_retry(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 20, 3, 10000); /* 3/s over 10 s: 30 */
  requests(b, 5);
  assert_int_equal(asks(b, 30), 30);
  assert_false(bw_budget_try_retry(b));
  assert_u64_eq(stats(b).window_retries, 30);
  assert_u64_eq(stats(b).denied, 1);

  b = ratio(e, 20, 0.5, 10000); /* 0.5/s over 10 s: 5 */
  assert_int_equal(asks(b, 10), 5);
  b = ratio(e, 20, 0.25, 10000); /* 2.5: retries 0, 1, 2 are < 2.5 */
  assert_int_equal(asks(b, 10), 3);
}

/* The floor is strict, retries * 1000 < min_retries_per_sec * window_ms,
 * at whole and fractional boundaries, and at the largest floor. */
static void the_floor_is_strict_on_its_boundaries(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 0, 0.3, 10000); /* exactly 3: 3 * 1000 < 3000 no */
  assert_int_equal(asks(b, 10), 3);
  b = ratio(e, 0, 0.301, 10000); /* 3.01: the 4th is 3 * 1000 < 3010 */
  assert_int_equal(asks(b, 10), 4);
  b = ratio(e, 0, 0.001, 10); /* 0.00001 retries: the first still allowed */
  assert_int_equal(asks(b, 10), 1);
  b = ratio(e, 0, 1e9, 86400000); /* 8.64e13 a window: never reached */
  assert_int_equal(asks(b, 1000), 1000);
  assert_u64_eq(stats(b).window_retries, 1000);
}

static void zero_percent_and_no_floor_deny_every_retry(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 0, 0, 10000);
  requests(b, 1000);
  assert_int_equal(asks(b, 10), 0);
  assert_u64_eq(stats(b).denied, 10);
}

static void one_hundred_percent_allows_one_retry_per_request(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 100, 0, 10000);
  assert_false(bw_budget_try_retry(b));
  requests(b, 3);
  assert_int_equal(asks(b, 10), 3);
  bw_budget_on_request(b);
  assert_int_equal(asks(b, 10), 1);
}

/* Windows of 10 s are 10 buckets of 1 s aligned to the clock. Requests in
 * the bucket [T0, T0 + 1 s) count until T0 + 10 s exactly, wherever inside
 * their bucket they came. */
static void requests_stop_counting_exactly_at_the_bucket_boundary(
    void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 20, 0, 10000);
  bw_clock_manual_advance(e->clock, 500 * MS);
  requests(b, 1000);
  assert_int_equal(asks(b, 300), 200);
  bw_clock_manual_set(e->clock, BWT_T0_NS + 10 * SEC - 1);
  assert_u64_eq(stats(b).window_requests, 1000);
  assert_u64_eq(stats(b).window_retries, 200);
  assert_false(bw_budget_try_retry(b));
  bw_clock_manual_advance(e->clock, 1);
  assert_u64_eq(stats(b).window_requests, 0);
  assert_u64_eq(stats(b).window_retries, 0);
  requests(b, 5); /* a fresh window: 5 requests, one retry */
  assert_int_equal(asks(b, 10), 1);
  assert_u64_eq(stats(b).requests, 1005);
  assert_u64_eq(stats(b).allowed, 201);
}

/* 100 requests in each of the buckets 0..4; each later bucket boundary
 * drops exactly one bucket's worth. */
static void the_window_slides_one_bucket_at_a_time(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 10, 0, 10000);
  for (int k = 0; k < 5; k++) {
    bw_clock_manual_set(e->clock, BWT_T0_NS + k * SEC + 999 * MS);
    requests(b, 100);
  }
  assert_u64_eq(stats(b).window_requests, 500);
  assert_int_equal(asks(b, 100), 50); /* all at T0 + 4.999 s */
  for (int k = 0; k < 5; k++) {
    bw_clock_manual_set(e->clock, BWT_T0_NS + (10 + k) * SEC - 1);
    assert_u64_eq(stats(b).window_requests, 500 - 100 * k);
    bw_clock_manual_set(e->clock, BWT_T0_NS + (10 + k) * SEC);
    assert_u64_eq(stats(b).window_requests, 400 - 100 * k);
    /* The retries were asked in bucket 4: they leave with it. */
    assert_u64_eq(stats(b).window_retries, k < 4 ? 50 : 0);
  }
}

/* Retries leave the window like requests: with only a floor of 30, the
 * window refills 10 s after the bucket in which they were taken. */
static void retries_leave_the_window_too(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 0, 3, 10000);
  assert_int_equal(asks(b, 40), 30);
  bw_clock_manual_advance(e->clock, 5 * SEC);
  assert_int_equal(asks(b, 10), 0);
  bw_clock_manual_set(e->clock, BWT_T0_NS + 10 * SEC - 1);
  assert_false(bw_budget_try_retry(b));
  bw_clock_manual_advance(e->clock, 1);
  assert_int_equal(asks(b, 40), 30);
  assert_u64_eq(stats(b).allowed, 60);
  assert_u64_eq(stats(b).denied, 31);
}

/* The smallest window: 10 buckets of 1 ms. */
static void a_window_of_10_ms_slides_by_the_millisecond(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 50, 0, 10);
  requests(b, 10);
  bw_clock_manual_advance(e->clock, 3 * MS);
  requests(b, 10);
  assert_int_equal(asks(b, 20), 10);
  bw_clock_manual_advance(e->clock, 7 * MS); /* the first 10 left */
  assert_u64_eq(stats(b).window_requests, 10);
  assert_u64_eq(stats(b).window_retries, 10);
  bw_clock_manual_advance(e->clock, 3 * MS); /* everything left */
  assert_u64_eq(stats(b).window_requests, 0);
  assert_u64_eq(stats(b).window_retries, 0);
}

/* The window's retries against a model kept here: 1 ms buckets, a floor of
 * 5 retries a window and no share of requests; each bucket asks a varying
 * number of times (0 to 4, quiet buckets included) for 45 buckets, so
 * that the retry ring (16 buckets, src/core/budget.c) wraps twice and the
 * cached sum of the earlier buckets is rebuilt at every step. Every answer
 * and every window count matches the model's. */
static void retries_of_every_bucket_count_until_they_leave(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 0, 500, 10); /* 500/s * 10 ms: 5 a window */
  int granted[45] = {0};
  for (int k = 0; k < 45; k++) {
    int want = (k * 7 + 3) % 5; /* 3, 0, 2, 4, 1, ... */
    int in_window = 0, expect = 0;
    for (int i = k - 9; i < k; i++)
      if (i >= 0) in_window += granted[i];
    for (int i = 0; i < want; i++)
      if (in_window + expect < 5) expect++;
    granted[k] = asks(b, want);
    assert_int_equal(granted[k], expect);
    assert_u64_eq(stats(b).window_retries, (uint64_t)(in_window + expect));
    bw_clock_manual_advance(e->clock, 1 * MS);
  }
}

/* A model of the ratio window kept here, in integers: per bucket, the
 * requests counted and the retries granted. */
#define MODEL_RING 64
typedef struct model_s {
  int64_t bucket_ns;
  uint64_t pct, floor_n; /* budget_percent, retries the floor allows */
  int64_t idx[MODEL_RING];
  uint64_t req[MODEL_RING], ret[MODEL_RING];
} model_t;

static void model_init(model_t *m, int64_t bucket_ns, uint64_t pct,
                       uint64_t floor_n) {
  memset(m, 0, sizeof(*m));
  m->bucket_ns = bucket_ns;
  m->pct = pct;
  m->floor_n = floor_n;
  for (int i = 0; i < MODEL_RING; i++)
    m->idx[i] = INT64_MIN;
}

static int model_slot(model_t *m, int64_t k) {
  int i = (int)(((k % MODEL_RING) + MODEL_RING) % MODEL_RING);
  if (m->idx[i] != k) {
    m->idx[i] = k;
    m->req[i] = m->ret[i] = 0;
  }
  return i;
}

static void model_window(const model_t *m, int64_t k, uint64_t *req,
                         uint64_t *ret) {
  *req = *ret = 0;
  for (int i = 0; i < MODEL_RING; i++)
    if (m->idx[i] != INT64_MIN && m->idx[i] <= k && m->idx[i] > k - 10) {
      *req += m->req[i];
      *ret += m->ret[i];
    }
}

/* The model's answer to one ask at time `now`, counted if granted. */
static bool model_ask(model_t *m, int64_t now) {
  int64_t k = now / m->bucket_ns; /* the test's clock stays positive */
  uint64_t req, ret;
  model_window(m, k, &req, &ret);
  if (ret < m->floor_n || ret * 100 < m->pct * req) {
    m->ret[model_slot(m, k)]++;
    return true;
  }
  return false;
}

static uint64_t xorshift(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Another thread's turn in the model run: requests then asks, in its own
 * stripe; answers are checked by the main thread after the join. */
typedef struct model_peer_s {
  bw_budget_t *b;
  int requests, asks;
  bool answers[8];
} model_peer_t;

static void *model_peer(void *arg) {
  model_peer_t *p = arg;
  requests(p->b, p->requests);
  for (int i = 0; i < p->asks; i++)
    p->answers[i] = bw_budget_try_retry(p->b);
  return NULL;
}

/* 6000 random steps (clock moves of nothing, within a bucket, onto and just
 * before a boundary, and of 1 to 25 buckets; 0 to 6 requests; 0 to 5 asks)
 * on a window of 10 buckets of 100 ms: every answer and every window count
 * is the model's (the clock stays put in 10 steps of 16). With `peer_every`,
 * another thread (another stripe, so that the budget's requests are no longer
 * in one stripe) takes a turn every so many steps, 0 to 40 requests and 0 to 5
 * asks, its answers checked too. */
static void run_model(env_t *e, uint64_t pct, uint64_t floor_rps,
                      int peer_every, uint64_t seed) {
  const int64_t bucket_ns = 100 * MS;
  bw_budget_t *b = ratio(e, (double)pct, (double)floor_rps, 1000);
  model_t m;
  uint64_t x = seed, allowed = 0, asked = 0, nreq = 0;
  model_init(&m, bucket_ns, pct, floor_rps); /* a window of 1 s */
  for (int step = 0; step < 6000; step++) {
    uint64_t r = xorshift(&x);
    int64_t now = bw_clock_now(e->clock);
    uint64_t wreq, wret;
    bw_budget_stats_t st;
    switch (r % 16) {
    case 10:
    case 11:
    case 12:
    case 13:
      now += (int64_t)((r >> 8) % (uint64_t)bucket_ns);
      break;
    case 14:
      now = (now / bucket_ns + 1) * bucket_ns - (int64_t)((r >> 8) & 1);
      if (now <= bw_clock_now(e->clock)) now += bucket_ns;
      break;
    case 15:
      now += (int64_t)(1 + (r >> 8) % 25) * bucket_ns;
      break;
    default: /* the clock stays */
      break;
    }
    bw_clock_manual_set(e->clock, now);
    if (peer_every > 0 && step % peer_every == peer_every - 1) {
      model_peer_t peer = {b, (int)((r >> 20) % 41), (int)((r >> 27) % 6), {0}};
      pthread_t th;
      assert_int_equal(pthread_create(&th, NULL, model_peer, &peer), 0);
      assert_int_equal(pthread_join(th, NULL), 0);
      m.req[model_slot(&m, now / bucket_ns)] += (uint64_t)peer.requests;
      nreq += (uint64_t)peer.requests;
      for (int i = 0; i < peer.asks; i++) {
        bool want = model_ask(&m, now);
        if (peer.answers[i] != want) {
          print_error("step %d, peer ask %d: %d, the model says %d\n", step, i,
                      peer.answers[i], want);
          fail();
        }
        allowed += want;
        asked++;
      }
    }
    {
      int n = (int)((r >> 28) % 7);
      requests(b, n);
      m.req[model_slot(&m, now / bucket_ns)] += (uint64_t)n;
      nreq += (uint64_t)n;
    }
    for (int i = 0, n = (int)((r >> 32) % 6); i < n; i++) {
      bool got = bw_budget_try_retry(b), want = model_ask(&m, now);
      if (got != want) {
        print_error("step %d, ask %d: %d, the model says %d\n", step, i, got,
                    want);
        fail();
      }
      allowed += want;
      asked++;
    }
    model_window(&m, now / bucket_ns, &wreq, &wret);
    st = stats(b);
    if (st.window_requests != wreq || st.window_retries != wret) {
      print_error("step %d: window %" PRIu64 " requests, %" PRIu64
                  " retries; the model has %" PRIu64 ", %" PRIu64 "\n",
                  step, st.window_requests, st.window_retries, wreq, wret);
      fail();
    }
  }
  assert_u64_eq(stats(b).requests, nreq);
  assert_u64_eq(stats(b).allowed, allowed);
  assert_u64_eq(stats(b).denied, asked - allowed);
  assert_true(allowed > 0 && allowed < asked); /* both answers were given */
}

/* Every decision of one thread, whose stripe holds all the requests (the
 * budget's fast path), against the model: shares, floors and both. */
static void decisions_of_one_thread_match_a_model_window(void **state) {
  env_t *e = *state;
  run_model(e, 20, 0, 0, 0x9E3779B97F4A7C15u);
  run_model(e, 7, 3, 0, 0xD1B54A32D192ED03u);
  run_model(e, 100, 0, 0, 0x8CB92BA72F3D8DD7u);
  run_model(e, 0, 2, 0, 0xA0761D6478BD642Fu);
}

/* The same from a thread started for it: the budget's fast path serves
 * whichever thread counts alone, not only the first thread of the process
 * (stripe 0). A mismatch fails from that thread, which cmocka reports as
 * an abort of the test: never a pass. */
static void *model_alone(void *arg) {
  run_model(arg, 20, 0, 0, 0x94D049BB133111EBu);
  run_model(arg, 7, 3, 0, 0xBF58476D1CE4E5B9u);
  return NULL;
}

static void decisions_of_another_thread_alone_match_a_model_window(
    void **state) {
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, model_alone, *state), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
}

/* The same with a second thread taking a turn now and then: requests in two
 * stripes, and asks from a thread that counted none before. */
static void decisions_with_two_stripes_match_a_model_window(void **state) {
  env_t *e = *state;
  run_model(e, 20, 0, 5, 0xE7037ED1A0B428DBu);
  run_model(e, 7, 1, 3, 0x8EBC6AF09C88C6E3u);
}

/* Buckets carry a 32-bit epoch; a quiet spell of exactly 2^32 buckets must
 * not bring an old bucket back into the window. */
static void a_quiet_spell_of_2_pow_32_buckets_does_not_alias(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 50, 0, 10); /* 1 ms buckets */
  requests(b, 100);
  assert_int_equal(asks(b, 100), 50);
  bw_clock_manual_advance(e->clock, (INT64_C(1) << 32) * MS);
  assert_u64_eq(stats(b).window_requests, 0);
  assert_u64_eq(stats(b).window_retries, 0);
  assert_false(bw_budget_try_retry(b));
  bw_budget_on_request(b); /* the first write wipes the stale stripe */
  bw_budget_on_request(b);
  assert_u64_eq(stats(b).window_requests, 2);
  assert_int_equal(asks(b, 10), 1);
  /* A bucket later every word of the stripe is read, not only the
   * current one: still nothing from 2^32 buckets ago. */
  bw_clock_manual_advance(e->clock, 1 * MS);
  assert_u64_eq(stats(b).window_requests, 2);
  assert_u64_eq(stats(b).window_retries, 1);
}

/* ==== misuse and resources ================================================ */

/* Another thread's counts (in its own stripe) are in every thread's window,
 * even after that thread has exited and its stripe went back to the pool. */
typedef struct other_thread_s {
  bw_budget_t *b;
  int allowed;
} other_thread_t;

static void *count_elsewhere(void *arg) {
  other_thread_t *o = arg;
  requests(o->b, 10);
  o->allowed = asks(o->b, 5); /* 20% of 10: 2 of the 5 */
  return NULL;
}

static void other_threads_counts_are_in_every_threads_window(void **state) {
  env_t *e = *state;
  bw_budget_t *b = ratio(e, 20, 0, 10000);
  other_thread_t o = {b, -1};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, count_elsewhere, &o), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(o.allowed, 2);
  assert_u64_eq(stats(b).window_requests, 10);
  assert_u64_eq(stats(b).window_retries, 2);
  assert_int_equal(asks(b, 3), 0); /* its 2 retries fill 20% of 10 */
  requests(b, 5);                  /* here: 15 requests, room for 3 */
  assert_int_equal(asks(b, 3), 1);
  assert_u64_eq(stats(b).window_requests, 15);
  assert_u64_eq(stats(b).window_retries, 3);
  /* They leave the window together with this thread's. */
  bw_clock_manual_advance(e->clock, 10 * SEC);
  assert_u64_eq(stats(b).window_requests, 0);
  assert_u64_eq(stats(b).window_retries, 0);
}

/* Whatever the clock reads, a fresh ratio budget grants its allowance:
 * 100 requests at 20 % allow 20 retries, with 1 ms buckets (window 10 ms)
 * and no floor, for a clock at 1 s, at 2^35 ms (a host up a year), at a
 * wall-clock-like 1.78e12 ms and a day later, and at -5 s. (A retry count
 * that started at bucket 0 read as "ahead" of every bucket whose index mod
 * 2^36 is 2^35 or more and refused them all.) */
static void a_ratio_budget_grants_whatever_the_clock_reads(void **state) {
  env_t *e = *state;
  static const int64_t starts_ms[] = {1000, INT64_C(1) << 35,
                                      INT64_C(1780000000000),
                                      INT64_C(1780000000000) + 86400000, -5000};
  for (size_t k = 0; k < sizeof(starts_ms) / sizeof(starts_ms[0]); k++) {
    bw_clock_free(e->clock);
    e->clock = bw_clock_manual_new(starts_ms[k] * BW_NS_PER_MS);
    assert_non_null(e->clock);
    ratio(e, 20, 0, 10);
    requests(e->b, 100);
    assert_int_equal(asks(e->b, 30), 20);
    bw_clock_manual_advance(e->clock, 3 * BW_NS_PER_MS); /* same window */
    assert_int_equal(asks(e->b, 5), 0);
    bw_clock_manual_advance(e->clock, 10 * BW_NS_PER_MS); /* a new window */
    requests(e->b, 10);
    assert_int_equal(asks(e->b, 5), 2);
  }
}

/* A clock that starts at 0 puts the first events in bucket 0, the index a
 * fresh stripe's words start at: they count all the same. */
static void a_clock_at_zero_counts_the_first_bucket(void **state) {
  env_t *e = *state;
  bw_budget_config_t cfg;
  bw_clock_t *zero = bw_clock_manual_new(0);
  bw_budget_t *b;
  assert_non_null(zero);
  bw_budget_config_init(&cfg);
  cfg.kind = BW_BUDGET_RATIO;
  cfg.budget_percent = 100;
  cfg.min_retries_per_sec = 0;
  cfg.window_ms = 1000;
  cfg.clock = zero;
  b = MAKE(e, &cfg);               /* freed by teardown */
  assert_int_equal(asks(b, 1), 0); /* nothing to retry against yet */
  requests(b, 2);
  assert_u64_eq(stats(b).window_requests, 2);
  assert_int_equal(asks(b, 5), 2);
  assert_u64_eq(stats(b).window_retries, 2);
  bw_clock_manual_set(zero, 999 * MS); /* still the window's */
  assert_int_equal(asks(b, 1), 0);
  assert_u64_eq(stats(b).window_requests, 2);
  bw_clock_manual_set(zero, 1000 * MS); /* bucket 0 left */
  assert_u64_eq(stats(b).window_requests, 0);
  assert_u64_eq(stats(b).window_retries, 0);
  requests(b, 1);
  assert_int_equal(asks(b, 2), 1);
  bw_budget_free(b);
  e->b = NULL;
  bw_clock_free(zero);
}

static void a_null_budget_is_harmless(void **state) {
  bw_budget_stats_t s;
  (void)state;
  bw_budget_on_request(NULL);
  bw_budget_on_success(NULL);
  bw_budget_on_failure(NULL);
  assert_false(bw_budget_try_retry(NULL));
  memset(&s, 0xA5, sizeof(s));
  bw_budget_stats(NULL, &s);
  assert_u64_eq(s.requests, 0);
  assert_u64_eq(s.allowed, 0);
  assert_dbl_eq(s.tokens, 0.0, 0);
  bw_budget_stats(NULL, NULL);
  assert_string_equal(bw_budget_name(NULL), "");
  bw_budget_free(NULL);
}

/* With every allocation failing, the verbs still work: they allocate
 * nothing. */
static void the_verbs_allocate_nothing(void **state) {
  env_t *e = *state;
  bw_budget_t *kinds[2];
  kinds[0] = bucket(e, 10, 0.1);
  e->b = NULL; /* keep both: freed below */
  kinds[1] = ratio(e, 20, 3, 10000);
  e->b = NULL;
  for (int k = 0; k < 2; k++) {
    bw_budget_stats_t s;
    long attempts;
    oom_fail_at(1, true);
    bw_budget_on_request(kinds[k]);
    bw_budget_on_failure(kinds[k]);
    bw_budget_on_success(kinds[k]);
    (void)bw_budget_try_retry(kinds[k]);
    bw_clock_manual_advance(e->clock, 3 * SEC);
    bw_budget_on_request(kinds[k]);
    bw_budget_stats(kinds[k], &s);
    attempts = oom_attempts();
    oom_fail_at(0, false);
    assert_int_equal(attempts, 0);
    assert_u64_eq(s.requests, 2);
    bw_budget_free(kinds[k]);
  }
}

static int oom_scenario(void *ctx) {
  bw_budget_kind_t kind = *(const bw_budget_kind_t *)ctx;
  bw_budget_config_t cfg;
  bw_error_t err;
  bw_budget_t *b;
  bw_budget_config_init(&cfg);
  cfg.kind = kind;
  cfg.name = "oom";
  b = bw_budget_new(&cfg, &err);
  if (b == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    assert_contains(err.message, "oom");
    return BW_E_NOMEM;
  }
  bw_budget_on_request(b);
  assert_true(bw_budget_try_retry(b));
  bw_budget_free(b);
  return BW_OK;
}

static void creation_survives_every_allocation_failure(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    bw_budget_kind_t kind = (bw_budget_kind_t)k;
    /* The object and its name; the ratio budget also its window. */
    assert_int_equal(oom_walk(oom_scenario, &kind, false), k == 0 ? 3 : 4);
  }
}

/* ==== refusal summaries ================================================== */

/* Refused retries are summarised as retries_refused at most once a second
 * (the refusal that finds a summary due included) and once more when the
 * budget is freed; an allowed retry emits nothing. */
/* budget_exhausted: once per episode of refusals, at the first. */
static void refused_retries_are_summarised_at_most_once_a_second(void **state) {
  env_t *e = *state;
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_sink_t *sink;
  bw_budget_config_t cfg;
  const bwt_event_t *ev;
  int i;
  assert_non_null(rec);
  sink = bw_sink_callback_new(bwt_record_cb, rec, NULL);
  assert_non_null(sink);
  bw_budget_config_init(&cfg);
  cfg.name = "bucket";
  cfg.max_tokens = 2;
  cfg.token_ratio = 0.5;
  cfg.clock = e->clock;
  cfg.wall_clock = e->clock;
  cfg.sink = sink;
  MAKE(e, &cfg);

  bw_budget_on_failure(e->b); /* 1 token of 2: no longer above half */
  for (i = 0; i < 3; i++)
    assert_false(bw_budget_try_retry(e->b));
  /* The first refusal reports the exhaustion at once, the others not. */
  assert_int_equal(rec->count, 1);
  ev = bwt_event_at(rec, 0);
  assert_int_equal(ev->type, BW_EV_BUDGET_EXHAUSTED);
  assert_string_equal(ev->name, "bucket");
  assert_string_equal(
      ev->reason,
      "the token_bucket budget is spent: retries refused until it refills");
  assert_int_equal(ev->field_count, 1);
  assert_field_str(ev, 0, "budget", "token_bucket");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS);
  bw_clock_manual_advance(e->clock, 1000 * MS - 1);
  assert_false(bw_budget_try_retry(e->b));
  assert_int_equal(bwt_count(rec, BW_EV_RETRIES_REFUSED), 0);
  bw_clock_manual_advance(e->clock, 1);
  assert_status(bw_budget_try_retry_ex(e->b), BW_E_FULL);
  assert_int_equal(bwt_count(rec, BW_EV_RETRIES_REFUSED), 1);
  ev = bwt_nth_of(rec, BW_EV_RETRIES_REFUSED, 0);
  assert_int_equal(ev->type, BW_EV_RETRIES_REFUSED);
  assert_string_equal(ev->name, "bucket");
  assert_string_equal(ev->reason,
                      "5 retries refused by the token_bucket budget");
  assert_int_equal(ev->field_count, 2);
  assert_field_uint(ev, 0, "count", 5);
  assert_field_str(ev, 1, "budget", "token_bucket");
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 1000 * MS);
  assert_i64_eq(ev->wall_ns, BWT_T0_NS + 1000 * MS);

  bw_budget_on_success(e->b);
  bw_budget_on_success(e->b); /* 2 tokens: retries allowed again */
  bw_clock_manual_advance(e->clock, 5 * SEC);
  assert_true(bw_budget_try_retry(e->b));
  assert_int_equal(bwt_count(rec, BW_EV_RETRIES_REFUSED), 1);
  bw_budget_on_failure(e->b);
  assert_false(bw_budget_try_retry(e->b)); /* due: reported at once */
  /* An allowed retry re-armed the exhaustion: reported again, first. */
  assert_int_equal(bwt_count(rec, BW_EV_BUDGET_EXHAUSTED), 2);
  assert_int_equal(bwt_event_at(rec, 2)->type, BW_EV_BUDGET_EXHAUSTED);
  assert_i64_eq(bwt_event_at(rec, 2)->mono_ns, BWT_T0_NS + 6000 * MS);
  assert_int_equal(bwt_event_at(rec, 3)->type, BW_EV_RETRIES_REFUSED);
  assert_int_equal(bwt_count(rec, BW_EV_RETRIES_REFUSED), 2);
  assert_field_uint(bwt_nth_of(rec, BW_EV_RETRIES_REFUSED, 1), 0, "count", 1);
  assert_i64_eq(bwt_nth_of(rec, BW_EV_RETRIES_REFUSED, 1)->mono_ns,
                BWT_T0_NS + 6000 * MS);
  bw_clock_manual_advance(e->clock, 100 * MS);
  assert_false(bw_budget_try_retry(e->b));
  assert_false(bw_budget_try_retry(e->b));
  assert_int_equal(bwt_count(rec, BW_EV_RETRIES_REFUSED), 2);
  bw_budget_free(e->b); /* the two pending, at the free */
  e->b = NULL;
  assert_int_equal(bwt_count(rec, BW_EV_RETRIES_REFUSED), 3);
  ev = bwt_nth_of(rec, BW_EV_RETRIES_REFUSED, 2);
  assert_field_uint(ev, 0, "count", 2);
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 6100 * MS);

  /* A ratio budget the same way; nothing refused, nothing sent. */
  cfg.name = "ratio";
  cfg.kind = BW_BUDGET_RATIO;
  cfg.budget_percent = 0;
  cfg.min_retries_per_sec = 0;
  cfg.window_ms = 1000;
  MAKE(e, &cfg);
  bw_budget_on_request(e->b);
  assert_false(bw_budget_try_retry(e->b));
  bw_budget_free(e->b);
  e->b = NULL;
  assert_int_equal(bwt_count(rec, BW_EV_RETRIES_REFUSED), 4);
  ev = bwt_nth_of(rec, BW_EV_RETRIES_REFUSED, 3);
  assert_string_equal(ev->name, "ratio");
  assert_field_uint(ev, 0, "count", 1);
  assert_field_str(ev, 1, "budget", "ratio");
  assert_int_equal(bwt_count(rec, BW_EV_BUDGET_EXHAUSTED), 3);
  assert_int_equal(rec->count, 7);
  MAKE(e, &cfg);
  bw_budget_free(e->b);
  e->b = NULL;
  assert_int_equal(rec->count, 7);
  bw_sink_free(sink);
  free(rec);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value: no retry, an empty name) for a NULL budget, never a crash;
 * the void functions and the free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_budget_stats_t s;
  bw_error_t err;
  (void)state;
  bw_budget_config_init(NULL);
  assert_status(bw_budget_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_budget_new(NULL, NULL));
  assert_null(bw_budget_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  bw_budget_on_request(NULL);
  bw_budget_on_success(NULL);
  bw_budget_on_failure(NULL);
  assert_false(bw_budget_try_retry(NULL));
  assert_status(bw_budget_try_retry_ex(NULL), BW_E_INVAL);
  memset(&s, 0xA5, sizeof s);
  bw_budget_stats(NULL, &s);
  assert_u64_eq(s.requests, 0);
  assert_u64_eq(s.denied, 0);
  bw_budget_stats(NULL, NULL);
  assert_string_equal(bw_budget_name(NULL), "");
  assert_string_equal(bw_budget_kind_name((bw_budget_kind_t)99), "unknown");
  bw_budget_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_init_fills_documented_defaults),
      cmocka_unit_test(default_config_creates_a_full_token_bucket),
      cmocka_unit_test(a_ratio_budget_without_a_clock_uses_the_monotonic_one),
      cmocka_unit_test(every_invalid_field_is_refused_naming_the_field),
      cmocka_unit_test(messages_state_the_rule_and_the_value),
      cmocka_unit_test(null_config_is_refused),
      cmocka_unit_test(boundary_values_are_accepted),
      cmocka_unit_test(fields_of_the_other_kind_are_not_checked),
      cmocka_unit_test(name_is_copied_at_creation),
      cmocka_unit_test(kind_names),
      cmocka_unit_test(every_verb_answers_null_without_crashing),
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(a_full_bucket_allows_retries_and_asking_costs_nothing),
      T(refused_retries_are_summarised_at_most_once_a_second),
      T(the_failure_that_brings_tokens_to_half_denies_retries),
      T(successes_refill_by_token_ratio_until_retries_return),
      T(tokens_never_leave_zero_to_max),
      T(an_odd_max_in_thousandths_keeps_the_strict_half),
      T(the_smallest_ratio_refills_exactly_one_thousandth),
      T(a_token_bucket_counts_everything_and_has_no_window),
      T(under_total_failure_retries_stay_within_the_budget_share),
      T(the_floor_lets_low_traffic_retry),
      T(the_floor_is_strict_on_its_boundaries),
      T(zero_percent_and_no_floor_deny_every_retry),
      T(one_hundred_percent_allows_one_retry_per_request),
      T(requests_stop_counting_exactly_at_the_bucket_boundary),
      T(the_window_slides_one_bucket_at_a_time),
      T(retries_leave_the_window_too),
      T(a_window_of_10_ms_slides_by_the_millisecond),
      T(a_quiet_spell_of_2_pow_32_buckets_does_not_alias),
      T(retries_of_every_bucket_count_until_they_leave),
      T(decisions_of_one_thread_match_a_model_window),
      T(decisions_with_two_stripes_match_a_model_window),
      T(decisions_of_another_thread_alone_match_a_model_window),
      T(the_verbs_allocate_nothing),
      T(other_threads_counts_are_in_every_threads_window),
      T(a_clock_at_zero_counts_the_first_bucket),
      T(a_ratio_budget_grants_whatever_the_clock_reads),
#undef T
      cmocka_unit_test(a_null_budget_is_harmless),
      cmocka_unit_test(creation_survives_every_allocation_failure),
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

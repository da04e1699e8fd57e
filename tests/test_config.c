/* Configuration by name (config.h): the field tables against each kind's
 * init and name functions, every kind of bad value, the value parsers, the
 * environment rule (the reference toolkit's RECOVERY_QUEUE_MAX_SIZE and
 * RECOVERY_QUEUE_WARN_THRESHOLD through it), and docs/configuration.md
 * against the tables (BW_UPDATE_DOCS=1 rewrites its generated section). */
#include "bw_test.h"
#include "breakwater/config.h"
#include "breakwater/store.h"

/* Room for any kind's struct. */
typedef union any_u {
  bw_breaker_config_t breaker;
  bw_retry_config_t retry;
  bw_limiter_config_t limiter;
  bw_stage_config_t stage;
  bw_degrade_config_t degrade;
  bw_queue_store_config_t queue;
  bw_reprocessor_config_t reprocessor;
  bw_registry_config_t registry;
  unsigned char bytes[1024];
} any_t;

static void test_sizes_fit(void **state) {
  (void)state;
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++) {
    assert_true(bw_config_size((bw_config_kind_t)k) > 0);
    assert_true(bw_config_size((bw_config_kind_t)k) <= sizeof(any_t));
  }
  assert_int_equal(bw_config_size(BW_CONFIG__COUNT), 0);
  assert_string_equal(bw_config_kind_name(BW_CONFIG__COUNT), "unknown");
}

/* Every field's listed default is what its kind's init leaves. */
static void test_defaults_match_init(void **state) {
  (void)state;
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++) {
    any_t c;
    size_t n;
    const bw_config_field_t *f = bw_config_fields((bw_config_kind_t)k, &n);
    assert_non_null(f);
    assert_true(n > 0);
    memset(&c, 0xA5, sizeof c);
    assert_status(bw_config_init((bw_config_kind_t)k, &c), BW_OK);
    for (size_t i = 0; i < n; i++) {
      char buf[64];
      bw_error_t err;
      assert_status(bw_config_get((bw_config_kind_t)k, &c, f[i].name, buf,
                                  sizeof buf, &err),
                    BW_OK);
      if (strcmp(buf, f[i].default_value) != 0)
        fail_msg("%s.%s: init gives '%s', the table says '%s'",
                 bw_config_kind_name((bw_config_kind_t)k), f[i].name, buf,
                 f[i].default_value);
      assert_non_null(f[i].help);
      assert_true(f[i].help[0] != '\0');
    }
  }
}

/* Every kind's init passes its validate, except the two whose bound is
 * required (no default). */
static void test_init_validates(void **state) {
  (void)state;
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++) {
    any_t c;
    bw_error_t err;
    int rc;
    bw_config_init((bw_config_kind_t)k, &c);
    rc = bw_config_validate((bw_config_kind_t)k, &c, &err);
    if (k == BW_CONFIG_PRIORITY_QUEUE || k == BW_CONFIG_STAGE) {
      assert_status(rc, BW_E_INVAL);
      assert_string_equal(err.field,
                          k == BW_CONFIG_STAGE ? "queue_size" : "max_size");
    } else {
      assert_status(rc, BW_OK);
    }
  }
}

static void check_choices(bw_config_kind_t kind, const char *field,
                          const char *(*name)(int)) {
  const bw_config_field_t *f = bw_config_field(kind, field);
  assert_non_null(f);
  assert_int_equal(f->type, BW_CONFIG_T_ENUM);
  for (int i = 0; f->choices[i] != NULL; i++)
    assert_string_equal(f->choices[i], name(i));
  assert_string_equal(name((int)0x7fff), "unknown");
}

static const char *trip(int v) {
  return bw_trip_rule_name((bw_trip_rule_t)v);
}
static const char *bkind(int v) {
  return bw_budget_kind_name((bw_budget_kind_t)v);
}
static const char *algo(int v) {
  return bw_limiter_algorithm_name((bw_limiter_algorithm_t)v);
}
static const char *qpol(int v) {
  return bw_queue_policy_name((bw_queue_policy_t)v);
}

/* Enum names are the ones the core's *_name functions print. */
static void test_enum_names_match_core(void **state) {
  (void)state;
  check_choices(BW_CONFIG_BREAKER, "trip_rule", trip);
  check_choices(BW_CONFIG_BUDGET, "kind", bkind);
  check_choices(BW_CONFIG_LIMITER, "algorithm", algo);
  check_choices(BW_CONFIG_PRIORITY_QUEUE, "policy", qpol);
  check_choices(BW_CONFIG_STAGE, "policy", qpol);
}

static void test_set_examples(void **state) {
  bw_breaker_config_t b;
  bw_retry_config_t r;
  bw_budget_config_t bu;
  bw_gauge_config_t g;
  bw_stage_config_t s;
  bw_registry_config_t reg;
  bw_error_t err;
  (void)state;
  bw_breaker_config_init(&b);
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "trip_rule", "time_window", &err),
      BW_OK);
  assert_int_equal(b.trip_rule, BW_TRIP_TIME_WINDOW);
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "trip_rule", "COUNT_WINDOW", &err),
      BW_OK);
  assert_int_equal(b.trip_rule, BW_TRIP_COUNT_WINDOW);
  static const struct {
    const char *text;
    int64_t ms;
  } durations[] = {{"30s", 30000},  {"250ms", 250},   {"2m", 120000},
                   {"1h", 3600000}, {"1d", 86400000}, {"1500", 1500},
                   {"1.5s", 1500},  {"0.25m", 15000}, {"+7", 7}};
  for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++) {
    assert_status(bw_config_set(BW_CONFIG_BREAKER, &b, "break_ms",
                                durations[i].text, &err),
                  BW_OK);
    assert_i64_eq(b.break_ms, durations[i].ms);
  }
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "failure_ratio", "50%", &err),
      BW_OK);
  assert_dbl_eq(b.failure_ratio, 0.5, 0);
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "failure_ratio", "0.25", &err),
      BW_OK);
  assert_dbl_eq(b.failure_ratio, 0.25, 0);
  static const struct {
    const char *text;
    bool v;
  } bools[] = {{"true", true}, {"off", false}, {"ON", true},  {"0", false},
               {"1", true},    {"No", false},  {"yes", true}, {"FALSE", false}};
  for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
    assert_status(bw_config_set(BW_CONFIG_BREAKER, &b, "metrics_only",
                                bools[i].text, &err),
                  BW_OK);
    assert_int_equal(b.metrics_only, bools[i].v);
  }
  assert_status(bw_config_set(BW_CONFIG_BREAKER, &b, "name", "payments", &err),
                BW_OK);
  assert_string_equal(b.name, "payments");

  bw_retry_config_init(&r);
  assert_status(
      bw_config_set(BW_CONFIG_RETRY, &r, "jitter", "decorrelated", &err),
      BW_OK);
  assert_int_equal(r.jitter, BW_JITTER_DECORRELATED);
  assert_status(
      bw_config_set(BW_CONFIG_RETRY, &r, "seed", "18446744073709551615", &err),
      BW_OK);
  assert_u64_eq(r.seed, UINT64_MAX);

  bw_budget_config_init(&bu);
  assert_status(
      bw_config_set(BW_CONFIG_BUDGET, &bu, "budget_percent", "25%", &err),
      BW_OK);
  assert_dbl_eq(bu.budget_percent, 25, 0);
  assert_status(
      bw_config_set(BW_CONFIG_BUDGET, &bu, "budget_percent", "12.5", &err),
      BW_OK);
  assert_dbl_eq(bu.budget_percent, 12.5, 0);

  bw_gauge_config_init(&g);
  assert_status(
      bw_config_set(BW_CONFIG_GAUGE, &g, "ceiling[degraded]", "all", &err),
      BW_OK);
  assert_u64_eq(g.ceiling[BW_REGIME_DEGRADED], UINT32_MAX);
  assert_status(
      bw_config_set(BW_CONFIG_GAUGE, &g, "ceiling[critical]", "3", &err),
      BW_OK);
  assert_u64_eq(g.ceiling[BW_REGIME_CRITICAL], 3);

  bw_stage_config_init(&s);
  assert_status(
      bw_config_set(BW_CONFIG_STAGE, &s, "gauge.degraded_at", "40%", &err),
      BW_OK);
  assert_dbl_eq(s.gauge.degraded_at, 0.4, 0);
  assert_status(bw_config_set(BW_CONFIG_STAGE, &s, "queue_size", "64", &err),
                BW_OK);
  assert_status(bw_stage_config_validate(&s, &err), BW_OK);

  bw_registry_config_init(&reg);
  assert_status(
      bw_config_set(BW_CONFIG_REGISTRY, &reg, "max_objects", "1000", &err),
      BW_OK);
  assert_u64_eq(reg.max_objects, 1000);
  assert_status(
      bw_config_set(BW_CONFIG_REGISTRY, &reg, "idle_evict_ms", "5m", &err),
      BW_OK);
  assert_i64_eq(reg.idle_evict_ms, 300000);
}

/* One bad value: the code, the field named, the words of the rule, and the
 * config untouched. */
typedef struct bad_s {
  bw_config_kind_t kind;
  const char *field;
  const char *value;
  int code;
  const char *err_field;
  const char *words;
} bad_t;

static const bad_t bads[] = {
    /* malformed */
    {BW_CONFIG_BREAKER, "failure_threshold", "abc", BW_E_INVAL,
     "failure_threshold",
     "failure_threshold must be an integer in [1, 4294967295] (got 'abc')"},
    {BW_CONFIG_BREAKER, "failure_threshold", "3x", BW_E_INVAL,
     "failure_threshold", "must be an integer"},
    {BW_CONFIG_BREAKER, "failure_threshold", " 3", BW_E_INVAL,
     "failure_threshold", "(got ' 3')"},
    {BW_CONFIG_BREAKER, "failure_threshold", "", BW_E_INVAL,
     "failure_threshold", "(got '')"},
    {BW_CONFIG_BREAKER, "failure_threshold", "0x10", BW_E_INVAL,
     "failure_threshold", "must be an integer"},
    {BW_CONFIG_BREAKER, "break_ms", "30x", BW_E_INVAL, "break_ms",
     "break_ms must be a duration in [1, 2305843009213] ms, as 250ms, 30s, "
     "2m or 1h (a bare number is ms) (got '30x')"},
    {BW_CONFIG_BREAKER, "break_ms", "s", BW_E_INVAL, "break_ms", "duration"},
    {BW_CONFIG_BREAKER, "break_ms", "1.5.0s", BW_E_INVAL, "break_ms",
     "duration"},
    {BW_CONFIG_BREAKER, "break_ms", "30 s", BW_E_INVAL, "break_ms", "duration"},
    {BW_CONFIG_BREAKER, "break_multiplier", "nan", BW_E_INVAL,
     "break_multiplier", "must be a number in [1, inf)"},
    {BW_CONFIG_BREAKER, "break_multiplier", "inf", BW_E_INVAL,
     "break_multiplier", "must be a number"},
    {BW_CONFIG_BREAKER, "break_multiplier", "1e999", BW_E_INVAL,
     "break_multiplier", "must be a number"},
    {BW_CONFIG_RETRY, "seed", "-1", BW_E_INVAL, "seed",
     "seed must be an integer in [0, 18446744073709551615]"},
    {BW_CONFIG_RETRY, "seed", "18446744073709551616", BW_E_INVAL, "seed",
     "must be an integer"},
    /* the wrong type */
    {BW_CONFIG_BREAKER, "failure_ratio", "yes", BW_E_INVAL, "failure_ratio",
     "failure_ratio must be a ratio in (0, 1], as 0.5 or 50% (got 'yes')"},
    {BW_CONFIG_BREAKER, "metrics_only", "maybe", BW_E_INVAL, "metrics_only",
     "metrics_only must be true or false (also on/off, yes/no, 1/0) (got "
     "'maybe')"},
    {BW_CONFIG_BREAKER, "trip_rule", "window", BW_E_INVAL, "trip_rule",
     "trip_rule must be consecutive, count_window or time_window (got "
     "'window')"},
    {BW_CONFIG_BREAKER, "trip_rule", "2", BW_E_INVAL, "trip_rule",
     "trip_rule must be"},
    {BW_CONFIG_RETRY, "jitter", "decorelated", BW_E_INVAL, "jitter",
     "jitter must be none, full, equal, decorrelated or additive"},
    {BW_CONFIG_BREAKER, "window_size", "1.5", BW_E_INVAL, "window_size",
     "must be an integer"},
    {BW_CONFIG_BREAKER, "break_ms", "true", BW_E_INVAL, "break_ms", "duration"},
    /* out of range */
    {BW_CONFIG_BREAKER, "failure_ratio", "1.5", BW_E_INVAL, "failure_ratio",
     "in (0, 1]"},
    {BW_CONFIG_BREAKER, "failure_ratio", "0", BW_E_INVAL, "failure_ratio",
     "(got '0')"},
    {BW_CONFIG_BREAKER, "failure_ratio", "150%", BW_E_INVAL, "failure_ratio",
     "(got '150%')"},
    {BW_CONFIG_BREAKER, "failure_threshold", "0", BW_E_INVAL,
     "failure_threshold", "in [1, 4294967295]"},
    {BW_CONFIG_BREAKER, "failure_threshold", "-1", BW_E_INVAL,
     "failure_threshold", "(got '-1')"},
    {BW_CONFIG_BREAKER, "failure_threshold", "4294967296", BW_E_INVAL,
     "failure_threshold", "(got '4294967296')"},
    {BW_CONFIG_BREAKER, "failure_threshold", "99999999999999999999", BW_E_INVAL,
     "failure_threshold", "must be an integer"},
    {BW_CONFIG_BREAKER, "window_size", "1000001", BW_E_INVAL, "window_size",
     "in [1, 1000000]"},
    {BW_CONFIG_BREAKER, "break_ms", "0", BW_E_INVAL, "break_ms",
     "in [1, 2305843009213] ms"},
    {BW_CONFIG_BREAKER, "break_ms", "0.5ms", BW_E_INVAL, "break_ms",
     "(got '0.5ms')"},
    {BW_CONFIG_BREAKER, "break_ms", "-5s", BW_E_INVAL, "break_ms",
     "(got '-5s')"},
    {BW_CONFIG_BREAKER, "break_ms", "999999999999d", BW_E_INVAL, "break_ms",
     "duration"},
    {BW_CONFIG_BREAKER, "break_multiplier", "0.5", BW_E_INVAL,
     "break_multiplier",
     "break_multiplier must be a number in [1, inf) "
     "(got '0.5')"},
    {BW_CONFIG_LIMITER, "backoff_ratio", "1", BW_E_INVAL, "backoff_ratio",
     "backoff_ratio must be a ratio in [0.5, 1)"},
    {BW_CONFIG_LIMITER, "stuck_ratio", "0.5", BW_E_INVAL, "stuck_ratio",
     "stuck_ratio must be a number in 0 or [1, 100]"},
    {BW_CONFIG_LIMITER, "rtt_sample_every", "1025", BW_E_INVAL,
     "rtt_sample_every", "in [1, 1024]"},
    {BW_CONFIG_BUDGET, "budget_percent", "101", BW_E_INVAL, "budget_percent",
     "budget_percent must be a percentage in [0, 100], as 20 or 20% (got "
     "'101')"},
    {BW_CONFIG_BUDGET, "window_ms", "1d1ms", BW_E_INVAL, "window_ms",
     "in [10, 86400000] ms"},
    {BW_CONFIG_BULKHEAD, "max_wait_ms", "2d", BW_E_INVAL, "max_wait_ms",
     "in [0, 86400000] ms"},
    {BW_CONFIG_GAUGE, "ceiling[normal]", "none", BW_E_INVAL, "ceiling[normal]",
     "must be an integer in [0, 4294967295], or all"},
    {BW_CONFIG_DEGRADE, "level_count", "17", BW_E_INVAL, "level_count",
     "in [2, 16]"},
    {BW_CONFIG_PRIORITY_QUEUE, "max_size", "0", BW_E_INVAL, "max_size",
     "in [1, 67108864]"},
    {BW_CONFIG_REGISTRY, "max_objects", "-1", BW_E_INVAL, "max_objects",
     "must be an integer"},
    {BW_CONFIG_BREAKER, "name", "", BW_E_INVAL, "name",
     "name must not be empty"},
    /* unknown field, near and far */
    {BW_CONFIG_BREAKER, "failure_treshold", "3", BW_E_NOTFOUND,
     "failure_treshold",
     "breaker has no field 'failure_treshold' (did you mean "
     "failure_threshold?)"},
    {BW_CONFIG_BREAKER, "colour", "3", BW_E_NOTFOUND, "colour",
     "breaker has no field 'colour' (breakwater config show breaker lists "
     "them)"},
    {BW_CONFIG_STAGE, "gauge.name", "x", BW_E_NOTFOUND, "gauge.name",
     "stage has no field"},
    /* a pointer */
    {BW_CONFIG_BREAKER, "clock", "monotonic", BW_E_INVAL, "clock",
     "clock is a pointer (a clock, sink, callback or object): it cannot be "
     "set by name, only in code"},
    {BW_CONFIG_LIMITER, "on_change", "x", BW_E_INVAL, "on_change",
     "cannot be set by name"},
    {BW_CONFIG_DEGRADE, "level_names", "a,b", BW_E_INVAL, "level_names",
     "cannot be set by name"},
    /* an unknown kind */
    {(bw_config_kind_t)99, "name", "x", BW_E_NOTFOUND, "kind",
     "kind must be a bw_config_kind_t below 18 (got 99)"},
    {(bw_config_kind_t)-1, "name", "x", BW_E_NOTFOUND, "kind", "(got -1)"},
};

static void test_bad_values(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
    const bad_t *b = &bads[i];
    any_t c, before;
    bw_error_t err;
    int rc;
    memset(&c, 0, sizeof c);
    if ((unsigned)b->kind < BW_CONFIG__COUNT) bw_config_init(b->kind, &c);
    memcpy(&before, &c, sizeof c);
    bwt_prefill_error(&err);
    rc = bw_config_set(b->kind, &c, b->field, b->value, &err);
    if (rc != b->code)
      fail_msg("%s=%s: %s, expected %s (%s)", b->field, b->value,
               bw_err_name(rc), bw_err_name(b->code), err.message);
    assert_int_equal(err.code, b->code);
    assert_string_equal(err.field, b->err_field);
    assert_contains(err.message, b->words);
    assert_memory_equal(&c, &before, sizeof c);
  }
}

static void test_null_arguments(void **state) {
  bw_breaker_config_t b;
  bw_error_t err;
  char buf[8];
  (void)state;
  bw_breaker_config_init(&b);
  assert_status(bw_config_set(BW_CONFIG_BREAKER, NULL, "name", "x", &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_status(bw_config_set(BW_CONFIG_BREAKER, &b, NULL, "x", &err),
                BW_E_INVAL);
  assert_status(bw_config_set(BW_CONFIG_BREAKER, &b, "name", NULL, &err),
                BW_E_INVAL);
  assert_contains(err.message, "name needs a value");
  assert_status(bw_config_set(BW_CONFIG_BREAKER, &b, "name", "x", NULL), BW_OK);
  assert_status(bw_config_get(BW_CONFIG_BREAKER, &b, "name", NULL, 4, &err),
                BW_E_INVAL);
  assert_status(bw_config_get(BW_CONFIG_BREAKER, &b, "half_open_timeout_ms",
                              buf, 3, &err),
                BW_E_RANGE);
  assert_string_equal(buf, "60");
  assert_status(bw_config_get(BW_CONFIG_BREAKER, &b, "nope", buf, 8, &err),
                BW_E_NOTFOUND);
  assert_status(bw_config_validate(BW_CONFIG_BREAKER, NULL, &err), BW_E_INVAL);
  assert_status(bw_config_validate((bw_config_kind_t)77, &b, &err), BW_E_INVAL);
  assert_status(bw_config_init((bw_config_kind_t)77, &b), BW_E_INVAL);
  assert_null(bw_config_fields((bw_config_kind_t)77, NULL));
  assert_null(bw_config_field(BW_CONFIG_BREAKER, NULL));
}

static void test_kind_parse(void **state) {
  bw_config_kind_t k;
  bw_error_t err;
  (void)state;
  for (unsigned i = 0; i < BW_CONFIG__COUNT; i++) {
    assert_status(bw_config_kind_parse(bw_config_kind_name(i), &k, &err),
                  BW_OK);
    assert_int_equal(k, i);
    assert_true(bw_config_kind_type(i)[0] != '\0');
  }
  assert_status(bw_config_kind_parse("brekaer", &k, &err), BW_E_NOTFOUND);
  assert_string_equal(err.field, "kind");
  assert_contains(err.message,
                  "unknown kind 'brekaer' (kinds: breaker, "
                  "retry, budget");
  assert_contains(err.message, "reprocessor, hedge, http, throttle)");
  assert_status(bw_config_kind_parse(NULL, &k, &err), BW_E_INVAL);
}

/* get then set gives the same bytes back, for every settable field. */
static void test_get_set_round_trip(void **state) {
  (void)state;
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++) {
    size_t n;
    const bw_config_field_t *f = bw_config_fields((bw_config_kind_t)k, &n);
    any_t c, again;
    bw_config_init((bw_config_kind_t)k, &c);
    for (size_t i = 0; i < n; i++) {
      char buf[64];
      bw_error_t err;
      if (f[i].type == BW_CONFIG_T_POINTER || f[i].type == BW_CONFIG_T_STRING)
        continue;
      assert_status(bw_config_get(k, &c, f[i].name, buf, sizeof buf, &err),
                    BW_OK);
      memcpy(&again, &c, sizeof c);
      /* the default of a required bound (0) is below its range */
      if (bw_config_set(k, &again, f[i].name, buf, &err) != BW_OK) {
        assert_string_equal(buf, "0");
        assert_contains(f[i].help, "required");
        continue;
      }
      assert_memory_equal(&again, &c, sizeof c);
    }
  }
}

/* Each numeric field takes its closed bounds and refuses just outside. */
static void test_bounds(void **state) {
  (void)state;
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++) {
    size_t n;
    const bw_config_field_t *f = bw_config_fields((bw_config_kind_t)k, &n);
    for (size_t i = 0; i < n; i++) {
      any_t c;
      bw_error_t err;
      char lo[48], hi[48], below[48], above[48];
      bool integer =
          f[i].type == BW_CONFIG_T_U32 || f[i].type == BW_CONFIG_T_DURATION;
      if (!integer && f[i].type != BW_CONFIG_T_DOUBLE &&
          f[i].type != BW_CONFIG_T_RATIO && f[i].type != BW_CONFIG_T_PERCENT)
        continue;
      bw_config_init(k, &c);
      if (integer) {
        snprintf(lo, sizeof lo, "%.0f", f[i].min);
        snprintf(hi, sizeof hi, "%.0f", f[i].max);
        snprintf(below, sizeof below, "%.0f", f[i].min - 1);
        snprintf(above, sizeof above, "%.0f", f[i].max + 1);
      } else {
        snprintf(lo, sizeof lo, "%.17g", f[i].min);
        snprintf(hi, sizeof hi, "%.17g", f[i].max);
        snprintf(below, sizeof below, "%.17g", nextafter(f[i].min, -INFINITY));
        snprintf(above, sizeof above, "%.17g", nextafter(f[i].max, INFINITY));
      }
      if (!(f[i].flags & BW_CONFIG_MIN_OPEN))
        assert_status(bw_config_set(k, &c, f[i].name, lo, &err), BW_OK);
      else
        assert_status(bw_config_set(k, &c, f[i].name, lo, &err), BW_E_INVAL);
      if (!isinf(f[i].max) && !(f[i].flags & BW_CONFIG_MAX_OPEN))
        assert_status(bw_config_set(k, &c, f[i].name, hi, &err), BW_OK);
      if (!isinf(f[i].max) && f[i].max < 1e15) {
        if (bw_config_set(k, &c, f[i].name, above, &err) != BW_E_INVAL)
          fail_msg("%s.%s took %s", bw_config_kind_name(k), f[i].name, above);
        assert_string_equal(err.field, f[i].name);
      }
      if (!((f[i].flags & BW_CONFIG_OR_ZERO) && f[i].min - 1 <= 0 &&
            f[i].min > 0)) {
        if (bw_config_set(k, &c, f[i].name, below, &err) != BW_E_INVAL)
          fail_msg("%s.%s took %s", bw_config_kind_name(k), f[i].name, below);
      }
    }
  }
}

/* Fields may be set in any order; the rules between them are the
 * validator's. */
static void test_cross_field_rules_at_validate(void **state) {
  bw_breaker_config_t b;
  bw_queue_store_config_t q;
  bw_error_t err;
  (void)state;
  bw_breaker_config_init(&b);
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "trip_rule", "count_window", &err),
      BW_OK);
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "minimum_calls", "150", &err),
      BW_OK);
  assert_status(bw_config_validate(BW_CONFIG_BREAKER, &b, &err), BW_E_INVAL);
  assert_string_equal(err.field, "minimum_calls");
  assert_contains(err.message, "minimum_calls must be <= window_size");
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "window_size", "200", &err), BW_OK);
  assert_status(bw_config_validate(BW_CONFIG_BREAKER, &b, &err), BW_OK);
  assert_status(
      bw_config_set(BW_CONFIG_BREAKER, &b, "max_break_ms", "1s", &err), BW_OK);
  assert_status(bw_config_validate(BW_CONFIG_BREAKER, &b, &err), BW_E_INVAL);
  assert_string_equal(err.field, "max_break_ms");

  bw_queue_store_config_init(&q);
  assert_status(
      bw_config_set(BW_CONFIG_QUEUE, &q, "warn_rearm_threshold", "0.8", &err),
      BW_OK);
  assert_status(bw_config_validate(BW_CONFIG_QUEUE, &q, &err), BW_E_INVAL);
  assert_string_equal(err.field, "warn_rearm_threshold");
}

static void test_parsers(void **state) {
  int64_t i;
  uint64_t u, a, b;
  double d;
  bool flag;
  (void)state;
  assert_status(bw_config_parse_i64("-9223372036854775808", &i), BW_OK);
  assert_i64_eq(i, INT64_MIN);
  assert_status(bw_config_parse_i64("9223372036854775807", &i), BW_OK);
  assert_i64_eq(i, INT64_MAX);
  assert_status(bw_config_parse_i64("9223372036854775808", &i), BW_E_RANGE);
  assert_status(bw_config_parse_i64("-", &i), BW_E_INVAL);
  assert_status(bw_config_parse_i64("", &i), BW_E_INVAL);
  assert_status(bw_config_parse_i64("1 ", &i), BW_E_INVAL);
  assert_status(bw_config_parse_i64(NULL, &i), BW_E_INVAL);
  assert_status(bw_config_parse_u64("+1", &u), BW_E_INVAL);
  assert_status(bw_config_parse_u64("18446744073709551616", &u), BW_E_RANGE);
  assert_status(bw_config_parse_double(".5", &d), BW_OK);
  assert_dbl_eq(d, 0.5, 0);
  assert_status(bw_config_parse_double("7.", &d), BW_OK);
  assert_status(bw_config_parse_double("-2e-3", &d), BW_OK);
  assert_dbl_eq(d, -0.002, 0);
  assert_status(bw_config_parse_double("0x1p3", &d), BW_E_INVAL);
  assert_status(bw_config_parse_double("1e", &d), BW_E_INVAL);
  assert_status(bw_config_parse_double(".", &d), BW_E_INVAL);
  assert_status(bw_config_parse_double("1e400", &d), BW_E_RANGE);
  assert_status(bw_config_parse_double("nan", &d), BW_E_INVAL);
  assert_status(bw_config_parse_ratio("50%", &d), BW_OK);
  assert_dbl_eq(d, 0.5, 0);
  assert_status(bw_config_parse_ratio("50%%", &d), BW_E_INVAL);
  assert_status(bw_config_parse_ratio("%", &d), BW_E_INVAL);
  assert_status(bw_config_parse_duration_ms("0.001s", &i), BW_OK);
  assert_i64_eq(i, 1);
  assert_status(bw_config_parse_duration_ms("0.0005s", &i), BW_E_INVAL);
  assert_status(bw_config_parse_duration_ms("1.50000000000000000000s", &i),
                BW_OK);
  assert_i64_eq(i, 1500);
  assert_status(bw_config_parse_duration_ms(".5s", &i), BW_OK);
  assert_i64_eq(i, 500);
  assert_status(bw_config_parse_duration_ms("1S", &i), BW_E_INVAL);
  assert_status(bw_config_parse_duration_ms("1sec", &i), BW_E_INVAL);
  assert_status(bw_config_parse_duration_ms("9223372036854775807", &i), BW_OK);
  assert_status(bw_config_parse_duration_ms("9223372036854775808", &i),
                BW_E_RANGE);
  assert_status(bw_config_parse_duration_ms("106751991167301d", &i),
                BW_E_RANGE);
  assert_status(bw_config_parse_duration_ms(".", &i), BW_E_INVAL);
  assert_status(bw_config_parse_bool("Yes", &flag), BW_OK);
  assert_true(flag);
  assert_status(bw_config_parse_bool("y", &flag), BW_E_INVAL);
  assert_status(bw_config_parse_u64_range("3..7", &a, &b), BW_OK);
  assert_u64_eq(a, 3);
  assert_u64_eq(b, 7);
  assert_status(bw_config_parse_u64_range("9", &a, &b), BW_OK);
  assert_u64_eq(a, 9);
  assert_u64_eq(b, 9);
  assert_status(bw_config_parse_u64_range("5..2", &a, &b), BW_OK);
  assert_u64_eq(a, 5);
  assert_u64_eq(b, 2);
  assert_status(bw_config_parse_u64_range("3..", &a, &b), BW_E_INVAL);
  assert_status(bw_config_parse_u64_range("1-3", &a, &b), BW_E_INVAL);
  assert_status(bw_config_parse_u64_range("1...3", &a, &b), BW_E_INVAL);
}

/* ---- the environment ------------------------------------------------------
 */

static void test_env_names(void **state) {
  char buf[128];
  (void)state;
  assert_status(bw_config_env_name("payments", BW_CONFIG_BREAKER, NULL,
                                   "failure_threshold", buf, sizeof buf),
                BW_OK);
  assert_string_equal(buf, "PAYMENTS_BREAKER_FAILURE_THRESHOLD");
  assert_status(bw_config_env_name("app", BW_CONFIG_STAGE, "eu-west.1",
                                   "gauge.ceiling[normal]", buf, sizeof buf),
                BW_OK);
  assert_string_equal(buf, "APP_EU_WEST_1_STAGE_GAUGE_CEILING_NORMAL");
  assert_status(bw_config_env_name(NULL, BW_CONFIG_QUEUE, "recovery",
                                   "max_size", buf, sizeof buf),
                BW_OK);
  assert_string_equal(buf, "RECOVERY_QUEUE_MAX_SIZE");
  assert_status(bw_config_env_name("", BW_CONFIG_PRIORITY_QUEUE, "", "max_size",
                                   buf, sizeof buf),
                BW_OK);
  assert_string_equal(buf, "PRIORITY_QUEUE_MAX_SIZE");
  assert_status(
      bw_config_env_name("x", BW_CONFIG_BREAKER, NULL, "nope", buf, sizeof buf),
      BW_E_NOTFOUND);
  assert_status(
      bw_config_env_name("x", BW_CONFIG_BREAKER, NULL, "name", buf, 5),
      BW_E_RANGE);
  /* no two fields of a kind share a variable */
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++) {
    size_t n;
    const bw_config_field_t *f = bw_config_fields(k, &n);
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n; j++) {
        char x[128], y[128];
        bw_config_env_name("P", k, NULL, f[i].name, x, sizeof x);
        bw_config_env_name("P", k, NULL, f[j].name, y, sizeof y);
        assert_string_not_equal(x, y);
      }
  }
}

static void test_env_breaker(void **state) {
  bw_breaker_config_t b;
  bw_error_t err;
  (void)state;
  bw_breaker_config_init(&b);
  setenv("PAYMENTS_BREAKER_FAILURE_THRESHOLD", "3", 1);
  setenv("PAYMENTS_BREAKER_BREAK_MS", "2m", 1);
  setenv("PAYMENTS_BREAKER_NAME", "payments", 1);
  setenv("PAYMENTS_RETRY_MAX_ATTEMPTS", "9", 1); /* another kind's */
  setenv("PAYMENTS_BREAKERS", "x", 1); /* not under PAYMENTS_BREAKER_ */
  assert_status(
      bw_config_from_env("PAYMENTS", BW_CONFIG_BREAKER, NULL, &b, &err), BW_OK);
  assert_int_equal(b.failure_threshold, 3);
  assert_i64_eq(b.break_ms, 120000);
  assert_string_equal(b.name, "payments");
  /* with an instance: APP_PAYMENTS_BREAKER_... */
  setenv("APP_PAYMENTS_BREAKER_TRIP_RULE", "time_window", 1);
  assert_status(
      bw_config_from_env("app", BW_CONFIG_BREAKER, "payments", &b, &err),
      BW_OK);
  assert_int_equal(b.trip_rule, BW_TRIP_TIME_WINDOW);
  unsetenv("APP_PAYMENTS_BREAKER_TRIP_RULE");
  unsetenv("PAYMENTS_BREAKER_FAILURE_THRESHOLD");
  unsetenv("PAYMENTS_BREAKER_BREAK_MS");
  unsetenv("PAYMENTS_BREAKER_NAME");
  unsetenv("PAYMENTS_RETRY_MAX_ATTEMPTS");
  unsetenv("PAYMENTS_BREAKERS");
}

static void test_env_errors_leave_cfg_alone(void **state) {
  bw_breaker_config_t b, before;
  bw_error_t err;
  (void)state;
  bw_breaker_config_init(&b);
  before = b;
  /* an unknown variable under the prefix is an error, not ignored */
  setenv("PAYMENTS_BREAKER_FAILURE_THRESHOLD", "3", 1);
  setenv("PAYMENTS_BREAKER_FAILURE_TRESHOLD", "4", 1);
  assert_status(
      bw_config_from_env("PAYMENTS", BW_CONFIG_BREAKER, NULL, &b, &err),
      BW_E_NOTFOUND);
  assert_contains(err.message,
                  "PAYMENTS_BREAKER_FAILURE_TRESHOLD is not a "
                  "breaker field's variable");
  assert_memory_equal(&b, &before, sizeof b);
  unsetenv("PAYMENTS_BREAKER_FAILURE_TRESHOLD");
  /* a bad value names the variable, the field and the rule */
  setenv("PAYMENTS_BREAKER_FAILURE_RATIO", "2", 1);
  assert_status(
      bw_config_from_env("PAYMENTS", BW_CONFIG_BREAKER, NULL, &b, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "failure_ratio");
  assert_contains(err.message,
                  "PAYMENTS_BREAKER_FAILURE_RATIO: "
                  "failure_ratio must be a ratio in (0, 1]");
  assert_memory_equal(&b, &before, sizeof b);
  unsetenv("PAYMENTS_BREAKER_FAILURE_RATIO");
  /* a pointer */
  setenv("PAYMENTS_BREAKER_SINK", "stderr", 1);
  assert_status(
      bw_config_from_env("PAYMENTS", BW_CONFIG_BREAKER, NULL, &b, &err),
      BW_E_INVAL);
  assert_contains(err.message, "sink is a pointer");
  unsetenv("PAYMENTS_BREAKER_SINK");
  /* the whole struct is validated: a rule between fields */
  setenv("PAYMENTS_BREAKER_MAX_BREAK_MS", "1s", 1);
  assert_status(
      bw_config_from_env("PAYMENTS", BW_CONFIG_BREAKER, NULL, &b, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "max_break_ms");
  assert_memory_equal(&b, &before, sizeof b);
  unsetenv("PAYMENTS_BREAKER_MAX_BREAK_MS");
  unsetenv("PAYMENTS_BREAKER_FAILURE_THRESHOLD");
  /* nothing set: OK, nothing changed */
  assert_status(
      bw_config_from_env("PAYMENTS", BW_CONFIG_BREAKER, NULL, &b, &err), BW_OK);
  assert_memory_equal(&b, &before, sizeof b);
  assert_status(bw_config_from_env("P", (bw_config_kind_t)40, NULL, &b, &err),
                BW_E_NOTFOUND);
  assert_status(bw_config_from_env("P", BW_CONFIG_BREAKER, NULL, NULL, &err),
                BW_E_INVAL);
}

/* The reference toolkit's queue guard reads RECOVERY_QUEUE_MAX_SIZE and
 * RECOVERY_QUEUE_WARN_THRESHOLD: prefix RECOVERY, kind queue. */
static void test_env_recovery_queue(void **state) {
  bw_queue_store_config_t qc;
  bw_queue_store_t *q;
  bw_queue_store_stats_t st;
  bw_error_t err;
  uint64_t warn_at, rearm;
  (void)state;
  setenv("RECOVERY_QUEUE_MAX_SIZE", "100", 1);
  setenv("RECOVERY_QUEUE_WARN_THRESHOLD", "80%", 1);
  bw_queue_store_config_init(&qc);
  assert_status(
      bw_config_from_env("RECOVERY", BW_CONFIG_QUEUE, NULL, &qc, &err), BW_OK);
  assert_int_equal(qc.max_size, 100);
  assert_dbl_eq(qc.warn_threshold, 0.8, 0);
  bw_queue_store_config_levels(&qc, &warn_at, &rearm);
  assert_u64_eq(warn_at, 80);
  assert_u64_eq(rearm, 60);
  q = bw_mem_queue_new(&qc, &err);
  assert_non_null(q);
  for (int i = 0; i < 100; i++)
    assert_status(bw_queue_store_enqueue(q, "x", 1, NULL), BW_OK);
  assert_status(bw_queue_store_enqueue(q, "x", 1, NULL), BW_E_FULL);
  assert_status(bw_queue_store_stats(q, &st), BW_OK);
  assert_int_equal(st.max_size, 100);
  assert_u64_eq(st.depth, 100);
  assert_u64_eq(st.refused_full, 1);
  assert_u64_eq(st.warnings, 1);
  assert_true(st.warning);
  bw_queue_store_free(q);
  /* a bad guard is refused with the variable named */
  setenv("RECOVERY_QUEUE_MAX_SIZE", "0", 1);
  assert_status(
      bw_config_from_env("RECOVERY", BW_CONFIG_QUEUE, NULL, &qc, &err),
      BW_E_INVAL);
  assert_contains(err.message, "RECOVERY_QUEUE_MAX_SIZE: max_size must be");
  assert_int_equal(qc.max_size, 100);
  unsetenv("RECOVERY_QUEUE_MAX_SIZE");
  unsetenv("RECOVERY_QUEUE_WARN_THRESHOLD");
}

/* ---- docs/configuration.md ------------------------------------------------
 */

#define DOCS_BEGIN "<!-- fields: generated from bw_config_fields -->\n"
#define DOCS_END "<!-- fields: end -->\n"

static void cell(FILE *out, const char *s) {
  for (; *s != '\0'; s++)
    if (*s == '|')
      fputs("\\|", out);
    else
      fputc(*s, out);
}

static char *render_fields(void) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  for (unsigned k = 0; k < BW_CONFIG__COUNT; k++) {
    size_t n;
    const bw_config_field_t *f = bw_config_fields(k, &n);
    fprintf(out, "\n### %s (`%s`)\n\n", bw_config_kind_name(k),
            bw_config_kind_type(k));
    fprintf(out,
            "| field | type | default | range | help |\n"
            "|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
      char range[160];
      bw_config_field_range(&f[i], range, sizeof range);
      fprintf(out, "| `%s` | %s | `%s` | ", f[i].name,
              bw_config_type_name(f[i].type), f[i].default_value);
      cell(out, range);
      fputs(" | ", out);
      cell(out, f[i].help);
      fputs(" |\n", out);
    }
  }
  fputc('\n', out);
  fclose(out);
  return text;
}

static char *slurp(const char *path) {
  FILE *fp = fopen(path, "rb");
  char *buf;
  long n;
  if (fp == NULL) return NULL;
  fseek(fp, 0, SEEK_END);
  n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  buf = calloc(1, (size_t)n + 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(fp);
  return buf;
}

static void test_docs_match_tables(void **state) {
  const char *path = BW_SOURCE_DIR "/docs/configuration.md";
  char *doc = slurp(path), *gen = render_fields(), *b, *e;
  (void)state;
  assert_non_null(doc);
  b = strstr(doc, DOCS_BEGIN);
  e = b != NULL ? strstr(b, DOCS_END) : NULL;
  if (b == NULL || e == NULL) fail_msg("%s: markers not found", path);
  b += strlen(DOCS_BEGIN);
  if ((size_t)(e - b) != strlen(gen) || memcmp(b, gen, strlen(gen)) != 0) {
    const char *update = getenv("BW_UPDATE_DOCS");
    if (update != NULL && strcmp(update, "1") == 0) {
      FILE *fp = fopen(path, "wb");
      assert_non_null(fp);
      fwrite(doc, 1, (size_t)(b - doc), fp);
      fputs(gen, fp);
      fputs(e, fp);
      fclose(fp);
      print_message("rewrote %s\n", path);
    } else {
      fail_msg(
          "%s is not what bw_config_fields says: rerun this test "
          "with BW_UPDATE_DOCS=1 and review the diff",
          path);
    }
  }
  free(gen);
  free(doc);
}

/* The preset's table holds every field of its parts (bar their names and
 * pointers), prefixed, at the part's place: set by name, it lands in the
 * part's struct; read back, it is the part's value. */
static void test_http_has_every_part_field(void **state) {
  static const struct {
    const char *part;
    bw_config_kind_t kind;
    size_t at;
  } parts[] = {
      {"limiter", BW_CONFIG_LIMITER,
       offsetof(bw_http_standard_config_t, limiter)},
      {"breaker", BW_CONFIG_BREAKER,
       offsetof(bw_http_standard_config_t, breaker)},
      {"retry", BW_CONFIG_RETRY, offsetof(bw_http_standard_config_t, retry)},
      {"budget", BW_CONFIG_BUDGET, offsetof(bw_http_standard_config_t, budget)},
  };
  (void)state;
  for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
    size_t n;
    const bw_config_field_t *f = bw_config_fields(parts[p].kind, &n);
    for (size_t i = 0; i < n; i++) {
      char name[96];
      const bw_config_field_t *h;
      snprintf(name, sizeof name, "%s.%s", parts[p].part, f[i].name);
      h = bw_config_field(BW_CONFIG_HTTP, name);
      if (f[i].type == BW_CONFIG_T_POINTER || strcmp(f[i].name, "name") == 0) {
        assert_null(h);
        continue;
      }
      if (h == NULL) fail_msg("http has no field %s", name);
      assert_int_equal(h->type, f[i].type);
      assert_int_equal(h->offset, f[i].offset + parts[p].at);
      assert_true(h->min == f[i].min && h->max == f[i].max);
      assert_int_equal(h->flags, f[i].flags);
    }
  }
}

/* The preset by name: its own fields and its parts', validated as
 * bw_http_standard_new will, errors naming the part's field. */
static void test_http_and_hedge_by_name(void **state) {
  bw_http_standard_config_t c;
  bw_hedge_config_t h;
  bw_error_t err;
  char buf[64];
  (void)state;
  bw_http_standard_config_init(&c);
  assert_status(
      bw_config_set(BW_CONFIG_HTTP, &c, "breaker.failure_ratio", "20%", &err),
      BW_OK);
  assert_status(
      bw_config_set(BW_CONFIG_HTTP, &c, "retry.max_attempts", "2", &err),
      BW_OK);
  assert_status(
      bw_config_set(BW_CONFIG_HTTP, &c, "limiter.max_limit", "64", &err),
      BW_OK);
  assert_status(bw_config_set(BW_CONFIG_HTTP, &c, "deadline_ms", "5s", &err),
                BW_OK);
  assert_status(bw_config_set(BW_CONFIG_HTTP, &c, "use_budget", "off", &err),
                BW_OK);
  assert_true(c.breaker.failure_ratio == 0.2);
  assert_int_equal(c.retry.max_attempts, 2);
  assert_int_equal(c.limiter.max_limit, 64);
  assert_i64_eq(c.deadline_ms, 5000);
  assert_false(c.use_budget);
  assert_status(bw_config_validate(BW_CONFIG_HTTP, &c, &err), BW_OK);
  assert_status(bw_config_get(BW_CONFIG_HTTP, &c, "breaker.failure_ratio", buf,
                              sizeof buf, &err),
                BW_OK);
  assert_string_equal(buf, "0.2");
  /* A part's own range, named with the part. */
  bwt_prefill_error(&err);
  assert_status(
      bw_config_set(BW_CONFIG_HTTP, &c, "breaker.failure_ratio", "1.5", &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "breaker.failure_ratio");
  assert_contains(err.message, "breaker.failure_ratio must be a ratio");
  /* A rule between a part's fields, at validate, named with the part. */
  assert_status(
      bw_config_set(BW_CONFIG_HTTP, &c, "limiter.initial_limit", "100", &err),
      BW_OK);
  assert_status(bw_config_validate(BW_CONFIG_HTTP, &c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "limiter.initial_limit");
  /* The parts' names and pointers are not fields of the preset. */
  assert_status(bw_config_set(BW_CONFIG_HTTP, &c, "breaker.name", "x", &err),
                BW_E_NOTFOUND);
  assert_status(bw_config_set(BW_CONFIG_HTTP, &c, "clock", "x", &err),
                BW_E_INVAL);
  /* From the environment, by the one naming rule. */
  bw_http_standard_config_init(&c);
  setenv("APP_PAYMENTS_HTTP_BREAKER_FAILURE_RATIO", "0.25", 1);
  setenv("APP_PAYMENTS_HTTP_ATTEMPT_TIMEOUT_MS", "2s", 1);
  assert_status(bw_config_from_env("APP", BW_CONFIG_HTTP, "payments", &c, &err),
                BW_OK);
  assert_true(c.breaker.failure_ratio == 0.25);
  assert_i64_eq(c.attempt_timeout_ms, 2000);
  setenv("APP_PAYMENTS_HTTP_BREAKER_FAILURE_RATION", "0.25", 1);
  assert_status(bw_config_from_env("APP", BW_CONFIG_HTTP, "payments", &c, &err),
                BW_E_NOTFOUND);
  assert_contains(err.message, "APP_PAYMENTS_HTTP_BREAKER_FAILURE_RATION");
  unsetenv("APP_PAYMENTS_HTTP_BREAKER_FAILURE_RATION");
  unsetenv("APP_PAYMENTS_HTTP_BREAKER_FAILURE_RATIO");
  unsetenv("APP_PAYMENTS_HTTP_ATTEMPT_TIMEOUT_MS");
  /* Hedging. */
  bw_hedge_config_init(&h);
  assert_status(bw_config_set(BW_CONFIG_HEDGE, &h, "delay", "fixed", &err),
                BW_OK);
  assert_status(bw_config_set(BW_CONFIG_HEDGE, &h, "delay_ms", "150ms", &err),
                BW_OK);
  assert_status(bw_config_set(BW_CONFIG_HEDGE, &h, "max_hedges", "2", &err),
                BW_OK);
  assert_int_equal(h.delay, BW_HEDGE_FIXED);
  assert_i64_eq(h.delay_ms, 150);
  assert_int_equal(h.max_hedges, 2);
  assert_status(bw_config_validate(BW_CONFIG_HEDGE, &h, &err), BW_OK);
  assert_status(bw_config_set(BW_CONFIG_HEDGE, &h, "max_hedges", "5", &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "max_hedges");
  assert_status(bw_config_set(BW_CONFIG_HEDGE, &h, "quantile", "1", &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "quantile");
  assert_status(bw_config_set(BW_CONFIG_HEDGE, &h, "budget", "x", &err),
                BW_E_INVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes_fit),
      cmocka_unit_test(test_defaults_match_init),
      cmocka_unit_test(test_init_validates),
      cmocka_unit_test(test_enum_names_match_core),
      cmocka_unit_test(test_set_examples),
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_null_arguments),
      cmocka_unit_test(test_kind_parse),
      cmocka_unit_test(test_get_set_round_trip),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_cross_field_rules_at_validate),
      cmocka_unit_test(test_parsers),
      cmocka_unit_test(test_env_names),
      cmocka_unit_test(test_env_breaker),
      cmocka_unit_test(test_env_errors_leave_cfg_alone),
      cmocka_unit_test(test_env_recovery_queue),
      cmocka_unit_test(test_docs_match_tables),
      cmocka_unit_test(test_http_has_every_part_field),
      cmocka_unit_test(test_http_and_hedge_by_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Specification tests: the GCRA rate limiter.
 *
 * Emission interval T = 1e9 / rate ns, tolerance (burst - 1) * T. Every test
 * runs on a manual clock at BWT_T0_NS and asserts exact values: which call
 * is admitted, how long a refused one must wait (rounded up to the ms), and
 * what a pacer's reservations wait (in ns). */
#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define SEC BW_NS_PER_S

typedef struct env_s {
  bw_clock_t *clock;
  bw_ratelimit_t *rl; /* freed by teardown */
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
  bw_ratelimit_free(e->rl);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static bw_ratelimit_t *make(env_t *e, double rate, uint32_t burst,
                            const char *file, int line) {
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  bw_ratelimit_config_init(&cfg);
  cfg.rate_per_sec = rate;
  cfg.burst = burst;
  cfg.clock = e->clock;
  bw_ratelimit_free(e->rl);
  e->rl = bw_ratelimit_new(&cfg, &err);
  if (e->rl == NULL) {
    print_error("bw_ratelimit_new failed: [%s] %s\n", err.field, err.message);
    _fail(file, line);
  }
  return e->rl;
}
#define MAKE(e, rate, burst) make((e), (rate), (burst), __FILE__, __LINE__)

static void advance(env_t *e, int64_t ns) {
  bw_clock_manual_advance(e->clock, ns);
}

/* Asserts an admission. */
static void admit_(bw_ratelimit_t *rl, const char *file, int line) {
  int64_t w = -7;
  int rc = bw_ratelimit_try_acquire(rl, &w);
  if (rc != BW_OK || w != 0) {
    print_error("try_acquire: %s, wait %" PRId64 " ms; expected OK, 0\n",
                bw_err_name(rc), w);
    _fail(file, line);
  }
}
#define ADMIT(rl) admit_((rl), __FILE__, __LINE__)

/* Asserts a refusal with the given wait. */
static void refuse_(bw_ratelimit_t *rl, int64_t wait_ms, const char *file,
                    int line) {
  int64_t w = -7;
  int rc = bw_ratelimit_try_acquire(rl, &w);
  if (rc != BW_E_FULL || w != wait_ms) {
    print_error("try_acquire: %s, wait %" PRId64
                " ms; expected E_FULL, %" PRId64 " ms\n",
                bw_err_name(rc), w, wait_ms);
    _fail(file, line);
  }
}
#define REFUSE(rl, ms) refuse_((rl), (ms), __FILE__, __LINE__)

static bw_ratelimit_stats_t stats(const bw_ratelimit_t *rl) {
  bw_ratelimit_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_ratelimit_stats(rl, &s);
  return s;
}

/* ==== configuration ======================================================= */

static void config_init_fills_documented_defaults(void **state) {
  bw_ratelimit_config_t cfg;
  (void)state;
  memset(&cfg, 0x5A, sizeof(cfg));
  bw_ratelimit_config_init(&cfg);
  assert_string_equal(cfg.name, "ratelimit");
  assert_dbl_eq(cfg.rate_per_sec, 100.0, 0);
  assert_u64_eq(cfg.burst, 1);
  assert_null(cfg.clock);
  bw_ratelimit_config_init(NULL); /* harmless */
}

static void default_config_creates_a_limiter(void **state) {
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  bw_ratelimit_t *rl;
  bw_ratelimit_stats_t s;
  int64_t w;
  (void)state;
  bw_ratelimit_config_init(&cfg);
  assert_status(bw_ratelimit_config_validate(&cfg, &err), BW_OK);
  assert_status(err.code, BW_OK);
  rl = bw_ratelimit_new(&cfg, &err);
  assert_non_null(rl);
  assert_string_equal(bw_ratelimit_name(rl), "ratelimit");
  /* The real clock: a first call is admitted (a full burst of 1); nothing
   * about time is asserted beyond that. */
  assert_status(bw_ratelimit_try_acquire(rl, &w), BW_OK);
  assert_i64_eq(w, 0);
  s = stats(rl);
  assert_u64_eq(s.admitted, 1);
  assert_u64_eq(s.limited, 0);
  assert_u64_eq(s.reserved, 0);
  assert_u64_eq(s.reserved_waiting, 0);
  bw_ratelimit_free(rl);
}

typedef void (*mutate_fn)(bw_ratelimit_config_t *cfg);

typedef struct invalid_case_s {
  const char *what;
  mutate_fn mutate;
  const char *field;
} invalid_case_t;

static char long_name[202];

#define MUT(fn, body)                        \
  static void fn(bw_ratelimit_config_t *c) { \
    body;                                    \
  }

MUT(m_name_null, c->name = NULL)
MUT(m_name_empty, c->name = "")
MUT(m_name_too_long, c->name = long_name)
MUT(m_rate_0, c->rate_per_sec = 0.0)
MUT(m_rate_neg, c->rate_per_sec = -10.0)
MUT(m_rate_nan, c->rate_per_sec = NAN)
MUT(m_rate_inf, c->rate_per_sec = INFINITY)
MUT(m_rate_neg_inf, c->rate_per_sec = -INFINITY)
MUT(m_rate_above_1e9, c->rate_per_sec = 1.000001e9)
MUT(m_rate_below_1e6th, c->rate_per_sec = 9.99e-7)
MUT(m_burst_0, c->burst = 0)
static const bw_clock_t broken_clock = {NULL, NULL};
MUT(m_clock_without_now, c->clock = &broken_clock)
MUT(m_burst_refill_above_a_year, {
  c->rate_per_sec = 100;
  c->burst = UINT32_MAX; /* 4.3e7 s to refill */
})
MUT(m_burst_refill_above_a_year_slow, {
  c->rate_per_sec = 1e-6;
  c->burst = 32; /* 3.2e7 s > 3.1536e7 s */
})

static const invalid_case_t invalid_cases[] = {
    {"name NULL", m_name_null, "name"},
    {"name \"\"", m_name_empty, "name"},
    {"name of 201 bytes", m_name_too_long, "name"},
    {"rate_per_sec 0", m_rate_0, "rate_per_sec"},
    {"rate_per_sec < 0", m_rate_neg, "rate_per_sec"},
    {"rate_per_sec NaN", m_rate_nan, "rate_per_sec"},
    {"rate_per_sec inf", m_rate_inf, "rate_per_sec"},
    {"rate_per_sec -inf", m_rate_neg_inf, "rate_per_sec"},
    {"rate_per_sec > 1e9", m_rate_above_1e9, "rate_per_sec"},
    {"rate_per_sec < 1e-6", m_rate_below_1e6th, "rate_per_sec"},
    {"burst 0", m_burst_0, "burst"},
    {"clock without now_ns", m_clock_without_now, "clock"},
    {"burst of 2^32-1 at 100/s", m_burst_refill_above_a_year, "burst"},
    {"burst 32 at 1e-6/s", m_burst_refill_above_a_year_slow, "burst"},
};

static int check_invalid_case(const invalid_case_t *tc) {
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  bw_ratelimit_t *rl;
  int ok = 1, rc;
  bw_ratelimit_config_init(&cfg);
  tc->mutate(&cfg);
  bwt_prefill_error(&err);
  rc = bw_ratelimit_config_validate(&cfg, &err);
  if (rc != BW_E_INVAL || !bwt_error_names(&err, tc->field)) {
    print_error(
        "[%s] validate: %s {%s, \"%s\", \"%s\"}, expected E_INVAL "
        "naming \"%s\"\n",
        tc->what, bw_err_name(rc), bw_err_name(err.code), err.field,
        err.message, tc->field);
    ok = 0;
  }
  bwt_prefill_error(&err);
  rl = bw_ratelimit_new(&cfg, &err);
  if (rl != NULL || !bwt_error_names(&err, tc->field)) {
    print_error(
        "[%s] new: %s {%s, \"%s\", \"%s\"}, expected NULL naming "
        "\"%s\"\n",
        tc->what, rl ? "created" : "NULL", bw_err_name(err.code), err.field,
        err.message, tc->field);
    bw_ratelimit_free(rl);
    ok = 0;
  }
  rl = bw_ratelimit_new(&cfg, NULL);
  if (rl != NULL) {
    print_error("[%s] new(cfg, NULL) accepted it\n", tc->what);
    bw_ratelimit_free(rl);
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

static void messages_state_the_rule_and_the_value(void **state) {
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  (void)state;
  bw_ratelimit_config_init(&cfg);
  cfg.rate_per_sec = INFINITY;
  assert_status(bw_ratelimit_config_validate(&cfg, &err), BW_E_INVAL);
  assert_contains(err.message, "[1e-06, 1e9]");
  assert_contains(err.message, "got inf");
  cfg.rate_per_sec = 100;
  cfg.burst = UINT32_MAX;
  assert_status(bw_ratelimit_config_validate(&cfg, &err), BW_E_INVAL);
  assert_contains(err.message, "at most a year");
  assert_contains(err.message, "4294967295");
}

static void null_config_is_refused(void **state) {
  bw_error_t err;
  (void)state;
  bwt_prefill_error(&err);
  assert_null(bw_ratelimit_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_null(bw_ratelimit_new(NULL, NULL));
  assert_status(bw_ratelimit_config_validate(NULL, NULL), BW_E_INVAL);
}

static void accept(const bw_ratelimit_config_t *cfg, const char *what) {
  bw_error_t err;
  bw_ratelimit_t *rl;
  bwt_prefill_error(&err);
  if (bw_ratelimit_config_validate(cfg, &err) != BW_OK) {
    print_error("[%s] validate refused: [%s] %s\n", what, err.field,
                err.message);
    fail();
  }
  rl = bw_ratelimit_new(cfg, &err);
  if (rl == NULL) {
    print_error("[%s] new refused: [%s] %s\n", what, err.field, err.message);
    fail();
  }
  bw_ratelimit_free(rl);
}

static void boundary_values_are_accepted(void **state) {
  bw_ratelimit_config_t cfg;
  (void)state;
  bw_ratelimit_config_init(&cfg);
  cfg.rate_per_sec = 1e9;
  accept(&cfg, "rate 1e9");
  cfg.burst = UINT32_MAX; /* 4.3 s to refill */
  accept(&cfg, "rate 1e9, burst 2^32-1");
  cfg.rate_per_sec = 1e-6;
  cfg.burst = 31; /* 3.1e7 s: just under a year */
  accept(&cfg, "rate 1e-6, burst 31");
  bw_ratelimit_config_init(&cfg);
  memset(long_name, 'n', sizeof(long_name));
  long_name[200] = '\0';
  cfg.name = long_name;
  accept(&cfg, "name of 200 bytes");
}

static void name_is_copied_at_creation(void **state) {
  bw_ratelimit_config_t cfg;
  char name[32];
  bw_ratelimit_t *rl;
  (void)state;
  snprintf(name, sizeof(name), "%s", "partner_api");
  bw_ratelimit_config_init(&cfg);
  cfg.name = name;
  rl = bw_ratelimit_new(&cfg, NULL);
  assert_non_null(rl);
  snprintf(name, sizeof(name), "%s", "overwritten");
  assert_string_equal(bw_ratelimit_name(rl), "partner_api");
  bw_ratelimit_free(rl);
}

/* ==== try_acquire ========================================================= */

/* The sequence: 10/s, burst 3. Three at once, the fourth waits
 * 100 ms; after 100 ms exactly one more; halfway to the next slot the wait
 * is halved. */
static void ten_per_second_burst_3_admits_three_then_one_per_100_ms(
    void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 3);
  bw_ratelimit_stats_t s;
  ADMIT(rl);
  ADMIT(rl);
  ADMIT(rl);
  REFUSE(rl, 100);
  advance(e, 100 * MS);
  ADMIT(rl);
  REFUSE(rl, 100);
  advance(e, 50 * MS);
  REFUSE(rl, 50);
  advance(e, 50 * MS);
  ADMIT(rl);
  REFUSE(rl, 100);
  s = stats(rl);
  assert_u64_eq(s.admitted, 5);
  assert_u64_eq(s.limited, 4);
  assert_u64_eq(s.reserved, 0);
  assert_u64_eq(s.reserved_waiting, 0);
}

/* A refusal moves nothing: a thousand of them leave the wait as it was. */
static void refusals_consume_nothing(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 1);
  ADMIT(rl);
  for (int i = 0; i < 1000; i++)
    REFUSE(rl, 100);
  advance(e, 100 * MS);
  ADMIT(rl);
  assert_u64_eq(stats(rl).limited, 1000);
  assert_u64_eq(stats(rl).admitted, 2);
}

/* The wait is rounded up: 1 ns short of the slot is a 1 ms wait, never 0,
 * and 99.5 ms is 100 ms. */
static void waits_are_rounded_up_to_the_millisecond(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 1);
  int64_t w = -7;
  ADMIT(rl);
  advance(e, 500 * 1000); /* 0.5 ms */
  REFUSE(rl, 100);
  advance(e, 100 * MS - 500 * 1000 - 1); /* 1 ns before the slot */
  REFUSE(rl, 1);
  advance(e, 1);
  ADMIT(rl);
  /* wait_ms may be NULL, either way. */
  assert_status(bw_ratelimit_try_acquire(rl, NULL), BW_E_FULL);
  advance(e, 100 * MS);
  assert_status(bw_ratelimit_try_acquire(rl, NULL), BW_OK);
  assert_status(bw_ratelimit_try_acquire(rl, &w), BW_E_FULL);
  assert_i64_eq(w, 100);
}

/* Idle time banks at most a burst: after an hour, 3 at once, then the
 * fourth waits a whole interval. */
static void a_long_idle_banks_no_more_than_the_burst(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 3);
  ADMIT(rl);
  advance(e, 3600 * SEC);
  ADMIT(rl);
  ADMIT(rl);
  ADMIT(rl);
  REFUSE(rl, 100);
}

/* The burst refills one interval at a time: 250 ms after using all 3,
 * two are back (the third is due 50 ms later). */
static void the_burst_refills_one_interval_at_a_time(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 3);
  ADMIT(rl);
  ADMIT(rl);
  ADMIT(rl);
  advance(e, 250 * MS);
  ADMIT(rl);
  ADMIT(rl);
  REFUSE(rl, 50);
  advance(e, 50 * MS);
  ADMIT(rl);
  REFUSE(rl, 100);
}

/* T = 1e9 / 3 ns is not whole: the second call of a 3/s limiter is due at
 * 333333333.33 ns, so it is refused at 333333333 ns (by a wait of a
 * fraction of a ns, reported as 1 ms) and admitted at 333333334 ns. */
static void a_fractional_interval_is_kept_below_the_nanosecond(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 3, 1);
  ADMIT(rl);
  advance(e, 333333333);
  REFUSE(rl, 1);
  advance(e, 1);
  ADMIT(rl);
  /* A pacer is told the wait rounded up to the ns: the slot after this one
   * is due in 333333333.3 ns, so it waits 333333334 ns, never less. */
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 333333334);
}

/* The fastest rate: one call per ns. */
static void one_per_nanosecond_at_1e9_per_second(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 1e9, 1);
  ADMIT(rl);
  REFUSE(rl, 1);
  advance(e, 1);
  ADMIT(rl);
  advance(e, 5);
  ADMIT(rl);
  REFUSE(rl, 1);
}

/* The slowest rate: one call per 1e6 s (11.6 days). */
static void one_per_million_seconds_at_1e_minus_6(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 1e-6, 1);
  ADMIT(rl);
  REFUSE(rl, INT64_C(1000000000));
  advance(e, INT64_C(1000000) * SEC - 1);
  REFUSE(rl, 1);
  advance(e, 1);
  ADMIT(rl);
}

/* A clock that goes back (a custom one; manual and monotonic clocks never
 * do) grants nothing extra: the schedule waits for it to catch up. */
static _Atomic int64_t g_custom_now;
static int64_t custom_now(const bw_clock_t *c) {
  (void)c;
  return atomic_load(&g_custom_now);
}

static void a_clock_that_goes_back_grants_nothing_extra(void **state) {
  bw_clock_t clock = {custom_now, NULL};
  bw_ratelimit_config_t cfg;
  bw_ratelimit_t *rl;
  (void)state;
  atomic_store(&g_custom_now, 1000 * SEC);
  bw_ratelimit_config_init(&cfg);
  cfg.rate_per_sec = 10;
  cfg.burst = 3;
  cfg.clock = &clock;
  rl = bw_ratelimit_new(&cfg, NULL);
  assert_non_null(rl);
  ADMIT(rl);
  ADMIT(rl);
  ADMIT(rl);
  atomic_store(&g_custom_now, 999 * SEC); /* a second back */
  REFUSE(rl, 1100);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 1100 * MS);
  atomic_store(&g_custom_now, 1000 * SEC + 100 * MS);
  REFUSE(rl, 100); /* the reservation took the 100 ms slot */
  atomic_store(&g_custom_now, 1000 * SEC + 200 * MS);
  ADMIT(rl);
  bw_ratelimit_free(rl);
}

/* ==== reserve (pacing) ==================================================== */

/* A pacer at 10/s without burst: reservations taken at once wait 0, 100,
 * 200, 300 ms — each takes the next slot. */
static void reservations_wait_for_successive_slots(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 1);
  bw_ratelimit_stats_t s;
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 100 * MS);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 200 * MS);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 300 * MS);
  s = stats(rl);
  assert_u64_eq(s.reserved, 4);
  assert_u64_eq(s.reserved_waiting, 3);
  assert_u64_eq(s.admitted, 0);
  /* The reserved slots are taken for try_acquire too. */
  REFUSE(rl, 400);
  advance(e, 399 * MS);
  REFUSE(rl, 1);
  advance(e, 1 * MS);
  ADMIT(rl);
}

static void reservations_use_the_burst_first(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 3);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 100 * MS);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 200 * MS);
  assert_u64_eq(stats(rl).reserved_waiting, 2);
  /* At 500 ms the schedule has caught up with the clock: the whole burst
   * is free again. */
  advance(e, 500 * MS);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 100 * MS);
}

/* A client that waits what it is told and reserves again keeps to the rate
 * exactly: one call per 100 ms, each after a wait of 100 ms. */
static void a_pacer_that_waits_as_told_keeps_the_rate(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 1);
  int64_t started = bw_clock_now(e->clock);
  assert_i64_eq(bw_ratelimit_reserve_ns(rl), 0);
  for (int i = 1; i <= 50; i++) {
    int64_t w = bw_ratelimit_reserve_ns(rl);
    assert_i64_eq(w, 100 * MS);
    advance(e, w);
  }
  assert_i64_eq(bw_clock_now(e->clock) - started, 5 * SEC);
  assert_u64_eq(stats(rl).reserved_waiting, 50);
}

/* Over 3,000,000 reservations at 3/s (1e6 s of schedule), successive waits
 * differ by T rounded to the ns either way, and the last is within the
 * documented 1/32 ns per slot of the exact 999999.999666... s. */
static void reservations_keep_a_fractional_rate_without_drift(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 3, 1);
  int64_t prev = bw_ratelimit_reserve_ns(rl), w = 0;
  const int n = 3000000;
  double exact, err;
  assert_i64_eq(prev, 0);
  for (int i = 1; i < n; i++) {
    w = bw_ratelimit_reserve_ns(rl);
    if (w - prev != 333333333 && w - prev != 333333334) {
      print_error("reservation %d: step %" PRId64 " ns\n", i, w - prev);
      fail();
    }
    prev = w;
  }
  exact = (double)(n - 1) * 1e9 / 3.0;
  err = fabs((double)w - exact);
  if (err > n / 32.0 + 1) {
    print_error("last wait %" PRId64 " ns is %.0f ns off %.0f\n", w, err,
                exact);
    fail();
  }
}

/* Same bound at a rate whose interval is under 2 ns: 6e8/s. */
static void a_high_fractional_rate_stays_within_the_documented_bound(
    void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 6e8, 1);
  const int n = 600000;
  int64_t w = 0;
  double exact;
  for (int i = 0; i < n; i++)
    w = bw_ratelimit_reserve_ns(rl);
  exact = (double)(n - 1) / 0.6;
  assert_true(fabs((double)w - exact) <= n / 32.0 + 1);
}

/* A pacer's backlog saturates (about 4.5 years ahead) instead of
 * overflowing: waits grow by T, then stay; nothing wraps around. */
static void a_huge_pacer_backlog_saturates(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 1e-6, 1); /* T = 1e15 ns */
  int64_t prev = -1, w = 0;
  int grew = 0;
  for (int i = 0; i < 200; i++) {
    w = bw_ratelimit_reserve_ns(rl);
    assert_true(w >= prev);
    if (w > prev) grew++;
    prev = w;
  }
  assert_true(w <= (INT64_C(1) << 57));
  assert_true(w > (INT64_C(1) << 57) - INT64_C(1000000000000000) * 2);
  /* 0, T, ..., 144 T: the slot after 144 T would end past 2^57 ns, so the
   * 145th and every later reservation share the wait of 144 T. */
  assert_int_equal(grew, 145);
  assert_i64_eq(w, 144 * INT64_C(1000000000000000));
  REFUSE(rl, (w + MS - 1) / MS);
  assert_u64_eq(stats(rl).reserved, 200);
}

/* ==== misuse and resources ================================================ */

static void a_null_limiter_is_refused(void **state) {
  bw_ratelimit_stats_t s;
  int64_t w = 42;
  (void)state;
  assert_status(bw_ratelimit_try_acquire(NULL, &w), BW_E_INVAL);
  assert_i64_eq(w, 0);
  assert_status(bw_ratelimit_try_acquire(NULL, NULL), BW_E_INVAL);
  assert_i64_eq(bw_ratelimit_reserve_ns(NULL), BW_E_INVAL);
  memset(&s, 0xA5, sizeof(s));
  bw_ratelimit_stats(NULL, &s);
  assert_u64_eq(s.admitted, 0);
  assert_u64_eq(s.reserved_waiting, 0);
  bw_ratelimit_stats(NULL, NULL);
  assert_string_equal(bw_ratelimit_name(NULL), "");
  bw_ratelimit_free(NULL);
}

static void the_verbs_allocate_nothing(void **state) {
  env_t *e = *state;
  bw_ratelimit_t *rl = MAKE(e, 10, 2);
  bw_ratelimit_stats_t s;
  long attempts;
  int64_t w;
  oom_fail_at(1, true);
  (void)bw_ratelimit_try_acquire(rl, &w);
  (void)bw_ratelimit_try_acquire(rl, &w);
  (void)bw_ratelimit_try_acquire(rl, &w);
  (void)bw_ratelimit_reserve_ns(rl);
  bw_ratelimit_stats(rl, &s);
  attempts = oom_attempts();
  oom_fail_at(0, false);
  assert_int_equal(attempts, 0);
  assert_u64_eq(s.admitted, 2);
  assert_u64_eq(s.limited, 1);
  assert_u64_eq(s.reserved, 1);
}

static int oom_scenario(void *ctx) {
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  bw_ratelimit_t *rl;
  (void)ctx;
  bw_ratelimit_config_init(&cfg);
  cfg.name = "oom";
  rl = bw_ratelimit_new(&cfg, &err);
  if (rl == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    assert_contains(err.message, "oom");
    return BW_E_NOMEM;
  }
  assert_status(bw_ratelimit_try_acquire(rl, NULL), BW_OK);
  bw_ratelimit_free(rl);
  return BW_OK;
}

static void creation_survives_every_allocation_failure(void **state) {
  long n;
  (void)state;
  n = oom_walk(oom_scenario, NULL, false);
  assert_int_equal(n, 3); /* the object and its name */
}

/* ==== refusal summaries ================================================== */

/* Refusals are summarised as rate_limited at most once a second, the one
 * that finds a summary due included, and the rest when the limiter is
 * freed; nothing is emitted when nothing was refused. */
static void refusals_are_summarised_at_most_once_a_second(void **state) {
  env_t *e = *state;
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_sink_t *sink;
  bw_ratelimit_config_t cfg;
  bw_error_t err;
  const bwt_event_t *ev;
  int i;
  assert_non_null(rec);
  sink = bw_sink_callback_new(bwt_record_cb, rec, &err);
  assert_non_null(sink);
  bw_ratelimit_config_init(&cfg);
  cfg.name = "api";
  cfg.rate_per_sec = 0.5; /* one call every 2 s */
  cfg.burst = 2;
  cfg.clock = e->clock;
  cfg.wall_clock = e->clock;
  cfg.sink = sink;
  e->rl = bw_ratelimit_new(&cfg, &err);
  assert_non_null(e->rl);

  ADMIT(e->rl);
  ADMIT(e->rl);
  for (i = 0; i < 4; i++)
    REFUSE(e->rl, 2000);
  advance(e, 1000 * MS - 1);
  REFUSE(e->rl, 1001);
  assert_int_equal(rec->count, 0);
  advance(e, 1);
  REFUSE(e->rl, 1000);
  assert_int_equal(rec->count, 1);
  ev = bwt_event_at(rec, 0);
  assert_int_equal(ev->type, BW_EV_RATE_LIMITED);
  assert_string_equal(ev->name, "api");
  assert_string_equal(ev->reason,
                      "6 calls refused over 0.5 a second (burst 2)");
  assert_int_equal(ev->field_count, 3);
  assert_field_uint(ev, 0, "count", 6);
  assert_string_equal(ev->fields[1].key, "rate_per_sec");
  assert_int_equal(ev->fields[1].type, BW_FIELD_DOUBLE);
  assert_true(ev->fields[1].d == 0.5);
  assert_field_uint(ev, 2, "burst", 2);
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 1000 * MS);
  assert_i64_eq(ev->wall_ns, BWT_T0_NS + 1000 * MS);

  advance(e, 999 * MS); /* 999 ms since the summary */
  REFUSE(e->rl, 1);
  assert_int_equal(rec->count, 1);
  advance(e, 1 * MS); /* admitted: no summary on an admission */
  ADMIT(e->rl);
  assert_int_equal(rec->count, 1);
  advance(e, 500 * MS);
  bw_ratelimit_free(e->rl); /* the one pending refusal, at the free */
  e->rl = NULL;
  assert_int_equal(rec->count, 2);
  ev = bwt_event_at(rec, 1);
  assert_field_uint(ev, 0, "count", 1);
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 2500 * MS);

  e->rl = bw_ratelimit_new(&cfg, &err); /* nothing refused: nothing sent */
  assert_non_null(e->rl);
  ADMIT(e->rl);
  bw_ratelimit_free(e->rl);
  e->rl = NULL;
  assert_int_equal(rec->count, 2);
  bw_sink_free(sink);
  free(rec);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value) for a NULL object, never a crash; the void functions and
 * the free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_ratelimit_stats_t s;
  bw_error_t err;
  int64_t wait_ms = 7;
  (void)state;
  bw_ratelimit_config_init(NULL);
  assert_status(bw_ratelimit_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_ratelimit_new(NULL, NULL));
  assert_null(bw_ratelimit_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_status(bw_ratelimit_try_acquire(NULL, &wait_ms), BW_E_INVAL);
  assert_i64_eq(wait_ms, 0);
  assert_status(bw_ratelimit_try_acquire(NULL, NULL), BW_E_INVAL);
  assert_i64_eq(bw_ratelimit_reserve_ns(NULL), BW_E_INVAL);
  memset(&s, 0xA5, sizeof s);
  bw_ratelimit_stats(NULL, &s);
  assert_u64_eq(s.admitted, 0);
  assert_u64_eq(s.limited, 0);
  bw_ratelimit_stats(NULL, NULL);
  assert_string_equal(bw_ratelimit_name(NULL), "");
  bw_ratelimit_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_init_fills_documented_defaults),
      cmocka_unit_test(default_config_creates_a_limiter),
      cmocka_unit_test(every_invalid_field_is_refused_naming_the_field),
      cmocka_unit_test(messages_state_the_rule_and_the_value),
      cmocka_unit_test(null_config_is_refused),
      cmocka_unit_test(boundary_values_are_accepted),
      cmocka_unit_test(name_is_copied_at_creation),
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(ten_per_second_burst_3_admits_three_then_one_per_100_ms),
      T(refusals_consume_nothing),
      T(waits_are_rounded_up_to_the_millisecond),
      T(a_long_idle_banks_no_more_than_the_burst),
      T(the_burst_refills_one_interval_at_a_time),
      T(a_fractional_interval_is_kept_below_the_nanosecond),
      T(one_per_nanosecond_at_1e9_per_second),
      T(one_per_million_seconds_at_1e_minus_6),
      T(reservations_wait_for_successive_slots),
      T(reservations_use_the_burst_first),
      T(a_pacer_that_waits_as_told_keeps_the_rate),
      T(reservations_keep_a_fractional_rate_without_drift),
      T(a_high_fractional_rate_stays_within_the_documented_bound),
      T(a_huge_pacer_backlog_saturates),
      T(the_verbs_allocate_nothing),
      T(refusals_are_summarised_at_most_once_a_second),
#undef T
      cmocka_unit_test(a_clock_that_goes_back_grants_nothing_extra),
      cmocka_unit_test(a_null_limiter_is_refused),
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(creation_survives_every_allocation_failure),
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

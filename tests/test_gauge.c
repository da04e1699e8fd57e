/* Specification tests: the pressure gauge (the backpressure article,
 * src/pressure-gauge.js).
 *
 * The article's transition table, d = degraded_at 0.6, c = critical_at 0.85,
 * h = hysteresis 0.1 (so the down thresholds are d - h = 0.5, c - h = 0.75):
 *   NORMAL:   p >= d -> (p >= c ? CRITICAL : DEGRADED)
 *   DEGRADED: p >= c -> CRITICAL;  p < d - h -> NORMAL
 *   CRITICAL: p < c - h -> (p >= d ? DEGRADED : NORMAL)
 * Up is inclusive (>=), down is strict (<). Every row is asserted around each
 * threshold, on a manual clock. */
#include "bw_test.h"
#include "breakwater/gauge.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define N BW_REGIME_NORMAL
#define D BW_REGIME_DEGRADED
#define C BW_REGIME_CRITICAL

typedef struct change_s {
  bw_regime_t from, to;
  double pressure;
  int64_t now_ns;
  char name[32];
} change_t;

typedef struct genv_s {
  bw_clock_t *clock;
  bw_gauge_t *g;
  size_t nchanges;
  change_t changes[64];
} genv_t;

static int setup(void **state) {
  genv_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  if (e->clock == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  genv_t *e = *state;
  bw_gauge_free(e->g);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static void on_change(const char *name, bw_regime_t from, bw_regime_t to,
                      double p, int64_t now, void *ud) {
  genv_t *e = ud;
  if (e->nchanges < 64) {
    change_t *c = &e->changes[e->nchanges];
    c->from = from;
    c->to = to;
    c->pressure = p;
    c->now_ns = now;
    snprintf(c->name, sizeof(c->name), "%s", name);
    /* Reading the gauge from the callback is allowed. */
    assert_int_equal(bw_gauge_regime(e->g), to);
  }
  e->nchanges++;
}

static void config(genv_t *e, bw_gauge_config_t *cfg) {
  bw_gauge_config_init(cfg);
  cfg->name = "ingest";
  cfg->clock = e->clock;
  cfg->on_change = on_change;
  cfg->userdata = e;
}

static bw_gauge_t *make_cfg(genv_t *e, const bw_gauge_config_t *cfg) {
  bw_error_t err;
  bw_gauge_free(e->g);
  e->g = bw_gauge_new(cfg, &err);
  if (e->g == NULL) fail_msg("bw_gauge_new: %s", err.message);
  e->nchanges = 0;
  return e->g;
}

static bw_gauge_t *make(genv_t *e) {
  bw_gauge_config_t cfg;
  config(e, &cfg);
  return make_cfg(e, &cfg);
}

static bw_gauge_stats_t stats(const bw_gauge_t *g) {
  bw_gauge_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_gauge_stats(g, &s);
  return s;
}

/* ==== configuration ====================================================== */

static void config_init_fills_the_seed_defaults(void **state) {
  bw_gauge_config_t cfg;
  (void)state;
  memset(&cfg, 0x5A, sizeof(cfg));
  bw_gauge_config_init(&cfg);
  assert_string_equal(cfg.name, "gauge");
  assert_dbl_eq(cfg.degraded_at, 0.6, 0);
  assert_dbl_eq(cfg.critical_at, 0.85, 0);
  assert_dbl_eq(cfg.hysteresis, 0.1, 0);
  assert_u64_eq(cfg.ceiling[N], BW_GAUGE_ADMIT_ALL);
  assert_u64_eq(cfg.ceiling[D], 5);
  assert_u64_eq(cfg.ceiling[C], 1);
  assert_null(cfg.clock);
  assert_null(cfg.on_change);
  assert_null(cfg.userdata);
}

static void expect_refused(const bw_gauge_config_t *cfg, const char *field,
                           const char *message) {
  bw_error_t err;
  memset(&err, 0, sizeof(err));
  assert_null(bw_gauge_new(cfg, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, field);
  assert_string_equal(err.message, message);
  assert_status(bw_gauge_config_validate(cfg, NULL), BW_E_INVAL);
}

static void bad_configuration_is_refused_naming_the_field(void **state) {
  genv_t *e = *state;
  bw_gauge_config_t cfg;
  bw_error_t err;

  config(e, &cfg);
  cfg.degraded_at = 0.85; /* the article's own check */
  expect_refused(&cfg, "degraded_at",
                 "degraded_at must be < critical_at (got 0.85 >= 0.85)");
  cfg.degraded_at = 0.9;
  expect_refused(&cfg, "degraded_at",
                 "degraded_at must be < critical_at (got 0.9 >= 0.85)");
  cfg.degraded_at = 0;
  expect_refused(&cfg, "degraded_at", "degraded_at must be in (0, 1] (got 0)");
  cfg.degraded_at = NAN;
  expect_refused(&cfg, "degraded_at",
                 "degraded_at must be in (0, 1] (got nan)");
  cfg.degraded_at = 0.6;
  cfg.critical_at = 1.01;
  expect_refused(&cfg, "critical_at",
                 "critical_at must be in (0, 1] (got 1.01)");
  cfg.critical_at = -0.5;
  expect_refused(&cfg, "critical_at",
                 "critical_at must be in (0, 1] (got -0.5)");
  cfg.critical_at = 0.85;
  cfg.hysteresis = -0.01;
  expect_refused(&cfg, "hysteresis",
                 "hysteresis must be in [0, 1] (got -0.01)");
  cfg.hysteresis = 1.5;
  expect_refused(&cfg, "hysteresis", "hysteresis must be in [0, 1] (got 1.5)");
  cfg.hysteresis = NAN;
  expect_refused(&cfg, "hysteresis", "hysteresis must be in [0, 1] (got nan)");
  cfg.hysteresis = 0.6; /* = degraded_at: normal would be unreachable */
  expect_refused(&cfg, "hysteresis",
                 "hysteresis must be < degraded_at (0.6), or the gauge could "
                 "never return to normal (got 0.6)");
  cfg.hysteresis = 0.1;
  cfg.ceiling[D] = 10;
  cfg.ceiling[N] = 9;
  expect_refused(&cfg, "ceiling",
                 "ceiling[degraded] must be <= ceiling[normal] (got 10 > 9): "
                 "a higher regime may not admit more");
  cfg.ceiling[N] = 10;
  cfg.ceiling[C] = 11;
  expect_refused(&cfg, "ceiling",
                 "ceiling[critical] must be <= ceiling[degraded] (got 11 > "
                 "10): a higher regime may not admit more");
  cfg.ceiling[C] = 10;
  cfg.name = "";
  expect_refused(&cfg, "name", "name must not be empty");
  assert_null(bw_gauge_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);

  /* Edges accepted: critical_at 1, hysteresis 0 and just below
   * degraded_at, equal ceilings. (Hysteresis 1 was accepted once; it made
   * normal unreachable, so it is refused now.) */
  cfg.name = "edges";
  cfg.critical_at = 1.0;
  cfg.hysteresis = 0.0;
  assert_status(bw_gauge_config_validate(&cfg, &err), BW_OK);
  cfg.hysteresis = 0.59;
  assert_status(bw_gauge_config_validate(&cfg, &err), BW_OK);
  cfg.hysteresis = 1.0;
  assert_status(bw_gauge_config_validate(&cfg, &err), BW_E_INVAL);
  cfg.hysteresis = 0.59;
  assert_string_equal(bw_gauge_name(make_cfg(e, &cfg)), "edges");
}

static void regime_names(void **state) {
  (void)state;
  assert_string_equal(bw_regime_name(N), "normal");
  assert_string_equal(bw_regime_name(D), "degraded");
  assert_string_equal(bw_regime_name(C), "critical");
  assert_string_equal(bw_regime_name((bw_regime_t)3), "unknown");
}

/* ==== the transition table =============================================== */

typedef struct row_s {
  bw_regime_t from;
  double p;
  bw_regime_t to;
} row_t;

/* Puts a fresh gauge in `r` by the article's own moves. */
static void reach(genv_t *e, bw_regime_t r) {
  make(e);
  if (r == D) assert_int_equal(bw_gauge_update(e->g, 0.7), D);
  if (r == C) assert_int_equal(bw_gauge_update(e->g, 0.9), C);
  assert_int_equal(bw_gauge_regime(e->g), r);
  e->nchanges = 0;
}

static void every_row_of_the_seed_table_around_each_threshold(void **state) {
  genv_t *e = *state;
  const double eps = 1e-9;
  const double dd = 0.6 - 0.1, cd = 0.85 - 0.1; /* as the gauge computes */
  const row_t rows[] = {
      /* NORMAL: up at d (inclusive), straight to CRITICAL at c. */
      {N, 0.0, N},
      {N, 0.6 - eps, N},
      {N, 0.6, D},
      {N, 0.85 - eps, D},
      {N, 0.85, C},
      {N, 1.0, C},
      {N, 1.7, C}, /* above 1 is accepted */
      /* DEGRADED: up at c; down only below d - h (strict). */
      {D, 0.85, C},
      {D, 0.85 - eps, D},
      {D, 0.6, D},
      {D, 0.6 - eps, D},
      {D, dd, D},
      {D, dd - eps, N},
      {D, 0.0, N},
      /* CRITICAL: down only below c - h; lands by the plain thresholds. */
      {C, 1.0, C},
      {C, 0.85 - eps, C},
      {C, cd, C},
      {C, cd - eps, D},
      {C, 0.6, D},
      {C, 0.6 - eps, N}, /* straight to NORMAL below d, not d - h */
      {C, dd, N},
      {C, 0.0, N},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    int got;
    reach(e, rows[i].from);
    got = bw_gauge_update(e->g, rows[i].p);
    if (got != (int)rows[i].to)
      fail_msg("row %zu: %s at %.12g -> %s, expected %s", i,
               bw_regime_name(rows[i].from), rows[i].p,
               bw_regime_name((bw_regime_t)got), bw_regime_name(rows[i].to));
    assert_int_equal(bw_gauge_regime(e->g), rows[i].to);
    assert_u64_eq(e->nchanges, rows[i].from != rows[i].to);
  }
}

static void no_flapping_around_degraded_at(void **state) {
  genv_t *e = *state;
  bw_gauge_t *g = make(e);
  bw_gauge_stats_t s;
  /* 0.6 +- 0.05 for a thousand readings: one change, N -> D, and then the
   * regime holds (0.55 is above d - h). */
  for (int i = 0; i < 1000; i++)
    bw_gauge_update(g, i % 2 ? 0.55 : 0.65);
  assert_int_equal(bw_gauge_regime(g), D);
  assert_u64_eq(e->nchanges, 1);
  /* And 0.6 +- 1e-12 the same. */
  reach(e, N);
  for (int i = 0; i < 1000; i++)
    bw_gauge_update(e->g, i % 2 ? 0.6 - 1e-12 : 0.6 + 1e-12);
  assert_u64_eq(e->nchanges, 1);
  s = stats(e->g);
  assert_u64_eq(s.transitions, 1);
  assert_u64_eq(s.updates, 1000);
  assert_dbl_eq(s.pressure, 0.6 - 1e-12, 0);
}

static void no_flapping_around_critical_at(void **state) {
  genv_t *e = *state;
  reach(e, D);
  for (int i = 0; i < 1000; i++)
    bw_gauge_update(e->g, i % 2 ? 0.8 : 0.9);
  assert_int_equal(bw_gauge_regime(e->g), C);
  assert_u64_eq(e->nchanges, 1);
}

static void without_hysteresis_the_regime_follows_every_crossing(void **state) {
  genv_t *e = *state;
  bw_gauge_config_t cfg;
  config(e, &cfg);
  cfg.hysteresis = 0;
  make_cfg(e, &cfg);
  /* What the margin prevents: each crossing is a change. */
  for (int i = 0; i < 10; i++)
    bw_gauge_update(e->g, i % 2 ? 0.59 : 0.6);
  assert_u64_eq(e->nchanges, 10);
  assert_int_equal(bw_gauge_regime(e->g), N);
}

static void a_full_cycle_reports_each_change_in_order(void **state) {
  genv_t *e = *state;
  bw_gauge_t *g = make(e);
  const double ps[] = {0.3, 0.6, 0.7, 0.9, 0.8, 0.7, 0.52, 0.45, 0.95, 0.2};
  const bw_regime_t want[][2] = {{N, D}, {D, C}, {C, D},
                                 {D, N}, {N, C}, {C, N}};
  const double at[] = {0.6, 0.9, 0.7, 0.45, 0.95, 0.2};
  for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
    bw_clock_manual_advance(e->clock, 10 * MS);
    bw_gauge_update(g, ps[i]);
  }
  assert_u64_eq(e->nchanges, 6);
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(e->changes[i].from, want[i][0]);
    assert_int_equal(e->changes[i].to, want[i][1]);
    assert_dbl_eq(e->changes[i].pressure, at[i], 0);
    assert_string_equal(e->changes[i].name, "ingest");
  }
  /* Readings 2, 4, 6, 8, 9, 10 changed the regime, 10 ms apart. */
  assert_i64_eq(e->changes[0].now_ns, BWT_T0_NS + 20 * MS);
  assert_i64_eq(e->changes[1].now_ns, BWT_T0_NS + 40 * MS);
  assert_i64_eq(e->changes[2].now_ns, BWT_T0_NS + 60 * MS);
  assert_i64_eq(e->changes[3].now_ns, BWT_T0_NS + 80 * MS);
  assert_i64_eq(e->changes[4].now_ns, BWT_T0_NS + 90 * MS);
  assert_i64_eq(e->changes[5].now_ns, BWT_T0_NS + 100 * MS);
}

static void bad_readings_are_refused_and_change_nothing(void **state) {
  genv_t *e = *state;
  bw_gauge_stats_t s;
  reach(e, D);
  assert_status(bw_gauge_update(e->g, NAN), BW_E_INVAL);
  assert_status(bw_gauge_update(e->g, INFINITY), BW_E_INVAL);
  assert_status(bw_gauge_update(e->g, -0.01), BW_E_INVAL);
  assert_status(bw_gauge_update(NULL, 0.5), BW_E_INVAL);
  s = stats(e->g);
  assert_int_equal(s.regime, D);
  assert_u64_eq(s.updates, 1);
  assert_dbl_eq(s.pressure, 0.7, 0);
}

/* ==== admission ceilings ================================================= */

static void each_regime_admits_up_to_its_ceiling(void **state) {
  genv_t *e = *state;
  bw_gauge_t *g = make(e);
  /* NORMAL: everything (the article's +Infinity). */
  assert_u64_eq(bw_gauge_ceiling(g), BW_GAUGE_ADMIT_ALL);
  assert_true(bw_gauge_admits(g, 0));
  assert_true(bw_gauge_admits(g, 1000));
  assert_true(bw_gauge_admits(g, UINT32_MAX));
  /* DEGRADED: priorities 0..5. */
  bw_gauge_update(g, 0.6);
  assert_u64_eq(bw_gauge_ceiling(g), 5);
  assert_true(bw_gauge_admits(g, 5));
  assert_false(bw_gauge_admits(g, 6));
  /* CRITICAL: only 0 and 1. */
  bw_gauge_update(g, 0.85);
  assert_u64_eq(bw_gauge_ceiling(g), 1);
  assert_true(bw_gauge_admits(g, 0));
  assert_true(bw_gauge_admits(g, 1));
  assert_false(bw_gauge_admits(g, 2));
  assert_u64_eq(stats(g).ceiling, 1);
}

static void ceilings_are_configurable(void **state) {
  genv_t *e = *state;
  bw_gauge_config_t cfg;
  config(e, &cfg);
  cfg.ceiling[N] = 9;
  cfg.ceiling[D] = 3;
  cfg.ceiling[C] = 0;
  make_cfg(e, &cfg);
  assert_false(bw_gauge_admits(e->g, 10));
  assert_true(bw_gauge_admits(e->g, 9));
  bw_gauge_update(e->g, 0.7);
  assert_false(bw_gauge_admits(e->g, 4));
  assert_true(bw_gauge_admits(e->g, 3));
  bw_gauge_update(e->g, 0.9);
  assert_false(bw_gauge_admits(e->g, 1));
  assert_true(bw_gauge_admits(e->g, 0));
}

/* ==== time in regime ===================================================== */

static void time_in_each_regime_is_measured_on_the_clock(void **state) {
  genv_t *e = *state;
  bw_gauge_t *g = make(e);
  bw_gauge_stats_t s;
  bw_clock_manual_advance(e->clock, 1000 * MS); /* NORMAL 1000 ms */
  bw_gauge_update(g, 0.7);
  bw_clock_manual_advance(e->clock, 250 * MS); /* DEGRADED 250 ms */
  bw_gauge_update(g, 0.65);                    /* no change */
  bw_clock_manual_advance(e->clock, 250 * MS); /* DEGRADED 500 ms */
  bw_gauge_update(g, 0.9);
  bw_clock_manual_advance(e->clock, 3 * MS); /* CRITICAL 3 ms so far */
  s = stats(g);
  assert_int_equal(s.regime, C);
  assert_i64_eq(s.time_in_regime_ns[N], 1000 * MS);
  assert_i64_eq(s.time_in_regime_ns[D], 500 * MS);
  assert_i64_eq(s.time_in_regime_ns[C], 3 * MS);
  assert_u64_eq(s.transitions, 2);
  assert_u64_eq(s.entered[N], 0);
  assert_u64_eq(s.entered[D], 1);
  assert_u64_eq(s.entered[C], 1);
  bw_gauge_update(g, 0.1);
  bw_clock_manual_advance(e->clock, 7 * MS);
  s = stats(g);
  assert_i64_eq(s.time_in_regime_ns[N], 1007 * MS);
  assert_i64_eq(s.time_in_regime_ns[C], 3 * MS);
  assert_u64_eq(s.entered[N], 1);
  assert_u64_eq(s.updates, 4);
}

/* ==== out of memory ====================================================== */

static int creation_scenario(void *ctx) {
  bw_gauge_config_t cfg;
  bw_error_t err;
  bw_gauge_t *g;
  (void)ctx;
  bw_gauge_config_init(&cfg);
  g = bw_gauge_new(&cfg, &err);
  if (g == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    return BW_E_NOMEM;
  }
  bw_gauge_update(g, 0.9);
  bw_gauge_free(g);
  return BW_OK;
}

static void creation_survives_every_allocation_failure(void **state) {
  (void)state;
  assert_true(oom_walk(creation_scenario, NULL, false) > 2);
  bw_gauge_free(NULL);
}

/* Nothing silent: with a sink, each regime change is one regime_changed
 * event, after the callback, with from, to and the pressure that did it. */
static void each_change_is_an_event_on_the_sink(void **state) {
  genv_t *e = *state;
  bw_gauge_config_t cfg;
  bw_clock_t *wall = bw_clock_manual_new(BWT_WALL0_NS);
  FILE *fp = tmpfile();
  bw_error_t err;
  bw_sink_t *sink;
  char buf[512];
  assert_non_null(wall);
  assert_non_null(fp);
  sink = bw_sink_json_new(fp, &err);
  assert_non_null(sink);
  config(e, &cfg);
  cfg.sink = sink;
  cfg.wall_clock = wall;
  make_cfg(e, &cfg);
  assert_int_equal(bw_gauge_update(e->g, 0.5), N); /* no change: no event */
  assert_int_equal(bw_gauge_update(e->g, 0.9), C);
  assert_int_equal(bw_gauge_update(e->g, 0.3), N);
  rewind(fp);
  assert_non_null(fgets(buf, sizeof(buf), fp));
  assert_string_equal(
      buf,
      "{\"event\":\"regime_changed\",\"ts\":\"2026-08-07T14:12:03.418Z\","
      "\"kind\":\"gauge\",\"name\":\"ingest\",\"reason\":\"pressure 0.90: "
      "normal -> critical\","
      "\"from\":\"normal\",\"to\":\"critical\",\"pressure\":0.9}\n");
  assert_non_null(fgets(buf, sizeof(buf), fp));
  assert_string_equal(
      buf,
      "{\"event\":\"regime_changed\",\"ts\":\"2026-08-07T14:12:03.418Z\","
      "\"kind\":\"gauge\",\"name\":\"ingest\",\"reason\":\"pressure 0.30: "
      "critical -> normal\","
      "\"from\":\"critical\",\"to\":\"normal\",\"pressure\":0.3}\n");
  assert_null(fgets(buf, sizeof(buf), fp));
  assert_int_equal(e->nchanges, 2);
  bw_gauge_free(e->g);
  e->g = NULL;
  bw_sink_free(sink);
  fclose(fp);
  bw_clock_free(wall);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value: no pressure) for a NULL gauge, never a crash; the void
 * functions and the free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_gauge_stats_t s;
  bw_error_t err;
  (void)state;
  bw_gauge_config_init(NULL);
  assert_int_equal(bw_gauge_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_gauge_new(NULL, NULL));
  assert_null(bw_gauge_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_int_equal(bw_gauge_update(NULL, 0.5), BW_E_INVAL);
  assert_int_equal(bw_gauge_regime(NULL), BW_REGIME_NORMAL);
  assert_int_equal(bw_gauge_ceiling(NULL), UINT32_MAX);
  assert_true(bw_gauge_admits(NULL, UINT32_MAX));
  assert_string_equal(bw_gauge_name(NULL), "");
  memset(&s, 0xA5, sizeof s);
  bw_gauge_stats(NULL, &s);
  assert_int_equal(s.updates, 0);
  assert_int_equal(s.ceiling, 0);
  bw_gauge_stats(NULL, NULL);
  assert_string_equal(bw_regime_name((bw_regime_t)99), "unknown");
  bw_gauge_free(NULL);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(config_init_fills_the_seed_defaults),
      T(bad_configuration_is_refused_naming_the_field),
      cmocka_unit_test(regime_names),
      T(every_row_of_the_seed_table_around_each_threshold),
      T(no_flapping_around_degraded_at),
      T(no_flapping_around_critical_at),
      T(without_hysteresis_the_regime_follows_every_crossing),
      T(a_full_cycle_reports_each_change_in_order),
      T(bad_readings_are_refused_and_change_nothing),
      T(each_regime_admits_up_to_its_ceiling),
      T(ceilings_are_configurable),
      T(time_in_each_regime_is_measured_on_the_clock),
      T(each_change_is_an_event_on_the_sink),
      cmocka_unit_test(creation_survives_every_allocation_failure),
  };
#undef T
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Specification tests: the degradation level machine (the degradation article,
 * "desce rápido, sobe devagar").
 *
 * Every test runs on a manual clock starting at BWT_T0_NS and asserts exact
 * values: which pick is a probe, the exact failure that drops a level, the
 * exact nanosecond the dwell ends, and every change reported through the
 * on_change callback with from, to and reason. */
#include "breakwater/degrade.h"
#include <math.h>

#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS

/* ---- fixture: a manual clock and a change recorder ----------------------- */

#define MAX_CHANGES 256

typedef struct {
  bw_degrade_change_t c[MAX_CHANGES];
  char from[MAX_CHANGES][32];
  char to[MAX_CHANGES][32];
  size_t n;
} changes_t;

typedef struct {
  bw_clock_t *clock;
  changes_t ch;
  bw_degrade_t *d;
} env_t;

static void on_change(const bw_degrade_change_t *c, void *ud) {
  changes_t *ch = ud;
  if (ch->n >= MAX_CHANGES) return;
  ch->c[ch->n] = *c;
  snprintf(ch->from[ch->n], sizeof(ch->from[0]), "%s", c->from_name);
  snprintf(ch->to[ch->n], sizeof(ch->to[0]), "%s", c->to_name);
  ch->c[ch->n].from_name = ch->from[ch->n];
  ch->c[ch->n].to_name = ch->to[ch->n];
  ch->n++;
}

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
  bw_degrade_free(e->d);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

/* Small numbers that make every rule visible: 4 levels, dwell 1000 ms, every
 * 4th eligible pick probes, 3 probe successes climb, 5 failures drop. */
static void small_config(env_t *e, bw_degrade_config_t *cfg) {
  bw_degrade_config_init(cfg);
  cfg->name = "bot";
  cfg->min_dwell_ms = 1000;
  cfg->probe_every = 4;
  cfg->probe_successes_to_recover = 3;
  cfg->failures_to_degrade = 5;
  cfg->clock = e->clock;
  cfg->on_change = on_change;
  cfg->on_change_userdata = &e->ch;
}

static bw_degrade_t *make(env_t *e, const bw_degrade_config_t *cfg) {
  bw_error_t err;
  memset(&err, 0, sizeof(err));
  bw_degrade_free(e->d);
  e->d = bw_degrade_new(cfg, &err);
  if (e->d == NULL)
    fail_msg("bw_degrade_new: %s [%s] %s", bw_err_name(err.code), err.field,
             err.message);
  return e->d;
}

static bw_degrade_t *make_small(env_t *e) {
  bw_degrade_config_t cfg;
  small_config(e, &cfg);
  return make(e, &cfg);
}

static void advance_ms(env_t *e, int64_t ms) {
  bw_clock_manual_advance(e->clock, ms * MS);
}

static bw_degrade_stats_t stats(bw_degrade_t *d) {
  bw_degrade_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_degrade_stats(d, &s);
  return s;
}

static bw_degrade_pick_t pick(bw_degrade_t *d) {
  bw_degrade_pick_t p;
  memset(&p, 0xCD, sizeof(p));
  assert_status(bw_degrade_pick(d, &p), BW_OK);
  return p;
}

/* Picks, asserts the pick is the current level (not a probe), reports. */
static void serve(bw_degrade_t *d, uint32_t level, bw_outcome_t o) {
  bw_degrade_pick_t p = pick(d);
  assert_false(p.probe);
  assert_u64_eq(p.level, level);
  assert_status(bw_degrade_report(d, &p, o), BW_OK);
}

/* Drops from level 0 to `level` through failures (dwell plays no part). */
static void fail_down_to(bw_degrade_t *d, uint32_t level) {
  for (int i = 0; i < 1000 && bw_degrade_level(d) < level; i++)
    serve(d, bw_degrade_level(d), BW_FAILURE);
  assert_u64_eq(bw_degrade_level(d), level);
}

/* Picks and reports SUCCESS for every pick until `n` probes have been
 * reported; returns the number of picks. Bounded, so a broken machine fails
 * the test instead of hanging it. */
static int succeed_until_probes(bw_degrade_t *d, int n) {
  int probes = 0, picks = 0;
  while (probes < n) {
    bw_degrade_pick_t p = pick(d);
    if (++picks > 100000) fail_msg("only %d of %d probes", probes, n);
    if (p.probe) probes++;
    assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
  }
  return picks;
}

static void assert_change(const env_t *e, size_t i, uint32_t from, uint32_t to,
                          bw_degrade_reason_t reason, int64_t at_ns) {
  assert_true(i < e->ch.n);
  assert_u64_eq(e->ch.c[i].from, from);
  assert_u64_eq(e->ch.c[i].to, to);
  assert_string_equal(bw_degrade_reason_name(e->ch.c[i].reason),
                      bw_degrade_reason_name(reason));
  assert_u64_eq(e->ch.c[i].changes, i + 1);
  assert_i64_eq(e->ch.c[i].at_ns, at_ns);
}

/* ==== defaults and configuration ========================================= */

static void defaults_are_the_seeds(void **state) {
  env_t *e = *state;
  bw_degrade_config_t cfg;
  bw_degrade_t *d;
  bw_degrade_stats_t s;

  bw_degrade_config_init(&cfg);
  assert_string_equal(cfg.name, "degrade");
  assert_u64_eq(cfg.level_count, 4);
  assert_null(cfg.level_names);
  assert_i64_eq(cfg.min_dwell_ms, 60000);
  assert_u64_eq(cfg.probe_every, 20); /* probeRatio 0.05 */
  assert_u64_eq(cfg.probe_successes_to_recover, 20);
  assert_u64_eq(cfg.failures_to_degrade, 5);
  assert_null(cfg.clock);
  assert_null(cfg.on_change);
  assert_status(bw_degrade_config_validate(&cfg, NULL), BW_OK);

  cfg.clock = e->clock;
  d = make(e, &cfg);
  assert_string_equal(bw_degrade_name(d), "degrade");
  assert_string_equal(bw_degrade_level_name(d, 0), "full");
  assert_string_equal(bw_degrade_level_name(d, 1), "reduced");
  assert_string_equal(bw_degrade_level_name(d, 2), "router");
  assert_string_equal(bw_degrade_level_name(d, 3), "message");
  assert_string_equal(bw_degrade_level_name(d, 4), "");
  s = stats(d);
  assert_u64_eq(s.level, 0);
  assert_string_equal(s.level_name, "full");
  assert_u64_eq(s.level_count, 4);
  assert_i64_eq(s.entered_ns, BWT_T0_NS);
  assert_i64_eq(s.time_at_level_ms, 0);
  assert_false(s.probing);
  assert_u64_eq(s.changes, 0);
  assert_u64_eq(s.picks, 0);
}

static void level_names_are_copied_or_generated(void **state) {
  env_t *e = *state;
  bw_degrade_config_t cfg;
  bw_degrade_t *d;
  char a[8] = "gold", b[8] = "bronze";
  const char *names[2] = {a, b};

  small_config(e, &cfg);
  cfg.level_count = 2;
  cfg.level_names = names;
  d = make(e, &cfg);
  a[0] = 'X'; /* the machine keeps its own copies */
  b[0] = 'X';
  assert_string_equal(bw_degrade_level_name(d, 0), "gold");
  assert_string_equal(bw_degrade_level_name(d, 1), "bronze");

  cfg.level_count = 6;
  cfg.level_names = NULL;
  d = make(e, &cfg);
  assert_string_equal(bw_degrade_level_name(d, 0), "level0");
  assert_string_equal(bw_degrade_level_name(d, 5), "level5");
  assert_string_equal(bw_degrade_level_name(d, 6), "");
}

typedef struct {
  const char *label;
  void (*mutate)(bw_degrade_config_t *cfg);
  const char *field;
  const char *message;
} bad_case_t;

static const char *const dup_names[4] = {"full", "reduced", "full", "message"};
static const char *const empty_name[3] = {"full", "", "message"};
static const char *const null_name[3] = {"full", "router", NULL};
static char long_name[BW_NAME_MAX + 2];
static const char *const long_names[2] = {"full", long_name};

static void m_null_name(bw_degrade_config_t *c) {
  c->name = NULL;
}
static void m_empty_name(bw_degrade_config_t *c) {
  c->name = "";
}
static void m_long_name(bw_degrade_config_t *c) {
  c->name = long_name;
}
static void m_count_1(bw_degrade_config_t *c) {
  c->level_count = 1;
}
static void m_count_0(bw_degrade_config_t *c) {
  c->level_count = 0;
}
static void m_count_17(bw_degrade_config_t *c) {
  c->level_count = 17;
}
static void m_dup(bw_degrade_config_t *c) {
  c->level_names = dup_names;
}
static void m_empty_level(bw_degrade_config_t *c) {
  c->level_count = 3;
  c->level_names = empty_name;
}
static void m_null_level(bw_degrade_config_t *c) {
  c->level_count = 3;
  c->level_names = null_name;
}
static void m_long_level(bw_degrade_config_t *c) {
  c->level_count = 2;
  c->level_names = long_names;
}
static void m_dwell_neg(bw_degrade_config_t *c) {
  c->min_dwell_ms = -1;
}
static void m_dwell_huge(bw_degrade_config_t *c) {
  c->min_dwell_ms = INT64_MAX / BW_NS_PER_MS + 1;
}
static void m_probe_ratio_high(bw_degrade_config_t *c) {
  c->probe_ratio = 1.5;
}
static void m_probe_ratio_nan(bw_degrade_config_t *c) {
  c->probe_ratio = NAN;
}
static void m_probe_every(bw_degrade_config_t *c) {
  c->probe_every = 0;
}
static void m_recover(bw_degrade_config_t *c) {
  c->probe_successes_to_recover = 0;
}
static void m_degrade(bw_degrade_config_t *c) {
  c->failures_to_degrade = 0;
}
static void m_userdata(bw_degrade_config_t *c) {
  c->on_change = NULL;
}

static const bad_case_t bad_cases[] = {
    {"null name", m_null_name, "name", "name must not be empty"},
    {"empty name", m_empty_name, "name", "name must not be empty"},
    {"long name", m_long_name, "name",
     "name must be at most 200 bytes (got 201)"},
    {"one level", m_count_1, "level_count",
     "level_count must be in 2..16 (got 1)"},
    {"no level", m_count_0, "level_count",
     "level_count must be in 2..16 (got 0)"},
    {"17 levels", m_count_17, "level_count",
     "level_count must be in 2..16 (got 17)"},
    {"duplicate level", m_dup, "level_names",
     "level_names must be distinct (\"full\" is both [0] and [2])"},
    {"empty level", m_empty_level, "level_names",
     "level_names[1] must not be empty or NULL"},
    {"null level", m_null_level, "level_names",
     "level_names[2] must not be empty or NULL"},
    {"long level", m_long_level, "level_names",
     "level_names[1] must be at most 200 bytes (got 201)"},
    {"negative dwell", m_dwell_neg, "min_dwell_ms",
     "min_dwell_ms must be in 0..9223372036854 (got -1)"},
    {"huge dwell", m_dwell_huge, "min_dwell_ms",
     "min_dwell_ms must be in 0..9223372036854 (got 9223372036855)"},
    {"probe_ratio 1.5", m_probe_ratio_high, "probe_ratio",
     "probe_ratio must be in [0, 1] (0 = use probe_every; got 1.5)"},
    {"probe_ratio NaN", m_probe_ratio_nan, "probe_ratio",
     "probe_ratio must be in [0, 1] (0 = use probe_every; got nan)"},
    {"probe_every 0", m_probe_every, "probe_every",
     "probe_every must be >= 1 (got 0)"},
    {"recover 0", m_recover, "probe_successes_to_recover",
     "probe_successes_to_recover must be >= 1 (got 0)"},
    {"degrade 0", m_degrade, "failures_to_degrade",
     "failures_to_degrade must be >= 1 (got 0)"},
    {"userdata without callback", m_userdata, "on_change_userdata",
     "on_change_userdata is set but on_change is NULL"},
};

static void bad_configs_are_refused_naming_the_field(void **state) {
  env_t *e = *state;
  memset(long_name, 'x', BW_NAME_MAX + 1);
  long_name[BW_NAME_MAX + 1] = '\0';
  for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    bw_degrade_config_t cfg;
    bw_error_t err;
    const bad_case_t *bc = &bad_cases[i];
    small_config(e, &cfg);
    bc->mutate(&cfg);
    memset(&err, 0, sizeof(err));
    if (bw_degrade_config_validate(&cfg, &err) != BW_E_INVAL)
      fail_msg("%s: validate accepted it", bc->label);
    assert_string_equal(err.field, bc->field);
    assert_string_equal(err.message, bc->message);
    memset(&err, 0, sizeof(err));
    if (bw_degrade_new(&cfg, &err) != NULL)
      fail_msg("%s: new accepted it", bc->label);
    assert_status(err.code, BW_E_INVAL);
    assert_string_equal(err.field, bc->field);
  }
  {
    bw_error_t err;
    assert_null(bw_degrade_new(NULL, &err));
    assert_status(err.code, BW_E_INVAL);
    assert_string_equal(err.field, "");
    assert_null(bw_degrade_new(NULL, NULL)); /* err is optional */
  }
}

static void edge_configs_are_accepted(void **state) {
  env_t *e = *state;
  bw_degrade_config_t cfg;
  small_config(e, &cfg);
  cfg.level_count = 2;
  cfg.min_dwell_ms = 0;
  cfg.probe_every = 1;
  cfg.probe_successes_to_recover = 1;
  cfg.failures_to_degrade = 1;
  assert_status(bw_degrade_config_validate(&cfg, NULL), BW_OK);
  cfg.level_count = 16;
  cfg.min_dwell_ms = INT64_MAX / BW_NS_PER_MS;
  assert_status(bw_degrade_config_validate(&cfg, NULL), BW_OK);
  cfg.on_change = NULL;
  cfg.on_change_userdata = NULL;
  assert_status(bw_degrade_config_validate(&cfg, NULL), BW_OK);
}

/* ==== down fast ============================================================
 */

static void drops_exactly_at_failures_to_degrade(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);

  for (int i = 1; i <= 4; i++) {
    serve(d, 0, BW_FAILURE);
    assert_u64_eq(stats(d).consecutive_failures, i);
  }
  assert_u64_eq(bw_degrade_level(d), 0);
  assert_u64_eq(e->ch.n, 0);
  advance_ms(e, 7);
  serve(d, 0, BW_FAILURE); /* the 5th: down at once, no dwell needed */
  assert_u64_eq(bw_degrade_level(d), 1);
  assert_u64_eq(e->ch.n, 1);
  assert_change(e, 0, 0, 1, BW_DEGRADE_FAILURES, BWT_T0_NS + 7 * MS);
  assert_string_equal(e->ch.c[0].from_name, "full");
  assert_string_equal(e->ch.c[0].to_name, "reduced");
  assert_u64_eq(stats(d).consecutive_failures, 0); /* streak restarts */

  /* The next level, immediately: down never waits for a dwell. */
  for (int i = 0; i < 4; i++)
    serve(d, 1, BW_FAILURE);
  assert_u64_eq(bw_degrade_level(d), 1);
  serve(d, 1, BW_FAILURE);
  assert_u64_eq(bw_degrade_level(d), 2);
  assert_change(e, 1, 1, 2, BW_DEGRADE_FAILURES, BWT_T0_NS + 7 * MS);
}

static void a_success_breaks_the_failure_streak(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);

  for (int i = 0; i < 4; i++)
    serve(d, 0, BW_FAILURE);
  serve(d, 0, BW_SUCCESS);
  assert_u64_eq(stats(d).consecutive_failures, 0);
  for (int i = 0; i < 4; i++)
    serve(d, 0, BW_FAILURE);
  assert_u64_eq(bw_degrade_level(d), 0);
  serve(d, 0, BW_FAILURE);
  assert_u64_eq(bw_degrade_level(d), 1);
}

static void ignored_outcomes_decide_nothing(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_stats_t s;

  for (int i = 0; i < 4; i++)
    serve(d, 0, BW_FAILURE);
  serve(d, 0, BW_IGNORED); /* neither resets nor grows the streak */
  assert_u64_eq(stats(d).consecutive_failures, 4);
  serve(d, 0, BW_FAILURE);
  s = stats(d);
  assert_u64_eq(s.level, 1);
  assert_u64_eq(s.ignored, 1);
  assert_u64_eq(s.failures, 5);
}

static void the_last_level_is_a_floor(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_stats_t s;

  fail_down_to(d, 3);
  assert_u64_eq(e->ch.n, 3);
  for (int i = 0; i < 12; i++)
    serve(d, 3, BW_FAILURE);
  s = stats(d);
  assert_u64_eq(s.level, 3);
  assert_string_equal(s.level_name, "message");
  assert_u64_eq(s.changes, 3);
  assert_u64_eq(s.downs, 3);
  /* As in the article, failures keep counting at the bottom. */
  assert_u64_eq(s.consecutive_failures, 12);
  assert_u64_eq(e->ch.n, 3);
}

/* ==== up slow: dwell, probes, one level per climb ========================= */

static void no_probe_at_the_top_level(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  advance_ms(e, 100000);
  for (int i = 0; i < 100; i++)
    serve(d, 0, BW_SUCCESS);
  assert_u64_eq(stats(d).probes, 0);
}

static void dwell_is_enforced_exactly(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_pick_t p;

  fail_down_to(d, 1); /* entered level 1 at T0 */
  /* Until 1 ns before the dwell ends no pick is eligible, however many. */
  advance_ms(e, 999);
  bw_clock_manual_advance(e->clock, 999999);
  for (int i = 0; i < 40; i++)
    serve(d, 1, BW_SUCCESS);
  assert_false(stats(d).probing);
  assert_u64_eq(stats(d).probes, 0);
  /* At exactly min_dwell_ms picks count: the 4th eligible one probes. */
  bw_clock_manual_advance(e->clock, 1);
  assert_true(stats(d).probing);
  assert_i64_eq(stats(d).time_at_level_ms, 1000);
  for (int i = 0; i < 3; i++)
    serve(d, 1, BW_SUCCESS);
  p = pick(d);
  assert_true(p.probe);
  assert_u64_eq(p.level, 0);
  assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
  assert_u64_eq(stats(d).probe_successes, 1);
}

static void probe_ratio_is_exact(void **state) {
  env_t *e = *state;
  bw_degrade_config_t cfg;
  bw_degrade_t *d;
  bw_degrade_stats_t s;
  uint64_t probes = 0;

  small_config(e, &cfg);
  cfg.probe_every = 20;                     /* 5 % */
  cfg.probe_successes_to_recover = 1000000; /* never climbs here */
  d = make(e, &cfg);
  fail_down_to(d, 2);
  advance_ms(e, 1000);
  for (int i = 1; i <= 10007; i++) {
    bw_degrade_pick_t p = pick(d);
    /* Exactly every 20th pick, and always the level just above. */
    assert_int_equal(p.probe, i % 20 == 0);
    assert_u64_eq(p.level, p.probe ? 1 : 2);
    if (p.probe) probes++;
    assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
  }
  s = stats(d);
  assert_u64_eq(probes, 500);
  assert_u64_eq(s.probes, 500);
  assert_u64_eq(s.picks_at[0], 5); /* the failures that led down */
  assert_u64_eq(s.picks_at[1], 5 + 500);
  assert_u64_eq(s.picks_at[2], 10007 - 500);
  assert_u64_eq(s.probe_successes_total, 500);
  assert_u64_eq(s.probe_successes, 500);
  assert_u64_eq(s.level, 2);
}

/* probe_ratio, the article's own knob: of K eligible picks exactly
 * floor(K * ratio) are probes, spread evenly (0.25 is exact in binary, so
 * every 4th pick; 0.3 gives 3 probes per 10 picks). It wins over
 * probe_every. */
static void probe_ratio_as_a_fraction_is_exact_and_even(void **state) {
  env_t *e = *state;
  bw_degrade_config_t cfg;
  bw_degrade_t *d;
  small_config(e, &cfg);
  cfg.probe_every = 7; /* ignored: probe_ratio is set */
  cfg.probe_ratio = 0.25;
  cfg.probe_successes_to_recover = 1000000;
  d = make(e, &cfg);
  fail_down_to(d, 2);
  advance_ms(e, 1000);
  for (int i = 1; i <= 1000; i++) {
    bw_degrade_pick_t p = pick(d);
    assert_int_equal(p.probe, i % 4 == 0);
    assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
  }
  assert_u64_eq(stats(d).probes, 250);

  small_config(e, &cfg);
  cfg.probe_ratio = 0.3;
  cfg.probe_successes_to_recover = 1000000;
  d = make(e, &cfg);
  fail_down_to(d, 1);
  advance_ms(e, 1000);
  uint64_t probes = 0;
  for (int i = 1; i <= 1000; i++) {
    bw_degrade_pick_t p = pick(d);
    if (p.probe) probes++;
    /* Never more than floor(i * 0.3), never fewer than one less. */
    assert_true(probes * 10 <= (uint64_t)i * 3);
    assert_true((probes + 1) * 10 > (uint64_t)i * 3);
    assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
  }
  assert_u64_eq(probes, 300);
}

static void the_probe_count_restarts_at_every_change(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);

  fail_down_to(d, 1);
  advance_ms(e, 1000);
  serve(d, 1, BW_SUCCESS); /* eligible picks 1 and 2 of 4 */
  serve(d, 1, BW_SUCCESS);
  assert_status(bw_degrade_force_down_to(d, 2), BW_OK);
  advance_ms(e, 1000);
  /* Counting starts over at level 2: picks 1..3 serve, the 4th probes. */
  for (int i = 0; i < 3; i++)
    serve(d, 2, BW_SUCCESS);
  assert_true(pick(d).probe);
}

static void probe_successes_climb_exactly_one_level(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_stats_t s;
  int probes = 0, picks = 0;

  fail_down_to(d, 3);
  assert_u64_eq(e->ch.n, 3);
  advance_ms(e, 1000);
  /* 3 probe successes: the 4th, 8th and 12th eligible picks. */
  while (probes < 3) {
    bw_degrade_pick_t p = pick(d);
    if (++picks > 100) fail_msg("only %d probes", probes);
    if (p.probe) {
      probes++;
      assert_u64_eq(p.level, 2);
    }
    assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
    if (probes < 3) assert_u64_eq(bw_degrade_level(d), 3);
  }
  assert_int_equal(picks, 12);
  s = stats(d);
  assert_u64_eq(s.level, 2); /* "router", not "full": one level per climb */
  assert_string_equal(s.level_name, "router");
  assert_u64_eq(s.ups, 1);
  assert_u64_eq(s.probe_successes, 0);
  assert_i64_eq(s.entered_ns, BWT_T0_NS + 1000 * MS);
  assert_change(e, 3, 3, 2, BW_DEGRADE_PROBES, BWT_T0_NS + 1000 * MS);
  assert_string_equal(e->ch.c[3].from_name, "message");
  assert_string_equal(e->ch.c[3].to_name, "router");

  /* The new level has its own dwell: no probe before another 1000 ms. */
  for (int i = 0; i < 50; i++)
    serve(d, 2, BW_SUCCESS);
  assert_u64_eq(stats(d).level, 2);
}

static void own_successes_never_promote(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_stats_t s;

  fail_down_to(d, 2);
  advance_ms(e, 3600 * 1000);
  /* A router answering its canned replies fine for an hour: if the level's
   * own successes counted, it would promote itself into a broken level. */
  for (int i = 0; i < 1000; i++) {
    bw_degrade_pick_t p = pick(d);
    assert_status(bw_degrade_report(d, &p, p.probe ? BW_IGNORED : BW_SUCCESS),
                  BW_OK);
  }
  s = stats(d);
  assert_u64_eq(s.level, 2);
  assert_u64_eq(s.probe_successes, 0);
  assert_u64_eq(s.ups, 0);
  assert_u64_eq(s.probes, 250);
  assert_u64_eq(s.successes, 750);
  assert_u64_eq(s.ignored, 250);
}

static void a_non_probe_success_keeps_the_probe_streak(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);

  /* The streak counts probe successes "in a row" among what can break it:
   * failures. The level's own successes neither count nor break it (the
   * article: recordSuccess without fromProbe leaves probeSuccesses alone). */
  fail_down_to(d, 1);
  advance_ms(e, 1000);
  assert_int_equal(succeed_until_probes(d, 2), 8);
  assert_u64_eq(stats(d).probe_successes, 2);
  for (int i = 0; i < 3; i++)
    serve(d, 1, BW_SUCCESS);
  assert_u64_eq(stats(d).probe_successes, 2);
  {
    bw_degrade_pick_t p = pick(d);
    assert_true(p.probe);
    assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
  }
  assert_u64_eq(bw_degrade_level(d), 0);
}

static void a_probe_failure_resets_the_streak_and_counts_toward_degrading(
    void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_pick_t p;
  bw_degrade_stats_t s;

  fail_down_to(d, 1);
  advance_ms(e, 1000);
  /* Two probe successes... */
  assert_int_equal(succeed_until_probes(d, 2), 8);
  assert_u64_eq(stats(d).probe_successes, 2);
  /* ...then a probe fails: the streak restarts, and (the article's
   * recordFailure makes no exception for probes) the failure streak of level 1
   * grows. */
  for (int i = 0; i < 3; i++)
    serve(d, 1, BW_SUCCESS);
  p = pick(d);
  assert_true(p.probe);
  assert_status(bw_degrade_report(d, &p, BW_FAILURE), BW_OK);
  s = stats(d);
  assert_u64_eq(s.probe_successes, 0);
  assert_u64_eq(s.consecutive_failures, 1);
  assert_u64_eq(s.probe_failures_total, 1);
  assert_u64_eq(s.level, 1);
  /* Four more failures make five: down to 2. The 4th pick is a probe again;
   * its failure counts like the others. */
  for (int i = 0; i < 4; i++) {
    p = pick(d);
    assert_int_equal(p.probe, i == 3);
    assert_u64_eq(bw_degrade_level(d), 1);
    assert_status(bw_degrade_report(d, &p, BW_FAILURE), BW_OK);
  }
  assert_u64_eq(bw_degrade_level(d), 2);
}

static void a_non_probe_failure_also_resets_the_probe_streak(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);

  fail_down_to(d, 1);
  advance_ms(e, 1000);
  assert_int_equal(succeed_until_probes(d, 2), 8);
  serve(d, 1, BW_FAILURE);
  assert_u64_eq(stats(d).probe_successes, 0);
  assert_u64_eq(stats(d).consecutive_failures, 1);
}

/* The article counts a probe failure like any other failure. With probe_every
 * = 1 every eligible pick is a probe, nothing of the level's own resets the
 * streak, and failed probes drag a healthy level down (docs/degrade.md warns
 * about this setting). */
static void with_every_pick_a_probe_failed_probes_degrade(void **state) {
  env_t *e = *state;
  bw_degrade_config_t cfg;
  bw_degrade_t *d;

  small_config(e, &cfg);
  cfg.probe_every = 1;
  d = make(e, &cfg);
  fail_down_to(d, 1);
  advance_ms(e, 1000);
  for (int i = 0; i < 5; i++) {
    bw_degrade_pick_t p = pick(d);
    assert_true(p.probe);
    assert_u64_eq(p.level, 0);
    assert_status(bw_degrade_report(d, &p, BW_FAILURE), BW_OK);
  }
  assert_u64_eq(bw_degrade_level(d), 2);
  assert_u64_eq(e->ch.n, 2);
  assert_int_equal(e->ch.c[1].reason, BW_DEGRADE_FAILURES);
}

/* The article's main failure mode: a provider that answers a trickle of probes
 * but falls over under full traffic. It must not oscillate faster than the
 * dwell: every climb comes at least min_dwell_ms after the drop before it. */
static void ping_pong_is_bounded_by_the_dwell(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  const int64_t tick_ms = 10, run_ms = 60000;

  fail_down_to(d, 1); /* change #1 at T0 */
  for (int64_t t = 0; t < run_ms; t += tick_ms) {
    bw_degrade_pick_t p;
    advance_ms(e, tick_ms);
    p = pick(d);
    /* Level 0 works for probes, fails at full load; level 1 always works. */
    assert_status(
        bw_degrade_report(d, &p,
                          p.level == 0 && !p.probe ? BW_FAILURE : BW_SUCCESS),
        BW_OK);
    assert_true(bw_degrade_level(d) <= 1);
  }
  /* A cycle: 1000 ms dwell, then eligible picks at +1000, +1010, ...; the
   * 12th (3 probes x every 4th) climbs at +1110 ms; 5 failures at full load
   * drop it again 50 ms later. 60 s hold 51 full cycles of 1160 ms. */
  assert_u64_eq(e->ch.n, 1 + 2 * 51);
  for (size_t i = 1; i + 1 < e->ch.n; i += 2) {
    const bw_degrade_change_t *up = &e->ch.c[i], *down = &e->ch.c[i + 1];
    const bw_degrade_change_t *before = &e->ch.c[i - 1];
    assert_u64_eq(up->to, 0);
    assert_int_equal(up->reason, BW_DEGRADE_PROBES);
    assert_i64_eq(up->at_ns - before->at_ns, 1110 * MS);
    assert_true(up->at_ns - before->at_ns >= 1000 * MS);
    assert_u64_eq(down->to, 1);
    assert_int_equal(down->reason, BW_DEGRADE_FAILURES);
    assert_i64_eq(down->at_ns - up->at_ns, 50 * MS);
  }
}

/* ==== stale and invalid reports =========================================== */

static void reports_from_before_a_change_are_stale(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_pick_t old[3];
  bw_degrade_stats_t s;

  for (int i = 0; i < 3; i++)
    old[i] = pick(d); /* in flight at level 0 */
  fail_down_to(d, 1);
  /* Late failures of requests picked at level 0 say nothing about level 1. */
  for (int i = 0; i < 3; i++)
    assert_status(bw_degrade_report(d, &old[i], BW_FAILURE), BW_E_STALE);
  s = stats(d);
  assert_u64_eq(s.level, 1);
  assert_u64_eq(s.consecutive_failures, 0);
  assert_u64_eq(s.stale, 3);
  assert_u64_eq(s.failures, 5 + 3); /* counted in the totals */
  assert_u64_eq(s.picks, 5 + 3);
}

static void bad_reports_are_refused_and_count_nothing(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_pick_t p = pick(d), forged;
  bw_degrade_stats_t s;

  assert_status(bw_degrade_report(d, &p, (bw_outcome_t)3), BW_E_INVAL);
  assert_status(bw_degrade_report(d, NULL, BW_SUCCESS), BW_E_INVAL);
  assert_status(bw_degrade_pick(d, NULL), BW_E_INVAL);
  forged = p;
  forged.probe = true; /* nothing is above level 0 */
  assert_status(bw_degrade_report(d, &forged, BW_SUCCESS), BW_E_INVAL);
  forged = p;
  forged.level = 2; /* not the current level */
  assert_status(bw_degrade_report(d, &forged, BW_SUCCESS), BW_E_INVAL);
  forged = p;
  forged.level = 4; /* no such level */
  assert_status(bw_degrade_report(d, &forged, BW_SUCCESS), BW_E_INVAL);
  forged = p;
  forged.generation = 9; /* from the future */
  assert_status(bw_degrade_report(d, &forged, BW_SUCCESS), BW_E_INVAL);
  s = stats(d);
  assert_u64_eq(s.successes + s.failures + s.ignored, 0);
  assert_status(bw_degrade_report(d, &p, BW_SUCCESS), BW_OK);
}

/* ==== external signals =====================================================
 */

static void an_opening_breaker_drops_one_level_per_edge(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);

  assert_status(bw_degrade_observe_breaker(d, BW_CLOSED), BW_OK);
  assert_u64_eq(e->ch.n, 0);
  advance_ms(e, 3);
  assert_status(bw_degrade_observe_breaker(d, BW_OPEN), BW_OK);
  assert_u64_eq(bw_degrade_level(d), 1);
  assert_change(e, 0, 0, 1, BW_DEGRADE_BREAKER, BWT_T0_NS + 3 * MS);
  /* Polling the same OPEN breaker again is not a new signal. */
  for (int i = 0; i < 10; i++)
    assert_status(bw_degrade_observe_breaker(d, BW_OPEN), BW_OK);
  assert_status(bw_degrade_observe_breaker(d, BW_ISOLATED), BW_OK);
  assert_u64_eq(bw_degrade_level(d), 1);
  /* Half-open, then open again: a new edge, one more level. */
  assert_status(bw_degrade_observe_breaker(d, BW_HALF_OPEN), BW_OK);
  assert_u64_eq(bw_degrade_level(d), 1);
  assert_status(bw_degrade_observe_breaker(d, BW_OPEN), BW_OK);
  assert_u64_eq(bw_degrade_level(d), 2);
  /* Closing never promotes: recovery goes through probes. */
  assert_status(bw_degrade_observe_breaker(d, BW_CLOSED), BW_OK);
  assert_u64_eq(bw_degrade_level(d), 2);
  assert_u64_eq(e->ch.n, 2);
  assert_status(bw_degrade_observe_breaker(d, (bw_state_t)5), BW_E_INVAL);
  assert_status(bw_degrade_observe_breaker(d, (bw_state_t)-1), BW_E_INVAL);
}

static void the_breaker_signal_feeds_from_a_real_breaker(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_breaker_config_t bc;
  bw_breaker_t *b;
  bw_permit_t p;

  bw_breaker_config_init(&bc);
  bc.failure_threshold = 2;
  bc.clock = e->clock;
  b = bw_breaker_new(&bc, NULL);
  assert_non_null(b);
  for (int i = 0; i < 2; i++) {
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_FAILURE);
    assert_status(bw_degrade_observe_breaker(d, bw_breaker_state(b)), BW_OK);
  }
  assert_u64_eq(bw_degrade_level(d), 1);
  assert_int_equal(e->ch.c[0].reason, BW_DEGRADE_BREAKER);
  bw_breaker_free(b);
}

/* Issue 6: "usable fed by a breaker's or gauge's state". A real gauge's
 * regime, read after every update: each entry into CRITICAL drops one level,
 * staying there or passing through DEGRADED does nothing, and the gauge
 * falling back to NORMAL never promotes (recovery is by probes only). */
static void the_gauge_signal_feeds_from_a_real_gauge(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_gauge_config_t gc;
  bw_gauge_t *g;

  bw_gauge_config_init(&gc);
  gc.clock = e->clock;
  g = bw_gauge_new(&gc, NULL);
  assert_non_null(g);
  const double trace[] = {0.5, 0.7, 0.9, 0.95, 0.9, 0.3, 0.65, 0.9, 0.2};
  const uint32_t want[] = {0, 0, 1, 1, 1, 1, 1, 2, 2};
  for (size_t i = 0; i < sizeof trace / sizeof trace[0]; i++) {
    bw_gauge_update(g, trace[i]);
    assert_status(bw_degrade_observe_gauge(d, bw_gauge_regime(g)), BW_OK);
    assert_u64_eq(bw_degrade_level(d), want[i]);
  }
  assert_u64_eq(e->ch.n, 2);
  assert_int_equal(e->ch.c[0].reason, BW_DEGRADE_GAUGE);
  assert_int_equal(e->ch.c[1].reason, BW_DEGRADE_GAUGE);
  assert_string_equal(bw_degrade_reason_name(BW_DEGRADE_GAUGE), "gauge");
  assert_status(bw_degrade_observe_gauge(d, BW_REGIME__COUNT), BW_E_INVAL);
  assert_status(bw_degrade_observe_gauge(NULL, BW_REGIME_CRITICAL), BW_E_INVAL);
  /* The last level is a floor for the gauge too. */
  bw_gauge_update(g, 0.95);
  assert_status(bw_degrade_observe_gauge(d, bw_gauge_regime(g)), BW_OK);
  bw_gauge_update(g, 0.1);
  bw_degrade_observe_gauge(d, bw_gauge_regime(g));
  bw_gauge_update(g, 0.95);
  assert_status(bw_degrade_observe_gauge(d, bw_gauge_regime(g)), BW_OK);
  assert_u64_eq(bw_degrade_level(d), 3);
  assert_u64_eq(e->ch.n, 3);
  bw_gauge_free(g);
}

static void force_down_to_jumps_and_is_idempotent(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_stats_t s;

  assert_status(bw_degrade_force_down_to(d, 0), BW_OK); /* already there */
  assert_u64_eq(e->ch.n, 0);
  advance_ms(e, 5);
  assert_status(bw_degrade_force_down_to(d, 2), BW_OK);
  assert_change(e, 0, 0, 2, BW_DEGRADE_FORCED, BWT_T0_NS + 5 * MS);
  assert_status(bw_degrade_force_down_to(d, 2), BW_OK);
  assert_status(bw_degrade_force_down_to(d, 1), BW_OK); /* never promotes */
  assert_u64_eq(e->ch.n, 1);
  assert_status(bw_degrade_force_down_to(d, 4), BW_E_RANGE);
  s = stats(d);
  assert_u64_eq(s.level, 2);
  assert_u64_eq(s.entries_at[2], 1);
  assert_u64_eq(s.entries_at[1], 0);
  assert_u64_eq(s.downs, 1);
  /* The forced level has its own dwell, then climbs by probes as usual. */
  advance_ms(e, 1000);
  assert_int_equal(succeed_until_probes(d, 3), 12);
  assert_u64_eq(bw_degrade_level(d), 1);
}

/* ==== snapshot =============================================================
 */

static void snapshot_tracks_time_and_counts_per_level(void **state) {
  env_t *e = *state;
  bw_degrade_t *d = make_small(e);
  bw_degrade_stats_t s;

  advance_ms(e, 250);
  fail_down_to(d, 1); /* 250 ms at level 0 */
  advance_ms(e, 1500);
  assert_int_equal(succeed_until_probes(d, 3), 12);
  advance_ms(e, 40);
  s = stats(d);
  assert_u64_eq(s.level, 0);
  assert_i64_eq(s.time_at_level_ms, 40);
  assert_i64_eq(s.time_at_ms[0], 290);
  assert_i64_eq(s.time_at_ms[1], 1500);
  assert_i64_eq(s.time_at_ms[2], 0);
  assert_u64_eq(s.picks_at[0], 5 + 3);
  assert_u64_eq(s.picks_at[1], 9);
  assert_u64_eq(s.picks, 17);
  assert_u64_eq(s.entries_at[0], 1);
  assert_u64_eq(s.entries_at[1], 1);
  assert_u64_eq(s.changes, 2);
  assert_u64_eq(s.downs, 1);
  assert_u64_eq(s.ups, 1);
  assert_u64_eq(s.successes, 12);
  assert_u64_eq(s.failures, 5);
  assert_u64_eq(s.stale, 0);
  assert_u64_eq(s.picks_at[4], 0);
}

/* ==== out of memory ========================================================
 */

static int new_scenario(void *ctx) {
  bw_degrade_config_t cfg;
  bw_degrade_t *d;
  bw_error_t err;
  small_config(ctx, &cfg);
  d = bw_degrade_new(&cfg, &err);
  if (d == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    return BW_E_NOMEM;
  }
  bw_degrade_free(d);
  return BW_OK;
}

static void new_survives_every_allocation_failure(void **state) {
  /* The object, its name and four level names. */
  assert_int_equal(oom_walk(new_scenario, *state, false), 7);
}

/* Nothing silent: with a sink, each level change is one
 * degrade_level_changed event with from, to, cause and the change number,
 * stamped with the machine's clock. */
static void each_change_is_an_event_on_the_sink(void **state) {
  env_t *e = *state;
  bw_degrade_config_t cfg;
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_error_t err;
  bw_sink_t *sink;
  const bwt_event_t *ev;
  assert_non_null(rec);
  sink = bw_sink_callback_new(bwt_record_cb, rec, &err);
  assert_non_null(sink);
  small_config(e, &cfg);
  cfg.sink = sink;
  make(e, &cfg);
  fail_down_to(e->d, 1); /* 5 failures: full -> reduced */
  advance_ms(e, 1000);   /* dwell over: probes climb back */
  succeed_until_probes(e->d, 3);
  assert_u64_eq(bw_degrade_level(e->d), 0);
  assert_int_equal(rec->count, 2);
  ev = bwt_event_at(rec, 0);
  assert_event(ev, BW_EV_DEGRADE_LEVEL_CHANGED, "full -> reduced (failures)");
  assert_string_equal(ev->name, "bot");
  assert_field_str(ev, 0, "from", "full");
  assert_field_str(ev, 1, "to", "reduced");
  assert_field_str(ev, 2, "cause", "failures");
  assert_field_uint(ev, 3, "changes", 1);
  assert_i64_eq(ev->mono_ns, BWT_T0_NS);
  ev = bwt_event_at(rec, 1);
  assert_event(ev, BW_EV_DEGRADE_LEVEL_CHANGED, "reduced -> full (probes)");
  assert_field_str(ev, 2, "cause", "probes");
  assert_field_uint(ev, 3, "changes", 2);
  assert_i64_eq(ev->mono_ns, BWT_T0_NS + 1000 * MS);
  /* The callback saw the same two changes, in the same order. */
  assert_int_equal(e->ch.n, 2);
  bw_degrade_free(e->d);
  e->d = NULL;
  bw_sink_free(sink);
  free(rec);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value: level 0, "") for a NULL machine, never a crash; the void
 * functions and the free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_degrade_stats_t s;
  bw_degrade_pick_t pk;
  bw_error_t err;
  (void)state;
  memset(&pk, 0, sizeof pk);
  bw_degrade_config_init(NULL);
  assert_int_equal(bw_degrade_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_degrade_new(NULL, NULL));
  assert_null(bw_degrade_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_int_equal(bw_degrade_pick(NULL, &pk), BW_E_INVAL);
  assert_int_equal(bw_degrade_report(NULL, &pk, BW_SUCCESS), BW_E_INVAL);
  assert_int_equal(bw_degrade_observe_breaker(NULL, BW_OPEN), BW_E_INVAL);
  assert_int_equal(bw_degrade_observe_gauge(NULL, BW_REGIME_CRITICAL),
                   BW_E_INVAL);
  assert_int_equal(bw_degrade_force_down_to(NULL, 1), BW_E_INVAL);
  assert_int_equal(bw_degrade_level(NULL), 0);
  assert_string_equal(bw_degrade_level_name(NULL, 0), "");
  assert_string_equal(bw_degrade_name(NULL), "");
  memset(&s, 0xA5, sizeof s);
  bw_degrade_stats(NULL, &s);
  assert_int_equal(s.level, 0);
  assert_int_equal(s.level_count, 0);
  bw_degrade_stats(NULL, NULL);
  assert_string_equal(bw_degrade_reason_name((bw_degrade_reason_t)99),
                      "unknown");
  bw_degrade_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
      T(defaults_are_the_seeds),
      T(each_change_is_an_event_on_the_sink),
      T(level_names_are_copied_or_generated),
      T(bad_configs_are_refused_naming_the_field),
      T(edge_configs_are_accepted),
      T(drops_exactly_at_failures_to_degrade),
      T(a_success_breaks_the_failure_streak),
      T(ignored_outcomes_decide_nothing),
      T(the_last_level_is_a_floor),
      T(no_probe_at_the_top_level),
      T(dwell_is_enforced_exactly),
      T(probe_ratio_is_exact),
      T(probe_ratio_as_a_fraction_is_exact_and_even),
      T(the_probe_count_restarts_at_every_change),
      T(probe_successes_climb_exactly_one_level),
      T(own_successes_never_promote),
      T(a_non_probe_success_keeps_the_probe_streak),
      T(a_probe_failure_resets_the_streak_and_counts_toward_degrading),
      T(a_non_probe_failure_also_resets_the_probe_streak),
      T(with_every_pick_a_probe_failed_probes_degrade),
      T(ping_pong_is_bounded_by_the_dwell),
      T(reports_from_before_a_change_are_stale),
      T(bad_reports_are_refused_and_count_nothing),
      T(an_opening_breaker_drops_one_level_per_edge),
      T(the_breaker_signal_feeds_from_a_real_breaker),
      T(the_gauge_signal_feeds_from_a_real_gauge),
      T(force_down_to_jumps_and_is_idempotent),
      T(snapshot_tracks_time_and_counts_per_level),
      T(new_survives_every_allocation_failure),
#undef T
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

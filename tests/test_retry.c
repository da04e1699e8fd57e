/* Specification tests: the retry policy and its iterator.
 *
 * Time is an argument (now_ns) or a manual clock; randomness is a seeded
 * generator; every assertion is exact. The reference articles' scenarios
 * (docs/references.md) are written step by step:
 *   the asyncio toolkit — max_attempts 3, base 1 s, x2, cap 30 s, full jitter,
 * non-retryable errors, a circuit-open error never retried; the tenacity
 * article — stop_after_attempt(3), wait_exponential(multiplier=0.5, min=0.5,
 * max=4) giving 0.5 s, 1 s; the inner variant 0.3 s .. 2 s with 2 attempts;
 * never a 4xx; the Polly lab — Polly v8: MaxRetryAttempts 2, Delay 200 ms,
 * exponential with UseJitter (DecorrelatedJitterBackoffV2), MaxDelay 1.5 s. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "breakwater/threads.h"
#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define T0 BWT_T0_NS
#define AT(ms) (T0 + (int64_t)(ms)*MS)

/* ---- fixture ---------------------------------------------------------------
 */

static int setup(void **state) {
  return bwt_setup(state);
}

static int teardown(void **state) {
  bw_deadline_set(bw_deadline_none()); /* a failed test must not leak it */
  return bwt_teardown(state);
}

/* Defaults plus the environment's sink and wall clock, a name, no jitter
 * and a constant 200 ms curve: the simplest policy to reason about. */
static void plain(const bwt_env_t *e, bw_retry_config_t *cfg,
                  const char *name) {
  bw_retry_config_init(cfg);
  cfg->name = name;
  cfg->sink = e->sink;
  cfg->wall_clock = e->wall;
  cfg->backoff = BW_BACKOFF_CONSTANT;
  cfg->jitter = BW_JITTER_NONE;
  cfg->base_ms = 200;
  cfg->max_ms = 1000;
}

static bw_retry_policy_t *policy_at(const bw_retry_config_t *cfg,
                                    const char *file, int line) {
  bw_error_t err;
  bw_retry_policy_t *p;
  memset(&err, 0, sizeof(err));
  p = bw_retry_policy_new(cfg, &err);
  if (p == NULL) {
    print_error("bw_retry_policy_new failed: %s [%s] %s\n",
                bw_err_name(err.code), err.field, err.message);
    _fail(file, line);
  }
  return p;
}
#define policy(cfg) policy_at((cfg), __FILE__, __LINE__)

/* One decision, asserting the answer and the delay. */
static void next_at(bw_retry_t *r, bw_verdict_t v, int64_t hint, int64_t now,
                    int want_rc, int64_t want_delay, const char *file,
                    int line) {
  int64_t d = -12345;
  int rc = bw_retry_next(r, v, hint, now, &d);
  if (rc != want_rc) {
    print_error("bw_retry_next: %d != %d (reason %s)\n", rc, want_rc,
                bw_giveup_name(bw_retry_reason(r)));
    _fail(file, line);
  }
  if (d != want_delay) {
    print_error("delay_ms: %" PRId64 " != %" PRId64 "\n", d, want_delay);
    _fail(file, line);
  }
}
#define expect_retry(r, v, hint, now, delay) \
  next_at((r), (v), (hint), (now), BW_RETRY, (delay), __FILE__, __LINE__)
#define expect_give_up(r, v, hint, now) \
  next_at((r), (v), (hint), (now), BW_RETRY_GIVE_UP, 0, __FILE__, __LINE__)
#define expect_done(r, v, now)                                              \
  next_at((r), (v), BW_RETRY_AFTER_NONE, (now), BW_RETRY_DONE, 0, __FILE__, \
          __LINE__)

/* One decision that must schedule a retry; returns its delay. */
static int64_t retry_delay_at(bw_retry_t *r, bw_verdict_t v, int64_t now,
                              const char *file, int line) {
  int64_t d = -1;
  int rc = bw_retry_next(r, v, BW_RETRY_AFTER_NONE, now, &d);
  if (rc != BW_RETRY) {
    print_error("bw_retry_next: %d, expected BW_RETRY (reason %s)\n", rc,
                bw_giveup_name(bw_retry_reason(r)));
    _fail(file, line);
  }
  return d;
}
#define retry_delay(r, now) \
  retry_delay_at((r), BW_VERDICT_TRANSIENT, (now), __FILE__, __LINE__)

static void assert_reason_at(const bw_retry_t *r, bw_giveup_t g,
                             const char *file, int line) {
  if (bw_retry_reason(r) != g) {
    print_error("reason: %s != %s\n", bw_giveup_name(bw_retry_reason(r)),
                bw_giveup_name(g));
    _fail(file, line);
  }
}
#define assert_reason(r, g) assert_reason_at((r), (g), __FILE__, __LINE__)

/* Asserts the last event is retry_gave_up with these fields and reason. */
static void gave_up_at(const bwt_env_t *e, uint32_t attempts, const char *why,
                       const char *verdict, const char *text, const char *file,
                       int line) {
  const bwt_event_t *ev;
  if (e->rec->count == 0) {
    print_error("no event recorded, expected retry_gave_up\n");
    _fail(file, line);
  }
  ev = &e->rec->events[e->rec->count - 1];
  bwt__event_is(ev, BW_EV_RETRY_GAVE_UP, text, file, line);
  if (ev->field_count != 3) {
    print_error("retry_gave_up has %zu fields, expected 3\n", ev->field_count);
    _fail(file, line);
  }
  bwt__field_uint(ev, 0, "attempts", attempts, file, line);
  bwt__field_str(ev, 1, "cause", why, file, line);
  bwt__field_str(ev, 2, "verdict", verdict, file, line);
}
#define assert_gave_up(e, attempts, why, verdict, text) \
  gave_up_at((e), (attempts), (why), (verdict), (text), __FILE__, __LINE__)

static void scheduled_at(const bwt_event_t *ev, uint32_t attempt, int64_t delay,
                         const char *verdict, const char *text,
                         const char *file, int line) {
  bwt__event_is(ev, BW_EV_RETRY_SCHEDULED, text, file, line);
  if (ev->field_count != 3) {
    print_error("retry_scheduled has %zu fields, expected 3\n",
                ev->field_count);
    _fail(file, line);
  }
  bwt__field_uint(ev, 0, "attempt", attempt, file, line);
  bwt__field_int(ev, 1, "delay_ms", delay, file, line);
  bwt__field_str(ev, 2, "verdict", verdict, file, line);
}
#define assert_scheduled(ev, attempt, delay, verdict, text) \
  scheduled_at((ev), (attempt), (delay), (verdict), (text), __FILE__, __LINE__)

/* ==== names ================================================================
 */

static void verdicts_and_give_up_reasons_have_stable_names(void **state) {
  (void)state;
  assert_string_equal(bw_verdict_name(BW_VERDICT_OK), "ok");
  assert_string_equal(bw_verdict_name(BW_VERDICT_TRANSIENT), "transient");
  assert_string_equal(bw_verdict_name(BW_VERDICT_NOT_SENT), "not_sent");
  assert_string_equal(bw_verdict_name(BW_VERDICT_PERMANENT), "permanent");
  assert_string_equal(bw_verdict_name(BW_VERDICT_REJECTED), "rejected");
  assert_string_equal(bw_verdict_name((bw_verdict_t)5), "unknown");
  assert_string_equal(bw_verdict_name((bw_verdict_t)-1), "unknown");

  assert_string_equal(bw_giveup_name(BW_GIVEUP_NONE), "none");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_EXHAUSTED), "exhausted");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_ELAPSED), "elapsed");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_PERMANENT), "permanent");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_REJECTED), "rejected");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_NOT_IDEMPOTENT),
                      "not_idempotent");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_BUDGET), "budget");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_DEADLINE), "deadline");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_RETRY_AFTER_TOO_LONG),
                      "retry_after_too_long");
  assert_string_equal(bw_giveup_name(BW_GIVEUP_PUSHBACK), "pushback");
  assert_string_equal(bw_giveup_name((bw_giveup_t)10), "unknown");
}

/* ==== configuration ========================================================
 */

static void config_init_fills_the_documented_defaults(void **state) {
  bw_retry_config_t c;
  (void)state;
  memset(&c, 0x5A, sizeof(c));
  bw_retry_config_init(&c);
  assert_string_equal(c.name, "retry");
  assert_u64_eq(c.max_attempts, 3);
  assert_i64_eq(c.max_elapsed_ms, 0);
  assert_false(c.stop_before);
  assert_int_equal(c.backoff, BW_BACKOFF_EXPONENTIAL);
  assert_i64_eq(c.base_ms, 200);
  assert_dbl_eq(c.multiplier, 2.0, 0);
  assert_i64_eq(c.min_ms, 0);
  assert_i64_eq(c.max_ms, 30000);
  assert_int_equal(c.jitter, BW_JITTER_FULL);
  assert_i64_eq(c.jitter_ms, 1000);
  assert_true(c.idempotent);
  assert_true(c.honor_retry_after);
  assert_null(c.budget);
  assert_u64_eq(c.seed, 0);
  assert_null(c.sink);
  assert_null(c.wall_clock);
  assert_status(bw_retry_config_validate(&c, NULL), BW_OK);
  bw_retry_config_init(NULL); /* ignored, no crash */
}

typedef struct bad_case_s {
  const char *what;
  void (*mutate)(bw_retry_config_t *c);
  const char *field;
  const char *message; /* a fragment of the message */
} bad_case_t;

static void name_null(bw_retry_config_t *c) {
  c->name = NULL;
}
static void name_empty(bw_retry_config_t *c) {
  c->name = "";
}
static void name_too_long(bw_retry_config_t *c) {
  static char longname[BW_NAME_MAX + 2];
  memset(longname, 'n', BW_NAME_MAX + 1);
  longname[BW_NAME_MAX + 1] = '\0';
  c->name = longname;
}
static void no_stop_at_all(bw_retry_config_t *c) {
  c->max_attempts = 0;
  c->max_elapsed_ms = 0;
}
static void elapsed_negative(bw_retry_config_t *c) {
  c->max_elapsed_ms = -1;
}
static void elapsed_huge(bw_retry_config_t *c) {
  c->max_elapsed_ms = INT64_MAX;
}
static void stop_before_without_limit(bw_retry_config_t *c) {
  c->stop_before = true;
  c->max_elapsed_ms = 0;
}
static void backoff_unknown(bw_retry_config_t *c) {
  c->backoff = (bw_backoff_t)3;
}
static void backoff_negative(bw_retry_config_t *c) {
  c->backoff = (bw_backoff_t)-1;
}
static void base_zero(bw_retry_config_t *c) {
  c->base_ms = 0;
}
static void base_zero_linear(bw_retry_config_t *c) {
  c->backoff = BW_BACKOFF_LINEAR;
  c->base_ms = 0;
}
static void base_negative(bw_retry_config_t *c) {
  c->base_ms = -200;
}
static void multiplier_below_one(bw_retry_config_t *c) {
  c->multiplier = 0.5;
}
static void multiplier_nan(bw_retry_config_t *c) {
  c->multiplier = NAN;
}
static void multiplier_inf(bw_retry_config_t *c) {
  c->multiplier = INFINITY;
}
static void min_negative(bw_retry_config_t *c) {
  c->min_ms = -1;
}
static void max_below_base(bw_retry_config_t *c) {
  c->base_ms = 500;
  c->max_ms = 499;
}
static void max_below_min(bw_retry_config_t *c) {
  c->base_ms = 100;
  c->min_ms = 800;
  c->max_ms = 799;
}
static void max_huge(bw_retry_config_t *c) {
  c->max_ms = INT64_MAX;
}
static void jitter_unknown(bw_retry_config_t *c) {
  c->jitter = (bw_jitter_t)5;
}
static void additive_negative(bw_retry_config_t *c) {
  c->jitter = BW_JITTER_ADDITIVE;
  c->jitter_ms = -1;
}
static void decorrelated_linear(bw_retry_config_t *c) {
  c->jitter = BW_JITTER_DECORRELATED;
  c->backoff = BW_BACKOFF_LINEAR;
}
static void decorrelated_x3(bw_retry_config_t *c) {
  c->jitter = BW_JITTER_DECORRELATED;
  c->multiplier = 3.0;
}

static const bad_case_t bad_cases[] = {
    {"NULL name", name_null, "name", "name must not be empty"},
    {"empty name", name_empty, "name", "name must not be empty"},
    {"long name", name_too_long, "name", "name must be at most 200 bytes"},
    {"no stop", no_stop_at_all, "max_attempts",
     "max_attempts must be >= 1 unless max_elapsed_ms > 0"},
    {"elapsed < 0", elapsed_negative, "max_elapsed_ms",
     "max_elapsed_ms must be 0 (no limit) or in 1.."},
    {"elapsed huge", elapsed_huge, "max_elapsed_ms", "max_elapsed_ms must be"},
    {"stop_before alone", stop_before_without_limit, "stop_before",
     "stop_before needs max_elapsed_ms > 0"},
    {"backoff 3", backoff_unknown, "backoff",
     "backoff must be constant, linear or exponential (got 3)"},
    {"backoff -1", backoff_negative, "backoff", "backoff must be"},
    {"base 0", base_zero, "base_ms", "base_ms must be in 1.."},
    {"base 0 linear", base_zero_linear, "base_ms",
     "0 only with backoff constant"},
    {"base < 0", base_negative, "base_ms", "(got -200)"},
    {"multiplier 0.5", multiplier_below_one, "multiplier",
     "multiplier must be a finite number >= 1 (got 0.5)"},
    {"multiplier NaN", multiplier_nan, "multiplier", "multiplier must be"},
    {"multiplier inf", multiplier_inf, "multiplier", "multiplier must be"},
    {"min < 0", min_negative, "min_ms", "min_ms must be in 0.."},
    {"max < base", max_below_base, "max_ms",
     "max_ms must be >= max(base_ms, min_ms) = 500"},
    {"max < min", max_below_min, "max_ms",
     "max_ms must be >= max(base_ms, min_ms) = 800"},
    {"max huge", max_huge, "max_ms", "max_ms must be"},
    {"jitter 5", jitter_unknown, "jitter",
     "jitter must be none, full, equal, decorrelated or additive (got 5)"},
    {"additive jitter_ms < 0", additive_negative, "jitter_ms",
     "jitter_ms must be in 0.."},
    {"decorrelated linear", decorrelated_linear, "jitter",
     "needs backoff exponential (got linear)"},
    {"decorrelated x3", decorrelated_x3, "multiplier",
     "multiplier must be 2 with jitter decorrelated"},
};

static void bad_configs_are_refused_naming_the_field(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    const bad_case_t *k = &bad_cases[i];
    bw_retry_config_t c;
    bw_error_t err;
    bw_retry_policy_t *p;
    bw_retry_config_init(&c);
    k->mutate(&c);
    memset(&err, 0, sizeof(err));
    if (bw_retry_config_validate(&c, &err) != BW_E_INVAL) {
      print_error("case '%s' was accepted\n", k->what);
      fail();
    }
    if (strcmp(err.field, k->field) != 0) {
      print_error("case '%s': field \"%s\" != \"%s\"\n", k->what, err.field,
                  k->field);
      fail();
    }
    assert_int_equal(err.code, BW_E_INVAL);
    if (strstr(err.message, k->message) == NULL ||
        strstr(err.message, k->field) == NULL) {
      print_error("case '%s': message \"%s\" lacks \"%s\" or the field\n",
                  k->what, err.message, k->message);
      fail();
    }
    /* The constructor refuses it with the same words. */
    memset(&err, 0, sizeof(err));
    p = bw_retry_policy_new(&c, &err);
    assert_null(p);
    assert_string_equal(err.field, k->field);
    assert_contains(err.message, k->message);
  }
}

static void a_null_config_is_refused(void **state) {
  bw_error_t err;
  (void)state;
  assert_status(bw_retry_config_validate(NULL, &err), BW_E_INVAL);
  assert_string_equal(err.field, "");
  assert_string_equal(err.message, "config must not be NULL");
  assert_null(bw_retry_policy_new(NULL, &err));
  assert_null(bw_retry_policy_new(NULL, NULL)); /* err may be NULL */
}

static void boundary_configs_are_accepted(void **state) {
  bw_retry_config_t c;
  bw_error_t err;
  bw_retry_policy_t *p;
  (void)state;

  bw_retry_config_init(&c); /* no attempt cap, only a time limit */
  c.max_attempts = 0;
  c.max_elapsed_ms = 1;
  assert_status(bw_retry_config_validate(&c, &err), BW_OK);
  assert_string_equal(err.field, "");

  bw_retry_config_init(&c); /* every delay is exactly base_ms = max_ms */
  c.base_ms = 1;
  c.max_ms = 1;
  c.multiplier = 1.0;
  c.jitter_ms = 0;
  c.jitter = BW_JITTER_ADDITIVE;
  assert_status(bw_retry_config_validate(&c, &err), BW_OK);

  bw_retry_config_init(&c); /* min_ms above base_ms (tenacity's min) */
  c.min_ms = 500;
  c.base_ms = 100;
  c.max_ms = 500;
  c.name = "n";
  assert_status(bw_retry_config_validate(&c, &err), BW_OK);

  bw_retry_config_init(&c); /* base 0 on a constant curve: retry at once */
  c.backoff = BW_BACKOFF_CONSTANT;
  c.base_ms = 0;
  c.jitter = BW_JITTER_NONE;
  p = bw_retry_policy_new(&c, &err);
  assert_non_null(p);
  assert_i64_eq(bw_retry_delay_ms(p, 1, NULL, NULL), 0);
  assert_i64_eq(bw_retry_delay_ms(p, 7, NULL, NULL), 0);
  bw_retry_policy_free(p);

  bw_retry_config_init(&c); /* the longest name */
  name_too_long(&c);
  c.name = c.name + 1;
  p = bw_retry_policy_new(&c, &err);
  assert_non_null(p);
  assert_int_equal(strlen(bw_retry_policy_name(p)), BW_NAME_MAX);
  bw_retry_policy_free(p);
  assert_string_equal(bw_retry_policy_name(NULL), "");
  bw_retry_policy_free(NULL);
}

static void the_policy_copies_its_name(void **state) {
  bw_retry_config_t c;
  char name[16];
  bw_retry_policy_t *p;
  (void)state;
  bw_retry_config_init(&c);
  snprintf(name, sizeof(name), "%s", "orders");
  c.name = name;
  p = policy(&c);
  name[0] = 'X';
  assert_string_equal(bw_retry_policy_name(p), "orders");
  bw_retry_policy_free(p);
}

/* ==== presets ==============================================================
 */

static void presets_hold_the_seed_configurations(void **state) {
  static const struct {
    const char *name;
    uint32_t attempts;
    int64_t base, min, max;
    bw_jitter_t jitter;
  } want[] = {
      {"agents", 3, 1000, 0, 30000, BW_JITTER_FULL},
      {"agents.hotel_api", 3, 1000, 0, 30000, BW_JITTER_FULL},
      {"agents.payment_api", 2, 2000, 0, 30000, BW_JITTER_FULL},
      {"agents.search_agent", 4, 500, 0, 30000, BW_JITTER_FULL},
      {"tenacity", 3, 500, 500, 4000, BW_JITTER_NONE},
      {"tenacity.inner", 2, 300, 300, 2000, BW_JITTER_NONE},
      {"polly-lab", 3, 200, 0, 1500, BW_JITTER_DECORRELATED},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    bw_retry_config_t c;
    memset(&c, 0x77, sizeof(c));
    assert_status(bw_retry_config_preset(&c, want[i].name), BW_OK);
    assert_string_equal(c.name, want[i].name);
    assert_u64_eq(c.max_attempts, want[i].attempts);
    assert_int_equal(c.backoff, BW_BACKOFF_EXPONENTIAL);
    assert_dbl_eq(c.multiplier, 2.0, 0);
    assert_i64_eq(c.base_ms, want[i].base);
    assert_i64_eq(c.min_ms, want[i].min);
    assert_i64_eq(c.max_ms, want[i].max);
    assert_int_equal(c.jitter, want[i].jitter);
    /* The rest are bw_retry_config_init's defaults. */
    assert_i64_eq(c.max_elapsed_ms, 0);
    assert_false(c.stop_before);
    assert_true(c.idempotent);
    assert_true(c.honor_retry_after);
    assert_null(c.budget);
    assert_null(c.sink);
    assert_u64_eq(c.seed, 0);
    assert_status(bw_retry_config_validate(&c, NULL), BW_OK);
  }
}

static void an_unknown_preset_is_not_found_and_leaves_the_config(void **state) {
  bw_retry_config_t c;
  (void)state;
  bw_retry_config_init(&c);
  c.base_ms = 777;
  assert_status(bw_retry_config_preset(&c, "backpressure"), BW_E_NOTFOUND);
  assert_status(bw_retry_config_preset(&c, "AGENTS"), BW_E_NOTFOUND);
  assert_status(bw_retry_config_preset(&c, ""), BW_E_NOTFOUND);
  assert_i64_eq(c.base_ms, 777);
  assert_string_equal(c.name, "retry");
  assert_status(bw_retry_config_preset(&c, NULL), BW_E_INVAL);
  assert_status(bw_retry_config_preset(NULL, "agents"), BW_E_INVAL);
}

/* The tenacity article: wait_exponential(multiplier=0.5, min=0.5, max=4) with
 * stop_after_attempt(3) — 0.5 s, then 1 s, then the third failure ends it;
 * before_sleep logs each wait (the retry_scheduled events). */
static void tenacity_waits_half_a_second_then_one_then_gives_up(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  const bwt_event_t *ev;
  uint32_t n;

  assert_status(bw_retry_config_preset(&c, "tenacity"), BW_OK);
  c.sink = e->sink;
  c.wall_clock = e->wall;
  p = policy(&c);

  bw_retry_begin(&r, p, T0);
  assert_u64_eq(bw_retry_attempts(&r), 0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(120), 500);
  assert_reason(&r, BW_GIVEUP_NONE);
  assert_u64_eq(bw_retry_attempts(&r), 1);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(740), 1000);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1860));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);
  assert_u64_eq(bw_retry_attempts(&r), 3);

  assert_int_equal(e->rec->count, 3);
  ev = bwt_event_at(e->rec, 0);
  assert_scheduled(ev, 1, 500, "transient",
                   "transient failure, retry 1 of 2 in 500 ms");
  assert_string_equal(ev->name, "tenacity");
  assert_i64_eq(ev->mono_ns, AT(120));
  assert_i64_eq(ev->wall_ns, BWT_WALL0_NS);
  assert_false(ev->has_context);
  assert_scheduled(bwt_event_at(e->rec, 1), 2, 1000, "transient",
                   "transient failure, retry 2 of 2 in 1000 ms");
  assert_gave_up(e, 3, "exhausted", "transient",
                 "3 attempts made (max_attempts 3)");
  assert_i64_eq(bwt_event_at(e->rec, 2)->mono_ns, AT(1860));

  /* The curve beyond the attempts: 2 s, then the 4 s cap. */
  {
    static const int64_t curve[] = {500, 1000, 2000, 4000, 4000, 4000};
    for (n = 1; n <= 6; n++)
      assert_i64_eq(bw_retry_delay_ms(p, n, NULL, NULL), curve[n - 1]);
  }
  bw_retry_policy_free(p);
}

/* The tenacity article, breaker outside: the inner retry tries twice, 0.3 s
 * apart. */
static void tenacity_inner_retries_once_after_300_ms(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  uint32_t n;
  static const int64_t curve[] = {300, 600, 1200, 2000, 2000};

  assert_status(bw_retry_config_preset(&c, "tenacity.inner"), BW_OK);
  c.sink = e->sink;
  c.wall_clock = e->wall;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(50), 300);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(400));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);
  assert_scheduled(bwt_event_at(e->rec, 0), 1, 300, "transient",
                   "transient failure, retry 1 of 1 in 300 ms");
  assert_gave_up(e, 2, "exhausted", "transient",
                 "2 attempts made (max_attempts 2)");
  for (n = 1; n <= 5; n++)
    assert_i64_eq(bw_retry_delay_ms(p, n, NULL, NULL), curve[n - 1]);
  bw_retry_policy_free(p);
}

/* The asyncio toolkit: random.uniform(0, min(base * 2^k, 30 s)) for k = 0, 1,
 * ...; hotel_api and the default have 3 attempts, payment_api 2 (base 2 s),
 * search_agent 4 (base 0.5 s). */
static void agents_full_jitter_stays_within_the_doubling_bound(void **state) {
  static const struct {
    const char *preset;
    uint32_t attempts;
    int64_t bound[3];
  } presets[] = {
      {"agents", 3, {1000, 2000, 0}},
      {"agents.hotel_api", 3, {1000, 2000, 0}},
      {"agents.payment_api", 2, {2000, 0, 0}},
      {"agents.search_agent", 4, {500, 1000, 2000}},
  };
  size_t i;
  uint64_t seed;
  (void)state;
  for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
    int64_t top[3] = {0, 0, 0};
    for (seed = 1; seed <= 300; seed++) {
      bw_retry_config_t c;
      bw_retry_policy_t *p;
      bw_retry_t r;
      uint32_t k;
      assert_status(bw_retry_config_preset(&c, presets[i].preset), BW_OK);
      c.seed = seed;
      p = policy(&c);
      bw_retry_begin(&r, p, T0);
      for (k = 0; k + 1 < presets[i].attempts; k++) {
        int64_t d = retry_delay(&r, AT(k * 3000));
        assert_true(d >= 0 && d <= presets[i].bound[k]);
        if (d > top[k]) top[k] = d;
      }
      expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10000));
      assert_reason(&r, BW_GIVEUP_EXHAUSTED);
      bw_retry_policy_free(p);
    }
    /* The bound doubles: the k-th retry's draws reach past the previous
     * bound (300 uniform draws all below it would be a broken curve). */
    for (uint32_t k = 1; k + 1 < presets[i].attempts; k++)
      assert_true(top[k] > presets[i].bound[k - 1]);
  }
}

/* The asyncio toolkit: a CircuitOpenError is never retried, and neither is a
 * non-retryable (ValueError, KeyError) business error. */
static void agents_circuit_open_and_business_errors_are_not_retried(
    void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;

  assert_status(bw_retry_config_preset(&c, "agents.hotel_api"), BW_OK);
  c.sink = e->sink;
  c.wall_clock = e->wall;
  c.seed = 11;
  p = policy(&c);

  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_REJECTED, BW_RETRY_AFTER_NONE, AT(1));
  assert_reason(&r, BW_GIVEUP_REJECTED);
  assert_gave_up(e, 1, "rejected", "rejected",
                 "rejected by a breaker, bulkhead or limiter: never retried");

  bw_retry_begin(&r, p, T0);
  (void)retry_delay(&r, AT(5)); /* a timeout first, then a 4xx */
  expect_give_up(&r, BW_VERDICT_PERMANENT, BW_RETRY_AFTER_NONE, AT(900));
  assert_reason(&r, BW_GIVEUP_PERMANENT);
  assert_gave_up(e, 2, "permanent", "permanent",
                 "permanent failure: trying again cannot help");
  assert_int_equal(e->rec->count, 3);
  bw_retry_policy_free(p);
}

/* The Polly lab: 1 + 2 retries, each delay in [0, 1.5 s]; the third failure
 * ends it. */
static void polly_lab_decorrelated_delays_stay_under_the_cap(void **state) {
  uint64_t seed;
  int64_t top = 0;
  (void)state;
  for (seed = 1; seed <= 500; seed++) {
    bw_retry_config_t c;
    bw_retry_policy_t *p;
    bw_retry_t r;
    int64_t d1, d2;
    assert_status(bw_retry_config_preset(&c, "polly-lab"), BW_OK);
    c.seed = seed;
    p = policy(&c);
    bw_retry_begin(&r, p, T0);
    d1 = retry_delay(&r, AT(100));
    d2 = retry_delay(&r, AT(1800));
    /* within the cap, and within what the formula can give:
     * f(1) / 1.4 * 200 = 275.4 ms for the first delay */
    assert_true(d1 >= 0 && d1 <= 1500 && d1 <= 275);
    assert_true(d2 >= 0 && d2 <= 1500);
    if (d2 > top) top = d2;
    expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(3500));
    assert_reason(&r, BW_GIVEUP_EXHAUSTED);
    bw_retry_policy_free(p);
  }
  /* The second delay grows but stays far below the cap: its supremum is
   * (f(2) - f(0)) / 1.4 * 200 = 567.5 ms. */
  assert_true(top > 400 && top <= 567);
}

/* The decorrelated formula, step by step, from the same generator state:
 * t = (n-1) + U, f = 2^t tanh(sqrt(4t)), delay = (f - f_prev) / 1.4 * base,
 * rounded to the nearest ms and capped; the state carries f uncapped. */
static void decorrelated_follows_pollys_formula_exactly(void **state) {
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_rand_t g, h;
  double prev = 0, mine = 0;
  uint32_t n;
  (void)state;
  assert_status(bw_retry_config_preset(&c, "polly-lab"), BW_OK);
  c.max_ms = 30000; /* a high cap, so the curve shows */
  p = policy(&c);
  bw_rand_seed(&g, 20240611);
  h = g;
  for (n = 1; n <= 12; n++) {
    double t = (double)(n - 1) + bw_rand_double(&h);
    double f = exp2(t) * tanh(sqrt(4.0 * t));
    double v = (f - mine) * (1.0 / 1.4) * 200.0;
    int64_t want = v >= 30000.0 ? 30000 : (int64_t)floor(v + 0.5);
    mine = f;
    assert_i64_eq(bw_retry_delay_ms(p, n, &g, &prev), want);
    assert_dbl_eq(prev, mine, mine * 0x1p-49);
  }
  /* NULL state: a fresh one (as for the first retry). */
  h = g;
  {
    double t = bw_rand_double(&h);
    double f = exp2(t) * tanh(sqrt(4.0 * t));
    assert_i64_eq(bw_retry_delay_ms(p, 1, &g, NULL),
                  (int64_t)floor(f * (1.0 / 1.4) * 200.0 + 0.5));
  }
  /* Far beyond 2^1024 the formula overflows: the cap, never garbage. */
  prev = 0;
  assert_i64_eq(bw_retry_delay_ms(p, 2000, &g, &prev), 30000);
  assert_i64_eq(bw_retry_delay_ms(p, 2001, &g, &prev), 30000);
  assert_i64_eq(bw_retry_delay_ms(p, UINT32_MAX, &g, &prev), 30000);
  bw_retry_policy_free(p);
}

/* ==== the backoff curve ====================================================
 */

static bw_retry_policy_t *curve_policy(bw_backoff_t b, int64_t base,
                                       double mult, int64_t min, int64_t max) {
  bw_retry_config_t c;
  bw_retry_config_init(&c);
  c.backoff = b;
  c.base_ms = base;
  c.multiplier = mult;
  c.min_ms = min;
  c.max_ms = max;
  c.jitter = BW_JITTER_NONE;
  c.max_attempts = 0; /* a long curve: the table and past it */
  c.max_elapsed_ms = 1000000;
  return policy(&c);
}

static void assert_curve(const bw_retry_policy_t *p, const int64_t *want,
                         uint32_t n) {
  uint32_t i;
  for (i = 1; i <= n; i++) {
    int64_t got = bw_retry_delay_ms(p, i, NULL, NULL);
    if (got != want[i - 1]) {
      print_error("retry %u: %" PRId64 " != %" PRId64 "\n", i, got,
                  want[i - 1]);
      fail();
    }
  }
}

static void curves_are_exact_and_clamped_to_min_and_max(void **state) {
  static const int64_t constant[] = {100, 100, 100, 100, 100};
  static const int64_t linear[] = {100, 200, 300, 400,  500,  600,
                                   700, 800, 900, 1000, 1000, 1000};
  static const int64_t expo[] = {100, 300, 900, 1000, 1000, 1000};
  static const int64_t constant_min[] = {150, 150, 150};
  static const int64_t linear_min[] = {150, 200, 300};
  static const int64_t expo_min[] = {150, 300, 900, 1000};
  /* base 3 x1.5: 3, 4.5, 6.75, 10.125, 15.19, 22.78 rounded to nearest */
  static const int64_t fractional[] = {3, 5, 7, 10, 15, 23, 34, 51};
  static const int64_t x1[] = {250, 250, 250, 250};
  bw_retry_policy_t *p;
  (void)state;

  p = curve_policy(BW_BACKOFF_CONSTANT, 100, 3.0, 0, 1000);
  assert_curve(p, constant, 5);
  bw_retry_policy_free(p);
  p = curve_policy(BW_BACKOFF_LINEAR, 100, 3.0, 0, 1000);
  assert_curve(p, linear, 12);
  bw_retry_policy_free(p);
  p = curve_policy(BW_BACKOFF_EXPONENTIAL, 100, 3.0, 0, 1000);
  assert_curve(p, expo, 6);
  bw_retry_policy_free(p);

  p = curve_policy(BW_BACKOFF_CONSTANT, 100, 3.0, 150, 1000);
  assert_curve(p, constant_min, 3);
  bw_retry_policy_free(p);
  p = curve_policy(BW_BACKOFF_LINEAR, 100, 3.0, 150, 1000);
  assert_curve(p, linear_min, 3);
  bw_retry_policy_free(p);
  p = curve_policy(BW_BACKOFF_EXPONENTIAL, 100, 3.0, 150, 1000);
  assert_curve(p, expo_min, 4);
  bw_retry_policy_free(p);

  p = curve_policy(BW_BACKOFF_EXPONENTIAL, 3, 1.5, 0, 100000);
  assert_curve(p, fractional, 8);
  bw_retry_policy_free(p);
  p = curve_policy(BW_BACKOFF_EXPONENTIAL, 250, 1.0, 0, 1000);
  assert_curve(p, x1, 4);
  bw_retry_policy_free(p);
}

static void far_retries_saturate_at_max_ms_without_overflow(void **state) {
  bw_retry_policy_t *p;
  (void)state;
  /* x1.0001 grows too slowly to reach the cap inside any table. */
  p = curve_policy(BW_BACKOFF_EXPONENTIAL, 1000, 1.0001, 0, 2000000000);
  assert_i64_eq(bw_retry_delay_ms(p, 1, NULL, NULL), 1000);
  assert_i64_eq(bw_retry_delay_ms(p, 101, NULL, NULL),
                (int64_t)floor(1000.0 * pow(1.0001, 100.0) + 0.5));
  assert_i64_eq(bw_retry_delay_ms(p, UINT32_MAX, NULL, NULL), 2000000000);
  bw_retry_policy_free(p);
  p = curve_policy(BW_BACKOFF_LINEAR, 1000000, 1.0, 0, 2000000000);
  assert_i64_eq(bw_retry_delay_ms(p, 1999, NULL, NULL), 1999000000);
  assert_i64_eq(bw_retry_delay_ms(p, 2001, NULL, NULL), 2000000000);
  assert_i64_eq(bw_retry_delay_ms(p, UINT32_MAX, NULL, NULL), 2000000000);
  bw_retry_policy_free(p);
  p = curve_policy(BW_BACKOFF_EXPONENTIAL, 1, 2.0, 0, 5);
  assert_i64_eq(bw_retry_delay_ms(p, 3, NULL, NULL), 4);
  assert_i64_eq(bw_retry_delay_ms(p, 4, NULL, NULL), 5);
  assert_i64_eq(bw_retry_delay_ms(p, 100000, NULL, NULL), 5);
  bw_retry_policy_free(p);
}

static void delay_ms_refuses_bad_arguments(void **state) {
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_rand_t g;
  (void)state;
  bw_rand_seed(&g, 1);
  bw_retry_config_init(&c); /* full jitter */
  p = policy(&c);
  assert_i64_eq(bw_retry_delay_ms(NULL, 1, &g, NULL), BW_E_INVAL);
  assert_i64_eq(bw_retry_delay_ms(p, 0, &g, NULL), BW_E_INVAL);
  assert_i64_eq(bw_retry_delay_ms(p, 1, NULL, NULL), BW_E_INVAL);
  assert_true(bw_retry_delay_ms(p, 1, &g, NULL) >= 0);
  bw_retry_policy_free(p);
}

/* Every backoff x every jitter: each delay lies in its documented range and
 * inside [min_ms, max_ms], and the draws spread over the range. */
static void every_backoff_and_jitter_stays_in_its_documented_range(
    void **state) {
  static const bw_backoff_t backoffs[] = {
      BW_BACKOFF_CONSTANT, BW_BACKOFF_LINEAR, BW_BACKOFF_EXPONENTIAL};
  static const bw_jitter_t jitters[] = {BW_JITTER_NONE, BW_JITTER_FULL,
                                        BW_JITTER_EQUAL, BW_JITTER_ADDITIVE,
                                        BW_JITTER_DECORRELATED};
  const int64_t base = 100, min = 40, max = 1000, jms = 300;
  size_t bi, ji;
  (void)state;
  for (bi = 0; bi < 3; bi++) {
    for (ji = 0; ji < 5; ji++) {
      bw_retry_config_t c;
      bw_retry_policy_t *p, *curve;
      bw_rand_t g;
      uint32_t n;
      if (jitters[ji] == BW_JITTER_DECORRELATED &&
          backoffs[bi] != BW_BACKOFF_EXPONENTIAL)
        continue; /* refused by validation (tested above) */
      bw_retry_config_init(&c);
      c.backoff = backoffs[bi];
      c.jitter = jitters[ji];
      c.base_ms = base;
      c.min_ms = min;
      c.max_ms = max;
      c.jitter_ms = jms;
      p = policy(&c);
      c.jitter = BW_JITTER_NONE;
      curve = policy(&c);
      bw_rand_seed(&g, 1000 + bi * 10 + ji);
      for (n = 1; n <= 10; n++) {
        int64_t d = bw_retry_delay_ms(curve, n, NULL, NULL), lo, hi;
        int64_t seen_lo = INT64_MAX, seen_hi = INT64_MIN;
        double prev = 0;
        int i;
        switch (jitters[ji]) {
        case BW_JITTER_NONE:
          lo = hi = d;
          break;
        case BW_JITTER_FULL:
          lo = min;
          hi = d;
          break;
        case BW_JITTER_EQUAL:
          lo = d / 2 > min ? d / 2 : min;
          hi = d;
          break;
        case BW_JITTER_ADDITIVE:
          lo = d;
          hi = d + jms < max ? d + jms : max;
          break;
        default:
          lo = min;
          hi = max;
          break;
        }
        for (i = 0; i < 2000; i++) {
          int64_t x;
          if (jitters[ji] == BW_JITTER_DECORRELATED) {
            /* the n-th retry after n-1 earlier ones */
            uint32_t k;
            prev = 0;
            for (k = 1; k < n; k++)
              (void)bw_retry_delay_ms(p, k, &g, &prev);
          }
          x = bw_retry_delay_ms(p, n, &g, &prev);
          if (x < lo || x > hi || x < min || x > max) {
            print_error("backoff %zu jitter %zu retry %u: %" PRId64
                        " outside [%" PRId64 ", %" PRId64 "]\n",
                        bi, ji, n, x, lo, hi);
            fail();
          }
          if (x < seen_lo) seen_lo = x;
          if (x > seen_hi) seen_hi = x;
        }
        /* The draws cover the range (within 5 % of each end); additive at
         * the cap is pinned to max_ms by design. */
        if (jitters[ji] != BW_JITTER_DECORRELATED) {
          assert_true(seen_lo <= lo + (hi - lo) / 20);
          assert_true(seen_hi >= hi - (hi - lo) / 20);
        }
      }
      bw_retry_policy_free(p);
      bw_retry_policy_free(curve);
    }
  }
}

/* ==== stopping: attempts, elapsed, stop_before ===============================
 */

static void one_attempt_means_no_retry(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "once");
  c.max_attempts = 1;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(3));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);
  assert_int_equal(e->rec->count, 1);
  assert_gave_up(e, 1, "exhausted", "transient",
                 "1 attempt made (max_attempts 1)");
  bw_retry_policy_free(p);
}

/* stop_after_delay: a retry is allowed while the time since begin is below
 * the limit at the decision, however many attempts that takes. */
static void max_elapsed_alone_allows_retries_until_the_limit(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  int i;
  plain(e, &c, "elapsed");
  c.max_attempts = 0;
  c.max_elapsed_ms = 1000;
  c.base_ms = 10;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  for (i = 0; i < 50; i++) /* far beyond the default 3 attempts */
    expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(i * 10), 10);
  /* The delay may end past the limit: without stop_before only the time at
   * the decision counts. */
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(999), 10);
  assert_scheduled(bwt_event_at(e->rec, 50), 51, 10, "transient",
                   "transient failure, retry 51 in 10 ms");
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1000));
  assert_reason(&r, BW_GIVEUP_ELAPSED);
  assert_gave_up(
      e, 52, "elapsed", "transient",
      "1000 ms elapsed since the first attempt (max_elapsed_ms 1000)");
  bw_retry_policy_free(p);
}

static void both_caps_stop_at_whichever_comes_first(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "both");
  c.max_attempts = 3;
  c.max_elapsed_ms = 1000;
  p = policy(&c);

  bw_retry_begin(&r, p, T0); /* attempts first */
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10), 200);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(220), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(430));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);

  bw_retry_begin(&r, p, T0); /* time first: a slow attempt */
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1210));
  assert_reason(&r, BW_GIVEUP_ELAPSED);
  assert_gave_up(
      e, 2, "elapsed", "transient",
      "1210 ms elapsed since the first attempt (max_elapsed_ms 1000)");

  bw_retry_begin(&r, p, T0); /* both at once: attempts are checked first */
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10), 200);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(20), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(5000));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);
  bw_retry_policy_free(p);
}

/* tenacity PR 423: stop_before_delay refuses a sleep that would carry the
 * next attempt to or past the limit. */
static void stop_before_refuses_a_delay_that_ends_at_the_limit(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p, *q;
  bw_retry_t r;
  plain(e, &c, "before");
  c.max_attempts = 0;
  c.max_elapsed_ms = 1000;
  c.base_ms = 300;
  c.stop_before = true;
  p = policy(&c);
  c.stop_before = false;
  q = policy(&c);

  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(699), 300);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(700));
  assert_reason(&r, BW_GIVEUP_ELAPSED);
  assert_gave_up(e, 2, "elapsed", "transient",
                 "a 300 ms delay after 700 ms would end at or past "
                 "max_elapsed_ms 1000 (stop_before)");

  bw_retry_begin(&r, q, T0); /* without it, the same moment retries */
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(700), 300);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(999), 300);

  /* A Retry-After hint lengthens the delay that must fit. */
  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, 900, AT(100));
  assert_reason(&r, BW_GIVEUP_ELAPSED);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, 899, AT(100), 899);
  bw_retry_policy_free(p);
  bw_retry_policy_free(q);
}

static void elapsed_counts_from_begin_and_a_clock_before_it_counts_zero(
    void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "begin");
  c.max_attempts = 0;
  c.max_elapsed_ms = 500;
  p = policy(&c);
  bw_retry_begin(&r, p, AT(1000));
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(900), 200);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1499), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1500));
  assert_reason(&r, BW_GIVEUP_ELAPSED);
  bw_retry_policy_free(p);
}

/* ==== verdicts ==============================================================
 */

static void ok_is_done_and_stays_done(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "ok");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1), 200);
  expect_done(&r, BW_VERDICT_OK, AT(300));
  assert_reason(&r, BW_GIVEUP_NONE);
  assert_u64_eq(bw_retry_attempts(&r), 2);
  /* Whatever comes next, the answer is the same and nothing is counted. */
  expect_done(&r, BW_VERDICT_TRANSIENT, AT(400));
  expect_done(&r, BW_VERDICT_PERMANENT, AT(400));
  assert_u64_eq(bw_retry_attempts(&r), 2);
  assert_int_equal(e->rec->count, 1); /* the one retry_scheduled */
  bw_retry_policy_free(p);
}

static void permanent_and_rejected_give_up_at_once_and_stay_given_up(
    void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "perm");
  c.max_attempts = 10;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_PERMANENT, BW_RETRY_AFTER_NONE, AT(1));
  assert_reason(&r, BW_GIVEUP_PERMANENT);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(2));
  expect_give_up(&r, BW_VERDICT_OK, BW_RETRY_AFTER_NONE, AT(3));
  assert_reason(&r, BW_GIVEUP_PERMANENT);
  assert_u64_eq(bw_retry_attempts(&r), 1);
  assert_int_equal(e->rec->count, 1);
  assert_gave_up(e, 1, "permanent", "permanent",
                 "permanent failure: trying again cannot help");

  /* A hint never revives a permanent failure or a rejection. */
  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_REJECTED, 100, AT(1));
  assert_reason(&r, BW_GIVEUP_REJECTED);
  bw_retry_policy_free(p);
}

static void not_sent_is_retried_like_a_transient_failure(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "refused");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE, AT(1), 200);
  assert_scheduled(bwt_event_at(e->rec, 0), 1, 200, "not_sent",
                   "request not sent, retry 1 of 2 in 200 ms");
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(300), 200);
  expect_give_up(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE, AT(600));
  assert_gave_up(e, 3, "exhausted", "not_sent",
                 "3 attempts made (max_attempts 3)");
  bw_retry_policy_free(p);
}

static void bad_arguments_to_next_are_refused_and_change_nothing(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r, before, empty;
  int64_t d = 77;
  plain(e, &c, "inval");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  memcpy(&before, &r, sizeof(r));
  assert_status(bw_retry_next(&r, (bw_verdict_t)5, -1, AT(1), &d), BW_E_INVAL);
  assert_status(bw_retry_next(&r, (bw_verdict_t)-1, -1, AT(1), &d), BW_E_INVAL);
  assert_status(bw_retry_next(&r, BW_VERDICT_TRANSIENT, -3, AT(1), &d),
                BW_E_INVAL);
  assert_status(bw_retry_next(&r, BW_VERDICT_TRANSIENT, INT64_MIN, AT(1), &d),
                BW_E_INVAL);
  assert_status(bw_retry_next(&r, BW_VERDICT_TRANSIENT, -1, AT(1), NULL),
                BW_E_INVAL);
  assert_status(bw_retry_next(NULL, BW_VERDICT_TRANSIENT, -1, AT(1), &d),
                BW_E_INVAL);
  assert_i64_eq(d, 77);
  assert_memory_equal(&r, &before, sizeof(r));
  assert_int_equal(e->rec->count, 0);

  bw_retry_begin(&empty, NULL, T0); /* begun without a policy */
  assert_status(bw_retry_next(&empty, BW_VERDICT_OK, -1, AT(1), &d),
                BW_E_INVAL);
  bw_retry_begin(NULL, p, T0); /* ignored */
  assert_u64_eq(bw_retry_attempts(NULL), 0);
  assert_int_equal(bw_retry_reason(NULL), BW_GIVEUP_NONE);
  bw_retry_policy_free(p);
}

/* ==== idempotency ===========================================================
 */

static void non_idempotent_calls_retry_only_what_was_never_sent(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "charge");
  c.idempotent = false;
  p = policy(&c);

  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE, AT(1), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(300));
  assert_reason(&r, BW_GIVEUP_NOT_IDEMPOTENT);
  assert_gave_up(e, 2, "not_idempotent", "transient",
                 "transient failure of a non-idempotent call without an "
                 "idempotency key: the request may have taken effect");

  /* The cap is checked before idempotency. */
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE, AT(1), 200);
  expect_retry(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE, AT(300), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(600));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);
  bw_retry_policy_free(p);
}

static void an_idempotency_key_makes_a_non_idempotent_call_retryable(
    void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  const char *key, *again;
  char copy[37], prefix[16];
  int64_t unix_ms = BWT_WALL0_NS / MS;
  plain(e, &c, "charge");
  c.idempotent = false;
  c.seed = 99;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  key = bw_retry_attach_key(&r, unix_ms);
  assert_non_null(key);
  assert_int_equal(strlen(key), 36);
  snprintf(prefix, sizeof(prefix), "%08llx-%04llx",
           (unsigned long long)(unix_ms >> 16),
           (unsigned long long)(unix_ms & 0xffff));
  assert_memory_equal(key, prefix, 13);
  assert_int_equal(key[14], '7');
  snprintf(copy, sizeof(copy), "%s", key);
  again = bw_retry_attach_key(&r, unix_ms + 5000); /* same call, same key */
  assert_string_equal(again, copy);
  assert_ptr_equal(again, key);

  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1), 200);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(300), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(600));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);
  assert_string_equal(r.idempotency_key, copy);

  /* A new logical call gets a new key. */
  bw_retry_begin(&r, p, T0);
  assert_string_not_equal(bw_retry_attach_key(&r, unix_ms), copy);
  assert_null(bw_retry_attach_key(NULL, unix_ms));
  bw_retry_policy_free(p);
}

/* ==== Retry-After and pushback ===============================================
 */

static void a_retry_after_hint_is_the_minimum_delay(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "hint");
  c.max_attempts = 5;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, 500, AT(1), 500);
  assert_scheduled(bwt_event_at(e->rec, 0), 1, 500, "transient",
                   "transient failure, retry 1 of 4 in 500 ms (Retry-After "
                   "500 ms)");
  expect_retry(&r, BW_VERDICT_TRANSIENT, 100, AT(600), 200); /* backoff wins */
  assert_scheduled(bwt_event_at(e->rec, 1), 2, 200, "transient",
                   "transient failure, retry 2 of 4 in 200 ms (Retry-After "
                   "100 ms)");
  expect_retry(&r, BW_VERDICT_TRANSIENT, 0, AT(900), 200);
  expect_retry(&r, BW_VERDICT_TRANSIENT, 1000, AT(1200), 1000); /* = max */
  bw_retry_policy_free(p);
}

static void a_hint_above_max_ms_gives_up_as_too_long(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "hint");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, 1001, AT(1));
  assert_reason(&r, BW_GIVEUP_RETRY_AFTER_TOO_LONG);
  assert_gave_up(e, 1, "retry_after_too_long", "transient",
                 "Retry-After 1001 ms exceeds max_ms 1000");
  bw_retry_policy_free(p);
}

static void a_hint_ending_at_the_deadline_gives_up_as_too_long(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  bw_deadline_t d = {AT(1000)};
  plain(e, &c, "hint");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  bw_retry_set_deadline(&r, d);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, 800, AT(200));
  assert_reason(&r, BW_GIVEUP_RETRY_AFTER_TOO_LONG);
  assert_gave_up(e, 1, "retry_after_too_long", "transient",
                 "Retry-After 800 ms would end at or past the deadline (800 "
                 "ms left)");
  bw_retry_begin(&r, p, T0);
  bw_retry_set_deadline(&r, d);
  expect_retry(&r, BW_VERDICT_TRANSIENT, 799, AT(200), 799);
  bw_retry_policy_free(p);
}

static void never_is_pushback_even_when_hints_are_not_honoured(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p, *q;
  bw_retry_t r;
  plain(e, &c, "push");
  p = policy(&c);
  c.honor_retry_after = false;
  q = policy(&c);

  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NEVER, AT(1));
  assert_reason(&r, BW_GIVEUP_PUSHBACK);
  assert_gave_up(e, 1, "pushback", "transient", "the server said not to retry");

  bw_retry_begin(&r, q, T0);
  expect_give_up(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NEVER, AT(1));
  assert_reason(&r, BW_GIVEUP_PUSHBACK);

  /* Not honoured: a hint is ignored, even one beyond max_ms or the
   * deadline, and the event does not mention it. */
  bw_retry_begin(&r, q, T0);
  bw_retry_set_deadline(&r, (bw_deadline_t){AT(1000)});
  expect_retry(&r, BW_VERDICT_TRANSIENT, 5000, AT(1), 200);
  assert_scheduled(bwt_event_at(e->rec, e->rec->count - 1), 1, 200, "transient",
                   "transient failure, retry 1 of 2 in 200 ms");
  bw_retry_policy_free(p);
  bw_retry_policy_free(q);
}

static void a_hint_raises_a_jittered_delay_too(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  int i;
  plain(e, &c, "jhint");
  c.jitter = BW_JITTER_FULL;
  c.seed = 5;
  c.sink = NULL;
  p = policy(&c);
  for (i = 0; i < 200; i++) {
    bw_retry_t r;
    int64_t d;
    bw_retry_begin(&r, p, T0);
    assert_int_equal(bw_retry_next(&r, BW_VERDICT_TRANSIENT, 150, AT(1), &d),
                     BW_RETRY);
    assert_true(d >= 150 && d <= 200);
  }
  bw_retry_policy_free(p);
}

/* ==== deadlines =============================================================
 */

static void the_thread_deadline_at_begin_bounds_every_delay(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  bw_deadline_t prev;
  plain(e, &c, "dl");
  c.base_ms = 500;
  c.max_attempts = 10;
  p = policy(&c);

  prev = bw_deadline_set(bw_deadline_in(T0, 1000));
  bw_retry_begin(&r, p, T0);
  bw_deadline_set(prev); /* the iterator took it at begin */
  assert_i64_eq(r.deadline_ns, AT(1000));
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(499), 500);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(500));
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  assert_gave_up(e, 2, "deadline", "transient",
                 "a 500 ms delay would end at or past the deadline (500 ms "
                 "left)");

  /* Without a thread deadline there is none. */
  bw_retry_begin(&r, p, T0);
  assert_i64_eq(r.deadline_ns, BW_DEADLINE_NONE_NS);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(100000), 500);
  bw_retry_policy_free(p);
}

static void a_passed_deadline_gives_up_even_for_a_zero_delay(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "dl");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  bw_retry_set_deadline(&r, (bw_deadline_t){AT(100)});
  expect_give_up(&r, BW_VERDICT_TRANSIENT, 0, AT(350));
  /* A passed deadline is the deadline's doing, not the hint's. */
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  bw_retry_begin(&r, p, T0);
  bw_retry_set_deadline(&r, (bw_deadline_t){AT(100)});
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(350));
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  assert_gave_up(e, 1, "deadline", "transient", "deadline passed 250 ms ago");
  bw_retry_policy_free(p);
}

static void set_deadline_only_narrows(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "dl");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  bw_retry_set_deadline(&r, (bw_deadline_t){AT(900)});
  bw_retry_set_deadline(&r, (bw_deadline_t){AT(5000)});
  bw_retry_set_deadline(&r, bw_deadline_none());
  assert_i64_eq(r.deadline_ns, AT(900));
  bw_retry_set_deadline(&r, (bw_deadline_t){AT(800)});
  assert_i64_eq(r.deadline_ns, AT(800));
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(599), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(600));
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  bw_retry_set_deadline(NULL, bw_deadline_none()); /* ignored */
  bw_retry_policy_free(p);
}

/* ==== budgets ===============================================================
 */

static bw_budget_t *token_bucket(double max_tokens, double ratio) {
  bw_budget_config_t bc;
  bw_error_t err;
  bw_budget_t *b;
  bw_budget_config_init(&bc);
  bc.name = "partner";
  bc.kind = BW_BUDGET_TOKEN_BUCKET;
  bc.max_tokens = max_tokens;
  bc.token_ratio = ratio;
  b = bw_budget_new(&bc, &err);
  if (b == NULL) print_error("bw_budget_new: %s\n", err.message);
  assert_non_null(b);
  return b;
}

static bw_budget_stats_t budget_stats(const bw_budget_t *b) {
  bw_budget_stats_t s;
  memset(&s, 0, sizeof(s));
  bw_budget_stats(b, &s);
  return s;
}

/* ==== the steps of a driver's loop ========================================
 * bw_retry_start and bw_retry_check_deadline: what the threads driver's
 * bw_retry_call is made of. */

/* A deadline already passed at start: given up before any attempt, with
 * verdict not_sent, and no request reaches the budget. */
static void start_with_a_passed_deadline_gives_up_and_reports_nothing(
    void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_budget_t *b = token_bucket(10, 1);
  bw_budget_stats_t s;
  bw_retry_t r;
  bw_deadline_t prev;
  int64_t d = -1;
  plain(e, &c, "start");
  c.budget = b;
  p = policy(&c);
  prev = bw_deadline_set(bw_deadline_in(T0, 20));
  assert_status(bw_retry_start(&r, p, AT(50)), BW_RETRY_GIVE_UP);
  bw_deadline_set(prev);
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  assert_u64_eq(bw_retry_attempts(&r), 0);
  assert_int_equal(e->rec->count, 1);
  assert_gave_up(e, 0, "deadline", "not_sent", "deadline passed 30 ms ago");
  assert_i64_eq(bwt_event_at(e->rec, 0)->mono_ns, AT(50));
  s = budget_stats(b);
  assert_u64_eq(s.requests, 0);
  assert_u64_eq(s.failures, 0);
  /* Given up it stays, reporting nothing more. */
  assert_int_equal(
      bw_retry_next(&r, BW_VERDICT_OK, BW_RETRY_AFTER_NONE, AT(60), &d),
      BW_RETRY_GIVE_UP);
  assert_i64_eq(d, 0);
  assert_status(bw_retry_check_deadline(&r, BW_VERDICT_OK, AT(60)),
                BW_RETRY_GIVE_UP);
  assert_int_equal(e->rec->count, 1);
  assert_u64_eq(budget_stats(b).successes, 0);
  bw_retry_policy_free(p);
  bw_budget_free(b);
}

/* A deadline still ahead (or none): start is bw_retry_begin, request
 * reported, and the iterator takes the thread's deadline. */
static void start_in_time_is_begin_and_reports_the_request(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_budget_t *b = token_bucket(10, 1);
  bw_retry_t r;
  bw_deadline_t prev;
  plain(e, &c, "start");
  c.max_attempts = 5;
  c.budget = b;
  p = policy(&c);
  prev = bw_deadline_set(bw_deadline_in(T0, 1000));
  assert_status(bw_retry_start(&r, p, AT(999)), BW_RETRY);
  bw_deadline_set(prev);
  assert_u64_eq(budget_stats(b).requests, 1);
  assert_int_equal(e->rec->count, 0);
  assert_reason(&r, BW_GIVEUP_NONE);
  /* the deadline came along: a 200 ms delay no longer fits */
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(999));
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  assert_status(bw_retry_start(&r, p, T0), BW_RETRY); /* no deadline */
  assert_u64_eq(budget_stats(b).requests, 2);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10), 200);
  assert_status(bw_retry_start(NULL, p, T0), BW_E_INVAL);
  assert_status(bw_retry_start(&r, NULL, T0), BW_E_INVAL);
  assert_u64_eq(bw_retry_attempts(&r), 1); /* untouched by the refusals */
  assert_u64_eq(budget_stats(b).requests, 2);
  bw_retry_policy_free(p);
  bw_budget_free(b);
}

/* After a wait: in time, nothing changes; at or past the deadline, given up
 * with the last verdict, the event at that time. */
static void check_deadline_gives_up_only_once_the_deadline_has_passed(
    void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  bw_deadline_t prev;
  plain(e, &c, "late");
  c.max_attempts = 5;
  p = policy(&c);
  prev = bw_deadline_set(bw_deadline_in(T0, 1000));
  assert_status(bw_retry_start(&r, p, T0), BW_RETRY);
  bw_deadline_set(prev);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10), 200);
  assert_int_equal(e->rec->count, 1); /* retry_scheduled */
  assert_status(bw_retry_check_deadline(&r, BW_VERDICT_TRANSIENT, AT(999)),
                BW_RETRY);
  assert_reason(&r, BW_GIVEUP_NONE);
  assert_int_equal(e->rec->count, 1);
  assert_status(bw_retry_check_deadline(&r, BW_VERDICT_NOT_SENT, AT(1000)),
                BW_RETRY_GIVE_UP);
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  assert_int_equal(e->rec->count, 2);
  assert_gave_up(e, 1, "deadline", "not_sent", "deadline passed 0 ms ago");
  assert_i64_eq(bwt_event_at(e->rec, 1)->mono_ns, AT(1000));
  assert_status(bw_retry_check_deadline(&r, BW_VERDICT_NOT_SENT, AT(1500)),
                BW_RETRY_GIVE_UP);
  assert_int_equal(e->rec->count, 2);

  /* No deadline: never; done stays done. */
  bw_retry_begin(&r, p, T0);
  assert_status(bw_retry_check_deadline(&r, BW_VERDICT_TRANSIENT, INT64_MAX),
                BW_RETRY);
  expect_done(&r, BW_VERDICT_OK, AT(1));
  assert_status(bw_retry_check_deadline(&r, BW_VERDICT_OK, AT(2)),
                BW_RETRY_DONE);
  assert_int_equal(e->rec->count, 2);
  bw_retry_policy_free(p);
}

static void check_deadline_refuses_bad_arguments(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "bad");
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  bw_retry_set_deadline(&r, (bw_deadline_t){T0}); /* passed: refusals only */
  assert_status(bw_retry_check_deadline(NULL, BW_VERDICT_OK, T0), BW_E_INVAL);
  assert_status(bw_retry_check_deadline(&r, (bw_verdict_t)5, T0), BW_E_INVAL);
  assert_reason(&r, BW_GIVEUP_NONE);
  bw_retry_begin(&r, NULL, T0);
  assert_status(bw_retry_check_deadline(&r, BW_VERDICT_OK, T0), BW_E_INVAL);
  assert_int_equal(e->rec->count, 0);
  bw_retry_policy_free(p);
}

/* A token bucket of 2 (gRPC throttling: a retry needs tokens > 1): each
 * failed attempt costs a token, so after the failures the retry is denied,
 * and the call gives up with reason budget. */
static void a_drained_budget_denies_the_retry(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_budget_t *b = token_bucket(2, 1);
  bw_budget_stats_t s;
  bw_retry_t r;
  plain(e, &c, "budgeted");
  c.max_attempts = 5;
  c.budget = b;
  p = policy(&c);

  bw_retry_begin(&r, p, T0); /* a success keeps the bucket full */
  expect_done(&r, BW_VERDICT_OK, AT(1));
  s = budget_stats(b);
  assert_u64_eq(s.requests, 1);
  assert_u64_eq(s.successes, 1);
  assert_dbl_eq(s.tokens, 2.0, 1e-9);

  bw_retry_begin(&r, p, T0); /* one failure: 1 token, not > 1: denied */
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10));
  assert_reason(&r, BW_GIVEUP_BUDGET);
  assert_gave_up(e, 1, "budget", "transient",
                 "retry budget 'partner' denied a 200 ms retry");
  s = budget_stats(b);
  assert_u64_eq(s.requests, 2);
  assert_u64_eq(s.failures, 1);
  assert_u64_eq(s.allowed, 0);
  assert_u64_eq(s.denied, 1);
  assert_dbl_eq(s.tokens, 1.0, 1e-9);

  bw_retry_begin(&r, p, T0); /* a success refills a token: allowed again */
  expect_done(&r, BW_VERDICT_OK, AT(1));
  bw_retry_begin(&r, p, T0);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(10));
  assert_reason(&r, BW_GIVEUP_BUDGET);
  bw_retry_policy_free(p);
  bw_budget_free(b);
}

static void a_budget_allows_retries_while_it_has_tokens(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_budget_t *b = token_bucket(4, 0.5);
  bw_budget_stats_t s;
  bw_retry_t r;
  plain(e, &c, "budgeted");
  c.max_attempts = 5;
  c.budget = b;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1),
               200); /* 3 > 2 */
  expect_give_up(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE, AT(300)); /* 2 */
  assert_reason(&r, BW_GIVEUP_BUDGET);
  s = budget_stats(b);
  assert_u64_eq(s.requests, 1);
  assert_u64_eq(s.failures, 2);
  assert_u64_eq(s.allowed, 1);
  assert_u64_eq(s.denied, 1);
  bw_retry_policy_free(p);
  bw_budget_free(b);
}

/* The budget is asked last: a retry refused for another reason (here each
 * reason in turn) never spends it, and permanent failures and rejections
 * are not the dependency's failures. */
static void a_retry_refused_for_another_reason_spends_no_budget(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_budget_t *b = token_bucket(100, 1);
  bw_budget_stats_t s;
  bw_retry_t r;
  plain(e, &c, "budgeted");
  c.max_attempts = 1;
  c.budget = b;
  p = policy(&c);
  bw_retry_begin(&r, p, T0); /* exhausted */
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1));
  bw_retry_policy_free(p);

  c.max_attempts = 3;
  c.idempotent = false;
  p = policy(&c);
  bw_retry_begin(&r, p, T0); /* not idempotent */
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1));
  bw_retry_begin(&r, p, T0); /* pushback */
  expect_give_up(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NEVER, AT(1));
  bw_retry_begin(&r, p, T0); /* too long */
  expect_give_up(&r, BW_VERDICT_NOT_SENT, 5000, AT(1));
  bw_retry_begin(&r, p, T0); /* deadline */
  bw_retry_set_deadline(&r, (bw_deadline_t){AT(100)});
  expect_give_up(&r, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE, AT(1));
  assert_reason(&r, BW_GIVEUP_DEADLINE);
  bw_retry_begin(&r, p, T0); /* permanent: no failure reported */
  expect_give_up(&r, BW_VERDICT_PERMANENT, BW_RETRY_AFTER_NONE, AT(1));
  bw_retry_begin(&r, p, T0); /* rejected: no failure reported */
  expect_give_up(&r, BW_VERDICT_REJECTED, BW_RETRY_AFTER_NONE, AT(1));
  s = budget_stats(b);
  assert_u64_eq(s.requests, 7);
  assert_u64_eq(s.failures, 5);
  assert_u64_eq(s.successes, 0);
  assert_u64_eq(s.allowed, 0);
  assert_u64_eq(s.denied, 0);
  bw_retry_policy_free(p);
  bw_budget_free(b);
}

/* ==== events ================================================================
 */

static void events_carry_the_thread_context(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  static const bw_kv_t kv[] = {{"request_id", "3e7a9c10"}};
  static const bw_context_t ctx = {kv, 1};
  const bw_context_t *prev;
  plain(e, &c, "ctx");
  c.max_attempts = 2;
  p = policy(&c);
  prev = bw_context_set(&ctx);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(300));
  bw_context_set(prev);
  assert_int_equal(e->rec->count, 2);
  for (size_t i = 0; i < 2; i++) {
    const bwt_event_t *ev = bwt_event_at(e->rec, i);
    assert_true(ev->has_context);
    assert_int_equal(ev->context_count, 1);
    assert_string_equal(ev->context[0].key, "request_id");
    assert_string_equal(ev->context[0].value, "3e7a9c10");
  }
  bw_retry_policy_free(p);
}

static void without_a_sink_nothing_is_emitted_and_decisions_match(
    void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r;
  plain(e, &c, "quiet");
  c.sink = NULL;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(1), 200);
  expect_retry(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(2), 200);
  expect_give_up(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, AT(3));
  assert_reason(&r, BW_GIVEUP_EXHAUSTED);
  assert_int_equal(e->rec->count, 0);
  bw_retry_policy_free(p);
}

/* ==== seeds and streams =====================================================
 */

/* The iterator draws from its own SplitMix64 stream (not the bw_rand_t of
 * bw_retry_delay_ms): 10^5 iterators of one seeded policy, one retry each,
 * at the 4th retry (curve 800 ms) for full and equal jitter, and with 1000
 * ms of additive jitter. Every delay lies in its range; the mean and each of
 * 10 equal bins are within 5 standard errors of the uniform law's; both
 * ends of the range are drawn. */
static void iterator_jitter_is_uniform_over_its_range(void **state) {
  static const struct {
    bw_jitter_t j;
    int64_t lo, hi;
  } kinds[] = {{BW_JITTER_FULL, 0, 800},
               {BW_JITTER_EQUAL, 400, 800},
               {BW_JITTER_ADDITIVE, 800, 1800}};
  enum { ITERS = 100000, BINS = 10 };
  (void)state;
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    bw_retry_config_t c;
    bw_retry_policy_t *p;
    long bins[BINS] = {0};
    double sum = 0, width = (double)(kinds[k].hi - kinds[k].lo + 1);
    double mean, sd, se_bin, want_bin = (double)ITERS / BINS;
    bool low = false, high = false;
    bw_retry_config_init(&c);
    c.base_ms = 100;
    c.max_ms = 100000;
    c.max_attempts = 5;
    c.jitter = kinds[k].j;
    c.jitter_ms = 1000;
    c.seed = 77 + k;
    p = policy(&c);
    for (long i = 0; i < ITERS; i++) {
      bw_retry_t r;
      int64_t d = 0;
      bw_retry_begin(&r, p, T0);
      for (int a = 0; a < 4; a++)
        assert_int_equal(bw_retry_next(&r, BW_VERDICT_TRANSIENT,
                                       BW_RETRY_AFTER_NONE, T0, &d),
                         BW_RETRY);
      assert_in_range(d, kinds[k].lo, kinds[k].hi);
      low |= d == kinds[k].lo;
      high |= d == kinds[k].hi;
      sum += (double)d;
      bins[(long)((double)(d - kinds[k].lo) * BINS / width)]++;
    }
    mean = sum / ITERS;
    sd = sqrt((width * width - 1) / 12.0); /* discrete uniform */
    assert_dbl_eq(mean, (double)(kinds[k].lo + kinds[k].hi) / 2.0,
                  5 * sd / sqrt((double)ITERS));
    se_bin = sqrt(want_bin * (1.0 - 1.0 / BINS));
    for (int b = 0; b < BINS; b++) /* bins differ by at most 1 value */
      assert_dbl_eq((double)bins[b], want_bin, 5 * se_bin + want_bin / 80);
    assert_true(low && high);
    bw_retry_policy_free(p);
  }
}

static void seeded_iterators_differ_yet_the_program_is_reproducible(
    void **state) {
  bw_retry_config_t c;
  bw_retry_policy_t *p, *q;
  int64_t first[8][4], second[8][4];
  int i, k, same = 0;
  (void)state;
  bw_retry_config_init(&c);
  c.max_attempts = 5;
  c.base_ms = 1000;
  c.seed = 424242;
  p = policy(&c);
  q = policy(&c);
  for (i = 0; i < 8; i++) {
    bw_retry_t r, s;
    bw_retry_begin(&r, p, T0);
    bw_retry_begin(&s, q, T0);
    for (k = 0; k < 4; k++) {
      first[i][k] = retry_delay(&r, AT(k));
      second[i][k] = retry_delay(&s, AT(k));
    }
  }
  /* Two policies with one seed, begun in the same order: the same delays. */
  assert_memory_equal(first, second, sizeof(first));
  /* Iterators of one policy: different streams. */
  for (i = 1; i < 8; i++)
    for (k = 0; k < 4; k++)
      if (first[i][k] == first[0][k]) same++;
  assert_true(same <= 2);
  bw_retry_policy_free(p);
  bw_retry_policy_free(q);
}

static void unseeded_iterators_draw_from_the_os(void **state) {
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_retry_t r, s;
  int k, same = 0;
  (void)state;
  bw_retry_config_init(&c);
  c.max_attempts = 9;
  c.base_ms = 10000;
  c.max_ms = 10000;
  p = policy(&c);
  bw_retry_begin(&r, p, T0);
  bw_retry_begin(&s, p, T0);
  for (k = 0; k < 8; k++)
    if (retry_delay(&r, AT(k)) == retry_delay(&s, AT(k))) same++;
  assert_true(same <= 1); /* 1 in 10001 per position by chance */
  bw_retry_policy_free(p);
}

/* Many threads begin iterators of one seeded policy at once: the stream
 * counter hands out each stream exactly once. Conservation: the keys made
 * concurrently (one per iterator, each from its iterator's stream) are
 * exactly the keys a fresh policy with the same seed makes sequentially. */
enum { KEY_THREADS = 4, KEYS_PER_THREAD = 500 };

typedef struct key_job_s {
  const bw_retry_policy_t *p;
  char (*keys)[37];
} key_job_t;

static void *make_keys(void *arg) {
  key_job_t *job = arg;
  int i;
  for (i = 0; i < KEYS_PER_THREAD; i++) {
    bw_retry_t r;
    bw_retry_begin(&r, job->p, T0);
    snprintf(job->keys[i], 37, "%s", bw_retry_attach_key(&r, 1));
  }
  return NULL;
}

static int cmp_key(const void *x, const void *y) {
  return memcmp(x, y, 37);
}

static void concurrent_iterators_each_get_their_own_stream(void **state) {
  enum { ALL = KEY_THREADS * KEYS_PER_THREAD };
  char(*conc)[37] = calloc(ALL, 37);
  char(*seq)[37] = calloc(ALL, 37);
  pthread_t th[KEY_THREADS];
  key_job_t jobs[KEY_THREADS];
  bw_retry_config_t c;
  bw_retry_policy_t *p, *q;
  key_job_t all;
  int i;
  (void)state;
  assert_non_null(conc);
  assert_non_null(seq);
  bw_retry_config_init(&c);
  c.seed = 2026;
  p = policy(&c);
  q = policy(&c);
  for (i = 0; i < KEY_THREADS; i++) {
    jobs[i].p = p;
    jobs[i].keys = conc + i * KEYS_PER_THREAD;
    assert_int_equal(pthread_create(&th[i], NULL, make_keys, &jobs[i]), 0);
  }
  for (i = 0; i < KEY_THREADS; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  for (i = 0; i < KEY_THREADS; i++) { /* the same count, one thread */
    all.p = q;
    all.keys = seq + i * KEYS_PER_THREAD;
    make_keys(&all);
  }
  qsort(conc, ALL, 37, cmp_key);
  qsort(seq, ALL, 37, cmp_key);
  for (i = 1; i < ALL; i++)
    assert_int_not_equal(memcmp(conc[i - 1], conc[i], 37), 0);
  assert_memory_equal(conc, seq, (size_t)ALL * 37);
  bw_retry_policy_free(p);
  bw_retry_policy_free(q);
  free(conc);
  free(seq);
}

/* ==== UUIDv7 ================================================================
 */

static void uuidv7_has_the_rfc_9562_layout(void **state) {
  bw_rand_t g;
  char u[37];
  int i, n;
  (void)state;
  bw_rand_seed(&g, 3);
  for (n = 0; n < 1000; n++) {
    bw_uuidv7(INT64_C(0x017F22E279B0), &g, u); /* RFC 9562 appendix A.6 */
    assert_int_equal(strlen(u), 36);
    assert_memory_equal(u, "017f22e2-79b0-7", 15);
    for (i = 0; i < 36; i++) {
      if (i == 8 || i == 13 || i == 18 || i == 23)
        assert_int_equal(u[i], '-');
      else
        assert_non_null(strchr("0123456789abcdef", u[i]));
    }
    assert_non_null(strchr("89ab", u[19])); /* variant 0b10xx */
  }
}

static void uuidv7_random_bits_come_from_the_generator(void **state) {
  bw_rand_t g, h;
  char a[37], b[37];
  (void)state;
  bw_rand_seed(&g, 17);
  h = g;
  bw_uuidv7(1, &g, a);
  bw_uuidv7(1, &h, b);
  assert_string_equal(a, b); /* same state, same key */
  bw_uuidv7(1, &g, b);
  assert_string_not_equal(a, b);
  assert_memory_equal(a, "00000000-0001-7", 15);
}

static int cmp_uuid(const void *x, const void *y) {
  return memcmp(x, y, 37);
}

static void uuidv7_keys_are_unique_within_one_millisecond(void **state) {
  enum { N = 20000 };
  char(*keys)[37] = malloc(sizeof(char[37]) * N);
  bw_rand_t g;
  int i;
  (void)state;
  assert_non_null(keys);
  bw_rand_seed(&g, 23);
  for (i = 0; i < N; i++)
    bw_uuidv7(BWT_WALL0_NS / MS, &g, keys[i]);
  qsort(keys, N, sizeof(keys[0]), cmp_uuid);
  for (i = 1; i < N; i++)
    assert_int_not_equal(memcmp(keys[i - 1], keys[i], 37), 0);
  free(keys);
}

static void uuidv7_time_sorts_and_handles_out_of_range_times(void **state) {
  bw_rand_t g;
  char a[37], b[37];
  (void)state;
  bw_rand_seed(&g, 29);
  bw_uuidv7(1000, &g, a);
  bw_uuidv7(1001, &g, b);
  assert_true(strcmp(a, b) < 0); /* later ms, later key */
  bw_uuidv7(-5, &g, a);
  assert_memory_equal(a, "00000000-0000-7", 15);
  bw_uuidv7(INT64_C(0xffffffffffff), &g, a);
  assert_memory_equal(a, "ffffffff-ffff-7", 15);
  bw_uuidv7(INT64_C(0x1000000000001), &g, a); /* wraps modulo 2^48 */
  assert_memory_equal(a, "00000000-0001-7", 15);
  memset(a, 'x', sizeof(a));
  bw_uuidv7(1, NULL, a);
  assert_string_equal(a, "");
  bw_uuidv7(1, &g, NULL); /* ignored */
}

/* ==== the blocking helper ===================================================
 */

typedef struct sleeper_s {
  bw_clock_t *clock;
  int64_t extra_ms; /* oversleep */
  int n;
  int64_t slept[16];
} sleeper_t;

static void sleep_hook(void *ud, int64_t ms) {
  sleeper_t *s = ud;
  if (s->n < 16) s->slept[s->n] = ms;
  s->n++;
  bw_clock_manual_advance(s->clock, (ms + s->extra_ms) * MS);
}

typedef struct script_s {
  bw_clock_t *clock;
  int64_t took_ms; /* each attempt's duration */
  int n;
  int len;
  bw_verdict_t verdicts[8];
  int64_t hints[8];
  uint32_t attempt_seen[8];
  int64_t hint_in[8];
} script_t;

static bw_verdict_t scripted(void *ud, uint32_t attempt, int64_t *hint) {
  script_t *s = ud;
  int i = s->n < s->len ? s->n : s->len - 1;
  if (s->n < 8) {
    s->attempt_seen[s->n] = attempt;
    s->hint_in[s->n] = *hint;
  }
  s->n++;
  bw_clock_manual_advance(s->clock, s->took_ms * MS);
  *hint = s->hints[i];
  return s->verdicts[i];
}

typedef struct fallback_s {
  int calls;
  bw_giveup_t reason;
  bw_verdict_t last;
} fallback_rec_t;

static void fallback_hook(void *ud, bw_giveup_t reason, bw_verdict_t last) {
  fallback_rec_t *f = ud;
  f->calls++;
  f->reason = reason;
  f->last = last;
}

static void call_succeeds_after_sleeping_the_backoff(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  sleeper_t sl = {e->clock, 0, 0, {0}};
  script_t sc = {e->clock,
                 30,
                 0,
                 3,
                 {BW_VERDICT_TRANSIENT, BW_VERDICT_TRANSIENT, BW_VERDICT_OK},
                 {-1, -1, -1},
                 {0},
                 {0}};
  fallback_rec_t fb = {0, BW_GIVEUP_NONE, BW_VERDICT_OK};
  bw_retry_call_opts_t o = {e->clock, sleep_hook, &sl, fallback_hook, &fb};
  bw_giveup_t why = BW_GIVEUP_BUDGET;

  assert_status(bw_retry_config_preset(&c, "tenacity"), BW_OK);
  c.sink = e->sink;
  c.wall_clock = e->wall;
  p = policy(&c);
  assert_status(bw_retry_call(p, scripted, &sc, &o, &why), BW_OK);
  assert_int_equal(why, BW_GIVEUP_NONE);
  assert_int_equal(sc.n, 3);
  assert_u64_eq(sc.attempt_seen[0], 1);
  assert_u64_eq(sc.attempt_seen[1], 2);
  assert_u64_eq(sc.attempt_seen[2], 3);
  assert_i64_eq(sc.hint_in[0], BW_RETRY_AFTER_NONE);
  assert_i64_eq(sc.hint_in[2], BW_RETRY_AFTER_NONE);
  assert_int_equal(sl.n, 2);
  assert_i64_eq(sl.slept[0], 500);
  assert_i64_eq(sl.slept[1], 1000);
  assert_int_equal(fb.calls, 0);
  assert_i64_eq(bwt_now(e), AT(30 + 500 + 30 + 1000 + 30));
  assert_int_equal(e->rec->count, 2);
  assert_i64_eq(bwt_event_at(e->rec, 1)->mono_ns, AT(30 + 500 + 30));
  bw_retry_policy_free(p);
}

static void call_gives_up_and_calls_the_fallback_once(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  sleeper_t sl = {e->clock, 0, 0, {0}};
  script_t sc = {e->clock, 0, 0, 1, {BW_VERDICT_TRANSIENT}, {700}, {0}, {0}};
  fallback_rec_t fb = {0, BW_GIVEUP_NONE, BW_VERDICT_OK};
  bw_retry_call_opts_t o = {e->clock, sleep_hook, &sl, fallback_hook, &fb};
  bw_giveup_t why = BW_GIVEUP_NONE;

  assert_status(bw_retry_config_preset(&c, "tenacity"), BW_OK);
  p = policy(&c);
  /* The hint (700 ms) is the minimum delay: 700, then the backoff 1000. */
  assert_status(bw_retry_call(p, scripted, &sc, &o, &why), BW_E_GAVE_UP);
  assert_int_equal(why, BW_GIVEUP_EXHAUSTED);
  assert_int_equal(sc.n, 3);
  assert_int_equal(sl.n, 2);
  assert_i64_eq(sl.slept[0], 700);
  assert_i64_eq(sl.slept[1], 1000);
  assert_int_equal(fb.calls, 1);
  assert_int_equal(fb.reason, BW_GIVEUP_EXHAUSTED);
  assert_int_equal(fb.last, BW_VERDICT_TRANSIENT);

  /* A 4xx: one attempt, the fallback sees the permanent verdict; reason may
   * be NULL and opts may omit the fallback. */
  sc.n = 0;
  sc.verdicts[0] = BW_VERDICT_PERMANENT;
  fb.calls = 0;
  assert_status(bw_retry_call(p, scripted, &sc, &o, NULL), BW_E_GAVE_UP);
  assert_int_equal(sc.n, 1);
  assert_int_equal(fb.calls, 1);
  assert_int_equal(fb.reason, BW_GIVEUP_PERMANENT);
  assert_int_equal(fb.last, BW_VERDICT_PERMANENT);
  o.fallback = NULL;
  assert_status(bw_retry_call(p, scripted, &sc, &o, &why), BW_E_GAVE_UP);
  assert_int_equal(why, BW_GIVEUP_PERMANENT);
  bw_retry_policy_free(p);
}

static void call_never_starts_an_attempt_after_the_deadline(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  sleeper_t sl = {e->clock, 0, 0, {0}};
  script_t sc = {e->clock, 10, 0, 1, {BW_VERDICT_TRANSIENT}, {-1}, {0}, {0}};
  fallback_rec_t fb = {0, BW_GIVEUP_NONE, BW_VERDICT_OK};
  bw_retry_call_opts_t o = {e->clock, sleep_hook, &sl, fallback_hook, &fb};
  bw_giveup_t why = BW_GIVEUP_NONE;
  bw_deadline_t prev;

  plain(e, &c, "dl");
  c.max_attempts = 5;
  p = policy(&c);

  /* Already passed: fn is never called; the request was never sent. */
  prev = bw_deadline_set(bw_deadline_in(T0, 0));
  assert_status(bw_retry_call(p, scripted, &sc, &o, &why), BW_E_GAVE_UP);
  assert_int_equal(why, BW_GIVEUP_DEADLINE);
  assert_int_equal(sc.n, 0);
  assert_int_equal(sl.n, 0);
  assert_int_equal(fb.calls, 1);
  assert_int_equal(fb.last, BW_VERDICT_NOT_SENT);
  assert_gave_up(e, 0, "deadline", "not_sent", "deadline passed 0 ms ago");

  /* Oversleeping past the deadline: no attempt after the sleep. */
  bw_deadline_set(bw_deadline_in(T0, 1000));
  sl.extra_ms = 900; /* the 200 ms sleep takes 1100 ms */
  fb.calls = 0;
  assert_status(bw_retry_call(p, scripted, &sc, &o, &why), BW_E_GAVE_UP);
  bw_deadline_set(prev);
  assert_int_equal(why, BW_GIVEUP_DEADLINE);
  assert_int_equal(sc.n, 1);
  assert_int_equal(sl.n, 1);
  assert_int_equal(fb.calls, 1);
  assert_int_equal(fb.reason, BW_GIVEUP_DEADLINE);
  assert_int_equal(fb.last, BW_VERDICT_TRANSIENT);
  assert_gave_up(e, 1, "deadline", "transient", "deadline passed 110 ms ago");
  bw_retry_policy_free(p);
}

static bw_verdict_t ok_at_once(void *ud, uint32_t attempt, int64_t *hint) {
  (void)hint;
  *(uint32_t *)ud = attempt;
  return BW_VERDICT_OK;
}

static bw_verdict_t bogus(void *ud, uint32_t attempt, int64_t *hint) {
  (void)ud;
  (void)attempt;
  *hint = -7;
  return BW_VERDICT_TRANSIENT;
}

static void call_refuses_bad_arguments_and_bad_verdicts(void **state) {
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  uint32_t seen = 0;
  fallback_rec_t fb = {0, BW_GIVEUP_NONE, BW_VERDICT_OK};
  bw_retry_call_opts_t o = {NULL, NULL, NULL, fallback_hook, &fb};
  (void)state;
  bw_retry_config_init(&c);
  p = policy(&c);
  assert_status(bw_retry_call(NULL, ok_at_once, &seen, NULL, NULL), BW_E_INVAL);
  assert_status(bw_retry_call(p, NULL, &seen, NULL, NULL), BW_E_INVAL);
  /* opts NULL: the monotonic clock, and no sleep is needed. */
  assert_status(bw_retry_call(p, ok_at_once, &seen, NULL, NULL), BW_OK);
  assert_u64_eq(seen, 1);
  assert_status(bw_retry_call(p, bogus, NULL, &o, NULL), BW_E_INVAL);
  assert_int_equal(fb.calls, 0);
  bw_retry_policy_free(p);
}

/* The default sleep really sleeps (a lower bound only, never an upper). */
static void call_with_the_default_sleep_waits_at_least_the_delay(void **state) {
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_clock_t *clock = bw_clock_manual_new(0);
  script_t sc = {clock,    0,   0,  2, {BW_VERDICT_TRANSIENT, BW_VERDICT_OK},
                 {-1, -1}, {0}, {0}};
  int64_t t0, t1;
  (void)state;
  bw_retry_config_init(&c);
  c.backoff = BW_BACKOFF_CONSTANT;
  c.jitter = BW_JITTER_NONE;
  c.base_ms = 20;
  p = policy(&c);
  t0 = bw_clock_now(bw_clock_monotonic());
  assert_status(bw_retry_call(p, scripted, &sc, NULL, NULL), BW_OK);
  t1 = bw_clock_now(bw_clock_monotonic());
  assert_true(t1 - t0 >= 20 * MS);
  assert_int_equal(sc.n, 2);
  bw_retry_policy_free(p);
  bw_clock_free(clock);
}

/* Unseeded policies draw from a per-thread generator; a forked child must
 * not inherit its stream, or pre-fork workers would retry in lock-step. */
static void a_forked_child_does_not_share_the_parents_jitter(void **state) {
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  int64_t mine[8], theirs[8];
  int fds[2], status = 0;
  pid_t pid;
  (void)state;
  bw_retry_config_init(&c);
  c.max_attempts = 10;
  c.base_ms = 1000;
  c.max_ms = 1000000;
  c.jitter = BW_JITTER_FULL;
  c.seed = 0;
  p = policy(&c);
  {
    /* Draw once so this thread's generator exists before the fork. */
    bw_retry_t r;
    int64_t d;
    bw_retry_begin(&r, p, 0);
    assert_int_equal(
        bw_retry_next(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, 0, &d),
        BW_RETRY);
  }
  assert_int_equal(pipe(fds), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0 || pid > 0) {
    bw_retry_t r;
    bw_retry_begin(&r, p, 0);
    for (int i = 0; i < 8; i++)
      if (bw_retry_next(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, 0,
                        &mine[i]) != BW_RETRY)
        mine[i] = -1;
  }
  if (pid == 0) {
    ssize_t w = write(fds[1], mine, sizeof(mine));
    _exit(w == (ssize_t)sizeof(mine) ? 0 : 1);
  }
  assert_int_equal(read(fds[0], theirs, sizeof(theirs)),
                   (ssize_t)sizeof(theirs));
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(fds[0]);
  close(fds[1]);
  /* Eight draws from ranges up to a million ms: equal only if the streams
   * are the same. */
  assert_true(memcmp(mine, theirs, sizeof(mine)) != 0);
  bw_retry_policy_free(p);
}

/* ==== memory ================================================================
 */

/* A policy created, asked for one delay (deciding allocates nothing), and
 * freed. */
static int policy_scenario(void *ctx) {
  const bw_retry_config_t *c = ctx;
  bw_error_t err;
  bw_retry_policy_t *p;
  bw_retry_t r;
  memset(&err, 0, sizeof(err));
  p = bw_retry_policy_new(c, &err);
  if (p == NULL) {
    assert_int_equal(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    assert_contains(err.message, "out of memory creating retry policy");
    assert_true(oom_injected() > 0);
    return BW_E_NOMEM;
  }
  bw_retry_begin(&r, p, T0);
  assert_int_equal(retry_delay(&r, AT(1)) <= 200, 1);
  bw_retry_policy_free(p);
  return BW_OK;
}

static void policy_new_survives_every_allocation_failure(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  int sticky;
  plain(e, &c, "oom");
  c.jitter = BW_JITTER_FULL;
  c.seed = 3;
  /* Lenient: a policy created despite an injected failure need not have
   * failed, only work and leak nothing. */
  for (sticky = 0; sticky < 2; sticky++)
    assert_true(oom_walk_lenient(policy_scenario, &c, sticky != 0, NULL) > 1);
}

/* Deciding allocates nothing: every allocation fails and none is tried. */
static void deciding_never_allocates(void **state) {
  bwt_env_t *e = *state;
  bw_retry_config_t c;
  bw_retry_policy_t *p;
  bw_budget_t *b = token_bucket(10, 0.1);
  int i;
  plain(e, &c, "hot");
  c.jitter = BW_JITTER_DECORRELATED;
  c.backoff = BW_BACKOFF_EXPONENTIAL;
  c.idempotent = false;
  c.budget = b;
  c.max_attempts = 4;
  p = policy(&c); /* seed 0: the lazy OS seed too */
  oom_fail_at(1, true);
  for (i = 0; i < 3; i++) {
    bw_retry_t r;
    int64_t d;
    bw_retry_begin(&r, p, T0);
    (void)bw_retry_attach_key(&r, 1);
    (void)bw_retry_next(&r, BW_VERDICT_TRANSIENT, 100, AT(1), &d);
    (void)bw_retry_next(&r, BW_VERDICT_NOT_SENT, -1, AT(300), &d);
    (void)bw_retry_next(&r, BW_VERDICT_OK, -1, AT(600), &d);
  }
  assert_int_equal(oom_attempts(), 0);
  oom_fail_at(0, false);
  assert_true(e->rec->count > 0); /* the event path ran too */
  bw_retry_policy_free(p);
  bw_budget_free(b);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value) for a NULL policy or iterator, never a crash; the void
 * functions and the free are no-ops. bw_retry_policy_name(NULL) is "", as
 * documented and asserted above. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_error_t err;
  int64_t delay = 5;
  double dj = 0;
  (void)state;
  bw_retry_config_init(NULL);
  assert_int_equal(bw_retry_config_preset(NULL, "api"), BW_E_INVAL);
  assert_int_equal(bw_retry_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_retry_policy_new(NULL, NULL));
  assert_null(bw_retry_policy_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  bw_retry_policy_free(NULL);
  bw_retry_begin(NULL, NULL, 0);
  bw_retry_set_deadline(NULL, bw_deadline_none());
  assert_null(bw_retry_attach_key(NULL, 0));
  assert_int_equal(bw_retry_next(NULL, BW_VERDICT_TRANSIENT, -1, 0, &delay),
                   BW_E_INVAL);
  assert_int_equal(bw_retry_reason(NULL), 0);
  assert_int_equal(bw_retry_attempts(NULL), 0);
  assert_int_equal(bw_retry_delay_ms(NULL, 1, NULL, &dj), BW_E_INVAL);
  assert_int_equal(bw_retry_delay_ms_ex(NULL, 1, NULL, &dj, &delay),
                   BW_E_INVAL);
  bw_uuidv7(0, NULL, NULL);
  assert_int_equal(bw_retry_start(NULL, NULL, 0), BW_E_INVAL);
  assert_int_equal(bw_retry_check_deadline(NULL, BW_VERDICT_TRANSIENT, 0),
                   BW_E_INVAL);
  assert_string_equal(bw_verdict_name((bw_verdict_t)99), "unknown");
  assert_string_equal(bw_giveup_name((bw_giveup_t)99), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      T(verdicts_and_give_up_reasons_have_stable_names),
      T(config_init_fills_the_documented_defaults),
      T(bad_configs_are_refused_naming_the_field),
      T(a_null_config_is_refused),
      T(boundary_configs_are_accepted),
      T(the_policy_copies_its_name),
      T(presets_hold_the_seed_configurations),
      T(an_unknown_preset_is_not_found_and_leaves_the_config),
      T(tenacity_waits_half_a_second_then_one_then_gives_up),
      T(tenacity_inner_retries_once_after_300_ms),
      T(agents_full_jitter_stays_within_the_doubling_bound),
      T(agents_circuit_open_and_business_errors_are_not_retried),
      T(polly_lab_decorrelated_delays_stay_under_the_cap),
      T(decorrelated_follows_pollys_formula_exactly),
      T(iterator_jitter_is_uniform_over_its_range),
      T(curves_are_exact_and_clamped_to_min_and_max),
      T(far_retries_saturate_at_max_ms_without_overflow),
      T(delay_ms_refuses_bad_arguments),
      T(every_backoff_and_jitter_stays_in_its_documented_range),
      T(one_attempt_means_no_retry),
      T(max_elapsed_alone_allows_retries_until_the_limit),
      T(both_caps_stop_at_whichever_comes_first),
      T(stop_before_refuses_a_delay_that_ends_at_the_limit),
      T(elapsed_counts_from_begin_and_a_clock_before_it_counts_zero),
      T(ok_is_done_and_stays_done),
      T(permanent_and_rejected_give_up_at_once_and_stay_given_up),
      T(not_sent_is_retried_like_a_transient_failure),
      T(bad_arguments_to_next_are_refused_and_change_nothing),
      T(non_idempotent_calls_retry_only_what_was_never_sent),
      T(an_idempotency_key_makes_a_non_idempotent_call_retryable),
      T(a_retry_after_hint_is_the_minimum_delay),
      T(a_hint_above_max_ms_gives_up_as_too_long),
      T(a_hint_ending_at_the_deadline_gives_up_as_too_long),
      T(never_is_pushback_even_when_hints_are_not_honoured),
      T(a_hint_raises_a_jittered_delay_too),
      T(the_thread_deadline_at_begin_bounds_every_delay),
      T(a_passed_deadline_gives_up_even_for_a_zero_delay),
      T(set_deadline_only_narrows),
      T(start_with_a_passed_deadline_gives_up_and_reports_nothing),
      T(start_in_time_is_begin_and_reports_the_request),
      T(check_deadline_gives_up_only_once_the_deadline_has_passed),
      T(check_deadline_refuses_bad_arguments),
      T(a_drained_budget_denies_the_retry),
      T(a_budget_allows_retries_while_it_has_tokens),
      T(a_retry_refused_for_another_reason_spends_no_budget),
      T(events_carry_the_thread_context),
      T(without_a_sink_nothing_is_emitted_and_decisions_match),
      T(seeded_iterators_differ_yet_the_program_is_reproducible),
      T(unseeded_iterators_draw_from_the_os),
      T(concurrent_iterators_each_get_their_own_stream),
      T(uuidv7_has_the_rfc_9562_layout),
      T(uuidv7_random_bits_come_from_the_generator),
      T(uuidv7_keys_are_unique_within_one_millisecond),
      T(uuidv7_time_sorts_and_handles_out_of_range_times),
      T(call_succeeds_after_sleeping_the_backoff),
      T(call_gives_up_and_calls_the_fallback_once),
      T(call_never_starts_an_attempt_after_the_deadline),
      T(call_refuses_bad_arguments_and_bad_verdicts),
      T(call_with_the_default_sleep_waits_at_least_the_delay),
      T(a_forked_child_does_not_share_the_parents_jitter),
      T(policy_new_survives_every_allocation_failure),
      T(deciding_never_allocates),
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

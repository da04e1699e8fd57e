/* Configuration files (breakwater/config_file.h): the agents example loads
 * into a registry with the reference toolkit's values, seen in what the
 * objects do on a manual clock; inheritance and the environment's
 * overrides; every kind of bad input is refused with FILE:LINE: key: rule;
 * a refused file adds nothing to the registry. */
#include "bw_test.h"

#include <stdlib.h>

#include "breakwater/config_file.h"

#ifndef BW_SOURCE_DIR
#error BW_SOURCE_DIR must be defined (tests/CMakeLists.txt)
#endif
#define AGENTS BW_SOURCE_DIR "/examples/config/agents.ini"

typedef struct fixture_s {
  bw_clock_t *clock;
  bw_registry_t *reg;
} fixture_t;

static int setup(void **state) {
  fixture_t *fx = calloc(1, sizeof *fx);
  bw_registry_config_t rc;
  if (fx == NULL) return -1;
  fx->clock = bw_clock_manual_new(BWT_T0_NS);
  bw_registry_config_init(&rc);
  rc.clock = fx->clock;
  fx->reg = bw_registry_new(&rc, NULL);
  if (fx->clock == NULL || fx->reg == NULL) return -1;
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture_t *fx = *state;
  bw_registry_free(fx->reg);
  bw_clock_free(fx->clock);
  free(fx);
  return 0;
}

static bw_config_file_t *parse(const char *text, bw_config_diag_t *d) {
  return bw_config_file_parse(text, strlen(text), "t.ini", NULL, d);
}

/* The effective configuration bw_config_file_write gives, as a string
 * (free it). */
static char *written(const bw_config_file_t *f) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  assert_non_null(mem);
  assert_status(bw_config_file_write(f, mem), BW_OK);
  fclose(mem);
  return text;
}

/* The breaker named `name` opens after exactly `failures` failures in a
 * row, stays open exactly break_ms, and closes after exactly `successes`
 * probe successes (one probe at a time). */
static void breaker_behaves(fixture_t *fx, const char *name, uint32_t failures,
                            uint32_t successes, int64_t break_ms) {
  bw_breaker_t *b = bw_registry_find_breaker(fx->reg, name);
  bw_permit_t p;
  assert_non_null(b);
  for (uint32_t i = 0; i < failures; i++) {
    assert_state(bw_breaker_state(b), BW_CLOSED);
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_FAILURE);
  }
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), break_ms);
  bw_clock_manual_advance(fx->clock, (break_ms - 1) * BW_NS_PER_MS);
  assert_status(bw_breaker_acquire(b, &p), BW_E_OPEN);
  bw_clock_manual_advance(fx->clock, BW_NS_PER_MS);
  for (uint32_t i = 0; i < successes; i++) {
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    assert_state(bw_breaker_state(b), BW_HALF_OPEN);
    bw_breaker_release(b, &p, BW_SUCCESS);
  }
  assert_state(bw_breaker_state(b), BW_CLOSED);
  bw_registry_put(fx->reg, b);
}

static void bulkhead_is(fixture_t *fx, const char *name, uint32_t max,
                        int64_t timeout_ms) {
  bw_bulkhead_t *bh = bw_registry_find(fx->reg, BW_REGISTRY_BULKHEAD, name);
  bw_bulkhead_stats_t st;
  bw_permit_t p[32];
  assert_non_null(bh);
  bw_bulkhead_stats(bh, &st);
  assert_u64_eq(st.max_concurrent, max);
  for (uint32_t i = 0; i < max; i++)
    assert_status(bw_bulkhead_try_acquire(bh, &p[i]), BW_OK);
  assert_status(bw_bulkhead_try_acquire(bh, &p[max]), BW_E_FULL);
  /* The execution deadline runs from admission. */
  assert_i64_eq(bw_bulkhead_deadline_ns(&p[0]) - p[0].start_ns,
                timeout_ms * BW_NS_PER_MS);
  for (uint32_t i = 0; i < max; i++)
    bw_bulkhead_release(bh, &p[i]);
}

static void agents_file_makes_the_reference_toolkit(void **state) {
  fixture_t *fx = *state;
  bw_error_t err;
  assert_status(bw_registry_load_file(fx->reg, AGENTS, &err), BW_OK);
  assert_u64_eq(bw_registry_size(fx->reg), 4);
  assert_u64_eq(bw_registry_count(fx->reg, BW_REGISTRY_BULKHEAD), 4);
  assert_u64_eq(bw_registry_count(fx->reg, BW_REGISTRY_RETRY), 4);
  assert_u64_eq(bw_registry_count(fx->reg, BW_REGISTRY_PIPELINE), 4);
  breaker_behaves(fx, "hotel_api", 5, 2, 30000);
  breaker_behaves(fx, "payment_api", 3, 3, 60000);
  breaker_behaves(fx, "search_agent", 10, 1, 15000);
  bulkhead_is(fx, "booking_agent", 10, 30000);
  bulkhead_is(fx, "search_agent", 20, 10000);
  bulkhead_is(fx, "payment_agent", 5, 15000);
  bulkhead_is(fx, "recovery_worker", 3, 120000);
  /* The file's pipeline is the registry's. */
  bw_pipeline_t *pl = bw_registry_pipeline(fx->reg, "payment_api", NULL, &err);
  assert_non_null(pl);
  assert_ptr_equal(
      pl, bw_registry_find(fx->reg, BW_REGISTRY_PIPELINE, "payment_api"));
  assert_string_equal(bw_pipeline_name(pl), "payment_api");
}

/* The payment pipeline stacks the file's objects: once its breaker is
 * open, a call is refused by it (never retried), with no attempt made. */
static void agents_pipeline_uses_the_files_breaker(void **state) {
  fixture_t *fx = *state;
  bw_error_t err;
  bw_pipeline_call_t c;
  bw_permit_t p;
  assert_status(bw_registry_load_file(fx->reg, AGENTS, &err), BW_OK);
  bw_breaker_t *b = bw_registry_find_breaker(fx->reg, "payment_api");
  for (int i = 0; i < 3; i++) {
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_FAILURE);
  }
  bw_registry_put(fx->reg, b);
  bw_pipeline_t *pl = bw_registry_pipeline(fx->reg, "payment_api", NULL, &err);
  assert_int_equal(bw_pipeline_begin(pl, &c, bw_clock_now(fx->clock)),
                   BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
}

static void agents_effective_values(void **state) {
  (void)state;
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_file_options_init(&opt);
  opt.env_prefix = NULL;
  bw_config_file_t *f = bw_config_file_read(AGENTS, &opt, &d);
  assert_non_null(f);
  assert_u64_eq(bw_config_file_count(f), 16);
  const bw_retry_config_t *r =
      bw_config_file_config(f, BW_CONFIG_RETRY, "payment_api");
  assert_non_null(r);
  assert_u64_eq(r->max_attempts, 2);
  assert_i64_eq(r->base_ms, 2000);
  assert_i64_eq(r->max_ms, 30000); /* [retry.default] */
  assert_int_equal(r->jitter, BW_JITTER_FULL);
  assert_dbl_eq(r->multiplier, 2, 0);
  r = bw_config_file_config(f, BW_CONFIG_RETRY, "search_agent");
  assert_u64_eq(r->max_attempts, 4);
  assert_i64_eq(r->base_ms, 500);
  /* The Polly lab's pipeline. */
  r = bw_config_file_config(f, BW_CONFIG_RETRY, "polly");
  assert_u64_eq(r->max_attempts, 3);
  assert_int_equal(r->jitter, BW_JITTER_DECORRELATED);
  assert_i64_eq(r->base_ms, 200);
  assert_i64_eq(r->max_ms, 1500);
  assert_false(r->honor_retry_after);
  const bw_breaker_config_t *b =
      bw_config_file_config(f, BW_CONFIG_BREAKER, "polly");
  assert_int_equal(b->trip_rule, BW_TRIP_TIME_WINDOW);
  assert_dbl_eq(b->failure_ratio, 0.5, 0);
  assert_i64_eq(b->window_ms, 10000);
  assert_u64_eq(b->minimum_calls, 20);
  assert_i64_eq(b->break_ms, 15000);
  assert_null(bw_config_file_config(f, BW_CONFIG_BREAKER, "default"));
  assert_null(bw_config_file_config(f, BW_CONFIG_BULKHEAD, "hotel_api"));
  const char *kind, *name;
  assert_status(bw_config_file_object(f, 0, &kind, &name), BW_OK);
  assert_string_equal(kind, "breaker");
  assert_string_equal(name, "hotel_api");
  assert_status(bw_config_file_object(f, 15, &kind, &name), BW_OK);
  assert_string_equal(kind, "pipeline");
  assert_string_equal(name, "polly");
  assert_status(bw_config_file_object(f, 16, &kind, &name), BW_E_RANGE);
  bw_config_file_free(f);
}

/* [KIND.default] holds the defaults; a section overrides them; an empty
 * section is an object with the defaults. */
static void defaults_then_instance(void **state) {
  (void)state;
  bw_config_diag_t d;
  bw_config_file_t *f = parse(
      "[breaker.a]\n"
      "[breaker.default]\n"
      "failure_threshold = 7\n"
      "break_ms = 5s\n"
      "[breaker.b]\n"
      "failure_threshold = 2\n",
      &d);
  assert_non_null(f);
  assert_u64_eq(bw_config_file_count(f), 2);
  const bw_breaker_config_t *a =
      bw_config_file_config(f, BW_CONFIG_BREAKER, "a");
  const bw_breaker_config_t *b =
      bw_config_file_config(f, BW_CONFIG_BREAKER, "b");
  assert_u64_eq(a->failure_threshold, 7);
  assert_i64_eq(a->break_ms, 5000);
  assert_string_equal(a->name, "a");
  assert_u64_eq(b->failure_threshold, 2);
  assert_i64_eq(b->break_ms, 5000);
  assert_u64_eq(b->success_threshold, 1); /* the kind's _init */
  bw_config_file_free(f);
}

/* The environment has the last word (PREFIX_NAME_KIND_FIELD); a custom
 * prefix; no prefix reads nothing; an unknown variable is an error. */
static void environment_overrides_the_file(void **state) {
  (void)state;
  const char *text = "[breaker.payment_api]\nfailure_threshold = 3\n";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_file_options_init(&opt);
  assert_string_equal(opt.env_prefix, "BREAKWATER");
  setenv("BREAKWATER_PAYMENT_API_BREAKER_FAILURE_THRESHOLD", "4", 1);
  setenv("OPS_PAYMENT_API_BREAKER_BREAK_MS", "2m", 1);
  bw_config_file_t *f = parse(text, &d);
  assert_non_null(f);
  const bw_breaker_config_t *c =
      bw_config_file_config(f, BW_CONFIG_BREAKER, "payment_api");
  assert_u64_eq(c->failure_threshold, 4);
  assert_i64_eq(c->break_ms, 30000);
  bw_config_file_free(f);

  opt.env_prefix = "OPS";
  f = bw_config_file_parse(text, strlen(text), "t.ini", &opt, &d);
  c = bw_config_file_config(f, BW_CONFIG_BREAKER, "payment_api");
  assert_u64_eq(c->failure_threshold, 3);
  assert_i64_eq(c->break_ms, 120000);
  bw_config_file_free(f);

  opt.env_prefix = NULL;
  f = bw_config_file_parse(text, strlen(text), "t.ini", &opt, &d);
  c = bw_config_file_config(f, BW_CONFIG_BREAKER, "payment_api");
  assert_u64_eq(c->failure_threshold, 3);
  assert_i64_eq(c->break_ms, 30000);
  bw_config_file_free(f);

  setenv("BREAKWATER_PAYMENT_API_BREAKER_FAILURE_THRESHOLD", "0", 1);
  assert_null(parse(text, &d));
  assert_string_equal(d.message,
                      "t.ini: [breaker.payment_api] from the environment: "
                      "BREAKWATER_PAYMENT_API_BREAKER_FAILURE_THRESHOLD: "
                      "failure_threshold must be an integer in [1, 4294967295] "
                      "(got '0')");
  assert_int_equal(d.line, 0);
  unsetenv("BREAKWATER_PAYMENT_API_BREAKER_FAILURE_THRESHOLD");

  /* A variable that names an object the file lacks is an error too: a
   * typo in the name, or the wrong kind. Others under the prefix are not
   * the file's business. */
  setenv("BREAKWATER_PAYMNT_API_BREAKER_BREAK_MS", "1s", 1);
  assert_null(parse(text, &d));
  assert_int_equal(d.code, BW_E_NOTFOUND);
  assert_string_equal(d.message,
                      "t.ini: BREAKWATER_PAYMNT_API_BREAKER_BREAK_MS names a "
                      "breaker that the file does not define (the environment "
                      "overrides PREFIX_NAME_KIND_FIELD of the file's "
                      "[KIND.NAME] sections only)");
  unsetenv("BREAKWATER_PAYMNT_API_BREAKER_BREAK_MS");
  setenv("BREAKWATER_PAYMENT_API_BULKHEAD_MAX_CONCURRENT", "3", 1);
  assert_null(parse(text, &d));
  assert_contains(d.message, "names a bulkhead that the file does not");
  unsetenv("BREAKWATER_PAYMENT_API_BULKHEAD_MAX_CONCURRENT");
  setenv("BREAKWATER_BIN", "/usr/bin/x", 1);
  f = parse(text, &d);
  assert_non_null(f);
  bw_config_file_free(f);
  unsetenv("BREAKWATER_BIN");
  opt.env_prefix = "OPS";
  setenv("BREAKWATER_PAYMNT_API_BREAKER_BREAK_MS", "1s", 1);
  f = bw_config_file_parse(text, strlen(text), "t.ini", &opt, &d);
  assert_non_null(f); /* another prefix */
  bw_config_file_free(f);
  unsetenv("BREAKWATER_PAYMNT_API_BREAKER_BREAK_MS");
  unsetenv("OPS_PAYMENT_API_BREAKER_BREAK_MS");
}

typedef struct bad_s {
  const char *text;
  size_t len; /* 0: strlen */
  int code;
  const char *message;
} bad_t;

static const bad_t bad[] = {
    {"[breaker.a]\nfailure_treshold = 3\n", 0, BW_E_NOTFOUND,
     "t.ini:2: breaker.a.failure_treshold: breaker has no field "
     "'failure_treshold' (did you mean failure_threshold?)"},
    {"[breaker.a]\nfailure_threshold = 0\n", 0, BW_E_INVAL,
     "t.ini:2: breaker.a.failure_threshold: failure_threshold must be an "
     "integer in [1, 4294967295] (got '0')"},
    {"[breaker.a]\nbreak_ms = 30x\n", 0, BW_E_INVAL,
     "t.ini:2: breaker.a.break_ms: break_ms must be a duration in [1, "
     "2305843009213] ms, as 250ms, 30s, 2m or 1h (a bare number is ms) (got "
     "'30x')"},
    {"[breaker.a]\nbreak_ms = 30s\nbreak_ms = 40s\n", 0, BW_E_INVAL,
     "t.ini:3: breaker.a.break_ms: duplicate key (first at line 2)"},
    {"[breaker.a]\n[retry.b]\n\n[breaker.a]\n", 0, BW_E_INVAL,
     "t.ini:4: [breaker.a]: duplicate section (first at line 1)"},
    {"[brekaer.a]\n", 0, BW_E_NOTFOUND,
     "t.ini:1: [brekaer.a]: unknown kind 'brekaer' (kinds: breaker, retry, "
     "budget, bulkhead, limiter, ratelimit, throttle, priority_queue, stage, "
     "degrade, http, pipeline)"},
    {"[queue.a]\n", 0, BW_E_NOTFOUND,
     "t.ini:1: [queue.a]: unknown kind 'queue' (kinds: breaker, retry, "
     "budget, bulkhead, limiter, ratelimit, throttle, priority_queue, stage, "
     "degrade, http, pipeline)"},
    {"failure_threshold = 3\n[breaker.a]\n", 0, BW_E_INVAL,
     "t.ini:1: failure_threshold: a key before any section: a configuration "
     "file is [KIND.NAME] sections of key = value lines"},
    {"[breaker.a]\nthis is not ini\n", 0, BW_E_INVAL,
     "t.ini:2: expected [KIND.NAME], key = value, a comment or a blank line"},
    {"[breaker.a]\nx\0y = 1\n", 17, BW_E_INVAL,
     "t.ini:2: not a text file (a NUL byte): an INI file is expected"},
    {"\x7f"
     "ELF\x02\x01\x01",
     0, BW_E_INVAL,
     "t.ini:1: expected [KIND.NAME], key = value, a comment or a blank line"},
    {"[breaker.default]\ntrip_rule = count_window\nminimum_calls = 500\n"
     "[breaker.a]\n",
     0, BW_E_INVAL,
     "t.ini:3: breaker.a.minimum_calls: minimum_calls must be <= window_size "
     "(got 500 > 100): the window could never hold enough calls"},
    {"[pipeline.p]\nstrategies = breaker.nope\n", 0, BW_E_NOTFOUND,
     "t.ini:2: pipeline.p.strategies: strategy 1: no [breaker.nope] section "
     "in the file"},
    {"[retry.r]\n[pipeline.p]\nstrategies = retry.r, deadline 5s\n", 0,
     BW_E_INVAL,
     "t.ini:3: pipeline.p.strategies: strategies[1]: a deadline must come "
     "before the retry (strategies[0]); use a timeout for each attempt"},
    {"[pipeline.p]\nstrategies = deadline 5s,, timeout 1s\n", 0, BW_E_INVAL,
     "t.ini:2: pipeline.p.strategies: strategy 2 is empty (strategies are "
     "separated by ',')"},
    {"[breaker.a]\n[pipeline.p]\nstrategies = breaker.a wait 1s\n", 0,
     BW_E_INVAL,
     "t.ini:3: pipeline.p.strategies: strategy 1 ('breaker.a wait 1s'): only "
     "a bulkhead, limiter or ratelimit takes 'wait D', D a duration as 2s"},
    {"[pipeline.p]\nstrategies = deadline 0\n", 0, BW_E_INVAL,
     "t.ini:2: pipeline.p.strategies: strategy 1: deadline takes one "
     "duration >= 1 ms, as 2s or 250ms (got 'deadline 0')"},
    {"[pipeline.p]\nstrategies = stage.s\n", 0, BW_E_INVAL,
     "t.ini:2: pipeline.p.strategies: strategy 1 ('stage.s'): a pipeline "
     "stacks deadline D, timeout D, breaker.NAME, retry.NAME, bulkhead.NAME, "
     "limiter.NAME, ratelimit.NAME or throttle.NAME"},
    {"[pipeline.p]\n", 0, BW_E_INVAL,
     "t.ini:1: pipeline.p.strategies: a pipeline needs its strategies, "
     "outermost first"},
    {"[throttle.p]\nk = 0.5\n", 0, BW_E_INVAL,
     "t.ini:2: throttle.p.k: k must be a number in [1, 10] (got '0.5')"},
    {"[throttle.p]\nkk = 2\n", 0, BW_E_NOTFOUND,
     "t.ini:2: throttle.p.kk: throttle has no field 'kk' (did you mean k?)"},
    {"[throttle.default]\nwindow_ms = 10\n[throttle.p]\nbuckets = 7\n", 0,
     BW_E_INVAL,
     "t.ini:4: throttle.p.buckets: buckets must divide window_ms in "
     "nanoseconds (10 ms into 7 buckets is not whole ns)"},
    {"[throttle.t]\n[pipeline.p]\nstrategies = throttle.t wait 1s\n", 0,
     BW_E_INVAL,
     "t.ini:3: pipeline.p.strategies: strategy 1 ('throttle.t wait 1s'): "
     "only a bulkhead, limiter or ratelimit takes 'wait D', D a duration as "
     "2s"},
    {"[pipeline.p]\nstrategies = throttle.nope\n", 0, BW_E_NOTFOUND,
     "t.ini:2: pipeline.p.strategies: strategy 1: no [throttle.nope] section "
     "in the file"},
    {"[pipeline.p]\nfoo = 1\n", 0, BW_E_NOTFOUND,
     "t.ini:2: pipeline.p.foo: pipeline has no key 'foo' (its keys are "
     "strategies and min_attempt_ms)"},
    {"[pipeline.p]\nstrategies = deadline 1s\nmin_attempt_ms = soon\n", 0,
     BW_E_INVAL,
     "t.ini:3: pipeline.p.min_attempt_ms: a duration, as 180ms or 1s (a bare "
     "number is ms; got 'soon')"},
    {"[pipeline.p]\nmin_attempt_ms = 2d\nstrategies = deadline 1s\n", 0,
     BW_E_INVAL,
     "t.ini:2: pipeline.p.min_attempt_ms: min_attempt_ms must be in [0, "
     "86400000], 0 for off (got 172800000)"},
    {"[retry.r]\nbudget = nope\n", 0, BW_E_NOTFOUND,
     "t.ini:2: retry.r.budget: no [budget.nope] section in the file"},
    {"[pipeline.default]\n", 0, BW_E_INVAL,
     "t.ini:1: [pipeline.default]: pipelines have no defaults: each names "
     "its strategies"},
    {"[breaker.a]\nname = b\n", 0, BW_E_INVAL,
     "t.ini:2: breaker.a.name: the section names the object: name cannot be "
     "set"},
    {"[breaker.a]\nclock = x\n", 0, BW_E_INVAL,
     "t.ini:2: breaker.a.clock: clock is a pointer (a clock, sink, callback "
     "or object): it cannot be set by name, only in code"},
    {"[]\n", 0, BW_E_INVAL,
     "t.ini:1: []: a section is [KIND.NAME] (KIND one of breaker, retry, "
     "budget, bulkhead, limiter, ratelimit, throttle, priority_queue, stage, "
     "degrade, http, pipeline)"},
    {"\n[breaker.a\n", 0, BW_E_INVAL,
     "t.ini:2: a section header ends with ']'"},
    {"[breaker.a b]\n", 0, BW_E_INVAL,
     "t.ini:1: [breaker.a b]: a name is letters, digits, '_' and '-' only"},
    {"[breaker.a] x\n", 0, BW_E_INVAL,
     "t.ini:1: nothing but a comment may follow a section header"},
    {"[breaker.abcdefghijabcdefghijabcdefghijabcdefghijX]\n", 0, BW_E_INVAL,
     "t.ini:1: [breaker.abcdefghijabcdefghijabcdefghijabcdefghijX]: the name "
     "after 'breaker.' must be 1 to 40 bytes"},
    {"[http.x]\nlimiter.stuck_ratio = 2\nlimiter.stuck_timeout = true\n", 0,
     BW_E_INVAL,
     "t.ini:3: http.x.limiter.stuck_timeout: limiter.stuck_timeout needs "
     "limit_per_attempt (the limiter inside the retry, where an attempt can "
     "be cut and retried)"},
    {"[http.default]\nlimiter.stuck_ratio = 2\nlimiter.stuck_timeout = on\n"
     "[http.x]\nlimit_per_attempt = false\n",
     0, BW_E_INVAL,
     "t.ini:3: http.x.limiter.stuck_timeout: limiter.stuck_timeout needs "
     "limit_per_attempt (the limiter inside the retry, where an attempt can "
     "be cut and retried)"},
    {"[breaker.a]\nbreak_ms =\n", 0, BW_E_INVAL,
     "t.ini:2: breaker.a.break_ms: break_ms must be a duration in [1, "
     "2305843009213] ms, as 250ms, 30s, 2m or 1h (a bare number is ms) (got "
     "'')"},
};

static void bad_input_names_file_line_key_and_rule(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bw_config_diag_t d;
    size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
    bw_config_file_t *f =
        bw_config_file_parse(bad[i].text, len, "t.ini", NULL, &d);
    if (f != NULL) print_error("case %zu was accepted\n", i);
    assert_null(f);
    if (strcmp(d.message, bad[i].message) != 0)
      print_error("case %zu:\n  got  %s\n  want %s\n", i, d.message,
                  bad[i].message);
    assert_string_equal(d.message, bad[i].message);
    assert_int_equal(d.code, bad[i].code);
  }
}

/* A line longer than inih's buffer is refused, never cut in two. */
static void long_line_is_refused(void **state) {
  (void)state;
  char text[400];
  bw_config_diag_t d;
  memset(text, 'a', sizeof text);
  memcpy(text, "[breaker.a]\nx = ", 16);
  text[sizeof text - 1] = '\0';
  assert_null(parse(text, &d));
  assert_string_equal(d.message, "t.ini:2: a line is at most 198 bytes");
}

/* A file of many sections is refused past the cap, and quickly: lookups
 * are linear, so the cap bounds the work. */
static void section_count_is_capped(void **state) {
  (void)state;
  size_t size = 4097 * 24, len = 0;
  char *text = malloc(size);
  bw_config_diag_t d;
  assert_non_null(text);
  for (int i = 0; i < 4097; i++)
    len += (size_t)snprintf(text + len, size - len, "[breaker.b%d]\n", i);
  assert_null(bw_config_file_parse(text, len, "t.ini", NULL, &d));
  assert_string_equal(d.message,
                      "t.ini:4097: [breaker.b4096]: a file has at "
                      "most 4096 sections");
  /* 4096 are fine. */
  len -= strlen("[breaker.b4096]\n");
  bw_config_file_t *f = bw_config_file_parse(text, len, "t.ini", NULL, &d);
  assert_non_null(f);
  assert_u64_eq(bw_config_file_count(f), 4096);
  bw_config_file_free(f);
  free(text);
}

/* Comments, blank lines, indentation, CRLF, a BOM and ':' are INI. */
static void ini_dialect(void **state) {
  (void)state;
  bw_config_diag_t d;
  bw_config_file_t *f = parse(
      "\xEF\xBB\xBF; comment\r\n"
      "# another\r\n"
      "\r\n"
      "  [breaker.a]   ; trailing comment\r\n"
      "    failure_threshold: 4 ; inline\r\n"
      "\tbreak_ms = 1.5s\r\n",
      &d);
  assert_non_null(f);
  const bw_breaker_config_t *a =
      bw_config_file_config(f, BW_CONFIG_BREAKER, "a");
  assert_u64_eq(a->failure_threshold, 4);
  assert_i64_eq(a->break_ms, 1500);
  bw_config_file_free(f);
  /* An empty file defines nothing, and that is valid. */
  f = bw_config_file_parse("", 0, "t.ini", NULL, &d);
  assert_non_null(f);
  assert_u64_eq(bw_config_file_count(f), 0);
  bw_config_file_free(f);
}

/* The effective configuration written out reads back to itself. */
static void write_reads_back(void **state) {
  (void)state;
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  char *one = NULL, *two = NULL;
  size_t n1 = 0, n2 = 0;
  bw_config_file_options_init(&opt);
  opt.env_prefix = NULL;
  bw_config_file_t *f = bw_config_file_read(AGENTS, &opt, &d);
  assert_non_null(f);
  FILE *m = open_memstream(&one, &n1);
  assert_status(bw_config_file_write(f, m), BW_OK);
  fclose(m);
  bw_config_file_free(f);
  f = bw_config_file_parse(one, n1, "written", &opt, &d);
  if (f == NULL) print_error("%s\n", d.message);
  assert_non_null(f);
  m = open_memstream(&two, &n2);
  assert_status(bw_config_file_write(f, m), BW_OK);
  fclose(m);
  assert_string_equal(one, two);
  assert_contains(one,
                  "[pipeline.polly]\nstrategies = retry.polly, "
                  "breaker.polly, timeout 2000ms\n");
  assert_contains(one,
                  "[breaker.payment_api]\ntrip_rule = consecutive\n"
                  "failure_threshold = 3\n");
  bw_config_file_free(f);
  free(one);
  free(two);
}

/* A budget shared through the file; a bulkhead's wait in a pipeline. */
static void references_become_objects(void **state) {
  fixture_t *fx = *state;
  bw_config_diag_t d;
  bw_config_file_t *f = parse(
      "[budget.shared]\nkind = ratio\n"
      "[retry.r]\nbudget = shared\n"
      "[bulkhead.b]\nmax_concurrent = 1\n"
      "[limiter.l]\n"
      "[ratelimit.q]\n"
      "[pipeline.p]\nstrategies = deadline 5s, "
      "bulkhead.b wait 0, limiter.l wait 10ms, "
      "ratelimit.q, retry.r, timeout 1s\n",
      &d);
  if (f == NULL) print_error("%s\n", d.message);
  assert_non_null(f);
  assert_status(bw_config_file_apply(f, fx->reg, &d), BW_OK);
  bw_config_file_free(f);
  bw_retry_policy_t *r = bw_registry_find(fx->reg, BW_REGISTRY_RETRY, "r");
  assert_non_null(r);
  assert_non_null(bw_registry_find(fx->reg, BW_REGISTRY_BUDGET, "shared"));
  /* The bulkhead's one slot is taken: with wait 0 the pipeline refuses at
   * once (its own max_wait_ms, 2 s by default, would have waited). */
  bw_bulkhead_t *bh = bw_registry_find(fx->reg, BW_REGISTRY_BULKHEAD, "b");
  bw_permit_t p;
  bw_pipeline_call_t c;
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_OK);
  bw_pipeline_t *pl = bw_registry_pipeline(fx->reg, "p", NULL, NULL);
  assert_int_equal(bw_pipeline_begin(pl, &c, bw_clock_now(fx->clock)),
                   BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_LIMIT);
  bw_bulkhead_release(bh, &p);
}

/* A pipeline's min_attempt_ms: with less of the deadline left, the call
 * ends with deadline and sends nothing. Under a 1 s deadline and a constant
 * 400 ms backoff, the attempt due at +400 ms (600 ms left) goes and the
 * one due at +800 ms (200 ms left, under 250) does not. */
static void a_pipeline_sets_min_attempt_ms(void **state) {
  fixture_t *fx = *state;
  bw_config_diag_t d;
  bw_pipeline_call_t c;
  bw_config_file_t *f = parse(
      "[retry.r]\nbackoff = constant\nbase_ms = 400ms\njitter = none\n"
      "max_attempts = 5\n"
      "[pipeline.p]\nstrategies = deadline 1s, retry.r\n"
      "min_attempt_ms = 250ms\n",
      &d);
  if (f == NULL) print_error("%s\n", d.message);
  assert_non_null(f);
  {
    char *text = written(f);
    assert_contains(text,
                    "[pipeline.p]\nstrategies = deadline 1000ms, "
                    "retry.r\nmin_attempt_ms = 250\n");
    free(text);
  }
  assert_status(bw_config_file_apply(f, fx->reg, &d), BW_OK);
  bw_config_file_free(f);
  bw_pipeline_t *pl = bw_registry_pipeline(fx->reg, "p", NULL, NULL);
  assert_non_null(pl);
  assert_int_equal(bw_pipeline_begin(pl, &c, bw_clock_now(fx->clock)),
                   BW_STEP_ATTEMPT);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(
        bw_pipeline_report(&c, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE,
                           bw_clock_now(fx->clock)),
        BW_STEP_WAIT);
    assert_i64_eq(c.delay_ms, 400);
    bw_clock_manual_advance(fx->clock, 400 * BW_NS_PER_MS);
    assert_int_equal(bw_pipeline_resume(&c, bw_clock_now(fx->clock)),
                     i == 0 ? BW_STEP_ATTEMPT : BW_STEP_DONE);
  }
  assert_int_equal(c.failure, BW_FAILURE_DEADLINE);
  assert_u64_eq(c.attempt, 2);
}

/* [throttle.default] and [throttle.NAME] make registry throttles, with the
 * environment's overrides; a pipeline stacks one by name (refusing at once:
 * no wait), and the effective configuration prints it. */
static void throttle_sections_make_throttles(void **state) {
  fixture_t *fx = *state;
  const char *text =
      "[throttle.default]\nk = 1.5\n"
      "[throttle.partner]\nwindow_ms = 2m\nbuckets = 120\n"
      "seed = 9\n"
      "[throttle.search]\nk = 3\n"
      "[retry.r]\nmax_attempts = 2\n"
      "[pipeline.p]\nstrategies = retry.r, throttle.partner, "
      "timeout 1s\n";
  bw_config_diag_t d;
  bw_config_file_t *f;
  const bw_throttle_config_t *c;
  setenv("BREAKWATER_SEARCH_THROTTLE_K", "4", 1);
  f = parse(text, &d);
  if (f == NULL) print_error("%s\n", d.message);
  assert_non_null(f);
  c = bw_config_file_config(f, BW_CONFIG_THROTTLE, "partner");
  assert_non_null(c);
  assert_true(c->k == 1.5); /* from the defaults */
  assert_i64_eq(c->window_ms, 120000);
  assert_u64_eq(c->buckets, 120);
  assert_u64_eq(c->seed, 9);
  c = bw_config_file_config(f, BW_CONFIG_THROTTLE, "search");
  assert_true(c->k == 4.0); /* the environment over the section */
  assert_i64_eq(c->window_ms, 60000);
  {
    char *buf = written(f);
    assert_contains(buf,
                    "[throttle.partner]\nk = 1.5\nwindow_ms = 120000\n"
                    "buckets = 120\nseed = 9\n");
    assert_contains(buf, "[throttle.search]\nk = 4\nwindow_ms = 60000\n");
    assert_contains(buf,
                    "[pipeline.p]\nstrategies = retry.r, "
                    "throttle.partner, timeout 1000ms\n");
    free(buf);
  }
  assert_status(bw_config_file_apply(f, fx->reg, &d), BW_OK);
  bw_config_file_free(f);
  unsetenv("BREAKWATER_SEARCH_THROTTLE_K");
  assert_u64_eq(bw_registry_count(fx->reg, BW_REGISTRY_THROTTLE), 2);
  bw_throttle_t *t = bw_registry_find(fx->reg, BW_REGISTRY_THROTTLE, "partner");
  assert_non_null(t);
  {
    bw_throttle_config_t now;
    bw_throttle_config_of(t, &now);
    assert_true(now.k == 1.5);
    assert_i64_eq(now.window_ms, 120000);
    assert_ptr_equal(now.clock, fx->clock); /* the registry's */
  }
  /* The pipeline stacks it inside the retry, refusing at once. */
  bw_pipeline_t *pl = bw_registry_find(fx->reg, BW_REGISTRY_PIPELINE, "p");
  bw_strategy_t st;
  bw_pipeline_call_t call;
  bw_throttle_stats_t ts;
  assert_u64_eq(bw_pipeline_strategy_count(pl), 3);
  assert_status(bw_pipeline_strategy_at(pl, 1, &st), BW_OK);
  assert_int_equal(st.kind, BW_STRATEGY_CUSTOM);
  assert_ptr_equal(st.object, bw_throttle_strategy(t));
  assert_i64_eq(st.max_wait_ms, 0);
  int64_t t0 = bw_clock_now(fx->clock);
  assert_int_equal(bw_pipeline_begin(pl, &call, t0), BW_STEP_ATTEMPT);
  assert_int_equal(
      bw_pipeline_report(&call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE, t0),
      BW_STEP_DONE);
  bw_throttle_stats(t, &ts);
  assert_u64_eq(ts.requests, 1);
  assert_u64_eq(ts.accepts, 1);
}

/* A name already in the registry refuses the whole file: nothing added. */
static void all_or_nothing(void **state) {
  fixture_t *fx = *state;
  bw_error_t err;
  bw_config_diag_t d;
  bw_bulkhead_config_t bc;
  bw_bulkhead_config_init(&bc);
  assert_non_null(bw_registry_bulkhead(fx->reg, "payment_agent", &bc, &err));
  assert_status(bw_registry_load_file_ex(fx->reg, AGENTS, NULL, &d),
                BW_E_INVAL);
  assert_contains(d.message,
                  "agents.ini:45: [bulkhead.payment_agent]: a "
                  "bulkhead named 'payment_agent' is already in "
                  "the registry");
  assert_u64_eq(bw_registry_size(fx->reg), 0);
  for (int k = 0; k < BW_REGISTRY_KIND__COUNT; k++)
    assert_u64_eq(bw_registry_count(fx->reg, (bw_registry_kind_t)k),
                  k == BW_REGISTRY_BULKHEAD ? 1 : 0);
  /* A bad file: nothing either. */
  const char *path = "test_config_file_bad.ini";
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fputs("[breaker.x]\n[bulkhead.y]\nmax_concurrent = 0\n", fp);
  fclose(fp);
  bwt_prefill_error(&err);
  assert_status(bw_registry_load_file(fx->reg, path, &err), BW_E_INVAL);
  assert_string_equal(err.field, "bulkhead.y.max_concurrent");
  assert_contains(err.message,
                  "test_config_file_bad.ini:3: "
                  "bulkhead.y.max_concurrent: max_concurrent");
  remove(path);
  assert_u64_eq(bw_registry_size(fx->reg), 0);
  assert_u64_eq(bw_registry_count(fx->reg, BW_REGISTRY_BULKHEAD), 1);
  /* A file that cannot be read. */
  assert_status(bw_registry_load_file(fx->reg, "/nonexistent/x.ini", &err),
                BW_E_IO);
  assert_string_equal(err.message,
                      "/nonexistent/x.ini: cannot open: No such file or "
                      "directory");
}

static void write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fputs(text, fp);
  fclose(fp);
}

/* The reload tests' start: `text` written to `path` and loaded into the
 * fixture's registry, with `opt` (no environment overrides) for the
 * reloads that follow. */
static void load_written(fixture_t *fx, const char *path, const char *text,
                         bw_config_file_options_t *opt) {
  bw_config_diag_t d;
  bw_config_file_options_init(opt);
  opt->env_prefix = NULL;
  write_file(path, text);
  assert_status(bw_registry_load_file_ex(fx->reg, path, opt, &d), BW_OK);
}

/* The configuration the registry's live breaker `name` runs with now. */
static bw_breaker_config_t live_breaker_config(fixture_t *fx,
                                               const char *name) {
  bw_breaker_t *b = bw_registry_find_breaker(fx->reg, name);
  bw_breaker_config_t c;
  assert_non_null(b);
  bw_breaker_config_of(b, &c);
  bw_registry_put(fx->reg, b);
  return c;
}

#define RELOAD_V1                                                  \
  "[breaker.payment_api]\nfailure_threshold = 3\nbreak_ms = 60s\n" \
  "success_threshold = 3\n"                                        \
  "[bulkhead.payment_agent]\nmax_concurrent = 5\n"                 \
  "[retry.payment_api]\nmax_attempts = 2\n"                        \
  "[pipeline.payment_api]\nstrategies = bulkhead.payment_agent, "  \
  "retry.payment_api, breaker.payment_api\n"

/* Loosening a breaker by editing the file: thresholds applied live, a
 * bulkhead's max_concurrent too, fields fixed at creation reported, kinds
 * without live setters kept, new sections made (a new pipeline may stack a
 * live breaker). */
static void reload_applies_thresholds_and_reports_the_rest(void **state) {
  fixture_t *fx = *state;
  const char *path = "test_config_file_reload.ini";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_reload_t r;
  load_written(fx, path, RELOAD_V1, &opt);
  bw_pipeline_t *old = bw_registry_pipeline(fx->reg, "payment_api", NULL, NULL);
  write_file(path,
             "[breaker.payment_api]\nfailure_threshold = 5\nbreak_ms = 90s\n"
             "success_threshold = 3\ntrip_rule = count_window\n"
             "minimum_calls = 10\n"
             "[bulkhead.payment_agent]\nmax_concurrent = 8\n"
             "[retry.payment_api]\nmax_attempts = 2\n"
             "[pipeline.payment_api]\nstrategies = bulkhead.payment_agent, "
             "retry.payment_api, breaker.payment_api\n"
             "[retry.geo_api]\n"
             "[pipeline.geo_api]\nstrategies = retry.geo_api, "
             "breaker.payment_api\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_string_equal(
      r.report,
      "retry.payment_api: kept as made: a live retry is not reconfigured "
      "(restart to apply a change)\n"
      "retry.geo_api: created\n"
      "breaker.payment_api.trip_rule: consecutive -> count_window: not "
      "applied: fixed at creation (restart to apply)\n"
      "breaker.payment_api.failure_threshold: 3 -> 5: applied\n"
      "breaker.payment_api.minimum_calls: 20 -> 10: applied\n"
      "breaker.payment_api.break_ms: 60000 -> 90000: applied\n"
      "bulkhead.payment_agent.max_concurrent: 5 -> 8: applied\n"
      "pipeline.payment_api: kept as made: a live pipeline is not "
      "reconfigured (restart to apply a change)\n"
      "pipeline.geo_api: created\n");
  assert_u64_eq(r.created, 2);
  assert_u64_eq(r.applied, 4);
  assert_u64_eq(r.not_applied, 1);
  assert_u64_eq(r.kept, 2);
  bw_config_reload_clear(&r);
  assert_null(r.report);
  /* The live breaker now takes 5 failures in a row and breaks for 90 s. */
  bw_breaker_t *b = bw_registry_find_breaker(fx->reg, "payment_api");
  for (int i = 0; i < 5; i++) {
    bw_permit_t p;
    assert_state(bw_breaker_state(b), BW_CLOSED);
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_FAILURE);
  }
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_breaker_retry_in_ms(b), 90000);
  bw_registry_put(fx->reg, b);
  assert_ptr_equal(bw_registry_pipeline(fx->reg, "payment_api", NULL, NULL),
                   old);
  assert_non_null(bw_registry_find(fx->reg, BW_REGISTRY_PIPELINE, "geo_api"));
  {
    bw_bulkhead_stats_t st;
    bw_bulkhead_stats(
        bw_registry_find(fx->reg, BW_REGISTRY_BULKHEAD, "payment_agent"), &st);
    assert_u64_eq(st.max_concurrent, 8);
  }
  /* The same file again: nothing more to apply. */
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_u64_eq(r.created, 0);
  assert_u64_eq(r.applied, 0);
  assert_u64_eq(r.not_applied, 1); /* the trip rule, still */
  bw_config_reload_clear(&r);
  remove(path);
}

/* A broken file changes nothing. */
static void reload_of_a_bad_file_changes_nothing(void **state) {
  fixture_t *fx = *state;
  const char *path = "test_config_file_reload_bad.ini";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_reload_t r;
  load_written(fx, path, RELOAD_V1, &opt);
  write_file(path,
             "[breaker.payment_api]\nfailure_threshold = 10\n"
             "[retry.new_one]\n"
             "[bulkhead.payment_agent]\nmax_concurrent = 0\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_E_INVAL);
  assert_string_equal(d.message,
                      "test_config_file_reload_bad.ini:5: "
                      "bulkhead.payment_agent.max_concurrent: max_concurrent "
                      "must be an integer in [1, 1000000] (got '0')");
  assert_null(r.report);
  assert_u64_eq(r.applied + r.created + r.kept + r.not_applied, 0);
  assert_null(bw_registry_find(fx->reg, BW_REGISTRY_RETRY, "new_one"));
  bw_breaker_config_t c = live_breaker_config(fx, "payment_api");
  assert_u64_eq(c.failure_threshold, 3);
  {
    bw_bulkhead_stats_t st;
    bw_bulkhead_stats(
        bw_registry_find(fx->reg, BW_REGISTRY_BULKHEAD, "payment_agent"), &st);
    assert_u64_eq(st.max_concurrent, 5);
  }
  remove(path);
}

#define LIMITS_V1                                            \
  "[bulkhead.hotel]\nmax_concurrent = 5\ntimeout_ms = 15s\n" \
  "[ratelimit.geo]\nrate_per_sec = 10\n"                     \
  "[limiter.search]\nmin_limit = 1\nmax_limit = 100\n"       \
  "[limiter.wide]\nmax_limit = 50\ninitial_limit = 10\n"     \
  "[budget.shared]\nkind = ratio\n"                          \
  "[budget.tokens]\n"

/* Limits applied live: a bulkhead's max_concurrent, a rate limiter's rate
 * and burst, a limiter's bounds, a ratio budget's share and floor; fields
 * fixed at creation, a creation-only field, and bounds a live limiter
 * cannot take, each reported not applied with the reason; the objects
 * read back the applied values. */
static void reload_applies_limits_live(void **state) {
  fixture_t *fx = *state;
  const char *path = "test_config_file_reload_limits.ini";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_reload_t r;
  load_written(fx, path, LIMITS_V1, &opt);
  write_file(path,
             "[bulkhead.hotel]\nmax_concurrent = 2\ntimeout_ms = 20s\n"
             "[ratelimit.geo]\nrate_per_sec = 100\nburst = 5\n"
             "[limiter.search]\nmin_limit = 2\nmax_limit = 40\n"
             "initial_limit = 10\n"
             "[limiter.wide]\nmax_limit = 80\ninitial_limit = 10\n"
             "[budget.shared]\nkind = ratio\nbudget_percent = 50\n"
             "min_retries_per_sec = 1\n"
             "[budget.tokens]\nmax_tokens = 20\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_string_equal(
      r.report,
      "budget.shared.budget_percent: 20 -> 50: applied\n"
      "budget.shared.min_retries_per_sec: 3 -> 1: applied\n"
      "budget.tokens.max_tokens: 10 -> 20: not applied: fixed at creation "
      "(restart to apply)\n"
      "bulkhead.hotel.max_concurrent: 5 -> 2: applied\n"
      "bulkhead.hotel.timeout_ms: 15000 -> 20000: not applied: fixed at "
      "creation (restart to apply)\n"
      "limiter.search.initial_limit: 20 -> 10: not applied: used only at "
      "creation (restart to apply)\n"
      "limiter.search.min_limit: 1 -> 2: applied\n"
      "limiter.search.max_limit: 100 -> 40: applied\n"
      "limiter.wide.max_limit: 50 -> 80: not applied: on the live limiter, "
      "max_limit must be in [min_limit 1, 50], the creation max_limit (got "
      "80)\n"
      "ratelimit.geo.rate_per_sec: 10 -> 100: applied\n"
      "ratelimit.geo.burst: 1 -> 5: applied\n");
  assert_u64_eq(r.applied, 7);
  assert_u64_eq(r.not_applied, 4);
  assert_u64_eq(r.kept, 0);
  assert_u64_eq(r.created, 0);
  bw_config_reload_clear(&r);
  {
    bw_bulkhead_config_t c;
    bw_bulkhead_config_of(
        bw_registry_find(fx->reg, BW_REGISTRY_BULKHEAD, "hotel"), &c);
    assert_u64_eq(c.max_concurrent, 2);
    assert_i64_eq(c.timeout_ms, 15000);
  }
  {
    bw_ratelimit_config_t c;
    bw_ratelimit_config_of(
        bw_registry_find(fx->reg, BW_REGISTRY_RATELIMIT, "geo"), &c);
    assert_true(c.rate_per_sec == 100.0);
    assert_u64_eq(c.burst, 5);
  }
  {
    bw_limiter_t *lim =
        bw_registry_find(fx->reg, BW_REGISTRY_LIMITER, "search");
    bw_limiter_config_t c;
    bw_limiter_config_of(lim, &c);
    assert_u64_eq(c.min_limit, 2);
    assert_u64_eq(c.max_limit, 40);
    assert_u64_eq(bw_limiter_limit(lim), 20); /* inside: unchanged */
    bw_limiter_config_of(bw_registry_find(fx->reg, BW_REGISTRY_LIMITER, "wide"),
                         &c);
    assert_u64_eq(c.max_limit, 50);
  }
  {
    bw_budget_config_t c;
    bw_budget_config_of(bw_registry_find(fx->reg, BW_REGISTRY_BUDGET, "shared"),
                        &c);
    assert_true(c.budget_percent == 50.0);
    assert_true(c.min_retries_per_sec == 1.0);
    bw_budget_config_of(bw_registry_find(fx->reg, BW_REGISTRY_BUDGET, "tokens"),
                        &c);
    assert_true(c.max_tokens == 10.0);
  }
  /* The same file again: what was applied is now the live value. */
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_u64_eq(r.applied, 0);
  assert_u64_eq(r.not_applied, 4);
  bw_config_reload_clear(&r);
  remove(path);
}

/* A reload applies a live throttle's K; its window and buckets are fixed
 * at creation. */
static void reload_applies_a_throttles_k(void **state) {
  fixture_t *fx = *state;
  const char *path = "test_config_file_reload_throttle.ini";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_reload_t r;
  bw_throttle_config_t c;
  load_written(fx, path, "[throttle.partner]\nk = 2\n", &opt);
  bw_throttle_t *t = bw_registry_find(fx->reg, BW_REGISTRY_THROTTLE, "partner");
  assert_non_null(t);
  write_file(path,
             "[throttle.partner]\nk = 1.5\nwindow_ms = 30s\n"
             "[throttle.fresh]\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_string_equal(r.report,
                      "throttle.partner.k: 2 -> 1.5: applied\n"
                      "throttle.partner.window_ms: 60000 -> 30000: not "
                      "applied: fixed at creation (restart to apply)\n"
                      "throttle.fresh: created\n");
  assert_u64_eq(r.applied, 1);
  assert_u64_eq(r.not_applied, 1);
  assert_u64_eq(r.created, 1);
  bw_config_reload_clear(&r);
  bw_throttle_config_of(t, &c);
  assert_true(c.k == 1.5);
  assert_i64_eq(c.window_ms, 60000);
  assert_non_null(bw_registry_find(fx->reg, BW_REGISTRY_THROTTLE, "fresh"));
  /* A K out of range refuses the whole file, naming it: K stays. */
  write_file(path, "[throttle.partner]\nk = 11\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_E_INVAL);
  assert_contains(d.message,
                  "test_config_file_reload_throttle.ini:2: "
                  "throttle.partner.k: k must be a number in [1, "
                  "10] (got '11')");
  bw_throttle_config_of(t, &c);
  assert_true(c.k == 1.5);
  remove(path);
}

/* Values the live breaker cannot take together with its fixed fields:
 * none of them is applied, each says why. */
static void reload_applies_a_breaker_whole_or_not_at_all(void **state) {
  fixture_t *fx = *state;
  const char *path = "test_config_file_reload_whole.ini";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_reload_t r;
  load_written(fx, path,
               "[breaker.x]\ntrip_rule = count_window\nwindow_size = 10\n"
               "minimum_calls = 5\n",
               &opt);
  write_file(path,
             "[breaker.x]\ntrip_rule = count_window\n"
             "window_size = 100\nminimum_calls = 50\n"
             "failure_ratio = 0.7\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_string_equal(
      r.report,
      "breaker.x.failure_ratio: 0.5 -> 0.7: not applied: with the live "
      "breaker's fixed fields, minimum_calls must be <= window_size (got 50 "
      "> 10): the window could never hold enough calls\n"
      "breaker.x.window_size: 10 -> 100: not applied: fixed at creation "
      "(restart to apply)\n"
      "breaker.x.minimum_calls: 5 -> 50: not applied: with the live "
      "breaker's fixed fields, minimum_calls must be <= window_size (got 50 "
      "> 10): the window could never hold enough calls\n");
  assert_u64_eq(r.applied, 0);
  assert_u64_eq(r.not_applied, 3);
  bw_config_reload_clear(&r);
  bw_breaker_config_t c = live_breaker_config(fx, "x");
  assert_dbl_eq(c.failure_ratio, 0.5, 0);
  assert_u64_eq(c.minimum_calls, 5);
  remove(path);
}

static void every_verb_answers_null_without_crashing(void **state) {
  fixture_t *fx = *state;
  bw_config_diag_t d;
  bw_error_t err;
  const char *k, *n;
  bw_config_file_options_init(NULL);
  bw_config_file_free(NULL);
  assert_null(bw_config_file_read(NULL, NULL, &d));
  assert_int_equal(d.code, BW_E_INVAL);
  assert_null(bw_config_file_read(NULL, NULL, NULL));
  assert_null(bw_config_file_parse(NULL, 3, NULL, NULL, &d));
  assert_int_equal(d.code, BW_E_INVAL);
  assert_u64_eq(bw_config_file_count(NULL), 0);
  assert_status(bw_config_file_object(NULL, 0, &k, &n), BW_E_INVAL);
  assert_null(bw_config_file_config(NULL, BW_CONFIG_BREAKER, "a"));
  assert_status(bw_config_file_write(NULL, stdout), BW_E_INVAL);
  assert_status(bw_config_file_apply(NULL, fx->reg, &d), BW_E_INVAL);
  assert_status(bw_registry_load_file(NULL, AGENTS, &err), BW_E_INVAL);
  assert_status(bw_registry_load_file(fx->reg, NULL, &err), BW_E_INVAL);
  assert_status(bw_registry_load_file_ex(fx->reg, AGENTS, NULL, NULL), BW_OK);
  bw_config_reload_t r;
  assert_status(bw_registry_reload(NULL, AGENTS, &r, &err), BW_E_INVAL);
  assert_null(r.report);
  assert_status(bw_registry_reload(fx->reg, NULL, &r, &err), BW_E_INVAL);
  assert_status(bw_registry_reload(fx->reg, AGENTS, NULL, NULL), BW_OK);
  bw_config_reload_clear(NULL);
}

#define HTTP_FILE                                    \
  "[http.default]\ndeadline_ms = 20s\n"              \
  "[http.payments]\nbreaker.failure_ratio = 0.2\n"   \
  "retry.max_attempts = 2\nlimiter.max_limit = 64\n" \
  "[http.search]\nuse_retry = off\nuse_budget = off\n"

/* [http.NAME]: the standard HTTP pipeline by name, its parts' fields
 * overridden as breaker.failure_ratio = 0.2, inheriting [http.default]
 * and the preset's defaults; loaded as registry objects named NAME. */
static void http_sections_make_the_standard_pipeline(void **state) {
  fixture_t *fx = *state;
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_file_t *f;
  const bw_http_standard_config_t *hc;
  bw_config_file_options_init(&opt);
  opt.env_prefix = "CFGX_TEST";
  setenv("CFGX_TEST_PAYMENTS_HTTP_RETRY_BASE_MS", "500ms", 1);
  f = bw_config_file_parse(HTTP_FILE, strlen(HTTP_FILE), "http.ini", &opt, &d);
  if (f == NULL) fail_msg("%s", d.message);
  /* The effective values: file, defaults section, preset, environment. */
  hc = bw_config_file_config(f, BW_CONFIG_HTTP, "payments");
  assert_non_null(hc);
  assert_string_equal(hc->name, "payments");
  assert_i64_eq(hc->deadline_ms, 20000);        /* [http.default] */
  assert_i64_eq(hc->attempt_timeout_ms, 10000); /* the preset's */
  assert_true(hc->breaker.failure_ratio == 0.2);
  assert_int_equal(hc->breaker.trip_rule, BW_TRIP_TIME_WINDOW);
  assert_int_equal(hc->breaker.minimum_calls, 100);
  assert_int_equal(hc->retry.max_attempts, 2);
  assert_i64_eq(hc->retry.base_ms, 500); /* the environment's */
  assert_int_equal(hc->limiter.max_limit, 64);
  assert_int_equal(hc->budget.kind, BW_BUDGET_RATIO);
  {
    char *text = written(f);
    assert_contains(text, "[http.payments]\ndeadline_ms = 20000\n");
    assert_contains(text, "breaker.failure_ratio = 0.2\n");
    assert_contains(text, "retry.base_ms = 500\n");
    free(text);
  }
  assert_status(bw_config_file_apply(f, fx->reg, &d), BW_OK);
  bw_config_file_free(f);
  unsetenv("CFGX_TEST_PAYMENTS_HTTP_RETRY_BASE_MS");
  /* The parts, named by the section. */
  {
    bw_breaker_t *b = bw_registry_find_breaker(fx->reg, "payments");
    bw_breaker_config_t bc;
    bw_limiter_config_t lc;
    assert_non_null(b);
    bw_breaker_config_of(b, &bc);
    assert_true(bc.failure_ratio == 0.2);
    assert_i64_eq(bc.break_ms, 5000);
    assert_ptr_equal(bc.clock, fx->clock); /* the registry's */
    bw_registry_put(fx->reg, b);
    bw_limiter_config_of(
        bw_registry_find(fx->reg, BW_REGISTRY_LIMITER, "payments"), &lc);
    assert_int_equal(lc.max_limit, 64);
    assert_non_null(bw_registry_find(fx->reg, BW_REGISTRY_RETRY, "payments"));
    assert_non_null(bw_registry_find(fx->reg, BW_REGISTRY_BUDGET, "payments"));
    assert_null(bw_registry_find(fx->reg, BW_REGISTRY_RETRY, "search"));
    assert_null(bw_registry_find(fx->reg, BW_REGISTRY_BUDGET, "search"));
    assert_non_null(bw_registry_find(fx->reg, BW_REGISTRY_LIMITER, "search"));
  }
  /* The pipeline: a 20 s deadline, 10 s attempts, two attempts in all. */
  {
    bw_pipeline_t *pl = bw_registry_pipeline(fx->reg, "payments", NULL, NULL);
    bw_pipeline_call_t call;
    int64_t t0 = bw_clock_now(fx->clock);
    assert_non_null(pl);
    assert_int_equal(bw_pipeline_begin(pl, &call, t0), BW_STEP_ATTEMPT);
    assert_i64_eq(call.deadline.at_ns, t0 + 20000 * BW_NS_PER_MS);
    assert_i64_eq(call.attempt_timeout_ms, 10000);
    assert_int_equal(
        bw_pipeline_report(&call, BW_VERDICT_TRANSIENT, -1, t0 + BW_NS_PER_MS),
        BW_STEP_WAIT);
    int64_t t1 = t0 + BW_NS_PER_MS + call.delay_ms * BW_NS_PER_MS;
    assert_int_equal(bw_pipeline_resume(&call, t1), BW_STEP_ATTEMPT);
    assert_int_equal(call.attempt, 2);
    assert_int_equal(
        bw_pipeline_report(&call, BW_VERDICT_TRANSIENT, -1, t1 + BW_NS_PER_MS),
        BW_STEP_DONE);
    assert_int_equal(call.attempt, 2);
  }
}

/* limit_per_attempt in an [http.NAME]: the pipeline is deadline, breaker,
 * retry, limit, timeout, the limit being the section's limiter, so its
 * stuck_timeout cuts an attempt admitted above the proven level (one 100 ms
 * good answer, stuck_ratio 2: 200 ms instead of the preset's 10 s). */
static void http_limit_per_attempt_puts_the_limit_inside_the_retry(
    void **state) {
  fixture_t *fx = *state;
  bw_config_diag_t d;
  bw_config_file_t *f;
  bw_strategy_t st;
  static const bw_strategy_kind_t order[] = {
      BW_STRATEGY_DEADLINE, BW_STRATEGY_BREAKER, BW_STRATEGY_RETRY,
      BW_STRATEGY_LIMIT, BW_STRATEGY_TIMEOUT};
  const char *text =
      "[http.x]\nlimit_per_attempt = true\nlimiter.stuck_ratio = 2\n"
      "limiter.stuck_timeout = true\n";
  f = bw_config_file_parse(text, strlen(text), "x.ini", NULL, &d);
  if (f == NULL) fail_msg("%s", d.message);
  assert_true(((const bw_http_standard_config_t *)bw_config_file_config(
                   f, BW_CONFIG_HTTP, "x"))
                  ->limit_per_attempt);
  assert_status(bw_config_file_apply(f, fx->reg, &d), BW_OK);
  bw_config_file_free(f);
  bw_pipeline_t *pl = bw_registry_pipeline(fx->reg, "x", NULL, NULL);
  bw_limiter_t *lim = bw_registry_find(fx->reg, BW_REGISTRY_LIMITER, "x");
  assert_non_null(pl);
  assert_non_null(lim);
  assert_int_equal(bw_pipeline_strategy_count(pl), 5);
  for (uint32_t i = 0; i < 5; i++) {
    assert_status(bw_pipeline_strategy_at(pl, i, &st), BW_OK);
    assert_int_equal(st.kind, order[i]);
  }
  assert_status(bw_pipeline_strategy_at(pl, 3, &st), BW_OK);
  assert_ptr_equal(st.object, bw_limiter_as_limit(lim));
  assert_i64_eq(st.max_wait_ms, 1000);
  /* The stuck cut reaches the file's pipeline, once 16 answers of 100 ms
   * have set the stuck age (200 ms). */
  bw_pipeline_call_t a, b;
  int64_t t0 = 0;
  for (int i = 0; i < 16; i++) {
    t0 = bw_clock_now(fx->clock);
    assert_int_equal(bw_pipeline_begin(pl, &a, t0), BW_STEP_ATTEMPT);
    assert_i64_eq(a.attempt_timeout_ms, 10000);
    bw_clock_manual_advance(fx->clock, 100 * BW_NS_PER_MS); /* the limiter's */
    t0 = bw_clock_now(fx->clock);
    assert_int_equal(bw_pipeline_report(&a, BW_VERDICT_OK, -1, t0),
                     BW_STEP_DONE);
  }
  assert_int_equal(bw_pipeline_begin(pl, &a, t0), BW_STEP_ATTEMPT);
  assert_i64_eq(a.attempt_timeout_ms, 10000); /* at 1, the proven level */
  assert_int_equal(bw_pipeline_begin(pl, &b, t0), BW_STEP_ATTEMPT);
  assert_i64_eq(b.attempt_timeout_ms, 200); /* at 2, above it */
  bw_pipeline_cancel(&a);
  bw_pipeline_cancel(&b);
}

/* A reload cannot move the limit of a live [http.NAME]: a changed
 * limit_per_attempt is reported not applied (the pipeline's order is fixed
 * at creation), its limiter's changes planned as always. */
static void reload_keeps_the_place_of_an_http_limit(void **state) {
  fixture_t *fx = *state;
  const char *path = "test_config_file_reload_http_limit.ini";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_reload_t r;
  bw_strategy_t st;
  load_written(fx, path,
               "[http.x]\nlimit_per_attempt = true\n"
               "[http.y]\nlimiter.max_limit = 64\n"
               "[http.z]\nuse_breaker = off\nuse_retry = off\n"
               "use_budget = off\n",
               &opt);
  write_file(path,
             "[http.x]\nlimit_per_attempt = false\n"
             "[http.y]\nlimiter.max_limit = 32\nlimit_per_attempt = on\n"
             "[http.z]\nuse_breaker = off\nuse_retry = off\n"
             "use_budget = off\nlimit_per_attempt = on\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_string_equal(
      r.report,
      "http.x.limit_per_attempt: true -> false: not applied: fixed at "
      "creation, the pipeline's order (restart to apply)\n"
      "http.x: its pipeline (deadline_ms, limit_wait_ms, attempt_timeout_ms, "
      "limit_per_attempt, min_attempt_ms) and retry policy are kept as made "
      "(restart to "
      "apply a change)\n"
      "http.y.limit_per_attempt: false -> true: not applied: fixed at "
      "creation, the pipeline's order (restart to apply)\n"
      "limiter.y.max_limit: 64 -> 32: applied\n"
      "http.y: its pipeline (deadline_ms, limit_wait_ms, attempt_timeout_ms, "
      "limit_per_attempt, min_attempt_ms) and retry policy are kept as made "
      "(restart to "
      "apply a change)\n"
      "http.z: its pipeline (deadline_ms, limit_wait_ms, attempt_timeout_ms, "
      "limit_per_attempt, min_attempt_ms) and retry policy are kept as made "
      "(restart to "
      "apply a change)\n");
  /* z: a limit alone with the timeout reads the same in either order. */
  assert_u64_eq(r.applied, 1);
  assert_u64_eq(r.not_applied, 2);
  assert_u64_eq(r.kept, 3);
  bw_config_reload_clear(&r);
  /* The orders are as made. */
  assert_status(bw_pipeline_strategy_at(
                    bw_registry_pipeline(fx->reg, "x", NULL, NULL), 3, &st),
                BW_OK);
  assert_int_equal(st.kind, BW_STRATEGY_LIMIT);
  assert_status(bw_pipeline_strategy_at(
                    bw_registry_pipeline(fx->reg, "y", NULL, NULL), 1, &st),
                BW_OK);
  assert_int_equal(st.kind, BW_STRATEGY_LIMIT);
  remove(path);
}

/* An [http.NAME] makes five objects named NAME: a section of the file, or
 * an object of the registry, of one of their kinds and that name is
 * refused, naming both; nothing is made. */
static void http_section_name_collisions(void **state) {
  fixture_t *fx = *state;
  bw_config_diag_t d;
  bw_config_file_t *f;
  bw_error_t err;
  const char *text = "[http.payments]\n\n[breaker.payments]\n";
  f = bw_config_file_parse(text, strlen(text), "x.ini", NULL, &d);
  assert_null(f);
  assert_string_equal(d.message,
                      "x.ini:1: [http.payments]: [http.payments] makes the "
                      "breaker named 'payments', and [breaker.payments] at "
                      "line 3 names one too: rename one of them");
  /* use_retry off: no retry is made, so [retry.payments] is fine. */
  text =
      "[http.payments]\nuse_retry = off\nuse_budget = off\n"
      "[retry.payments]\n";
  f = bw_config_file_parse(text, strlen(text), "x.ini", NULL, &d);
  assert_non_null(f);
  bw_config_file_free(f);
  /* A limiter of that name already in the registry. */
  assert_non_null(bw_registry_limiter(fx->reg, "payments", NULL, &err));
  text = "[http.payments]\n";
  f = bw_config_file_parse(text, strlen(text), "x.ini", NULL, &d);
  assert_non_null(f);
  assert_status(bw_config_file_apply(f, fx->reg, &d), BW_E_INVAL);
  assert_string_equal(d.message,
                      "x.ini:1: [http.payments]: a limiter named 'payments' "
                      "is already in the registry (the preset makes one)");
  bw_config_file_free(f);
  assert_null(bw_registry_find(fx->reg, BW_REGISTRY_PIPELINE, "payments"));
  assert_u64_eq(bw_registry_size(fx->reg), 0);
  /* A part's bad value names the section's key, its line and the rule. */
  text = "[http.payments]\nbreaker.failure_ratio = 2\n";
  f = bw_config_file_parse(text, strlen(text), "x.ini", NULL, &d);
  assert_null(f);
  assert_contains(d.message,
                  "x.ini:2: http.payments.breaker.failure_ratio: "
                  "breaker.failure_ratio must be a ratio");
}

/* Reloading an [http.NAME] whose pipeline is live: its breaker and budget
 * take their changes as sections of their kinds would (the lines name the
 * objects), a use_* toggle is not applied, and the pipeline's own fields
 * and the retry are kept, in one line. */
static void reload_of_a_live_http_section(void **state) {
  fixture_t *fx = *state;
  const char *path = "test_config_file_reload_http.ini";
  bw_config_file_options_t opt;
  bw_config_diag_t d;
  bw_config_reload_t r;
  load_written(fx, path,
               "[http.payments]\ndeadline_ms = 20s\n"
               "breaker.failure_ratio = 0.2\nlimiter.max_limit = 64\n"
               "retry.max_attempts = 2\n",
               &opt);
  write_file(path,
             "[http.payments]\ndeadline_ms = 25s\n"
             "breaker.failure_ratio = 0.3\nbreaker.window_ms = 60s\n"
             "retry.max_attempts = 3\nbudget.budget_percent = 30\n"
             "use_limiter = off\n");
  assert_status(bw_registry_reload_ex(fx->reg, path, &opt, &r, &d), BW_OK);
  assert_string_equal(
      r.report,
      "http.payments.use_limiter: true -> false: not applied: the preset's "
      "parts are made with its pipeline (restart to apply)\n"
      "breaker.payments.failure_ratio: 0.2 -> 0.3: applied\n"
      "breaker.payments.window_ms: 30000 -> 60000: not applied: fixed at "
      "creation (restart to apply)\n"
      "budget.payments.budget_percent: 20 -> 30: applied\n"
      "http.payments: its pipeline (deadline_ms, limit_wait_ms, "
      "attempt_timeout_ms, limit_per_attempt, min_attempt_ms) and retry "
      "policy are kept as "
      "made (restart to apply a change)\n");
  assert_u64_eq(r.applied, 2);
  assert_u64_eq(r.not_applied, 2);
  assert_u64_eq(r.kept, 1);
  assert_u64_eq(r.created, 0);
  bw_config_reload_clear(&r);
  {
    bw_breaker_t *b = bw_registry_find_breaker(fx->reg, "payments");
    bw_breaker_config_t bc;
    bw_budget_config_t uc;
    bw_breaker_config_of(b, &bc);
    assert_true(bc.failure_ratio == 0.3);
    assert_i64_eq(bc.window_ms, 30000);
    bw_registry_put(fx->reg, b);
    bw_budget_config_of(
        bw_registry_find(fx->reg, BW_REGISTRY_BUDGET, "payments"), &uc);
    assert_true(uc.budget_percent == 30.0);
  }
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(agents_file_makes_the_reference_toolkit,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(agents_pipeline_uses_the_files_breaker,
                                      setup, teardown),
      cmocka_unit_test(agents_effective_values),
      cmocka_unit_test(defaults_then_instance),
      cmocka_unit_test(environment_overrides_the_file),
      cmocka_unit_test(bad_input_names_file_line_key_and_rule),
      cmocka_unit_test(long_line_is_refused),
      cmocka_unit_test(section_count_is_capped),
      cmocka_unit_test(ini_dialect),
      cmocka_unit_test(write_reads_back),
      cmocka_unit_test_setup_teardown(references_become_objects, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(all_or_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(a_pipeline_sets_min_attempt_ms, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(throttle_sections_make_throttles, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(reload_applies_a_throttles_k, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          reload_applies_thresholds_and_reports_the_rest, setup, teardown),
      cmocka_unit_test_setup_teardown(reload_of_a_bad_file_changes_nothing,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          reload_applies_a_breaker_whole_or_not_at_all, setup, teardown),
      cmocka_unit_test_setup_teardown(reload_applies_limits_live, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(http_sections_make_the_standard_pipeline,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(http_section_name_collisions, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(reload_of_a_live_http_section, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          http_limit_per_attempt_puts_the_limit_inside_the_retry, setup,
          teardown),
      cmocka_unit_test_setup_teardown(reload_keeps_the_place_of_an_http_limit,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(every_verb_answers_null_without_crashing,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

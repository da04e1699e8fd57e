/* Specification tests: the backpressure stage, multi-stage pipelines and the
 * batch producer (the backpressure article; issue 6).
 *
 * Every test runs on a manual clock and asserts exact values:
 *   - pressure = (queued + in_flight) / (queue_size + concurrency) (rule 1);
 *   - the regime's ceiling is applied before the queue's policy;
 *   - the pull API bounds the work in flight; expired items never reach a
 *     driver; completions past their deadline are counted stale;
 *   - the service rate is an EWMA of completions per window;
 *   - retry_after_ms = ceil(max(1, queued + in_flight - concurrency) * 1000
 *     / rate), bounded by [min_retry_after_ms, max_retry_after_ms];
 *   - a stage's effective pressure is max(own, next stage's effective)
 *     (rule 2); the edge answers accept / warn / refuse (rule 3);
 *   - the batch producer pulls full chunks in normal, a fraction in
 *     degraded, nothing in critical (rule 4);
 *   - conservation after every scenario:
 *     admitted = processed + failed + shed + expired + queued + in_flight. */
#include "bw_test.h"
#include "breakwater/stage.h"
#include "breakwater/threads.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define NONE BW_QUEUE_NO_DEADLINE
#define IT(c) ((void *)(uintptr_t)(c))

static bw_clock_t *clk;

typedef struct exp_log_s {
  size_t n;
  uintptr_t data[64];
  int64_t now[64];
} exp_log_t;

static void on_expired(const bw_queue_item_t *it, int64_t now, void *ud) {
  exp_log_t *l = ud;
  if (l->n < 64) {
    l->data[l->n] = (uintptr_t)it->data;
    l->now[l->n] = now;
  }
  l->n++;
}

static int setup(void **state) {
  (void)state;
  clk = bw_clock_manual_new(BWT_T0_NS);
  return clk == NULL ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  bw_clock_free(clk);
  clk = NULL;
  return 0;
}

static void advance_ms(int64_t ms) {
  bw_clock_manual_advance(clk, ms * MS);
}

static int64_t now_ns(void) {
  return bw_clock_now(clk);
}

/* Defaults with the test clock, the given queue size and concurrency. */
static void config(bw_stage_config_t *c, const char *name, uint32_t size,
                   uint32_t conc) {
  bw_stage_config_init(c);
  c->name = name;
  c->queue_size = size;
  c->concurrency = conc;
  c->clock = clk;
}

static bw_stage_t *make(const bw_stage_config_t *c) {
  bw_error_t err;
  bw_stage_t *s = bw_stage_new(c, &err);
  if (s == NULL) fail_msg("bw_stage_new: [%s] %s", err.field, err.message);
  return s;
}

static bw_stage_stats_t stats(bw_stage_t *s) {
  bw_stage_stats_t st;
  memset(&st, 0xA5, sizeof(st));
  bw_stage_stats(s, &st);
  return st;
}

static void assert_conserved(bw_stage_t *s) {
  bw_stage_stats_t st = stats(s);
  assert_u64_eq(st.submitted, st.admitted + st.rejected);
  assert_u64_eq(st.rejected, st.rejected_ceiling + st.rejected_full);
  assert_u64_eq(st.admitted, st.processed + st.failed + st.shed + st.expired +
                                 st.queued + st.in_flight);
}

static int submit(bw_stage_t *s, int c, uint32_t prio, bw_stage_result_t *r) {
  bw_stage_result_t tmp;
  return bw_stage_submit(s, IT(c), prio, NONE, r != NULL ? r : &tmp);
}

/* next() that must hand out `c`. */
static bw_stage_item_t take(bw_stage_t *s, int c) {
  bw_stage_item_t it;
  assert_status(bw_stage_next(s, &it), BW_OK);
  assert_ptr_equal(it.data, IT(c));
  return it;
}

/* ==== configuration ===================================================== */

static void defaults_are_documented(void **state) {
  bw_stage_config_t c;
  bw_batch_config_t b;
  bw_runner_config_t r;
  (void)state;
  bw_stage_config_init(&c);
  assert_string_equal(c.name, "stage");
  assert_u64_eq(c.queue_size, 0);
  assert_int_equal(c.policy, BW_QUEUE_REJECT);
  assert_u64_eq(c.priority_levels, 256);
  assert_u64_eq(c.concurrency, 1);
  assert_dbl_eq(c.gauge.degraded_at, 0.6, 0);
  assert_dbl_eq(c.gauge.critical_at, 0.85, 0);
  assert_dbl_eq(c.gauge.hysteresis, 0.1, 0);
  assert_i64_eq(c.rate_window_ms, 1000);
  assert_dbl_eq(c.rate_alpha, 0.5, 0);
  assert_i64_eq(c.min_retry_after_ms, 1);
  assert_i64_eq(c.max_retry_after_ms, 30000);
  assert_dbl_eq(c.retry_jitter, 0.0, 0);
  assert_null(c.next);
  assert_null(c.clock);
  assert_null(c.on_expired);
  bw_batch_config_init(&b);
  assert_u64_eq(b.chunk_size, 100);
  assert_dbl_eq(b.degraded_fraction, 0.25, 0);
  bw_runner_config_init(&r);
  assert_u64_eq(r.threads, 1);
  assert_null(r.handler);
}

typedef void (*mutate_fn)(bw_stage_config_t *c);
static void m_name(bw_stage_config_t *c) {
  c->name = "";
}
static void m_size0(bw_stage_config_t *c) {
  c->queue_size = 0;
}
static void m_size_big(bw_stage_config_t *c) {
  c->queue_size = BW_QUEUE_MAX_SIZE + 1;
}
static void m_policy(bw_stage_config_t *c) {
  c->policy = (bw_queue_policy_t)9;
}
static void m_levels(bw_stage_config_t *c) {
  c->priority_levels = 0;
}
static void m_conc0(bw_stage_config_t *c) {
  c->concurrency = 0;
}
static void m_conc_big(bw_stage_config_t *c) {
  c->concurrency = BW_STAGE_MAX_CONCURRENCY + 1;
}
static void m_order(bw_stage_config_t *c) {
  c->gauge.degraded_at = 0.9;
}
static void m_crit(bw_stage_config_t *c) {
  c->gauge.critical_at = 1.5;
}
static void m_hyst(bw_stage_config_t *c) {
  c->gauge.hysteresis = -0.1;
}
static void m_ceiling(bw_stage_config_t *c) {
  c->gauge.ceiling[BW_REGIME_CRITICAL] = 9;
}
static void m_window(bw_stage_config_t *c) {
  c->rate_window_ms = 0;
}
static void m_alpha0(bw_stage_config_t *c) {
  c->rate_alpha = 0.0;
}
static void m_alpha_nan(bw_stage_config_t *c) {
  c->rate_alpha = NAN;
}
static void m_min(bw_stage_config_t *c) {
  c->min_retry_after_ms = 0;
}
static void m_max(bw_stage_config_t *c) {
  c->min_retry_after_ms = 100;
  c->max_retry_after_ms = 99;
}
static void m_jitter(bw_stage_config_t *c) {
  c->retry_jitter = 1.5;
}

static void bad_configs_are_refused_naming_the_field(void **state) {
  static const struct {
    mutate_fn m;
    const char *field;
    const char *rule;
  } cases[] = {
      {m_name, "name", "must not be empty"},
      {m_size0, "queue_size", "queue_size must be in [1, 67108864] (got 0)"},
      {m_size_big, "queue_size", "(got 67108865)"},
      {m_policy, "policy", "(got 9)"},
      {m_levels, "priority_levels", "priority_levels must be in"},
      {m_conc0, "concurrency", "concurrency must be in [1, 1048576] (got 0)"},
      {m_conc_big, "concurrency", "(got 1048577)"},
      {m_order, "gauge.degraded_at",
       "gauge.degraded_at must be < critical_at (got 0.9 >= 0.85)"},
      {m_crit, "gauge.critical_at", "gauge.critical_at must be in (0, 1]"},
      {m_hyst, "gauge.hysteresis", "gauge.hysteresis must be in [0, 1]"},
      {m_ceiling, "gauge.ceiling", "ceiling[critical] must be <="},
      {m_window, "rate_window_ms", "rate_window_ms must be >= 1 (got 0)"},
      {m_alpha0, "rate_alpha", "rate_alpha must be in (0, 1] (got 0)"},
      {m_alpha_nan, "rate_alpha", "rate_alpha must be in (0, 1]"},
      {m_min, "min_retry_after_ms", "min_retry_after_ms must be >= 1 (got 0)"},
      {m_max, "max_retry_after_ms",
       "max_retry_after_ms must be >= min_retry_after_ms (got 99 < 100)"},
      {m_jitter, "retry_jitter", "retry_jitter must be in [0, 1] (got 1.5)"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    bw_stage_config_t c;
    bw_error_t err;
    config(&c, "bad", 8, 2);
    cases[i].m(&c);
    memset(&err, 0, sizeof(err));
    assert_null(bw_stage_new(&c, &err));
    assert_status(err.code, BW_E_INVAL);
    assert_string_equal(err.field, cases[i].field);
    assert_contains(err.message, cases[i].rule);
    assert_status(bw_stage_config_validate(&c, NULL), BW_E_INVAL);
  }
  assert_null(bw_stage_new(NULL, NULL));
}

static void bad_batch_and_runner_configs_name_the_field(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_batch_config_t b;
  bw_batch_plan_t plan;
  bw_runner_config_t r;
  bw_error_t err;
  (void)state;
  config(&c, "s", 8, 2);
  s = make(&c);
  bw_batch_config_init(&b);
  b.chunk_size = 0;
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_E_INVAL);
  assert_string_equal(err.field, "chunk_size");
  assert_contains(err.message, "chunk_size must be >= 1 (got 0)");
  bw_batch_config_init(&b);
  b.degraded_fraction = 0.0;
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_E_INVAL);
  assert_string_equal(err.field, "degraded_fraction");
  b.degraded_fraction = 1.5;
  assert_status(bw_batch_config_validate(&b, &err), BW_E_INVAL);
  assert_contains(err.message, "degraded_fraction must be in (0, 1] (got 1.5)");

  bw_runner_config_init(&r);
  assert_null(bw_stage_runner_new(s, &r, &err));
  assert_string_equal(err.field, "handler");
  r.threads = 0;
  assert_null(bw_stage_runner_new(s, &r, &err));
  assert_string_equal(err.field, "threads");
  r.threads = 257;
  assert_null(bw_stage_runner_new(s, &r, &err));
  assert_string_equal(err.field, "threads");
  assert_contains(err.message, "threads must be in [1, 256] (got 257)");
  bw_stage_free(s);
}

/* ==== pull API and pressure ============================================= */

static void pull_api_bounds_the_work_in_flight(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_item_t a, b, it;
  bw_stage_result_t r;
  (void)state;
  config(&c, "pull", 8, 2); /* capacity 10 */
  s = make(&c);
  assert_status(bw_stage_next(s, &it), BW_E_NOTFOUND);
  assert_status(submit(s, 'a', 3, &r), BW_QUEUE_ADMITTED);
  assert_int_equal(r.edge, BW_EDGE_ACCEPT);
  assert_int_equal(r.regime, BW_REGIME_NORMAL);
  assert_i64_eq(r.retry_after_ms, 0);
  assert_status(submit(s, 'b', 1, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(s, 'c', 1, NULL), BW_QUEUE_ADMITTED);
  assert_dbl_eq(bw_stage_pressure(s), 0.3, 0);
  /* Most urgent first, arrival order among equals. */
  advance_ms(5);
  a = take(s, 'b');
  assert_i64_eq(a.start_ns, now_ns());
  assert_u64_eq(a.priority, 1);
  b = take(s, 'c');
  /* Taking an item moves it from queued to in flight: same pressure. */
  assert_dbl_eq(bw_stage_pressure(s), 0.3, 0);
  /* concurrency = 2: a third is refused while two are in flight. */
  assert_status(bw_stage_next(s, &it), BW_E_FULL);
  assert_status(bw_stage_done(s, &a, BW_STAGE_PROCESSED), BW_OK);
  assert_dbl_eq(bw_stage_pressure(s), 0.2, 0);
  (void)take(s, 'a');
  assert_status(bw_stage_done(s, &b, BW_STAGE_FAILED), BW_OK);
  assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
  /* Nothing in flight: a completion is refused. */
  assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_E_INVAL);
  assert_status(bw_stage_done(s, &it, (bw_stage_outcome_t)7), BW_E_INVAL);
  assert_status(bw_stage_next(s, &it), BW_E_NOTFOUND);
  /* Bad arguments count nothing. */
  assert_status(bw_stage_submit(s, IT(1), 256, NONE, &r), BW_E_RANGE);
  assert_status(bw_stage_submit(s, IT(1), 0, NONE, NULL), BW_E_INVAL);
  assert_status(bw_stage_submit(NULL, IT(1), 0, NONE, &r), BW_E_INVAL);
  assert_status(bw_stage_next(s, NULL), BW_E_INVAL);
  assert_status(bw_stage_done(NULL, &it, BW_STAGE_PROCESSED), BW_E_INVAL);

  bw_stage_stats_t st = stats(s);
  assert_u64_eq(st.submitted, 3);
  assert_u64_eq(st.admitted, 3);
  assert_u64_eq(st.processed, 2);
  assert_u64_eq(st.failed, 1);
  assert_u64_eq(st.max_queue_seen, 3);
  assert_u64_eq(st.max_in_flight_seen, 2);
  assert_u64_eq(st.queued, 0);
  assert_u64_eq(st.in_flight, 0);
  assert_dbl_eq(st.pressure, 0.0, 0);
  assert_string_equal(bw_stage_name(s), "pull");
  assert_conserved(s);
  bw_stage_free(s);
  bw_stage_free(NULL);
}

/* Defaults: degraded at 0.6, critical at 0.85, ceilings all / 5 / 1. Queue
 * 8 + concurrency 2 = capacity 10, so every item is 0.1 of pressure. */
static void ceiling_by_regime_applies_before_the_queue_policy(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_result_t r;
  bw_stage_item_t it;
  (void)state;
  config(&c, "ceil", 8, 2);
  s = make(&c);
  for (int i = 0; i < 6; i++) {
    assert_status(submit(s, i, 9, &r), BW_QUEUE_ADMITTED);
    assert_int_equal(r.regime, BW_REGIME_NORMAL);
    assert_int_equal(r.edge, BW_EDGE_ACCEPT);
    assert_dbl_eq(r.pressure, 0.1 * i, 1e-12);
  }
  /* 0.6 now: DEGRADED admits priorities <= 5 only. */
  assert_int_equal(bw_stage_regime(s), BW_REGIME_DEGRADED);
  assert_status(submit(s, 'x', 6, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_CEILING);
  assert_int_equal(r.edge, BW_EDGE_REFUSE);
  assert_int_equal(r.regime, BW_REGIME_DEGRADED);
  /* No completion measured yet: the wait is the bound, never a guess. */
  assert_i64_eq(r.retry_after_ms, 30000);
  assert_status(submit(s, 'y', 5, &r), BW_QUEUE_ADMITTED);
  assert_int_equal(r.edge, BW_EDGE_WARN);
  assert_status(submit(s, 'z', 2, &r), BW_QUEUE_ADMITTED);
  /* 8 queued, 0.8: still DEGRADED, the ceiling passes priority 1, and the
   * queue's own policy refuses it. */
  assert_status(submit(s, 'w', 1, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_FULL);
  assert_int_equal(r.regime, BW_REGIME_DEGRADED);
  /* Taking one frees a queue slot; pressure stays 0.8 (in flight counts). */
  it = take(s, 'z');
  assert_status(submit(s, 'v', 1, &r), BW_QUEUE_ADMITTED);
  assert_int_equal(r.regime, BW_REGIME_DEGRADED);
  /* 0.9: CRITICAL admits priorities <= 1; the ceiling refuses 2 first even
   * though... */
  assert_int_equal(bw_stage_regime(s), BW_REGIME_CRITICAL);
  assert_status(submit(s, 'u', 2, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_CEILING);
  assert_int_equal(r.regime, BW_REGIME_CRITICAL);
  /* ... and priority 0 passes the ceiling and meets the full queue. */
  assert_status(submit(s, 't', 0, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_FULL);
  assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);

  bw_stage_stats_t st = stats(s);
  assert_u64_eq(st.submitted, 13);
  assert_u64_eq(st.admitted, 9);
  assert_u64_eq(st.rejected_ceiling, 2);
  assert_u64_eq(st.rejected_full, 2);
  assert_u64_eq(st.queued, 8);
  assert_u64_eq(st.max_queue_seen, 8);
  assert_conserved(s);
  bw_stage_free(s);
}

static void shed_items_are_handed_back_and_counted(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_result_t r;
  (void)state;
  config(&c, "shed", 2, 1);
  c.policy = BW_QUEUE_DROP_LOWEST;
  c.gauge.ceiling[BW_REGIME_DEGRADED] = BW_GAUGE_ADMIT_ALL;
  c.gauge.ceiling[BW_REGIME_CRITICAL] = BW_GAUGE_ADMIT_ALL;
  s = make(&c);
  assert_status(submit(s, 'a', 7, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(s, 'b', 3, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(s, 'c', 1, &r), BW_QUEUE_SHED);
  assert_ptr_equal(r.dropped.data, IT('a'));
  assert_u64_eq(r.dropped.priority, 7);
  assert_int_equal(r.edge, BW_EDGE_WARN); /* 2 of 3: degraded */
  assert_i64_eq(r.retry_after_ms, 0);
  bw_stage_stats_t st = stats(s);
  assert_u64_eq(st.admitted, 3);
  assert_u64_eq(st.shed, 1);
  assert_u64_eq(st.queued, 2);
  assert_conserved(s);
  bw_stage_free(s);
}

static void expired_items_never_reach_the_driver(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_result_t r;
  bw_stage_item_t it;
  exp_log_t log;
  int64_t t0 = now_ns();
  (void)state;
  memset(&log, 0, sizeof(log));
  config(&c, "exp", 8, 1);
  c.on_expired = on_expired;
  c.userdata = &log;
  s = make(&c);
  assert_status(bw_stage_submit(s, IT('a'), 1, t0 + 100 * MS, &r), BW_OK);
  assert_status(bw_stage_submit(s, IT('b'), 1, t0 + 200 * MS, &r), BW_OK);
  assert_status(bw_stage_submit(s, IT('c'), 1, t0 + 300 * MS, &r), BW_OK);
  assert_status(bw_stage_submit(s, IT('d'), 1, NONE, &r), BW_OK);
  advance_ms(200); /* a and b are due (deadline reached = expired) */
  it = take(s, 'c');
  assert_u64_eq(log.n, 2);
  assert_ptr_equal((void *)log.data[0], IT('a'));
  assert_ptr_equal((void *)log.data[1], IT('b'));
  assert_i64_eq(log.now[0], t0 + 200 * MS);
  /* c completes after its deadline: processed, and stale. */
  advance_ms(150);
  assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
  it = take(s, 'd');
  assert_status(bw_stage_done(s, &it, BW_STAGE_FAILED), BW_OK);
  bw_stage_stats_t st = stats(s);
  assert_u64_eq(st.expired, 2);
  assert_u64_eq(st.processed, 1);
  assert_u64_eq(st.failed, 1);
  assert_u64_eq(st.stale, 1);
  assert_conserved(s);
  bw_stage_free(s);

  /* Without on_expired the driver receives it as BW_E_DEADLINE, counted. */
  config(&c, "exp2", 8, 1);
  s = make(&c);
  assert_status(bw_stage_submit(s, IT('e'), 1, now_ns(), &r), BW_OK);
  assert_status(bw_stage_next(s, &it), BW_E_DEADLINE);
  assert_ptr_equal(it.data, IT('e'));
  st = stats(s);
  assert_u64_eq(st.expired, 1);
  assert_u64_eq(st.in_flight, 0);
  assert_conserved(s);
  /* A runner needs on_expired. */
  bw_runner_config_t rc;
  bw_error_t err;
  bw_runner_config_init(&rc);
  rc.handler = (bw_stage_handler_fn)1; /* never called */
  assert_null(bw_stage_runner_new(s, &rc, &err));
  assert_string_equal(err.field, "on_expired");
  bw_stage_free(s);
}

/* ==== the notify hook (outside runners) ================================= */

typedef struct notify_log_s {
  const bw_stage_t *stage;
  int calls;
} notify_log_t;

static void count_notify(bw_stage_t *s, void *ud) {
  notify_log_t *l = ud;
  assert_ptr_equal(s, l->stage);
  l->calls++;
}

/* A notify follows every change that may let next() hand out an item it
 * could not before: an admission (shed included) and a completion; never a
 * refusal, a take or an expiry. */
static void notify_follows_every_admission_and_completion(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_result_t r;
  bw_stage_item_t it, other;
  exp_log_t log;
  notify_log_t nl = {NULL, 0};
  (void)state;
  memset(&log, 0, sizeof(log));
  config(&c, "notify", 2, 1);
  c.policy = BW_QUEUE_DROP_LOWEST;
  c.gauge.ceiling[BW_REGIME_DEGRADED] = 3;
  c.gauge.ceiling[BW_REGIME_CRITICAL] = 3;
  c.on_expired = on_expired;
  c.userdata = &log;
  s = make(&c);
  nl.stage = s;
  assert_status(bw_stage_set_notify(s, count_notify, &nl), BW_OK);
  assert_int_equal(nl.calls, 0);
  assert_status(submit(s, 'a', 7, NULL), BW_QUEUE_ADMITTED);
  assert_int_equal(nl.calls, 1);
  assert_status(bw_stage_submit(s, IT('b'), 3, now_ns() + 10 * MS, &r),
                BW_QUEUE_ADMITTED);
  assert_int_equal(nl.calls, 2);
  assert_status(submit(s, 'c', 1, &r), BW_QUEUE_SHED); /* 'a' dropped */
  assert_int_equal(nl.calls, 3);
  /* 2 of 3: degraded, whose ceiling refuses priority 4 */
  assert_status(submit(s, 'd', 4, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_CEILING);
  assert_status(submit(s, 'e', 3, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_FULL);
  assert_int_equal(nl.calls, 3);
  it = take(s, 'c');
  assert_status(bw_stage_next(s, &other), BW_E_FULL);
  assert_int_equal(nl.calls, 3);
  assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
  assert_int_equal(nl.calls, 4);
  advance_ms(10); /* 'b' expires: handed to on_expired, no notify */
  assert_status(bw_stage_next(s, &it), BW_E_NOTFOUND);
  assert_u64_eq(log.n, 1);
  assert_int_equal(nl.calls, 4);
  assert_status(bw_stage_done(s, &it, BW_STAGE_FAILED), BW_E_INVAL);
  assert_int_equal(nl.calls, 4); /* a refused completion changes nothing */
  /* Removed: never called again. */
  assert_status(bw_stage_set_notify(s, NULL, NULL), BW_OK);
  assert_status(submit(s, 'f', 0, NULL), BW_QUEUE_ADMITTED);
  it = take(s, 'f');
  assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
  assert_int_equal(nl.calls, 4);
  assert_conserved(s);
  bw_stage_free(s);
}

/* One hook per stage: a second is refused and the first keeps working;
 * after a removal another may be installed. A runner needs the hook, so a
 * stage whose hook is taken has no room for one. */
static void a_stage_has_one_notify_hook(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_runner_config_t rc;
  bw_error_t err;
  exp_log_t log;
  notify_log_t first = {NULL, 0}, second = {NULL, 0};
  (void)state;
  memset(&log, 0, sizeof(log));
  config(&c, "one_hook", 4, 1);
  c.on_expired = on_expired;
  c.userdata = &log;
  s = make(&c);
  first.stage = second.stage = s;
  assert_status(bw_stage_set_notify(s, NULL, NULL), BW_OK); /* none: fine */
  assert_status(bw_stage_set_notify(s, count_notify, &first), BW_OK);
  assert_status(bw_stage_set_notify(s, count_notify, &second), BW_E_FULL);
  assert_status(submit(s, 'a', 0, NULL), BW_QUEUE_ADMITTED);
  assert_int_equal(first.calls, 1);
  assert_int_equal(second.calls, 0);
  bw_runner_config_init(&rc);
  rc.handler = (bw_stage_handler_fn)1; /* never called: no thread starts */
  assert_null(bw_stage_runner_new(s, &rc, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "");
  assert_string_equal(err.message, "stage \"one_hook\" already has a runner");
  assert_status(bw_stage_set_notify(s, NULL, NULL), BW_OK);
  assert_status(bw_stage_set_notify(s, count_notify, &second), BW_OK);
  assert_status(submit(s, 'b', 0, NULL), BW_QUEUE_ADMITTED);
  assert_int_equal(first.calls, 1);
  assert_int_equal(second.calls, 1);
  assert_status(bw_stage_set_notify(NULL, count_notify, &first), BW_E_INVAL);
  assert_status(bw_stage_set_notify(NULL, NULL, NULL), BW_E_INVAL);
  assert_status(bw_stage_set_notify(s, NULL, NULL), BW_OK);
  bw_stage_free(s);
}

static void has_on_expired_tells_whether_expired_items_have_a_home(
    void **state) {
  bw_stage_config_t c;
  bw_stage_t *with, *without;
  exp_log_t log;
  (void)state;
  config(&c, "without", 4, 1);
  without = make(&c);
  c.name = "with";
  c.on_expired = on_expired;
  c.userdata = &log;
  with = make(&c);
  assert_true(bw_stage_has_on_expired(with));
  assert_false(bw_stage_has_on_expired(without));
  assert_false(bw_stage_has_on_expired(NULL));
  bw_stage_free(with);
  bw_stage_free(without);
}

/* ==== service rate and retry_after ====================================== */

/* n items through the stage: submit, take, complete, one at a time. */
static void complete_n(bw_stage_t *s, int n) {
  for (int i = 0; i < n; i++) {
    bw_stage_item_t it;
    assert_status(submit(s, 1000 + i, 0, NULL), BW_QUEUE_ADMITTED);
    assert_status(bw_stage_next(s, &it), BW_OK);
    assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
  }
}

static void service_rate_is_an_ewma_of_completions_per_window(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  (void)state;
  config(&c, "rate", 50, 1);
  s = make(&c); /* window 1000 ms, alpha 0.5 */
  assert_dbl_eq(bw_stage_service_rate(s), 0.0, 0);
  complete_n(s, 10);
  advance_ms(999); /* the window is still open */
  assert_dbl_eq(bw_stage_service_rate(s), 0.0, 0);
  assert_false(stats(s).rate_measured);
  advance_ms(1); /* first window: the sample itself */
  assert_dbl_eq(bw_stage_service_rate(s), 10.0, 0);
  complete_n(s, 30);
  advance_ms(1000); /* 0.5 * 30 + 0.5 * 10 */
  assert_dbl_eq(bw_stage_service_rate(s), 20.0, 0);
  /* Idle windows (nothing queued or in flight) are not slowness. */
  advance_ms(5000);
  assert_dbl_eq(bw_stage_service_rate(s), 20.0, 0);
  /* Busy windows without completions are: each halves the rate. */
  assert_status(submit(s, 'q', 0, NULL), BW_QUEUE_ADMITTED);
  advance_ms(2000);
  assert_dbl_eq(bw_stage_service_rate(s), 5.0, 0);
  /* A window of 3 completions after them. */
  complete_n(s, 3);
  advance_ms(1000); /* 0.5 * 3 + 0.5 * 5 */
  assert_dbl_eq(bw_stage_service_rate(s), 4.0, 0);
  bw_stage_stats_t st = stats(s);
  assert_dbl_eq(st.service_rate, 4.0, 0);
  assert_true(st.rate_measured);
  bw_stage_free(s);
}

static void retry_after_grows_with_the_queue_and_falls_with_service(
    void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_result_t r;
  bw_stage_item_t a, b;
  (void)state;
  config(&c, "retry", 20, 2);
  /* Only the queue's bound refuses here. */
  c.gauge.ceiling[BW_REGIME_DEGRADED] = BW_GAUGE_ADMIT_ALL;
  c.gauge.ceiling[BW_REGIME_CRITICAL] = BW_GAUGE_ADMIT_ALL;
  s = make(&c);
  complete_n(s, 10);
  advance_ms(1000);
  assert_dbl_eq(bw_stage_service_rate(s), 10.0, 0);
  /* 10 items: 2 in flight, 8 queued. The newcomer waits for the 8 queued
   * to start: 8 / 10 per s = 800 ms. */
  for (int i = 0; i < 10; i++)
    assert_status(submit(s, i, 0, NULL), BW_QUEUE_ADMITTED);
  a = take(s, 0);
  b = take(s, 1);
  assert_i64_eq(bw_stage_retry_after_ms(s), 800);
  /* 18 queued: 1800 ms. */
  for (int i = 10; i < 20; i++)
    assert_status(submit(s, i, 0, NULL), BW_QUEUE_ADMITTED);
  assert_i64_eq(bw_stage_retry_after_ms(s), 1800);
  /* 20 queued: full, and the refusal carries 20 / 10 = 2000 ms. */
  assert_status(submit(s, 20, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(s, 21, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(s, 22, 0, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_FULL);
  assert_int_equal(r.edge, BW_EDGE_REFUSE);
  assert_i64_eq(r.retry_after_ms, 2000);

  /* Faster service: 30 completions in the next window, the queue kept at
   * 20. Rate 0.5 * 30 + 0.5 * 10 = 20 per s: the same backlog now waits
   * half as long. */
  assert_status(bw_stage_done(s, &a, BW_STAGE_PROCESSED), BW_OK);
  assert_status(bw_stage_done(s, &b, BW_STAGE_PROCESSED), BW_OK);
  for (int i = 0; i < 28; i++) {
    bw_stage_item_t it;
    assert_status(bw_stage_next(s, &it), BW_OK);
    assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
    assert_status(submit(s, 100 + i, 0, NULL), BW_QUEUE_ADMITTED);
  }
  advance_ms(1000);
  assert_dbl_eq(bw_stage_service_rate(s), 20.0, 0);
  assert_u64_eq(stats(s).queued, 20);
  assert_status(submit(s, 'n', 0, &r), BW_QUEUE_REJECTED);
  assert_i64_eq(r.retry_after_ms, 900); /* (20 - 2) / 20 per s */
  assert_conserved(s);
  bw_stage_free(s);
}

static void retry_after_is_bounded(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  (void)state;
  config(&c, "bounds", 100, 1);
  c.min_retry_after_ms = 50;
  c.max_retry_after_ms = 1500;
  s = make(&c);
  /* Unmeasured: the upper bound. */
  assert_i64_eq(bw_stage_retry_after_ms(s), 1500);
  complete_n(s, 100);
  advance_ms(1000); /* 100 per s */
  /* Empty stage: one item's worth, 10 ms, raised to the lower bound. */
  assert_i64_eq(bw_stage_retry_after_ms(s), 50);
  for (int i = 0; i < 8; i++)
    assert_status(submit(s, i, 0, NULL), BW_QUEUE_ADMITTED);
  /* 8 queued, 0 in flight: excess 8 - 1 = 7 -> 70 ms. */
  assert_i64_eq(bw_stage_retry_after_ms(s), 70);
  for (int i = 8; i < 100; i++)
    assert_status(submit(s, i, 0, NULL), BW_QUEUE_ADMITTED);
  /* 99 / 100 per s = 990 ms. */
  assert_i64_eq(bw_stage_retry_after_ms(s), 990);
  /* Two busy windows without completions: 25 per s, 3960 -> capped. */
  advance_ms(2000);
  assert_dbl_eq(bw_stage_service_rate(s), 25.0, 0);
  assert_i64_eq(bw_stage_retry_after_ms(s), 1500);
  bw_stage_free(s);
}

static void jitter_is_seeded_and_bounded(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s1, *s2, *s3;
  bool differs = false, spread = false;
  (void)state;
  config(&c, "jit", 100, 1);
  c.retry_jitter = 0.5;
  c.seed = 42;
  s1 = make(&c);
  s2 = make(&c);
  c.seed = 43;
  s3 = make(&c);
  complete_n(s1, 10);
  complete_n(s2, 10);
  complete_n(s3, 10);
  advance_ms(1000);
  for (int i = 0; i < 21; i++) {
    assert_status(submit(s1, i, 0, NULL), BW_QUEUE_ADMITTED);
    assert_status(submit(s2, i, 0, NULL), BW_QUEUE_ADMITTED);
    assert_status(submit(s3, i, 0, NULL), BW_QUEUE_ADMITTED);
  }
  /* Base: 20 / 10 per s = 2000 ms; jitter adds [0, 1000). */
  for (int i = 0; i < 16; i++) {
    int64_t a = bw_stage_retry_after_ms(s1), b = bw_stage_retry_after_ms(s2);
    int64_t d = bw_stage_retry_after_ms(s3);
    assert_i64_eq(a, b); /* same seed, same sequence */
    assert_true(a >= 2000 && a < 3000);
    assert_true(d >= 2000 && d < 3000);
    if (a != d) differs = true;
    if (a != 2000) spread = true;
  }
  assert_true(differs);
  assert_true(spread);
  bw_stage_free(s1);
  bw_stage_free(s2);
  bw_stage_free(s3);
}

/* ==== pipeline ========================================================== */

static void effective_pressure_climbs_to_the_edge(void **state) {
  bw_stage_config_t c;
  bw_stage_t *a, *b, *last;
  bw_stage_result_t r;
  bw_stage_item_t it;
  (void)state;
  config(&c, "last", 8, 2);
  last = make(&c);
  config(&c, "middle", 8, 2);
  c.next = last;
  b = make(&c);
  config(&c, "edge", 8, 2);
  c.next = b;
  a = make(&c);
  /* The last stage at 0.7: DEGRADED everywhere upstream. */
  for (int i = 0; i < 7; i++)
    assert_status(submit(last, i, 0, NULL), BW_QUEUE_ADMITTED);
  assert_dbl_eq(bw_stage_pressure(a), 0.0, 0);
  assert_dbl_eq(bw_stage_effective_pressure(a), 0.7, 1e-12);
  assert_dbl_eq(bw_stage_effective_pressure(b), 0.7, 1e-12);
  assert_status(submit(a, 'x', 3, &r), BW_QUEUE_ADMITTED);
  assert_int_equal(r.regime, BW_REGIME_DEGRADED);
  assert_int_equal(r.edge, BW_EDGE_WARN);
  assert_dbl_eq(r.pressure, 0.7, 1e-12);
  assert_status(submit(a, 'y', 6, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_CEILING);
  /* 0.9 at the last stage: the edge refuses everything above priority 1,
   * with the wait of the stage that is behind (unmeasured: the bound). */
  assert_status(submit(last, 7, 0, NULL), BW_QUEUE_ADMITTED);
  it = take(last, 0);
  assert_status(submit(last, 8, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(a, 'z', 2, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.regime, BW_REGIME_CRITICAL);
  assert_int_equal(r.edge, BW_EDGE_REFUSE);
  assert_i64_eq(r.retry_after_ms, 30000);
  assert_int_equal(bw_stage_regime(b), BW_REGIME_CRITICAL);
  /* The middle stage's own pressure is its own. */
  assert_dbl_eq(bw_stage_pressure(b), 0.0, 0);
  /* Completions at the last stage let the signal come down (hysteresis:
   * below 0.75 for DEGRADED, below 0.5 for NORMAL). */
  assert_status(bw_stage_done(last, &it, BW_STAGE_PROCESSED), BW_OK);
  for (int i = 1; i < 5; i++) {
    it = take(last, i);
    assert_status(bw_stage_done(last, &it, BW_STAGE_PROCESSED), BW_OK);
  }
  assert_dbl_eq(bw_stage_effective_pressure(a), 0.4, 1e-12);
  assert_status(submit(a, 'w', 9, &r), BW_QUEUE_ADMITTED);
  assert_int_equal(r.regime, BW_REGIME_NORMAL);
  assert_int_equal(r.edge, BW_EDGE_ACCEPT);
  assert_conserved(a);
  assert_conserved(b);
  assert_conserved(last);
  bw_stage_free(a);
  bw_stage_free(b);
  bw_stage_free(last);
}

/* The edge refuses because of the stage behind it, so it quotes that
 * stage's drain time, not its own. */
static void edge_quotes_the_wait_of_the_stage_behind(void **state) {
  bw_stage_config_t c;
  bw_stage_t *edge, *last;
  bw_stage_result_t r;
  bw_stage_item_t it;
  (void)state;
  config(&c, "last", 8, 2);
  last = make(&c);
  config(&c, "edge", 8, 2);
  c.next = last;
  edge = make(&c);
  complete_n(edge, 100); /* 100 per s */
  complete_n(last, 10);  /* 10 per s */
  advance_ms(1000);
  /* Alone, the edge's wait is one item at 100 per s. */
  assert_i64_eq(bw_stage_retry_after_ms(edge), 10);
  /* The last stage: 8 queued + 1 in flight = 0.9, excess 9 - 2 = 7 at 10
   * per s = 700 ms. */
  for (int i = 0; i < 8; i++)
    assert_status(submit(last, i, 0, NULL), BW_QUEUE_ADMITTED);
  it = take(last, 0);
  assert_status(submit(last, 8, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(edge, 'x', 4, &r), BW_QUEUE_REJECTED);
  assert_int_equal(r.regime, BW_REGIME_CRITICAL);
  assert_int_equal(r.reason, BW_STAGE_REFUSAL_CEILING);
  assert_i64_eq(r.retry_after_ms, 700);
  assert_status(bw_stage_done(last, &it, BW_STAGE_PROCESSED), BW_OK);
  assert_conserved(edge);
  assert_conserved(last);
  bw_stage_free(edge);
  bw_stage_free(last);
}

/* A three-stage pipeline on a manual clock, 10 ms a tick: the producer
 * offers 4 items a tick at the edge; the first two stages move up to 2
 * items a tick each (fast), the last completes one item every 5 ticks
 * (20 per s: the bottleneck). An item a stage cannot hand on stays in
 * flight there (held) and is offered again next tick. */
#define PIPE_STAGES 3
#define PIPE_HOLD 4

typedef struct pipe_s {
  bw_stage_t *st[PIPE_STAGES];
  bw_stage_item_t held[PIPE_STAGES][PIPE_HOLD];
  int nheld[PIPE_STAGES];
} pipe_t;

/* Offers stage i's held items to stage i + 1; completes those admitted. */
static void pipe_forward(pipe_t *p, int i) {
  int keep = 0;
  for (int h = 0; h < p->nheld[i]; h++) {
    bw_stage_result_t r;
    bw_stage_item_t *it = &p->held[i][h];
    int rc = bw_stage_submit(p->st[i + 1], it->data, it->priority,
                             it->deadline_ns, &r);
    assert_true(rc == BW_QUEUE_ADMITTED || rc == BW_QUEUE_REJECTED);
    if (rc == BW_QUEUE_ADMITTED)
      assert_status(bw_stage_done(p->st[i], it, BW_STAGE_PROCESSED), BW_OK);
    else
      p->held[i][keep++] = *it;
  }
  p->nheld[i] = keep;
}

static void slow_last_stage_makes_the_edge_refuse_within_bounds(void **state) {
  bw_stage_config_t c;
  pipe_t p;
  const char *names[PIPE_STAGES] = {"edge", "enrich", "model"};
  uint64_t offered = 0, refused = 0, warned = 0;
  long first_refusal = -1;
  double own_at_refusal = -1;
  (void)state;
  memset(&p, 0, sizeof(p));
  for (int i = PIPE_STAGES - 1; i >= 0; i--) {
    config(&c, names[i], 16, 2);
    c.next = i + 1 < PIPE_STAGES ? p.st[i + 1] : NULL;
    p.st[i] = make(&c);
  }
  for (long tick = 0; tick < 600; tick++) {
    /* The producer: priority 3, refused only in CRITICAL. */
    for (int k = 0; k < 4; k++) {
      bw_stage_result_t r;
      int rc = bw_stage_submit(p.st[0], IT(tick * 4 + k + 1), 3, NONE, &r);
      offered++;
      if (rc == BW_QUEUE_REJECTED) {
        assert_int_equal(r.edge, BW_EDGE_REFUSE);
        assert_true(r.retry_after_ms > 0);
        if (first_refusal < 0) {
          first_refusal = tick;
          own_at_refusal = bw_stage_pressure(p.st[0]);
          assert_int_equal(r.reason, BW_STAGE_REFUSAL_CEILING);
        }
        refused++;
      } else if (r.edge == BW_EDGE_WARN) {
        warned++;
      }
    }
    /* Stages 0 and 1 hand on what they hold, then take more. */
    for (int i = PIPE_STAGES - 2; i >= 0; i--) {
      pipe_forward(&p, i);
      while (p.nheld[i] < 2) {
        bw_stage_item_t it;
        if (bw_stage_next(p.st[i], &it) != BW_OK) break;
        p.held[i][p.nheld[i]++] = it;
      }
      pipe_forward(&p, i);
    }
    /* The last stage: one completion every 5 ticks. */
    if (tick % 5 == 4) {
      bw_stage_item_t it;
      if (bw_stage_next(p.st[2], &it) == BW_OK)
        assert_status(bw_stage_done(p.st[2], &it, BW_STAGE_PROCESSED), BW_OK);
    }
    advance_ms(10);
    for (int i = 0; i < PIPE_STAGES; i++) {
      bw_stage_stats_t st = stats(p.st[i]);
      assert_true(st.queued <= 16);
      assert_true(st.in_flight <= 2);
      assert_conserved(p.st[i]);
    }
  }
  /* The edge refused, and first because of the last stage: its own
   * pressure was still below critical_at. */
  assert_true(first_refusal >= 0);
  assert_true(own_at_refusal < 0.85);
  assert_true(refused > 0);
  assert_true(warned > 0);
  for (int i = 0; i < PIPE_STAGES; i++) {
    bw_stage_stats_t st = stats(p.st[i]);
    assert_true(st.max_queue_seen <= 16);
    assert_true(st.time_in_regime_ns[BW_REGIME_CRITICAL] > 0);
  }
  /* The last stage measured its rate: 20 per s; the edge's wait derives
   * from it (no stage is idle, nothing is a fixed guess). */
  assert_dbl_eq(bw_stage_service_rate(p.st[2]), 20.0, 1e-9);
  print_message(
      "pipeline: offered %llu refused %llu warned %llu, first "
      "refusal at tick %ld (edge's own pressure %.3f)\n",
      (unsigned long long)offered, (unsigned long long)refused,
      (unsigned long long)warned, first_refusal, own_at_refusal);
  for (int i = 0; i < PIPE_STAGES; i++) {
    bw_stage_item_t it;
    /* Leave nothing in flight before freeing (items are plain ints). */
    for (int h = 0; h < p.nheld[i]; h++)
      assert_status(bw_stage_done(p.st[i], &p.held[i][h], BW_STAGE_FAILED),
                    BW_OK);
    while (bw_stage_next(p.st[i], &it) == BW_OK)
      assert_status(bw_stage_done(p.st[i], &it, BW_STAGE_FAILED), BW_OK);
    assert_conserved(p.st[i]);
  }
  for (int i = 0; i < PIPE_STAGES; i++)
    bw_stage_free(p.st[i]);
}

/* ==== batch producer ==================================================== */

static void batch_chunks_follow_the_regime(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_batch_config_t b;
  bw_batch_plan_t plan;
  bw_error_t err;
  bw_stage_item_t it, taken;
  (void)state;
  config(&c, "batch", 8, 2);
  c.gauge.ceiling[BW_REGIME_DEGRADED] = BW_GAUGE_ADMIT_ALL;
  c.gauge.ceiling[BW_REGIME_CRITICAL] = BW_GAUGE_ADMIT_ALL;
  s = make(&c);
  bw_batch_config_init(&b);
  b.chunk_size = 50;
  b.degraded_fraction = 0.3;
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_OK);
  assert_int_equal(plan.regime, BW_REGIME_NORMAL);
  assert_u64_eq(plan.chunk, 50);
  assert_i64_eq(plan.wait_ms, 0);
  for (int i = 0; i < 6; i++)
    assert_status(submit(s, i, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_OK);
  assert_int_equal(plan.regime, BW_REGIME_DEGRADED);
  assert_u64_eq(plan.chunk, 15); /* floor(50 * 0.3) */
  assert_i64_eq(plan.wait_ms, 0);
  b.degraded_fraction = 0.01; /* never rounds down to nothing */
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_OK);
  assert_u64_eq(plan.chunk, 1);
  /* 8 queued + 1 in flight = 0.9: CRITICAL, pause. */
  for (int i = 6; i < 8; i++)
    assert_status(submit(s, i, 0, NULL), BW_QUEUE_ADMITTED);
  taken = take(s, 0);
  assert_status(submit(s, 8, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_OK);
  assert_int_equal(plan.regime, BW_REGIME_CRITICAL);
  assert_u64_eq(plan.chunk, 0);
  assert_i64_eq(plan.wait_ms, 30000); /* unmeasured: the bound */
  /* Measure 10 per s (9 drained + 1), then the pause derives from the
   * backlog: 8 queued + 1 in flight, excess 9 - 2 = 7 -> 700 ms. */
  assert_status(bw_stage_done(s, &taken, BW_STAGE_PROCESSED), BW_OK);
  while (bw_stage_next(s, &it) == BW_OK)
    assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
  complete_n(s, 1);
  advance_ms(1000);
  assert_dbl_eq(bw_stage_service_rate(s), 10.0, 0);
  for (int i = 0; i < 8; i++)
    assert_status(submit(s, i, 0, NULL), BW_QUEUE_ADMITTED);
  taken = take(s, 0);
  assert_status(submit(s, 8, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_OK);
  assert_int_equal(plan.regime, BW_REGIME_CRITICAL);
  assert_i64_eq(plan.wait_ms, 700);
  assert_status(bw_stage_batch_plan(NULL, &b, &plan, &err), BW_E_INVAL);
  assert_status(bw_stage_batch_plan(s, NULL, &plan, &err), BW_E_INVAL);
  assert_status(bw_stage_done(s, &taken, BW_STAGE_PROCESSED), BW_OK);
  assert_conserved(s);
  bw_stage_free(s);
}

/* ==== out of memory ===================================================== */

static int oom_scenario(void *ctx) {
  bw_stage_config_t c;
  bw_error_t err;
  bw_stage_t *s;
  bw_stage_result_t r;
  bw_stage_item_t it;
  bw_batch_config_t b;
  bw_batch_plan_t plan;
  (void)ctx;
  config(&c, "oom", 16, 2);
  c.policy = BW_QUEUE_DROP_LOWEST;
  s = bw_stage_new(&c, &err);
  if (s == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    return BW_E_NOMEM;
  }
  for (int i = 0; i < 100; i++) {
    assert_true(submit(s, i, (uint32_t)(i % 3), &r) >= 0);
    if (i % 2 == 0 && bw_stage_next(s, &it) == BW_OK)
      assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
  }
  bw_batch_config_init(&b);
  assert_status(bw_stage_batch_plan(s, &b, &plan, &err), BW_OK);
  (void)bw_stage_retry_after_ms(s);
  bw_stage_free(s);
  return BW_OK;
}

static void creation_survives_every_allocation_failure(void **state) {
  long n;
  (void)state;
  n = oom_walk(oom_scenario, NULL, false);
  assert_true(n > 6); /* stage, name, queue (3 + name), gauge (2) */
}

static bw_stage_outcome_t noop_handler(const bw_stage_item_t *it, void *ud) {
  (void)it;
  (void)ud;
  return BW_STAGE_PROCESSED;
}

/* A runner for the stage, started and stopped. */
typedef struct runner_oom_s {
  bw_stage_t *s;
  bw_runner_config_t rc;
} runner_oom_t;

static int runner_scenario(void *ctx) {
  runner_oom_t *ro = ctx;
  bw_error_t err;
  bw_runner_t *r = bw_stage_runner_new(ro->s, &ro->rc, &err);
  if (r == NULL) {
    assert_true(oom_injected() > 0);
    assert_status(err.code, BW_E_NOMEM);
    return BW_E_NOMEM;
  }
  bw_runner_free(r);
  return BW_OK;
}

static void runner_creation_survives_every_allocation_failure(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  runner_oom_t ro;
  exp_log_t log;
  (void)state;
  memset(&log, 0, sizeof(log));
  config(&c, "runner_oom", 8, 2);
  c.on_expired = on_expired;
  c.userdata = &log;
  s = make(&c);
  ro.s = s;
  bw_runner_config_init(&ro.rc);
  ro.rc.threads = 2;
  ro.rc.handler = noop_handler;
  /* At least the runner and its thread ids. Lenient: a runner created
   * despite an injected failure need not have failed, only leak nothing. */
  assert_true(oom_walk_lenient(runner_scenario, &ro, false, NULL) > 2);
  bw_stage_free(s);
}

static void verbs_never_allocate(void **state) {
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_item_t it;
  bw_stage_stats_t st;
  (void)state;
  config(&c, "noalloc", 8, 2);
  s = make(&c);
  oom_fail_at(1, true);
  for (int i = 0; i < 500; i++) {
    assert_true(submit(s, i, (uint32_t)(i % 7), NULL) >= 0);
    if (i % 3 == 0 && bw_stage_next(s, &it) == BW_OK)
      assert_status(bw_stage_done(s, &it, BW_STAGE_PROCESSED), BW_OK);
    if (i % 50 == 0) advance_ms(400);
  }
  (void)bw_stage_retry_after_ms(s);
  bw_stage_stats(s, &st);
  assert_i64_eq(oom_attempts(), 0);
  oom_fail_at(0, false);
  bw_stage_free(s);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value: idle) for a NULL stage, never a crash; the void functions
 * and the free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_stage_stats_t s;
  bw_stage_item_t it;
  bw_stage_result_t res;
  bw_batch_config_t bc;
  bw_batch_plan_t plan;
  bw_error_t err;
  int x = 0;
  (void)state;
  memset(&it, 0, sizeof it);
  bw_stage_config_init(NULL);
  bw_batch_config_init(NULL);
  bw_batch_config_init(&bc);
  assert_int_equal(bw_stage_config_validate(NULL, NULL), BW_E_INVAL);
  assert_int_equal(bw_batch_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_stage_new(NULL, NULL));
  assert_null(bw_stage_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_int_equal(bw_stage_submit(NULL, &x, 0, 0, &res), BW_E_INVAL);
  assert_int_equal(bw_stage_next(NULL, &it), BW_E_INVAL);
  assert_int_equal(bw_stage_done(NULL, &it, BW_STAGE_PROCESSED), BW_E_INVAL);
  assert_true(bw_stage_pressure(NULL) == 0.0);
  assert_true(bw_stage_effective_pressure(NULL) == 0.0);
  assert_int_equal(bw_stage_regime(NULL), BW_REGIME_NORMAL);
  assert_int_equal(bw_stage_retry_after_ms(NULL), 0);
  assert_true(bw_stage_service_rate(NULL) == 0.0);
  assert_string_equal(bw_stage_name(NULL), "");
  memset(&s, 0xA5, sizeof s);
  bw_stage_stats(NULL, &s);
  assert_int_equal(s.admitted, 0);
  bw_stage_stats(NULL, NULL);
  assert_int_equal(bw_stage_batch_plan(NULL, &bc, &plan, NULL), BW_E_INVAL);
  assert_int_equal(bw_stage_set_notify(NULL, NULL, NULL), BW_E_INVAL);
  assert_false(bw_stage_has_on_expired(NULL));
  assert_string_equal(bw_edge_name((bw_edge_t)99), "unknown");
  bw_stage_free(NULL);
}

/* ==== drop summaries ===================================================== */

static void assert_dropped(const bwt_event_t *ev, uint64_t full, uint64_t shed,
                           uint64_t expired, int64_t at_ns) {
  assert_int_equal(ev->type, BW_EV_STAGE_DROPPED);
  assert_string_equal(ev->name, "st");
  assert_int_equal(ev->field_count, 5);
  assert_field_uint(ev, 0, "count", full + shed + expired);
  assert_field_uint(ev, 1, "rejected_ceiling", 0);
  assert_field_uint(ev, 2, "rejected_full", full);
  assert_field_uint(ev, 3, "shed", shed);
  assert_field_uint(ev, 4, "expired", expired);
  assert_i64_eq(ev->mono_ns, at_ns);
  assert_i64_eq(ev->wall_ns, at_ns);
}

/* A stage_regime_changed event of stage "st", exactly. */
static void assert_regime_event(const bwt_event_t *ev, const char *from,
                                const char *to, double pressure,
                                int64_t at_ns) {
  assert_int_equal(ev->type, BW_EV_STAGE_REGIME_CHANGED);
  assert_string_equal(ev->name, "st");
  assert_int_equal(ev->field_count, 3);
  assert_field_str(ev, 0, "from", from);
  assert_field_str(ev, 1, "to", to);
  assert_string_equal(ev->fields[2].key, "pressure");
  assert_int_equal(ev->fields[2].type, BW_FIELD_DOUBLE);
  assert_true(ev->fields[2].d == pressure);
  assert_i64_eq(ev->mono_ns, at_ns);
}

/* Refused, shed and expired items are summarised as stage_dropped at most
 * once a second (the drop that finds a summary due included) and once more
 * when the stage is freed. */
/* The sink of regime_changes_are_events_in_order: records the event, then
 * reads the stage's stats (which takes the stage's lock: the event must
 * come after the lock is released, or this deadlocks). */
static bw_stage_t *reading_stage;
static bw_regime_t regime_read[8];
static size_t regimes_read;
static void record_and_read(const bw_event_t *ev, void *userdata) {
  bw_stage_stats_t st;
  bwt_record_cb(ev, userdata);
  bw_stage_stats(reading_stage, &st);
  if (regimes_read < 8) regime_read[regimes_read++] = st.regime;
}

static void regime_changes_are_events_in_order(void **state) {
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_sink_t *sink;
  bw_stage_config_t c;
  bw_stage_item_t a;
  (void)state;
  assert_non_null(rec);
  sink = bw_sink_callback_new(record_and_read, rec, NULL);
  assert_non_null(sink);
  config(&c, "st", 4, 1); /* pressure = (queued + in flight) / 5 */
  c.wall_clock = clk;
  c.sink = sink;
  reading_stage = make(&c);
  regimes_read = 0;
  assert_status(submit(reading_stage, 1, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(reading_stage, 2, 0, NULL), BW_QUEUE_ADMITTED);
  assert_int_equal(rec->count, 0); /* 0.4: normal */
  advance_ms(5);
  assert_status(submit(reading_stage, 3, 0, NULL), BW_QUEUE_ADMITTED);
  assert_int_equal(rec->count, 1); /* 0.6: degraded_at */
  assert_regime_event(bwt_event_at(rec, 0), "normal", "degraded", 0.6,
                      BWT_T0_NS + 5 * MS);
  assert_string_equal(bwt_event_at(rec, 0)->reason,
                      "regime normal -> degraded at effective pressure 0.600");
  assert_status(submit(reading_stage, 4, 0, NULL), BW_QUEUE_ADMITTED);
  assert_int_equal(rec->count, 1); /* 0.8: still degraded */
  a = take(reading_stage, 1);      /* 3 queued + 1 in flight: 0.8 */
  advance_ms(5);
  assert_status(submit(reading_stage, 5, 0, NULL), BW_QUEUE_ADMITTED);
  assert_int_equal(rec->count, 2); /* 1.0: critical */
  assert_regime_event(bwt_event_at(rec, 1), "degraded", "critical", 1.0,
                      BWT_T0_NS + 10 * MS);
  /* Drain: each completion frees one, each take moves one into flight:
   * 1.0 -> 0.8 (critical holds down to 0.75) -> 0.6 (degraded) -> 0.4
   * (normal: below degraded's exit, 0.5) -> 0.2 -> 0. */
  assert_status(bw_stage_done(reading_stage, &a, BW_STAGE_PROCESSED), BW_OK);
  for (int i = 2; i <= 5; i++) {
    a = take(reading_stage, i);
    assert_status(bw_stage_done(reading_stage, &a, BW_STAGE_PROCESSED), BW_OK);
  }
  assert_int_equal(rec->count, 4);
  assert_regime_event(bwt_event_at(rec, 2), "critical", "degraded", 0.6,
                      BWT_T0_NS + 10 * MS);
  assert_regime_event(bwt_event_at(rec, 3), "degraded", "normal", 0.4,
                      BWT_T0_NS + 10 * MS);
  /* Each sink call could read the stage, and saw the regime it announced. */
  assert_int_equal(regimes_read, 4);
  assert_int_equal(regime_read[0], BW_REGIME_DEGRADED);
  assert_int_equal(regime_read[1], BW_REGIME_CRITICAL);
  assert_int_equal(regime_read[2], BW_REGIME_DEGRADED);
  assert_int_equal(regime_read[3], BW_REGIME_NORMAL);
  bw_stage_free(reading_stage);
  assert_int_equal(rec->count, 4); /* nothing dropped */
  bw_sink_free(sink);
  free(rec);
}

static void drops_are_summarised_at_most_once_a_second(void **state) {
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_sink_t *sink;
  bw_stage_config_t c;
  bw_stage_t *s;
  bw_stage_item_t a, d;
  bw_stage_result_t r;
  (void)state;
  assert_non_null(rec);
  sink = bw_sink_callback_new(bwt_record_cb, rec, NULL);
  assert_non_null(sink);
  config(&c, "st", 1, 1);
  c.wall_clock = clk;
  c.sink = sink;
  s = make(&c);

  assert_status(submit(s, 1, 0, NULL), BW_QUEUE_ADMITTED);
  assert_status(submit(s, 2, 0, NULL), BW_QUEUE_REJECTED);
  advance_ms(999);
  assert_status(submit(s, 3, 0, NULL), BW_QUEUE_REJECTED);
  assert_int_equal(rec->count, 0);
  advance_ms(1); /* T0 + 1000 ms: due */
  assert_status(submit(s, 4, 0, &r), BW_QUEUE_REJECTED);
  assert_int_equal(rec->count, 1);
  assert_dropped(bwt_event_at(rec, 0), 3, 0, 0, BWT_T0_NS + 1000 * MS);
  assert_string_equal(bwt_event_at(rec, 0)->reason,
                      "3 items dropped: 0 refused above the regime's "
                      "ceiling, 3 refused with the queue full, 0 shed, 0 "
                      "expired");

  a = take(s, 1);
  /* 1 queued + 1 in flight of 1 + 1: pressure 1, critical */
  assert_status(bw_stage_submit(s, IT(5), 0, now_ns() + 500 * MS, &r),
                BW_QUEUE_ADMITTED);
  assert_int_equal(rec->count, 2);
  assert_regime_event(bwt_event_at(rec, 1), "normal", "critical", 1.0,
                      BWT_T0_NS + 1000 * MS);
  advance_ms(600); /* T0 + 1600 ms: item 5 expired */
  /* 1 queued of 2: pressure 0.5, below critical's and degraded's exits */
  assert_status(bw_stage_done(s, &a, BW_STAGE_PROCESSED), BW_OK);
  assert_int_equal(rec->count, 3);
  assert_regime_event(bwt_event_at(rec, 2), "critical", "normal", 0.5,
                      BWT_T0_NS + 1600 * MS);
  assert_status(bw_stage_next(s, &d), BW_E_DEADLINE);
  assert_ptr_equal(d.data, IT(5));
  assert_int_equal(rec->count, 3); /* 600 ms since the last summary */
  assert_int_equal(bwt_count(rec, BW_EV_STAGE_DROPPED), 1);
  assert_conserved(s);
  advance_ms(100);
  bw_stage_free(s); /* the one pending, at the free */
  assert_int_equal(rec->count, 4);
  assert_dropped(bwt_event_at(rec, 3), 0, 0, 1, BWT_T0_NS + 1700 * MS);

  s = make(&c); /* nothing dropped: nothing sent (and no regime change) */
  assert_status(submit(s, 1, 0, NULL), BW_QUEUE_ADMITTED);
  bw_stage_free(s);
  assert_int_equal(rec->count, 4);
  bw_sink_free(sink);
  free(rec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test_setup_teardown(
          drops_are_summarised_at_most_once_a_second, setup, teardown),
      cmocka_unit_test_setup_teardown(regime_changes_are_events_in_order, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(defaults_are_documented, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_configs_are_refused_naming_the_field,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          bad_batch_and_runner_configs_name_the_field, setup, teardown),
      cmocka_unit_test_setup_teardown(pull_api_bounds_the_work_in_flight, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          ceiling_by_regime_applies_before_the_queue_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(shed_items_are_handed_back_and_counted,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(expired_items_never_reach_the_driver,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          notify_follows_every_admission_and_completion, setup, teardown),
      cmocka_unit_test_setup_teardown(a_stage_has_one_notify_hook, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          has_on_expired_tells_whether_expired_items_have_a_home, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          service_rate_is_an_ewma_of_completions_per_window, setup, teardown),
      cmocka_unit_test_setup_teardown(
          retry_after_grows_with_the_queue_and_falls_with_service, setup,
          teardown),
      cmocka_unit_test_setup_teardown(retry_after_is_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(jitter_is_seeded_and_bounded, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(effective_pressure_climbs_to_the_edge,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(edge_quotes_the_wait_of_the_stage_behind,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          slow_last_stage_makes_the_edge_refuse_within_bounds, setup, teardown),
      cmocka_unit_test_setup_teardown(batch_chunks_follow_the_regime, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          creation_survives_every_allocation_failure, setup, teardown),
      cmocka_unit_test_setup_teardown(
          runner_creation_survives_every_allocation_failure, setup, teardown),
      cmocka_unit_test_setup_teardown(verbs_never_allocate, setup, teardown),
  };
  if (oom_install() != BW_OK) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

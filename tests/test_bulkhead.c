/* Specification tests: the bulkhead (the asyncio toolkit's Bulkhead and its
 * registry presets).
 *
 * The asyncio toolkit gives a bulkhead max_concurrent slots, waits up to 2 s
 * for one (then BulkheadFullError: BW_E_FULL here), and bounds each call by
 * `timeout`, narrowed by the request's remaining budget (then
 * BulkheadTimeoutError: BW_E_TIMEOUT from release). Every test runs on a
 * manual clock starting at BWT_T0_NS and asserts exact values; the only real
 * waits are the blocked-thread tests, which assert order and counts, never
 * durations. */
#include <pthread.h>
#include <sched.h>

#include "breakwater/bulkhead.h"
#include "breakwater/threads.h"
#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define SEC BW_NS_PER_S

typedef struct env_s {
  bw_clock_t *clock;
  bw_bulkhead_t *bh;
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
  bw_deadline_set(bw_deadline_none()); /* a failed test must not leak it */
  bw_bulkhead_free(e->bh);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static bw_bulkhead_t *make(env_t *e, uint32_t max, int64_t timeout_ms,
                           uint32_t max_waiting) {
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  bw_bulkhead_config_init(&cfg);
  cfg.name = "agent";
  cfg.max_concurrent = max;
  cfg.timeout_ms = timeout_ms;
  cfg.max_waiting = max_waiting;
  cfg.clock = e->clock;
  bw_bulkhead_free(e->bh);
  e->bh = bw_bulkhead_new(&cfg, &err);
  if (e->bh == NULL) fail_msg("bw_bulkhead_new: %s", err.message);
  return e->bh;
}

static bw_bulkhead_stats_t stats(const bw_bulkhead_t *bh) {
  bw_bulkhead_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_bulkhead_stats(bh, &s);
  return s;
}

static bw_permit_t take(bw_bulkhead_t *bh) {
  bw_permit_t p;
  memset(&p, 0xCD, sizeof(p));
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_OK);
  return p;
}

/* ==== configuration ======================================================
 */

static void defaults_are_the_asyncio_toolkits_fallback_with_a_2_s_slot_wait(
    void **state) {
  bw_bulkhead_config_t cfg;
  (void)state;
  bw_bulkhead_config_init(&cfg);
  assert_string_equal(cfg.name, "bulkhead");
  assert_u64_eq(cfg.max_concurrent, 10);
  assert_i64_eq(cfg.max_wait_ms, 2000);
  assert_i64_eq(cfg.timeout_ms, 30000);
  assert_u64_eq(cfg.max_waiting, 1000);
  assert_null(cfg.clock);
  assert_status(bw_bulkhead_config_validate(&cfg, NULL), BW_OK);
}

static void presets_are_the_asyncio_toolkits_registry(void **state) {
  static const struct {
    const char *name;
    uint32_t max;
    int64_t timeout_ms;
    bool known;
  } rows[] = {
      {"booking_agent", 10, 30000, true}, {"search_agent", 20, 10000, true},
      {"payment_agent", 5, 15000, true},  {"recovery_worker", 3, 120000, true},
      {"hotel_api", 10, 30000, false}, /* unknown: BulkheadConfig(10, 30.0) */
      {"Search_Agent", 10, 30000, false}, /* names are case-sensitive */
  };
  (void)state;
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    bw_bulkhead_config_t cfg;
    memset(&cfg, 0xEE, sizeof(cfg));
    assert_int_equal(bw_bulkhead_config_preset(&cfg, rows[i].name),
                     rows[i].known);
    assert_string_equal(cfg.name, rows[i].name);
    assert_u64_eq(cfg.max_concurrent, rows[i].max);
    assert_i64_eq(cfg.timeout_ms, rows[i].timeout_ms);
    assert_i64_eq(cfg.max_wait_ms, 2000);
    assert_u64_eq(cfg.max_waiting, 1000);
    assert_null(cfg.clock);
    assert_status(bw_bulkhead_config_validate(&cfg, NULL), BW_OK);
  }
}

static void preset_with_no_name_falls_back_to_the_defaults(void **state) {
  bw_bulkhead_config_t cfg;
  (void)state;
  memset(&cfg, 0xEE, sizeof(cfg));
  assert_false(bw_bulkhead_config_preset(&cfg, NULL));
  assert_string_equal(cfg.name, "bulkhead");
  assert_u64_eq(cfg.max_concurrent, 10);
  assert_i64_eq(cfg.timeout_ms, 30000);
  assert_false(bw_bulkhead_config_preset(NULL, "booking_agent"));
}

static void bad_configurations_are_refused_naming_the_field(void **state) {
  env_t *e = *state;
  static char long_name[BW_NAME_MAX + 2];
  bw_clock_t no_fn = {NULL, NULL};
  struct {
    const char *field;
    const char *rule;
  } const rows[] = {
      {"name", "name must not be empty"},
      {"name", "name must not be empty"},
      {"name", "name must be at most 200 bytes (got 201)"},
      {"max_concurrent", "max_concurrent must be in 1..1000000 (got 0)"},
      {"max_concurrent", "max_concurrent must be in 1..1000000 (got 1000001)"},
      {"max_wait_ms", "max_wait_ms must be in 0..86400000 (got -1)"},
      {"max_wait_ms", "max_wait_ms must be in 0..86400000 (got 86400001)"},
      {"timeout_ms", "timeout_ms must be in 0..86400000, 0 for none (got -5)"},
      {"timeout_ms",
       "timeout_ms must be in 0..86400000, 0 for none (got 86400001)"},
      {"max_waiting", "max_waiting must be in 0..1000000 (got 1000001)"},
      {"clock", "clock must have a now_ns function"},
  };
  memset(long_name, 'x', BW_NAME_MAX + 1);
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    bw_bulkhead_config_t cfg;
    bw_error_t err;
    bw_bulkhead_config_init(&cfg);
    cfg.clock = e->clock;
    switch (i) {
    case 0:
      cfg.name = NULL;
      break;
    case 1:
      cfg.name = "";
      break;
    case 2:
      cfg.name = long_name;
      break;
    case 3:
      cfg.max_concurrent = 0;
      break;
    case 4:
      cfg.max_concurrent = 1000001;
      break;
    case 5:
      cfg.max_wait_ms = -1;
      break;
    case 6:
      cfg.max_wait_ms = 86400001;
      break;
    case 7:
      cfg.timeout_ms = -5;
      break;
    case 8:
      cfg.timeout_ms = 86400001;
      break;
    case 9:
      cfg.max_waiting = 1000001;
      break;
    case 10:
      cfg.clock = &no_fn;
      break;
    }
    memset(&err, 0, sizeof(err));
    assert_status(bw_bulkhead_config_validate(&cfg, &err), BW_E_INVAL);
    assert_string_equal(err.field, rows[i].field);
    assert_string_equal(err.message, rows[i].rule);
    memset(&err, 0, sizeof(err));
    assert_null(bw_bulkhead_new(&cfg, &err));
    assert_status(err.code, BW_E_INVAL);
    assert_string_equal(err.field, rows[i].field);
  }
  assert_status(bw_bulkhead_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_bulkhead_new(NULL, NULL));
}

static void boundary_values_are_accepted(void **state) {
  env_t *e = *state;
  bw_bulkhead_config_t cfg;
  bw_bulkhead_t *bh;
  bw_bulkhead_config_init(&cfg);
  cfg.clock = e->clock;
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = 0;
  cfg.timeout_ms = 0;
  cfg.max_waiting = 0;
  bh = bw_bulkhead_new(&cfg, NULL);
  assert_non_null(bh);
  bw_bulkhead_free(bh);
  cfg.max_concurrent = 1000000;
  cfg.max_wait_ms = 86400000;
  cfg.timeout_ms = 86400000;
  cfg.max_waiting = 1000000;
  bh = bw_bulkhead_new(&cfg, NULL);
  assert_non_null(bh);
  assert_string_equal(bw_bulkhead_name(bh), "bulkhead");
  bw_bulkhead_free(bh);
  bw_bulkhead_free(NULL);
}

/* ==== try_acquire and release ============================================
 */

static void admits_max_concurrent_calls_then_refuses_with_full(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 3, 30000, 10);
  bw_permit_t p[3], q, copy;
  bw_bulkhead_stats_t s;

  for (int i = 0; i < 3; i++)
    p[i] = take(bh);
  memset(&q, 0xCD, sizeof(q));
  memcpy(&copy, &q, sizeof(q));
  assert_status(bw_bulkhead_try_acquire(bh, &q), BW_E_FULL);
  assert_memory_equal(&q, &copy, sizeof(q)); /* untouched */
  s = stats(bh);
  assert_u64_eq(s.max_concurrent, 3);
  assert_u64_eq(s.in_use, 3);
  assert_u64_eq(s.available, 0);
  assert_u64_eq(s.waiting, 0);
  assert_u64_eq(s.admitted, 3);
  assert_u64_eq(s.rejected_full, 1);

  assert_status(bw_bulkhead_release(bh, &p[1]), BW_OK);
  s = stats(bh);
  assert_u64_eq(s.in_use, 2);
  assert_u64_eq(s.available, 1);
  assert_u64_eq(s.released, 1);
  p[1] = take(bh);
  assert_status(bw_bulkhead_try_acquire(bh, &q), BW_E_FULL);
  for (int i = 0; i < 3; i++)
    assert_status(bw_bulkhead_release(bh, &p[i]), BW_OK);
  s = stats(bh);
  assert_u64_eq(s.in_use, 0);
  assert_u64_eq(s.available, 3);
  assert_u64_eq(s.admitted, 4);
  assert_u64_eq(s.rejected_full, 2);
  assert_u64_eq(s.released, 4);
  assert_u64_eq(s.timeouts, 0);
}

static void a_permit_carries_its_start_and_execution_deadline(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 2, 15000, 10);
  bw_permit_t p;
  bw_clock_manual_advance(e->clock, 7 * MS);
  p = take(bh);
  assert_i64_eq(p.start_ns, BWT_T0_NS + 7 * MS);
  assert_int_equal(p.kind, BW_PERMIT_NORMAL);
  assert_null(p.context);
  assert_i64_eq(bw_bulkhead_deadline_ns(&p), BWT_T0_NS + 7 * MS + 15 * SEC);
  assert_i64_eq(p.deadline_ns, BWT_T0_NS + 7 * MS + 15 * SEC);
  /* the fields a bulkhead does not use hold their neutral values */
  assert_u64_eq(p.generation, 0);
  assert_u64_eq(p.lease_slot, BW_PERMIT_NO_SLOT);
  assert_u64_eq(p.inflight_at_acquire, 0);
  assert_u64_eq(p.limit_at_acquire, 0);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
}

static void release_after_the_execution_deadline_is_a_timeout(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 2, 10000, 10); /* search_agent: 10 s */
  bw_permit_t early = take(bh), late = take(bh);
  int64_t dl = BWT_T0_NS + 10 * SEC;
  bw_bulkhead_stats_t s;

  assert_false(bw_bulkhead_expired(&late, dl - 1));
  assert_true(bw_bulkhead_expired(&late, dl)); /* the deadline is spent */
  bw_clock_manual_set(e->clock, dl - 1);
  assert_status(bw_bulkhead_release(bh, &early), BW_OK);
  bw_clock_manual_set(e->clock, dl);
  assert_status(bw_bulkhead_release(bh, &late), BW_E_TIMEOUT);
  s = stats(bh);
  assert_u64_eq(s.released, 2);
  assert_u64_eq(s.timeouts, 1);
  assert_u64_eq(s.in_use, 0); /* the late call's slot came back too */
}

static void timeout_zero_means_no_execution_deadline(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 0, 10);
  bw_permit_t p = take(bh);
  assert_i64_eq(bw_bulkhead_deadline_ns(&p), INT64_MAX);
  assert_false(bw_bulkhead_expired(&p, INT64_MAX));
  bw_clock_manual_advance(e->clock, 1000000 * SEC);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  assert_u64_eq(stats(bh).timeouts, 0);
}

/* The asyncio toolkit: bulkhead.cfg.timeout = min(bulkhead.cfg.timeout,
 * budget). */
static void the_thread_deadline_narrows_the_execution_deadline(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 3, 10000, 10);
  bw_deadline_t prev;
  bw_permit_t shorter, longer, none;

  prev = bw_deadline_set(bw_deadline_in(BWT_T0_NS, 2500));
  shorter = take(bh); /* budget 2.5 s < timeout 10 s */
  bw_deadline_set(bw_deadline_in(BWT_T0_NS, 60000));
  longer = take(bh); /* budget 60 s > timeout 10 s */
  bw_deadline_set(prev);
  none = take(bh);
  assert_i64_eq(bw_bulkhead_deadline_ns(&shorter), BWT_T0_NS + 2500 * MS);
  assert_i64_eq(bw_bulkhead_deadline_ns(&longer), BWT_T0_NS + 10 * SEC);
  assert_i64_eq(bw_bulkhead_deadline_ns(&none), BWT_T0_NS + 10 * SEC);

  bw_clock_manual_advance(e->clock, 2500 * MS);
  assert_status(bw_bulkhead_release(bh, &shorter), BW_E_TIMEOUT);
  assert_status(bw_bulkhead_release(bh, &longer), BW_OK);
  assert_status(bw_bulkhead_release(bh, &none), BW_OK);
  assert_u64_eq(stats(bh).timeouts, 1);
}

static void never_called(bw_bulkhead_waiter_t *w, const bw_permit_t *p,
                         void *ud) {
  (void)w;
  (void)p;
  (void)ud;
  fail_msg("a refused waiter's callback ran");
}

static void a_spent_thread_deadline_refuses_without_taking_a_slot(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  bw_bulkhead_waiter_t w;
  bw_permit_t p;
  bw_bulkhead_stats_t s;
  bw_deadline_t prev = bw_deadline_set(bw_deadline_in(BWT_T0_NS, 0));

  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_DEADLINE);
  assert_status(bw_bulkhead_acquire(bh, &p), BW_E_DEADLINE);
  memset(&w, 0, sizeof(w));
  assert_status(bw_bulkhead_acquire_async(bh, &p, &w, NULL, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_async(bh, &p, &w, never_called, NULL),
                BW_E_DEADLINE);
  bw_deadline_set(prev);
  s = stats(bh);
  assert_u64_eq(s.rejected_deadline, 3);
  assert_u64_eq(s.waiting, 0);
  assert_u64_eq(s.in_use, 0);
  assert_u64_eq(s.admitted, 0);
  assert_u64_eq(s.rejected_full, 0);
}

static void release_with_nothing_held_or_null_is_refused(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  bw_permit_t p = take(bh);
  bw_bulkhead_stats_t s;
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  assert_status(bw_bulkhead_release(bh, &p), BW_E_INVAL); /* double */
  assert_status(bw_bulkhead_release(NULL, &p), BW_E_INVAL);
  assert_status(bw_bulkhead_release(bh, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_try_acquire(NULL, &p), BW_E_INVAL);
  assert_status(bw_bulkhead_try_acquire(bh, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_acquire(NULL, &p), BW_E_INVAL);
  s = stats(bh);
  assert_u64_eq(s.released, 1);
  assert_u64_eq(s.admitted, 1);
  assert_u64_eq(s.in_use, 0);
  bw_bulkhead_stats(NULL, &s);
  assert_u64_eq(s.admitted, 0);
  bw_bulkhead_stats(bh, NULL); /* ignored, no crash */
  assert_string_equal(bw_bulkhead_name(NULL), "");
}

/* ==== the non-blocking queue ==============================================
 */

typedef struct grant_log_s {
  int order[16];
  bw_permit_t permits[16];
  int count;
  bw_bulkhead_t *bh;
  bool release_at_once; /* the callback releases its own permit */
} grant_log_t;

typedef struct tagged_s {
  bw_bulkhead_waiter_t w;
  int id;
  grant_log_t *log;
} tagged_t;

static void on_grant(bw_bulkhead_waiter_t *w, const bw_permit_t *p, void *ud) {
  tagged_t *t = ud;
  assert_ptr_equal(w, &t->w);
  t->log->order[t->log->count] = t->id;
  t->log->permits[t->log->count] = *p;
  t->log->count++;
  if (t->log->release_at_once)
    assert_status(bw_bulkhead_release(t->log->bh, p), BW_OK);
}

static int queue(bw_bulkhead_t *bh, tagged_t *t, int id, grant_log_t *log,
                 bw_permit_t *p) {
  memset(t, 0, sizeof(*t));
  t->id = id;
  t->log = log;
  return bw_bulkhead_acquire_async(bh, p, &t->w, on_grant, t);
}

/* ---- clock reads ------------------------------------------------------- */

/* A clock that counts its readings, over the manual clock. */
typedef struct counting_clock_s {
  bw_clock_t base;
  const bw_clock_t *inner;
  int reads;
} counting_clock_t;

static int64_t counting_now(const bw_clock_t *c) {
  counting_clock_t *cc = c->data;
  cc->reads++;
  return bw_clock_now(cc->inner);
}

static bw_bulkhead_t *make_counted(env_t *e, counting_clock_t *cc,
                                   int64_t timeout_ms) {
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  cc->base.now_ns = counting_now;
  cc->base.data = cc;
  cc->inner = e->clock;
  cc->reads = 0;
  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = 1;
  cfg.timeout_ms = timeout_ms;
  cfg.clock = &cc->base;
  bw_bulkhead_free(e->bh);
  e->bh = bw_bulkhead_new(&cfg, &err);
  if (e->bh == NULL) fail_msg("bw_bulkhead_new: %s", err.message);
  return e->bh;
}

/* With no execution deadline and no thread deadline nothing needs the time:
 * admission and release read no clock (start_ns is 0, no deadline), through
 * every way in. A thread deadline or a timeout brings the readings back:
 * one at admission, one at release. */
static void the_clock_is_read_only_when_a_deadline_needs_it(void **state) {
  env_t *e = *state;
  counting_clock_t cc;
  bw_bulkhead_t *bh = make_counted(e, &cc, 0);
  bw_bulkhead_waiter_t w;
  bw_permit_t p;
  bw_deadline_t prev;

  bw_clock_manual_advance(e->clock, 7 * MS);
  p = take(bh);
  assert_int_equal(cc.reads, 0);
  assert_i64_eq(p.start_ns, 0);
  assert_i64_eq(bw_bulkhead_deadline_ns(&p), INT64_MAX);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  assert_status(bw_bulkhead_acquire(bh, &p), BW_OK);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  memset(&w, 0, sizeof(w));
  assert_status(bw_bulkhead_acquire_async(bh, &p, &w, never_called, NULL),
                BW_OK);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  assert_int_equal(cc.reads, 0);

  /* The thread's deadline: read at admission, checked at release. */
  prev = bw_deadline_set(bw_deadline_in(BWT_T0_NS, 2500));
  p = take(bh);
  assert_int_equal(cc.reads, 1);
  assert_i64_eq(p.start_ns, BWT_T0_NS + 7 * MS);
  assert_i64_eq(bw_bulkhead_deadline_ns(&p), BWT_T0_NS + 2500 * MS);
  bw_clock_manual_advance(e->clock, 2493 * MS);
  assert_status(bw_bulkhead_release(bh, &p), BW_E_TIMEOUT);
  assert_int_equal(cc.reads, 2);
  /* ... and a spent one is refused on that same reading. */
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_DEADLINE);
  assert_int_equal(cc.reads, 3);
  bw_deadline_set(prev);

  /* The bulkhead's own timeout needs the time too. */
  bh = make_counted(e, &cc, 10000);
  p = take(bh);
  assert_int_equal(cc.reads, 1);
  assert_i64_eq(p.start_ns, BWT_T0_NS + 2500 * MS);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  assert_int_equal(cc.reads, 2);
  assert_u64_eq(stats(bh).admitted, 1);
}

/* A slot handed to a queued waiter is stamped with the time of the hand-over
 * even when the bulkhead has no timeout: the waiter waited, and its start
 * is when its call can begin. */
static void a_granted_waiter_is_stamped_even_without_deadlines(void **state) {
  env_t *e = *state;
  counting_clock_t cc;
  bw_bulkhead_t *bh = make_counted(e, &cc, 0);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t p, q;
  p = take(bh);
  assert_status(queue(bh, &t, 1, &log, &q), BW_BULKHEAD_QUEUED);
  bw_clock_manual_advance(e->clock, 5 * MS);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  assert_int_equal(log.count, 1);
  assert_int_equal(cc.reads, 1);
  assert_i64_eq(log.permits[0].start_ns, BWT_T0_NS + 5 * MS);
  assert_i64_eq(bw_bulkhead_deadline_ns(&log.permits[0]), INT64_MAX);
  assert_status(bw_bulkhead_release(bh, &log.permits[0]), BW_OK);
  assert_int_equal(cc.reads, 1);
}

/* With no clock given, a timeout of a second or more is timed on the coarse
 * monotonic clock: a start reading lies between two coarse readings taken
 * around the admission (a precise reading would almost always lie past the
 * second). Below a second it is the precise clock: between two precise
 * readings (a coarse one would lie before the first). Real clocks, but no
 * duration is asserted, only the order of readings of one clock. */
static void the_default_clock_is_coarse_from_a_one_second_timeout(
    void **state) {
  env_t *e = *state;
  static const int64_t timeouts[] = {1000, 30000, 999, 1};
  int rc;
  for (size_t k = 0; k < sizeof(timeouts) / sizeof(timeouts[0]); k++) {
    bw_bulkhead_config_t cfg;
    bw_error_t err;
    const bw_clock_t *c = timeouts[k] >= 1000 ? bw_clock_monotonic_coarse()
                                              : bw_clock_monotonic();
    bw_bulkhead_config_init(&cfg);
    cfg.timeout_ms = timeouts[k];
    bw_bulkhead_free(e->bh);
    e->bh = bw_bulkhead_new(&cfg, &err);
    assert_non_null(e->bh);
    for (int i = 0; i < 3; i++) {
      int64_t before = bw_clock_now(c), after;
      bw_permit_t p = take(e->bh);
      after = bw_clock_now(c);
      assert_in_range(p.start_ns, before, after);
      assert_i64_eq(bw_bulkhead_deadline_ns(&p), p.start_ns + timeouts[k] * MS);
      /* released at once, but a preempted thread may pass 1 s */
      rc = bw_bulkhead_release(e->bh, &p);
      assert_true(rc == BW_OK || rc == BW_E_TIMEOUT);
    }
  }
}

static void async_acquire_admits_at_once_when_a_slot_is_free(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t p;
  assert_status(queue(bh, &t, 1, &log, &p), BW_OK);
  assert_int_equal(log.count, 0); /* no callback for an immediate admit */
  assert_i64_eq(p.start_ns, BWT_T0_NS);
  assert_i64_eq(bw_bulkhead_deadline_ns(&p), BWT_T0_NS + 10 * SEC);
  assert_u64_eq(stats(bh).in_use, 1);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  assert_int_equal(log.count, 0);
}

static void queued_waiters_are_served_first_come_first_served(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  grant_log_t log = {0};
  tagged_t t[4];
  bw_permit_t held = take(bh), p;
  bw_bulkhead_stats_t s;

  for (int i = 0; i < 4; i++)
    assert_int_equal(queue(bh, &t[i], i + 1, &log, &p), BW_BULKHEAD_QUEUED);
  s = stats(bh);
  assert_u64_eq(s.waiting, 4);
  assert_u64_eq(s.in_use, 1);

  /* Each release hands the slot to the oldest waiter, on this thread. */
  bw_clock_manual_advance(e->clock, 100 * MS);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 1);
  assert_int_equal(log.order[0], 1);
  assert_i64_eq(log.permits[0].start_ns, BWT_T0_NS + 100 * MS);
  s = stats(bh);
  assert_u64_eq(s.in_use, 1); /* handed over, never free */
  assert_u64_eq(s.waiting, 3);
  /* No queue jumping: the slot went to waiter 1, none is free. */
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);

  for (int i = 1; i < 4; i++) {
    bw_clock_manual_advance(e->clock, 100 * MS);
    assert_status(bw_bulkhead_release(bh, &log.permits[i - 1]), BW_OK);
    assert_int_equal(log.count, i + 1);
    assert_int_equal(log.order[i], i + 1);
    assert_i64_eq(log.permits[i].start_ns, BWT_T0_NS + (i + 1) * 100 * MS);
  }
  assert_status(bw_bulkhead_release(bh, &log.permits[3]), BW_OK);
  s = stats(bh);
  assert_u64_eq(s.in_use, 0);
  assert_u64_eq(s.waiting, 0);
  assert_u64_eq(s.admitted, 5);
  assert_u64_eq(s.admitted_after_wait, 4);
  assert_u64_eq(s.rejected_full, 1);
  assert_u64_eq(s.released, 5);
}

static void
a_granted_waiters_deadline_runs_from_the_grant_narrowed_by_its_budget(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t held = take(bh), p;
  bw_deadline_t prev;

  /* Queued with 4 s of budget left: granted 3 s later, it has 1 s. */
  prev = bw_deadline_set(bw_deadline_in(BWT_T0_NS, 4000));
  assert_int_equal(queue(bh, &t, 1, &log, &p), BW_BULKHEAD_QUEUED);
  bw_deadline_set(prev);
  bw_clock_manual_advance(e->clock, 3 * SEC);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 1);
  assert_i64_eq(log.permits[0].start_ns, BWT_T0_NS + 3 * SEC);
  assert_i64_eq(bw_bulkhead_deadline_ns(&log.permits[0]), BWT_T0_NS + 4 * SEC);
  bw_clock_manual_advance(e->clock, 1 * SEC);
  assert_status(bw_bulkhead_release(bh, &log.permits[0]), BW_E_TIMEOUT);
}

static void a_full_queue_refuses_with_full(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 2);
  grant_log_t log = {0};
  tagged_t t[3];
  bw_permit_t held = take(bh), p;
  bw_bulkhead_stats_t s;
  assert_int_equal(queue(bh, &t[0], 1, &log, &p), BW_BULKHEAD_QUEUED);
  assert_int_equal(queue(bh, &t[1], 2, &log, &p), BW_BULKHEAD_QUEUED);
  assert_status(queue(bh, &t[2], 3, &log, &p), BW_E_FULL);
  s = stats(bh);
  assert_u64_eq(s.waiting, 2);
  assert_u64_eq(s.rejected_full, 1);
  assert_status(bw_bulkhead_cancel(bh, &t[0].w), BW_OK);
  assert_status(bw_bulkhead_cancel(bh, &t[1].w), BW_OK);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 0);
}

static void max_waiting_zero_means_no_queue(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 0);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t held = take(bh), p;
  assert_status(queue(bh, &t, 1, &log, &p), BW_E_FULL);
  assert_u64_eq(stats(bh).rejected_full, 1);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
}

static void a_cancelled_waiter_is_never_called_and_keeps_its_place_for_no_one(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  grant_log_t log = {0};
  tagged_t t[3];
  bw_permit_t held = take(bh), p;
  bw_bulkhead_stats_t s;

  for (int i = 0; i < 3; i++)
    assert_int_equal(queue(bh, &t[i], i + 1, &log, &p), BW_BULKHEAD_QUEUED);
  assert_status(bw_bulkhead_cancel(bh, &t[1].w), BW_OK); /* the middle one */
  assert_status(bw_bulkhead_cancel(bh, &t[1].w), BW_E_NOTFOUND);
  assert_u64_eq(stats(bh).waiting, 2);

  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_status(bw_bulkhead_cancel(bh, &t[0].w), BW_E_NOTFOUND); /* granted */
  assert_status(bw_bulkhead_release(bh, &log.permits[0]), BW_OK);
  assert_int_equal(log.count, 2);
  assert_int_equal(log.order[0], 1);
  assert_int_equal(log.order[1], 3); /* 2 was cancelled */
  assert_status(bw_bulkhead_release(bh, &log.permits[1]), BW_OK);
  s = stats(bh);
  assert_u64_eq(s.cancelled, 1);
  assert_u64_eq(s.in_use, 0);
  assert_u64_eq(s.waiting, 0);
  assert_u64_eq(s.admitted, 3);
  /* Conservation: every request is admitted, refused or cancelled. */
  assert_u64_eq(s.admitted + s.rejected_full + s.wait_timeouts +
                    s.rejected_deadline + s.cancelled,
                4);
  assert_status(bw_bulkhead_cancel(NULL, &t[0].w), BW_E_INVAL);
  assert_status(bw_bulkhead_cancel(bh, NULL), BW_E_INVAL);
}

static void a_callback_may_release_on_the_same_bulkhead(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  grant_log_t log = {0};
  tagged_t t[3];
  bw_permit_t held = take(bh), p;
  bw_bulkhead_stats_t s;

  log.bh = bh;
  log.release_at_once = true;
  for (int i = 0; i < 3; i++)
    assert_int_equal(queue(bh, &t[i], i + 1, &log, &p), BW_BULKHEAD_QUEUED);
  /* One release: each callback releases, which grants the next waiter. */
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 3);
  for (int i = 0; i < 3; i++)
    assert_int_equal(log.order[i], i + 1);
  s = stats(bh);
  assert_u64_eq(s.in_use, 0);
  assert_u64_eq(s.released, 4);
}

static void queueing_a_waiter_twice_is_refused(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 10000, 10);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t held = take(bh), p;
  assert_int_equal(queue(bh, &t, 1, &log, &p), BW_BULKHEAD_QUEUED);
  assert_status(bw_bulkhead_acquire_async(bh, &p, &t.w, on_grant, &t),
                BW_E_INVAL);
  assert_u64_eq(stats(bh).waiting, 1);
  assert_status(bw_bulkhead_cancel(bh, &t.w), BW_OK);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
}

/* ==== blocking acquire ===================================================
 */

static void blocking_acquire_with_no_wait_allowed_refuses_at_once(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_config_t cfg;
  bw_bulkhead_t *bh;
  bw_permit_t held, p;
  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = 0;
  cfg.clock = e->clock;
  bh = e->bh = bw_bulkhead_new(&cfg, NULL);
  assert_non_null(bh);
  assert_status(bw_bulkhead_acquire(bh, &held), BW_OK);
  assert_status(bw_bulkhead_acquire(bh, &p), BW_E_FULL);
  assert_u64_eq(stats(bh).rejected_full, 1);
  assert_u64_eq(stats(bh).wait_timeouts, 0);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
}

/* The wait is min(max_wait_ms, remaining budget): with under 1 ms of budget
 * left there is no time to wait, so a 10-minute max_wait_ms does not block. */
static void blocking_acquire_waits_no_longer_than_the_thread_deadline(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_config_t cfg;
  bw_bulkhead_t *bh;
  bw_permit_t held, p;
  bw_deadline_t prev;
  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = 600000;
  cfg.clock = e->clock;
  bh = e->bh = bw_bulkhead_new(&cfg, NULL);
  assert_non_null(bh);
  held = take(bh);
  prev = bw_deadline_set((bw_deadline_t){BWT_T0_NS + MS / 2});
  assert_status(bw_bulkhead_acquire(bh, &p), BW_E_FULL);
  bw_deadline_set(prev);
  assert_u64_eq(stats(bh).rejected_full, 1);
  assert_u64_eq(stats(bh).waiting, 0);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
}

/* A real (short) wait: only the outcome and the counts are asserted. */
static void blocking_acquire_gives_up_after_max_wait_with_full(void **state) {
  env_t *e = *state;
  bw_bulkhead_config_t cfg;
  bw_bulkhead_t *bh;
  bw_permit_t held, p;
  bw_bulkhead_stats_t s;
  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = 1;
  cfg.clock = e->clock;
  bh = e->bh = bw_bulkhead_new(&cfg, NULL);
  assert_non_null(bh);
  held = take(bh);
  assert_status(bw_bulkhead_acquire(bh, &p), BW_E_FULL);
  s = stats(bh);
  assert_u64_eq(s.wait_timeouts, 1);
  assert_u64_eq(s.rejected_full, 0);
  assert_u64_eq(s.waiting, 0);
  assert_u64_eq(s.in_use, 1);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_u64_eq(stats(bh).in_use, 0); /* the gone waiter took nothing */
}

typedef struct blocker_s {
  bw_bulkhead_t *bh;
  int id;
  _Atomic int *next_slot;
  int *order;
  int rc;
} blocker_t;

static void *blocker(void *arg) {
  blocker_t *b = arg;
  bw_permit_t p;
  b->rc = bw_bulkhead_acquire(b->bh, &p);
  if (b->rc == BW_OK) {
    b->order[atomic_fetch_add(b->next_slot, 1)] = b->id;
    bw_bulkhead_release(b->bh, &p);
  }
  return NULL;
}

static void wait_for_waiting(bw_bulkhead_t *bh, uint32_t n) {
  for (;;) {
    bw_bulkhead_stats_t s;
    bw_bulkhead_stats(bh, &s);
    if (s.waiting == n) return;
    sched_yield();
  }
}

static void blocked_threads_are_served_in_arrival_order(void **state) {
  env_t *e = *state;
  bw_bulkhead_config_t cfg;
  bw_bulkhead_t *bh;
  enum { N = 5 };
  pthread_t th[N];
  blocker_t b[N];
  int order[N];
  _Atomic int next = 0;
  bw_permit_t held;
  bw_bulkhead_stats_t s;

  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = 600000; /* never the reason a thread stops waiting */
  cfg.clock = e->clock;
  bh = e->bh = bw_bulkhead_new(&cfg, NULL);
  assert_non_null(bh);
  held = take(bh);
  for (int i = 0; i < N; i++) {
    b[i] = (blocker_t){bh, i, &next, order, -100};
    assert_int_equal(pthread_create(&th[i], NULL, blocker, &b[i]), 0);
    wait_for_waiting(bh, (uint32_t)i + 1); /* i is queued before i + 1 */
  }
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  for (int i = 0; i < N; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < N; i++) {
    assert_status(b[i].rc, BW_OK);
    assert_int_equal(order[i], i);
  }
  s = stats(bh);
  assert_u64_eq(s.admitted, N + 1);
  assert_u64_eq(s.admitted_after_wait, N);
  assert_u64_eq(s.released, N + 1);
  assert_u64_eq(s.in_use, 0);
  assert_u64_eq(s.waiting, 0);
}

static void blocked_threads_and_callbacks_share_one_queue(void **state) {
  env_t *e = *state;
  bw_bulkhead_config_t cfg;
  bw_bulkhead_t *bh;
  pthread_t th;
  blocker_t b;
  int order[2];
  _Atomic int next = 0;
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t held, p;

  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = 600000;
  cfg.clock = e->clock;
  bh = e->bh = bw_bulkhead_new(&cfg, NULL);
  assert_non_null(bh);
  held = take(bh);
  assert_int_equal(queue(bh, &t, 7, &log, &p), BW_BULKHEAD_QUEUED);
  b = (blocker_t){bh, 1, &next, order, -100};
  assert_int_equal(pthread_create(&th, NULL, blocker, &b), 0);
  wait_for_waiting(bh, 2);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 1); /* the callback queued first, served first */
  assert_int_equal(atomic_load(&next), 0);
  assert_status(bw_bulkhead_release(bh, &log.permits[0]), BW_OK);
  pthread_join(th, NULL);
  assert_status(b.rc, BW_OK);
  assert_int_equal(atomic_load(&next), 1);
}

/* ==== the bounded wait's non-blocking half ===============================
 * bw_bulkhead_acquire_timed and bw_bulkhead_cancel_timeout: what the threads
 * driver's blocking acquire is made of, on the manual clock. */

static bw_bulkhead_t *make_waiting(env_t *e, int64_t max_wait_ms) {
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  bw_bulkhead_config_init(&cfg);
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = max_wait_ms;
  cfg.timeout_ms = 10000;
  cfg.max_waiting = 10;
  cfg.clock = e->clock;
  bw_bulkhead_free(e->bh);
  e->bh = bw_bulkhead_new(&cfg, &err);
  if (e->bh == NULL) fail_msg("bw_bulkhead_new: %s", err.message);
  return e->bh;
}

static int queue_timed(bw_bulkhead_t *bh, tagged_t *t, int id, grant_log_t *log,
                       bw_permit_t *p, int64_t *wait_ms) {
  memset(t, 0, sizeof(*t));
  t->id = id;
  t->log = log;
  return bw_bulkhead_acquire_timed(bh, p, &t->w, on_grant, t, wait_ms);
}

static void a_timed_acquire_admits_at_once_when_a_slot_is_free(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make_waiting(e, 2000);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t p;
  int64_t wait_ms = -7;
  bw_bulkhead_stats_t s;
  assert_status(queue_timed(bh, &t, 1, &log, &p, &wait_ms), BW_OK);
  assert_i64_eq(wait_ms, -7); /* set only when queued */
  assert_i64_eq(p.start_ns, BWT_T0_NS);
  assert_i64_eq(bw_bulkhead_deadline_ns(&p), BWT_T0_NS + 10000 * MS);
  assert_int_equal(log.count, 0);
  s = stats(bh);
  assert_u64_eq(s.admitted, 1);
  assert_u64_eq(s.admitted_after_wait, 0);
  assert_u64_eq(s.waiting, 0);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
}

/* Queued: the wait allowed is max_wait_ms, narrowed to the thread's
 * remaining deadline on the bulkhead's clock; a release grants the waiter
 * through its callback, as for acquire_async. */
static void a_timed_acquire_queues_for_max_wait_narrowed_to_the_deadline(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make_waiting(e, 2000);
  grant_log_t log = {0};
  tagged_t t, u;
  bw_permit_t held, p;
  bw_deadline_t prev;
  int64_t wait_ms = -1;
  bw_bulkhead_stats_t s;
  held = take(bh);
  assert_status(queue_timed(bh, &t, 1, &log, &p, &wait_ms), BW_BULKHEAD_QUEUED);
  assert_i64_eq(wait_ms, 2000);
  prev = bw_deadline_set(bw_deadline_in(BWT_T0_NS, 750));
  bw_clock_manual_advance(e->clock, 100 * MS);
  assert_status(queue_timed(bh, &u, 2, &log, &p, &wait_ms), BW_BULKHEAD_QUEUED);
  assert_i64_eq(wait_ms, 650);
  bw_deadline_set(prev);
  assert_u64_eq(stats(bh).waiting, 2);
  bw_clock_manual_advance(e->clock, 5 * MS);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 1);
  assert_int_equal(log.order[0], 1);
  assert_i64_eq(log.permits[0].start_ns, BWT_T0_NS + 105 * MS);
  assert_status(bw_bulkhead_release(bh, &log.permits[0]), BW_OK);
  assert_int_equal(log.count, 2);
  /* granted at T0 + 105 ms, its budget ended at T0 + 750 ms */
  assert_i64_eq(bw_bulkhead_deadline_ns(&log.permits[1]), BWT_T0_NS + 750 * MS);
  assert_status(bw_bulkhead_release(bh, &log.permits[1]), BW_OK);
  s = stats(bh);
  assert_u64_eq(s.admitted, 3);
  assert_u64_eq(s.admitted_after_wait, 2);
  assert_u64_eq(s.wait_timeouts, 0);
  assert_u64_eq(s.rejected_full, 0);
  assert_u64_eq(s.waiting, 0);
}

/* No time to wait — max_wait_ms 0, or under 1 ms of deadline left — is a
 * refusal counted in rejected_full, and nothing is queued. */
static void a_timed_acquire_with_no_time_to_wait_refuses_without_queueing(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make_waiting(e, 0);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t held, p;
  bw_deadline_t prev;
  int64_t wait_ms = -7;
  bw_bulkhead_stats_t s;
  held = take(bh);
  assert_status(queue_timed(bh, &t, 1, &log, &p, &wait_ms), BW_E_FULL);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  bh = make_waiting(e, 600000);
  held = take(bh);
  prev = bw_deadline_set((bw_deadline_t){BWT_T0_NS + MS - 1});
  assert_status(queue_timed(bh, &t, 2, &log, &p, &wait_ms), BW_E_FULL);
  bw_deadline_set(prev);
  assert_i64_eq(wait_ms, -7);
  s = stats(bh);
  assert_u64_eq(s.rejected_full, 1);
  assert_u64_eq(s.wait_timeouts, 0);
  assert_u64_eq(s.cancelled, 0);
  assert_u64_eq(s.waiting, 0);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 0);
  assert_u64_eq(stats(bh).in_use, 0);
}

/* A waiter whose time ran out is removed and counted as a wait timeout,
 * not a cancellation; one already granted is not found (its callback has
 * run: the slot is the caller's). */
static void cancel_timeout_counts_a_wait_timeout_not_a_cancellation(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make_waiting(e, 2000);
  grant_log_t log = {0};
  tagged_t t, u;
  bw_bulkhead_waiter_t never;
  bw_permit_t held, p;
  int64_t wait_ms = 0;
  bw_bulkhead_stats_t s;
  held = take(bh);
  assert_status(queue_timed(bh, &t, 1, &log, &p, &wait_ms), BW_BULKHEAD_QUEUED);
  assert_status(queue_timed(bh, &u, 2, &log, &p, &wait_ms), BW_BULKHEAD_QUEUED);
  bw_clock_manual_advance(e->clock, 2000 * MS);
  assert_status(bw_bulkhead_cancel_timeout(bh, &t.w), BW_OK);
  assert_status(bw_bulkhead_cancel_timeout(bh, &t.w), BW_E_NOTFOUND);
  assert_status(bw_bulkhead_cancel(bh, &t.w), BW_E_NOTFOUND);
  s = stats(bh);
  assert_u64_eq(s.wait_timeouts, 1);
  assert_u64_eq(s.cancelled, 0);
  assert_u64_eq(s.waiting, 1);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 1);
  assert_int_equal(log.order[0], 2); /* the timed-out waiter got nothing */
  assert_status(bw_bulkhead_cancel_timeout(bh, &u.w), BW_E_NOTFOUND);
  assert_status(bw_bulkhead_release(bh, &log.permits[0]), BW_OK);
  memset(&never, 0, sizeof(never));
  assert_status(bw_bulkhead_cancel_timeout(bh, &never), BW_E_NOTFOUND);
  assert_status(bw_bulkhead_cancel_timeout(NULL, &never), BW_E_INVAL);
  assert_status(bw_bulkhead_cancel_timeout(bh, NULL), BW_E_INVAL);
  s = stats(bh);
  assert_u64_eq(s.wait_timeouts, 1);
  assert_u64_eq(s.cancelled, 0);
  assert_u64_eq(s.admitted, 2);
  assert_u64_eq(s.admitted_after_wait, 1);
  assert_u64_eq(s.in_use, 0);
}

static void a_timed_acquire_refuses_bad_arguments_and_a_spent_deadline(
    void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make_waiting(e, 2000);
  grant_log_t log = {0};
  tagged_t t;
  bw_permit_t p;
  int64_t wait_ms = -7;
  bw_deadline_t prev;
  bw_bulkhead_stats_t s;
  memset(&t, 0, sizeof(t));
  t.log = &log;
  assert_status(
      bw_bulkhead_acquire_timed(NULL, &p, &t.w, on_grant, &t, &wait_ms),
      BW_E_INVAL);
  assert_status(
      bw_bulkhead_acquire_timed(bh, NULL, &t.w, on_grant, &t, &wait_ms),
      BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_timed(bh, &p, NULL, on_grant, &t, &wait_ms),
                BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_timed(bh, &p, &t.w, NULL, &t, &wait_ms),
                BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_timed(bh, &p, &t.w, on_grant, &t, NULL),
                BW_E_INVAL);
  prev = bw_deadline_set(bw_deadline_in(BWT_T0_NS, 0));
  assert_status(queue_timed(bh, &t, 1, &log, &p, &wait_ms), BW_E_DEADLINE);
  bw_deadline_set(prev);
  assert_i64_eq(wait_ms, -7);
  s = stats(bh);
  assert_u64_eq(s.rejected_deadline, 1);
  assert_u64_eq(s.admitted, 0);
  assert_u64_eq(s.rejected_full, 0);
  assert_u64_eq(s.in_use, 0);
  assert_int_equal(log.count, 0);
}

/* ==== the limit interface ================================================
 */

static void the_bulkhead_is_a_concurrency_limit(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 2, 1000, 10);
  bw_limit_t *l = bw_bulkhead_as_limit(bh);
  bw_permit_t p, q, r;

  assert_non_null(l);
  assert_null(bw_bulkhead_as_limit(NULL));
  assert_string_equal(bw_limit_kind(l), "bulkhead");
  assert_string_equal(bw_limit_name(l), "agent");
  assert_u64_eq(bw_limit_current(l), 2);
  assert_u64_eq(bw_limit_in_flight(l), 0);
  assert_status(bw_limit_try_acquire(l, &p), BW_OK);
  assert_status(bw_limit_try_acquire(l, &q), BW_OK);
  assert_status(bw_limit_try_acquire(l, &r), BW_E_FULL);
  assert_u64_eq(bw_limit_in_flight(l), 2);
  assert_status(bw_limit_release(l, &p, (bw_limit_outcome_t)4), BW_E_INVAL);
  assert_u64_eq(bw_limit_in_flight(l), 2); /* refused: nothing released */
  assert_status(bw_limit_release(l, &p, BW_LIMIT_SUCCESS), BW_OK);
  bw_clock_manual_advance(e->clock, 1000 * MS);
  assert_status(bw_limit_release(l, &q, BW_LIMIT_DROPPED), BW_E_TIMEOUT);
  assert_u64_eq(bw_limit_in_flight(l), 0);
  assert_u64_eq(stats(bh).timeouts, 1);
  /* NULL-safety of the interface itself. */
  assert_status(bw_limit_try_acquire(NULL, &p), BW_E_INVAL);
  assert_status(bw_limit_try_acquire(l, NULL), BW_E_INVAL);
  assert_status(bw_limit_release(NULL, &p, BW_LIMIT_SUCCESS), BW_E_INVAL);
  assert_u64_eq(bw_limit_current(NULL), 0);
  assert_u64_eq(bw_limit_in_flight(NULL), 0);
  assert_string_equal(bw_limit_name(NULL), "");
  assert_string_equal(bw_limit_kind(NULL), "");
  assert_string_equal(bw_limit_outcome_name(BW_LIMIT_SUCCESS), "success");
  assert_string_equal(bw_limit_outcome_name(BW_LIMIT_DROPPED), "dropped");
  assert_string_equal(bw_limit_outcome_name(BW_LIMIT_IGNORED), "ignored");
  assert_string_equal(bw_limit_outcome_name((bw_limit_outcome_t)9), "unknown");
  /* bw_limit_free frees the object behind it. */
  bw_limit_free(l);
  e->bh = NULL;
  bw_limit_free(NULL);
}

/* ==== out of memory ======================================================
 */

static int oom_scenario(void *ctx) {
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  bw_bulkhead_t *bh;
  bw_permit_t p;
  (void)ctx;
  bw_bulkhead_config_preset(&cfg, "payment_agent");
  bh = bw_bulkhead_new(&cfg, &err);
  if (bh == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    return BW_E_NOMEM;
  }
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_OK);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  bw_bulkhead_free(bh);
  return BW_OK;
}

static void out_of_memory_fails_cleanly_at_every_allocation(void **state) {
  (void)state;
  /* at least one allocation was failed */
  assert_true(oom_walk(oom_scenario, NULL, false) > 1);
}

/* ==== refusal summaries ==================================================
 */

typedef struct summary_env_s {
  bwt_recorder_t *rec;
  bw_sink_t *sink;
} summary_env_t;

static bw_bulkhead_t *make_summarising(env_t *e, summary_env_t *se) {
  bw_bulkhead_config_t cfg;
  bw_error_t err;
  se->rec = calloc(1, sizeof(*se->rec));
  assert_non_null(se->rec);
  se->sink = bw_sink_callback_new(bwt_record_cb, se->rec, &err);
  assert_non_null(se->sink);
  bw_bulkhead_config_init(&cfg);
  cfg.name = "agent";
  cfg.max_concurrent = 1;
  cfg.max_wait_ms = 2000;
  cfg.timeout_ms = 0;
  cfg.max_waiting = 10;
  cfg.clock = e->clock;
  cfg.wall_clock = e->clock;
  cfg.sink = se->sink;
  bw_bulkhead_free(e->bh);
  e->bh = bw_bulkhead_new(&cfg, &err);
  if (e->bh == NULL) fail_msg("bw_bulkhead_new: %s", err.message);
  return e->bh;
}

static void assert_bulkhead_rejected(const bwt_event_t *ev, uint64_t full,
                                     uint64_t deadline, uint64_t waits,
                                     int64_t at_ns) {
  assert_int_equal(ev->type, BW_EV_BULKHEAD_REJECTED);
  assert_string_equal(ev->name, "agent");
  assert_int_equal(ev->field_count, 5);
  assert_field_uint(ev, 0, "count", full + deadline + waits);
  assert_field_uint(ev, 1, "full", full);
  assert_field_uint(ev, 2, "deadline", deadline);
  assert_field_uint(ev, 3, "wait_timeouts", waits);
  assert_field_uint(ev, 4, "max_concurrent", 1);
  assert_i64_eq(ev->mono_ns, at_ns);
  assert_i64_eq(ev->wall_ns, at_ns);
}

/* Every kind of refusal is counted in one summary, at most once a second:
 * a refusal a second or more after the last summary (or the creation)
 * reports every refusal since, itself included. */
static void refusals_are_summarised_at_most_once_a_second(void **state) {
  env_t *e = *state;
  summary_env_t se;
  bw_bulkhead_t *bh = make_summarising(e, &se);
  bw_permit_t held, p;
  tagged_t t;
  grant_log_t log = {0};
  int64_t wait_ms = 0;
  bw_deadline_t prev;
  int i;

  held = take(bh);
  for (i = 0; i < 3; i++)
    assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);
  bw_clock_manual_advance(e->clock, 1000 * MS - 1);
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);
  assert_int_equal(se.rec->count, 0);
  bw_clock_manual_advance(e->clock, 1);
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);
  assert_int_equal(se.rec->count, 1);
  assert_bulkhead_rejected(bwt_event_at(se.rec, 0), 5, 0, 0,
                           BWT_T0_NS + 1000 * MS);
  assert_string_equal(bwt_event_at(se.rec, 0)->reason,
                      "5 calls rejected: 5 with every slot taken, 0 past "
                      "their deadline, 0 waits timed out");

  /* A spent thread deadline and a timed-out wait, half a second later: no
   * summary yet. */
  bw_clock_manual_advance(e->clock, 500 * MS);
  prev = bw_deadline_set(bw_deadline_in(BWT_T0_NS, 0));
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_DEADLINE);
  bw_deadline_set(prev);
  assert_status(queue_timed(bh, &t, 1, &log, &p, &wait_ms), BW_BULKHEAD_QUEUED);
  assert_i64_eq(wait_ms, 2000);
  bw_clock_manual_advance(e->clock, 500 * MS); /* T0 + 2000 ms: due */
  assert_status(bw_bulkhead_cancel_timeout(bh, &t.w), BW_OK);
  assert_int_equal(se.rec->count, 2);
  assert_bulkhead_rejected(bwt_event_at(se.rec, 1), 0, 1, 1,
                           BWT_T0_NS + 2000 * MS);
  bw_clock_manual_advance(e->clock, 1);
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);
  bw_clock_manual_advance(e->clock, 1000 * MS - 1); /* T0 + 3000 ms */
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);
  assert_int_equal(se.rec->count, 3);
  assert_bulkhead_rejected(bwt_event_at(se.rec, 2), 2, 0, 0,
                           BWT_T0_NS + 3000 * MS);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  assert_int_equal(log.count, 0);
  assert_u64_eq(stats(bh).rejected_full, 7);
  assert_u64_eq(stats(bh).rejected_deadline, 1);
  assert_u64_eq(stats(bh).wait_timeouts, 1);

  /* Nothing pending: freeing emits nothing. */
  bw_bulkhead_free(bh);
  e->bh = NULL;
  assert_int_equal(se.rec->count, 3);
  bw_sink_free(se.sink);
  free(se.rec);
}

/* Freeing a bulkhead reports the refusals not yet summarised, at the time
 * of the free. */
static void freeing_a_bulkhead_reports_the_refusals_not_yet_summarised(
    void **state) {
  env_t *e = *state;
  summary_env_t se;
  bw_bulkhead_t *bh = make_summarising(e, &se);
  bw_permit_t held, p;
  held = take(bh);
  bw_clock_manual_advance(e->clock, 200 * MS);
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_E_FULL);
  assert_int_equal(se.rec->count, 0);
  assert_status(bw_bulkhead_release(bh, &held), BW_OK);
  bw_clock_manual_advance(e->clock, 100 * MS);
  bw_bulkhead_free(bh);
  e->bh = NULL;
  assert_int_equal(se.rec->count, 1);
  assert_bulkhead_rejected(bwt_event_at(se.rec, 0), 2, 0, 0,
                           BWT_T0_NS + 300 * MS);
  bw_sink_free(se.sink);
  free(se.rec);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value) for a NULL object or argument, never a crash; the void
 * functions and the free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_bulkhead_config_t cfg;
  bw_bulkhead_stats_t s;
  bw_bulkhead_waiter_t w;
  bw_permit_t p;
  bw_error_t err;
  int64_t wait_ms = 7;
  (void)state;
  memset(&w, 0, sizeof w);
  memset(&p, 0, sizeof p);
  bw_bulkhead_config_init(NULL);
  assert_false(bw_bulkhead_config_preset(NULL, "payment_agent"));
  assert_status(bw_bulkhead_config_validate(NULL, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_config_validate(NULL, &err), BW_E_INVAL);
  assert_null(bw_bulkhead_new(NULL, NULL));
  assert_null(bw_bulkhead_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  bw_bulkhead_config_init(&cfg);
  cfg.name = NULL;
  assert_null(bw_bulkhead_new(&cfg, NULL));
  assert_status(bw_bulkhead_try_acquire(NULL, &p), BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_async(NULL, &p, &w, never_called, NULL),
                BW_E_INVAL);
  assert_status(
      bw_bulkhead_acquire_timed(NULL, &p, &w, never_called, NULL, &wait_ms),
      BW_E_INVAL);
  assert_status(bw_bulkhead_cancel(NULL, &w), BW_E_INVAL);
  assert_status(bw_bulkhead_cancel_timeout(NULL, &w), BW_E_INVAL);
  assert_status(bw_bulkhead_release(NULL, &p), BW_E_INVAL);
  assert_false(bw_bulkhead_expired(NULL, 0));
  assert_i64_eq(bw_bulkhead_deadline_ns(NULL), INT64_MAX);
  memset(&s, 0xA5, sizeof s);
  bw_bulkhead_stats(NULL, &s);
  assert_u64_eq(s.admitted, 0);
  assert_u64_eq(s.max_concurrent, 0);
  bw_bulkhead_stats(NULL, NULL);
  assert_string_equal(bw_bulkhead_name(NULL), "");
  assert_null(bw_bulkhead_as_limit(NULL));
  bw_bulkhead_free(NULL);
}

/* The same with a real bulkhead and NULL arguments. */
static void every_verb_answers_null_arguments_without_crashing(void **state) {
  env_t *e = *state;
  bw_bulkhead_t *bh = make(e, 1, 0, 10);
  bw_bulkhead_waiter_t w;
  bw_permit_t p;
  memset(&w, 0, sizeof w);
  assert_status(bw_bulkhead_try_acquire(bh, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_async(bh, NULL, &w, never_called, NULL),
                BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_async(bh, &p, NULL, never_called, NULL),
                BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_async(bh, &p, &w, NULL, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_acquire_timed(bh, &p, &w, never_called, NULL, NULL),
                BW_E_INVAL);
  assert_status(bw_bulkhead_cancel(bh, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_cancel_timeout(bh, NULL), BW_E_INVAL);
  assert_status(bw_bulkhead_release(bh, NULL), BW_E_INVAL);
  bw_bulkhead_stats(bh, NULL);
  assert_u64_eq(stats(bh).in_use, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(
          defaults_are_the_asyncio_toolkits_fallback_with_a_2_s_slot_wait),
      cmocka_unit_test(presets_are_the_asyncio_toolkits_registry),
      cmocka_unit_test(preset_with_no_name_falls_back_to_the_defaults),
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test_setup_teardown(
          every_verb_answers_null_arguments_without_crashing, setup, teardown),
      cmocka_unit_test_setup_teardown(
          bad_configurations_are_refused_naming_the_field, setup, teardown),
      cmocka_unit_test_setup_teardown(boundary_values_are_accepted, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          admits_max_concurrent_calls_then_refuses_with_full, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_permit_carries_its_start_and_execution_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(
          release_after_the_execution_deadline_is_a_timeout, setup, teardown),
      cmocka_unit_test_setup_teardown(timeout_zero_means_no_execution_deadline,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          the_thread_deadline_narrows_the_execution_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_spent_thread_deadline_refuses_without_taking_a_slot, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          release_with_nothing_held_or_null_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(
          async_acquire_admits_at_once_when_a_slot_is_free, setup, teardown),
      cmocka_unit_test_setup_teardown(
          queued_waiters_are_served_first_come_first_served, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_granted_waiters_deadline_runs_from_the_grant_narrowed_by_its_budget,
          setup, teardown),
      cmocka_unit_test_setup_teardown(a_full_queue_refuses_with_full, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(max_waiting_zero_means_no_queue, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          a_cancelled_waiter_is_never_called_and_keeps_its_place_for_no_one,
          setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_callback_may_release_on_the_same_bulkhead, setup, teardown),
      cmocka_unit_test_setup_teardown(queueing_a_waiter_twice_is_refused, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          blocking_acquire_with_no_wait_allowed_refuses_at_once, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          blocking_acquire_waits_no_longer_than_the_thread_deadline, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          blocking_acquire_gives_up_after_max_wait_with_full, setup, teardown),
      cmocka_unit_test_setup_teardown(
          blocked_threads_are_served_in_arrival_order, setup, teardown),
      cmocka_unit_test_setup_teardown(
          blocked_threads_and_callbacks_share_one_queue, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_timed_acquire_admits_at_once_when_a_slot_is_free, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_timed_acquire_queues_for_max_wait_narrowed_to_the_deadline, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          a_timed_acquire_with_no_time_to_wait_refuses_without_queueing, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          refusals_are_summarised_at_most_once_a_second, setup, teardown),
      cmocka_unit_test_setup_teardown(
          freeing_a_bulkhead_reports_the_refusals_not_yet_summarised, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          cancel_timeout_counts_a_wait_timeout_not_a_cancellation, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          a_timed_acquire_refuses_bad_arguments_and_a_spent_deadline, setup,
          teardown),
      cmocka_unit_test_setup_teardown(the_bulkhead_is_a_concurrency_limit,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          the_clock_is_read_only_when_a_deadline_needs_it, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_granted_waiter_is_stamped_even_without_deadlines, setup, teardown),
      cmocka_unit_test_setup_teardown(
          the_default_clock_is_coarse_from_a_one_second_timeout, setup,
          teardown),
      cmocka_unit_test(out_of_memory_fails_cleanly_at_every_allocation),
  };
  if (oom_install() != BW_OK) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

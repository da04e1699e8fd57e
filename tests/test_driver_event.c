/* Specification tests: the libevent driver (driver_event.h).
 *
 * The attempts here are the test's own code (a synchronous report, or one
 * made later from a timer), so every test is about the driver: it follows
 * the pipeline's steps, waits with evtimers, times attempts out, delivers
 * `done` exactly once and never from inside bw_ev_call_start, and cancels
 * calls cleanly. The clock is the real monotonic one (the waits are real
 * evtimers), with waits of a few ms; only counts, verdicts and failure
 * kinds are asserted, never durations. Every loop is bounded in iterations
 * and by a guard timer. */
#include <event2/event.h>

#include "breakwater/bulkhead.h"
#include "breakwater/driver_event.h"
#include "bw_test.h"
#include "pipeline_kit.h"

/* ---- fixture ------------------------------------------------------------ */

typedef struct env_s {
  struct event_base *base;
  bw_ev_t *drv;
  bw_retry_policy_t *retry;
  bw_breaker_t *breaker;
  bw_pipeline_t *pl;
  bw_bulkhead_t *bulkhead;
} env_t;

static int setup(void **state) {
  bw_error_t err;
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->base = event_base_new();
  if (e->base == NULL) return -1;
  e->drv = bw_ev_new(e->base, NULL, &err);
  if (e->drv == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_ev_free(e->drv);
  bw_pipeline_free(e->pl);
  bw_bulkhead_free(e->bulkhead);
  bw_breaker_free(e->breaker);
  bw_retry_policy_free(e->retry);
  event_base_free(e->base);
  free(e);
  return 0;
}

/* A retry policy: `attempts` in all, constant 1 ms delays, no jitter. */
static bw_retry_policy_t *make_retry(uint32_t attempts) {
  return bwt_constant_retry(attempts, 1, true, NULL);
}

static bw_breaker_t *make_breaker(uint32_t threshold) {
  return bwt_make_breaker("dep", threshold, NULL);
}

/* pipeline: [breaker] -> [retry] -> [timeout] (each optional) */
static bw_pipeline_t *make_pipeline(bw_breaker_t *b, const bw_retry_policy_t *r,
                                    int64_t timeout_ms) {
  return bwt_pipeline("test", 0, b, r, timeout_ms);
}

/* A guard timer bounds every loop in wall time. */
static void guard_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  *(bool *)arg = true;
}

/* Runs the loop until *count > 0, at most limit_ms and 100000 iterations. */
static void run_until_count(struct event_base *base, const int *count,
                            int64_t limit_ms) {
  bool expired = false;
  struct timeval tv = {(time_t)(limit_ms / 1000),
                       (suseconds_t)((limit_ms % 1000) * 1000)};
  struct event *guard = evtimer_new(base, guard_cb, &expired);
  int i;
  assert_non_null(guard);
  evtimer_add(guard, &tv);
  for (i = 0; i < 100000 && *count == 0 && !expired; i++)
    if (event_base_loop(base, EVLOOP_ONCE) != 0) break;
  event_free(guard);
}

/* ---- the scripted attempt ------------------------------------------------ */

#define SCRIPT_MAX 8

typedef struct script_s {
  bw_verdict_t verdicts[SCRIPT_MAX]; /* what attempt n reports */
  int64_t hints[SCRIPT_MAX];
  int n;                /* verdicts scripted */
  bool silent;          /* never report (the driver times the attempt out) */
  bool async;           /* report from a timer, not from inside attempt */
  int attempts;         /* attempt callbacks */
  int aborts;           /* abort callbacks */
  int dones;            /* done callbacks */
  bool in_start;        /* inside bw_ev_call_start */
  bool done_in_start;   /* done ran from inside bw_ev_call_start */
  bw_ev_result_t res;   /* copy of the last result */
  bw_ev_call_t *call;   /* the attempt in progress */
  bw_ev_timer_t *timer; /* async reports */
  int report_rc;        /* the last bw_ev_call_report's return */
  int second_report_rc; /* a second report of the same attempt */
  bw_pipeline_stats_t at_done;
  const bw_pipeline_t *pl;
} script_t;

static void report_now(script_t *s) {
  int i = s->attempts - 1;
  if (i >= s->n) i = s->n - 1;
  s->report_rc = bw_ev_call_report(s->call, s->verdicts[i], s->hints[i]);
  s->second_report_rc = bw_ev_call_report(s->call, s->verdicts[i], s->hints[i]);
}

static void async_cb(void *ud) {
  report_now(ud);
}

static void on_attempt(void *ud, bw_ev_call_t *call,
                       const bw_pipeline_call_t *pc) {
  script_t *s = ud;
  s->attempts++;
  s->call = call;
  assert_u64_eq(pc->attempt, s->attempts);
  if (s->silent) return;
  if (s->async)
    assert_status(bw_ev_timer_start(s->timer, 1), BW_OK);
  else
    report_now(s);
}

static void on_abort(void *ud, bw_ev_call_t *call) {
  script_t *s = ud;
  s->aborts++;
  /* An aborted attempt may not be reported. */
  assert_status(bw_ev_call_report(call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE),
                BW_E_INVAL);
  bw_ev_timer_stop(s->timer);
}

static void on_done(void *ud, const bw_ev_result_t *res) {
  script_t *s = ud;
  s->dones++;
  s->res = *res;
  if (s->in_start) s->done_in_start = true;
  bw_pipeline_stats(s->pl, &s->at_done);
}

static bw_ev_ops_t ops(bool driver_timeout) {
  bw_ev_ops_t o;
  memset(&o, 0, sizeof(o));
  o.attempt = on_attempt;
  o.abort = on_abort;
  o.done = on_done;
  o.driver_timeout = driver_timeout;
  return o;
}

static void script_init(env_t *e, script_t *s) {
  memset(s, 0, sizeof(*s));
  s->timer = bw_ev_timer_new(e->drv, async_cb, s);
  assert_non_null(s->timer);
  s->pl = e->pl;
}

static int start(env_t *e, script_t *s, const bw_ev_ops_t *o) {
  int rc;
  s->in_start = true;
  rc = bw_ev_call_start(e->drv, e->pl, o, s, bw_deadline_none(), NULL);
  s->in_start = false;
  return rc;
}

static void run_to_done(env_t *e, script_t *s) {
  run_until_count(e->base, &s->dones, 5000);
  assert_int_equal(s->dones, 1);
}

/* ==== tests =============================================================== */

static void new_refuses_a_null_base_naming_it(void **state) {
  bw_error_t err;
  (void)state;
  bwt_prefill_error(&err);
  assert_null(bw_ev_new(NULL, NULL, &err));
  assert_true(bwt_error_names(&err, "base"));
  bw_ev_free(NULL); /* NULL-safe */
}

static void start_refuses_bad_arguments(void **state) {
  env_t *e = *state;
  bw_ev_ops_t o = ops(false);
  bw_ev_call_t *call = (bw_ev_call_t *)&o;
  bw_ev_stats_t st;
  e->pl = make_pipeline(NULL, NULL, 0);
  assert_status(
      bw_ev_call_start(NULL, e->pl, &o, NULL, bw_deadline_none(), &call),
      BW_E_INVAL);
  assert_null(call); /* *out is cleared on failure */
  assert_status(
      bw_ev_call_start(e->drv, NULL, &o, NULL, bw_deadline_none(), NULL),
      BW_E_INVAL);
  assert_status(
      bw_ev_call_start(e->drv, e->pl, NULL, NULL, bw_deadline_none(), NULL),
      BW_E_INVAL);
  o.attempt = NULL;
  assert_status(
      bw_ev_call_start(e->drv, e->pl, &o, NULL, bw_deadline_none(), NULL),
      BW_E_INVAL);
  o = ops(true);
  o.abort = NULL; /* a driver timeout needs a way to stop the attempt */
  assert_status(
      bw_ev_call_start(e->drv, e->pl, &o, NULL, bw_deadline_none(), NULL),
      BW_E_INVAL);
  bw_ev_stats(e->drv, &st);
  assert_u64_eq(st.calls_started, 0);
  assert_u64_eq(st.calls_in_progress, 0);
}

static void sync_reports_retry_to_success_in_three_attempts(void **state) {
  env_t *e = *state;
  script_t s;
  bw_ev_ops_t o = ops(false);
  bw_ev_stats_t st;
  e->retry = make_retry(3);
  e->pl = make_pipeline(NULL, e->retry, 0);
  script_init(e, &s);
  s.n = 3;
  s.verdicts[0] = s.verdicts[1] = BW_VERDICT_TRANSIENT;
  s.verdicts[2] = BW_VERDICT_OK;
  s.hints[0] = s.hints[1] = s.hints[2] = BW_RETRY_AFTER_NONE;
  assert_status(start(e, &s, &o), BW_OK);
  /* The first attempt started inside start; its report is deferred. */
  assert_int_equal(s.attempts, 1);
  assert_status(s.report_rc, BW_OK);
  assert_status(s.second_report_rc, BW_E_INVAL); /* one report per attempt */
  assert_int_equal(s.dones, 0);
  run_to_done(e, &s);
  assert_int_equal(s.dones, 1);
  assert_false(s.done_in_start);
  assert_int_equal(s.attempts, 3);
  assert_int_equal(s.res.failure, BW_FAILURE_NONE);
  assert_false(s.res.cancelled);
  assert_u64_eq(s.res.attempts, 3);
  assert_int_equal(s.res.last_verdict, BW_VERDICT_OK);
  assert_i64_eq(s.res.waited_ms, 2); /* two 1 ms retry delays */
  assert_true(s.res.latency_ns >= 0);
  assert_u64_eq(s.at_done.successes, 1);
  bw_ev_stats(e->drv, &st);
  assert_u64_eq(st.calls_started, 1);
  assert_u64_eq(st.calls_succeeded, 1);
  assert_u64_eq(st.calls_failed, 0);
  assert_u64_eq(st.calls_in_progress, 0);
  assert_u64_eq(st.attempts, 3);
  assert_u64_eq(st.waits, 2);
  bw_ev_timer_free(s.timer);
}

static void async_reports_exhaust_the_retry(void **state) {
  env_t *e = *state;
  script_t s;
  bw_ev_ops_t o = ops(false);
  bw_ev_stats_t st;
  e->retry = make_retry(2);
  e->pl = make_pipeline(NULL, e->retry, 0);
  script_init(e, &s);
  s.async = true;
  s.n = 1;
  s.verdicts[0] = BW_VERDICT_TRANSIENT;
  s.hints[0] = BW_RETRY_AFTER_NONE;
  assert_status(start(e, &s, &o), BW_OK);
  run_to_done(e, &s);
  assert_int_equal(s.dones, 1);
  assert_int_equal(s.attempts, 2);
  assert_int_equal(s.res.failure, BW_FAILURE_EXHAUSTED);
  assert_int_equal(s.res.last_verdict, BW_VERDICT_TRANSIENT);
  assert_int_equal(s.aborts, 0);
  bw_ev_stats(e->drv, &st);
  assert_u64_eq(st.calls_failed, 1);
  assert_u64_eq(st.calls_in_progress, 0);
  bw_ev_timer_free(s.timer);
}

static void a_hint_becomes_the_wait(void **state) {
  env_t *e = *state;
  script_t s;
  bw_ev_ops_t o = ops(false);
  e->retry = make_retry(2);
  e->pl = make_pipeline(NULL, e->retry, 0);
  script_init(e, &s);
  s.n = 2;
  s.verdicts[0] = BW_VERDICT_TRANSIENT;
  s.hints[0] = 30; /* Retry-After / pushback: at least 30 ms */
  s.verdicts[1] = BW_VERDICT_OK;
  s.hints[1] = BW_RETRY_AFTER_NONE;
  assert_status(start(e, &s, &o), BW_OK);
  run_to_done(e, &s);
  assert_int_equal(s.res.failure, BW_FAILURE_NONE);
  assert_true(s.res.waited_ms >= 30);
  bw_ev_timer_free(s.timer);
}

static void driver_times_out_silent_attempts(void **state) {
  env_t *e = *state;
  script_t s;
  bw_ev_ops_t o = ops(true);
  bw_ev_stats_t st;
  e->retry = make_retry(2);
  e->pl = make_pipeline(NULL, e->retry, 20);
  script_init(e, &s);
  s.silent = true;
  assert_status(start(e, &s, &o), BW_OK);
  run_to_done(e, &s);
  assert_int_equal(s.attempts, 2);
  assert_int_equal(s.aborts, 2); /* each timed-out attempt was stopped */
  assert_u64_eq(s.res.timeouts, 2);
  assert_int_equal(s.res.last_verdict, BW_VERDICT_TRANSIENT);
  assert_int_equal(s.res.failure, BW_FAILURE_EXHAUSTED);
  bw_ev_stats(e->drv, &st);
  assert_u64_eq(st.attempt_timeouts, 2);
  bw_ev_timer_free(s.timer);
}

static void open_breaker_makes_no_attempt_and_done_comes_from_the_loop(
    void **state) {
  env_t *e = *state;
  script_t s;
  bw_ev_ops_t o = ops(false);
  bw_permit_t p;
  bw_breaker_stats_t bs;
  e->breaker = make_breaker(1);
  assert_status(bw_breaker_acquire(e->breaker, &p), BW_OK);
  assert_status(bw_breaker_release(e->breaker, &p, BW_FAILURE), BW_OK);
  assert_state(bw_breaker_state(e->breaker), BW_OPEN);
  e->retry = make_retry(3);
  e->pl = make_pipeline(e->breaker, e->retry, 0);
  script_init(e, &s);
  assert_status(start(e, &s, &o), BW_OK);
  assert_int_equal(s.dones, 0); /* never from inside start */
  run_to_done(e, &s);
  assert_false(s.done_in_start);
  assert_int_equal(s.attempts, 0);
  assert_u64_eq(s.res.attempts, 0);
  assert_int_equal(s.res.failure, BW_FAILURE_BREAKER);
  bw_breaker_stats(e->breaker, &bs);
  assert_u64_eq(bs.rejected, 1);
  bw_ev_timer_free(s.timer);
}

static void report_refuses_bad_verdicts_and_hints(void **state) {
  env_t *e = *state;
  script_t s;
  bw_ev_ops_t o = ops(false);
  e->pl = make_pipeline(NULL, NULL, 0);
  script_init(e, &s);
  s.silent = true;
  assert_status(start(e, &s, &o), BW_OK);
  assert_int_equal(s.attempts, 1);
  assert_status(bw_ev_call_report(NULL, BW_VERDICT_OK, BW_RETRY_AFTER_NONE),
                BW_E_INVAL);
  assert_status(bw_ev_call_report(s.call, (bw_verdict_t)99, -1), BW_E_INVAL);
  assert_status(bw_ev_call_report(s.call, BW_VERDICT_OK, -3), BW_E_INVAL);
  /* still waiting for a valid report */
  assert_status(
      bw_ev_call_report(s.call, BW_VERDICT_PERMANENT, BW_RETRY_AFTER_NONE),
      BW_OK);
  run_to_done(e, &s);
  assert_int_equal(s.res.failure, BW_FAILURE_PERMANENT);
  bw_ev_timer_free(s.timer);
}

static void cancel_aborts_the_attempt_and_leaves_the_breaker_ignored(
    void **state) {
  env_t *e = *state;
  script_t s;
  bw_ev_ops_t o = ops(false);
  bw_breaker_stats_t bs;
  bw_ev_stats_t st;
  bw_ev_call_t *call = NULL;
  e->breaker = make_breaker(5);
  e->pl = make_pipeline(e->breaker, NULL, 0);
  script_init(e, &s);
  s.silent = true;
  assert_status(
      bw_ev_call_start(e->drv, e->pl, &o, &s, bw_deadline_none(), &call),
      BW_OK);
  assert_non_null(call);
  assert_ptr_equal(bw_ev_call_userdata(call), &s);
  assert_non_null(bw_ev_call_pipeline(call));
  bw_ev_call_cancel(call);
  assert_int_equal(s.aborts, 1);
  assert_int_equal(s.dones, 1); /* before cancel returned */
  assert_true(s.res.cancelled);
  assert_int_equal(s.res.failure, BW_FAILURE_NONE);
  assert_u64_eq(s.at_done.cancelled, 1);
  bw_breaker_stats(e->breaker, &bs);
  assert_u64_eq(bs.calls, 1);
  assert_u64_eq(bs.ignored, 1);
  assert_u64_eq(bs.failures, 0);
  bw_ev_stats(e->drv, &st);
  assert_u64_eq(st.calls_cancelled, 1);
  assert_u64_eq(st.calls_in_progress, 0);
  bw_ev_call_cancel(NULL);
  bw_ev_timer_free(s.timer);
}

typedef struct restart_s {
  bw_ev_t *drv;
  const bw_pipeline_t *pl;
  int rc;
  int dones;
} restart_t;

static void restart_done(void *ud, const bw_ev_result_t *res) {
  restart_t *r = ud;
  bw_ev_ops_t o = ops(false);
  (void)res;
  r->dones++;
  /* starting a call while the driver is being freed is refused */
  r->rc = bw_ev_call_start(r->drv, r->pl, &o, NULL, bw_deadline_none(), NULL);
}

static void silent_attempt(void *ud, bw_ev_call_t *call,
                           const bw_pipeline_call_t *pc) {
  (void)ud;
  (void)call;
  (void)pc;
}

static void free_with_calls_in_flight_cancels_them_all(void **state) {
  env_t *e = *state;
  script_t waiting, attempting;
  restart_t rs;
  bw_ev_ops_t o = ops(false), ro;
  bw_pipeline_stats_t ps;
  int i;
  e->retry = make_retry(3);
  {
    /* a retry whose delay is long: the call sits in WAIT */
    bw_retry_config_t rc;
    bw_error_t err;
    bw_retry_policy_free(e->retry);
    bw_retry_config_init(&rc);
    rc.max_attempts = 3;
    rc.backoff = BW_BACKOFF_CONSTANT;
    rc.base_ms = 60000;
    rc.max_ms = 60000;
    rc.jitter = BW_JITTER_NONE;
    e->retry = bw_retry_policy_new(&rc, &err);
    assert_non_null(e->retry);
  }
  e->pl = make_pipeline(NULL, e->retry, 0);
  script_init(e, &waiting);
  script_init(e, &attempting);
  waiting.n = 1;
  waiting.verdicts[0] = BW_VERDICT_TRANSIENT;
  waiting.hints[0] = BW_RETRY_AFTER_NONE;
  attempting.silent = true;
  assert_status(start(e, &waiting, &o), BW_OK);
  assert_status(start(e, &attempting, &o), BW_OK);
  memset(&rs, 0, sizeof(rs));
  rs.drv = e->drv;
  rs.pl = e->pl;
  memset(&ro, 0, sizeof(ro));
  ro.attempt = silent_attempt;
  ro.done = restart_done;
  assert_status(
      bw_ev_call_start(e->drv, e->pl, &ro, &rs, bw_deadline_none(), NULL),
      BW_OK);
  /* let the first call's report be processed: it then waits 60 s */
  for (i = 0; i < 10; i++)
    event_base_loop(e->base, EVLOOP_NONBLOCK);
  assert_int_equal(waiting.attempts, 1);
  assert_int_equal(waiting.dones, 0);
  bw_ev_free(e->drv);
  e->drv = NULL;
  assert_int_equal(waiting.dones, 1);
  assert_true(waiting.res.cancelled);
  assert_int_equal(waiting.aborts, 0); /* it was waiting, not attempting */
  assert_int_equal(attempting.dones, 1);
  assert_true(attempting.res.cancelled);
  assert_int_equal(attempting.aborts, 1);
  assert_int_equal(rs.dones, 1);
  assert_status(rs.rc, BW_E_INVAL);
  bw_pipeline_stats(e->pl, &ps);
  assert_u64_eq(ps.calls, 3);
  assert_u64_eq(ps.cancelled, 3);
  bw_ev_timer_free(waiting.timer);
  bw_ev_timer_free(attempting.timer);
}

static void count_cb(void *ud) {
  (*(int *)ud)++;
}

static void timer_helper_fires_once_and_stops(void **state) {
  env_t *e = *state;
  int fired = 0, i;
  bw_ev_timer_t *t = bw_ev_timer_new(e->drv, count_cb, &fired);
  assert_non_null(t);
  assert_null(bw_ev_timer_new(NULL, count_cb, &fired));
  assert_null(bw_ev_timer_new(e->drv, NULL, &fired));
  assert_status(bw_ev_timer_start(t, -1), BW_E_INVAL);
  assert_status(bw_ev_timer_start(NULL, 1), BW_E_INVAL);
  assert_false(bw_ev_timer_pending(t));
  assert_status(bw_ev_timer_start(t, 1), BW_OK);
  assert_true(bw_ev_timer_pending(t));
  for (i = 0; i < 1000 && fired == 0; i++)
    event_base_loop(e->base, EVLOOP_ONCE);
  assert_int_equal(fired, 1);
  assert_false(bw_ev_timer_pending(t));
  assert_status(bw_ev_timer_start(t, 60000), BW_OK);
  bw_ev_timer_stop(t);
  assert_false(bw_ev_timer_pending(t));
  assert_int_equal(event_base_loop(e->base, EVLOOP_NONBLOCK), 1); /* idle */
  assert_int_equal(fired, 1);
  bw_ev_timer_free(t);
  bw_ev_timer_free(NULL);
}

/* ---- handing a freed slot off ------------------------------------------ */

/* One slot (a bulkhead of 1) whose waiters poll only once a minute, and
 * calls whose attempts the test ends by hand: order[] logs which call
 * attempted, in turn. */
typedef struct held_s {
  int id;
  int *order, *n;
  bw_ev_call_t *call;
} held_t;

static void held_attempt(void *ud, bw_ev_call_t *call,
                         const bw_pipeline_call_t *pc) {
  held_t *h = ud;
  (void)pc;
  h->call = call;
  h->order[(*h->n)++] = h->id;
}

static bw_ev_t *one_slot_driver(env_t *e, bool handoff) {
  bw_ev_config_t ec;
  bw_bulkhead_config_t bc;
  bw_pipeline_config_t pc;
  bw_error_t err;
  bw_ev_config_init(&ec);
  assert_false(ec.handoff); /* the default polls */
  ec.handoff = handoff;
  bw_ev_t *d = bw_ev_new(e->base, &ec, &err);
  assert_non_null(d);
  bw_bulkhead_config_init(&bc);
  bc.max_concurrent = 1;
  bc.timeout_ms = 0;
  e->bulkhead = bw_bulkhead_new(&bc, &err);
  assert_non_null(e->bulkhead);
  bw_pipeline_config_init(&pc);
  assert_status(
      bw_pipeline_add_limit(&pc, bw_bulkhead_as_limit(e->bulkhead), 600000),
      BW_OK);
  pc.strategies[pc.count - 1].poll_ms = 60000;
  e->pl = bw_pipeline_new(&pc, &err);
  assert_non_null(e->pl);
  return d;
}

/* With handoff, ending an attempt gives its slot to the oldest waiter from
 * the loop, without waiting for the waiter's poll (a minute away here):
 * A, then B, then C, in the order they waited. Without it, the waiters
 * stay asleep until their poll. Conservation: every call attempts exactly
 * once, one at a time (the slot), and ends. */
static void handoff_gives_a_freed_slot_to_the_oldest_waiter(void **state) {
  env_t *e = *state;
  int order[4] = {0}, n = 0;
  held_t h[3];
  bw_ev_ops_t o;
  memset(&o, 0, sizeof(o));
  o.attempt = held_attempt;
  for (int handoff = 0; handoff < 2; handoff++) {
    bw_ev_t *d = one_slot_driver(e, handoff != 0);
    n = 0;
    for (int i = 0; i < 3; i++) {
      h[i] = (held_t){i + 1, order, &n, NULL};
      assert_status(
          bw_ev_call_start(d, e->pl, &o, &h[i], bw_deadline_none(), NULL),
          BW_OK);
    }
    assert_int_equal(n, 1); /* A holds the slot; B and C wait */
    assert_int_equal(order[0], 1);
    assert_status(
        bw_ev_call_report(h[0].call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE),
        BW_OK);
    for (int i = 0; i < 200 && n < 2; i++)
      event_base_loop(e->base, EVLOOP_NONBLOCK);
    if (!handoff) {
      /* 200 turns of the loop: B's poll is a minute away. */
      assert_int_equal(n, 1);
      assert_int_equal(bw_limit_in_flight(bw_bulkhead_as_limit(e->bulkhead)),
                       0);
    } else {
      assert_int_equal(n, 2);
      assert_int_equal(order[1], 2); /* B waited first */
      assert_status(
          bw_ev_call_report(h[1].call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE),
          BW_OK);
      for (int i = 0; i < 200 && n < 3; i++)
        event_base_loop(e->base, EVLOOP_NONBLOCK);
      assert_int_equal(n, 3);
      assert_int_equal(order[2], 3);
      assert_status(
          bw_ev_call_report(h[2].call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE),
          BW_OK);
      for (int i = 0; i < 200; i++)
        event_base_loop(e->base, EVLOOP_NONBLOCK);
      bw_ev_stats_t st;
      bw_ev_stats(d, &st);
      assert_u64_eq(st.calls_succeeded, 3);
      assert_u64_eq(st.calls_in_progress, 0);
      assert_u64_eq(st.attempts, 3);
    }
    bw_ev_free(d); /* cancels what is left */
    assert_int_equal(bw_limit_in_flight(bw_bulkhead_as_limit(e->bulkhead)), 0);
    bw_pipeline_free(e->pl);
    e->pl = NULL;
    bw_bulkhead_free(e->bulkhead);
    e->bulkhead = NULL;
  }
}

/* A waiter refused on its own poll keeps its place among the slot
 * waiters. A holds the slot; B waits first, through a pipeline that polls
 * every millisecond; C waits second and polls once a minute. B's polls are
 * refused while A holds the slot; when A ends, the slot still goes to B.
 * A queue that sent a refused poller to its tail would give it to C. */
static void a_waiter_refused_on_its_own_poll_keeps_its_place(void **state) {
  env_t *e = *state;
  int order[4] = {0}, n = 0;
  held_t h[3];
  bw_ev_ops_t o;
  bw_ev_stats_t st;
  bw_pipeline_config_t pc;
  bw_error_t err;
  memset(&o, 0, sizeof(o));
  o.attempt = held_attempt;
  bw_ev_t *d = one_slot_driver(e, true);
  bw_pipeline_config_init(&pc);
  assert_status(
      bw_pipeline_add_limit(&pc, bw_bulkhead_as_limit(e->bulkhead), 600000),
      BW_OK);
  pc.strategies[pc.count - 1].poll_ms = 1;
  bw_pipeline_t *fast = bw_pipeline_new(&pc, &err);
  assert_non_null(fast);
  for (int i = 0; i < 3; i++) {
    h[i] = (held_t){i + 1, order, &n, NULL};
    assert_status(bw_ev_call_start(d, i == 1 ? fast : e->pl, &o, &h[i],
                                   bw_deadline_none(), NULL),
                  BW_OK);
  }
  assert_int_equal(n, 1);
  bw_ev_stats(d, &st);
  assert_u64_eq(st.waits, 2); /* B's and C's first refusals */
  /* B polls again (1, 2, 4, 8, 8... ms) until it was refused twice more. */
  for (int i = 0; i < 100000 && st.waits < 4; i++) {
    event_base_loop(e->base, EVLOOP_ONCE);
    bw_ev_stats(d, &st);
  }
  assert_u64_eq(st.waits, 4);
  assert_int_equal(n, 1);
  assert_status(
      bw_ev_call_report(h[0].call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE), BW_OK);
  for (int i = 0; i < 200 && n < 2; i++)
    event_base_loop(e->base, EVLOOP_NONBLOCK);
  assert_int_equal(n, 2);
  assert_int_equal(order[1], 2); /* B, who waited first */
  bw_ev_free(d);                 /* cancels what is left */
  assert_int_equal(bw_limit_in_flight(bw_bulkhead_as_limit(e->bulkhead)), 0);
  bw_pipeline_free(fast);
}

/* A waiter woken and then cancelled before its turn passes the turn on.
 * A's end wakes B; in the same turn of the loop, before B is resumed, E
 * (another pipeline, no limit: its retry comes back at once) starts its
 * second attempt, and that attempt cancels B. C gets the slot. */
typedef struct canceller_s {
  int attempts;
  bw_ev_call_t *call, *victim;
} canceller_t;

static void cancelling_attempt(void *ud, bw_ev_call_t *call,
                               const bw_pipeline_call_t *pc) {
  canceller_t *k = ud;
  (void)pc;
  k->call = call;
  if (++k->attempts == 2) bw_ev_call_cancel(k->victim);
}

static void a_cancelled_waiter_passes_the_handoff_on(void **state) {
  env_t *e = *state;
  int order[4] = {0}, n = 0;
  held_t h[3];
  bw_ev_call_t *calls[3];
  bw_ev_ops_t o, ko;
  canceller_t k = {0, NULL, NULL};
  memset(&o, 0, sizeof(o));
  o.attempt = held_attempt;
  memset(&ko, 0, sizeof(ko));
  ko.attempt = cancelling_attempt;
  bw_ev_t *d = one_slot_driver(e, true);
  e->retry = bwt_constant_retry(2, 0, true, NULL); /* no backoff */
  bw_pipeline_t *other = make_pipeline(NULL, e->retry, 0);
  for (int i = 0; i < 3; i++) {
    h[i] = (held_t){i + 1, order, &n, NULL};
    assert_status(
        bw_ev_call_start(d, e->pl, &o, &h[i], bw_deadline_none(), &calls[i]),
        BW_OK);
  }
  k.victim = calls[1];
  assert_status(bw_ev_call_start(d, other, &ko, &k, bw_deadline_none(), NULL),
                BW_OK);
  assert_int_equal(k.attempts, 1);
  assert_status(
      bw_ev_call_report(h[0].call, BW_VERDICT_OK, BW_RETRY_AFTER_NONE), BW_OK);
  assert_status(
      bw_ev_call_report(k.call, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE),
      BW_OK);
  for (int i = 0; i < 200 && n < 2; i++)
    event_base_loop(e->base, EVLOOP_NONBLOCK);
  assert_int_equal(k.attempts, 2); /* B was cancelled from there */
  assert_int_equal(n, 2);
  assert_int_equal(order[1], 3); /* C, after the cancelled B */
  bw_ev_stats_t st;
  bw_ev_stats(d, &st);
  assert_u64_eq(st.calls_cancelled, 1);
  bw_ev_free(d);
  assert_int_equal(bw_limit_in_flight(bw_bulkhead_as_limit(e->bulkhead)), 0);
  bw_pipeline_free(other);
}

static void the_clock_is_the_configured_one(void **state) {
  env_t *e = *state;
  bw_ev_config_t cfg;
  bw_error_t err;
  bw_clock_t *manual = bw_clock_manual_new(BWT_T0_NS);
  bw_ev_t *d;
  bw_ev_config_init(&cfg);
  assert_ptr_equal(cfg.clock, bw_clock_monotonic());
  assert_ptr_equal(bw_ev_clock(e->drv), bw_clock_monotonic());
  assert_ptr_equal(bw_ev_base(e->drv), e->base);
  cfg.clock = manual;
  d = bw_ev_new(e->base, &cfg, &err);
  assert_non_null(d);
  assert_ptr_equal(bw_ev_clock(d), manual);
  bw_ev_free(d);
  bw_clock_free(manual);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_refuses_a_null_base_naming_it),
      cmocka_unit_test_setup_teardown(start_refuses_bad_arguments, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          sync_reports_retry_to_success_in_three_attempts, setup, teardown),
      cmocka_unit_test_setup_teardown(async_reports_exhaust_the_retry, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_hint_becomes_the_wait, setup, teardown),
      cmocka_unit_test_setup_teardown(driver_times_out_silent_attempts, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          open_breaker_makes_no_attempt_and_done_comes_from_the_loop, setup,
          teardown),
      cmocka_unit_test_setup_teardown(report_refuses_bad_verdicts_and_hints,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          handoff_gives_a_freed_slot_to_the_oldest_waiter, setup, teardown),
      cmocka_unit_test_setup_teardown(
          a_waiter_refused_on_its_own_poll_keeps_its_place, setup, teardown),
      cmocka_unit_test_setup_teardown(a_cancelled_waiter_passes_the_handoff_on,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          cancel_aborts_the_attempt_and_leaves_the_breaker_ignored, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          free_with_calls_in_flight_cancels_them_all, setup, teardown),
      cmocka_unit_test_setup_teardown(timer_helper_fires_once_and_stops, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(the_clock_is_the_configured_one, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

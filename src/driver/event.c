/* breakwater — the libevent driver (driver_event.h).
 *
 * Each logical call is one heap object with one evtimer. The timer does
 * three jobs, one at a time: the pipeline's WAIT, the driver's per-attempt
 * timeout (driver_timeout), and deferred work — a report, or the end of the
 * call — made active with event_active so that no user callback ever runs
 * inside another one (a report from inside `attempt`, a call refused at
 * bw_ev_call_start).
 *
 * With handoff, the calls waiting for a slot (bw_pipeline_slot_wait) also
 * sit in a FIFO. When an attempt of this driver ends, the oldest one is
 * woken (its timer made active); if it gets its slot, it wakes the next,
 * and so on until one is refused (it keeps its place at the head). One
 * woken call at a time keeps every resume in the loop, in order. */
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "breakwater/driver_event.h"
#include "breakwater/ext.h"

enum {
  BW__EV_ATTEMPT = 1,  /* an attempt is in progress; waiting for a report */
  BW__EV_REPORTED = 2, /* a report is stored; processed from the loop */
  BW__EV_WAIT = 3,     /* the pipeline's wait is armed */
  BW__EV_DONE = 4      /* the pipeline is DONE; done runs from the loop */
};

struct bw_ev_s {
  struct event_base *base;
  const bw_clock_t *clock;
  bw_ev_call_t *head, *tail; /* calls in progress, in start order */
  bool closing;
  bool handoff;
  TAILQ_HEAD(bw__ev_wq, bw_ev_call_s) wq; /* slot waiters, oldest first */
  bw_ev_call_t *woken; /* the waiter woken, not yet resumed */
  bw_ev_stats_t st;
};

struct bw_ev_call_s {
  bw_ev_t *drv;
  bw_ev_call_t *prev, *next;
  TAILQ_ENTRY(bw_ev_call_s) wq_link; /* in drv->wq while queued */
  bool queued;
  bw_ev_ops_t ops;
  void *ud;
  struct event *ev;
  int state;
  bw_verdict_t rep_v;
  int64_t rep_hint;
  bool rep_timed_out; /* reported with bw_ev_call_report_timeout */
  int64_t begin_ns, end_ns;
  uint32_t attempts, timeouts;
  int64_t waited_ms;
  bw_pipeline_call_t pc;
};

void bw_ev_config_init(bw_ev_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->clock = bw_clock_monotonic();
}

bw_ev_t *bw_ev_new(struct event_base *base, const bw_ev_config_t *cfg,
                   bw_error_t *err) {
  bw_ev_t *drv;
  if (base == NULL) {
    bw_error_set(err, BW_E_INVAL, "base", "base must not be NULL");
    return NULL;
  }
  drv = bw_calloc(1, sizeof(*drv));
  if (drv == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory allocating the driver");
    return NULL;
  }
  drv->base = base;
  drv->clock =
      (cfg != NULL && cfg->clock != NULL) ? cfg->clock : bw_clock_monotonic();
  drv->handoff = cfg != NULL && cfg->handoff;
  TAILQ_INIT(&drv->wq);
  bw_error_clear(err);
  return drv;
}

struct event_base *bw_ev_base(const bw_ev_t *drv) {
  return drv != NULL ? drv->base : NULL;
}

const bw_clock_t *bw_ev_clock(const bw_ev_t *drv) {
  return drv != NULL ? drv->clock : NULL;
}

static void bw__ev_arm(bw_ev_call_t *c, int64_t ms) {
  struct timeval tv;
  if (ms < 0) ms = 0;
  tv.tv_sec = (time_t)(ms / 1000);
  tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
  /* The base caches its time per loop iteration; without this, a timer
   * armed late in an iteration would fire early by the time already spent. */
  event_base_update_cache_time(c->drv->base);
  evtimer_add(c->ev, &tv);
}

/* Defers work to the loop: the timer event made active now. */
static void bw__ev_defer(bw_ev_call_t *c) {
  event_del(c->ev);
  event_active(c->ev, EV_TIMEOUT, 1);
}

static void bw__ev_wq_unlink(bw_ev_call_t *c) {
  TAILQ_REMOVE(&c->drv->wq, c, wq_link);
  c->queued = false;
}

static void bw__ev_wq_push(bw_ev_call_t *c) {
  TAILQ_INSERT_TAIL(&c->drv->wq, c, wq_link);
  c->queued = true;
}

/* A slot may have freed: the oldest slot waiter asks again, from the loop.
 * Nothing while a woken one has not asked yet (it passes the turn on). */
static void bw__ev_wake(bw_ev_t *drv) {
  if (!drv->handoff || drv->closing || drv->woken != NULL ||
      TAILQ_EMPTY(&drv->wq))
    return;
  drv->woken = TAILQ_FIRST(&drv->wq);
  bw__ev_defer(drv->woken);
}

static void bw__ev_unlink(bw_ev_call_t *c) {
  bw_ev_t *drv = c->drv;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    drv->head = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  else
    drv->tail = c->prev;
  c->prev = c->next = NULL;
}

/* Ends a call: unlinks it, counts it, runs done, frees it. Nothing touches
 * the driver after `done` returns (it may free the driver). */
static void bw__ev_finish(bw_ev_call_t *c, bool cancelled) {
  bw_ev_t *drv = c->drv;
  bw_ev_result_t res;
  memset(&res, 0, sizeof(res));
  res.failure = c->pc.failure;
  res.cancelled = cancelled;
  res.last_verdict = c->pc.last_verdict;
  res.attempts = c->attempts;
  res.timeouts = c->timeouts;
  res.waited_ms = c->waited_ms;
  res.latency_ns = c->end_ns - c->begin_ns;
  res.call = &c->pc;
  event_del(c->ev);
  bw__ev_unlink(c);
  if (c->queued) bw__ev_wq_unlink(c);
  if (drv->woken == c) { /* cancelled before its turn: the next one's */
    drv->woken = NULL;
    bw__ev_wake(drv);
  }
  if (cancelled)
    drv->st.calls_cancelled++;
  else if (c->pc.failure == BW_FAILURE_NONE)
    drv->st.calls_succeeded++;
  else
    drv->st.calls_failed++;
  drv->st.calls_in_progress--;
  if (c->ops.done != NULL) c->ops.done(c->ud, &res);
  event_free(c->ev);
  bw_free(c);
}

/* Acts on the pipeline's step. A slot wait joins the slot waiters at the
 * tail; a waiter that asked again and must wait again is still queued, in
 * its place (bw__ev_on_timer). */
static void bw__ev_run(bw_ev_call_t *c, int step) {
  bw_ev_t *drv = c->drv;
  switch (step) {
  case BW_STEP_ATTEMPT:
    c->state = BW__EV_ATTEMPT;
    c->attempts++;
    drv->st.attempts++;
    if (c->ops.driver_timeout && c->pc.attempt_timeout_ms >= 0)
      bw__ev_arm(c, c->pc.attempt_timeout_ms);
    c->ops.attempt(c->ud, c, &c->pc);
    return;
  case BW_STEP_WAIT:
    c->state = BW__EV_WAIT;
    drv->st.waits++;
    c->waited_ms += c->pc.delay_ms;
    bw__ev_arm(c, c->pc.delay_ms);
    if (drv->handoff && !c->queued && bw_pipeline_slot_wait(&c->pc) != NULL)
      bw__ev_wq_push(c);
    return;
  default:
    /* DONE, or a contract breach (a negative code): either way the call is
     * over; a breach leaves whatever it entered. */
    if (step != BW_STEP_DONE) bw_pipeline_cancel(&c->pc);
    c->state = BW__EV_DONE;
    c->end_ns = bw_clock_now(drv->clock);
    bw__ev_defer(c);
    return;
  }
}

static void bw__ev_on_timer(evutil_socket_t fd, short what, void *arg) {
  bw_ev_call_t *c = arg;
  bw_ev_t *drv;
  int64_t now;
  int step;
  bool woken, waits;
  (void)fd;
  (void)what;
  switch (c->state) {
  case BW__EV_ATTEMPT: /* the driver's attempt timeout */
    c->timeouts++;
    c->drv->st.attempt_timeouts++;
    c->state = 0; /* a report from inside abort is refused */
    if (c->ops.abort != NULL) c->ops.abort(c->ud, c);
    now = bw_clock_now(c->drv->clock);
    step = bw_pipeline_report_timeout(&c->pc, now);
    bw__ev_wake(c->drv); /* the attempt's slot is free */
    bw__ev_run(c, step);
    return;
  case BW__EV_REPORTED:
    now = bw_clock_now(c->drv->clock);
    step = c->rep_timed_out
               ? bw_pipeline_report_timeout(&c->pc, now)
               : bw_pipeline_report(&c->pc, c->rep_v, c->rep_hint, now);
    bw__ev_wake(c->drv); /* the attempt's slot is free */
    bw__ev_run(c, step);
    return;
  case BW__EV_WAIT:
    drv = c->drv;
    woken = drv->woken == c;
    if (woken) drv->woken = NULL;
    now = bw_clock_now(drv->clock);
    step = bw_pipeline_resume(&c->pc, now);
    /* Refused a slot again (woken, or on its own timer): it keeps its
     * place among the slot waiters, which stay in the order their waits
     * began, and the next attempt's end wakes the head. Anything else
     * leaves the queue; woken and admitted (or ended), the next waiter
     * may find a slot too. */
    waits = step == BW_STEP_WAIT && bw_pipeline_slot_wait(&c->pc) != NULL;
    if (c->queued && !waits) bw__ev_wq_unlink(c);
    if (woken && step != BW_STEP_WAIT) bw__ev_wake(drv);
    bw__ev_run(c, step);
    return;
  case BW__EV_DONE:
    bw__ev_finish(c, false);
    return;
  default:
    return;
  }
}

int bw_ev_call_start(bw_ev_t *drv, const bw_pipeline_t *pl,
                     const bw_ev_ops_t *ops, void *userdata,
                     bw_deadline_t outer, bw_ev_call_t **out) {
  bw_ev_call_t *c;
  int step;
  if (out != NULL) *out = NULL;
  if (drv == NULL || pl == NULL || ops == NULL || ops->attempt == NULL ||
      (ops->driver_timeout && ops->abort == NULL) || drv->closing)
    return BW_E_INVAL;
  c = bw_calloc(1, sizeof(*c));
  if (c == NULL) return BW_E_NOMEM;
  c->ev = event_new(drv->base, -1, 0, bw__ev_on_timer, c);
  if (c->ev == NULL) {
    bw_free(c);
    return BW_E_NOMEM;
  }
  c->drv = drv;
  c->ops = *ops;
  c->ud = userdata;
  c->prev = drv->tail;
  if (drv->tail != NULL)
    drv->tail->next = c;
  else
    drv->head = c;
  drv->tail = c;
  drv->st.calls_started++;
  drv->st.calls_in_progress++;
  if (out != NULL) *out = c;
  c->begin_ns = bw_clock_now(drv->clock);
  step = bw_pipeline_begin_at(pl, &c->pc, outer, c->begin_ns);
  bw__ev_run(c, step);
  return BW_OK;
}

int bw_ev_call_report(bw_ev_call_t *c, bw_verdict_t v, int64_t retry_after_ms) {
  if (c == NULL || c->state != BW__EV_ATTEMPT ||
      (unsigned)v > (unsigned)BW_VERDICT_REJECTED ||
      retry_after_ms < BW_RETRY_AFTER_NEVER)
    return BW_E_INVAL;
  c->state = BW__EV_REPORTED;
  c->rep_v = v;
  c->rep_hint = retry_after_ms;
  c->rep_timed_out = false;
  bw__ev_defer(c); /* also disarms the attempt timeout */
  return BW_OK;
}

int bw_ev_call_report_timeout(bw_ev_call_t *c) {
  int rc = bw_ev_call_report(c, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE);
  if (rc == BW_OK) c->rep_timed_out = true;
  return rc;
}

void bw_ev_call_cancel(bw_ev_call_t *c) {
  bool cancelled = true;
  if (c == NULL) return;
  event_del(c->ev);
  if (c->state == BW__EV_DONE) {
    cancelled = false; /* it had ended: deliver what it was */
  } else {
    int was = c->state;
    c->state = 0; /* a report from inside abort is refused */
    if (was == BW__EV_ATTEMPT && c->ops.abort != NULL) c->ops.abort(c->ud, c);
    bw_pipeline_cancel(&c->pc);
    c->end_ns = bw_clock_now(c->drv->clock);
    /* An attempt out or reported held a slot, now free. */
    if (was == BW__EV_ATTEMPT || was == BW__EV_REPORTED) bw__ev_wake(c->drv);
  }
  bw__ev_finish(c, cancelled);
}

void bw_ev_free(bw_ev_t *drv) {
  if (drv == NULL) return;
  drv->closing = true;
  while (drv->head != NULL)
    bw_ev_call_cancel(drv->head);
  bw_free(drv);
}

const bw_pipeline_call_t *bw_ev_call_pipeline(const bw_ev_call_t *c) {
  return c != NULL ? &c->pc : NULL;
}

const char *bw_ev_call_attach_key(bw_ev_call_t *c, int64_t unix_ms) {
  return c != NULL ? bw_pipeline_attach_key(&c->pc, unix_ms) : NULL;
}

void *bw_ev_call_userdata(const bw_ev_call_t *c) {
  return c != NULL ? c->ud : NULL;
}

void bw_ev_stats(const bw_ev_t *drv, bw_ev_stats_t *out) {
  if (drv == NULL || out == NULL) return;
  *out = drv->st;
}

/* ---- a plain timer ------------------------------------------------------ */

struct bw_ev_timer_s {
  struct event *ev;
  bw_ev_timer_fn fn;
  void *ud;
};

static void bw__ev_timer_cb(evutil_socket_t fd, short what, void *arg) {
  bw_ev_timer_t *t = arg;
  (void)fd;
  (void)what;
  t->fn(t->ud);
}

bw_ev_timer_t *bw_ev_timer_new(bw_ev_t *drv, bw_ev_timer_fn fn,
                               void *userdata) {
  bw_ev_timer_t *t;
  if (drv == NULL || fn == NULL) return NULL;
  t = bw_calloc(1, sizeof(*t));
  if (t == NULL) return NULL;
  t->ev = evtimer_new(drv->base, bw__ev_timer_cb, t);
  if (t->ev == NULL) {
    bw_free(t);
    return NULL;
  }
  t->fn = fn;
  t->ud = userdata;
  return t;
}

int bw_ev_timer_start(bw_ev_timer_t *t, int64_t ms) {
  struct timeval tv;
  if (t == NULL || ms < 0) return BW_E_INVAL;
  tv.tv_sec = (time_t)(ms / 1000);
  tv.tv_usec = (suseconds_t)((ms % 1000) * 1000);
  event_base_update_cache_time(event_get_base(t->ev));
  return evtimer_add(t->ev, &tv) == 0 ? BW_OK : BW_E_IO;
}

void bw_ev_timer_stop(bw_ev_timer_t *t) {
  if (t != NULL) evtimer_del(t->ev);
}

bool bw_ev_timer_pending(const bw_ev_timer_t *t) {
  return t != NULL && evtimer_pending(t->ev, NULL) != 0;
}

void bw_ev_timer_free(bw_ev_timer_t *t) {
  if (t == NULL) return;
  event_free(t->ev);
  bw_free(t);
}

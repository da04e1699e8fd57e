/* The client model: N logical requests arriving in a pattern, each driven by
 * a per-request policy through attempts against the partner model, on the
 * scheduler's virtual clock.
 *
 * Events per attempt: one when the partner answers in time (the answer), two
 * when it does not (the client's timeout, and later the partner's release of
 * the abandoned request: the Polly lab's partner keeps working on a request the
 * client gave up on). The partner decides the latency when the request
 * arrives, so the client knows at send time which of the two happens and
 * never has to cancel an attempt's timer. A slot wait's timer is cancelled
 * when an attempt's end wakes the waiter first (the handoff policy).
 * Arrivals are chained (each arrival schedules the next), so the heap holds
 * about one event per request in flight, not one per request. Nothing here
 * allocates after bw_sim_client_new. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "breakwater/sim.h"
#include "sim_internal.h"
#include "breakwater/ext.h"

typedef struct sim_req_s sim_req_t;

struct sim_req_s {
  bw_sim_client_t *c;
  uint32_t index;
  uint32_t attempt; /* attempts sent so far */
  int64_t arrival_ns;
  int64_t sent_ns;
  int64_t retry_after_ms;
  int32_t status; /* of the last attempt; 0 = timed out */
  bool timed_out;
  bool done;
  /* A slot wait (a WAIT with a wake key): its timer and its place in the
   * client's queue of slot waiters. */
  bool queued;
  bw_sim_event_id_t wait_id;
  TAILQ_ENTRY(sim_req_s) wq_link; /* in c->wq while queued */
};

struct bw_sim_client_s {
  bw_sim_t *sim;
  bw_sim_partner_t *partner;
  bw_sim_client_config_t cfg;
  bw_sim_policy_t policy;
  sim_req_t *reqs;
  unsigned char *states;
  size_t stride;
  int64_t *lat;
  uint64_t nlat;
  bw_rand_t rng;
  uint32_t next_arrival;
  bool started;
  int error;
  int64_t start_ns;
  int64_t last_end_ns;
  uint64_t fired_at_start;
  bw_sim_results_t r; /* counters (percentiles filled by results) */
  TAILQ_HEAD(sim_wq, sim_req_s) wq; /* the slot waiters, oldest first */
};

#define MAX_STATE_SIZE 65536u
#define MAX_RAMP_MS (INT64_C(86400000) * 365)
#define MAX_TIMEOUT_MS INT64_C(86400000)

const char *bw_sim_arrival_name(bw_sim_arrival_t a) {
  switch (a) {
  case BW_SIM_ARRIVAL_BURST:
    return "burst";
  case BW_SIM_ARRIVAL_RAMP:
    return "ramp";
  case BW_SIM_ARRIVAL_POISSON:
    return "poisson";
  }
  return "unknown";
}

const char *bw_sim_reject_name(bw_sim_reject_t k) {
  static const char *const names[BW_SIM_REJECT__COUNT] = {
      "breaker", "limiter", "bulkhead", "ratelimit", "budget", "other"};
  return (unsigned)k < BW_SIM_REJECT__COUNT ? names[k] : "unknown";
}

/* ---- built-in policies --------------------------------------------------
 */

static bw_sim_decision_t naive_after(void *data, bw_sim_call_t *call,
                                     int64_t now_ns) {
  bw_sim_decision_t d = {BW_SIM_ACT_STOP, 0, BW_SIM_REJECT_OTHER, 0, NULL};
  (void)now_ns;
  if (call->attempt < (uint32_t)(uintptr_t)data) d.action = BW_SIM_ACT_WAIT;
  return d;
}

int bw_sim_policy_naive(bw_sim_policy_t *out, uint32_t max_attempts) {
  if (out == NULL || max_attempts == 0) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  out->name = "naive";
  out->data = (void *)(uintptr_t)max_attempts;
  out->after = naive_after;
  return BW_OK;
}

static void retry_begin(void *data, bw_sim_call_t *call, int64_t now_ns) {
  bw_retry_begin(call->state, data, now_ns);
}

static bw_sim_decision_t retry_after(void *data, bw_sim_call_t *call,
                                     int64_t now_ns) {
  bw_sim_decision_t d = {BW_SIM_ACT_STOP, 0, BW_SIM_REJECT_OTHER, 0, NULL};
  bw_verdict_t v;
  int64_t delay_ms = 0;
  int rc;
  (void)data;
  if (call->timed_out)
    v = BW_VERDICT_TRANSIENT;
  else if (call->status >= 200 && call->status < 300)
    v = BW_VERDICT_OK;
  else if (call->status == 429 || call->status >= 500)
    v = BW_VERDICT_TRANSIENT;
  else
    v = BW_VERDICT_PERMANENT;
  rc = bw_retry_next(
      call->state, v,
      call->retry_after_ms >= 0 ? call->retry_after_ms : BW_RETRY_AFTER_NONE,
      now_ns, &delay_ms);
  if (rc == BW_RETRY) {
    d.action = BW_SIM_ACT_WAIT;
    d.delay_ms = delay_ms;
  } else if (rc == BW_RETRY_GIVE_UP) {
    bw_giveup_t g = bw_retry_reason(call->state);
    if (g != BW_GIVEUP_EXHAUSTED && g != BW_GIVEUP_PERMANENT)
      d.action = BW_SIM_ACT_GIVE_UP;
  } else if (rc != BW_RETRY_DONE) {
    d.action = BW_SIM_ACT_GIVE_UP;
  }
  return d;
}

int bw_sim_policy_retry(bw_sim_policy_t *out, const bw_retry_policy_t *retry) {
  if (out == NULL || retry == NULL) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  out->name = "retry";
  /* The hooks only read the policy (bw_retry_begin takes it const). */
  out->data = (void *)(uintptr_t)retry;
  out->state_size = sizeof(bw_retry_t);
  out->begin = retry_begin;
  out->after = retry_after;
  return BW_OK;
}

/* ---- configuration -------------------------------------------------------
 */

void bw_sim_client_config_init(bw_sim_client_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->requests = 800;
  cfg->arrival = BW_SIM_ARRIVAL_BURST;
  cfg->ramp_ms = 10000;
  cfg->rate_per_s = 400.0;
  cfg->timeout_ms = 2000;
  cfg->seed = 4;
  cfg->policy = NULL;
}

int bw_sim_client_config_validate(const bw_sim_client_config_t *cfg,
                                  bw_error_t *err) {
  bw_error_clear(err);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (cfg->requests < 1 || cfg->requests > BW_SIM_MAX_REQUESTS)
    return bw_error_set(err, BW_E_INVAL, "requests",
                        "requests must be in [1, %u] (got %u)",
                        BW_SIM_MAX_REQUESTS, (unsigned)cfg->requests);
  if ((unsigned)cfg->arrival > BW_SIM_ARRIVAL_POISSON)
    return bw_error_set(err, BW_E_INVAL, "arrival",
                        "arrival must be BURST, RAMP or POISSON (got %d)",
                        (int)cfg->arrival);
  if (cfg->arrival == BW_SIM_ARRIVAL_RAMP &&
      (cfg->ramp_ms < 1 || cfg->ramp_ms > MAX_RAMP_MS))
    return bw_error_set(err, BW_E_INVAL, "ramp_ms",
                        "ramp_ms must be in [1, %lld] for a ramp (got %lld)",
                        (long long)MAX_RAMP_MS, (long long)cfg->ramp_ms);
  if (cfg->arrival == BW_SIM_ARRIVAL_POISSON &&
      !(cfg->rate_per_s >= 1e-6 && cfg->rate_per_s <= 1e9))
    return bw_error_set(err, BW_E_INVAL, "rate_per_s",
                        "rate_per_s must be in [1e-6, 1e9] for Poisson "
                        "arrivals (got %g)",
                        cfg->rate_per_s);
  if (cfg->timeout_ms < 1 || cfg->timeout_ms > MAX_TIMEOUT_MS)
    return bw_error_set(err, BW_E_INVAL, "timeout_ms",
                        "timeout_ms must be in [1, %lld] (got %lld)",
                        (long long)MAX_TIMEOUT_MS, (long long)cfg->timeout_ms);
  if (cfg->policy == NULL)
    return bw_error_set(err, BW_E_INVAL, "policy", "policy must not be NULL");
  if (cfg->policy->after == NULL)
    return bw_error_set(err, BW_E_INVAL, "policy.after",
                        "policy.after must not be NULL");
  if (cfg->policy->state_size > MAX_STATE_SIZE)
    return bw_error_set(err, BW_E_INVAL, "policy.state_size",
                        "policy.state_size must be <= %u (got %zu)",
                        MAX_STATE_SIZE, cfg->policy->state_size);
  return BW_OK;
}

bw_sim_client_t *bw_sim_client_new(bw_sim_t *sim, bw_sim_partner_t *partner,
                                   const bw_sim_client_config_t *cfg,
                                   bw_error_t *err) {
  bw_sim_client_t *c;
  size_t n;
  if (sim == NULL || partner == NULL) {
    bw_error_set(err, BW_E_INVAL, sim == NULL ? "sim" : "partner",
                 "%s must not be NULL", sim == NULL ? "sim" : "partner");
    return NULL;
  }
  if (bw_sim_client_config_validate(cfg, err) != BW_OK) return NULL;
  n = cfg->requests;
  c = bw_calloc(1, sizeof(*c));
  if (c == NULL) goto nomem;
  c->sim = sim;
  c->partner = partner;
  TAILQ_INIT(&c->wq);
  c->cfg = *cfg;
  c->policy = *cfg->policy;
  c->cfg.policy = &c->policy;
  c->reqs = bw_calloc(n, sizeof(sim_req_t));
  c->lat = bw_malloc(n * sizeof(int64_t));
  if (c->reqs == NULL || c->lat == NULL) goto nomem;
  c->stride = (c->policy.state_size + 15u) & ~(size_t)15u;
  if (c->stride > 0) {
    c->states = bw_calloc(n, c->stride);
    if (c->states == NULL) goto nomem;
  }
  bw_rand_seed(&c->rng, cfg->seed);
  return c;
nomem:
  bw_sim_client_free(c);
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the client");
  return NULL;
}

void bw_sim_client_free(bw_sim_client_t *c) {
  if (c == NULL) return;
  bw_free(c->reqs);
  bw_free(c->lat);
  bw_free(c->states);
  bw_free(c);
}

/* ---- the request lifecycle -----------------------------------------------
 */

static void req_ask(bw_sim_t *sim, void *user);
static void ask(sim_req_t *r);

/* A failure inside an event: remember the first and stop the run. */
static void client_fail(bw_sim_client_t *c, int rc) {
  if (c->error == BW_OK) c->error = rc;
  bw_sim_stop(c->sim);
}

static void req_call(const sim_req_t *r, bw_sim_call_t *call) {
  const bw_sim_client_t *c = r->c;
  memset(call, 0, sizeof(*call));
  call->request = r->index;
  call->arrival_ns = r->arrival_ns;
  call->state =
      c->states != NULL ? c->states + (size_t)r->index * c->stride : NULL;
  call->retry_after_ms = -1;
}

typedef enum {
  END_SUCCESS,
  END_429,
  END_TIMEOUT,
  END_STATUS,
  END_REJECTED,
  END_GAVE_UP
} req_end_t;

static void req_finish(sim_req_t *r, req_end_t how, bw_sim_reject_t kind) {
  bw_sim_client_t *c = r->c;
  int64_t now = bw_sim_now_ns(c->sim);
  r->done = true;
  c->lat[c->nlat++] = now - r->arrival_ns;
  c->last_end_ns = now;
  c->r.completed++;
  switch (how) {
  case END_SUCCESS:
    c->r.successes++;
    break;
  case END_429:
    c->r.failed_429++;
    break;
  case END_TIMEOUT:
    c->r.failed_timeout++;
    break;
  case END_STATUS:
    c->r.failed_status++;
    break;
  case END_REJECTED:
    c->r.rejected++;
    c->r.rejected_by[kind]++;
    break;
  case END_GAVE_UP:
    c->r.gave_up++;
    break;
  }
}

/* Validates a REJECT's kind and a WAIT's delay; false on a bad decision
 * (the run stops with BW_E_INVAL). */
static bool decision_ok(bw_sim_client_t *c, const bw_sim_decision_t *d) {
  bool ok = true;
  if (d->action == BW_SIM_ACT_WAIT)
    ok = d->delay_ms >= 0 && d->delay_ms <= MAX_TIMEOUT_MS * 365;
  else if (d->action == BW_SIM_ACT_REJECT)
    ok = (unsigned)d->reject < BW_SIM_REJECT__COUNT;
  else
    ok = (unsigned)d->action <= BW_SIM_ACT_GIVE_UP;
  if (!ok) client_fail(c, BW_E_INVAL);
  return ok;
}

static void wq_unlink(bw_sim_client_t *c, sim_req_t *r) {
  TAILQ_REMOVE(&c->wq, r, wq_link);
  r->queued = false;
}

static void wq_push(bw_sim_client_t *c, sim_req_t *r) {
  TAILQ_INSERT_TAIL(&c->wq, r, wq_link);
  r->queued = true;
}

/* A slot wait joins the queue at its tail; a waiter that asks again (its
 * own timer, or woken) and must wait again keeps its place, so the queue
 * stays in the order the waits began. */
static void req_wait(sim_req_t *r, int64_t delay_ms, const void *wake_key) {
  bw_sim_client_t *c = r->c;
  int rc;
  rc = bw_sim_schedule_in(c->sim, delay_ms * BW_NS_PER_MS, req_ask, r,
                          wake_key != NULL ? &r->wait_id : NULL);
  if (rc == BW_OK && wake_key != NULL && !r->queued) wq_push(c, r);
  if (rc != BW_OK) client_fail(c, rc);
}

/* An attempt ended, so a slot may have freed (or the limit grown): the
 * slot waiters ask again now, oldest first, until one must wait again. */
static void client_wake(bw_sim_client_t *c) {
  while (!TAILQ_EMPTY(&c->wq) && c->error == BW_OK) {
    sim_req_t *r = TAILQ_FIRST(&c->wq);
    (void)bw_sim_cancel(c->sim, r->wait_id);
    ask(r);
    if (r->queued) break;
  }
}

static void partner_release(bw_sim_t *sim, void *user) {
  (void)sim;
  bw_sim_partner_done(user);
}

static void req_after(sim_req_t *r) {
  bw_sim_client_t *c = r->c;
  int64_t now = bw_sim_now_ns(c->sim);
  bw_sim_call_t call;
  bw_sim_decision_t d;
  bool ok2xx = !r->timed_out && r->status >= 200 && r->status < 300;
  if (r->timed_out)
    c->r.attempts_timeout++;
  else if (r->status == 200)
    c->r.attempts_200++;
  else if (r->status == 429)
    c->r.attempts_429++;
  else
    c->r.attempts_other++;
  req_call(r, &call);
  call.attempt = r->attempt;
  call.sent_ns = r->sent_ns;
  call.status = r->timed_out ? 0 : r->status;
  call.timed_out = r->timed_out;
  call.retry_after_ms = r->retry_after_ms;
  d = c->policy.after(c->policy.data, &call, now);
  if (ok2xx) {
    req_finish(r, END_SUCCESS, BW_SIM_REJECT_OTHER);
    client_wake(c);
    return;
  }
  if (!decision_ok(c, &d)) return;
  switch (d.action) {
  case BW_SIM_ACT_GO:
    req_wait(r, 0, NULL);
    break;
  case BW_SIM_ACT_WAIT:
    req_wait(r, d.delay_ms, d.wake_key);
    break;
  case BW_SIM_ACT_STOP:
    req_finish(r,
               r->timed_out       ? END_TIMEOUT
               : r->status == 429 ? END_429
                                  : END_STATUS,
               BW_SIM_REJECT_OTHER);
    break;
  case BW_SIM_ACT_REJECT:
    req_finish(r, END_REJECTED, d.reject);
    break;
  case BW_SIM_ACT_GIVE_UP:
    req_finish(r, END_GAVE_UP, BW_SIM_REJECT_OTHER);
    break;
  }
  client_wake(c);
}

static void req_answer(bw_sim_t *sim, void *user) {
  sim_req_t *r = user;
  (void)sim;
  bw_sim_partner_done(r->c->partner);
  req_after(r);
}

static void req_timeout(bw_sim_t *sim, void *user) {
  sim_req_t *r = user;
  (void)sim;
  r->timed_out = true;
  r->status = 0;
  r->retry_after_ms = -1;
  req_after(r);
}

static void req_send(sim_req_t *r, int64_t timeout_ms) {
  bw_sim_client_t *c = r->c;
  int64_t now = bw_sim_now_ns(c->sim);
  bw_sim_reply_t rep;
  int rc;
  if (timeout_ms <= 0 || timeout_ms > c->cfg.timeout_ms)
    timeout_ms = c->cfg.timeout_ms;
  r->attempt++;
  r->sent_ns = now;
  r->timed_out = false;
  c->r.network_calls++;
  rep = bw_sim_partner_admit(c->partner, now);
  /* An answer exactly at the timeout is in time (the timer has not fired). */
  if (rep.latency_ms <= timeout_ms) {
    r->status = rep.status;
    r->retry_after_ms = rep.retry_after_ms;
    rc = bw_sim_schedule_in(c->sim, rep.latency_ms * BW_NS_PER_MS, req_answer,
                            r, NULL);
  } else {
    rc = bw_sim_schedule_in(c->sim, timeout_ms * BW_NS_PER_MS, req_timeout, r,
                            NULL);
    if (rc == BW_OK)
      rc = bw_sim_schedule_in(c->sim, rep.latency_ms * BW_NS_PER_MS,
                              partner_release, c->partner, NULL);
  }
  if (rc != BW_OK) client_fail(c, rc);
}

/* Before an attempt: the policy's `before` hook decides. A slot waiter
 * leaves the queue unless it must wait for a slot again. */
static void ask(sim_req_t *r) {
  bw_sim_client_t *c = r->c;
  bw_sim_call_t call;
  bw_sim_decision_t d;
  if (c->policy.before == NULL) {
    req_send(r, 0);
    return;
  }
  req_call(r, &call);
  call.attempt = r->attempt + 1;
  d = c->policy.before(c->policy.data, &call, bw_sim_now_ns(c->sim));
  if (r->queued && !(d.action == BW_SIM_ACT_WAIT && d.wake_key != NULL))
    wq_unlink(c, r);
  if (!decision_ok(c, &d)) return;
  switch (d.action) {
  case BW_SIM_ACT_GO:
    req_send(r, d.timeout_ms);
    break;
  case BW_SIM_ACT_WAIT:
    req_wait(r, d.delay_ms, d.wake_key);
    break;
  case BW_SIM_ACT_REJECT:
    req_finish(r, END_REJECTED, d.reject);
    break;
  case BW_SIM_ACT_STOP: /* nothing to stop on before an attempt */
  case BW_SIM_ACT_GIVE_UP:
    req_finish(r, END_GAVE_UP, BW_SIM_REJECT_OTHER);
    break;
  }
}

static void req_ask(bw_sim_t *sim, void *user) {
  (void)sim;
  ask(user);
}

/* The time of arrival i (i >= 1) given arrival i-1 at prev. */
static int64_t next_arrival_ns(bw_sim_client_t *c, uint32_t i, int64_t prev) {
  switch (c->cfg.arrival) {
  case BW_SIM_ARRIVAL_RAMP: {
    int64_t span = c->cfg.ramp_ms * BW_NS_PER_MS;
    int64_t n = (int64_t)c->cfg.requests;
    /* floor(span * i / n) without overflow: span / n * i + (span % n) * i
     * / n (the remainder term is < n * i <= 2.5e15). */
    return c->start_ns + span / n * i + (span % n) * i / n;
  }
  case BW_SIM_ARRIVAL_POISSON: {
    /* 1 - u is in (0, 1]: the log is finite. */
    double gap_s = -log(1.0 - bw_rand_double(&c->rng)) / c->cfg.rate_per_s;
    return prev + (int64_t)llround(gap_s * 1e9);
  }
  case BW_SIM_ARRIVAL_BURST:
    break;
  }
  return prev;
}

static void client_arrival(bw_sim_t *sim, void *user) {
  bw_sim_client_t *c = user;
  uint32_t i = c->next_arrival++;
  int64_t now = bw_sim_now_ns(sim);
  sim_req_t *r = &c->reqs[i];
  r->c = c;
  r->index = i;
  r->arrival_ns = now;
  r->retry_after_ms = -1;
  c->r.requests++;
  if (c->policy.begin != NULL) {
    bw_sim_call_t call;
    req_call(r, &call);
    call.attempt = 1;
    c->policy.begin(c->policy.data, &call, now);
  }
  req_ask(sim, r);
  if (c->next_arrival < c->cfg.requests) {
    int rc = bw_sim_schedule_at(sim, next_arrival_ns(c, c->next_arrival, now),
                                client_arrival, c, NULL);
    if (rc != BW_OK) client_fail(c, rc);
  }
}

int bw_sim_client_start(bw_sim_client_t *c) {
  int rc;
  if (c == NULL || c->started) return BW_E_INVAL;
  c->start_ns = bw_sim_now_ns(c->sim);
  c->fired_at_start = bw_sim_fired(c->sim);
  rc = bw_sim_schedule_at(c->sim, c->start_ns, client_arrival, c, NULL);
  if (rc == BW_OK) c->started = true;
  return rc;
}

int bw_sim_client_error(const bw_sim_client_t *c) {
  return c != NULL ? c->error : BW_E_INVAL;
}

int bw_sim_client_results(bw_sim_client_t *c, bw_sim_results_t *out) {
  bw_sim_partner_stats_t ps;
  bw__sim_latency_t lat;
  if (c == NULL || out == NULL) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  *out = c->r;
  bw_sim_partner_stats(c->partner, &ps);
  out->partner_received = ps.received;
  out->partner_max_in_flight = ps.max_in_flight;
  out->completion_ns = c->r.completed > 0 ? c->last_end_ns - c->start_ns : 0;
  lat = bw__sim_latency_summary(c->lat, c->nlat);
  out->latency_p50_ns = lat.p50_ns;
  out->latency_p95_ns = lat.p95_ns;
  out->latency_p99_ns = lat.p99_ns;
  out->latency_max_ns = lat.max_ns;
  out->events = c->started ? bw_sim_fired(c->sim) - c->fired_at_start : 0;
  return BW_OK;
}

int bw_sim_client_counters(const bw_sim_client_t *c, bw_sim_results_t *out) {
  bw_sim_partner_stats_t ps;
  if (c == NULL || out == NULL) return BW_E_INVAL;
  *out = c->r;
  bw_sim_partner_stats(c->partner, &ps);
  out->partner_received = ps.received;
  out->partner_max_in_flight = ps.max_in_flight;
  out->completion_ns = c->r.completed > 0 ? c->last_end_ns - c->start_ns : 0;
  out->events = c->started ? bw_sim_fired(c->sim) - c->fired_at_start : 0;
  return BW_OK;
}

int bw_sim_run_scenario(const bw_sim_partner_config_t *partner,
                        const bw_sim_client_config_t *client,
                        bw_sim_results_t *out, bw_error_t *err) {
  bw_sim_t *sim = NULL;
  bw_sim_partner_t *p = NULL;
  bw_sim_client_t *c = NULL;
  int rc;
  if (out == NULL)
    return bw_error_set(err, BW_E_INVAL, "out", "out must not be NULL");
  /* Validate both before allocating anything. */
  if (partner != NULL &&
      (rc = bw_sim_partner_config_validate(partner, err)) != BW_OK)
    return rc;
  if ((rc = bw_sim_client_config_validate(client, err)) != BW_OK) return rc;
  sim = bw_sim_new(NULL, err);
  if (sim == NULL) return err != NULL ? err->code : BW_E_NOMEM;
  p = bw_sim_partner_new(partner, err);
  if (p == NULL) {
    rc = BW_E_NOMEM;
    goto out;
  }
  c = bw_sim_client_new(sim, p, client, err);
  if (c == NULL) {
    rc = BW_E_NOMEM;
    goto out;
  }
  rc = bw_sim_client_start(c);
  if (rc == BW_OK) {
    bw_sim_run(sim);
    rc = bw_sim_client_error(c);
  }
  if (rc == BW_OK)
    rc = bw_sim_client_results(c, out);
  else
    bw_error_set(err, rc, "", "the simulation failed: %s", bw_strerror(rc));
out:
  bw_sim_free(sim);
  bw_sim_client_free(c);
  bw_sim_partner_free(p);
  return rc;
}

int bw_sim_results_format(const bw_sim_results_t *r, char *buf, size_t size) {
  if (r == NULL) return -1;
#define U(x) ((unsigned long long)(x))
#define MS3(x) \
  (long long)((x) / BW_NS_PER_MS), (long long)((x) % BW_NS_PER_MS / 1000)
  return snprintf(
      buf, size,
      "requests=%llu completed=%llu successes=%llu failed_429=%llu "
      "failed_timeout=%llu failed_status=%llu rejected=%llu gave_up=%llu "
      "network_calls=%llu attempts_200=%llu attempts_429=%llu "
      "attempts_other=%llu attempts_timeout=%llu partner_received=%llu "
      "partner_max_in_flight=%llu completion_ms=%lld.%03lld "
      "p50_ms=%lld.%03lld p95_ms=%lld.%03lld p99_ms=%lld.%03lld "
      "max_ms=%lld.%03lld events=%llu",
      U(r->requests), U(r->completed), U(r->successes), U(r->failed_429),
      U(r->failed_timeout), U(r->failed_status), U(r->rejected), U(r->gave_up),
      U(r->network_calls), U(r->attempts_200), U(r->attempts_429),
      U(r->attempts_other), U(r->attempts_timeout), U(r->partner_received),
      U(r->partner_max_in_flight), MS3(r->completion_ns),
      MS3(r->latency_p50_ns), MS3(r->latency_p95_ns), MS3(r->latency_p99_ns),
      MS3(r->latency_max_ns), U(r->events));
#undef U
#undef MS3
}

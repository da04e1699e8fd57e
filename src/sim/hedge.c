/* The hedged client (sim.h, "the hedged client"): the simulator drives a
 * bw_hedge_t the way the curl multi driver does — a timer per request for
 * the next hedge, the first 200 wins, the other copies are abandoned.
 *
 * Events per copy: its answer (or its client-side timeout, and later the
 * partner's release of the abandoned request), as in client.c; plus one
 * hedge timer per request while it may still hedge, cancelled when the
 * request ends. Arrivals are chained. Nothing allocates after the start
 * but the scheduler's own storage. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/ext.h"
#include "breakwater/hedge.h"
#include "breakwater/sim.h"
#include "sim_internal.h"

#define MAX_COPIES (1u + BW_HEDGE_MAX_HEDGES)

typedef struct hreq_s hreq_t;
typedef struct hrun_s hrun_t;

/* One copy in flight: the event's user pointer. */
typedef struct hcopy_s {
  hreq_t *r;
  uint8_t index; /* 0 = the first copy */
  int status;    /* the partner's answer, or 0 when timed out */
  int64_t sent_ns;
} hcopy_t;

struct hreq_s {
  hrun_t *run;
  int64_t arrival_ns;
  bw_hedge_call_t hc;
  bw_sim_event_id_t timer; /* the next hedge, 0 when none is armed */
  uint8_t sent;            /* copies sent */
  uint8_t out;             /* copies sent and not yet answered */
  bool done;
  hcopy_t copies[MAX_COPIES];
};

struct hrun_s {
  bw_sim_t *sim;
  bw_sim_partner_t *partner;
  bw_sim_hedge_config_t cfg;
  hreq_t *reqs;
  int64_t *lat;
  uint64_t nlat;
  uint32_t next_arrival;
  bw_rand_t rng;
  int error;
  bw_sim_hedge_results_t r;
};

void bw_sim_hedge_config_init(bw_sim_hedge_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->requests = 10000;
  cfg->rate_per_s = 100.0;
  cfg->timeout_ms = 10000;
  cfg->seed = 4;
  cfg->hedge = NULL;
  cfg->idempotent = true;
}

static void run_fail(hrun_t *h, int rc) {
  if (h->error == BW_OK) h->error = rc;
  bw_sim_stop(h->sim);
}

static void partner_release(bw_sim_t *sim, void *user) {
  (void)sim;
  bw_sim_partner_done(user);
}

/* winner: the copy whose 200 ended the request (NULL on a failure). */
static void req_end(hreq_t *r, const hcopy_t *winner) {
  hrun_t *h = r->run;
  int64_t now = bw_sim_now_ns(h->sim);
  r->done = true;
  if (r->timer != 0) {
    bw_sim_cancel(h->sim, r->timer);
    r->timer = 0;
  }
  h->lat[h->nlat++] = now - r->arrival_ns;
  if (bw_hedge_denied(&r->hc)) h->r.hedges_denied++;
  if (winner == NULL) {
    h->r.failed++;
    return;
  }
  h->r.successes++;
  if (winner->index > 0) h->r.hedge_wins++;
  /* The winning copy's own latency: the dependency's, not the caller's
   * (hedge.h says why). */
  if (h->cfg.hedge != NULL)
    bw_hedge_record(h->cfg.hedge, now - winner->sent_ns);
}

static void copy_answer(bw_sim_t *sim, void *user);
static void copy_timeout(bw_sim_t *sim, void *user);
static void hedge_timer(bw_sim_t *sim, void *user);

static void copy_send(hreq_t *r) {
  hrun_t *h = r->run;
  int64_t now = bw_sim_now_ns(h->sim);
  hcopy_t *c = &r->copies[r->sent];
  bw_sim_reply_t rep;
  int rc;
  c->r = r;
  c->index = r->sent;
  c->sent_ns = now;
  r->sent++;
  r->out++;
  h->r.network_calls++;
  if (c->index > 0) h->r.hedges++;
  rep = bw_sim_partner_admit(h->partner, now);
  /* An answer exactly at the timeout is in time. */
  if (rep.latency_ms <= h->cfg.timeout_ms) {
    c->status = rep.status;
    rc = bw_sim_schedule_in(h->sim, rep.latency_ms * BW_NS_PER_MS, copy_answer,
                            c, NULL);
  } else {
    c->status = 0;
    rc = bw_sim_schedule_in(h->sim, h->cfg.timeout_ms * BW_NS_PER_MS,
                            copy_timeout, c, NULL);
    if (rc == BW_OK)
      rc = bw_sim_schedule_in(h->sim, rep.latency_ms * BW_NS_PER_MS,
                              partner_release, h->partner, NULL);
  }
  if (rc != BW_OK) run_fail(h, rc);
}

static void arm(hreq_t *r, int64_t in_ms) {
  int rc = bw_sim_schedule_in(r->run->sim, in_ms * BW_NS_PER_MS, hedge_timer, r,
                              &r->timer);
  if (rc != BW_OK) run_fail(r->run, rc);
}

/* Asks the policy for the next copy now; sends it and re-arms as told.
 * Returns whether a copy was sent. */
static bool hedge_now(hreq_t *r) {
  int64_t in_ms = -1;
  if (r->run->cfg.hedge == NULL || r->sent >= MAX_COPIES) return false;
  if (bw_hedge_fire(&r->hc, bw_sim_now_ns(r->run->sim), &in_ms) !=
      BW_HEDGE_SEND)
    return false;
  copy_send(r);
  if (in_ms >= 0) arm(r, in_ms);
  return true;
}

static void hedge_timer(bw_sim_t *sim, void *user) {
  hreq_t *r = user;
  (void)sim;
  r->timer = 0;
  if (!r->done) hedge_now(r);
}

/* A copy failed (429 or timeout). With no other copy out, the next hedge
 * goes at once if the policy allows one; else the request fails. */
static void copy_failed(hreq_t *r) {
  if (r->done || r->out > 0) return;
  if (r->timer != 0) {
    bw_sim_cancel(r->run->sim, r->timer);
    r->timer = 0;
  }
  if (!hedge_now(r)) req_end(r, NULL);
}

static void copy_answer(bw_sim_t *sim, void *user) {
  hcopy_t *c = user;
  hreq_t *r = c->r;
  (void)sim;
  bw_sim_partner_done(r->run->partner);
  if (r->done) return; /* a loser's answer: abandoned */
  r->out--;
  if (c->status == 200)
    req_end(r, c);
  else
    copy_failed(r);
}

static void copy_timeout(bw_sim_t *sim, void *user) {
  hcopy_t *c = user;
  hreq_t *r = c->r;
  (void)sim;
  if (r->done) return;
  r->out--;
  copy_failed(r);
}

static void arrival(bw_sim_t *sim, void *user) {
  hrun_t *h = user;
  uint32_t i = h->next_arrival++;
  int64_t now = bw_sim_now_ns(sim);
  hreq_t *r = &h->reqs[i];
  int64_t in_ms;
  r->run = h;
  r->arrival_ns = now;
  h->r.requests++;
  copy_send(r);
  if (h->cfg.hedge != NULL &&
      bw_hedge_begin(h->cfg.hedge, &r->hc, h->cfg.idempotent, now, &in_ms) ==
          BW_HEDGE_ARM)
    arm(r, in_ms);
  if (h->next_arrival < h->cfg.requests) {
    /* Exponential gaps; 1 - u is in (0, 1]: the log is finite. */
    double gap_s = -log(1.0 - bw_rand_double(&h->rng)) / h->cfg.rate_per_s;
    int rc = bw_sim_schedule_at(sim, now + (int64_t)llround(gap_s * 1e9),
                                arrival, h, NULL);
    if (rc != BW_OK) run_fail(h, rc);
  }
}

static int validate(const bw_sim_hedge_config_t *cfg, bw_error_t *err) {
  if (cfg->requests < 1 || cfg->requests > BW_SIM_MAX_REQUESTS)
    return bw_error_set(err, BW_E_INVAL, "requests",
                        "requests must be in [1, %u] (got %u)",
                        BW_SIM_MAX_REQUESTS, (unsigned)cfg->requests);
  if (!(cfg->rate_per_s >= 1e-6 && cfg->rate_per_s <= 1e9))
    return bw_error_set(err, BW_E_INVAL, "rate_per_s",
                        "rate_per_s must be in [1e-6, 1e9] (got %g)",
                        cfg->rate_per_s);
  if (cfg->timeout_ms < 1 || cfg->timeout_ms > INT64_C(86400000))
    return bw_error_set(err, BW_E_INVAL, "timeout_ms",
                        "timeout_ms must be in [1, 86400000] (got %lld)",
                        (long long)cfg->timeout_ms);
  return BW_OK;
}

int bw_sim_hedge_run(bw_sim_t *sim, bw_sim_partner_t *partner,
                     const bw_sim_hedge_config_t *cfg,
                     bw_sim_hedge_results_t *out, bw_error_t *err) {
  hrun_t h;
  bw_sim_partner_stats_t ps0, ps;
  bw__sim_latency_t lat;
  int rc;
  bw_error_clear(err);
  if (sim == NULL || partner == NULL || cfg == NULL || out == NULL)
    return bw_error_set(err, BW_E_INVAL,
                        sim == NULL       ? "sim"
                        : partner == NULL ? "partner"
                        : cfg == NULL     ? "cfg"
                                          : "out",
                        "sim, partner, cfg and out must not be NULL");
  if ((rc = validate(cfg, err)) != BW_OK) return rc;
  memset(out, 0, sizeof(*out));
  memset(&h, 0, sizeof(h));
  h.sim = sim;
  h.partner = partner;
  h.cfg = *cfg;
  h.reqs = bw_calloc(cfg->requests, sizeof(hreq_t));
  h.lat = bw_malloc((size_t)cfg->requests * sizeof(int64_t));
  if (h.reqs == NULL || h.lat == NULL) {
    rc = bw_error_set(err, BW_E_NOMEM, "", "out of memory for the requests");
    goto out;
  }
  bw_rand_seed(&h.rng, cfg->seed);
  bw_sim_partner_stats(partner, &ps0);
  rc = bw_sim_schedule_at(sim, bw_sim_now_ns(sim), arrival, &h, NULL);
  if (rc == BW_OK) {
    bw_sim_run(sim);
    rc = h.error;
  }
  if (rc != BW_OK) {
    bw_error_set(err, rc, "", "the simulation failed: %s", bw_strerror(rc));
    goto out;
  }
  *out = h.r;
  bw_sim_partner_stats(partner, &ps);
  out->partner_tail = ps.tail - ps0.tail;
  lat = bw__sim_latency_summary(h.lat, h.nlat);
  out->latency_p50_ns = lat.p50_ns;
  out->latency_p95_ns = lat.p95_ns;
  out->latency_p99_ns = lat.p99_ns;
  out->latency_max_ns = lat.max_ns;
out:
  bw_free(h.reqs);
  bw_free(h.lat);
  return rc;
}

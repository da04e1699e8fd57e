/* The closed-loop gate: clients that always have work, a concurrency limit
 * as the admission gate, the partner model behind it (sim.h).
 *
 * Each client has at most one attempt outstanding, so its permit and the
 * pending answer live in its own slot. Events per admitted attempt: one
 * (the answer) when the partner answers in time, two (the client's timeout,
 * then the partner's release of the abandoned request) when it does not;
 * one per refusal (the back-off). Nothing allocates after the slots. */
#include <string.h>

#include "breakwater/sim.h"
#include "internal.h"

#define GATE_MAX_MS INT64_C(86400000)

typedef struct gate_s gate_t;

typedef struct gate_client_s {
  gate_t *g;
  bw_permit_t permit;
  int status; /* of the outstanding attempt */
} gate_client_t;

struct gate_s {
  bw_sim_t *sim;
  bw_sim_partner_t *partner;
  bw_limit_t *gate;
  bw_sim_gate_config_t cfg;
  int64_t end_ns;
  gate_client_t *clients;
  bool in_band;
  int error;
  bw_sim_gate_results_t r;
};

void bw_sim_gate_config_init(bw_sim_gate_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->clients = 800;
  cfg->duration_ms = 60000;
  cfg->timeout_ms = 2000;
  cfg->backoff_ms = 10;
  cfg->band_lo = 340;
  cfg->band_hi = 460;
  cfg->sample_ms = 500;
}

static int gate_validate(const bw_sim_gate_config_t *c, bw_error_t *err) {
  if (c->clients < 1 || c->clients > 1000000u)
    return bw_error_set(err, BW_E_INVAL, "clients",
                        "clients must be in [1, 1000000] (got %u)",
                        (unsigned)c->clients);
  if (c->duration_ms < 1 || c->duration_ms > GATE_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "duration_ms",
                        "duration_ms must be in [1, %lld] (got %lld)",
                        (long long)GATE_MAX_MS, (long long)c->duration_ms);
  if (c->timeout_ms < 1 || c->timeout_ms > GATE_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "timeout_ms",
                        "timeout_ms must be in [1, %lld] (got %lld)",
                        (long long)GATE_MAX_MS, (long long)c->timeout_ms);
  if (c->backoff_ms < 1 || c->backoff_ms > GATE_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "backoff_ms",
                        "backoff_ms must be in [1, %lld] (got %lld)",
                        (long long)GATE_MAX_MS, (long long)c->backoff_ms);
  if (c->band_hi < c->band_lo)
    return bw_error_set(err, BW_E_INVAL, "band_hi",
                        "band_hi must be >= band_lo %u (got %u)",
                        (unsigned)c->band_lo, (unsigned)c->band_hi);
  if (c->on_sample != NULL && (c->sample_ms < 1 || c->sample_ms > GATE_MAX_MS))
    return bw_error_set(err, BW_E_INVAL, "sample_ms",
                        "sample_ms must be in [1, %lld] (got %lld)",
                        (long long)GATE_MAX_MS, (long long)c->sample_ms);
  return BW_OK;
}

static void gate_fail(gate_t *g, int rc) {
  if (g->error == BW_OK) g->error = rc;
  bw_sim_stop(g->sim);
}

static void gate_schedule(gate_t *g, int64_t delay_ns, bw_sim_fn fn,
                          void *user) {
  int rc = bw_sim_schedule_in(g->sim, delay_ns, fn, user, NULL);
  if (rc != BW_OK) gate_fail(g, rc);
}

/* After every release (the only moment an adaptive limit moves). */
static void gate_check(gate_t *g) {
  int64_t now = bw_sim_now_ns(g->sim);
  uint32_t lim = bw_limit_current(g->gate);
  bw_sim_partner_stats_t ps;
  if (now > g->end_ns) return; /* the drain is not part of the run */
  if (lim < g->cfg.band_lo || lim > g->cfg.band_hi) {
    g->in_band = false;
    g->r.settled_ns = -1;
    return;
  }
  if (!g->in_band) {
    g->in_band = true;
    g->r.settled_ns = now;
    bw_sim_partner_stats(g->partner, &ps);
    g->r.max_in_flight_after_settle = ps.in_flight;
    g->r.limit_min_after_settle = lim;
    g->r.limit_max_after_settle = lim;
  }
  if (lim < g->r.limit_min_after_settle) g->r.limit_min_after_settle = lim;
  if (lim > g->r.limit_max_after_settle) g->r.limit_max_after_settle = lim;
}

static void gate_release(gate_client_t *c, bw_limit_outcome_t o) {
  if (bw_limit_release(c->g->gate, &c->permit, o) != BW_OK)
    gate_fail(c->g, BW_E_INVAL);
  gate_check(c->g);
}

static void gate_ask(bw_sim_t *sim, void *user);

static void gate_answer(bw_sim_t *sim, void *user) {
  gate_client_t *c = user;
  (void)sim;
  bw_sim_partner_done(c->g->partner);
  if (c->status == 200) {
    c->g->r.ok++;
    gate_release(c, BW_LIMIT_SUCCESS);
  } else {
    c->g->r.throttled++;
    gate_release(c, BW_LIMIT_DROPPED);
  }
  gate_ask(sim, c);
}

static void gate_timeout(bw_sim_t *sim, void *user) {
  gate_client_t *c = user;
  c->g->r.timeouts++;
  gate_release(c, BW_LIMIT_TIMED_OUT);
  gate_ask(sim, c);
}

static void gate_partner_done(bw_sim_t *sim, void *user) {
  (void)sim;
  bw_sim_partner_done(user);
}

static void gate_ask(bw_sim_t *sim, void *user) {
  gate_client_t *c = user;
  gate_t *g = c->g;
  int64_t now = bw_sim_now_ns(sim);
  bw_sim_reply_t rep;
  bw_sim_partner_stats_t ps;
  if (now >= g->end_ns) return; /* the run is over: no new attempts */
  g->r.asks++;
  if (bw_limit_try_acquire(g->gate, &c->permit) != BW_OK) {
    g->r.refused++;
    gate_schedule(g, g->cfg.backoff_ms * BW_NS_PER_MS, gate_ask, c);
    return;
  }
  g->r.network_calls++;
  rep = bw_sim_partner_admit(g->partner, now);
  if (g->in_band) {
    bw_sim_partner_stats(g->partner, &ps);
    if (ps.in_flight > g->r.max_in_flight_after_settle)
      g->r.max_in_flight_after_settle = ps.in_flight;
  }
  c->status = rep.status;
  if (rep.latency_ms <= g->cfg.timeout_ms) {
    gate_schedule(g, rep.latency_ms * BW_NS_PER_MS, gate_answer, c);
  } else {
    gate_schedule(g, g->cfg.timeout_ms * BW_NS_PER_MS, gate_timeout, c);
    gate_schedule(g, rep.latency_ms * BW_NS_PER_MS, gate_partner_done,
                  g->partner);
  }
}

static void gate_sample(bw_sim_t *sim, void *user) {
  gate_t *g = user;
  int64_t now = bw_sim_now_ns(sim);
  bw_sim_partner_stats_t ps;
  bw_sim_partner_stats(g->partner, &ps);
  g->cfg.on_sample(g->cfg.userdata, now, bw_limit_current(g->gate),
                   ps.in_flight);
  if (now + g->cfg.sample_ms * BW_NS_PER_MS <= g->end_ns)
    gate_schedule(g, g->cfg.sample_ms * BW_NS_PER_MS, gate_sample, g);
}

int bw_sim_gate_run(bw_sim_t *sim, bw_sim_partner_t *partner, bw_limit_t *gate,
                    const bw_sim_gate_config_t *cfg, bw_sim_gate_results_t *out,
                    bw_error_t *err) {
  bw_sim_gate_config_t def;
  bw_sim_partner_stats_t ps;
  gate_t g;
  uint64_t fired0;
  uint32_t i;
  bw_error_clear(err);
  if (sim == NULL || partner == NULL || gate == NULL || out == NULL)
    return bw_error_set(err, BW_E_INVAL,
                        sim == NULL       ? "sim"
                        : partner == NULL ? "partner"
                        : gate == NULL    ? "gate"
                                          : "out",
                        "arguments must not be NULL");
  if (cfg == NULL) {
    bw_sim_gate_config_init(&def);
    cfg = &def;
  }
  if (gate_validate(cfg, err) != BW_OK) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  memset(&g, 0, sizeof(g));
  g.sim = sim;
  g.partner = partner;
  g.gate = gate;
  g.cfg = *cfg;
  g.end_ns = bw_sim_now_ns(sim) + cfg->duration_ms * BW_NS_PER_MS;
  g.r.settled_ns = -1;
  g.clients = bw_calloc(cfg->clients, sizeof(gate_client_t));
  if (g.clients == NULL)
    return bw_error_set(err, BW_E_NOMEM, "", "out of memory for the clients");
  fired0 = bw_sim_fired(sim);
  gate_check(&g); /* the initial limit */
  for (i = 0; i < cfg->clients && g.error == BW_OK; i++) {
    g.clients[i].g = &g;
    gate_schedule(&g, 0, gate_ask, &g.clients[i]);
  }
  if (cfg->on_sample != NULL && g.error == BW_OK)
    gate_schedule(&g, 0, gate_sample, &g);
  if (g.error == BW_OK) bw_sim_run(sim);
  if (g.r.settled_ns < 0) { /* the last in-band stretch did not last */
    g.r.max_in_flight_after_settle = 0;
    g.r.limit_min_after_settle = 0;
    g.r.limit_max_after_settle = 0;
  }
  g.r.final_limit = bw_limit_current(gate);
  bw_sim_partner_stats(partner, &ps);
  g.r.partner_max_in_flight = ps.max_in_flight;
  g.r.events = bw_sim_fired(sim) - fired0;
  bw_free(g.clients);
  *out = g.r;
  if (g.error != BW_OK)
    return bw_error_set(err, g.error, "",
                        g.error == BW_E_NOMEM ? "out of memory in the run"
                                              : "the gate refused a release");
  return BW_OK;
}

/* The lab: the Polly lab's modes as policy kits, and one mode's virtual run. */
#include "breakwater/lab.h"

#include <stdio.h>
#include <string.h>

#include "breakwater/ext.h"

static const char *const mode_names[BW_LAB__COUNT] = {"naive", "polly",
                                                      "breakwater", "oracle"};

const char *bw_lab_mode_name(bw_lab_mode_t m) {
  return (unsigned)m < BW_LAB__COUNT ? mode_names[m] : "unknown";
}

bool bw_lab_mode_hands_off(bw_lab_mode_t m) {
  return m == BW_LAB_ORACLE || m == BW_LAB_BREAKWATER;
}

int bw_lab_mode_parse(const char *s, bw_lab_mode_t *out) {
  if (s == NULL || out == NULL) return BW_E_INVAL;
  for (int i = 0; i < BW_LAB__COUNT; i++)
    if (strcmp(s, mode_names[i]) == 0) {
      *out = (bw_lab_mode_t)i;
      return BW_OK;
    }
  return BW_E_NOTFOUND;
}

void bw_lab_kit_config_init(bw_lab_kit_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof *cfg);
  cfg->mode = BW_LAB_NAIVE;
  cfg->attempt_timeout_ms = 2000;
  cfg->seed = 4;
  cfg->max_limit = 1000;
  cfg->oracle_limit = 400;
}

void bw_lab_kit_destroy(bw_lab_kit_t *kit) {
  if (kit == NULL) return;
  bw_pipeline_free(kit->pipeline);
  bw_breaker_free(kit->breaker);
  bw_limiter_free(kit->limiter);
  bw_retry_policy_free(kit->retry);
  bw_budget_free(kit->budget);
  bw_bulkhead_free(kit->bulkhead);
  bw_throttle_free(kit->throttle);
  memset(kit, 0, sizeof *kit);
}

/* The Polly lab's breaker numbers (Polly's AdvancedCircuitBreaker: failure
 * ratio 0.5 over a 10 s sampling window, minimum throughput 20), with the
 * mode's break. */
static bw_breaker_t *lab_breaker(const bw_lab_kit_config_t *cfg,
                                 int64_t break_ms, bw_error_t *err) {
  bw_breaker_config_t bc;
  bw_breaker_config_init(&bc);
  bc.name = "partner";
  bc.trip_rule = BW_TRIP_TIME_WINDOW;
  bc.failure_ratio = 0.5;
  bc.window_ms = 10000;
  bc.window_buckets = 10;
  bc.minimum_calls = 20;
  bc.break_ms = break_ms;
  bc.clock = cfg->clock;
  bc.sink = cfg->sink;
  return bw_breaker_new(&bc, err);
}

int bw_lab_kit_init(bw_lab_kit_t *kit, const bw_lab_kit_config_t *cfg,
                    bw_error_t *err) {
  if (kit == NULL || cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "kit", "kit and cfg must not be NULL");
  memset(kit, 0, sizeof *kit);
  if ((unsigned)cfg->mode >= BW_LAB__COUNT)
    return bw_error_set(err, BW_E_INVAL, "mode",
                        "mode must be naive, polly, breakwater or oracle (got "
                        "%d)",
                        (int)cfg->mode);
  if (cfg->attempt_timeout_ms < 1 || cfg->attempt_timeout_ms > 86400000)
    return bw_error_set(err, BW_E_INVAL, "attempt_timeout_ms",
                        "attempt_timeout_ms must be in [1, 86400000] (got "
                        "%lld)",
                        (long long)cfg->attempt_timeout_ms);
  if (cfg->seed == 0)
    return bw_error_set(err, BW_E_INVAL, "seed",
                        "seed must not be 0 (runs must be reproducible)");
  if (cfg->max_limit < 1 || cfg->max_limit > 1000000)
    return bw_error_set(err, BW_E_INVAL, "max_limit",
                        "max_limit must be in [1, 1000000] (got %u)",
                        (unsigned)cfg->max_limit);
  if (cfg->mode == BW_LAB_ORACLE &&
      (cfg->oracle_limit < 1 || cfg->oracle_limit > 1000000))
    return bw_error_set(err, BW_E_INVAL, "oracle_limit",
                        "oracle_limit must be in [1, 1000000] (got %u)",
                        (unsigned)cfg->oracle_limit);
  if (cfg->sre_k != 0 && !(cfg->sre_k >= 1.0 && cfg->sre_k <= 10.0))
    return bw_error_set(err, BW_E_INVAL, "sre_k",
                        "sre_k must be 0 (none) or in [1, 10] (got %g)",
                        cfg->sre_k);
  kit->mode = cfg->mode;
  bw_retry_config_t rc;
  bw_pipeline_config_t pc;
  bw_pipeline_config_init(&pc);
  pc.name = bw_lab_mode_name(cfg->mode);
  int rc_add = BW_OK;

  switch (cfg->mode) {
  case BW_LAB_NAIVE:
    /* The Polly lab's Function.cs: for (i = 0; i < 3; i++) { call; if ok
     * break; } — no wait, every failure retried. */
    bw_retry_config_init(&rc);
    rc.name = "naive";
    rc.max_attempts = 3;
    rc.backoff = BW_BACKOFF_CONSTANT;
    rc.base_ms = 0;
    rc.max_ms = 0;
    rc.jitter = BW_JITTER_NONE;
    rc.honor_retry_after = false;
    rc.seed = cfg->seed;
    rc.sink = cfg->sink;
    if ((kit->retry = bw_retry_policy_new(&rc, err)) == NULL) goto fail;
    rc_add |= bw_pipeline_add_retry(&pc, kit->retry);
    break;
  case BW_LAB_POLLY:
    bw_retry_config_preset(&rc, "polly-lab");
    rc.name = "polly";
    rc.honor_retry_after = false; /* Polly's default delay generator */
    rc.seed = cfg->seed;
    rc.sink = cfg->sink;
    if ((kit->retry = bw_retry_policy_new(&rc, err)) == NULL) goto fail;
    if ((kit->breaker = lab_breaker(cfg, 15000, err)) == NULL) goto fail;
    rc_add |= bw_pipeline_add_retry(&pc, kit->retry);
    rc_add |= bw_pipeline_add_breaker(&pc, kit->breaker);
    break;
  case BW_LAB_BREAKWATER: {
    bw_budget_config_t bc;
    /* A ratio budget (retries at most 20 % of requests, Finagle's and
     * Linkerd's rule): a burst's overshoot fails many calls at once, and
     * gRPC's token bucket (10 tokens) refused almost all of their retries,
     * while a fifth of a burst's requests may safely retry under the
     * lowered limit. */
    bw_budget_config_init(&bc);
    bc.kind = BW_BUDGET_RATIO;
    bc.clock = cfg->clock;
    bc.name = "partner";
    if ((kit->budget = bw_budget_new(&bc, err)) == NULL) goto fail;
    bw_retry_config_init(&rc);
    rc.name = "breakwater";
    rc.max_attempts = 2;
    rc.backoff = BW_BACKOFF_EXPONENTIAL;
    rc.base_ms = 200;
    rc.max_ms = 2000;
    rc.jitter = BW_JITTER_FULL;
    rc.honor_retry_after = true;
    rc.budget = kit->budget;
    rc.seed = cfg->seed;
    rc.sink = cfg->sink;
    if ((kit->retry = bw_retry_policy_new(&rc, err)) == NULL) goto fail;
    bw_limiter_config_t lc;
    bw_limiter_config_init(&lc);
    lc.name = "partner";
    lc.algorithm = BW_LIMITER_AIMD;
    lc.initial_limit = 20;
    lc.max_limit = cfg->max_limit;
    if (lc.initial_limit > lc.max_limit) lc.initial_limit = lc.max_limit;
    /* The partner's overload answer is slowness (0.8 s and more) before
     * it is a 429: a success slower than 1 s is a congestion signal. */
    lc.aimd_timeout_ms = 1000;
    /* Growth stops a quarter above the in-flight level a success proved
     * (the default is an eighth): a burst of clients ramps up sooner, and
     * a storm of 1,600 clients still does not overshoot. */
    lc.probe_headroom = 0.25;
    /* Startup and stuck probes (docs/limiter.md): triple per round trip
     * (+2 per success, up to 3 x the proven level) until the first
     * congestion signal, and cut the limit to the proven
     * level as soon as a probe over it is out twice the smoothed RTT,
     * long before its slow answer (0.8-2.5 s) comes back; a batch of
     * calls at any level out twice the good RTT cuts it too (to the calls
     * not stuck, at most halved). */
    lc.startup_headroom = 2.0;
    lc.stuck_ratio = 2.0;
    /* Limited slow start: past a proven level of 50, at most 100 calls
     * more per round trip. Every call over the partner's capacity holds a
     * partner slot for 0.8-2.5 s; tripling from a proven 390 could admit
     * 780 of them at once (a 1,600-client burst then jams the partner for
     * seconds), this admits at most 100 (docs/limiter.md has the lab's
     * figures). */
    lc.startup_max_step = 100;
    /* Give up on a stuck attempt (one admitted above the proven level,
     * older than twice the slowest good answer) and retry it under the
     * lowered limit, its slot held as long as the 2 s attempt could have
     * run: a 1,600-client burst no longer waits for the partner's slow
     * answers (docs/limiter.md, "Giving up on stuck attempts"). */
    lc.stuck_timeout = true;
    /* A flaky partner's sparse errors are no congestion: up to a tenth of
     * a round's releases may be drops before one lowers the limit. With 2 %
     * of the answers a 500 the limit fell to 1 and 88 % of a ramp under
     * capacity ran out of its deadline; the stuck-call rule still sees an
     * overload by the age of the calls (docs/limiter.md, "Sparse drops are
     * not congestion"). */
    lc.drop_tolerance = 0.1;
    lc.clock = cfg->clock;
    if ((kit->limiter = bw_limiter_new(&lc, err)) == NULL) goto fail;
    if ((kit->breaker = lab_breaker(cfg, 5000, err)) == NULL) goto fail;
    /* The limiter inside the retry: each attempt takes its own slot, so a
     * call waiting out its backoff holds none, and its retry is admitted
     * under the limit in force then (lowered by the congestion its first
     * attempt met), not under the permit of its first admission. */
    /* No attempt with less than 180 ms of the deadline left (the
     * partner's slowest answer under capacity): under a sustained overload
     * the requests that reach the end of their deadline in a queue sent
     * attempts nobody waited for, each a drop that kept the partner full
     * (docs/limiter.md, end of "Tails are not congestion"). */
    pc.min_attempt_ms = 180;
    rc_add |= bw_pipeline_add_deadline(&pc, 10000);
    rc_add |= bw_pipeline_add_breaker(&pc, kit->breaker);
    rc_add |= bw_pipeline_add_retry(&pc, kit->retry);
    if (cfg->sre_k != 0) {
      /* The client-side throttle (throttle.h) per attempt, before the
       * limiter: a local refusal takes no slot and waits for none. The
       * default window (a minute) outlasts a storm: nothing expires
       * during a run. */
      bw_throttle_config_t tc;
      bw_throttle_config_init(&tc);
      tc.name = "partner";
      tc.k = cfg->sre_k;
      tc.seed = cfg->seed;
      tc.sink = cfg->sink;
      tc.clock = cfg->clock;
      if ((kit->throttle = bw_throttle_new(&tc, err)) == NULL) goto fail;
      rc_add |=
          bw_pipeline_add_strategy(&pc, bw_throttle_strategy(kit->throttle), 0);
    }
    rc_add |=
        bw_pipeline_add_limit(&pc, bw_limiter_as_limit(kit->limiter), 10000);
    break;
  }
  case BW_LAB_ORACLE: {
    /* The ideal: it knows the partner's capacity and never exceeds it, so
     * every call is answered fast and nothing needs a retry. Calls wait
     * for a slot within the breakwater mode's deadline, and a freed slot
     * goes to the longest waiter at once (bw_lab_mode_hands_off). */
    bw_bulkhead_config_t hc;
    bw_bulkhead_config_init(&hc);
    hc.name = "partner";
    hc.max_concurrent = cfg->oracle_limit;
    hc.timeout_ms = 0; /* the attempt timeout bounds each call */
    hc.clock = cfg->clock;
    if ((kit->bulkhead = bw_bulkhead_new(&hc, err)) == NULL) goto fail;
    rc_add |= bw_pipeline_add_deadline(&pc, 10000);
    rc_add |=
        bw_pipeline_add_limit(&pc, bw_bulkhead_as_limit(kit->bulkhead), 10000);
    break;
  }
  default:
    break;
  }
  if (rc_add != BW_OK) {
    bw_error_set(err, BW_E_INVAL, "mode", "could not build the pipeline");
    goto fail;
  }
  /* Innermost: each attempt's time. */
  if (bw_pipeline_add_timeout(&pc, cfg->attempt_timeout_ms) != BW_OK) goto fail;
  if ((kit->pipeline = bw_pipeline_new(&pc, err)) == NULL) goto fail;
  return BW_OK;
fail : {
  int code = err != NULL && err->code != BW_OK ? err->code : BW_E_NOMEM;
  bw_lab_kit_destroy(kit);
  return code;
}
}

/* ---- the virtual run ---------------------------------------------------- */

void bw_lab_run_config_init(bw_lab_run_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof *cfg);
  cfg->mode = BW_LAB_BREAKWATER;
  bw_sim_partner_config_init(&cfg->partner);
  cfg->clients = 800;
  cfg->arrival = BW_SIM_ARRIVAL_BURST;
  cfg->ramp_ms = 10000;
  cfg->attempt_timeout_ms = 2000;
  cfg->seed = 4;
  cfg->max_limit = 1000;
  cfg->sample_ms = 100;
}

typedef struct sampler_s {
  const bw_lab_run_config_t *cfg;
  bw_sim_client_t *client;
  bw_sim_partner_t *partner;
  const bw_lab_kit_t *kit;
  bw_sim_results_t prev;
  int64_t start_ns;
  int error;
} sampler_t;

static void sample(bw_sim_t *sim, void *user) {
  sampler_t *s = user;
  bw_sim_results_t now;
  bw_sim_partner_stats_t ps;
  bw_lab_sample_t out;
  bw_sim_client_counters(s->client, &now);
  bw_sim_partner_stats(s->partner, &ps);
  memset(&out, 0, sizeof out);
  out.t_ms = (bw_sim_now_ns(sim) - s->start_ns) / BW_NS_PER_MS;
  out.partner_in_flight = ps.in_flight;
  out.ok = now.attempts_200 - s->prev.attempts_200;
  out.throttled = now.attempts_429 - s->prev.attempts_429;
  out.timeouts = now.attempts_timeout - s->prev.attempts_timeout;
  out.network_calls = now.network_calls - s->prev.network_calls;
  out.completed = now.completed;
  out.breaker =
      s->kit->breaker != NULL ? bw_breaker_state(s->kit->breaker) : BW_CLOSED;
  out.limit = s->kit->limiter != NULL ? bw_limiter_limit(s->kit->limiter) : 0;
  s->prev = now;
  s->cfg->on_sample(s->cfg->userdata, &out);
  /* Keep sampling while requests are open or the partner is busy. */
  if (now.completed < now.requests || now.requests < s->cfg->clients ||
      ps.in_flight > 0) {
    int rc = bw_sim_schedule_in(sim, s->cfg->sample_ms * BW_NS_PER_MS, sample,
                                s, NULL);
    if (rc != BW_OK) {
      s->error = rc;
      bw_sim_stop(sim);
    }
  }
}

int bw_lab_run_virtual(const bw_lab_run_config_t *cfg, bw_lab_results_t *out,
                       bw_error_t *err) {
  if (cfg == NULL || out == NULL)
    return bw_error_set(err, BW_E_INVAL, "cfg", "cfg and out must not be NULL");
  memset(out, 0, sizeof *out);
  if (cfg->seed == 0)
    return bw_error_set(err, BW_E_INVAL, "seed",
                        "seed must not be 0 (runs must be reproducible)");
  if (cfg->on_sample != NULL &&
      (cfg->sample_ms < 1 || cfg->sample_ms > 3600000))
    return bw_error_set(err, BW_E_INVAL, "sample_ms",
                        "sample_ms must be in [1, 3600000] (got %lld)",
                        (long long)cfg->sample_ms);
  bw_sim_partner_config_t pcfg = cfg->partner;
  pcfg.seed = cfg->seed;
  int rc = bw_sim_partner_config_validate(&pcfg, err);
  if (rc != BW_OK) return rc;

  bw_sim_t *sim = NULL;
  bw_sim_partner_t *partner = NULL;
  bw_sim_client_t *client = NULL;
  bw_lab_kit_t kit;
  memset(&kit, 0, sizeof kit);
  if ((sim = bw_sim_new(NULL, err)) == NULL) return BW_E_NOMEM;
  bw_lab_kit_config_t kc;
  bw_lab_kit_config_init(&kc);
  kc.mode = cfg->mode;
  kc.clock = bw_sim_clock(sim);
  kc.attempt_timeout_ms = cfg->attempt_timeout_ms;
  kc.seed = cfg->seed;
  kc.max_limit = cfg->max_limit;
  kc.oracle_limit = pcfg.capacity; /* the ideal knows it */
  kc.sink = cfg->sink;
  kc.sre_k = cfg->sre_k;
  if (cfg->make_kit != NULL) {
    if (cfg->free_kit == NULL) {
      rc = bw_error_set(err, BW_E_INVAL, "free_kit",
                        "free_kit is required with make_kit");
      goto done;
    }
    rc = cfg->make_kit(cfg->make_kit_userdata, kc.clock, cfg->sink, &kit, err);
    if (rc == BW_OK && kit.pipeline == NULL)
      rc = bw_error_set(err, BW_E_INVAL, "make_kit",
                        "make_kit must set the kit's pipeline");
    if (rc != BW_OK) goto done;
  } else if ((rc = bw_lab_kit_init(&kit, &kc, err)) != BW_OK) {
    goto done;
  }
  if ((partner = bw_sim_partner_new(&pcfg, err)) == NULL) {
    rc = BW_E_NOMEM;
    goto done;
  }
  bw_sim_policy_t policy;
  if (bw_lab_mode_hands_off(cfg->mode))
    bw_sim_policy_pipeline_handoff(&policy, kit.pipeline);
  else
    bw_sim_policy_pipeline(&policy, kit.pipeline);
  bw_sim_client_config_t ccfg;
  bw_sim_client_config_init(&ccfg);
  ccfg.requests = cfg->clients;
  ccfg.arrival = cfg->arrival;
  ccfg.ramp_ms = cfg->ramp_ms;
  ccfg.timeout_ms = cfg->attempt_timeout_ms;
  ccfg.seed = cfg->seed;
  ccfg.policy = &policy;
  if ((client = bw_sim_client_new(sim, partner, &ccfg, err)) == NULL) {
    rc = err != NULL && err->code != BW_OK ? err->code : BW_E_NOMEM;
    goto done;
  }
  if ((rc = bw_sim_client_start(client)) != BW_OK) goto done;
  sampler_t smp;
  memset(&smp, 0, sizeof smp);
  smp.cfg = cfg;
  smp.client = client;
  smp.partner = partner;
  smp.kit = &kit;
  smp.start_ns = bw_sim_now_ns(sim);
  if (cfg->on_sample != NULL &&
      (rc = bw_sim_schedule_in(sim, cfg->sample_ms * BW_NS_PER_MS, sample, &smp,
                               NULL)) != BW_OK)
    goto done;
  bw_sim_run(sim);
  if ((rc = bw_sim_client_error(client)) != BW_OK || (rc = smp.error) != BW_OK)
    goto done;
  bw_sim_client_results(client, &out->sim);
  if (kit.breaker != NULL) {
    bw_breaker_stats_t bs;
    bw_breaker_stats(kit.breaker, &bs);
    out->breaker_opens = bs.opens;
    out->breaker_rejected = bs.rejected;
  }
  if (kit.limiter != NULL) out->final_limit = bw_limiter_limit(kit.limiter);
  if (kit.budget != NULL) {
    bw_budget_stats_t us;
    bw_budget_stats(kit.budget, &us);
    out->budget_refused = us.denied;
  }
  if (kit.throttle != NULL) {
    bw_throttle_stats_t ts;
    bw_throttle_stats(kit.throttle, &ts);
    out->throttle_refused = ts.throttled;
  }
  bw_pipeline_stats_t ps;
  bw_pipeline_stats(kit.pipeline, &ps);
  out->failed_deadline = ps.failures[BW_FAILURE_DEADLINE];
  if (cfg->on_kit != NULL) cfg->on_kit(cfg->kit_userdata, &kit);
done:
  /* The kit first: its objects read the scheduler's clock. Then the
   * scheduler: pending events point into the client. */
  if (cfg->make_kit != NULL && cfg->free_kit != NULL)
    cfg->free_kit(cfg->make_kit_userdata, &kit);
  else
    bw_lab_kit_destroy(&kit);
  bw_sim_free(sim);
  bw_sim_client_free(client);
  bw_sim_partner_free(partner);
  if (rc != BW_OK && err != NULL && err->code == BW_OK)
    bw_error_set(err, rc, "", "%s", bw_strerror(rc));
  return rc;
}

/* ---- the hedging case --------------------------------------------------- */

void bw_lab_hedge_config_init(bw_lab_hedge_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof *cfg);
  bw_sim_partner_config_init(&cfg->partner);
  cfg->partner.tail_ratio = 0.05;
  cfg->partner.tail_ms = 2000;
  cfg->requests = 10000;
  cfg->rate_per_s = 100.0;
  cfg->timeout_ms = 10000;
  cfg->seed = 4;
  bw_hedge_config_init(&cfg->hedge);
  cfg->budget_percent = 10.0;
}

/* A part's error: its field prefixed ("partner.tail_ms"). */
static int prefixed(bw_error_t *err, int rc, const char *part) {
  if (err != NULL) {
    char field[sizeof err->field + 16];
    snprintf(field, sizeof field, "%s.%s", part, err->field);
    memcpy(err->field, field, sizeof err->field - 1);
    err->field[sizeof err->field - 1] = '\0';
  }
  return rc;
}

/* One run on a fresh scheduler and partner; hedged when hedge is true. */
static int hedge_once(const bw_lab_hedge_config_t *cfg, bool hedged,
                      bw_sim_hedge_results_t *out, int64_t *final_delay_ms,
                      bw_error_t *err) {
  bw_sim_t *sim = NULL;
  bw_sim_partner_t *p = NULL;
  bw_budget_t *budget = NULL;
  bw_hedge_t *hedge = NULL;
  bw_sim_hedge_config_t hc;
  bw_sim_partner_config_t pc = cfg->partner;
  int rc = BW_E_NOMEM;
  pc.seed = cfg->seed;
  if ((sim = bw_sim_new(NULL, err)) == NULL) goto out;
  if ((p = bw_sim_partner_new(&pc, err)) == NULL) goto out;
  bw_sim_hedge_config_init(&hc);
  hc.requests = cfg->requests;
  hc.rate_per_s = cfg->rate_per_s;
  hc.timeout_ms = cfg->timeout_ms;
  /* The arrivals' stream differs from the partner's, from the same seed. */
  hc.seed = cfg->seed ^ UINT64_C(0x9e3779b97f4a7c15);
  if (hedged) {
    bw_hedge_config_t h = cfg->hedge;
    if (cfg->budget_percent >= 0) {
      bw_budget_config_t bc;
      bw_budget_config_init(&bc);
      bc.name = "hedge";
      bc.kind = BW_BUDGET_RATIO;
      bc.budget_percent = cfg->budget_percent;
      bc.min_retries_per_sec = 0;
      bc.window_ms = 10000;
      bc.clock = bw_sim_clock(sim);
      if ((budget = bw_budget_new(&bc, err)) == NULL) goto out;
    }
    h.budget = budget;
    h.budget_requests = true;
    if ((hedge = bw_hedge_new(&h, err)) == NULL) goto out;
    hc.hedge = hedge;
  }
  rc = bw_sim_hedge_run(sim, p, &hc, out, err);
  if (final_delay_ms != NULL) *final_delay_ms = bw_hedge_delay_ms(hedge);
out:
  bw_sim_free(sim);
  bw_hedge_free(hedge);
  bw_budget_free(budget);
  bw_sim_partner_free(p);
  return rc;
}

int bw_lab_hedge_run(const bw_lab_hedge_config_t *cfg,
                     bw_lab_hedge_results_t *out, bw_error_t *err) {
  bw_sim_partner_config_t pc;
  int rc;
  bw_error_clear(err);
  if (cfg == NULL || out == NULL)
    return bw_error_set(err, BW_E_INVAL, cfg == NULL ? "cfg" : "out",
                        "cfg and out must not be NULL");
  if (cfg->seed == 0)
    return bw_error_set(err, BW_E_INVAL, "seed",
                        "seed must not be 0 (runs must be reproducible)");
  if (!(cfg->budget_percent == -1.0 ||
        (cfg->budget_percent >= 0.0 && cfg->budget_percent <= 100.0)))
    return bw_error_set(err, BW_E_INVAL, "budget_percent",
                        "budget_percent must be -1 (no budget) or in [0, 100] "
                        "(got %g)",
                        cfg->budget_percent);
  pc = cfg->partner;
  pc.seed = cfg->seed;
  if ((rc = bw_sim_partner_config_validate(&pc, err)) != BW_OK)
    return prefixed(err, rc, "partner");
  if ((rc = bw_hedge_config_validate(&cfg->hedge, err)) != BW_OK)
    return prefixed(err, rc, "hedge");
  memset(out, 0, sizeof *out);
  if ((rc = hedge_once(cfg, false, &out->off, NULL, err)) != BW_OK) return rc;
  return hedge_once(cfg, true, &out->on, &out->final_delay_ms, err);
}

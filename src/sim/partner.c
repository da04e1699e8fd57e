/* The partner model of the Polly lab (simulador/Program.cs): a capacity of
 * requests in flight; under it, fast 200s (a share of them 500s when the
 * model is told to be flaky); above it, slow answers of which a share are
 * 429. Decision logic only: the caller (the client model, or a
 * real HTTP server later) does the waiting and calls done. */
#include <math.h>
#include <string.h>

#include "breakwater/sim.h"
#include "breakwater/ext.h"

struct bw_sim_partner_s {
  bw_sim_partner_config_t cfg;
  bw_rand_t rng;
  bw_sim_partner_stats_t st;
};

#define PARTNER_MAX_RETRY_AFTER_S 86400

void bw_sim_partner_config_init(bw_sim_partner_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->capacity = 400;
  cfg->ok_min_ms = 80;
  cfg->ok_max_ms = 180;
  cfg->slow_min_ms = 800;
  cfg->slow_max_ms = 2500;
  cfg->throttle_ratio = 0.6;
  cfg->retry_after_s = -1;
  cfg->seed = 4;
  cfg->tail_ratio = 0.0;
  cfg->tail_ms = 2000;
  cfg->error_ratio = 0.0;
}

int bw_sim_partner_config_validate(const bw_sim_partner_config_t *cfg,
                                   bw_error_t *err) {
  bw_error_clear(err);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (cfg->capacity < 1)
    return bw_error_set(err, BW_E_INVAL, "capacity",
                        "capacity must be >= 1 (got 0)");
  if (cfg->ok_min_ms < 0)
    return bw_error_set(err, BW_E_INVAL, "ok_min_ms",
                        "ok_min_ms must be >= 0 (got %lld)",
                        (long long)cfg->ok_min_ms);
  if (cfg->ok_max_ms < cfg->ok_min_ms)
    return bw_error_set(err, BW_E_INVAL, "ok_max_ms",
                        "ok_max_ms must be >= ok_min_ms (got %lld < %lld)",
                        (long long)cfg->ok_max_ms, (long long)cfg->ok_min_ms);
  if (cfg->slow_min_ms < 0)
    return bw_error_set(err, BW_E_INVAL, "slow_min_ms",
                        "slow_min_ms must be >= 0 (got %lld)",
                        (long long)cfg->slow_min_ms);
  if (cfg->slow_max_ms < cfg->slow_min_ms)
    return bw_error_set(err, BW_E_INVAL, "slow_max_ms",
                        "slow_max_ms must be >= slow_min_ms (got %lld < %lld)",
                        (long long)cfg->slow_max_ms,
                        (long long)cfg->slow_min_ms);
  /* Latencies become nanoseconds on a virtual clock: keep them far from
   * overflow (a day is plenty for a partner model). */
  if (cfg->ok_max_ms > INT64_C(86400000) ||
      cfg->slow_max_ms > INT64_C(86400000))
    return bw_error_set(
        err, BW_E_INVAL,
        cfg->ok_max_ms > INT64_C(86400000) ? "ok_max_ms" : "slow_max_ms",
        "latencies must be <= 86400000 ms (one day)");
  if (!(cfg->throttle_ratio >= 0.0 && cfg->throttle_ratio <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "throttle_ratio",
                        "throttle_ratio must be in [0, 1] (got %g)",
                        cfg->throttle_ratio);
  if (!(cfg->tail_ratio >= 0.0 && cfg->tail_ratio <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "tail_ratio",
                        "tail_ratio must be in [0, 1] (got %g)",
                        cfg->tail_ratio);
  if (cfg->tail_ms < 0 || cfg->tail_ms > INT64_C(86400000))
    return bw_error_set(err, BW_E_INVAL, "tail_ms",
                        "tail_ms must be in [0, 86400000] (got %lld)",
                        (long long)cfg->tail_ms);
  if (!(cfg->error_ratio >= 0.0 && cfg->error_ratio <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "error_ratio",
                        "error_ratio must be in [0, 1] (got %g)",
                        cfg->error_ratio);
  if (cfg->retry_after_s < -1 || cfg->retry_after_s > PARTNER_MAX_RETRY_AFTER_S)
    return bw_error_set(err, BW_E_INVAL, "retry_after_s",
                        "retry_after_s must be -1 (no header) or in [0, %d] "
                        "(got %lld)",
                        PARTNER_MAX_RETRY_AFTER_S,
                        (long long)cfg->retry_after_s);
  return BW_OK;
}

bw_sim_partner_t *bw_sim_partner_new(const bw_sim_partner_config_t *cfg,
                                     bw_error_t *err) {
  bw_sim_partner_config_t def;
  bw_sim_partner_t *p;
  if (cfg == NULL) {
    bw_sim_partner_config_init(&def);
    cfg = &def;
  }
  if (bw_sim_partner_config_validate(cfg, err) != BW_OK) return NULL;
  p = bw_calloc(1, sizeof(*p));
  if (p == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the partner");
    return NULL;
  }
  p->cfg = *cfg;
  bw_rand_seed(&p->rng, cfg->seed);
  return p;
}

void bw_sim_partner_free(bw_sim_partner_t *p) {
  bw_free(p);
}

bw_sim_reply_t bw_sim_partner_admit(bw_sim_partner_t *p, int64_t now_ns) {
  bw_sim_reply_t r = {0, 0, -1};
  (void)now_ns; /* the Polly lab's partner does not depend on time */
  if (p == NULL) return r;
  p->st.received++;
  p->st.in_flight++;
  if (p->st.in_flight > p->st.max_in_flight)
    p->st.max_in_flight = p->st.in_flight;
  /* Program.cs increments first, then compares: the request itself counts. */
  if (p->st.in_flight <= p->cfg.capacity) {
    r.status = 200;
    r.latency_ms = bw_rand_range(&p->rng, p->cfg.ok_min_ms, p->cfg.ok_max_ms);
    /* The slow tail: drawn only when there is one, so that a model without
     * it keeps its sequence. */
    if (p->cfg.tail_ratio > 0.0 &&
        bw_rand_double(&p->rng) < p->cfg.tail_ratio) {
      r.latency_ms = p->cfg.tail_ms;
      p->st.tail++;
    }
    /* The flaky backend: after the tail's draw, and only when there are
     * errors, so that tail-only and plain models keep their sequences. The
     * latency stays what it was: the error is answered when the work
     * ends. */
    if (p->cfg.error_ratio > 0.0 &&
        bw_rand_double(&p->rng) < p->cfg.error_ratio)
      r.status = 500;
  } else {
    p->st.over_capacity++;
    r.latency_ms =
        bw_rand_range(&p->rng, p->cfg.slow_min_ms, p->cfg.slow_max_ms);
    if (bw_rand_double(&p->rng) < p->cfg.throttle_ratio) {
      r.status = 429;
      if (p->cfg.retry_after_s >= 0)
        r.retry_after_ms = p->cfg.retry_after_s * 1000;
    } else {
      r.status = 200;
    }
  }
  if (r.status == 200)
    p->st.status_200++;
  else if (r.status == 500)
    p->st.status_500++;
  else
    p->st.status_429++;
  return r;
}

int bw_sim_partner_done(bw_sim_partner_t *p) {
  if (p == NULL || p->st.in_flight == 0) return BW_E_INVAL;
  p->st.in_flight--;
  p->st.completed++;
  return BW_OK;
}

void bw_sim_partner_stats(const bw_sim_partner_t *p,
                          bw_sim_partner_stats_t *out) {
  if (out == NULL) return;
  if (p == NULL) {
    memset(out, 0, sizeof(*out));
    return;
  }
  *out = p->st;
}

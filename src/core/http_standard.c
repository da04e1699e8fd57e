/* breakwater — the standard HTTP pipeline preset (http_standard.h): the
 * objects Polly's standard resilience handler would build, with breakwater's
 * extras, owned by one object. */
#include <stdio.h>
#include <string.h>

#include "breakwater/http_standard.h"
#include "internal.h"

struct bw_http_standard_s {
  bw_breaker_t *breaker;
  bw_limiter_t *limiter;
  bw_retry_policy_t *retry;
  bw_budget_t *budget;
  bw_pipeline_t *pipeline;
};

#define STD_MAX_MS INT64_C(86400000)

void bw_http_standard_config_init(bw_http_standard_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "http";
  cfg->deadline_ms = 30000;

  cfg->use_limiter = true;
  bw_limiter_config_init(&cfg->limiter);
  cfg->limiter.name = "http";
  cfg->limiter.algorithm = BW_LIMITER_AIMD;
  cfg->limiter.max_limit = 1000;
  cfg->limit_wait_ms = 1000;

  cfg->use_breaker = true;
  bw_breaker_config_init(&cfg->breaker);
  cfg->breaker.name = "http";
  cfg->breaker.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg->breaker.failure_ratio = 0.1;
  cfg->breaker.window_ms = 30000;
  cfg->breaker.window_buckets = 10;
  cfg->breaker.minimum_calls = 100;
  cfg->breaker.break_ms = 5000;

  cfg->use_retry = true;
  bw_retry_config_init(&cfg->retry);
  cfg->retry.name = "http";
  cfg->retry.max_attempts = 4;
  cfg->retry.backoff = BW_BACKOFF_EXPONENTIAL;
  cfg->retry.base_ms = 2000;
  cfg->retry.multiplier = 2.0;
  cfg->retry.max_ms = 30000;
  cfg->retry.jitter = BW_JITTER_DECORRELATED;
  cfg->retry.honor_retry_after = true;

  cfg->use_budget = true;
  bw_budget_config_init(&cfg->budget);
  cfg->budget.name = "http";
  cfg->budget.kind = BW_BUDGET_RATIO;
  cfg->budget.budget_percent = 20.0;
  cfg->budget.min_retries_per_sec = 3.0;
  cfg->budget.window_ms = 10000;

  cfg->attempt_timeout_ms = 10000;
}

/* A part's validation error, its field prefixed with the part's name. */
static int part_error(bw_error_t *err, int rc, const char *part) {
  if (err != NULL) {
    /* Field names are short ("limiter.probe_headroom" is the longest):
     * a longer one would be cut, never overflow. */
    char field[sizeof(err->field) + 16];
    snprintf(field, sizeof(field), "%s.%s", part, err->field);
    memcpy(err->field, field, sizeof(err->field) - 1);
    err->field[sizeof(err->field) - 1] = '\0';
  }
  return rc;
}

/* The sub-configs as they will be used: clock and sink applied, the retry
 * pointed at the budget (set later, once it exists). */
static void effective(const bw_http_standard_config_t *cfg,
                      bw_http_standard_config_t *e) {
  *e = *cfg;
  if (cfg->clock != NULL) {
    e->limiter.clock = cfg->clock;
    e->breaker.clock = cfg->clock;
    e->budget.clock = cfg->clock;
  }
  if (cfg->sink != NULL) {
    e->limiter.sink = cfg->sink;
    e->breaker.sink = cfg->sink;
    e->retry.sink = cfg->sink;
    e->budget.sink = cfg->sink;
  }
  e->retry.budget = NULL;
}

int bw_http_standard_config_validate(const bw_http_standard_config_t *cfg,
                                     bw_error_t *err) {
  bw_http_standard_config_t e;
  int rc;
  bw_error_clear(err);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(cfg->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (cfg->deadline_ms < 0 || cfg->deadline_ms > STD_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "deadline_ms",
                        "deadline_ms must be 0 (none) or in [1, %lld] (got "
                        "%lld)",
                        (long long)STD_MAX_MS, (long long)cfg->deadline_ms);
  if (cfg->attempt_timeout_ms < 0 || cfg->attempt_timeout_ms > STD_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "attempt_timeout_ms",
                        "attempt_timeout_ms must be 0 (none) or in [1, %lld] "
                        "(got %lld)",
                        (long long)STD_MAX_MS,
                        (long long)cfg->attempt_timeout_ms);
  {
    /* min_attempt_ms is the pipeline's: its own rule. */
    bw_pipeline_config_t pc;
    bw_pipeline_config_init(&pc);
    pc.min_attempt_ms = cfg->min_attempt_ms;
    if (bw_pipeline_config_validate(&pc, err) != BW_OK) return BW_E_INVAL;
  }
  if (cfg->limit_wait_ms < 0 || cfg->limit_wait_ms > STD_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "limit_wait_ms",
                        "limit_wait_ms must be in [0, %lld] (got %lld)",
                        (long long)STD_MAX_MS, (long long)cfg->limit_wait_ms);
  if (cfg->use_budget && !cfg->use_retry)
    return bw_error_set(err, BW_E_INVAL, "use_budget",
                        "use_budget needs use_retry (a budget caps retries)");
  effective(cfg, &e);
  if (e.use_limiter &&
      (rc = bw_limiter_config_validate(&e.limiter, err)) != BW_OK)
    return part_error(err, rc, "limiter");
  /* The pipeline asks only a limit inside the retry for an attempt's
   * timeout: outside it, stuck_timeout would silently do nothing. Without
   * a retry the attempt is the call, and the limit is asked. */
  if (e.use_limiter && e.use_retry && e.limiter.stuck_timeout &&
      !e.limit_per_attempt)
    return bw_error_set(err, BW_E_INVAL, "limiter.stuck_timeout",
                        "limiter.stuck_timeout needs limit_per_attempt (the "
                        "limiter inside the retry, where an attempt can be "
                        "cut and retried)");
  if (e.use_breaker &&
      (rc = bw_breaker_config_validate(&e.breaker, err)) != BW_OK)
    return part_error(err, rc, "breaker");
  if (e.use_retry && (rc = bw_retry_config_validate(&e.retry, err)) != BW_OK)
    return part_error(err, rc, "retry");
  if (e.use_budget && (rc = bw_budget_config_validate(&e.budget, err)) != BW_OK)
    return part_error(err, rc, "budget");
  return BW_OK;
}

void bw_http_standard_free(bw_http_standard_t *s) {
  if (s == NULL) return;
  bw_pipeline_free(s->pipeline);
  bw_retry_policy_free(s->retry);
  bw_budget_free(s->budget);
  bw_breaker_free(s->breaker);
  bw_limiter_free(s->limiter);
  bw_free(s);
}

bw_http_standard_t *bw_http_standard_new(const bw_http_standard_config_t *cfg,
                                         bw_error_t *err) {
  bw_http_standard_config_t e;
  bw_pipeline_config_t pc;
  bw_http_standard_t *s;
  int add = BW_OK;
  if (bw_http_standard_config_validate(cfg, err) != BW_OK) return NULL;
  effective(cfg, &e);
  s = bw_calloc(1, sizeof(*s));
  if (s == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the preset");
    return NULL;
  }
  /* Validated above: a failure here is an allocation's (the part's
   * constructor set err). */
  if (e.use_limiter && (s->limiter = bw_limiter_new(&e.limiter, err)) == NULL)
    goto fail;
  if (e.use_breaker && (s->breaker = bw_breaker_new(&e.breaker, err)) == NULL)
    goto fail;
  if (e.use_budget && (s->budget = bw_budget_new(&e.budget, err)) == NULL)
    goto fail;
  if (e.use_retry) {
    e.retry.budget = s->budget;
    if ((s->retry = bw_retry_policy_new(&e.retry, err)) == NULL) goto fail;
  }
  bw_pipeline_config_init(&pc);
  pc.name = e.name;
  pc.sink = e.sink;
  pc.min_attempt_ms = e.min_attempt_ms;
  add = bw_http_standard_add_strategies(&pc, &e, s->limiter, s->breaker,
                                        s->retry);
  if (add != BW_OK) { /* five strategies always fit: a bug if reached */
    bw_error_set(err, BW_E_INVAL, "", "could not assemble the pipeline");
    goto fail;
  }
  if ((s->pipeline = bw_pipeline_new(&pc, err)) == NULL) goto fail;
  return s;
fail:
  bw_http_standard_free(s);
  return NULL;
}

int bw_http_standard_add_strategies(bw_pipeline_config_t *pc,
                                    const bw_http_standard_config_t *cfg,
                                    bw_limiter_t *limiter,
                                    bw_breaker_t *breaker,
                                    bw_retry_policy_t *retry) {
  int rc = BW_OK;
  if (pc == NULL || cfg == NULL) return BW_E_INVAL;
  /* deadline -> limit -> breaker -> retry -> timeout, or with
   * limit_per_attempt deadline -> breaker -> retry -> limit -> timeout. */
  if (cfg->deadline_ms > 0 && rc == BW_OK)
    rc = bw_pipeline_add_deadline(pc, cfg->deadline_ms);
  if (limiter != NULL && !cfg->limit_per_attempt && rc == BW_OK)
    rc = bw_pipeline_add_limit(pc, bw_limiter_as_limit(limiter),
                               cfg->limit_wait_ms);
  if (breaker != NULL && rc == BW_OK) rc = bw_pipeline_add_breaker(pc, breaker);
  if (retry != NULL && rc == BW_OK) rc = bw_pipeline_add_retry(pc, retry);
  if (limiter != NULL && cfg->limit_per_attempt && rc == BW_OK)
    rc = bw_pipeline_add_limit(pc, bw_limiter_as_limit(limiter),
                               cfg->limit_wait_ms);
  if (cfg->attempt_timeout_ms > 0 && rc == BW_OK)
    rc = bw_pipeline_add_timeout(pc, cfg->attempt_timeout_ms);
  return rc;
}

const bw_pipeline_t *bw_http_standard_pipeline(const bw_http_standard_t *s) {
  return s != NULL ? s->pipeline : NULL;
}
bw_breaker_t *bw_http_standard_breaker(const bw_http_standard_t *s) {
  return s != NULL ? s->breaker : NULL;
}
bw_limiter_t *bw_http_standard_limiter(const bw_http_standard_t *s) {
  return s != NULL ? s->limiter : NULL;
}
bw_retry_policy_t *bw_http_standard_retry(const bw_http_standard_t *s) {
  return s != NULL ? s->retry : NULL;
}
bw_budget_t *bw_http_standard_budget(const bw_http_standard_t *s) {
  return s != NULL ? s->budget : NULL;
}

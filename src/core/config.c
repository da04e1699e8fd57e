/* breakwater — configuration by name: each kind's init and validate, and
 * reading a kind's fields from the environment (config.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "breakwater/config.h"
#include "breakwater/hedge.h"
#include "breakwater/http_standard.h"
#include "breakwater/store.h"

extern char **environ; /* POSIX: the process environment */

/* The registry and the reprocessor have no validate function: the checks
 * their constructors make of the settable fields, with their messages. */
static int registry_validate(const void *cfg, bw_error_t *err) {
  const bw_registry_config_t *c = cfg;
  if (c->idle_evict_ms < 0)
    return bw_error_set(err, BW_E_INVAL, "idle_evict_ms",
                        "idle_evict_ms must be >= 0 (got %" PRId64 ")",
                        c->idle_evict_ms);
  bw_error_clear(err);
  return BW_OK;
}

static int reprocessor_validate(const void *cfg, bw_error_t *err) {
  const bw_reprocessor_config_t *c = cfg;
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (c->batch < 1)
    return bw_error_set(err, BW_E_INVAL, "batch", "batch must be >= 1 (got 0)");
  if (c->visibility_ms < 1)
    return bw_error_set(err, BW_E_INVAL, "visibility_ms",
                        "visibility_ms must be >= 1 (got %lld)",
                        (long long)c->visibility_ms);
  if (c->retry_delay_ms < 0)
    return bw_error_set(err, BW_E_INVAL, "retry_delay_ms",
                        "retry_delay_ms must be >= 0 (got %lld)",
                        (long long)c->retry_delay_ms);
  bw_error_clear(err);
  return BW_OK;
}

/* Adapters: each kind's functions take its own type. */
#define ADAPT(kind, T, init, validate)                       \
  static void kind##_init(void *c) {                         \
    init((T *)c);                                            \
  }                                                          \
  static int kind##_validate(const void *c, bw_error_t *e) { \
    return validate((const T *)c, e);                        \
  }
ADAPT(breaker, bw_breaker_config_t, bw_breaker_config_init,
      bw_breaker_config_validate)
ADAPT(retry, bw_retry_config_t, bw_retry_config_init, bw_retry_config_validate)
ADAPT(budget, bw_budget_config_t, bw_budget_config_init,
      bw_budget_config_validate)
ADAPT(bulkhead, bw_bulkhead_config_t, bw_bulkhead_config_init,
      bw_bulkhead_config_validate)
ADAPT(limiter, bw_limiter_config_t, bw_limiter_config_init,
      bw_limiter_config_validate)
ADAPT(ratelimit, bw_ratelimit_config_t, bw_ratelimit_config_init,
      bw_ratelimit_config_validate)
ADAPT(queue, bw_queue_store_config_t, bw_queue_store_config_init,
      bw_queue_store_config_validate)
ADAPT(pqueue, bw_queue_config_t, bw_queue_config_init, bw_queue_config_validate)
ADAPT(idem, bw_idem_config_t, bw_idem_config_init, bw_idem_config_validate)
ADAPT(gauge, bw_gauge_config_t, bw_gauge_config_init, bw_gauge_config_validate)
ADAPT(stage, bw_stage_config_t, bw_stage_config_init, bw_stage_config_validate)
ADAPT(batch, bw_batch_config_t, bw_batch_config_init, bw_batch_config_validate)
ADAPT(degrade, bw_degrade_config_t, bw_degrade_config_init,
      bw_degrade_config_validate)
ADAPT(hedge, bw_hedge_config_t, bw_hedge_config_init, bw_hedge_config_validate)
ADAPT(http, bw_http_standard_config_t, bw_http_standard_config_init,
      bw_http_standard_config_validate)
ADAPT(throttle, bw_throttle_config_t, bw_throttle_config_init,
      bw_throttle_config_validate)
#undef ADAPT

static void registry_init(void *c) {
  bw_registry_config_init(c);
}
static void reprocessor_init(void *c) {
  bw_reprocessor_config_init(c);
}

static const struct {
  size_t size;
  void (*init)(void *);
  int (*validate)(const void *, bw_error_t *);
} ops[BW_CONFIG__COUNT] = {
    {sizeof(bw_breaker_config_t), breaker_init, breaker_validate},
    {sizeof(bw_retry_config_t), retry_init, retry_validate},
    {sizeof(bw_budget_config_t), budget_init, budget_validate},
    {sizeof(bw_bulkhead_config_t), bulkhead_init, bulkhead_validate},
    {sizeof(bw_limiter_config_t), limiter_init, limiter_validate},
    {sizeof(bw_ratelimit_config_t), ratelimit_init, ratelimit_validate},
    {sizeof(bw_queue_store_config_t), queue_init, queue_validate},
    {sizeof(bw_queue_config_t), pqueue_init, pqueue_validate},
    {sizeof(bw_idem_config_t), idem_init, idem_validate},
    {sizeof(bw_gauge_config_t), gauge_init, gauge_validate},
    {sizeof(bw_stage_config_t), stage_init, stage_validate},
    {sizeof(bw_batch_config_t), batch_init, batch_validate},
    {sizeof(bw_degrade_config_t), degrade_init, degrade_validate},
    {sizeof(bw_registry_config_t), registry_init, registry_validate},
    {sizeof(bw_reprocessor_config_t), reprocessor_init, reprocessor_validate},
    {sizeof(bw_hedge_config_t), hedge_init, hedge_validate},
    {sizeof(bw_http_standard_config_t), http_init, http_validate},
    {sizeof(bw_throttle_config_t), throttle_init, throttle_validate},
};

/* Room for any kind's struct, aligned for all of them. */
typedef union any_config_u {
  bw_breaker_config_t breaker;
  bw_retry_config_t retry;
  bw_budget_config_t budget;
  bw_bulkhead_config_t bulkhead;
  bw_limiter_config_t limiter;
  bw_ratelimit_config_t ratelimit;
  bw_queue_store_config_t queue;
  bw_queue_config_t pqueue;
  bw_idem_config_t idem;
  bw_gauge_config_t gauge;
  bw_stage_config_t stage;
  bw_batch_config_t batch;
  bw_degrade_config_t degrade;
  bw_registry_config_t registry;
  bw_reprocessor_config_t reprocessor;
  bw_hedge_config_t hedge;
  bw_http_standard_config_t http;
  bw_throttle_config_t throttle;
} any_config_t;

static int kind_ok(bw_config_kind_t kind) {
  return (unsigned)kind < (unsigned)BW_CONFIG__COUNT;
}

size_t bw_config_size(bw_config_kind_t kind) {
  return kind_ok(kind) ? ops[kind].size : 0;
}

int bw_config_init(bw_config_kind_t kind, void *cfg) {
  if (!kind_ok(kind) || cfg == NULL) return BW_E_INVAL;
  ops[kind].init(cfg);
  return BW_OK;
}

int bw_config_validate(bw_config_kind_t kind, const void *cfg,
                       bw_error_t *err) {
  if (!kind_ok(kind))
    return bw_error_set(err, BW_E_INVAL, "kind",
                        "kind must be a bw_config_kind_t below %d (got %d)",
                        (int)BW_CONFIG__COUNT, (int)kind);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  return ops[kind].validate(cfg, err);
}

/* ---- the environment -------------------------------------------------------
 */

#define ENV_NAME_MAX 256

/* Appends s to buf[*len..] by the naming rule: letters upper-cased, digits
 * kept, each run of anything else one '_', none at either end of s; a '_'
 * first when buf is not empty and s has something to add. Returns -1 when
 * it does not fit. */
static int append_part(char *buf, size_t *len, size_t size, const char *s) {
  int pending = *len > 0, any = 0;
  if (s == NULL) return 0;
  for (; *s != '\0'; s++) {
    char c = *s;
    int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9');
    if (!alnum) {
      if (any) pending = 1;
      continue;
    }
    if (pending) {
      if (*len + 1 >= size) return -1;
      buf[(*len)++] = '_';
      pending = 0;
    }
    if (*len + 1 >= size) return -1;
    buf[(*len)++] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
    any = 1;
  }
  buf[*len] = '\0';
  return 0;
}

/* PREFIX_INSTANCE_KIND into buf. */
static int env_stem(const char *prefix, bw_config_kind_t kind,
                    const char *instance, char *buf, size_t size, size_t *len) {
  *len = 0;
  buf[0] = '\0';
  if (append_part(buf, len, size, prefix) != 0 ||
      append_part(buf, len, size, instance) != 0 ||
      append_part(buf, len, size, bw_config_kind_name(kind)) != 0)
    return -1;
  return 0;
}

int bw_config_env_name(const char *prefix, bw_config_kind_t kind,
                       const char *instance, const char *field, char *buf,
                       size_t size) {
  char name[ENV_NAME_MAX];
  size_t len;
  if (buf == NULL || size == 0 || field == NULL) return BW_E_INVAL;
  if (!kind_ok(kind) || bw_config_field(kind, field) == NULL)
    return BW_E_NOTFOUND;
  if (env_stem(prefix, kind, instance, name, sizeof name, &len) != 0 ||
      append_part(name, &len, sizeof name, field) != 0 || len >= size)
    return BW_E_RANGE;
  memcpy(buf, name, len + 1);
  return BW_OK;
}

/* The field whose variable is `var` (whose first stem_len bytes are the
 * stem and a '_'), or NULL. */
static const bw_config_field_t *field_of(bw_config_kind_t kind, const char *var,
                                         size_t var_len, size_t stem_len) {
  size_t n;
  const bw_config_field_t *fields = bw_config_fields(kind, &n);
  for (size_t i = 0; i < n; i++) {
    char f[ENV_NAME_MAX];
    size_t len = 0;
    if (append_part(f, &len, sizeof f, fields[i].name) != 0) continue;
    if (var_len - stem_len == len && memcmp(var + stem_len, f, len) == 0)
      return &fields[i];
  }
  return NULL;
}

int bw_config_from_env(const char *prefix, bw_config_kind_t kind,
                       const char *instance, void *cfg, bw_error_t *err) {
  char stem[ENV_NAME_MAX];
  size_t stem_len;
  any_config_t work;
  int rc;
  if (!kind_ok(kind))
    return bw_error_set(err, BW_E_NOTFOUND, "kind",
                        "kind must be a bw_config_kind_t below %d (got %d)",
                        (int)BW_CONFIG__COUNT, (int)kind);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (env_stem(prefix, kind, instance, stem, sizeof stem - 1, &stem_len) != 0)
    return bw_error_set(err, BW_E_INVAL, "",
                        "the variables' prefix, instance and kind must be "
                        "under %d bytes together",
                        ENV_NAME_MAX - 2);
  stem[stem_len++] = '_';
  stem[stem_len] = '\0';
  memcpy(&work, cfg, ops[kind].size);
  for (char **e = environ; e != NULL && *e != NULL; e++) {
    const char *var = *e, *eq = strchr(var, '=');
    const bw_config_field_t *f;
    size_t var_len;
    bw_error_t sub;
    if (eq == NULL || strncmp(var, stem, stem_len) != 0) continue;
    var_len = (size_t)(eq - var);
    f = field_of(kind, var, var_len, stem_len);
    if (f == NULL)
      return bw_error_set(err, BW_E_NOTFOUND, "",
                          "%.*s is not a %s field's variable: %s fields are "
                          "read from %s<FIELD> (breakwater config show %s "
                          "lists them)",
                          (int)(var_len > 64 ? 64 : var_len), var,
                          bw_config_kind_name(kind), bw_config_kind_name(kind),
                          stem, bw_config_kind_name(kind));
    rc = bw_config_set(kind, &work, f->name, eq + 1, &sub);
    if (rc != BW_OK)
      return bw_error_set(err, rc, sub.field, "%.*s: %s",
                          (int)(var_len > 64 ? 64 : var_len), var, sub.message);
  }
  rc = bw_config_validate(kind, &work, err);
  if (rc != BW_OK) return rc;
  memcpy(cfg, &work, ops[kind].size);
  return BW_OK;
}

/* breakwater — pipelines: strategies stacked outermost first, one sans-I/O
 * state machine per call (see pipeline.h for the semantics). */
#include "breakwater/pipeline.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"

enum {
  PH_IDLE = 0, /* not begun, or finished and reusable */
  PH_ATTEMPT,  /* waiting for bw_pipeline_report */
  PH_WAIT,     /* waiting for bw_pipeline_resume */
  PH_DONE
};

/* Per-stripe counters: one BW__PAIR line each. */
typedef struct bw__pstripe_s {
  _Atomic uint64_t calls;
  _Atomic uint64_t attempts;
  _Atomic uint64_t cancelled;
  _Atomic uint64_t ended[BW_FAILURE__COUNT];         /* [NONE] = successes */
  _Atomic uint64_t lat[BW_PIPELINE_MAX_BUCKETS + 1]; /* per bucket */
  _Atomic uint64_t lat_sum_ns;
} BW__PAIR_ALIGNED bw__pstripe_t;

/* A built-in strategy: the interface head and what it needs. */
typedef struct bw__builtin_s {
  bw_strategy_if_t head;
  void *object;    /* the ratelimit, limit or breaker interface */
  int64_t ms;      /* DEADLINE, TIMEOUT */
  int64_t poll_ms; /* LIMIT */
} bw__builtin_t;

struct bw_pipeline_s {
  bw__pstripe_t stripes[BW__STRIPES];
  char *name;
  uint32_t count;
  uint32_t retry_at; /* index of the retry, or count when there is none */
  /* Bit i: strategy i is a limit inside the retry (or with no retry) whose
   * object may cut each attempt's time limit (bw_limit_attempt_timeout). */
  uint32_t attempt_limits;
  /* What the state machine calls: strategy i's interface (a built-in's or
   * the user's), NULL at retry_at (the retry is the loop, not a strategy). */
  bw_strategy_if_t *si[BW_PIPELINE_MAX_STRATEGIES];
  int64_t max_wait_ms[BW_PIPELINE_MAX_STRATEGIES];
  bw__builtin_t b[BW_PIPELINE_MAX_STRATEGIES];
  bw_strategy_t s[BW_PIPELINE_MAX_STRATEGIES];
  bw_fallback_fn fallback;
  void *fallback_userdata;
  uint32_t nbuckets;                          /* latency bounds */
  int64_t bucket_ns[BW_PIPELINE_MAX_BUCKETS]; /* upper bounds */
  bw_sink_t *sink;
  const bw_clock_t *wall;
  int64_t min_attempt_ms; /* 0 = off */
};

/* The default latency bounds, 1 ms .. 30 s, in microseconds. */
static const int64_t default_buckets_us[] = {
    1000,   2500,   5000,    10000,   25000,   50000,    100000,
    250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000};

static const char *const kind_names[] = {
    "deadline", "ratelimit", "limit", "breaker", "retry", "timeout", "custom"};

const char *bw_strategy_kind_name(bw_strategy_kind_t k) {
  return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k]
                                                                : "unknown";
}

static const char *const failure_names[BW_FAILURE__COUNT] = {
    "none",        "breaker",        "limit",     "ratelimit",
    "budget",      "exhausted",      "permanent", "deadline",
    "retry_after", "not_idempotent", "elapsed"};

const char *bw_failure_name(bw_failure_t f) {
  return (unsigned)f < BW_FAILURE__COUNT ? failure_names[f] : "unknown";
}

/* ---- configuration ------------------------------------------------------ */

void bw_pipeline_config_init(bw_pipeline_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof *cfg);
  cfg->name = "pipeline";
}

static int add(bw_pipeline_config_t *cfg, bw_strategy_kind_t kind, void *object,
               int64_t ms, int64_t max_wait_ms) {
  if (cfg == NULL) return BW_E_INVAL;
  if (cfg->count >= BW_PIPELINE_MAX_STRATEGIES) return BW_E_LIMIT;
  bw_strategy_t *s = &cfg->strategies[cfg->count++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->object = object;
  s->ms = ms;
  s->max_wait_ms = max_wait_ms;
  s->poll_ms = kind == BW_STRATEGY_LIMIT ? 5 : 0;
  return BW_OK;
}

int bw_pipeline_add_deadline(bw_pipeline_config_t *cfg, int64_t ms) {
  return add(cfg, BW_STRATEGY_DEADLINE, NULL, ms, 0);
}
int bw_pipeline_add_timeout(bw_pipeline_config_t *cfg, int64_t ms) {
  return add(cfg, BW_STRATEGY_TIMEOUT, NULL, ms, 0);
}
int bw_pipeline_add_ratelimit(bw_pipeline_config_t *cfg, bw_ratelimit_t *rl,
                              int64_t max_wait_ms) {
  if (rl == NULL) return BW_E_INVAL;
  return add(cfg, BW_STRATEGY_RATELIMIT, rl, 0, max_wait_ms);
}
int bw_pipeline_add_limit(bw_pipeline_config_t *cfg, bw_limit_t *l,
                          int64_t max_wait_ms) {
  if (l == NULL) return BW_E_INVAL;
  return add(cfg, BW_STRATEGY_LIMIT, l, 0, max_wait_ms);
}
int bw_pipeline_add_breaker_if(bw_pipeline_config_t *cfg, bw_breaker_if_t *b) {
  if (b == NULL || b->vt == NULL) return BW_E_INVAL;
  return add(cfg, BW_STRATEGY_BREAKER, b, 0, 0);
}
int bw_pipeline_add_breaker(bw_pipeline_config_t *cfg, bw_breaker_t *b) {
  return bw_pipeline_add_breaker_if(cfg, bw_breaker_iface(b));
}
int bw_pipeline_add_strategy(bw_pipeline_config_t *cfg, bw_strategy_if_t *s,
                             int64_t max_wait_ms) {
  if (s == NULL || s->vt == NULL) return BW_E_INVAL;
  return add(cfg, BW_STRATEGY_CUSTOM, s, 0, max_wait_ms);
}
int bw_pipeline_add_retry(bw_pipeline_config_t *cfg,
                          const bw_retry_policy_t *p) {
  if (p == NULL) return BW_E_INVAL;
  return add(cfg, BW_STRATEGY_RETRY, (void *)(uintptr_t)p, 0, 0);
}

#define MAX_MS (INT64_C(86400000) * 365) /* a year */

int bw_pipeline_config_validate(const bw_pipeline_config_t *cfg,
                                bw_error_t *err) {
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "cfg", "cfg must not be NULL");
  int rc = bw_name_check(cfg->name, "name", err);
  if (rc != BW_OK) return rc;
  if (cfg->count > BW_PIPELINE_MAX_STRATEGIES)
    return bw_error_set(err, BW_E_INVAL, "count",
                        "count must be <= %d (got %u)",
                        BW_PIPELINE_MAX_STRATEGIES, cfg->count);
  if (cfg->min_attempt_ms < 0 || cfg->min_attempt_ms > 86400000)
    return bw_error_set(err, BW_E_INVAL, "min_attempt_ms",
                        "min_attempt_ms must be in [0, 86400000], 0 for off "
                        "(got %lld)",
                        (long long)cfg->min_attempt_ms);
  if (cfg->latency_bucket_count > BW_PIPELINE_MAX_BUCKETS)
    return bw_error_set(err, BW_E_INVAL, "latency_bucket_count",
                        "latency_bucket_count must be <= %d (got %u)",
                        BW_PIPELINE_MAX_BUCKETS, cfg->latency_bucket_count);
  for (uint32_t i = 0; i < cfg->latency_bucket_count; i++) {
    int64_t v = cfg->latency_buckets_us[i];
    if (v <= 0 || v > MAX_MS * 1000 ||
        (i > 0 && v <= cfg->latency_buckets_us[i - 1]))
      return bw_error_set(err, BW_E_INVAL, "latency_buckets_us",
                          "latency_buckets_us must be > 0, at most a year and "
                          "strictly increasing (bound %u is %lld)",
                          i, (long long)v);
  }
  int retry_at = -1, deadline_at = -1, timeout_at = -1;
  for (uint32_t i = 0; i < cfg->count; i++) {
    const bw_strategy_t *s = &cfg->strategies[i];
    char field[32];
    snprintf(field, sizeof field, "strategies[%u]", i);
    switch (s->kind) {
    case BW_STRATEGY_DEADLINE:
    case BW_STRATEGY_TIMEOUT: {
      int *at = s->kind == BW_STRATEGY_DEADLINE ? &deadline_at : &timeout_at;
      if (*at >= 0)
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s: at most one %s (strategies[%d] is one)", field,
                            bw_strategy_kind_name(s->kind), *at);
      *at = (int)i;
      if (s->ms < 1 || s->ms > MAX_MS)
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s.ms must be in [1, %lld] (got %lld)", field,
                            (long long)MAX_MS, (long long)s->ms);
      break;
    }
    case BW_STRATEGY_RATELIMIT:
    case BW_STRATEGY_LIMIT:
    case BW_STRATEGY_CUSTOM:
      if (s->object == NULL)
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s.object must not be NULL (a %s)", field,
                            s->kind == BW_STRATEGY_LIMIT    ? "bw_limit_t"
                            : s->kind == BW_STRATEGY_CUSTOM ? "bw_strategy_if_t"
                                                            : "bw_ratelimit_t");
      if (s->kind == BW_STRATEGY_CUSTOM) {
        const bw_strategy_if_t *si = s->object;
        if (si->vt == NULL || si->vt->enter == NULL || si->vt->name == NULL)
          return bw_error_set(err, BW_E_INVAL, field,
                              "%s.object's table must be set, with enter and "
                              "name",
                              field);
      }
      if (s->max_wait_ms < 0 || s->max_wait_ms > MAX_MS)
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s.max_wait_ms must be in [0, %lld] (got %lld)",
                            field, (long long)MAX_MS,
                            (long long)s->max_wait_ms);
      if (s->kind == BW_STRATEGY_LIMIT &&
          (s->poll_ms < 1 || s->poll_ms > MAX_MS))
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s.poll_ms must be in [1, %lld] (got %lld)", field,
                            (long long)MAX_MS, (long long)s->poll_ms);
      break;
    case BW_STRATEGY_BREAKER:
      if (s->object == NULL || ((const bw_breaker_if_t *)s->object)->vt == NULL)
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s.object must be a bw_breaker_if_t with its "
                            "table set",
                            field);
      break;
    case BW_STRATEGY_RETRY:
      if (s->object == NULL)
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s.object must not be NULL (a bw_retry_policy_t)",
                            field);
      if (retry_at >= 0)
        return bw_error_set(err, BW_E_INVAL, field,
                            "%s: at most one retry (strategies[%d] is one)",
                            field, retry_at);
      retry_at = (int)i;
      break;
    default:
      return bw_error_set(err, BW_E_INVAL, field,
                          "%s.kind must be a bw_strategy_kind_t (got %d)",
                          field, (int)s->kind);
    }
  }
  if (retry_at >= 0 && deadline_at > retry_at)
    return bw_error_set(err, BW_E_INVAL, "strategies",
                        "strategies[%d]: a deadline must come before the retry "
                        "(strategies[%d]); use a timeout for each attempt",
                        deadline_at, retry_at);
  if (retry_at >= 0 && timeout_at >= 0 && timeout_at < retry_at)
    return bw_error_set(err, BW_E_INVAL, "strategies",
                        "strategies[%d]: a timeout must come after the retry "
                        "(strategies[%d]); use a deadline for the whole call",
                        timeout_at, retry_at);
  bw_error_clear(err);
  return BW_OK;
}

/* ---- the built-in strategies ------------------------------------------- */

#define BUILTIN(s) ((const bw__builtin_t *)(const void *)(s))

static const bw_strategy_vtable_t builtin_tables[BW_STRATEGY_CUSTOM + 1];
static const bw_strategy_vtable_t inproc_breaker_vt;

static const char *builtin_name(const bw_strategy_if_t *s) {
  const bw__builtin_t *b = BUILTIN(s);
  switch (b->head.vt == &inproc_breaker_vt ? BW_STRATEGY_BREAKER
                                           : b->head.vt - builtin_tables) {
  case BW_STRATEGY_LIMIT:
    return bw_limit_name((const bw_limit_t *)b->object);
  case BW_STRATEGY_BREAKER:
    return bw_breaker_if_name((const bw_breaker_if_t *)b->object);
  case BW_STRATEGY_RATELIMIT:
    return bw_ratelimit_name((const bw_ratelimit_t *)b->object);
  default:
    return b->head.vt->kind;
  }
}

/* The deadline: the call's deadline narrows to its start + ms. */
static int deadline_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                          int64_t now_ns, bw_refusal_t *r) {
  (void)now_ns;
  (void)r;
  *ctx->deadline = bw_deadline_min(
      *ctx->deadline, bw_deadline_in(ctx->start_ns, BUILTIN(s)->ms));
  return BW_OK;
}

/* The timeout: this attempt's time limit narrows to ms. */
static int timeout_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                         int64_t now_ns, bw_refusal_t *r) {
  (void)now_ns;
  (void)r;
  int64_t ms = BUILTIN(s)->ms;
  if (*ctx->timeout_ms < 0 || ms < *ctx->timeout_ms) *ctx->timeout_ms = ms;
  return BW_OK;
}

/* The rate limit: one token, or the exact wait for the next. */
static int ratelimit_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                           int64_t now_ns, bw_refusal_t *r) {
  (void)ctx;
  (void)now_ns;
  int64_t wait_ms = 0;
  int rc =
      bw_ratelimit_try_acquire((bw_ratelimit_t *)BUILTIN(s)->object, &wait_ms);
  if (rc == BW_OK) return BW_OK;
  r->failure = BW_FAILURE_RATELIMIT;
  r->retry_in_ms = wait_ms;
  r->exact = true;
  return rc;
}

/* The limit: a slot, or a poll interval that doubles with each refusal in
 * a wait, up to 8 x poll_ms (many waiting calls must not become a polling
 * storm of their own). */
static int limit_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                       int64_t now_ns, bw_refusal_t *r) {
  (void)now_ns;
  const bw__builtin_t *b = BUILTIN(s);
  bw_limit_t *l = b->object;
  int rc = l->vt->try_acquire(l, ctx->permit);
  if (rc == BW_OK) return BW_OK;
  if (rc == BW_E_DEADLINE) {
    r->failure = BW_FAILURE_DEADLINE;
    return rc;
  }
  r->failure = BW_FAILURE_LIMIT;
  r->retry_in_ms = b->poll_ms << (ctx->asks < 3 ? ctx->asks : 3);
  return rc;
}

static void limit_leave(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                        bw_outcome_t o) {
  (void)bw_limit_release((bw_limit_t *)BUILTIN(s)->object, ctx->permit, o);
}

/* The breaker: any bw_breaker_if_t; a refusal is never waited on. */
static int breaker_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                         int64_t now_ns, bw_refusal_t *r) {
  (void)now_ns;
  bw_breaker_if_t *b = BUILTIN(s)->object;
  int rc = b->vt->try_acquire(b, ctx->permit);
  if (rc == BW_OK) return BW_OK;
  r->failure = BW_FAILURE_BREAKER;
  return rc;
}

static void breaker_leave(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                          bw_outcome_t o) {
  (void)bw_breaker_if_release((bw_breaker_if_t *)BUILTIN(s)->object,
                              ctx->permit, o);
}

/* The in-process breaker, called directly (the same as above through its
 * table; one indirect call less on the hot path). */
static int inproc_breaker_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                                int64_t now_ns, bw_refusal_t *r) {
  (void)now_ns;
  int rc = bw_breaker_acquire((bw_breaker_t *)BUILTIN(s)->object, ctx->permit);
  if (BW__LIKELY(rc == BW_OK)) return BW_OK;
  r->failure = BW_FAILURE_BREAKER;
  return rc;
}

static void inproc_breaker_leave(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                                 bw_outcome_t o) {
  (void)bw_breaker_release((bw_breaker_t *)BUILTIN(s)->object, ctx->permit,
                           o == BW_TIMED_OUT ? BW_FAILURE : o);
}

static const bw_strategy_vtable_t inproc_breaker_vt = {
    "breaker", inproc_breaker_enter, inproc_breaker_leave, builtin_name};

/* Indexed by bw_strategy_kind_t; the retry's and a user's entries are never
 * called (the retry is the loop; a user's strategy brings its own). */
static const bw_strategy_vtable_t builtin_tables[BW_STRATEGY_CUSTOM + 1] = {
    [BW_STRATEGY_DEADLINE] = {"deadline", deadline_enter, NULL, builtin_name},
    [BW_STRATEGY_RATELIMIT] = {"ratelimit", ratelimit_enter, NULL,
                               builtin_name},
    [BW_STRATEGY_LIMIT] = {"limit", limit_enter, limit_leave, builtin_name},
    [BW_STRATEGY_BREAKER] = {"breaker", breaker_enter, breaker_leave,
                             builtin_name},
    [BW_STRATEGY_RETRY] = {"retry", NULL, NULL, builtin_name},
    [BW_STRATEGY_TIMEOUT] = {"timeout", timeout_enter, NULL, builtin_name},
    [BW_STRATEGY_CUSTOM] = {"custom", NULL, NULL, builtin_name},
};
#define builtin_vt(k) (&builtin_tables[(k)])

const char *bw_strategy_if_name(const bw_strategy_if_t *s) {
  return s == NULL || s->vt == NULL || s->vt->name == NULL ? ""
                                                           : s->vt->name(s);
}

const char *bw_strategy_if_kind(const bw_strategy_if_t *s) {
  return s == NULL || s->vt == NULL || s->vt->kind == NULL ? "" : s->vt->kind;
}

bw_pipeline_t *bw_pipeline_new(const bw_pipeline_config_t *cfg,
                               bw_error_t *err) {
  if (bw_pipeline_config_validate(cfg, err) != BW_OK) return NULL;
  bw_pipeline_t *pl = bw_calloc_aligned(sizeof *pl);
  char *name = bw_strdup(cfg->name);
  if (pl == NULL || name == NULL) {
    bw_free_aligned(pl);
    bw_free(name);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  pl->name = name;
  pl->count = cfg->count;
  const int64_t *bounds = cfg->latency_buckets_us;
  pl->nbuckets = cfg->latency_bucket_count;
  if (pl->nbuckets == 0) {
    bounds = default_buckets_us;
    pl->nbuckets = sizeof default_buckets_us / sizeof default_buckets_us[0];
  }
  for (uint32_t i = 0; i < pl->nbuckets; i++)
    pl->bucket_ns[i] = bounds[i] * 1000;
  pl->retry_at = cfg->count;
  memcpy(pl->s, cfg->strategies, sizeof pl->s);
  for (uint32_t i = 0; i < cfg->count; i++) {
    const bw_strategy_t *s = &pl->s[i];
    bw__builtin_t *b = &pl->b[i];
    pl->max_wait_ms[i] = s->max_wait_ms;
    b->object = s->object;
    b->ms = s->ms;
    b->poll_ms = s->poll_ms;
    b->head.vt = builtin_vt(s->kind);
    pl->si[i] = &b->head;
    if (s->kind == BW_STRATEGY_BREAKER &&
        ((const bw_breaker_if_t *)s->object)->vt == &bw__breaker_vt)
      b->head.vt = &inproc_breaker_vt;
    if (s->kind == BW_STRATEGY_RETRY) {
      pl->retry_at = i;
      pl->si[i] = NULL;
    } else if (s->kind == BW_STRATEGY_CUSTOM) {
      pl->si[i] = (bw_strategy_if_t *)s->object;
    }
  }
  pl->attempt_limits = 0;
  for (uint32_t i = 0; i < cfg->count; i++) {
    const bw_limit_t *l = pl->s[i].object;
    if (pl->s[i].kind == BW_STRATEGY_LIMIT &&
        (pl->retry_at >= cfg->count || i > pl->retry_at) && l->vt != NULL &&
        (l->vt->flags & BW_LIMIT_VT_ATTEMPT_TIMEOUT))
      pl->attempt_limits |= 1u << i;
  }
  pl->fallback = cfg->fallback;
  pl->fallback_userdata = cfg->fallback_userdata;
  pl->sink = cfg->sink;
  pl->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  pl->min_attempt_ms = cfg->min_attempt_ms;
  return pl;
}

void bw_pipeline_free(bw_pipeline_t *pl) {
  if (pl == NULL) return;
  bw_free(pl->name);
  bw_free_aligned(pl);
}

const char *bw_pipeline_name(const bw_pipeline_t *pl) {
  return pl == NULL ? "" : pl->name;
}

void bw_pipeline_stats(const bw_pipeline_t *pl, bw_pipeline_stats_t *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (pl == NULL) return;
  unsigned used = bw_stripes_used();
  if (used > BW__STRIPES) used = BW__STRIPES;
  for (unsigned i = 0; i < used; i++) {
    const bw__pstripe_t *s = &pl->stripes[i];
    out->calls += atomic_load_explicit(&s->calls, memory_order_relaxed);
    out->attempts += atomic_load_explicit(&s->attempts, memory_order_relaxed);
    out->cancelled += atomic_load_explicit(&s->cancelled, memory_order_relaxed);
    out->successes +=
        atomic_load_explicit(&s->ended[BW_FAILURE_NONE], memory_order_relaxed);
    for (int f = 1; f < BW_FAILURE__COUNT; f++)
      out->failures[f] +=
          atomic_load_explicit(&s->ended[f], memory_order_relaxed);
    for (uint32_t b = 0; b <= pl->nbuckets; b++)
      out->latency_counts[b] +=
          atomic_load_explicit(&s->lat[b], memory_order_relaxed);
    out->latency_sum_ns +=
        atomic_load_explicit(&s->lat_sum_ns, memory_order_relaxed);
  }
  out->latency_bucket_count = pl->nbuckets;
  for (uint32_t b = 0; b < pl->nbuckets; b++)
    out->latency_buckets_us[b] = pl->bucket_ns[b] / 1000;
}

/* ---- the state machine -------------------------------------------------- */

/* Counters are mutable even through a const pipeline (like a cache). */
static bw__pstripe_t *stripe_of(const bw_pipeline_t *pl) {
  return (bw__pstripe_t *)&pl->stripes[bw__stripe()];
}

static bw_outcome_t breaker_outcome(const bw_pipeline_call_t *c) {
  if (!c->attempted) return BW_IGNORED;
  switch (c->last_verdict) {
  case BW_VERDICT_OK:
    return BW_SUCCESS;
  case BW_VERDICT_TRANSIENT:
  case BW_VERDICT_NOT_SENT:
    return BW_FAILURE;
  default:
    return BW_IGNORED;
  }
}

/* Leaves the entered strategies in [from, to), innermost first, with the
 * outcome of the last attempt. */
static void leave_as(bw_pipeline_call_t *c, uint32_t from, uint32_t to,
                     bw_outcome_t o, bool timed_out, bool cancelled) {
  const bw_pipeline_t *pl = c->pl;
  if (o == BW_FAILURE && timed_out) o = BW_TIMED_OUT;
  bw_strategy_ctx_t ctx = {NULL,        &c->deadline, &c->timeout_ms,
                           c->start_ns, c->attempt,   0,
                           cancelled};
  for (uint32_t i = to; i-- > from;) {
    if (!(c->entered & (1u << i))) continue;
    c->entered &= (uint8_t) ~(1u << i);
    bw_strategy_if_t *si = pl->si[i];
    ctx.permit = &c->permits[i];
    si->vt->leave(si, &ctx, o);
  }
}

/* Leaves [from, to) with the outcome of the last attempt. */
static void leave(bw_pipeline_call_t *c, uint32_t from, uint32_t to) {
  leave_as(c, from, to, breaker_outcome(c), c->timed_out, false);
}

/* Leaves the strategies inside the retry that were entered for an attempt
 * that never went out (a refusal or the deadline came first): IGNORED, not
 * the previous attempt's outcome, which they did not wrap. */
static void leave_unsent(bw_pipeline_call_t *c) {
  const bw_pipeline_t *pl = c->pl;
  if (pl->retry_at < pl->count)
    leave_as(c, pl->retry_at + 1, pl->count, BW_IGNORED, false, false);
}

/* One pipeline_gave_up event for a call that ended in a failure. */
static void gave_up(const bw_pipeline_call_t *c, int64_t now_ns,
                    bw_failure_t why) {
  const bw_pipeline_t *pl = c->pl;
  bw_field_t f[3];
  char reason[96];
  int64_t elapsed = now_ns > c->start_ns ? now_ns - c->start_ns : 0;
  f[0] = bw_field_str("failure", bw_failure_name(why));
  f[1] = bw_field_uint("attempts", c->attempt);
  f[2] = bw_field_int("elapsed_ms", elapsed / BW_NS_PER_MS);
  snprintf(reason, sizeof(reason), "gave up (%s) after %u attempts",
           bw_failure_name(why), (unsigned)c->attempt);
  bw_event_emit(pl->sink, pl->wall, now_ns, BW_EV_PIPELINE_GAVE_UP, pl->name,
                reason, f, 3, NULL);
}

static int finish(bw_pipeline_call_t *c, bw_failure_t why, int64_t now_ns) {
  const bw_pipeline_t *pl = c->pl;
  leave(c, 0, pl->count);
  c->failure = why;
  c->phase = PH_DONE;
  c->delay_ms = 0;
  bw__pstripe_t *st = stripe_of(pl);
  unsigned si = (unsigned)(st - pl->stripes);
  bw__bump(&st->ended[why], si);
  /* The latency histogram: a linear scan of at most 16 bounds. */
  int64_t took = now_ns > c->start_ns ? now_ns - c->start_ns : 0;
  uint32_t b = 0;
  while (b < pl->nbuckets && took > pl->bucket_ns[b])
    b++;
  bw__bump(&st->lat[b], si);
  bw__bump_n(&st->lat_sum_ns, si, (uint64_t)took);
  if (why != BW_FAILURE_NONE && pl->sink != NULL) gave_up(c, now_ns, why);
  if (why != BW_FAILURE_NONE && pl->fallback != NULL) {
    c->fallback_ran = true;
    c->fallback_rc = pl->fallback(pl->fallback_userdata, why, c);
  }
  return BW_STEP_DONE;
}

static bw_failure_t from_giveup(const bw_pipeline_call_t *c, bw_giveup_t g) {
  switch (g) {
  case BW_GIVEUP_EXHAUSTED:
    return BW_FAILURE_EXHAUSTED;
  case BW_GIVEUP_ELAPSED:
    return BW_FAILURE_ELAPSED;
  case BW_GIVEUP_PERMANENT:
    return BW_FAILURE_PERMANENT;
  case BW_GIVEUP_REJECTED:
    return c->reject != BW_FAILURE_NONE ? (bw_failure_t)c->reject
                                        : BW_FAILURE_PERMANENT;
  case BW_GIVEUP_NOT_IDEMPOTENT:
    return BW_FAILURE_NOT_IDEMPOTENT;
  case BW_GIVEUP_BUDGET:
    return BW_FAILURE_BUDGET;
  case BW_GIVEUP_DEADLINE:
    return BW_FAILURE_DEADLINE;
  case BW_GIVEUP_RETRY_AFTER_TOO_LONG:
  case BW_GIVEUP_PUSHBACK:
    return BW_FAILURE_RETRY_AFTER;
  default:
    return BW_FAILURE_EXHAUSTED;
  }
}

/* A strategy refused: inside a retry that is a REJECTED verdict (never
 * retried); outside it, or without a retry, the call ends. */
static int refuse(bw_pipeline_call_t *c, bw_failure_t why, int64_t now_ns) {
  const bw_pipeline_t *pl = c->pl;
  c->waiting = false;
  c->reject = (uint8_t)why;
  if (c->index > pl->retry_at) {
    leave_unsent(c);
    int64_t delay = 0;
    int rc = bw_retry_next(&c->retry, BW_VERDICT_REJECTED, BW_RETRY_AFTER_NONE,
                           now_ns, &delay);
    (void)rc; /* REJECTED always gives up */
    return finish(c, from_giveup(c, bw_retry_reason(&c->retry)), now_ns);
  }
  return finish(c, why, now_ns);
}

/* An admission refusal that may wait: WAIT or the refusal. */
/* A strategy refused: WAIT (when its max_wait_ms and the refusal's hint
 * allow) or the refusal. */
static int admission_wait(bw_pipeline_call_t *c, int64_t max_wait_ms,
                          const bw_refusal_t *r, int64_t now_ns) {
  if (r->retry_in_ms < 0) return refuse(c, r->failure, now_ns);
  if (!c->waiting) {
    int64_t until = max_wait_ms > (INT64_MAX - now_ns) / BW_NS_PER_MS
                        ? INT64_MAX
                        : now_ns + max_wait_ms * BW_NS_PER_MS;
    if (!bw_deadline_is_none(c->deadline) && c->deadline.at_ns < until)
      until = c->deadline.at_ns;
    c->wait_until_ns = until;
    c->waiting = true;
    c->asks = 0;
  }
  if (now_ns >= c->wait_until_ns) return refuse(c, r->failure, now_ns);
  int64_t left_ms = bw_ns_to_ms_ceil(c->wait_until_ns - now_ns);
  int64_t wait_ms = r->retry_in_ms;
  if (wait_ms > left_ms) {
    /* An exact answer (a rate limiter's next token) past the wait's end:
     * asking before that is pointless. */
    if (r->exact) return refuse(c, r->failure, now_ns);
    wait_ms = left_ms;
  }
  if (c->asks < UINT8_MAX) c->asks++;
  c->delay_ms = wait_ms < 1 ? 1 : wait_ms;
  c->phase = PH_WAIT;
  return BW_STEP_WAIT;
}

/* Enters strategies from c->index on; returns the next step. */
static int run(bw_pipeline_call_t *c, int64_t now_ns) {
  const bw_pipeline_t *pl = c->pl;
  bw_strategy_ctx_t ctx = {
      NULL, &c->deadline, &c->timeout_ms, c->start_ns, c->attempt, 0, false};
  for (;;) {
    if (BW__UNLIKELY(now_ns >= c->deadline.at_ns)) { /* none: INT64_MAX */
      c->waiting = false;
      c->reject = BW_FAILURE_DEADLINE;
      leave_unsent(c);
      return finish(c, BW_FAILURE_DEADLINE, now_ns);
    }
    if (c->index >= pl->count) break;
    uint32_t i = c->index;
    bw_strategy_if_t *si = pl->si[i];
    if (si == NULL) { /* the retry: attempts loop back to here + 1 */
      bw_retry_begin(&c->retry, (const bw_retry_policy_t *)pl->s[i].object,
                     now_ns);
      bw_retry_set_deadline(&c->retry, c->deadline);
    } else {
      ctx.permit = &c->permits[i];
      ctx.asks = c->waiting ? c->asks : 0;
      bw_refusal_t r = {BW_FAILURE_LIMIT, -1, false};
      if (BW__UNLIKELY(si->vt->enter(si, &ctx, now_ns, &r) != BW_OK)) {
        /* A user's strategy may name no failure, or a bad one. */
        if (r.failure == BW_FAILURE_NONE ||
            (unsigned)r.failure >= BW_FAILURE__COUNT)
          r.failure = BW_FAILURE_LIMIT;
        return admission_wait(c, pl->max_wait_ms[i], &r, now_ns);
      }
      if (si->vt->leave != NULL) c->entered |= (uint8_t)(1u << i);
    }
    c->waiting = false;
    c->index++;
  }
  /* Every strategy entered: the attempt. */
  int64_t t = c->timeout_ms;
  if (!bw_deadline_is_none(c->deadline)) {
    int64_t left = bw_deadline_remaining_ms(c->deadline, now_ns);
    if (left < 1) left = 1; /* not expired: less than a ms is left */
    if (left < pl->min_attempt_ms) {
      /* Too little left for an answer: send nothing (min_attempt_ms). */
      c->reject = BW_FAILURE_DEADLINE;
      leave_unsent(c);
      return finish(c, BW_FAILURE_DEADLINE, now_ns);
    }
    if (t < 0 || left < t) t = left;
  }
  /* A limit inside the retry may cut the attempt short (an adaptive
   * limiter's stuck_timeout: a call admitted above its proven level is
   * given up once it is stuck, and retried under the lowered limit). */
  for (uint32_t m = pl->attempt_limits, i = 0; m != 0; m >>= 1, i++)
    if (m & 1u)
      t = bw_limit_attempt_timeout((bw_limit_t *)pl->s[i].object,
                                   &c->permits[i], t);
  c->attempt_timeout_ms = t;
  c->attempt++;
  c->phase = PH_ATTEMPT;
  c->delay_ms = 0;
  bw__pstripe_t *st = stripe_of(pl);
  bw__bump(&st->attempts, (unsigned)(st - pl->stripes));
  return BW_STEP_ATTEMPT;
}

int bw_pipeline_begin_at(const bw_pipeline_t *pl, bw_pipeline_call_t *c,
                         bw_deadline_t outer, int64_t now_ns) {
  if (pl == NULL || c == NULL) return BW_E_INVAL;
  /* Field by field: the permits and the retry iterator (most of the
   * struct) are written when their strategies are entered, so clearing
   * them on every call would be wasted work. */
  c->attempt = 0;
  c->delay_ms = 0;
  c->attempt_timeout_ms = -1;
  c->failure = BW_FAILURE_NONE;
  c->last_verdict = BW_VERDICT_OK;
  c->fallback_rc = 0;
  c->fallback_ran = false;
  c->pl = pl;
  c->phase = PH_IDLE;
  c->index = 0;
  c->entered = 0;
  c->reject = BW_FAILURE_NONE;
  c->attempted = false;
  c->waiting = false;
  c->wait_until_ns = 0;
  c->asks = 0;
  c->timed_out = false;
  c->deadline = outer;
  c->start_ns = now_ns;
  c->timeout_ms = -1;
  bw__pstripe_t *st = stripe_of(pl);
  bw__bump(&st->calls, (unsigned)(st - pl->stripes));
  return run(c, now_ns);
}

int bw_pipeline_begin(const bw_pipeline_t *pl, bw_pipeline_call_t *c,
                      int64_t now_ns) {
  return bw_pipeline_begin_at(pl, c, bw__current, now_ns);
}

/* Whether a limit inside the retry cut the attempt just made to its stuck
 * age (its permit carries BW_PERMIT_FLAG_STUCK_TIMEOUT). */
static bool cut_by_a_limit(const bw_pipeline_call_t *c) {
  for (uint32_t m = c->pl->attempt_limits, i = 0; m != 0; m >>= 1, i++)
    if ((m & 1u) && (c->permits[i].flags & BW_PERMIT_FLAG_STUCK_TIMEOUT))
      return true;
  return false;
}

/* An attempt's end, checked by the callers (c->timed_out set by them). */
static int bw__report(bw_pipeline_call_t *c, bw_verdict_t v,
                      int64_t retry_after_ms, int64_t now_ns) {
  const bw_pipeline_t *pl = c->pl;
  c->attempted = true;
  c->last_verdict = v;
  if (pl->retry_at >= pl->count) {
    /* No retry: the attempt is the call. */
    if (v == BW_VERDICT_OK) return finish(c, BW_FAILURE_NONE, now_ns);
    return finish(
        c,
        v == BW_VERDICT_PERMANENT ? BW_FAILURE_PERMANENT : BW_FAILURE_EXHAUSTED,
        now_ns);
  }
  /* An attempt a limit inside the retry cut short (stuck_timeout) and that
   * then timed out is retried without the backoff: the limit paces it, by
   * a slot under the limit it lowered, instead of a timer. */
  bool cut = c->timed_out && cut_by_a_limit(c);
  leave(c, pl->retry_at + 1, pl->count);
  int64_t delay = 0;
  int rc = cut ? bw__retry_next_paced(&c->retry, v, now_ns, &delay)
               : bw_retry_next(&c->retry, v, retry_after_ms, now_ns, &delay);
  if (rc == BW_RETRY_DONE) return finish(c, BW_FAILURE_NONE, now_ns);
  if (rc != BW_RETRY)
    return finish(c, from_giveup(c, bw_retry_reason(&c->retry)), now_ns);
  c->index = (uint8_t)(pl->retry_at + 1);
  c->timeout_ms = -1; /* the attempt's strategies set it again */
  c->delay_ms = delay;
  c->phase = PH_WAIT;
  if (delay > 0) return BW_STEP_WAIT;
  return run(c, now_ns);
}

int bw_pipeline_report(bw_pipeline_call_t *c, bw_verdict_t v,
                       int64_t retry_after_ms, int64_t now_ns) {
  if (c == NULL || c->pl == NULL || c->phase != PH_ATTEMPT ||
      (unsigned)v > BW_VERDICT_REJECTED ||
      retry_after_ms < BW_RETRY_AFTER_NEVER)
    return BW_E_INVAL;
  c->timed_out = false;
  return bw__report(c, v, retry_after_ms, now_ns);
}

int bw_pipeline_report_timeout(bw_pipeline_call_t *c, int64_t now_ns) {
  if (c == NULL || c->pl == NULL || c->phase != PH_ATTEMPT) return BW_E_INVAL;
  c->timed_out = true; /* leave() hands the limits TIMED_OUT */
  return bw__report(c, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, now_ns);
}

int bw_pipeline_resume(bw_pipeline_call_t *c, int64_t now_ns) {
  if (c == NULL || c->pl == NULL || c->phase != PH_WAIT) return BW_E_INVAL;
  return run(c, now_ns);
}

const char *bw_pipeline_attach_key(bw_pipeline_call_t *c, int64_t unix_ms) {
  if (c == NULL || c->pl == NULL || c->pl->retry_at >= c->pl->count ||
      c->index <= c->pl->retry_at)
    return NULL;
  return bw_retry_attach_key(&c->retry, unix_ms);
}

void bw_pipeline_cancel(bw_pipeline_call_t *c) {
  if (c == NULL || c->pl == NULL || c->phase == PH_DONE || c->phase == PH_IDLE)
    return;
  const bw_pipeline_t *pl = c->pl;
  /* Every entered strategy leaves IGNORED (a cancel says nothing of the
   * dependency), told that the call was cancelled. */
  leave_as(c, 0, pl->count, BW_IGNORED, false, true);
  c->phase = PH_DONE;
  c->delay_ms = 0;
  bw__pstripe_t *st = stripe_of(pl);
  bw__bump(&st->cancelled, (unsigned)(st - pl->stripes));
}

/* A slot wait is a WAIT whose refusing strategy (the one at c->index,
 * entered again on resume) is a LIMIT. */
bw_limit_t *bw_pipeline_slot_wait(const bw_pipeline_call_t *c) {
  if (c == NULL || c->pl == NULL || c->phase != PH_WAIT || !c->waiting ||
      c->index >= c->pl->count || c->pl->s[c->index].kind != BW_STRATEGY_LIMIT)
    return NULL;
  return (bw_limit_t *)c->pl->s[c->index].object;
}

/* ---- reading the configuration back --------------------------------------
 * pl->s is the configuration's copy, written once by bw_pipeline_new and
 * never again: reading it needs no lock. */

uint32_t bw_pipeline_strategy_count(const bw_pipeline_t *pl) {
  return pl == NULL ? 0 : pl->count;
}

int bw_pipeline_strategy_at(const bw_pipeline_t *pl, uint32_t i,
                            bw_strategy_t *out) {
  if (pl == NULL || out == NULL || i >= pl->count) return BW_E_INVAL;
  *out = pl->s[i];
  return BW_OK;
}

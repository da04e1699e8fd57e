/* breakwater — hedging: when to send another copy of a slow attempt, how
 * many, and the budget check (hedge.h). The latency tracker is a ring of the
 * last `window` latencies under a mutex; its quantile is recomputed lazily
 * (once after each record, by the first call that needs it) into a scratch
 * array allocated at creation, so nothing allocates after bw_hedge_new. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/hedge.h"
#include "internal.h"

struct bw_hedge_s {
  char *name;
  bw_hedge_config_t cfg;
  pthread_mutex_t mu;
  int64_t *ring;    /* window latencies, ns */
  int64_t *scratch; /* sorted copy */
  uint32_t count;   /* latencies in the ring, <= window */
  uint32_t next;    /* the slot the next record overwrites */
  bool dirty;       /* recorded since the delay was computed */
  int64_t delay_ms; /* the cached delay */
  _Atomic uint64_t calls, armed, not_idempotent, hedges, denied, samples;
};

const char *bw_hedge_delay_name(bw_hedge_delay_t d) {
  switch (d) {
  case BW_HEDGE_FIXED:
    return "fixed";
  case BW_HEDGE_QUANTILE:
    return "quantile";
  }
  return "unknown";
}

void bw_hedge_config_init(bw_hedge_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "hedge";
  cfg->delay = BW_HEDGE_QUANTILE;
  cfg->delay_ms = 200;
  cfg->quantile = 0.95;
  cfg->window = 200;
  cfg->min_samples = 20;
  cfg->min_delay_ms = 1;
  cfg->max_delay_ms = 10000;
  cfg->max_hedges = 1;
}

#define MAX_DELAY_MS INT64_C(86400000)

int bw_hedge_config_validate(const bw_hedge_config_t *cfg, bw_error_t *err) {
  bw_error_clear(err);
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(cfg->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (cfg->delay != BW_HEDGE_FIXED && cfg->delay != BW_HEDGE_QUANTILE)
    return bw_error_set(err, BW_E_INVAL, "delay",
                        "delay must be FIXED or QUANTILE (got %d)",
                        (int)cfg->delay);
  if (cfg->delay_ms < 1 || cfg->delay_ms > MAX_DELAY_MS)
    return bw_error_set(err, BW_E_INVAL, "delay_ms",
                        "delay_ms must be in [1, %lld] (got %lld)",
                        (long long)MAX_DELAY_MS, (long long)cfg->delay_ms);
  if (cfg->max_hedges < 1 || cfg->max_hedges > BW_HEDGE_MAX_HEDGES)
    return bw_error_set(err, BW_E_INVAL, "max_hedges",
                        "max_hedges must be in [1, %u] (got %u)",
                        BW_HEDGE_MAX_HEDGES, (unsigned)cfg->max_hedges);
  if (cfg->delay == BW_HEDGE_FIXED) return BW_OK;
  if (!(cfg->quantile > 0.0 && cfg->quantile < 1.0))
    return bw_error_set(err, BW_E_INVAL, "quantile",
                        "quantile must be in (0, 1) (got %g)", cfg->quantile);
  if (cfg->window < 1 || cfg->window > BW_HEDGE_MAX_WINDOW)
    return bw_error_set(err, BW_E_INVAL, "window",
                        "window must be in [1, %u] (got %u)",
                        BW_HEDGE_MAX_WINDOW, (unsigned)cfg->window);
  if (cfg->min_samples < 1 || cfg->min_samples > cfg->window)
    return bw_error_set(err, BW_E_INVAL, "min_samples",
                        "min_samples must be in [1, window = %u] (got %u)",
                        (unsigned)cfg->window, (unsigned)cfg->min_samples);
  if (cfg->min_delay_ms < 1 || cfg->min_delay_ms > MAX_DELAY_MS)
    return bw_error_set(err, BW_E_INVAL, "min_delay_ms",
                        "min_delay_ms must be in [1, %lld] (got %lld)",
                        (long long)MAX_DELAY_MS, (long long)cfg->min_delay_ms);
  if (cfg->max_delay_ms < cfg->min_delay_ms || cfg->max_delay_ms > MAX_DELAY_MS)
    return bw_error_set(err, BW_E_INVAL, "max_delay_ms",
                        "max_delay_ms must be in [min_delay_ms = %lld, %lld] "
                        "(got %lld)",
                        (long long)cfg->min_delay_ms, (long long)MAX_DELAY_MS,
                        (long long)cfg->max_delay_ms);
  return BW_OK;
}

bw_hedge_t *bw_hedge_new(const bw_hedge_config_t *cfg, bw_error_t *err) {
  bw_hedge_t *h;
  if (bw_hedge_config_validate(cfg, err) != BW_OK) return NULL;
  h = bw_calloc(1, sizeof(*h));
  if (h == NULL) goto nomem;
  h->cfg = *cfg;
  h->name = bw_strdup(cfg->name);
  if (h->name == NULL) goto nomem;
  h->cfg.name = h->name;
  if (cfg->delay == BW_HEDGE_QUANTILE) {
    h->ring = bw_calloc(cfg->window, sizeof(int64_t));
    h->scratch = bw_calloc(cfg->window, sizeof(int64_t));
    if (h->ring == NULL || h->scratch == NULL) goto nomem;
  }
  if (pthread_mutex_init(&h->mu, NULL) != 0) goto nomem;
  h->delay_ms = cfg->delay_ms;
  return h;
nomem:
  if (h != NULL) {
    bw_free(h->ring);
    bw_free(h->scratch);
    bw_free(h->name);
    bw_free(h);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the hedge policy");
  return NULL;
}

void bw_hedge_free(bw_hedge_t *h) {
  if (h == NULL) return;
  pthread_mutex_destroy(&h->mu);
  bw_free(h->ring);
  bw_free(h->scratch);
  bw_free(h->name);
  bw_free(h);
}

const char *bw_hedge_name(const bw_hedge_t *h) {
  return h != NULL ? h->name : "";
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* ceil(q * n), in [1, n]; the tolerance keeps 0.95 * 20 (19.000000000000004
 * in binary) at 19. */
static uint32_t nearest_rank(double q, uint32_t n) {
  double r = ceil(q * (double)n - 1e-9);
  if (r < 1.0) return 1;
  if (r > (double)n) return n;
  return (uint32_t)r;
}

/* The current delay; the caller holds h->mu. */
static int64_t delay_locked(bw_hedge_t *h) {
  const bw_hedge_config_t *c = &h->cfg;
  uint64_t rank;
  int64_t ms;
  if (c->delay == BW_HEDGE_FIXED || h->count < c->min_samples)
    return c->delay_ms;
  if (!h->dirty) return h->delay_ms;
  memcpy(h->scratch, h->ring, h->count * sizeof(int64_t));
  qsort(h->scratch, h->count, sizeof(int64_t), cmp_i64);
  /* Nearest rank: the smallest latency with at least quantile of the
   * samples at or below it. */
  rank = nearest_rank(c->quantile, h->count);
  ms = (h->scratch[rank - 1] + BW_NS_PER_MS - 1) / BW_NS_PER_MS;
  if (ms < c->min_delay_ms) ms = c->min_delay_ms;
  if (ms > c->max_delay_ms) ms = c->max_delay_ms;
  h->delay_ms = ms;
  h->dirty = false;
  return ms;
}

int64_t bw_hedge_delay_ms(bw_hedge_t *h) {
  int64_t ms;
  if (h == NULL) return 0;
  if (h->cfg.delay == BW_HEDGE_FIXED) return h->cfg.delay_ms;
  pthread_mutex_lock(&h->mu);
  ms = delay_locked(h);
  pthread_mutex_unlock(&h->mu);
  return ms;
}

int bw_hedge_record(bw_hedge_t *h, int64_t latency_ns) {
  if (h == NULL) return BW_E_INVAL;
  if (latency_ns < 0) return BW_E_RANGE;
  atomic_fetch_add_explicit(&h->samples, 1, memory_order_relaxed);
  if (h->cfg.delay == BW_HEDGE_FIXED) return BW_OK;
  pthread_mutex_lock(&h->mu);
  h->ring[h->next] = latency_ns;
  h->next = (h->next + 1) % h->cfg.window;
  if (h->count < h->cfg.window) h->count++;
  h->dirty = true;
  pthread_mutex_unlock(&h->mu);
  return BW_OK;
}

int bw_hedge_begin(bw_hedge_t *h, bw_hedge_call_t *c, bool idempotent,
                   int64_t now_ns, int64_t *in_ms) {
  if (h == NULL || c == NULL || in_ms == NULL) return BW_E_INVAL;
  memset(c, 0, sizeof(*c));
  c->h = h;
  c->start_ns = now_ns;
  *in_ms = -1;
  atomic_fetch_add_explicit(&h->calls, 1, memory_order_relaxed);
  if (h->cfg.budget_requests) bw_budget_on_request(h->cfg.budget);
  if (!idempotent && !h->cfg.non_idempotent) {
    atomic_fetch_add_explicit(&h->not_idempotent, 1, memory_order_relaxed);
    return BW_HEDGE_NONE;
  }
  c->delay_ms = bw_hedge_delay_ms(h);
  c->armed = true;
  atomic_fetch_add_explicit(&h->armed, 1, memory_order_relaxed);
  *in_ms = c->delay_ms;
  return BW_HEDGE_ARM;
}

int bw_hedge_fire(bw_hedge_call_t *c, int64_t now_ns, int64_t *in_ms) {
  bw_hedge_t *h;
  int64_t due_ns;
  if (c == NULL || in_ms == NULL || c->h == NULL) return BW_E_INVAL;
  h = c->h;
  *in_ms = -1;
  if (!c->armed) return BW_HEDGE_NONE;
  if (c->hedges >= h->cfg.max_hedges) {
    c->armed = false;
    return BW_HEDGE_NONE;
  }
  if (h->cfg.budget != NULL && !bw_budget_try_retry(h->cfg.budget)) {
    c->armed = false;
    c->denied = true;
    atomic_fetch_add_explicit(&h->denied, 1, memory_order_relaxed);
    return BW_HEDGE_NONE;
  }
  c->hedges++;
  atomic_fetch_add_explicit(&h->hedges, 1, memory_order_relaxed);
  if (c->hedges >= h->cfg.max_hedges) {
    c->armed = false;
    return BW_HEDGE_SEND;
  }
  /* Hedge n+1 is due at begin + (n+1) x delay; a timer that fired late
   * makes the next one due sooner, never in the past. */
  due_ns = c->start_ns + (int64_t)(c->hedges + 1) * c->delay_ms * BW_NS_PER_MS;
  *in_ms =
      due_ns > now_ns ? (due_ns - now_ns + BW_NS_PER_MS - 1) / BW_NS_PER_MS : 0;
  return BW_HEDGE_SEND;
}

bool bw_hedge_denied(const bw_hedge_call_t *c) {
  return c != NULL && c->denied;
}

uint32_t bw_hedge_sent(const bw_hedge_call_t *c) {
  return c != NULL ? c->hedges : 0;
}

void bw_hedge_stats(bw_hedge_t *h, bw_hedge_stats_t *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (h == NULL) return;
  out->calls = atomic_load_explicit(&h->calls, memory_order_relaxed);
  out->armed = atomic_load_explicit(&h->armed, memory_order_relaxed);
  out->not_idempotent =
      atomic_load_explicit(&h->not_idempotent, memory_order_relaxed);
  out->hedges = atomic_load_explicit(&h->hedges, memory_order_relaxed);
  out->denied = atomic_load_explicit(&h->denied, memory_order_relaxed);
  out->samples = atomic_load_explicit(&h->samples, memory_order_relaxed);
  out->delay_ms = bw_hedge_delay_ms(h);
}

/* Pressure gauge with hysteresis: the backpressure article's transition table
 * (gauge.h).
 *
 * The regime is an atomic so that the admission check (bw_gauge_admits, on
 * every submit) reads it without the lock; updates take the lock so that each
 * transition, its time accounting and its callback happen exactly once and in
 * order. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "breakwater/gauge.h"
#include "internal.h"

struct bw_gauge_s {
  _Atomic int regime;
  pthread_mutex_t lock;
  double degraded_at, critical_at, hysteresis;
  /* The down thresholds, computed once so every update compares against the
   * same doubles (and a test can compute them the same way). */
  double degraded_down, critical_down;
  uint32_t ceiling[BW_REGIME__COUNT];
  const bw_clock_t *clock;
  bw_gauge_change_cb on_change;
  void *userdata;
  bw_sink_t *sink;
  const bw_clock_t *wall;
  char *name;
  double pressure;
  uint64_t updates, transitions;
  uint64_t entered[BW_REGIME__COUNT];
  int64_t since_ns;
  int64_t time_ns[BW_REGIME__COUNT];
};

static const char *const bw__regime_names[BW_REGIME__COUNT] = {
    "normal", "degraded", "critical"};

const char *bw_regime_name(bw_regime_t r) {
  return (unsigned)r < BW_REGIME__COUNT ? bw__regime_names[r] : "unknown";
}

void bw_gauge_config_init(bw_gauge_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "gauge";
  cfg->degraded_at = 0.6;
  cfg->critical_at = 0.85;
  cfg->hysteresis = 0.1;
  cfg->ceiling[BW_REGIME_NORMAL] = BW_GAUGE_ADMIT_ALL;
  cfg->ceiling[BW_REGIME_DEGRADED] = 5;
  cfg->ceiling[BW_REGIME_CRITICAL] = 1;
}

int bw_gauge_config_validate(const bw_gauge_config_t *c, bw_error_t *err) {
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  /* Written as !(in range) so that NaN fails every test. */
  if (!(c->degraded_at > 0.0 && c->degraded_at <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "degraded_at",
                        "degraded_at must be in (0, 1] (got %g)",
                        c->degraded_at);
  if (!(c->critical_at > 0.0 && c->critical_at <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "critical_at",
                        "critical_at must be in (0, 1] (got %g)",
                        c->critical_at);
  if (!(c->degraded_at < c->critical_at))
    return bw_error_set(err, BW_E_INVAL, "degraded_at",
                        "degraded_at must be < critical_at (got %g >= %g)",
                        c->degraded_at, c->critical_at);
  if (!(c->hysteresis >= 0.0 && c->hysteresis <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "hysteresis",
                        "hysteresis must be in [0, 1] (got %g)", c->hysteresis);
  /* Down means "below threshold - hysteresis", and pressure is never
   * negative: with hysteresis >= degraded_at the gauge could never return
   * to normal. */
  if (c->hysteresis >= c->degraded_at)
    return bw_error_set(err, BW_E_INVAL, "hysteresis",
                        "hysteresis must be < degraded_at (%g), or the "
                        "gauge could never return to normal (got %g)",
                        c->degraded_at, c->hysteresis);
  if (c->ceiling[BW_REGIME_DEGRADED] > c->ceiling[BW_REGIME_NORMAL])
    return bw_error_set(err, BW_E_INVAL, "ceiling",
                        "ceiling[degraded] must be <= ceiling[normal] (got "
                        "%u > %u): a higher regime may not admit more",
                        c->ceiling[BW_REGIME_DEGRADED],
                        c->ceiling[BW_REGIME_NORMAL]);
  if (c->ceiling[BW_REGIME_CRITICAL] > c->ceiling[BW_REGIME_DEGRADED])
    return bw_error_set(err, BW_E_INVAL, "ceiling",
                        "ceiling[critical] must be <= ceiling[degraded] (got "
                        "%u > %u): a higher regime may not admit more",
                        c->ceiling[BW_REGIME_CRITICAL],
                        c->ceiling[BW_REGIME_DEGRADED]);
  bw_error_clear(err);
  return BW_OK;
}

bw_gauge_t *bw_gauge_new(const bw_gauge_config_t *cfg, bw_error_t *err) {
  bw_gauge_t *g;
  if (bw_gauge_config_validate(cfg, err) != BW_OK) return NULL;
  g = bw_calloc(1, sizeof(*g));
  if (g == NULL) goto nomem;
  g->name = bw_strdup(cfg->name);
  if (g->name == NULL) goto nomem;
  if (pthread_mutex_init(&g->lock, NULL) != 0) goto nomem;
  atomic_init(&g->regime, BW_REGIME_NORMAL);
  g->degraded_at = cfg->degraded_at;
  g->critical_at = cfg->critical_at;
  g->hysteresis = cfg->hysteresis;
  g->degraded_down = cfg->degraded_at - cfg->hysteresis;
  g->critical_down = cfg->critical_at - cfg->hysteresis;
  memcpy(g->ceiling, cfg->ceiling, sizeof(g->ceiling));
  g->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  g->on_change = cfg->on_change;
  g->sink = cfg->sink;
  g->wall = cfg->wall_clock ? cfg->wall_clock : bw_clock_realtime();
  g->userdata = cfg->userdata;
  g->since_ns = bw__clock_now(g->clock);
  bw_error_clear(err);
  return g;
nomem:
  if (g != NULL) {
    bw_free(g->name);
    bw_free(g);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating gauge \"%s\"",
               cfg->name);
  return NULL;
}

void bw_gauge_free(bw_gauge_t *g) {
  if (g == NULL) return;
  pthread_mutex_destroy(&g->lock);
  bw_free(g->name);
  bw_free(g);
}

/* The backpressure article's PressureGauge.update, case for case. */
static bw_regime_t bw__next(const bw_gauge_t *g, bw_regime_t r, double p) {
  switch (r) {
  case BW_REGIME_NORMAL:
    if (p >= g->degraded_at)
      return p >= g->critical_at ? BW_REGIME_CRITICAL : BW_REGIME_DEGRADED;
    return r;
  case BW_REGIME_DEGRADED:
    if (p >= g->critical_at) return BW_REGIME_CRITICAL;
    if (p < g->degraded_down) return BW_REGIME_NORMAL;
    return r;
  case BW_REGIME_CRITICAL:
  default:
    if (p < g->critical_down)
      return p >= g->degraded_at ? BW_REGIME_DEGRADED : BW_REGIME_NORMAL;
    return r;
  }
}

int bw_gauge_update(bw_gauge_t *g, double p) {
  bw_regime_t from, to;
  if (g == NULL || !isfinite(p) || p < 0.0) return BW_E_INVAL;
  pthread_mutex_lock(&g->lock);
  from = (bw_regime_t)atomic_load_explicit(&g->regime, memory_order_relaxed);
  to = bw__next(g, from, p);
  g->pressure = p;
  g->updates++;
  if (to != from) {
    int64_t now = bw__clock_now(g->clock);
    if (now > g->since_ns) g->time_ns[from] += now - g->since_ns;
    g->since_ns = now > g->since_ns ? now : g->since_ns;
    g->transitions++;
    g->entered[to]++;
    atomic_store_explicit(&g->regime, (int)to, memory_order_release);
    if (g->on_change != NULL)
      g->on_change(g->name, from, to, p, now, g->userdata);
    if (g->sink != NULL) {
      bw_field_t f[3];
      char reason[96];
      f[0] = bw_field_str("from", bw_regime_name(from));
      f[1] = bw_field_str("to", bw_regime_name(to));
      f[2] = bw_field_double("pressure", p);
      snprintf(reason, sizeof(reason), "pressure %.2f: %s -> %s", p,
               bw_regime_name(from), bw_regime_name(to));
      bw_event_emit(g->sink, g->wall, now, BW_EV_REGIME_CHANGED, g->name,
                    reason, f, 3, NULL);
    }
  }
  pthread_mutex_unlock(&g->lock);
  return (int)to;
}

bw_regime_t bw_gauge_regime(const bw_gauge_t *g) {
  if (g == NULL) return BW_REGIME_NORMAL;
  return (bw_regime_t)atomic_load_explicit(&g->regime, memory_order_acquire);
}

uint32_t bw_gauge_ceiling(const bw_gauge_t *g) {
  if (g == NULL) return UINT32_MAX;
  return g->ceiling[bw_gauge_regime(g)];
}

bool bw_gauge_admits(const bw_gauge_t *g, uint32_t priority) {
  return priority <= bw_gauge_ceiling(g);
}

const char *bw_gauge_name(const bw_gauge_t *g) {
  return g == NULL ? "" : g->name;
}

void bw_gauge_stats(const bw_gauge_t *g, bw_gauge_stats_t *out) {
  bw_gauge_t *m = (bw_gauge_t *)(uintptr_t)g; /* the lock is not state */
  int64_t now;
  int r;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (g == NULL) return;
  pthread_mutex_lock(&m->lock);
  now = bw__clock_now(g->clock);
  r = atomic_load_explicit(&m->regime, memory_order_relaxed);
  out->regime = (bw_regime_t)r;
  out->pressure = g->pressure;
  out->updates = g->updates;
  out->transitions = g->transitions;
  for (int i = 0; i < BW_REGIME__COUNT; i++) {
    out->entered[i] = g->entered[i];
    out->time_in_regime_ns[i] = g->time_ns[i];
  }
  if (now > g->since_ns) out->time_in_regime_ns[r] += now - g->since_ns;
  out->ceiling = g->ceiling[r];
  pthread_mutex_unlock(&m->lock);
}

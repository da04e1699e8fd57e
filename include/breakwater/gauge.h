/* breakwater — a pressure gauge with hysteresis (the backpressure article).
 *
 * A pressure reading (queue occupancy, say: bw_queue_pressure) becomes one of
 * three regimes, each with a declared admission policy. A regime goes up as
 * soon as pressure reaches its threshold, but comes down only once pressure
 * falls below the threshold minus the hysteresis margin: a pressure hovering
 * at 0.6 would otherwise flip the producer's signal on every item. The
 * backpressure article's table, exactly (d = degraded_at, c = critical_at, h =
 * hysteresis):
 *
 *   from      pressure p                     to
 *   NORMAL    p >= c                         CRITICAL (straight up)
 *   NORMAL    d <= p < c                     DEGRADED
 *   DEGRADED  p >= c                         CRITICAL
 *   DEGRADED  p < d - h                      NORMAL
 *   CRITICAL  p < c - h and p >= d           DEGRADED
 *   CRITICAL  p < c - h and p < d            NORMAL (straight down)
 *   otherwise                                unchanged
 *
 * Leaving CRITICAL classifies p against the plain thresholds: the margin
 * protects the regime being left, not the one skipped, so CRITICAL goes
 * straight to NORMAL below d (not d - h). docs/gauge.md walks through it.
 *
 * Each regime has an admission ceiling: the largest priority number admitted
 * (smaller = more urgent). Defaults from the backpressure article: CRITICAL 1,
 * DEGRADED 5, NORMAL everything. Time spent in each regime is measured on the
 * injected clock. All functions are thread-safe (a mutex: updates are rare next
 * to the work they gate); a regime change happens exactly once, with exactly
 * one on_change call, in order. */
#ifndef BREAKWATER_GAUGE_H
#define BREAKWATER_GAUGE_H

#include "clock.h"
#include "common.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_regime_e {
  BW_REGIME_NORMAL = 0,
  BW_REGIME_DEGRADED = 1,
  BW_REGIME_CRITICAL = 2,
  BW_REGIME__COUNT = 3
} bw_regime_t;

/* "normal", "degraded", "critical" or "unknown". */
BW_EXTERN const char *bw_regime_name(bw_regime_t regime);

/* A ceiling that admits every priority. */
#define BW_GAUGE_ADMIT_ALL UINT32_MAX

/* A regime change: called under the gauge's lock, on the updating thread, in
 * transition order. It may read the gauge (regime, ceiling, stats) but must
 * not update it. */
typedef void (*bw_gauge_change_cb)(const char *name, bw_regime_t from,
                                   bw_regime_t to, double pressure,
                                   int64_t now_ns, void *userdata);

typedef struct bw_gauge_config_s {
  const char *name;   /* copied; default "gauge" */
  double degraded_at; /* default 0.6; in (0, 1], < critical_at */
  double critical_at; /* default 0.85; in (0, 1] */
  double hysteresis;  /* default 0.1; in [0, 1] and < degraded_at (else
                         normal could never come back) */
  /* The largest priority admitted in each regime, indexed by bw_regime_t;
   * defaults BW_GAUGE_ADMIT_ALL, 5, 1. A higher regime may not admit more
   * than a lower one: ceiling[CRITICAL] <= ceiling[DEGRADED] <=
   * ceiling[NORMAL]. */
  uint32_t ceiling[BW_REGIME__COUNT];
  const bw_clock_t *clock;      /* default bw_clock_monotonic() */
  bw_gauge_change_cb on_change; /* default NULL */
  void *userdata;               /* for on_change */
  /* regime_changed events (fields from, to, pressure), emitted under the
   * gauge's lock after on_change; default NULL (none). */
  bw_sink_t *sink;
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
} bw_gauge_config_t;

typedef struct bw_gauge_s bw_gauge_t;

typedef struct bw_gauge_stats_s {
  bw_regime_t regime;
  double pressure;      /* the last accepted reading (0 before any) */
  uint64_t updates;     /* accepted readings */
  uint64_t transitions; /* regime changes */
  uint64_t entered[BW_REGIME__COUNT]; /* transitions into each regime */
  /* Time in each regime since creation, up to the stats call (the current
   * regime includes the time since it was entered). */
  int64_t time_in_regime_ns[BW_REGIME__COUNT];
  uint32_t ceiling; /* the current regime's */
} bw_gauge_stats_t;

/* Fills the documented defaults. */
BW_EXTERN void bw_gauge_config_init(bw_gauge_config_t *cfg);

/* BW_OK, or BW_E_INVAL with err naming the field and the rule. */
BW_EXTERN int bw_gauge_config_validate(const bw_gauge_config_t *cfg,
                                       bw_error_t *err);

/* Creates a gauge in NORMAL, its time starting at the clock's current
 * reading. NULL and err filled (if not NULL) on an invalid configuration
 * (BW_E_INVAL) or BW_E_NOMEM. */
BW_EXTERN bw_gauge_t *bw_gauge_new(const bw_gauge_config_t *cfg,
                                   bw_error_t *err);

/* The NULL policy: a NULL gauge answers BW_E_INVAL to bw_gauge_update and
 * reads as no pressure (regime NORMAL, ceiling UINT32_MAX, admits every
 * priority, name ""); stats with a NULL gauge fill zeros, with a NULL out do
 * nothing; freeing NULL is a no-op. */

/* Feeds a pressure reading and returns the regime after it (>= 0), or
 * BW_E_INVAL (nothing changed) for a NaN, infinite or negative reading.
 * Readings above 1 are accepted (work in flight beyond the queue's bound). */
BW_EXTERN int bw_gauge_update(bw_gauge_t *g, double pressure);

/* The current regime. */
BW_EXTERN bw_regime_t bw_gauge_regime(const bw_gauge_t *g);
/* The current regime's ceiling: the largest priority number admitted. */
BW_EXTERN uint32_t bw_gauge_ceiling(const bw_gauge_t *g);
/* True if the current regime admits `priority` (priority <= ceiling). */
BW_EXTERN bool bw_gauge_admits(const bw_gauge_t *g, uint32_t priority);
/* The gauge's name (owned by the gauge). */
BW_EXTERN const char *bw_gauge_name(const bw_gauge_t *g);
/* An exact snapshot (taken under the lock). */
BW_EXTERN void bw_gauge_stats(const bw_gauge_t *g, bw_gauge_stats_t *out);
/* Frees the gauge. NULL is fine. */
BW_EXTERN void bw_gauge_free(bw_gauge_t *g);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_GAUGE_H */

/* breakwater — pressure measured over a durable queue (the backpressure
 * article's webhook edge): a pressure gauge (gauge.h) fed by a queue
 * store's real depth (store.h: SQLite, Redis, memory — any backend), so an
 * edge that writes into that queue refuses or warns from the backlog that
 * is actually stored, shared by every process on the queue, not from an
 * in-process count.
 *
 *   pressure = depth / max_size      (bw_queue_store_stats: ready + delayed
 *                                     + claimed items, the store's guard)
 *
 * Per request the edge asks bw_backlog_admit(b, priority, &ans): the
 * gauge's regime (with its hysteresis) and ceiling decide, as a stage's
 * do (bw_edge_t: ACCEPT in normal, WARN when admitted in degraded or
 * critical, REFUSE above the regime's ceiling). Reading a durable store's
 * depth is a query (a COUNT in SQLite), so it is made at most once every
 * refresh_ms; between reads the last reading answers.
 *
 * Thread-safe (a mutex around the reading; the gauge has its own). */
#ifndef BREAKWATER_BACKLOG_H
#define BREAKWATER_BACKLOG_H

#include "clock.h"
#include "common.h"
#include "event.h"
#include "gauge.h"
#include "stage.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_backlog_s bw_backlog_t;

typedef struct bw_backlog_config_s {
  const char *name;        /* copied; default "backlog"; the gauge's name */
  bw_queue_store_t *store; /* required; borrowed, must outlive the backlog */
  /* Thresholds, hysteresis and ceilings (gauge.h defaults: degraded at
   * 0.6, critical at 0.85). Its name, clock and sink are ignored: the
   * backlog's are used. */
  bw_gauge_config_t gauge;
  int64_t refresh_ms;           /* read the depth at most this often;
                                   default 1000; 0 = on every admit */
  const bw_clock_t *clock;      /* default bw_clock_monotonic() */
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
  bw_sink_t *sink; /* the gauge's regime_changed events; default none */
} bw_backlog_config_t;

/* What an admit decided. */
typedef struct bw_backlog_answer_s {
  bw_edge_t edge;     /* ACCEPT, WARN or REFUSE */
  bw_regime_t regime; /* the regime it was decided in */
  double pressure;    /* depth / max_size of the reading used */
  uint64_t depth;     /* the reading used */
  uint32_t max_size;
  int64_t read_at_ns; /* when that reading was taken (the backlog's clock) */
} bw_backlog_answer_t;

typedef struct bw_backlog_stats_s {
  uint64_t reads;       /* depth queries made */
  uint64_t read_errors; /* of those, failed (the last good reading kept) */
  uint64_t admits;      /* = accepted + warned + refused */
  uint64_t accepted;
  uint64_t warned;
  uint64_t refused;
  uint64_t depth; /* the last good reading */
  uint32_t max_size;
  double pressure;
  bw_regime_t regime;
} bw_backlog_stats_t;

/* Fills the defaults (store must still be set). NULL is ignored. */
BW_EXTERN void bw_backlog_config_init(bw_backlog_config_t *cfg);
/* BW_OK, or BW_E_INVAL with err naming the field and the rule (gauge
 * fields as "gauge.degraded_at"). */
BW_EXTERN int bw_backlog_config_validate(const bw_backlog_config_t *cfg,
                                         bw_error_t *err);
/* Creates a backlog gauge in NORMAL; its first admit reads the store. NULL
 * with err set: BW_E_INVAL, BW_E_NOMEM. */
BW_EXTERN bw_backlog_t *bw_backlog_new(const bw_backlog_config_t *cfg,
                                       bw_error_t *err);

/* The NULL policy: the verbs answer BW_E_INVAL for a NULL backlog; stats
 * of NULL are zeros (a NULL out: nothing); its gauge is NULL; freeing NULL
 * is a no-op. */

/* The edge's answer for an item of `priority` (smaller = more urgent) from
 * the backlog: reads the store's depth when the last reading is refresh_ms
 * old or more (or none was taken), feeds the gauge, and answers. BW_OK with
 * *out filled; BW_E_INVAL for NULL arguments; or the store's error (BW_E_IO,
 * ...) when the read failed: *out is then still filled, from the last good
 * reading (NORMAL, depth 0 when none), and counted in read_errors — the
 * caller chooses between failing open (use the answer) and closed. */
BW_EXTERN int bw_backlog_admit(bw_backlog_t *b, uint32_t priority,
                               bw_backlog_answer_t *out);
/* Reads the depth now, whatever refresh_ms says (after a batch of
 * enqueues, say). BW_OK or the store's error. */
BW_EXTERN int bw_backlog_refresh(bw_backlog_t *b);
/* The gauge (owned by the backlog; read it, do not update it). */
BW_EXTERN bw_gauge_t *bw_backlog_gauge(const bw_backlog_t *b);
/* An exact snapshot. */
BW_EXTERN void bw_backlog_stats(const bw_backlog_t *b, bw_backlog_stats_t *out);
/* Frees the backlog (not the store). NULL is fine. */
BW_EXTERN void bw_backlog_free(bw_backlog_t *b);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_BACKLOG_H */

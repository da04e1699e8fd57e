/* breakwater — a backpressure stage and multi-stage pipelines (the backpressure
 * article).
 *
 * A stage is a bounded priority queue (queue.h), a pressure gauge (gauge.h)
 * and a bound on the work in flight for its handler. Producers submit; any
 * driver pulls with bw_stage_next and completes with bw_stage_done (the stage
 * never owns the only way to run work); the threads driver's
 * bw_stage_runner_new (breakwater/threads.h) is a small optional thread pool
 * built on that pull API and on bw_stage_set_notify.
 *
 *   pressure     = (queued + in_flight) / (queue_size + concurrency)
 *   effective    = max(pressure, next stage's effective pressure)
 *
 * The effective pressure feeds the gauge before every admission decision, so
 * a slow last stage raises the regime of every stage in front of it up to
 * the edge (the backpressure article rules 1-3). The regime's ceiling is
 * applied first (priority > ceiling: refused), then the queue's policy.
 *
 * A refusal carries retry_after_ms derived from the real backlog and the
 * measured service rate (an EWMA of completions per second on the injected
 * clock), never a fixed guess; docs/stage.md has the exact formula.
 *
 * Conservation, at every quiescent moment (bw_stage_stats is exact):
 *   submitted = admitted + rejected
 *   admitted  = processed + failed + shed + expired + queued + in_flight
 *
 * All functions are thread-safe (one mutex per stage; a stage never holds
 * its lock while calling user code — except the notify hook, see
 * bw_stage_set_notify — or another stage's lock). */
#ifndef BREAKWATER_STAGE_H
#define BREAKWATER_STAGE_H

#include "clock.h"
#include "common.h"
#include "event.h"
#include "gauge.h"
#include "queue.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_stage_s bw_stage_t;

/* An item taken by bw_stage_next: the token bw_stage_done takes back. */
typedef struct bw_stage_item_s {
  void *data;          /* the caller's pointer, as submitted */
  uint32_t priority;   /* as submitted */
  uint32_t reserved;   /* 0 */
  int64_t deadline_ns; /* as submitted; BW_QUEUE_NO_DEADLINE = none */
  uint64_t seq;        /* the queue's arrival number */
  int64_t start_ns;    /* the clock reading when next() handed it out */
} bw_stage_item_t;

/* How a pulled item ended. */
typedef enum bw_stage_outcome_e {
  BW_STAGE_PROCESSED = 0,
  BW_STAGE_FAILED = 1
} bw_stage_outcome_t;

/* Why a submit was refused. */
typedef enum bw_stage_refusal_e {
  BW_STAGE_REFUSAL_NONE = 0,    /* not refused */
  BW_STAGE_REFUSAL_CEILING = 1, /* priority above the regime's ceiling */
  BW_STAGE_REFUSAL_FULL = 2     /* the queue's policy refused it */
} bw_stage_refusal_t;

/* What an edge tells its caller (the backpressure article rule 3). */
typedef enum bw_edge_e {
  BW_EDGE_ACCEPT = 0, /* admitted, regime normal */
  BW_EDGE_WARN = 1,   /* admitted, regime degraded or critical */
  BW_EDGE_REFUSE = 2  /* refused: come back after retry_after_ms */
} bw_edge_t;

/* "accept", "warn", "refuse" or "unknown". */
BW_EXTERN const char *bw_edge_name(bw_edge_t edge);

/* What a submit decided. */
typedef struct bw_stage_result_s {
  int outcome;               /* BW_QUEUE_ADMITTED / _SHED / _REJECTED */
  bw_stage_refusal_t reason; /* why REJECTED */
  bw_edge_t edge;            /* outcome and regime, as an edge answer */
  bw_regime_t regime;        /* the regime the decision was taken in */
  double pressure;           /* the effective pressure fed to the gauge */
  int64_t retry_after_ms;    /* > 0 when REJECTED, else 0 */
  bw_queue_item_t dropped;   /* when SHED: the dropped item, now the
                                caller's again */
} bw_stage_result_t;

/* Called once for each item found expired by bw_stage_next, outside the
 * stage's lock, on the thread that called next. */
typedef void (*bw_stage_expired_cb)(const bw_queue_item_t *item, int64_t now_ns,
                                    void *userdata);

#define BW_STAGE_MAX_CONCURRENCY (UINT32_C(1) << 20)

typedef struct bw_stage_config_s {
  const char *name;         /* copied; default "stage" */
  uint32_t queue_size;      /* required, 1..BW_QUEUE_MAX_SIZE (no default:
                               a bound must be chosen) */
  bw_queue_policy_t policy; /* default BW_QUEUE_REJECT */
  uint32_t priority_levels; /* default 256 */
  uint32_t concurrency;     /* items in flight at most; default 1,
                               1..BW_STAGE_MAX_CONCURRENCY */
  /* Thresholds, hysteresis and ceilings (gauge.h defaults). Its name, clock
   * and callback are ignored: the stage supplies its own. */
  bw_gauge_config_t gauge;
  int64_t rate_window_ms;         /* service-rate window; default 1000, >= 1 */
  double rate_alpha;              /* EWMA weight of a new window; default 0.5,
                                     in (0, 1] */
  int64_t min_retry_after_ms;     /* default 1, >= 1 */
  int64_t max_retry_after_ms;     /* default 30000, >= min_retry_after_ms; also
                                     the answer while no rate is measured */
  double retry_jitter;            /* default 0; in [0, 1]: adds up to this
                                     fraction of the wait, seeded */
  uint64_t seed;                  /* for the jitter; default 0 */
  const bw_stage_t *next;         /* the downstream stage; default NULL. Must
                                     outlive this stage. */
  const bw_clock_t *clock;        /* default bw_clock_monotonic() */
  bw_stage_expired_cb on_expired; /* default NULL: next() hands expired
                                     items back as BW_E_DEADLINE */
  void *userdata;                 /* for on_expired */
  const bw_clock_t *wall_clock;   /* event timestamps; default realtime */
  bw_sink_t *sink; /* stage_dropped summaries (refused, shed and expired
                      items) and stage_regime_changed events (every regime
                      change, emitted after the stage's lock is released),
                      docs/events.md; default NULL (none). The clocks and
                      sink must outlive the stage: its free flushes the
                      last summary */
} bw_stage_config_t;

typedef struct bw_stage_stats_s {
  uint64_t submitted;
  uint64_t admitted; /* outcomes ADMITTED and SHED */
  uint64_t rejected; /* = rejected_ceiling + rejected_full */
  uint64_t rejected_ceiling;
  uint64_t rejected_full;
  uint64_t shed;    /* admitted items dropped to make room */
  uint64_t expired; /* admitted items dropped at next() */
  uint64_t processed;
  uint64_t failed;
  uint64_t stale; /* completions (either outcome) at or after
                     their deadline */
  uint32_t queued;
  uint32_t in_flight;
  uint32_t max_queue_seen;
  uint32_t max_in_flight_seen;
  bw_regime_t regime;
  double pressure;           /* own, now */
  double effective_pressure; /* max(own, downstream), now */
  double service_rate;       /* completions per second (EWMA); 0 unmeasured */
  bool rate_measured;
  int64_t time_in_regime_ns[BW_REGIME__COUNT];
  uint64_t transitions;
} bw_stage_stats_t;

/* Fills the documented defaults (queue_size must still be set). */
BW_EXTERN void bw_stage_config_init(bw_stage_config_t *cfg);

/* BW_OK, or BW_E_INVAL with err naming the field and the rule (gauge fields
 * as "gauge.degraded_at"). */
BW_EXTERN int bw_stage_config_validate(const bw_stage_config_t *cfg,
                                       bw_error_t *err);

/* Creates a stage. NULL and err filled (if not NULL) on an invalid
 * configuration (BW_E_INVAL) or BW_E_NOMEM. */
BW_EXTERN bw_stage_t *bw_stage_new(const bw_stage_config_t *cfg,
                                   bw_error_t *err);

/* Offers an item. Returns the outcome (BW_QUEUE_ADMITTED = BW_OK, _SHED,
 * _REJECTED) and fills *res (required). Errors, with nothing counted:
 * BW_E_INVAL (s or res NULL), BW_E_RANGE (priority >= priority_levels). */
BW_EXTERN int bw_stage_submit(bw_stage_t *s, void *data, uint32_t priority,
                              int64_t deadline_ns, bw_stage_result_t *res);

/* Takes the next item and counts it in flight. BW_OK; BW_E_FULL when
 * `concurrency` items are already in flight; BW_E_NOTFOUND when nothing is
 * queued; BW_E_DEADLINE (only without on_expired): *out is an expired item,
 * counted as expired, not to be processed or completed. Expired items met on
 * the way go to on_expired. BW_E_INVAL if s or out is NULL. */
BW_EXTERN int bw_stage_next(bw_stage_t *s, bw_stage_item_t *out);

/* Completes an item taken by next: counts it processed or failed (and stale
 * if the clock has reached its deadline) and feeds the service rate. BW_OK;
 * BW_E_INVAL if s or item is NULL, the outcome unknown, or nothing is in
 * flight. Complete each item exactly once. */
BW_EXTERN int bw_stage_done(bw_stage_t *s, const bw_stage_item_t *item,
                            bw_stage_outcome_t outcome);

/* The NULL policy: the verbs answer BW_E_INVAL for a NULL stage; the
 * queries below read a NULL stage as idle (pressures 0, regime NORMAL,
 * retry-after 0, service rate 0, name "", no on_expired), stats fill zeros
 * (a NULL out: nothing), and freeing NULL is a no-op. */

/* Own pressure, (queued + in_flight) / (queue_size + concurrency). */
BW_EXTERN double bw_stage_pressure(const bw_stage_t *s);
/* max(own, the next stage's effective pressure), lock-free. */
BW_EXTERN double bw_stage_effective_pressure(const bw_stage_t *s);
/* Feeds the effective pressure to the gauge and returns the regime. */
BW_EXTERN bw_regime_t bw_stage_regime(bw_stage_t *s);
/* The wait a refusal would carry now (jitter included). */
BW_EXTERN int64_t bw_stage_retry_after_ms(bw_stage_t *s);
/* The service-rate estimate in completions per second (0: unmeasured). */
BW_EXTERN double bw_stage_service_rate(bw_stage_t *s);
BW_EXTERN const char *bw_stage_name(const bw_stage_t *s);
/* An exact snapshot. */
BW_EXTERN void bw_stage_stats(bw_stage_t *s, bw_stage_stats_t *out);
/* Frees the stage. NULL is fine. No runner may be attached (no notify hook
 * installed) and no call in progress; queued items are the caller's (drain
 * them first). */
BW_EXTERN void bw_stage_free(bw_stage_t *s);

/* ---- batch producer (the backpressure article rule 4)
 * ----------------------------------- */

typedef struct bw_batch_config_s {
  uint32_t chunk_size;      /* the normal chunk; default 100, >= 1 */
  double degraded_fraction; /* default 0.25; in (0, 1] */
} bw_batch_config_t;

typedef struct bw_batch_plan_s {
  uint32_t chunk; /* items to pull now (0 in critical) */
  bw_regime_t regime;
  int64_t wait_ms; /* > 0 in critical: pause this long */
} bw_batch_plan_t;

BW_EXTERN void bw_batch_config_init(bw_batch_config_t *cfg);
BW_EXTERN int bw_batch_config_validate(const bw_batch_config_t *cfg,
                                       bw_error_t *err);
/* Reads the stage's regime (feeding its gauge) and plans the next chunk:
 * chunk_size in normal, max(1, floor(chunk_size * degraded_fraction)) in
 * degraded, 0 with wait_ms = bw_stage_retry_after_ms in critical. BW_OK, or
 * BW_E_INVAL (NULL argument, or err naming the invalid field). */
BW_EXTERN int bw_stage_batch_plan(bw_stage_t *s, const bw_batch_config_t *cfg,
                                  bw_batch_plan_t *out, bw_error_t *err);

/* ---- outside runners ---------------------------------------------------- */

/* Told that bw_stage_next may now return an item it could not before. */
typedef void (*bw_stage_notify_fn)(bw_stage_t *s, void *userdata);

/* Installs the stage's notify hook, for a runner that waits outside the
 * stage (a thread pool, an event loop) until there may be work: fn(s,
 * userdata) is called after every submit that admits an item (outcome
 * ADMITTED or SHED) and after every bw_stage_done (a slot in flight is
 * free), on the thread that made that call. A runner that asks next(), finds
 * nothing and then waits for a notify that came after its question cannot
 * miss work (count the notifies, as the threads driver's epoch does).
 *
 * Lock rule: fn runs with the stage's lock held. It must be short and must
 * not call any bw_stage_* function (of this stage or another) nor wait for
 * anything that may be waiting for the stage: signal a condition variable,
 * write to an eventfd or pipe, and return. In exchange, removal is a barrier:
 * once bw_stage_set_notify(s, NULL, NULL) returns, fn is not running and will
 * not be called again, so its userdata may be freed.
 *
 * One hook per stage. fn NULL removes the hook (BW_OK, also when none was
 * installed). BW_OK when installed; BW_E_FULL (nothing changed) when another
 * hook is installed — a stage has at most one runner; BW_E_INVAL for NULL s.
 * userdata is borrowed. Thread-safe. */
BW_EXTERN int bw_stage_set_notify(bw_stage_t *s, bw_stage_notify_fn fn,
                                  void *userdata);

/* True when the stage was created with on_expired (expired items then go to
 * it, and next() never returns BW_E_DEADLINE), which a runner that only
 * pulls and completes needs. False for NULL s. Fixed at creation; no lock. */
BW_EXTERN bool bw_stage_has_on_expired(const bw_stage_t *s);

/* The thread-pool runner (bw_stage_runner_new) moved to breakwater/threads.h */

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_STAGE_H */

/* breakwater — a named registry: creates objects on first use from per-name
 * configurations (the asyncio toolkit's hotel_api / payment_api /
 * search_agent), and snapshots all of them, also as Prometheus text.
 *
 * Per-key registries (one breaker per host or tenant) can be capped: when a
 * new name arrives at the cap, the least recently used object that is idle
 * (no lookup or put for idle_evict_ms, held by nobody, and CLOSED with no
 * failures or slow calls counting) is evicted, with a registry_evicted event.
 * An object that is open, half-open, isolated, disabled, switched to or from
 * metrics-only by an operator, or counting failures is never evicted; if
 * nothing can be evicted the lookup fails with BW_E_LIMIT. (A count-window
 * breaker keeps a failure until later calls push it out of the window, so a
 * quiet key pins itself: prefer time windows for per-key breakers.)
 *
 * Objects returned by a lookup are held: release each hold with
 * bw_registry_put once done (a held object is never evicted). All functions
 * are thread-safe. */
#ifndef BREAKWATER_REGISTRY_H
#define BREAKWATER_REGISTRY_H

#include <stdio.h>

#include "breaker.h"
#include "budget.h"
#include "bulkhead.h"
#include "common.h"
#include "degrade.h"
#include "gauge.h"
#include "limiter.h"
#include "pipeline.h"
#include "queue.h"
#include "ratelimit.h"
#include "retry.h"
#include "stage.h"
#include "store.h"
#include "throttle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_registry_s bw_registry_t;

typedef struct bw_registry_config_s {
  size_t max_objects;      /* 0 = unbounded (default) */
  int64_t idle_evict_ms;   /* idle time before an object may be evicted;
                              default 60000, >= 0 */
  const bw_clock_t *clock; /* default monotonic; also the default clock of
                              objects whose config names none */
  bw_sink_t *sink;         /* registry events, and the default sink of objects
                              whose config names none; default NULL */
  /* Breaker config used for names without one of their own (its name field
   * is replaced by the looked-up name). NULL: bw_breaker_config_init's. */
  const bw_breaker_config_t *default_breaker;
} bw_registry_config_t;

BW_EXTERN void bw_registry_config_init(bw_registry_config_t *cfg);
/* NULL and err on bad configuration (naming the field) or out of memory. */
BW_EXTERN bw_registry_t *bw_registry_new(const bw_registry_config_t *cfg,
                                         bw_error_t *err);

/* Registers the configuration for `name` (copied, validated; the config's own
 * name field is ignored). Applies to the next creation of that name; an
 * existing object keeps its configuration. BW_OK or BW_E_INVAL / BW_E_NOMEM
 * with err filled. */
BW_EXTERN int bw_registry_set_breaker_config(bw_registry_t *reg,
                                             const char *name,
                                             const bw_breaker_config_t *cfg,
                                             bw_error_t *err);

/* The breaker named `name`, created on first use; held until
 * bw_registry_put. NULL with err: BW_E_INVAL (empty name or name longer than
 * BW_NAME_MAX bytes), BW_E_LIMIT (at the cap, nothing evictable), BW_E_NOMEM.
 */
BW_EXTERN bw_breaker_t *bw_registry_breaker(bw_registry_t *reg,
                                            const char *name, bw_error_t *err);
/* The breaker named `name` if it exists (held), else NULL. Never creates. */
BW_EXTERN bw_breaker_t *bw_registry_find_breaker(bw_registry_t *reg,
                                                 const char *name);
/* Releases one hold taken by a lookup. */
BW_EXTERN void bw_registry_put(bw_registry_t *reg, bw_breaker_t *b);

/* ---- objects of every kind ---------------------------------------------
 *
 * Besides its in-process breakers, a registry holds named objects of every
 * other kind, one namespace per kind (a bulkhead and a limiter may both be
 * "payment_api"). These are never evicted and take no holds: a pointer
 * returned by the calls below stays valid until bw_registry_free. */
typedef enum bw_registry_kind_e {
  BW_REGISTRY_BREAKER = 0,    /* in-process breakers (bw_registry_breaker) */
  BW_REGISTRY_BREAKER_IF = 1, /* any bw_breaker_if_t: shm, Redis, a user's */
  BW_REGISTRY_BULKHEAD = 2,
  BW_REGISTRY_LIMITER = 3,
  BW_REGISTRY_RATELIMIT = 4,
  BW_REGISTRY_RETRY = 5, /* bw_retry_policy_t */
  BW_REGISTRY_BUDGET = 6,
  BW_REGISTRY_PIPELINE = 7,
  BW_REGISTRY_QUEUE = 8, /* bw_queue_t, the bounded priority queue */
  BW_REGISTRY_STAGE = 9,
  BW_REGISTRY_DEGRADE = 10,
  BW_REGISTRY_QUEUE_STORE = 11, /* bw_queue_store_t, any backend (memory,
                                   SQLite, Redis): put in only */
  BW_REGISTRY_GAUGE = 12,       /* bw_gauge_t, the pressure gauge */
  BW_REGISTRY_IDEM_STORE = 13,  /* bw_idem_store_t, any backend: put in only */
  BW_REGISTRY_THROTTLE = 14,    /* bw_throttle_t, client-side throttling */
  BW_REGISTRY_KIND__COUNT = 15
} bw_registry_kind_t;

/* The kind's name ("breaker", "breaker_if", "bulkhead", ...), or "unknown". */
BW_EXTERN const char *bw_registry_kind_name(bw_registry_kind_t kind);

/* Registers the configuration for the object of `kind` named `name`, for
 * every kind the registry creates: cfg points to that kind's config type
 * (bw_breaker_config_t for BW_REGISTRY_BREAKER — the same as
 * bw_registry_set_breaker_config —, bw_bulkhead_config_t for
 * BW_REGISTRY_BULKHEAD, bw_limiter_config_t, bw_ratelimit_config_t,
 * bw_retry_config_t, bw_budget_config_t, bw_pipeline_config_t,
 * bw_queue_config_t, bw_stage_config_t, bw_degrade_config_t,
 * bw_gauge_config_t, bw_throttle_config_t). It is
 * validated now (the kind's own _config_validate, under `name`) and copied,
 * shallowly: what it points to (clocks, sinks, strategies, arrays,
 * callbacks' userdata) must stay valid until the object is created. Its own
 * name field is ignored. It applies to the next creation of that name by a
 * get-or-create called with cfg NULL (an explicit cfg there wins);
 * registering again replaces it; an existing object keeps its
 * configuration. Clock and sink fields left NULL still get the registry's.
 * BW_OK; BW_E_INVAL with err.field "reg", "kind" (BW_REGISTRY_BREAKER_IF,
 * BW_REGISTRY_QUEUE_STORE, BW_REGISTRY_IDEM_STORE or an unknown kind:
 * those are only put in),
 * "name", "cfg" (NULL) or the kind's field at fault; BW_E_NOMEM. */
BW_EXTERN int bw_registry_set_config(bw_registry_t *reg,
                                     bw_registry_kind_t kind, const char *name,
                                     const void *cfg, bw_error_t *err);

/* Get-or-create, one per kind: the object of that kind named `name`, created
 * on first use from cfg (copied by the kind's _new; its name field is
 * replaced by `name`). cfg NULL: the configuration registered for the name
 * (bw_registry_set_config), else the kind's _config_init defaults (a
 * pipeline with neither has no strategy). A later call with the same name
 * returns the existing object and ignores cfg. Clock and sink fields left
 * NULL get the registry's. The registry owns what it creates. NULL with err:
 * BW_E_INVAL (bad name, invalid cfg — the kind's own error), BW_E_NOMEM. */
BW_EXTERN bw_bulkhead_t *bw_registry_bulkhead(bw_registry_t *reg,
                                              const char *name,
                                              const bw_bulkhead_config_t *cfg,
                                              bw_error_t *err);
/* As bw_registry_bulkhead, for a concurrency limiter. */
BW_EXTERN bw_limiter_t *bw_registry_limiter(bw_registry_t *reg,
                                            const char *name,
                                            const bw_limiter_config_t *cfg,
                                            bw_error_t *err);
/* As bw_registry_bulkhead, for a rate limiter. */
BW_EXTERN bw_ratelimit_t *bw_registry_ratelimit(
    bw_registry_t *reg, const char *name, const bw_ratelimit_config_t *cfg,
    bw_error_t *err);
/* As bw_registry_bulkhead, for a retry policy. */
BW_EXTERN bw_retry_policy_t *bw_registry_retry(bw_registry_t *reg,
                                               const char *name,
                                               const bw_retry_config_t *cfg,
                                               bw_error_t *err);
/* As bw_registry_bulkhead, for a retry budget. */
BW_EXTERN bw_budget_t *bw_registry_budget(bw_registry_t *reg, const char *name,
                                          const bw_budget_config_t *cfg,
                                          bw_error_t *err);
/* As bw_registry_bulkhead, for a pipeline (its strategies are borrowed as
 * bw_pipeline_new borrows them). */
BW_EXTERN bw_pipeline_t *bw_registry_pipeline(bw_registry_t *reg,
                                              const char *name,
                                              const bw_pipeline_config_t *cfg,
                                              bw_error_t *err);
/* As bw_registry_bulkhead, for a bounded priority queue. */
BW_EXTERN bw_queue_t *bw_registry_queue(bw_registry_t *reg, const char *name,
                                        const bw_queue_config_t *cfg,
                                        bw_error_t *err);
/* As bw_registry_bulkhead, for a backpressure stage. */
BW_EXTERN bw_stage_t *bw_registry_stage(bw_registry_t *reg, const char *name,
                                        const bw_stage_config_t *cfg,
                                        bw_error_t *err);
/* As bw_registry_bulkhead, for a degradation machine. */
BW_EXTERN bw_degrade_t *bw_registry_degrade(bw_registry_t *reg,
                                            const char *name,
                                            const bw_degrade_config_t *cfg,
                                            bw_error_t *err);
/* As bw_registry_bulkhead, for a pressure gauge. */
BW_EXTERN bw_gauge_t *bw_registry_gauge(bw_registry_t *reg, const char *name,
                                        const bw_gauge_config_t *cfg,
                                        bw_error_t *err);
/* As bw_registry_bulkhead, for a client-side throttle (a pipeline takes it
 * with bw_pipeline_add_strategy(&pc, bw_throttle_strategy(t), 0)). */
BW_EXTERN bw_throttle_t *bw_registry_throttle(bw_registry_t *reg,
                                              const char *name,
                                              const bw_throttle_config_t *cfg,
                                              bw_error_t *err);

/* Puts an object created elsewhere into the registry under (kind, name): a
 * shared-memory or Redis breaker (BW_REGISTRY_BREAKER_IF, obj a
 * bw_breaker_if_t *), or any other kind but BW_REGISTRY_BREAKER (obj the
 * kind's own pointer type). Borrowed: the registry never frees it, and it
 * must outlive the registry. BW_OK; BW_E_INVAL (NULL obj, bad name or kind,
 * BW_REGISTRY_BREAKER, or the name already taken in that kind: err.field
 * "name"), BW_E_NOMEM. */
BW_EXTERN int bw_registry_put_object(bw_registry_t *reg,
                                     bw_registry_kind_t kind, const char *name,
                                     void *obj, bw_error_t *err);

/* The object of `kind` named `name`, or NULL; never creates. For
 * BW_REGISTRY_BREAKER it is bw_registry_find_breaker (held: put it back);
 * for the other kinds the pointer is borrowed until bw_registry_free. */
BW_EXTERN void *bw_registry_find(bw_registry_t *reg, bw_registry_kind_t kind,
                                 const char *name);

/* Evicts every evictable idle object now; returns how many. */
BW_EXTERN size_t bw_registry_evict_idle(bw_registry_t *reg);
/* Number of live in-process breakers (the objects of other kinds are not
 * counted: see bw_registry_count). */
BW_EXTERN size_t bw_registry_size(const bw_registry_t *reg);
/* Number of live objects of `kind` (BW_REGISTRY_BREAKER: bw_registry_size). */
BW_EXTERN size_t bw_registry_count(bw_registry_t *reg, bw_registry_kind_t kind);

/* Calls cb for every breaker (in name order) with its stats snapshot. The
 * registry is locked during the walk: cb must not call the registry. */
typedef void (*bw_registry_breaker_cb)(const char *name,
                                       const bw_breaker_stats_t *stats,
                                       void *userdata);
BW_EXTERN void bw_registry_foreach_breaker(bw_registry_t *reg,
                                           bw_registry_breaker_cb cb,
                                           void *userdata);

/* Prometheus text exposition (format 0.0.4) of every object: counters and
 * gauges with the object name as a label. Writes to fp; BW_OK, BW_E_IO (a
 * write or flush failed), BW_E_NOMEM, or BW_E_INVAL (NULL argument). */
BW_EXTERN int bw_registry_write_prometheus(bw_registry_t *reg, FILE *fp);
/* The same text in a NUL-terminated buffer the caller frees with bw_free;
 * *len (if not NULL) gets its length. NULL on out of memory. */
BW_EXTERN char *bw_registry_prometheus(bw_registry_t *reg, size_t *len);

/* The same exposition in the OpenMetrics 1.0 text format (content type
 * application/openmetrics-text; version=1.0.0): the same samples, with
 * counter families named without `_total` in their HELP/TYPE lines, a UNIT
 * line for the families in seconds or ratios, and the closing `# EOF`
 * (docs/registry.md). Same answers as bw_registry_write_prometheus /
 * bw_registry_prometheus. */
BW_EXTERN int bw_registry_write_openmetrics(bw_registry_t *reg, FILE *fp);
BW_EXTERN char *bw_registry_openmetrics(bw_registry_t *reg, size_t *len);

/* ---- collectors: metrics of objects the core does not know -------------
 *
 * A component (the curl driver: bw_curl_put_registry) or a user registers a
 * collect function under a name; every exposition (Prometheus and
 * OpenMetrics) calls it, and it emits samples through the emit function the
 * registry passes. The registry groups the samples of every collector by
 * family, so each family's HELP/TYPE (and UNIT) lines appear once, with one
 * `name="<collector name>"` label value per collector, families in byte
 * order after the built-in ones. It checks every sample: a sample that would
 * make the text malformed or ambiguous is refused (emit answers BW_E_INVAL
 * with err naming the field and the rule, and
 * breakwater_registry_collector_refused_total counts it), never written.
 * docs/registry.md has the rules. */

typedef enum bw_metric_type_e {
  BW_METRIC_COUNTER = 0, /* the family name ends in _total; value >= 0 */
  BW_METRIC_GAUGE = 1
} bw_metric_type_t;

/* One extra label of a sample: name [a-zA-Z_][a-zA-Z0-9_]*, not starting
 * with "__", and none of "name" (the registry's), "le", "quantile"; value
 * any bytes (escaped as the object names are). */
typedef struct bw_metric_label_s {
  const char *name;
  const char *value;
} bw_metric_label_t;

#define BW_METRIC_LABELS_MAX 8

/* One sample, valid during the emit call only (the registry copies it). */
typedef struct bw_metric_sample_s {
  const char *family; /* [a-zA-Z_][a-zA-Z0-9_]*, at most BW_NAME_MAX bytes */
  bw_metric_type_t type;
  const char *help; /* one line of text (a newline is escaped), non-empty */
  const char *unit; /* NULL, or the family's base unit ("seconds",
                       "bytes"): the name must end in _<unit> (before
                       _total): OpenMetrics' UNIT line */
  const bw_metric_label_t *labels; /* label_count of them (NULL when 0) */
  size_t label_count;              /* at most BW_METRIC_LABELS_MAX */
  double value; /* a counter: finite, >= 0; a gauge: any (NaN, +-Inf too) */
} bw_metric_sample_t;

/* The emit function the registry passes to a collector: BW_OK, or
 * BW_E_INVAL with err (may be NULL) naming the field at fault ("family",
 * "type", "help", "unit", "labels", "value") and the rule: the sample is
 * then not written. */
typedef int (*bw_metric_emit_fn)(void *emit_ctx, const bw_metric_sample_t *s,
                                 bw_error_t *err);

/* A collector: emits its object's samples with emit(emit_ctx, &sample, err)
 * and returns BW_OK. Any other answer means its object could not be read:
 * its samples of that exposition are dropped and
 * breakwater_registry_collector_up is 0. It runs on the thread that asked
 * for the exposition, with the registry's collector lock held: it must not
 * call bw_registry_put_collector, bw_registry_remove_collector or an
 * exposition function of the same registry (the others are fine). */
typedef int (*bw_collect_fn)(void *obj, bw_metric_emit_fn emit, void *emit_ctx);

/* Registers fn(obj, ...) under `name` (the name label of its samples;
 * copied). obj is borrowed: it must stay valid until the collector is
 * removed or the registry freed. BW_OK; BW_E_INVAL with err.field "reg"
 * (NULL), "name" (NULL, empty, longer than BW_NAME_MAX bytes, or taken by
 * another collector) or "fn" (NULL); BW_E_NOMEM. */
BW_EXTERN int bw_registry_put_collector(bw_registry_t *reg, const char *name,
                                        bw_collect_fn fn, void *obj,
                                        bw_error_t *err);
/* Removes the collector named `name`: when this returns, it is not running
 * and will never be called again (its object may be freed). BW_OK,
 * BW_E_NOTFOUND, or BW_E_INVAL (NULL reg or name). */
BW_EXTERN int bw_registry_remove_collector(bw_registry_t *reg,
                                           const char *name);
/* Number of collectors (0 for NULL). */
BW_EXTERN size_t bw_registry_collector_count(bw_registry_t *reg);

/* Frees the registry and every object in it (NULL is fine). No hold may be
 * in use. */
BW_EXTERN void bw_registry_free(bw_registry_t *reg);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_REGISTRY_H */

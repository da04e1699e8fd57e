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
#include "common.h"

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

/* Evicts every evictable idle object now; returns how many. */
BW_EXTERN size_t bw_registry_evict_idle(bw_registry_t *reg);
/* Number of live objects. */
BW_EXTERN size_t bw_registry_size(const bw_registry_t *reg);

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

/* Frees the registry and every object in it (NULL is fine). No hold may be
 * in use. */
BW_EXTERN void bw_registry_free(bw_registry_t *reg);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_REGISTRY_H */

/* breakwater — helpers shared by the queue store backends (store.h): the
 * memory store (src/core/store_mem.c), the SQLite store and the Redis store.
 *
 * Header-only and built on public functions alone (bw_sink_emit,
 * bw_clock_now, bw_context_current), so a backend that may be linked against
 * the shared library, whose internals are hidden, can use it too. Every
 * backend emits the same two queue events with the same fields and reason
 * texts; they are written here once.
 *
 * Not thread-safe by themselves: a backend gathers events into a
 * bw__qev_buf_t under its own lock and emits them after releasing it. */
#ifndef BREAKWATER_STORE_INTERNAL_H
#define BREAKWATER_STORE_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "breakwater/event.h"
#include "breakwater/store.h"

/* A copy of len bytes (data may be NULL when len is 0) followed by a NUL,
 * through the library's allocator hooks (bw_store_malloc; free it with
 * bw_free). NULL when out of memory. */
static inline void *bw__qs_copy(const void *data, size_t len) {
  char *p = bw_store_malloc(len + 1);
  if (p == NULL) return NULL;
  if (len) memcpy(p, data, len);
  p[len] = '\0';
  return p;
}

static inline void bw__qs_uint(bw_field_t *f, const char *key, uint64_t v) {
  f->key = key;
  f->type = BW_FIELD_UINT;
  f->v.u = v;
}

/* Fills the three fields of a queue_warning event (depth, max_size, fill)
 * and its reason text ("queue at 70% of capacity (7/10)"). */
static inline void bw__qs_warning_fields(uint32_t max_size, uint64_t depth,
                                         bw_field_t f[3], char *reason,
                                         size_t reason_size) {
  bw__qs_uint(&f[0], "depth", depth);
  bw__qs_uint(&f[1], "max_size", max_size);
  f[2].key = "fill";
  f[2].type = BW_FIELD_DOUBLE;
  f[2].v.d = (double)depth / (double)max_size;
  snprintf(reason, reason_size, "queue at %.0f%% of capacity (%llu/%u)",
           f[2].v.d * 100.0, (unsigned long long)depth, (unsigned)max_size);
}

/* Fills the five fields of a dead_lettered event (reason, item_id, dlq_id,
 * deliveries, count); `reason` is borrowed by f[0]. The event's reason text
 * is the record's error. */
static inline void bw__qs_dead_fields(const char *reason, uint64_t item_id,
                                      uint64_t dlq_id, uint64_t deliveries,
                                      uint64_t count, bw_field_t f[5]) {
  f[0].key = "reason";
  f[0].type = BW_FIELD_STR;
  f[0].v.s = reason;
  bw__qs_uint(&f[1], "item_id", item_id);
  bw__qs_uint(&f[2], "dlq_id", dlq_id);
  bw__qs_uint(&f[3], "deliveries", deliveries);
  bw__qs_uint(&f[4], "count", count);
}

/* ---- events gathered under a lock, emitted after it -------------------- */

#define BW__QEV_MAX                                         \
  20 /* more in one call are dropped (counters still count) \
      */

typedef struct bw__qev_s {
  bw_event_type_t type; /* BW_EV_QUEUE_WARNING or BW_EV_DEAD_LETTERED */
  uint64_t item_id, dlq_id, count, depth;
  uint32_t deliveries;
  char reason[32];
  char error[160];
} bw__qev_t;

typedef struct bw__qev_buf_s {
  size_t n;
  bw__qev_t ev[BW__QEV_MAX];
} bw__qev_buf_t;

/* Records a queue_warning at `depth` (nothing when the buffer is full). */
static inline void bw__qev_warning(bw__qev_buf_t *eb, uint64_t depth) {
  bw__qev_t *e;
  if (eb->n >= BW__QEV_MAX) return;
  e = &eb->ev[eb->n++];
  memset(e, 0, sizeof(*e));
  e->type = BW_EV_QUEUE_WARNING;
  e->depth = depth;
}

/* Records a dead_lettered event for one record (count 1; a backend that
 * refuses a batch tail raises the count of the first one instead). */
static inline void bw__qev_dead(bw__qev_buf_t *eb, uint64_t item_id,
                                uint64_t dlq_id, uint32_t deliveries,
                                const char *reason, const char *error) {
  bw__qev_t *e;
  if (eb->n >= BW__QEV_MAX) return;
  e = &eb->ev[eb->n++];
  memset(e, 0, sizeof(*e));
  e->type = BW_EV_DEAD_LETTERED;
  e->item_id = item_id;
  e->dlq_id = dlq_id;
  e->deliveries = deliveries;
  e->count = 1;
  snprintf(e->reason, sizeof(e->reason), "%s", reason);
  snprintf(e->error, sizeof(e->error), "%s", error);
}

/* Emits the gathered events into cfg->sink (nothing when it is NULL), named
 * `name`, at mono_ns on the store's clock and cfg->wall_clock's reading, with
 * the calling thread's context. Call without the store's lock held. */
static inline void bw__qev_emit(const bw__qev_buf_t *eb,
                                const bw_queue_store_config_t *cfg,
                                const char *name, int64_t mono_ns) {
  size_t i;
  if (cfg->sink == NULL) return;
  for (i = 0; i < eb->n; i++) {
    const bw__qev_t *e = &eb->ev[i];
    bw_field_t f[5];
    bw_event_t ev;
    char reason[256];
    memset(&ev, 0, sizeof(ev));
    ev.type = e->type;
    ev.wall_ns = bw_clock_now(cfg->wall_clock);
    ev.mono_ns = mono_ns;
    ev.name = name;
    ev.fields = f;
    ev.context = bw_context_current();
    if (e->type == BW_EV_QUEUE_WARNING) {
      bw__qs_warning_fields(cfg->max_size, e->depth, f, reason, sizeof(reason));
      ev.reason = reason;
      ev.field_count = 3;
    } else {
      bw__qs_dead_fields(e->reason, e->item_id, e->dlq_id, e->deliveries,
                         e->count, f);
      ev.reason = e->error;
      ev.field_count = 5;
    }
    bw_sink_emit(cfg->sink, &ev);
  }
}

#endif /* BREAKWATER_STORE_INTERNAL_H */

/* The two queue events every queue store backend emits (store.h): one
 * writer, so the memory, SQLite and Redis backends cannot drift apart. */
#include <stdio.h>
#include <string.h>

#include "breakwater/store.h"
#include "internal.h"

void bw_queue_event_warning(bw_sink_t *sink, const bw_clock_t *wall,
                            const char *name, int64_t mono_ns,
                            uint32_t max_size, uint64_t depth) {
  bw_field_t f[3];
  char reason[128];
  double fill = max_size > 0 ? (double)depth / (double)max_size : 0.0;
  if (sink == NULL) return;
  f[0] = bw_field_uint("depth", depth);
  f[1] = bw_field_uint("max_size", max_size);
  f[2] = bw_field_double("fill", fill);
  snprintf(reason, sizeof(reason), "queue at %.0f%% of capacity (%llu/%u)",
           fill * 100.0, (unsigned long long)depth, (unsigned)max_size);
  bw_event_emit(sink, wall, mono_ns, BW_EV_QUEUE_WARNING, name, reason, f, 3,
                NULL);
}

void bw_queue_event_dead_lettered(bw_sink_t *sink, const bw_clock_t *wall,
                                  const char *name, int64_t mono_ns,
                                  const char *reason, const char *error,
                                  uint64_t item_id, uint64_t dlq_id,
                                  uint64_t deliveries, uint64_t count) {
  bw_field_t f[5];
  if (sink == NULL) return;
  f[0] = bw_field_str("cause", reason != NULL ? reason : "");
  f[1] = bw_field_uint("item_id", item_id);
  f[2] = bw_field_uint("dlq_id", dlq_id);
  f[3] = bw_field_uint("deliveries", deliveries);
  f[4] = bw_field_uint("count", count);
  bw_event_emit(sink, wall, mono_ns, BW_EV_DEAD_LETTERED, name, error, f, 5,
                NULL);
}

void bw_queue_events_warning(bw_queue_events_t *eb, uint64_t depth) {
  if (eb == NULL || eb->n >= BW_QUEUE_EVENTS_MAX) return;
  memset(&eb->ev[eb->n], 0, sizeof(eb->ev[0]));
  eb->ev[eb->n].type = BW_EV_QUEUE_WARNING;
  eb->ev[eb->n].depth = depth;
  eb->n++;
}

void bw_queue_events_dead(bw_queue_events_t *eb, uint64_t item_id,
                          uint64_t dlq_id, uint32_t deliveries,
                          const char *reason, const char *error) {
  if (eb == NULL || eb->n >= BW_QUEUE_EVENTS_MAX) return;
  memset(&eb->ev[eb->n], 0, sizeof(eb->ev[0]));
  eb->ev[eb->n].type = BW_EV_DEAD_LETTERED;
  eb->ev[eb->n].item_id = item_id;
  eb->ev[eb->n].dlq_id = dlq_id;
  eb->ev[eb->n].deliveries = deliveries;
  eb->ev[eb->n].count = 1;
  snprintf(eb->ev[eb->n].reason, sizeof(eb->ev[0].reason), "%s",
           reason != NULL ? reason : "");
  snprintf(eb->ev[eb->n].error, sizeof(eb->ev[0].error), "%s",
           error != NULL ? error : "");
  eb->n++;
}

void bw_queue_events_set_dead_count(bw_queue_events_t *eb, uint64_t count) {
  if (eb == NULL) return;
  for (size_t i = 0; i < eb->n; i++)
    if (eb->ev[i].type == BW_EV_DEAD_LETTERED) eb->ev[i].count = count;
}

void bw_queue_events_emit(const bw_queue_events_t *eb,
                          const bw_queue_store_config_t *cfg, const char *name,
                          int64_t mono_ns) {
  if (eb == NULL || cfg == NULL || cfg->sink == NULL) return;
  for (size_t i = 0; i < eb->n; i++) {
    if (eb->ev[i].type == BW_EV_QUEUE_WARNING)
      bw_queue_event_warning(cfg->sink, cfg->wall_clock, name, mono_ns,
                             cfg->max_size, eb->ev[i].depth);
    else
      bw_queue_event_dead_lettered(cfg->sink, cfg->wall_clock, name, mono_ns,
                                   eb->ev[i].reason, eb->ev[i].error,
                                   eb->ev[i].item_id, eb->ev[i].dlq_id,
                                   eb->ev[i].deliveries, eb->ev[i].count);
  }
}

/* breakwater — typed events and sinks. Nothing is silent: every state change,
 * rejection summary, eviction (and, in later components, every shed item,
 * retry and give-up) is an event delivered to a sink.
 *
 * An event is a type, a timestamp, the object's name, a human reason and a
 * list of typed fields; the JSON-lines sink writes it as one object per line
 * (docs/events.md; JSON Schema in docs/events.schema.json):
 *   {"event":"circuit_opened","ts":"2026-08-07T14:12:03.418Z",
 *    "kind":"breaker","name":"payment_api","reason":"failure ratio 0.55 >=
 *    0.50 over 10000 ms (22 calls)","break_ms":15000,
 *    "ctx":{"request_id":"3e7a9c10"}}
 * with the caller's context (bw_context_set / permit.context) under "ctx",
 * and the W3C trace-id of the thread's current trace (trace.h) as
 * "trace_id" when one is set. */
#ifndef BREAKWATER_EVENT_H
#define BREAKWATER_EVENT_H

#include <stdio.h>

#include "common.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The one list of event types: XX(NAME, "wire_name", "kind"), where kind
 * is the kind of object that emits it (the "kind" key of a JSON line).
 * Append only. */
#define BW_EVENT_MAP(XX)                                        \
  XX(CIRCUIT_OPENED, "circuit_opened", "breaker")               \
  XX(CIRCUIT_HALF_OPENED, "circuit_half_opened", "breaker")     \
  XX(CIRCUIT_CLOSED, "circuit_closed", "breaker")               \
  XX(CIRCUIT_ISOLATED, "circuit_isolated", "breaker")           \
  XX(CIRCUIT_DISABLED, "circuit_disabled", "breaker")           \
  XX(CIRCUIT_RESET, "circuit_reset", "breaker")                 \
  XX(CALLS_REJECTED, "calls_rejected", "breaker")               \
  XX(REGISTRY_EVICTED, "registry_evicted", "registry")          \
  XX(METRICS_ONLY_CHANGED, "metrics_only_changed", "breaker")   \
  XX(RETRY_SCHEDULED, "retry_scheduled", "retry")               \
  XX(RETRY_GAVE_UP, "retry_gave_up", "retry")                   \
  XX(REGIME_CHANGED, "regime_changed", "gauge")                 \
  XX(DEGRADE_LEVEL_CHANGED, "degrade_level_changed", "degrade") \
  XX(QUEUE_WARNING, "queue_warning", "queue")                   \
  XX(DEAD_LETTERED, "dead_lettered", "queue")                   \
  XX(REDIS_UNAVAILABLE, "redis_unavailable", "redis")           \
  XX(REDIS_RESTORED, "redis_restored", "redis")                 \
  XX(LIMIT_CHANGED, "limit_changed", "limiter")                 \
  XX(BULKHEAD_REJECTED, "bulkhead_rejected", "bulkhead")        \
  XX(RATE_LIMITED, "rate_limited", "ratelimit")                 \
  XX(RETRIES_REFUSED, "retries_refused", "budget")              \
  XX(STAGE_DROPPED, "stage_dropped", "stage")                   \
  XX(PIPELINE_GAVE_UP, "pipeline_gave_up", "pipeline")          \
  XX(BUDGET_EXHAUSTED, "budget_exhausted", "budget")            \
  XX(LIMITER_REJECTED, "limiter_rejected", "limiter")           \
  XX(QUEUE_DROPPED, "queue_dropped", "queue")                   \
  XX(STAGE_REGIME_CHANGED, "stage_regime_changed", "stage")     \
  XX(ALERT_FIRING, "alert_firing", "alert")                     \
  XX(ALERT_RESOLVED, "alert_resolved", "alert")                 \
  XX(THROTTLE_REFUSED, "throttle_refused", "throttle")

typedef enum bw_event_type_e {
#define BW__XX(name, wire, kind) BW_EV_##name,
  BW_EVENT_MAP(BW__XX)
#undef BW__XX
      BW_EV__COUNT
} bw_event_type_t;

/* The wire name of an event type ("circuit_opened"), or "unknown". */
BW_EXTERN const char *bw_event_type_name(bw_event_type_t type);
/* The kind of object that emits an event type ("breaker", "retry",
 * "queue", ...), or "unknown". */
BW_EXTERN const char *bw_event_type_kind(bw_event_type_t type);

typedef enum bw_field_type_e {
  BW_FIELD_INT = 0,
  BW_FIELD_UINT = 1,
  BW_FIELD_DOUBLE = 2,
  BW_FIELD_STR = 3,
  BW_FIELD_BOOL = 4
} bw_field_type_t;

typedef struct bw_field_s {
  const char *key;
  bw_field_type_t type;
  union {
    int64_t i;
    uint64_t u;
    double d;
    const char *s;
    bool b;
  } v;
} bw_field_t;

/* One field, for emitters (bw_event_emit) and collectors:
 *   bw_field_t f[2] = {bw_field_uint("count", n), bw_field_str("kind", k)};
 * The key and a string value are borrowed, as in bw_field_t. */
static inline bw_field_t bw_field_int(const char *key, int64_t v) {
  bw_field_t f;
  f.key = key;
  f.type = BW_FIELD_INT;
  f.v.i = v;
  return f;
}
static inline bw_field_t bw_field_uint(const char *key, uint64_t v) {
  bw_field_t f;
  f.key = key;
  f.type = BW_FIELD_UINT;
  f.v.u = v;
  return f;
}
static inline bw_field_t bw_field_double(const char *key, double v) {
  bw_field_t f;
  f.key = key;
  f.type = BW_FIELD_DOUBLE;
  f.v.d = v;
  return f;
}
static inline bw_field_t bw_field_str(const char *key, const char *v) {
  bw_field_t f;
  f.key = key;
  f.type = BW_FIELD_STR;
  f.v.s = v;
  return f;
}
static inline bw_field_t bw_field_bool(const char *key, bool v) {
  bw_field_t f;
  f.key = key;
  f.type = BW_FIELD_BOOL;
  f.v.b = v;
  return f;
}

/* An event. Everything it points to is valid only during the sink call: a sink
 * that keeps an event must copy what it needs. */
typedef struct bw_event_s {
  bw_event_type_t type;
  int64_t wall_ns;          /* wall-clock time, ns since the Unix epoch */
  int64_t mono_ns;          /* the emitting object's clock reading */
  const char *name;         /* the object's name */
  const char *reason;       /* why, in words; may be "" */
  const bw_field_t *fields; /* event-specific fields, in order */
  size_t field_count;
  const bw_context_t *context; /* caller context, or NULL */
  const bw_trace_t *trace;     /* the emitting thread's current trace
                                  (bw_trace_set), or NULL; written as
                                  "trace_id" when valid */
} bw_event_t;

typedef void (*bw_event_cb)(const bw_event_t *event, void *userdata);

/* A sink receives events. Sinks are thread-safe: objects on many threads may
 * emit into one sink at once. A sink must outlive every object that uses it.
 * A sink callback must not call functions that change the emitting object's
 * state (isolate, reset, ...); reading stats is fine. */
typedef struct bw_sink_s bw_sink_t;

/* A sink that calls cb(event, userdata) for each event. The callback may run
 * on any thread, concurrently with itself. NULL and sets err on bad input. */
BW_EXTERN bw_sink_t *bw_sink_callback_new(bw_event_cb cb, void *userdata,
                                          bw_error_t *err);
/* A sink writing one JSON object per line to `fp` (not closed by the sink),
 * flushing after each line; lines from many threads never interleave. */
BW_EXTERN bw_sink_t *bw_sink_json_new(FILE *fp, bw_error_t *err);
/* A sink that forwards each event to `a` then `b` (neither is owned). */
BW_EXTERN bw_sink_t *bw_sink_tee_new(bw_sink_t *a, bw_sink_t *b,
                                     bw_error_t *err);
/* Delivers an event to a sink. NULL sink is a no-op. */
BW_EXTERN void bw_sink_emit(bw_sink_t *sink, const bw_event_t *event);
/* Frees a sink (NULL is fine). Not while objects still emit into it. */
BW_EXTERN void bw_sink_free(bw_sink_t *sink);

/* Formats an event as one JSON object followed by '\n' into buf (always
 * NUL-terminated when size > 0). Returns the length the full line needs, not
 * counting the NUL, like snprintf: a result >= size means it was cut. A NULL
 * event formats as nothing: 0, and buf (when size > 0) is "". */
BW_EXTERN size_t bw_event_format_json(const bw_event_t *event, char *buf,
                                      size_t size);

/* Formats ns since the Unix epoch as ISO-8601 UTC with milliseconds,
 * "2026-08-07T14:12:03.418Z", into buf (at least 25 bytes). Returns buf. */
BW_EXTERN char *bw_format_iso8601_ms(int64_t wall_ns, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_EVENT_H */

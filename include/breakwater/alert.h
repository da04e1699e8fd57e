/* breakwater — an alert rule over events: "the breaker opened in N of the
 * last M windows" (the Polly lab's alarm: a circuit_opened in each of 3
 * one-minute windows).
 *
 * Time is cut into windows of window_ms, aligned to multiples of window_ms
 * on the alert's clock (on a wall clock: whole minutes for 60 s, as a
 * metrics system's periods are). A window *breaches* when at least one
 * watched event (its type, and its object name when one is given) falls in
 * it. The rule is evaluated each time a window closes, over the M windows
 * that have closed last: N or more breaching -> FIRING; fewer -> RESOLVED.
 * A window that is still open never counts, so the answer never changes
 * back within a window, and firing comes at the end of the window that
 * completed the count (the alarm's behaviour: it reads whole periods).
 * Each change is an event, `alert_firing` or `alert_resolved` (kind
 * "alert"), stamped with the end of the window that decided it; the state
 * is a Prometheus gauge (bw_alert_write_prometheus).
 *
 * Feed it from a sink (bw_alert_sink_new: every event an object emits,
 * counted at the alert's clock), or with explicit times (bw_alert_observe,
 * bw_alert_advance: a recorded stream, `breakwater alert`). Windows close
 * only when the alert learns that time has passed: an observation or an
 * advance at a later time; call bw_alert_advance from a timer to close
 * quiet windows on time.
 *
 * All functions are thread-safe (a mutex). Events are emitted under it: a
 * sink given to the alert must not feed the alert back (it cannot watch
 * alert_firing or alert_resolved, refused by validate). */
#ifndef BREAKWATER_ALERT_H
#define BREAKWATER_ALERT_H

#include <stdio.h>

#include "clock.h"
#include "common.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_alert_s bw_alert_t;

/* The most windows a rule may look back over. */
#define BW_ALERT_MAX_WINDOWS 64

typedef struct bw_alert_config_s {
  const char *name;        /* copied; default "alert" */
  bw_event_type_t watch;   /* the event counted; default BW_EV_CIRCUIT_OPENED;
                              not ALERT_FIRING / ALERT_RESOLVED */
  const char *watch_name;  /* copied; only events of the object with this
                              name count; default NULL or "": any object */
  uint32_t n;              /* breaching windows needed; default 3, 1..m */
  uint32_t m;              /* out of the last m closed windows; default 3,
                              1..BW_ALERT_MAX_WINDOWS */
  int64_t window_ms;       /* default 60000; 1..86400000 (a day) */
  const bw_clock_t *clock; /* default bw_clock_monotonic() */
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
  bw_sink_t *sink; /* alert_firing / alert_resolved; default NULL (none) */
} bw_alert_config_t;

typedef struct bw_alert_stats_s {
  uint64_t observed; /* events handed to the alert */
  uint64_t matched;  /* of those, watched ones counted in a window */
  uint64_t late;     /* watched ones older than the open window: not
                        counted (their window was already judged) */
  uint64_t windows_closed;
  uint64_t fired;      /* transitions to FIRING */
  uint64_t resolved;   /* transitions back */
  uint32_t breaching;  /* breaching windows among the last m closed */
  uint32_t open_count; /* watched events in the open window so far */
  bool firing;
  int64_t open_window_start_ns; /* the open window: [start, start + w) */
} bw_alert_stats_t;

/* Fills the defaults (the Polly lab's alarm: circuit_opened, 3 of 3, 60 s).
 * NULL is ignored. */
BW_EXTERN void bw_alert_config_init(bw_alert_config_t *cfg);
/* BW_OK, or BW_E_INVAL with err naming the field and the rule. */
BW_EXTERN int bw_alert_config_validate(const bw_alert_config_t *cfg,
                                       bw_error_t *err);

/* Parses a rule in the grammar of `breakwater alert --rule`:
 *   EVENT [name=NAME] N/M WINDOW
 * EVENT an event's wire name (docs/events.md) or breaker_opened (the same
 * as circuit_opened); NAME the object's name (no spaces; at most
 * BW_NAME_MAX bytes); N/M as n and m; WINDOW a whole number with a unit,
 * ms, s, m or h ("60s", "1m", "500ms"). Tokens are separated by spaces.
 * Example: "breaker_opened name=payments 3/3 60s". Sets cfg's watch, n, m,
 * window_ms and watch_name (pointing into name_buf, which must hold
 * BW_NAME_MAX + 1 bytes and outlive the use of cfg), leaving the rest;
 * then validates. BW_OK, or BW_E_INVAL with err's field "rule" and a
 * sentence naming the token and the rule it breaks. */
BW_EXTERN int bw_alert_parse_rule(const char *rule, bw_alert_config_t *cfg,
                                  char *name_buf, bw_error_t *err);

/* Creates an alert, RESOLVED, its open window the one holding the clock's
 * current reading. NULL with err set: BW_E_INVAL, BW_E_NOMEM. */
BW_EXTERN bw_alert_t *bw_alert_new(const bw_alert_config_t *cfg,
                                   bw_error_t *err);

/* The NULL policy: the verbs answer BW_E_INVAL for a NULL alert; a NULL
 * alert is not firing, its name is "", its stats are zeros (a NULL out:
 * nothing), and freeing NULL is a no-op. */

/* An event of `type` from the object `name` (NULL counts as "") at now_ns
 * on the alert's clock: first the windows before now_ns close (see
 * advance), then the event is counted when it is watched. Returns 1 when
 * FIRING afterwards, 0 when not; BW_E_INVAL for a NULL alert; an event
 * before the open window is counted as late and changes nothing (the
 * answer is still 0 or 1). */
BW_EXTERN int bw_alert_observe(bw_alert_t *a, bw_event_type_t type,
                               const char *name, int64_t now_ns);
/* Time has reached now_ns: every window that ended at or before it closes,
 * in order, each one evaluated (and, after m quiet windows, the rest at
 * once). Returns 1 when FIRING afterwards, 0 when not; BW_E_INVAL for NULL.
 * A now_ns inside the open window (or before it) closes nothing. */
BW_EXTERN int bw_alert_advance(bw_alert_t *a, int64_t now_ns);

/* A sink that feeds every event it receives to the alert at the alert's
 * clock's current reading (bw_alert_observe). Tee it with your other
 * sinks. Free it with bw_sink_free before the alert. NULL with err set for
 * a NULL alert (BW_E_INVAL) or BW_E_NOMEM. */
BW_EXTERN bw_sink_t *bw_alert_sink_new(bw_alert_t *a, bw_error_t *err);

BW_EXTERN bool bw_alert_firing(const bw_alert_t *a);
BW_EXTERN const char *bw_alert_name(const bw_alert_t *a);
/* An exact snapshot. */
BW_EXTERN void bw_alert_stats(const bw_alert_t *a, bw_alert_stats_t *out);

/* Writes the alert as Prometheus text (the gauge and its counters, the
 * alert's name as the `alert` label, docs/alert.md has the names): BW_OK,
 * BW_E_IO when the write failed, BW_E_INVAL for NULL. */
BW_EXTERN int bw_alert_write_prometheus(const bw_alert_t *a, FILE *fp);

/* Frees the alert (NULL is fine); its sinks from bw_alert_sink_new first. */
BW_EXTERN void bw_alert_free(bw_alert_t *a);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_ALERT_H */

/* breakwater — circuit breaker.
 *
 * A call is bracketed by the permit protocol:
 *
 *   bw_permit_t p;
 *   if (bw_breaker_acquire(b, &p) != BW_OK) {
 *     // rejected fast: bw_breaker_retry_in_ms(b) says when to try again
 *   } else {
 *     bw_outcome_t o = do_call();           // however the caller likes
 *     bw_breaker_release(b, &p, o);
 *   }
 *
 * States: CLOSED (admits, counts), OPEN (rejects until the break ends),
 * HALF_OPEN (admits at most half_open_max_calls probes), ISOLATED (forced open
 * by an operator until reset), DISABLED (always admits, counts, never trips).
 * Metrics-only mode runs the whole state machine and emits every event but
 * never rejects: it lets an operator watch what a breaker would do.
 *
 * Transitions are lazy: there is no timer. OPEN becomes HALF_OPEN at the
 * first acquire after the break (or at bw_breaker_poll); the break is timed
 * from the moment the breaker opened. NULL arguments never crash: a verb
 * (acquire, release) answers BW_E_INVAL, a query a neutral value (state
 * CLOSED, retry_in_ms 0, name "", stats zeros), a control (poll, isolate,
 * reset, disable, set_metrics_only) does nothing. All functions are
 * thread-safe. The
 * CLOSED path is lock-free and allocation-free; transitions take an internal
 * lock and happen exactly once, with exactly one event each. */
#ifndef BREAKWATER_BREAKER_H
#define BREAKWATER_BREAKER_H

#include "clock.h"
#include "common.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_state_e {
  BW_CLOSED = 0,
  BW_OPEN = 1,
  BW_HALF_OPEN = 2,
  BW_ISOLATED = 3,
  BW_DISABLED = 4,
  BW_STATE__COUNT = 5
} bw_state_t;

/* "closed", "open", "half_open", "isolated", "disabled" or "unknown". */
BW_EXTERN const char *bw_state_name(bw_state_t state);

/* The window rules are checked only when a failure (or, with slow_call_ms,
 * a slow call) is recorded, and then both ratios are checked: a success that
 * is not slow never opens a breaker, even one that brings the window to
 * minimum_calls with the ratio already at the threshold. F,F,F,S,S at
 * failure_ratio 0.5 and minimum_calls 5 stays CLOSED; the next failure opens it
 * (docs/breaker.md, "When a window rule decides"). The window is emptied only
 * when the breaker closes or is reset; nothing enters it while the breaker is
 * not CLOSED. */
typedef enum bw_trip_rule_e {
  /* failure_threshold consecutive failures; any success resets the count. */
  BW_TRIP_CONSECUTIVE = 0,
  /* at a failure: the failure ratio over the last window_size calls is at
   * least failure_ratio, with at least minimum_calls in the window. */
  BW_TRIP_COUNT_WINDOW = 1,
  /* at a failure: the failure ratio over the last window_ms (window_buckets
   * buckets) is at least failure_ratio, with at least minimum_calls in the
   * window. Below minimum_calls it never opens, even if every call fails: on
   * calm traffic pick a smaller minimum_calls or the consecutive rule
   * (stats.window_calls shows why it did not open). */
  BW_TRIP_TIME_WINDOW = 2
} bw_trip_rule_t;

/* "consecutive", "count_window", "time_window" or "unknown". */
BW_EXTERN const char *bw_trip_rule_name(bw_trip_rule_t rule);

/* What a per-call listener is told about (bw_breaker_listener_cb). */
typedef enum bw_call_event_e {
  BW_CALL_ADMITTED = 0, /* bw_breaker_acquire answered BW_OK */
  BW_CALL_REJECTED = 1, /* bw_breaker_acquire answered a rejection */
  BW_CALL_RELEASED = 2  /* bw_breaker_release, with the call's outcome */
} bw_call_event_t;

struct bw_breaker_s;

/* A per-call listener (pybreaker's before_call / success / failure hooks):
 * called once by every bw_breaker_acquire and bw_breaker_release that
 * reached the breaker (not for a NULL breaker or permit, or an outcome out
 * of range). `what` says which; `status` is the verb's own answer (acquire:
 * BW_OK, BW_E_OPEN; release: BW_OK, BW_E_STALE); `outcome` is the released
 * call's outcome (BW_SUCCESS for an acquire, where it means nothing).
 *
 * It runs on the thread that called the verb, synchronously, after the
 * breaker decided (after any transition and its events) and with none of
 * the breaker's locks held; calls on many threads run it concurrently. It
 * may read the breaker (state, stats, name), but must not call the same
 * breaker's blocking operations (threads.h's bw_breaker_call and the like,
 * which would re-enter the listener and wait inside it) and should not
 * acquire or release on it; it must be quick, since it runs inside every
 * call. Off by default; unset, it costs one predictable branch per verb. */
typedef void (*bw_breaker_listener_cb)(const struct bw_breaker_s *b,
                                       bw_call_event_t what, int status,
                                       bw_outcome_t outcome, void *userdata);

typedef struct bw_breaker_config_s {
  const char *name;                /* copied; default "breaker" */
  bw_trip_rule_t trip_rule;        /* default BW_TRIP_CONSECUTIVE */
  uint32_t failure_threshold;      /* consecutive rule; default 5, >= 1 */
  double failure_ratio;            /* window rules; default 0.5, in (0, 1] */
  uint32_t window_size;            /* count window, calls; default 100, >= 1 */
  int64_t window_ms;               /* time window; default 10000, >= 1 */
  uint32_t window_buckets;         /* time window; default 10, 1..window_ms */
  uint32_t minimum_calls;          /* window rules; default 20, >= 1 (and
                                      <= window_size for the count window) */
  int64_t slow_call_ms;            /* 0 = off; window rules only; >= 0 */
  double slow_call_ratio;          /* default 1.0, in (0, 1] */
  int64_t break_ms;                /* OPEN duration; default 30000, >= 1 */
  double break_multiplier;         /* growth on consecutive re-opens; default
                                      1.0 (none), >= 1 */
  int64_t max_break_ms;            /* growth cap; default 0 = break_ms;
                                      otherwise >= break_ms */
  uint32_t half_open_max_calls;    /* probes in flight; default 1, >= 1 */
  uint32_t success_threshold;      /* probe successes to close; default 1 */
  int64_t half_open_timeout_ms;    /* stuck-probe guard; default 60000, >= 1 */
  bool metrics_only;               /* never reject; default false */
  const bw_clock_t *clock;         /* default bw_clock_monotonic() */
  const bw_clock_t *wall_clock;    /* event timestamps; default realtime */
  bw_sink_t *sink;                 /* events; default NULL (none) */
  bw_breaker_listener_cb listener; /* per-call listener; default NULL */
  void *listener_userdata;         /* passed to listener */
} bw_breaker_config_t;

typedef struct bw_breaker_s bw_breaker_t;

typedef struct bw_breaker_stats_s {
  bw_state_t state;
  bool metrics_only;
  uint64_t generation;           /* bumps on every transition */
  uint32_t consecutive_failures; /* consecutive rule */
  uint64_t window_calls;         /* calls in the current window */
  uint64_t window_failures;
  uint64_t window_slow;
  double window_failure_ratio; /* 0 when window_calls == 0 */
  double window_slow_ratio;
  /* Totals over the breaker's whole life: no transition, close or reset
   * clears them. */
  uint64_t calls; /* = successes + failures + ignored */
  uint64_t successes;
  uint64_t failures;
  uint64_t ignored;
  uint64_t slow;
  uint64_t stale;    /* outcomes from an older generation */
  uint64_t admitted; /* acquisitions = admitted + rejected */
  uint64_t rejected;
  uint64_t shadow_rejected; /* would have been rejected (metrics-only) */
  uint64_t opens;           /* transitions into OPEN */
  uint64_t half_opens;
  uint64_t closes;
  uint32_t half_open_in_flight;
  int64_t retry_in_ms;      /* as bw_breaker_retry_in_ms */
  int64_t current_break_ms; /* the break now in force (or next) */
  int64_t time_in_state_ms[BW_STATE__COUNT];
} bw_breaker_stats_t;

/* Fills the documented defaults. */
BW_EXTERN void bw_breaker_config_init(bw_breaker_config_t *cfg);

/* Checks a configuration without creating anything: BW_OK, or BW_E_INVAL with
 * err naming the field and the rule. */
BW_EXTERN int bw_breaker_config_validate(const bw_breaker_config_t *cfg,
                                         bw_error_t *err);

/* Creates a breaker (CLOSED). Returns NULL and fills err (if not NULL) on
 * invalid configuration (BW_E_INVAL, naming the field) or BW_E_NOMEM. */
BW_EXTERN bw_breaker_t *bw_breaker_new(const bw_breaker_config_t *cfg,
                                       bw_error_t *err);

/* Asks to make a call. BW_OK: the permit is filled and must be released
 * exactly once. BW_E_OPEN: rejected (OPEN, ISOLATED, or HALF_OPEN with every
 * probe slot taken); the permit is untouched; nothing to release. */
BW_EXTERN int bw_breaker_acquire(bw_breaker_t *b, bw_permit_t *p);

/* Reports the outcome of an admitted call. Outcomes of permits issued in an
 * earlier generation are counted in the totals (and as stale) but decide
 * nothing. Returns BW_OK, BW_E_STALE (counted, decided nothing) or BW_E_INVAL
 * (unknown outcome: nothing counted). */
BW_EXTERN int bw_breaker_release(bw_breaker_t *b, const bw_permit_t *p,
                                 bw_outcome_t outcome);

/* The current state (transitions are lazy: see bw_breaker_poll). */
BW_EXTERN bw_state_t bw_breaker_state(const bw_breaker_t *b);

/* Milliseconds until a call may be admitted: 0 when it may be now (CLOSED,
 * DISABLED, a free probe slot, or the break is over), the rest of the break
 * when OPEN (rounded up), 0 when HALF_OPEN with every probe slot busy (a slot
 * frees as soon as a probe ends), -1 when ISOLATED (until an operator resets).
 */
BW_EXTERN int64_t bw_breaker_retry_in_ms(const bw_breaker_t *b);

/* Applies time-based transitions now (OPEN -> HALF_OPEN after the break,
 * stuck HALF_OPEN -> OPEN), as the next acquire would. HALF_OPEN is stuck
 * when every probe slot is taken and no probe was admitted or released for
 * half_open_timeout_ms; the stuck probes' releases are then stale. */
BW_EXTERN void bw_breaker_poll(bw_breaker_t *b);

/* Operator controls; each emits its event and bumps the generation (permits
 * in flight become stale) even when the breaker is already in the target
 * state. Isolate: forced OPEN until reset. Reset: CLOSED with all windows,
 * counts and break growth cleared (totals are kept). Disable: always admit,
 * never trip (outcomes count in the totals only). bw_breaker_set_metrics_only
 * emits metrics_only_changed only when the flag changes. */
BW_EXTERN void bw_breaker_isolate(bw_breaker_t *b);
BW_EXTERN void bw_breaker_reset(bw_breaker_t *b);
BW_EXTERN void bw_breaker_disable(bw_breaker_t *b);
BW_EXTERN void bw_breaker_set_metrics_only(bw_breaker_t *b, bool on);

/* Changes a live breaker's thresholds (an operator loosening it during an
 * incident, a reloaded configuration file): failure_threshold,
 * failure_ratio, minimum_calls, slow_call_ms (its value; not on or off),
 * slow_call_ratio, break_ms, break_multiplier, max_break_ms,
 * half_open_max_calls, success_threshold, half_open_timeout_ms and
 * metrics_only (as bw_breaker_set_metrics_only). cfg is validated whole.
 * What the breaker's memory was laid out for is fixed at creation:
 * trip_rule, window_size (count window), window_ms and window_buckets (time
 * window), and turning slow_call_ms on or off; a cfg that changes one of
 * them is refused (BW_E_INVAL, err naming it) and nothing changes. The
 * identity and wiring fields (name, clocks, sink, listener) are not read.
 * The state, counts and windows are kept: the new values decide from the
 * next outcome on (a breaker already OPEN keeps its current break; the next
 * opening uses the new break_ms). Each field changes atomically; a decision
 * made while a reconfigure runs may see some fields old and some new.
 * BW_OK; BW_E_INVAL (NULL, invalid cfg, a fixed field). */
BW_EXTERN int bw_breaker_reconfigure(bw_breaker_t *b,
                                     const bw_breaker_config_t *cfg,
                                     bw_error_t *err);
/* Fills cfg with the breaker's configuration now (after any reconfigure):
 * what bw_breaker_new was given, with name pointing at the breaker's own,
 * and the clocks resolved (never NULL). NULL b or cfg: nothing. */
BW_EXTERN void bw_breaker_config_of(const bw_breaker_t *b,
                                    bw_breaker_config_t *cfg);

/* The breaker's name (owned by the breaker). */
BW_EXTERN const char *bw_breaker_name(const bw_breaker_t *b);

/* A consistent-enough snapshot (each counter is exact; counters read at
 * slightly different instants under concurrent use). */
BW_EXTERN void bw_breaker_stats(const bw_breaker_t *b, bw_breaker_stats_t *out);

/* Frees the breaker. NULL is fine. No call may be in progress on it. If
 * rejections happened since the last calls_rejected summary, one last
 * summary is emitted first, so no rejection goes unreported: the clock and
 * the sink of the configuration must still be valid then (free the breaker
 * before them). */
BW_EXTERN void bw_breaker_free(bw_breaker_t *b);

/* ---- the breaker interface ------------------------------------------------
 *
 * One shape for every breaker: the in-process one (bw_breaker_iface), the
 * shared-memory one (bw_shm_breaker_iface, shm.h) and the Redis one
 * (bw_redis_breaker_iface, store_redis.h). A pipeline takes any of them as
 * its breaker strategy (bw_pipeline_add_breaker_if), and so can a driver or
 * a registry:
 *
 *   bw_breaker_if_t *bi = bw_shm_breaker_iface(shared);
 *   bw_permit_t p;
 *   if (bw_breaker_if_try_acquire(bi, &p) == BW_OK) {
 *     ...; bw_breaker_if_release(bi, &p, outcome);
 *   } else {
 *     // BW_E_OPEN: bw_breaker_if_retry_in_ms(bi) says when to try again
 *   }
 *
 * An interface pointer is owned by the breaker it came from and valid until
 * that breaker is freed. Every function is thread-safe when the
 * implementation's are (all three are). Implementing it: put a
 * bw_breaker_if_t in the object, point its `vt` at a static table whose
 * functions are all set, and hand out its address. */
typedef struct bw_breaker_if_s bw_breaker_if_t;

/* The table behind the interface (for implementers). */
typedef struct bw_breaker_vtable_s {
  const char *kind; /* "breaker", "shm_breaker", "redis_breaker", ... */
  /* Never waits: BW_OK and the permit is filled, or BW_E_OPEN. */
  int (*try_acquire)(bw_breaker_if_t *b, bw_permit_t *p);
  /* Receives SUCCESS, FAILURE or IGNORED only (the dispatcher maps the
   * rest). BW_OK, BW_E_STALE or BW_E_INVAL. */
  int (*release)(bw_breaker_if_t *b, const bw_permit_t *p, bw_outcome_t o);
  bw_state_t (*state)(const bw_breaker_if_t *b);
  int64_t (*retry_in_ms)(const bw_breaker_if_t *b);
  const char *(*name)(const bw_breaker_if_t *b);
  void (*free)(bw_breaker_if_t *b);
} bw_breaker_vtable_t;

/* The head of the interface inside every breaker. */
struct bw_breaker_if_s {
  const bw_breaker_vtable_t *vt;
};

/* The in-process breaker through the interface (kind "breaker"). It is the
 * breaker's first member, so the pointer equals b. NULL for NULL. */
BW_EXTERN bw_breaker_if_t *bw_breaker_iface(bw_breaker_t *b);

/* As the implementation's acquire: BW_OK (the permit is filled and must be
 * released exactly once) or BW_E_OPEN (untouched permit, nothing to
 * release). Never waits. BW_E_INVAL for NULL arguments. */
BW_EXTERN int bw_breaker_if_try_acquire(bw_breaker_if_t *b, bw_permit_t *p);

/* Reports an admitted call's outcome. Any bw_outcome_t: TIMED_OUT (and
 * DROPPED, which is FAILURE) count as a failure. BW_OK, BW_E_STALE (counted,
 * decided nothing; for a shared breaker also a probe whose lease expired),
 * BW_E_INVAL for NULL arguments or an unknown outcome (nothing counted). */
BW_EXTERN int bw_breaker_if_release(bw_breaker_if_t *b, const bw_permit_t *p,
                                    bw_outcome_t outcome);

/* The state as the implementation sees it; BW_CLOSED for NULL. */
BW_EXTERN bw_state_t bw_breaker_if_state(const bw_breaker_if_t *b);

/* As bw_breaker_retry_in_ms (0, the rest of the break, -1 when ISOLATED);
 * 0 for NULL. */
BW_EXTERN int64_t bw_breaker_if_retry_in_ms(const bw_breaker_if_t *b);

/* The breaker's name and kind ("breaker", "shm_breaker", "redis_breaker");
 * "" for NULL. Owned by the breaker. */
BW_EXTERN const char *bw_breaker_if_name(const bw_breaker_if_t *b);
BW_EXTERN const char *bw_breaker_if_kind(const bw_breaker_if_t *b);

/* Frees the breaker behind the interface, as its own free function would.
 * NULL is fine. */
BW_EXTERN void bw_breaker_if_free(bw_breaker_if_t *b);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_BREAKER_H */

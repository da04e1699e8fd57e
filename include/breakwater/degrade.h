/* breakwater — graceful degradation: a level machine that steps down fast and
 * climbs slowly (the degradation article).
 *
 * Levels are indices 0 (best: full service) .. level_count - 1 (the last
 * resort). The default four are "full", "reduced", "router", "message".
 *
 *   bw_degrade_pick_t p;
 *   bw_degrade_pick(d, &p);                 // which level serves this request?
 *   bw_outcome_t o = serve_at(p.level);     // p.probe: a trial of the level
 *                                           // above the current one
 *   bw_degrade_report(d, &p, o);            // exactly once per pick
 *
 * Down fast: failures_to_degrade consecutive failures drop one level at once.
 * Up slow: only after min_dwell_ms at the current level, and only through
 * probes — every probe_every-th pick that is eligible is sent to the level
 * above — and probe_successes_to_recover probe successes climb exactly one
 * level. The level's own successes never promote it. docs/degrade.md has the
 * exact rules, which follow the degradation article line by line.
 *
 * External signals: bw_degrade_observe_breaker (a breaker entering OPEN drops
 * one level), bw_degrade_observe_gauge (a pressure gauge entering CRITICAL
 * drops one level) and bw_degrade_force_down_to (a gauge or an operator demands
 * at least a given level of degradation).
 *
 * Every change calls the configured on_change callback exactly once, in order,
 * with from, to and the reason. All functions are thread-safe; they take a
 * short internal lock and never allocate after bw_degrade_new. */
#ifndef BREAKWATER_DEGRADE_H
#define BREAKWATER_DEGRADE_H

#include "breaker.h"
#include "clock.h"
#include "common.h"
#include "event.h"
#include "gauge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most levels a machine may have. */
#define BW_DEGRADE_MAX_LEVELS 16u

/* Why the level changed. */
typedef enum bw_degrade_reason_e {
  /* failures_to_degrade consecutive failures: down one level. */
  BW_DEGRADE_FAILURES = 0,
  /* probe_successes_to_recover probe successes: up one level. */
  BW_DEGRADE_PROBES = 1,
  /* bw_degrade_observe_breaker saw the breaker enter OPEN: down one level. */
  BW_DEGRADE_BREAKER = 2,
  /* bw_degrade_force_down_to: down to the demanded level (may skip levels). */
  BW_DEGRADE_FORCED = 3,
  /* bw_degrade_observe_gauge saw the gauge enter CRITICAL: down one level. */
  BW_DEGRADE_GAUGE = 4
} bw_degrade_reason_t;

/* "failures", "probes", "breaker", "forced", "gauge" or "unknown". */
BW_EXTERN const char *bw_degrade_reason_name(bw_degrade_reason_t reason);

/* One level change, as handed to the on_change callback. The names point into
 * the machine and stay valid while it lives. */
typedef struct bw_degrade_change_s {
  uint32_t from;
  uint32_t to;
  const char *from_name;
  const char *to_name;
  bw_degrade_reason_t reason;
  uint64_t changes; /* the change counter after this change: 1, 2, 3, ... */
  int64_t at_ns;    /* the clock reading that decided it */
} bw_degrade_change_t;

/* Called on every level change, exactly once, under the machine's lock, so
 * calls arrive one at a time and in the order the changes happened. It must
 * not call any bw_degrade_* function on the same machine (everything it needs
 * is in `change`) and should return quickly. */
typedef void (*bw_degrade_change_cb)(const bw_degrade_change_t *change,
                                     void *userdata);

typedef struct bw_degrade_config_s {
  const char *name;               /* copied; default "degrade" */
  uint32_t level_count;           /* default 4; 2..BW_DEGRADE_MAX_LEVELS */
  const char *const *level_names; /* level_count names, copied; each non-empty,
                                     at most BW_NAME_MAX bytes, all distinct.
                                     NULL (default): "full", "reduced",
                                     "router", "message" when level_count is
                                     4, "level0", "level1", ... otherwise */
  int64_t min_dwell_ms;           /* time at a level before any probe; default
                                     60000; >= 0 */
  uint32_t probe_every; /* every Nth eligible pick is a probe; default 20
                           (a probe ratio of 5 %); >= 1 */
  double probe_ratio;   /* the share of eligible picks sent as probes, in
                           [0, 1]; default 0 = use probe_every. When set it
                           wins: of K eligible picks exactly floor(K *
                           probe_ratio) are probes (the ratio taken to 32
                           binary places), spread evenly (the degradation
                           article's   probeRatio, without its randomness) */
  uint32_t probe_successes_to_recover; /* default 20; >= 1 */
  uint32_t failures_to_degrade;        /* default 5; >= 1 */
  const bw_clock_t *clock;             /* default bw_clock_monotonic() */
  bw_degrade_change_cb on_change;      /* default NULL (none) */
  void *on_change_userdata;
  /* degrade_level_changed events (fields from and to, the level names;
   * cause, the change's reason as bw_degrade_reason_name gives it; changes,
   * the change counter), emitted under the machine's lock just before
   * on_change; default NULL. */
  bw_sink_t *sink;
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
} bw_degrade_config_t;

typedef struct bw_degrade_s bw_degrade_t;

/* Which level serves one request. The caller owns it (on its stack) and hands
 * it back to bw_degrade_report exactly once. */
typedef struct bw_degrade_pick_s {
  uint32_t level;      /* serve the request at this level */
  bool probe;          /* a probe: `level` is the level above the current */
  uint64_t generation; /* the change counter when picked */
} bw_degrade_pick_t;

typedef struct bw_degrade_stats_s {
  uint32_t level; /* the current level */
  const char *level_name;
  uint32_t level_count;
  int64_t entered_ns;            /* clock reading when the level was entered */
  int64_t time_at_level_ms;      /* since then */
  bool probing;                  /* min_dwell_ms has passed: probes are sent */
  uint32_t consecutive_failures; /* the streak toward degrading */
  uint32_t probe_successes;      /* the probe streak toward recovering */
  uint64_t changes;              /* every change = downs + ups */
  uint64_t downs;
  uint64_t ups;
  uint64_t picks; /* = sum of picks_at */
  uint64_t probes;
  uint64_t successes; /* reports, stale ones included: reports = successes
                         + failures + ignored */
  uint64_t failures;
  uint64_t ignored;
  uint64_t stale; /* reports from an earlier generation */
  uint64_t probe_successes_total;
  uint64_t probe_failures_total;
  /* Per level (indices >= level_count are 0). */
  uint64_t picks_at[BW_DEGRADE_MAX_LEVELS];   /* requests served there */
  uint64_t entries_at[BW_DEGRADE_MAX_LEVELS]; /* changes into the level */
  int64_t time_at_ms[BW_DEGRADE_MAX_LEVELS];  /* total time spent there */
} bw_degrade_stats_t;

/* Fills the documented defaults. */
BW_EXTERN void bw_degrade_config_init(bw_degrade_config_t *cfg);

/* Checks a configuration without creating anything: BW_OK, or BW_E_INVAL with
 * err naming the field and the rule. */
BW_EXTERN int bw_degrade_config_validate(const bw_degrade_config_t *cfg,
                                         bw_error_t *err);

/* Creates a machine at level 0. Returns NULL and fills err (if not NULL) on
 * invalid configuration (BW_E_INVAL, naming the field) or BW_E_NOMEM. */
BW_EXTERN bw_degrade_t *bw_degrade_new(const bw_degrade_config_t *cfg,
                                       bw_error_t *err);

/* Decides which level serves one request and fills *out. At level 0, or
 * before min_dwell_ms has passed at the current level, every pick is the
 * current level. Afterwards picks are counted and every probe_every-th one is
 * a probe of the level above (exact and deterministic: of K eligible picks,
 * K / probe_every are probes; the count restarts at every change). Returns
 * BW_OK, or BW_E_INVAL if out is NULL. */
BW_EXTERN int bw_degrade_pick(bw_degrade_t *d, bw_degrade_pick_t *out);

/* Reports the outcome of a picked request (the degradation article's
 * recordFailure / recordSuccess):
 * - FAILURE (probe or not): the failure streak grows and the probe streak
 *   resets; at failures_to_degrade the level drops one (not below the last).
 * - SUCCESS: the failure streak resets; a probe success also grows the probe
 *   streak, and at probe_successes_to_recover the level climbs exactly one.
 * - IGNORED: counted, decides nothing.
 * A pick from an earlier generation (the level changed since) is counted in
 * the totals and as stale but decides nothing. Returns BW_OK, BW_E_STALE, or
 * BW_E_INVAL (NULL pick, unknown outcome, or a pick this machine could not
 * have made: nothing counted). */
BW_EXTERN int bw_degrade_report(bw_degrade_t *d, const bw_degrade_pick_t *p,
                                bw_outcome_t outcome);

/* Feeds a breaker's state (e.g. from its events or bw_breaker_state). Edge
 * triggered: each change of the observed state into OPEN or ISOLATED (from any
 * other state; the first observation compares against CLOSED) drops one
 * level, with reason BW_DEGRADE_BREAKER; observing the same state again, or
 * any other state, changes nothing. Recovery still goes through probes.
 * Returns BW_OK or BW_E_INVAL (unknown state). */
BW_EXTERN int bw_degrade_observe_breaker(bw_degrade_t *d, bw_state_t state);

/* Feeds a pressure gauge's regime (gauge.h: from its regime_changed events,
 * its on_change callback or bw_gauge_regime). Edge triggered like the
 * breaker's: each change of the observed regime into CRITICAL (the first
 * observation compares against NORMAL) drops one level, with reason
 * BW_DEGRADE_GAUGE; staying CRITICAL, DEGRADED (the gauge sheds by itself
 * there) and falling back to NORMAL change nothing: recovery still goes
 * through probes. Returns BW_OK or BW_E_INVAL (NULL d, unknown regime). */
BW_EXTERN int bw_degrade_observe_gauge(bw_degrade_t *d, bw_regime_t regime);

/* Demands at least `level` of degradation (a gauge at critical, an operator):
 * when the current level is better (lower) than `level`, jumps straight there
 * with reason BW_DEGRADE_FORCED; otherwise changes nothing. Idempotent, so it
 * may be called on every gauge reading. Returns BW_OK or BW_E_RANGE (level >=
 * level_count). */
BW_EXTERN int bw_degrade_force_down_to(bw_degrade_t *d, uint32_t level);

/* The NULL policy: the verbs above answer BW_E_INVAL for a NULL machine;
 * the queries below read a NULL machine as level 0 named "" (name ""), stats
 * fill zeros (a NULL out: nothing), and freeing NULL is a no-op. */

/* The current level (one atomic load; no lock). */
BW_EXTERN uint32_t bw_degrade_level(const bw_degrade_t *d);

/* The name of a level ("" when level >= level_count; owned by the machine). */
BW_EXTERN const char *bw_degrade_level_name(const bw_degrade_t *d,
                                            uint32_t level);

/* The machine's name (owned by the machine). */
BW_EXTERN const char *bw_degrade_name(const bw_degrade_t *d);

/* A consistent snapshot (taken under the lock). */
BW_EXTERN void bw_degrade_stats(const bw_degrade_t *d, bw_degrade_stats_t *out);

/* Frees the machine. NULL is fine. No call may be in progress on it. */
BW_EXTERN void bw_degrade_free(bw_degrade_t *d);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_DEGRADE_H */

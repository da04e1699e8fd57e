/* breakwater — adaptive concurrency limiter: a bulkhead whose size follows
 * the dependency. Each completed call is a sample (its round-trip time and
 * whether it was dropped); an algorithm turns samples into a new limit.
 *
 *   bw_permit_t p;
 *   if (bw_limiter_try_acquire(lim, &p) != BW_OK) shed();   // BW_E_FULL
 *   else bw_limiter_release(lim, &p, ok ? BW_LIMIT_SUCCESS
 *                                       : BW_LIMIT_DROPPED);
 *
 * The RTT of a SUCCESS is the limiter's clock at release minus
 * permit.start_ns (read at acquire). permit.inflight_at_acquire holds the
 * number of calls in flight at acquire, this one included: the algorithms
 * use it to
 * tell a saturated limit from an idle one ("app-limited"), as Netflix's
 * concurrency-limits does.
 *
 * Algorithms (docs/limiter.md has the formulas and a worked example each):
 * - AIMD: a success that was acquired with in_flight * 2 >= limit raises the
 *   limit by 1 (slow start); after the first decrease, by 1 per `limit` such
 *   successes (one step per round trip). A drop (or a success slower than
 *   aimd_timeout_ms) multiplies the lower of the limit and the limit in
 *   force at the call's acquire by backoff_ratio, rounded down.
 * - GRADIENT2 (Netflix): the ratio of a long-term RTT average to the
 *   sample's RTT, times a tolerance, clamped to [0.5, 1], scales the limit,
 *   plus a queue allowance, smoothed.
 * - VEGAS: once per round trip, on the round's smallest RTT: queue =
 *   limit * (1 - min_rtt / rtt); a short queue grows the limit (doubles it
 *   in slow start, before the first decrease), a long one shrinks it, with
 *   thresholds proportional to log10(limit); a drop multiplies it by
 *   backoff_ratio.
 * Every algorithm decreases on drops (GRADIENT2 also on slow successes)
 * once per congestion event: a drop from a call admitted before the last
 * such decrease is counted but changes nothing (permit.generation records the
 * congestion generation at acquire, permit.limit_at_acquire the limit then
 * in force).
 * The limit always stays in [min_limit, max_limit].
 *
 * Limit changes are reported, rate-limited by change_interval_ms, to an
 * on_change callback and as limit_changed events to a sink (fields
 * old_limit, new_limit, algorithm).
 *
 * Clocks: a timed permit reads the clock at acquire and the RTT at
 * release, two readings per call. The default is the precise
 * bw_clock_monotonic(). bw_clock_monotonic_coarse() is cheaper to read
 * (clock.h) but advances in 4 ms ticks, so it measures an RTT to within one
 * tick (+-4 ms): right for dependencies whose RTTs are tens of milliseconds
 * or more (an HTTP partner at 80-180 ms), wrong for sub-10 ms ones, whose
 * RTTs it reads as 0 or 4 ms. rtt_sample_every times one call in N and
 * reads no clock for the others (docs/limiter.md, "RTT sampling").
 *
 * Thread-safe: try_acquire is a CAS on the in-flight count and release an
 * atomic subtraction, without a lock; a release that is a sample for the
 * algorithm (a drop or a timed success; for AIMD any success) then runs
 * the algorithm's update under the limiter's mutex, once, and publishes
 * the new limit (docs/limiter.md, "Cost and thread safety"). Nothing
 * allocates after creation. */
#ifndef BREAKWATER_LIMITER_H
#define BREAKWATER_LIMITER_H

#include "clock.h"
#include "common.h"
#include "event.h"
#include "limit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_limiter_algorithm_e {
  BW_LIMITER_AIMD = 0,
  BW_LIMITER_GRADIENT2 = 1,
  BW_LIMITER_VEGAS = 2
} bw_limiter_algorithm_t;

/* "aimd", "gradient2", "vegas" or "unknown". */
BW_EXTERN const char *bw_limiter_algorithm_name(bw_limiter_algorithm_t a);

/* Reports changes of the whole-number limit, on the releasing thread,
 * after the limiter's lock is released: each report's old and new values
 * are exact, but other threads may see a new limit before its report, and
 * two threads' reports may arrive out of order (a limit may be reported
 * that held only a moment). It must not acquire or release on the same
 * limiter. With change_interval_ms = 0 every change
 * is reported; otherwise the first change at least change_interval_ms after
 * the previous report is reported as (the limit that report gave, now), and
 * changes inside the interval only count in stats.limit_changes until then.
 * The sink's limit_changed events follow the same rule: one event per
 * report, with the same old and new values, after the callback. */
typedef void (*bw_limiter_change_cb)(const char *name, uint32_t old_limit,
                                     uint32_t new_limit, void *userdata);

typedef struct bw_limiter_config_s {
  /* Copied; default "limiter"; 1..BW_NAME_MAX bytes. */
  const char *name;
  /* Default BW_LIMITER_AIMD. */
  bw_limiter_algorithm_t algorithm;
  /* Default 20, in [min_limit, max_limit]. */
  uint32_t initial_limit;
  /* Default 1, >= 1. */
  uint32_t min_limit;
  /* Default 200, min_limit..1000000. */
  uint32_t max_limit;
  /* A drop multiplies the limit by this; default 0.9, in [0.5, 1). */
  double backoff_ratio;
  /* AIMD: a success slower than this counts as a drop; default 5000;
   * 0 = off; 0..86400000. */
  int64_t aimd_timeout_ms;
  /* GRADIENT2: default 1.5, finite, >= 1. */
  double gradient2_tolerance;
  /* GRADIENT2: default 0.2, in (0, 1]. */
  double gradient2_smoothing;
  /* GRADIENT2: samples in the long-term RTT average; default 600,
   * 1..100000. */
  uint32_t gradient2_long_window;
  /* GRADIENT2: the first samples are averaged plainly; default 10,
   * <= gradient2_long_window. */
  uint32_t gradient2_warmup;
  /* GRADIENT2: the queue allowance; default 4, <= max_limit. */
  uint32_t gradient2_queue_size;
  /* VEGAS: grow while the queue is below alpha * log10(limit); default 3,
   * finite, > 0. */
  double vegas_alpha;
  /* VEGAS: shrink once it is above beta * log10(limit); default 6, finite,
   * > vegas_alpha. */
  double vegas_beta;
  /* VEGAS: default 1.0 (none), in (0, 1]. */
  double vegas_smoothing;
  /* VEGAS: re-learn the no-load RTT after multiplier * limit samples;
   * default 30; 0 = never; 0..1000. */
  uint32_t vegas_probe_multiplier;
  /* Default NULL: bw_clock_monotonic() (precise). An explicit clock is
   * always honoured; bw_clock_monotonic_coarse() halves the cost of a call
   * and reads RTTs to +-4 ms (see above). */
  const bw_clock_t *clock;
  /* Default NULL (none); userdata is passed to it. */
  bw_limiter_change_cb on_change;
  void *userdata;
  /* At most one on_change report per interval (see bw_limiter_change_cb);
   * default 0: every change; 0..86400000. */
  int64_t change_interval_ms;
  /* limit_changed events, one per report (the same reports as on_change,
   * rate-limited by change_interval_ms): name = the limiter's, reason
   * "<algorithm>: limit <old> -> <new>", fields old_limit (uint),
   * new_limit (uint), algorithm (str), in that order; mono_ns is the
   * limiter's clock. Emitted on the releasing thread without a lock, so
   * two threads' events may arrive out of order. Also limiter_rejected
   * summaries of the refusals at the limit (count, limit, algorithm), at
   * most one a second, and the last at bw_limiter_free (docs/limiter.md).
   * Default NULL (none); the sink, clock and wall_clock must outlive the
   * limiter. */
  bw_sink_t *sink;
  /* Event timestamps; default NULL: bw_clock_realtime(). */
  const bw_clock_t *wall_clock;
  /* Guards against overshoot (every algorithm; docs/limiter.md, "Guards
   * against overshoot"). They stop growth, never cut the limit:
   * - A call released BW_LIMIT_TIMED_OUT keeps its slot (counted in
   *   in_flight) for timeout_hold_ratio x its round trip: the dependency
   *   may still be working on it. Default 0.5; 0 = free it at once;
   *   [0, 10].
   * - Growth stops max(4, probe_headroom x proven) above the highest
   *   in-flight count (permit.inflight_at_acquire) of a call that
   *   succeeded. Default 0.125; 0 = off; [0, 1].
   * - A drop of a call admitted at in-flight n >= 90 % of the limit then
   *   stops growth below n for overload_memory_ms (renewed by each such
   *   drop). Default 60000; 0 = off; 0..86400000. */
  double timeout_hold_ratio;
  double probe_headroom;
  int64_t overload_memory_ms;
  /* Startup and stuck probes (docs/limiter.md, "Startup and stuck
   * probes"):
   * - Until the first congestion signal (a drop, a decrease the RTT asks
   *   for, a stuck probe) each success raises the limit at once to
   *   (1 + startup_headroom) x the proven level (startup_max_step above
   *   it at most), whatever the algorithm: slow start, 1.0 doubles per
   *   round trip, 2.0 triples. Without it growth is the algorithm's own,
   *   capped at (1 + probe_headroom) x. Default 0 = off; [0, 4]. Inert
   *   with probe_headroom 0 (no cap to jump to): the algorithm grows.
   *   During startup, drop_tolerance counts against the calls above the
   *   proven level, and stuck_timeout cuts only calls above it.
   * - A level above the proven one (during startup, above initial_limit
   *   too) is admitted once, then refused until a success admitted at
   *   that level or above proves it; a probe still unproven stuck_ratio x
   *   the smoothed RTT after its admission is stuck: the limit is cut to
   *   the proven level at once (a congestion event: later drops of calls
   *   then in flight decrease nothing) and the wall is remembered as a
   *   drop's is (overload_memory_ms). Within 1/32 of the smoothed RTT of
   *   its own first probe, a level may be taken again (with slots handed
   *   off, the next caller in line takes a level the moment it frees).
   * - Stuck calls at any level: the timed calls in flight are counted by
   *   admission time (a fixed ring of 128 buckets, no allocation after
   *   creation), so those older than stuck_ratio x the slowest good
   *   answer lately (successes not slower than that threshold) are
   *   known. A
   *   batch of them admitted after the last decrease, at least 1/16 of the
   *   calls in flight and at least half of the calls admitted in their
   *   buckets (a latency tail leaves a few percent out that long, an
   *   overload most), is a congestion event: the limit is cut to the
   *   calls in flight that are neither stuck nor held, but at most halved,
   *   deepening as more turn stuck until the limit next grows; startup
   *   ends and the stuck calls' later drops decrease nothing.
   *   Default 0 = off; else [1, 100] (2.0 in the lab's breakwater mode). */
  double startup_headroom;
  double stuck_ratio;
  /* RTT sampling: time one call in rtt_sample_every (counted per stripe,
   * which is per thread up to 64 threads, the first call included); the others
   * read no clock and carry start_ns = BW_LIMITER_UNTIMED. An untimed SUCCESS
   * still counts, proves its in-flight level and grows AIMD, but is no RTT
   * sample: GRADIENT2 and VEGAS skip it, and AIMD's aimd_timeout_ms applies to
   * timed calls only. An untimed TIMED_OUT call is held (timeout_hold_ratio)
   * for as long as the latest timed one, or the latest success's RTT before
   * any. DROPPED needs no RTT. For hot paths where two clock reads per call
   * matter (bench/bench_limit: they are most of a call's cost); default 1
   * (every call); 1..1024. */
  uint32_t rtt_sample_every;
  /* Limited slow start (the idea of RFC 3742 for TCP): during startup,
   * growth above the proven level is at most this many calls (but never
   * less than probe_headroom x proven allows), so one startup step cannot
   * admit more than this many calls over a capacity it has not seen yet.
   * Under a dependency whose latency is flat up to its capacity nothing
   * warns before the first call over it, and each such call may hold the
   * dependency's slot for its slow answer: startup_headroom alone lets a
   * step overshoot by up to startup_headroom x the capacity. Growth is
   * x (1 + startup_headroom) per round trip until that many calls would
   * pass startup_max_step, then at most startup_max_step per round trip.
   * Default 0 = no bound; 0..1000000. */
  uint32_t startup_max_step;
  /* Give up on stuck attempts (needs stuck_ratio): in a pipeline, with
   * the limiter inside the retry (bw_pipeline_add_limit after
   * bw_pipeline_add_retry), an attempt admitted above the proven level,
   * or, once startup is over, in its top probe_headroom band (on a
   * network a success may prove a level a few calls above the capacity:
   * answers in transit are not counted by the dependency), gets at most
   * stuck_ratio x the slowest good answer lately (the age at which a call in
   * flight counts as stuck) instead of the attempt's own timeout, when that is
   * shorter. Such an attempt, once given up, is retried at once, without the
   * retry's backoff (no answer came, and the limit paces the retry by its
   * slot, under the limit in force then); its slot stays counted as long as
   * the attempt could have run, its own timeout x (1 + timeout_hold_ratio)
   * from its admission, because the dependency may still be working on
   * it. Its TIMED_OUT release is a stuck call, not a drop: it decreases
   * nothing by itself and remembers no wall, and the stuck-call rule
   * counts it (one answer from the latency's tail must not cut the
   * limit). Attempts with no timeout are never cut, nor any before the
   * limiter has seen 16 good answers (the slowest of fewer is no measure
   * of the dependency's spread). Default false. */
  bool stuck_timeout;
  /* Sparse drops are no congestion: a drop decreases the limit (and
   * remembers a wall, and ends startup) only when more than
   * drop_tolerance x the limit drops have come within a round, the
   * next `limit` releases from the round's first drop (about one round
   * trip at the limit). A dependency that fails or times out a small
   * share of calls whatever the load (a latency tail past the timeout,
   * a flaky backend) then no longer halves the limit every round trip;
   * an overload, which drops most calls over the capacity, still counts
   * at once above the share. During startup the share is of the calls
   * above the proven level (the probes), not of the limit: a dependency
   * that sheds load with fast 429s fails most probes over its capacity.
   * Tolerated drops are counted in drops and tolerated_drops. Default 0 =
   * every drop counts; [0, 0.5]. */
  double drop_tolerance;
} bw_limiter_config_t;

/* permit.start_ns of a call the limiter does not time (rtt_sample_every). */
#define BW_LIMITER_UNTIMED INT64_MIN

typedef struct bw_limiter_s bw_limiter_t;

typedef struct bw_limiter_stats_s {
  bw_limiter_algorithm_t algorithm;
  uint32_t limit;     /* the whole-number limit in force */
  double estimate;    /* the algorithm's fractional estimate */
  uint32_t in_flight; /* admitted and not yet released, plus held slots */
  uint64_t admitted;  /* admitted + rejected = try_acquire calls */
  uint64_t rejected;
  uint64_t successes; /* successes + drops + ignored = releases */
  uint64_t drops;     /* DROPPED, plus AIMD successes past the timeout */
  uint64_t ignored;
  uint64_t limit_changes;   /* changes of the whole-number limit */
  int64_t last_rtt_ns;      /* the latest success's RTT; 0 before any */
  int64_t min_rtt_ns;       /* VEGAS: the no-load RTT; 0 before any */
  int64_t long_rtt_ns;      /* GRADIENT2: the long-term average; 0 before any */
  uint64_t timed_out;       /* releases with BW_LIMIT_TIMED_OUT (also drops) */
  uint32_t held;            /* slots held now for timed-out calls (in
                               in_flight too) */
  uint64_t held_overflow;   /* timed-out slots freed at once: the hold table
                               (min(max_limit, 65536)) was full */
  uint32_t proven;          /* the highest in-flight count a success proved */
  uint32_t disproven;       /* growth stops below this now; 0 = no cap */
  uint64_t stuck;           /* stuck probes and stuck-call events that cut
                               the limit (stuck_ratio) */
  uint32_t stuck_calls;     /* calls in flight older than stuck_ratio x the
                               slowest good answer lately, at the last look
                               (stuck_ratio; timed calls only, times
                               rtt_sample_every) */
  bool startup;             /* no congestion signal yet (startup_headroom) */
  uint64_t stuck_timeouts;  /* attempts cut short by stuck_timeout that then
                               timed out (also in timed_out) */
  uint64_t tolerated_drops; /* drops within drop_tolerance: no congestion
                               signal (also in drops) */
} bw_limiter_stats_t;

/* The time limit, in ms, of the attempt just admitted on *p, given
 * timeout_ms, the attempt's own (-1 = none): with stuck_timeout, an
 * attempt admitted above proven x (1 - probe_headroom) gets the stuck age
 * (stuck_ratio x the slowest good answer lately) when that is shorter,
 * and *p is marked
 * so that its TIMED_OUT release keeps the slot as long as the attempt
 * could have run; otherwise timeout_ms unchanged (also for NULL). A
 * pipeline calls it through bw_limit_attempt_timeout for the limits
 * inside its retry; a caller driving the limiter by hand calls it after
 * bw_limiter_try_acquire. Thread-safe. */
BW_EXTERN int64_t bw_limiter_attempt_timeout(bw_limiter_t *lim, bw_permit_t *p,
                                             int64_t timeout_ms);

/* Changes min_limit and max_limit live (a configuration reload): BW_OK, or
 * BW_E_INVAL with err naming the field and the rule, and nothing changed.
 * The new range must lie inside the one the limiter was created with (each
 * algorithm keeps that floor and ceiling of its own): min_limit in
 * [created min_limit, created max_limit], max_limit in [min_limit, created
 * max_limit], and for GRADIENT2 max_limit >= gradient2_queue_size. So a
 * limiter can be narrowed live and widened back, not beyond its creation.
 * The limit in force (and the estimate) is clamped into the new range at
 * once, reported like any change (on_change, limit_changed); calls already
 * in flight above a lowered limit finish, new ones are refused until the
 * in-flight count is back under it. Thread-safe against every other call. */
BW_EXTERN int bw_limiter_set_bounds(bw_limiter_t *lim, uint32_t min_limit,
                                    uint32_t max_limit, bw_error_t *err);
/* The checks of bw_limiter_set_bounds alone, changing nothing: BW_OK when
 * it would take (min_limit, max_limit), else BW_E_INVAL with err as it
 * would answer. For a caller that must know before it changes anything (a
 * reload, all or nothing). */
BW_EXTERN int bw_limiter_check_bounds(const bw_limiter_t *lim,
                                      uint32_t min_limit, uint32_t max_limit,
                                      bw_error_t *err);
/* Fills cfg with the limiter's configuration now: as created, with the live
 * min_limit and max_limit, name pointing at the limiter's own and the
 * clocks resolved (never NULL). initial_limit stays the creation value.
 * NULL lim or cfg: nothing. */
BW_EXTERN void bw_limiter_config_of(const bw_limiter_t *lim,
                                    bw_limiter_config_t *cfg);

/* Fills the documented defaults. */
BW_EXTERN void bw_limiter_config_init(bw_limiter_config_t *cfg);
/* Checks a configuration: BW_OK, or BW_E_INVAL with err (may be NULL)
 * naming the field and the rule. Only the chosen algorithm's fields are
 * checked. */
BW_EXTERN int bw_limiter_config_validate(const bw_limiter_config_t *cfg,
                                         bw_error_t *err);
/* Creates a limiter at initial_limit. NULL and err filled on a bad
 * configuration (BW_E_INVAL, naming the field) or BW_E_NOMEM. */
BW_EXTERN bw_limiter_t *bw_limiter_new(const bw_limiter_config_t *cfg,
                                       bw_error_t *err);
/* Admits a call if fewer than `limit` are in flight: BW_OK (p filled:
 * start_ns = now, or BW_LIMITER_UNTIMED for a call not timed (see
 * rtt_sample_every), inflight_at_acquire = in flight including this call) or
 * BW_E_FULL (p untouched). BW_E_INVAL for NULL arguments. Lock-free. */
BW_EXTERN int bw_limiter_try_acquire(bw_limiter_t *lim, bw_permit_t *p);
/* Ends an admitted call and feeds its sample to the algorithm. BW_OK;
 * BW_E_INVAL (nothing counted) for NULL arguments, an unknown outcome or
 * nothing in flight; BW_E_INVAL also for a SUCCESS whose start_ns is later
 * than now (a permit from another clock): the slot is freed and the call
 * counted as ignored, but no sample is taken. */
BW_EXTERN int bw_limiter_release(bw_limiter_t *lim, const bw_permit_t *p,
                                 bw_limit_outcome_t outcome);
/* The whole-number limit in force (0 for NULL). */
BW_EXTERN uint32_t bw_limiter_limit(const bw_limiter_t *lim);
/* A snapshot (NULL lim fills zeros; NULL out is ignored). */
BW_EXTERN void bw_limiter_stats(const bw_limiter_t *lim,
                                bw_limiter_stats_t *out);
/* The name given at creation ("" for NULL). */
BW_EXTERN const char *bw_limiter_name(const bw_limiter_t *lim);
/* The limiter as a concurrency limit. Owned by lim. */
BW_EXTERN bw_limit_t *bw_limiter_as_limit(bw_limiter_t *lim);
/* Frees a limiter (NULL is fine). No call may be in flight on it. */
BW_EXTERN void bw_limiter_free(bw_limiter_t *lim);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_LIMITER_H */

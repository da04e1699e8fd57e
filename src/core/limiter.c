/* Adaptive concurrency limiter: the permit protocol (admission, release,
 * counting, stats, limit_changed events) around one of three algorithms,
 * AIMD, Gradient2 and Vegas, each in a file of its own behind
 * limiter_algo.h (the formulas are in docs/limiter.md).
 *
 * - Admission and release are lock-free: try_acquire is a CAS raising
 *   `in_flight` below `limit`, release an atomic subtraction. Counters live
 *   in per-thread stripes.
 * - A release that is a sample for the algorithm (a drop or a timed
 *   success; for AIMD, any success) takes `lock` and runs the algorithm's
 *   update, which turns the sample into a new fractional estimate; the
 *   limiter then publishes floor(estimate) to the atomic `limit`, which
 *   acquire reads. One update at a time keeps each algorithm plain
 *   sequential code over its own state, as Netflix's concurrency-limits and
 *   Envoy do (a lock once per sample).
 * A lowered limit never revokes permits: calls beyond it finish and new ones
 * wait until in_flight drops under it. */
#include "breakwater/limiter.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "summary.h"
#include "limiter_algo.h"

/* ---- the limiter ------------------------------------------------------- */

#define BW__LIM_MAX 1000000u
#define BW__LIM_MAX_WINDOW 100000u
#define BW__LIM_MAX_MS INT64_C(86400000)
#define BW__PROBE_SLOTS 1024u /* probe admission times kept, by level */
#define BW__PROBE_MASK (BW__PROBE_SLOTS - 1u)
#define BW__AGE_SLOTS 128u /* buckets of calls in flight by admission time */
#define BW__AGE_MASK (BW__AGE_SLOTS - 1u)
#define BW__AGE_PER_THRESHOLD 16 /* a bucket is at most 1/16 of age_ns */
/* stuck_timeout cuts no attempt before this many good answers have set
 * the stuck age (bw_limiter_attempt_timeout). */
#define BW__CUT_MIN_GOOD 16u
/* A batch of stuck calls is a congestion event when it is at least
 * 1/BW__AGE_BATCH of the calls in flight and 1/BW__AGE_SHARE of the calls
 * admitted in its buckets (bw__lim_age_cut). */
#define BW__AGE_BATCH 16u
#define BW__AGE_SHARE 2u

static const bw__lim_algo_t *const bw__lim_algos[3] = {
    &bw__lim_aimd, &bw__lim_gradient2, &bw__lim_vegas};

typedef struct bw__lim_stripe_s {
  _Atomic uint64_t admitted;
  _Atomic uint64_t rejected;
  _Atomic uint64_t successes;
  _Atomic uint64_t drops;
  _Atomic uint64_t ignored;
  /* Calls acquired on this stripe, modulo sample_every: the call that
   * finds 0 is timed. Threads sharing a stripe may lose a tick (a plain
   * load and store), which only moves the sampling a little. */
  _Atomic uint32_t tick;
} BW__PAIR_ALIGNED bw__lim_stripe_t;

/* One bucket of the age ring: each word packs (epoch << 32 | a count of
 * that epoch's timed calls); a word still tagged with an older epoch counts
 * nothing for this one. */
typedef struct bw__age_bucket_s {
  _Atomic uint64_t live;     /* still in flight (held slots are not) */
  _Atomic uint64_t admitted; /* admitted, all of them */
  _Atomic uint64_t cut;      /* cut short at the stuck age (stuck_timeout)
                                and timed out: stuck, though released */
} bw__age_bucket_t;

struct bw_limiter_s {
  bw_limit_t iface; /* must stay first */
  bw_limiter_algorithm_t alg;
  const bw__lim_algo_t *algo;
  uint32_t min; /* min_limit and max_limit: under `lock` */
  uint32_t max;
  bw_limiter_config_t made; /* as created (bw_limiter_config_of) */
  int64_t slow_ns; /* AIMD: a success slower than this is a drop; 0 = off */
  const bw_clock_t *clock;
  uint32_t sample_every; /* time one call in this many, per stripe */
  bw_limiter_change_cb on_change;
  void *userdata;
  int64_t change_interval_ns; /* 0 = report every change */
  bw_sink_t *sink; /* limit_changed and limiter_rejected events; NULL =
                      none */
  const bw_clock_t *wall;
  char *name;
  /* Refusals, summarised as limiter_rejected (only with a sink). */
  bw__summary_t summary;

  /* What admission reads and writes. `limit` is written under `lock`. */
  BW__PAIR_ALIGNED _Atomic uint32_t in_flight;
  _Atomic uint32_t limit;
  /* Bumped (under `lock`) by every decrease on a drop; permits carry the
   * value at acquire, and a drop from an older generation decreases nothing
   * (one decrease per congestion event, as TCP backs off once per
   * window). */
  _Atomic uint32_t generation;

  /* Overload guards (docs/limiter.md, "Guards against overshoot"). */
  double hold_ratio;          /* a TIMED_OUT slot is held ratio x its RTT */
  double headroom;            /* growth stops headroom above the proven level */
  int64_t memory_ns;          /* a drop near the limit caps it for this long */
  _Atomic uint32_t proven;    /* highest in-flight count a success proved */
  _Atomic uint32_t disproven; /* lowest count a drop disproved; MAX = none */
  _Atomic int64_t disproven_until_ns;
  /* Fast start and stuck probes (docs/limiter.md, "Startup and stuck
   * probes"). A level above the open one (proven; at least initial_limit
   * during startup) is admitted once until a success proves it: probe_hi
   * is the highest such level admitted, probe_at[level & BW__PROBE_MASK]
   * when. The lowest unproven level still unproven stuck_ns after its
   * admission is stuck: the limit is cut to the open level. */
  double startup_headroom;   /* growth headroom until the first congestion */
  uint32_t startup_step;     /* startup_max_step; 0 = no bound */
  uint32_t initial;          /* initial_limit */
  _Atomic bool startup;      /* no congestion signal yet */
  _Atomic uint32_t probe_hi; /* the highest unproven level admitted */
  _Atomic int64_t *probe_at; /* NULL when stuck detection is off */
  double stuck_ratio;        /* stuck after this x the smoothed RTT */
  _Atomic int64_t stuck_ns;  /* that, in ns; 0 before any RTT sample */
  double srtt;               /* smoothed RTT (ns), under lock; 0 = none */
  /* The good RTTs (the age ring's reference), under lock. A success
   * slower than age_ns is the late answer of a stuck call, not a sample --
   * unless no sample has been good for 16 x good_srtt (the dependency may
   * have slowed for good). good_max is the slowest good answer lately: it
   * jumps to a slower good sample and decays towards good_srtt by 1/64 of
   * the gap per good sample. */
  double good_srtt, good_max;
  int64_t good_at_ns;      /* the latest good sample */
  _Atomic int64_t age_ns;  /* stuck_ratio x good_max: a call older is stuck */
  _Atomic uint32_t good_n; /* good samples so far, up to BW__CUT_MIN_GOOD */
  _Atomic uint64_t stuck_events;
  bool stuck_timeout;              /* stuck_timeout */
  _Atomic uint64_t stuck_timeouts; /* cut attempts that timed out */
  /* Drop tolerance (bw__lim_tolerated), the round under `lock`: the
   * releases counted at its first drop, and its drops. */
  double drop_tolerance;
  uint64_t round_start;
  uint32_t round_drops;
  _Atomic uint64_t tolerated_drops;
  /* Stuck calls at any level (docs/limiter.md, "Stuck calls at any
   * level"): the calls in flight counted by admission time, so that how
   * many are older than age_ns is known without a list. A timed call admitted
   * at t falls in epoch (t - age_base_ns) >> age_shift; age[epoch &
   * BW__AGE_MASK] counts that epoch's calls (see bw__age_bucket_t). A
   * bucket reused for a later epoch moves its calls still in flight to
   * age_old (they are then older than the ring's span). The bucket width, a
   * power of two at most 1/16 of age_ns, is set at the first RTT sample
   * (age_shift 0 until then): calls admitted before are not counted.
   * age_scanned is the boundary epoch last scanned (the ring is scanned once
   * per bucket width at most), cut_ns the clock at the last decrease: a stuck
   * call admitted in a bucket that began after it starts a new congestion
   * event, age_floor how low that event may cut. Untimed calls
   * (rtt_sample_every > 1) are not counted: the counts are scaled by
   * sample_every. */
  bw__age_bucket_t *age;
  _Atomic int64_t age_old;
  int64_t age_base_ns; /* written once, before age_shift is published */
  _Atomic uint32_t age_shift;
  _Atomic uint32_t age_scanned;
  _Atomic int64_t cut_ns;
  _Atomic uint32_t stuck_calls; /* older than age_ns at the last scan */
  _Atomic uint32_t age_floor;   /* an open stuck event's floor; 0 = none */
  /* Slots held for timed-out calls: a min-heap of expiry times. */
  BW__PAIR_ALIGNED pthread_mutex_t hlock;
  int64_t *held;
  uint32_t nheld, held_cap;
  _Atomic int64_t held_next_ns; /* the earliest expiry; INT64_MAX = none */
  _Atomic uint64_t timed_out;
  _Atomic uint64_t held_overflow;

  /* The algorithm: its state and the fractional estimate whose floor is
   * `limit`, both only under `lock`. */
  BW__PAIR_ALIGNED pthread_mutex_t lock;
  void *state;
  double est;

  _Atomic int64_t timeout_rtt_ns; /* the latest timed TIMED_OUT call's RTT */
  _Atomic int64_t last_rtt_ns;
  _Atomic uint64_t changes;
  _Atomic int64_t report_after_ns; /* next report allowed from */
  _Atomic uint32_t reported_limit; /* the limit the last report gave */

  bw__lim_stripe_t stripes[BW__STRIPES];
};

const char *bw_limiter_algorithm_name(bw_limiter_algorithm_t a) {
  return (unsigned)a <= (unsigned)BW_LIMITER_VEGAS ? bw__lim_algos[a]->name
                                                   : "unknown";
}

void bw_limiter_config_init(bw_limiter_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "limiter";
  cfg->algorithm = BW_LIMITER_AIMD;
  cfg->initial_limit = 20;
  cfg->min_limit = 1;
  cfg->max_limit = 200;
  cfg->backoff_ratio = 0.9;
  cfg->aimd_timeout_ms = 5000;
  cfg->timeout_hold_ratio = 0.5;
  cfg->probe_headroom = 0.125;
  cfg->overload_memory_ms = 60000;
  cfg->startup_headroom = 0.0;
  cfg->stuck_ratio = 0.0;
  cfg->rtt_sample_every = 1;
  cfg->gradient2_tolerance = 1.5;
  cfg->gradient2_smoothing = 0.2;
  cfg->gradient2_long_window = 600;
  cfg->gradient2_warmup = 10;
  cfg->gradient2_queue_size = 4;
  cfg->vegas_alpha = 3.0;
  cfg->vegas_beta = 6.0;
  cfg->vegas_smoothing = 1.0;
  cfg->vegas_probe_multiplier = 30;
  cfg->change_interval_ms = 0;
}

static bool bw__unit(double x) { /* (0, 1] */
  return x > 0.0 && x <= 1.0;
}

int bw_limiter_config_validate(const bw_limiter_config_t *c, bw_error_t *err) {
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if ((unsigned)c->algorithm > (unsigned)BW_LIMITER_VEGAS)
    return bw_error_set(err, BW_E_INVAL, "algorithm",
                        "algorithm must be aimd, gradient2 or vegas (got %d)",
                        (int)c->algorithm);
  if (c->min_limit < 1)
    return bw_error_set(err, BW_E_INVAL, "min_limit",
                        "min_limit must be >= 1 (got %u)", c->min_limit);
  if (c->max_limit < c->min_limit || c->max_limit > BW__LIM_MAX)
    return bw_error_set(err, BW_E_INVAL, "max_limit",
                        "max_limit must be in min_limit %u..%u (got %u)",
                        c->min_limit, BW__LIM_MAX, c->max_limit);
  if (c->initial_limit < c->min_limit || c->initial_limit > c->max_limit)
    return bw_error_set(err, BW_E_INVAL, "initial_limit",
                        "initial_limit must be in [min_limit %u, max_limit "
                        "%u] (got %u)",
                        c->min_limit, c->max_limit, c->initial_limit);
  if (!(c->backoff_ratio >= 0.5 && c->backoff_ratio < 1.0))
    return bw_error_set(err, BW_E_INVAL, "backoff_ratio",
                        "backoff_ratio must be in [0.5, 1) (got %g)",
                        c->backoff_ratio);
  if (c->algorithm == BW_LIMITER_AIMD &&
      (c->aimd_timeout_ms < 0 || c->aimd_timeout_ms > BW__LIM_MAX_MS))
    return bw_error_set(err, BW_E_INVAL, "aimd_timeout_ms",
                        "aimd_timeout_ms must be in 0..%lld, 0 for off (got "
                        "%lld)",
                        (long long)BW__LIM_MAX_MS,
                        (long long)c->aimd_timeout_ms);
  if (c->algorithm == BW_LIMITER_GRADIENT2) {
    if (!(c->gradient2_tolerance >= 1.0) || !isfinite(c->gradient2_tolerance))
      return bw_error_set(err, BW_E_INVAL, "gradient2_tolerance",
                          "gradient2_tolerance must be a finite number >= 1 "
                          "(got %g)",
                          c->gradient2_tolerance);
    if (!bw__unit(c->gradient2_smoothing))
      return bw_error_set(err, BW_E_INVAL, "gradient2_smoothing",
                          "gradient2_smoothing must be in (0, 1] (got %g)",
                          c->gradient2_smoothing);
    if (c->gradient2_long_window < 1 ||
        c->gradient2_long_window > BW__LIM_MAX_WINDOW)
      return bw_error_set(err, BW_E_INVAL, "gradient2_long_window",
                          "gradient2_long_window must be in 1..%u (got %u)",
                          BW__LIM_MAX_WINDOW, c->gradient2_long_window);
    if (c->gradient2_warmup > c->gradient2_long_window)
      return bw_error_set(err, BW_E_INVAL, "gradient2_warmup",
                          "gradient2_warmup must be <= gradient2_long_window "
                          "%u (got %u)",
                          c->gradient2_long_window, c->gradient2_warmup);
    if (c->gradient2_queue_size > c->max_limit)
      return bw_error_set(err, BW_E_INVAL, "gradient2_queue_size",
                          "gradient2_queue_size must be <= max_limit %u (got "
                          "%u)",
                          c->max_limit, c->gradient2_queue_size);
  }
  if (c->algorithm == BW_LIMITER_VEGAS) {
    if (!(c->vegas_alpha > 0.0) || !isfinite(c->vegas_alpha))
      return bw_error_set(err, BW_E_INVAL, "vegas_alpha",
                          "vegas_alpha must be a finite number > 0 (got %g)",
                          c->vegas_alpha);
    if (!(c->vegas_beta > c->vegas_alpha) || !isfinite(c->vegas_beta))
      return bw_error_set(err, BW_E_INVAL, "vegas_beta",
                          "vegas_beta must be finite and > vegas_alpha %g "
                          "(got %g)",
                          c->vegas_alpha, c->vegas_beta);
    if (!bw__unit(c->vegas_smoothing))
      return bw_error_set(err, BW_E_INVAL, "vegas_smoothing",
                          "vegas_smoothing must be in (0, 1] (got %g)",
                          c->vegas_smoothing);
  }
  if (c->algorithm == BW_LIMITER_VEGAS && c->vegas_probe_multiplier > 1000)
    return bw_error_set(err, BW_E_INVAL, "vegas_probe_multiplier",
                        "vegas_probe_multiplier must be in 0..1000, 0 for "
                        "never (got %u)",
                        c->vegas_probe_multiplier);
  if (!(c->timeout_hold_ratio >= 0.0 && c->timeout_hold_ratio <= 10.0))
    return bw_error_set(err, BW_E_INVAL, "timeout_hold_ratio",
                        "timeout_hold_ratio must be in [0, 10], 0 for off "
                        "(got %g)",
                        c->timeout_hold_ratio);
  if (!(c->probe_headroom >= 0.0 && c->probe_headroom <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "probe_headroom",
                        "probe_headroom must be in [0, 1], 0 for off (got "
                        "%g)",
                        c->probe_headroom);
  if (c->overload_memory_ms < 0 || c->overload_memory_ms > BW__LIM_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "overload_memory_ms",
                        "overload_memory_ms must be in 0..%lld, 0 for off "
                        "(got %lld)",
                        (long long)BW__LIM_MAX_MS,
                        (long long)c->overload_memory_ms);
  if (!(c->startup_headroom >= 0.0 && c->startup_headroom <= 4.0))
    return bw_error_set(err, BW_E_INVAL, "startup_headroom",
                        "startup_headroom must be in [0, 4], 0 for off (got "
                        "%g)",
                        c->startup_headroom);
  if (!(c->stuck_ratio == 0.0 ||
        (c->stuck_ratio >= 1.0 && c->stuck_ratio <= 100.0)))
    return bw_error_set(err, BW_E_INVAL, "stuck_ratio",
                        "stuck_ratio must be 0 (off) or in [1, 100] (got %g)",
                        c->stuck_ratio);
  if (c->startup_max_step > BW__LIM_MAX)
    return bw_error_set(err, BW_E_INVAL, "startup_max_step",
                        "startup_max_step must be in 0..%u, 0 for no bound "
                        "(got %u)",
                        (unsigned)BW__LIM_MAX, c->startup_max_step);
  if (c->stuck_timeout && c->stuck_ratio == 0.0)
    return bw_error_set(err, BW_E_INVAL, "stuck_timeout",
                        "stuck_timeout needs stuck_ratio (got 0)");
  if (!(c->drop_tolerance >= 0.0 && c->drop_tolerance <= 0.5))
    return bw_error_set(err, BW_E_INVAL, "drop_tolerance",
                        "drop_tolerance must be in [0, 0.5], 0 for off (got "
                        "%g)",
                        c->drop_tolerance);
  if (c->rtt_sample_every < 1 || c->rtt_sample_every > 1024)
    return bw_error_set(err, BW_E_INVAL, "rtt_sample_every",
                        "rtt_sample_every must be in 1..1024, 1 for every "
                        "call (got %u)",
                        c->rtt_sample_every);
  if (c->change_interval_ms < 0 || c->change_interval_ms > BW__LIM_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "change_interval_ms",
                        "change_interval_ms must be in 0..%lld, 0 for every "
                        "change (got %lld)",
                        (long long)BW__LIM_MAX_MS,
                        (long long)c->change_interval_ms);
  if (c->clock != NULL && c->clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "clock",
                        "clock must have a now_ns function");
  if (c->wall_clock != NULL && c->wall_clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "wall_clock",
                        "wall_clock must have a now_ns function");
  bw_error_clear(err);
  return BW_OK;
}

/* ---- giving up on stuck attempts (stuck_timeout) --------------------------
 * A call admitted above the proven level is the first to meet a wall the
 * limit has just crossed; under a dependency that answers overload late
 * (the Polly lab's partner: 0.8-2.5 s) its caller waits for that answer
 * even though the limiter knows it is stuck after stuck_ratio x the
 * slowest good answer. The attempt is cut to that age, so the caller
 * gives up and its retry is admitted under the lowered limit; the slot
 * stays held (bw_limiter_release) since the dependency still has the
 * call. A level a success proved (but for the top band, below), an
 * untimed permit, an attempt with no timeout or one already shorter, and
 * a limiter with fewer than BW__CUT_MIN_GOOD good answers yet are left
 * alone. */
int64_t bw_limiter_attempt_timeout(bw_limiter_t *lim, bw_permit_t *p,
                                   int64_t timeout_ms) {
  int64_t age, cut;
  uint32_t pv;
  if (lim == NULL || p == NULL || !lim->stuck_timeout || timeout_ms <= 0 ||
      p->start_ns == BW_LIMITER_UNTIMED)
    return timeout_ms;
  /* Below the top band of the proven range: the band is probe_headroom x
   * proven (the limiter's own margin of doubt above that level). On a
   * network a success admitted at in-flight n may have met fewer than n
   * at the dependency (answers in transit, not yet read), so the proven
   * level can stand a few calls above the capacity, and calls admitted
   * just under it meet the wall too. During startup no wall has been met
   * and the proven level is only the highest demand so far: there the
   * band would cut a steady load's latency tail (a ramp with 5 % of its
   * answers at 500 ms: 353 cut attempts instead of 7, and 9 requests lost
   * of 8,000), so only calls above the proven level are cut. */
  pv = BW__LOAD(lim->proven);
  if (!BW__LOAD(lim->startup)) pv -= (uint32_t)((double)pv * lim->headroom);
  if (p->inflight_at_acquire <= pv) return timeout_ms;
  /* The slowest of a few good answers is no measure of the dependency's
   * spread: an answer a little slower than the first ones would be cut
   * while it was on its way, and its slot held for seconds after the
   * dependency let it go (docs/limiter.md, "A stuck age needs sixteen
   * good answers"). */
  if (BW__LOAD(lim->good_n) < BW__CUT_MIN_GOOD) return timeout_ms;
  age = BW__LOAD(lim->age_ns);
  if (age <= 0) return timeout_ms;
  cut = bw_ns_to_ms_ceil(age);
  if (cut >= timeout_ms) return timeout_ms;
  p->flags |= BW_PERMIT_FLAG_STUCK_TIMEOUT;
  p->timeout_ms =
      timeout_ms > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)timeout_ms;
  return cut;
}

/* ---- the interface -------------------------------------------------------
 */

/* The interface is the object's first member, so a pointer to it is a
 * pointer to the limiter (the cast goes through void: the object's stricter
 * alignment is guaranteed by its allocation). */

static int bw__lim_if_try_acquire(bw_limit_t *l, bw_permit_t *p) {
  return bw_limiter_try_acquire((bw_limiter_t *)(void *)l, p);
}
static int bw__lim_if_release(bw_limit_t *l, const bw_permit_t *p,
                              bw_limit_outcome_t o) {
  return bw_limiter_release((bw_limiter_t *)(void *)l, p, o);
}
static uint32_t bw__lim_if_limit(const bw_limit_t *l) {
  return bw_limiter_limit((const bw_limiter_t *)(const void *)l);
}
static uint32_t bw__lim_if_in_flight(const bw_limit_t *l) {
  return BW__LOAD(((const bw_limiter_t *)(const void *)l)->in_flight);
}
static const char *bw__lim_if_name(const bw_limit_t *l) {
  return ((const bw_limiter_t *)(const void *)l)->name;
}
static void bw__lim_if_free(bw_limit_t *l) {
  bw_limiter_free((bw_limiter_t *)(void *)l);
}
static int64_t bw__lim_if_attempt_timeout(bw_limit_t *l, bw_permit_t *p,
                                          int64_t timeout_ms) {
  return bw_limiter_attempt_timeout((bw_limiter_t *)(void *)l, p, timeout_ms);
}

#define BW__LIM_VTABLE(kind)                                            \
  {                                                                     \
    kind, bw__lim_if_try_acquire, bw__lim_if_release, bw__lim_if_limit, \
        bw__lim_if_in_flight, bw__lim_if_name, bw__lim_if_free,         \
        BW_LIMIT_VT_TIMED_OUT | BW_LIMIT_VT_ATTEMPT_TIMEOUT,            \
        bw__lim_if_attempt_timeout                                      \
  }
static const bw_limit_vtable_t bw__lim_vtables[3] = {
    BW__LIM_VTABLE("aimd"), BW__LIM_VTABLE("gradient2"),
    BW__LIM_VTABLE("vegas")};

bw_limiter_t *bw_limiter_new(const bw_limiter_config_t *cfg, bw_error_t *err) {
  bw_limiter_t *lim;
  if (bw_limiter_config_validate(cfg, err) != BW_OK) return NULL;
  lim = bw_calloc_aligned(sizeof(*lim));
  if (lim == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating limiter");
    return NULL;
  }
  lim->algo = bw__lim_algos[cfg->algorithm];
  lim->name = bw_strdup(cfg->name);
  if (lim->name == NULL) goto nomem;
  lim->held_cap = cfg->max_limit < 65536u ? cfg->max_limit : 65536u;
  lim->held = cfg->timeout_hold_ratio > 0.0
                  ? bw_calloc(lim->held_cap, sizeof(*lim->held))
                  : NULL;
  if (cfg->timeout_hold_ratio > 0.0 && lim->held == NULL) goto nomem;
  if (cfg->stuck_ratio > 0.0) {
    lim->probe_at = bw_calloc(BW__PROBE_SLOTS, sizeof(*lim->probe_at));
    if (lim->probe_at == NULL) goto nomem;
    lim->age = bw_calloc(BW__AGE_SLOTS, sizeof(*lim->age));
    if (lim->age == NULL) goto nomem;
  }
  lim->state = lim->algo->init(cfg);
  if (lim->state == NULL) goto nomem;
  if (pthread_mutex_init(&lim->lock, NULL) != 0) goto nolock;
  if (pthread_mutex_init(&lim->hlock, NULL) != 0) {
    pthread_mutex_destroy(&lim->lock);
    goto nolock;
  }
  lim->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  /* Summaries are timed from creation; without a sink, no clock reading. */
  if (bw__summary_init(&lim->summary,
                       cfg->sink != NULL ? bw__clock_now(lim->clock) : 0) !=
      0) {
    pthread_mutex_destroy(&lim->hlock);
    pthread_mutex_destroy(&lim->lock);
    goto nolock;
  }
  lim->iface.vt = &bw__lim_vtables[cfg->algorithm];
  lim->alg = cfg->algorithm;
  lim->min = cfg->min_limit;
  lim->max = cfg->max_limit;
  lim->made = *cfg;
  lim->slow_ns = cfg->algorithm == BW_LIMITER_AIMD
                     ? cfg->aimd_timeout_ms * BW_NS_PER_MS
                     : 0;
  lim->on_change = cfg->on_change;
  lim->change_interval_ns = cfg->change_interval_ms * BW_NS_PER_MS;
  lim->sink = cfg->sink;
  lim->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  atomic_init(&lim->report_after_ns, INT64_MIN);
  atomic_init(&lim->reported_limit, cfg->initial_limit);
  lim->userdata = cfg->userdata;
  lim->est = (double)cfg->initial_limit;
  atomic_init(&lim->limit, cfg->initial_limit);
  atomic_init(&lim->in_flight, 0);
  atomic_init(&lim->generation, 0);
  lim->hold_ratio = cfg->timeout_hold_ratio;
  lim->headroom = cfg->probe_headroom;
  lim->memory_ns = cfg->overload_memory_ms * BW_NS_PER_MS;
  lim->sample_every = cfg->rtt_sample_every;
  atomic_init(&lim->proven, 0);
  atomic_init(&lim->disproven, UINT32_MAX);
  atomic_init(&lim->disproven_until_ns, INT64_MIN);
  atomic_init(&lim->held_next_ns, INT64_MAX);
  atomic_init(&lim->timed_out, 0);
  atomic_init(&lim->held_overflow, 0);
  lim->startup_headroom = cfg->startup_headroom;
  lim->startup_step = cfg->startup_max_step;
  lim->initial = cfg->initial_limit;
  atomic_init(&lim->startup, cfg->startup_headroom > 0.0);
  atomic_init(&lim->probe_hi, 0);
  lim->stuck_ratio = cfg->stuck_ratio;
  lim->stuck_timeout = cfg->stuck_timeout;
  atomic_init(&lim->stuck_timeouts, 0);
  lim->drop_tolerance = cfg->drop_tolerance;
  lim->round_start = 0;
  lim->round_drops = 0;
  atomic_init(&lim->tolerated_drops, 0);
  atomic_init(&lim->stuck_ns, 0);
  atomic_init(&lim->stuck_events, 0);
  atomic_init(&lim->age_old, 0);
  atomic_init(&lim->age_shift, 0);
  atomic_init(&lim->age_scanned, 0);
  atomic_init(&lim->cut_ns, INT64_MIN);
  atomic_init(&lim->stuck_calls, 0);
  atomic_init(&lim->age_ns, 0);
  atomic_init(&lim->good_n, 0);
  atomic_init(&lim->age_floor, 0);
  bw_error_clear(err);
  return lim;
nolock:
  bw_error_set(err, BW_E_NOMEM, "", "cannot create the limiter's lock");
  goto fail;
nomem:
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating limiter");
fail:
  if (lim->state != NULL) lim->algo->free(lim->state);
  bw_free(lim->held);
  bw_free((void *)lim->probe_at);
  bw_free((void *)lim->age);
  bw_free(lim->name);
  bw_free_aligned(lim);
  return NULL;
}

/* Emits the refusals since the last summary as one limiter_rejected event
 * (the summary's lock held). */
static void bw__lim_summarise_locked(bw_limiter_t *lim, int64_t now) {
  uint64_t total = 0, n;
  bw_field_t f[3];
  char reason[96];
  uint32_t limit = BW__LOAD(lim->limit);
  for (unsigned i = 0; i < BW__STRIPES; i++)
    total += BW__LOAD(lim->stripes[i].rejected);
  n = bw__summary_take(&lim->summary, 0, total);
  if (n == 0) return;
  f[0] = bw_field_uint("count", n);
  f[1] = bw_field_uint("limit", limit);
  f[2] = bw_field_str("algorithm", lim->algo->name);
  snprintf(reason, sizeof(reason), "%llu calls rejected at the limit (%u)",
           (unsigned long long)n, limit);
  bw_event_emit(lim->sink, lim->wall, now, BW_EV_LIMITER_REJECTED, lim->name,
                reason, f, 3, NULL);
}

/* After a refusal was counted, with a sink: a summary when one is due. Off
 * the admission path (a refusal with a sink only). */
static BW__NOINLINE void bw__lim_refused(bw_limiter_t *lim) {
  int64_t now = bw__clock_now(lim->clock);
  if (!bw__summary_begin(&lim->summary, now, false)) return;
  bw__lim_summarise_locked(lim, now);
  bw__summary_end(&lim->summary, now);
}

void bw_limiter_free(bw_limiter_t *lim) {
  if (lim == NULL) return;
  if (lim->sink != NULL) { /* the last summary: the clock and sink outlive us */
    int64_t now = bw__clock_now(lim->clock);
    bw__summary_begin(&lim->summary, now, true);
    bw__lim_summarise_locked(lim, now);
    bw__summary_end(&lim->summary, now);
  }
  bw__summary_destroy(&lim->summary);
  pthread_mutex_destroy(&lim->lock);
  pthread_mutex_destroy(&lim->hlock);
  lim->algo->free(lim->state);
  bw_free(lim->held);
  bw_free((void *)lim->probe_at);
  bw_free((void *)lim->age);
  bw_free(lim->name);
  bw_free_aligned(lim);
}

const char *bw_limiter_name(const bw_limiter_t *lim) {
  return lim == NULL ? "" : lim->name;
}

bw_limit_t *bw_limiter_as_limit(bw_limiter_t *lim) {
  return lim == NULL ? NULL : &lim->iface;
}

uint32_t bw_limiter_limit(const bw_limiter_t *lim) {
  return lim == NULL ? 0 : BW__LOAD(lim->limit);
}

/* ---- held slots ------------------------------------------------------------
 * A caller that timed out released its permit, but the dependency may still
 * be working on the call (the Polly lab's partner keeps an abandoned request in
 * flight for its whole latency). Freeing the slot at once lets the limiter
 * admit more than the dependency holds: the "zombie" feedback loop of
 * docs/internals/limiter-settling.md. So a TIMED_OUT slot stays counted in
 * in_flight for hold_ratio x the call's RTT; a min-heap under hlock keeps
 * the expiries, and acquire frees the expired ones (one atomic load when
 * none is held). */

static void bw__heap_push(int64_t *h, uint32_t *n, int64_t v) {
  uint32_t i = (*n)++;
  while (i > 0 && h[(i - 1) / 2] > v) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}

static void bw__heap_pop(int64_t *h, uint32_t *n) {
  uint32_t i = 0, m = --(*n);
  int64_t v = h[m];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= m) break;
    if (c + 1 < m && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = v;
}

/* Frees the held slots whose time has come. */
static void bw__held_expire(bw_limiter_t *lim, int64_t now) {
  uint32_t freed = 0;
  pthread_mutex_lock(&lim->hlock);
  while (lim->nheld > 0 && lim->held[0] <= now) {
    bw__heap_pop(lim->held, &lim->nheld);
    freed++;
  }
  atomic_store_explicit(&lim->held_next_ns,
                        lim->nheld > 0 ? lim->held[0] : INT64_MAX,
                        memory_order_release);
  pthread_mutex_unlock(&lim->hlock);
  if (freed > 0)
    atomic_fetch_sub_explicit(&lim->in_flight, freed, memory_order_acq_rel);
}

/* Keeps a timed-out call's slot until `until`. False when the heap is full
 * (the slot is then freed as usual, and counted in held_overflow). */
static bool bw__held_keep(bw_limiter_t *lim, int64_t until) {
  bool kept = false;
  pthread_mutex_lock(&lim->hlock);
  if (lim->nheld < lim->held_cap) {
    bw__heap_push(lim->held, &lim->nheld, until);
    atomic_store_explicit(&lim->held_next_ns, lim->held[0],
                          memory_order_release);
    kept = true;
  }
  pthread_mutex_unlock(&lim->hlock);
  return kept;
}

/* Whether the call acquired now on stripe s is timed (one in sample_every
 * per stripe, the first one included). */
static bool bw__lim_timed(bw_limiter_t *lim, unsigned s) {
  _Atomic uint32_t *t = &lim->stripes[s].tick;
  uint32_t k;
  if (lim->sample_every == 1) return true;
  k = atomic_load_explicit(t, memory_order_relaxed);
  atomic_store_explicit(t, k + 1 >= lim->sample_every ? 0 : k + 1,
                        memory_order_relaxed);
  return k == 0;
}

/* ---- probes ----------------------------------------------------------------
 * A call admitted at in-flight n (its level) proves n once it succeeds. A
 * level above the open one (the proven level; during startup at least
 * initial_limit) is a probe: it is admitted once, then refused until a
 * success proves it. Without that, a probe over the dependency's capacity
 * would be admitted again each time a slot frees, and every call sent
 * while the first one is stuck there would be over capacity too (the
 * Polly lab's partner compares its total in flight). A probe still
 * unproven stuck_ratio x the smoothed RTT after its admission is stuck:
 * bw__lim_stuck cuts the limit to the open level, at once, instead of
 * waiting 0.8-2.5 s for the slow answer. */

static void bw__lim_stuck(bw_limiter_t *lim, int64_t now);

static uint32_t bw__probe_open(const bw_limiter_t *lim) {
  uint32_t pv = BW__LOAD(lim->proven);
  if (pv < lim->initial && BW__LOAD(lim->startup)) pv = lim->initial;
  return pv;
}

/* Records a probe admitted at level n at `now` (and levels skipped since
 * the last probe: they are unproven from now on too). */
static void bw__probe_admitted(bw_limiter_t *lim, uint32_t n, int64_t now) {
  uint32_t hi = BW__LOAD(lim->probe_hi), from = bw__probe_open(lim);
  if (hi > from) from = hi;
  if (n - from > BW__PROBE_SLOTS) from = n - BW__PROBE_SLOTS;
  for (uint32_t l = from + 1; l <= n; l++)
    atomic_store_explicit(&lim->probe_at[l & BW__PROBE_MASK], now,
                          memory_order_relaxed);
  bw__raise_u32(&lim->probe_hi, n);
}

/* A probe released IGNORED (cancelled, never sent) brought no evidence
 * about its level: the level and those above it are unprobed again, so no
 * stuck timer runs on a call that is gone, and the next call at the level
 * probes it afresh. Without this, one cancelled probe later read as stuck:
 * the limit was cut to the proven level and the wall remembered. A call
 * still out at a higher level loses its probe timer; the stuck-call rule
 * (the age ring) still counts it. */
static void bw__probe_withdrawn(bw_limiter_t *lim, uint32_t level) {
  if (level > bw__probe_open(lim) && level <= BW__LOAD(lim->probe_hi))
    bw__lower_u32(&lim->probe_hi, level - 1u);
}

/* Whether the lowest unproven probe has been out longer than stuck_ns. */
static bool bw__probe_stuck(const bw_limiter_t *lim, int64_t now) {
  uint32_t open = bw__probe_open(lim);
  int64_t th, at;
  if (BW__LOAD(lim->probe_hi) <= open) return false;
  th = BW__LOAD(lim->stuck_ns);
  if (th <= 0) return false;
  at = atomic_load_explicit(&lim->probe_at[(open + 1u) & BW__PROBE_MASK],
                            memory_order_relaxed);
  return now - at > th;
}

/* Whether unproven level n, probed already, is closed: its first probe
 * went out more than 1/32 of the smoothed RTT ago. Until then the level
 * may be taken again (a call that leaves at once frees it, and the next
 * caller in line takes the same level: with slot handoff that is the same
 * instant); after it, only a success at that level or above reopens it.
 * Each level has its own window: one probed a moment ago stays open while
 * a lower one, probed long ago, is closed. */
static bool bw__probe_closed(bw_limiter_t *lim, int64_t now, uint32_t n) {
  int64_t th = BW__LOAD(lim->stuck_ns), at;
  if (th <= 0) return false;
  if (now == BW_LIMITER_UNTIMED) now = bw__clock_now(lim->clock);
  at = atomic_load_explicit(&lim->probe_at[n & BW__PROBE_MASK],
                            memory_order_relaxed);
  return (double)(now - at) > (double)th / lim->stuck_ratio / 32.0;
}

/* ---- stuck calls at any level ----------------------------------------------
 * A probe covers only the levels above the proven one. When the
 * dependency's capacity drops under the proven level, every new call is
 * over it and none is a probe: the limit then fell once per slow answer,
 * 0.8-2.5 s apart on the Polly lab's partner. The age ring (see the struct)
 * knows how many calls in flight are older than age_ns; a batch of them
 * admitted after the last decrease starts a new congestion event
 * (bw__lim_age_cut), stuck_ratio x the slowest good answer after its
 * admission instead of when its slow answer comes back. Admission and release
 * each move one bucket with a CAS; the scan reads the 128 buckets at most once
 * per bucket width. */

static void bw__lim_age_cut(bw_limiter_t *lim, int64_t now, int64_t cut_seen,
                            uint64_t stuck, uint64_t fresh,
                            uint64_t fresh_admitted);

/* The epoch of a call admitted at t (t >= age_base_ns). */
static uint32_t bw__age_epoch(const bw_limiter_t *lim, uint32_t sh, int64_t t) {
  return (uint32_t)((uint64_t)(t - lim->age_base_ns) >> sh);
}

/* Adds one to an epoch-tagged count for epoch e: a word of an older epoch
 * starts over at 1; one of a later epoch is left alone (the call is older
 * than the ring's span). */
static void bw__age_count(_Atomic uint64_t *w, uint32_t e) {
  uint64_t cur = atomic_load_explicit(w, memory_order_relaxed), next;
  for (;;) {
    uint32_t tag = (uint32_t)(cur >> 32);
    if (tag == e)
      next = cur + 1u;
    else if ((int32_t)(e - tag) > 0)
      next = (uint64_t)e << 32 | 1u;
    else
      return;
    if (atomic_compare_exchange_weak_explicit(
            w, &cur, next, memory_order_relaxed, memory_order_relaxed))
      return;
  }
}

/* The count of epoch e in the word, 0 if it holds another epoch. */
static uint32_t bw__age_of(_Atomic uint64_t *w, uint32_t e) {
  uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
  return (uint32_t)(v >> 32) == e ? (uint32_t)v : 0u;
}

/* Counts a timed call admitted at t; false when it is not counted (the
 * width is not set yet, or t is before the ring started). */
static bool bw__age_admit(bw_limiter_t *lim, int64_t t) {
  uint32_t sh = atomic_load_explicit(&lim->age_shift, memory_order_acquire);
  uint32_t e, tag, n;
  _Atomic uint64_t *b;
  uint64_t w, nw;
  if (sh == 0 || t < lim->age_base_ns) return false;
  e = bw__age_epoch(lim, sh, t);
  bw__age_count(&lim->age[e & BW__AGE_MASK].admitted, e);
  b = &lim->age[e & BW__AGE_MASK].live;
  w = atomic_load_explicit(b, memory_order_relaxed);
  for (;;) {
    tag = (uint32_t)(w >> 32);
    n = (uint32_t)w;
    if (tag == e) {
      nw = w + 1u;
    } else if ((int32_t)(e - tag) > 0) {
      nw = (uint64_t)e << 32 | 1u; /* reused: the older epoch's calls move */
    } else {
      /* A later epoch holds the bucket already: this call is older than
       * the ring's span (its admission was delayed that long). */
      atomic_fetch_add_explicit(&lim->age_old, 1, memory_order_relaxed);
      return true;
    }
    if (atomic_compare_exchange_weak_explicit(b, &w, nw, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
  }
  if (tag != e && n > 0)
    atomic_fetch_add_explicit(&lim->age_old, (int64_t)n, memory_order_relaxed);
  return true;
}

/* Takes a counted call admitted at t out of the calls in flight. An
 * attempt cut at the stuck age (stuck_timeout) stays counted as stuck in
 * its bucket's cut count: the stuck-call rule weighs it with the others. */
static void bw__age_leave(bw_limiter_t *lim, int64_t t, bool cut) {
  uint32_t sh = atomic_load_explicit(&lim->age_shift, memory_order_acquire);
  uint32_t e = bw__age_epoch(lim, sh, t);
  _Atomic uint64_t *b = &lim->age[e & BW__AGE_MASK].live;
  if (cut) bw__age_count(&lim->age[e & BW__AGE_MASK].cut, e);
  uint64_t w = atomic_load_explicit(b, memory_order_relaxed);
  for (;;) {
    if ((uint32_t)(w >> 32) != e || (uint32_t)w == 0) {
      /* Its bucket was reused: the call was moved to age_old. */
      atomic_fetch_sub_explicit(&lim->age_old, 1, memory_order_relaxed);
      return;
    }
    if (atomic_compare_exchange_weak_explicit(
            b, &w, w - 1u, memory_order_relaxed, memory_order_relaxed))
      return;
  }
}

/* Folds a timed success's RTT into the good RTTs (under lim->lock) and
 * sets age_ns from them: stuck_ratio x the slowest good answer lately, so
 * that an answer in the dependency's usual spread is never "stuck" (with
 * the smoothed RTT as the reference, a partner answering in 10-400 ms had
 * a quarter of its calls read as stuck). */
static void bw__age_sample(bw_limiter_t *lim, int64_t rtt, int64_t now) {
  double r = (double)rtt;
  if (lim->good_srtt == 0.0) {
    lim->good_srtt = lim->good_max = r;
  } else if (rtt <= BW__LOAD(lim->age_ns) ||
             (double)(now - lim->good_at_ns) > 16.0 * lim->good_srtt) {
    lim->good_srtt += (r - lim->good_srtt) / 8.0;
    lim->good_max -= (lim->good_max - lim->good_srtt) / 64.0;
    if (r > lim->good_max) lim->good_max = r;
  } else {
    return; /* a stuck call's late answer */
  }
  lim->good_at_ns = now;
  if (BW__LOAD(lim->good_n) < BW__CUT_MIN_GOOD)
    atomic_fetch_add_explicit(&lim->good_n, 1, memory_order_relaxed);
  atomic_store_explicit(&lim->age_ns,
                        (int64_t)(lim->good_max * lim->stuck_ratio),
                        memory_order_relaxed);
}

/* Sets the bucket width, once, at the first RTT sample (under lim->lock,
 * after age_ns): the largest power of two of at most age_ns / 16 ns,
 * so the threshold spans 16 to 32 buckets and the ring 4 to 8 thresholds. */
static void bw__age_start(bw_limiter_t *lim, int64_t now) {
  int64_t w = BW__LOAD(lim->age_ns) / BW__AGE_PER_THRESHOLD;
  uint32_t sh = 1;
  if (lim->age == NULL || now == INT64_MIN || w < 2 ||
      BW__LOAD(lim->age_shift) != 0)
    return;
  while (sh < 62 && (INT64_C(1) << (sh + 1)) <= w)
    sh++;
  lim->age_base_ns = now;
  atomic_store_explicit(&lim->age_shift, sh, memory_order_release);
}

/* Once the boundary moved by a bucket: counts the calls older than
 * age_ns, and those of them admitted in a bucket that began after the
 * last decrease (with the attempts cut at the stuck age there), and all
 * the calls admitted in those buckets. bw__lim_age_cut decides whether
 * they are a new congestion event. */
static void bw__age_check(bw_limiter_t *lim, int64_t now) {
  uint32_t sh = atomic_load_explicit(&lim->age_shift, memory_order_acquire);
  uint32_t eb, seen, ec = 0;
  int64_t th, edge, cut;
  uint64_t stuck = 0, fresh = 0, fresh_admitted = 0;
  if (sh == 0) return;
  th = BW__LOAD(lim->age_ns);
  edge = now - th - lim->age_base_ns;
  if (th <= 0 || edge < 0) return;
  eb = (uint32_t)((uint64_t)edge >> sh); /* buckets before eb are stuck */
  seen = BW__LOAD(lim->age_scanned);
  if ((int32_t)(eb - seen) <= 0 ||
      !atomic_compare_exchange_strong_explicit(&lim->age_scanned, &seen, eb,
                                               memory_order_relaxed,
                                               memory_order_relaxed))
    return;
  cut = BW__LOAD(lim->cut_ns);
  if (cut >= lim->age_base_ns) ec = bw__age_epoch(lim, sh, cut) + 1u;
  for (uint32_t i = 0; i < BW__AGE_SLOTS; i++) {
    bw__age_bucket_t *b = &lim->age[i];
    uint64_t w = atomic_load_explicit(&b->live, memory_order_relaxed);
    uint32_t tag = (uint32_t)(w >> 32), n = (uint32_t)w, cut_n;
    if (w == 0 || (int32_t)(tag - eb) >= 0) continue; /* not stuck yet */
    stuck += n;
    if ((int32_t)(tag - ec) < 0) continue; /* before the last decrease */
    cut_n = bw__age_of(&b->cut, tag);
    if (n + cut_n == 0) continue;
    fresh += (uint64_t)n + cut_n;
    fresh_admitted += bw__age_of(&b->admitted, tag);
  }
  /* Calls moved out of the ring are older than its span, so stuck too,
   * when the threshold fits in the span (else they are left out: an RTT
   * that grew over 4 x since the width was set blunts the count, it never
   * invents stuck calls). */
  if ((th >> sh) + 1 < (int64_t)BW__AGE_SLOTS) {
    int64_t o = atomic_load_explicit(&lim->age_old, memory_order_relaxed);
    if (o > 0) stuck += (uint64_t)o;
  }
  atomic_store_explicit(&lim->stuck_calls,
                        stuck < UINT32_MAX ? (uint32_t)stuck : UINT32_MAX,
                        memory_order_relaxed);
  if (fresh > 0 || (stuck > 0 && BW__LOAD(lim->age_floor) != 0))
    bw__lim_age_cut(lim, now, cut, stuck, fresh, fresh_admitted);
}

static void bw__probe_check(bw_limiter_t *lim, int64_t now) {
  if (lim->probe_at == NULL) return;
  if (bw__probe_stuck(lim, now)) bw__lim_stuck(lim, now);
  bw__age_check(lim, now);
}

int bw_limiter_try_acquire(bw_limiter_t *lim, bw_permit_t *p) {
  uint32_t cur, lim_now;
  unsigned s;
  int64_t next_held, start;
  if (lim == NULL || p == NULL) return BW_E_INVAL;
  next_held = atomic_load_explicit(&lim->held_next_ns, memory_order_acquire);
  if (BW__UNLIKELY(next_held != INT64_MAX)) {
    int64_t now = bw__clock_now(lim->clock);
    if (now >= next_held) bw__held_expire(lim, now);
  }
  s = bw__stripe();
  cur = atomic_load_explicit(&lim->in_flight, memory_order_relaxed);
  lim_now = atomic_load_explicit(&lim->limit, memory_order_relaxed);
  if (cur >= lim_now) goto full;
  /* The start is read before the CAS, once a slot looks free: the clock's
   * loads then need not wait for the locked instruction (a full barrier).
   * A refusal after this (a racing thread took the last slot) has read the
   * clock for nothing and used a sampling turn, which is rare. */
  start =
      bw__lim_timed(lim, s) ? bw__clock_now(lim->clock) : BW_LIMITER_UNTIMED;
  if (lim->probe_at != NULL) {
    if (start != BW_LIMITER_UNTIMED) bw__probe_check(lim, start);
    lim_now = atomic_load_explicit(&lim->limit, memory_order_relaxed);
  }
  for (;;) {
    if (cur >= lim_now) goto full;
    /* An unproven level already probed waits for its proof once the
     * probing window is over. */
    if (lim->probe_at != NULL && cur + 1 > bw__probe_open(lim) &&
        cur + 1 <= BW__LOAD(lim->probe_hi) &&
        bw__probe_closed(lim, start, cur + 1))
      goto full;
    if (atomic_compare_exchange_weak_explicit(&lim->in_flight, &cur, cur + 1,
                                              memory_order_acq_rel,
                                              memory_order_relaxed))
      break;
    lim_now = atomic_load_explicit(&lim->limit, memory_order_relaxed);
  }
  if (lim->probe_at != NULL && cur + 1 > bw__probe_open(lim))
    bw__probe_admitted(
        lim, cur + 1,
        start != BW_LIMITER_UNTIMED ? start : bw__clock_now(lim->clock));
  bw_permit_init(p, start, BW_PERMIT_NORMAL);
  if (lim->age != NULL && start != BW_LIMITER_UNTIMED &&
      bw__age_admit(lim, start))
    p->flags |= BW_PERMIT_FLAG_AGED;
  p->generation = atomic_load_explicit(&lim->generation, memory_order_acquire);
  p->inflight_at_acquire = cur + 1;
  p->limit_at_acquire = lim_now;
  bw__bump(&lim->stripes[s].admitted, s);
  return BW_OK;
full:
  /* While every slot is taken nothing else reads the clock: a refusal
   * looks for stuck calls (a scan at most once per bucket width). */
  if (lim->age != NULL && BW__LOAD(lim->age_shift) != 0)
    bw__age_check(lim, bw__clock_now(lim->clock));
  bw__bump(&lim->stripes[s].rejected, s);
  if (BW__UNLIKELY(lim->sink != NULL)) bw__lim_refused(lim);
  return BW_E_FULL;
}

/* ---- limit changes ----------------------------------------------------- */

/* One report: the callback, then the event (t is the limiter's clock). */
static void bw__lim_report(bw_limiter_t *lim, uint32_t old, uint32_t now,
                           int64_t t) {
  bw_field_t f[3];
  char reason[80];
  if (lim->on_change != NULL)
    lim->on_change(lim->name, old, now, lim->userdata);
  if (lim->sink == NULL) return;
  f[0] = bw_field_uint("old_limit", old);
  f[1] = bw_field_uint("new_limit", now);
  f[2] = bw_field_str("algorithm", bw_limiter_algorithm_name(lim->alg));
  snprintf(reason, sizeof(reason), "%s: limit %u -> %u",
           bw_limiter_algorithm_name(lim->alg), old, now);
  bw_event_emit(lim->sink, lim->wall, t, BW_EV_LIMIT_CHANGED, lim->name, reason,
                f, 3, NULL);
}

/* Counts a change and reports it, outside the lock. With
 * change_interval_ms, at most one report per interval: the first change
 * after the interval reports the limit of the previous report -> now (the
 * CAS elects one reporter when threads race); changes inside the interval
 * wait for the next one. */
static void bw__lim_changed(bw_limiter_t *lim, uint32_t old, uint32_t now) {
  int64_t t, due;
  uint32_t prev;
  atomic_fetch_add_explicit(&lim->changes, 1, memory_order_relaxed);
  if (lim->on_change == NULL && lim->sink == NULL) return;
  if (lim->change_interval_ns == 0) {
    /* The callback alone needs no clock reading; an event carries one. */
    bw__lim_report(lim, old, now,
                   lim->sink != NULL ? bw__clock_now(lim->clock) : 0);
    return;
  }
  t = bw__clock_now(lim->clock);
  due = atomic_load_explicit(&lim->report_after_ns, memory_order_relaxed);
  if (t < due) return;
  if (!atomic_compare_exchange_strong_explicit(
          &lim->report_after_ns, &due, t + lim->change_interval_ns,
          memory_order_relaxed, memory_order_relaxed))
    return;
  prev =
      atomic_exchange_explicit(&lim->reported_limit, now, memory_order_relaxed);
  if (prev != now) bw__lim_report(lim, prev, now, t);
}

/* ---- guards against overshoot ----------------------------------------------
 * Every algorithm grows the limit on successes and the dependency's
 * overload signal may come late (the Polly lab's partner answers slowly, then
 * 429, 0.8-2.5 s after the limit passed its capacity). Two guards, for all
 * algorithms, stop growth (they never cut the limit):
 * - proven: a success admitted at in-flight n proves the dependency served
 *   n at once; growth stops max(4, headroom x proven) above the highest such
 *   n, so the limit climbs no faster than evidence arrives;
 * - disproven: a drop admitted at in-flight n, near the limit then (n >= 90 %
 *   of it), shows n was too many; growth stops below n for memory_ns (each
 *   such drop renews it), so the limit does not probe the same wall again
 *   and again. */

/* The limit in force when p was admitted, or the current one for a permit
 * filled elsewhere (0 there). */
static uint32_t bw__limit_at_acquire(const bw_limiter_t *lim,
                                     const bw_permit_t *p) {
  uint32_t then = p->limit_at_acquire;
  return then != 0 ? then : BW__LOAD(lim->limit);
}

static void bw__guard_success(bw_limiter_t *lim, uint32_t inflight) {
  if (inflight >= UINT32_MAX / 2) return; /* a permit without a count */
  bw__raise_u32(&lim->proven, inflight);
}

static void bw__guard_drop(bw_limiter_t *lim, const bw_permit_t *p,
                           uint32_t inflight, int64_t now) {
  if (lim->memory_ns == 0 || inflight >= UINT32_MAX / 2) return;
  if ((uint64_t)inflight * 10 < (uint64_t)bw__limit_at_acquire(lim, p) * 9)
    return; /* far below */
  bw__lower_u32(&lim->disproven, inflight);
  atomic_store_explicit(&lim->disproven_until_ns, now + lim->memory_ns,
                        memory_order_relaxed);
}

/* After a decrease to `next`: a level above it is no longer proven. */
static void bw__guard_decreased(bw_limiter_t *lim, uint32_t next) {
  bw__lower_u32(&lim->proven, next);
  bw__lower_u32(&lim->probe_hi, next);
}

/* The highest limit growth may reach at `now`, never below `cur`. */
static uint32_t bw__growth_cap(bw_limiter_t *lim, uint32_t cur, int64_t now) {
  uint64_t cap = lim->max;
  if (lim->headroom > 0.0) {
    uint64_t pv = atomic_load_explicit(&lim->proven, memory_order_relaxed);
    uint64_t head = (uint64_t)((double)pv * lim->headroom);
    if (BW__LOAD(lim->startup) && lim->startup_headroom > lim->headroom) {
      /* Slow start: up to (1 + startup_headroom) x proven, but at most
       * startup_step above it when that is larger than the usual headroom
       * (limited slow start). */
      uint64_t fast = (uint64_t)((double)pv * lim->startup_headroom);
      if (lim->startup_step > 0 && fast > lim->startup_step)
        fast = head > lim->startup_step ? head : lim->startup_step;
      head = fast;
    }
    if (head < 4) head = 4;
    if (pv + head < cap) cap = pv + head;
  }
  if (lim->memory_ns > 0) {
    uint32_t dv = atomic_load_explicit(&lim->disproven, memory_order_relaxed);
    if (dv != UINT32_MAX) {
      /* An untimed call has no reading yet: a growth step with a wall
       * remembered is rare enough to read the clock for. */
      if (now == INT64_MIN) now = bw__clock_now(lim->clock);
      if (now >=
          atomic_load_explicit(&lim->disproven_until_ns, memory_order_relaxed))
        atomic_compare_exchange_strong_explicit(
            &lim->disproven, &dv, UINT32_MAX, memory_order_relaxed,
            memory_order_relaxed);
      else if ((uint64_t)dv - 1 < cap)
        cap = dv > 0 ? (uint64_t)dv - 1 : 0;
    }
  }
  return cap < cur ? cur : (uint32_t)cap;
}

/* ---- the algorithm's update ------------------------------------------- */

/* The whole-number limit for a new estimate *est (never below min), the
 * limit in force being `old`. Growth past the guards' cap holds the
 * estimate at the cap too, or it would run ahead and land all at once when
 * the guard lifts. */
static uint32_t bw__lim_whole(bw_limiter_t *lim, double *est, uint32_t old,
                              int64_t now) {
  uint32_t next = (uint32_t)floor(*est);
  if (next < lim->min) next = lim->min;
  if (next > old) {
    uint32_t cap = bw__growth_cap(lim, old, now);
    if (next > cap) {
      next = cap;
      *est = (double)cap;
    }
  }
  return next;
}

/* Feeds one sample to the algorithm under the lock, then publishes the
 * new estimate's floor as the limit. A decrease on a congestion signal (a
 * drop, or a success the algorithm flags) applies only if the call was
 * admitted after the last such decrease, and starts a new generation: the
 * calls already in flight when the dependency started shedding report the
 * same congestion event, often seconds later (a 429 after a slow wait), and
 * must not decrease the limit again. The change is reported after the lock
 * is released. */
static void bw__lim_update(bw_limiter_t *lim, const bw_permit_t *p,
                           bw__lim_sample_t *s) {
  uint32_t gen, old = 0, next = 0;
  bool fresh, congestion = false, moved = false;
  double est;
  pthread_mutex_lock(&lim->lock);
  if (lim->probe_at != NULL && !s->drop && s->rtt_ns > 0) {
    /* The smoothed RTT (TCP's SRTT, gain 1/8) sets when a probe is stuck. */
    lim->srtt = lim->srtt == 0.0
                    ? (double)s->rtt_ns
                    : lim->srtt + ((double)s->rtt_ns - lim->srtt) / 8.0;
    atomic_store_explicit(&lim->stuck_ns,
                          (int64_t)(lim->srtt * lim->stuck_ratio),
                          memory_order_relaxed);
    bw__age_sample(lim, s->rtt_ns, s->now_ns);
    bw__age_start(lim, s->now_ns);
  }
  gen = BW__LOAD(lim->generation);
  fresh = p->generation == gen;
  if (s->drop && !fresh) goto done;
  old = BW__LOAD(lim->limit);
  s->est = lim->est;
  s->limit = old;
  est = lim->algo->update(lim->state, s, &congestion);
  if (s->drop || congestion) {
    if (!fresh) goto done;
    atomic_store_explicit(&lim->generation, gen + 1u, memory_order_release);
    if (BW__LOAD(lim->startup))
      atomic_store_explicit(&lim->startup, false, memory_order_relaxed);
    if (lim->age != NULL) /* stuck calls admitted before this are counted */
      atomic_store_explicit(
          &lim->cut_ns,
          s->now_ns != INT64_MIN ? s->now_ns : bw__clock_now(lim->clock),
          memory_order_relaxed);
  }
  if (BW__LOAD(lim->startup) && !s->drop && lim->headroom > 0.0) {
    /* Startup: the limit is what the evidence allows, at once. A decrease
     * the RTT asks for ends it (queueing: HyStart's exit); otherwise the
     * estimate jumps to the growth cap, (1 + startup_headroom) x the
     * proven level, startup_max_step above it at most. Without the cap
     * (probe_headroom 0) nothing bounds a jump: the algorithm grows. */
    if (est < lim->est)
      atomic_store_explicit(&lim->startup, false, memory_order_relaxed);
    else
      est = fmax(est, (double)bw__growth_cap(lim, old, s->now_ns));
  }
  if (est == lim->est) goto done;
  next = bw__lim_whole(lim, &est, old, s->now_ns);
  if (est == lim->est) goto done; /* growth held at the cap already */
  lim->est = est;
  if (next != old) {
    moved = true;
    if (s->drop && next < old) bw__guard_decreased(lim, next);
    if (next > old && BW__LOAD(lim->age_floor) != 0) /* the event is over */
      atomic_store_explicit(&lim->age_floor, 0, memory_order_relaxed);
    atomic_store_explicit(&lim->limit, next, memory_order_relaxed);
  }
done:
  pthread_mutex_unlock(&lim->lock);
  if (moved) bw__lim_changed(lim, old, next);
}

/* What both stuck paths (bw__lim_stuck, bw__lim_age_cut) ask of the
 * algorithm, under the lock: a drop sample marked stuck, with `inflight`
 * calls in flight at limit `old`, asking for a cut to `cut_to`. When the
 * estimate falls, lim->est takes it and the new limit (its floor, not below
 * min) is returned; otherwise `old`. The caller stores a changed limit and
 * does its own bookkeeping. */
static uint32_t bw__lim_stuck_cut(bw_limiter_t *lim, uint32_t old,
                                  uint32_t inflight, double cut_to,
                                  int64_t now) {
  bw__lim_sample_t sm;
  bool congestion = false;
  uint32_t next = old;
  double est;
  memset(&sm, 0, sizeof sm);
  sm.est = lim->est;
  sm.limit = old;
  sm.limit_then = old;
  sm.inflight = inflight;
  sm.drop = true;
  sm.stuck = true;
  sm.cut_to = cut_to;
  sm.start_ns = BW_LIMITER_UNTIMED;
  sm.now_ns = now;
  est = lim->algo->update(lim->state, &sm, &congestion);
  if (est < lim->est) {
    next = (uint32_t)floor(est);
    if (next < lim->min) next = lim->min;
    lim->est = est;
  }
  return next;
}

/* A probe is stuck (bw__probe_stuck): the level it was admitted at is over
 * what the dependency serves at once, and every call admitted at that
 * level or above is stuck with it. Under the lock, if still so: the limit
 * is cut to the open level (the stuck calls are still counted in flight, so
 * new calls go out only once the total is back under it), the wall is
 * remembered (overload_memory_ms), startup ends, and a new generation
 * starts: the stuck calls' drops, seconds later, report this same event. */
static void bw__lim_stuck(bw_limiter_t *lim, int64_t now) {
  uint32_t gen, old, next, open;
  bool moved = false;
  pthread_mutex_lock(&lim->lock);
  if (!bw__probe_stuck(lim, now)) {
    pthread_mutex_unlock(&lim->lock);
    return;
  }
  open = bw__probe_open(lim);
  atomic_fetch_add_explicit(&lim->stuck_events, 1, memory_order_relaxed);
  gen = BW__LOAD(lim->generation);
  atomic_store_explicit(&lim->generation, gen + 1u, memory_order_release);
  atomic_store_explicit(&lim->startup, false, memory_order_relaxed);
  atomic_store_explicit(&lim->probe_hi, open, memory_order_relaxed);
  atomic_store_explicit(&lim->cut_ns, now, memory_order_relaxed);
  if (lim->memory_ns > 0) {
    bw__lower_u32(&lim->disproven, open + 1u);
    atomic_store_explicit(&lim->disproven_until_ns, now + lim->memory_ns,
                          memory_order_relaxed);
  }
  old = BW__LOAD(lim->limit);
  next = bw__lim_stuck_cut(lim, old, open + 1u,
                           (double)(open > lim->min ? open : lim->min), now);
  if (next != old) {
    moved = true;
    bw__lower_u32(&lim->proven, next);
    atomic_store_explicit(&lim->limit, next, memory_order_relaxed);
  }
  pthread_mutex_unlock(&lim->lock);
  if (moved) bw__lim_changed(lim, old, next);
}

/* Stuck calls (bw__age_check), under the lock. A batch of them admitted
 * after the last decrease -- unless another decrease came since the scan
 * (it already answered this congestion), and only if they are at least
 * half of the calls admitted in their buckets: a latency tail leaves a
 * steady few percent of every bucket out that long, an overload most of
 * them (a 2 % tail at 1 s under capacity cut the limit again and again,
 * docs/limiter.md "Tails are not congestion") -- is a new congestion event: a
 * new generation starts (the stuck calls' own drops, later, decrease nothing),
 * startup ends, and the limit is cut by what is stuck: to the calls in
 * flight that are neither stuck nor held for a timeout, but not below
 * age_floor (half the limit at the event). Until the limit next
 * grows, each scan may deepen the cut as more of the calls in flight turn
 * stuck: the first scan sees only the first bucket to turn. */
static void bw__lim_age_cut(bw_limiter_t *lim, int64_t now, int64_t cut_seen,
                            uint64_t stuck, uint64_t fresh,
                            uint64_t fresh_admitted) {
  uint32_t gen, old, next = 0, floor_;
  uint64_t in, held, gone, target;
  bool moved = false;
  pthread_mutex_lock(&lim->lock);
  old = BW__LOAD(lim->limit);
  in = BW__LOAD(lim->in_flight);
  pthread_mutex_lock(&lim->hlock);
  held = lim->nheld;
  pthread_mutex_unlock(&lim->hlock);
  gone = held + stuck * lim->sample_every;
  target = in > gone ? in - gone : 0;
  /* A batch counts once it is 1/16 of the calls in flight (a lone call in
   * the latency's tail among hundreds is not congestion) and half of the
   * calls admitted in its buckets (nor is a steady tail that stays out). */
  if (fresh > 0 && BW__LOAD(lim->cut_ns) == cut_seen &&
      fresh * lim->sample_every * BW__AGE_BATCH >= in &&
      fresh * BW__AGE_SHARE >= fresh_admitted) {
    floor_ = old / 2; /* at most halved per event, TCP's loss response */
    if (floor_ < lim->min) floor_ = lim->min;
    if (target >= old) goto done;
    atomic_store_explicit(&lim->age_floor, floor_, memory_order_relaxed);
    atomic_store_explicit(&lim->cut_ns, now, memory_order_relaxed);
    atomic_fetch_add_explicit(&lim->stuck_events, 1, memory_order_relaxed);
    gen = BW__LOAD(lim->generation);
    atomic_store_explicit(&lim->generation, gen + 1u, memory_order_release);
    atomic_store_explicit(&lim->startup, false, memory_order_relaxed);
  } else {
    floor_ = BW__LOAD(lim->age_floor);
    if (floor_ == 0) goto done; /* no event open */
  }
  if (target < floor_) target = floor_;
  if (target >= old) goto done;
  next = bw__lim_stuck_cut(lim, old, old, (double)target, now);
  if (next != old) {
    moved = true;
    bw__guard_decreased(lim, next);
    atomic_store_explicit(&lim->limit, next, memory_order_relaxed);
  }
done:
  pthread_mutex_unlock(&lim->lock);
  if (moved) bw__lim_changed(lim, old, next);
}

/* Drop tolerance: is this drop (already counted in its stripe) within
 * drop_tolerance x the limit of its round? A round is the next `limit`
 * releases from its first drop, counted from the stripes, so successes
 * pay nothing for it. Every drop counts toward the round, also one of a
 * generation already decreased for: after a congestion event the share
 * stays high until its drops are over. The stripes are summed under the
 * lock, so the sums the drops see only grow from one to the next.
 * During startup the share is of the calls above the proven level, not of
 * the limit: the startup's growth is what those probes show, and a
 * dependency that sheds load fast (429s in milliseconds) fails most of
 * them while the calls under its capacity still succeed. Counted against
 * the whole limit, its first answers were tolerated and the limit kept
 * jumping on the few probes that got through. */
static bool bw__lim_tolerated(bw_limiter_t *lim) {
  uint64_t released = 0;
  uint32_t limit, share;
  bool tolerated;
  unsigned i;
  if (lim->drop_tolerance <= 0.0) return false;
  pthread_mutex_lock(&lim->lock);
  for (i = 0; i < BW__STRIPES; i++)
    released +=
        BW__LOAD(lim->stripes[i].successes) + BW__LOAD(lim->stripes[i].drops);
  limit = BW__LOAD(lim->limit);
  if (lim->round_drops == 0 || released - lim->round_start > limit) {
    lim->round_start = released; /* this drop opens a new round */
    lim->round_drops = 0;
  }
  lim->round_drops++;
  share = limit;
  if (BW__LOAD(lim->startup)) {
    uint32_t pv = BW__LOAD(lim->proven);
    share = limit > pv ? limit - pv : 1u;
  }
  tolerated = (double)lim->round_drops <= lim->drop_tolerance * (double)share;
  pthread_mutex_unlock(&lim->lock);
  if (tolerated)
    atomic_fetch_add_explicit(&lim->tolerated_drops, 1, memory_order_relaxed);
  return tolerated;
}

int bw_limiter_release(bw_limiter_t *lim, const bw_permit_t *p,
                       bw_limit_outcome_t outcome) {
  bw__lim_sample_t sample;
  uint32_t inflight;
  /* INT64_MIN until the clock is read (bw__growth_cap reads it if it needs
   * it). */
  int64_t now = INT64_MIN, rtt = 0, hold_from = INT64_MIN;
  bool drop, hold = false, timed, cut = false;
  unsigned s;
  if (lim == NULL || p == NULL) return BW_E_INVAL;
  if ((unsigned)outcome > (unsigned)BW_LIMIT_TIMED_OUT) return BW_E_INVAL;
  timed = p->start_ns != BW_LIMITER_UNTIMED;
  /* The clock is read only where the reading is used: a timed success's
   * RTT, a timed-out call's hold, a drop's overload memory. */
  if ((outcome == BW_LIMIT_SUCCESS && timed) || outcome == BW_LIMIT_TIMED_OUT ||
      (outcome == BW_LIMIT_DROPPED && lim->memory_ns > 0)) {
    now = bw__clock_now(lim->clock);
    if (timed) rtt = now - p->start_ns;
  }
  if (outcome == BW_LIMIT_TIMED_OUT) {
    atomic_fetch_add_explicit(&lim->timed_out, 1, memory_order_relaxed);
    /* An untimed call is held as long as the latest timed one was (callers
     * time out after a fixed budget, so that is a fair guess), or, before
     * any, for the latest success's RTT. An attempt the limiter cut short
     * (stuck_timeout) is held as if it had run to its own timeout: the
     * dependency may keep it that long, and longer. */
    if (timed && (p->flags & BW_PERMIT_FLAG_STUCK_TIMEOUT) &&
        p->timeout_ms > 0) {
      cut = true;
      atomic_fetch_add_explicit(&lim->stuck_timeouts, 1, memory_order_relaxed);
      rtt = (int64_t)p->timeout_ms * BW_NS_PER_MS;
      hold_from = p->start_ns;
    }
    if (!timed) {
      rtt = BW__LOAD(lim->timeout_rtt_ns);
      if (rtt == 0) rtt = BW__LOAD(lim->last_rtt_ns);
    } else if (rtt > 0 && BW__LOAD(lim->timeout_rtt_ns) != rtt) {
      atomic_store_explicit(&lim->timeout_rtt_ns, rtt, memory_order_relaxed);
    }
    hold = lim->hold_ratio > 0.0 && rtt > 0;
  }
  if (hold) {
    /* The slot stays counted until the hold ends (bw__held_keep). */
    uint32_t n = BW__LOAD(lim->in_flight);
    if (n == 0 || n > UINT32_MAX / 2) return BW_E_INVAL; /* see below */
    /* Held hold_ratio x the RTT from now; a cut attempt, (1 + hold_ratio)
     * x its own timeout from its admission. */
    int64_t until =
        hold_from != INT64_MIN
            ? hold_from + rtt + (int64_t)((double)rtt * lim->hold_ratio)
            : now + (int64_t)((double)rtt * lim->hold_ratio);
    if (!bw__held_keep(lim, until)) {
      atomic_fetch_add_explicit(&lim->held_overflow, 1, memory_order_relaxed);
      hold = false;
    }
  }
  if (!hold) {
    /* One locked subtraction, with no load before it to wait for. With
     * nothing in flight (a permit released twice) the count is put back;
     * until then it reads wrapped, far above any count in flight (at most
     * BW__LIM_MAX plus held slots): acquirers are refused, never admitted
     * past the limit, and another release that overlaps (it finds the
     * wrapped value, not 0) puts its own back too, so the count returns to
     * 0 whatever the interleaving. */
    uint32_t was =
        atomic_fetch_sub_explicit(&lim->in_flight, 1, memory_order_acq_rel);
    if (BW__UNLIKELY(was == 0 || was > UINT32_MAX / 2)) {
      atomic_fetch_add_explicit(&lim->in_flight, 1, memory_order_relaxed);
      return BW_E_INVAL;
    }
  }
  if (p->flags & BW_PERMIT_FLAG_AGED) bw__age_leave(lim, p->start_ns, cut);
  s = bw__stripe();
  if (outcome == BW_LIMIT_IGNORED) {
    bw__bump(&lim->stripes[s].ignored, s);
    if (lim->probe_at != NULL) bw__probe_withdrawn(lim, p->inflight_at_acquire);
    return BW_OK;
  }
  if (cut) {
    /* A cut attempt is a stuck call, not a drop of its own: it counts for
     * the stuck-call rule (its bucket's cut count), which weighs it with
     * the others, and decreases nothing itself. As a drop, one answer from
     * the latency's tail, cut, set the limit back to its level at
     * admission and remembered a wall there for overload_memory_ms
     * (docs/limiter.md, "Tails are not congestion"). */
    bw__bump(&lim->stripes[s].drops, s);
    if (now != INT64_MIN) bw__probe_check(lim, now);
    return BW_OK;
  }
  drop = outcome != BW_LIMIT_SUCCESS;
  if (!drop && timed) {
    if (rtt < 0) {
      bw__bump(&lim->stripes[s].ignored, s);
      return BW_E_INVAL;
    }
    if (lim->slow_ns > 0 && rtt > lim->slow_ns) drop = true;
  }
  bw__bump(drop ? &lim->stripes[s].drops : &lim->stripes[s].successes, s);
  if (now != INT64_MIN) bw__probe_check(lim, now);
  /* The in-flight count at acquire (this call included); a permit filled
   * elsewhere may carry 0: count it as saturated rather than idle. */
  inflight =
      p->inflight_at_acquire != 0 ? p->inflight_at_acquire : UINT32_MAX / 2;
  if (drop && bw__lim_tolerated(lim)) return BW_OK;
  if (drop)
    bw__guard_drop(lim, p, inflight, now);
  else
    bw__guard_success(lim, inflight);
  /* An untimed success is no sample for an RTT-driven algorithm. */
  if (drop || timed || lim->algo->untimed_successes) {
    sample.limit_then = bw__limit_at_acquire(lim, p);
    sample.inflight = inflight;
    sample.drop = drop;
    sample.stuck = false;
    sample.cut_to = 0.0;
    sample.start_ns = p->start_ns;
    sample.rtt_ns = drop || !timed ? 0 : rtt;
    sample.now_ns = now;
    bw__lim_update(lim, p, &sample);
  }
  /* A timed success's RTT is the latest, written only when it changes
   * (with a coarse clock most RTTs repeat, and an unchanged line stays
   * shared between cores). */
  if (timed && outcome == BW_LIMIT_SUCCESS && BW__LOAD(lim->last_rtt_ns) != rtt)
    atomic_store_explicit(&lim->last_rtt_ns, rtt, memory_order_relaxed);
  return BW_OK;
}

void bw_limiter_stats(const bw_limiter_t *lim, bw_limiter_stats_t *out) {
  unsigned i;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (lim == NULL) return;
  for (i = 0; i < BW__STRIPES; i++) {
    const bw__lim_stripe_t *s = &lim->stripes[i];
    out->admitted += BW__LOAD(s->admitted);
    out->rejected += BW__LOAD(s->rejected);
    out->successes += BW__LOAD(s->successes);
    out->drops += BW__LOAD(s->drops);
    out->ignored += BW__LOAD(s->ignored);
  }
  out->algorithm = lim->alg;
  out->in_flight = BW__LOAD(lim->in_flight);
  pthread_mutex_lock((pthread_mutex_t *)&lim->lock);
  out->limit = BW__LOAD(lim->limit);
  out->estimate = lim->est;
  if (lim->algo->stats != NULL) lim->algo->stats(lim->state, out);
  pthread_mutex_unlock((pthread_mutex_t *)&lim->lock);
  out->limit_changes = BW__LOAD(lim->changes);
  out->last_rtt_ns = BW__LOAD(lim->last_rtt_ns);
  out->timed_out = BW__LOAD(lim->timed_out);
  out->held_overflow = BW__LOAD(lim->held_overflow);
  pthread_mutex_lock((pthread_mutex_t *)&lim->hlock);
  out->held = lim->nheld;
  pthread_mutex_unlock((pthread_mutex_t *)&lim->hlock);
  out->proven = BW__LOAD(lim->proven);
  out->stuck = BW__LOAD(lim->stuck_events);
  out->stuck_calls = BW__LOAD(lim->stuck_calls);
  out->startup = BW__LOAD(lim->startup);
  out->stuck_timeouts = BW__LOAD(lim->stuck_timeouts);
  out->tolerated_drops = BW__LOAD(lim->tolerated_drops);
  {
    uint32_t dv = BW__LOAD(lim->disproven);
    out->disproven = dv == UINT32_MAX ? 0 : dv;
  }
}

/* ---- live changes ----------------------------------------------------------
 * Kept at the end of the file, apart from the algorithm: only min and max
 * move, under the lock that every update of the limit takes. */

int bw_limiter_check_bounds(const bw_limiter_t *lim, uint32_t min_limit,
                            uint32_t max_limit, bw_error_t *err) {
  if (lim == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "limiter must not be NULL");
  /* The algorithms keep their own floor and ceiling from creation, so the
   * live range stays inside the one the limiter was made with. */
  if (min_limit < lim->made.min_limit || min_limit > lim->made.max_limit)
    return bw_error_set(err, BW_E_INVAL, "min_limit",
                        "min_limit must be in [%u, %u], the range the "
                        "limiter was created with (got %u)",
                        lim->made.min_limit, lim->made.max_limit, min_limit);
  if (max_limit < min_limit || max_limit > lim->made.max_limit)
    return bw_error_set(err, BW_E_INVAL, "max_limit",
                        "max_limit must be in [min_limit %u, %u], the "
                        "creation max_limit (got %u)",
                        min_limit, lim->made.max_limit, max_limit);
  if (lim->alg == BW_LIMITER_GRADIENT2 &&
      lim->made.gradient2_queue_size > max_limit)
    return bw_error_set(err, BW_E_INVAL, "max_limit",
                        "max_limit must be >= gradient2_queue_size %u (got "
                        "%u)",
                        lim->made.gradient2_queue_size, max_limit);
  bw_error_clear(err);
  return BW_OK;
}

int bw_limiter_set_bounds(bw_limiter_t *lim, uint32_t min_limit,
                          uint32_t max_limit, bw_error_t *err) {
  uint32_t old, next;
  if (bw_limiter_check_bounds(lim, min_limit, max_limit, err) != BW_OK)
    return BW_E_INVAL;
  pthread_mutex_lock(&lim->lock);
  lim->min = min_limit;
  lim->max = max_limit;
  /* The limit in force and the estimate behind it are clamped at once;
   * calls already in flight above a lowered limit finish, and new ones are
   * refused until in-flight is back under it. */
  if (lim->est < (double)min_limit) lim->est = (double)min_limit;
  if (lim->est > (double)max_limit) lim->est = (double)max_limit;
  old = BW__LOAD(lim->limit);
  next = old < min_limit ? min_limit : old > max_limit ? max_limit : old;
  if (next != old)
    atomic_store_explicit(&lim->limit, next, memory_order_relaxed);
  pthread_mutex_unlock(&lim->lock);
  if (next != old) bw__lim_changed(lim, old, next);
  bw_error_clear(err);
  return BW_OK;
}

void bw_limiter_config_of(const bw_limiter_t *lim, bw_limiter_config_t *cfg) {
  if (lim == NULL || cfg == NULL) return;
  *cfg = lim->made;
  cfg->name = lim->name;
  pthread_mutex_lock((pthread_mutex_t *)&lim->lock);
  cfg->min_limit = lim->min;
  cfg->max_limit = lim->max;
  pthread_mutex_unlock((pthread_mutex_t *)&lim->lock);
  cfg->clock = lim->clock;
  cfg->wall_clock = lim->wall;
}

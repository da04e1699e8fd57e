/* Adaptive concurrency limiter: AIMD, Gradient2 and Vegas behind one permit
 * protocol (the formulas are in docs/limiter.md).
 *
 * - `in_flight` and `limit` are atomics: try_acquire is a CAS raising
 *   in_flight below limit. Counters live in per-thread stripes.
 * - AIMD keeps its whole state in `limit` and updates it with a CAS.
 * - GRADIENT2 keeps a fractional estimate and a long-term RTT average, each
 *   one atomic double updated by CAS on release (only its first
 *   gradient2_warmup samples, a plain mean, take `lock`), and publishes
 *   floor(estimate) to `limit` by CAS.
 * - VEGAS folds each timed success into its round's figures (atomics);
 *   the success that ends a round, elected by CAS, decides and moves the
 *   estimate by CAS too (see "Vegas" below).
 * No lock on any release once Gradient2 is warm.
 * A lowered limit never revokes permits: calls beyond it finish and new ones
 * wait until in_flight drops under it. */
#include "breakwater/limiter.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define BW__LIM_MAX 1000000u
#define BW__LIM_MAX_WINDOW 100000u
#define BW__LIM_MAX_MS INT64_C(86400000)

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
  _Atomic uint64_t samples; /* VEGAS: timed successes (its probe count) */
  /* VEGAS, exclusive stripes only, the owner's: max(1, log10(lg_floor)),
   * cached (log10 costs more than the rest of a decision). */
  double lg_floor;
  double lg;
} BW__PAIR_ALIGNED bw__lim_stripe_t;

struct bw_limiter_s {
  bw_limit_t iface; /* must stay first */
  bw_limiter_algorithm_t alg;
  uint32_t min;
  uint32_t max;
  double backoff;
  int64_t aimd_timeout_ns; /* 0 = off */
  double g2_tolerance;
  double g2_smoothing;
  double g2_factor; /* 2 / (long_window + 1) */
  uint32_t g2_warmup;
  uint32_t g2_queue;
  double v_alpha;
  double v_beta;
  double v_smoothing;
  uint32_t v_probe;
  const bw_clock_t *clock;
  uint32_t sample_every; /* time one call in this many, per stripe */
  bw_limiter_change_cb on_change;
  void *userdata;
  int64_t change_interval_ns; /* 0 = report every change */
  bw_sink_t *sink;            /* limit_changed events; NULL = none */
  const bw_clock_t *wall;
  char *name;

  BW__PAIR_ALIGNED _Atomic uint32_t in_flight;
  _Atomic uint32_t limit;
  /* Bumped by every decrease on a drop; permits carry the value at acquire,
   * and a drop from an older generation decreases nothing (one decrease per
   * congestion event, as TCP backs off once per window). */
  _Atomic uint32_t generation;
  /* AIMD and VEGAS: true until the first decrease (slow start). AIMD adds 1
   * per success in it, then 1 per `limit` successes (congestion avoidance,
   * counted in acks). */
  _Atomic bool slow_start;
  _Atomic uint32_t acks;

  /* Overload guards (docs/limiter.md, "Guards against overshoot"). */
  double hold_ratio;          /* a TIMED_OUT slot is held ratio x its RTT */
  double headroom;            /* growth stops headroom above the proven level */
  int64_t memory_ns;          /* a drop near the limit caps it for this long */
  _Atomic uint32_t proven;    /* highest in-flight count a success proved */
  _Atomic uint32_t disproven; /* lowest count a drop disproved; MAX = none */
  _Atomic int64_t disproven_until_ns;
  /* Slots held for timed-out calls: a min-heap of expiry times. */
  BW__PAIR_ALIGNED pthread_mutex_t hlock;
  int64_t *held;
  uint32_t nheld, held_cap;
  _Atomic int64_t held_next_ns; /* the earliest expiry; INT64_MAX = none */
  _Atomic uint64_t timed_out;
  _Atomic uint64_t held_overflow;

  /* GRADIENT2 / VEGAS state, by CAS; only Gradient2's warmup mean is
   * under lock. Laid out by who writes what: once Gradient2 is warm, this first
   * line pair is only read (the lock is not taken, est moves only when the
   * limit is not app-limited), so its samples read est and g2_warm without
   * a cache miss; what every sample writes is in the next pair. */
  BW__PAIR_ALIGNED pthread_mutex_t lock;
  _Atomic double est;
  _Atomic uint32_t g2_warm; /* GRADIENT2: warmup samples taken (to warmup) */
  double long_sum;          /* GRADIENT2 warmup, under lock */
  _Atomic uint64_t v_probe_base; /* VEGAS: samples at the last baseline */
  _Atomic int64_t min_rtt_ns;    /* VEGAS */
  /* VEGAS rounds: successes fold into these; the success that ends a
   * round (elected by CAS on v_round_start) takes them and decides. */
  _Atomic int64_t v_round_start;  /* the current round began at */
  _Atomic int64_t v_round_min;    /* the round's smallest RTT */
  _Atomic bool v_round_busy;      /* a success of the round was not
                                     app-limited */
  _Atomic unsigned v_stripes;     /* stripes that counted a sample: the
                                     probe sums these */
  _Atomic int64_t timeout_rtt_ns; /* the latest timed TIMED_OUT call's RTT */
  _Atomic uint64_t changes;
  _Atomic int64_t report_after_ns; /* next report allowed from */
  _Atomic uint32_t reported_limit; /* the limit the last report gave */

  /* Written by (nearly) every timed sample: one line for all three. */
  BW__PAIR_ALIGNED _Atomic double long_rtt; /* GRADIENT2: ns */
  _Atomic int64_t long_rtt_ns;
  _Atomic int64_t last_rtt_ns;

  bw__lim_stripe_t stripes[BW__STRIPES];
};

const char *bw_limiter_algorithm_name(bw_limiter_algorithm_t a) {
  switch (a) {
  case BW_LIMITER_AIMD:
    return "aimd";
  case BW_LIMITER_GRADIENT2:
    return "gradient2";
  case BW_LIMITER_VEGAS:
    return "vegas";
  default:
    return "unknown";
  }
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

#define BW__LIM_VTABLE(kind)                                            \
  {                                                                     \
    kind, bw__lim_if_try_acquire, bw__lim_if_release, bw__lim_if_limit, \
        bw__lim_if_in_flight, bw__lim_if_name, bw__lim_if_free,         \
        BW_LIMIT_VT_TIMED_OUT                                           \
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
  lim->name = bw_strdup(cfg->name);
  if (lim->name == NULL) goto nomem;
  lim->held_cap = cfg->max_limit < 65536u ? cfg->max_limit : 65536u;
  lim->held = cfg->timeout_hold_ratio > 0.0
                  ? bw_calloc(lim->held_cap, sizeof(*lim->held))
                  : NULL;
  if (cfg->timeout_hold_ratio > 0.0 && lim->held == NULL) goto nomem;
  if (pthread_mutex_init(&lim->lock, NULL) != 0) goto nolock;
  if (pthread_mutex_init(&lim->hlock, NULL) != 0) {
    pthread_mutex_destroy(&lim->lock);
    goto nolock;
  }
  lim->iface.vt = &bw__lim_vtables[cfg->algorithm];
  lim->alg = cfg->algorithm;
  lim->min = cfg->min_limit;
  lim->max = cfg->max_limit;
  lim->backoff = cfg->backoff_ratio;
  lim->aimd_timeout_ns = cfg->aimd_timeout_ms * BW_NS_PER_MS;
  lim->g2_tolerance = cfg->gradient2_tolerance;
  lim->g2_smoothing = cfg->gradient2_smoothing;
  lim->g2_factor = 2.0 / ((double)cfg->gradient2_long_window + 1.0);
  lim->g2_warmup = cfg->gradient2_warmup;
  lim->g2_queue = cfg->gradient2_queue_size;
  lim->v_alpha = cfg->vegas_alpha;
  lim->v_beta = cfg->vegas_beta;
  lim->v_smoothing = cfg->vegas_smoothing;
  lim->v_probe = cfg->vegas_probe_multiplier;
  lim->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  lim->on_change = cfg->on_change;
  lim->change_interval_ns = cfg->change_interval_ms * BW_NS_PER_MS;
  lim->sink = cfg->sink;
  lim->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  atomic_init(&lim->report_after_ns, INT64_MIN);
  atomic_init(&lim->reported_limit, cfg->initial_limit);
  lim->userdata = cfg->userdata;
  atomic_init(&lim->est, (double)cfg->initial_limit);
  atomic_init(&lim->long_rtt, 0.0);
  atomic_init(&lim->g2_warm, 0);
  for (unsigned i = 0; i < BW__STRIPES; i++)
    lim->stripes[i].lg_floor = -1.0; /* no limit is negative: not cached */
  atomic_init(&lim->v_round_start, INT64_MIN); /* the first success ends
                                                  round 0 */
  atomic_init(&lim->v_round_min, INT64_MAX);
  atomic_init(&lim->v_round_busy, false);
  atomic_init(&lim->limit, cfg->initial_limit);
  atomic_init(&lim->in_flight, 0);
  atomic_init(&lim->generation, 0);
  atomic_init(&lim->slow_start, true);
  atomic_init(&lim->acks, 0);
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
  bw_error_clear(err);
  return lim;
nolock:
  bw_error_set(err, BW_E_NOMEM, "", "cannot create the limiter's lock");
  goto fail;
nomem:
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating limiter");
fail:
  bw_free(lim->held);
  bw_free(lim->name);
  bw_free_aligned(lim);
  return NULL;
}

void bw_limiter_free(bw_limiter_t *lim) {
  if (lim == NULL) return;
  pthread_mutex_destroy(&lim->lock);
  pthread_mutex_destroy(&lim->hlock);
  bw_free(lim->held);
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
 * be working on the call (seed 004's partner keeps an abandoned request in
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
  while (!atomic_compare_exchange_weak_explicit(&lim->in_flight, &cur, cur + 1,
                                                memory_order_acq_rel,
                                                memory_order_relaxed)) {
    lim_now = atomic_load_explicit(&lim->limit, memory_order_relaxed);
    if (cur >= lim_now) goto full;
  }
  /* The generation in the high half, the limit in force in the low. */
  p->generation =
      (uint64_t)atomic_load_explicit(&lim->generation, memory_order_acquire)
          << 32 |
      lim_now;
  p->start_ns = start;
  p->kind = BW_PERMIT_NORMAL;
  p->reserved = cur + 1;
  p->context = NULL;
  bw__bump(&lim->stripes[s].admitted, s);
  return BW_OK;
full:
  bw__bump(&lim->stripes[s].rejected, s);
  return BW_E_FULL;
}

/* ---- the algorithms ------------------------------------------------------
 */

/* One report: the callback, then the event (t is the limiter's clock). */
static void bw__lim_report(bw_limiter_t *lim, uint32_t old, uint32_t now,
                           int64_t t) {
  bw_field_t f[3];
  char reason[80];
  if (lim->on_change != NULL)
    lim->on_change(lim->name, old, now, lim->userdata);
  if (lim->sink == NULL) return;
  f[0].key = "old_limit";
  f[0].type = BW_FIELD_UINT;
  f[0].v.u = old;
  f[1].key = "new_limit";
  f[1].type = BW_FIELD_UINT;
  f[1].v.u = now;
  f[2].key = "algorithm";
  f[2].type = BW_FIELD_STR;
  f[2].v.s = bw_limiter_algorithm_name(lim->alg);
  snprintf(reason, sizeof(reason), "%s: limit %u -> %u",
           bw_limiter_algorithm_name(lim->alg), old, now);
  bw_event_emit(lim->sink, lim->wall, t, BW_EV_LIMIT_CHANGED, lim->name, reason,
                f, 3, NULL);
}

/* Counts a change and reports it. With change_interval_ms, at most one
 * report per interval: the first change after the interval reports the
 * limit of the previous report -> now (the CAS elects one reporter when
 * AIMD threads race); changes inside the interval wait for the next one. */
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

static double bw__clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* floor(x * ratio), with a hair of slack so 10 * 0.9 is 9, not 8.999... */
static uint32_t bw__backoff(uint32_t limit, double ratio) {
  return (uint32_t)floor((double)limit * ratio + 1e-9);
}

/* A drop decreases the limit only if its permit was issued after the last
 * decrease: the calls already in flight when the dependency started shedding
 * report the same congestion event, often seconds later (a 429 after a slow
 * wait), and must not decrease it again. The CAS elects one decrease per
 * generation when threads race. */
static bool bw__lim_new_congestion(bw_limiter_t *lim, const bw_permit_t *p) {
  uint32_t g = (uint32_t)(p->generation >> 32);
  return atomic_compare_exchange_strong_explicit(
      &lim->generation, &g, g + 1u, memory_order_acq_rel, memory_order_relaxed);
}

/* ---- guards against overshoot ----------------------------------------------
 * Every algorithm below grows the limit on successes and the dependency's
 * overload signal may come late (seed 004's partner answers slowly, then
 * 429, 0.8-2.5 s after the limit passed its capacity). Two guards, for all
 * algorithms, stop growth (they never cut the limit):
 * - proven: a success admitted at in-flight n proves the dependency served
 *   n at once; growth stops max(4, headroom x proven) above the highest such
 *   n, so the limit climbs no faster than evidence arrives;
 * - disproven: a drop admitted at in-flight n, near the limit then (n >= 90 %
 *   of it), shows n was too many; growth stops below n for memory_ns (each
 *   such drop renews it), so the limit does not probe the same wall again
 *   and again. */

/* The limit in force when p was admitted (its low 32 bits), or the current
 * one for a permit filled elsewhere (0 there). */
static uint32_t bw__limit_at_acquire(const bw_limiter_t *lim,
                                     const bw_permit_t *p) {
  uint32_t then = (uint32_t)(p->generation & 0xFFFFFFFFu);
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
}

/* The highest limit growth may reach at `now`, never below `cur`. */
static uint32_t bw__growth_cap(bw_limiter_t *lim, uint32_t cur, int64_t now) {
  uint64_t cap = lim->max;
  if (lim->headroom > 0.0) {
    uint64_t pv = atomic_load_explicit(&lim->proven, memory_order_relaxed);
    uint64_t head = (uint64_t)((double)pv * lim->headroom);
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

static void bw__aimd(bw_limiter_t *lim, const bw_permit_t *p, uint32_t inflight,
                     bool drop, int64_t now) {
  uint32_t cur = atomic_load_explicit(&lim->limit, memory_order_relaxed);
  uint32_t next;
  if (drop) {
    if (!bw__lim_new_congestion(lim, p)) return;
    atomic_store_explicit(&lim->slow_start, false, memory_order_relaxed);
    atomic_store_explicit(&lim->acks, 0, memory_order_relaxed);
  } else if ((uint64_t)inflight * 2 < cur) {
    return; /* app-limited: no evidence the limit is too low */
  } else if (!atomic_load_explicit(&lim->slow_start, memory_order_relaxed)) {
    /* Congestion avoidance: +1 once `limit` successes have counted. */
    uint32_t n =
        atomic_fetch_add_explicit(&lim->acks, 1, memory_order_relaxed) + 1;
    if (n < cur || !atomic_compare_exchange_strong_explicit(
                       &lim->acks, &n, n - cur, memory_order_relaxed,
                       memory_order_relaxed))
      return;
  }
  do {
    if (drop) {
      /* Back off from the limit in force when the dropped call went out if
       * the limit grew since: the drop speaks of that level. */
      uint32_t then = (uint32_t)(p->generation & 0xFFFFFFFFu);
      next = bw__backoff(then != 0 && then < cur ? then : cur, lim->backoff);
      if (next < lim->min) next = lim->min;
    } else {
      next = cur < bw__growth_cap(lim, cur, now) ? cur + 1 : cur;
    }
    if (next == cur) return;
  } while (!atomic_compare_exchange_weak_explicit(
      &lim->limit, &cur, next, memory_order_relaxed, memory_order_relaxed));
  if (drop) bw__guard_decreased(lim, next);
  bw__lim_changed(lim, cur, next);
}

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

/* Replaces the estimate `est` (as read) by `next` (already clamped) if it
 * moved: the whole-number step (growth cap) first, then a CAS. False if the
 * CAS lost (est then holds the winner's value: decide again) or nothing
 * moved (*lnext == *old then). */
static bool bw__est_try(bw_limiter_t *lim, double *est, double next,
                        int64_t now, uint32_t *old, uint32_t *lnext,
                        bool *moved) {
  *old = atomic_load_explicit(&lim->limit, memory_order_relaxed);
  *lnext = bw__lim_whole(lim, &next, *old, now);
  *moved = next != *est;
  if (!*moved) return true;
  /* seq_cst: see bw__lim_publish. */
  return atomic_compare_exchange_weak_explicit(
      &lim->est, est, next, memory_order_seq_cst, memory_order_relaxed);
}

/* ---- Gradient2, lock-free ---------------------------------------------------
 * A sample is two CAS loops on atomic doubles: the long-term average first,
 * then the estimate, each computed from the value it replaces (a lost CAS
 * recomputes from the winner's value, so every sample is applied once to
 * each, in some order). Then the limit is moved to floor(estimate) by
 * bw__lim_publish. With one thread, or without races, the arithmetic is the
 * same operations in the same order as under a lock. */

/* Folds the RTT `shortr` into the long-term average and returns the ratio
 * long / short the sample decides on (before the pull-down below). The
 * first g2_warmup samples set a plain mean, under the lock (a sum and a
 * count); from then on, an exponential average by CAS. */
static double bw__g2_long(bw_limiter_t *lim, double shortr) {
  double l, nl, ratio;
  if (BW__UNLIKELY(atomic_load_explicit(&lim->g2_warm, memory_order_acquire) <
                   lim->g2_warmup)) {
    pthread_mutex_lock(&lim->lock);
    {
      uint32_t n = BW__LOAD(lim->g2_warm);
      if (n < lim->g2_warmup) {
        lim->long_sum += shortr;
        nl = lim->long_sum / (double)(n + 1);
        ratio = nl / shortr;
        if (ratio > 2.0) nl *= 0.95;
        atomic_store_explicit(&lim->long_rtt, nl, memory_order_relaxed);
        /* Release: a sampler that sees the warmup over sees its mean. */
        atomic_store_explicit(&lim->g2_warm, n + 1, memory_order_release);
        pthread_mutex_unlock(&lim->lock);
        goto done;
      }
    }
    pthread_mutex_unlock(&lim->lock);
  }
  l = atomic_load_explicit(&lim->long_rtt, memory_order_relaxed);
  for (;;) {
    nl = l * (1.0 - lim->g2_factor) + shortr * lim->g2_factor;
    ratio = nl / shortr; /* the one division (a dozen cycles or more) */
    /* After a long spell of high latency the average lags far behind a
     * recovered RTT: pull it down faster than the average alone would. */
    if (ratio > 2.0) nl *= 0.95;
    if (nl == l) break; /* nothing moves: no write, the line stays shared */
    if (atomic_compare_exchange_weak_explicit(
            &lim->long_rtt, &l, nl, memory_order_relaxed, memory_order_relaxed))
      break;
  }
done:
  /* Rounded to the nearest ns (the average is positive). */
  if (BW__LOAD(lim->long_rtt_ns) != (int64_t)(nl + 0.5))
    atomic_store_explicit(&lim->long_rtt_ns, (int64_t)(nl + 0.5),
                          memory_order_relaxed);
  return ratio;
}

/* Moves the limit to floor(estimate) (never below min), reporting the
 * change. After its CAS, a thread whose estimate was overtaken meanwhile
 * goes round again: the last estimate's writer, or whoever comes after it,
 * leaves the limit at that estimate's floor. */
static void bw__lim_publish(bw_limiter_t *lim) {
  /* seq_cst, with the estimate's CAS (bw__est_try): the writer of a new
   * estimate then reads the limit, and the publisher of a limit re-reads
   * the estimate; with weaker orders both could read the value from before
   * the other's write (a store-buffering outcome, possible on ARM), and the
   * limit would stay off the estimate's floor. On x86 the locked CAS is a
   * full barrier anyway: no cost. */
  for (;;) {
    uint32_t old = atomic_load_explicit(&lim->limit, memory_order_seq_cst);
    double e = atomic_load_explicit(&lim->est, memory_order_seq_cst);
    uint32_t next = (uint32_t)floor(e);
    if (next < lim->min) next = lim->min;
    if (next == old) return;
    if (atomic_compare_exchange_strong_explicit(&lim->limit, &old, next,
                                                memory_order_seq_cst,
                                                memory_order_seq_cst)) {
      bw__lim_changed(lim, old, next);
      if (atomic_load_explicit(&lim->est, memory_order_seq_cst) == e) return;
    }
  }
}

/* GRADIENT2 and VEGAS: a drop backs the estimate off multiplicatively,
 * once per congestion event, and ends slow start (which only Vegas reads:
 * TCP Vegas falls back to Reno on a loss). */
static void bw__est_drop(bw_limiter_t *lim, const bw_permit_t *p, int64_t now) {
  double est;
  uint32_t old, lnext;
  bool moved;
  if (!bw__lim_new_congestion(lim, p)) return;
  atomic_store_explicit(&lim->slow_start, false, memory_order_relaxed);
  est = atomic_load_explicit(&lim->est, memory_order_relaxed);
  while (!bw__est_try(lim, &est, fmax((double)lim->min, est * lim->backoff),
                      now, &old, &lnext, &moved)) {
  }
  if (!moved) return;
  if (lnext < old) bw__guard_decreased(lim, lnext);
  bw__lim_publish(lim);
}

/* One Gradient2 sample from a timed success (drops: bw__est_drop),
 * lock-free once warm. */
static void bw__gradient2(bw_limiter_t *lim, const bw_permit_t *p, int64_t rtt,
                          uint32_t inflight, int64_t now) {
  double ratio = bw__g2_long(lim, rtt > 0 ? (double)rtt : 1.0), est, next;
  bool decrease = false; /* this sample won its congestion event */
  bool moved;
  uint32_t old, lnext;
  est = atomic_load_explicit(&lim->est, memory_order_relaxed);
  do {
    double gradient;
    if ((double)inflight < est / 2.0) return; /* app-limited */
    gradient = bw__clamp(lim->g2_tolerance * ratio, 0.5, 1.0);
    next = est * gradient + (double)lim->g2_queue;
    next = est * (1.0 - lim->g2_smoothing) + next * lim->g2_smoothing;
    /* A decrease, like a drop's, once per congestion event. */
    if (next < est && !decrease && !(decrease = bw__lim_new_congestion(lim, p)))
      return;
    next = bw__clamp(next, (double)lim->min, (double)lim->max);
  } while (!bw__est_try(lim, &est, next, now, &old, &lnext, &moved));
  if (moved) bw__lim_publish(lim);
}

/* ---- Vegas: one decision per round trip ------------------------------------
 * A round ends with the first success that was sent after it began (its
 * start_ns later than the round's start: with a coarse clock, a call sent
 * in the round's first tick may have left before it). Every other timed
 * success folds its RTT into the round's minimum, and marks the round busy
 * if it was admitted at in_flight * 2 >= the limit, with a CAS or a store;
 * the success that ends the round (elected by a CAS on the round's start)
 * takes the round's figures with its own and decides, and the estimate
 * moves by CAS as Gradient2's does. Nothing takes a lock. A fold that lands
 * between the election and the taking counts in the round just ended: one
 * sample, never a decision. If the winner is held up (preempted) between
 * its election and the taking for a whole round, the next round's winner
 * takes those figures instead, and the two decide in reverse order, each
 * on real samples; a decrease's end of slow start is likewise seen by an
 * overlapping round's end only after its CAS. Both need a preemption at
 * that instant, and cost the accuracy of one round, not a wrong count. */

/* Admitted at in_flight * 2 >= the limit in force then (the permit's low
 * 32 bits; the current limit for a permit filled elsewhere). */
static bool bw__vegas_busy(const bw_limiter_t *lim, const bw_permit_t *p,
                           uint32_t inflight) {
  return (uint64_t)inflight * 2 >= bw__limit_at_acquire(lim, p);
}

static void bw__vegas_fold_in(bw_limiter_t *lim, const bw_permit_t *p,
                              int64_t rtt, uint32_t inflight) {
  bw__lower_i64(&lim->v_round_min, rtt);
  if (bw__vegas_busy(lim, p, inflight) && !BW__LOAD(lim->v_round_busy))
    atomic_store_explicit(&lim->v_round_busy, true, memory_order_relaxed);
}

/* Counts a timed success, then ends the round with it if it was sent after
 * the round began and wins the round's end (a CAS on v_round_start, from
 * the start it read to now: the loser of a race re-reads, and ends the
 * next round too if it was sent after that one began, as it would have
 * under a lock); otherwise folds it into the round. True: it ended the
 * round, unfolded, and decides. */
static bool bw__vegas_end(bw_limiter_t *lim, const bw_permit_t *p, int64_t rtt,
                          uint32_t inflight, unsigned s, int64_t now) {
  int64_t rs;
  bw__bump(&lim->stripes[s].samples, s);
  if (BW__UNLIKELY(s >= BW__LOAD(lim->v_stripes)))
    bw__raise_stripes(&lim->v_stripes, s);
  rs = BW__LOAD(lim->v_round_start);
  while (p->start_ns > rs)
    if (atomic_compare_exchange_weak_explicit(&lim->v_round_start, &rs, now,
                                              memory_order_relaxed,
                                              memory_order_relaxed))
      return true;
  bw__vegas_fold_in(lim, p, rtt, inflight);
  return false;
}

/* max(1, log10(floor(est))), cached per exclusive stripe (its owner's
 * alone): log10 costs more than the rest of a decision, so it is computed
 * again only when the whole-number limit moved (the same value, bit for
 * bit). */
static double bw__vegas_lg(bw_limiter_t *lim, unsigned s, double est) {
  double fl = floor(est);
  bw__lim_stripe_t *st;
  if (s >= BW__EXCL_STRIPES) return fmax(1.0, log10(fl));
  st = &lim->stripes[s];
  if (fl != st->lg_floor) {
    st->lg_floor = fl;
    st->lg = fmax(1.0, log10(fl));
  }
  return st->lg;
}

/* Ends the round this success won (bw__vegas_end): takes the round's
 * figures (exchanged for a fresh round's) with its own, and decides on the
 * round's smallest RTT. A fold that lands between the election and the
 * exchange counts in the round just ended: one sample, never a decision. */
static void bw__vegas_round(bw_limiter_t *lim, const bw_permit_t *p,
                            int64_t rtt, uint32_t inflight, unsigned s,
                            int64_t now) {
  double est = atomic_load_explicit(&lim->est, memory_order_relaxed), next;
  int64_t min_rtt, rmin;
  uint32_t old, lnext;
  bool busy, moved, leave_slow_start;
  /* Each figure is taken with an exchange, so that two rounds ending at
   * once never both count it, but only if there is one to take: calls
   * going one at a time fold nothing (every call is a round of its own),
   * and their round's end then costs one locked instruction, its CAS. */
  rmin = BW__LOAD(lim->v_round_min);
  if (rmin != INT64_MAX)
    rmin = atomic_exchange_explicit(&lim->v_round_min, INT64_MAX,
                                    memory_order_relaxed);
  if (rtt < rmin) rmin = rtt;
  busy = (BW__LOAD(lim->v_round_busy) &&
          atomic_exchange_explicit(&lim->v_round_busy, false,
                                   memory_order_relaxed)) ||
         bw__vegas_busy(lim, p, inflight);
  /* The no-load RTT only ever falls; if the dependency got slower for
   * good, every sample would read as queueing. So every so often the next
   * round's RTT becomes the new baseline (Netflix probes the same way, with
   * jitter across instances; here it is deterministic). */
  if (lim->v_probe > 0) {
    unsigned n = atomic_load_explicit(&lim->v_stripes, memory_order_acquire);
    uint64_t samples = 0, base = BW__LOAD(lim->v_probe_base);
    for (unsigned i = 0; i < n; i++)
      samples += BW__LOAD(lim->stripes[i].samples);
    if ((double)(samples - base) > (double)lim->v_probe * floor(est) &&
        atomic_compare_exchange_strong_explicit(&lim->v_probe_base, &base,
                                                samples, memory_order_relaxed,
                                                memory_order_relaxed)) {
      atomic_store_explicit(&lim->min_rtt_ns, rmin, memory_order_relaxed);
      return;
    }
  }
  /* A new no-load RTT: the baseline moved, this round decides nothing. */
  min_rtt = BW__LOAD(lim->min_rtt_ns);
  while (min_rtt == 0 || rmin < min_rtt)
    if (atomic_compare_exchange_weak_explicit(&lim->min_rtt_ns, &min_rtt, rmin,
                                              memory_order_relaxed,
                                              memory_order_relaxed))
      return;
  if (!busy) return; /* app-limited */
  do {
    double lg = bw__vegas_lg(lim, s, est);
    double queue = ceil(est * (1.0 - (double)min_rtt / (double)rmin));
    leave_slow_start = false;
    if (queue < lim->v_alpha * lg &&
        atomic_load_explicit(&lim->slow_start, memory_order_relaxed))
      next = est * 2.0; /* slow start, until the first decrease */
    else if (queue <= lg)
      next = est + lim->v_beta * lg; /* (almost) no queue: grow fast */
    else if (queue < lim->v_alpha * lg)
      next = est + lg;
    else if (queue > lim->v_beta * lg) {
      leave_slow_start = true;
      next = est - lg;
    } else
      return;
    next = bw__clamp(next, (double)lim->min, (double)lim->max);
    next = est * (1.0 - lim->v_smoothing) + next * lim->v_smoothing;
  } while (!bw__est_try(lim, &est, next, now, &old, &lnext, &moved));
  if (leave_slow_start)
    atomic_store_explicit(&lim->slow_start, false, memory_order_relaxed);
  if (moved) bw__lim_publish(lim);
}

int bw_limiter_release(bw_limiter_t *lim, const bw_permit_t *p,
                       bw_limit_outcome_t outcome) {
  uint32_t inflight;
  /* INT64_MIN until the clock is read (bw__growth_cap reads it if it needs
   * it). */
  int64_t now = INT64_MIN, rtt = 0;
  bool drop, hold = false, timed;
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
     * any, for the latest success's RTT. */
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
    if (!bw__held_keep(lim, now + (int64_t)((double)rtt * lim->hold_ratio))) {
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
  s = bw__stripe();
  if (outcome == BW_LIMIT_IGNORED) {
    bw__bump(&lim->stripes[s].ignored, s);
    return BW_OK;
  }
  drop = outcome != BW_LIMIT_SUCCESS;
  if (!drop && timed) {
    if (rtt < 0) {
      bw__bump(&lim->stripes[s].ignored, s);
      return BW_E_INVAL;
    }
    if (lim->alg == BW_LIMITER_AIMD && lim->aimd_timeout_ns > 0 &&
        rtt > lim->aimd_timeout_ns)
      drop = true;
  }
  bw__bump(drop ? &lim->stripes[s].drops : &lim->stripes[s].successes, s);
  /* The in-flight count at acquire (this call included); a permit filled
   * elsewhere may carry 0: count it as saturated rather than idle. */
  inflight = p->reserved != 0 ? p->reserved : UINT32_MAX / 2;
  if (drop)
    bw__guard_drop(lim, p, inflight, now);
  else
    bw__guard_success(lim, inflight);
  if (lim->alg == BW_LIMITER_AIMD) {
    /* AIMD grows on successes, timed or not: only its slow-call rule
     * needs the RTT. */
    bw__aimd(lim, p, inflight, drop, now);
  } else if (drop) {
    bw__est_drop(lim, p, now);
  } else if (timed) {
    /* An untimed success is no sample for an RTT-driven algorithm; a Vegas
     * success that does not end its round has been folded in. */
    if (lim->alg == BW_LIMITER_GRADIENT2)
      bw__gradient2(lim, p, rtt, inflight, now);
    else if (bw__vegas_end(lim, p, rtt, inflight, s, now))
      bw__vegas_round(lim, p, rtt, inflight, s, now);
  }
  /* A timed success's RTT is the latest, written only when it changes
   * (with a coarse clock most RTTs repeat, and an unchanged line stays
   * shared between cores), and last: its line is long_rtt's, which a
   * Gradient2 sample has just taken for its CAS, so the store finds it
   * here instead of fetching it once more (two threads on a precise
   * clock: ~600 -> ~400 ns a call pair). */
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
  out->limit = BW__LOAD(lim->limit);
  out->in_flight = BW__LOAD(lim->in_flight);
  if (lim->alg == BW_LIMITER_AIMD) {
    out->estimate = (double)out->limit;
  } else {
    out->estimate = BW__LOAD(lim->est);
  }
  out->limit_changes = BW__LOAD(lim->changes);
  out->last_rtt_ns = BW__LOAD(lim->last_rtt_ns);
  out->min_rtt_ns = BW__LOAD(lim->min_rtt_ns);
  out->long_rtt_ns = BW__LOAD(lim->long_rtt_ns);
  out->timed_out = BW__LOAD(lim->timed_out);
  out->held_overflow = BW__LOAD(lim->held_overflow);
  pthread_mutex_lock((pthread_mutex_t *)&lim->hlock);
  out->held = lim->nheld;
  pthread_mutex_unlock((pthread_mutex_t *)&lim->hlock);
  out->proven = BW__LOAD(lim->proven);
  {
    uint32_t dv = BW__LOAD(lim->disproven);
    out->disproven = dv == UINT32_MAX ? 0 : dv;
  }
}

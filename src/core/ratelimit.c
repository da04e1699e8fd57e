/* Rate limiter: GCRA over one atomic theoretical arrival time (TAT).
 *
 * GCRA in two lines: a call at `now` is admitted when TAT - now <= tau
 * (tau = (burst - 1) * T), and then TAT = max(TAT, now) + T. A refusal
 * writes nothing; an admission is one CAS.
 *
 * Time inside the limiter is kept in units of 1/16 ns counted from the
 * clock reading at creation, as a 64-bit unsigned number that wraps; TAT
 * and now are only ever compared through their difference read as signed,
 * which is right while they are less than 2^63 units (18 years) apart.
 * Why fractions of a ns: T = 1e9 / rate is rarely a whole number of ns, and
 * rounding it to 1 ns would make 6e8/s run at 5e8/s; at 1/16 ns the error
 * is at most 1/32 ns per slot. Why relative to creation: 16 units per ns of
 * an absolute monotonic reading would wrap after 36 years of uptime anyway,
 * but a relative origin makes every reading small and the arithmetic plain.
 * docs/ratelimit.md has the user's view. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "summary.h"

#define BW__FRAC_BITS 4
#define BW__UNITS_PER_NS (INT64_C(1) << BW__FRAC_BITS)
#define BW__UNITS_PER_MS (BW__UNITS_PER_NS * BW_NS_PER_MS)
#define BW__MIN_RATE 1e-6
#define BW__MAX_RATE 1e9
#define BW__MAX_REFILL_S 31536000.0 /* a year */
/* A pacer's backlog saturates here (2^57 ns, 4.5 years): far inside the
 * 2^63 units that signed differences can tell apart. */
#define BW__MAX_AHEAD (INT64_C(1) << 61)

typedef struct bw__rstripe_s {
  _Atomic uint64_t admitted;
  _Atomic uint64_t limited;
  _Atomic uint64_t reserved;
  _Atomic uint64_t reserved_waiting;
} BW__PAIR_ALIGNED bw__rstripe_t;

struct bw_ratelimit_s {
  /* The rate and burst: written only by bw_ratelimit_set_rate (under
   * set_lock), read without a lock by every call. A call reads each once;
   * one that runs while they change may decide on the old T with the new
   * tau (or the reverse): each is a valid value on its own. */
  _Atomic int64_t t_units;    /* emission interval T */
  _Atomic int64_t tau_units;  /* tolerance (burst - 1) * T */
  _Atomic uint64_t rate_bits; /* rate_per_sec, as the bits of a double */
  _Atomic uint32_t burst;
  pthread_mutex_t set_lock;
  /* Read-only after creation. */
  int64_t origin_ns; /* clock reading at creation: unit 0 */
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  char *name;

  /* The one word every admission writes: its own pair of lines. */
  BW__PAIR_ALIGNED _Atomic uint64_t tat;

  /* Refusals, summarised (only with a sink). */
  bw__summary_t summary;

  bw__rstripe_t stripes[BW__STRIPES];
};

void bw_ratelimit_config_init(bw_ratelimit_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "ratelimit";
  cfg->rate_per_sec = 100.0;
  cfg->burst = 1;
  cfg->clock = NULL;
}

int bw_ratelimit_config_validate(const bw_ratelimit_config_t *c,
                                 bw_error_t *err) {
  double refill;
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (!(c->rate_per_sec >= BW__MIN_RATE && c->rate_per_sec <= BW__MAX_RATE))
    return bw_error_set(err, BW_E_INVAL, "rate_per_sec",
                        "rate_per_sec must be in [1e-06, 1e9] (at least one "
                        "call per 11.6 days; got %g)",
                        c->rate_per_sec);
  if (c->burst < 1)
    return bw_error_set(err, BW_E_INVAL, "burst", "burst must be >= 1 (got %u)",
                        c->burst);
  refill = (double)c->burst / c->rate_per_sec;
  if (refill > BW__MAX_REFILL_S)
    return bw_error_set(err, BW_E_INVAL, "burst",
                        "burst / rate_per_sec, the time to refill a whole "
                        "burst, must be at most a year, 31536000 s (got %u / "
                        "%g = %g s)",
                        c->burst, c->rate_per_sec, refill);
  if (c->clock != NULL && c->clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "clock",
                        "clock must be NULL (the default) or have a now_ns "
                        "function");
  bw_error_clear(err);
  return BW_OK;
}

static double bw__rl_rate(const bw_ratelimit_t *rl) {
  uint64_t bits = atomic_load_explicit(&rl->rate_bits, memory_order_relaxed);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* Stores a valid rate and burst: T in units is 1.6e10 / rate, within [16,
 * 1.6e16] for the valid rates; the tolerance stays below a year, 5e17
 * units. */
static void bw__rl_store(bw_ratelimit_t *rl, double rate, uint32_t burst) {
  int64_t t = (int64_t)llround((double)BW__UNITS_PER_NS * 1e9 / rate);
  uint64_t bits;
  memcpy(&bits, &rate, sizeof bits);
  atomic_store_explicit(&rl->t_units, t, memory_order_relaxed);
  atomic_store_explicit(&rl->tau_units, (int64_t)(burst - 1) * t,
                        memory_order_relaxed);
  atomic_store_explicit(&rl->rate_bits, bits, memory_order_relaxed);
  atomic_store_explicit(&rl->burst, burst, memory_order_relaxed);
}

bw_ratelimit_t *bw_ratelimit_new(const bw_ratelimit_config_t *cfg,
                                 bw_error_t *err) {
  bw_ratelimit_t *rl;
  if (bw_ratelimit_config_validate(cfg, err) != BW_OK) return NULL;
  rl = bw_calloc_aligned(sizeof(*rl));
  if (rl == NULL) goto nomem;
  rl->name = bw_strdup(cfg->name);
  if (rl->name == NULL) goto nomem;
  /* T in units: 1.6e10 / rate, within [16, 1.6e16] for the valid rates; the
   * tolerance stays below a year, 5e17 units. */
  bw__rl_store(rl, cfg->rate_per_sec, cfg->burst);
  rl->clock = cfg->clock ? cfg->clock : bw_clock_monotonic();
  rl->origin_ns = bw__clock_now(rl->clock);
  rl->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  rl->sink = cfg->sink;
  if (pthread_mutex_init(&rl->set_lock, NULL) != 0) {
    bw_free(rl->name);
    bw_free_aligned(rl);
    bw_error_set(err, BW_E_NOMEM, "",
                 "cannot create the lock of rate limiter '%s'", cfg->name);
    return NULL;
  }
  if (bw__summary_init(&rl->summary, rl->origin_ns) != 0) {
    pthread_mutex_destroy(&rl->set_lock);
    bw_free(rl->name);
    bw_free_aligned(rl);
    bw_error_set(err, BW_E_NOMEM, "",
                 "cannot create the lock of rate limiter '%s'", cfg->name);
    return NULL;
  }
  /* TAT = now: the whole burst is available at once. */
  atomic_init(&rl->tat, 0);
  return rl;
nomem:
  if (rl != NULL) {
    bw_free(rl->name);
    bw_free_aligned(rl);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating rate limiter '%s'",
               cfg->name);
  return NULL;
}

/* Emits the refusals since the last summary as one rate_limited event (the
 * summary's lock held). */
static void bw__rl_summarise_locked(bw_ratelimit_t *rl, int64_t now) {
  uint64_t total = 0, n;
  for (unsigned i = 0; i < BW__STRIPES; i++)
    total += BW__LOAD(rl->stripes[i].limited);
  n = bw__summary_take(&rl->summary, 0, total);
  if (n == 0) return;
  {
    bw_field_t f[3];
    char reason[128];
    f[0] = bw_field_uint("count", n);
    f[1] = bw_field_double("rate_per_sec", bw__rl_rate(rl));
    f[2] = bw_field_uint("burst", BW__LOAD(rl->burst));
    snprintf(reason, sizeof(reason),
             "%llu calls refused over %g a second (burst %u)",
             (unsigned long long)n, f[1].v.d, (unsigned)f[2].v.u);
    bw_event_emit(rl->sink, rl->wall, now, BW_EV_RATE_LIMITED, rl->name, reason,
                  f, 3, NULL);
  }
}

void bw_ratelimit_free(bw_ratelimit_t *rl) {
  if (rl == NULL) return;
  if (rl->sink != NULL) { /* the last summary: the clock and sink outlive us */
    int64_t now = bw__clock_now(rl->clock);
    bw__summary_begin(&rl->summary, now, true);
    bw__rl_summarise_locked(rl, now);
    bw__summary_end(&rl->summary, now);
  }
  bw__summary_destroy(&rl->summary);
  pthread_mutex_destroy(&rl->set_lock);
  bw_free(rl->name);
  bw_free_aligned(rl);
}

const char *bw_ratelimit_name(const bw_ratelimit_t *rl) {
  return rl != NULL ? rl->name : "";
}

/* ---- GCRA ----------------------------------------------------------------
 */

/* Now in units since creation (mod 2^64: unsigned, so wrapping is defined).
 */
static inline uint64_t bw__units_now(const bw_ratelimit_t *rl) {
  uint64_t d = (uint64_t)bw__clock_now(rl->clock) - (uint64_t)rl->origin_ns;
  return d << BW__FRAC_BITS;
}

/* a - b read as a signed difference, without the implementation-defined
 * conversion of a large unsigned value to int64_t. */
static inline int64_t bw__sdiff(uint64_t a, uint64_t b) {
  uint64_t d = a - b;
  return d <= (uint64_t)INT64_MAX ? (int64_t)d : -(int64_t)(~d) - 1;
}

/* Units to ns, rounded up (u >= 0). */
static inline int64_t bw__units_to_ns_ceil(int64_t u) {
  return (u + BW__UNITS_PER_NS - 1) >> BW__FRAC_BITS;
}

int bw_ratelimit_try_acquire(bw_ratelimit_t *rl, int64_t *wait_ms) {
  uint64_t now, tat;
  int64_t t_units, tau_units;
  unsigned si;
  if (BW__UNLIKELY(rl == NULL)) {
    if (wait_ms != NULL) *wait_ms = 0;
    return BW_E_INVAL;
  }
  t_units = atomic_load_explicit(&rl->t_units, memory_order_relaxed);
  tau_units = atomic_load_explicit(&rl->tau_units, memory_order_relaxed);
  now = bw__units_now(rl);
  tat = BW__LOAD(rl->tat);
  for (;;) {
    /* How far the schedule runs ahead of now (negative: idle). */
    int64_t ahead = bw__sdiff(tat, now);
    if (ahead > tau_units) {
      /* Refused: admitted once now reaches TAT - tau. Nothing written. */
      si = bw__stripe();
      bw__bump(&rl->stripes[si].limited, si);
      if (wait_ms != NULL)
        *wait_ms =
            (ahead - tau_units + BW__UNITS_PER_MS - 1) / BW__UNITS_PER_MS;
      if (rl->sink != NULL) {
        /* The reading in ns, from the same `now` (mod 2^64, as units). */
        int64_t ns = rl->origin_ns + (int64_t)(now >> BW__FRAC_BITS);
        if (bw__summary_begin(&rl->summary, ns, false)) {
          bw__rl_summarise_locked(rl, ns);
          bw__summary_end(&rl->summary, ns);
        }
      }
      return BW_E_FULL;
    }
    if (atomic_compare_exchange_weak_explicit(
            &rl->tat, &tat, (ahead > 0 ? tat : now) + (uint64_t)t_units,
            memory_order_relaxed, memory_order_relaxed))
      break;
    /* Another thread moved TAT: decide again against its value (tat was
     * reloaded by the failed CAS; `now` stays this call's one reading). */
  }
  si = bw__stripe();
  bw__bump(&rl->stripes[si].admitted, si);
  if (wait_ms != NULL) *wait_ms = 0;
  return BW_OK;
}

int64_t bw_ratelimit_reserve_ns(bw_ratelimit_t *rl) {
  uint64_t now, tat;
  int64_t wait, t_units, tau_units;
  unsigned si;
  if (BW__UNLIKELY(rl == NULL)) return BW_E_INVAL;
  t_units = atomic_load_explicit(&rl->t_units, memory_order_relaxed);
  tau_units = atomic_load_explicit(&rl->tau_units, memory_order_relaxed);
  now = bw__units_now(rl);
  tat = BW__LOAD(rl->tat);
  for (;;) {
    int64_t ahead = bw__sdiff(tat, now);
    /* The slot is usable once now reaches TAT - tau, like an admission. */
    wait = ahead > tau_units ? ahead - tau_units : 0;
    if (BW__UNLIKELY(ahead > BW__MAX_AHEAD - t_units)) break;
    if (atomic_compare_exchange_weak_explicit(
            &rl->tat, &tat, (ahead > 0 ? tat : now) + (uint64_t)t_units,
            memory_order_relaxed, memory_order_relaxed))
      break;
  }
  si = bw__stripe();
  bw__bump(&rl->stripes[si].reserved, si);
  if (wait > 0) bw__bump(&rl->stripes[si].reserved_waiting, si);
  return bw__units_to_ns_ceil(wait);
}

void bw_ratelimit_stats(const bw_ratelimit_t *rl, bw_ratelimit_stats_t *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (rl == NULL) return;
  for (unsigned i = 0; i < BW__STRIPES; i++) {
    const bw__rstripe_t *s = &rl->stripes[i];
    out->admitted += BW__LOAD(s->admitted);
    out->limited += BW__LOAD(s->limited);
    out->reserved += BW__LOAD(s->reserved);
    out->reserved_waiting += BW__LOAD(s->reserved_waiting);
  }
}

/* ---- live changes ----------------------------------------------------------
 */

int bw_ratelimit_set_rate(bw_ratelimit_t *rl, double rate_per_sec,
                          uint32_t burst, bw_error_t *err) {
  bw_ratelimit_config_t c;
  if (rl == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "rate limiter must not be NULL");
  /* The creation rules, with the same messages. */
  bw_ratelimit_config_init(&c);
  c.name = rl->name;
  c.rate_per_sec = rate_per_sec;
  c.burst = burst;
  if (bw_ratelimit_config_validate(&c, err) != BW_OK) return BW_E_INVAL;
  /* The schedule already booked (TAT) is kept: calls admitted before the
   * change keep their slots, and the new T spaces the calls from now on.
   * The lock only keeps two setters from interleaving their four stores. */
  pthread_mutex_lock(&rl->set_lock);
  bw__rl_store(rl, rate_per_sec, burst);
  pthread_mutex_unlock(&rl->set_lock);
  bw_error_clear(err);
  return BW_OK;
}

void bw_ratelimit_config_of(const bw_ratelimit_t *rl,
                            bw_ratelimit_config_t *cfg) {
  if (rl == NULL || cfg == NULL) return;
  bw_ratelimit_config_init(cfg);
  cfg->name = rl->name;
  pthread_mutex_lock((pthread_mutex_t *)&rl->set_lock); /* a matching pair */
  cfg->rate_per_sec = bw__rl_rate(rl);
  cfg->burst = BW__LOAD(rl->burst);
  pthread_mutex_unlock((pthread_mutex_t *)&rl->set_lock);
  cfg->clock = rl->clock;
  cfg->wall_clock = rl->wall;
  cfg->sink = rl->sink;
}

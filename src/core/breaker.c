/* Circuit breaker: the permit protocol over a lock-free CLOSED path.
 *
 * Design (docs/internals/breaker.md has the long form):
 * - One atomic word holds the state and its generation. Every transition
 *   bumps the generation, so a permit knows which state it was issued in and
 *   an outcome from an older generation decides nothing.
 * - Counters that every call bumps live in per-thread stripes (one cache line
 *   each), so two cores do not fight over a line.
 * - The CLOSED and DISABLED paths never lock. Transitions, HALF_OPEN probes
 *   and operator actions take `tlock`: they are rare, and the lock makes each
 *   transition happen exactly once with exactly one event, in order.
 * - Windows: the consecutive rule is one counter; the count window counts
 *   calls in the stripes and keeps the positions of recent failures and slow
 *   calls (only failures take its lock); the time window
 *   is per-stripe buckets whose words pack (bucket epoch, count), so a stale
 *   bucket is recycled by the first writer of the new epoch without a lock. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "window.h"

#define BW__ST(w) ((bw_state_t)((w)&0xffu))
#define BW__GEN(w) ((w) >> 8)
#define BW__PACK(st, gen) (((uint64_t)(gen) << 8) | (uint64_t)(st))
#define BW__MAX_BUCKETS 1000u
/* Up to 8 bytes per call kept for failure positions (and as many for slow
 * calls): 1M calls cap that at 8 MB. */
#define BW__MAX_WINDOW_SIZE 1000000u
#define BW__SUMMARY_NS BW_NS_PER_S
#define BW__STRIPE_BYTES BW__PAIR
#define BW__STRIPE_ALIGNED BW__PAIR_ALIGNED

/* A deque of call positions (count window), capacity window_size. */
typedef struct bw__posq_s {
  uint64_t *pos;
  uint32_t head;
  uint32_t count;
} bw__posq_t;

typedef struct bw__stripe_s {
  _Atomic uint64_t admitted;
  _Atomic uint64_t rejected;
  _Atomic uint64_t shadow;
  _Atomic uint64_t successes;
  _Atomic uint64_t failures;
  _Atomic uint64_t ignored;
  _Atomic uint64_t slow;
  _Atomic uint64_t stale;
  _Atomic uint64_t wcalls; /* count window: outcomes recorded while CLOSED */
} BW__STRIPE_ALIGNED bw__stripe_t;

struct bw_breaker_s {
  bw_breaker_if_t iface; /* first: bw_breaker_iface(b) == b */
  /* Read-mostly: the state word and the configuration. */
  _Atomic uint64_t sw;
  _Atomic int64_t open_until_ns;
  _Atomic bool metrics_only;
  bw_trip_rule_t rule;
  /* Thresholds that bw_breaker_reconfigure may change while calls run:
   * atomics, read relaxed (each field is read whole; a decision made during
   * a reconfigure may see some fields old and some new). */
  _Atomic uint32_t failure_threshold;
  _Atomic uint32_t minimum_calls;
  uint32_t window_size;
  uint32_t buckets;
  _Atomic uint32_t half_open_max;
  _Atomic uint32_t success_threshold;
  _Atomic double failure_ratio;
  _Atomic double slow_ratio;
  _Atomic double break_multiplier;
  _Atomic int64_t slow_ns; /* 0 = slow-call rule off (on/off is fixed) */
  int64_t window_ns;
  int64_t bucket_ns;
  _Atomic int64_t break_ns;
  _Atomic int64_t max_break_ns;
  _Atomic int64_t max_break_ms; /* as configured: 0 = break_ms */
  _Atomic int64_t ho_timeout_ns;
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  bw_breaker_listener_cb listener; /* NULL: none */
  void *listener_ud;
  char *name;

  /* Consecutive failures: written on failures only (a success writes it
   * only when it is not already zero). */
  BW__PAIR_ALIGNED _Atomic uint32_t consec;

  /* Count window: a call's position is the number of outcomes recorded
   * while CLOSED (the sum of the stripes' wcalls). Successes only bump their
   * stripe; a failure or slow call takes wlock, reads the position and keeps
   * it, dropping positions that fell out of the last window_size calls. */
  BW__PAIR_ALIGNED pthread_mutex_t wlock;
  bw__posq_t fq;  /* failures */
  bw__posq_t sq;  /* slow calls */
  uint64_t wbase; /* position at the last clear */

  /* Time window: per stripe, `buckets` triples of packed words. */
  _Atomic uint64_t *tw;
  size_t tw_stride; /* words per stripe, a multiple of a cache line: word 0
                       is the stripe's last bucket epoch (64-bit), then the
                       bucket triples */

  /* Cold state: written under tlock, read lock-free by stats. */
  BW__PAIR_ALIGNED pthread_mutex_t tlock;
  _Atomic uint32_t ho_in_flight;
  _Atomic uint32_t ho_successes;
  int64_t ho_progress_ns;
  uint32_t consecutive_opens;
  _Atomic int64_t current_break_ns;
  _Atomic uint64_t opens;
  _Atomic uint64_t half_opens;
  _Atomic uint64_t closes;
  _Atomic int64_t state_since_ns;
  _Atomic int64_t time_in_state_ns[BW_STATE__COUNT];

  /* Rejection summaries: at most one event a second. */
  pthread_mutex_t slock;
  _Atomic int64_t summary_at_ns;
  uint64_t summarised;

  bw__stripe_t stripes[BW__STRIPES];
};

static const char *const bw__state_names[BW_STATE__COUNT] = {
    "closed", "open", "half_open", "isolated", "disabled"};

const char *bw_state_name(bw_state_t s) {
  return (unsigned)s < BW_STATE__COUNT ? bw__state_names[s] : "unknown";
}

const char *bw_trip_rule_name(bw_trip_rule_t r) {
  switch (r) {
  case BW_TRIP_CONSECUTIVE:
    return "consecutive";
  case BW_TRIP_COUNT_WINDOW:
    return "count_window";
  case BW_TRIP_TIME_WINDOW:
    return "time_window";
  default:
    return "unknown";
  }
}

void bw_breaker_config_init(bw_breaker_config_t *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "breaker";
  cfg->trip_rule = BW_TRIP_CONSECUTIVE;
  cfg->failure_threshold = 5;
  cfg->failure_ratio = 0.5;
  cfg->window_size = 100;
  cfg->window_ms = 10000;
  cfg->window_buckets = 10;
  cfg->minimum_calls = 20;
  cfg->slow_call_ms = 0;
  cfg->slow_call_ratio = 1.0;
  cfg->break_ms = 30000;
  cfg->break_multiplier = 1.0;
  cfg->max_break_ms = 0;
  cfg->half_open_max_calls = 1;
  cfg->success_threshold = 1;
  cfg->half_open_timeout_ms = 60000;
  cfg->metrics_only = false;
}

/* Durations in ms must fit in ns without overflow. */
#define BW__MAX_MS (INT64_MAX / BW_NS_PER_MS / 4)

static int bw__ratio_ok(double r) {
  return r > 0.0 && r <= 1.0;
}

int bw_breaker_config_validate(const bw_breaker_config_t *c, bw_error_t *err) {
  bool window;
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if ((unsigned)c->trip_rule > (unsigned)BW_TRIP_TIME_WINDOW)
    return bw_error_set(err, BW_E_INVAL, "trip_rule",
                        "trip_rule must be consecutive, count_window or "
                        "time_window (got %d)",
                        (int)c->trip_rule);
  window = c->trip_rule != BW_TRIP_CONSECUTIVE;
  if (c->trip_rule == BW_TRIP_CONSECUTIVE && c->failure_threshold < 1)
    return bw_error_set(err, BW_E_INVAL, "failure_threshold",
                        "failure_threshold must be >= 1 (got %u)",
                        c->failure_threshold);
  if (window && !bw__ratio_ok(c->failure_ratio))
    return bw_error_set(err, BW_E_INVAL, "failure_ratio",
                        "failure_ratio must be in (0, 1] (got %g)",
                        c->failure_ratio);
  if (c->trip_rule == BW_TRIP_COUNT_WINDOW && c->window_size < 1)
    return bw_error_set(err, BW_E_INVAL, "window_size",
                        "window_size must be >= 1 (got %u)", c->window_size);
  if (c->trip_rule == BW_TRIP_COUNT_WINDOW &&
      c->window_size > BW__MAX_WINDOW_SIZE)
    return bw_error_set(err, BW_E_INVAL, "window_size",
                        "window_size must be <= %u (got %u)",
                        BW__MAX_WINDOW_SIZE, c->window_size);
  if (c->trip_rule == BW_TRIP_TIME_WINDOW) {
    if (c->window_ms < 1 || c->window_ms > BW__MAX_MS)
      return bw_error_set(err, BW_E_INVAL, "window_ms",
                          "window_ms must be >= 1 (got %lld)",
                          (long long)c->window_ms);
    if (c->window_buckets < 1 || c->window_buckets > BW__MAX_BUCKETS ||
        (int64_t)c->window_buckets > c->window_ms)
      return bw_error_set(err, BW_E_INVAL, "window_buckets",
                          "window_buckets must be in 1..%u and <= window_ms "
                          "(got %u for window_ms %lld)",
                          BW__MAX_BUCKETS, c->window_buckets,
                          (long long)c->window_ms);
  }
  if (window && c->minimum_calls < 1)
    return bw_error_set(err, BW_E_INVAL, "minimum_calls",
                        "minimum_calls must be >= 1 (got %u)",
                        c->minimum_calls);
  if (c->trip_rule == BW_TRIP_COUNT_WINDOW && c->minimum_calls > c->window_size)
    return bw_error_set(err, BW_E_INVAL, "minimum_calls",
                        "minimum_calls must be <= window_size (got %u > %u): "
                        "the window could never hold enough calls",
                        c->minimum_calls, c->window_size);
  if (c->slow_call_ms < 0 || c->slow_call_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "slow_call_ms",
                        "slow_call_ms must be >= 0 (got %lld)",
                        (long long)c->slow_call_ms);
  if (c->slow_call_ms > 0 && !window)
    return bw_error_set(err, BW_E_INVAL, "slow_call_ms",
                        "slow_call_ms needs trip_rule count_window or "
                        "time_window (a slow-call ratio needs a window)");
  if (c->slow_call_ms > 0 && !bw__ratio_ok(c->slow_call_ratio))
    return bw_error_set(err, BW_E_INVAL, "slow_call_ratio",
                        "slow_call_ratio must be in (0, 1] (got %g)",
                        c->slow_call_ratio);
  if (c->break_ms < 1 || c->break_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "break_ms",
                        "break_ms must be >= 1 (got %lld)",
                        (long long)c->break_ms);
  if (!(c->break_multiplier >= 1.0) || !isfinite(c->break_multiplier))
    return bw_error_set(err, BW_E_INVAL, "break_multiplier",
                        "break_multiplier must be a finite number >= 1 "
                        "(got %g)",
                        c->break_multiplier);
  if (c->max_break_ms < 0 || c->max_break_ms > BW__MAX_MS ||
      (c->max_break_ms != 0 && c->max_break_ms < c->break_ms))
    return bw_error_set(err, BW_E_INVAL, "max_break_ms",
                        "max_break_ms must be 0 (no growth cap: break_ms) or "
                        ">= break_ms %lld (got %lld)",
                        (long long)c->break_ms, (long long)c->max_break_ms);
  if (c->half_open_max_calls < 1)
    return bw_error_set(err, BW_E_INVAL, "half_open_max_calls",
                        "half_open_max_calls must be >= 1 (got %u)",
                        c->half_open_max_calls);
  if (c->success_threshold < 1)
    return bw_error_set(err, BW_E_INVAL, "success_threshold",
                        "success_threshold must be >= 1 (got %u)",
                        c->success_threshold);
  if (c->half_open_timeout_ms < 1 || c->half_open_timeout_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "half_open_timeout_ms",
                        "half_open_timeout_ms must be >= 1 (got %lld)",
                        (long long)c->half_open_timeout_ms);
  bw_error_clear(err);
  return BW_OK;
}

/* The fields bw_breaker_reconfigure may change (slow_ns's on/off is fixed:
 * a permit issued with slow detection off has no start time). */
static void bw__set_thresholds(bw_breaker_t *b, const bw_breaker_config_t *c) {
  atomic_store_explicit(&b->failure_threshold, c->failure_threshold,
                        memory_order_relaxed);
  atomic_store_explicit(&b->minimum_calls, c->minimum_calls,
                        memory_order_relaxed);
  atomic_store_explicit(&b->half_open_max, c->half_open_max_calls,
                        memory_order_relaxed);
  atomic_store_explicit(&b->success_threshold, c->success_threshold,
                        memory_order_relaxed);
  atomic_store_explicit(&b->failure_ratio, c->failure_ratio,
                        memory_order_relaxed);
  atomic_store_explicit(&b->slow_ratio, c->slow_call_ratio,
                        memory_order_relaxed);
  atomic_store_explicit(&b->break_multiplier, c->break_multiplier,
                        memory_order_relaxed);
  atomic_store_explicit(&b->slow_ns, c->slow_call_ms * BW_NS_PER_MS,
                        memory_order_relaxed);
  atomic_store_explicit(&b->break_ns, c->break_ms * BW_NS_PER_MS,
                        memory_order_relaxed);
  atomic_store_explicit(&b->max_break_ms, c->max_break_ms,
                        memory_order_relaxed);
  atomic_store_explicit(
      &b->max_break_ns,
      (c->max_break_ms ? c->max_break_ms : c->break_ms) * BW_NS_PER_MS,
      memory_order_relaxed);
  atomic_store_explicit(&b->ho_timeout_ns,
                        c->half_open_timeout_ms * BW_NS_PER_MS,
                        memory_order_relaxed);
}

bw_breaker_t *bw_breaker_new(const bw_breaker_config_t *cfg, bw_error_t *err) {
  bw_breaker_t *b;
  int64_t now;
  if (bw_breaker_config_validate(cfg, err) != BW_OK) return NULL;
  b = bw_calloc_aligned(sizeof(*b));
  if (b == NULL) goto nomem;
  b->iface.vt = &bw__breaker_vt;
  b->name = bw_strdup(cfg->name);
  if (b->name == NULL) goto nomem;
  b->rule = cfg->trip_rule;
  b->window_size = cfg->window_size;
  b->buckets = cfg->window_buckets;
  b->window_ns = cfg->window_ms * BW_NS_PER_MS;
  atomic_init(&b->slow_ns, cfg->slow_call_ms * BW_NS_PER_MS);
  bw__set_thresholds(b, cfg);
  b->clock = cfg->clock ? cfg->clock : bw_clock_monotonic();
  b->wall = cfg->wall_clock ? cfg->wall_clock : bw_clock_realtime();
  b->sink = cfg->sink;
  b->listener = cfg->listener;
  b->listener_ud = cfg->listener_userdata;
  if (b->rule == BW_TRIP_COUNT_WINDOW) {
    b->fq.pos = bw_calloc(b->window_size, sizeof(uint64_t));
    if (b->fq.pos == NULL) goto nomem;
    if (BW__LOAD(b->slow_ns) > 0) {
      b->sq.pos = bw_calloc(b->window_size, sizeof(uint64_t));
      if (b->sq.pos == NULL) goto nomem;
    }
  } else if (b->rule == BW_TRIP_TIME_WINDOW) {
    size_t per_line = BW__STRIPE_BYTES / sizeof(uint64_t);
    b->bucket_ns = b->window_ns / b->buckets;
    b->tw_stride =
        ((size_t)b->buckets * 3 + 1 + per_line - 1) / per_line * per_line;
    b->tw = bw_calloc_aligned(b->tw_stride * BW__STRIPES * sizeof(uint64_t));
    if (b->tw == NULL) goto nomem;
  }
  if (pthread_mutex_init(&b->tlock, NULL) != 0) goto nomem;
  if (pthread_mutex_init(&b->slock, NULL) != 0) {
    pthread_mutex_destroy(&b->tlock);
    goto nomem;
  }
  if (pthread_mutex_init(&b->wlock, NULL) != 0) {
    pthread_mutex_destroy(&b->tlock);
    pthread_mutex_destroy(&b->slock);
    goto nomem;
  }
  now = bw__clock_now(b->clock);
  atomic_init(&b->sw, BW__PACK(BW_CLOSED, 1));
  atomic_init(&b->metrics_only, cfg->metrics_only);
  atomic_init(&b->current_break_ns, BW__LOAD(b->break_ns));
  atomic_init(&b->state_since_ns, now);
  atomic_init(&b->summary_at_ns, now);
  return b;
nomem:
  if (b != NULL) {
    bw_free(b->name);
    bw_free(b->fq.pos);
    bw_free(b->sq.pos);
    bw_free_aligned((void *)b->tw);
    bw_free_aligned(b);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating breaker '%s'",
               cfg->name);
  return NULL;
}

static void bw__flush_summary(bw_breaker_t *b, int64_t now, bw_state_t st);
static uint64_t bw__sum_rejected(const bw_breaker_t *b);

void bw_breaker_free(bw_breaker_t *b) {
  if (b == NULL) return;
  /* Rejections not yet summarised would be lost with the object: a last
   * calls_rejected event says how many there were. Only then are the clock
   * and the sink used (breaker.h: they must outlive the breaker). */
  if (b->sink != NULL && bw__sum_rejected(b) != b->summarised)
    bw__flush_summary(
        b, bw__clock_now(b->clock),
        BW__ST(atomic_load_explicit(&b->sw, memory_order_acquire)));
  pthread_mutex_destroy(&b->tlock);
  pthread_mutex_destroy(&b->slock);
  pthread_mutex_destroy(&b->wlock);
  bw_free(b->name);
  bw_free(b->fq.pos);
  bw_free(b->sq.pos);
  bw_free_aligned((void *)b->tw);
  bw_free_aligned(b);
}

const char *bw_breaker_name(const bw_breaker_t *b) {
  return b == NULL ? "" : b->name;
}

/* ---- small helpers ------------------------------------------------------ */

#define BW__INC(field) \
  atomic_fetch_add_explicit(&(field), 1, memory_order_relaxed)

static inline void bw__admit(bw_breaker_t *b) {
  unsigned si = bw__stripe();
  bw__bump(&b->stripes[si].admitted, si);
}

static uint64_t bw__sum_rejected(const bw_breaker_t *b) {
  uint64_t n = 0;
  for (unsigned i = 0; i < BW__STRIPES; i++)
    n += BW__LOAD(b->stripes[i].rejected);
  return n;
}

/* Flushes unsummarised rejections as one event (slock held by caller). */
static void bw__summary_emit_locked(bw_breaker_t *b, int64_t now,
                                    bw_state_t st) {
  uint64_t total = bw__sum_rejected(b);
  uint64_t delta = total - b->summarised;
  atomic_store_explicit(&b->summary_at_ns, now, memory_order_relaxed);
  if (delta == 0) return;
  b->summarised = total;
  {
    bw_field_t f[2];
    char reason[96];
    f[0] = bw_field_uint("count", delta);
    f[1] = bw_field_str("state", bw_state_name(st));
    snprintf(reason, sizeof(reason), "%llu calls rejected while %s",
             (unsigned long long)delta, bw_state_name(st));
    bw_event_emit(b->sink, b->wall, now, BW_EV_CALLS_REJECTED, b->name, reason,
                  f, 2, NULL);
  }
}

static void bw__summary_maybe(bw_breaker_t *b, int64_t now, bw_state_t st) {
  if (now - atomic_load_explicit(&b->summary_at_ns, memory_order_relaxed) <
      BW__SUMMARY_NS)
    return;
  if (pthread_mutex_trylock(&b->slock) != 0) return; /* someone else is on it */
  if (now - atomic_load_explicit(&b->summary_at_ns, memory_order_relaxed) >=
      BW__SUMMARY_NS)
    bw__summary_emit_locked(b, now, st);
  pthread_mutex_unlock(&b->slock);
}

/* ---- windows --------------------------------------------------------------
 */

/* The current call position: outcomes recorded while CLOSED, all stripes.
 * Stripes that were never handed out hold zero and are skipped. */
static uint64_t bw__position(const bw_breaker_t *b) {
  uint64_t n = 0;
  unsigned used = bw_stripes_used();
  for (unsigned i = 0; i < used; i++)
    n += BW__LOAD(b->stripes[i].wcalls);
  return n;
}

static void bw__posq_push(bw__posq_t *q, uint32_t cap, uint64_t pos) {
  if (q->count == cap) { /* only under races: the oldest goes */
    q->head = (q->head + 1) % cap;
    q->count--;
  }
  q->pos[(q->head + q->count) % cap] = pos;
  q->count++;
}

/* Drops positions at or before `oldest_out` (no longer in the window). */
static void bw__posq_trim(bw__posq_t *q, uint32_t cap, uint64_t oldest_out) {
  while (q->count > 0 && q->pos[q->head] <= oldest_out) {
    q->head = (q->head + 1) % cap;
    q->count--;
  }
}

typedef struct {
  uint64_t calls, failures, slow;
} bw__window_t;

/* The count window at position g (wlock held). */
static void bw__count_window_locked(bw_breaker_t *b, uint64_t g,
                                    bw__window_t *w) {
  uint64_t n = g > b->wbase ? g - b->wbase : 0;
  uint64_t out = g > b->window_size ? g - b->window_size : 0;
  w->calls = n < b->window_size ? n : b->window_size;
  bw__posq_trim(&b->fq, b->window_size, out);
  w->failures = b->fq.count < w->calls ? b->fq.count : w->calls;
  if (b->sq.pos != NULL) {
    bw__posq_trim(&b->sq, b->window_size, out);
    w->slow = b->sq.count < w->calls ? b->sq.count : w->calls;
  }
}

static void bw__windows_clear(bw_breaker_t *b) {
  atomic_store_explicit(&b->consec, 0, memory_order_relaxed);
  if (b->rule == BW_TRIP_COUNT_WINDOW) {
    pthread_mutex_lock(&b->wlock);
    b->wbase = bw__position(b);
    b->fq.count = b->sq.count = 0;
    pthread_mutex_unlock(&b->wlock);
  }
  if (b->tw != NULL) {
    for (size_t i = 0; i < b->tw_stride * BW__STRIPES; i++)
      atomic_store_explicit(&b->tw[i], 0, memory_order_relaxed);
  }
}

static void bw__window_read(const bw_breaker_t *b, int64_t now,
                            bw__window_t *w) {
  memset(w, 0, sizeof(*w));
  if (b->rule == BW_TRIP_COUNT_WINDOW) {
    bw_breaker_t *m = (bw_breaker_t *)b; /* the lock is not the state */
    pthread_mutex_lock(&m->wlock);
    bw__count_window_locked(m, bw__position(m), w);
    pthread_mutex_unlock(&m->wlock);
  } else if (b->rule == BW_TRIP_TIME_WINDOW) {
    int64_t cur = bw__floor_div(now, b->bucket_ns);
    uint32_t epoch = (uint32_t)cur;
    unsigned used = bw_stripes_used();
    for (unsigned s = 0; s < used; s++) {
      const _Atomic uint64_t *base = b->tw + (size_t)s * b->tw_stride + 1;
      /* A stripe with no outcome inside the window holds nothing that
       * counts; skipping it also keeps 32-bit bucket epochs from aliasing
       * after a quiet spell of 2^32 buckets. */
      if (cur - (int64_t)BW__LOAD(base[-1]) >= (int64_t)b->buckets) continue;
      for (uint32_t j = 0; j < b->buckets; j++) {
        uint64_t c = BW__LOAD(base[j * 3]);
        uint64_t f = BW__LOAD(base[j * 3 + 1]);
        uint64_t sl = BW__LOAD(base[j * 3 + 2]);
        w->calls += bw__window_count(c, epoch, b->buckets);
        w->failures += bw__window_count(f, epoch, b->buckets);
        w->slow += bw__window_count(sl, epoch, b->buckets);
      }
    }
  }
}

/* ---- transitions (tlock held) ----------------------------------------------
 */

static void bw__enter(bw_breaker_t *b, int64_t now, bw_state_t from,
                      bw_state_t to, uint64_t gen) {
  int64_t since =
      atomic_load_explicit(&b->state_since_ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&b->time_in_state_ns[from],
                            now > since ? now - since : 0,
                            memory_order_relaxed);
  atomic_store_explicit(&b->state_since_ns, now, memory_order_relaxed);
  atomic_store_explicit(&b->sw, BW__PACK(to, gen + 1), memory_order_release);
}

static void bw__flush_summary(bw_breaker_t *b, int64_t now, bw_state_t st) {
  pthread_mutex_lock(&b->slock);
  bw__summary_emit_locked(b, now, st);
  pthread_mutex_unlock(&b->slock);
}

void bw_breaker_emit_transition(bw_sink_t *sink, const bw_clock_t *wall,
                                const char *name, int64_t now,
                                bw_event_type_t type, const char *reason,
                                bw_state_t from, int64_t break_ms,
                                const bw_context_t *ctx) {
  bw_field_t f[2];
  size_t n = 0;
  if (sink == NULL) return;
  if (break_ms >= 0) {
    f[n] = bw_field_int("break_ms", break_ms);
    n++;
  }
  f[n] = bw_field_str("from", bw_state_name(from));
  n++;
  bw_event_emit(sink, wall, now, type, name, reason, f, n, ctx);
}

static void bw__emit_transition(bw_breaker_t *b, int64_t now,
                                bw_event_type_t type, const char *reason,
                                bw_state_t from, int64_t break_ms,
                                const bw_context_t *ctx) {
  bw_breaker_emit_transition(b->sink, b->wall, b->name, now, type, reason, from,
                             break_ms, ctx);
}

int64_t bw_breaker_break_after(int64_t base_ns, double multiplier,
                               uint64_t opens, int64_t cap_ns) {
  /* base * multiplier^(opens-1), capped; computed in double and capped
   * before converting so growth can never overflow. */
  double d = (double)base_ns * pow(multiplier, (double)(opens - 1));
  return d >= (double)cap_ns ? cap_ns : (int64_t)d;
}

static void bw__to_open(bw_breaker_t *b, uint64_t w, int64_t now,
                        const char *reason, const bw_context_t *ctx) {
  bw_state_t from = BW__ST(w);
  int64_t brk;
  b->consecutive_opens++;
  brk = bw_breaker_break_after(
      BW__LOAD(b->break_ns), BW__LOAD(b->break_multiplier),
      (uint64_t)b->consecutive_opens, BW__LOAD(b->max_break_ns));
  if (from != BW_CLOSED) bw__flush_summary(b, now, from);
  atomic_store_explicit(&b->current_break_ns, brk, memory_order_relaxed);
  atomic_store_explicit(&b->open_until_ns, now + brk, memory_order_relaxed);
  atomic_store_explicit(&b->ho_in_flight, 0, memory_order_relaxed);
  atomic_store_explicit(&b->summary_at_ns, now, memory_order_relaxed);
  BW__INC(b->opens);
  bw__enter(b, now, from, BW_OPEN, BW__GEN(w));
  bw__emit_transition(b, now, BW_EV_CIRCUIT_OPENED, reason, from,
                      brk / BW_NS_PER_MS, ctx);
}

static void bw__to_half_open(bw_breaker_t *b, uint64_t w, int64_t now) {
  char reason[64];
  int64_t brk =
      atomic_load_explicit(&b->current_break_ns, memory_order_relaxed);
  bw__flush_summary(b, now, BW__ST(w));
  atomic_store_explicit(&b->ho_in_flight, 0, memory_order_relaxed);
  atomic_store_explicit(&b->ho_successes, 0, memory_order_relaxed);
  b->ho_progress_ns = now;
  BW__INC(b->half_opens);
  bw__enter(b, now, BW__ST(w), BW_HALF_OPEN, BW__GEN(w));
  snprintf(reason, sizeof(reason), "break of %lld ms elapsed",
           (long long)(brk / BW_NS_PER_MS));
  bw__emit_transition(b, now, BW_EV_CIRCUIT_HALF_OPENED, reason, BW_OPEN, -1,
                      NULL);
}

/* Clears what a fresh CLOSED state must not inherit. */
static void bw__clear_for_close(bw_breaker_t *b) {
  bw__windows_clear(b);
  b->consecutive_opens = 0;
  atomic_store_explicit(&b->ho_in_flight, 0, memory_order_relaxed);
  atomic_store_explicit(&b->ho_successes, 0, memory_order_relaxed);
  atomic_store_explicit(&b->current_break_ns, BW__LOAD(b->break_ns),
                        memory_order_relaxed);
}

static void bw__to_closed(bw_breaker_t *b, uint64_t w, int64_t now,
                          const bw_context_t *ctx) {
  char reason[96];
  uint32_t n = atomic_load_explicit(&b->ho_successes, memory_order_relaxed);
  bw__flush_summary(b, now, BW__ST(w));
  bw__clear_for_close(b);
  BW__INC(b->closes);
  bw__enter(b, now, BW__ST(w), BW_CLOSED, BW__GEN(w));
  snprintf(reason, sizeof(reason), "%u probe successes (success_threshold %u)",
           n, BW__LOAD(b->success_threshold));
  bw__emit_transition(b, now, BW_EV_CIRCUIT_CLOSED, reason, BW_HALF_OPEN, -1,
                      ctx);
}

/* Opens from CLOSED if the state is still the one the caller saw. */
static void bw__trip(bw_breaker_t *b, uint64_t w, const char *reason,
                     const bw_context_t *ctx) {
  pthread_mutex_lock(&b->tlock);
  /* The release path may not have read the clock (the consecutive rule needs
   * no time); the break starts now, read under the lock. */
  if (atomic_load_explicit(&b->sw, memory_order_acquire) == w)
    bw__to_open(b, w, bw__clock_now(b->clock), reason, ctx);
  pthread_mutex_unlock(&b->tlock);
}

static void bw__check_trip(bw_breaker_t *b, uint64_t w, bw__window_t win,
                           const bw_context_t *ctx) {
  char reason[160];
  char span[72];
  double fr, sr;
  if (win.calls < BW__LOAD(b->minimum_calls) || win.calls == 0) return;
  fr = (double)win.failures / (double)win.calls;
  sr = (double)win.slow / (double)win.calls;
  if (b->rule == BW_TRIP_COUNT_WINDOW)
    snprintf(span, sizeof(span), "over the last %llu calls",
             (unsigned long long)win.calls);
  else
    snprintf(span, sizeof(span), "over %lld ms (%llu calls)",
             (long long)(b->window_ns / BW_NS_PER_MS),
             (unsigned long long)win.calls);
  if (win.failures > 0 && fr >= BW__LOAD(b->failure_ratio)) {
    snprintf(reason, sizeof(reason), "failure ratio %.2f >= %.2f %s", fr,
             BW__LOAD(b->failure_ratio), span);
    bw__trip(b, w, reason, ctx);
  } else if (BW__LOAD(b->slow_ns) > 0 && win.slow > 0 &&
             sr >= BW__LOAD(b->slow_ratio)) {
    snprintf(reason, sizeof(reason), "slow call ratio %.2f >= %.2f %s", sr,
             BW__LOAD(b->slow_ratio), span);
    bw__trip(b, w, reason, ctx);
  }
}

/* ---- acquire
 * ----------------------------------------------------------------- */

static int bw__reject(bw_breaker_t *b, bw_permit_t *p, uint64_t w,
                      int64_t now) {
  unsigned si = bw__stripe();
  bw__stripe_t *s = &b->stripes[si];
  if (atomic_load_explicit(&b->metrics_only, memory_order_relaxed)) {
    bw__bump(&s->shadow, si);
    bw__bump(&s->admitted, si);
    bw_permit_init(p, now, BW_PERMIT_PASSTHROUGH);
    p->generation = BW__GEN(w);
    return BW_OK;
  }
  bw__bump(&s->rejected, si);
  bw__summary_maybe(b, now, BW__ST(w));
  return BW_E_OPEN;
}

/* Stuck: every probe slot taken and no probe admitted or released for the
 * guard's time. While a slot is free the breaker can still make progress (the
 * next caller becomes a probe), so it is not stuck. */
static bool bw__stuck(const bw_breaker_t *b, int64_t now) {
  return atomic_load_explicit(&b->ho_in_flight, memory_order_relaxed) >=
             BW__LOAD(b->half_open_max) &&
         now - b->ho_progress_ns >= BW__LOAD(b->ho_timeout_ns);
}

static void bw__open_stuck(bw_breaker_t *b, uint64_t w, int64_t now) {
  char reason[80];
  snprintf(reason, sizeof(reason), "half-open probes stuck for %lld ms",
           (long long)(BW__LOAD(b->ho_timeout_ns) / BW_NS_PER_MS));
  bw__to_open(b, w, now, reason, NULL);
}

static int bw__acquire_slow(bw_breaker_t *b, bw_permit_t *p, uint64_t w) {
  int64_t now = bw__clock_now(b->clock);
  for (;;) {
    switch (BW__ST(w)) {
    case BW_CLOSED:
    case BW_DISABLED:
      bw__admit(b);
      bw_permit_init(p, now, BW_PERMIT_NORMAL);
      p->generation = BW__GEN(w);
      return BW_OK;
    case BW_OPEN:
      if (now < atomic_load_explicit(&b->open_until_ns, memory_order_relaxed))
        return bw__reject(b, p, w, now);
      pthread_mutex_lock(&b->tlock);
      if (atomic_load_explicit(&b->sw, memory_order_acquire) == w)
        bw__to_half_open(b, w, now);
      pthread_mutex_unlock(&b->tlock);
      break;
    case BW_HALF_OPEN: {
      bool admitted = false;
      pthread_mutex_lock(&b->tlock);
      if (atomic_load_explicit(&b->sw, memory_order_acquire) == w) {
        uint32_t n =
            atomic_load_explicit(&b->ho_in_flight, memory_order_relaxed);
        if (n < BW__LOAD(b->half_open_max)) {
          atomic_store_explicit(&b->ho_in_flight, n + 1, memory_order_relaxed);
          b->ho_progress_ns = now;
          admitted = true;
        } else if (bw__stuck(b, now)) {
          bw__open_stuck(b, w, now);
        } else {
          pthread_mutex_unlock(&b->tlock);
          return bw__reject(b, p, w, now);
        }
      }
      pthread_mutex_unlock(&b->tlock);
      if (admitted) {
        bw__admit(b);
        bw_permit_init(p, now, BW_PERMIT_PROBE);
        p->generation = BW__GEN(w);
        return BW_OK;
      }
      break;
    }
    case BW_ISOLATED:
    default:
      return bw__reject(b, p, w, now);
    }
    w = atomic_load_explicit(&b->sw, memory_order_acquire);
  }
}

static BW__COLD void bw__listen_acquire(const bw_breaker_t *b, int rc) {
  b->listener(b, rc == BW_OK ? BW_CALL_ADMITTED : BW_CALL_REJECTED, rc,
              BW_SUCCESS, b->listener_ud);
}

/* The slow path and then the listener: a call, so that the hot paths keep
 * their tail call and their frame. */
static BW__NOINLINE int bw__acquire_slow_heard(bw_breaker_t *b, bw_permit_t *p,
                                               uint64_t w) {
  int rc = bw__acquire_slow(b, p, w);
  if (BW__UNLIKELY(b->listener != NULL)) bw__listen_acquire(b, rc);
  return rc;
}

int bw_breaker_acquire(bw_breaker_t *b, bw_permit_t *p) {
  if (BW__UNLIKELY((b == NULL) | (p == NULL))) return BW_E_INVAL;
  uint64_t w = atomic_load_explicit(&b->sw, memory_order_acquire);
  bw_state_t st = BW__ST(w);
  /* The hot path: CLOSED (or DISABLED) admits with one striped increment,
   * and reads the clock only when slow-call detection needs a start time. */
  if (BW__LIKELY(st == BW_CLOSED || st == BW_DISABLED)) {
    bw__admit(b);
    bw_permit_init(p, BW__LOAD(b->slow_ns) > 0 ? bw__clock_now(b->clock) : 0,
                   BW_PERMIT_NORMAL);
    p->generation = BW__GEN(w);
    if (BW__UNLIKELY(b->listener != NULL)) bw__listen_acquire(b, BW_OK);
    return BW_OK;
  }
  /* The other hot path: rejecting while OPEN costs one clock read and one
   * striped increment. */
  if (st == BW_OPEN) {
    int64_t now = bw__clock_now(b->clock);
    if (now < atomic_load_explicit(&b->open_until_ns, memory_order_relaxed) &&
        !atomic_load_explicit(&b->metrics_only, memory_order_relaxed)) {
      unsigned si = bw__stripe();
      bw__bump(&b->stripes[si].rejected, si);
      if (BW__UNLIKELY(now - atomic_load_explicit(&b->summary_at_ns,
                                                  memory_order_relaxed) >=
                       BW__SUMMARY_NS))
        bw__summary_maybe(b, now, BW_OPEN);
      if (BW__UNLIKELY(b->listener != NULL)) bw__listen_acquire(b, BW_E_OPEN);
      return BW_E_OPEN;
    }
  }
  return bw__acquire_slow_heard(b, p, w);
}

/* ---- release
 * ----------------------------------------------------------------- */

static void bw__closed_record(bw_breaker_t *b, uint64_t w, bw_outcome_t o,
                              bool slow, int64_t now, const bw_context_t *ctx) {
  bool fail = o == BW_FAILURE;
  switch (b->rule) {
  case BW_TRIP_CONSECUTIVE:
    if (!fail) {
      if (BW__LOAD(b->consec) != 0)
        atomic_store_explicit(&b->consec, 0, memory_order_relaxed);
    } else {
      uint32_t n =
          atomic_fetch_add_explicit(&b->consec, 1, memory_order_relaxed) + 1;
      if (n >= BW__LOAD(b->failure_threshold)) {
        char reason[96];
        snprintf(reason, sizeof(reason),
                 "%u consecutive failures (failure_threshold %u)", n,
                 BW__LOAD(b->failure_threshold));
        bw__trip(b, w, reason, ctx);
      }
    }
    return;
  case BW_TRIP_COUNT_WINDOW: {
    unsigned si = bw__stripe();
    bw__window_t win = {0, 0, 0};
    bw__bump(&b->stripes[si].wcalls, si);
    if (!fail && !slow) return; /* a success never opens */
    pthread_mutex_lock(&b->wlock);
    {
      uint64_t g = bw__position(b);
      if (fail) bw__posq_push(&b->fq, b->window_size, g);
      if (slow) bw__posq_push(&b->sq, b->window_size, g);
      bw__count_window_locked(b, g, &win);
    }
    pthread_mutex_unlock(&b->wlock);
    bw__check_trip(b, w, win, ctx);
    return;
  }
  case BW_TRIP_TIME_WINDOW: {
    int64_t cur = bw__floor_div(now, b->bucket_ns);
    uint32_t epoch = (uint32_t)cur;
    uint32_t j = (uint32_t)((uint64_t)cur % b->buckets);
    unsigned si = bw__stripe();
    _Atomic uint64_t *stripe = b->tw + (size_t)si * b->tw_stride;
    _Atomic uint64_t *base = stripe + 1 + (size_t)j * 3;
    int64_t last = (int64_t)BW__LOAD(stripe[0]);
    if (BW__UNLIKELY(last != cur)) {
      /* First outcome of this stripe in a new bucket: after a gap of a
       * whole window, no bucket older than the window may survive. */
      if (cur - last >= (int64_t)b->buckets)
        bw__window_wipe(stripe + 1, (size_t)b->buckets * 3, epoch, si);
      atomic_store_explicit(&stripe[0], (uint64_t)cur, memory_order_relaxed);
    }
    /* An owner's plain store may overwrite a clear made meanwhile (the
     * window is cleared only under tlock, at a close): the outcome it keeps
     * belongs to the old generation anyway. */
    bw__window_bump(&base[0], epoch, si);
    if (fail) bw__window_bump(&base[1], epoch, si);
    if (slow) bw__window_bump(&base[2], epoch, si);
    break;
  }
  }
  if (fail || slow) {
    bw__window_t win;
    bw__window_read(b, now, &win);
    bw__check_trip(b, w, win, ctx);
  }
}

static int bw__probe_release(bw_breaker_t *b, uint64_t w, bw_outcome_t o,
                             bool slow, int64_t now, int64_t took_ns,
                             const bw_context_t *ctx) {
  int rc = BW_OK;
  pthread_mutex_lock(&b->tlock);
  w = atomic_load_explicit(&b->sw, memory_order_acquire);
  if (BW__ST(w) != BW_HALF_OPEN) {
    rc = BW_E_STALE; /* moved on (reset, isolate, stuck guard) meanwhile */
  } else {
    uint32_t n = atomic_load_explicit(&b->ho_in_flight, memory_order_relaxed);
    if (n > 0)
      atomic_store_explicit(&b->ho_in_flight, n - 1, memory_order_relaxed);
    b->ho_progress_ns = now;
    if (o == BW_FAILURE) {
      bw__to_open(b, w, now, "probe failed in half-open", ctx);
    } else if (o == BW_SUCCESS && slow) {
      char reason[96];
      snprintf(reason, sizeof(reason),
               "probe slow in half-open (%lld ms >= slow_call_ms %lld)",
               (long long)(took_ns / BW_NS_PER_MS),
               (long long)(BW__LOAD(b->slow_ns) / BW_NS_PER_MS));
      bw__to_open(b, w, now, reason, ctx);
    } else if (o == BW_SUCCESS) {
      uint32_t ok =
          atomic_load_explicit(&b->ho_successes, memory_order_relaxed) + 1;
      atomic_store_explicit(&b->ho_successes, ok, memory_order_relaxed);
      if (ok >= BW__LOAD(b->success_threshold)) bw__to_closed(b, w, now, ctx);
    }
  }
  pthread_mutex_unlock(&b->tlock);
  return rc;
}

static inline __attribute__((always_inline)) int bw__release(
    bw_breaker_t *b, const bw_permit_t *p, bw_outcome_t outcome) {
  bw__stripe_t *s;
  unsigned si;
  uint64_t w;
  int64_t now = 0;
  bool slow = false;
  si = bw__stripe();
  s = &b->stripes[si];
  int64_t slow_ns = BW__LOAD(b->slow_ns);
  if (slow_ns > 0 || b->rule == BW_TRIP_TIME_WINDOW ||
      p->kind == BW_PERMIT_PROBE)
    now = bw__clock_now(b->clock);
  if (slow_ns > 0 && outcome != BW_IGNORED && now - p->start_ns >= slow_ns)
    slow = true;
  /* Totals first: every release counts exactly once, whatever it decides. */
  if (outcome == BW_SUCCESS)
    bw__bump(&s->successes, si);
  else if (outcome == BW_FAILURE)
    bw__bump(&s->failures, si);
  else
    bw__bump(&s->ignored, si);
  if (slow) bw__bump(&s->slow, si);
  w = atomic_load_explicit(&b->sw, memory_order_acquire);
  if (BW__UNLIKELY(BW__GEN(w) != p->generation)) {
    bw__bump(&s->stale, si);
    return BW_E_STALE;
  }
  if (p->kind == BW_PERMIT_PASSTHROUGH) return BW_OK;
  switch (BW__ST(w)) {
  case BW_CLOSED:
    if (outcome != BW_IGNORED)
      bw__closed_record(b, w, outcome, slow, now,
                        p->context ? p->context : NULL);
    return BW_OK;
  case BW_HALF_OPEN:
    if (p->kind == BW_PERMIT_PROBE) {
      int rc = bw__probe_release(b, w, outcome, slow, now, now - p->start_ns,
                                 p->context);
      if (rc == BW_E_STALE) bw__bump(&s->stale, si);
      return rc;
    }
    return BW_OK;
  default:
    return BW_OK; /* DISABLED: totals only */
  }
}

static BW__COLD void bw__listen_release(const bw_breaker_t *b, int rc,
                                        bw_outcome_t outcome) {
  b->listener(b, BW_CALL_RELEASED, rc, outcome, b->listener_ud);
}

int bw_breaker_release(bw_breaker_t *b, const bw_permit_t *p,
                       bw_outcome_t outcome) {
  int rc;
  if (BW__UNLIKELY((b == NULL) | (p == NULL))) return BW_E_INVAL;
  if ((unsigned)outcome > (unsigned)BW_IGNORED) return BW_E_INVAL;
  rc = bw__release(b, p, outcome);
  if (BW__UNLIKELY(b->listener != NULL)) bw__listen_release(b, rc, outcome);
  return rc;
}

/* ---- queries and operator controls
 * -------------------------------------------- */

bw_state_t bw_breaker_state(const bw_breaker_t *b) {
  if (b == NULL) return BW_CLOSED;
  return BW__ST(atomic_load_explicit(&b->sw, memory_order_acquire));
}

int64_t bw_breaker_retry_in_ms(const bw_breaker_t *b) {
  if (b == NULL) return 0;
  uint64_t w = atomic_load_explicit(&b->sw, memory_order_acquire);
  switch (BW__ST(w)) {
  case BW_OPEN:
    if (atomic_load_explicit(&b->metrics_only, memory_order_relaxed)) return 0;
    return bw_ns_to_ms_ceil(
        atomic_load_explicit(&b->open_until_ns, memory_order_relaxed) -
        bw__clock_now(b->clock));
  case BW_ISOLATED:
    return atomic_load_explicit(&b->metrics_only, memory_order_relaxed) ? 0
                                                                        : -1;
  default:
    return 0;
  }
}

void bw_breaker_poll(bw_breaker_t *b) {
  if (b == NULL) return;
  int64_t now = bw__clock_now(b->clock);
  uint64_t w = atomic_load_explicit(&b->sw, memory_order_acquire);
  if (BW__ST(w) != BW_OPEN && BW__ST(w) != BW_HALF_OPEN) return;
  pthread_mutex_lock(&b->tlock);
  if (atomic_load_explicit(&b->sw, memory_order_acquire) == w) {
    if (BW__ST(w) == BW_OPEN &&
        now >= atomic_load_explicit(&b->open_until_ns, memory_order_relaxed))
      bw__to_half_open(b, w, now);
    else if (BW__ST(w) == BW_HALF_OPEN && bw__stuck(b, now))
      bw__open_stuck(b, w, now);
  }
  pthread_mutex_unlock(&b->tlock);
}

static void bw__operator(bw_breaker_t *b, bw_state_t to, bw_event_type_t ev) {
  int64_t now = bw__clock_now(b->clock);
  uint64_t w;
  bw_state_t from;
  pthread_mutex_lock(&b->tlock);
  w = atomic_load_explicit(&b->sw, memory_order_acquire);
  from = BW__ST(w);
  if (from != BW_CLOSED && from != BW_DISABLED) bw__flush_summary(b, now, from);
  if (to == BW_CLOSED) bw__clear_for_close(b);
  if (to == BW_ISOLATED)
    atomic_store_explicit(&b->summary_at_ns, now, memory_order_relaxed);
  bw__enter(b, now, from, to, BW__GEN(w));
  bw__emit_transition(b, now, ev, "operator", from, -1, NULL);
  pthread_mutex_unlock(&b->tlock);
}

void bw_breaker_open_for(bw_breaker_t *b, int64_t remaining_ns,
                         const char *reason) {
  int64_t now;
  uint64_t w;
  bw_state_t from;
  if (b == NULL) return;
  if (remaining_ns < 0) remaining_ns = 0;
  pthread_mutex_lock(&b->tlock);
  now = bw__clock_now(b->clock);
  w = atomic_load_explicit(&b->sw, memory_order_acquire);
  from = BW__ST(w);
  if (from == BW_ISOLATED || from == BW_DISABLED) {
    pthread_mutex_unlock(&b->tlock);
    return;
  }
  if (from != BW_CLOSED) bw__flush_summary(b, now, from);
  b->consecutive_opens++;
  atomic_store_explicit(&b->current_break_ns, remaining_ns,
                        memory_order_relaxed);
  atomic_store_explicit(
      &b->open_until_ns,
      now > INT64_MAX - remaining_ns ? INT64_MAX : now + remaining_ns,
      memory_order_relaxed);
  atomic_store_explicit(&b->ho_in_flight, 0, memory_order_relaxed);
  atomic_store_explicit(&b->summary_at_ns, now, memory_order_relaxed);
  BW__INC(b->opens);
  bw__enter(b, now, from, BW_OPEN, BW__GEN(w));
  bw__emit_transition(
      b, now, BW_EV_CIRCUIT_OPENED,
      reason != NULL ? reason : "opened for a break set elsewhere", from,
      remaining_ns / BW_NS_PER_MS, NULL);
  pthread_mutex_unlock(&b->tlock);
}

void bw_breaker_isolate(bw_breaker_t *b) {
  if (b == NULL) return;
  bw__operator(b, BW_ISOLATED, BW_EV_CIRCUIT_ISOLATED);
}
void bw_breaker_reset(bw_breaker_t *b) {
  if (b == NULL) return;
  bw__operator(b, BW_CLOSED, BW_EV_CIRCUIT_RESET);
}
void bw_breaker_disable(bw_breaker_t *b) {
  if (b == NULL) return;
  bw__operator(b, BW_DISABLED, BW_EV_CIRCUIT_DISABLED);
}

void bw_breaker_config_of(const bw_breaker_t *b, bw_breaker_config_t *cfg) {
  if (b == NULL || cfg == NULL) return;
  bw_breaker_config_init(cfg);
  cfg->name = b->name;
  cfg->trip_rule = b->rule;
  cfg->failure_threshold = BW__LOAD(b->failure_threshold);
  cfg->failure_ratio = BW__LOAD(b->failure_ratio);
  cfg->window_size = b->window_size;
  cfg->window_ms = b->window_ns / BW_NS_PER_MS;
  cfg->window_buckets = b->buckets;
  cfg->minimum_calls = BW__LOAD(b->minimum_calls);
  cfg->slow_call_ms = BW__LOAD(b->slow_ns) / BW_NS_PER_MS;
  cfg->slow_call_ratio = BW__LOAD(b->slow_ratio);
  cfg->break_ms = BW__LOAD(b->break_ns) / BW_NS_PER_MS;
  cfg->break_multiplier = BW__LOAD(b->break_multiplier);
  cfg->max_break_ms = BW__LOAD(b->max_break_ms);
  cfg->half_open_max_calls = BW__LOAD(b->half_open_max);
  cfg->success_threshold = BW__LOAD(b->success_threshold);
  cfg->half_open_timeout_ms = BW__LOAD(b->ho_timeout_ns) / BW_NS_PER_MS;
  cfg->metrics_only = BW__LOAD(b->metrics_only);
  cfg->clock = b->clock;
  cfg->wall_clock = b->wall;
  cfg->sink = b->sink;
  cfg->listener = b->listener;
  cfg->listener_userdata = b->listener_ud;
}

int bw_breaker_reconfigure(bw_breaker_t *b, const bw_breaker_config_t *cfg,
                           bw_error_t *err) {
  int rc;
  if (b == NULL || cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, b == NULL ? "b" : "cfg",
                        "%s must not be NULL", b == NULL ? "b" : "cfg");
  if ((rc = bw_breaker_config_validate(cfg, err)) != BW_OK) return rc;
  /* What the breaker's memory was laid out for stays as it was made. */
  if (cfg->trip_rule != b->rule)
    return bw_error_set(err, BW_E_INVAL, "trip_rule",
                        "trip_rule is fixed at creation (%s; got %s)",
                        bw_trip_rule_name(b->rule),
                        bw_trip_rule_name(cfg->trip_rule));
  if (b->rule == BW_TRIP_COUNT_WINDOW && cfg->window_size != b->window_size)
    return bw_error_set(err, BW_E_INVAL, "window_size",
                        "window_size is fixed at creation (%u; got %u)",
                        b->window_size, cfg->window_size);
  if (b->rule == BW_TRIP_TIME_WINDOW &&
      (cfg->window_ms * BW_NS_PER_MS != b->window_ns ||
       cfg->window_buckets != b->buckets))
    return bw_error_set(
        err, BW_E_INVAL,
        cfg->window_buckets != b->buckets ? "window_buckets" : "window_ms",
        "window_ms and window_buckets are fixed at creation (%lld ms in %u; "
        "got %lld ms in %u)",
        (long long)(b->window_ns / BW_NS_PER_MS), b->buckets,
        (long long)cfg->window_ms, cfg->window_buckets);
  if ((cfg->slow_call_ms > 0) != (BW__LOAD(b->slow_ns) > 0))
    return bw_error_set(err, BW_E_INVAL, "slow_call_ms",
                        "slow_call_ms cannot be turned %s after creation "
                        "(only its threshold can change)",
                        cfg->slow_call_ms > 0 ? "on" : "off");
  /* One reconfigure at a time; decisions keep running meanwhile. */
  pthread_mutex_lock(&b->tlock);
  bw__set_thresholds(b, cfg);
  pthread_mutex_unlock(&b->tlock);
  bw_breaker_set_metrics_only(b, cfg->metrics_only);
  bw_error_clear(err);
  return BW_OK;
}

void bw_breaker_set_metrics_only(bw_breaker_t *b, bool on) {
  if (b == NULL) return;
  bool was =
      atomic_exchange_explicit(&b->metrics_only, on, memory_order_relaxed);
  if (was != on && b->sink != NULL) {
    bw_field_t f;
    int64_t now = bw__clock_now(b->clock);
    f = bw_field_bool("metrics_only", on);
    bw_event_emit(b->sink, b->wall, now, BW_EV_METRICS_ONLY_CHANGED, b->name,
                  "operator", &f, 1, NULL);
  }
}

void bw_breaker_stats(const bw_breaker_t *b, bw_breaker_stats_t *out) {
  if (out == NULL) return;
  if (b == NULL) {
    memset(out, 0, sizeof *out);
    return;
  }
  uint64_t w = atomic_load_explicit(&b->sw, memory_order_acquire);
  int64_t now = bw__clock_now(b->clock);
  bw__window_t win;
  memset(out, 0, sizeof(*out));
  out->state = BW__ST(w);
  out->generation = BW__GEN(w);
  out->metrics_only =
      atomic_load_explicit(&b->metrics_only, memory_order_relaxed);
  for (unsigned i = 0; i < BW__STRIPES; i++) {
    const bw__stripe_t *s = &b->stripes[i];
    out->admitted += BW__LOAD(s->admitted);
    out->rejected += BW__LOAD(s->rejected);
    out->shadow_rejected += BW__LOAD(s->shadow);
    out->successes += BW__LOAD(s->successes);
    out->failures += BW__LOAD(s->failures);
    out->ignored += BW__LOAD(s->ignored);
    out->slow += BW__LOAD(s->slow);
    out->stale += BW__LOAD(s->stale);
  }
  out->calls = out->successes + out->failures + out->ignored;
  out->consecutive_failures = BW__LOAD(b->consec);
  bw__window_read(b, now, &win);
  out->window_calls = win.calls;
  out->window_failures = win.failures;
  out->window_slow = win.slow;
  if (win.calls > 0) {
    out->window_failure_ratio = (double)win.failures / (double)win.calls;
    out->window_slow_ratio = (double)win.slow / (double)win.calls;
  }
  out->opens = BW__LOAD(b->opens);
  out->half_opens = BW__LOAD(b->half_opens);
  out->closes = BW__LOAD(b->closes);
  out->half_open_in_flight = BW__LOAD(b->ho_in_flight);
  out->retry_in_ms = bw_breaker_retry_in_ms(b);
  out->current_break_ms = BW__LOAD(b->current_break_ns) / BW_NS_PER_MS;
  for (int i = 0; i < BW_STATE__COUNT; i++) {
    int64_t t = BW__LOAD(b->time_in_state_ns[i]);
    if (i == (int)out->state) {
      int64_t since = BW__LOAD(b->state_since_ns);
      if (now > since) t += now - since;
    }
    out->time_in_state_ms[i] = t / BW_NS_PER_MS;
  }
}

/* ---- the breaker interface ------------------------------------------------
 */

static int bw__if_acquire(bw_breaker_if_t *i, bw_permit_t *p) {
  return bw_breaker_acquire((bw_breaker_t *)i, p);
}
static int bw__if_release(bw_breaker_if_t *i, const bw_permit_t *p,
                          bw_outcome_t o) {
  return bw_breaker_release((bw_breaker_t *)i, p, o);
}
static bw_state_t bw__if_state(const bw_breaker_if_t *i) {
  return bw_breaker_state((const bw_breaker_t *)i);
}
static int64_t bw__if_retry_in(const bw_breaker_if_t *i) {
  return bw_breaker_retry_in_ms((const bw_breaker_t *)i);
}
static const char *bw__if_name(const bw_breaker_if_t *i) {
  return bw_breaker_name((const bw_breaker_t *)i);
}
static void bw__if_free(bw_breaker_if_t *i) {
  bw_breaker_free((bw_breaker_t *)i);
}

const bw_breaker_vtable_t bw__breaker_vt = {
    "breaker",       bw__if_acquire, bw__if_release, bw__if_state,
    bw__if_retry_in, bw__if_name,    bw__if_free};

bw_breaker_if_t *bw_breaker_iface(bw_breaker_t *b) {
  return b == NULL ? NULL : &b->iface;
}

int bw_breaker_if_try_acquire(bw_breaker_if_t *b, bw_permit_t *p) {
  if (b == NULL || b->vt == NULL || p == NULL) return BW_E_INVAL;
  return b->vt->try_acquire(b, p);
}

int bw_breaker_if_release(bw_breaker_if_t *b, const bw_permit_t *p,
                          bw_outcome_t outcome) {
  if (b == NULL || b->vt == NULL || p == NULL) return BW_E_INVAL;
  if ((unsigned)outcome > (unsigned)BW_TIMED_OUT) return BW_E_INVAL;
  if (outcome == BW_TIMED_OUT) outcome = BW_FAILURE;
  return b->vt->release(b, p, outcome);
}

bw_state_t bw_breaker_if_state(const bw_breaker_if_t *b) {
  return b == NULL || b->vt == NULL ? BW_CLOSED : b->vt->state(b);
}

int64_t bw_breaker_if_retry_in_ms(const bw_breaker_if_t *b) {
  return b == NULL || b->vt == NULL ? 0 : b->vt->retry_in_ms(b);
}

const char *bw_breaker_if_name(const bw_breaker_if_t *b) {
  return b == NULL || b->vt == NULL ? "" : b->vt->name(b);
}

const char *bw_breaker_if_kind(const bw_breaker_if_t *b) {
  return b == NULL || b->vt == NULL ? "" : b->vt->kind;
}

void bw_breaker_if_free(bw_breaker_if_t *b) {
  if (b != NULL && b->vt != NULL) b->vt->free(b);
}

/* Retry: a shared immutable policy and a value-type iterator that decides,
 * after each attempt, whether and when to try again.
 *
 * Design:
 * - The policy is read-only after creation except one counter (the number of
 *   iterators begun with a configured seed), which sits on its own cache line
 *   so that bumping it never invalidates the configuration other threads read.
 * - bw_retry_next reads no clock, takes no lock and allocates nothing: time is
 *   its argument, the backoff curve is precomputed into a table at creation
 *   (so the no-jitter path costs a lookup, not a pow()), and the budget is
 *   asked only when a retry is about to be scheduled.
 * - Give-up checks run in one documented order (retry.h): the verdict, then
 *   the attempt and elapsed caps, idempotency, the server's hint, whether the
 *   delay ends in time, and the budget last, so that a retry refused for any
 *   other reason never spends budget.
 * - An iterator seeds its generator (a one-word SplitMix64 stream) lazily, at
 *   its first draw (from the configured seed and the policy's stream
 *   counter, or from the OS): most logical calls succeed at once and never
 *   need it, and then begin touches no shared cache line and reads no
 *   /dev/urandom.
 * - Decorrelated jitter is Polly's formula, evaluated with libm: dearer
 *   than a table lookup, but it only ever precedes a wait of hundreds of
 *   milliseconds. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Durations in ms must fit in ns (with room for sums) without overflow. */
#define BW__MAX_MS (INT64_MAX / BW_NS_PER_MS / 4)
/* Entries of the precomputed backoff curve; past them the curve is either
 * already at max_ms (it never decreases) or computed on the spot. */
#define BW__TABLE 64u
/* bw_retry_t.giveup once the verdict was OK: "done", which is no give-up. */
#define BW__DONE UINT32_MAX
/* Polly's DecorrelatedJitterBackoffV2 constants: P smooths the first delay;
 * 1/1.4 scales the medians near base_ms, 2*base_ms, 4*base_ms ... */
#define BW__DJ_P 4.0
#define BW__DJ_SCALE (1.0 / 1.4)

struct bw_retry_policy_s {
  char *name;
  uint32_t max_attempts; /* 0 = no cap */
  bool stop_before;
  bool idempotent;
  bool honor_retry_after;
  bw_backoff_t backoff;
  bw_jitter_t jitter;
  int64_t max_elapsed_ns; /* 0 = no limit */
  int64_t base_ms;
  int64_t min_ms;
  int64_t max_ms;
  int64_t jitter_ms;
  double dj_base; /* base_ms and max_ms as doubles, for the decorrelated */
  double dj_max;  /* delay */
  double multiplier;
  bw_budget_t *budget;
  bw_sink_t *sink;
  const bw_clock_t *wall;
  uint64_t seed;
  uint32_t table_len;
  bool table_capped;        /* the last table entry is max_ms */
  int64_t table[BW__TABLE]; /* the clamped curve: table[n-1] for retry n */

  /* The one written field: iterators begun so far (seeded policies). */
  BW__PAIR_ALIGNED _Atomic uint64_t streams;
};

/* ---- names ---------------------------------------------------------------
 */

const char *bw_verdict_name(bw_verdict_t v) {
  switch (v) {
  case BW_VERDICT_OK:
    return "ok";
  case BW_VERDICT_TRANSIENT:
    return "transient";
  case BW_VERDICT_NOT_SENT:
    return "not_sent";
  case BW_VERDICT_PERMANENT:
    return "permanent";
  case BW_VERDICT_REJECTED:
    return "rejected";
  default:
    return "unknown";
  }
}

const char *bw_giveup_name(bw_giveup_t g) {
  switch (g) {
  case BW_GIVEUP_NONE:
    return "none";
  case BW_GIVEUP_EXHAUSTED:
    return "exhausted";
  case BW_GIVEUP_ELAPSED:
    return "elapsed";
  case BW_GIVEUP_PERMANENT:
    return "permanent";
  case BW_GIVEUP_REJECTED:
    return "rejected";
  case BW_GIVEUP_NOT_IDEMPOTENT:
    return "not_idempotent";
  case BW_GIVEUP_BUDGET:
    return "budget";
  case BW_GIVEUP_DEADLINE:
    return "deadline";
  case BW_GIVEUP_RETRY_AFTER_TOO_LONG:
    return "retry_after_too_long";
  case BW_GIVEUP_PUSHBACK:
    return "pushback";
  default:
    return "unknown";
  }
}

static const char *bw__backoff_name(bw_backoff_t b) {
  switch (b) {
  case BW_BACKOFF_CONSTANT:
    return "constant";
  case BW_BACKOFF_LINEAR:
    return "linear";
  case BW_BACKOFF_EXPONENTIAL:
    return "exponential";
  default:
    return "unknown";
  }
}

/* ---- configuration ---------------------------------------------------------
 */

void bw_retry_config_init(bw_retry_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "retry";
  cfg->max_attempts = 3;
  cfg->max_elapsed_ms = 0;
  cfg->stop_before = false;
  cfg->backoff = BW_BACKOFF_EXPONENTIAL;
  cfg->base_ms = 200;
  cfg->multiplier = 2.0;
  cfg->min_ms = 0;
  cfg->max_ms = 30000;
  cfg->jitter = BW_JITTER_FULL;
  cfg->jitter_ms = 1000;
  cfg->idempotent = true;
  cfg->honor_retry_after = true;
  cfg->budget = NULL;
  cfg->seed = 0;
  cfg->sink = NULL;
  cfg->wall_clock = NULL;
}

typedef struct bw__preset_s {
  const char *name;
  uint32_t max_attempts;
  int64_t base_ms;
  int64_t min_ms;
  int64_t max_ms;
  bw_jitter_t jitter;
} bw__preset_t;

/* All exponential x2 over the defaults. The asyncio toolkit computes
 * min(base * 2^k, 30 s) with full jitter for k = 0, 1, ...; the tenacity
 * article is tenacity's wait_exponential(multiplier, min, max), whose first
 * wait is `multiplier` seconds; the Polly lab is Polly v8's exponential backoff
 * with UseJitter, i.e. DecorrelatedJitterBackoffV2, MaxRetryAttempts 2. */
static const bw__preset_t bw__presets[] = {
    {"agents", 3, 1000, 0, 30000, BW_JITTER_FULL},
    {"agents.hotel_api", 3, 1000, 0, 30000, BW_JITTER_FULL},
    {"agents.payment_api", 2, 2000, 0, 30000, BW_JITTER_FULL},
    {"agents.search_agent", 4, 500, 0, 30000, BW_JITTER_FULL},
    {"tenacity", 3, 500, 500, 4000, BW_JITTER_NONE},
    {"tenacity.inner", 2, 300, 300, 2000, BW_JITTER_NONE},
    {"polly-lab", 3, 200, 0, 1500, BW_JITTER_DECORRELATED},
};

int bw_retry_config_preset(bw_retry_config_t *cfg, const char *preset) {
  size_t i;
  if (cfg == NULL || preset == NULL) return BW_E_INVAL;
  for (i = 0; i < sizeof(bw__presets) / sizeof(bw__presets[0]); i++) {
    const bw__preset_t *s = &bw__presets[i];
    if (strcmp(s->name, preset) != 0) continue;
    bw_retry_config_init(cfg);
    cfg->name = s->name; /* static: outlives any config */
    cfg->max_attempts = s->max_attempts;
    cfg->backoff = BW_BACKOFF_EXPONENTIAL;
    cfg->multiplier = 2.0;
    cfg->base_ms = s->base_ms;
    cfg->min_ms = s->min_ms;
    cfg->max_ms = s->max_ms;
    cfg->jitter = s->jitter;
    return BW_OK;
  }
  return BW_E_NOTFOUND; /* cfg untouched */
}

int bw_retry_config_validate(const bw_retry_config_t *c, bw_error_t *err) {
  int64_t floor_ms;
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (c->max_elapsed_ms < 0 || c->max_elapsed_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "max_elapsed_ms",
                        "max_elapsed_ms must be 0 (no limit) or in 1..%lld "
                        "(got %lld)",
                        (long long)BW__MAX_MS, (long long)c->max_elapsed_ms);
  if (c->max_attempts == 0 && c->max_elapsed_ms == 0)
    return bw_error_set(err, BW_E_INVAL, "max_attempts",
                        "max_attempts must be >= 1 unless max_elapsed_ms > 0 "
                        "(got 0 with max_elapsed_ms 0: nothing would ever "
                        "stop the retries)");
  if (c->stop_before && c->max_elapsed_ms == 0)
    return bw_error_set(err, BW_E_INVAL, "stop_before",
                        "stop_before needs max_elapsed_ms > 0 (it refuses "
                        "delays that would end past max_elapsed_ms)");
  if ((unsigned)c->backoff > (unsigned)BW_BACKOFF_EXPONENTIAL)
    return bw_error_set(err, BW_E_INVAL, "backoff",
                        "backoff must be constant, linear or exponential "
                        "(got %d)",
                        (int)c->backoff);
  /* 0 is the storm pattern (retry at once): expressible, so the lab can
   * show what it does, but only on a constant curve, where it means exactly
   * that. */
  if (c->base_ms < (c->backoff == BW_BACKOFF_CONSTANT ? 0 : 1) ||
      c->base_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "base_ms",
                        "base_ms must be in 1..%lld (0 only with backoff "
                        "constant: immediate retries) (got %lld)",
                        (long long)BW__MAX_MS, (long long)c->base_ms);
  if (!(c->multiplier >= 1.0) || !isfinite(c->multiplier))
    return bw_error_set(err, BW_E_INVAL, "multiplier",
                        "multiplier must be a finite number >= 1 (got %g)",
                        c->multiplier);
  if (c->min_ms < 0 || c->min_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "min_ms",
                        "min_ms must be in 0..%lld (got %lld)",
                        (long long)BW__MAX_MS, (long long)c->min_ms);
  floor_ms = c->base_ms > c->min_ms ? c->base_ms : c->min_ms;
  if (c->max_ms < floor_ms || c->max_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "max_ms",
                        "max_ms must be >= max(base_ms, min_ms) = %lld and "
                        "<= %lld (got %lld)",
                        (long long)floor_ms, (long long)BW__MAX_MS,
                        (long long)c->max_ms);
  if ((unsigned)c->jitter > (unsigned)BW_JITTER_ADDITIVE)
    return bw_error_set(err, BW_E_INVAL, "jitter",
                        "jitter must be none, full, equal, decorrelated or "
                        "additive (got %d)",
                        (int)c->jitter);
  if (c->jitter_ms < 0 || c->jitter_ms > BW__MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "jitter_ms",
                        "jitter_ms must be in 0..%lld (got %lld)",
                        (long long)BW__MAX_MS, (long long)c->jitter_ms);
  if (c->jitter == BW_JITTER_DECORRELATED &&
      c->backoff != BW_BACKOFF_EXPONENTIAL)
    return bw_error_set(err, BW_E_INVAL, "jitter",
                        "jitter decorrelated replaces an exponential curve: "
                        "it needs backoff exponential (got %s)",
                        bw__backoff_name(c->backoff));
  /* The decorrelated curve doubles per retry by construction; accepting
   * another multiplier would silently ignore it. */
  if (c->jitter == BW_JITTER_DECORRELATED && c->multiplier != 2.0)
    return bw_error_set(err, BW_E_INVAL, "multiplier",
                        "multiplier must be 2 with jitter decorrelated (its "
                        "curve doubles per retry; got %g)",
                        c->multiplier);
  bw_error_clear(err);
  return BW_OK;
}

/* ---- the backoff curve -----------------------------------------------------
 */

/* The n-th retry's delay before jitter, in [min_ms, max_ms]. Computed in
 * double and compared with max_ms before converting, so growth can never
 * overflow; rounded to the nearest ms. */
static int64_t bw__curve_compute(const bw_retry_policy_t *p, uint32_t n) {
  double raw, max = (double)p->max_ms;
  int64_t d;
  switch (p->backoff) {
  case BW_BACKOFF_LINEAR:
    raw = (double)p->base_ms * (double)n;
    break;
  case BW_BACKOFF_EXPONENTIAL:
    raw = (double)p->base_ms * pow(p->multiplier, (double)n - 1.0);
    break;
  case BW_BACKOFF_CONSTANT:
  default:
    raw = (double)p->base_ms;
    break;
  }
  if (!(raw < max)) return p->max_ms; /* NaN-proof: inf*0 cannot occur */
  d = (int64_t)floor(raw + 0.5);
  if (d > p->max_ms) d = p->max_ms;
  return d < p->min_ms ? p->min_ms : d;
}

static inline int64_t bw__curve(const bw_retry_policy_t *p, uint32_t n) {
  if (BW__LIKELY(n <= p->table_len)) return p->table[n - 1];
  if (p->table_capped) return p->max_ms; /* the curve never decreases */
  return bw__curve_compute(p, n);
}

/* Polly v8's DecorrelatedJitterBackoffV2 (the formula credited to George
 * Polevoy): t = attempt - 1 + U[0,1), f(t) = 2^t * tanh(sqrt(P * t)); the
 * delay is (f(t) - f(previous t)) / 1.4 * base_ms. Because t of retry n lies
 * in [n-1, n) and f increases, each delay is positive, the sum of the first
 * n delays grows like base_ms * 2^n / 1.4, and consecutive delays are not
 * correlated the way "previous * 3" jitter is. *prev carries f between
 * retries, uncapped (the cap applies to the delay only, as in Polly). The
 * draw m is 53 random bits: U = m / 2^53, as bw_rand_double gives. Past
 * t = 1024, f overflows a double and the delay is the cap. */
static int64_t bw__decorrelated(const bw_retry_policy_t *p, uint32_t n,
                                uint64_t m, double *prev) {
  double t = (double)(n - 1) + (double)m * 0x1.0p-53;
  double next = exp2(t) * tanh(sqrt(BW__DJ_P * t));
  double before = prev != NULL ? *prev : 0.0;
  double v;
  int64_t d;
  if (prev != NULL) *prev = next;
  v = (next - before) * BW__DJ_SCALE * p->dj_base;
  if (!isfinite(next) || isnan(v) || v >= p->dj_max) return p->max_ms;
  d = v > 0 ? (int64_t)floor(v + 0.5) : 0; /* nearest ms, halves up */
  return d < p->min_ms ? p->min_ms : d;
}

/* The jittered delay of retry n (n >= 1), drawing 64 random bits with
 * next(ctx) and a uniform integer in [lo, hi] with range(ctx, lo, hi): from
 * a caller's generator (bw__delay) or the iterator's own stream
 * (bw__delay_it). Always inlined with constant functions, so each caller
 * draws directly. */
typedef uint64_t (*bw__next_fn)(void *ctx);
typedef int64_t (*bw__range_fn)(void *ctx, int64_t lo, int64_t hi);
__attribute__((always_inline)) static inline int64_t bw__jittered(
    const bw_retry_policy_t *p, uint32_t n, bw__next_fn next,
    bw__range_fn range, void *ctx, double *dj_prev) {
  int64_t d, v;
  if (p->jitter == BW_JITTER_DECORRELATED)
    return bw__decorrelated(p, n, next(ctx) >> 11, dj_prev);
  d = bw__curve(p, n);
  switch (p->jitter) {
  case BW_JITTER_FULL:
    /* Uniform in [min_ms, d] (tenacity's wait_random_exponential): drawing
     * below min_ms and clamping would pile the draws up at min_ms. */
    return range(ctx, p->min_ms, d);
  case BW_JITTER_EQUAL:
    v = d / 2 < p->min_ms ? p->min_ms : d / 2;
    return range(ctx, v, d);
  case BW_JITTER_ADDITIVE:
    v = d + range(ctx, 0, p->jitter_ms);
    return v > p->max_ms ? p->max_ms : v;
  case BW_JITTER_NONE:
  default:
    return d;
  }
}

static uint64_t bw__rng_next(void *rng) {
  return bw_rand_next(rng);
}
static int64_t bw__rng_range(void *rng, int64_t lo, int64_t hi) {
  return bw_rand_range(rng, lo, hi);
}

/* The jittered delay of retry n (n >= 1) from a caller's generator (the
 * public bw_retry_delay_ms). rng must be usable unless the jitter is NONE. */
static int64_t bw__delay(const bw_retry_policy_t *p, uint32_t n, bw_rand_t *rng,
                         double *dj_prev) {
  return bw__jittered(p, n, bw__rng_next, bw__rng_range, rng, dj_prev);
}

int64_t bw_retry_delay_ms(const bw_retry_policy_t *p, uint32_t n,
                          bw_rand_t *rng, double *dj_prev) {
  if (p == NULL || n == 0) return BW_E_INVAL;
  if (rng == NULL && p->jitter != BW_JITTER_NONE) return BW_E_INVAL;
  return bw__delay(p, n, rng, dj_prev);
}

int bw_retry_delay_ms_ex(const bw_retry_policy_t *p, uint32_t n, bw_rand_t *rng,
                         double *dj_prev, int64_t *out_ms) {
  if (out_ms == NULL) return BW_E_INVAL;
  int64_t d = bw_retry_delay_ms(p, n, rng, dj_prev);
  if (d < 0) return (int)d;
  *out_ms = d;
  return BW_OK;
}

/* ---- policy ----------------------------------------------------------------
 */

bw_retry_policy_t *bw_retry_policy_new(const bw_retry_config_t *cfg,
                                       bw_error_t *err) {
  bw_retry_policy_t *p;
  uint32_t i;
  if (bw_retry_config_validate(cfg, err) != BW_OK) return NULL;
  p = bw_calloc_aligned(sizeof(*p));
  if (p == NULL) goto nomem;
  p->name = bw_strdup(cfg->name);
  if (p->name == NULL) goto nomem;
  p->max_attempts = cfg->max_attempts;
  p->stop_before = cfg->stop_before;
  p->idempotent = cfg->idempotent;
  p->honor_retry_after = cfg->honor_retry_after;
  p->backoff = cfg->backoff;
  p->jitter = cfg->jitter;
  p->max_elapsed_ns = cfg->max_elapsed_ms * BW_NS_PER_MS;
  p->base_ms = cfg->base_ms;
  p->min_ms = cfg->min_ms;
  p->max_ms = cfg->max_ms;
  p->dj_base = (double)cfg->base_ms;
  p->dj_max = (double)cfg->max_ms;
  p->jitter_ms = cfg->jitter_ms;
  p->multiplier = cfg->multiplier;
  p->budget = cfg->budget;
  p->sink = cfg->sink;
  p->wall = cfg->wall_clock ? cfg->wall_clock : bw_clock_realtime();
  p->seed = cfg->seed;
  /* Only as many retries as can happen need a table entry. */
  p->table_len = BW__TABLE;
  if (p->max_attempts != 0 && p->max_attempts - 1 < p->table_len)
    p->table_len = p->max_attempts - 1;
  for (i = 0; i < p->table_len; i++) {
    p->table[i] = bw__curve_compute(p, i + 1);
    if (p->table[i] == p->max_ms) {
      p->table_len = i + 1;
      p->table_capped = true;
      break;
    }
  }
  atomic_init(&p->streams, 0);
  bw_error_clear(err);
  return p;
nomem:
  if (p != NULL) bw_free_aligned(p);
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating retry policy '%s'",
               cfg->name);
  return NULL;
}

void bw_retry_policy_free(bw_retry_policy_t *p) {
  if (p == NULL) return;
  bw_free(p->name);
  bw_free_aligned(p);
}

const char *bw_retry_policy_name(const bw_retry_policy_t *p) {
  return p != NULL ? p->name : "";
}

/* ---- the iterator ----------------------------------------------------------
 */

/* Murmur3's 64-bit finaliser: a bijection that spreads every input bit over
 * the output, so nearby (seed, counter) pairs give unrelated streams. */
static uint64_t bw__fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  x ^= x >> 33;
  return x;
}

/* Seeds an iterator's generator: from the policy's seed and its stream
 * counter, or from the OS. */
/* Unseeded policies draw each iterator's seed from a per-thread generator
 * seeded once from the OS: reading /dev/urandom for every failing call would
 * cost three system calls. A fork copies that generator, and pre-fork
 * workers that retried in lock-step would defeat jitter, so a fork handler
 * bumps a generation that makes every thread reseed. */
static _Thread_local bw_rand_t bw__thread_rng;
static _Thread_local unsigned bw__thread_rng_gen = 0; /* 0: never seeded */
static atomic_uint bw__fork_gen = 1;
static pthread_once_t bw__atfork_once = PTHREAD_ONCE_INIT;

static void bw__after_fork_child(void) {
  atomic_fetch_add_explicit(&bw__fork_gen, 1, memory_order_relaxed);
}

static void bw__register_atfork(void) {
  /* If registration fails, children keep the parent's stream until they
   * reseed for another reason; nothing else depends on it. */
  (void)pthread_atfork(NULL, NULL, bw__after_fork_child);
}

static uint64_t bw__fresh_seed(void) {
  unsigned gen;
  pthread_once(&bw__atfork_once, bw__register_atfork);
  gen = atomic_load_explicit(&bw__fork_gen, memory_order_relaxed);
  if (BW__UNLIKELY(bw__thread_rng_gen != gen)) {
    bw_rand_seed(&bw__thread_rng, bw_rand_os_seed());
    bw__thread_rng_gen = gen;
  }
  return bw_rand_next(&bw__thread_rng);
}

/* The iterator's generator is a SplitMix64 stream (Steele, Lea & Flood's
 * published algorithm, written from its description), not a xoshiro256**
 * state: an iterator draws a handful of numbers in its life, and seeding a
 * SplitMix64 stream costs one word where xoshiro needs four splitmix
 * outputs. It lives in the iterator's bw_rand_t (kept for the ABI):
 * rng.s[0] is the stream's state, rng.s[1] is 1 once seeded (0: not yet).
 * Streams of one policy start at fmix64(seed ^ fmix64(k + gamma)) for the
 * k-th iterator: distinct for distinct k (both are bijections), and far
 * apart, so two iterators do not share draws in practice. */
#define BW__GAMMA UINT64_C(0x9e3779b97f4a7c15)

static void bw__seed(bw_retry_t *r) {
  const bw_retry_policy_t *p = r->policy;
  if (p->seed != 0) {
    /* The policy is shared and const to its users; the stream counter is the
     * one field that moves, and it is atomic. */
    uint64_t k = atomic_fetch_add_explicit(&((bw_retry_policy_t *)p)->streams,
                                           1, memory_order_relaxed);
    r->rng.s[0] = bw__fmix64(p->seed ^ bw__fmix64(k + BW__GAMMA));
  } else {
    r->rng.s[0] = bw__fresh_seed();
  }
  r->rng.s[1] = 1;
}

/* The next 64 random bits of the iterator's stream, seeded at its first
 * draw: most logical calls succeed at once and never draw, and then begin
 * touches no shared cache line and reads no /dev/urandom. */
static inline uint64_t bw__draw(bw_retry_t *r) {
  uint64_t z;
  if (BW__UNLIKELY(r->rng.s[1] == 0)) bw__seed(r);
  z = (r->rng.s[0] += BW__GAMMA);
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi] (lo <= hi, hi - lo < 2^63) from the iterator's stream:
 * Lemire's multiply-and-shift, with his rejection of the few low products
 * below 2^64 mod span, so the draw is exactly uniform. */
static inline int64_t bw__draw_range(bw_retry_t *r, int64_t lo, int64_t hi) {
  __extension__ typedef unsigned __int128 bw__u128;
  uint64_t span = (uint64_t)(hi - lo) + 1;
  bw__u128 m = (bw__u128)bw__draw(r) * span;
  if (BW__UNLIKELY((uint64_t)m < span)) {
    uint64_t threshold = (0 - span) % span;
    while ((uint64_t)m < threshold)
      m = (bw__u128)bw__draw(r) * span;
  }
  return lo + (int64_t)(m >> 64);
}

static uint64_t bw__it_next(void *r) {
  return bw__draw(r);
}
static int64_t bw__it_range(void *r, int64_t lo, int64_t hi) {
  return bw__draw_range(r, lo, hi);
}

/* The jittered delay of retry n (n >= 1) from the iterator's stream: the
 * same distributions as bw__delay. */
static int64_t bw__delay_it(bw_retry_t *r, uint32_t n) {
  return bw__jittered(r->policy, n, bw__it_next, bw__it_range, r, &r->dj_prev);
}

static void bw__begin(bw_retry_t *r, const bw_retry_policy_t *p, int64_t now_ns,
                      bw_deadline_t d, bool report) {
  /* Field by field: the key and the stream's state are written before they
   * are read (has_key, rng.s[1] say when). */
  r->policy = p;
  r->attempts = 0;
  r->giveup = BW_GIVEUP_NONE;
  r->start_ns = now_ns;
  r->deadline_ns = d.at_ns;
  r->dj_prev = 0.0;
  r->rng.s[1] = 0; /* 0: the stream is seeded at its first draw */
  r->has_key = false;
  r->idempotency_key[0] = '\0';
  if (p != NULL && report && p->budget != NULL) bw_budget_on_request(p->budget);
}

void bw_retry_begin(bw_retry_t *r, const bw_retry_policy_t *p, int64_t now_ns) {
  if (r == NULL) return;
  bw__begin(r, p, now_ns, bw__current, true);
}

void bw_retry_set_deadline(bw_retry_t *r, bw_deadline_t d) {
  if (r == NULL) return;
  if (d.at_ns < r->deadline_ns) r->deadline_ns = d.at_ns;
}

bw_giveup_t bw_retry_reason(const bw_retry_t *r) {
  if (r == NULL || r->giveup == BW__DONE) return BW_GIVEUP_NONE;
  return (bw_giveup_t)r->giveup;
}

uint32_t bw_retry_attempts(const bw_retry_t *r) {
  return r != NULL ? r->attempts : 0;
}

static const char *bw__hex = "0123456789abcdef";

void bw_uuidv7(int64_t unix_ms, bw_rand_t *rng, char out[37]) {
  uint8_t b[16];
  uint64_t ts, hi, lo;
  int i, j;
  if (out == NULL) return;
  if (rng == NULL) {
    out[0] = '\0';
    return;
  }
  ts = unix_ms < 0 ? 0 : (uint64_t)unix_ms & UINT64_C(0xffffffffffff);
  hi = bw_rand_next(rng);
  lo = bw_rand_next(rng);
  /* unix_ts_ms (48 bits, big-endian) | ver 0111 | rand_a (12) | var 10 |
   * rand_b (62): RFC 9562 section 5.7. */
  for (i = 0; i < 6; i++)
    b[i] = (uint8_t)(ts >> (40 - 8 * i));
  b[6] = (uint8_t)(0x70 | ((hi >> 60) & 0x0f));
  b[7] = (uint8_t)(hi >> 52);
  b[8] = (uint8_t)(0x80 | ((lo >> 58) & 0x3f));
  for (i = 9; i < 16; i++)
    b[i] = (uint8_t)(lo >> (8 * (15 - i)));
  for (i = 0, j = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[j++] = '-';
    out[j++] = bw__hex[b[i] >> 4];
    out[j++] = bw__hex[b[i] & 0x0f];
  }
  out[j] = '\0';
}

const char *bw_retry_attach_key(bw_retry_t *r, int64_t unix_ms) {
  if (r == NULL) return NULL;
  /* One logical call, one key: every attempt must send the same one, so a
   * second call returns the key already attached. */
  if (!r->has_key) {
    /* The key's 122 random bits come from a generator seeded by one draw of
     * the iterator's stream. */
    bw_rand_t g;
    bw_rand_seed(&g, bw__draw(r));
    bw_uuidv7(unix_ms, &g, r->idempotency_key);
    r->has_key = true;
  }
  return r->idempotency_key;
}

/* ---- deciding --------------------------------------------------------------
 */

static void bw__emit_gave_up(const bw_retry_t *r, bw_verdict_t v, int64_t now,
                             const char *reason) {
  const bw_retry_policy_t *p = r->policy;
  bw_field_t f[3];
  f[0] = bw_field_uint("attempts", r->attempts);
  f[1] = bw_field_str("cause", bw_giveup_name((bw_giveup_t)r->giveup));
  f[2] = bw_field_str("verdict", bw_verdict_name(v));
  bw_event_emit(p->sink, p->wall, now, BW_EV_RETRY_GAVE_UP, p->name, reason, f,
                3, NULL);
}

/* Milliseconds from a to b, rounded down, for messages. */
static long long bw__ms(int64_t ns) {
  return (long long)(ns / BW_NS_PER_MS);
}

/* Gives up with reason g (cold path: builds the event's reason text only
 * when there is a sink to read it). `a` and `b` are reason-specific numbers
 * (see the switch). */
static int bw__give_up(bw_retry_t *r, bw_giveup_t g, bw_verdict_t v,
                       int64_t now, int64_t a, int64_t b, int64_t *delay_ms) {
  const bw_retry_policy_t *p = r->policy;
  char reason[192];
  r->giveup = (uint32_t)g;
  *delay_ms = 0;
  if (p->sink == NULL) return BW_RETRY_GIVE_UP;
  switch (g) {
  case BW_GIVEUP_EXHAUSTED:
    snprintf(reason, sizeof(reason), "%u attempt%s made (max_attempts %u)",
             r->attempts, r->attempts == 1 ? "" : "s", p->max_attempts);
    break;
  case BW_GIVEUP_ELAPSED:
    if (b < 0) /* a: elapsed ns */
      snprintf(reason, sizeof(reason),
               "%lld ms elapsed since the first attempt (max_elapsed_ms %lld)",
               bw__ms(a), bw__ms(p->max_elapsed_ns));
    else /* a: elapsed ns, b: the delay in ms that would end too late */
      snprintf(reason, sizeof(reason),
               "a %lld ms delay after %lld ms would end at or past "
               "max_elapsed_ms %lld (stop_before)",
               (long long)b, bw__ms(a), bw__ms(p->max_elapsed_ns));
    break;
  case BW_GIVEUP_PERMANENT:
    snprintf(reason, sizeof(reason),
             "permanent failure: trying again cannot help");
    break;
  case BW_GIVEUP_REJECTED:
    snprintf(reason, sizeof(reason),
             "rejected by a breaker, bulkhead or limiter: never retried");
    break;
  case BW_GIVEUP_NOT_IDEMPOTENT:
    snprintf(reason, sizeof(reason),
             "transient failure of a non-idempotent call without an "
             "idempotency key: the request may have taken effect");
    break;
  case BW_GIVEUP_BUDGET:
    snprintf(reason, sizeof(reason), "retry budget '%s' denied a %lld ms retry",
             bw_budget_name(p->budget), (long long)a);
    break;
  case BW_GIVEUP_DEADLINE:
    if (a < 0) /* b: ns past the deadline */
      snprintf(reason, sizeof(reason), "deadline passed %lld ms ago",
               bw__ms(b));
    else /* a: the delay in ms, b: ns left */
      snprintf(reason, sizeof(reason),
               "a %lld ms delay would end at or past the deadline (%lld ms "
               "left)",
               (long long)a, bw__ms(b));
    break;
  case BW_GIVEUP_RETRY_AFTER_TOO_LONG:
    if (b < 0) /* a: the hint */
      snprintf(reason, sizeof(reason),
               "Retry-After %lld ms exceeds max_ms %lld", (long long)a,
               (long long)p->max_ms);
    else /* a: the hint, b: ns left */
      snprintf(reason, sizeof(reason),
               "Retry-After %lld ms would end at or past the deadline (%lld ms "
               "left)",
               (long long)a, bw__ms(b));
    break;
  case BW_GIVEUP_PUSHBACK:
    snprintf(reason, sizeof(reason), "the server said not to retry");
    break;
  default:
    reason[0] = '\0';
    break;
  }
  bw__emit_gave_up(r, v, now, reason);
  return BW_RETRY_GIVE_UP;
}

static void bw__emit_scheduled(const bw_retry_t *r, bw_verdict_t v,
                               int64_t delay, int64_t hint, bool paced,
                               int64_t now) {
  const bw_retry_policy_t *p = r->policy;
  bw_field_t f[3];
  char reason[160], of[32], why[48];
  f[0] = bw_field_uint("attempt", r->attempts);
  f[1] = bw_field_int("delay_ms", delay);
  f[2] = bw_field_str("verdict", bw_verdict_name(v));
  of[0] = '\0';
  if (p->max_attempts != 0)
    snprintf(of, sizeof(of), " of %u", p->max_attempts - 1);
  why[0] = '\0';
  if (hint >= 0)
    snprintf(why, sizeof(why), " (Retry-After %lld ms)", (long long)hint);
  else if (paced)
    snprintf(why, sizeof(why), " (paced by its limit)");
  snprintf(reason, sizeof(reason), "%s, retry %u%s in %lld ms%s",
           v == BW_VERDICT_NOT_SENT ? "request not sent" : "transient failure",
           r->attempts, of, (long long)delay, why);
  bw_event_emit(p->sink, p->wall, now, BW_EV_RETRY_SCHEDULED, p->name, reason,
                f, 3, NULL);
}

/* bw_retry_next and bw__retry_next_paced: a paced retry has no backoff. */
static int bw__next(bw_retry_t *r, bw_verdict_t v, int64_t retry_after_ms,
                    int64_t now_ns, int64_t *delay_ms, bool paced) {
  const bw_retry_policy_t *p;
  int64_t elapsed, delay, hint;
  if (BW__UNLIKELY(r == NULL || delay_ms == NULL || r->policy == NULL ||
                   (unsigned)v > (unsigned)BW_VERDICT_REJECTED ||
                   retry_after_ms < BW_RETRY_AFTER_NEVER))
    return BW_E_INVAL;
  p = r->policy;
  *delay_ms = 0;
  if (BW__UNLIKELY(r->giveup != BW_GIVEUP_NONE))
    return r->giveup == BW__DONE ? BW_RETRY_DONE : BW_RETRY_GIVE_UP;
  if (r->attempts != UINT32_MAX) r->attempts++;

  /* 1. The verdict. Only attempts that say something about the dependency's
   * health reach the budget: a permanent failure is the caller's problem and
   * a rejection never reached the dependency. */
  switch (v) {
  case BW_VERDICT_OK:
    if (p->budget != NULL) bw_budget_on_success(p->budget);
    r->giveup = BW__DONE;
    return BW_RETRY_DONE;
  case BW_VERDICT_PERMANENT:
    return bw__give_up(r, BW_GIVEUP_PERMANENT, v, now_ns, 0, 0, delay_ms);
  case BW_VERDICT_REJECTED:
    return bw__give_up(r, BW_GIVEUP_REJECTED, v, now_ns, 0, 0, delay_ms);
  default:
    if (p->budget != NULL) bw_budget_on_failure(p->budget);
    break;
  }

  /* 2. The caps. */
  if (p->max_attempts != 0 && r->attempts >= p->max_attempts)
    return bw__give_up(r, BW_GIVEUP_EXHAUSTED, v, now_ns, 0, 0, delay_ms);
  elapsed = now_ns > r->start_ns ? now_ns - r->start_ns : 0;
  if (p->max_elapsed_ns != 0 && elapsed >= p->max_elapsed_ns)
    return bw__give_up(r, BW_GIVEUP_ELAPSED, v, now_ns, elapsed, -1, delay_ms);

  /* 3. Idempotency: a transient failure may have taken effect. */
  if (v == BW_VERDICT_TRANSIENT && !p->idempotent && !r->has_key)
    return bw__give_up(r, BW_GIVEUP_NOT_IDEMPOTENT, v, now_ns, 0, 0, delay_ms);

  /* 4. The server's word. NEVER is obeyed even when hints are not honoured:
   * it is a refusal, not a schedule. */
  hint = retry_after_ms;
  if (hint == BW_RETRY_AFTER_NEVER)
    return bw__give_up(r, BW_GIVEUP_PUSHBACK, v, now_ns, 0, 0, delay_ms);
  if (!p->honor_retry_after) hint = BW_RETRY_AFTER_NONE;
  if (hint >= 0) {
    if (hint > p->max_ms)
      return bw__give_up(r, BW_GIVEUP_RETRY_AFTER_TOO_LONG, v, now_ns, hint, -1,
                         delay_ms);
    /* Only a deadline still ahead can be overrun by the hint; one already
     * passed is the deadline's doing (step 5), whatever the hint. */
    if (r->deadline_ns != BW_DEADLINE_NONE_NS && now_ns < r->deadline_ns &&
        hint * BW_NS_PER_MS >= r->deadline_ns - now_ns)
      return bw__give_up(r, BW_GIVEUP_RETRY_AFTER_TOO_LONG, v, now_ns, hint,
                         r->deadline_ns - now_ns, delay_ms);
  }

  /* 5. The delay, which must end in time: the next attempt starts strictly
   * before max_elapsed_ms (stop_before) and before the deadline. */
  if (paced)
    delay = 0; /* a limit paces it: it goes out when a slot frees */
  else
    delay = p->jitter == BW_JITTER_NONE ? bw__curve(p, r->attempts)
                                        : bw__delay_it(r, r->attempts);
  if (hint > delay) delay = hint;
  if (p->stop_before && delay * BW_NS_PER_MS >= p->max_elapsed_ns - elapsed)
    return bw__give_up(r, BW_GIVEUP_ELAPSED, v, now_ns, elapsed, delay,
                       delay_ms);
  if (r->deadline_ns != BW_DEADLINE_NONE_NS) {
    if (now_ns >= r->deadline_ns)
      return bw__give_up(r, BW_GIVEUP_DEADLINE, v, now_ns, -1,
                         now_ns - r->deadline_ns, delay_ms);
    if (delay * BW_NS_PER_MS >= r->deadline_ns - now_ns)
      return bw__give_up(r, BW_GIVEUP_DEADLINE, v, now_ns, delay,
                         r->deadline_ns - now_ns, delay_ms);
  }

  /* 6. The budget, last: only a retry that will happen may spend it. */
  if (p->budget != NULL && !bw_budget_try_retry(p->budget))
    return bw__give_up(r, BW_GIVEUP_BUDGET, v, now_ns, delay, 0, delay_ms);

  *delay_ms = delay;
  if (p->sink != NULL) bw__emit_scheduled(r, v, delay, hint, paced, now_ns);
  return BW_RETRY;
}

int bw_retry_next(bw_retry_t *r, bw_verdict_t v, int64_t retry_after_ms,
                  int64_t now_ns, int64_t *delay_ms) {
  return bw__next(r, v, retry_after_ms, now_ns, delay_ms, false);
}

int bw__retry_next_paced(bw_retry_t *r, bw_verdict_t v, int64_t now_ns,
                         int64_t *delay_ms) {
  return bw__next(r, v, BW_RETRY_AFTER_NONE, now_ns, delay_ms, true);
}

/* ---- the steps a driver's loop needs ---------------------------------------
 */

int bw_retry_start(bw_retry_t *r, const bw_retry_policy_t *p, int64_t now_ns) {
  bw_deadline_t d = bw__current;
  int64_t delay;
  if (r == NULL || p == NULL) return BW_E_INVAL;
  if (d.at_ns != BW_DEADLINE_NONE_NS && now_ns >= d.at_ns) {
    /* Nobody is waiting for the answer: send nothing, and do not count a
     * request the dependency never saw against the budget. */
    bw__begin(r, p, now_ns, d, false);
    return bw__give_up(r, BW_GIVEUP_DEADLINE, BW_VERDICT_NOT_SENT, now_ns, -1,
                       now_ns - d.at_ns, &delay);
  }
  bw__begin(r, p, now_ns, d, true);
  return BW_RETRY;
}

int bw_retry_check_deadline(bw_retry_t *r, bw_verdict_t last, int64_t now_ns) {
  int64_t delay;
  if (r == NULL || r->policy == NULL ||
      (unsigned)last > (unsigned)BW_VERDICT_REJECTED)
    return BW_E_INVAL;
  if (r->giveup != BW_GIVEUP_NONE)
    return r->giveup == BW__DONE ? BW_RETRY_DONE : BW_RETRY_GIVE_UP;
  /* A wait that overslept past the deadline must not start an attempt
   * whose answer nobody waits for. */
  if (r->deadline_ns != BW_DEADLINE_NONE_NS && now_ns >= r->deadline_ns)
    return bw__give_up(r, BW_GIVEUP_DEADLINE, last, now_ns, -1,
                       now_ns - r->deadline_ns, &delay);
  return BW_RETRY;
}

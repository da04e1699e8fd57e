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
 * - Decorrelated jitter evaluates Polly's f(t) from precomputed polynomial
 *   pieces (retries 1 to 16) or a table-driven exp2/exp (up to 100), not
 *   with three libm calls; the delays in ms are libm's (bw__dj_f). */
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
 * 1/1.4 scales the medians near base_ms, 2*base_ms, 4*base_ms ... The
 * polynomial tables of bw__dj_f are fitted for P = 4. */
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
  double dj_max;  /* delay: no conversions on its path */
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

/* All exponential x2 over the defaults. Seed 000 computes
 * min(base * 2^k, 30 s) with full jitter for k = 0, 1, ...; seed 002 is
 * tenacity's wait_exponential(multiplier, min, max), whose first wait is
 * `multiplier` seconds; seed 004 is Polly v8's exponential backoff with
 * UseJitter, i.e. DecorrelatedJitterBackoffV2, MaxRetryAttempts 2. */
static const bw__preset_t bw__presets[] = {
    {"seed000", 3, 1000, 0, 30000, BW_JITTER_FULL},
    {"seed000.hotel_api", 3, 1000, 0, 30000, BW_JITTER_FULL},
    {"seed000.payment_api", 2, 2000, 0, 30000, BW_JITTER_FULL},
    {"seed000.search_agent", 4, 500, 0, 30000, BW_JITTER_FULL},
    {"seed002", 3, 500, 500, 4000, BW_JITTER_NONE},
    {"seed002.inner", 2, 300, 300, 2000, BW_JITTER_NONE},
    {"seed004", 3, 200, 0, 1500, BW_JITTER_DECORRELATED},
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

/* 2^(j/64), j = 0..63, each correctly rounded: the table of the fast
 * exponentials below. */
static const double bw__exp2_64[64] = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0,
    0x1.0874518759bc8p+0, 0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0,
    0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0, 0x1.172b83c7d517bp+0,
    0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0,
    0x1.2d285a6e4030bp+0, 0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0,
    0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0, 0x1.3dea64c123422p+0,
    0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0,
    0x1.56f4736b527dap+0, 0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0,
    0x1.6247eb03a5585p+0, 0x1.6623882552225p+0, 0x1.6a09e667f3bcdp+0,
    0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0,
    0x1.868d99b4492edp+0, 0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0,
    0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0, 0x1.9c49182a3f090p+0,
    0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0,
    0x1.bcc1e904bc1d2p+0, 0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0,
    0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0, 0x1.d5818dcfba487p+0,
    0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0,
    0x1.fa7c1819e90d8p+0};

/* e^x - 1 for |x| <= ln(2)/128: Taylor to x^6, evaluated in two halves so
 * the chain of dependent operations stays short; the remainder is below
 * 2^-60 of the result. */
static inline double bw__expm1_small(double x) {
  double x2 = x * x;
  double lo = x + x2 * (0.5 + x * (1.0 / 6.0));
  double hi = (1.0 / 24.0) + x * (1.0 / 120.0) + x2 * (1.0 / 720.0);
  return lo + (x2 * x2) * hi;
}

/* 2^(k / 64), k >= 0 with k / 64 < 1023, up to the table's rounding. The
 * power of two is built in the exponent bits (no ldexp call). */
static inline double bw__pow2_64(int64_t k) {
  union {
    uint64_t u;
    double d;
  } two;
  two.u = (uint64_t)(1023 + (k >> 6)) << 52;
  return two.d * bw__exp2_64[k & 63];
}

/* 2^(k / 64) * e^x, |x| <= ln(2)/128, as s + s (e^x - 1): the small term
 * carries the rounding, not the sum 1 + x. */
static inline double bw__scaled(int64_t k, double x) {
  double s = bw__pow2_64(k);
  return s + s * bw__expm1_small(x);
}

/* f(t) = 2^t * tanh(sqrt(4t)), the reference: three libm calls. */
static double bw__dj_f_libm(double t) {
  return exp2(t) * tanh(sqrt(BW__DJ_P * t));
}

/* f on [2^-8, 16) (retries 1 to 16), piecewise: 368 pieces, each a
 * polynomial of degree 7 in x = t - centre, the Chebyshev fit of f at 40
 * digits rounded to doubles, generated and checked by
 * scripts/fit_decorrelated.py (mpmath):
 * - t in [1, 16): sixteen pieces a unit, [k + j/16, k + (j+1)/16), piece
 *   (k-1)*16 + j, picked from the retry number and the draw's top 4 bits;
 * - t in [2^-8, 1): sixteen pieces a binade, 2^e [1 + j/16, 1 + (j+1)/16),
 *   piece 240 + (-1-e)*16 + j, picked from the draw's leading zeros and the
 *   4 bits after its leading one. Narrow pieces near 0, where f behaves like
 *   2 sqrt(t), make a polynomial in t good enough: no sqrt.
 * Each piece is one 64-byte line; the powers of two are in the
 * coefficients (no scaling), the centres are exact doubles. Evaluated as
 * the script does (Estrin's scheme, the constant added last), the result is
 * within 1.1 * 2^-52 relative of the true f at every point the script
 * tried (40 per piece): a unit or two in the last place, as libm's exp2 *
 * tanh(sqrt) is. */
#define BW__DJ_DEG 7
#define BW__DJ_SUB 16
#define BW__DJ_UNITS 15                        /* [1, 16) */
#define BW__DJ_BINADES 8                       /* [2^-8, 1) */
#define BW__DJ_LOW (BW__DJ_UNITS * BW__DJ_SUB) /* first piece below 1 */
/* 368 pieces x 8 coefficients, lowest degree first */
static const double bw__dj_coef[BW__DJ_LOW + BW__DJ_BINADES * BW__DJ_SUB]
                               [BW__DJ_DEG + 1]
    __attribute__((aligned(64))) = {
        {0x1.f980b902ea37dp+0, 0x1.80ac86d9339ebp+0, 0x1.a1134775b844ep-2,
         0x1.7dc2e8897f5fap-3, -0x1.4eb2876f7baf8p-5, 0x1.a7d3f0e07f489p-5,
         -0x1.4002acb656442p-5, 0x1.02e735c57435fp-5},
        {0x1.08fb5c0e7fbfbp+1, 0x1.8e41eb76b343ap+0, 0x1.c401745f8fceap-2,
         0x1.6c9f9e2619b94p-3, -0x1.b5f1a607444e8p-6, 0x1.42a35a55736cfp-5,
         -0x1.c4d93c80f25d1p-6, 0x1.5df1d4c6e48aap-6},
        {0x1.15a75519c5e38p+1, 0x1.9ce92cea8e75cp+0, 0x1.e5a3d83704bcbp-2,
         0x1.61d5881903459p-3, -0x1.0412f243b03eep-6, 0x1.f50a14bc37495p-6,
         -0x1.452c42696187dp-6, 0x1.e254f8606af29p-7},
        {0x1.22ccb305b7bb5p+1, 0x1.ac9a1d02e88bap+0, 0x1.0340652ca0888p-1,
         0x1.5bf851e713254p-3, -0x1.e295c75825948p-8, 0x1.8cd2e195822d7p-6,
         -0x1.d8e3023cfe260p-7, 0x1.524ea51949c67p-7},
        {0x1.3073af3df7486p+1, 0x1.bd50457eb2d7dp+0, 0x1.1380c1eea2d5cp-1,
         0x1.5a00f8657efebp-3, -0x1.24d84c4e20644p-11, 0x1.40a667f5a36d2p-6,
         -0x1.5b7621352b16ap-7, 0x1.e23fa77704902p-8},
        {0x1.3ea46bafdb797p+1, 0x1.cf0a20e932cbcp+0, 0x1.23bd0cdf7f590p-1,
         0x1.5b2f615628d9ap-3, 0x1.4753611667079p-8, 0x1.0871e87732df1p-6,
         -0x1.016f217f8a449p-7, 0x1.5cd379488a238p-8},
        {0x1.4d6707ed7f6ddp+1, 0x1.e1c8894199c44p+0, 0x1.34178eacc62d3p-1,
         0x1.5ef5e46f4e855p-3, 0x1.3b3facb5e31fcp-7, 0x1.bd585a4eb189ep-7,
         -0x1.7fc594670ccb4p-8, 0x1.ff9c4a681295bp-9},
        {0x1.5cc3b26778ffep+1, 0x1.f58e4cde3cf10p+0, 0x1.44acd24522209p-1,
         0x1.64eb471f1cc60p-3, 0x1.bc3304291d6d5p-7, 0x1.7ef41eefa4f90p-7,
         -0x1.1f09e686f92b4p-8, 0x1.7c105fe14610ep-9},
        {0x1.6cc2b6c1dbe1ep+1, 0x1.052fef72d8aa2p+1, 0x1.55951c03a63fcp-1,
         0x1.6cc0fbbbb2326p-3, 0x1.161cd7314a3e5p-6, 0x1.5044420f6d0a8p-7,
         -0x1.ad814de2a9bcfp-9, 0x1.1dd976293a545p-9},
        {0x1.7d6c8a01dd054p+1, 0x1.10218dfb8d58ap+1, 0x1.66e57e238c3b0p-1,
         0x1.763c3f10cb78bp-3, 0x1.47cbc42ff57d6p-6, 0x1.2d627727be6e3p-7,
         -0x1.4025ca1ddb41cp-9, 0x1.b32879fda2ac8p-10},
        {0x1.8ec9d51f7ecb3p+1, 0x1.1b9f8ee4bb3efp+1, 0x1.78b0a71585d1fp-1,
         0x1.81312bfc55fd5p-3, 0x1.74c306645398ap-6, 0x1.137bcd9c1907cp-7,
         -0x1.d8e087ccf996bp-10, 0x1.4f283ebf69026p-10},
        {0x1.a0e37e63411cfp+1, 0x1.27ae0d0388daep+1, 0x1.8b077d66b4191p-1,
         0x1.8d7f2b5374004p-3, 0x1.9e3e671e189a4p-6, 0x1.007f17fb1e782p-7,
         -0x1.573420cf2c130p-10, 0x1.0534674b7a034p-10},
        {0x1.b3c2b1de5a85ep+1, 0x1.3451a4d9562f2p+1, 0x1.9df996f812456p-1,
         0x1.9b0e58a6dc9f9p-3, 0x1.c532623f7d023p-6, 0x1.e5ca63a178ef6p-8,
         -0x1.e31f6e4ba57dep-11, 0x1.9c1166a3aec18p-11},
        {0x1.c770e9397d0f6p+1, 0x1.418f6b8ebede8p+1, 0x1.b195953f0cac2p-1,
         0x1.a9cd955815ad9p-3, 0x1.ea5e85ea8811cp-6, 0x1.d314dcc7f336ap-8,
         -0x1.41d2691560de7p-11, 0x1.4919c7e8237f6p-11},
        {0x1.dbf7f30890f23p+1, 0x1.4f6ce87cb110bp+1, 0x1.c5e96d84afa41p-1,
         0x1.b9b11935be63cp-3, 0x1.072d60ad05349p-5, 0x1.c72726a2ca967p-8,
         -0x1.80643f1a5377dp-12, 0x1.0a4846a4e39f7p-11},
        {0x1.f161f9c7ba242p+1, 0x1.5df010b8c4518p+1, 0x1.db02a22ce200ap-1,
         0x1.cab15e771ccd0p-3, 0x1.18d09118e9634p-5, 0x1.c0b56519c1964p-8,
         -0x1.5a7d2ada7aa7fp-13, 0x1.b4dec74812317p-12},
        {0x1.03dcc54f39bb0p+2, 0x1.6d1f443c8e754p+1, 0x1.f0ee70b4d0c97p-1,
         0x1.dcca50e6f9f61p-3, 0x1.2a4a8392d5f0cp-5, 0x1.bec2e720447fap-8,
         0x1.2c5222ea174b0p-20, 0x1.6b9fb890ddf9ap-12},
        {0x1.0f84cdffedad8p+2, 0x1.7d014c591ce64p+1, 0x1.03dcfb909a287p+0,
         0x1.effaaeede6da3p-3, 0x1.3bc43f349b780p-5, 0x1.c08e4fcc2d05ap-8,
         0x1.26d96ce7efc52p-13, 0x1.335a1e4f9873fp-12},
        {0x1.1baeca1d7f838p+2, 0x1.8d9d5b3a92a52p+1, 0x1.0fb92971e9263p+0,
         0x1.0221c7fc06586p-2, 0x1.4d6027f998fadp-5, 0x1.c5831a84f7725p-8,
         0x1.1002db5bf175dp-12, 0x1.0805a8de4f71fp-12},
        {0x1.2860a805536ccp+2, 0x1.9efb0c4e087cbp+1, 0x1.1c125d5f740f5p+0,
         0x1.0cd4038a658b5p-2, 0x1.5f3b873084978p-5, 0x1.cd2ef0a35550bp-8,
         0x1.7be88c963dd03p-12, 0x1.cd475e01b0441p-13},
        {0x1.35a09498d10afp+2, 0x1.b122656675c53p+1, 0x1.28ef4a676bec5p+0,
         0x1.18166d8bbd851p-2, 0x1.716fb7c04f39bp-5, 0x1.d739be7c82dc5p-8,
         0x1.daf48bb72d8dbp-12, 0x1.99ed024e689d5p-13},
        {0x1.4374fe9750150p+2, 0x1.c41bd88586480p+1, 0x1.3656c4ce60c0cp+0,
         0x1.23ec279e42ae2p-2, 0x1.84130dbf5ae09p-5, 0x1.e35fc72d9093fp-8,
         0x1.18118a4fb4b65p-11, 0x1.729b98982608cp-13},
        {0x1.51e49a089406ep+2, 0x1.d7f046337d78ep+1, 0x1.444fca74655b0p+0,
         0x1.3058fc4c0b9c6p-2, 0x1.97398a7e3d242p-5, 0x1.f16d2e62f37ddp-8,
         0x1.3ee598205c27bp-11, 0x1.54c33c19f3ec1p-13},
        {0x1.60f663bc0c435p+2, 0x1.eca900561a2a0p+1, 0x1.52e18a59f2932p+0,
         0x1.3d614ebfbf814p-2, 0x1.aaf5699d506b6p-5, 0x1.009d4b1450f9fp-7,
         0x1.62e31c2cee334p-11, 0x1.3e6f5632738a4p-13},
        {0x1.70b1a4e09d4d5p+2, 0x1.0127e6bd18a2fp+2, 0x1.62136b79bc547p+0,
         0x1.4b0a0e6614b96p-2, 0x1.bf579080c32c5p-5, 0x1.095545016c15bp-7,
         0x1.84c6ab8679714p-11, 0x1.2e1fafd4d8571p-13},
        {0x1.811df6b861c3bp+2, 0x1.0c77764355debp+2, 0x1.71ed13217b662p+0,
         0x1.5958adac419c8p-2, 0x1.d46fe718fea45p-5, 0x1.12d3c1e63f35bp-7,
         0x1.a527da05b0e6ap-11, 0x1.22abdf11b816dp-13},
        {0x1.9243466b90e67p+2, 0x1.18488c68f648ap+2, 0x1.82766aeb20c53p+0,
         0x1.68531b3bea609p-2, 0x1.ea4d9f3a8aadcp-5, 0x1.1d1132486f604p-7,
         0x1.c4819eb448e37p-11, 0x1.1b2e286962b06p-13},
        {0x1.a429d8fd885e8p+2, 0x1.24a0c74a421ffp+2, 0x1.93b7a671530dcp+0,
         0x1.77ffbd3996d1dp-2, 0x1.007fb73d5754dp-4, 0x1.2808a2ba11985p-7,
         0x1.e338b863c738bp-11, 0x1.16f3c70645a97p-13},
        {0x1.b6da4f66d46d8p+2, 0x1.318607dacd411p+2, 0x1.a5b948d500b6cp+0,
         0x1.88656e266eaa0p-2, 0x1.0c49deca3ad2ap-4, 0x1.33b745f21f512p-7,
         0x1.00d04a16898e2p-10, 0x1.157126b95a2edp-13},
        {0x1.ca5daad6fa0d4p+2, 0x1.3efe747759828p+2, 0x1.b8842a25df68dp+0,
         0x1.998b7b1b248bfp-2, 0x1.188c67d2b6a7dp-4, 0x1.401c18c1dcc71p-7,
         0x1.0fff8a718601dp-10, 0x1.16390464b4eb1p-13},
        {0x1.debd5120b7db4p+2, 0x1.4d107ba2badc5p+2, 0x1.cc217cbc9d6c6p+0,
         0x1.ab79a3223b32fp-2, 0x1.254e718505f9fp-4, 0x1.4d379a0ada345p-7,
         0x1.1f47c0c8e2980p-10, 0x1.18f5b3e737b1cp-13},
        {0x1.f40311536b6d2p+2, 0x1.5bc2d6ed7dc9fp+2, 0x1.e09ad29322d69p+0,
         0x1.be38178463996p-2, 0x1.3297269dabaf4p-4, 0x1.5b0b92447598ep-7,
         0x1.2ec2678a7b1f9p-10, 0x1.1d63ff541073dp-13},
        {0x1.051c944223ceep+3, 0x1.6b1c8e086b6fbp+2, 0x1.f5fa22a55e2cbp+0,
         0x1.d1cf7ce37a924p-2, 0x1.406dc960d2470p-4, 0x1.699ae72e3c5dap-7,
         0x1.3e85b5d2d937cp-10, 0x1.234f38e1cda14p-13},
        {0x1.10b52365064cbp+3, 0x1.7b24fa0254c47p+2, 0x1.0624e731cf21bp+1,
         0x1.e648ed0852dc8p-2, 0x1.4ed9be0a6f1adp-4, 0x1.78e979172d91bp-7,
         0x1.4ea554cb048ddp-10, 0x1.2a8e340977bd5p-13},
        {0x1.1cd0ca36fd949p+3, 0x1.8be3c8b1d13dap+2, 0x1.11ca539f2962fp+1,
         0x1.fbadf94d7db17p-2, 0x1.5de2940a8f1f0p-4, 0x1.88fc07ba8ec2cp-7,
         0x1.5f32efa755cc5p-10, 0x1.3300ede17cea4p-13},
        {0x1.29755baa64b4ap+3, 0x1.9d61004bd8811p+2, 0x1.1df2fa29126cap+1,
         0x1.090456cb03a53p-1, 0x1.6d900e519726fp-4, 0x1.99d81d26baa54p-7,
         0x1.703ea6aae4bd6p-10, 0x1.3c8ebb026c591p-13},
        {0x1.36a8ec51379b2p+3, 0x1.afa503285338fp+2, 0x1.2aa4bc1d5235bp+1,
         0x1.14b1c9e173d47p-1, 0x1.7dea2ae29a442p-4, 0x1.ab83fd7a78902p-7,
         0x1.81d76b983c722p-10, 0x1.4724dbb6bb21cp-13},
        {0x1.4471d54dd9f3ep+3, 0x1.c2b893b5eec37p+2, 0x1.37e5bb889d525p+1,
         0x1.20e4dbce78c1cp-1, 0x1.8ef929d746d57p-4, 0x1.be069a88ef6c8p-7,
         0x1.940b4c7b24d2ap-10, 0x1.52b55eeb26b36p-13},
        {0x1.52d6b7643e838p+3, 0x1.d6a4d89eab394p+2, 0x1.45bc5e4ed34f5p+1,
         0x1.2da35595be067p-1, 0x1.a0c593f89aa48p-4, 0x1.d1678aa83e0e3p-7,
         0x1.a6e7b097a8fcep-10, 0x1.5f36420bbed16p-13},
        {0x1.61de7e2cfb3b3p+3, 0x1.eb73611ec41d3p+2, 0x1.542f515e7c599p+1,
         0x1.3af345b900837p-1, 0x1.b3584109084afp-4, 0x1.e5af0216f4a01p-7,
         0x1.ba798a70237aap-10, 0x1.6ca0c03bf9198p-13},
        {0x1.7190636be3dcfp+3, 0x1.009714c7dd56ep+3, 0x1.63458c01e2ba2p+1,
         0x1.48db02c84440ep-1, 0x1.c6ba5dd7951e7p-4, 0x1.fae5ce83e750dp-7,
         0x1.cecd812d84b49p-10, 0x1.7af0c68965e91p-13},
        {0x1.81f3f28bd3d47p+3, 0x1.0befd014b6f67p+3, 0x1.730653500fee4p+1,
         0x1.57612e220930cp-1, 0x1.daf5722f687bap-4, 0x1.088aaa2e1ad05p-6,
         0x1.e3f013355c373p-10, 0x1.8a2485203c933p-13},
        {0x1.93110c415fdbcp+3, 0x1.17c954fda83a6p+3, 0x1.83793dbfe7b30p+1,
         0x1.668cb6e2a5511p-1, 0x1.f01366b40f53fp-4, 0x1.1423c6cb41140p-6,
         0x1.f9edb356e2cbbp-10, 0x1.9a3c175afd2c4p-13},
        {0x1.a4efea563910bp+3, 0x1.2429540ff7cddp+3, 0x1.94a636df940aep+1,
         0x1.7664dd02622e6p-1, 0x1.030f455c15823p-3, 0x1.204384e0b4134p-6,
         0x1.086970d621b94p-9, 0x1.ab393de8dd9bcp-13},
        {0x1.b799239f1d47fp+3, 0x1.3115be96913bbp+3, 0x1.a6958332731cap+1,
         0x1.86f134a26118cp-1, 0x1.0e90cd0d1e76bp-3, 0x1.2cef779394527p-6,
         0x1.145620892faa5p-9, 0x1.bd1f27558fa60p-13},
        {0x1.cb15b01e43ac1p+3, 0x1.3e94c971ad3bbp+3, 0x1.b94fc437ba089p+1,
         0x1.9839a988a03e9p-1, 0x1.1a93e198d29a1p-3, 0x1.3a2d7e71019c2p-6,
         0x1.20c354f5a4cebp-9, 0x1.cff2440ccb1c8p-13},
        {0x1.df6eed5449129p+3, 0x1.4cacf00f594f7p+3, 0x1.ccddfc9c05d92p+1,
         0x1.aa4682cbc6483p-1, 0x1.271e566a526dap-3, 0x1.4803c6e21fd70p-6,
         0x1.2db79d5ddd4e5p-9, 0x1.e3b823943e88fp-13},
        {0x1.f4aea2c1b4e67p+3, 0x1.5b64f7863f242p+3, 0x1.e14994981d0fap+1,
         0x1.bd2066af9c5f6p-1, 0x1.34363e3f98848p-3, 0x1.5678cdfe7fe4dp-6,
         0x1.3b39b38bbb282p-9, 0x1.f877593289346p-13},
        {0x1.056f834da3112p+4, 0x1.6ac3f1d41e703p+3, 0x1.f69c5e7f30926p+1,
         0x1.d0d05eb359ab4p-1, 0x1.41e1ee50ccc74p-3, 0x1.659362b3ea511p-6,
         0x1.4950829d2ea7dp-9, 0x1.071bb34d1f0f5p-12},
        {0x1.11056159a7c99p+4, 0x1.7ad141417eb29p+3, 0x1.06704dbf7cd7dp+2,
         0x1.e55fdbd318c38p-1, 0x1.5028018eb28a6p-3, 0x1.755aa83c84c67p-6,
         0x1.58032d4d222f8p-9, 0x1.128055bd8e735p-12},
        {0x1.1d1e7ccd41c6fp+4, 0x1.8b949bec316d9p+3, 0x1.1210804a121a9p+2,
         0x1.fad8bafe00a8fp-1, 0x1.5f0f5bfb24bb5p-3, 0x1.85d618dde8469p-6,
         0x1.675913d7dce1ap-9, 0x1.1e6e2c8b46d47p-12},
        {0x1.29c0a5fd54b30p+4, 0x1.9d160f7a51397p+3, 0x1.1e345ddac393ep+2,
         0x1.08a2a4e16c3ddp+0, 0x1.6e9f2e1e64152p-3, 0x1.970d88ed1058fp-6,
         0x1.7759d9946357cp-9, 0x1.2aea34915a628p-12},
        {0x1.36f1ef16e92f0p+4, 0x1.af5e04f77e74fp+3, 0x1.2ae1bc9c621edp+2,
         0x1.1458259a741dfp+0, 0x1.7edef89bd7febp-3, 0x1.a9092a1422186p-6,
         0x1.880d6a57f1965p-9, 0x1.37f9cbb5fb9fdp-12},
        {0x1.44b8af0a603f8p+4, 0x1.c27544de2f796p+3, 0x1.381eb4b97eeacp+2,
         0x1.20927e85990b3p+0, 0x1.8fd68fe8c9502p-3, 0x1.bbd18ed7f13dfp-6,
         0x1.997bffb5215b3p-9, 0x1.45a2aee0d9394p-12},
        {0x1.531b8497a7e6fp+4, 0x1.d664fb4f0018ep+3, 0x1.45f1a34c364f1p+2,
         0x1.2d578e7e1bcecp+0, 0x1.a18e20278d1c1p-3, 0x1.cf6fae5bea86fp-6,
         0x1.abae26257c9e8p-9, 0x1.53eaf8e8f1faap-12},
        {0x1.6221597ce8e53p+4, 0x1.eb36bc7802e2fp+3, 0x1.54612d6edcba8p+2,
         0x1.3aad772c52abep+0, 0x1.b40e31298b69dp-3, 0x1.e3ece863adaf6p-6,
         0x1.beacc229f8c39p-9, 0x1.62d92254e8f95p-12},
        {0x1.71d165c936017p+4, 0x1.007a449717227p+4, 0x1.6374436f0e934p+2,
         0x1.489a9ff3b2d14p+0, 0x1.c75faa9a89787p-3, 0x1.f95309922bbdap-6,
         0x1.d281156d06950p-9, 0x1.727401d0377b6p-12},
        {0x1.82333354d6778p+4, 0x1.0bd469dd8c10ep+4, 0x1.73322424b357dp+2,
         0x1.5725b902e12f9p+0, 0x1.db8bd8579fd4bp-3, 0x1.07d627f34aabep-5,
         0x1.e734c3ef6ef70p-9, 0x1.82c2cd3d7e430p-12},
        {0x1.934ea160d71c2p+4, 0x1.17af4270a6024p+4, 0x1.83a2606e94afap+2,
         0x1.6655be8731c4dp+0, 0x1.f09c6ef449913p-3, 0x1.1381b7bbe61a1p-5,
         0x1.fcd1d9480a39ap-9, 0x1.93cd1b52f7dd4p-12},
        {0x1.a52be85fa0942p+4, 0x1.2410808cd1525p+4, 0x1.94ccded63b655p+2,
         0x1.7631fc050ff63p+0, 0x1.034dc838015f0p-2, 0x1.1fb1cbb7b2c83p-5,
         0x1.09b166feb8eecp-8, 0x1.a59ae5b1e5bcbp-12},
        {0x1.b7d39de864a1fp+4, 0x1.30fe17060e919p+4, 0x1.a6b9df5cd6799p+2,
         0x1.86c20fd6de733p+0, 0x1.0ec9e88f7c31fp-2, 0x1.2c6c3ba2ce38bp-5,
         0x1.157946800790bp-8, 0x1.b8348b6cf19fbp-12},
        {0x1.cb4eb8d7490edp+4, 0x1.3e7e3c2371a16p+4, 0x1.b971ff7303a5bp+2,
         0x1.980deed3f168bp+0, 0x1.1ac81e642db73p-2, 0x1.39b7221fedb2bp-5,
         0x1.21c63ca529603p-8, 0x1.cba2d3f4095a4p-12},
        {0x1.dfa6959c4c29ap+4, 0x1.4c976c9b10f97p+4, 0x1.ccfe3e1d64c17p+2,
         0x1.aa1de8215a9a9p+0, 0x1.274e2dfe7ce6cp-2, 0x1.4798df99e418ep-5,
         0x1.2e9e39d6365b2p-8, 0x1.dfeef25e520c4p-12},
        {0x1.f4e4fabaf53abp+4, 0x1.5b506eafd370bp+4, 0x1.e1680048029c2p+2,
         0x1.bcfaa92e54681p+0, 0x1.34621cd46abd2p-2, 0x1.56181d487cd49p-5,
         0x1.3c0770643ff0dp-8, 0x1.f522890c88748p-12},
        {0x1.058a0ebe7d5a7p+5, 0x1.6ab055729b420p+4, 0x1.f6b9154a93f72p+2,
         0x1.d0ad41de2ed16p+0, 0x1.420a347143dffp-2, 0x1.653bd059dd033p-5,
         0x1.4a0857a2042afp-8, 0x1.05a3d6cfc87d7p-11},
        {0x1.111f536d102eep+5, 0x1.7abe84285e14cp+4, 0x1.067dddcfeb3f9p+3,
         0x1.e53f28e1b86e1p+0, 0x1.504d057dac0d7p-2, 0x1.750b3d41b7b88p-5,
         0x1.58a7af197c2dbp-8, 0x1.113476a015064p-11},
        {0x1.1d37dc4bd4998p+5, 0x1.8b82b1d6cba0ep+4, 0x1.121d52e91ff1cp+3,
         0x1.faba404234e73p+0, 0x1.5f316ae984848p-2, 0x1.858dfb2fbccfap-5,
         0x1.67ec81e07649ap-8, 0x1.1d48a89ad9276p-11},
        {0x1.29d97950e9beap+5, 0x1.9d04ecf9371cep+4, 0x1.1e407fd0334a1p+3,
         0x1.08946d1005873p+1, 0x1.6ebe8d393d216p-2, 0x1.96cbf7aec3bc2p-5,
         0x1.77de2a0e60767p-8, 0x1.29e631e565be1p-11},
        {0x1.370a3c50f8b05p+5, 0x1.af4d9f5f8b08cp+4, 0x1.2aed39adce1c2p+3,
         0x1.144aded3b710ep+1, 0x1.7efbe5f82f781p-2, 0x1.a8cd7a6e4d5d0p-5,
         0x1.888454556220dp-8, 0x1.37131abfad0ccp-11},
        {0x1.44d07be9e6a95p+5, 0x1.c265923923287p+4, 0x1.382997c1a7e17p+3,
         0x1.2086161eb0230p+1, 0x1.8ff14351b3c44p-2, 0x1.bb9b2938113afp-5,
         0x1.99e703c0e2e92p-8, 0x1.44d5b143ffe10p-11},
        {0x1.5332d68e94222p+5, 0x1.d655f24d7da1dp+4, 0x1.45fbf64ff505dp+3,
         0x1.2d4bf373c3e25p+1, 0x1.a1a6cbd2b10fep-2, 0x1.cf3e0c1364099p-5,
         0x1.ac0e959b9eabap-8, 0x1.53348c4ddb41fp-11},
        {0x1.623835b51f85cp+5, 0x1.eb285464ca448p+4, 0x1.546af9affb1c7p+3,
         0x1.3aa299f8b6a4cp+1, 0x1.b42502557c7e5p-2, 0x1.e3bf91985eea0p-5,
         0x1.bf03c57f6d63ap-8, 0x1.62368e8855e17p-11},
        {0x1.71e7d12932e0ap+5, 0x1.00735cf13b032p+5, 0x1.637d917d437fbp+3,
         0x1.48907268eb99bp+1, 0x1.c774ca19ef339p-2, 0x1.f9299374c8f0bp-5,
         0x1.d2cfb190eeccbp-8, 0x1.71e2e9a4f1cbdp-11},
        {0x1.82493283f532dp+5, 0x1.0bcdcac9f4679p+5, 0x1.733afbecf573fp+3,
         0x1.571c2e298a918p+1, 0x1.db9f6b0baee61p-2, 0x1.07c32d926f7a0p-4,
         0x1.e77bdee955b79p-8, 0x1.824121bbc6aeep-11},
        {0x1.936438cb4a23dp+5, 0x1.17a8e85ae2638p+5, 0x1.83aac948f2394p+3,
         0x1.664cca8097b34p+1, 0x1.f0ae9638bac47p-2, 0x1.1370537118671p-4,
         0x1.fd123e309d9b7p-8, 0x1.935910d624a64p-11},
        {0x1.a5411c3a1db81p+5, 0x1.240a681908488p+5, 0x1.94d4df925f921p+3,
         0x1.762993f087d3dp+1, 0x1.0356353d3287ep-1, 0x1.1fa1d765738ebp-4,
         0x1.09ce983542e38p-7, 0x1.a532eaa4f7b12p-11},
        {0x1.b7e872338d601p+5, 0x1.30f83d0ce89e5p+5, 0x1.a6c17e4d602e5p+3,
         0x1.86ba29b9edc53p+1, 0x1.0ed1bca97cc9cp-1, 0x1.2c5d9521f0a30p-4,
         0x1.1593c5fc6048dp-7, 0x1.b7d74064598b4p-11},
        {0x1.cb633162d4501p+5, 0x1.3e789dae5aa4ep+5, 0x1.b9794277cd2c2p+3,
         0x1.98068184ef585p+1, 0x1.1acf6601350cfp-1, 0x1.39a9aacc1c918p-4,
         0x1.21de50ea6cf43p-7, 0x1.cb4f04ede33c6p-11},
        {0x1.dfbab609f692ap+5, 0x1.4c9206e0c7f9bp+5, 0x1.cd052aacd882ep+3,
         0x1.aa16eb3443fbfp+1, 0x1.2754f46a3a0b0p-1, 0x1.478c7bec6c3f5p-4,
         0x1.2eb4218237b95p-7, 0x1.dfa390fb71ce6p-11},
        {0x1.f4f8c6813cbb8p+5, 0x1.5b4b3f11418eap+5, 0x1.e16e9b7795ba6p+3,
         0x1.bcf414e392ea6p+1, 0x1.34686c55670bcp-1, 0x1.560cb47f761f3p-4,
         0x1.3c1b632536a3cp-7, 0x1.f4dea79c32b06p-11},
        {0x1.0593cbf4d4cacp+6, 0x1.6aab5977eb659p+5, 0x1.f6bf63d67cd56p+3,
         0x1.d0a70f131bbddp+1, 0x1.42101663041a7p-1, 0x1.65314c2a11146p-4,
         0x1.4a1a870c0e559p-7, 0x1.05853d6ef65c8p-10},
        {0x1.1128e98a55d24p+6, 0x1.7ab9b97e4f7e6p+5, 0x1.0680e0f9096cap+4,
         0x1.e5395102aa118p+1, 0x1.50528267f4422p-1, 0x1.75018991e03c6p-4,
         0x1.58b84760774acp-7, 0x1.1118d8564d657p-10},
        {0x1.1d414cd1b2f3cp+6, 0x1.8b7e164c3a25cp+5, 0x1.122034047df6bp+4,
         0x1.fab4bd3deb9f0p+1, 0x1.5f368a951603dp-1, 0x1.858505dbe50d2p-4,
         0x1.67fbaa7a04e30p-7, 0x1.1d2fb3f5468fap-10},
        {0x1.29e2c5b002fe6p+6, 0x1.9d007e7cd4543p+5, 0x1.1e4340c9ea58ep+4,
         0x1.0891d32e2c031p+2, 0x1.6ec356c25a8f5p-1, 0x1.96c3b052c3bfbp-4,
         0x1.77ec063f61f8cp-7, 0x1.29cf9ee1b32e1p-10},
        {0x1.371365e9dcd81p+6, 0x1.af495bfdc4281p+5, 0x1.2aefdc51a59cap+4,
         0x1.144869fb79223p+2, 0x1.7f005fdf29648p-1, 0x1.a8c5d23679548p-4,
         0x1.889103ada7912p-7, 0x1.36fea99e3512fp-10},
        {0x1.44d9840df98d4p+6, 0x1.c261781a2fb5fp+5, 0x1.382c1dbd86057p+4,
         0x1.2083c3eb22e1ep+2, 0x1.8ff57389b7db1p-1, 0x1.bb9412b75699dp-4,
         0x1.99f2a28783db9p-7, 0x1.44c3298259f1fp-10},
        {0x1.533bbe80e472fp+6, 0x1.d651ffb393812p+5, 0x1.45fe61361a64bp+4,
         0x1.2d49c1ad8dfcbp+2, 0x1.a1aab7cf0ebb8p-1, 0x1.cf377b1e28987p-4,
         0x1.ac193d2dfa4d4p-7, 0x1.5323bbc4071c3p-10},
        {0x1.6240feab3006bp+6, 0x1.eb2487aa73f68p+5, 0x1.546d4af90e4fdp+4,
         0x1.3aa0869241e28p+2, 0x1.b428af158b944p-1, 0x1.e3b97b238ca83p-4,
         0x1.bf0d8ca499270p-7, 0x1.622748a3a3246p-10},
        {0x1.71f07c4bb6cefp+6, 0x1.007188bc8420cp+6, 0x1.637fca8a3139ep+4,
         0x1.488e7b7af0a2ap+2, 0x1.c7783c33bfd53p-1, 0x1.f923ed788539dp-4,
         0x1.d2d8acc31530fp-7, 0x1.71d506bc7cc77p-10},
        {0x1.8251c0ef80ce5p+6, 0x1.0bcc08010a6bfp+6, 0x1.733d1e08a912fp+4,
         0x1.571a51efedcbap+2, 0x1.dba2a6b5a5049p-1, 0x1.07c08e413e175p-3,
         0x1.e784209651eb6p-7, 0x1.82347e7b00d3ep-10},
        {0x1.936cab90f8357p+6, 0x1.17a7364b22968p+6, 0x1.83acd5a9ea713p+4,
         0x1.664b07578f11dp+2, 0x1.f0b19f52339c1p-1, 0x1.136de3a67c32ep-3,
         0x1.fd19d6f2f2f1bp-7, 0x1.934d8dba63c3bp-10},
        {0x1.a54974602ae0ep+6, 0x1.2408c61937176p+6, 0x1.94d6d75c226e8p+4,
         0x1.7627e85202545p+2, 0x1.0357a249c0aacp+0, 0x1.1f9f9359b306cp-3,
         0x1.09d2179dd56bcp-6, 0x1.a5286b8b77649p-10},
        {0x1.b7f0b0b5e9ea4p+6, 0x1.30f6aa7c9f424p+6, 0x1.a6c36291d156bp+4,
         0x1.86b8943b36205p+2, 0x1.0ed313d9d1f8fp+0, 0x1.2c5b7962b6255p-3,
         0x1.1596ff2eca34dp-6, 0x1.b7cdac26794c1p-10},
        {0x1.cb6b5733ad2e2p+6, 0x1.3e7719f57f0dbp+6, 0x1.b97b1438690e8p+4,
         0x1.980500d4841e5p+2, 0x1.1ad0a8d8576c0p+0, 0x1.39a7b434337efp-3,
         0x1.21e14a027e81fp-6, 0x1.cb464509bbfd5p-10},
        {0x1.dfc2c4123629bp+6, 0x1.4c90916f0e2dbp+6, 0x1.cd06eadbd6c63p+4,
         0x1.aa157e17dff14p+2, 0x1.2756244d1e311p+0, 0x1.478aa79c5c708p-3,
         0x1.2eb6e00690ce6p-6, 0x1.df9b914722a60p-10},
        {0x1.f500bda1040a1p+6, 0x1.5b49d75db5c26p+6, 0x1.e1704af8f51f9p+4,
         0x1.bcf2ba3661046p+2, 0x1.34698a8d87a85p+0, 0x1.560affd6e476ap-3,
         0x1.3c1dec16be2dfp-6, 0x1.f4d756027e38ep-10},
        {0x1.0597bc7c611ebp+7, 0x1.6aa9ff00841e9p+6, 0x1.f6c10380fa78dp+4,
         0x1.d0a5c5c4129a7p+2, 0x1.42112420badc3p+0, 0x1.652fb4c1cf0a2p-3,
         0x1.4a1cdef3aefe3p-6, 0x1.0581e391793e4p-9},
        {0x1.112ccf7179a95p+7, 0x1.7ab86bc78723ep+6, 0x1.0681a948074c1p+5,
         0x1.e53818130b339p+2, 0x1.505380c49a722p+0, 0x1.75000d3696ea0p-3,
         0x1.58ba725b5686ap-6, 0x1.1115c61cd139ep-9},
        {0x1.1d45287c99c68p+7, 0x1.8b7cd4e0af6e0p+6, 0x1.1220f52ca5c3bp+5,
         0x1.fab393bfe317ap+2, 0x1.5f377a94f28fcp+0, 0x1.8583a2894a91ep-3,
         0x1.67fdac4462a3cp-6, 0x1.1d2ce2cffeae7p-9},
        {0x1.29e6977f44a0dp+7, 0x1.9cff48ecf10b1p+6, 0x1.1e43fb25438d2p+5,
         0x1.089145b8dcc6bp+3, 0x1.6ec43956629e3p+0, 0x1.96c2642f4bddcp-3,
         0x1.77ede23e4967dp-6, 0x1.29cd08e8103b8p-9},
        {0x1.37172e3aaa814p+7, 0x1.af4831df69d54p+6, 0x1.2af090352eb47p+5,
         0x1.1447e3680886ep+3, 0x1.7f0135e69800dp+0, 0x1.a8c49b8f73ecap-3,
         0x1.8892bcf7942c3p-6, 0x1.36fc497ceee9fp-9},
        {0x1.44dd433a4859fp+7, 0x1.c260590869b36p+6, 0x1.382ccb7988416p+5,
         0x1.208343d87250ep+3, 0x1.8ff63dd380c1ap+0, 0x1.bb92effd70381p-3,
         0x1.99f43bec19e44p-6, 0x1.44c0fa6b8ae4bp-9},
        {0x1.533f74df958d8p+7, 0x1.d650eb4e4e1c9p+6, 0x1.45ff0916776f9p+5,
         0x1.2d4947c0b9cf6p+3, 0x1.a1ab771b2fee0p+0, 0x1.cf366ae242a12p-3,
         0x1.ac1ab93cedae0p-6, 0x1.5321b9611793ep-9},
        {0x1.6244ac90369afp+7, 0x1.eb237d96383f6p+6, 0x1.546ded4588478p+5,
         0x1.3aa012762e963p+3, 0x1.b429641640ecdp+0, 0x1.e3b87c13e3e41p-3,
         0x1.bf0eedb3da9ddp-6, 0x1.62256f08cd1ecp-9},
        {0x1.71f422083bedfp+7, 0x1.007108af5e16fp+7, 0x1.63806786ad8eap+5,
         0x1.488e0cdfe13a2p+3, 0x1.c778e78e9b808p+0, 0x1.f922fe5e1e8e3p-3,
         0x1.d2d9f4f45aad9p-6, 0x1.71d3525db5fcbp-9},
        {0x1.82555ed20563cp+7, 0x1.0bcb8cc75fb83p+7, 0x1.733db5f56ea5fp+5,
         0x1.5719e88b22917p+3, 0x1.dba349048f7b5p+0, 0x1.07c01e1f681c0p-2,
         0x1.e78551dc0c8b8p-6, 0x1.8232ec22209bep-9},
        {0x1.937041e5752d6p+7, 0x1.17a6bfbd6b3bfp+7, 0x1.83ad68c3db536p+5,
         0x1.664aa2e2ebff8p+3, 0x1.f0b23924556fcp+0, 0x1.136d7a6bebbeap-2,
         0x1.fd1af314c2d3ep-6, 0x1.934c1a7e5f454p-9},
        {0x1.a54d03702f9b2p+7, 0x1.24085411c54aap+7, 0x1.94d765dcf1963p+5,
         0x1.7627888bbc772p+3, 0x1.0357eb370c73bp+1, 0x1.1f9f308c877a8p-2,
         0x1.09d29bed2f88ep-5, 0x1.a52714c8934fcp-9},
        {0x1.b7f438c8b915ep+7, 0x1.30f63cd786bafp+7, 0x1.a6c3ecb0349d3p+5,
         0x1.86b838e587613p+3, 0x1.0ed359096479ep+1, 0x1.2c5b1c9268308p-2,
         0x1.15977a7b61e2bp-5, 0x1.b7cc6f7754780p-9},
        {0x1.cb6ed88e58265p+7, 0x1.3e76b0907dda4p+7, 0x1.b97b9a2847be8p+5,
         0x1.9804a9b564e2cp+3, 0x1.1ad0ea8402a41p+1, 0x1.39a75cf8cbb3ep-2,
         0x1.21e1bcfb2153cp-5, 0x1.cb45204119cebp-9},
        {0x1.dfc63ef7b6eb3p+7, 0x1.4c902c2976ee2p+7, 0x1.cd076cce74fe9p+5,
         0x1.aa152af8c6174p+3, 0x1.275662aacc42ep+1, 0x1.478a5595bc48cp-2,
         0x1.2eb74b4b83c19p-5, 0x1.df9a826a5f38dp-9},
        {0x1.f504325255d6fp+7, 0x1.5b4976185b32dp+7, 0x1.e170c91d1c477p+5,
         0x1.bcf26ae403c6ap+3, 0x1.3469c5cf86063p+1, 0x1.560ab2ac1ff58p-2,
         0x1.3c1e503b0e2b3p-5, 0x1.f4d65b4498f74p-9},
        {0x1.059973da7c81ap+8, 0x1.6aa9a19da5da3p+7, 0x1.f6c17e031efe3p+5,
         0x1.d0a57a0e32f4fp+3, 0x1.42115c75ff409p+1, 0x1.652f6c20955c2p-2,
         0x1.4a1d3c7e60818p-5, 0x1.05816f700f117p-8},
        {0x1.112e83f3a8f36p+8, 0x1.7ab8122abf8b9p+7, 0x1.0681e4cd3995fp+6,
         0x1.e537cfcc4069fp+3, 0x1.5053b65902336p+1, 0x1.74ffc8d2a88bdp-2,
         0x1.58bac9c877dddp-5, 0x1.11155a79a5c67p-8},
        {0x1.1d46da40a0671p+8, 0x1.8b7c7eeee29fcp+7, 0x1.12212f0a11039p+6,
         0x1.fab34ebd6b06ep+3, 0x1.5f37ad917ccf7p+1, 0x1.8583621bfbb13p-2,
         0x1.67fdfe0603d15p-5, 0x1.1d2c7efc9d03dp-8},
        {0x1.29e846a212198p+8, 0x1.9cfef68c3cd7bp+7, 0x1.1e44336e07a98p+6,
         0x1.089124c5a63d5p+4, 0x1.6ec469e165c88p+1, 0x1.96c2277711c82p-2,
         0x1.77ee2ebd5c633p-5, 0x1.29ccac453eeb9p-8},
        {0x1.3718dad863f64p+8, 0x1.af47e2f716a43p+7, 0x1.2af0c6fb80ed6p+6,
         0x1.1447c3efdc550p+4, 0x1.7f016423f3050p+1, 0x1.a8c4624f7c7f4p-2,
         0x1.88930494b7e8dp-5, 0x1.36fbf37940752p-8},
        {0x1.44deed6e51ad7p+8, 0x1.c2600d80dc453p+7, 0x1.382d00cec0a5ap+6,
         0x1.208325c96b00cp+4, 0x1.8ff669e4c862ep+1, 0x1.bb92b9fd425f8p-2,
         0x1.99f47f0052480p-5, 0x1.44c0aa8213521p-8},
        {0x1.53411cc49a0bep+8, 0x1.d650a310fa1dbp+7, 0x1.45ff3d0b1d758p+6,
         0x1.2d492b09f5f51p+4, 0x1.a1aba11fd8833p+1, 0x1.cf3637ed670f5p-2,
         0x1.ac1af81a4a620p-5, 0x1.53216f184331cp-8},
        {0x1.62465240313f5p+8, 0x1.eb23388d939e3p+7, 0x1.546e1fe95e9a3p+6,
         0x1.3a9ff707c0680p+4, 0x1.b4298c2bc4dcfp+1, 0x1.e3b84bf9953a4p-2,
         0x1.bf0f28a60e710p-5, 0x1.622529f154df6p-8},
        {0x1.71f5c59c7f43ep+8, 0x1.0070e7bb19939p+8, 0x1.638098e8bd1c8p+6,
         0x1.488df2aabf513p+4, 0x1.c7790dd09ec37p+1, 0x1.f922d0f1004a1p-2,
         0x1.d2da2c4145111p-5, 0x1.71d31211ae48fp-8},
        {0x1.82570063430c0p+8, 0x1.0bcb6d5954a3cp+8, 0x1.733de62410ffcp+6,
         0x1.5719cf8119baep+4, 0x1.dba36d8d005f0p+1, 0x1.07c008aa55e33p-1,
         0x1.e78585c436873p-5, 0x1.8232b0441fd22p-8},
        {0x1.9371e18bc50b6p+8, 0x1.17a6a1cc3567ep+8, 0x1.83ad97ccc4660p+6,
         0x1.664a8af6920a1p+4, 0x1.f0b25c0b8adc3p+1, 0x1.136d6624af713p-1,
         0x1.fd1b23d3d0ac5p-5, 0x1.934be2b8b9689p-8},
        {0x1.a54ea14316aefp+8, 0x1.240837946bafbp+8, 0x1.94d793cd38cc9p+6,
         0x1.762771b063e91p+4, 0x1.0357fbe5772bap+2, 0x1.1f9f1d60d245ep-1,
         0x1.09d2b2d3bbdd0p-4, 0x1.a526e0cca8b48p-8},
        {0x1.b7f5d4df30089p+8, 0x1.30f621c576b82p+8, 0x1.a6c419945d732p+6,
         0x1.86b8230f3405cp+4, 0x1.0ed368fd5c291p+2, 0x1.2c5b0a71299c9p-1,
         0x1.15979002778b7p-4, 0x1.b7cc3efcf1777p-8},
        {0x1.cb7072fed18c0p+8, 0x1.3e7696e186b5ap+8, 0x1.b97bc60c49cf3p+6,
         0x1.980494d8c11ecp+4, 0x1.1ad0f9c79f6f8p+2, 0x1.39a74bd219ee9p-1,
         0x1.21e1d13a5fa13p-4, 0x1.cb44f305e5c31p-8},
        {0x1.dfc7d7d8253efp+8, 0x1.4c9013d5c5949p+8, 0x1.cd0797bdc3978p+6,
         0x1.aa15170b18f5ap+4, 0x1.275671478c931p+2, 0x1.478a455abe5dcp-1,
         0x1.2eb75e58cc915p-4, 0x1.df9a583159341p-8},
        {0x1.f505c9b831351p+8, 0x1.5b495f1876323p+8, 0x1.e170f322ad87dp+6,
         0x1.bcf257db27affp+4, 0x1.3469d3ce58ca3p+2, 0x1.560aa34ef9c6dp-1,
         0x1.3c1e622aa9a7ap-4, 0x1.f4d633d5a0d0ap-8},
        {0x1.059a3edaa2523p+9, 0x1.6aa98bea69932p+8, 0x1.f6c1a729728a8p+6,
         0x1.d0a567e08d04cp+4, 0x1.421169df4d714p+2, 0x1.652f5d945534ep-1,
         0x1.4a1d4d631dc79p-4, 0x1.05815d03c44fap-7},
        {0x1.112f4e4b50afep+9, 0x1.7ab7fdbd5a972p+8, 0x1.0681f8f5cc3edp+7,
         0x1.e537be70b8570p+4, 0x1.5053c334b7a54p+2, 0x1.74ffbb0b3629cp-1,
         0x1.58bad9b3cad39p-4, 0x1.11154940c042cp-7},
        {0x1.1d47a3f9de8c5p+9, 0x1.8b7c6bc0d2660p+8, 0x1.122142ccdf2edp+7,
         0x1.fab33e2b6392fp+4, 0x1.5f37b9e710620p+2, 0x1.8583550e08a45p-1,
         0x1.67fe0d0820700p-4, 0x1.1d2c6ee12dca0p-7},
        {0x1.29e90fc6c83ffp+9, 0x1.9cfee4974a548p+8, 0x1.1e4446cfb1a6dp+7,
         0x1.08911cdd4e306p+5, 0x1.6ec475b7e0ff7p+2, 0x1.96c21b180b0bfp-1,
         0x1.77ee3ce54fafap-4, 0x1.29cc9d330bca8p-7},
        {0x1.3719a37243225p+9, 0x1.af47d2355357ap+8, 0x1.2af0da0077600p+7,
         0x1.1447bc6452012p+5, 0x1.7f016f81f9174p+2, 0x1.a8c456957d32dp-1,
         0x1.889311f07ed19p-4, 0x1.36fbe55d9f4d7p-7},
        {0x1.44dfb586dc87ap+9, 0x1.c25ffdec9f4d0p+8, 0x1.382d137b47020p+7,
         0x1.20831e9704086p+5, 0x1.8ff674d09cc9dp+2, 0x1.bb92aedf0783ep-1,
         0x1.99f48b9cee98fp-4, 0x1.44c09d4bc8b3ap-7},
        {0x1.5341e46527033p+9, 0x1.d65094a4dd750p+8, 0x1.45ff4f634c5a8p+7,
         0x1.2d49242d38ac0p+5, 0x1.a1abab9f65140p+2, 0x1.cf362d6244376p-1,
         0x1.ac1b0403d5f9dp-4, 0x1.532162b763f74p-7},
        {0x1.62471971ec953p+9, 0x1.eb232b4471824p+8, 0x1.546e31f126094p+7,
         0x1.3a9ff07d611d4p+5, 0x1.b42996449f75bp+2, 0x1.e3b841f96a16dp-1,
         0x1.bf0f33e7cce0dp-4, 0x1.62251e572a7dep-7},
        {0x1.71f68c686d047p+9, 0x1.0070e1a591cf4p+9, 0x1.6380aaa3e691ep+7,
         0x1.488dec6f9dc47p+5, 0x1.c77917880e930p+2, 0x1.f922c7742f00cp-1,
         0x1.d2da36e5b3c96p-4, 0x1.71d307309d929p-7},
        {0x1.8257c6d240f2dp+9, 0x1.0bcb67d07fe4dp+9, 0x1.733df796416d2p+7,
         0x1.5719c9923ebb2p+5, 0x1.dba376e802d08p+2, 0x1.07c0042a08015p+0,
         0x1.e7858fd51bb34p-4, 0x1.8232a60f91efep-7},
        {0x1.9372a7a68c561p+9, 0x1.17a69ccdda05ap+9, 0x1.83ada8f97e123p+7,
         0x1.664a85512d39fp+5, 0x1.f0b2650ed82c6p+2, 0x1.136d61df22c8ep+0,
         0x1.fd1b2d5a48d9fp-4, 0x1.934bd92506d69p-7},
        {0x1.a54f67123dde6p+9, 0x1.2408331e6b8f1p+9, 0x1.94d7a4b7dd184p+7,
         0x1.76276c51c9a6dp+5, 0x1.0358003d7eed3p+3, 0x1.1f9f1952e21b3p+0,
         0x1.09d2b7560133cp-3, 0x1.a526d7cf06108p-7},
        {0x1.b7f69a6b2c91cp+9, 0x1.30f61dd5ce4afp+9, 0x1.a6c42a402e85ep+7,
         0x1.86b81df4db73fp+5, 0x1.0ed36d2de237fp+3, 0x1.2c5b0697e2760p+0,
         0x1.15979447bd203p-3, 0x1.b7cc368b5df6cp-7},
        {0x1.cb71384ff978ep+9, 0x1.3e7693764c076p+9, 0x1.b97bd67c6c2dap+7,
         0x1.98049000424bfp+5, 0x1.1ad0fdd2a4656p+3, 0x1.39a7482ab64c4p+0,
         0x1.21e1d54659022p-3, 0x1.cb44eb171b287p-7},
        {0x1.dfc89cf6b0c12p+9, 0x1.4c9010ed27637p+9, 0x1.cd07a7f53fa3bp+7,
         0x1.aa1512722b20ep+5, 0x1.2756752ef62bbp+3, 0x1.478a41e2a3ae1p+0,
         0x1.2eb7622eeec29p-3, 0x1.df9a50bcbd231p-7},
        {0x1.f5068eac3c29bp+9, 0x1.5b495cb0bb13bp+9, 0x1.e171032470edcp+7,
         0x1.bcf2537f9fa7ep+5, 0x1.3469d793f3827p+3, 0x1.560aa003b5934p+0,
         0x1.3c1e65ce2fa6ap-3, 0x1.f4d62cd3375e3p-7},
        {0x1.059aa1436805bp+10, 0x1.6aa98a01ef23cp+9, 0x1.f6c1b6f851998p+7,
         0x1.d0a563c05ba02p+5, 0x1.42116d84ce0aep+3, 0x1.652f5a739a835p+0,
         0x1.4a1d50d70cb49p-3, 0x1.058159b7f401ap-6},
        {0x1.112fb0a6ca62fp+10, 0x1.7ab7fc5294b4cp+9, 0x1.068200c527b80p+8,
         0x1.e537ba89e9044p+5, 0x1.5053c6bbbc917p+3, 0x1.74ffb812db0d5p+0,
         0x1.58badcfaf5c87p-3, 0x1.11154626e2e99p-6},
        {0x1.1d48064bf3fadp+10, 0x1.8b7c6ad24a740p+9, 0x1.12214a857947ep+8,
         0x1.fab33a7c1afe0p+5, 0x1.5f37bd5123148p+3, 0x1.8583523c03fabp+0,
         0x1.67fe10252c0b8p-3, 0x1.1d2c6bf61030dp-6},
        {0x1.29e9721355c49p+10, 0x1.9cfee4239e899p+9, 0x1.1e444e72d2326p+8,
         0x1.08911b208b96ap+6, 0x1.6ec47906772bdp+3, 0x1.96c2186a72639p+0,
         0x1.77ee3fdab55b7p-3, 0x1.29cc9a73b43f1p-6},
        {0x1.371a05bd1a5a8p+10, 0x1.af47d23b36147p+9, 0x1.2af0e18f5be18p+8,
         0x1.1447bac19acc4p+6, 0x1.7f0172b675d9dp+3, 0x1.a8c4540a82d6bp+0,
         0x1.889314c08fc88p-3, 0x1.36fbe2c74944dp-6},
        {0x1.44e017d3c4f28p+10, 0x1.c25ffe6ad67b6p+9, 0x1.382d1af72332cp+8,
         0x1.20831d0d8cbf0p+6, 0x1.8ff677ec51bdep+3, 0x1.bb92ac74f8aa8p+0,
         0x1.99f48e49d6b29p-3, 0x1.44c09adbe0c99p-6},
        {0x1.534246b7de9b4p+10, 0x1.d650959a41ef6p+9, 0x1.45ff56cd4aa88p+8,
         0x1.2d4922bc401ebp+6, 0x1.a1abaea393589p+3, 0x1.cf362b178751dp+0,
         0x1.ac1b068f9e40ap-3, 0x1.5321606b84408p-6},
        {0x1.62477bce2865cp+10, 0x1.eb232cafee82ep+9, 0x1.546e394a680f4p+8,
         0x1.3a9fef242fe6fp+6, 0x1.b429993278a1ap+3, 0x1.e3b83fcc7d3d9p+0,
         0x1.bf0f36545df6ap-3, 0x1.62251c2d17263p-6},
        {0x1.71f6eed1d9ba1p+10, 0x1.0070e295db1acp+10, 0x1.6380b1ed858a8p+8,
         0x1.488deb2d85d1ap+6, 0x1.c7791a60b59a5p+3, 0x1.f922c563a67c7p+0,
         0x1.d2da3934d81ecp-3, 0x1.71d3052641c04p-6},
        {0x1.8258294c83688p+10, 0x1.0bcb68fadb2d6p+10, 0x1.733dfed14e9fbp+8,
         0x1.5719c8669ad84p+6, 0x1.dba379ac8cdb4p+3, 0x1.07c0032f4a771p+1,
         0x1.e78592088194cp-3, 0x1.8232a422fce63p-6},
        {0x1.93730a35421d7p+10, 0x1.17a69e31d6e8ep+10, 0x1.83adb027033aap+8,
         0x1.664a843b60a83p+6, 0x1.f0b267c04d607p+3, 0x1.136d60f14a49fp+1,
         0x1.fd1b2f7384570p-3, 0x1.934bd75469528p-6},
        {0x1.a54fc9b8fdc4ep+10, 0x1.240834bba1dbap+10, 0x1.94d7abd8dcca6p+8,
         0x1.76276b513fb6dp+6, 0x1.0358018d2d0c6p+4, 0x1.1f9f187156292p+1,
         0x1.09d2b856478afp-2, 0x1.a526d618afda9p-6},
        {0x1.b7f6fd2d87219p+10, 0x1.30f61fabddc8cp+10, 0x1.a6c43155a48bep+8,
         0x1.86b81d090726dp+6, 0x1.0ed36e74fc039p+4, 0x1.2c5b05c213327p+1,
         0x1.1597953c5e6f7p-2, 0x1.b7cc34edbba51p-6},
        {0x1.cb719b3179775p+10, 0x1.3e769584dc42ap+10, 0x1.b97bdd874de20p+8,
         0x1.98048f289df91p+6, 0x1.1ad0ff119c8edp+4, 0x1.39a747601bf47p+1,
         0x1.21e1d62ffcffap-2, 0x1.cb44e990b40dcp-6},
        {0x1.dfc8fffadba90p+10, 0x1.4c901333e77a8p+10, 0x1.cd07aef67c476p+8,
         0x1.aa1511ae38211p+6, 0x1.275676663a3d5p+4, 0x1.478a4122be1f6p+1,
         0x1.2eb7630e332fcp-2, 0x1.df9a4f4c31664p-6},
        {0x1.f506f1d692a32p+10, 0x1.5b495f2f6187bp+10, 0x1.e1710a1cf1fa5p+8,
         0x1.bcf252cee6057p+6, 0x1.3469d8c3ec29ap+4, 0x1.560a9f4e0bd7ap+1,
         0x1.3c1e66a3a8f7bp-2, 0x1.f4d62b773e37ap-6},
        {0x1.059ad2ed67303p+11, 0x1.6aa98cb839ab9p+10, 0x1.f6c1bde8fb0fcp+8,
         0x1.d0a5632269cb0p+6, 0x1.42116eaddf5d4p+4, 0x1.652f59c7ba654p+1,
         0x1.4a1d51a346ac1p-2, 0x1.05815913a70e3p-5},
        {0x1.112fe26759aa3p+11, 0x1.7ab7ff4048125p+10, 0x1.0682043a00117p+9,
         0x1.e537b9fe538abp+6, 0x1.5053c7de464ecp+4, 0x1.74ffb77058b32p+1,
         0x1.58baddbe74085p-2, 0x1.1115458bb5e2fp-5},
        {0x1.1d483824cdcf8p+11, 0x1.8b7c6df7324c1p+10, 0x1.12214df742362p+9,
         0x1.fab33a027c495p+6, 0x1.5f37be6d80e45p+4, 0x1.858351a279881p+1,
         0x1.67fe10e06a9b9p-2, 0x1.1d2c6b637caa1p-5},
        {0x1.29e9a406330fap+11, 0x1.9cfee77f8d3dap+10, 0x1.1e4451e1f65b6p+9,
         0x1.08911aec87a0fp+7, 0x1.6ec47a1d00d78p+4, 0x1.96c217d97fa17p+1,
         0x1.77ee408e2926bp-2, 0x1.29cc99e93c6d2p-5},
        {0x1.371a37cbb2b26p+11, 0x1.af47d5ce049ecp+10, 0x1.2af0e4fc43bb8p+9,
         0x1.1447ba9634ed0p+7, 0x1.7f0173c77f838p+4, 0x1.a8c45381cce07p+1,
         0x1.8893156ca711ap-2, 0x1.36fbe24477662p-5},
        {0x1.44e049ffcecf7p+11, 0x1.c2600234644cdp+10, 0x1.382d1e623523fp+9,
         0x1.20831cea9a3b0p+7, 0x1.8ff678f82c142p+4, 0x1.bb92abf429a10p+1,
         0x1.99f48eeef980dp-2, 0x1.44c09a6046994p-5},
        {0x1.534279030f8a6p+11, 0x1.d650999a74cfap+10, 0x1.45ff5a36eb252p+9,
         0x1.2d4922a198b34p+7, 0x1.a1abafaa8bc72p+4, 0x1.cf362a9e4e12ap+1,
         0x1.ac1b072e2ec4cp-2, 0x1.53215ff6ba739p-5},
        {0x1.6247ae3a353b5p+11, 0x1.eb2330e6b271ep+10, 0x1.546e3cb2f9b6dp+9,
         0x1.3a9fef11adb01p+7, 0x1.b4299a34d97f7p+4, 0x1.e3b83f5a8d1f7p+1,
         0x1.bf0f36ecb8e98p-2, 0x1.62251bbebcf30p-5},
        {0x1.71f7216076c31p+11, 0x1.0070e4cc7ea7bp+11, 0x1.6380b55569438p+9,
         0x1.488deb2305328p+7, 0x1.c7791b5ec6552p+4, 0x1.f922c4f8b70f9p+1,
         0x1.d2da39c755190p-2, 0x1.71d304bdfc6e2p-5},
        {0x1.82585bff649acp+11, 0x1.0bcb6b4cbc5e8p+11, 0x1.733e0238e3b2ap+9,
         0x1.5719c863fa644p+7, 0x1.dba37aa692207p+4, 0x1.07c002fd30e06p+2,
         0x1.e785929573610p-2, 0x1.8232a3c077659p-5},
        {0x1.93733d0e1b475p+11, 0x1.17a6a09ef4c11p+11, 0x1.83adb38ea76b8p+9,
         0x1.664a8440810d9p+7, 0x1.f0b268b689441p+4, 0x1.136d60c26e7d4p+2,
         0x1.fd1b2ffb393e8p-2, 0x1.934bd6f753dc9p-5},
        {0x1.a54ffcb982bc5p+11, 0x1.24083743fe461p+11, 0x1.94d7af40ec71bp+9,
         0x1.76276b5e03aabp+7, 0x1.03580206861d3p+5, 0x1.1f9f184599998p+2,
         0x1.09d2b897a893fp-1, 0x1.a526d5c0bf978p-5},
        {0x1.b7f730576bf24p+11, 0x1.30f6224f7d8e1p+11, 0x1.a6c434be7aae4p+9,
         0x1.86b81d1d5351cp+7, 0x1.0ed36eecaeda0p+5, 0x1.2c5b059959033p+2,
         0x1.1597957b6919bp-1, 0x1.b7cc349aaa592p-5},
        {0x1.cb71ce8672901p+11, 0x1.3e769843c6feap+11, 0x1.b97be0f144477p+9,
         0x1.98048f4458e55p+7, 0x1.1ad0ff87c6b91p+5, 0x1.39a7473a48e26p+2,
         0x1.21e1d66cd27adp-1, 0x1.cb44e9423fcc1p-5},
        {0x1.dfc9337c9e08ap+11, 0x1.4c90160e27928p+11, 0x1.cd07b261eb915p+9,
         0x1.aa1511d14a296p+7, 0x1.275676daf8408p+5, 0x1.478a40ffb86abp+2,
         0x1.2eb76348f2ec4p-1, 0x1.df9a4f021c492p-5},
        {0x1.f5072586d404fp+11, 0x1.5b4962250421dp+11, 0x1.e1710d8a31b90p+9,
         0x1.bcf252f939450p+7, 0x1.3469d9375990bp+5, 0x1.560a9f2dbb300p+2,
         0x1.3c1e66dc70c20p-1, 0x1.f4d62b314e1dep-5},
        {0x1.059aecdda2b3fp+12, 0x1.6aa98fc94ea66p+11, 0x1.f6c1c15861d6dp+9,
         0x1.d0a56353ea0e3p+7, 0x1.42116f2016c6dp+5, 0x1.652f59aa07d69p+2,
         0x1.4a1d51da32c65p-1, 0x1.058158f2a6359p-4},
        {0x1.112ffc708bdc5p+12, 0x1.7ab8026ce1fd5p+11, 0x1.068205f2f1cedp+10,
         0x1.e537ba36ee40cp+7, 0x1.5053c84f617a8p+5, 0x1.74ffb7552e937p+2,
         0x1.58baddf39f41ep-1, 0x1.1115456c92979p-4},
        {0x1.1d485247d32a9p+12, 0x1.8b7c713f6660cp+11, 0x1.12214fb19cb84p+10,
         0x1.fab33a422076ep+7, 0x1.5f37bedd98bf5p+5, 0x1.85835189c3671p+2,
         0x1.67fe1113ee67cp-1, 0x1.1d2c6b461ed08p-4},
        {0x1.29e9be43e8c2ap+12, 0x1.9cfeeae373592p+11, 0x1.1e44539de3ac0p+10,
         0x1.08911b0fd6ba1p+8, 0x1.6ec47a8c2d886p+5, 0x1.96c217c32a386p+2,
         0x1.77ee40c01db17p-1, 0x1.29cc99cd8d5c8p-4},
        {0x1.371a5224f6b5cp+12, 0x1.af47d94db73bep+11, 0x1.2af0e6b9ed8c1p+10,
         0x1.1447babcfa0d5p+8, 0x1.7f017435d875cp+5, 0x1.a8c4536dc6037p+2,
         0x1.8893159d23536p-1, 0x1.36fbe22a61d0ep-4},
        {0x1.44e064757ff9dp+12, 0x1.c26005d0007f1p+11, 0x1.382d2021c4d68p+10,
         0x1.20831d14cf1fep+8, 0x1.8ff67965c802bp+5, 0x1.bb92abe26030dp+2,
         0x1.99f48f1e1350bp-1, 0x1.44c09a47b6776p-4},
        {0x1.534293960da55p+12, 0x1.d6509d521a3e5p+11, 0x1.45ff5bf889d4ep+10,
         0x1.2d4922cf37cd5p+8, 0x1.a1abb01780c6dp+5, 0x1.cf362a8eb1efcp+2,
         0x1.ac1b075bfae9ep-1, 0x1.53215fdf9cee9p-4},
        {0x1.6247c8eb6117ep+12, 0x1.eb2334ba83540p+11, 0x1.546e3e76d0405p+10,
         0x1.3a9fef42b21e3p+8, 0x1.b4299aa13d08bp+5, 0x1.e3b83f4d0f1d9p+2,
         0x1.bf0f37194b2b2p-1, 0x1.62251ba900530p-4},
        {0x1.71f73c30b24e3p+12, 0x1.0070e6c48f341p+12, 0x1.6380b71ba04ccp+10,
         0x1.488deb576abcep+8, 0x1.c7791bcaad4d2p+5, 0x1.f922c4ed48ea2p+2,
         0x1.d2da39f2c04dep-1, 0x1.71d304a990083p-4},
        {0x1.825876ef92f1ap+12, 0x1.0bcb6d5308ac1p+12, 0x1.733e0401a3b2dp+10,
         0x1.5719c89bbd782p+8, 0x1.dba37b1210e22p+5, 0x1.07c002f87b07fp+3,
         0x1.e78592bfc97d8p-1, 0x1.8232a3ad4b8b8p-4},
        {0x1.9373581f20cbap+12, 0x1.17a6a2b391b8fp+12, 0x1.83adb55a18b2dp+10,
         0x1.664a847b9eb90p+8, 0x1.f0b26921b3a85p+5, 0x1.136d60beb3945p+3,
         0x1.fd1b30248b61ep-1, 0x1.934bd6e559cd7p-4},
        {0x1.a55017ec45287p+12, 0x1.2408396702134p+12, 0x1.94d7b10f3730ap+10,
         0x1.76276b9c79988p+8, 0x1.0358023bfad02p+6, 0x1.1f9f1842d3b9ap+3,
         0x1.09d2b8abd7d49p+0, 0x1.a526d5afe9719p-4},
        {0x1.b7f74bacd26d3p+12, 0x1.30f62480ff9ccp+12, 0x1.a6c4368fc6fcfp+10,
         0x1.86b81d5f1fc60p+8, 0x1.0ed36f220c843p+6, 0x1.2c5b059782a5dp+3,
         0x1.1597958f26567p+0, 0x1.b7cc348aeb0c6p-4},
        {0x1.cb71e9ff65c19p+12, 0x1.3e769a83dffb7p+12, 0x1.b97be2c5ba2cbp+10,
         0x1.98048f897ab9cp+8, 0x1.1ad0ffbd169b8p+6, 0x1.39a747395cdc7p+3,
         0x1.21e1d68025284p+0, 0x1.cb44e9338b0dep-4},
        {0x1.dfc94f1a082d7p+12, 0x1.4c90185cf16a3p+12, 0x1.cd07b439b309ap+10,
         0x1.aa151219c0ca4p+8, 0x1.27567710436a3p+6, 0x1.478a40ffb1e89p+3,
         0x1.2eb7635be22b6p+0, 0x1.df9a4ef466888p-4},
        {0x1.f5074149a1026p+12, 0x1.5b4964829a00cp+12, 0x1.e1710f6572bd4p+10,
         0x1.bcf2534504adfp+8, 0x1.3469d96ca8e1fp+6, 0x1.560a9f2e95b1dp+3,
         0x1.3c1e66ef03654p+0, 0x1.f4d62b248c789p-4},
        {0x1.059afad231701p+13, 0x1.6aa99235ccf8fp+12, 0x1.f6c1c33744632p+10,
         0x1.d0a563a30ac7ap+8, 0x1.42116f5572f4bp+6, 0x1.652f59abbf2c7p+3,
         0x1.4a1d51ec6f563p+0, 0x1.058158ecba51ep-3},
        {0x1.11300a78ba8f4p+13, 0x1.7ab804e8666fcp+12, 0x1.068206e447dbcp+11,
         0x1.e537ba89655d1p+8, 0x1.5053c884d3118p+6, 0x1.74ffb757beda7p+3,
         0x1.58bade058c017p+0, 0x1.1115456716d1ap-3},
        {0x1.1d4860641a805p+13, 0x1.8b7c73ca0fdfdp+12, 0x1.122150a4eb96fp+11,
         0x1.fab33a97ef900p+8, 0x1.5f37bf132826bp+6, 0x1.8583518d2905bp+3,
         0x1.67fe112591589p+0, 0x1.1d2c6b410ea04p-3},
        {0x1.29e9cc74c2636p+13, 0x1.9cfeed7d62128p+12, 0x1.1e4454933f726p+11,
         0x1.08911b3c6b54bp+9, 0x1.6ec47ac1e304cp+6, 0x1.96c217c761dbcp+3,
         0x1.77ee40d17c97ap+0, 0x1.29cc99c8e47f0p-3},
        {0x1.371a606add504p+13, 0x1.af47dbf70c9f2p+12, 0x1.2af0e7b16a5e8p+11,
         0x1.1447baeb3d076p+9, 0x1.7f01746bbc2bbp+6, 0x1.a8c45372cc9c9p+3,
         0x1.889315ae43b91p+0, 0x1.36fbe2261c442p-3},
        {0x1.44e072d0ef4d5p+13, 0x1.c2600888df3e9p+12, 0x1.382d211b76eaap+11,
         0x1.20831d44c20b5p+9, 0x1.8ff6799be1f9ap+6, 0x1.bb92abe832f1ep+3,
         0x1.99f48f2efa89ap+0, 0x1.44c09a43d076fp-3},
        {0x1.5342a207828bap+13, 0x1.d650a01aa6504p+12, 0x1.45ff5cf48574bp+11,
         0x1.2d492300dc7bfp+9, 0x1.a1abb04dd8eb6p+6, 0x1.cf362a954e49ap+3,
         0x1.ac1b076cae16cp+0, 0x1.53215fdc12f00p-3},
        {0x1.6247d773598fcp+13, 0x1.eb233792e1f42p+12, 0x1.546e3f7529cd1p+11,
         0x1.3a9fef760aa0dp+9, 0x1.b4299ad7db2efp+6, 0x1.e3b83f5472bd9p+3,
         0x1.bf0f3729cf3c9p+0, 0x1.62251ba5cf02ap-3},
        {0x1.71f74acfad854p+13, 0x1.0070e838bb0c7p+13, 0x1.6380b81c6c420p+11,
         0x1.488deb8c79629p+9, 0x1.c7791c0199332p+6, 0x1.f922c4f571b7bp+3,
         0x1.d2da3a031a074p+0, 0x1.71d304a6b4466p-3},
        {0x1.825885a6114eap+13, 0x1.0bcb6ecf44f26p+13, 0x1.733e0504f6a95p+11,
         0x1.5719c8d284cd9p+9, 0x1.dba37b4952322p+6, 0x1.07c002fcf1155p+4,
         0x1.e78592cffd77ep+0, 0x1.8232a3aac2699p-3},
        {0x1.937366eda3f91p+13, 0x1.17a6a437f2f80p+13, 0x1.83adb66007634p+11,
         0x1.664a84b42187ep+9, 0x1.f0b2695951fafp+6, 0x1.136d60c38a733p+4,
         0x1.fd1b30349e0e9p+0, 0x1.934bd6e3208b3p-3},
        {0x1.a55026d3501e6p+13, 0x1.24083af39d7c4p+13, 0x1.94d7b217d6769p+11,
         0x1.76276bd6bae73p+9, 0x1.03580257fc3f2p+7, 0x1.1f9f18480aaf3p+4,
         0x1.09d2b8b3d2aa0p+1, 0x1.a526d5adfd7acp-3},
        {0x1.b7f75aace97c3p+13, 0x1.30f62615eb084p+13, 0x1.a6c4379b2bd9cp+11,
         0x1.86b81d9b22d6cp+9, 0x1.0ed36f3e43f69p+7, 0x1.2c5b059d1910ap+4,
         0x1.1597959714bf9p+1, 0x1.b7cc348949f67p-3},
        {0x1.cb71f9190e9d0p+13, 0x1.3e769c2131eaap+13, 0x1.b97be3d3f9ca4p+11,
         0x1.98048fc7430a9p+9, 0x1.1ad0ffd987c91p+7, 0x1.39a7473f52338p+4,
         0x1.21e1d68809293p+1, 0x1.cb44e9323295dp-3},
        {0x1.dfc95e4dc9f5fp+13, 0x1.4c901a02c1086p+13, 0x1.cd07b54ae2bcfp+11,
         0x1.aa15125952147p+9, 0x1.2756772cf205ep+7, 0x1.478a410605baep+4,
         0x1.2eb76363bdb8fp+1, 0x1.df9a4ef35490bp-3},
        {0x1.f50750980450bp+13, 0x1.5b496630ff249p+13, 0x1.e1711079a8098p+11,
         0x1.bcf2538662e5ep+9, 0x1.3469d989989acp+7, 0x1.560a9f3547a56p+4,
         0x1.3c1e66f6d865fp+1, 0x1.f4d62b23bf073p-3},
        {0x1.059b0286f8e7ep+14, 0x1.6aa993ece025cp+13, 0x1.f6c1c44e94fc6p+11,
         0x1.d0a563e63a1c7p+9, 0x1.42116f72a7768p+7, 0x1.652f59b2cefddp+4,
         0x1.4a1d51f43fa33p+1, 0x1.058158ec74f04p-2},
        {0x1.1130123b5dac7p+14, 0x1.7ab806a840d79p+13, 0x1.0682077188c2bp+12,
         0x1.e537bace6a38cp+9, 0x1.5053c8a250062p+7, 0x1.74ffb75f2c5c0p+4,
         0x1.58bade0d59676p+1, 0x1.11154566f1eb2p-2},
        {0x1.1d486834dfe3bp+14, 0x1.8b7c7592cb648p+13, 0x1.12215133d0272p+12,
         0x1.fab33adece96fp+9, 0x1.5f37bf30f1366p+7, 0x1.85835194f41f4p+4,
         0x1.67fe112d5d989p+1, 0x1.1d2c6b4109684p-2},
        {0x1.29e9d453f17fbp+14, 0x1.9cfeef4f1947ep+13, 0x1.1e445523d2d76p+12,
         0x1.08911b60ca5d4p+10, 0x1.6ec47adffbd74p+7, 0x1.96c217cf8a89dp+4,
         0x1.77ee40d94967fp+1, 0x1.29cc99c8fe374p-2},
        {0x1.371a6858be6fbp+14, 0x1.af47ddd1daccap+13, 0x1.2af0e843b7e1cp+12,
         0x1.1447bb108e21cp+10, 0x1.7f01748a28693p+7, 0x1.a8c4537b52f00p+4,
         0x1.889315b612c60p+1, 0x1.36fbe226543c6p-2},
        {0x1.44e07acdcb972p+14, 0x1.c2600a6ce0613p+13, 0x1.382d21af89f4dp+12,
         0x1.20831d6b07e18p+10, 0x1.8ff679baa54b3p+7, 0x1.bb92abf1170f5p+4,
         0x1.99f48f36cd762p+1, 0x1.44c09a44260c2p-2},
        {0x1.5342aa13a409dp+14, 0x1.d650a207f71c9p+13, 0x1.45ff5d8a698f1p+12,
         0x1.2d49232819d53p+10, 0x1.a1abb06cf6fbep+7, 0x1.cf362a9e90694p+4,
         0x1.ac1b0774867d4p+1, 0x1.53215fdc858bcp-2},
        {0x1.6247df8f0b34dp+14, 0x1.eb2339899fd85p+13, 0x1.546e400ceaa33p+12,
         0x1.3a9fef9e4261dp+10, 0x1.b4299af757abfp+7, 0x1.e3b83f5e132a9p+4,
         0x1.bf0f3731aeaf8p+1, 0x1.62251ba65e1a9p-2},
        {0x1.71f752fb3b321p+14, 0x1.0070e938df9f7p+14, 0x1.6380b8b615a29p+12,
         0x1.488debb5ae8d7p+10, 0x1.c7791c2177cd7p+7, 0x1.f922c4ff70cffp+4,
         0x1.d2da3a0b02120p+1, 0x1.71d304a75f5bap-2},
        {0x1.82588de1c7d88p+14, 0x1.0bcb6fd43e9a6p+14, 0x1.733e05a09487ep+12,
         0x1.5719c8fcba821p+10, 0x1.dba37b69969e8p+7, 0x1.07c00302202f3p+5,
         0x1.e78592d7ef9f0p+1, 0x1.8232a3ab89085p-2},
        {0x1.93736f39d12f5p+14, 0x1.17a6a541d1893p+14, 0x1.83adb6fda5d9bp+12,
         0x1.664a84df5b038p+10, 0x1.f0b26979fff2fp+7, 0x1.136d60c8e95c0p+5,
         0x1.fd1b303c9bd0cp+1, 0x1.934bd6e4024a1p-2},
        {0x1.a5502f3042d0dp+14, 0x1.24083c02712c5p+14, 0x1.94d7b2b781c63p+12,
         0x1.76276c02fb853p+10, 0x1.0358026889e07p+8, 0x1.1f9f184d99b10p+5,
         0x1.09d2b8b7d8153p+2, 0x1.a526d5aef9fabp-2},
        {0x1.b7f7631af1810p+14, 0x1.30f62729c46f8p+14, 0x1.a6c4383cf06cep+12,
         0x1.86b81dc86e109p+10, 0x1.0ed36f4f0a1fdp+8, 0x1.2c5b05a2d87e4p+5,
         0x1.1597959b216eep+2, 0x1.b7cc348a60e21p-2},
        {0x1.cb7201987cd6fp+14, 0x1.3e769d3a22057p+14, 0x1.b97be477e435ap+12,
         0x1.98048ff59c77ep+10, 0x1.1ad0ffea88602p+8, 0x1.39a7474542687p+5,
         0x1.21e1d68c1dd48p+2, 0x1.cb44e93363a0ep-2},
        {0x1.dfc966def05acp+14, 0x1.4c901b20d9386p+14, 0x1.cd07b5f0ffc13p+12,
         0x1.aa151288bd6b5p+10, 0x1.2756773e2ef49p+8, 0x1.478a410c271b4p+5,
         0x1.2eb76367db163p+2, 0x1.df9a4ef49f783p-2},
        {0x1.f507593b35ef8p+14, 0x1.5b49675451322p+14, 0x1.e171112204946p+12,
         0x1.bcf253b6e3fb4p+10, 0x1.3469d99b13cedp+8, 0x1.560a9f3b9a9dbp+5,
         0x1.3c1e66faff296p+2, 0x1.f4d62b2523909p-2},
        {0x1.059b06e1c16bbp+15, 0x1.6aa995157e416p+14, 0x1.f6c1c4f93e2a7p+12,
         0x1.d0a56417d4e44p+10, 0x1.42116f8462e22p+8, 0x1.652f59b954032p+5,
         0x1.4a1d51f8707f8p+2, 0x1.058158ed33ecdp-1},
        {0x1.1130169f808f2p+15, 0x1.7ab807d63d9b7p+14, 0x1.068207c80a51bp+13,
         0x1.e537bb0122c61p+10, 0x1.5053c8b44da03p+8, 0x1.74ffb765e3ebap+5,
         0x1.58bade11950e1p+2, 0x1.11154567bd8a8p-1},
        {0x1.1d486ca288666p+15, 0x1.8b7c76c639d60p+14, 0x1.1221518b856d3p+13,
         0x1.fab33b12a91c9p+10, 0x1.5f37bf4332faep+8, 0x1.8583519bdebedp+5,
         0x1.67fe1131a4ba0p+2, 0x1.1d2c6b41e1993p-1},
        {0x1.29e9d8cb4b7d6p+15, 0x1.9cfef0880cd91p+14, 0x1.1e44557cc2ad4p+13,
         0x1.08911b7b4ac59p+11, 0x1.6ec47af283c7ap+8, 0x1.96c217d6a8c73p+5,
         0x1.77ee40dd9cb3cp+2, 0x1.29cc99c9e2ec5p-1},
        {0x1.371a6cd9f6608p+15, 0x1.af47df10675dfp+14, 0x1.2af0e89de93a8p+13,
         0x1.1447bb2ba3e90p+11, 0x1.7f01749cf88c7p+8, 0x1.a8c45382a5614p+5,
         0x1.889315ba72eb1p+2, 0x1.36fbe227456bep-1},
        {0x1.44e07f590e940p+15, 0x1.c2600bb11a431p+14, 0x1.382d220b03de8p+13,
         0x1.20831d86b5518p+11, 0x1.8ff679cdbfae7p+8, 0x1.bb92abf89e52cp+5,
         0x1.99f48f3b3b230p+2, 0x1.44c09a4523afbp-1},
        {0x1.5342aea91fd01p+15, 0x1.d650a351f3114p+14, 0x1.45ff5de73333cp+13,
         0x1.2d49234461483p+11, 0x1.a1abb0805db2ap+8, 0x1.cf362aa64d255p+5,
         0x1.ac1b077902602p+2, 0x1.53215fdd8fa08p-1},
        {0x1.6247e42eee299p+15, 0x1.eb233ad973159p+14, 0x1.546e406b0b495p+13,
         0x1.3a9fefbb2642dp+11, 0x1.b4299b0b0cd03p+8, 0x1.e3b83f66060dep+5,
         0x1.bf0f37363976bp+2, 0x1.62251ba774a11p-1},
        {0x1.71f757a5b4660p+15, 0x1.0070e9e3bfb7fp+15, 0x1.6380b91594ae4p+13,
         0x1.488debd331586p+11, 0x1.c7791c357d804p+8, 0x1.f922c5079a914p+5,
         0x1.d2da3a0f9c6bbp+2, 0x1.71d304a882579p-1},
        {0x1.82589297070b6p+15, 0x1.0bcb7082203dcp+15, 0x1.733e0601797b4p+13,
         0x1.5719c91adec40p+11, 0x1.dba37b7def086p+8, 0x1.07c0030650de5p+6,
         0x1.e78592dc9a39dp+2, 0x1.8232a3acb8809p-1},
        {0x1.937373fa06d3fp+15, 0x1.17a6a5f2c0053p+15, 0x1.83adb75ff8560p+13,
         0x1.664a84fe235aep+11, 0x1.f0b2698ead43cp+8, 0x1.136d60cd363d3p+6,
         0x1.fd1b3041575bcp+2, 0x1.934bd6e53e48ap-1},
        {0x1.a55033fba010cp+15, 0x1.24083cb6780c2p+15, 0x1.94d7b31b498c8p+13,
         0x1.76276c226aa21p+11, 0x1.035802730c185p+9, 0x1.1f9f1852032bfp+6,
         0x1.09d2b8ba3eaaap+3, 0x1.a526d5b0428c9p-1},
        {0x1.b7f767f1a8407p+15, 0x1.30f627e0ef7cfp+15, 0x1.a6c438a2355efp+13,
         0x1.86b81de886b4fp+11, 0x1.0ed36f59b9073p+9, 0x1.2c5b05a75efecp+6,
         0x1.1597959d912c8p+3, 0x1.b7cc348bb6172p-1},
        {0x1.cb72067abfb8cp+15, 0x1.3e769df47d49dp+15, 0x1.b97be4deae56bp+13,
         0x1.980490166177dp+11, 0x1.1ad0fff5651b8p+9, 0x1.39a74749e65e8p+6,
         0x1.21e1d68e97130p+3, 0x1.cb44e934c58c1p-1},
        {0x1.dfc96bccf2c44p+15, 0x1.4c901bde70fd9p+15, 0x1.cd07b6595736dp+13,
         0x1.aa1512aa31ad5p+11, 0x1.275677493aacbp+9, 0x1.478a4110e8fafp+6,
         0x1.2eb7636a5e2eep+3, 0x1.df9a4ef60e2f2p-1},
        {0x1.f5075e352c0cdp+15, 0x1.5b4968153203ep+15, 0x1.e171118bf1a78p+13,
         0x1.bcf253d90a788p+11, 0x1.3469d9a64fb13p+9, 0x1.560a9f407adf6p+6,
         0x1.3c1e66fd8c762p+3, 0x1.f4d62b269f2bdp-1},
        {0x1.46ca84ae530a4p+0, 0x1.49d2d71f66c81p+0, -0x1.c711202af296cp-4,
         0x1.7296e03cbcc8fp-1, -0x1.c666302c754dcp-1, 0x1.4769e04a5e45dp+0,
         -0x1.dbaa70b73a853p+0, 0x1.6430ff45ac267p+1},
        {0x1.5113642319499p+0, 0x1.48900603e0cc9p+0, -0x1.89db3d239531bp-5,
         0x1.3fa5f99d17dccp-1, -0x1.6c9de161bf6d8p-1, 0x1.f677667340a09p-1,
         -0x1.59e20bc92b8e1p+0, 0x1.e9d393b84657fp+0},
        {0x1.5b5605563a9f9p+0, 0x1.483d8ed437f30p+0, 0x1.ade701d5ffb4dp-8,
         0x1.16963787a231bp-1, -0x1.27459846dec5fp-1, 0x1.86c266f778f67p-1,
         -0x1.ff89b77bbedc1p-1, 0x1.57c22b0c125a0p+0},
        {0x1.65996b0083141p+0, 0x1.48bc82b646496p+0, 0x1.bdbbd7fa35e43p-5,
         0x1.ea6818c1c0297p-2, -0x1.e20dd8e209725p-2, 0x1.338c59b8e65dfp-1,
         -0x1.7ff2b1c318a0fp-1, 0x1.eb58cbb7042f0p-1},
        {0x1.6fe3b883bb6d6p+0, 0x1.49f3bdf34ae22p+0, 0x1.8c2e3542de3dfp-4,
         0x1.b3b817763f252p-2, -0x1.8c3733124f2d5p-2, 0x1.e95ccc3469ac5p-2,
         -0x1.240c8b826732fp-1, 0x1.64e75668a464bp-1},
        {0x1.7a3a5b125312ap+0, 0x1.4bceaad6b21c2p+0, 0x1.136d6121298aep-3,
         0x1.86a3226d6ffb1p-2, -0x1.479899bf738fdp-2, 0x1.8928592a1c2b9p-2,
         -0x1.c1a628570ca2dp-2, 0x1.071036809af77p-1},
        {0x1.84a22a36b3fbcp+0, 0x1.4e3c52721edeap+0, 0x1.590f7a9effc2ep-3,
         0x1.6144fb3b4d1ddp-2, -0x1.1039996b5873dp-2, 0x1.3eb38b4543672p-2,
         -0x1.5deaf1147751cp-2, 0x1.88f2e6d42eda6p-2},
        {0x1.8f1f81ce35b29p+0, 0x1.512ea5cd52ecfp+0, 0x1.984b1805b14c6p-3,
         0x1.42271136728c6p-2, -0x1.c651775f0eda1p-3, 0x1.047a551d0d63fp-2,
         -0x1.12ffacae2b19ep-2, 0x1.290628ea55678p-2},
        {0x1.99b656fbcb89fp+0, 0x1.5499f0925b37ep+0, 0x1.d22fb81bbfc18p-3,
         0x1.2824a154bbe8dp-2, -0x1.7c60aa86bb7f3p-3, 0x1.ad08f4ba92a11p-3,
         -0x1.b422ee67822e4p-3, 0x1.c5f927c1ed127p-3},
        {0x1.a46a4931ac0b7p+0, 0x1.58746aa5032c0p+0, 0x1.03ce019b2eb04p-2,
         0x1.1256ab051c9eap-2, -0x1.3f458cee12853p-3, 0x1.63d90e2bfe53bp-3,
         -0x1.5cb349173488fp-3, 0x1.5e6c6ac98b158p-3},
        {0x1.af3eb0294cd8ap+0, 0x1.5cb5e10e593a6p+0, 0x1.1ca3f7781e397p-2,
         0x1.0005536979e69p-2, -0x1.0c6c96fd79a32p-3, 0x1.291d6b4f2276ap-3,
         -0x1.18e7ea520548ep-3, 0x1.10ffb4782b5edp-3},
        {0x1.ba36a76d113f3p+0, 0x1.615770b4bbbefp+0, 0x1.33e642c142889p-2,
         0x1.e13a3744851bdp-3, -0x1.c3ad3d3e99a6cp-4, 0x1.f346b75844ceap-4,
         -0x1.c7be70226a786p-4, 0x1.acff6725b13cbp-4},
        {0x1.c55517f0ef572p+0, 0x1.66534ecc1ce37p+0, 0x1.49d4f63874c9bp-2,
         0x1.c74da48af1d4cp-3, -0x1.7be7d363f1682p-4, 0x1.a601318b726fep-4,
         -0x1.7415db1d8ee3fp-4, 0x1.53bcb19fdf9b0p-4},
        {0x1.d09cc01b0ab59p+0, 0x1.6ba49bf309ee7p+0, 0x1.5ea60d33b477ep-2,
         0x1.b182fd2b399d2p-3, -0x1.3f1297d0d3e2ap-4, 0x1.66bb4e918ec56p-4,
         -0x1.3198e752a1357p-4, 0x1.0f06ee299c9b4p-4},
        {0x1.dc103a880e7d3p+0, 0x1.71473fb0755ddp+0, 0x1.728746d5dd7bfp-2,
         0x1.9f3b7bd395249p-3, -0x1.0b38b727be27ep-4, 0x1.329f7a67b5677p-4,
         -0x1.f8c2628c3eb63p-5, 0x1.b363c0209743cp-5},
        {0x1.e7b203c6fd540p+0, 0x1.7737ca924da86p+0, 0x1.859f9f8246429p-2,
         0x1.8ff4660fb3064p-3, -0x1.bd92ddb7f01cfp-5, 0x1.077ab7c6656dbp-4,
         -0x1.a300956de262ap-5, 0x1.5ff4404c5e75fp-5},
        {0x1.d62c1b180112cp-1, 0x1.9a30a1dbc5de7p+0, -0x1.81e0cd03bdcedp+0,
         0x1.0ed3ffcd81a9cp+2, -0x1.4834e802ecdbdp+3, 0x1.b3f3195374f2cp+4,
         -0x1.3557910db598ep+6, 0x1.ce37abeaca515p+7},
        {0x1.e2cf6e02af310p-1, 0x1.8ee2fa29c1db2p+0, -0x1.52b1cd7288b93p+0,
         0x1.d36c087305a0ap+1, -0x1.0c3e623b0fe85p+3, 0x1.50cf8a3649199p+4,
         -0x1.c27d1a796df17p+5, 0x1.3cfaefa164df6p+7},
        {0x1.ef1df2e41c508p-1, 0x1.84f4b68ab8c18p+0, -0x1.29d2e248779dep+0,
         0x1.966deef181b1cp+1, -0x1.bb2e0ecdd929ep+2, 0x1.07fc296282b76p+4,
         -0x1.4df5fabdc9c5ep+5, 0x1.bc25a32c3b5d7p+6},
        {0x1.fb21e74fa3f26p-1, 0x1.7c37eabdcf373p+0, -0x1.062a68cd0039dp+0,
         0x1.63ceebc90859ap+1, -0x1.7196795fae508p+2, 0x1.a3242bcc46103p+3,
         -0x1.f725451bcdebcp+4, 0x1.3d2a39ffd155fp+6},
        {0x1.03721cffd9256p+0, 0x1.74867d62853d8p+0, -0x1.cdb4c88c1a717p-1,
         0x1.396a7df052612p+1, -0x1.36d5fdd9a33b7p+2, 0x1.50944706a8f35p+3,
         -0x1.80818404604a9p+4, 0x1.ccd13d168202fp+5},
        {0x1.09366151a5f8ep+0, 0x1.6dc089467d8e1p+0, -0x1.9663684960a21p-1,
         0x1.15a0dba1784bep+1, -0x1.076ae7dd97f4bp+2, 0x1.1114cbd79b20ap+3,
         -0x1.29ac669a68716p+4, 0x1.53ffbaab8c1d2p+5},
        {0x1.0ee1372f432aap+0, 0x1.67cb234aea00cp+0, -0x1.6542e7ce78536p-1,
         0x1.ee64e9bb963cap+0, -0x1.c18979ba5087fp+1, 0x1.bf46991225773p+2,
         -0x1.d25793c8514b7p+3, 0x1.fcd336bc28d73p+4},
        {0x1.1475b1d66ae38p+0, 0x1.628f6925e002fp+0, -0x1.396a6f9f9f16bp-1,
         0x1.ba4d34d9ac411p+0, -0x1.81f85ec3120e0p+1, 0x1.716870cb60895p+2,
         -0x1.71363552d3a7dp+3, 0x1.81a7b095bac58p+4},
        {0x1.19f68fcd45b50p+0, 0x1.5df9c5c215d0fp+0, -0x1.121a95e53fb69p-1,
         0x1.8d7325424c573p+0, -0x1.4d4528ad17873p+1, 0x1.3376223993515p+2,
         -0x1.272cc3ae1734bp+3, 0x1.27bfcff546454p+4},
        {0x1.1f6646e48636ep+0, 0x1.59f95da6ea1b2p+0, -0x1.dd696bc54539cp-2,
         0x1.669f74f30d12ep+0, -0x1.21412ba0b5f62p+1, 0x1.01b7d6e30b248p+2,
         -0x1.dc33c5ab6a197p+2, 0x1.ca83d7c613b1bp+3},
        {0x1.24c70e2a75a56p+0, 0x1.567f99a8df6d3p+0, -0x1.9d68b0d346cf5p-2,
         0x1.44d848c66dfffp+0, -0x1.f87be3881b0cap+0, 0x1.b2dc240362500p+1,
         -0x1.834ab01d00108p+2, 0x1.66f8390051e1cp+3},
        {0x1.2a1ae63924f47p+0, 0x1.537fc8c924b7dp+0, -0x1.6354409a1a227p-2,
         0x1.27535599cbcc1p+0, -0x1.b9d8abe06b8d2p+0, 0x1.7115124dd5c4ep+1,
         -0x1.3d5fcad09b214p+2, 0x1.1b9e97922a2ddp+3},
        {0x1.2f63a0317f583p+0, 0x1.50eed406ebe2cp+0, -0x1.2e6fae244e9eap-2,
         0x1.0d6b848cef5cep+0, -0x1.8489c944d97c5p+0, 0x1.3afe244f3f721p+1,
         -0x1.05e7a5f1f634dp+2, 0x1.c3fc24fb776bap+2},
        {0x1.34a2e3a2d204ap+0, 0x1.4ec3003871c09p+0, -0x1.fc354941f1efdp-3,
         0x1.ed323bf34b1d6p-1, -0x1.56ed5b27550edp+0, 0x1.0e369bfd4172bp+1,
         -0x1.b312c35a4da38p+1, 0x1.6afdf23bba0c7p+2},
        {0x1.39da3390b8231p+0, 0x1.4cf3baf670b13p+0, -0x1.a397f6eeaa007p-3,
         0x1.c4d79b0855e81p-1, -0x1.2fb53c55bbf89p+0, 0x1.d1d1435690124p+0,
         -0x1.6b8ddbbbe3293p+1, 0x1.25a96b4df53ffp+2},
        {0x1.3f0af2befd21fp+0, 0x1.4b797057b23ebp+0, -0x1.521b8e5000458p-3,
         0x1.a10c088556a91p-1, -0x1.0dd42fddd17f4p+0, 0x1.934ca078140fdp+0,
         -0x1.31808f00740ffp+1, 0x1.de663803ea6afp+1},
        {0x1.58b58265188fap-1, 0x1.2dc78deef9fd1p+1, -0x1.5c04530e097bbp+2,
         0x1.72d31dc4c90d4p+4, -0x1.b4874b60a34b1p+6, 0x1.2193f9f358baep+9,
         -0x1.9fee0a220c4ddp+11, 0x1.3a6424289cd58p+14},
        {0x1.61f9a403a8cafp-1, 0x1.236bfe4554a60p+1, -0x1.3ba4eebf2afe0p+2,
         0x1.417236933c0f9p+4, -0x1.64fc5370a12dep+6, 0x1.be19d8c18f354p+8,
         -0x1.2db55618d655ap+11, 0x1.adbd0ecee9aacp+13},
        {0x1.6aeec60d537edp-1, 0x1.1a02100adf3cap+1, -0x1.1f78ee15d52fcp+2,
         0x1.18d690bc4ba75p+4, -0x1.2745fd4bb53e7p+6, 0x1.5cb9e58b5afa8p+8,
         -0x1.bdb10e5d987ecp+10, 0x1.2c08f1b3f6bbfp+13},
        {0x1.739bf7602041fp-1, 0x1.116b2ff8cc738p+1, -0x1.06c6053781b2dp+2,
         0x1.ee29af390a701p+3, -0x1.ed702534c5814p+5, 0x1.143b120580532p+8,
         -0x1.4e8fad04e8eb8p+10, 0x1.ab07c2229de21p+12},
        {0x1.7c0767c0e276ep-1, 0x1.098df609ab451p+1, -0x1.e1f372a45e7b9p+1,
         0x1.b57f30e514ee7p+3, -0x1.a01170aaa68a8p+5, 0x1.bad79a107e635p+7,
         -0x1.fda55e35542f1p+9, 0x1.3527cbc6a3579p+12},
        {0x1.84368caec86ffp-1, 0x1.025511206c062p+1, -0x1.bb3eccc17bb9cp+1,
         0x1.858581ff1f6ebp+3, -0x1.61b8f58b3b6eep+5, 0x1.66ce8c2a26a1cp+7,
         -0x1.8953293ee7301p+9, 0x1.c6a650380ae67p+11},
        {0x1.8c2e3eb23b49ep-1, 0x1.f75cece22e63ep+0, -0x1.98b234a1a4d4dp+1,
         0x1.5c95a67a35833p+3, -0x1.2ef72425b280ep+5, 0x1.2591837d08dedp+7,
         -0x1.33357bd2a7c2bp+9, 0x1.531134734f5d0p+11},
        {0x1.93f2d0f4f9f35p-1, 0x1.eb1583a2f9e7ap+0, -0x1.79b4c2f1d0343p+1,
         0x1.396771b84d3bep+3, -0x1.05414cae42a40p+5, 0x1.e4ad53522bb7ap+6,
         -0x1.e52b5924f756ap+8, 0x1.00275dc5251adp+11},
        {0x1.9b8824736a812p-1, 0x1.dfb973d03043dp+0, -0x1.5dc8dcb92f88fp+1,
         0x1.1af9518f6187ap+3, -0x1.c55ee64dcbdaap+4, 0x1.935ec97e1f494p+6,
         -0x1.82f77e97ac2f3p+8, 0x1.87a377fa9cb26p+10},
        {0x1.a2f1b7bf451d2p-1, 0x1.d531de16d1b57p+0, -0x1.448670293f731p+1,
         0x1.007ef8e96872dp+3, -0x1.8b9e1017f4e63p+4, 0x1.5239b1ec2ae46p+6,
         -0x1.377f9922f7f91p+8, 0x1.2eab834d8d9dep+10},
        {0x1.aa32b40d6aa54p-1, 0x1.cb6adc81b70a9p+0, -0x1.2d96951d664efp+1,
         0x1.d2a98fcc302c7p+2, -0x1.5b06d24baa046p+4, 0x1.1d909f6b6e577p+6,
         -0x1.f9c775d2ba310p+7, 0x1.d88d35152e3fdp+9},
        {0x1.b14df81bd432bp-1, 0x1.c253072e105a2p+0, -0x1.18b031adcdb2ap+1,
         0x1.a9ed0c7ad72d5p+2, -0x1.31df4678e0671p+4, 0x1.e54adc7e2735fp+5,
         -0x1.9ddc480a15e88p+7, 0x1.7457927aa2ca5p+9},
        {0x1.b846215bbbe56p-1, 0x1.b9db10b32146dp+0, -0x1.05955f6051419p+1,
         0x1.85f0f4318423bp+2, -0x1.0ecd08dd952cep+4, 0x1.9ecd0bf5985dcp+5,
         -0x1.5521276c3130cp+7, 0x1.27ee299e6eaa0p+9},
        {0x1.bf1d93b3d8c6bp-1, 0x1.b1f57503e2a42p+0, -0x1.e822c166ee5bap+0,
         0x1.660464e42b4fdp+2, -0x1.e17c39f4301edp+3, 0x1.648086eb3a603p+5,
         -0x1.1b1906fd298a9p+7, 0x1.da33730abc497p+8},
        {0x1.c5d6801c5929dp-1, 0x1.aa9636db00e0bp+0, -0x1.c7ee080f6011fp+0,
         0x1.49951e536e4b8p+2, -0x1.adafef1017200p+3, 0x1.33f80a0753f9dp+5,
         -0x1.d8dd52c00773ep+6, 0x1.7ecbe7696dbeap+8},
        {0x1.cc72ea488275fp-1, 0x1.a3b2a8b21bc67p+0, -0x1.aa3eb47b06907p+0,
         0x1.3029671de9e3dp+2, -0x1.80d5cfe561595p+3, 0x1.0b5122b0a1458p+5,
         -0x1.8d43ea5ed808cp+6, 0x1.3730959ce05bep+8},
        {0x1.f55546caf58e2p-2, 0x1.c71648d86ab65p+1, -0x1.00eeff24446e1p+4,
         0x1.f481cf1e23131p+6, -0x1.289363006aeb3p+10, 0x1.8e42773fcc27dp+13,
         -0x1.2068889424a66p+17, 0x1.b622751705a45p+20},
        {0x1.01a7d00488a7cp-1, 0x1.b7ba3b0781e84p+1, -0x1.d631479bb10c8p+3,
         0x1.b17e12c9180c9p+6, -0x1.e3df94bddb93cp+9, 0x1.321213f24769ep+13,
         -0x1.a1b9ac52d5b97p+16, 0x1.2b164eed02ba6p+20},
        {0x1.086a27551d874p-1, 0x1.a9a40b93144c6p+1, -0x1.b03652b3b4b6dp+3,
         0x1.7a83938553b83p+6, -0x1.8f48bdc9090c8p+9, 0x1.dd6e7d242091ap+12,
         -0x1.3403e18fe7600p+16, 0x1.a11f809679c38p+19},
        {0x1.0ef66b5c44a1dp-1, 0x1.9caa545b3770dp+1, -0x1.8eedbe1496b10p+3,
         0x1.4cea8c6897f51p+6, -0x1.4ce208203a004p+9, 0x1.79500bd1ba7cbp+12,
         -0x1.cd9f6ae1a6d85p+15, 0x1.2876e2c32e5d5p+19},
        {0x1.1550c740fcc6ep-1, 0x1.90aac3369f823p+1, -0x1.718f331f01e20p+3,
         0x1.26ba40770103dp+6, -0x1.1819aefd90de4p+9, 0x1.2dc079e474671p+12,
         -0x1.5ef96fff57fd5p+15, 0x1.acb38dca33ca9p+18},
        {0x1.1b7ce87bc504ep-1, 0x1.85889c3d7ac36p+1, -0x1.577b88ae5da0cp+3,
         0x1.06761045b9e15p+6, -0x1.db548a1275956p+8, 0x1.e7dc706fcdfccp+11,
         -0x1.0e5ffa5180808p+15, 0x1.3ace1dbe4de55p+18},
        {0x1.217e12d60821dp-1, 0x1.7b2b9a2d753ccp+1, -0x1.4032d8fa2414ep+3,
         0x1.d5f5d8a4a283cp+5, -0x1.96649ab373a92p+8, 0x1.8e4021523345ap+11,
         -0x1.a59272f460bc2p+14, 0x1.d4e691d1490afp+17},
        {0x1.27573079f3af6p-1, 0x1.717f12a25e9d5p+1, -0x1.2b4d4c18a57a4p+3,
         0x1.a6ceda1841affp+5, -0x1.5ddf029b33167p+8, 0x1.48037e2f5d4a1p+11,
         -0x1.4c4326f57a894p+14, 0x1.61bc780dbd73ap+17},
        {0x1.2d0adefb93a28p-1, 0x1.68714bfcfa311p+1, -0x1.1875c5ba17e6dp+3,
         0x1.7e15fc3e771bap+5, -0x1.2f2154ec38db6p+8, 0x1.10621ce149bf1p+11,
         -0x1.0880aa5360522p+14, 0x1.0e06165909871p+17},
        {0x1.329b7a06ee555p-1, 0x1.5ff2f834499aep+1, -0x1.0765e9b14b1ffp+3,
         0x1.5ab3a8dd4e746p+5, -0x1.082c2acc8b301p+8, 0x1.c7cb18407be33p+10,
         -0x1.a90328f7008acp+13, 0x1.a0be40dd361a8p+16},
        {0x1.380b24338d938p-1, 0x1.57f6cb7231a51p+1, -0x1.efc62ecf4f7b9p+2,
         0x1.3bc862aa52396p+5, -0x1.ceee8f0a7b683p+7, 0x1.8002c6af4d594p+10,
         -0x1.585f7d082d843p+13, 0x1.44d48d537d0c8p+16},
        {0x1.3d5bce5eb6781p-1, 0x1.507127de34b8bp+1, -0x1.d37833544fbc6p+2,
         0x1.209feb48b7f9fp+5, -0x1.97a54c3e425fap+7, 0x1.459f36e7d43b3p+10,
         -0x1.193c4019ab427p+13, 0x1.ff18ff016759bp+15},
        {0x1.428f3dd6d2cfcp-1, 0x1.4957d9b9e1895p+1, -0x1.b98eb7c32131bp+2,
         0x1.08a7b1e8dc32ep+5, -0x1.68a0aa7451451p+7, 0x1.15c4160f06d05p+10,
         -0x1.ceb63613eae1fp+12, 0x1.95913f8096954p+15},
        {0x1.47a71191bde5bp-1, 0x1.42a1e03123df1p+1, -0x1.a1c306537cb20p+2,
         0x1.e6cf3e181785bp+4, -0x1.4068d6d37c55ap+7, 0x1.dc87d2e86369fp+9,
         -0x1.7f3dde1ddf343p+12, 0x1.446b3a6a69d05p+15},
        {0x1.4ca4c69b123c8p-1, 0x1.3c474025c92a5p+1, -0x1.8bd8a5f9c88afp+2,
         0x1.c0f932a67e74bp+4, -0x1.1dd285d8e1208p+7, 0x1.9ae4633904e4fp+9,
         -0x1.3f70c72c602bfp+12, 0x1.05751f013950dp+15},
        {0x1.5189bbde1206ep-1, 0x1.3640dee46d35cp+1, -0x1.779b974a1b609p+2,
         0x1.9f289ee8c833ep+4, -0x1.ffdb00b46f4cep+6, 0x1.6405313afa8cap+9,
         -0x1.0bd88dfd4b1ccp+12, 0x1.a864af6d8b337p+14},
        {0x1.68981d5b3da04p-2, 0x1.50f415a7f4190p+2, -0x1.682079c71bfaep+5,
         0x1.57ea55f5b049dp+9, -0x1.9c1cba7afc57bp+13, 0x1.16764f80e4427p+18,
         -0x1.949483a894936p+22, 0x1.33d886e4ffeb7p+27},
        {0x1.72f40587e8395p-2, 0x1.462debcf3f629p+2, -0x1.4a23f0bdaa355p+5,
         0x1.29628214c92f1p+9, -0x1.4fbc98562c8f2p+13, 0x1.aba3349957bb5p+17,
         -0x1.24d2273eec8b3p+22, 0x1.a41bf6bf68450p+26},
        {0x1.7cfd4fb370836p-2, 0x1.3c4751d72c8dbp+2, -0x1.301aeac572149p+5,
         0x1.034349da81ffdp+9, -0x1.14ab144afeccfp+13, 0x1.4d3c12c29b305p+17,
         -0x1.af922e18d85dfp+21, 0x1.24d286a1d1a7ap+26},
        {0x1.86ba81d2d60a7p-2, 0x1.332392b96cc91p+2, -0x1.19531158b3ed6p+5,
         0x1.c76093e88e1c2p+8, -0x1.ccaf2a4a01b3ap+12, 0x1.071d7f559591ep+17,
         -0x1.43330489be534p+21, 0x1.a00ca1247b113p+25},
        {0x1.903150c35e076p-2, 0x1.2aaaea39eed3ep+2, -0x1.05409e1734503p+5,
         0x1.928fffff90607p+8, -0x1.831a28404f38fp+12, 0x1.a474daa599ccdp+16,
         -0x1.eb26daf9807f1p+20, 0x1.2cac90b6bb8f1p+25},
        {0x1.9966c36fb7cc6p-2, 0x1.22c9798da1233p+2, -0x1.e6e93f0182bcdp+4,
         0x1.6600036a698fdp+8, -0x1.4800250878445p+12, 0x1.53910bdb98dcep+16,
         -0x1.7a1e505252439p+20, 0x1.b960220e5dc10p+24},
        {0x1.a25f4eb13b62ep-2, 0x1.1b6e7e09700fdp+2, -0x1.c72c089ab4ed3p+4,
         0x1.40196c864a9edp+8, -0x1.180a5bba00419p+12, 0x1.14ed249e408d5p+16,
         -0x1.269717ae7e53ap+20, 0x1.488e42278d5a9p+24},
        {0x1.ab1eebaf0b29cp-2, 0x1.148bb764fc02ep+2, -0x1.aab91a9b619edp+4,
         0x1.1fa1187a35237p+8, -0x1.e1833aca85ee1p+11, 0x1.c7b90b3227c2cp+15,
         -0x1.d00d437ccef8bp+19, 0x1.ef7ac2497f7c6p+23},
        {0x1.b3a92a01aa3d5p-2, 0x1.0e14f0d1ba96ap+2, -0x1.911a253465625p+4,
         0x1.03a05174b5751p+8, -0x1.a09ae5b702c23p+11, 0x1.7a0d7f3e25a46p+15,
         -0x1.7129b612d6108p+19, 0x1.7a09119f8cd8ep+23},
        {0x1.bc013e8bc5ca0p-2, 0x1.07ffa3f06b9ffp+2, -0x1.79ed72c094a14p+4,
         0x1.d6a7d1d843775p+7, -0x1.6a8f8d7299d99p+11, 0x1.3bfbfddc06467p+15,
         -0x1.286291d6f04f7p+19, 0x1.23930e220532dp+23},
        {0x1.c42a0fbc22812p-2, 0x1.0242af3e1fd8ep+2, -0x1.64e1addec4708p+4,
         0x1.ac3feaed25a8ep+7, -0x1.3d3c2e8fb78b1p+11, 0x1.09f192fbdf93ap+15,
         -0x1.dff5875e0c757p+18, 0x1.c64d2255b7f16p+22},
        {0x1.cc263fc0e28acp-2, 0x1.f9ac36a9eeb73p+1, -0x1.51b2a486e7e23p+4,
         0x1.870d9f80dec5ap+7, -0x1.16f777aa71c57p+11, 0x1.c289cbb62eb5ap+14,
         -0x1.87ad97b3ed6acp+18, 0x1.6537ede0d9763p+22},
        {0x1.d3f835146fe9ap-2, 0x1.ef65d72ff8628p+1, -0x1.4026c6333b1c9p+4,
         0x1.6644bb542baa3p+7, -0x1.ece9688a88f5dp+10, 0x1.7fe9b782a691bp+14,
         -0x1.41f8d10c732f8p+18, 0x1.1b4f4d06d0270p+22},
        {0x1.dba221b4c3012p-2, 0x1.e5a5ef8244825p+1, -0x1.300d2e04eb65bp+4,
         0x1.493e0c2da3066p+7, -0x1.b55a907eede9dp+10, 0x1.48f6080f685aap+14,
         -0x1.0a78ef31ae2cbp+18, 0x1.c500381de8814p+21},
        {0x1.e32609441b0f7p-2, 0x1.dc6198d28ce9ep+1, -0x1.213c16cc5a80fp+4,
         0x1.2f6fb450ec32cp+7, -0x1.85a05bc7b5e3fp+10, 0x1.1b56c6b14bceap+14,
         -0x1.bbe1452129ba9p+17, 0x1.6ce22fa7b580bp+21},
        {0x1.ea85c644e9d77p-2, 0x1.d38f222e390efp+1, -0x1.138f9ffae17acp+4,
         0x1.1867450b0a16fp+7, -0x1.5c6b732a602cfp+10, 0x1.ea75a62bddc5fp+13,
         -0x1.73e52d9783fd0p+17, 0x1.27f8528966bfep+21},
        {0x1.01620a6b5c638p-2, 0x1.e97f28493ec4ap+2, -0x1.f56d8105ca965p+6,
         0x1.dfba4ee131c90p+11, -0x1.213a5ae044a3bp+17, 0x1.87dc00650bf95p+22,
         -0x1.1d057270eb493p+28, 0x1.b21049bb0cbe0p+33},
        {0x1.08e997657d522p-2, 0x1.da7f0c6e062f9p+2, -0x1.cb9e6739a883bp+6,
         0x1.9e6ed05fc1502p+11, -0x1.d6fee1fe53db2p+16, 0x1.2cca0b5b09d7dp+22,
         -0x1.9c79cebfe6c5ep+27, 0x1.281ee71e71fe0p+33},
        {0x1.1037a1d44c1a4p-2, 0x1.ccb6802f27c02p+2, -0x1.a75a5961110a9p+6,
         0x1.68f78a88172f1p+11, -0x1.83ea382659b54p+16, 0x1.d49d9e01e91aap+21,
         -0x1.2fe2ea8f0a8b1p+27, 0x1.9cb894abbe64cp+32},
        {0x1.1750b4d3dc25dp-2, 0x1.bffd4063df9b4p+2, -0x1.87a680be1c505p+6,
         0x1.3cb581dcc0a68p+11, -0x1.42c77100d9c53p+16, 0x1.71e1371cc162bp+21,
         -0x1.c70a945950a44p+26, 0x1.2525176295c70p+32},
        {0x1.1e38c8e989efep-2, 0x1.b431fc9096f2dp+2, -0x1.6bbe55a37639ap+6,
         0x1.17b6ed176848ap+11, -0x1.0f1170e465ad7p+16, 0x1.276d7e9ff7a46p+21,
         -0x1.59aa768c531cdp+26, 0x1.a79f1a861bc47p+31},
        {0x1.24f35cb943d4ap-2, 0x1.a938de6fbce32p+2, -0x1.5305e85be6b33p+6,
         0x1.f1097dc866e04p+10, -0x1.cb18cc35fe468p+15, 0x1.dd02d52599016p+20,
         -0x1.0a0bf0c99c333p+26, 0x1.36dddb144ce75p+31},
        {0x1.2b83889d7a87ep-2, 0x1.9efa6e888a439p+2, -0x1.3d001413d4104p+6,
         0x1.bc00d74d9ecd0p+10, -0x1.87bc715005edep+15, 0x1.84dfb43df31f5p+20,
         -0x1.9e71c2bcace55p+25, 0x1.ceb8420e44506p+30},
        {0x1.31ec0e5e9e3cbp-2, 0x1.9562bbce5e44fp+2, -0x1.29475fafd6281p+6,
         0x1.8e987cf4db07fp+10, -0x1.5094caa7cb346p+15, 0x1.3fdb03a7c71acp+20,
         -0x1.4657374d86747p+25, 0x1.5cd53091d4ca9p+30},
        {0x1.382f65f0323d8p-2, 0x1.8c60b4505f5b5p+2, -0x1.1788bcec369a1p+6,
         0x1.6775636d2ed76p+10, -0x1.2308821d9817bp+15, 0x1.093dda91aeb77p+20,
         -0x1.038adeccdcc1bp+25, 0x1.0a18313968076p+30},
        {0x1.3e4fc7dd02fbap-2, 0x1.83e5a257e4648p+2, -0x1.077f9a9a95094p+6,
         0x1.45850ddb2ec49p+10, -0x1.fa3eddffaed94p+14, 0x1.bb38254bd33c1p+19,
         -0x1.a0a3d59c6198bp+24, 0x1.9a632a58c9017p+29},
        {0x1.444f35e1323b2p-2, 0x1.7be4c4f039c28p+2, -0x1.f1e5d601b9c13p+5,
         0x1.27ec482bc9e7cp+10, -0x1.baae5124db512p+14, 0x1.74e2654509165p+19,
         -0x1.5141fda3d464cp+24, 0x1.3fa551722daa4p+29},
        {0x1.4a2f8211fc053p-2, 0x1.7452fd4e0ecacp+2, -0x1.d765b8dcb4f78p+5,
         0x1.0dfa74ff356e6p+10, -0x1.8508ca686f5b4p+14, 0x1.3bbac41abb931p+19,
         -0x1.132649af317a0p+24, 0x1.f692872c692d7p+28},
        {0x1.4ff254dc9ccafp-2, 0x1.6d268c493b2c7p+2, -0x1.bf2e2b2916bedp+5,
         0x1.ee4036bef2cffp+9, -0x1.577a2655fcc5ep+14, 0x1.0ceea92008054p+19,
         -0x1.c43d320958af9p+23, 0x1.8e81a0865d892p+28},
        {0x1.5599321525965p-2, 0x1.6656dc56c451dp+2, -0x1.a8faa8e73fe9bp+5,
         0x1.c5cf95ee645dfp+9, -0x1.3090f62d12379p+14, 0x1.ccb0a52035977p+18,
         -0x1.762e45828e198p+23, 0x1.3e87cd5ee0b13p+28},
        {0x1.5b257d41a06bap-2, 0x1.5fdc5553ac32fp+2, -0x1.9490afaa5ff50p+5,
         0x1.a1e1688e8d435p+9, -0x1.0f273dbedb7dap+14, 0x1.8ca2df4aaf38cp+18,
         -0x1.378f860961b7cp+23, 0x1.0083fd6f5dbf5p+28},
        {0x1.60987d448433cp-2, 0x1.59b038160de1ep+2, -0x1.81be03793a92bp+5,
         0x1.81d50446a9796p+9, -0x1.e4a26d8f902a2p+13, 0x1.57254f11e16a4p+18,
         -0x1.04f5c9ee8f798p+23, 0x1.a00c698ac0c79p+27},
        {0x1.6dca37ddf4e7dp-3, 0x1.5f28d39639015p+3, -0x1.5e95386b06becp+8,
         0x1.511aee216ecf6p+14, -0x1.97a3d46cfe784p+20, 0x1.1470d123df161p+27,
         -0x1.925cca758030cp+33, 0x1.327c48c803463p+40},
        {0x1.7898f0b5a251ap-3, 0x1.54ac8749b35aep+3, -0x1.4135b8ae90273p+8,
         0x1.2318c1a9b0966p+14, -0x1.4bd62aa41843ep+20, 0x1.a85343716c008p+26,
         -0x1.231c9c90c76c5p+33, 0x1.a2226eec548cep+39},
        {0x1.83174758a5bd4p-3, 0x1.4b0b1284152b7p+3, -0x1.27be024e3a780p+8,
         0x1.fadd1f9b9bf57p+13, -0x1.113d55423811ap+20, 0x1.4a7d57688e7fdp+26,
         -0x1.ace5b9ba5acd5p+32, 0x1.235cec8c1014dp+39},
        {0x1.8d4b9d608ad81p-3, 0x1.4228183154265p+3, -0x1.117d2a36a908fp+8,
         0x1.bc859f9e6e214p+13, -0x1.c69cb8dbc7c50p+19, 0x1.04d11658224abp+26,
         -0x1.41148b8abad24p+32, 0x1.9ddb72e343a91p+38},
        {0x1.973b85e3f6f23p-3, 0x1.39ec21a91ae37p+3, -0x1.fbd1314ae6131p+7,
         0x1.886c7c305ec40p+13, -0x1.7db0d407d131dp+19, 0x1.a092512e98017p+25,
         -0x1.e7c0ae7d63050p+31, 0x1.2b00ef752e1dap+38},
        {0x1.a0ebe84fe2b3fp-3, 0x1.324395070fe68p+3, -0x1.d924b5200363fp+7,
         0x1.5c8074c0b82c0p+13, -0x1.432653f5757ffp+19, 0x1.50417d42af8e6p+25,
         -0x1.775cd840ab113p+31, 0x1.b6cbcc0012c3bp+37},
        {0x1.aa611c0908835p-3, 0x1.2b1ded330f77bp+3, -0x1.ba446d1b88df7p+7,
         0x1.372d39ea4b081p+13, -0x1.13ab4e5d83059p+19, 0x1.1215531dee7ebp+25,
         -0x1.24558776e9a14p+31, 0x1.468a4c8278216p+37},
        {0x1.b39efe94e7572p-3, 0x1.246d2139fc961p+3, -0x1.9ea14c1a3e6d0p+7,
         0x1.173a01fee832dp+13, -0x1.d998b1967de32p+18, 0x1.c2ce55e6b68d8p+24,
         -0x1.cc53144ba5e65p+30, 0x1.ec4b9fcbeb387p+36},
        {0x1.bca9058f137b7p-3, 0x1.1e252e4741a05p+3, -0x1.85c64063f9fccp+7,
         0x1.f7640ab57f388p+12, -0x1.9967e2a2c6019p+18, 0x1.75c61f493b4bbp+24,
         -0x1.6e0f0782f12b7p+30, 0x1.777eb60cab5b0p+36},
        {0x1.c5824d5a254dcp-3, 0x1.183bbb544a193p+3, -0x1.6f52a83282544p+7,
         0x1.c7a75e65819a3p+12, -0x1.63fcb6c8a6f18p+18, 0x1.383d2819519a2p+24,
         -0x1.25c7b7fe01fa1p+30, 0x1.21875f88662c2p+36},
        {0x1.ce2da53f18027p-3, 0x1.12a7d02fb9360p+3, -0x1.5af61edf4e37cp+7,
         0x1.9e08d9185c8bep+12, -0x1.3735ed54a8606p+18, 0x1.06a5b6345b0f0p+24,
         -0x1.db8e8b9c1fc88p+29, 0x1.c2fa9600df964p+35},
        {0x1.d6ad99826930fp-3, 0x1.0d619b3efad4cp+3, -0x1.486d45a37d40cp+7,
         0x1.798f6cb31f486p+12, -0x1.116d3f1002ce8p+18, 0x1.bcb4ff7d3f6d7p+23,
         -0x1.83ef20a862864p+29, 0x1.627fc317620fap+35},
        {0x1.df047bd68ee40p-3, 0x1.0862429689b26p+3, -0x1.377f465552ddep+7,
         0x1.5970cd9a2b3cep+12, -0x1.e2b0e35e167ebp+17, 0x1.7abb31299b870p+23,
         -0x1.3ec4c689f3193p+29, 0x1.191151a8dca83p+35},
        {0x1.e7346a7be8b11p-3, 0x1.03a3bde3cdd0cp+3, -0x1.27fbe147f7ee6p+7,
         0x1.3d076a4e7e415p+12, -0x1.abe5e3bee9a0dp+17, 0x1.44562912244a0p+23,
         -0x1.07b767021ba5fp+29, 0x1.c14747ddc81fbp+34},
        {0x1.ef3f564cc9cddp-3, 0x1.fe416e86e2039p+2, -0x1.19b9e463dacbfp+7,
         0x1.23caca8bc73a4p+12, -0x1.7cdad14e4654ap+17, 0x1.1731f4e35364cp+23,
         -0x1.b71ce881a11f1p+28, 0x1.69c61aeba6225p+34},
        {0x1.f72707e6fafa4p-3, 0x1.f5a8e326f6edcp+2, -0x1.0c95f2a0c6975p+7,
         0x1.0d49b3ebcdb89p+12, -0x1.54432201805c4p+17, 0x1.e3015e48887e5p+22,
         -0x1.6fc097951dc75p+28, 0x1.255b51bff0b7cp+34},
        {0x1.034e0c70b062cp-3, 0x1.f457421697016p+3, -0x1.ec8456b533c61p+9,
         0x1.db5d7c733f948p+16, -0x1.1fc73f11a8b2cp+24, 0x1.8680b8d955557p+31,
         -0x1.1c43a8e32dc4fp+39, 0x1.b1207df9c0350p+46},
        {0x1.0b018641877b2p-3, 0x1.e59cd7efa9d89p+3, -0x1.c319cae23a923p+9,
         0x1.9a686dd7c4854p+16, -0x1.d47aca25fe8dap+23, 0x1.2bae8a0cbafbcp+31,
         -0x1.9b4fcd7e21b60p+38, 0x1.277125cab8390p+46},
        {0x1.127c8e2ebcc2ap-3, 0x1.d816f7e9b3e7ep+3, -0x1.9f32ba5b8302ap+9,
         0x1.653c78eedb217p+16, -0x1.81b6af56b8d4fp+23, 0x1.d2c96534b2b73p+30,
         -0x1.2efa61046528fp+38, 0x1.9bb8335b4881ap+45},
        {0x1.19c3a3b233e89p-3, 0x1.cb9d9777976e0p+3, -0x1.7fd541066d1aap+9,
         0x1.393c934cb752cp+16, -0x1.40d6c4936f72ap+23, 0x1.705a954f9cd27p+30,
         -0x1.c59adbcd38863p+37, 0x1.2464df36459cep+45},
        {0x1.20dab48348065p-3, 0x1.c00f97d051c17p+3, -0x1.643da081c852cp+9,
         0x1.147879d172bc3p+16, -0x1.0d58cdba4bb15p+23, 0x1.26249258dafebp+30,
         -0x1.58843f0b64588p+37, 0x1.a67aaa0270faep+44},
        {0x1.27c53532d3da9p-3, 0x1.b5514e9e1c5adp+3, -0x1.4bd091be46e39p+9,
         0x1.eaf4aa913ed3fp+15, -0x1.c806480bba323p+22, 0x1.dad442b5844e1p+29,
         -0x1.091dfe867f50bp+37, 0x1.35fc76766b011p+44},
        {0x1.2e8634adfc1e1p-3, 0x1.ab4b6b7efa273p+3, -0x1.36117e75463d8p+9,
         0x1.b64926d6ceeabp+15, -0x1.84fab014dfe83p+22, 0x1.8301cee077d67p+29,
         -0x1.9ced1c493eec6p+36, 0x1.cd58a7ba81473p+43},
        {0x1.35206be3cdbebp-3, 0x1.a1ea205ff2f17p+3, -0x1.229b6701b5761p+9,
         0x1.893493be6ccb5p+15, -0x1.4e185f0724c1fp+22, 0x1.3e3f4bc211eddp+29,
         -0x1.4516f95082779p+36, 0x1.5bbff243e3934p+43},
        {0x1.3b964a73185e4p-3, 0x1.991c7ac5407f3p+3, -0x1.111ba560835c5p+9,
         0x1.625d3220a18cbp+15, -0x1.20c80263347fbp+22, 0x1.07d8e2cd640d2p+29,
         -0x1.0280d4d137604p+36, 0x1.093b63f199463p+43},
        {0x1.41ea0109943a9p-3, 0x1.90d3e165c27ecp+3, -0x1.014e02780db81p+9,
         0x1.40b197da259e7p+15, -0x1.f62613b623dbfp+21, 0x1.b8c984458d33ep+28,
         -0x1.9ee67aeb7cf8ep+35, 0x1.9900389482900p+42},
        {0x1.481d89f2a55c8p-3, 0x1.8903ad1a26250p+3, -0x1.e5f37dbdabeb4p+8,
         0x1.235775da23bdap+15, -0x1.b6f0a69253c61p+21, 0x1.72c07455714f8p+28,
         -0x1.4fcaa15f88213p+35, 0x1.3e85999d42141p+42},
        {0x1.4e32b035515adp-3, 0x1.81a0d69a7c254p+3, -0x1.cbde9ab997e40p+8,
         0x1.099eef0c60a74p+15, -0x1.819b39195bff9p+21, 0x1.39d9aa96b9fccp+28,
         -0x1.11e7e1d2febd7p+35, 0x1.f4bc67ea0a77cp+41},
        {0x1.542b158a92488p-3, 0x1.7aa1b44052029p+3, -0x1.b40d21a23543ap+8,
         0x1.e5f25a11ab5c4p+14, -0x1.5453548b43242p+21, 0x1.0b44ba12c2bafp+28,
         -0x1.c21dc72aa7ef7p+34, 0x1.8cfebcb132b4dp+41},
        {0x1.5a083764a1d55p-3, 0x1.73fdc43dd82e4p+3, -0x1.9e3af8c2ff479p+8,
         0x1.bde2937eeeebap+14, -0x1.2da8e98efb51ap+21, 0x1.c9bb301b0acbdp+27,
         -0x1.745bf7ef86ae4p+34, 0x1.3d473dff70756p+41},
        {0x1.5fcb7333763e1p-3, 0x1.6dad809cad3b1p+3, -0x1.8a2dfbfb17d0ap+8,
         0x1.9a4dd7fa6102cp+14, -0x1.0c771e0b34016p+21, 0x1.89fea30acce7fp+27,
         -0x1.35fd4ff9c256ep+34, 0x1.fef167353240dp+40},
        {0x1.65760a094f320p-3, 0x1.67aa3afb724afp+3, -0x1.77b44352b4c5dp+8,
         0x1.7a9448adddc28p+14, -0x1.dfa639909f477p+20, 0x1.54c74cee3eba3p+27,
         -0x1.03992c7626cd5p+34, 0x1.9e4c06a7ed090p+40},
};
static const double bw__dj_center[BW__DJ_LOW + BW__DJ_BINADES * BW__DJ_SUB] = {
    0x1.0800000000000p+0, 0x1.1800000000000p+0, 0x1.2800000000000p+0,
    0x1.3800000000000p+0, 0x1.4800000000000p+0, 0x1.5800000000000p+0,
    0x1.6800000000000p+0, 0x1.7800000000000p+0, 0x1.8800000000000p+0,
    0x1.9800000000000p+0, 0x1.a800000000000p+0, 0x1.b800000000000p+0,
    0x1.c800000000000p+0, 0x1.d800000000000p+0, 0x1.e800000000000p+0,
    0x1.f800000000000p+0, 0x1.0400000000000p+1, 0x1.0c00000000000p+1,
    0x1.1400000000000p+1, 0x1.1c00000000000p+1, 0x1.2400000000000p+1,
    0x1.2c00000000000p+1, 0x1.3400000000000p+1, 0x1.3c00000000000p+1,
    0x1.4400000000000p+1, 0x1.4c00000000000p+1, 0x1.5400000000000p+1,
    0x1.5c00000000000p+1, 0x1.6400000000000p+1, 0x1.6c00000000000p+1,
    0x1.7400000000000p+1, 0x1.7c00000000000p+1, 0x1.8400000000000p+1,
    0x1.8c00000000000p+1, 0x1.9400000000000p+1, 0x1.9c00000000000p+1,
    0x1.a400000000000p+1, 0x1.ac00000000000p+1, 0x1.b400000000000p+1,
    0x1.bc00000000000p+1, 0x1.c400000000000p+1, 0x1.cc00000000000p+1,
    0x1.d400000000000p+1, 0x1.dc00000000000p+1, 0x1.e400000000000p+1,
    0x1.ec00000000000p+1, 0x1.f400000000000p+1, 0x1.fc00000000000p+1,
    0x1.0200000000000p+2, 0x1.0600000000000p+2, 0x1.0a00000000000p+2,
    0x1.0e00000000000p+2, 0x1.1200000000000p+2, 0x1.1600000000000p+2,
    0x1.1a00000000000p+2, 0x1.1e00000000000p+2, 0x1.2200000000000p+2,
    0x1.2600000000000p+2, 0x1.2a00000000000p+2, 0x1.2e00000000000p+2,
    0x1.3200000000000p+2, 0x1.3600000000000p+2, 0x1.3a00000000000p+2,
    0x1.3e00000000000p+2, 0x1.4200000000000p+2, 0x1.4600000000000p+2,
    0x1.4a00000000000p+2, 0x1.4e00000000000p+2, 0x1.5200000000000p+2,
    0x1.5600000000000p+2, 0x1.5a00000000000p+2, 0x1.5e00000000000p+2,
    0x1.6200000000000p+2, 0x1.6600000000000p+2, 0x1.6a00000000000p+2,
    0x1.6e00000000000p+2, 0x1.7200000000000p+2, 0x1.7600000000000p+2,
    0x1.7a00000000000p+2, 0x1.7e00000000000p+2, 0x1.8200000000000p+2,
    0x1.8600000000000p+2, 0x1.8a00000000000p+2, 0x1.8e00000000000p+2,
    0x1.9200000000000p+2, 0x1.9600000000000p+2, 0x1.9a00000000000p+2,
    0x1.9e00000000000p+2, 0x1.a200000000000p+2, 0x1.a600000000000p+2,
    0x1.aa00000000000p+2, 0x1.ae00000000000p+2, 0x1.b200000000000p+2,
    0x1.b600000000000p+2, 0x1.ba00000000000p+2, 0x1.be00000000000p+2,
    0x1.c200000000000p+2, 0x1.c600000000000p+2, 0x1.ca00000000000p+2,
    0x1.ce00000000000p+2, 0x1.d200000000000p+2, 0x1.d600000000000p+2,
    0x1.da00000000000p+2, 0x1.de00000000000p+2, 0x1.e200000000000p+2,
    0x1.e600000000000p+2, 0x1.ea00000000000p+2, 0x1.ee00000000000p+2,
    0x1.f200000000000p+2, 0x1.f600000000000p+2, 0x1.fa00000000000p+2,
    0x1.fe00000000000p+2, 0x1.0100000000000p+3, 0x1.0300000000000p+3,
    0x1.0500000000000p+3, 0x1.0700000000000p+3, 0x1.0900000000000p+3,
    0x1.0b00000000000p+3, 0x1.0d00000000000p+3, 0x1.0f00000000000p+3,
    0x1.1100000000000p+3, 0x1.1300000000000p+3, 0x1.1500000000000p+3,
    0x1.1700000000000p+3, 0x1.1900000000000p+3, 0x1.1b00000000000p+3,
    0x1.1d00000000000p+3, 0x1.1f00000000000p+3, 0x1.2100000000000p+3,
    0x1.2300000000000p+3, 0x1.2500000000000p+3, 0x1.2700000000000p+3,
    0x1.2900000000000p+3, 0x1.2b00000000000p+3, 0x1.2d00000000000p+3,
    0x1.2f00000000000p+3, 0x1.3100000000000p+3, 0x1.3300000000000p+3,
    0x1.3500000000000p+3, 0x1.3700000000000p+3, 0x1.3900000000000p+3,
    0x1.3b00000000000p+3, 0x1.3d00000000000p+3, 0x1.3f00000000000p+3,
    0x1.4100000000000p+3, 0x1.4300000000000p+3, 0x1.4500000000000p+3,
    0x1.4700000000000p+3, 0x1.4900000000000p+3, 0x1.4b00000000000p+3,
    0x1.4d00000000000p+3, 0x1.4f00000000000p+3, 0x1.5100000000000p+3,
    0x1.5300000000000p+3, 0x1.5500000000000p+3, 0x1.5700000000000p+3,
    0x1.5900000000000p+3, 0x1.5b00000000000p+3, 0x1.5d00000000000p+3,
    0x1.5f00000000000p+3, 0x1.6100000000000p+3, 0x1.6300000000000p+3,
    0x1.6500000000000p+3, 0x1.6700000000000p+3, 0x1.6900000000000p+3,
    0x1.6b00000000000p+3, 0x1.6d00000000000p+3, 0x1.6f00000000000p+3,
    0x1.7100000000000p+3, 0x1.7300000000000p+3, 0x1.7500000000000p+3,
    0x1.7700000000000p+3, 0x1.7900000000000p+3, 0x1.7b00000000000p+3,
    0x1.7d00000000000p+3, 0x1.7f00000000000p+3, 0x1.8100000000000p+3,
    0x1.8300000000000p+3, 0x1.8500000000000p+3, 0x1.8700000000000p+3,
    0x1.8900000000000p+3, 0x1.8b00000000000p+3, 0x1.8d00000000000p+3,
    0x1.8f00000000000p+3, 0x1.9100000000000p+3, 0x1.9300000000000p+3,
    0x1.9500000000000p+3, 0x1.9700000000000p+3, 0x1.9900000000000p+3,
    0x1.9b00000000000p+3, 0x1.9d00000000000p+3, 0x1.9f00000000000p+3,
    0x1.a100000000000p+3, 0x1.a300000000000p+3, 0x1.a500000000000p+3,
    0x1.a700000000000p+3, 0x1.a900000000000p+3, 0x1.ab00000000000p+3,
    0x1.ad00000000000p+3, 0x1.af00000000000p+3, 0x1.b100000000000p+3,
    0x1.b300000000000p+3, 0x1.b500000000000p+3, 0x1.b700000000000p+3,
    0x1.b900000000000p+3, 0x1.bb00000000000p+3, 0x1.bd00000000000p+3,
    0x1.bf00000000000p+3, 0x1.c100000000000p+3, 0x1.c300000000000p+3,
    0x1.c500000000000p+3, 0x1.c700000000000p+3, 0x1.c900000000000p+3,
    0x1.cb00000000000p+3, 0x1.cd00000000000p+3, 0x1.cf00000000000p+3,
    0x1.d100000000000p+3, 0x1.d300000000000p+3, 0x1.d500000000000p+3,
    0x1.d700000000000p+3, 0x1.d900000000000p+3, 0x1.db00000000000p+3,
    0x1.dd00000000000p+3, 0x1.df00000000000p+3, 0x1.e100000000000p+3,
    0x1.e300000000000p+3, 0x1.e500000000000p+3, 0x1.e700000000000p+3,
    0x1.e900000000000p+3, 0x1.eb00000000000p+3, 0x1.ed00000000000p+3,
    0x1.ef00000000000p+3, 0x1.f100000000000p+3, 0x1.f300000000000p+3,
    0x1.f500000000000p+3, 0x1.f700000000000p+3, 0x1.f900000000000p+3,
    0x1.fb00000000000p+3, 0x1.fd00000000000p+3, 0x1.ff00000000000p+3,
    0x1.0800000000000p-1, 0x1.1800000000000p-1, 0x1.2800000000000p-1,
    0x1.3800000000000p-1, 0x1.4800000000000p-1, 0x1.5800000000000p-1,
    0x1.6800000000000p-1, 0x1.7800000000000p-1, 0x1.8800000000000p-1,
    0x1.9800000000000p-1, 0x1.a800000000000p-1, 0x1.b800000000000p-1,
    0x1.c800000000000p-1, 0x1.d800000000000p-1, 0x1.e800000000000p-1,
    0x1.f800000000000p-1, 0x1.0800000000000p-2, 0x1.1800000000000p-2,
    0x1.2800000000000p-2, 0x1.3800000000000p-2, 0x1.4800000000000p-2,
    0x1.5800000000000p-2, 0x1.6800000000000p-2, 0x1.7800000000000p-2,
    0x1.8800000000000p-2, 0x1.9800000000000p-2, 0x1.a800000000000p-2,
    0x1.b800000000000p-2, 0x1.c800000000000p-2, 0x1.d800000000000p-2,
    0x1.e800000000000p-2, 0x1.f800000000000p-2, 0x1.0800000000000p-3,
    0x1.1800000000000p-3, 0x1.2800000000000p-3, 0x1.3800000000000p-3,
    0x1.4800000000000p-3, 0x1.5800000000000p-3, 0x1.6800000000000p-3,
    0x1.7800000000000p-3, 0x1.8800000000000p-3, 0x1.9800000000000p-3,
    0x1.a800000000000p-3, 0x1.b800000000000p-3, 0x1.c800000000000p-3,
    0x1.d800000000000p-3, 0x1.e800000000000p-3, 0x1.f800000000000p-3,
    0x1.0800000000000p-4, 0x1.1800000000000p-4, 0x1.2800000000000p-4,
    0x1.3800000000000p-4, 0x1.4800000000000p-4, 0x1.5800000000000p-4,
    0x1.6800000000000p-4, 0x1.7800000000000p-4, 0x1.8800000000000p-4,
    0x1.9800000000000p-4, 0x1.a800000000000p-4, 0x1.b800000000000p-4,
    0x1.c800000000000p-4, 0x1.d800000000000p-4, 0x1.e800000000000p-4,
    0x1.f800000000000p-4, 0x1.0800000000000p-5, 0x1.1800000000000p-5,
    0x1.2800000000000p-5, 0x1.3800000000000p-5, 0x1.4800000000000p-5,
    0x1.5800000000000p-5, 0x1.6800000000000p-5, 0x1.7800000000000p-5,
    0x1.8800000000000p-5, 0x1.9800000000000p-5, 0x1.a800000000000p-5,
    0x1.b800000000000p-5, 0x1.c800000000000p-5, 0x1.d800000000000p-5,
    0x1.e800000000000p-5, 0x1.f800000000000p-5, 0x1.0800000000000p-6,
    0x1.1800000000000p-6, 0x1.2800000000000p-6, 0x1.3800000000000p-6,
    0x1.4800000000000p-6, 0x1.5800000000000p-6, 0x1.6800000000000p-6,
    0x1.7800000000000p-6, 0x1.8800000000000p-6, 0x1.9800000000000p-6,
    0x1.a800000000000p-6, 0x1.b800000000000p-6, 0x1.c800000000000p-6,
    0x1.d800000000000p-6, 0x1.e800000000000p-6, 0x1.f800000000000p-6,
    0x1.0800000000000p-7, 0x1.1800000000000p-7, 0x1.2800000000000p-7,
    0x1.3800000000000p-7, 0x1.4800000000000p-7, 0x1.5800000000000p-7,
    0x1.6800000000000p-7, 0x1.7800000000000p-7, 0x1.8800000000000p-7,
    0x1.9800000000000p-7, 0x1.a800000000000p-7, 0x1.b800000000000p-7,
    0x1.c800000000000p-7, 0x1.d800000000000p-7, 0x1.e800000000000p-7,
    0x1.f800000000000p-7, 0x1.0800000000000p-8, 0x1.1800000000000p-8,
    0x1.2800000000000p-8, 0x1.3800000000000p-8, 0x1.4800000000000p-8,
    0x1.5800000000000p-8, 0x1.6800000000000p-8, 0x1.7800000000000p-8,
    0x1.8800000000000p-8, 0x1.9800000000000p-8, 0x1.a800000000000p-8,
    0x1.b800000000000p-8, 0x1.c800000000000p-8, 0x1.d800000000000p-8,
    0x1.e800000000000p-8, 0x1.f800000000000p-8,
};

/* P(x) = c[0] + c[1] x + ... + c[7] x^7 by Estrin's scheme: short chains of
 * dependent operations; the constant term, the largest, is added last so
 * that the smaller terms' roundings stay below its last place. */
static inline double bw__dj_eval(const double *c, double x) {
  double x2 = x * x, x4 = x2 * x2;
  return c[0] + ((c[1] * x + x2 * (c[2] + c[3] * x)) +
                 x4 * ((c[4] + c[5] * x) + x2 * (c[6] + c[7] * x)));
}

/* f(t) outside the pieces, t < 2^-8 or t >= 16 (a first retry in 256, or
 * retries past the 16th):
 * - [16, 100): 2^t and w = e^(2y), y = sqrt(4t), from one table of
 *   2^(j/64) and a short series each, then tanh(y) = (w - 1) / (w + 1) with
 *   w - 1 computed without cancellation; for y above ~19 both round tanh to
 *   1;
 * - below 2^-8 (tanh's cancellation-prone range near 0) and from 100 on,
 *   libm. */
static double bw__dj_f(double t) {
  double y, z, s, e, p2, zk;
  int64_t k2, kz;
  if (!(t >= 16.0 && t < 100.0)) return bw__dj_f_libm(t);
  /* 2^t = 2^(k2/64) * 2^r, |r| <= 1/128; t - k2/64 is exact. */
  k2 = (int64_t)(t * 64.0 + 0.5);
  p2 = bw__scaled(
      k2, (t - (double)k2 * (1.0 / 64.0)) * 0x1.62e42fefa39efp-1 /* ln 2 */);
  /* w = e^z, z = 2y in [1, 40): z = kz * ln2/64 + r with ln2/64 in two
   * parts (the first exact times any kz < 2^13), |r| <= ln2/128. */
  y = sqrt(BW__DJ_P * t);
  z = 2.0 * y;
  kz = (int64_t)(z * 0x1.71547652b82fep+6 /* 64/ln2 */ + 0.5);
  zk = (double)kz;
  s = bw__pow2_64(kz);
  /* e^z - 1 = (s - 1) + s (e^r - 1): s - 1 is exact while s <= 2 */
  e = (s - 1.0) + s * bw__expm1_small((z - zk * 0x1.62e42fefa2000p-7) -
                                      zk * 0x1.9ef35793c7673p-47);
  return p2 * (e / (e + 2.0));
}

/* The delay from f of this retry and of the previous one (the tail of
 * bw__decorrelated). */
static inline int64_t bw__dj_delay(const bw_retry_policy_t *p, double next,
                                   double *prev, bool finite) {
  double before = prev != NULL ? *prev : 0.0;
  double v;
  int64_t d;
  if (prev != NULL) *prev = next;
  if (!finite && !isfinite(next)) return p->max_ms; /* t >= 1024: the cap */
  v = (next - before) * BW__DJ_SCALE * p->dj_base;
  if (isnan(v)) return p->max_ms;
  if (v >= p->dj_max) return p->max_ms;
  /* Rounded to the nearest ms, halves up: v + 0.5 > 0 here, where a
   * conversion (which truncates) is floor, without floor's libm call. */
  d = v > 0 ? (int64_t)(v + 0.5) : 0;
  return d < p->min_ms ? p->min_ms : d;
}

/* bw__decorrelated beyond the pieces: out of line, so that the common path
 * needs no stack frame and ends in a jump. */
__attribute__((noinline, cold)) static int64_t bw__dj_slow(
    const bw_retry_policy_t *p, double t, double *prev) {
  return bw__dj_delay(p, bw__dj_f(t), prev, false);
}

/* Polly v8's DecorrelatedJitterBackoffV2 (the formula credited to George
 * Polevoy): t = attempt + U[0,1), f(t) = 2^t * tanh(sqrt(P * t)); the delay is
 * (f(t) - f(previous t)) / 1.4 * base_ms. Because t of retry n lies in
 * [n-1, n) and f increases, each delay is positive, the sum of the first n
 * delays grows like base_ms * 2^n / 1.4, and consecutive delays are not
 * correlated the way "previous * 3" jitter is. *prev carries f between
 * retries, uncapped (the cap applies to the delay only, as in Polly). The
 * draw is m, 53 random bits: U = m / 2^53, as bw_rand_double gives.
 *
 * f is not libm's exp2 * tanh(sqrt) but the pieces above (retries 1 to 16)
 * and bw__dj_f: within a few units in the last place of the libm product
 * (itself within a few of the true value), so the delay rounded to the ms
 * is the libm delay's: the two can differ only when (f - prev) / 1.4 *
 * base_ms lies within about 1e-15 of its own magnitude from a half ms, and
 * tests/test_retry.c checks that 10^6 random delays agree.
 *
 * t is computed as the reference computes it (rounded); the piece comes
 * from n and m by integer operations, off the chain of floating-point
 * operations that computes t. Where t rounds up to the next piece's start
 * (or to n), it is still within this piece's fit (x = 1/32 at most). For
 * the first retry t = m 2^-53 exactly; m < 2^53, so clz(m) >= 11 and t's
 * binade is 2^(10 - clz(m)). */
__attribute__((always_inline)) static inline int64_t bw__decorrelated(
    const bw_retry_policy_t *p, uint32_t n, uint64_t m, double *prev) {
  double t = (double)(n - 1) + (double)m * 0x1.0p-53;
  unsigned i;
  if (BW__LIKELY(n - 2u < (uint32_t)BW__DJ_UNITS)) {
    i = (n - 2u) * BW__DJ_SUB + (unsigned)(m >> 49); /* 53 - 4 */
  } else {
    int lz = __builtin_clzll(m | 1u);
    if (BW__UNLIKELY(n != 1u || lz > 10 + BW__DJ_BINADES))
      return bw__dj_slow(p, t, prev);
    i = BW__DJ_LOW + (unsigned)(lz - 11) * BW__DJ_SUB +
        (unsigned)((m << (lz + 1)) >> 60);
  }
  return bw__dj_delay(p, bw__dj_eval(bw__dj_coef[i], t - bw__dj_center[i]),
                      prev, true);
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
  return p != NULL ? p->name : NULL;
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
  f[0].key = "attempts";
  f[0].type = BW_FIELD_UINT;
  f[0].v.u = r->attempts;
  f[1].key = "reason";
  f[1].type = BW_FIELD_STR;
  f[1].v.s = bw_giveup_name((bw_giveup_t)r->giveup);
  f[2].key = "verdict";
  f[2].type = BW_FIELD_STR;
  f[2].v.s = bw_verdict_name(v);
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
                               int64_t delay, int64_t hint, int64_t now) {
  const bw_retry_policy_t *p = r->policy;
  bw_field_t f[3];
  char reason[160], of[32], why[48];
  f[0].key = "attempt";
  f[0].type = BW_FIELD_UINT;
  f[0].v.u = r->attempts;
  f[1].key = "delay_ms";
  f[1].type = BW_FIELD_INT;
  f[1].v.i = delay;
  f[2].key = "verdict";
  f[2].type = BW_FIELD_STR;
  f[2].v.s = bw_verdict_name(v);
  of[0] = '\0';
  if (p->max_attempts != 0)
    snprintf(of, sizeof(of), " of %u", p->max_attempts - 1);
  why[0] = '\0';
  if (hint >= 0)
    snprintf(why, sizeof(why), " (Retry-After %lld ms)", (long long)hint);
  snprintf(reason, sizeof(reason), "%s, retry %u%s in %lld ms%s",
           v == BW_VERDICT_NOT_SENT ? "request not sent" : "transient failure",
           r->attempts, of, (long long)delay, why);
  bw_event_emit(p->sink, p->wall, now, BW_EV_RETRY_SCHEDULED, p->name, reason,
                f, 3, NULL);
}

int bw_retry_next(bw_retry_t *r, bw_verdict_t v, int64_t retry_after_ms,
                  int64_t now_ns, int64_t *delay_ms) {
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
  if (p->sink != NULL) bw__emit_scheduled(r, v, delay, hint, now_ns);
  return BW_RETRY;
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

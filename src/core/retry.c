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
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
    return bw__error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw__check_name(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (c->max_elapsed_ms < 0 || c->max_elapsed_ms > BW__MAX_MS)
    return bw__error_set(err, BW_E_INVAL, "max_elapsed_ms",
                         "max_elapsed_ms must be 0 (no limit) or in 1..%lld "
                         "(got %lld)",
                         (long long)BW__MAX_MS, (long long)c->max_elapsed_ms);
  if (c->max_attempts == 0 && c->max_elapsed_ms == 0)
    return bw__error_set(err, BW_E_INVAL, "max_attempts",
                         "max_attempts must be >= 1 unless max_elapsed_ms > 0 "
                         "(got 0 with max_elapsed_ms 0: nothing would ever "
                         "stop the retries)");
  if (c->stop_before && c->max_elapsed_ms == 0)
    return bw__error_set(err, BW_E_INVAL, "stop_before",
                         "stop_before needs max_elapsed_ms > 0 (it refuses "
                         "delays that would end past max_elapsed_ms)");
  if ((unsigned)c->backoff > (unsigned)BW_BACKOFF_EXPONENTIAL)
    return bw__error_set(err, BW_E_INVAL, "backoff",
                         "backoff must be constant, linear or exponential "
                         "(got %d)",
                         (int)c->backoff);
  /* 0 is the storm pattern (retry at once): expressible, so the lab can
   * show what it does, but only on a constant curve, where it means exactly
   * that. */
  if (c->base_ms < (c->backoff == BW_BACKOFF_CONSTANT ? 0 : 1) ||
      c->base_ms > BW__MAX_MS)
    return bw__error_set(err, BW_E_INVAL, "base_ms",
                         "base_ms must be in 1..%lld (0 only with backoff "
                         "constant: immediate retries) (got %lld)",
                         (long long)BW__MAX_MS, (long long)c->base_ms);
  if (!(c->multiplier >= 1.0) || !isfinite(c->multiplier))
    return bw__error_set(err, BW_E_INVAL, "multiplier",
                         "multiplier must be a finite number >= 1 (got %g)",
                         c->multiplier);
  if (c->min_ms < 0 || c->min_ms > BW__MAX_MS)
    return bw__error_set(err, BW_E_INVAL, "min_ms",
                         "min_ms must be in 0..%lld (got %lld)",
                         (long long)BW__MAX_MS, (long long)c->min_ms);
  floor_ms = c->base_ms > c->min_ms ? c->base_ms : c->min_ms;
  if (c->max_ms < floor_ms || c->max_ms > BW__MAX_MS)
    return bw__error_set(err, BW_E_INVAL, "max_ms",
                         "max_ms must be >= max(base_ms, min_ms) = %lld and "
                         "<= %lld (got %lld)",
                         (long long)floor_ms, (long long)BW__MAX_MS,
                         (long long)c->max_ms);
  if ((unsigned)c->jitter > (unsigned)BW_JITTER_ADDITIVE)
    return bw__error_set(err, BW_E_INVAL, "jitter",
                         "jitter must be none, full, equal, decorrelated or "
                         "additive (got %d)",
                         (int)c->jitter);
  if (c->jitter_ms < 0 || c->jitter_ms > BW__MAX_MS)
    return bw__error_set(err, BW_E_INVAL, "jitter_ms",
                         "jitter_ms must be in 0..%lld (got %lld)",
                         (long long)BW__MAX_MS, (long long)c->jitter_ms);
  if (c->jitter == BW_JITTER_DECORRELATED &&
      c->backoff != BW_BACKOFF_EXPONENTIAL)
    return bw__error_set(err, BW_E_INVAL, "jitter",
                         "jitter decorrelated replaces an exponential curve: "
                         "it needs backoff exponential (got %s)",
                         bw__backoff_name(c->backoff));
  /* The decorrelated curve doubles per retry by construction; accepting
   * another multiplier would silently ignore it. */
  if (c->jitter == BW_JITTER_DECORRELATED && c->multiplier != 2.0)
    return bw__error_set(err, BW_E_INVAL, "multiplier",
                         "multiplier must be 2 with jitter decorrelated (its "
                         "curve doubles per retry; got %g)",
                         c->multiplier);
  bw__error_clear(err);
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

/* f on [1, 16) (retries 2 to 16), piecewise: on each eighth of a unit,
 * [k + j/8, k + (j+1)/8), f(t) = 2^k * P(x) with x = t - (k + j/8 + 1/16) in
 * [-1/16, 1/16) and P of degree 9, the Chebyshev fit of 2^(t-k) tanh(2
 * sqrt(t)) computed at 40 digits (mpmath's chebyfit): the fit is within
 * 1.2e-17 of the true value, far below the last place of P (>= 0.96). Ten
 * coefficients per piece, lowest degree first; 120 pieces. */
#define BW__DJ_K0 1
#define BW__DJ_K1 16
#define BW__DJ_SUB 8
#define BW__DJ_NC 10
static const double
    bw__dj_poly[(BW__DJ_K1 - BW__DJ_K0) * BW__DJ_SUB * BW__DJ_NC] = {
        0x1.02d0469f0230ap+0,   0x1.87544e96a946ap-1,   0x1.b2bda8460c1c4p-3,
        0x1.744a442e5b8eep-4,   -0x1.10e4ae09791bfp-6,  0x1.70de7568965aep-6,
        -0x1.0c517f1a27f65p-6,  0x1.a810d70b414dfp-7,   -0x1.4e2e6d2c9fb6cp-7,
        0x1.07eba967b15dcp-7,   0x1.1c2a53084b975p+0,   0x1.a4a0ca3146772p-1,
        0x1.f623d8ade0a74p-3,   0x1.5e5bb6ab471f4p-4,   -0x1.74991014884c7p-8,
        0x1.bcca4419aab24p-7,   -0x1.149a10ea367aap-7,  0x1.92b40413103bfp-8,
        -0x1.1ef844c900822p-8,  0x1.99f2578aed40bp-9,   0x1.377a53a046890p+0,
        0x1.c60cbc09790ebp-1,   0x1.1b9d1d6849498p-2,   0x1.5a3d4d46619dap-4,
        0x1.343f813c55577p-10,  0x1.2271eae3a388ep-7,   -0x1.2a8c91444c99bp-8,
        0x1.991452c20a65dp-9,   -0x1.0a028f5f9ef28p-9,  0x1.5bac5b2c47c75p-10,
        0x1.5501977ebce6ap+0,   0x1.eb8a418a59092p-1,   0x1.3c593df65b08fp-2,
        0x1.61b02b2ab2f7ap-4,   0x1.7e281ef3bc8cep-8,   0x1.9be3975c65c2ep-8,
        -0x1.4b8f53c31a23ap-9,  0x1.b7f456c42c6b8p-10,  -0x1.0664819708463p-10,
        0x1.3cc2a237a1f93p-11,  0x1.7501bd4abc718p+0,   0x1.0a976eb85c84cp+0,
        0x1.5e2f12d27ac4ep-2,   0x1.714cf6fd93e0dp-4,   0x1.2fa26ae4e18cbp-7,
        0x1.3d8c23119b2cfp-8,   -0x1.72d5739ff8c86p-10, 0x1.f1bd714de08f2p-11,
        -0x1.10740d73c5268p-11, 0x1.3256b0fd200ecp-12,  0x1.97be8cf65cb49p+0,
        0x1.21947770bb805p+0,   0x1.81c99c819c3c7p-2,   0x1.872eb5546ed52p-4,
        0x1.89df7d40ec76ep-7,   0x1.093b5e9263b31p-8,   -0x1.93b6e71b23db1p-11,
        0x1.27499f47f11c4p-11,  -0x1.2736b610bc4e7p-12, 0x1.37a9188819560p-13,
        0x1.bd7f52397f16bp+0,   0x1.3adcec8014489p+0,   0x1.a7b176e330763p-2,
        0x1.a248ce00770b4p-4,   0x1.d7f722dd8f4e8p-7,   0x1.db7e22002af26p-9,
        -0x1.8d9e43fe50287p-12, 0x1.6f824dc38a6c3p-12,  -0x1.4b466862cff95p-13,
        0x1.4b4a155a87c0fp-14,  0x1.e68ff05baee06p+0,   0x1.569963ac9a500p+0,
        0x1.d05c8750cd673p-2,   0x1.c20df7846f1fcp-4,   0x1.100700702ed94p-6,
        0x1.c3502a6fa91a0p-9,   -0x1.1137ecb049405p-13, 0x1.e151d44b2457ap-13,
        -0x1.7e291e5472690p-14, 0x1.6e0d0f0cc5f35p-15,  0x1.09a0e7c5d7d36p+0,
        0x1.74f97d0a4cccbp-1,   0x1.fc376b6703af5p-3,   0x1.e63f8de0389c8p-5,
        0x1.33051f389db31p-7,   0x1.bf3b103fab8bdp-10,  0x1.365e3ad768606p-16,
        0x1.4d8b4b54e14bep-14,  -0x1.c182992d85672p-16, 0x1.a2da7c74f3da1p-17,
        0x1.21f65b8b1eb31p+0,   0x1.963381a3dd716p-1,   0x1.15d5b8228c1e8p-2,
        0x1.07690aeab209ap-4,   0x1.56443e77ef698p-7,   0x1.c9082f39e57d7p-10,
        0x1.47e9ddd7a0381p-14,  0x1.ec5d1bbc7985ap-15,  -0x1.0ab11c2ff35abp-16,
        0x1.ef250ffaccc3ep-18,  0x1.3c77d05448068p+0,   0x1.ba84504bbb766p-1,
        0x1.2f9147222cdefp-2,   0x1.1deea7a960518p-4,   0x1.7ab231d773e2cp-7,
        0x1.dd0ced4d216f9p-10,  0x1.03592f1bd105ep-13,  0x1.84dd74e5bebdep-15,
        -0x1.3a1ef031f55a3p-17, 0x1.2e1223fc40476p-18,  0x1.5958c65c4e53cp+0,
        0x1.e22f8013ee83fp-1,   0x1.4b851e1301c1fp-2,   0x1.36c96a00af51cp-4,
        0x1.a103b88597ac2p-7,   0x1.f91dee6c64d42p-10,  0x1.5137fbfc75191p-13,
        0x1.48b72e70d5e82p-15,  -0x1.64bf509e7c865p-18, 0x1.7cad845d71172p-19,
        0x1.78d12ee6acf33p+0,   0x1.06bfd502bf6ccp+0,   0x1.69eac98e2bfb1p-2,
        0x1.521c46037ad3dp-4,   0x1.c9cbff2ee0b8fp-7,   0x1.0dfc3d5098f35p-9,
        0x1.952226411bc13p-13,  0x1.27d23e627e746p-15,  -0x1.6de20fb3d30f8p-19,
        0x1.f0cfd556606cdp-20,  0x1.9b1ddf7d7be35p+0,   0x1.1e6368cb78e84p+0,
        0x1.8aff85f212f1bp-2,   0x1.7012bab842b2cp-4,   0x1.f58b1c1bfcb81p-7,
        0x1.2275e30bb6000p-9,   0x1.d3ecfd75cf40dp-13,  0x1.18accd48a6d1dp-15,
        -0x1.0ddf823ff60e6p-20, 0x1.514fdb0c254d5p-20,  0x1.c0810c8a45926p+0,
        0x1.382f7378cbf11p+0,   0x1.af0500a7f90c6p-2,   0x1.90dfefda9f8e0p-4,
        0x1.125ba54a7a2b8p-6,   0x1.39d2e9cd24508p-9,   0x1.086670bffb80dp-12,
        0x1.158ddcdeba507p-15,  0x1.9347503bc17f6p-23,  0x1.dfb347eaa9f06p-21,
        0x1.e942ccce7512ap+0,   0x1.5455302767e86p+0,   0x1.d6420a3e70608p-2,
        0x1.b4be4c367f5b1p-4,   0x1.2be1832ed2ca8p-6,   0x1.540a5f2c4e7eep-9,
        0x1.26fcc3a88db11p-12,  0x1.1af76e07afe76p-15,  0x1.1bd8a967e01e6p-20,
        0x1.67d13b4ee0f53p-21,  0x1.0ad8d3908d8a4p+0,   0x1.730a749350eb3p-1,
        0x1.0081a154679a4p-2,   0x1.dbef5d5d2e687p-5,   0x1.4790a19f861dep-7,
        0x1.712a017f089f8p-10,  0x1.4687ee2f3c600p-13,  0x1.26c4325525ffdp-16,
        0x1.cfe935bc099e4p-21,  0x1.1e61d577cacbep-22,  0x1.231195e5cbff0p+0,
        0x1.948a13707629ep-1,   0x1.17cde3070d518p-2,   0x1.035dfc6936272p-4,
        0x1.65a43e3dd9ce4p-7,   0x1.91508189be520p-10,  0x1.67a6e0ad75b15p-13,
        0x1.37a3d8e97392fp-16,  0x1.31c60f8107be8p-20,  0x1.e4c3378627112p-23,
        0x1.3d7a4d6fc6dfap+0,   0x1.b91449b485896p-1,   0x1.3132ef665a4b7p-2,
        0x1.1aba4406821adp-4,   0x1.865a874c1f4b8p-7,   0x1.b4a9feca6113ap-10,
        0x1.8adbacc0fddf5p-13,  0x1.4cccd35699e08p-16,  0x1.721706449549bp-20,
        0x1.b303c0fd2c055p-23,  0x1.5a45cc755be4cp+0,   0x1.e0ef3742e222ap-1,
        0x1.4ce1e021250e0p-2,   0x1.3438bb2b3a533p-4,   0x1.a9f5916745d3ap-7,
        0x1.db6dec2a4639bp-10,  0x1.b09775b5c7281p-13,  0x1.65cd02c38e2f1p-16,
        0x1.ad527561d6a86p-20,  0x1.9ad62079a304fp-23,  0x1.79ab79bf5a216p+0,
        0x1.0633b1cf71a35p+0,   0x1.6b10269f68db4p-2,   0x1.5009dd95a4327p-4,
        0x1.d0bc2cdfe2d35p-7,   0x1.02eeef1212e08p-9,   0x1.d942492d37b53p-13,
        0x1.826ca350267f5p-16,  0x1.e677bb9be4e70p-20,  0x1.94532102f5bb2p-23,
        0x1.9be7bb8d07ad9p+0,   0x1.1de827b9c6167p+0,   0x1.8bf7f6532c472p-2,
        0x1.6e62bf07bb737p-4,   0x1.fafaa9a68e71bp-7,   0x1.1a227a3be4500p-9,
        0x1.02a037f9f5a07p-12,  0x1.a29c32a1cda93p-16,  0x1.0fd157c63356ap-19,
        0x1.9a8332f33e219p-23,  0x1.c13c6c0e1b41bp+0,   0x1.37c289f325b1dp+0,
        0x1.afd8b747f28ffp-2,   0x1.8f7d692a8a19dp-4,   0x1.1481c9f44d70ep-6,
        0x1.337bd77f1be8dp-9,   0x1.1a7b14ebae1d1p-12,  0x1.c669126145507p-16,
        0x1.2d2feff6af484p-19,  0x1.aa44c05e473bep-23,  0x1.e9f1584777d91p+0,
        0x1.53f488672f1fdp+0,   0x1.d6f7820c83fc5p-2,   0x1.b39945318ff63p-4,
        0x1.2d98383a43413p-6,   0x1.4f2a079ea13b4p-9,   0x1.34653551cb927p-12,
        0x1.edf65f3b79ea2p-16,  0x1.4bf0d8bcf5563p-19,  0x1.c1a167b4c7070p-23,
        0x1.0b2a652d56891p+0,   0x1.72b45586e664ep-1,   0x1.00cfd30924771p-2,
        0x1.dafb9166396bcp-5,   0x1.48f13f0b9071ep-7,   0x1.6d60f9cd0a6a6p-10,
        0x1.50947b6ad9d45p-13,  0x1.0cbc3a32c89a4p-16,  0x1.6c913d4f3a938p-20,
        0x1.df64e23bd0a50p-24,  0x1.235e101e95b10p+0,   0x1.943d0e365e792p-1,
        0x1.18119dd2614a1p-2,   0x1.02f7f1861440cp-4,   0x1.66c1bff849170p-7,
        0x1.8e59d018033aep-10,  0x1.6f420e53c06cdp-13,  0x1.249915568f1dap-16,
        0x1.8f7d6cae6cc20p-20,  0x1.016dbaa003a3dp-23,  0x1.3dc23801a6d3bp+0,
        0x1.b8cf2b3e7a49ap-1,   0x1.316de15484397p-2,   0x1.1a645aa44d52cp-4,
        0x1.87434a012f2cbp-7,   0x1.b25336f858655p-10,  0x1.90ab188f679bap-13,
        0x1.3eb99e777834cp-16,  0x1.b5185372befbcp-20,  0x1.15d4499a6e4a7p-23,
        0x1.5a899d7e76622p+0,   0x1.e0b0fd193b913p-1,   0x1.4d1567b3bca66p-2,
        0x1.33f002f3b0eecp-4,   0x1.aab48c627e3bap-7,   0x1.d991cde044f58p-10,
        0x1.b51175d2f8befp-13,  0x1.5b4bb9a5722c2p-16,  0x1.ddc09e75ebcb9p-20,
        0x1.2cd640e4e74c5p-23,  0x1.79eb987ea5041p+0,   0x1.06179981f3d42p+0,
        0x1.6b3d635c28b41p-2,   0x1.4fcc00814d35cp-4,   0x1.d159d229c907ap-7,
        0x1.02304fd51801fp-9,   0x1.dcbc592ff3ab7p-13,  0x1.7a832c6aa602ep-16,
        0x1.04ea2f55c337ep-19,  0x1.4679bb5741189p-23,  0x1.9c2482a373b48p+0,
        0x1.1dceb72c51bf2p+0,   0x1.8c1fd5831ae5ap-2,   0x1.6e2dde5d0e8b5p-4,
        0x1.fb7d87cf77fa3p-7,   0x1.1988d54112e89p-9,   0x1.03fc79067a460p-12,
        0x1.9c99aa97f7c6dp-16,  0x1.1cd9dbae61963p-19,  0x1.62d5608a02bbcp-23,
        0x1.c1762b5acab99p+0,   0x1.37ab71a4a2300p+0,   0x1.affbfddbe7270p-2,
        0x1.8f5003273e469p-4,   0x1.14b86604fb818p-6,   0x1.32ff3bb47b4fdp-9,
        0x1.1b8d8a54dff9fp-12,  0x1.c1cf08a514907p-16,  0x1.36e1778b6aa76p-19,
        0x1.820ceff9ef89ep-23,  0x1.ea285672e9498p+0,   0x1.53df841796b1ap+0,
        0x1.d716d4599b8d3p-2,   0x1.b372210d388b0p-4,   0x1.2dc6068b8dc89p-6,
        0x1.4ec460e9c0cd4p-9,   0x1.353ef4e9ec56dp-12,  0x1.ea698bbf89558p-16,
        0x1.53360e800c702p-19,  0x1.a44f1740c6912p-23,  0x1.0b44a31034516p+0,
        0x1.72a12a6031fdap-1,   0x1.00ddc6f4de0cdp-2,   0x1.dad9b006f63e9p-5,
        0x1.4917d9e2d5753p-7,   0x1.6d0d981ba0aeep-10,  0x1.5142546003b53p-13,
        0x1.0b5b294c057a1p-16,  0x1.72104c7462ebfp-20,  0x1.c9d426570a79cp-24,
        0x1.237728c0196a6p+0,   0x1.942b894c67022p-1,   0x1.181e16945dafbp-2,
        0x1.02e9399e1bb78p-4,   0x1.66e26ecdeec8bp-7,   0x1.8e150f4b48604p-10,
        0x1.6fcdaec830b5ap-13,  0x1.2384e9fbb38f4p-16,  0x1.93ad240479d22p-20,
        0x1.f2dd5bcf703f1p-24,  0x1.3dda445b825b7p+0,   0x1.b8bf20540409dp-1,
        0x1.31791013cc2d4p-2,   0x1.1a578547500a9p-4,   0x1.875f13c7bb142p-7,
        0x1.b21a3e2c4ae19p-10,  0x1.911bdf67be0ffp-13,  0x1.3de038bf6639dp-16,
        0x1.b84e6c3093f27p-20,  0x1.0fda4dda10037p-23,  0x1.5aa0b3f51c7d5p+0,
        0x1.e0a2459c5bdd9p-1,   0x1.4d1f763973d4cp-2,   0x1.33e4c8af1e9ccp-4,
        0x1.aacc4570048fdp-7,   0x1.d9625f76f37cfp-10,  0x1.b56d0a053452dp-13,
        0x1.5a9f8ef4e0eefp-16,  0x1.e03b7bc21c41ep-20,  0x1.285639c4fdf2fp-23,
        0x1.7a01cd3510d31p+0,   0x1.0610d69b7cc94p+0,   0x1.6b46755362d23p-2,
        0x1.4fc225dbf6e12p-4,   0x1.d16e26e2157d9p-7,   0x1.021c7abd96949p-9,
        0x1.dd0717d54c135p-13,  0x1.79fa0b6bc1631p-16,  0x1.05e0e38c8b09fp-19,
        0x1.43102c2568fc4p-23,  0x1.9c39e7c2aa04dp+0,   0x1.1dc87e4fa709ep+0,
        0x1.8c28097c77d54p-2,   0x1.6e25319ca87bep-4,   0x1.fb8f04df2a06cp-7,
        0x1.19782d73f3076p-9,   0x1.041b1f8e3b68ap-12,  0x1.9c2bd952869c9p-16,
        0x1.1d9ac1fed1de0p-19,  0x1.603a88f696027p-23,  0x1.c18ad14f1e7e7p+0,
        0x1.37a5b5c96d468p+0,   0x1.b0036e2161ca3p-2,   0x1.8f485a8a32c34p-4,
        0x1.14bff2659c446p-6,   0x1.32f1306a9be56p-9,   0x1.1ba6cb520811dp-12,
        0x1.c176a1a43addep-16,  0x1.37792b2e8c4fap-19,  0x1.800ca649f132bp-23,
        0x1.ea3c4c20ac72ap+0,   0x1.53da39bc8745dp+0,   0x1.d71d979c30639p-2,
        0x1.b36b595f18370p-4,   0x1.2dcc90485da5ap-6,   0x1.4eb87d9d9bff5p-9,
        0x1.3553db18eb015p-12,  0x1.ea2207b9aab48p-16,  0x1.53ae04348b007p-19,
        0x1.a2c32546a7860p-23,  0x1.0b4e4c88b2efcp+0,   0x1.729c47560adcap-1,
        0x1.00e0dbe838608p-2,   0x1.dad3ab7bec83bp-5,   0x1.491d884c46fffp-7,
        0x1.6d037e8e4d140p-10,  0x1.5153b2a214dabp-13,  0x1.0b3e18e315d93p-16,
        0x1.726fa82606205p-20,  0x1.c8a05a322b955p-24,  0x1.2380870587a73p+0,
        0x1.942704892ed5ap-1,   0x1.1820e763797bbp-2,   0x1.02e68c423bd8dp-4,
        0x1.66e7628edb0b5p-7,   0x1.8e0c72e5cebdap-10,  0x1.6fdc2cb6adda1p-13,
        0x1.236d2f14f521bp-16,  0x1.93f952c198a14p-20,  0x1.f1ecc2e036407p-24,
        0x1.3de35d10bb987p+0,   0x1.b8baf1ccf5ac5p-1,   0x1.317ba42fb162bp-2,
        0x1.1a55220b16bf5p-4,   0x1.876368211db87p-7,   0x1.b212e068bc8c1p-10,
        0x1.912802e1d25c2p-13,  0x1.3dccc3521b571p-16,  0x1.b88b93f0b409fp-20,
        0x1.0f7bc5b8ee1d5p-23,  0x1.5aa98c436dcbep+0,   0x1.e09e662574cdap-1,
        0x1.4d21d42381ae5p-2,   0x1.33e2a65803668p-4,   0x1.aad011352149dp-7,
        0x1.d95c0d1275fcdp-10,  0x1.b5773e7d2b369p-13,  0x1.5a8f894846861p-16,
        0x1.e06ccd2157700p-20,  0x1.280b90d8ee642p-23,  0x1.7a0a69d941690p+0,
        0x1.060f0b339d278p+0,   0x1.6b48a2bfa5f3ep-2,   0x1.4fc03c7e990d8p-4,
        0x1.d1717d42ce136p-7,   0x1.0219c22106583p-9,   0x1.dd0fb3eda2b27p-13,
        0x1.79ecccbd01d6ap-16,  0x1.05f4dcc21e804p-19,  0x1.42d4ebd622b76p-23,
        0x1.9c424d1868230p+0,   0x1.1dc6d45c75624p+0,   0x1.8c2a0b6e86757p-2,
        0x1.6e237a67e0474p-4,   0x1.fb91f60b1bf5cp-7,   0x1.1975d3fc3130cp-9,
        0x1.041ec47f644bep-12,  0x1.9c20dbb98e1bdp-16,  0x1.1dab012496765p-19,
        0x1.600b4b3075a38p-23,  0x1.c193035b0aaa4p+0,   0x1.37a42ab75e50cp+0,
        0x1.b0054904b396bp-2,   0x1.8f46cf9b52791p-4,   0x1.14c13f3ae8be6p-6,
        0x1.32ef279f2aef5p-9,   0x1.1ba9e3b03b6ddp-12,  0x1.c16d7a621d02bp-16,
        0x1.378670027032dp-19,  0x1.7fe6d0d4402acp-23,  0x1.ea444e9933d33p+0,
        0x1.53d8cb3a91d1ep+0,   0x1.d71f4f58b90adp-2,   0x1.b369f59da1b9fp-4,
        0x1.2dcdb72e502ccp-6,   0x1.4eb6b971a21b0p-9,   0x1.35567e30aa0e8p-12,
        0x1.ea1a6154dd7d2p-16,  0x1.53b8e540ada02p-19,  0x1.a2a4b74b7b54fp-23,
        0x1.0b5237b34a871p+0,   0x1.729af34dff504p-1,   0x1.00e1a7ee0f6d0p-2,
        0x1.dad26a7b59c3ap-5,   0x1.491e8e37a680dp-7,   0x1.6d01f4efe62e3p-10,
        0x1.5155f38d0761bp-13,  0x1.0b3ae3c1149a3p-16,  0x1.72789c294be03p-20,
        0x1.c887c6eb0e340p-24,  0x1.23845db6c0578p+0,   0x1.9425c919113ccp-1,
        0x1.1821a51a4ba6bp-2,   0x1.02e5fb357d8edp-4,   0x1.66e84bbbd374ep-7,
        0x1.8e0b1b637339ap-10,  0x1.6fde1b2c63754p-13,  0x1.236a7c42cf187p-16,
        0x1.9400b7d2d7d02p-20,  0x1.f1d8d5d1674d3p-24,  0x1.3de720c43d591p+0,
        0x1.b8b9cd4134606p-1,   0x1.317c54f5b61e5p-2,   0x1.1a549ec3c37f2p-4,
        0x1.87643830d1ed6p-7,   0x1.b211b3e81bca3p-10,  0x1.9129abdd23ee2p-13,
        0x1.3dca7c50257fep-16,  0x1.b891b4f02b848p-20,  0x1.0f73a9d1ceb08p-23,
        0x1.5aad3e5af8b0dp+0,   0x1.e09d56f3dbdccp-1,   0x1.4d22793134394p-2,
        0x1.33e22f5ddad21p-4,   0x1.aad0cb4615f87p-7,   0x1.d95b05952bd1ap-10,
        0x1.b578acbfd18e2p-13,  0x1.5a8d9bc74256ep-16,  0x1.e071e5e4cc0dap-20,
        0x1.2804f107a0e68p-23,  0x1.7a0e0b9f1f616p+0,   0x1.060e8d95446d6p+0,
        0x1.6b493d2c75a69p-2,   0x1.4fbfd087b7741p-4,   0x1.d172240525528p-7,
        0x1.02194e5ab161bp-9,   0x1.dd10f0695a316p-13,  0x1.79eb29c85e867p-16,
        0x1.05f6fd06dbec9p-19,  0x1.42cf7d98a854ap-23,  0x1.9c45dfc19c83bp+0,
        0x1.1dc6601679e06p+0,   0x1.8c2a9c34e10ebp-2,   0x1.6e23185263290p-4,
        0x1.fb928bd167ab0p-7,   0x1.19756e06f4badp-9,   0x1.041f4d94d4c7bp-12,
        0x1.9c1f770efc138p-16,  0x1.1dacc8a1db42fp-19,  0x1.6006d38f50c13p-23,
        0x1.c1968809479e5p+0,   0x1.37a3bf367fe9ep+0,   0x1.b005d10582d69p-2,
        0x1.8f467667f320bp-4,   0x1.14c182a18db06p-6,   0x1.32eecda5cd57ap-9,
        0x1.1baa5abc71658p-12,  0x1.c16c49ec482c5p-16,  0x1.3787ee59c263dp-19,
        0x1.7fe320f41ef59p-23,  0x1.ea47c65c9cb03p+0,   0x1.53d867f8e754fp+0,
        0x1.d71fcf5e68b85p-2,   0x1.b369a46b1d69ep-4,   0x1.2dcdf3f813bedp-6,
        0x1.4eb669e3a030bp-9,   0x1.3556e5d26f41ap-12,  0x1.ea195cc18a7f1p-16,
        0x1.53ba2720d8d92p-19,  0x1.a2a1a9cb311bdp-23,  0x1.0b53ed9fa9cddp+0,
        0x1.729a97d1a416ep-1,   0x1.00e1e44e9e6e4p-2,   0x1.dad220828626cp-5,
        0x1.491ec527301b5p-7,   0x1.6d01ae767e0d7p-10,  0x1.51564df904a54p-13,
        0x1.0b3a73f6e02e7p-16,  0x1.7279abe5ede63p-20,  0x1.c8853ddbfbc2ep-24,
        0x1.23860e269951bp+0,   0x1.942574f2fa007p-1,   0x1.1821de2b0e55ep-2,
        0x1.02e5d97db5bfep-4,   0x1.66e87d7af7effp-7,   0x1.8e0adcd892340p-10,
        0x1.6fde6a3f42edcp-13,  0x1.236a1c1bc643fp-16,  0x1.94019ddbb3331p-20,
        0x1.f1d6b9252e106p-24,  0x1.3de8cc29bdfd3p+0,   0x1.b8b9800c263bbp-1,
        0x1.317c8b015dbdbp-2,   0x1.1a54800255c63p-4,   0x1.87646554139f5p-7,
        0x1.b2117c4ed6385p-10,  0x1.9129f12a6135cp-13,  0x1.3dca296a55be9p-16,
        0x1.b892782f79be5p-20,  0x1.0f72c7f9a88a8p-23,  0x1.5aaee52243980p+0,
        0x1.e09d105381246p-1,   0x1.4d22ac7b85ec3p-2,   0x1.33e2134d30e8bp-4,
        0x1.aad0f44f9b221p-7,   0x1.d95ad413772e3p-10,  0x1.b578e99ddd92cp-13,
        0x1.5a8d5425270fep-16,  0x1.e0728c0a151fap-20,  0x1.280433d3987a9p-23,
        0x1.7a0fae2ed3724p+0,   0x1.060e6d65500b4p+0,   0x1.6b496df30dfb1p-2,
        0x1.4fbfb6e9db9e4p-4,   0x1.d17249673bc14p-7,   0x1.021938476c286p-9,
        0x1.dd1125fb96545p-13,  0x1.79eaebbf2639dp-16,  0x1.05f743e4b6af4p-19,
        0x1.42cedea8cc183p-23,  0x1.9c477e7b50486p+0,   0x1.1dc642e04ac7ap+0,
        0x1.8c2acaafdfb6ap-2,   0x1.6e2300f0143fep-4,   0x1.fb92adf0a8585p-7,
        0x1.19755a4fb15a0p-9,   0x1.041f653451631p-12,  0x1.9c1f4138235d4p-16,
        0x1.1dad053b6be50p-19,  0x1.60064db247403p-23,  0x1.c1982349f99cbp+0,
        0x1.37a3a4d6fc7a4p+0,   0x1.b005fd6821c76p-2,   0x1.8f46610fd8405p-4,
        0x1.14c1923c1ec4fp-6,   0x1.32eebc03c0da0p-9,   0x1.1baa6f9c903abp-12,
        0x1.c16c1b19e05f5p-16,  0x1.3788224aea3ddp-19,  0x1.7fe2afebad067p-23,
        0x1.ea495e7d19f40p+0,   0x1.53d8505005e2bp+0,   0x1.d71ff9d7816fcp-2,
        0x1.b36990f114a34p-4,   0x1.2dce0244c8018p-6,   0x1.4eb65a193a96ep-9,
        0x1.3556f84e440d4p-12,  0x1.ea1933f4a569bp-16,  0x1.53ba53c03ac88p-19,
        0x1.a2a14a1d15eabp-23,  0x1.0b54b84a4abeap+0,   0x1.729a82c228a52p-1,
        0x1.00e1f8abdf115p-2,   0x1.dad20ebf0a51dp-5,   0x1.491ed248bbf0cp-7,
        0x1.6d01a04e1ad9fp-10,  0x1.51565e5ecc74dp-13,  0x1.0b3a62274b57ap-16,
        0x1.7279d25157e23p-20,  0x1.c884ecac72606p-24,  0x1.2386d7945a5b6p+0,
        0x1.942562623ae85p-1,   0x1.1821f1bcb96a6p-2,   0x1.02e5d16586f2ap-4,
        0x1.66e8899024b1ep-7,   0x1.8e0ad0235c814p-10,  0x1.6fde78d2599f9p-13,
        0x1.236a0c8785111p-16,  0x1.9401bf022bd2ap-20,  0x1.f1d6741901545p-24,
        0x1.3de99481c57b6p+0,   0x1.b8b96fe1d6f7cp-1,   0x1.317c9dd99671bp-2,
        0x1.1a5478a3cf4fep-4,   0x1.876470783e2a5p-7,   0x1.b21170e3d7d9bp-10,
        0x1.9129fe24e4db3p-13,  0x1.3dca1bc38f05bp-16,  0x1.b89294d96ae6dp-20,
        0x1.0f72aa8bf328ap-23,  0x1.5aafac8a44c55p+0,   0x1.e09d0279828f7p-1,
        0x1.4d22beab058a9p-2,   0x1.33e20c9a094f1p-4,   0x1.aad0fe9b2104bp-7,
        0x1.d95ac9cecbdb5p-10,  0x1.b578f5320e0cbp-13,  0x1.5a8d48297ff1bp-16,
        0x1.e072a4dff3815p-20,  0x1.28041aafa4be0p-23,  0x1.7a1074cb2fe11p+0,
        0x1.060e67966ac1fp+0,   0x1.6b497f894883dp-2,   0x1.4fbfb0d539c3ep-4,
        0x1.d17252efd9a1ep-7,   0x1.021933a87f888p-9,   0x1.dd113054fcd90p-13,
        0x1.79eae135efe17p-16,  0x1.05f74eac943bep-19,  0x1.42cec922e7fb4p-23,
        0x1.9c48446f36d01p+0,   0x1.1dc63e265f1afp+0,   0x1.8c2adbbb2483dp-2,
        0x1.6e22fb6e67f34p-4,   0x1.fb92b6c9cbbd5p-7,   0x1.19755626545f5p-9,
        0x1.041f69d6856e3p-12,  0x1.9c1f37f0d7980p-16,  0x1.1dad0e9c274b5p-19,
        0x1.60063b3b6a23bp-23,  0x1.c198e8b782fd4p+0,   0x1.37a3a129c69aap+0,
        0x1.b0060df5b8ba5p-2,   0x1.8f465c16b78f1p-4,   0x1.14c19659a5ec1p-6,
        0x1.32eeb843c1651p-9,   0x1.1baa73c4b51c0p-12,  0x1.c16c12eadee6ep-16,
        0x1.37882a773f5f7p-19,  0x1.7fe2a00c63b36p-23,  0x1.ea4a2385636a4p+0,
        0x1.53d84da80ef31p+0,   0x1.d72009f3c510fp-2,   0x1.b3698c771d519p-4,
        0x1.2dce061b121edp-6,   0x1.4eb656b7d70d2p-9,   0x1.3556fc0aad185p-12,
        0x1.ea192cba2668ap-16,  0x1.53ba5ae33404fp-19,  0x1.a2a13c7161e94p-23,
        0x1.0b551aabecbddp+0,   0x1.729a8118b8a3fp-1,   0x1.00e2008719888p-2,
        0x1.dad20abbc6ecap-5,   0x1.491ed5decc3d0p-7,   0x1.6d019d41d316dp-10,
        0x1.515661bbfbc04p-13,  0x1.0b3a5ef4e4973p-16,  0x1.7279d88f8d02ep-20,
        0x1.c884e0e06cb81p-24,  0x1.238739e330f93p+0,   0x1.942561b14bfc8p-1,
        0x1.1821f96a6e6a8p-2,   0x1.02e5cf9b6efcbp-4,   0x1.66e88cec4b9b1p-7,
        0x1.8e0acd63c94f5p-10,  0x1.6fde7bdb4031ap-13,  0x1.236a09b2ab632p-16,
        0x1.9401c47aca22ep-20,  0x1.f1d669e61aacfp-24,  0x1.3de9f6cd2cf8ep+0,
        0x1.b8b9702409fd9p-1,   0x1.317ca55ed0eb4p-2,   0x1.1a54770dd0d83p-4,
        0x1.876473a02ddfep-7,   0x1.b2116e6987fabp-10,  0x1.912a00e319568p-13,
        0x1.3dca1940c3f6fp-16,  0x1.b89299a7106dap-20,  0x1.0f72a62153187p-23,
        0x1.5ab00ee148618p+0,   0x1.e09d03aa14c52p-1,   0x1.4d22c60c8209ep-2,
        0x1.33e20b350ac21p-4,   0x1.aad10193ff797p-7,   0x1.d95ac79325cd6p-10,
        0x1.b578f7adfb5d1p-13,  0x1.5a8d45eecf388p-16,  0x1.e072a919656c2p-20,
        0x1.280416daba3bdp-23,  0x1.7a10d73c93532p+0,   0x1.060e68a3cb9d9p+0,
        0x1.6b4986cb7ceb9p-2,   0x1.4fbfaf9e6ff5dp-4,   0x1.d17255be505abp-7,
        0x1.021932a713708p-9,   0x1.dd1132960a20dp-13,  0x1.79eadf3ab6b8cp-16,
        0x1.05f75088f59f6p-19,  0x1.42cec5ce70bedp-23,  0x1.9c48a7097f348p+0,
        0x1.1dc63fa705383p+0,   0x1.8c2ae2e2470d6p-2,   0x1.6e22fa634ecb1p-4,
        0x1.fb92b97215b7ap-7,   0x1.1975553eb4a97p-9,   0x1.041f6adcded6bp-12,
        0x1.9c1f362d94ce5p-16,  0x1.1dad10409294fp-19,  0x1.600638555e40cp-23,
        0x1.c1994b88ff434p+0,   0x1.37a3a31c210b5p+0,   0x1.b0061505c64fcp-2,
        0x1.8f465b350b822p-4,   0x1.14c1979ca0e4ap-6,   0x1.32eeb7739d12fp-9,
        0x1.1baa74b3c1fb4p-12,  0x1.c16c11590a352p-16,  0x1.37882beaea893p-19,
        0x1.7fe29d8570512p-23,  0x1.ea4a869c344e7p+0,   0x1.53d8500acaf41p+0,
        0x1.d72010f087134p-2,   0x1.b3698bbcd5971p-4,   0x1.2dce074ea3b0ap-6,
        0x1.4eb655fd1e184p-9,   0x1.3556fce4f8ae5p-12,  0x1.ea192b540de47p-16,
        0x1.53ba5c2c5644fp-19,  0x1.a2a13a3c7ab66p-23,  0x1.0b554c60fc8e0p+0,
        0x1.729a83eabe8f4p-1,   0x1.00e203fda24d9p-2,   0x1.dad20a2710544p-5,
        0x1.491ed7048e0fdp-7,   0x1.6d019c9aaef3ep-10,  0x1.51566283c6c06p-13,
        0x1.0b3a5e5539ef3p-16,  0x1.7279d9b3846cep-20,  0x1.c884def27005bp-24,
        0x1.23876bc8d5825p+0,   0x1.942564f1bc8c1p-1,   0x1.1821fcdad7c52p-2,
        0x1.02e5cf630b28bp-4,   0x1.66e88e05b49b6p-7,   0x1.8e0accce9664dp-10,
        0x1.6fde7c928a2bap-13,  0x1.236a092435c47p-16,  0x1.9401c57e3b61fp-20,
        0x1.f1d6683584df8p-24,  0x1.3dea28ea47542p+0,   0x1.b8b973d23bd73p-1,
        0x1.317ca8cac123ep-2,   0x1.1a5476e6a9d5dp-4,   0x1.876474ae95ff5p-7,
        0x1.b2116de4cfe95p-10,  0x1.912a018ba8da0p-13,  0x1.3dca18c19c033p-16,
        0x1.b8929a8e0191ap-20,  0x1.0f72a563a8ea9p-23,  0x1.5ab0413cb0b2ep+0,
        0x1.e09d07c5924a5p-1,   0x1.4d22c9758ee43p-2,   0x1.33e20b1e7a887p-4,
        0x1.aad10298a3046p-7,   0x1.d95ac71d9a6ecp-10,  0x1.b578f84965078p-13,
        0x1.5a8d457d4994ap-16,  0x1.e072a9e754992p-20,  0x1.2804163432644p-23,
        0x1.7a1109dd1bf59p+0,   0x1.060e6ae80e4b4p+0,   0x1.6b498a332d816p-2,
        0x1.4fbfaf97e377ap-4,   0x1.d17256ba52ef7p-7,   0x1.021932734ef24p-9,
        0x1.dd113325b6bc9p-13,  0x1.79eaded55c2d1p-16,  0x1.05f750e4f0f51p-19,
        0x1.42cec53c0ac7ap-23,  0x1.9c48d9f5f7c82p+0,   0x1.1dc64221c1ee0p+0,
        0x1.8c2ae64a15843p-2,   0x1.6e22fa6c44816p-4,   0x1.fb92ba6684ec4p-7,
        0x1.197555116c315p-9,   0x1.041f6b1f77c24p-12,  0x1.9c1f35d31b820p-16,
        0x1.1dad1092e4398p-19,  0x1.600637d484cc0p-23,  0x1.c1997ec837a22p+0,
        0x1.37a3a5cd652bbp+0,   0x1.b006186f216d9p-2,   0x1.8f465b4d121f1p-4,
        0x1.14c198138bc41p-6,   0x1.32eeb74c59c20p-9,   0x1.1baa74f1adbadp-12,
        0x1.c16c11084fdb6p-16,  0x1.37882c34b9d67p-19,  0x1.7fe29d13e93fcp-23,
        0x1.ea4aba34ff6a5p+0,   0x1.53d852f2ba7cap+0,   0x1.d720145cd3b5cp-2,
        0x1.b3698be38adc3p-4,   0x1.2dce07c2b6037p-6,   0x1.4eb655db75ddfp-9,
        0x1.3556fd1eb88f2p-12,  0x1.ea192b0c12b78p-16,  0x1.53ba5c6ea54d7p-19,
        0x1.a2a139d859caap-23,  0x1.0b55665d97e41p+0,   0x1.729a870993857p-1,
        0x1.00e205b5ef8a3p-2,   0x1.dad20a5c20095p-5,   0x1.491ed776342ffp-7,
        0x1.6d019c7e433dfp-10,  0x1.515662b9ceeafp-13,  0x1.0b3a5e352b24fp-16,
        0x1.7279d9ef350d9p-20,  0x1.c884de9a0b988p-24,  0x1.238785f917577p+0,
        0x1.94256847c67e8p-1,   0x1.1821fe95f6730p-2,   0x1.02e5cf849cabdp-4,
        0x1.66e88e7553e87p-7,   0x1.8e0accb712f6ap-10,  0x1.6fde7cc5432f6p-13,
        0x1.236a0907b2355p-16,  0x1.9401c5b413983p-20,  0x1.f1d667e76c523p-24,
        0x1.3dea4351a6018p+0,   0x1.b8b9775fdf731p-1,   0x1.317caa8958bdep-2,
        0x1.1a54770f27957p-4,   0x1.8764751c8da30p-7,   0x1.b2116dd1e9d65p-10,
        0x1.912a01bb7108bp-13,  0x1.3dca18a84bb79p-16,  0x1.b8929abeaf332p-20,
        0x1.0f72a54122bb6p-23,  0x1.5ab05bdea9834p+0,   0x1.e09d0b8b49030p-1,
        0x1.4d22cb384468ep-2,   0x1.33e20b4dccddfp-4,   0x1.aad103054ca33p-7,
        0x1.d95ac70f0f333p-10,  0x1.b578f87691a54p-13,  0x1.5a8d4566dec67p-16,
        0x1.e072aa137084dp-20,  0x1.28041615a77a1p-23,  0x1.7a1124bd346f2p+0,
        0x1.060e6ce73a2f3p+0,   0x1.6b498bfaa3f9dp-2,   0x1.4fbfafcdf82efp-4,
        0x1.d172572603493p-7,   0x1.0219326e194c8p-9,   0x1.dd113350950c4p-13,
        0x1.79eadec1920ebp-16,  0x1.05f750f8f9638p-19,  0x1.42cec52102686p-23,
        0x1.9c48f517bef2cp+0,   0x1.1dc6443d8f771p+0,   0x1.8c2ae816ee82fp-2,
        0x1.6e22faa90e8f0p-4,   0x1.fb92bad18c6ccp-7,   0x1.1975550e2c839p-9,
        0x1.041f6b33e2d9cp-12,  0x1.9c1f35c1b52e4p-16,  0x1.1dad10a52286dp-19,
        0x1.600637bc95d75p-23,  0x1.c1999a2f474a9p+0,   0x1.37a3a8062f87ep+0,
        0x1.b0061a41fd878p-2,   0x1.8f465b90895efp-4,   0x1.14c19848e1658p-6,
        0x1.32eeb74af9302p-9,   0x1.1baa750534b61p-12,  0x1.c16c10f917689p-16,
        0x1.37882c456280cp-19,  0x1.7fe29cfeb80d7p-23,  0x1.ea4ad5e4fd636p+0,
        0x1.53d85548e6de6p+0,   0x1.d720163652f4ep-2,   0x1.b3698c2dabd8dp-4,
        0x1.2dce07f80227bp-6,   0x1.4eb655dbe068bp-9,   0x1.3556fd31789b7p-12,
        0x1.ea192afed8690p-16,  0x1.53ba5c7de6cc5p-19,  0x1.a2a139c59658dp-23,
        0x1.0b55745be7958p+0,   0x1.729a897d911e6p-1,   0x1.00e206a650b30p-2,
        0x1.dad20aacebc96p-5,   0x1.491ed7ab9a034p-7,   0x1.6d019c8067842p-10,
        0x1.515662cbe2c06p-13,  0x1.0b3a5e2f77edep-16,  0x1.7279d9fd38956p-20,
        0x1.c884de896ffc4p-24,  0x1.2387941f988d7p+0,   0x1.94256ada0e80fp-1,
        0x1.1821ff8a4941fp-2,   0x1.02e5cfb05a995p-4,   0x1.66e88eaaf553cp-7,
        0x1.8e0accbae1fdbp-10,  0x1.6fde7cd6c3592p-13,  0x1.236a0902d63a0p-16,
        0x1.9401c5c0fdc39p-20,  0x1.f1d667d8bb612p-24,  0x1.3dea51a2416f2p+0,
        0x1.b8b97a10f519fp-1,   0x1.317cab81eda94p-2,   0x1.1a54773e4251fp-4,
        0x1.876475528b7a4p-7,   0x1.b2116dd756d92p-10,  0x1.912a01cc7424dp-13,
        0x1.3dca18a4366c5p-16,  0x1.b8929acaa0957p-20,  0x1.0f72a53aa4d08p-23,
        0x1.5ab06a5b505fep+0,   0x1.e09d0e5bb9a04p-1,   0x1.4d22cc356c717p-2,
        0x1.33e20b804b309p-4,   0x1.aad1033bc6cf8p-7,   0x1.d95ac7160f76dp-10,
        0x1.b578f8872c9e2p-13,  0x1.5a8d4563818bdp-16,  0x1.e072aa1e862a7p-20,
        0x1.2804160feca3cp-23,  0x1.7a113367e1185p+0,   0x1.060e6e5f6bb79p+0,
        0x1.6b498cfcb0daap-2,   0x1.4fbfb003e2d71p-4,   0x1.d172575d18f02p-7,
        0x1.021932725ea2ep-9,   0x1.dd113360db4b3p-13,  0x1.79eadebedffcbp-16,
        0x1.05f750fe23522p-19,  0x1.42cec51bf60f7p-23,  0x1.9c4903f275902p+0,
        0x1.1dc645c60b1a8p+0,   0x1.8c2ae91e32e07p-2,   0x1.6e22fae270394p-4,
        0x1.fb92bb095c14dp-7,   0x1.197555133383ap-9,   0x1.041f6b3be4a73p-12,
        0x1.9c1f35bfa2e60p-16,  0x1.1dad10a9f72ffp-19,  0x1.600637b825e87p-23,
        0x1.c199a93c1672cp+0,   0x1.37a3a99f4b5a7p+0,   0x1.b0061b4ecd1cdp-2,
        0x1.8f465bcd6e9c4p-4,   0x1.14c19865353edp-6,   0x1.32eeb750bf20bp-9,
        0x1.1baa750d1da70p-12,  0x1.c16c10f79aeb7p-16,  0x1.37882c49ec51dp-19,
        0x1.7fe29cfad4a86p-23,  0x1.ea4ae525fec3cp+0,   0x1.53d856f2fe39dp+0,
        0x1.d720174902c15p-2,   0x1.b3698c6e2317ap-4,   0x1.2dce0814d0dc4p-6,
        0x1.4eb655e263557p-9,   0x1.3556fd3950a25p-12,  0x1.ea192afde8f4ep-16,
        0x1.53ba5c822f26fp-19,  0x1.a2a139c23189cp-23,  0x1.0b557c179418dp+0,
        0x1.729a8b3904b78p-1,   0x1.00e20732c3ecap-2,   0x1.dad20af10550cp-5,
        0x1.491ed7c8f2496p-7,   0x1.6d019c87a631fp-10,  0x1.515662d3b15d0p-13,
        0x1.0b3a5e2f42e5ep-16,  0x1.7279da0147ef5p-20,  0x1.c884de867d7f7p-24,
        0x1.23879bf789d1ap+0,   0x1.94256ca744805p-1,   0x1.1822001a03d55p-2,
        0x1.02e5cfd4418f9p-4,   0x1.66e88ec8e5cffp-7,   0x1.8e0accc2dbe0ap-10,
        0x1.6fde7cde8fa75p-13,  0x1.236a0902e0924p-16,  0x1.9401c5c4dbc37p-20,
        0x1.f1d667d6306e1p-24,  0x1.3dea599796f0dp+0,   0x1.b8b97bf05936fp-1,
        0x1.317cac151c80dp-2,   0x1.1a5477640d732p-4,   0x1.8764757122cc8p-7,
        0x1.b2116de00c0bdp-10,  0x1.912a01d444ea0p-13,  0x1.3dca18a47d47cp-16,
        0x1.b8929ace542bep-20,  0x1.0f72a5398e5e7p-23,  0x1.5ab0726f30846p+0,
        0x1.e09d104dbd3f0p-1,   0x1.4d22cccc3d721p-2,   0x1.33e20ba8055f4p-4,
        0x1.aad1035b13a06p-7,   0x1.d95ac71f80b29p-10,  0x1.b578f88f08557p-13,
        0x1.5a8d456402773p-16,  0x1.e072aa2215a7fp-20,  0x1.2804160f010ebp-23,
        0x1.7a113b9b79899p+0,   0x1.060e6f61f8e09p+0,   0x1.6b498d9752f97p-2,
        0x1.4fbfb02d97e10p-4,   0x1.d172577d29fc9p-7,   0x1.0219327775ee5p-9,
        0x1.dd113368c8309p-13,  0x1.79eadebf98e54p-16,  0x1.05f750ffdbe65p-19,
        0x1.42cec51b31ae9p-23,  0x1.9c490c46fb9a4p+0,   0x1.1dc646d2622e4p+0,
        0x1.8c2ae9bcd638cp-2,   0x1.6e22fb0e2cd8cp-4,   0x1.fb92bb2a4039fp-7,
        0x1.19755518aa6f1p-9,   0x1.041f6b3fe6b43p-12,  0x1.9c1f35c092116p-16,
        0x1.1dad10aba33dap-19,  0x1.600637b78585bp-23,  0x1.c199b1b2c764cp+0,
        0x1.37a3aab5adf5ap+0,   0x1.b0061bf1a306dp-2,   0x1.8f465bfb407afp-4,
        0x1.14c1987618620p-6,   0x1.32eeb75696e60p-9,   0x1.1baa75112e3bdp-12,
        0x1.c16c10f8bef04p-16,  0x1.37882c4b8e471p-19,  0x1.7fe29cfa55733p-23,
        0x1.ea4aedc02051ep+0,   0x1.53d85813b1191p+0,   0x1.d72017f03de84p-2,
        0x1.b3698c9e18d14p-4,   0x1.2dce08262cafap-6,   0x1.4eb655e89d73bp-9,
        0x1.3556fd3d729abp-12,  0x1.ea192aff40b48p-16,  0x1.53ba5c83c9424p-19,
        0x1.a2a139c1d10bdp-23,  0x1.0b558077046d6p+0,   0x1.729a8c644fcd5p-1,
        0x1.00e20788ae295p-2,   0x1.dad20b232e76fp-5,   0x1.491ed7dace8d0p-7,
        0x1.6d019c8e446c4p-10,  0x1.515662d7e786dp-13,  0x1.0b3a5e3008365p-16,
        0x1.7279da02dc45ep-20,  0x1.c884de8639929p-24,  0x1.2387a06a058cbp+0,
        0x1.94256ddd730c8p-1,   0x1.1822007255868p-2,   0x1.02e5cfee781f0p-4,
        0x1.66e88edb4a69ep-7,   0x1.8e0accc9e03cep-10,  0x1.6fde7ce2dcc67p-13,
        0x1.236a0903bf06dp-16,  0x1.9401c5c66c463p-20,  0x1.f1d667d60733bp-24,
        0x1.3dea5e1dceba6p+0,   0x1.b8b97d31b9df7p-1,   0x1.317cac6ff13e9p-2,
        0x1.1a54777f6ec48p-4,   0x1.8764758417cddp-7,   0x1.b2116de778d1dp-10,
        0x1.912a01d8abbbap-13,  0x1.3dca18a574b1dp-16,  0x1.b8929acfe2ac7p-20,
        0x1.0f72a539864b2p-23,  0x1.5ab07709da0aap+0,   0x1.e09d119aa22a0p-1,
        0x1.4d22cd29b1acdp-2,   0x1.33e20bc49abadp-4,   0x1.aad1036ea14a3p-7,
        0x1.d95ac727586bep-10,  0x1.b578f8938b932p-13,  0x1.5a8d456512c48p-16,
        0x1.e072aa23a3dcdp-20,  0x1.2804160f04d29p-23,  0x1.7a11404b4fb9dp+0,
        0x1.060e700e5858ap+0,   0x1.6b498df78406cp-2,   0x1.4fbfb04b6b14bp-4,
        0x1.d172579158c56p-7,   0x1.0219327b98aa0p-9,   0x1.dd11336d6a936p-13,
        0x1.79eadec0c21e4p-16,  0x1.05f75100a3aa8p-19,  0x1.42cec51b40b0bp-23,
        0x1.9c49110cbedbcp+0,   0x1.1dc64784db66ep+0,   0x1.8c2aea1fe25ffp-2,
        0x1.6e22fb2d483bcp-4,   0x1.fb92bb3f18d2bp-7,   0x1.1975551d058ffp-9,
        0x1.041f6b4248d5fp-12,  0x1.9c1f35c1d457bp-16,  0x1.1dad10ac6c715p-19,
        0x1.600637b79f445p-23,  0x1.c199b68f3dd4fp+0,   0x1.37a3ab6e6f996p+0,
        0x1.b0061c57a98ddp-2,   0x1.8f465c1baef17p-4,   0x1.14c19880de0e9p-6,
        0x1.32eeb75b2c130p-9,   0x1.1baa7513a2ae0p-12,  0x1.c16c10fa1a7dbp-16,
        0x1.37882c4c59a79p-19,  0x1.7fe29cfa79819p-23,  0x1.ea4af2b416034p+0,
        0x1.53d858d2ebcefp+0,   0x1.d72018595f215p-2,   0x1.b3698cbfe5d08p-4,
        0x1.2dce08315056fp-6,   0x1.4eb655ed6e751p-9,   0x1.3556fd3ffac15p-12,
        0x1.ea192b00b5da3p-16,  0x1.53ba5c849785ep-19,  0x1.a2a139c1ff106p-23};

/* f on [1/16, 1) (the first retry), as a function of s = sqrt(t) in [1/4,
 * 1), where it is smooth: 2^(s^2) tanh(2s), piecewise on sixteenths of s,
 * [j/16, (j+1)/16) for j = 4..15, with x = s - (j/16 + 1/32) and P of
 * degree 9 fitted the same way (within 1.1e-17 relative). sqrt(t) is half
 * of libm's sqrt(4t) exactly, so tanh sees the reference's argument. */
#define BW__DJ_SUB0 16
static const double bw__dj_poly0[12 * BW__DJ_NC] = {
    0x1.13bea89cb49c8p-1,  0x1.c60777211b394p+0,  -0x1.2410b1aeb0f2fp-1,
    0x1.175372e0a89fcp-2,  0x1.c8edc50dcaa7bp+0,  -0x1.80c8d6388f0dcp-1,
    -0x1.8001480037974p+0, 0x1.4d82c48b62e08p+1,  0x1.63f15cd873c0ap-3,
    -0x1.e7167f66ff345p+1, 0x1.4b67b88cfd6d3p-1,  0x1.b505e64948061p+0,
    -0x1.eb18ce3655c0ep-2, 0x1.5e0dfdb283ae8p-1,  0x1.7bf1a80e19bafp+0,
    -0x1.1ac6a58ce0b9ap+0, -0x1.a3a783aae51c6p-2, 0x1.1fb8473627a02p+1,
    -0x1.62d9311c2b402p+0, -0x1.ada184f9c9ab9p+0, 0x1.812b9dcc84284p-1,
    0x1.a8139301fb7d2p+0,  -0x1.47054a7b47f4fp-2, 0x1.02bdda05eeb59p+0,
    0x1.21ec9dbf20e77p+0,  -0x1.186a1515c1e40p+0, 0x1.96d08eade06a1p-2,
    0x1.68ee2d2d17a06p+0,  -0x1.c7b3b5ac0ff77p+0, 0x1.1d8c26323038dp-3,
    0x1.b5ad0703bcad8p-1,  0x1.a126d2716a887p+0,  -0x1.b19d25e729708p-4,
    0x1.40ef31e8ac1dfp+0,  0x1.a5b8a52ca8146p-1,  -0x1.b574fb6b48794p-1,
    0x1.a7c82b56b86bbp-1,  0x1.2d9e36b0d7356p-1,  -0x1.6aaef391ca922p+0,
    0x1.fc69e5a9b4058p-1,  0x1.e9c557acaca06p-1,  0x1.a1b72a148050dp+0,
    0x1.2c443a5545067p-3,  0x1.6e33d9b852aafp+0,  0x1.37b682b184650p-1,
    -0x1.06b09c35faa88p-1, 0x1.e76eddad84fe7p-1,  0x1.ee6249a60b39bp-6,
    -0x1.a027e55c8eb0bp-1, 0x1.0f687ff7a44a5p+0,  0x1.0f3b1ed5b4b90p+0,
    0x1.aad797de0b9f1p+0,  0x1.b65627b74a2f6p-2,  0x1.91386986fad92p+0,
    0x1.01ef0c190f754p-1,  -0x1.4d47d1f2e0664p-3, 0x1.cb3cafb16a3c1p-1,
    -0x1.e803ae71d2534p-3, -0x1.2a603c14f42b8p-2, 0x1.883a050fd0862p-1,
    0x1.2a6fc0a2a1cf6p+0,  0x1.bd5db43ebd16dp+0,  0x1.7791fdeaecc1fp-1,
    0x1.b0eb984ad6eb7p+0,  0x1.01a5a2c728d5cp-1,  0x1.3628cb7b29c23p-3,
    0x1.8cbc9a55e7f13p-1,  -0x1.2b1049fa4386bp-2, 0x1.5569e86202914p-5,
    0x1.b50f4e1016c3cp-2,  0x1.471cf79fee0eap+0,  0x1.da0ad5d526abfp+0,
    0x1.101d9713b98ffp+0,  0x1.d392035a1b75cp+0,  0x1.2fe4b92806bfcp-1,
    0x1.ad6d1673792f2p-2,  0x1.5173ea130f8ebp-1,  -0x1.c9f8a4f17e21dp-3,
    0x1.a7ed79ef951e5p-3,  0x1.70ed50cd4c67cp-3,  0x1.65eb9b01f8816p+0,
    0x1.00d8c8f919adcp+1,  0x1.6ba55cd963529p+0,  0x1.fe8c071c68c0fp+0,
    0x1.85e88fac52270p-1,  0x1.4d76992f642f2p-1,  0x1.2c71ff6c273d4p-1,
    -0x1.a1dc7cd5e213bp-4, 0x1.102f499bb5deap-2,  0x1.7682cc689eae7p-5,
    0x1.879310333f5adp+0,  0x1.1aab0c0f0e514p+1,  0x1.d0623f857ae47p+0,
    0x1.1b42c8492b6dep+1,  0x1.ff6bd19b904dcp-1,  0x1.bbbd1cc9b17acp-1,
    0x1.24c9bc6e2f99ep-1,  0x1.18ee0ede242f7p-5,  0x1.1902b0d050e6ap-2,
    -0x1.0de27487ea677p-8, 0x1.acdd4a74b8fb5p+0,  0x1.3b25356ced433p+1,
    0x1.20967024c72c9p+1,  0x1.3feb718d93893p+1,  0x1.4dc5bc842a0e4p+0,
    0x1.1671d9499b994p+0,  0x1.3bc4d8e7d23cdp-1,  0x1.5d47412af72fep-3,
    0x1.153cf5bf71cf4p-2,  -0x1.83427868fee02p-9, 0x1.d6ac7b3e8e3f7p+0,
    0x1.632454def4057p+1,  0x1.60d7aacbc1c92p+1,  0x1.6f7a852e20ed8p+1,
    0x1.ae7c0998a1ba6p+0,  0x1.562e4a5ed1505p+0,  0x1.7127a310eaac4p-1,
    0x1.39e56a5970fd9p-2,  0x1.1ab6ebb8945abp-2,  0x1.995fb773eff46p-6};

/* P(x) = c[0] + c[1] x + ... + c[9] x^9 by Estrin's scheme: four short
 * chains of dependent operations instead of one of nine steps. */
static inline double bw__dj_eval(const double *c, double x) {
  double x2 = x * x, x4 = x2 * x2;
  return (c[0] + c[1] * x) + x2 * (c[2] + c[3] * x) +
         x4 * ((c[4] + c[5] * x) + x2 * (c[6] + c[7] * x)) +
         (x4 * x4) * (c[8] + c[9] * x);
}

/* f(t) on piece j of [k, k + 1), 1 <= k < 16: t - (k + j/8 + 1/16) is
 * exact (both lie in [k, k + 1]), and at most 1/16 away, where P was
 * fitted. */
static inline double bw__dj_piece(int k, unsigned j, double t) {
  double x =
      t - (double)(k * 2 * BW__DJ_SUB + 2 * (int)j + 1) * (0.5 / BW__DJ_SUB);
  union {
    uint64_t u;
    double d;
  } two;
  two.u = (uint64_t)(1023 + k) << 52;
  return bw__dj_eval(
             &bw__dj_poly[((k - BW__DJ_K0) * BW__DJ_SUB + (int)j) * BW__DJ_NC],
             x) *
         two.d;
}

/* The same f, fast, where it matters (1/16 <= t < 100, i.e. retries 1 to
 * 100), within a few units in the last place of the libm product (itself
 * within a few of the true value), so the delay rounded to the ms is the
 * libm delay's: the two can differ only when (f - prev) / 1.4 * base_ms lies
 * within about 1e-15 of its own magnitude from a half ms, and
 * tests/test_retry.c checks that 10^6 random delays agree.
 * - [1, 16): the polynomial pieces above, a power of two in the exponent
 *   bits, no division, no libm call.
 * - [1/16, 1): the pieces in sqrt(t) above: one sqrt, no division.
 * - [16, 100): 2^t and w = e^(2y), y = sqrt(4t), from one
 *   table of 2^(j/64) and a short series each, then tanh(y) = (w - 1) / (w +
 *   1) with w - 1 computed without cancellation; for y above ~19 both round
 *   tanh to 1.
 * - Below 1/16 (tanh's cancellation-prone range) and from 100 on, libm. */
static double bw__dj_f(double t) {
  double y, z, s, e, p2, zk;
  int64_t k2, kz;
  if (BW__LIKELY(t >= (double)BW__DJ_K0 && t < (double)BW__DJ_K1)) {
    int k = (int)t;
    int j = (int)((t - (double)k) * BW__DJ_SUB); /* t - k is exact */
    return bw__dj_piece(k, (unsigned)j, t);
  }
  if (t >= 0.0625 && t < 1.0) {
    double sq = sqrt(t);
    int j = (int)(sq * BW__DJ_SUB0);
    if (j > BW__DJ_SUB0 - 1) j = BW__DJ_SUB0 - 1; /* t just below 1: s = 1 */
    return bw__dj_eval(
        &bw__dj_poly0[(j - BW__DJ_SUB0 / 4) * BW__DJ_NC],
        sq - ((double)j * (1.0 / BW__DJ_SUB0) + 0.5 / BW__DJ_SUB0));
  }
  if (BW__UNLIKELY(!(t >= 0.0625 && t < 100.0))) return bw__dj_f_libm(t);
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

/* Polly v8's DecorrelatedJitterBackoffV2 (the formula credited to George
 * Polevoy): t = attempt + U[0,1), f(t) = 2^t * tanh(sqrt(P * t)); the delay is
 * (f(t) - f(previous t)) / 1.4 * base_ms. Because t of retry n lies in
 * [n-1, n) and f increases, each delay is positive, the sum of the first n
 * delays grows like base_ms * 2^n / 1.4, and consecutive delays are not
 * correlated the way "previous * 3" jitter is. *prev carries f between
 * retries, uncapped (the cap applies to the delay only, as in Polly). The
 * draw is m, 53 random bits: U = m / 2^53, as bw_rand_double gives. For
 * retries 2 to 16 the piece of f is chosen from n and the top bits of m,
 * off the chain of dependent operations that computes t: t = (n-1) + U may
 * round up to the next piece's start, which is still within the fit of
 * this one. */
static int64_t bw__decorrelated(const bw_retry_policy_t *p, uint32_t n,
                                uint64_t m, double *prev) {
  double t = (double)(n - 1) + (double)m * 0x1.0p-53;
  double next =
      n - 2u < (uint32_t)(BW__DJ_K1 - BW__DJ_K0)
          ? bw__dj_piece((int)n - 1, (unsigned)(m >> 50) /* 53 - 3 */, t)
          : bw__dj_f(t);
  double before = prev != NULL ? *prev : 0.0;
  double v;
  int64_t d;
  if (prev != NULL) *prev = next;
  if (!isfinite(next)) return p->max_ms; /* t >= 1024: past any cap */
  v = (next - before) * BW__DJ_SCALE * (double)p->base_ms;
  if (isnan(v)) return p->max_ms;
  if (v >= (double)p->max_ms) return p->max_ms;
  /* Rounded to the nearest ms, halves up: v + 0.5 > 0 here, where a
   * conversion (which truncates) is floor, without floor's libm call. */
  d = v > 0 ? (int64_t)(v + 0.5) : 0;
  return d < p->min_ms ? p->min_ms : d;
}

/* The jittered delay of retry n (n >= 1) from a caller's generator (the
 * public bw_retry_delay_ms). rng must be usable unless the jitter is NONE. */
static int64_t bw__delay(const bw_retry_policy_t *p, uint32_t n, bw_rand_t *rng,
                         double *dj_prev) {
  int64_t d, v;
  if (p->jitter == BW_JITTER_DECORRELATED)
    return bw__decorrelated(p, n, bw_rand_next(rng) >> 11, dj_prev);
  d = bw__curve(p, n);
  switch (p->jitter) {
  case BW_JITTER_FULL:
    /* Uniform in [min_ms, d] (tenacity's wait_random_exponential): drawing
     * below min_ms and clamping would pile the draws up at min_ms. */
    return bw_rand_range(rng, p->min_ms, d);
  case BW_JITTER_EQUAL:
    v = d / 2 < p->min_ms ? p->min_ms : d / 2;
    return bw_rand_range(rng, v, d);
  case BW_JITTER_ADDITIVE:
    v = d + bw_rand_range(rng, 0, p->jitter_ms);
    return v > p->max_ms ? p->max_ms : v;
  case BW_JITTER_NONE:
  default:
    return d;
  }
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
  p = bw__calloc_aligned(sizeof(*p));
  if (p == NULL) goto nomem;
  p->name = bw__strdup(cfg->name);
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
  bw__error_clear(err);
  return p;
nomem:
  if (p != NULL) bw__free_aligned(p);
  bw__error_set(err, BW_E_NOMEM, "", "out of memory creating retry policy '%s'",
                cfg->name);
  return NULL;
}

void bw_retry_policy_free(bw_retry_policy_t *p) {
  if (p == NULL) return;
  bw__free(p->name);
  bw__free_aligned(p);
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

/* The jittered delay of retry n (n >= 1) from the iterator's stream: the
 * same distributions as bw__delay. */
static int64_t bw__delay_it(bw_retry_t *r, uint32_t n) {
  const bw_retry_policy_t *p = r->policy;
  int64_t d, v;
  if (p->jitter == BW_JITTER_DECORRELATED)
    return bw__decorrelated(p, n, bw__draw(r) >> 11, &r->dj_prev);
  d = bw__curve(p, n);
  switch (p->jitter) {
  case BW_JITTER_FULL:
    return bw__draw_range(r, p->min_ms, d);
  case BW_JITTER_EQUAL:
    v = d / 2 < p->min_ms ? p->min_ms : d / 2;
    return bw__draw_range(r, v, d);
  case BW_JITTER_ADDITIVE:
    v = d + bw__draw_range(r, 0, p->jitter_ms);
    return v > p->max_ms ? p->max_ms : v;
  case BW_JITTER_NONE:
  default:
    return d;
  }
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
  r->rng.s[0] = 0;
  r->rng.s[1] = 0;
  r->rng.s[2] = 0;
  r->rng.s[3] = 0;
  r->has_key = false;
  r->idempotency_key[0] = '\0';
  if (p != NULL && report && p->budget != NULL) bw_budget_on_request(p->budget);
}

void bw_retry_begin(bw_retry_t *r, const bw_retry_policy_t *p, int64_t now_ns) {
  if (r == NULL) return;
  bw__begin(r, p, now_ns, bw_deadline_current(), true);
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
  bw__emit(p->sink, p->wall, now, BW_EV_RETRY_GAVE_UP, p->name, reason, f, 3,
           NULL);
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
  bw__emit(p->sink, p->wall, now, BW_EV_RETRY_SCHEDULED, p->name, reason, f, 3,
           NULL);
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

/* ---- blocking convenience --------------------------------------------------
 */

static void bw__nanosleep(void *userdata, int64_t ms) {
  struct timespec ts, rem;
  (void)userdata;
  if (ms <= 0) return;
  ts.tv_sec = (time_t)(ms / 1000);
  ts.tv_nsec = (long)(ms % 1000) * 1000000L;
  /* A signal cuts the sleep short; sleep the rest. */
  while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
    ts = rem;
}

static int bw__call_gave_up(bw_retry_t *r, bw_verdict_t last,
                            const bw_retry_call_opts_t *o,
                            bw_giveup_t *reason) {
  bw_giveup_t g = bw_retry_reason(r);
  if (o != NULL && o->fallback != NULL)
    o->fallback(o->fallback_userdata, g, last);
  if (reason != NULL) *reason = g;
  return BW_E_GAVE_UP;
}

int bw_retry_call(const bw_retry_policy_t *p, bw_retry_fn fn, void *userdata,
                  const bw_retry_call_opts_t *opts, bw_giveup_t *reason) {
  const bw_clock_t *clock;
  bw_sleep_fn sleep_fn;
  void *sleep_ud;
  bw_retry_t r;
  bw_verdict_t last = BW_VERDICT_NOT_SENT;
  bw_deadline_t d;
  int64_t now, delay;
  if (p == NULL || fn == NULL) return BW_E_INVAL;
  clock =
      opts != NULL && opts->clock != NULL ? opts->clock : bw_clock_monotonic();
  sleep_fn = opts != NULL && opts->sleep != NULL ? opts->sleep : bw__nanosleep;
  sleep_ud = opts != NULL && opts->sleep != NULL ? opts->sleep_userdata : NULL;
  now = bw_clock_now(clock);
  d = bw_deadline_current();
  if (d.at_ns != BW_DEADLINE_NONE_NS && now >= d.at_ns) {
    /* Nobody is waiting for the answer: send nothing, and do not count a
     * request the dependency never saw against the budget. */
    bw__begin(&r, p, now, d, false);
    bw__give_up(&r, BW_GIVEUP_DEADLINE, last, now, -1, now - d.at_ns, &delay);
    return bw__call_gave_up(&r, last, opts, reason);
  }
  bw__begin(&r, p, now, d, true);
  for (;;) {
    int64_t hint = BW_RETRY_AFTER_NONE;
    int rc;
    last = fn(userdata, r.attempts + 1, &hint);
    now = bw_clock_now(clock);
    rc = bw_retry_next(&r, last, hint, now, &delay);
    if (rc == BW_RETRY_DONE) {
      if (reason != NULL) *reason = BW_GIVEUP_NONE;
      return BW_OK;
    }
    if (rc == BW_RETRY_GIVE_UP) return bw__call_gave_up(&r, last, opts, reason);
    if (rc != BW_RETRY) return rc; /* fn returned a bad verdict or hint */
    sleep_fn(sleep_ud, delay);
    now = bw_clock_now(clock);
    /* A sleep that overslept past the deadline must not start an attempt
     * whose answer nobody waits for. */
    if (r.deadline_ns != BW_DEADLINE_NONE_NS && now >= r.deadline_ns) {
      bw__give_up(&r, BW_GIVEUP_DEADLINE, last, now, -1, now - r.deadline_ns,
                  &delay);
      return bw__call_gave_up(&r, last, opts, reason);
    }
  }
}

/* Retry budgets: gRPC's token bucket and Envoy's ratio, lock-free.
 *
 * Design (docs/budget.md has the user's view and the reasons):
 * - Token bucket: one atomic word of milli-tokens (thousandths, like gRPC's
 *   max_milli_tokens), moved by CAS and held inside [0, max] at every instant.
 *   Asking for a retry is a single load. An outcome that cannot move the
 *   tokens (a success on a full bucket, a failure on an empty one) writes
 *   nothing, so a healthy dependency's calls share no written cache line.
 * - Ratio: per-thread stripes of 10 buckets, each bucket two words packing
 *   (bucket epoch << 32 | count) for requests and retries, like the
 *   breaker's time window. Writers touch only their own stripe; a retry
 *   decision sums the stripes handed out so far, each from a cached sum of
 *   its 9 frozen buckets plus its current one. A grant is counted, fenced
 *   and checked again (bw__ratio_try): never more than the allowance.
 * - Counters (requests, outcomes, decisions) live in per-thread stripes. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* Tokens are kept in thousandths: the resolution of max_tokens and
 * token_ratio. */
#define BW__MILLI 1000
#define BW__MAX_TOKENS 1e6
#define BW__BUCKETS 10u
#define BW__MIN_WINDOW_MS INT64_C(10)
#define BW__MAX_WINDOW_MS INT64_C(86400000) /* a day */
#define BW__MAX_FLOOR_RPS 1e9
/* The ratio window, per stripe: 23 words padded to 256 bytes, so that two
 * stripes never share a line pair.
 *   [0]        the bucket index the stripe last counted in (64-bit)
 *   [1], [2]   exclusive stripes: the sums of requests / retries over the 9
 *              buckets before that one, tagged (index mod 2^24) << 40 | sum
 *              (9 buckets of 32-bit counts fit in 40 bits)
 *   [3 + 2j]   bucket j's requests, (epoch << 32 | count)
 *   [4 + 2j]   bucket j's retries */
#define BW__WIN_STRIDE 32u
#define BW__W_LAST 0u
#define BW__W_PREV_REQ 1u
#define BW__W_PREV_RET 2u
#define BW__W_BUCKET 3u
#define BW__W_END (BW__W_BUCKET + 2 * BW__BUCKETS)
#define BW__TAG_SHIFT 40
#define BW__TAG_MASK UINT64_C(0xFFFFFF)
#define BW__SUM_MASK ((UINT64_C(1) << BW__TAG_SHIFT) - 1)

#define BW__LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

typedef struct bw__bstripe_s {
  _Atomic uint64_t requests;
  _Atomic uint64_t successes;
  _Atomic uint64_t failures;
  _Atomic uint64_t allowed;
  _Atomic uint64_t denied;
} BW__PAIR_ALIGNED bw__bstripe_t;

struct bw_budget_s {
  /* Read-only after creation. */
  bw_budget_kind_t kind;
  int64_t max_milli;      /* token bucket: capacity in thousandths */
  int64_t ratio_milli;    /* token bucket: refill per success in thousandths */
  double percent;         /* ratio: budget_percent */
  uint64_t floor_retries; /* ratio: fewer retries than this in the window
                             are within the floor, i.e. retries * 1000 <
                             min_retries_per_sec * window_ms */
  int64_t bucket_ns;      /* ratio: window_ms / 10 in ns */
  const bw_clock_t *clock;
  bool coarse; /* clock is bw_clock_monotonic_coarse(): read it inline */
  char *name;
  _Atomic uint64_t *win; /* ratio: BW__STRIPES * BW__WIN_STRIDE words */

  /* Written by failures (and by successes while not full): its own pair of
   * lines, away from the read-only fields every call reads. */
  BW__PAIR_ALIGNED _Atomic int64_t tokens;

  bw__bstripe_t stripes[BW__STRIPES];
};

const char *bw_budget_kind_name(bw_budget_kind_t kind) {
  switch (kind) {
  case BW_BUDGET_TOKEN_BUCKET:
    return "token_bucket";
  case BW_BUDGET_RATIO:
    return "ratio";
  default:
    return "unknown";
  }
}

void bw_budget_config_init(bw_budget_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "budget";
  cfg->kind = BW_BUDGET_TOKEN_BUCKET;
  cfg->max_tokens = 10.0;
  cfg->token_ratio = 0.1;
  cfg->budget_percent = 20.0;
  cfg->min_retries_per_sec = 3.0;
  cfg->window_ms = 10000;
  cfg->clock = NULL;
}

/* x as a whole number of thousandths, if it is one. The tolerance absorbs
 * only the binary rounding of a decimal literal (0.1 * 1000 is
 * 100.00000000000001): it is far below the resolution, and above the
 * rounding error of any value up to 1e6 tokens. */
static bool bw__to_milli(double x, int64_t *out) {
  double m = x * BW__MILLI;
  double r = round(m);
  if (!(fabs(m - r) <= 1e-6)) return false;
  *out = (int64_t)r;
  return true;
}

/* The least whole r with r * 1000 >= f (f = min_retries_per_sec * window_ms,
 * the floor times 1000), so that "retries * 1000 < f" is "retries < r" with
 * one integer comparison. f is at most 1e9 * 86400000 < 2^57; from 2^53
 * on, every count a window can hold (below 2^43) is within the floor. */
static uint64_t bw__floor_retries(double f) {
  uint64_t r;
  if (!(f > 0.0)) return 0;
  if (f >= 0x1p53) return UINT64_MAX;
  r = (uint64_t)(f / 1000.0); /* f / 1000 < 2^44: exact products below */
  while (r > 0 && (double)(r - 1) * 1000.0 >= f)
    r--;
  while ((double)r * 1000.0 < f)
    r++;
  return r;
}

static int bw__validate_bucket(const bw_budget_config_t *c, bw_error_t *err) {
  int64_t max_m, ratio_m;
  if (!(c->max_tokens > 0.0 && c->max_tokens <= BW__MAX_TOKENS))
    return bw__error_set(err, BW_E_INVAL, "max_tokens",
                         "max_tokens must be in (0, 1e6] (got %g)",
                         c->max_tokens);
  if (!bw__to_milli(c->max_tokens, &max_m))
    return bw__error_set(err, BW_E_INVAL, "max_tokens",
                         "max_tokens must be a multiple of 0.001, the token "
                         "bucket's resolution (got %.17g)",
                         c->max_tokens);
  if (!(c->token_ratio > 0.0 && c->token_ratio <= c->max_tokens))
    return bw__error_set(err, BW_E_INVAL, "token_ratio",
                         "token_ratio must be in (0, max_tokens %g] (got %g)",
                         c->max_tokens, c->token_ratio);
  if (!bw__to_milli(c->token_ratio, &ratio_m) || ratio_m < 1)
    return bw__error_set(err, BW_E_INVAL, "token_ratio",
                         "token_ratio must be a multiple of 0.001, the token "
                         "bucket's resolution (got %.17g)",
                         c->token_ratio);
  return BW_OK;
}

static int bw__validate_ratio(const bw_budget_config_t *c, bw_error_t *err) {
  if (!(c->budget_percent >= 0.0 && c->budget_percent <= 100.0))
    return bw__error_set(err, BW_E_INVAL, "budget_percent",
                         "budget_percent must be in [0, 100] (got %g)",
                         c->budget_percent);
  if (!(c->min_retries_per_sec >= 0.0 &&
        c->min_retries_per_sec <= BW__MAX_FLOOR_RPS))
    return bw__error_set(err, BW_E_INVAL, "min_retries_per_sec",
                         "min_retries_per_sec must be in [0, 1e9] (got %g)",
                         c->min_retries_per_sec);
  if (c->clock != NULL && c->clock->now_ns == NULL)
    return bw__error_set(err, BW_E_INVAL, "clock",
                         "clock must be NULL (the default) or have a now_ns "
                         "function");
  if (c->window_ms < BW__MIN_WINDOW_MS || c->window_ms > BW__MAX_WINDOW_MS)
    return bw__error_set(err, BW_E_INVAL, "window_ms",
                         "window_ms must be in [10, 86400000] (10 buckets of "
                         "at least 1 ms, at most a day; got %lld)",
                         (long long)c->window_ms);
  return BW_OK;
}

int bw_budget_config_validate(const bw_budget_config_t *c, bw_error_t *err) {
  int rc;
  if (c == NULL)
    return bw__error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw__check_name(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  switch (c->kind) {
  case BW_BUDGET_TOKEN_BUCKET:
    rc = bw__validate_bucket(c, err);
    break;
  case BW_BUDGET_RATIO:
    rc = bw__validate_ratio(c, err);
    break;
  default:
    return bw__error_set(err, BW_E_INVAL, "kind",
                         "kind must be token_bucket or ratio (got %d)",
                         (int)c->kind);
  }
  if (rc == BW_OK) bw__error_clear(err);
  return rc;
}

bw_budget_t *bw_budget_new(const bw_budget_config_t *cfg, bw_error_t *err) {
  bw_budget_t *b;
  if (bw_budget_config_validate(cfg, err) != BW_OK) return NULL;
  b = bw__calloc_aligned(sizeof(*b));
  if (b == NULL) goto nomem;
  b->name = bw__strdup(cfg->name);
  if (b->name == NULL) goto nomem;
  b->kind = cfg->kind;
  if (b->kind == BW_BUDGET_TOKEN_BUCKET) {
    bw__to_milli(cfg->max_tokens, &b->max_milli);
    bw__to_milli(cfg->token_ratio, &b->ratio_milli);
    atomic_init(&b->tokens, b->max_milli);
  } else {
    b->percent = cfg->budget_percent;
    b->floor_retries =
        bw__floor_retries(cfg->min_retries_per_sec * (double)cfg->window_ms);
    b->bucket_ns = cfg->window_ms * (BW_NS_PER_MS / BW__BUCKETS);
    b->clock = cfg->clock               ? cfg->clock
               : cfg->window_ms >= 1000 ? bw_clock_monotonic_coarse()
                                        : bw_clock_monotonic();
    b->coarse = b->clock == bw_clock_monotonic_coarse();
    b->win = bw__calloc_aligned((size_t)BW__STRIPES * BW__WIN_STRIDE *
                                sizeof(uint64_t));
    if (b->win == NULL) goto nomem;
    atomic_init(&b->tokens, 0);
  }
  return b;
nomem:
  if (b != NULL) {
    bw__free(b->name);
    bw__free_aligned(b);
  }
  bw__error_set(err, BW_E_NOMEM, "", "out of memory creating budget '%s'",
                cfg->name);
  return NULL;
}

void bw_budget_free(bw_budget_t *b) {
  if (b == NULL) return;
  bw__free_aligned((void *)b->win);
  bw__free(b->name);
  bw__free_aligned(b);
}

const char *bw_budget_name(const bw_budget_t *b) {
  return b != NULL ? b->name : "";
}

/* ---- token bucket --------------------------------------------------------
 */

/* Adds delta milli-tokens, held inside [0, max]. A CAS rather than a
 * fetch-add: with fetch-add and a clamp afterwards, readers could see the
 * value outside the bounds in between. */
static void bw__tokens_add(bw_budget_t *b, int64_t delta) {
  int64_t cur = BW__LOAD(b->tokens);
  for (;;) {
    int64_t next = cur + delta;
    if (next > b->max_milli) next = b->max_milli;
    if (next < 0) next = 0;
    if (next == cur) return; /* at the bound: nothing to write */
    if (atomic_compare_exchange_weak_explicit(
            &b->tokens, &cur, next, memory_order_relaxed, memory_order_relaxed))
      return;
  }
}

/* ---- ratio window ----------------------------------------------------------
 */

static int64_t bw__floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  return (a % d != 0 && (a < 0) != (d < 0)) ? q - 1 : q;
}

/* Adds one to a packed (epoch << 32 | count) word, recycling it when it
 * still holds an older bucket. A count whose bucket is already older than
 * the word's (a thread that read the clock long ago) is dropped: its bucket
 * has been recycled for a newer one. Counts saturate at 2^32 - 1 per stripe
 * per bucket. */
static bool bw__win_bump(_Atomic uint64_t *word, uint32_t epoch,
                         unsigned stripe) {
  uint64_t cur = BW__LOAD(*word);
  for (;;) {
    uint32_t e = (uint32_t)(cur >> 32);
    uint64_t next;
    if (e == epoch) {
      if ((uint32_t)cur == UINT32_MAX) return false;
      next = cur + 1;
    } else if ((int32_t)(epoch - e) < 0) {
      return false;
    } else {
      next = ((uint64_t)epoch << 32) | 1u;
    }
    /* An exclusive stripe has one writer: a plain store is enough. */
    if (stripe < BW__EXCL_STRIPES) {
      atomic_store_explicit(word, next, memory_order_relaxed);
      return true;
    }
    if (atomic_compare_exchange_weak_explicit(
            word, &cur, next, memory_order_relaxed, memory_order_relaxed))
      return true;
  }
}

/* Takes back one count that bw__win_bump added to `word` in bucket `epoch`
 * (a retry counted, then refused). The word still holds that bucket: only
 * its stripe's writers move it, and they move it to this very bucket or
 * later ones only after this thread's clock has (a shared stripe's peer
 * with a newer bucket may have recycled it: then the count is gone
 * already, and nothing is taken). */
static void bw__win_unbump(_Atomic uint64_t *word, uint32_t epoch,
                           unsigned stripe) {
  uint64_t cur = BW__LOAD(*word);
  for (;;) {
    if ((uint32_t)(cur >> 32) != epoch || (uint32_t)cur == 0) return;
    if (stripe < BW__EXCL_STRIPES) {
      atomic_store_explicit(word, cur - 1, memory_order_relaxed);
      return;
    }
    if (atomic_compare_exchange_weak_explicit(
            word, &cur, cur - 1, memory_order_relaxed, memory_order_relaxed))
      return;
  }
}

/* Sums a stripe's words whose bucket is `lo` to 9 buckets before `epoch`
 * (lo 0: the whole window; lo 1: the window without its newest bucket). */
static void bw__stripe_scan(const _Atomic uint64_t *w, uint32_t epoch,
                            uint32_t lo, uint64_t *rq, uint64_t *rt) {
  for (unsigned j = 0; j < BW__BUCKETS; j++) {
    uint64_t a = BW__LOAD(w[BW__W_BUCKET + 2 * j]);
    uint64_t r = BW__LOAD(w[BW__W_BUCKET + 2 * j + 1]);
    uint32_t da = epoch - (uint32_t)(a >> 32);
    uint32_t dr = epoch - (uint32_t)(r >> 32);
    if (da >= lo && da < BW__BUCKETS) *rq += (uint32_t)a;
    if (dr >= lo && dr < BW__BUCKETS) *rt += (uint32_t)r;
  }
}

typedef struct bw__sums_s {
  uint64_t req, ret;
} bw__sums_t;

/* bw__stripe_scan over a whole window, the sums returned in registers. */
__attribute__((always_inline)) static inline bw__sums_t bw__stripe_sums(
    const _Atomic uint64_t *w, uint32_t epoch) {
  bw__sums_t out = {0, 0};
  for (unsigned j = 0; j < BW__BUCKETS; j++) {
    uint64_t a = BW__LOAD(w[BW__W_BUCKET + 2 * j]);
    uint64_t r = BW__LOAD(w[BW__W_BUCKET + 2 * j + 1]);
    if (epoch - (uint32_t)(a >> 32) < BW__BUCKETS) out.req += (uint32_t)a;
    if (epoch - (uint32_t)(r >> 32) < BW__BUCKETS) out.ret += (uint32_t)r;
  }
  return out;
}

static inline uint32_t bw__slot(int64_t cur) {
  int64_t m;
  /* Unsigned division by a constant is a multiply and a shift; a clock
   * before 0 (a manual one) takes the signed way. */
  if (BW__LIKELY(cur >= 0)) return (uint32_t)((uint64_t)cur % BW__BUCKETS);
  m = cur % (int64_t)BW__BUCKETS;
  return (uint32_t)(m < 0 ? m + (int64_t)BW__BUCKETS : m);
}

/* The budget's clock. The library's coarse clock, the default for windows
 * of a second or more, is read here directly, the same reading as
 * bw_clock_now gives, without the two indirect calls in between: on the
 * ratio budget's hot paths they cost about a nanosecond. */
static inline int64_t bw__now(const bw_budget_t *b) {
#ifdef CLOCK_MONOTONIC_COARSE
  if (BW__LIKELY(b->coarse)) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * BW_NS_PER_S + ts.tv_nsec;
  }
#endif
  return bw_clock_now(b->clock);
}

/* The bucket index of `now`. A division costs more than the rest of a
 * check, so first try the bucket this thread's stripe last counted in: it
 * is nearly always the one. */
static inline int64_t bw__bucket_of(const bw_budget_t *b,
                                    const _Atomic uint64_t *own, int64_t now) {
  int64_t last = (int64_t)BW__LOAD(own[BW__W_LAST]);
  /* In unsigned arithmetic: no overflow whatever the clock returns, and
   * "now before the bucket's start" becomes a huge d. */
  uint64_t d = (uint64_t)now - (uint64_t)last * (uint64_t)b->bucket_ns;
  if (BW__LIKELY(d < (uint64_t)b->bucket_ns)) return last;
  return bw__floor_div(now, b->bucket_ns);
}

/* The stripe's first count in bucket `cur`. */
static void bw__win_roll(_Atomic uint64_t *w, int64_t cur, int64_t last,
                         unsigned si) {
  /* After a quiet spell of a whole window, wipe the stripe: no bucket older
   * than the window may survive, or a 32-bit epoch could alias after 2^32
   * buckets (49 days of 1 ms buckets). */
  if (cur - last >= (int64_t)BW__BUCKETS) {
    if (si < BW__EXCL_STRIPES) {
      for (unsigned k = BW__W_PREV_REQ; k < BW__W_END; k++)
        atomic_store_explicit(&w[k], 0, memory_order_relaxed);
    } else {
      /* A shared stripe may have other writers already counting in this
       * bucket: clear only the words of other buckets, by CAS, so that
       * their counts survive. (A word of this very bucket position that is
       * 5 * 2^32 buckets old would survive too: that takes a stripe idle
       * for 248 days of the smallest, 1 ms, buckets.) */
      for (unsigned k = BW__W_BUCKET; k < BW__W_END; k++) {
        uint64_t v = BW__LOAD(w[k]);
        while (v != 0 && (uint32_t)(v >> 32) != (uint32_t)cur &&
               !atomic_compare_exchange_weak_explicit(
                   &w[k], &v, 0, memory_order_relaxed, memory_order_relaxed)) {
        }
      }
    }
  }
  if (si < BW__EXCL_STRIPES) {
    /* The owner writes only the bucket of its own (monotonic) clock, so
     * the 9 before `cur` are frozen from now on: sum them once, for the
     * readers. Stored before `last`; a reader that still sees an older
     * tag scans instead. */
    uint64_t pq = 0, pt = 0;
    uint64_t tag = ((uint64_t)cur & BW__TAG_MASK) << BW__TAG_SHIFT;
    bw__stripe_scan(w, (uint32_t)cur, 1, &pq, &pt);
    atomic_store_explicit(&w[BW__W_PREV_REQ], tag | pq, memory_order_relaxed);
    atomic_store_explicit(&w[BW__W_PREV_RET], tag | pt, memory_order_relaxed);
  }
  atomic_store_explicit(&w[BW__W_LAST], (uint64_t)cur, memory_order_release);
}

/* Counts a request (slot 0) or a retry (slot 1) in bucket `cur` (whose
 * position in the ring is j = bw__slot(cur)) of this thread's stripe `w`.
 * False if the count was dropped (see bw__win_bump). */
static inline bool bw__win_record(_Atomic uint64_t *w, int64_t cur, uint32_t j,
                                  unsigned si, unsigned slot) {
  int64_t last = (int64_t)BW__LOAD(w[BW__W_LAST]);
  if (BW__UNLIKELY(last != cur)) bw__win_roll(w, cur, last, si);
  return bw__win_bump(&w[BW__W_BUCKET + 2 * j + slot], (uint32_t)cur, si);
}

/* Requests and retries in the window that ends with bucket `cur` (ring
 * position j = bw__slot(cur)): that bucket and the 9 before it. */
__attribute__((always_inline)) static inline bw__sums_t bw__win_read(
    const bw_budget_t *b, int64_t cur, uint32_t j) {
  uint32_t epoch = (uint32_t)cur;
  uint64_t tag = (uint64_t)cur & BW__TAG_MASK;
  unsigned used = bw__stripes_used();
  uint64_t rq = 0, rt = 0;
  for (unsigned s = 0; s < used; s++) {
    const _Atomic uint64_t *w = b->win + (size_t)s * BW__WIN_STRIDE;
    int64_t last =
        (int64_t)atomic_load_explicit(&w[BW__W_LAST], memory_order_acquire);
    /* A stripe with nothing inside the window is skipped: cheaper, and its
     * stale words can never alias into the window. */
    if (cur - last >= (int64_t)BW__BUCKETS) continue;
    if (s < BW__EXCL_STRIPES && last == cur) {
      /* The owner's cached sum of the 9 earlier buckets, plus the current
       * bucket: 4 words instead of 20. */
      uint64_t pq = BW__LOAD(w[BW__W_PREV_REQ]);
      uint64_t pt = BW__LOAD(w[BW__W_PREV_RET]);
      if ((pq >> BW__TAG_SHIFT) == tag && (pt >> BW__TAG_SHIFT) == tag) {
        uint64_t a = BW__LOAD(w[BW__W_BUCKET + 2 * j]);
        uint64_t r = BW__LOAD(w[BW__W_BUCKET + 2 * j + 1]);
        rq += (pq & BW__SUM_MASK) +
              ((uint32_t)(a >> 32) == epoch ? (uint32_t)a : 0);
        rt += (pt & BW__SUM_MASK) +
              ((uint32_t)(r >> 32) == epoch ? (uint32_t)r : 0);
        continue;
      }
    }
    {
      bw__sums_t sum = bw__stripe_sums(w, epoch);
      rq += sum.req;
      rt += sum.ret;
    }
  }
  {
    bw__sums_t out = {rq, rt};
    return out;
  }
}

/* retries < max(floor, percent% of requests), compared without dividing:
 * retries * 1000 < min_retries_per_sec * window_ms (as retries <
 * floor_retries), or retries * 100 < budget_percent * requests. Every
 * product of whole numbers here is exact in a double (they stay far below
 * 2^53), so 1000 requests at 20% allow exactly 200 retries, not 199 because
 * 0.2 * 1000 rounded down. */
static inline bool bw__ratio_allows(const bw_budget_t *b, uint64_t req,
                                    uint64_t ret) {
  /* Through int64_t: sums of 32-bit counts over at most 80 stripes and 10
   * buckets stay below 2^43, and a signed conversion is one instruction. */
  return ret < b->floor_retries ||
         (double)(int64_t)ret * 100.0 < b->percent * (double)(int64_t)req;
}

/* A seq_cst fence (x86-64: one locked instruction). GCC's ThreadSanitizer
 * drops standalone fences (-Wtsan says so), which would take the bound away
 * in the TSan runs: there, the same locked instruction is written out on
 * x86-64 (TSan sees no memory access in it; every access here is atomic,
 * so it has no race to miss), and elsewhere a seq_cst read-modify-write of
 * a dummy word stands in. */
#if defined(__SANITIZE_THREAD__)
#define BW__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BW__TSAN 1
#endif
#endif
#if defined(BW__TSAN) && !defined(__x86_64__)
static _Atomic unsigned bw__fence_word;
#endif
static inline void bw__full_fence(void) {
#if defined(BW__TSAN) && defined(__x86_64__)
  __asm__ __volatile__("lock orq $0, (%%rsp)" ::: "memory", "cc");
#elif defined(BW__TSAN)
  atomic_fetch_add_explicit(&bw__fence_word, 0, memory_order_seq_cst);
#else
  atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* ---- the verbs
 * ---------------------------------------------------------------
 */

void bw_budget_on_request(bw_budget_t *b) {
  unsigned si;
  if (BW__UNLIKELY(b == NULL)) return;
  if (b->kind == BW_BUDGET_RATIO) {
    int64_t now = bw__now(b); /* first: nothing else lives across it */
    _Atomic uint64_t *own;
    int64_t cur;
    si = bw__stripe();
    bw__bump(&b->stripes[si].requests, si);
    own = b->win + (size_t)si * BW__WIN_STRIDE;
    cur = bw__bucket_of(b, own, now);
    bw__win_record(own, cur, bw__slot(cur), si, 0);
  } else {
    si = bw__stripe();
    bw__bump(&b->stripes[si].requests, si);
  }
}

void bw_budget_on_success(bw_budget_t *b) {
  unsigned si;
  if (BW__UNLIKELY(b == NULL)) return;
  si = bw__stripe();
  bw__bump(&b->stripes[si].successes, si);
  if (b->kind == BW_BUDGET_TOKEN_BUCKET) bw__tokens_add(b, b->ratio_milli);
}

void bw_budget_on_failure(bw_budget_t *b) {
  unsigned si;
  if (BW__UNLIKELY(b == NULL)) return;
  si = bw__stripe();
  bw__bump(&b->stripes[si].failures, si);
  if (b->kind == BW_BUDGET_TOKEN_BUCKET) bw__tokens_add(b, -BW__MILLI);
}

/* The ratio budget's decision (bw_budget_try_retry): the clock is read
 * first, so that nothing but b lives across the call.
 *
 * The protocol (Dekker's: publish, full fence, then look at the others):
 * 1. read the window; no room: refused, nothing written (the common answer
 *    in a storm stays read-only);
 * 2. count this retry in the thread's own stripe;
 * 3. a seq_cst fence;
 * 4. read the window again, this retry included; if the retries before it
 *    leave no room, take the count back: refused.
 * Reading, then counting without the fence is not enough: a store may wait
 * in its core's store buffer while later loads go ahead (x86 allows it), so
 * two threads could each miss the other's retry, and a thread could have
 * several retries others do not see yet. With the fence, of any two
 * retries counted at once, the one whose fence comes later in the single
 * total order of seq_cst fences sees the other in step 4; so the k-th
 * granted retry of a window (in that order) sees at least k - 1 others and
 * is granted only if k - 1 < allowance: never more retries than the
 * allowance of the requests it saw. The price: a retry that another thread
 * has counted but will take back still counts in steps 1 and 4, so when
 * threads race for the last places, they may all be refused and the window
 * end short of the allowance by at most the other threads deciding at that
 * instant. */
static bool bw__ratio_try(bw_budget_t *b) {
  int64_t now = bw__now(b); /* one bucket for the whole decision */
  unsigned si = bw__stripe();
  _Atomic uint64_t *own = b->win + (size_t)si * BW__WIN_STRIDE;
  int64_t cur = bw__bucket_of(b, own, now);
  uint32_t j = bw__slot(cur);
  bw__sums_t sum = bw__win_read(b, cur, j);
  if (bw__ratio_allows(b, sum.req, sum.ret) &&
      bw__win_record(own, cur, j, si, 1)) {
    bw__full_fence();
    sum = bw__win_read(b, cur, j);
    /* sum includes this retry (a thread's own store comes before its later
     * loads), unless a peer on a shared stripe, a bucket ahead, recycled
     * the word in between: then the count is gone, and so is the grant. */
    if (BW__LIKELY(si < BW__EXCL_STRIPES ||
                   (uint32_t)(BW__LOAD(own[BW__W_BUCKET + 2 * j + 1]) >> 32) ==
                       (uint32_t)cur) &&
        sum.ret > 0 && bw__ratio_allows(b, sum.req, sum.ret - 1)) {
      bw__bump(&b->stripes[si].allowed, si);
      return true;
    }
    bw__win_unbump(&own[BW__W_BUCKET + 2 * j + 1], (uint32_t)cur, si);
  }
  bw__bump(&b->stripes[si].denied, si);
  return false;
}

bool bw_budget_try_retry(bw_budget_t *b) {
  unsigned si;
  bool ok;
  if (BW__UNLIKELY(b == NULL)) return false;
  if (b->kind != BW_BUDGET_TOKEN_BUCKET) return bw__ratio_try(b);
  si = bw__stripe();
  /* tokens > max / 2, in integers: for an odd max in thousandths this is
   * the same as gRPC's tokens > max / 2 with integer division. */
  ok = 2 * BW__LOAD(b->tokens) > b->max_milli;
  if (ok)
    bw__bump(&b->stripes[si].allowed, si);
  else
    bw__bump(&b->stripes[si].denied, si);
  return ok;
}

void bw_budget_stats(const bw_budget_t *b, bw_budget_stats_t *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (b == NULL) return;
  for (unsigned i = 0; i < BW__STRIPES; i++) {
    const bw__bstripe_t *s = &b->stripes[i];
    out->requests += BW__LOAD(s->requests);
    out->successes += BW__LOAD(s->successes);
    out->failures += BW__LOAD(s->failures);
    out->allowed += BW__LOAD(s->allowed);
    out->denied += BW__LOAD(s->denied);
  }
  if (b->kind == BW_BUDGET_TOKEN_BUCKET)
    out->tokens = (double)BW__LOAD(b->tokens) / BW__MILLI;
  else {
    int64_t cur = bw__floor_div(bw__now(b), b->bucket_ns);
    bw__sums_t sum = bw__win_read(b, cur, bw__slot(cur));
    out->window_requests = sum.req;
    out->window_retries = sum.ret;
  }
}

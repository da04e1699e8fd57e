/* Retry budgets: gRPC's token bucket and Envoy's ratio, lock-free.
 *
 * Design (docs/budget.md has the user's view and the reasons):
 * - Token bucket: one atomic word of milli-tokens (thousandths, like gRPC's
 *   max_milli_tokens), moved by CAS and held inside [0, max] at every instant.
 *   Asking for a retry is a single load. An outcome that cannot move the
 *   tokens (a success on a full bucket, a failure on an empty one) writes
 *   nothing, so a healthy dependency's calls share no written cache line.
 * - Ratio: requests in per-thread stripes of 10 buckets, each bucket a word
 *   packing (bucket epoch << 32 | count), like the breaker's time window.
 *   Writers touch only their own stripe; a retry decision sums the stripes
 *   that ever counted a request in this budget, each from a cached sum of
 *   its 9 frozen buckets plus its current one. Retries are counted in one
 * window-wide ring: the current bucket's count in a word a grant moves by CAS
 * ("if the window holds fewer than the allowance, one more"), the older
 * buckets' final counts and their cached sum beside it (bw__ratio_try): exactly
 * the allowance, never more, with no fence.
 * - Counters (requests, outcomes, decisions) live in per-thread stripes. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "summary.h"
#include "window.h"

/* Tokens are kept in thousandths: the resolution of max_tokens and
 * token_ratio. */
#define BW__MILLI 1000
#define BW__MAX_TOKENS 1e6
#define BW__BUCKETS 10u
#define BW__MIN_WINDOW_MS INT64_C(10)
#define BW__MAX_WINDOW_MS INT64_C(86400000) /* a day */
#define BW__MAX_FLOOR_RPS 1e9
#define BW__SOLE_MANY UINT_MAX /* req_sole: several stripes counted */
/* The ratio window's requests, per stripe: 13 words padded to 128 bytes,
 * so that two stripes never share a line pair.
 *   [0]        the bucket index the stripe last counted in (64-bit)
 *   [1]        exclusive stripes: the sum of requests over the 9 buckets
 *              before that one, tagged (index mod 2^24) << 40 | sum (9
 *              buckets of 32-bit counts fit in 40 bits)
 *   [2 + j]    bucket j's requests, (epoch << 32 | count)
 *   [12]       exclusive stripes: bw__slot of [0], stored with it by the
 *              owner (0 and 0 at creation), so that the owner finds its
 *              current bucket's word without a division (bw__ratio_try) */
#define BW__WIN_STRIDE 16u
#define BW__W_LAST 0u
#define BW__W_PREV_REQ 1u
#define BW__W_BUCKET 2u
#define BW__W_END (BW__W_BUCKET + BW__BUCKETS)
#define BW__W_SLOT BW__W_END
#define BW__TAG_SHIFT 40
#define BW__TAG_MASK UINT64_C(0xFFFFFF)
#define BW__SUM_MASK ((UINT64_C(1) << BW__TAG_SHIFT) - 1)
/* The window's retries: a ring of 16 buckets' counts (bw__ratio_try). */
#define BW__RING 16u

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
  int64_t max_milli;   /* token bucket: capacity in thousandths */
  int64_t ratio_milli; /* token bucket: refill per success in thousandths */
  /* Ratio: budget_percent and the floor, which bw_budget_set_ratio may
   * change live (each read once per decision; `setting` keeps two setters
   * from interleaving). */
  _Atomic uint64_t percent_bits;  /* budget_percent, a double's bits */
  _Atomic uint64_t floor_retries; /* fewer retries than this in the window
                                     are within the floor, i.e. retries *
                                     1000 < min_retries_per_sec * window_ms */
  _Atomic uint64_t min_rps_bits;  /* min_retries_per_sec, a double's bits */
  _Atomic bool setting;
  int64_t bucket_ns; /* ratio: window_ms / 10 in ns */
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  bw__summary_t summary;  /* refusals, summarised (only with a sink) */
  _Atomic bool exhausted; /* with a sink: refusing since the last allowed
                             retry (budget_exhausted emitted) */
  char *name;
  _Atomic uint64_t *win; /* ratio: BW__STRIPES * BW__WIN_STRIDE words */
  /* Ratio: 1 + the highest stripe that ever counted a request here. Read
   * by every decision instead of the library-wide count of stripes handed
   * out (a call into another unit, and stripes that never counted here);
   * raised, rarely, by a stripe's first request. */
  _Atomic unsigned req_stripes;
  /* Ratio: 1 + the one exclusive stripe that has counted requests here; 0
   * while none has, BW__SOLE_MANY once another (or a shared stripe) has
   * too. Set after the count (release), like req_stripes. While it names
   * the caller's own stripe, a decision reads that stripe alone
   * (bw__ratio_try): a budget whose requests one thread counts, whichever
   * thread that is. */
  _Atomic unsigned req_sole;

  /* Written by failures (and by successes while not full): its own pair of
   * lines, away from the read-only fields every call reads. */
  BW__PAIR_ALIGNED _Atomic int64_t tokens;

  /* Ratio: the window's retries (bw__ratio_try). Written by grants: their
   * own pair of lines.
   *   ret_head  the newest bucket's retries, (epoch << 28 | count), moved
   *             by CAS only;
   *   ret_prev  the cached sum of the 9 buckets before ret_head's, tagged
   *             (bucket mod 2^32) << 32 | sum;
   *   ret_ring  older buckets' final counts, (epoch << 28 | count), bucket
   *             e in ring[e mod 16], filed before ret_head leaves e. */
  BW__PAIR_ALIGNED _Atomic uint64_t ret_head;
  _Atomic uint64_t ret_prev;
  _Atomic int64_t ret_bucket; /* ret_head's bucket in full: a hint */
  _Atomic uint64_t ret_ring[BW__RING];

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
    return bw_error_set(err, BW_E_INVAL, "max_tokens",
                        "max_tokens must be in (0, 1e6] (got %g)",
                        c->max_tokens);
  if (!bw__to_milli(c->max_tokens, &max_m))
    return bw_error_set(err, BW_E_INVAL, "max_tokens",
                        "max_tokens must be a multiple of 0.001, the token "
                        "bucket's resolution (got %.17g)",
                        c->max_tokens);
  if (!(c->token_ratio > 0.0 && c->token_ratio <= c->max_tokens))
    return bw_error_set(err, BW_E_INVAL, "token_ratio",
                        "token_ratio must be in (0, max_tokens %g] (got %g)",
                        c->max_tokens, c->token_ratio);
  if (!bw__to_milli(c->token_ratio, &ratio_m) || ratio_m < 1)
    return bw_error_set(err, BW_E_INVAL, "token_ratio",
                        "token_ratio must be a multiple of 0.001, the token "
                        "bucket's resolution (got %.17g)",
                        c->token_ratio);
  return BW_OK;
}

static int bw__validate_ratio(const bw_budget_config_t *c, bw_error_t *err) {
  if (!(c->budget_percent >= 0.0 && c->budget_percent <= 100.0))
    return bw_error_set(err, BW_E_INVAL, "budget_percent",
                        "budget_percent must be in [0, 100] (got %g)",
                        c->budget_percent);
  if (!(c->min_retries_per_sec >= 0.0 &&
        c->min_retries_per_sec <= BW__MAX_FLOOR_RPS))
    return bw_error_set(err, BW_E_INVAL, "min_retries_per_sec",
                        "min_retries_per_sec must be in [0, 1e9] (got %g)",
                        c->min_retries_per_sec);
  if (c->clock != NULL && c->clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "clock",
                        "clock must be NULL (the default) or have a now_ns "
                        "function");
  if (c->window_ms < BW__MIN_WINDOW_MS || c->window_ms > BW__MAX_WINDOW_MS)
    return bw_error_set(err, BW_E_INVAL, "window_ms",
                        "window_ms must be in [10, 86400000] (10 buckets of "
                        "at least 1 ms, at most a day; got %lld)",
                        (long long)c->window_ms);
  return BW_OK;
}

int bw_budget_config_validate(const bw_budget_config_t *c, bw_error_t *err) {
  int rc;
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  switch (c->kind) {
  case BW_BUDGET_TOKEN_BUCKET:
    rc = bw__validate_bucket(c, err);
    break;
  case BW_BUDGET_RATIO:
    rc = bw__validate_ratio(c, err);
    break;
  default:
    return bw_error_set(err, BW_E_INVAL, "kind",
                        "kind must be token_bucket or ratio (got %d)",
                        (int)c->kind);
  }
  if (rc == BW_OK) bw_error_clear(err);
  return rc;
}

static void bw__ret_init(bw_budget_t *b);

static uint64_t bw__dbits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static double bw__bitsd(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* Stores a valid budget_percent and min_retries_per_sec (ratio kind). */
static void bw__ratio_store(bw_budget_t *b, double percent, double min_rps) {
  int64_t window_ms = b->bucket_ns * BW__BUCKETS / BW_NS_PER_MS;
  atomic_store_explicit(&b->percent_bits, bw__dbits(percent),
                        memory_order_relaxed);
  atomic_store_explicit(&b->floor_retries,
                        bw__floor_retries(min_rps * (double)window_ms),
                        memory_order_relaxed);
  atomic_store_explicit(&b->min_rps_bits, bw__dbits(min_rps),
                        memory_order_relaxed);
}

bw_budget_t *bw_budget_new(const bw_budget_config_t *cfg, bw_error_t *err) {
  bw_budget_t *b;
  if (bw_budget_config_validate(cfg, err) != BW_OK) return NULL;
  b = bw_calloc_aligned(sizeof(*b));
  if (b == NULL) goto nomem;
  b->name = bw_strdup(cfg->name);
  if (b->name == NULL) goto nomem;
  b->kind = cfg->kind;
  if (b->kind == BW_BUDGET_TOKEN_BUCKET) {
    bw__to_milli(cfg->max_tokens, &b->max_milli);
    bw__to_milli(cfg->token_ratio, &b->ratio_milli);
    atomic_init(&b->tokens, b->max_milli);
  } else {
    b->bucket_ns = cfg->window_ms * (BW_NS_PER_MS / BW__BUCKETS);
    bw__ratio_store(b, cfg->budget_percent, cfg->min_retries_per_sec);
    b->clock = cfg->clock               ? cfg->clock
               : cfg->window_ms >= 1000 ? bw_clock_monotonic_coarse()
                                        : bw_clock_monotonic();
    b->win = bw_calloc_aligned((size_t)BW__STRIPES * BW__WIN_STRIDE *
                               sizeof(uint64_t));
    if (b->win == NULL) goto nomem;
    atomic_init(&b->tokens, 0);
    bw__ret_init(b);
  }
  b->sink = cfg->sink;
  atomic_init(&b->exhausted, false);
  b->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  if (b->clock == NULL && b->sink != NULL)
    b->clock = cfg->clock != NULL /* a token bucket's summaries */
                   ? cfg->clock
                   : bw_clock_monotonic_coarse();
  if (bw__summary_init(&b->summary,
                       b->sink != NULL ? bw__clock_now(b->clock) : 0) != 0) {
    bw_free_aligned((void *)b->win);
    bw_free(b->name);
    bw_free_aligned(b);
    bw_error_set(err, BW_E_NOMEM, "", "cannot create the lock of budget '%s'",
                 cfg->name);
    return NULL;
  }
  return b;
nomem:
  if (b != NULL) {
    bw_free(b->name);
    bw_free_aligned(b);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating budget '%s'",
               cfg->name);
  return NULL;
}

/* Emits the refused retries since the last summary as one retries_refused
 * event (the summary's lock held). */
static void bw__budget_summarise_locked(bw_budget_t *b, int64_t now) {
  uint64_t total = 0, n;
  for (unsigned i = 0; i < BW__STRIPES; i++)
    total += BW__LOAD(b->stripes[i].denied);
  n = bw__summary_take(&b->summary, 0, total);
  if (n == 0) return;
  {
    bw_field_t f[2];
    char reason[128];
    f[0] = bw_field_uint("count", n);
    f[1] = bw_field_str("budget", bw_budget_kind_name(b->kind));
    snprintf(reason, sizeof(reason), "%llu retries refused by the %s budget",
             (unsigned long long)n, bw_budget_kind_name(b->kind));
    bw_event_emit(b->sink, b->wall, now, BW_EV_RETRIES_REFUSED, b->name, reason,
                  f, 2, NULL);
  }
}

/* After a refusal was counted: budget_exhausted if the budget allowed the
 * last retry (or none yet), then a summary when one is due. */
static BW__COLD void bw__budget_refused(bw_budget_t *b) {
  int64_t now = bw__clock_now(b->clock);
  bool was = false;
  if (atomic_compare_exchange_strong(&b->exhausted, &was, true)) {
    bw_field_t f[1];
    char reason[96];
    f[0] = bw_field_str("budget", bw_budget_kind_name(b->kind));
    snprintf(reason, sizeof(reason),
             "the %s budget is spent: retries refused until it refills",
             bw_budget_kind_name(b->kind));
    bw_event_emit(b->sink, b->wall, now, BW_EV_BUDGET_EXHAUSTED, b->name,
                  reason, f, 1, NULL);
  }
  if (!bw__summary_begin(&b->summary, now, false)) return;
  bw__budget_summarise_locked(b, now);
  bw__summary_end(&b->summary, now);
}

void bw_budget_free(bw_budget_t *b) {
  if (b == NULL) return;
  if (b->sink != NULL) { /* the last summary: the clocks and sink outlive us */
    int64_t now = bw__clock_now(b->clock);
    bw__summary_begin(&b->summary, now, true);
    bw__budget_summarise_locked(b, now);
    bw__summary_end(&b->summary, now);
  }
  bw__summary_destroy(&b->summary);
  bw_free_aligned((void *)b->win);
  bw_free(b->name);
  bw_free_aligned(b);
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

/* ---- ratio window: requests ------------------------------------------------
 */

/* Sums a stripe's words whose bucket is `lo` to 9 buckets before `epoch`
 * (lo 0: the whole window; lo 1: the window without its newest bucket). */
static uint64_t bw__stripe_scan(const _Atomic uint64_t *w, uint32_t epoch,
                                uint32_t lo) {
  uint64_t rq = 0;
  for (unsigned j = 0; j < BW__BUCKETS; j++) {
    rq += bw__window_count(BW__LOAD(w[BW__W_BUCKET + j]), epoch - lo,
                           BW__BUCKETS - lo);
  }
  return rq;
}

static inline uint32_t bw__slot(int64_t cur) {
  int64_t m;
  /* Unsigned division by a constant is a multiply and a shift; a clock
   * before 0 (a manual one) takes the signed way. */
  if (BW__LIKELY(cur >= 0)) return (uint32_t)((uint64_t)cur % BW__BUCKETS);
  m = cur % (int64_t)BW__BUCKETS;
  return (uint32_t)(m < 0 ? m + (int64_t)BW__BUCKETS : m);
}

/* Whether `now` falls in bucket `guess` (any guess is safe: it is checked).
 * In unsigned arithmetic: no overflow whatever the clock returns, and "now
 * before the bucket's start" becomes a huge difference. */
static inline bool bw__in_bucket(const bw_budget_t *b, int64_t now,
                                 int64_t guess) {
  return (uint64_t)now - (uint64_t)guess * (uint64_t)b->bucket_ns <
         (uint64_t)b->bucket_ns;
}

/* The bucket index of `now`. A division costs more than the rest of a
 * check, so first try the bucket this thread's stripe last counted in: it
 * is nearly always the one. */
static inline int64_t bw__bucket_of(const bw_budget_t *b,
                                    const _Atomic uint64_t *own, int64_t now) {
  int64_t last = (int64_t)BW__LOAD(own[BW__W_LAST]);
  if (BW__LIKELY(bw__in_bucket(b, now, last))) return last;
  return bw__floor_div(now, b->bucket_ns);
}

/* The stripe's first count in bucket `cur` (ring position j). */
static void bw__win_roll(_Atomic uint64_t *w, int64_t cur, uint32_t j,
                         int64_t last, unsigned si) {
  /* After a quiet spell of a whole window, wipe the stripe: no bucket older
   * than the window may survive, or a 32-bit epoch could alias after 2^32
   * buckets (49 days of 1 ms buckets). An owner's cached sum is rewritten
   * just below. */
  if (cur - last >= (int64_t)BW__BUCKETS)
    bw__window_wipe(&w[BW__W_BUCKET], BW__BUCKETS, (uint32_t)cur, si);
  if (si < BW__EXCL_STRIPES) {
    /* The owner writes only the bucket of its own (monotonic) clock, so
     * the 9 before `cur` are frozen from now on: sum them once, for the
     * readers. Stored before `last`; a reader that still sees an older
     * tag scans instead. */
    uint64_t tag = ((uint64_t)cur & BW__TAG_MASK) << BW__TAG_SHIFT;
    atomic_store_explicit(&w[BW__W_PREV_REQ],
                          tag | bw__stripe_scan(w, (uint32_t)cur, 1),
                          memory_order_relaxed);
    atomic_store_explicit(&w[BW__W_SLOT], j, memory_order_relaxed);
  }
  atomic_store_explicit(&w[BW__W_LAST], (uint64_t)cur, memory_order_release);
}

/* Counts a request in bucket `cur` (whose position in the ring is j =
 * bw__slot(cur)) of this thread's stripe `w`. */
static inline void bw__win_record(_Atomic uint64_t *w, int64_t cur, uint32_t j,
                                  unsigned si) {
  int64_t last = (int64_t)BW__LOAD(w[BW__W_LAST]);
  if (BW__UNLIKELY(last != cur)) bw__win_roll(w, cur, j, last, si);
  bw__window_bump(&w[BW__W_BUCKET + j], (uint32_t)cur, si);
}

/* Requests in the window that ends with bucket `cur` (ring position j =
 * bw__slot(cur)): that bucket and the 9 before it. */
__attribute__((always_inline)) static inline uint64_t bw__win_requests(
    const bw_budget_t *b, int64_t cur, uint32_t j) {
  uint32_t epoch = (uint32_t)cur;
  uint64_t tag = (uint64_t)cur & BW__TAG_MASK;
  unsigned used = atomic_load_explicit(&b->req_stripes, memory_order_acquire);
  uint64_t rq = 0;
  for (unsigned s = 0; s < used; s++) {
    const _Atomic uint64_t *w = b->win + (size_t)s * BW__WIN_STRIDE;
    int64_t last =
        (int64_t)atomic_load_explicit(&w[BW__W_LAST], memory_order_acquire);
    /* A stripe with nothing inside the window is skipped: cheaper, and its
     * stale words can never alias into the window. */
    if (cur - last >= (int64_t)BW__BUCKETS) continue;
    if (s < BW__EXCL_STRIPES && last == cur) {
      /* The owner's cached sum of the 9 earlier buckets, plus the current
       * bucket: 2 words instead of 10. */
      uint64_t pq = BW__LOAD(w[BW__W_PREV_REQ]);
      if ((pq >> BW__TAG_SHIFT) == tag) {
        uint64_t a = BW__LOAD(w[BW__W_BUCKET + j]);
        rq += (pq & BW__SUM_MASK) + bw__window_count(a, epoch, 1);
        continue;
      }
    }
    rq += bw__stripe_scan(w, epoch, 0);
  }
  return rq;
}

/* ---- ratio window: retries -------------------------------------------------
 *
 * One window-wide count, so that a grant is a single CAS that checks and
 * counts at once: exact under any contention, with no fence. ret_head holds
 * the newest bucket that saw a retry decision and its count, packed as
 * (epoch << 28 | count) with the bucket index mod 2^36 as the epoch; only
 * CAS moves it, so its modification order is the order of the grants. A
 * thread that finds an older bucket there first files that bucket's count
 * in ret_ring (keeping the larger of two counts of one bucket: a thread
 * that lost the race may file a smaller one late), then moves ret_head to
 * its bucket with count 0. Only the winner of that CAS filed the final
 * count (no grant can follow in the old bucket once ret_head has moved),
 * and it filed it before the CAS (release), so a thread that reads
 * ret_head (acquire) in a bucket sees every older bucket's final count.
 * Those never change again, so their sum is cached in ret_prev, tagged
 * with the bucket mod 2^32, by whoever computes it first.
 *
 * The ring has 16 entries, indexed by epoch mod 16 (consistent across the
 * epoch's wrap). Counts saturate at 2^28 - 1 retries a bucket (beyond,
 * refused). An epoch aliases only after 2^36 buckets without a retry
 * decision (2.2 years of the smallest, 1 ms, buckets), and then it can only
 * count retries that are not there: it refuses, never over-grants. The head
 * starts in the creation bucket; after 2^35 idle buckets the full-width
 * ret_bucket, not the epoch, says the head is old (bw__ratio_try). */
#define BW__RC_BITS 28
#define BW__RC_MAX ((UINT64_C(1) << BW__RC_BITS) - 1)
#define BW__RE_MASK ((UINT64_C(1) << 36) - 1)

static inline uint64_t bw__repoch(int64_t cur) {
  return (uint64_t)cur & BW__RE_MASK;
}
static inline uint64_t bw__re(uint64_t w) {
  return w >> BW__RC_BITS;
}
static inline uint64_t bw__rc(uint64_t w) {
  return w & BW__RC_MAX;
}
/* a - b for epochs, mod 2^36: below 2^35 when a is b or later. */
static inline uint64_t bw__rdiff(uint64_t a, uint64_t b) {
  return (a - b) & BW__RE_MASK;
}

/* ret_head starts in the creation bucket with no retry: a head at epoch 0
 * would read as "ahead" of every bucket whose index mod 2^36 is 2^35 or
 * more (a clock far from 0, or before it) and refuse them all. */
static void bw__ret_init(bw_budget_t *b) {
  int64_t cur = bw__floor_div(bw__clock_now(b->clock), b->bucket_ns);
  atomic_init(&b->ret_head, bw__repoch(cur) << BW__RC_BITS);
  atomic_init(&b->ret_bucket, cur);
  atomic_init(&b->ret_prev, (uint64_t)(uint32_t)cur << 32);
}

/* The sum of the final counts of the 9 buckets before `cur` (the caller
 * has read ret_head at cur's epoch, with acquire). Cached in ret_prev. */
__attribute__((noinline)) static uint64_t bw__ret_prev_compute(bw_budget_t *b,
                                                               int64_t cur) {
  uint64_t epoch = bw__repoch(cur), sum = 0;
  for (unsigned k = 0; k < BW__RING; k++) {
    uint64_t w = BW__LOAD(b->ret_ring[k]);
    uint64_t d = bw__rdiff(epoch, bw__re(w));
    if (d >= 1 && d < BW__BUCKETS) sum += bw__rc(w);
  }
  /* 9 counts below 2^28: the sum fits in 32 bits. */
  atomic_store_explicit(&b->ret_prev, ((uint64_t)(uint32_t)cur << 32) | sum,
                        memory_order_relaxed);
  return sum;
}

/* Files bucket e's count n (the word w = e << 28 | n) in the ring, unless
 * the entry already holds a newer bucket or a larger count of this one. */
__attribute__((noinline)) static void bw__ret_ring_put(bw_budget_t *b,
                                                       uint64_t want) {
  _Atomic uint64_t *slot = &b->ret_ring[bw__re(want) % BW__RING];
  uint64_t w = BW__LOAD(*slot);
  for (;;) {
    /* How much newer the entry is than want: a little (a racing thread
     * filed a later bucket of this slot first), or the same bucket with a
     * count at least as large, keeps it. An empty entry (0), or one 2^34
     * buckets or more "newer" (in truth an ancient one the epoch wrapped
     * past), is replaced. */
    uint64_t dn = bw__rdiff(bw__re(w), bw__re(want));
    if (w != 0 && ((dn != 0 && dn < (UINT64_C(1) << 34)) ||
                   (dn == 0 && bw__rc(w) >= bw__rc(want))))
      return;
    if (atomic_compare_exchange_weak_explicit(
            slot, &w, want, memory_order_relaxed, memory_order_relaxed))
      return;
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
  return ret < BW__LOAD(b->floor_retries) ||
         (double)(int64_t)ret * 100.0 <
             bw__bitsd(BW__LOAD(b->percent_bits)) * (double)(int64_t)req;
}

/* ---- the verbs
 * ---------------------------------------------------------------
 */

/* A request counted on stripe si while req_sole was `sole` (not si's, not
 * many): the first counter becomes the sole one if its stripe is
 * exclusive; anyone else makes it many, for good. */
__attribute__((noinline)) static void bw__note_sole(bw_budget_t *b, unsigned si,
                                                    unsigned sole) {
  unsigned want = si < BW__EXCL_STRIPES ? si + 1 : BW__SOLE_MANY;
  if (sole == 0 && atomic_compare_exchange_strong_explicit(
                       &b->req_sole, &sole, want, memory_order_release,
                       memory_order_relaxed))
    return;
  if (sole != si + 1)
    atomic_store_explicit(&b->req_sole, BW__SOLE_MANY, memory_order_release);
}

void bw_budget_on_request(bw_budget_t *b) {
  unsigned si;
  if (BW__UNLIKELY(b == NULL)) return;
  if (b->kind == BW_BUDGET_RATIO) {
    int64_t now =
        bw__clock_now(b->clock); /* first: nothing else lives across it */
    _Atomic uint64_t *own;
    int64_t cur;
    si = bw__stripe();
    bw__bump(&b->stripes[si].requests, si);
    own = b->win + (size_t)si * BW__WIN_STRIDE;
    cur = bw__bucket_of(b, own, now);
    bw__win_record(own, cur, bw__slot(cur), si);
    /* After the count (release): a reader that sees the stripe in use sees
     * the count too. */
    if (BW__UNLIKELY(si >= BW__LOAD(b->req_stripes)))
      bw__raise_stripes(&b->req_stripes, si);
    {
      unsigned sole = BW__LOAD(b->req_sole);
      if (BW__UNLIKELY(sole != si + 1) && sole != BW__SOLE_MANY)
        bw__note_sole(b, si, sole);
    }
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

/* The ratio budget's decision (bw_budget_try_retry).
 *
 * Requests are summed from the stripes (relaxed: the bound is against the
 * requests seen). Retries: one CAS on ret_head from (bucket, n) to (bucket,
 * n + 1), made only if the 9 earlier buckets' sum plus n leaves room. A
 * CAS succeeds only on the value it checked, so grants are totally ordered
 * by ret_head's modification order and the k-th grant of a bucket saw the
 * k - 1 before it: never more retries in a window than the allowance, and
 * no retry refused while the window has room (no count to take back, as a
 * count-then-check protocol would need, and no fence: a locked CAS is the
 * only synchronisation, and it is the count). A lost CAS re-reads and
 * decides again. Memory orders: the load of ret_head and a failed CAS
 * acquire, a CAS that succeeds is acq_rel; only the move to a new bucket
 * needs them (its release publishes the old bucket's filed count, see
 * above); the exactness of the count itself needs none, only the single
 * modification order of one word. A thread whose clock reading is older
 * than ret_head's bucket (it read the clock just before another thread's,
 * across a bucket boundary) is refused: its window has already ended for
 * the others.
 *
 * Three functions, one decision. bw__ratio_try is the path of nearly
 * every call of a budget that one thread counts requests in: the caller's
 * own stripe is the only one that ever counted a request here (req_sole),
 * already in the bucket of now with its cached sum; ret_head and ret_prev
 * are in
 * that bucket too. It makes no call but the clock's, so its values stay in
 * scratch registers (it saves one callee-saved register, not six), and it
 * reads the words the general path would read, in the same order, less the
 * re-read of its own stripe's bucket and the tag check that only another
 * thread's stripe needs. Anything else hands over, with what it has read,
 * to bw__ratio_decide (the CAS loop) or bw__ratio_try_slow (the general
 * path), as tail calls: the same decision either way. */

/* The CAS loop, from a head h read (acquire) at or after the requests. */
__attribute__((noinline)) static bool bw__ratio_decide(bw_budget_t *b,
                                                       unsigned si, int64_t cur,
                                                       uint64_t req,
                                                       uint64_t h) {
  uint64_t epoch = bw__repoch(cur);
  for (;;) {
    uint64_t p, prev;
    if (BW__UNLIKELY(bw__re(h) != epoch)) {
      /* A stale clock reading (another thread is in a later bucket
       * already): refused. Behind by half the epoch's range or more, the
       * head is rather an old bucket the epoch wrapped past (a budget
       * idle for 2^35 buckets): ret_bucket, the head's bucket in full,
       * tells the two apart. */
      if (bw__rdiff(epoch, bw__re(h)) >= (UINT64_C(1) << 35) &&
          cur - atomic_load_explicit(&b->ret_bucket, memory_order_relaxed) <
              (INT64_C(1) << 35))
        break;
      /* The first decision in this bucket: file the old bucket's count,
       * then move ret_head here. */
      bw__ret_ring_put(b, h);
      if (!atomic_compare_exchange_weak_explicit(
              &b->ret_head, &h, epoch << BW__RC_BITS, memory_order_acq_rel,
              memory_order_acquire))
        continue;
      h = epoch << BW__RC_BITS;
      atomic_store_explicit(&b->ret_bucket, cur, memory_order_relaxed);
      (void)bw__ret_prev_compute(b, cur);
    }
    p = BW__LOAD(b->ret_prev);
    prev = BW__LIKELY((uint32_t)(p >> 32) == (uint32_t)cur)
               ? (uint32_t)p
               : bw__ret_prev_compute(b, cur);
    if (!bw__ratio_allows(b, req, prev + bw__rc(h)) ||
        BW__UNLIKELY(bw__rc(h) == BW__RC_MAX))
      break;
    if (atomic_compare_exchange_weak_explicit(&b->ret_head, &h, h + 1,
                                              memory_order_acq_rel,
                                              memory_order_acquire)) {
      bw__bump(&b->stripes[si].allowed, si);
      return true;
    }
  }
  bw__bump(&b->stripes[si].denied, si);
  return false;
}

/* The general decision: any thread, any stripes in use, any bucket. */
__attribute__((noinline)) static bool bw__ratio_try_slow(bw_budget_t *b,
                                                         int64_t now) {
  unsigned si = bw__stripe();
  const _Atomic uint64_t *own = b->win + (size_t)si * BW__WIN_STRIDE;
  int64_t cur = (int64_t)BW__LOAD(own[BW__W_LAST]);
  uint64_t req, h;
  /* The bucket of now: the one this thread last counted a request in, or
   * the one of the last retry decision (a thread that only asks), or, if
   * neither, a division. */
  if (!bw__in_bucket(b, now, cur)) {
    int64_t last = cur;
    cur = atomic_load_explicit(&b->ret_bucket, memory_order_relaxed);
    if (!bw__in_bucket(b, now, cur)) cur = bw__floor_div(now, b->bucket_ns);
    /* Move this thread's own stripe to the bucket (as its next request
     * would): its cached sum then serves the reads of this bucket, where
     * an idle stripe would be scanned word by word. */
    if (si < BW__EXCL_STRIPES && cur > last)
      bw__win_roll(b->win + (size_t)si * BW__WIN_STRIDE, cur, bw__slot(cur),
                   last, si);
  }
  req = bw__win_requests(b, cur, bw__slot(cur));
  h = atomic_load_explicit(&b->ret_head, memory_order_acquire);
  return bw__ratio_decide(b, si, cur, req, h);
}

__attribute__((noinline)) static bool bw__ratio_try(bw_budget_t *b) {
  int64_t now = bw__clock_now(b->clock); /* one bucket for the whole decision */
  /* bw__stripe_tls is 1 + the caller's stripe (0: none claimed yet), and
   * req_sole 1 + the only stripe that counted requests here. */
  unsigned s1 = bw__stripe_tls, si;
  const _Atomic uint64_t *w;
  int64_t cur;
  uint64_t pq, a, req, h, p, n;
  if (BW__UNLIKELY(s1 == 0 || atomic_load_explicit(&b->req_sole,
                                                   memory_order_acquire) != s1))
    return bw__ratio_try_slow(b, now);
  si = s1 - 1;
  w = b->win + (size_t)si * BW__WIN_STRIDE;
  cur = (int64_t)BW__LOAD(w[BW__W_LAST]);
  if (BW__UNLIKELY(!bw__in_bucket(b, now, cur)))
    return bw__ratio_try_slow(b, now);
  /* bw__win_requests for this one stripe, which is this thread's own: the
   * owner stored the cached sum (tagged with cur) and w[BW__W_SLOT] (the
   * slot of cur) before w[BW__W_LAST] in the same bw__win_roll (all 0 at
   * creation, which is bucket 0 with nothing in it), so the tag a reader of
   * another thread's stripe must check always matches here. */
  pq = BW__LOAD(w[BW__W_PREV_REQ]);
  a = BW__LOAD(w[BW__W_BUCKET + BW__LOAD(w[BW__W_SLOT])]);
  req = (pq & BW__SUM_MASK) + bw__window_count(a, (uint32_t)cur, 1);
  /* bw__ratio_decide's first round, when it needs no call. */
  h = atomic_load_explicit(&b->ret_head, memory_order_acquire);
  if (BW__UNLIKELY(bw__re(h) != bw__repoch(cur)))
    return bw__ratio_decide(b, si, cur, req, h);
  p = BW__LOAD(b->ret_prev);
  if (BW__UNLIKELY((uint32_t)(p >> 32) != (uint32_t)cur))
    return bw__ratio_decide(b, si, cur, req, h);
  n = bw__rc(h);
  if (!bw__ratio_allows(b, req, (uint32_t)p + n) ||
      BW__UNLIKELY(n == BW__RC_MAX)) {
    bw__bump(&b->stripes[si].denied, si);
    return false;
  }
  if (BW__LIKELY(atomic_compare_exchange_weak_explicit(&b->ret_head, &h, h + 1,
                                                       memory_order_acq_rel,
                                                       memory_order_acquire))) {
    bw__bump(&b->stripes[si].allowed, si);
    return true;
  }
  return bw__ratio_decide(b, si, cur, req, h);
}

static inline bool bw__try_retry(bw_budget_t *b) {
  unsigned si;
  bool ok;
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

bool bw_budget_try_retry(bw_budget_t *b) {
  bool ok;
  if (BW__UNLIKELY(b == NULL)) return false;
  ok = bw__try_retry(b);
  if (BW__UNLIKELY(b->sink != NULL)) {
    if (!ok)
      bw__budget_refused(b);
    else if (atomic_load_explicit(&b->exhausted, memory_order_relaxed))
      atomic_store_explicit(&b->exhausted, false, memory_order_relaxed);
  }
  return ok;
}

/* Retries in the window ending with bucket `cur`: ret_head's count if its
 * bucket is inside, and the ring's other buckets inside (not ret_head's
 * own: a ring entry of that bucket may be a partial count a racing thread
 * filed). */
static uint64_t bw__win_retries(const bw_budget_t *b, int64_t cur) {
  uint64_t epoch = bw__repoch(cur);
  uint64_t h = atomic_load_explicit(&b->ret_head, memory_order_acquire);
  uint64_t sum = bw__rdiff(epoch, bw__re(h)) < BW__BUCKETS ? bw__rc(h) : 0;
  for (unsigned k = 0; k < BW__RING; k++) {
    uint64_t w = BW__LOAD(b->ret_ring[k]);
    if (bw__re(w) != bw__re(h) && bw__rdiff(epoch, bw__re(w)) < BW__BUCKETS)
      sum += bw__rc(w);
  }
  return sum;
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
    int64_t cur = bw__floor_div(bw__clock_now(b->clock), b->bucket_ns);
    out->window_requests = bw__win_requests(b, cur, bw__slot(cur));
    out->window_retries = bw__win_retries(b, cur);
  }
}

int bw_budget_try_retry_ex(bw_budget_t *b) {
  if (b == NULL) return BW_E_INVAL;
  return bw_budget_try_retry(b) ? BW_OK : BW_E_FULL;
}

/* ---- live changes ----------------------------------------------------------
 */

void bw_budget_config_of(const bw_budget_t *b, bw_budget_config_t *cfg) {
  if (b == NULL || cfg == NULL) return;
  bw_budget_config_init(cfg);
  cfg->name = b->name;
  cfg->kind = b->kind;
  if (b->kind == BW_BUDGET_TOKEN_BUCKET) {
    cfg->max_tokens = (double)b->max_milli / 1000.0;
    cfg->token_ratio = (double)b->ratio_milli / 1000.0;
  } else {
    bw_budget_t *w = (bw_budget_t *)b; /* the setters' flag only */
    bool no = false;
    while (!atomic_compare_exchange_weak_explicit(
        &w->setting, &no, true, memory_order_acquire, memory_order_relaxed))
      no = false;
    cfg->budget_percent = bw__bitsd(BW__LOAD(b->percent_bits));
    cfg->min_retries_per_sec = bw__bitsd(BW__LOAD(b->min_rps_bits));
    atomic_store_explicit(&w->setting, false, memory_order_release);
    cfg->window_ms = b->bucket_ns * BW__BUCKETS / BW_NS_PER_MS;
  }
  cfg->clock = b->clock;
  cfg->wall_clock = b->wall;
  cfg->sink = b->sink;
}

int bw_budget_set_ratio(bw_budget_t *b, double budget_percent,
                        double min_retries_per_sec, bw_error_t *err) {
  bw_budget_config_t c;
  bool no = false;
  if (b == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "budget must not be NULL");
  if (b->kind != BW_BUDGET_RATIO)
    return bw_error_set(err, BW_E_INVAL, "kind",
                        "budget_percent and min_retries_per_sec are a ratio "
                        "budget's; '%s' is a token_bucket",
                        b->name);
  /* The creation rules, with the same messages. */
  bw_budget_config_of(b, &c);
  c.budget_percent = budget_percent;
  c.min_retries_per_sec = min_retries_per_sec;
  if (bw_budget_config_validate(&c, err) != BW_OK) return BW_E_INVAL;
  /* The window's counts are kept: the new share and floor decide from the
   * next retry on. */
  while (!atomic_compare_exchange_weak_explicit(
      &b->setting, &no, true, memory_order_acquire, memory_order_relaxed))
    no = false;
  bw__ratio_store(b, budget_percent, min_retries_per_sec);
  atomic_store_explicit(&b->setting, false, memory_order_release);
  bw_error_clear(err);
  return BW_OK;
}

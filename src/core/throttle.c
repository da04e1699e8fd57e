/* Client-side adaptive throttling (Google SRE): a windowed count of
 * requests and accepts under one mutex, and the strategy that refuses with
 * probability max(0, (requests - K * accepts) / (requests + 1)).
 *
 * The window is a ring of `buckets` buckets, each tagged with the index of
 * the bucket of time it counts (floor(now / bucket_ns)); a bucket whose tag
 * is older than the window counts nothing and is reset when its slot is
 * reused. A decision sums the ring (at most 1,000 buckets, 60 by default):
 * simple and exact, and cheap next to the network call it may save.
 *
 * With a sink, refusals are reported as throttle_refused summaries (at most
 * one a second, and the last at free: summary.h), each with the refusals
 * since the previous one and the window as it reads then. */
#include "breakwater/throttle.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "breakwater/rand.h"
#include "internal.h"
#include "summary.h"

#define BW__TH_MIN_WINDOW_MS INT64_C(10)
#define BW__TH_MAX_WINDOW_MS INT64_C(86400000) /* a day */
#define BW__TH_MAX_BUCKETS 1000u

typedef struct bw__tbucket_s {
  int64_t index; /* the bucket of time counted here; INT64_MIN: never used */
  uint64_t requests;
  uint64_t accepts;
} bw__tbucket_t;

struct bw_throttle_s {
  bw_strategy_if_t head; /* first: the strategy is the throttle */
  /* Read-only after creation. */
  char *name;
  int64_t bucket_ns;
  uint32_t nbuckets;
  int64_t window_ms; /* as given (bw_throttle_config_of) */
  uint64_t seed;     /* as given: 0 = the operating system's */
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  /* Refusals, summarised as throttle_refused (only with a sink). Its lock
   * is taken before mu, never after. */
  bw__summary_t summary;
  /* Under mu. */
  pthread_mutex_t mu;
  double k; /* bw_throttle_set_k changes it */
  bw_rand_t rng;
  uint64_t requests, accepts, rejected, throttled, withdrawn;
  bw__tbucket_t ring[]; /* nbuckets */
};

void bw_throttle_config_init(bw_throttle_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof *cfg);
  cfg->name = "throttle";
  cfg->k = 2.0;
  cfg->window_ms = 60000;
  cfg->buckets = 60;
  cfg->seed = 0;
  cfg->clock = NULL;
  cfg->wall_clock = NULL;
  cfg->sink = NULL;
}

int bw_throttle_config_validate(const bw_throttle_config_t *cfg,
                                bw_error_t *err) {
  if (cfg == NULL)
    return bw_error_set(err, BW_E_INVAL, "cfg", "cfg must not be NULL");
  if (bw_name_check(cfg->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (!(cfg->k >= 1.0 && cfg->k <= 10.0)) /* NaN fails too */
    return bw_error_set(err, BW_E_INVAL, "k", "k must be in [1, 10] (got %g)",
                        cfg->k);
  if (cfg->window_ms < BW__TH_MIN_WINDOW_MS ||
      cfg->window_ms > BW__TH_MAX_WINDOW_MS)
    return bw_error_set(err, BW_E_INVAL, "window_ms",
                        "window_ms must be in [10, 86400000] (got %lld)",
                        (long long)cfg->window_ms);
  if (cfg->buckets < 1 || cfg->buckets > BW__TH_MAX_BUCKETS)
    return bw_error_set(err, BW_E_INVAL, "buckets",
                        "buckets must be in [1, 1000] (got %u)",
                        (unsigned)cfg->buckets);
  if ((cfg->window_ms * BW_NS_PER_MS) % (int64_t)cfg->buckets != 0)
    return bw_error_set(err, BW_E_INVAL, "buckets",
                        "buckets must divide window_ms in nanoseconds "
                        "(%lld ms into %u buckets is not whole ns)",
                        (long long)cfg->window_ms, (unsigned)cfg->buckets);
  if (cfg->clock != NULL && cfg->clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "clock",
                        "clock must have now_ns when given");
  if (cfg->wall_clock != NULL && cfg->wall_clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "wall_clock",
                        "wall_clock must have now_ns when given");
  bw_error_clear(err);
  return BW_OK;
}

static const bw_strategy_vtable_t throttle_vt;

bw_throttle_t *bw_throttle_new(const bw_throttle_config_t *cfg,
                               bw_error_t *err) {
  if (bw_throttle_config_validate(cfg, err) != BW_OK) return NULL;
  bw_throttle_t *t =
      bw_calloc(1, sizeof *t + cfg->buckets * sizeof(bw__tbucket_t));
  char *name = bw_strdup(cfg->name);
  const bw_clock_t *clock =
      cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  if (t == NULL || name == NULL || pthread_mutex_init(&t->mu, NULL) != 0) {
    bw_free(t);
    bw_free(name);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  /* Summaries are timed from creation; without a sink, no clock reading. */
  if (bw__summary_init(&t->summary,
                       cfg->sink != NULL ? bw__clock_now(clock) : 0) != 0) {
    pthread_mutex_destroy(&t->mu);
    bw_free(t);
    bw_free(name);
    bw_error_set(err, BW_E_NOMEM, "", "cannot create the throttle's lock");
    return NULL;
  }
  t->head.vt = &throttle_vt;
  t->name = name;
  t->k = cfg->k;
  t->nbuckets = cfg->buckets;
  t->window_ms = cfg->window_ms;
  t->seed = cfg->seed;
  t->bucket_ns = cfg->window_ms * BW_NS_PER_MS / (int64_t)cfg->buckets;
  t->clock = clock;
  t->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  t->sink = cfg->sink;
  bw_rand_seed(&t->rng, cfg->seed != 0 ? cfg->seed : bw_rand_os_seed());
  for (uint32_t i = 0; i < t->nbuckets; i++)
    t->ring[i].index = INT64_MIN;
  return t;
}

static void summarise_locked(bw_throttle_t *t, int64_t now);

void bw_throttle_free(bw_throttle_t *t) {
  if (t == NULL) return;
  if (t->sink != NULL) { /* the last summary: the clock and sink outlive us */
    int64_t now = bw__clock_now(t->clock);
    bw__summary_begin(&t->summary, now, true);
    summarise_locked(t, now);
    bw__summary_end(&t->summary, now);
  }
  bw__summary_destroy(&t->summary);
  pthread_mutex_destroy(&t->mu);
  bw_free(t->name);
  bw_free(t);
}

const char *bw_throttle_name(const bw_throttle_t *t) {
  return t == NULL ? "" : t->name;
}

bw_strategy_if_t *bw_throttle_strategy(bw_throttle_t *t) {
  return t == NULL ? NULL : &t->head;
}

int bw_throttle_set_k(bw_throttle_t *t, double k, bw_error_t *err) {
  if (t == NULL)
    return bw_error_set(err, BW_E_INVAL, "t", "t must not be NULL");
  if (!(k >= 1.0 && k <= 10.0)) /* NaN fails too; the rule of validate */
    return bw_error_set(err, BW_E_INVAL, "k", "k must be in [1, 10] (got %g)",
                        k);
  pthread_mutex_lock(&t->mu);
  t->k = k;
  pthread_mutex_unlock(&t->mu);
  bw_error_clear(err);
  return BW_OK;
}

void bw_throttle_config_of(const bw_throttle_t *t, bw_throttle_config_t *cfg) {
  if (t == NULL || cfg == NULL) return;
  bw_throttle_t *w = (bw_throttle_t *)t; /* the lock only */
  bw_throttle_config_init(cfg);
  cfg->name = t->name;
  pthread_mutex_lock(&w->mu);
  cfg->k = t->k;
  pthread_mutex_unlock(&w->mu);
  cfg->window_ms = t->window_ms;
  cfg->buckets = t->nbuckets;
  cfg->seed = t->seed;
  cfg->clock = t->clock;
  cfg->wall_clock = t->wall;
  cfg->sink = t->sink;
}

/* ---- the window (under mu) --------------------------------------------- */

static int64_t bucket_of(const bw_throttle_t *t, int64_t now_ns) {
  return bw__floor_div(now_ns, t->bucket_ns);
}

static uint32_t slot_of(const bw_throttle_t *t, int64_t index) {
  int64_t s = index % (int64_t)t->nbuckets;
  return (uint32_t)(s < 0 ? s + (int64_t)t->nbuckets : s);
}

/* The bucket of `index`, reset if its slot held an older one. A slot
 * already holding a newer bucket (a clock reading a whole window older than
 * another thread's, which a monotonic clock shared by the threads does not
 * give) is kept and counts the event: never erase newer counts. */
static bw__tbucket_t *bucket_at(bw_throttle_t *t, int64_t index) {
  bw__tbucket_t *b = &t->ring[slot_of(t, index)];
  if (b->index < index) { /* INT64_MIN (never used) is older than any */
    b->index = index;
    b->requests = 0;
    b->accepts = 0;
  }
  return b;
}

/* The window ending with bucket `cur`: the buckets cur - nbuckets + 1 ..
 * cur (a bucket from the future, after a clock reading older than another
 * thread's, counts too: it is at most a bucket ahead). */
static void window_sum(const bw_throttle_t *t, int64_t cur, uint64_t *req,
                       uint64_t *acc) {
  *req = 0;
  *acc = 0;
  for (uint32_t i = 0; i < t->nbuckets; i++) {
    const bw__tbucket_t *b = &t->ring[i];
    if (b->index != INT64_MIN && b->index > cur - (int64_t)t->nbuckets) {
      *req += b->requests;
      *acc += b->accepts;
    }
  }
}

static double probability_of(double k, uint64_t req, uint64_t acc) {
  double p = ((double)req - k * (double)acc) / ((double)req + 1.0);
  return p > 0.0 ? p : 0.0;
}

double bw_throttle_probability(const bw_throttle_t *t) {
  if (t == NULL) return 0.0;
  bw_throttle_t *w = (bw_throttle_t *)t; /* the lock only */
  uint64_t req, acc;
  double k;
  int64_t now = bw__clock_now(t->clock);
  pthread_mutex_lock(&w->mu);
  window_sum(t, bucket_of(t, now), &req, &acc);
  k = t->k;
  pthread_mutex_unlock(&w->mu);
  return probability_of(k, req, acc);
}

void bw_throttle_stats(const bw_throttle_t *t, bw_throttle_stats_t *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (t == NULL) return;
  bw_throttle_t *w = (bw_throttle_t *)t; /* the lock only */
  int64_t now = bw__clock_now(t->clock);
  double k;
  pthread_mutex_lock(&w->mu);
  out->requests = t->requests;
  out->accepts = t->accepts;
  out->rejected = t->rejected;
  out->throttled = t->throttled;
  out->withdrawn = t->withdrawn;
  window_sum(t, bucket_of(t, now), &out->window_requests, &out->window_accepts);
  k = t->k;
  pthread_mutex_unlock(&w->mu);
  out->probability =
      probability_of(k, out->window_requests, out->window_accepts);
}

/* ---- refusal summaries -------------------------------------------------- */

/* Emits the refusals since the last summary as one throttle_refused event,
 * with the window and the probability as they read now (the summary's lock
 * held; takes mu to read the counts). */
static void summarise_locked(bw_throttle_t *t, int64_t now) {
  uint64_t total, req, acc, n;
  double k, p;
  bw_field_t f[5];
  char reason[160];
  pthread_mutex_lock(&t->mu);
  total = t->throttled;
  window_sum(t, bucket_of(t, now), &req, &acc);
  k = t->k;
  pthread_mutex_unlock(&t->mu);
  n = bw__summary_take(&t->summary, 0, total);
  if (n == 0) return;
  p = probability_of(k, req, acc);
  f[0] = bw_field_uint("count", n);
  f[1] = bw_field_double("probability", p);
  f[2] = bw_field_uint("window_requests", req);
  f[3] = bw_field_uint("window_accepts", acc);
  f[4] = bw_field_double("k", k);
  snprintf(reason, sizeof(reason),
           "%llu requests refused locally (p %.3f: %llu requests, %llu "
           "accepts in the window, K %g)",
           (unsigned long long)n, p, (unsigned long long)req,
           (unsigned long long)acc, k);
  bw_event_emit(t->sink, t->wall, now, BW_EV_THROTTLE_REFUSED, t->name, reason,
                f, 5, NULL);
}

/* After a refusal was counted, with a sink: a summary when one is due (off
 * the admission path: a refusal with a sink only). */
static BW__NOINLINE void refused(bw_throttle_t *t, int64_t now) {
  if (!bw__summary_begin(&t->summary, now, false)) return;
  summarise_locked(t, now);
  bw__summary_end(&t->summary, now);
}

/* ---- the strategy ------------------------------------------------------- */

/* A request joins the window when its fate is known: at once when it is
 * refused here, at leave when it went out (an accept or a rejection). Calls
 * still in flight, or waiting for a slot further in, count nowhere: counted
 * at enter, a burst's own requests would read as rejections before the
 * first answer came back (the lab's burst of 1,600 was refused at 99 %),
 * while in the steady state the book describes the two counts differ only
 * by the calls in flight. The permit keeps what leave needs: generation
 * holds the attempts made before enter (an attempt went out since iff the
 * call's count is higher at leave). */
static int throttle_enter(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                          int64_t now_ns, bw_refusal_t *r) {
  bw_throttle_t *t = (bw_throttle_t *)s;
  int64_t cur = bucket_of(t, now_ns);
  uint64_t req, acc;
  bool refuse = false;
  pthread_mutex_lock(&t->mu);
  /* A draw only when p > 0, so a healthy partner's calls consume no
   * random numbers. */
  window_sum(t, cur, &req, &acc);
  double p = probability_of(t->k, req, acc);
  if (p > 0.0 && bw_rand_double(&t->rng) < p) refuse = true;
  t->requests++;
  if (refuse) {
    /* The book counts the requests refused locally too: they keep p up
     * while the partner accepts nothing. */
    bucket_at(t, cur)->requests++;
    t->throttled++;
  }
  pthread_mutex_unlock(&t->mu);
  if (refuse) {
    if (t->sink != NULL) refused(t, now_ns);
    /* The closest existing kind: a client-side limit on load, like a
     * limiter's. Not waited out: the point is to fail fast. */
    r->failure = BW_FAILURE_LIMIT;
    r->retry_in_ms = -1;
    return BW_E_FULL;
  }
  ctx->permit->start_ns = now_ns; /* for whoever reads permits; unused here */
  ctx->permit->generation = ctx->attempt;
  return BW_OK;
}

static void throttle_leave(bw_strategy_if_t *s, bw_strategy_ctx_t *ctx,
                           bw_outcome_t o) {
  bw_throttle_t *t = (bw_throttle_t *)s;
  bool sent = ctx->attempt > ctx->permit->generation;
  int64_t cur = bucket_of(t, bw__clock_now(t->clock));
  pthread_mutex_lock(&t->mu);
  if (o == BW_IGNORED && (!sent || ctx->cancelled)) {
    /* Never went out (a strategy further in refused, or the call was
     * cancelled before its attempt): the partner never saw it; not a
     * request of the window. Cancelled with its attempt out: the partner
     * saw it, but its answer is unknown, and counting it either way would
     * bias the ratio (an accept, as a 4xx is, hid a partner that sheds
     * load behind callers that give up first). */
    t->withdrawn++;
  } else {
    bw__tbucket_t *b = bucket_at(t, cur);
    b->requests++;
    if (o == BW_SUCCESS || o == BW_IGNORED) { /* IGNORED sent: a 4xx */
      b->accepts++;
      t->accepts++;
    } else {
      t->rejected++; /* FAILURE or TIMED_OUT: the partner shed it */
    }
  }
  pthread_mutex_unlock(&t->mu);
}

static const char *throttle_name(const bw_strategy_if_t *s) {
  return ((const bw_throttle_t *)s)->name;
}

static const bw_strategy_vtable_t throttle_vt = {"throttle", throttle_enter,
                                                 throttle_leave, throttle_name};

/* Backpressure stage: bounded queue + gauge + bounded work in flight, with a
 * pull API, a service-rate estimate and a notify hook for an outside runner
 * (the threads driver's thread pool, an event loop) (stage.h; docs/stage.md
 * has the formulas and the design choices).
 *
 * Locking: one mutex per stage guards its counters, the rate estimate and
 * every queue and gauge call (their own locks nest inside it and never call
 * out). The own pressure is also published as an atomic, so an upstream
 * stage reads the chain's effective pressure without taking any lock: no
 * stage ever holds two stage locks, so chains cannot deadlock. User code
 * (on_expired) runs with the lock released; the one exception is the notify
 * hook, which runs under the lock so that removing it is a barrier (once
 * bw_stage_set_notify(s, NULL, NULL) returns, it is not running), and which
 * may not call back into any stage. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "breakwater/stage.h"
#include "internal.h"

/* The regime changes one locked section can see (a section feeds the
 * gauge at most twice, and each feed moves it at most once); more would be
 * folded into the last (its `to` updated), never lost silently. */
#define BW__STAGE_CHANGES 4

struct bw_stage_s {
  pthread_mutex_t lock;
  bw_queue_t *q;
  bw_gauge_t *g;
  const bw_stage_t *next;
  const bw_clock_t *clock;
  bw_stage_expired_cb on_expired;
  void *userdata;
  char *name;
  _Atomic uint64_t pressure_bits; /* own pressure, a double's bits */
  uint32_t queue_size, concurrency, levels;
  uint32_t in_flight, max_in_flight;
  uint32_t ceiling[BW_REGIME__COUNT];
  uint64_t submitted, admitted, rej_ceiling, rej_full, shed, expired;
  uint64_t processed, failed, stale;
  /* Service rate: completions counted in windows of window_ns starting at
   * win_start; each closed window folds into an EWMA. */
  int64_t window_ns, win_start;
  uint64_t win_count;
  double alpha, rate;
  bool measured;
  int64_t min_retry_ms, max_retry_ms;
  double jitter;
  bw_rand_t rng;
  /* An outside runner's wake-up: called under the lock (see the top). */
  bw_stage_notify_fn notify;
  void *notify_userdata;
  /* Drops (refused, shed, expired), summarised at most once a second. */
  bw_sink_t *sink;
  const bw_clock_t *wall;
  int64_t sum_at;
  uint64_t sum_taken[4];
  /* Regime changes seen by the gauge's callback (under the lock), emitted
   * as stage_regime_changed once the lock is released (only with a sink:
   * a sink callback may then read the stage). */
  uint32_t changes_n;
  struct bw__stage_change_s {
    bw_regime_t from, to;
    double pressure;
    int64_t now;
  } changes[BW__STAGE_CHANGES];
};

/* A summary taken under the lock, emitted after it is dropped. */
typedef struct bw__stage_sum_s {
  uint64_t d[4]; /* rejected_ceiling, rejected_full, shed, expired */
  int64_t now;
} bw__stage_sum_t;

/* Under the lock: true (and *x filled) when drops since the last summary
 * are to be reported now: a second has passed since it, or force. */
static bool bw__stage_sum_due(bw_stage_t *s, int64_t now, bool force,
                              bw__stage_sum_t *x) {
  const uint64_t tot[4] = {s->rej_ceiling, s->rej_full, s->shed, s->expired};
  uint64_t any = 0;
  if (s->sink == NULL) return false;
  if (!force && now - s->sum_at < BW_NS_PER_S) return false;
  s->sum_at = now;
  for (int i = 0; i < 4; i++) {
    x->d[i] = tot[i] - s->sum_taken[i];
    s->sum_taken[i] = tot[i];
    any |= x->d[i];
  }
  x->now = now;
  return any != 0;
}

static void bw__stage_sum_emit(const bw_stage_t *s, const bw__stage_sum_t *x) {
  static const char *const keys[4] = {"rejected_ceiling", "rejected_full",
                                      "shed", "expired"};
  bw_field_t f[5];
  char reason[192];
  uint64_t n = x->d[0] + x->d[1] + x->d[2] + x->d[3];
  f[0] = bw_field_uint("count", n);
  for (int i = 0; i < 4; i++) {
    f[i + 1] = bw_field_uint(keys[i], x->d[i]);
  }
  snprintf(reason, sizeof(reason),
           "%llu items dropped: %llu refused above the regime's ceiling, "
           "%llu refused with the queue full, %llu shed, %llu expired",
           (unsigned long long)n, (unsigned long long)x->d[0],
           (unsigned long long)x->d[1], (unsigned long long)x->d[2],
           (unsigned long long)x->d[3]);
  bw_event_emit(s->sink, s->wall, x->now, BW_EV_STAGE_DROPPED, s->name, reason,
                f, 5, NULL);
}

/* Regime changes taken under the lock, emitted after it is dropped. */
typedef struct bw__stage_changes_s {
  uint32_t n;
  struct bw__stage_change_s c[BW__STAGE_CHANGES];
} bw__stage_changes_t;

/* The gauge's on_change (installed only with a sink): called under the
 * gauge's lock, itself under the stage's; records the change. */
static void bw__stage_on_regime(const char *name, bw_regime_t from,
                                bw_regime_t to, double pressure, int64_t now,
                                void *userdata) {
  bw_stage_t *s = userdata;
  struct bw__stage_change_s *c;
  (void)name;
  if (s->changes_n == BW__STAGE_CHANGES) {
    c = &s->changes[BW__STAGE_CHANGES - 1]; /* fold into the last */
    c->to = to;
  } else {
    c = &s->changes[s->changes_n++];
    c->from = from;
    c->to = to;
  }
  c->pressure = pressure;
  c->now = now;
}

/* Under the lock: moves the recorded changes to *out. */
static void bw__stage_take_changes(bw_stage_t *s, bw__stage_changes_t *out) {
  out->n = s->changes_n;
  if (out->n > 0) memcpy(out->c, s->changes, out->n * sizeof(out->c[0]));
  s->changes_n = 0;
}

/* After the lock: one stage_regime_changed event per change, in order. */
static void bw__stage_emit_changes(const bw_stage_t *s,
                                   const bw__stage_changes_t *x) {
  for (uint32_t i = 0; i < x->n; i++) {
    const struct bw__stage_change_s *c = &x->c[i];
    bw_field_t f[3];
    char reason[128];
    f[0] = bw_field_str("from", bw_regime_name(c->from));
    f[1] = bw_field_str("to", bw_regime_name(c->to));
    f[2] = bw_field_double("pressure", c->pressure);
    snprintf(reason, sizeof(reason),
             "regime %s -> %s at effective pressure %.3f",
             bw_regime_name(c->from), bw_regime_name(c->to), c->pressure);
    bw_event_emit(s->sink, s->wall, c->now, BW_EV_STAGE_REGIME_CHANGED, s->name,
                  reason, f, 3, NULL);
  }
}

const char *bw_edge_name(bw_edge_t e) {
  switch (e) {
  case BW_EDGE_ACCEPT:
    return "accept";
  case BW_EDGE_WARN:
    return "warn";
  case BW_EDGE_REFUSE:
    return "refuse";
  default:
    return "unknown";
  }
}

void bw_stage_config_init(bw_stage_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "stage";
  cfg->queue_size = 0;
  cfg->policy = BW_QUEUE_REJECT;
  cfg->priority_levels = 256;
  cfg->concurrency = 1;
  bw_gauge_config_init(&cfg->gauge);
  cfg->rate_window_ms = 1000;
  cfg->rate_alpha = 0.5;
  cfg->min_retry_after_ms = 1;
  cfg->max_retry_after_ms = 30000;
  cfg->retry_jitter = 0.0;
  cfg->seed = 0;
}

/* dst = a "." b, truncated to size (a is short). */
static void bw__join(char *dst, size_t size, const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la + 2 > size) la = size - 2;
  memcpy(dst, a, la);
  dst[la] = '.';
  if (lb > size - la - 2) lb = size - la - 2;
  memcpy(dst + la + 1, b, lb);
  dst[la + 1 + lb] = '\0';
}

/* Copies a sub-object's error, prefixing the field with the sub-object's
 * name ("gauge.degraded_at"), so the caller knows where to look. */
static int bw__prefixed(bw_error_t *err, const bw_error_t *sub,
                        const char *prefix) {
  if (err == NULL) return sub->code;
  err->code = sub->code;
  bw__join(err->field, sizeof(err->field), prefix, sub->field);
  bw__join(err->message, sizeof(err->message), prefix, sub->message);
  return sub->code;
}

int bw_stage_config_validate(const bw_stage_config_t *c, bw_error_t *err) {
  bw_queue_config_t qc;
  bw_gauge_config_t gc;
  bw_error_t sub;
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (c->name == NULL || c->name[0] == '\0')
    return bw_error_set(err, BW_E_INVAL, "name", "name must not be empty");
  if (strlen(c->name) > BW_NAME_MAX)
    return bw_error_set(err, BW_E_INVAL, "name",
                        "name must be at most %d bytes (got %zu)", BW_NAME_MAX,
                        strlen(c->name));
  /* The queue's own rules, reported under the stage's field names. */
  bw_queue_config_init(&qc);
  qc.name = c->name;
  qc.max_size = c->queue_size;
  qc.policy = c->policy;
  qc.priority_levels = c->priority_levels;
  if (bw_queue_config_validate(&qc, &sub) != BW_OK) {
    if (strcmp(sub.field, "max_size") == 0) {
      return bw_error_set(err, BW_E_INVAL, "queue_size",
                          "queue_size must be in [1, %u] (got %u)",
                          BW_QUEUE_MAX_SIZE, c->queue_size);
    }
    return bw_error_set(err, sub.code, sub.field, "%s", sub.message);
  }
  if (c->concurrency < 1 || c->concurrency > BW_STAGE_MAX_CONCURRENCY)
    return bw_error_set(err, BW_E_INVAL, "concurrency",
                        "concurrency must be in [1, %u] (got %u)",
                        BW_STAGE_MAX_CONCURRENCY, c->concurrency);
  gc = c->gauge;
  gc.name = c->name;
  if (bw_gauge_config_validate(&gc, &sub) != BW_OK)
    return bw__prefixed(err, &sub, "gauge");
  if (c->rate_window_ms < 1 || c->rate_window_ms > INT64_MAX / BW_NS_PER_MS)
    return bw_error_set(err, BW_E_INVAL, "rate_window_ms",
                        "rate_window_ms must be >= 1 (got %lld)",
                        (long long)c->rate_window_ms);
  if (!(c->rate_alpha > 0.0 && c->rate_alpha <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "rate_alpha",
                        "rate_alpha must be in (0, 1] (got %g)", c->rate_alpha);
  if (c->min_retry_after_ms < 1)
    return bw_error_set(err, BW_E_INVAL, "min_retry_after_ms",
                        "min_retry_after_ms must be >= 1 (got %lld)",
                        (long long)c->min_retry_after_ms);
  if (c->max_retry_after_ms < c->min_retry_after_ms ||
      c->max_retry_after_ms > INT64_MAX / 4)
    return bw_error_set(
        err, BW_E_INVAL, "max_retry_after_ms",
        "max_retry_after_ms must be >= min_retry_after_ms (got %lld < %lld)",
        (long long)c->max_retry_after_ms, (long long)c->min_retry_after_ms);
  if (!(c->retry_jitter >= 0.0 && c->retry_jitter <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "retry_jitter",
                        "retry_jitter must be in [0, 1] (got %g)",
                        c->retry_jitter);
  bw_error_clear(err);
  return BW_OK;
}

bw_stage_t *bw_stage_new(const bw_stage_config_t *cfg, bw_error_t *err) {
  bw_stage_t *s;
  bw_queue_config_t qc;
  bw_gauge_config_t gc;
  if (bw_stage_config_validate(cfg, err) != BW_OK) return NULL;
  s = bw_calloc(1, sizeof(*s));
  if (s == NULL) goto nomem;
  s->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  s->name = bw_strdup(cfg->name);
  if (s->name == NULL) goto nomem;
  bw_queue_config_init(&qc);
  qc.name = cfg->name;
  qc.max_size = cfg->queue_size;
  qc.policy = cfg->policy;
  qc.priority_levels = cfg->priority_levels;
  qc.clock = s->clock;
  qc.on_expired = NULL; /* the stage counts and hands them on itself */
  s->q = bw_queue_new(&qc, NULL);
  if (s->q == NULL) goto nomem;
  gc = cfg->gauge;
  gc.name = cfg->name;
  gc.clock = s->clock;
  /* The stage reports its own regime changes (stage_regime_changed, with
   * its sink); the gauge's on_change is the stage's. */
  gc.on_change = cfg->sink != NULL ? bw__stage_on_regime : NULL;
  gc.userdata = cfg->sink != NULL ? s : NULL;
  s->g = bw_gauge_new(&gc, NULL);
  if (s->g == NULL) goto nomem;
  if (pthread_mutex_init(&s->lock, NULL) != 0) goto nomem;
  s->next = cfg->next;
  s->on_expired = cfg->on_expired;
  s->userdata = cfg->userdata;
  s->queue_size = cfg->queue_size;
  s->concurrency = cfg->concurrency;
  s->levels = cfg->priority_levels;
  memcpy(s->ceiling, cfg->gauge.ceiling, sizeof(s->ceiling));
  s->window_ns = cfg->rate_window_ms * BW_NS_PER_MS;
  s->win_start = bw__clock_now(s->clock);
  s->sink = cfg->sink;
  s->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  s->sum_at = s->win_start;
  s->alpha = cfg->rate_alpha;
  s->min_retry_ms = cfg->min_retry_after_ms;
  s->max_retry_ms = cfg->max_retry_after_ms;
  s->jitter = cfg->retry_jitter;
  bw_rand_seed(&s->rng, cfg->seed);
  atomic_init(&s->pressure_bits, 0);
  bw_error_clear(err);
  return s;
nomem:
  if (s != NULL) {
    bw_gauge_free(s->g);
    bw_queue_free(s->q);
    bw_free(s->name);
    bw_free(s);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating stage \"%s\"",
               cfg->name);
  return NULL;
}

void bw_stage_free(bw_stage_t *s) {
  bw__stage_sum_t x;
  if (s == NULL) return;
  /* The last summary: the clocks and sink outlive the stage. */
  if (s->sink != NULL &&
      bw__stage_sum_due(s, bw__clock_now(s->clock), true, &x))
    bw__stage_sum_emit(s, &x);
  pthread_mutex_destroy(&s->lock);
  bw_gauge_free(s->g);
  bw_queue_free(s->q);
  bw_free(s->name);
  bw_free(s);
}

/* ---- pressure ----------------------------------------------------------- */

static double bw__load_pressure(const bw_stage_t *s) {
  uint64_t bits = atomic_load_explicit(
      &((bw_stage_t *)(uintptr_t)s)->pressure_bits, memory_order_acquire);
  double p;
  memcpy(&p, &bits, sizeof(p));
  return p;
}

/* Under s->lock, after every change of queued or in flight. */
static double bw__publish(bw_stage_t *s) {
  uint64_t bits;
  double p = (double)(bw_queue_size(s->q) + s->in_flight) /
             (double)((uint64_t)s->queue_size + s->concurrency);
  memcpy(&bits, &p, sizeof(bits));
  atomic_store_explicit(&s->pressure_bits, bits, memory_order_release);
  return p;
}

double bw_stage_pressure(const bw_stage_t *s) {
  if (s == NULL) return 0.0;
  return bw__load_pressure(s);
}

double bw_stage_effective_pressure(const bw_stage_t *s) {
  double p = 0.0;
  for (; s != NULL; s = s->next) {
    double own = bw__load_pressure(s);
    if (own > p) p = own;
  }
  return p;
}

/* Feeds the gauge (under s->lock) and returns the regime. */
static bw_regime_t bw__feed(bw_stage_t *s, double *eff) {
  double p = bw__load_pressure(s);
  double down = bw_stage_effective_pressure(s->next);
  if (down > p) p = down;
  if (eff != NULL) *eff = p;
  return (bw_regime_t)bw_gauge_update(s->g, p);
}

/* ---- service rate --------------------------------------------------------
 * Closes every window that ended by `now`. State only changes inside calls
 * and every call folds first, so the backlog seen here held unchanged since
 * the last call (made in the current window): the windows after the first
 * were either all busy (backlog > 0: they completed nothing, a zero sample
 * each) or all idle (not counted: an idle stage is not a slow one). */
static void bw__fold(bw_stage_t *s, int64_t now) {
  int64_t k;
  bool busy;
  double sample;
  if (now - s->win_start < s->window_ns) return;
  k = (now - s->win_start) / s->window_ns;
  busy = bw_queue_size(s->q) + s->in_flight > 0;
  if (s->win_count > 0 || busy) {
    sample = (double)s->win_count * 1000.0 /
             ((double)s->window_ns / (double)BW_NS_PER_MS);
    s->rate =
        s->measured ? s->alpha * sample + (1.0 - s->alpha) * s->rate : sample;
    s->measured = true;
    if (busy && k > 1) s->rate *= pow(1.0 - s->alpha, (double)(k - 1));
  }
  s->win_count = 0;
  s->win_start += k * s->window_ns;
}

/* The un-jittered wait of one stage (under its lock): the time its measured
 * rate needs to complete the backlog beyond what it can hold in flight. */
static int64_t bw__base_retry(const bw_stage_t *s) {
  int64_t backlog = (int64_t)bw_queue_size(s->q) + s->in_flight;
  int64_t excess = backlog - (int64_t)s->concurrency;
  double ms;
  if (excess < 1) excess = 1;
  if (!s->measured || !(s->rate > 0.0)) return s->max_retry_ms;
  ms = ceil((double)excess * 1000.0 / s->rate);
  if (!(ms < (double)s->max_retry_ms)) return s->max_retry_ms;
  if (ms < (double)s->min_retry_ms) return s->min_retry_ms;
  return (int64_t)ms;
}

/* The wait a refusal carries: the largest base wait along the chain among
 * this stage and every downstream stage that has a backlog, plus seeded
 * jitter. Takes each stage's lock in turn (never two at once). */
static int64_t bw__retry_after(bw_stage_t *s) {
  int64_t ms, extra;
  const bw_stage_t *d;
  pthread_mutex_lock(&s->lock);
  bw__fold(s, bw__clock_now(s->clock));
  ms = bw__base_retry(s);
  pthread_mutex_unlock(&s->lock);
  for (d = s->next; d != NULL; d = d->next) {
    bw_stage_t *m = (bw_stage_t *)(uintptr_t)d;
    int64_t b = 0;
    pthread_mutex_lock(&m->lock);
    bw__fold(m, bw__clock_now(m->clock));
    if (bw_queue_size(m->q) + m->in_flight > 0) b = bw__base_retry(m);
    pthread_mutex_unlock(&m->lock);
    if (b > ms) ms = b;
  }
  if (s->jitter > 0.0) {
    pthread_mutex_lock(&s->lock);
    extra = (int64_t)floor(bw_rand_double(&s->rng) * s->jitter * (double)ms);
    pthread_mutex_unlock(&s->lock);
    ms = ms + extra > s->max_retry_ms ? s->max_retry_ms : ms + extra;
    if (ms < 1) ms = 1;
  }
  return ms;
}

int64_t bw_stage_retry_after_ms(bw_stage_t *s) {
  if (s == NULL) return 0;
  return bw__retry_after(s);
}

double bw_stage_service_rate(bw_stage_t *s) {
  double r;
  if (s == NULL) return 0.0;
  pthread_mutex_lock(&s->lock);
  bw__fold(s, bw__clock_now(s->clock));
  r = s->measured ? s->rate : 0.0;
  pthread_mutex_unlock(&s->lock);
  return r;
}

bw_regime_t bw_stage_regime(bw_stage_t *s) {
  bw_regime_t r;
  if (s == NULL) return BW_REGIME_NORMAL;
  bw__stage_changes_t ch;
  pthread_mutex_lock(&s->lock);
  r = bw__feed(s, NULL);
  bw__stage_take_changes(s, &ch);
  pthread_mutex_unlock(&s->lock);
  bw__stage_emit_changes(s, &ch);
  return r;
}

const char *bw_stage_name(const bw_stage_t *s) {
  return s == NULL ? "" : s->name;
}

/* ---- verbs -------------------------------------------------------------- */

int bw_stage_submit(bw_stage_t *s, void *data, uint32_t priority,
                    int64_t deadline_ns, bw_stage_result_t *res) {
  int rc;
  double eff;
  bw_regime_t regime;
  bw__stage_sum_t x;
  bw__stage_changes_t ch;
  bool due = false;
  int64_t now;
  if (s == NULL || res == NULL) return BW_E_INVAL;
  if (priority >= s->levels) return BW_E_RANGE;
  memset(res, 0, sizeof(*res));
  pthread_mutex_lock(&s->lock);
  now = bw__clock_now(s->clock);
  bw__fold(s, now);
  s->submitted++;
  regime = bw__feed(s, &eff);
  if (priority > s->ceiling[regime]) {
    s->rej_ceiling++;
    rc = BW_QUEUE_REJECTED;
    res->reason = BW_STAGE_REFUSAL_CEILING;
  } else {
    rc = bw_queue_enqueue(s->q, data, priority, deadline_ns, &res->dropped);
    if (rc == BW_QUEUE_REJECTED) {
      s->rej_full++;
      res->reason = BW_STAGE_REFUSAL_FULL;
    } else {
      s->admitted++;
      if (rc == BW_QUEUE_SHED) s->shed++;
      bw__publish(s);
      (void)bw__feed(s, NULL);
      if (s->notify != NULL) s->notify(s, s->notify_userdata);
    }
  }
  if (rc == BW_QUEUE_REJECTED || rc == BW_QUEUE_SHED)
    due = bw__stage_sum_due(s, now, false, &x);
  bw__stage_take_changes(s, &ch);
  pthread_mutex_unlock(&s->lock);
  bw__stage_emit_changes(s, &ch);
  if (due) bw__stage_sum_emit(s, &x);
  res->outcome = rc;
  res->regime = regime;
  res->pressure = eff;
  if (rc == BW_QUEUE_REJECTED) {
    res->edge = BW_EDGE_REFUSE;
    res->retry_after_ms = bw__retry_after(s);
  } else {
    res->edge = regime == BW_REGIME_NORMAL ? BW_EDGE_ACCEPT : BW_EDGE_WARN;
  }
  return rc;
}

int bw_stage_next(bw_stage_t *s, bw_stage_item_t *out) {
  bw_queue_item_t qi;
  int64_t now;
  int rc;
  bool dropped = false, due = false;
  bw__stage_sum_t x;
  bw__stage_changes_t ch;
  if (s == NULL || out == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    now = bw__clock_now(s->clock);
    bw__fold(s, now);
    if (s->in_flight >= s->concurrency) {
      rc = BW_E_FULL;
      break;
    }
    rc = bw_queue_dequeue(s->q, &qi);
    if (rc == BW_E_NOTFOUND) break;
    if (rc == BW_E_DEADLINE) {
      s->expired++;
      dropped = true;
      bw__publish(s);
      (void)bw__feed(s, NULL);
      if (s->on_expired == NULL) {
        memset(out, 0, sizeof(*out));
        out->data = qi.data;
        out->priority = qi.priority;
        out->deadline_ns = qi.deadline_ns;
        out->seq = qi.seq;
        break;
      }
      bw__stage_take_changes(s, &ch);
      pthread_mutex_unlock(&s->lock);
      bw__stage_emit_changes(s, &ch);
      s->on_expired(&qi, bw__clock_now(s->clock), s->userdata);
      pthread_mutex_lock(&s->lock);
      continue;
    }
    /* BW_OK: in flight now. */
    s->in_flight++;
    if (s->in_flight > s->max_in_flight) s->max_in_flight = s->in_flight;
    bw__publish(s);
    (void)bw__feed(s, NULL);
    memset(out, 0, sizeof(*out));
    out->data = qi.data;
    out->priority = qi.priority;
    out->deadline_ns = qi.deadline_ns;
    out->seq = qi.seq;
    out->start_ns = now;
    break;
  }
  if (dropped) due = bw__stage_sum_due(s, now, false, &x);
  bw__stage_take_changes(s, &ch);
  pthread_mutex_unlock(&s->lock);
  bw__stage_emit_changes(s, &ch);
  if (due) bw__stage_sum_emit(s, &x);
  return rc;
}

int bw_stage_done(bw_stage_t *s, const bw_stage_item_t *item,
                  bw_stage_outcome_t outcome) {
  int64_t now;
  bw__stage_changes_t ch;
  if (s == NULL || item == NULL) return BW_E_INVAL;
  if (outcome != BW_STAGE_PROCESSED && outcome != BW_STAGE_FAILED)
    return BW_E_INVAL;
  pthread_mutex_lock(&s->lock);
  if (s->in_flight == 0) {
    pthread_mutex_unlock(&s->lock);
    return BW_E_INVAL;
  }
  now = bw__clock_now(s->clock);
  bw__fold(s, now);
  s->in_flight--;
  if (outcome == BW_STAGE_PROCESSED)
    s->processed++;
  else
    s->failed++;
  if (item->deadline_ns != BW_QUEUE_NO_DEADLINE && now >= item->deadline_ns)
    s->stale++;
  s->win_count++;
  bw__publish(s);
  (void)bw__feed(s, NULL);
  if (s->notify != NULL) s->notify(s, s->notify_userdata);
  bw__stage_take_changes(s, &ch);
  pthread_mutex_unlock(&s->lock);
  bw__stage_emit_changes(s, &ch);
  return BW_OK;
}

void bw_stage_stats(bw_stage_t *s, bw_stage_stats_t *out) {
  bw_queue_stats_t qs;
  bw_gauge_stats_t gs;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (s == NULL) return;
  pthread_mutex_lock(&s->lock);
  bw__fold(s, bw__clock_now(s->clock));
  bw_queue_stats(s->q, &qs);
  bw_gauge_stats(s->g, &gs);
  out->submitted = s->submitted;
  out->admitted = s->admitted;
  out->rejected_ceiling = s->rej_ceiling;
  out->rejected_full = s->rej_full;
  out->rejected = s->rej_ceiling + s->rej_full;
  out->shed = s->shed;
  out->expired = s->expired;
  out->processed = s->processed;
  out->failed = s->failed;
  out->stale = s->stale;
  out->queued = qs.size;
  out->in_flight = s->in_flight;
  out->max_queue_seen = qs.max_size_seen;
  out->max_in_flight_seen = s->max_in_flight;
  out->regime = gs.regime;
  out->pressure = bw__load_pressure(s);
  out->effective_pressure = bw_stage_effective_pressure(s);
  out->service_rate = s->measured ? s->rate : 0.0;
  out->rate_measured = s->measured;
  for (int i = 0; i < BW_REGIME__COUNT; i++)
    out->time_in_regime_ns[i] = gs.time_in_regime_ns[i];
  out->transitions = gs.transitions;
  pthread_mutex_unlock(&s->lock);
}

/* ---- batch producer ----------------------------------------------------- */

void bw_batch_config_init(bw_batch_config_t *cfg) {
  if (cfg == NULL) return;
  cfg->chunk_size = 100;
  cfg->degraded_fraction = 0.25;
}

int bw_batch_config_validate(const bw_batch_config_t *c, bw_error_t *err) {
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (c->chunk_size < 1)
    return bw_error_set(err, BW_E_INVAL, "chunk_size",
                        "chunk_size must be >= 1 (got %u)", c->chunk_size);
  if (!(c->degraded_fraction > 0.0 && c->degraded_fraction <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "degraded_fraction",
                        "degraded_fraction must be in (0, 1] (got %g)",
                        c->degraded_fraction);
  bw_error_clear(err);
  return BW_OK;
}

int bw_stage_batch_plan(bw_stage_t *s, const bw_batch_config_t *cfg,
                        bw_batch_plan_t *out, bw_error_t *err) {
  bw_regime_t r;
  double n;
  if (s == NULL || out == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "stage and out must not be NULL");
  if (bw_batch_config_validate(cfg, err) != BW_OK) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  r = bw_stage_regime(s);
  out->regime = r;
  switch (r) {
  case BW_REGIME_NORMAL:
    out->chunk = cfg->chunk_size;
    break;
  case BW_REGIME_DEGRADED:
    n = floor((double)cfg->chunk_size * cfg->degraded_fraction);
    out->chunk = n < 1.0 ? 1u : (uint32_t)n;
    break;
  default:
    out->chunk = 0;
    out->wait_ms = bw__retry_after(s);
    break;
  }
  return BW_OK;
}

/* ---- an outside runner ------------------------------------------------- */

int bw_stage_set_notify(bw_stage_t *s, bw_stage_notify_fn fn, void *userdata) {
  int rc = BW_OK;
  if (s == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&s->lock);
  if (fn == NULL) {
    s->notify = NULL;
    s->notify_userdata = NULL;
  } else if (s->notify != NULL) {
    rc = BW_E_FULL; /* one per stage */
  } else {
    s->notify = fn;
    s->notify_userdata = userdata;
  }
  pthread_mutex_unlock(&s->lock);
  return rc;
}

bool bw_stage_has_on_expired(const bw_stage_t *s) {
  return s != NULL && s->on_expired != NULL; /* fixed at creation */
}

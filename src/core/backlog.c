/* Pressure over a durable queue (backlog.h): a gauge fed by a queue
 * store's depth, read at most every refresh_ms. */
#include "breakwater/backlog.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct bw_backlog_s {
  pthread_mutex_t lock;
  bw_queue_store_t *store;
  bw_gauge_t *gauge;
  const bw_clock_t *clock;
  int64_t refresh_ns;
  /* under lock */
  bool have_reading;
  int64_t read_at_ns;
  uint64_t depth;
  uint32_t max_size;
  double pressure;
  uint64_t reads, read_errors, accepted, warned, refused;
};

void bw_backlog_config_init(bw_backlog_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "backlog";
  bw_gauge_config_init(&cfg->gauge);
  cfg->refresh_ms = 1000;
}

int bw_backlog_config_validate(const bw_backlog_config_t *c, bw_error_t *err) {
  bw_gauge_config_t gc;
  bw_error_t sub;
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (c->store == NULL)
    return bw_error_set(err, BW_E_INVAL, "store",
                        "store must be a queue store (got NULL)");
  if (c->refresh_ms < 0 || c->refresh_ms > INT64_MAX / BW_NS_PER_MS)
    return bw_error_set(err, BW_E_INVAL, "refresh_ms",
                        "refresh_ms must be >= 0 (got %lld)",
                        (long long)c->refresh_ms);
  gc = c->gauge;
  gc.name = c->name;
  if (bw_gauge_config_validate(&gc, &sub) != BW_OK) {
    if (err != NULL) {
      err->code = sub.code;
      snprintf(err->field, sizeof(err->field), "gauge.%.40s", sub.field);
      snprintf(err->message, sizeof(err->message), "gauge.%.200s", sub.message);
    }
    return sub.code;
  }
  return BW_OK;
}

bw_backlog_t *bw_backlog_new(const bw_backlog_config_t *cfg, bw_error_t *err) {
  bw_gauge_config_t gc;
  bw_backlog_t *b;
  if (bw_backlog_config_validate(cfg, err) != BW_OK) return NULL;
  b = bw_calloc(1, sizeof(*b));
  if (b == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  b->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  gc = cfg->gauge;
  gc.name = cfg->name;
  gc.clock = b->clock;
  gc.wall_clock = cfg->wall_clock;
  gc.sink = cfg->sink;
  b->gauge = bw_gauge_new(&gc, err);
  if (b->gauge == NULL) {
    bw_free(b);
    return NULL;
  }
  if (pthread_mutex_init(&b->lock, NULL) != 0) {
    bw_gauge_free(b->gauge);
    bw_free(b);
    bw_error_set(err, BW_E_NOMEM, "", "cannot create a mutex");
    return NULL;
  }
  b->store = cfg->store;
  b->refresh_ns = cfg->refresh_ms * BW_NS_PER_MS;
  return b;
}

/* Under lock: one depth query, fed to the gauge when it succeeds. */
static int bw__backlog_read(bw_backlog_t *b, int64_t now) {
  bw_queue_store_stats_t st;
  int rc = bw_queue_store_stats(b->store, &st);
  b->reads++;
  if (rc != BW_OK) {
    b->read_errors++;
    return rc;
  }
  b->have_reading = true;
  b->read_at_ns = now;
  b->depth = st.depth;
  b->max_size = st.max_size;
  /* Not st.fill: computed here from the two counts, so a backend that
   * rounds its fill cannot move a threshold. A depth above max_size (a
   * guard lowered under a full queue) reads above 1, which the gauge
   * accepts. */
  b->pressure = st.max_size > 0 ? (double)st.depth / (double)st.max_size : 0;
  bw_gauge_update(b->gauge, b->pressure);
  return BW_OK;
}

int bw_backlog_refresh(bw_backlog_t *b) {
  int rc;
  if (b == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&b->lock);
  rc = bw__backlog_read(b, bw_clock_now(b->clock));
  pthread_mutex_unlock(&b->lock);
  return rc;
}

int bw_backlog_admit(bw_backlog_t *b, uint32_t priority,
                     bw_backlog_answer_t *out) {
  int rc = BW_OK;
  int64_t now;
  if (b == NULL || out == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&b->lock);
  now = bw_clock_now(b->clock);
  if (!b->have_reading || now - b->read_at_ns >= b->refresh_ns)
    rc = bw__backlog_read(b, now);
  out->regime = bw_gauge_regime(b->gauge);
  out->pressure = b->pressure;
  out->depth = b->depth;
  out->max_size = b->max_size;
  out->read_at_ns = b->read_at_ns;
  if (!bw_gauge_admits(b->gauge, priority)) {
    out->edge = BW_EDGE_REFUSE;
    b->refused++;
  } else if (out->regime != BW_REGIME_NORMAL) {
    out->edge = BW_EDGE_WARN;
    b->warned++;
  } else {
    out->edge = BW_EDGE_ACCEPT;
    b->accepted++;
  }
  pthread_mutex_unlock(&b->lock);
  return rc;
}

bw_gauge_t *bw_backlog_gauge(const bw_backlog_t *b) {
  return b != NULL ? b->gauge : NULL;
}

void bw_backlog_stats(const bw_backlog_t *cb, bw_backlog_stats_t *out) {
  bw_backlog_t *b = (bw_backlog_t *)cb; /* the lock is not part of the value */
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (b == NULL) return;
  pthread_mutex_lock(&b->lock);
  out->reads = b->reads;
  out->read_errors = b->read_errors;
  out->accepted = b->accepted;
  out->warned = b->warned;
  out->refused = b->refused;
  out->admits = b->accepted + b->warned + b->refused;
  out->depth = b->depth;
  out->max_size = b->max_size;
  out->pressure = b->pressure;
  out->regime = bw_gauge_regime(b->gauge);
  pthread_mutex_unlock(&b->lock);
}

void bw_backlog_free(bw_backlog_t *b) {
  if (b == NULL) return;
  pthread_mutex_destroy(&b->lock);
  bw_gauge_free(b->gauge);
  bw_free(b);
}

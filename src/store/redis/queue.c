/* breakwater_redis — the asyncio toolkit's queue guard (LLEN + RPUSH in one
 * script, a dead-letter list on overflow, a warning at warn_threshold), a
 * processing list per consumer with acknowledgements, and idempotency records.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "redis_internal.h"

/* ---- queue guard ----------------------------------------------------------
 */

/* KEYS: queue, dlq, warned flag. ARGV: max_size, payload, warn_at, name,
 * dlq_max. Returns {admitted (0/1), size after, warn (0/1), DLQ entries
 * dropped past dlq_max}. */
static const char bw__rq_enqueue_lua[] =
    "local size = redis.call('LLEN', KEYS[1])\n"
    "local max = tonumber(ARGV[1])\n"
    "if size >= max then\n"
    "  local t = redis.call('TIME')\n"
    "  local ts = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "  local n = redis.call('RPUSH', KEYS[2], cjson.encode({payload = "
    "ARGV[2], reason = 'queue_full', error = ARGV[4] .. ' reached ' .. max "
    ".. ' items', ts_ms = ts}))\n"
    "  local cap, dropped = tonumber(ARGV[5]), 0\n"
    "  if n > cap then\n"
    "    redis.call('LTRIM', KEYS[2], n - cap, -1)\n"
    "    dropped = n - cap\n"
    "  end\n"
    "  return {0, size, 0, dropped}\n"
    "end\n"
    "size = redis.call('RPUSH', KEYS[1], ARGV[2])\n"
    "local warn = 0\n"
    "if size >= tonumber(ARGV[3]) and redis.call('SET', KEYS[3], '1', 'NX') "
    "then warn = 1 end\n"
    "return {1, size, warn, 0}\n";

/* KEYS: queue, processing, warned. ARGV: rearm_below (the warning re-arms
 * below it). The item or nil. */
static const char bw__rq_dequeue_lua[] =
    "local v = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')\n"
    "if not v then return false end\n"
    "if redis.call('LLEN', KEYS[1]) < tonumber(ARGV[1]) then\n"
    "  redis.call('DEL', KEYS[3])\n"
    "end\n"
    "return v\n";

/* KEYS: queue, processing, warned. ARGV: warn_at. {moved, size, warn}. */
static const char bw__rq_recover_lua[] =
    "local n = 0\n"
    "while redis.call('LMOVE', KEYS[2], KEYS[1], 'RIGHT', 'LEFT') do\n"
    "  n = n + 1\n"
    "end\n"
    "local size = redis.call('LLEN', KEYS[1])\n"
    "local warn = 0\n"
    "if n > 0 and size >= tonumber(ARGV[1]) and "
    "redis.call('SET', KEYS[3], '1', 'NX') then warn = 1 end\n"
    "return {n, size, warn}\n";

static const char *const bw__rq_scripts[] = {
    bw__rq_enqueue_lua, bw__rq_dequeue_lua, bw__rq_recover_lua};

struct bw_redis_queue_s {
  bw__rclient_t cl;
  char *k_queue, *k_dlq, *k_warned, *k_proc;
  uint32_t max_size;
  uint32_t warn_at, rearm_below, dlq_max;
  char a_max[16], a_warn[16], a_rearm[16], a_dlqmax[16];
  _Atomic uint64_t admitted, dead_lettered, warnings, dequeued, acked,
      recovered, dlq_dropped;
};

void bw_redis_queue_config_init(bw_redis_queue_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  bw_redis_config_init(&cfg->redis);
  cfg->name = "queue";
  cfg->max_size = 100;
  cfg->warn_threshold = 0.7;
  cfg->warn_rearm_threshold = 0.6;
  cfg->dlq_max = 10000;
}

void bw_redis_queue_free(bw_redis_queue_t *q) {
  if (q == NULL) return;
  bw__rcl_destroy(&q->cl);
  bw_free(q->k_queue);
  bw_free(q->k_dlq);
  bw_free(q->k_warned);
  bw_free(q->k_proc);
  bw_free(q);
}

bw_redis_queue_t *bw_redis_queue_new(const bw_redis_queue_config_t *cfg,
                                     bw_error_t *err) {
  bw_redis_queue_t *q;
  if (cfg == NULL) {
    bw_error_set(err, BW_E_INVAL, "", "config is NULL");
    return NULL;
  }
  if (cfg->max_size < 1) {
    bw_error_set(err, BW_E_INVAL, "max_size", "max_size must be >= 1 (got %u)",
                 cfg->max_size);
    return NULL;
  }
  if (!(cfg->warn_threshold > 0.0 && cfg->warn_threshold <= 1.0)) {
    bw_error_set(err, BW_E_INVAL, "warn_threshold",
                 "warn_threshold must be in (0, 1] (got %g)",
                 cfg->warn_threshold);
    return NULL;
  }
  if (!(cfg->warn_rearm_threshold >= 0.0 &&
        cfg->warn_rearm_threshold < cfg->warn_threshold)) {
    bw_error_set(err, BW_E_INVAL, "warn_rearm_threshold",
                 "warn_rearm_threshold must be in [0, warn_threshold) (got "
                 "%g, warn_threshold %g)",
                 cfg->warn_rearm_threshold, cfg->warn_threshold);
    return NULL;
  }
  if (cfg->dlq_max < 1) {
    bw_error_set(err, BW_E_INVAL, "dlq_max", "dlq_max must be >= 1 (got 0)");
    return NULL;
  }
  q = bw_calloc(1, sizeof(*q));
  if (q == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating redis queue");
    return NULL;
  }
  if (bw__rcl_init(&q->cl, &cfg->redis, cfg->name, "name", bw__rq_scripts, 3,
                   err) != BW_OK) {
    bw_redis_queue_free(q);
    return NULL;
  }
  q->cl.sink = cfg->sink;
  if (cfg->wall_clock != NULL) q->cl.wall = cfg->wall_clock;
  q->k_queue = bw__rconn_key(&q->cl.conn, "{q:", cfg->name, "}");
  q->k_dlq = bw__rconn_key(&q->cl.conn, "{q:", cfg->name, "}:dlq");
  q->k_warned = bw__rconn_key(&q->cl.conn, "{q:", cfg->name, "}:warned");
  q->k_proc = bw__rconn_key(&q->cl.conn, "{q:", cfg->name, "}:processing:");
  if (q->k_queue == NULL || q->k_dlq == NULL || q->k_warned == NULL ||
      q->k_proc == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating redis queue");
    bw_redis_queue_free(q);
    return NULL;
  }
  q->max_size = cfg->max_size;
  /* Warn when size / max_size >= warn_threshold (the asyncio toolkit), i.e. at
   * the first whole size that reaches it. */
  q->warn_at =
      (uint32_t)ceil(cfg->warn_threshold * (double)cfg->max_size - 1e-9);
  if (q->warn_at < 1) q->warn_at = 1;
  /* Re-arm when a dequeue takes the size below the first whole size that
   * reaches warn_rearm_threshold (the store.h queues' levels). */
  {
    double v = cfg->warn_rearm_threshold * (double)cfg->max_size - 1e-9;
    q->rearm_below = v <= 0 ? 0 : (uint32_t)ceil(v);
    if (q->rearm_below > q->warn_at) q->rearm_below = q->warn_at;
  }
  q->dlq_max = cfg->dlq_max;
  snprintf(q->a_max, sizeof(q->a_max), "%u", q->max_size);
  snprintf(q->a_warn, sizeof(q->a_warn), "%u", q->warn_at);
  snprintf(q->a_rearm, sizeof(q->a_rearm), "%u", q->rearm_below);
  snprintf(q->a_dlqmax, sizeof(q->a_dlqmax), "%u", q->dlq_max);
  bw_error_clear(err);
  return q;
}

/* With cl->mu held: connects if need be and runs script `script` (or, when
 * script < 0, the command argv). The reply (freed by the caller, who checks
 * it with reply.h), or NULL with *rc set: BW_E_IO (Redis down, the call
 * failed) or BW_E_NOMEM. */
static redisReply *bw__rq_call(bw__rclient_t *cl, int script, int nkeys,
                               int argc, const char **argv, const size_t *lens,
                               int *rc) {
  redisReply *r;
  if ((*rc = bw__rcl_ready(cl)) != BW_OK) return NULL;
  r = script < 0
          ? bw__rconn_command(&cl->conn, argc, argv, lens)
          : bw__rconn_eval(&cl->conn, (size_t)script, nkeys, argc, argv, lens);
  if (r == NULL) *rc = bw__rcl_failed(cl);
  return r;
}

/* With cl->mu held: a reply that is not what `what` returns (why: reply.h):
 * frees it and fails as a broken call. BW_E_IO (or BW_E_NOMEM). */
static int bw__rq_bad(bw__rclient_t *cl, redisReply *r, const char *what,
                      const char *why) {
  freeReplyObject(r);
  (void)bw__rconn_unexpected(&cl->conn, what, why);
  return bw__rcl_failed(cl);
}

static void bw__rq_warn(bw_redis_queue_t *q, int64_t size) {
  atomic_fetch_add_explicit(&q->warnings, 1, memory_order_relaxed);
  bw_queue_event_warning(q->cl.sink, q->cl.wall, q->cl.name,
                         bw_clock_now(bw_clock_monotonic()), q->max_size,
                         (uint64_t)size);
}

int bw_redis_queue_enqueue(bw_redis_queue_t *q, const void *payload, size_t len,
                           uint64_t *size_out) {
  const char *argv[8];
  size_t lens[8];
  redisReply *r;
  int rc;
  bool admitted, warn;
  uint64_t size, dropped;
  const char *bad;
  if (q == NULL || (payload == NULL && len > 0)) return BW_E_INVAL;
  argv[0] = q->k_queue;
  argv[1] = q->k_dlq;
  argv[2] = q->k_warned;
  argv[3] = q->a_max;
  argv[4] = payload != NULL ? payload : "";
  argv[5] = q->a_warn;
  argv[6] = q->cl.name;
  argv[7] = q->a_dlqmax;
  /* The payload (argv[4]) is binary: its length is len, never strlen. */
  for (rc = 0; rc < 8; rc++)
    lens[rc] = rc == 4 ? len : strlen(argv[rc]);
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rq_call(&q->cl, 0, 3, 8, argv, lens, &rc);
  if (r == NULL) goto out;
  if (bw__rr_rq_enqueue(r, q->max_size, &admitted, &size, &warn, &dropped,
                        &bad) != BW_OK) {
    rc = bw__rq_bad(&q->cl, r, "enqueue", bad);
    goto out;
  }
  freeReplyObject(r);
  if (size_out != NULL) *size_out = size;
  if (admitted) {
    atomic_fetch_add_explicit(&q->admitted, 1, memory_order_relaxed);
    if (warn) bw__rq_warn(q, (int64_t)size);
    rc = BW_OK;
  } else {
    bw_field_t f[4];
    char why[192];
    int n;
    f[0] = bw_field_str("cause", "queue_full");
    f[1] = bw_field_uint("max_size", q->max_size);
    f[2] = bw_field_uint("dlq_dropped", dropped);
    f[3] = bw_field_uint("count", 1);
    n = snprintf(why, sizeof(why), "queue_full: %.40s reached %u items",
                 q->cl.name, q->max_size);
    if (dropped > 0 && n > 0 && (size_t)n < sizeof(why))
      snprintf(why + n, sizeof(why) - (size_t)n,
               "; dropped the oldest %llu DLQ entr%s (dlq_max %u)",
               (unsigned long long)dropped, dropped == 1 ? "y" : "ies",
               q->dlq_max);
    atomic_fetch_add_explicit(&q->dead_lettered, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->dlq_dropped, dropped, memory_order_relaxed);
    bw__rcl_event(&q->cl, BW_EV_DEAD_LETTERED, why, f, 4);
    rc = BW_E_FULL;
  }
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

/* The processing list of `consumer` (bw_malloc'd). */
static char *bw__rq_proc_key(const bw_redis_queue_t *q, const char *consumer) {
  return bw__rcat(q->k_proc, consumer);
}

/* With cl.mu held: runs script (1 dequeue, 2 recover) on the queue and
 * consumer's processing list. The reply (unchecked), or NULL with *rc
 * set. */
static redisReply *bw__rq_consumer_call(bw_redis_queue_t *q, int script,
                                        const char *consumer, int *rc) {
  const char *argv[4];
  redisReply *r;
  char *pk = bw__rq_proc_key(q, consumer);
  if (pk == NULL) {
    *rc = BW_E_NOMEM;
    return NULL;
  }
  argv[0] = q->k_queue;
  argv[1] = pk;
  argv[2] = q->k_warned;
  /* dequeue re-arms below rearm_below; recover warns at warn_at. */
  argv[3] = script == 1 ? q->a_rearm : q->a_warn;
  r = bw__rq_call(&q->cl, script, 3, 4, argv, NULL, rc);
  bw_free(pk);
  return r;
}

int bw_redis_queue_dequeue(bw_redis_queue_t *q, const char *consumer,
                           void **payload, size_t *len) {
  redisReply *r;
  int rc;
  if (q == NULL || consumer == NULL || consumer[0] == '\0' || payload == NULL ||
      len == NULL)
    return BW_E_INVAL;
  *payload = NULL;
  *len = 0;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rq_consumer_call(q, 1, consumer, &rc);
  if (r == NULL) goto out;
  {
    bool found;
    const char *why;
    if (bw__rr_item(r, &found, &why) != BW_OK) {
      rc = bw__rq_bad(&q->cl, r, "dequeue", why);
      goto out;
    }
  }
  if (r->type == REDIS_REPLY_STRING) {
    void *copy = bw_memdup(r->str, r->len);
    if (copy == NULL) {
      /* The item stays in the processing list: recover brings it back. */
      rc = BW_E_NOMEM;
    } else {
      *payload = copy;
      *len = r->len;
      atomic_fetch_add_explicit(&q->dequeued, 1, memory_order_relaxed);
      rc = BW_OK;
    }
  } else {
    rc = BW_E_NOTFOUND;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

int bw_redis_queue_ack(bw_redis_queue_t *q, const char *consumer,
                       const void *payload, size_t len) {
  const char *argv[4];
  size_t lens[4];
  redisReply *r;
  char *pk;
  int rc;
  if (q == NULL || consumer == NULL || consumer[0] == '\0' ||
      (payload == NULL && len > 0))
    return BW_E_INVAL;
  pk = bw__rq_proc_key(q, consumer);
  if (pk == NULL) return BW_E_NOMEM;
  argv[0] = "LREM";
  lens[0] = 4;
  argv[1] = pk;
  lens[1] = strlen(pk);
  argv[2] = "1";
  lens[2] = 1;
  argv[3] = payload != NULL ? payload : "";
  lens[3] = len;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rq_call(&q->cl, -1, 0, 4, argv, lens, &rc);
  if (r == NULL) goto out;
  {
    uint64_t removed;
    const char *why;
    if (bw__rr_count(r, 1, &removed, &why) != BW_OK) {
      rc = bw__rq_bad(&q->cl, r, "LREM", why);
      goto out;
    }
  }
  if (r->integer == 1) {
    atomic_fetch_add_explicit(&q->acked, 1, memory_order_relaxed);
    rc = BW_OK;
  } else {
    rc = BW_E_NOTFOUND;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  bw_free(pk);
  return rc;
}

int bw_redis_queue_recover(bw_redis_queue_t *q, const char *consumer,
                           uint64_t *moved) {
  redisReply *r;
  int rc;
  if (moved != NULL) *moved = 0;
  if (q == NULL || consumer == NULL || consumer[0] == '\0') return BW_E_INVAL;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rq_consumer_call(q, 2, consumer, &rc);
  if (r == NULL) goto out;
  {
    uint64_t n, size;
    bool warn;
    const char *why;
    if (bw__rr_rq_recover(r, &n, &size, &warn, &why) != BW_OK) {
      rc = bw__rq_bad(&q->cl, r, "recover", why);
      goto out;
    }
    freeReplyObject(r);
    if (moved != NULL) *moved = n;
    atomic_fetch_add_explicit(&q->recovered, n, memory_order_relaxed);
    if (warn) bw__rq_warn(q, (int64_t)size);
  }
  rc = BW_OK;
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

static int bw__rq_llen(bw_redis_queue_t *q, const char *key, uint64_t *size) {
  const char *argv[2] = {"LLEN", key};
  redisReply *r;
  int rc;
  if (q == NULL || size == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rq_call(&q->cl, -1, 0, 2, argv, NULL, &rc);
  if (r == NULL) goto out;
  {
    uint64_t n;
    const char *why;
    if (bw__rr_count(r, BW__RR_COUNT_MAX, &n, &why) != BW_OK) {
      rc = bw__rq_bad(&q->cl, r, "LLEN", why);
      goto out;
    }
    *size = n;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

int bw_redis_queue_size(bw_redis_queue_t *q, uint64_t *size) {
  return bw__rq_llen(q, q != NULL ? q->k_queue : "", size);
}

int bw_redis_queue_dlq_size(bw_redis_queue_t *q, uint64_t *size) {
  return bw__rq_llen(q, q != NULL ? q->k_dlq : "", size);
}

int bw_redis_queue_dlq_get(bw_redis_queue_t *q, uint64_t index, char **json) {
  char idx[24];
  const char *argv[3];
  redisReply *r;
  int rc;
  if (q == NULL || json == NULL || index > (uint64_t)INT64_MAX)
    return BW_E_INVAL;
  *json = NULL;
  snprintf(idx, sizeof(idx), "%llu", (unsigned long long)index);
  argv[0] = "LINDEX";
  argv[1] = q->k_dlq;
  argv[2] = idx;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rq_call(&q->cl, -1, 0, 3, argv, NULL, &rc);
  if (r == NULL) goto out;
  {
    bool found;
    const char *why;
    if (bw__rr_item(r, &found, &why) != BW_OK) {
      rc = bw__rq_bad(&q->cl, r, "LINDEX", why);
      goto out;
    }
  }
  if (r->type == REDIS_REPLY_STRING) {
    *json = bw_memdup(r->str, r->len);
    if (*json == NULL) rc = BW_E_NOMEM;
  } else {
    rc = BW_E_NOTFOUND;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

void bw_redis_queue_stats(const bw_redis_queue_t *q,
                          bw_redis_queue_stats_t *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (q == NULL) return;
  out->admitted = atomic_load(&q->admitted);
  out->dead_lettered = atomic_load(&q->dead_lettered);
  out->warnings = atomic_load(&q->warnings);
  out->dequeued = atomic_load(&q->dequeued);
  out->acked = atomic_load(&q->acked);
  out->recovered = atomic_load(&q->recovered);
  out->errors = atomic_load(&q->cl.errors);
  out->dlq_dropped = atomic_load(&q->dlq_dropped);
}

/* ---- idempotency records --------------------------------------------------
 */

/* KEYS: record. ARGV: ttl_ms. {0} new, {1} in progress, {2, result} done.
 * Values: "P" (in progress) or "D" .. result. */
static const char bw__ri_begin_lua[] =
    "if redis.call('SET', KEYS[1], 'P', 'NX', 'PX', ARGV[1]) then\n"
    "  return {0}\n"
    "end\n"
    "local v = redis.call('GET', KEYS[1])\n"
    "if string.sub(v, 1, 1) == 'D' then return {2, string.sub(v, 2)} end\n"
    "return {1}\n";

/* KEYS: record. 1 when an in-progress claim was dropped, else 0. */
static const char bw__ri_abandon_lua[] =
    "if redis.call('GET', KEYS[1]) == 'P' then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  return 1\n"
    "end\n"
    "return 0\n";

static const char *const bw__ri_scripts[] = {bw__ri_begin_lua,
                                             bw__ri_abandon_lua};

struct bw_redis_idem_s {
  bw__rclient_t cl;
  char *k_base;
};

void bw_redis_idem_config_init(bw_redis_idem_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  bw_redis_config_init(&cfg->redis);
  cfg->name = "idem";
}

void bw_redis_idem_free(bw_redis_idem_t *d) {
  if (d == NULL) return;
  bw__rcl_destroy(&d->cl);
  bw_free(d->k_base);
  bw_free(d);
}

bw_redis_idem_t *bw_redis_idem_new(const bw_redis_idem_config_t *cfg,
                                   bw_error_t *err) {
  bw_redis_idem_t *d;
  if (cfg == NULL) {
    bw_error_set(err, BW_E_INVAL, "", "config is NULL");
    return NULL;
  }
  d = bw_calloc(1, sizeof(*d));
  if (d == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating redis idem");
    return NULL;
  }
  if (bw__rcl_init(&d->cl, &cfg->redis, cfg->name, "name", bw__ri_scripts, 2,
                   err) != BW_OK) {
    bw_redis_idem_free(d);
    return NULL;
  }
  d->k_base = bw__rconn_key(&d->cl.conn, "idem:", cfg->name, ":");
  if (d->k_base == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating redis idem");
    bw_redis_idem_free(d);
    return NULL;
  }
  bw_error_clear(err);
  return d;
}

static char *bw__ri_key(const bw_redis_idem_t *d, const char *key) {
  return bw__rcat(d->k_base, key);
}

int bw_redis_idem_begin(bw_redis_idem_t *d, const char *key, int64_t ttl_ms,
                        bw_idem_state_t *status, void **result,
                        size_t *result_len) {
  char ttl[24];
  const char *argv[2];
  redisReply *r;
  char *k;
  int rc;
  if (result != NULL) *result = NULL;
  if (result_len != NULL) *result_len = 0;
  if (d == NULL || key == NULL || key[0] == '\0' || ttl_ms < 1 ||
      status == NULL)
    return BW_E_INVAL;
  k = bw__ri_key(d, key);
  if (k == NULL) return BW_E_NOMEM;
  snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
  argv[0] = k;
  argv[1] = ttl;
  pthread_mutex_lock(&d->cl.mu);
  r = bw__rq_call(&d->cl, 0, 1, 2, argv, NULL, &rc);
  if (r == NULL) goto out;
  {
    int code;
    const redisReply *v;
    const char *why;
    if (bw__rr_ri_begin(r, &code, &v, &why) != BW_OK) {
      rc = bw__rq_bad(&d->cl, r, "begin", why);
      goto out;
    }
    *status = code == 0   ? BW_IDEM_NEW
              : code == 1 ? BW_IDEM_IN_PROGRESS
                          : BW_IDEM_DONE;
  }
  if (*status == BW_IDEM_DONE) {
    const redisReply *v = r->element[1];
    if (result_len != NULL) *result_len = v->len;
    if (result != NULL) {
      *result = bw_memdup(v->str, v->len);
      if (*result == NULL) rc = BW_E_NOMEM;
    }
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&d->cl.mu);
  bw_free(k);
  return rc;
}

int bw_redis_idem_complete(bw_redis_idem_t *d, const char *key,
                           const void *result, size_t len, int64_t ttl_ms) {
  char ttl[24];
  const char *argv[5];
  size_t lens[5];
  redisReply *r;
  char *k, *val;
  int rc;
  if (d == NULL || key == NULL || key[0] == '\0' || ttl_ms < 1 ||
      (result == NULL && len > 0))
    return BW_E_INVAL;
  k = bw__ri_key(d, key);
  val = bw_malloc(len + 1);
  if (k == NULL || val == NULL) {
    bw_free(k);
    bw_free(val);
    return BW_E_NOMEM;
  }
  val[0] = 'D';
  if (len > 0) memcpy(val + 1, result, len);
  snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
  argv[0] = "SET";
  lens[0] = 3;
  argv[1] = k;
  lens[1] = strlen(k);
  argv[2] = val;
  lens[2] = len + 1;
  argv[3] = "PX";
  lens[3] = 2;
  argv[4] = ttl;
  lens[4] = strlen(ttl);
  pthread_mutex_lock(&d->cl.mu);
  r = bw__rq_call(&d->cl, -1, 0, 5, argv, lens, &rc);
  if (r == NULL) goto out;
  {
    const char *why;
    if (bw__rr_ok(r, &why) != BW_OK) {
      rc = bw__rq_bad(&d->cl, r, "SET", why);
      goto out;
    }
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&d->cl.mu);
  bw_free(k);
  bw_free(val);
  return rc;
}

int bw_redis_idem_abandon(bw_redis_idem_t *d, const char *key) {
  const char *argv[1];
  redisReply *r;
  char *k;
  int rc;
  if (d == NULL || key == NULL || key[0] == '\0') return BW_E_INVAL;
  k = bw__ri_key(d, key);
  if (k == NULL) return BW_E_NOMEM;
  argv[0] = k;
  pthread_mutex_lock(&d->cl.mu);
  r = bw__rq_call(&d->cl, 1, 1, 1, argv, NULL, &rc);
  if (r == NULL) goto out;
  {
    uint64_t v;
    const char *why;
    if (bw__rr_count(r, 1, &v, &why) != BW_OK) {
      rc = bw__rq_bad(&d->cl, r, "abandon", why);
      goto out;
    }
    rc = v == 1 ? BW_OK : BW_E_NOTFOUND;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&d->cl.mu);
  bw_free(k);
  return rc;
}

/* The in-memory queue and idempotency store (the defaults, and the
 * reference the backend tests compare against). Their arguments were checked
 * by the dispatch in store.c before the vtable is called.
 *
 * Each holds one mutex: every operation is a short walk over a list under
 * it, and events are emitted after it is released (a sink may read stats). A
 * queue node serves both lists (queue and DLQ), so moving an item to the DLQ
 * never allocates and a batch is all-or-nothing: every node is allocated
 * before the lock is taken. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "breakwater/store.h"
#include "internal.h"

/* ==== memory queue ======================================================= */

typedef struct mnode_s {
  struct mnode_s *prev, *next;
  uint64_t id;      /* queue id, or DLQ record id while in the DLQ */
  uint64_t item_id; /* in the DLQ: the queue id it had (0: never entered) */
  uint64_t receipt; /* 0: no current lease */
  uint32_t deliveries;
  int64_t enqueued_ns;
  int64_t visible_ns; /* claimable at or after */
  int64_t time_ns;    /* DLQ: when it came */
  char reason[32];
  char error[160];
  void *payload;
  size_t len;
} mnode_t;

typedef struct mlist_s {
  mnode_t *head, *tail;
  uint64_t count;
} mlist_t;

static void ml_push(mlist_t *l, mnode_t *n) {
  n->next = NULL;
  n->prev = l->tail;
  if (l->tail)
    l->tail->next = n;
  else
    l->head = n;
  l->tail = n;
  l->count++;
}

static void ml_unlink(mlist_t *l, mnode_t *n) {
  if (n->prev)
    n->prev->next = n->next;
  else
    l->head = n->next;
  if (n->next)
    n->next->prev = n->prev;
  else
    l->tail = n->prev;
  n->prev = n->next = NULL;
  l->count--;
}

static void mnode_free(mnode_t *n) {
  if (n == NULL) return;
  bw_free(n->payload);
  bw_free(n);
}

/* Events are gathered under the lock and emitted after it
 * (bw_queue_events_t, store.h). */

typedef struct mem_queue_s {
  bw_queue_store_t base;
  pthread_mutex_t lock;
  char *name;
  bw_queue_store_config_t cfg;
  uint64_t warn_at, rearm_below;
  mlist_t q, dlq;
  uint64_t next_id, next_dlq_id, next_receipt;
  bool warned;
  bw_queue_store_stats_t st; /* counters */
} mem_queue_t;

static int64_t mq_now(const mem_queue_t *m) {
  return bw__clock_now(m->cfg.clock);
}

static void mq_emit(const mem_queue_t *m, const bw_queue_events_t *eb) {
  if (m->cfg.sink == NULL || eb->n == 0) return;
  bw_queue_events_emit(eb, &m->cfg, m->name, mq_now(m));
}

static void mq_after_grow(mem_queue_t *m, bw_queue_events_t *eb) {
  if (!m->warned && m->q.count >= m->warn_at) {
    m->warned = true;
    m->st.warnings++;
    bw_queue_events_warning(eb, m->q.count);
  }
}

static void mq_after_shrink(mem_queue_t *m) {
  if (m->warned && m->q.count < m->rearm_below) m->warned = false;
}

/* Appends a node to the DLQ (dropping the oldest record past dlq_max) and
 * records the event. */
static void mq_to_dlq(mem_queue_t *m, mnode_t *n, const char *reason,
                      const char *error, int64_t now, bw_queue_events_t *eb) {
  n->item_id = n->id;
  n->id = ++m->next_dlq_id;
  n->receipt = 0;
  n->time_ns = now;
  snprintf(n->reason, sizeof(n->reason), "%s", reason);
  snprintf(n->error, sizeof(n->error), "%s", error);
  if (m->dlq.count >= m->cfg.dlq_max) {
    mnode_t *old = m->dlq.head;
    ml_unlink(&m->dlq, old);
    mnode_free(old);
    m->st.dlq_dropped++;
  }
  ml_push(&m->dlq, n);
  m->st.dead_lettered++;
  bw_queue_events_dead(eb, n->item_id, n->id, n->deliveries, reason, error);
}

static int mq_enqueue(bw_queue_store_t *q, const bw_blob_t *items, size_t n,
                      uint64_t *ids, size_t *accepted) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t **nodes;
  size_t i, ok = 0, refused = 0;
  bw_queue_events_t eb;
  int64_t now;
  char msg[160];
  eb.n = 0;
  nodes = bw_calloc(n, sizeof(*nodes));
  if (nodes == NULL) return BW_E_NOMEM;
  for (i = 0; i < n; i++) {
    nodes[i] = bw_calloc(1, sizeof(mnode_t));
    if (nodes[i] != NULL)
      nodes[i]->payload = bw_memdup(items[i].data, items[i].len);
    if (nodes[i] == NULL || nodes[i]->payload == NULL) {
      size_t j;
      for (j = 0; j <= i; j++)
        mnode_free(nodes[j]);
      bw_free(nodes);
      return BW_E_NOMEM;
    }
    nodes[i]->len = items[i].len;
  }
  pthread_mutex_lock(&m->lock);
  now = mq_now(m);
  snprintf(msg, sizeof(msg), "queue %s reached max_size %u", m->name,
           (unsigned)m->cfg.max_size);
  for (i = 0; i < n; i++) {
    mnode_t *x = nodes[i];
    x->enqueued_ns = now;
    x->visible_ns = now;
    if (refused == 0 && m->q.count < m->cfg.max_size) {
      x->id = ++m->next_id;
      ml_push(&m->q, x);
      if (ids) ids[i] = x->id;
      ok++;
      mq_after_grow(m, &eb);
    } else {
      size_t before = eb.n;
      x->id = 0;
      mq_to_dlq(m, x, BW_DLQ_QUEUE_FULL, msg, now, &eb);
      if (ids) ids[i] = 0;
      /* one event for a refused batch tail */
      if (refused > 0 && eb.n > before) eb.n--;
      refused++;
    }
  }
  m->st.enqueued += ok;
  m->st.refused_full += refused;
  if (refused > 0) bw_queue_events_set_dead_count(&eb, refused);
  pthread_mutex_unlock(&m->lock);
  bw_free(nodes);
  mq_emit(m, &eb);
  if (accepted) *accepted = ok;
  return refused ? BW_E_FULL : BW_OK;
}

static int mq_claim(bw_queue_store_t *q, size_t max, int64_t visibility_ms,
                    bw_stored_item_t *out, size_t *n) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t *x, *next;
  bw_queue_events_t eb;
  size_t got = 0, moved = 0;
  int64_t now;
  int rc = BW_OK;
  char msg[160];
  eb.n = 0;
  pthread_mutex_lock(&m->lock);
  now = mq_now(m);
  for (x = m->q.head; x != NULL && got < max; x = next) {
    next = x->next;
    if (x->visible_ns > now) continue;
    if (x->deliveries >= m->cfg.max_deliveries) {
      if (moved >= 16) continue;
      snprintf(msg, sizeof(msg), "delivered %u times without an ack",
               (unsigned)x->deliveries);
      ml_unlink(&m->q, x);
      mq_to_dlq(m, x, BW_DLQ_MAX_DELIVERIES, msg, now, &eb);
      moved++;
      continue;
    }
    out[got].payload = bw_memdup(x->payload, x->len);
    if (out[got].payload == NULL) {
      if (got == 0) rc = BW_E_NOMEM;
      break;
    }
    x->deliveries++;
    x->receipt = ++m->next_receipt;
    x->visible_ns = now + visibility_ms * BW_NS_PER_MS;
    out[got].id = x->id;
    out[got].receipt = x->receipt;
    out[got].deliveries = x->deliveries;
    out[got].enqueued_ns = x->enqueued_ns;
    out[got].lease_until_ns = x->visible_ns;
    out[got].len = x->len;
    got++;
  }
  m->st.claimed += got;
  if (moved) mq_after_shrink(m);
  pthread_mutex_unlock(&m->lock);
  mq_emit(m, &eb);
  *n = got;
  return rc;
}

/* Finds a queue node by id and checks the receipt. */
static int mq_find_leased(mem_queue_t *m, uint64_t id, uint64_t receipt,
                          mnode_t **out) {
  mnode_t *x;
  for (x = m->q.head; x != NULL; x = x->next)
    if (x->id == id) break;
  if (x == NULL) return BW_E_NOTFOUND;
  if (x->receipt == 0 || x->receipt != receipt) {
    m->st.stale++;
    return BW_E_STALE;
  }
  *out = x;
  return BW_OK;
}

static int mq_ack(bw_queue_store_t *q, uint64_t id, uint64_t receipt) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t *x = NULL;
  int rc;
  pthread_mutex_lock(&m->lock);
  rc = mq_find_leased(m, id, receipt, &x);
  if (rc == BW_OK) {
    ml_unlink(&m->q, x);
    mnode_free(x);
    m->st.acked++;
    mq_after_shrink(m);
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

/* nack (reject false: visible again after delay_ms, or to the DLQ past
 * max_deliveries) or reject (to the DLQ with `error`). */
static int mq_give_back(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                        int64_t delay_ms, bool reject, const char *error) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t *x = NULL;
  bw_queue_events_t eb;
  int rc;
  eb.n = 0;
  pthread_mutex_lock(&m->lock);
  rc = mq_find_leased(m, id, receipt, &x);
  if (rc == BW_OK) {
    int64_t now = mq_now(m);
    char msg[160];
    if (!reject) m->st.nacked++;
    if (!reject && x->deliveries < m->cfg.max_deliveries) {
      x->receipt = 0;
      x->visible_ns = now + delay_ms * BW_NS_PER_MS;
    } else {
      if (!reject) {
        snprintf(msg, sizeof(msg), "nacked after %u deliveries",
                 (unsigned)x->deliveries);
        error = msg;
      }
      ml_unlink(&m->q, x);
      mq_to_dlq(m, x, reject ? BW_DLQ_REJECTED : BW_DLQ_MAX_DELIVERIES, error,
                now, &eb);
      mq_after_shrink(m);
    }
  }
  pthread_mutex_unlock(&m->lock);
  mq_emit(m, &eb);
  return rc;
}

static int mq_nack(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                   int64_t delay_ms) {
  return mq_give_back(q, id, receipt, delay_ms, false, NULL);
}

static int mq_reject(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                     const char *error) {
  return mq_give_back(q, id, receipt, 0, true, error);
}

static int mq_dlq_list(bw_queue_store_t *q, uint64_t after_id, size_t max,
                       bw_dlq_record_t *out, size_t *n) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t *x;
  size_t got = 0;
  int rc = BW_OK;
  pthread_mutex_lock(&m->lock);
  for (x = m->dlq.head; x != NULL && got < max; x = x->next) {
    bw_dlq_record_t *r = &out[got];
    if (x->id <= after_id) continue;
    memset(r, 0, sizeof(*r));
    r->payload = bw_memdup(x->payload, x->len);
    if (r->payload == NULL) {
      rc = BW_E_NOMEM;
      break;
    }
    r->len = x->len;
    r->id = x->id;
    r->item_id = x->item_id;
    r->deliveries = x->deliveries;
    r->time_ns = x->time_ns;
    memcpy(r->reason, x->reason, sizeof(r->reason));
    memcpy(r->error, x->error, sizeof(r->error));
    got++;
  }
  pthread_mutex_unlock(&m->lock);
  if (rc != BW_OK) {
    bw_dlq_records_clear(out, got);
    got = 0;
  }
  *n = got;
  return rc;
}

static mnode_t *mq_dlq_find(const mem_queue_t *m, uint64_t dlq_id) {
  mnode_t *x;
  for (x = m->dlq.head; x != NULL; x = x->next)
    if (x->id == dlq_id) return x;
  return NULL;
}

static int mq_dlq_requeue(bw_queue_store_t *q, uint64_t dlq_id,
                          uint64_t *new_id) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t *x;
  bw_queue_events_t eb;
  int rc = BW_OK;
  eb.n = 0;
  pthread_mutex_lock(&m->lock);
  x = mq_dlq_find(m, dlq_id);
  if (x == NULL) {
    rc = BW_E_NOTFOUND;
  } else if (m->q.count >= m->cfg.max_size) {
    rc = BW_E_FULL;
  } else {
    int64_t now = mq_now(m);
    ml_unlink(&m->dlq, x);
    x->id = ++m->next_id;
    x->item_id = 0;
    x->deliveries = 0;
    x->receipt = 0;
    x->enqueued_ns = now;
    x->visible_ns = now;
    x->reason[0] = x->error[0] = '\0';
    ml_push(&m->q, x);
    *new_id = x->id;
    m->st.requeued++;
    mq_after_grow(m, &eb);
  }
  pthread_mutex_unlock(&m->lock);
  mq_emit(m, &eb);
  return rc;
}

static int mq_dlq_delete(bw_queue_store_t *q, uint64_t dlq_id) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t *x;
  int rc = BW_E_NOTFOUND;
  pthread_mutex_lock(&m->lock);
  x = mq_dlq_find(m, dlq_id);
  if (x != NULL) {
    ml_unlink(&m->dlq, x);
    mnode_free(x);
    rc = BW_OK;
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static int mq_stats(bw_queue_store_t *q, bw_queue_store_stats_t *out) {
  mem_queue_t *m = (mem_queue_t *)q;
  const mnode_t *x;
  int64_t now;
  pthread_mutex_lock(&m->lock);
  now = mq_now(m);
  *out = m->st;
  out->depth = m->q.count;
  out->dlq_depth = m->dlq.count;
  out->max_size = m->cfg.max_size;
  out->fill = (double)m->q.count / (double)m->cfg.max_size;
  out->warning = m->warned;
  out->in_flight = 0;
  for (x = m->q.head; x != NULL; x = x->next)
    if (x->receipt != 0 && x->visible_ns > now) out->in_flight++;
  pthread_mutex_unlock(&m->lock);
  return BW_OK;
}

static const char *mq_name(const bw_queue_store_t *q) {
  return ((const mem_queue_t *)q)->name;
}

static void mq_free(bw_queue_store_t *q) {
  mem_queue_t *m = (mem_queue_t *)q;
  mnode_t *x, *next;
  for (x = m->q.head; x != NULL; x = next) {
    next = x->next;
    mnode_free(x);
  }
  for (x = m->dlq.head; x != NULL; x = next) {
    next = x->next;
    mnode_free(x);
  }
  pthread_mutex_destroy(&m->lock);
  bw_free(m->name);
  bw_free(m);
}

static const bw_queue_store_vtable_t mq_vtable = {
    "memory",    mq_enqueue,     mq_claim,      mq_ack,   mq_nack, mq_reject,
    mq_dlq_list, mq_dlq_requeue, mq_dlq_delete, mq_stats, mq_name, mq_free};

bw_queue_store_t *bw_mem_queue_new(const bw_queue_store_config_t *cfg,
                                   bw_error_t *err) {
  mem_queue_t *m;
  if (bw_queue_store_config_validate(cfg, err) != BW_OK) return NULL;
  m = bw_calloc(1, sizeof(*m));
  if (m == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  m->name = bw_strdup(cfg->name);
  if (m->name == NULL || pthread_mutex_init(&m->lock, NULL) != 0) {
    bw_free(m->name);
    bw_free(m);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  m->base.vt = &mq_vtable;
  m->cfg = *cfg;
  m->cfg.name = m->name;
  if (m->cfg.clock == NULL) m->cfg.clock = bw_clock_monotonic();
  if (m->cfg.wall_clock == NULL) m->cfg.wall_clock = bw_clock_realtime();
  bw_queue_store_config_levels(&m->cfg, &m->warn_at, &m->rearm_below);
  bw_error_clear(err);
  return &m->base;
}

/* ==== memory idempotency store =========================================== */

typedef struct inode_s {
  struct inode_s *next;
  char key[BW_IDEM_KEY_MAX + 1];
  bw_idem_state_t state;
  uint64_t token;
  int status;
  int64_t expires_ns;
  void *result;
  size_t len;
} inode_t;

typedef struct mem_idem_s {
  bw_idem_store_t base;
  pthread_mutex_t lock;
  char *name;
  bw_idem_config_t cfg;
  inode_t **buckets;
  size_t nbuckets; /* a power of two */
  uint64_t keys;
  uint64_t next_token;
  bw_idem_stats_t st;
} mem_idem_t;

static size_t key_hash(const char *k) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *k; k++) {
    h ^= (unsigned char)*k;
    h *= UINT64_C(0x100000001b3);
  }
  return (size_t)(h ^ (h >> 29));
}

static inode_t **mi_slot(mem_idem_t *m, const char *key) {
  inode_t **pp = &m->buckets[key_hash(key) & (m->nbuckets - 1)];
  while (*pp != NULL && strcmp((*pp)->key, key) != 0)
    pp = &(*pp)->next;
  return pp;
}

static void mi_remove(mem_idem_t *m, inode_t **pp) {
  inode_t *x = *pp;
  *pp = x->next;
  bw_free(x->result);
  bw_free(x);
  m->keys--;
}

static void mi_sweep(mem_idem_t *m, int64_t now) {
  size_t i;
  for (i = 0; i < m->nbuckets; i++) {
    inode_t **pp = &m->buckets[i];
    while (*pp != NULL) {
      if ((*pp)->expires_ns <= now)
        mi_remove(m, pp);
      else
        pp = &(*pp)->next;
    }
  }
}

static int mi_begin(bw_idem_store_t *s, const char *key,
                    bw_idem_record_t *out) {
  mem_idem_t *m = (mem_idem_t *)s;
  inode_t **pp, *x;
  int64_t now;
  int rc = BW_OK;
  pthread_mutex_lock(&m->lock);
  now = bw__clock_now(m->cfg.clock);
  pp = mi_slot(m, key);
  if (*pp != NULL && (*pp)->expires_ns <= now) mi_remove(m, pp);
  x = *pp;
  if (x != NULL && x->state == BW_IDEM_IN_PROGRESS) {
    out->state = BW_IDEM_IN_PROGRESS;
    out->expires_ns = x->expires_ns;
    m->st.in_progress++;
  } else if (x != NULL) {
    out->result = bw_memdup(x->result, x->len);
    if (out->result == NULL) {
      rc = BW_E_NOMEM;
    } else {
      out->len = x->len;
      out->state = BW_IDEM_DONE;
      out->status = x->status;
      out->expires_ns = x->expires_ns;
      m->st.hits++;
    }
  } else {
    if (m->keys >= m->cfg.max_keys) {
      mi_sweep(m, now);
      pp = mi_slot(m, key);
    }
    if (m->keys >= m->cfg.max_keys) {
      rc = BW_E_LIMIT;
    } else if ((x = bw_calloc(1, sizeof(*x))) == NULL) {
      rc = BW_E_NOMEM;
    } else {
      snprintf(x->key, sizeof(x->key), "%s", key);
      x->state = BW_IDEM_IN_PROGRESS;
      x->token = ++m->next_token;
      x->expires_ns = now + m->cfg.lease_ms * BW_NS_PER_MS;
      *pp = x;
      m->keys++;
      out->state = BW_IDEM_NEW;
      out->token = x->token;
      out->expires_ns = x->expires_ns;
      m->st.began++;
    }
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

/* With the lock held: the slot of key's marker when `token` holds it, or
 * NULL (counted as stale). */
static inode_t **mi_held(mem_idem_t *m, const char *key, uint64_t token) {
  inode_t **pp = mi_slot(m, key);
  if (*pp == NULL || (*pp)->state != BW_IDEM_IN_PROGRESS ||
      (*pp)->token != token) {
    m->st.stale++;
    return NULL;
  }
  return pp;
}

static int mi_complete(bw_idem_store_t *s, const char *key, uint64_t token,
                       int status, const void *result, size_t len) {
  mem_idem_t *m = (mem_idem_t *)s;
  inode_t **pp;
  void *copy = bw_memdup(result, len);
  int rc = BW_OK;
  if (copy == NULL) return BW_E_NOMEM;
  pthread_mutex_lock(&m->lock);
  pp = mi_held(m, key, token);
  if (pp == NULL) {
    rc = BW_E_STALE;
  } else {
    inode_t *x = *pp;
    x->state = BW_IDEM_DONE;
    x->status = status;
    x->result = copy;
    x->len = len;
    x->expires_ns = bw__clock_now(m->cfg.clock) + m->cfg.ttl_ms * BW_NS_PER_MS;
    copy = NULL;
    m->st.completed++;
  }
  pthread_mutex_unlock(&m->lock);
  bw_free(copy);
  return rc;
}

static int mi_abandon(bw_idem_store_t *s, const char *key, uint64_t token) {
  mem_idem_t *m = (mem_idem_t *)s;
  inode_t **pp;
  int rc = BW_OK;
  pthread_mutex_lock(&m->lock);
  pp = mi_held(m, key, token);
  if (pp == NULL) {
    rc = BW_E_STALE;
  } else {
    mi_remove(m, pp);
    m->st.abandoned++;
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static int mi_stats(bw_idem_store_t *s, bw_idem_stats_t *out) {
  mem_idem_t *m = (mem_idem_t *)s;
  pthread_mutex_lock(&m->lock);
  *out = m->st;
  out->keys = m->keys;
  pthread_mutex_unlock(&m->lock);
  return BW_OK;
}

static const char *mi_name(const bw_idem_store_t *s) {
  return ((const mem_idem_t *)s)->name;
}

static void mi_free(bw_idem_store_t *s) {
  mem_idem_t *m = (mem_idem_t *)s;
  size_t i;
  for (i = 0; i < m->nbuckets; i++)
    while (m->buckets[i] != NULL)
      mi_remove(m, &m->buckets[i]);
  pthread_mutex_destroy(&m->lock);
  bw_free(m->buckets);
  bw_free(m->name);
  bw_free(m);
}

static const bw_idem_store_vtable_t mi_vtable = {
    "memory", mi_begin, mi_complete, mi_abandon, mi_stats, mi_name, mi_free};

bw_idem_store_t *bw_mem_idem_new(const bw_idem_config_t *cfg, bw_error_t *err) {
  mem_idem_t *m;
  size_t nb = 16;
  if (bw_idem_config_validate(cfg, err) != BW_OK) return NULL;
  while (nb < cfg->max_keys && nb < (size_t)1 << 20)
    nb *= 2;
  m = bw_calloc(1, sizeof(*m));
  if (m == NULL) goto oom;
  m->name = bw_strdup(cfg->name);
  m->buckets = bw_calloc(nb, sizeof(*m->buckets));
  if (m->name == NULL || m->buckets == NULL ||
      pthread_mutex_init(&m->lock, NULL) != 0) {
    bw_free(m->name);
    bw_free(m->buckets);
    bw_free(m);
    goto oom;
  }
  m->base.vt = &mi_vtable;
  m->cfg = *cfg;
  m->cfg.name = m->name;
  if (m->cfg.clock == NULL) m->cfg.clock = bw_clock_monotonic();
  m->nbuckets = nb;
  bw_error_clear(err);
  return &m->base;
oom:
  bw_error_set(err, BW_E_NOMEM, "", "out of memory");
  return NULL;
}

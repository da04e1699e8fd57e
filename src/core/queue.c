/* Bounded priority queue with an admission policy (the backpressure article).
 *
 * Layout (docs/queue.md has the long form and the alternatives weighed):
 * - Slots: max_size records allocated at creation; a free list threads the
 *   unused ones, so enqueue and dequeue never allocate.
 * - Per-priority FIFO lists (doubly linked through slot indices): arrival
 *   order within a priority is list order, which is what makes the queue
 *   stable without a sequence comparison.
 * - A two-level bitmap of non-empty priorities: the most urgent non-empty
 *   level is two count-trailing-zeros, the least urgent two
 *   count-leading-zeros. Dequeue takes the head of the first level;
 *   drop-lowest sheds the tail of the last level (the newest of the least
 *   urgent, as the article's sorted array does: it pops its last element).
 * - Under drop-oldest, one list of every item in arrival order: the policy
 *   sheds its head; dequeue unlinks from its middle, hence doubly linked.
 * Every operation is O(1) whatever the depth; the price is that priorities
 * are small integers (priority_levels <= 4096), which matches how priorities
 * are used (classes: interactive, batch, ...), not arbitrary scores.
 *
 * A mutex guards all of it. The critical sections are tiny and the structure
 * has no lock-free form that keeps the three orders consistent; callbacks
 * (on_expired) run with the lock released. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "breakwater/queue.h"

#include <stdio.h>

#include "internal.h"
#include "summary.h"

#define BW__NIL UINT32_MAX

typedef struct bw__slot_s {
  void *data;
  int64_t deadline_ns;
  uint64_t seq;
  uint32_t prio;
  uint32_t bprev, bnext; /* within the priority's list */
  uint32_t aprev, anext; /* arrival list; anext also threads the free list */
} bw__slot_t;

struct bw_queue_s {
  pthread_mutex_t lock;
  bw__slot_t *slots;
  uint32_t *ends;   /* head of level l at [2l], tail at [2l + 1] */
  uint64_t summary; /* bit w: bits[w] != 0 */
  uint64_t bits[BW_QUEUE_MAX_LEVELS / 64];
  uint32_t free_head;
  uint32_t ahead, atail; /* arrival list: oldest, newest */
  _Atomic uint32_t size;
  uint32_t max_size;
  uint32_t max_seen;
  uint32_t levels;
  bw_queue_policy_t policy;
  uint64_t seq;
  uint64_t admitted, rejected, shed, expired, dequeued;
  const bw_clock_t *clock;
  bw_queue_expired_cb on_expired;
  void *userdata;
  char *name;
  /* Drops (rejected, shed, expired), summarised as queue_dropped (only
   * with a sink). The counters live under `lock`; the summary's own lock
   * is taken first and `lock` inside it, briefly, to read them. */
  bw_sink_t *sink;
  const bw_clock_t *wall;
  bw__summary_t drops;
};

const char *bw_queue_policy_name(bw_queue_policy_t p) {
  switch (p) {
  case BW_QUEUE_REJECT:
    return "reject";
  case BW_QUEUE_DROP_OLDEST:
    return "drop_oldest";
  case BW_QUEUE_DROP_LOWEST:
    return "drop_lowest";
  default:
    return "unknown";
  }
}

const char *bw_admission_name(int a) {
  switch (a) {
  case BW_QUEUE_ADMITTED:
    return "admitted";
  case BW_QUEUE_SHED:
    return "shed";
  case BW_QUEUE_REJECTED:
    return "rejected";
  default:
    return "unknown";
  }
}

void bw_queue_config_init(bw_queue_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "queue";
  cfg->max_size = 0;
  cfg->policy = BW_QUEUE_REJECT;
  cfg->priority_levels = 256;
}

int bw_queue_config_validate(const bw_queue_config_t *c, bw_error_t *err) {
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  /* No default bound: an unbounded or accidentally huge queue is exactly the
   * failure this object exists to prevent, so the caller must choose. */
  if (c->max_size < 1)
    return bw_error_set(err, BW_E_INVAL, "max_size",
                        "max_size must be >= 1 (got %u)", c->max_size);
  if (c->max_size > BW_QUEUE_MAX_SIZE)
    return bw_error_set(err, BW_E_INVAL, "max_size",
                        "max_size must be <= %u (got %u)", BW_QUEUE_MAX_SIZE,
                        c->max_size);
  if ((unsigned)c->policy > (unsigned)BW_QUEUE_DROP_LOWEST)
    return bw_error_set(err, BW_E_INVAL, "policy",
                        "policy must be reject, drop_oldest or drop_lowest "
                        "(got %d)",
                        (int)c->policy);
  if (c->priority_levels < 1 || c->priority_levels > BW_QUEUE_MAX_LEVELS)
    return bw_error_set(err, BW_E_INVAL, "priority_levels",
                        "priority_levels must be in [1, %u] (got %u)",
                        BW_QUEUE_MAX_LEVELS, c->priority_levels);
  if (c->clock != NULL && c->clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "clock",
                        "clock must have a now_ns function");
  if (c->wall_clock != NULL && c->wall_clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "wall_clock",
                        "wall_clock must have a now_ns function");
  bw_error_clear(err);
  return BW_OK;
}

bw_queue_t *bw_queue_new(const bw_queue_config_t *cfg, bw_error_t *err) {
  bw_queue_t *q;
  uint32_t i;
  if (bw_queue_config_validate(cfg, err) != BW_OK) return NULL;
  q = bw_calloc(1, sizeof(*q));
  if (q == NULL) goto nomem;
  q->slots = bw_malloc((size_t)cfg->max_size * sizeof(bw__slot_t));
  q->ends = bw_malloc((size_t)cfg->priority_levels * 2 * sizeof(uint32_t));
  q->name = bw_strdup(cfg->name);
  if (q->slots == NULL || q->ends == NULL || q->name == NULL) goto nomem;
  if (pthread_mutex_init(&q->lock, NULL) != 0) goto nomem;
  q->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  /* Summaries are timed from creation; without a sink, no clock reading. */
  if (bw__summary_init(&q->drops,
                       cfg->sink != NULL ? bw__clock_now(q->clock) : 0) != 0) {
    pthread_mutex_destroy(&q->lock);
    goto nomem;
  }
  q->sink = cfg->sink;
  q->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  for (i = 0; i < cfg->max_size; i++)
    q->slots[i].anext = i + 1 < cfg->max_size ? i + 1 : BW__NIL;
  for (i = 0; i < cfg->priority_levels * 2; i++)
    q->ends[i] = BW__NIL;
  q->free_head = 0;
  q->ahead = q->atail = BW__NIL;
  q->max_size = cfg->max_size;
  q->levels = cfg->priority_levels;
  q->policy = cfg->policy;
  q->on_expired = cfg->on_expired;
  q->userdata = cfg->userdata;
  bw_error_clear(err);
  return q;
nomem:
  if (q != NULL) {
    bw_free(q->slots);
    bw_free(q->ends);
    bw_free(q->name);
    bw_free(q);
  }
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating queue \"%s\"",
               cfg->name);
  return NULL;
}

/* Emits the drops since the last summary as one queue_dropped event (the
 * summary's lock held, the queue's not). */
static void bw__q_summarise_locked(bw_queue_t *q, int64_t now) {
  uint64_t d[3];
  bw_field_t f[6];
  char reason[160];
  static const char *const keys[3] = {"rejected", "shed", "expired"};
  pthread_mutex_lock(&q->lock);
  d[0] = bw__summary_take(&q->drops, 0, q->rejected);
  d[1] = bw__summary_take(&q->drops, 1, q->shed);
  d[2] = bw__summary_take(&q->drops, 2, q->expired);
  pthread_mutex_unlock(&q->lock);
  if (d[0] + d[1] + d[2] == 0) return;
  f[0] = bw_field_uint("count", d[0] + d[1] + d[2]);
  for (int i = 0; i < 3; i++) {
    f[i + 1] = bw_field_uint(keys[i], d[i]);
  }
  f[4] = bw_field_uint("max_size", q->max_size);
  f[5] = bw_field_str("policy", bw_queue_policy_name(q->policy));
  snprintf(reason, sizeof(reason),
           "%llu items dropped: %llu refused with the queue full, %llu shed, "
           "%llu expired",
           (unsigned long long)f[0].v.u, (unsigned long long)d[0],
           (unsigned long long)d[1], (unsigned long long)d[2]);
  bw_event_emit(q->sink, q->wall, now, BW_EV_QUEUE_DROPPED, q->name, reason, f,
                6, NULL);
}

/* After a drop was counted, with a sink, outside the queue's lock: a
 * summary when one is due. */
static void bw__q_dropped(bw_queue_t *q) {
  int64_t now = bw__clock_now(q->clock);
  if (!bw__summary_begin(&q->drops, now, false)) return;
  bw__q_summarise_locked(q, now);
  bw__summary_end(&q->drops, now);
}

void bw_queue_free(bw_queue_t *q) {
  if (q == NULL) return;
  if (q->sink != NULL) { /* the last summary: the clock and sink outlive us */
    int64_t now = bw__clock_now(q->clock);
    bw__summary_begin(&q->drops, now, true);
    bw__q_summarise_locked(q, now);
    bw__summary_end(&q->drops, now);
  }
  bw__summary_destroy(&q->drops);
  pthread_mutex_destroy(&q->lock);
  bw_free(q->slots);
  bw_free(q->ends);
  bw_free(q->name);
  bw_free(q);
}

/* ---- the structure (all under q->lock) ----------------------------------- */

static inline uint32_t bw__first_level(const bw_queue_t *q) {
  unsigned w = (unsigned)__builtin_ctzll(q->summary);
  return w * 64u + (unsigned)__builtin_ctzll(q->bits[w]);
}

static inline uint32_t bw__last_level(const bw_queue_t *q) {
  unsigned w = 63u - (unsigned)__builtin_clzll(q->summary);
  return w * 64u + 63u - (unsigned)__builtin_clzll(q->bits[w]);
}

static inline void bw__insert(bw_queue_t *q, void *data, uint32_t prio,
                              int64_t deadline_ns, uint64_t seq) {
  uint32_t i = q->free_head;
  bw__slot_t *s = &q->slots[i];
  uint32_t *head = &q->ends[2 * prio], *tail = head + 1;
  uint32_t size;
  q->free_head = s->anext;
  s->data = data;
  s->deadline_ns = deadline_ns;
  s->seq = seq;
  s->prio = prio;
  /* Append to the priority's list. */
  s->bnext = BW__NIL;
  s->bprev = *tail;
  if (*tail != BW__NIL)
    q->slots[*tail].bnext = i;
  else {
    *head = i;
    q->bits[prio >> 6] |= UINT64_C(1) << (prio & 63);
    q->summary |= UINT64_C(1) << (prio >> 6);
  }
  *tail = i;
  /* Append to the arrival list (drop-oldest only: the other policies never
   * ask for the oldest, and skipping it saves two cache misses a call on a
   * deep queue). */
  if (q->policy == BW_QUEUE_DROP_OLDEST) {
    s->anext = BW__NIL;
    s->aprev = q->atail;
    if (q->atail != BW__NIL)
      q->slots[q->atail].anext = i;
    else
      q->ahead = i;
    q->atail = i;
  }
  size = atomic_load_explicit(&q->size, memory_order_relaxed) + 1;
  atomic_store_explicit(&q->size, size, memory_order_relaxed);
  if (size > q->max_seen) q->max_seen = size;
}

/* Unlinks slot i from both lists, copies it to *out and frees the slot. */
static inline void bw__remove(bw_queue_t *q, uint32_t i, bw_queue_item_t *out) {
  bw__slot_t *s = &q->slots[i];
  uint32_t prio = s->prio;
  out->data = s->data;
  out->priority = prio;
  out->reserved = 0;
  out->deadline_ns = s->deadline_ns;
  out->seq = s->seq;
  if (s->bprev != BW__NIL)
    q->slots[s->bprev].bnext = s->bnext;
  else
    q->ends[2 * prio] = s->bnext;
  if (s->bnext != BW__NIL)
    q->slots[s->bnext].bprev = s->bprev;
  else
    q->ends[2 * prio + 1] = s->bprev;
  if (q->ends[2 * prio] == BW__NIL) {
    uint64_t *w = &q->bits[prio >> 6];
    *w &= ~(UINT64_C(1) << (prio & 63));
    if (*w == 0) q->summary &= ~(UINT64_C(1) << (prio >> 6));
  }
  if (q->policy == BW_QUEUE_DROP_OLDEST) {
    if (s->aprev != BW__NIL)
      q->slots[s->aprev].anext = s->anext;
    else
      q->ahead = s->anext;
    if (s->anext != BW__NIL)
      q->slots[s->anext].aprev = s->aprev;
    else
      q->atail = s->aprev;
  }
  s->data = NULL;
  s->anext = q->free_head;
  q->free_head = i;
  atomic_store_explicit(
      &q->size, atomic_load_explicit(&q->size, memory_order_relaxed) - 1,
      memory_order_relaxed);
}

/* ---- verbs ------------------------------------------------------------- */

int bw_queue_enqueue(bw_queue_t *q, void *data, uint32_t priority,
                     int64_t deadline_ns, bw_queue_item_t *shed) {
  int rc;
  uint64_t seq;
  if (q == NULL) return BW_E_INVAL;
  if (priority >= q->levels) return BW_E_RANGE;
  if (shed == NULL && q->policy != BW_QUEUE_REJECT) return BW_E_INVAL;
  pthread_mutex_lock(&q->lock);
  seq = ++q->seq;
  if (atomic_load_explicit(&q->size, memory_order_relaxed) < q->max_size) {
    bw__insert(q, data, priority, deadline_ns, seq);
    q->admitted++;
    rc = BW_QUEUE_ADMITTED;
  } else if (q->policy == BW_QUEUE_DROP_OLDEST) {
    bw__remove(q, q->ahead, shed);
    bw__insert(q, data, priority, deadline_ns, seq);
    q->admitted++;
    q->shed++;
    rc = BW_QUEUE_SHED;
  } else if (q->policy == BW_QUEUE_DROP_LOWEST &&
             bw__last_level(q) > priority) {
    /* Strictly more urgent only: on a tie the queued item stays (the
     * backpressure article's carousel). */
    bw__remove(q, q->ends[2 * bw__last_level(q) + 1], shed);
    bw__insert(q, data, priority, deadline_ns, seq);
    q->admitted++;
    q->shed++;
    rc = BW_QUEUE_SHED;
  } else {
    q->rejected++;
    rc = BW_QUEUE_REJECTED;
  }
  pthread_mutex_unlock(&q->lock);
  if (q->sink != NULL && rc != BW_QUEUE_ADMITTED) bw__q_dropped(q);
  return rc;
}

int bw_queue_dequeue(bw_queue_t *q, bw_queue_item_t *out) {
  int64_t now = 0;
  bool have_now = false;
  if (q == NULL || out == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    uint32_t i;
    int64_t dl;
    bw_queue_item_t item;
    if (atomic_load_explicit(&q->size, memory_order_relaxed) == 0) {
      pthread_mutex_unlock(&q->lock);
      return BW_E_NOTFOUND;
    }
    i = q->ends[2 * bw__first_level(q)];
    dl = q->slots[i].deadline_ns;
    if (dl != BW_QUEUE_NO_DEADLINE) {
      /* One reading per call: every item this call judges is judged against
       * the same instant, and items without deadlines cost no clock read. */
      if (!have_now) {
        now = bw__clock_now(q->clock);
        have_now = true;
      }
      if (now >= dl) {
        bw__remove(q, i, &item);
        q->expired++;
        if (q->on_expired == NULL) {
          pthread_mutex_unlock(&q->lock);
          *out = item;
          if (q->sink != NULL) bw__q_dropped(q);
          return BW_E_DEADLINE;
        }
        pthread_mutex_unlock(&q->lock);
        if (q->sink != NULL) bw__q_dropped(q);
        q->on_expired(&item, now, q->userdata);
        pthread_mutex_lock(&q->lock);
        continue;
      }
    }
    bw__remove(q, i, out);
    q->dequeued++;
    pthread_mutex_unlock(&q->lock);
    return BW_OK;
  }
}

uint32_t bw_queue_size(const bw_queue_t *q) {
  if (q == NULL) return 0;
  return atomic_load_explicit(&q->size, memory_order_relaxed);
}

double bw_queue_pressure(const bw_queue_t *q) {
  if (q == NULL) return 0.0;
  return (double)atomic_load_explicit(&q->size, memory_order_relaxed) /
         (double)q->max_size;
}

const char *bw_queue_name(const bw_queue_t *q) {
  return q == NULL ? "" : q->name;
}

void bw_queue_stats(const bw_queue_t *q, bw_queue_stats_t *out) {
  bw_queue_t *m = (bw_queue_t *)(uintptr_t)q; /* the lock is not state */
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (q == NULL) return;
  pthread_mutex_lock(&m->lock);
  out->admitted = q->admitted;
  out->rejected = q->rejected;
  out->enqueued = q->admitted + q->rejected;
  out->shed = q->shed;
  out->expired = q->expired;
  out->dequeued = q->dequeued;
  out->size = atomic_load_explicit(&m->size, memory_order_relaxed);
  out->max_size_seen = q->max_seen;
  out->max_size = q->max_size;
  out->policy = q->policy;
  pthread_mutex_unlock(&m->lock);
}

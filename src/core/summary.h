/* Rejection summaries, private to the core: an object that refuses calls
 * (bulkhead, rate limiter, budget, stage) reports them as one event at most
 * once a second, like the breaker's calls_rejected, and once more when it is
 * freed, so no refusal goes unreported and a storm of refusals costs one
 * event a second.
 *
 * Use: after counting a refusal (in the object's stripes), a caller with a
 * sink calls bw__summary_begin(s, now, false); when it answers true the
 * caller holds the summary's lock, sums its counters, emits the deltas
 * against s->taken (updating them) and calls bw__summary_end(s, now). The
 * object's free calls begin with force = true. The counters are the
 * object's own; `taken` holds their values at the last summary. */
#ifndef BREAKWATER_SUMMARY_H
#define BREAKWATER_SUMMARY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "breakwater/common.h"

#define BW__SUMMARY_EVERY_NS BW_NS_PER_S
#define BW__SUMMARY_COUNTERS 4

typedef struct bw__summary_s {
  _Atomic int64_t at_ns; /* when the last summary was taken (or creation) */
  pthread_mutex_t lock;  /* one summariser at a time; guards taken */
  uint64_t taken[BW__SUMMARY_COUNTERS]; /* counters at the last summary */
} bw__summary_t;

/* 0, or -1 when the lock cannot be created. */
static inline int bw__summary_init(bw__summary_t *s, int64_t now) {
  atomic_init(&s->at_ns, now);
  for (int i = 0; i < BW__SUMMARY_COUNTERS; i++)
    s->taken[i] = 0;
  return pthread_mutex_init(&s->lock, NULL) == 0 ? 0 : -1;
}

static inline void bw__summary_destroy(bw__summary_t *s) {
  pthread_mutex_destroy(&s->lock);
}

/* True (the lock held) when the caller should summarise now: a second has
 * passed since the last summary and no one else is at it, or force. */
static inline bool bw__summary_begin(bw__summary_t *s, int64_t now,
                                     bool force) {
  if (force) {
    pthread_mutex_lock(&s->lock);
    return true;
  }
  if (now - atomic_load_explicit(&s->at_ns, memory_order_relaxed) <
      BW__SUMMARY_EVERY_NS)
    return false;
  if (pthread_mutex_trylock(&s->lock) != 0) return false;
  if (now - atomic_load_explicit(&s->at_ns, memory_order_relaxed) <
      BW__SUMMARY_EVERY_NS) {
    pthread_mutex_unlock(&s->lock);
    return false;
  }
  return true;
}

static inline void bw__summary_end(bw__summary_t *s, int64_t now) {
  atomic_store_explicit(&s->at_ns, now, memory_order_relaxed);
  pthread_mutex_unlock(&s->lock);
}

/* total - taken[i], and taken[i] = total (the lock held). */
static inline uint64_t bw__summary_take(bw__summary_t *s, int i,
                                        uint64_t total) {
  uint64_t d = total - s->taken[i];
  s->taken[i] = total;
  return d;
}

#endif /* BREAKWATER_SUMMARY_H */

/* The threads driver's blocking bulkhead acquire (threads.h): a waiter of
 * the bulkhead's FIFO queue whose grant callback wakes the blocked thread.
 * The bulkhead decides everything (admission, the wait's bound, the
 * counters); this file only waits. Public API only. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "breakwater/threads.h"

/* The blocked thread's side of a queued wait. The grant callback runs on
 * the releasing thread: it copies the permit and signals under `lock`, and
 * touches nothing after unlocking, so the waiter may return (and this
 * struct, on its stack, go) as soon as it sees `granted`. */
typedef struct bw__thr_wait_s {
  pthread_mutex_t lock;
  pthread_cond_t cv; /* on CLOCK_MONOTONIC */
  bool granted;
  bw_permit_t permit;
} bw__thr_wait_t;

static void bw__thr_granted(bw_bulkhead_waiter_t *w, const bw_permit_t *p,
                            void *userdata) {
  bw__thr_wait_t *t = userdata;
  (void)w;
  pthread_mutex_lock(&t->lock);
  t->permit = *p;
  t->granted = true;
  pthread_cond_signal(&t->cv);
  pthread_mutex_unlock(&t->lock);
}

/* CLOCK_MONOTONIC now + wait_ms, as an absolute time for the wait. */
static void bw__thr_abstime(int64_t wait_ms, struct timespec *ts) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += (time_t)(wait_ms / 1000);
  ts->tv_nsec += (long)(wait_ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

/* A condition variable of our own, on CLOCK_MONOTONIC, so a release wakes
 * exactly the thread it hands its slot to. BW_E_NOMEM when either part
 * cannot be created. */
static int bw__thr_wait_init(bw__thr_wait_t *t) {
  pthread_condattr_t ca;
  int rc;
  memset(t, 0, sizeof(*t));
  if (pthread_condattr_init(&ca) != 0) return BW_E_NOMEM;
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  rc = pthread_cond_init(&t->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc != 0) return BW_E_NOMEM;
  if (pthread_mutex_init(&t->lock, NULL) != 0) {
    pthread_cond_destroy(&t->cv);
    return BW_E_NOMEM;
  }
  return BW_OK;
}

int bw_bulkhead_acquire(bw_bulkhead_t *bh, bw_permit_t *p) {
  bw_bulkhead_waiter_t w;
  bw__thr_wait_t t;
  struct timespec ts;
  int64_t wait_ms = 0;
  int rc;
  if (bh == NULL || p == NULL) return BW_E_INVAL;
  /* Made before asking: the grant may come the moment w is queued. */
  if (bw__thr_wait_init(&t) != BW_OK) return BW_E_NOMEM;
  memset(&w, 0, sizeof(w));
  rc = bw_bulkhead_acquire_timed(bh, p, &w, bw__thr_granted, &t, &wait_ms);
  if (rc == BW_BULKHEAD_QUEUED) {
    bw__thr_abstime(wait_ms, &ts);
    pthread_mutex_lock(&t.lock);
    while (!t.granted) {
      if (pthread_cond_timedwait(&t.cv, &t.lock, &ts) == ETIMEDOUT) break;
    }
    /* Out of time. Still queued: removed and counted as a wait timeout. Not
     * found: a release granted the slot meanwhile and its callback is on
     * its way (blocked on t.lock at worst) — wait for it, the slot is ours.
     * Holding t.lock here is safe: callbacks run without the bulkhead's
     * lock. */
    if (!t.granted && bw_bulkhead_cancel_timeout(bh, &w) != BW_OK) {
      while (!t.granted)
        pthread_cond_wait(&t.cv, &t.lock);
    }
    if (t.granted) {
      *p = t.permit;
      rc = BW_OK;
    } else {
      rc = BW_E_FULL;
    }
    pthread_mutex_unlock(&t.lock);
  }
  pthread_cond_destroy(&t.cv);
  pthread_mutex_destroy(&t.lock);
  return rc;
}

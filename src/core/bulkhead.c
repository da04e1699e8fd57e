/* Bulkhead: a counting semaphore with a FIFO queue of waiters.
 *
 * Design (docs/bulkhead.md has the user's view):
 * - `in_use` counts held slots. With nobody queued, try_acquire is a CAS that
 *   raises it below max_concurrent and release a CAS that lowers it: no lock,
 *   no allocation. Counters live in per-thread stripes.
 * - Waiters are caller-owned nodes with a grant callback in one doubly
 *   linked FIFO list under `lock` (a thread blocked in the threads driver's
 *   bw_bulkhead_acquire is one too: its callback wakes it). The core never
 *   blocks. A release that sees `waiting` > 0 takes the lock and hands its
 *   slot straight to the head (in_use stays the same), so a newcomer can
 *   never take the slot first.
 * - The lost-wakeup race — a waiter queues just as the last slot is freed on
 *   the lock-free path — is closed Dekker-style: the waiter raises `waiting`
 *   then re-reads `in_use`; the releaser lowers `in_use` then re-reads
 *   `waiting`; both sequentially consistent, so at least one of them sees the
 *   other and hands out the slot (`pump`).
 * - Callbacks run after the lock is dropped, so they may call back in. */
#include "breakwater/bulkhead.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "summary.h"

#define BW__BH_MAX_CONCURRENT 1000000u
#define BW__BH_MAX_WAITING 1000000u
#define BW__BH_MAX_MS INT64_C(86400000)

/* Waiter states: magic values so that a stray, never-queued node is very
 * unlikely to look queued. */
#define BW__W_QUEUED 0x51554555
#define BW__W_GRANTED 0x47524e54
#define BW__W_DONE 0x444f4e45

typedef struct bw__bh_stripe_s {
  _Atomic uint64_t admitted;
  _Atomic uint64_t rejected_full;
  _Atomic uint64_t rejected_deadline;
  _Atomic uint64_t released;
  _Atomic uint64_t timeouts;
} BW__PAIR_ALIGNED bw__bh_stripe_t;

struct bw_bulkhead_s {
  bw_limit_t iface; /* must stay first */
  /* max_concurrent: set under `lock` (bw_bulkhead_set_max_concurrent),
   * read without it by admissions. */
  _Atomic uint32_t max;
  uint32_t max_waiting;
  int64_t max_wait_ms;
  int64_t timeout_ns; /* 0 = none of its own */
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  char *name;

  /* Hot: read by every call, written by every admission and release. */
  BW__PAIR_ALIGNED _Atomic uint32_t in_use;
  _Atomic uint32_t waiting;

  /* Waiting paths only. */
  BW__PAIR_ALIGNED pthread_mutex_t lock;
  bw_bulkhead_waiter_t *head;
  bw_bulkhead_waiter_t *tail;
  _Atomic uint64_t admitted_after_wait;
  _Atomic uint64_t wait_timeouts;
  _Atomic uint64_t cancelled;

  /* Refusals, summarised (only with a sink). */
  bw__summary_t summary;

  bw__bh_stripe_t stripes[BW__STRIPES];
};

/* max_concurrent now (it may change live). */
static inline uint32_t bw__bh_max(const bw_bulkhead_t *bh) {
  return atomic_load_explicit(&bh->max, memory_order_relaxed);
}

void bw_bulkhead_config_init(bw_bulkhead_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "bulkhead";
  cfg->max_concurrent = 10;
  cfg->max_wait_ms = 2000;
  cfg->timeout_ms = 30000;
  cfg->max_waiting = 1000;
  cfg->clock = NULL;
}

static const struct {
  const char *name;
  uint32_t max_concurrent;
  int64_t timeout_ms;
} bw__bh_presets[] = {
    {"booking_agent", 10, 30000},
    {"search_agent", 20, 10000},
    {"payment_agent", 5, 15000},
    {"recovery_worker", 3, 120000},
};

bool bw_bulkhead_config_preset(bw_bulkhead_config_t *cfg, const char *name) {
  size_t i;
  if (cfg == NULL) return false;
  bw_bulkhead_config_init(cfg);
  if (name == NULL) return false;
  cfg->name = name;
  for (i = 0; i < sizeof(bw__bh_presets) / sizeof(bw__bh_presets[0]); i++) {
    if (strcmp(bw__bh_presets[i].name, name) == 0) {
      cfg->max_concurrent = bw__bh_presets[i].max_concurrent;
      cfg->timeout_ms = bw__bh_presets[i].timeout_ms;
      return true;
    }
  }
  return false; /* the asyncio toolkit's fallback: BulkheadConfig(10, 30.0) */
}

int bw_bulkhead_config_validate(const bw_bulkhead_config_t *c,
                                bw_error_t *err) {
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (c->max_concurrent < 1 || c->max_concurrent > BW__BH_MAX_CONCURRENT)
    return bw_error_set(err, BW_E_INVAL, "max_concurrent",
                        "max_concurrent must be in 1..%u (got %u)",
                        BW__BH_MAX_CONCURRENT, c->max_concurrent);
  if (c->max_wait_ms < 0 || c->max_wait_ms > BW__BH_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "max_wait_ms",
                        "max_wait_ms must be in 0..%lld (got %lld)",
                        (long long)BW__BH_MAX_MS, (long long)c->max_wait_ms);
  if (c->timeout_ms < 0 || c->timeout_ms > BW__BH_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "timeout_ms",
                        "timeout_ms must be in 0..%lld, 0 for none (got %lld)",
                        (long long)BW__BH_MAX_MS, (long long)c->timeout_ms);
  if (c->max_waiting > BW__BH_MAX_WAITING)
    return bw_error_set(err, BW_E_INVAL, "max_waiting",
                        "max_waiting must be in 0..%u (got %u)",
                        BW__BH_MAX_WAITING, c->max_waiting);
  if (c->clock != NULL && c->clock->now_ns == NULL)
    return bw_error_set(err, BW_E_INVAL, "clock",
                        "clock must have a now_ns function");
  bw_error_clear(err);
  return BW_OK;
}

/* ---- the interface -------------------------------------------------------
 */

/* The interface is the object's first member, so a pointer to it is a
 * pointer to the bulkhead (the cast goes through void: the object's stricter
 * alignment is guaranteed by its allocation). */

static int bw__bh_if_try_acquire(bw_limit_t *l, bw_permit_t *p) {
  return bw_bulkhead_try_acquire((bw_bulkhead_t *)(void *)l, p);
}
static int bw__bh_if_release(bw_limit_t *l, const bw_permit_t *p,
                             bw_limit_outcome_t o) {
  (void)o; /* a bulkhead counts slots, not outcomes */
  return bw_bulkhead_release((bw_bulkhead_t *)(void *)l, p);
}
static uint32_t bw__bh_if_limit(const bw_limit_t *l) {
  return bw__bh_max((const bw_bulkhead_t *)(const void *)l);
}
static uint32_t bw__bh_if_in_flight(const bw_limit_t *l) {
  const bw_bulkhead_t *bh = (const bw_bulkhead_t *)(const void *)l;
  return atomic_load_explicit(&bh->in_use, memory_order_relaxed);
}
static const char *bw__bh_if_name(const bw_limit_t *l) {
  return ((const bw_bulkhead_t *)(const void *)l)->name;
}
static void bw__bh_if_free(bw_limit_t *l) {
  bw_bulkhead_free((bw_bulkhead_t *)(void *)l);
}

static const bw_limit_vtable_t bw__bh_vtable = {"bulkhead",
                                                bw__bh_if_try_acquire,
                                                bw__bh_if_release,
                                                bw__bh_if_limit,
                                                bw__bh_if_in_flight,
                                                bw__bh_if_name,
                                                bw__bh_if_free,
                                                0,
                                                NULL};

bw_bulkhead_t *bw_bulkhead_new(const bw_bulkhead_config_t *cfg,
                               bw_error_t *err) {
  bw_bulkhead_t *bh;
  if (bw_bulkhead_config_validate(cfg, err) != BW_OK) return NULL;
  bh = bw_calloc_aligned(sizeof(*bh));
  if (bh == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating bulkhead");
    return NULL;
  }
  bh->name = bw_strdup(cfg->name);
  if (bh->name == NULL) {
    bw_free_aligned(bh);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating bulkhead");
    return NULL;
  }
  if (pthread_mutex_init(&bh->lock, NULL) != 0) {
    bw_free(bh->name);
    bw_free_aligned(bh);
    bw_error_set(err, BW_E_NOMEM, "", "cannot create the bulkhead's lock");
    return NULL;
  }
  bh->clock = cfg->clock != NULL        ? cfg->clock
              : cfg->timeout_ms >= 1000 ? bw_clock_monotonic_coarse()
                                        : bw_clock_monotonic();
  /* Summaries are timed from creation; without a sink, no clock reading. */
  if (bw__summary_init(&bh->summary,
                       cfg->sink != NULL ? bw__clock_now(bh->clock) : 0) != 0) {
    pthread_mutex_destroy(&bh->lock);
    bw_free(bh->name);
    bw_free_aligned(bh);
    bw_error_set(err, BW_E_NOMEM, "", "cannot create the bulkhead's lock");
    return NULL;
  }
  bh->iface.vt = &bw__bh_vtable;
  atomic_init(&bh->max, cfg->max_concurrent);
  bh->max_waiting = cfg->max_waiting;
  bh->max_wait_ms = cfg->max_wait_ms;
  bh->timeout_ns = cfg->timeout_ms * BW_NS_PER_MS;
  /* The clock (set above): an explicit clock is honoured. By default, an
   * execution deadline of a second or more is timed on the coarse clock (4
   * ms ticks: under 0.4 % of the timeout), a shorter one on the precise
   * clock. */
  bh->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  bh->sink = cfg->sink;
  atomic_init(&bh->in_use, 0);
  atomic_init(&bh->waiting, 0);
  bw_error_clear(err);
  return bh;
}

/* Emits the refusals since the last summary as one bulkhead_rejected event
 * (the summary's lock held). */
static void bw__bh_summarise_locked(bw_bulkhead_t *bh, int64_t now) {
  uint64_t t[3] = {0, 0, 0}, full, deadline, waits;
  for (unsigned i = 0; i < BW__STRIPES; i++) {
    t[0] += BW__LOAD(bh->stripes[i].rejected_full);
    t[1] += BW__LOAD(bh->stripes[i].rejected_deadline);
  }
  t[2] = BW__LOAD(bh->wait_timeouts);
  full = bw__summary_take(&bh->summary, 0, t[0]);
  deadline = bw__summary_take(&bh->summary, 1, t[1]);
  waits = bw__summary_take(&bh->summary, 2, t[2]);
  if (full + deadline + waits == 0) return;
  {
    bw_field_t f[5];
    char reason[160];
    const char *keys[4] = {"count", "full", "deadline", "wait_timeouts"};
    uint64_t v[4] = {full + deadline + waits, full, deadline, waits};
    for (int i = 0; i < 4; i++) {
      f[i] = bw_field_uint(keys[i], v[i]);
    }
    f[4] = bw_field_uint("max_concurrent", bw__bh_max(bh));
    snprintf(reason, sizeof(reason),
             "%llu calls rejected: %llu with every slot taken, %llu past "
             "their deadline, %llu waits timed out",
             (unsigned long long)v[0], (unsigned long long)full,
             (unsigned long long)deadline, (unsigned long long)waits);
    bw_event_emit(bh->sink, bh->wall, now, BW_EV_BULKHEAD_REJECTED, bh->name,
                  reason, f, 5, NULL);
  }
}

/* After a refusal was counted: a summary when one is due. */
static void bw__bh_refused(bw_bulkhead_t *bh) {
  int64_t now;
  if (bh->sink == NULL) return;
  now = bw__clock_now(bh->clock);
  if (!bw__summary_begin(&bh->summary, now, false)) return;
  bw__bh_summarise_locked(bh, now);
  bw__summary_end(&bh->summary, now);
}

void bw_bulkhead_free(bw_bulkhead_t *bh) {
  if (bh == NULL) return;
  if (bh->sink != NULL) { /* the last summary: the clock and sink outlive us */
    int64_t now = bw__clock_now(bh->clock);
    bw__summary_begin(&bh->summary, now, true);
    bw__bh_summarise_locked(bh, now);
    bw__summary_end(&bh->summary, now);
  }
  bw__summary_destroy(&bh->summary);
  pthread_mutex_destroy(&bh->lock);
  bw_free(bh->name);
  bw_free_aligned(bh);
}

const char *bw_bulkhead_name(const bw_bulkhead_t *bh) {
  return bh == NULL ? "" : bh->name;
}

bw_limit_t *bw_bulkhead_as_limit(bw_bulkhead_t *bh) {
  return bh == NULL ? NULL : &bh->iface;
}

/* ---- permits -------------------------------------------------------------
 */

/* Fills a permit admitted at now_ns; its execution deadline is
 * min(now + timeout, the acquiring thread's deadline). */
static void bw__bh_fill(const bw_bulkhead_t *bh, bw_permit_t *p, int64_t now,
                        int64_t thread_deadline_ns) {
  int64_t dl = BW_DEADLINE_NONE_NS;
  if (bh->timeout_ns > 0)
    dl = now > BW_DEADLINE_NONE_NS - 1 - bh->timeout_ns
             ? BW_DEADLINE_NONE_NS - 1
             : now + bh->timeout_ns;
  if (thread_deadline_ns < dl) dl = thread_deadline_ns;
  bw_permit_init(p, now, BW_PERMIT_NORMAL);
  p->deadline_ns = dl;
}

int64_t bw_bulkhead_deadline_ns(const bw_permit_t *p) {
  return p == NULL ? INT64_MAX : p->deadline_ns;
}

bool bw_bulkhead_expired(const bw_permit_t *p, int64_t now_ns) {
  int64_t dl = bw_bulkhead_deadline_ns(p);
  return dl != BW_DEADLINE_NONE_NS && now_ns >= dl;
}

/* The lock-free admission: a CAS below max, only while nobody is queued. */
static bool bw__bh_take(bw_bulkhead_t *bh) {
  uint32_t cur = atomic_load_explicit(&bh->in_use, memory_order_relaxed);
  while (cur < bw__bh_max(bh)) {
    if (atomic_compare_exchange_weak_explicit(&bh->in_use, &cur, cur + 1,
                                              memory_order_seq_cst,
                                              memory_order_relaxed))
      return true;
  }
  return false;
}

/* Reads the thread deadline into *td and, only when a deadline is involved
 * (the bulkhead's timeout or the thread's), the clock into *now; otherwise
 * *now is 0 and the permit will carry no deadline, so no one needs the time
 * (the clock-free fast path). BW_E_DEADLINE (counted) if the thread deadline
 * has passed. */
static int bw__bh_now(bw_bulkhead_t *bh, int64_t *now, int64_t *td) {
  *td = bw__current.at_ns;
  if (bh->timeout_ns == 0 && *td == BW_DEADLINE_NONE_NS) {
    *now = 0;
    return BW_OK;
  }
  *now = bw__clock_now(bh->clock);
  if (*td != BW_DEADLINE_NONE_NS && *now >= *td) {
    bw__bump(&bh->stripes[bw__stripe()].rejected_deadline, bw__stripe());
    return BW_E_DEADLINE;
  }
  return BW_OK;
}

/* Admits at once when no waiter is queued ahead and a slot is free: the
 * permit filled and counted on stripe s. */
static inline bool bw__bh_admit_at_once(bw_bulkhead_t *bh, bw_permit_t *p,
                                        int64_t now, int64_t td, unsigned s) {
  if (atomic_load_explicit(&bh->waiting, memory_order_seq_cst) != 0 ||
      !bw__bh_take(bh))
    return false;
  bw__bh_fill(bh, p, now, td);
  bw__bump(&bh->stripes[s].admitted, s);
  return true;
}

int bw_bulkhead_try_acquire(bw_bulkhead_t *bh, bw_permit_t *p) {
  int64_t now, td;
  unsigned s;
  if (bh == NULL || p == NULL) return BW_E_INVAL;
  if (bw__bh_now(bh, &now, &td) != BW_OK) {
    bw__bh_refused(bh);
    return BW_E_DEADLINE;
  }
  s = bw__stripe();
  if (bw__bh_admit_at_once(bh, p, now, td, s)) return BW_OK;
  bw__bump(&bh->stripes[s].rejected_full, s);
  bw__bh_refused(bh);
  return BW_E_FULL;
}

/* ---- the queue (under lock) ----------------------------------------------
 */

static void bw__bh_unlink(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w) {
  if (w->prev != NULL)
    w->prev->next = w->next;
  else
    bh->head = w->next;
  if (w->next != NULL)
    w->next->prev = w->prev;
  else
    bh->tail = w->prev;
  w->next = w->prev = NULL;
  atomic_fetch_sub_explicit(&bh->waiting, 1, memory_order_seq_cst);
}

/* Gives a slot (already counted in in_use) to the head waiter and pushes it
 * on *ready, whose callbacks the caller runs after dropping the lock. */
static void bw__bh_grant_head(bw_bulkhead_t *bh, int64_t now,
                              bw_bulkhead_waiter_t **ready) {
  bw_bulkhead_waiter_t *w = bh->head;
  unsigned s = bw__stripe();
  bw__bh_unlink(bh, w);
  bw__bh_fill(bh, &w->permit, now, w->thread_deadline_ns);
  bw__bump(&bh->stripes[s].admitted, s);
  atomic_fetch_add_explicit(&bh->admitted_after_wait, 1, memory_order_relaxed);
  w->state = BW__W_GRANTED;
  w->next = *ready;
  *ready = w;
}

/* Hands every free slot to the queue's head, in order. */
static void bw__bh_pump(bw_bulkhead_t *bh, bw_bulkhead_waiter_t **ready) {
  int64_t now = 0;
  bool have_now = false;
  while (bh->head != NULL && bw__bh_take(bh)) {
    if (!have_now) now = bw__clock_now(bh->clock), have_now = true;
    bw__bh_grant_head(bh, now, ready);
  }
}

/* Runs the callbacks of granted async waiters, oldest first (the list is
 * newest first). Called without the lock. */
static void bw__bh_run_ready(bw_bulkhead_waiter_t *ready) {
  bw_bulkhead_waiter_t *rev = NULL;
  while (ready != NULL) {
    bw_bulkhead_waiter_t *n = ready->next;
    ready->next = rev;
    rev = ready;
    ready = n;
  }
  while (rev != NULL) {
    bw_bulkhead_waiter_t *n = rev->next; /* the callback may free rev */
    bw_bulkhead_grant_cb cb = rev->cb;
    void *ud = rev->userdata;
    /* state stays GRANTED: only the lock holder may write it, and cancel
     * reads it under the lock. */
    rev->next = NULL;
    cb(rev, &rev->permit, ud);
    rev = n;
  }
}

/* Queues w (under lock) unless the queue is full; then hands out any slot
 * freed meanwhile. Returns false when the queue is full. */
static bool bw__bh_enqueue(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w,
                           bw_bulkhead_waiter_t **ready) {
  if (atomic_load_explicit(&bh->waiting, memory_order_relaxed) >=
      bh->max_waiting)
    return false;
  w->state = BW__W_QUEUED;
  w->next = NULL;
  w->prev = bh->tail;
  if (bh->tail != NULL)
    bh->tail->next = w;
  else
    bh->head = w;
  bh->tail = w;
  atomic_fetch_add_explicit(&bh->waiting, 1, memory_order_seq_cst);
  bw__bh_pump(bh, ready);
  return true;
}

/* The queueing admissions' common body. wait_ms NULL: bw_bulkhead_acquire_async
 * (no wait bound of its own). Otherwise bw_bulkhead_acquire_timed: a call
 * that would have to queue with no time to wait is refused (rejected_full)
 * instead, and *wait_ms receives the bound of a queued wait. */
static int bw__bh_acquire_queued(bw_bulkhead_t *bh, bw_permit_t *p,
                                 bw_bulkhead_waiter_t *w,
                                 bw_bulkhead_grant_cb cb, void *userdata,
                                 int64_t *wait_ms) {
  bw_bulkhead_waiter_t *ready = NULL;
  int64_t now, td, ms = 0;
  unsigned s;
  int rc;
  if (bh == NULL || p == NULL || w == NULL || cb == NULL) return BW_E_INVAL;
  if (bw__bh_now(bh, &now, &td) != BW_OK) {
    bw__bh_refused(bh);
    return BW_E_DEADLINE;
  }
  s = bw__stripe();
  if (bw__bh_admit_at_once(bh, p, now, td, s)) return BW_OK;
  if (wait_ms != NULL) {
    /* max_wait_ms narrowed to the thread's remaining deadline; no time to
     * wait is a refusal, not a queued waiter timed out at once. */
    ms = bw_deadline_timeout_ms((bw_deadline_t){td}, now, bh->max_wait_ms);
    if (bh->max_wait_ms == 0) ms = 0;
    if (ms <= 0) {
      bw__bump(&bh->stripes[s].rejected_full, s);
      bw__bh_refused(bh);
      return BW_E_FULL;
    }
  }
  pthread_mutex_lock(&bh->lock);
  if (w->state == BW__W_QUEUED) {
    pthread_mutex_unlock(&bh->lock);
    return BW_E_INVAL;
  }
  w->cb = cb;
  w->userdata = userdata;
  w->thread_deadline_ns = td;
  if (!bw__bh_enqueue(bh, w, &ready)) {
    rc = BW_E_FULL;
    bw__bump(&bh->stripes[s].rejected_full, s);
  } else if (w->state == BW__W_GRANTED) {
    /* A slot was freed while we queued and we were the head: admitted now,
     * so answer directly instead of calling back. The grant counted it as
     * admitted after a wait; an async waiter never waited, a timed one (a
     * blocked thread) did join the queue, as it always has. */
    bw_bulkhead_waiter_t **pp = &ready;
    while (*pp != w)
      pp = &(*pp)->next;
    *pp = w->next;
    w->next = NULL;
    w->state = BW__W_DONE;
    *p = w->permit;
    if (wait_ms == NULL)
      atomic_fetch_sub_explicit(&bh->admitted_after_wait, 1,
                                memory_order_relaxed);
    rc = BW_OK;
  } else {
    rc = BW_BULKHEAD_QUEUED;
    if (wait_ms != NULL) *wait_ms = ms;
  }
  pthread_mutex_unlock(&bh->lock);
  bw__bh_run_ready(ready);
  if (rc == BW_E_FULL) bw__bh_refused(bh);
  return rc;
}

int bw_bulkhead_acquire_async(bw_bulkhead_t *bh, bw_permit_t *p,
                              bw_bulkhead_waiter_t *w, bw_bulkhead_grant_cb cb,
                              void *userdata) {
  return bw__bh_acquire_queued(bh, p, w, cb, userdata, NULL);
}

int bw_bulkhead_acquire_timed(bw_bulkhead_t *bh, bw_permit_t *p,
                              bw_bulkhead_waiter_t *w, bw_bulkhead_grant_cb cb,
                              void *userdata, int64_t *wait_ms) {
  if (wait_ms == NULL) return BW_E_INVAL;
  return bw__bh_acquire_queued(bh, p, w, cb, userdata, wait_ms);
}

/* Removes w if it is still queued, counting it in *counter. */
static int bw__bh_remove(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w,
                         _Atomic uint64_t *counter) {
  int rc = BW_E_NOTFOUND;
  pthread_mutex_lock(&bh->lock);
  if (w->state == BW__W_QUEUED && w->cb != NULL) {
    bw__bh_unlink(bh, w);
    w->state = BW__W_DONE;
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    rc = BW_OK;
  }
  pthread_mutex_unlock(&bh->lock);
  return rc;
}

int bw_bulkhead_cancel(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w) {
  if (bh == NULL || w == NULL) return BW_E_INVAL;
  return bw__bh_remove(bh, w, &bh->cancelled);
}

int bw_bulkhead_cancel_timeout(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w) {
  int rc;
  if (bh == NULL || w == NULL) return BW_E_INVAL;
  rc = bw__bh_remove(bh, w, &bh->wait_timeouts);
  if (rc == BW_OK) bw__bh_refused(bh);
  return rc;
}

int bw_bulkhead_release(bw_bulkhead_t *bh, const bw_permit_t *p) {
  bw_bulkhead_waiter_t *ready = NULL;
  int64_t now;
  uint32_t cur;
  unsigned s;
  bool late, timed;
  if (bh == NULL || p == NULL) return BW_E_INVAL;
  cur = atomic_load_explicit(&bh->in_use, memory_order_relaxed);
  if (cur == 0) return BW_E_INVAL;
  /* A permit without a deadline needs no clock reading. */
  timed = bw_bulkhead_deadline_ns(p) != BW_DEADLINE_NONE_NS;
  now = timed ? bw__clock_now(bh->clock) : 0;
  late = bw_bulkhead_expired(p, now);
  if (atomic_load_explicit(&bh->waiting, memory_order_seq_cst) == 0) {
    do {
      if (cur == 0) return BW_E_INVAL;
    } while (!atomic_compare_exchange_weak_explicit(&bh->in_use, &cur, cur - 1,
                                                    memory_order_seq_cst,
                                                    memory_order_relaxed));
    /* A waiter may have queued after we looked and before our slot was back
     * (it saw every slot taken): hand the slot out for it. */
    if (BW__UNLIKELY(atomic_load_explicit(&bh->waiting, memory_order_seq_cst) !=
                     0)) {
      pthread_mutex_lock(&bh->lock);
      bw__bh_pump(bh, &ready);
      pthread_mutex_unlock(&bh->lock);
    }
  } else {
    pthread_mutex_lock(&bh->lock);
    if (bh->head != NULL &&
        atomic_load_explicit(&bh->in_use, memory_order_relaxed) <=
            bw__bh_max(bh)) {
      if (!timed) now = bw__clock_now(bh->clock);
      bw__bh_grant_head(bh, now, &ready); /* our slot moves on */
    } else {
      /* Nobody queued, or more slots in use than max_concurrent allows
       * (it was lowered live): the slot is given back, not passed on. */
      cur = atomic_load_explicit(&bh->in_use, memory_order_relaxed);
      do {
        if (cur == 0) {
          pthread_mutex_unlock(&bh->lock);
          return BW_E_INVAL;
        }
      } while (!atomic_compare_exchange_weak_explicit(
          &bh->in_use, &cur, cur - 1, memory_order_seq_cst,
          memory_order_relaxed));
      bw__bh_pump(bh, &ready); /* a waiter fits again, if under the max */
    }
    pthread_mutex_unlock(&bh->lock);
  }
  s = bw__stripe();
  bw__bump(&bh->stripes[s].released, s);
  if (late) bw__bump(&bh->stripes[s].timeouts, s);
  bw__bh_run_ready(ready);
  return late ? BW_E_TIMEOUT : BW_OK;
}

void bw_bulkhead_stats(const bw_bulkhead_t *bh, bw_bulkhead_stats_t *out) {
  unsigned i;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (bh == NULL) return;
  for (i = 0; i < BW__STRIPES; i++) {
    const bw__bh_stripe_t *s = &bh->stripes[i];
    out->admitted += BW__LOAD(s->admitted);
    out->rejected_full += BW__LOAD(s->rejected_full);
    out->rejected_deadline += BW__LOAD(s->rejected_deadline);
    out->released += BW__LOAD(s->released);
    out->timeouts += BW__LOAD(s->timeouts);
  }
  out->max_concurrent = bw__bh_max(bh);
  out->in_use = BW__LOAD(bh->in_use);
  out->available =
      out->in_use < out->max_concurrent ? out->max_concurrent - out->in_use : 0;
  out->waiting = BW__LOAD(bh->waiting);
  out->admitted_after_wait = BW__LOAD(bh->admitted_after_wait);
  out->wait_timeouts = BW__LOAD(bh->wait_timeouts);
  out->cancelled = BW__LOAD(bh->cancelled);
}

/* ---- live changes ----------------------------------------------------------
 */

int bw_bulkhead_set_max_concurrent(bw_bulkhead_t *bh, uint32_t max_concurrent,
                                   bw_error_t *err) {
  bw_bulkhead_waiter_t *ready = NULL;
  if (bh == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "bulkhead must not be NULL");
  if (max_concurrent < 1 || max_concurrent > BW__BH_MAX_CONCURRENT)
    return bw_error_set(err, BW_E_INVAL, "max_concurrent",
                        "max_concurrent must be in 1..%u (got %u)",
                        BW__BH_MAX_CONCURRENT, max_concurrent);
  /* Under the lock, so that the queue sees the new bound at once: a raise
   * hands the new slots to the waiters in order (a newcomer cannot jump
   * them); a lowering revokes nothing, the calls beyond it finish and their
   * slots are given back instead of passed on (bw_bulkhead_release). */
  pthread_mutex_lock(&bh->lock);
  atomic_store_explicit(&bh->max, max_concurrent, memory_order_seq_cst);
  bw__bh_pump(bh, &ready);
  pthread_mutex_unlock(&bh->lock);
  bw__bh_run_ready(ready);
  bw_error_clear(err);
  return BW_OK;
}

void bw_bulkhead_config_of(const bw_bulkhead_t *bh, bw_bulkhead_config_t *cfg) {
  if (bh == NULL || cfg == NULL) return;
  bw_bulkhead_config_init(cfg);
  cfg->name = bh->name;
  cfg->max_concurrent = bw__bh_max(bh);
  cfg->max_wait_ms = bh->max_wait_ms;
  cfg->timeout_ms = bh->timeout_ns / BW_NS_PER_MS;
  cfg->max_waiting = bh->max_waiting;
  cfg->clock = bh->clock;
  cfg->wall_clock = bh->wall;
  cfg->sink = bh->sink;
}

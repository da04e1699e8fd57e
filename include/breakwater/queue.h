/* breakwater — a bounded priority queue with an admission policy (the
 * backpressure article).
 *
 * The queue never grows past max_size. When it is full, the policy decides
 * what is lost, instead of letting memory decide:
 *
 *   BW_QUEUE_REJECT       the newcomer is refused (the producer can hold it
 *                         and retry: a webhook answered 429);
 *   BW_QUEUE_DROP_OLDEST  the oldest item by arrival is shed and the newcomer
 *                         admitted (telemetry: the freshest reading matters);
 *   BW_QUEUE_DROP_LOWEST  the least urgent item is shed, but only when the
 *                         newcomer is strictly more urgent; otherwise the
 *                         newcomer is refused (without the strict comparison
 *                         a burst of equal priorities would shed and readmit
 *                         its own items forever: the backpressure article's
 * carousel).
 *
 * Priorities are small integers in [0, priority_levels): a smaller number is
 * more urgent. Among equal priorities arrival order rules (stable). Dequeue
 * returns the most urgent item, the oldest first among equals. Items are the
 * caller's opaque pointers; the queue never dereferences or frees them, and
 * hands every item it drops back to the caller: a shed item through the
 * enqueue that shed it, an expired one through on_expired (or dequeue).
 *
 * Items may carry a deadline (a reading of the queue's clock). An item whose
 * deadline has passed when it reaches the front is never returned for
 * processing: it is counted as expired and handed to on_expired — processing
 * stale work costs as much as fresh work and is worth nothing.
 *
 * Every operation is O(1) (per-priority FIFO lists, a two-level bitmap of
 * non-empty priorities, an arrival-ordered list; docs/queue.md), with all
 * memory allocated by bw_queue_new: no allocation per item. All functions are
 * thread-safe: one internal mutex guards the queue (critical sections are a
 * few dozen instructions; callbacks run outside it). */
#ifndef BREAKWATER_QUEUE_H
#define BREAKWATER_QUEUE_H

#include "clock.h"
#include "common.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_queue_policy_e {
  BW_QUEUE_REJECT = 0,
  BW_QUEUE_DROP_OLDEST = 1,
  BW_QUEUE_DROP_LOWEST = 2
} bw_queue_policy_t;

/* "reject", "drop_oldest", "drop_lowest" or "unknown". */
BW_EXTERN const char *bw_queue_policy_name(bw_queue_policy_t policy);

/* What an enqueue decided. ADMITTED is BW_OK (0); errors are negative. */
typedef enum bw_admission_e {
  BW_QUEUE_ADMITTED = 0, /* queued; nothing dropped */
  BW_QUEUE_SHED = 1,     /* queued; another item was dropped to make room */
  BW_QUEUE_REJECTED = 2  /* not queued: full, and the policy kept the rest */
} bw_admission_t;

/* "admitted", "shed", "rejected" or "unknown". */
BW_EXTERN const char *bw_admission_name(int admission);

/* An item as the queue hands it back. */
typedef struct bw_queue_item_s {
  void *data;          /* the caller's pointer, as given */
  uint32_t priority;   /* as given; smaller = more urgent */
  uint32_t reserved;   /* 0 */
  int64_t deadline_ns; /* as given; BW_QUEUE_NO_DEADLINE = none */
  uint64_t seq;        /* arrival number: the enqueue decisions so far,
                          this one included (1 for the first; calls refused
                          with an error take none) */
} bw_queue_item_t;

/* No deadline (the same value as BW_DEADLINE_NONE_NS). */
#define BW_QUEUE_NO_DEADLINE INT64_MAX

/* Called once for each expired item, on the thread that dequeued past it,
 * outside the queue's lock (it may enqueue or read stats). `now_ns` is the
 * reading that found it expired. */
typedef void (*bw_queue_expired_cb)(const bw_queue_item_t *item, int64_t now_ns,
                                    void *userdata);

/* Largest max_size accepted (the slots are preallocated: 48 bytes each). */
#define BW_QUEUE_MAX_SIZE (UINT32_C(1) << 26)
/* Largest priority_levels accepted (a two-level 64 x 64 bitmap). */
#define BW_QUEUE_MAX_LEVELS 4096u

typedef struct bw_queue_config_s {
  const char *name;               /* copied; default "queue" */
  uint32_t max_size;              /* required: 1..BW_QUEUE_MAX_SIZE; default 0
                                     (refused: a queue needs a deliberate bound) */
  bw_queue_policy_t policy;       /* default BW_QUEUE_REJECT */
  uint32_t priority_levels;       /* priorities are [0, levels); default 256,
                                     1..BW_QUEUE_MAX_LEVELS */
  const bw_clock_t *clock;        /* deadlines; default bw_clock_monotonic() */
  bw_queue_expired_cb on_expired; /* default NULL: dequeue hands expired
                                     items back as BW_E_DEADLINE instead */
  void *userdata;                 /* for on_expired */
  /* queue_dropped events: the items refused, shed and expired, summarised
   * at most once a second (the first drop a second or more after the last
   * summary, or creation, emits every drop since, itself included) and
   * once more when the queue is freed. Default NULL (none, and no clock
   * reading for it); with a sink, an enqueue that refuses or sheds reads
   * the clock. The clocks and sink must outlive the queue (its free
   * emits). Emitted outside the queue's lock. */
  bw_sink_t *sink;
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
} bw_queue_config_t;

typedef struct bw_queue_s bw_queue_t;

/* Counters. Conservation, at every quiescent moment:
 *   enqueued = admitted + rejected
 *   admitted = dequeued + shed + expired + size */
typedef struct bw_queue_stats_s {
  uint64_t enqueued; /* enqueue calls that reached a decision */
  uint64_t admitted; /* outcomes ADMITTED or SHED (the newcomer is queued) */
  uint64_t rejected;
  uint64_t shed;     /* admitted items later dropped to make room */
  uint64_t expired;  /* admitted items dropped at dequeue, past deadline */
  uint64_t dequeued; /* items returned for processing */
  uint32_t size;     /* items queued now */
  uint32_t max_size_seen;
  uint32_t max_size; /* the bound */
  bw_queue_policy_t policy;
} bw_queue_stats_t;

/* Fills the documented defaults (max_size must still be set). */
BW_EXTERN void bw_queue_config_init(bw_queue_config_t *cfg);

/* BW_OK, or BW_E_INVAL with err naming the field and the rule. */
BW_EXTERN int bw_queue_config_validate(const bw_queue_config_t *cfg,
                                       bw_error_t *err);

/* Creates an empty queue, allocating every slot now. NULL and err filled (if
 * not NULL) on an invalid configuration (BW_E_INVAL) or BW_E_NOMEM. */
BW_EXTERN bw_queue_t *bw_queue_new(const bw_queue_config_t *cfg,
                                   bw_error_t *err);

/* Offers an item. Returns BW_QUEUE_ADMITTED (BW_OK), BW_QUEUE_SHED (admitted;
 * the dropped item is copied to *shed, which the caller now owns again) or
 * BW_QUEUE_REJECTED (not queued; the caller still owns data). Errors, with
 * nothing counted: BW_E_RANGE if priority >= priority_levels, BW_E_INVAL if q
 * is NULL or if shed is NULL under a policy that can shed (an item must never
 * vanish unseen). deadline_ns is a reading of the queue's clock
 * (BW_QUEUE_NO_DEADLINE for none); enqueue does not read the clock: an item
 * that arrives already expired is queued and expires at dequeue. */
BW_EXTERN int bw_queue_enqueue(bw_queue_t *q, void *data, uint32_t priority,
                               int64_t deadline_ns, bw_queue_item_t *shed);

/* Takes the most urgent item (oldest first among equals) into *out. Items
 * found past their deadline on the way are counted as expired and handed to
 * on_expired, and the next one is tried. Returns BW_OK, BW_E_NOTFOUND (empty:
 * *out untouched), or — only when on_expired is NULL — BW_E_DEADLINE: *out is
 * an expired item, counted as expired, to be disposed of and not processed.
 * BW_E_INVAL if q or out is NULL. */
BW_EXTERN int bw_queue_dequeue(bw_queue_t *q, bw_queue_item_t *out);

/* The NULL policy: the verbs above answer BW_E_INVAL for a NULL queue; the
 * queries below read a NULL queue as empty (size 0, pressure 0, name ""),
 * stats fill zeros (a NULL out: nothing), and freeing NULL is a no-op. */

/* Items queued now. */
BW_EXTERN uint32_t bw_queue_size(const bw_queue_t *q);
/* size / max_size, in [0, 1]: the occupancy a pressure gauge reads. */
BW_EXTERN double bw_queue_pressure(const bw_queue_t *q);
/* The queue's name (owned by the queue). */
BW_EXTERN const char *bw_queue_name(const bw_queue_t *q);
/* An exact snapshot (taken under the lock). */
BW_EXTERN void bw_queue_stats(const bw_queue_t *q, bw_queue_stats_t *out);

/* Frees the queue. NULL is fine. Items still queued are the caller's: drain
 * them first if they own memory. No call may be in progress on it. */
BW_EXTERN void bw_queue_free(bw_queue_t *q);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_QUEUE_H */

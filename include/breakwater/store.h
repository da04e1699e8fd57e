/* breakwater — the store interface: durable queues with a dead-letter queue
 * and a queue guard, idempotency records, and fallback-with-recovery helpers
 * (parking and a reprocessor). Policy code holds a bw_queue_store_t * or a
 * bw_idem_store_t * and never knows the backend: memory (here, the default),
 * SQLite (store_sqlite.h) or Redis (store_redis.h: bw_redis_queue_store_new,
 * bw_redis_idem_store_new).
 *
 *   bw_queue_store_config_t qc;
 *   bw_queue_store_config_init(&qc);
 *   qc.name = "notifications";
 *   qc.max_size = 1000;                      // the queue guard (the asyncio
 * toolkit) bw_queue_store_t *q = bw_mem_queue_new(&qc, &err); uint64_t id; rc =
 * bw_queue_store_enqueue(q, body, len, &id);   // BW_E_FULL: in the DLQ
 *   ...
 *   bw_stored_item_t items[16];
 *   size_t n;
 *   bw_queue_store_claim(q, 16, 30000, items, &n);    // 30 s lease each
 *   for (i = 0; i < n; i++) {
 *     if (handle(&items[i]) == 0)
 *       bw_queue_store_ack(q, items[i].id, items[i].receipt);
 *     else
 *       bw_queue_store_nack(q, items[i].id, items[i].receipt, 1000);
 *   }
 *   bw_stored_items_clear(items, n);
 *
 * Queue semantics (every backend):
 * - enqueue returns only once the item is stored (for SQLite: committed), so
 *   a webhook can persist, then answer 200 (the backpressure article).
 * - Queue guard: an enqueue that would take the depth (ready + delayed +
 *   claimed items) past max_size does not enter the queue: the item goes to
 *   the dead-letter queue with reason "queue_full" and enqueue answers
 *   BW_E_FULL. The check and the insert are one atomic step.
 * - Warning: when the depth reaches warn_threshold * max_size a
 *   "queue_warning" event is emitted once; it re-arms when the depth falls
 *   below warn_rearm_threshold * max_size (hysteresis: a queue hovering at
 *   the threshold warns once, not on every item).
 * - claim hands out up to n visible items, oldest id first, each with a
 *   lease: invisible to other claims until now + visibility_ms, and a
 *   receipt. ack / nack / reject need the current receipt: once a lease has
 *   expired and the item was claimed again, the old receipt is stale
 *   (BW_E_STALE, nothing changes). An expired lease that nobody re-claimed
 *   is still honoured (the work was done; nobody else holds it).
 * - An item delivered max_deliveries times that comes back (nacked, or its
 *   lease expired) goes to the DLQ with reason "max_deliveries".
 * - Dead-letter records keep the payload, the reason ("queue_full",
 *   "max_deliveries", "rejected"), an error text, the time and the
 *   deliveries. They can be listed, requeued (a new item, deliveries 0;
 *   subject to the guard) or deleted. The DLQ is bounded by dlq_max: past it
 *   the oldest record is dropped and counted (dlq_dropped).
 * - Every move to the DLQ emits a "dead_lettered" event (one per batch for
 *   a batch refused by the guard).
 *
 * Time: each store reads its configured clock (manual in tests: exact).
 * Items, records and results handed to the caller are the caller's: free
 * them with bw_stored_items_clear / bw_dlq_records_clear /
 * bw_idem_record_clear. Every function here is thread-safe; errors are
 * negative BW_E_* codes (BW_E_INVAL for NULL or out-of-range arguments,
 * BW_E_NOMEM, BW_E_IO for a backend failure, BW_E_TIMEOUT when a shared
 * backend stayed locked by another writer past its busy timeout). */
#ifndef BREAKWATER_STORE_H
#define BREAKWATER_STORE_H

#include "breaker.h"
#include "clock.h"
#include "common.h"
#include "event.h"
#include "pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== durable queue ======================================================
 */

/* A payload to enqueue (borrowed; copied by the store). len 0 is allowed
 * (data may then be NULL). */
typedef struct bw_blob_s {
  const void *data;
  size_t len;
} bw_blob_t;

/* Longest payload a store accepts, in bytes. */
#define BW_STORE_PAYLOAD_MAX (64u * 1024u * 1024u)

/* A claimed item. payload is owned by the caller (bw_stored_items_clear). */
typedef struct bw_stored_item_s {
  uint64_t id;            /* unique in its queue, increasing, never reused */
  uint64_t receipt;       /* this lease's token, for ack / nack / reject */
  uint32_t deliveries;    /* times claimed, this claim included */
  int64_t enqueued_ns;    /* the store's clock at enqueue */
  int64_t lease_until_ns; /* invisible to other claims until then */
  void *payload;
  size_t len;
} bw_stored_item_t;

/* Reasons an item went to the DLQ. */
#define BW_DLQ_QUEUE_FULL "queue_full"
#define BW_DLQ_MAX_DELIVERIES "max_deliveries"
#define BW_DLQ_REJECTED "rejected"

/* A dead-letter record. payload is owned by the caller
 * (bw_dlq_records_clear). */
typedef struct bw_dlq_record_s {
  uint64_t id;         /* the record's id in the DLQ, increasing */
  uint64_t item_id;    /* the queue item's id, 0 for "queue_full" */
  uint32_t deliveries; /* times it was claimed before it came here */
  int64_t time_ns;     /* the store's clock when it came here */
  char reason[32];     /* BW_DLQ_* */
  char error[160];     /* why, in words (longer texts are cut) */
  void *payload;
  size_t len;
} bw_dlq_record_t;

/* Queue configuration, shared by every backend. */
typedef struct bw_queue_store_config_s {
  const char *name;             /* copied; default "queue"; the queue's
                                   identity inside a shared store file */
  uint32_t max_size;            /* the guard: >= 1; default 10000 */
  double warn_threshold;        /* (0, 1]; default 0.7 (the asyncio toolkit) */
  double warn_rearm_threshold;  /* [0, warn_threshold); default 0.6 */
  uint32_t max_deliveries;      /* >= 1; default 5 */
  uint32_t dlq_max;             /* >= 1; default 10000 */
  const bw_clock_t *clock;      /* default: monotonic for memory, realtime
                                   for durable stores (leases must survive
                                   a reboot) */
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
  bw_sink_t *sink;              /* events; optional, borrowed */
} bw_queue_store_config_t;

/* Fills the documented defaults. */
BW_EXTERN void bw_queue_store_config_init(bw_queue_store_config_t *cfg);
/* BW_OK, or BW_E_INVAL with err naming the field and the rule. Backends
 * call it from their constructors. */
BW_EXTERN int bw_queue_store_config_validate(const bw_queue_store_config_t *cfg,
                                             bw_error_t *err);

/* A snapshot. depth, in_flight and dlq_depth are the store's (shared by
 * every handle on a durable file); the counters are this handle's, since it
 * was created. */
typedef struct bw_queue_store_stats_s {
  uint64_t depth;     /* ready + delayed + claimed items */
  uint64_t in_flight; /* claimed, lease not yet expired */
  uint64_t dlq_depth;
  uint32_t max_size;
  double fill;           /* depth / max_size */
  bool warning;          /* warned and not yet re-armed */
  uint64_t enqueued;     /* accepted into the queue */
  uint64_t refused_full; /* refused by the guard (went to the DLQ) */
  uint64_t claimed;      /* deliveries handed out */
  uint64_t acked;
  uint64_t nacked;
  uint64_t dead_lettered; /* moves to the DLQ, every reason */
  uint64_t requeued;      /* DLQ records put back */
  uint64_t dlq_dropped;   /* oldest DLQ records dropped past dlq_max */
  uint64_t stale;         /* acks / nacks / rejects refused as stale */
  uint64_t warnings;      /* queue_warning events */
} bw_queue_store_stats_t;

typedef struct bw_queue_store_s bw_queue_store_t;

/* The table behind the interface (for implementers: put a bw_queue_store_t
 * first in the object; the wrappers below check arguments before calling). */
typedef struct bw_queue_store_vtable_s {
  const char *kind; /* "memory", "sqlite", ... */
  int (*enqueue)(bw_queue_store_t *q, const bw_blob_t *items, size_t n,
                 uint64_t *ids, size_t *accepted);
  int (*claim)(bw_queue_store_t *q, size_t max, int64_t visibility_ms,
               bw_stored_item_t *out, size_t *n);
  int (*ack)(bw_queue_store_t *q, uint64_t id, uint64_t receipt);
  int (*nack)(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
              int64_t delay_ms);
  int (*reject)(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                const char *error);
  int (*dlq_list)(bw_queue_store_t *q, uint64_t after_id, size_t max,
                  bw_dlq_record_t *out, size_t *n);
  int (*dlq_requeue)(bw_queue_store_t *q, uint64_t dlq_id, uint64_t *new_id);
  int (*dlq_delete)(bw_queue_store_t *q, uint64_t dlq_id);
  int (*stats)(bw_queue_store_t *q, bw_queue_store_stats_t *out);
  const char *(*name)(const bw_queue_store_t *q);
  void (*free)(bw_queue_store_t *q);
} bw_queue_store_vtable_t;

struct bw_queue_store_s {
  const bw_queue_store_vtable_t *vt;
};

/* Stores one item; returns once it is stored (committed). BW_OK and *id (if
 * not NULL) its id; BW_E_FULL when the guard refused it (it is in the DLQ,
 * reason "queue_full"; *id = 0); BW_E_INVAL (len > BW_STORE_PAYLOAD_MAX, or
 * data NULL with len > 0). */
BW_EXTERN int bw_queue_store_enqueue(bw_queue_store_t *q, const void *data,
                                     size_t len, uint64_t *id);
/* Stores n items in one commit (group commit). Items are taken in order:
 * once the guard refuses one, it and every later one go to the DLQ.
 * ids[i] (if ids is not NULL) gets each id, 0 for refused ones; *accepted
 * (optional) how many entered. BW_OK when all entered, BW_E_FULL when some
 * did not; nothing is stored on any other error. n == 0 is BW_OK. */
BW_EXTERN int bw_queue_store_enqueue_batch(bw_queue_store_t *q,
                                           const bw_blob_t *items, size_t n,
                                           uint64_t *ids, size_t *accepted);
/* Claims up to max visible items (oldest first) for visibility_ms (1..a year)
 * each, into out[0..*n). *n == 0 when nothing is visible. Items that come
 * back past max_deliveries are moved to the DLQ here (at most 16 a call).
 * The caller frees payloads with bw_stored_items_clear. */
BW_EXTERN int bw_queue_store_claim(bw_queue_store_t *q, size_t max,
                                   int64_t visibility_ms, bw_stored_item_t *out,
                                   size_t *n);
/* Done with an item: removes it. BW_OK; BW_E_STALE when the receipt is not
 * the item's current lease; BW_E_NOTFOUND when the item is gone (acked,
 * dead-lettered). A never-claimed or nacked item has no current lease:
 * BW_E_STALE. */
BW_EXTERN int bw_queue_store_ack(bw_queue_store_t *q, uint64_t id,
                                 uint64_t receipt);
/* Gives an item back: visible again after delay_ms (0..a year), or to the DLQ
 * (reason "max_deliveries") when it has had max_deliveries deliveries.
 * Same errors as ack. */
BW_EXTERN int bw_queue_store_nack(bw_queue_store_t *q, uint64_t id,
                                  uint64_t receipt, int64_t delay_ms);
/* Moves a claimed item to the DLQ with reason "rejected" and `error` (may be
 * NULL): a poison item that no retry will fix. Same errors as ack. */
BW_EXTERN int bw_queue_store_reject(bw_queue_store_t *q, uint64_t id,
                                    uint64_t receipt, const char *error);
/* Lists up to max DLQ records with id > after_id, oldest first. The caller
 * frees them with bw_dlq_records_clear. */
BW_EXTERN int bw_queue_store_dlq_list(bw_queue_store_t *q, uint64_t after_id,
                                      size_t max, bw_dlq_record_t *out,
                                      size_t *n);
/* Puts a DLQ record back into the queue as a new item (deliveries 0) and
 * deletes the record, atomically. BW_OK and *new_id; BW_E_NOTFOUND;
 * BW_E_FULL when the queue is at max_size (the record stays). */
BW_EXTERN int bw_queue_store_dlq_requeue(bw_queue_store_t *q, uint64_t dlq_id,
                                         uint64_t *new_id);
/* Deletes a DLQ record. BW_OK or BW_E_NOTFOUND. */
BW_EXTERN int bw_queue_store_dlq_delete(bw_queue_store_t *q, uint64_t dlq_id);
/* Fills a snapshot (zeroed first). BW_OK, BW_E_INVAL, BW_E_IO. */
BW_EXTERN int bw_queue_store_stats(bw_queue_store_t *q,
                                   bw_queue_store_stats_t *out);
/* The queue's name and backend kind ("" for NULL). */
BW_EXTERN const char *bw_queue_store_name(const bw_queue_store_t *q);
BW_EXTERN const char *bw_queue_store_kind(const bw_queue_store_t *q);
/* Frees the handle (NULL is fine); a durable queue's items stay stored. */
BW_EXTERN void bw_queue_store_free(bw_queue_store_t *q);

/* For implementers: allocates through the library's allocator hooks, so
 * what a backend hands to the caller is freed by the clear functions below
 * (and bw_free). NULL when out of memory. */
BW_EXTERN void *bw_store_malloc(size_t size);
/* For implementers: the guard's integer thresholds for a validated
 * configuration. Warn when the depth reaches *warn_at; re-arm when it is
 * below *rearm_below. A NULL cfg leaves both untouched. */
BW_EXTERN void bw_queue_store_config_levels(const bw_queue_store_config_t *cfg,
                                            uint64_t *warn_at,
                                            uint64_t *rearm_below);

/* For implementers: the two queue events, written the same way by every
 * backend. queue_warning has the fields depth, max_size and fill, and a
 * reason such as "queue at 70% of capacity (7/10)"; dead_lettered has the
 * fields reason (the short cause, e.g. "max_deliveries"), item_id, dlq_id,
 * deliveries and count, and the record's error text as its reason. Both
 * emit on `sink` (nothing when NULL) at mono_ns, with wall read from `wall`
 * and the calling thread's context. */
BW_EXTERN void bw_queue_event_warning(bw_sink_t *sink, const bw_clock_t *wall,
                                      const char *name, int64_t mono_ns,
                                      uint32_t max_size, uint64_t depth);
BW_EXTERN void bw_queue_event_dead_lettered(
    bw_sink_t *sink, const bw_clock_t *wall, const char *name, int64_t mono_ns,
    const char *reason, const char *error, uint64_t item_id, uint64_t dlq_id,
    uint64_t deliveries, uint64_t count);

/* For implementers: queue events gathered while a backend holds its own
 * lock and emitted after it is released (a sink may call back into the
 * queue). The caller owns it, on its stack; set n to 0 before use. It holds
 * BW_QUEUE_EVENTS_MAX events; more in one operation are not emitted (the
 * backend's counters still count them). Not thread-safe by itself. */
#define BW_QUEUE_EVENTS_MAX 20
typedef struct bw_queue_events_s {
  size_t n;
  struct {
    /* private */
    bw_event_type_t type; /* BW_EV_QUEUE_WARNING or BW_EV_DEAD_LETTERED */
    uint64_t item_id, dlq_id, count, depth;
    uint32_t deliveries;
    char reason[32];
    char error[160];
  } ev[BW_QUEUE_EVENTS_MAX];
} bw_queue_events_t;
/* Records a queue_warning at `depth`. */
BW_EXTERN void bw_queue_events_warning(bw_queue_events_t *eb, uint64_t depth);
/* Records a dead_lettered event for one record (count 1); reason and error
 * are copied (truncated to fit). */
BW_EXTERN void bw_queue_events_dead(bw_queue_events_t *eb, uint64_t item_id,
                                    uint64_t dlq_id, uint32_t deliveries,
                                    const char *reason, const char *error);
/* Sets the count of every recorded dead_lettered event: a backend that
 * refuses the tail of a batch records one event for it, counting them all. */
BW_EXTERN void bw_queue_events_set_dead_count(bw_queue_events_t *eb,
                                              uint64_t count);
/* Emits the recorded events, in order, on cfg->sink (nothing when NULL),
 * named `name`, at mono_ns, with cfg->wall_clock and cfg->max_size. Call
 * without the backend's lock held. */
BW_EXTERN void bw_queue_events_emit(const bw_queue_events_t *eb,
                                    const bw_queue_store_config_t *cfg,
                                    const char *name, int64_t mono_ns);

/* Frees the payloads of n items / records and zeroes them. NULL is fine. */
BW_EXTERN void bw_stored_items_clear(bw_stored_item_t *items, size_t n);
BW_EXTERN void bw_dlq_records_clear(bw_dlq_record_t *recs, size_t n);

/* An in-memory queue: bounded by max_size, thread-safe (one mutex), gone
 * when freed. claim, ack and nack are O(depth). NULL with err set on a bad
 * configuration or BW_E_NOMEM. */
BW_EXTERN bw_queue_store_t *bw_mem_queue_new(const bw_queue_store_config_t *cfg,
                                             bw_error_t *err);

/* ==== idempotency records ================================================
 *
 * The asyncio toolkit's idempotent_node: a key built from chosen fields; the
 * first caller runs the operation, a later caller with the same key gets the
 * stored result instead of running it again; while the first one runs, a
 * duplicate sees IN_PROGRESS (fail fast or wait).
 *
 *   bw_idem_record_t rec;
 *   bw_idem_begin(s, key, &rec);
 *   switch (rec.state) {
 *   case BW_IDEM_NEW:          // ours: run it, then complete (or abandon)
 *     bw_idem_complete(s, key, rec.token, status, result, len);
 *   case BW_IDEM_IN_PROGRESS:  // someone else is running it
 *   case BW_IDEM_DONE:         // rec.status, rec.result: the stored answer
 *   }
 *   bw_idem_record_clear(&rec);
 */

typedef enum bw_idem_state_e {
  BW_IDEM_NEW = 0,         /* no record: the caller now holds the marker */
  BW_IDEM_IN_PROGRESS = 1, /* another caller holds the marker */
  BW_IDEM_DONE = 2         /* a stored result */
} bw_idem_state_t;

/* "new", "in_progress", "done" or "unknown". */
BW_EXTERN const char *bw_idem_state_name(bw_idem_state_t s);

/* What begin found. result is owned by the caller (bw_idem_record_clear). */
typedef struct bw_idem_record_s {
  bw_idem_state_t state;
  uint64_t token;     /* NEW: the marker's token, for complete / abandon */
  int status;         /* DONE: the stored status */
  int64_t expires_ns; /* when the marker (NEW, IN_PROGRESS) or result
                         (DONE) expires, on the store's clock */
  void *result;       /* DONE: the stored result (may be NULL if len 0) */
  size_t len;
} bw_idem_record_t;

/* Longest key accepted, in bytes. */
#define BW_IDEM_KEY_MAX 200

typedef struct bw_idem_config_s {
  const char *name;        /* copied; default "idempotency" */
  int64_t lease_ms;        /* an in-progress marker's life: 1..a year; default
                              30000 (a crashed runner frees the key) */
  int64_t ttl_ms;          /* a result's life: 1..a year; default 86400000 */
  uint32_t max_keys;       /* memory backend bound: >= 1; default 100000 */
  const bw_clock_t *clock; /* as for queues */
} bw_idem_config_t;

typedef struct bw_idem_stats_s {
  uint64_t began;       /* begins that answered NEW */
  uint64_t in_progress; /* begins that answered IN_PROGRESS */
  uint64_t hits;        /* begins that answered DONE */
  uint64_t completed;
  uint64_t abandoned;
  uint64_t stale; /* complete / abandon with a token no longer held */
  uint64_t keys;  /* records stored now (expired ones may count until
                     swept) */
} bw_idem_stats_t;

BW_EXTERN void bw_idem_config_init(bw_idem_config_t *cfg);
BW_EXTERN int bw_idem_config_validate(const bw_idem_config_t *cfg,
                                      bw_error_t *err);

typedef struct bw_idem_store_s bw_idem_store_t;

typedef struct bw_idem_store_vtable_s {
  const char *kind;
  int (*begin)(bw_idem_store_t *s, const char *key, bw_idem_record_t *out);
  int (*complete)(bw_idem_store_t *s, const char *key, uint64_t token,
                  int status, const void *result, size_t len);
  int (*abandon)(bw_idem_store_t *s, const char *key, uint64_t token);
  int (*stats)(bw_idem_store_t *s, bw_idem_stats_t *out);
  const char *(*name)(const bw_idem_store_t *s);
  void (*free)(bw_idem_store_t *s);
} bw_idem_store_vtable_t;

struct bw_idem_store_s {
  const bw_idem_store_vtable_t *vt;
};

/* Looks a key up and, when there is no live record, atomically places an
 * in-progress marker owned by the caller (state NEW, rec.token). Expired
 * markers and results count as absent. BW_OK with *out filled;
 * BW_E_INVAL for a key that is empty or longer than BW_IDEM_KEY_MAX;
 * BW_E_LIMIT when a bounded store is full of live records. */
BW_EXTERN int bw_idem_begin(bw_idem_store_t *s, const char *key,
                            bw_idem_record_t *out);
/* Stores the result for a marker the caller holds (ttl_ms from the
 * configuration). BW_OK; BW_E_STALE when the marker is no longer the
 * caller's (it expired and someone else began) — nothing stored. */
BW_EXTERN int bw_idem_complete(bw_idem_store_t *s, const char *key,
                               uint64_t token, int status, const void *result,
                               size_t len);
/* Removes the caller's marker (the operation failed: a later call may run
 * it). BW_OK or BW_E_STALE. */
BW_EXTERN int bw_idem_abandon(bw_idem_store_t *s, const char *key,
                              uint64_t token);
BW_EXTERN int bw_idem_stats(bw_idem_store_t *s, bw_idem_stats_t *out);
BW_EXTERN const char *bw_idem_store_name(const bw_idem_store_t *s);
BW_EXTERN const char *bw_idem_store_kind(const bw_idem_store_t *s);
/* Frees the handle (NULL is fine). */
BW_EXTERN void bw_idem_store_free(bw_idem_store_t *s);
/* Frees a record's result and zeroes it. NULL is fine. */
BW_EXTERN void bw_idem_record_clear(bw_idem_record_t *rec);

/* bw_idem_execute and bw_idem_fn moved to breakwater/threads.h. */

/* Builds a key from chosen fields (the asyncio toolkit's key_fields):
 * "<scope>:" and 32 hex digits of a 128-bit SipHash-2-4 (two fixed keys) of the
 * canonical form — every field as length-prefixed key and value, in the order
 * given. The same fields give the same key in every process and on every host.
 * buf needs at least strlen(scope) + 34 bytes; the result is at most
 * BW_IDEM_KEY_MAX. BW_OK; BW_E_INVAL (NULL, empty scope, scope longer than
 * 160 bytes, a NULL key or value); BW_E_RANGE when buf is too small. */
BW_EXTERN int bw_idem_key(char *buf, size_t size, const char *scope,
                          const bw_kv_t *fields, size_t count);

/* An in-memory idempotency store (bounded by max_keys, one mutex). */
BW_EXTERN bw_idem_store_t *bw_mem_idem_new(const bw_idem_config_t *cfg,
                                           bw_error_t *err);

/* ==== fallback with recovery (the tenacity article, scenario 2)
 * =======================
 *
 * A fallback that parks work must come with a job that replays it: parked
 * work is enqueued into a (durable) queue, and a reprocessor drains that
 * queue only while the protecting breaker is CLOSED. The backlog (the queue
 * depth) is in the reprocessor's stats: nothing parked is forgotten
 * silently. */

/* The work of one call, to park if it fails: set a pipeline call's `user`
 * to one (pipeline.h) before bw_pipeline_begin. Borrowed: it must stay
 * valid until the call is DONE. */
typedef struct bw_park_work_s {
  const void *data;
  size_t len;
} bw_park_work_t;

/* A pipeline fallback (pipeline.h: cfg.fallback = bw_park_fallback,
 * cfg.fallback_userdata = a bw_queue_store_t *): enqueues the failed call's
 * work (call->user, a bw_park_work_t) into the queue. Returns the enqueue's
 * status (BW_E_FULL: the queue guard sent it to the DLQ; BW_E_INVAL: no
 * queue, no call, or a call without work). Thread-safe: the work travels
 * with the call, not with the thread. */
BW_EXTERN int bw_park_fallback(void *userdata, bw_failure_t why,
                               const struct bw_pipeline_call_s *call);

/* Replays one parked item. BW_OK: done (acked; the breaker hears SUCCESS).
 * BW_E_INVAL: the item is bad and never will be good (rejected to the DLQ;
 * the breaker hears IGNORED). BW_E_OPEN: not processed, and the step should
 * end (the handler's own dependency refused, or the program is stopping):
 * the item is handed back at once (nacked with no delay; the delivery
 * counts) and no further item is claimed in this step; the breaker hears
 * IGNORED. Any other negative: failed (nacked with retry_delay_ms; the
 * breaker hears FAILURE). */
typedef int (*bw_reprocess_fn)(void *userdata, const bw_stored_item_t *item);

typedef struct bw_reprocessor_config_s {
  const char *name;        /* copied; default "reprocessor" */
  bw_queue_store_t *queue; /* required, borrowed */
  bw_breaker_t *breaker;   /* optional, borrowed: drain only while CLOSED */
  bw_reprocess_fn fn;      /* required */
  void *userdata;
  uint32_t batch;         /* items per step: >= 1; default 16 */
  int64_t visibility_ms;  /* each item's lease: >= 1; default 30000 */
  int64_t retry_delay_ms; /* nack delay after a failure: >= 0; default
                             1000 */
} bw_reprocessor_config_t;

typedef struct bw_reprocessor_stats_s {
  uint64_t backlog;   /* items waiting in the queue (its depth) */
  uint64_t dlq_depth; /* the queue's DLQ */
  uint64_t processed; /* replayed and acked */
  uint64_t failed;    /* replays that failed (nacked) */
  uint64_t rejected;  /* replays that said BW_E_INVAL (to the DLQ) */
  uint64_t paused;    /* steps that did nothing because the breaker was not
                         CLOSED */
} bw_reprocessor_stats_t;

typedef struct bw_reprocessor_s bw_reprocessor_t;

BW_EXTERN void bw_reprocessor_config_init(bw_reprocessor_config_t *cfg);
/* NULL with err naming the field on a bad configuration; BW_E_NOMEM. */
BW_EXTERN bw_reprocessor_t *bw_reprocessor_new(
    const bw_reprocessor_config_t *cfg, bw_error_t *err);
/* One step: up to `batch` times, while the breaker is CLOSED and admits
 * (asked before each claim), claims one item and replays it through the
 * breaker (acquire, fn, release). An item is claimed only to be replayed,
 * so one the breaker refused mid-step stays in the queue with no delivery
 * counted. *done (optional) gets how many were processed (acked). BW_OK;
 * BW_E_OPEN when the breaker was not CLOSED before the first item (nothing
 * claimed); store errors. With retry_delay_ms 0 a failed item is visible
 * again at once and may be replayed again in the same step. Safe from many
 * threads; fn may run concurrently with itself. */
BW_EXTERN int bw_reprocessor_step(bw_reprocessor_t *rp, size_t *done);
BW_EXTERN int bw_reprocessor_stats(bw_reprocessor_t *rp,
                                   bw_reprocessor_stats_t *out);
/* NULL is fine. The queue and the breaker are not freed. */
BW_EXTERN void bw_reprocessor_free(bw_reprocessor_t *rp);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_STORE_H */

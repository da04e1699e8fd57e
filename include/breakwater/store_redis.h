/* Component redis: library libbreakwater_redis, pkg-config module
 * breakwater-redis, CMake target breakwater::redis. */
/* breakwater — the Redis store (library breakwater_redis, hiredis): state
 * shared by many processes on many hosts.
 *
 * - bw_redis_breaker_t: a circuit breaker whose state and counts live in
 *   Redis, shared by every process that uses the same name. The hot path
 *   (acquire/release) never touches the network: it reads a locally cached
 *   copy of the shared state and accumulates local counts in atomics. A sync
 *   (a background thread owned by the breaker, or bw_redis_breaker_sync
 *   driven by the caller) runs ONE Lua script that adds this process's counts
 *   into Redis, applies the trip rule, moves the shared state and returns it.
 *   Other processes learn a transition at their next sync: the staleness
 *   bound is sync_interval_ms plus one round trip (each transition is also
 *   PUBLISHed on "<prefix>brk:<name>:events" for anyone who listens).
 *   When Redis is down or slow (connect/command timeouts) the breaker falls
 *   back to a local breaker fed by local counts only, emits one
 *   "redis_unavailable" event, reconnects with exponential backoff and
 *   jitter, and on return pushes what it counted meanwhile exactly once
 *   (every push carries a per-process sequence number the script checks) and
 *   emits one "redis_restored" event.
 * - bw_redis_queue_t: the asyncio toolkit's queue guard: a bounded Redis list
 * where the size check and the push are one script (LLEN + RPUSH), overflow
 * goes to a dead-letter list with reason "queue_full" (bounded by dlq_max), a
 *   warning fires once per crossing of warn_threshold (re-armed below
 *   warn_rearm_threshold); consumers move items to a per-consumer
 *   processing list and acknowledge them, so an acknowledged item is never
 *   lost and an unacknowledged one can be recovered.
 * - bw_redis_idem_t: idempotency records (SET NX PX): begin says NEW,
 *   IN_PROGRESS or DONE (with the stored result).
 *
 * TLS: hiredis 0.14.1 (Debian 12) has no hiredis_ssl; the `tls` option is
 * kept for the future and refused with an error naming it. */
#ifndef BREAKWATER_STORE_REDIS_H
#define BREAKWATER_STORE_REDIS_H

#include "breaker.h"
#include "clock.h"
#include "common.h"
#include "event.h"
#include "limit.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- connection options ---------------------------------------------------
 */

typedef struct bw_redis_config_s {
  const char *host;           /* copied; default "127.0.0.1" */
  int port;                   /* default 6379, 1..65535 */
  const char *username;       /* ACL user (AUTH user pass); default NULL */
  const char *password;       /* AUTH; default NULL (none) */
  int db;                     /* SELECT; default 0, >= 0 */
  bool tls;                   /* refused: no hiredis_ssl here */
  int64_t connect_timeout_ms; /* default 200, >= 1 */
  int64_t command_timeout_ms; /* default 200, >= 1 */
  int64_t backoff_initial_ms; /* first reconnect delay; default 50, >= 1 */
  int64_t backoff_max_ms;     /* cap; default 5000, >= backoff_initial_ms */
  const char *key_prefix;     /* copied; default "bw:" */
} bw_redis_config_t;

/* Fills the documented defaults. */
BW_EXTERN void bw_redis_config_init(bw_redis_config_t *cfg);

/* ---- shared circuit breaker ---------------------------------------------
 */

typedef struct bw_redis_breaker_config_s {
  /* The breaker rules. Supported: trip_rule CONSECUTIVE (shared failures
   * since the last success, at sync granularity) and TIME_WINDOW (failure
   * ratio over window_ms in window_buckets buckets, minimum_calls), break_ms,
   * success_threshold, half_open_max_calls (per process), half_open_timeout_ms,
   * name, clock, wall_clock, sink. Refused (naming the field): COUNT_WINDOW,
   * slow_call_ms != 0, break_multiplier != 1, max_break_ms other than 0 or
   * break_ms, metrics_only. */
  bw_breaker_config_t breaker;
  bw_redis_config_t redis;
  int64_t sync_interval_ms; /* default 100, >= 1 */
  bool sync_thread;         /* default true: a thread owned by the breaker
                               syncs every sync_interval_ms; false: the caller
                               calls bw_redis_breaker_sync */
  bool use_redis_time;      /* default true: windows and breaks are measured
                               on the Redis server's clock (one clock for all
                               hosts); false: on breaker.clock (all processes
                               must then share its base, e.g. CLOCK_MONOTONIC
                               on one host, or a test clock) */
  uint64_t seed;            /* jitter seed; 0 = from the OS */
} bw_redis_breaker_config_t;

typedef struct bw_redis_breaker_s bw_redis_breaker_t;

typedef struct bw_redis_breaker_stats_s {
  bw_state_t state;    /* as bw_redis_breaker_state */
  uint64_t generation; /* shared generation last adopted */
  bool fallback;       /* Redis unavailable: the local breaker decides */
  uint32_t shared_consecutive_failures; /* as of the last sync */
  uint64_t shared_window_calls;         /* time window, last sync */
  uint64_t shared_window_failures;
  uint64_t shared_total_calls; /* all processes' calls recorded in Redis */
  uint64_t calls;              /* this process: successes+failures+ignored */
  uint64_t successes;
  uint64_t failures;
  uint64_t ignored;
  uint64_t stale;
  uint64_t admitted;
  uint64_t rejected;
  uint64_t pending_calls;      /* counted here, not yet recorded in Redis */
  uint64_t syncs;              /* successful sync scripts */
  uint64_t sync_failures;      /* failed attempts (I/O, timeout, refused) */
  uint64_t duplicate_batches;  /* re-sent batches Redis had already applied
                                  (a lost reply), recognised and skipped */
  uint64_t unavailable_events; /* "redis_unavailable" emitted */
  uint64_t restored_events;    /* "redis_restored" emitted */
  uint64_t transitions_seen;   /* shared state changes adopted */
  uint64_t transition_sync;    /* `syncs` when the last one was adopted */
  int64_t retry_in_ms;
} bw_redis_breaker_stats_t;

/* Fills the documented defaults (bw_breaker_config_init for `breaker`,
 * bw_redis_config_init for `redis`). */
BW_EXTERN void bw_redis_breaker_config_init(bw_redis_breaker_config_t *cfg);

/* Creates a shared breaker and, when sync_thread is set, starts its sync
 * thread. Connects once: an unreachable Redis is not an error (the breaker
 * starts in local fallback and reconnects with backoff), but a refused AUTH
 * is: NULL with err BW_E_INVAL naming redis.password ("redis AUTH failed for
 * 127.0.0.1:6380: WRONGPASS ..."). Also NULL with BW_E_INVAL naming the
 * field for an invalid or unsupported option, BW_E_NOMEM, or BW_E_IO when the
 * thread cannot start. */
BW_EXTERN bw_redis_breaker_t *bw_redis_breaker_new(
    const bw_redis_breaker_config_t *cfg, bw_error_t *err);

/* As bw_breaker_acquire: BW_OK (release the permit exactly once) or
 * BW_E_OPEN. Lock-free, allocation-free, no I/O. Thread-safe. */
BW_EXTERN int bw_redis_breaker_acquire(bw_redis_breaker_t *b, bw_permit_t *p);

/* As bw_breaker_release: BW_OK, BW_E_STALE (permit from an older shared
 * generation: counted in the totals, decides nothing) or BW_E_INVAL (unknown
 * outcome). No I/O; may wake the sync thread when a transition looks due.
 * Thread-safe. */
BW_EXTERN int bw_redis_breaker_release(bw_redis_breaker_t *b,
                                       const bw_permit_t *p,
                                       bw_outcome_t outcome);

/* One sync now: pushes this process's counts, applies the rule in Redis and
 * adopts the shared state. BW_OK; BW_E_IO when Redis is unavailable (the
 * breaker is then in local fallback; during the reconnect backoff no
 * connection is attempted). Serialised with the sync thread; blocks for at
 * most the connect + command timeouts. Thread-safe. */
BW_EXTERN int bw_redis_breaker_sync(bw_redis_breaker_t *b);

/* The state as this process sees it (OPEN whose break is over reads as
 * HALF_OPEN, as in the local breaker). In fallback, the local breaker's. */
BW_EXTERN bw_state_t bw_redis_breaker_state(const bw_redis_breaker_t *b);

/* Milliseconds until a call may be admitted (as bw_breaker_retry_in_ms). */
BW_EXTERN int64_t bw_redis_breaker_retry_in_ms(const bw_redis_breaker_t *b);

/* The breaker's name (owned by it). */
BW_EXTERN const char *bw_redis_breaker_name(const bw_redis_breaker_t *b);

/* A snapshot of the counters. Thread-safe. */
BW_EXTERN void bw_redis_breaker_stats(const bw_redis_breaker_t *b,
                                      bw_redis_breaker_stats_t *out);

/* The breaker through the breaker interface (breaker.h), kind
 * "redis_breaker": what a pipeline takes (bw_pipeline_add_breaker_if).
 * Owned by the breaker, valid until it is freed; NULL for NULL. */
BW_EXTERN bw_breaker_if_t *bw_redis_breaker_iface(bw_redis_breaker_t *b);

/* Deprecated (0.2; removed in the next release): use bw_redis_breaker_iface.
 * A pipeline no longer turns this limit's BW_E_OPEN into a breaker failure.
 * The breaker as a bw_limit_t (kind "redis_breaker"): try_acquire answers
 * BW_E_OPEN when open; release SUCCESS, DROPPED (= a failure) or IGNORED.
 * Owned by the breaker; valid until it is freed. */
BW_EXTERN bw_limit_t *bw_redis_breaker_as_limit(bw_redis_breaker_t *b);

/* Stops and joins the sync thread, makes one last attempt to push pending
 * counts, closes the connection and frees. NULL is fine. No call may be in
 * progress. */
BW_EXTERN void bw_redis_breaker_free(bw_redis_breaker_t *b);

/* ---- the shared breaker on an event loop (libevent) ----------------------
 */

struct event_base;

/* Creates a shared breaker that an event loop syncs instead of a thread
 * (built when breakwater_redis finds libevent_core; BW_REDIS_ASYNC is then
 * defined for its users). Construction is as bw_redis_breaker_new: one
 * blocking connect (a refused AUTH fails it) and a first sync, bounded by the
 * timeouts; an unreachable Redis is not an error. Then the blocking
 * connection is closed and the breaker keeps a hiredis async connection
 * attached to `base` (redisLibeventAttach): every sync_interval_ms a timer
 * sends the same script with the same (process, sequence) batch as a
 * blocking sync (EVALSHA, EVAL after NOSCRIPT) and the reply is adopted
 * exactly as there. A reply or connect that does not complete within
 * connect/command timeout (a timer: hiredis 0.14 has none), a disconnect or
 * an error reply: local fallback and one redis_unavailable per outage;
 * reconnects run on the loop after the same backoff with jitter (a timer,
 * never a blocking wait); the first sync after an outage emits one
 * redis_restored. The loop must run (event_base_dispatch / loop) for syncs
 * to happen; a failure that may trip the rule does not sync early in this
 * mode (staleness bound: sync_interval_ms plus one round trip).
 *
 * Threads: syncs, reconnects and events run on the thread that runs `base`;
 * create and free the breaker on that thread (or before the loop runs).
 * acquire / release / state / stats stay thread-safe, lock-free and
 * I/O-free: they never touch the async connection. bw_redis_breaker_sync
 * answers BW_E_INVAL for such a breaker (the loop syncs it).
 * bw_redis_breaker_free (on the loop thread, not from the breaker's own
 * sink) closes the async connection (a pending reply is dropped safely; its
 * batch is kept) and, when Redis was reachable, makes one last blocking push
 * bounded by the timeouts, re-sending that batch under its sequence so
 * nothing is counted twice. Free the breaker before event_base_free(base).
 *
 * NULL with err BW_E_INVAL naming "sync_thread" when cfg->sync_thread is set
 * (a breaker has one sync driver), "base" when base is NULL, or as
 * bw_redis_breaker_new (fields, AUTH, BW_E_NOMEM). */
BW_EXTERN bw_redis_breaker_t *bw_redis_breaker_new_async(
    const bw_redis_breaker_config_t *cfg, struct event_base *base,
    bw_error_t *err);

/* ---- queue guard (the asyncio toolkit)
 * ---------------------------------------------
 */

typedef struct bw_redis_queue_config_s {
  bw_redis_config_t redis;
  const char *name;      /* the list's key under the prefix; default "queue" */
  uint32_t max_size;     /* default 100, >= 1 */
  double warn_threshold; /* default 0.7, in (0, 1] */
  double warn_rearm_threshold;  /* default 0.6, in [0, warn_threshold): the
                                   warning re-arms when a dequeue takes the
                                   size below rearm x max_size */
  uint32_t dlq_max;             /* default 10000, >= 1: past it the oldest
                                   DLQ entries are dropped (and counted) */
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
  bw_sink_t *sink; /* queue_warning, dead_lettered, redis_* events */
} bw_redis_queue_config_t;

typedef struct bw_redis_queue_s bw_redis_queue_t;

typedef struct bw_redis_queue_stats_s {
  uint64_t admitted;
  uint64_t dead_lettered; /* sent to the DLQ because the queue was full */
  uint64_t warnings;      /* queue_warning events emitted here */
  uint64_t dequeued;
  uint64_t acked;
  uint64_t recovered;   /* moved back from a processing list */
  uint64_t errors;      /* operations that failed with BW_E_IO */
  uint64_t dlq_dropped; /* oldest DLQ entries dropped past dlq_max */
} bw_redis_queue_stats_t;

/* Fills the documented defaults (the asyncio toolkit: 100 items, warn at
 * 70 %; re-arm below 60 %, at most 10000 DLQ entries). */
BW_EXTERN void bw_redis_queue_config_init(bw_redis_queue_config_t *cfg);

/* Connects and loads the scripts. NULL with err: BW_E_INVAL naming the field
 * (max_size, warn_threshold, warn_rearm_threshold, dlq_max, a redis.*
 * option, a refused AUTH), BW_E_IO (cannot reach Redis), BW_E_NOMEM.
 * Later, a broken connection makes operations answer BW_E_IO, reconnects
 * with backoff and emits one redis_unavailable / redis_restored event per
 * outage. */
BW_EXTERN bw_redis_queue_t *bw_redis_queue_new(
    const bw_redis_queue_config_t *cfg, bw_error_t *err);

/* Enqueues a copy of payload[0..len) with one script: LLEN, then RPUSH when
 * below max_size, else a DLQ entry (JSON: payload, reason "queue_full",
 * error, ts_ms; past dlq_max entries the oldest are dropped, counted in
 * stats.dlq_dropped and named on the event: field dlq_dropped, and the
 * reason says so) and a dead_lettered event. Returns BW_OK (admitted; the item
 * is in Redis), BW_E_FULL (dead-lettered; the item is in the DLQ),
 * BW_E_IO (Redis unavailable: nothing acknowledged; on a timeout the item may
 * have been stored — retrying gives at-least-once), BW_E_INVAL. *size_out
 * (may be NULL) is the queue's size after the call. Emits queue_warning once
 * when the size reaches warn_threshold * max_size; it re-arms only when a
 * dequeue takes the size below warn_rearm_threshold * max_size.
 * Thread-safe (calls are serialised on one connection). */
BW_EXTERN int bw_redis_queue_enqueue(bw_redis_queue_t *q, const void *payload,
                                     size_t len, uint64_t *size_out);

/* Moves the oldest item to `consumer`'s processing list and returns a copy
 * (*payload, freed with bw_free; *len). BW_OK, BW_E_NOTFOUND (empty),
 * BW_E_IO, BW_E_INVAL, BW_E_NOMEM. Never blocks beyond the command timeout. */
BW_EXTERN int bw_redis_queue_dequeue(bw_redis_queue_t *q, const char *consumer,
                                     void **payload, size_t *len);

/* Acknowledges one item of consumer's processing list (removes it). BW_OK,
 * BW_E_NOTFOUND (no such item), BW_E_IO, BW_E_INVAL. */
BW_EXTERN int bw_redis_queue_ack(bw_redis_queue_t *q, const char *consumer,
                                 const void *payload, size_t len);

/* Moves every unacknowledged item of consumer's processing list back to the
 * front of the queue, oldest first (after a consumer crashed). *moved may be
 * NULL. BW_OK, BW_E_IO, BW_E_INVAL. */
BW_EXTERN int bw_redis_queue_recover(bw_redis_queue_t *q, const char *consumer,
                                     uint64_t *moved);

/* Sizes of the queue and of its DLQ. BW_OK, BW_E_IO, BW_E_INVAL. */
BW_EXTERN int bw_redis_queue_size(bw_redis_queue_t *q, uint64_t *size);
BW_EXTERN int bw_redis_queue_dlq_size(bw_redis_queue_t *q, uint64_t *size);

/* A copy of DLQ entry `index` (0 = oldest) as JSON text, NUL-terminated,
 * freed with bw_free. BW_OK, BW_E_NOTFOUND, BW_E_IO, BW_E_INVAL. */
BW_EXTERN int bw_redis_queue_dlq_get(bw_redis_queue_t *q, uint64_t index,
                                     char **json);

/* This handle's counters (the queue's sizes: bw_redis_queue_size). Zeroes
 * *out for a NULL queue. Thread-safe. */
BW_EXTERN void bw_redis_queue_stats(const bw_redis_queue_t *q,
                                    bw_redis_queue_stats_t *out);

/* Closes the connection and frees. NULL is fine. */
BW_EXTERN void bw_redis_queue_free(bw_redis_queue_t *q);

/* ---- idempotency records -------------------------------------------------
 */

typedef struct bw_redis_idem_config_s {
  bw_redis_config_t redis;
  const char *name; /* key namespace under the prefix; default "idem" */
} bw_redis_idem_config_t;

typedef struct bw_redis_idem_s bw_redis_idem_t;

/* Fills the documented defaults. */
BW_EXTERN void bw_redis_idem_config_init(bw_redis_idem_config_t *cfg);

/* As bw_redis_queue_new. */
BW_EXTERN bw_redis_idem_t *bw_redis_idem_new(const bw_redis_idem_config_t *cfg,
                                             bw_error_t *err);

/* Claims `key` for ttl_ms (SET NX PX, in one script with the read of an
 * existing record): *status NEW (claimed), IN_PROGRESS, or DONE with a copy
 * of the result in *result / *result_len (freed with bw_free; result may be
 * NULL when the caller does not want it). BW_OK, BW_E_IO, BW_E_INVAL (empty
 * key, ttl_ms < 1), BW_E_NOMEM. Thread-safe. */
BW_EXTERN int bw_redis_idem_begin(bw_redis_idem_t *d, const char *key,
                                  int64_t ttl_ms, bw_idem_state_t *status,
                                  void **result, size_t *result_len);

/* Records the result of key's work, kept for ttl_ms (whoever holds the
 * claim: this simple API has no tokens; bw_redis_idem_store_new has).
 * BW_OK, BW_E_IO, BW_E_INVAL, BW_E_NOMEM. */
BW_EXTERN int bw_redis_idem_complete(bw_redis_idem_t *d, const char *key,
                                     const void *result, size_t len,
                                     int64_t ttl_ms);

/* Drops an in-progress claim so the work may be retried (a DONE record is
 * kept). BW_OK, BW_E_NOTFOUND (no in-progress claim), BW_E_IO, BW_E_INVAL. */
BW_EXTERN int bw_redis_idem_abandon(bw_redis_idem_t *d, const char *key);

/* Closes the connection and frees. NULL is fine. */
BW_EXTERN void bw_redis_idem_free(bw_redis_idem_t *d);

/* ---- the store.h interfaces ---------------------------------------------
 */

/* A bw_queue_store_t (kind "redis") with store.h's semantics: ids, leases
 * and receipts, nack with delay, max_deliveries, a bounded DLQ with list /
 * requeue / delete, the queue guard and the warning with re-arm. Each
 * operation is one Lua script, atomic across every process sharing the
 * queue (same key_prefix and name). cfg->clock defaults to the wall clock
 * (leases must mean the same on every host); with a custom clock every
 * process must share its base. Stats: depth, in_flight, dlq_depth and
 * warning are the queue's; counters are this handle's. Batches are bounded
 * to 4096 items (BW_E_RANGE). Redis failures answer BW_E_IO and report one
 * redis_unavailable event per outage. NULL with err: as bw_redis_queue_new.
 * Free with bw_queue_store_free. */
BW_EXTERN bw_queue_store_t *bw_redis_queue_store_new(
    const bw_queue_store_config_t *cfg, const bw_redis_config_t *redis,
    bw_error_t *err);

/* A bw_idem_store_t (kind "redis"): begin places a marker that Redis
 * expires after lease_ms (PX, on the server's clock), complete stores the
 * result for ttl_ms, abandon drops the marker; tokens are random 63-bit
 * values checked by the script (BW_E_STALE when the marker is no longer the
 * caller's). max_keys does not apply (Redis bounds memory); stats.keys is
 * not tracked (0). expires_ns is on cfg->clock (default: the wall clock).
 * Free with bw_idem_store_free. */
BW_EXTERN bw_idem_store_t *bw_redis_idem_store_new(
    const bw_idem_config_t *cfg, const bw_redis_config_t *redis,
    bw_error_t *err);

/* ---- reply checks (for tests and fuzzers) --------------------------------
 */

/* The replies the component reads, one kind per consumer. */
typedef enum bw_redis_reply_kind_e {
  BW_REDIS_REPLY_BREAKER_SYNC,  /* the shared breaker's sync script (both the
                                   blocking and the event-loop mode) */
  BW_REDIS_REPLY_QUEUE_ENQUEUE, /* bw_redis_queue_enqueue; bound = max_size */
  BW_REDIS_REPLY_QUEUE_ITEM,    /* bw_redis_queue_dequeue, _dlq_get */
  BW_REDIS_REPLY_QUEUE_ACK,     /* bw_redis_queue_ack (LREM) */
  BW_REDIS_REPLY_QUEUE_RECOVER, /* bw_redis_queue_recover */
  BW_REDIS_REPLY_QUEUE_SIZE,    /* bw_redis_queue_size, _dlq_size (LLEN) */
  BW_REDIS_REPLY_IDEM_BEGIN,    /* bw_redis_idem_begin */
  BW_REDIS_REPLY_IDEM_COMPLETE, /* bw_redis_idem_complete (SET) */
  BW_REDIS_REPLY_IDEM_ABANDON,  /* bw_redis_idem_abandon */
  BW_REDIS_REPLY_STORE_ENQUEUE, /* the queue store's enqueue; bound = items */
  BW_REDIS_REPLY_STORE_CLAIM,   /* claim; bound = max */
  BW_REDIS_REPLY_STORE_ACK,
  BW_REDIS_REPLY_STORE_NACK,
  BW_REDIS_REPLY_STORE_REJECT,
  BW_REDIS_REPLY_STORE_DLQ_LIST, /* bound = max (after_id 0) */
  BW_REDIS_REPLY_STORE_REQUEUE,
  BW_REDIS_REPLY_STORE_DLQ_DELETE,
  BW_REDIS_REPLY_STORE_STATS,
  BW_REDIS_REPLY_IDEM_STORE_BEGIN,   /* the idempotency store's begin */
  BW_REDIS_REPLY_IDEM_STORE_SETTLED, /* its complete and abandon */
  BW_REDIS_REPLY__COUNT
} bw_redis_reply_kind_t;

/* For tests and fuzzers: runs the check that the consumer of `kind` runs on
 * every reply before reading it — shape, every field's type and range,
 * counts against `bound` (the caller's bound named above; ignored for the
 * other kinds) without overflow, states, generations and durations within
 * what any configuration produces — and reads the fields as the consumer
 * would, without any connection or allocation. `reply` is a const
 * redisReply * (from hiredis, e.g. its reader); it is not kept. BW_OK when
 * the consumer accepts the reply (whatever it means: NOTFOUND, FULL...);
 * BW_E_IO when the consumer treats it as an unexpected reply (the
 * operation fails with BW_E_IO, the connection is closed and the outage
 * reported), with *why (may be NULL; a static string) naming the field;
 * BW_E_INVAL for a NULL reply or an unknown kind. Thread-safe. */
BW_EXTERN int bw_redis_reply_check(bw_redis_reply_kind_t kind,
                                   const void *reply, uint64_t bound,
                                   const char **why);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_STORE_REDIS_H */

/* breakwater_redis — the checks of every reply the component reads (not
 * installed). Each consumer of a redisReply first runs its check here: the
 * shape (type, element count), every field's type and range, counts against
 * the caller's bounds (computed without overflow), states, generations and
 * durations within what any configuration can produce. A reply that fails
 * is "unexpected" (BW_E_IO, like a short reply: the connection is closed and
 * the outage reported) and `*why` names the field; nothing has been written
 * to the caller's outputs. After a check passes, the fields are read with
 * bw__rr_get (which cannot fail on them). No allocation, no I/O, hiredis
 * types only: the fuzzer reaches these through bw_redis_reply_check. */
#ifndef BW_REDIS_REPLY_H
#define BW_REDIS_REPLY_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "breakwater/store_redis.h"

/* Counts, ids and sizes: Lua numbers are exact up to 2^53. */
#define BW__RR_COUNT_MAX (INT64_C(1) << 53)
/* The longest break any breaker configuration accepts (the core's
 * ceiling for a duration in ms). */
#define BW__RR_BREAK_MAX_MS (INT64_MAX / 1000000 / 4)

/* r as an integer in [lo, hi]: an integer reply, or a string reply that is
 * exactly a decimal integer (scripts return HGET / ZRANGE values as
 * strings). false for anything else (another type, junk, overflow). */
bool bw__rr_int(const redisReply *r, int64_t lo, int64_t hi, int64_t *out);
/* The integer of a field a check has accepted (0 otherwise). */
int64_t bw__rr_get(const redisReply *r);

/* The shared breaker's sync script: {state, gen, remaining_ms, consec,
 * window_calls, window_failures, total_calls, fresh, reason}. */
typedef struct bw__rr_sync_s {
  int state; /* BW_CLOSED, BW_OPEN or BW_HALF_OPEN */
  uint64_t gen;
  int64_t rem_ms; /* 0 unless open */
  uint32_t consec;
  uint64_t wc, wf, tc;
  bool fresh;
  const char *reason; /* in the reply: not NUL-terminated for %s */
  size_t reason_len;
} bw__rr_sync_t;
int bw__rr_sync(const redisReply *r, bw__rr_sync_t *out, const char **why);

/* ---- the queue guard and the simple idempotency records (queue.c) */

/* enqueue: {admitted, size, warn, dlq entries dropped}, for a queue of
 * max_size (nothing dropped by an admission). */
int bw__rr_rq_enqueue(const redisReply *r, uint64_t max_size, bool *admitted,
                      uint64_t *size, bool *warn, uint64_t *dropped,
                      const char **why);
/* recover: {moved, size, warn}. */
int bw__rr_rq_recover(const redisReply *r, uint64_t *moved, uint64_t *size,
                      bool *warn, const char **why);
/* An item or nothing (dequeue, LINDEX): *found tells which. */
int bw__rr_item(const redisReply *r, bool *found, const char **why);
/* An integer reply in [0, hi] (LLEN, LREM, the abandon script). */
int bw__rr_count(const redisReply *r, int64_t hi, uint64_t *v,
                 const char **why);
/* The simple begin: {0} {1} or {2, result}; *result points into r. */
int bw__rr_ri_begin(const redisReply *r, int *code, const redisReply **result,
                    const char **why);
/* A status reply "OK" (SET). */
int bw__rr_ok(const redisReply *r, const char **why);

/* ---- the store.h backends (store.c) */

typedef struct bw__rr_qs_enq_s {
  uint64_t ok, refused, warn, first, dropped;
} bw__rr_qs_enq_t;
/* {ok, refused, warn, first, dropped, id x n}: ids of the admitted prefix
 * (r->element[5 + i]) are >= 1, the refused rest 0. */
int bw__rr_qs_enqueue(const redisReply *r, size_t n, bw__rr_qs_enq_t *out,
                      const char **why);

typedef struct bw__rr_qs_claim_s {
  size_t moved, got;
  uint64_t dropped;
} bw__rr_qs_claim_t;
typedef struct bw__rr_qs_item_s {
  uint64_t id, receipt;
  uint32_t deliveries;
  int64_t enqueued_ns;
  const redisReply *payload; /* a string reply */
} bw__rr_qs_item_t;
/* {moved, got, dropped, got x (id, receipt, deliveries, enqueued_ns,
 * payload), moved x (id, dlq_id, deliveries)}, got <= max, moved <= 16. */
int bw__rr_qs_claim(const redisReply *r, size_t max, bw__rr_qs_claim_t *out,
                    const char **why);
/* Claim i, or moved record k, of a checked claim reply. */
void bw__rr_qs_claim_item(const redisReply *r, size_t i, bw__rr_qs_item_t *it);
void bw__rr_qs_claim_moved(const redisReply *r, size_t got, size_t k,
                           uint64_t *id, uint64_t *dlq_id, uint64_t *del);

typedef enum { BW__RR_ACK, BW__RR_NACK, BW__RR_REJECT } bw__rr_settle_op_t;
/* ack / nack / reject: {-1} {-2} {0} or {1, dlq_id, deliveries, dropped}
 * (an ack never dead-letters, a reject always does). */
int bw__rr_qs_settle(const redisReply *r, bw__rr_settle_op_t op, int *code,
                     const char **why);

/* dlq_list: 7 fields a record, at most max records, ids increasing past
 * after_id. *count records. */
int bw__rr_qs_dlq_list(const redisReply *r, uint64_t after_id, size_t max,
                       size_t *count, const char **why);
/* requeue: {-1} {-2} or {new_id >= 1, warn}. */
int bw__rr_qs_requeue(const redisReply *r, int64_t *code, uint64_t *warn,
                      const char **why);
/* A one-element array {v} with v one of a or b (dlq_delete {0}/{-1}, the
 * idempotency store's complete / abandon {0}/{-1}). */
int bw__rr_one_of(const redisReply *r, int64_t a, int64_t b, int64_t *v,
                  const char **why);
/* stats: {depth, in_flight <= depth, dlq_depth, warned 0/1}. */
int bw__rr_qs_stats(const redisReply *r, uint64_t *depth, uint64_t *in_flight,
                    uint64_t *dlq_depth, bool *warned, const char **why);
/* The idempotency store's begin: {0, exp} {1, exp} {2, exp, status,
 * result}. */
int bw__rr_is_begin(const redisReply *r, int *code, int64_t *expires_ns,
                    int *status, const redisReply **result, const char **why);

#endif /* BW_REDIS_REPLY_H */

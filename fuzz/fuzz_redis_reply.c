/* Fuzz harness: every Redis reply consumer of breakwater_redis, through
 * bw_redis_reply_check (the checks the component runs before it reads a
 * reply: src/store/redis/reply.c, compiled in).
 *
 * Input: byte 0 picks the consumer (a value past the last kind feeds every
 * consumer), byte 1 is the caller's bound (the batch size of a store
 * enqueue, the max of a claim or a DLQ listing, the max_size of the queue
 * guard), the rest is RESP. hiredis's own reader (redisReaderCreate /
 * Feed / GetReply) turns it into redisReply trees, as on a connection; each
 * complete reply (at most 8) goes to the consumer(s); an input announcing
 * an array of more than 4096 elements is skipped (hiredis 0.14 allocates
 * the array up front). The consumers: the
 * shared breaker's sync (blocking and event-loop mode adopt through the
 * same check), the queue guard (bw_redis_queue_*: enqueue, dequeue and
 * dlq_get items, LREM, recover, LLEN), the simple idempotency records
 * (begin, SET, abandon), and the store.h backends (enqueue, claim, ack,
 * nack, reject, dlq_list, requeue, dlq_delete, stats, the idempotency
 * store's begin and complete/abandon). A check that accepts reads every
 * field as the consumer would (AddressSanitizer catches a read past the
 * reply). Invariants:
 * - the answer is BW_OK or BW_E_IO, with a reason for BW_E_IO; the same
 *   reply gives the same answer twice;
 * - a consumer of an array accepts only arrays; the breaker's sync only 9
 *   elements with a state of 0, 1 or 2; a store enqueue exactly 5 + bound
 *   elements; a claim at most 3 + 5 * bound + 3 * 16; a DLQ listing a
 *   multiple of 7, at most 7 * bound; LLEN only a non-negative integer. */
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "breakwater/store_redis.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool wants_array(bw_redis_reply_kind_t k) {
  return k != BW_REDIS_REPLY_QUEUE_ITEM && k != BW_REDIS_REPLY_QUEUE_ACK &&
         k != BW_REDIS_REPLY_QUEUE_SIZE && k != BW_REDIS_REPLY_IDEM_COMPLETE &&
         k != BW_REDIS_REPLY_IDEM_ABANDON;
}

static void feed(bw_redis_reply_kind_t k, const redisReply *r, uint64_t bound) {
  const char *why = NULL, *why2 = NULL;
  int rc = bw_redis_reply_check(k, r, bound, &why);
  CHECK(rc == BW_OK || rc == BW_E_IO);
  CHECK(why != NULL);
  if (rc == BW_E_IO) CHECK(why[0] != '\0');
  CHECK(bw_redis_reply_check(k, r, bound, &why2) == rc);
  CHECK(strcmp(why, why2) == 0);
  if (rc != BW_OK) return;
  if (wants_array(k)) CHECK(r->type == REDIS_REPLY_ARRAY);
  switch (k) {
  case BW_REDIS_REPLY_BREAKER_SYNC:
    CHECK(r->elements == 9);
    CHECK(r->element[0]->type == REDIS_REPLY_INTEGER
              ? r->element[0]->integer >= 0 && r->element[0]->integer <= 2
              : r->element[0]->len == 1 && r->element[0]->str[0] >= '0' &&
                    r->element[0]->str[0] <= '2');
    break;
  case BW_REDIS_REPLY_STORE_ENQUEUE:
    CHECK(r->elements == 5 + bound);
    break;
  case BW_REDIS_REPLY_STORE_CLAIM:
    CHECK(r->elements >= 3 && r->elements <= 3 + 5 * bound + 3 * 16);
    break;
  case BW_REDIS_REPLY_STORE_DLQ_LIST:
    CHECK(r->elements % 7 == 0 && r->elements <= 7 * bound);
    break;
  case BW_REDIS_REPLY_QUEUE_SIZE:
    CHECK(r->type == REDIS_REPLY_INTEGER && r->integer >= 0);
    break;
  default:
    break;
  }
}

/* hiredis 0.14's reader allocates a multibulk's element array when it
 * reads the header: an input announcing more than 4096 elements is
 * skipped (the harness would only measure malloc). */
static bool huge_multibulk(const uint8_t *p, size_t n) {
  size_t i, j;
  for (i = 0; i < n; i++) {
    unsigned long v = 0;
    if (p[i] != '*') continue;
    for (j = i + 1; j < n && p[j] >= '0' && p[j] <= '9'; j++) {
      v = v * 10 + (unsigned long)(p[j] - '0');
      if (v > 4096) return true;
    }
  }
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  redisReader *rd;
  void *reply = NULL;
  unsigned kind, n;
  uint64_t bound;
  if (size < 2 || huge_multibulk(data, size)) return 0;
  kind = data[0];
  bound = data[1];
  /* Unknown kinds and a NULL reply are refused, never read. */
  CHECK(bw_redis_reply_check(BW_REDIS_REPLY__COUNT, "", 0, NULL) == BW_E_INVAL);
  CHECK(bw_redis_reply_check(BW_REDIS_REPLY_BREAKER_SYNC, NULL, 0, NULL) ==
        BW_E_INVAL);
  rd = redisReaderCreate();
  CHECK(rd != NULL);
  if (redisReaderFeed(rd, (const char *)data + 2, size - 2) != REDIS_OK) {
    redisReaderFree(rd);
    return 0;
  }
  for (n = 0; n < 8; n++) {
    reply = NULL;
    if (redisReaderGetReply(rd, &reply) != REDIS_OK || reply == NULL) break;
    if (kind < BW_REDIS_REPLY__COUNT) {
      feed((bw_redis_reply_kind_t)kind, reply, bound);
    } else {
      unsigned k;
      for (k = 0; k < BW_REDIS_REPLY__COUNT; k++)
        feed((bw_redis_reply_kind_t)k, reply, bound);
    }
    freeReplyObject(reply);
  }
  redisReaderFree(rd);
  return 0;
}

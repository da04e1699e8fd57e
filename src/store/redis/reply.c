/* breakwater_redis — the checks of every reply the component reads (see
 * reply.h), and bw_redis_reply_check, their door for tests and fuzzers. */
#include "reply.h"

#include <limits.h>
#include <string.h>

#include "breakwater/breaker.h"

#define BW__FAIL(msg)              \
  do {                             \
    if (why != NULL) *why = (msg); \
    return BW_E_IO;                \
  } while (0)

bool bw__rr_int(const redisReply *r, int64_t lo, int64_t hi, int64_t *out) {
  int64_t v = 0;
  if (r == NULL) return false;
  if (r->type == REDIS_REPLY_INTEGER) {
    v = (int64_t)r->integer;
  } else if (r->type == REDIS_REPLY_STRING) {
    size_t i = 0, n = r->len;
    bool neg = false;
    uint64_t u = 0, lim;
    if (r->str == NULL || n == 0 || n > 20) return false;
    if (r->str[0] == '-') {
      neg = true;
      i = 1;
      if (n == 1) return false;
    }
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
      unsigned d = (unsigned char)r->str[i] - '0';
      if (d > 9) return false;
      if (u > (lim - d) / 10) return false;
      u = u * 10 + d;
    }
    v = neg ? (u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u)
            : (int64_t)u;
  } else {
    return false;
  }
  if (v < lo || v > hi) return false;
  if (out != NULL) *out = v;
  return true;
}

int64_t bw__rr_get(const redisReply *r) {
  int64_t v = 0;
  (void)bw__rr_int(r, INT64_MIN, INT64_MAX, &v);
  return v;
}

static bool bw__rr_arr(const redisReply *r, size_t n) {
  return r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == n &&
         (n == 0 || r->element != NULL);
}

static bool bw__rr_is_str(const redisReply *r) {
  return r != NULL && r->type == REDIS_REPLY_STRING &&
         (r->str != NULL || r->len == 0);
}

/* Field i of an array as an integer in [lo, hi]. */
static bool bw__rr_el(const redisReply *r, size_t i, int64_t lo, int64_t hi,
                      int64_t *out) {
  return bw__rr_int(r->element[i], lo, hi, out);
}

/* ---- the shared breaker ---------------------------------------------- */

int bw__rr_sync(const redisReply *r, bw__rr_sync_t *out, const char **why) {
  int64_t st, gen, rem, consec, wc, wf, tc, fresh;
  if (!bw__rr_arr(r, 9)) BW__FAIL("not an array of 9 elements");
  if (!bw__rr_el(r, 0, BW_CLOSED, BW_HALF_OPEN, &st))
    BW__FAIL("state is not 0, 1 or 2");
  if (!bw__rr_el(r, 1, 1, BW__RR_COUNT_MAX, &gen))
    BW__FAIL("generation is not in [1, 2^53]");
  if (!bw__rr_el(r, 2, 0, BW__RR_BREAK_MAX_MS, &rem))
    BW__FAIL("remaining break is not in [0, the longest break_ms]");
  if (rem != 0 && st != BW_OPEN) BW__FAIL("a remaining break while not open");
  if (!bw__rr_el(r, 3, 0, UINT32_MAX, &consec))
    BW__FAIL("consecutive failures are not in [0, 2^32)");
  if (!bw__rr_el(r, 4, 0, BW__RR_COUNT_MAX, &wc))
    BW__FAIL("window calls are not in [0, 2^53]");
  if (!bw__rr_el(r, 5, 0, wc, &wf))
    BW__FAIL("window failures are not in [0, window calls]");
  if (!bw__rr_el(r, 6, 0, BW__RR_COUNT_MAX, &tc))
    BW__FAIL("total calls are not in [0, 2^53]");
  if (!bw__rr_el(r, 7, 0, 1, &fresh)) BW__FAIL("fresh is not 0 or 1");
  if (!bw__rr_is_str(r->element[8])) BW__FAIL("reason is not a string");
  out->state = (int)st;
  out->gen = (uint64_t)gen;
  out->rem_ms = rem;
  out->consec = (uint32_t)consec;
  out->wc = (uint64_t)wc;
  out->wf = (uint64_t)wf;
  out->tc = (uint64_t)tc;
  out->fresh = fresh != 0;
  out->reason = r->element[8]->str;
  out->reason_len = r->element[8]->len;
  return BW_OK;
}

/* ---- queue guard, simple idempotency --------------------------------- */

int bw__rr_rq_enqueue(const redisReply *r, uint64_t max_size, bool *admitted,
                      uint64_t *size, bool *warn, uint64_t *dropped,
                      const char **why) {
  int64_t a, s, w, d;
  if (!bw__rr_arr(r, 4)) BW__FAIL("not an array of 4 elements");
  if (!bw__rr_el(r, 0, 0, 1, &a)) BW__FAIL("admitted is not 0 or 1");
  if (a ? !bw__rr_el(r, 1, 1, (int64_t)max_size, &s)
        : !bw__rr_el(r, 1, (int64_t)max_size, BW__RR_COUNT_MAX, &s))
    BW__FAIL(a ? "size after an admission is not in [1, max_size]"
               : "size after a refusal is below max_size");
  if (!bw__rr_el(r, 2, 0, a, &w))
    BW__FAIL("warn is not 0 or 1 (0 for a refusal)");
  if (!bw__rr_el(r, 3, 0, a ? 0 : BW__RR_COUNT_MAX, &d))
    BW__FAIL("dropped is not in [0, 2^53] (0 for an admission)");
  *admitted = a != 0;
  *size = (uint64_t)s;
  *warn = w != 0;
  *dropped = (uint64_t)d;
  return BW_OK;
}

int bw__rr_rq_recover(const redisReply *r, uint64_t *moved, uint64_t *size,
                      bool *warn, const char **why) {
  int64_t n, s, w;
  if (!bw__rr_arr(r, 3)) BW__FAIL("not an array of 3 elements");
  if (!bw__rr_el(r, 0, 0, BW__RR_COUNT_MAX, &n))
    BW__FAIL("moved is not in [0, 2^53]");
  if (!bw__rr_el(r, 1, n, BW__RR_COUNT_MAX, &s))
    BW__FAIL("size is not in [moved, 2^53]");
  if (!bw__rr_el(r, 2, 0, n > 0 ? 1 : 0, &w))
    BW__FAIL("warn is not 0 or 1 (0 when nothing moved)");
  *moved = (uint64_t)n;
  *size = (uint64_t)s;
  *warn = w != 0;
  return BW_OK;
}

int bw__rr_item(const redisReply *r, bool *found, const char **why) {
  if (r == NULL) BW__FAIL("no reply");
  if (r->type == REDIS_REPLY_NIL) {
    *found = false;
    return BW_OK;
  }
  if (!bw__rr_is_str(r)) BW__FAIL("neither an item nor nil");
  *found = true;
  return BW_OK;
}

int bw__rr_count(const redisReply *r, int64_t hi, uint64_t *v,
                 const char **why) {
  if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer < 0 ||
      (int64_t)r->integer > hi)
    BW__FAIL("not an integer in range");
  *v = (uint64_t)r->integer;
  return BW_OK;
}

int bw__rr_ri_begin(const redisReply *r, int *code, const redisReply **result,
                    const char **why) {
  int64_t c;
  if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
      r->element == NULL)
    BW__FAIL("not an array");
  if (!bw__rr_el(r, 0, 0, 2, &c)) BW__FAIL("state is not 0, 1 or 2");
  if (r->elements != (c == 2 ? 2u : 1u))
    BW__FAIL("wrong number of elements for its state");
  if (c == 2 && !bw__rr_is_str(r->element[1]))
    BW__FAIL("result is not a string");
  *code = (int)c;
  *result = c == 2 ? r->element[1] : NULL;
  return BW_OK;
}

int bw__rr_ok(const redisReply *r, const char **why) {
  if (r == NULL || r->type != REDIS_REPLY_STATUS || r->str == NULL ||
      strcmp(r->str, "OK") != 0)
    BW__FAIL("not +OK");
  return BW_OK;
}

/* ---- store.h backends ------------------------------------------------ */

int bw__rr_qs_enqueue(const redisReply *r, size_t n, bw__rr_qs_enq_t *out,
                      const char **why) {
  int64_t ok, refused, warn, first, dropped;
  size_t i;
  if (n > (size_t)BW__RR_COUNT_MAX || !bw__rr_arr(r, 5 + n))
    BW__FAIL("not an array of 5 + n elements");
  if (!bw__rr_el(r, 0, 0, (int64_t)n, &ok)) BW__FAIL("ok is not in [0, n]");
  if (!bw__rr_el(r, 1, 0, (int64_t)n, &refused) || ok + refused != (int64_t)n)
    BW__FAIL("ok + refused is not n");
  if (!bw__rr_el(r, 2, 0, BW__RR_COUNT_MAX, &warn))
    BW__FAIL("warn is not in [0, 2^53]");
  if (refused ? !bw__rr_el(r, 3, 1, BW__RR_COUNT_MAX, &first)
              : !bw__rr_el(r, 3, 0, 0, &first))
    BW__FAIL("first dlq id is not >= 1 (0 when nothing was refused)");
  if (!bw__rr_el(r, 4, 0, BW__RR_COUNT_MAX, &dropped))
    BW__FAIL("dropped is not in [0, 2^53]");
  for (i = 0; i < n; i++) {
    bool admitted = i < (size_t)ok;
    if (!bw__rr_el(r, 5 + i, admitted ? 1 : 0, admitted ? BW__RR_COUNT_MAX : 0,
                   NULL))
      BW__FAIL(
          "an id is not >= 1 for an admitted item and 0 for a refused "
          "one");
  }
  out->ok = (uint64_t)ok;
  out->refused = (uint64_t)refused;
  out->warn = (uint64_t)warn;
  out->first = (uint64_t)first;
  out->dropped = (uint64_t)dropped;
  return BW_OK;
}

static bool bw__rr_claim_item_ok(const redisReply *r, size_t pos) {
  return bw__rr_el(r, pos, 1, BW__RR_COUNT_MAX, NULL) &&
         bw__rr_el(r, pos + 1, 1, BW__RR_COUNT_MAX, NULL) &&
         bw__rr_el(r, pos + 2, 1, UINT32_MAX, NULL) &&
         bw__rr_el(r, pos + 3, INT64_MIN, INT64_MAX, NULL) &&
         bw__rr_is_str(r->element[pos + 4]);
}

int bw__rr_qs_claim(const redisReply *r, size_t max, bw__rr_qs_claim_t *out,
                    const char **why) {
  int64_t moved, got, dropped;
  size_t i, pos;
  if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
      r->element == NULL)
    BW__FAIL("not an array of at least 3 elements");
  if (!bw__rr_el(r, 0, 0, 16, &moved)) BW__FAIL("moved is not in [0, 16]");
  if (max > (size_t)BW__RR_COUNT_MAX) max = (size_t)BW__RR_COUNT_MAX;
  if (!bw__rr_el(r, 1, 0, (int64_t)max, &got))
    BW__FAIL("claimed count is not in [0, max]");
  if (!bw__rr_el(r, 2, 0, BW__RR_COUNT_MAX, &dropped))
    BW__FAIL("dropped is not in [0, 2^53]");
  /* Both bounded above: no overflow. */
  if (r->elements != 3 + (size_t)got * 5 + (size_t)moved * 3)
    BW__FAIL("element count is not 3 + 5 * claimed + 3 * moved");
  for (i = 0, pos = 3; i < (size_t)got; i++, pos += 5)
    if (!bw__rr_claim_item_ok(r, pos))
      BW__FAIL(
          "a claim is not (id >= 1, receipt >= 1, deliveries >= 1, "
          "enqueued_ns, payload string)");
  for (i = 0; i < (size_t)moved; i++, pos += 3)
    if (!bw__rr_el(r, pos, 1, BW__RR_COUNT_MAX, NULL) ||
        !bw__rr_el(r, pos + 1, 1, BW__RR_COUNT_MAX, NULL) ||
        !bw__rr_el(r, pos + 2, 0, UINT32_MAX, NULL))
      BW__FAIL(
          "a move to the DLQ is not (id >= 1, dlq_id >= 1, "
          "deliveries)");
  out->moved = (size_t)moved;
  out->got = (size_t)got;
  out->dropped = (uint64_t)dropped;
  return BW_OK;
}

void bw__rr_qs_claim_item(const redisReply *r, size_t i, bw__rr_qs_item_t *it) {
  size_t pos = 3 + i * 5;
  it->id = (uint64_t)bw__rr_get(r->element[pos]);
  it->receipt = (uint64_t)bw__rr_get(r->element[pos + 1]);
  it->deliveries = (uint32_t)bw__rr_get(r->element[pos + 2]);
  it->enqueued_ns = bw__rr_get(r->element[pos + 3]);
  it->payload = r->element[pos + 4];
}

void bw__rr_qs_claim_moved(const redisReply *r, size_t got, size_t k,
                           uint64_t *id, uint64_t *dlq_id, uint64_t *del) {
  size_t pos = 3 + got * 5 + k * 3;
  *id = (uint64_t)bw__rr_get(r->element[pos]);
  *dlq_id = (uint64_t)bw__rr_get(r->element[pos + 1]);
  *del = (uint64_t)bw__rr_get(r->element[pos + 2]);
}

int bw__rr_qs_settle(const redisReply *r, bw__rr_settle_op_t op, int *code,
                     const char **why) {
  int64_t c;
  if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
      r->element == NULL)
    BW__FAIL("not an array");
  if (!bw__rr_el(r, 0, -2, 1, &c)) BW__FAIL("code is not -2, -1, 0 or 1");
  if (c == 0 && op == BW__RR_REJECT)
    BW__FAIL("a reject that dead-lettered nothing");
  if (c == 1 && op == BW__RR_ACK) BW__FAIL("an ack that dead-lettered");
  if (r->elements != (c == 1 ? 4u : 1u))
    BW__FAIL("wrong number of elements for its code");
  if (c == 1 && (!bw__rr_el(r, 1, 1, BW__RR_COUNT_MAX, NULL) ||
                 !bw__rr_el(r, 2, 0, UINT32_MAX, NULL) ||
                 !bw__rr_el(r, 3, 0, BW__RR_COUNT_MAX, NULL)))
    BW__FAIL("a dead-lettering is not (dlq_id >= 1, deliveries, dropped)");
  *code = (int)c;
  return BW_OK;
}

int bw__rr_qs_dlq_list(const redisReply *r, uint64_t after_id, size_t max,
                       size_t *count, const char **why) {
  size_t i, n;
  int64_t prev = after_id > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)after_id;
  if (r == NULL || r->type != REDIS_REPLY_ARRAY ||
      (r->elements > 0 && r->element == NULL))
    BW__FAIL("not an array");
  if (r->elements % 7 != 0) BW__FAIL("element count is not a multiple of 7");
  n = r->elements / 7;
  if (n > max) BW__FAIL("more records than asked for");
  for (i = 0; i < n; i++) {
    size_t p = i * 7;
    int64_t id;
    if (prev >= BW__RR_COUNT_MAX ||
        !bw__rr_el(r, p, prev + 1, BW__RR_COUNT_MAX, &id))
      BW__FAIL("a dlq id is not above the one before (and after_id)");
    prev = id;
    if (!bw__rr_el(r, p + 1, 0, BW__RR_COUNT_MAX, NULL) ||
        !bw__rr_el(r, p + 2, 0, UINT32_MAX, NULL) ||
        !bw__rr_el(r, p + 3, INT64_MIN, INT64_MAX, NULL) ||
        !bw__rr_is_str(r->element[p + 4]) ||
        !bw__rr_is_str(r->element[p + 5]) || !bw__rr_is_str(r->element[p + 6]))
      BW__FAIL(
          "a record is not (id, item, deliveries, time_ns, reason, error, "
          "payload)");
  }
  *count = n;
  return BW_OK;
}

int bw__rr_qs_requeue(const redisReply *r, int64_t *code, uint64_t *warn,
                      const char **why) {
  int64_t c, w = 0;
  if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
      r->element == NULL)
    BW__FAIL("not an array");
  if (!bw__rr_el(r, 0, -2, BW__RR_COUNT_MAX, &c) || c == 0)
    BW__FAIL("code is not -2, -1 or a new id >= 1");
  if (r->elements != (c > 0 ? 2u : 1u))
    BW__FAIL("wrong number of elements for its code");
  if (c > 0 && !bw__rr_el(r, 1, 0, BW__RR_COUNT_MAX, &w))
    BW__FAIL("warn is not in [0, 2^53]");
  *code = c;
  *warn = (uint64_t)w;
  return BW_OK;
}

int bw__rr_one_of(const redisReply *r, int64_t a, int64_t b, int64_t *v,
                  const char **why) {
  int64_t x;
  if (!bw__rr_arr(r, 1)) BW__FAIL("not an array of 1 element");
  if (!bw__rr_el(r, 0, INT64_MIN, INT64_MAX, &x) || (x != a && x != b))
    BW__FAIL("code out of range");
  *v = x;
  return BW_OK;
}

int bw__rr_qs_stats(const redisReply *r, uint64_t *depth, uint64_t *in_flight,
                    uint64_t *dlq_depth, bool *warned, const char **why) {
  int64_t d, f, q, w;
  if (!bw__rr_arr(r, 4)) BW__FAIL("not an array of 4 elements");
  if (!bw__rr_el(r, 0, 0, BW__RR_COUNT_MAX, &d) || !bw__rr_el(r, 1, 0, d, &f) ||
      !bw__rr_el(r, 2, 0, BW__RR_COUNT_MAX, &q) || !bw__rr_el(r, 3, 0, 1, &w))
    BW__FAIL("not (depth, in_flight <= depth, dlq_depth, warned 0/1)");
  *depth = (uint64_t)d;
  *in_flight = (uint64_t)f;
  *dlq_depth = (uint64_t)q;
  *warned = w != 0;
  return BW_OK;
}

int bw__rr_is_begin(const redisReply *r, int *code, int64_t *expires_ns,
                    int *status, const redisReply **result, const char **why) {
  int64_t c, x, s = 0;
  if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
      r->element == NULL)
    BW__FAIL("not an array");
  if (!bw__rr_el(r, 0, 0, 2, &c)) BW__FAIL("state is not 0, 1 or 2");
  if (r->elements != (c == 2 ? 4u : 2u))
    BW__FAIL("wrong number of elements for its state");
  if (!bw__rr_el(r, 1, INT64_MIN, INT64_MAX, &x))
    BW__FAIL("expires_ns is not an integer");
  if (c == 2 &&
      (!bw__rr_el(r, 2, INT_MIN, INT_MAX, &s) || !bw__rr_is_str(r->element[3])))
    BW__FAIL("a result is not (status int, result string)");
  *code = (int)c;
  *expires_ns = x;
  *status = (int)s;
  *result = c == 2 ? r->element[3] : NULL;
  return BW_OK;
}

/* ---- the door for tests and fuzzers ------------------------------------ */

int bw_redis_reply_check(bw_redis_reply_kind_t kind, const void *reply,
                         uint64_t bound, const char **why) {
  const redisReply *r = reply;
  const char *w = NULL;
  int rc = BW_E_INVAL, code;
  bool b1, b2;
  uint64_t u1, u2, u3;
  int64_t i1;
  size_t n = bound > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)bound, i;
  const redisReply *res;
  if (why != NULL) *why = "";
  if (r == NULL) {
    if (why != NULL) *why = "reply is NULL";
    return BW_E_INVAL;
  }
  switch (kind) {
  case BW_REDIS_REPLY_BREAKER_SYNC: {
    bw__rr_sync_t s;
    rc = bw__rr_sync(r, &s, &w);
    break;
  }
  case BW_REDIS_REPLY_QUEUE_ENQUEUE:
    rc = bw__rr_rq_enqueue(r, bound, &b1, &u1, &b2, &u2, &w);
    break;
  case BW_REDIS_REPLY_QUEUE_ITEM:
    rc = bw__rr_item(r, &b1, &w);
    break;
  case BW_REDIS_REPLY_QUEUE_ACK:
    rc = bw__rr_count(r, 1, &u1, &w);
    break;
  case BW_REDIS_REPLY_QUEUE_RECOVER:
    rc = bw__rr_rq_recover(r, &u1, &u2, &b1, &w);
    break;
  case BW_REDIS_REPLY_QUEUE_SIZE:
    rc = bw__rr_count(r, BW__RR_COUNT_MAX, &u1, &w);
    break;
  case BW_REDIS_REPLY_IDEM_BEGIN:
    rc = bw__rr_ri_begin(r, &code, &res, &w);
    break;
  case BW_REDIS_REPLY_IDEM_COMPLETE:
    rc = bw__rr_ok(r, &w);
    break;
  case BW_REDIS_REPLY_IDEM_ABANDON:
    rc = bw__rr_count(r, 1, &u1, &w);
    break;
  case BW_REDIS_REPLY_STORE_ENQUEUE: {
    bw__rr_qs_enq_t e;
    rc = bw__rr_qs_enqueue(r, n, &e, &w);
    if (rc == BW_OK)
      for (i = 0; i < n; i++)
        (void)bw__rr_get(r->element[5 + i]);
    break;
  }
  case BW_REDIS_REPLY_STORE_CLAIM: {
    bw__rr_qs_claim_t c;
    bw__rr_qs_item_t it;
    rc = bw__rr_qs_claim(r, n, &c, &w);
    if (rc == BW_OK) {
      for (i = 0; i < c.got; i++)
        bw__rr_qs_claim_item(r, i, &it);
      for (i = 0; i < c.moved; i++)
        bw__rr_qs_claim_moved(r, c.got, i, &u1, &u2, &u3);
    }
    break;
  }
  case BW_REDIS_REPLY_STORE_ACK:
  case BW_REDIS_REPLY_STORE_NACK:
  case BW_REDIS_REPLY_STORE_REJECT:
    rc = bw__rr_qs_settle(r,
                          kind == BW_REDIS_REPLY_STORE_ACK    ? BW__RR_ACK
                          : kind == BW_REDIS_REPLY_STORE_NACK ? BW__RR_NACK
                                                              : BW__RR_REJECT,
                          &code, &w);
    break;
  case BW_REDIS_REPLY_STORE_DLQ_LIST:
    rc = bw__rr_qs_dlq_list(r, 0, n, &i, &w);
    break;
  case BW_REDIS_REPLY_STORE_REQUEUE:
    rc = bw__rr_qs_requeue(r, &i1, &u1, &w);
    break;
  case BW_REDIS_REPLY_STORE_DLQ_DELETE:
  case BW_REDIS_REPLY_IDEM_STORE_SETTLED:
    rc = bw__rr_one_of(r, 0, -1, &i1, &w);
    break;
  case BW_REDIS_REPLY_STORE_STATS:
    rc = bw__rr_qs_stats(r, &u1, &u2, &u3, &b1, &w);
    break;
  case BW_REDIS_REPLY_IDEM_STORE_BEGIN: {
    int st;
    rc = bw__rr_is_begin(r, &code, &i1, &st, &res, &w);
    break;
  }
  default:
    w = "unknown reply kind";
    rc = BW_E_INVAL;
  }
  if (why != NULL && w != NULL) *why = w;
  return rc;
}

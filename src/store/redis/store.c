/* breakwater_redis — the store.h interfaces on Redis: a durable queue with
 * leases, a DLQ and the queue guard (bw_queue_store_t), and idempotency
 * records (bw_idem_store_t). Every operation is one Lua script, so each is
 * atomic across every process that shares the queue.
 *
 * Layout, all under one hash tag "{qs:<name>}" (one cluster slot):
 *   ready    zset id -> id            visible items, oldest id first
 *   delayed  zset id -> visible_ms    nacked with a delay
 *   leased   zset id -> lease_ms      claimed (an expired lease stays here,
 *                                     honoured, until a claim takes it back)
 *   pay      hash id -> payload
 *   meta     hash id -> "deliveries|receipt|enqueued_ns"
 *   dlq      zset dlq_id -> dlq_id
 *   dlqrec   hash p<id> payload, i<id> item, d<id> deliveries,
 *                 t<id> time_ns, r<id> reason, e<id> error
 *   ctr      hash next_id, next_dlq, next_receipt, warned
 * Time: the store's clock (ns, and ms for the zset scores) is passed in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_internal.h"

/* The script, in parts (C compilers need only support 4095-byte string
 * literals); joined once at creation. */
static const char *const bw__qs_parts[] = {
    "local K = KEYS\n"
    "local op = ARGV[1]\n"
    "local now_ns, now_ms = ARGV[2], tonumber(ARGV[3])\n"
    "local max, warn_at = tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    "local rearm, dlq_max = tonumber(ARGV[6]), tonumber(ARGV[7])\n"
    "local maxdel = tonumber(ARGV[8])\n"
    "local dropped = 0\n"
    "local function depth()\n"
    "  return redis.call('ZCARD', K[1]) + redis.call('ZCARD', K[2]) + "
    "redis.call('ZCARD', K[3])\n"
    "end\n"
    "local function grew(out)\n"
    "  local d = depth()\n"
    "  if d >= warn_at and redis.call('HSETNX', K[8], 'warned', 1) == 1 then "
    "return d end\n"
    "  return out\n"
    "end\n"
    "local function shrank()\n"
    "  if depth() < rearm then redis.call('HDEL', K[8], 'warned') end\n"
    "end\n"
    "local function meta(id)\n"
    "  local m = redis.call('HGET', K[5], id)\n"
    "  if not m then return nil end\n"
    "  local d, r, e = string.match(m, '^(%d+)|(%d+)|(.*)$')\n"
    "  return tonumber(d), r, e\n"
    "end\n"
    "local function to_dlq(item, payload, del, reason, err)\n"
    "  local did = redis.call('HINCRBY', K[8], 'next_dlq', 1)\n"
    "  redis.call('HSET', K[7], 'p' .. did, payload, 'i' .. did, item, "
    "'d' .. did, del, 't' .. did, now_ns, 'r' .. did, reason, 'e' .. did, "
    "err)\n"
    "  redis.call('ZADD', K[6], did, did)\n"
    "  while redis.call('ZCARD', K[6]) > dlq_max do\n"
    "    local old = redis.call('ZPOPMIN', K[6])\n"
    "    local o = old[1]\n"
    "    redis.call('HDEL', K[7], 'p' .. o, 'i' .. o, 'd' .. o, 't' .. o, "
    "'r' .. o, 'e' .. o)\n"
    "    dropped = dropped + 1\n"
    "  end\n"
    "  return did\n"
    "end\n"
    "local function remove(id)\n"
    "  local p = redis.call('HGET', K[4], id) or ''\n"
    "  redis.call('HDEL', K[4], id)\n"
    "  redis.call('HDEL', K[5], id)\n"
    "  redis.call('ZREM', K[1], id)\n"
    "  redis.call('ZREM', K[2], id)\n"
    "  redis.call('ZREM', K[3], id)\n"
    "  return p\n"
    "end\n",
    "if op == 'enqueue' then\n"
    "  local n = tonumber(ARGV[10])\n"
    "  local d = depth()\n"
    "  local ids, ok, refused, warn, first = {}, 0, 0, 0, 0\n"
    "  for i = 1, n do\n"
    "    local p = ARGV[10 + i]\n"
    "    if refused == 0 and d < max then\n"
    "      local id = redis.call('HINCRBY', K[8], 'next_id', 1)\n"
    "      redis.call('HSET', K[4], id, p)\n"
    "      redis.call('HSET', K[5], id, '0|0|' .. now_ns)\n"
    "      redis.call('ZADD', K[1], id, id)\n"
    "      d = d + 1; ok = ok + 1; ids[i] = id\n"
    "      warn = grew(warn)\n"
    "    else\n"
    "      local did = to_dlq(0, p, 0, 'queue_full', ARGV[9])\n"
    "      if first == 0 then first = did end\n"
    "      refused = refused + 1; ids[i] = 0\n"
    "    end\n"
    "  end\n"
    "  local out = {ok, refused, warn, first, dropped}\n"
    "  for i = 1, n do out[5 + i] = ids[i] end\n"
    "  return out\n",
    "elseif op == 'claim' then\n"
    "  local vis, want = tonumber(ARGV[9]), tonumber(ARGV[10])\n"
    "  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K[2], '-inf', now_ms, "
    "'LIMIT', 0, 1000)) do\n"
    "    redis.call('ZREM', K[2], id); redis.call('ZADD', K[1], id, id)\n"
    "  end\n"
    "  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K[3], '-inf', now_ms, "
    "'LIMIT', 0, 1000)) do\n"
    /* Expired leases go back to the ready set but keep their receipt: an
     * item nobody re-claims still acks with it (store.h); a claim that
     * hands it out below gives it a new receipt. */
    "    redis.call('ZREM', K[3], id); redis.call('ZADD', K[1], id, id)\n"
    "  end\n"
    "  local out, mv, moved, got = {0, 0, 0}, {}, 0, 0\n"
    "  for _, id in ipairs(redis.call('ZRANGE', K[1], 0, want + 15)) do\n"
    "    if got >= want then break end\n"
    "    local d, r, e = meta(id)\n"
    "    if d == nil then\n"
    "      redis.call('ZREM', K[1], id)\n"
    "    elseif d >= maxdel then\n"
    "      if moved < 16 then\n"
    "        local p = remove(id)\n"
    "        local did = to_dlq(id, p, d, 'max_deliveries', 'delivered ' .. d "
    ".. ' times without an ack')\n"
    "        moved = moved + 1\n"
    "        table.insert(mv, id); table.insert(mv, did); table.insert(mv, d)\n"
    "      end\n"
    "    else\n"
    "      local rc = redis.call('HINCRBY', K[8], 'next_receipt', 1)\n"
    "      d = d + 1\n"
    "      redis.call('HSET', K[5], id, d .. '|' .. rc .. '|' .. e)\n"
    "      redis.call('ZREM', K[1], id)\n"
    "      redis.call('ZADD', K[3], now_ms + vis, id)\n"
    "      table.insert(out, id); table.insert(out, rc); table.insert(out, d)\n"
    "      table.insert(out, e); table.insert(out, redis.call('HGET', K[4], "
    "id) or '')\n"
    "      got = got + 1\n"
    "    end\n"
    "  end\n"
    "  if moved > 0 then shrank() end\n"
    "  out[1], out[2], out[3] = moved, got, dropped\n"
    "  for _, v in ipairs(mv) do table.insert(out, v) end\n"
    "  return out\n",
    "elseif op == 'ack' or op == 'nack' or op == 'reject' then\n"
    "  local id = ARGV[9]\n"
    "  local d, r, e = meta(id)\n"
    "  if d == nil then return {-1} end\n"
    "  if r == '0' or r ~= ARGV[10] then return {-2} end\n"
    "  if op == 'ack' then\n"
    "    remove(id); shrank(); return {0}\n"
    "  end\n"
    "  if op == 'nack' and d < maxdel then\n"
    "    local delay = tonumber(ARGV[11])\n"
    "    redis.call('ZREM', K[3], id)\n"
    "    redis.call('HSET', K[5], id, d .. '|0|' .. e)\n"
    "    if delay > 0 then redis.call('ZADD', K[2], now_ms + delay, id)\n"
    "    else redis.call('ZADD', K[1], id, id) end\n"
    "    return {0}\n"
    "  end\n"
    "  local p = remove(id)\n"
    "  local did\n"
    "  if op == 'nack' then\n"
    "    did = to_dlq(id, p, d, 'max_deliveries', 'nacked after ' .. d .. ' "
    "deliveries')\n"
    "  else\n"
    "    did = to_dlq(id, p, d, 'rejected', ARGV[11])\n"
    "  end\n"
    "  shrank()\n"
    "  return {1, did, d, dropped}\n",
    "elseif op == 'dlq_list' then\n"
    "  local out = {}\n"
    "  for _, did in ipairs(redis.call('ZRANGEBYSCORE', K[6], '(' .. ARGV[9], "
    "'+inf', 'LIMIT', 0, tonumber(ARGV[10]))) do\n"
    "    local v = redis.call('HMGET', K[7], 'i' .. did, 'd' .. did, 't' .. "
    "did, 'r' .. did, 'e' .. did, 'p' .. did)\n"
    "    table.insert(out, did)\n"
    "    for j = 1, 6 do table.insert(out, v[j] or '') end\n"
    "  end\n"
    "  return out\n"
    "elseif op == 'requeue' then\n"
    "  local did = ARGV[9]\n"
    "  if not redis.call('ZSCORE', K[6], did) then return {-1} end\n"
    "  if depth() >= max then return {-2} end\n"
    "  local p = redis.call('HGET', K[7], 'p' .. did) or ''\n"
    "  redis.call('ZREM', K[6], did)\n"
    "  redis.call('HDEL', K[7], 'p' .. did, 'i' .. did, 'd' .. did, 't' .. "
    "did, 'r' .. did, 'e' .. did)\n"
    "  local id = redis.call('HINCRBY', K[8], 'next_id', 1)\n"
    "  redis.call('HSET', K[4], id, p)\n"
    "  redis.call('HSET', K[5], id, '0|0|' .. now_ns)\n"
    "  redis.call('ZADD', K[1], id, id)\n"
    "  return {id, grew(0)}\n"
    "elseif op == 'dlq_delete' then\n"
    "  local did = ARGV[9]\n"
    "  if redis.call('ZREM', K[6], did) == 0 then return {-1} end\n"
    "  redis.call('HDEL', K[7], 'p' .. did, 'i' .. did, 'd' .. did, 't' .. "
    "did, 'r' .. did, 'e' .. did)\n"
    "  return {0}\n"
    "elseif op == 'stats' then\n"
    "  return {depth(), redis.call('ZCOUNT', K[3], '(' .. now_ms, '+inf'), "
    "redis.call('ZCARD', K[6]), redis.call('HEXISTS', K[8], 'warned')}\n"
    "end\n"
    "return redis.error_reply('unknown op ' .. op)\n"};

#define BW__QS_NKEYS 8

typedef struct bw__rqs_s {
  bw_queue_store_t base; /* first: the interface */
  bw__rclient_t cl;
  bw_queue_store_config_t cfg;
  char *keys[BW__QS_NKEYS];
  uint64_t warn_at, rearm_below;
  char a_max[24], a_warn[24], a_rearm[24], a_dlqmax[24], a_maxdel[24];
  char full_msg[160];
  bw_queue_store_stats_t st; /* this handle's counters (cl.mu) */
  char *script;              /* bw__qs_parts joined */
} bw__rqs_t;

/* Runs the script: KEYS then the 8 common ARGV then `extra`. */
static redisReply *bw__rqs_run(bw__rqs_t *q, const char *op, int64_t now,
                               int nextra, const char **extra,
                               const size_t *elens) {
  int total = BW__QS_NKEYS + 8 + nextra;
  const char **av = bw_calloc((size_t)total, sizeof(*av));
  size_t *al = bw_calloc((size_t)total, sizeof(*al));
  char ns[24], ms[24];
  redisReply *r = NULL;
  int i, n = 0;
  if (av == NULL || al == NULL) {
    snprintf(q->cl.conn.last_error, sizeof(q->cl.conn.last_error),
             "out of memory");
    q->cl.conn.oom = true;
    goto out;
  }
  snprintf(ns, sizeof(ns), "%lld", (long long)now);
  snprintf(ms, sizeof(ms), "%lld", (long long)(now / BW_NS_PER_MS));
  for (i = 0; i < BW__QS_NKEYS; i++)
    av[n++] = q->keys[i];
  av[n++] = op;
  av[n++] = ns;
  av[n++] = ms;
  av[n++] = q->a_max;
  av[n++] = q->a_warn;
  av[n++] = q->a_rearm;
  av[n++] = q->a_dlqmax;
  av[n++] = q->a_maxdel;
  for (i = 0; i < n; i++)
    al[i] = strlen(av[i]);
  for (i = 0; i < nextra; i++) {
    av[n] = extra[i];
    al[n] = elens != NULL ? elens[i] : strlen(extra[i]);
    n++;
  }
  r = bw__rconn_eval(&q->cl.conn, 0, BW__QS_NKEYS, n, av, al);
out:
  bw_free(av);
  bw_free(al);
  return r;
}

/* With cl.mu held: no reply (the call failed: last_error says why), or one
 * that is not what the script returns (op, why: reply.h): frees it and
 * counts the failure. BW_E_IO or BW_E_NOMEM. */
static int bw__rqs_bad(bw__rqs_t *q, redisReply *r, const char *op,
                       const char *why) {
  if (r != NULL) {
    freeReplyObject(r);
    (void)bw__rconn_unexpected(&q->cl.conn, op, why);
  }
  return bw__rcl_failed(&q->cl);
}

/* With cl.mu held: connects if need be and runs op (bw__rqs_run) at the
 * store's clock reading, returned in *now (if not NULL). The reply, an array
 * (freed by the caller, who checks the rest with reply.h), or NULL with *rc
 * set: BW_E_IO (Redis down, the call failed, not an array) or
 * BW_E_NOMEM. */
static redisReply *bw__rqs_call(bw__rqs_t *q, const char *op, int nextra,
                                const char **extra, const size_t *elens,
                                int64_t *now, int *rc) {
  redisReply *r;
  int64_t t;
  if ((*rc = bw__rcl_ready(&q->cl)) != BW_OK) return NULL;
  t = bw_clock_now(q->cfg.clock);
  if (now != NULL) *now = t;
  r = bw__rqs_run(q, op, t, nextra, extra, elens);
  if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
    *rc = bw__rqs_bad(q, r, op, "not an array");
    return NULL;
  }
  return r;
}

static void bw__rqs_warn(bw__rqs_t *q, uint64_t depth) {
  q->st.warnings++;
  bw_queue_event_warning(q->cl.sink, q->cl.wall, q->cl.name,
                         bw_clock_now(bw_clock_monotonic()), q->cfg.max_size,
                         depth);
}

static void bw__rqs_dead(bw__rqs_t *q, const char *reason, const char *error,
                         uint64_t item_id, uint64_t dlq_id, uint64_t del,
                         uint64_t count) {
  q->st.dead_lettered += count;
  bw_queue_event_dead_lettered(q->cl.sink, q->cl.wall, q->cl.name,
                               bw_clock_now(bw_clock_monotonic()), reason,
                               error, item_id, dlq_id, del, count);
}

static int bw__rqs_enqueue(bw_queue_store_t *base, const bw_blob_t *items,
                           size_t n, uint64_t *ids, size_t *accepted) {
  bw__rqs_t *q = (bw__rqs_t *)base;
  const char **av;
  size_t *al, i;
  char cnt[24];
  redisReply *r;
  int rc;
  /* One script, one atomic step: batches are bounded. */
  if (n > 4096) return BW_E_RANGE;
  av = bw_calloc(n + 2, sizeof(*av));
  al = bw_calloc(n + 2, sizeof(*al));
  if (av == NULL || al == NULL) {
    bw_free(av);
    bw_free(al);
    return BW_E_NOMEM;
  }
  snprintf(cnt, sizeof(cnt), "%zu", n);
  av[0] = q->full_msg;
  al[0] = strlen(q->full_msg);
  av[1] = cnt;
  al[1] = strlen(cnt);
  for (i = 0; i < n; i++) {
    av[i + 2] = items[i].data != NULL ? items[i].data : "";
    al[i + 2] = items[i].len;
  }
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rqs_call(q, "enqueue", (int)(n + 2), av, al, NULL, &rc);
  if (r == NULL) goto out;
  {
    bw__rr_qs_enq_t v;
    const char *why;
    if (bw__rr_qs_enqueue(r, n, &v, &why) != BW_OK) {
      rc = bw__rqs_bad(q, r, "enqueue", why);
      goto out;
    }
    q->st.dlq_dropped += v.dropped;
    for (i = 0; i < n; i++)
      if (ids != NULL) ids[i] = (uint64_t)bw__rr_get(r->element[5 + i]);
    q->st.enqueued += v.ok;
    q->st.refused_full += v.refused;
    if (accepted != NULL) *accepted = (size_t)v.ok;
    if (v.warn) bw__rqs_warn(q, v.warn);
    if (v.refused)
      bw__rqs_dead(q, BW_DLQ_QUEUE_FULL, q->full_msg, 0, v.first, 0, v.refused);
    rc = v.refused ? BW_E_FULL : BW_OK;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  bw_free(av);
  bw_free(al);
  return rc;
}

static int bw__rqs_claim(bw_queue_store_t *base, size_t max,
                         int64_t visibility_ms, bw_stored_item_t *out,
                         size_t *n) {
  bw__rqs_t *q = (bw__rqs_t *)base;
  char a_vis[24], a_max[24];
  const char *av[2];
  redisReply *r;
  size_t i, k, got = 0, moved;
  int64_t now;
  int rc;
  *n = 0;
  if (max > 1000) max = 1000;
  snprintf(a_vis, sizeof(a_vis), "%lld", (long long)visibility_ms);
  snprintf(a_max, sizeof(a_max), "%zu", max);
  av[0] = a_vis;
  av[1] = a_max;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rqs_call(q, "claim", 2, av, NULL, &now, &rc);
  if (r == NULL) goto out;
  {
    bw__rr_qs_claim_t v;
    const char *why;
    /* got <= max (the caller's array), moved <= 16, the element count
     * matched without overflow, every field in range: before any write. */
    if (bw__rr_qs_claim(r, max, &v, &why) != BW_OK) {
      rc = bw__rqs_bad(q, r, "claim", why);
      got = 0;
      goto out;
    }
    moved = v.moved;
    got = v.got;
    q->st.dlq_dropped += v.dropped;
  }
  /* got claims (id, receipt, deliveries, enqueued_ns, payload), then
   * moved moves to the DLQ (id, dlq_id, deliveries). */
  for (i = 0; i < got; i++) {
    bw_stored_item_t *it = &out[i];
    bw__rr_qs_item_t v;
    bw__rr_qs_claim_item(r, i, &v);
    memset(it, 0, sizeof(*it));
    it->payload = bw_memdup(v.payload->str, v.payload->len);
    if (it->payload == NULL) {
      /* Leased but not handed out: the lease expires and it comes back. */
      if (i == 0) rc = BW_E_NOMEM;
      break;
    }
    it->len = v.payload->len;
    it->id = v.id;
    it->receipt = v.receipt;
    it->deliveries = v.deliveries;
    it->enqueued_ns = v.enqueued_ns;
    it->lease_until_ns = now + visibility_ms * BW_NS_PER_MS;
  }
  for (k = 0; k < moved; k++) {
    char msg[64];
    uint64_t mid, did, del;
    bw__rr_qs_claim_moved(r, got, k, &mid, &did, &del);
    snprintf(msg, sizeof(msg), "delivered %llu times without an ack",
             (unsigned long long)del);
    bw__rqs_dead(q, BW_DLQ_MAX_DELIVERIES, msg, mid, did, del, 1);
  }
  got = i;
  q->st.claimed += got;
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  *n = got;
  return rc;
}

/* ack / nack / reject. */
static int bw__rqs_settle(bw__rqs_t *q, const char *op, uint64_t id,
                          uint64_t receipt, const char *extra) {
  char a_id[24], a_rc[24];
  const char *av[3];
  redisReply *r;
  int rc, nargs = 2, code;
  snprintf(a_id, sizeof(a_id), "%llu", (unsigned long long)id);
  snprintf(a_rc, sizeof(a_rc), "%llu", (unsigned long long)receipt);
  av[0] = a_id;
  av[1] = a_rc;
  if (extra != NULL) {
    av[2] = extra;
    nargs = 3;
  }
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rqs_call(q, op, nargs, av, NULL, NULL, &rc);
  if (r == NULL) goto out;
  {
    const char *why;
    bw__rr_settle_op_t sop = strcmp(op, "ack") == 0    ? BW__RR_ACK
                             : strcmp(op, "nack") == 0 ? BW__RR_NACK
                                                       : BW__RR_REJECT;
    if (bw__rr_qs_settle(r, sop, &code, &why) != BW_OK) {
      rc = bw__rqs_bad(q, r, op, why);
      goto out;
    }
  }
  switch (code) {
  case -1:
    rc = BW_E_NOTFOUND;
    break;
  case -2:
    q->st.stale++;
    rc = BW_E_STALE;
    break;
  case 1: {
    char msg[160];
    bool rej = strcmp(op, "reject") == 0;
    q->st.dlq_dropped += (uint64_t)bw__rr_get(r->element[3]);
    if (!rej) {
      q->st.nacked++;
      snprintf(msg, sizeof(msg), "nacked after %lld deliveries",
               (long long)bw__rr_get(r->element[2]));
    } else {
      snprintf(msg, sizeof(msg), "%s", extra);
    }
    bw__rqs_dead(q, rej ? BW_DLQ_REJECTED : BW_DLQ_MAX_DELIVERIES, msg, id,
                 (uint64_t)bw__rr_get(r->element[1]),
                 (uint64_t)bw__rr_get(r->element[2]), 1);
    rc = BW_OK;
    break;
  }
  default:
    if (strcmp(op, "ack") == 0) q->st.acked++;
    if (strcmp(op, "nack") == 0) q->st.nacked++;
    rc = BW_OK;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

static int bw__rqs_ack(bw_queue_store_t *base, uint64_t id, uint64_t receipt) {
  return bw__rqs_settle((bw__rqs_t *)base, "ack", id, receipt, NULL);
}

static int bw__rqs_nack(bw_queue_store_t *base, uint64_t id, uint64_t receipt,
                        int64_t delay_ms) {
  char d[24];
  snprintf(d, sizeof(d), "%lld", (long long)delay_ms);
  return bw__rqs_settle((bw__rqs_t *)base, "nack", id, receipt, d);
}

static int bw__rqs_reject(bw_queue_store_t *base, uint64_t id, uint64_t receipt,
                          const char *error) {
  return bw__rqs_settle((bw__rqs_t *)base, "reject", id, receipt,
                        error != NULL ? error : "");
}

static int bw__rqs_dlq_list(bw_queue_store_t *base, uint64_t after_id,
                            size_t max, bw_dlq_record_t *out, size_t *n) {
  bw__rqs_t *q = (bw__rqs_t *)base;
  char a_after[24], a_max[24];
  const char *av[2];
  redisReply *r;
  size_t i, got = 0;
  int rc;
  *n = 0;
  if (max > 1000) max = 1000;
  snprintf(a_after, sizeof(a_after), "%llu", (unsigned long long)after_id);
  snprintf(a_max, sizeof(a_max), "%zu", max);
  av[0] = a_after;
  av[1] = a_max;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rqs_call(q, "dlq_list", 2, av, NULL, NULL, &rc);
  if (r == NULL) goto out;
  {
    const char *why;
    size_t count;
    if (bw__rr_qs_dlq_list(r, after_id, max, &count, &why) != BW_OK) {
      rc = bw__rqs_bad(q, r, "dlq_list", why);
      goto out;
    }
  }
  for (i = 0; i + 7 <= r->elements && got < max; i += 7) {
    bw_dlq_record_t *d = &out[got];
    const redisReply *p = r->element[i + 6];
    memset(d, 0, sizeof(*d));
    d->payload = bw_memdup(p->str, p->len);
    if (d->payload == NULL) {
      rc = BW_E_NOMEM;
      break;
    }
    d->len = p->len;
    d->id = (uint64_t)bw__rr_get(r->element[i]);
    d->item_id = (uint64_t)bw__rr_get(r->element[i + 1]);
    d->deliveries = (uint32_t)bw__rr_get(r->element[i + 2]);
    d->time_ns = bw__rr_get(r->element[i + 3]);
    snprintf(d->reason, sizeof(d->reason), "%s", r->element[i + 4]->str);
    snprintf(d->error, sizeof(d->error), "%s", r->element[i + 5]->str);
    got++;
  }
  freeReplyObject(r);
  if (rc != BW_OK) {
    bw_dlq_records_clear(out, got);
    got = 0;
  }
out:
  pthread_mutex_unlock(&q->cl.mu);
  *n = got;
  return rc;
}

/* With cl.mu held: bw__rqs_call for an op on one DLQ record. */
static redisReply *bw__rqs_call_dlq(bw__rqs_t *q, const char *op,
                                    uint64_t dlq_id, int *rc) {
  char a_id[24];
  const char *av[1];
  snprintf(a_id, sizeof(a_id), "%llu", (unsigned long long)dlq_id);
  av[0] = a_id;
  return bw__rqs_call(q, op, 1, av, NULL, NULL, rc);
}

static int bw__rqs_requeue(bw_queue_store_t *base, uint64_t dlq_id,
                           uint64_t *new_id) {
  bw__rqs_t *q = (bw__rqs_t *)base;
  redisReply *r;
  int rc;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rqs_call_dlq(q, "requeue", dlq_id, &rc);
  if (r == NULL) goto out;
  {
    int64_t v;
    uint64_t warn;
    const char *why;
    if (bw__rr_qs_requeue(r, &v, &warn, &why) != BW_OK) {
      rc = bw__rqs_bad(q, r, "requeue", why);
      goto out;
    }
    if (v == -1) {
      rc = BW_E_NOTFOUND;
    } else if (v == -2) {
      rc = BW_E_FULL;
    } else {
      if (new_id != NULL) *new_id = (uint64_t)v;
      q->st.requeued++;
      if (warn > 0) bw__rqs_warn(q, warn);
    }
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

static int bw__rqs_dlq_delete(bw_queue_store_t *base, uint64_t dlq_id) {
  bw__rqs_t *q = (bw__rqs_t *)base;
  redisReply *r;
  int rc;
  pthread_mutex_lock(&q->cl.mu);
  r = bw__rqs_call_dlq(q, "dlq_delete", dlq_id, &rc);
  if (r == NULL) goto out;
  {
    int64_t v;
    const char *why;
    if (bw__rr_one_of(r, 0, -1, &v, &why) != BW_OK) {
      rc = bw__rqs_bad(q, r, "dlq_delete", why);
      goto out;
    }
    rc = v == 0 ? BW_OK : BW_E_NOTFOUND;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

static int bw__rqs_stats(bw_queue_store_t *base, bw_queue_store_stats_t *out) {
  bw__rqs_t *q = (bw__rqs_t *)base;
  redisReply *r;
  int rc;
  pthread_mutex_lock(&q->cl.mu);
  *out = q->st;
  out->max_size = q->cfg.max_size;
  r = bw__rqs_call(q, "stats", 0, NULL, NULL, NULL, &rc);
  if (r == NULL) goto out;
  {
    uint64_t depth, in_flight, dlq_depth;
    bool warned;
    const char *why;
    if (bw__rr_qs_stats(r, &depth, &in_flight, &dlq_depth, &warned, &why) !=
        BW_OK) {
      rc = bw__rqs_bad(q, r, "stats", why);
      goto out;
    }
    out->depth = depth;
    out->in_flight = in_flight;
    out->dlq_depth = dlq_depth;
    out->warning = warned;
  }
  out->fill = (double)out->depth / (double)q->cfg.max_size;
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&q->cl.mu);
  return rc;
}

static const char *bw__rqs_name(const bw_queue_store_t *base) {
  return ((const bw__rqs_t *)base)->cl.name;
}

static void bw__rqs_free(bw_queue_store_t *base) {
  bw__rqs_t *q = (bw__rqs_t *)base;
  int i;
  bw__rcl_destroy(&q->cl);
  for (i = 0; i < BW__QS_NKEYS; i++)
    bw_free(q->keys[i]);
  bw_free(q->script);
  bw_free(q);
}

static const bw_queue_store_vtable_t bw__rqs_vtable = {
    "redis",          bw__rqs_enqueue, bw__rqs_claim,
    bw__rqs_ack,      bw__rqs_nack,    bw__rqs_reject,
    bw__rqs_dlq_list, bw__rqs_requeue, bw__rqs_dlq_delete,
    bw__rqs_stats,    bw__rqs_name,    bw__rqs_free};

bw_queue_store_t *bw_redis_queue_store_new(const bw_queue_store_config_t *cfg,
                                           const bw_redis_config_t *redis,
                                           bw_error_t *err) {
  static const char *const suffix[BW__QS_NKEYS] = {
      "}:ready", "}:delayed", "}:leased", "}:pay",
      "}:meta",  "}:dlq",     "}:dlqrec", "}:ctr"};
  bw__rqs_t *q;
  int i;
  if (bw_queue_store_config_validate(cfg, err) != BW_OK) return NULL;
  q = bw_calloc(1, sizeof(*q));
  if (q == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  q->base.vt = &bw__rqs_vtable;
  {
    size_t len = 1, j;
    for (j = 0; j < sizeof(bw__qs_parts) / sizeof(bw__qs_parts[0]); j++)
      len += strlen(bw__qs_parts[j]);
    q->script = bw_malloc(len);
    if (q->script == NULL) {
      bw_free(q);
      bw_error_set(err, BW_E_NOMEM, "", "out of memory");
      return NULL;
    }
    q->script[0] = '\0';
    for (j = 0; j < sizeof(bw__qs_parts) / sizeof(bw__qs_parts[0]); j++)
      strcat(q->script, bw__qs_parts[j]);
  }
  if (bw__rcl_init(&q->cl, redis, cfg->name, "name",
                   (const char *const *)&q->script, 1, err) != BW_OK) {
    bw__rqs_free(&q->base);
    return NULL;
  }
  for (i = 0; i < BW__QS_NKEYS; i++) {
    q->keys[i] = bw__rconn_key(&q->cl.conn, "{qs:", cfg->name, suffix[i]);
    if (q->keys[i] == NULL) {
      bw_error_set(err, BW_E_NOMEM, "", "out of memory");
      bw__rqs_free(&q->base);
      return NULL;
    }
  }
  q->cfg = *cfg;
  q->cfg.name = q->cl.name;
  /* Leases and delays must mean the same on every host: the default clock
   * of a shared store is the wall clock. */
  if (q->cfg.clock == NULL) q->cfg.clock = bw_clock_realtime();
  if (q->cfg.wall_clock == NULL) q->cfg.wall_clock = bw_clock_realtime();
  q->cl.sink = cfg->sink;
  q->cl.wall = q->cfg.wall_clock;
  bw_queue_store_config_levels(&q->cfg, &q->warn_at, &q->rearm_below);
  snprintf(q->a_max, sizeof(q->a_max), "%u", (unsigned)cfg->max_size);
  snprintf(q->a_warn, sizeof(q->a_warn), "%llu",
           (unsigned long long)q->warn_at);
  snprintf(q->a_rearm, sizeof(q->a_rearm), "%llu",
           (unsigned long long)q->rearm_below);
  snprintf(q->a_dlqmax, sizeof(q->a_dlqmax), "%u", (unsigned)cfg->dlq_max);
  snprintf(q->a_maxdel, sizeof(q->a_maxdel), "%u",
           (unsigned)cfg->max_deliveries);
  snprintf(q->full_msg, sizeof(q->full_msg), "queue %.100s reached max_size %u",
           q->cl.name, (unsigned)cfg->max_size);
  bw_error_clear(err);
  return &q->base;
}

/* ---- idempotency store ----------------------------------------------------
 */

/* KEYS: record. ARGV: op, token, gc_ms, expires_ns, now_ns, status,
 * result. The record is a hash: s ("P" or "D"), t token, x expires_ns (on
 * the store's clock: a record past it counts as absent, exactly), c status,
 * r result. PEXPIRE (gc_ms, on the server's clock) only collects garbage. */
static const char bw__is_lua[] =
    "local k, op, now = KEYS[1], ARGV[1], tonumber(ARGV[5])\n"
    "local v = redis.call('HMGET', k, 's', 't', 'x', 'c', 'r')\n"
    "local s = v[1]\n"
    "if s and tonumber(v[3]) <= now then redis.call('DEL', k); s = false end\n"
    "if op == 'begin' then\n"
    "  if not s then\n"
    "    redis.call('HSET', k, 's', 'P', 't', ARGV[2], 'x', ARGV[4])\n"
    "    redis.call('PEXPIRE', k, ARGV[3])\n"
    "    return {0, ARGV[4]}\n"
    "  end\n"
    "  if s == 'P' then return {1, v[3]} end\n"
    "  return {2, v[3], v[4], v[5] or ''}\n"
    "end\n"
    "if s ~= 'P' or v[2] ~= ARGV[2] then return {-1} end\n"
    "if op == 'complete' then\n"
    "  redis.call('HSET', k, 's', 'D', 'x', ARGV[4], 'c', ARGV[6], 'r', "
    "ARGV[7])\n"
    "  redis.call('PEXPIRE', k, ARGV[3])\n"
    "  return {0}\n"
    "end\n"
    "redis.call('DEL', k)\n"
    "return {0}\n";

static const char *const bw__is_scripts[] = {bw__is_lua};

typedef struct bw__ris_s {
  bw_idem_store_t base; /* first: the interface */
  bw__rclient_t cl;
  bw_idem_config_t cfg;
  char *prefix; /* "<prefix>{idem:<name>}:" */
  bw_rand_t rng;
  bw_idem_stats_t st;
} bw__ris_t;

/* Redis keeps a record a minute past its life (on the server's clock)
 * before collecting it; the store's own clock decides expiry exactly. */
static int64_t bw__ris_gc_ms(int64_t life_ms) {
  return life_ms > INT64_MAX / 2 - 60000 ? INT64_MAX / 2 : life_ms + 60000;
}

/* With cl.mu held: as bw__rqs_bad. */
static int bw__ris_bad(bw__ris_t *s, redisReply *r, const char *op,
                       const char *why) {
  if (r != NULL) {
    freeReplyObject(r);
    (void)bw__rconn_unexpected(&s->cl.conn, op, why);
  }
  return bw__rcl_failed(&s->cl);
}

static redisReply *bw__ris_run(bw__ris_t *s, const char *key, int argc,
                               const char **argv, const size_t *lens, int *rc) {
  const char *av[9];
  size_t al[9];
  char *k = bw__rcat(s->prefix, key);
  redisReply *r;
  int i;
  if (k == NULL) {
    *rc = BW_E_NOMEM;
    return NULL;
  }
  av[0] = k;
  al[0] = strlen(k);
  for (i = 0; i < argc; i++) {
    av[i + 1] = argv[i];
    al[i + 1] = lens != NULL ? lens[i] : strlen(argv[i]);
  }
  r = bw__rconn_eval(&s->cl.conn, 0, 1, argc + 1, av, al);
  bw_free(k);
  if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
    *rc = bw__ris_bad(s, r, argv[0], "not an array");
    return NULL;
  }
  *rc = BW_OK;
  return r;
}

static int bw__ris_begin(bw_idem_store_t *base, const char *key,
                         bw_idem_record_t *out) {
  bw__ris_t *s = (bw__ris_t *)base;
  char tok[24], gc[24], exp[24], now_s[24];
  const char *av[5];
  int64_t now;
  redisReply *r;
  uint64_t token;
  int rc;
  pthread_mutex_lock(&s->cl.mu);
  if ((rc = bw__rcl_ready(&s->cl)) != BW_OK) goto out;
  token = bw_rand_next(&s->rng) >> 1;
  if (token == 0) token = 1;
  snprintf(tok, sizeof(tok), "%llu", (unsigned long long)token);
  now = bw_clock_now(s->cfg.clock);
  snprintf(gc, sizeof(gc), "%lld", (long long)bw__ris_gc_ms(s->cfg.lease_ms));
  snprintf(exp, sizeof(exp), "%lld",
           (long long)(now + s->cfg.lease_ms * BW_NS_PER_MS));
  snprintf(now_s, sizeof(now_s), "%lld", (long long)now);
  av[0] = "begin";
  av[1] = tok;
  av[2] = gc;
  av[3] = exp;
  av[4] = now_s;
  r = bw__ris_run(s, key, 5, av, NULL, &rc);
  if (r == NULL) goto out;
  {
    int code, status;
    int64_t expires;
    const redisReply *v;
    const char *why;
    if (bw__rr_is_begin(r, &code, &expires, &status, &v, &why) != BW_OK) {
      rc = bw__ris_bad(s, r, "begin", why);
      goto out;
    }
    switch (code) {
    case 0:
      out->state = BW_IDEM_NEW;
      out->token = token;
      s->st.began++;
      break;
    case 1:
      out->state = BW_IDEM_IN_PROGRESS;
      s->st.in_progress++;
      break;
    default:
      out->result = bw_memdup(v->str, v->len);
      if (out->result == NULL) {
        rc = BW_E_NOMEM;
        break;
      }
      out->state = BW_IDEM_DONE;
      out->status = status;
      out->len = v->len;
      s->st.hits++;
    }
    if (rc == BW_OK) out->expires_ns = expires;
  }
  freeReplyObject(r);
out:
  pthread_mutex_unlock(&s->cl.mu);
  return rc;
}

/* With cl.mu held: the outcome of complete / abandon (reply freed): BW_OK
 * counting *done, BW_E_STALE when the token no longer holds the key, or
 * BW_E_IO for an unexpected reply. */
static int bw__ris_settled(bw__ris_t *s, redisReply *r, const char *op,
                           uint64_t *done) {
  int rc = BW_OK;
  int64_t v;
  const char *why;
  if (bw__rr_one_of(r, 0, -1, &v, &why) != BW_OK)
    return bw__ris_bad(s, r, op, why);
  if (v == 0) {
    (*done)++;
  } else {
    s->st.stale++;
    rc = BW_E_STALE;
  }
  freeReplyObject(r);
  return rc;
}

static int bw__ris_complete(bw_idem_store_t *base, const char *key,
                            uint64_t token, int status, const void *result,
                            size_t len) {
  bw__ris_t *s = (bw__ris_t *)base;
  char tok[24], gc[24], exp[24], st[16], now_s[24];
  const char *av[7];
  size_t al[7];
  redisReply *r;
  int64_t now;
  int rc, i;
  snprintf(tok, sizeof(tok), "%llu", (unsigned long long)token);
  snprintf(gc, sizeof(gc), "%lld", (long long)bw__ris_gc_ms(s->cfg.ttl_ms));
  snprintf(st, sizeof(st), "%d", status);
  pthread_mutex_lock(&s->cl.mu);
  if ((rc = bw__rcl_ready(&s->cl)) != BW_OK) goto out;
  now = bw_clock_now(s->cfg.clock);
  snprintf(exp, sizeof(exp), "%lld",
           (long long)(now + s->cfg.ttl_ms * BW_NS_PER_MS));
  snprintf(now_s, sizeof(now_s), "%lld", (long long)now);
  av[0] = "complete";
  av[1] = tok;
  av[2] = gc;
  av[3] = exp;
  av[4] = now_s;
  av[5] = st;
  av[6] = result != NULL ? result : "";
  for (i = 0; i < 6; i++)
    al[i] = strlen(av[i]);
  al[6] = len;
  r = bw__ris_run(s, key, 7, av, al, &rc);
  if (r == NULL) goto out;
  rc = bw__ris_settled(s, r, "complete", &s->st.completed);
out:
  pthread_mutex_unlock(&s->cl.mu);
  return rc;
}

static int bw__ris_abandon(bw_idem_store_t *base, const char *key,
                           uint64_t token) {
  bw__ris_t *s = (bw__ris_t *)base;
  char tok[24], now_s[24];
  const char *av[5];
  redisReply *r;
  int rc;
  snprintf(tok, sizeof(tok), "%llu", (unsigned long long)token);
  av[0] = "abandon";
  av[1] = tok;
  av[2] = "0";
  av[3] = "0";
  av[4] = now_s;
  pthread_mutex_lock(&s->cl.mu);
  if ((rc = bw__rcl_ready(&s->cl)) != BW_OK) goto out;
  snprintf(now_s, sizeof(now_s), "%lld", (long long)bw_clock_now(s->cfg.clock));
  r = bw__ris_run(s, key, 5, av, NULL, &rc);
  if (r == NULL) goto out;
  rc = bw__ris_settled(s, r, "abandon", &s->st.abandoned);
out:
  pthread_mutex_unlock(&s->cl.mu);
  return rc;
}

static int bw__ris_stats(bw_idem_store_t *base, bw_idem_stats_t *out) {
  bw__ris_t *s = (bw__ris_t *)base;
  pthread_mutex_lock(&s->cl.mu);
  *out = s->st;
  out->keys = 0; /* not tracked: Redis expires records on its own */
  pthread_mutex_unlock(&s->cl.mu);
  return BW_OK;
}

static const char *bw__ris_name(const bw_idem_store_t *base) {
  return ((const bw__ris_t *)base)->cl.name;
}

static void bw__ris_free(bw_idem_store_t *base) {
  bw__ris_t *s = (bw__ris_t *)base;
  bw__rcl_destroy(&s->cl);
  bw_free(s->prefix);
  bw_free(s);
}

static const bw_idem_store_vtable_t bw__ris_vtable = {
    "redis",       bw__ris_begin, bw__ris_complete, bw__ris_abandon,
    bw__ris_stats, bw__ris_name,  bw__ris_free};

bw_idem_store_t *bw_redis_idem_store_new(const bw_idem_config_t *cfg,
                                         const bw_redis_config_t *redis,
                                         bw_error_t *err) {
  bw__ris_t *s;
  if (bw_idem_config_validate(cfg, err) != BW_OK) return NULL;
  s = bw_calloc(1, sizeof(*s));
  if (s == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  s->base.vt = &bw__ris_vtable;
  if (bw__rcl_init(&s->cl, redis, cfg->name, "name", bw__is_scripts, 1, err) !=
      BW_OK) {
    bw__ris_free(&s->base);
    return NULL;
  }
  s->prefix = bw__rconn_key(&s->cl.conn, "{idem:", cfg->name, "}:");
  if (s->prefix == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    bw__ris_free(&s->base);
    return NULL;
  }
  s->cfg = *cfg;
  s->cfg.name = s->cl.name;
  if (s->cfg.clock == NULL) s->cfg.clock = bw_clock_realtime();
  bw_rand_seed(&s->rng, bw_rand_os_seed());
  bw_error_clear(err);
  return &s->base;
}

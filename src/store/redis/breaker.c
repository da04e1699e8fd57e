/* breakwater_redis — a circuit breaker whose state is shared through Redis.
 *
 * Hot path: acquire/release read one cached word (state | fallback bit |
 * generation) and bump per-thread counter stripes; no I/O, no lock, no
 * allocation. Sync (the owned thread or bw_redis_breaker_sync) turns the
 * counters into deltas since the last push and runs ONE Lua script that
 * records them, applies the trip rule and returns the shared state.
 *
 * Exactly-once pushes: a batch of deltas carries (process id, sequence).
 * The script records the last sequence applied per process and ignores a
 * batch it has already applied; a batch whose reply was lost (timeout,
 * Redis killed) is kept and re-sent with the same sequence, so counts are
 * neither lost nor doubled. */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "redis_internal.h"

/* KEYS: state hash, applied-sequence hash, bucket hash.
 * ARGV: see bw__rb_push. Returns {state, gen, remaining_ms, consec,
 * window_calls, window_failures, total_calls, fresh, reason}. */
static const char bw__rb_script[] =
    "local now = tonumber(ARGV[1])\n"
    "if now < 0 then\n"
    "  local t = redis.call('TIME')\n"
    "  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "end\n"
    "local h, ap, bk = KEYS[1], KEYS[2], KEYS[3]\n"
    "local v = redis.call('HMGET', h, 'state', 'gen', 'open_until', "
    "'consec', 'hs', 'ho_since', 'tc')\n"
    "local state = tonumber(v[1]) or 0\n"
    "local gen = tonumber(v[2]) or 1\n"
    "local open_until = tonumber(v[3]) or 0\n"
    "local consec = tonumber(v[4]) or 0\n"
    "local hs = tonumber(v[5]) or 0\n"
    "local ho_since = tonumber(v[6]) or 0\n"
    "local tc = tonumber(v[7]) or 0\n"
    "local rule, thr = tonumber(ARGV[13]), tonumber(ARGV[14])\n"
    "local ratio, minc = tonumber(ARGV[15]), tonumber(ARGV[16])\n"
    "local bms, nb = tonumber(ARGV[17]), tonumber(ARGV[18])\n"
    "local brk, sthr = tonumber(ARGV[19]), tonumber(ARGV[20])\n"
    "local reason, changed = '', false\n"
    "local function open(why)\n"
    "  state = 1; gen = gen + 1; open_until = now + brk; hs = 0; consec = 0\n"
    "  reason = why; changed = true; redis.call('DEL', bk)\n"
    "end\n"
    "local fresh = 0\n"
    "local seq = tonumber(ARGV[3])\n"
    "local last = tonumber(redis.call('HGET', ap, ARGV[2]) or '0')\n"
    "if seq > last then\n"
    "  fresh = 1\n"
    "  redis.call('HSET', ap, ARGV[2], ARGV[3])\n"
    "  tc = tc + tonumber(ARGV[8])\n"
    "  redis.call('HINCRBY', h, 'tc', ARGV[8])\n"
    "  redis.call('HINCRBY', h, 'ts', ARGV[9])\n"
    "  redis.call('HINCRBY', h, 'tf', ARGV[10])\n"
    "  redis.call('HINCRBY', h, 'ti', ARGV[11])\n"
    "  redis.call('HINCRBY', h, 'tr', ARGV[12])\n"
    "end\n"
    "if state == 1 and now >= open_until then\n"
    "  state = 2; hs = 0; ho_since = now; changed = true\n"
    "  reason = 'break of ' .. brk .. ' ms over'\n"
    "end\n"
    "if state == 2 and now - ho_since >= tonumber(ARGV[21]) then\n"
    "  open('no probe result within half_open_timeout_ms')\n"
    "end\n"
    "local ds, df = tonumber(ARGV[5]), tonumber(ARGV[6])\n"
    "local tail = tonumber(ARGV[7])\n"
    "local apply = fresh == 1 and tonumber(ARGV[4]) == gen and "
    "(ds > 0 or df > 0)\n"
    "if apply and state == 0 and rule == 2 then\n"
    "  local b = math.floor(now / bms)\n"
    "  redis.call('HINCRBY', bk, 'c' .. b, ds + df)\n"
    "  if df > 0 then redis.call('HINCRBY', bk, 'f' .. b, df) end\n"
    "end\n"
    "local wc, wf = 0, 0\n"
    "if rule == 2 and state == 0 then\n"
    "  local b = math.floor(now / bms)\n"
    "  local all = redis.call('HGETALL', bk)\n"
    "  for i = 1, #all, 2 do\n"
    "    local k = all[i]\n"
    "    local idx = tonumber(string.sub(k, 2))\n"
    "    if idx <= b - nb then redis.call('HDEL', bk, k)\n"
    "    elseif string.sub(k, 1, 1) == 'c' then wc = wc + tonumber(all[i + "
    "1])\n"
    "    else wf = wf + tonumber(all[i + 1]) end\n"
    "  end\n"
    "end\n"
    "if apply and state == 0 then\n"
    "  if rule == 0 then\n"
    "    if ds > 0 then consec = math.min(tail, df) else consec = consec + df "
    "end\n"
    "    if consec >= thr then\n"
    "      open(consec .. ' consecutive failures across processes "
    "(threshold ' .. thr .. ')')\n"
    "    end\n"
    "  elseif df > 0 and wc >= minc and wf / wc >= ratio then\n"
    "    open(string.format('failure ratio %.2f >= %.2f over %d ms (%d "
    "calls)', wf / wc, ratio, bms * nb, wc))\n"
    "    wc, wf = 0, 0\n"
    "  end\n"
    "elseif apply and state == 2 then\n"
    "  if df > 0 then open('probe failed in half-open')\n"
    "  else\n"
    "    hs = hs + ds\n"
    "    if hs >= sthr then\n"
    "      state = 0; gen = gen + 1; consec = 0; changed = true\n"
    "      reason = hs .. ' probe successes (threshold ' .. sthr .. ')'\n"
    "      hs = 0; redis.call('DEL', bk)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "redis.call('HSET', h, 'state', state, 'gen', gen, 'open_until', "
    "open_until, 'consec', consec, 'hs', hs, 'ho_since', ho_since)\n"
    "local ttl = tonumber(ARGV[22])\n"
    "redis.call('PEXPIRE', h, ttl)\n"
    "redis.call('PEXPIRE', ap, ttl)\n"
    "if redis.call('EXISTS', bk) == 1 then redis.call('PEXPIRE', bk, ttl) end\n"
    "if changed then\n"
    "  redis.call('PUBLISH', ARGV[23], cjson.encode({name = ARGV[24], "
    "state = state, generation = gen, reason = reason}))\n"
    "end\n"
    "local rem = 0\n"
    "if state == 1 then rem = open_until - now end\n"
    "return {state, gen, rem, consec, wc, wf, tc, fresh, reason}\n";

static const char *const bw__rb_scripts[] = {bw__rb_script};

/* The cached word: bits 0-2 state, bit 3 fallback, the rest generation. */
#define BW__W_STATE(w) ((bw_state_t)((w)&7u))
#define BW__W_FB UINT64_C(8)
#define BW__W_GEN(w) ((w) >> 4)
#define BW__W_MAKE(st, fb, gen) \
  ((uint64_t)(st) | ((fb) ? BW__W_FB : 0) | ((uint64_t)(gen) << 4))

typedef struct bw__rb_stripe_s {
  _Atomic uint64_t admitted;
  _Atomic uint64_t rejected;
  _Atomic uint64_t successes;
  _Atomic uint64_t failures;
  _Atomic uint64_t ignored;
  _Atomic uint64_t stale;
  _Atomic uint64_t dec_s; /* outcomes of current-generation permits */
  _Atomic uint64_t dec_f;
  _Atomic uint64_t tail; /* failures since this thread's last success */
} BW__APART bw__rb_stripe_t;

typedef struct bw__rb_sums_s {
  uint64_t admitted, rejected, calls, successes, failures, ignored, stale;
  uint64_t dec_s, dec_f, tail;
} bw__rb_sums_t;

struct bw_redis_breaker_s {
  bw_limit_t iface;       /* first: bw_redis_breaker_as_limit (deprecated) */
  bw_breaker_if_t biface; /* bw_redis_breaker_iface */
  /* hot, read-mostly */
  _Atomic uint64_t word BW__APART;
  _Atomic int64_t open_until_ns; /* local clock */
  _Atomic uint32_t probes;       /* probes in flight, this generation */
  _Atomic uint64_t probe_failed_gen;
  _Atomic uint32_t shared_consec; /* as of the last sync */
  _Atomic uint32_t fail_since_sync;
  _Atomic bool wake;
  bw__rb_stripe_t *stripes;
  bw_breaker_t *local; /* the fallback breaker */
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  char *name;
  bw_trip_rule_t rule;
  uint32_t failure_threshold;
  uint32_t half_open_max;
  int64_t sync_interval_ms;
  bool use_redis_time;
  /* sync state (sync_mu) */
  pthread_mutex_t sync_mu;
  bw__rconn_t conn;
  char *k_state, *k_applied, *k_buckets, *channel;
  char proc_id[40];
  char a_rule[8], a_thr[16], a_ratio[32], a_minc[16], a_bms[24], a_nb[16],
      a_brk[24], a_sthr[16], a_hot[24], a_ttl[24];
  uint64_t seq;
  bool have_batch; /* a batch whose push is not confirmed */
  uint64_t b_seq, b_gen, b_ds, b_df, b_tail, b_tc, b_ts, b_tf, b_ti, b_tr;
  bw__rb_sums_t taken; /* counters already put into a batch */
  _Atomic uint64_t pushed_calls;
  _Atomic uint64_t duplicate_batches;
  _Atomic uint64_t syncs, sync_failures, unavailable_events, restored_events,
      transitions_seen, transition_sync, shared_total_calls, shared_wc,
      shared_wf;
  bool unavailable; /* an unavailable event is outstanding */
  /* the batch as script arguments (formatted by bw__rb_argv) */
  char x_now[24], x_seq[24], x_gen[24], x_ds[24], x_df[24], x_tail[24],
      x_tc[24], x_ts[24], x_tf[24], x_ti[24], x_tr[24];
  /* event-loop mode (async.c): the loop's state and how to free it */
  void *loop;
  void (*loop_free)(void *loop);
  /* the thread */
  bool has_thread;
  bool stop;
  pthread_t thread;
  pthread_mutex_t thr_mu;
  pthread_cond_t thr_cv;
};

/* ---- configuration --------------------------------------------------------
 */

void bw_redis_breaker_config_init(bw_redis_breaker_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  bw_breaker_config_init(&cfg->breaker);
  bw_redis_config_init(&cfg->redis);
  cfg->sync_interval_ms = 100;
  cfg->sync_thread = true;
  cfg->use_redis_time = true;
}

static int bw__rb_validate(const bw_redis_breaker_config_t *cfg,
                           bw_error_t *err) {
  const bw_breaker_config_t *bc;
  if (cfg == NULL) return bw_error_set(err, BW_E_INVAL, "", "config is NULL");
  bc = &cfg->breaker;
  if (bw_breaker_config_validate(bc, err) != BW_OK) return BW_E_INVAL;
  if (bc->trip_rule == BW_TRIP_COUNT_WINDOW)
    return bw_error_set(
        err, BW_E_INVAL, "trip_rule",
        "trip_rule count_window is not supported by the Redis breaker (use "
        "consecutive or time_window)");
  if (bc->slow_call_ms != 0)
    return bw_error_set(err, BW_E_INVAL, "slow_call_ms",
                        "slow_call_ms must be 0 for the Redis breaker (slow "
                        "calls are not shared; got %lld)",
                        (long long)bc->slow_call_ms);
  if (bc->break_multiplier != 1.0)
    return bw_error_set(err, BW_E_INVAL, "break_multiplier",
                        "break_multiplier must be 1 for the Redis breaker "
                        "(break growth is not shared; got %g)",
                        bc->break_multiplier);
  if (bc->max_break_ms != 0 && bc->max_break_ms != bc->break_ms)
    return bw_error_set(err, BW_E_INVAL, "max_break_ms",
                        "max_break_ms must be 0 or break_ms for the Redis "
                        "breaker (got %lld)",
                        (long long)bc->max_break_ms);
  if (bc->metrics_only)
    return bw_error_set(err, BW_E_INVAL, "metrics_only",
                        "metrics_only is not supported by the Redis breaker");
  if (cfg->sync_interval_ms < 1)
    return bw_error_set(err, BW_E_INVAL, "sync_interval_ms",
                        "sync_interval_ms must be >= 1 (got %lld)",
                        (long long)cfg->sync_interval_ms);
  return BW_OK;
}

/* ---- stripes --------------------------------------------------------------
 */

static void bw__rb_sum(const bw_redis_breaker_t *b, bw__rb_sums_t *s) {
  unsigned i, n = bw_stripes_used();
  memset(s, 0, sizeof(*s));
  if (n > BW_STRIPES) n = BW_STRIPES;
  for (i = 0; i < n; i++) {
    const bw__rb_stripe_t *t = &b->stripes[i];
#define BW__LD(f) atomic_load_explicit(&t->f, memory_order_relaxed)
    s->admitted += BW__LD(admitted);
    s->rejected += BW__LD(rejected);
    s->successes += BW__LD(successes);
    s->failures += BW__LD(failures);
    s->ignored += BW__LD(ignored);
    s->stale += BW__LD(stale);
    s->dec_s += BW__LD(dec_s);
    s->dec_f += BW__LD(dec_f);
    s->tail += BW__LD(tail);
#undef BW__LD
  }
  s->calls = s->successes + s->failures + s->ignored;
}

static inline int64_t bw__rb_now(const bw_redis_breaker_t *b) {
  return bw_clock_now(b->clock);
}

static void bw__rb_wake(bw_redis_breaker_t *b) {
  if (!b->has_thread) return;
  if (!atomic_exchange_explicit(&b->wake, true, memory_order_relaxed))
    pthread_cond_signal(&b->thr_cv);
}

/* ---- hot path -------------------------------------------------------------
 */

static void bw__rb_fill(bw_permit_t *p, uint64_t gen, uint32_t kind) {
  bw_permit_init(p, 0, kind);
  p->generation = gen;
}

static int bw__rb_reject(bw_redis_breaker_t *b) {
  unsigned si = bw_stripe();
  bw__rb_bump(&b->stripes[si].rejected, si);
  return BW_E_OPEN;
}

static int bw__rb_acquire_slow(bw_redis_breaker_t *b, bw_permit_t *p,
                               uint64_t w) {
  bw_state_t st = BW__W_STATE(w);
  uint64_t gen = BW__W_GEN(w);
  unsigned si;
  uint32_t n;
  if (st == BW_OPEN &&
      bw__rb_now(b) <
          atomic_load_explicit(&b->open_until_ns, memory_order_relaxed))
    return bw__rb_reject(b);
  if (w & BW__W_FB) {
    /* Redis unavailable: the local breaker decides from local counts. */
    int rc = bw_breaker_acquire(b->local, p);
    if (rc != BW_OK) return bw__rb_reject(b);
    p->flags |= BW_PERMIT_FLAG_FALLBACK;
    si = bw_stripe();
    bw__rb_bump(&b->stripes[si].admitted, si);
    return BW_OK;
  }
  if (st != BW_OPEN && st != BW_HALF_OPEN) return bw__rb_reject(b);
  /* The break is over (here or in Redis): admit up to half_open_max_calls
   * probes in this process until a sync decides. */
  if (atomic_load_explicit(&b->probe_failed_gen, memory_order_relaxed) == gen)
    return bw__rb_reject(b);
  n = atomic_load_explicit(&b->probes, memory_order_relaxed);
  do {
    if (n >= b->half_open_max) return bw__rb_reject(b);
  } while (!atomic_compare_exchange_weak_explicit(
      &b->probes, &n, n + 1, memory_order_acq_rel, memory_order_relaxed));
  si = bw_stripe();
  bw__rb_bump(&b->stripes[si].admitted, si);
  bw__rb_fill(p, gen, BW_PERMIT_PROBE);
  return BW_OK;
}

int bw_redis_breaker_acquire(bw_redis_breaker_t *b, bw_permit_t *p) {
  uint64_t w;
  if (BW__UNLIKELY(b == NULL || p == NULL)) return BW_E_INVAL;
  w = atomic_load_explicit(&b->word, memory_order_acquire);
  if (BW__LIKELY((w & 15u) == BW_CLOSED)) {
    unsigned si = bw_stripe();
    bw__rb_bump(&b->stripes[si].admitted, si);
    bw__rb_fill(p, BW__W_GEN(w), BW_PERMIT_NORMAL);
    return BW_OK;
  }
  return bw__rb_acquire_slow(b, p, w);
}

int bw_redis_breaker_release(bw_redis_breaker_t *b, const bw_permit_t *p,
                             bw_outcome_t outcome) {
  unsigned si;
  bw__rb_stripe_t *s;
  uint64_t w;
  if (BW__UNLIKELY(b == NULL || p == NULL ||
                   (unsigned)outcome > (unsigned)BW_IGNORED))
    return BW_E_INVAL;
  si = bw_stripe();
  s = &b->stripes[si];
  bw__rb_bump(outcome == BW_SUCCESS   ? &s->successes
              : outcome == BW_FAILURE ? &s->failures
                                      : &s->ignored,
              si);
  if (BW__UNLIKELY(p->flags & BW_PERMIT_FLAG_FALLBACK)) {
    /* Decided locally while Redis was away: the totals above are pushed on
     * return; the outcome itself belongs to the local breaker. */
    int rc = bw_breaker_release(b->local, p, outcome);
    if (rc == BW_E_STALE) bw__rb_bump(&s->stale, si);
    return rc;
  }
  w = atomic_load_explicit(&b->word, memory_order_acquire);
  if (BW__UNLIKELY(BW__W_GEN(w) != p->generation)) {
    bw__rb_bump(&s->stale, si);
    return BW_E_STALE;
  }
  if (outcome == BW_SUCCESS) {
    bw__rb_bump(&s->dec_s, si);
    /* Only this stripe's owner writes it (a shared stripe may lose a
     * concurrent increment here: the count is approximate by design). */
    if (atomic_load_explicit(&s->tail, memory_order_relaxed) != 0)
      atomic_store_explicit(&s->tail, 0, memory_order_relaxed);
  } else if (outcome == BW_FAILURE) {
    bw__rb_bump(&s->dec_f, si);
    bw__rb_bump(&s->tail, si);
    /* Sync at once when this failure may trip the shared rule (only the
     * consecutive rule counts failures since the last sync). */
    if (b->rule == BW_TRIP_CONSECUTIVE) {
      uint32_t pending = atomic_fetch_add_explicit(&b->fail_since_sync, 1,
                                                   memory_order_relaxed) +
                         1;
      if (atomic_load_explicit(&b->shared_consec, memory_order_relaxed) +
              pending >=
          b->failure_threshold)
        bw__rb_wake(b);
    }
  }
  if (p->kind == BW_PERMIT_PROBE) {
    if (outcome == BW_FAILURE)
      atomic_store_explicit(&b->probe_failed_gen, p->generation,
                            memory_order_relaxed);
    atomic_fetch_sub_explicit(&b->probes, 1, memory_order_acq_rel);
    if (outcome != BW_IGNORED) bw__rb_wake(b);
  }
  return BW_OK;
}

/* ---- sync -----------------------------------------------------------------
 */

static void bw__rb_event(bw_redis_breaker_t *b, bw_event_type_t type,
                         const char *reason, uint64_t gen) {
  bw_field_t f[2];
  f[0] = bw_field_uint("generation", gen);
  f[1] = bw_field_str("source", "redis");
  bw_event_emit(b->sink, b->wall, bw__rb_now(b), type, b->name, reason, f, 2,
                NULL);
}

/* Redis became unreachable: fall back (once per outage). */
void bw__rb_fail(bw_redis_breaker_t *b, int64_t now) {
  uint64_t w, nw;
  atomic_fetch_add_explicit(&b->sync_failures, 1, memory_order_relaxed);
  bw__rconn_failed(&b->conn, now);
  if (b->unavailable) return;
  b->unavailable = true;
  w = atomic_load_explicit(&b->word, memory_order_relaxed);
  do {
    nw = w | BW__W_FB;
  } while (!atomic_compare_exchange_weak_explicit(
      &b->word, &w, nw, memory_order_acq_rel, memory_order_relaxed));
  atomic_fetch_add_explicit(&b->unavailable_events, 1, memory_order_relaxed);
  {
    /* Redis went away during a shared break: the local breaker takes over
     * the rest of it, so that when it ends this process probes (half-open,
     * the local probe rules) instead of closing at once — N processes would
     * otherwise each send every call to a dependency that may still be
     * down. */
    bw_state_t st = BW__W_STATE(w);
    if (st == BW_OPEN || st == BW_HALF_OPEN) {
      int64_t left =
          st == BW_OPEN
              ? atomic_load_explicit(&b->open_until_ns, memory_order_relaxed) -
                    now
              : 0;
      bw_breaker_open_for(b->local, left,
                          "redis unavailable during the shared break: the "
                          "rest of it here, then local probes");
    }
  }
  {
    char reason[256];
    snprintf(reason, sizeof(reason),
             "%.200s; deciding from local counts until it returns",
             b->conn.last_error[0] ? b->conn.last_error : "redis unavailable");
    bw_event_emit(b->sink, b->wall, now, BW_EV_REDIS_UNAVAILABLE, b->name,
                  reason, NULL, 0, NULL);
  }
}

/* Builds the next batch from the counters (when no batch is outstanding). */
static void bw__rb_take(bw_redis_breaker_t *b) {
  bw__rb_sums_t s;
  uint64_t w = atomic_load_explicit(&b->word, memory_order_acquire);
  bw__rb_sum(b, &s);
  b->b_seq = ++b->seq;
  b->b_gen = BW__W_GEN(w);
  b->b_ds = s.dec_s - b->taken.dec_s;
  b->b_df = s.dec_f - b->taken.dec_f;
  b->b_tail = s.tail;
  b->b_ts = s.successes - b->taken.successes;
  b->b_tf = s.failures - b->taken.failures;
  b->b_ti = s.ignored - b->taken.ignored;
  b->b_tr = s.rejected - b->taken.rejected;
  b->b_tc = b->b_ts + b->b_tf + b->b_ti;
  b->taken.dec_s += b->b_ds;
  b->taken.dec_f += b->b_df;
  b->taken.calls += b->b_tc;
  b->taken.successes += b->b_ts;
  b->taken.failures += b->b_tf;
  b->taken.ignored += b->b_ti;
  b->taken.rejected += b->b_tr;
  atomic_store_explicit(&b->fail_since_sync, 0, memory_order_relaxed);
  b->have_batch = true;
}

/* Formats the outstanding batch as the script's KEYS + ARGV into argv
 * (BW__RB_NARGS entries; the strings live in b until the next call). */
static void bw__rb_argv(bw_redis_breaker_t *b, int64_t now, const char **argv) {
  snprintf(b->x_now, sizeof(b->x_now), "%lld",
           b->use_redis_time ? -1LL : (long long)(now / BW_NS_PER_MS));
  snprintf(b->x_seq, sizeof(b->x_seq), "%llu", (unsigned long long)b->b_seq);
  snprintf(b->x_gen, sizeof(b->x_gen), "%llu", (unsigned long long)b->b_gen);
  snprintf(b->x_ds, sizeof(b->x_ds), "%llu", (unsigned long long)b->b_ds);
  snprintf(b->x_df, sizeof(b->x_df), "%llu", (unsigned long long)b->b_df);
  snprintf(b->x_tail, sizeof(b->x_tail), "%llu", (unsigned long long)b->b_tail);
  snprintf(b->x_tc, sizeof(b->x_tc), "%llu", (unsigned long long)b->b_tc);
  snprintf(b->x_ts, sizeof(b->x_ts), "%llu", (unsigned long long)b->b_ts);
  snprintf(b->x_tf, sizeof(b->x_tf), "%llu", (unsigned long long)b->b_tf);
  snprintf(b->x_ti, sizeof(b->x_ti), "%llu", (unsigned long long)b->b_ti);
  snprintf(b->x_tr, sizeof(b->x_tr), "%llu", (unsigned long long)b->b_tr);
  argv[0] = b->k_state;
  argv[1] = b->k_applied;
  argv[2] = b->k_buckets;
  argv[3] = b->x_now;
  argv[4] = b->proc_id;
  argv[5] = b->x_seq;
  argv[6] = b->x_gen;
  argv[7] = b->x_ds;
  argv[8] = b->x_df;
  argv[9] = b->x_tail;
  argv[10] = b->x_tc;
  argv[11] = b->x_ts;
  argv[12] = b->x_tf;
  argv[13] = b->x_ti;
  argv[14] = b->x_tr;
  argv[15] = b->a_rule;
  argv[16] = b->a_thr;
  argv[17] = b->a_ratio;
  argv[18] = b->a_minc;
  argv[19] = b->a_bms;
  argv[20] = b->a_nb;
  argv[21] = b->a_brk;
  argv[22] = b->a_sthr;
  argv[23] = b->a_hot;
  argv[24] = b->a_ttl;
  argv[25] = b->channel;
  argv[26] = b->name;
}

/* Applies the script's reply to the outstanding batch: the batch is
 * confirmed and the shared state adopted. BW_OK, or BW_E_IO (unexpected
 * reply: bw__rr_sync refused a field; conn.last_error says which; nothing
 * adopted). Does not free r. */
int bw__rb_adopt(bw_redis_breaker_t *b, const redisReply *r, int64_t now) {
  uint64_t w, nw, old_gen;
  bw_state_t old_st, st;
  bw__rr_sync_t v;
  const char *why = NULL;
  /* Every field checked before anything is adopted: a reply that fails
   * leaves the batch outstanding (re-sent under its sequence: the script
   * skips it if it was applied) and the shared state as it was. */
  if (bw__rr_sync(r, &v, &why) != BW_OK)
    return bw__rconn_unexpected(&b->conn, "the sync script", why);
  b->have_batch = false;
  atomic_fetch_add_explicit(&b->pushed_calls, b->b_tc, memory_order_relaxed);
  atomic_fetch_add_explicit(&b->syncs, 1, memory_order_relaxed);
  st = (bw_state_t)v.state;
  atomic_store_explicit(&b->shared_consec, v.consec, memory_order_relaxed);
  atomic_store_explicit(&b->shared_wc, v.wc, memory_order_relaxed);
  atomic_store_explicit(&b->shared_wf, v.wf, memory_order_relaxed);
  atomic_store_explicit(&b->shared_total_calls, v.tc, memory_order_relaxed);
  if (!v.fresh)
    atomic_fetch_add_explicit(&b->duplicate_batches, 1, memory_order_relaxed);
  /* Adopt: open_until before the word, so a reader of the word sees it.
   * rem_ms <= BW__RR_BREAK_MAX_MS, so the product fits; the sum
   * saturates. */
  if (st == BW_OPEN) {
    int64_t d = v.rem_ms * BW_NS_PER_MS;
    atomic_store_explicit(&b->open_until_ns,
                          now > INT64_MAX - d ? INT64_MAX : now + d,
                          memory_order_relaxed);
  }
  w = atomic_load_explicit(&b->word, memory_order_relaxed);
  old_st = BW__W_STATE(w);
  old_gen = BW__W_GEN(w);
  if (v.gen != old_gen)
    atomic_store_explicit(&b->probes, 0, memory_order_relaxed);
  do {
    nw = BW__W_MAKE(st, (w & BW__W_FB) != 0, v.gen);
  } while (!atomic_compare_exchange_weak_explicit(
      &b->word, &w, nw, memory_order_acq_rel, memory_order_relaxed));
  if (st != old_st || v.gen != old_gen) {
    char reason[200];
    bw_event_type_t type = st == BW_OPEN        ? BW_EV_CIRCUIT_OPENED
                           : st == BW_HALF_OPEN ? BW_EV_CIRCUIT_HALF_OPENED
                                                : BW_EV_CIRCUIT_CLOSED;
    if (v.reason_len > 0)
      snprintf(reason, sizeof(reason), "%.*s",
               (int)(v.reason_len < sizeof(reason) ? v.reason_len
                                                   : sizeof(reason) - 1),
               v.reason);
    else
      snprintf(reason, sizeof(reason), "shared state adopted from redis");
    atomic_store_explicit(&b->transition_sync,
                          atomic_load_explicit(&b->syncs, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_fetch_add_explicit(&b->transitions_seen, 1, memory_order_relaxed);
    bw__rb_event(b, type, reason, v.gen);
  }
  return BW_OK;
}

/* Sends the outstanding batch. BW_OK (reply adopted) or BW_E_IO. */
static int bw__rb_push(bw_redis_breaker_t *b, int64_t now) {
  const char *argv[BW__RB_NARGS];
  redisReply *r;
  int rc;
  bw__rb_argv(b, now, argv);
  r = bw__rconn_eval(&b->conn, 0, 3, BW__RB_NARGS, argv, NULL);
  if (r == NULL) return BW_E_IO;
  rc = bw__rb_adopt(b, r, now);
  freeReplyObject(r);
  return rc;
}

static int bw__rb_sync_locked(bw_redis_breaker_t *b) {
  int64_t now = bw__rb_now(b);
  int rounds;
  bool was_unavailable = b->unavailable;
  uint64_t pushed_before =
      atomic_load_explicit(&b->pushed_calls, memory_order_relaxed);
  if (b->conn.c == NULL) {
    /* In the reconnect backoff nothing is tried. */
    if (now < b->conn.next_attempt_ns) return BW_E_IO;
    if (bw__rconn_connect(&b->conn, NULL) != BW_OK) {
      bw__rb_fail(b, now);
      return BW_E_IO;
    }
  }
  /* An outstanding batch (its reply was lost) goes first, as it was; then
   * the counts since. */
  for (rounds = 0; rounds < 2; rounds++) {
    bool resent = b->have_batch;
    if (!b->have_batch) bw__rb_take(b);
    if (bw__rb_push(b, now) != BW_OK) {
      bw__rb_fail(b, now);
      return BW_E_IO;
    }
    if (!resent) break;
  }
  if (was_unavailable) bw__rb_restore(b, pushed_before, now);
  return BW_OK;
}

/* The outage is over: back to the shared state, one redis_restored. */
void bw__rb_restore(bw_redis_breaker_t *b, uint64_t pushed_before,
                    int64_t now) {
  {
    uint64_t w, nw;
    char reason[160];
    b->unavailable = false;
    w = atomic_load_explicit(&b->word, memory_order_relaxed);
    do {
      nw = w & ~BW__W_FB;
    } while (!atomic_compare_exchange_weak_explicit(
        &b->word, &w, nw, memory_order_acq_rel, memory_order_relaxed));
    atomic_fetch_add_explicit(&b->restored_events, 1, memory_order_relaxed);
    snprintf(reason, sizeof(reason),
             "redis %.40s:%d is back; pushed %llu calls counted meanwhile",
             b->conn.host, b->conn.port,
             (unsigned long long)(atomic_load_explicit(&b->pushed_calls,
                                                       memory_order_relaxed) -
                                  pushed_before));
    bw_event_emit(b->sink, b->wall, now, BW_EV_REDIS_RESTORED, b->name, reason,
                  NULL, 0, NULL);
  }
}

int bw_redis_breaker_sync(bw_redis_breaker_t *b) {
  int rc;
  if (b == NULL) return BW_E_INVAL;
  /* An event loop syncs this breaker (bw_redis_breaker_new_async). */
  if (b->loop != NULL) return BW_E_INVAL;
  pthread_mutex_lock(&b->sync_mu);
  rc = bw__rb_sync_locked(b);
  pthread_mutex_unlock(&b->sync_mu);
  return rc;
}

static void *bw__rb_thread(void *arg) {
  bw_redis_breaker_t *b = arg;
  pthread_mutex_lock(&b->thr_mu);
  while (!b->stop) {
    struct timespec dl;
    pthread_mutex_unlock(&b->thr_mu);
    (void)bw_redis_breaker_sync(b);
    pthread_mutex_lock(&b->thr_mu);
    if (b->stop) break;
    if (atomic_exchange_explicit(&b->wake, false, memory_order_relaxed))
      continue;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += (time_t)(b->sync_interval_ms / 1000);
    dl.tv_nsec += (long)((b->sync_interval_ms % 1000) * 1000000);
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
    (void)pthread_cond_timedwait(&b->thr_cv, &b->thr_mu, &dl);
    atomic_store_explicit(&b->wake, false, memory_order_relaxed);
  }
  pthread_mutex_unlock(&b->thr_mu);
  return NULL;
}

/* ---- bw_limit_t -----------------------------------------------------------
 */

static int bw__rb_if_try_acquire(bw_limit_t *l, bw_permit_t *p) {
  return bw_redis_breaker_acquire((bw_redis_breaker_t *)l, p);
}
static int bw__rb_if_release(bw_limit_t *l, const bw_permit_t *p,
                             bw_limit_outcome_t o) {
  int rc =
      bw_redis_breaker_release((bw_redis_breaker_t *)l, p, (bw_outcome_t)o);
  return rc == BW_E_STALE ? BW_OK : rc;
}
static uint32_t bw__rb_if_limit(const bw_limit_t *l) {
  return bw_redis_breaker_retry_in_ms((const bw_redis_breaker_t *)l) == 0
             ? UINT32_MAX
             : 0;
}
static uint32_t bw__rb_if_in_flight(const bw_limit_t *l) {
  bw__rb_sums_t s;
  bw__rb_sum((const bw_redis_breaker_t *)l, &s);
  return s.admitted > s.calls ? (uint32_t)(s.admitted - s.calls) : 0;
}
static const char *bw__rb_if_name(const bw_limit_t *l) {
  return bw_redis_breaker_name((const bw_redis_breaker_t *)l);
}
static void bw__rb_if_free(bw_limit_t *l) {
  bw_redis_breaker_free((bw_redis_breaker_t *)l);
}
static const bw_limit_vtable_t bw__rb_vtable = {"redis_breaker",
                                                bw__rb_if_try_acquire,
                                                bw__rb_if_release,
                                                bw__rb_if_limit,
                                                bw__rb_if_in_flight,
                                                bw__rb_if_name,
                                                bw__rb_if_free,
                                                0,
                                                NULL};

bw_limit_t *bw_redis_breaker_as_limit(bw_redis_breaker_t *b) {
  return b == NULL ? NULL : &b->iface;
}

/* ---- the breaker interface ------------------------------------------------
 */

#define BW__RBI(i)                                                 \
  ((bw_redis_breaker_t *)(void *)((char *)(uintptr_t)(i)-offsetof( \
      bw_redis_breaker_t, biface)))

static int bw__rbi_acquire(bw_breaker_if_t *i, bw_permit_t *p) {
  return bw_redis_breaker_acquire(BW__RBI(i), p);
}
static int bw__rbi_release(bw_breaker_if_t *i, const bw_permit_t *p,
                           bw_outcome_t o) {
  return bw_redis_breaker_release(BW__RBI(i), p, o);
}
static bw_state_t bw__rbi_state(const bw_breaker_if_t *i) {
  return bw_redis_breaker_state(BW__RBI(i));
}
static int64_t bw__rbi_retry_in(const bw_breaker_if_t *i) {
  return bw_redis_breaker_retry_in_ms(BW__RBI(i));
}
static const char *bw__rbi_name(const bw_breaker_if_t *i) {
  return bw_redis_breaker_name(BW__RBI(i));
}
static void bw__rbi_free(bw_breaker_if_t *i) {
  bw_redis_breaker_free(BW__RBI(i));
}

static const bw_breaker_vtable_t bw__rb_if_vt = {
    "redis_breaker",  bw__rbi_acquire, bw__rbi_release, bw__rbi_state,
    bw__rbi_retry_in, bw__rbi_name,    bw__rbi_free};

bw_breaker_if_t *bw_redis_breaker_iface(bw_redis_breaker_t *b) {
  return b == NULL ? NULL : &b->biface;
}

/* ---- lifecycle ------------------------------------------------------------
 */

static void bw__rb_destroy(bw_redis_breaker_t *b) {
  bw__rconn_destroy(&b->conn);
  bw_breaker_free(b->local);
  bw_free(b->k_state);
  bw_free(b->k_applied);
  bw_free(b->k_buckets);
  bw_free(b->channel);
  bw_free(b->name);
  bw_free_aligned(b->stripes);
  pthread_mutex_destroy(&b->sync_mu);
  pthread_mutex_destroy(&b->thr_mu);
  pthread_cond_destroy(&b->thr_cv);
  bw_free_aligned(b);
}

/* Validates, builds, connects once and runs a first sync (blocking, bounded
 * by the timeouts); no thread. NULL with err. */
bw_redis_breaker_t *bw__rb_create(const bw_redis_breaker_config_t *cfg,
                                  bw_error_t *err) {
  bw_redis_breaker_t *b;
  const bw_breaker_config_t *bc;
  bw_breaker_config_t lc;
  pthread_condattr_t ca;
  bw_error_t cerr;
  int64_t ttl;
  int st;
  uint64_t seed;
  if (bw__rb_validate(cfg, err) != BW_OK) return NULL;
  bc = &cfg->breaker;
  b = bw_calloc_aligned(sizeof(*b));
  if (b == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating redis breaker");
    return NULL;
  }
  b->iface.vt = &bw__rb_vtable;
  b->biface.vt = &bw__rb_if_vt;
  pthread_mutex_init(&b->sync_mu, NULL);
  pthread_mutex_init(&b->thr_mu, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&b->thr_cv, &ca);
  pthread_condattr_destroy(&ca);
  seed = cfg->seed != 0 ? cfg->seed : bw_rand_os_seed();
  if (bw__rconn_init(&b->conn, &cfg->redis, bw__rb_scripts, 1, seed, err) !=
      BW_OK) {
    bw__rb_destroy(b);
    return NULL;
  }
  b->name = bw_strdup(bc->name != NULL ? bc->name : "breaker");
  b->stripes = bw_calloc_aligned(sizeof(bw__rb_stripe_t) * BW_STRIPES);
  lc = *bc;
  b->local =
      b->name != NULL && b->stripes != NULL ? bw_breaker_new(&lc, err) : NULL;
  if (b->local == NULL) {
    if (b->name == NULL || b->stripes == NULL)
      bw_error_set(err, BW_E_NOMEM, "", "out of memory creating redis breaker");
    bw__rb_destroy(b);
    return NULL;
  }
  b->k_state = bw__rconn_key(&b->conn, "{brk:", b->name, "}:state");
  b->k_applied = bw__rconn_key(&b->conn, "{brk:", b->name, "}:applied");
  b->k_buckets = bw__rconn_key(&b->conn, "{brk:", b->name, "}:buckets");
  b->channel = bw__rconn_key(&b->conn, "brk:", b->name, ":events");
  if (b->k_state == NULL || b->k_applied == NULL || b->k_buckets == NULL ||
      b->channel == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating redis breaker");
    bw__rb_destroy(b);
    return NULL;
  }
  b->clock = bc->clock != NULL ? bc->clock : bw_clock_monotonic();
  b->wall = bc->wall_clock != NULL ? bc->wall_clock : bw_clock_realtime();
  b->sink = bc->sink;
  b->rule = bc->trip_rule;
  b->failure_threshold = bc->failure_threshold;
  b->half_open_max = bc->half_open_max_calls;
  b->sync_interval_ms = cfg->sync_interval_ms;
  b->use_redis_time = cfg->use_redis_time;
  {
    /* The process identity must differ between processes (and between a
     * process and its restart), or the script takes their batches for
     * re-sends and drops them: so from the OS, never from cfg->seed alone
     * (many processes share one configured seed). */
    bw_rand_t r;
    bw_rand_seed(&r, bw_rand_os_seed() ^ ((uint64_t)getpid() << 32) ^ seed ^
                         UINT64_C(0x9e3779b97f4a7c15));
    snprintf(b->proc_id, sizeof(b->proc_id), "%016llx%016llx",
             (unsigned long long)bw_rand_next(&r),
             (unsigned long long)bw_rand_next(&r));
  }
  snprintf(b->a_rule, sizeof(b->a_rule), "%d", (int)bc->trip_rule);
  snprintf(b->a_thr, sizeof(b->a_thr), "%u", bc->failure_threshold);
  snprintf(b->a_ratio, sizeof(b->a_ratio), "%.17g", bc->failure_ratio);
  snprintf(b->a_minc, sizeof(b->a_minc), "%u", bc->minimum_calls);
  snprintf(b->a_bms, sizeof(b->a_bms), "%lld",
           (long long)(bc->window_ms / bc->window_buckets > 0
                           ? bc->window_ms / bc->window_buckets
                           : 1));
  snprintf(b->a_nb, sizeof(b->a_nb), "%u", bc->window_buckets);
  snprintf(b->a_brk, sizeof(b->a_brk), "%lld", (long long)bc->break_ms);
  snprintf(b->a_sthr, sizeof(b->a_sthr), "%u", bc->success_threshold);
  snprintf(b->a_hot, sizeof(b->a_hot), "%lld",
           (long long)bc->half_open_timeout_ms);
  /* Keys outlive the longest window or break by a day: an idle breaker's
   * state then expires on its own. */
  ttl = bc->window_ms > bc->break_ms ? bc->window_ms : bc->break_ms;
  ttl += 86400000;
  snprintf(b->a_ttl, sizeof(b->a_ttl), "%lld", (long long)ttl);
  atomic_store(&b->word, BW__W_MAKE(BW_CLOSED, false, 1));
  /* One connection attempt: a refused AUTH is a configuration error; an
   * unreachable server is an outage the breaker rides out locally. */
  bw_error_clear(&cerr);
  st = bw__rconn_connect(&b->conn, &cerr);
  if (st == BW_E_INVAL || st == BW_E_NOMEM) {
    if (err != NULL) *err = cerr;
    bw__rb_destroy(b);
    return NULL;
  }
  pthread_mutex_lock(&b->sync_mu);
  if (st != BW_OK)
    bw__rb_fail(b, bw__rb_now(b));
  else
    (void)bw__rb_sync_locked(b);
  pthread_mutex_unlock(&b->sync_mu);
  bw_error_clear(err);
  return b;
}

bw_redis_breaker_t *bw_redis_breaker_new(const bw_redis_breaker_config_t *cfg,
                                         bw_error_t *err) {
  bw_redis_breaker_t *b = bw__rb_create(cfg, err);
  if (b == NULL) return NULL;
  if (cfg->sync_thread) {
    b->has_thread = true;
    if (pthread_create(&b->thread, NULL, bw__rb_thread, b) != 0) {
      b->has_thread = false;
      bw_error_set(err, BW_E_IO, "sync_thread",
                   "cannot start the sync thread (sync_thread)");
      bw__rb_destroy(b);
      return NULL;
    }
  }
  bw_error_clear(err);
  return b;
}

void bw_redis_breaker_free(bw_redis_breaker_t *b) {
  if (b == NULL) return;
  if (b->has_thread) {
    pthread_mutex_lock(&b->thr_mu);
    b->stop = true;
    pthread_cond_signal(&b->thr_cv);
    pthread_mutex_unlock(&b->thr_mu);
    pthread_join(b->thread, NULL);
  }
  if (b->loop != NULL) {
    /* Event-loop mode: close the async connection (a pending reply is
     * dropped; its batch stays outstanding), then one last blocking push,
     * bounded by the timeouts, when Redis was reachable (it re-sends the
     * outstanding batch with its sequence: nothing doubled). */
    b->loop_free(b->loop);
    b->loop = NULL;
    if (!b->unavailable) {
      pthread_mutex_lock(&b->sync_mu);
      if (bw__rconn_connect(&b->conn, NULL) == BW_OK)
        (void)bw__rb_sync_locked(b);
      pthread_mutex_unlock(&b->sync_mu);
    }
  } else if (b->conn.c != NULL) {
    /* A last push of what was counted, if Redis is there (no reconnect). */
    pthread_mutex_lock(&b->sync_mu);
    (void)bw__rb_sync_locked(b);
    pthread_mutex_unlock(&b->sync_mu);
  }
  bw__rb_destroy(b);
}

/* ---- observers ------------------------------------------------------------
 */

bw_state_t bw_redis_breaker_state(const bw_redis_breaker_t *b) {
  uint64_t w;
  bw_state_t st;
  if (b == NULL) return BW_CLOSED;
  w = atomic_load_explicit(&b->word, memory_order_acquire);
  st = BW__W_STATE(w);
  if (st == BW_OPEN &&
      bw__rb_now(b) >=
          atomic_load_explicit(&b->open_until_ns, memory_order_relaxed))
    st = BW_HALF_OPEN;
  if ((w & BW__W_FB) && st != BW_OPEN) {
    /* The local breaker moves on its next acquire: an OPEN whose break is
     * over reads as HALF_OPEN here too. */
    st = bw_breaker_state(b->local);
    if (st == BW_OPEN && bw_breaker_retry_in_ms(b->local) == 0)
      st = BW_HALF_OPEN;
  }
  return st;
}

int64_t bw_redis_breaker_retry_in_ms(const bw_redis_breaker_t *b) {
  uint64_t w;
  if (b == NULL) return 0;
  w = atomic_load_explicit(&b->word, memory_order_acquire);
  if (BW__W_STATE(w) == BW_OPEN) {
    int64_t left =
        atomic_load_explicit(&b->open_until_ns, memory_order_relaxed) -
        bw__rb_now(b);
    if (left > 0) return bw_ns_to_ms_ceil(left);
  }
  if (w & BW__W_FB) return bw_breaker_retry_in_ms(b->local);
  return 0;
}

const char *bw_redis_breaker_name(const bw_redis_breaker_t *b) {
  return b == NULL ? "" : b->name;
}

void bw_redis_breaker_stats(const bw_redis_breaker_t *b,
                            bw_redis_breaker_stats_t *out) {
  bw__rb_sums_t s;
  uint64_t w, pushed;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (b == NULL) return;
  w = atomic_load_explicit(&b->word, memory_order_acquire);
  bw__rb_sum(b, &s);
  out->state = bw_redis_breaker_state(b);
  out->generation = BW__W_GEN(w);
  out->fallback = (w & BW__W_FB) != 0;
  out->shared_consecutive_failures =
      atomic_load_explicit(&b->shared_consec, memory_order_relaxed);
  out->shared_window_calls =
      atomic_load_explicit(&b->shared_wc, memory_order_relaxed);
  out->shared_window_failures =
      atomic_load_explicit(&b->shared_wf, memory_order_relaxed);
  out->shared_total_calls =
      atomic_load_explicit(&b->shared_total_calls, memory_order_relaxed);
  out->successes = s.successes;
  out->failures = s.failures;
  out->ignored = s.ignored;
  out->calls = s.successes + s.failures + s.ignored;
  out->stale = s.stale;
  out->admitted = s.admitted;
  out->rejected = s.rejected;
  pushed = atomic_load_explicit(&b->pushed_calls, memory_order_relaxed);
  out->pending_calls = out->calls > pushed ? out->calls - pushed : 0;
  out->syncs = atomic_load_explicit(&b->syncs, memory_order_relaxed);
  out->sync_failures =
      atomic_load_explicit(&b->sync_failures, memory_order_relaxed);
  out->duplicate_batches =
      atomic_load_explicit(&b->duplicate_batches, memory_order_relaxed);
  out->unavailable_events =
      atomic_load_explicit(&b->unavailable_events, memory_order_relaxed);
  out->restored_events =
      atomic_load_explicit(&b->restored_events, memory_order_relaxed);
  out->transitions_seen =
      atomic_load_explicit(&b->transitions_seen, memory_order_relaxed);
  out->transition_sync =
      atomic_load_explicit(&b->transition_sync, memory_order_relaxed);
  out->retry_in_ms = bw_redis_breaker_retry_in_ms(b);
}

/* ---- event-loop mode (async.c) ------------------------------------------
 */

void bw__rb_attach_loop(bw_redis_breaker_t *b, void *loop,
                        void (*loop_free)(void *loop)) {
  b->loop = loop;
  b->loop_free = loop_free;
}

bw__rconn_t *bw__rb_conn(bw_redis_breaker_t *b) {
  return &b->conn;
}

int64_t bw__rb_clock_now(const bw_redis_breaker_t *b) {
  return bw__rb_now(b);
}

int64_t bw__rb_interval_ms(const bw_redis_breaker_t *b) {
  return b->sync_interval_ms;
}

bool bw__rb_unavailable_now(const bw_redis_breaker_t *b) {
  return b->unavailable;
}

uint64_t bw__rb_pushed_calls(const bw_redis_breaker_t *b) {
  return atomic_load_explicit(&b->pushed_calls, memory_order_relaxed);
}

bool bw__rb_next_batch(bw_redis_breaker_t *b, int64_t now, const char **argv) {
  bool resent = b->have_batch;
  if (!resent) bw__rb_take(b);
  bw__rb_argv(b, now, argv);
  return resent;
}

/* Shared-memory circuit breaker.
 *
 * The whole mutable state is one block of 64-bit atomics in the segment:
 * - `sw` packs (generation << 8 | state); every transition bumps the
 *   generation, so a permit knows which state it was issued in;
 * - transitions are made under a transition LEASE (`tlock`, 1 s of the
 *   breaker's clock): the holder re-checks `sw`, writes open_until_ns and
 *   the break growth, then publishes the new `sw`. A holder killed midway
 *   leaves `sw` unpublished; the next caller steals the expired lease and
 *   redoes the transition. The CLOSED path and OPEN rejections never take it;
 * - half-open probes are leases in a fixed slot array: a slot word packs
 *   (generation tag << 44 | expiry in ms). A slot is free when 0, when its
 *   tag is another generation's, or when its lease has expired: a probe held
 *   by a crashed worker stops blocking the others after half_open_timeout_ms;
 *   its holder's late release finds the slot word changed (or the lease
 *   over) and is stale;
 * - probe successes are counted in a word packing (generation, count), so a
 *   new HALF_OPEN starts from zero without a reset;
 * - the time window is `buckets` pairs of words packing (epoch << 32 |
 *   count), recycled by CAS by the first writer of a new epoch (the core's
 *   window rules, ext.h);
 * - totals are striped counters (atomic adds; processes share stripes). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "shm_internal.h"

#define BW__ST(w) ((bw_state_t)((w)&0xffu))
#define BW__GEN(w) ((w) >> 8)
#define BW__PACK(st, gen) (((uint64_t)(gen) << 8) | (uint64_t)(st))
#define BW__MAX_PROBES 64u
#define BW__TLOCK_NS BW_NS_PER_S
#define BW__TLOCK_TRIES 20000 /* ~2 s: longer than the 1 s lease */
#define BW__EXP_BITS 44
#define BW__EXP_MASK ((UINT64_C(1) << BW__EXP_BITS) - 1)
#define BW__TAG_MASK ((UINT64_C(1) << (64 - BW__EXP_BITS)) - 1)

enum {
  BW__C_ADMITTED,
  BW__C_REJECTED,
  BW__C_SUCCESSES,
  BW__C_FAILURES,
  BW__C_IGNORED,
  BW__C_STALE,
  BW__C_COUNT
};

/* The immutable configuration, compared field by field on attach. Fields a
 * rule does not use are stored as 0. */
typedef struct bw__brk_cfg_s {
  uint32_t rule;
  uint32_t failure_threshold;
  uint32_t minimum_calls;
  uint32_t buckets;
  uint32_t half_open_max;
  uint32_t success_threshold;
  double failure_ratio;
  double break_multiplier;
  int64_t window_ms;
  int64_t break_ms;
  int64_t max_break_ms;
  int64_t half_open_timeout_ms;
} bw__brk_cfg_t;

typedef struct bw__brk_s {
  bw__shm_obj_t hdr;
  bw__brk_cfg_t cfg;
  BW__APART _Atomic uint64_t sw;
  _Atomic int64_t open_until_ns;
  _Atomic int64_t current_break_ns;
  _Atomic uint64_t ho; /* (generation low 32 bits << 32) | probe successes */
  /* Written under the transition lease only. */
  _Atomic uint64_t consecutive_opens;
  _Atomic int64_t state_since_ns;
  _Atomic int64_t time_in_state_ns[BW_STATE__COUNT];
  _Atomic uint64_t opens;
  _Atomic uint64_t half_opens;
  _Atomic uint64_t closes;
  BW__APART _Atomic int64_t tlock;
  BW__APART _Atomic uint64_t consec;
  BW__APART _Atomic uint64_t probes[BW__MAX_PROBES];
  bw__shm_ctr_t ctr[BW__SHM_STRIPES];
  /* followed by 2 * buckets words: (calls, failures) per bucket */
} bw__brk_t;

struct bw_shm_breaker_s {
  bw_limit_t iface;       /* first: bw_shm_breaker_as_limit (deprecated) */
  bw_breaker_if_t biface; /* bw_shm_breaker_iface */
  bw__brk_t *s;
  _Atomic uint64_t *tw;
  bw__brk_cfg_t cfg;
  int64_t bucket_ns;
  int64_t lease_ns;
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  char name[BW_NAME_MAX + 1];
};

static const bw_breaker_vtable_t bw__brk_if_vt;

typedef struct bw__brk_init_s {
  const bw__brk_cfg_t *cfg;
  int64_t now;
} bw__brk_init_t;

/* ---- creation ------------------------------------------------------------ */

static int bw__brk_validate(const bw_breaker_config_t *c, bw_error_t *err) {
  int rc = bw_breaker_config_validate(c, err);
  if (rc != BW_OK) return rc;
  if (c->trip_rule == BW_TRIP_COUNT_WINDOW)
    return bw_error_set(err, BW_E_INVAL, "trip_rule",
                        "trip_rule count_window is not supported by the "
                        "shared-memory breaker (use consecutive or "
                        "time_window)");
  if (c->slow_call_ms != 0)
    return bw_error_set(err, BW_E_INVAL, "slow_call_ms",
                        "slow_call_ms is not supported by the shared-memory "
                        "breaker (must be 0, got %lld)",
                        (long long)c->slow_call_ms);
  if (c->metrics_only)
    return bw_error_set(err, BW_E_INVAL, "metrics_only",
                        "metrics_only is not supported by the shared-memory "
                        "breaker (must be false)");
  if (c->half_open_max_calls > BW__MAX_PROBES)
    return bw_error_set(err, BW_E_INVAL, "half_open_max_calls",
                        "half_open_max_calls must be <= %u for the "
                        "shared-memory breaker (got %u)",
                        BW__MAX_PROBES, c->half_open_max_calls);
  return BW_OK;
}

static void bw__brk_cfg_from(const bw_breaker_config_t *c, bw__brk_cfg_t *o) {
  memset(o, 0, sizeof(*o));
  o->rule = (uint32_t)c->trip_rule;
  if (c->trip_rule == BW_TRIP_CONSECUTIVE) {
    o->failure_threshold = c->failure_threshold;
  } else {
    o->minimum_calls = c->minimum_calls;
    o->buckets = c->window_buckets;
    o->failure_ratio = c->failure_ratio;
    o->window_ms = c->window_ms;
  }
  o->half_open_max = c->half_open_max_calls;
  o->success_threshold = c->success_threshold;
  o->break_multiplier = c->break_multiplier;
  o->break_ms = c->break_ms;
  o->max_break_ms = c->max_break_ms == 0 ? c->break_ms : c->max_break_ms;
  o->half_open_timeout_ms = c->half_open_timeout_ms;
}

static void bw__brk_init(void *block, const void *arg) {
  bw__brk_t *s = block;
  const bw__brk_init_t *in = arg;
  s->cfg = *in->cfg;
  atomic_store(&s->sw, BW__PACK(BW_CLOSED, 1));
  atomic_store(&s->current_break_ns, in->cfg->break_ms * BW_NS_PER_MS);
  atomic_store(&s->state_since_ns, in->now);
}

#define BW__DIFF_U(f) \
  if (a->f != b->f)   \
  return bw__shm_mismatch_u(err, "breaker", seg, #f, a->f, b->f)
#define BW__DIFF_D(f) \
  if (a->f != b->f)   \
  return bw__shm_mismatch_g(err, "breaker", seg, #f, a->f, b->f)

static int bw__brk_check(const void *block, const void *arg, const char *seg,
                         bw_error_t *err) {
  const bw__brk_cfg_t *a = &((const bw__brk_t *)block)->cfg;
  const bw__brk_cfg_t *b = ((const bw__brk_init_t *)arg)->cfg;
  if (a->rule != b->rule)
    return bw__shm_mismatch(err, "breaker", seg, "trip_rule",
                            bw_trip_rule_name((bw_trip_rule_t)a->rule),
                            bw_trip_rule_name((bw_trip_rule_t)b->rule));
  BW__DIFF_U(failure_threshold);
  BW__DIFF_D(failure_ratio);
  BW__DIFF_U(window_ms);
  /* The public name of `buckets`. */
  if (a->buckets != b->buckets)
    return bw__shm_mismatch_u(err, "breaker", seg, "window_buckets", a->buckets,
                              b->buckets);
  BW__DIFF_U(minimum_calls);
  BW__DIFF_U(break_ms);
  BW__DIFF_D(break_multiplier);
  BW__DIFF_U(max_break_ms);
  if (a->half_open_max != b->half_open_max)
    return bw__shm_mismatch_u(err, "breaker", seg, "half_open_max_calls",
                              a->half_open_max, b->half_open_max);
  BW__DIFF_U(success_threshold);
  BW__DIFF_U(half_open_timeout_ms);
  return BW_OK;
}

static const bw_limit_vtable_t bw__brk_vt;

bw_shm_breaker_t *bw_shm_breaker_new(bw_shm_t *shm,
                                     const bw_breaker_config_t *cfg,
                                     bw_error_t *err) {
  bw_shm_breaker_t *b;
  bw__brk_cfg_t c;
  bw__brk_init_t in;
  void *blk;
  size_t size;
  int rc;
  if (shm == NULL) {
    bw_error_set(err, BW_E_INVAL, "shm", "shm (the segment) must not be NULL");
    return NULL;
  }
  if (bw__brk_validate(cfg, err) != BW_OK) return NULL;
  b = bw_calloc(1, sizeof(*b));
  if (b == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  bw__brk_cfg_from(cfg, &c);
  b->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  b->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  b->sink = cfg->sink;
  snprintf(b->name, sizeof(b->name), "%s", cfg->name);
  in.cfg = &c;
  in.now = bw_clock_now(b->clock);
  size = sizeof(bw__brk_t) + 2 * (size_t)c.buckets * sizeof(uint64_t);
  rc = bw__shm_object(shm, cfg->name, BW__SHM_KIND_BREAKER, size, bw__brk_init,
                      bw__brk_check, &in, &blk, err);
  if (rc != BW_OK) {
    bw_free(b);
    return NULL;
  }
  b->iface.vt = &bw__brk_vt;
  b->biface.vt = &bw__brk_if_vt;
  b->s = blk;
  b->tw =
      (_Atomic uint64_t *)(void *)((unsigned char *)blk + sizeof(bw__brk_t));
  b->cfg = c;
  b->bucket_ns = c.buckets ? c.window_ms * BW_NS_PER_MS / c.buckets : 0;
  b->lease_ns = c.half_open_timeout_ms * BW_NS_PER_MS;
  bw_error_clear(err);
  return b;
}

void bw_shm_breaker_free(bw_shm_breaker_t *b) {
  bw_free(b);
}

const char *bw_shm_breaker_name(const bw_shm_breaker_t *b) {
  return b == NULL ? "" : b->name;
}

/* ---- helpers ------------------------------------------------------------- */

static inline void bw__count(bw_shm_breaker_t *b, int which) {
  bw__shm_bump(b->s->ctr, which);
}

static uint64_t bw__slot_word(uint64_t gen, int64_t start_ns, int64_t lease) {
  uint64_t exp_ms =
      (uint64_t)((start_ns + lease + BW_NS_PER_MS - 1) / BW_NS_PER_MS);
  if (exp_ms > BW__EXP_MASK) exp_ms = BW__EXP_MASK;
  return ((gen & BW__TAG_MASK) << BW__EXP_BITS) | exp_ms;
}

static bool bw__slot_expired(uint64_t v, int64_t now) {
  return now >= (int64_t)(v & BW__EXP_MASK) * BW_NS_PER_MS;
}

static bool bw__slot_free(uint64_t v, uint64_t gen, int64_t now) {
  return v == 0 || (v >> BW__EXP_BITS) != (gen & BW__TAG_MASK) ||
         bw__slot_expired(v, now);
}

static void bw__emit_tx(const bw_shm_breaker_t *b, int64_t now,
                        bw_event_type_t type, const char *reason,
                        bw_state_t from, int64_t break_ms,
                        const bw_context_t *ctx) {
  bw_breaker_emit_transition(b->sink, b->wall, b->name, now, type, reason, from,
                             break_ms, ctx);
}

/* ---- transitions (transition lease held) --------------------------------- */

static void bw__enter(bw__brk_t *s, uint64_t w, bw_state_t to, int64_t now) {
  int64_t since = BW__SHM_LOAD(s->state_since_ns);
  BW__SHM_ADD(s->time_in_state_ns[BW__ST(w)], now > since ? now - since : 0);
  atomic_store_explicit(&s->state_since_ns, now, memory_order_relaxed);
  atomic_store_explicit(&s->sw, BW__PACK(to, BW__GEN(w) + 1),
                        memory_order_release);
}

static int64_t bw__to_open(bw_shm_breaker_t *b, uint64_t w, int64_t now) {
  bw__brk_t *s = b->s;
  uint64_t n = BW__SHM_LOAD(s->consecutive_opens) + 1;
  int64_t brk = bw_breaker_break_after(b->cfg.break_ms * BW_NS_PER_MS,
                                       b->cfg.break_multiplier, n,
                                       b->cfg.max_break_ms * BW_NS_PER_MS);
  atomic_store_explicit(&s->consecutive_opens, n, memory_order_relaxed);
  atomic_store_explicit(&s->current_break_ns, brk, memory_order_relaxed);
  atomic_store_explicit(&s->open_until_ns, now + brk, memory_order_relaxed);
  BW__SHM_ADD(s->opens, 1);
  bw__enter(s, w, BW_OPEN, now);
  return brk;
}

static void bw__clear_for_close(bw_shm_breaker_t *b) {
  bw__brk_t *s = b->s;
  atomic_store_explicit(&s->consec, 0, memory_order_relaxed);
  atomic_store_explicit(&s->consecutive_opens, 0, memory_order_relaxed);
  atomic_store_explicit(&s->current_break_ns, b->cfg.break_ms * BW_NS_PER_MS,
                        memory_order_relaxed);
  for (uint32_t i = 0; i < 2 * b->cfg.buckets; i++)
    atomic_store_explicit(&b->tw[i], 0, memory_order_relaxed);
}

typedef enum { BW__TX_OPEN, BW__TX_HALF_OPEN, BW__TX_CLOSE } bw__tx_t;

/* Makes the transition `tx` if the state word is still w. Returns whether
 * this call made it (and emitted its event). */
static bool bw__transition(bw_shm_breaker_t *b, uint64_t w, bw__tx_t tx,
                           const char *reason, const bw_context_t *ctx) {
  bw__brk_t *s = b->s;
  int64_t mine, now, brk = -1;
  bool done = false;
  char buf[96];
  mine = bw__shm_lease_lock(&s->tlock, b->clock, BW__TLOCK_NS, BW__TLOCK_TRIES);
  if (mine == 0) return false;
  /* Read the time under the lease: the break starts now. */
  now = bw_clock_now(b->clock);
  if (atomic_load_explicit(&s->sw, memory_order_acquire) == w) {
    switch (tx) {
    case BW__TX_OPEN:
      brk = bw__to_open(b, w, now);
      break;
    case BW__TX_HALF_OPEN:
      if (now < BW__SHM_LOAD(s->open_until_ns)) goto out;
      BW__SHM_ADD(s->half_opens, 1);
      bw__enter(s, w, BW_HALF_OPEN, now);
      break;
    case BW__TX_CLOSE:
      bw__clear_for_close(b);
      BW__SHM_ADD(s->closes, 1);
      bw__enter(s, w, BW_CLOSED, now);
      break;
    }
    done = true;
  }
out:
  bw__shm_lease_unlock(&s->tlock, mine);
  if (!done) return false;
  switch (tx) {
  case BW__TX_OPEN:
    bw__emit_tx(b, now, BW_EV_CIRCUIT_OPENED, reason, BW__ST(w),
                brk / BW_NS_PER_MS, ctx);
    break;
  case BW__TX_HALF_OPEN:
    snprintf(buf, sizeof(buf), "break of %lld ms elapsed",
             (long long)(BW__SHM_LOAD(s->current_break_ns) / BW_NS_PER_MS));
    bw__emit_tx(b, now, BW_EV_CIRCUIT_HALF_OPENED, buf, BW_OPEN, -1, NULL);
    break;
  case BW__TX_CLOSE:
    snprintf(buf, sizeof(buf), "%u probe successes (success_threshold %u)",
             b->cfg.success_threshold, b->cfg.success_threshold);
    bw__emit_tx(b, now, BW_EV_CIRCUIT_CLOSED, buf, BW_HALF_OPEN, -1, ctx);
    break;
  }
  return true;
}

/* ---- time window --------------------------------------------------------- */

/* Counts one in bucket `epoch` of a window word, by the core's rule
 * (bw_window_word_next). Other processes write the same words, so always by
 * CAS. */
static void bw__tw_bump(_Atomic uint64_t *word, uint32_t epoch) {
  uint64_t cur = BW__SHM_LOAD(*word), next;
  while (bw_window_word_next(cur, epoch, &next) &&
         !atomic_compare_exchange_weak_explicit(
             word, &cur, next, memory_order_relaxed, memory_order_relaxed)) {
  }
}

static void bw__tw_read(const bw_shm_breaker_t *b, int64_t now, uint64_t *calls,
                        uint64_t *failures) {
  uint32_t epoch = (uint32_t)bw__shm_floor_div(now, b->bucket_ns);
  *calls = *failures = 0;
  for (uint32_t j = 0; j < b->cfg.buckets; j++) {
    uint64_t c = BW__SHM_LOAD(b->tw[2 * j]);
    uint64_t f = BW__SHM_LOAD(b->tw[2 * j + 1]);
    *calls += bw_window_word_count(c, epoch, b->cfg.buckets);
    *failures += bw_window_word_count(f, epoch, b->cfg.buckets);
  }
}

static void bw__closed_record(bw_shm_breaker_t *b, uint64_t w, bool fail,
                              const bw_context_t *ctx) {
  bw__brk_t *s = b->s;
  char reason[128];
  if (b->cfg.rule == BW_TRIP_CONSECUTIVE) {
    uint64_t n;
    if (!fail) {
      if (BW__SHM_LOAD(s->consec) != 0)
        atomic_store_explicit(&s->consec, 0, memory_order_relaxed);
      return;
    }
    n = BW__SHM_ADD(s->consec, 1) + 1;
    if (n >= b->cfg.failure_threshold) {
      snprintf(reason, sizeof(reason),
               "%llu consecutive failures (failure_threshold %u)",
               (unsigned long long)n, b->cfg.failure_threshold);
      bw__transition(b, w, BW__TX_OPEN, reason, ctx);
    }
    return;
  }
  {
    int64_t now = bw_clock_now(b->clock);
    int64_t cur = bw__shm_floor_div(now, b->bucket_ns);
    uint32_t j = (uint32_t)((uint64_t)cur % b->cfg.buckets);
    uint64_t calls, failures;
    double fr;
    bw__tw_bump(&b->tw[2 * j], (uint32_t)cur);
    if (!fail) return; /* a success never opens */
    bw__tw_bump(&b->tw[2 * j + 1], (uint32_t)cur);
    bw__tw_read(b, now, &calls, &failures);
    if (calls < b->cfg.minimum_calls || calls == 0 || failures == 0) return;
    fr = (double)failures / (double)calls;
    if (fr < b->cfg.failure_ratio) return;
    snprintf(reason, sizeof(reason),
             "failure ratio %.2f >= %.2f over %lld ms (%llu calls)", fr,
             b->cfg.failure_ratio, (long long)b->cfg.window_ms,
             (unsigned long long)calls);
    bw__transition(b, w, BW__TX_OPEN, reason, ctx);
  }
}

/* ---- acquire / release --------------------------------------------------- */

static void bw__fill(bw_permit_t *p, uint64_t gen, int64_t start, uint32_t kind,
                     uint32_t slot) {
  bw_permit_init(p, start, kind);
  p->generation = gen;
  p->lease_slot = slot;
}

int bw_shm_breaker_acquire(bw_shm_breaker_t *b, bw_permit_t *p) {
  bw__brk_t *s;
  uint64_t w;
  int64_t now;
  if (b == NULL || p == NULL) return BW_E_INVAL;
  s = b->s;
  w = atomic_load_explicit(&s->sw, memory_order_acquire);
  if (BW__LIKELY(BW__ST(w) == BW_CLOSED)) {
    bw__count(b, BW__C_ADMITTED);
    bw__fill(p, BW__GEN(w), 0, BW_PERMIT_NORMAL, BW_PERMIT_NO_SLOT);
    return BW_OK;
  }
  now = bw_clock_now(b->clock);
  /* Bounded: each round follows a transition another caller made. */
  for (int round = 0; round < 8; round++) {
    switch (BW__ST(w)) {
    case BW_CLOSED:
    case BW_DISABLED:
      bw__count(b, BW__C_ADMITTED);
      bw__fill(p, BW__GEN(w), now, BW_PERMIT_NORMAL, BW_PERMIT_NO_SLOT);
      return BW_OK;
    case BW_OPEN:
      if (now < BW__SHM_LOAD(s->open_until_ns)) goto reject;
      bw__transition(b, w, BW__TX_HALF_OPEN, NULL, NULL);
      break;
    case BW_HALF_OPEN: {
      uint64_t gen = BW__GEN(w);
      uint64_t mine = bw__slot_word(gen, now, b->lease_ns);
      uint32_t i;
      for (i = 0; i < b->cfg.half_open_max; i++) {
        uint64_t v = BW__SHM_LOAD(s->probes[i]);
        if (!bw__slot_free(v, gen, now)) continue;
        if (atomic_compare_exchange_strong_explicit(&s->probes[i], &v, mine,
                                                    memory_order_acq_rel,
                                                    memory_order_relaxed))
          break;
      }
      if (i == b->cfg.half_open_max) goto reject;
      if (atomic_load_explicit(&s->sw, memory_order_acquire) == w) {
        bw__count(b, BW__C_ADMITTED);
        bw__fill(p, gen, now, BW_PERMIT_PROBE, i);
        return BW_OK;
      }
      /* The state moved on while we claimed: give the slot back. */
      {
        uint64_t v = mine;
        atomic_compare_exchange_strong_explicit(
            &s->probes[i], &v, 0, memory_order_release, memory_order_relaxed);
      }
      break;
    }
    case BW_ISOLATED:
    default:
      goto reject;
    }
    w = atomic_load_explicit(&s->sw, memory_order_acquire);
  }
reject:
  bw__count(b, BW__C_REJECTED);
  return BW_E_OPEN;
}

static int bw__probe_release(bw_shm_breaker_t *b, uint64_t w,
                             const bw_permit_t *p, bw_outcome_t o) {
  bw__brk_t *s = b->s;
  uint64_t expect, gen = p->generation;
  int64_t now = bw_clock_now(b->clock);
  bool freed = false;
  if (p->lease_slot < b->cfg.half_open_max) {
    expect = bw__slot_word(gen, p->start_ns, b->lease_ns);
    freed = atomic_compare_exchange_strong_explicit(
        &s->probes[p->lease_slot], &expect, 0, memory_order_acq_rel,
        memory_order_relaxed);
  }
  /* A lease that ended (taken over or not) decides nothing: another worker
   * may already be probing in its place. */
  if (!freed ||
      bw__slot_expired(bw__slot_word(gen, p->start_ns, b->lease_ns), now) ||
      w != BW__PACK(BW_HALF_OPEN, gen)) {
    bw__count(b, BW__C_STALE);
    return BW_E_STALE;
  }
  if (o == BW_FAILURE) {
    bw__transition(b, w, BW__TX_OPEN, "probe failed in half-open", p->context);
  } else if (o == BW_SUCCESS) {
    uint64_t cur = BW__SHM_LOAD(s->ho), next;
    uint32_t tag = (uint32_t)gen;
    do {
      next =
          (uint32_t)(cur >> 32) == tag ? cur + 1 : (((uint64_t)tag << 32) | 1u);
    } while (!atomic_compare_exchange_weak_explicit(
        &s->ho, &cur, next, memory_order_acq_rel, memory_order_relaxed));
    if ((uint32_t)next >= b->cfg.success_threshold)
      bw__transition(b, w, BW__TX_CLOSE, NULL, p->context);
  }
  return BW_OK;
}

int bw_shm_breaker_release(bw_shm_breaker_t *b, const bw_permit_t *p,
                           bw_outcome_t outcome) {
  uint64_t w;
  if (b == NULL || p == NULL) return BW_E_INVAL;
  if ((unsigned)outcome > (unsigned)BW_IGNORED) return BW_E_INVAL;
  /* Totals first: every release counts exactly once, whatever it decides. */
  bw__count(b, outcome == BW_SUCCESS   ? BW__C_SUCCESSES
               : outcome == BW_FAILURE ? BW__C_FAILURES
                                       : BW__C_IGNORED);
  w = atomic_load_explicit(&b->s->sw, memory_order_acquire);
  if (p->kind == BW_PERMIT_PROBE) return bw__probe_release(b, w, p, outcome);
  if (BW__UNLIKELY(BW__GEN(w) != p->generation)) {
    bw__count(b, BW__C_STALE);
    return BW_E_STALE;
  }
  if (BW__ST(w) == BW_CLOSED && outcome != BW_IGNORED)
    bw__closed_record(b, w, outcome == BW_FAILURE, p->context);
  return BW_OK;
}

/* ---- queries and operator controls --------------------------------------- */

bw_state_t bw_shm_breaker_state(const bw_shm_breaker_t *b) {
  if (b == NULL) return BW_CLOSED;
  return BW__ST(atomic_load_explicit(&b->s->sw, memory_order_acquire));
}

int64_t bw_shm_breaker_retry_in_ms(const bw_shm_breaker_t *b) {
  uint64_t w;
  if (b == NULL) return 0;
  w = atomic_load_explicit(&b->s->sw, memory_order_acquire);
  if (BW__ST(w) == BW_OPEN)
    return bw_ns_to_ms_ceil(BW__SHM_LOAD(b->s->open_until_ns) -
                            bw_clock_now(b->clock));
  return BW__ST(w) == BW_ISOLATED ? -1 : 0;
}

void bw_shm_breaker_poll(bw_shm_breaker_t *b) {
  uint64_t w;
  if (b == NULL) return;
  w = atomic_load_explicit(&b->s->sw, memory_order_acquire);
  if (BW__ST(w) == BW_OPEN &&
      bw_clock_now(b->clock) >= BW__SHM_LOAD(b->s->open_until_ns))
    bw__transition(b, w, BW__TX_HALF_OPEN, NULL, NULL);
}

static void bw__operator(bw_shm_breaker_t *b, bw_state_t to,
                         bw_event_type_t ev) {
  bw__brk_t *s;
  int64_t mine, now;
  uint64_t w;
  if (b == NULL) return;
  s = b->s;
  mine = bw__shm_lease_lock(&s->tlock, b->clock, BW__TLOCK_NS, BW__TLOCK_TRIES);
  if (mine == 0) return;
  now = bw_clock_now(b->clock);
  w = atomic_load_explicit(&s->sw, memory_order_acquire);
  if (to == BW_CLOSED) bw__clear_for_close(b);
  bw__enter(s, w, to, now);
  bw__shm_lease_unlock(&s->tlock, mine);
  bw__emit_tx(b, now, ev, "operator", BW__ST(w), -1, NULL);
}

void bw_shm_breaker_isolate(bw_shm_breaker_t *b) {
  bw__operator(b, BW_ISOLATED, BW_EV_CIRCUIT_ISOLATED);
}

void bw_shm_breaker_reset(bw_shm_breaker_t *b) {
  bw__operator(b, BW_CLOSED, BW_EV_CIRCUIT_RESET);
}

void bw_shm_breaker_stats(const bw_shm_breaker_t *b, bw_breaker_stats_t *out) {
  const bw__brk_t *s;
  uint64_t w, sum[BW__C_COUNT];
  int64_t now, since;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (b == NULL) return;
  s = b->s;
  w = atomic_load_explicit(&s->sw, memory_order_acquire);
  now = bw_clock_now(b->clock);
  out->state = BW__ST(w);
  out->generation = BW__GEN(w);
  out->consecutive_failures = (uint32_t)BW__SHM_LOAD(s->consec);
  if (b->cfg.rule == BW_TRIP_TIME_WINDOW) {
    bw__tw_read(b, now, &out->window_calls, &out->window_failures);
    if (out->window_calls > 0)
      out->window_failure_ratio =
          (double)out->window_failures / (double)out->window_calls;
  }
  bw__shm_sum_all(s->ctr, sum, BW__C_COUNT);
  out->successes = sum[BW__C_SUCCESSES];
  out->failures = sum[BW__C_FAILURES];
  out->ignored = sum[BW__C_IGNORED];
  out->calls = out->successes + out->failures + out->ignored;
  out->stale = sum[BW__C_STALE];
  out->admitted = sum[BW__C_ADMITTED];
  out->rejected = sum[BW__C_REJECTED];
  out->opens = BW__SHM_LOAD(s->opens);
  out->half_opens = BW__SHM_LOAD(s->half_opens);
  out->closes = BW__SHM_LOAD(s->closes);
  if (out->state == BW_HALF_OPEN)
    for (uint32_t i = 0; i < b->cfg.half_open_max; i++)
      if (!bw__slot_free(BW__SHM_LOAD(s->probes[i]), BW__GEN(w), now))
        out->half_open_in_flight++;
  out->retry_in_ms = bw_shm_breaker_retry_in_ms(b);
  out->current_break_ms = BW__SHM_LOAD(s->current_break_ns) / BW_NS_PER_MS;
  since = BW__SHM_LOAD(s->state_since_ns);
  for (int i = 0; i < BW_STATE__COUNT; i++)
    out->time_in_state_ms[i] = BW__SHM_LOAD(s->time_in_state_ns[i]);
  out->time_in_state_ms[out->state] += now > since ? now - since : 0;
  for (int i = 0; i < BW_STATE__COUNT; i++)
    out->time_in_state_ms[i] /= BW_NS_PER_MS;
}

/* ---- bw_limit_t ---------------------------------------------------------- */

static int bw__lim_acquire(bw_limit_t *l, bw_permit_t *p) {
  return bw_shm_breaker_acquire((bw_shm_breaker_t *)l, p);
}

static int bw__lim_release(bw_limit_t *l, const bw_permit_t *p,
                           bw_limit_outcome_t o) {
  int rc = bw_shm_breaker_release((bw_shm_breaker_t *)l, p, (bw_outcome_t)o);
  return rc == BW_E_STALE ? BW_OK : rc;
}

static uint32_t bw__lim_limit(const bw_limit_t *l) {
  const bw_shm_breaker_t *b = (const bw_shm_breaker_t *)l;
  switch (bw_shm_breaker_state(b)) {
  case BW_OPEN:
  case BW_ISOLATED:
    return 0;
  case BW_HALF_OPEN:
    return b->cfg.half_open_max;
  default:
    return UINT32_MAX;
  }
}

static uint32_t bw__lim_in_flight(const bw_limit_t *l) {
  const bw_shm_breaker_t *b = (const bw_shm_breaker_t *)l;
  uint64_t sum[BW__C_COUNT], released, n;
  bw__shm_sum_all(b->s->ctr, sum, BW__C_COUNT);
  released = sum[BW__C_SUCCESSES] + sum[BW__C_FAILURES] + sum[BW__C_IGNORED];
  n = sum[BW__C_ADMITTED] > released ? sum[BW__C_ADMITTED] - released : 0;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static const char *bw__lim_name(const bw_limit_t *l) {
  return bw_shm_breaker_name((const bw_shm_breaker_t *)l);
}

static void bw__lim_free(bw_limit_t *l) {
  bw_shm_breaker_free((bw_shm_breaker_t *)l);
}

static const bw_limit_vtable_t bw__brk_vt = {"shm_breaker",
                                             bw__lim_acquire,
                                             bw__lim_release,
                                             bw__lim_limit,
                                             bw__lim_in_flight,
                                             bw__lim_name,
                                             bw__lim_free,
                                             0,
                                             NULL};

bw_limit_t *bw_shm_breaker_as_limit(bw_shm_breaker_t *b) {
  return b == NULL ? NULL : &b->iface;
}

/* ---- the breaker interface ------------------------------------------------
 */

#define BW__BI(i)                                                \
  ((bw_shm_breaker_t *)(void *)((char *)(uintptr_t)(i)-offsetof( \
      bw_shm_breaker_t, biface)))

static int bw__bi_acquire(bw_breaker_if_t *i, bw_permit_t *p) {
  return bw_shm_breaker_acquire(BW__BI(i), p);
}
static int bw__bi_release(bw_breaker_if_t *i, const bw_permit_t *p,
                          bw_outcome_t o) {
  return bw_shm_breaker_release(BW__BI(i), p, o);
}
static bw_state_t bw__bi_state(const bw_breaker_if_t *i) {
  return bw_shm_breaker_state(BW__BI(i));
}
static int64_t bw__bi_retry_in(const bw_breaker_if_t *i) {
  return bw_shm_breaker_retry_in_ms(BW__BI(i));
}
static const char *bw__bi_name(const bw_breaker_if_t *i) {
  return bw_shm_breaker_name(BW__BI(i));
}
static void bw__bi_free(bw_breaker_if_t *i) {
  bw_shm_breaker_free(BW__BI(i));
}

static const bw_breaker_vtable_t bw__brk_if_vt = {
    "shm_breaker",   bw__bi_acquire, bw__bi_release, bw__bi_state,
    bw__bi_retry_in, bw__bi_name,    bw__bi_free};

bw_breaker_if_t *bw_shm_breaker_iface(bw_shm_breaker_t *b) {
  return b == NULL ? NULL : &b->biface;
}

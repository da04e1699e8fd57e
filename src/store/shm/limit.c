/* Shared-memory concurrency limit: max_concurrent slots, each a LEASE word in
 * the segment holding (start_ns + 1) of the call that holds it (0 = free).
 * A slot whose lease ended (start + lease_ms) is free again, so a worker
 * killed while holding slots gives them back after lease_ms; its late
 * release finds the lease over and answers BW_E_TIMEOUT. Each slot has its
 * own cache line; callers start their scan at different slots. */
#include <stdio.h>
#include <string.h>

#include "shm_internal.h"

#define BW__SLOT_WORDS 8u /* one slot per 64-byte line */
#define BW__MAX_MS (INT64_MAX / BW_NS_PER_MS / 4)

enum {
  BW__L_ADMITTED,
  BW__L_REJECTED,
  BW__L_SUCCESSES,
  BW__L_DROPPED,
  BW__L_IGNORED,
  BW__L_EXPIRED,
  BW__L_RECLAIMED,
  BW__L_COUNT
};

typedef struct bw__lim_s {
  bw__shm_obj_t hdr;
  uint32_t max; /* immutable */
  uint32_t reserved;
  int64_t lease_ms; /* immutable */
  BW__APART bw__shm_ctr_t ctr[BW__SHM_STRIPES];
  /* followed by max * BW__SLOT_WORDS words */
} bw__lim_t;

struct bw_shm_limit_s {
  bw_limit_t iface; /* first: bw_shm_limit_as_limit */
  bw__lim_t *s;
  _Atomic uint64_t *slots;
  uint32_t max;
  int64_t lease_ns;
  const bw_clock_t *clock;
  char name[BW_NAME_MAX + 1];
};

typedef struct bw__lim_init_s {
  uint32_t max;
  int64_t lease_ms;
} bw__lim_init_t;

void bw_shm_limit_config_init(bw_shm_limit_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = NULL;
  cfg->max_concurrent = 10;
  cfg->lease_ms = 30000;
  cfg->clock = NULL;
}

static void bw__lim_init(void *block, const void *arg) {
  bw__lim_t *s = block;
  const bw__lim_init_t *in = arg;
  s->max = in->max;
  s->lease_ms = in->lease_ms;
}

static int bw__lim_check(const void *block, const void *arg, const char *seg,
                         bw_error_t *err) {
  const bw__lim_t *s = block;
  const bw__lim_init_t *in = arg;
  if (s->max != in->max)
    return bw__shm_mismatch_u(err, "limit", seg, "max_concurrent", s->max,
                              in->max);
  if (s->lease_ms != in->lease_ms)
    return bw__shm_mismatch_i(err, "limit", seg, "lease_ms", s->lease_ms,
                              in->lease_ms);
  return BW_OK;
}

static const bw_limit_vtable_t bw__shm_lim_vt;

bw_shm_limit_t *bw_shm_limit_new(bw_shm_t *shm,
                                 const bw_shm_limit_config_t *cfg,
                                 bw_error_t *err) {
  bw_shm_limit_t *l;
  bw__lim_init_t in;
  void *blk;
  size_t size;
  if (shm == NULL) {
    bw_error_set(err, BW_E_INVAL, "shm", "shm (the segment) must not be NULL");
    return NULL;
  }
  if (cfg == NULL) {
    bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
    return NULL;
  }
  if (bw_name_check(cfg->name, "name", err) != BW_OK) return NULL;
  if (cfg->max_concurrent < 1 || cfg->max_concurrent > BW_SHM_LIMIT_MAX) {
    bw_error_set(err, BW_E_INVAL, "max_concurrent",
                 "max_concurrent must be in 1..%u (got %u)", BW_SHM_LIMIT_MAX,
                 cfg->max_concurrent);
    return NULL;
  }
  if (cfg->lease_ms < 1 || cfg->lease_ms > BW__MAX_MS) {
    bw_error_set(err, BW_E_INVAL, "lease_ms",
                 "lease_ms must be >= 1 (got %lld)", (long long)cfg->lease_ms);
    return NULL;
  }
  l = bw_calloc(1, sizeof(*l));
  if (l == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  in.max = cfg->max_concurrent;
  in.lease_ms = cfg->lease_ms;
  size = sizeof(bw__lim_t) + (size_t)in.max * BW__SLOT_WORDS * sizeof(uint64_t);
  if (bw__shm_object(shm, cfg->name, BW__SHM_KIND_LIMIT, size, bw__lim_init,
                     bw__lim_check, &in, &blk, err) != BW_OK) {
    bw_free(l);
    return NULL;
  }
  l->iface.vt = &bw__shm_lim_vt;
  l->s = blk;
  l->slots =
      (_Atomic uint64_t *)(void *)((unsigned char *)blk + sizeof(bw__lim_t));
  l->max = in.max;
  l->lease_ns = in.lease_ms * BW_NS_PER_MS;
  /* As budget.h: the coarse clock's 1-4 ms ticks are noise next to a
   * lease of a second or more, and it is the cheaper read (clock.h). */
  l->clock = cfg->clock != NULL      ? cfg->clock
             : cfg->lease_ms >= 1000 ? bw_clock_monotonic_coarse()
                                     : bw_clock_monotonic();
  snprintf(l->name, sizeof(l->name), "%s", cfg->name);
  bw_error_clear(err);
  return l;
}

void bw_shm_limit_free(bw_shm_limit_t *l) {
  bw_free(l);
}

const char *bw_shm_limit_name(const bw_shm_limit_t *l) {
  return l == NULL ? "" : l->name;
}

static inline void bw__lcount(bw_shm_limit_t *l, int which) {
  bw__shm_bump(l->s->ctr, which);
}

static inline _Atomic uint64_t *bw__slot(const bw_shm_limit_t *l, uint32_t i) {
  return &l->slots[(size_t)i * BW__SLOT_WORDS];
}

static inline bool bw__expired(const bw_shm_limit_t *l, uint64_t v,
                               int64_t now) {
  return now - (int64_t)(v - 1) >= l->lease_ns;
}

int bw_shm_limit_try_acquire(bw_shm_limit_t *l, bw_permit_t *p) {
  int64_t now;
  uint64_t mine;
  uint32_t start;
  if (l == NULL || p == NULL) return BW_E_INVAL;
  now = bw_clock_now(l->clock);
  mine = (uint64_t)now + 1;
  /* Threads start at different slots so they rarely race for one. */
  start = (uint32_t)((bw_stripe() * 7u) % l->max);
  for (uint32_t k = 0; k < l->max; k++) {
    uint32_t i = start + k < l->max ? start + k : start + k - l->max;
    _Atomic uint64_t *w = bw__slot(l, i);
    uint64_t v = BW__SHM_LOAD(*w);
    bool reclaim;
    if (v != 0 && !bw__expired(l, v, now)) continue;
    reclaim = v != 0;
    if (!atomic_compare_exchange_strong_explicit(
            w, &v, mine, memory_order_acq_rel, memory_order_relaxed))
      continue;
    if (reclaim) bw__lcount(l, BW__L_RECLAIMED);
    bw__lcount(l, BW__L_ADMITTED);
    bw_permit_init(p, now, BW_PERMIT_NORMAL);
    p->lease_slot = i;
    return BW_OK;
  }
  bw__lcount(l, BW__L_REJECTED);
  return BW_E_FULL;
}

int bw_shm_limit_release(bw_shm_limit_t *l, const bw_permit_t *p,
                         bw_limit_outcome_t outcome) {
  uint64_t expect;
  int64_t now;
  bool freed;
  if (l == NULL || p == NULL) return BW_E_INVAL;
  if ((unsigned)outcome > (unsigned)BW_LIMIT_IGNORED) return BW_E_INVAL;
  if (p->lease_slot >= l->max || p->start_ns < 0) return BW_E_INVAL;
  now = bw_clock_now(l->clock);
  expect = (uint64_t)p->start_ns + 1;
  freed = atomic_compare_exchange_strong_explicit(
      bw__slot(l, p->lease_slot), &expect, 0, memory_order_acq_rel,
      memory_order_relaxed);
  bw__lcount(l, outcome == BW_LIMIT_SUCCESS   ? BW__L_SUCCESSES
                : outcome == BW_LIMIT_DROPPED ? BW__L_DROPPED
                                              : BW__L_IGNORED);
  /* Not freed: the lease ended and another call took the slot over. */
  if (!freed || now - p->start_ns >= l->lease_ns) {
    bw__lcount(l, BW__L_EXPIRED);
    return BW_E_TIMEOUT;
  }
  return BW_OK;
}

static uint32_t bw__in_flight(const bw_shm_limit_t *l) {
  int64_t now = bw_clock_now(l->clock);
  uint32_t n = 0;
  for (uint32_t i = 0; i < l->max; i++) {
    uint64_t v = BW__SHM_LOAD(*bw__slot(l, i));
    if (v != 0 && !bw__expired(l, v, now)) n++;
  }
  return n;
}

void bw_shm_limit_stats(const bw_shm_limit_t *l, bw_shm_limit_stats_t *out) {
  uint64_t sum[BW__L_COUNT];
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (l == NULL) return;
  bw__shm_sum_all(l->s->ctr, sum, BW__L_COUNT);
  out->max_concurrent = l->max;
  out->in_flight = bw__in_flight(l);
  out->admitted = sum[BW__L_ADMITTED];
  out->rejected = sum[BW__L_REJECTED];
  out->successes = sum[BW__L_SUCCESSES];
  out->dropped = sum[BW__L_DROPPED];
  out->ignored = sum[BW__L_IGNORED];
  out->expired = sum[BW__L_EXPIRED];
  out->reclaimed = sum[BW__L_RECLAIMED];
}

/* ---- bw_limit_t ---------------------------------------------------------- */

static int bw__vt_acquire(bw_limit_t *l, bw_permit_t *p) {
  return bw_shm_limit_try_acquire((bw_shm_limit_t *)l, p);
}
static int bw__vt_release(bw_limit_t *l, const bw_permit_t *p,
                          bw_limit_outcome_t o) {
  return bw_shm_limit_release((bw_shm_limit_t *)l, p, o);
}
static uint32_t bw__vt_limit(const bw_limit_t *l) {
  return ((const bw_shm_limit_t *)l)->max;
}
static uint32_t bw__vt_in_flight(const bw_limit_t *l) {
  return bw__in_flight((const bw_shm_limit_t *)l);
}
static const char *bw__vt_name(const bw_limit_t *l) {
  return bw_shm_limit_name((const bw_shm_limit_t *)l);
}
static void bw__vt_free(bw_limit_t *l) {
  bw_shm_limit_free((bw_shm_limit_t *)l);
}

static const bw_limit_vtable_t bw__shm_lim_vt = {"shm_limit",
                                                 bw__vt_acquire,
                                                 bw__vt_release,
                                                 bw__vt_limit,
                                                 bw__vt_in_flight,
                                                 bw__vt_name,
                                                 bw__vt_free,
                                                 0,
                                                 NULL};

bw_limit_t *bw_shm_limit_as_limit(bw_shm_limit_t *l) {
  return l == NULL ? NULL : &l->iface;
}

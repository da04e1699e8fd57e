/* breakwater — shared-memory store: internal layout and helpers (not
 * installed).
 *
 * A segment is a header (magic, version, sizes, an allocation lease word and
 * a table of named objects) followed by object blocks, bump-allocated once
 * and never freed. Every block is position-independent: offsets, never
 * pointers, and only lock-free 64-bit atomics (no pthread mutex: a process
 * killed while holding one would wedge every other). Where mutual exclusion
 * is needed (allocating an object, a breaker transition) a LEASE word holds
 * the expiry time of the holder's claim: a holder that dies loses the claim
 * when it expires, and the next caller steals it. */
#ifndef BREAKWATER_SHM_INTERNAL_H
#define BREAKWATER_SHM_INTERNAL_H

#include <stdatomic.h>

#include "breakwater/ext.h"
#include "breakwater/shm.h"

#define BW__LIKELY(x) __builtin_expect(!!(x), 1)
#define BW__UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Data that two threads write sits BW_ALIGN_APART bytes apart. */
#define BW__APART __attribute__((aligned(BW_ALIGN_APART)))

/* a / d rounded toward negative infinity (C's / truncates toward 0). */
static inline int64_t bw__shm_floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  return (a % d != 0 && (a < 0) != (d < 0)) ? q - 1 : q;
}

#define BW__SHM_MAGIC UINT64_C(0x314d485357425742) /* "BWBWSHM1" */
#define BW__SHM_VERSION 1u
#define BW__SHM_OBJ_MAGIC UINT64_C(0x4a424f4d48535742) /* "BWSHMOBJ" */
#define BW__SHM_ALIGN 128u
#define BW__SHM_MIN_SIZE ((size_t)64 * 1024)
#define BW__SHM_MAX_SIZE ((size_t)1 << 30)
#define BW__SHM_DEFAULT_SIZE ((size_t)1 << 20)
/* Counter stripes in a block: a thread bumps stripe (its core stripe mod
 * this), with an atomic add (other processes share the stripe index). */
#define BW__SHM_STRIPES 16u

#define BW__SHM_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define BW__SHM_ADD(x, n) \
  atomic_fetch_add_explicit(&(x), (n), memory_order_relaxed)

enum {
  BW__SHM_KIND_BREAKER = 1,
  BW__SHM_KIND_BUDGET = 2,
  BW__SHM_KIND_LIMIT = 3
};

typedef struct bw__shm_entry_s {
  uint32_t kind;
  uint32_t reserved;
  uint64_t offset; /* from the segment base */
  uint64_t size;
  char name[BW_NAME_MAX + 1];
} bw__shm_entry_t;

typedef struct bw__shm_header_s {
  _Atomic uint64_t magic; /* written last by the creator */
  uint32_t version;
  uint32_t header_size;
  uint64_t size;
  uint32_t max_objects;
  uint32_t reserved;
  _Atomic int64_t lock;   /* allocation lease: expiry (CLOCK_MONOTONIC ns) */
  _Atomic uint64_t used;  /* bump offset */
  _Atomic uint32_t count; /* entries published */
  uint32_t reserved2;
  bw__shm_entry_t entries[BW_SHM_MAX_OBJECTS];
} bw__shm_header_t;

/* Every object block starts with this. */
typedef struct bw__shm_obj_s {
  uint64_t magic;
  uint32_t kind;
  uint32_t reserved;
} bw__shm_obj_t;

struct bw_shm_s {
  unsigned char *base;
  size_t size;
  int fd; /* the segment, kept open to fstat it again (object creation) */
  bool created;
  char name[BW_NAME_MAX + 2];
};

/* Fills a fresh block (zeroed already) before it is published. */
typedef void (*bw__shm_init_fn)(void *block, const void *arg);
/* Compares a published block's configuration with `arg`: BW_OK or an error
 * naming the differing field. */
typedef int (*bw__shm_check_fn)(const void *block, const void *arg,
                                const char *segment, bw_error_t *err);

/* A check_fn's answer when a published object's `field` differs from this
 * process's configuration: BW_E_INVAL naming the field, with the two values
 * as text ("<kind> in shared-memory segment <seg> was created with <field>
 * <was>; this configuration has <now> (every process must use the same
 * configuration)"). The _u, _i and _g forms format the values. */
int bw__shm_mismatch(bw_error_t *err, const char *kind, const char *seg,
                     const char *field, const char *was, const char *now);
int bw__shm_mismatch_u(bw_error_t *err, const char *kind, const char *seg,
                       const char *field, uint64_t was, uint64_t now);
int bw__shm_mismatch_i(bw_error_t *err, const char *kind, const char *seg,
                       const char *field, int64_t was, int64_t now);
int bw__shm_mismatch_g(bw_error_t *err, const char *kind, const char *seg,
                       const char *field, double was, double now);

/* Finds object `name` of `kind` (checking it) or creates it with `size`
 * bytes (init). *out is the block. BW_OK, BW_E_INVAL (another kind, a
 * differing configuration, a corrupt entry), BW_E_LIMIT (segment full). */
int bw__shm_object(bw_shm_t *shm, const char *name, uint32_t kind, size_t size,
                   bw__shm_init_fn init, bw__shm_check_fn check,
                   const void *arg, void **out, bw_error_t *err);

/* Lease words: 0 = free, otherwise the holder's expiry. Tries `tries` times
 * (yielding between tries); steals an expired lease. Returns the value to
 * pass to bw__shm_lease_unlock, or 0 when not taken. */
int64_t bw__shm_lease_lock(_Atomic int64_t *word, const bw_clock_t *clock,
                           int64_t lease_ns, int tries);
void bw__shm_lease_unlock(_Atomic int64_t *word, int64_t mine);

/* The stripe for this thread's counters in a block. The core's stripe is
 * per thread but is inherited across fork(), so every pre-fork worker would
 * land on its parent's stripe: the stripe here also mixes in the process id,
 * recomputed in a child after a fork (a pthread_atfork handler bumps a
 * process-wide epoch that the per-thread cache is checked against). */
extern _Atomic unsigned bw__shm_fork_epoch;
extern _Thread_local unsigned bw__shm_tls_epoch;
extern _Thread_local unsigned bw__shm_tls_stripe;
unsigned bw__shm_stripe_slow(void);
static inline unsigned bw__shm_stripe(void) {
  if (BW__LIKELY(
          bw__shm_tls_epoch ==
          atomic_load_explicit(&bw__shm_fork_epoch, memory_order_relaxed)))
    return bw__shm_tls_stripe;
  return bw__shm_stripe_slow();
}

/* One process's stripe of an object's counters in the segment (a line pair
 * of its own: processes do not share a line). */
typedef struct bw__shm_ctr_s {
  _Atomic uint64_t c[BW__SHM_ALIGN / 8];
} bw__shm_ctr_t;

/* Adds 1 to counter `which` on this process's stripe of ctr[]. */
static inline void bw__shm_bump(bw__shm_ctr_t *ctr, int which) {
  BW__SHM_ADD(ctr[bw__shm_stripe()].c[which], 1);
}

/* Counters 0..n-1 summed over the stripes into sum[] (zeroed first). */
static inline void bw__shm_sum_all(const bw__shm_ctr_t *ctr, uint64_t *sum,
                                   int n) {
  for (int k = 0; k < n; k++)
    sum[k] = 0;
  for (unsigned i = 0; i < BW__SHM_STRIPES; i++)
    for (int k = 0; k < n; k++)
      sum[k] += BW__SHM_LOAD(ctr[i].c[k]);
}

static inline size_t bw__shm_round(size_t n) {
  return (n + BW__SHM_ALIGN - 1) / BW__SHM_ALIGN * BW__SHM_ALIGN;
}

#endif /* BREAKWATER_SHM_INTERNAL_H */

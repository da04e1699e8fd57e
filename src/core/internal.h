/* breakwater — internal helpers shared by the core (not installed). */
#ifndef BREAKWATER_INTERNAL_H
#define BREAKWATER_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>

#include "breakwater/breakwater.h"
#include "breakwater/ext.h"

#define BW__CACHELINE 64
#define BW__ALIGNED __attribute__((aligned(BW__CACHELINE)))
/* Two lines: x86 prefetchers fetch adjacent lines in pairs, so data that two
 * threads write must sit 128 bytes apart, not 64. */
#define BW__PAIR 128
#define BW__PAIR_ALIGNED __attribute__((aligned(BW__PAIR)))
#define BW__LIKELY(x) __builtin_expect(!!(x), 1)
#define BW__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BW__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define BW__NOINLINE __attribute__((noinline))
#define BW__COLD __attribute__((noinline, cold))

/* Counter stripes: counters that every call bumps are split so that two
 * cores never fight over one cache line. The first BW__EXCL_STRIPES stripes
 * are owned by one thread at a time (claimed on first use, given back when
 * the thread exits), so their owner bumps them with a plain load and store —
 * no locked instruction. Threads beyond that share the last
 * BW__SHARED_STRIPES stripes and bump them with atomic read-modify-writes. */
#define BW__EXCL_STRIPES BW_STRIPES_EXCLUSIVE
#define BW__SHARED_STRIPES BW_STRIPES_SHARED
#define BW__STRIPES BW_STRIPES

/* This thread's stripe, in [0, BW__STRIPES). */
unsigned bw__stripe_slow(void);
extern _Thread_local unsigned bw__stripe_tls
    __attribute__((tls_model("initial-exec")));
static inline unsigned bw__stripe(void) {
  unsigned s = bw__stripe_tls;
  if (BW__UNLIKELY(s == 0)) s = bw__stripe_slow();
  return s - 1;
}

/* The calling thread's current deadline (deadline.c), read inline by hot
 * paths; bw_deadline_current() is the public way. */
extern _Thread_local bw_deadline_t bw__current
    __attribute__((tls_model("initial-exec")));

/* ---- clocks (clock.c) ------------------------------------------------------
 * bw__clock_now reads the built-in monotonic clocks directly (no call through
 * their function pointers), any other clock as bw_clock_now does. */
extern const bw_clock_t bw__clock_mono;
extern const bw_clock_t bw__clock_coarse;
/* The in-process breaker's interface table (breaker.c): the pipeline calls
 * such a breaker directly instead of through two tables. */
extern const bw_breaker_vtable_t bw__breaker_vt;
#ifdef CLOCK_MONOTONIC_COARSE
#define BW__COARSE_ID CLOCK_MONOTONIC_COARSE
#else
#define BW__COARSE_ID CLOCK_MONOTONIC
#endif

static inline int64_t bw__read_clock(clockid_t id) {
  struct timespec ts = {0, 0};
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * BW_NS_PER_S + ts.tv_nsec;
}

static inline int64_t bw__clock_now(const bw_clock_t *c) {
  if (c == &bw__clock_coarse) return bw__read_clock(BW__COARSE_ID);
  if (c == &bw__clock_mono) return bw__read_clock(CLOCK_MONOTONIC);
  return c->now_ns(c);
}

/* A relaxed load of an atomic field (counters and hints read on their own). */
#define BW__LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* a / d rounded toward negative infinity (C's / truncates toward 0). */
static inline int64_t bw__floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  return (a % d != 0 && (a < 0) != (d < 0)) ? q - 1 : q;
}

/* Monotone updates without a lock (relaxed): raise *a to v if it is lower,
 * lower it to v if it is higher. */
static inline void bw__raise_u32(_Atomic uint32_t *a, uint32_t v) {
  uint32_t cur = atomic_load_explicit(a, memory_order_relaxed);
  while (v > cur &&
         !atomic_compare_exchange_weak_explicit(
             a, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
  }
}
static inline void bw__lower_u32(_Atomic uint32_t *a, uint32_t v) {
  uint32_t cur = atomic_load_explicit(a, memory_order_relaxed);
  while (v < cur &&
         !atomic_compare_exchange_weak_explicit(
             a, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
  }
}
/* Raises an object's stripe high-water mark (1 + the highest stripe that
 * counted there) to include stripe s, with release: a reader that loads the
 * mark with acquire sees what the stripe counted before it was raised. */
static inline void bw__raise_stripes(_Atomic unsigned *hwm, unsigned s) {
  unsigned n = atomic_load_explicit(hwm, memory_order_relaxed);
  while (n <= s &&
         !atomic_compare_exchange_weak_explicit(
             hwm, &n, s + 1, memory_order_release, memory_order_relaxed)) {
  }
}

/* Adds n to a striped counter of `stripe`. */
static inline void bw__bump_n(_Atomic uint64_t *c, unsigned stripe,
                              uint64_t n) {
  if (BW__LIKELY(stripe < BW__EXCL_STRIPES))
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
  else
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}
#define bw__bump(c, stripe) bw__bump_n((c), (stripe), 1)

/* bw_retry_next (retry.h) for an attempt that a limit inside the caller's
 * retry gave up on (an adaptive limiter's stuck_timeout, the pipeline's
 * only caller): no answer came, so there is no hint, and the limit that
 * cut it paces the retry by its slot, so there is no backoff either
 * (*delay_ms = 0). Every other check (attempts, elapsed time,
 * idempotency, deadline, budget) and the events are bw_retry_next's. */
int bw__retry_next_paced(bw_retry_t *r, bw_verdict_t v, int64_t now_ns,
                         int64_t *delay_ms);

#endif /* BREAKWATER_INTERNAL_H */

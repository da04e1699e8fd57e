/* Clocks: monotonic (precise and coarse), realtime, and manual for tests. */
#include <time.h>

#include "internal.h"

static int64_t bw__read(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * BW_NS_PER_S + ts.tv_nsec;
}

static int64_t bw__mono_now(const bw_clock_t *c) {
  (void)c;
  return bw__read(CLOCK_MONOTONIC);
}

static int64_t bw__coarse_now(const bw_clock_t *c) {
  (void)c;
#ifdef CLOCK_MONOTONIC_COARSE
  return bw__read(CLOCK_MONOTONIC_COARSE);
#else
  return bw__read(CLOCK_MONOTONIC);
#endif
}

static int64_t bw__real_now(const bw_clock_t *c) {
  (void)c;
  return bw__read(CLOCK_REALTIME);
}

static const bw_clock_t bw__mono = {bw__mono_now, NULL};
static const bw_clock_t bw__coarse = {bw__coarse_now, NULL};
static const bw_clock_t bw__real = {bw__real_now, NULL};

const bw_clock_t *bw_clock_monotonic(void) {
  return &bw__mono;
}
const bw_clock_t *bw_clock_monotonic_coarse(void) {
  return &bw__coarse;
}
const bw_clock_t *bw_clock_realtime(void) {
  return &bw__real;
}

/* A manual clock is a bw_clock_t followed by its atomic reading. */
typedef struct bw__manual_s {
  bw_clock_t base;
  _Atomic int64_t now;
} bw__manual_t;

static int64_t bw__manual_now(const bw_clock_t *c) {
  const bw__manual_t *m = (const bw__manual_t *)c;
  return atomic_load_explicit(&((bw__manual_t *)m)->now, memory_order_acquire);
}

bw_clock_t *bw_clock_manual_new(int64_t start_ns) {
  bw__manual_t *m = bw__malloc(sizeof(*m));
  if (m == NULL) return NULL;
  m->base.now_ns = bw__manual_now;
  m->base.data = NULL;
  atomic_init(&m->now, start_ns);
  return &m->base;
}

void bw_clock_manual_set(bw_clock_t *c, int64_t now_ns) {
  bw__manual_t *m = (bw__manual_t *)c;
  int64_t cur;
  if (c == NULL || c->now_ns != bw__manual_now) return;
  cur = atomic_load_explicit(&m->now, memory_order_relaxed);
  while (now_ns > cur && !atomic_compare_exchange_weak_explicit(
                             &m->now, &cur, now_ns, memory_order_acq_rel,
                             memory_order_relaxed)) {
  }
}

void bw_clock_manual_advance(bw_clock_t *c, int64_t delta_ns) {
  bw__manual_t *m = (bw__manual_t *)c;
  if (c == NULL || c->now_ns != bw__manual_now || delta_ns <= 0) return;
  atomic_fetch_add_explicit(&m->now, delta_ns, memory_order_acq_rel);
}

void bw_clock_free(bw_clock_t *c) {
  if (c == NULL || c->now_ns != bw__manual_now) return;
  bw__free(c);
}

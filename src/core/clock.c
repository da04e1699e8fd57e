/* Clocks: monotonic (precise and coarse), realtime, and manual for tests.
 * The built-in clocks read libc's clock_gettime; bw__clock_now (internal.h)
 * reads them without going through their function pointers. */
#include <string.h>
#include <time.h>

#include "internal.h"

static int64_t bw__mono_now(const bw_clock_t *c) {
  (void)c;
  return bw__read_clock(CLOCK_MONOTONIC);
}

static int64_t bw__coarse_now(const bw_clock_t *c) {
  (void)c;
  return bw__read_clock(BW__COARSE_ID);
}

static int64_t bw__real_now(const bw_clock_t *c) {
  (void)c;
  return bw__read_clock(CLOCK_REALTIME);
}

const bw_clock_t bw__clock_mono = {bw__mono_now, NULL};
const bw_clock_t bw__clock_coarse = {bw__coarse_now, NULL};
static const bw_clock_t bw__real = {bw__real_now, NULL};

const bw_clock_t *bw_clock_monotonic(void) {
  return &bw__clock_mono;
}
const bw_clock_t *bw_clock_monotonic_coarse(void) {
  return &bw__clock_coarse;
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
  bw__manual_t *m = bw_malloc(sizeof(*m));
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
  bw_free(c);
}

/* Clocks: monotonic (precise and coarse), realtime, and manual for tests.
 *
 * The built-in clocks read through bw__gettime: libc's clock_gettime, or,
 * where the vDSO exports it, the vDSO's own __vdso_clock_gettime, found once
 * when the library loads. libc's wrapper costs about as much as the coarse
 * read itself (3.1 ns against 2.35 ns here, BENCHMARKS.md), and the core's
 * hot paths read the coarse clock twice per call; bw__clock_now
 * (internal.h) also skips the function pointer for the built-in clocks. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* RTLD_NOLOAD */
#endif
#include <string.h>
#include <time.h>

#include "internal.h"

/* x86-64 only: there the vDSO's clock_gettime takes the same struct
 * timespec as libc's (a 32-bit target with a 64-bit time_t would hand the
 * vDSO's 32-bit call a 64-bit struct), and that is where it was measured. */
#if defined(__linux__) && defined(__GLIBC__) && defined(__x86_64__) && \
    !defined(__ILP32__)
#include <dlfcn.h>
#ifdef RTLD_NOLOAD
#define BW__HAVE_VDSO 1
#endif
#endif

bw__gettime_fn bw__gettime = clock_gettime;

#ifdef BW__HAVE_VDSO
/* Before main (or while the shared library loads), so no thread reads the
 * pointer while it is written. Where the vDSO or its symbol is missing (a
 * static binary, another libc), libc's clock_gettime stays. */
__attribute__((constructor)) static void bw__clock_find_vdso(void) {
  void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  void *f;
  if (h == NULL) return;
  f = dlsym(h, "__vdso_clock_gettime");
  if (f != NULL) {
    struct timespec a = {0, 0}, v = {0, 0}, z = {0, 0};
    bw__gettime_fn fn;
    /* A function pointer from dlsym's object pointer: POSIX guarantees the
     * conversion works; ISO C does not spell it, hence the memcpy. */
    memcpy(&fn, &f, sizeof(fn));
    /* Used only if it reads what libc reads (within a second, in order). */
    if (clock_gettime(CLOCK_MONOTONIC, &a) == 0 &&
        fn(CLOCK_MONOTONIC, &v) == 0 &&
        clock_gettime(CLOCK_MONOTONIC, &z) == 0) {
      int64_t ta = (int64_t)a.tv_sec * BW_NS_PER_S + a.tv_nsec;
      int64_t tv = (int64_t)v.tv_sec * BW_NS_PER_S + v.tv_nsec;
      int64_t tz = (int64_t)z.tv_sec * BW_NS_PER_S + z.tv_nsec;
      if (tv >= ta && tv <= tz && tz - ta < BW_NS_PER_S) bw__gettime = fn;
    }
  }
  dlclose(h);
}
#endif

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

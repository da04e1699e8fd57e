/* bench_util.h — shared by the bench programs (header-only): a wall-time
 * reading, the median and best of a set of runs, and allocation counting
 * through the library's allocator hooks (install it before creating the
 * objects under test). */
#ifndef BW_BENCH_UTIL_H
#define BW_BENCH_UTIL_H

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "breakwater/common.h"

static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double_(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median of the runs (sorts v); *best (if not NULL) gets the fastest. This
 * machine's vCPUs vary (a run on a slow moment can take twice as long), so
 * benches print both. */
static inline double bench_median(double *v, int n, double *best) {
  qsort(v, (size_t)n, sizeof(double), bench_cmp_double_);
  if (best != NULL) *best = v[0];
  return v[n / 2];
}

static atomic_ullong bench_allocs_;
static inline void *bench_malloc_(size_t n) {
  atomic_fetch_add(&bench_allocs_, 1);
  return malloc(n);
}
static inline void *bench_realloc_(void *p, size_t n) {
  atomic_fetch_add(&bench_allocs_, 1);
  return realloc(p, n);
}
static inline void *bench_calloc_(size_t c, size_t n) {
  atomic_fetch_add(&bench_allocs_, 1);
  return calloc(c, n);
}
/* Counts every allocation breakwater makes from now on. */
static inline int bench_count_allocations(void) {
  return bw_replace_allocator(bench_malloc_, bench_realloc_, bench_calloc_,
                              free);
}
/* Allocations counted so far. */
static inline unsigned long long bench_allocs(void) {
  return atomic_load(&bench_allocs_);
}

#endif /* BW_BENCH_UTIL_H */

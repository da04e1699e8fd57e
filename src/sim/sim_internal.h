/* breakwater — simulator: helpers shared by its models (not installed). */
#ifndef BREAKWATER_SIM_INTERNAL_H
#define BREAKWATER_SIM_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>

/* The latency summary both the client (bw_sim_client_results) and the
 * hedge lab (bw_sim_hedge_run) report over their requests' latencies. */
typedef struct {
  int64_t p50_ns, p95_ns, p99_ns, max_ns;
} bw__sim_latency_t;

static inline int bw__sim_cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least pct% of values <= it (0
 * when there are none); v is sorted. */
static inline int64_t bw__sim_percentile(const int64_t *v, uint64_t n,
                                         unsigned pct) {
  uint64_t rank;
  if (n == 0) return 0;
  rank = (pct * n + 99) / 100;
  if (rank < 1) rank = 1;
  return v[rank - 1];
}

/* Sorts lat[0, n) in place and summarizes it (all zero when n is 0). */
static inline bw__sim_latency_t bw__sim_latency_summary(int64_t *lat,
                                                        uint64_t n) {
  bw__sim_latency_t s;
  if (n > 0) qsort(lat, (size_t)n, sizeof(int64_t), bw__sim_cmp_i64);
  s.p50_ns = bw__sim_percentile(lat, n, 50);
  s.p95_ns = bw__sim_percentile(lat, n, 95);
  s.p99_ns = bw__sim_percentile(lat, n, 99);
  s.max_ns = n > 0 ? lat[n - 1] : 0;
  return s;
}

#endif

/* bench_util.h — shared by the bench programs (header-only): a wall-time
 * reading, the median and best of a set of runs, and allocation counting
 * through the library's allocator hooks (install it before creating the
 * objects under test). */
#ifndef BW_BENCH_UTIL_H
#define BW_BENCH_UTIL_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakwater/clock.h"
#include "breakwater/common.h"

static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ns per read of clock c over n reads through bw_clock_now: the floor the
 * benches print next to the rows that read a clock. */
static inline double bench_clock_ns(const bw_clock_t *c, long long n) {
  volatile int64_t sink = 0;
  double t = bench_now_s();
  for (long long i = 0; i < n; i++)
    sink += bw_clock_now(c);
  (void)sink;
  return (bench_now_s() - t) * 1e9 / (double)n;
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

/* The flags every microbenchmark takes: --n N (>= 1000), --reps R (1..15),
 * --peers, --quick (n 2,000,000, 3 reps). *n and *reps hold the defaults on
 * entry. Returns 0, or 2 after printing the error (the exit status). */
static inline int bench_parse_flags(int argc, char **argv, const char *prog,
                                    long long *n, int *reps, int *peers,
                                    int *quick) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      *n = atoll(argv[++i]);
      if (*n < 1000) {
        fprintf(stderr, "%s: --n must be >= 1000\n", prog);
        return 2;
      }
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      *reps = atoi(argv[++i]);
      if (*reps < 1 || *reps > 15) {
        fprintf(stderr, "%s: --reps must be in 1..15\n", prog);
        return 2;
      }
    } else if (strcmp(argv[i], "--peers") == 0) {
      *peers = 1;
    } else if (strcmp(argv[i], "--quick") == 0) {
      *quick = 1;
      *n = 2000000;
      *reps = 3;
    } else {
      fprintf(stderr,
              "%s: unknown flag '%s' (flags: --n N, --reps R, --peers, "
              "--quick)\n",
              prog, argv[i]);
      return 2;
    }
  }
  return 0;
}

/* Runs bench/peers/run.sh --only <group> (source_dir: the checkout) and
 * prints a table of the peers' ns per call against ours, under `title`. */
static inline void bench_run_peers(const char *source_dir, const char *group,
                                   const char *title, const char *ours_label,
                                   double ours, int quick) {
  char cmd[1024], line[512];
  FILE *fp;
  snprintf(cmd, sizeof(cmd), "bash '%s/bench/peers/run.sh' --only %s%s",
           source_dir, group, quick ? " --quick" : "");
  fflush(stdout);
  fp = popen(cmd, "r");
  if (fp == NULL) {
    fprintf(stderr, "bench: cannot run %s\n", cmd);
    return;
  }
  printf("\n## Peers: %s\n\n", title);
  printf("| library | ns per call | ratio to breakwater |\n|---|---:|---:|\n");
  printf("| %s | %.1f | 1 |\n", ours_label, ours);
  while (fgets(line, sizeof(line), fp) != NULL) {
    char name[128];
    double ns;
    long long cnt;
    if (sscanf(line, "peer\t%127s\t%lf\t%lld", name, &ns, &cnt) == 3)
      printf("| %s (n=%lld) | %.1f | %.0f |\n", name, cnt, ns, ns / ours);
  }
  if (pclose(fp) != 0) fprintf(stderr, "bench: the peers script failed\n");
}

#endif /* BW_BENCH_UTIL_H */

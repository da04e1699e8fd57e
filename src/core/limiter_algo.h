/* breakwater — the adaptive limiter's algorithms, behind one private
 * interface (not installed). limiter.c enforces the limit (permits, counts,
 * guards, reports); an algorithm only turns samples into a new estimate.
 * Its update runs under the limiter's lock, one at a time, so its state is
 * plain data. One file each: limiter_aimd.c, limiter_gradient2.c,
 * limiter_vegas.c. */
#ifndef BREAKWATER_LIMITER_ALGO_H
#define BREAKWATER_LIMITER_ALGO_H

#include <stdbool.h>
#include <stdint.h>

#include "breakwater/limiter.h"

/* One release, as an algorithm sees it. */
typedef struct bw__lim_sample_s {
  double est;          /* the estimate in force (AIMD: the limit) */
  uint32_t limit;      /* the whole-number limit in force */
  uint32_t limit_then; /* the limit in force when the call was admitted */
  uint32_t inflight;   /* in flight at acquire, this call included (a permit
                          filled elsewhere counts as saturated) */
  /* A drop (DROPPED, TIMED_OUT, or AIMD's slow success) that starts a new
   * congestion event: drops of calls admitted before the last decrease
   * reach no algorithm. */
  bool drop;
  /* A stuck probe (drop is set too): the limit is cut to cut_to, the
   * level the dependency was last seen to serve, rather than backed off by
   * a ratio; slow start ends. */
  bool stuck;
  double cut_to;
  int64_t start_ns; /* the permit's start; BW_LIMITER_UNTIMED if not timed */
  int64_t rtt_ns;   /* a timed success's round trip; 0 otherwise */
  int64_t now_ns;   /* the release's clock reading; INT64_MIN if not read */
} bw__lim_sample_t;

typedef struct bw__lim_algo_s {
  const char *name;
  /* Successes that were not timed are samples too (AIMD grows on them);
   * an RTT-driven algorithm skips them, and they take no lock. */
  bool untimed_successes;
  /* The state for a validated configuration; NULL when out of memory. */
  void *(*init)(const bw_limiter_config_t *cfg);
  /* The estimate after sample s, in [min_limit, max_limit] (s->est when
   * nothing moves). The limiter holds growth to the guards' cap
   * (bw__growth_cap). A success that decreases the estimate on its own
   * congestion signal (Gradient2's slow RTT) sets *congestion: the decrease
   * is then applied once per congestion event, as a drop's is. */
  double (*update)(void *state, const bw__lim_sample_t *s, bool *congestion);
  /* Fills the stats fields the algorithm owns (long_rtt_ns, min_rtt_ns);
   * NULL for none. */
  void (*stats)(const void *state, bw_limiter_stats_t *out);
  void (*free)(void *state);
} bw__lim_algo_t;

static inline double bw__lim_clamp(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

extern const bw__lim_algo_t bw__lim_aimd;
extern const bw__lim_algo_t bw__lim_gradient2;
extern const bw__lim_algo_t bw__lim_vegas;

#endif /* BREAKWATER_LIMITER_ALGO_H */

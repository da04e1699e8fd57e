/* Adaptive limiter: Gradient2 (docs/limiter.md, "Gradient2").
 *
 * Netflix's Gradient2: the ratio of a long-term RTT average to the sample's
 * RTT, times a tolerance, clamped to [0.5, 1], scales the estimate, plus a
 * queue allowance, smoothed. A drop multiplies the estimate by
 * backoff_ratio (Netflix's version ignores drops). */

#include <math.h>

#include "internal.h"
#include "limiter_algo.h"

typedef struct bw__g2_s {
  double min, max;
  double backoff;
  double tolerance;
  double smoothing;
  double factor; /* 2 / (long_window + 1) */
  double queue;
  uint32_t warmup;
  uint32_t warm;   /* warmup samples taken (up to warmup) */
  double long_sum; /* their sum */
  double long_rtt; /* the long-term average, ns; 0 before any sample */
} bw__g2_t;

static void *bw__g2_init(const bw_limiter_config_t *cfg) {
  bw__g2_t *g = bw_calloc(1, sizeof(*g));
  if (g == NULL) return NULL;
  g->min = (double)cfg->min_limit;
  g->max = (double)cfg->max_limit;
  g->backoff = cfg->backoff_ratio;
  g->tolerance = cfg->gradient2_tolerance;
  g->smoothing = cfg->gradient2_smoothing;
  g->factor = 2.0 / ((double)cfg->gradient2_long_window + 1.0);
  g->queue = (double)cfg->gradient2_queue_size;
  g->warmup = cfg->gradient2_warmup;
  return g;
}

/* Folds the RTT `shortr` into the long-term average and returns the ratio
 * long / short the sample decides on (before the pull-down below). The
 * first `warmup` samples set a plain mean, then an exponential average. */
static double bw__g2_long(bw__g2_t *g, double shortr) {
  double nl, ratio;
  if (g->warm < g->warmup) {
    g->long_sum += shortr;
    nl = g->long_sum / (double)(g->warm + 1);
    g->warm++;
  } else {
    nl = g->long_rtt * (1.0 - g->factor) + shortr * g->factor;
  }
  ratio = nl / shortr;
  /* After a long spell of high latency the average lags far behind a
   * recovered RTT: pull it down faster than the average alone would. */
  if (ratio > 2.0) nl *= 0.95;
  g->long_rtt = nl;
  return ratio;
}

static double bw__g2_update(void *state, const bw__lim_sample_t *s,
                            bool *congestion) {
  bw__g2_t *g = state;
  double est = s->est, ratio, gradient, next;
  if (s->stuck) return fmax(g->min, fmin(est, s->cut_to));
  if (s->drop) return fmax(g->min, est * g->backoff);
  ratio = bw__g2_long(g, s->rtt_ns > 0 ? (double)s->rtt_ns : 1.0);
  if ((double)s->inflight < est / 2.0) return est; /* app-limited */
  gradient = bw__lim_clamp(g->tolerance * ratio, 0.5, 1.0);
  next = est * gradient + g->queue;
  next = est * (1.0 - g->smoothing) + next * g->smoothing;
  /* A decrease, like a drop's, once per congestion event. */
  if (next < est) *congestion = true;
  return bw__lim_clamp(next, g->min, g->max);
}

static void bw__g2_stats(const void *state, bw_limiter_stats_t *out) {
  const bw__g2_t *g = state;
  /* Rounded to the nearest ns (the average is positive). */
  out->long_rtt_ns = (int64_t)(g->long_rtt + 0.5);
}

static void bw__g2_free(void *state) {
  bw_free(state);
}

const bw__lim_algo_t bw__lim_gradient2 = {
    "gradient2", false, bw__g2_init, bw__g2_update, bw__g2_stats, bw__g2_free};

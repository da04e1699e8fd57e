/* Adaptive limiter: Vegas, one decision per round trip (docs/limiter.md,
 * "Vegas").
 *
 * A round ends with the first success that was sent after it began (its
 * start_ns later than the round's start: with a coarse clock, a call sent
 * in the round's first tick may have left before it). Every other timed
 * success folds its RTT into the round's minimum, and marks the round busy
 * if it was admitted at in_flight * 2 >= the limit then; the success that
 * ends the round takes the round's figures with its own and decides, on
 * the round's smallest RTT (TCP Vegas's filter for latency jitter). */

#include <math.h>

#include "internal.h"
#include "limiter_algo.h"

typedef struct bw__vegas_s {
  double min, max;
  double backoff;
  double alpha, beta;
  double smoothing;
  uint32_t probe;   /* re-learn the no-load RTT every probe x limit samples */
  bool slow_start;  /* until the first decrease */
  uint64_t samples; /* timed successes */
  uint64_t probe_base; /* samples at the last baseline */
  int64_t min_rtt;     /* the no-load RTT; 0 before any */
  int64_t round_start; /* the current round began at */
  int64_t round_min;   /* the round's smallest RTT; INT64_MAX for none */
  bool round_busy;     /* a success of the round was not app-limited */
  /* max(1, log10(lg_floor)), cached: log10 costs more than the rest of a
   * decision, so it is computed again only when floor(estimate) moved. */
  double lg_floor;
  double lg;
} bw__vegas_t;

static void *bw__vegas_init(const bw_limiter_config_t *cfg) {
  bw__vegas_t *v = bw_calloc(1, sizeof(*v));
  if (v == NULL) return NULL;
  v->min = (double)cfg->min_limit;
  v->max = (double)cfg->max_limit;
  v->backoff = cfg->backoff_ratio;
  v->alpha = cfg->vegas_alpha;
  v->beta = cfg->vegas_beta;
  v->smoothing = cfg->vegas_smoothing;
  v->probe = cfg->vegas_probe_multiplier;
  v->slow_start = true;
  v->round_start = INT64_MIN; /* the first success ends round 0 */
  v->round_min = INT64_MAX;
  v->lg_floor = -1.0; /* no limit is negative: not cached */
  return v;
}

static double bw__vegas_lg(bw__vegas_t *v, double est) {
  double fl = floor(est);
  if (fl != v->lg_floor) {
    v->lg_floor = fl;
    v->lg = fmax(1.0, log10(fl));
  }
  return v->lg;
}

/* Decides at the end of a round, on its smallest RTT `rmin`. */
static double bw__vegas_decide(bw__vegas_t *v, double est, int64_t rmin,
                               bool busy) {
  double lg, queue, next;
  /* The no-load RTT only ever falls; if the dependency got slower for
   * good, every sample would read as queueing. So every so often the next
   * round's RTT becomes the new baseline (Netflix probes the same way, with
   * jitter across instances; here it is deterministic). */
  if (v->probe > 0 &&
      (double)(v->samples - v->probe_base) > (double)v->probe * floor(est)) {
    v->probe_base = v->samples;
    v->min_rtt = rmin;
    return est;
  }
  /* A new no-load RTT: the baseline moved, this round decides nothing. */
  if (v->min_rtt == 0 || rmin < v->min_rtt) {
    v->min_rtt = rmin;
    return est;
  }
  if (!busy) return est; /* app-limited */
  lg = bw__vegas_lg(v, est);
  queue = ceil(est * (1.0 - (double)v->min_rtt / (double)rmin));
  if (queue < v->alpha * lg && v->slow_start)
    next = est * 2.0; /* slow start, until the first decrease */
  else if (queue <= lg)
    next = est + v->beta * lg; /* (almost) no queue: grow fast */
  else if (queue < v->alpha * lg)
    next = est + lg;
  else if (queue > v->beta * lg) {
    v->slow_start = false;
    next = est - lg;
  } else
    return est;
  next = bw__lim_clamp(next, v->min, v->max);
  return est * (1.0 - v->smoothing) + next * v->smoothing;
}

static double bw__vegas_update(void *state, const bw__lim_sample_t *s,
                               bool *congestion) {
  bw__vegas_t *v = state;
  /* Admitted at in_flight * 2 >= the limit in force then. */
  bool busy = (uint64_t)s->inflight * 2 >= s->limit_then;
  int64_t rmin;
  (void)congestion; /* a drop is its only congestion event */
  if (s->stuck) {   /* cut to the level last served, slow start over */
    v->slow_start = false;
    return fmax(v->min, fmin(s->est, s->cut_to));
  }
  if (s->drop) {
    /* TCP Vegas falls back to Reno on a loss: back off, end slow start. */
    v->slow_start = false;
    return fmax(v->min, s->est * v->backoff);
  }
  v->samples++;
  if (s->start_ns <= v->round_start) { /* sent before the round began */
    if (s->rtt_ns < v->round_min) v->round_min = s->rtt_ns;
    if (busy) v->round_busy = true;
    return s->est;
  }
  /* One round trip has passed: this success ends the round. */
  rmin = s->rtt_ns < v->round_min ? s->rtt_ns : v->round_min;
  busy = busy || v->round_busy;
  v->round_start = s->now_ns;
  v->round_min = INT64_MAX;
  v->round_busy = false;
  return bw__vegas_decide(v, s->est, rmin, busy);
}

static void bw__vegas_stats(const void *state, bw_limiter_stats_t *out) {
  out->min_rtt_ns = ((const bw__vegas_t *)state)->min_rtt;
}

static void bw__vegas_free(void *state) {
  bw_free(state);
}

const bw__lim_algo_t bw__lim_vegas = {"vegas",         false,
                                      bw__vegas_init,  bw__vegas_update,
                                      bw__vegas_stats, bw__vegas_free};

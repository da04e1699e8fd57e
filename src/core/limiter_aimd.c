/* Adaptive limiter: AIMD (docs/limiter.md, "AIMD").
 *
 * Additive increase, multiplicative decrease, with TCP's slow start: +1 per
 * saturated success until the first decrease (doubling per round trip),
 * or +startup_headroom when that is above 1 (x (1 + startup_headroom) per
 * round trip, as far as the limiter's startup cap lets it), then +1 per
 * `limit` of them (one step per round trip); a drop multiplies the limit
 * by backoff_ratio.
 *
 * After a stuck cut (stuck_ratio), which may halve the limit, the step is
 * BIC's binary search instead of +1: half the way back to the limit the
 * congestion event began at, each round trip; once there with no new
 * event, a step that doubles each round trip (1, 2, 4, ...; at most an
 * eighth of the limit), so a dependency whose capacity came back is
 * found again in a few round trips, not one call a round trip. */

#include <math.h>

#include "internal.h"
#include "limiter_algo.h"

typedef struct bw__aimd_s {
  uint32_t min;
  double backoff;
  double gain;     /* slow start's growth per saturated success */
  bool slow_start; /* until the first decrease */
  uint32_t acks;   /* saturated successes since the last increase */
  /* Recovery after a stuck cut (0 = none yet): the limit the latest stuck
   * event began at, the lowest limit since the latest decrease (a stuck
   * cut while the limit has not grown past it deepens the same event),
   * and the step past w_max. */
  double w_max;
  uint32_t low;
  uint32_t probe;
} bw__aimd_t;

static void *bw__aimd_init(const bw_limiter_config_t *cfg) {
  bw__aimd_t *a = bw_calloc(1, sizeof(*a));
  if (a == NULL) return NULL;
  a->min = cfg->min_limit;
  a->backoff = cfg->backoff_ratio;
  a->slow_start = true;
  a->probe = 1;
  /* +1 per success doubles the limit per round trip; a startup cap of
   * (1 + h) x proven with h above 1 would never be reached at that pace. */
  a->gain = cfg->startup_headroom > 1.0 ? cfg->startup_headroom : 1.0;
  return a;
}

/* floor(x * ratio), with a hair of slack so 10 * 0.9 is 9, not 8.999... */
static uint32_t bw__aimd_backoff(uint32_t limit, double ratio) {
  return (uint32_t)floor((double)limit * ratio + 1e-9);
}

/* A stuck event begins at `cur` and cuts to `to`. BIC's fast convergence:
 * an event that begins below the previous one's level says the capacity
 * fell, so the search aims between this event's level and its cut. */
static void bw__aimd_stuck_event(bw__aimd_t *a, uint32_t cur, double to) {
  if (a->w_max > 0 && cur <= a->low) return; /* the same event, deeper */
  if (a->w_max > 0 && (double)cur < a->w_max)
    a->w_max = ((double)cur + to) / 2.0;
  else
    a->w_max = (double)cur;
}

/* Congestion avoidance: one step per round trip (`limit` saturated
 * successes). */
static double bw__aimd_step(bw__aimd_t *a, uint32_t cur) {
  double c = (double)cur;
  if (a->w_max <= 0) return c + 1.0; /* no stuck cut yet: plain AIMD */
  if (a->w_max >= c + 2.0) return c + floor((a->w_max - c) / 2.0);
  if (c < a->w_max) return c + 1.0;
  /* Past the event's level with no new one: probe, doubling the step. */
  uint32_t step = a->probe, most = cur / 8 > 1 ? cur / 8 : 1;
  if (step > most) step = most;
  if (a->probe < most) a->probe *= 2;
  return c + (double)step;
}

static double bw__aimd_update(void *state, const bw__lim_sample_t *s,
                              bool *congestion) {
  bw__aimd_t *a = state;
  uint32_t cur = s->limit, next;
  (void)congestion; /* a drop is its only decrease */
  if (cur < a->low) a->low = cur;
  if (s->stuck) { /* cut to the level last served, slow start over */
    double to = fmin(s->est, s->cut_to);
    if (to < (double)a->min) to = (double)a->min;
    bw__aimd_stuck_event(a, cur, to);
    a->slow_start = false;
    a->acks = 0;
    a->low = (uint32_t)to;
    a->probe = 1;
    return to;
  }
  if (s->drop) {
    a->slow_start = false;
    a->acks = 0;
    /* Back off from the limit in force when the dropped call went out if
     * the limit grew since: the drop speaks of that level. */
    next =
        bw__aimd_backoff(s->limit_then < cur ? s->limit_then : cur, a->backoff);
    next = next < a->min ? a->min : next;
    a->low = next;
    a->probe = 1;
    return next;
  }
  if (!s->demand && (uint64_t)s->inflight * 2 < cur)
    return s->est; /* app-limited: no evidence the limit is too low */
  /* max_limit is part of the growth cap the limiter applies. */
  if (a->slow_start) /* from the estimate: a fractional gain accumulates */
    return (s->est > (double)cur ? s->est : (double)cur) + a->gain;
  /* Congestion avoidance: a step once `limit` successes have counted. */
  if (++a->acks < cur) return s->est;
  a->acks -= cur;
  return bw__aimd_step(a, cur);
}

static void bw__aimd_free(void *state) {
  bw_free(state);
}

const bw__lim_algo_t bw__lim_aimd = {"aimd",          true, bw__aimd_init,
                                     bw__aimd_update, NULL, bw__aimd_free};

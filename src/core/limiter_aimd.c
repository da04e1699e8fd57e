/* Adaptive limiter: AIMD (docs/limiter.md, "AIMD").
 *
 * Additive increase, multiplicative decrease, with TCP's slow start: +1 per
 * saturated success until the first decrease (doubling per round trip),
 * then +1 per `limit` of them (one step per round trip); a drop multiplies
 * the limit by backoff_ratio. (With the limiter's startup on, the limit
 * jumps to the startup cap on each success instead: limiter.c.) */

#include <math.h>

#include "internal.h"
#include "limiter_algo.h"

typedef struct bw__aimd_s {
  uint32_t min;
  double backoff;
  bool slow_start; /* until the first decrease */
  uint32_t acks;   /* saturated successes since the last increase */
} bw__aimd_t;

static void *bw__aimd_init(const bw_limiter_config_t *cfg) {
  bw__aimd_t *a = bw_calloc(1, sizeof(*a));
  if (a == NULL) return NULL;
  a->min = cfg->min_limit;
  a->backoff = cfg->backoff_ratio;
  a->slow_start = true;
  return a;
}

/* floor(x * ratio), with a hair of slack so 10 * 0.9 is 9, not 8.999... */
static uint32_t bw__aimd_backoff(uint32_t limit, double ratio) {
  return (uint32_t)floor((double)limit * ratio + 1e-9);
}

static double bw__aimd_update(void *state, const bw__lim_sample_t *s,
                              bool *congestion) {
  bw__aimd_t *a = state;
  uint32_t cur = s->limit, next;
  (void)congestion; /* a drop is its only decrease */
  if (s->stuck) {   /* cut to the level last served, slow start over */
    a->slow_start = false;
    a->acks = 0;
    return fmin(s->est, s->cut_to);
  }
  if (s->drop) {
    a->slow_start = false;
    a->acks = 0;
    /* Back off from the limit in force when the dropped call went out if
     * the limit grew since: the drop speaks of that level. */
    next =
        bw__aimd_backoff(s->limit_then < cur ? s->limit_then : cur, a->backoff);
    return next < a->min ? a->min : next;
  }
  if ((uint64_t)s->inflight * 2 < cur)
    return s->est; /* app-limited: no evidence the limit is too low */
  /* max_limit is part of the growth cap the limiter applies. */
  if (a->slow_start) return (s->est > (double)cur ? s->est : (double)cur) + 1.0;
  /* Congestion avoidance: +1 once `limit` successes have counted. */
  if (++a->acks < cur) return s->est;
  a->acks -= cur;
  return (double)cur + 1.0;
}

static void bw__aimd_free(void *state) {
  bw_free(state);
}

const bw__lim_algo_t bw__lim_aimd = {"aimd",          true, bw__aimd_init,
                                     bw__aimd_update, NULL, bw__aimd_free};

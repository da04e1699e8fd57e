/* breakwater — rate limiter: GCRA (the generic cell rate algorithm, a token
 * bucket kept as one "theoretical arrival time"). rate_per_sec calls a
 * second on average, bursts of up to `burst` at once.
 *
 * Answers are "admit now" or "admit in N ms", never a sleep: a server uses
 * try_acquire to refuse (429 with Retry-After: the wait), a client uses
 * reserve as a pacer (take the slot now, start the call after the wait).
 *
 * The emission interval is T = 1e9 / rate_per_sec ns and the tolerance
 * (burst - 1) * T: a new limiter (or one idle for burst * T) admits `burst`
 * calls at once, then one every T; idle time never banks more than `burst`.
 * T is kept to 1/16 ns, so the long-run rate is exact to within 1/32 ns per
 * slot (3 ppb at 10/s, 0.03% at 1e7/s, 3% at 1e9/s).
 *
 * Thread-safe, lock-free (one atomic word, updated by CAS), allocation-free
 * after creation. */
#ifndef BREAKWATER_RATELIMIT_H
#define BREAKWATER_RATELIMIT_H

#include "clock.h"
#include "common.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_ratelimit_config_s {
  const char *name;        /* copied; default "ratelimit"; 1..BW_NAME_MAX
                              bytes */
  double rate_per_sec;     /* default 100, in [1e-6, 1e9] (at least one call
                              per 11.6 days) */
  uint32_t burst;          /* default 1 (no burst), >= 1, and burst /
                              rate_per_sec (the time to refill a whole burst)
                              at most a year */
  const bw_clock_t *clock; /* default NULL: bw_clock_monotonic() (precise: a
                              coarse clock's 1-4 ms ticks would turn a limit
                              of more than burst per tick into one burst per
                              tick); a clock given must have now_ns */
  const bw_clock_t *wall_clock; /* event timestamps; default NULL: realtime */
  bw_sink_t *sink; /* rate_limited summaries (docs/events.md); default NULL
                      (none). The clock, wall clock and sink must outlive
                      the limiter: its free flushes the last summary
                      through them */
} bw_ratelimit_config_t;

typedef struct bw_ratelimit_s bw_ratelimit_t;

typedef struct bw_ratelimit_stats_s {
  uint64_t admitted;         /* try_acquire admitted */
  uint64_t limited;          /* try_acquire refused */
  uint64_t reserved;         /* reserve calls */
  uint64_t reserved_waiting; /* reserve calls that had to wait */
} bw_ratelimit_stats_t;

/* Changes the rate and the burst live (a configuration reload): BW_OK, or
 * BW_E_INVAL with err naming the field and the rule, as at creation
 * (rate_per_sec in [1e-06, 1e9], burst >= 1, burst / rate_per_sec at most
 * a year); nothing changes then. The schedule already booked is kept: a
 * call admitted before the change keeps its slot, so the first call after
 * it waits at most what it would have waited under the old rate, and from
 * then on calls are spaced by the new rate with the new burst (GCRA: a
 * call at now is admitted while the booked time ahead of now is at most
 * (burst - 1) / rate_per_sec). Thread-safe against every other call; one
 * that runs during the change may decide on the old rate with the new
 * burst or the reverse. */
BW_EXTERN int bw_ratelimit_set_rate(bw_ratelimit_t *rl, double rate_per_sec,
                                    uint32_t burst, bw_error_t *err);
/* Fills cfg with the limiter's configuration now (after any live change):
 * name pointing at the limiter's own, clocks resolved (never NULL). NULL rl
 * or cfg: nothing. */
BW_EXTERN void bw_ratelimit_config_of(const bw_ratelimit_t *rl,
                                      bw_ratelimit_config_t *cfg);

/* Fills the documented defaults. */
BW_EXTERN void bw_ratelimit_config_init(bw_ratelimit_config_t *cfg);
/* Checks a configuration without creating anything: BW_OK, or BW_E_INVAL
 * with err (may be NULL) naming the field and the rule. */
BW_EXTERN int bw_ratelimit_config_validate(const bw_ratelimit_config_t *cfg,
                                           bw_error_t *err);
/* Creates a limiter with a full burst available. NULL and err naming the
 * field on bad configuration (BW_E_INVAL), or BW_E_NOMEM. */
BW_EXTERN bw_ratelimit_t *bw_ratelimit_new(const bw_ratelimit_config_t *cfg,
                                           bw_error_t *err);
/* Admit now (BW_OK, *wait_ms = 0) or refuse (BW_E_FULL, *wait_ms = how long
 * until one call would be admitted, rounded up; >= 1). Refusals consume
 * nothing. wait_ms may be NULL. BW_E_INVAL for a NULL limiter (*wait_ms =
 * 0). */
BW_EXTERN int bw_ratelimit_try_acquire(bw_ratelimit_t *rl, int64_t *wait_ms);
/* Takes the next slot whatever the wait and returns, in ns (rounded up), how
 * long the caller must wait before using it (0 = now). For pacing a client:
 * the waits of successive reservations grow by T once the burst is used.
 * A backlog beyond 2^57 ns (4.5 years) saturates: such reservations return
 * that wait without moving the schedule further. BW_E_INVAL (negative) for a
 * NULL limiter. */
BW_EXTERN int64_t bw_ratelimit_reserve_ns(bw_ratelimit_t *rl);
/* A snapshot of the counters (each read atomically). NULL rl fills zeros;
 * NULL out is ignored. */
BW_EXTERN void bw_ratelimit_stats(const bw_ratelimit_t *rl,
                                  bw_ratelimit_stats_t *out);
/* The name given at creation ("" for NULL). */
BW_EXTERN const char *bw_ratelimit_name(const bw_ratelimit_t *rl);
/* Frees a limiter (NULL is fine). No call may be in flight on it. */
BW_EXTERN void bw_ratelimit_free(bw_ratelimit_t *rl);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_RATELIMIT_H */

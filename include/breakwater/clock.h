/* breakwater — clocks. Time is an input: every policy reads an injected clock,
 * so tests run on a manual clock and are exact.
 *
 * Readings are nanoseconds (int64_t, names end in _ns). A clock is a small
 * public struct: a program (or the virtual-time simulator) may fill its own
 * `now_ns` to supply time from anywhere. */
#ifndef BREAKWATER_CLOCK_H
#define BREAKWATER_CLOCK_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_clock_s bw_clock_t;
struct bw_clock_s {
  /* Returns the current reading in nanoseconds. Must be thread-safe and
   * monotonic (never decreases) unless it is a wall clock. */
  int64_t (*now_ns)(const bw_clock_t *clock);
  void *data; /* free for custom clocks */
};

/* Reads a clock. */
static inline int64_t bw_clock_now(const bw_clock_t *clock) {
  return clock->now_ns(clock);
}

/* CLOCK_MONOTONIC: precise (ns); a read is a vDSO call, several times the
 * cost of a coarse read (BENCHMARKS.md has the figures). Static; never free
 * it. */
BW_EXTERN const bw_clock_t *bw_clock_monotonic(void);

/* CLOCK_MONOTONIC_COARSE: the cheapest read (the vDSO copies a stored value and
 * reads no hardware counter), but it advances in ticks (1-4 ms on Linux). Good
 * for break durations and second-scale windows on hot paths; too coarse for
 * slow-call thresholds of a few milliseconds. Falls back to the precise clock
 * where the coarse one does not exist. Static. */
BW_EXTERN const bw_clock_t *bw_clock_monotonic_coarse(void);

/* CLOCK_REALTIME: wall time since the Unix epoch; used only for event
 * timestamps, never for durations. Static. */
BW_EXTERN const bw_clock_t *bw_clock_realtime(void);

/* A manual clock for tests: starts at start_ns and moves only when told.
 * Thread-safe (reads and advances are atomic). Returns NULL when out of
 * memory. Free with bw_clock_free. */
BW_EXTERN bw_clock_t *bw_clock_manual_new(int64_t start_ns);
/* Moves a manual clock forward by delta_ns (negative deltas are ignored: a
 * monotonic clock never goes back). No-op on other clocks. */
BW_EXTERN void bw_clock_manual_advance(bw_clock_t *clock, int64_t delta_ns);
/* Sets a manual clock to an absolute reading, if later than now. */
BW_EXTERN void bw_clock_manual_set(bw_clock_t *clock, int64_t now_ns);
/* Frees a manual clock. NULL and the static clocks are accepted and ignored. */
BW_EXTERN void bw_clock_free(bw_clock_t *clock);

#define BW_NS_PER_MS INT64_C(1000000)
#define BW_NS_PER_S INT64_C(1000000000)

/* A duration in ns as whole ms, rounded up (a wait of 1 ns is a wait of
 * 1 ms, never of 0); 0 for ns <= 0. */
static inline int64_t bw_ns_to_ms_ceil(int64_t ns) {
  return ns <= 0 ? 0 : (ns + BW_NS_PER_MS - 1) / BW_NS_PER_MS;
}

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_CLOCK_H */

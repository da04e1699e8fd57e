/* Library libbreakwater_threads, pkg-config module breakwater-threads. */
/* breakwater — the threads driver: the blocking helpers. Each one blocks the
 * calling thread (sleeps, condition-variable waits, worker threads) around
 * the core's non-blocking decisions, through the core's public API only; the
 * core itself (libbreakwater) never blocks and never starts a thread.
 *
 * Not part of the umbrella header breakwater/breakwater.h: include this one
 * and link libbreakwater_threads (CMake target breakwater_threads) to use
 * them. Every function here blocks: never call one from an event loop. */
#ifndef BREAKWATER_THREADS_H
#define BREAKWATER_THREADS_H

#include "bulkhead.h"
#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bulkhead (bulkhead.h) ---------------------------------------------- */

/* Takes a slot, blocking the calling thread in the bulkhead's FIFO queue for
 * up to max_wait_ms — narrowed to this thread's remaining deadline — if none
 * is free. The wait is measured on CLOCK_MONOTONIC (a thread really waits),
 * even when the bulkhead's clock is a manual one. BW_OK (p filled; release
 * it exactly once); BW_E_FULL when no slot came in time (counted in
 * wait_timeouts), when there was no time to wait or the queue is full
 * (counted in rejected_full) — seed 000's BulkheadFullError; BW_E_DEADLINE
 * (counted) when the thread deadline had already passed; BW_E_NOMEM (not
 * counted) if the wait's condition variable cannot be created; BW_E_INVAL
 * for NULL arguments. Thread-safe; built on bw_bulkhead_acquire_timed and
 * bw_bulkhead_cancel_timeout. */
BW_EXTERN int bw_bulkhead_acquire(bw_bulkhead_t *bh, bw_permit_t *p);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_THREADS_H */

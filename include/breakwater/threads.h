/* Component threads: library libbreakwater_threads, pkg-config module
 * breakwater-threads, CMake target breakwater::threads. */
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
#include "clock.h"
#include "common.h"
#include "pipeline.h"
#include "retry.h"
#include "stage.h"
#include "store.h"

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
 * (counted in rejected_full) — the asyncio toolkit's BulkheadFullError;
 * BW_E_DEADLINE (counted) when the thread deadline had already passed;
 * BW_E_NOMEM (not counted) if the wait's condition variable cannot be created;
 * BW_E_INVAL for NULL arguments. Thread-safe; built on
 * bw_bulkhead_acquire_timed and bw_bulkhead_cancel_timeout. */
BW_EXTERN int bw_bulkhead_acquire(bw_bulkhead_t *bh, bw_permit_t *p);

/* ---- retry (retry.h) ---------------------------------------------------- */

/* One attempt: returns its verdict; may set *retry_after_ms (it starts as
 * BW_RETRY_AFTER_NONE). attempt counts from 1. */
typedef bw_verdict_t (*bw_retry_fn)(void *userdata, uint32_t attempt,
                                    int64_t *retry_after_ms);
/* Called once when the call gives up (tenacity's retry_error_callback). */
typedef void (*bw_retry_fallback_fn)(void *userdata, bw_giveup_t reason,
                                     bw_verdict_t last);
/* Sleeps ms milliseconds (by default nanosleep; tests pass one that advances
 * a manual clock). */
typedef void (*bw_sleep_fn)(void *userdata, int64_t ms);

typedef struct bw_retry_call_opts_s {
  const bw_clock_t *clock; /* default monotonic */
  bw_sleep_fn sleep;       /* default: nanosleep */
  void *sleep_userdata;
  bw_retry_fallback_fn fallback; /* optional */
  void *fallback_userdata;
} bw_retry_call_opts_t;

/* Runs fn until it succeeds or the policy gives up, sleeping between
 * attempts, honouring this thread's deadline: if it has already passed, fn is
 * never called (reason deadline, last verdict NOT_SENT, no budget request);
 * after each sleep, a deadline that passed meanwhile gives up too. BW_OK on
 * success (*reason = BW_GIVEUP_NONE); BW_E_GAVE_UP (with *reason set if not
 * NULL) after calling the fallback once with the reason and the last verdict.
 * opts may be NULL. BW_E_INVAL for NULL policy or fn, or when fn returns an
 * unknown verdict or an invalid hint (then no fallback). Blocks the calling
 * thread (in opts->sleep, by default nanosleep); thread-safe as the policy
 * is. Built on bw_retry_start, bw_retry_next and bw_retry_check_deadline. */
BW_EXTERN int bw_retry_call(const bw_retry_policy_t *p, bw_retry_fn fn,
                            void *userdata, const bw_retry_call_opts_t *opts,
                            bw_giveup_t *reason);

/* ---- pipeline (pipeline.h) ---------------------------------------------- */

/* One attempt of a pipeline call: returns the verdict and may set
 * *retry_after_ms (it starts as BW_RETRY_AFTER_NONE; a value below
 * BW_RETRY_AFTER_NEVER counts as none). call is the call in progress
 * (read its public fields: attempt, attempt_timeout_ms, deadline). */
typedef bw_verdict_t (*bw_attempt_fn)(void *userdata,
                                      const bw_pipeline_call_t *call,
                                      int64_t *retry_after_ms);

/* Blocking convenience: runs a call to the end on `clock` (default
 * monotonic), sleeping between steps with nanosleep, and calling fn for each
 * attempt (a verdict fn makes up counts as transient). Returns the failure
 * kind (BW_FAILURE_NONE on success), or BW_E_INVAL (negative) for NULL pl
 * or fn. *out (optional, the caller's) receives the final call. Blocks the
 * calling thread; thread-safe as the pipeline is. Built on
 * bw_pipeline_begin, bw_pipeline_report and bw_pipeline_resume. */
BW_EXTERN int bw_pipeline_execute(const bw_pipeline_t *pl,
                                  const bw_clock_t *clock, bw_attempt_fn fn,
                                  void *userdata, bw_pipeline_call_t *out);

/* ---- idempotency (store.h) ---------------------------------------------- */

/* The operation run by bw_idem_execute: fills *status and (optionally) a
 * result it allocated with malloc (*result, *len; freed by execute after
 * storing it). A negative return means it failed: nothing is stored and the
 * marker is abandoned. */
typedef int (*bw_idem_fn)(void *userdata, int *status, void **result,
                          size_t *len);

/* Runs fn at most once per key: begin; NEW → run fn, complete (or abandon
 * on failure); DONE → the stored result; IN_PROGRESS → BW_E_FULL at once
 * when wait_ms is 0, else poll every millisecond (real time) until the
 * record is DONE (BW_OK), the marker is abandoned or expires (this caller
 * then runs it), or wait_ms passes (BW_E_TIMEOUT). On BW_OK *out (may be
 * NULL) holds the outcome with state DONE (or NEW when this call ran fn);
 * its result is the caller's, freed with bw_idem_record_clear. A negative
 * return from fn is returned as is; the store's errors too (BW_E_INVAL for
 * NULL s or fn, a negative wait_ms or a bad key; BW_E_NOMEM when the
 * result cannot be copied into *out — it is stored all the same). Blocks:
 * not for event loops. Thread-safe as the store is. Built on bw_idem_begin,
 * bw_idem_complete and bw_idem_abandon. */
BW_EXTERN int bw_idem_execute(bw_idem_store_t *s, const char *key,
                              int64_t wait_ms, bw_idem_fn fn, void *userdata,
                              bw_idem_record_t *out);

/* ---- stage runner (stage.h) --------------------------------------------- */

/* Processes one item taken from the stage; its result completes the item. */
typedef bw_stage_outcome_t (*bw_stage_handler_fn)(const bw_stage_item_t *item,
                                                  void *userdata);

typedef struct bw_runner_config_s {
  uint32_t threads;            /* default 1; 1..256 */
  bw_stage_handler_fn handler; /* required */
  void *userdata;
} bw_runner_config_t;

typedef struct bw_runner_s bw_runner_t;

/* Fills the documented defaults (1 thread, no handler). */
BW_EXTERN void bw_runner_config_init(bw_runner_config_t *cfg);
/* Starts `threads` workers that pull from s (bw_stage_next), call the
 * handler and complete each item with its result (bw_stage_done); a worker
 * with nothing to take sleeps until the stage's notify hook, which the
 * runner installs (bw_stage_set_notify), says there may be work. The stage
 * must have on_expired set (expired items must go somewhere): else
 * BW_E_INVAL naming "on_expired". One runner per stage (BW_E_INVAL, "already
 * has a runner", when the stage's notify hook is taken). NULL and err (may
 * be NULL) on error (BW_E_INVAL, BW_E_NOMEM); the runner is allocated
 * through the library's allocator hooks. The stage must outlive the
 * runner. */
BW_EXTERN bw_runner_t *bw_stage_runner_new(bw_stage_t *s,
                                           const bw_runner_config_t *cfg,
                                           bw_error_t *err);
/* Stops the workers (each finishes its current item; queued items stay in
 * the stage), joins them, removes the stage's notify hook and frees the
 * runner. NULL is fine. Never call it from a handler (it joins the calling
 * thread). */
BW_EXTERN void bw_runner_free(bw_runner_t *r);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_THREADS_H */

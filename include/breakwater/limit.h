/* breakwater — the concurrency-limit interface shared by the bulkhead and
 * the adaptive limiters, so a driver or a pipeline accepts either.
 *
 *   bw_limit_t *l = bw_bulkhead_as_limit(bh);   // or bw_limiter_as_limit(lim)
 *   bw_permit_t p;
 *   if (bw_limit_try_acquire(l, &p) != BW_OK) {
 *     // BW_E_FULL: no slot now; shed the call or try later
 *   } else {
 *     rc = do_call();
 *     bw_limit_release(l, &p, rc == ok ? BW_SUCCESS : BW_DROPPED);
 *   }
 *
 * try_acquire never waits: a bulkhead's waiting forms (timed, queued with a
 * callback) are bulkhead functions. An interface pointer is owned by the
 * object it came from and valid until that object is freed.
 *
 * Implementing the interface: put a bw_limit_t as the first member of the
 * object and point its `vt` at a static table whose functions are all set.
 * Every function here is thread-safe when the implementation's are. */
#ifndef BREAKWATER_LIMIT_H
#define BREAKWATER_LIMIT_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deprecated (0.2, removed before 1.0): a concurrency limit's outcome is
 * now bw_outcome_t (common.h), whose values these names alias:
 * SUCCESS = BW_SUCCESS, DROPPED = BW_DROPPED (= BW_FAILURE: shed, refused or
 * timed out downstream, a congestion signal), IGNORED = BW_IGNORED (frees the
 * slot, no sample), TIMED_OUT = BW_TIMED_OUT (the caller stopped waiting: a
 * drop, and an adaptive limiter keeps the slot a while longer,
 * bw_limiter_config_t's timeout_hold_ratio; objects that do not tell the two
 * apart see DROPPED). Code written against either name compiles unchanged. */
typedef bw_outcome_t bw_limit_outcome_t;
#define BW_LIMIT_SUCCESS BW_SUCCESS
#define BW_LIMIT_DROPPED BW_DROPPED
#define BW_LIMIT_IGNORED BW_IGNORED
#define BW_LIMIT_TIMED_OUT BW_TIMED_OUT

/* "success", "dropped", "ignored", "timed_out" or "unknown": the outcome's
 * name as a limit reads it (bw_outcome_name says "failure" for 1). */
BW_EXTERN const char *bw_limit_outcome_name(bw_limit_outcome_t o);

typedef struct bw_limit_s bw_limit_t;

/* The table behind the interface (for implementers). */
typedef struct bw_limit_vtable_s {
  const char *kind; /* "bulkhead", "aimd", "gradient2", "vegas", ... */
  int (*try_acquire)(bw_limit_t *l, bw_permit_t *p);
  int (*release)(bw_limit_t *l, const bw_permit_t *p, bw_outcome_t o);
  uint32_t (*limit)(const bw_limit_t *l);
  uint32_t (*in_flight)(const bw_limit_t *l);
  const char *(*name)(const bw_limit_t *l);
  void (*free)(bw_limit_t *l);
  /* BW_LIMIT_VT_* bits; 0 (a table that predates them) is fine. */
  uint32_t flags;
  /* Read only with BW_LIMIT_VT_ATTEMPT_TIMEOUT (a table without the bit
   * may predate this member): the time limit, in ms, of the attempt
   * admitted on *p, given timeout_ms, the limit the rest of the pipeline
   * set (-1 = none). Returns timeout_ms or a shorter limit, and may note in
   * *p what release then needs. */
  int64_t (*attempt_timeout)(bw_limit_t *l, bw_permit_t *p, int64_t timeout_ms);
} bw_limit_vtable_t;

/* release understands BW_LIMIT_TIMED_OUT; without it, bw_limit_release
 * passes such a release as BW_LIMIT_DROPPED. */
#define BW_LIMIT_VT_TIMED_OUT 1u
/* The table's attempt_timeout is set: a pipeline asks it for each attempt's
 * time limit (an adaptive limiter's stuck_timeout). */
#define BW_LIMIT_VT_ATTEMPT_TIMEOUT 2u

/* The head of every object that implements the interface. */
struct bw_limit_s {
  const bw_limit_vtable_t *vt;
};

/* Takes a slot without waiting. BW_OK: the permit is filled (start_ns is the
 * object's clock reading) and must be released exactly once. BW_E_FULL: no
 * slot (the permit is untouched, nothing to release). A bulkhead may also
 * answer BW_E_DEADLINE (this thread's deadline has already passed).
 * BW_E_INVAL for NULL arguments. */
BW_EXTERN int bw_limit_try_acquire(bw_limit_t *l, bw_permit_t *p);

/* Gives the slot back with the call's outcome (TIMED_OUT reaches objects
 * that do not know it as DROPPED). BW_OK; BW_E_TIMEOUT from a
 * bulkhead when the call ran past its execution deadline (the slot is freed
 * and the timeout counted all the same); BW_E_INVAL for NULL arguments, an
 * unknown outcome or a release with nothing in flight (nothing counted). */
BW_EXTERN int bw_limit_release(bw_limit_t *l, const bw_permit_t *p,
                               bw_outcome_t outcome);

/* The time limit, in ms, of the attempt just admitted on *p, given
 * timeout_ms (-1 = none): what the object's attempt_timeout answers (an
 * adaptive limiter with stuck_timeout cuts the attempt of a call admitted
 * above its proven level to its stuck age), or timeout_ms unchanged for an
 * object without one, and for NULL arguments. A pipeline calls it for the
 * limits inside its retry before each attempt (pipeline.h). */
BW_EXTERN int64_t bw_limit_attempt_timeout(bw_limit_t *l, bw_permit_t *p,
                                           int64_t timeout_ms);

/* The current limit: max_concurrent for a bulkhead, the adaptive estimate
 * (rounded down) for a limiter. 0 for NULL. */
BW_EXTERN uint32_t bw_limit_current(const bw_limit_t *l);

/* Calls admitted and not yet released (for a bulkhead, slots held; a slot
 * handed to a queued waiter counts from the hand-over). 0 for NULL. */
BW_EXTERN uint32_t bw_limit_in_flight(const bw_limit_t *l);

/* The object's name and kind ("bulkhead", "aimd", "gradient2", "vegas");
 * "" for NULL. */
BW_EXTERN const char *bw_limit_name(const bw_limit_t *l);
BW_EXTERN const char *bw_limit_kind(const bw_limit_t *l);

/* Frees the object behind the interface, as its own free function would.
 * NULL is fine. */
BW_EXTERN void bw_limit_free(bw_limit_t *l);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_LIMIT_H */

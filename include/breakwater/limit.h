/* breakwater — the concurrency-limit interface shared by the bulkhead and
 * the adaptive limiters, so a driver or a pipeline accepts either.
 *
 *   bw_limit_t *l = bw_bulkhead_as_limit(bh);   // or bw_limiter_as_limit(lim)
 *   bw_permit_t p;
 *   if (bw_limit_try_acquire(l, &p) != BW_OK) {
 *     // BW_E_FULL: no slot now; shed the call or try later
 *   } else {
 *     rc = do_call();
 *     bw_limit_release(l, &p, rc == ok ? BW_LIMIT_SUCCESS : BW_LIMIT_DROPPED);
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

/* How an admitted call ended, as a concurrency limit sees it. The first
 * three values equal bw_outcome_t's (SUCCESS 0, FAILURE 1, IGNORED 2), so an
 * outcome can be cast when "failure" means "the dependency shed or timed out
 * the call".
 * - SUCCESS: completed; its round-trip time (permit start to release on the
 *   object's clock) is a sample for adaptive limiters.
 * - DROPPED: shed, timed out or refused downstream: a congestion signal.
 * - IGNORED: neither (a 4xx, a cancelled call): frees the slot, no sample.
 * - TIMED_OUT: the caller stopped waiting (no answer within its timeout): a
 *   drop, and the dependency may still be working on the call. An adaptive
 *   limiter keeps the slot a while longer (bw_limiter_config_t's
 *   timeout_hold_ratio); objects that do not tell the two apart see
 *   DROPPED. */
typedef enum bw_limit_outcome_e {
  BW_LIMIT_SUCCESS = 0,
  BW_LIMIT_DROPPED = 1,
  BW_LIMIT_IGNORED = 2,
  BW_LIMIT_TIMED_OUT = 3
} bw_limit_outcome_t;

/* "success", "dropped", "ignored", "timed_out" or "unknown". */
BW_EXTERN const char *bw_limit_outcome_name(bw_limit_outcome_t o);

typedef struct bw_limit_s bw_limit_t;

/* The table behind the interface (for implementers). */
typedef struct bw_limit_vtable_s {
  const char *kind; /* "bulkhead", "aimd", "gradient2", "vegas", ... */
  int (*try_acquire)(bw_limit_t *l, bw_permit_t *p);
  int (*release)(bw_limit_t *l, const bw_permit_t *p, bw_limit_outcome_t o);
  uint32_t (*limit)(const bw_limit_t *l);
  uint32_t (*in_flight)(const bw_limit_t *l);
  const char *(*name)(const bw_limit_t *l);
  void (*free)(bw_limit_t *l);
  /* BW_LIMIT_VT_* bits; 0 (a table that predates them) is fine. */
  uint32_t flags;
} bw_limit_vtable_t;

/* release understands BW_LIMIT_TIMED_OUT; without it, bw_limit_release
 * passes such a release as BW_LIMIT_DROPPED. */
#define BW_LIMIT_VT_TIMED_OUT 1u

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
                               bw_limit_outcome_t outcome);

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

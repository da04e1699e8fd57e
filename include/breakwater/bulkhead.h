/* breakwater — bulkhead: at most max_concurrent calls at once (the asyncio
 * toolkit's Bulkhead over anyio.CapacityLimiter), with three ways to ask for a
 * slot:
 *
 * - bw_bulkhead_try_acquire: now or never (BW_E_FULL);
 * - bw_bulkhead_acquire (in the threads driver, threads.h): blocks the
 *   calling thread up to max_wait_ms (default 2000, the asyncio toolkit's slot
 * wait), then BW_E_FULL — the asyncio toolkit's BulkheadFullError; built on
 *   bw_bulkhead_acquire_timed and bw_bulkhead_cancel_timeout below;
 * - bw_bulkhead_acquire_async: for event loops, never blocks: admitted now,
 *   or queued with a callback that a later release calls.
 *
 * Waiters are served strictly first come, first served: blocked threads and
 * queued callbacks share one FIFO queue (bounded by max_waiting), a release
 * hands its slot to the head of the queue, and try_acquire never jumps the
 * queue (it answers BW_E_FULL while anyone waits).
 *
 * Every permit carries an execution deadline: timeout_ms after admission
 * (default 30000, the asyncio toolkit), narrowed by the acquiring thread's
 * current deadline (bw_deadline_current) — the asyncio toolkit's min(timeout,
 * budget). A call released after it gets BW_E_TIMEOUT from release (the asyncio
 * toolkit's BulkheadTimeoutError) and counts as a timeout; bw_bulkhead_expired
 * tells a caller mid-call. The bulkhead decides, it never cancels: stopping the
 * call is the driver's job. The thread deadline must be read from the
 * bulkhead's clock (the default coarse clock and bw_clock_monotonic() share one
 * time base: a precise deadline is then checked up to one 4 ms tick late).
 *
 * Clocks: with no execution deadline (timeout_ms 0) and no thread deadline,
 * an admission reads no clock at all (permit.start_ns is then 0: nothing
 * needs it). Otherwise the default clock (cfg.clock NULL) is
 * bw_clock_monotonic_coarse() when timeout_ms >= 1000 — cheaper to read,
 * in 4 ms ticks, so a deadline fires up to 4 ms late, under 0.4 % of the
 * timeout — and bw_clock_monotonic() below that. An explicit
 * clock is always used as given.
 *
 * Thread-safe. The uncontended try_acquire + release is lock-free and
 * allocation-free (a CAS on one counter and striped statistics); only the
 * waiting paths take the bulkhead's lock. */
#ifndef BREAKWATER_BULKHEAD_H
#define BREAKWATER_BULKHEAD_H

#include "clock.h"
#include "common.h"
#include "event.h"
#include "limit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_bulkhead_config_s {
  const char *name;             /* copied; default "bulkhead"; 1..BW_NAME_MAX */
  uint32_t max_concurrent;      /* default 10, 1..1000000 */
  int64_t max_wait_ms;          /* a blocking acquire's wait (acquire_timed's
                                   bound); default 2000, 0 (never
                                   wait)..86400000 (a day) */
  int64_t timeout_ms;           /* execution deadline after admission; default
                                   30000; 0 = none of its own (the thread
                                   deadline still applies); 0..86400000 */
  uint32_t max_waiting;         /* waiters queued at once (threads and
                                   callbacks); default 1000, 0 (no queue)..
                                   1000000 */
  const bw_clock_t *clock;      /* default NULL: bw_clock_monotonic_coarse()
                                   when timeout_ms >= 1000, else
                                   bw_clock_monotonic() (see above) */
  const bw_clock_t *wall_clock; /* event timestamps; default NULL: realtime */
  bw_sink_t *sink; /* bulkhead_rejected summaries (docs/events.md); default
                      NULL (none). The clock, wall clock and sink must
                      outlive the bulkhead: its free flushes the last
                      summary through them */
} bw_bulkhead_config_t;

typedef struct bw_bulkhead_s bw_bulkhead_t;

/* Counters are totals since creation. Conservation, once nothing waits:
 *   admitted + rejected_full + wait_timeouts + rejected_deadline + cancelled
 *     = every try_acquire, acquire_async and acquire_timed call (a blocking
 *       acquire, threads.h, makes one acquire_timed call) that was not
 *       refused for bad arguments or lack of memory;
 *   admitted = released + in_use. */
typedef struct bw_bulkhead_stats_s {
  uint32_t max_concurrent;
  uint32_t available; /* max_concurrent - in_use */
  uint32_t in_use;    /* slots held, including ones handed to waiters */
  uint32_t waiting;   /* threads and callbacks queued now */
  uint64_t admitted;
  uint64_t admitted_after_wait; /* of admitted: after queueing */
  uint64_t rejected_full;       /* refused without waiting: no slot and
                                   no wait allowed, or the queue full */
  uint64_t wait_timeouts;       /* waited max_wait_ms (or the thread
                                   deadline) in vain: BW_E_FULL */
  uint64_t rejected_deadline;   /* thread deadline already passed */
  uint64_t cancelled;           /* queued callbacks cancelled */
  uint64_t released;
  uint64_t timeouts; /* releases after the execution deadline */
} bw_bulkhead_stats_t;

/* Fills the documented defaults (the asyncio toolkit's fallback: 10 slots, 30
 * s). */
BW_EXTERN void bw_bulkhead_config_init(bw_bulkhead_config_t *cfg);

/* Fills cfg with the asyncio toolkit's preset for `name`, and sets cfg->name =
 * name: booking_agent 10 slots / 30 s, search_agent 20 / 10 s, payment_agent 5
 * / 15 s, recovery_worker 3 / 120 s; any other name (the asyncio toolkit's
 * registry fallback) gets the defaults, 10 / 30 s. Other fields get their
 * defaults (max_wait_ms 2000). Always fills cfg; returns true when `name` is a
 * known preset, false for the fallback (also for a NULL name, which leaves the
 * default name). NULL cfg: false. */
BW_EXTERN bool bw_bulkhead_config_preset(bw_bulkhead_config_t *cfg,
                                         const char *name);

/* Checks a configuration: BW_OK, or BW_E_INVAL with err (may be NULL) naming
 * the field and the rule. */
BW_EXTERN int bw_bulkhead_config_validate(const bw_bulkhead_config_t *cfg,
                                          bw_error_t *err);

/* Creates a bulkhead with every slot free. NULL and err filled on a bad
 * configuration (BW_E_INVAL, naming the field) or BW_E_NOMEM. */
BW_EXTERN bw_bulkhead_t *bw_bulkhead_new(const bw_bulkhead_config_t *cfg,
                                         bw_error_t *err);

/* Takes a slot now or never. BW_OK: p is filled (start_ns = now — or 0 when
 * neither the bulkhead nor the thread has a deadline, see "Clocks" — and
 * the execution deadline inside) and must be released exactly once. BW_E_FULL:
 * every slot is taken or someone is queued (no queue jumping).
 * BW_E_DEADLINE: this thread's deadline has passed. p is untouched unless
 * BW_OK. BW_E_INVAL for NULL arguments. Lock-free. */
BW_EXTERN int bw_bulkhead_try_acquire(bw_bulkhead_t *bh, bw_permit_t *p);

/* bw_bulkhead_acquire (blocking) moved to breakwater/threads.h. */

/* A queued request for the non-blocking form. The caller owns it (on its
 * stack or in its request object), zeroes it before its first use, and keeps
 * it alive until its callback has returned or bw_bulkhead_cancel has removed
 * it. It may be reused after that. Fields are private. */
typedef struct bw_bulkhead_waiter_s bw_bulkhead_waiter_t;

/* Called when a queued waiter is given a slot, with the filled permit (copy
 * it; it must be released exactly once). Runs on the thread that hands it the
 * slot — the one whose release freed it (or, rarely, an acquiring thread
 * that found a slot freed during its own queueing) — after the bulkhead's
 * lock is dropped: it may acquire and
 * release on the same bulkhead, and should hand the work back to its loop
 * rather than run it. */
typedef void (*bw_bulkhead_grant_cb)(bw_bulkhead_waiter_t *w,
                                     const bw_permit_t *p, void *userdata);

struct bw_bulkhead_waiter_s {
  /* private */
  struct bw_bulkhead_waiter_s *next;
  struct bw_bulkhead_waiter_s *prev;
  bw_bulkhead_grant_cb cb;
  void *userdata;
  int64_t thread_deadline_ns; /* the acquiring thread's deadline */
  bw_permit_t permit;
  int state;
};

/* Never blocks. BW_OK: admitted now, p filled, cb will not be called.
 * BW_BULKHEAD_QUEUED (positive): w is queued; cb(w, permit, userdata) runs
 * once a release hands it a slot (unless cancelled first). BW_E_FULL: no
 * slot and the queue holds max_waiting already. BW_E_DEADLINE: the thread
 * deadline has passed. BW_E_INVAL for NULL bh, p, w or cb, or a w that is
 * already queued. The queued waiter's execution deadline is fixed when it
 * is granted: timeout_ms from then, narrowed by the deadline this thread had
 * at the call. max_wait_ms does not apply: the loop times a queued waiter
 * out by cancelling it. */
#define BW_BULKHEAD_QUEUED 1
BW_EXTERN int bw_bulkhead_acquire_async(bw_bulkhead_t *bh, bw_permit_t *p,
                                        bw_bulkhead_waiter_t *w,
                                        bw_bulkhead_grant_cb cb,
                                        void *userdata);

/* Removes a queued waiter: BW_OK (removed, counted as cancelled; its
 * callback will never run) or BW_E_NOTFOUND (not queued: it was granted —
 * its callback has run or is running — or never queued). BW_E_INVAL for
 * NULL arguments. */
BW_EXTERN int bw_bulkhead_cancel(bw_bulkhead_t *bh, bw_bulkhead_waiter_t *w);

/* The non-blocking half of a bounded wait, for a driver that blocks a thread
 * (the threads driver's bw_bulkhead_acquire). Never blocks. The same as
 * bw_bulkhead_acquire_async, except that when no slot is free and the wait
 * allowed — max_wait_ms narrowed to this thread's remaining deadline
 * (bw_deadline_current, read on the bulkhead's clock) — is 0 (max_wait_ms 0,
 * or under 1 ms left), nothing is queued: BW_E_FULL, counted in
 * rejected_full. BW_BULKHEAD_QUEUED: w is queued and *wait_ms (>= 1) is how
 * long the caller may wait for cb; when that passes, it calls
 * bw_bulkhead_cancel_timeout. A slot freed while w was queueing admits it at
 * once (BW_OK, p filled, cb not called), counted as admitted after a wait.
 * Ownership of w and the callback's rules are those of acquire_async.
 * Thread-safe. Errors: BW_E_DEADLINE (counted) when the thread deadline has
 * passed; BW_E_FULL when the queue holds max_waiting already; BW_E_INVAL for
 * NULL bh, p, w, cb or wait_ms, or a w already queued. *wait_ms is set only
 * with BW_BULKHEAD_QUEUED. */
BW_EXTERN int bw_bulkhead_acquire_timed(bw_bulkhead_t *bh, bw_permit_t *p,
                                        bw_bulkhead_waiter_t *w,
                                        bw_bulkhead_grant_cb cb, void *userdata,
                                        int64_t *wait_ms);

/* Removes a queued waiter whose wait ran out: the same as bw_bulkhead_cancel
 * (BW_OK: removed, its callback will never run; BW_E_NOTFOUND: it was
 * granted — its callback has run or is running, wait for it — or never
 * queued; BW_E_INVAL for NULL arguments), but counted in wait_timeouts
 * instead of cancelled: the caller gave up waiting, a BW_E_FULL to its own
 * caller. Thread-safe. */
BW_EXTERN int bw_bulkhead_cancel_timeout(bw_bulkhead_t *bh,
                                         bw_bulkhead_waiter_t *w);

/* Gives a slot back: to the first queued waiter if any (its thread wakes or
 * its callback runs on this thread), else to the pool. BW_OK, or
 * BW_E_TIMEOUT when the call ended after its execution deadline (the slot is
 * given back and the timeout counted all the same). BW_E_INVAL (nothing
 * counted) for NULL arguments or when no slot is held. */
BW_EXTERN int bw_bulkhead_release(bw_bulkhead_t *bh, const bw_permit_t *p);

/* True when now_ns is at or past the permit's execution deadline (never for
 * a permit without one). The deadline is p->deadline_ns, a clock reading. */
BW_EXTERN bool bw_bulkhead_expired(const bw_permit_t *p, int64_t now_ns);
/* The permit's execution deadline as a clock reading, INT64_MAX for none. */
BW_EXTERN int64_t bw_bulkhead_deadline_ns(const bw_permit_t *p);

/* A snapshot of the counters (each read atomically; the set is not one
 * instant). NULL bh fills zeros; NULL out is ignored. */
BW_EXTERN void bw_bulkhead_stats(const bw_bulkhead_t *bh,
                                 bw_bulkhead_stats_t *out);

/* The name given at creation ("" for NULL). */
BW_EXTERN const char *bw_bulkhead_name(const bw_bulkhead_t *bh);

/* The bulkhead as a concurrency limit (try_acquire / release; release
 * ignores the outcome's kind but validates it). Owned by bh. */
BW_EXTERN bw_limit_t *bw_bulkhead_as_limit(bw_bulkhead_t *bh);

/* Changes max_concurrent live (a configuration reload): BW_OK, or
 * BW_E_INVAL with err naming max_concurrent and the rule (1..1000000) or a
 * NULL bulkhead. Raising it admits queued waiters at once, in order.
 * Lowering it revokes nothing: the calls already in beyond the new bound
 * finish, and until enough of them have released, new calls are refused
 * or wait (a released slot is then given back, not passed to a waiter).
 * stats.available is 0 meanwhile. Thread-safe against every other call. The
 * other fields are fixed at creation. */
BW_EXTERN int bw_bulkhead_set_max_concurrent(bw_bulkhead_t *bh,
                                             uint32_t max_concurrent,
                                             bw_error_t *err);
/* Fills cfg with the bulkhead's configuration now (after any live change):
 * name pointing at the bulkhead's own, clocks resolved (never NULL). NULL
 * bh or cfg: nothing. */
BW_EXTERN void bw_bulkhead_config_of(const bw_bulkhead_t *bh,
                                     bw_bulkhead_config_t *cfg);

/* Frees a bulkhead (NULL is fine). Nothing may hold a slot or wait. */
BW_EXTERN void bw_bulkhead_free(bw_bulkhead_t *bh);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_BULKHEAD_H */

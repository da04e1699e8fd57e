/* Component shm: library libbreakwater_shm, pkg-config module breakwater-shm,
 * CMake target breakwater::shm. */
/* breakwater — state in shared memory, for processes on one host.
 *
 * Pre-fork servers (nginx, gunicorn, php-fpm style) run N worker processes.
 * A breaker in each worker's own memory trips after failure_threshold
 * failures *per worker*, i.e. up to failure_threshold x N calls reach a sick
 * dependency (the tenacity article's caveat). Here the state of a breaker, a
 * token-bucket retry budget or a concurrency limit lives in a named POSIX
 * shared-memory segment (shm_open + mmap, mode 0600), so every process on the
 * host that opens the segment shares one breaker: failures count across workers
 * and a trip is seen by every worker at its next call.
 *
 *   bw_shm_config_t sc;
 *   bw_shm_config_init(&sc);
 *   sc.name = "/payments";                    // created by the master
 *   bw_shm_t *seg = bw_shm_open(&sc, &err);
 *   bw_shm_breaker_t *b = bw_shm_breaker_new(seg, &bcfg, &err);
 *   // fork workers: they inherit seg and b, or open and attach their own
 *   bw_permit_t p;
 *   if (bw_shm_breaker_acquire(b, &p) == BW_OK) {
 *     ...; bw_shm_breaker_release(b, &p, outcome);
 *   }
 *
 * The whole mutable state of an object is a position-independent block of
 * 64-bit atomic words in the segment (no pointers, no pthread mutexes), so a
 * worker killed at any instant can never wedge the others:
 * - half-open probes and concurrency slots are LEASES: a slot held by a
 *   crashed worker expires (after half_open_timeout_ms for a probe, lease_ms
 *   for a limit slot) and another worker takes it;
 * - transitions take a transition lease word held for microseconds (a
 *   caller that finds it taken waits, yielding, at most ~2 s; a holder that
 *   dies loses it after 1 s of the object's clock and the next caller steals
 *   it);
 * - the hot paths (a CLOSED breaker, an OPEN rejection, a budget, a limit
 *   slot) are lock-free.
 *
 * Time: every process must read the same time base. CLOCK_MONOTONIC (the
 * default) is system-wide on Linux. A custom bw_clock_t must be shared too
 * (tests read a counter that itself lives in shared memory).
 *
 * Handles (bw_shm_t, bw_shm_breaker_t, ...) are process-local: they may be
 * inherited across fork() (the mapping is MAP_SHARED) or opened anew. Every
 * function is thread-safe and process-safe. Nothing here is async-signal-safe.
 *
 * Never truncate a segment that is mapped: a process that then touches a
 * page past the new end is killed by SIGBUS (the kernel's rule for a shared
 * mapping of a shrunk object; no error can be returned). bw_shm_open and
 * object creation check the size again (fstat) and refuse a segment whose
 * size changed; the hot paths cannot afford that check.
 */
#ifndef BREAKWATER_SHM_H
#define BREAKWATER_SHM_H

#include <sys/types.h>

#include "breaker.h"
#include "budget.h"
#include "clock.h"
#include "common.h"
#include "limit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- segments
 * ----------------------------------------------------------------- */

typedef enum bw_shm_mode_e {
  BW_SHM_CREATE = 1,        /* create; BW_E_INVAL if it already exists */
  BW_SHM_ATTACH = 2,        /* attach; BW_E_NOTFOUND if it does not exist */
  BW_SHM_OPEN_OR_CREATE = 3 /* attach if it exists, create otherwise */
} bw_shm_mode_t;

/* Objects a segment can hold. */
#define BW_SHM_MAX_OBJECTS 64u

typedef struct bw_shm_config_s {
  const char *name;   /* required: "/name" or "name" (a leading '/' is
                         added); no other '/'; 1..BW_NAME_MAX bytes */
  bw_shm_mode_t mode; /* default BW_SHM_OPEN_OR_CREATE */
  size_t size;        /* bytes, when creating; default 1 MiB, in
                         [64 KiB, 1 GiB]; attaching takes the segment's */
  bool allow_group;   /* default false: the segment is this user's alone.
                         Creating makes it mode 0600; attaching refuses a
                         segment whose owner is not the effective uid or
                         whose mode is wider than 0600 (anyone who can open
                         it can isolate the breaker). true: deliberate
                         sharing with the members of `group` — creating
                         makes it mode 0660 with group `group` (the creator
                         must be a member, or root), and attaching also
                         accepts a segment of any owner whose group is
                         `group` and whose mode is 0660 or narrower. */
  gid_t group;        /* the group of allow_group; must be 0 (unset) when
                         allow_group is false, and not (gid_t)-1 */
} bw_shm_config_t;

typedef struct bw_shm_s bw_shm_t;

typedef struct bw_shm_stats_s {
  size_t size;      /* bytes mapped */
  size_t used;      /* bytes allocated to the header and objects */
  uint32_t objects; /* objects created in the segment */
  bool created;     /* this handle created the segment */
} bw_shm_stats_t;

/* Fills the documented defaults (name NULL: it must be set). */
BW_EXTERN void bw_shm_config_init(bw_shm_config_t *cfg);

/* Creates and/or attaches a segment (mode 0600, owner only; 0660 with
 * allow_group). Returns NULL and fills err (may be NULL): BW_E_INVAL naming
 * the field for a bad configuration or when creating a segment that exists;
 * BW_E_NOTFOUND when attaching to a segment that does not exist (the
 * message names it); BW_E_INVAL when the segment is not a breakwater
 * segment or not this version (the message names what differs: magic,
 * version, header size, size — a segment truncated since its creation says
 * both sizes); BW_E_INVAL naming `name` (or `group` with allow_group) when
 * the segment's owner or mode is not one this configuration trusts (the
 * message names the owner uid, group, mode and the rule); BW_E_IO when a
 * system call fails (the message has errno's text); BW_E_NOMEM. The handle
 * keeps a descriptor of the segment open (to re-check its size) and is
 * owned by the caller: bw_shm_close. */
BW_EXTERN bw_shm_t *bw_shm_open(const bw_shm_config_t *cfg, bw_error_t *err);

/* Unmaps the segment from this process (the segment and its objects stay
 * until bw_shm_unlink and the last unmap). Every object handle made from it
 * must be freed first. NULL is fine. */
BW_EXTERN void bw_shm_close(bw_shm_t *shm);

/* Removes a segment's name (processes that mapped it keep their mapping).
 * BW_OK, BW_E_NOTFOUND (naming it), BW_E_INVAL (bad name) or BW_E_IO. */
BW_EXTERN int bw_shm_unlink(const char *name, bw_error_t *err);

/* The segment's name as opened ("/name"); "" for NULL. */
BW_EXTERN const char *bw_shm_name(const bw_shm_t *shm);

/* Sizes and object count. NULL shm fills zeros; NULL out is ignored. */
BW_EXTERN void bw_shm_stats(const bw_shm_t *shm, bw_shm_stats_t *out);

/* ---- breakers
 * ----------------------------------------------------------------- */

typedef struct bw_shm_breaker_s bw_shm_breaker_t;

/* Creates the breaker named cfg->name in the segment, or attaches to it if
 * it exists. Supported: trip rules CONSECUTIVE and TIME_WINDOW (with
 * minimum_calls and window_buckets), break_ms with break_multiplier and
 * max_break_ms, half_open_max_calls (at most 64) and success_threshold.
 * half_open_timeout_ms is the probe LEASE: a probe not released within it
 * (its worker crashed or hung) frees its slot for another worker, and its
 * late release is stale. clock (default monotonic), wall_clock and sink are
 * this process's: a transition's event goes to the sink of the process that
 * made it. Refused with BW_E_INVAL naming the field: trip_rule COUNT_WINDOW,
 * slow_call_ms > 0, metrics_only, and — when attaching — any field whose
 * value differs from the creator's (the safer choice than "first creator
 * wins": two workers must never believe they run different breakers).
 * Also BW_E_INVAL for a name in the segment used by another kind of object,
 * BW_E_LIMIT when the segment has no room (objects or bytes), BW_E_TIMEOUT
 * when another process kept the object table locked for ~3 s, BW_E_NOMEM.
 * The segment must outlive the handle. */
BW_EXTERN bw_shm_breaker_t *bw_shm_breaker_new(bw_shm_t *shm,
                                               const bw_breaker_config_t *cfg,
                                               bw_error_t *err);

/* As bw_breaker_acquire: BW_OK and the permit is filled (kind NORMAL or
 * PROBE; a probe permit's `lease_slot` is its lease slot), or BW_E_OPEN. */
BW_EXTERN int bw_shm_breaker_acquire(bw_shm_breaker_t *b, bw_permit_t *p);

/* As bw_breaker_release: BW_OK, BW_E_STALE (an older generation, or a probe
 * whose lease expired: counted, decided nothing) or BW_E_INVAL (unknown
 * outcome: nothing counted). */
BW_EXTERN int bw_shm_breaker_release(bw_shm_breaker_t *b, const bw_permit_t *p,
                                     bw_outcome_t outcome);

/* The shared state (OPEN stays OPEN until a call or poll after the break). */
BW_EXTERN bw_state_t bw_shm_breaker_state(const bw_shm_breaker_t *b);

/* As bw_breaker_retry_in_ms (0, the rest of the break, -1 when ISOLATED). */
BW_EXTERN int64_t bw_shm_breaker_retry_in_ms(const bw_shm_breaker_t *b);

/* Applies OPEN -> HALF_OPEN when the break is over, as an acquire would. */
BW_EXTERN void bw_shm_breaker_poll(bw_shm_breaker_t *b);

/* Operator controls, for every process: isolate (OPEN until reset) and
 * reset (CLOSED, windows and break growth cleared, totals kept). */
BW_EXTERN void bw_shm_breaker_isolate(bw_shm_breaker_t *b);
BW_EXTERN void bw_shm_breaker_reset(bw_shm_breaker_t *b);

/* A snapshot of the shared counters (every process's calls). Fields the
 * shared breaker does not keep are 0: slow, window_slow, shadow_rejected;
 * half_open_in_flight counts unexpired probe leases. */
BW_EXTERN void bw_shm_breaker_stats(const bw_shm_breaker_t *b,
                                    bw_breaker_stats_t *out);

/* The breaker's name ("" for NULL). */
BW_EXTERN const char *bw_shm_breaker_name(const bw_shm_breaker_t *b);

/* The breaker through the breaker interface (breaker.h), kind
 * "shm_breaker": what a pipeline takes (bw_pipeline_add_breaker_if), so
 * its refusals end a call with BW_FAILURE_BREAKER. Owned by the breaker,
 * valid until it is freed; NULL for NULL. */
BW_EXTERN bw_breaker_if_t *bw_shm_breaker_iface(bw_shm_breaker_t *b);

/* Deprecated (0.2; removed in the next release): use bw_shm_breaker_iface.
 * A pipeline no longer turns this limit's BW_E_OPEN into a breaker failure.
 * The breaker as a concurrency limit, kind "shm_breaker": try_acquire
 * answers BW_E_OPEN when the breaker rejects; release maps SUCCESS ->
 * SUCCESS, DROPPED -> FAILURE, IGNORED -> IGNORED and answers BW_OK (a stale
 * release is counted in stats.stale). limit() is 0 when OPEN or ISOLATED,
 * half_open_max_calls when HALF_OPEN, UINT32_MAX otherwise; in_flight() is
 * admitted minus released, over every process. Owned by the breaker. */
BW_EXTERN bw_limit_t *bw_shm_breaker_as_limit(bw_shm_breaker_t *b);

/* Frees this process's handle (the shared state stays). NULL is fine. */
BW_EXTERN void bw_shm_breaker_free(bw_shm_breaker_t *b);

/* ---- retry budgets (token bucket)
 * --------------------------------------------- */

typedef struct bw_shm_budget_s bw_shm_budget_t;

/* Creates or attaches the token-bucket budget cfg->name (budget.h's
 * TOKEN_BUCKET semantics: starts full, a failure costs 1 token, a success
 * adds token_ratio, a retry is allowed while tokens > max_tokens / 2; one
 * atomic word of thousandths). Refused with BW_E_INVAL naming the field:
 * kind RATIO, bad values (as bw_budget_config_validate), and when attaching
 * a max_tokens or token_ratio that differs from the creator's. BW_E_LIMIT,
 * BW_E_NOMEM as bw_shm_breaker_new. */
BW_EXTERN bw_shm_budget_t *bw_shm_budget_new(bw_shm_t *shm,
                                             const bw_budget_config_t *cfg,
                                             bw_error_t *err);
/* As budget.h; NULL b: no-op (false for try_retry). */
BW_EXTERN void bw_shm_budget_on_request(bw_shm_budget_t *b);
BW_EXTERN void bw_shm_budget_on_success(bw_shm_budget_t *b);
BW_EXTERN void bw_shm_budget_on_failure(bw_shm_budget_t *b);
BW_EXTERN bool bw_shm_budget_try_retry(bw_shm_budget_t *b);
/* Shared counters and tokens (window fields 0). NULL b fills zeros. */
BW_EXTERN void bw_shm_budget_stats(const bw_shm_budget_t *b,
                                   bw_budget_stats_t *out);
BW_EXTERN const char *bw_shm_budget_name(const bw_shm_budget_t *b);
/* Frees this process's handle. NULL is fine. */
BW_EXTERN void bw_shm_budget_free(bw_shm_budget_t *b);

/* ---- concurrency limits
 * ------------------------------------------------------- */

/* Most slots a shared limit may have. */
#define BW_SHM_LIMIT_MAX 4096u

typedef struct bw_shm_limit_config_s {
  const char *name;        /* required; 1..BW_NAME_MAX bytes */
  uint32_t max_concurrent; /* default 10, 1..BW_SHM_LIMIT_MAX */
  int64_t lease_ms;        /* a slot not released within lease_ms is free
                              again (its worker crashed or hung); default
                              30000, >= 1 */
  const bw_clock_t *clock; /* default NULL: the coarse monotonic clock
                              when lease_ms >= 1000 (its 1-4 ms ticks are
                              noise next to the lease, and it is the
                              cheaper read), the precise one otherwise */
} bw_shm_limit_config_t;

typedef struct bw_shm_limit_s bw_shm_limit_t;

typedef struct bw_shm_limit_stats_s {
  uint32_t max_concurrent;
  uint32_t in_flight; /* unexpired slots held, over every process */
  uint64_t admitted;  /* admitted + rejected = asks */
  uint64_t rejected;
  uint64_t successes; /* releases by outcome (in time or not) */
  uint64_t dropped;
  uint64_t ignored;
  uint64_t expired;   /* releases after the lease ended (BW_E_TIMEOUT) */
  uint64_t reclaimed; /* expired slots taken over by another call */
} bw_shm_limit_stats_t;

BW_EXTERN void bw_shm_limit_config_init(bw_shm_limit_config_t *cfg);

/* Creates or attaches the limit cfg->name. BW_E_INVAL naming the field for
 * bad values or (attaching) a max_concurrent or lease_ms that differs from
 * the creator's; BW_E_LIMIT, BW_E_NOMEM as bw_shm_breaker_new. */
BW_EXTERN bw_shm_limit_t *bw_shm_limit_new(bw_shm_t *shm,
                                           const bw_shm_limit_config_t *cfg,
                                           bw_error_t *err);

/* Takes a slot (lease until start + lease_ms): BW_OK (the permit's
 * `lease_slot` is the slot), BW_E_FULL. Lock-free; O(max_concurrent) worst. */
BW_EXTERN int bw_shm_limit_try_acquire(bw_shm_limit_t *l, bw_permit_t *p);

/* Frees the slot: BW_OK; BW_E_TIMEOUT when the lease had ended (counted as
 * expired; the slot is freed unless another call already took it over);
 * BW_E_INVAL for an unknown outcome or a permit that is not this limit's. */
BW_EXTERN int bw_shm_limit_release(bw_shm_limit_t *l, const bw_permit_t *p,
                                   bw_limit_outcome_t outcome);

BW_EXTERN void bw_shm_limit_stats(const bw_shm_limit_t *l,
                                  bw_shm_limit_stats_t *out);
BW_EXTERN const char *bw_shm_limit_name(const bw_shm_limit_t *l);

/* The limit through the bw_limit_t interface, kind "shm_limit". Owned by
 * the limit. */
BW_EXTERN bw_limit_t *bw_shm_limit_as_limit(bw_shm_limit_t *l);

/* Frees this process's handle. NULL is fine. */
BW_EXTERN void bw_shm_limit_free(bw_shm_limit_t *l);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_SHM_H */

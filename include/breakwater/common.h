/* breakwater — common definitions: version, export macro, status codes,
 * errors, outcomes, permits and allocator hooks.
 *
 * Every public function returns BW_OK (0) or a negative BW_E_* code unless its
 * comment says otherwise. Codes are append-only: a code, once released, keeps
 * its number forever (retired codes stay as placeholders). */
#ifndef BREAKWATER_COMMON_H
#define BREAKWATER_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BW_VERSION_MAJOR 0
#define BW_VERSION_MINOR 1
#define BW_VERSION_PATCH 0
#define BW_VERSION_HEX \
  ((BW_VERSION_MAJOR << 16) | (BW_VERSION_MINOR << 8) | BW_VERSION_PATCH)

#if defined(BW_STATIC)
#define BW_EXTERN
#elif defined(__GNUC__) || defined(__clang__)
#define BW_EXTERN __attribute__((visibility("default")))
#else
#define BW_EXTERN
#endif

/* The one list of status codes: XX(NAME, value, message). Append only. */
#define BW_ERRNO_MAP(XX)                                             \
  XX(OK, 0, "success")                                               \
  XX(E_INVAL, -1, "invalid argument")                                \
  XX(E_NOMEM, -2, "out of memory")                                   \
  XX(E_OPEN, -3, "circuit open: call rejected")                      \
  XX(E_FULL, -4, "no capacity left: call rejected")                  \
  XX(E_TIMEOUT, -5, "timed out")                                     \
  XX(E_NOTFOUND, -6, "not found")                                    \
  XX(E_LIMIT, -7, "object limit reached and nothing can be evicted") \
  XX(E_IO, -8, "input/output error")                                 \
  XX(E_STALE, -9, "permit from an earlier state generation")         \
  XX(E_RANGE, -10, "value out of range")                             \
  XX(E_GAVE_UP, -11, "gave up: no more attempts")                    \
  XX(E_DEADLINE, -12, "deadline exceeded or too little time left")

typedef enum bw_status_e {
#define BW__XX(name, value, msg) BW_##name = (value),
  BW_ERRNO_MAP(BW__XX)
#undef BW__XX
} bw_status_t;

/* A message for any status code; never NULL ("unknown error" for others). */
BW_EXTERN const char *bw_strerror(int code);
/* The code's name without prefix, e.g. "E_OPEN"; "UNKNOWN" for others. */
BW_EXTERN const char *bw_err_name(int code);

/* Library version as "MAJOR.MINOR.PATCH"; compare with BW_VERSION_HEX. */
BW_EXTERN const char *bw_version(void);

/* Error detail filled by constructors. `field` names the offending
 * configuration field ("" when no single field is at fault); `message` is a
 * complete sentence that names the field and the rule, e.g.
 * "failure_ratio must be in (0, 1] (got 1.5)". */
typedef struct bw_error_s {
  int code;
  char field[48];
  char message[208];
} bw_error_t;

/* The outcome of a call, as the caller judges it: the one outcome type that
 * every release takes (breakers, limits, bulkheads, limiters, strategies).
 * - SUCCESS: completed; for an adaptive limiter its round-trip time is a
 *   sample.
 * - FAILURE: the dependency failed the call (a 5xx, a reset). A concurrency
 *   limit reads it as DROPPED: shed, refused or timed out downstream, a
 *   congestion signal. BW_DROPPED is the same value under that name.
 * - IGNORED: counts neither way (a 4xx: the caller was wrong, the dependency
 *   is not sick; a cancelled call).
 * - TIMED_OUT: the caller stopped waiting (no answer within its timeout): a
 *   failure, and the dependency may still be working on the call. An
 *   adaptive limiter keeps the slot a while longer; the interfaces
 *   (bw_limit_release, bw_breaker_if_release) hand it as FAILURE to objects
 *   that do not tell the two apart. The direct bw_breaker_release /
 *   bw_shm_breaker_release / bw_redis_breaker_release accept SUCCESS,
 *   FAILURE and IGNORED only (BW_E_INVAL otherwise), as before.
 * Values are append-only. */
typedef enum bw_outcome_e {
  BW_SUCCESS = 0,
  BW_FAILURE = 1,
  BW_IGNORED = 2,
  BW_TIMED_OUT = 3,
  BW_DROPPED = BW_FAILURE /* the name a concurrency limit uses */
} bw_outcome_t;

/* "success", "failure", "ignored", "timed_out" or "unknown" (BW_DROPPED is
 * "failure"; bw_limit_outcome_name says "dropped"). Never NULL. */
BW_EXTERN const char *bw_outcome_name(bw_outcome_t o);

/* Caller-supplied context carried into events (a request id, an order id). */
typedef struct bw_kv_s {
  const char *key;
  const char *value;
} bw_kv_t;

typedef struct bw_context_s {
  const bw_kv_t *items;
  size_t count;
} bw_context_t;

/* Sets this thread's current context (NULL clears it) and returns the previous
 * one, so callers can save and restore around a request. Events emitted on
 * this thread carry it unless a permit carries its own. The pointed-to data
 * must stay valid while it is current. */
BW_EXTERN const bw_context_t *bw_context_set(const bw_context_t *ctx);
BW_EXTERN const bw_context_t *bw_context_current(void);

/* Longest object name accepted anywhere (breakers, registry keys), in bytes. */
#define BW_NAME_MAX 200

/* Permit kinds. */
#define BW_PERMIT_NORMAL 0u /* admitted in the normal flow */
#define BW_PERMIT_PROBE 1u  /* a half-open trial call */
#define BW_PERMIT_PASSTHROUGH \
  2u /* admitted only because of metrics-only mode */

/* permit.flags bits. */
#define BW_PERMIT_FLAG_FALLBACK                                            \
  1u /* issued by a Redis breaker's local fallback breaker while Redis was \
        unavailable: its outcome goes back to that breaker */
#define BW_PERMIT_FLAG_AGED                                             \
  2u /* counted by an adaptive limiter among its calls in flight by age \
        (stuck_ratio): its release takes it out again */
#define BW_PERMIT_FLAG_STUCK_TIMEOUT                                       \
  4u /* an adaptive limiter cut this attempt's timeout to its stuck age    \
        (stuck_timeout): a TIMED_OUT release keeps the slot as long as the \
        attempt could have run (timeout_ms) */

/* permit.lease_slot when the permit holds no slot. */
#define BW_PERMIT_NO_SLOT UINT32_MAX

/* A permit: filled by acquire, handed back to release. The caller owns it (it
 * lives on the caller's stack; 56 bytes, no allocation) and treats it as
 * opaque apart from `context`, which the caller may set between acquire and
 * release: it then travels into any event that release causes. Each field
 * has one meaning; a policy fills the fields it uses and sets the others to
 * their neutral value (0, or the one given). */
typedef struct bw_permit_s {
  /* When the call was admitted, on the policy's clock (latency, slow calls,
   * RTT samples, lease expiry). A limiter's untimed permit holds
   * BW_LIMITER_UNTIMED; the Redis breaker, which times nothing, 0. */
  int64_t start_ns;
  /* The generation of the object's state the permit was issued in: an
   * outcome from an older generation never decides a newer state. Breakers
   * (in-process, shared-memory, Redis): the state generation, so a call
   * started before the breaker opened cannot close it. Limiters: the
   * congestion generation, so the calls in flight when the dependency
   * started shedding decrease the limit once, not once each. 0 elsewhere. */
  uint64_t generation;
  /* A bulkhead's execution deadline for the call, a clock reading:
   * min(admission + timeout_ms, the acquiring thread's deadline);
   * BW_DEADLINE_NONE_NS (INT64_MAX) for none and for other policies. Read it
   * with bw_bulkhead_deadline_ns / bw_bulkhead_expired. */
  int64_t deadline_ns;
  uint32_t kind; /* BW_PERMIT_NORMAL, _PROBE or _PASSTHROUGH */
  /* The slot the permit leases in shared memory: a shared-memory breaker's
   * half-open probe slot, a shared-memory limit's slot. BW_PERMIT_NO_SLOT
   * otherwise. */
  uint32_t lease_slot;
  /* A limiter's count of calls in flight when this one was admitted, this
   * one included (tells a saturated limit from an idle one); 0 elsewhere
   * (a limiter reads 0 as "unknown, count as saturated"). */
  uint32_t inflight_at_acquire;
  /* A limiter's limit in force when this call was admitted (a decrease
   * scales the lower of it and the current limit); 0 elsewhere (a limiter
   * then uses its current limit). */
  uint32_t limit_at_acquire;
  uint32_t flags; /* BW_PERMIT_FLAG_* bits; 0 for most permits */
  /* With BW_PERMIT_FLAG_STUCK_TIMEOUT: the attempt's timeout, in ms, before
   * the limiter cut it; 0 elsewhere. */
  uint32_t timeout_ms;
  const bw_context_t *context; /* the caller's, or NULL */
} bw_permit_t;

/* Fills *p as a permit admitted at start_ns with `kind`, every other field
 * at its neutral value (generation 0, no deadline, no lease slot, no
 * counts, no flags, no context). For implementers of a policy (limit.h,
 * breaker.h, strategy.h); a policy then sets the fields it uses. */
static inline void bw_permit_init(bw_permit_t *p, int64_t start_ns,
                                  uint32_t kind) {
  p->start_ns = start_ns;
  p->generation = 0;
  p->deadline_ns = INT64_MAX;
  p->kind = kind;
  p->lease_slot = BW_PERMIT_NO_SLOT;
  p->inflight_at_acquire = 0;
  p->limit_at_acquire = 0;
  p->flags = 0;
  p->timeout_ms = 0;
  p->context = NULL;
}

/* Allocator hooks. Must be called before any object is created; all four are
 * required. Returns BW_E_INVAL if any is NULL. Not thread-safe. */
typedef void *(*bw_malloc_fn)(size_t size);
typedef void *(*bw_realloc_fn)(void *ptr, size_t size);
typedef void *(*bw_calloc_fn)(size_t count, size_t size);
typedef void (*bw_free_fn)(void *ptr);
BW_EXTERN int bw_replace_allocator(bw_malloc_fn m, bw_realloc_fn r,
                                   bw_calloc_fn c, bw_free_fn f);
/* Frees memory that breakwater handed to the caller (e.g. a Prometheus text
 * buffer). NULL is fine. */
BW_EXTERN void bw_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_COMMON_H */

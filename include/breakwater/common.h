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

/* A permit: filled by acquire, handed back to release. The caller owns it (it
 * lives on the caller's stack); it carries the start time and the state
 * generation it was issued in, so an outcome from an older generation never
 * decides a newer state. `context` may be set by the caller between acquire
 * and release; it then travels into any event that release causes. */
typedef struct bw_permit_s {
  uint64_t generation;
  int64_t start_ns;
  uint32_t kind;
  uint32_t reserved;
  const bw_context_t *context;
} bw_permit_t;

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

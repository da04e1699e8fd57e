/* breakwater — the extension interface (part of libbreakwater, pkg-config
 * module breakwater): what the components built on the core (the stores,
 * the drivers, the simulator) and third-party extensions may use of it
 * beyond the policy API. Nothing here is needed to use a policy; it is what
 * an object of your own needs to behave like one of ours:
 *
 *  - allocate through the allocator the user installed with
 *    bw_replace_allocator (so a Python or Node host sees one allocator);
 *  - fill a bw_error_t that names the offending field and the rule;
 *  - check an object name by the same rule as the core's objects;
 *  - emit an event on a sink with the calling thread's context;
 *  - emit a breaker transition and compute a breaker's break the way the
 *    core's breaker does, so that every breaker implementation (in process,
 *    shared memory, Redis) writes the same events;
 *  - count in a time window by the core's rules.
 *
 * These functions are stable API like the rest of the core: same major
 * version, same behaviour. Every one is thread-safe unless its comment says
 * otherwise. */
#ifndef BREAKWATER_EXT_H
#define BREAKWATER_EXT_H

#include <stdarg.h>

#include "breaker.h"
#include "clock.h"
#include "common.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define BW_PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define BW_PRINTF_LIKE(fmt, args)
#endif

/* ---- allocation through the user's hooks (bw_replace_allocator) ---------
 * Each behaves as its libc namesake, except that a size of 0 allocates one
 * byte (never NULL for success). NULL means out of memory. Free with bw_free
 * (common.h), which accepts NULL. */
BW_EXTERN void *bw_malloc(size_t size);
BW_EXTERN void *bw_calloc(size_t count, size_t size);
BW_EXTERN void *bw_realloc(void *ptr, size_t size);
/* A copy of the NUL-terminated s (not NULL), or NULL when out of memory. */
BW_EXTERN char *bw_strdup(const char *s);
/* A copy of len bytes of data (which may be NULL when len is 0) followed by
 * a NUL byte, so text stays a C string; NULL when out of memory. */
BW_EXTERN void *bw_memdup(const void *data, size_t len);

/* Alignment of bw_calloc_aligned: two cache lines, because x86 prefetchers
 * fetch adjacent lines in pairs, so data that two threads write must sit
 * this far apart. */
#define BW_ALIGN_APART 128
/* Zeroed memory aligned to BW_ALIGN_APART (for objects with per-thread
 * counters), or NULL. Free it with bw_free_aligned, never bw_free. */
BW_EXTERN void *bw_calloc_aligned(size_t size);
/* Frees what bw_calloc_aligned returned. NULL is fine. */
BW_EXTERN void bw_free_aligned(void *ptr);

/* ---- per-thread stripes -------------------------------------------------
 * Counters that every call bumps are split into stripes, so that two cores
 * never write the same cache line. bw_stripe() is the calling thread's
 * stripe, in [0, BW_STRIPES). Each of the first BW_STRIPES_EXCLUSIVE stripes
 * belongs to one live thread at a time (claimed on its first call, given
 * back when the thread exits), so its owner may update the stripe's
 * counters with a plain atomic load and store; threads beyond that share
 * the last BW_STRIPES_SHARED stripes, whose counters need atomic
 * read-modify-writes. */
#define BW_STRIPES_EXCLUSIVE 64u
#define BW_STRIPES_SHARED 16u
#define BW_STRIPES (BW_STRIPES_EXCLUSIVE + BW_STRIPES_SHARED)
BW_EXTERN unsigned bw_stripe(void);
/* How many stripes have been handed out in this process so far (never more
 * than BW_STRIPES): a reader that sums an object's stripes need scan only
 * [0, bw_stripes_used()). */
BW_EXTERN unsigned bw_stripes_used(void);

/* ---- errors that name the field ------------------------------------------
 * Fills err (when not NULL): its code, its field (truncated to fit; NULL is
 * ""), and a message formatted from fmt — a whole sentence that names the
 * field and the rule, e.g. "path must not be empty". Returns code, so a
 * constructor can `return bw_error_set(err, BW_E_INVAL, "path", ...)`. */
BW_EXTERN int bw_error_set(bw_error_t *err, int code, const char *field,
                           const char *fmt, ...) BW_PRINTF_LIKE(4, 5);
/* Sets err (when not NULL) to BW_OK with an empty field and message. */
BW_EXTERN void bw_error_clear(bw_error_t *err);

/* Checks an object name by the core's rule: not NULL, not empty, at most
 * BW_NAME_MAX bytes. BW_OK, or BW_E_INVAL with err naming `field`. */
BW_EXTERN int bw_name_check(const char *name, const char *field,
                            bw_error_t *err);

/* ---- events -------------------------------------------------------------
 * Emits one event on sink (nothing when sink is NULL): its wall time is read
 * from `wall` (NULL: the realtime clock), its monotonic time is mono_ns (the
 * emitting object's clock reading), its context is ctx, or the calling
 * thread's (bw_context_current) when ctx is NULL. Everything it points to
 * need live only during the call. */
BW_EXTERN void bw_event_emit(bw_sink_t *sink, const bw_clock_t *wall,
                             int64_t mono_ns, bw_event_type_t type,
                             const char *name, const char *reason,
                             const bw_field_t *fields, size_t nfields,
                             const bw_context_t *ctx);

/* A breaker's state change as the core's breaker writes it: event `type`
 * (BW_EV_CIRCUIT_*), with the fields break_ms (only when break_ms >= 0) and
 * from (the state's name). NULL sink: nothing. */
BW_EXTERN void bw_breaker_emit_transition(
    bw_sink_t *sink, const bw_clock_t *wall, const char *name, int64_t now_ns,
    bw_event_type_t type, const char *reason, bw_state_t from, int64_t break_ms,
    const bw_context_t *ctx);

/* The break after a breaker's opens-th consecutive opening (opens >= 1):
 * base_ns x multiplier^(opens - 1), capped at cap_ns. Computed in double
 * and capped before converting, so it never overflows. */
BW_EXTERN int64_t bw_breaker_break_after(int64_t base_ns, double multiplier,
                                         uint64_t opens, int64_t cap_ns);

/* For a breaker that stands in for state kept elsewhere (the Redis
 * breaker's local fallback, when Redis goes away during a shared break):
 * opens b now for remaining_ns (clamped to >= 0; 0 means HALF_OPEN at the
 * next acquire or poll) as one more opening, so that when the break ends b
 * probes with its own half-open rules (half_open_max_calls probes,
 * success_threshold successes close it, a failed probe reopens it for its
 * next break). Emits circuit_opened with `reason` (break_ms the remaining
 * break) and bumps the generation (permits in flight become stale). An
 * ISOLATED or DISABLED breaker is left alone (an operator's decision wins);
 * NULL is fine. */
BW_EXTERN void bw_breaker_open_for(bw_breaker_t *b, int64_t remaining_ns,
                                   const char *reason);

/* ---- time-window counters -----------------------------------------------
 * How the core's breaker (time window) and budget (ratio window) count over
 * the last `buckets` buckets of a clock: a bucket's epoch is its index,
 * floor(now_ns / bucket_ns), mod 2^32, and each count is a 64-bit word
 * packing (epoch << 32 | count), 0 when empty. A writer moves a word to a
 * newer bucket in place, with no lock and no clearing pass; a reader counts
 * only the words whose bucket is inside the window. Both rules are pure: the
 * caller keeps the words (in shared memory, say) and does the atomics. */

/* The word that counts one more in bucket `epoch` after `word`: true with
 * *next set; false when nothing is to be written, because the count is
 * saturated at 2^32 - 1 or the word already holds a newer bucket (the
 * caller read its clock long ago: that bucket has left the window). A
 * writer that shares the word stores *next by compare-and-swap and, when
 * the word changed meanwhile, asks again with the value it found. */
BW_EXTERN bool bw_window_word_next(uint64_t word, uint32_t epoch,
                                   uint64_t *next);

/* The count in `word` when its bucket is one of the `buckets` buckets that
 * end with bucket `epoch` (that one and the buckets - 1 before it), else 0.
 * Epochs compare modulo 2^32: a word 2^32 buckets old counts again, so
 * words that may sit idle that long must be cleared. */
BW_EXTERN uint32_t bw_window_word_count(uint64_t word, uint32_t epoch,
                                        uint32_t buckets);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_EXT_H */

/* breakwater — a seeded pseudo-random generator (xoshiro256**, seeded through
 * splitmix64). Never rand(): results must be reproducible for a seed, and two
 * clients with different seeds must not move in lock-step.
 *
 * bw_rand_t is a value type the caller owns; it is not thread-safe — give each
 * thread (or each retry iterator) its own, or derive one with bw_rand_split. */
#ifndef BREAKWATER_RAND_H
#define BREAKWATER_RAND_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bw_rand_s {
  uint64_t s[4];
} bw_rand_t;

/* Seeds the generator; every seed (0 included) gives a valid, distinct state.
 */
BW_EXTERN void bw_rand_seed(bw_rand_t *r, uint64_t seed);
/* Next 64 random bits. */
BW_EXTERN uint64_t bw_rand_next(bw_rand_t *r);
/* Uniform double in [0, 1) with 53 bits of precision. */
BW_EXTERN double bw_rand_double(bw_rand_t *r);
/* Uniform integer in [lo, hi] (inclusive), without modulo bias. lo <= hi. */
BW_EXTERN int64_t bw_rand_range(bw_rand_t *r, int64_t lo, int64_t hi);
/* Seeds `child` from `parent` so that the two streams do not overlap in
 * practice (advances parent by one jump of 2^128). */
BW_EXTERN void bw_rand_split(bw_rand_t *parent, bw_rand_t *child);
/* A seed from the operating system's entropy (for production use when no seed
 * is configured). */
BW_EXTERN uint64_t bw_rand_os_seed(void);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_RAND_H */

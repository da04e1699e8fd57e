/* breakwater — the time-window counter of the breaker's time window and the
 * budget's ratio window (private to the core).
 *
 * A window is the last B buckets of a clock, each bucket_ns long; a bucket's
 * epoch is its index (floor(now / bucket_ns)) mod 2^32. Counts are kept in
 * 64-bit words that each pack (epoch << 32 | count): the first writer of a
 * newer bucket recycles a word in place, without a lock or a clearing pass,
 * and a reader counts only the words whose bucket is inside the window. 0 is
 * an empty word. The rules themselves are bw_window_word_next and
 * bw_window_word_count (ext.h), which components that keep such words out of
 * the core's reach (shared memory) call; they are defined here, inline, for
 * the core's hot paths, and window.c exports them.
 *
 * Epochs compare modulo 2^32, so a word 2^32 buckets old would alias into
 * the window: a stripe that has been quiet for a whole window is wiped
 * (bw__window_wipe) before it counts again. */
#ifndef BREAKWATER_WINDOW_H
#define BREAKWATER_WINDOW_H

#include "internal.h"

static inline bool bw__window_next(uint64_t word, uint32_t epoch,
                                   uint64_t *next) {
  uint32_t e = (uint32_t)(word >> 32);
  if (e == epoch) { /* (an empty word in epoch 0 lands here too: 0 + 1) */
    if ((uint32_t)word == UINT32_MAX) return false; /* saturate, never wrap */
    *next = word + 1;
    return true;
  }
  /* The word holds a newer bucket: ours has already left the window. */
  if (word != 0 && (int32_t)(epoch - e) < 0) return false;
  *next = ((uint64_t)epoch << 32) | 1u;
  return true;
}

static inline uint32_t bw__window_count(uint64_t word, uint32_t epoch,
                                        uint32_t buckets) {
  return (uint32_t)(epoch - (uint32_t)(word >> 32)) < buckets ? (uint32_t)word
                                                              : 0;
}

/* Counts one in bucket `epoch` of `word`, a word of `stripe`. The owner of
 * an exclusive stripe is its only writer and stores the result; a shared
 * stripe's writers race, so they compare-and-swap. */
static inline void bw__window_bump(_Atomic uint64_t *word, uint32_t epoch,
                                   unsigned stripe) {
  uint64_t cur = BW__LOAD(*word), next;
  while (bw__window_next(cur, epoch, &next)) {
    if (stripe < BW__EXCL_STRIPES) {
      atomic_store_explicit(word, next, memory_order_relaxed);
      return;
    }
    if (atomic_compare_exchange_weak_explicit(
            word, &cur, next, memory_order_relaxed, memory_order_relaxed))
      return;
  }
}

/* Wipes the n words of a stripe that has counted nothing for a whole window,
 * before it counts in bucket `epoch`. The owner of an exclusive stripe
 * zeroes them. A shared stripe may have another writer already counting in
 * `epoch`: only the words of other buckets are cleared there, each by CAS (a
 * word exactly a multiple of 2^32 buckets old survives: accepted). */
static inline void bw__window_wipe(_Atomic uint64_t *w, size_t n,
                                   uint32_t epoch, unsigned stripe) {
  for (size_t k = 0; k < n; k++) {
    uint64_t v;
    if (stripe < BW__EXCL_STRIPES) {
      atomic_store_explicit(&w[k], 0, memory_order_relaxed);
      continue;
    }
    v = BW__LOAD(w[k]);
    while (v != 0 && (uint32_t)(v >> 32) != epoch &&
           !atomic_compare_exchange_weak_explicit(
               &w[k], &v, 0, memory_order_relaxed, memory_order_relaxed)) {
    }
  }
}

#endif /* BREAKWATER_WINDOW_H */

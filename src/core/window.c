/* The time-window counter's rules, exported for the components (ext.h); the
 * core's breaker and budget use the inline definitions of window.h. */
#include "window.h"

bool bw_window_word_next(uint64_t word, uint32_t epoch, uint64_t *next) {
  return bw__window_next(word, epoch, next);
}

uint32_t bw_window_word_count(uint64_t word, uint32_t epoch, uint32_t buckets) {
  return bw__window_count(word, epoch, buckets);
}

/* tests/oom.h — counting allocator hooks with a "fail at N" knob, for
 * out-of-memory tests (header-only; each test program gets its own state).
 *
 *   oom_install();                      // once, before any object exists
 *   for (long n = 1;; n++) {
 *     long live = oom_live();
 *     oom_fail_at(n, false);            // fail the nth allocation from now
 *     int rc = scenario();              // must return BW_OK or BW_E_NOMEM
 *     long injected = oom_injected();
 *     oom_fail_at(0, false);            // stop failing before checking
 *     assert live == oom_live();        // nothing leaked, failure or not
 *     if (injected == 0) break;         // the scenario ran to the end
 *   }
 *
 * Every allocation attempt counts (malloc, calloc, and realloc), so raising
 * N walks the failure through every allocation site in turn. `sticky` makes
 * every attempt from the nth on fail too, which exercises the cleanup paths
 * when memory stays short. `live` is successful allocations minus frees since
 * oom_install: compare it before and after to find leaks. The counters are
 * atomic so concurrency tests may use the hooks too. */
#ifndef BW_TESTS_OOM_H
#define BW_TESTS_OOM_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "breakwater/common.h"

static atomic_long oom_attempts_; /* attempts since the last oom_fail_at */
static atomic_long oom_fail_at_;  /* 0 = never fail */
static atomic_bool oom_sticky_;
static atomic_long oom_injected_; /* failures injected since oom_fail_at */
static atomic_long oom_live_;     /* allocations minus frees */

/* True when this attempt must fail. */
static inline bool oom_should_fail_(void) {
  long n = atomic_fetch_add(&oom_attempts_, 1) + 1;
  long at = atomic_load(&oom_fail_at_);
  if (at <= 0) return false;
  if (n == at || (n > at && atomic_load(&oom_sticky_))) {
    atomic_fetch_add(&oom_injected_, 1);
    return true;
  }
  return false;
}

static inline void *oom_malloc_(size_t size) {
  void *p;
  if (oom_should_fail_()) {
    errno = ENOMEM;
    return NULL;
  }
  p = malloc(size);
  if (p != NULL) atomic_fetch_add(&oom_live_, 1);
  return p;
}

static inline void *oom_calloc_(size_t count, size_t size) {
  void *p;
  if (oom_should_fail_()) {
    errno = ENOMEM;
    return NULL;
  }
  p = calloc(count, size);
  if (p != NULL) atomic_fetch_add(&oom_live_, 1);
  return p;
}

static inline void *oom_realloc_(void *ptr, size_t size) {
  void *p;
  if (oom_should_fail_()) {
    errno = ENOMEM;
    return NULL; /* like realloc: the old block stays valid */
  }
  p = realloc(ptr, size);
  if (p != NULL && ptr == NULL) atomic_fetch_add(&oom_live_, 1);
  return p;
}

static inline void oom_free_(void *ptr) {
  int saved = errno; /* free must not clobber errno */
  if (ptr != NULL) atomic_fetch_sub(&oom_live_, 1);
  free(ptr);
  errno = saved;
}

/* Installs the counting hooks (pass-through until oom_fail_at). Call before
 * creating any breakwater object. Returns bw_replace_allocator's result. */
static inline int oom_install(void) {
  atomic_store(&oom_fail_at_, 0);
  atomic_store(&oom_attempts_, 0);
  atomic_store(&oom_injected_, 0);
  return bw_replace_allocator(oom_malloc_, oom_realloc_, oom_calloc_,
                              oom_free_);
}

/* Fails the nth allocation attempt from now (and every later one if sticky);
 * n = 0 turns failing off. Resets the attempt and injected counts. */
static inline void oom_fail_at(long n, bool sticky) {
  atomic_store(&oom_fail_at_, 0);
  atomic_store(&oom_attempts_, 0);
  atomic_store(&oom_injected_, 0);
  atomic_store(&oom_sticky_, sticky);
  atomic_store(&oom_fail_at_, n);
}

/* Allocation attempts since the last oom_fail_at (or oom_install). */
static inline long oom_attempts(void) {
  return atomic_load(&oom_attempts_);
}
/* Failures injected since the last oom_fail_at. */
static inline long oom_injected(void) {
  return atomic_load(&oom_injected_);
}
/* Blocks allocated through the hooks and not yet freed. */
static inline long oom_live(void) {
  return atomic_load(&oom_live_);
}

#endif /* BW_TESTS_OOM_H */

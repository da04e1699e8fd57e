/* tests/oom.h — counting allocator hooks with a "fail at N" knob, for
 * out-of-memory tests (header-only; each test program gets its own state),
 * and the walk that uses them.
 *
 *   oom_install();                      // once, before any object exists
 *   long runs = oom_walk(scenario, &ctx, false);  // the loop below
 *
 * The walk runs this loop (write it out only when a run needs something the
 * walk does not do, such as setup between runs outside the failing window):
 *
 *   for (long n = 1;; n++) {
 *     long live = oom_live();
 *     oom_fail_at(n, false);            // fail the nth allocation from now
 *     int rc = scenario(ctx);           // must return BW_OK or BW_E_NOMEM
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
/* cmocka's own prerequisites, then cmocka (fail_msg) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

/* ---- the walk ------------------------------------------------------------ */

/* A scenario for the walk: creates, uses and frees what it tests while the
 * failing allocator is armed, asserting what it must on the way, and returns
 * BW_OK, or BW_E_NOMEM when an allocation failure stopped it. It may read
 * oom_injected(): 0 at its end means this is the clean run, the last. */
typedef int (*oom_scenario_fn)(void *ctx);

/* A scenario still meeting an injected failure after this many runs never
 * gets to its end: the walk fails rather than loop for ever. */
#define OOM_WALK_MAX_RUNS 100000L

/* The walk, both kinds: see oom_walk and oom_walk_lenient below. A failure
 * is reported at the caller's file and line. */
static inline long oom_walk_at_(oom_scenario_fn scenario, void *ctx,
                                bool sticky, bool strict, long *nomem,
                                const char *file, int line) {
  const char *how = sticky ? " (sticky)" : "";
  long n, failures = 0;
  for (n = 1; n <= OOM_WALK_MAX_RUNS; n++) {
    long live = oom_live(), injected, leaked;
    int rc;
    oom_fail_at(n, sticky);
    rc = scenario(ctx);
    injected = oom_injected();
    oom_fail_at(0, false); /* stop failing before checking */
    leaked = oom_live() - live;
    if (leaked != 0) {
      print_error("allocation %ld failing%s: %ld block(s) leaked\n", n, how,
                  leaked);
      _fail(file, line);
    }
    if (injected == 0) { /* the scenario ran to the end untouched */
      if (rc != BW_OK) {
        print_error("the clean run (%ld) answered %s, not BW_OK\n", n,
                    bw_err_name(rc));
        _fail(file, line);
      }
      if (nomem != NULL) *nomem = failures;
      return n;
    }
    if (rc == BW_E_NOMEM) {
      failures++;
    } else if (strict || rc != BW_OK) {
      print_error(
          "allocation %ld failing%s: the scenario answered %s, not "
          "%s\n",
          n, how, bw_err_name(rc),
          strict ? "BW_E_NOMEM" : "BW_OK or BW_E_NOMEM");
      _fail(file, line);
    }
  }
  print_error("the scenario met an injected failure in each of %ld runs\n",
              OOM_WALK_MAX_RUNS);
  _fail(file, line);
  return n; /* not reached: _fail jumps out of the test */
}

/* Runs scenario(ctx) with the nth allocation attempt failing (and every
 * later one too when sticky), for n = 1, 2, ... until a run meets no
 * injected failure, as in the loop at the top. Fails the test when a run
 * leaks (oom_live() differs after it), when a run with a failure injected
 * answers anything but BW_E_NOMEM, or when the clean run answers anything
 * but BW_OK. Returns the number of runs, the clean one included: without
 * sticky, the scenario makes runs - 1 allocation attempts. */
#define oom_walk(scenario, ctx, sticky) \
  oom_walk_at_((scenario), (ctx), (sticky), true, NULL, __FILE__, __LINE__)

/* The same for a scenario that may survive a failed allocation and still
 * answer BW_OK (a failure the code under test absorbs by design, or one
 * after the part that must fail): a run with a failure injected may answer
 * BW_OK or BW_E_NOMEM. *nomem (long *, may be NULL) gets the number of runs
 * that answered BW_E_NOMEM. */
#define oom_walk_lenient(scenario, ctx, sticky, nomem) \
  oom_walk_at_((scenario), (ctx), (sticky), false, (nomem), __FILE__, __LINE__)

#endif /* BW_TESTS_OOM_H */

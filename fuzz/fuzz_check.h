/* breakwater fuzzing — the one assertion the harnesses use.
 *
 * A harness checks invariants, not just "no crash": a broken invariant
 * prints what failed and aborts, which libFuzzer reports as a crash and
 * saves as an artifact to reproduce it (./fuzz_NAME artifact). */
#ifndef BW_FUZZ_CHECK_H
#define BW_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
              __LINE__);                                                 \
      abort();                                                           \
    }                                                                    \
  } while (0)

#endif /* BW_FUZZ_CHECK_H */

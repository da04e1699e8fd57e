/* For the shared-memory tests (test_shm.c, conc_shm.c): a segment name of
 * their own and a segment opened by name. */
#ifndef BW_TEST_SHM_TEST_H
#define BW_TEST_SHM_TEST_H

#include <stdio.h>
#include <unistd.h>

#include "breakwater/shm.h"
#include "bw_test.h"

/* A segment name unique to this process and call, "/<prefix>_<pid>_<n>";
 * a segment left under it by a crashed earlier run is unlinked. */
static inline void bwt_shm_fresh_name(char *buf, size_t size,
                                      const char *prefix) {
  static int seq;
  snprintf(buf, size, "/%s_%ld_%d", prefix, (long)getpid(), ++seq);
  bw_shm_unlink(buf, NULL);
}

/* Opens segment `name` in `mode` with the other options at their defaults;
 * NULL (why printed) when it cannot. */
static inline bw_shm_t *bwt_shm_open(const char *name, bw_shm_mode_t mode) {
  bw_shm_config_t sc;
  bw_error_t err;
  bw_shm_t *seg;
  bw_shm_config_init(&sc);
  sc.name = name;
  sc.mode = mode;
  seg = bw_shm_open(&sc, &err);
  if (seg == NULL) print_error("bw_shm_open %s: %s\n", name, err.message);
  return seg;
}

#endif

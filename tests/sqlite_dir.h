/* For the SQLite store's tests: a fresh temporary directory holding one
 * store file, made by bwt_sqlite_dir_make and removed (the file, its -wal
 * and -shm companions, then the directory) by bwt_sqlite_dir_remove, and a
 * store opened or the test failed. */
#ifndef BW_TEST_SQLITE_DIR_H
#define BW_TEST_SQLITE_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "breakwater/store_sqlite.h"
#include "bw_test.h"

typedef struct bwt_sqlite_dir_s {
  char dir[64];   /* /tmp/<prefix>-XXXXXX */
  char path[128]; /* dir/<file> */
} bwt_sqlite_dir_t;

/* Makes /tmp/<prefix>-XXXXXX and names <file> in it. 0, or -1. */
static inline int bwt_sqlite_dir_make(bwt_sqlite_dir_t *d, const char *prefix,
                                      const char *file) {
  snprintf(d->dir, sizeof(d->dir), "/tmp/%s-XXXXXX", prefix);
  if (mkdtemp(d->dir) == NULL) return -1;
  snprintf(d->path, sizeof(d->path), "%s/%s", d->dir, file);
  return 0;
}

/* Removes the store file, its -wal and -shm files and the directory. */
static inline void bwt_sqlite_dir_remove(const bwt_sqlite_dir_t *d) {
  static const char *const suffix[] = {"", "-wal", "-shm"};
  char p[160];
  size_t i;
  for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
    snprintf(p, sizeof(p), "%s%s", d->path, suffix[i]);
    unlink(p);
  }
  rmdir(d->dir);
}

/* Opens the store at path (busy_timeout_ms >= 0 replaces the default), or
 * fails the test. */
static inline bw_sqlite_t *bwt_sqlite_open(const char *path,
                                           int64_t busy_timeout_ms) {
  bw_sqlite_config_t sc;
  bw_error_t err;
  bw_sqlite_t *db;
  bw_sqlite_config_init(&sc);
  sc.path = path;
  if (busy_timeout_ms >= 0) sc.busy_timeout_ms = busy_timeout_ms;
  db = bw_sqlite_open(&sc, &err);
  if (db == NULL) fail_msg("bw_sqlite_open %s: %s", path, err.message);
  return db;
}

#endif

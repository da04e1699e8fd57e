/* Component sqlite: library libbreakwater_sqlite, pkg-config module
 * breakwater-sqlite, CMake target breakwater::sqlite. */
/* breakwater — the SQLite store: durable queues (with their dead-letter
 * queues and queue guards) and idempotency records in one SQLite file,
 * behind the store.h interfaces. Library breakwater_sqlite (links SQLite).
 *
 *   bw_sqlite_config_t sc;
 *   bw_sqlite_config_init(&sc);
 *   sc.path = "/var/lib/app/breakwater.db";
 *   bw_sqlite_t *db = bw_sqlite_open(&sc, &err);   // names the path on error
 *   bw_queue_store_config_t qc;
 *   bw_queue_store_config_init(&qc);
 *   qc.name = "webhooks";
 *   bw_queue_store_t *q = bw_sqlite_queue_new(db, &qc, &err);
 *   if (bw_queue_store_enqueue(q, body, len, &id) == BW_OK) answer_200();
 *   ...
 *   bw_queue_store_free(q);
 *   bw_sqlite_close(db);
 *
 * The file is in WAL mode; every verb is one transaction (BEGIN IMMEDIATE:
 * the guard's count and the insert are atomic, also between processes), and
 * enqueue returns after its COMMIT. synchronous=NORMAL (the default) keeps
 * every committed item across a process crash (kill -9); FULL also across a
 * power loss, at the price of an fsync per commit. Group commit:
 * bw_queue_store_enqueue_batch stores many items in one transaction, and
 * with group_commit on, concurrent single enqueuers on one bw_sqlite_t share
 * a transaction (each still returns only after the commit that holds its
 * item).
 *
 * Threads: a bw_sqlite_t is one connection guarded by a mutex; its queues
 * and idempotency stores may be used from any number of threads. Several
 * processes may open the same file (each its own bw_sqlite_t); busy_timeout
 * bounds how long one waits for another's transaction (then BW_E_TIMEOUT).
 *
 * The file is identified by PRAGMA application_id 0x42575354 ("BWST") and
 * versioned by PRAGMA user_version (1). Opening a file that is not a
 * database, is another application's database or has a newer schema fails
 * with BW_E_IO and a message naming the path and what is wrong. Stored times
 * are the configured clock's readings: the default clock of durable stores
 * is the wall clock (bw_clock_realtime), so leases and TTLs survive a
 * reboot. */
#ifndef BREAKWATER_STORE_SQLITE_H
#define BREAKWATER_STORE_SQLITE_H

#include "common.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BW_SQLITE_APPLICATION_ID 0x42575354
#define BW_SQLITE_SCHEMA_VERSION 1

typedef enum bw_sqlite_sync_e {
  BW_SQLITE_SYNC_NORMAL = 0, /* survives a process crash */
  BW_SQLITE_SYNC_FULL = 1    /* survives a power loss too */
} bw_sqlite_sync_t;

typedef struct bw_sqlite_config_s {
  const char *path;             /* required; created when missing */
  bw_sqlite_sync_t synchronous; /* default NORMAL */
  int64_t busy_timeout_ms;      /* >= 0; default 5000 */
  bool group_commit;            /* share commits between concurrent
                                   enqueuers; default true */
} bw_sqlite_config_t;

typedef struct bw_sqlite_s bw_sqlite_t;

/* Fills the documented defaults (path NULL). */
BW_EXTERN void bw_sqlite_config_init(bw_sqlite_config_t *cfg);

/* Opens (creating when missing) a store file. NULL with err set:
 * BW_E_INVAL naming the field (path, busy_timeout_ms, synchronous);
 * BW_E_IO with the path and the cause ("file is not a database", "not a
 * breakwater store: application_id 0x...", "schema version N is newer than
 * this library's 1", an OS error); BW_E_NOMEM. */
BW_EXTERN bw_sqlite_t *bw_sqlite_open(const bw_sqlite_config_t *cfg,
                                      bw_error_t *err);
/* Closes the file. Free every queue and idempotency store made on it
 * first. NULL is fine. */
BW_EXTERN void bw_sqlite_close(bw_sqlite_t *db);
/* The path given at open ("" for NULL). */
BW_EXTERN const char *bw_sqlite_path(const bw_sqlite_t *db);

/* A durable queue named cfg->name in the file (created on first use; the
 * same name in another handle or process is the same queue). The clock
 * defaults to bw_clock_realtime. NULL with err set on a bad configuration,
 * BW_E_IO or BW_E_NOMEM. The handle borrows db. */
BW_EXTERN bw_queue_store_t *bw_sqlite_queue_new(
    bw_sqlite_t *db, const bw_queue_store_config_t *cfg, bw_error_t *err);
/* Idempotency records of scope cfg->name in the file (max_keys unused:
 * the table is swept of expired records as it goes). */
BW_EXTERN bw_idem_store_t *bw_sqlite_idem_new(bw_sqlite_t *db,
                                              const bw_idem_config_t *cfg,
                                              bw_error_t *err);

/* Runs PRAGMA integrity_check. BW_OK when it says "ok"; BW_E_IO with its
 * first complaint in err otherwise. */
BW_EXTERN int bw_sqlite_integrity_check(bw_sqlite_t *db, bw_error_t *err);

/* The last SQLite error seen on this handle, for logs ("" if none). The
 * text is copied into buf (NUL-terminated). Thread-safe. */
BW_EXTERN void bw_sqlite_last_error(bw_sqlite_t *db, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_STORE_SQLITE_H */

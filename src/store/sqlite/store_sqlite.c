/* The SQLite store (store_sqlite.h): durable queues, their DLQs and guards,
 * and idempotency records in one WAL-mode file.
 *
 * One connection per bw_sqlite_t, guarded by `lock`; statements are prepared
 * once (SQLITE_PREPARE_PERSISTENT) and reset after each use. Every verb is
 * one BEGIN IMMEDIATE transaction, so the guard's depth read and the insert
 * cannot interleave with another writer, in this process or another. The
 * queue depth lives in bw_qmeta, updated in the same transaction as the rows,
 * so the guard costs one indexed read instead of a COUNT(*).
 *
 * Group commit (group_commit on): single enqueues queue up on `gc_lock`; the
 * first one in becomes the leader, takes every request waiting, runs them
 * in one transaction and wakes them all once it is committed. A follower
 * never returns before the commit that holds its item.
 *
 * Like every component, it uses the core's public API and its extension
 * interface (ext.h) only. */
#include "breakwater/store_sqlite.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/event.h"
#include "breakwater/ext.h"

/* ==== statements ========================================================= */

enum {
  S_BEGIN,
  S_COMMIT,
  S_ROLLBACK,
  S_META_GET,
  S_META_SET,
  S_META_ENSURE,
  S_Q_INSERT,
  S_Q_CANDIDATES,
  S_Q_LEASE,
  S_Q_GET,
  S_Q_DELETE,
  S_Q_RELEASE,
  S_Q_INFLIGHT,
  S_D_INSERT,
  S_D_MOVE,
  S_D_DROP_OLDEST,
  S_D_LIST,
  S_D_EXISTS,
  S_D_DELETE,
  S_D_REQUEUE,
  S_I_GET,
  S_I_PUT,
  S_I_DELETE,
  S_I_SWEEP,
  S_I_COUNT,
  S__COUNT
};

static const char *const sql_text[S__COUNT] = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    "SELECT depth, dlq_depth FROM bw_qmeta WHERE qname = ?1",
    "UPDATE bw_qmeta SET depth = ?2, dlq_depth = ?3 WHERE qname = ?1",
    "INSERT OR IGNORE INTO bw_qmeta(qname, depth, dlq_depth) "
    "VALUES (?1, 0, 0)",
    "INSERT INTO bw_queue(qname, payload, enqueued_ns, visible_ns, "
    "deliveries, receipt) VALUES (?1, ?2, ?3, ?3, 0, 0)",
    "SELECT id, payload, enqueued_ns, deliveries FROM bw_queue "
    "WHERE qname = ?1 AND visible_ns <= ?2 ORDER BY id LIMIT ?3",
    "UPDATE bw_queue SET deliveries = deliveries + 1, receipt = ?2, "
    "visible_ns = ?3 WHERE id = ?1",
    "SELECT receipt, deliveries FROM bw_queue WHERE id = ?1 AND qname = ?2",
    "DELETE FROM bw_queue WHERE id = ?1",
    "UPDATE bw_queue SET receipt = 0, visible_ns = ?2 WHERE id = ?1",
    "SELECT COUNT(*) FROM bw_queue WHERE qname = ?1 AND receipt != 0 "
    "AND visible_ns > ?2",
    "INSERT INTO bw_dlq(qname, item_id, deliveries, time_ns, reason, error, "
    "payload) VALUES (?1, 0, 0, ?2, ?3, ?4, ?5)",
    "INSERT INTO bw_dlq(qname, item_id, deliveries, time_ns, reason, error, "
    "payload) SELECT qname, id, deliveries, ?2, ?3, ?4, payload "
    "FROM bw_queue WHERE id = ?1",
    "DELETE FROM bw_dlq WHERE id = (SELECT MIN(id) FROM bw_dlq "
    "WHERE qname = ?1)",
    "SELECT id, item_id, deliveries, time_ns, reason, error, payload "
    "FROM bw_dlq WHERE qname = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
    "SELECT 1 FROM bw_dlq WHERE id = ?1 AND qname = ?2",
    "DELETE FROM bw_dlq WHERE id = ?1 AND qname = ?2",
    "INSERT INTO bw_queue(qname, payload, enqueued_ns, visible_ns, "
    "deliveries, receipt) SELECT qname, payload, ?2, ?2, 0, 0 FROM bw_dlq "
    "WHERE id = ?1",
    "SELECT state, token, status, expires_ns, result FROM bw_idem "
    "WHERE scope = ?1 AND key = ?2",
    "INSERT OR REPLACE INTO bw_idem(scope, key, state, token, status, "
    "expires_ns, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    "DELETE FROM bw_idem WHERE scope = ?1 AND key = ?2",
    "DELETE FROM bw_idem WHERE scope = ?1 AND expires_ns <= ?2",
    "SELECT COUNT(*) FROM bw_idem WHERE scope = ?1",
};

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS bw_queue("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, qname TEXT NOT NULL,"
    " payload BLOB NOT NULL, enqueued_ns INTEGER NOT NULL,"
    " visible_ns INTEGER NOT NULL, deliveries INTEGER NOT NULL,"
    " receipt INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS bw_queue_by_name ON bw_queue(qname, id);"
    "CREATE TABLE IF NOT EXISTS bw_qmeta(qname TEXT PRIMARY KEY,"
    " depth INTEGER NOT NULL, dlq_depth INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS bw_dlq("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, qname TEXT NOT NULL,"
    " item_id INTEGER NOT NULL, deliveries INTEGER NOT NULL,"
    " time_ns INTEGER NOT NULL, reason TEXT NOT NULL, error TEXT NOT NULL,"
    " payload BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS bw_dlq_by_name ON bw_dlq(qname, id);"
    "CREATE TABLE IF NOT EXISTS bw_idem(scope TEXT NOT NULL, key TEXT NOT "
    "NULL,"
    " state INTEGER NOT NULL, token INTEGER NOT NULL, status INTEGER NOT NULL,"
    " expires_ns INTEGER NOT NULL, result BLOB, PRIMARY KEY(scope, key))"
    " WITHOUT ROWID;";

/* A single enqueue waiting for a group commit. */
typedef struct gc_req_s gc_req_t;

struct bw_sqlite_s {
  pthread_mutex_t lock; /* the connection and everything below */
  sqlite3 *h;
  sqlite3_stmt *st[S__COUNT];
  char *path;
  char last_error[200];
  bool group_commit;
  /* group commit */
  pthread_mutex_t gc_lock;
  pthread_cond_t gc_cond;
  gc_req_t *gc_head, *gc_tail;
  bool gc_leader;
};

static int map_rc(int rc) {
  switch (rc & 0xff) {
  case SQLITE_OK:
  case SQLITE_DONE:
  case SQLITE_ROW:
    return BW_OK;
  case SQLITE_NOMEM:
    return BW_E_NOMEM;
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return BW_E_TIMEOUT;
  default:
    return BW_E_IO;
  }
}

/* Records the connection's error; returns the mapped code. */
static int db_fail(bw_sqlite_t *db, int rc) {
  snprintf(db->last_error, sizeof(db->last_error), "%s: %s (%d)", db->path,
           sqlite3_errmsg(db->h), rc);
  return map_rc(rc);
}

static sqlite3_stmt *stmt(bw_sqlite_t *db, int idx) {
  if (db->st[idx] == NULL) {
    int rc = sqlite3_prepare_v3(db->h, sql_text[idx], -1,
                                SQLITE_PREPARE_PERSISTENT, &db->st[idx], NULL);
    if (rc != SQLITE_OK) {
      db_fail(db, rc);
      db->st[idx] = NULL;
    }
  }
  return db->st[idx];
}

/* Runs a statement that returns no rows, then resets it. */
static int run(bw_sqlite_t *db, sqlite3_stmt *s) {
  int rc;
  if (s == NULL) return BW_E_IO;
  rc = sqlite3_step(s);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (rc != SQLITE_DONE) return db_fail(db, rc);
  return BW_OK;
}

static int run_simple(bw_sqlite_t *db, int idx) {
  return run(db, stmt(db, idx));
}

static void finish(sqlite3_stmt *s) {
  if (s == NULL) return;
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
}

static int begin_tx(bw_sqlite_t *db) {
  return run_simple(db, S_BEGIN);
}

/* Rolls back an open transaction, keeping last_error: the error worth
 * reporting is the failing step's, not the rollback's. */
static void rollback(bw_sqlite_t *db) {
  char first[sizeof(db->last_error)];
  if (sqlite3_get_autocommit(db->h) != 0) return;
  memcpy(first, db->last_error, sizeof(first));
  run_simple(db, S_ROLLBACK);
  memcpy(db->last_error, first, sizeof(first));
}

static int end_tx(bw_sqlite_t *db, int rc) {
  if (rc == BW_OK || rc == BW_E_FULL || rc == BW_E_STALE ||
      rc == BW_E_NOTFOUND) {
    int c = run_simple(db, S_COMMIT);
    if (c != BW_OK) {
      rollback(db);
      return c;
    }
    return rc;
  }
  rollback(db);
  return rc;
}

static const char empty_blob[1] = {0};

static void bind_blob(sqlite3_stmt *s, int i, const void *p, size_t n) {
  sqlite3_bind_blob64(s, i, n ? p : empty_blob, n, SQLITE_STATIC);
}

static void bind_text(sqlite3_stmt *s, int i, const char *t) {
  sqlite3_bind_text(s, i, t, -1, SQLITE_STATIC);
}

static uint64_t random_token(void) {
  uint64_t t = 0;
  while (t == 0) {
    sqlite3_randomness((int)sizeof(t), &t);
    t &= (uint64_t)INT64_MAX;
  }
  return t;
}

/* Copies a blob column into memory the caller frees with bw_free. */
static void *copy_blob(sqlite3_stmt *s, int col, size_t *len) {
  const void *p = sqlite3_column_blob(s, col);
  size_t n = (size_t)sqlite3_column_bytes(s, col);
  void *out = bw_store_malloc(n + 1);
  if (out == NULL) return NULL;
  if (n && p) memcpy(out, p, n);
  *len = n;
  return out;
}

/* A store needs its database: false (err filled) when db is NULL. */
static bool has_db(const bw_sqlite_t *db, bw_error_t *err) {
  if (db != NULL) return true;
  bw_error_set(err, BW_E_INVAL, "db", "db is required (got NULL)");
  return false;
}

/* A zeroed handle of `size` bytes and, in *copy, a copy of name (the
 * handle's to free); NULL (err filled) when out of memory. */
static void *alloc_named(size_t size, const char *name, char **copy,
                         bw_error_t *err) {
  void *h = bw_calloc(1, size);
  *copy = h != NULL ? bw_strdup(name) : NULL;
  if (*copy == NULL) {
    bw_free(h);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  return h;
}

/* ==== open / close ======================================================= */

void bw_sqlite_config_init(bw_sqlite_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->synchronous = BW_SQLITE_SYNC_NORMAL;
  cfg->busy_timeout_ms = 5000;
  cfg->group_commit = true;
}

/* One integer from a query (a PRAGMA, a COUNT). */
static int query_int(sqlite3 *h, const char *sql, int64_t *out) {
  sqlite3_stmt *s = NULL;
  int rc = sqlite3_prepare_v2(h, sql, -1, &s, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int64(s, 0);
      rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
      *out = 0;
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(s);
  return rc;
}

/* PRAGMA journal_mode=WAL, retried while another connection holds the
 * lock it needs. SQLite answers SQLITE_BUSY to this pragma without calling
 * the busy handler when another connection is switching the same new file
 * at the same time (several threads or processes opening a fresh store:
 * tests/conc_store.c saw it in about 1 run in 15), so the wait is done
 * here: the busy handler off (each attempt would otherwise wait its whole
 * timeout), a retry every millisecond until timeout_ms have passed on the
 * monotonic clock, then the connection's busy timeout back. */
static int set_wal(sqlite3 *h, int64_t timeout_ms) {
  const bw_clock_t *mono = bw_clock_monotonic();
  int64_t until = bw_clock_now(mono) + timeout_ms * BW_NS_PER_MS;
  int rc;
  sqlite3_busy_timeout(h, 0);
  for (;;) {
    rc = sqlite3_exec(h, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    if ((rc & 0xff) != SQLITE_BUSY || bw_clock_now(mono) >= until) break;
    sqlite3_sleep(1);
  }
  sqlite3_busy_timeout(h, (int)timeout_ms);
  return rc;
}

static int check_or_create(sqlite3 *h, const char *path, int64_t timeout_ms,
                           bw_error_t *err) {
  int64_t app = 0, ver = 0, objects = 0;
  /* one read transaction: a consistent view while another process may be
   * creating the schema right now */
  int rc = sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);
  if (rc == SQLITE_OK) rc = query_int(h, "PRAGMA application_id", &app);
  if (rc == SQLITE_OK) rc = query_int(h, "PRAGMA user_version", &ver);
  if (rc == SQLITE_OK)
    rc = query_int(h, "SELECT COUNT(*) FROM sqlite_master", &objects);
  if (rc == SQLITE_OK) rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    /* The message first: the ROLLBACK below resets it ("not an error"). */
    bw_error_set(err, map_rc(rc) == BW_E_TIMEOUT ? BW_E_TIMEOUT : BW_E_IO,
                 "path", "%s: %s", path,
                 (rc & 0xff) == SQLITE_NOTADB ? "file is not a database"
                                              : sqlite3_errmsg(h));
    if (sqlite3_get_autocommit(h) == 0)
      sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return map_rc(rc) == BW_E_TIMEOUT ? BW_E_TIMEOUT : BW_E_IO;
  }
  if (app == 0 && objects == 0) {
    char sql[160];
    /* A new file: WAL first (it cannot change inside a transaction), then
     * the schema, checked again under the write lock in case another
     * process created it meanwhile. */
    char *msg = NULL;
    rc = set_wal(h, timeout_ms);
    if (rc == SQLITE_OK)
      rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = query_int(h, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK && app == 0) {
      snprintf(sql, sizeof(sql),
               "PRAGMA application_id=%d; PRAGMA user_version=%d;",
               BW_SQLITE_APPLICATION_ID, BW_SQLITE_SCHEMA_VERSION);
      rc = sqlite3_exec(h, schema_sql, NULL, NULL, &msg);
      if (rc == SQLITE_OK) rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
      ver = BW_SQLITE_SCHEMA_VERSION;
      app = BW_SQLITE_APPLICATION_ID;
    } else if (rc == SQLITE_OK) {
      rc = query_int(h, "PRAGMA user_version", &ver);
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
      bw_error_set(err, map_rc(rc) == BW_E_TIMEOUT ? BW_E_TIMEOUT : BW_E_IO,
                   "path", "%s: cannot create the store: %s", path,
                   msg ? msg : sqlite3_errmsg(h));
      sqlite3_free(msg);
      if (sqlite3_get_autocommit(h) == 0)
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
      return map_rc(rc) == BW_E_TIMEOUT ? BW_E_TIMEOUT : BW_E_IO;
    }
    sqlite3_free(msg);
  }
  if (app != BW_SQLITE_APPLICATION_ID) {
    if (app == 0)
      bw_error_set(
          err, BW_E_IO, "path",
          "%s: not a breakwater store: application_id 0 and %lld schema "
          "objects of another application",
          path, (long long)objects);
    else
      bw_error_set(err, BW_E_IO, "path",
                   "%s: not a breakwater store: application_id 0x%08llx "
                   "(expected 0x%08x)",
                   path, (unsigned long long)(uint32_t)app,
                   (unsigned)BW_SQLITE_APPLICATION_ID);
    return BW_E_IO;
  }
  if (ver != BW_SQLITE_SCHEMA_VERSION) {
    bw_error_set(err, BW_E_IO, "path",
                 "%s: store schema version %lld is %s this library's (%d)",
                 path, (long long)ver,
                 ver > BW_SQLITE_SCHEMA_VERSION ? "newer than" : "not",
                 BW_SQLITE_SCHEMA_VERSION);
    return BW_E_IO;
  }
  return BW_OK;
}

bw_sqlite_t *bw_sqlite_open(const bw_sqlite_config_t *cfg, bw_error_t *err) {
  bw_sqlite_t *db;
  int rc;
  char sql[64];
  if (cfg == NULL) {
    bw_error_set(err, BW_E_INVAL, "", "config is NULL");
    return NULL;
  }
  if (cfg->path == NULL || cfg->path[0] == '\0') {
    bw_error_set(err, BW_E_INVAL, "path", "path is required (got %s)",
                 cfg->path ? "\"\"" : "NULL");
    return NULL;
  }
  if (cfg->busy_timeout_ms < 0 || cfg->busy_timeout_ms > INT32_MAX) {
    bw_error_set(err, BW_E_INVAL, "busy_timeout_ms",
                 "busy_timeout_ms must be in [0, 2147483647] (got %lld)",
                 (long long)cfg->busy_timeout_ms);
    return NULL;
  }
  if (cfg->synchronous != BW_SQLITE_SYNC_NORMAL &&
      cfg->synchronous != BW_SQLITE_SYNC_FULL) {
    bw_error_set(err, BW_E_INVAL, "synchronous",
                 "synchronous must be NORMAL or FULL (got %d)",
                 (int)cfg->synchronous);
    return NULL;
  }
  db = bw_calloc(1, sizeof(*db));
  if (db == NULL || (db->path = bw_strdup(cfg->path)) == NULL) {
    bw_free(db);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  db->group_commit = cfg->group_commit;
  rc = sqlite3_open_v2(
      cfg->path, &db->h,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK) {
    bw_error_set(err, BW_E_IO, "path", "%s: cannot open: %s", cfg->path,
                 db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
    goto fail;
  }
  sqlite3_extended_result_codes(db->h, 1);
  sqlite3_busy_timeout(db->h, (int)cfg->busy_timeout_ms);
  if (check_or_create(db->h, cfg->path, cfg->busy_timeout_ms, err) != BW_OK)
    goto fail;
  /* WAL is persistent in the file, but an old file may have lost it. */
  rc = set_wal(db->h, cfg->busy_timeout_ms);
  snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s",
           cfg->synchronous == BW_SQLITE_SYNC_FULL ? "FULL" : "NORMAL");
  if (rc == SQLITE_OK) rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    bw_error_set(err, BW_E_IO, "path", "%s: cannot configure: %s", cfg->path,
                 sqlite3_errmsg(db->h));
    goto fail;
  }
  if (pthread_mutex_init(&db->lock, NULL) != 0) goto fail_nomem;
  if (pthread_mutex_init(&db->gc_lock, NULL) != 0) {
    pthread_mutex_destroy(&db->lock);
    goto fail_nomem;
  }
  if (pthread_cond_init(&db->gc_cond, NULL) != 0) {
    pthread_mutex_destroy(&db->gc_lock);
    pthread_mutex_destroy(&db->lock);
    goto fail_nomem;
  }
  bw_error_clear(err);
  return db;
fail_nomem:
  bw_error_set(err, BW_E_NOMEM, "", "out of memory");
fail:
  sqlite3_close_v2(db->h);
  bw_free(db->path);
  bw_free(db);
  return NULL;
}

void bw_sqlite_close(bw_sqlite_t *db) {
  int i;
  if (db == NULL) return;
  for (i = 0; i < S__COUNT; i++)
    sqlite3_finalize(db->st[i]);
  sqlite3_close_v2(db->h);
  pthread_cond_destroy(&db->gc_cond);
  pthread_mutex_destroy(&db->gc_lock);
  pthread_mutex_destroy(&db->lock);
  bw_free(db->path);
  bw_free(db);
}

const char *bw_sqlite_path(const bw_sqlite_t *db) {
  return db ? db->path : "";
}

void bw_sqlite_last_error(bw_sqlite_t *db, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  buf[0] = '\0';
  if (db == NULL) return;
  pthread_mutex_lock(&db->lock);
  snprintf(buf, size, "%s", db->last_error);
  pthread_mutex_unlock(&db->lock);
}

int bw_sqlite_integrity_check(bw_sqlite_t *db, bw_error_t *err) {
  sqlite3_stmt *s = NULL;
  int rc, out = BW_OK;
  if (db == NULL) {
    bw_error_set(err, BW_E_INVAL, "db", "db is NULL");
    return BW_E_INVAL;
  }
  pthread_mutex_lock(&db->lock);
  rc = sqlite3_prepare_v2(db->h, "PRAGMA integrity_check", -1, &s, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(s, 0);
    if (t == NULL || strcmp(t, "ok") != 0) {
      bw_error_set(err, BW_E_IO, "path", "%s: integrity_check: %s", db->path,
                   t ? t : "(no answer)");
      out = BW_E_IO;
    }
  } else {
    bw_error_set(err, BW_E_IO, "path", "%s: integrity_check failed: %s",
                 db->path, sqlite3_errmsg(db->h));
    out = BW_E_IO;
  }
  sqlite3_finalize(s);
  pthread_mutex_unlock(&db->lock);
  if (out == BW_OK) bw_error_clear(err);
  return out;
}

/* Events are gathered under db->lock and emitted after it
 * (bw_queue_events_t, store.h). */

/* ==== queue ============================================================== */

typedef struct sq_queue_s {
  bw_queue_store_t base;
  bw_sqlite_t *db;
  char *name;
  bw_queue_store_config_t cfg;
  uint64_t warn_at, rearm_below;
  /* under db->lock */
  bool warned;
  bw_queue_store_stats_t st;
} sq_queue_t;

struct gc_req_s {
  gc_req_t *next;
  sq_queue_t *q;
  const bw_blob_t *item;
  uint64_t id;
  int rc;
  bool done;
  bw_queue_events_t eb;
  /* the queue's warning state before the group ran (restored if it rolls
   * back, as sq_enqueue_direct does) */
  bool warned0;
  uint64_t warnings0, dropped0;
};

static int64_t sq_now(const sq_queue_t *q) {
  return bw_clock_now(q->cfg.clock);
}

static void sq_emit(const sq_queue_t *q, const bw_queue_events_t *eb) {
  if (q->cfg.sink == NULL || eb->n == 0) return;
  bw_queue_events_emit(eb, &q->cfg, q->name, sq_now(q));
}

static void sq_after_grow(sq_queue_t *q, uint64_t depth,
                          bw_queue_events_t *eb) {
  if (!q->warned && depth >= q->warn_at) {
    q->warned = true;
    q->st.warnings++;
    bw_queue_events_warning(eb, depth);
  }
}

static void sq_after_shrink(sq_queue_t *q, uint64_t depth) {
  if (q->warned && depth < q->rearm_below) q->warned = false;
}

static int meta_get(sq_queue_t *q, uint64_t *depth, uint64_t *dlq_depth) {
  sqlite3_stmt *s = stmt(q->db, S_META_GET);
  int rc;
  if (s == NULL) return BW_E_IO;
  bind_text(s, 1, q->name);
  rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    *depth = (uint64_t)sqlite3_column_int64(s, 0);
    *dlq_depth = (uint64_t)sqlite3_column_int64(s, 1);
    finish(s);
    return BW_OK;
  }
  finish(s);
  if (rc == SQLITE_DONE) {
    /* the row is made when the queue is: a missing one is damage */
    snprintf(q->db->last_error, sizeof(q->db->last_error),
             "%s: queue %s has no bw_qmeta row", q->db->path, q->name);
    return BW_E_IO;
  }
  return db_fail(q->db, rc);
}

static int meta_set(sq_queue_t *q, uint64_t depth, uint64_t dlq_depth) {
  sqlite3_stmt *s = stmt(q->db, S_META_SET);
  if (s == NULL) return BW_E_IO;
  bind_text(s, 1, q->name);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)depth);
  sqlite3_bind_int64(s, 3, (sqlite3_int64)dlq_depth);
  return run(q->db, s);
}

/* After a DLQ insert: drops the oldest record past dlq_max. */
static int dlq_bound(sq_queue_t *q, uint64_t *dlq_depth) {
  int rc = BW_OK;
  while (rc == BW_OK && *dlq_depth > q->cfg.dlq_max) {
    sqlite3_stmt *s = stmt(q->db, S_D_DROP_OLDEST);
    if (s == NULL) return BW_E_IO;
    bind_text(s, 1, q->name);
    rc = run(q->db, s);
    if (rc == BW_OK) {
      (*dlq_depth)--;
      q->st.dlq_dropped++;
    }
  }
  return rc;
}

/* Inside a transaction: the guard and the inserts for n items. */
static int sq_enqueue_tx(sq_queue_t *q, const bw_blob_t *items, size_t n,
                         uint64_t *ids, size_t *accepted,
                         bw_queue_events_t *eb) {
  uint64_t depth, dlq_depth;
  size_t i, ok = 0, refused = 0;
  int64_t now = sq_now(q);
  char msg[160];
  int rc = meta_get(q, &depth, &dlq_depth);
  if (rc != BW_OK) return rc;
  snprintf(msg, sizeof(msg), "queue %s reached max_size %u", q->name,
           (unsigned)q->cfg.max_size);
  for (i = 0; i < n && rc == BW_OK; i++) {
    sqlite3_stmt *s;
    if (refused == 0 && depth < q->cfg.max_size) {
      s = stmt(q->db, S_Q_INSERT);
      if (s == NULL) return BW_E_IO;
      bind_text(s, 1, q->name);
      bind_blob(s, 2, items[i].data, items[i].len);
      sqlite3_bind_int64(s, 3, now);
      rc = run(q->db, s);
      if (rc != BW_OK) break;
      if (ids) ids[i] = (uint64_t)sqlite3_last_insert_rowid(q->db->h);
      depth++;
      ok++;
    } else {
      s = stmt(q->db, S_D_INSERT);
      if (s == NULL) return BW_E_IO;
      bind_text(s, 1, q->name);
      sqlite3_bind_int64(s, 2, now);
      bind_text(s, 3, BW_DLQ_QUEUE_FULL);
      bind_text(s, 4, msg);
      bind_blob(s, 5, items[i].data, items[i].len);
      rc = run(q->db, s);
      if (rc != BW_OK) break;
      if (ids) ids[i] = 0;
      if (refused == 0)
        bw_queue_events_dead(eb, 0,
                             (uint64_t)sqlite3_last_insert_rowid(q->db->h), 0,
                             BW_DLQ_QUEUE_FULL, msg);
      refused++;
      dlq_depth++;
      rc = dlq_bound(q, &dlq_depth);
    }
  }
  if (rc == BW_OK) rc = meta_set(q, depth, dlq_depth);
  if (rc != BW_OK) return rc;
  if (refused > 0) bw_queue_events_set_dead_count(eb, refused);
  /* counters are committed by the caller once the COMMIT succeeded */
  *accepted = ok;
  if (ok) sq_after_grow(q, depth, eb);
  return refused ? BW_E_FULL : BW_OK;
}

static void sq_count_enqueue(sq_queue_t *q, size_t n, size_t ok) {
  q->st.enqueued += ok;
  q->st.refused_full += n - ok;
  q->st.dead_lettered += n - ok;
}

static int sq_enqueue_direct(sq_queue_t *q, const bw_blob_t *items, size_t n,
                             uint64_t *ids, size_t *accepted) {
  bw_queue_events_t eb;
  size_t ok = 0;
  int rc;
  eb.n = 0;
  pthread_mutex_lock(&q->db->lock);
  rc = begin_tx(q->db);
  if (rc == BW_OK) {
    bool warned = q->warned;
    uint64_t warnings = q->st.warnings, dropped = q->st.dlq_dropped;
    rc = end_tx(q->db, sq_enqueue_tx(q, items, n, ids, &ok, &eb));
    if (rc == BW_OK || rc == BW_E_FULL) {
      sq_count_enqueue(q, n, ok);
    } else {
      q->warned = warned; /* rolled back: nothing happened */
      q->st.warnings = warnings;
      q->st.dlq_dropped = dropped;
      eb.n = 0;
      ok = 0;
    }
  }
  pthread_mutex_unlock(&q->db->lock);
  sq_emit(q, &eb);
  if (accepted) *accepted = ok;
  return rc;
}

/* The leader's work: every waiting request in one transaction. */
static void gc_lead(bw_sqlite_t *db, gc_req_t *list) {
  gc_req_t *r;
  int rc;
  pthread_mutex_lock(&db->lock);
  /* Before anything runs, so requests on one queue all keep its state as it
   * was before the group. */
  for (r = list; r != NULL; r = r->next) {
    r->warned0 = r->q->warned;
    r->warnings0 = r->q->st.warnings;
    r->dropped0 = r->q->st.dlq_dropped;
  }
  rc = begin_tx(db);
  if (rc == BW_OK) {
    for (r = list; r != NULL && rc == BW_OK; r = r->next) {
      size_t ok = 0;
      r->eb.n = 0;
      r->rc = sq_enqueue_tx(r->q, r->item, 1, &r->id, &ok, &r->eb);
      if (r->rc != BW_OK && r->rc != BW_E_FULL) rc = r->rc;
    }
    /* one failure (I/O) fails the whole group: all or nothing */
    rc = end_tx(db, rc);
  }
  for (r = list; r != NULL; r = r->next) {
    if (rc != BW_OK) {
      r->rc = rc;
      r->id = 0;
      r->eb.n = 0;
      r->q->warned = r->warned0; /* rolled back: nothing happened */
      r->q->st.warnings = r->warnings0;
      r->q->st.dlq_dropped = r->dropped0;
    } else {
      sq_count_enqueue(r->q, 1, r->rc == BW_OK ? 1 : 0);
    }
  }
  pthread_mutex_unlock(&db->lock);
}

static int sq_enqueue_grouped(sq_queue_t *q, const bw_blob_t *item,
                              uint64_t *id) {
  bw_sqlite_t *db = q->db;
  gc_req_t req;
  memset(&req, 0, sizeof(req));
  req.q = q;
  req.item = item;
  pthread_mutex_lock(&db->gc_lock);
  if (db->gc_tail)
    db->gc_tail->next = &req;
  else
    db->gc_head = &req;
  db->gc_tail = &req;
  while (!req.done) {
    if (!db->gc_leader) {
      gc_req_t *list = db->gc_head, *r, *next;
      db->gc_head = db->gc_tail = NULL;
      db->gc_leader = true;
      pthread_mutex_unlock(&db->gc_lock);
      gc_lead(db, list);
      pthread_mutex_lock(&db->gc_lock);
      for (r = list; r != NULL; r = next) {
        next = r->next; /* r may go away once done is seen */
        r->done = true;
      }
      db->gc_leader = false;
      pthread_cond_broadcast(&db->gc_cond);
    } else {
      pthread_cond_wait(&db->gc_cond, &db->gc_lock);
    }
  }
  pthread_mutex_unlock(&db->gc_lock);
  sq_emit(q, &req.eb);
  *id = req.id;
  return req.rc;
}

static int sq_enqueue(bw_queue_store_t *bq, const bw_blob_t *items, size_t n,
                      uint64_t *ids, size_t *accepted) {
  sq_queue_t *q = (sq_queue_t *)bq;
  if (n == 1 && q->db->group_commit) {
    uint64_t id = 0;
    int rc = sq_enqueue_grouped(q, items, &id);
    if (ids) ids[0] = id;
    if (accepted) *accepted = rc == BW_OK ? 1 : 0;
    return rc;
  }
  return sq_enqueue_direct(q, items, n, ids, accepted);
}

/* Moves a queue row to the DLQ (inside a transaction). */
static int sq_move_to_dlq(sq_queue_t *q, uint64_t id, uint32_t deliveries,
                          const char *reason, const char *error, int64_t now,
                          uint64_t *depth, uint64_t *dlq_depth,
                          bw_queue_events_t *eb) {
  sqlite3_stmt *s = stmt(q->db, S_D_MOVE);
  char err_cut[160];
  int rc;
  if (s == NULL) return BW_E_IO;
  snprintf(err_cut, sizeof(err_cut), "%s", error);
  sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
  sqlite3_bind_int64(s, 2, now);
  bind_text(s, 3, reason);
  bind_text(s, 4, err_cut);
  rc = run(q->db, s);
  if (rc != BW_OK) return rc;
  bw_queue_events_dead(eb, id, (uint64_t)sqlite3_last_insert_rowid(q->db->h),
                       deliveries, reason, err_cut);
  s = stmt(q->db, S_Q_DELETE);
  if (s == NULL) return BW_E_IO;
  sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
  rc = run(q->db, s);
  if (rc != BW_OK) return rc;
  (*depth)--;
  (*dlq_depth)++;
  q->st.dead_lettered++;
  return dlq_bound(q, dlq_depth);
}

typedef struct cand_s {
  uint64_t id;
  int64_t enqueued_ns;
  uint32_t deliveries;
  void *payload;
  size_t len;
} cand_t;

static int sq_claim(bw_queue_store_t *bq, size_t max, int64_t visibility_ms,
                    bw_stored_item_t *out, size_t *n) {
  sq_queue_t *q = (sq_queue_t *)bq;
  bw_sqlite_t *db = q->db;
  size_t want = max + 16, nc = 0, i, got = 0, moved = 0;
  cand_t *c;
  bw_queue_events_t eb;
  int rc;
  eb.n = 0;
  if (max > 100000) return BW_E_INVAL;
  c = bw_calloc(want, sizeof(*c));
  if (c == NULL) return BW_E_NOMEM;
  pthread_mutex_lock(&db->lock);
  rc = begin_tx(db);
  if (rc == BW_OK) {
    int64_t now = sq_now(q);
    int64_t until = now + visibility_ms * BW_NS_PER_MS;
    uint64_t depth = 0, dlq_depth = 0;
    sqlite3_stmt *s = stmt(db, S_Q_CANDIDATES);
    bool warned = q->warned;
    bw_queue_store_stats_t saved = q->st;
    rc = s ? BW_OK : BW_E_IO;
    if (rc == BW_OK) {
      int r;
      bind_text(s, 1, q->name);
      sqlite3_bind_int64(s, 2, now);
      sqlite3_bind_int64(s, 3, (sqlite3_int64)want);
      while ((r = sqlite3_step(s)) == SQLITE_ROW && nc < want) {
        c[nc].id = (uint64_t)sqlite3_column_int64(s, 0);
        c[nc].enqueued_ns = sqlite3_column_int64(s, 2);
        c[nc].deliveries = (uint32_t)sqlite3_column_int64(s, 3);
        c[nc].payload = copy_blob(s, 1, &c[nc].len);
        if (c[nc].payload == NULL) {
          r = SQLITE_NOMEM;
          break;
        }
        nc++;
      }
      finish(s);
      if (r != SQLITE_DONE && r != SQLITE_ROW)
        rc = r == SQLITE_NOMEM ? BW_E_NOMEM : db_fail(db, r);
    }
    if (rc == BW_OK) rc = meta_get(q, &depth, &dlq_depth);
    for (i = 0; i < nc && rc == BW_OK && got < max; i++) {
      if (c[i].deliveries >= q->cfg.max_deliveries) {
        char msg[160];
        if (moved >= 16) continue;
        snprintf(msg, sizeof(msg), "delivered %u times without an ack",
                 (unsigned)c[i].deliveries);
        rc = sq_move_to_dlq(q, c[i].id, c[i].deliveries, BW_DLQ_MAX_DELIVERIES,
                            msg, now, &depth, &dlq_depth, &eb);
        moved++;
        continue;
      }
      s = stmt(db, S_Q_LEASE);
      if (s == NULL) {
        rc = BW_E_IO;
        break;
      }
      out[got].receipt = random_token();
      sqlite3_bind_int64(s, 1, (sqlite3_int64)c[i].id);
      sqlite3_bind_int64(s, 2, (sqlite3_int64)out[got].receipt);
      sqlite3_bind_int64(s, 3, until);
      rc = run(db, s);
      if (rc != BW_OK) break;
      out[got].id = c[i].id;
      out[got].deliveries = c[i].deliveries + 1;
      out[got].enqueued_ns = c[i].enqueued_ns;
      out[got].lease_until_ns = until;
      out[got].payload = c[i].payload;
      out[got].len = c[i].len;
      c[i].payload = NULL;
      got++;
    }
    if (rc == BW_OK && moved) {
      rc = meta_set(q, depth, dlq_depth);
      if (rc == BW_OK) sq_after_shrink(q, depth);
    }
    rc = end_tx(db, rc);
    if (rc != BW_OK) {
      q->st = saved;
      q->warned = warned;
      bw_stored_items_clear(out, got);
      got = 0;
      eb.n = 0;
    } else {
      q->st.claimed += got;
    }
  }
  pthread_mutex_unlock(&db->lock);
  for (i = 0; i < nc; i++)
    bw_free(c[i].payload);
  bw_free(c);
  sq_emit(q, &eb);
  *n = got;
  return rc;
}

/* Inside a transaction: finds a leased row and checks the receipt. */
static int sq_check_lease(sq_queue_t *q, uint64_t id, uint64_t receipt,
                          uint32_t *deliveries) {
  sqlite3_stmt *s = stmt(q->db, S_Q_GET);
  int r;
  uint64_t cur;
  if (s == NULL) return BW_E_IO;
  sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
  bind_text(s, 2, q->name);
  r = sqlite3_step(s);
  if (r == SQLITE_DONE) {
    finish(s);
    return BW_E_NOTFOUND;
  }
  if (r != SQLITE_ROW) {
    finish(s);
    return db_fail(q->db, r);
  }
  cur = (uint64_t)sqlite3_column_int64(s, 0);
  *deliveries = (uint32_t)sqlite3_column_int64(s, 1);
  finish(s);
  if (cur == 0 || cur != receipt) return BW_E_STALE;
  return BW_OK;
}

enum { OP_ACK, OP_NACK, OP_REJECT };

static int sq_settle(sq_queue_t *q, int op, uint64_t id, uint64_t receipt,
                     int64_t delay_ms, const char *error) {
  bw_sqlite_t *db = q->db;
  bw_queue_events_t eb;
  int rc;
  eb.n = 0;
  pthread_mutex_lock(&db->lock);
  rc = begin_tx(db);
  if (rc == BW_OK) {
    uint32_t deliveries = 0;
    uint64_t depth = 0, dlq_depth = 0;
    int64_t now = sq_now(q);
    bw_queue_store_stats_t saved = q->st;
    bool warned = q->warned;
    bool shrink = false;
    int r = sq_check_lease(q, id, receipt, &deliveries);
    if (r == BW_OK) r = meta_get(q, &depth, &dlq_depth);
    if (r == BW_OK) {
      if (op == OP_ACK) {
        sqlite3_stmt *s = stmt(db, S_Q_DELETE);
        if (s == NULL) {
          r = BW_E_IO;
        } else {
          sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
          r = run(db, s);
          depth--;
          q->st.acked++;
        }
        shrink = true;
      } else if (op == OP_REJECT || deliveries >= q->cfg.max_deliveries) {
        char msg[160] = "";
        if (op == OP_NACK) {
          snprintf(msg, sizeof(msg), "nacked after %u deliveries",
                   (unsigned)deliveries);
          q->st.nacked++;
        }
        r = sq_move_to_dlq(
            q, id, deliveries,
            op == OP_REJECT ? BW_DLQ_REJECTED : BW_DLQ_MAX_DELIVERIES,
            op == OP_REJECT ? error : msg, now, &depth, &dlq_depth, &eb);
        shrink = true;
      } else {
        sqlite3_stmt *s = stmt(db, S_Q_RELEASE);
        if (s == NULL) {
          r = BW_E_IO;
        } else {
          sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
          sqlite3_bind_int64(s, 2, now + delay_ms * BW_NS_PER_MS);
          r = run(db, s);
        }
        q->st.nacked++;
      }
      if (r == BW_OK && shrink) r = meta_set(q, depth, dlq_depth);
    } else if (r == BW_E_STALE) {
      q->st.stale++;
      saved.stale++;
    }
    rc = end_tx(db, r);
    if (rc != BW_OK) {
      q->st = saved;
      q->warned = warned;
      eb.n = 0;
    } else if (shrink) {
      sq_after_shrink(q, depth);
    }
  }
  pthread_mutex_unlock(&db->lock);
  sq_emit(q, &eb);
  return rc;
}

static int sq_ack(bw_queue_store_t *q, uint64_t id, uint64_t receipt) {
  return sq_settle((sq_queue_t *)q, OP_ACK, id, receipt, 0, NULL);
}

static int sq_nack(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                   int64_t delay_ms) {
  return sq_settle((sq_queue_t *)q, OP_NACK, id, receipt, delay_ms, NULL);
}

static int sq_reject(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                     const char *error) {
  return sq_settle((sq_queue_t *)q, OP_REJECT, id, receipt, 0, error);
}

static int sq_dlq_list(bw_queue_store_t *bq, uint64_t after_id, size_t max,
                       bw_dlq_record_t *out, size_t *n) {
  sq_queue_t *q = (sq_queue_t *)bq;
  sqlite3_stmt *s;
  size_t got = 0;
  int rc = BW_OK, r = SQLITE_DONE;
  pthread_mutex_lock(&q->db->lock);
  s = stmt(q->db, S_D_LIST);
  if (s == NULL) {
    rc = BW_E_IO;
  } else {
    bind_text(s, 1, q->name);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)after_id);
    sqlite3_bind_int64(s, 3,
                       (sqlite3_int64)(max > INT32_MAX ? INT32_MAX : max));
    while (got < max && (r = sqlite3_step(s)) == SQLITE_ROW) {
      bw_dlq_record_t *d = &out[got];
      const char *t;
      memset(d, 0, sizeof(*d));
      d->id = (uint64_t)sqlite3_column_int64(s, 0);
      d->item_id = (uint64_t)sqlite3_column_int64(s, 1);
      d->deliveries = (uint32_t)sqlite3_column_int64(s, 2);
      d->time_ns = sqlite3_column_int64(s, 3);
      t = (const char *)sqlite3_column_text(s, 4);
      snprintf(d->reason, sizeof(d->reason), "%s", t ? t : "");
      t = (const char *)sqlite3_column_text(s, 5);
      snprintf(d->error, sizeof(d->error), "%s", t ? t : "");
      d->payload = copy_blob(s, 6, &d->len);
      if (d->payload == NULL) {
        rc = BW_E_NOMEM;
        break;
      }
      got++;
    }
    if (rc == BW_OK && r != SQLITE_DONE && r != SQLITE_ROW)
      rc = db_fail(q->db, r);
    finish(s);
  }
  pthread_mutex_unlock(&q->db->lock);
  if (rc != BW_OK) {
    bw_dlq_records_clear(out, got);
    got = 0;
  }
  *n = got;
  return rc;
}

static int dlq_exists(sq_queue_t *q, uint64_t dlq_id) {
  sqlite3_stmt *s = stmt(q->db, S_D_EXISTS);
  int r;
  if (s == NULL) return BW_E_IO;
  sqlite3_bind_int64(s, 1, (sqlite3_int64)dlq_id);
  bind_text(s, 2, q->name);
  r = sqlite3_step(s);
  finish(s);
  if (r == SQLITE_ROW) return BW_OK;
  if (r == SQLITE_DONE) return BW_E_NOTFOUND;
  return db_fail(q->db, r);
}

/* In a transaction: deletes DLQ record dlq_id of this queue. */
static int dlq_delete_row(sq_queue_t *q, uint64_t dlq_id) {
  sqlite3_stmt *s = stmt(q->db, S_D_DELETE);
  if (s == NULL) return BW_E_IO;
  sqlite3_bind_int64(s, 1, (sqlite3_int64)dlq_id);
  bind_text(s, 2, q->name);
  return run(q->db, s);
}

static int sq_dlq_requeue(bw_queue_store_t *bq, uint64_t dlq_id,
                          uint64_t *new_id) {
  sq_queue_t *q = (sq_queue_t *)bq;
  bw_sqlite_t *db = q->db;
  bw_queue_events_t eb;
  int rc;
  eb.n = 0;
  pthread_mutex_lock(&db->lock);
  rc = begin_tx(db);
  if (rc == BW_OK) {
    uint64_t depth = 0, dlq_depth = 0;
    bool warned = q->warned;
    uint64_t warnings = q->st.warnings;
    int r = dlq_exists(q, dlq_id);
    if (r == BW_OK) r = meta_get(q, &depth, &dlq_depth);
    if (r == BW_OK && depth >= q->cfg.max_size) r = BW_E_FULL;
    if (r == BW_OK) {
      sqlite3_stmt *s = stmt(db, S_D_REQUEUE);
      if (s == NULL) {
        r = BW_E_IO;
      } else {
        sqlite3_bind_int64(s, 1, (sqlite3_int64)dlq_id);
        sqlite3_bind_int64(s, 2, sq_now(q));
        r = run(db, s);
      }
      if (r == BW_OK) {
        *new_id = (uint64_t)sqlite3_last_insert_rowid(db->h);
        r = dlq_delete_row(q, dlq_id);
      }
      if (r == BW_OK) r = meta_set(q, depth + 1, dlq_depth - 1);
      if (r == BW_OK) sq_after_grow(q, depth + 1, &eb);
    }
    rc = end_tx(db, r);
    if (rc == BW_OK) {
      q->st.requeued++;
    } else {
      q->warned = warned;
      q->st.warnings = warnings;
      eb.n = 0;
      *new_id = 0;
    }
  }
  pthread_mutex_unlock(&db->lock);
  sq_emit(q, &eb);
  return rc;
}

static int sq_dlq_delete(bw_queue_store_t *bq, uint64_t dlq_id) {
  sq_queue_t *q = (sq_queue_t *)bq;
  bw_sqlite_t *db = q->db;
  int rc;
  pthread_mutex_lock(&db->lock);
  rc = begin_tx(db);
  if (rc == BW_OK) {
    uint64_t depth = 0, dlq_depth = 0;
    int r = dlq_exists(q, dlq_id);
    if (r == BW_OK) r = meta_get(q, &depth, &dlq_depth);
    if (r == BW_OK) r = dlq_delete_row(q, dlq_id);
    if (r == BW_OK) r = meta_set(q, depth, dlq_depth - 1);
    rc = end_tx(db, r);
  }
  pthread_mutex_unlock(&db->lock);
  return rc;
}

static int sq_stats(bw_queue_store_t *bq, bw_queue_store_stats_t *out) {
  sq_queue_t *q = (sq_queue_t *)bq;
  uint64_t depth = 0, dlq_depth = 0;
  sqlite3_stmt *s;
  int rc;
  pthread_mutex_lock(&q->db->lock);
  *out = q->st;
  out->max_size = q->cfg.max_size;
  out->warning = q->warned;
  rc = meta_get(q, &depth, &dlq_depth);
  if (rc == BW_OK) {
    s = stmt(q->db, S_Q_INFLIGHT);
    if (s == NULL) {
      rc = BW_E_IO;
    } else {
      int r;
      bind_text(s, 1, q->name);
      sqlite3_bind_int64(s, 2, sq_now(q));
      r = sqlite3_step(s);
      if (r == SQLITE_ROW)
        out->in_flight = (uint64_t)sqlite3_column_int64(s, 0);
      else
        rc = db_fail(q->db, r);
      finish(s);
    }
  }
  pthread_mutex_unlock(&q->db->lock);
  out->depth = depth;
  out->dlq_depth = dlq_depth;
  out->fill = (double)depth / (double)q->cfg.max_size;
  return rc;
}

static const char *sq_name(const bw_queue_store_t *q) {
  return ((const sq_queue_t *)q)->name;
}

static void sq_free(bw_queue_store_t *bq) {
  sq_queue_t *q = (sq_queue_t *)bq;
  bw_free(q->name);
  bw_free(q);
}

static const bw_queue_store_vtable_t sq_vtable = {
    "sqlite",    sq_enqueue,     sq_claim,      sq_ack,   sq_nack, sq_reject,
    sq_dlq_list, sq_dlq_requeue, sq_dlq_delete, sq_stats, sq_name, sq_free};

bw_queue_store_t *bw_sqlite_queue_new(bw_sqlite_t *db,
                                      const bw_queue_store_config_t *cfg,
                                      bw_error_t *err) {
  sq_queue_t *q;
  sqlite3_stmt *s;
  char *name;
  int rc;
  if (!has_db(db, err) || bw_queue_store_config_validate(cfg, err) != BW_OK)
    return NULL;
  q = alloc_named(sizeof(*q), cfg->name, &name, err);
  if (q == NULL) return NULL;
  q->name = name;
  q->base.vt = &sq_vtable;
  q->db = db;
  q->cfg = *cfg;
  q->cfg.name = q->name;
  if (q->cfg.clock == NULL) q->cfg.clock = bw_clock_realtime();
  if (q->cfg.wall_clock == NULL) q->cfg.wall_clock = bw_clock_realtime();
  bw_queue_store_config_levels(&q->cfg, &q->warn_at, &q->rearm_below);
  pthread_mutex_lock(&db->lock);
  s = stmt(db, S_META_ENSURE);
  if (s == NULL) {
    rc = BW_E_IO;
  } else {
    bind_text(s, 1, q->name);
    rc = run(db, s);
  }
  if (rc != BW_OK)
    /* the file failed (damaged, locked), not the name: the field is path */
    bw_error_set(err, rc, rc == BW_E_NOMEM ? "" : "path",
                 "queue %s: cannot register it: %s", q->name, db->last_error);
  pthread_mutex_unlock(&db->lock);
  if (rc != BW_OK) {
    sq_free(&q->base);
    return NULL;
  }
  bw_error_clear(err);
  return &q->base;
}

/* ==== idempotency ======================================================== */

typedef struct sq_idem_s {
  bw_idem_store_t base;
  bw_sqlite_t *db;
  char *name;
  bw_idem_config_t cfg;
  uint64_t ops; /* sweep expired records every 1024 begins */
  bw_idem_stats_t st;
} sq_idem_t;

static int idem_put(sq_idem_t *s, const char *key, int state, uint64_t token,
                    int status, int64_t expires, const void *res, size_t len) {
  sqlite3_stmt *st = stmt(s->db, S_I_PUT);
  if (st == NULL) return BW_E_IO;
  bind_text(st, 1, s->name);
  bind_text(st, 2, key);
  sqlite3_bind_int(st, 3, state);
  sqlite3_bind_int64(st, 4, (sqlite3_int64)token);
  sqlite3_bind_int(st, 5, status);
  sqlite3_bind_int64(st, 6, expires);
  if (state == BW_IDEM_DONE)
    bind_blob(st, 7, res, len);
  else
    sqlite3_bind_null(st, 7);
  return run(s->db, st);
}

/* Reads a record: BW_OK (filled), BW_E_NOTFOUND. result only when want. */
static int idem_get(sq_idem_t *s, const char *key, bw_idem_record_t *rec,
                    bool want_result) {
  sqlite3_stmt *st = stmt(s->db, S_I_GET);
  int r;
  if (st == NULL) return BW_E_IO;
  bind_text(st, 1, s->name);
  bind_text(st, 2, key);
  r = sqlite3_step(st);
  if (r == SQLITE_DONE) {
    finish(st);
    return BW_E_NOTFOUND;
  }
  if (r != SQLITE_ROW) {
    finish(st);
    return db_fail(s->db, r);
  }
  rec->state = (bw_idem_state_t)sqlite3_column_int(st, 0);
  rec->token = (uint64_t)sqlite3_column_int64(st, 1);
  rec->status = sqlite3_column_int(st, 2);
  rec->expires_ns = sqlite3_column_int64(st, 3);
  if (want_result && rec->state == BW_IDEM_DONE) {
    rec->result = copy_blob(st, 4, &rec->len);
    if (rec->result == NULL) {
      finish(st);
      return BW_E_NOMEM;
    }
  }
  finish(st);
  return BW_OK;
}

static int si_begin(bw_idem_store_t *bs, const char *key,
                    bw_idem_record_t *out) {
  sq_idem_t *s = (sq_idem_t *)bs;
  bw_sqlite_t *db = s->db;
  int rc;
  pthread_mutex_lock(&db->lock);
  rc = begin_tx(db);
  if (rc == BW_OK) {
    int64_t now = bw_clock_now(s->cfg.clock);
    bw_idem_record_t rec;
    int r;
    memset(&rec, 0, sizeof(rec));
    if ((++s->ops & 1023) == 0) {
      sqlite3_stmt *st = stmt(db, S_I_SWEEP);
      if (st != NULL) {
        bind_text(st, 1, s->name);
        sqlite3_bind_int64(st, 2, now);
        run(db, st);
      }
    }
    r = idem_get(s, key, &rec, true);
    if (r == BW_OK && rec.expires_ns <= now) {
      bw_free(rec.result);
      memset(&rec, 0, sizeof(rec));
      r = BW_E_NOTFOUND;
    }
    if (r == BW_E_NOTFOUND) {
      uint64_t token = random_token();
      int64_t exp = now + s->cfg.lease_ms * BW_NS_PER_MS;
      r = idem_put(s, key, BW_IDEM_IN_PROGRESS, token, 0, exp, NULL, 0);
      if (r == BW_OK) {
        out->state = BW_IDEM_NEW;
        out->token = token;
        out->expires_ns = exp;
      }
    } else if (r == BW_OK && rec.state == BW_IDEM_IN_PROGRESS) {
      out->state = BW_IDEM_IN_PROGRESS;
      out->expires_ns = rec.expires_ns;
    } else if (r == BW_OK) {
      *out = rec;
      out->token = 0;
    }
    rc = end_tx(db, r);
    if (rc != BW_OK) {
      bw_idem_record_clear(out);
    } else if (out->state == BW_IDEM_NEW) {
      s->st.began++;
    } else if (out->state == BW_IDEM_IN_PROGRESS) {
      s->st.in_progress++;
    } else {
      s->st.hits++;
    }
  }
  pthread_mutex_unlock(&db->lock);
  return rc;
}

static int si_finish(sq_idem_t *s, const char *key, uint64_t token,
                     bool complete, int status, const void *res, size_t len) {
  bw_sqlite_t *db = s->db;
  int rc;
  pthread_mutex_lock(&db->lock);
  rc = begin_tx(db);
  if (rc == BW_OK) {
    bw_idem_record_t rec;
    int r;
    memset(&rec, 0, sizeof(rec));
    r = idem_get(s, key, &rec, false);
    if (r == BW_E_NOTFOUND ||
        (r == BW_OK &&
         (rec.state != BW_IDEM_IN_PROGRESS || rec.token != token)))
      r = BW_E_STALE;
    if (r == BW_OK && complete) {
      r = idem_put(s, key, BW_IDEM_DONE, 0, status,
                   bw_clock_now(s->cfg.clock) + s->cfg.ttl_ms * BW_NS_PER_MS,
                   res, len);
    } else if (r == BW_OK) {
      sqlite3_stmt *st = stmt(db, S_I_DELETE);
      if (st == NULL) {
        r = BW_E_IO;
      } else {
        bind_text(st, 1, s->name);
        bind_text(st, 2, key);
        r = run(db, st);
      }
    }
    rc = end_tx(db, r);
    if (rc == BW_OK && complete)
      s->st.completed++;
    else if (rc == BW_OK)
      s->st.abandoned++;
    else if (rc == BW_E_STALE)
      s->st.stale++;
  }
  pthread_mutex_unlock(&db->lock);
  return rc;
}

static int si_complete(bw_idem_store_t *s, const char *key, uint64_t token,
                       int status, const void *result, size_t len) {
  return si_finish((sq_idem_t *)s, key, token, true, status, result, len);
}

static int si_abandon(bw_idem_store_t *s, const char *key, uint64_t token) {
  return si_finish((sq_idem_t *)s, key, token, false, 0, NULL, 0);
}

static int si_stats(bw_idem_store_t *bs, bw_idem_stats_t *out) {
  sq_idem_t *s = (sq_idem_t *)bs;
  sqlite3_stmt *st;
  int rc = BW_OK;
  pthread_mutex_lock(&s->db->lock);
  *out = s->st;
  st = stmt(s->db, S_I_COUNT);
  if (st == NULL) {
    rc = BW_E_IO;
  } else {
    int r;
    bind_text(st, 1, s->name);
    r = sqlite3_step(st);
    if (r == SQLITE_ROW)
      out->keys = (uint64_t)sqlite3_column_int64(st, 0);
    else
      rc = db_fail(s->db, r);
    finish(st);
  }
  pthread_mutex_unlock(&s->db->lock);
  return rc;
}

static const char *si_name(const bw_idem_store_t *s) {
  return ((const sq_idem_t *)s)->name;
}

static void si_free(bw_idem_store_t *bs) {
  sq_idem_t *s = (sq_idem_t *)bs;
  bw_free(s->name);
  bw_free(s);
}

static const bw_idem_store_vtable_t si_vtable = {
    "sqlite", si_begin, si_complete, si_abandon, si_stats, si_name, si_free};

bw_idem_store_t *bw_sqlite_idem_new(bw_sqlite_t *db,
                                    const bw_idem_config_t *cfg,
                                    bw_error_t *err) {
  sq_idem_t *s;
  char *name;
  if (!has_db(db, err) || bw_idem_config_validate(cfg, err) != BW_OK)
    return NULL;
  s = alloc_named(sizeof(*s), cfg->name, &name, err);
  if (s == NULL) return NULL;
  s->name = name;
  s->base.vt = &si_vtable;
  s->db = db;
  s->cfg = *cfg;
  s->cfg.name = s->name;
  if (s->cfg.clock == NULL) s->cfg.clock = bw_clock_realtime();
  bw_error_clear(err);
  return &s->base;
}

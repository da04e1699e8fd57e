/* Specification tests: the store interface (store.h) — the behavioural
 * table of store_behaviour.h run against the memory backend (the
 * reference) and the SQLite backend — plus what only SQLite has: durability
 * across reopen, two handles on one file sharing a guard, and clear errors for
 * foreign, corrupt and newer files.
 *
 * Every test runs on a manual clock starting at BWT_T0_NS and asserts
 * exact values (leases and delays are clock readings, not waits). SQLite
 * files live in a fresh directory under /tmp, removed by teardown. */
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "breakwater/store_sqlite.h"
#include "sqlite_dir.h"
#include "store_behaviour.h"

/* ==== the backends ======================================================= */

/* The SQLite backend's per-test state: a fresh directory and its store. */
typedef struct sq_s {
  bwt_sqlite_dir_t f; /* f.path: the store file */
  bw_sqlite_t *db;    /* opened on first use, closed by cleanup */
} sq_t;

#define SQ(e) ((sq_t *)(e)->priv)

static bw_queue_store_t *mem_queue(bws_env_t *e,
                                   const bw_queue_store_config_t *cfg,
                                   bw_error_t *err) {
  (void)e;
  return bw_mem_queue_new(cfg, err);
}

static bw_idem_store_t *mem_idem(bws_env_t *e, const bw_idem_config_t *cfg,
                                 bw_error_t *err) {
  (void)e;
  return bw_mem_idem_new(cfg, err);
}

static bw_sqlite_t *open_db(const char *path) {
  return bwt_sqlite_open(path, -1);
}

static int sq_setup(bws_env_t *e) {
  sq_t *s = calloc(1, sizeof(*s));
  if (s == NULL) return -1;
  e->priv = s;
  return bwt_sqlite_dir_make(&s->f, "bw-store-test", "store.db");
}

static void sq_cleanup(bws_env_t *e) {
  sq_t *s = SQ(e);
  if (s == NULL) return;
  bw_sqlite_close(s->db);
  bwt_sqlite_dir_remove(&s->f);
  free(s);
  e->priv = NULL;
}

static bw_queue_store_t *sq_queue(bws_env_t *e,
                                  const bw_queue_store_config_t *cfg,
                                  bw_error_t *err) {
  if (SQ(e)->db == NULL) SQ(e)->db = open_db(SQ(e)->f.path);
  return bw_sqlite_queue_new(SQ(e)->db, cfg, err);
}

static bw_idem_store_t *sq_idem(bws_env_t *e, const bw_idem_config_t *cfg,
                                bw_error_t *err) {
  if (SQ(e)->db == NULL) SQ(e)->db = open_db(SQ(e)->f.path);
  return bw_sqlite_idem_new(SQ(e)->db, cfg, err);
}

static bws_backend_t memory_backend = {"memory",  true,     NULL,
                                       mem_queue, mem_idem, NULL};
static bws_backend_t sqlite_backend = {"sqlite", true,    sq_setup,
                                       sq_queue, sq_idem, sq_cleanup};

/* ==== SQLite only ======================================================== */

static void items_and_leases_survive_a_reopen(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t it;
  uint64_t a = put(q, "one"), b = put(q, "two");
  it = claim1(q, 1000);
  assert_u64_eq(it.id, a);
  bw_queue_store_free(e->q);
  e->q = NULL;
  bw_sqlite_close(SQ(e)->db);
  SQ(e)->db = NULL;
  q = default_queue(e);
  {
    bw_queue_store_stats_t s = qstats(q);
    assert_u64_eq(s.depth, 2);
    assert_u64_eq(s.in_flight, 1);
    assert_u64_eq(s.enqueued, 0); /* counters are per handle */
  }
  {
    bw_stored_item_t x = claim1(q, 1000); /* "one" is still leased */
    assert_u64_eq(x.id, b);
    bw_stored_items_clear(&x, 1);
  }
  assert_status(bw_queue_store_ack(q, it.id, it.receipt), BW_OK);
  bw_stored_items_clear(&it, 1);
  /* a new id is never a reused one */
  assert_true(put(q, "three") > b);
}

static void two_handles_share_one_queue_and_guard(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_sqlite_t *db2;
  bw_queue_store_t *q2;
  bw_error_t err;
  qconfig(e, &cfg);
  cfg.max_size = 2;
  make_queue(e, &cfg);
  db2 = open_db(SQ(e)->f.path);
  q2 = bw_sqlite_queue_new(db2, &cfg, &err);
  assert_non_null(q2);
  put(e->q, "from 1");
  put(q2, "from 2");
  assert_status(bw_queue_store_enqueue(e->q, "x", 1, NULL), BW_E_FULL);
  assert_status(bw_queue_store_enqueue(q2, "y", 1, NULL), BW_E_FULL);
  assert_u64_eq(qstats(q2).depth, 2);
  assert_u64_eq(qstats(e->q).dlq_depth, 2);
  /* another name in the same file is another queue */
  cfg.name = "other";
  {
    bw_queue_store_t *q3 = bw_sqlite_queue_new(db2, &cfg, &err);
    assert_non_null(q3);
    assert_u64_eq(qstats(q3).depth, 0);
    assert_u64_eq(claim_count(q3, 4), 0);
    bw_queue_store_free(q3);
  }
  bw_queue_store_free(q2);
  bw_sqlite_close(db2);
}

static void make_foreign(const char *path, const char *sql) {
  sqlite3 *h = NULL;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
}

static void open_fails(const char *path, const char *what) {
  bw_sqlite_config_t sc;
  bw_error_t err;
  bwt_prefill_error(&err);
  bw_sqlite_config_init(&sc);
  sc.path = path;
  assert_null(bw_sqlite_open(&sc, &err));
  assert_status(err.code, BW_E_IO);
  assert_string_equal(err.field, "path");
  assert_contains(err.message, path);
  assert_contains(err.message, what);
}

static void a_foreign_database_is_refused_by_name(void **state) {
  bws_env_t *e = *state;
  make_foreign(SQ(e)->f.path, "CREATE TABLE users(id INTEGER PRIMARY KEY)");
  open_fails(SQ(e)->f.path,
             "not a breakwater store: application_id 0 and 1 schema "
             "objects of another application");
  bwt_sqlite_dir_remove(&SQ(e)->f);
  mkdir(SQ(e)->f.dir, 0700);
  make_foreign(SQ(e)->f.path, "PRAGMA application_id=4660");
  open_fails(SQ(e)->f.path,
             "not a breakwater store: application_id 0x00001234 "
             "(expected 0x42575354)");
}

static void a_newer_schema_is_refused(void **state) {
  bws_env_t *e = *state;
  bw_sqlite_t *db = open_db(SQ(e)->f.path);
  bw_sqlite_close(db);
  make_foreign(SQ(e)->f.path, "PRAGMA user_version=99");
  open_fails(SQ(e)->f.path,
             "store schema version 99 is newer than this library's "
             "(1)");
}

static void a_file_that_is_not_a_database_is_refused(void **state) {
  bws_env_t *e = *state;
  int fd = open(SQ(e)->f.path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  char junk[4096];
  size_t i;
  assert_true(fd >= 0);
  for (i = 0; i < sizeof(junk); i++)
    junk[i] = (char)(i * 7 + 3);
  assert_int_equal(write(fd, junk, sizeof(junk)), (int)sizeof(junk));
  close(fd);
  open_fails(SQ(e)->f.path, "file is not a database");
}

static void a_corrupted_store_fails_its_integrity_check(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_error_t err;
  char big[3000];
  int i, fd;
  memset(big, 'z', sizeof(big));
  for (i = 0; i < 40; i++)
    assert_status(bw_queue_store_enqueue(q, big, sizeof(big), NULL), BW_OK);
  assert_status(bw_sqlite_integrity_check(SQ(e)->db, &err), BW_OK);
  bw_queue_store_free(e->q);
  e->q = NULL;
  bw_sqlite_close(SQ(e)->db); /* checkpoints the WAL into the file */
  SQ(e)->db = NULL;
  /* scribble over pages 2.. (page 1, the header, stays valid) */
  fd = open(SQ(e)->f.path, O_WRONLY);
  assert_true(fd >= 0);
  memset(big, 0xEE, sizeof(big));
  for (i = 0; i < 8; i++)
    assert_int_equal(pwrite(fd, big, 2048, 4096 + (off_t)i * 4096), 2048);
  close(fd);
  {
    bw_sqlite_config_t sc;
    bw_sqlite_t *db;
    bw_sqlite_config_init(&sc);
    sc.path = SQ(e)->f.path;
    bwt_prefill_error(&err);
    db = bw_sqlite_open(&sc, &err);
    if (db == NULL) { /* damage seen at open: named clearly */
      assert_status(err.code, BW_E_IO);
      assert_contains(err.message, SQ(e)->f.path);
    } else {
      assert_status(bw_sqlite_integrity_check(db, &err), BW_E_IO);
      assert_contains(err.message, SQ(e)->f.path);
      assert_contains(err.message, "integrity_check");
      bw_sqlite_close(db);
    }
  }
}

/* Fills the store with 40 items of 3000 bytes (about 30 pages), closes it
 * (the WAL is checkpointed into the file) and returns the file's size. */
static off_t fill_and_close(bws_env_t *e) {
  bw_queue_store_t *q = default_queue(e);
  char big[3000];
  struct stat sb;
  int i;
  memset(big, 'z', sizeof(big));
  for (i = 0; i < 40; i++)
    assert_status(bw_queue_store_enqueue(q, big, sizeof(big), NULL), BW_OK);
  bw_queue_store_free(e->q);
  e->q = NULL;
  bw_sqlite_close(SQ(e)->db);
  SQ(e)->db = NULL;
  assert_int_equal(stat(SQ(e)->f.path, &sb), 0);
  return sb.st_size;
}

/* The error of a damaged store: an I/O error naming the field `path`, with
 * the failing step's own message, exactly `want` (never "not an error",
 * the message SQLite keeps after the ROLLBACK that followed the failure). */
static void damaged_error(const bw_error_t *err, const char *want) {
  assert_status(err->code, BW_E_IO);
  assert_string_equal(err->field, "path");
  assert_string_equal(err->message, want);
  assert_null(strstr(err->message, "not an error"));
}

static void a_truncated_store_is_refused_with_the_first_error(void **state) {
  bws_env_t *e = *state;
  off_t size = fill_and_close(e);
  char want[256];
  bw_sqlite_config_t sc;
  bw_error_t err;
  assert_true(size > 16 * 4096);
  assert_int_equal(truncate(SQ(e)->f.path, 3 * 4096), 0);
  bw_sqlite_config_init(&sc);
  sc.path = SQ(e)->f.path;
  bwt_prefill_error(&err);
  assert_null(bw_sqlite_open(&sc, &err));
  snprintf(want, sizeof(want), "%s: database disk image is malformed",
           SQ(e)->f.path);
  damaged_error(&err, want);
}

static void a_damaged_page_is_refused_naming_path(void **state) {
  bws_env_t *e = *state;
  char junk[4096];
  sqlite3 *h = NULL;
  sqlite3_stmt *s = NULL;
  int fd, pages = 0;
  char want[256];
  bw_queue_store_config_t qc;
  bw_queue_store_t *q;
  bw_sqlite_t *db;
  bw_error_t err;
  fill_and_close(e);
  /* scribble over the pages of bw_qmeta and its index, which registering
   * a queue reads (page 1, the header and sqlite_master, stays valid) */
  memset(junk, 0xEE, sizeof(junk));
  fd = open(SQ(e)->f.path, O_WRONLY);
  assert_true(fd >= 0);
  assert_int_equal(sqlite3_open(SQ(e)->f.path, &h), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h,
                                      "SELECT rootpage FROM sqlite_master "
                                      "WHERE tbl_name = 'bw_qmeta'",
                                      -1, &s, NULL),
                   SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) {
    off_t at = (off_t)(sqlite3_column_int64(s, 0) - 1) * 4096;
    assert_true(at > 0);
    assert_int_equal(pwrite(fd, junk, sizeof(junk), at), (int)sizeof(junk));
    pages++;
  }
  sqlite3_finalize(s);
  sqlite3_close(h);
  close(fd);
  assert_int_equal(pages, 2); /* the table and its primary key's index */
  /* the header is sound: the damage shows when the queue is registered */
  db = open_db(SQ(e)->f.path);
  qconfig(e, &qc);
  bwt_prefill_error(&err);
  q = bw_sqlite_queue_new(db, &qc, &err);
  bw_sqlite_close(db);
  assert_null(q);
  snprintf(want, sizeof(want),
           "queue %s: cannot register it: %s: database disk image is "
           "malformed (11)",
           qc.name, SQ(e)->f.path);
  damaged_error(&err, want);
}

static void open_validates_its_configuration(void **state) {
  bws_env_t *e = *state;
  bw_sqlite_config_t sc;
  bw_queue_store_config_t qc;
  bw_error_t err;
  bw_sqlite_config_init(&sc);
  assert_int_equal(sc.synchronous, BW_SQLITE_SYNC_NORMAL);
  assert_i64_eq(sc.busy_timeout_ms, 5000);
  assert_true(sc.group_commit);
  bwt_prefill_error(&err);
  assert_null(bw_sqlite_open(&sc, &err));
  assert_true(bwt_error_names(&err, "path"));
  sc.path = SQ(e)->f.path;
  sc.busy_timeout_ms = -1;
  assert_null(bw_sqlite_open(&sc, &err));
  assert_true(bwt_error_names(&err, "busy_timeout_ms"));
  sc.busy_timeout_ms = 0;
  sc.synchronous = (bw_sqlite_sync_t)7;
  assert_null(bw_sqlite_open(&sc, &err));
  assert_true(bwt_error_names(&err, "synchronous"));
  sc.synchronous = BW_SQLITE_SYNC_FULL;
  SQ(e)->db = bw_sqlite_open(&sc, &err);
  assert_non_null(SQ(e)->db);
  assert_string_equal(bw_sqlite_path(SQ(e)->db), SQ(e)->f.path);
  qconfig(e, &qc);
  qc.max_deliveries = 0;
  assert_null(bw_sqlite_queue_new(SQ(e)->db, &qc, &err));
  assert_true(bwt_error_names(&err, "max_deliveries"));
  qc.max_deliveries = 1;
  assert_null(bw_sqlite_queue_new(NULL, &qc, &err));
  assert_true(bwt_error_names(&err, "db"));
}

#define SQL(f) BWS_TEST(f, &sqlite_backend)

int main(void) {
  const struct CMUnitTest tests[] = {
      BWS_TABLE(&memory_backend),
      BWS_TABLE(&sqlite_backend),
      SQL(items_and_leases_survive_a_reopen),
      SQL(two_handles_share_one_queue_and_guard),
      SQL(a_foreign_database_is_refused_by_name),
      SQL(a_newer_schema_is_refused),
      SQL(a_file_that_is_not_a_database_is_refused),
      SQL(a_corrupted_store_fails_its_integrity_check),
      SQL(a_truncated_store_is_refused_with_the_first_error),
      SQL(a_damaged_page_is_refused_naming_path),
      SQL(open_validates_its_configuration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

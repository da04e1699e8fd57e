/* Crash safety of the SQLite durable queue: a child process enqueues
 * continuously (single enqueues through the group-commit path in even
 * rounds, batches of 10 in odd ones) and reports each id on a pipe only
 * after enqueue returned; the parent SIGKILLs it at a random moment, 100
 * times, and after each kill reopens the file and checks:
 * - every reported item is present exactly once (payloads are unique);
 * - no payload is present twice (nothing duplicated by recovery);
 * - the queue's bookkeeping matches its rows (bw_qmeta depth = rows);
 * - PRAGMA integrity_check says ok.
 * Real processes and real time: the kill moments are random (seeded), and
 * nothing about timing is asserted. Every loop is bounded. */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breakwater/store.h"
#include "breakwater/store_sqlite.h"
#include "bw_test.h"
#include "sqlite_dir.h"

#define ROUNDS 100
#define ROUND_BASE UINT64_C(1000000)

static bwt_sqlite_dir_t g_files; /* the store file the writers fill */

static void child(int wfd, uint64_t base, bool batch) {
  bw_sqlite_config_t sc;
  bw_queue_store_config_t qc;
  bw_sqlite_t *db;
  bw_queue_store_t *q;
  uint64_t i;
  bw_sqlite_config_init(&sc);
  sc.path = g_files.path;
  db = bw_sqlite_open(&sc, NULL);
  if (db == NULL) _exit(3);
  bw_queue_store_config_init(&qc);
  qc.name = "crash";
  qc.max_size = 10000000;
  q = bw_sqlite_queue_new(db, &qc, NULL);
  if (q == NULL) _exit(4);
  for (i = 0; i < ROUND_BASE - 16;) { /* bounded; the kill comes first */
    if (!batch) {
      uint64_t v = base + i;
      if (bw_queue_store_enqueue(q, &v, sizeof(v), NULL) != BW_OK) _exit(5);
      if (write(wfd, &v, sizeof(v)) != (ssize_t)sizeof(v)) _exit(6);
      i++;
    } else {
      uint64_t v[10];
      bw_blob_t b[10];
      int k;
      for (k = 0; k < 10; k++) {
        v[k] = base + i + (uint64_t)k;
        b[k].data = &v[k];
        b[k].len = sizeof(v[k]);
      }
      if (bw_queue_store_enqueue_batch(q, b, 10, NULL, NULL) != BW_OK) _exit(5);
      if (write(wfd, v, sizeof(v)) != (ssize_t)sizeof(v)) _exit(6);
      i += 10;
    }
  }
  _exit(0);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Every payload in the queue, sorted; *n rows. Also checks meta. */
static uint64_t *load_all(size_t *n) {
  sqlite3 *h = NULL;
  sqlite3_stmt *s = NULL;
  size_t cap = 1024, cnt = 0;
  uint64_t *v = malloc(cap * sizeof(*v));
  int64_t meta = -1;
  assert_non_null(v);
  assert_int_equal(
      sqlite3_open_v2(g_files.path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h,
                                      "SELECT payload FROM bw_queue WHERE "
                                      "qname = 'crash'",
                                      -1, &s, NULL),
                   SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) {
    uint64_t x;
    assert_int_equal(sqlite3_column_bytes(s, 0), (int)sizeof(x));
    memcpy(&x, sqlite3_column_blob(s, 0), sizeof(x));
    if (cnt == cap) {
      cap *= 2;
      v = realloc(v, cap * sizeof(*v));
      assert_non_null(v);
    }
    v[cnt++] = x;
  }
  sqlite3_finalize(s);
  assert_int_equal(sqlite3_prepare_v2(h,
                                      "SELECT depth FROM bw_qmeta WHERE "
                                      "qname = 'crash'",
                                      -1, &s, NULL),
                   SQLITE_OK);
  if (sqlite3_step(s) == SQLITE_ROW) meta = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(h);
  if (cnt > 0) assert_i64_eq(meta, (int64_t)cnt);
  qsort(v, cnt, sizeof(*v), cmp_u64);
  *n = cnt;
  return v;
}

static void killed_writers_lose_and_duplicate_nothing(void **state) {
  bw_rand_t rng;
  uint64_t *acked = NULL;
  size_t nacked = 0, cap = 0;
  int round;
  uint64_t total_rows = 0;
  (void)state;
  bw_rand_seed(&rng, 20261130);
  for (round = 0; round < ROUNDS; round++) {
    int fds[2];
    pid_t pid;
    int status;
    uint64_t buf[512];
    ssize_t got;
    size_t rows = 0, i, before = nacked;
    uint64_t *all;
    struct timespec ts;
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      child(fds[1], (uint64_t)(round + 1) * ROUND_BASE, (round & 1) != 0);
    }
    close(fds[1]);
    /* 2-40 ms, then SIGKILL (a child that fills the pipe, 8192 ids, just
     * waits for the kill) */
    ts.tv_sec = 0;
    ts.tv_nsec = (long)bw_rand_range(&rng, 2000000, 40000000);
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
      fail_msg("round %d: the child ended on its own (status %d)", round,
               status);
    for (;;) { /* the write end is closed: read to EOF */
      got = read(fds[0], buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      assert_int_equal(got % (ssize_t)sizeof(uint64_t), 0);
      for (i = 0; i < (size_t)got / sizeof(uint64_t); i++) {
        if (nacked == cap) {
          cap = cap ? cap * 2 : 4096;
          acked = realloc(acked, cap * sizeof(*acked));
          assert_non_null(acked);
        }
        acked[nacked++] = buf[i];
      }
    }
    close(fds[0]);
    /* reopen through the library (recovers the WAL), then check */
    {
      bw_sqlite_config_t sc;
      bw_error_t err;
      bw_sqlite_t *db;
      bw_sqlite_config_init(&sc);
      sc.path = g_files.path;
      db = bw_sqlite_open(&sc, &err);
      if (db == NULL) fail_msg("round %d: reopen: %s", round, err.message);
      if (bw_sqlite_integrity_check(db, &err) != BW_OK)
        fail_msg("round %d: %s", round, err.message);
      bw_sqlite_close(db);
    }
    all = load_all(&rows);
    for (i = 1; i < rows; i++)
      if (all[i] == all[i - 1])
        fail_msg("round %d: item %llu is present twice", round,
                 (unsigned long long)all[i]);
    for (i = before; i < nacked; i++)
      if (bsearch(&acked[i], all, rows, sizeof(*all), cmp_u64) == NULL)
        fail_msg("round %d: item %llu was acknowledged and is missing", round,
                 (unsigned long long)acked[i]);
    /* earlier rounds' items are all still there too */
    for (i = 0; i < before; i += 97)
      assert_non_null(bsearch(&acked[i], all, rows, sizeof(*all), cmp_u64));
    total_rows = rows;
    free(all);
  }
  print_message("crash: %d kills, %zu acknowledged items, %llu stored\n",
                ROUNDS, nacked, (unsigned long long)total_rows);
  assert_true(total_rows >= nacked);
  free(acked);
}

static int setup(void **state) {
  (void)state;
  return bwt_sqlite_dir_make(&g_files, "bw-crash", "queue.db");
}

static int teardown(void **state) {
  (void)state;
  bwt_sqlite_dir_remove(&g_files);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(killed_writers_lose_and_duplicate_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

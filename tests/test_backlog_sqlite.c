/* Specification tests: the backlog gauge (backlog.h) over a real SQLite
 * queue (store_sqlite.h) — the webhook edge's pressure from the backlog
 * actually stored. The producer and the backlog use two handles, each on
 * its own connection to the file, as two processes would: the backlog sees
 * what the other connection committed. The cases are backlog_cases.h's. */
#include "breakwater/backlog.h"
#include "backlog_cases.h"
#include "sqlite_dir.h"

typedef struct sq_s {
  bwt_sqlite_dir_t dir;
  bw_sqlite_t *db_producer, *db_reader;
} sq_t;

static bw_sqlite_t *open_db(const char *path) {
  bw_sqlite_config_t sc;
  bw_error_t err;
  bw_sqlite_t *db;
  bw_sqlite_config_init(&sc);
  sc.path = path;
  db = bw_sqlite_open(&sc, &err);
  if (db == NULL) fprintf(stderr, "open: %s\n", err.message);
  return db;
}

static int bwt_backlog_store(bwt_backlog_env_t *e) {
  bw_queue_store_config_t qc;
  sq_t *s = calloc(1, sizeof(*s));
  if (s == NULL || bwt_sqlite_dir_make(&s->dir, "bw-backlog", "q.db") != 0)
    return -1;
  e->backend = s;
  s->db_producer = open_db(s->dir.path);
  s->db_reader = open_db(s->dir.path);
  if (s->db_producer == NULL || s->db_reader == NULL) return -1;
  bw_queue_store_config_init(&qc);
  qc.name = "webhooks";
  qc.max_size = 100;
  qc.clock = e->clock;
  e->producer = bw_sqlite_queue_new(s->db_producer, &qc, NULL);
  e->reader = bw_sqlite_queue_new(s->db_reader, &qc, NULL);
  return e->producer != NULL && e->reader != NULL ? 0 : -1;
}

static void bwt_backlog_store_free(bwt_backlog_env_t *e) {
  sq_t *s = e->backend;
  bw_queue_store_free(e->producer);
  bw_queue_store_free(e->reader);
  if (s == NULL) return;
  bw_sqlite_close(s->db_producer);
  bw_sqlite_close(s->db_reader);
  bwt_sqlite_dir_remove(&s->dir);
  free(s);
}

static void the_two_handles_are_one_queue(void **state) {
  bwt_backlog_env_t *e = *state;
  bw_queue_store_stats_t st;
  assert_true(e->producer != e->reader);
  bwt_enqueue(e, 3);
  assert_status(bw_queue_store_stats(e->reader, &st), BW_OK);
  assert_u64_eq(st.depth, 3);
  assert_u64_eq(st.enqueued, 0); /* this handle enqueued nothing */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BWT_BACKLOG_CASES,
      cmocka_unit_test_setup_teardown(the_two_handles_are_one_queue,
                                      bwt_backlog_setup, bwt_backlog_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

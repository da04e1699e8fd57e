/* Installed-library check: a durable queue in a SQLite file
 * (breakwater-sqlite). Exit 0 when an item goes in and comes back. */
#include <breakwater/store_sqlite.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  char path[128];
  bw_sqlite_config_t dc;
  bw_queue_store_config_t qc;
  bw_queue_store_stats_t st;
  bw_error_t err;
  bw_sqlite_t *db;
  bw_queue_store_t *q;
  uint64_t id = 0;
  snprintf(path, sizeof path, "/tmp/bw-install-%ld.db", (long)getpid());
  bw_sqlite_config_init(&dc);
  dc.path = path;
  db = bw_sqlite_open(&dc, &err);
  if (db == NULL) return fprintf(stderr, "sqlite: %s\n", err.message), 1;
  bw_queue_store_config_init(&qc);
  q = bw_sqlite_queue_new(db, &qc, &err);
  if (q == NULL) return fprintf(stderr, "queue: %s\n", err.message), 1;
  if (bw_queue_store_enqueue(q, "hello", 5, &id) != BW_OK || id == 0) return 1;
  if (bw_queue_store_stats(q, &st) != BW_OK || st.depth != 1) return 1;
  bw_queue_store_free(q);
  bw_sqlite_close(db);
  unlink(path);
  puts("sqlite: ok");
  return 0;
}

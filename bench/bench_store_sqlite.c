/* bench_store_sqlite — durable enqueue throughput and ack latency of the
 * SQLite queue (store_sqlite.h), on disk.
 *
 * Rows:
 *   enqueue  one thread, synchronous NORMAL and FULL, batches of 1, 10, 100
 *            and 1000 items (bw_queue_store_enqueue_batch: one commit per
 *            batch; batch 1 is bw_queue_store_enqueue). 100-byte payloads.
 *            items/s over a timed run.
 *   group    4 threads of single enqueues on one handle, group commit on
 *            and off: how much commit sharing buys.
 *   ack      latency of one bw_queue_store_ack (its own transaction) after
 *            a claim of 100: p50 / p99 / mean in microseconds.
 * Each cell runs for a fixed time budget (0.5 s; --quick 0.1 s) and at most
 * 2 million items, on a fresh file in a new directory under /var/tmp (disk,
 * not tmpfs: fsync must be real), removed afterwards.
 *
 *   build/bench/bench_store_sqlite [--quick]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "breakwater/store.h"
#include "breakwater/store_sqlite.h"

#define MAX_ITEMS 2000000
#define PAYLOAD 100

static double g_budget = 0.5;
static char g_dir[64];
static char g_path[128];

static void remove_db(void) {
  char p[160];
  unlink(g_path);
  snprintf(p, sizeof(p), "%s-wal", g_path);
  unlink(p);
  snprintf(p, sizeof(p), "%s-shm", g_path);
  unlink(p);
}

static bw_sqlite_t *open_db(bw_sqlite_sync_t sync, bool group) {
  bw_sqlite_config_t sc;
  bw_error_t err;
  bw_sqlite_t *db;
  remove_db();
  bw_sqlite_config_init(&sc);
  sc.path = g_path;
  sc.synchronous = sync;
  sc.group_commit = group;
  db = bw_sqlite_open(&sc, &err);
  if (db == NULL) {
    fprintf(stderr, "open: %s\n", err.message);
    exit(1);
  }
  return db;
}

static bw_queue_store_t *open_queue(bw_sqlite_t *db) {
  bw_queue_store_config_t qc;
  bw_error_t err;
  bw_queue_store_t *q;
  bw_queue_store_config_init(&qc);
  qc.name = "bench";
  qc.max_size = 100000000;
  q = bw_sqlite_queue_new(db, &qc, &err);
  if (q == NULL) {
    fprintf(stderr, "queue: %s\n", err.message);
    exit(1);
  }
  return q;
}

static const char *sync_name(bw_sqlite_sync_t s) {
  return s == BW_SQLITE_SYNC_FULL ? "FULL" : "NORMAL";
}

static void bench_enqueue(bw_sqlite_sync_t sync, size_t batch) {
  bw_sqlite_t *db = open_db(sync, true);
  bw_queue_store_t *q = open_queue(db);
  static char payload[PAYLOAD];
  bw_blob_t *b = malloc(batch * sizeof(*b));
  size_t i, n = 0;
  double t0, t;
  for (i = 0; i < batch; i++) {
    b[i].data = payload;
    b[i].len = sizeof(payload);
  }
  t0 = bench_now_s();
  do {
    int rc = batch == 1
                 ? bw_queue_store_enqueue(q, payload, sizeof(payload), NULL)
                 : bw_queue_store_enqueue_batch(q, b, batch, NULL, NULL);
    if (rc != BW_OK) {
      fprintf(stderr, "enqueue: %s\n", bw_strerror(rc));
      exit(1);
    }
    n += batch;
    t = bench_now_s() - t0;
  } while (t < g_budget && n < MAX_ITEMS);
  printf(
      "enqueue  sync=%-6s batch=%-5zu %10.0f items/s  (%zu items, "
      "%.2f s)\n",
      sync_name(sync), batch, (double)n / t, n, t);
  free(b);
  bw_queue_store_free(q);
  bw_sqlite_close(db);
}

typedef struct gargs_s {
  bw_queue_store_t *q;
  atomic_long *total;
  double end;
} gargs_t;

static void *group_thread(void *p) {
  gargs_t *a = p;
  static char payload[PAYLOAD];
  long n = 0;
  while (bench_now_s() < a->end && atomic_load(a->total) < MAX_ITEMS) {
    if (bw_queue_store_enqueue(a->q, payload, sizeof(payload), NULL) != BW_OK)
      break;
    n++;
    atomic_fetch_add(a->total, 1);
  }
  (void)n;
  return NULL;
}

static void bench_group(bw_sqlite_sync_t sync, bool group) {
  bw_sqlite_t *db = open_db(sync, group);
  bw_queue_store_t *q = open_queue(db);
  pthread_t t[4];
  gargs_t a;
  atomic_long total = 0;
  double t0;
  int i;
  a.q = q;
  a.total = &total;
  t0 = bench_now_s();
  a.end = t0 + g_budget;
  for (i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, group_thread, &a);
  for (i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  printf("group    sync=%-6s 4 threads, group commit %-3s %10.0f items/s\n",
         sync_name(sync), group ? "on" : "off",
         (double)atomic_load(&total) / (bench_now_s() - t0));
  bw_queue_store_free(q);
  bw_sqlite_close(db);
}

static int cmp_d(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static void bench_ack(bw_sqlite_sync_t sync) {
  bw_sqlite_t *db = open_db(sync, true);
  bw_queue_store_t *q = open_queue(db);
  static char payload[PAYLOAD];
  bw_blob_t b[1000];
  bw_stored_item_t it[100];
  double *lat = malloc(MAX_ITEMS * sizeof(double)), t0, sum = 0;
  size_t i, n = 0, k;
  for (i = 0; i < 1000; i++) {
    b[i].data = payload;
    b[i].len = sizeof(payload);
  }
  for (i = 0; i < 20; i++) /* 20 000 items ready */
    bw_queue_store_enqueue_batch(q, b, 1000, NULL, NULL);
  t0 = bench_now_s();
  while (bench_now_s() - t0 < g_budget && n + 100 <= MAX_ITEMS) {
    size_t got = 0;
    if (bw_queue_store_claim(q, 100, 60000, it, &got) != BW_OK || got == 0)
      break;
    for (k = 0; k < got; k++) {
      double s = bench_now_s();
      if (bw_queue_store_ack(q, it[k].id, it[k].receipt) != BW_OK) exit(1);
      lat[n] = (bench_now_s() - s) * 1e6;
      sum += lat[n++];
    }
    bw_stored_items_clear(it, got);
  }
  qsort(lat, n, sizeof(double), cmp_d);
  if (n > 0)
    printf(
        "ack      sync=%-6s p50 %7.1f us  p99 %7.1f us  mean %7.1f us  "
        "(%zu acks)\n",
        sync_name(sync), lat[n / 2], lat[n * 99 / 100], sum / (double)n, n);
  free(lat);
  bw_queue_store_free(q);
  bw_sqlite_close(db);
}

int main(int argc, char **argv) {
  static const size_t batches[] = {1, 10, 100, 1000};
  bw_sqlite_sync_t syncs[2] = {BW_SQLITE_SYNC_NORMAL, BW_SQLITE_SYNC_FULL};
  size_t s, i;
  if (argc > 1 && strcmp(argv[1], "--quick") == 0) g_budget = 0.1;
  snprintf(g_dir, sizeof(g_dir), "/var/tmp/bw-bench-store-XXXXXX");
  if (mkdtemp(g_dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(g_path, sizeof(g_path), "%s/bench.db", g_dir);
  printf("bench_store_sqlite: %s (%.1f s a cell, payload %d bytes)\n", g_dir,
         g_budget, PAYLOAD);
  for (s = 0; s < 2; s++)
    for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
      bench_enqueue(syncs[s], batches[i]);
  for (s = 0; s < 2; s++) {
    bench_group(syncs[s], false);
    bench_group(syncs[s], true);
  }
  for (s = 0; s < 2; s++)
    bench_ack(syncs[s]);
  remove_db();
  rmdir(g_dir);
  return 0;
}

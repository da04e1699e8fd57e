/* Concurrency tests: the stores from many threads, memory and SQLite.
 *
 * 1. Idempotency: THREADS threads run bw_idem_execute on the same KEYS keys
 *    at once (SQLite: each thread on its own connection to one file, as
 *    separate processes would be). Law: every key's operation runs exactly
 *    once, and every caller gets the one stored result.
 * 2. Queue conservation: producers enqueue (single enqueues, so SQLite's
 *    group commit is exercised) while consumers claim and ack. Law: every
 *    item enqueued is acked exactly once; enqueued = acked; nothing left.
 * Real threads and real time; nothing about timing is asserted; every loop
 * is bounded in count and in time (a stuck run fails, it does not hang). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "breakwater/store.h"
#include "breakwater/store_sqlite.h"
#include "breakwater/threads.h"
#include "bw_test.h"
#include "sqlite_dir.h"

#define THREADS 4
#define KEYS 64
#define PRODUCERS 2
#define CONSUMERS 2
#define PER_PRODUCER 3000
#define LIMIT_S 60

enum { MEMORY = 0, SQLITE = 1 };

static bwt_sqlite_dir_t g_files; /* the SQLite store of this program */

static double now_s(void) {
  return (double)bw_clock_now(bw_clock_monotonic()) / 1e9;
}

static bw_sqlite_t *open_db(void) {
  return bwt_sqlite_open(g_files.path, 30000);
}

/* ==== idempotency ======================================================== */

typedef struct idem_shared_s {
  int kind;
  bw_idem_store_t *mem; /* memory: one store for all */
  atomic_int runs[KEYS];
  atomic_int start;
  atomic_int bad;
} idem_shared_t;

typedef struct idem_arg_s {
  idem_shared_t *sh;
  int key;
} idem_arg_t;

static int run_op(void *ud, int *status, void **result, size_t *len) {
  idem_arg_t *a = ud;
  int i;
  atomic_fetch_add(&a->sh->runs[a->key], 1);
  for (i = 0; i < 50; i++) /* give the duplicates time to collide */
    sched_yield();
  *status = 200 + a->key;
  *result = malloc(16);
  if (*result == NULL) return BW_E_NOMEM;
  *len = (size_t)snprintf(*result, 16, "result-%d", a->key);
  return BW_OK;
}

static void *idem_thread(void *p) {
  idem_shared_t *sh = p;
  bw_sqlite_t *db = NULL;
  bw_idem_store_t *s = sh->mem;
  int k;
  if (sh->kind == SQLITE) {
    bw_idem_config_t c;
    bw_idem_config_init(&c);
    c.name = "conc";
    db = open_db();
    s = bw_sqlite_idem_new(db, &c, NULL);
  }
  while (!atomic_load(&sh->start))
    sched_yield();
  for (k = 0; k < KEYS; k++) {
    char key[32], want[16];
    bw_idem_record_t r;
    idem_arg_t a;
    int rc;
    a.sh = sh;
    a.key = k;
    snprintf(key, sizeof(key), "order-%d", k);
    snprintf(want, sizeof(want), "result-%d", k);
    rc = bw_idem_execute(s, key, 20000, run_op, &a, &r);
    if (rc != BW_OK || r.status != 200 + k || r.len != strlen(want) ||
        memcmp(r.result, want, r.len) != 0)
      atomic_fetch_add(&sh->bad, 1);
    bw_idem_record_clear(&r);
  }
  if (sh->kind == SQLITE) {
    bw_idem_store_free(s);
    bw_sqlite_close(db);
  }
  return NULL;
}

static void idem_runs_each_key_once(int kind) {
  idem_shared_t *sh = calloc(1, sizeof(*sh));
  pthread_t t[THREADS];
  int i;
  assert_non_null(sh);
  sh->kind = kind;
  if (kind == MEMORY) {
    bw_idem_config_t c;
    bw_idem_config_init(&c);
    sh->mem = bw_mem_idem_new(&c, NULL);
  }
  for (i = 0; i < THREADS; i++)
    assert_int_equal(pthread_create(&t[i], NULL, idem_thread, sh), 0);
  atomic_store(&sh->start, 1);
  for (i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  for (i = 0; i < KEYS; i++)
    assert_int_equal(atomic_load(&sh->runs[i]), 1);
  assert_int_equal(atomic_load(&sh->bad), 0);
  bw_idem_store_free(sh->mem);
  free(sh);
}

static void memory_idem_runs_each_key_once(void **state) {
  (void)state;
  idem_runs_each_key_once(MEMORY);
}

static void sqlite_idem_runs_each_key_once(void **state) {
  (void)state;
  idem_runs_each_key_once(SQLITE);
}

/* ==== queue conservation ================================================= */

typedef struct q_shared_s {
  bw_queue_store_t *q;
  atomic_uchar seen[PRODUCERS * PER_PRODUCER];
  atomic_int acked, dup, errors, producers_done;
  double deadline;
} q_shared_t;

typedef struct prod_arg_s {
  q_shared_t *sh;
  int index;
} prod_arg_t;

static void *producer(void *p) {
  prod_arg_t *a = p;
  int i;
  for (i = 0; i < PER_PRODUCER; i++) {
    uint32_t v = (uint32_t)(a->index * PER_PRODUCER + i);
    if (bw_queue_store_enqueue(a->sh->q, &v, sizeof(v), NULL) != BW_OK)
      atomic_fetch_add(&a->sh->errors, 1);
  }
  atomic_fetch_add(&a->sh->producers_done, 1);
  return NULL;
}

static void *consumer(void *p) {
  q_shared_t *sh = p;
  const int total = PRODUCERS * PER_PRODUCER;
  while (atomic_load(&sh->acked) < total && now_s() < sh->deadline) {
    bw_stored_item_t it[32];
    size_t n = 0, i;
    if (bw_queue_store_claim(sh->q, 32, 60000, it, &n) != BW_OK) {
      atomic_fetch_add(&sh->errors, 1);
      break;
    }
    for (i = 0; i < n; i++) {
      uint32_t v;
      memcpy(&v, it[i].payload, sizeof(v));
      if (v >= (uint32_t)total || atomic_fetch_add(&sh->seen[v], 1) != 0)
        atomic_fetch_add(&sh->dup, 1);
      if (bw_queue_store_ack(sh->q, it[i].id, it[i].receipt) == BW_OK)
        atomic_fetch_add(&sh->acked, 1);
      else
        atomic_fetch_add(&sh->errors, 1);
    }
    bw_stored_items_clear(it, n);
    if (n == 0) sched_yield();
  }
  return NULL;
}

static void queue_conserves_items(int kind) {
  q_shared_t *sh = calloc(1, sizeof(*sh));
  bw_queue_store_config_t qc;
  bw_queue_store_stats_t st;
  bw_sqlite_t *db = NULL;
  pthread_t pt[PRODUCERS], ct[CONSUMERS];
  prod_arg_t pa[PRODUCERS];
  int i;
  assert_non_null(sh);
  bw_queue_store_config_init(&qc);
  qc.name = "conc";
  qc.max_size = PRODUCERS * PER_PRODUCER;
  if (kind == MEMORY) {
    sh->q = bw_mem_queue_new(&qc, NULL);
  } else {
    db = open_db();
    sh->q = bw_sqlite_queue_new(db, &qc, NULL);
  }
  assert_non_null(sh->q);
  sh->deadline = now_s() + LIMIT_S;
  for (i = 0; i < CONSUMERS; i++)
    assert_int_equal(pthread_create(&ct[i], NULL, consumer, sh), 0);
  for (i = 0; i < PRODUCERS; i++) {
    pa[i].sh = sh;
    pa[i].index = i;
    assert_int_equal(pthread_create(&pt[i], NULL, producer, &pa[i]), 0);
  }
  for (i = 0; i < PRODUCERS; i++)
    pthread_join(pt[i], NULL);
  for (i = 0; i < CONSUMERS; i++)
    pthread_join(ct[i], NULL);
  assert_int_equal(atomic_load(&sh->errors), 0);
  assert_int_equal(atomic_load(&sh->dup), 0);
  assert_int_equal(atomic_load(&sh->acked), PRODUCERS * PER_PRODUCER);
  for (i = 0; i < PRODUCERS * PER_PRODUCER; i++)
    assert_int_equal(atomic_load(&sh->seen[i]), 1);
  assert_status(bw_queue_store_stats(sh->q, &st), BW_OK);
  assert_u64_eq(st.enqueued, PRODUCERS * PER_PRODUCER);
  assert_u64_eq(st.acked, st.enqueued);
  assert_u64_eq(st.depth, 0);
  assert_u64_eq(st.dlq_depth, 0);
  bw_queue_store_free(sh->q);
  bw_sqlite_close(db);
  free(sh);
}

static void memory_queue_conserves_items(void **state) {
  (void)state;
  queue_conserves_items(MEMORY);
}

static void sqlite_queue_conserves_items(void **state) {
  (void)state;
  queue_conserves_items(SQLITE);
}

static int setup(void **state) {
  (void)state;
  return bwt_sqlite_dir_make(&g_files, "bw-conc-store", "store.db");
}

static int teardown(void **state) {
  (void)state;
  bwt_sqlite_dir_remove(&g_files);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(memory_idem_runs_each_key_once),
      cmocka_unit_test(sqlite_idem_runs_each_key_once),
      cmocka_unit_test(memory_queue_conserves_items),
      cmocka_unit_test(sqlite_queue_conserves_items),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

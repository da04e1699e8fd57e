/* Concurrency: many threads ask one backlog gauge (backlog.h) for the
 * edge's answer while a producer fills and drains its memory queue store.
 *
 * Laws checked:
 *   admits = accepted + warned + refused = the admit calls made, and each
 *   thread's own tallies of the three answers add up to the gauge's;
 *   with refresh_ms 0 every admit reads the store once: reads = admits;
 *   every answer is consistent with itself: REFUSE exactly when the
 *   priority is above the ceiling of the regime it was decided in, WARN
 *   only outside NORMAL, and its pressure is its depth / max_size. */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define THREADS 4
#define ROUNDS 5000

typedef struct {
  bw_backlog_t *b;
  atomic_bool *stop;
  uint64_t accepted, warned, refused, inconsistent;
} asker_t;

static const uint32_t ceiling[BW_REGIME__COUNT] = {UINT32_MAX, 5, 1};

static void *ask(void *arg) {
  asker_t *w = arg;
  for (int i = 0; i < ROUNDS; i++) {
    bw_backlog_answer_t a;
    uint32_t prio = (uint32_t)(i % 8);
    bool refuse;
    if (bw_backlog_admit(w->b, prio, &a) != BW_OK) w->inconsistent++;
    refuse = prio > ceiling[a.regime];
    if ((a.edge == BW_EDGE_REFUSE) != refuse ||
        (a.edge == BW_EDGE_WARN && a.regime == BW_REGIME_NORMAL) ||
        (a.edge == BW_EDGE_ACCEPT && a.regime != BW_REGIME_NORMAL) ||
        a.pressure != (double)a.depth / (double)a.max_size)
      w->inconsistent++;
    if (a.edge == BW_EDGE_ACCEPT) w->accepted++;
    if (a.edge == BW_EDGE_WARN) w->warned++;
    if (a.edge == BW_EDGE_REFUSE) w->refused++;
  }
  return NULL;
}

typedef struct {
  bw_queue_store_t *q;
  atomic_bool *stop;
} producer_t;

static void *produce(void *arg) {
  producer_t *p = arg;
  bw_stored_item_t items[16];
  /* Fill to 100 and drain to 0, over and over, until the askers end. */
  for (int round = 0; !atomic_load(p->stop) && round < 1000; round++) {
    for (int i = 0; i < 100; i++)
      bw_queue_store_enqueue(p->q, "{}", 2, NULL);
    for (;;) {
      size_t n = 0;
      bw_queue_store_claim(p->q, 16, 60000, items, &n);
      if (n == 0) break;
      for (size_t i = 0; i < n; i++)
        bw_queue_store_ack(p->q, items[i].id, items[i].receipt);
      bw_stored_items_clear(items, n);
    }
  }
  return NULL;
}

static void answers_add_up_and_each_is_consistent(void **state) {
  bw_queue_store_config_t qc;
  bw_backlog_config_t c;
  bw_backlog_stats_t st;
  bw_queue_store_t *q;
  bw_backlog_t *b;
  atomic_bool stop = false;
  pthread_t th[THREADS], pt;
  asker_t w[THREADS];
  producer_t p;
  uint64_t acc = 0, warn = 0, ref = 0;
  (void)state;
  bw_queue_store_config_init(&qc);
  qc.max_size = 100;
  q = bw_mem_queue_new(&qc, NULL);
  assert_non_null(q);
  bw_backlog_config_init(&c);
  c.store = q;
  c.refresh_ms = 0;
  b = bw_backlog_new(&c, NULL);
  assert_non_null(b);
  p = (producer_t){q, &stop};
  assert_int_equal(pthread_create(&pt, NULL, produce, &p), 0);
  for (int i = 0; i < THREADS; i++) {
    w[i] = (asker_t){b, &stop, 0, 0, 0, 0};
    assert_int_equal(pthread_create(&th[i], NULL, ask, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(w[i].inconsistent, 0);
    acc += w[i].accepted;
    warn += w[i].warned;
    ref += w[i].refused;
  }
  atomic_store(&stop, true);
  pthread_join(pt, NULL);
  bw_backlog_stats(b, &st);
  assert_int_equal(st.admits, (uint64_t)THREADS * ROUNDS);
  assert_int_equal(st.accepted, acc);
  assert_int_equal(st.warned, warn);
  assert_int_equal(st.refused, ref);
  assert_int_equal(st.reads, st.admits);
  bw_backlog_free(b);
  bw_queue_store_free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(answers_add_up_and_each_is_consistent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The backlog gauge's behaviour on any queue store (backlog.h), shared by
 * test_backlog.c (the memory store) and test_backlog_sqlite.c (a real
 * SQLite file, with the producer on another handle). The store is made by
 * the including test through bwt_backlog_store (max_size 100); the clock
 * is manual and every assertion exact. */
#ifndef BW_TEST_BACKLOG_CASES_H
#define BW_TEST_BACKLOG_CASES_H

#include "bw_test.h"

typedef struct bwt_backlog_env_s {
  bw_clock_t *clock;
  bw_queue_store_t *producer; /* the writer's handle */
  bw_queue_store_t *reader;   /* the backlog's handle (may be the same) */
  void *backend;              /* the including test's */
} bwt_backlog_env_t;

/* Made by the including test: producer and reader handles on one queue
 * named "webhooks" with max_size 100. 0, or -1. */
static int bwt_backlog_store(bwt_backlog_env_t *e);
static void bwt_backlog_store_free(bwt_backlog_env_t *e);

static int bwt_backlog_setup(void **state) {
  bwt_backlog_env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(0);
  *state = e;
  return e->clock != NULL ? bwt_backlog_store(e) : -1;
}

static int bwt_backlog_teardown(void **state) {
  bwt_backlog_env_t *e = *state;
  bwt_backlog_store_free(e);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static bw_backlog_t *bwt_backlog(bwt_backlog_env_t *e, int64_t refresh_ms,
                                 bw_sink_t *sink) {
  bw_backlog_config_t c;
  bw_error_t err;
  bw_backlog_t *b;
  bw_backlog_config_init(&c);
  c.name = "webhook_edge";
  c.store = e->reader;
  c.refresh_ms = refresh_ms;
  c.clock = e->clock;
  c.wall_clock = e->clock;
  c.sink = sink;
  b = bw_backlog_new(&c, &err);
  if (b == NULL) fail_msg("%s", err.message);
  return b;
}

static void bwt_enqueue(bwt_backlog_env_t *e, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    assert_status(bw_queue_store_enqueue(e->producer, "{}", 2, NULL), BW_OK);
}

/* Claims and acks n items: they leave the backlog. */
static void bwt_drain(bwt_backlog_env_t *e, unsigned n) {
  bw_stored_item_t items[16];
  while (n > 0) {
    size_t got = 0, want = n < 16 ? n : 16;
    assert_status(bw_queue_store_claim(e->producer, want, 60000, items, &got),
                  BW_OK);
    assert_int_equal(got, want);
    for (size_t i = 0; i < got; i++)
      assert_status(
          bw_queue_store_ack(e->producer, items[i].id, items[i].receipt),
          BW_OK);
    bw_stored_items_clear(items, got);
    n -= (unsigned)got;
  }
}

static bw_edge_t bwt_admit(bw_backlog_t *b, uint32_t priority,
                           bw_backlog_answer_t *ans) {
  assert_status(bw_backlog_admit(b, priority, ans), BW_OK);
  return ans->edge;
}

static void backlog_regimes_follow_the_stored_depth(void **state) {
  bwt_backlog_env_t *e = *state;
  bw_backlog_t *b = bwt_backlog(e, 0, NULL); /* read on every admit */
  bw_backlog_answer_t a;
  bw_backlog_stats_t st;
  /* empty: normal, everything accepted */
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_ACCEPT);
  assert_int_equal(a.regime, BW_REGIME_NORMAL);
  assert_u64_eq(a.depth, 0);
  assert_int_equal(a.max_size, 100);
  /* 59 of 100: still normal; 60: degraded (priority <= 5 only, warned) */
  bwt_enqueue(e, 59);
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_ACCEPT);
  bwt_enqueue(e, 1);
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_REFUSE);
  assert_int_equal(a.regime, BW_REGIME_DEGRADED);
  assert_dbl_eq(a.pressure, 0.6, 0);
  assert_int_equal(bwt_admit(b, 5, &a), BW_EDGE_WARN);
  /* 85: critical, priority 1 only */
  bwt_enqueue(e, 25);
  assert_int_equal(bwt_admit(b, 2, &a), BW_EDGE_REFUSE);
  assert_int_equal(a.regime, BW_REGIME_CRITICAL);
  assert_int_equal(bwt_admit(b, 1, &a), BW_EDGE_WARN);
  assert_u64_eq(a.depth, 85);
  /* draining to 76 keeps it critical (hysteresis: down below 0.75) */
  bwt_drain(e, 9);
  assert_int_equal(bwt_admit(b, 2, &a), BW_EDGE_REFUSE);
  assert_u64_eq(a.depth, 76);
  /* 70: degraded; 49: normal again (below 0.6 - 0.1) */
  bwt_drain(e, 6);
  assert_int_equal(bwt_admit(b, 5, &a), BW_EDGE_WARN);
  assert_int_equal(a.regime, BW_REGIME_DEGRADED);
  bwt_drain(e, 21);
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_ACCEPT);
  assert_u64_eq(a.depth, 49);
  bw_backlog_stats(b, &st);
  assert_u64_eq(st.reads, 9);
  assert_u64_eq(st.read_errors, 0);
  assert_u64_eq(st.admits, 9);
  assert_u64_eq(st.accepted, 3);
  assert_u64_eq(st.warned, 3);
  assert_u64_eq(st.refused, 3);
  bw_backlog_free(b);
}

static void backlog_reads_the_store_at_most_every_refresh_ms(void **state) {
  bwt_backlog_env_t *e = *state;
  bw_backlog_t *b = bwt_backlog(e, 1000, NULL);
  bw_backlog_answer_t a;
  bw_backlog_stats_t st;
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_ACCEPT); /* read at 0 */
  bwt_enqueue(e, 90);
  bw_clock_manual_advance(e->clock, 999 * BW_NS_PER_MS);
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_ACCEPT); /* the old reading */
  assert_u64_eq(a.depth, 0);
  assert_int_equal(a.read_at_ns, 0);
  bw_clock_manual_advance(e->clock, 1 * BW_NS_PER_MS);
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_REFUSE); /* read at 1000 */
  assert_u64_eq(a.depth, 90);
  assert_int_equal(a.read_at_ns, 1000 * BW_NS_PER_MS);
  bwt_drain(e, 90);
  assert_status(bw_backlog_refresh(b), BW_OK); /* now, whatever the age */
  assert_int_equal(bwt_admit(b, 9, &a), BW_EDGE_ACCEPT);
  bw_backlog_stats(b, &st);
  assert_u64_eq(st.reads, 3);
  assert_u64_eq(st.depth, 0);
  assert_int_equal(st.regime, BW_REGIME_NORMAL);
  bw_backlog_free(b);
}

static int bwt_backlog_changes;
static void bwt_backlog_count(const bw_event_t *ev, void *userdata) {
  (void)userdata;
  if (ev->type == BW_EV_REGIME_CHANGED && strcmp(ev->name, "webhook_edge") == 0)
    bwt_backlog_changes++;
}

static void backlog_regime_changes_are_events(void **state) {
  bwt_backlog_env_t *e = *state;
  bw_sink_t *sink = bw_sink_callback_new(bwt_backlog_count, NULL, NULL);
  bw_backlog_t *b = bwt_backlog(e, 0, sink);
  bw_backlog_answer_t a;
  bwt_backlog_changes = 0;
  bwt_enqueue(e, 90);
  bwt_admit(b, 1, &a); /* normal -> critical */
  bwt_drain(e, 90);
  bwt_admit(b, 1, &a); /* critical -> normal */
  assert_int_equal(bwt_backlog_changes, 2);
  assert_int_equal(bw_gauge_regime(bw_backlog_gauge(b)), BW_REGIME_NORMAL);
  bw_backlog_free(b);
  bw_sink_free(sink);
}

#define BWT_BACKLOG_CASES                                                      \
  cmocka_unit_test_setup_teardown(backlog_regimes_follow_the_stored_depth,     \
                                  bwt_backlog_setup, bwt_backlog_teardown),    \
      cmocka_unit_test_setup_teardown(                                         \
          backlog_reads_the_store_at_most_every_refresh_ms, bwt_backlog_setup, \
          bwt_backlog_teardown),                                               \
      cmocka_unit_test_setup_teardown(backlog_regime_changes_are_events,       \
                                      bwt_backlog_setup, bwt_backlog_teardown)

#endif

/* The store interface's behavioural table (store.h), written once and run
 * against every backend: memory and SQLite (test_store_sqlite.c) and Redis
 * (test_store_redis.c). A test file describes its backend with a
 * bws_backend_t (its kind name and factories for a queue store and an
 * idempotency store on the environment's manual clock, plus per-test set
 * up and clean up) and lists the table with BWS_TABLE(&backend).
 *
 * Every test runs on a manual clock starting at BWT_T0_NS and asserts exact
 * values (leases and delays are clock readings, not waits). */
#ifndef BW_TEST_STORE_BEHAVIOUR_H
#define BW_TEST_STORE_BEHAVIOUR_H

#include "breakwater/store.h"
#include "bw_test.h"

#define MS BW_NS_PER_MS

typedef struct bws_env_s bws_env_t;

typedef struct bws_backend_s {
  const char *kind;           /* bw_queue_store_kind / bw_idem_store_kind */
  bool counts_idem_keys;      /* bw_idem_stats_t.keys is tracked (else 0) */
  int (*setup)(bws_env_t *e); /* per test, before anything; may be NULL */
  bw_queue_store_t *(*queue_new)(bws_env_t *e,
                                 const bw_queue_store_config_t *cfg,
                                 bw_error_t *err);
  bw_idem_store_t *(*idem_new)(bws_env_t *e, const bw_idem_config_t *cfg,
                               bw_error_t *err);
  void (*cleanup)(bws_env_t *e); /* per test, after q and idem are freed;
                                    may be NULL */
} bws_backend_t;

struct bws_env_s {
  const bws_backend_t *backend;
  bwt_env_t *t;          /* clocks, recorder and sink (bw_test.h) */
  bw_clock_t *clock;     /* t->clock: manual, starts at BWT_T0_NS */
  bw_clock_t *wall;      /* t->wall: manual, starts at BWT_WALL0_NS */
  bwt_recorder_t *rec;   /* t->rec */
  bw_sink_t *sink;       /* t->sink: a callback sink into rec */
  bw_queue_store_t *q;   /* the queue under test (freed by teardown) */
  bw_idem_store_t *idem; /* the idempotency store (freed by teardown) */
  void *priv;            /* the backend's own state */
};

/* cmocka prestate setup: *state is the bws_backend_t. */
static int bws_setup(void **state) {
  bws_env_t *e = calloc(1, sizeof(*e));
  void *t = NULL;
  if (e == NULL) return -1;
  e->backend = *state;
  *state = e;
  if (bwt_setup(&t) != 0) return -1;
  e->t = t;
  e->clock = e->t->clock;
  e->wall = e->t->wall;
  e->rec = e->t->rec;
  e->sink = e->t->sink;
  if (e->backend->setup != NULL && e->backend->setup(e) != 0) return -1;
  return 0;
}

static int bws_teardown(void **state) {
  bws_env_t *e = *state;
  void *t;
  if (e == NULL) return 0;
  bw_queue_store_free(e->q);
  bw_idem_store_free(e->idem);
  if (e->backend->cleanup != NULL) e->backend->cleanup(e);
  t = e->t;
  bwt_teardown(&t);
  free(e);
  *state = NULL;
  return 0;
}

/* Defaults, named "jobs", on the environment's clocks and sink. */
static void qconfig(bws_env_t *e, bw_queue_store_config_t *cfg) {
  bw_queue_store_config_init(cfg);
  cfg->name = "jobs";
  cfg->clock = e->clock;
  cfg->wall_clock = e->wall;
  cfg->sink = e->sink;
}

/* Replaces e->q with a new queue of the backend. */
static bw_queue_store_t *make_queue(bws_env_t *e,
                                    const bw_queue_store_config_t *cfg) {
  bw_error_t err;
  bw_queue_store_free(e->q);
  e->q = e->backend->queue_new(e, cfg, &err);
  if (e->q == NULL) fail_msg("queue new: %s", err.message);
  return e->q;
}

static bw_queue_store_t *default_queue(bws_env_t *e) {
  bw_queue_store_config_t cfg;
  qconfig(e, &cfg);
  return make_queue(e, &cfg);
}

static bw_idem_store_t *make_idem(bws_env_t *e) {
  bw_idem_config_t cfg;
  bw_error_t err;
  bw_idem_config_init(&cfg);
  cfg.name = "bookings";
  cfg.lease_ms = 1000;
  cfg.ttl_ms = 60000;
  cfg.clock = e->clock;
  e->idem = e->backend->idem_new(e, &cfg, &err);
  if (e->idem == NULL) fail_msg("idem new: %s", err.message);
  return e->idem;
}

static uint64_t put(bw_queue_store_t *q, const char *s) {
  uint64_t id = 0;
  assert_status(bw_queue_store_enqueue(q, s, strlen(s), &id), BW_OK);
  assert_true(id > 0);
  return id;
}

static bw_queue_store_stats_t qstats(bw_queue_store_t *q) {
  bw_queue_store_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  assert_status(bw_queue_store_stats(q, &s), BW_OK);
  return s;
}

static void assert_payload(const bw_stored_item_t *it, const char *s) {
  assert_u64_eq(it->len, strlen(s));
  assert_memory_equal(it->payload, s, strlen(s));
}

/* Claims exactly one item (asserting it), with a lease of vis_ms. */
static bw_stored_item_t claim1(bw_queue_store_t *q, int64_t vis_ms) {
  bw_stored_item_t it[2];
  size_t n = 99;
  memset(it, 0, sizeof(it));
  assert_status(bw_queue_store_claim(q, 1, vis_ms, it, &n), BW_OK);
  assert_u64_eq(n, 1);
  return it[0];
}

static size_t claim_count(bw_queue_store_t *q, size_t max) {
  bw_stored_item_t it[16];
  size_t n = 99;
  assert_true(max <= 16);
  assert_status(bw_queue_store_claim(q, max, 1000, it, &n), BW_OK);
  bw_stored_items_clear(it, n);
  return n;
}

static void advance_ms(bws_env_t *e, int64_t ms) {
  bw_clock_manual_advance(e->clock, ms * MS);
  bw_clock_manual_advance(e->wall, ms * MS);
}

/* ==== the behavioural table ============================================== */

static void enqueue_claim_ack_in_id_order(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t it[8];
  size_t n = 99, i;
  uint64_t a = put(q, "alpha"), b = put(q, "beta"), c = put(q, "gamma");
  bw_queue_store_stats_t s;
  assert_true(a < b && b < c);
  assert_string_equal(bw_queue_store_name(q), "jobs");
  assert_string_equal(bw_queue_store_kind(q), e->backend->kind);
  advance_ms(e, 5);
  assert_status(bw_queue_store_claim(q, 8, 1000, it, &n), BW_OK);
  assert_u64_eq(n, 3);
  assert_u64_eq(it[0].id, a);
  assert_u64_eq(it[1].id, b);
  assert_u64_eq(it[2].id, c);
  assert_payload(&it[0], "alpha");
  assert_payload(&it[1], "beta");
  assert_payload(&it[2], "gamma");
  for (i = 0; i < 3; i++) {
    assert_u64_eq(it[i].deliveries, 1);
    assert_i64_eq(it[i].enqueued_ns, BWT_T0_NS);
    assert_i64_eq(it[i].lease_until_ns, BWT_T0_NS + 1005 * MS);
    assert_true(it[i].receipt != 0);
  }
  s = qstats(q);
  assert_u64_eq(s.depth, 3);
  assert_u64_eq(s.in_flight, 3);
  assert_u64_eq(s.enqueued, 3);
  assert_u64_eq(s.claimed, 3);
  for (i = 0; i < 3; i++)
    assert_status(bw_queue_store_ack(q, it[i].id, it[i].receipt), BW_OK);
  /* acked twice: the item is gone */
  assert_status(bw_queue_store_ack(q, it[0].id, it[0].receipt), BW_E_NOTFOUND);
  bw_stored_items_clear(it, n);
  assert_u64_eq(claim_count(q, 8), 0);
  s = qstats(q);
  assert_u64_eq(s.depth, 0);
  assert_u64_eq(s.in_flight, 0);
  assert_u64_eq(s.acked, 3);
  assert_dbl_eq(s.fill, 0.0, 0);
}

static void a_lease_hides_the_item_until_it_expires(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t first, second;
  put(q, "job");
  first = claim1(q, 1000);
  assert_u64_eq(claim_count(q, 4), 0);
  advance_ms(e, 999);
  assert_u64_eq(claim_count(q, 4), 0);
  advance_ms(e, 1);
  second = claim1(q, 1000);
  assert_u64_eq(second.id, first.id);
  assert_u64_eq(second.deliveries, 2);
  assert_true(second.receipt != first.receipt);
  /* the first consumer's lease expired and someone else holds the item */
  assert_status(bw_queue_store_ack(q, first.id, first.receipt), BW_E_STALE);
  assert_status(bw_queue_store_nack(q, first.id, first.receipt, 0), BW_E_STALE);
  assert_status(bw_queue_store_reject(q, first.id, first.receipt, "x"),
                BW_E_STALE);
  assert_u64_eq(qstats(q).stale, 3);
  assert_status(bw_queue_store_ack(q, second.id, second.receipt), BW_OK);
  assert_u64_eq(qstats(q).depth, 0);
  bw_stored_items_clear(&first, 1);
  bw_stored_items_clear(&second, 1);
  /* every claim counts, through a nack and through an expired lease */
  put(q, "thrice");
  first = claim1(q, 100);
  assert_status(bw_queue_store_nack(q, first.id, first.receipt, 0), BW_OK);
  bw_stored_items_clear(&first, 1);
  first = claim1(q, 100);
  assert_u64_eq(first.deliveries, 2);
  bw_stored_items_clear(&first, 1);
  advance_ms(e, 100);
  first = claim1(q, 100);
  assert_u64_eq(first.deliveries, 3);
  assert_status(bw_queue_store_ack(q, first.id, first.receipt), BW_OK);
  bw_stored_items_clear(&first, 1);
}

static void an_expired_lease_nobody_took_still_acks(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t it;
  put(q, "slow job");
  it = claim1(q, 100);
  advance_ms(e, 5000);
  assert_u64_eq(qstats(q).in_flight, 0);
  assert_status(bw_queue_store_ack(q, it.id, it.receipt), BW_OK);
  assert_u64_eq(qstats(q).depth, 0);
  bw_stored_items_clear(&it, 1);
  /* Two expired leases and a claim that takes one of them: only that one's
   * old receipt goes stale; the other was not re-claimed and still acks. */
  bw_stored_item_t two[2], again;
  size_t n = 0;
  put(q, "first");
  put(q, "second");
  assert_status(bw_queue_store_claim(q, 2, 100, two, &n), BW_OK);
  assert_u64_eq(n, 2);
  advance_ms(e, 5000);
  again = claim1(q, 100);
  assert_u64_eq(again.id, two[0].id);
  assert_status(bw_queue_store_ack(q, two[1].id, two[1].receipt), BW_OK);
  assert_status(bw_queue_store_ack(q, two[0].id, two[0].receipt), BW_E_STALE);
  assert_status(bw_queue_store_ack(q, again.id, again.receipt), BW_OK);
  assert_u64_eq(qstats(q).depth, 0);
  bw_stored_items_clear(two, 2);
  bw_stored_items_clear(&again, 1);
}

static void nack_makes_it_visible_after_the_delay(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t it, again;
  put(q, "retry me");
  it = claim1(q, 30000);
  assert_status(bw_queue_store_nack(q, it.id, it.receipt, 500), BW_OK);
  /* nacked: the old receipt no longer holds anything */
  assert_status(bw_queue_store_ack(q, it.id, it.receipt), BW_E_STALE);
  assert_u64_eq(qstats(q).stale, 1);
  assert_u64_eq(claim_count(q, 4), 0);
  advance_ms(e, 499);
  assert_u64_eq(claim_count(q, 4), 0);
  advance_ms(e, 1);
  again = claim1(q, 1000);
  assert_u64_eq(again.id, it.id);
  assert_u64_eq(again.deliveries, 2);
  assert_payload(&again, "retry me");
  assert_u64_eq(qstats(q).nacked, 1);
  assert_status(bw_queue_store_ack(q, again.id, again.receipt), BW_OK);
  bw_stored_items_clear(&it, 1);
  bw_stored_items_clear(&again, 1);
}

static void nack_past_max_deliveries_dead_letters(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_stored_item_t it;
  bw_dlq_record_t d[4];
  size_t n = 99;
  uint64_t id;
  const bwt_event_t *ev;
  qconfig(e, &cfg);
  cfg.max_deliveries = 2;
  make_queue(e, &cfg);
  id = put(e->q, "poison");
  it = claim1(e->q, 1000);
  assert_status(bw_queue_store_nack(e->q, it.id, it.receipt, 0), BW_OK);
  bw_stored_items_clear(&it, 1);
  it = claim1(e->q, 1000);
  assert_u64_eq(it.deliveries, 2);
  advance_ms(e, 7);
  assert_status(bw_queue_store_nack(e->q, it.id, it.receipt, 0), BW_OK);
  bw_stored_items_clear(&it, 1);
  assert_u64_eq(claim_count(e->q, 4), 0);
  assert_u64_eq(qstats(e->q).depth, 0);
  assert_u64_eq(qstats(e->q).dlq_depth, 1);
  assert_u64_eq(qstats(e->q).dead_lettered, 1);
  assert_status(bw_queue_store_dlq_list(e->q, 0, 4, d, &n), BW_OK);
  assert_u64_eq(n, 1);
  assert_string_equal(d[0].reason, "max_deliveries");
  assert_string_equal(d[0].error, "nacked after 2 deliveries");
  assert_u64_eq(d[0].item_id, id);
  assert_u64_eq(d[0].deliveries, 2);
  assert_i64_eq(d[0].time_ns, BWT_T0_NS + 7 * MS);
  assert_u64_eq(d[0].len, 6);
  assert_memory_equal(d[0].payload, "poison", 6);
  ev = bwt_nth_of(e->rec, BW_EV_DEAD_LETTERED, 0);
  assert_string_equal(ev->name, "jobs");
  assert_string_equal(ev->reason, "nacked after 2 deliveries");
  assert_field_str(ev, 0, "cause", "max_deliveries");
  assert_field_uint(ev, 1, "item_id", id);
  assert_field_uint(ev, 2, "dlq_id", d[0].id);
  assert_field_uint(ev, 3, "deliveries", 2);
  bw_dlq_records_clear(d, n);
}

static void expired_leases_past_max_deliveries_dead_letter(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_stored_item_t it;
  bw_dlq_record_t d[2];
  size_t n = 99;
  qconfig(e, &cfg);
  cfg.max_deliveries = 2;
  make_queue(e, &cfg);
  put(e->q, "crashes its consumer");
  put(e->q, "fine");
  it = claim1(e->q, 100); /* the consumer dies: the lease runs out */
  bw_stored_items_clear(&it, 1);
  advance_ms(e, 100);
  it = claim1(e->q, 100);
  assert_u64_eq(it.deliveries, 2);
  bw_stored_items_clear(&it, 1);
  advance_ms(e, 100);
  /* the third claim moves it to the DLQ and hands out the next one */
  it = claim1(e->q, 100);
  assert_payload(&it, "fine");
  bw_stored_items_clear(&it, 1);
  assert_status(bw_queue_store_dlq_list(e->q, 0, 2, d, &n), BW_OK);
  assert_u64_eq(n, 1);
  assert_string_equal(d[0].reason, "max_deliveries");
  assert_string_equal(d[0].error, "delivered 2 times without an ack");
  bw_dlq_records_clear(d, n);
}

static void the_guard_sends_overflow_to_the_dlq(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_dlq_record_t d[4];
  size_t n = 99;
  uint64_t id = 77;
  bw_queue_store_stats_t s;
  const bwt_event_t *ev;
  qconfig(e, &cfg);
  cfg.max_size = 3;
  make_queue(e, &cfg);
  put(e->q, "1");
  put(e->q, "2");
  put(e->q, "3");
  assert_status(bw_queue_store_enqueue(e->q, "4", 1, &id), BW_E_FULL);
  assert_u64_eq(id, 0);
  s = qstats(e->q);
  assert_u64_eq(s.depth, 3);
  assert_u64_eq(s.refused_full, 1);
  assert_u64_eq(s.dlq_depth, 1);
  assert_u64_eq(s.enqueued, 3);
  assert_status(bw_queue_store_dlq_list(e->q, 0, 4, d, &n), BW_OK);
  assert_u64_eq(n, 1);
  assert_string_equal(d[0].reason, "queue_full");
  assert_string_equal(d[0].error, "queue jobs reached max_size 3");
  assert_u64_eq(d[0].item_id, 0);
  assert_memory_equal(d[0].payload, "4", 1);
  ev = bwt_nth_of(e->rec, BW_EV_DEAD_LETTERED, 0);
  assert_string_equal(ev->reason, "queue jobs reached max_size 3");
  assert_field_str(ev, 0, "cause", "queue_full");
  assert_field_uint(ev, 4, "count", 1);
  bw_dlq_records_clear(d, n);
}

static void a_batch_over_the_guard_is_split_in_order(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_blob_t b[8];
  uint64_t ids[8];
  char text[8][4];
  size_t acc = 99, i;
  const bwt_event_t *ev;
  qconfig(e, &cfg);
  cfg.max_size = 5;
  make_queue(e, &cfg);
  for (i = 0; i < 8; i++) {
    snprintf(text[i], sizeof(text[i]), "b%zu", i);
    b[i].data = text[i];
    b[i].len = strlen(text[i]);
  }
  assert_status(bw_queue_store_enqueue_batch(e->q, b, 8, ids, &acc), BW_E_FULL);
  assert_u64_eq(acc, 5);
  for (i = 0; i < 5; i++)
    assert_true(ids[i] > 0);
  for (i = 5; i < 8; i++)
    assert_u64_eq(ids[i], 0);
  assert_u64_eq(qstats(e->q).depth, 5);
  assert_u64_eq(qstats(e->q).dlq_depth, 3);
  /* one event for the refused tail, counting it */
  assert_u64_eq(bwt_count(e->rec, BW_EV_DEAD_LETTERED), 1);
  ev = bwt_nth_of(e->rec, BW_EV_DEAD_LETTERED, 0);
  assert_field_uint(ev, 4, "count", 3);
  /* the tail is in the DLQ, in order, as "queue_full" records */
  {
    bw_dlq_record_t d[4];
    size_t n = 0;
    assert_status(bw_queue_store_dlq_list(e->q, 0, 4, d, &n), BW_OK);
    assert_u64_eq(n, 3);
    for (i = 0; i < 3; i++) {
      assert_string_equal(d[i].reason, "queue_full");
      assert_u64_eq(d[i].item_id, 0);
      assert_memory_equal(d[i].payload, text[i + 5], 2);
    }
    bw_dlq_records_clear(d, n);
  }
  assert_status(bw_queue_store_enqueue_batch(e->q, b, 0, ids, &acc), BW_OK);
  assert_u64_eq(acc, 0);
}

static void the_warning_fires_once_per_crossing(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_stored_item_t it[10];
  size_t n = 0, i;
  const bwt_event_t *ev;
  qconfig(e, &cfg);
  cfg.max_size = 10; /* warn at 7, re-arm below 6 */
  make_queue(e, &cfg);
  for (i = 0; i < 6; i++)
    put(e->q, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 0);
  put(e->q, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  ev = bwt_nth_of(e->rec, BW_EV_QUEUE_WARNING, 0);
  assert_string_equal(ev->reason, "queue at 70% of capacity (7/10)");
  assert_field_uint(ev, 0, "depth", 7);
  assert_field_uint(ev, 1, "max_size", 10);
  assert_true(qstats(e->q).warning);
  put(e->q, "x");
  put(e->q, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  assert_status(bw_queue_store_claim(e->q, 10, 1000, it, &n), BW_OK);
  assert_u64_eq(n, 9);
  for (i = 0; i < 3; i++) /* depth 6: not below 6, still armed off */
    assert_status(bw_queue_store_ack(e->q, it[i].id, it[i].receipt), BW_OK);
  put(e->q, "x"); /* 7 again, no re-arm happened: silent */
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  for (i = 3; i < 5; i++) /* 7 -> 5: below 6, re-armed */
    assert_status(bw_queue_store_ack(e->q, it[i].id, it[i].receipt), BW_OK);
  assert_false(qstats(e->q).warning);
  put(e->q, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  put(e->q, "x"); /* 7 */
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 2);
  assert_u64_eq(qstats(e->q).warnings, 2);
  bw_stored_items_clear(it, n);
}

static void reject_moves_a_poison_item_with_its_error(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t it;
  bw_dlq_record_t d[2];
  size_t n = 0;
  uint64_t id = put(q, "{not json");
  it = claim1(q, 1000);
  assert_status(bw_queue_store_reject(q, it.id, it.receipt, "bad json"), BW_OK);
  assert_status(bw_queue_store_ack(q, it.id, it.receipt), BW_E_NOTFOUND);
  assert_status(bw_queue_store_dlq_list(q, 0, 2, d, &n), BW_OK);
  assert_u64_eq(n, 1);
  assert_string_equal(d[0].reason, "rejected");
  assert_string_equal(d[0].error, "bad json");
  assert_u64_eq(d[0].item_id, id);
  assert_u64_eq(d[0].deliveries, 1);
  assert_u64_eq(qstats(q).depth, 0);
  bw_dlq_records_clear(d, n);
  bw_stored_items_clear(&it, 1);
}

static void dlq_records_can_be_requeued_or_deleted(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_dlq_record_t d[4];
  bw_stored_item_t it;
  size_t n = 0;
  uint64_t last, new_id = 0;
  qconfig(e, &cfg);
  cfg.max_size = 2;
  make_queue(e, &cfg);
  put(e->q, "a");
  last = put(e->q, "b");
  assert_status(bw_queue_store_enqueue(e->q, "c", 1, NULL), BW_E_FULL);
  assert_status(bw_queue_store_enqueue(e->q, "d", 1, NULL), BW_E_FULL);
  assert_status(bw_queue_store_dlq_list(e->q, 0, 4, d, &n), BW_OK);
  assert_u64_eq(n, 2);
  /* still full: the record stays */
  assert_status(bw_queue_store_dlq_requeue(e->q, d[0].id, &new_id), BW_E_FULL);
  assert_u64_eq(qstats(e->q).dlq_depth, 2);
  it = claim1(e->q, 1000);
  assert_status(bw_queue_store_ack(e->q, it.id, it.receipt), BW_OK);
  bw_stored_items_clear(&it, 1);
  assert_status(bw_queue_store_dlq_requeue(e->q, d[0].id, &new_id), BW_OK);
  assert_true(new_id > last);
  assert_u64_eq(qstats(e->q).depth, 2); /* "b" and the requeued "c" */
  {
    uint64_t none = 5;
    assert_status(bw_queue_store_dlq_requeue(e->q, d[0].id, &none),
                  BW_E_NOTFOUND);
    assert_u64_eq(none, 0);
  }
  assert_status(bw_queue_store_dlq_delete(e->q, d[1].id), BW_OK);
  assert_status(bw_queue_store_dlq_delete(e->q, d[1].id), BW_E_NOTFOUND);
  assert_u64_eq(qstats(e->q).dlq_depth, 0);
  assert_u64_eq(qstats(e->q).requeued, 1);
  it = claim1(e->q, 1000); /* "b" */
  bw_stored_items_clear(&it, 1);
  it = claim1(e->q, 1000);
  assert_u64_eq(it.id, new_id);
  assert_payload(&it, "c");
  assert_u64_eq(it.deliveries, 1);
  bw_stored_items_clear(&it, 1);
  bw_dlq_records_clear(d, n);
}

static void the_dlq_is_bounded_dropping_the_oldest(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_dlq_record_t d[4];
  size_t n = 0;
  qconfig(e, &cfg);
  cfg.max_size = 1;
  cfg.dlq_max = 2;
  make_queue(e, &cfg);
  put(e->q, "kept");
  assert_status(bw_queue_store_enqueue(e->q, "x1", 2, NULL), BW_E_FULL);
  assert_status(bw_queue_store_enqueue(e->q, "x2", 2, NULL), BW_E_FULL);
  assert_status(bw_queue_store_enqueue(e->q, "x3", 2, NULL), BW_E_FULL);
  assert_status(bw_queue_store_dlq_list(e->q, 0, 4, d, &n), BW_OK);
  assert_u64_eq(n, 2);
  assert_memory_equal(d[0].payload, "x2", 2);
  assert_memory_equal(d[1].payload, "x3", 2);
  assert_u64_eq(qstats(e->q).dlq_dropped, 1);
  assert_u64_eq(qstats(e->q).dlq_depth, 2);
  bw_dlq_records_clear(d, n);
  /* paging: after the first record's id */
  assert_status(bw_queue_store_dlq_list(e->q, 0, 1, d, &n), BW_OK);
  assert_u64_eq(n, 1);
  {
    uint64_t first = d[0].id;
    bw_dlq_records_clear(d, n);
    assert_status(bw_queue_store_dlq_list(e->q, first, 4, d, &n), BW_OK);
    assert_u64_eq(n, 1);
    assert_memory_equal(d[0].payload, "x3", 2);
    bw_dlq_records_clear(d, n);
  }
}

static void bad_arguments_are_refused(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t it[2];
  bw_dlq_record_t d[1];
  size_t n = 5;
  bw_blob_t b = {NULL, 3};
  assert_status(bw_queue_store_enqueue(q, NULL, 3, NULL), BW_E_INVAL);
  assert_status(bw_queue_store_enqueue(NULL, "x", 1, NULL), BW_E_INVAL);
  assert_status(bw_queue_store_enqueue_batch(q, &b, 1, NULL, NULL), BW_E_INVAL);
  assert_status(bw_queue_store_claim(q, 0, 1000, it, &n), BW_E_INVAL);
  assert_u64_eq(n, 0);
  assert_status(bw_queue_store_claim(q, 1, 0, it, &n), BW_E_INVAL);
  assert_status(bw_queue_store_claim(q, 1, 1000, NULL, &n), BW_E_INVAL);
  assert_status(bw_queue_store_nack(q, 1, 1, -1), BW_E_INVAL);
  assert_status(bw_queue_store_ack(q, 12345, 1), BW_E_NOTFOUND);
  assert_status(bw_queue_store_dlq_list(q, 0, 1, NULL, &n), BW_E_INVAL);
  assert_status(bw_queue_store_dlq_list(q, 0, 1, d, &n), BW_OK);
  assert_u64_eq(n, 0);
  assert_status(bw_queue_store_dlq_delete(q, 9), BW_E_NOTFOUND);
  assert_status(bw_queue_store_stats(q, NULL), BW_E_INVAL);
  assert_string_equal(bw_queue_store_name(NULL), "");
  bw_queue_store_free(NULL);
  /* never claimed: no lease to ack */
  {
    uint64_t id = put(q, "x");
    assert_status(bw_queue_store_ack(q, id, 0), BW_E_STALE);
  }
}

static void empty_payloads_round_trip(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_t *q = default_queue(e);
  bw_stored_item_t it;
  uint64_t id = 0;
  assert_status(bw_queue_store_enqueue(q, NULL, 0, &id), BW_OK);
  it = claim1(q, 1000);
  assert_u64_eq(it.id, id);
  assert_u64_eq(it.len, 0);
  assert_non_null(it.payload);
  bw_stored_items_clear(&it, 1);
  assert_null(it.payload);
}

static void idem_second_call_gets_the_stored_result(void **state) {
  bws_env_t *e = *state;
  bw_idem_store_t *s = make_idem(e);
  bw_idem_record_t r1, r2, r3;
  bw_idem_stats_t st;
  const char *key = "book_hotel:abc";
  assert_string_equal(bw_idem_store_kind(s), e->backend->kind);
  assert_status(bw_idem_begin(s, key, &r1), BW_OK);
  assert_int_equal(r1.state, BW_IDEM_NEW);
  assert_true(r1.token != 0);
  assert_i64_eq(r1.expires_ns, BWT_T0_NS + 1000 * MS);
  assert_status(bw_idem_begin(s, key, &r2), BW_OK);
  assert_int_equal(r2.state, BW_IDEM_IN_PROGRESS);
  assert_status(bw_idem_complete(s, key, r1.token + 1, 201, "x", 1),
                BW_E_STALE);
  assert_status(bw_idem_complete(s, key, r1.token, 201, "booking-42", 10),
                BW_OK);
  assert_status(bw_idem_complete(s, key, r1.token, 201, "again", 5),
                BW_E_STALE);
  assert_status(bw_idem_begin(s, key, &r3), BW_OK);
  assert_int_equal(r3.state, BW_IDEM_DONE);
  assert_int_equal(r3.status, 201);
  assert_u64_eq(r3.len, 10);
  assert_memory_equal(r3.result, "booking-42", 10);
  assert_i64_eq(r3.expires_ns, BWT_T0_NS + 60000 * MS);
  bw_idem_record_clear(&r3);
  assert_status(bw_idem_stats(s, &st), BW_OK);
  assert_u64_eq(st.began, 1);
  assert_u64_eq(st.in_progress, 1);
  assert_u64_eq(st.hits, 1);
  assert_u64_eq(st.completed, 1);
  assert_u64_eq(st.stale, 2);
  assert_u64_eq(st.keys, e->backend->counts_idem_keys ? 1 : 0);
  /* the result expires with its TTL */
  advance_ms(e, 60000);
  assert_status(bw_idem_begin(s, key, &r3), BW_OK);
  assert_int_equal(r3.state, BW_IDEM_NEW);
}

static void idem_abandon_and_lease_expiry_free_the_key(void **state) {
  bws_env_t *e = *state;
  bw_idem_store_t *s = make_idem(e);
  bw_idem_record_t a, b, c;
  assert_status(bw_idem_begin(s, "k", &a), BW_OK);
  assert_status(bw_idem_abandon(s, "k", a.token), BW_OK);
  assert_status(bw_idem_abandon(s, "k", a.token), BW_E_STALE);
  assert_status(bw_idem_begin(s, "k", &b), BW_OK);
  assert_int_equal(b.state, BW_IDEM_NEW);
  /* b's runner crashed: after the lease the key is free again */
  advance_ms(e, 999);
  assert_status(bw_idem_begin(s, "k", &c), BW_OK);
  assert_int_equal(c.state, BW_IDEM_IN_PROGRESS);
  advance_ms(e, 1);
  assert_status(bw_idem_begin(s, "k", &c), BW_OK);
  assert_int_equal(c.state, BW_IDEM_NEW);
  assert_true(c.token != b.token);
  assert_status(bw_idem_complete(s, "k", b.token, 1, NULL, 0), BW_E_STALE);
  assert_status(bw_idem_complete(s, "k", c.token, 7, NULL, 0), BW_OK);
  assert_status(bw_idem_begin(s, "k", &a), BW_OK);
  assert_int_equal(a.state, BW_IDEM_DONE);
  assert_int_equal(a.status, 7);
  assert_u64_eq(a.len, 0);
  bw_idem_record_clear(&a);
  assert_status(bw_idem_begin(s, "", &a), BW_E_INVAL);
  assert_status(bw_idem_begin(s, NULL, &a), BW_E_INVAL);
}

/* The table, as cmocka entries for one backend (a bws_backend_t *). */
#define BWS_TEST(f, backend)                                           \
  cmocka_unit_test_prestate_setup_teardown(f, bws_setup, bws_teardown, \
                                           (backend))
#define BWS_TABLE(backend)                                               \
  BWS_TEST(enqueue_claim_ack_in_id_order, backend),                      \
      BWS_TEST(a_lease_hides_the_item_until_it_expires, backend),        \
      BWS_TEST(an_expired_lease_nobody_took_still_acks, backend),        \
      BWS_TEST(nack_makes_it_visible_after_the_delay, backend),          \
      BWS_TEST(nack_past_max_deliveries_dead_letters, backend),          \
      BWS_TEST(expired_leases_past_max_deliveries_dead_letter, backend), \
      BWS_TEST(the_guard_sends_overflow_to_the_dlq, backend),            \
      BWS_TEST(a_batch_over_the_guard_is_split_in_order, backend),       \
      BWS_TEST(the_warning_fires_once_per_crossing, backend),            \
      BWS_TEST(reject_moves_a_poison_item_with_its_error, backend),      \
      BWS_TEST(dlq_records_can_be_requeued_or_deleted, backend),         \
      BWS_TEST(the_dlq_is_bounded_dropping_the_oldest, backend),         \
      BWS_TEST(bad_arguments_are_refused, backend),                      \
      BWS_TEST(empty_payloads_round_trip, backend),                      \
      BWS_TEST(idem_second_call_gets_the_stored_result, backend),        \
      BWS_TEST(idem_abandon_and_lease_expiry_free_the_key, backend)

#endif

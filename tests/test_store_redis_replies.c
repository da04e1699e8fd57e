/* Every Redis reply the component reads is checked, field by field: a fake
 * Redis server on loopback (tests/redis_fake.h) answers the handshake and
 * then the replies each test scripts, raw RESP, so hiredis parses real bytes
 * and every consumer meets replies no redis-server of ours would send:
 * counts larger than the caller's array or wrapping the size check, states
 * and generations out of range, durations that overflow, negative sizes,
 * wrong types, extra or missing elements. Each one must answer BW_E_IO (the
 * component's "unexpected reply", as for a short reply), leave the caller's
 * outputs untouched and report why (a redis_unavailable event naming the
 * unexpected reply); a well-formed reply of each shape is still accepted,
 * with exact outputs.
 *
 * The consumers: the shared breaker's sync (blocking; the event-loop mode
 * adopts through the same function), the queue guard (bw_redis_queue_*),
 * the simple idempotency records (bw_redis_idem_*), and the store.h
 * backends (bw_redis_queue_store_new, bw_redis_idem_store_new). */
#include "breakwater/store_redis.h"
#include "bw_test.h"
#include "redis_fake.h"

#define A(n) "*" #n "\r\n"
#define I(v) ":" #v "\r\n"
#define S0 "$0\r\n\r\n"
#define S1(c) "$1\r\n" c "\r\n"
#define NIL "$-1\r\n"

/* The breaker's first sync (at creation): closed, generation 1. */
#define SYNC_OK A(9) I(0) I(1) I(0) I(0) I(0) I(0) I(0) I(1) S0

static bwt_fake_t g_fake;

static int group_setup(void **state) {
  (void)state;
  if (bwt_fake_start(&g_fake) != 0) {
    fprintf(stderr, "cannot start the fake redis server\n");
    return -1;
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  bwt_fake_stop(&g_fake);
  return 0;
}

static int setup(void **state) {
  bwt_fake_reset(&g_fake);
  return bwt_setup(state);
}

static void redis_cfg(bw_redis_config_t *rc) {
  bw_redis_config_init(rc);
  rc->port = g_fake.port;
  rc->command_timeout_ms = 2000;
  rc->connect_timeout_ms = 2000;
}

/* The last redis_unavailable event says the reply was unexpected. */
static void assert_unexpected_reported(const bwt_env_t *e) {
  size_t n = bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE);
  assert_u64_eq(n, 1);
  assert_contains(bwt_nth_of(e->rec, BW_EV_REDIS_UNAVAILABLE, 0)->reason,
                  "unexpected reply");
}

/* ---- the shared breaker ------------------------------------------------ */

static bw_redis_breaker_t *rb_on_fake(bwt_env_t *e) {
  bw_redis_breaker_config_t cfg;
  bw_error_t err;
  bw_redis_breaker_t *b;
  bw_redis_breaker_config_init(&cfg);
  cfg.breaker.name = "rb";
  cfg.breaker.clock = e->clock;
  cfg.breaker.wall_clock = e->wall;
  cfg.breaker.sink = e->sink;
  cfg.breaker.break_ms = 1000;
  redis_cfg(&cfg.redis);
  cfg.sync_thread = false;
  cfg.use_redis_time = false;
  cfg.seed = 7;
  b = bw_redis_breaker_new(&cfg, &err);
  if (b == NULL) {
    print_error("bw_redis_breaker_new: %s\n", err.message);
    fail();
  }
  return b;
}

/* A hostile sync reply: BW_E_IO, nothing adopted (closed, generation 1,
 * calls admitted by the local fallback), the reason reported. */
static void rb_refuses(bwt_env_t *e, const char *reply) {
  bw_redis_breaker_t *b;
  bw_redis_breaker_stats_t s;
  bw_permit_t p;
  bwt_fake_reset(&g_fake);
  e->rec->count = 0;
  bwt_fake_reply(&g_fake, SYNC_OK);
  bwt_fake_reply(&g_fake, reply);
  b = rb_on_fake(e);
  assert_status(bw_redis_breaker_sync(b), BW_E_IO);
  assert_u64_eq(bwt_fake_pending(&g_fake), 0);
  bw_redis_breaker_stats(b, &s);
  assert_u64_eq(s.generation, 1);
  assert_true(s.fallback);
  assert_u64_eq(s.syncs, 1);
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  assert_i64_eq(bw_redis_breaker_retry_in_ms(b), 0);
  assert_status(bw_redis_breaker_acquire(b, &p), BW_OK);
  assert_status(bw_redis_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_unexpected_reported(e);
  bw_redis_breaker_free(b);
}

static void test_breaker_refuses_an_unknown_state(void **state) {
  bwt_env_t *e = *state;
  /* Adopted, 7 made every later acquire answer BW_E_OPEN, forever. */
  rb_refuses(e, A(9) I(7) I(1) I(0) I(0) I(0) I(0) I(0) I(1) S0);
  rb_refuses(e, A(9) I(-1) I(1) I(0) I(0) I(0) I(0) I(0) I(1) S0);
  rb_refuses(e, A(9) I(3) I(1) I(0) I(0) I(0) I(0) I(0) I(1) S0);
  rb_refuses(e, A(9) "$2\r\n1x\r\n" I(1) I(0) I(0) I(0) I(0) I(0) I(1) S0);
}

static void test_breaker_refuses_a_break_that_overflows(void **state) {
  bwt_env_t *e = *state;
  /* 2^62 ms: now + rem_ms * 10^6 is a signed overflow. */
  rb_refuses(e,
             A(9) I(1) I(2) I(4611686018427387904) I(0) I(0) I(0) I(0) I(1) S0);
  rb_refuses(e, A(9) I(1) I(2) I(-5) I(0) I(0) I(0) I(0) I(1) S0);
  /* Past the longest break any configuration can have. */
  rb_refuses(e, A(9) I(1) I(2) I(576460752303423) I(0) I(0) I(0) I(0) I(1) S0);
  /* A break left while not open. */
  rb_refuses(e, A(9) I(0) I(2) I(5) I(0) I(0) I(0) I(0) I(1) S0);
}

static void test_breaker_refuses_bad_counts_and_shapes(void **state) {
  bwt_env_t *e = *state;
  rb_refuses(e, A(9) I(1) I(0) I(10) I(0) I(0) I(0) I(0) I(1) S0); /* gen 0 */
  rb_refuses(e, A(9) I(1) I(1152921504606846976) I(10) I(0) I(0) I(0) I(0) I(1)
                    S0); /* gen 2^60: beyond the cached word */
  rb_refuses(e, A(9) I(0) NIL I(0) I(0) I(0) I(0) I(0) I(1) S0);
  rb_refuses(e, A(9) I(0) I(1) I(0) I(1099511627776) I(0) I(0) I(0) I(1)
                    S0); /* consecutive failures beyond 32 bits */
  rb_refuses(e, A(9) I(0) I(1) I(0) I(-1) I(0) I(0) I(0) I(1) S0);
  rb_refuses(e, A(9) I(0) I(1) I(0) I(0) I(1) I(2) I(0) I(1) S0); /* wf>wc */
  rb_refuses(e, A(9) I(0) I(1) I(0) I(0) I(0) I(0) I(-7) I(1) S0);
  rb_refuses(e, A(9) I(0) I(1) I(0) I(0) I(0) I(0) I(0) I(2) S0); /* fresh */
  rb_refuses(e, A(10) I(0) I(1) I(0) I(0) I(0) I(0) I(0) I(1) S0 I(0));
  rb_refuses(e, A(8) I(0) I(1) I(0) I(0) I(0) I(0) I(0) I(1));
  rb_refuses(e, A(9) I(0) I(1) I(0) I(0) I(0) I(0) I(0) I(1) I(0));
  rb_refuses(e, I(0));
  rb_refuses(e, "$2\r\nOK\r\n");
}

static void test_breaker_adopts_a_well_formed_reply(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_t *b;
  bw_redis_breaker_stats_t s;
  bwt_fake_reply(&g_fake, SYNC_OK);
  bwt_fake_reply(
      &g_fake, A(9) I(1) I(2) I(500) I(3) I(0) I(0) I(7) I(1) "$4\r\nwhy!\r\n");
  b = rb_on_fake(e);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  bw_redis_breaker_stats(b, &s);
  assert_u64_eq(s.generation, 2);
  assert_false(s.fallback);
  assert_u64_eq(s.shared_total_calls, 7);
  assert_u64_eq(s.shared_consecutive_failures, 3);
  assert_state(bw_redis_breaker_state(b), BW_OPEN);
  assert_i64_eq(bw_redis_breaker_retry_in_ms(b), 500);
  assert_event(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, 0),
               BW_EV_CIRCUIT_OPENED, "why!");
  bw_redis_breaker_free(b);
}

/* ---- the store.h queue --------------------------------------------------- */

static bw_queue_store_t *qs_on_fake(bwt_env_t *e) {
  bw_queue_store_config_t cfg;
  bw_redis_config_t rc;
  bw_error_t err;
  bw_queue_store_t *q;
  bw_queue_store_config_init(&cfg);
  cfg.name = "qs";
  cfg.sink = e->sink;
  cfg.wall_clock = e->wall;
  redis_cfg(&rc);
  q = bw_redis_queue_store_new(&cfg, &rc, &err);
  if (q == NULL) {
    print_error("bw_redis_queue_store_new: %s\n", err.message);
    fail();
  }
  return q;
}

typedef enum {
  QS_ENQUEUE,
  QS_CLAIM,
  QS_ACK,
  QS_NACK,
  QS_REJECT,
  QS_DLQ_LIST,
  QS_REQUEUE,
  QS_DLQ_DELETE,
  QS_STATS
} qs_op_t;

/* Runs op against `reply`; a BW_E_IO leaves every output untouched. */
static int qs_run(bwt_env_t *e, qs_op_t op, const char *reply) {
  bw_queue_store_t *q;
  bw_stored_item_t items[5];
  bw_dlq_record_t recs[3];
  bw_queue_store_stats_t st;
  uint64_t id = 99;
  size_t n = 99, i;
  int rc = BW_E_INVAL;
  bwt_fake_reset(&g_fake);
  e->rec->count = 0;
  bwt_fake_reply(&g_fake, reply);
  memset(items, 0x5A, sizeof(items));
  memset(recs, 0x5A, sizeof(recs));
  q = qs_on_fake(e);
  switch (op) {
  case QS_ENQUEUE:
    rc = bw_queue_store_enqueue(q, "p", 1, &id);
    if (rc == BW_E_IO) assert_u64_eq(id, 0);
    break;
  case QS_CLAIM:
    rc = bw_queue_store_claim(q, 4, 1000, items, &n);
    if (rc == BW_E_IO) {
      assert_u64_eq(n, 0);
      for (i = 0; i < 5; i++)
        assert_u64_eq(items[i].id, UINT64_C(0x5A5A5A5A5A5A5A5A));
    } else {
      bw_stored_items_clear(items, n);
    }
    /* Never past the caller's max. */
    assert_u64_eq(items[4].id, UINT64_C(0x5A5A5A5A5A5A5A5A));
    break;
  case QS_ACK:
    rc = bw_queue_store_ack(q, 1, 1);
    break;
  case QS_NACK:
    rc = bw_queue_store_nack(q, 1, 1, 0);
    break;
  case QS_REJECT:
    rc = bw_queue_store_reject(q, 1, 1, "poison");
    break;
  case QS_DLQ_LIST:
    rc = bw_queue_store_dlq_list(q, 0, 2, recs, &n);
    if (rc == BW_E_IO) {
      assert_u64_eq(n, 0);
      assert_u64_eq(recs[0].id, UINT64_C(0x5A5A5A5A5A5A5A5A));
    } else {
      bw_dlq_records_clear(recs, n);
    }
    assert_u64_eq(recs[2].id, UINT64_C(0x5A5A5A5A5A5A5A5A));
    break;
  case QS_REQUEUE:
    rc = bw_queue_store_dlq_requeue(q, 1, &id);
    if (rc == BW_E_IO) assert_u64_eq(id, 0);
    break;
  case QS_DLQ_DELETE:
    rc = bw_queue_store_dlq_delete(q, 1);
    break;
  case QS_STATS:
    rc = bw_queue_store_stats(q, &st);
    if (rc == BW_E_IO) {
      assert_u64_eq(st.depth, 0);
      assert_u64_eq(st.in_flight, 0);
      assert_u64_eq(st.dlq_depth, 0);
      assert_false(st.warning);
    }
    break;
  }
  assert_u64_eq(bwt_fake_pending(&g_fake), 0);
  if (rc == BW_E_IO) assert_unexpected_reported(e);
  bw_queue_store_free(q);
  return rc;
}

#define QS_IO(op, reply) assert_status(qs_run(e, (op), (reply)), BW_E_IO)

static void test_claim_refuses_more_items_than_asked(void **state) {
  bwt_env_t *e = *state;
  /* 5 claims (id, receipt, deliveries, enqueued_ns, payload) for max 4:
   * the fifth was written past the caller's array. */
#define CL(id)             \
  "$1\r\n" #id "\r\n" I(1) \
      I(1) "$1\r\n0\r\n"   \
           "$1\r\np\r\n"
  QS_IO(QS_CLAIM, A(28) I(0) I(5) I(0) CL(1) CL(2) CL(3) CL(4) CL(5));
#undef CL
}

static void test_claim_refuses_a_count_that_wraps_the_size_check(void **state) {
  bwt_env_t *e = *state;
  /* moved = 0xAAAAAAAAAAAAAAAB: 3 + 3 * moved wraps to 4, the element count,
   * and the DLQ loop read far past the reply (SIGSEGV). */
  QS_IO(QS_CLAIM, A(4) I(-6148914691236517205) I(0) I(0) I(1));
  /* got = 0xCCCCCCCCCCCCCCCD: 3 + 5 * got wraps to 8. */
  QS_IO(QS_CLAIM,
        A(8) I(0) I(-3689348814741910323) I(0) I(1) I(1) I(1) I(1) I(1));
}

static void test_store_queue_refuses_hostile_replies(void **state) {
  bwt_env_t *e = *state;
  /* enqueue of one item: {ok, refused, warn, first, dropped, id} */
  QS_IO(QS_ENQUEUE, A(6) I(2) I(0) I(0) I(0) I(0) I(1));
  QS_IO(QS_ENQUEUE, A(6) I(1) I(1) I(0) I(0) I(0) I(1));
  QS_IO(QS_ENQUEUE, A(6) I(1) I(0) I(0) I(0) I(0) I(0));
  QS_IO(QS_ENQUEUE, A(6) I(0) I(1) I(0) I(0) I(0) I(0));
  QS_IO(QS_ENQUEUE, A(6) I(0) I(1) I(0) I(3) I(0) I(5));
  QS_IO(QS_ENQUEUE, A(6) I(1) I(0) I(0) I(0) I(-1) I(1));
  QS_IO(QS_ENQUEUE, A(6) I(1) I(0) I(-2) I(0) I(0) I(1));
  QS_IO(QS_ENQUEUE, A(7) I(1) I(0) I(0) I(0) I(0) I(1) I(2));
  QS_IO(QS_ENQUEUE, A(6) I(1) I(0) I(0) I(0) I(0) "$2\r\n1x\r\n");
  QS_IO(QS_ENQUEUE, A(5) I(0) I(0) I(0) I(0) I(0));
  /* claim: {moved, got, dropped, got x 5, moved x 3} */
  QS_IO(QS_CLAIM, A(8) I(0) I(1) I(0) I(1) I(1) I(1) S1("5") I(9));
  QS_IO(QS_CLAIM, A(8) I(0) I(1) I(0) I(0) I(1) I(1) S1("5") S1("p"));
  QS_IO(QS_CLAIM, A(8) I(0) I(1) I(0) I(1) I(0) I(1) S1("5") S1("p"));
  QS_IO(QS_CLAIM, A(8) I(0) I(1) I(0) I(1) I(1) I(0) S1("5") S1("p"));
  QS_IO(QS_CLAIM, A(8) I(0) I(1) I(0) I(1) I(1) I(4294967296) S1("5") S1("p"));
  QS_IO(QS_CLAIM, A(8) I(0) I(1) I(0) I(1) I(1) I(1) S1("x") S1("p"));
  QS_IO(QS_CLAIM, A(8) I(0) I(1) I(-1) I(1) I(1) I(1) S1("5") S1("p"));
  QS_IO(QS_CLAIM, A(3) I(0) I(-1) I(0));
  QS_IO(QS_CLAIM, A(6) I(1) I(0) I(0) I(7) I(0) I(3));
  QS_IO(QS_CLAIM, A(6) I(1) I(0) I(0) I(0) I(4) I(3));
  QS_IO(QS_CLAIM, A(6) I(1) I(0) I(0) I(7) I(4) I(-3));
  QS_IO(QS_CLAIM, A(2) I(0) I(0));
  /* ack / nack / reject: {-1} {-2} {0} or {1, dlq_id, deliveries, dropped} */
  QS_IO(QS_ACK, A(1) I(5));
  QS_IO(QS_ACK, A(1) I(-3));
  QS_IO(QS_ACK, A(4) I(1) I(2) I(1) I(0)); /* an ack never dead-letters */
  QS_IO(QS_ACK, A(2) I(0) I(0));
  QS_IO(QS_ACK, A(0));
  QS_IO(QS_NACK, A(4) I(1) I(0) I(1) I(0));
  QS_IO(QS_NACK, A(3) I(1) I(2) I(1));
  QS_IO(QS_NACK, A(4) I(1) I(2) I(1) I(-1));
  QS_IO(QS_NACK, A(4) I(1) I(2) I(-1) I(0));
  QS_IO(QS_REJECT, A(1) I(0)); /* a reject always dead-letters */
  /* dlq_list of at most 2: {dlq_id, item, deliveries, time, reason, error,
   * payload} per record */
#define DR(id) "$1\r\n" #id "\r\n" S1("0") S1("0") S1("5") S1("r") S0 S1("p")
  QS_IO(QS_DLQ_LIST, A(21) DR(1) DR(2) DR(3));
  QS_IO(QS_DLQ_LIST, A(14) DR(2) DR(1));
  QS_IO(QS_DLQ_LIST, A(7) DR(0));
  QS_IO(QS_DLQ_LIST, A(8) DR(1) I(0));
#undef DR
  QS_IO(QS_DLQ_LIST, A(7) S1("1") S1("0") S1("0") S1("5") S1("r") S0 I(3));
  QS_IO(QS_DLQ_LIST,
        A(7) S1("1") S1("0") "$2\r\n-1\r\n" S1("5") S1("r") S0 S1("p"));
  QS_IO(QS_DLQ_LIST, A(7) S1("1") S1("0") S1("0") S1("5") I(1) S0 S1("p"));
  QS_IO(QS_DLQ_LIST, I(0));
  /* requeue: {-1} {-2} or {new_id, warn} */
  QS_IO(QS_REQUEUE, A(1) I(0));
  QS_IO(QS_REQUEUE, A(1) I(-3));
  QS_IO(QS_REQUEUE, A(1) I(5));
  QS_IO(QS_REQUEUE, A(2) I(5) I(-1));
  QS_IO(QS_REQUEUE, A(2) I(-1) I(0));
  /* dlq_delete: {-1} or {0} */
  QS_IO(QS_DLQ_DELETE, A(1) I(3));
  QS_IO(QS_DLQ_DELETE, A(2) I(0) I(0));
  /* stats: {depth, in_flight, dlq_depth, warned} */
  QS_IO(QS_STATS, A(4) I(-1) I(0) I(0) I(0));
  QS_IO(QS_STATS, A(4) I(1) I(2) I(0) I(0));
  QS_IO(QS_STATS, A(4) I(0) I(0) I(-4) I(0));
  QS_IO(QS_STATS, A(4) I(0) I(0) I(0) I(5));
  QS_IO(QS_STATS, A(5) I(0) I(0) I(0) I(0) I(0));
}

static void test_store_queue_accepts_well_formed_replies(void **state) {
  bwt_env_t *e = *state;
  assert_status(qs_run(e, QS_ENQUEUE, A(6) I(1) I(0) I(0) I(0) I(0) I(1)),
                BW_OK);
  assert_status(qs_run(e, QS_ENQUEUE, A(6) I(0) I(1) I(0) I(4) I(0) I(0)),
                BW_E_FULL);
  assert_status(qs_run(e, QS_CLAIM,
                       A(11) I(1) I(1) I(0) S1("7") I(3)
                           I(2) "$3\r\n123\r\n"
                                "$2\r\nhi\r\n" S1("6") I(9) I(5)),
                BW_OK);
  assert_status(qs_run(e, QS_ACK, A(1) I(0)), BW_OK);
  assert_status(qs_run(e, QS_ACK, A(1) I(-1)), BW_E_NOTFOUND);
  assert_status(qs_run(e, QS_ACK, A(1) I(-2)), BW_E_STALE);
  assert_status(qs_run(e, QS_NACK, A(4) I(1) I(2) I(5) I(0)), BW_OK);
  assert_status(qs_run(e, QS_REJECT, A(4) I(1) I(2) I(1) I(1)), BW_OK);
  assert_status(qs_run(e, QS_DLQ_LIST,
                       A(7) S1("4") S1("0") S1("0")
                           S1("5") "$10\r\nqueue_full\r\n" S0 S1("p")),
                BW_OK);
  assert_status(qs_run(e, QS_REQUEUE, A(2) I(8) I(0)), BW_OK);
  assert_status(qs_run(e, QS_REQUEUE, A(1) I(-2)), BW_E_FULL);
  assert_status(qs_run(e, QS_DLQ_DELETE, A(1) I(0)), BW_OK);
  assert_status(qs_run(e, QS_STATS, A(4) I(3) I(1) I(2) I(1)), BW_OK);
}

static void test_claim_well_formed_reply_is_exact(void **state) {
  bwt_env_t *e = *state;
  bw_queue_store_t *q;
  bw_stored_item_t items[2];
  size_t n = 9;
  bwt_fake_reply(&g_fake, A(11) I(1) I(1) I(0) S1("7") I(3)
                              I(2) "$3\r\n123\r\n"
                                   "$2\r\nhi\r\n" S1("6") I(9) I(5));
  q = qs_on_fake(e);
  assert_status(bw_queue_store_claim(q, 2, 1000, items, &n), BW_OK);
  assert_u64_eq(n, 1);
  assert_u64_eq(items[0].id, 7);
  assert_u64_eq(items[0].receipt, 3);
  assert_u64_eq(items[0].deliveries, 2);
  assert_i64_eq(items[0].enqueued_ns, 123);
  assert_u64_eq(items[0].len, 2);
  assert_memory_equal(items[0].payload, "hi", 2);
  assert_u64_eq(bwt_count(e->rec, BW_EV_DEAD_LETTERED), 1);
  bw_stored_items_clear(items, n);
  bw_queue_store_free(q);
}

/* ---- the store.h idempotency records ------------------------------------ */

typedef enum { IS_BEGIN, IS_COMPLETE, IS_ABANDON } is_op_t;

static int is_run(bwt_env_t *e, is_op_t op, const char *reply,
                  bw_idem_record_t *rec) {
  bw_idem_config_t cfg;
  bw_redis_config_t rc;
  bw_error_t err;
  bw_idem_store_t *s;
  int r = BW_E_INVAL;
  bwt_fake_reset(&g_fake);
  e->rec->count = 0;
  bwt_fake_reply(&g_fake, reply);
  bw_idem_config_init(&cfg);
  cfg.name = "is";
  redis_cfg(&rc);
  s = bw_redis_idem_store_new(&cfg, &rc, &err);
  assert_non_null(s);
  memset(rec, 0, sizeof(*rec));
  switch (op) {
  case IS_BEGIN:
    r = bw_idem_begin(s, "k", rec);
    if (r == BW_E_IO) {
      assert_null(rec->result);
      assert_u64_eq(rec->len, 0);
      assert_i64_eq(rec->expires_ns, 0);
    }
    break;
  case IS_COMPLETE:
    r = bw_idem_complete(s, "k", 5, 200, "ok", 2);
    break;
  case IS_ABANDON:
    r = bw_idem_abandon(s, "k", 5);
    break;
  }
  assert_u64_eq(bwt_fake_pending(&g_fake), 0);
  bw_idem_store_free(s);
  return r;
}

static void test_idem_store_refuses_hostile_replies(void **state) {
  bwt_env_t *e = *state;
  bw_idem_record_t rec;
#define IS_IO(op, reply) assert_status(is_run(e, (op), (reply), &rec), BW_E_IO)
  IS_IO(IS_BEGIN, A(2) I(7) S1("0"));
  IS_IO(IS_BEGIN, A(2) I(-1) S1("0"));
  IS_IO(IS_BEGIN, A(2) I(2) S1("5"));
  IS_IO(IS_BEGIN, A(4) I(2) S1("5") S1("x") S1("r"));
  IS_IO(IS_BEGIN, A(4) I(2) S1("5") "$11\r\n99999999999\r\n" S1("r"));
  IS_IO(IS_BEGIN, A(4) I(2) S1("5") I(200) I(9));
  IS_IO(IS_BEGIN, A(2) I(0) "$3\r\nabc\r\n");
  IS_IO(IS_BEGIN, A(3) I(1) S1("5") S1("x"));
  IS_IO(IS_BEGIN, A(1) I(0));
  IS_IO(IS_COMPLETE, A(1) I(3));
  IS_IO(IS_COMPLETE, A(2) I(0) I(0));
  IS_IO(IS_ABANDON, A(1) I(1));
  IS_IO(IS_ABANDON, "+OK\r\n");
#undef IS_IO
  assert_status(is_run(e, IS_BEGIN,
                       A(4) I(2) "$3\r\n999\r\n"
                                 "$3\r\n201\r\n"
                                 "$2\r\nok\r\n",
                       &rec),
                BW_OK);
  assert_int_equal(rec.state, BW_IDEM_DONE);
  assert_int_equal(rec.status, 201);
  assert_i64_eq(rec.expires_ns, 999);
  assert_u64_eq(rec.len, 2);
  assert_memory_equal(rec.result, "ok", 2);
  bw_idem_record_clear(&rec);
  assert_status(is_run(e, IS_COMPLETE, A(1) I(-1), &rec), BW_E_STALE);
  assert_status(is_run(e, IS_ABANDON, A(1) I(0), &rec), BW_OK);
}

/* ---- the queue guard and the simple idempotency records ----------------- */

typedef enum {
  RQ_ENQUEUE,
  RQ_DEQUEUE,
  RQ_ACK,
  RQ_RECOVER,
  RQ_SIZE,
  RQ_DLQ_GET,
  RI_BEGIN,
  RI_COMPLETE,
  RI_ABANDON
} rq_op_t;

static int rq_run(bwt_env_t *e, rq_op_t op, const char *reply) {
  bw_redis_queue_config_t qc;
  bw_redis_idem_config_t ic;
  bw_redis_queue_t *q = NULL;
  bw_redis_idem_t *d = NULL;
  bw_error_t err;
  uint64_t u = 99;
  void *p = (void *)&u;
  size_t len = 99;
  char *json = (char *)&u;
  bw_idem_state_t st = BW_IDEM_NEW;
  int rc = BW_E_INVAL;
  bwt_fake_reset(&g_fake);
  e->rec->count = 0;
  bwt_fake_reply(&g_fake, reply);
  if (op < RI_BEGIN) {
    bw_redis_queue_config_init(&qc);
    qc.max_size = 4;
    qc.sink = e->sink;
    redis_cfg(&qc.redis);
    q = bw_redis_queue_new(&qc, &err);
    assert_non_null(q);
  } else {
    bw_redis_idem_config_init(&ic);
    redis_cfg(&ic.redis);
    d = bw_redis_idem_new(&ic, &err);
    assert_non_null(d);
  }
  switch (op) {
  case RQ_ENQUEUE:
    rc = bw_redis_queue_enqueue(q, "p", 1, &u);
    if (rc == BW_E_IO) assert_u64_eq(u, 99);
    break;
  case RQ_DEQUEUE:
    rc = bw_redis_queue_dequeue(q, "c", &p, &len);
    if (rc == BW_E_IO) {
      assert_null(p);
      assert_u64_eq(len, 0);
    }
    if (rc == BW_OK) bw_free(p);
    break;
  case RQ_ACK:
    rc = bw_redis_queue_ack(q, "c", "p", 1);
    break;
  case RQ_RECOVER:
    rc = bw_redis_queue_recover(q, "c", &u);
    if (rc == BW_E_IO) assert_u64_eq(u, 0);
    break;
  case RQ_SIZE:
    rc = bw_redis_queue_size(q, &u);
    if (rc == BW_E_IO) assert_u64_eq(u, 99);
    break;
  case RQ_DLQ_GET:
    rc = bw_redis_queue_dlq_get(q, 0, &json);
    if (rc == BW_E_IO) assert_null(json);
    if (rc == BW_OK) bw_free(json);
    break;
  case RI_BEGIN:
    rc = bw_redis_idem_begin(d, "k", 1000, &st, &p, &len);
    if (rc == BW_E_IO) {
      assert_null(p);
      assert_u64_eq(len, 0);
    }
    if (rc == BW_OK) bw_free(p);
    break;
  case RI_COMPLETE:
    rc = bw_redis_idem_complete(d, "k", "r", 1, 1000);
    break;
  case RI_ABANDON:
    rc = bw_redis_idem_abandon(d, "k");
    break;
  }
  assert_u64_eq(bwt_fake_pending(&g_fake), 0);
  if (rc == BW_E_IO && q != NULL) assert_unexpected_reported(e);
  bw_redis_queue_free(q);
  bw_redis_idem_free(d);
  return rc;
}

#define RQ_IO(op, reply) assert_status(rq_run(e, (op), (reply)), BW_E_IO)

static void test_queue_guard_refuses_hostile_replies(void **state) {
  bwt_env_t *e = *state;
  /* enqueue (max_size 4): {admitted, size, warn, dlq entries dropped} */
  RQ_IO(RQ_ENQUEUE, A(4) I(1) I(5) I(0) I(0)); /* admitted past max_size */
  RQ_IO(RQ_ENQUEUE, A(4) I(1) I(0) I(0) I(0)); /* admitted into nothing */
  RQ_IO(RQ_ENQUEUE, A(4) I(0) I(1) I(0) I(0)); /* refused below max_size */
  RQ_IO(RQ_ENQUEUE, A(4) I(2) I(1) I(0) I(0));
  RQ_IO(RQ_ENQUEUE, A(4) I(1) I(-1) I(0) I(0));
  RQ_IO(RQ_ENQUEUE, A(4) I(1) I(1) I(7) I(0));
  RQ_IO(RQ_ENQUEUE, A(4) I(0) I(4) I(1) I(0)); /* a warning for a refusal */
  RQ_IO(RQ_ENQUEUE, A(4) I(1) I(1) I(0) I(1)); /* an admission dropped */
  RQ_IO(RQ_ENQUEUE, A(4) I(0) I(4) I(0) I(-1));
  RQ_IO(RQ_ENQUEUE, A(5) I(1) I(1) I(0) I(0) I(0));
  RQ_IO(RQ_ENQUEUE, A(3) I(1) I(1) I(0));
  RQ_IO(RQ_ENQUEUE, A(4) I(1) S1("x") I(0) I(0));
  RQ_IO(RQ_ENQUEUE, I(1));
  RQ_IO(RQ_DEQUEUE, I(5));
  RQ_IO(RQ_DEQUEUE, A(1) S1("a"));
  RQ_IO(RQ_ACK, I(-1));
  RQ_IO(RQ_ACK, "+OK\r\n");
  RQ_IO(RQ_ACK, S1("1"));
  /* recover: {moved, size, warn} */
  RQ_IO(RQ_RECOVER, A(3) I(-1) I(0) I(0));
  RQ_IO(RQ_RECOVER, A(3) I(5) I(2) I(0));
  RQ_IO(RQ_RECOVER, A(3) I(1) I(1) I(2));
  RQ_IO(RQ_RECOVER, A(3) I(0) I(1) I(1));
  RQ_IO(RQ_RECOVER, A(2) I(0) I(0));
  RQ_IO(RQ_SIZE, I(-3));
  RQ_IO(RQ_SIZE, "$3\r\nabc\r\n");
  RQ_IO(RQ_SIZE, NIL);
  RQ_IO(RQ_DLQ_GET, I(3));
  RQ_IO(RQ_DLQ_GET, A(0));
  /* simple idempotency: {0} {1} or {2, result} */
  RQ_IO(RI_BEGIN, A(1) I(7));
  RQ_IO(RI_BEGIN, A(1) I(-1));
  RQ_IO(RI_BEGIN, A(1) I(2));
  RQ_IO(RI_BEGIN, A(2) I(2) I(5));
  RQ_IO(RI_BEGIN, A(2) I(0) S1("x"));
  RQ_IO(RI_BEGIN, I(0));
  RQ_IO(RI_COMPLETE, I(1));
  RQ_IO(RI_COMPLETE, "+QUEUED\r\n");
  RQ_IO(RI_ABANDON, I(7));
  RQ_IO(RI_ABANDON, I(-1));
  RQ_IO(RI_ABANDON, S1("1"));
}

static void test_queue_guard_accepts_well_formed_replies(void **state) {
  bwt_env_t *e = *state;
  assert_status(rq_run(e, RQ_ENQUEUE, A(4) I(1) I(3) I(1) I(0)), BW_OK);
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  assert_status(rq_run(e, RQ_ENQUEUE, A(4) I(0) I(4) I(0) I(2)), BW_E_FULL);
  assert_status(rq_run(e, RQ_DEQUEUE, S1("a")), BW_OK);
  assert_status(rq_run(e, RQ_DEQUEUE, NIL), BW_E_NOTFOUND);
  assert_status(rq_run(e, RQ_ACK, I(1)), BW_OK);
  assert_status(rq_run(e, RQ_ACK, I(0)), BW_E_NOTFOUND);
  assert_status(rq_run(e, RQ_RECOVER, A(3) I(2) I(3) I(1)), BW_OK);
  assert_status(rq_run(e, RQ_SIZE, I(3)), BW_OK);
  assert_status(rq_run(e, RQ_DLQ_GET, "$2\r\n{}\r\n"), BW_OK);
  assert_status(rq_run(e, RQ_DLQ_GET, NIL), BW_E_NOTFOUND);
  assert_status(rq_run(e, RI_BEGIN, A(1) I(0)), BW_OK);
  assert_status(rq_run(e, RI_BEGIN, A(2) I(2) S1("r")), BW_OK);
  assert_status(rq_run(e, RI_COMPLETE, "+OK\r\n"), BW_OK);
  assert_status(rq_run(e, RI_ABANDON, I(1)), BW_OK);
  assert_status(rq_run(e, RI_ABANDON, I(0)), BW_E_NOTFOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_breaker_refuses_an_unknown_state,
                                      setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_breaker_refuses_a_break_that_overflows, setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_breaker_refuses_bad_counts_and_shapes, setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_breaker_adopts_a_well_formed_reply,
                                      setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_claim_refuses_more_items_than_asked,
                                      setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_claim_refuses_a_count_that_wraps_the_size_check, setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(test_store_queue_refuses_hostile_replies,
                                      setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_store_queue_accepts_well_formed_replies, setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_claim_well_formed_reply_is_exact,
                                      setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_idem_store_refuses_hostile_replies,
                                      setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_queue_guard_refuses_hostile_replies,
                                      setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_queue_guard_accepts_well_formed_replies, setup, bwt_teardown),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

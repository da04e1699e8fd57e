/* Specification tests: the store interface's core parts — configuration
 * defaults and validation, the idempotency key builder, bw_idem_execute,
 * parking work from a pipeline fallback and the reprocessor that replays it
 * only while the breaker is CLOSED (the tenacity article, scenario 2), and the
 * memory backends under allocation failure. The queue and idempotency semantics
 * themselves are one table run against memory and SQLite in
 * test_store_sqlite.c.
 *
 * Manual clocks, exact values, no sleeps. */
#include "breakwater/store.h"
#include "breakwater/threads.h"
#include "bw_test.h"
#include "oom.h"

#define MS BW_NS_PER_MS

/* ==== configuration ====================================================== */

static void queue_defaults_are_the_asyncio_toolkits_guard(void **state) {
  bw_queue_store_config_t c;
  uint64_t warn_at = 0, rearm = 0;
  (void)state;
  bw_queue_store_config_init(&c);
  assert_string_equal(c.name, "queue");
  assert_u64_eq(c.max_size, 10000);
  assert_dbl_eq(c.warn_threshold, 0.7, 0);
  assert_dbl_eq(c.warn_rearm_threshold, 0.6, 0);
  assert_u64_eq(c.max_deliveries, 5);
  assert_u64_eq(c.dlq_max, 10000);
  assert_null(c.clock);
  assert_null(c.sink);
  assert_status(bw_queue_store_config_validate(&c, NULL), BW_OK);
  bw_queue_store_config_levels(&c, &warn_at, &rearm);
  assert_u64_eq(warn_at, 7000);
  assert_u64_eq(rearm, 6000);
  c.max_size = 10;
  bw_queue_store_config_levels(&c, &warn_at, &rearm);
  assert_u64_eq(warn_at, 7);
  assert_u64_eq(rearm, 6);
}

static void queue_config_errors_name_the_field(void **state) {
  bw_queue_store_config_t c;
  bw_error_t err;
  (void)state;
#define BAD(mutate, field)                                               \
  do {                                                                   \
    bw_queue_store_config_init(&c);                                      \
    mutate;                                                              \
    bwt_prefill_error(&err);                                             \
    assert_status(bw_queue_store_config_validate(&c, &err), BW_E_INVAL); \
    assert_true(bwt_error_names(&err, field));                           \
    assert_null(bw_mem_queue_new(&c, &err));                             \
    assert_true(bwt_error_names(&err, field));                           \
  } while (0)
  BAD(c.name = "", "name");
  BAD(c.max_size = 0, "max_size");
  BAD(c.warn_threshold = 0, "warn_threshold");
  BAD(c.warn_threshold = 1.5, "warn_threshold");
  BAD(c.warn_rearm_threshold = 0.7, "warn_rearm_threshold");
  BAD(c.warn_rearm_threshold = -0.1, "warn_rearm_threshold");
  BAD(c.max_deliveries = 0, "max_deliveries");
  BAD(c.dlq_max = 0, "dlq_max");
#undef BAD
  bw_queue_store_config_init(&c);
  c.warn_threshold = 0.2;
  assert_status(bw_queue_store_config_validate(&c, &err), BW_E_INVAL);
  assert_contains(err.message,
                  "warn_rearm_threshold must be in [0, "
                  "warn_threshold) (got 0.6, warn_threshold 0.2)");
}

static void idem_config_defaults_and_errors(void **state) {
  bw_idem_config_t c;
  bw_error_t err;
  (void)state;
  bw_idem_config_init(&c);
  assert_string_equal(c.name, "idempotency");
  assert_i64_eq(c.lease_ms, 30000);
  assert_i64_eq(c.ttl_ms, 86400000);
  assert_u64_eq(c.max_keys, 100000);
  c.lease_ms = 0;
  assert_null(bw_mem_idem_new(&c, &err));
  assert_true(bwt_error_names(&err, "lease_ms"));
  bw_idem_config_init(&c);
  c.ttl_ms = -5;
  assert_null(bw_mem_idem_new(&c, &err));
  assert_true(bwt_error_names(&err, "ttl_ms"));
  bw_idem_config_init(&c);
  c.max_keys = 0;
  assert_null(bw_mem_idem_new(&c, &err));
  assert_true(bwt_error_names(&err, "max_keys"));
  /* "Forever" would overflow now + ms: at most a year. */
  bw_idem_config_init(&c);
  c.ttl_ms = INT64_MAX / 1000;
  assert_null(bw_mem_idem_new(&c, &err));
  assert_true(bwt_error_names(&err, "ttl_ms"));
  bw_idem_config_init(&c);
  c.lease_ms = INT64_C(86400000) * 367;
  assert_null(bw_mem_idem_new(&c, &err));
  assert_true(bwt_error_names(&err, "lease_ms"));
}

static void a_full_memory_idem_store_sweeps_then_refuses(void **state) {
  bw_idem_config_t c;
  bw_error_t err;
  bw_clock_t *clk = bw_clock_manual_new(BWT_T0_NS);
  bw_idem_store_t *s;
  bw_idem_record_t r;
  (void)state;
  bw_idem_config_init(&c);
  c.max_keys = 2;
  c.lease_ms = 100;
  c.clock = clk;
  s = bw_mem_idem_new(&c, &err);
  assert_non_null(s);
  assert_status(bw_idem_begin(s, "a", &r), BW_OK);
  assert_status(bw_idem_begin(s, "b", &r), BW_OK);
  assert_status(bw_idem_begin(s, "c", &r), BW_E_LIMIT);
  bw_clock_manual_advance(clk, 100 * MS); /* a and b expire */
  assert_status(bw_idem_begin(s, "c", &r), BW_OK);
  assert_int_equal(r.state, BW_IDEM_NEW);
  bw_idem_store_free(s);
  bw_clock_free(clk);
}

/* ==== keys =============================================================== */

static void keys_are_stable_and_field_exact(void **state) {
  char k1[200], k2[200], k3[200];
  bw_kv_t f[3] = {{"hotel_id", "H1"},
                  {"checkin", "2026-08-07"},
                  {"checkout", "2026-08-09"}};
  bw_kv_t g[3] = {{"hotel_id", "H1"},
                  {"checkin", "2026-08-07"},
                  {"checkout", "2026-08-10"}};
  bw_kv_t a[2] = {{"x", "ab"}, {"y", "c"}};
  bw_kv_t b[2] = {{"x", "a"}, {"y", "bc"}};
  (void)state;
  assert_status(bw_idem_key(k1, sizeof(k1), "book_hotel", f, 3), BW_OK);
  assert_status(bw_idem_key(k2, sizeof(k2), "book_hotel", f, 3), BW_OK);
  assert_string_equal(k1, k2);
  assert_u64_eq(strlen(k1), strlen("book_hotel:") + 32);
  assert_memory_equal(k1, "book_hotel:", 11);
  assert_status(bw_idem_key(k3, sizeof(k3), "book_hotel", g, 3), BW_OK);
  assert_string_not_equal(k1, k3);
  assert_status(bw_idem_key(k3, sizeof(k3), "pay", f, 3), BW_OK);
  assert_string_not_equal(k1 + 11, k3 + 4);
  /* length-prefixed: moving a byte between fields changes the key */
  assert_status(bw_idem_key(k1, sizeof(k1), "s", a, 2), BW_OK);
  assert_status(bw_idem_key(k2, sizeof(k2), "s", b, 2), BW_OK);
  assert_string_not_equal(k1, k2);
  /* a known answer, so every process, host and release agrees forever
   * (SipHash-2-4 itself was checked against the reference vectors) */
  assert_status(bw_idem_key(k1, sizeof(k1), "book_hotel", f, 3), BW_OK);
  assert_string_equal(k1, "book_hotel:2b6a66e2f02cec307da75a293242b429");
  assert_status(bw_idem_key(k1, sizeof(k1), "s", NULL, 0), BW_OK);
  assert_string_equal(k1, "s:b4554e644e96c7d76cf167780be683ba");
  assert_status(bw_idem_key(k1, 12, "book_hotel", f, 3), BW_E_RANGE);
  assert_status(bw_idem_key(k1, sizeof(k1), "", f, 3), BW_E_INVAL);
  assert_status(bw_idem_key(k1, sizeof(k1), NULL, f, 3), BW_E_INVAL);
  f[1].value = NULL;
  assert_status(bw_idem_key(k1, sizeof(k1), "book_hotel", f, 3), BW_E_INVAL);
}

/* ==== execute ============================================================ */

typedef struct op_s {
  int runs;
  int fail;
} op_t;

static int op_fn(void *ud, int *status, void **result, size_t *len) {
  op_t *op = ud;
  op->runs++;
  if (op->fail) return BW_E_IO;
  *status = 201;
  *result = malloc(7);
  memcpy(*result, "conf-42", 7);
  *len = 7;
  return BW_OK;
}

static void execute_runs_once_and_replays_the_result(void **state) {
  bw_idem_config_t c;
  bw_error_t err;
  bw_idem_store_t *s;
  bw_idem_record_t r, held;
  op_t op = {0, 0};
  (void)state;
  bw_idem_config_init(&c);
  s = bw_mem_idem_new(&c, &err);
  /* a failing run stores nothing and frees the key */
  op.fail = 1;
  assert_status(bw_idem_execute(s, "k", 0, op_fn, &op, &r), BW_E_IO);
  op.fail = 0;
  assert_status(bw_idem_execute(s, "k", 0, op_fn, &op, &r), BW_OK);
  assert_int_equal(r.state, BW_IDEM_NEW);
  assert_int_equal(r.status, 201);
  assert_memory_equal(r.result, "conf-42", 7);
  bw_idem_record_clear(&r);
  assert_status(bw_idem_execute(s, "k", 0, op_fn, &op, &r), BW_OK);
  assert_int_equal(r.state, BW_IDEM_DONE);
  assert_int_equal(r.status, 201);
  assert_u64_eq(r.len, 7);
  assert_memory_equal(r.result, "conf-42", 7);
  bw_idem_record_clear(&r);
  assert_int_equal(op.runs, 2);
  /* someone else holds "busy": fail fast, or time out after waiting */
  assert_status(bw_idem_begin(s, "busy", &held), BW_OK);
  assert_status(bw_idem_execute(s, "busy", 0, op_fn, &op, &r), BW_E_FULL);
  assert_status(bw_idem_execute(s, "busy", 3, op_fn, &op, &r), BW_E_TIMEOUT);
  assert_int_equal(op.runs, 2);
  assert_status(bw_idem_execute(s, "busy", 0, NULL, &op, &r), BW_E_INVAL);
  bw_idem_store_free(s);
}

/* ==== parking and the reprocessor (the tenacity article, scenario 2)
 * ================= */

typedef struct replay_s {
  int calls;
  int fail_next;
  int refuse_next; /* answer BW_E_OPEN: not processed, end the step */
  char seen[64][16];
} replay_t;

static int replay_fn(void *ud, const bw_stored_item_t *it) {
  replay_t *r = ud;
  if (r->refuse_next > 0) {
    r->refuse_next--;
    r->calls++;
    return BW_E_OPEN;
  }
  if (r->fail_next > 0) {
    r->fail_next--;
    r->calls++;
    return BW_E_IO;
  }
  if (it->len == 3 && memcmp(it->payload, "bad", 3) == 0) return BW_E_INVAL;
  if (r->calls < 64)
    snprintf(r->seen[r->calls], sizeof(r->seen[0]), "%.*s", (int)it->len,
             (const char *)it->payload);
  r->calls++;
  return BW_OK;
}

/* A memory queue on clk (named, unless name is NULL; max_deliveries the
 * default when 0). */
static bw_queue_store_t *mem_queue_max(bw_clock_t *clk, const char *name,
                                       uint32_t max_deliveries) {
  bw_queue_store_config_t qc;
  bw_error_t err;
  bw_queue_store_t *q;
  bw_queue_store_config_init(&qc);
  if (name != NULL) qc.name = name;
  if (max_deliveries != 0) qc.max_deliveries = max_deliveries;
  qc.clock = clk;
  q = bw_mem_queue_new(&qc, &err);
  assert_non_null(q);
  return q;
}

/* A memory queue on clk (named, unless name is NULL). */
static bw_queue_store_t *mem_queue_on(bw_clock_t *clk, const char *name) {
  return mem_queue_max(clk, name, 0);
}

/* A breaker on clk (name may be NULL) that opens after `failures`
 * failures in a row and stays open for break_ms. */
static bw_breaker_t *breaker_on(bw_clock_t *clk, const char *name,
                                uint32_t failures, int64_t break_ms) {
  bw_breaker_config_t bc;
  bw_error_t err;
  bw_breaker_t *b;
  bw_breaker_config_init(&bc);
  if (name != NULL) bc.name = name;
  bc.failure_threshold = failures;
  bc.break_ms = break_ms;
  bc.clock = clk;
  b = bw_breaker_new(&bc, &err);
  assert_non_null(b);
  return b;
}

/* Defaults, replaying q's items into r, gated by breaker b (may be NULL). */
static void replay_config(bw_reprocessor_config_t *rc, bw_queue_store_t *q,
                          bw_breaker_t *b, replay_t *r) {
  bw_reprocessor_config_init(rc);
  rc->queue = q;
  rc->breaker = b;
  rc->fn = replay_fn;
  rc->userdata = r;
}

/* The reprocessor tests' end: what they made, freed (b may be NULL). */
static void free_replay(bw_reprocessor_t *rp, bw_queue_store_t *q,
                        bw_breaker_t *b, bw_clock_t *clk) {
  bw_reprocessor_free(rp);
  bw_queue_store_free(q);
  bw_breaker_free(b);
  bw_clock_free(clk);
}

/* A probe succeeds: the breaker closes. */
static void probe_succeeds(bw_breaker_t *b) {
  bw_permit_t p;
  assert_status(bw_breaker_acquire(b, &p), BW_OK);
  bw_breaker_release(b, &p, BW_SUCCESS);
  assert_state(bw_breaker_state(b), BW_CLOSED);
}

/* The first n replays were "<prefix><i>", in order. */
static void assert_replayed(const replay_t *r, const char *prefix, int n) {
  char work[16];
  int i;
  for (i = 0; i < n; i++) {
    snprintf(work, sizeof(work), "%s%d", prefix, i);
    assert_string_equal(r->seen[i], work);
  }
}

static void parked_work_is_replayed_only_once_the_breaker_closes(void **state) {
  bw_clock_t *clk = bw_clock_manual_new(BWT_T0_NS);
  bw_breaker_t *b;
  bw_queue_store_t *q;
  bw_reprocessor_config_t rc;
  bw_reprocessor_t *rp;
  bw_reprocessor_stats_t st;
  bw_error_t err;
  replay_t replay;
  size_t done = 99;
  int i;
  char work[16];
  (void)state;
  memset(&replay, 0, sizeof(replay));
  /* the article's fail_max and reset_timeout */
  b = breaker_on(clk, "notificacoes", 5, 30000);
  q = mem_queue_on(clk, "notificacao_pendente");
  replay_config(&rc, q, b, &replay);
  rc.batch = 4;
  rp = bw_reprocessor_new(&rc, &err);
  assert_non_null(rp);

  /* the partner fails: the breaker opens */
  for (i = 0; i < 5; i++) {
    bw_permit_t p;
    assert_status(bw_breaker_acquire(b, &p), BW_OK);
    bw_breaker_release(b, &p, BW_FAILURE);
  }
  assert_state(bw_breaker_state(b), BW_OPEN);
  /* while open, the fallback parks each notification: the work travels
   * with the call */
  for (i = 0; i < 10; i++) {
    bw_park_work_t w;
    bw_pipeline_call_t call;
    snprintf(work, sizeof(work), "task-%d", i);
    w.data = work;
    w.len = strlen(work);
    memset(&call, 0, sizeof(call));
    call.user = &w;
    assert_status(bw_park_fallback(q, BW_FAILURE_BREAKER, &call), BW_OK);
  }
  {
    bw_pipeline_call_t call;
    memset(&call, 0, sizeof(call)); /* a call without work */
    assert_status(bw_park_fallback(q, BW_FAILURE_BREAKER, &call), BW_E_INVAL);
    assert_status(bw_park_fallback(q, BW_FAILURE_BREAKER, NULL), BW_E_INVAL);
    assert_status(bw_park_fallback(NULL, BW_FAILURE_BREAKER, &call),
                  BW_E_INVAL);
  }

  /* nothing is drained while the breaker is not CLOSED */
  assert_status(bw_reprocessor_step(rp, &done), BW_E_OPEN);
  assert_u64_eq(done, 0);
  bw_clock_manual_advance(clk, 30000 * MS);
  /* (the breaker moves to HALF_OPEN lazily, on its next acquire) */
  assert_true(bw_breaker_state(b) != BW_CLOSED);
  assert_status(bw_reprocessor_step(rp, &done), BW_E_OPEN);
  assert_int_equal(replay.calls, 0);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.backlog, 10); /* visible, not forgotten */
  assert_u64_eq(st.paused, 2);

  /* a probe succeeds: CLOSED; steps drain it in order, in batches */
  probe_succeeds(b);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 4);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.backlog, 6);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 2);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 0);
  assert_int_equal(replay.calls, 10);
  assert_replayed(&replay, "task-", 10);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.backlog, 0);
  assert_u64_eq(st.processed, 10);
  assert_u64_eq(st.failed, 0);

  free_replay(rp, q, b, clk);
}

/* The breaker opens on the step's first replay: the items after it are
 * never claimed, so no delivery is counted for them — with
 * max_deliveries 1 they would otherwise go to the DLQ untried. */
static void items_the_breaker_refused_mid_step_wait_untried(void **state) {
  bw_clock_t *clk = bw_clock_manual_new(BWT_T0_NS);
  bw_breaker_t *b;
  bw_queue_store_t *q;
  bw_reprocessor_config_t rc;
  bw_reprocessor_t *rp;
  bw_reprocessor_stats_t st;
  bw_error_t err;
  replay_t replay;
  size_t done = 99;
  char work[16];
  (void)state;
  memset(&replay, 0, sizeof(replay));
  b = breaker_on(clk, NULL, 1, 1000);
  q = mem_queue_max(clk, NULL, 1);
  for (int i = 0; i < 4; i++) {
    snprintf(work, sizeof(work), "w%d", i);
    assert_status(bw_queue_store_enqueue(q, work, strlen(work), NULL), BW_OK);
  }
  replay_config(&rc, q, b, &replay);
  rc.batch = 4;
  rp = bw_reprocessor_new(&rc, &err);
  assert_non_null(rp);
  replay.fail_next = 1; /* w0 fails: the breaker opens */
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 0);
  assert_int_equal(replay.calls, 1);
  assert_state(bw_breaker_state(b), BW_OPEN);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.failed, 1);
  assert_u64_eq(st.dlq_depth, 1); /* w0: tried once, its one delivery */
  assert_u64_eq(st.backlog, 3);   /* w1..w3: waiting, never delivered */
  /* the breaker recovers: the three are replayed, in order */
  bw_clock_manual_advance(clk, 1000 * MS);
  probe_succeeds(b);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 3);
  assert_int_equal(replay.calls, 4);
  assert_string_equal(replay.seen[1], "w1");
  assert_string_equal(replay.seen[2], "w2");
  assert_string_equal(replay.seen[3], "w3");
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.backlog, 0);
  assert_u64_eq(st.dlq_depth, 1);
  assert_u64_eq(st.processed, 3);
  free_replay(rp, q, b, clk);
}

/* A handler that answers BW_E_OPEN ends the step: its item is handed back
 * at once, no other item is claimed, nothing counts as failed. */
static void a_refusing_handler_ends_the_step(void **state) {
  bw_clock_t *clk = bw_clock_manual_new(BWT_T0_NS);
  bw_queue_store_t *q = mem_queue_on(clk, NULL);
  bw_reprocessor_config_t rc;
  bw_reprocessor_t *rp;
  bw_reprocessor_stats_t st;
  bw_error_t err;
  replay_t replay;
  size_t done = 99;
  (void)state;
  memset(&replay, 0, sizeof(replay));
  assert_status(bw_queue_store_enqueue(q, "a", 1, NULL), BW_OK);
  assert_status(bw_queue_store_enqueue(q, "b", 1, NULL), BW_OK);
  assert_status(bw_queue_store_enqueue(q, "c", 1, NULL), BW_OK);
  replay_config(&rc, q, NULL, &replay);
  rc.retry_delay_ms = 5000; /* a failure would hide its item for 5 s */
  rp = bw_reprocessor_new(&rc, &err);
  assert_non_null(rp);
  replay.refuse_next = 1;
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 0);
  assert_int_equal(replay.calls, 1); /* "b" and "c" were not claimed */
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.failed, 0);
  assert_u64_eq(st.backlog, 3);
  /* handed back with no delay: the next step, at the same instant, takes
   * all three in order */
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 3);
  assert_string_equal(replay.seen[1], "a");
  assert_string_equal(replay.seen[2], "b");
  assert_string_equal(replay.seen[3], "c");
  free_replay(rp, q, NULL, clk);
}

static void failed_replays_are_retried_and_bad_ones_dead_lettered(
    void **state) {
  bw_clock_t *clk = bw_clock_manual_new(BWT_T0_NS);
  bw_queue_store_t *q;
  bw_reprocessor_config_t rc;
  bw_reprocessor_t *rp;
  bw_reprocessor_stats_t st;
  bw_error_t err;
  replay_t replay;
  size_t done = 0;
  (void)state;
  memset(&replay, 0, sizeof(replay));
  q = mem_queue_on(clk, NULL);
  replay_config(&rc, q, NULL, &replay); /* no breaker: always drains */
  rc.retry_delay_ms = 1000;
  rp = bw_reprocessor_new(&rc, &err);
  assert_status(bw_queue_store_enqueue(q, "ok", 2, NULL), BW_OK);
  assert_status(bw_queue_store_enqueue(q, "bad", 3, NULL), BW_OK);
  replay.fail_next = 1; /* the first replay ("ok") fails */
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 0);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.failed, 1);
  assert_u64_eq(st.rejected, 1);
  assert_u64_eq(st.backlog, 1);
  assert_u64_eq(st.dlq_depth, 1);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK); /* not yet visible */
  assert_u64_eq(done, 0);
  bw_clock_manual_advance(clk, 1000 * MS);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 1);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.backlog, 0);
  assert_u64_eq(st.processed, 1);
  free_replay(rp, q, NULL, clk);
}

/* The whole loop through a real pipeline: its fallback parks every failed
 * call (attempted and failed, or refused by the open breaker), and nothing
 * is replayed until the breaker is CLOSED again. */
/* The work travels with the call, not with the thread: two calls in flight
 * on one thread, failing in the other order, each park their own work. */
static void each_call_parks_its_own_work(void **state) {
  bw_clock_t *clk = bw_clock_manual_new(BW_NS_PER_S);
  bw_queue_store_t *q;
  bw_pipeline_config_t pc;
  bw_pipeline_t *pl;
  bw_pipeline_call_t a, b;
  bw_park_work_t wa = {"work-a", 6}, wb = {"work-b", 6};
  bw_stored_item_t it[2];
  size_t n = 0;
  bw_error_t err;
  (void)state;
  q = mem_queue_on(clk, NULL);
  bw_pipeline_config_init(&pc);
  pc.fallback = bw_park_fallback;
  pc.fallback_userdata = q;
  pl = bw_pipeline_new(&pc, &err);
  assert_non_null(pl);
  a.user = &wa;
  b.user = &wb;
  assert_int_equal(bw_pipeline_begin(pl, &a, bw_clock_now(clk)),
                   BW_STEP_ATTEMPT);
  assert_int_equal(bw_pipeline_begin(pl, &b, bw_clock_now(clk)),
                   BW_STEP_ATTEMPT);
  assert_int_equal(bw_pipeline_report(&b, BW_VERDICT_PERMANENT,
                                      BW_RETRY_AFTER_NONE, bw_clock_now(clk)),
                   BW_STEP_DONE);
  assert_int_equal(bw_pipeline_report(&a, BW_VERDICT_PERMANENT,
                                      BW_RETRY_AFTER_NONE, bw_clock_now(clk)),
                   BW_STEP_DONE);
  assert_status(a.fallback_rc, BW_OK);
  assert_status(b.fallback_rc, BW_OK);
  assert_status(bw_queue_store_claim(q, 2, 1000, it, &n), BW_OK);
  assert_int_equal(n, 2);
  assert_memory_equal(it[0].payload, "work-b", 6);
  assert_memory_equal(it[1].payload, "work-a", 6);
  bw_stored_items_clear(it, n);
  bw_pipeline_free(pl);
  bw_queue_store_free(q);
  bw_clock_free(clk);
}

static void a_pipeline_fallback_parks_and_the_reprocessor_replays(
    void **state) {
  bw_clock_t *clk = bw_clock_manual_new(BWT_T0_NS);
  bw_breaker_t *b;
  bw_queue_store_t *q;
  bw_pipeline_config_t pc;
  bw_pipeline_t *pl;
  bw_reprocessor_config_t rc;
  bw_reprocessor_t *rp;
  bw_reprocessor_stats_t st;
  bw_error_t err;
  replay_t replay;
  size_t done = 0;
  int i, attempted = 0;
  char work[16];
  (void)state;
  memset(&replay, 0, sizeof(replay));
  b = breaker_on(clk, NULL, 2, 1000);
  q = mem_queue_on(clk, NULL);
  bw_pipeline_config_init(&pc);
  assert_status(bw_pipeline_add_breaker(&pc, b), BW_OK);
  pc.fallback = bw_park_fallback;
  pc.fallback_userdata = q;
  pl = bw_pipeline_new(&pc, &err);
  assert_non_null(pl);
  for (i = 0; i < 5; i++) {
    bw_pipeline_call_t c;
    bw_park_work_t w;
    int step;
    snprintf(work, sizeof(work), "n-%d", i);
    w.data = work;
    w.len = strlen(work);
    c.user = &w; /* set before begin, which never touches it */
    step = bw_pipeline_begin(pl, &c, bw_clock_now(clk));
    if (step == BW_STEP_ATTEMPT) {
      attempted++;
      step = bw_pipeline_report(&c, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE,
                                bw_clock_now(clk));
    }
    assert_int_equal(step, BW_STEP_DONE);
    assert_true(c.fallback_ran);
    assert_status(c.fallback_rc, BW_OK);
  }
  assert_int_equal(attempted, 2); /* then the breaker refused the rest */
  replay_config(&rc, q, b, &replay);
  rp = bw_reprocessor_new(&rc, &err);
  assert_status(bw_reprocessor_step(rp, &done), BW_E_OPEN);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.backlog, 5);
  bw_clock_manual_advance(clk, 1000 * MS);
  probe_succeeds(b);
  assert_status(bw_reprocessor_step(rp, &done), BW_OK);
  assert_u64_eq(done, 5);
  assert_replayed(&replay, "n-", 5);
  assert_status(bw_reprocessor_stats(rp, &st), BW_OK);
  assert_u64_eq(st.backlog, 0);
  bw_reprocessor_free(rp);
  bw_pipeline_free(pl);
  bw_queue_store_free(q);
  bw_breaker_free(b);
  bw_clock_free(clk);
}

static void reprocessor_config_errors_name_the_field(void **state) {
  bw_reprocessor_config_t c;
  bw_error_t err;
  bw_queue_store_config_t qc;
  bw_queue_store_t *q;
  (void)state;
  bw_queue_store_config_init(&qc);
  q = bw_mem_queue_new(&qc, &err);
  bw_reprocessor_config_init(&c);
  assert_u64_eq(c.batch, 16);
  assert_i64_eq(c.visibility_ms, 30000);
  assert_i64_eq(c.retry_delay_ms, 1000);
  assert_null(bw_reprocessor_new(&c, &err));
  assert_true(bwt_error_names(&err, "queue"));
  c.queue = q;
  assert_null(bw_reprocessor_new(&c, &err));
  assert_true(bwt_error_names(&err, "fn"));
  c.fn = replay_fn;
  c.batch = 0;
  assert_null(bw_reprocessor_new(&c, &err));
  assert_true(bwt_error_names(&err, "batch"));
  c.batch = 1;
  c.visibility_ms = 0;
  assert_null(bw_reprocessor_new(&c, &err));
  assert_true(bwt_error_names(&err, "visibility_ms"));
  c.visibility_ms = 1;
  c.retry_delay_ms = -1;
  assert_null(bw_reprocessor_new(&c, &err));
  assert_true(bwt_error_names(&err, "retry_delay_ms"));
  bw_reprocessor_free(NULL);
  bw_queue_store_free(q);
}

/* ==== allocation failure ================================================= */

/* One round of every memory-queue verb; BW_OK or BW_E_NOMEM. */
static int queue_scenario(void *ctx) {
  bw_queue_store_config_t qc;
  bw_queue_store_t *q;
  bw_stored_item_t it[4];
  bw_dlq_record_t d[4];
  bw_blob_t b[3] = {{"a", 1}, {"b", 1}, {"c", 1}};
  size_t n = 0;
  uint64_t id;
  int rc;
  (void)ctx;
  bw_queue_store_config_init(&qc);
  qc.max_size = 2;
  q = bw_mem_queue_new(&qc, NULL);
  if (q == NULL) return BW_E_NOMEM;
  rc = bw_queue_store_enqueue_batch(q, b, 3, NULL, NULL);
  if (rc == BW_E_NOMEM) goto out;
  rc = bw_queue_store_claim(q, 4, 1000, it, &n);
  if (rc == BW_E_NOMEM) goto out;
  if (n > 0) bw_queue_store_reject(q, it[0].id, it[0].receipt, "x");
  bw_stored_items_clear(it, n);
  rc = bw_queue_store_dlq_list(q, 0, 4, d, &n);
  if (rc == BW_E_NOMEM) goto out;
  if (n > 0) bw_queue_store_dlq_requeue(q, d[0].id, &id);
  bw_dlq_records_clear(d, n);
  rc = BW_OK;
out:
  bw_queue_store_free(q);
  return rc;
}

static int idem_scenario(void *ctx) {
  bw_idem_config_t c;
  bw_idem_store_t *s;
  bw_idem_record_t r;
  char key[64];
  bw_kv_t f[1] = {{"id", "1"}};
  int rc;
  (void)ctx;
  bw_idem_config_init(&c);
  s = bw_mem_idem_new(&c, NULL);
  if (s == NULL) return BW_E_NOMEM;
  rc = bw_idem_key(key, sizeof(key), "op", f, 1);
  if (rc == BW_OK) rc = bw_idem_begin(s, key, &r);
  if (rc == BW_OK) rc = bw_idem_complete(s, key, r.token, 1, "res", 3);
  if (rc == BW_OK) rc = bw_idem_begin(s, key, &r);
  if (rc == BW_OK) bw_idem_record_clear(&r);
  bw_idem_store_free(s);
  return rc;
}

static void memory_backends_survive_every_failed_allocation(void **state) {
  (void)state;
  /* Lenient: what a scenario survives despite a failed allocation must
   * still leak nothing. */
  oom_walk_lenient(queue_scenario, NULL, false, NULL);
  oom_walk_lenient(idem_scenario, NULL, false, NULL);
}

/* The NULL policy: every verb of the store interfaces, the memory stores,
 * parking and the reprocessor answers BW_E_INVAL (or NULL, "", "unknown")
 * for a NULL object, never a crash; the void functions and frees are
 * no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_error_t err;
  uint64_t id = 0, w = 7, r = 9;
  size_t n = 0;
  bw_stored_item_t it;
  bw_dlq_record_t dr;
  bw_queue_store_stats_t qs;
  bw_idem_record_t ir;
  bw_idem_stats_t is;
  bw_blob_t b;
  bw_reprocessor_stats_t rs;
  (void)state;
  memset(&b, 0, sizeof b);
  bw_queue_store_config_init(NULL);
  assert_int_equal(bw_queue_store_config_validate(NULL, &err), BW_E_INVAL);
  assert_int_equal(bw_queue_store_enqueue(NULL, "a", 1, &id), BW_E_INVAL);
  assert_int_equal(bw_queue_store_enqueue_batch(NULL, &b, 1, &id, &n),
                   BW_E_INVAL);
  assert_int_equal(bw_queue_store_claim(NULL, 1, 10, &it, &n), BW_E_INVAL);
  assert_int_equal(bw_queue_store_ack(NULL, 1, 1), BW_E_INVAL);
  assert_int_equal(bw_queue_store_nack(NULL, 1, 1, 0), BW_E_INVAL);
  assert_int_equal(bw_queue_store_reject(NULL, 1, 1, "x"), BW_E_INVAL);
  assert_int_equal(bw_queue_store_dlq_list(NULL, 0, 1, &dr, &n), BW_E_INVAL);
  assert_int_equal(bw_queue_store_dlq_requeue(NULL, 1, &id), BW_E_INVAL);
  assert_int_equal(bw_queue_store_dlq_delete(NULL, 1), BW_E_INVAL);
  assert_int_equal(bw_queue_store_stats(NULL, &qs), BW_E_INVAL);
  assert_string_equal(bw_queue_store_name(NULL), "");
  assert_string_equal(bw_queue_store_kind(NULL), "");
  bw_queue_store_free(NULL);
  bw_queue_store_config_levels(NULL, &w, &r);
  assert_int_equal(w, 7);
  assert_int_equal(r, 9);
  bw_queue_event_warning(NULL, NULL, NULL, 0, 0, 0);
  bw_queue_event_dead_lettered(NULL, NULL, NULL, 0, NULL, NULL, 0, 0, 0, 0);
  bw_queue_events_warning(NULL, 0);
  bw_queue_events_dead(NULL, 0, 0, 0, NULL, NULL);
  bw_queue_events_set_dead_count(NULL, 0);
  bw_queue_events_emit(NULL, NULL, NULL, 0);
  bw_stored_items_clear(NULL, 3);
  bw_dlq_records_clear(NULL, 3);
  assert_null(bw_mem_queue_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  bw_idem_config_init(NULL);
  assert_int_equal(bw_idem_config_validate(NULL, &err), BW_E_INVAL);
  assert_int_equal(bw_idem_begin(NULL, "k", &ir), BW_E_INVAL);
  assert_int_equal(bw_idem_complete(NULL, "k", 1, 200, "r", 1), BW_E_INVAL);
  assert_int_equal(bw_idem_abandon(NULL, "k", 1), BW_E_INVAL);
  assert_int_equal(bw_idem_stats(NULL, &is), BW_E_INVAL);
  assert_string_equal(bw_idem_store_name(NULL), "");
  assert_string_equal(bw_idem_store_kind(NULL), "");
  bw_idem_store_free(NULL);
  bw_idem_record_clear(NULL);
  assert_int_equal(bw_idem_key(NULL, 0, NULL, NULL, 0), BW_E_INVAL);
  assert_null(bw_mem_idem_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_int_equal(bw_park_fallback(NULL, BW_FAILURE_BREAKER, NULL),
                   BW_E_INVAL);
  bw_reprocessor_config_init(NULL);
  assert_null(bw_reprocessor_new(NULL, &err));
  assert_int_equal(bw_reprocessor_step(NULL, &n), BW_E_INVAL);
  assert_int_equal(bw_reprocessor_stats(NULL, &rs), BW_E_INVAL);
  bw_reprocessor_free(NULL);
  assert_string_equal(bw_idem_state_name((bw_idem_state_t)99), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(queue_defaults_are_the_asyncio_toolkits_guard),
      cmocka_unit_test(queue_config_errors_name_the_field),
      cmocka_unit_test(idem_config_defaults_and_errors),
      cmocka_unit_test(a_full_memory_idem_store_sweeps_then_refuses),
      cmocka_unit_test(keys_are_stable_and_field_exact),
      cmocka_unit_test(execute_runs_once_and_replays_the_result),
      cmocka_unit_test(parked_work_is_replayed_only_once_the_breaker_closes),
      cmocka_unit_test(failed_replays_are_retried_and_bad_ones_dead_lettered),
      cmocka_unit_test(items_the_breaker_refused_mid_step_wait_untried),
      cmocka_unit_test(a_refusing_handler_ends_the_step),
      cmocka_unit_test(each_call_parks_its_own_work),
      cmocka_unit_test(a_pipeline_fallback_parks_and_the_reprocessor_replays),
      cmocka_unit_test(reprocessor_config_errors_name_the_field),
      cmocka_unit_test(memory_backends_survive_every_failed_allocation),
  };
  oom_install();
  return cmocka_run_group_tests(tests, NULL, NULL);
}

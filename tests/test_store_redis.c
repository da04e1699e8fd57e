/* The Redis store against a real, private redis-server (tests/redis_fixture.h
 * starts one on a loopback port and stops it, even when an assertion fails).
 *
 * Shared breaker: counts from several breaker objects (each its own
 * "process" as far as Redis knows) and from 4 forked workers add up in Redis
 * and trip the shared state; every worker sees OPEN within two of its own
 * syncs. Faults: redis-server killed mid-run and restarted (with its AOF):
 * the breaker falls back to local decisions, reports exactly one
 * redis_unavailable and one redis_restored, and the calls recorded in Redis
 * equal the calls made (nothing lost, nothing doubled), also when the server
 * hangs (SIGSTOP) and a reply is lost. Queue guard: the max_size boundary,
 * the DLQ entry, one warning per crossing, ack and recovery, and exact
 * admission under concurrent producers. Idempotency: of two concurrent
 * begins exactly one is NEW. Bad input: a wrong password names the field.
 * The store.h interfaces: the behavioural table of store_behaviour.h, run
 * against Redis, and two handles sharing one queue, its guard and warning.
 *
 * Time: breakers run on a manual clock with use_redis_time = false and
 * explicit syncs, so the state machine is exact; the forked workers use the
 * sync thread and real time, and assert counts and states only. */
#include <pthread.h>

#include "breakwater/store_redis.h"
#include "breaker_pipeline.h"
#include "bw_test.h"
#include "oom.h"
#include "redis_test.h"
#include "store_behaviour.h"

static void rb_config(const bwt_env_t *e, bw_redis_breaker_config_t *cfg,
                      const bwt_redis_t *srv, const char *name) {
  bwt_redis_breaker_config(e, cfg, srv, name);
  cfg->seed = 42;
}

static bw_redis_breaker_t *rb_new(const bw_redis_breaker_config_t *cfg) {
  bw_error_t err;
  bw_redis_breaker_t *b;
  memset(&err, 0, sizeof(err));
  b = bw_redis_breaker_new(cfg, &err);
  if (b == NULL) {
    print_error("bw_redis_breaker_new: %s [%s] %s\n", bw_err_name(err.code),
                err.field, err.message);
    fail();
  }
  return b;
}

/* ---- bad input --------------------------------------------------------- */

static void test_unsupported_options_name_the_field(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  bw_error_t err;
  rb_config(e, &cfg, &g_redis, "cfg");
  cfg.redis.tls = true;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "redis.tls"));
  assert_contains(err.message, "hiredis_ssl");

  rb_config(e, &cfg, &g_redis, "cfg");
  cfg.breaker.trip_rule = BW_TRIP_COUNT_WINDOW;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "trip_rule"));

  rb_config(e, &cfg, &g_redis, "cfg");
  cfg.breaker.slow_call_ms = 100;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "slow_call_ms"));

  rb_config(e, &cfg, &g_redis, "cfg");
  cfg.redis.port = 0;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "redis.port"));

  rb_config(e, &cfg, &g_redis, "cfg");
  cfg.sync_interval_ms = 0;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "sync_interval_ms"));

  /* The core's own rules apply too. */
  rb_config(e, &cfg, &g_redis, "cfg");
  cfg.breaker.failure_threshold = 0;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "failure_threshold"));
}

static void test_wrong_password_is_a_clear_error(void **state) {
  bwt_env_t *e = *state;
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_queue_config_t qc;
  bw_redis_idem_config_t ic;
  bw_error_t err;
  char where[64];
  bw_redis_breaker_t *b;
  bwt_redis_start_or_fail(&srv, "s3cret-pass", false);
  snprintf(where, sizeof(where), "127.0.0.1:%d", srv.port);

  rb_config(e, &cfg, &srv, "authb");
  cfg.redis.password = "wrong-pass";
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "redis.password"));
  assert_contains(err.message, "redis AUTH failed for");
  assert_contains(err.message, where);
  assert_contains(err.message, "WRONGPASS");

  /* No password at all against a server that wants one. */
  rb_config(e, &cfg, &srv, "authb");
  cfg.redis.password = NULL;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new(&cfg, &err));
  assert_true(bwt_error_names(&err, "redis.password"));
  assert_contains(err.message, "NOAUTH");

  bw_redis_queue_config_init(&qc);
  qc.redis.port = srv.port;
  qc.redis.password = "wrong-pass";
  bwt_prefill_error(&err);
  assert_null(bw_redis_queue_new(&qc, &err));
  assert_true(bwt_error_names(&err, "redis.password"));
  assert_contains(err.message, "WRONGPASS");

  bw_redis_idem_config_init(&ic);
  ic.redis.port = srv.port;
  ic.redis.password = "wrong-pass";
  bwt_prefill_error(&err);
  assert_null(bw_redis_idem_new(&ic, &err));
  assert_true(bwt_error_names(&err, "redis.password"));

  /* The right password works. */
  rb_config(e, &cfg, &srv, "authb");
  b = rb_new(&cfg);
  assert_false(bwt_rb_stats(b).fallback);
  bw_redis_breaker_free(b);
  bwt_redis_cleanup(&srv);
}

static void test_unreachable_redis_starts_in_fallback(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_redis_breaker_stats_t s;
  bw_redis_queue_config_t qc;
  bw_error_t err;
  int port = bwt__free_port(); /* nobody listens there */
  rb_config(e, &cfg, &g_redis, "nowhere");
  cfg.redis.port = port;
  b = rb_new(&cfg);
  s = bwt_rb_stats(b);
  assert_true(s.fallback);
  assert_u64_eq(s.unavailable_events, 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  assert_contains(bwt_nth_of(e->rec, BW_EV_REDIS_UNAVAILABLE, 0)->reason,
                  "cannot connect");
  assert_string_equal(bw_event_type_name(BW_EV_REDIS_UNAVAILABLE),
                      "redis_unavailable");
  assert_string_equal(bw_event_type_name(BW_EV_REDIS_RESTORED),
                      "redis_restored");
  /* It keeps serving from local state. */
  bwt_rb_calls(b, BW_SUCCESS, 3);
  assert_status(bw_redis_breaker_sync(b), BW_E_IO);
  assert_u64_eq(bwt_rb_stats(b).unavailable_events, 1);
  assert_u64_eq(bwt_rb_stats(b).calls, 3);
  bw_redis_breaker_free(b);

  /* The queue has no local fallback: it refuses to start, naming why. */
  bw_redis_queue_config_init(&qc);
  qc.redis.port = port;
  bwt_prefill_error(&err);
  assert_null(bw_redis_queue_new(&qc, &err));
  assert_status(err.code, BW_E_IO);
  assert_contains(err.message, "cannot connect");
}

/* ---- shared breaker, one process ------------------------------------- */

/* Processes share one configured seed (it is the jitter seed): their
 * identities must still differ, or the script would take one's batches for
 * the other's re-sends and drop them. */
static void test_one_seed_in_two_processes_still_counts_both(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  rb_config(e, &cfg, &g_redis, "same");
  cfg.breaker.failure_threshold = 5;
  bw_redis_breaker_t *a = rb_new(&cfg);
  bw_redis_breaker_t *b = rb_new(&cfg); /* the same seed, 42 */
  bwt_rb_calls(a, BW_FAILURE, 3);
  bwt_rb_calls(b, BW_FAILURE, 3);
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_OPEN);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("same"), "tf"), 6);
  bw_redis_breaker_free(a);
  bw_redis_breaker_free(b);
}

static void test_counts_add_up_across_breakers(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a, *b;
  bw_permit_t old;
  rb_config(e, &cfg, &g_redis, "pay");
  cfg.breaker.failure_threshold = 4;
  cfg.breaker.break_ms = 1000;
  cfg.breaker.success_threshold = 2;
  cfg.breaker.half_open_max_calls = 1;
  a = rb_new(&cfg);
  cfg.seed = 43; /* another "process" */
  b = rb_new(&cfg);

  assert_status(bw_redis_breaker_acquire(a, &old), BW_OK);
  bwt_rb_calls(a, BW_FAILURE, 2);
  bwt_rb_calls(b, BW_FAILURE, 1);
  /* Nothing crossed the network yet: both still CLOSED. */
  assert_state(bw_redis_breaker_state(a), BW_CLOSED);
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  assert_u64_eq(bwt_rb_stats(b).shared_consecutive_failures, 3);
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  /* The fourth failure, in b: 4 in total across both. */
  bwt_rb_call(b, BW_FAILURE);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_OPEN);
  assert_state(bw_redis_breaker_state(a), BW_CLOSED); /* not synced yet */
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_state(bw_redis_breaker_state(a), BW_OPEN);
  assert_u64_eq(bwt_rb_stats(a).generation, 2);
  assert_i64_eq(bw_redis_breaker_retry_in_ms(a), 1000);
  {
    bw_permit_t p;
    assert_status(bw_redis_breaker_acquire(a, &p), BW_E_OPEN);
    assert_status(bw_redis_breaker_acquire(b, &p), BW_E_OPEN);
  }
  /* A call admitted before the opening decides nothing now. */
  assert_status(bw_redis_breaker_release(a, &old, BW_SUCCESS), BW_E_STALE);
  assert_u64_eq(bwt_rb_stats(a).stale, 1);
  /* Each process saw the opening once: one circuit_opened per object. */
  assert_u64_eq(bwt_count(e->rec, BW_EV_CIRCUIT_OPENED), 2);
  assert_contains(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, 0)->reason,
                  "4 consecutive failures across processes");
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("pay"), "tf"), 4);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("pay"), "state"),
                1);

  /* After the break: one probe per process; two successes close it. */
  bwt_advance_ms(e, 1000);
  assert_state(bw_redis_breaker_state(a), BW_HALF_OPEN);
  {
    bw_permit_t p, q;
    assert_status(bw_redis_breaker_acquire(a, &p), BW_OK);
    assert_u64_eq(p.kind, BW_PERMIT_PROBE);
    assert_status(bw_redis_breaker_acquire(a, &q), BW_E_OPEN); /* 1 slot */
    assert_status(bw_redis_breaker_release(a, &p, BW_SUCCESS), BW_OK);
  }
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_state(bw_redis_breaker_state(a), BW_HALF_OPEN); /* 1 of 2 */
  bwt_rb_call(b, BW_SUCCESS);                            /* b's probe */
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_state(bw_redis_breaker_state(a), BW_CLOSED);
  assert_u64_eq(bwt_rb_stats(a).generation, 3);
  assert_u64_eq(bwt_count(e->rec, BW_EV_CIRCUIT_CLOSED), 2);
  /* A success resets the shared consecutive count. */
  assert_u64_eq(bwt_rb_stats(a).shared_consecutive_failures, 0);
  bw_redis_breaker_free(a);
  bw_redis_breaker_free(b);
  /* Every call of both objects is recorded once (free pushes the rest):
   * a: the stale one, 2 failures, 1 probe; b: 2 failures, 1 probe. */
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("pay"), "tc"), 7);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("pay"), "tr"), 3);
}

static void test_probe_failure_reopens(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a;
  rb_config(e, &cfg, &g_redis, "reopen");
  cfg.breaker.failure_threshold = 2;
  cfg.breaker.break_ms = 500;
  a = rb_new(&cfg);
  bwt_rb_calls(a, BW_FAILURE, 2);
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_state(bw_redis_breaker_state(a), BW_OPEN);
  bwt_advance_ms(e, 499);
  assert_state(bw_redis_breaker_state(a), BW_OPEN);
  bwt_advance_ms(e, 1);
  bwt_rb_call(a, BW_FAILURE); /* the probe fails */
  {
    bw_permit_t p; /* no second probe in this generation */
    assert_status(bw_redis_breaker_acquire(a, &p), BW_E_OPEN);
  }
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_state(bw_redis_breaker_state(a), BW_OPEN);
  assert_u64_eq(bwt_rb_stats(a).generation, 3);
  assert_i64_eq(bw_redis_breaker_retry_in_ms(a), 500);
  bw_redis_breaker_free(a);
}

static void test_time_window_ratio_across_breakers(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a, *b;
  rb_config(e, &cfg, &g_redis, "win");
  cfg.breaker.trip_rule = BW_TRIP_TIME_WINDOW;
  cfg.breaker.failure_ratio = 0.5;
  cfg.breaker.minimum_calls = 10;
  cfg.breaker.window_ms = 10000;
  cfg.breaker.window_buckets = 10;
  a = rb_new(&cfg);
  cfg.seed = 7;
  b = rb_new(&cfg);
  bwt_rb_calls(a, BW_SUCCESS, 4);
  bwt_rb_calls(a, BW_FAILURE, 3);
  bwt_rb_calls(b, BW_FAILURE, 2);
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  /* 9 calls < minimum_calls: never opens, even at 5/9 failures. */
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_rb_stats(b).shared_window_calls, 9);
  assert_u64_eq(bwt_rb_stats(b).shared_window_failures, 5);
  /* Buckets older than the window no longer count. */
  bwt_advance_ms(e, 10000);
  bwt_rb_call(b, BW_FAILURE);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  assert_u64_eq(bwt_rb_stats(b).shared_window_calls, 1);
  /* 10 calls in the window, 6 failures: opens. */
  bwt_rb_calls(a, BW_SUCCESS, 4);
  bwt_rb_calls(a, BW_FAILURE, 5);
  assert_status(bw_redis_breaker_sync(a), BW_OK);
  assert_state(bw_redis_breaker_state(a), BW_OPEN);
  assert_contains(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, 0)->reason,
                  "failure ratio 0.60 >= 0.50");
  bw_redis_breaker_free(a);
  bw_redis_breaker_free(b);
}

static void test_limit_interface(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_limit_t *l;
  bw_permit_t p;
  int i;
  rb_config(e, &cfg, &g_redis, "lim");
  cfg.breaker.failure_threshold = 3;
  b = rb_new(&cfg);
  l = bw_redis_breaker_as_limit(b);
  assert_string_equal(bw_limit_kind(l), "redis_breaker");
  assert_string_equal(bw_limit_name(l), "lim");
  for (i = 0; i < 3; i++) {
    assert_status(bw_limit_try_acquire(l, &p), BW_OK);
    assert_u64_eq(bw_limit_in_flight(l), 1);
    assert_status(bw_limit_release(l, &p, BW_LIMIT_DROPPED), BW_OK);
  }
  assert_status(bw_limit_try_acquire(l, &p), BW_OK);
  assert_status(bw_limit_release(l, &p, BW_LIMIT_IGNORED), BW_OK);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  assert_status(bw_limit_try_acquire(l, &p), BW_E_OPEN);
  assert_u64_eq(bw_limit_current(l), 0);
  assert_u64_eq(bwt_rb_stats(b).failures, 3);
  assert_u64_eq(bwt_rb_stats(b).ignored, 1);
  bw_limit_free(l);
}

static void test_pipeline_breaker_step_refuses_when_shared_open(void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_pipeline_config_t pc;
  bw_pipeline_t *pl;
  bw_pipeline_call_t c;
  bw_error_t err;
  int i, step;
  rb_config(e, &cfg, &g_redis, "pl");
  cfg.breaker.failure_threshold = 2;
  b = rb_new(&cfg);
  bw_pipeline_config_init(&pc);
  assert_status(bw_pipeline_add_breaker_if(&pc, bw_redis_breaker_iface(b)),
                BW_OK);
  pl = bw_pipeline_new(&pc, &err);
  assert_non_null(pl);
  for (i = 0; i < 2; i++) {
    step = bw_pipeline_begin(pl, &c, bwt_now(e));
    assert_int_equal(step, BW_STEP_ATTEMPT);
    step = bw_pipeline_report(&c, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE,
                              bwt_now(e));
    assert_int_equal(step, BW_STEP_DONE);
  }
  /* The breaker step released FAILURE: two failures, pushed by a sync. */
  assert_u64_eq(bwt_rb_stats(b).failures, 2);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  step = bw_pipeline_begin(pl, &c, bwt_now(e));
  assert_int_equal(step, BW_STEP_DONE);
  assert_int_equal(c.failure, BW_FAILURE_BREAKER);
  bw_pipeline_free(pl);
  bw_redis_breaker_free(b);
}

typedef struct rb_kit_s {
  bwt_env_t *e;
  bw_redis_breaker_t *b;
} rb_kit_t;
static int64_t rb_kit_now(void *ud) {
  return bwt_now(((rb_kit_t *)ud)->e);
}
static void rb_kit_advance(void *ud, int64_t ms) {
  bwt_advance_ms(((rb_kit_t *)ud)->e, ms);
}
static void rb_kit_sync(void *ud) {
  assert_status(bw_redis_breaker_sync(((rb_kit_t *)ud)->b), BW_OK);
}
static uint64_t rb_kit_failures(void *ud) {
  return bwt_rb_stats(((rb_kit_t *)ud)->b).failures;
}

/* The pipeline behaviour every breaker shows (breaker_pipeline.h). */
static void test_pipeline_behaviour_through_the_breaker_interface(
    void **state) {
  bwt_env_t *e = *state;
  bw_redis_breaker_config_t cfg;
  rb_config(e, &cfg, &g_redis, "plb");
  cfg.breaker.failure_threshold = 2;
  cfg.breaker.break_ms = 5000;
  rb_kit_t rk = {e, rb_new(&cfg)};
  bw_breaker_if_t *bi = bw_redis_breaker_iface(rk.b);
  assert_string_equal(bw_breaker_if_kind(bi), "redis_breaker");
  assert_string_equal(bw_breaker_if_name(bi), "plb");
  bwt_brk_kit_t k = {
      bi, &rk, rb_kit_now, rb_kit_advance, rb_kit_sync, rb_kit_failures};
  bwt_breaker_pipeline_behaviour(&k);
  bw_breaker_if_free(bi);
}

/* ---- faults ---------------------------------------------------------- */

static void test_kill_and_restart_conserves_counts(void **state) {
  bwt_env_t *e = *state;
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_redis_breaker_stats_t s;
  bw_permit_t p;
  int i, ok = 0;
  bwt_redis_start_or_fail(&srv, NULL, true);
  rb_config(e, &cfg, &srv, "fault");
  cfg.breaker.failure_threshold = 5;
  cfg.breaker.break_ms = 10000;
  cfg.redis.backoff_initial_ms = 50;
  cfg.redis.backoff_max_ms = 400;
  b = rb_new(&cfg);
  bwt_rb_calls(b, BW_SUCCESS, 10);
  bwt_rb_calls(b, BW_FAILURE, 2);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  bwt_rb_calls(b, BW_SUCCESS, 3); /* counted, not pushed when Redis dies */

  bwt_redis_kill(&srv);
  /* Keep calling: decisions stay local and instant. */
  bwt_rb_calls(b, BW_SUCCESS, 5);
  assert_status(bw_redis_breaker_sync(b), BW_E_IO);
  s = bwt_rb_stats(b);
  assert_true(s.fallback);
  assert_u64_eq(s.unavailable_events, 1);
  /* The local fallback applies the rule to local counts: 5 failures open
   * it. */
  bwt_rb_calls(b, BW_FAILURE, 5);
  assert_status(bw_redis_breaker_acquire(b, &p), BW_E_OPEN);
  assert_state(bw_redis_breaker_state(b), BW_OPEN);
  /* More failed attempts (after each backoff) emit nothing new. */
  for (i = 0; i < 5; i++) {
    bwt_advance_ms(e, 400);
    assert_status(bw_redis_breaker_sync(b), BW_E_IO);
  }
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  assert_true(bwt_rb_stats(b).sync_failures >= 2);

  bwt_redis_restart_or_fail(&srv);
  /* Bounded: the backoff is at most 400 ms of the manual clock. */
  for (i = 0; i < 10 && !ok; i++) {
    bwt_advance_ms(e, 400);
    ok = bw_redis_breaker_sync(b) == BW_OK;
  }
  assert_true(ok);
  s = bwt_rb_stats(b);
  assert_false(s.fallback);
  assert_u64_eq(s.restored_events, 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_RESTORED), 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  /* Conservation: every call made is recorded in Redis exactly once (the
   * AOF kept what was pushed before the kill). */
  assert_u64_eq(s.calls, 25);
  assert_u64_eq(s.pending_calls, 0);
  assert_u64_eq(s.shared_total_calls, 25);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("fault"), "tc"), 25);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("fault"), "tf"), 7);
  /* The shared state is adopted again (still CLOSED: the failures decided
   * locally while Redis was away do not trip the shared rule). */
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  bwt_rb_call(b, BW_SUCCESS);
  bw_redis_breaker_free(b);
  bwt_redis_cleanup(&srv);
}

/* The shared break ends while Redis is down: each process probes locally
 * (half-open, half_open_max_calls at a time) instead of closing at once and
 * sending every call to a dependency that may still be down. */
static void test_shared_break_ending_in_an_outage_probes_locally(void **state) {
  bwt_env_t *e = *state;
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_permit_t p, q;
  bwt_redis_start_or_fail(&srv, NULL, false);
  rb_config(e, &cfg, &srv, "outage_end");
  cfg.breaker.failure_threshold = 3;
  cfg.breaker.break_ms = 1000;
  cfg.breaker.half_open_max_calls = 1;
  cfg.breaker.success_threshold = 2;
  b = rb_new(&cfg);
  bwt_rb_calls(b, BW_FAILURE, 3);
  assert_status(bw_redis_breaker_sync(b), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_OPEN);
  bwt_advance_ms(e, 400);
  bwt_redis_kill(&srv);
  assert_status(bw_redis_breaker_sync(b), BW_E_IO);
  assert_true(bwt_rb_stats(b).fallback);
  /* The shared break (600 ms left) still holds. */
  assert_status(bw_redis_breaker_acquire(b, &p), BW_E_OPEN);
  assert_i64_eq(bw_redis_breaker_retry_in_ms(b), 600);
  bwt_advance_ms(e, 600);
  /* Over: one probe, not every call. */
  assert_state(bw_redis_breaker_state(b), BW_HALF_OPEN);
  assert_status(bw_redis_breaker_acquire(b, &p), BW_OK);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_redis_breaker_acquire(b, &q), BW_E_OPEN);
  /* A failed probe reopens locally for break_ms. */
  assert_status(bw_redis_breaker_release(b, &p, BW_FAILURE), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_OPEN);
  assert_status(bw_redis_breaker_acquire(b, &q), BW_E_OPEN);
  assert_i64_eq(bw_redis_breaker_retry_in_ms(b), 1000);
  bwt_advance_ms(e, 1000);
  /* success_threshold probe successes close it locally. */
  assert_status(bw_redis_breaker_acquire(b, &p), BW_OK);
  assert_status(bw_redis_breaker_acquire(b, &q), BW_E_OPEN);
  assert_status(bw_redis_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_HALF_OPEN);
  assert_status(bw_redis_breaker_acquire(b, &p), BW_OK);
  assert_status(bw_redis_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  bwt_rb_calls(b, BW_SUCCESS, 5);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  bw_redis_breaker_free(b);
  bwt_redis_cleanup(&srv);
}

static void test_hung_redis_lost_reply_is_not_double_counted(void **state) {
  bwt_env_t *e = *state;
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_redis_breaker_stats_t s;
  int i, ok = 0;
  bwt_redis_start_or_fail(&srv, NULL, false);
  rb_config(e, &cfg, &srv, "hung");
  cfg.redis.command_timeout_ms = 100;
  cfg.redis.backoff_max_ms = 200;
  b = rb_new(&cfg);
  bwt_rb_calls(b, BW_SUCCESS, 7);
  bwt_redis_pause(&srv);
  /* The script is sent, the reply never comes: a timeout, then fallback.
   * Redis may still run the script when it wakes up: the re-sent batch must
   * then be recognised. */
  assert_status(bw_redis_breaker_sync(b), BW_E_IO);
  s = bwt_rb_stats(b);
  assert_true(s.fallback);
  assert_contains(bwt_nth_of(e->rec, BW_EV_REDIS_UNAVAILABLE, 0)->reason,
                  "timed out");
  bwt_rb_calls(b, BW_FAILURE, 2);
  bwt_redis_resume(&srv);
  for (i = 0; i < 10 && !ok; i++) {
    bwt_advance_ms(e, 200);
    ok = bw_redis_breaker_sync(b) == BW_OK;
  }
  assert_true(ok);
  /* Redis runs the frozen script once it thaws (here, always so far): the
   * re-sent batch is then a duplicate, recognised and skipped. */
  assert_true(bwt_rb_stats(b).duplicate_batches <= 1);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("hung"), "tc"), 9);
  assert_u64_eq(bwt_rb_stats(b).shared_total_calls, 9);
  assert_u64_eq(bwt_rb_stats(b).restored_events, 1);
  bw_redis_breaker_free(b);
  bwt_redis_cleanup(&srv);
}

/* ---- many processes -------------------------------------------------- */

#define WORKERS 4

/* Waits (bounded) for one byte on fd; the byte or -1. */
static int read_byte(int fd, int timeout_ms) {
  int waited = 0;
  for (;;) {
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n == 1) return c;
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return -1;
    if (waited >= timeout_ms) return -1;
    bwt__sleep_ms(2);
    waited += 2;
  }
}

/* Polls (bounded) until every pushed count is recorded. */
static bool wait_pushed(bw_redis_breaker_t *b) {
  int i;
  for (i = 0; i < 2000; i++) {
    bw_redis_breaker_stats_t s;
    bw_redis_breaker_stats(b, &s);
    if (s.pending_calls == 0 && s.syncs > 0) return true;
    bwt__sleep_ms(5);
  }
  return false;
}

/* Waits (bounded: 30 s, then SIGKILL) for a worker; its exit code, or -1
 * when it did not exit normally. */
static int reap_status(pid_t pid) {
  int i, status = 0;
  for (i = 0; i < 3000; i++) {
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    bwt__sleep_ms(10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

#define WFAIL(code, msg)                           \
  do {                                             \
    fprintf(stderr, "worker %d: %s\n", id, (msg)); \
    bw_redis_breaker_free(b);                      \
    _exit(code);                                   \
  } while (0)

static void worker(int id, int port, int to_parent, int from_parent) {
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_redis_breaker_stats_t s;
  bw_permit_t p;
  uint64_t s0;
  int i;
  bw_redis_breaker_config_init(&cfg);
  cfg.breaker.name = "fleet";
  cfg.breaker.failure_threshold = 2 * WORKERS;
  cfg.breaker.break_ms = 60000;
  cfg.redis.port = port;
  cfg.sync_interval_ms = 20;
  cfg.sync_thread = true;
  cfg.seed = 1000 + (uint64_t)id;
  b = bw_redis_breaker_new(&cfg, NULL);
  if (b == NULL) _exit(10);
  /* Phase A: one failure each. */
  if (bw_redis_breaker_acquire(b, &p) != BW_OK) WFAIL(11, "A rejected");
  bw_redis_breaker_release(b, &p, BW_FAILURE);
  if (!wait_pushed(b)) WFAIL(12, "A not pushed");
  if (write(to_parent, "A", 1) != 1) WFAIL(13, "pipe");
  if (read_byte(from_parent, 20000) != 'G') WFAIL(14, "no G");
  /* Phase B: one more each: 2 * WORKERS in total opens it. */
  if (bw_redis_breaker_acquire(b, &p) != BW_OK) WFAIL(15, "B rejected");
  bw_redis_breaker_release(b, &p, BW_FAILURE);
  if (!wait_pushed(b)) WFAIL(16, "B not pushed");
  if (write(to_parent, "B", 1) != 1) WFAIL(13, "pipe");
  if (read_byte(from_parent, 20000) != 'C') WFAIL(17, "no C");
  /* Phase C: the shared state is OPEN now; this worker must see it within
   * two of its own syncs (one may have started before the opening). */
  bw_redis_breaker_stats(b, &s);
  s0 = s.syncs;
  for (i = 0; i < 2000; i++) {
    bw_redis_breaker_stats(b, &s);
    if (s.state == BW_OPEN || s.syncs > s0 + 3) break;
    bwt__sleep_ms(2);
  }
  if (bw_redis_breaker_state(b) != BW_OPEN) WFAIL(18, "never saw OPEN");
  bw_redis_breaker_stats(b, &s);
  /* One transition adopted (CLOSED -> OPEN), by the sync count, not the
   * clock: at most the second sync after the opening. */
  if (s.transitions_seen != 1) WFAIL(22, "not exactly one transition");
  if (s.transition_sync > s0 + 2)
    WFAIL(19, "saw OPEN only after more than 2 syncs");
  if (bw_redis_breaker_acquire(b, &p) != BW_E_OPEN) WFAIL(20, "admitted");
  bw_redis_breaker_stats(b, &s);
  if (s.failures != 2 || s.fallback) WFAIL(21, "wrong counts");
  bw_redis_breaker_free(b);
  _exit(0);
}

static void test_forked_workers_share_one_breaker(void **state) {
  int up[WORKERS][2], down[WORKERS][2];
  pid_t pids[WORKERS];
  int i;
  (void)state;
  fflush(NULL);
  for (i = 0; i < WORKERS; i++) {
    assert_int_equal(pipe(up[i]), 0);
    assert_int_equal(pipe(down[i]), 0);
    pids[i] = fork();
    assert_true(pids[i] >= 0);
    if (pids[i] == 0) {
      close(up[i][0]);
      close(down[i][1]);
      worker(i, g_redis.port, up[i][1], down[i][0]);
      _exit(99);
    }
    close(up[i][1]);
    close(down[i][0]);
    fcntl(up[i][0], F_SETFL, O_NONBLOCK);
  }
  for (i = 0; i < WORKERS; i++)
    assert_int_equal(read_byte(up[i][0], 20000), 'A');
  /* WORKERS failures in total, threshold 2 * WORKERS: still closed. */
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("fleet"), "state"),
                0);
  assert_i64_eq(
      bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("fleet"), "consec"),
      WORKERS);
  for (i = 0; i < WORKERS; i++)
    assert_int_equal(write(down[i][1], "G", 1), 1);
  for (i = 0; i < WORKERS; i++)
    assert_int_equal(read_byte(up[i][0], 20000), 'B');
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("fleet"), "state"),
                1);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("fleet"), "tf"),
                2 * WORKERS);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("fleet"), "gen"),
                2);
  for (i = 0; i < WORKERS; i++)
    assert_int_equal(write(down[i][1], "C", 1), 1);
  /* Every worker saw OPEN within two of its syncs, was rejected, and
   * counted exactly its own 2 failures (exit code 0; others name the
   * failed check on stderr). */
  for (i = 0; i < WORKERS; i++)
    assert_int_equal(reap_status(pids[i]), 0);
  for (i = 0; i < WORKERS; i++) {
    close(up[i][0]);
    close(down[i][1]);
  }
}

/* ---- queue guard ----------------------------------------------------- */

static bw_redis_queue_t *queue_new(bw_sink_t *sink, const bwt_env_t *e,
                                   const char *name, uint32_t max) {
  bw_redis_queue_config_t qc;
  bw_error_t err;
  bw_redis_queue_t *q;
  bw_redis_queue_config_init(&qc);
  qc.redis.port = g_redis.port;
  qc.name = name;
  qc.max_size = max;
  qc.sink = sink;
  qc.wall_clock = e->wall;
  q = bw_redis_queue_new(&qc, &err);
  if (q == NULL) {
    print_error("bw_redis_queue_new: %s\n", err.message);
    fail();
  }
  return q;
}

/* The DLQ is bounded by dlq_max: the oldest entries are trimmed, counted
 * (stats.dlq_dropped) and reported on the dead_lettered event. */
static void test_queue_guard_dlq_is_bounded(void **state) {
  bwt_env_t *e = *state;
  bw_redis_queue_config_t qc;
  bw_redis_queue_stats_t st;
  bw_error_t err;
  bw_redis_queue_t *q;
  uint64_t size = 0;
  char item[8], *json = NULL;
  const bwt_event_t *ev;
  int i;
  bw_redis_queue_config_init(&qc);
  assert_int_equal(qc.dlq_max, 10000);
  assert_dbl_eq(qc.warn_rearm_threshold, 0.6, 0);
  qc.redis.port = g_redis.port;
  qc.name = "bounded";
  qc.max_size = 1;
  qc.dlq_max = 3;
  qc.sink = e->sink;
  qc.wall_clock = e->wall;
  q = bw_redis_queue_new(&qc, &err);
  assert_non_null(q);
  assert_status(bw_redis_queue_enqueue(q, "a", 1, &size), BW_OK);
  for (i = 0; i < 5; i++) {
    snprintf(item, sizeof(item), "x%d", i);
    assert_status(bw_redis_queue_enqueue(q, item, 2, &size), BW_E_FULL);
  }
  assert_status(bw_redis_queue_dlq_size(q, &size), BW_OK);
  assert_u64_eq(size, 3);
  assert_status(bw_redis_queue_dlq_get(q, 0, &json), BW_OK);
  assert_contains(json, "\"payload\":\"x2\"");
  bw_free(json);
  assert_status(bw_redis_queue_dlq_get(q, 2, &json), BW_OK);
  assert_contains(json, "\"payload\":\"x4\"");
  bw_free(json);
  bw_redis_queue_stats(q, &st);
  assert_u64_eq(st.dead_lettered, 5);
  assert_u64_eq(st.dlq_dropped, 2);
  assert_u64_eq(bwt_count(e->rec, BW_EV_DEAD_LETTERED), 5);
  ev = bwt_nth_of(e->rec, BW_EV_DEAD_LETTERED, 2);
  assert_field_uint(ev, 2, "dlq_dropped", 0);
  ev = bwt_nth_of(e->rec, BW_EV_DEAD_LETTERED, 3);
  assert_field_uint(ev, 2, "dlq_dropped", 1);
  assert_contains(ev->reason, "dropped the oldest 1 DLQ entry (dlq_max 3)");
  bw_redis_queue_free(q);
}

/* The warning re-arms below warn_rearm_threshold, not at the warning level:
 * a queue hovering around 70 % warns once. */
static void test_queue_guard_warning_rearms_below_the_lower_level(
    void **state) {
  bwt_env_t *e = *state;
  bw_redis_queue_t *q = queue_new(e->sink, e, "hover", 10);
  void *got = NULL;
  size_t len = 0;
  uint64_t size = 0;
  int i;
  for (i = 0; i < 7; i++)
    assert_status(bw_redis_queue_enqueue(q, "p", 1, &size), BW_OK);
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  /* 7 -> 6 -> 7: at 6 (not below 60 %) the warning stays armed off. */
  for (i = 0; i < 3; i++) {
    assert_status(bw_redis_queue_dequeue(q, "c", &got, &len), BW_OK);
    bw_free(got);
    assert_status(bw_redis_queue_enqueue(q, "p", 1, &size), BW_OK);
    assert_u64_eq(size, 7);
  }
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  /* Below 6: re-armed; the next crossing warns again. */
  for (i = 0; i < 2; i++) {
    assert_status(bw_redis_queue_dequeue(q, "c", &got, &len), BW_OK);
    bw_free(got);
  }
  assert_status(bw_redis_queue_enqueue(q, "p", 1, &size), BW_OK);
  assert_status(bw_redis_queue_enqueue(q, "p", 1, &size), BW_OK);
  assert_u64_eq(size, 7);
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 2);
  bw_redis_queue_free(q);
}

static void test_queue_guard_bounds_name_the_field(void **state) {
  bw_redis_queue_config_t qc;
  bw_error_t err;
  (void)state;
  bw_redis_queue_config_init(&qc);
  qc.redis.port = g_redis.port;
  qc.dlq_max = 0;
  bwt_prefill_error(&err);
  assert_null(bw_redis_queue_new(&qc, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_true(bwt_error_names(&err, "dlq_max"));
  assert_contains(err.message, "dlq_max must be >= 1");
  bw_redis_queue_config_init(&qc);
  qc.redis.port = g_redis.port;
  qc.warn_rearm_threshold = 0.7; /* = warn_threshold */
  bwt_prefill_error(&err);
  assert_null(bw_redis_queue_new(&qc, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_true(bwt_error_names(&err, "warn_rearm_threshold"));
  assert_contains(err.message,
                  "warn_rearm_threshold must be in [0, "
                  "warn_threshold)");
  qc.warn_rearm_threshold = -0.1;
  bwt_prefill_error(&err);
  assert_null(bw_redis_queue_new(&qc, &err));
  assert_true(bwt_error_names(&err, "warn_rearm_threshold"));
}

/* Payloads are bytes, not strings: one with no NUL after it (and one with
 * NULs inside) goes in and comes out whole. ASan in CI catches a read past
 * its end. */
static void test_queue_guard_payloads_are_binary(void **state) {
  bwt_env_t *e = *state;
  bw_redis_queue_t *q = queue_new(e->sink, e, "binary", 10);
  char *raw = malloc(4);
  assert_non_null(raw);
  memcpy(raw, "ab\0d", 4);
  assert_status(bw_redis_queue_enqueue(q, raw, 4, NULL), BW_OK);
  void *got = NULL;
  size_t len = 0;
  assert_status(bw_redis_queue_dequeue(q, "c1", &got, &len), BW_OK);
  assert_u64_eq(len, 4);
  assert_memory_equal(got, raw, 4);
  assert_status(bw_redis_queue_ack(q, "c1", got, len), BW_OK);
  bw_free(got);
  free(raw);
  bw_redis_queue_free(q);
}

/* Redis answering with an error (here WRONGTYPE: the queue's key holds a
 * string) fails that call only: no redis_unavailable, no reconnect backoff,
 * and the next call works as soon as the key is fixed. */
static void test_an_error_reply_is_not_an_outage(void **state) {
  bwt_env_t *e = *state;
  bw_redis_queue_t *q = queue_new(e->sink, e, "typed", 10);
  redisContext *c = bwt_redis_connect(&g_redis);
  assert_non_null(c);
  redisReply *r = redisCommand(c, "SET bw:{q:typed} not-a-list");
  assert_non_null(r);
  freeReplyObject(r);
  assert_status(bw_redis_queue_enqueue(q, "job", 3, NULL), BW_E_IO);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 0);
  r = redisCommand(c, "DEL bw:{q:typed}");
  assert_non_null(r);
  freeReplyObject(r);
  assert_status(bw_redis_queue_enqueue(q, "job", 3, NULL), BW_OK);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_RESTORED), 0);
  redisFree(c);
  bw_redis_queue_free(q);
}

static void test_queue_guard_boundary_dlq_and_warning(void **state) {
  bwt_env_t *e = *state;
  bw_redis_queue_t *q = queue_new(e->sink, e, "recovery", 10);
  bw_redis_queue_stats_t st;
  uint64_t size = 0;
  char item[32];
  char *json = NULL;
  void *got = NULL;
  size_t len = 0;
  int i;
  for (i = 0; i < 10; i++) {
    snprintf(item, sizeof(item), "thread-%d", i);
    assert_status(bw_redis_queue_enqueue(q, item, strlen(item), &size), BW_OK);
    assert_u64_eq(size, (uint64_t)i + 1);
    /* The warning fires once, at 7 of 10 (70 %). */
    assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), i + 1 >= 7 ? 1 : 0);
  }
  assert_field_uint(bwt_nth_of(e->rec, BW_EV_QUEUE_WARNING, 0), 0, "depth", 7);
  assert_field_uint(bwt_nth_of(e->rec, BW_EV_QUEUE_WARNING, 0), 1, "max_size",
                    10);
  /* Exactly max_size admitted; one more goes to the DLQ. */
  assert_status(bw_redis_queue_enqueue(q, "thread-x", 8, &size), BW_E_FULL);
  assert_u64_eq(size, 10);
  assert_status(bw_redis_queue_size(q, &size), BW_OK);
  assert_u64_eq(size, 10);
  assert_status(bw_redis_queue_dlq_size(q, &size), BW_OK);
  assert_u64_eq(size, 1);
  assert_status(bw_redis_queue_dlq_get(q, 0, &json), BW_OK);
  assert_contains(json, "\"reason\":\"queue_full\"");
  assert_contains(json, "\"payload\":\"thread-x\"");
  assert_contains(json, "reached 10 items");
  assert_contains(json, "\"ts_ms\":");
  bw_free(json);
  assert_status(bw_redis_queue_dlq_get(q, 1, &json), BW_E_NOTFOUND);
  assert_u64_eq(bwt_count(e->rec, BW_EV_DEAD_LETTERED), 1);
  assert_field_str(bwt_nth_of(e->rec, BW_EV_DEAD_LETTERED, 0), 0, "cause",
                   "queue_full");

  /* Dequeue FIFO into a processing list; ack removes for good. */
  assert_status(bw_redis_queue_dequeue(q, "w1", &got, &len), BW_OK);
  assert_int_equal(len, 8);
  assert_memory_equal(got, "thread-0", 8);
  assert_status(bw_redis_queue_ack(q, "w1", got, len), BW_OK);
  assert_status(bw_redis_queue_ack(q, "w1", got, len), BW_E_NOTFOUND);
  bw_free(got);
  /* Unacknowledged items come back to the front, oldest first. */
  assert_status(bw_redis_queue_dequeue(q, "w1", &got, &len), BW_OK);
  bw_free(got);
  assert_status(bw_redis_queue_dequeue(q, "w1", &got, &len), BW_OK);
  bw_free(got);
  assert_status(bw_redis_queue_dequeue(q, "w1", &got, &len), BW_OK);
  bw_free(got);
  assert_status(bw_redis_queue_dequeue(q, "w1", &got, &len), BW_OK);
  bw_free(got);
  assert_status(bw_redis_queue_size(q, &size), BW_OK);
  assert_u64_eq(size, 5); /* below 7: the next crossing warns again */
  {
    uint64_t moved = 0;
    assert_status(bw_redis_queue_recover(q, "w1", &moved), BW_OK);
    assert_u64_eq(moved, 4);
  }
  assert_status(bw_redis_queue_size(q, &size), BW_OK);
  assert_u64_eq(size, 9);
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 2);
  assert_status(bw_redis_queue_dequeue(q, "w2", &got, &len), BW_OK);
  assert_memory_equal(got, "thread-1", 8);
  bw_free(got);
  bw_redis_queue_stats(q, &st);
  assert_u64_eq(st.admitted, 10);
  assert_u64_eq(st.dead_lettered, 1);
  assert_u64_eq(st.warnings, 2);
  assert_u64_eq(st.acked, 1);
  assert_u64_eq(st.recovered, 4);
  bw_redis_queue_free(q);
}

#define PRODUCERS 4
#define PER_PRODUCER 25

typedef struct producer_s {
  bw_redis_queue_t *q;
  pthread_barrier_t *bar;
  int admitted, dlq, other;
} producer_t;

static void *producer(void *arg) {
  producer_t *p = arg;
  int i;
  pthread_barrier_wait(p->bar);
  for (i = 0; i < PER_PRODUCER; i++) {
    int rc = bw_redis_queue_enqueue(p->q, "job", 3, NULL);
    if (rc == BW_OK)
      p->admitted++;
    else if (rc == BW_E_FULL)
      p->dlq++;
    else
      p->other++;
  }
  return NULL;
}

static void test_queue_guard_exact_under_concurrent_producers(void **state) {
  bwt_env_t *e = *state;
  producer_t pr[PRODUCERS];
  pthread_t th[PRODUCERS];
  pthread_barrier_t bar;
  int i, admitted = 0, dlq = 0, other = 0;
  uint64_t size = 0;
  pthread_barrier_init(&bar, NULL, PRODUCERS);
  for (i = 0; i < PRODUCERS; i++) {
    /* One connection each: the script, not a client lock, keeps the bound. */
    pr[i].q = queue_new(NULL, e, "shared", 60);
    pr[i].bar = &bar;
    pr[i].admitted = pr[i].dlq = pr[i].other = 0;
    assert_int_equal(pthread_create(&th[i], NULL, producer, &pr[i]), 0);
  }
  for (i = 0; i < PRODUCERS; i++) {
    pthread_join(th[i], NULL);
    admitted += pr[i].admitted;
    dlq += pr[i].dlq;
    other += pr[i].other;
  }
  assert_int_equal(other, 0);
  assert_int_equal(admitted, 60);
  assert_int_equal(dlq, PRODUCERS * PER_PRODUCER - 60);
  assert_status(bw_redis_queue_size(pr[0].q, &size), BW_OK);
  assert_u64_eq(size, 60);
  assert_status(bw_redis_queue_dlq_size(pr[0].q, &size), BW_OK);
  assert_u64_eq(size, PRODUCERS * PER_PRODUCER - 60);
  /* One warning in total for the one crossing, whoever crossed it. */
  {
    uint64_t warnings = 0;
    for (i = 0; i < PRODUCERS; i++) {
      bw_redis_queue_stats_t st;
      bw_redis_queue_stats(pr[i].q, &st);
      warnings += st.warnings;
    }
    assert_u64_eq(warnings, 1);
  }
  for (i = 0; i < PRODUCERS; i++)
    bw_redis_queue_free(pr[i].q);
  pthread_barrier_destroy(&bar);
}

/* ---- idempotency ----------------------------------------------------- */

static bw_redis_idem_t *idem_new(void) {
  bw_redis_idem_config_t ic;
  bw_error_t err;
  bw_redis_idem_t *d;
  bw_redis_idem_config_init(&ic);
  ic.redis.port = g_redis.port;
  ic.name = "book_hotel";
  d = bw_redis_idem_new(&ic, &err);
  if (d == NULL) {
    print_error("bw_redis_idem_new: %s\n", err.message);
    fail();
  }
  return d;
}

typedef struct beginner_s {
  bw_redis_idem_t *d;
  pthread_barrier_t *bar;
  int rc;
  bw_idem_state_t st;
} beginner_t;

static void *beginner(void *arg) {
  beginner_t *b = arg;
  pthread_barrier_wait(b->bar);
  b->rc =
      bw_redis_idem_begin(b->d, "h42:2026-08-07", 60000, &b->st, NULL, NULL);
  return NULL;
}

static void test_idempotency_one_new_among_concurrent_begins(void **state) {
  beginner_t bs[2];
  pthread_t th[2];
  pthread_barrier_t bar;
  bw_idem_state_t st;
  void *res = NULL;
  size_t len = 0;
  int i, news = 0, inprog = 0;
  (void)state;
  pthread_barrier_init(&bar, NULL, 2);
  for (i = 0; i < 2; i++) {
    bs[i].d = idem_new();
    bs[i].bar = &bar;
    bs[i].rc = -100;
    assert_int_equal(pthread_create(&th[i], NULL, beginner, &bs[i]), 0);
  }
  for (i = 0; i < 2; i++) {
    pthread_join(th[i], NULL);
    assert_status(bs[i].rc, BW_OK);
    news += bs[i].st == BW_IDEM_NEW;
    inprog += bs[i].st == BW_IDEM_IN_PROGRESS;
  }
  assert_int_equal(news, 1);
  assert_int_equal(inprog, 1);
  /* Done: later begins get the stored result. */
  assert_status(
      bw_redis_idem_complete(bs[0].d, "h42:2026-08-07", "bk-7", 4, 60000),
      BW_OK);
  assert_status(
      bw_redis_idem_begin(bs[1].d, "h42:2026-08-07", 60000, &st, &res, &len),
      BW_OK);
  assert_int_equal(st, BW_IDEM_DONE);
  assert_int_equal(len, 4);
  assert_memory_equal(res, "bk-7", 4);
  bw_free(res);
  /* A DONE record is not abandoned; an in-progress claim is. */
  assert_status(bw_redis_idem_abandon(bs[1].d, "h42:2026-08-07"),
                BW_E_NOTFOUND);
  assert_status(bw_redis_idem_begin(bs[1].d, "other", 60000, &st, NULL, NULL),
                BW_OK);
  assert_int_equal(st, BW_IDEM_NEW);
  assert_status(bw_redis_idem_abandon(bs[1].d, "other"), BW_OK);
  assert_status(bw_redis_idem_begin(bs[0].d, "other", 60000, &st, NULL, NULL),
                BW_OK);
  assert_int_equal(st, BW_IDEM_NEW);
  assert_status(bw_redis_idem_begin(bs[0].d, "", 60000, &st, NULL, NULL),
                BW_E_INVAL);
  assert_string_equal(bw_idem_state_name(BW_IDEM_IN_PROGRESS), "in_progress");
  for (i = 0; i < 2; i++)
    bw_redis_idem_free(bs[i].d);
  pthread_barrier_destroy(&bar);
}

/* ---- the store.h interfaces on Redis: the behavioural table of
 * store_behaviour.h (the same as the memory and SQLite backends, on the
 * store's manual clock), plus two handles on one queue ----------------- */

static bw_redis_config_t g_rc; /* the connection to g_redis */

static int rs_setup(bws_env_t *e) {
  (void)e;
  bw_redis_config_init(&g_rc);
  g_rc.port = g_redis.port;
  return bwt_redis_flushall(&g_redis);
}

static bw_queue_store_t *rs_queue(bws_env_t *e,
                                  const bw_queue_store_config_t *cfg,
                                  bw_error_t *err) {
  (void)e;
  return bw_redis_queue_store_new(cfg, &g_rc, err);
}

static bw_idem_store_t *rs_idem(bws_env_t *e, const bw_idem_config_t *cfg,
                                bw_error_t *err) {
  (void)e;
  return bw_redis_idem_store_new(cfg, &g_rc, err);
}

/* Redis expires idempotency records on its own: stats.keys stays 0. */
static bws_backend_t redis_backend = {"redis",  false,   rs_setup,
                                      rs_queue, rs_idem, NULL};

static void test_store_queue_warning_and_two_handles(void **state) {
  bws_env_t *e = *state;
  bw_queue_store_config_t cfg;
  bw_queue_store_t *q, *q2;
  bw_stored_item_t it[10];
  size_t n = 0, i;
  const bwt_event_t *ev;
  bw_error_t err;
  qconfig(e, &cfg);
  cfg.max_size = 10; /* warn at 7, re-arm below 6 */
  q = make_queue(e, &cfg);
  cfg.sink = NULL;
  q2 = bw_redis_queue_store_new(&cfg, &g_rc, &err); /* another process */
  assert_non_null(q2);
  for (i = 0; i < 6; i++)
    put(i % 2 ? q : q2, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 0);
  put(q, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  ev = bwt_nth_of(e->rec, BW_EV_QUEUE_WARNING, 0);
  assert_string_equal(ev->reason, "queue at 70% of capacity (7/10)");
  assert_field_uint(ev, 0, "depth", 7);
  assert_true(qstats(q2).warning);
  put(q2, "x");
  put(q, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  /* q2 claims, q acks: one shared queue. */
  assert_status(bw_queue_store_claim(q2, 10, 1000, it, &n), BW_OK);
  assert_u64_eq(n, 9);
  for (i = 0; i < 3; i++)
    assert_status(bw_queue_store_ack(q, it[i].id, it[i].receipt), BW_OK);
  put(q, "x"); /* 7 again without a re-arm: silent */
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 1);
  for (i = 3; i < 5; i++)
    assert_status(bw_queue_store_ack(q, it[i].id, it[i].receipt), BW_OK);
  assert_false(qstats(q).warning);
  put(q, "x");
  put(q, "x");
  assert_u64_eq(bwt_count(e->rec, BW_EV_QUEUE_WARNING), 2);
  assert_u64_eq(qstats(q).warnings, 2);
  /* The guard holds across handles. */
  put(q2, "x");
  put(q2, "x");
  put(q2, "x");
  assert_status(bw_queue_store_enqueue(q, "y", 1, NULL), BW_E_FULL);
  assert_u64_eq(qstats(q2).depth, 10);
  bw_stored_items_clear(it, n);
  bw_queue_store_free(q2);
}

/* ---- out of memory ----------------------------------------------------- */

/* Each scenario returns BW_OK or BW_E_NOMEM (anything else fails). */
static int oom_breaker(void) {
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_error_t err;
  bw_permit_t p;
  int rc;
  bw_redis_breaker_config_init(&cfg);
  cfg.breaker.name = "oom";
  cfg.redis.port = g_redis.port;
  cfg.sync_thread = false;
  b = bw_redis_breaker_new(&cfg, &err);
  if (b == NULL) return err.code;
  if (bw_redis_breaker_acquire(b, &p) == BW_OK)
    bw_redis_breaker_release(b, &p, BW_FAILURE);
  rc = bw_redis_breaker_sync(b);
  bw_redis_breaker_free(b);
  return rc;
}

static int oom_queue(void) {
  bw_redis_queue_config_t qc;
  bw_redis_queue_t *q;
  bw_error_t err;
  void *got = NULL;
  size_t len = 0;
  char *json = NULL;
  int rc;
  bw_redis_queue_config_init(&qc);
  qc.redis.port = g_redis.port;
  qc.name = "oomq";
  qc.max_size = 1;
  q = bw_redis_queue_new(&qc, &err);
  if (q == NULL) return err.code;
  (void)bw_redis_queue_enqueue(q, "a", 1, NULL);
  (void)bw_redis_queue_enqueue(q, "b", 1, NULL); /* to the DLQ */
  rc = bw_redis_queue_dlq_get(q, 0, &json);
  bw_free(json);
  if (rc == BW_OK) rc = bw_redis_queue_dequeue(q, "c", &got, &len);
  if (rc == BW_OK) rc = bw_redis_queue_ack(q, "c", got, len);
  bw_free(got);
  if (rc == BW_E_NOTFOUND) rc = BW_OK;
  bw_redis_queue_free(q);
  return rc;
}

static int oom_stores(void) {
  bw_queue_store_config_t qc;
  bw_idem_config_t ic;
  bw_redis_config_t rc;
  bw_queue_store_t *q;
  bw_idem_store_t *s;
  bw_stored_item_t it[2];
  bw_dlq_record_t d[2];
  bw_idem_record_t r;
  bw_error_t err;
  size_t n = 0;
  int st;
  bw_redis_config_init(&rc);
  rc.port = g_redis.port;
  bw_queue_store_config_init(&qc);
  qc.name = "oomqs";
  qc.max_size = 1;
  q = bw_redis_queue_store_new(&qc, &rc, &err);
  if (q == NULL) return err.code;
  (void)bw_queue_store_enqueue(q, "a", 1, NULL);
  st = bw_queue_store_enqueue(q, "b", 1, NULL);
  if (st == BW_E_FULL) st = BW_OK;
  if (st == BW_OK) st = bw_queue_store_claim(q, 2, 1000, it, &n);
  if (st == BW_OK) {
    if (n == 1) st = bw_queue_store_ack(q, it[0].id, it[0].receipt);
    bw_stored_items_clear(it, n);
  }
  if (st == BW_OK) st = bw_queue_store_dlq_list(q, 0, 2, d, &n);
  if (st == BW_OK) bw_dlq_records_clear(d, n);
  bw_queue_store_free(q);
  if (st != BW_OK) return st;
  bw_idem_config_init(&ic);
  s = bw_redis_idem_store_new(&ic, &rc, &err);
  if (s == NULL) return err.code;
  memset(&r, 0, sizeof(r));
  st = bw_idem_begin(s, "k", &r);
  if (st == BW_OK && r.state == BW_IDEM_NEW)
    st = bw_idem_complete(s, "k", r.token, 200, "res", 3);
  bw_idem_record_clear(&r);
  if (st == BW_OK) st = bw_idem_begin(s, "k", &r);
  bw_idem_record_clear(&r);
  bw_idem_store_free(s);
  return st;
}

/* One of the scenarios above, each run on an emptied server (FLUSHALL goes
 * through the fixture's own hiredis context, not breakwater's allocator). */
typedef struct oom_case_s {
  int (*run)(void);
} oom_case_t;

static int on_an_empty_server(void *ctx) {
  const oom_case_t *c = ctx;
  assert_int_equal(bwt_redis_flushall(&g_redis), 0);
  return c->run();
}

static void test_out_of_memory_fails_cleanly(void **state) {
  oom_case_t cases[] = {{oom_breaker}, {oom_queue}, {oom_stores}};
  size_t k;
  (void)state;
  for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
    assert_true(oom_walk_lenient(on_an_empty_server, &cases[k], false, NULL) <
                1000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unsupported_options_name_the_field,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_wrong_password_is_a_clear_error,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_unreachable_redis_starts_in_fallback,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_one_seed_in_two_processes_still_counts_both, bwt_redis_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(test_counts_add_up_across_breakers,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_probe_failure_reopens,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_time_window_ratio_across_breakers,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_limit_interface, bwt_redis_setup,
                                      bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_pipeline_breaker_step_refuses_when_shared_open, bwt_redis_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_pipeline_behaviour_through_the_breaker_interface,
          bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_shared_break_ending_in_an_outage_probes_locally, bwt_redis_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(test_kill_and_restart_conserves_counts,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_hung_redis_lost_reply_is_not_double_counted, bwt_redis_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(test_forked_workers_share_one_breaker,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_an_error_reply_is_not_an_outage,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_queue_guard_payloads_are_binary,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_queue_guard_dlq_is_bounded,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_queue_guard_warning_rearms_below_the_lower_level,
          bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_queue_guard_bounds_name_the_field,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_queue_guard_boundary_dlq_and_warning,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_queue_guard_exact_under_concurrent_producers, bwt_redis_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_idempotency_one_new_among_concurrent_begins, bwt_redis_setup,
          bwt_teardown),
      BWS_TABLE(&redis_backend),
      BWS_TEST(test_store_queue_warning_and_two_handles, &redis_backend),
      cmocka_unit_test_setup_teardown(test_out_of_memory_fails_cleanly,
                                      bwt_redis_setup, bwt_teardown),
  };
  /* Counting hooks (pass-through unless a test asks for a failure), before
   * any object exists. */
  oom_install();
  return cmocka_run_group_tests(tests, bwt_redis_group_setup,
                                bwt_redis_group_teardown);
}

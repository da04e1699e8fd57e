/* The shared Redis breaker synced by a libevent loop
 * (bw_redis_breaker_new_async) against a real, private redis-server
 * (tests/redis_fixture.h; a missing redis-server fails, never skips).
 *
 * - Two async breakers on one event_base and a threaded one share state:
 *   failures counted by the async and the threaded breaker open all three
 *   within a bounded number of loop steps.
 * - redis-server SIGKILLed mid-run and restarted with its AOF: exactly one
 *   redis_unavailable, the local fallback keeps deciding, exactly one
 *   redis_restored, and the calls recorded in Redis equal the calls made.
 * - A hung server (SIGSTOP): the reply deadline (a timer) declares it
 *   unavailable; after SIGCONT the batch is re-sent under its sequence and
 *   nothing is counted twice.
 * - Free while a command is pending, and free while reconnecting: no crash,
 *   nothing leaked (ASan), nothing lost or doubled.
 * - AUTH and SELECT are pipelined on every reconnect: a server that
 *   changed its password keeps the breaker in fallback; back to the right
 *   one, it is restored and counts land in the configured db.
 * - Bad configuration names the field; an allocation failure anywhere in
 *   bw_redis_breaker_new_async fails cleanly (BW_E_NOMEM, nothing leaked).
 *
 * The loop is driven in steps of a loopexit timer, each loop bounded in
 * count; assertions are on counts and states, never on timings. Breakers
 * use a manual clock (use_redis_time = false), so their state machine does
 * not move with real time; only the loop's timers do. */
#include <event2/event.h>

#include "breakwater/store_redis.h"
#include "bw_test.h"
#include "oom.h"
#include "redis_test.h"

#ifdef BW_REDIS_ASYNC

static void ra_config(const bwt_env_t *e, bw_redis_breaker_config_t *cfg,
                      const bwt_redis_t *srv, const char *name, uint64_t seed) {
  bwt_redis_breaker_config(e, cfg, srv, name);
  cfg->breaker.failure_threshold = 5;
  cfg->breaker.break_ms = 60000;
  cfg->redis.backoff_initial_ms = 10;
  cfg->redis.backoff_max_ms = 40;
  cfg->sync_interval_ms = 10;
  cfg->seed = seed; /* the "process" identity derives from it */
}

static bw_redis_breaker_t *ra_new(const bw_redis_breaker_config_t *cfg,
                                  struct event_base *base) {
  bw_error_t err;
  bw_redis_breaker_t *b;
  memset(&err, 0, sizeof(err));
  b = bw_redis_breaker_new_async(cfg, base, &err);
  if (b == NULL) {
    print_error("bw_redis_breaker_new_async: %s [%s] %s\n",
                bw_err_name(err.code), err.field, err.message);
    fail();
  }
  return b;
}

/* Runs the loop until a loopexit timer `ms` of real time away (one bounded
 * step). */
static void loop_step(struct event_base *base, long ms) {
  struct timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  assert_int_equal(event_base_loopexit(base, &tv), 0);
  assert_true(event_base_dispatch(base) >= 0);
}

/* Steps of 10 ms until `cond` holds or `max` steps ran. */
#define LOOP_UNTIL(base, cond, max)                          \
  do {                                                       \
    int loop_i_;                                             \
    for (loop_i_ = 0; loop_i_ < (max) && !(cond); loop_i_++) \
      loop_step((base), 10);                                 \
  } while (0)

static struct event_base *new_base(void) {
  struct event_base *base = event_base_new();
  assert_non_null(base);
  return base;
}

/* ---- bad input --------------------------------------------------------- */

static void test_bad_config_names_the_field(void **state) {
  bwt_env_t *e = *state;
  struct event_base *base = new_base();
  bw_redis_breaker_config_t cfg;
  bw_error_t err;

  /* One sync driver: the loop or the thread, not both. */
  ra_config(e, &cfg, &g_redis, "cfg", 1);
  cfg.sync_thread = true;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new_async(&cfg, base, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_true(bwt_error_names(&err, "sync_thread"));

  ra_config(e, &cfg, &g_redis, "cfg", 1);
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new_async(&cfg, NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_true(bwt_error_names(&err, "base"));

  /* The breaker's own rules are checked as by bw_redis_breaker_new. */
  ra_config(e, &cfg, &g_redis, "cfg", 1);
  cfg.breaker.slow_call_ms = 100;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new_async(&cfg, base, &err));
  assert_true(bwt_error_names(&err, "slow_call_ms"));

  ra_config(e, &cfg, &g_redis, "cfg", 1);
  cfg.redis.command_timeout_ms = 0;
  bwt_prefill_error(&err);
  assert_null(bw_redis_breaker_new_async(&cfg, base, &err));
  assert_true(bwt_error_names(&err, "redis.command_timeout_ms"));

  assert_null(bw_redis_breaker_new_async(NULL, base, &err));
  assert_status(err.code, BW_E_INVAL);
  event_base_free(base);
}

/* ---- shared state ------------------------------------------------------ */

static void test_async_and_threaded_breakers_share_state(void **state) {
  bwt_env_t *e = *state;
  struct event_base *base = new_base();
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a, *b, *t;
  bw_redis_breaker_stats_t sa, sb, st;
  bw_permit_t p;
  bw_error_t err;

  ra_config(e, &cfg, &g_redis, "shared", 11);
  a = ra_new(&cfg, base);
  ra_config(e, &cfg, &g_redis, "shared", 12);
  b = ra_new(&cfg, base);
  /* A third "process" synced by its own thread (no sink: it would record
   * from another thread). */
  ra_config(e, &cfg, &g_redis, "shared", 13);
  cfg.breaker.sink = NULL;
  cfg.sync_thread = true;
  t = bw_redis_breaker_new(&cfg, &err);
  assert_non_null(t);

  /* The loop syncs: bw_redis_breaker_sync is refused for a loop breaker. */
  assert_status(bw_redis_breaker_sync(a), BW_E_INVAL);

  /* 3 failures on the async breaker, 2 on the threaded one: 5 consecutive
   * across processes, the threshold. */
  bwt_rb_calls(a, BW_FAILURE, 3);
  LOOP_UNTIL(base, bwt_rb_stats(a).pending_calls == 0, 200);
  assert_u64_eq(bwt_rb_stats(a).pending_calls, 0);
  assert_state(bw_redis_breaker_state(b), BW_CLOSED);
  bwt_rb_calls(t, BW_FAILURE, 2);

  /* Bounded: every breaker learns OPEN at one of its next syncs. */
  LOOP_UNTIL(base,
             bw_redis_breaker_state(a) == BW_OPEN &&
                 bw_redis_breaker_state(b) == BW_OPEN &&
                 bw_redis_breaker_state(t) == BW_OPEN,
             300);
  assert_state(bw_redis_breaker_state(a), BW_OPEN);
  assert_state(bw_redis_breaker_state(b), BW_OPEN);
  assert_state(bw_redis_breaker_state(t), BW_OPEN);
  assert_status(bw_redis_breaker_acquire(b, &p), BW_E_OPEN);
  assert_status(bw_redis_breaker_acquire(a, &p), BW_E_OPEN);

  sa = bwt_rb_stats(a);
  sb = bwt_rb_stats(b);
  st = bwt_rb_stats(t);
  assert_false(sa.fallback);
  assert_false(sb.fallback);
  assert_u64_eq(sa.unavailable_events, 0);
  assert_u64_eq(sb.unavailable_events, 0);
  assert_u64_eq(sa.transitions_seen, 1);
  assert_u64_eq(sb.transitions_seen, 1);
  assert_u64_eq(sa.generation, sb.generation);
  assert_u64_eq(sa.generation, st.generation);
  assert_u64_eq(sa.failures, 3);
  assert_u64_eq(sb.calls, 0);
  assert_u64_eq(sb.rejected, 1);
  assert_true(sa.syncs >= 2); /* the first (blocking) and the loop's */
  assert_true(sb.syncs >= 2);
  /* One circuit_opened per async breaker (same sink), adopted from Redis. */
  assert_u64_eq(bwt_count(e->rec, BW_EV_CIRCUIT_OPENED), 2);
  assert_field_str(bwt_nth_of(e->rec, BW_EV_CIRCUIT_OPENED, 0), 1, "source",
                   "redis");
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 0);
  bw_redis_breaker_free(t);
  /* Free pushes what is pending (the rejections). */
  bw_redis_breaker_free(a);
  bw_redis_breaker_free(b);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("shared"), "tf"),
                5);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("shared"), "tc"),
                5);
  assert_i64_eq(bwt_redis_hget_ll(&g_redis, BWT_RB_KEY_STATE("shared"), "tr"),
                2);
  event_base_free(base);
}

/* ---- faults ------------------------------------------------------------ */

static void test_kill_and_restart_one_event_each_exact_totals(void **state) {
  bwt_env_t *e = *state;
  struct event_base *base = new_base();
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a;
  bw_redis_breaker_stats_t s;
  bw_permit_t p;
  uint64_t failures_before;
  bwt_redis_start_or_fail(&srv, NULL, true);
  ra_config(e, &cfg, &srv, "fault", 21);
  a = ra_new(&cfg, base);
  bwt_rb_calls(a, BW_SUCCESS, 10);
  bwt_rb_calls(a, BW_FAILURE, 2);
  LOOP_UNTIL(base, bwt_rb_stats(a).pending_calls == 0, 200);
  assert_u64_eq(bwt_rb_stats(a).pending_calls, 0);
  bwt_rb_calls(a, BW_SUCCESS, 3); /* counted, not yet pushed when Redis dies */

  bwt_redis_kill(&srv);
  bwt_rb_calls(a, BW_SUCCESS, 5); /* decisions stay local and instant */
  LOOP_UNTIL(base, bwt_rb_stats(a).fallback, 300);
  s = bwt_rb_stats(a);
  assert_true(s.fallback);
  assert_u64_eq(s.unavailable_events, 1);
  /* The local fallback applies the rule to local counts. */
  bwt_rb_calls(a, BW_FAILURE, 5);
  assert_status(bw_redis_breaker_acquire(a, &p), BW_E_OPEN);
  assert_state(bw_redis_breaker_state(a), BW_OPEN);
  /* Reconnect attempts on the loop (backoff <= 40 ms) fail quietly. */
  failures_before = bwt_rb_stats(a).sync_failures;
  LOOP_UNTIL(base, bwt_rb_stats(a).sync_failures >= failures_before + 3, 300);
  assert_true(bwt_rb_stats(a).sync_failures >= failures_before + 3);
  assert_u64_eq(bwt_rb_stats(a).unavailable_events, 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_RESTORED), 0);

  bwt_redis_restart_or_fail(&srv);
  LOOP_UNTIL(base,
             !bwt_rb_stats(a).fallback && bwt_rb_stats(a).pending_calls == 0,
             500);
  s = bwt_rb_stats(a);
  assert_false(s.fallback);
  assert_u64_eq(s.restored_events, 1);
  assert_u64_eq(s.unavailable_events, 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_RESTORED), 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  /* Conservation: every call recorded in Redis exactly once (the AOF kept
   * what was pushed before the kill; the restarted server had no script,
   * so NOSCRIPT -> EVAL ran too). */
  assert_u64_eq(s.calls, 25);
  assert_u64_eq(s.pending_calls, 0);
  assert_u64_eq(s.shared_total_calls, 25);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("fault"), "tc"), 25);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("fault"), "tf"), 7);
  assert_state(bw_redis_breaker_state(a), BW_CLOSED);
  /* Later syncs do not report anything new. */
  LOOP_UNTIL(base, bwt_rb_stats(a).syncs >= s.syncs + 3, 200);
  assert_true(bwt_rb_stats(a).syncs >= s.syncs + 3);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_RESTORED), 1);
  /* Free pushes what the loop has not synced yet, after the outage too. */
  bwt_rb_calls(a, BW_SUCCESS, 4);
  bw_redis_breaker_free(a);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("fault"), "tc"), 29);
  event_base_free(base);
  bwt_redis_cleanup(&srv);
}

static void test_hung_redis_hits_the_reply_deadline(void **state) {
  bwt_env_t *e = *state;
  struct event_base *base = new_base();
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a;
  bw_redis_breaker_stats_t s;
  bwt_redis_start_or_fail(&srv, NULL, false);
  ra_config(e, &cfg, &srv, "hung", 31);
  /* The defaults (200 ms): a slow, shared machine does not time out a
   * healthy server, and the frozen one still hits the deadline. */
  a = ra_new(&cfg, base);
  bwt_rb_calls(a, BW_SUCCESS, 4);
  bwt_rb_calls(a, BW_FAILURE, 1);
  bwt_redis_pause(&srv);
  /* The script is sent and never answered: the deadline timer fires. */
  LOOP_UNTIL(base, bwt_rb_stats(a).fallback, 300);
  s = bwt_rb_stats(a);
  assert_true(s.fallback);
  assert_u64_eq(s.unavailable_events, 1);
  assert_u64_eq(s.pending_calls, 5);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  assert_contains(bwt_nth_of(e->rec, BW_EV_REDIS_UNAVAILABLE, 0)->reason,
                  "_timeout_ms");
  bwt_rb_calls(a, BW_SUCCESS, 2);
  bwt_redis_resume(&srv);
  LOOP_UNTIL(base,
             !bwt_rb_stats(a).fallback && bwt_rb_stats(a).pending_calls == 0,
             500);
  s = bwt_rb_stats(a);
  assert_false(s.fallback);
  assert_u64_eq(s.restored_events, 1);
  assert_u64_eq(s.unavailable_events, 1);
  /* Whether or not the frozen server ran the lost batch, it counts once. */
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("hung"), "tc"), 7);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("hung"), "tf"), 1);
  assert_u64_eq(s.shared_total_calls, 7);
  bw_redis_breaker_free(a);
  event_base_free(base);
  bwt_redis_cleanup(&srv);
}

static void test_auth_and_select_on_every_reconnect(void **state) {
  bwt_env_t *e = *state;
  struct event_base *base = new_base();
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a;
  bw_redis_breaker_stats_t s;
  uint64_t failures_before;
  bwt_redis_start_or_fail(&srv, "pw-one", true);
  ra_config(e, &cfg, &srv, "authdb", 61);
  cfg.redis.password = "pw-one";
  cfg.redis.db = 3;
  a = ra_new(&cfg, base);
  bwt_rb_calls(a, BW_SUCCESS, 6);
  LOOP_UNTIL(base, bwt_rb_stats(a).pending_calls == 0, 200);
  assert_u64_eq(bwt_rb_stats(a).pending_calls, 0);
  assert_i64_eq(bwt_redis_hget_ll_db(&srv, 3, BWT_RB_KEY_STATE("authdb"), "tc"),
                6);
  assert_i64_eq(bwt_redis_hget_ll_db(&srv, 0, BWT_RB_KEY_STATE("authdb"), "tc"),
                0);

  /* The server comes back wanting another password: AUTH fails on each
   * reconnect, the breaker stays in fallback, quietly. */
  bwt_redis_kill(&srv);
  snprintf(srv.password, sizeof(srv.password), "%s", "pw-two");
  bwt_redis_restart_or_fail(&srv);
  bwt_rb_calls(a, BW_FAILURE, 2);
  LOOP_UNTIL(base, bwt_rb_stats(a).fallback, 300);
  failures_before = bwt_rb_stats(a).sync_failures;
  LOOP_UNTIL(base, bwt_rb_stats(a).sync_failures >= failures_before + 3, 300);
  s = bwt_rb_stats(a);
  assert_true(s.sync_failures >= failures_before + 3);
  assert_true(s.fallback);
  assert_u64_eq(s.unavailable_events, 1);
  assert_u64_eq(s.restored_events, 0);
  assert_u64_eq(s.pending_calls, 2);

  /* The right password again: restored once, the counts in db 3. */
  bwt_redis_kill(&srv);
  snprintf(srv.password, sizeof(srv.password), "%s", "pw-one");
  bwt_redis_restart_or_fail(&srv);
  LOOP_UNTIL(base,
             !bwt_rb_stats(a).fallback && bwt_rb_stats(a).pending_calls == 0,
             500);
  s = bwt_rb_stats(a);
  assert_false(s.fallback);
  assert_u64_eq(s.restored_events, 1);
  assert_u64_eq(s.unavailable_events, 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_RESTORED), 1);
  assert_i64_eq(bwt_redis_hget_ll_db(&srv, 3, BWT_RB_KEY_STATE("authdb"), "tc"),
                8);
  assert_i64_eq(bwt_redis_hget_ll_db(&srv, 3, BWT_RB_KEY_STATE("authdb"), "tf"),
                2);
  assert_i64_eq(bwt_redis_hget_ll_db(&srv, 0, BWT_RB_KEY_STATE("authdb"), "tc"),
                0);
  bw_redis_breaker_free(a);
  event_base_free(base);
  bwt_redis_cleanup(&srv);
}

/* ---- lifetime ---------------------------------------------------------- */

static void test_free_with_a_command_pending(void **state) {
  bwt_env_t *e = *state;
  struct event_base *base = new_base();
  bwt_redis_t srv;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a;
  bw_redis_breaker_stats_t s;
  uint64_t syncs;
  bwt_redis_start_or_fail(&srv, NULL, false);
  ra_config(e, &cfg, &srv, "pending", 41);
  /* Far beyond the 100 ms of loop below: the reply stays pending. */
  cfg.redis.command_timeout_ms = 5000;
  a = ra_new(&cfg, base);
  syncs = bwt_rb_stats(a).syncs;
  bwt_rb_calls(a, BW_SUCCESS, 7);
  bwt_rb_calls(a, BW_FAILURE, 2);
  bwt_redis_pause(&srv);
  /* Ten sync intervals: the first tick sends the script; no reply. */
  loop_step(base, 100);
  s = bwt_rb_stats(a);
  assert_u64_eq(s.syncs, syncs);
  assert_u64_eq(s.sync_failures, 0);
  assert_false(s.fallback);
  assert_u64_eq(s.pending_calls, 9);
  /* The reply may now arrive, but nobody reads it: free drops the pending
   * callback (hiredis runs it from redisAsyncFree), then pushes the batch
   * again under its sequence. */
  bwt_redis_resume(&srv);
  bw_redis_breaker_free(a);
  /* The loop has nothing of the breaker's left. */
  assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 1);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("pending"), "tc"), 9);
  assert_i64_eq(bwt_redis_hget_ll(&srv, BWT_RB_KEY_STATE("pending"), "tf"), 2);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 0);
  event_base_free(base);
  bwt_redis_cleanup(&srv);
}

static void test_unreachable_falls_back_and_frees_while_reconnecting(
    void **state) {
  bwt_env_t *e = *state;
  struct event_base *base = new_base();
  bwt_redis_t dead;
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *a;
  bw_redis_breaker_stats_t s;
  bw_permit_t p;
  memset(&dead, 0, sizeof(dead));
  dead.port = bwt__free_port(); /* nobody listens there */
  assert_true(dead.port > 0);
  ra_config(e, &cfg, &dead, "unreachable", 51);
  a = ra_new(&cfg, base);
  s = bwt_rb_stats(a);
  assert_true(s.fallback);
  assert_u64_eq(s.unavailable_events, 1);
  /* Reconnects on the loop keep failing, with no new event. */
  LOOP_UNTIL(base, bwt_rb_stats(a).sync_failures >= 4, 300);
  s = bwt_rb_stats(a);
  assert_true(s.sync_failures >= 4);
  assert_u64_eq(s.unavailable_events, 1);
  assert_u64_eq(bwt_count(e->rec, BW_EV_REDIS_UNAVAILABLE), 1);
  /* The local breaker decides. */
  bwt_rb_calls(a, BW_FAILURE, 5);
  assert_status(bw_redis_breaker_acquire(a, &p), BW_E_OPEN);
  /* Free between attempts, and again right after an attempt started. */
  bw_redis_breaker_free(a);
  a = ra_new(&cfg, base);
  loop_step(base, 15);
  bw_redis_breaker_free(a);
  assert_int_equal(event_base_loop(base, EVLOOP_NONBLOCK), 1);
  event_base_free(base);
}

/* Creates, syncs once on the loop and frees an async breaker. */
static struct event_base *g_oom_base;
static int oom_async_breaker(void *ctx) {
  bw_redis_breaker_config_t cfg;
  bw_redis_breaker_t *b;
  bw_error_t err;
  bw_permit_t p;
  int rc;
  (void)ctx;
  bw_redis_breaker_config_init(&cfg);
  cfg.breaker.name = "oom";
  cfg.redis.port = g_redis.port;
  cfg.sync_interval_ms = 5;
  cfg.sync_thread = false;
  cfg.seed = 71;
  memset(&err, 0, sizeof(err));
  b = bw_redis_breaker_new_async(&cfg, g_oom_base, &err);
  rc = b != NULL ? BW_OK : err.code;
  if (b != NULL) {
    if (bw_redis_breaker_acquire(b, &p) == BW_OK)
      (void)bw_redis_breaker_release(b, &p, BW_SUCCESS);
    loop_step(g_oom_base, 10);
    bw_redis_breaker_free(b);
  }
  /* Nothing of a freed (or never made) breaker stays on the loop. */
  assert_int_equal(event_base_loop(g_oom_base, EVLOOP_NONBLOCK), 1);
  return rc;
}

static void test_out_of_memory_fails_cleanly(void **state) {
  (void)state;
  g_oom_base = new_base();
  assert_true(oom_walk_lenient(oom_async_breaker, NULL, false, NULL) < 1000);
  event_base_free(g_oom_base);
  g_oom_base = NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_bad_config_names_the_field,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_async_and_threaded_breakers_share_state, bwt_redis_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_kill_and_restart_one_event_each_exact_totals, bwt_redis_setup,
          bwt_teardown),
      cmocka_unit_test_setup_teardown(test_hung_redis_hits_the_reply_deadline,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_auth_and_select_on_every_reconnect,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_free_with_a_command_pending,
                                      bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(
          test_unreachable_falls_back_and_frees_while_reconnecting,
          bwt_redis_setup, bwt_teardown),
      cmocka_unit_test_setup_teardown(test_out_of_memory_fails_cleanly,
                                      bwt_redis_setup, bwt_teardown),
  };
  /* Counting hooks (pass-through unless a test asks for a failure), before
   * any object exists. */
  oom_install();
  return cmocka_run_group_tests(tests, bwt_redis_group_setup,
                                bwt_redis_group_teardown);
}

#else /* !BW_REDIS_ASYNC */

/* 77: ctest reports the test as skipped (SKIP_RETURN_CODE), not passed. */
int main(void) {
  fprintf(stderr,
          "test_store_redis_async: skipped: breakwater_redis was built "
          "without libevent_core (bw_redis_breaker_new_async is missing)\n");
  return 77;
}

#endif

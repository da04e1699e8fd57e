/* Shared by the Redis test programs: one private redis-server per program
 * (started by the group set-up, flushed before each test, stopped by the
 * group tear-down; a missing redis-server fails every test, never skips) and
 * a breaker configuration on the test's clocks and sink. */
#ifndef BW_REDIS_TEST_H
#define BW_REDIS_TEST_H

#include "breakwater/store_redis.h"
#include "bw_test.h"
#include "redis_fixture.h"

static bwt_redis_t g_redis; /* the shared server of this program */

static int bwt_redis_group_setup(void **state) {
  (void)state;
  if (bwt_redis_start(&g_redis, NULL, false) != 0) {
    fprintf(stderr, "cannot start redis-server: %s\n", g_redis.error);
    return -1; /* cmocka fails every test of the group */
  }
  return 0;
}

static int bwt_redis_group_teardown(void **state) {
  (void)state;
  bwt_redis_cleanup(&g_redis);
  return 0;
}

/* Before each test: an empty server and a fresh bwt_env_t. */
static int bwt_redis_setup(void **state) {
  if (bwt_redis_flushall(&g_redis) != 0) return -1;
  return bwt_setup(state);
}

/* Starts a private server for one test (see bwt_redis_start), or fails the
 * test with the reason. */
static inline void bwt_redis_start_or_fail(bwt_redis_t *srv,
                                           const char *password, bool aof) {
  if (bwt_redis_start(srv, password, aof) != 0) {
    print_error("cannot start redis-server: %s\n", srv->error);
    fail();
  }
}

static inline void bwt_redis_restart_or_fail(bwt_redis_t *srv) {
  if (bwt_redis_restart(srv) != 0) {
    print_error("cannot restart redis-server: %s\n", srv->error);
    fail();
  }
}

/* One call through a Redis breaker: acquired, then released with o. */
static inline void bwt_rb_call(bw_redis_breaker_t *b, bw_outcome_t o) {
  bw_permit_t p;
  assert_status(bw_redis_breaker_acquire(b, &p), BW_OK);
  assert_status(bw_redis_breaker_release(b, &p, o), BW_OK);
}

static inline void bwt_rb_calls(bw_redis_breaker_t *b, bw_outcome_t o, int n) {
  for (int i = 0; i < n; i++)
    bwt_rb_call(b, o);
}

/* A stats snapshot (pre-filled with a pattern, so unfilled fields show). */
static inline bw_redis_breaker_stats_t bwt_rb_stats(
    const bw_redis_breaker_t *b) {
  bw_redis_breaker_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_redis_breaker_stats(b, &s);
  return s;
}

/* The Redis key of a breaker's shared state. */
#define BWT_RB_KEY_STATE(name) "bw:{brk:" name "}:state"

/* A breaker on srv, on the test's manual clock, wall clock and sink, synced
 * by hand (no thread), on the local clock. */
static inline void bwt_redis_breaker_config(const bwt_env_t *e,
                                            bw_redis_breaker_config_t *cfg,
                                            const bwt_redis_t *srv,
                                            const char *name) {
  bw_redis_breaker_config_init(cfg);
  cfg->breaker.name = name;
  cfg->breaker.clock = e->clock;
  cfg->breaker.wall_clock = e->wall;
  cfg->breaker.sink = e->sink;
  cfg->redis.port = srv->port;
  if (srv->password[0] != '\0') cfg->redis.password = srv->password;
  cfg->sync_thread = false;
  cfg->use_redis_time = false;
}

#endif

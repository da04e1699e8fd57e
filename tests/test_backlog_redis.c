/* Specification tests: the backlog gauge (backlog.h) over a Redis queue
 * (bw_redis_queue_store_new) on a private redis-server — the webhook
 * edge's pressure from the backlog stored in Redis. The producer and the
 * backlog use two handles, two connections, as two processes would. The
 * cases are backlog_cases.h's. */
#include "breakwater/backlog.h"
#include "backlog_cases.h"
#include "redis_test.h"

static int bwt_backlog_store(bwt_backlog_env_t *e) {
  bw_queue_store_config_t qc;
  bw_redis_config_t rc;
  if (bwt_redis_flushall(&g_redis) != 0) return -1;
  bw_redis_config_init(&rc);
  rc.port = g_redis.port;
  bw_queue_store_config_init(&qc);
  qc.name = "webhooks";
  qc.max_size = 100;
  qc.clock = e->clock;
  e->producer = bw_redis_queue_store_new(&qc, &rc, NULL);
  e->reader = bw_redis_queue_store_new(&qc, &rc, NULL);
  return e->producer != NULL && e->reader != NULL ? 0 : -1;
}

static void bwt_backlog_store_free(bwt_backlog_env_t *e) {
  bw_queue_store_free(e->producer);
  bw_queue_store_free(e->reader);
}

static void a_stopped_server_is_an_error_with_the_last_reading(void **state) {
  bwt_backlog_env_t *e = *state;
  bw_backlog_t *b = bwt_backlog(e, 0, NULL);
  bw_backlog_answer_t a;
  bwt_enqueue(e, 90);
  assert_int_equal(bwt_admit(b, 2, &a), BW_EDGE_REFUSE);
  bwt_redis_pause(&g_redis);
  assert_status(bw_backlog_admit(b, 1, &a), BW_E_IO);
  assert_int_equal(a.edge, BW_EDGE_WARN); /* from the reading of 90 */
  assert_u64_eq(a.depth, 90);
  bwt_redis_resume(&g_redis);
  bw_backlog_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BWT_BACKLOG_CASES,
      cmocka_unit_test_setup_teardown(
          a_stopped_server_is_an_error_with_the_last_reading, bwt_backlog_setup,
          bwt_backlog_teardown),
  };
  (void)bwt_redis_setup; /* redis_test.h's per-test set-up: not this env */
  return cmocka_run_group_tests(tests, bwt_redis_group_setup,
                                bwt_redis_group_teardown);
}

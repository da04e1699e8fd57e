/* Specification tests: the backlog gauge (backlog.h) on the memory queue
 * store, a store whose depth cannot be read, and bad configurations. The
 * same cases run on a real SQLite file in test_backlog_sqlite.c. */
#include "breakwater/backlog.h"
#include "backlog_cases.h"

static int bwt_backlog_store(bwt_backlog_env_t *e) {
  bw_queue_store_config_t qc;
  bw_queue_store_config_init(&qc);
  qc.name = "webhooks";
  qc.max_size = 100;
  qc.clock = e->clock;
  e->producer = bw_mem_queue_new(&qc, NULL);
  e->reader = e->producer; /* one process: one handle */
  return e->producer != NULL ? 0 : -1;
}

static void bwt_backlog_store_free(bwt_backlog_env_t *e) {
  bw_queue_store_free(e->producer);
}

/* A store whose stats fail after `ok_reads` good ones (depth 90 of 100). */
typedef struct broken_s {
  bw_queue_store_t base;
  int ok_reads;
} broken_t;

static int broken_stats(bw_queue_store_t *q, bw_queue_store_stats_t *out) {
  broken_t *b = (broken_t *)q;
  if (b->ok_reads-- <= 0) return BW_E_IO;
  out->depth = 90;
  out->max_size = 100;
  return BW_OK;
}

static const char *broken_name(const bw_queue_store_t *q) {
  (void)q;
  return "broken";
}

static void a_failed_read_keeps_the_last_reading_and_says_so(void **state) {
  bwt_backlog_env_t *e = *state;
  static const bw_queue_store_vtable_t vt = {
      .kind = "broken", .stats = broken_stats, .name = broken_name};
  broken_t store = {{&vt}, 1};
  bw_backlog_config_t c;
  bw_backlog_t *b;
  bw_backlog_answer_t a;
  bw_backlog_stats_t st;
  bw_backlog_config_init(&c);
  c.store = &store.base;
  c.refresh_ms = 0;
  c.clock = e->clock;
  b = bw_backlog_new(&c, NULL);
  assert_non_null(b);
  assert_status(bw_backlog_admit(b, 2, &a), BW_OK);
  assert_int_equal(a.edge, BW_EDGE_REFUSE); /* 0.9: critical */
  /* the store fails: the answer is the last good reading's, and the error
   * is returned, not swallowed */
  assert_status(bw_backlog_admit(b, 1, &a), BW_E_IO);
  assert_int_equal(a.edge, BW_EDGE_WARN);
  assert_int_equal(a.regime, BW_REGIME_CRITICAL);
  assert_u64_eq(a.depth, 90);
  assert_status(bw_backlog_refresh(b), BW_E_IO);
  bw_backlog_stats(b, &st);
  assert_u64_eq(st.reads, 3);
  assert_u64_eq(st.read_errors, 2);
  assert_u64_eq(st.admits, 2);
  bw_backlog_free(b);
}

static void a_store_that_never_answered_reads_as_empty(void **state) {
  bwt_backlog_env_t *e = *state;
  static const bw_queue_store_vtable_t vt = {
      .kind = "broken", .stats = broken_stats, .name = broken_name};
  broken_t store = {{&vt}, 0};
  bw_backlog_config_t c;
  bw_backlog_t *b;
  bw_backlog_answer_t a;
  bw_backlog_config_init(&c);
  c.store = &store.base;
  c.clock = e->clock;
  b = bw_backlog_new(&c, NULL);
  assert_status(bw_backlog_admit(b, 9, &a), BW_E_IO);
  assert_int_equal(a.edge, BW_EDGE_ACCEPT);
  assert_u64_eq(a.depth, 0);
  bw_backlog_free(b);
}

static void validate_names_the_field(void **state) {
  bwt_backlog_env_t *e = *state;
  bw_backlog_config_t c;
  bw_error_t err;
  bw_backlog_config_init(&c);
  assert_int_equal(c.refresh_ms, 1000);
  assert_string_equal(c.name, "backlog");
  assert_status(bw_backlog_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "store");
  c.store = e->reader;
  assert_status(bw_backlog_config_validate(&c, &err), BW_OK);
  c.refresh_ms = -1;
  assert_status(bw_backlog_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "refresh_ms");
  assert_string_equal(err.message, "refresh_ms must be >= 0 (got -1)");
  c.refresh_ms = 0;
  c.gauge.degraded_at = 1.5;
  assert_null(bw_backlog_new(&c, &err));
  assert_string_equal(err.field, "gauge.degraded_at");
  assert_string_equal(err.message,
                      "gauge.degraded_at must be in (0, 1] (got 1.5)");
  c.gauge.degraded_at = 0.6;
  c.name = "";
  assert_status(bw_backlog_config_validate(&c, &err), BW_E_INVAL);
  assert_string_equal(err.field, "name");
}

static void every_verb_answers_null_without_crashing(void **state) {
  bw_backlog_answer_t a;
  bw_backlog_stats_t st;
  bw_error_t err;
  (void)state;
  assert_status(bw_backlog_admit(NULL, 1, &a), BW_E_INVAL);
  assert_status(bw_backlog_refresh(NULL), BW_E_INVAL);
  assert_null(bw_backlog_gauge(NULL));
  memset(&st, 0xAB, sizeof(st));
  bw_backlog_stats(NULL, &st);
  assert_u64_eq(st.reads, 0);
  bw_backlog_stats(NULL, NULL);
  assert_null(bw_backlog_new(NULL, &err));
  assert_status(bw_backlog_config_validate(NULL, &err), BW_E_INVAL);
  bw_backlog_config_init(NULL);
  bw_backlog_free(NULL);
}

static void admit_without_out_is_refused(void **state) {
  bwt_backlog_env_t *e = *state;
  bw_backlog_t *b = bwt_backlog(e, 0, NULL);
  assert_status(bw_backlog_admit(b, 1, NULL), BW_E_INVAL);
  bw_backlog_free(b);
}

int main(void) {
#define T(f) \
  cmocka_unit_test_setup_teardown(f, bwt_backlog_setup, bwt_backlog_teardown)
  const struct CMUnitTest tests[] = {
      BWT_BACKLOG_CASES,
      T(a_failed_read_keeps_the_last_reading_and_says_so),
      T(a_store_that_never_answered_reads_as_empty),
      T(validate_names_the_field),
      T(every_verb_answers_null_without_crashing),
      T(admit_without_out_is_refused),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}

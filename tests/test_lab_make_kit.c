/* Specification tests: a lab run with the caller's kit (bw_lab_run_config_t
 * make_kit / free_kit, what `breakwater lab storm --config` uses): built on
 * the run's virtual clock, run as the mode's own would be, freed once, and
 * every misuse refused. Deterministic: virtual time. */
#include "breakwater/ext.h"
#include "breakwater/lab.h"
#include "bw_test.h"

typedef struct my_kit_s {
  int made, freed;
  const bw_clock_t *clock;
  int fail; /* 0: build; 1: return an error; 2: leave the pipeline NULL */
  bw_bulkhead_t *bh;
} my_kit_t;

/* A bulkhead of 100 and a 2 s timeout, on the run's clock. */
static int make(void *ud, const bw_clock_t *clock, bw_sink_t *sink,
                bw_lab_kit_t *kit, bw_error_t *err) {
  my_kit_t *m = ud;
  bw_bulkhead_config_t bc;
  bw_pipeline_config_t pc;
  (void)sink;
  m->made++;
  m->clock = clock;
  if (m->fail == 1)
    return bw_error_set(err, BW_E_INVAL, "mine", "my kit is broken");
  memset(kit, 0, sizeof *kit);
  kit->mode = BW_LAB_BREAKWATER;
  if (m->fail == 2) return BW_OK;
  bw_bulkhead_config_init(&bc);
  bc.max_concurrent = 100;
  bc.clock = clock;
  if ((m->bh = bw_bulkhead_new(&bc, err)) == NULL) return err->code;
  bw_pipeline_config_init(&pc);
  bw_pipeline_add_limit(&pc, bw_bulkhead_as_limit(m->bh), 10000);
  bw_pipeline_add_timeout(&pc, 2000);
  kit->pipeline = bw_pipeline_new(&pc, err);
  kit->bulkhead = m->bh;
  return kit->pipeline != NULL ? BW_OK : err->code;
}

static void release(void *ud, bw_lab_kit_t *kit) {
  my_kit_t *m = ud;
  m->freed++;
  bw_pipeline_free(kit->pipeline);
  bw_bulkhead_free(m->bh);
  m->bh = NULL;
  memset(kit, 0, sizeof *kit);
}

static void with(bw_lab_run_config_t *cfg, my_kit_t *m) {
  bw_lab_run_config_init(cfg);
  cfg->mode = BW_LAB_BREAKWATER;
  cfg->clients = 800;
  cfg->make_kit = make;
  cfg->free_kit = release;
  cfg->make_kit_userdata = m;
}

static void callers_kit_runs_on_virtual_time(void **state) {
  (void)state;
  bw_lab_run_config_t cfg;
  bw_lab_results_t a, b;
  bw_error_t err;
  my_kit_t m = {0};
  with(&cfg, &m);
  assert_status(bw_lab_run_virtual(&cfg, &a, &err), BW_OK);
  assert_int_equal(m.made, 1);
  assert_int_equal(m.freed, 1);
  assert_non_null(m.clock);
  assert_ptr_not_equal(m.clock, bw_clock_monotonic());
  /* The bulkhead held the partner to 100 in flight; nothing failed. */
  assert_u64_eq(a.sim.partner_max_in_flight, 100);
  assert_u64_eq(a.sim.successes, 800);
  assert_u64_eq(a.sim.network_calls, 800);
  assert_u64_eq(a.breaker_opens, 0);
  assert_u64_eq(a.final_limit, 0); /* no limiter in this kit */
  /* The same configuration, the same run. */
  assert_status(bw_lab_run_virtual(&cfg, &b, &err), BW_OK);
  assert_i64_eq(a.sim.completion_ns, b.sim.completion_ns);
  assert_i64_eq(a.sim.latency_p50_ns, b.sim.latency_p50_ns);
  assert_int_equal(m.freed, 2);
}

static void misuse_is_refused_and_freed(void **state) {
  (void)state;
  bw_lab_run_config_t cfg;
  bw_lab_results_t r;
  bw_error_t err;
  my_kit_t m = {0};
  with(&cfg, &m);
  cfg.free_kit = NULL;
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_string_equal(err.field, "free_kit");
  assert_int_equal(m.made, 0);

  with(&cfg, &m);
  m.fail = 1;
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_string_equal(err.message, "my kit is broken");
  assert_int_equal(m.made, 1);
  assert_int_equal(m.freed, 1); /* freed also when it failed */

  m.fail = 2;
  assert_status(bw_lab_run_virtual(&cfg, &r, &err), BW_E_INVAL);
  assert_string_equal(err.field, "make_kit");
  assert_string_equal(err.message, "make_kit must set the kit's pipeline");
  assert_int_equal(m.freed, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(callers_kit_runs_on_virtual_time),
      cmocka_unit_test(misuse_is_refused_and_freed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

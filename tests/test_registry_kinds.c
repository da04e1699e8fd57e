/* The registry's objects of every kind: get-or-create by name, find, put,
 * counts, and their Prometheus families (exact, on a manual clock). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"
#include "bw_test.h"
#include "oom.h"
#include "registry_all.h"

/* The asyncio toolkit's BulkheadRegistry: get(name) creates on first use
 * and returns the same object after; stats() reads it. */
static void test_bulkhead_registry_get_and_stats(void **state) {
  bw_error_t err;
  bw_bulkhead_config_t c;
  bw_bulkhead_stats_t st;
  bw_permit_t p;
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  bw_bulkhead_t *a, *again, *other;
  (void)state;
  assert_non_null(reg);
  bw_bulkhead_config_init(&c);
  c.max_concurrent = 2;
  a = bw_registry_bulkhead(reg, "hotel_api", &c, &err);
  assert_non_null(a);
  assert_int_equal(err.code, BW_OK);
  assert_string_equal(bw_bulkhead_name(a), "hotel_api");
  c.max_concurrent = 9; /* ignored: the name exists */
  again = bw_registry_bulkhead(reg, "hotel_api", &c, &err);
  assert_ptr_equal(again, a);
  other = bw_registry_bulkhead(reg, "payment_api", NULL, &err);
  assert_non_null(other);
  assert_ptr_not_equal(other, a);
  assert_int_equal(bw_registry_count(reg, BW_REGISTRY_BULKHEAD), 2);
  assert_int_equal(bw_registry_size(reg), 0); /* breakers only */
  assert_int_equal(bw_bulkhead_try_acquire(a, &p), BW_OK);
  bw_bulkhead_stats(a, &st);
  assert_int_equal(st.max_concurrent, 2);
  assert_int_equal(st.in_use, 1);
  assert_int_equal(st.admitted, 1);
  assert_ptr_equal(bw_registry_find(reg, BW_REGISTRY_BULKHEAD, "hotel_api"), a);
  assert_null(bw_registry_find(reg, BW_REGISTRY_LIMITER, "hotel_api"));
  assert_null(bw_registry_find(reg, BW_REGISTRY_BULKHEAD, "nope"));
  bw_bulkhead_release(a, &p);
  bw_registry_free(reg);
}

/* bw_registry_set_config: a configuration registered in advance for (kind,
 * name) is the one a get-or-create with cfg NULL uses at the first
 * creation, for every kind the registry creates; each is read back
 * exactly from the object made. */
static void test_configs_registered_in_advance_for_every_kind(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_registry_config_t rc;
  bw_registry_t *reg;
  bw_error_t err;
  bw_breaker_config_t brc;
  bw_bulkhead_config_t bhc;
  bw_limiter_config_t lic;
  bw_ratelimit_config_t rlc;
  bw_retry_config_t rec;
  bw_budget_config_t buc;
  bw_pipeline_config_t plc;
  bw_queue_config_t qc;
  bw_stage_config_t stc;
  bw_degrade_config_t dgc;
  bw_gauge_config_t gac;
  bw_throttle_config_t thc;
  bw_breaker_t *b;
  bw_permit_t p;
  bw_ratelimit_t *rl;
  bw_stage_t *st;
  bw_stage_result_t res;
  int item = 0;
  (void)state;
  assert_non_null(clock);
  bw_registry_config_init(&rc);
  rc.clock = clock;
  reg = bw_registry_new(&rc, &err);
  assert_non_null(reg);

  bw_breaker_config_init(&brc);
  brc.name = "ignored";
  brc.failure_threshold = 1;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BREAKER, "svc", &brc, &err),
      BW_OK);
  bw_bulkhead_config_init(&bhc);
  bhc.name = "ignored";
  bhc.max_concurrent = 3;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "svc", &bhc, &err),
      BW_OK);
  assert_int_equal(err.code, BW_OK);
  bw_limiter_config_init(&lic);
  lic.initial_limit = 7;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_LIMITER, "svc", &lic, &err),
      BW_OK);
  bw_ratelimit_config_init(&rlc);
  rlc.rate_per_sec = 1;
  rlc.burst = 2;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_RATELIMIT, "svc", &rlc, &err),
      BW_OK);
  bw_retry_config_init(&rec);
  rec.backoff = BW_BACKOFF_CONSTANT;
  rec.base_ms = 123;
  rec.jitter = BW_JITTER_NONE;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_RETRY, "svc", &rec, &err), BW_OK);
  bw_budget_config_init(&buc);
  buc.max_tokens = 4;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BUDGET, "svc", &buc, &err),
      BW_OK);
  bw_pipeline_config_init(&plc);
  plc.latency_bucket_count = 2;
  plc.latency_buckets_us[0] = 1000;
  plc.latency_buckets_us[1] = 5000;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_PIPELINE, "svc", &plc, &err),
      BW_OK);
  bw_queue_config_init(&qc);
  qc.max_size = 5;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_QUEUE, "svc", &qc, &err), BW_OK);
  bw_stage_config_init(&stc);
  stc.queue_size = 1;
  stc.concurrency = 1;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_STAGE, "svc", &stc, &err), BW_OK);
  bw_gauge_config_init(&gac);
  gac.degraded_at = 0.3;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_GAUGE, "svc", &gac, &err), BW_OK);
  bw_throttle_config_init(&thc);
  thc.k = 1.5;
  thc.window_ms = 10000;
  thc.buckets = 10;
  thc.seed = 42;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_THROTTLE, "svc", &thc, &err),
      BW_OK);
  thc.k = 0.5; /* refused now, naming the field; nothing stored */
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_THROTTLE, "bad", &thc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "k");
  assert_null(bw_registry_find(reg, BW_REGISTRY_THROTTLE, "bad"));
  bw_degrade_config_init(&dgc);
  dgc.level_count = 2;
  dgc.level_names = NULL;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_DEGRADE, "svc", &dgc, &err),
      BW_OK);
  /* Changing the caller's structs now changes nothing: they were copied. */
  bhc.max_concurrent = 99;
  qc.max_size = 99;

  /* breaker: one failure opens it */
  b = bw_registry_breaker(reg, "svc", &err);
  assert_non_null(b);
  assert_status(bw_breaker_acquire(b, &p), BW_OK);
  assert_status(bw_breaker_release(b, &p, BW_FAILURE), BW_OK);
  assert_int_equal(bw_breaker_state(b), BW_OPEN);
  bw_registry_put(reg, b);
  { /* bulkhead */
    bw_bulkhead_stats_t s;
    bw_bulkhead_t *bh = bw_registry_bulkhead(reg, "svc", NULL, &err);
    assert_non_null(bh);
    assert_string_equal(bw_bulkhead_name(bh), "svc");
    bw_bulkhead_stats(bh, &s);
    assert_int_equal(s.max_concurrent, 3);
  }
  assert_int_equal(
      bw_limiter_limit(bw_registry_limiter(reg, "svc", NULL, &err)), 7);
  rl = bw_registry_ratelimit(reg, "svc", NULL, &err);
  assert_non_null(rl); /* a burst of 2 on the registry's clock, then none */
  assert_status(bw_ratelimit_try_acquire(rl, NULL), BW_OK);
  assert_status(bw_ratelimit_try_acquire(rl, NULL), BW_OK);
  assert_true(bw_ratelimit_try_acquire(rl, NULL) != BW_OK);
  assert_int_equal(bw_retry_delay_ms(bw_registry_retry(reg, "svc", NULL, &err),
                                     3, NULL, NULL),
                   123);
  { /* budget: starts full with max_tokens */
    bw_budget_stats_t s;
    bw_budget_stats(bw_registry_budget(reg, "svc", NULL, &err), &s);
    assert_true(s.tokens == 4.0);
  }
  { /* pipeline: its histogram's bounds */
    bw_pipeline_stats_t s;
    bw_pipeline_stats(bw_registry_pipeline(reg, "svc", NULL, &err), &s);
    assert_int_equal(s.latency_bucket_count, 2);
    assert_i64_eq(s.latency_buckets_us[1], 5000);
  }
  { /* queue */
    bw_queue_stats_t s;
    bw_queue_stats(bw_registry_queue(reg, "svc", NULL, &err), &s);
    assert_int_equal(s.max_size, 5);
  }
  st = bw_registry_stage(reg, "svc", NULL, &err); /* one slot queued */
  assert_non_null(st);
  assert_int_equal(bw_stage_submit(st, &item, 0, BW_QUEUE_NO_DEADLINE, &res),
                   BW_QUEUE_ADMITTED);
  assert_int_equal(bw_stage_submit(st, &item, 0, BW_QUEUE_NO_DEADLINE, &res),
                   BW_QUEUE_REJECTED);
  { /* degrade */
    bw_degrade_stats_t s;
    bw_degrade_stats(bw_registry_degrade(reg, "svc", NULL, &err), &s);
    assert_int_equal(s.level_count, 2);
  }

  /* gauge: 0.35 is degraded at 0.3 (normal at the default 0.6) */
  assert_int_equal(
      bw_gauge_update(bw_registry_gauge(reg, "svc", NULL, &err), 0.35),
      BW_REGIME_DEGRADED);

  { /* throttle: the registered K, window and seed, the registry's clock */
    bw_throttle_config_t c;
    bw_throttle_t *th = bw_registry_throttle(reg, "svc", NULL, &err);
    assert_non_null(th);
    assert_string_equal(bw_throttle_name(th), "svc");
    bw_throttle_config_of(th, &c);
    assert_true(c.k == 1.5);
    assert_int_equal(c.window_ms, 10000);
    assert_int_equal(c.buckets, 10);
    assert_int_equal(c.seed, 42);
    assert_ptr_equal(c.clock, clock);
    /* an unregistered name gets the defaults */
    bw_throttle_config_of(bw_registry_throttle(reg, "plain", NULL, &err), &c);
    assert_true(c.k == 2.0);
    assert_int_equal(c.window_ms, 60000);
    assert_int_equal(bw_registry_count(reg, BW_REGISTRY_THROTTLE), 2);
  }

  /* An explicit cfg wins over the registered one. */
  bw_bulkhead_config_init(&bhc);
  bhc.max_concurrent = 5;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "other", &bhc, &err),
      BW_OK);
  bhc.max_concurrent = 6;
  {
    bw_bulkhead_stats_t s;
    bw_bulkhead_stats(bw_registry_bulkhead(reg, "other", &bhc, &err), &s);
    assert_int_equal(s.max_concurrent, 6);
  }
  /* Registering again replaces; an existing object keeps its own. */
  bhc.max_concurrent = 8;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "third", &bhc, &err),
      BW_OK);
  bhc.max_concurrent = 9;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "third", &bhc, &err),
      BW_OK);
  bhc.max_concurrent = 1;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "svc", &bhc, &err),
      BW_OK);
  {
    bw_bulkhead_stats_t s;
    bw_bulkhead_stats(bw_registry_bulkhead(reg, "third", NULL, &err), &s);
    assert_int_equal(s.max_concurrent, 9);
    bw_bulkhead_stats(bw_registry_bulkhead(reg, "svc", NULL, &err), &s);
    assert_int_equal(s.max_concurrent, 3); /* made before */
  }
  /* Per kind: a bulkhead's config says nothing about a limiter's. */
  assert_int_equal(
      bw_limiter_limit(bw_registry_limiter(reg, "third", NULL, &err)), 20);

  /* Refusals name the field. */
  assert_status(
      bw_registry_set_config(NULL, BW_REGISTRY_BULKHEAD, "x", &bhc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "reg");
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BREAKER_IF, "x", &bhc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "kind");
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_QUEUE_STORE, "x", &qc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "kind");
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_IDEM_STORE, "x", &qc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "kind");
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_KIND__COUNT, "x", &qc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "kind");
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "", &bhc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "x", NULL, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "cfg");
  bhc.max_concurrent = 0;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BULKHEAD, "x", &bhc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "max_concurrent");
  qc.max_size = 0;
  assert_status(bw_registry_set_config(reg, BW_REGISTRY_QUEUE, "x", &qc, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "max_size");
  brc.break_ms = -1;
  assert_status(
      bw_registry_set_config(reg, BW_REGISTRY_BREAKER, "x", &brc, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "break_ms");
  /* Nothing refused was stored: "x" gets the defaults. */
  {
    bw_bulkhead_stats_t s;
    bw_bulkhead_config_t d;
    bw_bulkhead_config_init(&d);
    bw_bulkhead_stats(bw_registry_bulkhead(reg, "x", NULL, &err), &s);
    assert_int_equal(s.max_concurrent, d.max_concurrent);
  }
  bw_registry_free(reg);
  bw_clock_free(clock);
}

static void test_every_kind_find_and_count(void **state) {
  reg_all_t a;
  bw_error_t err;
  bw_breaker_t *b;
  int k;
  (void)state;
  reg_all_init(&a);
  for (k = 0; k < BW_REGISTRY_KIND__COUNT; k++)
    assert_int_equal(bw_registry_count(a.reg, (bw_registry_kind_t)k), 1);
  assert_ptr_equal(
      bw_registry_find(a.reg, BW_REGISTRY_BREAKER_IF, "shared_api"),
      bw_breaker_iface(a.shared));
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_LIMITER, "search_agent"),
                   a.lim);
  assert_ptr_equal(
      bw_registry_find(a.reg, BW_REGISTRY_RATELIMIT, "payment_api"), a.rl);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_RETRY, "payment_api"),
                   a.retry);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_BUDGET, "payment_api"),
                   a.bu);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_PIPELINE, "payment_api"),
                   a.pl);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_QUEUE, "work"), a.q);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_STAGE, "ingest"), a.st);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_DEGRADE, "search"),
                   a.dg);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_QUEUE_STORE, "recovery"),
                   a.qs);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_GAUGE, "intake"), a.ga);
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_IDEM_STORE, "orders"),
                   a.is);
  assert_ptr_equal(bw_registry_gauge(a.reg, "intake", NULL, &err), a.ga);
  assert_string_equal(bw_gauge_name(a.ga), "intake");
  assert_ptr_equal(bw_registry_find(a.reg, BW_REGISTRY_THROTTLE, "partner"),
                   a.th);
  assert_ptr_equal(bw_registry_throttle(a.reg, "partner", NULL, &err), a.th);
  assert_string_equal(bw_throttle_name(a.th), "partner");
  assert_null(bw_registry_find(a.reg, BW_REGISTRY_THROTTLE, "payment_api"));
  assert_null(bw_registry_throttle(a.reg, "", NULL, &err));
  assert_string_equal(err.field, "name");
  /* BREAKER is the held lookup. */
  b = bw_registry_find(a.reg, BW_REGISTRY_BREAKER, "payment_api");
  assert_ptr_equal(b, a.b);
  bw_registry_put(a.reg, b);
  /* A name is taken once per kind. */
  assert_int_equal(
      bw_registry_put_object(a.reg, BW_REGISTRY_BREAKER_IF, "shared_api",
                             bw_breaker_iface(a.shared), &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_int_equal(
      bw_registry_put_object(a.reg, BW_REGISTRY_BREAKER, "x", a.b, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "kind");
  assert_int_equal(
      bw_registry_put_object(a.reg, BW_REGISTRY_QUEUE, "x", NULL, &err),
      BW_E_INVAL);
  assert_null(bw_registry_bulkhead(a.reg, "", NULL, &err));
  assert_string_equal(err.field, "name");
  assert_string_equal(bw_registry_kind_name(BW_REGISTRY_DEGRADE), "degrade");
  assert_string_equal(bw_registry_kind_name(BW_REGISTRY_GAUGE), "gauge");
  assert_string_equal(bw_registry_kind_name(BW_REGISTRY_IDEM_STORE),
                      "idem_store");
  assert_string_equal(bw_registry_kind_name(BW_REGISTRY_THROTTLE), "throttle");
  assert_string_equal(bw_registry_kind_name(BW_REGISTRY_KIND__COUNT),
                      "unknown");
  reg_all_free(&a);
}

static void test_invalid_config_names_the_field(void **state) {
  bw_error_t err;
  bw_bulkhead_config_t c;
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  (void)state;
  bw_bulkhead_config_init(&c);
  c.max_concurrent = 0;
  assert_null(bw_registry_bulkhead(reg, "hotel_api", &c, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "max_concurrent");
  assert_int_equal(bw_registry_count(reg, BW_REGISTRY_BULKHEAD), 0);
  bw_registry_free(reg);
}

static void test_exposition_of_every_kind(void **state) {
  reg_all_t a;
  char *text;
  (void)state;
  reg_all_init(&a);
  text = bw_registry_prometheus(a.reg, NULL);
  assert_non_null(text);
  assert_contains(text,
                  "\nbreakwater_breaker_isolated{name=\"payment_api\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_if_state{name=\"shared_api\","
                  "backend=\"breaker\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_if_retry_in_seconds{name="
                  "\"shared_api\",backend=\"breaker\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_if_transitions_total{name="
                  "\"shared_api\",backend=\"breaker\",to=\"open\"} 0\n");
  assert_contains(text, "\nbreakwater_bulkhead_in_use{name=\"hotel_api\"} 1\n");
  /* the pressure gauge: updated once to 0.7 (degraded), 500 ms ago */
  assert_contains(text, "\nbreakwater_pressure_reading{name=\"intake\"} 0.7\n");
  assert_contains(text,
                  "\nbreakwater_pressure_in_regime{name=\"intake\","
                  "regime=\"degraded\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_pressure_admits_all{name=\"intake\"} 0\n");
  assert_contains(text, "\nbreakwater_pressure_ceiling{name=\"intake\"} 5\n");
  assert_contains(text,
                  "\nbreakwater_pressure_transitions_total{name="
                  "\"intake\",to=\"degraded\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_pressure_time_in_regime_seconds_total{"
                  "name=\"intake\",regime=\"degraded\"} 0.5\n");
  /* the throttle: two requests rejected, one withdrawn, none accepted:
   * p = (2 - 2 * 0) / (2 + 1) */
  assert_contains(text,
                  "\n# TYPE breakwater_throttle_requests_total counter\n"
                  "breakwater_throttle_requests_total{name=\"partner\"} 3\n");
  assert_contains(text,
                  "\nbreakwater_throttle_accepts_total{name=\"partner\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_throttle_rejected_total{name=\"partner\"} 2\n");
  assert_contains(
      text, "\nbreakwater_throttle_throttled_total{name=\"partner\"} 0\n");
  assert_contains(
      text, "\nbreakwater_throttle_withdrawn_total{name=\"partner\"} 1\n");
  assert_contains(
      text, "\nbreakwater_throttle_window_requests{name=\"partner\"} 2\n");
  assert_contains(text,
                  "\nbreakwater_throttle_window_accepts{name=\"partner\"} 0\n");
  assert_contains(text,
                  "\n# TYPE breakwater_throttle_refusal_probability gauge\n"
                  "breakwater_throttle_refusal_probability{name=\"partner\"} "
                  "0.6666666666666666\n");
  assert_contains(text,
                  "\nbreakwater_registry_kind_objects{kind=\"throttle\"} 1\n");
  /* the idempotency store: one key begun, completed, then found done */
  assert_contains(text,
                  "\nbreakwater_idem_store_up{name=\"orders\","
                  "backend=\"memory\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_idem_store_keys{name=\"orders\","
                  "backend=\"memory\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_idem_store_begins_total{name=\"orders\","
                  "backend=\"memory\",result=\"new\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_idem_store_begins_total{name=\"orders\","
                  "backend=\"memory\",result=\"done\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_idem_store_completed_total{name="
                  "\"orders\",backend=\"memory\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_registry_kind_objects{kind=\"gauge\"} 1\n");
  assert_contains(
      text, "\nbreakwater_registry_kind_objects{kind=\"idem_store\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_bulkhead_admitted_total{name=\"hotel_api\","
                  "waited=\"false\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_limiter_releases_total{name="
                  "\"search_agent\",outcome=\"success\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_limiter_rtt_seconds{name=\"search_agent\","
                  "which=\"last\"} 0.02\n");
  assert_contains(text,
                  "\nbreakwater_limiter_stuck_timeouts_total{name="
                  "\"search_agent\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_limiter_tolerated_drops_total{name="
                  "\"search_agent\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_ratelimit_admitted_total{name="
                  "\"payment_api\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_retry_policy_info{name=\"payment_api\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_budget_results_total{name=\"payment_api\","
                  "outcome=\"success\"} 1\n");
  assert_contains(
      text, "\nbreakwater_pipeline_calls_total{name=\"payment_api\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_outcomes_total{name="
                  "\"payment_api\",outcome=\"success\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_outcomes_total{name="
                  "\"payment_api\",outcome=\"breaker\"} 0\n");
  assert_contains(text,
                  "# TYPE breakwater_pipeline_call_duration_seconds "
                  "histogram\n");
  /* 3 ms: above the 2.5 ms bound, within the 5 ms one. */
  assert_contains(text,
                  "\nbreakwater_pipeline_call_duration_seconds_bucket{"
                  "name=\"payment_api\",le=\"0.001\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_call_duration_seconds_bucket{"
                  "name=\"payment_api\",le=\"0.0025\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_call_duration_seconds_bucket{"
                  "name=\"payment_api\",le=\"0.005\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_call_duration_seconds_bucket{"
                  "name=\"payment_api\",le=\"30\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_call_duration_seconds_bucket{"
                  "name=\"payment_api\",le=\"+Inf\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_call_duration_seconds_sum{"
                  "name=\"payment_api\"} 0.003\n");
  assert_contains(text,
                  "\nbreakwater_pipeline_call_duration_seconds_count{"
                  "name=\"payment_api\"} 1\n");
  assert_contains(text, "\nbreakwater_queue_size{name=\"work\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_queue_store_up{name=\"recovery\","
                  "backend=\"memory\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_queue_store_depth{name=\"recovery\","
                  "backend=\"memory\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_queue_store_settled_total{name="
                  "\"recovery\",backend=\"memory\",result=\"acked\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_registry_kind_objects{kind=\"bulkhead\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_registry_kind_objects{kind=\"breaker\"} 1\n");
  assert_contains(text, "\nbreakwater_stage_queued{name=\"ingest\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_stage_in_regime{name=\"ingest\","
                  "regime=\"normal\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_degrade_picks_total{name=\"search\","
                  "level=\"full\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_degrade_time_at_level_seconds_total{name="
                  "\"search\",level=\"full\"} 0.5\n");
  /* No sentinel values, no milliseconds. */
  assert_not_contains(text, " -1\n");
  {
    /* no sample's metric name is in milliseconds */
    const char *line = text;
    while (line != NULL && *line != '\0') {
      const char *end = strpbrk(line, "{ ");
      if (*line != '#' && end != NULL && end - line > 3)
        assert_false(memcmp(end - 3, "_ms", 3) == 0);
      line = strchr(line, '\n');
      if (line != NULL) line++;
    }
  }
  bw_free(text);
  reg_all_free(&a);
}

/* The OpenMetrics variant: the same samples; counter families named
 * without _total in HELP/TYPE; UNIT lines for seconds and ratios; help
 * text with its double quotes escaped; # EOF last. The Prometheus text
 * keeps its own rules (no EOF, no UNIT, _total families). On a manual
 * clock, so that the two renderings compared below read the same times
 * (on the monotonic clock a breaker's time in state could pass a
 * millisecond between them and lengthen the text). */
static void test_openmetrics_variant(void **state) {
  bw_error_t err;
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_registry_config_t rc;
  assert_non_null(clock);
  bw_registry_config_init(&rc);
  rc.clock = clock;
  bw_registry_t *reg = bw_registry_new(&rc, &err);
  bw_breaker_t *b = bw_registry_breaker(reg, "svc", &err);
  bw_bulkhead_t *bh = bw_registry_bulkhead(reg, "svc", NULL, &err);
  bw_permit_t p;
  char *om, *prom;
  size_t len;
  FILE *fp;
  (void)state;
  assert_non_null(bh);
  assert_status(bw_bulkhead_try_acquire(bh, &p), BW_OK);
  assert_status(bw_bulkhead_release(bh, &p), BW_OK);
  om = bw_registry_openmetrics(reg, &len);
  prom = bw_registry_prometheus(reg, NULL);
  assert_non_null(om);
  assert_non_null(prom);
  assert_int_equal(len, strlen(om));
  assert_true(len > 6 && strcmp(om + len - 6, "# EOF\n") == 0);
  assert_not_contains(prom, "# EOF");
  assert_contains(om, "# HELP breakwater_breaker_calls Calls whose outcome");
  assert_contains(om, "\n# TYPE breakwater_breaker_calls counter\n");
  assert_contains(om,
                  "\nbreakwater_breaker_calls_total{name=\"svc\","
                  "outcome=\"success\"} 0\n");
  assert_contains(prom, "\n# TYPE breakwater_breaker_calls_total counter\n");
  assert_contains(om,
                  "\n# TYPE breakwater_breaker_time_in_state_seconds "
                  "counter\n# UNIT breakwater_breaker_time_in_state_seconds "
                  "seconds\n");
  assert_contains(om,
                  "\n# TYPE breakwater_breaker_window_failure_ratio "
                  "gauge\n# UNIT breakwater_breaker_window_failure_ratio "
                  "ratio\n");
  assert_not_contains(prom, "# UNIT");
  assert_contains(om,
                  "\nbreakwater_bulkhead_admitted_total{name=\"svc\","
                  "waited=\"false\"} 1\n");
  /* gauges keep their names */
  assert_contains(om, "\n# TYPE breakwater_breaker_state gauge\n");
  bw_free(om);
  bw_free(prom);
  /* The FILE form writes the same text; NULL arguments are refused. */
  fp = tmpfile();
  assert_non_null(fp);
  assert_status(bw_registry_write_openmetrics(reg, fp), BW_OK);
  assert_true(ftell(fp) == (long)len);
  fclose(fp);
  assert_status(bw_registry_write_openmetrics(NULL, stdout), BW_E_INVAL);
  assert_status(bw_registry_write_openmetrics(reg, NULL), BW_E_INVAL);
  len = 7;
  assert_null(bw_registry_openmetrics(NULL, &len));
  assert_int_equal(len, 0);
  bw_registry_put(reg, b);
  bw_registry_free(reg);
  bw_clock_free(clock);
}

/* Isolated: the isolated gauge says so, and retry_in has no sample (no
 * number of seconds means "until an operator resets"). */
static void test_isolated_is_a_gauge_not_a_sentinel(void **state) {
  bw_error_t err;
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  bw_breaker_t *b = bw_registry_breaker(reg, "iso", &err);
  char *text;
  (void)state;
  bw_breaker_isolate(b);
  text = bw_registry_prometheus(reg, NULL);
  assert_contains(text, "\nbreakwater_breaker_isolated{name=\"iso\"} 1\n");
  assert_contains(text, "# TYPE breakwater_breaker_retry_in_seconds gauge\n");
  assert_not_contains(text,
                      "breakwater_breaker_retry_in_seconds{name=\"iso\"}");
  bw_free(text);
  bw_registry_put(reg, b);
  bw_registry_free(reg);
}

/* Configurable bounds, and the histogram on a manual clock. */
static void test_pipeline_histogram_buckets(void **state) {
  bw_error_t err;
  bw_pipeline_config_t pc;
  bw_pipeline_stats_t st;
  bw_pipeline_call_t c;
  bw_pipeline_t *pl;
  (void)state;
  bw_pipeline_config_init(&pc);
  pc.latency_bucket_count = 2;
  pc.latency_buckets_us[0] = 500;
  pc.latency_buckets_us[1] = 500; /* not increasing */
  assert_null(bw_pipeline_new(&pc, &err));
  assert_string_equal(err.field, "latency_buckets_us");
  pc.latency_buckets_us[1] = 2000;
  pl = bw_pipeline_new(&pc, &err);
  assert_non_null(pl);
  /* 0.5 ms (on the bound: le is inclusive), 1 ms, 3 ms */
  assert_int_equal(bw_pipeline_begin(pl, &c, 0), BW_STEP_ATTEMPT);
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_OK, -1, 500000),
                   BW_STEP_DONE);
  assert_int_equal(bw_pipeline_begin(pl, &c, 0), BW_STEP_ATTEMPT);
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_TRANSIENT, -1, 1000000),
                   BW_STEP_DONE);
  assert_int_equal(bw_pipeline_begin(pl, &c, 10), BW_STEP_ATTEMPT);
  assert_int_equal(bw_pipeline_report(&c, BW_VERDICT_OK, -1, 3000010),
                   BW_STEP_DONE);
  /* cancelled calls are not counted */
  assert_int_equal(bw_pipeline_begin(pl, &c, 0), BW_STEP_ATTEMPT);
  bw_pipeline_cancel(&c);
  bw_pipeline_stats(pl, &st);
  assert_int_equal(st.latency_bucket_count, 2);
  assert_int_equal(st.latency_buckets_us[0], 500);
  assert_int_equal(st.latency_buckets_us[1], 2000);
  assert_int_equal(st.latency_counts[0], 1);
  assert_int_equal(st.latency_counts[1], 1);
  assert_int_equal(st.latency_counts[2], 1);
  assert_int_equal(st.latency_sum_ns, 4500000);
  assert_int_equal(st.successes, 2);
  assert_int_equal(st.failures[BW_FAILURE_EXHAUSTED], 1);
  assert_int_equal(st.cancelled, 1);
  bw_pipeline_free(pl);
  /* The defaults: 14 bounds, 1 ms .. 30 s. */
  bw_pipeline_config_init(&pc);
  pl = bw_pipeline_new(&pc, &err);
  bw_pipeline_stats(pl, &st);
  assert_int_equal(st.latency_bucket_count, 14);
  assert_int_equal(st.latency_buckets_us[0], 1000);
  assert_int_equal(st.latency_buckets_us[13], 30000000);
  bw_pipeline_free(pl);
}

/* Out of memory anywhere: BW_OK or BW_E_NOMEM, nothing leaks, nothing is
 * half-added. */
static int oom_scenario(void *ctx) {
  bw_error_t err;
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  bw_pipeline_config_t pc;
  bw_breaker_config_t bc;
  bw_breaker_t *b = NULL;
  char *text;
  int rc = BW_OK;
  (void)ctx;
  if (reg == NULL) return err.code;
  { /* a configuration registered in advance, then used */
    bw_queue_config_t qc;
    bw_queue_config_init(&qc);
    qc.max_size = 4;
    rc = bw_registry_set_config(reg, BW_REGISTRY_QUEUE, "q", &qc, &err);
    if (rc != BW_OK) goto out;
    if (bw_registry_queue(reg, "q", NULL, &err) == NULL) {
      rc = err.code;
      goto out;
    }
  }
  bw_breaker_config_init(&bc);
  bc.name = "shared";
  b = bw_breaker_new(&bc, &err);
  if (b == NULL) {
    rc = err.code;
    goto out;
  }
  if (bw_registry_bulkhead(reg, "a", NULL, &err) == NULL) {
    rc = err.code;
    goto out;
  }
  if (bw_registry_count(reg, BW_REGISTRY_BULKHEAD) != 1) {
    rc = BW_E_INVAL;
    goto out;
  }
  bw_pipeline_config_init(&pc);
  if (bw_registry_pipeline(reg, "a", &pc, &err) == NULL) {
    rc = err.code;
    goto out;
  }
  rc = bw_registry_put_object(reg, BW_REGISTRY_BREAKER_IF, "shared",
                              bw_breaker_iface(b), &err);
  if (rc != BW_OK) goto out;
  text = bw_registry_prometheus(reg, NULL);
  if (text == NULL) {
    rc = BW_E_NOMEM;
    goto out;
  }
  bw_free(text);
out:
  bw_registry_free(reg);
  bw_breaker_free(b);
  return rc;
}

static void test_oom(void **state) {
  int sticky;
  (void)state;
  for (sticky = 0; sticky <= 1; sticky++) {
    long failures;
    long n = oom_walk_lenient(oom_scenario, NULL, sticky != 0, &failures);
    assert_true(n > 5);
    assert_true(failures > 3);
  }
}

/* Racing first lookups of one name create one object. */
typedef struct race_s {
  bw_registry_t *reg;
  bw_limiter_t *got[8];
} race_t;

static void *race_thread(void *arg) {
  race_t *r = arg;
  for (int i = 0; i < 8; i++) {
    bw_error_t err;
    r->got[i] = bw_registry_limiter(r->reg, "shared", NULL, &err);
  }
  return NULL;
}

static void test_get_or_create_races(void **state) {
  bw_error_t err;
  race_t r[4];
  pthread_t t[4];
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  (void)state;
  for (int i = 0; i < 4; i++) {
    r[i].reg = reg;
    assert_int_equal(pthread_create(&t[i], NULL, race_thread, &r[i]), 0);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 8; k++) {
      assert_non_null(r[i].got[k]);
      assert_ptr_equal(r[i].got[k], r[0].got[0]);
    }
  assert_int_equal(bw_registry_count(reg, BW_REGISTRY_LIMITER), 1);
  bw_registry_free(reg);
}

/* Counts the events a sink receives, by type. */
typedef struct ev_count_s {
  unsigned n[BW_EV__COUNT];
  char name[BW_EV__COUNT][32];
} ev_count_t;

static void count_event(const bw_event_t *e, void *ud) {
  ev_count_t *c = ud;
  if ((unsigned)e->type >= BW_EV__COUNT) return;
  c->n[e->type]++;
  snprintf(c->name[e->type], sizeof c->name[e->type], "%s", e->name);
}

/* docs/registry.md: a configuration whose sink is NULL gets the registry's,
 * for every kind with a sink. One object of each such kind is made with
 * cfg NULL or a cfg that names no sink, made to refuse once, and freed
 * with the registry (which flushes the summaries): each kind's event lands
 * in the registry's sink, under the object's name. */
/* One request through a throttle's strategy: enter, and if admitted an
 * attempt and leave with o. Returns enter's code. */
static int th_call(bw_throttle_t *t, bw_clock_t *clock, bw_outcome_t o) {
  bw_strategy_if_t *s = bw_throttle_strategy(t);
  bw_permit_t p;
  bw_deadline_t d = bw_deadline_none();
  int64_t timeout = -1;
  bw_strategy_ctx_t ctx = {&p, &d, &timeout, bw_clock_now(clock), 0, 0, false};
  bw_refusal_t r = {BW_FAILURE_NONE, 0, false};
  int rc = s->vt->enter(s, &ctx, bw_clock_now(clock), &r);
  if (rc != BW_OK) return rc;
  ctx.attempt = 1;
  s->vt->leave(s, &ctx, o);
  return rc;
}

static void test_registry_sink_for_every_kind(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  ev_count_t got;
  bw_error_t err;
  bw_registry_config_t rc;
  bw_registry_t *reg;
  bw_sink_t *sink;
  bw_permit_t p1, p2;
  int64_t wait_ms;
  (void)state;
  memset(&got, 0, sizeof got);
  sink = bw_sink_callback_new(count_event, &got, &err);
  assert_non_null(sink);
  bw_registry_config_init(&rc);
  rc.clock = clock;
  rc.sink = sink;
  reg = bw_registry_new(&rc, &err);
  assert_non_null(reg);
  { /* bulkhead: one slot, a second call refused */
    bw_bulkhead_config_t c;
    bw_bulkhead_t *bh;
    bw_bulkhead_config_init(&c);
    c.max_concurrent = 1;
    bh = bw_registry_bulkhead(reg, "hotel_api", &c, &err);
    assert_non_null(bh);
    assert_int_equal(bw_bulkhead_try_acquire(bh, &p1), BW_OK);
    assert_int_equal(bw_bulkhead_try_acquire(bh, &p2), BW_E_FULL);
    assert_int_equal(bw_bulkhead_release(bh, &p1), BW_OK);
  }
  { /* rate limiter: a burst of one, the second call at once refused */
    bw_ratelimit_config_t c;
    bw_ratelimit_t *rl;
    bw_ratelimit_config_init(&c);
    c.rate_per_sec = 1;
    rl = bw_registry_ratelimit(reg, "geo_api", &c, &err);
    assert_non_null(rl);
    assert_int_equal(bw_ratelimit_try_acquire(rl, &wait_ms), BW_OK);
    assert_int_equal(bw_ratelimit_try_acquire(rl, &wait_ms), BW_E_FULL);
  }
  { /* budget: a ratio budget that allows no retry */
    bw_budget_config_t c;
    bw_budget_t *bu;
    bw_budget_config_init(&c);
    c.kind = BW_BUDGET_RATIO;
    c.budget_percent = 0;
    c.min_retries_per_sec = 0;
    bu = bw_registry_budget(reg, "payment_api", &c, &err);
    assert_non_null(bu);
    bw_budget_on_request(bu);
    assert_false(bw_budget_try_retry(bu));
  }
  { /* priority queue: one place, the second item rejected */
    bw_queue_config_t c;
    bw_queue_t *q;
    bw_queue_item_t shed;
    bw_queue_config_init(&c);
    c.max_size = 1;
    q = bw_registry_queue(reg, "work", &c, &err);
    assert_non_null(q);
    assert_int_equal(bw_queue_enqueue(q, NULL, 0, BW_QUEUE_NO_DEADLINE, &shed),
                     BW_QUEUE_ADMITTED);
    assert_int_equal(bw_queue_enqueue(q, NULL, 0, BW_QUEUE_NO_DEADLINE, &shed),
                     BW_QUEUE_REJECTED);
  }
  { /* stage: one place, the second item rejected */
    bw_stage_config_t c;
    bw_stage_t *st;
    bw_stage_result_t res;
    bw_stage_config_init(&c);
    c.queue_size = 1;
    st = bw_registry_stage(reg, "ingest", &c, &err);
    assert_non_null(st);
    assert_int_equal(bw_stage_submit(st, NULL, 0, BW_QUEUE_NO_DEADLINE, &res),
                     BW_QUEUE_ADMITTED);
    assert_int_equal(bw_stage_submit(st, NULL, 0, BW_QUEUE_NO_DEADLINE, &res),
                     BW_QUEUE_REJECTED);
  }
  { /* throttle: K = 1, every request rejected, until one is refused */
    bw_throttle_config_t c;
    bw_throttle_t *th;
    int refused = 0;
    bw_throttle_config_init(&c);
    c.k = 1.0;
    c.seed = 3;
    th = bw_registry_throttle(reg, "partner", &c, &err);
    assert_non_null(th);
    for (int i = 0; i < 64 && refused == 0; i++)
      refused = th_call(th, clock, BW_FAILURE) != BW_OK;
    assert_int_equal(refused, 1);
  }
  { /* pipeline: a call that fails permanently gives up */
    bw_pipeline_config_t c;
    bw_pipeline_t *pl;
    bw_pipeline_call_t call;
    int64_t t0 = bw_clock_now(clock);
    bw_pipeline_config_init(&c);
    assert_int_equal(bw_pipeline_add_deadline(&c, 1000), BW_OK);
    pl = bw_registry_pipeline(reg, "checkout", &c, &err);
    assert_non_null(pl);
    assert_int_equal(bw_pipeline_begin(pl, &call, t0), BW_STEP_ATTEMPT);
    assert_int_equal(bw_pipeline_report(&call, BW_VERDICT_PERMANENT, -1, t0),
                     BW_STEP_DONE);
  }
  /* Pipelines emit at once; the others' summaries are flushed by free. */
  assert_int_equal(got.n[BW_EV_PIPELINE_GAVE_UP], 1);
  assert_string_equal(got.name[BW_EV_PIPELINE_GAVE_UP], "checkout");
  bw_registry_free(reg);
  assert_int_equal(got.n[BW_EV_BULKHEAD_REJECTED], 1);
  assert_string_equal(got.name[BW_EV_BULKHEAD_REJECTED], "hotel_api");
  assert_int_equal(got.n[BW_EV_RATE_LIMITED], 1);
  assert_string_equal(got.name[BW_EV_RATE_LIMITED], "geo_api");
  assert_int_equal(got.n[BW_EV_RETRIES_REFUSED], 1);
  assert_string_equal(got.name[BW_EV_RETRIES_REFUSED], "payment_api");
  assert_int_equal(got.n[BW_EV_QUEUE_DROPPED], 1);
  assert_string_equal(got.name[BW_EV_QUEUE_DROPPED], "work");
  assert_int_equal(got.n[BW_EV_STAGE_DROPPED], 1);
  assert_string_equal(got.name[BW_EV_STAGE_DROPPED], "ingest");
  assert_int_equal(got.n[BW_EV_THROTTLE_REFUSED], 1);
  assert_string_equal(got.name[BW_EV_THROTTLE_REFUSED], "partner");
  bw_sink_free(sink);
  bw_clock_free(clock);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bulkhead_registry_get_and_stats),
      cmocka_unit_test(test_every_kind_find_and_count),
      cmocka_unit_test(test_configs_registered_in_advance_for_every_kind),
      cmocka_unit_test(test_invalid_config_names_the_field),
      cmocka_unit_test(test_exposition_of_every_kind),
      cmocka_unit_test(test_isolated_is_a_gauge_not_a_sentinel),
      cmocka_unit_test(test_openmetrics_variant),
      cmocka_unit_test(test_pipeline_histogram_buckets),
      cmocka_unit_test(test_oom),
      cmocka_unit_test(test_get_or_create_races),
      cmocka_unit_test(test_registry_sink_for_every_kind),
  };
  if (oom_install() != BW_OK) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

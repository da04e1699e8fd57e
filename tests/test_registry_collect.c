/* The registry's collectors (bw_registry_put_collector): the exact text of
 * their families in both exposition formats, one family for several
 * collectors, every refusal naming its field, a failing collector, removal,
 * the NULL policy, and out of memory. */
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

/* The text from the collectors' first family to the end. */
static char *collected_part(bw_registry_t *reg, bool om) {
  char *all = om ? bw_registry_openmetrics(reg, NULL)
                 : bw_registry_prometheus(reg, NULL);
  char *p, *out;
  assert_non_null(all);
  p = strstr(all, "# HELP breakwater_registry_collector_up ");
  assert_non_null(p);
  out = strdup(p);
  bw_free(all);
  return out;
}

/* A shop's pool: requests by code, and a temperature. */
typedef struct pool_s {
  uint64_t ok, err;
  double temp; /* NaN: not emitted */
  int calls;
} pool_t;

static int emit_requests(bw_metric_emit_fn emit, void *ctx, const char *code,
                         uint64_t v) {
  bw_metric_label_t l = {"code", code};
  bw_metric_sample_t s;
  memset(&s, 0, sizeof(s));
  s.family = "shop_requests_total";
  s.type = BW_METRIC_COUNTER;
  s.help = "Requests served, by status code.";
  s.labels = &l;
  s.label_count = 1;
  s.value = (double)v;
  return emit(ctx, &s, NULL);
}

static int pool_collect(void *obj, bw_metric_emit_fn emit, void *ctx) {
  pool_t *p = obj;
  int rc = BW_OK;
  p->calls++;
  if (p->ok > 0) rc = emit_requests(emit, ctx, "200", p->ok);
  if (rc == BW_OK && p->err > 0) rc = emit_requests(emit, ctx, "500", p->err);
  if (rc == BW_OK && !isnan(p->temp)) {
    bw_metric_sample_t s;
    memset(&s, 0, sizeof(s));
    s.family = "shop_oven_celsius";
    s.type = BW_METRIC_GAUGE;
    s.help = "The oven's temperature.";
    s.unit = "celsius";
    s.value = p->temp;
    rc = emit(ctx, &s, NULL);
  }
  return rc; /* an emit refused is a test failure (up 0 in the text) */
}

static const char *const collector_heads_pool =
    "# HELP breakwater_registry_collector_up 1 when the collector's last "
    "collection succeeded, else 0 (its samples are then absent).\n"
    "# TYPE breakwater_registry_collector_up gauge\n"
    "breakwater_registry_collector_up{name=\"pool_a\"} 1\n"
    "breakwater_registry_collector_up{name=\"pool_b\"} 1\n";

/* Two collectors emitting one family: one HELP/TYPE, one name= value each,
 * collectors in name order (pool_b was registered first), families in
 * byte order. */
static void test_two_collectors_share_one_family(void **state) {
  bw_error_t err;
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  pool_t a = {3, 1, 21.5, 0}, b = {7, 0, NAN, 0};
  char *text, want[4096];
  (void)state;
  assert_non_null(reg);
  assert_int_equal(bw_registry_collector_count(reg), 0);
  assert_status(
      bw_registry_put_collector(reg, "pool_b", pool_collect, &b, &err), BW_OK);
  assert_status(
      bw_registry_put_collector(reg, "pool_a", pool_collect, &a, &err), BW_OK);
  assert_int_equal(err.code, BW_OK);
  assert_int_equal(bw_registry_collector_count(reg), 2);
  snprintf(want, sizeof(want),
           "%s"
           "# HELP breakwater_registry_collector_refused_total Samples a "
           "collector emitted that the registry refused (a bad name, label "
           "or value, or a family conflict).\n"
           "# TYPE breakwater_registry_collector_refused_total counter\n"
           "breakwater_registry_collector_refused_total{name=\"pool_a\"} 0\n"
           "breakwater_registry_collector_refused_total{name=\"pool_b\"} 0\n"
           "# HELP shop_oven_celsius The oven's temperature.\n"
           "# TYPE shop_oven_celsius gauge\n"
           "shop_oven_celsius{name=\"pool_a\"} 21.5\n"
           "# HELP shop_requests_total Requests served, by status code.\n"
           "# TYPE shop_requests_total counter\n"
           "shop_requests_total{name=\"pool_a\",code=\"200\"} 3\n"
           "shop_requests_total{name=\"pool_a\",code=\"500\"} 1\n"
           "shop_requests_total{name=\"pool_b\",code=\"200\"} 7\n",
           collector_heads_pool);
  text = collected_part(reg, false);
  assert_string_equal(text, want);
  free(text);
  assert_int_equal(a.calls, 1);
  assert_int_equal(b.calls, 1);

  /* OpenMetrics: counter family named without _total, the UNIT line, and
   * the collectors' families before # EOF. */
  text = collected_part(reg, true);
  assert_non_null(
      strstr(text,
             "# HELP shop_oven_celsius The oven's temperature.\n"
             "# TYPE shop_oven_celsius gauge\n"
             "# UNIT shop_oven_celsius celsius\n"
             "shop_oven_celsius{name=\"pool_a\"} 21.5\n"
             "# HELP shop_requests Requests served, by status code.\n"
             "# TYPE shop_requests counter\n"
             "shop_requests_total{name=\"pool_a\",code=\"200\"} 3\n"
             "shop_requests_total{name=\"pool_a\",code=\"500\"} 1\n"
             "shop_requests_total{name=\"pool_b\",code=\"200\"} 7\n"
             "# EOF\n"));
  assert_non_null(strstr(text,
                         "# TYPE breakwater_registry_collector_refused "
                         "counter\n"));
  free(text);

  /* Removed: never called again, its samples gone. */
  assert_status(bw_registry_remove_collector(reg, "pool_a"), BW_OK);
  assert_status(bw_registry_remove_collector(reg, "pool_a"), BW_E_NOTFOUND);
  text = collected_part(reg, false);
  assert_null(strstr(text, "pool_a"));
  assert_null(strstr(text, "shop_oven_celsius"));
  assert_non_null(
      strstr(text, "shop_requests_total{name=\"pool_b\",code=\"200\"} 7\n"));
  free(text);
  assert_int_equal(a.calls, 2);
  assert_int_equal(b.calls, 3);
  bw_registry_free(reg);
}

/* Without a collector the exposition has no collector family at all (the
 * built-in text is unchanged). */
static void test_no_collector_no_family(void **state) {
  bw_registry_t *reg = bw_registry_new(NULL, NULL);
  pool_t a = {1, 0, NAN, 0};
  char *text;
  (void)state;
  text = bw_registry_prometheus(reg, NULL);
  assert_null(strstr(text, "collector"));
  bw_free(text);
  assert_int_equal(bw_registry_put_collector(reg, "a", pool_collect, &a, NULL),
                   BW_OK);
  assert_int_equal(bw_registry_remove_collector(reg, "a"), BW_OK);
  text = bw_registry_prometheus(reg, NULL);
  assert_null(strstr(text, "collector"));
  bw_free(text);
  bw_registry_free(reg);
}

/* Label values and HELP text: escaped as the object names are (\\, \", \n,
 * invalid UTF-8 as U+FFFD); HELP has no \" in the Prometheus text. */
static int odd_collect(void *obj, bw_metric_emit_fn emit, void *ctx) {
  bw_metric_label_t l[2] = {{"path", "a\"b\\c\nd\xff"}, {"ok", "\xc3\xa9"}};
  bw_metric_sample_t s;
  (void)obj;
  memset(&s, 0, sizeof(s));
  s.family = "odd_things";
  s.type = BW_METRIC_GAUGE;
  s.help = "Quote \" backslash \\ newline \n bad \xfe.";
  s.labels = l;
  s.label_count = 2;
  s.value = -0.25;
  return emit(ctx, &s, NULL);
}

static void test_escaping(void **state) {
  bw_registry_t *reg = bw_registry_new(NULL, NULL);
  char *text;
  (void)state;
  assert_int_equal(
      bw_registry_put_collector(reg, "we\"ird\n", odd_collect, NULL, NULL),
      BW_OK);
  text = collected_part(reg, false);
  assert_non_null(
      strstr(text,
             "# HELP odd_things Quote \" backslash \\\\ newline \\n bad "
             "\xEF\xBF\xBD.\n# TYPE odd_things gauge\n"
             "odd_things{name=\"we\\\"ird\\n\",path=\"a\\\"b\\\\c\\nd"
             "\xEF\xBF\xBD\",ok=\"\xc3\xa9\"} -0.25\n"));
  free(text);
  text = collected_part(reg, true);
  assert_non_null(
      strstr(text,
             "# HELP odd_things Quote \\\" backslash \\\\ newline \\n "
             "bad \xEF\xBF\xBD.\n"));
  free(text);
  bw_registry_free(reg);
}

/* Every rule, each refusal naming its field; refused samples are counted
 * and never written, the valid ones are. */
typedef struct bad_s {
  const char *family;
  bw_metric_type_t type;
  const char *help;
  const char *unit;
  const char *lname, *lvalue;
  size_t label_count;
  double value;
  const char *field; /* the expected err.field; NULL: accepted */
} bad_t;

static const bad_t bad_cases[] = {
    {"ok_total", BW_METRIC_COUNTER, "h", NULL, NULL, NULL, 0, 1, NULL},
    {"ok_gauge_seconds", BW_METRIC_GAUGE, "h", "seconds", "k", "v", 1, -1,
     NULL},
    {NULL, BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"9lives", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"has space", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"colon:name", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"no_suffix", BW_METRIC_COUNTER, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"gauge_total", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"x_gauge", (bw_metric_type_t)7, "h", NULL, NULL, NULL, 0, 1, "type"},
    {"x_gauge", BW_METRIC_GAUGE, NULL, NULL, NULL, NULL, 0, 1, "help"},
    {"x_gauge", BW_METRIC_GAUGE, "", NULL, NULL, NULL, 0, 1, "help"},
    {"x_bytes", BW_METRIC_GAUGE, "h", "seconds", NULL, NULL, 0, 1, "unit"},
    {"x_bytes", BW_METRIC_GAUGE, "h", "Bytes", NULL, NULL, 0, 1, "unit"},
    {"x_bytes", BW_METRIC_GAUGE, "h", "", NULL, NULL, 0, 1, "unit"},
    {"xbytes", BW_METRIC_GAUGE, "h", "bytes", NULL, NULL, 0, 1, "unit"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, "name", "v", 1, 1, "labels"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, "le", "v", 1, 1, "labels"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, "quantile", "v", 1, 1, "labels"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, "__x", "v", 1, 1, "labels"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, "a-b", "v", 1, 1, "labels"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, NULL, "v", 1, 1, "labels"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, "k", NULL, 1, 1, "labels"},
    {"x_gauge", BW_METRIC_GAUGE, "h", NULL, "k", "v", 9, 1, "labels"},
    {"neg_total", BW_METRIC_COUNTER, "h", NULL, NULL, NULL, 0, -1, "value"},
    {"nan_total", BW_METRIC_COUNTER, "h", NULL, NULL, NULL, 0, NAN, "value"},
    {"inf_total", BW_METRIC_COUNTER, "h", NULL, NULL, NULL, 0, INFINITY,
     "value"},
    /* the built-in families, and what would read as one of them */
    {"breakwater_breaker_state", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1,
     "family"},
    {"breakwater_breaker_calls", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1,
     "family"},
    {"breakwater_pipeline_call_duration_seconds_bucket", BW_METRIC_GAUGE, "h",
     NULL, NULL, NULL, 0, 1, "family"},
    {"breakwater_registry_collector_up", BW_METRIC_GAUGE, "h", NULL, NULL, NULL,
     0, 1, "family"},
    {"breakwater_registry_objects_total", BW_METRIC_COUNTER, "h", NULL, NULL,
     NULL, 0, 1, "family"},
    /* against the families accepted above */
    {"ok_total", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"ok", BW_METRIC_GAUGE, "h", NULL, NULL, NULL, 0, 1, "family"},
    {"ok_gauge_seconds", BW_METRIC_GAUGE, "h", NULL, "k", "w", 1, 1, "unit"},
    {"ok_gauge_seconds", BW_METRIC_GAUGE, "h", "seconds", "k", "v", 1, 2,
     "labels"}, /* the same series twice */
    {"ok_gauge_seconds", BW_METRIC_GAUGE, "h", "seconds", "k", "w", 1, 2, NULL},
};
#define BAD_N (sizeof(bad_cases) / sizeof(bad_cases[0]))

typedef struct bad_run_s {
  int rc[BAD_N + 2];
  bw_error_t err[BAD_N + 2];
} bad_run_t;

static int bad_collect(void *obj, bw_metric_emit_fn emit, void *ctx) {
  bad_run_t *r = obj;
  bw_metric_label_t l[BW_METRIC_LABELS_MAX + 1];
  size_t i, j;
  for (i = 0; i < BAD_N; i++) {
    const bad_t *c = &bad_cases[i];
    bw_metric_sample_t s;
    memset(&s, 0, sizeof(s));
    for (j = 0; j < c->label_count && j <= BW_METRIC_LABELS_MAX; j++) {
      l[j].name = c->lname;
      l[j].value = c->lvalue;
    }
    s.family = c->family;
    s.type = c->type;
    s.help = c->help;
    s.unit = c->unit;
    s.labels = c->label_count > 0 ? l : NULL;
    s.label_count = c->label_count;
    s.value = c->value;
    r->rc[i] = emit(ctx, &s, &r->err[i]);
  }
  r->rc[BAD_N] = emit(ctx, NULL, &r->err[BAD_N]);
  {
    /* labels NULL with a count */
    bw_metric_sample_t s;
    memset(&s, 0, sizeof(s));
    s.family = "y_gauge";
    s.type = BW_METRIC_GAUGE;
    s.help = "h";
    s.label_count = 1;
    r->rc[BAD_N + 1] = emit(ctx, &s, &r->err[BAD_N + 1]);
  }
  return BW_OK;
}

static void test_bad_samples_are_refused_naming_the_field(void **state) {
  bw_registry_t *reg = bw_registry_new(NULL, NULL);
  bad_run_t r;
  size_t i, refused = 0;
  char *text, want[128];
  (void)state;
  memset(&r, 0, sizeof(r));
  assert_int_equal(bw_registry_put_collector(reg, "bad", bad_collect, &r, NULL),
                   BW_OK);
  text = collected_part(reg, false);
  for (i = 0; i < BAD_N; i++) {
    if (bad_cases[i].field == NULL) {
      assert_status(r.rc[i], BW_OK);
      assert_int_equal(r.err[i].code, BW_OK);
      continue;
    }
    refused++;
    if (r.rc[i] != BW_E_INVAL || strcmp(r.err[i].field, bad_cases[i].field))
      fail_msg("case %zu (%s): rc %d field '%s' (%s), want field %s", i,
               bad_cases[i].family ? bad_cases[i].family : "NULL", r.rc[i],
               r.err[i].field, r.err[i].message, bad_cases[i].field);
    assert_int_equal(r.err[i].code, BW_E_INVAL);
    assert_true(strlen(r.err[i].message) > 10);
    /* a family it names is never in the text */
  }
  assert_status(r.rc[BAD_N], BW_E_INVAL);
  assert_string_equal(r.err[BAD_N].field, "sample");
  assert_status(r.rc[BAD_N + 1], BW_E_INVAL);
  assert_string_equal(r.err[BAD_N + 1].field, "labels");
  refused += 2;
  /* The messages name the rule. */
  assert_string_equal(r.err[7].message,
                      "a counter's family must end in _total (got "
                      "'no_suffix')");
  assert_string_equal(
      r.err[27].message,
      "family breakwater_breaker_state would read as the family "
      "breakwater_breaker_state already in the exposition");
  snprintf(want, sizeof(want),
           "breakwater_registry_collector_refused_total{name=\"bad\"} %zu\n",
           refused);
  assert_non_null(strstr(text, want));
  /* Only the accepted samples are written. */
  assert_non_null(strstr(text,
                         "# TYPE ok_total counter\n"
                         "ok_total{name=\"bad\"} 1\n"));
  assert_non_null(strstr(text,
                         "# TYPE ok_gauge_seconds gauge\n"
                         "ok_gauge_seconds{name=\"bad\",k=\"v\"} -1\n"
                         "ok_gauge_seconds{name=\"bad\",k=\"w\"} 2\n"));
  assert_null(strstr(text, "\nx_"));
  assert_null(strstr(text, "no_suffix"));
  assert_null(strstr(text, "gauge_total"));
  assert_null(strstr(text, "neg_total"));
  assert_null(strstr(text, "\nok{"));
  assert_null(strstr(text, "breakwater_breaker_calls{"));
  free(text);
  /* The count accumulates over expositions. */
  text = collected_part(reg, false);
  snprintf(want, sizeof(want),
           "breakwater_registry_collector_refused_total{name=\"bad\"} %zu\n",
           2 * refused);
  assert_non_null(strstr(text, want));
  free(text);
  bw_registry_free(reg);
}

/* A collector that cannot read its object: up 0, its samples dropped. */
static int failing_collect(void *obj, bw_metric_emit_fn emit, void *ctx) {
  (void)obj;
  assert_int_equal(emit_requests(emit, ctx, "200", 5), BW_OK);
  return BW_E_IO;
}

static void test_failing_collector_is_down_without_samples(void **state) {
  bw_registry_t *reg = bw_registry_new(NULL, NULL);
  pool_t a = {2, 0, NAN, 0};
  char *text;
  (void)state;
  assert_int_equal(
      bw_registry_put_collector(reg, "broken", failing_collect, NULL, NULL),
      BW_OK);
  assert_int_equal(
      bw_registry_put_collector(reg, "fine", pool_collect, &a, NULL), BW_OK);
  text = collected_part(reg, false);
  assert_non_null(
      strstr(text,
             "breakwater_registry_collector_up{name=\"broken\"} 0\n"
             "breakwater_registry_collector_up{name=\"fine\"} 1\n"));
  assert_non_null(strstr(text,
                         "# TYPE shop_requests_total counter\n"
                         "shop_requests_total{name=\"fine\",code=\"200\"}"
                         " 2\n"));
  assert_null(strstr(text, "shop_requests_total{name=\"broken\""));
  free(text);
  bw_registry_free(reg);
}

/* A collector calling back into its registry's collector functions or an
 * exposition gets BW_E_INVAL, not a deadlock; other calls are fine. */
typedef struct reent_s {
  bw_registry_t *reg;
  int put_rc, remove_rc;
  bw_error_t err;
  char *text;
  void *found;
} reent_t;

static int reent_collect(void *obj, bw_metric_emit_fn emit, void *ctx) {
  reent_t *r = obj;
  (void)emit;
  (void)ctx;
  r->put_rc =
      bw_registry_put_collector(r->reg, "other", reent_collect, r, &r->err);
  r->remove_rc = bw_registry_remove_collector(r->reg, "self");
  r->text = bw_registry_prometheus(r->reg, NULL);
  r->found = bw_registry_find(r->reg, BW_REGISTRY_LIMITER, "none");
  return BW_OK;
}

static void test_collector_calling_its_registry(void **state) {
  reent_t r;
  char *text;
  (void)state;
  memset(&r, 0, sizeof(r));
  r.reg = bw_registry_new(NULL, NULL);
  assert_int_equal(
      bw_registry_put_collector(r.reg, "self", reent_collect, &r, NULL), BW_OK);
  text = bw_registry_prometheus(r.reg, NULL);
  assert_non_null(text);
  bw_free(text);
  assert_status(r.put_rc, BW_E_INVAL);
  assert_string_equal(r.err.field, "reg");
  assert_status(r.remove_rc, BW_E_INVAL);
  assert_null(r.text);
  assert_null(r.found);
  assert_int_equal(bw_registry_collector_count(r.reg), 1);
  bw_registry_free(r.reg);
}

static void test_every_verb_answers_null_without_crashing(void **state) {
  bw_registry_t *reg = bw_registry_new(NULL, NULL);
  bw_error_t err;
  pool_t a = {1, 0, NAN, 0};
  char longname[BW_NAME_MAX + 2];
  (void)state;
  memset(longname, 'n', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  assert_status(bw_registry_put_collector(NULL, "a", pool_collect, &a, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "reg");
  assert_status(bw_registry_put_collector(reg, NULL, pool_collect, &a, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_status(bw_registry_put_collector(reg, "", pool_collect, &a, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_status(
      bw_registry_put_collector(reg, longname, pool_collect, &a, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_status(bw_registry_put_collector(reg, "a", NULL, &a, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "fn");
  assert_status(bw_registry_put_collector(reg, "a", pool_collect, &a, NULL),
                BW_OK);
  assert_status(bw_registry_put_collector(reg, "a", pool_collect, &a, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_string_equal(err.message,
                      "a collector named 'a' is already "
                      "registered");
  assert_status(bw_registry_remove_collector(NULL, "a"), BW_E_INVAL);
  assert_status(bw_registry_remove_collector(reg, NULL), BW_E_INVAL);
  assert_status(bw_registry_remove_collector(reg, "zz"), BW_E_NOTFOUND);
  assert_int_equal(bw_registry_collector_count(NULL), 0);
  assert_int_equal(bw_registry_collector_count(reg), 1);
  bw_registry_free(reg); /* frees the collector entry; a is the caller's */
  {
    bw_registry_t *empty = bw_registry_new(NULL, NULL);
    assert_status(bw_registry_remove_collector(empty, "a"), BW_E_NOTFOUND);
    assert_int_equal(bw_registry_collector_count(empty), 0);
    bw_registry_free(empty);
  }
}

/* Out of memory anywhere (putting, collecting, formatting): BW_E_NOMEM or
 * success, nothing leaked. */
static int oom_scenario(void *ctx) {
  bw_registry_t *reg = bw_registry_new(NULL, NULL);
  pool_t a = {3, 1, 21.5, 0}, b = {7, 0, NAN, 0};
  char *text;
  int rc;
  (void)ctx;
  if (reg == NULL) return BW_E_NOMEM;
  rc = bw_registry_put_collector(reg, "b", pool_collect, &b, NULL);
  if (rc == BW_OK)
    rc = bw_registry_put_collector(reg, "a", pool_collect, &a, NULL);
  if (rc == BW_OK) {
    text = bw_registry_openmetrics(reg, NULL);
    if (text == NULL) rc = BW_E_NOMEM;
    bw_free(text);
  }
  bw_registry_free(reg);
  return rc;
}

static void test_oom(void **state) {
  long failures;
  (void)state;
  oom_walk_lenient(oom_scenario, NULL, false, &failures);
  assert_true(failures > 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_collectors_share_one_family),
      cmocka_unit_test(test_no_collector_no_family),
      cmocka_unit_test(test_escaping),
      cmocka_unit_test(test_bad_samples_are_refused_naming_the_field),
      cmocka_unit_test(test_failing_collector_is_down_without_samples),
      cmocka_unit_test(test_collector_calling_its_registry),
      cmocka_unit_test(test_every_verb_answers_null_without_crashing),
      cmocka_unit_test(test_oom),
  };
  oom_install();
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The curl driver's families in the registry's exposition
 * (bw_curl_put_registry, a registry collector), after real requests on
 * 127.0.0.1 to the scripted evhttp server (http_scripted.h) on the driver's
 * event_base: the exact text for two drivers sharing each family, and the
 * NULL policy. The counts are exact (the server's script decides every
 * answer); no wall-clock duration is asserted.
 *
 * With arguments, `[--openmetrics] FILE`, the program instead writes the full
 * exposition of a registry holding one object of every kind plus two curl
 * drivers after the same requests, for promtool and the real parsers
 * (ctest: driver_curl_prometheus_promtool, _parser, _openmetrics_parser). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "breakwater/driver_curl.h"
#include "bw_test.h"
#include "http_scripted.h"
#include "pipeline_kit.h"
#include "registry_all.h"

typedef struct env_s {
  struct event_base *base;
  srv_t srv;
  bw_curl_t *a, *b;
  bw_retry_policy_t *retry;
  bw_pipeline_t *plain, *retrying, *short_timeout;
  int dones;
} env_t;

static void on_done(void *ud, const bw_curl_result_t *res) {
  (void)res;
  ((env_t *)ud)->dones++;
}

static void guard_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  *(bool *)arg = true;
}

/* Runs the loop until `want` calls are done, at most limit_ms. */
static void run_until(env_t *e, int want, int64_t limit_ms) {
  bool expired = false;
  struct timeval tv = {(time_t)(limit_ms / 1000),
                       (suseconds_t)((limit_ms % 1000) * 1000)};
  struct event *guard = evtimer_new(e->base, guard_cb, &expired);
  int i;
  assert_non_null(guard);
  evtimer_add(guard, &tv);
  for (i = 0; i < 200000 && e->dones < want && !expired; i++)
    if (event_base_loop(e->base, EVLOOP_ONCE) != 0) break;
  event_free(guard);
  assert_int_equal(e->dones, want);
}

static void get(env_t *e, bw_curl_t *h, const bw_pipeline_t *pl,
                const char *path, int port) {
  char url[128];
  bw_curl_request_t req;
  snprintf(url, sizeof(url), "http://127.0.0.1:%d%s",
           port != 0 ? port : e->srv.port, path);
  bw_curl_request_init(&req);
  req.url = url;
  assert_status(bw_curl_request(h, pl, &req, on_done, e), BW_OK);
}

/* Driver a: /ok (200), /bad (404, permanent), /flaky with three attempts
 * (503, 503, 200), a refused connection, /slow past a 100 ms attempt limit
 * (timeout). Driver b: /ok. One call at a time, so the script's order
 * holds. */
static void env_run(env_t *e) {
  bw_error_t err;
  int port = closed_port();
  memset(e, 0, sizeof(*e));
  e->base = event_base_new();
  assert_non_null(e->base);
  assert_int_equal(srv_start(&e->srv, e->base), 0);
  e->a = bw_curl_new(e->base, NULL, &err);
  e->b = bw_curl_new(e->base, NULL, &err);
  assert_non_null(e->a);
  assert_non_null(e->b);
  e->retry = bwt_constant_retry(3, 1, true, NULL);
  e->plain = bwt_pipeline("plain", 0, NULL, NULL, 5000);
  e->retrying = bwt_pipeline("retrying", 0, NULL, e->retry, 5000);
  e->short_timeout = bwt_pipeline("short", 0, NULL, NULL, 100);
  get(e, e->a, e->plain, "/ok", 0);
  run_until(e, 1, 10000);
  get(e, e->a, e->plain, "/bad", 0);
  run_until(e, 2, 10000);
  get(e, e->a, e->retrying, "/flaky", 0);
  run_until(e, 3, 10000);
  get(e, e->a, e->plain, "/ok", port);
  run_until(e, 4, 10000);
  get(e, e->a, e->short_timeout, "/slow", 0);
  run_until(e, 5, 10000);
  get(e, e->b, e->plain, "/ok", 0);
  run_until(e, 6, 10000);
}

static void env_free(env_t *e) {
  bw_curl_free(e->a);
  bw_curl_free(e->b);
  srv_stop(&e->srv);
  bw_pipeline_free(e->plain);
  bw_pipeline_free(e->retrying);
  bw_pipeline_free(e->short_timeout);
  bw_retry_policy_free(e->retry);
  event_base_free(e->base);
}

static void test_two_drivers_in_one_exposition(void **state) {
  env_t e;
  bw_registry_t *reg;
  bw_error_t err;
  char *text, *part;
  (void)state;
  env_run(&e);
  reg = bw_registry_new(NULL, &err);
  assert_non_null(reg);
  /* b first: the collectors come out in name order all the same */
  assert_status(bw_curl_put_registry(reg, "search_api", e.b, &err), BW_OK);
  assert_status(bw_curl_put_registry(reg, "payment_api", e.a, &err), BW_OK);
  text = bw_registry_prometheus(reg, NULL);
  assert_non_null(text);
  part = strstr(text, "# HELP breakwater_http_client_attempts_total");
  assert_non_null(part);
  {
    /* The expected text, family by family (C99 caps a literal at
     * 4095 bytes). */
    static const char *const fams[] = {
        "# HELP breakwater_http_client_attempts_total Attempts the pipelines "
        "asked the HTTP driver for (hedged copies not counted).\n"
        "# TYPE breakwater_http_client_attempts_total counter\n"
        "breakwater_http_client_attempts_total{name=\"payment_api\"} 7\n"
        "breakwater_http_client_attempts_total{name=\"search_api\"} 1\n",
        "# HELP breakwater_http_client_calls_in_progress Logical calls started "
        "and not ended yet.\n"
        "# TYPE breakwater_http_client_calls_in_progress gauge\n"
        "breakwater_http_client_calls_in_progress{name=\"payment_api\"} 0\n"
        "breakwater_http_client_calls_in_progress{name=\"search_api\"} 0\n",
        "# HELP breakwater_http_client_calls_total Logical calls (all their "
        "attempts) ended, by outcome.\n"
        "# TYPE breakwater_http_client_calls_total counter\n"
        "breakwater_http_client_calls_total{name=\"payment_api\",outcome="
        "\"success\"} 2\n"
        "breakwater_http_client_calls_total{name=\"payment_api\",outcome="
        "\"failure\"} 3\n"
        "breakwater_http_client_calls_total{name=\"payment_api\",outcome="
        "\"cancelled\"} 0\n"
        "breakwater_http_client_calls_total{name=\"search_api\",outcome="
        "\"success\"} 1\n"
        "breakwater_http_client_calls_total{name=\"search_api\",outcome="
        "\"failure\"} 0\n"
        "breakwater_http_client_calls_total{name=\"search_api\",outcome="
        "\"cancelled\"} 0\n",
        "# HELP breakwater_http_client_hedge_wins_total Attempts whose "
        "successful answer was a hedged copy's.\n"
        "# TYPE breakwater_http_client_hedge_wins_total counter\n"
        "breakwater_http_client_hedge_wins_total{name=\"payment_api\"} 0\n"
        "breakwater_http_client_hedge_wins_total{name=\"search_api\"} 0\n",
        "# HELP breakwater_http_client_hedges_total Hedged copies of an "
        "attempt sent.\n"
        "# TYPE breakwater_http_client_hedges_total counter\n"
        "breakwater_http_client_hedges_total{name=\"payment_api\"} 0\n"
        "breakwater_http_client_hedges_total{name=\"search_api\"} 0\n",
        "# HELP breakwater_http_client_network_calls_total Transfers the HTTP "
        "driver started on the network (hedged copies included).\n"
        "# TYPE breakwater_http_client_network_calls_total counter\n"
        "breakwater_http_client_network_calls_total{name=\"payment_api\"} 7\n"
        "breakwater_http_client_network_calls_total{name=\"search_api\"} 1\n",
        "# HELP breakwater_http_client_responses_total Responses received, by "
        "status class (other: a status outside 100..599).\n"
        "# TYPE breakwater_http_client_responses_total counter\n"
        "breakwater_http_client_responses_total{name=\"payment_api\",class="
        "\"1xx\"} 0\n"
        "breakwater_http_client_responses_total{name=\"payment_api\",class="
        "\"2xx\"} 2\n"
        "breakwater_http_client_responses_total{name=\"payment_api\",class="
        "\"3xx\"} 0\n"
        "breakwater_http_client_responses_total{name=\"payment_api\",class="
        "\"4xx\"} 1\n"
        "breakwater_http_client_responses_total{name=\"payment_api\",class="
        "\"5xx\"} 2\n"
        "breakwater_http_client_responses_total{name=\"payment_api\",class="
        "\"other\"} 0\n"
        "breakwater_http_client_responses_total{name=\"search_api\",class="
        "\"1xx\"} 0\n"
        "breakwater_http_client_responses_total{name=\"search_api\",class="
        "\"2xx\"} 1\n"
        "breakwater_http_client_responses_total{name=\"search_api\",class="
        "\"3xx\"} 0\n"
        "breakwater_http_client_responses_total{name=\"search_api\",class="
        "\"4xx\"} 0\n"
        "breakwater_http_client_responses_total{name=\"search_api\",class="
        "\"5xx\"} 0\n"
        "breakwater_http_client_responses_total{name=\"search_api\",class="
        "\"other\"} 0\n",
        "# HELP breakwater_http_client_transport_errors_total Transfers that "
        "ended without a response, by transport error kind.\n"
        "# TYPE breakwater_http_client_transport_errors_total counter\n"
        "breakwater_http_client_transport_errors_total{name=\"payment_api\","
        "kind=\"timeout\"} 1\n"
        "breakwater_http_client_transport_errors_total{name=\"payment_api\","
        "kind=\"refused\"} 1\n"
        "breakwater_http_client_transport_errors_total{name=\"payment_api\","
        "kind=\"dns\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"payment_api\","
        "kind=\"reset\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"payment_api\","
        "kind=\"tls\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"payment_api\","
        "kind=\"other\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"search_api\","
        "kind=\"timeout\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"search_api\","
        "kind=\"refused\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"search_api\","
        "kind=\"dns\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"search_api\","
        "kind=\"reset\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"search_api\","
        "kind=\"tls\"} 0\n"
        "breakwater_http_client_transport_errors_total{name=\"search_api\","
        "kind=\"other\"} 0\n"};
    char want[8192] = "";
    size_t i;
    for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
      strcat(want, fams[i]);
    assert_string_equal(part, want);
  }
  assert_non_null(
      strstr(text,
             "breakwater_registry_collector_up{name=\"payment_api\"} 1\n"
             "breakwater_registry_collector_up{name=\"search_api\"} 1\n"));
  assert_non_null(strstr(text,
                         "breakwater_registry_collector_refused_total{"
                         "name=\"payment_api\"} 0\n"));
  bw_free(text);
  /* The stats agree, and the server saw every network call. */
  {
    bw_curl_stats_t st;
    bw_curl_stats(e.a, &st);
    assert_int_equal(st.attempts, 7);
    assert_int_equal(st.network_calls, 7);
    /* a: 6 (the refused one never arrived), b: 1 */
    assert_int_equal(e.srv.nlog, 7);
  }
  /* Removed before its driver is freed: the family keeps the other. */
  assert_status(bw_registry_remove_collector(reg, "payment_api"), BW_OK);
  text = bw_registry_openmetrics(reg, NULL);
  assert_null(strstr(text, "payment_api"));
  assert_non_null(strstr(text,
                         "# TYPE breakwater_http_client_attempts "
                         "counter\n"
                         "breakwater_http_client_attempts_total{name="
                         "\"search_api\"} 1\n"));
  bw_free(text);
  bw_registry_free(reg);
  env_free(&e);
}

static int null_emit(void *ctx, const bw_metric_sample_t *s, bw_error_t *err) {
  (void)s;
  (void)err;
  (*(int *)ctx)++;
  return BW_OK;
}

static void test_every_verb_answers_null_without_crashing(void **state) {
  bw_error_t err;
  bw_registry_t *reg = bw_registry_new(NULL, &err);
  struct event_base *base = event_base_new();
  bw_curl_t *h = bw_curl_new(base, NULL, &err);
  int n = 0;
  (void)state;
  assert_non_null(h);
  assert_status(bw_curl_put_registry(reg, "x", NULL, &err), BW_E_INVAL);
  assert_string_equal(err.field, "http");
  assert_status(bw_curl_put_registry(NULL, "x", h, &err), BW_E_INVAL);
  assert_string_equal(err.field, "reg");
  assert_status(bw_curl_put_registry(reg, NULL, h, &err), BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_status(bw_curl_put_registry(reg, "x", h, NULL), BW_OK);
  assert_status(bw_curl_put_registry(reg, "x", h, &err), BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_status(bw_curl_collect(NULL, null_emit, &n), BW_E_INVAL);
  assert_status(bw_curl_collect(h, NULL, &n), BW_E_INVAL);
  assert_int_equal(n, 0);
  assert_status(bw_curl_collect(h, null_emit, &n), BW_OK);
  assert_int_equal(n, 4 + 6 + 6 + 3 + 1); /* every sample, none refused */
  assert_status(bw_registry_remove_collector(reg, "x"), BW_OK);
  bw_registry_free(reg);
  bw_curl_free(h);
  event_base_free(base);
}

/* [--openmetrics] FILE: the full exposition, for the checkers. */
static int expo(int argc, char **argv) {
  reg_all_t all;
  env_t e;
  bw_error_t err;
  bool om = argc > 2 && strcmp(argv[1], "--openmetrics") == 0;
  const char *path = argv[argc - 1];
  FILE *fp;
  int rc;
  env_run(&e);
  reg_all_init(&all);
  if (bw_curl_put_registry(all.reg, "payment_api", e.a, &err) != BW_OK ||
      bw_curl_put_registry(all.reg, "search_api", e.b, &err) != BW_OK) {
    fprintf(stderr, "%s: %s\n", err.field, err.message);
    return 1;
  }
  fp = fopen(path, "w");
  if (fp == NULL) {
    perror(path);
    return 1;
  }
  rc = om ? bw_registry_write_openmetrics(all.reg, fp)
          : bw_registry_write_prometheus(all.reg, fp);
  if (fclose(fp) != 0) rc = BW_E_IO;
  reg_all_free(&all); /* the registry first: its collectors borrow a, b */
  env_free(&e);
  return rc == BW_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_drivers_in_one_exposition),
      cmocka_unit_test(test_every_verb_answers_null_without_crashing),
  };
  if (argc > 1) return expo(argc, argv);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Concurrency: the curl driver's counters read by a registry scrape on
 * another thread while the loop's thread runs requests on 127.0.0.1 (the
 * scripted evhttp server on the driver's event_base).
 *
 * Laws checked:
 *   monotonic: every scrape's attempts and network calls are at least the
 *              previous scrape's (a counter never goes back, no torn read);
 *   coherent:  in every scrape, successes <= network calls <= attempts (an
 *              attempt is counted when the pipeline asks for it, its
 *              network call once curl took it, its success at the answer)
 *              and no failure;
 *   final:     after the loop, the scrape shows exactly REQUESTS attempts,
 *              network calls and successes, and the server saw REQUESTS
 *              requests. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include <event2/event.h>

#include "breakwater/driver_curl.h"
#include "bw_test.h"
#include "http_scripted.h"
#include "pipeline_kit.h"

#define REQUESTS 200

typedef struct shared_s {
  bw_registry_t *reg;
  atomic_bool done;
  atomic_long scrapes;
  atomic_long bad;
} shared_t;

static int done_count;

static void on_done(void *ud, const bw_curl_result_t *res) {
  (void)ud;
  (void)res;
  done_count++;
}

/* The value of the sample line starting with `prefix`, or -1. */
static long value_of(const char *text, const char *prefix) {
  const char *p = strstr(text, prefix);
  if (p == NULL) return -1;
  return strtol(p + strlen(prefix), NULL, 10);
}

static void *scraper(void *arg) {
  shared_t *sh = arg;
  long last_attempts = 0, last_calls = 0;
  int i;
  for (i = 0; i < 100000 && !atomic_load(&sh->done); i++) {
    char *text = bw_registry_prometheus(sh->reg, NULL);
    long attempts, calls, ok, failed;
    if (text == NULL) {
      atomic_fetch_add(&sh->bad, 1);
      continue;
    }
    attempts =
        value_of(text, "breakwater_http_client_attempts_total{name=\"loop\"} ");
    calls = value_of(
        text, "breakwater_http_client_network_calls_total{name=\"loop\"} ");
    ok = value_of(text,
                  "breakwater_http_client_calls_total{name=\"loop\","
                  "outcome=\"success\"} ");
    failed = value_of(text,
                      "breakwater_http_client_calls_total{name=\"loop\","
                      "outcome=\"failure\"} ");
    if (attempts < last_attempts || calls < last_calls || calls > attempts ||
        ok < 0 || ok > calls || failed != 0)
      atomic_fetch_add(&sh->bad, 1);
    last_attempts = attempts;
    last_calls = calls;
    atomic_fetch_add(&sh->scrapes, 1);
    bw_free(text);
  }
  return NULL;
}

static void test_scrape_while_the_loop_runs(void **state) {
  struct event_base *base = event_base_new();
  srv_t srv;
  bw_error_t err;
  bw_curl_t *h;
  bw_pipeline_t *pl;
  shared_t sh;
  pthread_t th;
  char url[96], *text;
  int i, turns;
  (void)state;
  assert_non_null(base);
  assert_int_equal(srv_start(&srv, base), 0);
  h = bw_curl_new(base, NULL, &err);
  assert_non_null(h);
  pl = bwt_pipeline("loop", 0, NULL, NULL, 5000);
  memset(&sh, 0, sizeof(sh));
  sh.reg = bw_registry_new(NULL, &err);
  assert_status(bw_curl_put_registry(sh.reg, "loop", h, &err), BW_OK);
  assert_int_equal(pthread_create(&th, NULL, scraper, &sh), 0);
  /* The scraper is running before the first request: otherwise, on a
   * loaded machine, the requests could all be done before it is scheduled
   * and it would read nothing while the loop runs. */
  for (i = 0; i < 10000000 && atomic_load(&sh.scrapes) == 0; i++)
    sched_yield();
  assert_true(atomic_load(&sh.scrapes) > 0);
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", srv.port);
  for (i = 0; i < REQUESTS; i++) {
    bw_curl_request_t req;
    bw_curl_request_init(&req);
    req.url = url;
    assert_status(bw_curl_request(h, pl, &req, on_done, NULL), BW_OK);
    /* a few at a time: the loop runs while the scraper reads */
    if (i % 8 == 7)
      for (turns = 0; turns < 100000 && done_count <= i - 8; turns++)
        event_base_loop(base, EVLOOP_ONCE);
  }
  for (turns = 0; turns < 1000000 && done_count < REQUESTS; turns++)
    event_base_loop(base, EVLOOP_ONCE);
  atomic_store(&sh.done, true);
  pthread_join(th, NULL);
  assert_int_equal(done_count, REQUESTS);
  assert_int_equal(atomic_load(&sh.bad), 0);
  assert_true(atomic_load(&sh.scrapes) > 0);
  text = bw_registry_prometheus(sh.reg, NULL);
  assert_int_equal(
      value_of(text, "breakwater_http_client_attempts_total{name=\"loop\"} "),
      REQUESTS);
  assert_int_equal(
      value_of(text,
               "breakwater_http_client_network_calls_total{name=\"loop\"} "),
      REQUESTS);
  assert_int_equal(value_of(text,
                            "breakwater_http_client_calls_total{name="
                            "\"loop\",outcome=\"success\"} "),
                   REQUESTS);
  bw_free(text);
  assert_int_equal(srv.nlog, REQUESTS);
  bw_registry_free(sh.reg);
  bw_curl_free(h);
  bw_pipeline_free(pl);
  srv_stop(&srv);
  event_base_free(base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scrape_while_the_loop_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

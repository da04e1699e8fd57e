/* http_easy — your own libcurl easy handle through a pipeline, with no
 * event loop: bw_curl_easy_perform (breakwater/curl_easy.h, the curl_easy
 * component, which needs libcurl and the core only).
 *
 * The partner (tools/partner_server.h) runs in-process on its own thread
 * and event loop, on a free 127.0.0.1 port, as in http_call.c. The
 * pipeline is the standard preset (breakwater/http_standard.h: a 30 s
 * deadline, an adaptive limit, a breaker outside a budgeted retry that
 * honours Retry-After and pushback, a per-attempt timeout). The region
 * between the snippet markers below is the README's easy-handle example,
 * byte for byte (after its indentation): scripts/check_snippets.sh, run by
 * ctest, compares the two.
 *
 *   http_easy
 */
#include <event2/event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "breakwater/breakwater.h"
#include "breakwater/curl_easy.h"
#include "partner_server.h"

typedef struct server_s {
  struct event_base *base;
  struct event *tick;
  atomic_bool stop;
} server_t;

static void on_tick(evutil_socket_t fd, short what, void *arg) {
  server_t *s = arg;
  (void)fd;
  (void)what;
  if (atomic_load(&s->stop)) event_base_loopbreak(s->base);
}

static void *serve(void *arg) {
  server_t *s = arg;
  event_base_dispatch(s->base);
  return NULL;
}

/* One charge, as the README shows it. */
static int charge(const char *url) {
  /* snippet:begin */
  bw_http_standard_config_t cfg; /* Polly's standard handler, and more */
  bw_http_standard_config_init(&cfg);
  cfg.attempt_timeout_ms = 400; /* every field can be overridden */
  bw_http_standard_t *std = bw_http_standard_new(&cfg, NULL);
  const bw_pipeline_t *pl = bw_http_standard_pipeline(std);

  CURL *easy = curl_easy_init(); /* your handle: URL, method, body, TLS */
  curl_easy_setopt(easy, CURLOPT_URL, url);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "{\"amount_cents\":1000}");
  bw_curl_result_t res;
  int failure = bw_curl_easy_perform(pl, easy, &res);
  printf("%s, HTTP %d\n", bw_failure_name(failure), res.status);
  bw_curl_result_clear(&res);
  curl_easy_cleanup(easy);
  bw_http_standard_free(std);
  /* snippet:end */
  return failure;
}

int main(void) {
  server_t srv = {0};
  bw_partner_server_config_t pc;
  bw_partner_server_t *partner = NULL;
  bw_partner_server_stats_t ps;
  struct timeval ten_ms = {0, 10000};
  pthread_t thread;
  bw_error_t err;
  char url[64];
  int status = 1;

  memset(&err, 0, sizeof(err));
  atomic_init(&srv.stop, false);
  bw_partner_server_config_init(&pc);
  pc.partner.ok_min_ms = 5;
  pc.partner.ok_max_ms = 10;
  if ((srv.base = event_base_new()) == NULL ||
      (srv.tick = event_new(srv.base, -1, EV_PERSIST, on_tick, &srv)) == NULL ||
      event_add(srv.tick, &ten_ms) != 0) {
    fprintf(stderr, "http_easy: cannot set up libevent\n");
    goto out;
  }
  if ((partner = bw_partner_server_new(srv.base, &pc, &err)) == NULL) {
    fprintf(stderr, "http_easy: %s\n", err.message);
    goto out;
  }
  snprintf(url, sizeof(url), "http://127.0.0.1:%u/charges",
           (unsigned)bw_partner_server_port(partner));
  if (pthread_create(&thread, NULL, serve, &srv) != 0) {
    fprintf(stderr, "http_easy: cannot start the server\n");
    goto out;
  }
  status = charge(url) == BW_FAILURE_NONE ? 0 : 1;
  atomic_store(&srv.stop, true);
  pthread_join(thread, NULL);
  bw_partner_server_stats(partner, &ps);
  printf("partner: %llu request(s), %llu with an X-Timeout-Budget\n",
         (unsigned long long)ps.network_calls,
         (unsigned long long)ps.requests_with_budget);
  if (ps.requests_with_budget != ps.network_calls) status = 1;
out:
  bw_partner_server_free(partner);
  if (srv.tick != NULL) event_free(srv.tick);
  if (srv.base != NULL) event_base_free(srv.base);
  return status;
}

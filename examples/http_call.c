/* http_call — the Polly lab over real HTTP on loopback: the payment
 * partner as an in-process server, and a handful of charges made with
 * bw_http_call through the pipeline deadline -> breaker -> retry -> timeout.
 *
 * The partner (tools/partner_server.h) runs on its own thread and event
 * loop on a free 127.0.0.1 port. It serves ONE request at a time normally
 * (capacity 1, 100-150 ms); above that it answers 429 with Retry-After: 1
 * after 50-80 ms. It keeps a request in flight for its whole latency even
 * when the client has already hung up — the Polly lab's trap: timeouts that
 * retry at once overload the partner they mean to spare.
 *
 * The pipeline: a 3 s deadline for the whole call; a breaker that opens
 * after 2 failed calls for 300 ms; the "polly-lab" retry preset (1 + 2
 * retries, decorrelated jitter) with base_ms scaled down to 50 so the
 * example stays short, honouring Retry-After; 400 ms per attempt.
 *
 *   1. an idle partner: 200 at the first attempt;
 *   2. the partner still busy with a request whose client hung up: 429,
 *      then a retry after the Retry-After second: 200;
 *   3-4. the partner's address refuses connections (nothing listens): each
 *      call retries, runs out of attempts; two such calls open the breaker;
 *   5. the partner is back, but the breaker is open: refused without any
 *      network attempt;
 *   6. after the break, a probe: 200, and the breaker closes.
 * Real time, so latencies vary; the run takes about 2 s.
 *
 *   http_call
 */
#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "breakwater/breakwater.h"
#include "breakwater/driver_curl.h"
#include "breakwater/pipeline.h"
#include "partner_server.h"

static const char charge[] = "{\"order_id\":\"o-1\",\"amount_cents\":1000}";

/* The server thread: runs the partner's loop until asked to stop. A 10 ms
 * timer on the loop's own thread checks the flag (the loop is not
 * thread-safe; only this flag crosses threads). */
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

/* A loopback port where nothing listens: bound, then closed. */
static unsigned dead_port(void) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  unsigned port = 0;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* http.h has no name function for transport kinds (yet). */
static const char *transport_name(bw_transport_t t) {
  static const char *const names[] = {"none",  "timeout", "refused", "dns",
                                      "reset", "tls",     "other"};
  return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

/* One charge through `pl`, printed. */
static void call(const bw_pipeline_t *pl, const char *url, const char *what,
                 const char *n) {
  bw_curl_request_t req;
  bw_curl_result_t res;
  bw_error_t err;
  int rc;

  bw_curl_request_init(&req);
  req.method = "POST";
  req.url = url;
  req.body = charge;
  req.body_len = sizeof(charge) - 1;
  rc = bw_http_call(pl, &req, &res, &err);
  if (rc < 0) {
    printf("%s %-34s error: %s\n", n, what, err.message);
    return;
  }
  printf(
      "%s %-34s status %3d, attempts %u, network %u, waited %4lld ms, "
      "failure %s%s%s\n",
      n, what, res.status, res.attempts, res.network_attempts,
      (long long)res.waited_ms, bw_failure_name(res.failure),
      res.transport != BW_TRANSPORT_NONE ? ", transport " : "",
      res.transport != BW_TRANSPORT_NONE ? transport_name(res.transport) : "");
  bw_curl_result_clear(&res);
}

int main(void) {
  server_t srv = {0};
  bw_partner_server_config_t pc;
  bw_partner_server_t *partner = NULL;
  bw_partner_server_stats_t ps;
  bw_breaker_config_t bc;
  bw_retry_config_t rc;
  bw_pipeline_config_t plc;
  bw_breaker_t *breaker = NULL;
  bw_retry_policy_t *retry = NULL;
  bw_pipeline_t *pl = NULL, *hangup = NULL;
  pthread_t thread;
  bool running = false;
  char url[64], down_url[64];
  struct timeval ten_ms = {0, 10000};
  bw_error_t err;
  int status = 1;

  memset(&err, 0, sizeof(err));
  atomic_init(&srv.stop, false);
  /* The partner: capacity 1, short latencies, 429 + Retry-After: 1 above. */
  bw_partner_server_config_init(&pc);
  pc.partner.capacity = 1;
  pc.partner.ok_min_ms = 100;
  pc.partner.ok_max_ms = 150;
  pc.partner.slow_min_ms = 50;
  pc.partner.slow_max_ms = 80;
  pc.partner.throttle_ratio = 1.0;
  pc.partner.retry_after_s = 1;
  if ((srv.base = event_base_new()) == NULL ||
      (srv.tick = event_new(srv.base, -1, EV_PERSIST, on_tick, &srv)) == NULL ||
      event_add(srv.tick, &ten_ms) != 0) {
    snprintf(err.message, sizeof(err.message), "cannot set up libevent");
    goto out;
  }
  if ((partner = bw_partner_server_new(srv.base, &pc, &err)) == NULL) goto out;
  snprintf(url, sizeof(url), "http://127.0.0.1:%u/charges",
           (unsigned)bw_partner_server_port(partner));
  snprintf(down_url, sizeof(down_url), "http://127.0.0.1:%u/charges",
           dead_port());
  if (pthread_create(&thread, NULL, serve, &srv) != 0) {
    snprintf(err.message, sizeof(err.message), "cannot start the server");
    goto out;
  }
  running = true;

  bw_breaker_config_init(&bc);
  bc.name = "partner";
  bc.failure_threshold = 2;
  bc.break_ms = 300;
  bw_retry_config_preset(&rc, "polly-lab");
  rc.base_ms = 50; /* scaled down: the preset's 200 ms makes a slow demo */
  if ((breaker = bw_breaker_new(&bc, &err)) == NULL ||
      (retry = bw_retry_policy_new(&rc, &err)) == NULL)
    goto out;
  bw_pipeline_config_init(&plc);
  plc.name = "charge";
  bw_pipeline_add_deadline(&plc, 3000);
  bw_pipeline_add_breaker(&plc, breaker);
  bw_pipeline_add_retry(&plc, retry);
  bw_pipeline_add_timeout(&plc, 400);
  if ((pl = bw_pipeline_new(&plc, &err)) == NULL) goto out;
  /* An impatient client for step 2: one attempt, gives up after 20 ms. */
  bw_pipeline_config_init(&plc);
  plc.name = "impatient";
  bw_pipeline_add_timeout(&plc, 20);
  if ((hangup = bw_pipeline_new(&plc, &err)) == NULL) goto out;

  printf(
      "partner on %s (capacity 1); pipeline: deadline 3 s -> breaker -> "
      "retry (%s) -> timeout 400 ms\n",
      url, bw_retry_policy_name(retry));
  call(pl, url, "idle partner", "1.");
  call(hangup, url, "an impatient client hangs up", "-");
  call(pl, url, "partner busy with that request", "2.");
  call(pl, down_url, "address refuses connections", "3.");
  call(pl, down_url, "address refuses connections", "4.");
  printf("   breaker %s\n", bw_state_name(bw_breaker_state(breaker)));
  call(pl, url, "partner back, breaker open", "5.");
  sleep_ms(bc.break_ms + 50);
  call(pl, url, "after the break: a probe", "6.");
  printf("   breaker %s\n", bw_state_name(bw_breaker_state(breaker)));
  status = 0;
out:
  if (running) {
    atomic_store(&srv.stop, true);
    pthread_join(thread, NULL);
  }
  if (partner != NULL) {
    bw_partner_server_stats(partner, &ps);
    printf(
        "partner: %llu requests, %llu answered 200, %llu answered 429, "
        "%llu to clients that had hung up\n",
        (unsigned long long)ps.network_calls,
        (unsigned long long)ps.replied_200, (unsigned long long)ps.replied_429,
        (unsigned long long)ps.abandoned);
  }
  if (status != 0) fprintf(stderr, "http_call: %s\n", err.message);
  bw_pipeline_free(hangup);
  bw_pipeline_free(pl);
  bw_retry_policy_free(retry);
  bw_breaker_free(breaker);
  bw_partner_server_free(partner);
  if (srv.tick != NULL) event_free(srv.tick);
  if (srv.base != NULL) event_base_free(srv.base);
  return status;
}

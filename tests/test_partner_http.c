/* Specification tests: the Polly lab's partner as a real HTTP server
 * (tools/partner_server.h), the breakwater command's flag parser
 * (tools/cli.h) and the `breakwater partner` command itself.
 *
 * The server runs on an event_base that the test drives from its own
 * thread, interleaved with a libcurl multi handle (an independent HTTP
 * client): one thread, no locks, and every loop is bounded in iterations and
 * in wall time. Latencies are kept tiny; where a test needs a request to
 * stay in flight while others arrive, the first request's latency is long
 * and the test waits for the server to have admitted it (its counters are
 * read directly) before sending the others. Real time is used, never
 * asserted. */
/* Built for real only when tools/CMakeLists.txt found libevent and libcurl
 * and defined BW_PARTNER_HTTP_TEST; otherwise a stub that says so. */
#ifndef BW_PARTNER_HTTP_TEST
#include <stdio.h>
/* 77: ctest reports the test as skipped (SKIP_RETURN_CODE), not passed. */
int main(void) {
  puts("test_partner_http: skipped (breakwater_partner or libcurl not built)");
  return 77;
}
#else
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "bw_test.h"
#include "cli.h"
#include "partner_server.h"

#define MAX_XFERS 64
#define PUMP_MAX_MS 15000

typedef struct xfer_s {
  CURL *h;
  bool done;
  CURLcode result;
  long status;
  char body[8192];
  size_t blen;
  char retry_after[32];
  bool has_retry_after;
  char allow[64];
  char ctype[96];
  struct curl_slist *headers;
} xfer_t;

typedef struct env_s {
  struct event_base *base;
  bw_partner_server_t *srv;
  CURLM *multi;
  uint16_t port; /* where requests go (the server's, or a child's) */
  xfer_t xf[MAX_XFERS];
  size_t nxf;
} env_t;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->base = event_base_new();
  e->multi = curl_multi_init();
  if (e->base == NULL || e->multi == NULL) return -1;
  *state = e;
  return 0;
}

static void xfer_release(env_t *e, xfer_t *x) {
  if (x->h != NULL) {
    curl_multi_remove_handle(e->multi, x->h);
    curl_easy_cleanup(x->h);
    x->h = NULL;
  }
  curl_slist_free_all(x->headers);
  x->headers = NULL;
}

static int teardown(void **state) {
  env_t *e = *state;
  size_t i;
  for (i = 0; i < e->nxf; i++)
    xfer_release(e, &e->xf[i]);
  bw_partner_server_free(e->srv);
  curl_multi_cleanup(e->multi);
  event_base_free(e->base);
  free(e);
  return 0;
}

/* Small, fast partner for tests: ok 1-2 ms, slow 5-10 ms. */
static void fast_config(bw_partner_server_config_t *cfg) {
  bw_partner_server_config_init(cfg);
  cfg->partner.ok_min_ms = 1;
  cfg->partner.ok_max_ms = 2;
  cfg->partner.slow_min_ms = 5;
  cfg->partner.slow_max_ms = 10;
}

static void start(env_t *e, const bw_partner_server_config_t *cfg) {
  bw_error_t err;
  e->srv = bw_partner_server_new(e->base, cfg, &err);
  if (e->srv == NULL) fail_msg("bw_partner_server_new: %s", err.message);
  e->port = bw_partner_server_port(e->srv);
  assert_true(e->port != 0);
}

static bw_partner_server_stats_t stats(env_t *e) {
  bw_partner_server_stats_t s;
  bw_partner_server_stats(e->srv, &s);
  return s;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg) {
  xfer_t *x = arg;
  size_t len = size * n, room = sizeof(x->body) - 1 - x->blen;
  size_t k = len < room ? len : room;
  memcpy(x->body + x->blen, p, k);
  x->blen += k;
  x->body[x->blen] = '\0';
  return len;
}

/* Copies the value of header `name` from a header line, if it is that one. */
static bool header_value(const char *line, size_t len, const char *name,
                         char *out, size_t size) {
  size_t nl = strlen(name), i, j = 0;
  if (len <= nl + 1 || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
    return false;
  i = nl + 1;
  while (i < len && line[i] == ' ')
    i++;
  while (i < len && line[i] != '\r' && line[i] != '\n' && j + 1 < size)
    out[j++] = line[i++];
  out[j] = '\0';
  return true;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg) {
  xfer_t *x = arg;
  size_t len = size * n;
  if (header_value(p, len, "Retry-After", x->retry_after,
                   sizeof(x->retry_after)))
    x->has_retry_after = true;
  header_value(p, len, "Allow", x->allow, sizeof(x->allow));
  header_value(p, len, "Content-Type", x->ctype, sizeof(x->ctype));
  return len;
}

/* Starts a request (method "GET", "POST", "PUT", ...). `header` is extra
 * request header lines (separated by '\n') or NULL. timeout_ms 0 = curl's
 * default (none). */
static xfer_t *xfer_start(env_t *e, const char *method, const char *path,
                          const char *header, long timeout_ms) {
  xfer_t *x;
  char url[256];
  if (e->nxf >= MAX_XFERS) fail_msg("too many transfers in one test");
  x = &e->xf[e->nxf++];
  memset(x, 0, sizeof(*x));
  x->h = curl_easy_init();
  assert_non_null(x->h);
  snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", (unsigned)e->port, path);
  curl_easy_setopt(x->h, CURLOPT_URL, url);
  curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
  curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(x->h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(x->h, CURLOPT_HEADERDATA, x);
  /* A fresh connection per request: concurrent requests really are
   * concurrent at the server. */
  curl_easy_setopt(x->h, CURLOPT_FRESH_CONNECT, 1L);
  curl_easy_setopt(x->h, CURLOPT_FORBID_REUSE, 1L);
  curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS,
                   timeout_ms > 0 ? timeout_ms : (long)PUMP_MAX_MS);
  if (strcmp(method, "POST") == 0) {
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDS,
                     "{\"order_id\":\"x\",\"amount_cents\":1000}");
    x->headers =
        curl_slist_append(x->headers, "Content-Type: application/json");
  } else if (strcmp(method, "HEAD") == 0) {
    curl_easy_setopt(x->h, CURLOPT_NOBODY, 1L);
  } else if (strcmp(method, "GET") != 0) {
    curl_easy_setopt(x->h, CURLOPT_CUSTOMREQUEST, method);
  }
  /* `header` may hold several lines, separated by '\n' */
  while (header != NULL && header[0] != '\0') {
    const char *nl = strchr(header, '\n');
    size_t len = nl != NULL ? (size_t)(nl - header) : strlen(header);
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)len, header);
    x->headers = curl_slist_append(x->headers, line);
    header = nl != NULL ? nl + 1 : NULL;
  }
  if (x->headers != NULL)
    curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, x->headers);
  assert_int_equal(curl_multi_add_handle(e->multi, x->h), CURLM_OK);
  return x;
}

static void collect(env_t *e) {
  CURLMsg *m;
  int left;
  while ((m = curl_multi_info_read(e->multi, &left)) != NULL) {
    xfer_t *x = NULL;
    if (m->msg != CURLMSG_DONE) continue;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
    x->result = m->data.result;
    curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &x->status);
    x->done = true;
    xfer_release(e, x);
  }
}

typedef bool (*pred_fn)(env_t *e, void *arg);

/* Runs the client and the server's loop until pred holds; false when it did
 * not within max_ms (or 200000 rounds). */
static bool pump_until(env_t *e, pred_fn pred, void *arg, int64_t max_ms) {
  int64_t t0 = now_ms();
  int i, running;
  for (i = 0; i < 200000; i++) {
    curl_multi_perform(e->multi, &running);
    collect(e);
    if (e->base != NULL) event_base_loop(e->base, EVLOOP_NONBLOCK);
    if (pred(e, arg)) return true;
    if (now_ms() - t0 > max_ms) return false;
    curl_multi_poll(e->multi, NULL, 0, 1, NULL);
  }
  return false;
}

static bool xfer_done(env_t *e, void *arg) {
  (void)e;
  return ((xfer_t *)arg)->done;
}

static bool all_done(env_t *e, void *arg) {
  size_t i;
  (void)arg;
  for (i = 0; i < e->nxf; i++)
    if (!e->xf[i].done) return false;
  return true;
}

static bool calls_at_least(env_t *e, void *arg) {
  return stats(e).network_calls >= *(uint64_t *)arg;
}

static bool nothing_in_flight(env_t *e, void *arg) {
  (void)arg;
  return stats(e).partner.in_flight == 0;
}

static xfer_t *http(env_t *e, const char *method, const char *path,
                    const char *header) {
  xfer_t *x = xfer_start(e, method, path, header, 0);
  if (!pump_until(e, xfer_done, x, PUMP_MAX_MS))
    fail_msg("%s %s did not finish", method, path);
  if (x->result != CURLE_OK)
    fail_msg("%s %s: %s", method, path, curl_easy_strerror(x->result));
  return x;
}

/* ---- endpoints ------------------------------------------------------------
 */

static void test_health_answers_ok(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  xfer_t *x;
  fast_config(&cfg);
  start(e, &cfg);
  x = http(e, "GET", "/health", NULL);
  assert_i64_eq(x->status, 200);
  assert_string_equal(x->body, "ok\n");
  x = http(e, "GET", "/saude", NULL); /* the Polly lab's name */
  assert_i64_eq(x->status, 200);
  x = http(e, "HEAD", "/health", NULL);
  assert_i64_eq(x->status, 200);
}

static void test_charges_under_capacity_are_200(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_partner_server_stats_t s;
  int i;
  fast_config(&cfg);
  start(e, &cfg);
  for (i = 0; i < 5; i++) {
    xfer_t *x = http(e, "POST", i == 4 ? "/cobrancas" : "/charges", NULL);
    assert_i64_eq(x->status, 200);
    assert_contains(x->body, "\"status\":\"ok\"");
    assert_contains(x->ctype, "application/json");
    assert_false(x->has_retry_after);
  }
  s = stats(e);
  assert_u64_eq(s.network_calls, 5);
  assert_u64_eq(s.replied_200, 5);
  assert_u64_eq(s.replied_429, 0);
  assert_u64_eq(s.partner.received, 5);
  assert_u64_eq(s.partner.over_capacity, 0);
  assert_u64_eq(s.partner.in_flight, 0);
  assert_u64_eq(s.partner.completed, 5);
}

/* Capacity 1, throttle_ratio 1: a first request held in flight (1.5 s),
 * then 7 more. The first is under capacity (200); every request that arrives
 * while it is in flight is over capacity and, at ratio 1, a 429. */
static void overload(env_t *e, int64_t retry_after_s, int *n200, int *n429) {
  bw_partner_server_config_t cfg;
  bw_partner_server_stats_t s;
  uint64_t one = 1;
  xfer_t *first;
  size_t i;
  fast_config(&cfg);
  cfg.partner.capacity = 1;
  cfg.partner.throttle_ratio = 1.0;
  cfg.partner.retry_after_s = retry_after_s;
  cfg.partner.ok_min_ms = 1500;
  cfg.partner.ok_max_ms = 1500;
  start(e, &cfg);
  first = xfer_start(e, "POST", "/charges", NULL, 0);
  assert_true(pump_until(e, calls_at_least, &one, PUMP_MAX_MS));
  for (i = 0; i < 7; i++)
    xfer_start(e, "POST", "/charges", NULL, 0);
  assert_true(pump_until(e, all_done, NULL, PUMP_MAX_MS));
  assert_true(pump_until(e, nothing_in_flight, NULL, PUMP_MAX_MS));
  assert_int_equal(first->result, CURLE_OK);
  assert_i64_eq(first->status, 200);
  *n200 = *n429 = 0;
  for (i = 0; i < e->nxf; i++) {
    xfer_t *x = &e->xf[i];
    assert_int_equal(x->result, CURLE_OK);
    if (x->status == 429) {
      (*n429)++;
      assert_contains(x->body, "\"status\":\"throttled\"");
      if (retry_after_s >= 0) {
        char want[32];
        snprintf(want, sizeof(want), "%lld", (long long)retry_after_s);
        assert_true(x->has_retry_after);
        assert_string_equal(x->retry_after, want);
      } else {
        assert_false(x->has_retry_after);
      }
    } else {
      assert_i64_eq(x->status, 200);
      assert_false(x->has_retry_after);
      (*n200)++;
    }
  }
  s = stats(e);
  assert_true(*n429 >= 1);
  assert_i64_eq(*n200 + *n429, 8);
  assert_u64_eq(s.network_calls, 8);
  assert_u64_eq(s.replied_429, (uint64_t)*n429);
  assert_u64_eq(s.replied_200, (uint64_t)*n200);
  assert_u64_eq(s.partner.status_429, (uint64_t)*n429);
  /* ratio 1: every request over capacity is throttled */
  assert_u64_eq(s.partner.over_capacity, (uint64_t)*n429);
  assert_true(s.partner.max_in_flight >= 2);
  assert_u64_eq(s.partner.in_flight, 0);
}

static void test_over_capacity_throttles_with_retry_after(void **state) {
  int n200, n429;
  overload(*state, 3, &n200, &n429);
}

static void test_no_retry_after_unless_configured(void **state) {
  int n200, n429;
  overload(*state, -1, &n200, &n429);
}

static void test_unknown_path_404_wrong_method_405(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_partner_server_stats_t s;
  xfer_t *x;
  fast_config(&cfg);
  start(e, &cfg);
  x = http(e, "GET", "/nope", NULL);
  assert_i64_eq(x->status, 404);
  x = http(e, "POST", "/charge", NULL);
  assert_i64_eq(x->status, 404);
  x = http(e, "GET", "/charges", NULL);
  assert_i64_eq(x->status, 405);
  assert_string_equal(x->allow, "POST");
  x = http(e, "DELETE", "/health", NULL);
  assert_i64_eq(x->status, 405);
  assert_string_equal(x->allow, "GET, HEAD");
  x = http(e, "PATCH", "/metrics", NULL);
  assert_i64_eq(x->status, 405);
  x = http(e, "GET", "/reset", NULL);
  assert_i64_eq(x->status, 405);
  s = stats(e);
  assert_u64_eq(s.not_found, 2);
  assert_u64_eq(s.method_not_allowed, 4);
  assert_u64_eq(s.network_calls, 0); /* a GET /charges is not a charge */
}

/* ---- metrics --------------------------------------------------------------
 */

/* Checks every line is Prometheus text (comment or `name{labels} value`)
 * and every sample's metric has a TYPE line; returns the value of the
 * sample whose text before the value is exactly `series`, or -1. */
static double metric(const char *text, const char *series) {
  const char *line = text;
  double found = -1;
  while (*line != '\0') {
    const char *end = strchr(line, '\n');
    size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
    char buf[512];
    assert_true(len < sizeof(buf));
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (len > 0) {
      if (buf[0] == '#') {
        assert_true(strncmp(buf, "# HELP breakwater_partner_", 26) == 0 ||
                    strncmp(buf, "# TYPE breakwater_partner_", 26) == 0);
        if (strncmp(buf, "# TYPE ", 7) == 0)
          assert_true(strstr(buf, " counter") != NULL ||
                      strstr(buf, " gauge") != NULL);
      } else {
        char *sp = strrchr(buf, ' ');
        char name[128], type_line[160];
        size_t k = 0;
        double v;
        char *vend;
        assert_non_null(sp);
        *sp = '\0';
        while (buf[k] != '\0' && buf[k] != '{' && k + 1 < sizeof(name)) {
          char c = buf[k];
          assert_true((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '_' || c == ':');
          name[k] = c;
          k++;
        }
        name[k] = '\0';
        if (buf[k] == '{') assert_true(buf[strlen(buf) - 1] == '}');
        snprintf(type_line, sizeof(type_line), "# TYPE %s ", name);
        assert_non_null(strstr(text, type_line));
        v = strtod(sp + 1, &vend);
        assert_true(vend != sp + 1 && *vend == '\0');
        if (strcmp(buf, series) == 0) found = v;
      }
    }
    line = end != NULL ? end + 1 : line + len;
  }
  return found;
}

static void test_metrics_count_the_requests(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  xfer_t *x;
  char direct[4096];
  int need;
  fast_config(&cfg);
  cfg.partner.capacity = 77;
  start(e, &cfg);
  x = http(e, "POST", "/charges", NULL);
  assert_i64_eq(x->status, 200);
  x = http(e, "POST", "/charges", "X-Timeout-Budget: 2.5");
  assert_i64_eq(x->status, 200);
  x = http(e, "POST", "/charges", "X-Timeout-Budget: soon");
  assert_i64_eq(x->status, 200);
  http(e, "GET", "/nope", NULL);
  http(e, "GET", "/charges", NULL);
  x = http(e, "GET", "/metrics", NULL);
  assert_i64_eq(x->status, 200);
  assert_contains(x->ctype, "text/plain");
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_requests_total{status=\"200\"}"), 3,
      0);
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_requests_total{status=\"429\"}"), 0,
      0);
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_requests_total{status=\"500\"}"), 0,
      0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_network_calls_total"), 3,
                0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_in_flight"), 0, 0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_max_in_flight"), 1, 0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_over_capacity_total"), 0,
                0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_capacity"), 77, 0);
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_requests_with_budget_total"), 1, 0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_bad_budget_total"), 1, 0);
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_errors_total{status=\"404\"}"), 1, 0);
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_errors_total{status=\"405\"}"), 1, 0);
  /* The C API gives the same text; a short buffer is cut, NUL-terminated,
   * and the needed length is returned. */
  need = bw_partner_server_metrics(e->srv, direct, sizeof(direct));
  assert_true(need > 0 && (size_t)need < sizeof(direct));
  assert_string_equal(direct, x->body);
  assert_i64_eq(bw_partner_server_metrics(e->srv, direct, 10), need);
  assert_i64_eq(strlen(direct), 9);
  assert_i64_eq(bw_partner_server_metrics(e->srv, NULL, 0), need);
  assert_i64_eq(bw_partner_server_metrics(NULL, direct, sizeof(direct)), -1);
}

/* ---- in flight, hang-ups, shutdown, reset ---------------------------------
 */

/* A client that stops waiting does not end the partner's work: the request
 * stays in flight for its whole latency, then is answered into the void. */
static void test_client_hangup_keeps_request_in_flight(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_partner_server_stats_t s;
  xfer_t *x;
  fast_config(&cfg);
  cfg.partner.ok_min_ms = 1500;
  cfg.partner.ok_max_ms = 1500;
  start(e, &cfg);
  x = xfer_start(e, "POST", "/charges", NULL, 100);
  assert_true(pump_until(e, xfer_done, x, PUMP_MAX_MS));
  assert_int_equal(x->result, CURLE_OPERATION_TIMEDOUT);
  s = stats(e);
  assert_u64_eq(s.network_calls, 1);
  assert_u64_eq(s.partner.in_flight, 1);
  assert_true(pump_until(e, nothing_in_flight, NULL, PUMP_MAX_MS));
  s = stats(e);
  assert_u64_eq(s.replied_200, 1);
  assert_u64_eq(s.partner.completed, 1);
  assert_u64_eq(s.abandoned, 1);
  /* still serving */
  x = http(e, "POST", "/charges", NULL);
  assert_i64_eq(x->status, 200);
  assert_u64_eq(stats(e).abandoned, 1);
}

static void test_free_with_pending_replies(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  uint64_t two = 2;
  xfer_t *a, *b;
  fast_config(&cfg);
  cfg.partner.ok_min_ms = 60000;
  cfg.partner.ok_max_ms = 60000;
  start(e, &cfg);
  a = xfer_start(e, "POST", "/charges", NULL, 0);
  b = xfer_start(e, "POST", "/charges", NULL, 0);
  assert_true(pump_until(e, calls_at_least, &two, PUMP_MAX_MS));
  assert_u64_eq(stats(e).partner.in_flight, 2);
  bw_partner_server_free(e->srv); /* two replies pending: no leak, no crash */
  e->srv = NULL;
  assert_true(pump_until(e, all_done, NULL, PUMP_MAX_MS));
  /* the connection was closed: an error or the 503, never a 200 */
  assert_true(a->result != CURLE_OK || a->status == 503);
  assert_true(b->result != CURLE_OK || b->status == 503);
}

static void expect_invalid(env_t *e, const bw_partner_server_config_t *cfg,
                           const char *field);

/* ---- forward mode: client -> partner A -> B over loopback ---------------
 *
 * B is a recording evhttp server on the same loop: it logs the
 * X-Timeout-Budget and traceparent it receives and answers /b 200, /b503
 * 503, and /hold never (until it is freed). */

typedef struct next_hop_s {
  struct evhttp *http;
  uint16_t port;
  unsigned n;
  char budget[64];
  char traceparent[96];
  char tracestate[96];
  struct evhttp_request *held;
} next_hop_t;

static void next_hop_cb(struct evhttp_request *req, void *arg) {
  next_hop_t *b = arg;
  struct evkeyvalq *in = evhttp_request_get_input_headers(req);
  const char *v, *path = evhttp_request_get_uri(req);
  struct evbuffer *body;
  b->n++;
  v = evhttp_find_header(in, "X-Timeout-Budget");
  snprintf(b->budget, sizeof(b->budget), "%s", v != NULL ? v : "");
  v = evhttp_find_header(in, "traceparent");
  snprintf(b->traceparent, sizeof(b->traceparent), "%s", v != NULL ? v : "");
  v = evhttp_find_header(in, "tracestate");
  snprintf(b->tracestate, sizeof(b->tracestate), "%s", v != NULL ? v : "");
  if (strcmp(path, "/hold") == 0) {
    b->held = req;
    return;
  }
  body = evbuffer_new();
  evbuffer_add(body, "B", 1);
  evhttp_send_reply(req, strcmp(path, "/b503") == 0 ? 503 : 200, "B", body);
  evbuffer_free(body);
}

static void next_hop_start(env_t *e, next_hop_t *b) {
  struct evhttp_bound_socket *bs;
  struct sockaddr_in sa;
  socklen_t len = sizeof(sa);
  memset(b, 0, sizeof(*b));
  b->http = evhttp_new(e->base);
  assert_non_null(b->http);
  evhttp_set_gencb(b->http, next_hop_cb, b);
  bs = evhttp_bind_socket_with_handle(b->http, "127.0.0.1", 0);
  assert_non_null(bs);
  assert_int_equal(
      getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &len),
      0);
  b->port = ntohs(sa.sin_port);
}

/* A partner whose every charge is accepted after exactly 200 ms, forwarding
 * to B's `path`. */
static void start_forwarding(env_t *e, const next_hop_t *b, const char *path) {
  bw_partner_server_config_t cfg;
  char url[96];
  fast_config(&cfg);
  cfg.partner.ok_min_ms = 200;
  cfg.partner.ok_max_ms = 200;
  snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", (unsigned)b->port, path);
  cfg.forward_url = url;
  start(e, &cfg);
}

#define TP_CLIENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static void test_forward_the_budget_shrinks_and_the_trace_follows(
    void **state) {
  env_t *e = *state;
  next_hop_t b;
  bw_partner_server_stats_t s;
  bw_trace_t client, at_b;
  int64_t got = -1;
  xfer_t *x;
  next_hop_start(e, &b);
  start_forwarding(e, &b, "/b");
  x = http(e, "POST", "/charges",
           "X-Timeout-Budget: 5\ntraceparent: " TP_CLIENT
           "\ntracestate: congo=t61rcWkgMzE");
  assert_i64_eq(x->status, 200);
  assert_string_equal(x->body, "{\"status\":\"ok\",\"next\":200}\n");
  assert_int_equal(b.n, 1);
  /* B's budget: present, well formed, and at most what A received less
   * the 200 ms A spent (its latency) before calling */
  assert_status(bw_deadline_header_parse(b.budget, strlen(b.budget), &got),
                BW_OK);
  assert_true(got >= 0);
  assert_true(got <= 5000 - 200);
  /* the same trace, with A's call as the parent */
  assert_status(bw_traceparent_parse(TP_CLIENT, 55, &client), BW_OK);
  assert_status(
      bw_traceparent_parse(b.traceparent, strlen(b.traceparent), &at_b), BW_OK);
  assert_memory_equal(at_b.trace_id, client.trace_id, 16);
  assert_memory_not_equal(at_b.parent_id, client.parent_id, 8);
  assert_int_equal(at_b.flags, 1);
  assert_string_equal(b.tracestate, "congo=t61rcWkgMzE");
  s = stats(e);
  assert_u64_eq(s.requests_with_budget, 1);
  assert_u64_eq(s.forwarded, 1);
  assert_u64_eq(s.forward_refused, 0);
  assert_u64_eq(s.replied_200, 1);
  evhttp_free(b.http);
}

static void test_forward_reads_grpc_timeout_and_sends_none_without(
    void **state) {
  env_t *e = *state;
  next_hop_t b;
  int64_t got = -1;
  xfer_t *x;
  next_hop_start(e, &b);
  start_forwarding(e, &b, "/b");
  x = http(e, "POST", "/charges", "grpc-timeout: 3S");
  assert_i64_eq(x->status, 200);
  assert_status(bw_deadline_header_parse(b.budget, strlen(b.budget), &got),
                BW_OK);
  assert_true(got <= 3000 - 200);
  x = http(e, "POST", "/charges", NULL); /* no deadline: none sent on */
  assert_i64_eq(x->status, 200);
  assert_int_equal(b.n, 2);
  assert_string_equal(b.budget, "");
  assert_string_equal(b.traceparent, "");
  assert_u64_eq(stats(e).requests_with_budget, 1);
  evhttp_free(b.http);
}

static void test_forward_refuses_with_less_than_a_second_left(void **state) {
  env_t *e = *state;
  next_hop_t b;
  bw_partner_server_stats_t s;
  xfer_t *x;
  next_hop_start(e, &b);
  start_forwarding(e, &b, "/b");
  /* 1.1 s arrive; after A's 200 ms less than 1 s is left: B is not called */
  x = http(e, "POST", "/charges", "X-Timeout-Budget: 1.1");
  assert_i64_eq(x->status, 504);
  assert_contains(x->body, "\"status\":\"deadline\"");
  assert_int_equal(b.n, 0);
  s = stats(e);
  assert_u64_eq(s.forward_refused, 1);
  assert_u64_eq(s.forwarded, 0);
  evhttp_free(b.http);
}

static void test_forward_reports_the_next_hops_failures(void **state) {
  env_t *e = *state;
  next_hop_t b;
  bw_partner_server_t *dead;
  bw_partner_server_config_t cfg;
  char url[96];
  xfer_t *x;
  next_hop_start(e, &b);
  start_forwarding(e, &b, "/b503");
  x = http(e, "POST", "/charges", NULL);
  assert_i64_eq(x->status, 502);
  assert_string_equal(x->body, "{\"status\":\"error\",\"next\":503}\n");
  /* a next hop nobody listens on: 504, counted as failed */
  evhttp_free(b.http);
  dead = e->srv;
  fast_config(&cfg);
  snprintf(url, sizeof(url), "http://127.0.0.1:%u/b", (unsigned)b.port);
  cfg.forward_url = url;
  start(e, &cfg);
  x = http(e, "POST", "/charges", NULL);
  assert_i64_eq(x->status, 504);
  assert_u64_eq(stats(e).forward_failed, 1);
  bw_partner_server_free(dead);
}

static bool hop_called(env_t *e, void *arg) {
  (void)e;
  return ((next_hop_t *)arg)->n > 0;
}

/* A flaky partner (error_ratio): an answer under capacity is 500
 * {"status":"error"} after its latency, never forwarded, counted in
 * replied_500 and the metrics. Requests go one at a time, so each is under
 * capacity and the server's answers are, one for one, those of a model of
 * the same configuration. */
static void test_error_ratio_answers_500(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_partner_server_stats_t s;
  bw_sim_partner_t *twin;
  next_hop_t b;
  char url[96];
  uint64_t n200 = 0, n500 = 0;
  xfer_t *x;
  int i;
  next_hop_start(e, &b);
  fast_config(&cfg);
  cfg.partner.error_ratio = 0.5;
  cfg.partner.seed = 7;
  snprintf(url, sizeof(url), "http://127.0.0.1:%u/b", (unsigned)b.port);
  cfg.forward_url = url;
  start(e, &cfg);
  twin = bw_sim_partner_new(&cfg.partner, NULL);
  assert_non_null(twin);
  for (i = 0; i < 24; i++) {
    bw_sim_reply_t want = bw_sim_partner_admit(twin, 0);
    assert_status(bw_sim_partner_done(twin), BW_OK);
    x = http(e, "POST", "/charges", NULL);
    assert_i64_eq(x->status, want.status);
    assert_contains(x->ctype, "application/json");
    assert_false(x->has_retry_after);
    if (want.status == 500) {
      assert_string_equal(x->body, "{\"status\":\"error\"}\n");
      n500++;
    } else {
      assert_string_equal(x->body, "{\"status\":\"ok\",\"next\":200}\n");
      n200++;
    }
  }
  bw_sim_partner_free(twin);
  assert_true(n500 > 0 && n200 > 0); /* both kinds were exercised */
  s = stats(e);
  assert_u64_eq(s.network_calls, 24);
  assert_u64_eq(s.replied_500, n500);
  assert_u64_eq(s.replied_200, n200);
  assert_u64_eq(s.replied_429, 0);
  assert_u64_eq(s.partner.status_500, n500);
  assert_u64_eq(s.partner.over_capacity, 0);
  /* the documented conservation law */
  assert_u64_eq(s.network_calls, s.replied_200 + s.replied_429 + s.replied_500 +
                                     s.client_resets + s.partner.in_flight);
  /* only the 200s went on to the next hop */
  assert_u64_eq(s.forwarded, n200);
  assert_int_equal(b.n, (int)n200);
  x = http(e, "GET", "/metrics", NULL);
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_requests_total{status=\"500\"}"),
      (double)n500, 0);
  assert_dbl_eq(
      metric(x->body, "breakwater_partner_requests_total{status=\"200\"}"),
      (double)n200, 0);
  evhttp_free(b.http);
}

static void test_free_while_forwarding_answers_503(void **state) {
  env_t *e = *state;
  next_hop_t b;
  xfer_t *x;
  next_hop_start(e, &b);
  start_forwarding(e, &b, "/hold");
  x = xfer_start(e, "POST", "/charges", NULL, 0);
  assert_true(pump_until(e, hop_called, &b, PUMP_MAX_MS)); /* B holds it */
  assert_false(x->done);
  assert_u64_eq(stats(e).forwarded, 1);
  bw_partner_server_free(e->srv); /* cancels the call to B, answers 503 */
  e->srv = NULL;
  assert_true(pump_until(e, all_done, NULL, PUMP_MAX_MS));
  assert_true(x->result != CURLE_OK || x->status == 503);
  evhttp_free(b.http); /* frees B's held request */
}

static void test_forward_url_is_checked(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  static const char *const bad[] = {
      "ftp://127.0.0.1/x",    "http://",
      "127.0.0.1:80",         "http://127.0.0.1:0/x",
      "http://u@127.0.0.1/x", "http://127.0.0.1/x?q",
      "http://192.0.2.1/x",   "http://example.invalid/x"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    fast_config(&cfg);
    cfg.forward_url = bad[i];
    expect_invalid(e, &cfg, "forward_url");
  }
}

static void test_reset_gives_a_fresh_partner(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_partner_server_stats_t s;
  bw_error_t err;
  uint64_t three = 3;
  xfer_t *x, *slow;
  fast_config(&cfg);
  start(e, &cfg);
  http(e, "POST", "/charges", NULL);
  http(e, "GET", "/nope", NULL);
  x = http(e, "POST", "/reset", NULL);
  assert_i64_eq(x->status, 200);
  s = stats(e);
  assert_u64_eq(s.network_calls, 0);
  assert_u64_eq(s.replied_200, 0);
  assert_u64_eq(s.not_found, 0);
  assert_u64_eq(s.partner.received, 0);
  assert_u64_eq(s.partner.max_in_flight, 0);
  assert_u64_eq(s.resets, 1);
  x = http(e, "GET", "/metrics", NULL);
  assert_dbl_eq(metric(x->body, "breakwater_partner_network_calls_total"), 0,
                0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_resets_total"), 1, 0);

  /* Busy: refused, nothing changes. */
  bw_partner_server_free(e->srv);
  e->srv = NULL;
  cfg.partner.ok_min_ms = 1500;
  cfg.partner.ok_max_ms = 1500;
  start(e, &cfg);
  http(e, "GET", "/health", NULL);
  slow = xfer_start(e, "POST", "/charges", NULL, 0);
  three = 1;
  assert_true(pump_until(e, calls_at_least, &three, PUMP_MAX_MS));
  x = http(e, "POST", "/reset", NULL);
  assert_i64_eq(x->status, 409);
  assert_contains(x->body, "\"in_flight\":1");
  bwt_prefill_error(&err);
  assert_status(bw_partner_server_reset(e->srv, &err), BW_E_FULL);
  assert_string_equal(err.field, "in_flight");
  assert_u64_eq(stats(e).network_calls, 1);
  assert_u64_eq(stats(e).resets, 0);
  assert_true(pump_until(e, xfer_done, slow, PUMP_MAX_MS));
  assert_i64_eq(slow->status, 200);
  assert_status(bw_partner_server_reset(e->srv, &err), BW_OK);
  assert_u64_eq(stats(e).resets, 1);
  assert_status(bw_partner_server_reset(NULL, &err), BW_E_INVAL);
}

/* ---- connection hygiene: timeouts, the cap, resets ------------------------
 */

/* A raw client socket to the server (blocking connect: the kernel completes
 * it from the backlog), then non-blocking. */
static int raw_connect(env_t *e) {
  struct sockaddr_in sa;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_port = htons(e->port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
  return fd;
}

/* Runs the server's loop until fd has something to read: the bytes read
 * (0 = the server closed, -1 = an error such as a reset), or -2 if nothing
 * came within max_ms. */
static ssize_t raw_read(env_t *e, int fd, char *buf, size_t size,
                        int64_t max_ms) {
  int64_t t0 = now_ms();
  int i;
  for (i = 0; i < 200000; i++) {
    struct pollfd p = {fd, POLLIN, 0};
    event_base_loop(e->base, EVLOOP_NONBLOCK);
    if (poll(&p, 1, 1) == 1) {
      ssize_t n = recv(fd, buf, size - 1, 0);
      if (n >= 0) buf[n] = '\0';
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      return n < 0 ? -1 : n;
    }
    if (now_ms() - t0 > max_ms) return -2;
  }
  return -2;
}

static bool connections_are(env_t *e, void *arg) {
  return stats(e).connections == *(uint64_t *)arg;
}

static bool in_flight_is(env_t *e, void *arg) {
  return stats(e).partner.in_flight == *(uint32_t *)arg;
}

/* A connection that never sends a request is closed after the idle
 * timeout; before the fix it was held forever. Bounds only: closed neither
 * at once nor later than a few seconds. */
static void test_idle_connection_is_closed(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  char buf[256];
  uint64_t zero = 0;
  int fd;
  fast_config(&cfg);
  cfg.idle_timeout_ms = 300;
  start(e, &cfg);
  fd = raw_connect(e);
  /* Still open a moment later (well under the timeout)... */
  assert_i64_eq(raw_read(e, fd, buf, sizeof(buf), 50), -2);
  assert_u64_eq(stats(e).connections, 1);
  /* ...and closed by the partner within a few seconds. */
  assert_true(raw_read(e, fd, buf, sizeof(buf), 5000) == 0);
  close(fd);
  assert_true(pump_until(e, connections_are, &zero, 5000));
}

/* A request trickling in a byte at a time (slowloris) is cut by the header
 * timeout although every byte resets the idle one. */
static void test_slow_request_is_cut_by_the_header_timeout(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  static const char req[] =
      "POST /charges HTTP/1.1\r\nHost: x\r\nX-Slow: "
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  char buf[256];
  ssize_t got = -2;
  size_t i;
  int fd;
  fast_config(&cfg);
  cfg.idle_timeout_ms = 1000;
  cfg.header_timeout_ms = 400;
  start(e, &cfg);
  fd = raw_connect(e);
  /* One byte every 50 ms: 70 bytes would take 3.5 s. */
  for (i = 0; i < sizeof(req) - 1 && got == -2; i++) {
    if (send(fd, req + i, 1, MSG_NOSIGNAL) != 1) break;
    got = raw_read(e, fd, buf, sizeof(buf), 50);
  }
  if (got == -2) got = raw_read(e, fd, buf, sizeof(buf), 5000);
  close(fd);
  assert_true(got == 0 || got == -1 ||
              (got > 0 && strstr(buf, " 200 ") == NULL));
  assert_true(i < sizeof(req) - 1); /* cut before the request was whole */
  assert_u64_eq(stats(e).timed_out_connections, 1);
  assert_u64_eq(stats(e).network_calls, 0);
}

/* Beyond max_connections a connection gets 503 and is closed; those under
 * the cap are served. */
static void test_connections_beyond_the_cap_are_refused(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  char buf[1024];
  uint64_t two = 2;
  int a, b, c;
  fast_config(&cfg);
  cfg.max_connections = 2;
  start(e, &cfg);
  a = raw_connect(e);
  b = raw_connect(e);
  assert_true(pump_until(e, connections_are, &two, 5000));
  c = raw_connect(e);
  assert_true(raw_read(e, c, buf, sizeof(buf), 5000) > 0);
  assert_contains(buf, "HTTP/1.1 503 ");
  assert_contains(buf, "too many connections");
  assert_true(raw_read(e, c, buf, sizeof(buf), 5000) == 0); /* then closed */
  close(c);
  assert_u64_eq(stats(e).refused_connections, 1);
  assert_u64_eq(stats(e).connections, 2);
  /* The two under the cap still work. */
  static const char get[] = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  assert_int_equal(send(a, get, sizeof(get) - 1, MSG_NOSIGNAL),
                   (ssize_t)sizeof(get) - 1);
  assert_true(raw_read(e, a, buf, sizeof(buf), 5000) > 0);
  assert_contains(buf, "HTTP/1.1 200 ");
  close(a);
  close(b);
}

/* A client that resets its connection while its request waits frees the
 * partner's slot at once (before the fix the request stayed in flight for
 * its whole latency, a minute here). */
static void test_client_reset_frees_its_slot(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  static const char post[] =
      "POST /charges HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
  struct linger lg = {1, 0};
  uint32_t zero = 0;
  uint64_t one = 1;
  xfer_t *x;
  int fd;
  fast_config(&cfg);
  cfg.partner.ok_min_ms = 60000;
  cfg.partner.ok_max_ms = 60000;
  start(e, &cfg);
  fd = raw_connect(e);
  assert_int_equal(send(fd, post, sizeof(post) - 1, MSG_NOSIGNAL),
                   (ssize_t)sizeof(post) - 1);
  assert_true(pump_until(e, calls_at_least, &one, 5000));
  assert_u64_eq(stats(e).partner.in_flight, 1);
  assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
  close(fd); /* a reset, not a FIN */
  assert_true(pump_until(e, in_flight_is, &zero, 5000));
  assert_u64_eq(stats(e).client_resets, 1);
  assert_u64_eq(stats(e).replied_200, 0);
  /* The metrics say so too. */
  x = http(e, "GET", "/metrics", NULL);
  assert_dbl_eq(metric(x->body, "breakwater_partner_in_flight"), 0, 0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_client_resets_total"), 1,
                0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_network_calls_total"), 1,
                0);
}

/* A client that only shut down its sending side reads its answer: it was
 * not abandoned (before the fix it was counted as abandoned). */
static void test_half_closed_client_is_not_abandoned(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  static const char post[] =
      "POST /charges HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
  char buf[1024];
  int fd;
  fast_config(&cfg);
  cfg.partner.ok_min_ms = 100;
  cfg.partner.ok_max_ms = 100;
  start(e, &cfg);
  fd = raw_connect(e);
  assert_int_equal(send(fd, post, sizeof(post) - 1, MSG_NOSIGNAL),
                   (ssize_t)sizeof(post) - 1);
  assert_int_equal(shutdown(fd, SHUT_WR), 0);
  assert_true(raw_read(e, fd, buf, sizeof(buf), 5000) > 0);
  assert_contains(buf, "HTTP/1.1 200 ");
  close(fd);
  assert_true(pump_until(e, nothing_in_flight, NULL, 5000));
  assert_u64_eq(stats(e).replied_200, 1);
  assert_u64_eq(stats(e).abandoned, 0);
}

/* ---- construction errors --------------------------------------------------
 */

static void test_port_in_use_names_the_port(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_error_t err;
  char port[16];
  fast_config(&cfg);
  start(e, &cfg);
  cfg.port = e->port;
  bwt_prefill_error(&err);
  assert_null(bw_partner_server_new(e->base, &cfg, &err));
  assert_status(err.code, BW_E_IO);
  assert_string_equal(err.field, "port");
  snprintf(port, sizeof(port), ":%u", (unsigned)e->port);
  assert_contains(err.message, port);
  assert_contains(err.message, strerror(EADDRINUSE));
}

static void expect_invalid(env_t *e, const bw_partner_server_config_t *cfg,
                           const char *field) {
  bw_error_t err;
  bwt_prefill_error(&err);
  assert_null(bw_partner_server_new(e->base, cfg, &err));
  if (!bwt_error_names(&err, field))
    fail_msg("expected an error naming %s, got %s (%s: %s)", field,
             bw_err_name(err.code), err.field, err.message);
}

static void test_bad_config_names_the_field(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_error_t err;

  fast_config(&cfg);
  cfg.partner.capacity = 0;
  expect_invalid(e, &cfg, "capacity");
  fast_config(&cfg);
  cfg.partner.ok_max_ms = 0; /* < ok_min_ms 1 */
  expect_invalid(e, &cfg, "ok_max_ms");
  fast_config(&cfg);
  cfg.partner.throttle_ratio = 1.5;
  expect_invalid(e, &cfg, "throttle_ratio");
  fast_config(&cfg);
  cfg.host = "0.0.0.0"; /* not loopback */
  expect_invalid(e, &cfg, "host");
  fast_config(&cfg);
  cfg.host = "192.0.2.1";
  expect_invalid(e, &cfg, "host");
  fast_config(&cfg);
  cfg.host = "nowhere.invalid"; /* not numeric, even when allowed */
  cfg.allow_remote = true;
  expect_invalid(e, &cfg, "host");
  fast_config(&cfg);
  cfg.host = NULL;
  expect_invalid(e, &cfg, "host");
  fast_config(&cfg);
  cfg.backlog = 0;
  expect_invalid(e, &cfg, "backlog");
  fast_config(&cfg);
  bwt_prefill_error(&err);
  assert_null(bw_partner_server_new(NULL, &cfg, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "base");
  /* NULL err is fine */
  cfg.partner.capacity = 0;
  assert_null(bw_partner_server_new(e->base, &cfg, NULL));
}

static void test_ipv6_loopback_and_defaults(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  bw_partner_server_stats_t s;
  bw_error_t err;
  bw_partner_server_config_init(&cfg);
  assert_string_equal(cfg.host, "127.0.0.1");
  assert_i64_eq(cfg.port, 0);
  assert_false(cfg.allow_remote);
  assert_i64_eq(cfg.partner.capacity, 400);
  assert_i64_eq(cfg.partner.retry_after_s, -1);
  cfg.host = "::1";
  e->srv = bw_partner_server_new(e->base, &cfg, &err);
  if (e->srv == NULL) {
    /* a host without IPv6 cannot bind ::1; the error still names the port */
    assert_string_equal(err.field, "port");
    skip();
  }
  assert_true(bw_partner_server_port(e->srv) != 0);
  bw_partner_server_stats(NULL, &s);
  assert_u64_eq(s.network_calls, 0);
  assert_i64_eq(bw_partner_server_port(NULL), 0);
  bw_partner_server_free(NULL);
  bw_partner_server_config_init(NULL);
}

static void test_loopback_predicate(void **state) {
  (void)state;
  assert_true(bw_partner_host_is_loopback("127.0.0.1"));
  assert_true(bw_partner_host_is_loopback("127.200.3.4"));
  assert_true(bw_partner_host_is_loopback("::1"));
  assert_true(bw_partner_host_is_loopback("localhost"));
  assert_false(bw_partner_host_is_loopback("0.0.0.0"));
  assert_false(bw_partner_host_is_loopback("128.0.0.1"));
  assert_false(bw_partner_host_is_loopback("10.1.2.3"));
  assert_false(bw_partner_host_is_loopback("::"));
  assert_false(bw_partner_host_is_loopback("127.0.0.1.x.invalid"));
  assert_false(bw_partner_host_is_loopback(""));
  assert_false(bw_partner_host_is_loopback(NULL));
}

/* ---- the flag parser ------------------------------------------------------
 */

typedef struct opts_s {
  uint32_t capacity;
  int64_t offset;
  double ratio;
  const char *host;
  bool quiet;
} opts_t;

static int parse(opts_t *o, char **argv, int argc, char *err, size_t size) {
  bw_cli_flag_t flags[] = {
      BW_CLI_U32("capacity", &o->capacity, 1, 1000000, "N", "capacity"),
      BW_CLI_I64("offset", &o->offset, -5, 5, "N", "offset"),
      BW_CLI_DOUBLE("ratio", &o->ratio, 0.0, 1.0, "R", "ratio"),
      BW_CLI_STRING("host", &o->host, "HOST", "host"),
      BW_CLI_BOOL("quiet", &o->quiet, "quiet"),
  };
  return bw_cli_parse(flags, sizeof(flags) / sizeof(flags[0]), argc, argv, NULL,
                      0, NULL, err, size);
}

#define ARGV(...) ((char *[]){__VA_ARGS__})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, err, ...) \
  parse((o), ARGV(__VA_ARGS__), ARGC(__VA_ARGS__), (err), sizeof(err))

static void test_cli_parses_every_type(void **state) {
  opts_t o = {400, 0, 0.5, "127.0.0.1", false};
  char err[256];
  (void)state;
  assert_int_equal(PARSE(&o, err, "--capacity", "12", "--offset=-5", "--ratio",
                         "0.25", "--host=::1", "--quiet"),
                   BW_CLI_OK);
  assert_i64_eq(o.capacity, 12);
  assert_i64_eq(o.offset, -5);
  assert_dbl_eq(o.ratio, 0.25, 0);
  assert_string_equal(o.host, "::1");
  assert_true(o.quiet);
  assert_int_equal(PARSE(&o, err, "--quiet=false", "--capacity=1000000"),
                   BW_CLI_OK);
  assert_false(o.quiet);
  assert_i64_eq(o.capacity, 1000000);
  assert_int_equal(PARSE(&o, err, "--offset", "-1"), BW_CLI_OK);
  assert_i64_eq(o.offset, -1);
  assert_int_equal(PARSE(&o, err, "--ratio", "1"), BW_CLI_OK);
  assert_int_equal(PARSE(&o, err, "--capacity", "3", "-h"), BW_CLI_HELP);
  assert_int_equal(PARSE(&o, err, "--help"), BW_CLI_HELP);
}

/* A macro, so a failure reports the caller's line. */
#define expect_cli_error(rc, err, want)   \
  do {                                    \
    assert_int_equal((rc), BW_CLI_ERROR); \
    assert_string_equal((err), (want));   \
  } while (0)

static void test_cli_errors_name_the_flag_and_rule(void **state) {
  opts_t o = {400, 0, 0.5, "127.0.0.1", false};
  char err[256];
  (void)state;
  expect_cli_error(PARSE(&o, err, "--capacity", "abc"), err,
                   "--capacity must be an integer in [1, 1000000] (got 'abc')");
  expect_cli_error(PARSE(&o, err, "--capacity=0"), err,
                   "--capacity must be an integer in [1, 1000000] (got '0')");
  expect_cli_error(PARSE(&o, err, "--capacity", "12x"), err,
                   "--capacity must be an integer in [1, 1000000] (got '12x')");
  expect_cli_error(PARSE(&o, err, "--capacity", " 12"), err,
                   "--capacity must be an integer in [1, 1000000] (got ' 12')");
  expect_cli_error(PARSE(&o, err, "--capacity", "99999999999999999999999"), err,
                   "--capacity must be an integer in [1, 1000000] (got "
                   "'99999999999999999999999')");
  expect_cli_error(PARSE(&o, err, "--offset", "6"), err,
                   "--offset must be an integer in [-5, 5] (got '6')");
  expect_cli_error(PARSE(&o, err, "--ratio", "2"), err,
                   "--ratio must be a number in [0, 1] (got '2')");
  expect_cli_error(PARSE(&o, err, "--ratio", "nan"), err,
                   "--ratio must be a number in [0, 1] (got 'nan')");
  expect_cli_error(PARSE(&o, err, "--ratio="), err,
                   "--ratio must be a number in [0, 1] (got '')");
  expect_cli_error(PARSE(&o, err, "--capacity"), err,
                   "--capacity needs a value (N)");
  expect_cli_error(PARSE(&o, err, "--host="), err, "--host must not be empty");
  expect_cli_error(PARSE(&o, err, "--quiet=maybe"), err,
                   "--quiet is a switch: give it alone or as "
                   "--quiet=true|false (got 'maybe')");
  expect_cli_error(PARSE(&o, err, "--capacty", "3"), err,
                   "unknown flag '--capacty'");
  expect_cli_error(PARSE(&o, err, "--=3"), err, "unknown flag '--'");
  expect_cli_error(PARSE(&o, err, "-c", "3"), err,
                   "unknown flag '-c' (flags are long: --name)");
  expect_cli_error(PARSE(&o, err, "extra"), err, "unexpected argument 'extra'");
  /* nothing was written by the failing parses */
  assert_i64_eq(o.capacity, 400);
  assert_i64_eq(o.offset, 0);
  assert_dbl_eq(o.ratio, 0.5, 0);
}

static void test_cli_positional_and_double_dash(void **state) {
  uint32_t n = 0;
  bw_cli_flag_t flags[] = {BW_CLI_U32("n", &n, 0, 9, "N", "n")};
  const char *pos[2];
  size_t npos = 99;
  char err[128];
  char *argv[] = {"a", "--n", "4", "--", "--n", "b"};
  (void)state;
  assert_int_equal(
      bw_cli_parse(flags, 1, 3, argv, pos, 2, &npos, err, sizeof(err)),
      BW_CLI_OK);
  assert_i64_eq(npos, 1);
  assert_string_equal(pos[0], "a");
  assert_i64_eq(n, 4);
  assert_true(flags[0].seen);
  /* after "--" everything is positional; a third one is too many */
  assert_int_equal(
      bw_cli_parse(flags, 1, 6, argv, pos, 2, &npos, err, sizeof(err)),
      BW_CLI_ERROR);
  assert_string_equal(err, "unexpected argument 'b'");
  assert_int_equal(
      bw_cli_parse(flags, 1, 5, argv, pos, 2, &npos, err, sizeof(err)),
      BW_CLI_OK);
  assert_i64_eq(npos, 2);
  assert_string_equal(pos[1], "--n");
  /* NULL err and a tiny buffer are fine */
  assert_int_equal(
      bw_cli_parse(flags, 1, 1, ARGV("--x"), NULL, 0, NULL, NULL, 0),
      BW_CLI_ERROR);
  assert_int_equal(
      bw_cli_parse(flags, 1, 1, ARGV("--x"), NULL, 0, NULL, err, 4),
      BW_CLI_ERROR);
  assert_string_equal(err, "unk");
}

/* ---- the breakwater command -----------------------------------------------
 */

#ifdef BW_BREAKWATER_BIN

typedef struct child_s {
  pid_t pid;
  int out; /* the child's stdout, read end */
  int err; /* the child's stderr, read end */
} child_t;

static child_t spawn(char **argv) {
  child_t c;
  int po[2], pe[2];
  assert_int_equal(pipe(po), 0);
  assert_int_equal(pipe(pe), 0);
  c.pid = fork();
  assert_true(c.pid >= 0);
  if (c.pid == 0) {
    dup2(po[1], 1);
    dup2(pe[1], 2);
    close(po[0]);
    close(po[1]);
    close(pe[0]);
    close(pe[1]);
    execv(BW_BREAKWATER_BIN, argv);
    _exit(127);
  }
  close(po[1]);
  close(pe[1]);
  c.out = po[0];
  c.err = pe[0];
  return c;
}

/* Reads from fd until `until` appears (or EOF, or max_ms). */
static size_t read_until(int fd, char *buf, size_t size, size_t len,
                         const char *until, int64_t max_ms) {
  int64_t t0 = now_ms();
  int i;
  for (i = 0; i < 100000 && len + 1 < size; i++) {
    struct pollfd p = {fd, POLLIN, 0};
    ssize_t n;
    if (until != NULL && strstr(buf, until) != NULL) break;
    if (now_ms() - t0 > max_ms) break;
    if (poll(&p, 1, 50) <= 0) continue;
    n = read(fd, buf + len, size - 1 - len);
    if (n <= 0) break;
    len += (size_t)n;
    buf[len] = '\0';
  }
  return len;
}

/* Waits for the child (SIGKILL after max_ms); its exit status, or -1. */
static int reap(child_t *c, int64_t max_ms) {
  int64_t t0 = now_ms();
  int st, i;
  for (i = 0; i < 100000; i++) {
    pid_t r = waitpid(c->pid, &st, WNOHANG);
    if (r == c->pid) break;
    if (now_ms() - t0 > max_ms) {
      kill(c->pid, SIGKILL);
      waitpid(c->pid, &st, 0);
      close(c->out);
      close(c->err);
      return -1;
    }
    poll(NULL, 0, 10);
  }
  close(c->out);
  close(c->err);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_port_in_use_exits_1(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t cfg;
  char port[16], want[32], out[2048] = "", err[2048] = "";
  child_t c;
  fast_config(&cfg);
  start(e, &cfg);
  snprintf(port, sizeof(port), "%u", (unsigned)e->port);
  c = spawn(ARGV("breakwater", "partner", "--port", port, NULL));
  read_until(c.err, err, sizeof(err), 0, NULL, 10000);
  read_until(c.out, out, sizeof(out), 0, NULL, 1000);
  assert_int_equal(reap(&c, 10000), 1);
  snprintf(want, sizeof(want), "127.0.0.1:%s", port);
  assert_contains(err, "breakwater partner: --port: cannot listen on");
  assert_contains(err, want);
  assert_contains(err, strerror(EADDRINUSE));
  assert_string_equal(out, "");
}

/* Runs the real command on a free port, talks to it, stops it with
 * SIGTERM: exit 0 and a summary that counts the charge. */
static void test_cli_serves_and_stops_on_sigterm(void **state) {
  env_t *e = *state;
  char out[4096] = "", err[1024] = "";
  const char *p;
  size_t len;
  unsigned port = 0;
  xfer_t *x;
  child_t c =
      spawn(ARGV("breakwater", "partner", "--port", "0", "--capacity", "5",
                 "--seed", "9", "--ok-min-ms", "1", "--ok-max-ms", "2", NULL));
  len = read_until(c.out, out, sizeof(out), 0, ")\n", 10000);
  p = strstr(out, "partner listening on http://127.0.0.1:");
  if (p == NULL ||
      sscanf(p, "partner listening on http://127.0.0.1:%u", &port) != 1) {
    kill(c.pid, SIGKILL);
    reap(&c, 10000);
    fail_msg("no listening line: '%s'", out);
  }
  assert_contains(out, "(capacity 5, seed 9)\n");
  e->port = (uint16_t)port;
  x = http(e, "POST", "/charges", NULL);
  assert_i64_eq(x->status, 200);
  x = http(e, "GET", "/metrics", NULL);
  assert_dbl_eq(metric(x->body, "breakwater_partner_network_calls_total"), 1,
                0);
  assert_dbl_eq(metric(x->body, "breakwater_partner_capacity"), 5, 0);
  assert_int_equal(kill(c.pid, SIGTERM), 0);
  read_until(c.out, out, sizeof(out), len, "abandoned=", 10000);
  read_until(c.err, err, sizeof(err), 0, NULL, 2000);
  assert_int_equal(reap(&c, 10000), 0);
  assert_contains(out, "partner stopped: network_calls=1 status_200=1 ");
  assert_string_equal(err, "");
}

static void test_cli_duration_stops_by_itself(void **state) {
  char out[1024] = "";
  child_t c;
  (void)state;
  c = spawn(ARGV("breakwater", "partner", "--port", "0", "--duration-s", "1",
                 "--quiet", NULL));
  read_until(c.out, out, sizeof(out), 0, NULL, 15000); /* to EOF */
  assert_int_equal(reap(&c, 15000), 0);
  assert_contains(out, "partner listening on http://127.0.0.1:");
  assert_null(strstr(out, "partner stopped")); /* --quiet */
}

static void test_cli_bad_flags_exit_2(void **state) {
  static const struct {
    const char *a, *b, *want;
  } cases[] = {
      {"--capacity", "abc",
       "--capacity must be an integer in [1, 1000000] (got 'abc')"},
      {"--capacity", "0",
       "--capacity must be an integer in [1, 1000000] (got '0')"},
      {"--throttle-ratio", "2",
       "--throttle-ratio must be a number in [0, 1] (got '2')"},
      {"--port", "70000",
       "--port must be an integer in [0, 65535] (got '70000')"},
      {"--host", "10.0.0.1", "--host: host must be a loopback address"},
      {"--slow-max-ms", "1", "--slow-max-ms: slow_max_ms must be >= "},
      {"--bogus", "1", "unknown flag '--bogus'"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char out[512] = "", err[1024] = "";
    child_t c = spawn(ARGV("breakwater", "partner", "--port", "0",
                           (char *)cases[i].a, (char *)cases[i].b, NULL));
    read_until(c.err, err, sizeof(err), 0, NULL, 10000);
    read_until(c.out, out, sizeof(out), 0, NULL, 1000);
    assert_int_equal(reap(&c, 10000), 2);
    assert_contains(err, cases[i].want);
    assert_string_equal(out, "");
  }
}

#endif /* BW_BREAKWATER_BIN */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_health_answers_ok, setup, teardown),
      cmocka_unit_test_setup_teardown(test_charges_under_capacity_are_200,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_over_capacity_throttles_with_retry_after, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_retry_after_unless_configured,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_unknown_path_404_wrong_method_405,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_metrics_count_the_requests, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_client_hangup_keeps_request_in_flight, setup, teardown),
      cmocka_unit_test_setup_teardown(test_free_with_pending_replies, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_reset_gives_a_fresh_partner, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_forward_the_budget_shrinks_and_the_trace_follows, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          test_forward_reads_grpc_timeout_and_sends_none_without, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          test_forward_refuses_with_less_than_a_second_left, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_forward_reports_the_next_hops_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_free_while_forwarding_answers_503,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_error_ratio_answers_500, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_forward_url_is_checked, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_idle_connection_is_closed, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_slow_request_is_cut_by_the_header_timeout, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_connections_beyond_the_cap_are_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_client_reset_frees_its_slot, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_half_closed_client_is_not_abandoned,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_port_in_use_names_the_port, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_bad_config_names_the_field, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ipv6_loopback_and_defaults, setup,
                                      teardown),
      cmocka_unit_test(test_loopback_predicate),
      cmocka_unit_test(test_cli_parses_every_type),
      cmocka_unit_test(test_cli_errors_name_the_flag_and_rule),
      cmocka_unit_test(test_cli_positional_and_double_dash),
#ifdef BW_BREAKWATER_BIN
      cmocka_unit_test_setup_teardown(test_cli_port_in_use_exits_1, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cli_serves_and_stops_on_sigterm,
                                      setup, teardown),
      cmocka_unit_test(test_cli_duration_stops_by_itself),
      cmocka_unit_test(test_cli_bad_flags_exit_2),
#endif
  };
  int rc;
  signal(SIGPIPE, SIG_IGN);
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  curl_global_cleanup();
  return rc;
}

#endif /* BW_PARTNER_HTTP_TEST */

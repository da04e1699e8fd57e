/* Specification tests: the libcurl HTTP driver (driver_curl.h), over real
 * HTTP on 127.0.0.1.
 *
 * Each test starts a tiny evhttp server on a free port on the SAME
 * event_base as the driver (one thread: the loop drives both), scripted per
 * path, which logs every request it sees (path, Idempotency-Key,
 * X-Timeout-Budget). The assertions are counts (server-side hits == the
 * driver's network calls), verdicts, failure kinds, headers and the waits
 * the pipeline asked for — never wall-clock durations. Every loop is bounded
 * by an iteration count and a guard timer. bw_http_call blocks its own
 * loop, so its server runs on a second thread with its own base. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "breakwater/driver_curl.h"
#include "breakwater/hedge.h"
#include "bw_test.h"
#include "http_scripted.h"
#include "pipeline_kit.h"
#include "oom.h"

/* ---- fixture ------------------------------------------------------------- */

typedef struct env_s {
  struct event_base *base;
  srv_t srv;
  bw_curl_t *http;
  bw_retry_policy_t *retry;
  bw_breaker_t *breaker;
  bw_pipeline_t *pl;
  bwt_recorder_t *rec;
  bw_sink_t *sink;
} env_t;

static int setup(void **state) {
  bw_error_t err;
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->base = event_base_new();
  if (e->base == NULL || srv_start(&e->srv, e->base) != 0) return -1;
  e->http = bw_curl_new(e->base, NULL, &err);
  if (e->http == NULL) return -1;
  e->rec = calloc(1, sizeof(*e->rec));
  if (e->rec == NULL) return -1;
  e->sink = bw_sink_callback_new(bwt_record_cb, e->rec, &err);
  if (e->sink == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_curl_free(e->http);
  srv_stop(&e->srv);
  bw_pipeline_free(e->pl);
  bw_breaker_free(e->breaker);
  bw_retry_policy_free(e->retry);
  bw_sink_free(e->sink);
  free(e->rec);
  event_base_free(e->base);
  free(e);
  return 0;
}

static bw_retry_policy_t *make_retry(env_t *e, uint32_t attempts,
                                     int64_t base_ms, bool idempotent) {
  return bwt_constant_retry(attempts, base_ms, idempotent, e->sink);
}

static bw_breaker_t *make_breaker(uint32_t threshold) {
  return bwt_make_breaker("partner", threshold, NULL);
}

/* [deadline] -> [breaker] -> [retry] -> [timeout], each optional */
static bw_pipeline_t *make_pipeline(int64_t deadline_ms, bw_breaker_t *b,
                                    const bw_retry_policy_t *r,
                                    int64_t timeout_ms) {
  return bwt_pipeline("partner", deadline_ms, b, r, timeout_ms);
}

/* What a done callback saw (the body copied: it is valid during the
 * callback only). */
typedef struct got_s {
  int dones;
  bool in_request;
  bool done_in_request;
  bw_curl_result_t res;
  char body[128];
} got_t;

static void on_done(void *ud, const bw_curl_result_t *res) {
  got_t *g = ud;
  g->dones++;
  g->res = *res;
  g->res.body = NULL; /* not valid after the callback */
  snprintf(g->body, sizeof(g->body), "%s", res->body);
  if (g->in_request) g->done_in_request = true;
}

static void guard_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  *(bool *)arg = true;
}

/* Runs the shared loop until *count >= want, at most limit_ms. */
static void run_until(env_t *e, const int *count, int want, int64_t limit_ms) {
  bool expired = false;
  struct timeval tv = {(time_t)(limit_ms / 1000),
                       (suseconds_t)((limit_ms % 1000) * 1000)};
  struct event *guard = evtimer_new(e->base, guard_cb, &expired);
  int i;
  assert_non_null(guard);
  evtimer_add(guard, &tv);
  for (i = 0; i < 200000 && *count < want && !expired; i++)
    if (event_base_loop(e->base, EVLOOP_ONCE) != 0) break;
  event_free(guard);
}

static void url(const env_t *e, const char *path, char *buf, size_t n) {
  snprintf(buf, n, "http://127.0.0.1:%d%s", e->srv.port, path);
}

/* One logical call, run to its end. */
static void call(env_t *e, const char *path, bool idempotent, got_t *g) {
  bw_curl_request_t req;
  char u[96];
  url(e, path, u, sizeof(u));
  bw_curl_request_init(&req);
  req.url = u;
  req.idempotent = idempotent;
  memset(g, 0, sizeof(*g));
  g->in_request = true;
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, g), BW_OK);
  g->in_request = false;
  run_until(e, &g->dones, 1, 5000);
  assert_int_equal(g->dones, 1);
  assert_false(g->done_in_request);
}

static bw_curl_stats_t stats(const env_t *e) {
  bw_curl_stats_t st;
  memset(&st, 0xA5, sizeof(st));
  bw_curl_stats(e->http, &st);
  return st;
}

/* ==== tests =============================================================== */

static void flaky_becomes_success_with_three_network_calls(void **state) {
  env_t *e = *state;
  got_t g;
  bw_curl_stats_t st;
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  call(e, "/flaky", true, &g);
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_false(g.res.cancelled);
  assert_int_equal(g.res.status, 200);
  assert_int_equal(g.res.transport, BW_TRANSPORT_NONE);
  assert_int_equal(g.res.curl_code, 0);
  assert_int_equal(g.res.last_verdict, BW_VERDICT_OK);
  assert_u64_eq(g.res.attempts, 3);
  assert_u64_eq(g.res.network_attempts, 3);
  assert_string_equal(g.body, "ok");
  assert_false(g.res.body_truncated);
  assert_string_equal(g.res.idempotency_key, ""); /* idempotent: no key */
  /* server-side count == driver count */
  assert_u64_eq(hits_on(&e->srv, "/flaky"), 3);
  st = stats(e);
  assert_u64_eq(st.network_calls, 3);
  assert_u64_eq(st.responses[5], 2);
  assert_u64_eq(st.responses[2], 1);
  assert_u64_eq(st.transport_errors, 0);
  assert_u64_eq(st.calls_started, 1);
  assert_u64_eq(st.calls_succeeded, 1);
  assert_u64_eq(st.calls_in_progress, 0);
  assert_string_equal(e->srv.log[0].key, "");
  assert_string_equal(e->srv.log[0].budget, ""); /* no deadline: no header */
}

static void breaker_outside_the_retry_counts_the_logical_failure_once(
    void **state) {
  env_t *e = *state;
  got_t g;
  bw_breaker_stats_t bs;
  e->breaker = make_breaker(5);
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(0, e->breaker, e->retry, 1000);
  call(e, "/fail", true, &g);
  assert_int_equal(g.res.failure, BW_FAILURE_EXHAUSTED);
  assert_int_equal(g.res.status, 503);
  assert_int_equal(g.res.last_verdict, BW_VERDICT_TRANSIENT);
  assert_u64_eq(g.res.network_attempts, 3);
  assert_u64_eq(hits_on(&e->srv, "/fail"), 3);
  bw_breaker_stats(e->breaker, &bs);
  assert_u64_eq(bs.calls, 1);
  assert_u64_eq(bs.failures, 1);
  assert_u64_eq(stats(e).calls_failed, 1);
}

static void open_breaker_makes_zero_network_calls(void **state) {
  env_t *e = *state;
  got_t g;
  bw_permit_t p;
  bw_curl_stats_t st;
  e->breaker = make_breaker(1);
  assert_status(bw_breaker_acquire(e->breaker, &p), BW_OK);
  assert_status(bw_breaker_release(e->breaker, &p, BW_FAILURE), BW_OK);
  assert_state(bw_breaker_state(e->breaker), BW_OPEN);
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(0, e->breaker, e->retry, 1000);
  call(e, "/ok", true, &g);
  assert_int_equal(g.res.failure, BW_FAILURE_BREAKER);
  assert_int_equal(g.res.status, 0);
  assert_u64_eq(g.res.attempts, 0);
  assert_u64_eq(g.res.network_attempts, 0);
  assert_u64_eq(e->srv.nlog, 0);
  st = stats(e);
  assert_u64_eq(st.network_calls, 0);
  assert_u64_eq(st.calls_failed, 1);
}

static void per_attempt_timeout_gives_a_timeout_verdict(void **state) {
  env_t *e = *state;
  got_t g;
  bw_curl_stats_t st;
  e->pl = make_pipeline(0, NULL, NULL, 50);
  call(e, "/slow", true, &g);
  assert_int_equal(g.res.transport, BW_TRANSPORT_TIMEOUT);
  assert_int_equal(bw_curl_transport(g.res.curl_code), BW_TRANSPORT_TIMEOUT);
  assert_int_equal(g.res.last_verdict, BW_VERDICT_TRANSIENT);
  assert_int_equal(g.res.failure, BW_FAILURE_EXHAUSTED);
  assert_int_equal(g.res.status, 0);
  assert_u64_eq(g.res.network_attempts, 1);
  assert_u64_eq(hits_on(&e->srv, "/slow"), 1);
  st = stats(e);
  assert_u64_eq(st.transport_errors, 1);
  assert_u64_eq(st.transport[BW_TRANSPORT_TIMEOUT], 1);
}

static void retry_after_is_honoured(void **state) {
  env_t *e = *state;
  got_t g;
  const bwt_event_t *ev;
  e->retry = make_retry(e, 2, 1, true);
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  call(e, "/throttle", true, &g); /* 429 + Retry-After: 1, then 200 */
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_u64_eq(g.res.network_attempts, 2);
  assert_u64_eq(hits_on(&e->srv, "/throttle"), 2);
  assert_true(g.res.waited_ms >= 1000); /* the pipeline's wait, not wall */
  ev = bwt_nth_of(e->rec, BW_EV_RETRY_SCHEDULED, 0);
  assert_field_uint(ev, 0, "attempt", 1);
  assert_true(ev->fields[1].i >= 1000); /* delay_ms >= the hint */
  assert_u64_eq(stats(e).responses[4], 1);
}

static void grpc_pushback_is_honoured_and_negative_means_never(void **state) {
  env_t *e = *state;
  got_t g;
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  call(e, "/pushback", true, &g); /* 503 + pushback 40 ms, then 200 */
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_u64_eq(g.res.network_attempts, 2);
  assert_true(g.res.waited_ms >= 40);
  call(e, "/never", true, &g); /* pushback -1: do not retry */
  assert_int_equal(g.res.failure, BW_FAILURE_RETRY_AFTER);
  assert_i64_eq(g.res.retry_after_ms, BW_RETRY_AFTER_NEVER);
  assert_u64_eq(g.res.network_attempts, 1);
  assert_u64_eq(hits_on(&e->srv, "/never"), 1);
}

static void non_idempotent_request_sends_one_key_on_every_attempt(
    void **state) {
  env_t *e = *state;
  got_t g;
  unsigned i;
  /* a non-idempotent policy retries a 503 only because the call has a key */
  e->retry = make_retry(e, 3, 1, false);
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  call(e, "/flaky", false, &g);
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_u64_eq(hits_on(&e->srv, "/flaky"), 3);
  assert_int_equal(strlen(g.res.idempotency_key), 36);
  assert_int_equal(g.res.idempotency_key[14], '7'); /* UUIDv7 */
  for (i = 0; i < 3; i++)
    assert_string_equal(e->srv.log[i].key, g.res.idempotency_key);
  /* a second logical call gets a new key */
  call(e, "/ok", false, &g);
  assert_int_equal(strlen(e->srv.log[3].key), 36);
  assert_string_not_equal(e->srv.log[3].key, e->srv.log[0].key);
}

static void non_idempotent_without_retry_still_gets_a_key(void **state) {
  env_t *e = *state;
  got_t g;
  e->pl = make_pipeline(0, NULL, NULL, 1000);
  call(e, "/ok", false, &g);
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_int_equal(strlen(e->srv.log[0].key), 36);
  assert_string_equal(e->srv.log[0].key, g.res.idempotency_key);
}

static void timeout_budget_header_is_within_the_deadline(void **state) {
  env_t *e = *state;
  got_t g;
  int64_t ms = -1;
  unsigned i;
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(5000, NULL, e->retry, 1000);
  call(e, "/flaky", true, &g);
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  for (i = 0; i < 3; i++) {
    const char *b = e->srv.log[i].budget;
    assert_true(b[0] != '\0');
    assert_status(bw_deadline_header_parse(b, strlen(b), &ms), BW_OK);
    assert_true(ms > 0);
    assert_true(ms <= 5000);
  }
}

static void outer_deadline_narrows_the_budget(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  got_t g;
  char u[96];
  int64_t ms = -1, now = bw_clock_now(bw_clock_monotonic());
  const char *b;
  e->pl = make_pipeline(5000, NULL, NULL, 1000);
  url(e, "/ok", u, sizeof(u));
  bw_curl_request_init(&req);
  req.url = u;
  memset(&g, 0, sizeof(g));
  assert_status(bw_curl_request_at(e->http, e->pl, &req,
                                   bw_deadline_in(now, 800), on_done, &g),
                BW_OK);
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.dones, 1);
  b = e->srv.log[0].budget;
  assert_status(bw_deadline_header_parse(b, strlen(b), &ms), BW_OK);
  assert_true(ms <= 800);
}

static void the_callers_trace_goes_out_with_a_new_span_per_attempt(
    void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  bw_trace_t t, seen[3];
  got_t g;
  char u[96];
  unsigned i;
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  assert_status(bw_trace_from_headers(
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    55, "congo=t61rcWkgMzE", 17, &t),
                BW_OK);
  url(e, "/flaky", u, sizeof(u));
  bw_curl_request_init(&req);
  req.url = u;
  memset(&g, 0, sizeof(g));
  /* The trace current when the request is made is the one sent: the
   * attempts run later, from the loop, where none is current. */
  bw_trace_set(&t);
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, &g), BW_OK);
  bw_trace_set(NULL);
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_u64_eq(hits_on(&e->srv, "/flaky"), 3);
  for (i = 0; i < 3; i++) {
    const char *tp = e->srv.log[i].traceparent;
    assert_int_equal(strlen(tp), BW_TRACEPARENT_LEN);
    assert_status(bw_traceparent_parse(tp, strlen(tp), &seen[i]), BW_OK);
    assert_memory_equal(seen[i].trace_id, t.trace_id, 16);
    assert_int_equal(seen[i].flags, 1);
    assert_memory_not_equal(seen[i].parent_id, t.parent_id, 8);
    assert_string_equal(e->srv.log[i].tracestate, "congo=t61rcWkgMzE");
  }
  assert_memory_not_equal(seen[0].parent_id, seen[1].parent_id, 8);
  assert_memory_not_equal(seen[1].parent_id, seen[2].parent_id, 8);
  assert_memory_not_equal(seen[0].parent_id, seen[2].parent_id, 8);
  /* no trace current: no header */
  call(e, "/ok", true, &g);
  assert_string_equal(e->srv.log[3].traceparent, "");
  assert_string_equal(e->srv.log[3].tracestate, "");
}

/* A hedged copy is an attempt too: it goes out under the caller's trace
 * with a span of its own. /slow answers after 300 ms; the copy is sent
 * 20 ms after the first, so both reach the server. */
static void a_hedged_copy_carries_its_own_span(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  bw_hedge_config_t hc;
  bw_hedge_t *hedge;
  bw_error_t err;
  bw_trace_t t, seen[2];
  got_t g;
  char u[96];
  e->pl = make_pipeline(0, NULL, NULL, 2000);
  bw_hedge_config_init(&hc);
  hc.delay = BW_HEDGE_FIXED;
  hc.delay_ms = 20;
  hc.max_hedges = 1;
  hedge = bw_hedge_new(&hc, &err);
  assert_non_null(hedge);
  assert_status(bw_trace_from_headers(
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    55, NULL, 0, &t),
                BW_OK);
  url(e, "/slow", u, sizeof(u));
  bw_curl_request_init(&req);
  req.url = u;
  req.idempotent = true;
  memset(&g, 0, sizeof(g));
  bw_trace_set(&t);
  assert_status(bw_curl_request_hedged(e->http, e->pl, &req, hedge,
                                       bw_deadline_none(), on_done, &g),
                BW_OK);
  bw_trace_set(NULL);
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_u64_eq(g.res.network_attempts, 2);
  assert_u64_eq(hits_on(&e->srv, "/slow"), 2);
  for (unsigned i = 0; i < 2; i++) {
    const char *tp = e->srv.log[i].traceparent;
    assert_int_equal(strlen(tp), BW_TRACEPARENT_LEN);
    assert_status(bw_traceparent_parse(tp, strlen(tp), &seen[i]), BW_OK);
    assert_memory_equal(seen[i].trace_id, t.trace_id, 16);
    assert_memory_not_equal(seen[i].parent_id, t.parent_id, 8);
  }
  assert_memory_not_equal(seen[0].parent_id, seen[1].parent_id, 8);
  bw_hedge_free(hedge);
}

/* The user's per-transfer options (bw_curl_config_t.setup): here
 * CURLOPT_RESOLVE, which points a name under .invalid at the loopback
 * server, so the request succeeds only if setup ran on its handle. A
 * setup that answers non-zero fails the attempt before it is sent. */
typedef struct setup_s {
  struct curl_slist *resolve;
  int calls;
  bool refuse;
} setup_t;

static int resolve_setup(void *userdata, CURL *easy) {
  setup_t *su = userdata;
  su->calls++;
  if (su->refuse) return -1;
  return curl_easy_setopt(easy, CURLOPT_RESOLVE, su->resolve) == CURLE_OK ? 0
                                                                          : -1;
}

static void setup_sets_the_users_options_on_every_attempt(void **state) {
  env_t *e = *state;
  bw_curl_config_t cc;
  bw_curl_t *http;
  bw_curl_request_t req;
  bw_error_t err;
  setup_t su;
  got_t g;
  char u[96], entry[96];
  unsigned hits;
  memset(&su, 0, sizeof(su));
  snprintf(entry, sizeof(entry), "partner.invalid:%d:127.0.0.1", e->srv.port);
  su.resolve = curl_slist_append(NULL, entry);
  assert_non_null(su.resolve);
  bw_curl_config_init(&cc);
  assert_null(cc.setup);
  cc.setup = resolve_setup;
  cc.setup_userdata = &su;
  http = bw_curl_new(e->base, &cc, &err);
  assert_non_null(http);
  e->pl = make_pipeline(0, NULL, NULL, 2000);
  snprintf(u, sizeof(u), "http://partner.invalid:%d/ok", e->srv.port);
  bw_curl_request_init(&req);
  req.url = u;
  memset(&g, 0, sizeof(g));
  assert_status(bw_curl_request(http, e->pl, &req, on_done, &g), BW_OK);
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.dones, 1);
  assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  assert_int_equal(g.res.status, 200);
  assert_int_equal(su.calls, 1);
  hits = hits_on(&e->srv, "/ok");
  assert_true(hits >= 1);
  /* refused by setup: not sent */
  su.refuse = true;
  memset(&g, 0, sizeof(g));
  assert_status(bw_curl_request(http, e->pl, &req, on_done, &g), BW_OK);
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.dones, 1);
  assert_true(g.res.failure != BW_FAILURE_NONE);
  assert_int_equal(g.res.transport, BW_TRANSPORT_OTHER);
  assert_int_equal(su.calls, 2);
  assert_int_equal(hits_on(&e->srv, "/ok"), hits);
  bw_curl_free(http);
  curl_slist_free_all(su.resolve);
}

static void connection_refused_is_not_sent_and_retried(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  got_t g;
  char u[96];
  bw_curl_stats_t st;
  e->retry = make_retry(e, 2, 1, false); /* NOT_SENT is safe to retry */
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  snprintf(u, sizeof(u), "http://127.0.0.1:%d/ok", closed_port());
  bw_curl_request_init(&req);
  req.url = u;
  memset(&g, 0, sizeof(g));
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, &g), BW_OK);
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.dones, 1);
  assert_int_equal(g.res.transport, BW_TRANSPORT_REFUSED);
  assert_int_equal(g.res.last_verdict, BW_VERDICT_NOT_SENT);
  assert_int_equal(g.res.status, 0);
  assert_int_equal(g.res.failure, BW_FAILURE_EXHAUSTED);
  assert_u64_eq(g.res.network_attempts, 2);
  st = stats(e);
  assert_u64_eq(st.transport[BW_TRANSPORT_REFUSED], 2);
  assert_u64_eq(st.network_calls, 2);
}

static void a_4xx_is_permanent_and_not_retried(void **state) {
  env_t *e = *state;
  got_t g;
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  call(e, "/bad", true, &g);
  assert_int_equal(g.res.failure, BW_FAILURE_PERMANENT);
  assert_int_equal(g.res.status, 404);
  assert_u64_eq(g.res.network_attempts, 1);
  assert_string_equal(g.body, "no such thing");
  assert_u64_eq(stats(e).responses[4], 1);
}

static void a_non_http_url_is_permanent(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  got_t g;
  e->retry = make_retry(e, 3, 1, true);
  e->pl = make_pipeline(0, NULL, e->retry, 1000);
  bw_curl_request_init(&req);
  req.url = "file:///etc/hostname"; /* an HTTP driver reads no files */
  memset(&g, 0, sizeof(g));
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, &g), BW_OK);
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.dones, 1);
  assert_int_equal(g.res.failure, BW_FAILURE_PERMANENT);
  assert_int_equal(g.res.status, 0);
  assert_u64_eq(g.res.attempts, 1);
  assert_string_equal(g.body, "");
}

static void body_is_kept_up_to_64_kib(void **state) {
  env_t *e = *state;
  got_t g;
  e->pl = make_pipeline(0, NULL, NULL, 2000);
  call(e, "/big", true, &g); /* 100 KiB */
  assert_int_equal(g.res.status, 200);
  assert_u64_eq(g.res.body_len, BW_CURL_BODY_MAX);
  assert_true(g.res.body_truncated);
  assert_int_equal(g.body[0], 'x');
}

static void post_with_body_and_headers(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  got_t g;
  char u[96];
  const char *hdrs[] = {"Content-Type: application/json"};
  e->pl = make_pipeline(0, NULL, NULL, 1000);
  url(e, "/echo-body", u, sizeof(u));
  bw_curl_request_init(&req);
  req.method = "POST";
  req.url = u;
  req.body = "{\"a\":1}";
  req.body_len = 7;
  req.headers = hdrs;
  req.header_count = 1;
  memset(&g, 0, sizeof(g));
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, &g), BW_OK);
  memset(&req, 0, sizeof(req)); /* the driver copied what it needs */
  run_until(e, &g.dones, 1, 5000);
  assert_int_equal(g.dones, 1);
  assert_int_equal(g.res.status, 200);
  assert_string_equal(g.body, "POST {\"a\":1}");
}

static void request_refuses_bad_arguments(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  bw_curl_stats_t st;
  e->pl = make_pipeline(0, NULL, NULL, 1000);
  bw_curl_request_init(&req);
  assert_string_equal(req.method, "GET");
  assert_true(req.idempotent);
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, NULL),
                BW_E_INVAL); /* no url */
  req.url = "http://127.0.0.1:1/";
  req.body_len = 3; /* without a body */
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, NULL),
                BW_E_INVAL);
  req.body_len = 0;
  req.header_count = 1; /* without headers */
  assert_status(bw_curl_request(e->http, e->pl, &req, on_done, NULL),
                BW_E_INVAL);
  req.header_count = 0;
  assert_status(bw_curl_request(NULL, e->pl, &req, on_done, NULL), BW_E_INVAL);
  assert_status(bw_curl_request(e->http, NULL, &req, on_done, NULL),
                BW_E_INVAL);
  assert_status(bw_curl_request(e->http, e->pl, NULL, on_done, NULL),
                BW_E_INVAL);
  st = stats(e);
  assert_u64_eq(st.calls_started, 0);
  assert_u64_eq(st.network_calls, 0);
}

static void new_validates_its_configuration(void **state) {
  env_t *e = *state;
  bw_curl_config_t cfg;
  bw_error_t err;
  bw_curl_config_init(&cfg);
  assert_i64_eq(cfg.connect_timeout_ms, 2000);
  assert_u64_eq(cfg.max_body, BW_CURL_BODY_MAX);
  assert_ptr_equal(cfg.clock, bw_clock_monotonic());
  bwt_prefill_error(&err);
  assert_null(bw_curl_new(NULL, &cfg, &err));
  assert_true(bwt_error_names(&err, "base"));
  cfg.connect_timeout_ms = 0;
  assert_null(bw_curl_new(e->base, &cfg, &err));
  assert_true(bwt_error_names(&err, "connect_timeout_ms"));
  cfg.connect_timeout_ms = 10;
  cfg.max_body = BW_CURL_BODY_MAX + 1;
  assert_null(bw_curl_new(e->base, &cfg, &err));
  assert_true(bwt_error_names(&err, "max_body"));
  bw_curl_free(NULL);
}

static void transport_kinds_of_curl_codes(void **state) {
  (void)state;
  assert_int_equal(bw_curl_transport(0), BW_TRANSPORT_NONE);
  assert_int_equal(bw_curl_transport(28), BW_TRANSPORT_TIMEOUT);
  assert_int_equal(bw_curl_transport(7), BW_TRANSPORT_REFUSED);
  assert_int_equal(bw_curl_transport(6), BW_TRANSPORT_DNS);
  assert_int_equal(bw_curl_transport(5), BW_TRANSPORT_DNS);
  assert_int_equal(bw_curl_transport(35), BW_TRANSPORT_TLS);
  assert_int_equal(bw_curl_transport(60), BW_TRANSPORT_TLS);
  assert_int_equal(bw_curl_transport(52), BW_TRANSPORT_RESET);
  assert_int_equal(bw_curl_transport(56), BW_TRANSPORT_RESET);
  assert_int_equal(bw_curl_transport(55), BW_TRANSPORT_RESET);
  assert_int_equal(bw_curl_transport(3), BW_TRANSPORT_OTHER);
}

typedef struct cancel_s {
  int dones;
  int cancelled;
} cancel_t;

static void on_cancel_done(void *ud, const bw_curl_result_t *res) {
  cancel_t *c = ud;
  c->dones++;
  if (res->cancelled) c->cancelled++;
}

static void free_with_requests_in_flight_cancels_them(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  bw_retry_config_t rc;
  bw_error_t err;
  bw_breaker_stats_t bs;
  bw_pipeline_stats_t ps;
  cancel_t c;
  char u1[96], u2[96];
  int i;
  /* a retry with a long delay: the /fail call sits in WAIT; /slow sits in
   * its attempt */
  bw_retry_config_init(&rc);
  rc.max_attempts = 3;
  rc.backoff = BW_BACKOFF_CONSTANT;
  rc.base_ms = 60000;
  rc.max_ms = 60000;
  rc.jitter = BW_JITTER_NONE;
  e->retry = bw_retry_policy_new(&rc, &err);
  assert_non_null(e->retry);
  e->breaker = make_breaker(5);
  e->pl = make_pipeline(0, e->breaker, e->retry, 5000);
  memset(&c, 0, sizeof(c));
  url(e, "/slow", u1, sizeof(u1));
  url(e, "/fail", u2, sizeof(u2));
  bw_curl_request_init(&req);
  req.url = u1;
  assert_status(bw_curl_request(e->http, e->pl, &req, on_cancel_done, &c),
                BW_OK);
  req.url = u2;
  assert_status(bw_curl_request(e->http, e->pl, &req, on_cancel_done, &c),
                BW_OK);
  /* until the server has seen both and the /fail answer is in */
  for (i = 0; i < 2000 && !(e->srv.nlog >= 2 && stats(e).responses[5] >= 1);
       i++)
    event_base_loop(e->base, EVLOOP_ONCE);
  assert_u64_eq(e->srv.nlog, 2);
  for (i = 0; i < 10; i++)
    event_base_loop(e->base, EVLOOP_NONBLOCK);
  assert_u64_eq(stats(e).calls_in_progress, 2);
  bw_curl_free(e->http);
  e->http = NULL;
  assert_int_equal(c.dones, 2);
  assert_int_equal(c.cancelled, 2);
  bw_breaker_stats(e->breaker, &bs);
  assert_u64_eq(bs.calls, 2);
  assert_u64_eq(bs.ignored, 2); /* a cancel says nothing about health */
  bw_pipeline_stats(e->pl, &ps);
  assert_u64_eq(ps.cancelled, 2);
}

/* Every allocation of bw_curl_new, bw_curl_request and the call itself
 * fails in turn: each either refuses with BW_E_NOMEM or runs the call to its
 * done callback, and nothing leaks either way. */
/* A driver made, one call through it to its done callback, the driver
 * freed; on the clean run the call must have succeeded. */
typedef struct oom_call_s {
  env_t *e;
  const bw_curl_request_t *req;
} oom_call_t;

static int oom_call(void *ctx) {
  oom_call_t *oc = ctx;
  bw_error_t err;
  bw_curl_t *h;
  got_t g;
  int rc;
  memset(&g, 0, sizeof(g));
  h = bw_curl_new(oc->e->base, NULL, &err);
  if (h == NULL) return err.code;
  rc = bw_curl_request(h, oc->e->pl, oc->req, on_done, &g);
  if (rc == BW_OK) {
    run_until(oc->e, &g.dones, 1, 5000);
    if (g.dones != 1)
      fail_msg("no done (%ld failure(s) injected)", oom_injected());
  }
  bw_curl_free(h);
  if (oom_injected() == 0 && rc == BW_OK)
    assert_int_equal(g.res.failure, BW_FAILURE_NONE);
  return rc;
}

static void out_of_memory_refuses_or_completes_and_leaks_nothing(void **state) {
  env_t *e = *state;
  bw_curl_request_t req;
  oom_call_t oc = {e, &req};
  char u[96];
  e->retry = make_retry(e, 2, 1, false);
  e->pl = make_pipeline(1000, NULL, e->retry, 1000);
  url(e, "/ok", u, sizeof(u));
  bw_curl_request_init(&req);
  req.url = u;
  req.idempotent = false;
  req.body = "x";
  req.body_len = 1;
  assert_true(oom_walk_lenient(oom_call, &oc, false, NULL) < 200);
}

/* ---- bw_http_call: the server on its own thread ---------------------------
 */

static void http_call_blocks_until_done(void **state) {
  thread_srv_t t;
  pthread_t th;
  bw_pipeline_t *pl;
  bw_retry_policy_t *rp;
  bw_curl_request_t req;
  bw_curl_result_t out;
  bw_error_t err;
  struct timeval tv = {0, 10 * 1000};
  char u[96];
  int rc;
  env_t fake;
  (void)state;
  memset(&t, 0, sizeof(t));
  memset(&fake, 0, sizeof(fake));
  t.base = event_base_new();
  assert_non_null(t.base);
  assert_int_equal(srv_start(&t.srv, t.base), 0);
  t.tick = event_new(t.base, -1, EV_PERSIST, tick_cb, &t);
  evtimer_add(t.tick, &tv);
  assert_int_equal(pthread_create(&th, NULL, srv_thread, &t), 0);

  rp = make_retry(&fake, 3, 1, true);
  pl = make_pipeline(0, NULL, rp, 2000);
  bw_curl_request_init(&req);
  snprintf(u, sizeof(u), "http://127.0.0.1:%d/flaky", t.srv.port);
  req.url = u;
  rc = bw_http_call(pl, &req, &out, &err);
  assert_int_equal(rc, BW_FAILURE_NONE);
  assert_int_equal(out.status, 200);
  assert_u64_eq(out.network_attempts, 3);
  assert_string_equal(out.body, "ok");
  assert_u64_eq(out.body_len, 2);
  bw_curl_result_clear(&out);
  assert_string_equal(out.body, "");

  snprintf(u, sizeof(u), "http://127.0.0.1:%d/ok", closed_port());
  rc = bw_http_call(pl, &req, &out, &err);
  assert_int_equal(rc, BW_FAILURE_EXHAUSTED);
  assert_int_equal(out.transport, BW_TRANSPORT_REFUSED);
  bw_curl_result_clear(&out);
  assert_int_equal(bw_http_call(pl, &req, NULL, NULL), BW_FAILURE_EXHAUSTED);
  assert_status(bw_http_call(NULL, &req, &out, &err), BW_E_INVAL);
  assert_status(bw_http_call(pl, NULL, &out, &err), BW_E_INVAL);
  req.url = NULL;
  assert_status(bw_http_call(pl, &req, &out, &err), BW_E_INVAL);

  atomic_store(&t.stop, true);
  pthread_join(th, NULL);
  assert_u64_eq(hits_on(&t.srv, "/flaky"), 3);
  srv_stop(&t.srv);
  event_free(t.tick);
  event_base_free(t.base);
  bw_pipeline_free(pl);
  bw_retry_policy_free(rp);
}

int main(void) {
  if (oom_install() != BW_OK) return 1; /* before any object exists */
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(flaky_becomes_success_with_three_network_calls),
      T(breaker_outside_the_retry_counts_the_logical_failure_once),
      T(open_breaker_makes_zero_network_calls),
      T(per_attempt_timeout_gives_a_timeout_verdict),
      T(retry_after_is_honoured),
      T(grpc_pushback_is_honoured_and_negative_means_never),
      T(non_idempotent_request_sends_one_key_on_every_attempt),
      T(non_idempotent_without_retry_still_gets_a_key),
      T(timeout_budget_header_is_within_the_deadline),
      T(outer_deadline_narrows_the_budget),
      T(the_callers_trace_goes_out_with_a_new_span_per_attempt),
      T(a_hedged_copy_carries_its_own_span),
      T(setup_sets_the_users_options_on_every_attempt),
      T(connection_refused_is_not_sent_and_retried),
      T(a_4xx_is_permanent_and_not_retried),
      T(a_non_http_url_is_permanent),
      T(body_is_kept_up_to_64_kib),
      T(post_with_body_and_headers),
      T(request_refuses_bad_arguments),
      T(new_validates_its_configuration),
      cmocka_unit_test(transport_kinds_of_curl_codes),
      T(free_with_requests_in_flight_cancels_them),
      T(out_of_memory_refuses_or_completes_and_leaks_nothing),
      cmocka_unit_test(http_call_blocks_until_done),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Specification tests: the inbound deadline and W3C trace context over real
 * HTTP on 127.0.0.1, across two hops (bw_ev_http_deadline,
 * bw_deadline_from_header, bw_ev_http_trace, and the easy helper's
 * X-Timeout-Budget and traceparent).
 *
 *   client --(budget or grpc-timeout)--> A --(X-Timeout-Budget)--> B
 *
 * A and B are evhttp servers, each on a thread and event loop of its own.
 * A reads the inbound deadline and trace context, makes them its thread's
 * current ones,
 * spends 200 ms, then either refuses (less than 1 s left: 504, B never
 * called) or calls B with the easy helper, whose pipeline has no deadline
 * of its own: the budget B receives is what A had left. Every log is read
 * after its server's thread has stopped. Time is one manual clock, the
 * client's helper's and A's: A "spends" its 200 ms by advancing it, and no
 * request moves it, so every budget is exact — B gets A's budget less 200
 * ms — whatever the machine's load. */
#include <curl/curl.h>

#include "breakwater/curl_easy.h"
#include "breakwater/driver_event.h"
#include "bw_test.h"
#include "http_scripted.h"
#include "pipeline_kit.h"

#define HOPS_MAX 8
#define SPEND_MS 200

typedef struct hop_s {
  struct event_base *base;
  struct evhttp *http;
  struct event *tick;
  atomic_bool stop;
  pthread_t th;
  int port;
  bw_clock_t *clock;       /* the test's manual clock (shared) */
  const bw_pipeline_t *pl; /* A: its pipeline to B */
  int next_port;           /* A: B's port */
  unsigned n;
  struct {
    int rc;           /* A: bw_ev_http_deadline's */
    int64_t got_ms;   /* A: its deadline, at arrival; B: the budget got */
    int64_t spent_ms; /* A: arrival to the call, rounded down */
    bool called;      /* A: called B */
    char budget[40];  /* B: the raw X-Timeout-Budget */
    int trace_rc;     /* A: bw_ev_http_trace's */
    char tp[64];      /* A and B: the raw traceparent received */
    char ts[64];      /* A and B: the raw tracestate received */
  } log[HOPS_MAX];
} hop_t;

static void answer(struct evhttp_request *req, int code, const char *body) {
  struct evbuffer *b = evbuffer_new();
  evbuffer_add(b, body, strlen(body));
  evhttp_send_reply(req, code, code == 200 ? "OK" : "Refused", b);
  evbuffer_free(b);
}

/* The raw traceparent and tracestate a hop received, for the log. */
static void log_trace(struct evhttp_request *req, char *tp, char *ts) {
  struct evkeyvalq *in = evhttp_request_get_input_headers(req);
  const char *v = evhttp_find_header(in, "traceparent");
  snprintf(tp, 64, "%s", v != NULL ? v : "");
  v = evhttp_find_header(in, "tracestate");
  snprintf(ts, 64, "%s", v != NULL ? v : "");
}

static void hop_a(struct evhttp_request *req, void *arg) {
  hop_t *h = arg;
  unsigned i = h->n < HOPS_MAX ? h->n : HOPS_MAX - 1;
  int64_t arrival = bw_clock_now(h->clock), t_call;
  bw_deadline_t d, prev;
  bw_trace_t trace;
  const bw_trace_t *prev_trace = bw_trace_current();
  h->n++;
  log_trace(req, h->log[i].tp, h->log[i].ts);
  h->log[i].trace_rc = bw_ev_http_trace(req, &trace);
  if (h->log[i].trace_rc == BW_OK) prev_trace = bw_trace_set(&trace);
  h->log[i].rc = bw_ev_http_deadline(req, arrival, BW_DEADLINE_DEFAULT_MS, &d);
  h->log[i].got_ms = bw_deadline_remaining_ms(d, arrival);
  prev = bw_deadline_set(bw_deadline_min(bw_deadline_current(), d));
  bw_clock_manual_advance(h->clock, SPEND_MS * BW_NS_PER_MS);
  t_call = bw_clock_now(h->clock);
  h->log[i].spent_ms = (t_call - arrival) / BW_NS_PER_MS;
  if (bw_deadline_check(bw_deadline_current(), t_call,
                        BW_DEADLINE_MIN_CALL_MS) != BW_OK) {
    answer(req, 504, "not worth calling B");
  } else {
    CURL *easy = curl_easy_init();
    bw_curl_easy_options_t o;
    char u[64];
    int rc;
    snprintf(u, sizeof(u), "http://127.0.0.1:%d/b", h->next_port);
    curl_easy_setopt(easy, CURLOPT_URL, u);
    bw_curl_easy_options_init(&o);
    o.clock = h->clock; /* the current deadline is a reading of it */
    h->log[i].called = true;
    rc = bw_curl_easy_perform_with(h->pl, easy, &o, NULL);
    answer(req, rc == BW_FAILURE_NONE ? 200 : 502, "via B");
    curl_easy_cleanup(easy);
  }
  bw_deadline_set(prev);
  bw_trace_set(prev_trace);
}

static void hop_b(struct evhttp_request *req, void *arg) {
  hop_t *h = arg;
  unsigned i = h->n < HOPS_MAX ? h->n : HOPS_MAX - 1;
  const char *v = evhttp_find_header(evhttp_request_get_input_headers(req),
                                     "X-Timeout-Budget");
  h->n++;
  log_trace(req, h->log[i].tp, h->log[i].ts);
  snprintf(h->log[i].budget, sizeof(h->log[i].budget), "%s",
           v != NULL ? v : "");
  h->log[i].got_ms = -1;
  if (v != NULL) bw_deadline_header_parse(v, strlen(v), &h->log[i].got_ms);
  answer(req, 200, "B");
}

static void hop_tick(evutil_socket_t fd, short what, void *arg) {
  hop_t *h = arg;
  (void)fd;
  (void)what;
  if (atomic_load(&h->stop)) event_base_loopbreak(h->base);
}

static void *hop_run(void *arg) {
  hop_t *h = arg;
  event_base_dispatch(h->base);
  return NULL;
}

static void hop_start(hop_t *h, void (*cb)(struct evhttp_request *, void *)) {
  struct timeval tv = {0, 10 * 1000};
  struct evhttp_bound_socket *bs;
  h->base = event_base_new();
  assert_non_null(h->base);
  h->http = evhttp_new(h->base);
  assert_non_null(h->http);
  evhttp_set_gencb(h->http, cb, h);
  bs = evhttp_bind_socket_with_handle(h->http, "127.0.0.1", 0);
  assert_non_null(bs);
  h->port = bound_port(bs);
  assert_true(h->port > 0);
  h->tick = event_new(h->base, -1, EV_PERSIST, hop_tick, h);
  evtimer_add(h->tick, &tv);
  assert_int_equal(pthread_create(&h->th, NULL, hop_run, h), 0);
}

static void hop_stop(hop_t *h) {
  atomic_store(&h->stop, true);
  pthread_join(h->th, NULL);
  evhttp_free(h->http);
  event_free(h->tick);
  event_base_free(h->base);
}

typedef struct env_s {
  bw_clock_t *clock; /* manual: the client's and A's */
  hop_t a, b;
  bw_pipeline_t *a_to_b; /* no deadline of its own: A's thread's */
  bw_pipeline_t *client; /* 5 s deadline */
  bw_pipeline_t *bare;   /* none */
  CURL *easy;
} env_t;

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  if (e->clock == NULL) return -1;
  e->a_to_b = bwt_pipeline("a_to_b", 0, NULL, NULL, 2000);
  e->client = bwt_pipeline("client", 5000, NULL, NULL, 0);
  e->bare = bwt_pipeline("bare", 0, NULL, NULL, 0);
  hop_start(&e->b, hop_b);
  e->a.clock = e->clock;
  e->a.pl = e->a_to_b;
  e->a.next_port = e->b.port;
  hop_start(&e->a, hop_a);
  e->easy = curl_easy_init();
  *state = e;
  return e->easy != NULL ? 0 : -1;
}

static int teardown(void **state) {
  env_t *e = *state;
  curl_easy_cleanup(e->easy);
  bw_pipeline_free(e->a_to_b);
  bw_pipeline_free(e->client);
  bw_pipeline_free(e->bare);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

/* Calls A with the given pipeline and extra header (NULL for none). */
static int call_a(env_t *e, const bw_pipeline_t *pl, const char *header,
                  int *status) {
  bw_curl_easy_options_t o;
  bw_curl_result_t res;
  struct curl_slist *h =
      header != NULL ? curl_slist_append(NULL, header) : NULL;
  char u[64];
  int rc;
  snprintf(u, sizeof(u), "http://127.0.0.1:%d/a", e->a.port);
  curl_easy_setopt(e->easy, CURLOPT_URL, u);
  bw_curl_easy_options_init(&o);
  o.headers = h;
  o.clock = e->clock;
  rc = bw_curl_easy_perform_with(pl, e->easy, &o, &res);
  *status = res.status;
  bw_curl_result_clear(&res);
  curl_slist_free_all(h);
  return rc;
}

static void stop_both(env_t *e) {
  hop_stop(&e->a);
  hop_stop(&e->b);
}

static void the_budget_shrinks_across_two_hops(void **state) {
  env_t *e = *state;
  int status = 0;
  assert_int_equal(call_a(e, e->client, NULL, &status), BW_FAILURE_NONE);
  assert_int_equal(status, 200);
  stop_both(e);
  assert_int_equal(e->a.n, 1);
  assert_int_equal(e->b.n, 1);
  assert_status(e->a.log[0].rc, BW_OK);
  assert_i64_eq(e->a.log[0].got_ms, 5000); /* the client's whole deadline */
  assert_i64_eq(e->a.log[0].spent_ms, SPEND_MS);
  /* B got what A had at arrival less what A spent before calling. */
  assert_i64_eq(e->b.log[0].got_ms, e->a.log[0].got_ms - e->a.log[0].spent_ms);
  assert_i64_eq(e->b.log[0].got_ms, 5000 - SPEND_MS);
}

static void grpc_timeout_sets_the_first_hop(void **state) {
  env_t *e = *state;
  int status = 0;
  assert_int_equal(call_a(e, e->bare, "grpc-timeout: 3S", &status),
                   BW_FAILURE_NONE);
  assert_int_equal(status, 200);
  stop_both(e);
  assert_status(e->a.log[0].rc, BW_OK);
  assert_int_equal(e->a.log[0].got_ms, 3000); /* read at arrival: exact */
  assert_i64_eq(e->a.log[0].spent_ms, SPEND_MS);
  assert_i64_eq(e->b.log[0].got_ms, 3000 - SPEND_MS);
}

static void no_header_means_ten_seconds(void **state) {
  env_t *e = *state;
  int status = 0;
  assert_int_equal(call_a(e, e->bare, NULL, &status), BW_FAILURE_NONE);
  assert_int_equal(call_a(e, e->bare, "X-Timeout-Budget: soon", &status),
                   BW_FAILURE_NONE);
  stop_both(e);
  assert_int_equal(e->a.n, 2);
  assert_status(e->a.log[0].rc, BW_E_NOTFOUND);
  assert_int_equal(e->a.log[0].got_ms, BW_DEADLINE_DEFAULT_MS);
  assert_status(e->a.log[1].rc, BW_E_INVAL); /* malformed: the default */
  assert_int_equal(e->a.log[1].got_ms, BW_DEADLINE_DEFAULT_MS);
  assert_i64_eq(e->a.log[0].spent_ms, SPEND_MS);
  assert_i64_eq(e->a.log[1].spent_ms, SPEND_MS);
  assert_i64_eq(e->b.log[0].got_ms, 10000 - SPEND_MS);
  assert_i64_eq(e->b.log[1].got_ms, 10000 - SPEND_MS);
}

static void less_than_a_second_left_is_refused_before_b(void **state) {
  env_t *e = *state;
  int status = 0;
  /* 1.1 s arrive; after A's 200 ms, under 1 s is left. */
  assert_int_equal(call_a(e, e->bare, "X-Timeout-Budget: 1.1", &status),
                   BW_FAILURE_EXHAUSTED);
  assert_int_equal(status, 504);
  stop_both(e);
  assert_int_equal(e->a.n, 1);
  assert_status(e->a.log[0].rc, BW_OK);
  assert_int_equal(e->a.log[0].got_ms, 1100);
  assert_i64_eq(e->a.log[0].spent_ms, SPEND_MS); /* 900 ms left: refused */
  assert_false(e->a.log[0].called);
  assert_int_equal(e->b.n, 0);
}

static void the_trace_crosses_two_hops_with_a_new_span_at_each(void **state) {
  env_t *e = *state;
  bw_trace_t client, at_a, at_b;
  int status = 0;
  assert_status(bw_trace_from_headers(
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    55, "congo=t61rcWkgMzE", 17, &client),
                BW_OK);
  bw_trace_set(&client);
  assert_int_equal(call_a(e, e->client, NULL, &status), BW_FAILURE_NONE);
  bw_trace_set(NULL);
  assert_int_equal(call_a(e, e->client, NULL, &status), BW_FAILURE_NONE);
  stop_both(e);
  assert_int_equal(e->a.n, 2);
  assert_int_equal(e->b.n, 2);
  /* A: the client's trace, the client's attempt as the parent */
  assert_status(e->a.log[0].trace_rc, BW_OK);
  assert_status(
      bw_traceparent_parse(e->a.log[0].tp, strlen(e->a.log[0].tp), &at_a),
      BW_OK);
  assert_memory_equal(at_a.trace_id, client.trace_id, 16);
  assert_memory_not_equal(at_a.parent_id, client.parent_id, 8);
  assert_int_equal(at_a.flags, 1);
  assert_string_equal(e->a.log[0].ts, "congo=t61rcWkgMzE");
  /* B: the same trace, A's attempt as the parent */
  assert_status(
      bw_traceparent_parse(e->b.log[0].tp, strlen(e->b.log[0].tp), &at_b),
      BW_OK);
  assert_memory_equal(at_b.trace_id, client.trace_id, 16);
  assert_memory_not_equal(at_b.parent_id, at_a.parent_id, 8);
  assert_memory_not_equal(at_b.parent_id, client.parent_id, 8);
  assert_int_equal(at_b.flags, 1);
  assert_string_equal(e->b.log[0].ts, "congo=t61rcWkgMzE");
  /* no trace at the client: none at A, and A starts none on its own */
  assert_status(e->a.log[1].trace_rc, BW_E_NOTFOUND);
  assert_string_equal(e->a.log[1].tp, "");
  assert_string_equal(e->b.log[1].tp, "");
}

static void bad_arguments(void **state) {
  env_t *e = *state;
  bw_deadline_t d;
  assert_status(bw_ev_http_deadline(NULL, 0, 1000, &d), BW_E_INVAL);
  assert_int_equal(d.at_ns, 1000 * BW_NS_PER_MS);
  assert_status(bw_ev_http_deadline(NULL, 0, 1000, NULL), BW_E_INVAL);
  stop_both(e);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(the_budget_shrinks_across_two_hops),
      T(grpc_timeout_sets_the_first_hop),
      T(no_header_means_ten_seconds),
      T(less_than_a_second_left_is_refused_before_b),
      T(the_trace_crosses_two_hops_with_a_new_span_at_each),
      T(bad_arguments),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}

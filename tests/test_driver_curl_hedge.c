/* Specification tests: hedging in the libcurl multi driver
 * (bw_curl_request_hedged), over real HTTP on 127.0.0.1 against the real
 * partner (`breakwater partner`'s server, tools/partner_server.h) on the
 * same event_base as the driver.
 *
 * The partner's decisions are its model's, deterministic for a seed: the
 * test finds, with the model itself, a seed whose first answer falls in a
 * 3 s tail and whose second is a fast 5 ms one, so the first copy is slow
 * and its hedge fast — by construction, not by timing. The assertions are
 * counts (the partner's requests and abandoned answers, the driver's copies
 * and wins), bodies and failure kinds — never wall-clock durations. Every
 * loop is bounded by an iteration count and a guard timer. */
#include <event2/event.h>

#include "breakwater/driver_curl.h"
#include "bw_test.h"
#include "partner_server.h"

typedef struct env_s {
  struct event_base *base;
  bw_partner_server_t *srv;
  bw_curl_t *http;
  bw_pipeline_t *pl;
  bw_hedge_t *hedge;
  char url[64];
  int done;
  bw_curl_result_t res;
  char body[256];
} env_t;

/* The first seed whose first two answers are: tail, then fast (or, with
 * both_slow, tail and tail). */
static uint64_t find_seed(const bw_sim_partner_config_t *pc, bool both_slow) {
  for (uint64_t seed = 1; seed < 1000; seed++) {
    bw_sim_partner_config_t c = *pc;
    bw_sim_partner_t *p;
    bw_sim_reply_t a, b;
    c.seed = seed;
    p = bw_sim_partner_new(&c, NULL);
    a = bw_sim_partner_admit(p, 0);
    b = bw_sim_partner_admit(p, 0);
    bw_sim_partner_free(p);
    if (a.latency_ms == c.tail_ms && (b.latency_ms == c.tail_ms) == both_slow)
      return seed;
  }
  fail_msg("no seed gives the answers wanted");
  return 0;
}

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  bw_partner_server_config_t sc;
  bw_pipeline_config_t pc;
  bw_hedge_config_t hc;
  bw_error_t err;
  if (e == NULL) return -1;
  e->base = event_base_new();
  if (e->base == NULL) return -1;
  bw_partner_server_config_init(&sc);
  sc.log = false;
  sc.partner.ok_min_ms = sc.partner.ok_max_ms = 5;
  sc.partner.tail_ratio = 0.5;
  sc.partner.tail_ms = 3000;
  sc.partner.seed = find_seed(&sc.partner, false);
  e->srv = bw_partner_server_new(e->base, &sc, &err);
  if (e->srv == NULL) {
    fprintf(stderr, "partner: %s\n", err.message);
    return -1;
  }
  snprintf(e->url, sizeof e->url, "http://127.0.0.1:%u/charges",
           (unsigned)bw_partner_server_port(e->srv));
  e->http = bw_curl_new(e->base, NULL, &err);
  bw_pipeline_config_init(&pc);
  bw_pipeline_add_timeout(&pc, 10000);
  e->pl = bw_pipeline_new(&pc, &err);
  bw_hedge_config_init(&hc);
  hc.delay = BW_HEDGE_FIXED;
  hc.delay_ms = 100;
  e->hedge = bw_hedge_new(&hc, &err);
  if (e->http == NULL || e->pl == NULL || e->hedge == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  bw_curl_free(e->http);
  bw_partner_server_free(e->srv);
  bw_pipeline_free(e->pl);
  bw_hedge_free(e->hedge);
  event_base_free(e->base);
  free(e);
  return 0;
}

static void on_done(void *userdata, const bw_curl_result_t *res) {
  env_t *e = userdata;
  e->done++;
  e->res = *res;
  snprintf(e->body, sizeof e->body, "%s", res->body);
  e->res.body = e->body;
}

static void guard_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  event_base_loopbreak(arg);
}

/* Runs the loop until the call is done, at most 10 s (the tail is 3 s). */
static void run(env_t *e) {
  struct timeval tv = {10, 0};
  struct event *guard = evtimer_new(e->base, guard_cb, e->base);
  evtimer_add(guard, &tv);
  for (int i = 0; i < 100000 && e->done == 0; i++)
    if (event_base_loop(e->base, EVLOOP_ONCE) != 0) break;
  event_free(guard);
  assert_int_equal(e->done, 1);
}

/* Runs the loop until the partner has nothing in flight and has counted
 * `abandoned` answers (its client was gone), at most 6 s. */
static void drain(env_t *e, uint64_t abandoned) {
  bw_partner_server_stats_t s;
  struct timeval tv = {6, 0};
  struct event *guard = evtimer_new(e->base, guard_cb, e->base);
  evtimer_add(guard, &tv);
  for (int i = 0; i < 100000; i++) {
    bw_partner_server_stats(e->srv, &s);
    if (s.partner.in_flight == 0 && s.abandoned >= abandoned) break;
    if (event_base_loop(e->base, EVLOOP_ONCE) != 0) break;
  }
  event_free(guard);
}

static bw_curl_request_t post(const env_t *e, bool idempotent) {
  bw_curl_request_t req;
  bw_curl_request_init(&req);
  req.method = "POST";
  req.url = e->url;
  req.body = "{}";
  req.body_len = 2;
  req.idempotent = idempotent;
  return req;
}

static void the_hedge_answers_first_and_the_slow_copy_is_cancelled(
    void **state) {
  env_t *e = *state;
  bw_curl_request_t req = post(e, true);
  bw_curl_stats_t cs;
  bw_partner_server_stats_t ps;
  bw_hedge_stats_t hs;
  assert_status(bw_curl_request_hedged(e->http, e->pl, &req, e->hedge,
                                       bw_deadline_none(), on_done, e),
                BW_OK);
  run(e);
  assert_int_equal(e->res.failure, BW_FAILURE_NONE);
  assert_int_equal(e->res.status, 200);
  assert_u64_eq(e->res.attempts, 1);         /* one pipeline attempt ... */
  assert_u64_eq(e->res.network_attempts, 2); /* ... sent twice */
  bw_curl_stats(e->http, &cs);
  assert_u64_eq(cs.network_calls, 2);
  assert_u64_eq(cs.hedges, 1);
  assert_u64_eq(cs.hedge_wins, 1);
  assert_u64_eq(cs.calls_succeeded, 1);
  bw_hedge_stats(e->hedge, &hs);
  assert_u64_eq(hs.hedges, 1);
  assert_u64_eq(hs.samples, 1);
  /* The slow copy was cancelled: its connection closed, so the partner's
   * answer, 3 s later, finds its client gone (abandoned). The hedge's
   * answer reached its client. */
  bw_partner_server_stats(e->srv, &ps);
  assert_u64_eq(ps.network_calls, 2);
  assert_u64_eq(ps.replied_200, 1); /* the hedge's, at 5 ms */
  assert_u64_eq(ps.abandoned, 0);
  drain(e, 1);
  bw_partner_server_stats(e->srv, &ps);
  assert_u64_eq(ps.replied_200, 2);
  assert_u64_eq(ps.abandoned, 1);
  assert_u64_eq(ps.partner.in_flight, 0);
}

static void a_non_idempotent_request_is_not_hedged(void **state) {
  env_t *e = *state;
  bw_curl_request_t req = post(e, false);
  bw_curl_stats_t cs;
  bw_partner_server_stats_t ps;
  assert_status(bw_curl_request_hedged(e->http, e->pl, &req, e->hedge,
                                       bw_deadline_none(), on_done, e),
                BW_OK);
  run(e); /* the tail answer, 3 s: nothing else to take */
  assert_int_equal(e->res.failure, BW_FAILURE_NONE);
  assert_u64_eq(e->res.network_attempts, 1);
  bw_curl_stats(e->http, &cs);
  assert_u64_eq(cs.hedges, 0);
  bw_partner_server_stats(e->srv, &ps);
  assert_u64_eq(ps.network_calls, 1);
  assert_u64_eq(ps.client_resets, 0);
}

/* Freeing the driver with two copies of a request in flight cancels the
 * call (done runs once, cancelled) and cleans up both easy handles (ASan
 * and the partner's count of abandoned answers show it). */
static void freeing_the_driver_cancels_every_copy(void **state) {
  env_t *e = *state;
  bw_partner_server_config_t sc;
  bw_partner_server_t *slow;
  bw_curl_request_t req = post(e, true);
  bw_curl_stats_t cs;
  bw_partner_server_stats_t ps;
  bw_error_t err;
  struct timeval tv = {5, 0};
  struct event *guard;
  bw_partner_server_config_init(&sc);
  sc.log = false;
  sc.partner.ok_min_ms = sc.partner.ok_max_ms = 5;
  sc.partner.tail_ratio = 0.5;
  sc.partner.tail_ms = 1500;
  sc.partner.seed = find_seed(&sc.partner, true);
  slow = bw_partner_server_new(e->base, &sc, &err);
  assert_non_null(slow);
  snprintf(e->url, sizeof e->url, "http://127.0.0.1:%u/charges",
           (unsigned)bw_partner_server_port(slow));
  req.url = e->url;
  assert_status(bw_curl_request_hedged(e->http, e->pl, &req, e->hedge,
                                       bw_deadline_none(), on_done, e),
                BW_OK);
  /* Run until the hedge went out (both copies are 1.5 s slow). */
  guard = evtimer_new(e->base, guard_cb, e->base);
  evtimer_add(guard, &tv);
  for (int i = 0; i < 100000; i++) {
    bw_partner_server_stats(slow, &ps);
    if (ps.network_calls == 2) break;
    if (event_base_loop(e->base, EVLOOP_ONCE) != 0) break;
  }
  event_free(guard);
  bw_curl_stats(e->http, &cs);
  assert_u64_eq(cs.hedges, 1);
  assert_int_equal(e->done, 0);
  bw_curl_free(e->http);
  e->http = NULL;
  assert_int_equal(e->done, 1);
  assert_true(e->res.cancelled);
  /* Both answers, 1.5 s later, find their client gone. */
  {
    struct timeval tv2 = {6, 0};
    guard = evtimer_new(e->base, guard_cb, e->base);
    evtimer_add(guard, &tv2);
    for (int i = 0; i < 100000; i++) {
      bw_partner_server_stats(slow, &ps);
      if (ps.partner.in_flight == 0 && ps.abandoned + ps.client_resets >= 2)
        break;
      if (event_base_loop(e->base, EVLOOP_ONCE) != 0) break;
    }
    event_free(guard);
  }
  bw_partner_server_stats(slow, &ps);
  assert_u64_eq(ps.abandoned + ps.client_resets, 2);
  bw_partner_server_free(slow);
}

static void a_null_hedge_is_refused(void **state) {
  env_t *e = *state;
  bw_curl_request_t req = post(e, true);
  assert_status(bw_curl_request_hedged(e->http, e->pl, &req, NULL,
                                       bw_deadline_none(), on_done, e),
                BW_E_INVAL);
  assert_status(bw_curl_request_hedged(NULL, e->pl, &req, e->hedge,
                                       bw_deadline_none(), on_done, e),
                BW_E_INVAL);
  assert_int_equal(e->done, 0);
}

int main(void) {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(the_hedge_answers_first_and_the_slow_copy_is_cancelled),
      T(a_non_idempotent_request_is_not_hedged),
      T(freeing_the_driver_cancels_every_copy),
      T(a_null_hedge_is_refused),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}

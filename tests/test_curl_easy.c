/* Specification tests: the blocking easy-handle helper (curl_easy.h), over
 * real HTTP on 127.0.0.1, with the caller's own CURL handle.
 *
 * Each test runs the scripted evhttp server (http_scripted.h) on a thread
 * of its own, performs through a pipeline, then stops the server and reads
 * its log. The assertions are counts (server-side hits == network
 * attempts), verdicts, failure kinds, headers and the waits the pipeline
 * chose — never wall-clock durations. Through the fixture's options the
 * helper runs on a manual clock that only its sleep function moves: that
 * function records each wait and the HTTP status the handle held when the
 * wait began, then advances the clock by the wait, so latencies and budgets
 * are exact. The tests that call bw_curl_easy_perform (no options) use the
 * defaults: the monotonic clock and a real nanosleep. */
#include <curl/curl.h>

#include "breakwater/curl_easy.h"
#include "bw_test.h"
#include "http_scripted.h"
#include "pipeline_kit.h"

typedef struct env_s {
  thread_srv_t t;
  pthread_t th;
  CURL *easy;
  bool stopped;
  bw_clock_t *clock;        /* the helper's clock in `o` (manual) */
  bw_curl_easy_options_t o; /* the defaults, but `clock` and record_sleep */
  int nsleeps;
  int64_t sleep_ms[8];      /* each wait, as the pipeline asked */
  long status_at_sleep[8];  /* the handle's last status as it began */
  bw_retry_policy_t *retry; /* the test's, if any: freed by teardown */
  bw_pipeline_t *pl;        /* likewise */
} env_t;

/* Records a wait and moves the helper's clock by it, instead of sleeping. */
static void record_sleep(void *ud, int64_t ms) {
  env_t *e = ud;
  if (e->nsleeps < 8) {
    e->sleep_ms[e->nsleeps] = ms;
    curl_easy_getinfo(e->easy, CURLINFO_RESPONSE_CODE,
                      &e->status_at_sleep[e->nsleeps]);
  }
  e->nsleeps++;
  bw_clock_manual_advance(e->clock, ms * BW_NS_PER_MS);
}

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  thread_srv_start(&e->t, &e->th);
  e->easy = curl_easy_init();
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  if (e->easy == NULL || e->clock == NULL) return -1;
  bw_curl_easy_options_init(&e->o);
  e->o.clock = e->clock;
  e->o.sleep = record_sleep;
  e->o.sleep_userdata = e;
  *state = e;
  return 0;
}

static void stop(env_t *e) {
  if (!e->stopped) thread_srv_stop(&e->t, e->th);
  e->stopped = true;
}

static int teardown(void **state) {
  env_t *e = *state;
  stop(e);
  thread_srv_free(&e->t);
  curl_easy_cleanup(e->easy);
  bw_pipeline_free(e->pl);
  bw_retry_policy_free(e->retry);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static void set_url(env_t *e, const char *path) {
  char u[96];
  snprintf(u, sizeof(u), "http://127.0.0.1:%d%s", e->t.srv.port, path);
  curl_easy_setopt(e->easy, CURLOPT_URL, u); /* libcurl copies it */
}

/* The test's pipeline "easy" (freed by teardown): a constant retry of
 * `attempts` attempts `delay_ms` apart, idempotent or not, each attempt
 * limited to 2 s. */
static bw_pipeline_t *retrying(env_t *e, uint32_t attempts, int64_t delay_ms,
                               bool idempotent) {
  e->retry = bwt_constant_retry(attempts, delay_ms, idempotent, NULL);
  e->pl = bwt_pipeline("easy", 0, NULL, e->retry, 2000);
  return e->pl;
}

/* bw_curl_easy_perform_with the fixture's options. */
static int perform(env_t *e, const bw_pipeline_t *pl, bw_curl_result_t *res) {
  return bw_curl_easy_perform_with(pl, e->easy, &e->o, res);
}

static void a_503_then_200_is_retried_and_succeeds(void **state) {
  env_t *e = *state;
  bw_curl_result_t res;
  set_url(e, "/flaky");
  assert_int_equal(perform(e, retrying(e, 3, 10, true), &res), BW_FAILURE_NONE);
  assert_int_equal(res.status, 200);
  assert_int_equal(res.curl_code, CURLE_OK);
  assert_int_equal(res.transport, BW_TRANSPORT_NONE);
  assert_int_equal(res.last_verdict, BW_VERDICT_OK);
  assert_u64_eq(res.attempts, 3);
  assert_u64_eq(res.network_attempts, 3);
  assert_int_equal(e->nsleeps, 2);
  assert_int_equal(e->sleep_ms[0], 10);
  assert_int_equal(e->sleep_ms[1], 10);
  assert_int_equal(e->status_at_sleep[0], 503); /* each wait after a 503 */
  assert_int_equal(e->status_at_sleep[1], 503);
  assert_int_equal(res.waited_ms, 20);
  assert_i64_eq(res.latency_ns, 20 * BW_NS_PER_MS); /* the waits, no more */
  assert_string_equal(res.body, "ok"); /* the last attempt's body only */
  assert_u64_eq(res.body_len, 2);
  assert_false(res.body_truncated);
  assert_string_equal(res.idempotency_key, "");
  bw_curl_result_clear(&res);
  assert_string_equal(res.body, "");
  stop(e);
  assert_u64_eq(hits_on(&e->t.srv, "/flaky"), 3);
  assert_string_equal(e->t.srv.log[0].key, ""); /* idempotent: no key */
}

static void a_404_is_permanent_and_not_retried(void **state) {
  env_t *e = *state;
  bw_curl_result_t res;
  set_url(e, "/bad");
  assert_int_equal(
      bw_curl_easy_perform(retrying(e, 3, 10, true), e->easy, &res),
      BW_FAILURE_PERMANENT);
  assert_int_equal(res.status, 404);
  assert_int_equal(res.last_verdict, BW_VERDICT_PERMANENT);
  assert_u64_eq(res.network_attempts, 1);
  assert_int_equal(res.waited_ms, 0);
  assert_string_equal(res.body, "no such thing");
  bw_curl_result_clear(&res);
  stop(e);
  assert_u64_eq(hits_on(&e->t.srv, "/bad"), 1);
}

/* The one wait comes between the 429 and the retry, and is the hint: the
 * helper's clock moved by it and by nothing else. */
static void a_429_with_retry_after_waits_the_second(void **state) {
  env_t *e = *state;
  bw_curl_result_t res;
  set_url(e, "/throttle");
  assert_int_equal(perform(e, retrying(e, 3, 10, true), &res), BW_FAILURE_NONE);
  assert_int_equal(e->nsleeps, 1);
  assert_int_equal(e->sleep_ms[0],
                   1000); /* the hint, above the 10 ms backoff */
  assert_int_equal(e->status_at_sleep[0], 429);
  assert_int_equal(res.waited_ms, 1000);
  assert_i64_eq(res.latency_ns, 1000 * BW_NS_PER_MS);
  assert_u64_eq(res.network_attempts, 2);
  assert_int_equal(res.status, 200);
  bw_curl_result_clear(&res);
  stop(e);
  assert_u64_eq(hits_on(&e->t.srv, "/throttle"), 2);
}

static void grpc_pushback_is_the_hint_and_negative_means_never(void **state) {
  env_t *e = *state;
  bw_pipeline_t *pl = retrying(e, 3, 10, true);
  bw_curl_result_t res;
  set_url(e, "/pushback");
  assert_int_equal(bw_curl_easy_perform(pl, e->easy, &res), BW_FAILURE_NONE);
  assert_int_equal(res.waited_ms, 40);
  bw_curl_result_clear(&res);
  set_url(e, "/never");
  assert_int_equal(bw_curl_easy_perform(pl, e->easy, &res),
                   BW_FAILURE_RETRY_AFTER);
  assert_int_equal(res.retry_after_ms, BW_RETRY_AFTER_NEVER);
  assert_u64_eq(res.network_attempts, 1);
  bw_curl_result_clear(&res);
  stop(e);
  assert_u64_eq(hits_on(&e->t.srv, "/never"), 1);
}

/* A 100 ms attempt limit cuts the 300 ms answer: curl timed out, a transport
 * timeout, after one attempt that reached the server. The same request with
 * a 2 s limit gets the answer, so the cut came from the limit the helper
 * gave curl (in milliseconds: in seconds the first would not be cut, and a
 * limit shorter than asked would cut the second). */
static void the_attempt_timeout_cuts_a_slow_answer(void **state) {
  env_t *e = *state;
  bw_pipeline_t *patient = bwt_pipeline("patient", 0, NULL, NULL, 2000);
  bw_curl_result_t res;
  e->pl = bwt_pipeline("easy", 0, NULL, NULL, 100);
  set_url(e, "/slow"); /* answers after 300 ms */
  assert_int_equal(bw_curl_easy_perform(e->pl, e->easy, &res),
                   BW_FAILURE_EXHAUSTED);
  assert_int_equal(res.curl_code, CURLE_OPERATION_TIMEDOUT);
  assert_int_equal(res.transport, BW_TRANSPORT_TIMEOUT);
  assert_int_equal(res.last_verdict, BW_VERDICT_TRANSIENT);
  assert_u64_eq(res.network_attempts, 1);
  assert_int_equal(res.status, 0);
  bw_curl_result_clear(&res);
  assert_int_equal(bw_curl_easy_perform(patient, e->easy, &res),
                   BW_FAILURE_NONE);
  assert_int_equal(res.status, 200);
  assert_string_equal(res.body, "late");
  bw_curl_result_clear(&res);
  stop(e);
  assert_u64_eq(hits_on(&e->t.srv, "/slow"), 2);
  bw_pipeline_free(patient);
}

/* On the fixture's clock, which no attempt moves, the budget sent is the
 * deadline exactly. */
static void the_budget_header_arrives_at_the_server(void **state) {
  env_t *e = *state;
  bw_pipeline_t *bare = bwt_pipeline("bare", 0, NULL, NULL, 0);
  bw_curl_result_t res;
  bw_deadline_t prev;
  int64_t ms = -1;
  e->pl = bwt_pipeline("easy", 5000, NULL, NULL, 0);
  set_url(e, "/ok");
  assert_int_equal(perform(e, e->pl, &res), BW_FAILURE_NONE);
  bw_curl_result_clear(&res);
  /* This thread's current deadline (a reading of the helper's clock)
   * narrows the call's. */
  prev = bw_deadline_set(bw_deadline_in(bw_clock_now(e->clock), 3000));
  assert_int_equal(perform(e, e->pl, &res), BW_FAILURE_NONE);
  bw_curl_result_clear(&res);
  bw_deadline_set(prev);
  /* No deadline at all: no header. */
  assert_int_equal(perform(e, bare, &res), BW_FAILURE_NONE);
  bw_curl_result_clear(&res);
  stop(e);
  assert_int_equal(e->t.srv.nlog, 3);
  assert_status(bw_deadline_header_parse(e->t.srv.log[0].budget,
                                         strlen(e->t.srv.log[0].budget), &ms),
                BW_OK);
  assert_i64_eq(ms, 5000);
  assert_status(bw_deadline_header_parse(e->t.srv.log[1].budget,
                                         strlen(e->t.srv.log[1].budget), &ms),
                BW_OK);
  assert_i64_eq(ms, 3000);
  assert_string_equal(e->t.srv.log[2].budget, "");
  bw_pipeline_free(bare);
}

static void the_threads_trace_goes_out_with_a_new_span_per_attempt(
    void **state) {
  env_t *e = *state;
  bw_pipeline_t *pl = retrying(e, 3, 1, true);
  bw_curl_result_t res;
  bw_trace_t t, seen[3];
  unsigned i;
  assert_status(bw_trace_from_headers(
                    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
                    55, "rojo=00f067aa0ba902b7", 21, &t),
                BW_OK);
  set_url(e, "/flaky");
  bw_trace_set(&t);
  assert_int_equal(bw_curl_easy_perform(pl, e->easy, &res), BW_FAILURE_NONE);
  bw_trace_set(NULL);
  bw_curl_result_clear(&res);
  set_url(e, "/ok");
  assert_int_equal(bw_curl_easy_perform(pl, e->easy, &res), BW_FAILURE_NONE);
  bw_curl_result_clear(&res);
  stop(e);
  assert_int_equal(e->t.srv.nlog, 4);
  for (i = 0; i < 3; i++) {
    const char *tp = e->t.srv.log[i].traceparent;
    assert_status(bw_traceparent_parse(tp, strlen(tp), &seen[i]), BW_OK);
    assert_memory_equal(seen[i].trace_id, t.trace_id, 16);
    assert_int_equal(seen[i].flags, 0);
    assert_memory_not_equal(seen[i].parent_id, t.parent_id, 8);
    assert_string_equal(e->t.srv.log[i].tracestate, "rojo=00f067aa0ba902b7");
  }
  assert_memory_not_equal(seen[0].parent_id, seen[1].parent_id, 8);
  assert_memory_not_equal(seen[1].parent_id, seen[2].parent_id, 8);
  assert_memory_not_equal(seen[0].parent_id, seen[2].parent_id, 8);
  assert_string_equal(e->t.srv.log[3].traceparent, ""); /* none current */
}

static void non_idempotent_retries_send_one_key(void **state) {
  env_t *e = *state;
  bw_pipeline_t *pl = retrying(e, 3, 1, false);
  bw_pipeline_t *bare = bwt_pipeline("bare", 0, NULL, NULL, 2000);
  bw_curl_result_t res;
  char key[37];
  e->o.idempotent = false;
  curl_easy_setopt(e->easy, CURLOPT_POSTFIELDS, "{}");
  set_url(e, "/flaky");
  /* The policy retries a transient failure of a non-idempotent call only
   * because the helper attached the key to the retry. */
  assert_int_equal(perform(e, pl, &res), BW_FAILURE_NONE);
  assert_u64_eq(res.network_attempts, 3);
  assert_int_equal(strlen(res.idempotency_key), 36);
  memcpy(key, res.idempotency_key, sizeof(key));
  bw_curl_result_clear(&res);
  /* Without a retry the helper makes the key itself. */
  set_url(e, "/ok");
  assert_int_equal(perform(e, bare, &res), BW_FAILURE_NONE);
  assert_int_equal(strlen(res.idempotency_key), 36);
  assert_string_not_equal(res.idempotency_key, key);
  bw_curl_result_clear(&res);
  stop(e);
  assert_int_equal(e->t.srv.nlog, 4);
  assert_string_equal(e->t.srv.log[0].key, key);
  assert_string_equal(e->t.srv.log[1].key, key);
  assert_string_equal(e->t.srv.log[2].key, key);
  assert_int_equal(strlen(e->t.srv.log[3].key), 36);
  assert_string_not_equal(e->t.srv.log[3].key, key);
  bw_pipeline_free(bare);
}

static void user_headers_are_sent_and_the_handle_is_reusable(void **state) {
  env_t *e = *state;
  bw_curl_result_t res;
  struct curl_slist *h = curl_slist_append(NULL, "X-Test: hello");
  assert_non_null(h);
  e->pl = bwt_pipeline("easy", 0, NULL, NULL, 2000);
  e->o.headers = h;
  set_url(e, "/echo-header");
  assert_int_equal(perform(e, e->pl, &res), BW_FAILURE_NONE);
  assert_string_equal(res.body, "hello");
  bw_curl_result_clear(&res);
  /* The same handle again, without the headers: nothing left over. */
  assert_int_equal(bw_curl_easy_perform(e->pl, e->easy, &res), BW_FAILURE_NONE);
  assert_string_equal(res.body, "(none)");
  bw_curl_result_clear(&res);
  /* A NULL result: the body is dropped, the answer is the same. */
  assert_int_equal(bw_curl_easy_perform(e->pl, e->easy, NULL), BW_FAILURE_NONE);
  curl_slist_free_all(h);
}

static void refused_connection_is_not_sent_and_retried(void **state) {
  env_t *e = *state;
  bw_pipeline_t *pl = retrying(e, 2, 1, false);
  bw_curl_result_t res;
  char u[96];
  snprintf(u, sizeof(u), "http://127.0.0.1:%d/ok", closed_port());
  curl_easy_setopt(e->easy, CURLOPT_URL, u);
  /* NOT_SENT is retried even without a key. */
  assert_int_equal(bw_curl_easy_perform(pl, e->easy, &res),
                   BW_FAILURE_EXHAUSTED);
  assert_int_equal(res.transport, BW_TRANSPORT_REFUSED);
  assert_int_equal(res.last_verdict, BW_VERDICT_NOT_SENT);
  assert_u64_eq(res.network_attempts, 2);
  bw_curl_result_clear(&res);
  curl_easy_setopt(e->easy, CURLOPT_URL, "http://bw-test.invalid/ok");
  assert_int_equal(bw_curl_easy_perform(pl, e->easy, &res),
                   BW_FAILURE_EXHAUSTED);
  assert_int_equal(res.transport, BW_TRANSPORT_DNS);
  bw_curl_result_clear(&res);
}

static void bad_arguments_are_refused(void **state) {
  env_t *e = *state;
  bw_curl_easy_options_t o;
  bw_curl_result_t res;
  e->pl = bwt_pipeline("easy", 0, NULL, NULL, 2000);
  assert_status(bw_curl_easy_perform(NULL, e->easy, &res), BW_E_INVAL);
  assert_string_equal(res.body, "");
  assert_status(bw_curl_easy_perform(e->pl, NULL, &res), BW_E_INVAL);
  bw_curl_easy_options_init(&o);
  o.connect_timeout_ms = 0;
  assert_status(bw_curl_easy_perform_with(e->pl, e->easy, &o, &res),
                BW_E_INVAL);
  bw_curl_easy_options_init(&o);
  o.max_body = BW_CURL_BODY_MAX + 1;
  assert_status(bw_curl_easy_perform_with(e->pl, e->easy, &o, &res),
                BW_E_INVAL);
  bw_curl_easy_options_init(NULL);
  bw_curl_result_clear(NULL);
}

static void verdicts_of_curl_codes(void **state) {
  (void)state;
  assert_int_equal(bw_curl_verdict(CURLE_OK, 200), BW_VERDICT_OK);
  assert_int_equal(bw_curl_verdict(CURLE_OK, 503), BW_VERDICT_TRANSIENT);
  assert_int_equal(bw_curl_verdict(CURLE_OK, 429), BW_VERDICT_TRANSIENT);
  assert_int_equal(bw_curl_verdict(CURLE_OK, 408), BW_VERDICT_TRANSIENT);
  assert_int_equal(bw_curl_verdict(CURLE_OK, 404), BW_VERDICT_PERMANENT);
  assert_int_equal(bw_curl_verdict(CURLE_OPERATION_TIMEDOUT, 200),
                   BW_VERDICT_TRANSIENT);
  assert_int_equal(bw_curl_verdict(CURLE_COULDNT_CONNECT, 0),
                   BW_VERDICT_NOT_SENT);
  assert_int_equal(bw_curl_verdict(CURLE_COULDNT_RESOLVE_HOST, 0),
                   BW_VERDICT_NOT_SENT);
  assert_int_equal(bw_curl_verdict(CURLE_RECV_ERROR, 0), BW_VERDICT_TRANSIENT);
  assert_int_equal(bw_curl_verdict(CURLE_UNSUPPORTED_PROTOCOL, 0),
                   BW_VERDICT_PERMANENT);
  assert_int_equal(bw_curl_verdict(CURLE_URL_MALFORMAT, 0),
                   BW_VERDICT_PERMANENT);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(a_503_then_200_is_retried_and_succeeds),
      T(a_404_is_permanent_and_not_retried),
      T(a_429_with_retry_after_waits_the_second),
      T(grpc_pushback_is_the_hint_and_negative_means_never),
      T(the_attempt_timeout_cuts_a_slow_answer),
      T(the_budget_header_arrives_at_the_server),
      T(the_threads_trace_goes_out_with_a_new_span_per_attempt),
      T(non_idempotent_retries_send_one_key),
      T(user_headers_are_sent_and_the_handle_is_reusable),
      T(refused_connection_is_not_sent_and_retried),
      T(bad_arguments_are_refused),
      cmocka_unit_test(verdicts_of_curl_codes),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* breakwater — the libcurl easy helper and the CURLcode classification
 * (curl_easy.h). No libevent here: this library links the core and libcurl
 * only, and the multi driver (curl.c, on libevent) is built on it.
 *
 * bw_curl_easy_perform drives the pipeline's state machine itself
 * (bw_pipeline_begin_at / report / resume): an ATTEMPT is one
 * curl_easy_perform of the caller's handle, a WAIT one nanosleep. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "breakwater/curl_easy.h"
#include "breakwater/ext.h"
#include "curl_common.h"

/* ---- the classification, shared with the multi driver ------------------- */

bw_transport_t bw_curl_transport(int curl_code) {
  switch ((CURLcode)curl_code) {
  case CURLE_OK:
    return BW_TRANSPORT_NONE;
  case CURLE_OPERATION_TIMEDOUT:
    return BW_TRANSPORT_TIMEOUT;
  case CURLE_COULDNT_CONNECT:
    return BW_TRANSPORT_REFUSED;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
    return BW_TRANSPORT_DNS;
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CIPHER:
  case CURLE_SSL_CACERT_BADFILE:
    return BW_TRANSPORT_TLS;
  case CURLE_GOT_NOTHING:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_PARTIAL_FILE:
    return BW_TRANSPORT_RESET;
  default:
    return BW_TRANSPORT_OTHER;
  }
}

bw_verdict_t bw_curl_verdict(int curl_code, int status) {
  /* A request curl cannot even express will not get better by retrying. */
  if (curl_code == CURLE_UNSUPPORTED_PROTOCOL ||
      curl_code == CURLE_URL_MALFORMAT)
    return BW_VERDICT_PERMANENT;
  return bw_http_classify(status, bw_curl_transport(curl_code));
}

void bw_curl_result_clear(bw_curl_result_t *res) {
  if (res == NULL) return;
  /* A body is copied only when it is not empty; an empty one is the
   * static "". */
  if (res->body != NULL && res->body_len > 0)
    bw_free((void *)(uintptr_t)res->body);
  res->body = "";
  res->body_len = 0;
}

/* ---- libcurl, once per process ----------------------------------------- */

static pthread_once_t bw__easy_once = PTHREAD_ONCE_INIT;
static CURLcode bw__easy_init_rc = CURLE_FAILED_INIT;

static void bw__easy_global_init(void) {
  /* Never cleaned up (curl_global_cleanup is not safe while another part
   * of the program uses libcurl). curl_global_init counts its calls, so the
   * multi driver's own once-only init does not conflict with this one. */
  bw__easy_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- the easy helper ---------------------------------------------------- */

void bw_curl_easy_options_init(bw_curl_easy_options_t *opts) {
  if (opts == NULL) return;
  memset(opts, 0, sizeof(*opts));
  opts->idempotent = true;
  opts->outer = bw_deadline_none();
  opts->clock = bw_clock_monotonic();
  opts->wall_clock = bw_clock_realtime();
  opts->connect_timeout_ms = 2000;
  opts->max_body = BW_CURL_BODY_MAX;
}

/* One attempt's response, as it arrives. */
typedef struct bw__easy_s {
  const bw_clock_t *wall;
  char *buf; /* max_body + 1 bytes */
  size_t max, len;
  bool truncated;
  bw__curl_hint_t hint;
} bw__easy_t;

static size_t bw__easy_write_cb(char *data, size_t size, size_t nmemb,
                                void *userp) {
  bw__easy_t *e = userp;
  return bw__curl_body_append(e->buf, &e->len, e->max, &e->truncated, data,
                              size * nmemb);
}

static size_t bw__easy_header_cb(char *line, size_t size, size_t nmemb,
                                 void *userp) {
  bw__easy_t *e = userp;
  size_t n = size * nmemb;
  bw__curl_hint_line(&e->hint, line, n, e->wall);
  return n;
}

static void bw__easy_sleep(int64_t ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000);
  ts.tv_nsec = (long)((ms % 1000) * 1000000);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Puts back libcurl's defaults for the options the helper set. */
static void bw__easy_restore(CURL *easy) {
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, (curl_write_callback)NULL);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *)stdout);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, (curl_write_callback)NULL);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, (void *)NULL);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 0L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 0L);
}

int bw_curl_easy_perform_with(const bw_pipeline_t *pl, CURL *easy,
                              const bw_curl_easy_options_t *opts,
                              bw_curl_result_t *result) {
  bw_curl_easy_options_t o;
  bw_pipeline_call_t c;
  bw_curl_result_t res;
  bw__easy_t e;
  bw_rand_t rng;
  int64_t start;
  int step;
  bool nomem = false;

  if (result != NULL) {
    memset(result, 0, sizeof(*result));
    result->body = "";
  }
  if (opts != NULL)
    o = *opts;
  else
    bw_curl_easy_options_init(&o);
  if (pl == NULL || easy == NULL || o.connect_timeout_ms < 1 ||
      o.max_body > BW_CURL_BODY_MAX)
    return BW_E_INVAL;
  if (o.clock == NULL) o.clock = bw_clock_monotonic();
  if (o.wall_clock == NULL) o.wall_clock = bw_clock_realtime();
  pthread_once(&bw__easy_once, bw__easy_global_init);
  if (bw__easy_init_rc != CURLE_OK) return BW_E_IO;

  memset(&e, 0, sizeof(e));
  e.wall = o.wall_clock;
  e.max = o.max_body;
  e.buf = bw_malloc((size_t)o.max_body + 1);
  if (e.buf == NULL) return BW_E_NOMEM;
  e.buf[0] = '\0';
  bw__curl_hint_reset(&e.hint);

  memset(&res, 0, sizeof(res));
  res.transport = BW_TRANSPORT_NONE;
  res.retry_after_ms = BW_RETRY_AFTER_NONE;
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, bw__easy_write_cb);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *)&e);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, bw__easy_header_cb);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, (void *)&e);

  start = bw_clock_now(o.clock);
  step = bw_pipeline_begin_at(
      pl, &c, bw_deadline_min(o.outer, bw_deadline_current()), start);
  while (step == BW_STEP_ATTEMPT || step == BW_STEP_WAIT) {
    int64_t now = bw_clock_now(o.clock), limit, connect_ms;
    struct curl_slist *headers;
    CURLcode code;
    long status = 0;
    bool ok = true;
    if (step == BW_STEP_WAIT) {
      res.waited_ms += c.delay_ms;
      if (o.sleep != NULL)
        o.sleep(o.sleep_userdata, c.delay_ms);
      else
        bw__easy_sleep(c.delay_ms);
      step = bw_pipeline_resume(&c, bw_clock_now(o.clock));
      continue;
    }
    res.attempts++;
    if (!o.idempotent && res.idempotency_key[0] == '\0') {
      int64_t unix_ms = bw_clock_now(o.wall_clock) / BW_NS_PER_MS;
      /* With a retry the key is the pipeline's, so that a non-idempotent
       * policy may retry a transient failure; without one, ours. */
      const char *k = bw_pipeline_attach_key(&c, unix_ms);
      if (k != NULL) {
        memcpy(res.idempotency_key, k, sizeof(res.idempotency_key) - 1);
      } else {
        bw_rand_seed(&rng, o.seed != 0 ? o.seed : bw_rand_os_seed());
        bw_uuidv7(unix_ms, &rng, res.idempotency_key);
      }
    }
    e.len = 0;
    e.buf[0] = '\0';
    e.truncated = false;
    bw__curl_hint_reset(&e.hint);
    limit = c.attempt_timeout_ms;
    if (limit == 0) { /* no time left: do not start (deadline.h) */
      res.status = 0;
      res.curl_code = 0;
      res.transport = BW_TRANSPORT_TIMEOUT;
      res.retry_after_ms = BW_RETRY_AFTER_NONE;
      step = bw_pipeline_report(&c, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE,
                                bw_clock_now(o.clock));
      continue;
    }
    /* The thread's current trace: this call blocks on the thread that set
     * it. */
    headers = bw__curl_attempt_headers(o.headers, c.deadline, now,
                                       res.idempotency_key, bw_trace_current(),
                                       NULL, &ok);
    if (!ok) {
      curl_slist_free_all(headers);
      nomem = true;
      bw_pipeline_cancel(&c);
      break;
    }
    connect_ms = o.connect_timeout_ms;
    if (limit > 0 && limit < connect_ms) connect_ms = limit;
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, limit > 0 ? (long)limit : 0L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
    res.network_attempts++;
    code = curl_easy_perform(easy);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_slist_free_all(headers);
    res.status = (int)status;
    res.curl_code = (int)code;
    res.transport = bw_curl_transport((int)code);
    res.retry_after_ms =
        bw__curl_hint_value(&e.hint, res.transport, res.status);
    now = bw_clock_now(o.clock);
    if (res.transport == BW_TRANSPORT_TIMEOUT)
      step = bw_pipeline_report_timeout(&c, now);
    else
      step = bw_pipeline_report(&c, bw_curl_verdict((int)code, res.status),
                                res.retry_after_ms, now);
  }
  bw__easy_restore(easy);

  if (nomem || step < 0) {
    bw_free(e.buf);
    if (step < 0 && !nomem) return step;
    return BW_E_NOMEM;
  }
  res.failure = c.failure;
  res.last_verdict = c.last_verdict;
  res.latency_ns = bw_clock_now(o.clock) - start;
  res.body = "";
  res.body_len = 0;
  res.body_truncated = e.truncated;
  if (e.len > 0) {
    res.body = e.buf; /* handed over: bw_curl_result_clear frees it */
    res.body_len = e.len;
  } else {
    bw_free(e.buf);
  }
  if (result != NULL)
    *result = res;
  else
    bw_curl_result_clear(&res);
  return (int)res.failure;
}

int bw_curl_easy_perform(const bw_pipeline_t *pl, CURL *easy,
                         bw_curl_result_t *result) {
  return bw_curl_easy_perform_with(pl, easy, NULL, result);
}

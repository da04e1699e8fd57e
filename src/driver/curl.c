/* breakwater — the libcurl HTTP driver (driver_curl.h).
 *
 * libcurl's multi socket API bridged to libevent: curl says which sockets
 * to watch (socket callback) and when to wake it (timer callback); libevent
 * says when a socket is ready or the timer fired, and we hand that back with
 * curl_multi_socket_action. The logical call (retries, waits, strategies)
 * is the event driver's: every ATTEMPT it asks for is one easy handle here,
 * and every finished transfer is one bw_ev_call_report. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "breakwater/driver_curl.h"
#include "breakwater/hedge.h"
#include "breakwater/ext.h"
#include "curl_common.h"

typedef struct bw__sock_s bw__sock_t;
typedef struct bw__req_s bw__req_t;

struct bw__sock_s {
  bw_curl_t *http;
  curl_socket_t fd;
  struct event *ev;
  bw__sock_t *prev, *next;
};

struct bw_curl_s {
  struct event_base *base;
  CURLM *multi;
  struct event *timer;
  bw_ev_t *ev;
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  int64_t connect_timeout_ms;
  uint32_t max_body;
  int (*setup)(void *userdata, CURL *easy); /* the user's options, or NULL */
  void *setup_userdata;
  bw_rand_t rng;
  bool closing;
  bw__sock_t *socks;  /* every socket curl asked us to watch */
  struct event *reap; /* fails the transfers in `failed` from the loop */
  bw__req_t *failed;  /* transfers we could not watch (out of memory) */
  /* The counters are written by the loop's thread and may be read from any
   * (bw_curl_stats, the registry's collector at a scrape): under st_lock. */
  pthread_mutex_t st_lock;
  bool st_lock_ready;
  bw_curl_stats_t st;
};

#define BW__ST_LOCK(h) pthread_mutex_lock(&(h)->st_lock)
#define BW__ST_UNLOCK(h) pthread_mutex_unlock(&(h)->st_lock)

/* A hedged copy of the attempt in progress (hedging, below): its own easy
 * handle, headers, body and hints; the primary's are in the request. */
typedef struct bw__leg_s {
  bw__req_t *r;
  CURL *easy; /* NULL when the slot is free */
  struct curl_slist *headers;
  bw__curl_hint_t hint_in;
  char *buf; /* max_body + 1 bytes, allocated with the first copy */
  size_t len;
  bool truncated;
  int64_t sent_ns;
} bw__leg_t;

/* A request's hedging state (NULL hedge: none). */
typedef struct bw__hedging_s {
  bw_hedge_t *hedge;
  bw_hedge_call_t hc;
  struct event *timer;    /* the next hedge, armed while one may go */
  int64_t sent_ns;        /* the primary's send */
  int64_t until_ns;       /* the attempt's end (its time limit), or -1 */
  bw_deadline_t deadline; /* the call's, for the copies' X-Timeout-Budget */
  bw__leg_t legs[BW_HEDGE_MAX_HEDGES];
} bw__hedging_t;

struct bw__req_s {
  bw_curl_t *http;
  bw_ev_call_t *call;
  char *method;
  char *url;
  char *body; /* NULL when none */
  size_t body_len;
  struct curl_slist *user_headers;
  bool idempotent;
  char key[37];
  bw_curl_done_fn done;
  void *ud;
  /* the attempt in progress */
  CURL *easy;
  struct curl_slist *headers;
  bw__curl_hint_t hint_in; /* the response's hints, as they arrive */
  /* the last attempt's results */
  char *buf; /* max_body + 1 bytes */
  size_t len;
  bool truncated;
  int status;
  int curl_code;
  bw_transport_t transport;
  int64_t hint;
  uint32_t network_attempts;
  bool in_failed; /* on http->failed */
  bw__req_t *next_failed;
  bw__hedging_t *hedging; /* bw_curl_request_hedged only */
  bool traced;            /* the caller's trace when the request was made */
  bw_trace_t trace;       /* (copied: attempts run later, from the loop) */
};

/* ---- libcurl, once per process ----------------------------------------- */

static pthread_once_t bw__curl_once = PTHREAD_ONCE_INIT;
static CURLcode bw__curl_init_rc = CURLE_FAILED_INIT;

static void bw__curl_global_init(void) {
  /* Never cleaned up: curl_global_cleanup is not safe while another part of
   * the program still uses libcurl, and the process exit reclaims it. */
  bw__curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- the multi socket bridge ------------------------------------------- */

static void bw__check_done(bw_curl_t *h);

static void bw__on_socket(evutil_socket_t fd, short kind, void *arg) {
  bw_curl_t *h = arg;
  int running = 0;
  int flags = ((kind & EV_READ) ? CURL_CSELECT_IN : 0) |
              ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0);
  curl_multi_socket_action(h->multi, (curl_socket_t)fd, flags, &running);
  bw__check_done(h);
}

static void bw__on_timeout(evutil_socket_t fd, short kind, void *arg) {
  bw_curl_t *h = arg;
  int running = 0;
  (void)fd;
  (void)kind;
  curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  bw__check_done(h);
}

static void bw__sock_drop(bw__sock_t *sk) {
  bw_curl_t *h = sk->http;
  if (sk->prev != NULL)
    sk->prev->next = sk->next;
  else
    h->socks = sk->next;
  if (sk->next != NULL) sk->next->prev = sk->prev;
  if (sk->ev != NULL) event_free(sk->ev);
  bw_free(sk);
}

/* We could not watch a transfer's socket (out of memory). Returning -1 to
 * curl would kill the whole multi handle, so the transfer alone is failed
 * instead, from the loop (a handle may not leave the multi from inside a
 * curl callback). */
static int bw__sock_failed(bw_curl_t *h, CURL *easy) {
  char *p = NULL;
  bw__req_t *r;
  if (easy != NULL) curl_easy_getinfo(easy, CURLINFO_PRIVATE, &p);
  r = (bw__req_t *)(void *)p;
  if (r != NULL && !r->in_failed) {
    r->in_failed = true;
    r->next_failed = h->failed;
    h->failed = r;
    event_active(h->reap, EV_TIMEOUT, 1);
  }
  return 0;
}

/* CURLMOPT_SOCKETFUNCTION: watch s for `what`, or stop watching it. */
static int bw__curl_sock_cb(CURL *easy, curl_socket_t s, int what, void *userp,
                            void *socketp) {
  bw_curl_t *h = userp;
  bw__sock_t *sk = socketp;
  short kind;
  (void)easy;
  if (what == CURL_POLL_REMOVE) {
    if (sk != NULL) bw__sock_drop(sk);
    return 0;
  }
  if (sk == NULL) {
    sk = bw_calloc(1, sizeof(*sk));
    if (sk == NULL) return bw__sock_failed(h, easy);
    sk->http = h;
    sk->fd = s;
    sk->next = h->socks;
    if (h->socks != NULL) h->socks->prev = sk;
    h->socks = sk;
    curl_multi_assign(h->multi, s, sk);
  }
  kind = (short)(((what & CURL_POLL_IN) ? EV_READ : 0) |
                 ((what & CURL_POLL_OUT) ? EV_WRITE : 0) | EV_PERSIST);
  if (sk->ev != NULL) event_free(sk->ev);
  sk->ev = event_new(h->base, (evutil_socket_t)s, kind, bw__on_socket, h);
  if (sk->ev == NULL) return bw__sock_failed(h, easy);
  event_add(sk->ev, NULL);
  return 0;
}

/* CURLMOPT_TIMERFUNCTION: wake curl in timeout_ms (-1: never). */
static int bw__curl_timer_cb(CURLM *multi, long timeout_ms, void *userp) {
  bw_curl_t *h = userp;
  struct timeval tv;
  (void)multi;
  if (timeout_ms < 0) {
    evtimer_del(h->timer);
    return 0;
  }
  /* 0 means "now": curl wants to be called from the loop, not from here. */
  tv.tv_sec = (time_t)(timeout_ms / 1000);
  tv.tv_usec = (suseconds_t)((timeout_ms % 1000) * 1000);
  evtimer_add(h->timer, &tv);
  return 0;
}

/* ---- one attempt -------------------------------------------------------- */

static size_t bw__curl_write_cb(char *data, size_t size, size_t nmemb,
                                void *userp) {
  bw__req_t *r = userp;
  return bw__curl_body_append(r->buf, &r->len, r->http->max_body, &r->truncated,
                              data, size * nmemb);
}

static size_t bw__curl_header_cb(char *line, size_t size, size_t nmemb,
                                 void *userp) {
  bw__req_t *r = userp;
  size_t n = size * nmemb;
  bw__curl_hint_line(&r->hint_in, line, n, r->http->wall);
  return n;
}

static void bw__hedge_end(bw__req_t *r);
static void bw__hedge_arm(bw__req_t *r, const bw_pipeline_call_t *pc,
                          int64_t now);
static bool bw__hedge_finished(bw__req_t *r, CURL *easy, CURLcode code);

static void bw__attempt_end(bw__req_t *r) {
  bw__hedge_end(r); /* the copies leave with the attempt */
  if (r->easy != NULL) {
    curl_multi_remove_handle(r->http->multi, r->easy);
    curl_easy_cleanup(r->easy);
    r->easy = NULL;
  }
  curl_slist_free_all(r->headers);
  r->headers = NULL;
}

/* Ends an attempt that made no network call. */
static void bw__attempt_not_sent(bw__req_t *r, bw_transport_t t, int code) {
  bw__attempt_end(r);
  r->status = 0;
  r->curl_code = code;
  r->transport = t;
  r->hint = BW_RETRY_AFTER_NONE;
  bw_ev_call_report(r->call, BW_VERDICT_NOT_SENT, BW_RETRY_AFTER_NONE);
}

static void bw__req_attempt(void *userdata, bw_ev_call_t *call,
                            const bw_pipeline_call_t *pc) {
  bw__req_t *r = userdata;
  bw_curl_t *h = r->http;
  int64_t now = bw_clock_now(h->clock), limit = pc->attempt_timeout_ms;
  int64_t connect_ms = h->connect_timeout_ms;
  bool ok = true;
  CURL *e;

  r->call = call;
  r->len = 0;
  r->buf[0] = '\0';
  BW__ST_LOCK(h);
  h->st.attempts++;
  BW__ST_UNLOCK(h);
  r->truncated = false;
  bw__curl_hint_reset(&r->hint_in);
  if (!r->idempotent && r->key[0] == '\0') {
    int64_t unix_ms = bw_clock_now(h->wall) / BW_NS_PER_MS;
    /* With a retry the key is the pipeline's, so that a non-idempotent
     * policy may retry a transient failure; without one, ours. */
    const char *k = bw_ev_call_attach_key(call, unix_ms);
    if (k != NULL)
      snprintf(r->key, sizeof(r->key), "%s", k);
    else
      bw_uuidv7(unix_ms, &h->rng, r->key);
  }
  if (limit == 0) { /* no time left: do not start (deadline.h) */
    bw__attempt_not_sent(r, BW_TRANSPORT_TIMEOUT, 0);
    return;
  }

  r->headers =
      bw__curl_attempt_headers(r->user_headers, pc->deadline, now, r->key,
                               r->traced ? &r->trace : NULL, &h->rng, &ok);
  e = ok ? curl_easy_init() : NULL;
  if (e == NULL) {
    bw__attempt_not_sent(r, BW_TRANSPORT_OTHER, CURLE_OUT_OF_MEMORY);
    return;
  }
  r->easy = e;
  curl_easy_setopt(e, CURLOPT_URL, r->url);
  curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)r);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
#if CURL_AT_LEAST_VERSION(7, 85, 0)
  /* an HTTP driver: no file://, no other scheme a URL might smuggle in */
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, bw__curl_write_cb);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, (void *)r);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, bw__curl_header_cb);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, (void *)r);
  if (strcmp(r->method, "HEAD") == 0) {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (r->body != NULL || strcmp(r->method, "GET") != 0) {
    if (r->body != NULL || strcmp(r->method, "POST") == 0 ||
        strcmp(r->method, "PUT") == 0 || strcmp(r->method, "PATCH") == 0) {
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body != NULL ? r->body : "");
    }
    if (strcmp(r->method, "POST") != 0)
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
  }
  if (limit > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)limit);
    if (limit < connect_ms) connect_ms = limit;
  }
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
  if (h->setup != NULL && h->setup(h->setup_userdata, e) != 0) {
    bw__attempt_not_sent(r, BW_TRANSPORT_OTHER, CURLE_FAILED_INIT);
    return;
  }
  if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
    bw__attempt_not_sent(r, BW_TRANSPORT_OTHER, CURLE_FAILED_INIT);
    return;
  }
  r->network_attempts++;
  BW__ST_LOCK(h);
  h->st.network_calls++;
  BW__ST_UNLOCK(h);
  if (r->hedging != NULL) bw__hedge_arm(r, pc, now);
}

/* A transfer finished: classify it and report it to the call. */
static void bw__req_finished(bw__req_t *r, CURLcode code) {
  bw_curl_t *h = r->http;
  long status = 0;
  bw_verdict_t v;
  curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
  bw__attempt_end(r);
  r->status = (int)status;
  r->curl_code = (int)code;
  r->transport = bw_curl_transport((int)code);
  BW__ST_LOCK(h);
  if (r->transport == BW_TRANSPORT_NONE) {
    h->st.responses[(status >= 100 && status <= 599) ? status / 100 : 0]++;
  } else {
    h->st.transport_errors++;
    h->st.transport[r->transport]++;
  }
  BW__ST_UNLOCK(h);
  v = bw_curl_verdict((int)code, r->status);
  r->hint = bw__curl_hint_value(&r->hint_in, r->transport, r->status);
  if (r->transport == BW_TRANSPORT_TIMEOUT)
    bw_ev_call_report_timeout(r->call);
  else
    bw_ev_call_report(r->call, v, r->hint);
}

static void bw__on_reap(evutil_socket_t fd, short kind, void *arg) {
  bw_curl_t *h = arg;
  (void)fd;
  (void)kind;
  while (h->failed != NULL) {
    bw__req_t *r = h->failed;
    h->failed = r->next_failed;
    r->in_failed = false;
    r->next_failed = NULL;
    if (r->easy == NULL) continue; /* it finished meanwhile */
    bw__attempt_end(r);
    r->status = 0;
    r->curl_code = CURLE_OUT_OF_MEMORY;
    r->transport = BW_TRANSPORT_OTHER;
    r->hint = BW_RETRY_AFTER_NONE;
    BW__ST_LOCK(h);
    h->st.transport_errors++;
    h->st.transport[BW_TRANSPORT_OTHER]++;
    BW__ST_UNLOCK(h);
    bw_ev_call_report(r->call, bw_http_classify(0, BW_TRANSPORT_OTHER),
                      BW_RETRY_AFTER_NONE);
  }
}

static void bw__check_done(bw_curl_t *h) {
  CURLMsg *m;
  int left;
  while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
    char *p = NULL;
    if (m->msg != CURLMSG_DONE) continue;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
    if (p != NULL && !bw__hedge_finished((bw__req_t *)(void *)p, m->easy_handle,
                                         m->data.result))
      bw__req_finished((bw__req_t *)(void *)p, m->data.result);
  }
}

static void bw__req_abort(void *userdata, bw_ev_call_t *call) {
  (void)call;
  bw__attempt_end(userdata);
}

static void bw__req_free(bw__req_t *r) {
  if (r == NULL) return;
  if (r->in_failed) {
    bw__req_t **pp = &r->http->failed;
    while (*pp != NULL && *pp != r)
      pp = &(*pp)->next_failed;
    if (*pp == r) *pp = r->next_failed;
  }
  bw__attempt_end(r);
  if (r->hedging != NULL) {
    for (int i = 0; i < (int)BW_HEDGE_MAX_HEDGES; i++)
      bw_free(r->hedging->legs[i].buf);
    bw_free(r->hedging);
  }
  curl_slist_free_all(r->user_headers);
  bw_free(r->method);
  bw_free(r->url);
  bw_free(r->body);
  bw_free(r->buf);
  bw_free(r);
}

static void bw__req_done(void *userdata, const bw_ev_result_t *er) {
  bw__req_t *r = userdata;
  bw_curl_t *h = r->http;
  bw_curl_result_t res;
  memset(&res, 0, sizeof(res));
  res.failure = er->failure;
  res.cancelled = er->cancelled;
  res.status = r->status;
  res.transport = r->transport;
  res.curl_code = r->curl_code;
  res.last_verdict = er->last_verdict;
  res.retry_after_ms = r->hint;
  res.attempts = er->attempts;
  res.network_attempts = r->network_attempts;
  res.waited_ms = er->waited_ms;
  res.latency_ns = er->latency_ns;
  memcpy(res.idempotency_key, r->key, sizeof(res.idempotency_key));
  res.body = r->buf;
  res.body_len = r->len;
  res.body_truncated = r->truncated;
  BW__ST_LOCK(h);
  if (er->cancelled)
    h->st.calls_cancelled++;
  else if (er->failure == BW_FAILURE_NONE)
    h->st.calls_succeeded++;
  else
    h->st.calls_failed++;
  h->st.calls_in_progress--;
  BW__ST_UNLOCK(h);
  if (r->done != NULL) r->done(r->ud, &res);
  bw__req_free(r);
}

/* ---- hedging ------------------------------------------------------------
 *
 * With bw_curl_request_hedged each ATTEMPT of the pipeline may run as
 * several copies: the primary (r->easy, set up above) and, each time the
 * hedge policy's timer fires with no answer yet, a duplicate of it
 * (curl_easy_duphandle: the same URL, method, body and options) with its
 * own headers, body buffer and hints, added to the same multi. The first
 * copy to finish with an OK verdict wins: it becomes the attempt's result
 * and every other copy is removed from the multi and cleaned up (the
 * server sees its connection closed). A copy that fails while another is
 * still out is dropped; the last one out, if it fails, is the attempt's
 * result. The pipeline sees one attempt either way. */

static size_t bw__leg_write_cb(char *data, size_t size, size_t nmemb,
                               void *userp) {
  bw__leg_t *l = userp;
  return bw__curl_body_append(l->buf, &l->len, l->r->http->max_body,
                              &l->truncated, data, size * nmemb);
}

static size_t bw__leg_header_cb(char *line, size_t size, size_t nmemb,
                                void *userp) {
  bw__leg_t *l = userp;
  size_t n = size * nmemb;
  bw__curl_hint_line(&l->hint_in, line, n, l->r->http->wall);
  return n;
}

static void bw__leg_drop(bw__leg_t *l) {
  if (l->easy != NULL) {
    curl_multi_remove_handle(l->r->http->multi, l->easy);
    curl_easy_cleanup(l->easy);
    l->easy = NULL;
  }
  curl_slist_free_all(l->headers);
  l->headers = NULL;
}

/* Drops every copy and the timer (the attempt ended). */
static void bw__hedge_end(bw__req_t *r) {
  bw__hedging_t *g = r->hedging;
  if (g == NULL) return;
  if (g->timer != NULL) {
    event_free(g->timer);
    g->timer = NULL;
  }
  for (int i = 0; i < (int)BW_HEDGE_MAX_HEDGES; i++)
    bw__leg_drop(&g->legs[i]);
}

static void bw__hedge_timer_add(bw__req_t *r, int64_t in_ms) {
  struct timeval tv;
  tv.tv_sec = (time_t)(in_ms / 1000);
  tv.tv_usec = (suseconds_t)((in_ms % 1000) * 1000);
  evtimer_add(r->hedging->timer, &tv);
}

/* Sends one more copy of the attempt in progress. false when it could not
 * (no time left, out of memory): the attempt goes on without it. */
static bool bw__hedge_send(bw__req_t *r, int64_t now) {
  bw__hedging_t *g = r->hedging;
  bw_curl_t *h = r->http;
  bw__leg_t *l = NULL;
  bool ok = true;
  for (int i = 0; i < (int)BW_HEDGE_MAX_HEDGES && l == NULL; i++)
    if (g->legs[i].easy == NULL) l = &g->legs[i];
  if (l == NULL || r->easy == NULL) return false;
  if (g->until_ns >= 0 && g->until_ns - now < BW_NS_PER_MS) return false;
  if (l->buf == NULL && (l->buf = bw_malloc((size_t)h->max_body + 1)) == NULL)
    return false;
  l->r = r;
  l->len = 0;
  l->buf[0] = '\0';
  l->truncated = false;
  bw__curl_hint_reset(&l->hint_in);
  /* Its own X-Timeout-Budget (what is left now, not at the primary's send)
   * and its own span. */
  l->headers =
      bw__curl_attempt_headers(r->user_headers, g->deadline, now, r->key,
                               r->traced ? &r->trace : NULL, &h->rng, &ok);
  l->easy = ok ? curl_easy_duphandle(r->easy) : NULL;
  if (l->easy == NULL) {
    bw__leg_drop(l);
    return false;
  }
  curl_easy_setopt(l->easy, CURLOPT_HTTPHEADER, l->headers);
  curl_easy_setopt(l->easy, CURLOPT_WRITEFUNCTION, bw__leg_write_cb);
  curl_easy_setopt(l->easy, CURLOPT_WRITEDATA, (void *)l);
  curl_easy_setopt(l->easy, CURLOPT_HEADERFUNCTION, bw__leg_header_cb);
  curl_easy_setopt(l->easy, CURLOPT_HEADERDATA, (void *)l);
  if (g->until_ns >= 0) /* the copy ends when the attempt must */
    curl_easy_setopt(l->easy, CURLOPT_TIMEOUT_MS,
                     (long)((g->until_ns - now) / BW_NS_PER_MS));
  if (curl_multi_add_handle(h->multi, l->easy) != CURLM_OK) {
    curl_easy_cleanup(l->easy);
    l->easy = NULL;
    bw__leg_drop(l);
    return false;
  }
  l->sent_ns = now;
  r->network_attempts++;
  BW__ST_LOCK(h);
  h->st.network_calls++;
  h->st.hedges++;
  BW__ST_UNLOCK(h);
  return true;
}

static void bw__hedge_on_timer(evutil_socket_t fd, short kind, void *arg) {
  bw__req_t *r = arg;
  int64_t now = bw_clock_now(r->http->clock), in_ms = -1;
  (void)fd;
  (void)kind;
  if (r->easy == NULL) return; /* the primary is gone: the attempt is ending */
  /* Less than a ms of the attempt left: a copy could not run, so do not
   * spend the budget on one. */
  if (r->hedging->until_ns >= 0 && r->hedging->until_ns - now < BW_NS_PER_MS)
    return;
  if (bw_hedge_fire(&r->hedging->hc, now, &in_ms) != BW_HEDGE_SEND) return;
  if (bw__hedge_send(r, now) && in_ms >= 0) bw__hedge_timer_add(r, in_ms);
}

/* The attempt's primary was just added: begin the hedge iterator and arm
 * its timer. */
static void bw__hedge_arm(bw__req_t *r, const bw_pipeline_call_t *pc,
                          int64_t now) {
  bw__hedging_t *g = r->hedging;
  int64_t in_ms;
  g->sent_ns = now;
  g->deadline = pc->deadline;
  g->until_ns = pc->attempt_timeout_ms > 0
                    ? now + pc->attempt_timeout_ms * BW_NS_PER_MS
                    : -1;
  if (bw_hedge_begin(g->hedge, &g->hc, r->idempotent, now, &in_ms) !=
      BW_HEDGE_ARM)
    return;
  g->timer = evtimer_new(r->http->base, bw__hedge_on_timer, r);
  if (g->timer != NULL) bw__hedge_timer_add(r, in_ms);
}

/* A transfer of a hedged request finished. Returns true when it was
 * handled here (a copy dropped, or nothing left to do), false when the
 * request's primary slot now holds the attempt's result and
 * bw__req_finished must report it. */
static bool bw__hedge_finished(bw__req_t *r, CURL *easy, CURLcode code) {
  bw__hedging_t *g = r->hedging;
  bw__leg_t *won = NULL;
  long status = 0;
  unsigned others = 0;
  int64_t sent_ns;
  if (g == NULL) return false;
  for (int i = 0; i < (int)BW_HEDGE_MAX_HEDGES; i++) {
    if (g->legs[i].easy == easy)
      won = &g->legs[i];
    else if (g->legs[i].easy != NULL)
      others++;
  }
  if (won == NULL && easy != r->easy) return true; /* not ours any more */
  if (won != NULL && r->easy != NULL) others++;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  if (bw_curl_verdict((int)code, (int)status) != BW_VERDICT_OK && others > 0) {
    /* A failed copy while another is still out: drop it, wait for that. */
    if (won != NULL) {
      bw__leg_drop(won);
    } else {
      curl_multi_remove_handle(r->http->multi, r->easy);
      curl_easy_cleanup(r->easy);
      r->easy = NULL;
    }
    return true;
  }
  sent_ns = g->sent_ns;
  if (won != NULL) {
    /* The copy's result becomes the attempt's: its handle, body and hints
     * take the primary's place (the primary, if still out, is dropped). */
    char *buf = r->buf;
    if (r->easy != NULL) {
      curl_multi_remove_handle(r->http->multi, r->easy);
      curl_easy_cleanup(r->easy);
    }
    r->easy = won->easy;
    r->buf = won->buf;
    r->len = won->len;
    r->truncated = won->truncated;
    r->hint_in = won->hint_in;
    won->buf = buf;
    won->easy = NULL;
    sent_ns = won->sent_ns;
    curl_slist_free_all(won->headers);
    won->headers = NULL;
    if (bw_curl_verdict((int)code, (int)status) == BW_VERDICT_OK) {
      BW__ST_LOCK(r->http);
      r->http->st.hedge_wins++;
      BW__ST_UNLOCK(r->http);
    }
  }
  if (bw_curl_verdict((int)code, (int)status) == BW_VERDICT_OK)
    bw_hedge_record(g->hedge, bw_clock_now(r->http->clock) - sent_ns);
  return false; /* bw__req_finished reports r->easy; attempt_end drops the
                   rest */
}

/* ---- the driver --------------------------------------------------------- */

void bw_curl_config_init(bw_curl_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->clock = bw_clock_monotonic();
  cfg->wall_clock = bw_clock_realtime();
  cfg->connect_timeout_ms = 2000;
  cfg->max_body = BW_CURL_BODY_MAX;
}

void bw_curl_request_init(bw_curl_request_t *req) {
  if (req == NULL) return;
  memset(req, 0, sizeof(*req));
  req->method = "GET";
  req->idempotent = true;
}

bw_curl_t *bw_curl_new(struct event_base *base, const bw_curl_config_t *cfg,
                       bw_error_t *err) {
  bw_curl_config_t c;
  bw_ev_config_t ec;
  bw_curl_t *h;
  if (cfg != NULL)
    c = *cfg;
  else
    bw_curl_config_init(&c);
  if (base == NULL) {
    bw_error_set(err, BW_E_INVAL, "base", "base must not be NULL");
    return NULL;
  }
  if (c.connect_timeout_ms < 1) {
    bw_error_set(err, BW_E_INVAL, "connect_timeout_ms",
                 "connect_timeout_ms must be >= 1 (got %lld)",
                 (long long)c.connect_timeout_ms);
    return NULL;
  }
  if (c.max_body > BW_CURL_BODY_MAX) {
    bw_error_set(err, BW_E_INVAL, "max_body", "max_body must be <= %u (got %u)",
                 (unsigned)BW_CURL_BODY_MAX, (unsigned)c.max_body);
    return NULL;
  }
  pthread_once(&bw__curl_once, bw__curl_global_init);
  if (bw__curl_init_rc != CURLE_OK) {
    bw_error_set(err, BW_E_IO, "", "curl_global_init failed: %s",
                 curl_easy_strerror(bw__curl_init_rc));
    return NULL;
  }
  h = bw_calloc(1, sizeof(*h));
  if (h == NULL) goto nomem;
  if (pthread_mutex_init(&h->st_lock, NULL) != 0) {
    bw_free(h);
    h = NULL;
    goto nomem;
  }
  h->st_lock_ready = true;
  h->base = base;
  h->clock = c.clock != NULL ? c.clock : bw_clock_monotonic();
  h->wall = c.wall_clock != NULL ? c.wall_clock : bw_clock_realtime();
  h->connect_timeout_ms = c.connect_timeout_ms;
  h->max_body = c.max_body;
  h->setup = c.setup;
  h->setup_userdata = c.setup_userdata;
  bw_rand_seed(&h->rng, c.seed != 0 ? c.seed : bw_rand_os_seed());
  bw_ev_config_init(&ec);
  ec.clock = h->clock;
  ec.handoff = c.handoff;
  h->ev = bw_ev_new(base, &ec, err);
  if (h->ev == NULL) goto fail;
  h->timer = evtimer_new(base, bw__on_timeout, h);
  h->reap = event_new(base, -1, 0, bw__on_reap, h);
  h->multi = curl_multi_init();
  if (h->timer == NULL || h->reap == NULL || h->multi == NULL) goto nomem;
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, bw__curl_sock_cb);
  curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, (void *)h);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, bw__curl_timer_cb);
  curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, (void *)h);
  bw_error_clear(err);
  return h;
nomem:
  bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the driver");
fail:
  bw_curl_free(h);
  return NULL;
}

void bw_curl_free(bw_curl_t *h) {
  if (h == NULL) return;
  h->closing = true;
  /* Cancels every call: its easy handle leaves the multi (abort), then its
   * done callback runs with cancelled set. */
  bw_ev_free(h->ev);
  if (h->multi != NULL) curl_multi_cleanup(h->multi);
  while (h->socks != NULL)
    bw__sock_drop(h->socks);
  if (h->timer != NULL) event_free(h->timer);
  if (h->reap != NULL) event_free(h->reap);
  if (h->st_lock_ready) pthread_mutex_destroy(&h->st_lock);
  bw_free(h);
}

static char *bw__dup(const char *s, size_t n) {
  char *d = bw_malloc(n + 1);
  if (d == NULL) return NULL;
  if (n > 0) memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static int bw__request_start(bw_curl_t *h, const bw_pipeline_t *pl,
                             const bw_curl_request_t *req, bw_hedge_t *hedge,
                             bw_deadline_t outer, bw_curl_done_fn done,
                             void *userdata) {
  bw_ev_ops_t ops;
  bw__req_t *r;
  const char *method;
  bool ok = true;
  size_t i;
  int rc;
  if (h == NULL || pl == NULL || req == NULL || req->url == NULL ||
      (req->body == NULL && req->body_len > 0) ||
      (req->headers == NULL && req->header_count > 0) || h->closing)
    return BW_E_INVAL;
  for (i = 0; i < req->header_count; i++)
    if (req->headers[i] == NULL) return BW_E_INVAL;
  method = req->method != NULL ? req->method : "GET";
  r = bw_calloc(1, sizeof(*r));
  if (r == NULL) return BW_E_NOMEM;
  r->http = h;
  r->idempotent = req->idempotent;
  r->done = done;
  r->ud = userdata;
  r->transport = BW_TRANSPORT_NONE;
  r->hint = BW_RETRY_AFTER_NONE;
  r->method = bw__dup(method, strlen(method));
  r->url = bw__dup(req->url, strlen(req->url));
  r->buf = bw_malloc((size_t)h->max_body + 1);
  if (req->body != NULL) {
    r->body = bw__dup(req->body, req->body_len);
    r->body_len = req->body_len;
    ok = r->body != NULL;
  }
  for (i = 0; i < req->header_count; i++)
    r->user_headers = bw__curl_append(r->user_headers, req->headers[i], &ok);
  if (hedge != NULL) {
    r->hedging = bw_calloc(1, sizeof(*r->hedging));
    if (r->hedging != NULL) r->hedging->hedge = hedge;
    ok = ok && r->hedging != NULL;
  }
  if (!ok || r->method == NULL || r->url == NULL || r->buf == NULL) {
    bw__req_free(r);
    return BW_E_NOMEM;
  }
  r->buf[0] = '\0';
  r->traced = bw_trace_is_valid(bw_trace_current());
  if (r->traced) r->trace = *bw_trace_current();
  memset(&ops, 0, sizeof(ops));
  ops.attempt = bw__req_attempt;
  ops.abort = bw__req_abort;
  ops.done = bw__req_done;
  ops.driver_timeout = false; /* libcurl enforces CURLOPT_TIMEOUT_MS */
  BW__ST_LOCK(h);
  h->st.calls_started++;
  h->st.calls_in_progress++;
  BW__ST_UNLOCK(h);
  rc = bw_ev_call_start(h->ev, pl, &ops, r, outer, &r->call);
  if (rc != BW_OK) {
    BW__ST_LOCK(h);
    h->st.calls_started--;
    h->st.calls_in_progress--;
    BW__ST_UNLOCK(h);
    bw__req_free(r);
  }
  return rc;
}

int bw_curl_request_at(bw_curl_t *h, const bw_pipeline_t *pl,
                       const bw_curl_request_t *req, bw_deadline_t outer,
                       bw_curl_done_fn done, void *userdata) {
  return bw__request_start(h, pl, req, NULL, outer, done, userdata);
}

int bw_curl_request_hedged(bw_curl_t *h, const bw_pipeline_t *pl,
                           const bw_curl_request_t *req, bw_hedge_t *hedge,
                           bw_deadline_t outer, bw_curl_done_fn done,
                           void *userdata) {
  if (hedge == NULL) return BW_E_INVAL;
  return bw__request_start(h, pl, req, hedge, outer, done, userdata);
}

int bw_curl_request(bw_curl_t *h, const bw_pipeline_t *pl,
                    const bw_curl_request_t *req, bw_curl_done_fn done,
                    void *userdata) {
  return bw_curl_request_at(h, pl, req, bw_deadline_none(), done, userdata);
}

void bw_curl_stats(const bw_curl_t *h, bw_curl_stats_t *out) {
  if (h == NULL || out == NULL) return;
  BW__ST_LOCK((bw_curl_t *)h);
  *out = h->st;
  BW__ST_UNLOCK((bw_curl_t *)h);
}

/* ---- the blocking helper ------------------------------------------------ */

typedef struct bw__sync_s {
  bool done;
  bool nomem;
  bw_failure_t failure;
  bw_curl_result_t *out;
} bw__sync_t;

static void bw__sync_done(void *userdata, const bw_curl_result_t *res) {
  bw__sync_t *s = userdata;
  s->done = true;
  s->failure = res->failure;
  if (s->out == NULL) return;
  *s->out = *res;
  s->out->body = "";
  if (res->body_len > 0) s->out->body = bw__dup(res->body, res->body_len);
  if (s->out->body == NULL) {
    s->out->body = "";
    s->out->body_len = 0;
    s->nomem = true;
  }
}

int bw_http_call(const bw_pipeline_t *pl, const bw_curl_request_t *req,
                 bw_curl_result_t *out, bw_error_t *err) {
  struct event_base *base;
  bw_curl_t *h;
  bw__sync_t s;
  int rc;
  if (out != NULL) {
    memset(out, 0, sizeof(*out));
    out->body = "";
  }
  if (pl == NULL || req == NULL)
    return bw_error_set(err, BW_E_INVAL, pl == NULL ? "pl" : "req",
                        "%s must not be NULL", pl == NULL ? "pl" : "req");
  base = event_base_new();
  if (base == NULL)
    return bw_error_set(err, BW_E_NOMEM, "", "event_base_new failed");
  h = bw_curl_new(base, NULL, err);
  if (h == NULL) {
    event_base_free(base);
    return err != NULL ? err->code : BW_E_NOMEM;
  }
  memset(&s, 0, sizeof(s));
  s.out = out;
  rc = bw_curl_request(h, pl, req, bw__sync_done, &s);
  if (rc != BW_OK) {
    bw_error_set(err, rc, rc == BW_E_INVAL ? "req" : "",
                 rc == BW_E_INVAL ? "req must have a url, a body for "
                                    "body_len and headers for header_count"
                                  : "could not start the request: %s",
                 bw_strerror(rc));
  } else {
    /* Bounded by the pipeline: every attempt has curl's timeout or the
     * deadline, every wait is a timer. Stops if the loop runs dry. */
    while (!s.done && event_base_loop(base, EVLOOP_ONCE) == 0) {
    }
    if (!s.done)
      rc = bw_error_set(err, BW_E_IO, "", "the event loop ran out of events");
    else if (s.nomem)
      rc = bw_error_set(err, BW_E_NOMEM, "", "out of memory copying the body");
  }
  bw_curl_free(h); /* cancels the call if the loop ran dry */
  event_base_free(base);
  if (rc != BW_OK) {
    bw_curl_result_clear(out);
    return rc;
  }
  bw_error_clear(err);
  return (int)s.failure;
}

/* ---- the registry's collector -------------------------------------------- */

/* bw_transport_t's names, for the kind label (NONE is never counted). */
static const char *const bw__transport_kinds[7] = {
    NULL, "timeout", "refused", "dns", "reset", "tls", "other"};

/* One sample with at most one extra label. */
static int bw__emit1(bw_metric_emit_fn emit, void *ctx, const char *family,
                     bw_metric_type_t type, const char *help, const char *label,
                     const char *value, uint64_t v) {
  bw_metric_label_t l = {label, value};
  bw_metric_sample_t s;
  memset(&s, 0, sizeof(s));
  s.family = family;
  s.type = type;
  s.help = help;
  s.labels = label != NULL ? &l : NULL;
  s.label_count = label != NULL ? 1 : 0;
  s.value = (double)v;
  return emit(ctx, &s, NULL);
}

int bw_curl_collect(void *obj, bw_metric_emit_fn emit, void *ctx) {
  static const char *const classes[6] = {"other", "1xx", "2xx",
                                         "3xx",   "4xx", "5xx"};
  const bw_metric_type_t C = BW_METRIC_COUNTER;
  bw_curl_stats_t st;
  int rc = BW_OK, i;
  if (obj == NULL || emit == NULL) return BW_E_INVAL;
  bw_curl_stats(obj, &st);
#define BW__E(fam, type, help, label, value, v)                             \
  do {                                                                      \
    int r_ =                                                                \
        bw__emit1(emit, ctx, (fam), (type), (help), (label), (value), (v)); \
    if (rc == BW_OK) rc = r_;                                               \
  } while (0)
  BW__E("breakwater_http_client_attempts_total", C,
        "Attempts the pipelines asked the HTTP driver for (hedged copies not "
        "counted).",
        NULL, NULL, st.attempts);
  BW__E("breakwater_http_client_network_calls_total", C,
        "Transfers the HTTP driver started on the network (hedged copies "
        "included).",
        NULL, NULL, st.network_calls);
  BW__E("breakwater_http_client_hedges_total", C,
        "Hedged copies of an attempt sent.", NULL, NULL, st.hedges);
  BW__E("breakwater_http_client_hedge_wins_total", C,
        "Attempts whose successful answer was a hedged copy's.", NULL, NULL,
        st.hedge_wins);
  for (i = 1; i < 7; i++)
    BW__E("breakwater_http_client_transport_errors_total", C,
          "Transfers that ended without a response, by transport error kind.",
          "kind", bw__transport_kinds[i], st.transport[i]);
  for (i = 1; i <= 6; i++)
    BW__E("breakwater_http_client_responses_total", C,
          "Responses received, by status class (other: a status outside "
          "100..599).",
          "class", classes[i % 6], st.responses[i % 6]);
  BW__E("breakwater_http_client_calls_total", C,
        "Logical calls (all their attempts) ended, by outcome.", "outcome",
        "success", st.calls_succeeded);
  BW__E("breakwater_http_client_calls_total", C,
        "Logical calls (all their attempts) ended, by outcome.", "outcome",
        "failure", st.calls_failed);
  BW__E("breakwater_http_client_calls_total", C,
        "Logical calls (all their attempts) ended, by outcome.", "outcome",
        "cancelled", st.calls_cancelled);
  BW__E("breakwater_http_client_calls_in_progress", BW_METRIC_GAUGE,
        "Logical calls started and not ended yet.", NULL, NULL,
        st.calls_in_progress);
#undef BW__E
  return rc;
}

int bw_curl_put_registry(bw_registry_t *reg, const char *name, bw_curl_t *http,
                         bw_error_t *err) {
  if (http == NULL)
    return bw_error_set(err, BW_E_INVAL, "http", "http must not be NULL");
  return bw_registry_put_collector(reg, name, bw_curl_collect, http, err);
}

/* Test helper: a tiny evhttp server on a free 127.0.0.1 port, scripted
 * per path, which logs every request it sees (path, Idempotency-Key,
 * X-Timeout-Budget, traceparent, tracestate). Runs on the caller's event_base
 * (srv_start), or on a thread of its own with its own base (thread_srv_start /
 * _stop: for the blocking helpers). Shared by the curl drivers' tests. The
 * scripts: /ok          200 "ok" /flaky       503 twice, then 200 /fail 503
 *   /echo-body   200 "POST <body>" or "OTHER <body>"
 *   /echo-header 200 with the value of the request's X-Test header
 *   /bad         404
 *   /throttle    429 with Retry-After: 1, then 200
 *   /pushback    503 with grpc-retry-pushback-ms: 40, then 200
 *   /never       503 with grpc-retry-pushback-ms: -1
 *   /big         200 with 100 KiB
 *   /slow        200 "late" after 300 ms
 * Hits are counted per path (hits_on). With the server on a thread, read
 * the log only after thread_srv_stop. */
#ifndef BW_TEST_HTTP_SCRIPTED_H
#define BW_TEST_HTTP_SCRIPTED_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "bw_test.h"

/* ---- the scripted server ------------------------------------------------- */

#define LOG_MAX 64
#define SLOW_MAX 8

typedef struct hit_s {
  char path[32];
  char key[48];
  char budget[40];
  char traceparent[64];
  char tracestate[96];
} hit_t;

typedef struct srv_s {
  struct event_base *base;
  struct evhttp *http;
  int port;
  unsigned nlog; /* requests seen */
  hit_t log[LOG_MAX];
  struct slow_s {
    struct evhttp_request *req;
    struct event *ev;
  } slow[SLOW_MAX];
} srv_t;

static inline unsigned hits_on(const srv_t *s, const char *path) {
  unsigned i, n = 0;
  for (i = 0; i < s->nlog && i < LOG_MAX; i++)
    if (strcmp(s->log[i].path, path) == 0) n++;
  return n;
}

static inline void reply(struct evhttp_request *req, int code,
                         const char *body) {
  struct evbuffer *b = evbuffer_new();
  evbuffer_add(b, body, strlen(body));
  evhttp_send_reply(req, code, code == 200 ? "OK" : "Scripted", b);
  evbuffer_free(b);
}

static inline void slow_cb(evutil_socket_t fd, short what, void *arg) {
  struct slow_s *sl = arg;
  (void)fd;
  (void)what;
  /* If the client gave up, evhttp detached the request: sending frees it. */
  reply(sl->req, 200, "late");
  event_free(sl->ev);
  sl->ev = NULL;
  sl->req = NULL;
}

static inline void handle(struct evhttp_request *req, void *arg) {
  srv_t *s = arg;
  struct evkeyvalq *in = evhttp_request_get_input_headers(req);
  struct evkeyvalq *out = evhttp_request_get_output_headers(req);
  const char *uri = evhttp_request_get_uri(req);
  const char *key = evhttp_find_header(in, "Idempotency-Key");
  const char *budget = evhttp_find_header(in, "X-Timeout-Budget");
  const char *tp = evhttp_find_header(in, "traceparent");
  const char *ts = evhttp_find_header(in, "tracestate");
  char path[32];
  unsigned n;
  snprintf(path, sizeof(path), "%s", uri != NULL ? uri : "");
  if (s->nlog < LOG_MAX) {
    hit_t *h = &s->log[s->nlog];
    snprintf(h->path, sizeof(h->path), "%s", path);
    snprintf(h->key, sizeof(h->key), "%s", key != NULL ? key : "");
    snprintf(h->budget, sizeof(h->budget), "%s", budget != NULL ? budget : "");
    snprintf(h->traceparent, sizeof(h->traceparent), "%s",
             tp != NULL ? tp : "");
    snprintf(h->tracestate, sizeof(h->tracestate), "%s", ts != NULL ? ts : "");
  }
  s->nlog++;
  n = hits_on(s, path); /* this request included */
  if (strcmp(path, "/ok") == 0) {
    reply(req, 200, "ok");
  } else if (strcmp(path, "/flaky") == 0) {
    reply(req, n <= 2 ? 503 : 200, n <= 2 ? "busy" : "ok");
  } else if (strcmp(path, "/fail") == 0) {
    reply(req, 503, "busy");
  } else if (strcmp(path, "/echo-body") == 0) {
    struct evbuffer *b = evbuffer_new();
    const char *m =
        evhttp_request_get_command(req) == EVHTTP_REQ_POST ? "POST " : "OTHER ";
    evbuffer_add(b, m, strlen(m));
    evbuffer_add_buffer(b, evhttp_request_get_input_buffer(req));
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
  } else if (strcmp(path, "/echo-header") == 0) {
    const char *x = evhttp_find_header(in, "X-Test");
    reply(req, 200, x != NULL ? x : "(none)");
  } else if (strcmp(path, "/bad") == 0) {
    reply(req, 404, "no such thing");
  } else if (strcmp(path, "/throttle") == 0) {
    if (n == 1) evhttp_add_header(out, "Retry-After", "1");
    reply(req, n == 1 ? 429 : 200, n == 1 ? "slow down" : "ok");
  } else if (strcmp(path, "/pushback") == 0) {
    if (n == 1) evhttp_add_header(out, "grpc-retry-pushback-ms", "40");
    reply(req, n == 1 ? 503 : 200, n == 1 ? "busy" : "ok");
  } else if (strcmp(path, "/never") == 0) {
    evhttp_add_header(out, "grpc-retry-pushback-ms", "-1");
    reply(req, 503, "go away");
  } else if (strcmp(path, "/big") == 0) {
    struct evbuffer *b = evbuffer_new();
    static char chunk[4096];
    int i;
    memset(chunk, 'x', sizeof(chunk));
    for (i = 0; i < 25; i++) /* 100 KiB */
      evbuffer_add(b, chunk, sizeof(chunk));
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
  } else if (strcmp(path, "/slow") == 0) {
    struct timeval tv = {0, 300 * 1000};
    int i;
    for (i = 0; i < SLOW_MAX && s->slow[i].req != NULL; i++) {
    }
    if (i == SLOW_MAX) {
      reply(req, 500, "too many slow");
      return;
    }
    s->slow[i].req = req;
    s->slow[i].ev = evtimer_new(s->base, slow_cb, &s->slow[i]);
    evtimer_add(s->slow[i].ev, &tv);
  } else {
    reply(req, 404, "unknown path");
  }
}

static inline int bound_port(struct evhttp_bound_socket *bs) {
  struct sockaddr_in sa;
  socklen_t len = sizeof(sa);
  if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa,
                  &len) != 0)
    return -1;
  return ntohs(sa.sin_port);
}

static inline int srv_start(srv_t *s, struct event_base *base) {
  struct evhttp_bound_socket *bs;
  memset(s, 0, sizeof(*s));
  s->base = base;
  s->http = evhttp_new(base);
  if (s->http == NULL) return -1;
  evhttp_set_gencb(s->http, handle, s);
  bs = evhttp_bind_socket_with_handle(s->http, "127.0.0.1", 0);
  if (bs == NULL) return -1;
  s->port = bound_port(bs);
  return s->port > 0 ? 0 : -1;
}

static inline void srv_stop(srv_t *s) {
  int i;
  for (i = 0; i < SLOW_MAX; i++)
    if (s->slow[i].req != NULL) slow_cb(-1, 0, &s->slow[i]);
  if (s->http != NULL) evhttp_free(s->http);
  s->http = NULL;
}

/* A port nobody listens on: bound, then closed. */
static inline int closed_port(void) {
  struct sockaddr_in sa;
  socklen_t len = sizeof(sa);
  int fd = socket(AF_INET, SOCK_STREAM, 0), port;
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
      getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
    fail_msg("could not find a closed port");
  port = ntohs(sa.sin_port);
  close(fd);
  return port;
}

/* ---- the server on its own thread ---------------------------------------- */

typedef struct thread_srv_s {
  srv_t srv;
  struct event_base *base;
  atomic_bool stop;
  struct event *tick;
} thread_srv_t;

static inline void tick_cb(evutil_socket_t fd, short what, void *arg) {
  thread_srv_t *t = arg;
  (void)fd;
  (void)what;
  if (atomic_load(&t->stop)) event_base_loopbreak(t->base);
}

static inline void *srv_thread(void *arg) {
  thread_srv_t *t = arg;
  event_base_dispatch(t->base);
  return NULL;
}

/* Starts a server on a thread of its own. */
static inline void thread_srv_start(thread_srv_t *t, pthread_t *th) {
  struct timeval tv = {0, 10 * 1000};
  memset(t, 0, sizeof(*t));
  t->base = event_base_new();
  assert_non_null(t->base);
  assert_int_equal(srv_start(&t->srv, t->base), 0);
  t->tick = event_new(t->base, -1, EV_PERSIST, tick_cb, t);
  evtimer_add(t->tick, &tv);
  assert_int_equal(pthread_create(th, NULL, srv_thread, t), 0);
}

/* Stops it: its log may be read after this, until thread_srv_free. */
static inline void thread_srv_stop(thread_srv_t *t, pthread_t th) {
  atomic_store(&t->stop, true);
  pthread_join(th, NULL);
}

static inline void thread_srv_free(thread_srv_t *t) {
  srv_stop(&t->srv);
  event_free(t->tick);
  event_base_free(t->base);
}

#endif

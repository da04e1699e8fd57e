/* The Polly-lab partner over real HTTP: evhttp does the protocol, the
 * virtual-time model (src/sim/partner.c) decides, an event timer per request
 * holds the answer for its latency.
 *
 * Lifetime of a POST /charges: admit (counted in flight) -> a `pending`
 * record with an evtimer -> the timer fires -> done (leaves the in-flight
 * count) -> the answer is sent -> the record is freed. In forward mode a
 * 200 is not sent at once: the record moves to the `forwarding` list while
 * the next hop is called, and the answer goes when it answers. The answer is
 * always sent, even when the client hung up meanwhile: libevent 2.1 then has
 * detached the request from its (freed) connection and evhttp_send_reply
 * just frees the request, which is the only way to release it. evhttp never
 * frees a request we have not answered except through evhttp_free, which
 * bw_partner_server_free calls only after answering every pending one. */
#include "partner_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>

#include "breakwater/clock.h"
#include "breakwater/deadline.h"
#include "breakwater/driver_event.h"
#include "breakwater/ext.h"
#include "breakwater/trace.h"

#define PARTNER_MAX_BODY 65536
#define PARTNER_MAX_HEADERS 16384
#define BW_TOOL_DAY_MS_ INT64_C(86400000)

typedef struct pending_s pending_t;

/* One open connection. libevent 2.1's evhttp has no per-connection hook
 * but the bufferevent callback, called before the connection exists: the
 * record is made there (holding a reference on the bufferevent), and
 * "adopted" in the same loop turn, before any I/O on it: the connection
 * (the bufferevent's callback argument) gets a close callback, which
 * removes the record, and the reference is dropped. */
typedef struct conn_s {
  struct bufferevent *bev;
  size_t index;        /* in srv->conns */
  bool adopted;        /* the close callback is set, no reference held */
  int64_t deadline_ns; /* the whole request must have arrived by then */
  bool busy;           /* a request is being answered: no deadline */
  bool refuse;         /* over max_connections: answered 503, closed */
  bool closing;        /* shut down by us; evhttp will free it */
  bool unconfirmed;    /* an answer went to a half-closed client: if the
                          connection fails before it is written, the
                          client was gone */
} conn_t;

enum { LOG_ACCEPT, LOG_REFUSED, LOG_TIMEOUT, LOG_RESET, LOG__COUNT };

struct pending_s {
  bw_partner_server_t *srv;
  struct evhttp_request *req;
  struct event *timer;
  int status;
  int64_t retry_after_ms;
  pending_t *prev, *next;
  /* read on arrival (bw_ev_http_deadline, bw_ev_http_trace), for forward
   * mode: the next hop gets what is left of the deadline, and a new span */
  bw_deadline_t deadline;
  int64_t done_ns; /* arrival + the model's latency: the work's end */
  bool traced;
  bw_trace_t trace;
  /* forward mode, once the latency elapsed: the call to the next hop */
  struct evhttp_connection *fwd;
  struct evhttp_request *fwd_req;
};

struct bw_partner_server_s {
  struct event_base *base;
  struct evhttp *http;
  bw_sim_partner_t *partner;
  bw_partner_server_config_t cfg;
  char host[64];
  uint16_t port;
  pending_t *pending;     /* requests waiting for their latency */
  pending_t *forwarding;  /* forward mode: waiting for the next hop */
  pending_t *finished;    /* forward mode: answered, their outgoing
                             connection to be freed from the loop */
  struct event *reap_fwd; /* activated to free `finished` */
  char fwd_host[64];      /* forward mode: the next hop ("" = off) */
  uint16_t fwd_port;
  char fwd_path[256];
  bw_partner_server_stats_t st; /* partner is filled on demand */
  conn_t **conns;
  size_t nconns, cap_conns;
  conn_t **unadopted; /* made since the last adoption turn */
  size_t nunadopted, cap_unadopted;
  uint32_t max_conns; /* in force: cfg.max_connections or from the limit */
  struct evconnlistener *listener;
  struct event *sweep;  /* every 100 ms: timeouts, resets, closed records */
  struct event *refuse; /* activated for each new connection: adopt it */
  struct event *resume; /* accepting again after running out of fds */
  bw_partner_server_t *next_server; /* the list of servers */
  int64_t log_last_ns[LOG__COUNT];
  uint64_t log_suppressed[LOG__COUNT];
};

static int64_t mono_ns(void) {
  return bw_clock_now(bw_clock_monotonic());
}

/* ---- rate-limited warnings ------------------------------------------------
 */

/* At most one line a second per kind, with the count of lines suppressed
 * since the last one. Never blocks: when stderr (say, an unread pipe) is
 * not writable, the line is suppressed too. */
static void plog(bw_partner_server_t *srv, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void plog(bw_partner_server_t *srv, int kind, const char *fmt, ...) {
  char line[320];
  va_list ap;
  int n;
  int64_t now = mono_ns();
  struct pollfd pfd = {2, POLLOUT, 0};
  if (!srv->cfg.log) return;
  if (srv->log_last_ns[kind] != 0 &&
      now - srv->log_last_ns[kind] < INT64_C(1000000000)) {
    srv->log_suppressed[kind]++;
    return;
  }
  srv->log_last_ns[kind] = now;
  if (poll(&pfd, 1, 0) != 1 || (pfd.revents & POLLOUT) == 0) {
    srv->log_suppressed[kind]++;
    return;
  }
  n = snprintf(line, sizeof(line), "breakwater partner: ");
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
  va_end(ap);
  if (n > (int)sizeof(line) - 48) n = (int)sizeof(line) - 48;
  if (srv->log_suppressed[kind] > 0)
    n += snprintf(line + n, sizeof(line) - (size_t)n,
                  " (%llu similar suppressed)",
                  (unsigned long long)srv->log_suppressed[kind]);
  line[n++] = '\n';
  srv->log_suppressed[kind] = 0;
  if (write(2, line, (size_t)n) < 0) srv->log_suppressed[kind]++;
}

/* ---- connections ----------------------------------------------------------
 */

static conn_t *conn_of_bev(bw_partner_server_t *srv,
                           const struct bufferevent *bev) {
  size_t i;
  if (bev == NULL) return NULL;
  for (i = 0; i < srv->nconns; i++)
    if (srv->conns[i]->bev == bev) return srv->conns[i];
  return NULL;
}

static void conn_remove(bw_partner_server_t *srv, conn_t *c) {
  conn_t *last = srv->conns[--srv->nconns];
  srv->conns[c->index] = last;
  last->index = c->index;
  if (!c->refuse) srv->st.connections--;
  if (!c->adopted) bufferevent_decref(c->bev);
  bw_free(c);
}

static conn_t *conn_of(bw_partner_server_t *srv, struct evhttp_request *req) {
  struct evhttp_connection *evcon = evhttp_request_get_connection(req);
  return evcon != NULL
             ? conn_of_bev(srv, evhttp_connection_get_bufferevent(evcon))
             : NULL;
}

/* The answer to a request is being sent: the next one has idle + header
 * time to arrive. */
static void conn_answered(bw_partner_server_t *srv, conn_t *c) {
  if (c == NULL) return;
  c->busy = false;
  c->deadline_ns =
      mono_ns() +
      (srv->cfg.idle_timeout_ms + srv->cfg.header_timeout_ms) * 1000000;
}

/* evhttp's bufferevent hook: called once per accepted connection. */
static struct bufferevent *on_new_connection(struct event_base *base,
                                             void *arg);

static void conns_adopt(bw_partner_server_t *srv);

void bw_partner_server_config_init(bw_partner_server_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  bw_sim_partner_config_init(&cfg->partner);
  cfg->host = "127.0.0.1";
  cfg->port = 0;
  cfg->allow_remote = false;
  cfg->backlog = 1024;
  cfg->idle_timeout_ms = 5000;
  cfg->header_timeout_ms = 10000;
  cfg->max_connections = 0;
  cfg->log = true;
}

bool bw_partner_host_is_loopback(const char *host) {
  struct in_addr a4;
  struct in6_addr a6;
  if (host == NULL) return false;
  if (strcmp(host, "localhost") == 0) return true;
  if (inet_pton(AF_INET, host, &a4) == 1)
    return (ntohl(a4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, host, &a6) == 1)
    return memcmp(&a6, &in6addr_loopback, sizeof(a6)) == 0;
  return false;
}

/* ---- answers --------------------------------------------------------------
 */

static void send_text(struct evhttp_request *req, int code, const char *reason,
                      const char *ctype, const char *body) {
  struct evbuffer *buf = evbuffer_new();
  struct evkeyvalq *h = evhttp_request_get_output_headers(req);
  evhttp_add_header(h, "Content-Type", ctype);
  /* On allocation failure the answer goes out without a body. */
  if (buf != NULL && body != NULL) evbuffer_add(buf, body, strlen(body));
  evhttp_send_reply(req, code, reason, buf);
  if (buf != NULL) evbuffer_free(buf);
}

static void send_json(struct evhttp_request *req, int code, const char *reason,
                      const char *body) {
  send_text(req, code, reason, "application/json", body);
}

static void unlink_pending(bw_partner_server_t *srv, pending_t *p) {
  if (p->prev != NULL)
    p->prev->next = p->next;
  else
    srv->pending = p->next;
  if (p->next != NULL) p->next->prev = p->prev;
  p->prev = p->next = NULL;
}

/* The state of a request's client, by peeking its socket (libevent 2.1
 * does not read while an answer is pending): 0 connected, 1 it sent its
 * FIN (it closed, or only shut down its sending side and still reads: the
 * two look alike until the answer is written), -1 gone (the connection
 * failed or was reset). */
static int peer_state(struct evhttp_request *req) {
  struct evhttp_connection *evcon = evhttp_request_get_connection(req);
  struct bufferevent *bev;
  evutil_socket_t fd;
  char c;
  ssize_t n;
  if (evcon == NULL) return -1;
  bev = evhttp_connection_get_bufferevent(evcon);
  fd = bev != NULL ? bufferevent_getfd(bev) : -1;
  if (fd < 0) return -1;
  n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) {
    /* After the FIN, recv keeps answering 0: a reset since then shows as a
     * pending socket error (EPIPE). */
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr != 0)
      return -1;
    return 1;
  }
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    return -1;
  return 0;
}

/* An answer to a client that had sent its FIN was written out: a client
 * that closed answers it with a reset (at once on loopback), a half-closed
 * one reads it. */
static void on_reply_written(struct evhttp_request *req, void *arg) {
  bw_partner_server_t *srv = arg;
  conn_t *c = conn_of(srv, req);
  if (c != NULL) c->unconfirmed = false;
  if (peer_state(req) < 0) srv->st.abandoned++;
}

/* evhttp frees a connection: the record goes; an answer still
 * unconfirmed never reached its client. */
static void on_connection_close(struct evhttp_connection *evcon, void *arg) {
  bw_partner_server_t *srv = arg;
  conn_t *c = conn_of_bev(srv, evhttp_connection_get_bufferevent(evcon));
  if (c == NULL) return;
  if (c->unconfirmed) srv->st.abandoned++;
  conn_remove(srv, c);
}

/* ---- forward mode ----------------------------------------------------------
 */

static void unlink_forwarding(bw_partner_server_t *srv, pending_t *p) {
  if (p->prev != NULL)
    p->prev->next = p->next;
  else
    srv->forwarding = p->next;
  if (p->next != NULL) p->next->prev = p->prev;
  p->prev = p->next = NULL;
}

/* The next hop answered (fr with its status), or did not (fr NULL, or
 * status 0: refused, reset, timed out). */
static void on_forwarded(struct evhttp_request *fr, void *arg) {
  pending_t *p = arg;
  bw_partner_server_t *srv = p->srv;
  int code = fr != NULL ? evhttp_request_get_response_code(fr) : 0;
  char body[96];
  unlink_forwarding(srv, p);
  if (code == 0) {
    srv->st.forward_failed++;
    send_json(p->req, 504, "Gateway Timeout",
              "{\"status\":\"error\",\"reason\":\"the next hop did not "
              "answer\"}\n");
  } else {
    snprintf(body, sizeof(body), "{\"status\":\"%s\",\"next\":%d}\n",
             code == 200 ? "ok" : "error", code);
    if (code == 200)
      send_json(p->req, 200, "OK", body);
    else
      send_json(p->req, 502, "Bad Gateway", body);
  }
  /* The outgoing connection is still in use by libevent during this
   * callback: it is freed from the loop, right after. (Not with
   * evhttp_connection_free_on_completion: libevent 2.1 does not free a
   * connection that failed to connect.) */
  p->req = NULL;
  p->fwd_req = NULL;
  p->next = srv->finished;
  srv->finished = p;
  event_active(srv->reap_fwd, 0, 0);
}

/* Frees the outgoing connections (and records) of answered forwards. */
static void reap_forwarded(bw_partner_server_t *srv) {
  while (srv->finished != NULL) {
    pending_t *p = srv->finished;
    srv->finished = p->next;
    evhttp_connection_free(p->fwd);
    bw_free(p);
  }
}

static void on_reap_fwd(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  reap_forwarded(arg);
}

/* The model answered 200 after its latency: call the next hop with what is
 * left of the request's deadline (the reference toolkit's agent A calling
 * agent B), or refuse with less than BW_DEADLINE_MIN_CALL_MS left. */
static void forward(bw_partner_server_t *srv, pending_t *p) {
  int64_t now = mono_ns();
  struct evkeyvalq *out;
  struct evbuffer *body;
  char v[BW_TRACESTATE_MAX + 1];
  struct timeval tv = {10, 0}; /* no deadline: 10 s, the callee's default */
  /* libevent's timers start from the loop's cached time and may fire a
   * fraction of a millisecond before the latency has passed on this clock:
   * the work took its latency, so that is the least time spent. */
  if (now < p->done_ns) now = p->done_ns;
  if (!bw_deadline_is_none(p->deadline) &&
      bw_deadline_check(p->deadline, now, BW_DEADLINE_MIN_CALL_MS) != BW_OK) {
    srv->st.forward_refused++;
    send_json(p->req, 504, "Gateway Timeout",
              "{\"status\":\"deadline\",\"reason\":\"less than 1 s left: "
              "the next hop is not called\"}\n");
    bw_free(p);
    return;
  }
  p->fwd =
      evhttp_connection_base_new(srv->base, NULL, srv->fwd_host, srv->fwd_port);
  p->fwd_req = p->fwd != NULL ? evhttp_request_new(on_forwarded, p) : NULL;
  if (p->fwd_req == NULL) {
    if (p->fwd != NULL) evhttp_connection_free(p->fwd);
    srv->st.forward_failed++;
    send_json(p->req, 503, "Service Unavailable",
              "{\"status\":\"error\",\"reason\":\"out of memory\"}\n");
    bw_free(p);
    return;
  }
  out = evhttp_request_get_output_headers(p->fwd_req);
  evhttp_add_header(out, "Host", srv->fwd_host);
  evhttp_add_header(out, "Content-Type", "application/json");
  if (!bw_deadline_is_none(p->deadline)) {
    int64_t left = bw_deadline_remaining_ms(p->deadline, now);
    if (bw_deadline_header_format(left, v, sizeof(v)) >= 0)
      evhttp_add_header(out, "X-Timeout-Budget", v);
    tv.tv_sec = (time_t)(left / 1000);
    tv.tv_usec = (suseconds_t)((left % 1000) * 1000);
  }
  if (p->traced) { /* this call is a span of its own */
    bw_trace_t span;
    if (bw_trace_child(&p->trace, NULL, &span) == BW_OK &&
        bw_traceparent_format(&span, v, sizeof(v)) > 0) {
      evhttp_add_header(out, "traceparent", v);
      if (span.tracestate[0] != '\0')
        evhttp_add_header(out, "tracestate", span.tracestate);
    }
  }
  body = evhttp_request_get_output_buffer(p->fwd_req);
  evbuffer_add(body, "{}", 2);
  evhttp_connection_set_timeout_tv(p->fwd, &tv);
  p->next = srv->forwarding;
  if (srv->forwarding != NULL) srv->forwarding->prev = p;
  srv->forwarding = p;
  srv->st.forwarded++;
  if (evhttp_make_request(p->fwd, p->fwd_req, EVHTTP_REQ_POST, srv->fwd_path) !=
      0) {
    /* libevent 2.1 takes the request back out of the connection's queue
     * on this failure without calling back: both are ours to free */
    unlink_forwarding(srv, p);
    evhttp_request_free(p->fwd_req);
    evhttp_connection_free(p->fwd);
    srv->st.forward_failed++;
    send_json(p->req, 504, "Gateway Timeout",
              "{\"status\":\"error\",\"reason\":\"the next hop could not "
              "be called\"}\n");
    bw_free(p);
  }
}

/* The latency elapsed: leave the in-flight count, answer, forget. */
static void on_latency(evutil_socket_t fd, short what, void *arg) {
  pending_t *p = arg;
  bw_partner_server_t *srv = p->srv;
  struct evhttp_request *req = p->req;
  (void)fd;
  (void)what;
  unlink_pending(srv, p);
  event_free(p->timer);
  bw_sim_partner_done(srv->partner);
  if (p->status == 429)
    srv->st.replied_429++;
  else if (p->status == 500)
    srv->st.replied_500++;
  else
    srv->st.replied_200++;
  {
    int peer = peer_state(req);
    conn_t *c = conn_of(srv, req);
    conn_answered(srv, c);
    if (peer < 0) {
      srv->st.abandoned++;
    } else if (peer == 1) {
      if (c != NULL) c->unconfirmed = true;
      evhttp_request_set_on_complete_cb(req, on_reply_written, srv);
    }
  }
  if (p->status == 429) {
    if (p->retry_after_ms >= 0) {
      char v[32];
      snprintf(v, sizeof(v), "%lld", (long long)(p->retry_after_ms / 1000));
      evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After",
                        v);
    }
    send_json(req, 429, "Too Many Requests", "{\"status\":\"throttled\"}\n");
  } else if (p->status == 500) {
    /* The flaky backend (error_ratio): the work failed, nothing is
     * forwarded. */
    send_json(req, 500, "Internal Server Error", "{\"status\":\"error\"}\n");
  } else if (srv->fwd_host[0] != '\0') {
    forward(srv, p); /* answers now (refused) or when the next hop does */
    return;
  } else {
    send_json(req, 200, "OK", "{\"status\":\"ok\"}\n");
  }
  bw_free(p);
}

static void handle_charge(bw_partner_server_t *srv,
                          struct evhttp_request *req) {
  bw_deadline_t deadline;
  int64_t arrival;
  int budget_rc;
  bw_sim_reply_t r;
  pending_t *p;
  struct timeval tv;

  srv->st.network_calls++;
  /* The request's deadline, from X-Timeout-Budget or grpc-timeout, on
   * arrival; none when it carried neither (or a malformed one). */
  arrival = mono_ns();
  budget_rc = bw_ev_http_deadline(req, arrival, -1, &deadline);
  if (budget_rc == BW_OK)
    srv->st.requests_with_budget++;
  else if (budget_rc == BW_E_INVAL)
    srv->st.bad_budget++;
  p = bw_calloc(1, sizeof(*p));
  if (p != NULL) {
    p->timer = evtimer_new(srv->base, on_latency, p);
    if (p->timer == NULL) {
      bw_free(p);
      p = NULL;
    }
  }
  if (p == NULL) {
    /* Not admitted: the model never saw it, so it is not in flight. */
    srv->st.network_calls--;
    send_json(req, 503, "Service Unavailable",
              "{\"status\":\"error\",\"reason\":\"out of memory\"}\n");
    return;
  }
  r = bw_sim_partner_admit(srv->partner, bw_clock_now(bw_clock_monotonic()));
  p->srv = srv;
  p->req = req;
  p->deadline = deadline;
  p->done_ns = arrival + r.latency_ms * BW_NS_PER_MS;
  p->traced = bw_ev_http_trace(req, &p->trace) == BW_OK;
  p->status = r.status;
  p->retry_after_ms = r.retry_after_ms;
  p->next = srv->pending;
  if (srv->pending != NULL) srv->pending->prev = p;
  srv->pending = p;
  tv.tv_sec = (time_t)(r.latency_ms / 1000);
  tv.tv_usec = (suseconds_t)((r.latency_ms % 1000) * 1000);
  evtimer_add(p->timer, &tv);
}

static void handle_reset(bw_partner_server_t *srv, struct evhttp_request *req) {
  bw_error_t err;
  int rc = bw_partner_server_reset(srv, &err);
  if (rc == BW_OK) {
    send_json(req, 200, "OK", "{\"status\":\"reset\"}\n");
  } else if (rc == BW_E_FULL) {
    char body[96];
    bw_sim_partner_stats_t ps;
    bw_sim_partner_stats(srv->partner, &ps);
    snprintf(body, sizeof(body), "{\"status\":\"busy\",\"in_flight\":%u}\n",
             (unsigned)ps.in_flight);
    send_json(req, 409, "Conflict", body);
  } else {
    send_json(req, 503, "Service Unavailable",
              "{\"status\":\"error\",\"reason\":\"out of memory\"}\n");
  }
}

static void handle_metrics(bw_partner_server_t *srv,
                           struct evhttp_request *req) {
  int need = bw_partner_server_metrics(srv, NULL, 0);
  char *buf = need > 0 ? bw_malloc((size_t)need + 1) : NULL;
  if (buf == NULL) {
    send_json(req, 503, "Service Unavailable",
              "{\"status\":\"error\",\"reason\":\"out of memory\"}\n");
    return;
  }
  bw_partner_server_metrics(srv, buf, (size_t)need + 1);
  send_text(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", buf);
  bw_free(buf);
}

static void method_not_allowed(bw_partner_server_t *srv,
                               struct evhttp_request *req, const char *allow) {
  srv->st.method_not_allowed++;
  evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
  send_json(req, 405, "Method Not Allowed",
            "{\"status\":\"error\",\"reason\":\"method not allowed\"}\n");
}

static void on_request(struct evhttp_request *req, void *arg) {
  bw_partner_server_t *srv = arg;
  const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
  const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
  enum evhttp_cmd_type m = evhttp_request_get_command(req);
  bool get = m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD;
  struct evhttp_connection *evcon = evhttp_request_get_connection(req);
  conn_t *c = conn_of(srv, req);

  (void)evcon;
  if (c != NULL && c->refuse) {
    /* Over the cap and not yet closed by the sweep. */
    c->closing = true;
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection",
                      "close");
    send_json(req, 503, "Service Unavailable",
              "{\"status\":\"error\",\"reason\":\"too many "
              "connections\"}\n");
    return;
  }
  if (path == NULL) path = "";
  /* Every route but /charges answers at once: the connection's next
   * request has its own time from now. A charge's answer does this when
   * it is sent. */
  if (c != NULL) {
    bool charge = m == EVHTTP_REQ_POST && (strcmp(path, "/charges") == 0 ||
                                           strcmp(path, "/cobrancas") == 0);
    if (charge)
      c->busy = true;
    else
      conn_answered(srv, c);
  }
  /* /cobrancas and /saude are the Polly lab's own names for the same routes. */
  if (strcmp(path, "/charges") == 0 || strcmp(path, "/cobrancas") == 0) {
    if (m == EVHTTP_REQ_POST)
      handle_charge(srv, req);
    else
      method_not_allowed(srv, req, "POST");
  } else if (strcmp(path, "/health") == 0 || strcmp(path, "/saude") == 0) {
    if (get)
      send_text(req, 200, "OK", "text/plain; charset=utf-8", "ok\n");
    else
      method_not_allowed(srv, req, "GET, HEAD");
  } else if (strcmp(path, "/metrics") == 0) {
    if (get)
      handle_metrics(srv, req);
    else
      method_not_allowed(srv, req, "GET, HEAD");
  } else if (strcmp(path, "/reset") == 0) {
    if (m == EVHTTP_REQ_POST)
      handle_reset(srv, req);
    else
      method_not_allowed(srv, req, "POST");
  } else {
    srv->st.not_found++;
    send_json(req, 404, "Not Found",
              "{\"status\":\"error\",\"reason\":\"no such path\"}\n");
  }
}

/* ---- listening ------------------------------------------------------------
 */

/* Resolves host (numeric, or "localhost") into ss. */
static int parse_host(const char *host, uint16_t port,
                      struct sockaddr_storage *ss, socklen_t *len) {
  struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
  memset(ss, 0, sizeof(*ss));
  if (strcmp(host, "localhost") == 0) host = "127.0.0.1";
  if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons(port);
    *len = sizeof(*s4);
    return BW_OK;
  }
  memset(ss, 0, sizeof(*ss));
  if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    *len = sizeof(*s6);
    return BW_OK;
  }
  return BW_E_INVAL;
}

/* ---- connection hygiene ---------------------------------------------------
 */

/* The listener's error callback gets evhttp's argument, not ours: the
 * servers are found by their evhttp in this list. */
static pthread_mutex_t servers_lock = PTHREAD_MUTEX_INITIALIZER;
static bw_partner_server_t *servers;

static void servers_add(bw_partner_server_t *srv) {
  pthread_mutex_lock(&servers_lock);
  srv->next_server = servers;
  servers = srv;
  pthread_mutex_unlock(&servers_lock);
}

static void servers_remove(bw_partner_server_t *srv) {
  bw_partner_server_t **p;
  pthread_mutex_lock(&servers_lock);
  for (p = &servers; *p != NULL; p = &(*p)->next_server)
    if (*p == srv) {
      *p = srv->next_server;
      break;
    }
  pthread_mutex_unlock(&servers_lock);
}

static bw_partner_server_t *server_of_http(const void *http) {
  bw_partner_server_t *srv;
  pthread_mutex_lock(&servers_lock);
  for (srv = servers; srv != NULL; srv = srv->next_server)
    if ((const void *)srv->http == http) break;
  pthread_mutex_unlock(&servers_lock);
  return srv;
}

static struct bufferevent *on_new_connection(struct event_base *base,
                                             void *arg) {
  bw_partner_server_t *srv = arg;
  struct bufferevent *bev = bufferevent_socket_new(base, -1, 0);
  conn_t *c;
  if (bev == NULL) return NULL; /* evhttp makes its own: not tracked */
  if (srv->nconns == srv->cap_conns) {
    size_t cap = srv->cap_conns ? srv->cap_conns * 2 : 256;
    conn_t **more = bw_realloc(srv->conns, cap * sizeof(*more));
    if (more == NULL) return bev; /* not tracked: no cap, no deadline */
    srv->conns = more;
    srv->cap_conns = cap;
  }
  if (srv->nunadopted == srv->cap_unadopted) {
    size_t cap = srv->cap_unadopted ? srv->cap_unadopted * 2 : 64;
    conn_t **more = bw_realloc(srv->unadopted, cap * sizeof(*more));
    if (more == NULL) return bev;
    srv->unadopted = more;
    srv->cap_unadopted = cap;
  }
  c = bw_calloc(1, sizeof(*c));
  if (c == NULL) return bev;
  c->bev = bev;
  c->index = srv->nconns;
  srv->conns[srv->nconns++] = c;
  srv->unadopted[srv->nunadopted++] = c;
  /* Held until adopted, so the record never points to a freed one. */
  bufferevent_incref(bev);
  c->deadline_ns = srv->cfg.header_timeout_ms > 0
                       ? mono_ns() + srv->cfg.header_timeout_ms * 1000000
                       : INT64_MAX;
  if (srv->st.connections >= srv->max_conns) {
    c->refuse = true;
    srv->st.refused_connections++;
    plog(srv, LOG_REFUSED,
         "%u connections open (--max-connections): refusing new ones with "
         "503",
         (unsigned)srv->max_conns);
  } else {
    srv->st.connections++;
    if (srv->st.connections > srv->st.max_connections_seen)
      srv->st.max_connections_seen = srv->st.connections;
  }
  /* Adopted in this loop turn, after evhttp made the connection. */
  event_active(srv->refuse, EV_TIMEOUT, 1);
  return bev;
}

static void close_conn(conn_t *c) {
  evutil_socket_t fd = bufferevent_getfd(c->bev);
  c->closing = true;
  /* evhttp reads the end of file and frees the connection. */
  if (fd >= 0) (void)shutdown(fd, SHUT_RDWR);
}

static void refuse_conn(conn_t *c) {
  static const char reply[] =
      "HTTP/1.1 503 Service Unavailable\r\n"
      "Content-Type: application/json\r\n"
      "Content-Length: 52\r\n"
      "Connection: close\r\n\r\n"
      "{\"status\":\"error\",\"reason\":\"too many connections\"}\n";
  evutil_socket_t fd = bufferevent_getfd(c->bev);
  if (fd >= 0)
    (void)send(fd, reply, sizeof(reply) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  close_conn(c);
}

/* A client reset its connection while its request waited: the request
 * leaves the model's in-flight count at once and the connection is
 * freed (with the request). */
static void drop_pending(bw_partner_server_t *srv, pending_t *p,
                         struct evhttp_connection *evcon) {
  unlink_pending(srv, p);
  event_free(p->timer);
  bw_sim_partner_done(srv->partner);
  srv->st.client_resets++;
  plog(srv, LOG_RESET,
       "a client reset its connection with a request pending: its slot is "
       "freed");
  evhttp_connection_free(evcon);
  bw_free(p);
}

/* The connections made since the last turn get their close callback (the
 * bufferevent's callback argument is evhttp's connection); one evhttp
 * already freed (its callbacks cleared) just goes. Then those over the cap
 * are answered 503 and closed. */
static void conns_adopt(bw_partner_server_t *srv) {
  size_t i, n = srv->nunadopted;
  srv->nunadopted = 0;
  for (i = 0; i < n; i++) {
    conn_t *c = srv->unadopted[i];
    bufferevent_data_cb readcb = NULL;
    void *evcon = NULL;
    bufferevent_getcb(c->bev, &readcb, NULL, NULL, &evcon);
    if (readcb == NULL || evcon == NULL) {
      conn_remove(srv, c);
      continue;
    }
    evhttp_connection_set_closecb(evcon, on_connection_close, srv);
    c->adopted = true;
    bufferevent_decref(c->bev);
    if (c->refuse && !c->closing) refuse_conn(c);
  }
}

static void on_adopt(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  conns_adopt(arg);
}

/* Drops the records of connections evhttp freed; closes connections over
 * the cap or past their header deadline; frees the slots of pending
 * requests whose client reset. */
static void conns_sweep(bw_partner_server_t *srv) {
  int64_t now = mono_ns();
  size_t i;
  pending_t *p, *next;
  conns_adopt(srv);
  for (i = 0; i < srv->nconns; i++) {
    conn_t *c = srv->conns[i];
    if (!c->adopted) continue;
    if (c->refuse && !c->closing) {
      refuse_conn(c);
    } else if (!c->busy && !c->closing && now > c->deadline_ns) {
      srv->st.timed_out_connections++;
      plog(srv, LOG_TIMEOUT,
           "closed a connection whose request did not arrive within "
           "%lld ms (--header-timeout-s)",
           (long long)srv->cfg.header_timeout_ms);
      close_conn(c);
    }
  }
  for (p = srv->pending; p != NULL; p = next) {
    struct evhttp_connection *evcon = evhttp_request_get_connection(p->req);
    next = p->next;
    if (evcon != NULL && peer_state(p->req) < 0) drop_pending(srv, p, evcon);
  }
}

static void on_sweep(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  conns_sweep(arg);
}

static void on_resume(evutil_socket_t fd, short what, void *arg) {
  bw_partner_server_t *srv = arg;
  (void)fd;
  (void)what;
  conns_sweep(srv);
  if (srv->listener != NULL) evconnlistener_enable(srv->listener);
}

/* accept() failed. Out of descriptors, the listening socket stays readable:
 * retrying at once would spin, so accepting pauses for 100 ms (the sweep
 * meanwhile frees what it can). */
static void on_accept_error(struct evconnlistener *l, void *arg) {
  /* The listener's argument is evhttp's own (its struct evhttp). */
  bw_partner_server_t *srv = server_of_http(arg);
  int e = EVUTIL_SOCKET_ERROR();
  if (srv == NULL) {
    /* Not one of ours: never spin. */
    evconnlistener_disable(l);
    return;
  }
  if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
    struct timeval tv = {0, 100000};
    evconnlistener_disable(l);
    srv->st.accept_pauses++;
    plog(srv, LOG_ACCEPT,
         "accept: %s (%llu connections open): accepting paused for 100 ms",
         strerror(e), (unsigned long long)srv->st.connections);
    evtimer_add(srv->resume, &tv);
  } else {
    plog(srv, LOG_ACCEPT, "accept: %s", strerror(e));
  }
}

uint64_t bw_partner_raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1024;
  if (rl.rlim_cur < rl.rlim_max) {
    struct rlimit want = rl;
    want.rlim_cur = rl.rlim_max;
    /* An unlimited hard limit: as high as the kernel takes. */
    if (want.rlim_cur == RLIM_INFINITY) want.rlim_cur = 1048576;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) rl.rlim_cur = want.rlim_cur;
  }
  return rl.rlim_cur == RLIM_INFINITY ? UINT64_C(1048576)
                                      : (uint64_t)rl.rlim_cur;
}

static int listen_on(bw_partner_server_t *srv, bw_error_t *err) {
  struct sockaddr_storage ss;
  socklen_t len = 0;
  int fd, one = 1, e;
  bool v6 = strchr(srv->host, ':') != NULL;
  struct evhttp_bound_socket *bound;
  char where[96];

  if (parse_host(srv->host, srv->cfg.port, &ss, &len) != BW_OK)
    return bw_error_set(err, BW_E_INVAL, "host",
                        "host must be a numeric IPv4 or IPv6 address or "
                        "'localhost' (got '%s')",
                        srv->host);
  snprintf(where, sizeof(where), "%s%s%s:%u", v6 ? "[" : "", srv->host,
           v6 ? "]" : "", (unsigned)srv->cfg.port);
  fd = socket(ss.ss_family, SOCK_STREAM, 0);
  if (fd < 0) {
    e = errno;
    return bw_error_set(err, BW_E_IO, e == EAFNOSUPPORT ? "host" : "port",
                        "cannot listen on %s: %s", where, strerror(e));
  }
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, (struct sockaddr *)&ss, len) != 0 ||
      listen(fd, srv->cfg.backlog) != 0 ||
      evutil_make_socket_nonblocking(fd) != 0) {
    e = errno;
    close(fd);
    /* An address this machine does not have is the host's fault; a port
     * in use or privileged, the port's. */
    return bw_error_set(err, BW_E_IO,
                        e == EADDRNOTAVAIL || e == EAFNOSUPPORT || e == EINVAL
                            ? "host"
                            : "port",
                        "cannot listen on %s: %s", where, strerror(e));
  }
  len = sizeof(ss);
  if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
    e = errno;
    close(fd);
    return bw_error_set(err, BW_E_IO, "port", "cannot listen on %s: %s", where,
                        strerror(e));
  }
  srv->port =
      ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
  /* evhttp owns the socket from here (closed by evhttp_free). */
  bound = evhttp_accept_socket_with_handle(srv->http, fd);
  if (bound == NULL) {
    close(fd);
    return bw_error_set(err, BW_E_NOMEM, "", "out of memory listening on %s",
                        where);
  }
  srv->listener = evhttp_bound_socket_get_listener(bound);
  if (srv->listener != NULL) {
    servers_add(srv);
    evconnlistener_set_error_cb(srv->listener, on_accept_error);
  }
  return BW_OK;
}

/* The next hop of forward mode: "http://HOST[:PORT][/PATH]" with a
 * numeric or localhost HOST (loopback unless allow_remote), PORT 1..65535
 * (default 80), PATH (default "/") and nothing else (no user, query or
 * fragment). BW_OK, or BW_E_INVAL naming forward_url and the rule. */
static int parse_forward(const char *url, bool allow_remote, char *host,
                         size_t host_size, uint16_t *port, char *path,
                         size_t path_size, bw_error_t *err) {
  struct evhttp_uri *u = evhttp_uri_parse(url);
  const char *scheme = u != NULL ? evhttp_uri_get_scheme(u) : NULL;
  const char *h = u != NULL ? evhttp_uri_get_host(u) : NULL;
  const char *pa = u != NULL ? evhttp_uri_get_path(u) : NULL;
  int po = u != NULL ? evhttp_uri_get_port(u) : -1;
  int rc = BW_OK;
  if (u == NULL || scheme == NULL || strcmp(scheme, "http") != 0 || h == NULL ||
      h[0] == '\0' || evhttp_uri_get_userinfo(u) != NULL ||
      evhttp_uri_get_query(u) != NULL || evhttp_uri_get_fragment(u) != NULL ||
      strlen(h) >= host_size || (pa != NULL && strlen(pa) >= path_size) ||
      po == 0 || po > 65535)
    rc = bw_error_set(err, BW_E_INVAL, "forward_url",
                      "forward_url must be http://HOST[:PORT][/PATH] (got "
                      "'%.100s')",
                      url);
  else if (!allow_remote && !bw_partner_host_is_loopback(h))
    rc = bw_error_set(err, BW_E_INVAL, "forward_url",
                      "forward_url must name a loopback host (127.0.0.0/8, "
                      "::1 or localhost) unless allow_remote is set (got "
                      "'%.100s')",
                      url);
  if (rc == BW_OK) {
    snprintf(host, host_size, "%s", h);
    snprintf(path, path_size, "%s", pa != NULL && pa[0] != '\0' ? pa : "/");
    *port = (uint16_t)(po < 0 ? 80 : po);
  }
  if (u != NULL) evhttp_uri_free(u);
  return rc;
}

bw_partner_server_t *bw_partner_server_new(
    struct event_base *base, const bw_partner_server_config_t *cfg,
    bw_error_t *err) {
  bw_partner_server_config_t def;
  bw_partner_server_t *srv;
  char fwd_host[64] = "", fwd_path[256] = "";
  uint16_t fwd_port = 0;

  bw_error_clear(err);
  if (cfg == NULL) {
    bw_partner_server_config_init(&def);
    cfg = &def;
  }
  if (base == NULL) {
    bw_error_set(err, BW_E_INVAL, "base", "base must not be NULL");
    return NULL;
  }
  if (bw_sim_partner_config_validate(&cfg->partner, err) != BW_OK) return NULL;
  if (cfg->host == NULL || cfg->host[0] == '\0' ||
      strlen(cfg->host) >= sizeof(((bw_partner_server_t *)0)->host)) {
    bw_error_set(err, BW_E_INVAL, "host",
                 "host must be a non-empty address of at most 63 bytes");
    return NULL;
  }
  if (!cfg->allow_remote && !bw_partner_host_is_loopback(cfg->host)) {
    bw_error_set(err, BW_E_INVAL, "host",
                 "host must be a loopback address (127.0.0.0/8, ::1 or "
                 "localhost) unless allow_remote is set (got '%s')",
                 cfg->host);
    return NULL;
  }
  if (cfg->backlog < 1 || cfg->backlog > 65535) {
    bw_error_set(err, BW_E_INVAL, "backlog",
                 "backlog must be in [1, 65535] (got %d)", cfg->backlog);
    return NULL;
  }
  if (cfg->idle_timeout_ms < 0 || cfg->idle_timeout_ms > BW_TOOL_DAY_MS_) {
    bw_error_set(err, BW_E_INVAL, "idle_timeout_ms",
                 "idle_timeout_ms must be in [0, 86400000] (got %lld)",
                 (long long)cfg->idle_timeout_ms);
    return NULL;
  }
  if (cfg->header_timeout_ms < 0 || cfg->header_timeout_ms > BW_TOOL_DAY_MS_) {
    bw_error_set(err, BW_E_INVAL, "header_timeout_ms",
                 "header_timeout_ms must be in [0, 86400000] (got %lld)",
                 (long long)cfg->header_timeout_ms);
    return NULL;
  }
  if (cfg->forward_url != NULL &&
      parse_forward(cfg->forward_url, cfg->allow_remote, fwd_host,
                    sizeof(fwd_host), &fwd_port, fwd_path, sizeof(fwd_path),
                    err) != BW_OK)
    return NULL;
  srv = bw_calloc(1, sizeof(*srv));
  if (srv == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the server");
    return NULL;
  }
  srv->base = base;
  srv->cfg = *cfg;
  srv->cfg.forward_url = NULL; /* not kept: host, port and path are */
  memcpy(srv->fwd_host, fwd_host, sizeof(fwd_host));
  memcpy(srv->fwd_path, fwd_path, sizeof(fwd_path));
  srv->fwd_port = fwd_port;
  snprintf(srv->host, sizeof(srv->host), "%s", cfg->host);
  srv->cfg.host = srv->host;
  srv->partner = bw_sim_partner_new(&cfg->partner, err);
  srv->http = srv->partner != NULL ? evhttp_new(base) : NULL;
  if (srv->http == NULL) {
    if (srv->partner != NULL)
      bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the server");
    bw_partner_server_free(srv);
    return NULL;
  }
  evhttp_set_max_body_size(srv->http, PARTNER_MAX_BODY);
  evhttp_set_max_headers_size(srv->http, PARTNER_MAX_HEADERS);
  /* Let every common method reach on_request, so it answers 405 with an
   * Allow header instead of evhttp's bare 501. */
  evhttp_set_allowed_methods(
      srv->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                     EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                     EVHTTP_REQ_PATCH);
  evhttp_set_gencb(srv->http, on_request, srv);
  evhttp_set_bevcb(srv->http, on_new_connection, srv);
  if (cfg->idle_timeout_ms > 0) {
    struct timeval tv = {(time_t)(cfg->idle_timeout_ms / 1000),
                         (suseconds_t)(cfg->idle_timeout_ms % 1000) * 1000};
    evhttp_set_timeout_tv(srv->http, &tv);
  }
  if (cfg->max_connections > 0) {
    srv->max_conns = cfg->max_connections;
  } else {
    struct rlimit rl;
    uint64_t lim =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
            ? (uint64_t)rl.rlim_cur
            : UINT64_C(1048576);
    lim = lim > 128 ? lim - 64 : lim / 2;
    srv->max_conns = lim > UINT32_MAX ? UINT32_MAX : (uint32_t)lim;
  }
  srv->sweep = event_new(base, -1, EV_PERSIST, on_sweep, srv);
  srv->refuse = event_new(base, -1, 0, on_adopt, srv);
  srv->resume = evtimer_new(base, on_resume, srv);
  srv->reap_fwd = event_new(base, -1, 0, on_reap_fwd, srv);
  if (srv->sweep == NULL || srv->refuse == NULL || srv->resume == NULL ||
      srv->reap_fwd == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating the server");
    bw_partner_server_free(srv);
    return NULL;
  }
  {
    struct timeval tv = {0, 100000};
    evtimer_add(srv->sweep, &tv);
  }
  if (listen_on(srv, err) != BW_OK) {
    bw_partner_server_free(srv);
    return NULL;
  }
  return srv;
}

uint16_t bw_partner_server_port(const bw_partner_server_t *srv) {
  return srv != NULL ? srv->port : 0;
}

void bw_partner_server_stats(const bw_partner_server_t *srv,
                             bw_partner_server_stats_t *out) {
  if (out == NULL) return;
  if (srv == NULL) {
    memset(out, 0, sizeof(*out));
    return;
  }
  *out = srv->st;
  bw_sim_partner_stats(srv->partner, &out->partner);
}

int bw_partner_server_reset(bw_partner_server_t *srv, bw_error_t *err) {
  bw_sim_partner_t *fresh;
  bw_sim_partner_stats_t ps;
  uint64_t resets;
  bw_error_clear(err);
  if (srv == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "server must not be NULL");
  bw_sim_partner_stats(srv->partner, &ps);
  if (ps.in_flight != 0)
    return bw_error_set(err, BW_E_FULL, "in_flight",
                        "in_flight must be 0 to reset (got %u)",
                        (unsigned)ps.in_flight);
  fresh = bw_sim_partner_new(&srv->cfg.partner, err);
  if (fresh == NULL) return err != NULL ? err->code : BW_E_NOMEM;
  bw_sim_partner_free(srv->partner);
  srv->partner = fresh;
  resets = srv->st.resets + 1;
  {
    uint64_t open = srv->st.connections, peak = srv->st.max_connections_seen;
    memset(&srv->st, 0, sizeof(srv->st));
    srv->st.connections = open;
    srv->st.max_connections_seen = peak;
  }
  srv->st.resets = resets;
  return BW_OK;
}

/* Appends to buf like snprintf, tracking the total length needed. */
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t size, size_t *len, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0,
                fmt, ap);
  va_end(ap);
  if (n > 0) *len += (size_t)n;
}

int bw_partner_server_metrics(const bw_partner_server_t *srv, char *buf,
                              size_t size) {
  bw_partner_server_stats_t s;
  size_t len = 0;
  if (srv == NULL) return -1;
  if (buf == NULL) size = 0;
  if (size > 0) buf[0] = '\0';
  bw_partner_server_stats(srv, &s);
#define P_(...) add(buf, size, &len, __VA_ARGS__)
  P_("# HELP breakwater_partner_requests_total POST /charges answers sent, by "
     "HTTP status.\n"
     "# TYPE breakwater_partner_requests_total counter\n"
     "breakwater_partner_requests_total{status=\"200\"} %llu\n"
     "breakwater_partner_requests_total{status=\"429\"} %llu\n"
     "breakwater_partner_requests_total{status=\"500\"} %llu\n",
     (unsigned long long)s.replied_200, (unsigned long long)s.replied_429,
     (unsigned long long)s.replied_500);
  P_("# HELP breakwater_partner_network_calls_total POST /charges requests "
     "received.\n"
     "# TYPE breakwater_partner_network_calls_total counter\n"
     "breakwater_partner_network_calls_total %llu\n",
     (unsigned long long)s.network_calls);
  P_("# HELP breakwater_partner_in_flight Requests admitted whose latency has "
     "not elapsed.\n"
     "# TYPE breakwater_partner_in_flight gauge\n"
     "breakwater_partner_in_flight %u\n",
     (unsigned)s.partner.in_flight);
  P_("# HELP breakwater_partner_max_in_flight The highest in-flight count "
     "seen.\n"
     "# TYPE breakwater_partner_max_in_flight gauge\n"
     "breakwater_partner_max_in_flight %u\n",
     (unsigned)s.partner.max_in_flight);
  P_("# HELP breakwater_partner_over_capacity_total Requests that arrived "
     "above capacity.\n"
     "# TYPE breakwater_partner_over_capacity_total counter\n"
     "breakwater_partner_over_capacity_total %llu\n",
     (unsigned long long)s.partner.over_capacity);
  P_("# HELP breakwater_partner_capacity Requests in flight served "
     "normally.\n"
     "# TYPE breakwater_partner_capacity gauge\n"
     "breakwater_partner_capacity %u\n",
     (unsigned)srv->cfg.partner.capacity);
  P_("# HELP breakwater_partner_abandoned_total Answers whose client had "
     "already hung up.\n"
     "# TYPE breakwater_partner_abandoned_total counter\n"
     "breakwater_partner_abandoned_total %llu\n",
     (unsigned long long)s.abandoned);
  P_("# HELP breakwater_partner_requests_with_budget_total POST /charges "
     "carrying a valid X-Timeout-Budget or grpc-timeout.\n"
     "# TYPE breakwater_partner_requests_with_budget_total counter\n"
     "breakwater_partner_requests_with_budget_total %llu\n",
     (unsigned long long)s.requests_with_budget);
  P_("# HELP breakwater_partner_bad_budget_total POST /charges carrying an "
     "unparsable X-Timeout-Budget or grpc-timeout.\n"
     "# TYPE breakwater_partner_bad_budget_total counter\n"
     "breakwater_partner_bad_budget_total %llu\n",
     (unsigned long long)s.bad_budget);
  P_("# HELP breakwater_partner_errors_total Other answers, by HTTP status.\n"
     "# TYPE breakwater_partner_errors_total counter\n"
     "breakwater_partner_errors_total{status=\"404\"} %llu\n"
     "breakwater_partner_errors_total{status=\"405\"} %llu\n",
     (unsigned long long)s.not_found, (unsigned long long)s.method_not_allowed);
  P_("# HELP breakwater_partner_client_resets_total Requests whose client "
     "reset the connection while waiting: freed unanswered.\n"
     "# TYPE breakwater_partner_client_resets_total counter\n"
     "breakwater_partner_client_resets_total %llu\n",
     (unsigned long long)s.client_resets);
  /* (No gauge of open connections: the text must not change with the
   * connection that asks for it; bw_partner_server_stats has it.) */
  P_("# HELP breakwater_partner_max_connections The cap on open "
     "connections.\n"
     "# TYPE breakwater_partner_max_connections gauge\n"
     "breakwater_partner_max_connections %u\n",
     (unsigned)srv->max_conns);
  P_("# HELP breakwater_partner_connections_closed_total Connections closed "
     "by the partner, by reason.\n"
     "# TYPE breakwater_partner_connections_closed_total counter\n"
     "breakwater_partner_connections_closed_total{reason=\"over_cap\"} "
     "%llu\n"
     "breakwater_partner_connections_closed_total{reason=\"header_timeout\"}"
     " %llu\n",
     (unsigned long long)s.refused_connections,
     (unsigned long long)s.timed_out_connections);
  P_("# HELP breakwater_partner_accept_pauses_total Times accepting paused "
     "for want of descriptors.\n"
     "# TYPE breakwater_partner_accept_pauses_total counter\n"
     "breakwater_partner_accept_pauses_total %llu\n",
     (unsigned long long)s.accept_pauses);
  P_("# HELP breakwater_partner_resets_total Successful resets.\n"
     "# TYPE breakwater_partner_resets_total counter\n"
     "breakwater_partner_resets_total %llu\n",
     (unsigned long long)s.resets);
#undef P_
  return len > (size_t)INT32_MAX ? -1 : (int)len;
}

void bw_partner_server_free(bw_partner_server_t *srv) {
  if (srv == NULL) return;
  while (srv->pending != NULL) {
    pending_t *p = srv->pending;
    unlink_pending(srv, p);
    event_free(p->timer);
    bw_sim_partner_done(srv->partner);
    /* Answers (or, for a detached request, frees) it; evhttp_free below
     * then closes the connection. */
    send_json(p->req, 503, "Service Unavailable",
              "{\"status\":\"error\",\"reason\":\"shutting down\"}\n");
    bw_free(p);
  }
  while (srv->forwarding != NULL) {
    pending_t *p = srv->forwarding;
    unlink_forwarding(srv, p);
    /* Freeing the connection frees its queued request without calling
     * back (libevent 2.1), so on_forwarded never sees p again. */
    evhttp_connection_free(p->fwd);
    send_json(p->req, 503, "Service Unavailable",
              "{\"status\":\"error\",\"reason\":\"shutting down\"}\n");
    bw_free(p);
  }
  reap_forwarded(srv);
  if (srv->reap_fwd != NULL) event_free(srv->reap_fwd);
  servers_remove(srv);
  if (srv->sweep != NULL) event_free(srv->sweep);
  if (srv->refuse != NULL) event_free(srv->refuse);
  if (srv->resume != NULL) event_free(srv->resume);
  if (srv->http != NULL) evhttp_free(srv->http);
  /* evhttp freed every connection (their close callbacks removed the
   * adopted records); what is left was never adopted. */
  while (srv->nconns > 0)
    conn_remove(srv, srv->conns[srv->nconns - 1]);
  bw_free(srv->conns);
  bw_free(srv->unadopted);
  bw_sim_partner_free(srv->partner);
  bw_free(srv);
}

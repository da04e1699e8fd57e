/* breakwater tool — the retry storm over real HTTP (storm_real.h). */
#include "storm_real.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <event2/event.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "breakwater/driver_curl.h"
#include "partner_server.h"
#include "storm_metrics.h"
#include "storm_opts.h"

typedef struct storm_s storm_t;

/* The embedded partner runs on its own thread and event_base, so the
 * clients' loop cannot delay its timers. The server is touched only by that
 * thread while it runs; it publishes a snapshot of its counters every 5 ms
 * for the clients' side (under mu). */
typedef struct partner_thread_s {
  struct event_base *base;
  bw_partner_server_t *srv;
  struct event *tick;
  pthread_t th;
  bool inited, started;
  pthread_mutex_t mu;
  bw_partner_server_stats_t snap; /* under mu */
  atomic_bool stop;
} partner_thread_t;

static void partner_tick(evutil_socket_t fd, short what, void *arg) {
  partner_thread_t *pt = arg;
  bw_partner_server_stats_t st;
  (void)fd;
  (void)what;
  bw_partner_server_stats(pt->srv, &st);
  pthread_mutex_lock(&pt->mu);
  pt->snap = st;
  pthread_mutex_unlock(&pt->mu);
  if (atomic_load(&pt->stop)) event_base_loopbreak(pt->base);
}

static void *partner_main(void *arg) {
  partner_thread_t *pt = arg;
  event_base_dispatch(pt->base);
  return NULL;
}

static void partner_snapshot(partner_thread_t *pt,
                             bw_partner_server_stats_t *out) {
  pthread_mutex_lock(&pt->mu);
  *out = pt->snap;
  pthread_mutex_unlock(&pt->mu);
}

/* Starts the partner on its thread; 0, or -1 with err. */
static int partner_start(partner_thread_t *pt,
                         const bw_partner_server_config_t *pc, char *err,
                         size_t err_size) {
  bw_error_t e;
  struct timeval tv = {0, 5000};
  pthread_mutex_init(&pt->mu, NULL);
  pt->inited = true;
  atomic_init(&pt->stop, false);
  pt->base = event_base_new();
  if (pt->base == NULL) {
    snprintf(err, err_size, "cannot start the partner: out of memory");
    return -1;
  }
  if ((pt->srv = bw_partner_server_new(pt->base, pc, &e)) == NULL) {
    snprintf(err, err_size, "cannot start the partner: %s", e.message);
    return -1;
  }
  pt->tick = event_new(pt->base, -1, EV_PERSIST, partner_tick, pt);
  if (pt->tick == NULL || evtimer_add(pt->tick, &tv) != 0) {
    snprintf(err, err_size, "cannot start the partner: out of memory");
    return -1;
  }
  partner_tick(-1, 0, pt);
  if (pthread_create(&pt->th, NULL, partner_main, pt) != 0) {
    snprintf(err, err_size, "cannot start the partner's thread");
    return -1;
  }
  pt->started = true;
  return 0;
}

/* Stops the thread (the server is then this thread's again). */
static void partner_join(partner_thread_t *pt) {
  if (!pt->started) return;
  atomic_store(&pt->stop, true);
  pthread_join(pt->th, NULL);
  pt->started = false;
}

static void partner_stop(partner_thread_t *pt) {
  if (!pt->inited) return;
  partner_join(pt);
  bw_partner_server_free(pt->srv);
  pt->srv = NULL;
  if (pt->tick != NULL) event_free(pt->tick);
  if (pt->base != NULL) event_base_free(pt->base);
  pthread_mutex_destroy(&pt->mu);
  memset(pt, 0, sizeof *pt);
}

typedef struct req_s {
  storm_t *s;
  uint32_t index;
} req_t;

struct storm_s {
  const bw_storm_real_config_t *cfg;
  struct event_base *base;
  bw_curl_t *http;
  partner_thread_t pt;      /* the embedded partner (pt.srv), or none */
  bw_partner_server_t *srv; /* pt.srv: NULL with --url */
  bw_lab_kit_t kit;
  bw_storm_file_kit_t file_kit; /* --config: file_kit.reg owns the kit */
  char url[512];
  char charges[560];
  req_t *reqs;
  int64_t *lat;
  uint32_t submitted, completed, cancelled;
  int64_t start_ns, last_end_ns;
  bw_storm_row_t *row;
  bw_storm_timeline_t *timeline;
  /* previous sample's counters */
  uint64_t prev_ok, prev_429, prev_timeouts, prev_calls;
  struct event *tick, *sampler, *cut;
  bool cut_fired;
  int error;
  char *err;
  size_t err_size;
};

static int64_t now_ns(void) {
  return bw_clock_now(bw_clock_monotonic());
}

/* Descriptors a run needs: one client socket per logical request in
 * flight (each has at most one attempt open), one more on the partner's
 * side when it is embedded, and a reserve for the process. */
#define STORM_FD_RESERVE 64

int bw_storm_fd_budget(uint32_t clients, bool embedded, char *err,
                       size_t err_size) {
  uint64_t per = embedded ? 2 : 1;
  uint64_t need = (uint64_t)clients * per + STORM_FD_RESERVE;
  uint64_t have = bw_partner_raise_nofile();
  if (clients > BW_STORM_REAL_MAX_CLIENTS) {
    snprintf(err, err_size,
             "--clients %u is above the real storm's ceiling of %u (one "
             "event loop on loopback; breakwater lab storm takes more)",
             clients, (unsigned)BW_STORM_REAL_MAX_CLIENTS);
    return -1;
  }
  if (need > have) {
    uint64_t most =
        have > STORM_FD_RESERVE ? (have - STORM_FD_RESERVE) / per : 0;
    snprintf(err, err_size,
             "--clients %u needs about %llu file descriptors (%s, plus %d) "
             "but this process may open %llu (RLIMIT_NOFILE, hard limit "
             "included): use --clients <= %llu%s, or raise the limit "
             "(ulimit -n)",
             clients, (unsigned long long)need,
             embedded ? "2 a client with the embedded partner" : "1 a client",
             STORM_FD_RESERVE, (unsigned long long)have,
             (unsigned long long)most,
             embedded ? ", a partner in another process (--url)" : "");
    return -1;
  }
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static double pct_ms(const int64_t *v, uint32_t n, int p) {
  if (n == 0) return 0.0;
  uint64_t rank = ((uint64_t)p * n + 99) / 100; /* nearest rank */
  if (rank < 1) rank = 1;
  return (double)v[rank - 1] / 1e6;
}

/* ---- a request's end ------------------------------------------------------
 */

static void on_done(void *userdata, const bw_curl_result_t *res) {
  req_t *r = userdata;
  storm_t *s = r->s;
  bw_storm_row_t *row = s->row;
  int64_t t = now_ns();
  if (res->cancelled) {
    s->cancelled++;
    row->failures[BW_STORM_F_OTHER]++;
    return;
  }
  s->lat[s->completed++] = res->latency_ns;
  s->last_end_ns = t;
  switch (res->failure) {
  case BW_FAILURE_NONE:
    row->successes++;
    break;
  case BW_FAILURE_EXHAUSTED:
  case BW_FAILURE_PERMANENT:
    if (res->transport == BW_TRANSPORT_TIMEOUT)
      row->failures[BW_STORM_F_TIMEOUT]++;
    else if (res->transport != BW_TRANSPORT_NONE)
      row->failures[BW_STORM_F_TRANSPORT]++;
    else if (res->status == 429)
      row->failures[BW_STORM_F_429]++;
    else
      row->failures[BW_STORM_F_STATUS]++;
    break;
  case BW_FAILURE_BREAKER:
    row->failures[BW_STORM_F_BREAKER]++;
    break;
  case BW_FAILURE_LIMIT:
  case BW_FAILURE_RATELIMIT:
    row->failures[BW_STORM_F_LIMITER]++;
    break;
  case BW_FAILURE_BUDGET:
    row->failures[BW_STORM_F_BUDGET]++;
    break;
  case BW_FAILURE_DEADLINE:
    row->failures[BW_STORM_F_DEADLINE]++;
    break;
  default:
    row->failures[BW_STORM_F_OTHER]++;
    break;
  }
  if (s->completed == s->cfg->clients) event_base_loopexit(s->base, NULL);
}

/* ---- submitting -----------------------------------------------------------
 */

static void submit(storm_t *s) {
  bw_curl_request_t req;
  static const char body[] = "{\"order\":\"storm\",\"amount_cents\":1000}";
  static const char *const headers[] = {"Content-Type: application/json"};
  req_t *r = &s->reqs[s->submitted];
  r->s = s;
  r->index = s->submitted;
  bw_curl_request_init(&req);
  req.method = "POST";
  req.url = s->charges;
  req.body = body;
  req.body_len = sizeof body - 1;
  req.headers = headers;
  req.header_count = 1;
  s->submitted++;
  if (bw_curl_request(s->http, s->kit.pipeline, &req, on_done, r) != BW_OK) {
    /* Not started: it ends here, as a failure of ours. */
    s->lat[s->completed++] = 0;
    s->row->failures[BW_STORM_F_OTHER]++;
    if (s->completed == s->cfg->clients) event_base_loopexit(s->base, NULL);
  }
}

/* Submits what is due (a burst: everything at once), at most a batch per
 * call, so the loop — and the --max-duration-s cut — runs between
 * batches. */
static void on_tick(evutil_socket_t fd, short what, void *arg) {
  storm_t *s = arg;
  (void)fd;
  (void)what;
  const bw_storm_real_config_t *c = s->cfg;
  uint32_t batch = c->submit_batch > 0 ? c->submit_batch : 256, n = 0;
  if (s->cut_fired) return;
  int64_t elapsed = now_ns() - s->start_ns;
  while (s->submitted < c->clients && n < batch) {
    int64_t due = c->ramp ? (int64_t)((double)c->ramp_ms * 1e6 * s->submitted /
                                      (double)c->clients)
                          : 0;
    if (due > elapsed) break;
    submit(s);
    n++;
  }
  if (s->submitted < c->clients && !s->cut_fired) {
    /* A full batch: go on at once, after the loop had its turn. */
    struct timeval tv = {0, n == batch ? 0 : 1000};
    evtimer_add(s->tick, &tv);
  }
}

/* ---- sampling -------------------------------------------------------------
 */

static void on_sample(evutil_socket_t fd, short what, void *arg) {
  storm_t *s = arg;
  (void)fd;
  (void)what;
  bw_curl_stats_t cs;
  bw_lab_sample_t out;
  uint64_t ok, throttled;
  if (s->http == NULL) return; /* the run is over */
  bw_curl_stats(s->http, &cs);
  memset(&out, 0, sizeof out);
  out.t_ms = (now_ns() - s->start_ns) / 1000000;
  /* ok and throttled are the 200s and 429s; a 500 of --error-ratio is in
   * neither (only in network_calls), as in the virtual lab's timeline,
   * whose samples count attempts_200 and attempts_429. */
  if (s->srv != NULL) {
    bw_partner_server_stats_t ps;
    partner_snapshot(&s->pt, &ps);
    out.partner_in_flight = ps.partner.in_flight;
    ok = ps.replied_200;
    throttled = ps.replied_429;
  } else {
    uint64_t answered = cs.transport_errors;
    for (int i = 0; i < 6; i++)
      answered += cs.responses[i];
    out.partner_in_flight = (uint32_t)(cs.network_calls - answered);
    ok = cs.responses[2];
    throttled = cs.responses[4];
  }
  out.ok = ok - s->prev_ok;
  out.throttled = throttled - s->prev_429;
  out.timeouts = cs.transport[BW_TRANSPORT_TIMEOUT] - s->prev_timeouts;
  out.network_calls = cs.network_calls - s->prev_calls;
  out.completed = s->completed;
  out.breaker =
      s->kit.breaker != NULL ? bw_breaker_state(s->kit.breaker) : BW_CLOSED;
  out.limit = s->kit.limiter != NULL ? bw_limiter_limit(s->kit.limiter) : 0;
  s->prev_ok = ok;
  s->prev_429 = throttled;
  s->prev_timeouts = cs.transport[BW_TRANSPORT_TIMEOUT];
  s->prev_calls = cs.network_calls;
  if (s->timeline != NULL)
    bw_storm_timeline_add(s->timeline, s->cfg->mode, &out);
  if (s->cfg->progress)
    fprintf(stderr, "\r[storm] %s (%d/%d): %u/%u done, %.1f s   ",
            bw_lab_mode_name(s->cfg->mode), s->cfg->mode_index + 1,
            s->cfg->mode_count, s->completed, s->cfg->clients,
            (double)out.t_ms / 1000.0);
}

static void on_cut(evutil_socket_t fd, short what, void *arg) {
  storm_t *s = arg;
  (void)fd;
  (void)what;
  s->cut_fired = true;
  if (s->tick != NULL) event_del(s->tick);
  event_base_loopexit(s->base, NULL);
}

/* ---- an external partner, through blocking curl calls ----------------------
 */

typedef struct sink_s {
  char *buf;
  size_t size;
} sink_t;

static size_t sink_body(char *p, size_t size, size_t n, void *ud) {
  sink_t *k = ud;
  size_t have = strlen(k->buf), add = size * n;
  if (have + add >= k->size) add = k->size - 1 - have;
  memcpy(k->buf + have, p, add);
  k->buf[have + add] = '\0';
  return size * n;
}

static bool numeric_loopback(const char *host);

/* Called by libcurl once connected, before the request is sent: the
 * connection must have reached a loopback address, whatever resolved or
 * proxied it. */
static int loopback_prereq(void *ud, char *ip, char *local_ip, int rport,
                           int lport) {
  (void)local_ip;
  (void)rport;
  (void)lport;
  bool ok = ip != NULL && numeric_loopback(ip);
  if (!ok) snprintf((char *)ud, 64, "%s", ip != NULL ? ip : "?");
  return ok ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT;
}

/* GET or POST url; 0 with the status in *status (and, when body is not
 * NULL, the start of the body in body[body_size]), or -1 with err. */
/* The driver's per-transfer options (bw_curl_config_t.setup): no proxy
 * from the environment, for any transfer of the storm. */
static int no_proxy(void *userdata, CURL *easy) {
  (void)userdata;
  return curl_easy_setopt(easy, CURLOPT_NOPROXY, "*") == CURLE_OK ? 0 : -1;
}

static int fetch_n(const char *url, bool post, char *body, size_t body_size,
                   long *status, char *err, size_t err_size) {
  sink_t sink = {body, body_size};
  CURL *h = curl_easy_init();
  if (h == NULL) {
    snprintf(err, err_size, "cannot create a libcurl handle");
    return -1;
  }
  if (body != NULL) body[0] = '\0';
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  /* Straight to the checked address: no proxy, http only, and a check of
   * the address actually connected to before anything is sent. */
  char where[64] = "";
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, loopback_prereq);
  curl_easy_setopt(h, CURLOPT_PREREQDATA, where);
  if (post) curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
  if (body != NULL) {
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  } else {
    curl_easy_setopt(h, CURLOPT_NOBODY, post ? 0L : 1L);
  }
  CURLcode rc = curl_easy_perform(h);
  if (rc != CURLE_OK && where[0] != '\0') {
    snprintf(err, err_size,
             "refused to talk to %s: it connected to %s, not a loopback "
             "address",
             url, where);
    curl_easy_cleanup(h);
    return -1;
  }
  if (rc != CURLE_OK) {
    snprintf(err, err_size, "cannot reach the partner at %s: %s", url,
             curl_easy_strerror(rc));
    curl_easy_cleanup(h);
    return -1;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  curl_easy_cleanup(h);
  return 0;
}

static bool numeric_loopback(const char *host) {
  struct in_addr a4;
  struct in6_addr a6;
  if (inet_pton(AF_INET, host, &a4) == 1)
    return (ntohl(a4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, host, &a6) == 1)
    return memcmp(&a6, &in6addr_loopback, sizeof a6) == 0;
  return false;
}

/* Only loopback: the project's rule, and a storm must never hit a real
 * partner by accident. The URL is parsed by libcurl itself (so the host
 * checked is the host curl would connect to), and the base URL the storm
 * uses is rebuilt from the checked parts with the numeric address:
 * "localhost" becomes 127.0.0.1, so no name is ever resolved. */
int bw_storm_check_url(const char *url, char *base, size_t base_size, char *err,
                       size_t err_size) {
  static const char rule[] =
      "--url must be http://127.x.x.x:PORT, http://localhost:PORT or "
      "http://[::1]:PORT (loopback only";
  CURLU *u = curl_url();
  char *scheme = NULL, *user = NULL, *pass = NULL, *opts = NULL;
  char *host = NULL, *port = NULL, *path = NULL, *query = NULL, *frag = NULL;
  int rc = -1;
  if (u == NULL) {
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  if (url == NULL || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
    snprintf(err, err_size, "%s; got '%s': not a URL)", rule,
             url != NULL ? url : "");
    goto out;
  }
  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
  curl_url_get(u, CURLUPART_USER, &user, 0);
  curl_url_get(u, CURLUPART_PASSWORD, &pass, 0);
  curl_url_get(u, CURLUPART_OPTIONS, &opts, 0);
  curl_url_get(u, CURLUPART_HOST, &host, 0);
  curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  curl_url_get(u, CURLUPART_PATH, &path, 0);
  curl_url_get(u, CURLUPART_QUERY, &query, 0);
  curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
  if (scheme == NULL || strcmp(scheme, "http") != 0) {
    snprintf(err, err_size, "%s; got '%s': the scheme must be http)", rule,
             url);
    goto out;
  }
  if (user != NULL || pass != NULL || opts != NULL) {
    snprintf(err, err_size,
             "%s; got '%s': a user name or password before '@' is refused)",
             rule, url);
    goto out;
  }
  if (query != NULL || frag != NULL) {
    snprintf(err, err_size, "%s; got '%s': no query or fragment)", rule, url);
    goto out;
  }
  /* curl gives an IPv6 host in brackets. */
  char addr[64];
  size_t hl = host != NULL ? strlen(host) : 0;
  if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']' &&
      hl - 2 < sizeof addr) {
    memcpy(addr, host + 1, hl - 2);
    addr[hl - 2] = '\0';
  } else if (hl > 0 && hl < sizeof addr) {
    memcpy(addr, host, hl + 1);
  } else {
    addr[0] = '\0';
  }
  bool v6 = strchr(addr, ':') != NULL;
  if (strcasecmp(addr, "localhost") == 0) {
    snprintf(addr, sizeof addr, "127.0.0.1");
  } else if (!numeric_loopback(addr)) {
    snprintf(err, err_size,
             "%s; got '%s': the host must be a numeric loopback address or "
             "localhost)",
             rule, url);
    goto out;
  }
  size_t pl = path != NULL ? strlen(path) : 0;
  while (pl > 0 && path[pl - 1] == '/')
    pl--;
  int n = snprintf(base, base_size, "http://%s%s%s:%s%.*s", v6 ? "[" : "", addr,
                   v6 ? "]" : "", port != NULL ? port : "80", (int)pl,
                   path != NULL ? path : "");
  if (n < 0 || (size_t)n >= base_size) {
    snprintf(err, err_size, "%s; got a URL too long)", rule);
    goto out;
  }
  rc = 0;
out:
  curl_free(scheme);
  curl_free(user);
  curl_free(pass);
  curl_free(opts);
  curl_free(host);
  curl_free(port);
  curl_free(path);
  curl_free(query);
  curl_free(frag);
  curl_url_cleanup(u);
  return rc;
}

/* ---- one mode -------------------------------------------------------------
 */

int bw_storm_run_real(const bw_storm_real_config_t *cfg, bw_storm_row_t *row,
                      bw_storm_timeline_t *timeline, char *err,
                      size_t err_size) {
  storm_t s;
  bw_error_t e;
  int rc = -1;
  memset(&s, 0, sizeof s);
  memset(row, 0, sizeof *row);
  row->mode = cfg->mode;
  s.cfg = cfg;
  s.row = row;
  s.timeline = timeline;
  if (cfg->clients == 0) {
    snprintf(err, err_size, "--clients must be >= 1");
    return -1;
  }
  if (bw_storm_fd_budget(cfg->clients, cfg->url == NULL, err, err_size) != 0)
    return -1;
  s.reqs = calloc(cfg->clients, sizeof *s.reqs);
  s.lat = calloc(cfg->clients, sizeof *s.lat);
  s.base = event_base_new();
  if (s.reqs == NULL || s.lat == NULL || s.base == NULL) {
    snprintf(err, err_size, "out of memory");
    goto out;
  }
  if (cfg->url == NULL) {
    bw_partner_server_config_t pc;
    bw_partner_server_config_init(&pc);
    pc.partner = cfg->partner;
    pc.port = 0;
    if (partner_start(&s.pt, &pc, err, err_size) != 0) goto out;
    s.srv = s.pt.srv;
    snprintf(s.url, sizeof s.url, "http://127.0.0.1:%u",
             (unsigned)bw_partner_server_port(s.srv));
  } else {
    if (bw_storm_check_url(cfg->url, s.url, sizeof s.url, err, err_size) != 0)
      goto out;
    /* A fresh partner for this mode; also proves the URL answers. A 409
     * means the partner still works on requests a previous run (or a proxy
     * in between) abandoned: wait for it to go idle, bounded. */
    char reset[600], body[256];
    long status = 0;
    int64_t wait_ms =
        cfg->idle_wait_ms > 0 ? cfg->idle_wait_ms : BW_STORM_IDLE_WAIT_MS;
    int64_t until = now_ns() + wait_ms * 1000000;
    bool told = false;
    snprintf(reset, sizeof reset, "%s/reset", s.url);
    for (int i = 0; i < 100000; i++) {
      if (fetch_n(reset, true, body, sizeof body, &status, err, err_size) != 0)
        goto out;
      if (status != 409 || now_ns() >= until) break;
      if (!told) {
        const char *n = strstr(body, "\"in_flight\":");
        fprintf(stderr,
                "breakwater storm: the partner at %s still has %ld requests "
                "in flight (abandoned by a previous run or a proxy?): "
                "waiting up to %.0f s for it to go idle\n",
                s.url, n != NULL ? strtol(n + 12, NULL, 10) : -1L,
                (double)wait_ms / 1000.0);
        told = true;
      }
      struct timespec ts = {0, 100000000};
      nanosleep(&ts, NULL);
    }
    if (status == 409) {
      snprintf(err, err_size,
               "the partner at %s did not go idle within %.0f s (POST /reset "
               "still answers 409: %s)",
               s.url, (double)wait_ms / 1000.0, body);
      size_t n = strlen(err);
      while (n > 0 && err[n - 1] == '\n')
        err[--n] = '\0';
      goto out;
    }
    if (status != 200) {
      snprintf(err, err_size,
               "%s answered %ld to POST /reset: not an idle breakwater "
               "partner",
               s.url, status);
      goto out;
    }
  }
  snprintf(s.charges, sizeof s.charges, "%s/charges", s.url);

  bw_lab_kit_config_t kc;
  bw_lab_kit_config_init(&kc);
  kc.mode = cfg->mode;
  kc.clock = bw_clock_monotonic();
  kc.attempt_timeout_ms = cfg->attempt_timeout_ms;
  kc.seed = cfg->seed;
  kc.max_limit = cfg->max_limit;
  /* The oracle is told the capacity: the embedded partner's, or the
   * --capacity given for a --url one. */
  kc.oracle_limit = cfg->partner.capacity;
  kc.sink = cfg->sink;
  /* As in the lab: the kit adds the throttle to the built-in breakwater
   * mode only (bw_storm_opts_check refuses it with --config). */
  kc.sre_k = cfg->sre_k;
  if (cfg->config_file != NULL && cfg->mode == BW_LAB_BREAKWATER) {
    s.file_kit.path = cfg->config_file;
    if (bw_storm_file_kit_make(&s.file_kit, kc.clock, cfg->sink, &s.kit, &e) !=
        BW_OK) {
      snprintf(err, err_size, "%s", e.message);
      goto out;
    }
  } else if (bw_lab_kit_init(&s.kit, &kc, &e) != BW_OK) {
    snprintf(err, err_size, "%s: %s", e.field, e.message);
    goto out;
  }
  bw_curl_config_t cc;
  bw_curl_config_init(&cc);
  cc.seed = cfg->seed;
  /* Every transfer of the storm goes straight to the loopback address it
   * names: never through a proxy from the environment. */
  cc.setup = no_proxy;
  cc.handoff = bw_lab_mode_hands_off(cfg->mode); /* as in the virtual lab */
  if ((s.http = bw_curl_new(s.base, &cc, &e)) == NULL) {
    snprintf(err, err_size, "cannot start the HTTP client: %s", e.message);
    goto out;
  }
  s.tick = evtimer_new(s.base, on_tick, &s);
  s.sampler = event_new(s.base, -1, EV_PERSIST, on_sample, &s);
  s.cut = evtimer_new(s.base, on_cut, &s);
  if (s.tick == NULL || s.sampler == NULL || s.cut == NULL) {
    snprintf(err, err_size, "out of memory");
    goto out;
  }
  int64_t sample_ms = cfg->sample_ms > 0 ? cfg->sample_ms : 100;
  struct timeval sv = {(time_t)(sample_ms / 1000),
                       (suseconds_t)(sample_ms % 1000) * 1000};
  struct timeval cv = {(time_t)(cfg->max_duration_ms / 1000),
                       (suseconds_t)(cfg->max_duration_ms % 1000) * 1000};
  evtimer_add(s.sampler, &sv);
  evtimer_add(s.cut, &cv);
  s.start_ns = now_ns();
  on_tick(-1, 0, &s);
  if (s.completed < cfg->clients) event_base_dispatch(s.base);
  on_sample(-1, 0, &s); /* the last interval */
  /* No sample or cut after this: the drain below runs the loop again. */
  event_del(s.sampler);
  event_del(s.cut);
  if (cfg->progress) fprintf(stderr, "\r%70s\r", "");

  /* Requests still open when the run was cut end as cancelled. */
  bw_curl_stats_t cs;
  bw_curl_stats(s.http, &cs);
  row->network_calls = cs.network_calls;
  row->unanswered = cs.transport_errors;
  if (cfg->on_http != NULL)
    cfg->on_http(cfg->kit_userdata, bw_lab_mode_name(cfg->mode), s.http);
  bw_curl_free(s.http);
  s.http = NULL;
  /* A cut before everything was submitted: the rest never started. */
  row->failures[BW_STORM_F_OTHER] += cfg->clients - s.submitted;
  row->requests = cfg->clients;
  row->duration_ms =
      (s.last_end_ns > s.start_ns ? s.last_end_ns - s.start_ns : 0) / 1000000;
  qsort(s.lat, s.completed, sizeof *s.lat, cmp_i64);
  row->p50_ms = pct_ms(s.lat, s.completed, 50);
  row->p95_ms = pct_ms(s.lat, s.completed, 95);
  row->p99_ms = pct_ms(s.lat, s.completed, 99);
  if (s.kit.breaker != NULL) {
    bw_breaker_stats_t bs;
    bw_breaker_stats(s.kit.breaker, &bs);
    row->breaker_opens = bs.opens;
  }
  if (s.kit.throttle != NULL) {
    bw_throttle_stats_t ts;
    bw_throttle_stats(s.kit.throttle, &ts);
    row->throttle_refused = ts.throttled;
  }
  if (s.srv != NULL) {
    /* The partner keeps abandoned requests in flight for their latency:
     * let them finish so its counters are final (not after a cut: the
     * run must end now). */
    bw_partner_server_stats_t ps;
    for (int i = 0; i < 600 && !s.cut_fired; i++) {
      partner_snapshot(&s.pt, &ps);
      if (ps.partner.in_flight == 0) break;
      struct timespec ts = {0, 10000000};
      nanosleep(&ts, NULL);
    }
    partner_join(&s.pt);
    bw_partner_server_stats(s.srv, &ps);
    row->partner_received = ps.network_calls;
    row->partner_max_in_flight = ps.partner.max_in_flight;
  } else {
    char *text = malloc(65536);
    char murl[600];
    long status = 0;
    snprintf(murl, sizeof murl, "%s/metrics", s.url);
    if (text == NULL ||
        fetch_n(murl, false, text, 65536, &status, err, err_size) != 0) {
      free(text);
      goto out;
    }
    /* The partner's two samples: a missing or malformed one is an error,
     * never a silent 0. */
    {
      static const char *const names[] = {
          "breakwater_partner_network_calls_total",
          "breakwater_partner_max_in_flight"};
      uint64_t got[2] = {0, 0};
      size_t len = strlen(text);
      for (int i = 0; i < 2; i++) {
        int m = bw_storm_metric(text, len, names[i], &got[i], err, err_size);
        if (m == 0)
          snprintf(err, err_size, "partner metric %s: missing from %s",
                   names[i], murl);
        if (m != 1) {
          free(text);
          goto out;
        }
      }
      if (got[1] > UINT32_MAX) {
        snprintf(err, err_size,
                 "partner metric %s: value must be at most %u (got %llu)",
                 names[1], (unsigned)UINT32_MAX, (unsigned long long)got[1]);
        free(text);
        goto out;
      }
      row->partner_received = got[0];
      row->partner_max_in_flight = (uint32_t)got[1];
    }
    free(text);
  }
  if (s.cut_fired && s.completed < cfg->clients) {
    snprintf(err, err_size,
             "mode %s cut after %" PRId64 " ms with %u of %u requests open",
             bw_lab_mode_name(cfg->mode), cfg->max_duration_ms,
             cfg->clients - s.completed, cfg->clients);
    rc = -2; /* the row is filled, but incomplete */
    goto out;
  }
  rc = 0;
out:
  if (s.http != NULL) bw_curl_free(s.http);
  if (s.tick != NULL) event_free(s.tick);
  if (s.sampler != NULL) event_free(s.sampler);
  if (s.cut != NULL) event_free(s.cut);
  partner_stop(&s.pt);
  if (cfg->on_kit != NULL && s.kit.pipeline != NULL)
    cfg->on_kit(cfg->kit_userdata, &s.kit);
  if (s.file_kit.path != NULL)
    bw_storm_file_kit_free(&s.file_kit, &s.kit);
  else
    bw_lab_kit_destroy(&s.kit);
  if (s.base != NULL) event_base_free(s.base);
  free(s.reqs);
  free(s.lat);
  return rc;
}

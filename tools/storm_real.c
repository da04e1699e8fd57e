/* breakwater tool — the retry storm over real HTTP (storm_real.h). */
#include "storm_real.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "breakwater/driver_curl.h"
#include "partner_server.h"

typedef struct storm_s storm_t;

typedef struct req_s {
  storm_t *s;
  uint32_t index;
} req_t;

struct storm_s {
  const bw_storm_real_config_t *cfg;
  struct event_base *base;
  bw_curl_t *http;
  bw_partner_server_t *srv; /* embedded partner, or NULL */
  bw_lab_kit_t kit;
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

/* Enough descriptors for a client and a server socket per request. */
static void raise_fd_limit(uint32_t clients) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t want = (rlim_t)clients * 2 + 256;
  if (rl.rlim_cur >= want) return;
  rl.rlim_cur =
      rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
  (void)setrlimit(RLIMIT_NOFILE, &rl);
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

static void on_tick(evutil_socket_t fd, short what, void *arg) {
  storm_t *s = arg;
  (void)fd;
  (void)what;
  const bw_storm_real_config_t *c = s->cfg;
  int64_t elapsed = now_ns() - s->start_ns;
  while (s->submitted < c->clients) {
    int64_t due =
        (int64_t)((double)c->ramp_ms * 1e6 * s->submitted / (double)c->clients);
    if (due > elapsed) break;
    submit(s);
  }
  if (s->submitted < c->clients) {
    struct timeval tv = {0, 1000};
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
  if (s->srv != NULL) {
    bw_partner_server_stats_t ps;
    bw_partner_server_stats(s->srv, &ps);
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
  event_base_loopexit(s->base, NULL);
}

/* ---- an external partner, through blocking curl calls ----------------------
 */

static size_t sink_body(char *p, size_t size, size_t n, void *ud) {
  char *buf = ud;
  size_t have = strlen(buf), add = size * n;
  if (have + add >= 65536) add = 65535 - have;
  memcpy(buf + have, p, add);
  buf[have + add] = '\0';
  return size * n;
}

/* GET or POST url; 0 with the status in *status, or -1 with err. */
static int fetch(const char *url, bool post, char *body, long *status,
                 char *err, size_t err_size) {
  CURL *h = curl_easy_init();
  if (h == NULL) {
    snprintf(err, err_size, "cannot create a libcurl handle");
    return -1;
  }
  if (body != NULL) body[0] = '\0';
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  if (post) curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
  if (body != NULL) {
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  } else {
    curl_easy_setopt(h, CURLOPT_NOBODY, post ? 0L : 1L);
  }
  CURLcode rc = curl_easy_perform(h);
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

/* The value of a Prometheus sample line "name value" (no labels). */
static bool metric(const char *text, const char *name, uint64_t *out) {
  size_t n = strlen(name);
  for (const char *p = text; p != NULL && *p != '\0';) {
    if (strncmp(p, name, n) == 0 && p[n] == ' ') {
      *out = strtoull(p + n + 1, NULL, 10);
      return true;
    }
    p = strchr(p, '\n');
    if (p != NULL) p++;
  }
  return false;
}

/* Only loopback: the project's rule, and a storm must never hit a real
 * partner by accident. */
static bool loopback_url(const char *url) {
  static const char *const ok[] = {
      "http://127.", "http://localhost:", "http://localhost/", "http://[::1]"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (strncmp(url, ok[i], strlen(ok[i])) == 0) return true;
  return false;
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
  raise_fd_limit(cfg->clients);
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
    if ((s.srv = bw_partner_server_new(s.base, &pc, &e)) == NULL) {
      snprintf(err, err_size, "cannot start the partner: %s", e.message);
      goto out;
    }
    snprintf(s.url, sizeof s.url, "http://127.0.0.1:%u",
             (unsigned)bw_partner_server_port(s.srv));
  } else {
    size_t n = strlen(cfg->url);
    if (!loopback_url(cfg->url) || n >= sizeof s.url) {
      snprintf(err, err_size,
               "--url must be http://127.x.x.x:PORT, http://localhost:PORT or "
               "http://[::1]:PORT (loopback only; got '%s')",
               cfg->url);
      goto out;
    }
    memcpy(s.url, cfg->url, n + 1);
    while (n > 0 && s.url[n - 1] == '/')
      s.url[--n] = '\0';
    /* A fresh partner for this mode; also proves the URL answers. */
    char reset[600];
    long status = 0;
    snprintf(reset, sizeof reset, "%s/reset", s.url);
    if (fetch(reset, true, NULL, &status, err, err_size) != 0) goto out;
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
  if (bw_lab_kit_init(&s.kit, &kc, &e) != BW_OK) {
    snprintf(err, err_size, "%s: %s", e.field, e.message);
    goto out;
  }
  bw_curl_config_t cc;
  bw_curl_config_init(&cc);
  cc.seed = cfg->seed;
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
  if (cfg->ramp) {
    on_tick(-1, 0, &s);
  } else {
    while (s.submitted < cfg->clients)
      submit(&s);
  }
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
  bw_curl_free(s.http);
  s.http = NULL;
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
  if (s.srv != NULL) {
    /* The partner keeps abandoned requests in flight for their latency:
     * let them finish so its counters are final. */
    bw_partner_server_stats_t ps;
    for (int i = 0; i < 600; i++) {
      bw_partner_server_stats(s.srv, &ps);
      if (ps.partner.in_flight == 0) break;
      struct timeval tv = {0, 10000};
      event_base_loopexit(s.base, &tv);
      event_base_dispatch(s.base);
    }
    bw_partner_server_stats(s.srv, &ps);
    row->partner_received = ps.network_calls;
    row->partner_max_in_flight = ps.partner.max_in_flight;
  } else {
    char *text = malloc(65536);
    char murl[600];
    long status = 0;
    uint64_t v = 0;
    snprintf(murl, sizeof murl, "%s/metrics", s.url);
    if (text == NULL || fetch(murl, false, text, &status, err, err_size) != 0) {
      free(text);
      goto out;
    }
    if (metric(text, "breakwater_partner_network_calls_total", &v))
      row->partner_received = v;
    if (metric(text, "breakwater_partner_max_in_flight", &v))
      row->partner_max_in_flight = (uint32_t)v;
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
  bw_partner_server_free(s.srv);
  bw_lab_kit_destroy(&s.kit);
  if (s.base != NULL) event_base_free(s.base);
  free(s.reqs);
  free(s.lat);
  return rc;
}

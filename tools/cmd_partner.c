/* `breakwater partner`: the Polly lab's simulated payment partner as an HTTP
 * server on the loopback interface, until a duration elapses or SIGINT /
 * SIGTERM. docs/partner.md is the user guide. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli.h"
#include "commands.h"
#include "partner_server.h"
#include "partner_flags.h"

#define PARTNER_DEFAULT_PORT 8404

typedef struct opts_s {
  const char *host;
  uint32_t port;
  bool allow_remote;
  bw_sim_partner_config_t partner; /* the model's knobs (not its seed) */
  char partner_help[BW_PARTNER_KNOB_FLAGS][96];
  int64_t seed;
  int64_t duration_s;
  uint32_t backlog;
  double idle_timeout_s, header_timeout_s;
  uint32_t max_connections;
  const char *forward_url;
  bool quiet;
} opts_t;

/* The flag table; targets point into *o (defaults already in it). */
static size_t make_flags(bw_cli_flag_t *f, opts_t *o) {
  size_t n = 0;
  bw_cli_flag_t all[] = {
      BW_CLI_STRING("host", &o->host, "HOST",
                    "address to listen on (default 127.0.0.1; loopback only "
                    "unless --allow-remote)"),
      BW_CLI_U32("port", &o->port, 0, 65535, "PORT",
                 "port (default 8404; 0 = a free port, printed)"),
      BW_CLI_BOOL("allow-remote", &o->allow_remote,
                  "allow a non-loopback --host (the project's rule is "
                  "loopback only)"),
      BW_SEED_FLAG(&o->seed, "the model's random seed (default 4)"),
      BW_CLI_I64("duration-s", &o->duration_s, 0, INT64_C(31536000), "S",
                 "stop after S seconds; 0 = until SIGINT/SIGTERM (default 0)"),
      BW_CLI_U32("backlog", &o->backlog, 1, 65535, "N",
                 "listen() backlog (default 1024)"),
      BW_CLI_DOUBLE("idle-timeout-s", &o->idle_timeout_s, 0.0, 86400.0, "S",
                    "close a connection silent this long between requests; "
                    "0 = never (default 5)"),
      BW_CLI_DOUBLE("header-timeout-s", &o->header_timeout_s, 0.0, 86400.0, "S",
                    "close a connection whose request has not arrived whole "
                    "this long after it opened or was last answered, however "
                    "slowly it trickles; 0 = never (default 10)"),
      BW_CLI_U32("max-connections", &o->max_connections, 0, 10000000, "N",
                 "open connections beyond N get 503 and are closed; 0 = the "
                 "descriptor limit less 64 (default 0)"),
      BW_CLI_STRING("forward-url", &o->forward_url, "URL",
                    "forward mode: after its latency, POST each charge the "
                    "model accepts on to URL (http://HOST:PORT/PATH, "
                    "loopback unless --allow-remote) with the request's "
                    "remaining X-Timeout-Budget and a new span of its "
                    "traceparent; under 1 s left: 504, not called"),
      BW_CLI_BOOL("quiet", &o->quiet,
                  "no summary at exit (the listening line is always "
                  "printed)"),
  };
  for (n = 0; n < sizeof(all) / sizeof(all[0]); n++)
    f[n] = all[n];
  return n + bw_partner_knob_flags(f + n, &o->partner, "", o->partner_help);
}

#define MAX_FLAGS 40

static void defaults(opts_t *o) {
  bw_partner_server_config_t d;
  bw_partner_server_config_init(&d);
  memset(o, 0, sizeof(*o));
  o->host = d.host;
  o->port = PARTNER_DEFAULT_PORT;
  o->partner = d.partner;
  o->seed = (int64_t)d.partner.seed;
  o->backlog = (uint32_t)d.backlog;
  o->idle_timeout_s = (double)d.idle_timeout_ms / 1000.0;
  o->header_timeout_s = (double)d.header_timeout_ms / 1000.0;
  o->max_connections = d.max_connections;
}

void bw_cmd_partner_help(FILE *out) {
  bw_cli_flag_t flags[MAX_FLAGS];
  opts_t o;
  size_t n;
  defaults(&o);
  n = make_flags(flags, &o);
  fprintf(out,
          "usage: breakwater partner [flags]\n\n"
          "The simulated payment partner over HTTP/1.1 (the Polly lab's "
          "model): a capacity of\n"
          "requests in flight; under it 200 after ok-min..ok-max ms; above it\n"
          "slow-min..slow-max ms, then 429 with probability throttle-ratio;\n"
          "error-ratio makes that share of the answers under capacity 500s.\n\n"
          "Endpoints: POST /charges, GET /health, GET /metrics (Prometheus),\n"
          "POST /reset (fresh partner; 409 while requests are in flight).\n"
          "Prints 'partner listening on http://HOST:PORT (capacity N, seed "
          "S)'.\n\n"
          "flags:\n");
  bw_cli_print_flags(out, flags, n);
}

/* libevent's warnings: at most one a second, with a count of those
 * suppressed; dropped rather than blocking when stderr is a full pipe. */
static void libevent_log(int severity, const char *msg) {
  static struct timespec last;
  static unsigned long suppressed;
  struct timespec now;
  struct pollfd pfd = {2, POLLOUT, 0};
  char line[512];
  int n;
  if (severity < EVENT_LOG_WARN) return;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if ((last.tv_sec != 0 || last.tv_nsec != 0) &&
      (now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) <
          1000000000L) {
    suppressed++;
    return;
  }
  last = now;
  if (poll(&pfd, 1, 0) != 1 || (pfd.revents & POLLOUT) == 0) {
    suppressed++;
    return;
  }
  n = snprintf(line, sizeof(line), "breakwater partner: libevent: %.400s", msg);
  if (suppressed > 0)
    n += snprintf(line + n, sizeof(line) - (size_t)n,
                  " (%lu similar suppressed)", suppressed);
  line[n++] = '\n';
  suppressed = 0;
  if (write(2, line, (size_t)n) < 0) suppressed++;
}

static void on_stop(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  event_base_loopexit((struct event_base *)arg, NULL);
}

int bw_cmd_partner(int argc, char **argv) {
  bw_cli_flag_t flags[MAX_FLAGS];
  bw_partner_server_config_t cfg;
  bw_partner_server_t *srv;
  bw_partner_server_stats_t st;
  struct event_base *base;
  struct event *sigint, *sigterm, *timer = NULL;
  char msg[256], flag[64];
  opts_t o;
  size_t n;
  int rc;

  defaults(&o);
  n = make_flags(flags, &o);
  rc = bw_cli_parse(flags, n, argc, argv, NULL, 0, NULL, msg, sizeof(msg));
  if (rc == BW_CLI_HELP) {
    bw_cmd_partner_help(stdout);
    return 0;
  }
  if (rc != BW_CLI_OK) {
    fprintf(stderr, "breakwater partner: %s\n", msg);
    fprintf(stderr, "Run 'breakwater help partner' for the flags.\n");
    return BW_CLI_EXIT_USAGE;
  }

  bw_partner_server_config_init(&cfg);
  cfg.host = o.host;
  cfg.port = (uint16_t)o.port;
  cfg.allow_remote = o.allow_remote;
  cfg.backlog = (int)o.backlog;
  cfg.partner = o.partner;
  cfg.partner.seed = (uint64_t)o.seed;
  cfg.idle_timeout_ms = (int64_t)(o.idle_timeout_s * 1000.0 + 0.5);
  cfg.header_timeout_ms = (int64_t)(o.header_timeout_s * 1000.0 + 0.5);
  cfg.max_connections = o.max_connections;
  cfg.forward_url = o.forward_url;

  /* As many connections as the system lets this process hold; libevent's
   * own warnings go through a rate limit, never blocking on stderr. */
  (void)bw_partner_raise_nofile();
  event_set_log_callback(libevent_log);

  /* A client that hangs up must not kill the server with SIGPIPE. */
  signal(SIGPIPE, SIG_IGN);
  base = event_base_new();
  if (base == NULL) {
    fprintf(stderr, "breakwater partner: cannot create an event base\n");
    return 1;
  }
  {
    bw_error_t err;
    srv = bw_partner_server_new(base, &cfg, &err);
    if (srv == NULL) {
      bw_partner_flag_of(err.field[0] != '\0' ? err.field : "?", flag,
                         sizeof(flag));
      fprintf(stderr, "breakwater partner: %s: %s\n", flag, err.message);
      event_base_free(base);
      /* A configuration the flags could not express is a usage error; a
       * port that cannot be bound is a runtime failure. */
      return err.code == BW_E_INVAL ? BW_CLI_EXIT_USAGE : 1;
    }
  }
  sigint = evsignal_new(base, SIGINT, on_stop, base);
  sigterm = evsignal_new(base, SIGTERM, on_stop, base);
  if (sigint == NULL || sigterm == NULL || evsignal_add(sigint, NULL) != 0 ||
      evsignal_add(sigterm, NULL) != 0) {
    fprintf(stderr, "breakwater partner: cannot watch SIGINT/SIGTERM\n");
    rc = 1;
    goto out;
  }
  if (o.duration_s > 0) {
    struct timeval tv;
    tv.tv_sec = (time_t)o.duration_s;
    tv.tv_usec = 0;
    timer = evtimer_new(base, on_stop, base);
    if (timer == NULL || evtimer_add(timer, &tv) != 0) {
      fprintf(stderr, "breakwater partner: cannot arm the duration timer\n");
      rc = 1;
      goto out;
    }
  }
  printf("partner listening on http://%s%s%s:%u (capacity %u, seed %llu)\n",
         strchr(o.host, ':') != NULL ? "[" : "", o.host,
         strchr(o.host, ':') != NULL ? "]" : "",
         (unsigned)bw_partner_server_port(srv), (unsigned)o.partner.capacity,
         (unsigned long long)o.seed);
  fflush(stdout);

  rc = event_base_dispatch(base) < 0 ? 1 : 0;
  if (rc != 0) fprintf(stderr, "breakwater partner: event loop failed\n");
  bw_partner_server_stats(srv, &st);
  if (!o.quiet) {
    printf(
        "partner stopped: network_calls=%llu status_200=%llu "
        "status_429=%llu status_500=%llu over_capacity=%llu "
        "max_in_flight=%u in_flight=%u abandoned=%llu\n",
        (unsigned long long)st.network_calls,
        (unsigned long long)st.replied_200, (unsigned long long)st.replied_429,
        (unsigned long long)st.replied_500,
        (unsigned long long)st.partner.over_capacity,
        (unsigned)st.partner.max_in_flight, (unsigned)st.partner.in_flight,
        (unsigned long long)st.abandoned);
    fflush(stdout);
  }
out:
  bw_partner_server_free(srv);
  if (timer != NULL) event_free(timer);
  if (sigint != NULL) event_free(sigint);
  if (sigterm != NULL) event_free(sigterm);
  event_base_free(base);
  return rc;
}

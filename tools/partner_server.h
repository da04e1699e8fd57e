/* breakwater — the simulated payment partner of the Polly lab as a real
 * HTTP/1.1 server on libevent's evhttp (library breakwater_partner, tools/).
 *
 * The decisions are the virtual-time model's (bw_sim_partner_admit / done in
 * sim.h), unmodified: this file only does the I/O. A POST /charges is
 * admitted at arrival (status and latency decided then), answered after its
 * latency by an event timer, and stays in flight for its whole latency even
 * if the client hung up. Endpoints, metrics and flags: docs/partner.md.
 *
 *   struct event_base *base = event_base_new();
 *   bw_partner_server_config_t cfg;
 *   bw_partner_server_config_init(&cfg);      // 127.0.0.1, port 0 = any free
 *   bw_partner_server_t *srv = bw_partner_server_new(base, &cfg, &err);
 *   printf("port %u\n", bw_partner_server_port(srv));
 *   event_base_dispatch(base);
 *   bw_partner_server_free(srv);
 *
 * Threads: a server belongs to the thread that runs its event_base. Every
 * function here must be called from that thread (or while the loop is not
 * running). Nothing is locked. */
#ifndef BREAKWATER_TOOLS_PARTNER_SERVER_H
#define BREAKWATER_TOOLS_PARTNER_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "breakwater/common.h"
#include "breakwater/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct event_base;

typedef struct bw_partner_server_s bw_partner_server_t;

typedef struct bw_partner_server_config_s {
  bw_sim_partner_config_t partner; /* the model; defaults are the Polly lab's */
  const char *host;  /* numeric IPv4/IPv6 address or "localhost"; default
                        "127.0.0.1"; copied at creation */
  uint16_t port;     /* default 0 = a free port (bw_partner_server_port) */
  bool allow_remote; /* default false: only loopback addresses (127.0.0.0/8,
                        ::1) may be bound, the project's rule */
  int backlog;       /* listen() backlog; default 1024, 1..65535 */
  /* Connection hygiene (0 = off for each):
   * idle_timeout_ms   evhttp's read/write timeout: a connection silent this
   *                   long between requests is closed; default 5000.
   * header_timeout_ms a request must arrive whole (headers and body) within
   *                   this of the connection opening or of the previous
   *                   answer (plus idle_timeout_ms then), however slowly it
   *                   trickles in; default 10000. Checked every 100 ms.
   * max_connections   open connections beyond it are answered 503 and
   *                   closed at once; default 0 = the descriptor limit
   *                   (RLIMIT_NOFILE) less 64. */
  int64_t idle_timeout_ms;
  int64_t header_timeout_ms;
  uint32_t max_connections;
  bool log; /* default true: rate-limited warnings on stderr (at most one
               line a second per kind, with a count of those suppressed,
               never blocking on a full pipe) */
  /* Forward mode (default NULL: off). "http://HOST[:PORT][/PATH]" (HOST
   * loopback unless allow_remote; copied at creation): a POST /charges the
   * model answers 200 is, after its latency, POSTed on to this URL with the
   * request's remaining deadline as X-Timeout-Budget (read on arrival by
   * bw_ev_http_deadline; none when the request carried none) and its trace
   * context as a new span (bw_ev_http_trace); the answer is then 200
   * {"status":"ok","next":CODE} when the next hop answered 200, 502 with
   * its status otherwise, 504 with none. With less than
   * BW_DEADLINE_MIN_CALL_MS left the next hop is not called: 504
   * {"status":"deadline"} (the reference toolkit's refusal). */
  const char *forward_url;
} bw_partner_server_config_t;

/* Counters since creation or the last reset. Conservation:
 * network_calls = replied_200 + replied_429 + replied_500 + client_resets +
 * in_flight,
 * where in_flight is partner.in_flight (requests admitted whose latency has
 * not elapsed). */
typedef struct bw_partner_server_stats_s {
  bw_sim_partner_stats_t partner; /* the model's own counters */
  uint64_t network_calls;         /* POST /charges received */
  uint64_t replied_200;           /* /charges answers sent, by status */
  uint64_t replied_429;
  uint64_t replied_500;   /* the model's error_ratio: 500 {"status":"error"},
                             never forwarded */
  uint64_t abandoned;     /* answers whose client was gone: the connection had
                             failed or was reset before or as the answer was
                             written (still counted in replied_*: the partner
                             did the work). A client that only shut down its
                             sending side and read its answer is not counted. */
  uint64_t client_resets; /* requests whose client reset the connection
                             while waiting: they left the model's in-flight
                             count at once, unanswered */
  uint64_t connections;   /* open connections now (never zeroed by reset) */
  uint64_t max_connections_seen;  /* the highest open count (idem) */
  uint64_t refused_connections;   /* answered 503 and closed: over the cap */
  uint64_t timed_out_connections; /* closed by header_timeout_ms */
  uint64_t accept_pauses;         /* accepting paused: out of descriptors */
  uint64_t requests_with_budget;  /* carried a valid X-Timeout-Budget or
                                     grpc-timeout (bw_ev_http_deadline) */
  uint64_t bad_budget;            /* carried an unparsable one */
  uint64_t not_found;             /* 404 answers */
  uint64_t method_not_allowed;    /* 405 answers */
  uint64_t resets;                /* successful resets since creation (never
                                     zeroed) */
  uint64_t forwarded;             /* forward mode: calls made to the next hop */
  uint64_t forward_refused;       /* not made: under 1 s of deadline left */
  uint64_t forward_failed;        /* made, and no HTTP answer came back */
} bw_partner_server_stats_t;

/* Fills the documented defaults (NULL is ignored). */
void bw_partner_server_config_init(bw_partner_server_config_t *cfg);

/* Creates a server listening on cfg->host:cfg->port on `base` (borrowed: it
 * must outlive the server). Returns NULL with err (may be NULL) set:
 * BW_E_INVAL naming the field for a bad model configuration ("capacity",
 * ...), a bad or non-loopback host ("host") or backlog; BW_E_IO naming
 * "port" with the port and the system's reason when it cannot bind (e.g.
 * "cannot listen on 127.0.0.1:8404: Address already in use");
 * BW_E_NOMEM. */
bw_partner_server_t *bw_partner_server_new(
    struct event_base *base, const bw_partner_server_config_t *cfg,
    bw_error_t *err);

/* The port actually bound (the chosen one when cfg.port was 0); 0 for
 * NULL. */
uint16_t bw_partner_server_port(const bw_partner_server_t *srv);

/* A snapshot of the counters. Zeroes *out for a NULL server. */
void bw_partner_server_stats(const bw_partner_server_t *srv,
                             bw_partner_server_stats_t *out);

/* Starts a fresh partner: a new model with the same configuration (so the
 * same seed, the same sequence of decisions) and zeroed counters (except
 * `resets`). Only when nothing is in flight: BW_E_FULL (err names
 * "in_flight") otherwise, so a drained partner is reset and a busy one is
 * left alone. BW_E_INVAL for NULL, BW_E_NOMEM (the old partner stays). This
 * is what POST /reset does. */
int bw_partner_server_reset(bw_partner_server_t *srv, bw_error_t *err);

/* Writes the Prometheus text exposition (the GET /metrics body) into buf
 * (always NUL-terminated when size > 0). Returns the length it needed, as
 * snprintf does, or -1 for a NULL server. */
int bw_partner_server_metrics(const bw_partner_server_t *srv, char *buf,
                              size_t size);

/* Stops listening, answers every request still waiting for its latency with
 * 503 (each one leaves the model's in-flight count), closes every
 * connection and frees the server. Events of this server are removed from
 * the base; the base itself is not freed. NULL is fine. */
void bw_partner_server_free(bw_partner_server_t *srv);

/* Raises the soft RLIMIT_NOFILE to the hard limit (as far as the system
 * lets it) and returns the soft limit in force afterwards. */
uint64_t bw_partner_raise_nofile(void);

/* True when host is a loopback address: "localhost", 127.0.0.0/8 or ::1
 * (numeric only; nothing is resolved). */
bool bw_partner_host_is_loopback(const char *host);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_TOOLS_PARTNER_SERVER_H */

/* Component curl: library libbreakwater_curl, pkg-config module
 * breakwater-curl, CMake target breakwater::curl. */
/* breakwater — the libcurl HTTP driver: runs pipeline calls (pipeline.h)
 * over real HTTP with libcurl's multi socket API on a libevent event_base
 * (one process, one thread, no thread per request).
 *
 *   bw_curl_t *http = bw_curl_new(base, NULL, &err);
 *   bw_curl_request_t req;
 *   bw_curl_request_init(&req);
 *   req.method = "POST"; req.url = "http://127.0.0.1:8080/pay";
 *   req.body = json; req.body_len = strlen(json);
 *   req.idempotent = false;                 // sends an Idempotency-Key
 *   bw_curl_request(http, pipeline, &req, on_done, ctx);
 *   event_base_dispatch(base);
 *
 * Every ATTEMPT step is one curl easy handle added to the multi handle, with
 * CURLOPT_TIMEOUT_MS = the attempt's time limit (attempt_timeout_ms; none
 * when -1) and a connect timeout; with the headers:
 *   X-Timeout-Budget: <remaining seconds>   when the call has a deadline
 *   Idempotency-Key: <uuidv7>               when req.idempotent is false:
 *       one key per logical call, the same on every attempt; when the
 *       pipeline has a retry the key is attached to its iterator
 *       (bw_retry_attach_key), which lets a non-idempotent policy retry.
 *   traceparent / tracestate                when a W3C trace (trace.h) was
 *       current on the thread that called bw_curl_request: the same
 *       trace-id, a new span id per attempt.
 * Its result is classified with bw_http_classify (the transport kind from
 * the CURLcode: bw_curl_transport), with the response's Retry-After (for
 * 429 and 503) or grpc-retry-pushback-ms as the retry hint. A URL curl
 * cannot use (malformed, or a scheme other than http/https) is PERMANENT.
 *
 * The result type, bw_curl_result_clear and the CURLcode classification
 * (bw_curl_transport, bw_curl_verdict) are in curl_easy.h, with the
 * blocking easy-handle helper that needs no libevent.
 *
 * Library: breakwater_curl (links breakwater_curl_easy, breakwater_event,
 * libcurl, libevent). Threads: a bw_curl_t belongs to its event_base's
 * thread; nothing here is thread-safe except bw_http_call (which runs on
 * its own base). */
#ifndef BREAKWATER_DRIVER_CURL_H
#define BREAKWATER_DRIVER_CURL_H

#include "clock.h"
#include "common.h"
#include "curl_easy.h"
#include "driver_event.h"
#include "http.h"
#include "pipeline.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

struct event_base;

typedef struct bw_curl_s bw_curl_t;

typedef struct bw_curl_config_s {
  const bw_clock_t *clock;      /* the strategies' clock; default monotonic */
  const bw_clock_t *wall_clock; /* Retry-After dates, Idempotency-Key
                                   timestamps; default realtime */
  int64_t connect_timeout_ms;   /* per attempt, also bounded by the
                                   attempt's limit; default 2000, >= 1 */
  uint32_t max_body;            /* bytes of body kept, 0..BW_CURL_BODY_MAX;
                                   default BW_CURL_BODY_MAX */
  uint64_t seed;                /* Idempotency-Key randomness when the
                                   pipeline has no retry; 0 = from the OS */
  /* Called with every attempt's easy handle, after the driver set its own
   * options and before the transfer starts: the place for TLS
   * (CURLOPT_CAINFO, client certificates), proxies (CURLOPT_PROXY,
   * CURLOPT_NOPROXY), CURLOPT_INTERFACE, CURLOPT_RESOLVE. It must not
   * change what the driver owns (URL, method and body, headers, callbacks,
   * CURLOPT_PRIVATE, timeouts). Hedged copies are duplicates of the handle
   * (curl_easy_duphandle) and so carry the same options. Answering
   * non-zero fails the attempt before it is sent (BW_TRANSPORT_OTHER,
   * CURLE_FAILED_INIT). NULL = none. Called from the loop. */
  int (*setup)(void *userdata, CURL *easy);
  void *setup_userdata;
  bool handoff; /* a freed slot goes to the longest slot waiter at once
                   (bw_ev_config_t.handoff); default false: waiters poll */
} bw_curl_config_t;

/* One HTTP request. The driver copies everything it needs in
 * bw_curl_request: the struct and its strings may go away after. */
typedef struct bw_curl_request_s {
  const char *method;         /* default "GET" */
  const char *url;            /* required: http://... */
  const char *body;           /* optional */
  size_t body_len;            /* bytes of body */
  const char *const *headers; /* optional "Name: value" lines */
  size_t header_count;
  bool idempotent; /* default true; false: Idempotency-Key (above) */
} bw_curl_request_t;

/* Called once per logical call, from the loop (never from inside
 * bw_curl_request), or from bw_curl_free with res->cancelled set. */
typedef void (*bw_curl_done_fn)(void *userdata, const bw_curl_result_t *res);

typedef struct bw_curl_stats_s {
  uint64_t network_calls;    /* easy handles added to the multi */
  uint64_t responses[6];     /* by status class: [1]..[5] = 1xx..5xx,
                                [0] = a status outside 100..599 */
  uint64_t transport_errors; /* attempts that got no response */
  uint64_t transport[7];     /* the same, by bw_transport_t */
  uint64_t calls_started;
  uint64_t calls_succeeded;
  uint64_t calls_failed;
  uint64_t calls_cancelled;
  uint64_t calls_in_progress;
  uint64_t hedges;     /* hedged copies sent (in network_calls too) */
  uint64_t hedge_wins; /* attempts whose OK answer was a copy's */
  uint64_t attempts;   /* ATTEMPT steps the pipelines asked for (hedged
                          copies not counted; an attempt with no time left
                          or out of memory makes no network call) */
} bw_curl_stats_t;

/* Fills the defaults. NULL is ignored. */
BW_EXTERN void bw_curl_config_init(bw_curl_config_t *cfg);
/* Fills a request's defaults: GET, idempotent, no body, no headers. */
BW_EXTERN void bw_curl_request_init(bw_curl_request_t *req);

/* Creates a driver on `base` (borrowed; it must outlive the driver). cfg may
 * be NULL. Initializes libcurl globally once per process (never cleaned up).
 * NULL with err set: BW_E_INVAL (base NULL; connect_timeout_ms < 1;
 * max_body above BW_CURL_BODY_MAX — the field named), BW_E_NOMEM, BW_E_IO
 * (libcurl could not be initialized). */
BW_EXTERN bw_curl_t *bw_curl_new(struct event_base *base,
                                 const bw_curl_config_t *cfg, bw_error_t *err);

/* Frees the driver (NULL is fine). Requests in flight are cancelled: their
 * easy handle is removed from the multi, their pipeline call cancelled
 * (every entered strategy left with IGNORED) and their done callback runs
 * with cancelled = true (so the caller can free its userdata). New requests
 * from those callbacks are refused. Nothing leaks. */
BW_EXTERN void bw_curl_free(bw_curl_t *http);

/* Starts one logical call of `req` through `pl` (borrowed: it must outlive
 * the call). The first attempt may begin here; done never runs from here.
 * BW_OK; BW_E_INVAL for NULL http, pl or req, a NULL url, a body_len
 * without a body, headers NULL with a count, or while freeing; BW_E_NOMEM. */
BW_EXTERN int bw_curl_request(bw_curl_t *http, const bw_pipeline_t *pl,
                              const bw_curl_request_t *req,
                              bw_curl_done_fn done, void *userdata);
/* The same with an outer deadline (the inbound request's; a reading of the
 * driver's clock), which the pipeline's deadline can only narrow. */
BW_EXTERN int bw_curl_request_at(bw_curl_t *http, const bw_pipeline_t *pl,
                                 const bw_curl_request_t *req,
                                 bw_deadline_t outer, bw_curl_done_fn done,
                                 void *userdata);

/* bw_curl_request_at with hedging (hedge.h; borrowed, it must outlive the
 * call): each attempt the pipeline asks for starts as one transfer, and
 * each time the policy's timer fires with no answer yet, another copy of
 * it (the same request, its own X-Timeout-Budget, the same Idempotency-Key)
 * joins the multi handle, within the attempt's time limit. The first copy
 * with an OK verdict wins: the others are removed from the multi and
 * cleaned up (their connections closed). A copy that fails while another
 * is out is dropped; the last one's failure is the attempt's. The pipeline
 * sees one attempt; res->network_attempts and the stats count every copy
 * (hedges, hedge_wins). The winning copy's latency is recorded in the
 * policy (bw_hedge_record). Non-idempotent requests (req->idempotent false)
 * are hedged only if the policy says non_idempotent. BW_E_INVAL also for a
 * NULL hedge. */
struct bw_hedge_s;
BW_EXTERN int bw_curl_request_hedged(bw_curl_t *http, const bw_pipeline_t *pl,
                                     const bw_curl_request_t *req,
                                     struct bw_hedge_s *hedge,
                                     bw_deadline_t outer, bw_curl_done_fn done,
                                     void *userdata);

/* Counters. NULL arguments are ignored. Unlike the rest of this header,
 * callable from any thread (the counters are read under a lock). */
BW_EXTERN void bw_curl_stats(const bw_curl_t *http, bw_curl_stats_t *out);

/* The driver's counters as registry families (registry.h, collectors), all
 * with name = the collector's name: breakwater_http_client_attempts_total,
 * _network_calls_total, _hedges_total, _hedge_wins_total,
 * _transport_errors_total{kind="timeout"/"refused"/"dns"/"reset"/"tls"/
 * "other"}, _responses_total{class="1xx".."5xx"/"other"},
 * _calls_total{outcome="success"/"failure"/"cancelled"} (counters) and
 * _calls_in_progress (gauge); docs/drivers.md. A bw_collect_fn: obj is the
 * bw_curl_t. BW_OK, or BW_E_INVAL (NULL obj or emit), or what emit
 * answered. Callable from any thread. */
BW_EXTERN int bw_curl_collect(void *http, bw_metric_emit_fn emit,
                              void *emit_ctx);
/* bw_registry_put_collector(reg, name, bw_curl_collect, http, err): the
 * driver's families in every exposition of reg, under `name`. The driver
 * must outlive the registry, or be removed first
 * (bw_registry_remove_collector(reg, name)). BW_OK; BW_E_INVAL with
 * err.field "http" (NULL) or as bw_registry_put_collector; BW_E_NOMEM. */
BW_EXTERN int bw_curl_put_registry(bw_registry_t *reg, const char *name,
                                   bw_curl_t *http, bw_error_t *err);

/* Blocking helper for simple programs: runs one logical call on its own
 * event_base and bw_curl_t (monotonic clock) until it is done. Returns the
 * failure kind (BW_FAILURE_NONE = success, >= 0) with *out filled (out
 * may be NULL; else release it with bw_curl_result_clear), or a negative
 * BW_E_* with err set (BW_E_INVAL for NULL pl or req or a bad request,
 * BW_E_NOMEM, BW_E_IO). Thread-safe (each call has its own loop). */
BW_EXTERN int bw_http_call(const bw_pipeline_t *pl,
                           const bw_curl_request_t *req, bw_curl_result_t *out,
                           bw_error_t *err);
#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_DRIVER_CURL_H */

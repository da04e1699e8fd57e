/* Component curl_easy: library libbreakwater_curl_easy, pkg-config module
 * breakwater-curl_easy, CMake target breakwater::curl_easy. It links
 * libcurl and the core only — no libevent — and the curl component
 * (driver_curl.h, the multi driver on libevent) is built on it. */
/* breakwater — your own CURL easy handle through a pipeline, blocking, with
 * no event loop:
 *
 *   CURL *easy = curl_easy_init();
 *   curl_easy_setopt(easy, CURLOPT_URL, "http://127.0.0.1:8080/quote");
 *   bw_curl_result_t res;
 *   int rc = bw_curl_easy_perform(pipeline, easy, &res);
 *   if (rc == BW_FAILURE_NONE) printf("%d %s\n", res.status, res.body);
 *   bw_curl_result_clear(&res);
 *   curl_easy_cleanup(easy);
 *
 * Each ATTEMPT step of the pipeline is one curl_easy_perform of the handle;
 * each WAIT step a nanosleep (or your sleep function). Per attempt the
 * helper sets CURLOPT_TIMEOUT_MS (the pipeline's attempt limit: the
 * per-attempt timeout narrowed by the deadline) and a connect timeout, and
 * sends X-Timeout-Budget (the call's remaining time, when it has a
 * deadline) and, for a non-idempotent request, an Idempotency-Key (one per
 * logical call, the same on every attempt); under the thread's current
 * W3C trace (trace.h), traceparent with a new span id per attempt and
 * tracestate. The attempt is judged with
 * bw_curl_verdict; Retry-After (429, 503) and grpc-retry-pushback-ms are
 * read from the response headers and given to the retry as its hint.
 *
 * The helper owns these options of the handle while it runs:
 * CURLOPT_HTTPHEADER (give your request headers in the options' `headers`:
 * a list you set on the handle yourself is replaced), CURLOPT_WRITEFUNCTION
 * / WRITEDATA (the last attempt's body is in the result),
 * CURLOPT_HEADERFUNCTION / HEADERDATA, CURLOPT_TIMEOUT_MS,
 * CURLOPT_CONNECTTIMEOUT_MS and CURLOPT_NOSIGNAL (set to 1). On return
 * every one of them is back at libcurl's default (NOSIGNAL stays 1), so the
 * handle can be performed again, by this helper or by you. Everything else
 * (URL, method, POSTFIELDS, TLS, proxies) is yours and is left alone; an
 * upload through a CURLOPT_READFUNCTION must be rewindable
 * (CURLOPT_SEEKFUNCTION) for a retry to send it again.
 *
 * Library: breakwater_curl_easy (links the core and libcurl). Threads: the
 * helper blocks the calling thread; it is thread-safe as long as each
 * thread uses its own easy handle (libcurl's rule). libcurl is initialized
 * once per process (curl_global_init under pthread_once), never cleaned
 * up. */
#ifndef BREAKWATER_CURL_EASY_H
#define BREAKWATER_CURL_EASY_H

#include <curl/curl.h>

#include "clock.h"
#include "common.h"
#include "deadline.h"
#include "http.h"
#include "pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The response body kept per attempt: the first 64 KiB; the rest is read
 * and dropped (body_truncated). */
#define BW_CURL_BODY_MAX 65536

/* How a logical call ended. Filled by bw_curl_easy_perform and
 * bw_http_call, or passed to the multi driver's done callback (valid during
 * the callback only). */
typedef struct bw_curl_result_s {
  bw_failure_t failure;      /* NONE = success */
  bool cancelled;            /* ended by bw_curl_free (nothing else) */
  int status;                /* the last HTTP status received, 0 if none */
  bw_transport_t transport;  /* the last attempt's transport kind (NONE
                                when it got a response) */
  int curl_code;             /* the last attempt's CURLcode (0 if none) */
  bw_verdict_t last_verdict; /* the last attempt's verdict */
  int64_t retry_after_ms;    /* the last attempt's hint (or NONE/NEVER) */
  uint32_t attempts;         /* attempts the pipeline asked for */
  uint32_t network_attempts; /* attempts actually performed on the network
                                (an attempt with no time left makes none) */
  int64_t waited_ms;         /* sum of the pipeline's waits */
  int64_t latency_ns;        /* logical latency, on the driver's clock */
  char idempotency_key[37];  /* the key sent ("" if none) */
  const char *body;          /* the last response's body (up to max_body
                                bytes, NUL-terminated; "" if none). In the
                                done callback: valid during it only. From
                                bw_http_call and bw_curl_easy_perform: owned
                                by the caller, freed by bw_curl_result_clear */
  size_t body_len;
  bool body_truncated;
} bw_curl_result_t;

/* Sleeps ms milliseconds (the default is nanosleep; a test may record the
 * delays, or advance a manual clock). */
typedef void (*bw_curl_sleep_fn)(void *userdata, int64_t ms);

typedef struct bw_curl_easy_options_s {
  const struct curl_slist *headers; /* your request headers ("Name: value"),
                                       sent on every attempt before the
                                       helper's own; borrowed, NULL for none */
  bool idempotent;                  /* default true; false: an Idempotency-Key
                                       (one per logical call; with a retry in the
                                       pipeline it is the retry's key, which lets
                                       a non-idempotent policy retry) */
  bw_deadline_t outer;          /* default none: an outer deadline (a reading
                                   of `clock`), narrowed further by this
                                   thread's current deadline and the
                                   pipeline's deadline strategy */
  const bw_clock_t *clock;      /* the strategies' clock; default monotonic */
  const bw_clock_t *wall_clock; /* Retry-After dates, the key's timestamp;
                                   default realtime */
  int64_t connect_timeout_ms;   /* per attempt, also bounded by the attempt's
                                   limit; default 2000, >= 1 */
  uint32_t max_body;            /* bytes of body kept, 0..BW_CURL_BODY_MAX;
                                   default BW_CURL_BODY_MAX */
  uint64_t seed;                /* the key's randomness when the pipeline has
                                   no retry; 0 = from the OS */
  bw_curl_sleep_fn sleep;       /* default NULL: nanosleep */
  void *sleep_userdata;
} bw_curl_easy_options_t;

/* Fills the defaults (above). NULL is ignored. */
BW_EXTERN void bw_curl_easy_options_init(bw_curl_easy_options_t *opts);

/* Runs one logical call of the caller's `easy` handle through `pl`
 * (borrowed) with the default options, blocking the calling thread until
 * the pipeline is done. The call's deadline is the earliest of this thread's
 * current deadline (bw_deadline_current, on the monotonic clock) and the
 * pipeline's. Returns the failure kind (BW_FAILURE_NONE = success, >= 0)
 * with *result filled (result may be NULL; else release it with
 * bw_curl_result_clear), or a negative BW_E_*: BW_E_INVAL for NULL pl or
 * easy, BW_E_NOMEM, BW_E_IO (libcurl could not be initialized). See the
 * top of this header for the options the helper sets on the handle. */
BW_EXTERN int bw_curl_easy_perform(const bw_pipeline_t *pl, CURL *easy,
                                   bw_curl_result_t *result);
/* The same with options (NULL: the defaults). BW_E_INVAL also for
 * connect_timeout_ms < 1 or max_body above BW_CURL_BODY_MAX. */
BW_EXTERN int bw_curl_easy_perform_with(const bw_pipeline_t *pl, CURL *easy,
                                        const bw_curl_easy_options_t *opts,
                                        bw_curl_result_t *result);

/* Frees the body bw_http_call or bw_curl_easy_perform copied into *res and
 * sets it to "" (NULL is fine). */
BW_EXTERN void bw_curl_result_clear(bw_curl_result_t *res);

/* The transport kind of a CURLcode: CURLE_OK -> NONE; OPERATION_TIMEDOUT ->
 * TIMEOUT; COULDNT_CONNECT -> REFUSED; COULDNT_RESOLVE_HOST/PROXY -> DNS;
 * SSL_CONNECT_ERROR, PEER_FAILED_VERIFICATION, SSL_CERTPROBLEM, SSL_CIPHER,
 * SSL_CACERT_BADFILE -> TLS; GOT_NOTHING, SEND_ERROR, RECV_ERROR,
 * PARTIAL_FILE -> RESET; anything else -> OTHER. Pure; thread-safe. */
BW_EXTERN bw_transport_t bw_curl_transport(int curl_code);

/* The verdict of one libcurl attempt, as both curl drivers judge it:
 * bw_http_classify(status, bw_curl_transport(curl_code)), except that
 * UNSUPPORTED_PROTOCOL and URL_MALFORMAT are PERMANENT (a request libcurl
 * cannot express does not get better by retrying). Pure; thread-safe. */
BW_EXTERN bw_verdict_t bw_curl_verdict(int curl_code, int status);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_CURL_EASY_H */

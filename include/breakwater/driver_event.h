/* Component event: library libbreakwater_event, pkg-config module
 * breakwater-event, CMake target breakwater::event. */
/* breakwater — the libevent driver: runs pipeline calls (pipeline.h) on a
 * struct event_base. The driver does the waiting with evtimers; the attempts
 * are made by the caller's asynchronous code, which reports each one back.
 *
 *   bw_ev_t *drv = bw_ev_new(base, NULL, &err);       // monotonic clock
 *   bw_ev_ops_t ops = {.attempt = start_io, .abort = stop_io, .done = fin};
 *   bw_ev_call_start(drv, pipeline, &ops, ctx, bw_deadline_none(), NULL);
 *   event_base_dispatch(base);
 *   ...
 *   static void start_io(void *ctx, bw_ev_call_t *call,
 *                        const bw_pipeline_call_t *pc) {
 *     // begin the I/O within pc->attempt_timeout_ms; when it ends:
 *     //   bw_ev_call_report(call, verdict, retry_after_ms);
 *   }
 *
 * Library: breakwater_event (links libevent_core, and libevent_extra for
 * bw_ev_http_deadline). Calls are heap-allocated
 * per logical call (bw_malloc hooks) and freed when the call ends.
 *
 * Threads: a driver belongs to its event_base's thread. Every function here,
 * and every callback, runs on that thread; none is thread-safe. The
 * pipelines and the strategies inside them may be shared with other threads
 * and drivers as usual.
 *
 * Callbacks. `attempt` is called from bw_ev_call_start (first attempt) or
 * from the loop; a report made from inside it is processed on the next loop
 * iteration, never recursively. `done` is called exactly once per call,
 * always from the loop (never from inside bw_ev_call_start), or from
 * bw_ev_call_cancel / bw_ev_free with `cancelled` set. After `done` the call
 * handle is gone. `abort` is called when an attempt in progress is
 * abandoned (the driver's attempt timeout, a cancel, bw_ev_free): the caller
 * must stop its I/O and must not report that attempt. */
#ifndef BREAKWATER_DRIVER_EVENT_H
#define BREAKWATER_DRIVER_EVENT_H

#include "clock.h"
#include "common.h"
#include "deadline.h"
#include "pipeline.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct event_base;

typedef struct bw_ev_s bw_ev_t;
typedef struct bw_ev_call_s bw_ev_call_t;

typedef struct bw_ev_config_s {
  const bw_clock_t *clock; /* the strategies' clock; default
                              bw_clock_monotonic(). A manual clock works
                              for the pipeline's decisions, but the waits
                              themselves are real evtimers */
  bool handoff;            /* false (default): a call waiting for a slot of
                              a limit polls for it (the pipeline's poll_ms,
                              doubling up to 8 x). true: when an attempt of
                              this driver ends, its calls waiting for a slot
                              (bw_pipeline_slot_wait) ask again at once,
                              oldest first, until one is refused, so a freed
                              slot goes to the longest waiter instead of
                              idling until a poll; slots freed elsewhere
                              (other drivers, threads) are still found by
                              the poll. The lab's oracle over real HTTP
                              uses it */
} bw_ev_config_t;

/* How a call ended (valid during the done callback only). */
typedef struct bw_ev_result_s {
  bw_failure_t failure;      /* NONE = success (or cancelled before failing) */
  bool cancelled;            /* ended by bw_ev_call_cancel / bw_ev_free */
  bw_verdict_t last_verdict; /* the last reported verdict (OK if none) */
  uint32_t attempts;         /* attempts started (attempt callbacks made) */
  uint32_t timeouts;         /* attempts the driver timed out */
  int64_t waited_ms;         /* sum of the WAIT delays the pipeline asked */
  int64_t latency_ns;        /* begin to end, on the driver's clock */
  const bw_pipeline_call_t *call; /* the final pipeline call */
} bw_ev_result_t;

/* Starts one attempt: make it within pc->attempt_timeout_ms (-1: no limit)
 * and later call bw_ev_call_report(call, ...). pc is valid during the
 * callback only. */
typedef void (*bw_ev_attempt_fn)(void *userdata, bw_ev_call_t *call,
                                 const bw_pipeline_call_t *pc);
/* The attempt in progress is abandoned: stop its I/O, do not report it. */
typedef void (*bw_ev_abort_fn)(void *userdata, bw_ev_call_t *call);
/* The call ended (exactly once). res is valid during the callback only. */
typedef void (*bw_ev_done_fn)(void *userdata, const bw_ev_result_t *res);

typedef struct bw_ev_ops_s {
  bw_ev_attempt_fn attempt; /* required */
  bw_ev_abort_fn abort;     /* optional (required with driver_timeout) */
  bw_ev_done_fn done;       /* optional */
  bool driver_timeout;      /* true: an attempt that has not reported within
                               attempt_timeout_ms is aborted and counted as
                               TRANSIENT (a timeout) by the driver. false:
                               the caller enforces the limit itself (the
                               curl driver does, through libcurl) */
} bw_ev_ops_t;

typedef struct bw_ev_stats_s {
  uint64_t calls_started;   /* bw_ev_call_start successes */
  uint64_t calls_succeeded; /* ended with failure NONE, not cancelled */
  uint64_t calls_failed;    /* ended with a failure, not cancelled */
  uint64_t calls_cancelled; /* ended by cancel or free */
  uint64_t calls_in_progress;
  uint64_t attempts;         /* attempt callbacks made */
  uint64_t waits;            /* WAIT steps scheduled */
  uint64_t attempt_timeouts; /* attempts ended by the driver's timer */
} bw_ev_stats_t;

/* Fills the defaults (monotonic clock). NULL is ignored. */
BW_EXTERN void bw_ev_config_init(bw_ev_config_t *cfg);

/* Creates a driver on `base` (borrowed: it must outlive the driver). cfg
 * may be NULL (defaults). NULL with err set: BW_E_INVAL (base is NULL,
 * field "base"), BW_E_NOMEM. */
BW_EXTERN bw_ev_t *bw_ev_new(struct event_base *base, const bw_ev_config_t *cfg,
                             bw_error_t *err);

/* Frees a driver (NULL is fine). Calls in progress are cancelled first, in
 * start order: their attempt (if any) is aborted, bw_pipeline_cancel leaves
 * every strategy they entered (IGNORED), and their done callback runs with
 * cancelled = true. Do not start calls from those callbacks (refused with
 * BW_E_INVAL). Nothing leaks. */
BW_EXTERN void bw_ev_free(bw_ev_t *drv);

/* The driver's event_base and clock. */
BW_EXTERN struct event_base *bw_ev_base(const bw_ev_t *drv);
BW_EXTERN const bw_clock_t *bw_ev_clock(const bw_ev_t *drv);

/* Starts a logical call through pipeline `pl` (borrowed: it must outlive
 * the call) with an outer deadline (bw_deadline_none() for none; a reading
 * of the driver's clock). The first attempt may start from inside this
 * function; done is never called from inside it. *out (optional) receives
 * the handle, valid until done. BW_OK; BW_E_INVAL for NULL drv, pl, ops or
 * ops->attempt, for driver_timeout without abort, or while the driver is
 * being freed; BW_E_NOMEM. */
BW_EXTERN int bw_ev_call_start(bw_ev_t *drv, const bw_pipeline_t *pl,
                               const bw_ev_ops_t *ops, void *userdata,
                               bw_deadline_t outer, bw_ev_call_t **out);

/* Reports the attempt in progress: its verdict and hint (retry.h:
 * BW_RETRY_AFTER_NONE, _NEVER or a delay in ms). Processed on the next loop
 * iteration. BW_OK; BW_E_INVAL for a NULL call, a call with no attempt in
 * progress (already reported, aborted), a bad verdict or hint. */
BW_EXTERN int bw_ev_call_report(bw_ev_call_t *call, bw_verdict_t v,
                                int64_t retry_after_ms);
/* The attempt got no answer within its time: as bw_ev_call_report with
 * TRANSIENT and no hint, and the pipeline's limits learn it timed out
 * (bw_pipeline_report_timeout). Same errors as bw_ev_call_report. */
BW_EXTERN int bw_ev_call_report_timeout(bw_ev_call_t *call);

/* Cancels a call now: aborts its attempt (if any), bw_pipeline_cancel, and
 * runs its done callback with cancelled = true before returning (false
 * when the call had already ended and only its done was pending). The handle
 * is then gone. NULL is fine. Must not be called from the call's own
 * attempt or abort callback. */
BW_EXTERN void bw_ev_call_cancel(bw_ev_call_t *call);

/* The call's pipeline state (read only); NULL for NULL. */
BW_EXTERN const bw_pipeline_call_t *bw_ev_call_pipeline(
    const bw_ev_call_t *call);
/* bw_pipeline_attach_key on the call: its idempotency key (UUIDv7 from
 * unix_ms), the same on every call; NULL when the pipeline has no retry or
 * before the first attempt. Send it with every attempt. */
BW_EXTERN const char *bw_ev_call_attach_key(bw_ev_call_t *call,
                                            int64_t unix_ms);
/* The userdata given to bw_ev_call_start. */
BW_EXTERN void *bw_ev_call_userdata(const bw_ev_call_t *call);

/* Counters. NULL arguments are ignored. */
BW_EXTERN void bw_ev_stats(const bw_ev_t *drv, bw_ev_stats_t *out);

/* ---- a plain timer ----------------------------------------------------- */

typedef struct bw_ev_timer_s bw_ev_timer_t;
typedef void (*bw_ev_timer_fn)(void *userdata);

/* A one-shot timer on the driver's base, for callers that want the same
 * millisecond waits without touching libevent. NULL on NULL arguments or
 * out of memory. Free with bw_ev_timer_free (NULL-safe; also cancels). The
 * timer must be freed before the base. */
BW_EXTERN bw_ev_timer_t *bw_ev_timer_new(bw_ev_t *drv, bw_ev_timer_fn fn,
                                         void *userdata);
/* Arms (or re-arms) the timer to fire once in ms (>= 0). BW_E_INVAL for
 * NULL or a negative ms. */
BW_EXTERN int bw_ev_timer_start(bw_ev_timer_t *t, int64_t ms);
/* Disarms it (no-op if not armed). */
BW_EXTERN void bw_ev_timer_stop(bw_ev_timer_t *t);
BW_EXTERN bool bw_ev_timer_pending(const bw_ev_timer_t *t);
BW_EXTERN void bw_ev_timer_free(bw_ev_timer_t *t);

/* The inbound side of deadlines, for an evhttp server (libevent_extra):
 * the deadline of request `req` at now_ns, from its X-Timeout-Budget and
 * grpc-timeout headers (bw_deadline_from_header: the earlier of the two;
 * default_ms when neither is there or valid — BW_DEADLINE_DEFAULT_MS is
 * the asyncio toolkit's 10 s, a negative default_ms means none). Returns
 * BW_OK (a header set it), BW_E_NOTFOUND (no header: the default),
 * BW_E_INVAL (a malformed header: the default; or a NULL req, the default
 * too; or a NULL out, nothing set). In a handler that answers before it
 * returns, make it this thread's current deadline, which the pipelines and
 * the curl drivers' X-Timeout-Budget then follow:
 *   bw_deadline_t d;
 *   bw_ev_http_deadline(req, bw_clock_now(clk), BW_DEADLINE_DEFAULT_MS, &d);
 *   bw_deadline_t prev = bw_deadline_set(bw_deadline_min(
 *       bw_deadline_current(), d));
 *   if (bw_deadline_check(d, bw_clock_now(clk), BW_DEADLINE_MIN_CALL_MS)
 *       != BW_OK)
 *     ... answer 504 instead of calling further down ...
 *   bw_deadline_set(prev);
 * A handler that answers later passes d along instead (bw_curl_request_at,
 * bw_ev_call_start's outer). Reads the headers only; thread-safe as evhttp
 * requests are (the loop's thread). */
struct evhttp_request;
BW_EXTERN int bw_ev_http_deadline(struct evhttp_request *req, int64_t now_ns,
                                  int64_t default_ms, bw_deadline_t *out);

/* The inbound side of W3C Trace Context: the trace context of request `req`
 * from its traceparent and tracestate headers (bw_trace_from_headers: a
 * malformed traceparent is not trusted, an invalid tracestate is dropped).
 * BW_OK (out filled), BW_E_NOTFOUND (no traceparent: out untouched; start
 * one with bw_trace_start if you want one), BW_E_INVAL (malformed, NULL req
 * or out: out untouched). Make it the thread's current trace while the
 * handler runs, so the curl drivers send it on and events carry its id:
 *   bw_trace_t t;
 *   const bw_trace_t *prev = bw_trace_current();
 *   if (bw_ev_http_trace(req, &t) == BW_OK) prev = bw_trace_set(&t);
 *   ... handle the request ...
 *   bw_trace_set(prev); */
BW_EXTERN int bw_ev_http_trace(struct evhttp_request *req, bw_trace_t *out);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_DRIVER_EVENT_H */

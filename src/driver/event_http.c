/* breakwater — the inbound side of deadlines and trace context for evhttp
 * servers (driver_event.h: bw_ev_http_deadline, bw_ev_http_trace).
 * libevent_extra (evhttp). */
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "breakwater/driver_event.h"

int bw_ev_http_deadline(struct evhttp_request *req, int64_t now_ns,
                        int64_t default_ms, bw_deadline_t *out) {
  struct evkeyvalq *in;
  const char *budget = NULL, *grpc = NULL;
  if (out == NULL) return BW_E_INVAL;
  in = req != NULL ? evhttp_request_get_input_headers(req) : NULL;
  if (in == NULL) {
    bw_deadline_from_header(NULL, 0, NULL, 0, now_ns, default_ms, out);
    return BW_E_INVAL;
  }
  /* evhttp matches names case-insensitively; the first of each wins. */
  budget = evhttp_find_header(in, "X-Timeout-Budget");
  grpc = evhttp_find_header(in, "grpc-timeout");
  return bw_deadline_from_header(budget, budget != NULL ? strlen(budget) : 0,
                                 grpc, grpc != NULL ? strlen(grpc) : 0, now_ns,
                                 default_ms, out);
}

int bw_ev_http_trace(struct evhttp_request *req, bw_trace_t *out) {
  struct evkeyvalq *in;
  const char *tp, *ts;
  if (out == NULL) return BW_E_INVAL;
  in = req != NULL ? evhttp_request_get_input_headers(req) : NULL;
  if (in == NULL) return BW_E_INVAL;
  /* The first traceparent wins; a second tracestate line is not joined
   * (evhttp keeps them apart): the first is the one read. */
  tp = evhttp_find_header(in, "traceparent");
  ts = evhttp_find_header(in, "tracestate");
  return bw_trace_from_headers(tp, tp != NULL ? strlen(tp) : 0, ts,
                               ts != NULL ? strlen(ts) : 0, out);
}

/* Writes one JSON line of every event type to the file named by argv[1],
 * each emitted by the object that emits it in real use (the two Redis
 * events through the emission call the Redis component makes, since they
 * need a Redis outage). Names carry quotes, control characters and bytes
 * that are not UTF-8, and every event carries a context and a trace
 * (trace_id), so that
 * tests/check_event_lines.py can check with a real JSON parser and the
 * JSON Schema (docs/events.schema.json) that every line is valid whatever
 * the caller put into it. Exit 0 when every event type was written. */
#include <stdio.h>
#include <string.h>

#include "breakwater/breakwater.h"
#include "breakwater/ext.h"
#include "breakwater/store.h"

#define NAME(s) s "\"q\\ \x01\t\x80\xff end"

static int counts[BW_EV__COUNT];
static bw_sink_t *json;

static void count_and_write(const bw_event_t *ev, void *userdata) {
  (void)userdata;
  if (ev->type < BW_EV__COUNT) counts[ev->type]++;
  bw_sink_emit(json, ev);
}

static int fail(const char *what) {
  fprintf(stderr, "event_lines: %s\n", what);
  return 1;
}

int main(int argc, char **argv) {
  static const bw_kv_t kv[] = {{"request_id", "r-\x80\"1"},
                               {"name", "not the object's name"}};
  static const bw_context_t ctx = {kv, 2};
  bw_clock_t *clock = bw_clock_manual_new(BW_NS_PER_S);
  static bw_trace_t trace;
  bw_error_t err;
  bw_sink_t *sink;
  FILE *fp;
  int missing = 0;
  if (argc != 2) return fail("usage: event_lines OUT.jsonl");
  if ((fp = fopen(argv[1], "w")) == NULL) return fail("cannot open the output");
  json = bw_sink_json_new(fp, &err);
  sink = bw_sink_callback_new(count_and_write, NULL, &err);
  if (clock == NULL || json == NULL || sink == NULL) return fail("set-up");
  bw_context_set(&ctx);
  if (bw_trace_from_headers(
          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", 55, NULL,
          0, &trace) != BW_OK)
    return fail("trace");
  bw_trace_set(&trace);

  { /* breaker: every transition, a rejection summary, metrics-only */
    bw_breaker_config_t c;
    bw_breaker_t *b;
    bw_permit_t p;
    bw_breaker_config_init(&c);
    c.name = NAME("breaker");
    c.failure_threshold = 1;
    c.clock = clock;
    c.sink = sink;
    if ((b = bw_breaker_new(&c, &err)) == NULL) return fail(err.message);
    bw_breaker_acquire(b, &p);
    bw_breaker_release(b, &p, BW_FAILURE); /* opened */
    bw_breaker_acquire(b, &p);             /* rejected */
    bw_clock_manual_advance(clock, c.break_ms * BW_NS_PER_MS);
    bw_breaker_acquire(b, &p);             /* summary, half-opened */
    bw_breaker_release(b, &p, BW_SUCCESS); /* closed */
    bw_breaker_isolate(b);
    bw_breaker_disable(b);
    bw_breaker_reset(b);
    bw_breaker_set_metrics_only(b, true);
    bw_breaker_free(b);
  }
  { /* retry: scheduled, then gave up */
    bw_retry_config_t c;
    bw_retry_policy_t *pol;
    bw_retry_t r;
    int64_t delay;
    bw_retry_config_init(&c);
    c.name = NAME("retry");
    c.max_attempts = 2;
    c.sink = sink;
    if ((pol = bw_retry_policy_new(&c, &err)) == NULL) return fail(err.message);
    bw_retry_begin(&r, pol, 0);
    bw_retry_next(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, 0, &delay);
    bw_retry_next(&r, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE, delay, &delay);
    bw_retry_policy_free(pol);
  }
  { /* gauge: a regime change */
    bw_gauge_config_t c;
    bw_gauge_t *g;
    bw_gauge_config_init(&c);
    c.name = NAME("gauge");
    c.clock = clock;
    c.sink = sink;
    if ((g = bw_gauge_new(&c, &err)) == NULL) return fail(err.message);
    bw_gauge_update(g, 0.95);
    bw_gauge_free(g);
  }
  { /* degradation: a forced level change */
    bw_degrade_config_t c;
    bw_degrade_t *d;
    bw_degrade_config_init(&c);
    c.name = NAME("degrade");
    c.clock = clock;
    c.sink = sink;
    if ((d = bw_degrade_new(&c, &err)) == NULL) return fail(err.message);
    bw_degrade_force_down_to(d, 2);
    bw_degrade_free(d);
  }
  { /* memory queue: a warning, then a refusal to the dead-letter queue */
    bw_queue_store_config_t c;
    bw_queue_store_t *q;
    uint64_t id;
    bw_queue_store_config_init(&c);
    c.name = NAME("queue");
    c.max_size = 2;
    c.sink = sink;
    if ((q = bw_mem_queue_new(&c, &err)) == NULL) return fail(err.message);
    bw_queue_store_enqueue(q, "a", 1, &id);
    bw_queue_store_enqueue(q, "b", 1, &id);
    bw_queue_store_enqueue(q, "c", 1, &id);
    bw_queue_store_free(q);
  }
  { /* limiter: a drop lowers the limit; a refusal at the limit is
       summarised when it is freed */
    bw_limiter_config_t c;
    bw_limiter_t *l;
    bw_permit_t p, p2, q;
    bw_limiter_config_init(&c);
    c.name = NAME("limiter");
    c.clock = clock;
    c.sink = sink;
    c.initial_limit = 2;
    if ((l = bw_limiter_new(&c, &err)) == NULL) return fail(err.message);
    bw_limiter_try_acquire(l, &p);
    bw_limiter_try_acquire(l, &p2);
    bw_limiter_try_acquire(l, &q);               /* rejected */
    bw_limiter_release(l, &p, BW_LIMIT_DROPPED); /* 2 -> 1 */
    bw_limiter_release(l, &p2, BW_LIMIT_IGNORED);
    bw_limiter_free(l);
  }
  { /* bounded priority queue: a refusal with the queue full, summarised
       when it is freed */
    bw_queue_config_t c;
    bw_queue_t *q;
    int item = 0;
    bw_queue_config_init(&c);
    c.name = NAME("priority_queue");
    c.max_size = 1;
    c.clock = clock;
    c.sink = sink;
    if ((q = bw_queue_new(&c, &err)) == NULL) return fail(err.message);
    bw_queue_enqueue(q, &item, 0, BW_QUEUE_NO_DEADLINE, NULL);
    bw_queue_enqueue(q, &item, 0, BW_QUEUE_NO_DEADLINE, NULL); /* full */
    bw_queue_free(q);
  }
  { /* bulkhead: a refusal, summarised when it is freed */
    bw_bulkhead_config_t c;
    bw_bulkhead_t *bh;
    bw_permit_t p, q;
    bw_bulkhead_config_init(&c);
    c.name = NAME("bulkhead");
    c.max_concurrent = 1;
    c.clock = clock;
    c.sink = sink;
    if ((bh = bw_bulkhead_new(&c, &err)) == NULL) return fail(err.message);
    bw_bulkhead_try_acquire(bh, &p);
    bw_bulkhead_try_acquire(bh, &q); /* rejected */
    bw_bulkhead_release(bh, &p);
    bw_bulkhead_free(bh);
  }
  { /* rate limiter: a refusal, summarised when it is freed */
    bw_ratelimit_config_t c;
    bw_ratelimit_t *rl;
    bw_ratelimit_config_init(&c);
    c.name = NAME("ratelimit");
    c.clock = clock;
    c.sink = sink;
    if ((rl = bw_ratelimit_new(&c, &err)) == NULL) return fail(err.message);
    bw_ratelimit_try_acquire(rl, NULL);
    bw_ratelimit_try_acquire(rl, NULL); /* refused */
    bw_ratelimit_free(rl);
  }
  { /* throttle: K = 1, every request rejected, until one is refused here;
     * summarised when it is freed */
    bw_throttle_config_t c;
    bw_throttle_t *t;
    bw_strategy_if_t *s;
    int refused = 0;
    bw_throttle_config_init(&c);
    c.name = NAME("throttle");
    c.k = 1.0;
    c.seed = 5;
    c.clock = clock;
    c.sink = sink;
    if ((t = bw_throttle_new(&c, &err)) == NULL) return fail(err.message);
    s = bw_throttle_strategy(t);
    for (int i = 0; i < 64; i++) {
      bw_permit_t p;
      bw_deadline_t d = bw_deadline_none();
      int64_t timeout = -1;
      bw_strategy_ctx_t sc = {&p, &d, &timeout, bw_clock_now(clock),
                              0,  0,  false};
      bw_refusal_t r = {BW_FAILURE_NONE, 0, false};
      refused = s->vt->enter(s, &sc, bw_clock_now(clock), &r) != BW_OK;
      if (refused) break;
      sc.attempt = 1; /* it went out, and the partner shed it */
      s->vt->leave(s, &sc, BW_FAILURE);
    }
    bw_throttle_free(t);
    if (!refused) return fail("the throttle refused nothing");
  }
  { /* retry budget: a refused retry, summarised when it is freed */
    bw_budget_config_t c;
    bw_budget_t *bu;
    bw_budget_config_init(&c);
    c.name = NAME("budget");
    c.max_tokens = 1;
    c.token_ratio = 0.1;
    c.clock = clock;
    c.sink = sink;
    if ((bu = bw_budget_new(&c, &err)) == NULL) return fail(err.message);
    bw_budget_on_failure(bu);
    bw_budget_try_retry(bu); /* refused */
    bw_budget_free(bu);
  }
  { /* stage: a full queue raises the regime (a regime change); a refusal
       with the queue full, summarised when it is freed */
    bw_stage_config_t c;
    bw_stage_t *st;
    bw_stage_result_t res;
    int item = 0;
    bw_stage_config_init(&c);
    c.name = NAME("stage");
    c.queue_size = 1;
    c.concurrency = 1;
    c.clock = clock;
    c.sink = sink;
    if ((st = bw_stage_new(&c, &err)) == NULL) return fail(err.message);
    bw_stage_item_t it;
    bw_stage_submit(st, &item, 0, BW_QUEUE_NO_DEADLINE, &res);
    bw_stage_next(st, &it); /* in flight: pressure 1/2 */
    bw_stage_submit(st, &item, 0, BW_QUEUE_NO_DEADLINE, &res); /* 2/2 */
    bw_stage_submit(st, &item, 0, BW_QUEUE_NO_DEADLINE, &res); /* full */
    bw_stage_free(st);
  }
  { /* pipeline: a call that gives up */
    bw_pipeline_config_t c;
    bw_pipeline_t *pl;
    bw_pipeline_call_t call;
    bw_pipeline_config_init(&c);
    c.name = NAME("pipeline");
    c.sink = sink;
    if ((pl = bw_pipeline_new(&c, &err)) == NULL) return fail(err.message);
    bw_pipeline_begin(pl, &call, bw_clock_now(clock));
    bw_pipeline_report(&call, BW_VERDICT_TRANSIENT, BW_RETRY_AFTER_NONE,
                       bw_clock_now(clock));
    bw_pipeline_free(pl);
  }
  { /* registry: an idle breaker evicted */
    bw_registry_config_t c;
    bw_registry_t *reg;
    bw_breaker_t *b;
    bw_registry_config_init(&c);
    c.clock = clock;
    c.sink = sink;
    c.idle_evict_ms = 1;
    if ((reg = bw_registry_new(&c, &err)) == NULL) return fail(err.message);
    if ((b = bw_registry_breaker(reg, NAME("registry"), &err)) == NULL)
      return fail(err.message);
    bw_registry_put(reg, b);
    bw_clock_manual_advance(clock, 10 * BW_NS_PER_MS);
    bw_registry_evict_idle(reg);
    bw_registry_free(reg);
  }
  { /* alert: a rule that fires and resolves */
    bw_alert_config_t c;
    bw_alert_t *a;
    bw_alert_config_init(&c);
    c.name = NAME("alert");
    c.n = 1;
    c.m = 1;
    c.window_ms = 1000;
    c.clock = clock;
    c.sink = sink;
    if ((a = bw_alert_new(&c, &err)) == NULL) return fail(err.message);
    bw_alert_observe(a, BW_EV_CIRCUIT_OPENED, "x", bw_clock_now(clock));
    bw_alert_advance(a, bw_clock_now(clock) + 2 * BW_NS_PER_S); /* both */
    bw_alert_free(a);
  }
  /* Redis: an outage and its end, as the Redis component emits them. */
  bw_event_emit(sink, NULL, 0, BW_EV_REDIS_UNAVAILABLE, NAME("redis"),
                "Connection refused", NULL, 0, NULL);
  bw_event_emit(sink, NULL, 0, BW_EV_REDIS_RESTORED, NAME("redis"),
                "redis is reachable again", NULL, 0, NULL);

  bw_context_set(NULL);
  bw_trace_set(NULL);
  for (int t = 0; t < BW_EV__COUNT; t++) {
    if (counts[t] == 0) {
      fprintf(stderr, "event_lines: no %s event was written\n",
              bw_event_type_name((bw_event_type_t)t));
      missing++;
    }
  }
  bw_sink_free(sink);
  bw_sink_free(json);
  fclose(fp);
  bw_clock_free(clock);
  return missing == 0 ? 0 : 1;
}

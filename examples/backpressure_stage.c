/* backpressure_stage — the backpressure article's backpressure stage on a
 * manual clock: a producer at twice the service rate, the regime moving normal
 * -> degraded
 * -> critical, refusals that say when to come back, and a batch producer
 * that shrinks its chunks.
 *
 * One stage (a queue of 100, one item in service at a time) serves 100
 * items a second: each takes 10 ms. Two producers feed it for 2 s:
 *   - online requests, 200 a second (twice the service rate), with
 *     priorities 0..9 in turn (smaller = more urgent);
 *   - a batch job that asks bw_stage_batch_plan every 100 ms how much to
 *     send: its full chunk (10) in normal, a quarter (2) in degraded,
 *     nothing in critical, where it pauses for the wait the plan names.
 * In degraded the stage refuses priorities above 5, in critical above 1;
 * every refusal carries retry_after_ms, computed from the backlog and the
 * measured service rate. The backlog then swings between degraded and
 * critical instead of overflowing; once the producers stop, it drains back
 * to normal. The clock moves 1 ms at a time; instant and identical on every
 * run.
 *
 *   backpressure_stage
 */
#include <inttypes.h>
#include <stdio.h>

#include "breakwater/breakwater.h"
#include "breakwater/stage.h"

#define SERVICE_MS 10     /* 100 items a second */
#define ONLINE_EVERY_MS 5 /* 200 a second: twice the service rate */
#define BATCH_EVERY_MS 100
#define PRODUCE_MS 2000
#define RUN_MS 3500

int main(void) {
  static int work; /* every item points here: the example has no payload */
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_stage_config_t sc;
  bw_batch_config_t bc;
  bw_stage_stats_t s;
  bw_stage_t *st;
  bw_stage_item_t item;
  bw_error_t err;
  bool busy = false;
  int64_t busy_until = 0, batch_paused_until = 0;
  int64_t ra_min = INT64_MAX, ra_max = 0;
  uint64_t online = 0, batch_sent = 0, chunks = 0;
  uint32_t last_chunk = 0;
  double busy_rate = 0; /* the service rate as the producers stop */
  bw_regime_t regime = BW_REGIME_NORMAL;

  if (clock == NULL) return 1;
  bw_stage_config_init(&sc);
  sc.name = "checkout";
  sc.queue_size = 100;
  sc.concurrency = 1;
  sc.priority_levels = 10;
  sc.rate_window_ms = 200; /* a rate measured within the first 200 ms */
  sc.clock = clock;        /* gauge: 0.6 / 0.85, hysteresis 0.1, 5 / 1 */
  st = bw_stage_new(&sc, &err);
  if (st == NULL) {
    fprintf(stderr, "backpressure_stage: %s\n", err.message);
    bw_clock_free(clock);
    return 1;
  }
  bw_batch_config_init(&bc);
  bc.chunk_size = 10;
  bc.degraded_fraction = 0.25;

  printf(
      "service %d items/s; online producer %d/s for %d s; batch job "
      "chunk %u every %d ms\n",
      1000 / SERVICE_MS, 1000 / ONLINE_EVERY_MS, PRODUCE_MS / 1000,
      bc.chunk_size, BATCH_EVERY_MS);
  for (int64_t t = 0; t < RUN_MS; t++) {
    bw_clock_manual_set(clock, t * BW_NS_PER_MS);
    if (t == PRODUCE_MS) busy_rate = bw_stage_service_rate(st);
    /* The server: finish the item in service, start the next. */
    if (busy && t >= busy_until) {
      bw_stage_done(st, &item, BW_STAGE_PROCESSED);
      busy = false;
    }
    if (!busy && bw_stage_next(st, &item) == BW_OK) {
      busy = true;
      busy_until = t + SERVICE_MS;
    }
    /* The online producer: one request every 5 ms, priorities 0..9. */
    if (t < PRODUCE_MS && t % ONLINE_EVERY_MS == 0) {
      bw_stage_result_t r;
      bw_stage_submit(st, &work, (uint32_t)(online++ % 10),
                      BW_QUEUE_NO_DEADLINE, &r);
      if (r.outcome == BW_QUEUE_REJECTED) {
        if (r.retry_after_ms < ra_min) ra_min = r.retry_after_ms;
        if (r.retry_after_ms > ra_max) ra_max = r.retry_after_ms;
      }
    }
    /* The batch job: a planned chunk every 100 ms, or a pause. */
    if (t < PRODUCE_MS && t % BATCH_EVERY_MS == 0 && t >= batch_paused_until) {
      bw_batch_plan_t plan;
      bw_stage_batch_plan(st, &bc, &plan, NULL);
      if (plan.chunk != last_chunk)
        printf("t=%5.3f s  batch chunk %u -> %u%s\n", (double)t / 1000,
               last_chunk, plan.chunk, plan.chunk == 0 ? " (paused)" : "");
      last_chunk = plan.chunk;
      if (plan.chunk == 0) batch_paused_until = t + plan.wait_ms;
      for (uint32_t i = 0; i < plan.chunk; i++) {
        bw_stage_result_t r;
        bw_stage_submit(st, &work, 3, BW_QUEUE_NO_DEADLINE, &r);
        batch_sent += r.outcome != BW_QUEUE_REJECTED;
      }
      chunks++;
    }
    /* The regime, fed with the current pressure: print each change. */
    bw_regime_t now = bw_stage_regime(st);
    if (now != regime) {
      printf(
          "t=%5.3f s  %-8s -> %-8s pressure %.2f, a refusal now says "
          "retry after %" PRId64 " ms\n",
          (double)t / 1000, bw_regime_name(regime), bw_regime_name(now),
          bw_stage_effective_pressure(st), bw_stage_retry_after_ms(st));
      regime = now;
    }
  }
  if (busy) bw_stage_done(st, &item, BW_STAGE_PROCESSED);

  bw_stage_stats(st, &s);
  printf("submitted %" PRIu64 ": admitted %" PRIu64 ", refused %" PRIu64
         " (%" PRIu64 " by the regime's ceiling, %" PRIu64 " queue full)\n",
         s.submitted, s.admitted, s.rejected, s.rejected_ceiling,
         s.rejected_full);
  printf("refusals said: retry after %" PRId64 "..%" PRId64
         " ms; the batch job sent %" PRIu64 " items in %" PRIu64 " chunks\n",
         s.rejected > 0 ? ra_min : 0, ra_max, batch_sent, chunks);
  printf("processed %" PRIu64
         ", queued %u, max queue %u; measured service "
         "rate %.0f/s at t=%d s\n",
         s.processed, s.queued, s.max_queue_seen, busy_rate, PRODUCE_MS / 1000);
  printf("time normal %.2f s, degraded %.2f s, critical %.2f s\n",
         (double)s.time_in_regime_ns[BW_REGIME_NORMAL] / 1e9,
         (double)s.time_in_regime_ns[BW_REGIME_DEGRADED] / 1e9,
         (double)s.time_in_regime_ns[BW_REGIME_CRITICAL] / 1e9);
  bw_stage_free(st);
  bw_clock_free(clock);
  return 0;
}

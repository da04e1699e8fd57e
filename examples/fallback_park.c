/* fallback_park — the tenacity article, scenario 2, on a manual clock: a
 * fallback that parks the work, and a reprocessor that replays it once the
 * dependency is healthy again. Nothing is lost.
 *
 * An order service sends one notification a second for 60 s. The
 * notification provider is down from t = 5 s to t = 30 s. Each send goes
 * through a pipeline with the breaker OUTSIDE the retry (one logical call
 * counts once: 3 failed calls open it) and the "tenacity" retry preset
 * (3 attempts, 0.5 s then 1 s, no jitter). When a send fails — the retries
 * ran out, or the breaker was open and nothing was tried — the pipeline's
 * fallback, bw_park_fallback, parks the notification in a memory queue.
 * Every 5 s a reprocessor step replays the parked ones, but only while the
 * breaker is CLOSED: during the outage it stays paused (it would only feed
 * the failing provider); once a live send's probe has closed the breaker
 * after the provider is back, it drains the backlog. Every breaker change
 * and every reprocessor step that did something is printed; the summary
 * checks parked = reprocessed. Instant and identical on every run.
 *
 *   fallback_park
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "breakwater/breakwater.h"
#include "breakwater/pipeline.h"
#include "breakwater/store.h"

#define SEND_EVERY_MS 1000
#define RUN_MS (60 * 1000)
#define DOWN_FROM_MS (5 * 1000)
#define DOWN_TO_MS (30 * 1000)
#define REPROCESS_EVERY_MS 5000

static bw_clock_t *clock_;
static int64_t t0_ns;
static uint64_t delivered_live, delivered_replayed, provider_calls;

static int64_t now_ms(void) {
  return (bw_clock_now(clock_) - t0_ns) / BW_NS_PER_MS;
}

/* The notification provider: up or down by the clock. */
static bool provider_up(void) {
  int64_t t = now_ms();
  provider_calls++;
  return t < DOWN_FROM_MS || t >= DOWN_TO_MS;
}

/* The reprocessor's replay of one parked notification (bw_reprocess_fn). */
static int replay(void *userdata, const bw_stored_item_t *item) {
  (void)userdata;
  (void)item;
  if (!provider_up()) return BW_E_IO; /* nacked, tried again later */
  delivered_replayed++;
  return BW_OK;
}

/* Sends one notification through the pipeline, driving its steps on the
 * manual clock (a WAIT moves the clock). Returns the failure kind. */
static bw_failure_t send(const bw_pipeline_t *pl, int n) {
  char body[32];
  bw_park_work_t work;
  bw_pipeline_call_t c;
  int step;

  snprintf(body, sizeof(body), "notification #%d", n);
  work.data = body; /* what the fallback parks if the call fails */
  work.len = strlen(body);
  c.user = &work;
  step = bw_pipeline_begin(pl, &c, bw_clock_now(clock_));
  while (step == BW_STEP_ATTEMPT || step == BW_STEP_WAIT) {
    if (step == BW_STEP_WAIT) {
      bw_clock_manual_advance(clock_, c.delay_ms * BW_NS_PER_MS);
      step = bw_pipeline_resume(&c, bw_clock_now(clock_));
    } else {
      bw_verdict_t v = provider_up() ? BW_VERDICT_OK : BW_VERDICT_TRANSIENT;
      step =
          bw_pipeline_report(&c, v, BW_RETRY_AFTER_NONE, bw_clock_now(clock_));
    }
  }
  if (c.failure == BW_FAILURE_NONE) delivered_live++;
  return c.failure;
}

int main(void) {
  bw_breaker_config_t bc;
  bw_retry_config_t rc;
  bw_queue_store_config_t qc;
  bw_pipeline_config_t pc;
  bw_reprocessor_config_t rpc;
  bw_breaker_t *breaker = NULL;
  bw_retry_policy_t *retry = NULL;
  bw_queue_store_t *parked = NULL;
  bw_pipeline_t *pl = NULL;
  bw_reprocessor_t *rp = NULL;
  bw_reprocessor_stats_t rs;
  bw_queue_store_stats_t qs;
  bw_state_t last_state = BW_CLOSED;
  uint64_t parked_total = 0, sends = 0;
  bw_error_t err;
  int status = 1;

  memset(&err, 0, sizeof(err));
  if ((clock_ = bw_clock_manual_new(0)) == NULL) return 1;
  t0_ns = bw_clock_now(clock_);

  bw_breaker_config_init(&bc);
  bc.name = "notifications";
  bc.failure_threshold = 3; /* consecutive failed calls */
  bc.break_ms = 10000;
  bc.clock = clock_;
  bw_retry_config_preset(&rc, "tenacity");
  bw_queue_store_config_init(&qc);
  qc.name = "parked_notifications";
  qc.max_size = 1000;
  qc.clock = clock_;
  if ((breaker = bw_breaker_new(&bc, &err)) == NULL ||
      (retry = bw_retry_policy_new(&rc, &err)) == NULL ||
      (parked = bw_mem_queue_new(&qc, &err)) == NULL)
    goto out;

  bw_pipeline_config_init(&pc);
  pc.name = "send_notification";
  bw_pipeline_add_breaker(&pc, breaker); /* outside: one call counts once */
  bw_pipeline_add_retry(&pc, retry);
  bw_pipeline_add_timeout(&pc, 2000);
  pc.fallback = bw_park_fallback;
  pc.fallback_userdata = parked;
  if ((pl = bw_pipeline_new(&pc, &err)) == NULL) goto out;

  bw_reprocessor_config_init(&rpc);
  rpc.queue = parked;
  rpc.breaker = breaker; /* drain only while CLOSED */
  rpc.fn = replay;
  rpc.batch = 50;
  if ((rp = bw_reprocessor_new(&rpc, &err)) == NULL) goto out;

  printf("provider down from t=%d s to t=%d s; one notification a second\n",
         DOWN_FROM_MS / 1000, DOWN_TO_MS / 1000);
  for (int64_t next_send = 0, next_step = REPROCESS_EVERY_MS;
       next_send < RUN_MS;) {
    bw_state_t st;
    /* Whichever comes first: the next send or the next reprocessor step. */
    if (next_step <= next_send) {
      size_t done = 0;
      int64_t wait = next_step - now_ms();
      if (wait > 0) bw_clock_manual_advance(clock_, wait * BW_NS_PER_MS);
      int rc_step = bw_reprocessor_step(rp, &done);
      bw_reprocessor_stats(rp, &rs);
      if (rc_step == BW_OK && done > 0)
        printf(
            "t=%5.1f s  reprocessor replayed %zu parked notifications "
            "(backlog now %" PRIu64 ")\n",
            (double)now_ms() / 1000, done, rs.backlog);
      else if (rc_step == BW_E_OPEN)
        printf(
            "t=%5.1f s  reprocessor paused: breaker not closed (backlog "
            "%" PRIu64 ")\n",
            (double)now_ms() / 1000, rs.backlog);
      next_step += REPROCESS_EVERY_MS;
    } else {
      int64_t wait = next_send - now_ms();
      if (wait > 0) bw_clock_manual_advance(clock_, wait * BW_NS_PER_MS);
      bw_failure_t f = send(pl, (int)(next_send / SEND_EVERY_MS));
      sends++;
      if (f != BW_FAILURE_NONE) parked_total++;
      next_send += SEND_EVERY_MS;
    }
    st = bw_breaker_state(breaker);
    if (st != last_state) {
      printf("t=%5.1f s  breaker %s -> %s\n", (double)now_ms() / 1000,
             bw_state_name(last_state), bw_state_name(st));
      last_state = st;
    }
  }
  /* A last step drains whatever the final sends parked. */
  bw_reprocessor_step(rp, NULL);

  bw_reprocessor_stats(rp, &rs);
  bw_queue_store_stats(parked, &qs);
  printf("%" PRIu64 " notifications: %" PRIu64 " delivered at once, %" PRIu64
         " parked by the fallback\n",
         sends, delivered_live, parked_total);
  printf("reprocessor: %" PRIu64 " replayed, %" PRIu64
         " failed replays, %" PRIu64 " paused steps; backlog %" PRIu64
         ", dead letters %" PRIu64 "\n",
         rs.processed, rs.failed, rs.paused, rs.backlog, rs.dlq_depth);
  printf("provider calls %" PRIu64 "; nothing lost: parked %" PRIu64
         " = reprocessed %" PRIu64 " -> %s\n",
         provider_calls, qs.enqueued, rs.processed,
         qs.enqueued == rs.processed && rs.backlog == 0 &&
                 delivered_live + delivered_replayed == sends
             ? "yes"
             : "NO");
  status = qs.enqueued == rs.processed && rs.backlog == 0 ? 0 : 1;
out:
  if (err.message[0] != '\0')
    fprintf(stderr, "fallback_park: %s\n", err.message);
  bw_reprocessor_free(rp);
  bw_pipeline_free(pl);
  bw_queue_store_free(parked);
  bw_retry_policy_free(retry);
  bw_breaker_free(breaker);
  bw_clock_free(clock_);
  return status;
}

/* bench_stage — a simulated overload in virtual time, with and without the
 * backpressure stage (the backpressure article's argument, in numbers).
 *
 * A manual clock stepped by 1 ms. One consumer serves an item in 10 ms
 * (100 per s); the producer offers one item every 5 ms (200 per s: twice
 * the service rate) for 60 s, open loop (a refused item is not offered
 * again: the numbers show the stage's decisions, not a retry policy). One
 * item in five is interactive (priority 1), the rest batch (priority 7).
 * Every item is worth something only within 2 s of its arrival: a
 * completion after that is stale — work paid for and thrown away.
 *
 *   unbounded  a plain FIFO that accepts everything (the queue the backpressure
 * article warns about): memory and staleness grow without end. stage bw_stage,
 * queue 100, concurrency 1, default gauge (degraded 0.6, critical 0.85,
 * ceilings all / 5 / 1), deadlines on the items (expired ones are dropped at
 * next(), never served). stage-flat the same stage with every ceiling at "admit
 * all": only the queue's bound refuses, so the stage sits in critical.
 *
 * Then a row of ns per submit+next+done on one thread with the monotonic
 * clock (the stage's own cost, mutex included).
 *
 *   build/bench/bench_stage
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakwater/breakwater.h"
#include "bench_util.h"
#include "breakwater/stage.h"

#define MS BW_NS_PER_MS
#define SECONDS 60
#define ARRIVAL_MS 5
#define SERVICE_MS 10
#define DEADLINE_MS 2000
#define QSIZE 100

typedef struct row_s {
  const char *mode;
  uint64_t offered, admitted, refused, shed, expired, processed, stale;
  uint64_t max_queue;
  double critical_s, degraded_s;
  double mean_retry_ms;
  int64_t max_retry_ms;
  uint64_t interactive_served, interactive_offered;
} row_t;

static uint32_t prio_of(uint64_t n) {
  return n % 5 == 0 ? 1u : 7u;
}

/* ---- without the stage: an unbounded FIFO ------------------------------ */

typedef struct fifo_item_s {
  int64_t arrival_ms;
  uint32_t prio;
} fifo_item_t;

static void run_unbounded(row_t *row) {
  size_t cap = 1024, head = 0, tail = 0;
  fifo_item_t *q = malloc(cap * sizeof(*q));
  int64_t busy_until = -1;
  fifo_item_t cur = {0, 0};
  memset(row, 0, sizeof(*row));
  row->mode = "unbounded";
  if (q == NULL) abort();
  for (int64_t t = 0; t < SECONDS * 1000; t++) {
    if (busy_until >= 0 && t >= busy_until) {
      row->processed++;
      if (t - cur.arrival_ms >= DEADLINE_MS)
        row->stale++;
      else if (cur.prio == 1)
        row->interactive_served++;
      busy_until = -1;
    }
    if (t % ARRIVAL_MS == 0) {
      if (tail == cap) {
        cap *= 2;
        q = realloc(q, cap * sizeof(*q));
        if (q == NULL) abort();
      }
      q[tail].arrival_ms = t;
      q[tail].prio = prio_of(row->offered);
      if (q[tail].prio == 1) row->interactive_offered++;
      tail++;
      row->offered++;
      row->admitted++;
      if (tail - head > row->max_queue) row->max_queue = tail - head;
    }
    if (busy_until < 0 && head < tail) {
      cur = q[head++];
      busy_until = t + SERVICE_MS;
    }
  }
  free(q);
}

/* ---- with the stage ------------------------------------------------------ */

static void run_stage(row_t *row, bool flat) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_stage_config_t cfg;
  bw_stage_t *s;
  bw_error_t err;
  bw_stage_item_t cur;
  bw_stage_stats_t st;
  int64_t busy_until = -1;
  double retry_sum = 0;
  memset(row, 0, sizeof(*row));
  row->mode = flat ? "stage-flat" : "stage";
  bw_stage_config_init(&cfg);
  cfg.name = "bench";
  cfg.queue_size = QSIZE;
  cfg.concurrency = 1;
  cfg.clock = clock;
  cfg.retry_jitter = 0.2;
  cfg.seed = 1;
  if (flat) { /* no priority ceilings: only the queue's bound refuses */
    cfg.gauge.ceiling[BW_REGIME_DEGRADED] = BW_GAUGE_ADMIT_ALL;
    cfg.gauge.ceiling[BW_REGIME_CRITICAL] = BW_GAUGE_ADMIT_ALL;
  }
  s = bw_stage_new(&cfg, &err);
  if (s == NULL) {
    fprintf(stderr, "bw_stage_new: %s\n", err.message);
    exit(1);
  }
  for (int64_t t = 0; t < SECONDS * 1000; t++) {
    int64_t now = bw_clock_now(clock);
    if (busy_until >= 0 && t >= busy_until) {
      if (now < cur.deadline_ns && cur.priority == 1) row->interactive_served++;
      bw_stage_done(s, &cur, BW_STAGE_PROCESSED);
      busy_until = -1;
    }
    if (t % ARRIVAL_MS == 0) {
      bw_stage_result_t r;
      uint32_t prio = prio_of(row->offered);
      row->offered++;
      if (prio == 1) row->interactive_offered++;
      if (bw_stage_submit(s, NULL, prio, now + DEADLINE_MS * MS, &r) ==
          BW_QUEUE_REJECTED) {
        retry_sum += (double)r.retry_after_ms;
        if (r.retry_after_ms > row->max_retry_ms)
          row->max_retry_ms = r.retry_after_ms;
      }
    }
    if (busy_until < 0) {
      int rc = bw_stage_next(s, &cur);
      if (rc == BW_OK) busy_until = t + SERVICE_MS;
    }
    bw_clock_manual_advance(clock, MS);
  }
  bw_stage_stats(s, &st);
  row->admitted = st.admitted;
  row->refused = st.rejected;
  row->shed = st.shed;
  row->expired = st.expired;
  row->processed = st.processed;
  row->stale = st.stale;
  row->max_queue = st.max_queue_seen;
  row->critical_s = (double)st.time_in_regime_ns[BW_REGIME_CRITICAL] / 1e9;
  row->degraded_s = (double)st.time_in_regime_ns[BW_REGIME_DEGRADED] / 1e9;
  row->mean_retry_ms = st.rejected ? retry_sum / (double)st.rejected : 0;
  if (busy_until >= 0) bw_stage_done(s, &cur, BW_STAGE_FAILED);
  bw_stage_free(s);
  bw_clock_free(clock);
}

static double ns_per_cycle(void) {
  bw_stage_config_t cfg;
  bw_stage_t *s;
  bw_stage_result_t r;
  bw_stage_item_t it;
  double best = 1e30;
  bw_stage_config_init(&cfg);
  cfg.name = "hot";
  cfg.queue_size = 1024;
  cfg.concurrency = 4;
  s = bw_stage_new(&cfg, NULL);
  if (s == NULL) exit(1);
  for (int rep = 0; rep < 5; rep++) {
    const int n = 200000;
    double t0 = bench_now_s(), dt;
    for (int i = 0; i < n; i++) {
      bw_stage_submit(s, NULL, (uint32_t)(i % 4), BW_QUEUE_NO_DEADLINE, &r);
      if (bw_stage_next(s, &it) == BW_OK)
        bw_stage_done(s, &it, BW_STAGE_PROCESSED);
    }
    dt = (bench_now_s() - t0) * 1e9 / n;
    if (dt < best) best = dt;
  }
  bw_stage_free(s);
  return best;
}

int main(void) {
  row_t rows[3];
  run_unbounded(&rows[0]);
  run_stage(&rows[1], false);
  run_stage(&rows[2], true);
  printf(
      "overload in virtual time: %d s, producer %d/s, service %d/s, "
      "deadline %d ms, stage queue %d\n\n",
      SECONDS, 1000 / ARRIVAL_MS, 1000 / SERVICE_MS, DEADLINE_MS, QSIZE);
  printf("%-11s %8s %8s %8s %6s %8s %9s %8s %9s %9s %9s %11s %11s\n", "mode",
         "offered", "admitted", "refused", "shed", "expired", "processed",
         "stale", "max_queue", "crit_s", "degr_s", "retry_mean", "interactive");
  for (int i = 0; i < 3; i++) {
    const row_t *r = &rows[i];
    char inter[32];
    snprintf(inter, sizeof(inter), "%llu/%llu",
             (unsigned long long)r->interactive_served,
             (unsigned long long)r->interactive_offered);
    printf(
        "%-11s %8llu %8llu %8llu %6llu %8llu %9llu %8llu %9llu %9.2f "
        "%9.2f %9.0fms %11s\n",
        r->mode, (unsigned long long)r->offered,
        (unsigned long long)r->admitted, (unsigned long long)r->refused,
        (unsigned long long)r->shed, (unsigned long long)r->expired,
        (unsigned long long)r->processed, (unsigned long long)r->stale,
        (unsigned long long)r->max_queue, r->critical_s, r->degraded_s,
        r->mean_retry_ms, inter);
  }
  printf(
      "\n(interactive = priority-1 items served before their deadline / "
      "offered)\n");
  printf(
      "stage hot path: %.0f ns per submit+next+done (one thread, "
      "monotonic clock)\n",
      ns_per_cycle());
  return 0;
}

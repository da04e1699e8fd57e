/* bench_queue — ns per queue operation at depth 16, 4096 and 100 000, for each
 * admission policy, next to the backpressure article's approach (a sorted
 * array: stable insertion by a linear scan from the end plus a memmove, dequeue
 * by shifting the front off, drop-oldest by scanning for the earliest arrival)
 * written in C for the ratio.
 *
 * Two rows per depth and policy, one thread, random priorities in 10 classes:
 *   admit  the queue holds `depth` items with room to spare (max_size =
 *          2 x depth): one enqueue (admitted) + one dequeue. The policy is
 *          idle; the row shows the cost of depth.
 *   full   the queue is full at `depth` (max_size = depth): one enqueue that
 *          meets the full queue (the policy sheds or refuses) + one dequeue +
 *          one enqueue that refills it. Reported per enqueue+dequeue pair,
 *          i.e. the cycle's time x 2/3.
 * breakwater's numbers include its mutex (uncontended lock + unlock per
 * call). Each cell is the fastest of 5 runs of 60 ms (--quick: one run).
 * Allocations during the timed loops are counted (expected: 0).
 *
 *   build/bench/bench_queue [--quick]
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakwater/breakwater.h"
#include "bench_util.h"
#include "breakwater/queue.h"

#define CLASSES 10
#define NPRIO 4096

static uint32_t g_prio[NPRIO];
static double g_budget_s = 0.06; /* per repetition */
static int g_reps = 5;           /* the fastest repetition is reported */
static volatile uintptr_t g_sink;

/* ---- the backpressure article's BoundedQueue, in C
 * ------------------------------------ */

typedef struct {
  void *item;
  uint32_t prio;
  uint64_t seq; /* enqueuedAt */
} sentry_t;

typedef struct {
  sentry_t *a;
  size_t n, max;
  bw_queue_policy_t policy;
  uint64_t seq;
} seedq_t;

static void seed_insert(seedq_t *q, sentry_t e) {
  size_t i = q->n; /* insertByPriority: scan from the end, then splice */
  while (i > 0 && q->a[i - 1].prio > e.prio)
    i--;
  memmove(&q->a[i + 1], &q->a[i], (q->n - i) * sizeof(sentry_t));
  q->a[i] = e;
  q->n++;
}

static int seed_enqueue(seedq_t *q, void *item, uint32_t prio) {
  sentry_t e = {item, prio, ++q->seq};
  if (q->n < q->max) {
    seed_insert(q, e);
    return BW_QUEUE_ADMITTED;
  }
  if (q->policy == BW_QUEUE_DROP_OLDEST) {
    size_t o = 0; /* removeOldest: the earliest enqueuedAt */
    for (size_t i = 1; i < q->n; i++)
      if (q->a[i].seq < q->a[o].seq) o = i;
    g_sink = (uintptr_t)q->a[o].item;
    memmove(&q->a[o], &q->a[o + 1], (q->n - o - 1) * sizeof(sentry_t));
    q->n--;
    seed_insert(q, e);
    return BW_QUEUE_SHED;
  }
  if (q->policy == BW_QUEUE_DROP_LOWEST && q->a[q->n - 1].prio > prio) {
    g_sink = (uintptr_t)q->a[--q->n].item;
    seed_insert(q, e);
    return BW_QUEUE_SHED;
  }
  return BW_QUEUE_REJECTED;
}

static void *seed_dequeue(seedq_t *q) {
  void *it = q->a[0].item; /* items.shift() */
  memmove(&q->a[0], &q->a[1], (q->n - 1) * sizeof(sentry_t));
  q->n--;
  return it;
}

/* ---- the runs ----------------------------------------------------------- */

typedef struct {
  double ns;                 /* per enqueue+dequeue pair */
  unsigned long long allocs; /* during the timed loop */
} result_t;

static result_t run_bw(bw_queue_policy_t policy, uint32_t depth, bool full) {
  bw_queue_config_t cfg;
  bw_queue_t *q;
  bw_queue_item_t it;
  unsigned long long a0;
  long long iters = 0;
  double t0, t;
  result_t r;
  uint32_t k = 0;
  bw_queue_config_init(&cfg);
  cfg.max_size = full ? depth : 2 * depth;
  cfg.policy = policy;
  cfg.priority_levels = CLASSES;
  q = bw_queue_new(&cfg, NULL);
  if (q == NULL) abort();
  for (uint32_t i = 0; i < depth; i++)
    bw_queue_enqueue(q, (void *)(uintptr_t)(i + 1), g_prio[k++ % NPRIO],
                     BW_QUEUE_NO_DEADLINE, &it);
  a0 = bench_allocs();
  t0 = bench_now_s();
  do {
    for (int j = 0; j < 1024; j++) {
      bw_queue_enqueue(q, (void *)(uintptr_t)k, g_prio[k % NPRIO],
                       BW_QUEUE_NO_DEADLINE, &it);
      k++;
      bw_queue_dequeue(q, &it);
      g_sink = (uintptr_t)it.data;
      if (full) {
        bw_queue_enqueue(q, (void *)(uintptr_t)k, g_prio[k % NPRIO],
                         BW_QUEUE_NO_DEADLINE, &it);
        k++;
      }
    }
    iters += 1024;
    t = bench_now_s() - t0;
  } while (t < g_budget_s);
  r.allocs = bench_allocs() - a0;
  r.ns = t * 1e9 / (double)iters / (full ? 1.5 : 1.0);
  bw_queue_free(q);
  return r;
}

static result_t run_seed(bw_queue_policy_t policy, uint32_t depth, bool full) {
  seedq_t q;
  long long iters = 0;
  double t0, t;
  result_t r = {0, 0};
  uint32_t k = 0;
  memset(&q, 0, sizeof(q));
  q.max = full ? depth : 2 * depth;
  q.policy = policy;
  q.a = malloc((q.max + 1) * sizeof(sentry_t));
  if (q.a == NULL) abort();
  for (uint32_t i = 0; i < depth; i++)
    seed_enqueue(&q, (void *)(uintptr_t)(i + 1), g_prio[k++ % NPRIO]);
  t0 = bench_now_s();
  do {
    for (int j = 0; j < 16; j++) {
      seed_enqueue(&q, (void *)(uintptr_t)k, g_prio[k % NPRIO]);
      k++;
      g_sink = (uintptr_t)seed_dequeue(&q);
      if (full) {
        seed_enqueue(&q, (void *)(uintptr_t)k, g_prio[k % NPRIO]);
        k++;
      }
    }
    iters += 16;
    t = bench_now_s() - t0;
  } while (t < g_budget_s);
  r.ns = t * 1e9 / (double)iters / (full ? 1.5 : 1.0);
  free(q.a);
  return r;
}

int main(int argc, char **argv) {
  const uint32_t depths[] = {16, 4096, 100000};
  const bw_queue_policy_t policies[] = {BW_QUEUE_REJECT, BW_QUEUE_DROP_OLDEST,
                                        BW_QUEUE_DROP_LOWEST};
  uint64_t x = 88172645463325252u;
  unsigned long long allocs = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--quick") == 0) g_reps = 1;
  if (bench_count_allocations() != BW_OK) return 1;
  for (int i = 0; i < NPRIO; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    g_prio[i] = (uint32_t)(x % CLASSES);
  }
  printf(
      "bench_queue: ns per enqueue+dequeue pair, one thread, %d priority "
      "classes\n",
      CLASSES);
  printf("%-12s %-5s %8s %12s %12s %9s\n", "policy", "row", "depth",
         "breakwater", "seed O(n)", "ratio");
  for (size_t p = 0; p < 3; p++)
    for (int full = 0; full < 2; full++)
      for (size_t d = 0; d < 3; d++) {
        result_t b = {1e300, 0}, s = {1e300, 0};
        /* The fastest of g_reps runs: on a shared machine the noise only
         * ever adds time. */
        for (int r = 0; r < g_reps; r++) {
          result_t x1 = run_bw(policies[p], depths[d], full);
          result_t x2 = run_seed(policies[p], depths[d], full);
          b.allocs += x1.allocs;
          if (x1.ns < b.ns) b.ns = x1.ns;
          if (x2.ns < s.ns) s.ns = x2.ns;
        }
        allocs += b.allocs;
        printf("%-12s %-5s %8u %12.1f %12.1f %8.1fx\n",
               bw_queue_policy_name(policies[p]), full ? "full" : "admit",
               depths[d], b.ns, s.ns, s.ns / b.ns);
      }
  printf("allocations during breakwater's timed loops: %llu\n", allocs);
  return 0;
}

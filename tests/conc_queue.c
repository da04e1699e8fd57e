/* Concurrency: producers and consumers share one bounded queue; threads feed
 * one pressure gauge.
 *
 * Laws checked (queue, for each policy):
 *   - every item has exactly one fate: an admitted item is dequeued, shed,
 *     expired or still queued at the end — once, never twice; a rejected item
 *     has none (a per-item counter, bumped by whoever sees the item go);
 *   - admitted = dequeued + shed + expired + remaining, and each term equals
 *     what the threads themselves counted;
 *   - enqueued = admitted + rejected = the enqueue calls made;
 *   - the queue never holds more than max_size (a sampler thread watches).
 * A ticker thread advances the manual clock so deadlines expire mid-run.
 * The queue has a sink: its queue_dropped summaries (emitted while the
 * threads race, the clock moving, and at the free) add up to rejected, shed
 * and expired exactly.
 *
 * Law checked (gauge): regime changes form one ordered chain — each
 * on_change's `from` is the previous one's `to` — and transitions =
 * on_change calls = the sum of entered[]. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"
#include "breakwater/gauge.h"
#include "breakwater/queue.h"

#define PRODUCERS 4
#define CONSUMERS 3
#define PER_PRODUCER 20000
#define ITEMS (PRODUCERS * PER_PRODUCER)
#define MAX_SIZE 64

static _Atomic uint8_t fate[ITEMS];
static _Atomic uint8_t was_admitted[ITEMS];
static atomic_ullong expired_seen;

typedef struct {
  bw_queue_t *q;
  bw_clock_t *clock;
  int index;
  atomic_bool *producers_done;
  uint64_t admitted, rejected, shed, dequeued, deadline_returned;
} worker_t;

static size_t id_of(const void *p) {
  return (size_t)(uintptr_t)p - 1;
}

static void on_expired(const bw_queue_item_t *it, int64_t now, void *ud) {
  (void)now;
  (void)ud;
  atomic_fetch_add(&fate[id_of(it->data)], 1);
  atomic_fetch_add(&expired_seen, 1);
}

static void *produce(void *arg) {
  worker_t *w = arg;
  uint64_t r = (uint64_t)w->index * 0x9E3779B97F4A7C15u + 1;
  for (int i = 0; i < PER_PRODUCER; i++) {
    size_t id = (size_t)w->index * PER_PRODUCER + (size_t)i;
    bw_queue_item_t shed;
    int64_t dl = BW_QUEUE_NO_DEADLINE;
    int rc;
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    if (r % 4 == 0)
      dl = bw_clock_now(w->clock) + (int64_t)(r % 3) * BW_NS_PER_MS;
    rc = bw_queue_enqueue(w->q, (void *)(uintptr_t)(id + 1),
                          (uint32_t)((r >> 8) % 10), dl, &shed);
    /* On two cores the producers could otherwise fill the queue and finish
     * before a consumer runs: yield now and then so the threads interleave. */
    if (i % 16 == 0) sched_yield();
    if (rc == BW_QUEUE_REJECTED) {
      w->rejected++;
      sched_yield();
      continue;
    }
    assert_true(rc == BW_QUEUE_ADMITTED || rc == BW_QUEUE_SHED);
    atomic_store(&was_admitted[id], 1);
    w->admitted++;
    if (rc == BW_QUEUE_SHED) {
      atomic_fetch_add(&fate[id_of(shed.data)], 1);
      w->shed++;
    }
  }
  return NULL;
}

static void *consume(void *arg) {
  worker_t *w = arg;
  for (;;) {
    bw_queue_item_t it;
    int rc = bw_queue_dequeue(w->q, &it);
    if (rc == BW_OK) {
      atomic_fetch_add(&fate[id_of(it.data)], 1);
      w->dequeued++;
      /* Slower than the producers, so the queue fills and policies act. */
      if (w->dequeued % 2 == 0) sched_yield();
    } else if (rc == BW_E_NOTFOUND) {
      if (atomic_load(w->producers_done)) return NULL;
      sched_yield();
    } else {
      fail_msg("dequeue: %s", bw_err_name(rc));
    }
  }
}

typedef struct {
  bw_queue_t *q;
  bw_clock_t *clock;
  atomic_bool stop;
  uint32_t max_seen;
} ticker_t;

static void *tick(void *arg) {
  ticker_t *t = arg;
  while (!atomic_load(&t->stop)) {
    uint32_t n = bw_queue_size(t->q);
    if (n > t->max_seen) t->max_seen = n;
    bw_clock_manual_advance(t->clock, 1000); /* 1 us a round */
  }
  return NULL;
}

/* What the queue's sink received (checked on the emitting threads). */
static atomic_ullong ev_sum[3], ev_summaries, ev_bad;
static void on_dropped(const bw_event_t *ev, void *ud) {
  (void)ud;
  if (ev->type != BW_EV_QUEUE_DROPPED || ev->field_count != 6 ||
      ev->fields[0].v.u !=
          ev->fields[1].v.u + ev->fields[2].v.u + ev->fields[3].v.u) {
    atomic_fetch_add(&ev_bad, 1);
    return;
  }
  for (int i = 0; i < 3; i++)
    atomic_fetch_add(&ev_sum[i], ev->fields[i + 1].v.u);
  atomic_fetch_add(&ev_summaries, 1);
}

static void run(bw_queue_policy_t policy) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_sink_t *sink = bw_sink_callback_new(on_dropped, NULL, NULL);
  bw_queue_config_t cfg;
  bw_queue_t *q;
  pthread_t pt[PRODUCERS], ct[CONSUMERS], tt;
  worker_t pw[PRODUCERS], cw[CONSUMERS];
  atomic_bool done = false;
  ticker_t ticker;
  bw_queue_stats_t s;
  uint64_t admitted = 0, rejected = 0, shed = 0, dequeued = 0, remaining = 0;
  bw_queue_item_t it;

  memset((void *)fate, 0, sizeof(fate));
  memset((void *)was_admitted, 0, sizeof(was_admitted));
  atomic_store(&expired_seen, 0);
  for (int i = 0; i < 3; i++)
    atomic_store(&ev_sum[i], 0);
  atomic_store(&ev_summaries, 0);
  atomic_store(&ev_bad, 0);
  assert_non_null(sink);
  bw_queue_config_init(&cfg);
  cfg.name = "conc";
  cfg.max_size = MAX_SIZE;
  cfg.policy = policy;
  cfg.clock = clock;
  cfg.on_expired = on_expired;
  cfg.sink = sink;
  cfg.wall_clock = clock;
  q = bw_queue_new(&cfg, NULL);
  assert_non_null(q);
  memset(&ticker, 0, sizeof(ticker));
  ticker.q = q;
  ticker.clock = clock;
  assert_int_equal(pthread_create(&tt, NULL, tick, &ticker), 0);
  for (int i = 0; i < CONSUMERS; i++) {
    memset(&cw[i], 0, sizeof(cw[i]));
    cw[i].q = q;
    cw[i].producers_done = &done;
    assert_int_equal(pthread_create(&ct[i], NULL, consume, &cw[i]), 0);
  }
  for (int i = 0; i < PRODUCERS; i++) {
    memset(&pw[i], 0, sizeof(pw[i]));
    pw[i].q = q;
    pw[i].clock = clock;
    pw[i].index = i;
    assert_int_equal(pthread_create(&pt[i], NULL, produce, &pw[i]), 0);
  }
  for (int i = 0; i < PRODUCERS; i++)
    pthread_join(pt[i], NULL);
  atomic_store(&done, true);
  for (int i = 0; i < CONSUMERS; i++)
    pthread_join(ct[i], NULL);
  atomic_store(&ticker.stop, true);
  pthread_join(tt, NULL);

  /* Consumers stop at the first empty queue after the producers finished,
   * so the queue is empty now unless the last dequeue raced the flag; count
   * whatever is left as remaining before draining it. */
  bw_queue_stats(q, &s);
  remaining = s.size;
  for (int i = 0; i < PRODUCERS; i++) {
    admitted += pw[i].admitted;
    rejected += pw[i].rejected;
    shed += pw[i].shed;
  }
  for (int i = 0; i < CONSUMERS; i++)
    dequeued += cw[i].dequeued;

  assert_int_equal(s.enqueued, (uint64_t)ITEMS);
  assert_int_equal(s.admitted, admitted);
  assert_int_equal(s.rejected, rejected);
  assert_int_equal(admitted + rejected, (uint64_t)ITEMS);
  assert_int_equal(s.shed, shed);
  assert_int_equal(s.dequeued, dequeued);
  assert_int_equal(s.expired, atomic_load(&expired_seen));
  assert_int_equal(s.admitted, s.dequeued + s.shed + s.expired + remaining);
  assert_true(s.max_size_seen <= MAX_SIZE);
  assert_true(ticker.max_seen <= MAX_SIZE);

  /* Now give the leftovers their fate too, then check every item. The clock
   * stands still, so the drain both dequeues and expires. */
  while (bw_queue_dequeue(q, &it) == BW_OK)
    atomic_fetch_add(&fate[id_of(it.data)], 1);
  for (size_t id = 0; id < ITEMS; id++) {
    unsigned f = atomic_load(&fate[id]);
    unsigned a = atomic_load(&was_admitted[id]);
    if (f != a)
      fail_msg("%s: item %zu admitted %u but met %u fates",
               bw_queue_policy_name(policy), id, a, f);
  }
  bw_queue_stats(q, &s);
  assert_int_equal(s.size, 0);
  assert_int_equal(s.admitted, s.dequeued + s.shed + s.expired);
  if (policy == BW_QUEUE_DROP_OLDEST) assert_int_equal(s.rejected, 0);
  if (policy == BW_QUEUE_REJECT) assert_int_equal(s.shed, 0);
  /* Shedding and refusing depend on scheduling; they are reported, not
   * asserted (the laws above hold whatever happened). */
  printf(
      "%s: admitted %llu rejected %llu shed %llu expired %llu dequeued "
      "%llu remaining %llu\n",
      bw_queue_policy_name(policy), (unsigned long long)s.admitted,
      (unsigned long long)s.rejected, (unsigned long long)s.shed,
      (unsigned long long)s.expired, (unsigned long long)dequeued,
      (unsigned long long)remaining);
  bw_queue_free(q); /* the last summary */
  assert_int_equal(atomic_load(&ev_bad), 0);
  assert_int_equal(atomic_load(&ev_sum[0]), s.rejected);
  assert_int_equal(atomic_load(&ev_sum[1]), s.shed);
  assert_int_equal(atomic_load(&ev_sum[2]), s.expired);
  printf("%s: %llu queue_dropped summaries\n", bw_queue_policy_name(policy),
         (unsigned long long)atomic_load(&ev_summaries));
  bw_sink_free(sink);
  bw_clock_free(clock);
}

static void reject_conserves_every_item(void **state) {
  (void)state;
  run(BW_QUEUE_REJECT);
}
static void drop_oldest_conserves_every_item(void **state) {
  (void)state;
  run(BW_QUEUE_DROP_OLDEST);
}
static void drop_lowest_conserves_every_item(void **state) {
  (void)state;
  run(BW_QUEUE_DROP_LOWEST);
}

/* ---- gauge ----------------------------------------------------------------
 */

#define GAUGE_THREADS 4
#define GAUGE_UPDATES 50000

typedef struct {
  int last_to;
  uint64_t calls;
  uint64_t broken; /* from != previous to */
} chain_t;

static void on_change(const char *name, bw_regime_t from, bw_regime_t to,
                      double p, int64_t now, void *ud) {
  chain_t *c = ud; /* called under the gauge's lock: no race here */
  (void)name;
  (void)p;
  (void)now;
  if ((int)from != c->last_to || from == to) c->broken++;
  c->last_to = (int)to;
  c->calls++;
}

typedef struct {
  bw_gauge_t *g;
  int index;
} gworker_t;

static void *feed(void *arg) {
  gworker_t *w = arg;
  uint64_t r = (uint64_t)w->index * 0x2545F4914F6CDD1Du + 7;
  for (int i = 0; i < GAUGE_UPDATES; i++) {
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    assert_true(bw_gauge_update(w->g, (double)(r % 1001) / 1000.0) >= 0);
    (void)bw_gauge_admits(w->g, 3); /* the lock-free read path */
  }
  return NULL;
}

static void gauge_changes_form_one_ordered_chain(void **state) {
  bw_gauge_config_t cfg;
  bw_gauge_t *g;
  chain_t chain = {BW_REGIME_NORMAL, 0, 0};
  pthread_t t[GAUGE_THREADS];
  gworker_t w[GAUGE_THREADS];
  bw_gauge_stats_t s;
  (void)state;
  bw_gauge_config_init(&cfg);
  cfg.on_change = on_change;
  cfg.userdata = &chain;
  g = bw_gauge_new(&cfg, NULL);
  assert_non_null(g);
  for (int i = 0; i < GAUGE_THREADS; i++) {
    w[i].g = g;
    w[i].index = i + 1;
    assert_int_equal(pthread_create(&t[i], NULL, feed, &w[i]), 0);
  }
  for (int i = 0; i < GAUGE_THREADS; i++)
    pthread_join(t[i], NULL);
  bw_gauge_stats(g, &s);
  assert_int_equal(chain.broken, 0);
  assert_int_equal(s.transitions, chain.calls);
  assert_int_equal(s.entered[0] + s.entered[1] + s.entered[2], s.transitions);
  assert_int_equal(s.updates, (uint64_t)GAUGE_THREADS * GAUGE_UPDATES);
  assert_int_equal((int)s.regime, chain.last_to);
  assert_true(s.transitions > 0);
  bw_gauge_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reject_conserves_every_item),
      cmocka_unit_test(drop_oldest_conserves_every_item),
      cmocka_unit_test(drop_lowest_conserves_every_item),
      cmocka_unit_test(gauge_changes_form_one_ordered_chain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

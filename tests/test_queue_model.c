/* Property test: the queue against an obviously right model.
 *
 * The model keeps its items in one array in arrival order and finds
 * everything by scanning (O(n)): the most urgent is the smallest priority,
 * the earliest arrival among equals; the least urgent the largest priority,
 * the latest arrival among equals; the oldest is element 0. It applies the
 * backpressure article's rules literally. Random traces of 10^5 enqueue/dequeue
 * operations, with random priorities, deadlines and clock steps, run against
 * both; every step must agree exactly: the outcome, the item shed, returned or
 * expired (pointer, priority, deadline, arrival number), and every counter.
 * Each policy runs on several bounds and priority ranges (one that crosses
 * bitmap words). The seeds are fixed, so a failure reproduces; it prints the
 * seed and step. */
#include "bw_test.h"
#include "breakwater/queue.h"

#define NONE BW_QUEUE_NO_DEADLINE
#define OPS 100000
#define MAXQ 256

typedef struct {
  uintptr_t id;
  uint32_t prio;
  int64_t deadline;
  uint64_t seq;
} mitem_t;

typedef struct {
  mitem_t a[MAXQ]; /* arrival order */
  size_t n, max;
  bw_queue_policy_t policy;
  uint64_t seq, admitted, rejected, shed, expired, dequeued;
  size_t max_seen;
} model_t;

static void m_remove(model_t *m, size_t i) {
  memmove(&m->a[i], &m->a[i + 1], (m->n - i - 1) * sizeof(mitem_t));
  m->n--;
}

static void m_push(model_t *m, mitem_t it) {
  m->a[m->n++] = it;
  if (m->n > m->max_seen) m->max_seen = m->n;
}

/* Returns the outcome; *shed gets the dropped item when SHED. */
static int m_enqueue(model_t *m, uintptr_t id, uint32_t prio, int64_t dl,
                     mitem_t *shed) {
  mitem_t it = {id, prio, dl, ++m->seq};
  if (m->n < m->max) {
    m_push(m, it);
    m->admitted++;
    return BW_QUEUE_ADMITTED;
  }
  if (m->policy == BW_QUEUE_DROP_OLDEST) {
    *shed = m->a[0];
    m_remove(m, 0);
    m_push(m, it);
    m->admitted++;
    m->shed++;
    return BW_QUEUE_SHED;
  }
  if (m->policy == BW_QUEUE_DROP_LOWEST) {
    size_t w = 0;
    for (size_t i = 1; i < m->n; i++)
      if (m->a[i].prio > m->a[w].prio ||
          (m->a[i].prio == m->a[w].prio && m->a[i].seq > m->a[w].seq))
        w = i;
    if (m->a[w].prio > prio) {
      *shed = m->a[w];
      m_remove(m, w);
      m_push(m, it);
      m->admitted++;
      m->shed++;
      return BW_QUEUE_SHED;
    }
  }
  m->rejected++;
  return BW_QUEUE_REJECTED;
}

/* Returns BW_OK with *out, or BW_E_NOTFOUND; expired items go to exp[]. */
static int m_dequeue(model_t *m, int64_t now, mitem_t *out, mitem_t *exp,
                     size_t *nexp) {
  for (;;) {
    size_t b = 0;
    if (m->n == 0) return BW_E_NOTFOUND;
    for (size_t i = 1; i < m->n; i++)
      if (m->a[i].prio < m->a[b].prio ||
          (m->a[i].prio == m->a[b].prio && m->a[i].seq < m->a[b].seq))
        b = i;
    if (m->a[b].deadline != NONE && now >= m->a[b].deadline) {
      exp[(*nexp)++] = m->a[b];
      m_remove(m, b);
      m->expired++;
      continue;
    }
    *out = m->a[b];
    m_remove(m, b);
    m->dequeued++;
    return BW_OK;
  }
}

/* ---- the real queue's expired items ---- */

typedef struct {
  size_t n;
  bw_queue_item_t items[MAXQ];
} expired_t;

static void on_expired(const bw_queue_item_t *it, int64_t now, void *ud) {
  expired_t *x = ud;
  (void)now;
  if (x->n < MAXQ) x->items[x->n] = *it;
  x->n++;
}

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}
static uint32_t below(uint32_t n) {
  return (uint32_t)(rnd() % n);
}

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      print_error("seed %" PRIu64 " step %ld (%s, max %zu): ", seed, step, \
                  bw_queue_policy_name(policy), max);                      \
      print_error(__VA_ARGS__);                                            \
      print_error("\n");                                                   \
      fail();                                                              \
    }                                                                      \
  } while (0)

static void same_item(const bw_queue_item_t *q, const mitem_t *m, uint64_t seed,
                      long step, bw_queue_policy_t policy, size_t max,
                      const char *what) {
  CHECK((uintptr_t)q->data == m->id && q->priority == m->prio &&
            q->deadline_ns == m->deadline && q->seq == m->seq,
        "%s: queue gave id %zu prio %u seq %" PRIu64
        ", model id %zu prio %u seq %" PRIu64,
        what, (size_t)(uintptr_t)q->data, q->priority, q->seq, (size_t)m->id,
        m->prio, m->seq);
}

static void run_trace(bw_queue_policy_t policy, size_t max, uint32_t levels,
                      uint64_t seed) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_queue_config_t cfg;
  bw_error_t err;
  bw_queue_t *q;
  static model_t m;
  static expired_t x;
  mitem_t mexp[MAXQ];
  long step = 0;
  double p_enqueue = 0.5;

  memset(&m, 0, sizeof(m));
  memset(&x, 0, sizeof(x));
  m.max = max;
  m.policy = policy;
  bw_queue_config_init(&cfg);
  cfg.name = "model";
  cfg.max_size = (uint32_t)max;
  cfg.policy = policy;
  cfg.priority_levels = levels;
  cfg.clock = clock;
  cfg.on_expired = on_expired;
  cfg.userdata = &x;
  q = bw_queue_new(&cfg, &err);
  assert_non_null(q);
  rng_state = seed;

  for (step = 0; step < OPS; step++) {
    int64_t now = bw_clock_now(clock);
    bw_queue_stats_t s;
    /* Phases of 1000 steps alternate between filling, draining and a
     * balanced mix, so full queues (and every policy branch) are common. */
    if (step % 1000 == 0) p_enqueue = (double)(1 + below(9)) / 10.0;
    if ((double)(rnd() % 1000) / 1000.0 < p_enqueue) {
      uintptr_t id = (uintptr_t)step + 1;
      /* Mostly a few close priorities (ties), sometimes the whole range. */
      uint32_t prio = below(4) ? below(levels < 6 ? levels : 6) : below(levels);
      int64_t dl =
          below(3) ? NONE
                   : now + (int64_t)below(50) * BW_NS_PER_MS - 5 * BW_NS_PER_MS;
      bw_queue_item_t shed;
      mitem_t mshed;
      int rq = bw_queue_enqueue(q, (void *)id, prio, dl, &shed);
      int rm = m_enqueue(&m, id, prio, dl, &mshed);
      CHECK(rq == rm, "enqueue prio %u: queue %s, model %s", prio,
            bw_admission_name(rq), bw_admission_name(rm));
      if (rq == BW_QUEUE_SHED)
        same_item(&shed, &mshed, seed, step, policy, max, "shed");
    } else {
      bw_queue_item_t out;
      mitem_t mout;
      size_t nexp = 0;
      int rq, rm;
      x.n = 0;
      rq = bw_queue_dequeue(q, &out);
      rm = m_dequeue(&m, now, &mout, mexp, &nexp);
      CHECK(rq == rm, "dequeue: queue %s, model %s", bw_err_name(rq),
            bw_err_name(rm));
      if (rq == BW_OK) same_item(&out, &mout, seed, step, policy, max, "out");
      CHECK(x.n == nexp, "expired: queue %zu, model %zu", x.n, nexp);
      for (size_t i = 0; i < nexp; i++)
        same_item(&x.items[i], &mexp[i], seed, step, policy, max, "expired");
    }
    bw_clock_manual_advance(clock, (int64_t)below(3) * BW_NS_PER_MS);
    bw_queue_stats(q, &s);
    CHECK(s.size == m.n && s.admitted == m.admitted &&
              s.rejected == m.rejected && s.shed == m.shed &&
              s.expired == m.expired && s.dequeued == m.dequeued &&
              s.max_size_seen == m.max_seen && s.enqueued == m.seq,
          "stats differ: size %u/%zu admitted %" PRIu64 "/%" PRIu64
          " shed %" PRIu64 "/%" PRIu64,
          s.size, m.n, s.admitted, m.admitted, s.shed, m.shed);
    CHECK(s.admitted == s.dequeued + s.shed + s.expired + s.size,
          "conservation broken");
    CHECK(s.size <= max, "grew past max_size");
  }
  /* The traces must have exercised what they claim to. */
  CHECK(m.admitted > 0 && m.dequeued > 0 && m.expired > 0, "dull trace");
  if (policy == BW_QUEUE_REJECT) CHECK(m.rejected > 0, "never full");
  if (policy == BW_QUEUE_DROP_OLDEST) CHECK(m.shed > 0, "never shed");
  if (policy == BW_QUEUE_DROP_LOWEST)
    CHECK(m.shed > 0 && m.rejected > 0, "never shed or never refused");
  bw_queue_free(q);
  bw_clock_free(clock);
}

static void traces(bw_queue_policy_t policy) {
  run_trace(policy, 1, 4, 1);
  run_trace(policy, 7, 10, 2);
  run_trace(policy, 64, 300, 3); /* priorities across five bitmap words */
  run_trace(policy, MAXQ, 4096, 4);
}

static void reject_matches_the_model(void **state) {
  (void)state;
  traces(BW_QUEUE_REJECT);
}
static void drop_oldest_matches_the_model(void **state) {
  (void)state;
  traces(BW_QUEUE_DROP_OLDEST);
}
static void drop_lowest_matches_the_model(void **state) {
  (void)state;
  traces(BW_QUEUE_DROP_LOWEST);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reject_matches_the_model),
      cmocka_unit_test(drop_oldest_matches_the_model),
      cmocka_unit_test(drop_lowest_matches_the_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

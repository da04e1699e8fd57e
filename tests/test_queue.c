/* Specification tests: the bounded priority queue and its admission policies
 * (the backpressure article, src/bounded-queue.js).
 *
 * Every test runs on a manual clock and asserts exact values. The article's
 * rules, as written step by step below:
 *   - the queue never grows past max_size;
 *   - smaller priority number = more urgent; equal priorities keep arrival
 *     order;
 *   - full + reject: the newcomer is refused;
 *   - full + drop-oldest: the oldest by arrival is shed (whatever its
 *     priority) and the newcomer admitted;
 *   - full + drop-lowest: the least urgent item (the newest among equally
 *     unimportant ones: the article pops the last of its sorted array) is shed
 *     only if the newcomer is strictly more urgent; otherwise the newcomer is
 *     refused (the carousel bug);
 *   - an item past its deadline is never returned for processing. */
#include "bw_test.h"
#include "breakwater/gauge.h"
#include "breakwater/queue.h"
#include "oom.h"

#define MS BW_NS_PER_MS
#define NONE BW_QUEUE_NO_DEADLINE

typedef struct qenv_s {
  bw_clock_t *clock;
  bw_queue_t *q;
  /* Items handed to on_expired, in order. */
  size_t nexp;
  bw_queue_item_t exp[64];
  int64_t exp_now[64];
  bool reenter; /* on_expired enqueues "late" at priority 0 */
} qenv_t;

static int setup(void **state) {
  qenv_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  if (e->clock == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  qenv_t *e = *state;
  bw_queue_free(e->q);
  bw_clock_free(e->clock);
  free(e);
  return 0;
}

static char late = 'L';

static void on_expired(const bw_queue_item_t *it, int64_t now, void *ud) {
  qenv_t *e = ud;
  if (e->nexp < 64) {
    e->exp[e->nexp] = *it;
    e->exp_now[e->nexp] = now;
  }
  e->nexp++;
  if (e->reenter) {
    /* Runs outside the queue's lock: the queue may be used from here. */
    assert_int_equal(bw_queue_enqueue(e->q, &late, 0, NONE, NULL),
                     BW_QUEUE_ADMITTED);
    e->reenter = false;
  }
}

static void config(qenv_t *e, bw_queue_config_t *cfg, uint32_t max,
                   bw_queue_policy_t policy) {
  bw_queue_config_init(cfg);
  cfg->name = "jobs";
  cfg->max_size = max;
  cfg->policy = policy;
  cfg->clock = e->clock;
  cfg->on_expired = on_expired;
  cfg->userdata = e;
}

static bw_queue_t *make(qenv_t *e, uint32_t max, bw_queue_policy_t policy) {
  bw_queue_config_t cfg;
  bw_error_t err;
  config(e, &cfg, max, policy);
  bw_queue_free(e->q);
  e->q = bw_queue_new(&cfg, &err);
  if (e->q == NULL) fail_msg("bw_queue_new: %s", err.message);
  return e->q;
}

static bw_queue_stats_t stats(const bw_queue_t *q) {
  bw_queue_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_queue_stats(q, &s);
  return s;
}

/* Items are single characters so orders read as strings. */
static char items[] = "abcdefghijklmnopqrstuvwxyz";
#define IT(c) ((void *)&items[(c) - 'a'])

static int put(bw_queue_t *q, char c, uint32_t prio) {
  bw_queue_item_t shed;
  return bw_queue_enqueue(q, IT(c), prio, NONE, &shed);
}

/* Dequeues everything; returns the letters in order. */
static const char *drain(bw_queue_t *q) {
  static char out[128];
  size_t n = 0;
  bw_queue_item_t it;
  int rc;
  while ((rc = bw_queue_dequeue(q, &it)) == BW_OK && n + 1 < sizeof(out))
    out[n++] = *(char *)it.data;
  assert_status(rc, BW_E_NOTFOUND);
  out[n] = '\0';
  return out;
}

/* ==== configuration ====================================================== */

static void config_init_fills_the_documented_defaults(void **state) {
  bw_queue_config_t cfg;
  (void)state;
  memset(&cfg, 0x5A, sizeof(cfg));
  bw_queue_config_init(&cfg);
  assert_string_equal(cfg.name, "queue");
  assert_u64_eq(cfg.max_size, 0);
  assert_int_equal(cfg.policy, BW_QUEUE_REJECT);
  assert_u64_eq(cfg.priority_levels, 256);
  assert_null(cfg.clock);
  assert_null(cfg.on_expired);
  assert_null(cfg.userdata);
}

static void expect_refused(const bw_queue_config_t *cfg, const char *field,
                           const char *message) {
  bw_error_t err;
  memset(&err, 0, sizeof(err));
  assert_null(bw_queue_new(cfg, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, field);
  assert_string_equal(err.message, message);
  assert_status(bw_queue_config_validate(cfg, NULL), BW_E_INVAL);
}

static void bad_configuration_is_refused_naming_the_field(void **state) {
  qenv_t *e = *state;
  bw_queue_config_t cfg;
  bw_error_t err;
  char longname[BW_NAME_MAX + 2];

  config(e, &cfg, 0, BW_QUEUE_REJECT); /* the default max_size */
  expect_refused(&cfg, "max_size", "max_size must be >= 1 (got 0)");
  cfg.max_size = BW_QUEUE_MAX_SIZE + 1;
  expect_refused(&cfg, "max_size",
                 "max_size must be <= 67108864 (got 67108865)");
  cfg.max_size = 10;
  cfg.policy = (bw_queue_policy_t)3;
  expect_refused(&cfg, "policy",
                 "policy must be reject, drop_oldest or drop_lowest (got 3)");
  cfg.policy = BW_QUEUE_DROP_LOWEST;
  cfg.priority_levels = 0;
  expect_refused(&cfg, "priority_levels",
                 "priority_levels must be in [1, 4096] (got 0)");
  cfg.priority_levels = 4097;
  expect_refused(&cfg, "priority_levels",
                 "priority_levels must be in [1, 4096] (got 4097)");
  cfg.priority_levels = 4096;
  cfg.name = "";
  expect_refused(&cfg, "name", "name must not be empty");
  memset(longname, 'x', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  cfg.name = longname;
  expect_refused(&cfg, "name", "name must be at most 200 bytes (got 201)");
  cfg.name = NULL;
  expect_refused(&cfg, "name", "name must not be empty");
  cfg.name = "jobs";
  {
    static const bw_clock_t no_reading = {NULL, NULL};
    cfg.clock = &no_reading;
    expect_refused(&cfg, "clock", "clock must have a now_ns function");
    cfg.clock = e->clock;
    cfg.wall_clock = &no_reading;
    expect_refused(&cfg, "wall_clock",
                   "wall_clock must have a now_ns function");
    cfg.wall_clock = NULL;
  }
  assert_null(bw_queue_new(NULL, &err));
  assert_status(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "");

  /* The edges themselves are accepted. */
  cfg.name = "edges";
  cfg.max_size = 1;
  cfg.priority_levels = 1;
  assert_status(bw_queue_config_validate(&cfg, &err), BW_OK);
  cfg.priority_levels = 4096;
  e->q = bw_queue_new(&cfg, &err);
  assert_non_null(e->q);
  assert_status(err.code, BW_OK);
  assert_string_equal(bw_queue_name(e->q), "edges");
}

static void names_of_policies_and_admissions(void **state) {
  (void)state;
  assert_string_equal(bw_queue_policy_name(BW_QUEUE_REJECT), "reject");
  assert_string_equal(bw_queue_policy_name(BW_QUEUE_DROP_OLDEST),
                      "drop_oldest");
  assert_string_equal(bw_queue_policy_name(BW_QUEUE_DROP_LOWEST),
                      "drop_lowest");
  assert_string_equal(bw_queue_policy_name((bw_queue_policy_t)9), "unknown");
  assert_string_equal(bw_admission_name(BW_QUEUE_ADMITTED), "admitted");
  assert_string_equal(bw_admission_name(BW_QUEUE_SHED), "shed");
  assert_string_equal(bw_admission_name(BW_QUEUE_REJECTED), "rejected");
  assert_string_equal(bw_admission_name(-1), "unknown");
  assert_int_equal(BW_QUEUE_ADMITTED, BW_OK);
}

/* ==== ordering =========================================================== */

static void dequeue_returns_the_most_urgent_and_the_oldest_among_equals(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 10, BW_QUEUE_REJECT);
  bw_queue_item_t it;

  /* The article's insertByPriority: stable, smaller number first. */
  assert_status(put(q, 'a', 5), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'b', 1), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'c', 5), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'd', 1), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'e', 3), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'f', 0), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'g', 255), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'h', 5), BW_QUEUE_ADMITTED);

  memset(&it, 0, sizeof(it));
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('f'));
  assert_u64_eq(it.priority, 0);
  assert_i64_eq(it.deadline_ns, NONE);
  assert_u64_eq(it.seq, 6); /* the sixth enqueue */
  assert_u64_eq(it.reserved, 0);
  assert_string_equal(drain(q), "bdeachg");
}

static void an_empty_queue_dequeues_nothing_and_leaves_out_untouched(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 3, BW_QUEUE_REJECT);
  bw_queue_item_t it, copy;
  bw_queue_stats_t s;
  memset(&it, 0xCD, sizeof(it));
  memcpy(&copy, &it, sizeof(it));
  assert_status(bw_queue_dequeue(q, &it), BW_E_NOTFOUND);
  assert_memory_equal(&it, &copy, sizeof(it));
  assert_status(bw_queue_dequeue(NULL, &it), BW_E_INVAL);
  assert_status(bw_queue_dequeue(q, NULL), BW_E_INVAL);
  s = stats(q);
  assert_u64_eq(s.dequeued, 0);
  assert_u64_eq(s.size, 0);
}

static void items_are_returned_as_given_and_the_queue_keeps_no_reference(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 2, BW_QUEUE_REJECT);
  bw_queue_item_t it;
  int64_t dl = BWT_T0_NS + 5000 * MS;
  assert_status(bw_queue_enqueue(q, NULL, 7, dl, NULL), BW_QUEUE_ADMITTED);
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_null(it.data); /* NULL is a valid item */
  assert_u64_eq(it.priority, 7);
  assert_i64_eq(it.deadline_ns, dl);
  assert_u64_eq(it.seq, 1);
}

/* ==== bound and policies ================================================= */

static void reject_refuses_the_newcomer_when_full_and_never_grows(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 3, BW_QUEUE_REJECT);
  bw_queue_stats_t s;

  assert_status(put(q, 'a', 5), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'b', 5), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'c', 9), BW_QUEUE_ADMITTED);
  assert_dbl_eq(bw_queue_pressure(q), 1.0, 0);
  /* Even the most urgent newcomer is refused: reject means reject. */
  assert_status(put(q, 'd', 0), BW_QUEUE_REJECTED);
  assert_status(put(q, 'e', 9), BW_QUEUE_REJECTED);
  /* The shed pointer may be NULL under reject: nothing can be shed. */
  assert_status(bw_queue_enqueue(q, IT('f'), 1, NONE, NULL), BW_QUEUE_REJECTED);
  assert_u64_eq(bw_queue_size(q), 3);
  s = stats(q);
  assert_u64_eq(s.enqueued, 6);
  assert_u64_eq(s.admitted, 3);
  assert_u64_eq(s.rejected, 3);
  assert_u64_eq(s.shed, 0);
  assert_u64_eq(s.size, 3);
  assert_u64_eq(s.max_size_seen, 3);
  assert_u64_eq(s.max_size, 3);
  assert_int_equal(s.policy, BW_QUEUE_REJECT);
  assert_string_equal(drain(q), "abc");
  /* Room again: admitted. */
  assert_status(put(q, 'g', 1), BW_QUEUE_ADMITTED);
  assert_string_equal(drain(q), "g");
}

static void drop_oldest_sheds_the_oldest_by_arrival_whatever_its_priority(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 3, BW_QUEUE_DROP_OLDEST);
  bw_queue_item_t shed;
  bw_queue_stats_t s;

  assert_status(put(q, 'a', 1), BW_QUEUE_ADMITTED); /* oldest, most urgent */
  assert_status(put(q, 'b', 9), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'c', 5), BW_QUEUE_ADMITTED);

  memset(&shed, 0, sizeof(shed));
  assert_status(bw_queue_enqueue(q, IT('d'), 9, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('a'));
  assert_u64_eq(shed.priority, 1);
  assert_u64_eq(shed.seq, 1);
  assert_status(bw_queue_enqueue(q, IT('e'), 0, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('b'));
  assert_u64_eq(bw_queue_size(q), 3);

  /* Arrival order is kept across dequeues from the middle: c is next oldest
   * even after e (more urgent) was taken. */
  assert_status(bw_queue_dequeue(q, &shed), BW_OK);
  assert_ptr_equal(shed.data, IT('e'));
  assert_status(put(q, 'f', 9), BW_QUEUE_ADMITTED);
  assert_status(bw_queue_enqueue(q, IT('g'), 9, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('c'));

  s = stats(q);
  assert_u64_eq(s.enqueued, 7);
  assert_u64_eq(s.admitted, 7); /* every newcomer gets in */
  assert_u64_eq(s.rejected, 0);
  assert_u64_eq(s.shed, 3);
  assert_u64_eq(s.dequeued, 1);
  assert_u64_eq(s.size, 3);
  assert_string_equal(drain(q), "dfg");
}

static void drop_lowest_sheds_the_least_urgent_for_a_more_urgent_newcomer(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 4, BW_QUEUE_DROP_LOWEST);
  bw_queue_item_t shed;

  assert_status(put(q, 'a', 9), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'b', 2), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'c', 9), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'd', 5), BW_QUEUE_ADMITTED);

  /* The least urgent is priority 9; among a and c the article pops the last of
   * its sorted array: c, the newest. */
  memset(&shed, 0, sizeof(shed));
  assert_status(bw_queue_enqueue(q, IT('e'), 3, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('c'));
  assert_u64_eq(shed.priority, 9);
  assert_u64_eq(shed.seq, 3);
  assert_status(bw_queue_enqueue(q, IT('f'), 8, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('a'));
  /* Now the least urgent is d (5): 4 is strictly more urgent. */
  assert_status(bw_queue_enqueue(q, IT('g'), 4, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('f'));
  assert_status(bw_queue_enqueue(q, IT('h'), 4, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('d'));
  assert_string_equal(drain(q), "begh");
}

static void drop_lowest_rejects_a_newcomer_that_is_not_strictly_more_urgent(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 3, BW_QUEUE_DROP_LOWEST);
  bw_queue_item_t shed, copy;
  bw_queue_stats_t s;
  int i;

  assert_status(put(q, 'a', 5), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'b', 5), BW_QUEUE_ADMITTED);
  assert_status(put(q, 'c', 5), BW_QUEUE_ADMITTED);

  /* The carousel: a burst of equal priorities must not shed and readmit its
   * own items. Each is refused; the queue keeps a, b, c in order. */
  memset(&shed, 0xCD, sizeof(shed));
  memcpy(&copy, &shed, sizeof(shed));
  for (i = 0; i < 20; i++)
    assert_status(bw_queue_enqueue(q, IT('d'), 5, NONE, &shed),
                  BW_QUEUE_REJECTED);
  assert_memory_equal(&shed, &copy, sizeof(shed)); /* nothing handed back */
  /* Less urgent: refused too. */
  assert_status(bw_queue_enqueue(q, IT('e'), 6, NONE, &shed),
                BW_QUEUE_REJECTED);
  s = stats(q);
  assert_u64_eq(s.admitted, 3);
  assert_u64_eq(s.rejected, 21);
  assert_u64_eq(s.shed, 0);
  assert_string_equal(drain(q), "abc");
}

static void a_queue_of_one_applies_each_policy(void **state) {
  qenv_t *e = *state;
  bw_queue_item_t shed;
  bw_queue_t *q = make(e, 1, BW_QUEUE_DROP_OLDEST);
  assert_status(put(q, 'a', 0), BW_QUEUE_ADMITTED);
  assert_status(bw_queue_enqueue(q, IT('b'), 9, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('a'));
  assert_string_equal(drain(q), "b");

  q = make(e, 1, BW_QUEUE_DROP_LOWEST);
  assert_status(put(q, 'a', 3), BW_QUEUE_ADMITTED);
  assert_status(bw_queue_enqueue(q, IT('b'), 3, NONE, &shed),
                BW_QUEUE_REJECTED);
  assert_status(bw_queue_enqueue(q, IT('c'), 2, NONE, &shed), BW_QUEUE_SHED);
  assert_ptr_equal(shed.data, IT('a'));
  assert_string_equal(drain(q), "c");
}

static void bad_enqueue_input_is_refused_and_counts_nothing(void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 2, BW_QUEUE_DROP_LOWEST);
  bw_queue_item_t shed;
  bw_queue_stats_t s;
  /* priority_levels is 256 by default: 255 is the least urgent accepted. */
  assert_status(bw_queue_enqueue(q, IT('a'), 256, NONE, &shed), BW_E_RANGE);
  assert_status(bw_queue_enqueue(q, IT('a'), UINT32_MAX, NONE, &shed),
                BW_E_RANGE);
  /* A policy that can shed needs somewhere to hand the shed item. */
  assert_status(bw_queue_enqueue(q, IT('a'), 1, NONE, NULL), BW_E_INVAL);
  assert_status(bw_queue_enqueue(NULL, IT('a'), 1, NONE, &shed), BW_E_INVAL);
  s = stats(q);
  assert_u64_eq(s.enqueued, 0);
  assert_u64_eq(s.admitted, 0);
  assert_u64_eq(s.rejected, 0);
  assert_u64_eq(s.size, 0);
  assert_status(bw_queue_enqueue(q, IT('a'), 255, NONE, &shed),
                BW_QUEUE_ADMITTED);
  /* Refused calls consume no arrival number. */
  assert_status(bw_queue_dequeue(q, &shed), BW_OK);
  assert_u64_eq(shed.seq, 1);

  q = make(e, 2, BW_QUEUE_DROP_OLDEST);
  assert_status(bw_queue_enqueue(q, IT('a'), 1, NONE, NULL), BW_E_INVAL);
}

static void priorities_span_every_bitmap_word(void **state) {
  qenv_t *e = *state;
  bw_queue_config_t cfg;
  bw_error_t err;
  bw_queue_item_t it, shed;
  const uint32_t prios[] = {4095, 0, 63, 64, 127, 128, 4032, 1000, 65, 4094};
  const uint32_t sorted[] = {0, 63, 64, 65, 127, 128, 1000, 4032, 4094, 4095};
  size_t i;
  config(e, &cfg, 10, BW_QUEUE_DROP_LOWEST);
  cfg.priority_levels = 4096;
  e->q = bw_queue_new(&cfg, &err);
  assert_non_null(e->q);
  for (i = 0; i < 10; i++)
    assert_status(bw_queue_enqueue(e->q, NULL, prios[i], NONE, &shed),
                  BW_QUEUE_ADMITTED);
  /* Full: 4095 is the least urgent, across the last word. */
  assert_status(bw_queue_enqueue(e->q, NULL, 4094, NONE, &shed), BW_QUEUE_SHED);
  assert_u64_eq(shed.priority, 4095);
  assert_u64_eq(shed.seq, 1);
  for (i = 0; i < 10; i++) {
    assert_status(bw_queue_dequeue(e->q, &it), BW_OK);
    assert_u64_eq(it.priority, i < 9 ? sorted[i] : 4094);
  }
  assert_u64_eq(it.seq, 11); /* the later of the two 4094s comes last */
}

static void max_size_seen_and_pressure_follow_the_depth(void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 4, BW_QUEUE_REJECT);
  bw_queue_item_t it;
  bw_queue_stats_t s;
  assert_dbl_eq(bw_queue_pressure(q), 0.0, 0);
  put(q, 'a', 1);
  put(q, 'b', 1);
  put(q, 'c', 1);
  assert_dbl_eq(bw_queue_pressure(q), 0.75, 0);
  bw_queue_dequeue(q, &it);
  bw_queue_dequeue(q, &it);
  put(q, 'd', 1);
  s = stats(q);
  assert_u64_eq(s.size, 2);
  assert_u64_eq(s.max_size_seen, 3);
  assert_dbl_eq(bw_queue_pressure(q), 0.5, 0);
}

/* ==== deadlines ========================================================== */

static void expired_items_go_to_the_callback_and_are_never_returned(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 8, BW_QUEUE_REJECT);
  bw_queue_item_t it;
  bw_queue_stats_t s;
  int64_t t0 = BWT_T0_NS;

  assert_status(bw_queue_enqueue(q, IT('a'), 1, t0 + 100 * MS, NULL),
                BW_QUEUE_ADMITTED);
  assert_status(bw_queue_enqueue(q, IT('b'), 1, t0 + 200 * MS, NULL),
                BW_QUEUE_ADMITTED);
  assert_status(bw_queue_enqueue(q, IT('c'), 2, NONE, NULL), BW_QUEUE_ADMITTED);
  assert_status(bw_queue_enqueue(q, IT('d'), 0, t0 + 300 * MS, NULL),
                BW_QUEUE_ADMITTED);
  assert_status(bw_queue_enqueue(q, IT('e'), 3, t0 + 50 * MS, NULL),
                BW_QUEUE_ADMITTED);

  /* At +200 ms: d (0) is still good; a's deadline passed; b's deadline is
   * exactly now, and a deadline is over once now >= it (bw_deadline). */
  bw_clock_manual_advance(e->clock, 200 * MS);
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('d'));
  assert_u64_eq(e->nexp, 0);
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('c'));
  assert_u64_eq(e->nexp, 2);
  assert_ptr_equal(e->exp[0].data, IT('a'));
  assert_i64_eq(e->exp[0].deadline_ns, t0 + 100 * MS);
  assert_u64_eq(e->exp[0].priority, 1);
  assert_i64_eq(e->exp_now[0], t0 + 200 * MS);
  assert_ptr_equal(e->exp[1].data, IT('b'));
  assert_i64_eq(e->exp_now[1], t0 + 200 * MS);
  /* e expired long ago; the last dequeue finds nothing live. */
  assert_status(bw_queue_dequeue(q, &it), BW_E_NOTFOUND);
  assert_u64_eq(e->nexp, 3);
  assert_ptr_equal(e->exp[2].data, IT('e'));

  s = stats(q);
  assert_u64_eq(s.admitted, 5);
  assert_u64_eq(s.dequeued, 2);
  assert_u64_eq(s.expired, 3);
  assert_u64_eq(s.size, 0);
  assert_u64_eq(s.admitted, s.dequeued + s.shed + s.expired + s.size);
}

static void one_nanosecond_before_its_deadline_an_item_is_still_served(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 2, BW_QUEUE_REJECT);
  bw_queue_item_t it;
  assert_status(bw_queue_enqueue(q, IT('a'), 1, BWT_T0_NS + 1, NULL),
                BW_QUEUE_ADMITTED);
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('a'));
  /* Already expired on arrival: queued (enqueue reads no clock), expired at
   * dequeue. */
  assert_status(bw_queue_enqueue(q, IT('b'), 1, BWT_T0_NS, NULL),
                BW_QUEUE_ADMITTED);
  assert_status(bw_queue_dequeue(q, &it), BW_E_NOTFOUND);
  assert_u64_eq(e->nexp, 1);
  assert_ptr_equal(e->exp[0].data, IT('b'));
}

static void without_a_callback_dequeue_hands_the_expired_item_back(
    void **state) {
  qenv_t *e = *state;
  bw_queue_config_t cfg;
  bw_error_t err;
  bw_queue_item_t it;
  bw_queue_stats_t s;
  config(e, &cfg, 4, BW_QUEUE_REJECT);
  cfg.on_expired = NULL;
  e->q = bw_queue_new(&cfg, &err);
  assert_non_null(e->q);
  bw_queue_enqueue(e->q, IT('a'), 1, BWT_T0_NS + 10 * MS, NULL);
  bw_queue_enqueue(e->q, IT('b'), 2, NONE, NULL);
  bw_clock_manual_advance(e->clock, 10 * MS);
  assert_status(bw_queue_dequeue(e->q, &it), BW_E_DEADLINE);
  assert_ptr_equal(it.data, IT('a'));
  assert_status(bw_queue_dequeue(e->q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('b'));
  s = stats(e->q);
  assert_u64_eq(s.expired, 1);
  assert_u64_eq(s.dequeued, 1);
}

static void the_expiry_callback_may_use_the_queue(void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 4, BW_QUEUE_REJECT);
  bw_queue_item_t it;
  bw_queue_enqueue(q, IT('a'), 1, BWT_T0_NS, NULL);
  bw_queue_enqueue(q, IT('b'), 5, NONE, NULL);
  e->reenter = true; /* the callback enqueues `late` at priority 0 */
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_ptr_equal(it.data, &late); /* admitted during the call, more urgent */
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('b'));
}

static void shed_items_keep_their_deadline(void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 1, BW_QUEUE_DROP_OLDEST);
  bw_queue_item_t shed;
  bw_queue_enqueue(q, IT('a'), 1, BWT_T0_NS + 7, &shed);
  assert_status(bw_queue_enqueue(q, IT('b'), 1, NONE, &shed), BW_QUEUE_SHED);
  assert_i64_eq(shed.deadline_ns, BWT_T0_NS + 7);
  /* A shed item is counted as shed, never also as expired. */
  bw_clock_manual_advance(e->clock, 1000 * MS);
  assert_string_equal(drain(q), "b");
  assert_u64_eq(stats(q).expired, 0);
  assert_u64_eq(stats(q).shed, 1);
}

/* ==== with the gauge: the article's BackpressureStage.submit =================
 */

/* submit(): update the gauge from the queue's occupancy, refuse what the
 * regime's ceiling excludes, then offer the item to the queue. */
static int submit(bw_queue_t *q, bw_gauge_t *g, char c, uint32_t prio) {
  assert_true(bw_gauge_update(g, bw_queue_pressure(q)) >= 0);
  if (!bw_gauge_admits(g, prio)) return BW_QUEUE_REJECTED;
  return put(q, c, prio);
}

static void the_gauge_closes_the_door_on_batch_before_interactive_suffers(
    void **state) {
  qenv_t *e = *state;
  bw_queue_t *q = make(e, 10, BW_QUEUE_REJECT);
  bw_gauge_config_t gc;
  bw_gauge_t *g;
  bw_queue_item_t it;
  bw_gauge_config_init(&gc);
  gc.clock = e->clock;
  g = bw_gauge_new(&gc, NULL);
  assert_non_null(g);

  /* Six batch items (priority 7) fill the queue to 0.6. */
  for (char c = 'a'; c <= 'f'; c++)
    assert_status(submit(q, g, c, 7), BW_QUEUE_ADMITTED);
  assert_int_equal(bw_gauge_regime(g), BW_REGIME_NORMAL); /* read at 0.5 */
  /* The 7th submit reads 0.6: DEGRADED, ceiling 5 — batch is refused, the
   * default priority 5 still gets in. */
  assert_status(submit(q, g, 'g', 7), BW_QUEUE_REJECTED);
  assert_int_equal(bw_gauge_regime(g), BW_REGIME_DEGRADED);
  assert_status(submit(q, g, 'h', 5), BW_QUEUE_ADMITTED);
  assert_status(submit(q, g, 'i', 5), BW_QUEUE_ADMITTED);
  assert_status(submit(q, g, 'j', 5), BW_QUEUE_ADMITTED); /* reads 0.8 */
  /* 0.9: CRITICAL, ceiling 1 — only the interactive class. */
  assert_status(submit(q, g, 'k', 5), BW_QUEUE_REJECTED);
  assert_int_equal(bw_gauge_regime(g), BW_REGIME_CRITICAL);
  assert_status(submit(q, g, 'l', 1), BW_QUEUE_ADMITTED);
  assert_u64_eq(bw_queue_size(q), 10);
  /* The queue's own bound still holds in every regime. */
  assert_status(submit(q, g, 'm', 0), BW_QUEUE_REJECTED);

  /* Draining: 0.8 stays CRITICAL (>= 0.75); 0.7 comes down to DEGRADED. */
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('l'));
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_int_equal(bw_gauge_update(g, bw_queue_pressure(q)),
                   BW_REGIME_CRITICAL);
  assert_status(bw_queue_dequeue(q, &it), BW_OK);
  assert_int_equal(bw_gauge_update(g, bw_queue_pressure(q)),
                   BW_REGIME_DEGRADED);
  bw_gauge_free(g);
}

/* ==== out of memory ====================================================== */

static int oom_scenario(void *ctx) {
  bw_queue_config_t cfg;
  bw_error_t err;
  bw_queue_t *q;
  bw_queue_item_t it;
  (void)ctx;
  bw_queue_config_init(&cfg);
  cfg.max_size = 100;
  cfg.policy = BW_QUEUE_DROP_LOWEST;
  q = bw_queue_new(&cfg, &err);
  if (q == NULL) {
    assert_status(err.code, BW_E_NOMEM);
    assert_string_equal(err.field, "");
    return BW_E_NOMEM;
  }
  /* Nothing after creation allocates: a full cycle runs with memory short. */
  for (int i = 0; i < 300; i++)
    assert_true(bw_queue_enqueue(q, NULL, (uint32_t)(i % 7), NONE, &it) >= 0);
  while (bw_queue_dequeue(q, &it) == BW_OK) {
  }
  bw_queue_free(q);
  return BW_OK;
}

static void creation_survives_every_allocation_failure(void **state) {
  long n;
  (void)state;
  n = oom_walk(oom_scenario, NULL, false);
  assert_true(n > 3); /* queue, slots, level ends, name */
}

static void enqueue_and_dequeue_never_allocate(void **state) {
  bw_queue_config_t cfg;
  bw_queue_t *q;
  bw_queue_item_t it;
  (void)state;
  bw_queue_config_init(&cfg);
  cfg.max_size = 64;
  cfg.policy = BW_QUEUE_DROP_OLDEST;
  q = bw_queue_new(&cfg, NULL);
  assert_non_null(q);
  oom_fail_at(1, true); /* every allocation from now on fails */
  for (int i = 0; i < 1000; i++) {
    assert_true(bw_queue_enqueue(q, NULL, (uint32_t)(i % 13), NONE, &it) >= 0);
    if (i % 3 == 0) assert_status(bw_queue_dequeue(q, &it), BW_OK);
  }
  assert_i64_eq(oom_attempts(), 0);
  oom_fail_at(0, false);
  bw_queue_free(q);
  bw_queue_free(NULL);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value: empty) for a NULL queue, never a crash; the void functions
 * and the free are no-ops. */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_queue_stats_t s;
  bw_queue_item_t it;
  bw_error_t err;
  int x = 0;
  (void)state;
  bw_queue_config_init(NULL);
  assert_int_equal(bw_queue_config_validate(NULL, NULL), BW_E_INVAL);
  assert_null(bw_queue_new(NULL, NULL));
  assert_null(bw_queue_new(NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_int_equal(bw_queue_enqueue(NULL, &x, 0, 0, &it), BW_E_INVAL);
  assert_int_equal(bw_queue_dequeue(NULL, &it), BW_E_INVAL);
  assert_int_equal(bw_queue_size(NULL), 0);
  assert_true(bw_queue_pressure(NULL) == 0.0);
  assert_string_equal(bw_queue_name(NULL), "");
  memset(&s, 0xA5, sizeof s);
  bw_queue_stats(NULL, &s);
  assert_int_equal(s.admitted, 0);
  bw_queue_stats(NULL, NULL);
  assert_string_equal(bw_queue_policy_name((bw_queue_policy_t)99), "unknown");
  assert_string_equal(bw_admission_name(99), "unknown");
  bw_queue_free(NULL);
}

/* Asserts one queue_dropped event of queue "jobs" completely. */
static void assert_dropped(const bwt_event_t *ev, uint64_t rejected,
                           uint64_t shed, uint64_t expired, uint32_t max,
                           const char *policy, int64_t at_ns) {
  char reason[160];
  snprintf(reason, sizeof(reason),
           "%llu items dropped: %llu refused with the queue full, %llu shed, "
           "%llu expired",
           (unsigned long long)(rejected + shed + expired),
           (unsigned long long)rejected, (unsigned long long)shed,
           (unsigned long long)expired);
  assert_event(ev, BW_EV_QUEUE_DROPPED, reason);
  assert_string_equal(ev->name, "jobs");
  assert_int_equal(ev->field_count, 6);
  assert_field_uint(ev, 0, "count", rejected + shed + expired);
  assert_field_uint(ev, 1, "rejected", rejected);
  assert_field_uint(ev, 2, "shed", shed);
  assert_field_uint(ev, 3, "expired", expired);
  assert_field_uint(ev, 4, "max_size", max);
  assert_field_str(ev, 5, "policy", policy);
  assert_i64_eq(ev->mono_ns, at_ns);
  assert_i64_eq(ev->wall_ns, BWT_WALL0_NS);
}

/* Refused, shed and expired items are summarised as queue_dropped at most
 * once a second (a drop a second or more after the last summary, or the
 * creation, emits every drop since, itself included), and once more at the
 * free; a queue that drops nothing sends nothing. */
static void drops_are_summarised_at_most_once_a_second(void **state) {
  qenv_t *e = *state;
  bwt_recorder_t *rec = calloc(1, sizeof(*rec));
  bw_clock_t *wall = bw_clock_manual_new(BWT_WALL0_NS);
  bw_sink_t *sink;
  bw_queue_config_t cfg;
  bw_error_t err;
  bw_queue_item_t shed, it;
  assert_non_null(rec);
  assert_non_null(wall);
  sink = bw_sink_callback_new(bwt_record_cb, rec, &err);
  assert_non_null(sink);

  config(e, &cfg, 2, BW_QUEUE_DROP_OLDEST);
  cfg.on_expired = NULL; /* expired items come back from dequeue */
  cfg.sink = sink;
  cfg.wall_clock = wall;
  e->q = bw_queue_new(&cfg, &err);
  assert_non_null(e->q);
  assert_int_equal(
      bw_queue_enqueue(e->q, IT('a'), 0, BWT_T0_NS + 10 * MS, &shed),
      BW_QUEUE_ADMITTED);
  assert_int_equal(put(e->q, 'b', 0), BW_QUEUE_ADMITTED);
  assert_int_equal(put(e->q, 'c', 0), BW_QUEUE_SHED); /* a is shed */
  assert_int_equal(rec->count, 0);
  bw_clock_manual_advance(e->clock, 1000 * MS);
  assert_int_equal(put(e->q, 'd', 0), BW_QUEUE_SHED); /* b, and due */
  assert_int_equal(rec->count, 1);
  assert_dropped(bwt_event_at(rec, 0), 0, 2, 0, 2, "drop_oldest",
                 BWT_T0_NS + 1000 * MS);
  bw_clock_manual_advance(e->clock, 10 * MS);
  assert_int_equal(bw_queue_dequeue(e->q, &it), BW_OK);
  assert_ptr_equal(it.data, IT('c'));
  assert_int_equal(rec->count, 1);
  bw_queue_free(e->q); /* nothing since the last: nothing sent */
  e->q = NULL;
  assert_int_equal(rec->count, 1);

  /* Reject, and an expiry found by dequeue; both reported at the free. */
  config(e, &cfg, 1, BW_QUEUE_REJECT);
  cfg.on_expired = NULL;
  cfg.sink = sink;
  cfg.wall_clock = wall;
  e->q = bw_queue_new(&cfg, &err);
  assert_non_null(e->q);
  assert_int_equal(
      bw_queue_enqueue(e->q, IT('a'), 0, bw_clock_now(e->clock) + 5 * MS, NULL),
      BW_QUEUE_ADMITTED);
  assert_int_equal(bw_queue_enqueue(e->q, IT('b'), 0, NONE, NULL),
                   BW_QUEUE_REJECTED);
  bw_clock_manual_advance(e->clock, 5 * MS);
  assert_int_equal(bw_queue_dequeue(e->q, &it), BW_E_DEADLINE);
  assert_int_equal(rec->count, 1); /* 5 ms since the creation */
  bw_clock_manual_advance(e->clock, 1 * MS);
  bw_queue_free(e->q);
  e->q = NULL;
  assert_int_equal(rec->count, 2);
  assert_dropped(bwt_event_at(rec, 1), 1, 0, 1, 1, "reject",
                 BWT_T0_NS + 1016 * MS);

  make(e, 1, BW_QUEUE_REJECT); /* no sink: no events, same answers */
  assert_int_equal(put(e->q, 'a', 0), BW_QUEUE_ADMITTED);
  assert_int_equal(put(e->q, 'b', 0), BW_QUEUE_REJECTED);
  assert_int_equal(rec->count, 2);
  bw_sink_free(sink);
  bw_clock_free(wall);
  free(rec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(config_init_fills_the_documented_defaults),
      cmocka_unit_test_setup_teardown(
          bad_configuration_is_refused_naming_the_field, setup, teardown),
      cmocka_unit_test(names_of_policies_and_admissions),
      cmocka_unit_test_setup_teardown(
          dequeue_returns_the_most_urgent_and_the_oldest_among_equals, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          an_empty_queue_dequeues_nothing_and_leaves_out_untouched, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          items_are_returned_as_given_and_the_queue_keeps_no_reference, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          reject_refuses_the_newcomer_when_full_and_never_grows, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          drop_oldest_sheds_the_oldest_by_arrival_whatever_its_priority, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          drop_lowest_sheds_the_least_urgent_for_a_more_urgent_newcomer, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          drop_lowest_rejects_a_newcomer_that_is_not_strictly_more_urgent,
          setup, teardown),
      cmocka_unit_test_setup_teardown(a_queue_of_one_applies_each_policy, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          bad_enqueue_input_is_refused_and_counts_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(priorities_span_every_bitmap_word, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          max_size_seen_and_pressure_follow_the_depth, setup, teardown),
      cmocka_unit_test_setup_teardown(
          expired_items_go_to_the_callback_and_are_never_returned, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          one_nanosecond_before_its_deadline_an_item_is_still_served, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          without_a_callback_dequeue_hands_the_expired_item_back, setup,
          teardown),
      cmocka_unit_test_setup_teardown(the_expiry_callback_may_use_the_queue,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(shed_items_keep_their_deadline, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          the_gauge_closes_the_door_on_batch_before_interactive_suffers, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          drops_are_summarised_at_most_once_a_second, setup, teardown),
      cmocka_unit_test(creation_survives_every_allocation_failure),
      cmocka_unit_test(enqueue_and_dequeue_never_allocate),
  };
  assert_int_equal(oom_install(), BW_OK);
  return cmocka_run_group_tests(tests, NULL, NULL);
}

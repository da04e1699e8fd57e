/* Concurrency: many threads share one retry budget.
 *
 * Laws checked:
 *   every kind:   allowed + denied = try_retry calls made by the threads;
 *                 requests, successes, failures = the calls made.
 *   token bucket: tokens stay inside [0, max_tokens] at every instant (a
 *                 sampler thread reads them throughout), and no update is
 *                 lost: while never clamped, tokens = max - failures +
 *                 token_ratio * successes exactly.
 *   ratio:        within one window, retries allowed = allowance exactly,
 *                 where allowance is what a single thread would get (the
 *                 bound stated in budget.h: a grant is one CAS on the
 *                 window's retry count, made only if that count leaves
 *                 room, so racing threads can neither overshoot nor leave
 *                 room unused); the window holds exactly the requests and
 *                 retries counted. A stress test provokes the race at the
 *                 edge of the allowance.
 *   with a sink:  the retries_refused summaries emitted while the window
 *                 slides, and at the free, add up to `denied` exactly. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"

#define THREADS 4
/* More than the 64 exclusive and 16 shared stripes together: some threads
 * share a stripe and count in it with CAS. */
#define MANY_THREADS 100

typedef struct {
  bw_budget_t *b;
  bw_clock_t *clock;
  pthread_barrier_t *barrier;
  int rounds;
  int requests_per_round;
  int asks_per_round;
  uint64_t seed;
  int mode;
  uint64_t asks, allowed, requests, successes, failures;
} worker_t;

static bw_budget_t *make(bw_budget_kind_t kind, double a, double b,
                         bw_clock_t *clock) {
  bw_budget_config_t cfg;
  bw_error_t err;
  bw_budget_t *budget;
  bw_budget_config_init(&cfg);
  cfg.name = "shared";
  cfg.kind = kind;
  if (kind == BW_BUDGET_TOKEN_BUCKET) {
    cfg.max_tokens = a;
    cfg.token_ratio = b;
  } else {
    cfg.budget_percent = a;
    cfg.min_retries_per_sec = b;
    cfg.window_ms = 1000;
  }
  cfg.clock = clock;
  budget = bw_budget_new(&cfg, &err);
  if (budget == NULL) fprintf(stderr, "%s\n", err.message);
  assert_non_null(budget);
  return budget;
}

/* ---- token bucket -------------------------------------------------------- */

typedef struct {
  bw_budget_t *b;
  double max;
  atomic_bool stop;
  uint64_t samples, out_of_bounds;
} sampler_t;

static void *sample(void *arg) {
  sampler_t *s = arg;
  while (!atomic_load(&s->stop)) {
    bw_budget_stats_t st;
    bw_budget_stats(s->b, &st);
    if (!(st.tokens >= 0.0 && st.tokens <= s->max)) s->out_of_bounds++;
    s->samples++;
  }
  return NULL;
}

enum { ONLY_FAILURES, ONLY_SUCCESSES, MIXED };

static void *bucket_work(void *arg) {
  worker_t *w = arg;
  bw_rand_t r;
  bw_rand_seed(&r, w->seed);
  for (int i = 0; i < w->rounds; i++) {
    double x = bw_rand_double(&r);
    bool fail = w->mode == ONLY_FAILURES    ? true
                : w->mode == ONLY_SUCCESSES ? false
                                            : x < 0.3;
    bw_budget_on_request(w->b);
    w->requests++;
    if (fail) {
      bw_budget_on_failure(w->b);
      w->failures++;
    } else {
      bw_budget_on_success(w->b);
      w->successes++;
    }
    w->asks++;
    w->allowed += bw_budget_try_retry(w->b);
  }
  return NULL;
}

/* Runs THREADS workers in `mode` for n calls each; returns the totals. */
static worker_t run_bucket(bw_budget_t *b, int mode, int n, uint64_t seed) {
  worker_t w[THREADS], sum;
  pthread_t th[THREADS];
  memset(&sum, 0, sizeof(sum));
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].b = b;
    w[i].rounds = n;
    w[i].mode = mode;
    w[i].seed = seed + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, bucket_work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    sum.asks += w[i].asks;
    sum.allowed += w[i].allowed;
    sum.requests += w[i].requests;
    sum.successes += w[i].successes;
    sum.failures += w[i].failures;
  }
  return sum;
}

static void check_counts(bw_budget_t *b, const worker_t *t) {
  bw_budget_stats_t st;
  bw_budget_stats(b, &st);
  assert_int_equal(st.allowed + st.denied, t->asks);
  assert_int_equal(st.allowed, t->allowed);
  assert_int_equal(st.requests, t->requests);
  assert_int_equal(st.successes, t->successes);
  assert_int_equal(st.failures, t->failures);
}

static void token_bucket_loses_no_update(void **state) {
  bw_budget_t *b = make(BW_BUDGET_TOKEN_BUCKET, 1000000, 0.5, NULL);
  bw_budget_stats_t st;
  worker_t t;
  (void)state;
  /* 4 x 100k failures from 1e6: never clamped, so exactly 6e5 remain. */
  t = run_bucket(b, ONLY_FAILURES, 100000, 1);
  check_counts(b, &t);
  bw_budget_stats(b, &st);
  assert_true(st.tokens == 600000.0);
  assert_int_equal(t.allowed, t.asks); /* always above half */
  /* 4 x 100k successes of 0.5: exactly 2e5 more. */
  t = run_bucket(b, ONLY_SUCCESSES, 100000, 2);
  bw_budget_stats(b, &st);
  assert_true(st.tokens == 800000.0);
  assert_int_equal(st.successes, 400000);
  assert_int_equal(st.failures, 400000);
  assert_int_equal(st.requests, 800000);
  assert_int_equal(st.allowed + st.denied, 800000);
  bw_budget_free(b);
}

static void token_bucket_conserves_and_stays_in_bounds(void **state) {
  bw_budget_t *b = make(BW_BUDGET_TOKEN_BUCKET, 10, 0.1, NULL);
  sampler_t s;
  pthread_t sth;
  bw_budget_stats_t st;
  worker_t t;
  double milli;
  (void)state;
  memset(&s, 0, sizeof(s));
  s.b = b;
  s.max = 10;
  atomic_init(&s.stop, false);
  assert_int_equal(pthread_create(&sth, NULL, sample, &s), 0);
  /* 30% failures against refills of 0.1: the bucket hits both bounds
   * and crosses the half many times. */
  t = run_bucket(b, MIXED, 500000, 7);
  atomic_store(&s.stop, true);
  pthread_join(sth, NULL);
  check_counts(b, &t);
  assert_int_equal(s.out_of_bounds, 0);
  assert_true(s.samples > 0);
  bw_budget_stats(b, &st);
  assert_true(st.tokens >= 0.0 && st.tokens <= 10.0);
  milli = st.tokens * 1000.0;
  assert_true(milli == (double)(int64_t)(milli + 0.5)); /* whole 0.001s */
  /* Both answers happened: the run proved something. */
  assert_true(st.allowed > 0);
  assert_true(st.denied > 0);
  bw_budget_free(b);
}

/* ---- ratio --------------------------------------------------------------- */

/* Each round: all threads report requests, then (after a barrier, so the
 * allowance is fixed) all ask for retries at once. The main thread checks
 * the round between barriers and moves the clock a whole window on. */
static void *ratio_work(void *arg) {
  worker_t *w = arg;
  for (int round = 0; round < w->rounds; round++) {
    pthread_barrier_wait(w->barrier); /* main moved the clock */
    for (int i = 0; i < w->requests_per_round; i++) {
      bw_budget_on_request(w->b);
      bw_budget_on_failure(w->b);
    }
    w->requests += (uint64_t)w->requests_per_round;
    w->failures += (uint64_t)w->requests_per_round;
    pthread_barrier_wait(w->barrier); /* requests reported */
    pthread_barrier_wait(w->barrier); /* main checked them */
    for (int i = 0; i < w->asks_per_round; i++)
      w->allowed += bw_budget_try_retry(w->b);
    w->asks += (uint64_t)w->asks_per_round;
    pthread_barrier_wait(w->barrier); /* main checks */
  }
  return NULL;
}

static void ratio_round_trip(int threads, int rounds, int requests_per_thread,
                             int asks_per_thread) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  /* 20% of threads * requests_per_thread, no floor. */
  bw_budget_t *b = make(BW_BUDGET_RATIO, 20, 0, clock);
  worker_t *w = calloc((size_t)threads, sizeof(*w));
  pthread_t *th = calloc((size_t)threads, sizeof(*th));
  /* On the heap: if a check fails, the threads stay parked on memory that
   * the next test cannot reuse. */
  pthread_barrier_t *barrier = malloc(sizeof(*barrier));
  uint64_t requests = (uint64_t)threads * (uint64_t)requests_per_thread;
  uint64_t allowance = requests / 5; /* requests is a multiple of 5 */
  uint64_t allowed_before = 0, max_short = 0;
  worker_t sum;
  assert_non_null(w);
  assert_non_null(th);
  assert_non_null(barrier);
  assert_int_equal(requests % 5, 0);
  assert_true((uint64_t)threads * (uint64_t)asks_per_thread > allowance);
  assert_int_equal(pthread_barrier_init(barrier, NULL, (unsigned)threads + 1),
                   0);
  for (int i = 0; i < threads; i++) {
    w[i].b = b;
    w[i].barrier = barrier;
    w[i].rounds = rounds;
    w[i].requests_per_round = requests_per_thread;
    w[i].asks_per_round = asks_per_thread;
    assert_int_equal(pthread_create(&th[i], NULL, ratio_work, &w[i]), 0);
  }
  for (int round = 0; round < rounds; round++) {
    bw_budget_stats_t st;
    uint64_t got;
    /* A whole window on: the last round's counts are gone. */
    bw_clock_manual_advance(clock, 1000 * BW_NS_PER_MS);
    pthread_barrier_wait(barrier);
    pthread_barrier_wait(barrier); /* requests reported */
    bw_budget_stats(b, &st);
    assert_int_equal(st.window_requests, requests);
    assert_int_equal(st.window_retries, 0);
    pthread_barrier_wait(barrier); /* checked: the threads may ask */
    pthread_barrier_wait(barrier); /* retries asked */
    bw_budget_stats(b, &st);
    got = st.allowed - allowed_before;
    allowed_before = st.allowed;
    /* The bound of budget.h: never over the allowance, and (every thread
     * asks more than its share, after every request was counted) never
     * short of it either: exactly the allowance. */
    if (got != allowance) {
      fprintf(stderr,
              "round %d: %llu retries allowed, allowance %llu, %d threads\n",
              round, (unsigned long long)got, (unsigned long long)allowance,
              threads);
      fail();
    }
    if (allowance - got > max_short) max_short = allowance - got;
    assert_int_equal(st.window_retries, got);
    assert_int_equal(st.window_requests, requests);
  }
  memset(&sum, 0, sizeof(sum));
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    sum.asks += w[i].asks;
    sum.allowed += w[i].allowed;
    sum.requests += w[i].requests;
    sum.failures += w[i].failures;
  }
  check_counts(b, &sum);
  fprintf(stderr,
          "ratio, %d threads: largest shortfall of the allowance %llu\n",
          threads, (unsigned long long)max_short);
  pthread_barrier_destroy(barrier);
  free(barrier);
  free(w);
  free(th);
  bw_budget_free(b);
  bw_clock_free(clock);
}

static void ratio_never_exceeds_the_allowance(void **state) {
  (void)state;
  ratio_round_trip(THREADS, 200, 250, 200); /* allowance 200 of 800 asks */
}

/* Threads beyond the 64 exclusive stripes share stripes and count with
 * CAS (and clear a stale stripe with CAS): still nothing lost, still within
 * the bound. */
static void ratio_keeps_the_bound_with_shared_stripes(void **state) {
  (void)state;
  ratio_round_trip(MANY_THREADS, 20, 50, 20); /* allowance 1000 of 2000 */
}

/* Requests, failures and retries all at once while the clock moves: the
 * counts add up whatever the interleaving. */
static void *mixed_work(void *arg) {
  worker_t *w = arg;
  bw_rand_t r;
  bw_rand_seed(&r, w->seed);
  for (int i = 0; i < w->rounds; i++) {
    bw_clock_manual_advance(w->clock, 1000); /* 1 us */
    bw_budget_on_request(w->b);
    w->requests++;
    if (bw_rand_double(&r) < 0.5) {
      bw_budget_on_failure(w->b);
      w->failures++;
      w->asks++;
      w->allowed += bw_budget_try_retry(w->b);
    } else {
      bw_budget_on_success(w->b);
      w->successes++;
    }
  }
  return NULL;
}

static void ratio_conserves_while_the_window_slides(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_budget_t *b = make(BW_BUDGET_RATIO, 10, 5, clock);
  worker_t w[THREADS], sum;
  pthread_t th[THREADS];
  bw_budget_stats_t st;
  (void)state;
  memset(&sum, 0, sizeof(sum));
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].b = b;
    w[i].clock = clock;
    w[i].rounds = 500000; /* 2 s of clock in all: windows slide */
    w[i].seed = 100 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, mixed_work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    sum.asks += w[i].asks;
    sum.allowed += w[i].allowed;
    sum.requests += w[i].requests;
    sum.successes += w[i].successes;
    sum.failures += w[i].failures;
  }
  check_counts(b, &sum);
  bw_budget_stats(b, &st);
  assert_true(st.allowed > 0 && st.denied > 0);
  assert_true(st.window_requests > 0 && st.window_requests < st.requests);
  bw_budget_free(b);
  bw_clock_free(clock);
}

static _Atomic uint64_t g_refused_sum, g_refused_events;

static void on_refused(const bw_event_t *ev, void *ud) {
  (void)ud;
  if (ev->type != BW_EV_RETRIES_REFUSED || ev->field_count != 2) return;
  atomic_fetch_add(&g_refused_events, 1);
  atomic_fetch_add(&g_refused_sum, ev->fields[0].v.u);
}

static void refusal_summaries_add_up_while_the_window_slides(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_sink_t *sink = bw_sink_callback_new(on_refused, NULL, NULL);
  bw_budget_config_t cfg;
  bw_budget_t *b;
  worker_t w[THREADS];
  pthread_t th[THREADS];
  bw_budget_stats_t st;
  (void)state;
  assert_non_null(sink);
  bw_budget_config_init(&cfg);
  cfg.name = "summarised";
  cfg.kind = BW_BUDGET_RATIO;
  cfg.budget_percent = 10;
  cfg.min_retries_per_sec = 5;
  cfg.window_ms = 1000;
  cfg.clock = clock;
  cfg.sink = sink;
  b = bw_budget_new(&cfg, NULL);
  assert_non_null(b);
  for (int i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].b = b;
    w[i].clock = clock;
    w[i].rounds = 500000; /* 2 s of clock in all: summaries on the way */
    w[i].seed = 200 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, mixed_work, &w[i]), 0);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  bw_budget_stats(b, &st);
  assert_true(st.denied > 0);
  bw_budget_free(b); /* the last summary */
  assert_int_equal(atomic_load(&g_refused_sum), st.denied);
  assert_true(atomic_load(&g_refused_events) >= 2);
  assert_true(atomic_load(&g_refused_events) <= 3);
  bw_sink_free(sink);
  bw_clock_free(clock);
}

/* ---- ratio: the race at the edge of the allowance, provoked -------------
 *
 * Many short rounds whose allowance is small next to the asks, so that every
 * round ends with all threads asking at once exactly where the allowance
 * runs out, the only place a race can break the bound. A grant stored by
 * one core may sit in its store buffer while another core reads the window
 * (x86 lets a later load pass an earlier store), so without a full fence
 * between publishing a grant and re-reading the others, two threads can
 * both see room for the last retry, and a thread can even have several
 * grants the others do not see yet. More threads than cores: a thread
 * preempted in the middle of a decision races too. The rounds stop after
 * `max_rounds` or `seconds` of real time, whichever comes first; no timing
 * is asserted. */

typedef struct {
  bw_budget_t *b;
  pthread_barrier_t *barrier;
  atomic_int *stop;
  int requests_per_round;
  int asks_per_round;
  uint64_t asks, allowed, requests;
} stress_t;

static void *stress_work(void *arg) {
  stress_t *w = arg;
  for (;;) {
    pthread_barrier_wait(w->barrier); /* main moved the clock, or stops */
    if (atomic_load(w->stop)) break;
    for (int i = 0; i < w->requests_per_round; i++)
      bw_budget_on_request(w->b);
    w->requests += (uint64_t)w->requests_per_round;
    pthread_barrier_wait(w->barrier); /* requests reported */
    for (int i = 0; i < w->asks_per_round; i++)
      w->allowed += bw_budget_try_retry(w->b);
    w->asks += (uint64_t)w->asks_per_round;
    pthread_barrier_wait(w->barrier); /* main checks */
  }
  return NULL;
}

static double stress_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void ratio_stress(int threads, int max_rounds, double seconds) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_budget_t *b = make(BW_BUDGET_RATIO, 20, 0, clock);
  stress_t *w = calloc((size_t)threads, sizeof(*w));
  pthread_t *th = calloc((size_t)threads, sizeof(*th));
  pthread_barrier_t *barrier = malloc(sizeof(*barrier));
  atomic_int *stop = malloc(sizeof(*stop));
  /* 5 requests a thread: an allowance of one retry a thread, asked for 8
   * times a thread. */
  int requests_per_thread = 5, asks_per_thread = 8;
  uint64_t allowance = (uint64_t)threads * (uint64_t)requests_per_thread / 5;
  uint64_t allowed_before = 0, over = 0, over_old_doc = 0, over_old_test = 0;
  uint64_t short_rounds = 0, max_excess = 0, max_short = 0, total = 0;
  double deadline = stress_now_s() + seconds;
  int rounds = 0;
  stress_t sum;
  assert_non_null(w);
  assert_non_null(th);
  assert_non_null(barrier);
  assert_non_null(stop);
  atomic_init(stop, 0);
  assert_int_equal(pthread_barrier_init(barrier, NULL, (unsigned)threads + 1),
                   0);
  for (int i = 0; i < threads; i++) {
    w[i].b = b;
    w[i].barrier = barrier;
    w[i].stop = stop;
    w[i].requests_per_round = requests_per_thread;
    w[i].asks_per_round = asks_per_thread;
    assert_int_equal(pthread_create(&th[i], NULL, stress_work, &w[i]), 0);
  }
  for (;;) {
    bw_budget_stats_t st;
    uint64_t got;
    if (rounds >= max_rounds || stress_now_s() > deadline) {
      atomic_store(stop, 1);
      pthread_barrier_wait(barrier);
      break;
    }
    bw_clock_manual_advance(clock, 1000 * BW_NS_PER_MS);
    pthread_barrier_wait(barrier);
    pthread_barrier_wait(barrier); /* requests reported */
    pthread_barrier_wait(barrier); /* retries asked */
    bw_budget_stats(b, &st);
    got = st.allowed - allowed_before;
    allowed_before = st.allowed;
    total += got;
    rounds++;
    /* Undone attempts leave nothing behind: the window holds exactly the
     * retries granted. */
    assert_int_equal(st.window_retries, got);
    if (got > allowance) {
      over++;
      if (got - allowance > max_excess) max_excess = got - allowance;
      /* The bound documented before the fix: threads - 1 over. */
      if (got > allowance + (uint64_t)threads - 1) over_old_doc++;
      /* The bound the test checked before the fix: threads over. */
      if (got > allowance + (uint64_t)threads) over_old_test++;
    }
    if (got < allowance) {
      short_rounds++;
      if (allowance - got > max_short) max_short = allowance - got;
    }
  }
  memset(&sum, 0, sizeof(sum));
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    sum.asks += w[i].asks;
    sum.allowed += w[i].allowed;
    sum.requests += w[i].requests;
  }
  fprintf(stderr,
          "ratio stress, %d threads, %d rounds, allowance %llu of %d asks: "
          "%llu rounds over the allowance (largest excess %llu; %llu over "
          "allowance + threads - 1, %llu over allowance + threads), %llu "
          "rounds short (largest shortfall %llu)\n",
          threads, rounds, (unsigned long long)allowance,
          threads * asks_per_thread, (unsigned long long)over,
          (unsigned long long)max_excess, (unsigned long long)over_old_doc,
          (unsigned long long)over_old_test, (unsigned long long)short_rounds,
          (unsigned long long)max_short);
  {
    bw_budget_stats_t st;
    bw_budget_stats(b, &st);
    assert_int_equal(st.allowed, sum.allowed);
    assert_int_equal(st.allowed + st.denied, sum.asks);
    assert_int_equal(st.requests, sum.requests);
  }
  assert_true(rounds > 0);
  /* The bound of budget.h: never one retry over the allowance... */
  assert_int_equal(over, 0);
  /* ...and never short of it: a grant is refused only when the window is
   * full. */
  assert_true(max_short <= (uint64_t)threads - 1);
  assert_int_equal(short_rounds, 0);
  assert_int_equal(total, sum.allowed);
  pthread_barrier_destroy(barrier);
  free(stop);
  free(barrier);
  free(w);
  free(th);
  bw_budget_free(b);
  bw_clock_free(clock);
}

/* Two threads, one a core: the store-buffer race. */
static void ratio_stress_two_threads_never_exceed(void **state) {
  (void)state;
  ratio_stress(2, 200000, 4.0);
}

/* Eight threads on the VM's two cores: preemption inside a decision too. */
static void ratio_stress_eight_threads_never_exceed(void **state) {
  (void)state;
  ratio_stress(8, 100000, 4.0);
}

/* One thread counts every request (its stripe is the only one in use: the
 * budget's fast path for that thread's decisions) while it and other
 * threads, which count none, race for the retries: the counter starts
 * asking once every other thread has made its first ask (a barrier's
 * wake-up would let one side finish first). Every round grants the
 * allowance exactly: 500 requests at 20 %, 100 retries, never one more or
 * less. */
typedef struct {
  bw_budget_t *b;
  pthread_barrier_t *barrier;
  atomic_int *stop, *ready, *go;
  int asks_per_round;
  uint64_t asks, allowed;
} asker_t;

/* Waits (bounded) until *flag reaches v. */
static void spin_until(atomic_int *flag, int v) {
  for (long i = 0; i < 100000000L && atomic_load(flag) < v; i++) {
  }
}

static void *asker_work(void *arg) {
  asker_t *w = arg;
  for (int round = 1;; round++) {
    pthread_barrier_wait(w->barrier); /* requests counted, or stop */
    if (atomic_load(w->stop)) break;
    atomic_fetch_add(w->ready, 1);
    spin_until(w->go, round);
    for (int i = 0; i < w->asks_per_round; i++) {
      w->allowed += bw_budget_try_retry(w->b);
      if (i == 0) atomic_fetch_add(w->ready, 1); /* asking: main starts */
    }
    w->asks += (uint64_t)w->asks_per_round;
    pthread_barrier_wait(w->barrier); /* main checks */
  }
  return NULL;
}

static void one_counter_and_askers(int askers, int asks_each) {
  enum { REQUESTS = 500, ALLOWANCE = 100, MAX_ASKERS = 7 };
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_budget_t *b = make(BW_BUDGET_RATIO, 20, 0, clock);
  asker_t w[MAX_ASKERS];
  pthread_t th[MAX_ASKERS];
  pthread_barrier_t barrier;
  atomic_int stop, ready, go;
  uint64_t allowed_before = 0, granted = 0, wrong = 0, asks = 0, mine = 0;
  double deadline = stress_now_s() + 2.0;
  int rounds = 0;
  assert_true(askers <= MAX_ASKERS);
  atomic_init(&stop, 0);
  atomic_init(&ready, 0);
  atomic_init(&go, 0);
  assert_int_equal(pthread_barrier_init(&barrier, NULL, (unsigned)askers + 1),
                   0);
  for (int i = 0; i < askers; i++) {
    memset(&w[i], 0, sizeof(w[i]));
    w[i].b = b;
    w[i].barrier = &barrier;
    w[i].stop = &stop;
    w[i].ready = &ready;
    w[i].go = &go;
    w[i].asks_per_round = asks_each;
    assert_int_equal(pthread_create(&th[i], NULL, asker_work, &w[i]), 0);
  }
  while (rounds < 20000 && stress_now_s() < deadline) {
    bw_budget_stats_t st;
    bw_clock_manual_advance(clock, 1000 * BW_NS_PER_MS); /* a new window */
    for (int i = 0; i < REQUESTS; i++)
      bw_budget_on_request(b);
    atomic_store(&ready, 0);
    pthread_barrier_wait(&barrier);
    spin_until(&ready, askers);
    atomic_store(&go, rounds + 1);
    spin_until(&ready, 2 * askers);
    for (int i = 0; i < asks_each; i++)
      mine += bw_budget_try_retry(b);
    asks += (uint64_t)asks_each;
    pthread_barrier_wait(&barrier);
    bw_budget_stats(b, &st);
    wrong += st.allowed - allowed_before != ALLOWANCE;
    wrong += st.window_retries != ALLOWANCE;
    allowed_before = st.allowed;
    rounds++;
  }
  atomic_store(&stop, 1);
  pthread_barrier_wait(&barrier);
  granted = mine;
  for (int i = 0; i < askers; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    granted += w[i].allowed;
    asks += w[i].asks;
  }
  fprintf(stderr,
          "ratio, one counter and %d askers: %d rounds, the counter granted "
          "%llu of %llu\n",
          askers, rounds, (unsigned long long)mine,
          (unsigned long long)granted);
  assert_true(rounds > 0);
  assert_int_equal(wrong, 0);
  {
    bw_budget_stats_t st;
    bw_budget_stats(b, &st);
    assert_int_equal(st.allowed, (uint64_t)rounds * ALLOWANCE);
    assert_int_equal(st.allowed, granted);
    assert_int_equal(st.allowed + st.denied, asks);
    assert_int_equal(st.requests, (uint64_t)rounds * REQUESTS);
  }
  pthread_barrier_destroy(&barrier);
  bw_budget_free(b);
  bw_clock_free(clock);
}

static void ratio_one_counter_and_askers_grant_exactly(void **state) {
  (void)state;
  one_counter_and_askers(1, 100); /* one a core */
  one_counter_and_askers(3, 30);  /* preempted inside decisions too */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ratio_one_counter_and_askers_grant_exactly),
      cmocka_unit_test(token_bucket_loses_no_update),
      cmocka_unit_test(token_bucket_conserves_and_stays_in_bounds),
      cmocka_unit_test(ratio_never_exceeds_the_allowance),
      cmocka_unit_test(ratio_keeps_the_bound_with_shared_stripes),
      cmocka_unit_test(ratio_conserves_while_the_window_slides),
      cmocka_unit_test(refusal_summaries_add_up_while_the_window_slides),
      cmocka_unit_test(ratio_stress_two_threads_never_exceed),
      cmocka_unit_test(ratio_stress_eight_threads_never_exceed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

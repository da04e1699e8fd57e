/* Concurrency: one shared-memory segment hammered by forked worker processes
 * and by threads.
 *
 * Processes (pre-fork workers):
 * - N = 4 workers take turns failing on one breaker (failure_threshold 8):
 *   it opens after 8 failures IN TOTAL (2 per worker, not 8 per worker),
 *   and every worker's next call is rejected.
 * - N = 4 workers fail as fast as they can, all at once: the breaker opens
 *   exactly once; the failures it counted (non-stale) are at least the
 *   threshold and at most threshold + N - 1 (one in flight per other
 *   worker), equal to stats.consecutive_failures; every worker sees OPEN.
 * - A worker SIGKILLed while holding the half-open probe, or limit slots:
 *   the slots stay taken until the lease ends, then another process gets
 *   them. These two run on a clock whose reading lives in shared memory
 *   (moved by the parent), so they are exact: no timing is assumed.
 * - 4 workers open-or-create one segment name and one breaker at the same
 *   moment: exactly one creates the segment, the breaker is made once, and
 *   every worker's failure lands in it.
 * - 3 workers hammer a limit of 2 slots: never more than 2 inside at once
 *   (counted by the workers in shared memory); admitted + rejected = asks,
 *   admitted = releases, in_flight = 0 at the end.
 * Threads (also run under ThreadSanitizer):
 * - breaker: asks = admitted + rejected; calls = successes + failures +
 *   ignored = admitted; stale as counted by the threads;
 * - limit: never more than max_concurrent inside; in_flight 0 at the end;
 * - budget: tokens within [0, max_tokens] at every read; counters exact.
 * Every wait is bounded in count and time; no timing is asserted. */
/* MAP_ANONYMOUS for the workers' shared results (not in POSIX 2008). */
#define _DEFAULT_SOURCE 1

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "breakwater/shm.h"
#include "bw_test.h"
#include "shm_test.h"

#define MS BW_NS_PER_MS
#define WORKERS 4
#define THREADS 4

typedef struct shared_s {
  _Atomic int64_t now; /* the shared clock */
  _Atomic int turn;
  _Atomic int ready;
  _Atomic int go;
  _Atomic int flag;
  _Atomic long ok_failures[WORKERS];
  _Atomic long all_failures[WORKERS];
  _Atomic long stale[WORKERS];
  _Atomic long rejected[WORKERS];
  _Atomic long admitted[WORKERS];
  _Atomic int saw_open[WORKERS];
  _Atomic int held;
  _Atomic long violations;
} shared_t;

typedef struct env_s {
  char name[64];
  shared_t *sh;
  bw_clock_t shared_clock;
  bw_shm_t *seg;
} env_t;

static int64_t shared_now(const bw_clock_t *c) {
  return atomic_load((_Atomic int64_t *)c->data);
}

static int setup(void **state) {
  env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  bwt_shm_fresh_name(e->name, sizeof(e->name), "bw_conc_shm");
  e->sh = mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (e->sh == MAP_FAILED) return -1;
  memset(e->sh, 0, sizeof(*e->sh));
  atomic_store(&e->sh->now, BWT_T0_NS);
  e->shared_clock.now_ns = shared_now;
  e->shared_clock.data = (void *)&e->sh->now;
  e->seg = bwt_shm_open(e->name, BW_SHM_CREATE);
  if (e->seg == NULL) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env_t *e = *state;
  char race[80];
  snprintf(race, sizeof(race), "%s_race", e->name);
  bw_shm_unlink(race, NULL); /* if its test failed half-way */
  bw_shm_close(e->seg);
  bw_shm_unlink(e->name, NULL);
  munmap(e->sh, sizeof(shared_t));
  free(e);
  return 0;
}

static void nap(void) {
  struct timespec ts = {0, 50000}; /* 50 us */
  nanosleep(&ts, NULL);
}

/* Waits (bounded: 200000 naps, ~10 s or more) until *v == want. */
static bool wait_for(_Atomic int *v, int want) {
  for (long i = 0; i < 200000; i++) {
    if (atomic_load(v) == want) return true;
    nap();
  }
  return false;
}

static void reap(pid_t *pids, int n) {
  for (int i = 0; i < n; i++) {
    int status = 0;
    assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fail_msg("worker %d: %s %d", i,
               WIFEXITED(status) ? "exit status" : "killed by signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  }
}

/* In a worker: counts itself ready, then waits for the parent's go (exits
 * with 10 when it never comes). */
static void worker_start(env_t *e) {
  atomic_fetch_add(&e->sh->ready, 1);
  if (!wait_for(&e->sh->go, 1)) _exit(10);
}

/* In the parent: once the n workers are ready, starts them together and
 * waits for them all (each must exit 0). */
static void start_and_reap(env_t *e, pid_t *pids, int n) {
  assert_true(wait_for(&e->sh->ready, n));
  atomic_store(&e->sh->go, 1);
  reap(pids, n);
}

static bw_shm_breaker_t *mk_brk(bw_shm_t *seg, uint32_t threshold,
                                const bw_clock_t *clock) {
  bw_breaker_config_t cfg;
  bw_error_t err;
  bw_shm_breaker_t *b;
  bw_breaker_config_init(&cfg);
  cfg.name = "partner";
  cfg.failure_threshold = threshold;
  cfg.break_ms = 60000; /* stays open for the whole test */
  cfg.half_open_timeout_ms = 200;
  cfg.clock = clock;
  b = bw_shm_breaker_new(seg, &cfg, &err);
  if (b == NULL) fail_msg("bw_shm_breaker_new: %s", err.message);
  return b;
}

/* After the workers: OPEN, opened once, with these counts, and every
 * worker rejected once. Returns the stats. */
static bw_breaker_stats_t assert_opened_once(bw_shm_breaker_t *b, long failures,
                                             long consecutive, long admitted) {
  bw_breaker_stats_t s;
  bw_shm_breaker_stats(b, &s);
  assert_state(s.state, BW_OPEN);
  assert_u64_eq(s.opens, 1);
  assert_u64_eq(s.failures, failures);
  assert_u64_eq(s.consecutive_failures, consecutive);
  assert_u64_eq(s.rejected, WORKERS);
  assert_u64_eq(s.admitted, admitted);
  return s;
}

/* ==== processes =========================================================== */

static void workers_taking_turns_open_it_after_threshold_in_total(
    void **state) {
  env_t *e = *state;
  enum { THRESHOLD = 8, TURNS = THRESHOLD + WORKERS };
  bw_shm_breaker_t *b = mk_brk(e->seg, THRESHOLD, NULL);
  pid_t pids[WORKERS];
  long ok = 0;
  for (int w = 0; w < WORKERS; w++) {
    pids[w] = fork();
    assert_true(pids[w] >= 0);
    if (pids[w] == 0) {
      for (int t = w; t < TURNS; t += WORKERS) {
        bw_permit_t p;
        if (!wait_for(&e->sh->turn, t)) _exit(10);
        if (bw_shm_breaker_acquire(b, &p) == BW_OK) {
          if (bw_shm_breaker_release(b, &p, BW_FAILURE) != BW_OK) _exit(11);
          atomic_fetch_add(&e->sh->ok_failures[w], 1);
        } else {
          atomic_fetch_add(&e->sh->rejected[w], 1);
          if (bw_shm_breaker_state(b) != BW_OPEN) _exit(12);
        }
        atomic_store(&e->sh->turn, t + 1);
      }
      _exit(0);
    }
  }
  reap(pids, WORKERS);
  for (int w = 0; w < WORKERS; w++) {
    /* Turns 0..7 fail (2 per worker); turns 8..11 (one per worker) are
     * rejected: every worker saw the open breaker at its next call. */
    assert_i64_eq(atomic_load(&e->sh->ok_failures[w]), THRESHOLD / WORKERS);
    assert_i64_eq(atomic_load(&e->sh->rejected[w]), 1);
    ok += atomic_load(&e->sh->ok_failures[w]);
  }
  assert_i64_eq(ok, THRESHOLD);
  assert_opened_once(b, THRESHOLD, THRESHOLD, THRESHOLD);
  bw_shm_breaker_free(b);
}

static void workers_failing_at_once_open_it_once_for_all(void **state) {
  env_t *e = *state;
  enum { THRESHOLD = 50 };
  bw_shm_breaker_t *b = mk_brk(e->seg, THRESHOLD, NULL);
  pid_t pids[WORKERS];
  bw_breaker_stats_t s;
  long ok = 0, all = 0, stale = 0;
  for (int w = 0; w < WORKERS; w++) {
    pids[w] = fork();
    assert_true(pids[w] >= 0);
    if (pids[w] == 0) {
      bw_permit_t p;
      worker_start(e);
      for (long i = 0; i < 1000000; i++) {
        int rc;
        if (bw_shm_breaker_acquire(b, &p) != BW_OK) {
          atomic_store(&e->sh->saw_open[w], 1);
          break;
        }
        rc = bw_shm_breaker_release(b, &p, BW_FAILURE);
        atomic_fetch_add(&e->sh->all_failures[w], 1);
        if (rc == BW_OK)
          atomic_fetch_add(&e->sh->ok_failures[w], 1);
        else if (rc == BW_E_STALE)
          atomic_fetch_add(&e->sh->stale[w], 1);
        else
          _exit(11);
      }
      /* After the rejection the state is OPEN for this worker too. */
      if (bw_shm_breaker_state(b) != BW_OPEN) _exit(12);
      _exit(0);
    }
  }
  start_and_reap(e, pids, WORKERS);
  for (int w = 0; w < WORKERS; w++) {
    assert_int_equal(atomic_load(&e->sh->saw_open[w]), 1);
    ok += atomic_load(&e->sh->ok_failures[w]);
    all += atomic_load(&e->sh->all_failures[w]);
    stale += atomic_load(&e->sh->stale[w]);
  }
  assert_true(ok >= THRESHOLD);
  assert_true(ok <= THRESHOLD + WORKERS - 1);
  s = assert_opened_once(b, all, ok, all);
  assert_u64_eq(s.stale, stale);
  bw_shm_breaker_free(b);
}

static void a_probe_held_by_a_killed_worker_expires(void **state) {
  env_t *e = *state;
  bw_shm_breaker_t *b = mk_brk(e->seg, 1, &e->shared_clock);
  bw_permit_t p;
  pid_t pid;
  int status;
  assert_status(bw_shm_breaker_acquire(b, &p), BW_OK);
  bw_shm_breaker_release(b, &p, BW_FAILURE);
  assert_state(bw_shm_breaker_state(b), BW_OPEN);
  atomic_fetch_add(&e->sh->now, 60000 * MS); /* the break is over */
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* A worker that opens the segment by name and attaches on its own. */
    bw_shm_config_t sc;
    bw_error_t err;
    bw_shm_t *seg;
    bw_shm_breaker_t *mine;
    bw_permit_t q;
    bw_shm_config_init(&sc);
    sc.name = e->name;
    sc.mode = BW_SHM_ATTACH;
    seg = bw_shm_open(&sc, &err);
    if (seg == NULL) _exit(10);
    mine = mk_brk(seg, 1, &e->shared_clock);
    if (bw_shm_breaker_acquire(mine, &q) != BW_OK) _exit(11);
    if (q.kind != BW_PERMIT_PROBE) _exit(12);
    atomic_store(&e->sh->flag, 1);
    for (int i = 0; i < 600; i++)
      sleep(1); /* killed long before */
    _exit(13);
  }
  assert_true(wait_for(&e->sh->flag, 1));
  assert_state(bw_shm_breaker_state(b), BW_HALF_OPEN);
  assert_status(bw_shm_breaker_acquire(b, &p), BW_E_OPEN); /* probe busy */
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  /* The dead worker's lease still holds until half_open_timeout_ms ... */
  atomic_fetch_add(&e->sh->now, 199 * MS);
  assert_status(bw_shm_breaker_acquire(b, &p), BW_E_OPEN);
  /* ... and then another process probes, and closes it: not stuck. */
  atomic_fetch_add(&e->sh->now, 1 * MS);
  assert_status(bw_shm_breaker_acquire(b, &p), BW_OK);
  assert_u64_eq(p.kind, BW_PERMIT_PROBE);
  assert_status(bw_shm_breaker_release(b, &p, BW_SUCCESS), BW_OK);
  assert_state(bw_shm_breaker_state(b), BW_CLOSED);
  bw_shm_breaker_free(b);
}

static void limit_slots_held_by_a_killed_worker_come_back(void **state) {
  env_t *e = *state;
  bw_shm_limit_config_t lc;
  bw_shm_limit_stats_t s;
  bw_error_t err;
  bw_shm_limit_t *l;
  bw_permit_t a, b;
  pid_t pid;
  bw_shm_limit_config_init(&lc);
  lc.name = "db";
  lc.max_concurrent = 2;
  lc.lease_ms = 300;
  lc.clock = &e->shared_clock;
  l = bw_shm_limit_new(e->seg, &lc, &err);
  assert_non_null(l);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    bw_permit_t x, y;
    if (bw_shm_limit_try_acquire(l, &x) != BW_OK) _exit(10);
    if (bw_shm_limit_try_acquire(l, &y) != BW_OK) _exit(11);
    atomic_store(&e->sh->flag, 1);
    for (int i = 0; i < 600; i++)
      sleep(1);
    _exit(13);
  }
  assert_true(wait_for(&e->sh->flag, 1));
  assert_status(bw_shm_limit_try_acquire(l, &a), BW_E_FULL);
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_int_equal(waitpid(pid, NULL, 0), pid);
  atomic_fetch_add(&e->sh->now, 299 * MS);
  assert_status(bw_shm_limit_try_acquire(l, &a), BW_E_FULL);
  atomic_fetch_add(&e->sh->now, 1 * MS);
  assert_status(bw_shm_limit_try_acquire(l, &a), BW_OK);
  assert_status(bw_shm_limit_try_acquire(l, &b), BW_OK);
  bw_shm_limit_stats(l, &s);
  assert_u64_eq(s.reclaimed, 2);
  assert_u64_eq(s.in_flight, 2);
  assert_status(bw_shm_limit_release(l, &a, BW_LIMIT_SUCCESS), BW_OK);
  assert_status(bw_shm_limit_release(l, &b, BW_LIMIT_SUCCESS), BW_OK);
  bw_shm_limit_stats(l, &s);
  assert_u64_eq(s.in_flight, 0);
  bw_shm_limit_free(l);
}

static void workers_never_hold_more_than_the_limit(void **state) {
  env_t *e = *state;
  enum { PROCS = 3, ITERS = 20000, MAX = 2 };
  bw_shm_limit_config_t lc;
  bw_shm_limit_stats_t s;
  bw_error_t err;
  bw_shm_limit_t *l;
  pid_t pids[PROCS];
  long admitted = 0, rejected = 0;
  bw_shm_limit_config_init(&lc);
  lc.name = "db";
  lc.max_concurrent = MAX;
  lc.lease_ms = 3600000; /* no lease ends during the test */
  l = bw_shm_limit_new(e->seg, &lc, &err);
  assert_non_null(l);
  for (int w = 0; w < PROCS; w++) {
    pids[w] = fork();
    assert_true(pids[w] >= 0);
    if (pids[w] == 0) {
      worker_start(e);
      for (int i = 0; i < ITERS; i++) {
        bw_permit_t p;
        if (bw_shm_limit_try_acquire(l, &p) != BW_OK) {
          atomic_fetch_add(&e->sh->rejected[w], 1);
          continue;
        }
        atomic_fetch_add(&e->sh->admitted[w], 1);
        if (atomic_fetch_add(&e->sh->held, 1) + 1 > MAX)
          atomic_fetch_add(&e->sh->violations, 1);
        atomic_fetch_sub(&e->sh->held, 1);
        if (bw_shm_limit_release(l, &p, BW_LIMIT_SUCCESS) != BW_OK) _exit(11);
      }
      _exit(0);
    }
  }
  start_and_reap(e, pids, PROCS);
  for (int w = 0; w < PROCS; w++) {
    admitted += atomic_load(&e->sh->admitted[w]);
    rejected += atomic_load(&e->sh->rejected[w]);
  }
  assert_i64_eq(atomic_load(&e->sh->violations), 0);
  assert_i64_eq(admitted + rejected, (long)PROCS * ITERS);
  bw_shm_limit_stats(l, &s);
  assert_u64_eq(s.admitted, admitted);
  assert_u64_eq(s.rejected, rejected);
  assert_u64_eq(s.successes, admitted);
  assert_u64_eq(s.expired, 0);
  assert_u64_eq(s.in_flight, 0);
  bw_shm_limit_free(l);
}

static void workers_opening_at_once_share_one_segment_and_breaker(
    void **state) {
  env_t *e = *state;
  char name[80];
  pid_t pids[WORKERS];
  bw_shm_config_t sc;
  bw_error_t err;
  bw_shm_t *seg;
  bw_shm_breaker_t *b;
  bw_breaker_stats_t s;
  bw_shm_stats_t ss;
  long created = 0;
  snprintf(name, sizeof(name), "%s_race", e->name);
  bw_shm_unlink(name, NULL);
  for (int w = 0; w < WORKERS; w++) {
    pids[w] = fork();
    assert_true(pids[w] >= 0);
    if (pids[w] == 0) {
      bw_permit_t p;
      worker_start(e);
      /* Every worker opens-or-creates the same name at the same moment:
       * one creates, the others attach (waiting for its header). */
      bw_shm_config_init(&sc);
      sc.name = name;
      seg = bw_shm_open(&sc, &err);
      if (seg == NULL) _exit(11);
      bw_shm_stats(seg, &ss);
      if (ss.created) atomic_fetch_add(&e->sh->admitted[w], 1);
      b = mk_brk(seg, 100, NULL);
      if (bw_shm_breaker_acquire(b, &p) != BW_OK) _exit(12);
      if (bw_shm_breaker_release(b, &p, BW_FAILURE) != BW_OK) _exit(13);
      _exit(0);
    }
  }
  start_and_reap(e, pids, WORKERS);
  for (int w = 0; w < WORKERS; w++)
    created += atomic_load(&e->sh->admitted[w]);
  assert_i64_eq(created, 1);
  bw_shm_config_init(&sc);
  sc.name = name;
  sc.mode = BW_SHM_ATTACH;
  seg = bw_shm_open(&sc, &err);
  assert_non_null(seg);
  bw_shm_stats(seg, &ss);
  assert_u64_eq(ss.objects, 1); /* one breaker, made once */
  b = mk_brk(seg, 100, NULL);
  bw_shm_breaker_stats(b, &s);
  assert_u64_eq(s.failures, WORKERS);
  assert_u64_eq(s.consecutive_failures, WORKERS);
  bw_shm_breaker_free(b);
  bw_shm_close(seg);
  assert_status(bw_shm_unlink(name, NULL), BW_OK);
}

/* ==== threads ============================================================= */

typedef struct tstate_s {
  bw_shm_breaker_t *b;
  bw_shm_limit_t *l;
  bw_shm_budget_t *bud;
  _Atomic int *held;
  _Atomic long *violations;
  uint64_t seed;
  long asks, admitted, rejected, succ, fail, ign, stale;
  long tries, ok_retries, bad_tokens;
} tstate_t;

#define ITERS_T 20000

static void *brk_thread(void *arg) {
  tstate_t *t = arg;
  bw_rand_t r;
  bw_rand_seed(&r, t->seed);
  for (int i = 0; i < ITERS_T; i++) {
    bw_permit_t p;
    int64_t x = bw_rand_range(&r, 0, 99);
    bw_outcome_t o = x < 70 ? BW_SUCCESS : x < 90 ? BW_FAILURE : BW_IGNORED;
    int rc;
    t->asks++;
    if (bw_shm_breaker_acquire(t->b, &p) != BW_OK) {
      t->rejected++;
      continue;
    }
    t->admitted++;
    rc = bw_shm_breaker_release(t->b, &p, o);
    if (rc == BW_E_STALE) t->stale++;
    if (o == BW_SUCCESS) t->succ++;
    if (o == BW_FAILURE) t->fail++;
    if (o == BW_IGNORED) t->ign++;
  }
  return NULL;
}

static void threads_conserve_breaker_calls(void **state) {
  env_t *e = *state;
  bw_breaker_config_t cfg;
  bw_error_t err;
  bw_breaker_stats_t s;
  pthread_t th[THREADS];
  tstate_t ts[THREADS];
  long asks = 0, adm = 0, rej = 0, su = 0, fa = 0, ig = 0, st = 0;
  bw_breaker_config_init(&cfg);
  cfg.name = "hammered";
  cfg.failure_threshold = 3;
  cfg.break_ms = 1; /* cycles through every state */
  cfg.half_open_max_calls = 2;
  cfg.success_threshold = 2;
  memset(ts, 0, sizeof(ts));
  for (int i = 0; i < THREADS; i++) {
    ts[i].b = bw_shm_breaker_new(e->seg, &cfg, &err);
    assert_non_null(ts[i].b);
    ts[i].seed = 1000 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, brk_thread, &ts[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    asks += ts[i].asks;
    adm += ts[i].admitted;
    rej += ts[i].rejected;
    su += ts[i].succ;
    fa += ts[i].fail;
    ig += ts[i].ign;
    st += ts[i].stale;
  }
  bw_shm_breaker_stats(ts[0].b, &s);
  assert_i64_eq(asks, (long)THREADS * ITERS_T);
  assert_u64_eq(s.admitted, adm);
  assert_u64_eq(s.rejected, rej);
  assert_u64_eq(s.admitted + s.rejected, asks);
  assert_u64_eq(s.successes, su);
  assert_u64_eq(s.failures, fa);
  assert_u64_eq(s.ignored, ig);
  assert_u64_eq(s.calls, s.successes + s.failures + s.ignored);
  assert_u64_eq(s.calls, s.admitted);
  assert_u64_eq(s.stale, st);
  assert_true(s.opens >= 1);
  assert_u64_eq(bw_limit_in_flight(bw_shm_breaker_as_limit(ts[0].b)), 0);
  for (int i = 0; i < THREADS; i++)
    bw_shm_breaker_free(ts[i].b);
}

static void *lim_thread(void *arg) {
  tstate_t *t = arg;
  bw_rand_t r;
  bw_rand_seed(&r, t->seed);
  for (int i = 0; i < ITERS_T; i++) {
    bw_permit_t p;
    t->asks++;
    if (bw_shm_limit_try_acquire(t->l, &p) != BW_OK) {
      t->rejected++;
      continue;
    }
    t->admitted++;
    if (atomic_fetch_add(t->held, 1) + 1 > 3)
      atomic_fetch_add(t->violations, 1);
    atomic_fetch_sub(t->held, 1);
    if (bw_shm_limit_release(
            t->l, &p, (bw_limit_outcome_t)bw_rand_range(&r, 0, 2)) != BW_OK)
      t->stale++;
  }
  return NULL;
}

static void threads_never_exceed_the_limit(void **state) {
  env_t *e = *state;
  bw_shm_limit_config_t lc;
  bw_shm_limit_stats_t s;
  bw_error_t err;
  pthread_t th[THREADS];
  tstate_t ts[THREADS];
  _Atomic int held = 0;
  _Atomic long violations = 0;
  long adm = 0, rej = 0;
  bw_shm_limit_config_init(&lc);
  lc.name = "slots";
  lc.max_concurrent = 3;
  lc.lease_ms = 3600000;
  memset(ts, 0, sizeof(ts));
  for (int i = 0; i < THREADS; i++) {
    ts[i].l = bw_shm_limit_new(e->seg, &lc, &err);
    assert_non_null(ts[i].l);
    ts[i].held = &held;
    ts[i].violations = &violations;
    ts[i].seed = 2000 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, lim_thread, &ts[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    adm += ts[i].admitted;
    rej += ts[i].rejected;
    assert_i64_eq(ts[i].stale, 0); /* every release in time: BW_OK */
  }
  assert_i64_eq(atomic_load(&violations), 0);
  bw_shm_limit_stats(ts[0].l, &s);
  assert_u64_eq(s.admitted, adm);
  assert_u64_eq(s.rejected, rej);
  assert_u64_eq(s.admitted + s.rejected, (uint64_t)THREADS * ITERS_T);
  assert_u64_eq(s.successes + s.dropped + s.ignored, s.admitted);
  assert_u64_eq(s.in_flight, 0);
  for (int i = 0; i < THREADS; i++)
    bw_shm_limit_free(ts[i].l);
}

static void *bud_thread(void *arg) {
  tstate_t *t = arg;
  bw_rand_t r;
  bw_rand_seed(&r, t->seed);
  for (int i = 0; i < ITERS_T; i++) {
    int64_t x = bw_rand_range(&r, 0, 2);
    if (x == 0) {
      bw_shm_budget_on_success(t->bud);
      t->succ++;
    } else if (x == 1) {
      bw_shm_budget_on_failure(t->bud);
      t->fail++;
    } else {
      t->tries++;
      if (bw_shm_budget_try_retry(t->bud)) t->ok_retries++;
    }
    if (i % 64 == 0) {
      bw_budget_stats_t s;
      bw_shm_budget_stats(t->bud, &s);
      if (s.tokens < 0 || s.tokens > 10) t->bad_tokens++;
    }
  }
  return NULL;
}

static void threads_keep_budget_tokens_in_bounds(void **state) {
  env_t *e = *state;
  bw_budget_config_t bc;
  bw_budget_stats_t s;
  bw_error_t err;
  pthread_t th[THREADS];
  tstate_t ts[THREADS];
  long su = 0, fa = 0, tries = 0, ok = 0;
  bw_budget_config_init(&bc); /* max 10, ratio 0.1 */
  bc.name = "retries";
  memset(ts, 0, sizeof(ts));
  for (int i = 0; i < THREADS; i++) {
    ts[i].bud = bw_shm_budget_new(e->seg, &bc, &err);
    assert_non_null(ts[i].bud);
    ts[i].seed = 3000 + (uint64_t)i;
    assert_int_equal(pthread_create(&th[i], NULL, bud_thread, &ts[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_i64_eq(ts[i].bad_tokens, 0);
    su += ts[i].succ;
    fa += ts[i].fail;
    tries += ts[i].tries;
    ok += ts[i].ok_retries;
  }
  bw_shm_budget_stats(ts[0].bud, &s);
  assert_u64_eq(s.successes, su);
  assert_u64_eq(s.failures, fa);
  assert_u64_eq(s.allowed, ok);
  assert_u64_eq(s.allowed + s.denied, tries);
  assert_true(s.tokens >= 0 && s.tokens <= 10);
  for (int i = 0; i < THREADS; i++)
    bw_shm_budget_free(ts[i].bud);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
      T(workers_taking_turns_open_it_after_threshold_in_total),
      T(workers_failing_at_once_open_it_once_for_all),
      T(a_probe_held_by_a_killed_worker_expires),
      T(limit_slots_held_by_a_killed_worker_come_back),
      T(workers_never_hold_more_than_the_limit),
      T(workers_opening_at_once_share_one_segment_and_breaker),
      T(threads_conserve_breaker_calls),
      T(threads_never_exceed_the_limit),
      T(threads_keep_budget_tokens_in_bounds),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

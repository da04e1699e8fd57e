/* bench_shm — ns per call of the shared-memory objects against the
 * in-process breaker, in the same run:
 * - acquire+release (closed, success) on bw_breaker_t and on
 *   bw_shm_breaker_t (consecutive rule), 1 thread and 2 threads on one
 *   breaker, and 2 forked processes on one shared breaker;
 * - a rejection while OPEN, both breakers;
 * - the shared budget (try_retry + on_success) and the shared limit
 *   (try_acquire + release, 64 slots), 1 and 2 threads.
 * Each figure is the median (and best) of --reps runs; with 2 threads it is
 * the slowest thread's per-op cost.
 *
 * Not a test: it prints numbers.
 *
 *   build/bench/bench_shm [--n N] [--reps R]
 */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "breakwater/breakwater.h"
#include "breakwater/shm.h"

static long long g_n = 5000000;
static int g_reps = 5;
static bw_shm_t *g_seg;

typedef enum {
  OP_BREAKER,
  OP_SHM_BREAKER,
  OP_BREAKER_OPEN,
  OP_SHM_BREAKER_OPEN,
  OP_SHM_BUDGET,
  OP_SHM_LIMIT
} op_t;

typedef struct {
  op_t op;
  bw_breaker_t *b;
  bw_shm_breaker_t *sb;
  bw_shm_budget_t *bud;
  bw_shm_limit_t *lim;
  long long n;
  atomic_int *go;
  double ns;
} loop_t;

static void die(const char *what, const bw_error_t *err) {
  fprintf(stderr, "bench_shm: %s: %s\n", what, err ? err->message : "");
  exit(1);
}

static void *run_loop(void *arg) {
  loop_t *l = arg;
  bw_permit_t p;
  long long bad = 0;
  double t;
  while (l->go != NULL && !atomic_load(l->go)) {
  }
  t = bench_now_s();
  switch (l->op) {
  case OP_BREAKER:
    for (long long i = 0; i < l->n; i++)
      if (bw_breaker_acquire(l->b, &p) == BW_OK)
        bw_breaker_release(l->b, &p, BW_SUCCESS);
    break;
  case OP_SHM_BREAKER:
    for (long long i = 0; i < l->n; i++)
      if (bw_shm_breaker_acquire(l->sb, &p) == BW_OK)
        bw_shm_breaker_release(l->sb, &p, BW_SUCCESS);
    break;
  case OP_BREAKER_OPEN:
    for (long long i = 0; i < l->n; i++)
      bad += bw_breaker_acquire(l->b, &p) != BW_E_OPEN;
    break;
  case OP_SHM_BREAKER_OPEN:
    for (long long i = 0; i < l->n; i++)
      bad += bw_shm_breaker_acquire(l->sb, &p) != BW_E_OPEN;
    break;
  case OP_SHM_BUDGET:
    for (long long i = 0; i < l->n; i++) {
      bad += !bw_shm_budget_try_retry(l->bud);
      bw_shm_budget_on_success(l->bud);
    }
    break;
  case OP_SHM_LIMIT:
    for (long long i = 0; i < l->n; i++) {
      if (bw_shm_limit_try_acquire(l->lim, &p) == BW_OK)
        bw_shm_limit_release(l->lim, &p, BW_LIMIT_SUCCESS);
      else
        bad++;
    }
    break;
  }
  l->ns = (bench_now_s() - t) * 1e9 / (double)l->n;
  if (bad != 0) {
    fprintf(stderr, "bench_shm: %lld unexpected answers (op %d)\n", bad,
            (int)l->op);
    exit(1);
  }
  return NULL;
}

static int g_obj; /* a fresh object name per run */

static void make(loop_t *l, op_t op) {
  bw_error_t err;
  char name[32];
  bw_permit_t p;
  memset(l, 0, sizeof(*l));
  l->op = op;
  snprintf(name, sizeof(name), "o%d", g_obj++);
  if (op == OP_BREAKER || op == OP_BREAKER_OPEN || op == OP_SHM_BREAKER ||
      op == OP_SHM_BREAKER_OPEN) {
    bw_breaker_config_t cfg;
    bw_breaker_config_init(&cfg);
    cfg.name = name;
    cfg.break_ms = 3600000; /* outlasts the loop when open */
    if (op == OP_BREAKER || op == OP_BREAKER_OPEN) {
      l->b = bw_breaker_new(&cfg, &err);
      if (l->b == NULL) die("bw_breaker_new", &err);
    } else {
      l->sb = bw_shm_breaker_new(g_seg, &cfg, &err);
      if (l->sb == NULL) die("bw_shm_breaker_new", &err);
    }
    for (int i = 0; op == OP_BREAKER_OPEN && i < 5; i++)
      if (bw_breaker_acquire(l->b, &p) == BW_OK)
        bw_breaker_release(l->b, &p, BW_FAILURE);
    for (int i = 0; op == OP_SHM_BREAKER_OPEN && i < 5; i++)
      if (bw_shm_breaker_acquire(l->sb, &p) == BW_OK)
        bw_shm_breaker_release(l->sb, &p, BW_FAILURE);
  } else if (op == OP_SHM_BUDGET) {
    bw_budget_config_t bc;
    bw_budget_config_init(&bc);
    bc.name = name;
    l->bud = bw_shm_budget_new(g_seg, &bc, &err);
    if (l->bud == NULL) die("bw_shm_budget_new", &err);
  } else {
    bw_shm_limit_config_t lc;
    bw_shm_limit_config_init(&lc);
    lc.name = name;
    lc.max_concurrent = 64;
    l->lim = bw_shm_limit_new(g_seg, &lc, &err);
    if (l->lim == NULL) die("bw_shm_limit_new", &err);
  }
}

static void unmake(loop_t *l) {
  bw_breaker_free(l->b);
  bw_shm_breaker_free(l->sb);
  bw_shm_budget_free(l->bud);
  bw_shm_limit_free(l->lim);
}

/* A fresh segment every few runs: objects are never freed in a segment. */
static void fresh_segment(void) {
  bw_shm_config_t sc;
  bw_error_t err;
  static char name[64];
  if (g_seg != NULL) {
    bw_shm_close(g_seg);
    bw_shm_unlink(name, NULL);
  }
  snprintf(name, sizeof(name), "/bw_bench_shm_%ld", (long)getpid());
  bw_shm_unlink(name, NULL);
  bw_shm_config_init(&sc);
  sc.name = name;
  sc.mode = BW_SHM_CREATE;
  sc.size = (size_t)8 << 20;
  g_seg = bw_shm_open(&sc, &err);
  if (g_seg == NULL) die("bw_shm_open", &err);
  g_obj = 0;
}

/* own: with 2 threads, each thread gets its own object, so nothing is
 * shared — the control that shows what the machine itself does to two busy
 * threads doing locked adds. */
static double bench(op_t op, int threads, int own, double *best) {
  double runs[16];
  for (int r = 0; r < g_reps; r++) {
    loop_t proto, other, l[2];
    pthread_t th[2];
    atomic_int go = 0;
    double worst = 0;
    fresh_segment();
    make(&proto, op);
    if (own) make(&other, op);
    for (int i = 0; i < threads; i++) {
      l[i] = own && i == 1 ? other : proto;
      l[i].n = g_n;
      l[i].go = &go;
      pthread_create(&th[i], NULL, run_loop, &l[i]);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < threads; i++) {
      pthread_join(th[i], NULL);
      if (l[i].ns > worst) worst = l[i].ns;
    }
    runs[r] = worst;
    unmake(&proto);
    if (own) unmake(&other);
  }
  return bench_median(runs, g_reps, best);
}

/* Two forked processes on one shared breaker (each inherits the handle). */
static double bench_procs(double *best) {
  double runs[16];
  for (int r = 0; r < g_reps; r++) {
    loop_t proto;
    double *ns;
    atomic_int *go;
    pid_t pid[2];
    void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) die("mmap", NULL);
    go = mem;
    ns = (double *)((char *)mem + 64);
    atomic_init(go, 0);
    fresh_segment();
    make(&proto, OP_SHM_BREAKER);
    for (int i = 0; i < 2; i++) {
      pid[i] = fork();
      if (pid[i] < 0) die("fork", NULL);
      if (pid[i] == 0) {
        loop_t l = proto;
        l.n = g_n;
        l.go = go;
        run_loop(&l);
        ns[i] = l.ns;
        _exit(0);
      }
    }
    atomic_store(go, 1);
    for (int i = 0; i < 2; i++)
      waitpid(pid[i], NULL, 0);
    runs[r] = ns[0] > ns[1] ? ns[0] : ns[1];
    unmake(&proto);
    munmap(mem, 4096);
  }
  return bench_median(runs, g_reps, best);
}

int main(int argc, char **argv) {
  static const struct {
    const char *label;
    op_t op;
    int threads;
    int own;
  } rows[] = {
      {"bw_breaker acquire+release (closed), 1 thread", OP_BREAKER, 1, 0},
      {"bw_shm_breaker acquire+release (closed), 1 thread", OP_SHM_BREAKER, 1,
       0},
      {"bw_breaker acquire+release (closed), 2 threads", OP_BREAKER, 2, 0},
      {"bw_shm_breaker acquire+release (closed), 2 threads", OP_SHM_BREAKER, 2,
       0},
      {"control: 2 threads, each its own bw_shm_breaker", OP_SHM_BREAKER, 2, 1},
      {"bw_breaker rejection (open), 1 thread", OP_BREAKER_OPEN, 1, 0},
      {"bw_shm_breaker rejection (open), 1 thread", OP_SHM_BREAKER_OPEN, 1, 0},
      {"bw_shm_budget try_retry+on_success, 1 thread", OP_SHM_BUDGET, 1, 0},
      {"bw_shm_budget try_retry+on_success, 2 threads", OP_SHM_BUDGET, 2, 0},
      {"bw_shm_limit try_acquire+release (64 slots), 1 thread", OP_SHM_LIMIT, 1,
       0},
      {"bw_shm_limit try_acquire+release (64 slots), 2 threads", OP_SHM_LIMIT,
       2, 0},
  };
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
      g_n = atoll(argv[++i]);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      g_reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_shm [--n N] [--reps R]\n");
      return 2;
    }
  }
  if (g_n < 1) g_n = 1;
  if (g_reps < 1) g_reps = 1;
  if (g_reps > 16) g_reps = 16;
  printf("# bench_shm: n=%lld per thread, median (best) of %d runs\n\n", g_n,
         g_reps);
  printf("| what | ns per op | best |\n|---|---:|---:|\n");
  {
    /* The floor: one read of the monotonic clock (the limit reads it twice
     * a call, a half-open or open breaker once). */
    printf("| floor: one bw_clock_monotonic() read | %.1f | |\n",
           bench_clock_ns(bw_clock_monotonic(), g_n));
  }
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    double best, med = bench(rows[i].op, rows[i].threads, rows[i].own, &best);
    printf("| %s | %.1f | %.1f |\n", rows[i].label, med, best);
    fflush(stdout);
  }
  {
    double best, med = bench_procs(&best);
    printf(
        "| bw_shm_breaker acquire+release (closed), 2 processes | %.1f | "
        "%.1f |\n",
        med, best);
  }
  if (g_seg != NULL) {
    char name[BW_NAME_MAX + 2];
    snprintf(name, sizeof(name), "%s", bw_shm_name(g_seg));
    bw_shm_close(g_seg);
    bw_shm_unlink(name, NULL);
  }
  return 0;
}

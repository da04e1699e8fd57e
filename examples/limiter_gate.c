/* limiter_gate — an adaptive concurrency limit finding a dependency's
 * capacity by itself.
 *
 * Sixteen worker threads always have work for a dependency that can serve
 * six calls at once: up to six in flight it answers in about 2 ms; past
 * that it sheds the call after 10 ms (a 429, say). The limiter in front of
 * it starts at 2 and never sees the number 6: it raises its limit while
 * calls succeed and backs off when they are shed. Every 100 ms the example
 * prints the limit, the calls in flight and the calls shed so far; at the
 * end, the totals. A worker refused by the limiter waits 1 ms and asks again
 * (it never reaches the dependency).
 *
 * Runs in real time for about 1.5 s.
 *
 *   limiter_gate [aimd|gradient2|vegas]
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "breakwater/breakwater.h"

#define WORKERS 16
#define CAPACITY 6
#define RUN_MS 1500

static _Atomic int g_busy;     /* the dependency's calls in flight */
static _Atomic long g_served;  /* answered within capacity */
static _Atomic long g_shed;    /* shed: over capacity */
static _Atomic long g_refused; /* refused by the limiter, never sent */
static _Atomic bool g_stop;

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  nanosleep(&ts, NULL);
}

/* The dependency: fine up to CAPACITY at once, shedding above it. */
static bw_limit_outcome_t dependency_call(void) {
  int n = atomic_fetch_add(&g_busy, 1) + 1;
  bw_limit_outcome_t o;
  if (n <= CAPACITY) {
    sleep_us(2000);
    atomic_fetch_add(&g_served, 1);
    o = BW_LIMIT_SUCCESS;
  } else {
    sleep_us(10000);
    atomic_fetch_add(&g_shed, 1);
    o = BW_LIMIT_DROPPED;
  }
  atomic_fetch_sub(&g_busy, 1);
  return o;
}

static void *worker(void *arg) {
  bw_limit_t *gate = arg;
  while (!atomic_load(&g_stop)) {
    bw_permit_t p;
    if (bw_limit_try_acquire(gate, &p) != BW_OK) {
      atomic_fetch_add(&g_refused, 1);
      sleep_us(1000);
      continue;
    }
    bw_limit_release(gate, &p, dependency_call());
  }
  return NULL;
}

int main(int argc, char **argv) {
  bw_limiter_config_t cfg;
  bw_limiter_t *lim;
  bw_error_t err;
  pthread_t th[WORKERS];
  bw_limiter_stats_t s;
  bw_limiter_config_init(&cfg);
  cfg.name = "dependency";
  cfg.initial_limit = 2;
  cfg.max_limit = 64;
  if (argc > 1) {
    if (strcmp(argv[1], "gradient2") == 0) {
      cfg.algorithm = BW_LIMITER_GRADIENT2;
    } else if (strcmp(argv[1], "vegas") == 0) {
      cfg.algorithm = BW_LIMITER_VEGAS;
    } else if (strcmp(argv[1], "aimd") != 0) {
      fprintf(stderr, "usage: %s [aimd|gradient2|vegas]\n", argv[0]);
      return 2;
    }
  }
  lim = bw_limiter_new(&cfg, &err);
  if (lim == NULL) {
    fprintf(stderr, "limiter_gate: %s: %s\n", err.field, err.message);
    return 1;
  }
  printf(
      "%s limiter in front of a dependency that serves %d at once, %d "
      "workers\n",
      bw_limiter_algorithm_name(cfg.algorithm), CAPACITY, WORKERS);
  for (int i = 0; i < WORKERS; i++)
    if (pthread_create(&th[i], NULL, worker, bw_limiter_as_limit(lim)) != 0) {
      fprintf(stderr, "limiter_gate: cannot start a worker\n");
      atomic_store(&g_stop, true);
      for (int j = 0; j < i; j++)
        pthread_join(th[j], NULL);
      bw_limiter_free(lim);
      return 1;
    }
  for (int t = 100; t <= RUN_MS; t += 100) {
    sleep_us(100000);
    bw_limiter_stats(lim, &s);
    printf("t=%4d ms  limit %2u  in flight %2u  served %5ld  shed %4ld\n", t,
           s.limit, s.in_flight, atomic_load(&g_served), atomic_load(&g_shed));
  }
  atomic_store(&g_stop, true);
  for (int i = 0; i < WORKERS; i++)
    pthread_join(th[i], NULL);
  bw_limiter_stats(lim, &s);
  printf(
      "served %ld, shed %ld (%.1f %% of the calls sent), refused before "
      "sending %ld; final limit %u (the dependency's capacity: %d)\n",
      atomic_load(&g_served), atomic_load(&g_shed),
      100.0 * (double)atomic_load(&g_shed) /
          (double)(atomic_load(&g_served) + atomic_load(&g_shed) + 1),
      atomic_load(&g_refused), s.limit, CAPACITY);
  bw_limiter_free(lim);
  return 0;
}

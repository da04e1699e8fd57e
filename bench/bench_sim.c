/* bench_sim — how fast the virtual-time simulator runs, in scheduler events
 * per second of real time on one core.
 *
 *   build/bench/bench_sim [--runs R] [--seed S]
 *
 * 1. the Polly lab's storm: 800 clients at once against capacity 400 with the
 *    naive policy (3 immediate attempts), R runs with seeds S, S+1, ... (each
 *    run builds and frees its scheduler, partner and client: included);
 * 2. the same with 100,000 clients, one run;
 * 3. the scheduler alone: the classic "hold" model (pop the earliest event,
 *    schedule one at now + uniform [0, 2 ms)) with 1,000 and 100,000 events
 *    pending.
 * The simulated results are deterministic for a seed; the rates are not (they
 * are wall-clock measurements) and are never asserted anywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/breakwater.h"
#include "bench_util.h"
#include "breakwater/sim.h"

static void die(const char *what, const bw_error_t *err) {
  fprintf(stderr, "bench_sim: %s: %s\n", what, err->message);
  exit(1);
}

static void storm(uint32_t clients, int runs, uint64_t seed) {
  bw_sim_partner_config_t pc;
  bw_sim_client_config_t cc;
  bw_sim_policy_t naive;
  bw_sim_results_t r;
  bw_error_t err;
  uint64_t events = 0, calls = 0, ok = 0;
  double t0, dt;
  char line[640];
  int i;
  bw_sim_partner_config_init(&pc);
  bw_sim_client_config_init(&cc);
  bw_sim_policy_naive(&naive, 3);
  cc.requests = clients;
  cc.policy = &naive;
  t0 = bench_now_s();
  for (i = 0; i < runs; i++) {
    pc.seed = seed + (uint64_t)i;
    cc.seed = seed + (uint64_t)i;
    if (bw_sim_run_scenario(&pc, &cc, &r, &err) != BW_OK) die("run", &err);
    events += r.events;
    calls += r.network_calls;
    ok += r.successes;
  }
  dt = bench_now_s() - t0;
  printf("naive storm, %u clients vs capacity 400, %d run(s):\n", clients,
         runs);
  printf(
      "  %llu events in %.3f s = %.2f M events/s; %.3f calls/request, "
      "%.1f%% success (mean over runs)\n",
      (unsigned long long)events, dt, (double)events / dt / 1e6,
      (double)calls / ((double)clients * runs),
      100.0 * (double)ok / ((double)clients * runs));
  bw_sim_results_format(&r, line, sizeof(line));
  printf("  last run: %s\n", line);
}

typedef struct {
  bw_rand_t rng;
  uint64_t left;
} hold_t;

static void hold_fn(bw_sim_t *sim, void *user) {
  hold_t *h = user;
  if (h->left == 0) return;
  h->left--;
  if (bw_sim_schedule_in(sim, bw_rand_range(&h->rng, 0, 1999999), hold_fn, h,
                         NULL) != BW_OK) {
    fprintf(stderr, "bench_sim: schedule failed\n");
    exit(1);
  }
}

static void hold(uint32_t pending, uint64_t total, uint64_t seed) {
  bw_sim_t *sim;
  bw_error_t err;
  hold_t h;
  uint64_t fired;
  double t0, dt;
  uint32_t i;
  sim = bw_sim_new(NULL, &err);
  if (sim == NULL) die("bw_sim_new", &err);
  bw_rand_seed(&h.rng, seed);
  h.left = total;
  for (i = 0; i < pending; i++)
    if (bw_sim_schedule_in(sim, bw_rand_range(&h.rng, 0, 1999999), hold_fn, &h,
                           NULL) != BW_OK)
      die("schedule", &err);
  t0 = bench_now_s();
  fired = bw_sim_run(sim);
  dt = bench_now_s() - t0;
  printf(
      "scheduler hold model, %u pending: %llu events in %.3f s = %.2f M "
      "events/s\n",
      pending, (unsigned long long)fired, dt, (double)fired / dt / 1e6);
  bw_sim_free(sim);
}

int main(int argc, char **argv) {
  int runs = 200, i;
  uint64_t seed = 4;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else {
      fprintf(stderr, "usage: bench_sim [--runs R] [--seed S]\n");
      return 2;
    }
  }
  if (runs < 1) runs = 1;
  storm(800, runs, seed);
  storm(100000, 1, seed);
  hold(1000, 5000000, seed);
  hold(100000, 5000000, seed);
  return 0;
}

/* bench_limiter_sim — the adaptive limiters as the admission gate of 800
 * closed-loop clients against the Polly lab's partner (capacity 400), in
 * virtual time (bw_sim_gate_run). Prints, as markdown for BENCHMARKS.md, per
 * algorithm: the limit every 500 ms for the first 20 s, then the settle
 * time (limit within +-15 % of capacity, [340, 460], for the rest of the
 * run), the success ratio of network calls, the partner's highest in-flight
 * count after settling, and simulated events per second of real time.
 *
 *   bench_limiter_sim [--seconds S] [--seed N] [--startup]
 *
 * The limiters run with their documented defaults; only max_limit is raised
 * (to 1000: the default 200 is below the partner's capacity). --startup
 * turns on the opt-in startup options as the lab's breakwater mode sets
 * them (docs/limiter.md, "Startup and stuck probes"): startup_headroom
 * 2.0, stuck_ratio 2.0, startup_max_step 100. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breakwater/limiter.h"
#include "bench_util.h"
#include "breakwater/sim.h"

#define TRACE_POINTS 41 /* 0 .. 20 s every 500 ms */

typedef struct trace_s {
  uint32_t limit[TRACE_POINTS];
  uint32_t partner[TRACE_POINTS];
} trace_t;

static void on_sample(void *user, int64_t now_ns, uint32_t limit,
                      uint32_t partner_in_flight) {
  trace_t *t = user;
  int64_t i = now_ns / (500 * BW_NS_PER_MS);
  if (i >= 0 && i < TRACE_POINTS) {
    t->limit[i] = limit;
    t->partner[i] = partner_in_flight;
  }
}

typedef struct row_s {
  bw_sim_gate_results_t r;
  double wall_s;
  trace_t trace;
} row_t;

static int run_one(bw_limiter_algorithm_t alg, int64_t seconds, uint64_t seed,
                   bool startup, row_t *row) {
  bw_error_t err;
  bw_sim_t *sim = bw_sim_new(NULL, &err);
  bw_sim_partner_config_t pc;
  bw_sim_partner_t *partner;
  bw_limiter_config_t lc;
  bw_limiter_t *lim;
  bw_sim_gate_config_t gc;
  double t0;
  int rc;
  if (sim == NULL) return BW_E_NOMEM;
  bw_sim_partner_config_init(&pc);
  pc.seed = seed;
  partner = bw_sim_partner_new(&pc, &err);
  bw_limiter_config_init(&lc);
  lc.algorithm = alg;
  lc.max_limit = 1000;
  if (startup) {
    lc.startup_headroom = 2.0;
    lc.stuck_ratio = 2.0;
    lc.startup_max_step = 100;
  }
  lc.clock = bw_sim_clock(sim);
  lim = bw_limiter_new(&lc, &err);
  if (partner == NULL || lim == NULL) {
    fprintf(stderr, "setup: %s\n", err.message);
    return BW_E_INVAL;
  }
  bw_sim_gate_config_init(&gc);
  gc.duration_ms = seconds * 1000;
  gc.on_sample = on_sample;
  gc.userdata = &row->trace;
  memset(&row->trace, 0, sizeof(row->trace));
  t0 = bench_now_s();
  rc = bw_sim_gate_run(sim, partner, bw_limiter_as_limit(lim), &gc, &row->r,
                       &err);
  row->wall_s = bench_now_s() - t0;
  if (rc != BW_OK) fprintf(stderr, "run: %s\n", err.message);
  bw_limiter_free(lim);
  bw_sim_partner_free(partner);
  bw_sim_free(sim);
  return rc;
}

int main(int argc, char **argv) {
  static const bw_limiter_algorithm_t algs[3] = {
      BW_LIMITER_AIMD, BW_LIMITER_GRADIENT2, BW_LIMITER_VEGAS};
  row_t rows[3];
  int64_t seconds = 60;
  uint64_t seed = 4;
  bool startup = false;
  int i, k;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
      seconds = strtoll(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--startup") == 0)
      startup = true;
    else {
      fprintf(stderr, "usage: %s [--seconds S] [--seed N] [--startup]\n",
              argv[0]);
      return 2;
    }
  }
  if (seconds < 1) seconds = 1;
  for (k = 0; k < 3; k++)
    if (run_one(algs[k], seconds, seed, startup, &rows[k]) != BW_OK) return 1;

  printf("800 closed-loop clients, partner capacity 400 (seed %" PRIu64
         "), %" PRId64
         " s of virtual time, limiter defaults with "
         "max_limit 1000%s.\n\n",
         seed, seconds,
         startup ? ", startup_headroom 2.0, stuck_ratio 2.0, "
                   "startup_max_step 100"
                 : "");
  printf("Limit (partner in flight) every 500 ms:\n\n| t (s) |");
  for (k = 0; k < 3; k++)
    printf(" %s |", bw_limiter_algorithm_name(algs[k]));
  printf("\n|---|---|---|---|\n");
  for (i = 0; i < TRACE_POINTS && i * 500 <= seconds * 1000; i++) {
    printf("| %.1f |", i * 0.5);
    for (k = 0; k < 3; k++)
      printf(" %u (%u) |", rows[k].trace.limit[i], rows[k].trace.partner[i]);
    printf("\n");
  }
  printf(
      "\n| algorithm | settled at | limit after | success ratio | calls | "
      "429 | timeouts | refused | max in flight after | events/s |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (k = 0; k < 3; k++) {
    const bw_sim_gate_results_t *r = &rows[k].r;
    char settled[32];
    if (r->settled_ns >= 0)
      snprintf(settled, sizeof(settled), "%.3f s", (double)r->settled_ns / 1e9);
    else
      snprintf(settled, sizeof(settled), "never");
    char band[32], after[16];
    if (r->settled_ns >= 0) {
      snprintf(band, sizeof(band), "%u–%u", r->limit_min_after_settle,
               r->limit_max_after_settle);
      snprintf(after, sizeof(after), "%u", r->max_in_flight_after_settle);
    } else {
      snprintf(band, sizeof(band), "—");
      snprintf(after, sizeof(after), "—");
    }
    printf("| %s | %s | %s | %.4f%% | %" PRIu64 " | %" PRIu64 " | %" PRIu64
           " | %" PRIu64 " | %s | %.2f M |\n",
           bw_limiter_algorithm_name(algs[k]), settled, band,
           r->network_calls ? 100.0 * (double)r->ok / (double)r->network_calls
                            : 0.0,
           r->network_calls, r->throttled, r->timeouts, r->refused, after,
           (double)r->events / rows[k].wall_s / 1e6);
  }
  return 0;
}

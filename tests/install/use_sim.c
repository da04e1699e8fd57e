/* Installed-library check: the virtual-time simulator (breakwater-sim) runs
 * two scheduled events in order without waiting. */
#include <breakwater/sim.h>
#include <stdio.h>

static int64_t seen[2];
static int n;

static void on_event(bw_sim_t *sim, void *user) {
  (void)user;
  seen[n++] = bw_sim_now_ns(sim);
}

int main(void) {
  bw_sim_config_t cfg;
  bw_error_t err;
  bw_sim_t *sim;
  bw_sim_config_init(&cfg);
  sim = bw_sim_new(&cfg, &err);
  if (sim == NULL) return fprintf(stderr, "sim: %s\n", err.message), 1;
  bw_sim_schedule_in(sim, 3 * BW_NS_PER_S, on_event, NULL, NULL);
  bw_sim_schedule_in(sim, 1 * BW_NS_PER_S, on_event, NULL, NULL);
  bw_sim_run(sim);
  bw_sim_free(sim);
  if (n != 2 || seen[0] != BW_NS_PER_S || seen[1] != 3 * BW_NS_PER_S) return 1;
  puts("sim: ok");
  return 0;
}

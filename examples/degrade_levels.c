/* degrade_levels — the degradation machine of the degradation article on a
 * manual clock: down fast, up slow.
 *
 * A chat bot serves at four levels: full (the LLM), reduced (a smaller
 * model), router (canned answers by intent) and message (a fixed apology).
 * Its LLM provider has an outage from t = 10 s to t = 200 s: every call that
 * needs it (full and reduced) fails. Watch the machine drop from full to
 * router within a few requests, stay there while probes — every 20th request
 * once the dwell of 60 s is over — test the level above, and climb one level
 * at a time once 20 probes in a row have succeeded after the provider is
 * back. Every change is printed by the on_change callback; a summary
 * follows. Instant and identical on every run.
 *
 *   degrade_levels
 */
#include <inttypes.h>
#include <stdio.h>

#include "breakwater/breakwater.h"
#include "breakwater/degrade.h"

#define REQUEST_EVERY_MS 100 /* 10 requests a second */
#define RUN_MS (600 * 1000)
#define OUTAGE_FROM_MS (10 * 1000)
#define OUTAGE_TO_MS (200 * 1000)

static int64_t t0_ns;

static void on_change(const bw_degrade_change_t *c, void *ud) {
  (void)ud;
  printf("t=%7.1f s  %-8s -> %-8s (%s, change #%" PRIu64 ")\n",
         (double)(c->at_ns - t0_ns) / 1e9, c->from_name, c->to_name,
         bw_degrade_reason_name(c->reason), c->changes);
}

/* The service: levels 0 and 1 need the provider; 2 and 3 do not. */
static bw_outcome_t serve(uint32_t level, int64_t t_ms) {
  bool outage = t_ms >= OUTAGE_FROM_MS && t_ms < OUTAGE_TO_MS;
  return level <= 1 && outage ? BW_FAILURE : BW_SUCCESS;
}

int main(void) {
  bw_clock_t *clock = bw_clock_manual_new(0);
  bw_degrade_config_t cfg;
  bw_degrade_stats_t s;
  bw_degrade_t *d;
  bw_error_t err;

  if (clock == NULL) return 1;
  t0_ns = bw_clock_now(clock);
  bw_degrade_config_init(&cfg); /* the seed's numbers: 60 s, 1/20, 20, 5 */
  cfg.name = "chat_bot";
  cfg.clock = clock;
  cfg.on_change = on_change;
  d = bw_degrade_new(&cfg, &err);
  if (d == NULL) {
    fprintf(stderr, "degrade_levels: %s\n", err.message);
    bw_clock_free(clock);
    return 1;
  }
  printf("provider outage from t=%d s to t=%d s; %d requests a second\n",
         OUTAGE_FROM_MS / 1000, OUTAGE_TO_MS / 1000, 1000 / REQUEST_EVERY_MS);
  for (int64_t t = 0; t < RUN_MS; t += REQUEST_EVERY_MS) {
    bw_degrade_pick_t p;
    bw_clock_manual_set(clock, t0_ns + t * BW_NS_PER_MS);
    bw_degrade_pick(d, &p);
    bw_degrade_report(d, &p, serve(p.level, t));
  }
  bw_degrade_stats(d, &s);
  printf("after %d s: level %s; %" PRIu64 " requests, %" PRIu64
         " probes (%" PRIu64 " ok, %" PRIu64 " failed), %" PRIu64
         " changes (%" PRIu64 " down, %" PRIu64 " up)\n",
         RUN_MS / 1000, s.level_name, s.picks, s.probes,
         s.probe_successes_total, s.probe_failures_total, s.changes, s.downs,
         s.ups);
  for (uint32_t i = 0; i < s.level_count; i++)
    printf("  %-8s served %6" PRIu64 " requests over %4" PRId64 " s\n",
           bw_degrade_level_name(d, i), s.picks_at[i], s.time_at_ms[i] / 1000);
  bw_degrade_free(d);
  bw_clock_free(clock);
  return 0;
}

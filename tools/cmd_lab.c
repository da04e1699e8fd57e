/* `breakwater lab storm`: the Polly lab's retry storm in virtual time — the
 * real policy objects on the simulator (lab.h), the same table and JSON schema
 * as `breakwater storm`, deterministic for a seed. docs/lab.md is the guide. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "lab_seeds.h"
#include "storm_obs.h"
#include "storm_opts.h"
#include "storm_report.h"

void bw_cmd_lab_help(FILE *out) {
  bw_cli_flag_t flags[BW_STORM_MAX_FLAGS];
  bw_storm_opts_t o;
  bw_storm_opts_init(&o);
  size_t n = bw_storm_opts_flags(flags, &o, false);
  fprintf(out,
          "usage: breakwater lab storm [flags]\n"
          "       breakwater lab hedge [flags]  (hedging against a slow tail: "
          "breakwater lab hedge --help)\n\n"
          "The payment partner storm in virtual time: N logical requests "
          "against\n"
          "the simulated partner, under each mode's real policy objects\n"
          "(naive: 3 attempts, no wait; polly: the Polly lab's pipeline;\n"
          "breakwater: deadline, adaptive limit, breaker outside a budgeted\n"
          "retry that honours Retry-After). Deterministic for a --seed; the\n"
          "same table and JSON schema as `breakwater storm` (\"virtual\":\n"
          "true).\n\n"
          "flags:\n");
  bw_cli_print_flags(out, flags, n);
}

typedef struct sink_s {
  bw_storm_timeline_t *t;
  bw_lab_mode_t mode;
} sink_t;

static void on_sample(void *userdata, const bw_lab_sample_t *s) {
  sink_t *k = userdata;
  bw_storm_timeline_add(k->t, k->mode, s);
}

int bw_cmd_lab(int argc, char **argv) {
  bw_storm_opts_t o;
  if (argc >= 1 &&
      (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)) {
    bw_cmd_lab_help(stdout);
    return 0;
  }
  if (argc >= 1 && strcmp(argv[0], "hedge") == 0)
    return bw_cmd_lab_hedge(argc - 1, argv + 1);
  if (argc < 1 || strcmp(argv[0], "storm") != 0) {
    fprintf(stderr, "breakwater lab: %s\n",
            argc < 1 ? "a lab experiment is needed: storm or hedge"
                     : "unknown experiment (the lab has: storm, hedge)");
    fprintf(stderr, "Run 'breakwater help lab' for the flags.\n");
    return BW_CLI_EXIT_USAGE;
  }
  bw_lab_mode_t modes[BW_LAB__COUNT];
  int nmodes = 0;
  bw_sim_partner_config_t partner;
  int rc =
      bw_storm_parse("breakwater lab storm", "lab", bw_cmd_lab_help, argc - 1,
                     argv + 1, false, &o, modes, &nmodes, &partner);
  if (rc >= 0) return rc;
  if (o.seeds != NULL) { /* each mode over a range of seeds */
    char msg[256];
    uint64_t first, last;
    if (bw_lab_seeds_parse(o.seeds, &first, &last, msg, sizeof msg) != 0 ||
        ((o.json != NULL || o.timeline != NULL || o.plot != NULL ||
          o.metrics != NULL || o.events != NULL) &&
         snprintf(msg, sizeof msg,
                  "--seeds prints a summary only: --json, --timeline, "
                  "--plot, --metrics and --events need one --seed") > 0)) {
      fprintf(stderr, "breakwater lab storm: %s\n", msg);
      fprintf(stderr, "Run 'breakwater help lab' for the flags.\n");
      return BW_CLI_EXIT_USAGE;
    }
    return bw_lab_seeds_run(&o, modes, nmodes, &partner, first, last);
  }
  char omsg[512];
  bw_storm_obs_t obs;
  memset(&obs, 0, sizeof obs);
  FILE *events_fp;
  bw_sink_t *events;
  if (bw_storm_events_open(o.events, &events_fp, &events, omsg, sizeof omsg) !=
      0) {
    fprintf(stderr, "breakwater lab storm: --events: %s\n", omsg);
    return 1;
  }
  bw_storm_timeline_t timeline;
  memset(&timeline, 0, sizeof timeline);
  bool want_timeline = o.timeline != NULL || o.plot != NULL;
  bw_storm_row_t rows[BW_LAB__COUNT];
  for (int i = 0; i < nmodes; i++) {
    bw_lab_run_config_t cfg;
    bw_lab_results_t r;
    bw_error_t err;
    sink_t sink = {&timeline, modes[i]};
    bw_lab_run_config_init(&cfg);
    cfg.mode = modes[i];
    cfg.partner = partner;
    cfg.clients = o.clients;
    cfg.arrival = strcmp(o.arrival, "ramp") == 0 ? BW_SIM_ARRIVAL_RAMP
                                                 : BW_SIM_ARRIVAL_BURST;
    cfg.ramp_ms = o.ramp_ms;
    cfg.attempt_timeout_ms = o.timeout_ms;
    cfg.seed = (uint64_t)o.seed;
    cfg.max_limit = o.max_limit;
    cfg.sre_k = o.sre_k;
    cfg.sink = events;
    bw_storm_file_kit_t fk = {o.config, NULL};
    if (o.config != NULL && modes[i] == BW_LAB_BREAKWATER) {
      cfg.make_kit = bw_storm_file_kit_make;
      cfg.free_kit = bw_storm_file_kit_free;
      cfg.make_kit_userdata = &fk;
    }
    if (o.metrics != NULL) {
      cfg.on_kit = bw_storm_obs_kit;
      cfg.kit_userdata = &obs;
    }
    if (want_timeline) {
      cfg.on_sample = on_sample;
      cfg.userdata = &sink;
    }
    if (!o.quiet && isatty(2))
      fprintf(stderr, "\r[lab] mode %s (%d/%d)...", bw_lab_mode_name(modes[i]),
              i + 1, nmodes);
    if (bw_lab_run_virtual(&cfg, &r, &err) != BW_OK) {
      fprintf(stderr, "\nbreakwater lab storm: %s%s%s\n", err.field,
              err.field[0] != '\0' ? ": " : "", err.message);
      bw_storm_timeline_free(&timeline);
      bw_storm_events_close(o.events, events_fp, events, omsg, sizeof omsg);
      bw_storm_obs_free(&obs);
      return err.code == BW_E_INVAL ? BW_CLI_EXIT_USAGE : 1;
    }
    bw_storm_row_from_lab(&rows[i], modes[i], &r);
  }
  if (!o.quiet && isatty(2)) fprintf(stderr, "\r%40s\r", "");

  bw_storm_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.virtual_time = true;
  meta.seed = (uint64_t)o.seed;
  meta.clients = o.clients;
  meta.capacity = o.partner.capacity;
  meta.attempt_timeout_ms = o.timeout_ms;
  int status =
      bw_storm_emit("breakwater lab storm", &o, &meta, rows, nmodes, &timeline);
  bw_storm_timeline_free(&timeline);
  if (bw_storm_outputs_finish("breakwater lab storm", o.metrics, &obs, o.events,
                              events_fp, events) != 0)
    status = 1;
  return status;
}

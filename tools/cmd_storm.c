/* `breakwater storm`: the Polly lab's retry storm over real HTTP on loopback —
 * N logical requests through each mode's pipeline against the simulated
 * partner (embedded on a free port unless --url), then the table, and
 * optionally JSON, a timeline and its plot. docs/lab.md is the guide. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "storm_obs.h"
#include "storm_opts.h"
#include "storm_real.h"
#include "storm_report.h"

void bw_cmd_storm_help(FILE *out) {
  bw_cli_flag_t flags[BW_STORM_MAX_FLAGS];
  bw_storm_opts_t o;
  bw_storm_opts_init(&o);
  size_t n = bw_storm_opts_flags(flags, &o, true);
  fprintf(
      out,
      "usage: breakwater storm [flags]\n\n"
      "The payment partner storm over real HTTP on 127.0.0.1: N logical\n"
      "requests fired at once (or ramped) at the simulated payment\n"
      "partner, under a mode:\n"
      "  naive       3 attempts, no wait, every non-2xx retried\n"
      "  polly       the Polly lab's pipeline: retry (1 + 2, "
      "decorrelated\n"
      "              jitter, 200 ms, cap 1.5 s) outside a breaker (50 %%\n"
      "              over 10 s, 20 calls, 15 s break)\n"
      "  breakwater  deadline, breaker outside a budgeted retry that\n"
      "              honours Retry-After, each attempt under an adaptive\n"
      "              concurrency limit that gives up on stuck attempts;\n"
      "              --sre-k K adds a client-side throttle inside the retry\n"
      "  oracle      a fixed limit at the partner's capacity: the ideal\n"
      "  all         each against a fresh partner, then the table\n"
      "Without --url the partner runs in this process on a free port.\n"
      "At most 10000 clients, and as many as the descriptor limit allows\n"
      "(2 a client with the embedded partner, 1 with --url); a larger\n"
      "storm is refused with exit status 2 (breakwater lab storm takes\n"
      "more). Requests are submitted in batches, so --max-duration-s is\n"
      "honoured however many there are.\n"
      "Counts every network call; prints a table; --json, --timeline and\n"
      "--plot write the figures.\n\n"
      "flags:\n");
  bw_cli_print_flags(out, flags, n);
}

int bw_cmd_storm(int argc, char **argv) {
  bw_storm_opts_t o;
  char msg[512];
  bw_lab_mode_t modes[BW_LAB__COUNT];
  int nmodes = 0;
  bw_sim_partner_config_t partner;
  int rc = bw_storm_parse("breakwater storm", "storm", bw_cmd_storm_help, argc,
                          argv, true, &o, modes, &nmodes, &partner);
  if (rc >= 0) return rc;
  /* What cannot be served is refused before anything runs. */
  if (bw_storm_fd_budget(o.clients, o.url == NULL, msg, sizeof msg) != 0) {
    fprintf(stderr, "breakwater storm: %s\n", msg);
    return BW_CLI_EXIT_USAGE;
  }
  bw_storm_obs_t obs;
  memset(&obs, 0, sizeof obs);
  FILE *events_fp;
  bw_sink_t *events;
  if (bw_storm_events_open(o.events, &events_fp, &events, msg, sizeof msg) !=
      0) {
    fprintf(stderr, "breakwater storm: --events: %s\n", msg);
    return 1;
  }
  bw_storm_timeline_t timeline;
  memset(&timeline, 0, sizeof timeline);
  bool want_timeline = o.timeline != NULL || o.plot != NULL;
  bw_storm_row_t rows[BW_LAB__COUNT];
  int status = 0;
  int done = 0;
  for (int i = 0; i < nmodes; i++) {
    bw_storm_real_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = modes[i];
    cfg.clients = o.clients;
    cfg.ramp = strcmp(o.arrival, "ramp") == 0;
    cfg.ramp_ms = o.ramp_ms;
    cfg.attempt_timeout_ms = o.timeout_ms;
    cfg.seed = (uint64_t)o.seed;
    cfg.max_limit = o.max_limit;
    cfg.partner = partner;
    cfg.url = o.url;
    cfg.max_duration_ms = o.max_duration_s * 1000;
    cfg.sample_ms = 100;
    cfg.progress = !o.quiet && isatty(2);
    cfg.mode_index = i;
    cfg.mode_count = nmodes;
    cfg.sink = events;
    cfg.config_file = o.config;
    cfg.sre_k = o.sre_k;
    if (o.metrics != NULL) {
      cfg.on_kit = bw_storm_obs_kit;
      cfg.on_http = bw_storm_obs_http;
      cfg.kit_userdata = &obs;
    }
    int r = bw_storm_run_real(&cfg, &rows[i], want_timeline ? &timeline : NULL,
                              msg, sizeof msg);
    if (r == -1) {
      fprintf(stderr, "breakwater storm: %s\n", msg);
      bw_storm_timeline_free(&timeline);
      bw_storm_events_close(o.events, events_fp, events, msg, sizeof msg);
      bw_storm_obs_free(&obs);
      return 1;
    }
    if (r == -2) {
      fprintf(stderr, "breakwater storm: %s\n", msg);
      status = 1;
    }
    done++;
  }
  bw_storm_meta_t meta;
  memset(&meta, 0, sizeof meta);
  meta.virtual_time = false;
  meta.seed = (uint64_t)o.seed;
  meta.clients = o.clients;
  meta.capacity = o.partner.capacity;
  meta.attempt_timeout_ms = o.timeout_ms;
  meta.url = o.url;
  status |= bw_storm_emit("breakwater storm", &o, &meta, rows, done, &timeline);
  bw_storm_timeline_free(&timeline);
  if (bw_storm_outputs_finish("breakwater storm", o.metrics, &obs, o.events,
                              events_fp, events) != 0)
    status = 1;
  return status;
}

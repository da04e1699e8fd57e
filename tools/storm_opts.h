/* breakwater tool — the flags `storm` and `lab storm` share, so the same
 * experiment is asked for the same way in real and virtual time. */
#ifndef BREAKWATER_TOOLS_STORM_OPTS_H
#define BREAKWATER_TOOLS_STORM_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "breakwater/lab.h"
#include "breakwater/registry.h"
#include "cli.h"
#include "partner_flags.h"
#include "storm_report.h"

typedef struct bw_storm_opts_s {
  const char *mode; /* naive | polly | breakwater | all */
  uint32_t clients;
  const char *arrival; /* burst | ramp */
  int64_t ramp_ms;
  int64_t timeout_ms; /* per attempt */
  int64_t seed;
  uint32_t max_limit;
  const char *config; /* breakwater mode: [pipeline.storm] of this file */
  /* the breakwater mode's client-side throttle (Google SRE's adaptive
   * throttling, throttle.h) with this K; 0 = none; not with config */
  double sre_k;
  /* the partner (its seed is --seed) */
  bw_sim_partner_config_t partner;
  char partner_help[BW_PARTNER_KNOB_FLAGS][96];
  /* output */
  const char *json;
  const char *timeline;
  const char *plot;
  const char *metrics; /* Prometheus text of every mode's objects */
  const char *events;  /* every event, one JSON line each */
  bool quiet;
  /* virtual runs only: "A..B", each mode over seeds A to B (NULL: --seed) */
  const char *seeds;
  /* real runs only */
  const char *url;
  int64_t max_duration_s;
  bool virtual_lab; /* set by bw_storm_opts_flags: the lab, not real */
} bw_storm_opts_t;

#define BW_STORM_MAX_FLAGS 32

/* Fills the defaults: the Polly lab's experiment (800 clients at once, capacity
 * 400, 2 s per attempt, seed 4, mode all). */
void bw_storm_opts_init(bw_storm_opts_t *o);
/* The flag table (targets point into *o); real adds --url and
 * --max-duration-s. Returns the count. */
size_t bw_storm_opts_flags(bw_cli_flag_t *f, bw_storm_opts_t *o, bool real);
/* --config FILE: only for the breakwater mode (or all), and FILE must be
 * valid and define [pipeline.storm]; in the virtual lab every retry of the
 * file needs a seed (its runs are reproducible). 0, or -1 with the reason
 * in err (FILE:LINE: key: rule for a bad file). */
int bw_storm_check_config(const char *path, const char *mode, bool virtual_lab,
                          char *err, size_t err_size);

/* --config: the breakwater mode's kit from the file, in a registry on the
 * run's clock and sink (bw_lab_make_kit_fn / bw_lab_free_kit_fn, also used
 * by the real storm). The kit shows [pipeline.storm] and the file's
 * objects named storm (breaker, limiter, retry, budget, bulkhead). */
typedef struct bw_storm_file_kit_s {
  const char *path;
  bw_registry_t *reg; /* owns the kit's objects while the run lasts */
} bw_storm_file_kit_t;
int bw_storm_file_kit_make(void *userdata, const bw_clock_t *clock,
                           bw_sink_t *sink, bw_lab_kit_t *kit, bw_error_t *err);
void bw_storm_file_kit_free(void *userdata, bw_lab_kit_t *kit);

/* Checks what the flags alone cannot: the mode and arrival names, the
 * partner's configuration (through bw_sim_partner_config_validate). Fills
 * modes[] (1 or BW_LAB__COUNT) and the partner config. 0, or -1 with a
 * sentence naming the flag in err. */
int bw_storm_opts_check(const bw_storm_opts_t *o, bw_lab_mode_t *modes,
                        int *nmodes, bw_sim_partner_config_t *partner,
                        char *err, size_t err_size);
/* Parses and checks a storm's flags (storm_opts_init, flags, bw_cli_parse,
 * bw_storm_opts_check). Returns -1 to go on (modes, *nmodes and *partner
 * filled), or the exit status to return at once: 0 after printing help,
 * BW_CLI_EXIT_USAGE after a message naming the flag (prog: "breakwater
 * storm"; help_cmd: "storm"). */
int bw_storm_parse(const char *prog, const char *help_cmd,
                   void (*help)(FILE *out), int argc, char **argv, bool real,
                   bw_storm_opts_t *o, bw_lab_mode_t *modes, int *nmodes,
                   bw_sim_partner_config_t *partner);

/* Before a run: every output path (--json, --timeline, --plot) can be
 * written, and gnuplot is there for --plot. -1 to go on, or
 * BW_CLI_EXIT_USAGE after a message naming the flag, the path and the
 * reason. --json - is the standard output. bw_storm_parse calls it. */
int bw_storm_check_outputs(const char *prog, const bw_storm_opts_t *o);

/* After the runs: prints the table (on stderr when --json is '-', the JSON
 * then being the standard output), then writes --json, --timeline and
 * --plot as asked. prog names the command in messages ("breakwater
 * storm"). Returns the exit status: 0, or 1 if a file could not be
 * written. */
int bw_storm_emit(const char *prog, const bw_storm_opts_t *o,
                  const bw_storm_meta_t *meta, const bw_storm_row_t *rows,
                  int nrows, const bw_storm_timeline_t *timeline);

#endif

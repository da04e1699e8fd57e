/* breakwater tool — the storm's shared flags and output. */
#include "storm_opts.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef BW_HAVE_CONFIG_FILE
#include "breakwater/config_file.h"
#endif

void bw_storm_opts_init(bw_storm_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->mode = "all";
  o->clients = 800;
  o->arrival = "burst";
  o->ramp_ms = 10000;
  o->timeout_ms = 2000;
  o->seed = 4;
  o->max_limit = 1000;
  bw_sim_partner_config_init(&o->partner);
  o->max_duration_s = 300;
}

size_t bw_storm_opts_flags(bw_cli_flag_t *f, bw_storm_opts_t *o, bool real) {
  size_t n = 0;
  bw_cli_flag_t common[] = {
      BW_CLI_STRING("mode", &o->mode, "MODE",
                    "naive, polly, breakwater, oracle (a fixed limit at the "
                    "partner's capacity: the ideal) or all (default all: "
                    "each against a fresh partner, then the table)"),
      BW_CLI_U32("clients", &o->clients, 1, 10000000, "N",
                 "logical requests (default 800)"),
      BW_CLI_STRING("arrival", &o->arrival, "KIND",
                    "burst (all at once) or ramp (evenly over --ramp-ms); "
                    "default burst"),
      BW_CLI_I64("ramp-ms", &o->ramp_ms, 1, BW_TOOL_DAY_MS, "MS",
                 "the ramp's length (default 10000)"),
      BW_CLI_I64("timeout-ms", &o->timeout_ms, 1, BW_TOOL_DAY_MS, "MS",
                 "each attempt's timeout (default 2000, the Polly lab's)"),
      BW_SEED_FLAG(&o->seed, "every random choice derives from it (default 4)"),
      BW_CLI_U32("max-limit", &o->max_limit, 1, 1000000, "N",
                 "breakwater mode: the adaptive limit's ceiling (default "
                 "1000)"),
      BW_CLI_STRING("config", &o->config, "FILE",
                    "breakwater mode: run the pipeline [pipeline.storm] of "
                    "this configuration file (docs/lab.md)"),
      /* The same experiment in real and virtual time: the lab's kit builds
       * the throttle for both (lab.h, bw_lab_kit_config_t.sre_k). */
      BW_CLI_DOUBLE("sre-k", &o->sre_k, 0, 10, "K",
                    "breakwater mode: add a client-side throttle (Google "
                    "SRE's adaptive throttling, K in [1, 10], "
                    "docs/throttle.md) inside the retry, before the limiter; "
                    "0 = none (default); not with --config"),
  };
  o->virtual_lab = !real;
  for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
    f[n++] = common[i];
  n += bw_partner_knob_flags(f + n, &o->partner, "partner: ", o->partner_help);
  bw_cli_flag_t out[] = {
      BW_CLI_STRING("json", &o->json, "FILE",
                    "write every figure as JSON ('-': to stdout, the table "
                    "then to stderr)"),
      BW_CLI_STRING("timeline", &o->timeline, "FILE",
                    "write per-100 ms samples (columns, one line each)"),
      BW_CLI_STRING("plot", &o->plot, "FILE.png",
                    "render the timeline with gnuplot, one panel per mode"),
      BW_CLI_STRING("metrics", &o->metrics, "FILE",
                    "write the Prometheus text of every object each mode "
                    "used (pipeline outcomes and latency histogram, breaker, "
                    "limiter, retry, budget, throttle with --sre-k; in storm, "
                    "the HTTP client's attempts and errors), name=\"MODE\""),
      BW_CLI_STRING("events", &o->events, "FILE",
                    "write every event of the run, one JSON line each"),
      BW_CLI_BOOL("quiet", &o->quiet, "no progress line"),
  };
  for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
    f[n++] = out[i];
  if (!real) {
    f[n++] = (bw_cli_flag_t)BW_CLI_STRING(
        "seeds", &o->seeds, "A..B",
        "run each mode on seeds A to B and print per mode the median and "
        "the worst case, also as ratios to the oracle (replaces --seed)");
  }
  if (real) {
    bw_cli_flag_t more[] = {
        BW_CLI_STRING("url", &o->url, "URL",
                      "the partner's base URL, http://127.0.0.1:PORT "
                      "(default: start one in-process on a free port)"),
        BW_CLI_I64("max-duration-s", &o->max_duration_s, 1, 3600, "S",
                   "stop a mode that runs longer than this (default 300)"),
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
      f[n++] = more[i];
  }
  return n;
}

int bw_storm_check_config(const char *path, const char *mode, bool virtual_lab,
                          char *err, size_t err_size) {
  if (strcmp(mode, "breakwater") != 0 && strcmp(mode, "all") != 0) {
    snprintf(err, err_size,
             "--config sets the breakwater mode's pipeline: use --mode "
             "breakwater or all (got '%s')",
             mode);
    return -1;
  }
#ifdef BW_HAVE_CONFIG_FILE
  bw_config_diag_t d;
  bw_config_file_t *f = bw_config_file_read(path, NULL, &d);
  if (f == NULL) {
    snprintf(err, err_size, "--config: %s", d.message);
    return -1;
  }
  bool found = false;
  const char *unseeded = NULL;
  for (size_t i = 0; i < bw_config_file_count(f); i++) {
    const char *kind, *name;
    bw_config_file_object(f, i, &kind, &name);
    if (strcmp(kind, "pipeline") == 0 && strcmp(name, "storm") == 0)
      found = true;
    const bw_retry_config_t *r =
        bw_config_file_config(f, BW_CONFIG_RETRY, name);
    if (strcmp(kind, "retry") == 0 && r != NULL && r->seed == 0 &&
        unseeded == NULL)
      unseeded = name;
  }
  if (virtual_lab && unseeded != NULL) {
    snprintf(err, err_size,
             "--config: [retry.%s] needs a seed in the virtual lab (its runs "
             "are reproducible; seed 0 is unpredictable jitter)",
             unseeded);
    bw_config_file_free(f);
    return -1;
  }
  bw_config_file_free(f);
  if (!found) {
    snprintf(err, err_size,
             "--config: %s has no [pipeline.storm] (the pipeline the "
             "breakwater mode runs)",
             path);
    return -1;
  }
  return 0;
#else
  snprintf(err, err_size,
           "--config: this build reads no configuration files (the config "
           "component needs inih, libinih-dev): '%s'",
           path);
  return -1;
#endif
}

/* err's code, field "config" and message. Returns code. */
static int kit_error(bw_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kit_error(bw_error_t *err, int code, const char *fmt, ...) {
  va_list ap;
  if (err == NULL) return code;
  err->code = code;
  snprintf(err->field, sizeof err->field, "config");
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return code;
}

int bw_storm_file_kit_make(void *userdata, const bw_clock_t *clock,
                           bw_sink_t *sink, bw_lab_kit_t *kit,
                           bw_error_t *err) {
  bw_storm_file_kit_t *fk = userdata;
#ifdef BW_HAVE_CONFIG_FILE
  bw_registry_config_t rc;
  bw_config_diag_t d;
  bw_registry_config_init(&rc);
  rc.clock = clock;
  rc.sink = sink;
  if ((fk->reg = bw_registry_new(&rc, err)) == NULL) return err->code;
  int code = bw_registry_load_file_ex(fk->reg, fk->path, NULL, &d);
  if (code != BW_OK) return kit_error(err, code, "--config: %.190s", d.message);
  memset(kit, 0, sizeof *kit);
  kit->mode = BW_LAB_BREAKWATER;
  kit->pipeline = bw_registry_find(fk->reg, BW_REGISTRY_PIPELINE, "storm");
  if (kit->pipeline == NULL)
    return kit_error(err, BW_E_INVAL,
                     "--config: %.120s has no [pipeline.storm]", fk->path);
  /* The file's load holds its breakers: this second hold goes back at
   * once; the pointer stays valid until the registry is freed. */
  kit->breaker = bw_registry_find_breaker(fk->reg, "storm");
  if (kit->breaker != NULL) bw_registry_put(fk->reg, kit->breaker);
  kit->limiter = bw_registry_find(fk->reg, BW_REGISTRY_LIMITER, "storm");
  kit->retry = bw_registry_find(fk->reg, BW_REGISTRY_RETRY, "storm");
  kit->budget = bw_registry_find(fk->reg, BW_REGISTRY_BUDGET, "storm");
  kit->bulkhead = bw_registry_find(fk->reg, BW_REGISTRY_BULKHEAD, "storm");
  kit->throttle = bw_registry_find(fk->reg, BW_REGISTRY_THROTTLE, "storm");
  return BW_OK;
#else
  (void)clock;
  (void)sink;
  (void)kit;
  return kit_error(
      err, BW_E_INVAL,
      "--config: this build reads no configuration files: '%.120s'", fk->path);
#endif
}

void bw_storm_file_kit_free(void *userdata, bw_lab_kit_t *kit) {
  bw_storm_file_kit_t *fk = userdata;
  memset(kit, 0, sizeof *kit); /* the registry owns every object */
  bw_registry_free(fk->reg);
  fk->reg = NULL;
}

/* "ok_max_ms" -> "--ok-max-ms". */
int bw_storm_opts_check(const bw_storm_opts_t *o, bw_lab_mode_t *modes,
                        int *nmodes, bw_sim_partner_config_t *partner,
                        char *err, size_t err_size) {
  if (strcmp(o->mode, "all") == 0) {
    for (int i = 0; i < BW_LAB__COUNT; i++)
      modes[i] = (bw_lab_mode_t)i;
    *nmodes = BW_LAB__COUNT;
  } else if (bw_lab_mode_parse(o->mode, &modes[0]) == BW_OK) {
    *nmodes = 1;
  } else {
    snprintf(err, err_size,
             "--mode must be naive, polly, breakwater or all (got '%s'), "
             "or oracle (the ideal: a fixed limit at the capacity)",
             o->mode);
    return -1;
  }
  if (strcmp(o->arrival, "burst") != 0 && strcmp(o->arrival, "ramp") != 0) {
    snprintf(err, err_size, "--arrival must be burst or ramp (got '%s')",
             o->arrival);
    return -1;
  }
  if (o->sre_k != 0 && !(o->sre_k >= 1.0 && o->sre_k <= 10.0)) {
    snprintf(err, err_size, "--sre-k must be 0 (none) or in [1, 10] (got %g)",
             o->sre_k);
    return -1;
  }
  if (o->sre_k != 0 && o->config != NULL) {
    snprintf(err, err_size,
             "--sre-k adds the throttle to the built-in breakwater mode: it "
             "cannot be combined with --config");
    return -1;
  }
  if (o->config != NULL &&
      bw_storm_check_config(o->config, o->mode, o->virtual_lab, err,
                            err_size) != 0)
    return -1;
  *partner = o->partner;
  partner->seed = (uint64_t)o->seed;
  bw_error_t e;
  if (bw_sim_partner_config_validate(partner, &e) != BW_OK) {
    char flag[64];
    bw_partner_flag_of(e.field, flag, sizeof flag);
    snprintf(err, err_size, "%s: %s", flag, e.message);
    return -1;
  }
  return 0;
}

int bw_storm_emit(const char *prog, const bw_storm_opts_t *o,
                  const bw_storm_meta_t *meta, const bw_storm_row_t *rows,
                  int nrows, const bw_storm_timeline_t *timeline) {
  char msg[512];
  int status = 0;
  /* --json -: the JSON is the standard output, the table goes to stderr. */
  bool json_stdout = o->json != NULL && strcmp(o->json, "-") == 0;
  bw_storm_print_table(json_stdout ? stderr : stdout, meta, rows, nrows);
  fflush(json_stdout ? stderr : stdout);
  if (o->json != NULL &&
      bw_storm_write_json(o->json, meta, rows, nrows, msg, sizeof msg) != 0) {
    fprintf(stderr, "%s: --json: %s\n", prog, msg);
    status = 1;
  }
  if (o->timeline != NULL &&
      bw_storm_write_timeline(o->timeline, timeline, msg, sizeof msg) != 0) {
    fprintf(stderr, "%s: --timeline: %s\n", prog, msg);
    status = 1;
  }
  if (o->plot != NULL &&
      bw_storm_plot(o->plot, timeline, meta, msg, sizeof msg) != 0) {
    fprintf(stderr, "%s: --plot: %s\n", prog, msg);
    status = 1;
  }
  return status;
}

/* Can path be written? Checked before a run, so a bad path costs nothing:
 * a new file is created and removed again, an existing one opened for
 * writing (not truncated). 0, or -1 with the reason in err. */
static int check_writable(const char *path, char *err, size_t err_size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd >= 0) {
    close(fd);
    unlink(path);
    return 0;
  }
  if (errno == EEXIST) fd = open(path, O_WRONLY);
  if (fd < 0) {
    snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  close(fd);
  return 0;
}

/* Is gnuplot there? (`gnuplot --version`, its output discarded.) */
static bool have_gnuplot(void) {
  pid_t pid = fork();
  int status = 0;
  if (pid < 0) return true; /* cannot tell: let the plot say */
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    execlp("gnuplot", "gnuplot", "--version", (char *)NULL);
    _exit(127);
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int bw_storm_check_outputs(const char *prog, const bw_storm_opts_t *o) {
  char msg[512];
  const struct {
    const char *flag, *path;
  } outs[] = {{"--json", o->json},
              {"--timeline", o->timeline},
              {"--plot", o->plot},
              {"--metrics", o->metrics},
              {"--events", o->events}};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
    if (outs[i].path == NULL || strcmp(outs[i].path, "-") == 0) continue;
    if (check_writable(outs[i].path, msg, sizeof msg) != 0) {
      fprintf(stderr, "%s: %s: %s\n", prog, outs[i].flag, msg);
      return BW_CLI_EXIT_USAGE;
    }
  }
  if (o->timeline != NULL && strcmp(o->timeline, "-") == 0) {
    fprintf(stderr, "%s: --timeline: '-' is not supported (a file name)\n",
            prog);
    return BW_CLI_EXIT_USAGE;
  }
  if ((o->metrics != NULL && strcmp(o->metrics, "-") == 0) ||
      (o->events != NULL && strcmp(o->events, "-") == 0)) {
    fprintf(stderr, "%s: %s: '-' is not supported (a file name)\n", prog,
            o->metrics != NULL && strcmp(o->metrics, "-") == 0 ? "--metrics"
                                                               : "--events");
    return BW_CLI_EXIT_USAGE;
  }
  if (o->plot != NULL && strcmp(o->plot, "-") == 0) {
    fprintf(stderr, "%s: --plot: '-' is not supported (a file name)\n", prog);
    return BW_CLI_EXIT_USAGE;
  }
  if (o->plot != NULL && !have_gnuplot()) {
    fprintf(stderr, "%s: --plot: gnuplot not found (install gnuplot-nox)\n",
            prog);
    return BW_CLI_EXIT_USAGE;
  }
  return -1;
}

int bw_storm_parse(const char *prog, const char *help_cmd,
                   void (*help)(FILE *out), int argc, char **argv, bool real,
                   bw_storm_opts_t *o, bw_lab_mode_t *modes, int *nmodes,
                   bw_sim_partner_config_t *partner) {
  bw_cli_flag_t flags[BW_STORM_MAX_FLAGS];
  char msg[512];
  bw_storm_opts_init(o);
  size_t n = bw_storm_opts_flags(flags, o, real);
  int rc = bw_cli_parse(flags, n, argc, argv, NULL, 0, NULL, msg, sizeof msg);
  if (rc == BW_CLI_HELP) {
    help(stdout);
    return 0;
  }
  if (rc != BW_CLI_OK ||
      bw_storm_opts_check(o, modes, nmodes, partner, msg, sizeof msg) != 0) {
    fprintf(stderr, "%s: %s\n", prog, msg);
    fprintf(stderr, "Run 'breakwater help %s' for the flags.\n", help_cmd);
    return BW_CLI_EXIT_USAGE;
  }
  return bw_storm_check_outputs(prog, o);
}

/* breakwater tool — the lab storm over a range of seeds (lab_seeds.h). */
#include "lab_seeds.h"

#include "breakwater/config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEEDS_MAX 10000u

int bw_lab_seeds_parse(const char *s, uint64_t *first, uint64_t *last,
                       char *err, size_t err_size) {
  uint64_t a, b;
  if (bw_config_parse_u64_range(s, &a, &b) != BW_OK) {
    snprintf(err, err_size,
             "--seeds must be a range A..B of seeds (integers >= 1), or one "
             "seed N (got '%s')",
             s);
    return -1;
  }
  if (a < 1 || a > INT64_MAX || b > INT64_MAX) {
    snprintf(err, err_size,
             "--seeds: a seed must be in [1, 9223372036854775807] (got '%s')",
             s);
    return -1;
  }
  if (b < a) {
    snprintf(err, err_size,
             "--seeds: the range is empty, its end is before its start (got "
             "'%s')",
             s);
    return -1;
  }
  if (b - a >= SEEDS_MAX) {
    snprintf(err, err_size, "--seeds: at most %u seeds at once (got '%s')",
             SEEDS_MAX, s);
    return -1;
  }
  *first = a;
  *last = b;
  return 0;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* The median (the mean of the two middle values for an even count) of
 * v[0..n), sorted in place. */
static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static double maxof(const double *v, size_t n) {
  double m = v[0];
  for (size_t i = 1; i < n; i++)
    if (v[i] > m) m = v[i];
  return m;
}

static double minof(const double *v, size_t n) {
  double m = v[0];
  for (size_t i = 1; i < n; i++)
    if (v[i] < m) m = v[i];
  return m;
}

enum {
  F_SUCCESS,
  F_CPR,
  F_MAXIF,
  F_P50,
  F_P99,
  F_DUR,
  F_RDUR,
  F_RP50,
  F_RP99,
  F__N
};

static int run_one(const bw_storm_opts_t *o, bw_lab_mode_t mode,
                   const bw_sim_partner_config_t *partner, uint64_t seed,
                   bw_storm_row_t *row) {
  bw_lab_run_config_t cfg;
  bw_lab_results_t r;
  bw_error_t err;
  bw_lab_run_config_init(&cfg);
  cfg.mode = mode;
  cfg.partner = *partner;
  cfg.clients = o->clients;
  cfg.arrival = strcmp(o->arrival, "ramp") == 0 ? BW_SIM_ARRIVAL_RAMP
                                                : BW_SIM_ARRIVAL_BURST;
  cfg.ramp_ms = o->ramp_ms;
  cfg.attempt_timeout_ms = o->timeout_ms;
  cfg.seed = seed;
  cfg.max_limit = o->max_limit;
  cfg.sre_k = o->sre_k;
  bw_storm_file_kit_t fk = {o->config, NULL};
  if (o->config != NULL && mode == BW_LAB_BREAKWATER) {
    cfg.make_kit = bw_storm_file_kit_make;
    cfg.free_kit = bw_storm_file_kit_free;
    cfg.make_kit_userdata = &fk;
  }
  if (bw_lab_run_virtual(&cfg, &r, &err) != BW_OK) {
    fprintf(stderr, "\nbreakwater lab storm: seed %" PRIu64 ": %s%s%s\n", seed,
            err.field, err.field[0] != '\0' ? ": " : "", err.message);
    return -1;
  }
  bw_storm_row_from_lab(row, mode, &r);
  return 0;
}

static double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

int bw_lab_seeds_run(const bw_storm_opts_t *o, const bw_lab_mode_t *modes,
                     int nmodes, const bw_sim_partner_config_t *partner,
                     uint64_t first, uint64_t last) {
  size_t n = (size_t)(last - first + 1);
  double *v = calloc(n * F__N * (size_t)nmodes, sizeof *v);
  bw_storm_row_t *orc = calloc(n, sizeof *orc);
  bool progress = !o->quiet && isatty(2);
  int status = 0;
  if (v == NULL || orc == NULL) {
    fprintf(stderr, "breakwater lab storm: out of memory\n");
    free(v);
    free(orc);
    return 1;
  }
  /* v[(m * F__N + f) * n + k]: mode m's figure f on the k-th seed. */
  for (size_t k = 0; k < n && status == 0; k++) {
    uint64_t seed = first + k;
    if (progress)
      fprintf(stderr, "\r[lab] seed %" PRIu64 " (%zu/%zu)...", seed, k + 1, n);
    if (run_one(o, BW_LAB_ORACLE, partner, seed, &orc[k]) != 0) {
      status = 1;
      break;
    }
    for (int m = 0; m < nmodes; m++) {
      bw_storm_row_t row;
      if (modes[m] == BW_LAB_ORACLE)
        row = orc[k];
      else if (run_one(o, modes[m], partner, seed, &row) != 0) {
        status = 1;
        break;
      }
      double *f = v + (size_t)m * F__N * n;
      double req = row.requests > 0 ? (double)row.requests : 1.0;
      f[F_SUCCESS * n + k] = 100.0 * (double)row.successes / req;
      f[F_CPR * n + k] = (double)row.network_calls / req;
      f[F_MAXIF * n + k] = (double)row.partner_max_in_flight;
      f[F_P50 * n + k] = row.p50_ms;
      f[F_P99 * n + k] = row.p99_ms;
      f[F_DUR * n + k] = (double)row.duration_ms / 1000.0;
      f[F_RDUR * n + k] =
          ratio((double)row.duration_ms, (double)orc[k].duration_ms);
      f[F_RP50 * n + k] = ratio(row.p50_ms, orc[k].p50_ms);
      f[F_RP99 * n + k] = ratio(row.p99_ms, orc[k].p99_ms);
    }
  }
  if (progress) fprintf(stderr, "\r%40s\r", "");
  if (status == 0) {
    printf("\nvirtual-time storm over seeds %" PRIu64 "..%" PRIu64
           " (%zu runs a mode): %u clients, %s, partner capacity %u, "
           "attempt timeout %" PRId64 " ms\n\n",
           first, last, n, o->clients, o->arrival, partner->capacity,
           o->timeout_ms);
    printf(
        "median (worst) over the seeds; vs oracle: per seed, the mode's "
        "figure over the oracle's of the same seed\n\n");
    printf(
        "| mode       | success min | success med | calls/req med (max) "
        "| max in flight max | p50 ms med (max) | p99 ms med (max) "
        "| duration s med (max) | vs oracle: duration | p50 | p99 |\n");
    printf(
        "|------------|------------:|------------:|--------------------:"
        "|------------------:|-----------------:|-----------------:"
        "|---------------------:|--------------------:|----:|----:|\n");
    for (int m = 0; m < nmodes; m++) {
      double *f = v + (size_t)m * F__N * n;
      double mx[F__N], md[F__N], mn_success = minof(f, n);
      for (int j = 0; j < F__N; j++) {
        mx[j] = maxof(f + (size_t)j * n, n);
        md[j] = median(f + (size_t)j * n, n);
      }
      printf(
          "| %-10s | %10.2f%% | %10.2f%% | %10.3f (%6.3f) | %17.0f "
          "| %7.0f (%6.0f) | %7.0f (%6.0f) | %10.2f (%7.2f) "
          "| %8.2fx (%6.2fx) | %.2fx (%.2fx) | %.2fx (%.2fx) |\n",
          bw_lab_mode_name(modes[m]), mn_success, md[F_SUCCESS], md[F_CPR],
          mx[F_CPR], mx[F_MAXIF], md[F_P50], mx[F_P50], md[F_P99], mx[F_P99],
          md[F_DUR], mx[F_DUR], md[F_RDUR], mx[F_RDUR], md[F_RP50], mx[F_RP50],
          md[F_RP99], mx[F_RP99]);
    }
    fflush(stdout);
  }
  free(v);
  free(orc);
  return status;
}

/* breakwater tool — what `storm` (real HTTP) and `lab storm` (virtual time)
 * report: one row per mode, the table, the JSON file, the timeline file
 * and its gnuplot rendering. One schema for both, with "virtual" telling
 * them apart. */
#ifndef BREAKWATER_TOOLS_STORM_REPORT_H
#define BREAKWATER_TOOLS_STORM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "breakwater/lab.h"

/* How logical requests ended. Conservation: requests = successes + the sum
 * of failures. */
enum {
  BW_STORM_F_429 = 0,   /* the last attempt got a 429 */
  BW_STORM_F_TIMEOUT,   /* the last attempt timed out */
  BW_STORM_F_STATUS,    /* another non-2xx status */
  BW_STORM_F_TRANSPORT, /* connection refused/reset (real HTTP only) */
  BW_STORM_F_BREAKER,   /* refused by the breaker: no network call */
  BW_STORM_F_LIMITER,   /* refused by the concurrency limit */
  BW_STORM_F_BUDGET,    /* the retry budget refused a retry */
  BW_STORM_F_DEADLINE,  /* the call's deadline passed */
  BW_STORM_F_OTHER,     /* any other give-up (Retry-After too long...) */
  BW_STORM_F__COUNT
};

/* The JSON key of a failure kind: "429", "timeout", "status", "transport",
 * "breaker", "limiter", "budget", "deadline", "other". */
const char *bw_storm_failure_key(int kind);

typedef struct bw_storm_row_s {
  bw_lab_mode_t mode;
  uint64_t requests;
  uint64_t successes;
  uint64_t failures[BW_STORM_F__COUNT];
  uint64_t network_calls;    /* attempts the client sent */
  uint64_t partner_received; /* as the partner counted them */
  /* Attempts that got no response (timed out, connection errors): each may
   * or may not have reached the partner, so in a run that completed,
   * partner_received lies in [network_calls - unanswered, network_calls]
   * (a cut run's attempts aborted at the end are in neither). 0 in virtual
   * time, where every call reaches the partner. */
  uint64_t unanswered;
  uint32_t partner_max_in_flight;
  int64_t duration_ms; /* first arrival to last end */
  double p50_ms, p95_ms, p99_ms;
  uint64_t breaker_opens;
  /* Attempts the client-side throttle (--sre-k, or a throttle.storm of
   * --config) refused before they went out; 0 without one. Each also ends
   * its request as a limiter refusal. */
  uint64_t throttle_refused;
} bw_storm_row_t;

/* The row of a virtual run. */
void bw_storm_row_from_lab(bw_storm_row_t *row, bw_lab_mode_t mode,
                           const bw_lab_results_t *r);

typedef struct bw_storm_meta_s {
  bool virtual_time;
  uint64_t seed;
  uint32_t clients;
  uint32_t capacity;
  int64_t attempt_timeout_ms;
  const char *url; /* real runs: the partner's URL */
} bw_storm_meta_t;

/* The comparison table, with the Polly lab's reference lines under it. */
void bw_storm_print_table(FILE *out, const bw_storm_meta_t *meta,
                          const bw_storm_row_t *rows, int nrows);
/* Writes the JSON document. 0, or -1 with err (a sentence naming the
 * path). */
int bw_storm_write_json(const char *path, const bw_storm_meta_t *meta,
                        const bw_storm_row_t *rows, int nrows, char *err,
                        size_t err_size);

/* A timeline: samples of every mode, in the order they were run. */
typedef struct bw_storm_entry_s {
  bw_lab_mode_t mode;
  bw_lab_sample_t s;
} bw_storm_entry_t;

typedef struct bw_storm_timeline_s {
  bw_storm_entry_t *entries;
  size_t count, cap;
  bool oom;
} bw_storm_timeline_t;

void bw_storm_timeline_add(bw_storm_timeline_t *t, bw_lab_mode_t mode,
                           const bw_lab_sample_t *s);
void bw_storm_timeline_free(bw_storm_timeline_t *t);
/* Writes the samples as whitespace-separated columns with a header line:
 * mode t_ms partner_in_flight ok partner_429 timeouts network_calls completed
 * breaker limit. 0 or -1 with err. */
int bw_storm_write_timeline(const char *path, const bw_storm_timeline_t *t,
                            char *err, size_t err_size);
/* Renders the timeline to a PNG with gnuplot: one panel per mode (partner
 * in flight, 2xx and 429 per interval, the limiter's limit, breaker-open
 * shading). 0 or -1 with err (gnuplot missing or failing, path not
 * writable). */
int bw_storm_plot(const char *png_path, const bw_storm_timeline_t *t,
                  const bw_storm_meta_t *meta, char *err, size_t err_size);

#endif

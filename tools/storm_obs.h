/* breakwater tool — the storm's --metrics and --events: each mode's objects
 * in Prometheus text (one exposition for the whole run, name = the mode) and
 * every event of the run as JSON lines. */
#ifndef BW_TOOL_STORM_OBS_H
#define BW_TOOL_STORM_OBS_H

#include <stddef.h>
#include <stdio.h>

#include "breakwater/lab.h"

typedef struct bw_storm_obs_s {
  char *texts[BW_LAB__COUNT]; /* each mode's exposition (bw_free) */
  int n;
  /* in real HTTP mode, each mode's HTTP driver's (bw_storm_obs_http),
   * written after the kits' families */
  char *http[BW_LAB__COUNT];
  int nh;
  int failed; /* a mode's exposition could not be made (out of memory) */
} bw_storm_obs_t;

/* A bw_lab_kit_fn (userdata: a bw_storm_obs_t): puts the kit's objects into
 * a registry under the mode's name and keeps its Prometheus text. */
void bw_storm_obs_kit(void *userdata, const bw_lab_kit_t *kit);

/* For the real storm (userdata: a bw_storm_obs_t): the HTTP driver's
 * families (bw_curl_put_registry) under the mode's name, kept for
 * bw_storm_obs_write_metrics. */
struct bw_curl_s;
void bw_storm_obs_http(void *userdata, const char *mode,
                       struct bw_curl_s *http);

/* Writes the modes' texts to path as one exposition: each family's HELP
 * and TYPE once, then its samples from every mode (families without a
 * sample, and the registry's own, left out). 0, or -1 with err. */
int bw_storm_obs_write_metrics(const bw_storm_obs_t *obs, const char *path,
                               char *err, size_t err_size);

void bw_storm_obs_free(bw_storm_obs_t *obs);

/* --events: opens path and a JSON-lines sink on it (*fp and *sink; both
 * NULL when path is NULL). 0, or -1 with err. */
int bw_storm_events_open(const char *path, FILE **fp, bw_sink_t **sink,
                         char *err, size_t err_size);
/* Frees the sink and closes the file: 0, or -1 with err when a write
 * failed. */
int bw_storm_events_close(const char *path, FILE *fp, bw_sink_t *sink,
                          char *err, size_t err_size);

/* The end of a run: writes --metrics (when asked), frees obs, closes
 * --events, and reports each failure on stderr as "PROG: --FLAG: why".
 * 0, or 1 when either output failed. */
int bw_storm_outputs_finish(const char *prog, const char *metrics,
                            bw_storm_obs_t *obs, const char *events,
                            FILE *events_fp, bw_sink_t *events_sink);

#endif

/* breakwater tool — the retry storm over real HTTP on loopback: N logical
 * requests through one mode's pipeline (lab.h's kits on the monotonic
 * clock), sent with the libcurl driver on one libevent loop, against the
 * embedded partner (started on a free loopback port) or a --url one. */
#ifndef BREAKWATER_TOOLS_STORM_REAL_H
#define BREAKWATER_TOOLS_STORM_REAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "breakwater/lab.h"
#include "storm_report.h"

struct bw_curl_s; /* driver_curl.h */

typedef struct bw_storm_real_config_s {
  bw_lab_mode_t mode;
  uint32_t clients;
  bool ramp;       /* false: all at once */
  int64_t ramp_ms; /* ramp: spread evenly over this */
  int64_t attempt_timeout_ms;
  uint64_t seed;
  uint32_t max_limit;
  bw_sim_partner_config_t partner; /* the embedded partner's model */
  const char *url;            /* NULL: embedded partner; else its base URL */
  int64_t max_duration_ms;    /* the run is cut (calls cancelled) after this */
  int64_t sample_ms;          /* timeline interval; default 100 */
  bool progress;              /* a progress line on stderr */
  int mode_index, mode_count; /* for the progress line */
  uint32_t submit_batch;      /* requests submitted per loop turn; 0 = 256 */
  int64_t idle_wait_ms;       /* --url: how long to wait for a busy partner (409
                                 to POST /reset) to go idle; 0 =
                                 BW_STORM_IDLE_WAIT_MS */
  bw_sink_t *sink;            /* optional: the kit's events */
  const char *config_file;    /* breakwater mode: run the pipeline
                                 [pipeline.storm] of this file (checked by
                                 bw_storm_check_config) instead of the
                                 lab's; NULL: the lab's */
  double sre_k;               /* breakwater mode: the client-side throttle's
                                 K (bw_lab_kit_config_t.sre_k); 0 = none */
  bw_lab_kit_fn on_kit;       /* optional: the kit at the end of a run */
  void *kit_userdata;
  /* optional: the HTTP driver at the end of a run, before it is freed (with
   * kit_userdata and the mode's name) */
  void (*on_http)(void *userdata, const char *mode, struct bw_curl_s *http);
} bw_storm_real_config_t;

#define BW_STORM_IDLE_WAIT_MS 30000

/* The real storm's ceiling on --clients: one event loop on loopback (and
 * the embedded partner) on a small machine; the virtual lab takes more. */
#define BW_STORM_REAL_MAX_CLIENTS 10000u

/* Checks that `clients` can be served: at most BW_STORM_REAL_MAX_CLIENTS,
 * and enough file descriptors (the soft RLIMIT_NOFILE is raised to the hard
 * one first): one a client, two with the embedded partner, plus a
 * reserve. 0, or -1 with a sentence naming --clients, the need, the limit
 * and the largest count that fits. */
int bw_storm_fd_budget(uint32_t clients, bool embedded, char *err,
                       size_t err_size);

/* Runs one mode. Fills *row (partner_received from the partner: its
 * counters when embedded, GET /metrics otherwise) and appends samples to
 * *timeline (may be NULL). 0, or -1 with a sentence in err (the partner
 * could not start, the URL is unreachable or not a breakwater partner). */
int bw_storm_run_real(const bw_storm_real_config_t *cfg, bw_storm_row_t *row,
                      bw_storm_timeline_t *timeline, char *err,
                      size_t err_size);

/* Checks a --url with libcurl's URL parser: scheme http, no user name or
 * password, no query or fragment, and a numeric loopback host (127.0.0.0/8,
 * ::1) or localhost. Writes the base URL the storm uses into base: rebuilt
 * from the checked parts with the numeric address (localhost is
 * 127.0.0.1), the port explicit, no trailing '/'. 0, or -1 with a sentence
 * starting "--url must be" in err. */
int bw_storm_check_url(const char *url, char *base, size_t base_size, char *err,
                       size_t err_size);

#endif

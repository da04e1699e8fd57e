/* The storm's --metrics: see storm_obs.h. */
#include "storm_obs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/driver_curl.h"
#include "breakwater/registry.h"

void bw_storm_obs_kit(void *userdata, const bw_lab_kit_t *kit) {
  bw_storm_obs_t *obs = userdata;
  const char *name = bw_lab_mode_name(kit->mode);
  bw_error_t e;
  bw_registry_t *reg;
  int rc = BW_OK;
  if (obs->n >= BW_LAB__COUNT) return;
  reg = bw_registry_new(NULL, &e);
  if (reg == NULL) {
    obs->failed = 1;
    return;
  }
  if (kit->pipeline != NULL)
    rc |= bw_registry_put_object(reg, BW_REGISTRY_PIPELINE, name, kit->pipeline,
                                 &e);
  if (kit->retry != NULL)
    rc |= bw_registry_put_object(reg, BW_REGISTRY_RETRY, name, kit->retry, &e);
  if (kit->breaker != NULL)
    rc |= bw_registry_put_object(reg, BW_REGISTRY_BREAKER_IF, name,
                                 bw_breaker_iface(kit->breaker), &e);
  if (kit->limiter != NULL)
    rc |= bw_registry_put_object(reg, BW_REGISTRY_LIMITER, name, kit->limiter,
                                 &e);
  if (kit->budget != NULL)
    rc |=
        bw_registry_put_object(reg, BW_REGISTRY_BUDGET, name, kit->budget, &e);
  if (kit->bulkhead != NULL)
    rc |= bw_registry_put_object(reg, BW_REGISTRY_BULKHEAD, name, kit->bulkhead,
                                 &e);
  if (kit->throttle != NULL)
    rc |= bw_registry_put_object(reg, BW_REGISTRY_THROTTLE, name, kit->throttle,
                                 &e);
  if (rc == BW_OK) obs->texts[obs->n] = bw_registry_prometheus(reg, NULL);
  if (obs->texts[obs->n] == NULL)
    obs->failed = 1;
  else
    obs->n++;
  bw_registry_free(reg);
}

void bw_storm_obs_http(void *userdata, const char *mode,
                       struct bw_curl_s *http) {
  bw_storm_obs_t *obs = userdata;
  bw_error_t e;
  bw_registry_t *reg;
  if (obs->nh >= BW_LAB__COUNT) return;
  reg = bw_registry_new(NULL, &e);
  if (reg != NULL && bw_curl_put_registry(reg, mode, http, &e) == BW_OK)
    obs->http[obs->nh] = bw_registry_prometheus(reg, NULL);
  if (obs->http[obs->nh] == NULL)
    obs->failed = 1;
  else
    obs->nh++;
  bw_registry_free(reg); /* before the driver: the collector borrows it */
}

/* A family's block in one text: its HELP and TYPE lines, then samples. */
typedef struct block_s {
  const char *head; /* "# HELP ..." through the TYPE line's newline */
  size_t head_len;
  const char *samples; /* the sample lines */
  size_t samples_len;
} block_t;

/* The block of family `name` in text, or false. */
static bool find_block(const char *text, const char *name, block_t *b) {
  size_t nl = strlen(name);
  const char *p = text;
  while ((p = strstr(p, "# HELP ")) != NULL) {
    if ((p == text || p[-1] == '\n') && strncmp(p + 7, name, nl) == 0 &&
        p[7 + nl] == ' ') {
      const char *t = strchr(p, '\n');
      const char *end;
      if (t == NULL) return false;
      t = strchr(t + 1, '\n'); /* the TYPE line */
      if (t == NULL) return false;
      t++;
      end = strstr(t, "# HELP ");
      if (end == NULL) end = t + strlen(t);
      b->head = p;
      b->head_len = (size_t)(t - p);
      b->samples = t;
      b->samples_len = (size_t)(end - t);
      return true;
    }
    p += 7;
  }
  return false;
}

int bw_storm_obs_write_metrics(const bw_storm_obs_t *obs, const char *path,
                               char *err, size_t err_size) {
  FILE *fp = fopen(path, "w");
  const char *texts[2 * BW_LAB__COUNT]; /* the kits', then the drivers' */
  int i, n = 0;
  if (fp == NULL) {
    snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  if (obs->failed) {
    fclose(fp);
    snprintf(err, err_size, "out of memory making the metrics");
    return -1;
  }
  for (i = 0; i < obs->n; i++)
    texts[n++] = obs->texts[i];
  for (i = 0; i < obs->nh; i++)
    texts[n++] = obs->http[i];
  /* Families in the order of their first appearance, each mode's samples
   * together under one HELP and TYPE. */
  for (i = 0; i < n; i++) {
    const char *p = texts[i];
    while ((p = strstr(p, "# HELP ")) != NULL) {
      char name[128];
      size_t k = 0;
      bool seen = false, any = false;
      block_t b;
      int j;
      p += 7;
      while (p[k] != ' ' && p[k] != '\0' && k + 1 < sizeof name) {
        name[k] = p[k];
        k++;
      }
      name[k] = '\0';
      if (strncmp(name, "breakwater_registry_", 20) == 0) continue;
      for (j = 0; j < i && !seen; j++)
        seen = find_block(texts[j], name, &b);
      if (seen) continue; /* written with an earlier mode's */
      for (j = i; j < n && !any; j++)
        any = find_block(texts[j], name, &b) && b.samples_len > 0;
      if (!any) continue;
      if (!find_block(texts[i], name, &b)) continue;
      fwrite(b.head, 1, b.head_len, fp);
      for (j = i; j < n; j++)
        if (find_block(texts[j], name, &b))
          fwrite(b.samples, 1, b.samples_len, fp);
    }
  }
  if (fflush(fp) != 0 || ferror(fp)) {
    fclose(fp);
    snprintf(err, err_size, "writing '%s' failed", path);
    return -1;
  }
  if (fclose(fp) != 0) {
    snprintf(err, err_size, "writing '%s' failed: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

void bw_storm_obs_free(bw_storm_obs_t *obs) {
  for (int i = 0; i < obs->n; i++)
    bw_free(obs->texts[i]);
  for (int i = 0; i < obs->nh; i++)
    bw_free(obs->http[i]);
  obs->n = 0;
  obs->nh = 0;
}

int bw_storm_events_open(const char *path, FILE **fp, bw_sink_t **sink,
                         char *err, size_t err_size) {
  bw_error_t e;
  *fp = NULL;
  *sink = NULL;
  if (path == NULL) return 0;
  *fp = fopen(path, "w");
  if (*fp == NULL) {
    snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  *sink = bw_sink_json_new(*fp, &e);
  if (*sink == NULL) {
    fclose(*fp);
    *fp = NULL;
    snprintf(err, err_size, "%s", e.message);
    return -1;
  }
  return 0;
}

int bw_storm_events_close(const char *path, FILE *fp, bw_sink_t *sink,
                          char *err, size_t err_size) {
  int bad;
  if (fp == NULL) return 0;
  bw_sink_free(sink);
  bad = fflush(fp) != 0 || ferror(fp);
  if (fclose(fp) != 0) bad = 1;
  if (bad) {
    snprintf(err, err_size, "writing '%s' failed", path);
    return -1;
  }
  return 0;
}

int bw_storm_outputs_finish(const char *prog, const char *metrics,
                            bw_storm_obs_t *obs, const char *events,
                            FILE *events_fp, bw_sink_t *events_sink) {
  char msg[512];
  int status = 0;
  if (metrics != NULL &&
      bw_storm_obs_write_metrics(obs, metrics, msg, sizeof msg) != 0) {
    fprintf(stderr, "%s: --metrics: %s\n", prog, msg);
    status = 1;
  }
  bw_storm_obs_free(obs);
  if (bw_storm_events_close(events, events_fp, events_sink, msg, sizeof msg) !=
      0) {
    fprintf(stderr, "%s: --events: %s\n", prog, msg);
    status = 1;
  }
  return status;
}

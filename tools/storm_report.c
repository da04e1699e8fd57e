/* breakwater tool — the storm's report: table, JSON, timeline, plot. */
#include "storm_report.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const failure_keys[BW_STORM_F__COUNT] = {
    "429",     "timeout", "status",   "transport", "breaker",
    "limiter", "budget",  "deadline", "other"};

const char *bw_storm_failure_key(int kind) {
  return kind >= 0 && kind < BW_STORM_F__COUNT ? failure_keys[kind] : "?";
}

void bw_storm_row_from_lab(bw_storm_row_t *row, bw_lab_mode_t mode,
                           const bw_lab_results_t *r) {
  const bw_sim_results_t *s = &r->sim;
  memset(row, 0, sizeof *row);
  row->mode = mode;
  row->requests = s->requests;
  row->successes = s->successes;
  row->failures[BW_STORM_F_429] = s->failed_429;
  row->failures[BW_STORM_F_TIMEOUT] = s->failed_timeout;
  row->failures[BW_STORM_F_STATUS] = s->failed_status;
  row->failures[BW_STORM_F_BREAKER] = s->rejected_by[BW_SIM_REJECT_BREAKER];
  row->failures[BW_STORM_F_LIMITER] = s->rejected_by[BW_SIM_REJECT_LIMITER] +
                                      s->rejected_by[BW_SIM_REJECT_BULKHEAD] +
                                      s->rejected_by[BW_SIM_REJECT_RATELIMIT];
  row->failures[BW_STORM_F_BUDGET] = s->rejected_by[BW_SIM_REJECT_BUDGET];
  row->failures[BW_STORM_F_OTHER] = s->rejected_by[BW_SIM_REJECT_OTHER];
  /* Give-ups: the deadline ones by name, the rest as other. */
  uint64_t deadline =
      r->failed_deadline <= s->gave_up ? r->failed_deadline : s->gave_up;
  row->failures[BW_STORM_F_DEADLINE] = deadline;
  row->failures[BW_STORM_F_OTHER] += s->gave_up - deadline;
  row->network_calls = s->network_calls;
  row->partner_received = s->partner_received;
  row->partner_max_in_flight = (uint32_t)s->partner_max_in_flight;
  row->duration_ms = s->completion_ns / 1000000;
  row->p50_ms = (double)s->latency_p50_ns / 1e6;
  row->p95_ms = (double)s->latency_p95_ns / 1e6;
  row->p99_ms = (double)s->latency_p99_ns / 1e6;
  row->breaker_opens = r->breaker_opens;
  row->throttle_refused = r->throttle_refused;
}

static double ratio(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : (double)a / (double)b;
}

void bw_storm_print_table(FILE *out, const bw_storm_meta_t *m,
                          const bw_storm_row_t *rows, int n) {
  fprintf(out,
          "\n%s storm: %u clients, partner capacity %u, attempt timeout "
          "%" PRId64 " ms, seed %" PRIu64 "%s%s\n\n",
          m->virtual_time ? "virtual-time" : "real-HTTP", m->clients,
          m->capacity, m->attempt_timeout_ms, m->seed,
          m->url != NULL ? ", partner " : "", m->url != NULL ? m->url : "");
  fprintf(out,
          "| mode       | success | calls | calls/req | 429 | timeout | "
          "breaker | limiter | budget | deadline | other | max in flight | "
          "p50 ms | p99 ms | duration s | vs oracle: duration / p50 |\n");
  fprintf(out,
          "|------------|--------:|------:|----------:|----:|--------:|"
          "--------:|--------:|-------:|---------:|------:|--------------:|"
          "-------:|-------:|-----------:|--------------------------:|\n");
  /* The oracle's row of the same run, if it ran: the ideal to compare to. */
  const bw_storm_row_t *orc = NULL;
  for (int i = 0; i < n; i++)
    if (rows[i].mode == BW_LAB_ORACLE) orc = &rows[i];
  for (int i = 0; i < n; i++) {
    const bw_storm_row_t *r = &rows[i];
    char vs[40] = "-";
    if (orc != NULL && orc->duration_ms > 0 && orc->p50_ms > 0)
      snprintf(vs, sizeof vs, "%.2fx / %.2fx",
               (double)r->duration_ms / (double)orc->duration_ms,
               r->p50_ms / orc->p50_ms);
    uint64_t other = r->failures[BW_STORM_F_OTHER] +
                     r->failures[BW_STORM_F_STATUS] +
                     r->failures[BW_STORM_F_TRANSPORT];
    fprintf(out,
            "| %-10s | %6.1f%% | %5" PRIu64 " | %9.2f | %3" PRIu64
            " | %7" PRIu64 " | %7" PRIu64 " | %7" PRIu64 " | %6" PRIu64
            " | %8" PRIu64 " | %5" PRIu64
            " | %13u | %6.0f | %6.0f | %10.2f | %25s |\n",
            bw_lab_mode_name(r->mode), 100.0 * ratio(r->successes, r->requests),
            r->network_calls, ratio(r->network_calls, r->requests),
            r->failures[BW_STORM_F_429], r->failures[BW_STORM_F_TIMEOUT],
            r->failures[BW_STORM_F_BREAKER], r->failures[BW_STORM_F_LIMITER],
            r->failures[BW_STORM_F_BUDGET], r->failures[BW_STORM_F_DEADLINE],
            other, r->partner_max_in_flight, r->p50_ms, r->p99_ms,
            (double)r->duration_ms / 1000.0, vs);
  }
  fprintf(out,
          "\nThe Polly lab's own figures (800 clients vs a partner that holds "
          "400): "
          "naive up to 3 calls a request (2,400) and 33 %% success in its "
          "environment; Polly's pipeline ~1,000 calls.\n");
}

static void json_row(FILE *f, const bw_storm_row_t *r) {
  fprintf(f,
          "    {\"mode\": \"%s\", \"requests\": %" PRIu64
          ", \"successes\": %" PRIu64 ", \"success_ratio\": %.6f",
          bw_lab_mode_name(r->mode), r->requests, r->successes,
          ratio(r->successes, r->requests));
  fprintf(f, ", \"failures\": {");
  for (int k = 0; k < BW_STORM_F__COUNT; k++)
    fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", failure_keys[k],
            r->failures[k]);
  fprintf(f,
          "}, \"network_calls\": %" PRIu64
          ", \"calls_per_request\": %.6f"
          ", \"partner_received\": %" PRIu64
          ", \"partner_max_in_flight\": %u, \"breaker_opens\": %" PRIu64
          ", \"throttle_refused\": %" PRIu64 ", \"duration_ms\": %" PRId64
          ", \"latency_ms\": {\"p50\": %.3f, \"p95\": %.3f, \"p99\": %.3f}}",
          r->network_calls, ratio(r->network_calls, r->requests),
          r->partner_received, r->partner_max_in_flight, r->breaker_opens,
          r->throttle_refused, r->duration_ms, r->p50_ms, r->p95_ms, r->p99_ms);
}

static int open_for_write(const char *path, FILE **f, char *err,
                          size_t err_size) {
  *f = fopen(path, "w");
  if (*f == NULL) {
    snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

static int close_written(const char *path, FILE *f, char *err,
                         size_t err_size) {
  if (ferror(f) | (fclose(f) != 0)) {
    snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

int bw_storm_write_json(const char *path, const bw_storm_meta_t *m,
                        const bw_storm_row_t *rows, int n, char *err,
                        size_t err_size) {
  FILE *f;
  bool to_stdout = strcmp(path, "-") == 0;
  if (to_stdout)
    f = stdout;
  else if (open_for_write(path, &f, err, err_size) != 0)
    return -1;
  fprintf(f,
          "{\n  \"virtual\": %s,\n  \"seed\": %" PRIu64
          ",\n  \"clients\": %u,\n  \"capacity\": %u,\n"
          "  \"attempt_timeout_ms\": %" PRId64 ",\n",
          m->virtual_time ? "true" : "false", m->seed, m->clients, m->capacity,
          m->attempt_timeout_ms);
  if (m->url != NULL) fprintf(f, "  \"url\": \"%s\",\n", m->url);
  fprintf(f, "  \"modes\": [\n");
  for (int i = 0; i < n; i++) {
    json_row(f, &rows[i]);
    fprintf(f, "%s\n", i + 1 < n ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (to_stdout) {
    if (fflush(f) != 0 || ferror(f)) {
      snprintf(err, err_size, "cannot write the standard output: %s",
               strerror(errno));
      return -1;
    }
    return 0;
  }
  return close_written(path, f, err, err_size);
}

void bw_storm_timeline_add(bw_storm_timeline_t *t, bw_lab_mode_t mode,
                           const bw_lab_sample_t *s) {
  if (t->oom) return;
  if (t->count == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    bw_storm_entry_t *e = realloc(t->entries, cap * sizeof *e);
    if (e == NULL) {
      t->oom = true;
      return;
    }
    t->entries = e;
    t->cap = cap;
  }
  t->entries[t->count].mode = mode;
  t->entries[t->count].s = *s;
  t->count++;
}

void bw_storm_timeline_free(bw_storm_timeline_t *t) {
  free(t->entries);
  memset(t, 0, sizeof *t);
}

int bw_storm_write_timeline(const char *path, const bw_storm_timeline_t *t,
                            char *err, size_t err_size) {
  FILE *f;
  if (t->oom) {
    snprintf(err, err_size, "out of memory while recording the timeline");
    return -1;
  }
  if (open_for_write(path, &f, err, err_size) != 0) return -1;
  fprintf(f,
          "# mode t_ms partner_in_flight ok partner_429 timeouts network_calls "
          "completed breaker limit\n");
  for (size_t i = 0; i < t->count; i++) {
    const bw_lab_sample_t *s = &t->entries[i].s;
    fprintf(f,
            "%s %" PRId64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
            " %" PRIu64 " %s %u\n",
            bw_lab_mode_name(t->entries[i].mode), s->t_ms, s->partner_in_flight,
            s->ok, s->throttled, s->timeouts, s->network_calls, s->completed,
            bw_state_name(s->breaker), s->limit);
  }
  return close_written(path, f, err, err_size);
}

int bw_storm_plot(const char *png, const bw_storm_timeline_t *t,
                  const bw_storm_meta_t *m, char *err, size_t err_size) {
  char dir[] = "/tmp/bw-plot-XXXXXX";
  char data[64], script[64];
  int rc = -1;
  if (mkdtemp(dir) == NULL) {
    snprintf(err, err_size, "cannot create a temporary folder: %s",
             strerror(errno));
    return -1;
  }
  snprintf(data, sizeof data, "%s/timeline.dat", dir);
  snprintf(script, sizeof script, "%s/plot.gp", dir);
  if (bw_storm_write_timeline(data, t, err, err_size) != 0) goto out;
  /* The modes present, in order of first appearance. */
  bw_lab_mode_t modes[BW_LAB__COUNT];
  int nm = 0;
  for (size_t i = 0; i < t->count; i++) {
    bool seen = false;
    for (int j = 0; j < nm; j++)
      seen |= modes[j] == t->entries[i].mode;
    if (!seen && nm < BW_LAB__COUNT) modes[nm++] = t->entries[i].mode;
  }
  if (nm == 0) {
    snprintf(err, err_size, "nothing to plot: the timeline is empty");
    goto out;
  }
  FILE *f;
  if (open_for_write(script, &f, err, err_size) != 0) goto out;
  fprintf(f, "set terminal png size 1200,%d\n", 320 * nm + 60);
  fprintf(f, "set output '%s'\n", png);
  fprintf(f,
          "set multiplot layout %d,1 title '%s storm: %u clients vs "
          "capacity %u (seed %" PRIu64 ")'\n",
          nm, m->virtual_time ? "virtual-time" : "real-HTTP", m->clients,
          m->capacity, m->seed);
  /* One time axis for every panel, so the modes compare at a glance. */
  int64_t tmax = 0;
  for (size_t i = 0; i < t->count; i++)
    if (t->entries[i].s.t_ms > tmax) tmax = t->entries[i].s.t_ms;
  fprintf(f, "set xrange [0:%.3f]\n", (double)(tmax > 0 ? tmax : 1) / 1000.0);
  /* One y scale for every panel too (requests on the left, per-interval
   * counts on the right), with headroom above the capacity so its line is
   * never hidden on a panel's top edge. */
  uint64_t ymax = m->capacity, y2max = 1;
  for (size_t i = 0; i < t->count; i++) {
    const bw_lab_sample_t *s = &t->entries[i].s;
    if (s->partner_in_flight > ymax) ymax = s->partner_in_flight;
    if (s->limit > ymax) ymax = s->limit;
    if (s->ok > y2max) y2max = s->ok;
    if (s->throttled > y2max) y2max = s->throttled;
    if (s->timeouts > y2max) y2max = s->timeouts;
  }
  fprintf(f, "set yrange [0:%.0f]\nset y2range [0:%.0f]\n",
          (double)ymax * 1.15 + 1, (double)y2max * 1.15 + 1);
  fprintf(f,
          "set grid\nset key top right\nset xlabel 'time (s)'\n"
          "set ylabel 'requests'\nset y2label 'per interval'\n"
          "set ytics nomirror\nset y2tics\n");
  for (int j = 0; j < nm; j++) {
    const char *name = bw_lab_mode_name(modes[j]);
    fprintf(f, "set title '%s'\n", name);
    /* Column 9 is the breaker state: shade the intervals it was open. */
    fprintf(f,
            "plot '%s' using ($2/1000):(strcol(1) eq '%s' && strcol(9) eq "
            "'open' ? %u : 1/0) with boxes fs solid 0.15 lc rgb '#cc0000' "
            "title 'breaker open', \\\n"
            "  '' using ($2/1000):(strcol(1) eq '%s' ? $3 : 1/0) with lines "
            "lw 2 lc rgb '#1f77b4' title 'partner in flight', \\\n"
            "  '' using ($2/1000):(strcol(1) eq '%s' ? $10 : 1/0) with lines "
            "dt 2 lc rgb '#2ca02c' title 'limit', \\\n"
            "  %u with lines lw 2 dt 3 lc rgb 'black' title 'capacity', \\\n"
            "  '' using ($2/1000):(strcol(1) eq '%s' ? $4 : 1/0) axes x1y2 "
            "with lines lc rgb '#17becf' title '2xx', \\\n"
            "  '' using ($2/1000):(strcol(1) eq '%s' ? $5 : 1/0) axes x1y2 "
            "with lines lc rgb '#d62728' title '429', \\\n"
            "  '' using ($2/1000):(strcol(1) eq '%s' ? $6 : 1/0) axes x1y2 "
            "with lines lc rgb '#ff7f0e' title 'timeouts'\n",
            data, name, m->capacity, name, name, m->capacity, name, name, name);
  }
  fprintf(f, "unset multiplot\n");
  if (close_written(script, f, err, err_size) != 0) goto out;
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, err_size, "cannot start gnuplot: %s", strerror(errno));
    goto out;
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(err, err_size,
             WIFEXITED(status) && WEXITSTATUS(status) == 127
                 ? "gnuplot not found (install gnuplot-nox) for --plot"
                 : "gnuplot failed to render '%s'",
             png);
    goto out;
  }
  rc = 0;
out:
  unlink(data);
  unlink(script);
  rmdir(dir);
  return rc;
}

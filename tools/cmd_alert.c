/* `breakwater alert`: an alert rule (alert.h) over a JSON event stream
 * (docs/events.md), read from stdin or --input, printing the alert's own
 * events (alert_firing / alert_resolved) as JSON lines on stdout. Time is
 * the events' own `ts`: the rule runs on a clock that reads the time of the
 * line being read, so a recorded stream gives the same answer whenever it
 * is replayed. docs/alert.md is the user guide. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "breakwater/alert.h"
#include "cli.h"
#include "commands.h"
#include "event_json.h"

#define ALERT_MAX_REPORTED 10 /* bad lines reported one by one */

typedef struct opts_s {
  const char *rule;
  const char *name;
  const char *input;
  const char *metrics;
  bool quiet;
} opts_t;

static size_t make_flags(bw_cli_flag_t *f, opts_t *o) {
  bw_cli_flag_t all[] = {
      BW_CLI_STRING("rule", &o->rule, "RULE",
                    "the rule: 'EVENT [name=NAME] N/M WINDOW', e.g. "
                    "'breaker_opened name=payments 3/3 60s' (required)"),
      BW_CLI_STRING("name", &o->name, "NAME",
                    "the alert's name in its events (default alert)"),
      BW_CLI_STRING("input", &o->input, "FILE",
                    "read the events from FILE (default -: stdin)"),
      BW_CLI_STRING("metrics", &o->metrics, "FILE",
                    "at the end, write the alert's Prometheus text to FILE"),
      BW_CLI_BOOL("quiet", &o->quiet, "no summary on stderr"),
  };
  size_t n = sizeof(all) / sizeof(all[0]);
  memcpy(f, all, sizeof(all));
  return n;
}

#define MAX_FLAGS 8

void bw_cmd_alert_help(FILE *out) {
  bw_cli_flag_t flags[MAX_FLAGS];
  opts_t o;
  size_t n;
  memset(&o, 0, sizeof(o));
  n = make_flags(flags, &o);
  fprintf(out,
          "usage: breakwater alert --rule RULE [flags] < events.jsonl\n\n"
          "Runs an alert rule over breakwater's JSON event lines and prints "
          "its\n"
          "alert_firing / alert_resolved events as JSON lines. A window "
          "breaches when\n"
          "the watched event falls in it; the rule fires when N of the last "
          "M closed\n"
          "windows breached (the Polly lab's alarm: "
          "'breaker_opened 3/3 60s').\n"
          "Time is each line's ts; windows are aligned to whole multiples "
          "of WINDOW.\n"
          "At the end of the input the window of the latest event is "
          "closed.\n\n"
          "flags:\n");
  bw_cli_print_flags(out, flags, n);
}

/* The alert's clock: the time of the line being read. */
static int64_t line_now(const bw_clock_t *c) {
  return *(const int64_t *)c->data;
}

static bw_event_type_t type_of(const char *wire) {
  for (int t = 0; t < BW_EV__COUNT; t++)
    if (strcmp(bw_event_type_name((bw_event_type_t)t), wire) == 0)
      return (bw_event_type_t)t;
  return BW_EV__COUNT; /* not one of ours: never watched */
}

/* Reads one line into buf (cap bytes); *len its length without the
 * newline. Returns 1 for a line, 0 at the end, -1 for a line longer than
 * the buffer (the rest of it is read and dropped). */
static int read_line(FILE *fp, char *buf, size_t cap, size_t *len) {
  size_t n = 0;
  int c;
  bool over = false;
  while ((c = getc(fp)) != EOF && c != '\n') {
    if (n < cap)
      buf[n++] = (char)c;
    else
      over = true;
  }
  if (c == EOF && n == 0 && !over) return 0;
  *len = n;
  return over ? -1 : 1;
}

static bool blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return false;
  return true;
}

int bw_cmd_alert(int argc, char **argv) {
  static char line[BW_EVENT_LINE_MAX];
  bw_cli_flag_t flags[MAX_FLAGS];
  bw_alert_config_t cfg;
  bw_alert_t *alert = NULL;
  bw_sink_t *out = NULL;
  bw_alert_stats_t st;
  bw_clock_t clock;
  bw_error_t err;
  char msg[300], name_buf[BW_NAME_MAX + 1];
  const char *input_name;
  int64_t now = 0, latest = INT64_MIN;
  uint64_t lines = 0, bad = 0;
  FILE *in;
  opts_t o;
  size_t n, len;
  int rc;

  memset(&o, 0, sizeof(o));
  o.name = "alert";
  o.input = "-";
  n = make_flags(flags, &o);
  rc = bw_cli_parse(flags, n, argc, argv, NULL, 0, NULL, msg, sizeof(msg));
  if (rc == BW_CLI_HELP) {
    bw_cmd_alert_help(stdout);
    return 0;
  }
  if (rc != BW_CLI_OK) {
    fprintf(stderr, "breakwater alert: %s\n", msg);
    fprintf(stderr, "Run 'breakwater help alert' for the flags.\n");
    return BW_CLI_EXIT_USAGE;
  }
  if (o.rule == NULL) {
    fprintf(stderr,
            "breakwater alert: --rule is required, e.g. --rule "
            "'breaker_opened name=payments 3/3 60s'\n");
    return BW_CLI_EXIT_USAGE;
  }
  clock.now_ns = line_now;
  clock.data = &now;
  bw_alert_config_init(&cfg);
  cfg.name = o.name;
  cfg.clock = &clock;
  cfg.wall_clock = &clock;
  if (bw_alert_parse_rule(o.rule, &cfg, name_buf, &err) != BW_OK) {
    fprintf(stderr, "breakwater alert: --rule: %s (got '%s')\n", err.message,
            o.rule);
    return BW_CLI_EXIT_USAGE;
  }
  if (bw_alert_config_validate(&cfg, &err) != BW_OK) {
    fprintf(stderr, "breakwater alert: --%s: %s\n", err.field, err.message);
    return BW_CLI_EXIT_USAGE;
  }
  if (strcmp(o.input, "-") == 0) {
    in = stdin;
    input_name = "stdin";
  } else {
    in = fopen(o.input, "rb");
    input_name = o.input;
    if (in == NULL) {
      fprintf(stderr, "breakwater alert: --input: cannot open '%s': %s\n",
              o.input, strerror(errno));
      return BW_CLI_EXIT_USAGE;
    }
  }
  out = bw_sink_json_new(stdout, &err);
  if (out == NULL) {
    fprintf(stderr, "breakwater alert: %s\n", err.message);
    if (in != stdin) fclose(in);
    return 1;
  }
  cfg.sink = out;

  while ((rc = read_line(in, line, sizeof(line), &len)) != 0) {
    bw_event_line_t ev;
    lines++;
    if (rc > 0 && blank(line, len)) continue; /* a blank line says nothing */
    if (rc < 0 || bw_event_line_parse(line, len, &ev, msg, sizeof(msg)) != 0) {
      if (rc < 0)
        snprintf(msg, sizeof(msg), "a line longer than %d bytes",
                 BW_EVENT_LINE_MAX);
      if (++bad <= ALERT_MAX_REPORTED)
        fprintf(stderr, "breakwater alert: %s:%" PRIu64 ": %s\n", input_name,
                lines, msg);
      continue;
    }
    now = ev.wall_ns;
    if (alert == NULL) { /* the first event's window is the first window */
      alert = bw_alert_new(&cfg, &err);
      if (alert == NULL) {
        fprintf(stderr, "breakwater alert: %s\n", err.message);
        break;
      }
    }
    if (now > latest) latest = now;
    bw_alert_observe(alert, type_of(ev.event), ev.name, now);
  }
  if (ferror(in)) {
    fprintf(stderr, "breakwater alert: %s: read error\n", input_name);
    bad++;
  }
  if (in != stdin) fclose(in);

  if (alert == NULL && o.metrics != NULL) /* no event at all: zeros */
    alert = bw_alert_new(&cfg, &err);
  /* The end of the input closes the window of the latest event. */
  if (alert != NULL && latest != INT64_MIN) {
    int64_t w = cfg.window_ms * INT64_C(1000000);
    int64_t q = latest / w - (latest % w < 0 ? 1 : 0);
    now = (q + 1) * w;
    bw_alert_advance(alert, now);
  }
  bw_alert_stats(alert, &st);
  if (bad > ALERT_MAX_REPORTED)
    fprintf(stderr, "breakwater alert: %" PRIu64 " more bad lines\n",
            bad - ALERT_MAX_REPORTED);
  if (!o.quiet)
    fprintf(stderr,
            "breakwater alert: %" PRIu64 " lines, %" PRIu64
            " watched events, %" PRIu64 " late, %" PRIu64 " bad; fired %" PRIu64
            ", resolved %" PRIu64 ", %s at the end\n",
            lines, st.matched, st.late, bad, st.fired, st.resolved,
            st.firing ? "firing" : "not firing");
  rc = bad > 0 ? 1 : 0;
  if (o.metrics != NULL && alert != NULL) {
    FILE *m = fopen(o.metrics, "w");
    if (m == NULL || bw_alert_write_prometheus(alert, m) != BW_OK) {
      fprintf(stderr, "breakwater alert: --metrics: cannot write '%s'\n",
              o.metrics);
      rc = 1;
    }
    if (m != NULL && fclose(m) != 0) rc = 1;
  }
  bw_alert_free(alert);
  bw_sink_free(out);
  fflush(stdout);
  return rc;
}

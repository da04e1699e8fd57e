/* An alert rule over events: N of the last M windows breaching (alert.h).
 *
 * The closed windows are a shift register of M bits (bit 0 the window closed
 * last), so the count of breaching windows is one popcount; the open window
 * is a counter. Windows are numbered floor(t / w) on the alert's clock. */
#include "breakwater/alert.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BW__ALERT_MAX_WINDOW_MS INT64_C(86400000)

struct bw_alert_s {
  pthread_mutex_t lock;
  char *name;
  char *watch_name; /* "" = any object */
  bw_event_type_t watch;
  uint32_t n, m;
  int64_t window_ns;
  const bw_clock_t *clock;
  const bw_clock_t *wall;
  bw_sink_t *sink;
  char reason[BW_NAME_MAX + 160]; /* the rule in words, for the events */
  /* state, under lock */
  uint64_t history;    /* bit i: the window closed i windows ago breached */
  int64_t open_index;  /* the open window's number */
  uint32_t open_count; /* watched events in it */
  atomic_bool firing;
  uint64_t observed, matched, late, closed, fired, resolved;
};

void bw_alert_config_init(bw_alert_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "alert";
  cfg->watch = BW_EV_CIRCUIT_OPENED;
  cfg->n = 3;
  cfg->m = 3;
  cfg->window_ms = 60000;
}

int bw_alert_config_validate(const bw_alert_config_t *c, bw_error_t *err) {
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if ((unsigned)c->watch >= BW_EV__COUNT)
    return bw_error_set(err, BW_E_INVAL, "watch",
                        "watch must be an event type (got %d)", (int)c->watch);
  if (c->watch == BW_EV_ALERT_FIRING || c->watch == BW_EV_ALERT_RESOLVED)
    return bw_error_set(err, BW_E_INVAL, "watch",
                        "watch must not be an alert's own event (got %s): "
                        "the alert emits it",
                        bw_event_type_name(c->watch));
  if (c->watch_name != NULL && c->watch_name[0] != '\0' &&
      bw_name_check(c->watch_name, "watch_name", err) != BW_OK)
    return BW_E_INVAL;
  if (c->m < 1 || c->m > BW_ALERT_MAX_WINDOWS)
    return bw_error_set(err, BW_E_INVAL, "m", "m must be in [1, %d] (got %u)",
                        BW_ALERT_MAX_WINDOWS, c->m);
  if (c->n < 1 || c->n > c->m)
    return bw_error_set(err, BW_E_INVAL, "n",
                        "n must be in [1, m] (got %u with m %u)", c->n, c->m);
  if (c->window_ms < 1 || c->window_ms > BW__ALERT_MAX_WINDOW_MS)
    return bw_error_set(err, BW_E_INVAL, "window_ms",
                        "window_ms must be in [1, %" PRId64 "] (got %" PRId64
                        ")",
                        BW__ALERT_MAX_WINDOW_MS, c->window_ms);
  return BW_OK;
}

/* ---- the rule grammar ---------------------------------------------------- */

/* An error naming the offending token (at most 60 bytes of it). */
#define bw__rule_error(err, fmt, tok, len)                                     \
  bw_error_set((err), BW_E_INVAL, "rule", fmt, (int)((len) > 60 ? 60 : (len)), \
               (tok))

/* A whole number of 1..12 digits; false otherwise. */
static bool bw__rule_number(const char *s, size_t n, int64_t *out) {
  int64_t x = 0;
  if (n < 1 || n > 12) return false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + (s[i] - '0');
  }
  *out = x;
  return true;
}

int bw_alert_parse_rule(const char *rule, bw_alert_config_t *cfg,
                        char *name_buf, bw_error_t *err) {
  const char *tok[5];
  size_t len[5], ntok = 0, i = 0, t = 1;
  bw_alert_config_t c;
  int64_t n, m, w;
  if (rule == NULL || cfg == NULL || name_buf == NULL)
    return bw_error_set(err, BW_E_INVAL, "rule",
                        "rule, config and name buffer must not be NULL");
  /* Split on spaces: 3 or 4 tokens. */
  while (rule[i] != '\0') {
    size_t b;
    if (rule[i] == ' ') {
      i++;
      continue;
    }
    if (ntok == 5)
      return bw_error_set(err, BW_E_INVAL, "rule",
                          "rule has too many tokens: expected 'EVENT "
                          "[name=NAME] N/M WINDOW'");
    b = i;
    while (rule[i] != '\0' && rule[i] != ' ')
      i++;
    tok[ntok] = rule + b;
    len[ntok] = i - b;
    ntok++;
  }
  if (ntok < 3 || ntok > 4)
    return bw_error_set(err, BW_E_INVAL, "rule",
                        "rule must be 'EVENT [name=NAME] N/M WINDOW', e.g. "
                        "'breaker_opened name=payments 3/3 60s' (got %zu "
                        "token%s)",
                        ntok, ntok == 1 ? "" : "s");
  c = *cfg;
  /* EVENT */
  if (len[0] == 14 && memcmp(tok[0], "breaker_opened", 14) == 0) {
    c.watch = BW_EV_CIRCUIT_OPENED;
  } else {
    int k;
    for (k = 0; k < BW_EV__COUNT; k++) {
      const char *wn = bw_event_type_name((bw_event_type_t)k);
      if (strlen(wn) == len[0] && memcmp(wn, tok[0], len[0]) == 0) break;
    }
    if (k == BW_EV__COUNT)
      return bw__rule_error(err,
                            "rule: unknown event '%.*s' (an event name of "
                            "docs/events.md, or breaker_opened)",
                            tok[0], len[0]);
    c.watch = (bw_event_type_t)k;
  }
  /* [name=NAME] */
  name_buf[0] = '\0';
  c.watch_name = NULL;
  if (ntok == 4) {
    if (len[1] < 5 || memcmp(tok[1], "name=", 5) != 0)
      return bw__rule_error(err, "rule: expected name=NAME, got '%.*s'", tok[1],
                            len[1]);
    if (len[1] == 5 || len[1] - 5 > BW_NAME_MAX)
      return bw__rule_error(err,
                            "rule: the name in '%.*s' must be 1 to 200 bytes",
                            tok[1], len[1]);
    memcpy(name_buf, tok[1] + 5, len[1] - 5);
    name_buf[len[1] - 5] = '\0';
    c.watch_name = name_buf;
    t = 2;
  }
  /* N/M */
  {
    const char *slash = memchr(tok[t], '/', len[t]);
    size_t nl = slash != NULL ? (size_t)(slash - tok[t]) : 0;
    if (slash == NULL || !bw__rule_number(tok[t], nl, &n) ||
        !bw__rule_number(slash + 1, len[t] - nl - 1, &m))
      return bw__rule_error(err,
                            "rule: expected N/M (windows with the event / "
                            "windows looked at, e.g. 3/3), got '%.*s'",
                            tok[t], len[t]);
    if (m < 1 || m > BW_ALERT_MAX_WINDOWS || n < 1 || n > m)
      return bw__rule_error(err, "rule: '%.*s' needs 1 <= N <= M <= 64", tok[t],
                            len[t]);
  }
  /* WINDOW */
  {
    const char *s = tok[t + 1];
    size_t l = len[t + 1], dl = 0;
    int64_t unit = 0;
    while (dl < l && s[dl] >= '0' && s[dl] <= '9')
      dl++;
    if (l - dl == 2 && memcmp(s + dl, "ms", 2) == 0)
      unit = 1;
    else if (l - dl == 1 && s[dl] == 's')
      unit = 1000;
    else if (l - dl == 1 && s[dl] == 'm')
      unit = 60000;
    else if (l - dl == 1 && s[dl] == 'h')
      unit = 3600000;
    if (unit == 0 || !bw__rule_number(s, dl, &w) || w < 1 ||
        w > BW__ALERT_MAX_WINDOW_MS / unit)
      return bw__rule_error(err,
                            "rule: the window '%.*s' must be a whole number "
                            "with a unit ms, s, m or h, from 1ms to 24h",
                            s, l);
    w *= unit;
  }
  c.n = (uint32_t)n;
  c.m = (uint32_t)m;
  c.window_ms = w;
  if (bw_alert_config_validate(&c, err) != BW_OK) return BW_E_INVAL;
  *cfg = c;
  return BW_OK;
}

/* ---- the object ---------------------------------------------------------- */

/* floor(t / w) for any sign of t. */
static int64_t bw__window_of(int64_t t, int64_t w) {
  int64_t q = t / w;
  return (t % w != 0 && t < 0) ? q - 1 : q;
}

/* The start of window idx, saturating at the ends of the int64 range (a
 * clock may start anywhere). */
static int64_t bw__window_start(int64_t idx, int64_t w) {
  if (idx > INT64_MAX / w) return INT64_MAX;
  if (idx < INT64_MIN / w) return INT64_MIN;
  return idx * w;
}

bw_alert_t *bw_alert_new(const bw_alert_config_t *cfg, bw_error_t *err) {
  bw_alert_t *a;
  const char *wn;
  if (bw_alert_config_validate(cfg, err) != BW_OK) return NULL;
  wn = cfg->watch_name != NULL ? cfg->watch_name : "";
  a = bw_calloc(1, sizeof(*a));
  if (a == NULL || (a->name = bw_strdup(cfg->name)) == NULL ||
      (a->watch_name = bw_strdup(wn)) == NULL) {
    if (a != NULL) {
      bw_free(a->name);
      bw_free(a);
    }
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  if (pthread_mutex_init(&a->lock, NULL) != 0) {
    bw_free(a->watch_name);
    bw_free(a->name);
    bw_free(a);
    bw_error_set(err, BW_E_NOMEM, "", "cannot create a mutex");
    return NULL;
  }
  a->watch = cfg->watch;
  a->n = cfg->n;
  a->m = cfg->m;
  a->window_ns = cfg->window_ms * BW_NS_PER_MS;
  a->clock = cfg->clock != NULL ? cfg->clock : bw_clock_monotonic();
  a->wall = cfg->wall_clock != NULL ? cfg->wall_clock : bw_clock_realtime();
  a->sink = cfg->sink;
  snprintf(a->reason, sizeof(a->reason),
           "%s%s%s in %u of the last %u windows of %" PRId64 " ms",
           bw_event_type_name(a->watch), wn[0] != '\0' ? " of " : "", wn, a->n,
           a->m, cfg->window_ms);
  a->open_index = bw__window_of(bw_clock_now(a->clock), a->window_ns);
  atomic_init(&a->firing, false);
  return a;
}

/* A clock that always reads the same instant: stamps an event with the end
 * of the window that decided it. */
static int64_t bw__fixed_now(const bw_clock_t *c) {
  return *(const int64_t *)c->data;
}

static uint32_t bw__popcount(uint64_t x) {
  uint32_t n = 0;
  for (; x != 0; x &= x - 1)
    n++;
  return n;
}

static uint64_t bw__mask(uint32_t m) {
  return m >= 64 ? UINT64_MAX : (UINT64_C(1) << m) - 1;
}

/* Under lock: the transition decided when the window ending at end_ns
 * closed, read at now_ns (so its wall time is now's less the gap). */
static void bw__alert_emit(bw_alert_t *a, bool firing, uint32_t breaching,
                           int64_t end_ns, int64_t now_ns) {
  int64_t wall_ns;
  bw_clock_t fixed;
  bw_field_t f[6];
  if (a->sink == NULL) return;
  {
    /* now_ns >= end_ns; the gap and the room below the wall reading are
     * exact in unsigned arithmetic, so a huge gap saturates, never wraps. */
    int64_t wall = bw_clock_now(a->wall);
    uint64_t gap = (uint64_t)now_ns - (uint64_t)end_ns;
    uint64_t room = (uint64_t)wall - (uint64_t)INT64_MIN;
    wall_ns = gap > room ? INT64_MIN : (int64_t)((uint64_t)wall - gap);
  }
  fixed.now_ns = bw__fixed_now;
  fixed.data = &wall_ns;
  f[0] = bw_field_str("watch", bw_event_type_name(a->watch));
  f[1] = bw_field_str("watch_name", a->watch_name);
  f[2] = bw_field_uint("windows", breaching);
  f[3] = bw_field_uint("n", a->n);
  f[4] = bw_field_uint("m", a->m);
  f[5] = bw_field_int("window_ms", a->window_ns / BW_NS_PER_MS);
  bw_event_emit(a->sink, &fixed, end_ns,
                firing ? BW_EV_ALERT_FIRING : BW_EV_ALERT_RESOLVED, a->name,
                a->reason, f, 6, NULL);
}

/* Under lock: closes every window that ended at or before now_ns. After m
 * quiet closures the register is all zero and nothing more can change (a
 * zero register is never firing), so a long gap costs at most m + 1
 * steps. */
static void bw__alert_advance(bw_alert_t *a, int64_t now_ns) {
  int64_t target = bw__window_of(now_ns, a->window_ns);
  while (a->open_index < target) {
    bool breach = a->open_count > 0;
    bool was = atomic_load(&a->firing), is;
    uint32_t count;
    int64_t end_ns;
    if (!breach && a->history == 0) {
      /* Nothing left to judge: jump to the target window. */
      a->closed += (uint64_t)(target - a->open_index);
      a->open_index = target;
      break;
    }
    a->history = ((a->history << 1) | (breach ? 1u : 0u)) & bw__mask(a->m);
    a->open_count = 0;
    a->closed++;
    end_ns = bw__window_start(a->open_index + 1, a->window_ns);
    a->open_index++;
    count = bw__popcount(a->history);
    is = count >= a->n;
    if (is != was) {
      atomic_store(&a->firing, is);
      if (is)
        a->fired++;
      else
        a->resolved++;
      bw__alert_emit(a, is, count, end_ns, now_ns);
    }
  }
}

int bw_alert_advance(bw_alert_t *a, int64_t now_ns) {
  int firing;
  if (a == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&a->lock);
  bw__alert_advance(a, now_ns);
  firing = atomic_load(&a->firing) ? 1 : 0;
  pthread_mutex_unlock(&a->lock);
  return firing;
}

int bw_alert_observe(bw_alert_t *a, bw_event_type_t type, const char *name,
                     int64_t now_ns) {
  int firing;
  bool watched;
  if (a == NULL) return BW_E_INVAL;
  watched =
      type == a->watch && (a->watch_name[0] == '\0' ||
                           (name != NULL && strcmp(name, a->watch_name) == 0));
  pthread_mutex_lock(&a->lock);
  a->observed++;
  bw__alert_advance(a, now_ns);
  if (watched) {
    if (bw__window_of(now_ns, a->window_ns) < a->open_index) {
      a->late++;
    } else {
      a->matched++;
      if (a->open_count < UINT32_MAX) a->open_count++;
    }
  }
  firing = atomic_load(&a->firing) ? 1 : 0;
  pthread_mutex_unlock(&a->lock);
  return firing;
}

static void bw__alert_sink_cb(const bw_event_t *ev, void *userdata) {
  bw_alert_t *a = userdata;
  bw_alert_observe(a, ev->type, ev->name, bw_clock_now(a->clock));
}

bw_sink_t *bw_alert_sink_new(bw_alert_t *a, bw_error_t *err) {
  if (a == NULL) {
    bw_error_set(err, BW_E_INVAL, "alert", "alert must not be NULL");
    return NULL;
  }
  return bw_sink_callback_new(bw__alert_sink_cb, a, err);
}

bool bw_alert_firing(const bw_alert_t *a) {
  return a != NULL && atomic_load(&((bw_alert_t *)a)->firing);
}

const char *bw_alert_name(const bw_alert_t *a) {
  return a != NULL ? a->name : "";
}

void bw_alert_stats(const bw_alert_t *ca, bw_alert_stats_t *out) {
  bw_alert_t *a = (bw_alert_t *)ca; /* the lock is not part of the value */
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (a == NULL) return;
  pthread_mutex_lock(&a->lock);
  out->observed = a->observed;
  out->matched = a->matched;
  out->late = a->late;
  out->windows_closed = a->closed;
  out->fired = a->fired;
  out->resolved = a->resolved;
  out->breaching = bw__popcount(a->history);
  out->open_count = a->open_count;
  out->firing = atomic_load(&a->firing);
  out->open_window_start_ns = bw__window_start(a->open_index, a->window_ns);
  pthread_mutex_unlock(&a->lock);
}

/* A Prometheus label value: backslash, quote and newline escaped. */
static int bw__prom_label(FILE *fp, const char *s) {
  for (; *s != '\0'; s++) {
    int rc;
    if (*s == '\\')
      rc = fputs("\\\\", fp);
    else if (*s == '"')
      rc = fputs("\\\"", fp);
    else if (*s == '\n')
      rc = fputs("\\n", fp);
    else
      rc = fputc(*s, fp);
    if (rc == EOF) return BW_E_IO;
  }
  return BW_OK;
}

int bw_alert_write_prometheus(const bw_alert_t *a, FILE *fp) {
  bw_alert_stats_t st;
  static const struct {
    const char *name, *type, *help;
  } m[] = {
      {"breakwater_alert_firing", "gauge",
       "1 while the alert rule holds (N of the last M windows breached)."},
      {"breakwater_alert_breaching_windows", "gauge",
       "Breaching windows among the last M closed."},
      {"breakwater_alert_fired_total", "counter", "Transitions to firing."},
      {"breakwater_alert_resolved_total", "counter",
       "Transitions back to resolved."},
      {"breakwater_alert_events_total", "counter",
       "Watched events counted in a window."},
  };
  uint64_t v[5];
  if (a == NULL || fp == NULL) return BW_E_INVAL;
  bw_alert_stats(a, &st);
  v[0] = st.firing ? 1 : 0;
  v[1] = st.breaching;
  v[2] = st.fired;
  v[3] = st.resolved;
  v[4] = st.matched;
  for (size_t i = 0; i < 5; i++) {
    if (fprintf(fp, "# HELP %s %s\n# TYPE %s %s\n%s{alert=\"", m[i].name,
                m[i].help, m[i].name, m[i].type, m[i].name) < 0 ||
        bw__prom_label(fp, a->name) != BW_OK ||
        fprintf(fp, "\"} %" PRIu64 "\n", v[i]) < 0)
      return BW_E_IO;
  }
  return BW_OK;
}

void bw_alert_free(bw_alert_t *a) {
  if (a == NULL) return;
  pthread_mutex_destroy(&a->lock);
  bw_free(a->watch_name);
  bw_free(a->name);
  bw_free(a);
}

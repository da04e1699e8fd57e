/* Graceful degradation: the level machine of the degradation article, made
 * thread-safe.
 *
 * Design:
 * - One mutex guards all state. Every operation is a handful of compares and
 *   increments, so a lock held for nanoseconds is cheaper to reason about
 *   than a lock-free scheme, and it makes each change happen exactly once,
 *   with exactly one callback, in order. The current level is mirrored in an
 *   atomic so bw_degrade_level needs no lock.
 * - The change counter is the generation: a pick carries it, and a report
 *   from an older generation decides nothing (a request picked before the
 *   level dropped says nothing about the new level).
 * - Probes are decided by a counter, not a random draw: the article's
 *   shouldProbe(sample) takes its sample from the caller, and a counter gives
 *   the same long-run ratio with an exact, testable count and no PRNG state
 *   to share between threads. */
#include <pthread.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "breakwater/degrade.h"
#include "internal.h"

/* The largest min_dwell_ms whose nanoseconds fit in an int64_t. */
#define BW__MAX_DWELL_MS (INT64_MAX / BW_NS_PER_MS)

static const char *const bw__default_names[4] = {"full", "reduced", "router",
                                                 "message"};

struct bw_degrade_s {
  pthread_mutex_t lock;
  _Atomic uint32_t level_atomic; /* mirror of `level` for lock-free reads */

  /* Configuration (immutable after new). */
  char *name;
  char *level_names[BW_DEGRADE_MAX_LEVELS];
  uint32_t count;
  uint32_t probe_every;
  uint64_t probe_ratio_q; /* probe_ratio in 32.32 fixed point; 0 = off */
  uint32_t probe_to_recover;
  uint32_t failures_to_degrade;
  int64_t dwell_ns;
  const bw_clock_t *clock;
  bw_degrade_change_cb on_change;
  void *on_change_ud;
  bw_sink_t *sink;
  const bw_clock_t *wall;

  /* State (under lock). */
  uint32_t level;
  int64_t entered_ns;
  uint32_t failures;       /* consecutive failures (the article: `failures`) */
  uint32_t probe_streak;   /* the article: `probeSuccesses` */
  uint32_t probe_tick;     /* eligible picks since the last probe */
  uint64_t probe_credit;   /* probe_ratio: accumulated, 32.32 fixed point */
  uint64_t generation;     /* = changes */
  bw_state_t breaker_seen; /* last state given to observe_breaker */
  bw_regime_t regime_seen; /* last regime given to observe_gauge */

  /* Counters (under lock). */
  uint64_t downs, ups, probes;
  uint64_t successes, failures_total, ignored, stale;
  uint64_t probe_ok, probe_fail;
  uint64_t picks_at[BW_DEGRADE_MAX_LEVELS];
  uint64_t entries_at[BW_DEGRADE_MAX_LEVELS];
  int64_t time_at_ns[BW_DEGRADE_MAX_LEVELS];
};

const char *bw_degrade_reason_name(bw_degrade_reason_t reason) {
  switch (reason) {
  case BW_DEGRADE_FAILURES:
    return "failures";
  case BW_DEGRADE_PROBES:
    return "probes";
  case BW_DEGRADE_BREAKER:
    return "breaker";
  case BW_DEGRADE_FORCED:
    return "forced";
  case BW_DEGRADE_GAUGE:
    return "gauge";
  default:
    return "unknown";
  }
}

void bw_degrade_config_init(bw_degrade_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "degrade";
  cfg->level_count = 4;
  cfg->level_names = NULL;
  /* The article's defaults: a minute at a level, 5 % probes, 20 probe
   * successes to climb, 5 failures to drop. */
  cfg->min_dwell_ms = 60000;
  cfg->probe_every = 20;
  cfg->probe_successes_to_recover = 20;
  cfg->failures_to_degrade = 5;
  cfg->clock = NULL;
  cfg->on_change = NULL;
  cfg->on_change_userdata = NULL;
  cfg->sink = NULL;
  cfg->wall_clock = NULL;
}

static int bw__check_level_name(const char *s, const char *field, uint32_t i,
                                bw_error_t *err) {
  if (s == NULL || s[0] == '\0')
    return bw_error_set(err, BW_E_INVAL, field,
                        "%s[%u] must not be empty or NULL", field, i);
  if (strlen(s) > BW_NAME_MAX)
    return bw_error_set(err, BW_E_INVAL, field,
                        "%s[%u] must be at most %d bytes (got %zu)", field, i,
                        BW_NAME_MAX, strlen(s));
  return BW_OK;
}

int bw_degrade_config_validate(const bw_degrade_config_t *c, bw_error_t *err) {
  if (c == NULL)
    return bw_error_set(err, BW_E_INVAL, "", "config must not be NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (c->level_count < 2 || c->level_count > BW_DEGRADE_MAX_LEVELS)
    return bw_error_set(err, BW_E_INVAL, "level_count",
                        "level_count must be in 2..%u (got %u)",
                        BW_DEGRADE_MAX_LEVELS, c->level_count);
  if (c->level_names != NULL) {
    for (uint32_t i = 0; i < c->level_count; i++) {
      int rc = bw__check_level_name(c->level_names[i], "level_names", i, err);
      if (rc != BW_OK) return rc;
      for (uint32_t j = 0; j < i; j++)
        if (strcmp(c->level_names[i], c->level_names[j]) == 0)
          return bw_error_set(err, BW_E_INVAL, "level_names",
                              "level_names must be distinct (\"%s\" is both "
                              "[%u] and [%u])",
                              c->level_names[i], j, i);
    }
  }
  if (c->min_dwell_ms < 0 || c->min_dwell_ms > BW__MAX_DWELL_MS)
    return bw_error_set(err, BW_E_INVAL, "min_dwell_ms",
                        "min_dwell_ms must be in 0..%lld (got %lld)",
                        (long long)BW__MAX_DWELL_MS,
                        (long long)c->min_dwell_ms);
  if (c->probe_every < 1)
    return bw_error_set(err, BW_E_INVAL, "probe_every",
                        "probe_every must be >= 1 (got %u)", c->probe_every);
  if (!(c->probe_ratio >= 0.0 && c->probe_ratio <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "probe_ratio",
                        "probe_ratio must be in [0, 1] (0 = use probe_every; "
                        "got %g)",
                        c->probe_ratio);
  if (c->probe_successes_to_recover < 1)
    return bw_error_set(err, BW_E_INVAL, "probe_successes_to_recover",
                        "probe_successes_to_recover must be >= 1 (got %u)",
                        c->probe_successes_to_recover);
  if (c->failures_to_degrade < 1)
    return bw_error_set(err, BW_E_INVAL, "failures_to_degrade",
                        "failures_to_degrade must be >= 1 (got %u)",
                        c->failures_to_degrade);
  if (c->on_change == NULL && c->on_change_userdata != NULL)
    return bw_error_set(err, BW_E_INVAL, "on_change_userdata",
                        "on_change_userdata is set but on_change is NULL");
  return BW_OK;
}

static void bw__destroy(bw_degrade_t *d) {
  bw_free(d->name);
  for (uint32_t i = 0; i < BW_DEGRADE_MAX_LEVELS; i++)
    bw_free(d->level_names[i]);
  bw_free(d);
}

bw_degrade_t *bw_degrade_new(const bw_degrade_config_t *cfg, bw_error_t *err) {
  bw_degrade_t *d;
  if (bw_degrade_config_validate(cfg, err) != BW_OK) return NULL;
  d = bw_calloc(1, sizeof(*d));
  if (d == NULL) goto nomem;
  d->name = bw_strdup(cfg->name);
  if (d->name == NULL) goto nomem;
  for (uint32_t i = 0; i < cfg->level_count; i++) {
    char generated[16];
    const char *n;
    if (cfg->level_names != NULL) {
      n = cfg->level_names[i];
    } else if (cfg->level_count == 4) {
      n = bw__default_names[i];
    } else {
      snprintf(generated, sizeof(generated), "level%u", i);
      n = generated;
    }
    d->level_names[i] = bw_strdup(n);
    if (d->level_names[i] == NULL) goto nomem;
  }
  d->count = cfg->level_count;
  d->probe_every = cfg->probe_every;
  d->probe_ratio_q = (uint64_t)llround(cfg->probe_ratio * 4294967296.0);
  d->probe_to_recover = cfg->probe_successes_to_recover;
  d->failures_to_degrade = cfg->failures_to_degrade;
  d->dwell_ns = cfg->min_dwell_ms * BW_NS_PER_MS;
  d->clock = cfg->clock ? cfg->clock : bw_clock_monotonic();
  d->on_change = cfg->on_change;
  d->on_change_ud = cfg->on_change_userdata;
  d->sink = cfg->sink;
  d->wall = cfg->wall_clock ? cfg->wall_clock : bw_clock_realtime();
  d->breaker_seen = BW_CLOSED;
  d->regime_seen = BW_REGIME_NORMAL;
  d->entered_ns = bw__clock_now(d->clock);
  atomic_init(&d->level_atomic, 0);
  /* pthread_mutex_init may fail only for lack of resources. */
  if (pthread_mutex_init(&d->lock, NULL) != 0) goto nomem;
  bw_error_clear(err);
  return d;
nomem:
  bw_error_set(err, BW_E_NOMEM, "",
               "out of memory creating degradation machine '%s'", cfg->name);
  if (d != NULL) bw__destroy(d);
  return NULL;
}

void bw_degrade_free(bw_degrade_t *d) {
  if (d == NULL) return;
  pthread_mutex_destroy(&d->lock);
  bw__destroy(d);
}

/* ---- the machine (all under d->lock)
 * ------------------------------------------ */

/* Moves to `to`, restarting every per-level streak, and reports the change.
 * The callback runs under the lock: that is what makes each change reported
 * exactly once and in order. */
static void bw__change_locked(bw_degrade_t *d, uint32_t to,
                              bw_degrade_reason_t reason, int64_t now) {
  bw_degrade_change_t c;
  uint32_t from = d->level;
  if (now > d->entered_ns) d->time_at_ns[from] += now - d->entered_ns;
  d->level = to;
  d->entered_ns = now;
  d->failures = 0;
  d->probe_streak = 0;
  d->probe_tick = 0;
  d->probe_credit = 0;
  d->generation++;
  d->entries_at[to]++;
  if (to > from)
    d->downs++;
  else
    d->ups++;
  atomic_store_explicit(&d->level_atomic, to, memory_order_release);
  if (d->sink != NULL) {
    bw_field_t f[4];
    char text[BW_NAME_MAX * 2 + 48];
    f[0] = bw_field_str("from", d->level_names[from]);
    f[1] = bw_field_str("to", d->level_names[to]);
    f[2] = bw_field_str("cause", bw_degrade_reason_name(reason));
    f[3] = bw_field_uint("changes", d->generation);
    snprintf(text, sizeof(text), "%s -> %s (%s)", d->level_names[from],
             d->level_names[to], bw_degrade_reason_name(reason));
    bw_event_emit(d->sink, d->wall, now, BW_EV_DEGRADE_LEVEL_CHANGED, d->name,
                  text, f, 4, NULL);
  }
  if (d->on_change == NULL) return;
  c.from = from;
  c.to = to;
  c.from_name = d->level_names[from];
  c.to_name = d->level_names[to];
  c.reason = reason;
  c.changes = d->generation;
  c.at_ns = now;
  d->on_change(&c, d->on_change_ud);
}

/* The article's dwell test: a level may be left upward only once
 * now - enteredAt >= minDwellMs (so exactly at the dwell, not 1 ns later). */
static bool bw__dwelt(const bw_degrade_t *d, int64_t now) {
  return now - d->entered_ns >= d->dwell_ns;
}

/* One eligible pick: is it a probe? probe_ratio (when set) accumulates a
 * credit per pick and spends one whole unit per probe, so of K eligible picks
 * exactly floor(K * ratio) are probes (ratio in 32.32 fixed point), spread
 * evenly; otherwise every probe_every-th pick is one. */
static bool bw__probe_due(bw_degrade_t *d) {
  if (d->probe_ratio_q > 0) {
    d->probe_credit += d->probe_ratio_q;
    if (d->probe_credit < (UINT64_C(1) << 32)) return false;
    d->probe_credit -= UINT64_C(1) << 32;
    return true;
  }
  if (++d->probe_tick < d->probe_every) return false;
  d->probe_tick = 0;
  return true;
}

int bw_degrade_pick(bw_degrade_t *d, bw_degrade_pick_t *out) {
  int64_t now;
  if (d == NULL || out == NULL) return BW_E_INVAL;
  pthread_mutex_lock(&d->lock);
  /* Read under the lock: a reading taken before it could be older than the
   * entry time another thread just set, and change times must not go back. */
  now = bw__clock_now(d->clock);
  out->level = d->level;
  out->probe = false;
  out->generation = d->generation;
  /* the article's shouldProbe: never at the top, never before the dwell. */
  if (d->level > 0 && bw__dwelt(d, now) && bw__probe_due(d)) {
    d->probes++;
    out->level = d->level - 1;
    out->probe = true;
  }
  d->picks_at[out->level]++;
  pthread_mutex_unlock(&d->lock);
  return BW_OK;
}

int bw_degrade_report(bw_degrade_t *d, const bw_degrade_pick_t *p,
                      bw_outcome_t outcome) {
  int rc = BW_OK;
  int64_t now;
  if (d == NULL || p == NULL) return BW_E_INVAL;
  if ((unsigned)outcome > (unsigned)BW_IGNORED) return BW_E_INVAL;
  pthread_mutex_lock(&d->lock);
  now = bw__clock_now(d->clock); /* under the lock, as in pick */
  if (p->generation > d->generation || p->level >= d->count ||
      (p->probe && p->level + 1 >= d->count)) {
    rc = BW_E_INVAL; /* not a pick of this machine */
    goto out;
  }
  if (p->generation == d->generation &&
      p->level != (p->probe ? d->level - 1 : d->level)) {
    rc = BW_E_INVAL; /* same generation, other level: forged */
    goto out;
  }
  /* Totals first: every accepted report counts exactly once. */
  if (outcome == BW_SUCCESS)
    d->successes++;
  else if (outcome == BW_FAILURE)
    d->failures_total++;
  else
    d->ignored++;
  if (p->probe && outcome == BW_SUCCESS) d->probe_ok++;
  if (p->probe && outcome == BW_FAILURE) d->probe_fail++;
  if (p->generation != d->generation) {
    d->stale++;
    rc = BW_E_STALE;
    goto out;
  }
  if (outcome == BW_FAILURE) {
    /* the article's recordFailure: a probe failure counts like any other — it
     * grows the failure streak of the current level and breaks the probe
     * streak. */
    d->failures++;
    d->probe_streak = 0;
    if (d->failures >= d->failures_to_degrade && d->level + 1 < d->count)
      bw__change_locked(d, d->level + 1, BW_DEGRADE_FAILURES, now);
  } else if (outcome == BW_SUCCESS) {
    /* the article's recordSuccess: any success ends the failure streak, but
     * only a probe's counts toward climbing — else the degraded level's own
     * successes would promote it to a level that is still broken. */
    d->failures = 0;
    if (p->probe && d->level > 0 && bw__dwelt(d, now)) {
      d->probe_streak++;
      /* One level at a time, never from the bottom to the top. */
      if (d->probe_streak >= d->probe_to_recover)
        bw__change_locked(d, d->level - 1, BW_DEGRADE_PROBES, now);
    }
  }
out:
  pthread_mutex_unlock(&d->lock);
  return rc;
}

int bw_degrade_observe_breaker(bw_degrade_t *d, bw_state_t state) {
  bool was_open, is_open;
  if (d == NULL || (unsigned)state >= (unsigned)BW_STATE__COUNT)
    return BW_E_INVAL;
  is_open = state == BW_OPEN || state == BW_ISOLATED;
  pthread_mutex_lock(&d->lock);
  was_open = d->breaker_seen == BW_OPEN || d->breaker_seen == BW_ISOLATED;
  /* An edge, not a level: a caller that polls the breaker and sees OPEN a
   * thousand times must drop one level, not a thousand. OPEN -> ISOLATED is
   * not a new edge: the dependency was already known to be down. */
  if (is_open && !was_open && d->level + 1 < d->count)
    bw__change_locked(d, d->level + 1, BW_DEGRADE_BREAKER,
                      bw__clock_now(d->clock));
  d->breaker_seen = state;
  pthread_mutex_unlock(&d->lock);
  return BW_OK;
}

int bw_degrade_observe_gauge(bw_degrade_t *d, bw_regime_t regime) {
  if (d == NULL || (unsigned)regime >= (unsigned)BW_REGIME__COUNT)
    return BW_E_INVAL;
  pthread_mutex_lock(&d->lock);
  /* An edge, as for the breaker: a gauge read on every request that stays
   * critical for a minute must drop one level, not thousands. */
  if (regime == BW_REGIME_CRITICAL && d->regime_seen != BW_REGIME_CRITICAL &&
      d->level + 1 < d->count)
    bw__change_locked(d, d->level + 1, BW_DEGRADE_GAUGE,
                      bw__clock_now(d->clock));
  d->regime_seen = regime;
  pthread_mutex_unlock(&d->lock);
  return BW_OK;
}

int bw_degrade_force_down_to(bw_degrade_t *d, uint32_t level) {
  if (d == NULL) return BW_E_INVAL;
  if (level >= d->count) return BW_E_RANGE;
  pthread_mutex_lock(&d->lock);
  if (d->level < level)
    bw__change_locked(d, level, BW_DEGRADE_FORCED, bw__clock_now(d->clock));
  pthread_mutex_unlock(&d->lock);
  return BW_OK;
}

uint32_t bw_degrade_level(const bw_degrade_t *d) {
  if (d == NULL) return 0;
  return atomic_load_explicit(&d->level_atomic, memory_order_acquire);
}

const char *bw_degrade_level_name(const bw_degrade_t *d, uint32_t level) {
  return d != NULL && level < d->count ? d->level_names[level] : "";
}

const char *bw_degrade_name(const bw_degrade_t *d) {
  return d == NULL ? "" : d->name;
}

void bw_degrade_stats(const bw_degrade_t *d, bw_degrade_stats_t *out) {
  /* Reading takes the lock too (for one consistent snapshot); the object is
   * not const underneath, only the caller's view of it. */
  pthread_mutex_t *lock;
  int64_t now;
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (d == NULL) return;
  lock = (pthread_mutex_t *)&d->lock;
  pthread_mutex_lock(lock);
  now = bw__clock_now(d->clock);
  out->level = d->level;
  out->level_name = d->level_names[d->level];
  out->level_count = d->count;
  out->entered_ns = d->entered_ns;
  out->time_at_level_ms =
      now > d->entered_ns ? (now - d->entered_ns) / BW_NS_PER_MS : 0;
  out->probing = d->level > 0 && bw__dwelt(d, now);
  out->consecutive_failures = d->failures;
  out->probe_successes = d->probe_streak;
  out->changes = d->generation;
  out->downs = d->downs;
  out->ups = d->ups;
  out->probes = d->probes;
  out->successes = d->successes;
  out->failures = d->failures_total;
  out->ignored = d->ignored;
  out->stale = d->stale;
  out->probe_successes_total = d->probe_ok;
  out->probe_failures_total = d->probe_fail;
  for (uint32_t i = 0; i < d->count; i++) {
    int64_t t = d->time_at_ns[i];
    if (i == d->level && now > d->entered_ns) t += now - d->entered_ns;
    out->picks_at[i] = d->picks_at[i];
    out->picks += d->picks_at[i];
    out->entries_at[i] = d->entries_at[i];
    out->time_at_ms[i] = t / BW_NS_PER_MS;
  }
  pthread_mutex_unlock(lock);
}

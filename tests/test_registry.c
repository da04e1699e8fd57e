/* Registry tests: per-name configurations, holds, ordered snapshots,
 * Prometheus text, capped eviction, validation, out-of-memory and a small
 * multi-threaded run. Every time-dependent test runs on a manual clock. */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "breakwater/breakwater.h"
#include "oom.h"

#define MS BW_NS_PER_MS

/* ---- helpers ------------------------------------------------------------ */

#define assert_contains(hay, needle)                                           \
  do {                                                                         \
    const char *h_ = (hay), *n_ = (needle);                                    \
    if (h_ == NULL || strstr(h_, n_) == NULL) {                                \
      print_error("expected to find:\n%s\nin:\n%s\n", n_, h_ ? h_ : "(null)"); \
      fail();                                                                  \
    }                                                                          \
  } while (0)

#define assert_not_contains(hay, needle)                \
  do {                                                  \
    const char *h_ = (hay), *n_ = (needle);             \
    if (strstr(h_, n_) != NULL) {                       \
      print_error("did not expect to find:\n%s\n", n_); \
      fail();                                           \
    }                                                   \
  } while (0)

/* Number of non-overlapping occurrences of needle in hay. */
static size_t count_of(const char *hay, const char *needle) {
  size_t n = 0, len = strlen(needle);
  const char *p = hay;
  while ((p = strstr(p, needle)) != NULL) {
    n++;
    p += len;
  }
  return n;
}

typedef struct ev_rec_s {
  bw_event_type_t type;
  char name[256];
  char reason[256];
  int64_t idle_ms;
  char trigger[16];
} ev_rec_t;

typedef struct collector_s {
  pthread_mutex_t mu;
  size_t n;
  ev_rec_t ev[64];
} collector_t;

static void collect_cb(const bw_event_t *e, void *ud) {
  collector_t *c = ud;
  size_t i;
  pthread_mutex_lock(&c->mu);
  if (c->n < sizeof(c->ev) / sizeof(c->ev[0])) {
    ev_rec_t *r = &c->ev[c->n++];
    memset(r, 0, sizeof(*r));
    r->type = e->type;
    snprintf(r->name, sizeof(r->name), "%s", e->name);
    snprintf(r->reason, sizeof(r->reason), "%s", e->reason);
    r->idle_ms = -1;
    for (i = 0; i < e->field_count; i++) {
      const bw_field_t *f = &e->fields[i];
      if (strcmp(f->key, "idle_ms") == 0 && f->type == BW_FIELD_INT)
        r->idle_ms = f->v.i;
      if (strcmp(f->key, "trigger") == 0 && f->type == BW_FIELD_STR)
        snprintf(r->trigger, sizeof(r->trigger), "%s", f->v.s);
    }
  }
  pthread_mutex_unlock(&c->mu);
}

/* Events of one type, in order; returns how many and fills out[]. */
static size_t events_of(collector_t *c, bw_event_type_t type,
                        const ev_rec_t **out, size_t max) {
  size_t i, n = 0;
  for (i = 0; i < c->n; i++)
    if (c->ev[i].type == type && n < max) out[n++] = &c->ev[i];
  return n;
}

/* A test world: a manual clock, a collecting sink and a registry. */
typedef struct world_s {
  bw_clock_t *clock;
  collector_t col;
  bw_sink_t *sink;
  bw_registry_t *reg;
} world_t;

static void world_open(world_t *w, size_t max_objects, int64_t idle_evict_ms,
                       const bw_breaker_config_t *def) {
  bw_registry_config_t rc;
  bw_error_t err;
  memset(w, 0, sizeof(*w));
  pthread_mutex_init(&w->col.mu, NULL);
  w->clock = bw_clock_manual_new(1000 * BW_NS_PER_S);
  assert_non_null(w->clock);
  w->sink = bw_sink_callback_new(collect_cb, &w->col, &err);
  assert_non_null(w->sink);
  bw_registry_config_init(&rc);
  rc.max_objects = max_objects;
  rc.idle_evict_ms = idle_evict_ms;
  rc.clock = w->clock;
  rc.sink = w->sink;
  rc.default_breaker = def;
  w->reg = bw_registry_new(&rc, &err);
  if (w->reg == NULL) print_error("bw_registry_new: %s\n", err.message);
  assert_non_null(w->reg);
}

static void world_close(world_t *w) {
  bw_registry_free(w->reg);
  bw_sink_free(w->sink);
  bw_clock_free(w->clock);
  pthread_mutex_destroy(&w->col.mu);
}

static void advance_ms(world_t *w, int64_t ms) {
  bw_clock_manual_advance(w->clock, ms * MS);
}

static void outcome(bw_breaker_t *b, bw_outcome_t o) {
  bw_permit_t p;
  assert_int_equal(bw_breaker_acquire(b, &p), BW_OK);
  bw_breaker_release(b, &p, o);
}

static void fail_n(bw_breaker_t *b, unsigned n) {
  unsigned i;
  for (i = 0; i < n; i++)
    outcome(b, BW_FAILURE);
}

/* Looks a name up, expecting success. */
static bw_breaker_t *get(world_t *w, const char *name) {
  bw_error_t err;
  bw_breaker_t *b = bw_registry_breaker(w->reg, name, &err);
  if (b == NULL) print_error("lookup of %s: %s\n", name, err.message);
  assert_non_null(b);
  assert_int_equal(err.code, BW_OK);
  return b;
}

/* The asyncio toolkit's configurations: failure_threshold / success_threshold /
 * break. */
static void set_seed_configs(bw_registry_t *reg) {
  static const struct {
    const char *name;
    uint32_t fail, succ;
    int64_t brk;
  } seeds[] = {{"hotel_api", 5, 2, 30000},
               {"payment_api", 3, 3, 60000},
               {"search_agent", 10, 1, 15000}};
  size_t i;
  for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
    bw_breaker_config_t c;
    bw_error_t err;
    bw_breaker_config_init(&c);
    c.failure_threshold = seeds[i].fail;
    c.success_threshold = seeds[i].succ;
    c.break_ms = seeds[i].brk;
    assert_int_equal(
        bw_registry_set_breaker_config(reg, seeds[i].name, &c, &err), BW_OK);
  }
}

/* ---- per-name configurations -------------------------------------------- */

/* Opens after exactly `threshold` consecutive failures, with `brk` ms. */
static void check_trips_at(bw_breaker_t *b, unsigned threshold, int64_t brk) {
  fail_n(b, threshold - 1);
  assert_int_equal(bw_breaker_state(b), BW_CLOSED);
  fail_n(b, 1);
  assert_int_equal(bw_breaker_state(b), BW_OPEN);
  assert_int_equal(bw_breaker_retry_in_ms(b), brk);
}

static void test_seed_configs_applied(void **state) {
  world_t w;
  bw_breaker_config_t def;
  bw_breaker_t *hotel, *payment, *search, *other;
  bw_permit_t p;
  const ev_rec_t *opened[8] = {NULL};
  int i;
  (void)state;
  bw_breaker_config_init(&def);
  def.failure_threshold = 7;
  def.break_ms = 5000;
  world_open(&w, 0, 60000, &def);
  set_seed_configs(w.reg);

  hotel = get(&w, "hotel_api");
  payment = get(&w, "payment_api");
  search = get(&w, "search_agent");
  other = get(&w, "some_other_api");
  assert_string_equal(bw_breaker_name(hotel), "hotel_api");
  assert_string_equal(bw_breaker_name(other), "some_other_api");
  check_trips_at(hotel, 5, 30000);
  check_trips_at(payment, 3, 60000);
  check_trips_at(search, 10, 15000);
  check_trips_at(other, 7, 5000); /* the registry's default_breaker */

  /* The registry's clock drives the breakers (their configs name none):
   * the break ends exactly when the manual clock says so. */
  advance_ms(&w, 29999);
  assert_int_equal(bw_breaker_acquire(hotel, &p), BW_E_OPEN);
  advance_ms(&w, 1);
  /* success_threshold 2 for hotel_api: one probe success is not enough. */
  assert_int_equal(bw_breaker_acquire(hotel, &p), BW_OK);
  assert_int_equal(p.kind, BW_PERMIT_PROBE);
  bw_breaker_release(hotel, &p, BW_SUCCESS);
  assert_int_equal(bw_breaker_state(hotel), BW_HALF_OPEN);
  outcome(hotel, BW_SUCCESS);
  assert_int_equal(bw_breaker_state(hotel), BW_CLOSED);

  /* payment_api needs 3 probe successes after its 60 s break. */
  advance_ms(&w, 30000);
  for (i = 0; i < 2; i++) {
    outcome(payment, BW_SUCCESS);
    assert_int_equal(bw_breaker_state(payment), BW_HALF_OPEN);
  }
  outcome(payment, BW_SUCCESS);
  assert_int_equal(bw_breaker_state(payment), BW_CLOSED);

  /* The registry's sink received the breakers' events, named. */
  assert_int_equal(events_of(&w.col, BW_EV_CIRCUIT_OPENED, opened, 8), 4);
  assert_string_equal(opened[0]->name, "hotel_api");
  assert_string_equal(opened[1]->name, "payment_api");
  assert_string_equal(opened[2]->name, "search_agent");
  assert_string_equal(opened[3]->name, "some_other_api");

  bw_registry_put(w.reg, hotel);
  bw_registry_put(w.reg, payment);
  bw_registry_put(w.reg, search);
  bw_registry_put(w.reg, other);
  world_close(&w);
}

/* Without default_breaker, unknown names get bw_breaker_config_init's
 * values, still on the registry's clock. */
static void test_default_config_when_none_given(void **state) {
  world_t w;
  bw_breaker_t *b;
  (void)state;
  world_open(&w, 0, 60000, NULL);
  b = get(&w, "anything");
  check_trips_at(b, 5, 30000);
  advance_ms(&w, 12345);
  assert_int_equal(bw_breaker_retry_in_ms(b), 30000 - 12345);
  bw_registry_put(w.reg, b);
  world_close(&w);
}

/* A config's own clock and sink win over the registry's. */
static void test_config_own_sink_wins(void **state) {
  world_t w;
  collector_t own;
  bw_sink_t *own_sink;
  bw_breaker_config_t c;
  bw_error_t err;
  bw_breaker_t *b;
  const ev_rec_t *ev[4] = {NULL};
  (void)state;
  world_open(&w, 0, 60000, NULL);
  memset(&own, 0, sizeof(own));
  pthread_mutex_init(&own.mu, NULL);
  own_sink = bw_sink_callback_new(collect_cb, &own, &err);
  assert_non_null(own_sink);
  bw_breaker_config_init(&c);
  c.failure_threshold = 1;
  c.sink = own_sink;
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "mine", &c, &err),
                   BW_OK);
  b = get(&w, "mine");
  fail_n(b, 1);
  assert_int_equal(events_of(&own, BW_EV_CIRCUIT_OPENED, ev, 4), 1);
  assert_string_equal(ev[0]->name, "mine");
  assert_int_equal(events_of(&w.col, BW_EV_CIRCUIT_OPENED, ev, 4), 0);
  bw_registry_put(w.reg, b);
  world_close(&w);
  bw_sink_free(own_sink);
  pthread_mutex_destroy(&own.mu);
}

/* A config applies to the next creation; an existing object keeps its own,
 * and setting a name's config again replaces it. */
static void test_config_applies_to_next_creation(void **state) {
  world_t w;
  bw_breaker_config_t c;
  bw_error_t err;
  bw_breaker_t *b;
  (void)state;
  world_open(&w, 0, 0, NULL);
  b = get(&w, "x");
  bw_breaker_config_init(&c);
  c.failure_threshold = 9;
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "x", &c, &err), BW_OK);
  c.failure_threshold = 2; /* replaces 9 */
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "x", &c, &err), BW_OK);
  fail_n(b, 4);
  assert_int_equal(bw_breaker_state(b), BW_CLOSED); /* still the default 5 */
  outcome(b, BW_SUCCESS);
  bw_registry_put(w.reg, b);
  /* idle_evict_ms 0: evictable as soon as it is put back. */
  assert_int_equal(bw_registry_evict_idle(w.reg), 1);
  assert_null(bw_registry_find_breaker(w.reg, "x"));
  b = get(&w, "x");
  check_trips_at(b, 2, 30000);
  bw_registry_put(w.reg, b);
  world_close(&w);
}

/* ---- identity, holds, ordered walks ------------------------------------- */

static void test_same_name_same_object(void **state) {
  world_t w;
  bw_breaker_t *a1, *a2, *a3, *b;
  (void)state;
  world_open(&w, 0, 60000, NULL);
  assert_int_equal(bw_registry_size(w.reg), 0);
  assert_null(bw_registry_find_breaker(w.reg, "a"));
  a1 = get(&w, "a");
  a2 = get(&w, "a");
  assert_ptr_equal(a1, a2);
  a3 = bw_registry_find_breaker(w.reg, "a");
  assert_ptr_equal(a1, a3);
  b = get(&w, "b");
  assert_ptr_not_equal(a1, b);
  assert_int_equal(bw_registry_size(w.reg), 2);
  /* find never creates */
  assert_null(bw_registry_find_breaker(w.reg, "c"));
  assert_int_equal(bw_registry_size(w.reg), 2);
  /* names are exact bytes: case matters */
  assert_null(bw_registry_find_breaker(w.reg, "A"));
  bw_registry_put(w.reg, a1);
  bw_registry_put(w.reg, a2);
  bw_registry_put(w.reg, a3);
  bw_registry_put(w.reg, b);
  world_close(&w);
}

typedef struct walk_s {
  size_t n;
  char names[8][32];
  uint64_t calls[8], failures[8];
} walk_t;

static void walk_cb(const char *name, const bw_breaker_stats_t *st, void *ud) {
  walk_t *wk = ud;
  if (wk->n < 8) {
    snprintf(wk->names[wk->n], sizeof(wk->names[0]), "%s", name);
    wk->calls[wk->n] = st->calls;
    wk->failures[wk->n] = st->failures;
  }
  wk->n++;
}

static void test_foreach_in_name_order(void **state) {
  world_t w;
  walk_t wk;
  const char *names[] = {"charlie", "alpha", "Zulu", "bravo"};
  bw_breaker_t *b[4];
  size_t i;
  (void)state;
  world_open(&w, 0, 60000, NULL);
  for (i = 0; i < 4; i++)
    b[i] = get(&w, names[i]);
  outcome(b[0], BW_IGNORED); /* charlie */
  outcome(b[1], BW_SUCCESS); /* alpha */
  outcome(b[1], BW_SUCCESS);
  fail_n(b[3], 1); /* bravo */
  memset(&wk, 0, sizeof(wk));
  bw_registry_foreach_breaker(w.reg, walk_cb, &wk);
  assert_int_equal(wk.n, 4);
  /* byte order: upper case sorts before lower case */
  assert_string_equal(wk.names[0], "Zulu");
  assert_string_equal(wk.names[1], "alpha");
  assert_string_equal(wk.names[2], "bravo");
  assert_string_equal(wk.names[3], "charlie");
  assert_int_equal(wk.calls[0], 0);
  assert_int_equal(wk.calls[1], 2);
  assert_int_equal(wk.calls[2], 1);
  assert_int_equal(wk.failures[2], 1);
  assert_int_equal(wk.calls[3], 1);
  assert_int_equal(wk.failures[3], 0);
  for (i = 0; i < 4; i++)
    bw_registry_put(w.reg, b[i]);
  world_close(&w);
}

/* ---- Prometheus --------------------------------------------------------- */

/* The value of the first sample line starting with `prefix` (up to '} '). */
static double sample_value(const char *text, const char *prefix) {
  const char *p = strstr(text, prefix);
  assert_non_null(p);
  p = strstr(p, "} ");
  assert_non_null(p);
  return strtod(p + 2, NULL);
}

static void test_prometheus_known_state(void **state) {
  world_t w;
  bw_breaker_config_t ratio;
  bw_error_t err;
  bw_breaker_t *hotel, *payment, *r1, *r2;
  bw_permit_t p;
  char *text;
  size_t len;
  (void)state;
  world_open(&w, 0, 60000, NULL);
  set_seed_configs(w.reg);
  bw_breaker_config_init(&ratio);
  ratio.trip_rule = BW_TRIP_COUNT_WINDOW;
  ratio.window_size = 10;
  ratio.minimum_calls = 10;
  assert_int_equal(
      bw_registry_set_breaker_config(w.reg, "ratio_a", &ratio, &err), BW_OK);
  assert_int_equal(
      bw_registry_set_breaker_config(w.reg, "ratio_b", &ratio, &err), BW_OK);

  /* Created in reverse name order: the output must still be sorted. */
  payment = get(&w, "payment_api");
  hotel = get(&w, "hotel_api");
  advance_ms(&w, 1500);
  fail_n(hotel, 5); /* OPEN after 1.5 s closed */
  assert_int_equal(bw_breaker_acquire(hotel, &p), BW_E_OPEN);
  advance_ms(&w, 250);
  fail_n(payment, 2);
  outcome(payment, BW_IGNORED);
  r1 = get(&w, "ratio_a"); /* 1 failure in 4: 0.25 */
  fail_n(r1, 1);
  outcome(r1, BW_SUCCESS);
  outcome(r1, BW_SUCCESS);
  outcome(r1, BW_SUCCESS);
  r2 = get(&w, "ratio_b"); /* 1 failure in 3: 1/3 */
  fail_n(r2, 1);
  outcome(r2, BW_SUCCESS);
  outcome(r2, BW_SUCCESS);

  text = bw_registry_prometheus(w.reg, &len);
  assert_non_null(text);
  assert_int_equal(len, strlen(text));
  assert_int_equal(text[len - 1], '\n');

  assert_contains(text, "# TYPE breakwater_breaker_state gauge\n");
  assert_contains(text, "\nbreakwater_breaker_state{name=\"hotel_api\"} 1\n");
  assert_contains(text, "\nbreakwater_breaker_state{name=\"payment_api\"} 0\n");
  assert_contains(
      text,
      "\nbreakwater_breaker_in_state{name=\"hotel_api\",state=\"open\"} 1\n");
  assert_contains(
      text,
      "\nbreakwater_breaker_in_state{name=\"hotel_api\",state=\"closed\"} 0\n");
  assert_contains(text, "# TYPE breakwater_breaker_calls_total counter\n");
  assert_contains(text,
                  "\nbreakwater_breaker_calls_total{name=\"hotel_api\","
                  "outcome=\"failure\"} 5\n");
  assert_contains(text,
                  "\nbreakwater_breaker_calls_total{name=\"hotel_api\","
                  "outcome=\"success\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_calls_total{name=\"payment_api\","
                  "outcome=\"ignored\"} 1\n");
  assert_contains(
      text, "\nbreakwater_breaker_admitted_total{name=\"hotel_api\"} 5\n");
  assert_contains(
      text, "\nbreakwater_breaker_rejected_total{name=\"hotel_api\"} 1\n");
  assert_contains(
      text,
      "\nbreakwater_breaker_shadow_rejected_total{name=\"hotel_api\"} "
      "0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_stale_total{name=\"hotel_api\"} 0\n");
  assert_contains(
      text, "\nbreakwater_breaker_slow_calls_total{name=\"hotel_api\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_transitions_total{name=\"hotel_api\","
                  "to=\"open\"} 1\n");
  assert_contains(text,
                  "\nbreakwater_breaker_transitions_total{name=\"hotel_api\","
                  "to=\"closed\"} 0\n");
  assert_contains(
      text,
      "\nbreakwater_breaker_consecutive_failures{name=\"payment_api\"} 2\n");
  assert_contains(
      text, "\nbreakwater_breaker_half_open_in_flight{name=\"hotel_api\"} 0\n");
  assert_contains(text,
                  "# TYPE breakwater_breaker_time_in_state_seconds_total "
                  "counter\n");
  assert_contains(text,
                  "\nbreakwater_breaker_time_in_state_seconds_total{name="
                  "\"hotel_api\",state=\"closed\"} 1.5\n");
  assert_contains(text,
                  "\nbreakwater_breaker_time_in_state_seconds_total{name="
                  "\"hotel_api\",state=\"open\"} 0.25\n");
  assert_contains(text,
                  "\nbreakwater_breaker_retry_in_seconds{name=\"hotel_api\"} "
                  "29.75\n");
  assert_contains(text,
                  "\nbreakwater_breaker_retry_in_seconds{name=\"payment_api\"} "
                  "0\n");
  assert_contains(
      text, "\nbreakwater_breaker_break_seconds{name=\"payment_api\"} 60\n");
  assert_contains(text,
                  "\nbreakwater_breaker_window_calls{name=\"ratio_a\"} 4\n");
  assert_contains(text,
                  "\nbreakwater_breaker_window_failure_ratio{name=\"ratio_a\"} "
                  "0.25\n");
  /* 1/3 must read back as exactly the same double. */
  assert_true(sample_value(text,
                           "breakwater_breaker_window_failure_ratio{"
                           "name=\"ratio_b\"}") == 1.0 / 3.0);
  assert_contains(text, "\nbreakwater_registry_objects 4\n");
  assert_contains(text, "\nbreakwater_registry_evictions_total 0\n");

  /* One HELP and one TYPE per family; every sample line belongs to one. */
  assert_int_equal(count_of(text, "# TYPE breakwater_breaker_calls_total "), 1);
  assert_int_equal(count_of(text, "# HELP breakwater_breaker_calls_total "), 1);
  assert_int_equal(count_of(text, "# HELP "), count_of(text, "# TYPE "));
  /* 21 breaker families (with breakwater_breaker_isolated) + 5 registry */
  assert_int_equal(count_of(text, "# TYPE "), 26);
  {
    /* Every line is a comment or a breakwater_ sample; names are sorted
     * within each family. */
    const char *line = text;
    while (*line != '\0') {
      const char *nl = strchr(line, '\n');
      assert_non_null(nl);
      assert_true(strncmp(line, "# HELP ", 7) == 0 ||
                  strncmp(line, "# TYPE ", 7) == 0 ||
                  strncmp(line, "breakwater_", 11) == 0);
      line = nl + 1;
    }
    assert_true(strstr(text, "breakwater_breaker_state{name=\"hotel_api\"}") <
                strstr(text, "breakwater_breaker_state{name=\"payment_api\"}"));
    assert_true(strstr(text, "breakwater_breaker_state{name=\"payment_api\"}") <
                strstr(text, "breakwater_breaker_state{name=\"ratio_a\"}"));
    /* Families are contiguous: no state sample after the next family. */
    assert_true(strstr(text, "breakwater_breaker_state{name=\"ratio_b\"}") <
                strstr(text, "# HELP breakwater_breaker_in_state "));
  }

  /* The FILE variant writes the same text. */
  {
    FILE *fp = tmpfile();
    char *back;
    size_t got;
    assert_non_null(fp);
    assert_int_equal(bw_registry_write_prometheus(w.reg, fp), BW_OK);
    rewind(fp);
    back = calloc(1, len + 2);
    assert_non_null(back);
    got = fread(back, 1, len + 1, fp);
    assert_int_equal(got, len);
    assert_string_equal(back, text);
    free(back);
    fclose(fp);
  }
  bw_free(text);

  bw_registry_put(w.reg, hotel);
  bw_registry_put(w.reg, payment);
  bw_registry_put(w.reg, r1);
  bw_registry_put(w.reg, r2);
  world_close(&w);
}

/* Label values escape backslash, double quote and newline; invalid UTF-8
 * becomes U+FFFD so one odd name cannot break a whole scrape. */
static void test_prometheus_label_escaping(void **state) {
  world_t w;
  bw_breaker_t *odd, *bad;
  char *text;
  (void)state;
  world_open(&w, 0, 60000, NULL);
  odd = get(&w, "a\"b\\c\nd");
  bad = get(&w,
            "bad\xff"
            "byte");
  text = bw_registry_prometheus(w.reg, NULL);
  assert_non_null(text);
  assert_contains(text,
                  "\nbreakwater_breaker_state{name=\"a\\\"b\\\\c\\nd\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_calls_total{name=\"a\\\"b\\\\c\\nd\","
                  "outcome=\"success\"} 0\n");
  assert_contains(text,
                  "\nbreakwater_breaker_state{name=\"bad\xEF\xBF\xBD"
                  "byte\"} 0\n");
  assert_not_contains(text, "\xff");
  bw_free(text);
  bw_registry_put(w.reg, odd);
  bw_registry_put(w.reg, bad);
  world_close(&w);
}

static void test_prometheus_io_error(void **state) {
  world_t w;
  FILE *ro;
  (void)state;
  world_open(&w, 0, 60000, NULL);
  ro = fopen("/dev/null", "r"); /* writes fail */
  assert_non_null(ro);
  assert_int_equal(bw_registry_write_prometheus(w.reg, ro), BW_E_IO);
  fclose(ro);
  assert_int_equal(bw_registry_write_prometheus(w.reg, NULL), BW_E_INVAL);
  world_close(&w);
}

/* ---- cap and eviction --------------------------------------------------- */

static void test_idle_closed_evicted_only_after_idle(void **state) {
  world_t w;
  bw_error_t err;
  bw_breaker_t *a, *b, *c;
  const ev_rec_t *ev[4] = {NULL};
  (void)state;
  world_open(&w, 2, 60000, NULL);
  a = get(&w, "a");
  outcome(a, BW_SUCCESS);
  bw_registry_put(w.reg, a);
  b = get(&w, "b");
  bw_registry_put(w.reg, b);

  assert_null(bw_registry_breaker(w.reg, "c", &err));
  assert_int_equal(err.code, BW_E_LIMIT);
  assert_string_equal(err.field, "max_objects");
  assert_contains(err.message, "max_objects (2)");
  assert_contains(err.message, "2 used within idle_evict_ms");
  advance_ms(&w, 59999);
  assert_null(bw_registry_breaker(w.reg, "c", &err));
  assert_int_equal(err.code, BW_E_LIMIT);
  assert_int_equal(events_of(&w.col, BW_EV_REGISTRY_EVICTED, ev, 4), 0);

  advance_ms(&w, 1);
  c = get(&w, "c"); /* a is the least recently used: it goes */
  assert_int_equal(bw_registry_size(w.reg), 2);
  assert_null(bw_registry_find_breaker(w.reg, "a"));
  assert_int_equal(events_of(&w.col, BW_EV_REGISTRY_EVICTED, ev, 4), 1);
  assert_string_equal(ev[0]->name, "a");
  assert_string_equal(ev[0]->reason, "idle 60000 ms, registry at cap 2");
  assert_int_equal(ev[0]->idle_ms, 60000);
  assert_string_equal(ev[0]->trigger, "cap");
  b = bw_registry_find_breaker(w.reg, "b");
  assert_non_null(b);
  bw_registry_put(w.reg, b);
  bw_registry_put(w.reg, c);

  /* A name that comes back gets a fresh object. */
  advance_ms(&w, 60000);
  a = get(&w, "a");
  {
    bw_breaker_stats_t st;
    bw_breaker_stats(a, &st);
    assert_int_equal(st.calls, 0);
  }
  bw_registry_put(w.reg, a);
  world_close(&w);
}

static void test_lru_order(void **state) {
  world_t w;
  bw_breaker_t *a, *b, *c;
  const ev_rec_t *ev[4] = {NULL};
  (void)state;
  world_open(&w, 2, 60000, NULL);
  a = get(&w, "a");
  bw_registry_put(w.reg, a);
  b = get(&w, "b");
  bw_registry_put(w.reg, b);
  advance_ms(&w, 60000);
  a = get(&w, "a"); /* a is now the most recently used */
  bw_registry_put(w.reg, a);
  advance_ms(&w, 60000);
  c = get(&w, "c");
  assert_int_equal(events_of(&w.col, BW_EV_REGISTRY_EVICTED, ev, 4), 1);
  assert_string_equal(ev[0]->name, "b");
  assert_int_equal(ev[0]->idle_ms, 120000);
  bw_registry_put(w.reg, c);
  world_close(&w);
}

/* Open, half-open, isolated, disabled, metrics-only-flipped, counting
 * failures (consecutive or in a window) and held objects are never evicted,
 * however idle. */
static void test_never_evicted(void **state) {
  world_t w;
  bw_breaker_config_t win;
  bw_error_t err;
  bw_breaker_t *open, *probing, *iso, *dis, *mo, *consec, *window, *held,
      *extra;
  bw_permit_t probe;
  (void)state;
  world_open(&w, 8, 1000, NULL);
  bw_breaker_config_init(&win);
  win.trip_rule = BW_TRIP_COUNT_WINDOW;
  win.window_size = 100;
  win.minimum_calls = 100;
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "window", &win, &err),
                   BW_OK);

  open = get(&w, "open");
  fail_n(open, 5);
  probing = get(&w, "probing");
  fail_n(probing, 5);
  iso = get(&w, "isolated");
  bw_breaker_isolate(iso);
  dis = get(&w, "disabled");
  bw_breaker_disable(dis);
  mo = get(&w, "metrics_only");
  bw_breaker_set_metrics_only(mo, true);
  consec = get(&w, "consec");
  fail_n(consec, 1);
  window = get(&w, "window");
  fail_n(window, 1);
  outcome(window, BW_SUCCESS); /* consecutive count is irrelevant here */
  held = get(&w, "held");
  bw_registry_put(w.reg, open);
  bw_registry_put(w.reg, probing);
  bw_registry_put(w.reg, iso);
  bw_registry_put(w.reg, dis);
  bw_registry_put(w.reg, mo);
  bw_registry_put(w.reg, consec);
  bw_registry_put(w.reg, window);
  /* `held` stays held. */

  advance_ms(&w, 30000); /* the breaks are over: probing goes half-open */
  assert_int_equal(bw_breaker_acquire(probing, &probe), BW_OK);
  assert_int_equal(bw_breaker_state(probing), BW_HALF_OPEN);
  advance_ms(&w, 3600 * 1000);

  assert_int_equal(bw_registry_evict_idle(w.reg), 0);
  assert_null(bw_registry_breaker(w.reg, "new", &err));
  assert_int_equal(err.code, BW_E_LIMIT);
  assert_string_equal(err.field, "max_objects");
  assert_contains(err.message, "1 held");
  assert_contains(err.message, "0 used within");
  assert_contains(err.message, "5 not closed");
  assert_contains(err.message, "2 counting failures");
  assert_int_equal(bw_registry_size(w.reg), 8);

  /* Once `consec` recovers (a success resets the count) and sits idle for
   * idle_evict_ms, it is the one to go. */
  consec = get(&w, "consec");
  outcome(consec, BW_SUCCESS);
  bw_registry_put(w.reg, consec);
  advance_ms(&w, 999);
  assert_null(bw_registry_breaker(w.reg, "new", &err));
  assert_int_equal(err.code, BW_E_LIMIT);
  advance_ms(&w, 1);
  extra = get(&w, "new");
  assert_null(bw_registry_find_breaker(w.reg, "consec"));
  assert_int_equal(bw_registry_size(w.reg), 8);

  bw_breaker_release(probing, &probe, BW_SUCCESS);
  bw_registry_put(w.reg, held);
  bw_registry_put(w.reg, extra);
  world_close(&w);
}

static void test_evict_idle_sweep(void **state) {
  world_t w;
  bw_breaker_t *a, *b, *c, *d;
  const ev_rec_t *ev[8] = {NULL};
  (void)state;
  world_open(&w, 0, 1000, NULL); /* unbounded: only sweeps evict */
  a = get(&w, "a");
  bw_registry_put(w.reg, a);
  advance_ms(&w, 10);
  b = get(&w, "b");
  bw_registry_put(w.reg, b);
  c = get(&w, "c");
  fail_n(c, 5);
  bw_registry_put(w.reg, c);
  advance_ms(&w, 500);
  d = get(&w, "d");
  bw_registry_put(w.reg, d);
  assert_int_equal(bw_registry_evict_idle(w.reg), 0);
  advance_ms(&w, 500); /* a: 1010 ms, b: 1000 ms, c open, d: 500 ms */
  assert_int_equal(bw_registry_evict_idle(w.reg), 2);
  assert_int_equal(bw_registry_size(w.reg), 2);
  assert_int_equal(events_of(&w.col, BW_EV_REGISTRY_EVICTED, ev, 8), 2);
  assert_string_equal(ev[0]->name, "a"); /* least recently used first */
  assert_int_equal(ev[0]->idle_ms, 1010);
  assert_string_equal(ev[0]->trigger, "sweep");
  assert_string_equal(ev[0]->reason,
                      "idle 1010 ms (idle_evict_ms 1000), evict_idle sweep");
  assert_string_equal(ev[1]->name, "b");
  c = bw_registry_find_breaker(w.reg, "c");
  d = bw_registry_find_breaker(w.reg, "d");
  assert_non_null(c);
  assert_non_null(d);
  bw_registry_put(w.reg, c);
  bw_registry_put(w.reg, d);
  {
    char *text = bw_registry_prometheus(w.reg, NULL);
    assert_non_null(text);
    assert_contains(text, "\nbreakwater_registry_evictions_total 2\n");
    bw_free(text);
  }
  world_close(&w);
}

/* Every lookup is a hold; only a matching put releases it, and a put with no
 * hold (or for a foreign breaker) changes nothing. */
static void test_holds_and_puts(void **state) {
  world_t w;
  bw_error_t err;
  bw_breaker_t *a, *a2, *b, *foreign;
  bw_breaker_config_t c;
  (void)state;
  world_open(&w, 1, 0, NULL);
  a = get(&w, "a");
  a2 = get(&w, "a");
  bw_registry_put(w.reg, a);
  assert_null(bw_registry_breaker(w.reg, "b", &err)); /* a still held once */
  assert_int_equal(err.code, BW_E_LIMIT);
  assert_contains(err.message, "1 held");
  bw_registry_put(w.reg, a2);
  bw_registry_put(w.reg, a2); /* one too many: ignored */
  a = get(&w, "a");           /* held again, exactly once */
  assert_null(bw_registry_breaker(w.reg, "b", &err));
  assert_int_equal(err.code, BW_E_LIMIT);

  bw_breaker_config_init(&c);
  c.name = "foreign";
  foreign = bw_breaker_new(&c, &err);
  assert_non_null(foreign);
  bw_registry_put(w.reg, foreign); /* not ours: ignored */
  bw_registry_put(w.reg, NULL);
  bw_registry_put(NULL, a);
  bw_breaker_free(foreign);

  bw_registry_put(w.reg, a);
  b = get(&w, "b");
  assert_null(bw_registry_find_breaker(w.reg, "a"));
  bw_registry_put(w.reg, b);
  world_close(&w);
}

/* An object may still be evicted right after a put if it is idle enough:
 * idle time counts from the last lookup or put, not from creation. */
static void test_idle_counts_from_put(void **state) {
  world_t w;
  bw_error_t err;
  bw_breaker_t *a, *b;
  (void)state;
  world_open(&w, 1, 1000, NULL);
  a = get(&w, "a");
  advance_ms(&w, 5000); /* used under one hold for 5 s */
  bw_registry_put(w.reg, a);
  assert_null(bw_registry_breaker(w.reg, "b", &err));
  assert_int_equal(err.code, BW_E_LIMIT);
  advance_ms(&w, 1000);
  b = get(&w, "b");
  bw_registry_put(w.reg, b);
  world_close(&w);
}

/* ---- validation --------------------------------------------------------- */

static void test_bad_registry_config(void **state) {
  bw_registry_config_t rc;
  bw_breaker_config_t bad;
  bw_error_t err;
  bw_registry_t *reg;
  (void)state;
  bw_registry_config_init(&rc);
  assert_int_equal(rc.max_objects, 0);
  assert_int_equal(rc.idle_evict_ms, 60000);
  assert_ptr_equal(rc.clock, bw_clock_monotonic());
  assert_null(rc.sink);
  assert_null(rc.default_breaker);

  rc.idle_evict_ms = -1;
  assert_null(bw_registry_new(&rc, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "idle_evict_ms");
  assert_contains(err.message, "idle_evict_ms must be >= 0 (got -1)");
  assert_null(bw_registry_new(&rc, NULL)); /* err is optional */

  bw_registry_config_init(&rc);
  bw_breaker_config_init(&bad);
  bad.break_ms = 0;
  rc.default_breaker = &bad;
  assert_null(bw_registry_new(&rc, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "default_breaker.break_ms");
  assert_contains(err.message, "default_breaker: break_ms");

  /* NULL config: the defaults. */
  reg = bw_registry_new(NULL, &err);
  assert_non_null(reg);
  assert_int_equal(err.code, BW_OK);
  bw_registry_free(reg);
  bw_registry_free(NULL);
}

static void test_bad_names_and_configs(void **state) {
  world_t w;
  bw_breaker_config_t c;
  bw_error_t err;
  bw_breaker_t *b;
  char name[202];
  (void)state;
  world_open(&w, 0, 60000, NULL);

  assert_null(bw_registry_breaker(w.reg, "", &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_contains(err.message, "name must not be empty");
  assert_null(bw_registry_breaker(w.reg, NULL, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_null(bw_registry_breaker(NULL, "a", &err));
  assert_int_equal(err.code, BW_E_INVAL);

  memset(name, 'n', 201);
  name[201] = '\0';
  assert_null(bw_registry_breaker(w.reg, name, &err));
  assert_int_equal(err.code, BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_contains(err.message, "at most 200 bytes");
  assert_null(bw_registry_find_breaker(w.reg, name));
  name[200] = '\0'; /* exactly 200 bytes is fine */
  b = get(&w, name);
  assert_string_equal(bw_breaker_name(b), name);
  bw_registry_put(w.reg, b);
  assert_null(bw_registry_find_breaker(w.reg, ""));
  assert_int_equal(bw_registry_size(w.reg), 1);

  bw_breaker_config_init(&c);
  c.failure_threshold = 0;
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "x", &c, &err),
                   BW_E_INVAL);
  assert_string_equal(err.field, "failure_threshold");
  assert_contains(err.message, "failure_threshold");
  c.failure_threshold = 5;
  c.name = NULL; /* the config's own name is ignored */
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "x", &c, &err), BW_OK);
  assert_int_equal(err.code, BW_OK);
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "x", NULL, &err),
                   BW_E_INVAL);
  assert_string_equal(err.field, "cfg");
  assert_int_equal(bw_registry_set_breaker_config(w.reg, "", &c, &err),
                   BW_E_INVAL);
  assert_string_equal(err.field, "name");
  assert_int_equal(bw_registry_set_breaker_config(NULL, "x", &c, &err),
                   BW_E_INVAL);
  world_close(&w);
}

/* ---- out of memory ------------------------------------------------------ */

/* Builds a registry, registers a config, looks up three names (the third at
 * the cap, evicting the first), snapshots and frees. Returns BW_OK or
 * BW_E_NOMEM; on failure everything it made is already released. Asserts
 * that every failure is reported as BW_E_NOMEM and that a failed creation
 * at the cap keeps the object it would have evicted. */
static int oom_scenario(void *ctx) {
  bw_clock_t *clock = ctx;
  static const char *const names[] = {"hotel_api", "payment_api",
                                      "search_agent"};
  bw_registry_config_t rc;
  bw_breaker_config_t c;
  bw_error_t err;
  bw_registry_t *reg;
  bw_breaker_t *b;
  char *text;
  size_t i, len;
  int rc_ = BW_OK;
  FILE *fp;

  bw_registry_config_init(&rc);
  rc.clock = clock;
  rc.max_objects = 2;
  rc.idle_evict_ms = 0;
  reg = bw_registry_new(&rc, &err);
  if (reg == NULL) {
    assert_int_equal(err.code, BW_E_NOMEM);
    return BW_E_NOMEM;
  }
  bw_breaker_config_init(&c);
  c.trip_rule = BW_TRIP_COUNT_WINDOW; /* allocates a ring too */
  c.window_size = 10;
  c.minimum_calls = 5;
  rc_ = bw_registry_set_breaker_config(reg, "payment_api", &c, &err);
  if (rc_ != BW_OK) {
    assert_int_equal(rc_, BW_E_NOMEM);
    assert_int_equal(err.code, BW_E_NOMEM);
    goto out;
  }
  for (i = 0; i < 3; i++) {
    b = bw_registry_breaker(reg, names[i], &err);
    if (b == NULL) {
      assert_int_equal(err.code, BW_E_NOMEM);
      /* the would-be victim is still there */
      assert_int_equal(bw_registry_size(reg), i);
      rc_ = BW_E_NOMEM;
      goto out;
    }
    bw_registry_put(reg, b);
  }
  assert_int_equal(bw_registry_size(reg), 2);
  text = bw_registry_prometheus(reg, &len);
  if (text == NULL) {
    assert_int_equal(len, 0);
    rc_ = BW_E_NOMEM;
    goto out;
  }
  assert_contains(text, "breakwater_breaker_state{name=\"search_agent\"} 0\n");
  bw_free(text);
  fp = fopen("/dev/null", "w");
  assert_non_null(fp);
  rc_ = bw_registry_write_prometheus(reg, fp);
  fclose(fp);
  if (rc_ != BW_OK) {
    assert_int_equal(rc_, BW_E_NOMEM);
    goto out;
  }
  {
    walk_t wk;
    memset(&wk, 0, sizeof(wk));
    /* cannot fail: falls back to a buffer-free walk */
    bw_registry_foreach_breaker(reg, walk_cb, &wk);
    assert_int_equal(wk.n, 2);
    assert_string_equal(wk.names[0], "payment_api");
    assert_string_equal(wk.names[1], "search_agent");
  }
out:
  bw_registry_free(reg);
  return rc_;
}

static void test_oom(void **state) {
  bw_clock_t *clock;
  int sticky;
  (void)state;
  clock = bw_clock_manual_new(0);
  assert_non_null(clock);
  for (sticky = 0; sticky <= 1; sticky++) {
    long failures;
    long n = oom_walk_lenient(oom_scenario, clock, sticky != 0, &failures);
    /* Many allocation sites were hit, and most failures surfaced. */
    assert_true(n > 10);
    assert_true(failures > 5);
  }
  bw_clock_free(clock);
}

/* Disarms the failing allocator even when test_oom fails half-way (cmocka
 * jumps out of the test), so the tests after it get their memory. */
static int oom_teardown(void **state) {
  (void)state;
  oom_fail_at(0, false);
  return 0;
}

/* ---- threads ------------------------------------------------------------ */

/* Conservation: every lookup either returns a breaker (then exactly one call
 * and one put follow) or BW_E_LIMIT; after all threads end, no hold remains,
 * so a sweep with idle_evict_ms 0 empties the registry. */
typedef struct thread_arg_s {
  bw_registry_t *reg;
  int id;
  long ok, limited, other;
} thread_arg_t;

#define THREADS 4
#define ITERS 20000

static void *thread_main(void *p) {
  static const char *const names[] = {"n0", "n1", "n2", "n3",
                                      "n4", "n5", "n6", "n7"};
  thread_arg_t *a = p;
  long i;
  for (i = 0; i < ITERS; i++) {
    bw_error_t err;
    bw_breaker_t *b =
        bw_registry_breaker(a->reg, names[(i * 7 + a->id) % 8], &err);
    if (b != NULL) {
      bw_permit_t pm;
      if (bw_breaker_acquire(b, &pm) == BW_OK)
        bw_breaker_release(b, &pm, BW_SUCCESS);
      bw_registry_put(a->reg, b);
      a->ok++;
    } else if (err.code == BW_E_LIMIT) {
      a->limited++;
    } else {
      a->other++;
    }
  }
  return NULL;
}

static void test_threads(void **state) {
  world_t w;
  pthread_t th[THREADS];
  thread_arg_t args[THREADS];
  long ok = 0, limited = 0;
  int i;
  (void)state;
  world_open(&w, 4, 0, NULL);
  for (i = 0; i < THREADS; i++) {
    memset(&args[i], 0, sizeof(args[i]));
    args[i].reg = w.reg;
    args[i].id = i;
    assert_int_equal(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
  }
  for (i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(args[i].other, 0);
    ok += args[i].ok;
    limited += args[i].limited;
  }
  assert_int_equal(ok + limited, (long)THREADS * ITERS);
  assert_true(ok > 0);
  assert_true(bw_registry_size(w.reg) <= 4);
  (void)bw_registry_evict_idle(w.reg);
  assert_int_equal(bw_registry_size(w.reg), 0);
  world_close(&w);
}

/* The NULL policy: every verb answers BW_E_INVAL (or its documented
 * neutral value) for a NULL registry, never a crash; the void functions and
 * the free are no-ops. (A NULL configuration is not an error here:
 * bw_registry_new(NULL, ...) builds the defaults.) */
static void every_verb_answers_null_without_crashing(void **state) {
  bw_error_t err;
  (void)state;
  bw_registry_config_init(NULL);
  assert_int_equal(bw_registry_set_breaker_config(NULL, "a", NULL, &err),
                   BW_E_INVAL);
  assert_null(bw_registry_breaker(NULL, "a", &err));
  assert_null(bw_registry_find_breaker(NULL, "a"));
  bw_registry_put(NULL, NULL);
  assert_int_equal(bw_registry_evict_idle(NULL), 0);
  assert_int_equal(bw_registry_size(NULL), 0);
  bw_registry_foreach_breaker(NULL, NULL, NULL);
  assert_int_equal(bw_registry_write_prometheus(NULL, NULL), BW_E_INVAL);
  assert_null(bw_registry_prometheus(NULL, NULL));
  bw_registry_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_verb_answers_null_without_crashing),
      cmocka_unit_test(test_seed_configs_applied),
      cmocka_unit_test(test_default_config_when_none_given),
      cmocka_unit_test(test_config_own_sink_wins),
      cmocka_unit_test(test_config_applies_to_next_creation),
      cmocka_unit_test(test_same_name_same_object),
      cmocka_unit_test(test_foreach_in_name_order),
      cmocka_unit_test(test_prometheus_known_state),
      cmocka_unit_test(test_prometheus_label_escaping),
      cmocka_unit_test(test_prometheus_io_error),
      cmocka_unit_test(test_idle_closed_evicted_only_after_idle),
      cmocka_unit_test(test_lru_order),
      cmocka_unit_test(test_never_evicted),
      cmocka_unit_test(test_evict_idle_sweep),
      cmocka_unit_test(test_holds_and_puts),
      cmocka_unit_test(test_idle_counts_from_put),
      cmocka_unit_test(test_bad_registry_config),
      cmocka_unit_test(test_bad_names_and_configs),
      cmocka_unit_test_teardown(test_oom, oom_teardown),
      cmocka_unit_test(test_threads),
  };
  /* The counting hooks go in before any object exists (the hooks' rule);
   * they pass everything through until a test arms them. */
  if (oom_install() != BW_OK) return 1;
  return cmocka_run_group_tests(tests, NULL, NULL);
}

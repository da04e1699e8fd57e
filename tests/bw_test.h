/* breakwater — small helpers shared by the unit tests (not installed).
 *
 * - Typed assertions that print both sides in decimal (cmocka's own integer
 *   assertions print hexadecimal), and a status assertion that prints the
 *   status names ("E_OPEN != OK").
 * - An event recorder: a callback sink that copies every event (type, name,
 *   reason, fields, context) into a fixed array, so a test can assert the
 *   exact sequence of events after the fact.
 * - A test environment: a manual monotonic clock, a manual wall clock, a
 *   recorder and its sink, and the breaker under test (freed in teardown).
 *
 * Everything here is static inline so each test program compiles it without
 * unused-function warnings. */
#ifndef BW_TEST_H
#define BW_TEST_H

/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/breakwater.h"

/* ---- typed assertions -----------------------------------------------------
 */

static inline void bwt__i64_eq(int64_t a, int64_t b, const char *ea,
                               const char *eb, const char *file, int line) {
  if (a != b) {
    print_error("%s == %s: %" PRId64 " != %" PRId64 "\n", ea, eb, a, b);
    _fail(file, line);
  }
}

static inline void bwt__u64_eq(uint64_t a, uint64_t b, const char *ea,
                               const char *eb, const char *file, int line) {
  if (a != b) {
    print_error("%s == %s: %" PRIu64 " != %" PRIu64 "\n", ea, eb, a, b);
    _fail(file, line);
  }
}

/* Doubles: equal within `eps` (use 0 for an exact comparison). */
static inline void bwt__dbl_eq(double a, double b, double eps, const char *ea,
                               const char *eb, const char *file, int line) {
  if (!(fabs(a - b) <= eps)) {
    print_error("%s == %s (eps %g): %.17g != %.17g\n", ea, eb, eps, a, b);
    _fail(file, line);
  }
}

static inline void bwt__status_eq(int a, int b, const char *ea, const char *eb,
                                  const char *file, int line) {
  if (a != b) {
    print_error("%s == %s: %s (%d) != %s (%d)\n", ea, eb, bw_err_name(a), a,
                bw_err_name(b), b);
    _fail(file, line);
  }
}

static inline void bwt__state_eq(bw_state_t a, bw_state_t b, const char *ea,
                                 const char *eb, const char *file, int line) {
  if (a != b) {
    print_error("%s == %s: %s != %s\n", ea, eb, bw_state_name(a),
                bw_state_name(b));
    _fail(file, line);
  }
}

static inline void bwt__contains(const char *hay, const char *needle,
                                 const char *ea, const char *file, int line) {
  if (hay == NULL || needle == NULL || strstr(hay, needle) == NULL) {
    print_error("%s: \"%s\" does not contain \"%s\"\n", ea,
                hay ? hay : "(null)", needle ? needle : "(null)");
    _fail(file, line);
  }
}

#define assert_i64_eq(a, b) \
  bwt__i64_eq((int64_t)(a), (int64_t)(b), #a, #b, __FILE__, __LINE__)
#define assert_u64_eq(a, b) \
  bwt__u64_eq((uint64_t)(a), (uint64_t)(b), #a, #b, __FILE__, __LINE__)
#define assert_dbl_eq(a, b, eps) \
  bwt__dbl_eq((double)(a), (double)(b), (eps), #a, #b, __FILE__, __LINE__)
#define assert_status(a, b) bwt__status_eq((a), (b), #a, #b, __FILE__, __LINE__)
#define assert_state(a, b) bwt__state_eq((a), (b), #a, #b, __FILE__, __LINE__)
#define assert_contains(hay, needle) \
  bwt__contains((hay), (needle), #hay, __FILE__, __LINE__)

static inline void bwt__not_contains(const char *hay, const char *needle,
                                     const char *ea, const char *file,
                                     int line) {
  if (hay == NULL || needle == NULL || strstr(hay, needle) != NULL) {
    print_error("%s: \"%s\" contains \"%s\"\n", ea, hay ? hay : "(null)",
                needle ? needle : "(null)");
    _fail(file, line);
  }
}
#define assert_not_contains(hay, needle) \
  bwt__not_contains((hay), (needle), #hay, __FILE__, __LINE__)

/* ---- event recorder ---------------------------------------------------------
 */

/* Fills err with stale values, so a test can tell that a call wrote it. */
static inline void bwt_prefill_error(bw_error_t *err) {
  memset(err, 0, sizeof(*err));
  err->code = 12345;
  snprintf(err->field, sizeof(err->field), "%s", "stale-field");
  snprintf(err->message, sizeof(err->message), "%s", "stale message");
}

/* True when err is BW_E_INVAL naming `field` in both `field` and message. */
static inline bool bwt_error_names(const bw_error_t *err, const char *field) {
  return err->code == BW_E_INVAL && strcmp(err->field, field) == 0 &&
         strstr(err->message, field) != NULL;
}

#define BWT_MAX_EVENTS 1024
#define BWT_MAX_FIELDS 8
#define BWT_MAX_CTX 4

typedef struct bwt_field_s {
  char key[48];
  bw_field_type_t type;
  int64_t i;
  uint64_t u;
  double d;
  bool b;
  char s[128];
} bwt_field_t;

typedef struct bwt_ctx_item_s {
  char key[48];
  char value[128];
} bwt_ctx_item_t;

typedef struct bwt_event_s {
  bw_event_type_t type;
  int64_t wall_ns;
  int64_t mono_ns;
  char name[256];
  char reason[256];
  size_t field_count;
  bwt_field_t fields[BWT_MAX_FIELDS];
  bool has_context;
  size_t context_count;
  bwt_ctx_item_t context[BWT_MAX_CTX];
} bwt_event_t;

typedef struct bwt_recorder_s {
  size_t count;    /* events received */
  size_t overflow; /* events received beyond BWT_MAX_EVENTS (not copied) */
  bwt_event_t events[BWT_MAX_EVENTS];
} bwt_recorder_t;

static inline void bwt__copy_str(char *dst, size_t size, const char *src) {
  snprintf(dst, size, "%s", src != NULL ? src : "(null)");
}

/* The callback of the recording sink: copies the event (it is valid only
 * during the call). */
static inline void bwt_record_cb(const bw_event_t *ev, void *userdata) {
  bwt_recorder_t *rec = userdata;
  bwt_event_t *e;
  size_t i;
  if (rec->count >= BWT_MAX_EVENTS) {
    rec->overflow++;
    return;
  }
  e = &rec->events[rec->count++];
  memset(e, 0, sizeof(*e));
  e->type = ev->type;
  e->wall_ns = ev->wall_ns;
  e->mono_ns = ev->mono_ns;
  bwt__copy_str(e->name, sizeof(e->name), ev->name);
  bwt__copy_str(e->reason, sizeof(e->reason), ev->reason);
  e->field_count = ev->field_count;
  for (i = 0; i < ev->field_count && i < BWT_MAX_FIELDS; i++) {
    const bw_field_t *f = &ev->fields[i];
    bwt_field_t *c = &e->fields[i];
    bwt__copy_str(c->key, sizeof(c->key), f->key);
    c->type = f->type;
    switch (f->type) {
    case BW_FIELD_INT:
      c->i = f->v.i;
      break;
    case BW_FIELD_UINT:
      c->u = f->v.u;
      break;
    case BW_FIELD_DOUBLE:
      c->d = f->v.d;
      break;
    case BW_FIELD_STR:
      bwt__copy_str(c->s, sizeof(c->s), f->v.s);
      break;
    case BW_FIELD_BOOL:
      c->b = f->v.b;
      break;
    }
  }
  e->has_context = ev->context != NULL;
  if (ev->context != NULL) {
    e->context_count = ev->context->count;
    for (i = 0; i < ev->context->count && i < BWT_MAX_CTX; i++) {
      bwt__copy_str(e->context[i].key, sizeof(e->context[i].key),
                    ev->context->items[i].key);
      bwt__copy_str(e->context[i].value, sizeof(e->context[i].value),
                    ev->context->items[i].value);
    }
  }
}

/* Number of recorded events of `type`. */
static inline size_t bwt_count(const bwt_recorder_t *rec,
                               bw_event_type_t type) {
  size_t i, n = 0;
  for (i = 0; i < rec->count && i < BWT_MAX_EVENTS; i++)
    if (rec->events[i].type == type) n++;
  return n;
}

/* State transitions are every event but the rejection summary and the
 * metrics-only toggle. */
static inline bool bwt_is_transition(bw_event_type_t type) {
  return type == BW_EV_CIRCUIT_OPENED || type == BW_EV_CIRCUIT_HALF_OPENED ||
         type == BW_EV_CIRCUIT_CLOSED || type == BW_EV_CIRCUIT_ISOLATED ||
         type == BW_EV_CIRCUIT_DISABLED || type == BW_EV_CIRCUIT_RESET;
}

static inline size_t bwt_transition_count(const bwt_recorder_t *rec) {
  size_t i, n = 0;
  for (i = 0; i < rec->count && i < BWT_MAX_EVENTS; i++)
    if (bwt_is_transition(rec->events[i].type)) n++;
  return n;
}

static inline const bwt_event_t *bwt__event_at(const bwt_recorder_t *rec,
                                               size_t idx, const char *file,
                                               int line) {
  if (idx >= rec->count || idx >= BWT_MAX_EVENTS) {
    print_error("event #%zu requested, only %zu recorded\n", idx, rec->count);
    _fail(file, line);
    return NULL;
  }
  return &rec->events[idx];
}

/* The idx-th transition event (0-based; summaries skipped). */
static inline const bwt_event_t *bwt__transition_at(const bwt_recorder_t *rec,
                                                    size_t idx,
                                                    const char *file,
                                                    int line) {
  size_t i, n = 0;
  for (i = 0; i < rec->count && i < BWT_MAX_EVENTS; i++) {
    if (!bwt_is_transition(rec->events[i].type)) continue;
    if (n++ == idx) return &rec->events[i];
  }
  print_error("transition #%zu requested, only %zu recorded\n", idx, n);
  _fail(file, line);
  return NULL;
}

/* The idx-th event of a type (0-based). */
static inline const bwt_event_t *bwt__nth_of(const bwt_recorder_t *rec,
                                             bw_event_type_t type, size_t idx,
                                             const char *file, int line) {
  size_t i, n = 0;
  for (i = 0; i < rec->count && i < BWT_MAX_EVENTS; i++) {
    if (rec->events[i].type != type) continue;
    if (n++ == idx) return &rec->events[i];
  }
  print_error("%s #%zu requested, only %zu recorded\n",
              bw_event_type_name(type), idx, n);
  _fail(file, line);
  return NULL;
}

#define bwt_event_at(rec, idx) bwt__event_at((rec), (idx), __FILE__, __LINE__)
#define bwt_transition_at(rec, idx) \
  bwt__transition_at((rec), (idx), __FILE__, __LINE__)
#define bwt_nth_of(rec, type, idx) \
  bwt__nth_of((rec), (type), (idx), __FILE__, __LINE__)

static inline void bwt__event_is(const bwt_event_t *e, bw_event_type_t type,
                                 const char *reason, const char *file,
                                 int line) {
  if (e->type != type) {
    print_error("event type: %s != %s\n", bw_event_type_name(e->type),
                bw_event_type_name(type));
    _fail(file, line);
  }
  if (reason != NULL && strcmp(e->reason, reason) != 0) {
    print_error("%s reason: \"%s\" != \"%s\"\n", bw_event_type_name(type),
                e->reason, reason);
    _fail(file, line);
  }
}

/* Asserts the type and (unless NULL) the exact reason of an event. */
#define assert_event(e, type, reason) \
  bwt__event_is((e), (type), (reason), __FILE__, __LINE__)

static inline const bwt_field_t *bwt__field(const bwt_event_t *e, size_t idx,
                                            const char *key,
                                            bw_field_type_t type,
                                            const char *file, int line) {
  const bwt_field_t *f;
  if (idx >= e->field_count || idx >= BWT_MAX_FIELDS) {
    print_error("%s: field #%zu (\"%s\") requested, event has %zu fields\n",
                bw_event_type_name(e->type), idx, key, e->field_count);
    _fail(file, line);
    return NULL;
  }
  f = &e->fields[idx];
  if (strcmp(f->key, key) != 0 || f->type != type) {
    print_error(
        "%s: field #%zu is \"%s\" (type %d), expected \"%s\" (type "
        "%d)\n",
        bw_event_type_name(e->type), idx, f->key, (int)f->type, key, (int)type);
    _fail(file, line);
  }
  return f;
}

static inline void bwt__field_int(const bwt_event_t *e, size_t idx,
                                  const char *key, int64_t v, const char *file,
                                  int line) {
  const bwt_field_t *f = bwt__field(e, idx, key, BW_FIELD_INT, file, line);
  if (f->i != v) {
    print_error("%s.%s: %" PRId64 " != %" PRId64 "\n",
                bw_event_type_name(e->type), key, f->i, v);
    _fail(file, line);
  }
}

static inline void bwt__field_uint(const bwt_event_t *e, size_t idx,
                                   const char *key, uint64_t v,
                                   const char *file, int line) {
  const bwt_field_t *f = bwt__field(e, idx, key, BW_FIELD_UINT, file, line);
  if (f->u != v) {
    print_error("%s.%s: %" PRIu64 " != %" PRIu64 "\n",
                bw_event_type_name(e->type), key, f->u, v);
    _fail(file, line);
  }
}

static inline void bwt__field_str(const bwt_event_t *e, size_t idx,
                                  const char *key, const char *v,
                                  const char *file, int line) {
  const bwt_field_t *f = bwt__field(e, idx, key, BW_FIELD_STR, file, line);
  if (strcmp(f->s, v) != 0) {
    print_error("%s.%s: \"%s\" != \"%s\"\n", bw_event_type_name(e->type), key,
                f->s, v);
    _fail(file, line);
  }
}

/* Asserts field #idx of an event: its key, its type and its value. */
#define assert_field_int(e, idx, key, v) \
  bwt__field_int((e), (idx), (key), (int64_t)(v), __FILE__, __LINE__)
#define assert_field_uint(e, idx, key, v) \
  bwt__field_uint((e), (idx), (key), (uint64_t)(v), __FILE__, __LINE__)
#define assert_field_str(e, idx, key, v) \
  bwt__field_str((e), (idx), (key), (v), __FILE__, __LINE__)

/* ---- test environment
 * -------------------------------------------------------- */

/* A start reading that is a whole number of seconds (so time-window buckets of
 * any whole number of milliseconds dividing 1000 s start exactly there), far
 * from 0 so "time 0" special cases cannot hide bugs. */
#define BWT_T0_NS (INT64_C(1000) * BW_NS_PER_S)
/* 2026-08-07T14:12:03.418Z */
#define BWT_WALL0_NS INT64_C(1786111923418000000)

typedef struct bwt_env_s {
  bw_clock_t *clock; /* manual, starts at BWT_T0_NS */
  bw_clock_t *wall;  /* manual, starts at BWT_WALL0_NS */
  bwt_recorder_t *rec;
  bw_sink_t *sink; /* callback sink into rec */
  bw_breaker_t *b; /* the breaker under test (freed by teardown) */
} bwt_env_t;

static inline int bwt_setup(void **state) {
  bw_error_t err;
  bwt_env_t *e = calloc(1, sizeof(*e));
  if (e == NULL) return -1;
  e->clock = bw_clock_manual_new(BWT_T0_NS);
  e->wall = bw_clock_manual_new(BWT_WALL0_NS);
  e->rec = calloc(1, sizeof(*e->rec));
  if (e->clock == NULL || e->wall == NULL || e->rec == NULL) return -1;
  e->sink = bw_sink_callback_new(bwt_record_cb, e->rec, &err);
  if (e->sink == NULL) return -1;
  *state = e;
  return 0;
}

static inline int bwt_teardown(void **state) {
  bwt_env_t *e = *state;
  bw_context_set(NULL); /* a failed test must not leak its context */
  if (e == NULL) return 0;
  bw_breaker_free(e->b);
  bw_sink_free(e->sink);
  bw_clock_free(e->clock);
  bw_clock_free(e->wall);
  free(e->rec);
  free(e);
  *state = NULL;
  return 0;
}

/* Defaults, plus the environment's clocks and sink and the given name. */
static inline void bwt_config(const bwt_env_t *e, bw_breaker_config_t *cfg,
                              const char *name) {
  bw_breaker_config_init(cfg);
  cfg->name = name;
  cfg->clock = e->clock;
  cfg->wall_clock = e->wall;
  cfg->sink = e->sink;
}

/* Creates the breaker under test (asserting success). */
static inline bw_breaker_t *bwt__breaker(bwt_env_t *e,
                                         const bw_breaker_config_t *cfg,
                                         const char *file, int line) {
  bw_error_t err;
  memset(&err, 0, sizeof(err));
  bw_breaker_free(e->b);
  e->b = bw_breaker_new(cfg, &err);
  if (e->b == NULL) {
    print_error("bw_breaker_new failed: %s [%s] %s\n", bw_err_name(err.code),
                err.field, err.message);
    _fail(file, line);
  }
  return e->b;
}
#define bwt_breaker(e, cfg) bwt__breaker((e), (cfg), __FILE__, __LINE__)

/* Moves both the monotonic and the wall clock forward. */
static inline void bwt_advance_ns(bwt_env_t *e, int64_t ns) {
  bw_clock_manual_advance(e->clock, ns);
  bw_clock_manual_advance(e->wall, ns);
}
static inline void bwt_advance_ms(bwt_env_t *e, int64_t ms) {
  bwt_advance_ns(e, ms * BW_NS_PER_MS);
}
static inline int64_t bwt_now(const bwt_env_t *e) {
  return bw_clock_now(e->clock);
}

static inline bw_breaker_stats_t bwt_stats(const bw_breaker_t *b) {
  bw_breaker_stats_t s;
  memset(&s, 0xA5, sizeof(s));
  bw_breaker_stats(b, &s);
  return s;
}

/* Acquires, asserting admission. */
static inline bw_permit_t bwt__acquire(bw_breaker_t *b, const char *file,
                                       int line) {
  bw_permit_t p;
  int rc;
  memset(&p, 0, sizeof(p));
  rc = bw_breaker_acquire(b, &p);
  if (rc != BW_OK) {
    print_error("bw_breaker_acquire: %s, expected OK (state %s)\n",
                bw_err_name(rc), bw_state_name(bw_breaker_state(b)));
    _fail(file, line);
  }
  return p;
}
#define bwt_acquire(b) bwt__acquire((b), __FILE__, __LINE__)

/* Asserts that an acquire is rejected (BW_E_OPEN). */
static inline void bwt__rejected(bw_breaker_t *b, const char *file, int line) {
  bw_permit_t p;
  int rc;
  memset(&p, 0, sizeof(p));
  rc = bw_breaker_acquire(b, &p);
  if (rc != BW_E_OPEN) {
    print_error("bw_breaker_acquire: %s, expected E_OPEN (state %s)\n",
                bw_err_name(rc), bw_state_name(bw_breaker_state(b)));
    _fail(file, line);
  }
}
#define assert_rejected(b) bwt__rejected((b), __FILE__, __LINE__)

/* One whole call: acquire (must be admitted), release with `o` (must return
 * BW_OK). */
static inline void bwt__call(bw_breaker_t *b, bw_outcome_t o, const char *file,
                             int line) {
  bw_permit_t p = bwt__acquire(b, file, line);
  int rc = bw_breaker_release(b, &p, o);
  if (rc != BW_OK) {
    print_error("bw_breaker_release: %s, expected OK\n", bw_err_name(rc));
    _fail(file, line);
  }
}
#define bwt_call(b, o) bwt__call((b), (o), __FILE__, __LINE__)

static inline void bwt__calls(bw_breaker_t *b, bw_outcome_t o, int n,
                              const char *file, int line) {
  int i;
  for (i = 0; i < n; i++)
    bwt__call(b, o, file, line);
}
#define bwt_calls(b, o, n) bwt__calls((b), (o), (n), __FILE__, __LINE__)

#endif /* BW_TEST_H */

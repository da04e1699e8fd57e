/* Events and sinks: callback, JSON lines, tee. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

typedef enum { BW__SINK_CB, BW__SINK_JSON, BW__SINK_TEE } bw__sink_kind_t;

struct bw_sink_s {
  bw__sink_kind_t kind;
  bw_event_cb cb;
  void *userdata;
  FILE *fp;
  pthread_mutex_t lock; /* JSON: one line at a time */
  bw_sink_t *a, *b;
};

const char *bw_event_type_name(bw_event_type_t type) {
  switch (type) {
#define BW__XX(name, wire, kind) \
  case BW_EV_##name:             \
    return wire;
    BW_EVENT_MAP(BW__XX)
#undef BW__XX
  default:
    return "unknown";
  }
}

const char *bw_event_type_kind(bw_event_type_t type) {
  switch (type) {
#define BW__XX(name, wire, kind) \
  case BW_EV_##name:             \
    return kind;
    BW_EVENT_MAP(BW__XX)
#undef BW__XX
  default:
    return "unknown";
  }
}

static bw_sink_t *bw__sink_alloc(bw__sink_kind_t kind, bw_error_t *err) {
  bw_sink_t *s = bw_calloc(1, sizeof(*s));
  if (s == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory creating a sink");
    return NULL;
  }
  s->kind = kind;
  bw_error_clear(err);
  return s;
}

bw_sink_t *bw_sink_callback_new(bw_event_cb cb, void *userdata,
                                bw_error_t *err) {
  bw_sink_t *s;
  if (cb == NULL) {
    bw_error_set(err, BW_E_INVAL, "cb", "cb must not be NULL");
    return NULL;
  }
  s = bw__sink_alloc(BW__SINK_CB, err);
  if (s != NULL) {
    s->cb = cb;
    s->userdata = userdata;
  }
  return s;
}

bw_sink_t *bw_sink_json_new(FILE *fp, bw_error_t *err) {
  bw_sink_t *s;
  if (fp == NULL) {
    bw_error_set(err, BW_E_INVAL, "fp", "fp must not be NULL");
    return NULL;
  }
  s = bw__sink_alloc(BW__SINK_JSON, err);
  if (s != NULL) {
    s->fp = fp;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
      bw_free(s);
      bw_error_set(err, BW_E_NOMEM, "", "cannot create the sink's mutex");
      return NULL;
    }
  }
  return s;
}

bw_sink_t *bw_sink_tee_new(bw_sink_t *a, bw_sink_t *b, bw_error_t *err) {
  bw_sink_t *s;
  if (a == NULL || b == NULL) {
    bw_error_set(err, BW_E_INVAL, a == NULL ? "a" : "b", "%s must not be NULL",
                 a == NULL ? "a" : "b");
    return NULL;
  }
  s = bw__sink_alloc(BW__SINK_TEE, err);
  if (s != NULL) {
    s->a = a;
    s->b = b;
  }
  return s;
}

void bw_sink_free(bw_sink_t *s) {
  if (s == NULL) return;
  if (s->kind == BW__SINK_JSON) pthread_mutex_destroy(&s->lock);
  bw_free(s);
}

/* Lines longer than this are formatted into a heap buffer instead. */
#define BW__LINE_STACK 1024

void bw_sink_emit(bw_sink_t *s, const bw_event_t *ev) {
  if (s == NULL || ev == NULL) return;
  switch (s->kind) {
  case BW__SINK_CB:
    s->cb(ev, s->userdata);
    break;
  case BW__SINK_TEE:
    bw_sink_emit(s->a, ev);
    bw_sink_emit(s->b, ev);
    break;
  case BW__SINK_JSON: {
    char stack[BW__LINE_STACK];
    char *line = stack;
    size_t n = bw_event_format_json(ev, stack, sizeof(stack));
    if (n >= sizeof(stack)) {
      line = bw_malloc(n + 1);
      if (line == NULL) {
        /* Out of memory: write the cut line rather than nothing; it still
         * names the event. */
        line = stack;
        n = sizeof(stack) - 1;
        stack[n - 1] = '\n';
      } else {
        bw_event_format_json(ev, line, n + 1);
      }
    }
    pthread_mutex_lock(&s->lock);
    fwrite(line, 1, n, s->fp);
    fflush(s->fp);
    pthread_mutex_unlock(&s->lock);
    if (line != stack) bw_free(line);
    break;
  }
  }
}

/* ---- JSON formatting: an appender that counts what it could not fit ---- */
typedef struct {
  char *buf;
  size_t size;
  size_t len; /* length needed so far */
} bw__out_t;

static void bw__put(bw__out_t *o, const char *s, size_t n) {
  if (o->len < o->size) {
    size_t room = o->size - o->len;
    memcpy(o->buf + o->len, s, n < room ? n : room);
  }
  o->len += n;
}

static void bw__puts(bw__out_t *o, const char *s) {
  bw__put(o, s, strlen(s));
}

/* The length of the well-formed UTF-8 sequence at p (1 to 4), or 0 when
 * the bytes there are not one (a stray continuation byte, a truncated or
 * overlong sequence, a surrogate, or a code point above U+10FFFF). */
static size_t bw__utf8_len(const unsigned char *p) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return (p[1] & 0xc0) == 0x80 ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
                   (p[3] & 0xc0) == 0x80
               ? 4
               : 0;
  }
  return 0;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * and every byte that is not part of well-formed UTF-8 replaced by U+FFFD,
 * so that every line is valid JSON whatever a name or context holds. */
static void bw__put_json_str(bw__out_t *o, const char *s) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  bw__put(o, "\"", 1);
  while (*p) {
    char esc[7];
    size_t n;
    switch (*p) {
    case '"':
      bw__put(o, "\\\"", 2);
      p++;
      continue;
    case '\\':
      bw__put(o, "\\\\", 2);
      p++;
      continue;
    case '\n':
      bw__put(o, "\\n", 2);
      p++;
      continue;
    case '\r':
      bw__put(o, "\\r", 2);
      p++;
      continue;
    case '\t':
      bw__put(o, "\\t", 2);
      p++;
      continue;
    default:
      break;
    }
    if (*p < 0x20 || *p == 0x7f) {
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[*p >> 4];
      esc[5] = hex[*p & 15];
      bw__put(o, esc, 6);
      p++;
      continue;
    }
    n = bw__utf8_len(p);
    if (n == 0) {
      bw__put(o, "\\ufffd", 6);
      p++;
    } else {
      bw__put(o, (const char *)p, n);
      p += n;
    }
  }
  bw__put(o, "\"", 1);
}

static void bw__put_key(bw__out_t *o, const char *key) {
  bw__put(o, ",", 1);
  bw__put_json_str(o, key);
  bw__put(o, ":", 1);
}

static void bw__put_field(bw__out_t *o, const bw_field_t *f) {
  char num[40];
  bw__put_key(o, f->key);
  switch (f->type) {
  case BW_FIELD_INT:
    snprintf(num, sizeof(num), "%lld", (long long)f->v.i);
    bw__puts(o, num);
    break;
  case BW_FIELD_UINT:
    snprintf(num, sizeof(num), "%llu", (unsigned long long)f->v.u);
    bw__puts(o, num);
    break;
  case BW_FIELD_DOUBLE:
    if (isfinite(f->v.d)) {
      snprintf(num, sizeof(num), "%.17g", f->v.d);
      /* Prefer the shortest form that reads back to the same double. */
      for (int prec = 1; prec < 17; prec++) {
        char tmp[40];
        snprintf(tmp, sizeof(tmp), "%.*g", prec, f->v.d);
        if (strtod(tmp, NULL) == f->v.d) {
          memcpy(num, tmp, sizeof(tmp));
          break;
        }
      }
      bw__puts(o, num);
    } else {
      bw__puts(o, "null");
    }
    break;
  case BW_FIELD_STR:
    bw__put_json_str(o, f->v.s);
    break;
  case BW_FIELD_BOOL:
    bw__puts(o, f->v.b ? "true" : "false");
    break;
  default:
    bw__puts(o, "null");
  }
}

char *bw_format_iso8601_ms(int64_t wall_ns, char *buf, size_t size) {
  struct tm tm;
  time_t secs;
  int64_t ms;
  if (size == 0) return buf;
  /* Floor division so times before the epoch format correctly too: the
   * remainder is always in [0, 1 s). */
  {
    int64_t s = wall_ns / BW_NS_PER_S, rem = wall_ns % BW_NS_PER_S;
    if (rem < 0) {
      s -= 1;
      rem += BW_NS_PER_S;
    }
    secs = (time_t)s;
    ms = rem / BW_NS_PER_MS;
  }
  if (gmtime_r(&secs, &tm) == NULL) {
    snprintf(buf, size, "1970-01-01T00:00:00.000Z");
    return buf;
  }
  /* A buffer under 25 bytes (event.h) gets a truncated string. */
  if (snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
               tm.tm_min, tm.tm_sec, (int)ms) < 0)
    buf[0] = '\0';
  return buf;
}

/* Keys of the line itself. A field with one of these keys (no emitter in
 * breakwater uses one) is written as "<key>_field", so it can neither
 * duplicate nor overwrite them. */
static bool bw__reserved_key(const char *k) {
  static const char *const keys[] = {"event",  "ts",  "kind",    "name",
                                     "reason", "ctx", "trace_id"};
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    if (k != NULL && strcmp(k, keys[i]) == 0) return true;
  return false;
}

size_t bw_event_format_json(const bw_event_t *ev, char *buf, size_t size) {
  bw__out_t o = {buf, size, 0};
  char ts[40];
  if (ev == NULL) { /* the NULL policy: nothing to format */
    if (buf != NULL && size > 0) buf[0] = '\0';
    return 0;
  }
  bw__puts(&o, "{\"event\":");
  bw__put_json_str(&o, bw_event_type_name(ev->type));
  bw__put_key(&o, "ts");
  bw__put_json_str(&o, bw_format_iso8601_ms(ev->wall_ns, ts, sizeof(ts)));
  bw__put_key(&o, "kind");
  bw__put_json_str(&o, bw_event_type_kind(ev->type));
  bw__put_key(&o, "name");
  bw__put_json_str(&o, ev->name);
  bw__put_key(&o, "reason");
  bw__put_json_str(&o, ev->reason);
  for (size_t i = 0; i < ev->field_count; i++) {
    bw_field_t f = ev->fields[i];
    char key[64];
    if (bw__reserved_key(f.key)) {
      snprintf(key, sizeof(key), "%s_field", f.key);
      f.key = key;
    }
    bw__put_field(&o, &f);
  }
  if (bw_trace_is_valid(ev->trace)) { /* the trace this event belongs to */
    char id[33];
    bw_trace_id_hex(ev->trace, id, sizeof(id));
    bw__put_key(&o, "trace_id");
    bw__put_json_str(&o, id);
  }
  if (ev->context != NULL && ev->context->count > 0) {
    bool first = true;
    bw__put_key(&o, "ctx");
    bw__put(&o, "{", 1);
    for (size_t i = 0; i < ev->context->count; i++) {
      const bw_kv_t *kv = &ev->context->items[i];
      if (kv->key == NULL) continue;
      if (!first) bw__put(&o, ",", 1);
      first = false;
      bw__put_json_str(&o, kv->key);
      bw__put(&o, ":", 1);
      bw__put_json_str(&o, kv->value);
    }
    bw__put(&o, "}", 1);
  }
  bw__put(&o, "}\n", 2);
  if (size > 0) buf[o.len < size ? o.len : size - 1] = '\0';
  return o.len;
}

void bw_event_emit(bw_sink_t *sink, const bw_clock_t *wall, int64_t mono_ns,
                   bw_event_type_t type, const char *name, const char *reason,
                   const bw_field_t *fields, size_t nfields,
                   const bw_context_t *ctx) {
  bw_event_t ev;
  if (sink == NULL) return;
  ev.type = type;
  ev.wall_ns = bw__clock_now(wall != NULL ? wall : bw_clock_realtime());
  ev.mono_ns = mono_ns;
  ev.name = name;
  ev.reason = reason ? reason : "";
  ev.fields = fields;
  ev.field_count = nfields;
  ev.context = ctx ? ctx : bw_context_current();
  ev.trace = bw_trace_current();
  bw_sink_emit(sink, &ev);
}

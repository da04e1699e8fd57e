/* breakwater — W3C Trace Context: traceparent / tracestate parsing and
 * formatting, new span ids, and the per-thread current trace (trace.h). */
#include "breakwater/trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static const char bw__hex[] = "0123456789abcdef";

/* The value of a lowercase hex digit, or -1 (upper case is refused: the
 * spec says lowercase, and a sender that writes upper case is broken). */
static int bw__hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* n bytes from 2n lowercase hex digits; false on a bad digit. */
static bool bw__unhex(const char *s, uint8_t *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int hi = bw__hexval(s[2 * i]), lo = bw__hexval(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return true;
}

static void bw__tohex(const uint8_t *in, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = bw__hex[in[i] >> 4];
    out[2 * i + 1] = bw__hex[in[i] & 0xF];
  }
}

static bool bw__all_zero(const uint8_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (b[i] != 0) return false;
  return true;
}

bool bw_trace_is_valid(const bw_trace_t *t) {
  return t != NULL && !bw__all_zero(t->trace_id, sizeof(t->trace_id)) &&
         !bw__all_zero(t->parent_id, sizeof(t->parent_id));
}

static bool bw__ows(char c) {
  return c == ' ' || c == '\t';
}

int bw_traceparent_parse(const char *v, size_t len, bw_trace_t *out) {
  uint8_t version, tid[16], pid[8], flags;
  size_t b = 0, e = len;
  if (v == NULL || out == NULL) return BW_E_INVAL;
  while (b < e && bw__ows(v[b]))
    b++;
  while (e > b && bw__ows(v[e - 1]))
    e--;
  v += b;
  len = e - b;
  if (len < BW_TRACEPARENT_LEN) return BW_E_INVAL;
  /* version "-" trace-id "-" parent-id "-" flags */
  if (v[2] != '-' || v[35] != '-' || v[52] != '-') return BW_E_INVAL;
  if (!bw__unhex(v, &version, 1) || !bw__unhex(v + 3, tid, 16) ||
      !bw__unhex(v + 36, pid, 8) || !bw__unhex(v + 53, &flags, 1))
    return BW_E_INVAL;
  if (version == 0xFF) return BW_E_INVAL;
  /* Version 00 is exactly 55 bytes; a later one may append "-..." fields
   * this version does not know. */
  if (version == 0 ? len != BW_TRACEPARENT_LEN
                   : len > BW_TRACEPARENT_LEN && v[BW_TRACEPARENT_LEN] != '-')
    return BW_E_INVAL;
  if (bw__all_zero(tid, 16) || bw__all_zero(pid, 8)) return BW_E_INVAL;
  memcpy(out->trace_id, tid, 16);
  memcpy(out->parent_id, pid, 8);
  out->flags = flags;
  out->tracestate[0] = '\0';
  return BW_OK;
}

int bw_traceparent_format(const bw_trace_t *t, char *buf, size_t size) {
  if (buf != NULL && size > 0) buf[0] = '\0';
  if (buf == NULL || !bw_trace_is_valid(t)) return BW_E_INVAL;
  if (size < BW_TRACEPARENT_LEN + 1) return BW_E_RANGE;
  memcpy(buf, "00-", 3);
  bw__tohex(t->trace_id, 16, buf + 3);
  buf[35] = '-';
  bw__tohex(t->parent_id, 8, buf + 36);
  buf[52] = '-';
  bw__tohex(&t->flags, 1, buf + 53);
  buf[BW_TRACEPARENT_LEN] = '\0';
  return BW_TRACEPARENT_LEN;
}

/* ---- tracestate ---------------------------------------------------------- */

static bool bw__lcalpha(char c) {
  return c >= 'a' && c <= 'z';
}
static bool bw__digit(char c) {
  return c >= '0' && c <= '9';
}
static bool bw__keychar(char c) {
  return bw__lcalpha(c) || bw__digit(c) || c == '_' || c == '-' || c == '*' ||
         c == '/';
}
/* nblk-chr: printable ASCII but ',' and '='. */
static bool bw__nblk(char c) {
  return c >= 0x21 && c <= 0x7E && c != ',' && c != '=';
}

/* A key: simple-key or tenant-id@system-id. */
static bool bw__key_ok(const char *k, size_t n) {
  const char *at = memchr(k, '@', n);
  if (at == NULL) {
    if (n < 1 || n > 256 || !bw__lcalpha(k[0])) return false;
    for (size_t i = 1; i < n; i++)
      if (!bw__keychar(k[i])) return false;
    return true;
  }
  {
    size_t tn = (size_t)(at - k), sn = n - tn - 1;
    const char *s = at + 1;
    if (tn < 1 || tn > 241 || !(bw__lcalpha(k[0]) || bw__digit(k[0])))
      return false;
    for (size_t i = 1; i < tn; i++)
      if (!bw__keychar(k[i])) return false;
    if (sn < 1 || sn > 14 || !bw__lcalpha(s[0])) return false;
    for (size_t i = 1; i < sn; i++)
      if (!bw__keychar(s[i])) return false; /* a second '@' fails here */
  }
  return true;
}

static bool bw__value_ok(const char *v, size_t n) {
  if (n < 1 || n > 256 || !bw__nblk(v[n - 1])) return false;
  for (size_t i = 0; i + 1 < n; i++)
    if (v[i] != ' ' && !bw__nblk(v[i])) return false;
  return true;
}

#define BW__TRACESTATE_MEMBERS 32

int bw_tracestate_check(const char *v, size_t len) {
  struct {
    const char *k;
    size_t n;
  } keys[BW__TRACESTATE_MEMBERS];
  size_t nkeys = 0, pos = 0;
  if (len == 0) return BW_OK;
  if (v == NULL || len > BW_TRACESTATE_MAX) return BW_E_INVAL;
  for (;;) {
    size_t end = pos, b, e;
    const char *eq;
    while (end < len && v[end] != ',')
      end++;
    b = pos;
    e = end;
    while (b < e && bw__ows(v[b]))
      b++;
    while (e > b && bw__ows(v[e - 1]))
      e--;
    if (e > b) { /* a member; an empty one is allowed and skipped */
      eq = memchr(v + b, '=', e - b);
      if (eq == NULL) return BW_E_INVAL;
      {
        size_t kn = (size_t)(eq - (v + b));
        if (!bw__key_ok(v + b, kn) || !bw__value_ok(eq + 1, e - b - kn - 1))
          return BW_E_INVAL;
        if (nkeys == BW__TRACESTATE_MEMBERS) return BW_E_INVAL;
        for (size_t i = 0; i < nkeys; i++)
          if (keys[i].n == kn && memcmp(keys[i].k, v + b, kn) == 0)
            return BW_E_INVAL;
        keys[nkeys].k = v + b;
        keys[nkeys].n = kn;
        nkeys++;
      }
    }
    if (end == len) break;
    pos = end + 1;
  }
  return BW_OK;
}

int bw_trace_from_headers(const char *tp, size_t tp_len, const char *ts,
                          size_t ts_len, bw_trace_t *out) {
  bw_trace_t t;
  int rc;
  if (out == NULL) return BW_E_INVAL;
  if (tp == NULL) return BW_E_NOTFOUND;
  rc = bw_traceparent_parse(tp, tp_len, &t);
  if (rc != BW_OK) return rc;
  if (ts != NULL) {
    /* Trim the surrounding whitespace the header may carry; keep it only
     * when the whole list is valid. */
    while (ts_len > 0 && bw__ows(ts[0])) {
      ts++;
      ts_len--;
    }
    while (ts_len > 0 && bw__ows(ts[ts_len - 1]))
      ts_len--;
    if (bw_tracestate_check(ts, ts_len) == BW_OK) {
      memcpy(t.tracestate, ts, ts_len);
      t.tracestate[ts_len] = '\0';
    }
  }
  *out = t;
  return BW_OK;
}

/* ---- new ids ------------------------------------------------------------- */

/* The per-thread generator for callers that pass no rng: seeded once from
 * the OS, and again after a fork (a fork handler bumps a generation), so
 * that two forked workers never hand out the same span ids. */
static _Thread_local bw_rand_t bw__trace_rng;
static _Thread_local unsigned bw__trace_rng_gen = 0; /* 0: never seeded */
static atomic_uint bw__trace_fork_gen = 1;
static pthread_once_t bw__trace_atfork_once = PTHREAD_ONCE_INIT;

static void bw__trace_after_fork(void) {
  atomic_fetch_add_explicit(&bw__trace_fork_gen, 1, memory_order_relaxed);
}

static void bw__trace_register_atfork(void) {
  (void)pthread_atfork(NULL, NULL, bw__trace_after_fork);
}

static bw_rand_t *bw__thread_rng(void) {
  unsigned gen;
  pthread_once(&bw__trace_atfork_once, bw__trace_register_atfork);
  gen = atomic_load_explicit(&bw__trace_fork_gen, memory_order_relaxed);
  if (bw__trace_rng_gen != gen) {
    bw_rand_seed(&bw__trace_rng, bw_rand_os_seed());
    bw__trace_rng_gen = gen;
  }
  return &bw__trace_rng;
}

/* n random bytes, not all zero (redrawn in the 2^-64 case). */
static void bw__random_id(bw_rand_t *rng, uint8_t *out, size_t n) {
  do {
    for (size_t i = 0; i < n; i += 8) {
      uint64_t x = bw_rand_next(rng);
      for (size_t j = 0; j < 8 && i + j < n; j++)
        out[i + j] = (uint8_t)(x >> (8 * j));
    }
  } while (bw__all_zero(out, n));
}

int bw_trace_start(bw_rand_t *rng, uint8_t flags, bw_trace_t *out) {
  if (out == NULL) return BW_E_INVAL;
  if (rng == NULL) rng = bw__thread_rng();
  bw__random_id(rng, out->trace_id, sizeof(out->trace_id));
  bw__random_id(rng, out->parent_id, sizeof(out->parent_id));
  out->flags = flags;
  out->tracestate[0] = '\0';
  return BW_OK;
}

int bw_trace_child(const bw_trace_t *parent, bw_rand_t *rng,
                   bw_trace_t *child) {
  uint8_t old[8], id[8];
  if (child == NULL || !bw_trace_is_valid(parent)) return BW_E_INVAL;
  if (rng == NULL) rng = bw__thread_rng();
  memcpy(old, parent->parent_id, sizeof(old));
  do {
    bw__random_id(rng, id, sizeof(id));
  } while (memcmp(id, old, sizeof(id)) == 0);
  if (child != parent) *child = *parent;
  memcpy(child->parent_id, id, sizeof(id));
  return BW_OK;
}

int bw_trace_id_hex(const bw_trace_t *t, char *buf, size_t size) {
  if (buf != NULL && size > 0) buf[0] = '\0';
  if (t == NULL || buf == NULL) return BW_E_INVAL;
  if (size < 33) return BW_E_RANGE;
  bw__tohex(t->trace_id, 16, buf);
  buf[32] = '\0';
  return 32;
}

/* ---- the current trace ----------------------------------------------------
 */

static _Thread_local const bw_trace_t *bw__trace_cur = NULL;

const bw_trace_t *bw_trace_set(const bw_trace_t *t) {
  const bw_trace_t *prev = bw__trace_cur;
  bw__trace_cur = t;
  return prev;
}

const bw_trace_t *bw_trace_current(void) {
  return bw__trace_cur;
}

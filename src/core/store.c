/* The store interface (store.h), whatever the backend: the configurations
 * (defaults, validation, the queue guard's levels), the argument checks that
 * every backend can rely on before its vtable is called, the helpers that
 * free what a backend handed out, and the idempotency key builder. The
 * in-memory backends are in store_mem.c; parking and the reprocessor, which
 * use a queue only through this interface, are in park.c. */
#include <stdio.h>
#include <string.h>

#include "breakwater/store.h"
#include "internal.h"

/* The longest time a store accepts (a year), so that now + ms * 1e6 never
 * overflows. */
#define BW__STORE_MAX_MS (INT64_C(86400000) * 366)

/* ==== configuration ====================================================== */

void bw_queue_store_config_init(bw_queue_store_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "queue";
  cfg->max_size = 10000;
  cfg->warn_threshold = 0.7;
  cfg->warn_rearm_threshold = 0.6;
  cfg->max_deliveries = 5;
  cfg->dlq_max = 10000;
}

int bw_queue_store_config_validate(const bw_queue_store_config_t *c,
                                   bw_error_t *err) {
  if (c == NULL) return bw_error_set(err, BW_E_INVAL, "", "config is NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  if (c->max_size < 1)
    return bw_error_set(err, BW_E_INVAL, "max_size",
                        "max_size must be >= 1 (got 0)");
  if (!(c->warn_threshold > 0.0 && c->warn_threshold <= 1.0))
    return bw_error_set(err, BW_E_INVAL, "warn_threshold",
                        "warn_threshold must be in (0, 1] (got %g)",
                        c->warn_threshold);
  if (!(c->warn_rearm_threshold >= 0.0 &&
        c->warn_rearm_threshold < c->warn_threshold))
    return bw_error_set(
        err, BW_E_INVAL, "warn_rearm_threshold",
        "warn_rearm_threshold must be in [0, warn_threshold) (got %g, "
        "warn_threshold %g)",
        c->warn_rearm_threshold, c->warn_threshold);
  if (c->max_deliveries < 1)
    return bw_error_set(err, BW_E_INVAL, "max_deliveries",
                        "max_deliveries must be >= 1 (got 0)");
  if (c->dlq_max < 1)
    return bw_error_set(err, BW_E_INVAL, "dlq_max",
                        "dlq_max must be >= 1 (got 0)");
  bw_error_clear(err);
  return BW_OK;
}

static uint64_t ceil_ratio(double r, uint32_t max) {
  double v = r * (double)max - 1e-9;
  uint64_t u;
  if (v <= 0) return 0;
  u = (uint64_t)v;
  if ((double)u < v) u++;
  return u;
}

void bw_queue_store_config_levels(const bw_queue_store_config_t *cfg,
                                  uint64_t *warn_at, uint64_t *rearm_below) {
  uint64_t w, r;
  if (cfg == NULL) return; /* the NULL policy: outputs untouched */
  w = ceil_ratio(cfg->warn_threshold, cfg->max_size);
  r = ceil_ratio(cfg->warn_rearm_threshold, cfg->max_size);
  if (w < 1) w = 1;
  if (r > w) r = w;
  if (warn_at) *warn_at = w;
  if (rearm_below) *rearm_below = r;
}

void bw_idem_config_init(bw_idem_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "idempotency";
  cfg->lease_ms = 30000;
  cfg->ttl_ms = 86400000;
  cfg->max_keys = 100000;
}

int bw_idem_config_validate(const bw_idem_config_t *c, bw_error_t *err) {
  if (c == NULL) return bw_error_set(err, BW_E_INVAL, "", "config is NULL");
  if (bw_name_check(c->name, "name", err) != BW_OK) return BW_E_INVAL;
  /* Capped so now + ms * 1e6 cannot overflow: a year is "forever" here. */
  if (c->lease_ms < 1 || c->lease_ms > BW__STORE_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "lease_ms",
                        "lease_ms must be in [1, %lld] (got %lld)",
                        (long long)BW__STORE_MAX_MS, (long long)c->lease_ms);
  if (c->ttl_ms < 1 || c->ttl_ms > BW__STORE_MAX_MS)
    return bw_error_set(err, BW_E_INVAL, "ttl_ms",
                        "ttl_ms must be in [1, %lld] (got %lld)",
                        (long long)BW__STORE_MAX_MS, (long long)c->ttl_ms);
  if (c->max_keys < 1)
    return bw_error_set(err, BW_E_INVAL, "max_keys",
                        "max_keys must be >= 1 (got 0)");
  bw_error_clear(err);
  return BW_OK;
}

void *bw_store_malloc(size_t size) {
  return bw_malloc(size ? size : 1);
}

/* ==== queue interface ==================================================== */

static int check_blob(const bw_blob_t *b) {
  if (b->len > BW_STORE_PAYLOAD_MAX) return BW_E_INVAL;
  if (b->data == NULL && b->len > 0) return BW_E_INVAL;
  return BW_OK;
}

int bw_queue_store_enqueue(bw_queue_store_t *q, const void *data, size_t len,
                           uint64_t *id) {
  bw_blob_t b;
  uint64_t tmp = 0;
  int rc;
  b.data = data;
  b.len = len;
  if (q == NULL || check_blob(&b) != BW_OK) return BW_E_INVAL;
  rc = q->vt->enqueue(q, &b, 1, &tmp, NULL);
  if (id) *id = tmp;
  return rc;
}

int bw_queue_store_enqueue_batch(bw_queue_store_t *q, const bw_blob_t *items,
                                 size_t n, uint64_t *ids, size_t *accepted) {
  size_t i;
  if (accepted) *accepted = 0;
  if (q == NULL || (items == NULL && n > 0)) return BW_E_INVAL;
  for (i = 0; i < n; i++)
    if (check_blob(&items[i]) != BW_OK) return BW_E_INVAL;
  if (n == 0) return BW_OK;
  return q->vt->enqueue(q, items, n, ids, accepted);
}

int bw_queue_store_claim(bw_queue_store_t *q, size_t max, int64_t visibility_ms,
                         bw_stored_item_t *out, size_t *n) {
  if (n) *n = 0;
  if (q == NULL || out == NULL || n == NULL || max == 0 || visibility_ms < 1 ||
      visibility_ms > BW__STORE_MAX_MS)
    return BW_E_INVAL;
  return q->vt->claim(q, max, visibility_ms, out, n);
}

int bw_queue_store_ack(bw_queue_store_t *q, uint64_t id, uint64_t receipt) {
  if (q == NULL) return BW_E_INVAL;
  return q->vt->ack(q, id, receipt);
}

int bw_queue_store_nack(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                        int64_t delay_ms) {
  if (q == NULL || delay_ms < 0 || delay_ms > BW__STORE_MAX_MS)
    return BW_E_INVAL;
  return q->vt->nack(q, id, receipt, delay_ms);
}

int bw_queue_store_reject(bw_queue_store_t *q, uint64_t id, uint64_t receipt,
                          const char *error) {
  if (q == NULL) return BW_E_INVAL;
  return q->vt->reject(q, id, receipt, error ? error : "");
}

int bw_queue_store_dlq_list(bw_queue_store_t *q, uint64_t after_id, size_t max,
                            bw_dlq_record_t *out, size_t *n) {
  if (n) *n = 0;
  if (q == NULL || out == NULL || n == NULL) return BW_E_INVAL;
  if (max == 0) return BW_OK;
  return q->vt->dlq_list(q, after_id, max, out, n);
}

int bw_queue_store_dlq_requeue(bw_queue_store_t *q, uint64_t dlq_id,
                               uint64_t *new_id) {
  uint64_t tmp = 0;
  int rc;
  if (q == NULL) return BW_E_INVAL;
  rc = q->vt->dlq_requeue(q, dlq_id, &tmp);
  if (new_id) *new_id = tmp;
  return rc;
}

int bw_queue_store_dlq_delete(bw_queue_store_t *q, uint64_t dlq_id) {
  if (q == NULL) return BW_E_INVAL;
  return q->vt->dlq_delete(q, dlq_id);
}

int bw_queue_store_stats(bw_queue_store_t *q, bw_queue_store_stats_t *out) {
  if (q == NULL || out == NULL) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  return q->vt->stats(q, out);
}

const char *bw_queue_store_name(const bw_queue_store_t *q) {
  return q ? q->vt->name(q) : "";
}

const char *bw_queue_store_kind(const bw_queue_store_t *q) {
  return q ? q->vt->kind : "";
}

void bw_queue_store_free(bw_queue_store_t *q) {
  if (q) q->vt->free(q);
}

void bw_stored_items_clear(bw_stored_item_t *items, size_t n) {
  size_t i;
  if (items == NULL) return;
  for (i = 0; i < n; i++) {
    bw_free(items[i].payload);
    memset(&items[i], 0, sizeof(items[i]));
  }
}

void bw_dlq_records_clear(bw_dlq_record_t *recs, size_t n) {
  size_t i;
  if (recs == NULL) return;
  for (i = 0; i < n; i++) {
    bw_free(recs[i].payload);
    memset(&recs[i], 0, sizeof(recs[i]));
  }
}

/* ==== idempotency interface ============================================== */

const char *bw_idem_state_name(bw_idem_state_t s) {
  switch (s) {
  case BW_IDEM_NEW:
    return "new";
  case BW_IDEM_IN_PROGRESS:
    return "in_progress";
  case BW_IDEM_DONE:
    return "done";
  }
  return "unknown";
}

static int check_key(const char *key) {
  size_t n;
  if (key == NULL) return BW_E_INVAL;
  n = strlen(key);
  return (n == 0 || n > BW_IDEM_KEY_MAX) ? BW_E_INVAL : BW_OK;
}

int bw_idem_begin(bw_idem_store_t *s, const char *key, bw_idem_record_t *out) {
  if (out) memset(out, 0, sizeof(*out));
  if (s == NULL || out == NULL || check_key(key) != BW_OK) return BW_E_INVAL;
  return s->vt->begin(s, key, out);
}

int bw_idem_complete(bw_idem_store_t *s, const char *key, uint64_t token,
                     int status, const void *result, size_t len) {
  if (s == NULL || check_key(key) != BW_OK || (result == NULL && len > 0) ||
      len > BW_STORE_PAYLOAD_MAX)
    return BW_E_INVAL;
  return s->vt->complete(s, key, token, status, result, len);
}

int bw_idem_abandon(bw_idem_store_t *s, const char *key, uint64_t token) {
  if (s == NULL || check_key(key) != BW_OK) return BW_E_INVAL;
  return s->vt->abandon(s, key, token);
}

int bw_idem_stats(bw_idem_store_t *s, bw_idem_stats_t *out) {
  if (s == NULL || out == NULL) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  return s->vt->stats(s, out);
}

const char *bw_idem_store_name(const bw_idem_store_t *s) {
  return s ? s->vt->name(s) : "";
}

const char *bw_idem_store_kind(const bw_idem_store_t *s) {
  return s ? s->vt->kind : "";
}

void bw_idem_store_free(bw_idem_store_t *s) {
  if (s) s->vt->free(s);
}

void bw_idem_record_clear(bw_idem_record_t *rec) {
  if (rec == NULL) return;
  bw_free(rec->result);
  memset(rec, 0, sizeof(*rec));
}

/* SipHash-2-4 (Aumasson & Bernstein), 64-bit output. */
#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND       \
  do {                 \
    v0 += v1;          \
    v1 = ROTL(v1, 13); \
    v1 ^= v0;          \
    v0 = ROTL(v0, 32); \
    v2 += v3;          \
    v3 = ROTL(v3, 16); \
    v3 ^= v2;          \
    v0 += v3;          \
    v3 = ROTL(v3, 21); \
    v3 ^= v0;          \
    v2 += v1;          \
    v1 = ROTL(v1, 17); \
    v1 ^= v2;          \
    v2 = ROTL(v2, 32); \
  } while (0)

static uint64_t load64(const unsigned char *p) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static uint64_t siphash24(const unsigned char *in, size_t len, uint64_t k0,
                          uint64_t k1) {
  uint64_t v0 = UINT64_C(0x736f6d6570736575) ^ k0;
  uint64_t v1 = UINT64_C(0x646f72616e646f6d) ^ k1;
  uint64_t v2 = UINT64_C(0x6c7967656e657261) ^ k0;
  uint64_t v3 = UINT64_C(0x7465646279746573) ^ k1;
  uint64_t b = ((uint64_t)len) << 56, m;
  size_t i, left = len & 7, end = len - left;
  unsigned char tail[8] = {0};
  for (i = 0; i < end; i += 8) {
    m = load64(in + i);
    v3 ^= m;
    SIPROUND;
    SIPROUND;
    v0 ^= m;
  }
  memcpy(tail, in + end, left);
  b |= load64(tail);
  v3 ^= b;
  SIPROUND;
  SIPROUND;
  v0 ^= b;
  v2 ^= 0xff;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  return v0 ^ v1 ^ v2 ^ v3;
}

/* Streams the canonical form through a growable buffer. */
typedef struct cbuf_s {
  unsigned char *p;
  size_t len, cap;
  bool oom;
} cbuf_t;

static void cb_put(cbuf_t *b, const void *d, size_t n) {
  if (b->oom) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    unsigned char *np;
    while (cap < b->len + n)
      cap *= 2;
    np = bw_realloc(b->p, cap);
    if (np == NULL) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  memcpy(b->p + b->len, d, n);
  b->len += n;
}

static void cb_str(cbuf_t *b, const char *s) {
  size_t n = strlen(s);
  unsigned char len[8];
  int i;
  for (i = 0; i < 8; i++)
    len[i] = (unsigned char)((uint64_t)n >> (8 * i));
  cb_put(b, len, 8);
  cb_put(b, s, n);
}

int bw_idem_key(char *buf, size_t size, const char *scope,
                const bw_kv_t *fields, size_t count) {
  cbuf_t b;
  size_t i, slen;
  uint64_t h0, h1;
  if (buf == NULL || scope == NULL || (fields == NULL && count > 0))
    return BW_E_INVAL;
  slen = strlen(scope);
  if (slen == 0 || slen > 160) return BW_E_INVAL;
  for (i = 0; i < count; i++)
    if (fields[i].key == NULL || fields[i].value == NULL) return BW_E_INVAL;
  if (size < slen + 34) return BW_E_RANGE;
  memset(&b, 0, sizeof(b));
  cb_str(&b, scope);
  for (i = 0; i < count; i++) {
    cb_str(&b, fields[i].key);
    cb_str(&b, fields[i].value);
  }
  if (b.oom) {
    bw_free(b.p);
    return BW_E_NOMEM;
  }
  h0 = siphash24(b.p, b.len, UINT64_C(0x0706050403020100),
                 UINT64_C(0x0f0e0d0c0b0a0908));
  h1 = siphash24(b.p, b.len, UINT64_C(0x627265616b776174),
                 UINT64_C(0x6572206964656d31));
  bw_free(b.p);
  snprintf(buf, size, "%s:%016llx%016llx", scope, (unsigned long long)h0,
           (unsigned long long)h1);
  return BW_OK;
}

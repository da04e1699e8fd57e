/* The threads driver's blocking run-once helper (threads.h): the
 * idempotency store decides who runs (begin's marker); this loop runs the
 * operation or polls a duplicate until its owner is done. Public API only:
 * allocations go through the library's hooks (bw_store_malloc), so the
 * record is freed by bw_idem_record_clear as any other. */
#include <stdlib.h>
#include <string.h>

#include "breakwater/threads.h"
#include "threads_internal.h"

/* The store's own key rule (bw_idem_begin's), checked before anything
 * else so that a bad call is refused whatever its other arguments. */
static int bw__thr_check_key(const char *key) {
  size_t n;
  if (key == NULL) return BW_E_INVAL;
  n = strlen(key);
  return (n == 0 || n > BW_IDEM_KEY_MAX) ? BW_E_INVAL : BW_OK;
}

/* A NUL-terminated copy of len bytes through the library's allocator. */
static void *bw__thr_copy(const void *data, size_t len) {
  char *p = bw_store_malloc(len + 1);
  if (p == NULL) return NULL;
  if (len) memcpy(p, data, len);
  p[len] = '\0';
  return p;
}

int bw_idem_execute(bw_idem_store_t *s, const char *key, int64_t wait_ms,
                    bw_idem_fn fn, void *userdata, bw_idem_record_t *out) {
  bw_idem_record_t rec;
  const bw_clock_t *mono = bw_clock_monotonic();
  int64_t start = bw_clock_now(mono);
  int rc;
  if (out) memset(out, 0, sizeof(*out));
  if (s == NULL || fn == NULL || wait_ms < 0 || bw__thr_check_key(key) != BW_OK)
    return BW_E_INVAL;
  for (;;) {
    rc = bw_idem_begin(s, key, &rec);
    if (rc != BW_OK) return rc;
    if (rec.state == BW_IDEM_NEW) {
      int status = 0;
      void *result = NULL;
      size_t len = 0;
      rc = fn(userdata, &status, &result, &len);
      if (rc < 0) {
        free(result); /* fn's, from malloc */
        bw_idem_abandon(s, key, rec.token);
        return rc;
      }
      rc = bw_idem_complete(s, key, rec.token, status, result, len);
      if (rc == BW_OK && out) {
        out->state = BW_IDEM_NEW;
        out->token = rec.token;
        out->status = status;
        out->len = len;
        out->result = bw__thr_copy(result, len);
        if (out->result == NULL) rc = BW_E_NOMEM;
      }
      free(result);
      return rc;
    }
    if (rec.state == BW_IDEM_DONE) {
      if (out)
        *out = rec;
      else
        bw_idem_record_clear(&rec);
      return BW_OK;
    }
    bw_idem_record_clear(&rec);
    if (wait_ms == 0) return BW_E_FULL;
    if (bw_clock_now(mono) - start >= wait_ms * BW_NS_PER_MS)
      return BW_E_TIMEOUT;
    bw__thr_sleep_ms(1); /* the owner is still at it: poll again */
  }
}

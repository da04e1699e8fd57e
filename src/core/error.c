/* Status codes, error details, version, allocator hooks, thread context. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *bw_strerror(int code) {
  switch (code) {
#define BW__XX(name, value, msg) \
  case (value):                  \
    return msg;
    BW_ERRNO_MAP(BW__XX)
#undef BW__XX
  default:
    return "unknown error";
  }
}

const char *bw_outcome_name(bw_outcome_t o) {
  switch (o) {
  case BW_SUCCESS:
    return "success";
  case BW_FAILURE:
    return "failure";
  case BW_IGNORED:
    return "ignored";
  case BW_TIMED_OUT:
    return "timed_out";
  default:
    return "unknown";
  }
}

const char *bw_err_name(int code) {
  switch (code) {
#define BW__XX(name, value, msg) \
  case (value):                  \
    return #name;
    BW_ERRNO_MAP(BW__XX)
#undef BW__XX
  default:
    return "UNKNOWN";
  }
}

#define BW__STR2(x) #x
#define BW__STR(x) BW__STR2(x)
const char *bw_version(void) {
  return BW__STR(BW_VERSION_MAJOR) "." BW__STR(BW_VERSION_MINOR) "." BW__STR(
      BW_VERSION_PATCH);
}

int bw_error_set(bw_error_t *err, int code, const char *field, const char *fmt,
                 ...) {
  if (err != NULL) {
    va_list ap;
    err->code = code;
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
  }
  return code;
}

int bw_name_check(const char *name, const char *field, bw_error_t *err) {
  size_t len;
  if (name == NULL || name[0] == '\0')
    return bw_error_set(err, BW_E_INVAL, field, "%s must not be empty", field);
  len = strnlen(name, BW_NAME_MAX + 1);
  if (len > BW_NAME_MAX)
    return bw_error_set(err, BW_E_INVAL, field,
                        "%s must be at most %d bytes (got %zu)", field,
                        BW_NAME_MAX, strlen(name));
  return BW_OK;
}

void bw_error_clear(bw_error_t *err) {
  if (err != NULL) {
    err->code = BW_OK;
    err->field[0] = '\0';
    err->message[0] = '\0';
  }
}

/* Allocator hooks. */
static bw_malloc_fn bw__m = malloc;
static bw_realloc_fn bw__r = realloc;
static bw_calloc_fn bw__c = calloc;
static bw_free_fn bw__f = free;

int bw_replace_allocator(bw_malloc_fn m, bw_realloc_fn r, bw_calloc_fn c,
                         bw_free_fn f) {
  if (m == NULL || r == NULL || c == NULL || f == NULL) return BW_E_INVAL;
  bw__m = m;
  bw__r = r;
  bw__c = c;
  bw__f = f;
  return BW_OK;
}

void *bw_malloc(size_t size) {
  return bw__m(size ? size : 1);
}
void *bw_calloc(size_t count, size_t size) {
  return bw__c(count ? count : 1, size ? size : 1);
}
void *bw_realloc(void *ptr, size_t size) {
  return bw__r(ptr, size ? size : 1);
}
void bw_free(void *ptr) {
  if (ptr != NULL) bw__f(ptr);
}

char *bw_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = bw_malloc(n);
  if (d != NULL) memcpy(d, s, n);
  return d;
}

void *bw_memdup(const void *data, size_t len) {
  char *p = bw_malloc(len + 1);
  if (p == NULL) return NULL;
  if (len > 0) memcpy(p, data, len);
  p[len] = '\0';
  return p;
}

/* Aligned allocation through the hooks: over-allocate, align, and keep the
 * original pointer just before the aligned block. */
void *bw_calloc_aligned(size_t size) {
  size_t total = size + BW__PAIR + sizeof(void *);
  unsigned char *raw = bw_calloc(1, total);
  uintptr_t p;
  if (raw == NULL) return NULL;
  p = ((uintptr_t)raw + sizeof(void *) + BW__PAIR - 1) &
      ~(uintptr_t)(BW__PAIR - 1);
  memcpy((void *)(p - sizeof(void *)), &raw, sizeof(void *));
  return (void *)p;
}

void bw_free_aligned(void *ptr) {
  void *raw;
  if (ptr == NULL) return;
  memcpy(&raw, (unsigned char *)ptr - sizeof(void *), sizeof(void *));
  bw_free(raw);
}

/* Stripes: a thread claims a free exclusive stripe on first use and gives it
 * back at exit (a pthread key destructor); when all are taken it shares one
 * of the shared stripes, round-robin. */
#include <pthread.h>

_Thread_local unsigned bw__stripe_tls
    __attribute__((tls_model("initial-exec"))) = 0;
static _Atomic uint64_t bw__stripe_free = UINT64_MAX; /* bit i: stripe i free */
static atomic_uint bw__stripe_shared_next = 0;
static atomic_uint bw__stripe_hwm = 0;
static pthread_key_t bw__stripe_key;
static pthread_once_t bw__stripe_once = PTHREAD_ONCE_INIT;
static int bw__stripe_key_ok = 0;

static unsigned bw__shared_stripe(void) {
  unsigned s =
      BW__EXCL_STRIPES + atomic_fetch_add_explicit(&bw__stripe_shared_next, 1,
                                                   memory_order_relaxed) %
                             BW__SHARED_STRIPES;
  unsigned hwm = atomic_load_explicit(&bw__stripe_hwm, memory_order_relaxed);
  while (hwm < BW__STRIPES && !atomic_compare_exchange_weak_explicit(
                                  &bw__stripe_hwm, &hwm, BW__STRIPES,
                                  memory_order_relaxed, memory_order_relaxed)) {
  }
  return s;
}

static void bw__stripe_release(void *v) {
  unsigned s = (unsigned)(uintptr_t)v - 1;
  /* Anything this thread still runs during its exit (other destructors) goes
   * to a shared stripe: the exclusive one may already have a new owner. */
  bw__stripe_tls = bw__shared_stripe() + 1;
  if (s < BW__EXCL_STRIPES)
    atomic_fetch_or_explicit(&bw__stripe_free, UINT64_C(1) << s,
                             memory_order_release);
}

static void bw__stripe_init_key(void) {
  bw__stripe_key_ok =
      pthread_key_create(&bw__stripe_key, bw__stripe_release) == 0;
}

unsigned bw__stripe_slow(void) {
  uint64_t free_bits;
  unsigned s;
  pthread_once(&bw__stripe_once, bw__stripe_init_key);
  free_bits = atomic_load_explicit(&bw__stripe_free, memory_order_acquire);
  /* Without a key there is no way to give a stripe back: share instead. */
  while (bw__stripe_key_ok && free_bits != 0) {
    unsigned bit = (unsigned)__builtin_ctzll(free_bits);
    if (atomic_compare_exchange_weak_explicit(
            &bw__stripe_free, &free_bits, free_bits & ~(UINT64_C(1) << bit),
            memory_order_acquire, memory_order_acquire)) {
      unsigned hwm =
          atomic_load_explicit(&bw__stripe_hwm, memory_order_relaxed);
      while (hwm < bit + 1 && !atomic_compare_exchange_weak_explicit(
                                  &bw__stripe_hwm, &hwm, bit + 1,
                                  memory_order_relaxed, memory_order_relaxed)) {
      }
      if (pthread_setspecific(bw__stripe_key, (void *)(uintptr_t)(bit + 1)) !=
          0) {
        atomic_fetch_or_explicit(&bw__stripe_free, UINT64_C(1) << bit,
                                 memory_order_release);
        break;
      }
      bw__stripe_tls = bit + 1;
      return bit + 1;
    }
  }
  s = bw__shared_stripe();
  bw__stripe_tls = s + 1;
  return s + 1;
}

unsigned bw_stripes_used(void) {
  return atomic_load_explicit(&bw__stripe_hwm, memory_order_relaxed);
}

/* Per-thread context. */
static _Thread_local const bw_context_t *bw__ctx = NULL;

const bw_context_t *bw_context_set(const bw_context_t *ctx) {
  const bw_context_t *prev = bw__ctx;
  bw__ctx = ctx;
  return prev;
}

const bw_context_t *bw_context_current(void) {
  return bw__ctx;
}

unsigned bw_stripe(void) {
  return bw__stripe();
}

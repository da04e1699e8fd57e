/* Shared-memory retry budget: the token bucket of budget.h (gRPC retry
 * throttling) as one atomic word of milli-tokens in the segment, moved by
 * CAS and held inside [0, max] at every instant, plus striped totals. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shm_internal.h"

#define BW__MILLI INT64_C(1000)

enum {
  BW__B_REQUESTS,
  BW__B_SUCCESSES,
  BW__B_FAILURES,
  BW__B_ALLOWED,
  BW__B_DENIED,
  BW__B_COUNT
};

typedef struct bw__bud_s {
  bw__shm_obj_t hdr;
  int64_t max_milli;   /* immutable */
  int64_t ratio_milli; /* immutable */
  BW__PAIR_ALIGNED _Atomic int64_t tokens;
  BW__PAIR_ALIGNED bw__shm_ctr_t ctr[BW__SHM_STRIPES];
} bw__bud_t;

struct bw_shm_budget_s {
  bw__bud_t *s;
  int64_t max_milli;
  int64_t ratio_milli;
  char name[BW_NAME_MAX + 1];
};

typedef struct bw__bud_init_s {
  int64_t max_milli;
  int64_t ratio_milli;
} bw__bud_init_t;

static void bw__bud_init(void *block, const void *arg) {
  bw__bud_t *s = block;
  const bw__bud_init_t *in = arg;
  s->max_milli = in->max_milli;
  s->ratio_milli = in->ratio_milli;
  atomic_store(&s->tokens, in->max_milli); /* starts full */
}

static int bw__bud_check(const void *block, const void *arg, const char *seg,
                         bw_error_t *err) {
  const bw__bud_t *s = block;
  const bw__bud_init_t *in = arg;
  if (s->max_milli != in->max_milli)
    return bw__shm_mismatch_g(err, "budget", seg, "max_tokens",
                              (double)s->max_milli / BW__MILLI,
                              (double)in->max_milli / BW__MILLI);
  if (s->ratio_milli != in->ratio_milli)
    return bw__shm_mismatch_g(err, "budget", seg, "token_ratio",
                              (double)s->ratio_milli / BW__MILLI,
                              (double)in->ratio_milli / BW__MILLI);
  return BW_OK;
}

bw_shm_budget_t *bw_shm_budget_new(bw_shm_t *shm, const bw_budget_config_t *cfg,
                                   bw_error_t *err) {
  bw_shm_budget_t *b;
  bw__bud_init_t in;
  void *blk;
  if (shm == NULL) {
    bw_error_set(err, BW_E_INVAL, "shm", "shm (the segment) must not be NULL");
    return NULL;
  }
  if (bw_budget_config_validate(cfg, err) != BW_OK) return NULL;
  if (cfg->kind != BW_BUDGET_TOKEN_BUCKET) {
    bw_error_set(err, BW_E_INVAL, "kind",
                 "kind %s is not supported by the shared-memory budget "
                 "(only token_bucket)",
                 bw_budget_kind_name(cfg->kind));
    return NULL;
  }
  /* validate has checked both are whole multiples of 0.001. */
  in.max_milli = llround(cfg->max_tokens * (double)BW__MILLI);
  in.ratio_milli = llround(cfg->token_ratio * (double)BW__MILLI);
  b = bw_calloc(1, sizeof(*b));
  if (b == NULL) {
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  if (bw__shm_object(shm, cfg->name, BW__SHM_KIND_BUDGET, sizeof(bw__bud_t),
                     bw__bud_init, bw__bud_check, &in, &blk, err) != BW_OK) {
    bw_free(b);
    return NULL;
  }
  b->s = blk;
  b->max_milli = in.max_milli;
  b->ratio_milli = in.ratio_milli;
  snprintf(b->name, sizeof(b->name), "%s", cfg->name);
  bw_error_clear(err);
  return b;
}

void bw_shm_budget_free(bw_shm_budget_t *b) {
  bw_free(b);
}

const char *bw_shm_budget_name(const bw_shm_budget_t *b) {
  return b == NULL ? "" : b->name;
}

static inline void bw__bcount(bw_shm_budget_t *b, int which) {
  bw__shm_bump(b->s->ctr, which);
}

/* Adds delta milli-tokens, held inside [0, max]; a no-op write is skipped. */
static void bw__tokens_add(bw_shm_budget_t *b, int64_t delta) {
  int64_t cur = BW__SHM_LOAD(b->s->tokens);
  for (;;) {
    int64_t next = cur + delta;
    if (next > b->max_milli) next = b->max_milli;
    if (next < 0) next = 0;
    if (next == cur) return;
    if (atomic_compare_exchange_weak_explicit(&b->s->tokens, &cur, next,
                                              memory_order_relaxed,
                                              memory_order_relaxed))
      return;
  }
}

void bw_shm_budget_on_request(bw_shm_budget_t *b) {
  if (b != NULL) bw__bcount(b, BW__B_REQUESTS);
}

void bw_shm_budget_on_success(bw_shm_budget_t *b) {
  if (b == NULL) return;
  bw__bcount(b, BW__B_SUCCESSES);
  bw__tokens_add(b, b->ratio_milli);
}

void bw_shm_budget_on_failure(bw_shm_budget_t *b) {
  if (b == NULL) return;
  bw__bcount(b, BW__B_FAILURES);
  bw__tokens_add(b, -BW__MILLI);
}

bool bw_shm_budget_try_retry(bw_shm_budget_t *b) {
  bool ok;
  if (b == NULL) return false;
  /* tokens > max / 2, in integers (as budget.c). */
  ok = 2 * BW__SHM_LOAD(b->s->tokens) > b->max_milli;
  bw__bcount(b, ok ? BW__B_ALLOWED : BW__B_DENIED);
  return ok;
}

void bw_shm_budget_stats(const bw_shm_budget_t *b, bw_budget_stats_t *out) {
  uint64_t sum[BW__B_COUNT];
  if (out == NULL) return;
  memset(out, 0, sizeof(*out));
  if (b == NULL) return;
  bw__shm_sum_all(b->s->ctr, sum, BW__B_COUNT);
  out->requests = sum[BW__B_REQUESTS];
  out->successes = sum[BW__B_SUCCESSES];
  out->failures = sum[BW__B_FAILURES];
  out->allowed = sum[BW__B_ALLOWED];
  out->denied = sum[BW__B_DENIED];
  out->tokens = (double)BW__SHM_LOAD(b->s->tokens) / (double)BW__MILLI;
}

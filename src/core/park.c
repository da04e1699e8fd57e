/* Fallback with recovery (store.h): parking a failed call's work in a queue,
 * and the reprocessor that replays it while the breaker is CLOSED. Both use
 * the queue only through the store interface, so any backend will do. */
#include <stdatomic.h>
#include <string.h>

#include "breakwater/store.h"
#include "internal.h"

/* ==== parking ============================================================ */

/* Enqueues `work` into `queue`: the enqueue's status, or BW_E_INVAL when
 * either is missing. */
static int park(bw_queue_store_t *queue, const bw_park_work_t *work) {
  if (queue == NULL || work == NULL || work->data == NULL) return BW_E_INVAL;
  return bw_queue_store_enqueue(queue, work->data, work->len, NULL);
}

/* The work travels with the call (call->user), so a fallback that runs on
 * any thread parks the right thing. */
int bw_park_fallback(void *userdata, bw_failure_t why,
                     const struct bw_pipeline_call_s *call) {
  (void)why;
  if (call == NULL) return BW_E_INVAL;
  return park((bw_queue_store_t *)userdata, (const bw_park_work_t *)call->user);
}

/* ==== the reprocessor ===================================================== */

struct bw_reprocessor_s {
  bw_reprocessor_config_t cfg;
  char *name;
  _Atomic uint64_t processed, failed, rejected, paused;
};

void bw_reprocessor_config_init(bw_reprocessor_config_t *cfg) {
  if (cfg == NULL) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->name = "reprocessor";
  cfg->batch = 16;
  cfg->visibility_ms = 30000;
  cfg->retry_delay_ms = 1000;
}

bw_reprocessor_t *bw_reprocessor_new(const bw_reprocessor_config_t *c,
                                     bw_error_t *err) {
  bw_reprocessor_t *rp;
  if (c == NULL) {
    bw_error_set(err, BW_E_INVAL, "", "config is NULL");
    return NULL;
  }
  if (bw_name_check(c->name, "name", err) != BW_OK) return NULL;
  if (c->queue == NULL) {
    bw_error_set(err, BW_E_INVAL, "queue", "queue is required (got NULL)");
    return NULL;
  }
  if (c->fn == NULL) {
    bw_error_set(err, BW_E_INVAL, "fn", "fn is required (got NULL)");
    return NULL;
  }
  if (c->batch < 1) {
    bw_error_set(err, BW_E_INVAL, "batch", "batch must be >= 1 (got 0)");
    return NULL;
  }
  if (c->visibility_ms < 1) {
    bw_error_set(err, BW_E_INVAL, "visibility_ms",
                 "visibility_ms must be >= 1 (got %lld)",
                 (long long)c->visibility_ms);
    return NULL;
  }
  if (c->retry_delay_ms < 0) {
    bw_error_set(err, BW_E_INVAL, "retry_delay_ms",
                 "retry_delay_ms must be >= 0 (got %lld)",
                 (long long)c->retry_delay_ms);
    return NULL;
  }
  rp = bw_calloc(1, sizeof(*rp));
  if (rp != NULL) rp->name = bw_strdup(c->name);
  if (rp == NULL || rp->name == NULL) {
    bw_free(rp);
    bw_error_set(err, BW_E_NOMEM, "", "out of memory");
    return NULL;
  }
  rp->cfg = *c;
  rp->cfg.name = rp->name;
  bw_error_clear(err);
  return rp;
}

static bool rp_closed(const bw_reprocessor_t *rp) {
  return rp->cfg.breaker == NULL ||
         bw_breaker_state(rp->cfg.breaker) == BW_CLOSED;
}

/* Replays one claimed item and settles it by fn's answer: acked, rejected to
 * the DLQ (BW_E_INVAL: it never will be good), handed back at once
 * (BW_E_OPEN: not processed, end the step), or nacked for a later retry.
 * *o gets what the breaker hears; returns false when the step must end. */
static bool rp_replay(bw_reprocessor_t *rp, const bw_stored_item_t *it,
                      bw_outcome_t *o) {
  int r = rp->cfg.fn(rp->cfg.userdata, it);
  if (r == BW_OK) {
    bw_queue_store_ack(rp->cfg.queue, it->id, it->receipt);
    atomic_fetch_add(&rp->processed, 1);
    *o = BW_SUCCESS;
    return true;
  }
  if (r == BW_E_INVAL) {
    bw_queue_store_reject(rp->cfg.queue, it->id, it->receipt,
                          "reprocessor: the item was refused as invalid");
    atomic_fetch_add(&rp->rejected, 1);
    *o = BW_IGNORED;
    return true;
  }
  if (r == BW_E_OPEN) {
    bw_queue_store_nack(rp->cfg.queue, it->id, it->receipt, 0);
    *o = BW_IGNORED;
    return false;
  }
  bw_queue_store_nack(rp->cfg.queue, it->id, it->receipt,
                      rp->cfg.retry_delay_ms);
  atomic_fetch_add(&rp->failed, 1);
  *o = BW_FAILURE;
  return true;
}

int bw_reprocessor_step(bw_reprocessor_t *rp, size_t *done) {
  size_t i, ok = 0;
  int rc = BW_OK;
  if (done) *done = 0;
  if (rp == NULL) return BW_E_INVAL;
  if (!rp_closed(rp)) {
    atomic_fetch_add(&rp->paused, 1);
    return BW_E_OPEN;
  }
  /* One item at a time, the breaker asked before each claim: an item is
   * claimed only when it will be replayed. (Claiming a batch and handing
   * back what the breaker then refused counted a delivery for items never
   * tried, and with max_deliveries 1 sent them to the DLQ untried.) */
  for (i = 0; i < rp->cfg.batch; i++) {
    bw_stored_item_t it;
    bw_permit_t p;
    bw_outcome_t o;
    size_t n = 0;
    if (!rp_closed(rp) || (rp->cfg.breaker != NULL &&
                           bw_breaker_acquire(rp->cfg.breaker, &p) != BW_OK))
      break; /* the breaker opened mid-step: the rest wait, unclaimed */
    memset(&it, 0, sizeof(it));
    rc = bw_queue_store_claim(rp->cfg.queue, 1, rp->cfg.visibility_ms, &it, &n);
    if (rc != BW_OK || n == 0) {
      /* nothing to replay (or the store failed): the permit decided nothing */
      if (rp->cfg.breaker != NULL)
        bw_breaker_release(rp->cfg.breaker, &p, BW_IGNORED);
      break;
    }
    bool go_on = rp_replay(rp, &it, &o);
    if (o == BW_SUCCESS) ok++;
    if (rp->cfg.breaker != NULL) bw_breaker_release(rp->cfg.breaker, &p, o);
    bw_stored_items_clear(&it, 1);
    if (!go_on) break;
  }
  if (done) *done = ok;
  return rc;
}

int bw_reprocessor_stats(bw_reprocessor_t *rp, bw_reprocessor_stats_t *out) {
  bw_queue_store_stats_t qs;
  int rc;
  if (rp == NULL || out == NULL) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  rc = bw_queue_store_stats(rp->cfg.queue, &qs);
  out->backlog = qs.depth;
  out->dlq_depth = qs.dlq_depth;
  out->processed = atomic_load(&rp->processed);
  out->failed = atomic_load(&rp->failed);
  out->rejected = atomic_load(&rp->rejected);
  out->paused = atomic_load(&rp->paused);
  return rc;
}

void bw_reprocessor_free(bw_reprocessor_t *rp) {
  if (rp == NULL) return;
  bw_free(rp->name);
  bw_free(rp);
}

/* The concurrency-limit interface: dispatch through the vtable at the head of
 * each object, with the argument checks done once here. */
#include "breakwater/limit.h"

#include "internal.h"

const char *bw_limit_outcome_name(bw_limit_outcome_t o) {
  switch (o) {
  case BW_LIMIT_SUCCESS:
    return "success";
  case BW_LIMIT_DROPPED:
    return "dropped";
  case BW_LIMIT_IGNORED:
    return "ignored";
  case BW_LIMIT_TIMED_OUT:
    return "timed_out";
  default:
    return "unknown";
  }
}

int bw_limit_try_acquire(bw_limit_t *l, bw_permit_t *p) {
  if (l == NULL || l->vt == NULL || p == NULL) return BW_E_INVAL;
  return l->vt->try_acquire(l, p);
}

int bw_limit_release(bw_limit_t *l, const bw_permit_t *p,
                     bw_limit_outcome_t outcome) {
  if (l == NULL || l->vt == NULL || p == NULL) return BW_E_INVAL;
  if ((unsigned)outcome > (unsigned)BW_LIMIT_TIMED_OUT) return BW_E_INVAL;
  if (outcome == BW_LIMIT_TIMED_OUT && !(l->vt->flags & BW_LIMIT_VT_TIMED_OUT))
    outcome = BW_LIMIT_DROPPED;
  return l->vt->release(l, p, outcome);
}

int64_t bw_limit_attempt_timeout(bw_limit_t *l, bw_permit_t *p,
                                 int64_t timeout_ms) {
  if (l == NULL || l->vt == NULL || p == NULL ||
      !(l->vt->flags & BW_LIMIT_VT_ATTEMPT_TIMEOUT) ||
      l->vt->attempt_timeout == NULL)
    return timeout_ms;
  return l->vt->attempt_timeout(l, p, timeout_ms);
}

uint32_t bw_limit_current(const bw_limit_t *l) {
  return l == NULL || l->vt == NULL ? 0 : l->vt->limit(l);
}

uint32_t bw_limit_in_flight(const bw_limit_t *l) {
  return l == NULL || l->vt == NULL ? 0 : l->vt->in_flight(l);
}

const char *bw_limit_name(const bw_limit_t *l) {
  return l == NULL || l->vt == NULL ? "" : l->vt->name(l);
}

const char *bw_limit_kind(const bw_limit_t *l) {
  return l == NULL || l->vt == NULL ? "" : l->vt->kind;
}

void bw_limit_free(bw_limit_t *l) {
  if (l != NULL && l->vt != NULL) l->vt->free(l);
}

/* The simulator's pipeline policy: every logical request runs through a
 * bw_pipeline_t on the virtual clock (sim.h, bw_sim_policy_pipeline, and
 * bw_sim_policy_pipeline_handoff, whose slot waits are woken by the client
 * instead of polling). */
#include <string.h>

#include "breakwater/http.h"
#include "breakwater/pipeline.h"
#include "breakwater/sim.h"

/* Per-request state: the call and what the pipeline last asked for. */
typedef struct pstate_s {
  bw_pipeline_call_t call;
  int step; /* the last step, or -1 before begin */
  bool begun;
  bool handoff; /* a slot wait carries its limit as the wake key */
} pstate_t;

static bw_sim_decision_t decide(pstate_t *st) {
  bw_sim_decision_t d;
  memset(&d, 0, sizeof d);
  if (st->step == BW_STEP_ATTEMPT) {
    d.action = BW_SIM_ACT_GO;
    d.timeout_ms =
        st->call.attempt_timeout_ms > 0 ? st->call.attempt_timeout_ms : 0;
    return d;
  }
  if (st->step == BW_STEP_WAIT) {
    d.action = BW_SIM_ACT_WAIT;
    d.delay_ms = st->call.delay_ms;
    if (st->handoff) d.wake_key = bw_pipeline_slot_wait(&st->call);
    return d;
  }
  switch (st->call.failure) {
  case BW_FAILURE_NONE:
  case BW_FAILURE_EXHAUSTED:
  case BW_FAILURE_PERMANENT:
    d.action = BW_SIM_ACT_STOP;
    break;
  case BW_FAILURE_BREAKER:
    d.action = BW_SIM_ACT_REJECT;
    d.reject = BW_SIM_REJECT_BREAKER;
    break;
  case BW_FAILURE_LIMIT:
    d.action = BW_SIM_ACT_REJECT;
    d.reject = BW_SIM_REJECT_LIMITER;
    break;
  case BW_FAILURE_RATELIMIT:
    d.action = BW_SIM_ACT_REJECT;
    d.reject = BW_SIM_REJECT_RATELIMIT;
    break;
  case BW_FAILURE_BUDGET:
    d.action = BW_SIM_ACT_REJECT;
    d.reject = BW_SIM_REJECT_BUDGET;
    break;
  default:
    d.action = BW_SIM_ACT_GIVE_UP;
    break;
  }
  return d;
}

static bw_sim_decision_t pl_before(void *data, bw_sim_call_t *call,
                                   int64_t now_ns) {
  pstate_t *st = call->state;
  if (!st->begun) {
    st->begun = true;
    st->step =
        bw_pipeline_begin_at(data, &st->call, bw_deadline_none(), now_ns);
  } else if (st->step == BW_STEP_WAIT) {
    st->step = bw_pipeline_resume(&st->call, now_ns);
  }
  /* A pipeline step never fails here (the call is ours); STOP before an
   * attempt would mean a logic error, and the client reports it. */
  return decide(st);
}

static bw_sim_decision_t pl_after(void *data, bw_sim_call_t *call,
                                  int64_t now_ns) {
  pstate_t *st = call->state;
  (void)data;
  if (call->timed_out) {
    st->step = bw_pipeline_report_timeout(&st->call, now_ns);
  } else {
    int64_t hint = BW_RETRY_AFTER_NONE;
    bw_verdict_t v = bw_http_classify(call->status, BW_TRANSPORT_NONE);
    if (call->retry_after_ms >= 0 && bw_http_has_retry_hint(call->status))
      hint = call->retry_after_ms;
    st->step = bw_pipeline_report(&st->call, v, hint, now_ns);
  }
  bw_sim_decision_t d = decide(st);
  /* After an attempt the client reads GO as "ask again now": the pipeline
   * has already entered the next attempt's strategies, so `before` answers
   * GO without moving it. */
  return d;
}

/* The handoff policy's requests carry their flag from arrival on. */
static void handoff_begin(void *data, bw_sim_call_t *call, int64_t now_ns) {
  (void)data;
  (void)now_ns;
  ((pstate_t *)call->state)->handoff = true;
}

static int policy(bw_sim_policy_t *out, const struct bw_pipeline_s *pl,
                  bool handoff) {
  if (out == NULL || pl == NULL) return BW_E_INVAL;
  memset(out, 0, sizeof(*out));
  out->name = bw_pipeline_name(pl);
  out->data = (void *)(uintptr_t)pl;
  out->state_size = sizeof(pstate_t);
  out->begin = handoff ? handoff_begin : NULL;
  out->before = pl_before;
  out->after = pl_after;
  return BW_OK;
}

int bw_sim_policy_pipeline(bw_sim_policy_t *out,
                           const struct bw_pipeline_s *pl) {
  return policy(out, pl, false);
}

int bw_sim_policy_pipeline_handoff(bw_sim_policy_t *out,
                                   const struct bw_pipeline_s *pl) {
  return policy(out, pl, true);
}

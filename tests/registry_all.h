/* A registry holding one object of every kind, on a manual clock, each used
 * a little: shared by test_registry_kinds and registry_expo (the exposition
 * that promtool and the Prometheus parser check). */
#ifndef BW_TEST_REGISTRY_ALL_H
#define BW_TEST_REGISTRY_ALL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakwater/breakwater.h"

typedef struct reg_all_s {
  bw_clock_t *clock;
  bw_registry_t *reg;
  bw_breaker_t *shared; /* put in as a bw_breaker_if_t; outlives reg */
  bw_breaker_t *b;      /* held */
  bw_bulkhead_t *bh;
  bw_permit_t bh_permit;
  bw_limiter_t *lim;
  bw_ratelimit_t *rl;
  bw_budget_t *bu;
  bw_retry_policy_t *retry;
  bw_pipeline_t *pl;
  bw_queue_t *q;
  bw_stage_t *st;
  bw_degrade_t *dg;
  bw_queue_store_t *qs; /* put in; outlives reg */
  bw_gauge_t *ga;
  bw_idem_store_t *is; /* put in; outlives reg */
  bw_throttle_t *th;
} reg_all_t;

#define REG_ALL_CHECK(x)                                                     \
  do {                                                                       \
    if (!(x)) {                                                              \
      fprintf(stderr, "%s:%d: %s failed (%s: %s)\n", __FILE__, __LINE__, #x, \
              err.field, err.message);                                       \
      abort();                                                               \
    }                                                                        \
  } while (0)

/* One request through a throttle's strategy by hand, as a pipeline drives
 * it: enter (admitted: the window is empty or accepting), then, with
 * `sent`, an attempt; leave happens in reg_all_th_leave. */
static inline void reg_all_th_enter(bw_throttle_t *t, bw_clock_t *clock,
                                    bw_permit_t *p) {
  bw_strategy_if_t *s = bw_throttle_strategy(t);
  bw_deadline_t d = bw_deadline_none();
  int64_t timeout = -1;
  bw_strategy_ctx_t ctx = {p, &d, &timeout, bw_clock_now(clock), 0, 0, false};
  bw_refusal_t r = {BW_FAILURE_NONE, 0, false};
  bw_error_t err;
  memset(&err, 0, sizeof(err));
  REG_ALL_CHECK(s->vt->enter(s, &ctx, bw_clock_now(clock), &r) == BW_OK);
}

static inline void reg_all_th_leave(bw_throttle_t *t, bw_clock_t *clock,
                                    bw_permit_t *p, bool sent, bw_outcome_t o) {
  bw_strategy_if_t *s = bw_throttle_strategy(t);
  bw_deadline_t d = bw_deadline_none();
  int64_t timeout = -1;
  bw_strategy_ctx_t ctx = {
      p, &d, &timeout, bw_clock_now(clock), sent ? 1u : 0u, 0, false};
  s->vt->leave(s, &ctx, o);
}

/* Builds it; the pipeline ran one call that took 3 ms. The throttle
 * "partner" (K = 2) saw two requests rejected and one withdrawn: window 2
 * requests, 0 accepts, refusal probability 2/3 (both entered before either
 * left, so no draw was made). */
static inline void reg_all_init(reg_all_t *a) {
  bw_error_t err;
  bw_registry_config_t rc;
  bw_breaker_config_t bc;
  bw_retry_config_t rtc;
  bw_pipeline_config_t pc;
  bw_pipeline_call_t call;
  bw_permit_t p;
  bw_queue_item_t shed;
  bw_stage_result_t sres;
  bw_degrade_pick_t pick;
  memset(a, 0, sizeof(*a));
  memset(&err, 0, sizeof(err));
  a->clock = bw_clock_manual_new(1000 * BW_NS_PER_MS);
  bw_registry_config_init(&rc);
  rc.clock = a->clock;
  a->reg = bw_registry_new(&rc, &err);
  REG_ALL_CHECK(a->reg != NULL);
  a->b = bw_registry_breaker(a->reg, "payment_api", &err);
  REG_ALL_CHECK(a->b != NULL);
  bw_breaker_config_init(&bc);
  bc.name = "shared_api";
  bc.clock = a->clock;
  a->shared = bw_breaker_new(&bc, &err);
  REG_ALL_CHECK(a->shared != NULL);
  REG_ALL_CHECK(
      bw_registry_put_object(a->reg, BW_REGISTRY_BREAKER_IF, "shared_api",
                             bw_breaker_iface(a->shared), &err) == BW_OK);
  a->bh = bw_registry_bulkhead(a->reg, "hotel_api", NULL, &err);
  REG_ALL_CHECK(a->bh != NULL);
  REG_ALL_CHECK(bw_bulkhead_try_acquire(a->bh, &a->bh_permit) == BW_OK);
  a->lim = bw_registry_limiter(a->reg, "search_agent", NULL, &err);
  REG_ALL_CHECK(a->lim != NULL);
  REG_ALL_CHECK(bw_limiter_try_acquire(a->lim, &p) == BW_OK);
  bw_clock_manual_advance(a->clock, 20 * BW_NS_PER_MS);
  bw_limiter_release(a->lim, &p, BW_SUCCESS);
  a->rl = bw_registry_ratelimit(a->reg, "payment_api", NULL, &err);
  REG_ALL_CHECK(a->rl != NULL);
  a->bu = bw_registry_budget(a->reg, "payment_api", NULL, &err);
  REG_ALL_CHECK(a->bu != NULL);
  bw_retry_config_init(&rtc);
  rtc.budget = a->bu;
  rtc.seed = 7;
  a->retry = bw_registry_retry(a->reg, "payment_api", &rtc, &err);
  REG_ALL_CHECK(a->retry != NULL);
  bw_pipeline_config_init(&pc);
  REG_ALL_CHECK(bw_pipeline_add_ratelimit(&pc, a->rl, 0) == BW_OK);
  REG_ALL_CHECK(bw_pipeline_add_breaker(&pc, a->b) == BW_OK);
  REG_ALL_CHECK(bw_pipeline_add_retry(&pc, a->retry) == BW_OK);
  a->pl = bw_registry_pipeline(a->reg, "payment_api", &pc, &err);
  REG_ALL_CHECK(a->pl != NULL);
  {
    int64_t t0 = bw_clock_now(a->clock);
    REG_ALL_CHECK(bw_pipeline_begin(a->pl, &call, t0) == BW_STEP_ATTEMPT);
    REG_ALL_CHECK(bw_pipeline_report(&call, BW_VERDICT_OK, -1,
                                     t0 + 3 * BW_NS_PER_MS) == BW_STEP_DONE);
  }
  {
    bw_queue_config_t qc;
    bw_queue_config_init(&qc);
    qc.max_size = 4;
    a->q = bw_registry_queue(a->reg, "work", &qc, &err);
  }
  REG_ALL_CHECK(a->q != NULL);
  REG_ALL_CHECK(bw_queue_enqueue(a->q, NULL, 0, BW_QUEUE_NO_DEADLINE, &shed) >=
                0);
  {
    bw_stage_config_t sc;
    bw_stage_config_init(&sc);
    sc.queue_size = 4;
    sc.concurrency = 2;
    a->st = bw_registry_stage(a->reg, "ingest", &sc, &err);
  }
  REG_ALL_CHECK(a->st != NULL);
  REG_ALL_CHECK(bw_stage_submit(a->st, NULL, 0, BW_QUEUE_NO_DEADLINE, &sres) >=
                0);
  a->dg = bw_registry_degrade(a->reg, "search", NULL, &err);
  REG_ALL_CHECK(a->dg != NULL);
  REG_ALL_CHECK(bw_degrade_pick(a->dg, &pick) == BW_OK);
  {
    bw_queue_store_config_t qsc;
    uint64_t id;
    bw_queue_store_config_init(&qsc);
    qsc.name = "recovery";
    qsc.max_size = 8;
    a->qs = bw_mem_queue_new(&qsc, &err);
    REG_ALL_CHECK(a->qs != NULL);
    REG_ALL_CHECK(bw_queue_store_enqueue(a->qs, "x", 1, &id) == BW_OK);
    REG_ALL_CHECK(bw_registry_put_object(a->reg, BW_REGISTRY_QUEUE_STORE,
                                         "recovery", a->qs, &err) == BW_OK);
  }
  a->ga = bw_registry_gauge(a->reg, "intake", NULL, &err);
  REG_ALL_CHECK(a->ga != NULL);
  REG_ALL_CHECK(bw_gauge_update(a->ga, 0.7) == BW_REGIME_DEGRADED);
  {
    bw_idem_config_t ic;
    bw_idem_record_t rec;
    bw_idem_config_init(&ic);
    ic.name = "orders";
    ic.clock = a->clock;
    a->is = bw_mem_idem_new(&ic, &err);
    REG_ALL_CHECK(a->is != NULL);
    REG_ALL_CHECK(bw_idem_begin(a->is, "order-1", &rec) == BW_OK);
    REG_ALL_CHECK(bw_idem_complete(a->is, "order-1", rec.token, 201, NULL, 0) ==
                  BW_OK);
    REG_ALL_CHECK(bw_idem_begin(a->is, "order-1", &rec) == BW_OK);
    REG_ALL_CHECK(rec.state == BW_IDEM_DONE);
    bw_idem_record_clear(&rec);
    REG_ALL_CHECK(bw_registry_put_object(a->reg, BW_REGISTRY_IDEM_STORE,
                                         "orders", a->is, &err) == BW_OK);
  }
  a->th = bw_registry_throttle(a->reg, "partner", NULL, &err);
  REG_ALL_CHECK(a->th != NULL);
  {
    bw_permit_t p1, p2, p3;
    reg_all_th_enter(a->th, a->clock, &p1);
    reg_all_th_enter(a->th, a->clock, &p2);
    reg_all_th_enter(a->th, a->clock, &p3);
    reg_all_th_leave(a->th, a->clock, &p1, true, BW_FAILURE);
    reg_all_th_leave(a->th, a->clock, &p2, true, BW_TIMED_OUT);
    reg_all_th_leave(a->th, a->clock, &p3, false, BW_IGNORED);
  }
  bw_clock_manual_advance(a->clock, 500 * BW_NS_PER_MS);
}

static inline void reg_all_free(reg_all_t *a) {
  bw_bulkhead_release(a->bh, &a->bh_permit);
  bw_registry_put(a->reg, a->b);
  bw_registry_free(a->reg);
  bw_breaker_free(a->shared);
  bw_queue_store_free(a->qs);
  bw_idem_store_free(a->is);
  bw_clock_free(a->clock);
}

#endif

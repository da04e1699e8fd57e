/* agents_breakers — the asyncio toolkit's per-agent protection on a manual
 * clock: one bulkhead, one retry policy and one breaker per agent, all from the
 * seed's presets.
 *
 * Three simulated agents of a travel assistant call three dependencies:
 *   booking_agent -> hotel_api     flaky: every other attempt fails
 *   search_agent  -> search_agent  healthy
 *   payment_agent -> payment_api   declines card 4000 (a business error),
 *                                  then goes down for good at order 3
 * Each agent takes a slot from its bulkhead preset (booking 10, search 20,
 * payment 5, recovery 3), retries with its "agents.*" retry preset (full
 * jitter, fixed seed) and calls through its breaker, created by a registry
 * from the seed's CIRCUIT_CONFIGS. Watch three rules hold:
 *   - a transient failure is retried (hotel_api recovers on the retry);
 *   - a business error (PERMANENT) is not retried, and does not count
 *     against the breaker;
 *   - a breaker rejection (REJECTED) is not retried: the call gives up at
 *     once, and the dependency never sees it.
 * Waits advance the manual clock, so the run is instant and identical on
 * every run.
 *
 *   agents_breakers
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "breakwater/breakwater.h"
#include "breakwater/bulkhead.h"
#include "breakwater/registry.h"
#include "breakwater/retry.h"
#include "breakwater/threads.h"

enum { AGENT_BOOKING, AGENT_SEARCH, AGENT_PAYMENT, AGENT_COUNT };

/* One agent: what protects it and what happened to it. */
typedef struct agent_s {
  const char *bulkhead;   /* bulkhead preset */
  const char *dependency; /* breaker name and retry preset suffix */
  bw_bulkhead_t *bh;
  bw_retry_policy_t *retry;
  bw_breaker_t *breaker; /* held from the registry */
  uint64_t calls, ok, dependency_calls, rejected_by_breaker;
  uint64_t gave_up[BW_GIVEUP_PUSHBACK + 1];
} agent_t;

static agent_t agents[AGENT_COUNT] = {
    {.bulkhead = "booking_agent", .dependency = "hotel_api"},
    {.bulkhead = "search_agent", .dependency = "search_agent"},
    {.bulkhead = "payment_agent", .dependency = "payment_api"},
};

static bw_clock_t *clock_;
static int64_t t0_ns;
static uint64_t hotel_attempts; /* hotel_api's attempts, for its flakiness */
static int payment_down;        /* payment_api is down (the outage) */

/* One request of an agent: which agent and the order's card number. */
typedef struct request_s {
  agent_t *a;
  int order;
  int card;
} request_t;

/* The dependency itself: the verdict of one attempt that reached it. */
static bw_verdict_t dependency(const request_t *r) {
  if (r->a == &agents[AGENT_BOOKING])
    return hotel_attempts++ % 2 == 0 ? BW_VERDICT_TRANSIENT : BW_VERDICT_OK;
  if (r->a == &agents[AGENT_PAYMENT]) {
    if (payment_down) return BW_VERDICT_TRANSIENT;    /* 503 */
    if (r->card == 4000) return BW_VERDICT_PERMANENT; /* card declined */
  }
  return BW_VERDICT_OK;
}

/* One attempt through the agent's breaker (bw_retry_fn). */
static bw_verdict_t attempt(void *userdata, uint32_t n, int64_t *retry_after) {
  request_t *r = userdata;
  bw_permit_t p;
  bw_verdict_t v;
  (void)n;
  (void)retry_after;
  if (bw_breaker_acquire(r->a->breaker, &p) != BW_OK) {
    r->a->rejected_by_breaker++;
    return BW_VERDICT_REJECTED; /* never retried */
  }
  r->a->dependency_calls++;
  v = dependency(r);
  /* A business error says the dependency is healthy: it counts neither way. */
  bw_breaker_release(r->a->breaker, &p,
                     v == BW_VERDICT_OK          ? BW_SUCCESS
                     : v == BW_VERDICT_PERMANENT ? BW_IGNORED
                                                 : BW_FAILURE);
  return v;
}

/* The retry's waits move the manual clock instead of sleeping. */
static void sleep_virtual(void *userdata, int64_t ms) {
  (void)userdata;
  bw_clock_manual_advance(clock_, ms * BW_NS_PER_MS);
}

static void serve(agent_t *a, int order, int card) {
  request_t r = {a, order, card};
  bw_retry_call_opts_t opts = {0};
  bw_giveup_t why = BW_GIVEUP_NONE;
  uint64_t before = a->dependency_calls;
  bw_permit_t slot;
  char result[40];
  int rc;

  a->calls++;
  if (bw_bulkhead_try_acquire(a->bh, &slot) != BW_OK) {
    printf("  %-15s order %d: no bulkhead slot\n", a->bulkhead, order);
    return;
  }
  opts.clock = clock_;
  opts.sleep = sleep_virtual;
  rc = bw_retry_call(a->retry, attempt, &r, &opts, &why);
  bw_bulkhead_release(a->bh, &slot);
  if (rc == BW_OK) {
    a->ok++;
    snprintf(result, sizeof(result), "ok");
  } else {
    a->gave_up[why]++;
    snprintf(result, sizeof(result), "gave up (%s)", bw_giveup_name(why));
  }
  printf("t=%4.1f s  %-15s order %d: %-21s dependency calls %" PRIu64
         ", breaker %s\n",
         (double)(bw_clock_now(clock_) - t0_ns) / 1e9, a->bulkhead, order,
         result, a->dependency_calls - before,
         bw_state_name(bw_breaker_state(a->breaker)));
}

/* The asyncio toolkit's CIRCUIT_CONFIGS: consecutive failures to open, probe
 * successes to close, seconds open. */
static int register_breaker(bw_registry_t *reg, const char *name,
                            uint32_t failures, uint32_t successes,
                            int64_t open_ms, bw_error_t *err) {
  bw_breaker_config_t bc;
  bw_breaker_config_init(&bc);
  bc.trip_rule = BW_TRIP_CONSECUTIVE;
  bc.failure_threshold = failures;
  bc.success_threshold = successes;
  bc.half_open_max_calls = successes;
  bc.break_ms = open_ms;
  bc.clock = clock_;
  return bw_registry_set_breaker_config(reg, name, &bc, err);
}

static void print_breaker(const char *name, const bw_breaker_stats_t *s,
                          void *ud) {
  (void)ud;
  printf("  breaker %-13s %-7s calls %2" PRIu64 " (ok %" PRIu64
         ", failed %" PRIu64 ", ignored %" PRIu64 "), rejected %" PRIu64 "\n",
         name, bw_state_name(s->state), s->calls, s->successes, s->failures,
         s->ignored, s->rejected);
}

int main(void) {
  bw_registry_config_t rc;
  bw_registry_t *reg = NULL;
  bw_bulkhead_t *recovery = NULL;
  bw_bulkhead_config_t bc;
  bw_error_t err;
  int status = 1;

  clock_ = bw_clock_manual_new(0);
  if (clock_ == NULL) return 1;
  t0_ns = bw_clock_now(clock_);
  bw_registry_config_init(&rc);
  rc.clock = clock_;
  reg = bw_registry_new(&rc, &err);
  if (reg == NULL || register_breaker(reg, "hotel_api", 5, 2, 30000, &err) ||
      register_breaker(reg, "payment_api", 3, 3, 60000, &err) ||
      register_breaker(reg, "search_agent", 10, 1, 15000, &err))
    goto out;

  for (int i = 0; i < AGENT_COUNT; i++) {
    agent_t *a = &agents[i];
    bw_retry_config_t rtc;
    char preset[64];
    bw_bulkhead_config_preset(&bc, a->bulkhead);
    bc.clock = clock_;
    if ((a->bh = bw_bulkhead_new(&bc, &err)) == NULL) goto out;
    snprintf(preset, sizeof(preset), "agents.%s", a->dependency);
    if (bw_retry_config_preset(&rtc, preset) != BW_OK) {
      snprintf(err.message, sizeof(err.message), "no retry preset %s", preset);
      goto out;
    }
    rtc.seed = 42 + (uint64_t)i; /* the same jitter on every run */
    if ((a->retry = bw_retry_policy_new(&rtc, &err)) == NULL) goto out;
    if ((a->breaker = bw_registry_breaker(reg, a->dependency, &err)) == NULL)
      goto out;
    printf("%-15s bulkhead %2u slots, retry %s, breaker %s\n", a->bulkhead,
           bc.max_concurrent, bw_retry_policy_name(a->retry),
           bw_breaker_name(a->breaker));
  }
  /* The fourth preset: the recovery worker's (3 slots, 120 s), idle here. */
  bw_bulkhead_config_preset(&bc, "recovery_worker");
  bc.clock = clock_;
  if ((recovery = bw_bulkhead_new(&bc, &err)) == NULL) goto out;
  printf("%-15s bulkhead %2u slots (idle in this story)\n\n",
         bw_bulkhead_name(recovery), bc.max_concurrent);

  for (int order = 1; order <= 5; order++) {
    payment_down = order >= 3;
    if (order == 3) printf("-- payment_api goes down --\n");
    serve(&agents[AGENT_BOOKING], order, 0);
    serve(&agents[AGENT_SEARCH], order, 0);
    serve(&agents[AGENT_PAYMENT], order, order == 2 ? 4000 : 1234);
  }

  printf("\n");
  for (int i = 0; i < AGENT_COUNT; i++) {
    const agent_t *a = &agents[i];
    printf("%-15s %" PRIu64 " calls: %" PRIu64 " ok, gave up %" PRIu64
           " permanent / %" PRIu64 " rejected / %" PRIu64 " exhausted; %" PRIu64
           " dependency calls, %" PRIu64 " breaker rejections\n",
           a->bulkhead, a->calls, a->ok, a->gave_up[BW_GIVEUP_PERMANENT],
           a->gave_up[BW_GIVEUP_REJECTED], a->gave_up[BW_GIVEUP_EXHAUSTED],
           a->dependency_calls, a->rejected_by_breaker);
  }
  bw_registry_foreach_breaker(reg, print_breaker, NULL);
  status = 0;
out:
  if (status != 0) fprintf(stderr, "agents_breakers: %s\n", err.message);
  for (int i = 0; i < AGENT_COUNT; i++) {
    bw_registry_put(reg, agents[i].breaker);
    bw_retry_policy_free(agents[i].retry);
    bw_bulkhead_free(agents[i].bh);
  }
  bw_bulkhead_free(recovery);
  bw_registry_free(reg);
  bw_clock_free(clock_);
  return status;
}

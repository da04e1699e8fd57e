/* Component sim: library libbreakwater_sim, pkg-config module breakwater-sim,
 * CMake target breakwater::sim. */
/* breakwater — the lab: the Polly lab's retry storm as named modes (the policy
 * kit of each) and a virtual-time run of one mode against the simulated
 * partner. `breakwater lab storm` runs these in virtual time and
 * `breakwater storm` runs the same kits over real HTTP, so the two agree.
 *
 * Modes (docs/lab.md explains each):
 * - naive: 3 attempts, no wait, every non-2xx and timeout retried (the
 *   Polly lab's harmful "fix");
 * - polly: the Polly lab's Polly pipeline: a retry (1 + 2 retries, decorrelated
 *   jitter, 200 ms base, 1.5 s cap, Retry-After not read) OUTSIDE a breaker
 *   (failure ratio 0.5 over 10 s, at least 20 calls, 15 s break) — a breaker
 *   rejection is never retried here (Polly would retry its
 *   BrokenCircuitException unless told not to);
 * - breakwater: the recommended pipeline: a 10 s deadline, an adaptive
 *   concurrency limit (AIMD; calls wait for a slot within the deadline), a
 *   breaker outside the retry (ratio 0.5 over 10 s, at least 20 calls, 5 s
 *   break), a retry inside (2 attempts, exponential 200 ms .. 2 s with full
 *   jitter, Retry-After honoured) with a token-bucket retry budget;
 * - oracle: the ideal the others are measured against: a fixed concurrency
 *   limit (a bulkhead) equal to the partner's true capacity, which the lab
 *   is told (oracle_limit), calls waiting for a slot within a 10 s
 *   deadline, no retry; in the virtual run a freed slot goes to the
 *   longest waiter at once (bw_sim_policy_pipeline_handoff), where the
 *   other modes' calls poll for one as the pipeline's drivers do.
 * Every mode bounds each attempt to attempt_timeout_ms (the Polly lab: 2 s).
 *
 * Library: breakwater_sim. Single-threaded per kit for the virtual run; a
 * kit on a real clock is as thread-safe as its objects (all are). */
#ifndef BREAKWATER_LAB_H
#define BREAKWATER_LAB_H

#include "breaker.h"
#include "budget.h"
#include "bulkhead.h"
#include "hedge.h"
#include "limiter.h"
#include "pipeline.h"
#include "retry.h"
#include "sim.h"
#include "throttle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bw_lab_mode_e {
  BW_LAB_NAIVE = 0,
  BW_LAB_POLLY = 1,
  BW_LAB_BREAKWATER = 2,
  BW_LAB_ORACLE = 3,
  BW_LAB__COUNT = 4
} bw_lab_mode_t;

/* "naive", "polly", "breakwater", "oracle" or "unknown". */
BW_EXTERN const char *bw_lab_mode_name(bw_lab_mode_t m);
/* Parses a mode name: BW_OK, or BW_E_NOTFOUND for anything else. */
BW_EXTERN int bw_lab_mode_parse(const char *s, bw_lab_mode_t *out);
/* Whether the mode hands a freed slot to its longest waiter at once
 * (bw_sim_policy_pipeline_handoff in virtual time, the event driver's
 * handoff over real HTTP): the oracle and the breakwater mode, whose
 * limiter's startup is tuned for it (docs/limiter.md, "Slots handed
 * off"). The other modes' slot waits poll. */
BW_EXTERN bool bw_lab_mode_hands_off(bw_lab_mode_t m);

typedef struct bw_lab_kit_config_s {
  bw_lab_mode_t mode;
  const bw_clock_t *clock;    /* the strategies' clock; default monotonic */
  int64_t attempt_timeout_ms; /* default 2000, 1..86400000 */
  uint64_t seed;              /* jitter; default 4 (0 is refused: runs must
                                 be reproducible) */
  uint32_t max_limit;         /* breakwater: the limiter's ceiling; default
                                 1000, 1..1000000 */
  uint32_t oracle_limit;      /* oracle: the fixed limit, the partner's true
                                 capacity (whoever runs the lab sets it from
                                 the partner's); default 400, 1..1000000 */
  bw_sink_t *sink;            /* optional: breaker and retry events */
  double sre_k; /* breakwater: a client-side throttle (throttle.h) with this
                   K inside the retry, before the limiter; default 0 (none),
                   else in [1, 10] */
} bw_lab_kit_config_t;

/* The policy objects of one mode. Read the pointers (NULL when the mode has
 * no such object); change none. */
typedef struct bw_lab_kit_s {
  bw_lab_mode_t mode;
  bw_pipeline_t *pipeline;
  bw_retry_policy_t *retry;
  bw_breaker_t *breaker;   /* polly, breakwater */
  bw_limiter_t *limiter;   /* breakwater */
  bw_budget_t *budget;     /* breakwater */
  bw_bulkhead_t *bulkhead; /* oracle */
  bw_throttle_t *throttle; /* breakwater with sre_k */
} bw_lab_kit_t;

/* Fills the defaults (mode naive). NULL is ignored. */
BW_EXTERN void bw_lab_kit_config_init(bw_lab_kit_config_t *cfg);
/* Builds a mode's objects into *kit. BW_OK; BW_E_INVAL with err naming the
 * field; BW_E_NOMEM (nothing is left allocated). */
BW_EXTERN int bw_lab_kit_init(bw_lab_kit_t *kit, const bw_lab_kit_config_t *cfg,
                              bw_error_t *err);
/* Frees a kit's objects (NULL and a zeroed kit are fine). */
BW_EXTERN void bw_lab_kit_destroy(bw_lab_kit_t *kit);

/* One timeline sample: the interval (t_ms - sample_ms, t_ms]. */
typedef struct bw_lab_sample_s {
  int64_t t_ms;               /* since the run's start */
  uint32_t partner_in_flight; /* now */
  uint64_t ok;                /* 2xx answers in the interval */
  uint64_t throttled;         /* 429 answers in the interval */
  uint64_t timeouts;          /* attempts timed out in the interval */
  uint64_t network_calls;     /* attempts sent in the interval */
  uint64_t completed;         /* logical requests ended, so far */
  bw_state_t breaker;         /* now (CLOSED when the mode has none) */
  uint32_t limit;             /* the limiter's limit now (0 if none) */
} bw_lab_sample_t;

typedef void (*bw_lab_sample_fn)(void *userdata, const bw_lab_sample_t *s);
/* Called once at the end of a run with the mode's objects, before they are
 * freed (their metrics are final then); the kit is valid only during the
 * call. */
typedef void (*bw_lab_kit_fn)(void *userdata, const bw_lab_kit_t *kit);

/* Builds a run's kit instead of its mode's own (the breakwater command's
 * --config: the breakwater mode from a configuration file), on the run's
 * virtual clock and sink. BW_OK with kit->pipeline set, or an error code
 * with err filled; free_kit is called in both cases at the end. */
typedef int (*bw_lab_make_kit_fn)(void *userdata, const bw_clock_t *clock,
                                  bw_sink_t *sink, bw_lab_kit_t *kit,
                                  bw_error_t *err);
typedef void (*bw_lab_free_kit_fn)(void *userdata, bw_lab_kit_t *kit);

typedef struct bw_lab_run_config_s {
  bw_lab_mode_t mode;
  bw_sim_partner_config_t
      partner;                /* filled by init with the Polly lab's model */
  uint32_t clients;           /* logical requests; default 800 */
  bw_sim_arrival_t arrival;   /* default BURST */
  int64_t ramp_ms;            /* RAMP: default 10000 */
  int64_t attempt_timeout_ms; /* default 2000 */
  uint64_t seed;              /* every generator derives from it;
                                 default 4, != 0 */
  uint32_t max_limit;         /* see bw_lab_kit_config_t */
  int64_t sample_ms;          /* timeline interval; default 100 */
  bw_lab_sample_fn on_sample; /* optional */
  void *userdata;
  bw_sink_t *sink;      /* optional: the kit's breaker and retry events */
  bw_lab_kit_fn on_kit; /* optional: the kit at the end of a run that
                           completed */
  void *kit_userdata;
  bw_lab_make_kit_fn make_kit; /* optional: the kit, instead of the mode's */
  bw_lab_free_kit_fn free_kit; /* required with make_kit */
  void *make_kit_userdata;
  double sre_k; /* see bw_lab_kit_config_t; default 0 (none) */
} bw_lab_run_config_t;

/* What a run produced: the simulator's results plus the kit's view. */
typedef struct bw_lab_results_s {
  bw_sim_results_t sim;
  uint64_t breaker_opens;
  uint64_t breaker_rejected;
  uint32_t final_limit;      /* 0 without a limiter */
  uint64_t budget_refused;   /* retries the budget refused */
  uint64_t failed_deadline;  /* requests that gave up on their deadline */
  uint64_t throttle_refused; /* attempts the client-side throttle refused */
} bw_lab_results_t;

/* Fills the defaults (mode breakwater, the Polly lab's partner). */
BW_EXTERN void bw_lab_run_config_init(bw_lab_run_config_t *cfg);
/* Runs one mode in virtual time: a fresh scheduler, partner, kit and
 * client; the timeline sampled every sample_ms while requests are open.
 * Deterministic: the same configuration gives the same results and
 * samples. BW_OK; BW_E_INVAL (err names the field); BW_E_NOMEM. */
BW_EXTERN int bw_lab_run_virtual(const bw_lab_run_config_t *cfg,
                                 bw_lab_results_t *out, bw_error_t *err);

/* ==== the hedging case ================================================== */

/* Hedging against a partner with a slow tail: the same requests (Poisson
 * arrivals, the same partner seed) run twice on fresh schedulers, without
 * and with a hedge policy (hedge.h) whose hedges a ratio budget of its own
 * caps at budget_percent of requests. `breakwater lab hedge` runs it;
 * docs/lab.md shows the figures. */
typedef struct bw_lab_hedge_config_s {
  bw_sim_partner_config_t partner; /* init: the Polly lab's partner with a
                                      5 % tail of 2000 ms (tail_ratio 0.05,
                                      tail_ms 2000) */
  uint32_t requests;               /* default 10000 */
  double rate_per_s;       /* default 100 (far under the capacity: the tail,
                              not overload, makes the p99) */
  int64_t timeout_ms;      /* per copy; default 10000 */
  uint64_t seed;           /* the partner's and the arrivals' generators
                              derive from it; default 4, != 0 */
  bw_hedge_config_t hedge; /* init: bw_hedge_config_init (the p95 of the
                              last 200 latencies, one hedge); its budget
                              and budget_requests are the lab's */
  double budget_percent;   /* hedges at most this % of requests (a ratio
                              budget over 10 s, no floor); default 10, in
                              [0, 100]; -1 = no budget */
} bw_lab_hedge_config_t;

typedef struct bw_lab_hedge_results_s {
  bw_sim_hedge_results_t off; /* no hedging */
  bw_sim_hedge_results_t on;  /* hedged */
  int64_t final_delay_ms;     /* the hedge's delay at the end of the run */
} bw_lab_hedge_results_t;

/* Fills the defaults above. NULL is ignored. */
BW_EXTERN void bw_lab_hedge_config_init(bw_lab_hedge_config_t *cfg);
/* Runs both. BW_OK; BW_E_INVAL with err naming the field ("partner.tail_ms",
 * "hedge.quantile", "budget_percent", ...); BW_E_NOMEM. */
BW_EXTERN int bw_lab_hedge_run(const bw_lab_hedge_config_t *cfg,
                               bw_lab_hedge_results_t *out, bw_error_t *err);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_LAB_H */

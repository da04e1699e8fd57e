/* Component sim: library libbreakwater_sim, pkg-config module breakwater-sim,
 * CMake target breakwater::sim. */
/* breakwater — the virtual-time simulator: a discrete-event scheduler, a
 * partner model (the Polly lab's throttling payment gateway) and a client model
 * with pluggable per-request policies. It is a *driver* (ARCHITECTURE.md): the
 * policy objects it exercises are the real ones, unmodified; they read the
 * scheduler's virtual clock through an ordinary bw_clock_t.
 *
 *   bw_sim_t *sim = bw_sim_new(NULL, &err);
 *   bw_breaker_config_t bc; bw_breaker_config_init(&bc);
 *   bc.clock = bw_sim_clock(sim);            // the breaker lives in sim time
 *   ...
 *   bw_sim_schedule_in(sim, 15 * BW_NS_PER_S, my_fn, my_data, NULL);
 *   bw_sim_run(sim);                          // fires events in time order
 *
 * Everything here is single-threaded: a simulator, its partner and its
 * clients belong to one thread (the virtual clock may be read from any
 * thread, but only while no run is in progress). Results are deterministic:
 * the same configuration and seeds give byte-identical results.
 *
 * Library: breakwater_sim (links the core). docs/sim.md is the user guide. */
#ifndef BREAKWATER_SIM_H
#define BREAKWATER_SIM_H

#include "clock.h"
#include "common.h"
#include "limit.h"
#include "rand.h"
#include "retry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== the scheduler ==================================================== */

typedef struct bw_sim_s bw_sim_t;

/* A scheduled event's handle, for bw_sim_cancel. 0 is never a valid handle.
 * A handle goes stale once its event fired or was cancelled; a stale handle
 * is never mistaken for a later event (slots carry a generation). */
typedef uint64_t bw_sim_event_id_t;

/* An event's callback: runs at its virtual time (bw_sim_now_ns), may
 * schedule and cancel events (even at the current time: they run later in
 * this same instant, in insertion order) and may call bw_sim_stop. It must
 * not free the simulator or start a nested run (BW_E_INVAL). */
typedef void (*bw_sim_fn)(bw_sim_t *sim, void *user);

typedef struct bw_sim_config_s {
  int64_t start_ns;        /* the virtual clock's first reading; default 0,
                              >= 0 */
  uint32_t initial_events; /* event slots preallocated; default 1024, >= 1;
                              storage doubles when full and is reused from a
                              free list, so a steady state never allocates */
} bw_sim_config_t;

/* Fills the documented defaults (NULL is ignored). */
BW_EXTERN void bw_sim_config_init(bw_sim_config_t *cfg);
/* Creates a scheduler (cfg NULL = defaults). NULL with err set (field named)
 * on a bad configuration, or BW_E_NOMEM. */
BW_EXTERN bw_sim_t *bw_sim_new(const bw_sim_config_t *cfg, bw_error_t *err);
/* Frees a scheduler and drops its pending events (their callbacks never
 * run). NULL is fine. Not from inside a callback. */
BW_EXTERN void bw_sim_free(bw_sim_t *sim);

/* The virtual clock: now_ns returns the scheduler's current time. Owned by
 * the scheduler, valid until bw_sim_free. Give it to breakers, budgets,
 * limiters: they then run in virtual time. */
BW_EXTERN const bw_clock_t *bw_sim_clock(const bw_sim_t *sim);
/* The current virtual time. During a callback: the event's time. */
BW_EXTERN int64_t bw_sim_now_ns(const bw_sim_t *sim);

/* Schedules fn(sim, user) at the absolute virtual time at_ns. Events run in
 * (time, insertion order): two events at the same time run in the order they
 * were scheduled. *id (if not NULL) receives the handle. BW_E_INVAL for NULL
 * sim or fn or at_ns before now; BW_E_NOMEM if storage could not grow (the
 * scheduler is unchanged). */
BW_EXTERN int bw_sim_schedule_at(bw_sim_t *sim, int64_t at_ns, bw_sim_fn fn,
                                 void *user, bw_sim_event_id_t *id);
/* Schedules fn at now + delay_ns (delay_ns >= 0, else BW_E_INVAL). */
BW_EXTERN int bw_sim_schedule_in(bw_sim_t *sim, int64_t delay_ns, bw_sim_fn fn,
                                 void *user, bw_sim_event_id_t *id);
/* Cancels a pending event: its callback will not run. BW_OK, or
 * BW_E_NOTFOUND when the handle is stale (fired, cancelled, or never
 * issued), BW_E_INVAL for NULL sim. O(1); the storage is reclaimed lazily
 * and compacted when cancelled entries outnumber live ones. */
BW_EXTERN int bw_sim_cancel(bw_sim_t *sim, bw_sim_event_id_t id);
/* Events scheduled and not yet fired nor cancelled. */
BW_EXTERN size_t bw_sim_pending(const bw_sim_t *sim);
/* The time of the next pending event, or -1 when none is pending. */
BW_EXTERN int64_t bw_sim_next_ns(bw_sim_t *sim);
/* Events fired since creation. */
BW_EXTERN uint64_t bw_sim_fired(const bw_sim_t *sim);

/* Runs until no event is pending (or bw_sim_stop). The clock ends at the
 * last event's time. Returns the events fired by this call. */
BW_EXTERN uint64_t bw_sim_run(bw_sim_t *sim);
/* Runs every event with time <= until_ns (including those scheduled
 * meanwhile), then sets the clock to until_ns if that is later (the clock
 * never goes back; a stopped run leaves the clock at the last event). Returns
 * the events fired. */
BW_EXTERN uint64_t bw_sim_run_until(bw_sim_t *sim, int64_t until_ns);
/* Fires at most n events (fewer if none is left or on bw_sim_stop). Returns
 * the events fired. */
BW_EXTERN uint64_t bw_sim_run_for(bw_sim_t *sim, uint64_t n);
/* Makes the run in progress return after the current callback. Pending
 * events stay pending; a later run resumes with them. */
BW_EXTERN void bw_sim_stop(bw_sim_t *sim);

/* ==== the partner model (the Polly lab) =====================================
 */

/* The simulated partner: a capacity C of requests in flight. A request that
 * arrives while the in-flight count (itself included) is <= C answers 200
 * after a latency uniform in [ok_min_ms, ok_max_ms] (or 500 with
 * probability error_ratio, after the same latency); above C it waits
 * uniform [slow_min_ms, slow_max_ms] and answers 429 with probability
 * throttle_ratio, else 200. A request stays in flight for its whole latency,
 * even if the client stopped waiting for it (a client timeout abandons the
 * attempt on the client's side only). The decision logic (admit / done) does
 * no scheduling, so a real HTTP server can reuse it. Not thread-safe: a
 * multi-threaded server takes a lock around admit and done. */
typedef struct bw_sim_partner_s bw_sim_partner_t;

typedef struct bw_sim_partner_config_s {
  uint32_t capacity;     /* requests in flight served normally; default 400,
                            >= 1 */
  int64_t ok_min_ms;     /* normal latency range; default 80, >= 0 */
  int64_t ok_max_ms;     /* default 180, >= ok_min_ms */
  int64_t slow_min_ms;   /* latency above capacity; default 800, >= 0 */
  int64_t slow_max_ms;   /* default 2500, >= slow_min_ms */
  double throttle_ratio; /* share of 429 above capacity; default 0.6, in
                            [0, 1] */
  int64_t retry_after_s; /* Retry-After sent with a 429, in seconds; default
                            -1 = no header; 0..86400 */
  uint64_t seed;         /* the model's generator; default 4 */
  /* A slow tail (hedging's case): an answer under capacity takes tail_ms
   * instead of its ok latency with probability tail_ratio (one more draw
   * per request under capacity, made only when tail_ratio > 0, so a model
   * without a tail draws exactly as before). */
  double tail_ratio; /* default 0 (no tail), in [0, 1] */
  int64_t tail_ms;   /* default 2000, 0..86400000 */
  /* A flaky backend: an answer under capacity is a 500 instead of a 200
   * with probability error_ratio, after the latency it would have had (its
   * ok latency, or tail_ms when the tail drew it: the two are independent,
   * so an answer can be both slow and an error). One more draw per request
   * under capacity, after the tail's, made only when error_ratio > 0, so a
   * model without errors (tail or not) draws exactly as before. Answers
   * above capacity are never 500s: overload is the 429's business. */
  double error_ratio; /* default 0 (no errors), in [0, 1] */
} bw_sim_partner_config_t;

/* One admitted request's fate, decided at arrival. */
typedef struct bw_sim_reply_s {
  int status;             /* 200, 429, or 500 (error_ratio) */
  int64_t latency_ms;     /* how long until the answer */
  int64_t retry_after_ms; /* the 429's Retry-After in ms, or -1 (none) */
} bw_sim_reply_t;

typedef struct bw_sim_partner_stats_s {
  uint64_t received; /* requests admitted = status_200 + status_429 +
                        status_500 */
  uint64_t status_200;
  uint64_t status_429;
  uint64_t over_capacity; /* requests that arrived above capacity */
  uint64_t tail;          /* answers that took tail_ms */
  uint64_t completed;     /* bw_sim_partner_done calls */
  uint32_t in_flight;     /* received - completed */
  uint32_t max_in_flight; /* the highest in_flight ever seen */
  uint64_t status_500;    /* the error_ratio's 500s (all under capacity) */
} bw_sim_partner_stats_t;

/* Fills the documented defaults (the Polly lab's numbers). NULL is ignored. */
BW_EXTERN void bw_sim_partner_config_init(bw_sim_partner_config_t *cfg);
/* Checks a configuration: BW_OK or BW_E_INVAL with err naming the field. */
BW_EXTERN int bw_sim_partner_config_validate(const bw_sim_partner_config_t *cfg,
                                             bw_error_t *err);
/* Creates a partner (cfg NULL = defaults). NULL with err set on a bad
 * configuration or BW_E_NOMEM. */
BW_EXTERN bw_sim_partner_t *bw_sim_partner_new(
    const bw_sim_partner_config_t *cfg, bw_error_t *err);
/* Frees a partner. NULL is fine. */
BW_EXTERN void bw_sim_partner_free(bw_sim_partner_t *p);

/* A request arrives at now_ns: counts it in flight and decides its status
 * and latency (drawing from the partner's generator: under capacity the ok
 * latency, then the tail's draw when tail_ratio > 0, then the error's when
 * error_ratio > 0; above capacity two draws, latency then 429). The caller must
 * call bw_sim_partner_done once the latency has elapsed. now_ns is taken so
 * that time-dependent models (outages, warm-up) can share this signature; the
 * Polly-lab model ignores it. A NULL partner answers {0, 0, -1}. */
BW_EXTERN bw_sim_reply_t bw_sim_partner_admit(bw_sim_partner_t *p,
                                              int64_t now_ns);
/* A request's latency elapsed: it leaves the in-flight count. BW_OK;
 * BW_E_INVAL for NULL or when nothing is in flight (a done without an
 * admit). */
BW_EXTERN int bw_sim_partner_done(bw_sim_partner_t *p);
/* A snapshot of the counters. Zeroes *out for a NULL partner. */
BW_EXTERN void bw_sim_partner_stats(const bw_sim_partner_t *p,
                                    bw_sim_partner_stats_t *out);

/* ==== the client model ================================================= */

/* When the logical requests arrive. */
typedef enum bw_sim_arrival_e {
  BW_SIM_ARRIVAL_BURST = 0,  /* all at the start time */
  BW_SIM_ARRIVAL_RAMP = 1,   /* request i at start + floor(ramp_ms * 1e6 * i
                                / requests) ns: evenly over ramp_ms */
  BW_SIM_ARRIVAL_POISSON = 2 /* exponential gaps of mean 1 / rate_per_s
                                (seeded); the first arrives at start */
} bw_sim_arrival_t;

/* "burst", "ramp", "poisson" or "unknown". */
BW_EXTERN const char *bw_sim_arrival_name(bw_sim_arrival_t a);

/* What a policy answers. */
typedef enum bw_sim_action_e {
  BW_SIM_ACT_GO = 0,     /* before: send the attempt now */
  BW_SIM_ACT_WAIT = 1,   /* before: ask again after delay_ms; after: retry —
                            ask `before` for the next attempt after
                            delay_ms */
  BW_SIM_ACT_STOP = 2,   /* after: the request ends with this attempt's
                            outcome (429, timeout or another status) */
  BW_SIM_ACT_REJECT = 3, /* the policy's own component refused (breaker,
                            limiter...): the request ends as rejected, by
                            kind; nothing is sent */
  BW_SIM_ACT_GIVE_UP = 4 /* the policy gave up for its own reason (budget,
                            deadline, elapsed, Retry-After too long) */
} bw_sim_action_t;

/* Who refused a request (BW_SIM_ACT_REJECT). */
typedef enum bw_sim_reject_e {
  BW_SIM_REJECT_BREAKER = 0,
  BW_SIM_REJECT_LIMITER = 1,
  BW_SIM_REJECT_BULKHEAD = 2,
  BW_SIM_REJECT_RATELIMIT = 3,
  BW_SIM_REJECT_BUDGET = 4,
  BW_SIM_REJECT_OTHER = 5,
  BW_SIM_REJECT__COUNT = 6
} bw_sim_reject_t;

/* "breaker", "limiter", "bulkhead", "ratelimit", "budget", "other" or
 * "unknown". */
BW_EXTERN const char *bw_sim_reject_name(bw_sim_reject_t k);

typedef struct bw_sim_decision_s {
  bw_sim_action_t action;
  int64_t delay_ms;       /* WAIT: >= 0 */
  bw_sim_reject_t reject; /* REJECT: the kind */
  int64_t timeout_ms;     /* GO: this attempt's timeout when it is > 0 and
                             shorter than the client's timeout_ms (a
                             deadline's remainder); 0 = the client's */
  const void *wake_key;   /* WAIT: non-NULL for a wait on a slot, which
                             may end early: when any attempt ends, the
                             client asks its slot waiters again at once,
                             oldest first; NULL = a timed wait */
} bw_sim_decision_t;

/* What a policy hook sees. */
typedef struct bw_sim_call_s {
  uint32_t request;   /* the logical request's index, 0-based */
  uint32_t attempt;   /* before: the attempt about to be made (1-based);
                         after: the attempt that just finished */
  int64_t arrival_ns; /* when the logical request arrived */
  void *state;        /* this request's policy state: state_size bytes,
                         zeroed at arrival, 16-byte aligned */
  /* after only: */
  int64_t sent_ns;        /* when the attempt was sent */
  int status;             /* the HTTP status; 0 when timed out */
  bool timed_out;         /* no answer within timeout_ms */
  int64_t retry_after_ms; /* the answer's Retry-After in ms, or -1 */
} bw_sim_call_t;

/* A per-request policy: the hooks the client model calls. The lab plugs
 * pipelines (naive, Polly-like, breakwater) in through this. The client
 * never frees anything here.
 *   begin  (optional) once, when the request arrives;
 *   before (optional, NULL = always GO) before every attempt: GO, WAIT,
 *          REJECT or GIVE_UP;
 *   after  (required) after every attempt: WAIT (retry after delay_ms;
 *          GO means WAIT 0), STOP, REJECT or GIVE_UP. After a 2xx the
 *          request succeeds whatever `after` answers (it is still called,
 *          so a policy can release permits and report the success). */
typedef struct bw_sim_policy_s {
  const char *name;  /* for summaries; may be NULL */
  void *data;        /* shared by every request; passed to each hook */
  size_t state_size; /* per-request state bytes; <= 65536 */
  void (*begin)(void *data, bw_sim_call_t *call, int64_t now_ns);
  bw_sim_decision_t (*before)(void *data, bw_sim_call_t *call, int64_t now_ns);
  bw_sim_decision_t (*after)(void *data, bw_sim_call_t *call, int64_t now_ns);
} bw_sim_policy_t;

/* The built-in "naive" policy (the Polly lab's Function.cs loop): up to
 * max_attempts attempts, no wait, retrying every non-2xx and every timeout.
 * Fills *out (its data holds the count; no allocation). BW_E_INVAL for NULL
 * out or max_attempts 0. */
BW_EXTERN int bw_sim_policy_naive(bw_sim_policy_t *out, uint32_t max_attempts);

/* The built-in "retry" policy: drives a real bw_retry_t (retry.h) per request
 * on the virtual clock. A 2xx is OK; a timeout, 429 or 5xx TRANSIENT (with
 * the Retry-After hint); any other status PERMANENT. bw_retry_next's
 * BW_RETRY waits its delay; a give-up for exhausted or permanent stops with
 * the last outcome; any other give-up reason is GIVE_UP. The retry policy is
 * borrowed and must outlive the runs. For reproducible jitter give it a
 * non-zero seed, and a fresh policy per run (its iterators' streams follow a
 * per-policy counter). BW_E_INVAL for NULL arguments. */
BW_EXTERN int bw_sim_policy_retry(bw_sim_policy_t *out,
                                  const bw_retry_policy_t *retry);

/* A policy that runs every request through a pipeline (pipeline.h) on the
 * virtual clock: its steps become the hooks' answers. A 2xx is OK; a timeout
 * TRANSIENT; any other status as bw_http_classify says, with the answer's
 * Retry-After as the hint. An attempt's timeout is the pipeline's
 * attempt_timeout_ms when shorter than the client's. When the call ends:
 * success, or EXHAUSTED / PERMANENT: STOP (the last attempt's outcome);
 * BREAKER / LIMIT / RATELIMIT / BUDGET: REJECT with that kind; any other
 * failure: GIVE_UP. The pipeline is borrowed and must outlive the runs; the
 * strategies must read bw_sim_clock. BW_E_INVAL for NULL arguments. */
struct bw_pipeline_s;
BW_EXTERN int bw_sim_policy_pipeline(bw_sim_policy_t *out,
                                     const struct bw_pipeline_s *pl);
/* The same, except that a call waiting for a slot (bw_pipeline_slot_wait)
 * does not poll: its WAIT carries the limit as wake_key, so the client asks
 * it again as soon as any attempt ends, oldest waiter first. A freed slot
 * then goes to the longest waiter at once, as an ideal scheduler would give
 * it (the lab's oracle). bw_sim_policy_pipeline polls at the pipeline's
 * poll_ms, as the drivers do. */
BW_EXTERN int bw_sim_policy_pipeline_handoff(bw_sim_policy_t *out,
                                             const struct bw_pipeline_s *pl);

#define BW_SIM_MAX_REQUESTS 50000000u

typedef struct bw_sim_client_config_s {
  uint32_t requests;             /* logical requests; default 800,
                                    1..BW_SIM_MAX_REQUESTS */
  bw_sim_arrival_t arrival;      /* default BURST */
  int64_t ramp_ms;               /* RAMP: the spread; default 10000, >= 1 */
  double rate_per_s;             /* POISSON: arrivals per second; default 400,
                                    finite, > 0 */
  int64_t timeout_ms;            /* per attempt; default 2000, >= 1 */
  uint64_t seed;                 /* the arrival generator; default 4 */
  const bw_sim_policy_t *policy; /* required; copied at creation */
} bw_sim_client_config_t;

/* What a run produced. Every field is an integer, and the struct is zeroed
 * before it is filled, so two runs can be compared with memcmp.
 * Conservation: requests = completed + still open (0 after a full run);
 * completed = successes + failed_429 + failed_timeout + failed_status +
 * rejected + gave_up; rejected = the sum of rejected_by[];
 * network_calls = attempts_200 + attempts_429 + attempts_other +
 * attempts_timeout + attempts still waiting. */
typedef struct bw_sim_results_s {
  uint64_t requests;       /* logical requests that arrived */
  uint64_t completed;      /* logical requests that ended */
  uint64_t successes;      /* ended on a 2xx */
  uint64_t failed_429;     /* ended on a 429 (the policy stopped) */
  uint64_t failed_timeout; /* ended on a timeout */
  uint64_t failed_status;  /* ended on another non-2xx status */
  uint64_t rejected;       /* refused by the policy before an attempt */
  uint64_t gave_up;        /* the policy gave up for its own reason */
  uint64_t rejected_by[BW_SIM_REJECT__COUNT];
  uint64_t network_calls; /* attempts sent to the partner */
  uint64_t attempts_200;  /* attempt outcomes as the client saw them */
  uint64_t attempts_429;
  uint64_t attempts_other;
  uint64_t attempts_timeout;
  uint64_t partner_received; /* the partner's counters at the end */
  uint64_t partner_max_in_flight;
  int64_t completion_ns;  /* from the client's start to the last logical
                             request's end */
  int64_t latency_p50_ns; /* logical request latency (arrival to end, every
                             completed request), nearest rank, exact */
  int64_t latency_p95_ns;
  int64_t latency_p99_ns;
  int64_t latency_max_ns;
  uint64_t events; /* scheduler events fired during the run */
} bw_sim_results_t;

typedef struct bw_sim_client_s bw_sim_client_t;

/* Fills the documented defaults (policy NULL). NULL is ignored. */
BW_EXTERN void bw_sim_client_config_init(bw_sim_client_config_t *cfg);
/* Checks a configuration: BW_OK or BW_E_INVAL with err naming the field. */
BW_EXTERN int bw_sim_client_config_validate(const bw_sim_client_config_t *cfg,
                                            bw_error_t *err);
/* Creates a client on a scheduler and a partner (both borrowed; they must
 * outlive it). Allocates all per-request storage now. NULL with err set on a
 * bad configuration or BW_E_NOMEM. */
BW_EXTERN bw_sim_client_t *bw_sim_client_new(bw_sim_t *sim,
                                             bw_sim_partner_t *partner,
                                             const bw_sim_client_config_t *cfg,
                                             bw_error_t *err);
/* Schedules the first arrival at the current virtual time (the client's
 * start). BW_E_INVAL if already started; BW_E_NOMEM. Then run the
 * scheduler. */
BW_EXTERN int bw_sim_client_start(bw_sim_client_t *c);
/* The first error met inside an event (BW_E_NOMEM when a schedule failed:
 * the run was stopped), or BW_OK. */
BW_EXTERN int bw_sim_client_error(const bw_sim_client_t *c);
/* Fills *out (zeroed first) from the requests completed so far. Sorts the
 * recorded latencies in place (hence not const). BW_E_INVAL for NULL. */
BW_EXTERN int bw_sim_client_results(bw_sim_client_t *c, bw_sim_results_t *out);
/* The counters so far, cheaply (no latency percentiles: those fields are
 * 0; the partner fields are read now): for timelines sampled during a run.
 * BW_E_INVAL for NULL. */
BW_EXTERN int bw_sim_client_counters(const bw_sim_client_t *c,
                                     bw_sim_results_t *out);
/* Frees a client. NULL is fine. Not while its events are pending in a
 * scheduler that will still run (free the scheduler first, or run it dry). */
BW_EXTERN void bw_sim_client_free(bw_sim_client_t *c);

/* One whole scenario: a fresh scheduler (at time 0) and partner, the client,
 * run until nothing is pending, results, everything freed. BW_OK, BW_E_INVAL
 * (err names the field) or BW_E_NOMEM. */
BW_EXTERN int bw_sim_run_scenario(const bw_sim_partner_config_t *partner,
                                  const bw_sim_client_config_t *client,
                                  bw_sim_results_t *out, bw_error_t *err);

/* Formats results as one line of "key=value" pairs (latencies in ms with
 * three decimals), e.g. "requests=800 successes=612 ...". Returns what
 * snprintf returns (the length it needed); NULL r formats nothing and
 * returns -1. */
BW_EXTERN int bw_sim_results_format(const bw_sim_results_t *r, char *buf,
                                    size_t size);

/* ==== the closed-loop gate ============================================= */

/* `clients` logical clients that always have work, each issuing its next
 * attempt as soon as the previous one ends, with a concurrency limit
 * (limit.h: a bulkhead or an adaptive limiter on bw_sim_clock) as the
 * admission gate: try_acquire before every attempt; a refused attempt is
 * not sent, waits backoff_ms and asks again (counted in `refused`). An
 * admitted attempt is released with SUCCESS on a 200 (its RTT is the
 * answer's latency), DROPPED on a 429, TIMED_OUT on a timeout (the client
 * stops waiting after timeout_ms and releases; the partner keeps the request
 * in flight until its latency ends). New attempts start until duration_ms;
 * then the run drains (every permit is released, every partner request
 * done) and the counters cover the whole run.
 *
 * Settling: after every release the gate's limit is compared with
 * [band_lo, band_hi]. settled_ns is the start of the last in-band stretch
 * that lasts to duration_ms (-1 if the limit is out of band then); the
 * partner's highest in-flight count and the limit's extremes are recorded
 * from that moment on (0 when settled_ns is -1). */
typedef struct bw_sim_gate_config_s {
  uint32_t clients;    /* default 800, 1..1000000 */
  int64_t duration_ms; /* default 60000, 1..86400000 */
  int64_t timeout_ms;  /* per attempt; default 2000, 1..86400000 */
  int64_t backoff_ms;  /* after a refusal; default 10, 1..86400000 */
  uint32_t band_lo;    /* default 340 */
  uint32_t band_hi;    /* default 460, >= band_lo */
  /* Optional: called every sample_ms (default 500, >= 1) from 0 to
   * duration_ms inclusive with the gate's limit and the partner's in-flight
   * count. */
  void (*on_sample)(void *userdata, int64_t now_ns, uint32_t limit,
                    uint32_t partner_in_flight);
  void *userdata;
  int64_t sample_ms;
} bw_sim_gate_config_t;

typedef struct bw_sim_gate_results_s {
  uint64_t asks;          /* try_acquire calls = network_calls + refused */
  uint64_t refused;       /* attempts the gate refused (not sent) */
  uint64_t network_calls; /* = ok + throttled + timeouts */
  uint64_t ok;            /* 200 in time */
  uint64_t throttled;     /* any other answer in time: 429, or a 500 of
                             error_ratio; released DROPPED */
  uint64_t timeouts;      /* no answer within timeout_ms */
  int64_t settled_ns;     /* see above; -1 = not settled */
  uint32_t max_in_flight_after_settle; /* the partner's */
  uint32_t limit_min_after_settle;
  uint32_t limit_max_after_settle;
  uint32_t final_limit;
  uint32_t partner_max_in_flight; /* over the whole run */
  uint64_t events;                /* scheduler events fired */
} bw_sim_gate_results_t;

/* Fills the documented defaults. NULL is ignored. */
BW_EXTERN void bw_sim_gate_config_init(bw_sim_gate_config_t *cfg);
/* Runs the closed loop on a fresh scheduler at time 0 whose clock the gate
 * must already read (create the scheduler, give bw_sim_clock(sim) to the
 * limiter, then call this). The partner is borrowed. BW_OK, BW_E_INVAL
 * (err names the field; NULL sim, partner, gate or out; or the gate refused
 * a release) or BW_E_NOMEM. After an error the run was stopped with events
 * pending that point into freed storage: free the scheduler, do not run
 * it again. */
BW_EXTERN int bw_sim_gate_run(bw_sim_t *sim, bw_sim_partner_t *partner,
                              bw_limit_t *gate, const bw_sim_gate_config_t *cfg,
                              bw_sim_gate_results_t *out, bw_error_t *err);

/* ==== the hedged client ================================================ */

/* `requests` logical requests arriving as a Poisson process, each sent to
 * the partner and, when a hedge policy is given (hedge.h), hedged: after
 * the policy's delay with no good answer, another copy is sent (the policy
 * decides how many and asks its budget). The first 200 wins: the request
 * ends there, the winning copy's own latency (its send to its answer) is
 * given to bw_hedge_record, and the copies still out are abandoned (the partner
 * keeps each in flight until its own latency ends, as it does for a
 * timeout). A copy that fails (a 429 or 500, or no answer within timeout_ms)
 * while none other is out sends the next hedge at once if the policy still
 * allows one; otherwise the request fails. Without a hedge policy this is
 * the baseline: one copy per request. Every copy is one network call. */
struct bw_hedge_s;
typedef struct bw_sim_hedge_config_s {
  uint32_t requests;        /* default 10000, 1..BW_SIM_MAX_REQUESTS */
  double rate_per_s;        /* Poisson arrivals; default 100, in [1e-6, 1e9] */
  int64_t timeout_ms;       /* per copy; default 10000, 1..86400000 */
  uint64_t seed;            /* the arrivals' generator; default 4 */
  struct bw_hedge_s *hedge; /* NULL: no hedging (borrowed) */
  bool idempotent;          /* default true: what bw_hedge_begin is told */
} bw_sim_hedge_config_t;

/* Conservation: requests = successes + failed; network_calls = requests +
 * hedges; hedge_wins <= hedges. */
typedef struct bw_sim_hedge_results_s {
  uint64_t requests;
  uint64_t successes;     /* ended on a 200 */
  uint64_t failed;        /* every copy failed (429, 500 or timeout) */
  uint64_t network_calls; /* copies sent */
  uint64_t hedges;        /* copies sent after the first */
  uint64_t hedge_wins;    /* requests whose winning answer was a hedge's */
  uint64_t hedges_denied; /* requests whose hedge the budget refused */
  uint64_t partner_tail;  /* partner answers that took its tail_ms */
  int64_t latency_p50_ns; /* arrival to end, every request, nearest rank */
  int64_t latency_p95_ns;
  int64_t latency_p99_ns;
  int64_t latency_max_ns;
} bw_sim_hedge_results_t;

/* Fills the documented defaults. NULL is ignored. */
BW_EXTERN void bw_sim_hedge_config_init(bw_sim_hedge_config_t *cfg);
/* Runs the requests on `sim` (at its current time; the hedge's budget, if
 * any, must read bw_sim_clock(sim)) against `partner` until every request
 * ended and the partner is idle. BW_OK; BW_E_INVAL with err naming the field
 * (NULL sim, partner, cfg or out; a field out of range); BW_E_NOMEM (the
 * run is stopped: free the scheduler). */
BW_EXTERN int bw_sim_hedge_run(bw_sim_t *sim, bw_sim_partner_t *partner,
                               const bw_sim_hedge_config_t *cfg,
                               bw_sim_hedge_results_t *out, bw_error_t *err);

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_SIM_H */

/* Scenario tests: the adaptive limiters as the admission gate of clients
 * that always have work, against the Polly lab's partner, in virtual time
 * (bw_sim_gate_run, sim.h), and the limiter rules those runs rely on.
 *
 * Issue 4's acceptance, for each algorithm with its documented defaults
 * (max_limit raised to 1000: the default 200 is below the capacity): 800
 * closed-loop clients, 60 s of virtual time, capacity 400, per-attempt
 * timeout 2000 ms, a refused attempt waits 10 ms and asks again (not a
 * network call). The limit must be within +-15 % of the capacity ([340,
 * 460]) within 10 s and stay there to the end; >= 99 % of the network calls
 * must succeed; the partner's in-flight count must stay <= 460 once the
 * limit has settled. Deterministic: fixed seeds, no real time.
 *
 * All three pass it with the limiter's default guards (a timed-out call
 * keeps its slot for half its round trip; growth stops just above the
 * proven in-flight level and below a recently disproven one: limiter.h);
 * VEGAS decides once per round trip on the round's smallest RTT, which
 * filters out the partner's latency jitter (80-180 ms, uniform) that its
 * per-sample estimate used to read as queueing
 * (docs/internals/limiter-settling.md). bench/bench_limiter_sim prints the
 * same figures. Also: the limiter rules the runs rely on, and the gate
 * driver's conservation, drain
 * and determinism. */
#include "breakwater/limiter.h"
#include "breakwater/sim.h"
#include "bw_test.h"

#define MS BW_NS_PER_MS

/* ==== the limiter rules the scenario relies on =========================== */

static bw_limiter_t *limiter_at(bw_clock_t *clock, bw_limiter_algorithm_t alg,
                                uint32_t initial) {
  bw_limiter_config_t cfg;
  bw_error_t err;
  bw_limiter_t *lim;
  bw_limiter_config_init(&cfg);
  cfg.algorithm = alg;
  cfg.initial_limit = initial;
  cfg.max_limit = 1000;
  cfg.clock = clock;
  lim = bw_limiter_new(&cfg, &err);
  if (lim == NULL) fail_msg("bw_limiter_new: %s", err.message);
  return lim;
}

static bw_permit_t take(bw_limiter_t *lim) {
  bw_permit_t p;
  assert_status(bw_limiter_try_acquire(lim, &p), BW_OK);
  return p;
}

static void give(bw_limiter_t *lim, bw_permit_t *p, bw_limit_outcome_t o) {
  assert_status(bw_limiter_release(lim, p, o), BW_OK);
}

/* Calls already in flight when a drop decreased the limit report the same
 * congestion: their drops are counted but decrease nothing more; a call
 * admitted after the decrease may decrease again. */
static void one_decrease_per_congestion_event(void **state) {
  static const bw_limiter_algorithm_t algs[2] = {BW_LIMITER_AIMD,
                                                 BW_LIMITER_GRADIENT2};
  (void)state;
  for (int a = 0; a < 2; a++) {
    bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
    bw_limiter_t *lim = limiter_at(clock, algs[a], 10);
    bw_limiter_stats_t s;
    bw_permit_t p[5], q;
    for (int i = 0; i < 5; i++)
      p[i] = take(lim);
    bw_clock_manual_advance(clock, 100 * MS);
    give(lim, &p[0], BW_LIMIT_DROPPED);
    assert_u64_eq(bw_limiter_limit(lim), 9); /* floor(10 * 0.9) */
    for (int i = 1; i < 5; i++)
      give(lim, &p[i], BW_LIMIT_DROPPED);
    bw_limiter_stats(lim, &s);
    assert_u64_eq(s.limit, 9); /* the same event */
    assert_u64_eq(s.drops, 5);
    q = take(lim);
    give(lim, &q, BW_LIMIT_DROPPED);
    /* a new event: floor(9 * 0.9) = 8 (Gradient2: 9 * 0.9 = 8.1) */
    assert_u64_eq(bw_limiter_limit(lim), 8);
    bw_limiter_free(lim);
    bw_clock_free(clock);
  }
}

/* AIMD: a drop backs off from the limit in force when the dropped call was
 * admitted, if the limit grew since (slow start outran the signal). */
static void aimd_backs_off_from_the_limit_at_acquire(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_limiter_t *lim = limiter_at(clock, BW_LIMITER_AIMD, 10);
  bw_permit_t held[10], p;
  (void)state;
  for (int i = 0; i < 10; i++)
    held[i] = take(lim); /* admitted at limit 10 */
  /* Four successes, each acquired with 10 in flight (saturated): 10 -> 14. */
  give(lim, &held[9], BW_LIMIT_SUCCESS);
  for (int i = 0; i < 2; i++) {
    p = take(lim);
    give(lim, &p, BW_LIMIT_SUCCESS);
  }
  assert_u64_eq(bw_limiter_limit(lim), 13);
  p = take(lim);
  give(lim, &p, BW_LIMIT_SUCCESS);
  assert_u64_eq(bw_limiter_limit(lim), 14);
  give(lim, &held[0], BW_LIMIT_DROPPED);
  assert_u64_eq(bw_limiter_limit(lim), 9); /* floor(10 * 0.9), not 12 */
  for (int i = 1; i < 9; i++)
    give(lim, &held[i], BW_LIMIT_IGNORED);
  bw_limiter_free(lim);
  bw_clock_free(clock);
}

/* AIMD: +1 per success until the first decrease (slow start), then +1 per
 * `limit` saturated successes (one per round trip). */
static void aimd_adds_one_per_limit_successes_after_a_drop(void **state) {
  bw_clock_t *clock = bw_clock_manual_new(BWT_T0_NS);
  bw_limiter_t *lim = limiter_at(clock, BW_LIMITER_AIMD, 10);
  bw_permit_t held[8], p;
  (void)state;
  p = take(lim);
  give(lim, &p, BW_LIMIT_DROPPED);
  assert_u64_eq(bw_limiter_limit(lim), 9);
  for (int i = 0; i < 8; i++)
    held[i] = take(lim);
  for (int i = 0; i < 8; i++) { /* acquired with 9 in flight: saturated */
    p = take(lim);
    give(lim, &p, BW_LIMIT_SUCCESS);
    assert_u64_eq(bw_limiter_limit(lim), 9);
  }
  p = take(lim);
  give(lim, &p, BW_LIMIT_SUCCESS); /* the 9th */
  assert_u64_eq(bw_limiter_limit(lim), 10);
  for (int i = 0; i < 8; i++)
    give(lim, &held[i], BW_LIMIT_IGNORED);
  bw_limiter_free(lim);
  bw_clock_free(clock);
}

/* ==== the closed-loop gate =============================================== */

typedef struct run_s {
  bw_sim_gate_results_t r;
  uint32_t samples;
} run_t;

static void count_sample(void *user, int64_t now_ns, uint32_t limit,
                         uint32_t partner_in_flight) {
  (void)now_ns;
  (void)limit;
  (void)partner_in_flight;
  ((run_t *)user)->samples++;
}

/* startup: the opt-in startup options as the lab's breakwater mode sets
 * them (startup_headroom 2.0, stuck_ratio 2.0, startup_max_step 100). */
static run_t run_gate(bw_limiter_algorithm_t alg, uint32_t clients,
                      int64_t duration_ms, bool startup) {
  bw_error_t err;
  bw_sim_t *sim = bw_sim_new(NULL, &err);
  bw_sim_partner_t *partner;
  bw_limiter_config_t lc;
  bw_limiter_t *lim;
  bw_sim_gate_config_t gc;
  run_t run;
  assert_non_null(sim);
  partner = bw_sim_partner_new(NULL, &err); /* the Polly lab: capacity 400 */
  assert_non_null(partner);
  bw_limiter_config_init(&lc);
  lc.algorithm = alg;
  lc.max_limit = 1000;
  if (startup) {
    lc.startup_headroom = 2.0;
    lc.stuck_ratio = 2.0;
    lc.startup_max_step = 100;
  }
  lc.clock = bw_sim_clock(sim);
  lim = bw_limiter_new(&lc, &err);
  assert_non_null(lim);
  bw_sim_gate_config_init(&gc);
  gc.clients = clients;
  gc.duration_ms = duration_ms;
  gc.on_sample = count_sample;
  gc.userdata = &run;
  memset(&run, 0, sizeof(run));
  assert_status(bw_sim_gate_run(sim, partner, bw_limiter_as_limit(lim), &gc,
                                &run.r, &err),
                BW_OK);
  assert_u64_eq(bw_limit_in_flight(bw_limiter_as_limit(lim)), 0); /* drained */
  bw_limiter_free(lim);
  bw_sim_partner_free(partner);
  bw_sim_free(sim);
  return run;
}

static void the_gate_conserves_calls_and_is_deterministic(void **state) {
  run_t a = run_gate(BW_LIMITER_AIMD, 100, 5000, false);
  run_t b = run_gate(BW_LIMITER_AIMD, 100, 5000, false);
  (void)state;
  assert_u64_eq(a.r.asks, a.r.network_calls + a.r.refused);
  assert_u64_eq(a.r.network_calls, a.r.ok + a.r.throttled + a.r.timeouts);
  /* 100 clients never reach the capacity: every call is a fast 200 */
  assert_u64_eq(a.r.ok, a.r.network_calls);
  assert_true(a.r.network_calls > 100 * 5000 / 180);
  assert_u64_eq(a.r.partner_max_in_flight, 100);
  assert_u64_eq(a.samples, 11); /* 0, 0.5, ..., 5 s */
  assert_int_equal(memcmp(&a.r, &b.r, sizeof(a.r)), 0);
}

static void the_gate_refuses_bad_configuration(void **state) {
  bw_error_t err;
  bw_sim_t *sim = bw_sim_new(NULL, &err);
  bw_sim_partner_t *partner = bw_sim_partner_new(NULL, &err);
  bw_limiter_t *lim = limiter_at(NULL, BW_LIMITER_AIMD, 10);
  bw_sim_gate_config_t gc;
  bw_sim_gate_results_t r;
  (void)state;
  bw_sim_gate_config_init(&gc);
  assert_u64_eq(gc.clients, 800);
  assert_i64_eq(gc.duration_ms, 60000);
  assert_i64_eq(gc.timeout_ms, 2000);
  assert_i64_eq(gc.backoff_ms, 10);
  gc.band_hi = 1;
  assert_status(
      bw_sim_gate_run(sim, partner, bw_limiter_as_limit(lim), &gc, &r, &err),
      BW_E_INVAL);
  assert_string_equal(err.field, "band_hi");
  assert_status(bw_sim_gate_run(sim, partner, NULL, NULL, &r, &err),
                BW_E_INVAL);
  assert_string_equal(err.field, "gate");
  bw_limiter_free(lim);
  bw_sim_partner_free(partner);
  bw_sim_free(sim);
}

/* ==== issue 4's acceptance =============================================== */

static void accepted(const bw_sim_gate_results_t *r) {
  /* within +-15 % of 400 by 10 s, and there to the end */
  assert_true(r->settled_ns >= 0);
  assert_true(r->settled_ns <= 10 * BW_NS_PER_S);
  assert_true(r->limit_min_after_settle >= 340);
  assert_true(r->limit_max_after_settle <= 460);
  /* >= 99 % of the network calls succeed */
  assert_true(r->network_calls > 0);
  assert_true((double)r->ok >= 0.99 * (double)r->network_calls);
  /* the partner never holds more than 460 once settled */
  assert_true(r->max_in_flight_after_settle <= 460);
}

static void settles_near_the_capacity(bw_limiter_algorithm_t alg) {
  run_t run = run_gate(alg, 800, 60000, false);
  accepted(&run.r);
}

/* The same acceptance with the startup options, settled within 2 s of
 * virtual time, sooner than any algorithm with the defaults (2.39 s for
 * AIMD, the fastest; BENCHMARKS.md, bench_limiter_sim --startup). */
static void settles_sooner_with_the_startup_options(
    bw_limiter_algorithm_t alg) {
  run_t fast = run_gate(alg, 800, 60000, true);
  accepted(&fast.r);
  assert_true(fast.r.settled_ns <= 2 * BW_NS_PER_S);
}

static void aimd_settles_near_the_capacity(void **state) {
  (void)state;
  settles_near_the_capacity(BW_LIMITER_AIMD);
}
static void gradient2_settles_near_the_capacity(void **state) {
  (void)state;
  settles_near_the_capacity(BW_LIMITER_GRADIENT2);
}
static void vegas_settles_near_the_capacity(void **state) {
  (void)state;
  settles_near_the_capacity(BW_LIMITER_VEGAS);
}
static void aimd_settles_sooner_with_the_startup_options(void **state) {
  (void)state;
  settles_sooner_with_the_startup_options(BW_LIMITER_AIMD);
}
static void gradient2_settles_sooner_with_the_startup_options(void **state) {
  (void)state;
  settles_sooner_with_the_startup_options(BW_LIMITER_GRADIENT2);
}
static void vegas_settles_sooner_with_the_startup_options(void **state) {
  (void)state;
  settles_sooner_with_the_startup_options(BW_LIMITER_VEGAS);
}

/* ==== reaching a step capacity, and following it ======================= */

/* A closed loop driven here rather than by bw_sim_gate_run, because the
 * partner's capacity must move during the run: `clients` callers that
 * always have work, each asking the limiter for a slot (a refusal waits
 * 5 ms), against the Polly lab's partner model (fast 80-180 ms while the
 * partner's own count, the new call included, is <= its capacity; else
 * 800-2500 ms, a 429 six times in ten; a call stays with the partner for
 * its whole latency) whose capacity is `cap_at(t)`. The caller gives up
 * after 2000 ms (TIMED_OUT). A round trip is 130 ms, the mean fast answer.
 * Measured: when the limit first reaches 90 % of the capacity in force,
 * and the highest in-flight level the limiter admitted at
 * (permit.inflight_at_acquire) over the whole run. Deterministic: seed 7,
 * virtual time, no sleeps. */

#define STEP_RTT_MS 130

typedef struct step_world_s step_world_t;

typedef struct step_client_s {
  step_world_t *w;
  bw_permit_t permit;
  int status;       /* the outstanding call's answer */
  bool gave_up;     /* timed out on the caller's side */
  uint32_t attempt; /* bumped on each call, so a stale answer is known */
} step_client_t;

struct step_world_s {
  bw_sim_t *sim;
  bw_limiter_t *lim;
  bw_rand_t rng;
  uint32_t clients;
  step_client_t *c;
  uint32_t cap;          /* the partner's capacity now */
  uint32_t partner_busy; /* its in-flight count */
  uint32_t max_admitted; /* the highest permit.inflight_at_acquire */
  uint32_t max_partner;
  int64_t end_ns;
  /* the capacity's schedule: cap_a until t_b, cap_b until t_c, then cap_c */
  uint32_t cap_a, cap_b, cap_c;
  int64_t t_b, t_c;
  /* when the limit first reached 90 % of cap_a, then (after t_b) came
   * within [0.75, 1.25] x cap_b, then (after t_c) reached 90 % of cap_c;
   * -1 = never */
  int64_t reach_a, follow_b, reach_c;
  uint32_t max_admitted_before_b; /* over [0, t_b) */
  uint32_t max_admitted_b;        /* over [t_b + 1 s, t_c) */
  /* The lab's fast startup instead of the tests' 0.25: startup_headroom
   * 2.0 in steps of at most startup_max_step calls. */
  bool fast_startup;
};

static void step_ask(bw_sim_t *sim, void *user);

typedef struct step_answer_s {
  step_client_t *c;
  uint32_t attempt;
} step_answer_t;

static void step_note(step_world_t *w) {
  int64_t now = bw_sim_now_ns(w->sim);
  uint32_t l = bw_limiter_limit(w->lim);
  if (now < w->t_b) {
    if (w->reach_a < 0 && (uint64_t)l * 10 >= (uint64_t)w->cap_a * 9)
      w->reach_a = now;
  } else if (now < w->t_c) {
    if (w->follow_b < 0 && (uint64_t)l * 4 >= (uint64_t)w->cap_b * 3 &&
        (uint64_t)l * 4 <= (uint64_t)w->cap_b * 5)
      w->follow_b = now - w->t_b;
  } else if (w->reach_c < 0 && (uint64_t)l * 10 >= (uint64_t)w->cap_c * 9) {
    w->reach_c = now - w->t_c;
  }
}

/* The partner is done with a call (its whole latency has passed). */
static void step_partner_done(bw_sim_t *sim, void *user) {
  step_world_t *w = user;
  (void)sim;
  w->partner_busy--;
}

static void step_answer(bw_sim_t *sim, void *user) {
  step_client_t *c = user;
  step_world_t *w = c->w;
  (void)sim;
  if (c->gave_up) return; /* released at the timeout already */
  assert_status(bw_limiter_release(
                    w->lim, &c->permit,
                    c->status == 200 ? BW_LIMIT_SUCCESS : BW_LIMIT_DROPPED),
                BW_OK);
  step_note(w);
  step_ask(w->sim, c);
}

static void step_timeout(bw_sim_t *sim, void *user) {
  step_client_t *c = user;
  step_world_t *w = c->w;
  (void)sim;
  c->gave_up = true;
  assert_status(bw_limiter_release(w->lim, &c->permit, BW_LIMIT_TIMED_OUT),
                BW_OK);
  step_note(w);
  step_ask(w->sim, c);
}

static void step_ask(bw_sim_t *sim, void *user) {
  step_client_t *c = user;
  step_world_t *w = c->w;
  int64_t now = bw_sim_now_ns(sim), lat_ms;
  if (now >= w->end_ns) return;
  w->cap = now < w->t_b ? w->cap_a : now < w->t_c ? w->cap_b : w->cap_c;
  if (bw_limiter_try_acquire(w->lim, &c->permit) != BW_OK) {
    assert_status(bw_sim_schedule_in(sim, 5 * MS, step_ask, c, NULL), BW_OK);
    return;
  }
  if (c->permit.inflight_at_acquire > w->max_admitted)
    w->max_admitted = c->permit.inflight_at_acquire;
  if (now < w->t_b && c->permit.inflight_at_acquire > w->max_admitted_before_b)
    w->max_admitted_before_b = c->permit.inflight_at_acquire;
  if (now >= w->t_b && now - w->t_b >= 1000 * MS && now < w->t_c &&
      c->permit.inflight_at_acquire > w->max_admitted_b)
    w->max_admitted_b = c->permit.inflight_at_acquire;
  w->partner_busy++;
  if (w->partner_busy > w->max_partner) w->max_partner = w->partner_busy;
  if (w->partner_busy <= w->cap) {
    c->status = 200;
    lat_ms = bw_rand_range(&w->rng, 80, 180);
  } else {
    lat_ms = bw_rand_range(&w->rng, 800, 2500);
    c->status = bw_rand_double(&w->rng) < 0.6 ? 429 : 200;
  }
  c->gave_up = false;
  assert_status(
      bw_sim_schedule_in(sim, lat_ms * MS, step_partner_done, w, NULL), BW_OK);
  if (lat_ms <= 2000)
    assert_status(bw_sim_schedule_in(sim, lat_ms * MS, step_answer, c, NULL),
                  BW_OK);
  else
    assert_status(bw_sim_schedule_in(sim, 2000 * MS, step_timeout, c, NULL),
                  BW_OK);
}

/* The limiter as the lab's breakwater mode configures it (src/sim/lab.c),
 * for any algorithm, but with startup_headroom 0.25 instead of the lab's
 * 2.0 (fast_startup): even doubling per round trip cannot keep the 1.25 x
 * bound (the crossing step admits up to twice the proven level: measured
 * 1.60 x at capacity 5000 for AIMD and at capacity 25, from initial_limit
 * 20, for Gradient2 and Vegas). A startup headroom no larger than
 * probe_headroom (0.25) keeps it: growth never passes 1.25 x the highest level
 * a success proved, and no success proves a level over the capacity. */
static bw_limiter_t *lab_limiter(const bw_clock_t *clock,
                                 bw_limiter_algorithm_t alg, uint32_t max_limit,
                                 bool fast_startup) {
  bw_limiter_config_t lc;
  bw_error_t err;
  bw_limiter_t *lim;
  bw_limiter_config_init(&lc);
  lc.algorithm = alg;
  lc.initial_limit = 20;
  lc.max_limit = max_limit;
  lc.aimd_timeout_ms = 1000;
  lc.probe_headroom = 0.25;
  lc.startup_headroom = 0.25;
  lc.stuck_ratio = 2.0;
  if (fast_startup) {
    lc.startup_headroom = 2.0;
    lc.startup_max_step = 100;
  }
  lc.clock = clock;
  lim = bw_limiter_new(&lc, &err);
  if (lim == NULL) fail_msg("bw_limiter_new: %s", err.message);
  return lim;
}

static void step_run(step_world_t *w, bw_limiter_algorithm_t alg,
                     uint32_t clients, int64_t end_ms) {
  bw_error_t err;
  uint32_t top = w->cap_a > w->cap_c ? w->cap_a : w->cap_c;
  w->sim = bw_sim_new(NULL, &err);
  assert_non_null(w->sim);
  w->lim = lab_limiter(bw_sim_clock(w->sim), alg, 4 * top, w->fast_startup);
  bw_rand_seed(&w->rng, 7);
  w->clients = clients;
  w->end_ns = end_ms * MS;
  w->reach_a = w->follow_b = w->reach_c = -1;
  w->c = calloc(clients, sizeof(*w->c));
  assert_non_null(w->c);
  for (uint32_t i = 0; i < clients; i++) {
    w->c[i].w = w;
    assert_status(bw_sim_schedule_in(w->sim, 0, step_ask, &w->c[i], NULL),
                  BW_OK);
  }
  bw_sim_run(w->sim);
  /* drained: every permit released, every held slot expired */
  assert_u64_eq(w->partner_busy, 0);
  free(w->c);
  bw_limiter_free(w->lim);
  bw_sim_free(w->sim);
}

static void step_capacity_with(bw_limiter_algorithm_t alg, uint32_t cap,
                               uint32_t max_rtts, bool fast_startup) {
  step_world_t w;
  memset(&w, 0, sizeof w);
  w.fast_startup = fast_startup;
  w.cap_a = w.cap_b = w.cap_c = cap;
  w.t_b = w.t_c = INT64_MAX;
  step_run(&w, alg, 2 * cap, 40 * STEP_RTT_MS);
  print_message(
      "%s capacity %u: 90 %% at %.1f round trips, admitted at most "
      "%u (%.2fx), partner max %u\n",
      bw_limiter_algorithm_name(alg), cap,
      (double)w.reach_a / (double)(STEP_RTT_MS * MS), w.max_admitted,
      (double)w.max_admitted / cap, w.max_partner);
  assert_true(w.reach_a >= 0);
  assert_true(w.reach_a <= (int64_t)max_rtts * STEP_RTT_MS * MS);
  assert_true((uint64_t)w.max_admitted * 4 <= (uint64_t)cap * 5);
}

static void step_capacity(bw_limiter_algorithm_t alg, uint32_t cap,
                          uint32_t max_rtts) {
  step_capacity_with(alg, cap, max_rtts, false);
}

static void step_drop_and_recover(bw_limiter_algorithm_t alg,
                                  uint32_t max_follow_rtts,
                                  uint32_t max_recover_rtts) {
  step_world_t w;
  memset(&w, 0, sizeof w);
  w.cap_a = 400;
  w.cap_b = 100;
  w.cap_c = 400;
  w.t_b = 10000 * MS;
  w.t_c = 70000 * MS;
  step_run(&w, alg, 500, 135000);
  print_message(
      "%s 400 -> 100 -> 400: 90 %% at %.1f rtt; followed 100 "
      "within %.1f rtt (admitted at most %u after 1 s); back to 90 "
      "%% of 400 within %.1f rtt\n",
      bw_limiter_algorithm_name(alg),
      (double)w.reach_a / (double)(STEP_RTT_MS * MS),
      (double)w.follow_b / (double)(STEP_RTT_MS * MS), w.max_admitted_b,
      (double)w.reach_c / (double)(STEP_RTT_MS * MS));
  assert_true(w.reach_a >= 0);
  assert_true(w.follow_b >= 0);
  assert_true(w.follow_b <= (int64_t)max_follow_rtts * STEP_RTT_MS * MS);
  assert_true(w.reach_c >= 0);
  assert_true(w.reach_c <= (int64_t)max_recover_rtts * STEP_RTT_MS * MS);
}

/* Round trips to 90 % of the capacity, per algorithm (measured, seed 7:
 * 0.7 / 12.3 / 19.8 at capacities 25 / 400 / 5000 for all three, since
 * during startup the limit jumps to the growth cap whatever the algorithm;
 * admitted at most 1.24 x / 1.06 x / 1.23 x, Gradient2 1.15 x at 5000.
 * Before the jump, when each algorithm grew by its own rule: AIMD 0.8 /
 * 11.7 / 19.7, Gradient2 1.0 / 12.7 / 21.2, Vegas 2.3 / 20.3 / 34.1). */
#define AIMD_STEP_RTTS 25
#define GRADIENT2_STEP_RTTS 25
#define VEGAS_STEP_RTTS 40
#define AIMD_FAST_RTTS 15
#define GRADIENT2_FAST_RTTS 23
#define VEGAS_FAST_RTTS 25

static void aimd_reaches_a_step_capacity(void **state) {
  (void)state;
  step_capacity(BW_LIMITER_AIMD, 25, AIMD_STEP_RTTS);
  step_capacity(BW_LIMITER_AIMD, 400, AIMD_STEP_RTTS);
  step_capacity(BW_LIMITER_AIMD, 5000, AIMD_STEP_RTTS);
}
static void gradient2_reaches_a_step_capacity(void **state) {
  (void)state;
  step_capacity(BW_LIMITER_GRADIENT2, 25, GRADIENT2_STEP_RTTS);
  step_capacity(BW_LIMITER_GRADIENT2, 400, GRADIENT2_STEP_RTTS);
  step_capacity(BW_LIMITER_GRADIENT2, 5000, GRADIENT2_STEP_RTTS);
}
static void vegas_reaches_a_step_capacity(void **state) {
  (void)state;
  step_capacity(BW_LIMITER_VEGAS, 25, VEGAS_STEP_RTTS);
  step_capacity(BW_LIMITER_VEGAS, 400, VEGAS_STEP_RTTS);
  step_capacity(BW_LIMITER_VEGAS, 5000, VEGAS_STEP_RTTS);
}

/* The lab's fast startup (startup_headroom 2.0: the limit jumps to 3 x
 * the proven level on each success; in steps of at most 100 calls) keeps
 * the same 1.25x bound wherever a step of 100 is at most a quarter of the
 * capacity (400 and 5,000), and gets there sooner (measured, seed 7,
 * round trips to 90 % at 400 / 5000: 4.3 / 12.6 for all three algorithms,
 * admitted at most 1.18x / 1.10x, against 12.3 / 19.8 with startup 0.25;
 * before the jump AIMD 5.0 / 12.6, Gradient2 11.0 / 19.5, Vegas 8.1 /
 * 21.0). At capacity 25 it does not: growth from 20 admits up to 60
 * (docs/limiter.md, "Limited slow start"); the lab pays that at capacity
 * 25 instead. */
static void fast_startup_keeps_the_bound_from_400(void **state) {
  (void)state;
  step_capacity_with(BW_LIMITER_AIMD, 400, AIMD_FAST_RTTS, true);
  step_capacity_with(BW_LIMITER_AIMD, 5000, AIMD_FAST_RTTS, true);
  step_capacity_with(BW_LIMITER_GRADIENT2, 400, GRADIENT2_FAST_RTTS, true);
  step_capacity_with(BW_LIMITER_GRADIENT2, 5000, GRADIENT2_FAST_RTTS, true);
  step_capacity_with(BW_LIMITER_VEGAS, 400, VEGAS_FAST_RTTS, true);
  step_capacity_with(BW_LIMITER_VEGAS, 5000, VEGAS_FAST_RTTS, true);
}

/* Capacity 400, then 100 from 10 s, then 400 again from 70 s. The bounds
 * are the measured figures (seed 7) with a margin. Following the drop
 * takes AIMD 16.3 round trips, Gradient2 16.3 and Vegas 16.0: the calls
 * sent after the drop are all over the new capacity, and once a batch of
 * them is older than twice the slowest good answer (~180 ms) the limit is
 * cut to the calls not stuck, at most halved per event (400 -> 200, then
 * 200 -> 100 when the calls admitted under 200 turn stuck in their turn).
 * Before stuck calls at any level were counted (only probes above the
 * proven level were), it took 94.5 / 175.5 / 123.0 round trips, one
 * decrease per slow answer. Recovering takes 304.6 / 73.0 / 71.3 round
 * trips (it was 403.5 / 390.4 / 225.5): AIMD's is its own additive
 * increase, one step a round trip from about 100; the others' is mostly
 * the 60 s overload memory of the wall the drop showed (docs/limiter.md,
 * "Stuck calls at any level"). That memory is renewed each time the limit
 * probes the new capacity and meets it again, so the recovery moves with
 * the last such probe before 70 s: now 305.7 / 84.7 / 107.0 round trips
 * (Vegas's last wall came at 22 s: memory until 82 s), and with the probe
 * window of before the startup's jump (½ SRTT from the lowest unproven
 * level) Gradient2 108.1 and Vegas 60.3. The bound covers that spread: a
 * memory renewed as late as 24 s, then growth back to 360. */
static void aimd_follows_a_capacity_drop(void **state) {
  (void)state;
  step_drop_and_recover(BW_LIMITER_AIMD, 20, 330);
}
static void gradient2_follows_a_capacity_drop(void **state) {
  (void)state;
  step_drop_and_recover(BW_LIMITER_GRADIENT2, 20, 120);
}
static void vegas_follows_a_capacity_drop(void **state) {
  (void)state;
  step_drop_and_recover(BW_LIMITER_VEGAS, 20, 120);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_decrease_per_congestion_event),
      cmocka_unit_test(aimd_backs_off_from_the_limit_at_acquire),
      cmocka_unit_test(aimd_adds_one_per_limit_successes_after_a_drop),
      cmocka_unit_test(the_gate_conserves_calls_and_is_deterministic),
      cmocka_unit_test(the_gate_refuses_bad_configuration),
      cmocka_unit_test(aimd_settles_near_the_capacity),
      cmocka_unit_test(gradient2_settles_near_the_capacity),
      cmocka_unit_test(vegas_settles_near_the_capacity),
      cmocka_unit_test(aimd_settles_sooner_with_the_startup_options),
      cmocka_unit_test(gradient2_settles_sooner_with_the_startup_options),
      cmocka_unit_test(vegas_settles_sooner_with_the_startup_options),
      cmocka_unit_test(aimd_reaches_a_step_capacity),
      cmocka_unit_test(gradient2_reaches_a_step_capacity),
      cmocka_unit_test(vegas_reaches_a_step_capacity),
      cmocka_unit_test(fast_startup_keeps_the_bound_from_400),
      cmocka_unit_test(aimd_follows_a_capacity_drop),
      cmocka_unit_test(gradient2_follows_a_capacity_drop),
      cmocka_unit_test(vegas_follows_a_capacity_drop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

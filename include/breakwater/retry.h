/* breakwater — retry that cannot storm: backoff, jitter, classification,
 * Retry-After, budgets and deadlines.
 *
 * A policy is shared and immutable; the retry iterator is a value type that
 * lives on the caller's stack and decides, after each attempt, whether and
 * when to try again. It never sleeps: the caller (or a driver) waits.
 *
 *   bw_retry_t r;
 *   bw_retry_begin(&r, policy, now_ns);
 *   for (;;) {
 *     bw_verdict_t v = do_call(&retry_after_ms);
 *     int64_t delay_ms;
 *     if (bw_retry_next(&r, v, retry_after_ms, now_ns, &delay_ms) != BW_RETRY)
 *       break;                           // BW_RETRY_DONE or BW_RETRY_GIVE_UP
 *     wait(delay_ms);
 *   }
 *
 * Give-up reasons: exhausted (max_attempts), elapsed (max_elapsed_ms),
 * permanent, rejected (a breaker/bulkhead/limiter refused: never retried —
 * the asyncio toolkit's CircuitOpenError rule), not_idempotent, budget,
 * deadline, retry_after_too_long, pushback (the server said: do not retry).
 *
 * bw_retry_next checks, in this order (the first that applies decides):
 *   1. the verdict: OK -> DONE; PERMANENT -> permanent; REJECTED -> rejected;
 *   2. the caps: attempts >= max_attempts -> exhausted; then time since begin
 *      >= max_elapsed_ms -> elapsed;
 *   3. TRANSIENT on a non-idempotent policy without a key -> not_idempotent;
 *   4. the hint: NEVER -> pushback; a hint > max_ms, or one that would end at
 *      or past a deadline still ahead -> retry_after_too_long;
 *   5. the delay (backoff and jitter, raised to the hint) must end in time:
 *      with stop_before, elapsed + delay >= max_elapsed_ms -> elapsed; then
 *      now + delay >= the deadline (or the deadline already passed) ->
 *      deadline. The next attempt always starts strictly before both;
 *   6. the budget (bw_budget_try_retry) -> budget. Asked last, so a retry
 *      refused for any other reason never spends budget.
 * Budget reports: bw_retry_begin -> on_request; an OK verdict -> on_success;
 * TRANSIENT and NOT_SENT -> on_failure (before the checks above);
 * PERMANENT and REJECTED report nothing (not the dependency's health). */
#ifndef BREAKWATER_RETRY_H
#define BREAKWATER_RETRY_H

#include "budget.h"
#include "clock.h"
#include "common.h"
#include "deadline.h"
#include "event.h"
#include "rand.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one attempt's result means. */
typedef enum bw_verdict_e {
  BW_VERDICT_OK = 0,        /* success: stop */
  BW_VERDICT_TRANSIENT = 1, /* may succeed if tried again (timeout, 5xx, 429) */
  BW_VERDICT_NOT_SENT = 2,  /* transient, and the request provably never
                               reached the server (connection refused, DNS):
                               safe to retry even when not idempotent */
  BW_VERDICT_PERMANENT = 3, /* will not get better (4xx, validation) */
  BW_VERDICT_REJECTED = 4   /* refused by our own breaker, bulkhead or
                               limiter: give up now, never retry */
} bw_verdict_t;

/* "ok", "transient", "not_sent", "permanent", "rejected", or "unknown". */
BW_EXTERN const char *bw_verdict_name(bw_verdict_t v);

typedef enum bw_backoff_e {
  BW_BACKOFF_CONSTANT = 0,   /* base_ms every time */
  BW_BACKOFF_LINEAR = 1,     /* base_ms * n for the n-th retry */
  BW_BACKOFF_EXPONENTIAL = 2 /* base_ms * multiplier^(n-1) */
} bw_backoff_t;

typedef enum bw_jitter_e {
  BW_JITTER_NONE = 0,
  BW_JITTER_FULL = 1,         /* uniform in [min_ms, d] (so [0, d] with the
                                 default min_ms 0; tenacity's
                                 wait_random_exponential) */
  BW_JITTER_EQUAL = 2,        /* d/2 + uniform in [0, d/2], i.e. uniform in
                                 [max(floor(d/2), min_ms), d] */
  BW_JITTER_DECORRELATED = 3, /* Polly v8's DecorrelatedJitterBackoffV2: for
                                 retry n, t = n-1 + U[0,1),
                                 f(t) = 2^t * tanh(sqrt(4t)), delay =
                                 (f(t) - f(previous t)) / 1.4 * base_ms,
                                 capped at max_ms, raised to min_ms. It
                                 replaces the backoff curve (needs backoff
                                 EXPONENTIAL, multiplier 2). Polly calls
                                 base_ms the "median first delay"; the exact
                                 median is 2^0.5*tanh(2^0.5)/1.4 = 0.897 x
                                 base_ms */
  BW_JITTER_ADDITIVE = 4      /* d + uniform in [0, jitter_ms], capped at
                                 max_ms (tenacity's wait_exponential_jitter)*/
} bw_jitter_t;

/* Give-up reasons, in the order of the list above. */
typedef enum bw_giveup_e {
  BW_GIVEUP_NONE = 0,
  BW_GIVEUP_EXHAUSTED,
  BW_GIVEUP_ELAPSED,
  BW_GIVEUP_PERMANENT,
  BW_GIVEUP_REJECTED,
  BW_GIVEUP_NOT_IDEMPOTENT,
  BW_GIVEUP_BUDGET,
  BW_GIVEUP_DEADLINE,
  BW_GIVEUP_RETRY_AFTER_TOO_LONG,
  BW_GIVEUP_PUSHBACK
} bw_giveup_t;

/* "exhausted", "elapsed", ... ("none" for BW_GIVEUP_NONE, "unknown" else). */
BW_EXTERN const char *bw_giveup_name(bw_giveup_t g);

/* retry_after_ms values that are not a delay (anything below NEVER is
 * invalid). */
#define BW_RETRY_AFTER_NONE (-1)  /* the attempt carried no hint */
#define BW_RETRY_AFTER_NEVER (-2) /* the server said: do not retry */

/* bw_retry_next's answers. */
#define BW_RETRY_DONE 0    /* the verdict was OK: stop, it worked */
#define BW_RETRY 1         /* wait *delay_ms, then attempt again */
#define BW_RETRY_GIVE_UP 2 /* stop: bw_retry_reason says why */

typedef struct bw_retry_config_s {
  const char *name;             /* copied; names events; default "retry" */
  uint32_t max_attempts;        /* attempts in all, the first included; default
                                   3; 0 = no cap (then max_elapsed_ms > 0) */
  int64_t max_elapsed_ms;       /* since begin; 0 = no limit (tenacity's
                                   stop_after_delay: a retry is allowed while
                                   the time at the decision is below it); both
                                   set: whichever first */
  bool stop_before;             /* give up (elapsed) instead of scheduling a
                                   delay that would end at or past
                                   max_elapsed_ms (tenacity's
                                   stop_before_delay); needs max_elapsed_ms */
  bw_backoff_t backoff;         /* default EXPONENTIAL */
  int64_t base_ms;              /* default 200, >= 1 (decorrelated: Polly's
                                   "median first delay", see above); 0 only
                                   with backoff CONSTANT: retry at once */
  double multiplier;            /* exponential; default 2.0, finite, >= 1
                                   (validated whatever the backoff) */
  int64_t min_ms;               /* every delay >= min_ms; default 0 */
  int64_t max_ms;               /* every delay <= max_ms, jitter included;
                                   default 30000, >= max(base_ms, min_ms) */
  bw_jitter_t jitter;           /* default FULL */
  int64_t jitter_ms;            /* additive jitter's range; default 1000,
                                   >= 0 */
  bool idempotent;              /* default true; false: retry only NOT_SENT
                                   unless the iterator has an idempotency key */
  bool honor_retry_after;       /* default true: a hint is the minimum delay,
                                   capped by max_ms (a hint above max_ms or past
                                   the deadline gives up: retry_after_too_long).
                                   false ignores hints >= 0, but
                                   BW_RETRY_AFTER_NEVER still gives up
                                   (pushback): the server forbade it */
  bw_budget_t *budget;          /* optional, shared; not owned */
  uint64_t seed;                /* jitter seed; 0 = unpredictable: each
                                   iterator is seeded from a per-thread
                                   generator that is seeded from the OS once
                                   per thread and again after a fork (so
                                   pre-fork workers never share streams).
                                   With a seed, iterators derive their stream from
                                   the seed and a per-policy counter, so two
                                   iterators never move in lock-step, yet a
                                   program whose iterators first draw in the
                                   same order is reproducible. Either way the
                                   stream is made at the iterator's first
                                   random draw, so a call that succeeds at once
                                   pays nothing */
  bw_sink_t *sink;              /* retry_scheduled / retry_gave_up events */
  const bw_clock_t *wall_clock; /* event timestamps; default realtime */
} bw_retry_config_t;

typedef struct bw_retry_policy_s bw_retry_policy_t;

/* Fills the documented defaults (NULL is ignored). */
BW_EXTERN void bw_retry_config_init(bw_retry_config_t *cfg);
/* Fills a named preset from the reference articles (over bw_retry_config_init's
 * defaults): "agents" (3 attempts, base 1 s, x2, cap 30 s, full jitter),
 * "agents.hotel_api" (3 attempts, base 1 s), "agents.payment_api" (2
 * attempts, base 2 s), "agents.search_agent" (4 attempts, base 0.5 s) — all
 * x2, cap 30 s, full jitter; "tenacity" (3 attempts, exponential 0.5 s .. 4 s,
 * no jitter), "tenacity.inner" (the breaker-inside variant: 2 attempts,
 * 0.3 s .. 2 s), "polly-lab" (1 + 2 retries, decorrelated jitter, base_ms
 * 200 — Polly's Delay — cap 1.5 s). cfg->name becomes the preset's name (a
 * static string). BW_E_NOTFOUND for other names (cfg untouched), BW_E_INVAL for
 * NULL. */
BW_EXTERN int bw_retry_config_preset(bw_retry_config_t *cfg,
                                     const char *preset);

/* Checks a configuration without creating anything: BW_OK, or BW_E_INVAL
 * with err naming the field and the rule. Besides each field's range: max
 * attempts 0 needs max_elapsed_ms > 0; stop_before needs max_elapsed_ms > 0;
 * jitter DECORRELATED needs backoff EXPONENTIAL and multiplier 2. */
BW_EXTERN int bw_retry_config_validate(const bw_retry_config_t *cfg,
                                       bw_error_t *err);
/* Creates a shared, immutable policy (thread-safe: any number of iterators on
 * any threads). NULL with err set on a bad configuration or BW_E_NOMEM. The
 * budget and sink are borrowed and must outlive the policy. */
BW_EXTERN bw_retry_policy_t *bw_retry_policy_new(const bw_retry_config_t *cfg,
                                                 bw_error_t *err);
/* Frees a policy (NULL is fine); no iterator may still use it. */
BW_EXTERN void bw_retry_policy_free(bw_retry_policy_t *p);
/* The policy's name (the events' name), or "" for NULL, as every other
 * object's name function answers. */
BW_EXTERN const char *bw_retry_policy_name(const bw_retry_policy_t *p);

/* The iterator. Treat the fields as private; it is public only so that it
 * can live on the stack. Not thread-safe (one per logical call). */
typedef struct bw_retry_s {
  const bw_retry_policy_t *policy;
  uint32_t attempts; /* attempts reported so far */
  uint32_t giveup;   /* bw_giveup_t once given up */
  int64_t start_ns;
  int64_t deadline_ns; /* BW_DEADLINE_NONE_NS if none */
  double dj_prev;      /* decorrelated jitter's state */
  bw_rand_t rng;       /* the iterator's random stream (layout private) */
  bool has_key;
  char idempotency_key[37];
} bw_retry_t;

/* Starts a logical call at now_ns. Takes this thread's current deadline
 * (bw_deadline_current), which must be a reading of the clock now_ns comes
 * from. Reports the request to the policy's budget. NULL r is ignored; a NULL
 * policy makes every bw_retry_next answer BW_E_INVAL. */
BW_EXTERN void bw_retry_begin(bw_retry_t *r, const bw_retry_policy_t *p,
                              int64_t now_ns);
/* Narrows the iterator's deadline (the earlier one wins; it never moves
 * later). */
BW_EXTERN void bw_retry_set_deadline(bw_retry_t *r, bw_deadline_t d);
/* Gives this logical call an idempotency key (a fresh UUIDv7 from
 * unix_ms and the iterator's generator), so that a non-idempotent operation
 * may be retried after any transient failure; the caller sends the key with
 * every attempt (an Idempotency-Key header). Returns the key, which lives in
 * the iterator. Calling it again returns the same key (one logical call, one
 * key). NULL for NULL r. */
BW_EXTERN const char *bw_retry_attach_key(bw_retry_t *r, int64_t unix_ms);

/* Reports an attempt's verdict at now_ns and decides. retry_after_ms is the
 * attempt's hint (Retry-After, pushback) or BW_RETRY_AFTER_NONE / _NEVER.
 * BW_RETRY: *delay_ms (>= 0) is set. BW_RETRY_DONE for OK. BW_RETRY_GIVE_UP:
 * bw_retry_reason tells why; *delay_ms = 0. Emits retry_scheduled or
 * retry_gave_up (the checks and their order: top of this file). After DONE
 * or GIVE_UP the iterator keeps answering the same, reporting and emitting
 * nothing more. BW_E_INVAL (iterator untouched) for NULL r or delay_ms, an
 * iterator begun without a policy, an unknown verdict, or retry_after_ms
 * below BW_RETRY_AFTER_NEVER. No lock, no clock read, no allocation. */
BW_EXTERN int bw_retry_next(bw_retry_t *r, bw_verdict_t v,
                            int64_t retry_after_ms, int64_t now_ns,
                            int64_t *delay_ms);
/* Why the iterator gave up; BW_GIVEUP_NONE while it may still retry or
 * after DONE. */
BW_EXTERN bw_giveup_t bw_retry_reason(const bw_retry_t *r);
/* Attempts reported so far (0 for NULL). */
BW_EXTERN uint32_t bw_retry_attempts(const bw_retry_t *r);

/* The delay the policy would choose before the n-th retry (n >= 1) with the
 * given generator and decorrelated state, without any hint, budget or
 * deadline: for tests, tools and simulations. The curve d is base_ms
 * (constant), base_ms * n (linear) or base_ms * multiplier^(n-1)
 * (exponential), rounded to the nearest ms and clamped to [min_ms, max_ms];
 * then the jitter. rng may be NULL only without jitter; dj_prev (decorrelated
 * only; start it at 0) may be NULL for a fresh state. Negative (BW_E_INVAL)
 * for NULL p, n == 0, or a missing rng: a delay is never negative. */
BW_EXTERN int64_t bw_retry_delay_ms(const bw_retry_policy_t *p, uint32_t n,
                                    bw_rand_t *rng, double *dj_prev);
/* bw_retry_delay_ms with a status, like every other verb: BW_OK and *out_ms
 * the delay, or BW_E_INVAL (NULL p or out_ms, n == 0, a missing rng; *out_ms
 * untouched). */
BW_EXTERN int bw_retry_delay_ms_ex(const bw_retry_policy_t *p, uint32_t n,
                                   bw_rand_t *rng, double *dj_prev,
                                   int64_t *out_ms);

/* A UUIDv7 (RFC 9562) as 36 lowercase characters + NUL from a Unix time in
 * ms and a generator: 48-bit big-endian timestamp, version 7, variant 0b10,
 * 74 random bits. unix_ms below 0 counts as 0; above 2^48-1 (year 10889) it
 * wraps modulo 2^48, as RFC 9562 allows. NULL out: nothing; NULL rng: "". */
BW_EXTERN void bw_uuidv7(int64_t unix_ms, bw_rand_t *rng, char out[37]);

/* ---- steps for a driver's loop --------------------------------------------
 */

/* bw_retry_begin for a call about to make its first attempt at now_ns (the
 * loop of bw_retry_call in the threads driver, or any driver's). If this
 * thread's current deadline (bw_deadline_current, a reading of now_ns's
 * clock) has already passed, nobody waits for the answer: the iterator is
 * begun and gives up at once — reason deadline, a retry_gave_up event with
 * verdict not_sent — and the request is NOT reported to the budget (the
 * dependency never saw it): BW_RETRY_GIVE_UP; make no attempt. Otherwise it
 * is exactly bw_retry_begin: BW_RETRY, make the first attempt. r is the
 * caller's (its stack); the policy is borrowed. BW_E_INVAL (r untouched) for
 * NULL r or p. Not thread-safe for one r, like every iterator call; no lock,
 * no clock read, no allocation. */
BW_EXTERN int bw_retry_start(bw_retry_t *r, const bw_retry_policy_t *p,
                             int64_t now_ns);

/* Asks, after waiting a BW_RETRY delay and before the next attempt, whether
 * that attempt may start at now_ns: BW_RETRY when the iterator's deadline is
 * still ahead (nothing changes); BW_RETRY_GIVE_UP when it has passed (a wait
 * that overslept): the iterator gives up with reason deadline and emits
 * retry_gave_up with `last`, the last attempt's verdict. After DONE or
 * GIVE_UP it answers the same again, emitting nothing. BW_E_INVAL (iterator
 * untouched) for NULL r, an iterator begun without a policy, or an unknown
 * verdict. No lock, no clock read, no allocation. */
BW_EXTERN int bw_retry_check_deadline(bw_retry_t *r, bw_verdict_t last,
                                      int64_t now_ns);

/* bw_retry_call and its types moved to breakwater/threads.h. */

#ifdef __cplusplus
}
#endif
#endif /* BREAKWATER_RETRY_H */

/* The threads driver's blocking retry loop (threads.h): attempts, sleeps
 * between them, and leaves every decision — whether to start, whether and
 * how long to wait, when a late wake-up must give up — to the retry
 * iterator's public steps. */
#include "breakwater/threads.h"
#include "threads_internal.h"

/* The default sleep: real time. */
static void bw__thr_retry_sleep(void *userdata, int64_t ms) {
  (void)userdata;
  bw__thr_sleep_ms(ms);
}

/* The iterator gave up: the fallback once, then BW_E_GAVE_UP. */
static int bw__thr_gave_up(const bw_retry_t *r, bw_verdict_t last,
                           const bw_retry_call_opts_t *o, bw_giveup_t *reason) {
  bw_giveup_t g = bw_retry_reason(r);
  if (o != NULL && o->fallback != NULL)
    o->fallback(o->fallback_userdata, g, last);
  if (reason != NULL) *reason = g;
  return BW_E_GAVE_UP;
}

int bw_retry_call(const bw_retry_policy_t *p, bw_retry_fn fn, void *userdata,
                  const bw_retry_call_opts_t *opts, bw_giveup_t *reason) {
  const bw_clock_t *clock;
  bw_sleep_fn sleep_fn;
  void *sleep_ud;
  bw_retry_t r;
  bw_verdict_t last = BW_VERDICT_NOT_SENT;
  int64_t delay;
  if (p == NULL || fn == NULL) return BW_E_INVAL;
  clock =
      opts != NULL && opts->clock != NULL ? opts->clock : bw_clock_monotonic();
  sleep_fn =
      opts != NULL && opts->sleep != NULL ? opts->sleep : bw__thr_retry_sleep;
  sleep_ud = opts != NULL && opts->sleep != NULL ? opts->sleep_userdata : NULL;
  /* A deadline already passed: nothing is sent (start gives up). */
  if (bw_retry_start(&r, p, bw_clock_now(clock)) != BW_RETRY)
    return bw__thr_gave_up(&r, last, opts, reason);
  for (;;) {
    int64_t hint = BW_RETRY_AFTER_NONE;
    int rc;
    last = fn(userdata, bw_retry_attempts(&r) + 1, &hint);
    rc = bw_retry_next(&r, last, hint, bw_clock_now(clock), &delay);
    if (rc == BW_RETRY_DONE) {
      if (reason != NULL) *reason = BW_GIVEUP_NONE;
      return BW_OK;
    }
    if (rc == BW_RETRY_GIVE_UP) return bw__thr_gave_up(&r, last, opts, reason);
    if (rc != BW_RETRY) return rc; /* fn returned a bad verdict or hint */
    sleep_fn(sleep_ud, delay);
    /* Overslept past the deadline: no attempt nobody waits for. */
    if (bw_retry_check_deadline(&r, last, bw_clock_now(clock)) != BW_RETRY)
      return bw__thr_gave_up(&r, last, opts, reason);
  }
}

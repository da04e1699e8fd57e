/* The threads driver's blocking pipeline loop (threads.h): the pipeline's
 * state machine decides every step; this loop makes the attempts and
 * sleeps the waits. */
#include <string.h>

#include "breakwater/threads.h"
#include "threads_internal.h"

int bw_pipeline_execute(const bw_pipeline_t *pl, const bw_clock_t *clock,
                        bw_attempt_fn fn, void *userdata,
                        bw_pipeline_call_t *out) {
  bw_pipeline_call_t local;
  bw_pipeline_call_t *c;
  int step;
  if (pl == NULL || fn == NULL) return BW_E_INVAL;
  if (clock == NULL) clock = bw_clock_monotonic();
  memset(&local, 0, sizeof local); /* begin fills it; cppcheck cannot see it */
  c = out != NULL ? out : &local;
  step = bw_pipeline_begin(pl, c, bw_clock_now(clock));
  while (step != BW_STEP_DONE) {
    if (step == BW_STEP_WAIT) {
      bw__thr_sleep_ms(c->delay_ms);
      step = bw_pipeline_resume(c, bw_clock_now(clock));
    } else {
      int64_t ra = BW_RETRY_AFTER_NONE;
      bw_verdict_t v = fn(userdata, c, &ra);
      if (ra < BW_RETRY_AFTER_NEVER) ra = BW_RETRY_AFTER_NONE;
      step = bw_pipeline_report(c, v, ra, bw_clock_now(clock));
      if (step < 0) /* a verdict fn made up: count it as transient */
        step = bw_pipeline_report(c, BW_VERDICT_TRANSIENT, ra,
                                  bw_clock_now(clock));
    }
  }
  return (int)c->failure;
}

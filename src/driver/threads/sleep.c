/* Real-time sleeping for the threads driver's loops. */
#include <errno.h>
#include <time.h>

#include "threads_internal.h"

void bw__thr_sleep_ms(int64_t ms) {
  struct timespec ts, rem;
  if (ms <= 0) return;
  ts.tv_sec = (time_t)(ms / 1000);
  ts.tv_nsec = (long)(ms % 1000) * 1000000L;
  while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
    ts = rem;
}

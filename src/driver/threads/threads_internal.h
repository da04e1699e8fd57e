/* The threads driver's private helpers, shared by its files (not
 * installed). */
#ifndef BW_THREADS_INTERNAL_H
#define BW_THREADS_INTERNAL_H

#include <stdint.h>

/* Sleeps ms milliseconds of real time (nothing for ms <= 0); a signal that
 * cuts the sleep short does not shorten it: the rest is slept. */
void bw__thr_sleep_ms(int64_t ms);

#endif /* BW_THREADS_INTERNAL_H */

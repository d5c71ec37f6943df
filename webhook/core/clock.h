/*
 * webhook/core/clock.h — the monotonic clock every deadline of the binary is
 * on: ?timeout=, lookups, token refreshes, record batching, backoffs, rate
 * limits, condition waits (clock.c). It is the library's clock
 * (tp_monotonic_ns), so the binary's deadlines and the library's
 * tp_deadline are one time line.
 */
#ifndef TW_CLOCK_H
#define TW_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds, microseconds, milliseconds. */
int64_t tw_mono_ns(void);
long long tw_mono_us(void);
long long tw_mono_ms(void);

/* The monotonic time ms from now, for pthread_cond_timedwait on a
 * condition made by tw_cond_init_mono. */
struct timespec tw_mono_after_ms(long long ms);

/* pthread_cond_init on the monotonic clock (a wall-clock step changes no
 * wait). 0, or an errno. */
int tw_cond_init_mono(pthread_cond_t *cv);

#endif /* TW_CLOCK_H */

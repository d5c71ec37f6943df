/*
 * webhook/core/clock.h — the monotonic clock every deadline of the binary is
 * on: lookups within ?timeout=, token refreshes, record batching, rate
 * limits (clock.c).
 */
#ifndef TW_CLOCK_H
#define TW_CLOCK_H

/* Monotonic milliseconds. */
long long tw_mono_ms(void);

#endif /* TW_CLOCK_H */

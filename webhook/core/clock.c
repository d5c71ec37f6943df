/*
 * webhook/core/clock.c — the monotonic clock deadlines, backoffs and rate
 * limits are measured on.
 */
#include "webhook/core/clock.h"

#include <time.h>

long long tw_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

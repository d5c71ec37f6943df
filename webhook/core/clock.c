/*
 * webhook/core/clock.c — the monotonic clock deadlines, backoffs and rate
 * limits are measured on: the library's, read through tp_monotonic_ns.
 */
#include "webhook/core/clock.h"

#include "policy/trainpolicy.h"

int64_t tw_mono_ns(void)
{
	return tp_monotonic_ns();
}

long long tw_mono_us(void)
{
	return (long long)(tp_monotonic_ns() / 1000);
}

long long tw_mono_ms(void)
{
	return (long long)(tp_monotonic_ns() / 1000000);
}

struct timespec tw_mono_after_ms(long long ms)
{
	int64_t at = tp_monotonic_ns() + (int64_t)ms * 1000000;
	return (struct timespec){ .tv_sec = (time_t)(at / 1000000000),
				  .tv_nsec = (long)(at % 1000000000) };
}

int tw_cond_init_mono(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	int rc = pthread_condattr_init(&ca);
	if (rc)
		return rc;
	rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
	return rc;
}

/*
 * core/deadline.c — the thread's deadline: entering and leaving it, and
 * reading its limits when the steps counted reach the next check.
 *
 * The clock is read once every CLOCK_EVERY steps: a step costs a few
 * instructions to some tens, so a deadline is noticed within a fraction of
 * a millisecond of passing, and the clock (a vDSO call) costs nothing that
 * shows.
 */
#include "policy/core/deadline.h"

#include <time.h>

#define CLOCK_EVERY 16384u

_Thread_local tp_deadline *tp__deadline;

int64_t tp_monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

tp_deadline *tp_deadline_enter(tp_deadline *d)
{
	tp_deadline *prev = tp__deadline;
	if (d)
		d->next_check = d->steps; /* the limits are read at the first tick */
	tp__deadline = d;
	return prev;
}

void tp_deadline_leave(tp_deadline *previous)
{
	tp__deadline = previous;
}

int tp__deadline_check(tp_deadline *d)
{
	if (!d->expired)
		d->expired = (d->budget && d->steps >= d->budget) ||
			     (d->at_ns && tp_monotonic_ns() >= d->at_ns);
	if (d->expired) {
		d->next_check = 0; /* every tick from now on says so */
		return TP_ETIMEDOUT;
	}
	d->next_check = d->steps + CLOCK_EVERY;
	if (d->budget && d->budget < d->next_check)
		d->next_check = d->budget;
	return TP_OK;
}

/*
 * core/deadline.h — how the library's loops count their work into the
 * thread's tp_deadline (core/deadline.c) and learn that it has passed.
 * Private to policy/.
 *
 * tp__charge only counts: the lookups call it (they cannot stop half way
 * and say so). tp__tick counts and answers: the long loops call it once an
 * element and stop with TP_ETIMEDOUT when it says so. Both are a
 * thread-local read and a branch when no deadline is entered.
 */
#ifndef TP_CORE_DEADLINE_H
#define TP_CORE_DEADLINE_H

#include "policy/trainpolicy.h"

extern _Thread_local tp_deadline *tp__deadline;

/* Reads the budget and the clock; TP_ETIMEDOUT once either has passed. */
int tp__deadline_check(tp_deadline *d);

static inline void tp__charge(size_t steps)
{
	tp_deadline *d = tp__deadline;
	if (d)
		d->steps += steps;
}

static inline int tp__tick(size_t steps)
{
	tp_deadline *d = tp__deadline;
	if (!d)
		return TP_OK;
	d->steps += steps;
	return d->steps < d->next_check ? TP_OK : tp__deadline_check(d);
}

/* rc, or TP_ETIMEDOUT when the thread's deadline has passed: what a public
 * entry point returns, so that work a loop cut short is never taken for a
 * finished answer whatever the layers between made of the loop's code. */
static inline int tp__deadline_status(int rc)
{
	tp_deadline *d = tp__deadline;
	return d && d->expired ? TP_ETIMEDOUT : rc;
}

#endif

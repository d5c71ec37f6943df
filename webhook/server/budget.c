/*
 * webhook/server/budget.c — the memory budget of the requests in flight:
 * one atomic counter, taken and given back without a lock (budget.h).
 */
#include "webhook/server/budget.h"

#include "webhook/metrics/metrics.h"

void tw_budget_init(tw_budget *b, size_t limit)
{
	b->limit = limit;
	atomic_init(&b->used, 0);
}

bool tw_budget_take(tw_budget *b, size_t n)
{
	size_t cur = atomic_load(&b->used);
	do {
		if (b->limit && (n > b->limit || cur > b->limit - n))
			return false;
	} while (!atomic_compare_exchange_weak(&b->used, &cur, cur + n));
	tw_metrics_budget_held((int64_t)n);
	return true;
}

void tw_budget_give(tw_budget *b, size_t n)
{
	atomic_fetch_sub(&b->used, n);
	tw_metrics_budget_held(-(int64_t)n);
}

size_t tw_budget_used(const tw_budget *b)
{
	return atomic_load(&b->used);
}

size_t tw_budget_arena_for(size_t len)
{
	size_t a = len > TW_BUDGET_ARENA_MAX / TW_BUDGET_ARENA_FACTOR
			   ? TW_BUDGET_ARENA_MAX
			   : len * TW_BUDGET_ARENA_FACTOR;
	return a < TW_BUDGET_ARENA_MIN ? TW_BUDGET_ARENA_MIN : a;
}

int tw_budget_more_arena(tw_budget *b, size_t *allow, size_t *held)
{
	if (*allow >= TW_BUDGET_ARENA_MAX)
		return -1;
	size_t want = *allow > TW_BUDGET_ARENA_MAX / 2 ? TW_BUDGET_ARENA_MAX : *allow * 2;
	size_t more = want - *allow;
	if (b->limit && *held + more > b->limit)
		return -1;
	if (!tw_budget_take(b, more))
		return 0;
	*allow = want;
	*held += more;
	return 1;
}

/*
 * webhook/server/budget.c — the memory budget of the requests in flight and
 * the open connections: atomic counters, taken and given back without a
 * lock (budget.h); a peer's share is one more counter on its entry
 * (peers.c).
 */
#include "webhook/server/budget.h"

#include "webhook/metrics/metrics.h"

void tw_budget_init(tw_budget *b, size_t limit)
{
	b->limit = limit;
	b->lane = limit / 8;
	b->conn_max = limit / 2;
	b->peer_share = (limit - b->lane) / 2;
	atomic_init(&b->used, 0);
	atomic_init(&b->conn_used, 0);
}

/* The most everything held may reach when a holder of class cls takes. */
static size_t ceiling(const tw_budget *b, tw_budget_class cls)
{
	return cls == TW_HOLD_SMALL ? b->limit : b->limit - b->lane;
}

/* Add n to *c unless that passes max: true when added. */
static bool add_under(atomic_size_t *c, size_t n, size_t max)
{
	size_t cur = atomic_load(c);
	do {
		if (n > max || cur > max - n)
			return false;
	} while (!atomic_compare_exchange_weak(c, &cur, cur + n));
	return true;
}

size_t tw_budget_most(const tw_budget *b, tw_budget_class cls)
{
	size_t max = ceiling(b, cls);
	return b->peer_share < max ? b->peer_share : max;
}

tw_budget_answer tw_budget_could(const tw_budget *b, tw_budget_class cls, size_t n)
{
	if (!b->limit)
		return TW_BUDGET_TAKEN;
	return n > tw_budget_most(b, cls) ? TW_BUDGET_NEVER : TW_BUDGET_TAKEN;
}

tw_budget_answer tw_budget_take(tw_budget *b, tw_hold *h, size_t n)
{
	if (!b->limit) {
		h->held += n;
		return TW_BUDGET_TAKEN;
	}
	if (tw_budget_could(b, h->cls, h->held + n) == TW_BUDGET_NEVER)
		return TW_BUDGET_NEVER;
	if (h->peer && !add_under(&h->peer->held, n, b->peer_share))
		return TW_BUDGET_PEER;
	if (!add_under(&b->used, n, ceiling(b, h->cls))) {
		if (h->peer)
			atomic_fetch_sub(&h->peer->held, n);
		return TW_BUDGET_BUSY;
	}
	h->held += n;
	tw_metrics_budget_held((int64_t)n);
	return TW_BUDGET_TAKEN;
}

tw_budget_answer tw_budget_fits_now(const tw_budget *b, const tw_hold *h, size_t n)
{
	if (!b->limit)
		return TW_BUDGET_TAKEN;
	if (tw_budget_could(b, h->cls, h->held + n) == TW_BUDGET_NEVER)
		return TW_BUDGET_NEVER;
	if (h->peer && atomic_load(&h->peer->held) + n > b->peer_share)
		return TW_BUDGET_PEER;
	return atomic_load(&b->used) + n > ceiling(b, h->cls) ? TW_BUDGET_BUSY : TW_BUDGET_TAKEN;
}

void tw_budget_release(tw_budget *b, tw_hold *h)
{
	size_t n = h->held;
	h->held = 0;
	if (!n || !b->limit)
		return;
	if (h->peer)
		atomic_fetch_sub(&h->peer->held, n);
	atomic_fetch_sub(&b->used, n);
	tw_metrics_budget_held(-(int64_t)n);
}

bool tw_budget_conn_fits(const tw_budget *b)
{
	size_t c = TW_BUDGET_CONN_COST;
	return !b->limit || (atomic_load(&b->conn_used) + c <= b->conn_max &&
			     atomic_load(&b->used) + c <= b->limit - b->lane);
}

void tw_budget_conn_open(tw_budget *b)
{
	if (!b->limit)
		return;
	atomic_fetch_add(&b->conn_used, TW_BUDGET_CONN_COST);
	atomic_fetch_add(&b->used, TW_BUDGET_CONN_COST);
	tw_metrics_budget_held((int64_t)TW_BUDGET_CONN_COST);
	tw_metrics_budget_conns((int64_t)TW_BUDGET_CONN_COST);
}

void tw_budget_conn_close(tw_budget *b)
{
	if (!b->limit)
		return;
	atomic_fetch_sub(&b->conn_used, TW_BUDGET_CONN_COST);
	atomic_fetch_sub(&b->used, TW_BUDGET_CONN_COST);
	tw_metrics_budget_held(-(int64_t)TW_BUDGET_CONN_COST);
	tw_metrics_budget_conns(-(int64_t)TW_BUDGET_CONN_COST);
}

size_t tw_budget_used(const tw_budget *b)
{
	return atomic_load(&b->used);
}

tw_budget_class tw_budget_class_of(size_t len)
{
	return len <= TW_BUDGET_SMALL_MAX ? TW_HOLD_SMALL : TW_HOLD_LARGE;
}

size_t tw_budget_arena_for(size_t len)
{
	size_t a = len > TW_BUDGET_ARENA_MAX / TW_BUDGET_ARENA_FACTOR
			   ? TW_BUDGET_ARENA_MAX
			   : len * TW_BUDGET_ARENA_FACTOR;
	return a < TW_BUDGET_ARENA_MIN ? TW_BUDGET_ARENA_MIN : a;
}

tw_budget_answer tw_budget_more_arena(tw_budget *b, tw_hold *h, size_t *allow)
{
	if (*allow >= TW_BUDGET_ARENA_MAX)
		return TW_BUDGET_NEVER;
	size_t want = *allow > TW_BUDGET_ARENA_MAX / 2 ? TW_BUDGET_ARENA_MAX : *allow * 2;
	tw_budget_answer a = tw_budget_take(b, h, want - *allow);
	if (a == TW_BUDGET_TAKEN)
		*allow = want;
	return a;
}

unsigned tw_budget_max_conns(size_t limit)
{
	size_t n = limit / 2 / TW_BUDGET_CONN_COST;
	return n > 1u << 20 ? 1u << 20 : (unsigned)n;
}

/*
 * webhook/cluster/watch_fresh.h — which watched kinds the cache may answer
 * for: written by the watch that keeps them (watch.c), read on every lookup
 * by the resolver (resolver.c).
 *
 * A kind is fresh from the end of a complete list for as long as its watch
 * goes on unbroken from that list's resourceVersion (a watch the API server
 * ends cleanly, its timeoutSeconds, resumes and stays fresh). Anything else
 * makes it stale until its next list completes: before the first list, a
 * 410, an event that cannot be read, an ERROR event, a lost connection, an
 * error status. While stale, what the cache holds may have been deleted or
 * changed meanwhile (an API-server restart while another one wrote), so
 * neither a miss nor a hit is an answer: the resolver reads through to the
 * API server.
 *
 * The API server that answers a read-through is back: a stale kind whose last
 * attempt was lost in transport (its backoff grown during an outage) lists
 * again at once rather than after that backoff (`answered`).
 */
#ifndef TW_WATCH_FRESH_H
#define TW_WATCH_FRESH_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct tw_freshness {
	atomic_uint fresh;    /* a bit per kind, numbered by the owner (serve: 1u << tp_kind) */
	atomic_bool answered; /* the API server answered a read-through (the watch clears it) */
} tw_freshness;

static inline bool tw_fresh_is(const tw_freshness *f, unsigned bit)
{
	return (atomic_load(&((tw_freshness *)f)->fresh) & bit) == bit;
}

static inline void tw_fresh_set(tw_freshness *f, unsigned bit, bool fresh)
{
	if (fresh)
		atomic_fetch_or(&f->fresh, bit);
	else
		atomic_fetch_and(&f->fresh, ~bit);
}

static inline void tw_fresh_answered(tw_freshness *f)
{
	atomic_store(&f->answered, true);
}

/* True once per answer noted since the last call. */
static inline bool tw_fresh_take_answered(tw_freshness *f)
{
	return atomic_exchange(&f->answered, false);
}

#endif /* TW_WATCH_FRESH_H */

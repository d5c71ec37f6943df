/*
 * webhook/server/state.c — what the server's requests read, swappable while
 * they run: the runtime store (counted references, the old one freed after
 * the requests that use it), the CRDs, and the readiness /readyz reports.
 */
#include "webhook/server/server.h"

#include <stdio.h>
#include <stdlib.h>

#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

tw_store_ref *tw_server_store_acquire(tw_server *s)
{
	pthread_mutex_lock(&s->store_lock);
	tw_store_ref *r = s->store;
	if (r)
		atomic_fetch_add(&r->refs, 1);
	pthread_mutex_unlock(&s->store_lock);
	return r;
}

void tw_server_store_release(tw_store_ref *r)
{
	if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
		tp_store_free(r->store);
		free(r);
	}
}

void tw_server_set_store(tw_server *s, tp_store *store)
{
	tw_store_ref *r = malloc(sizeof(*r));
	if (!r) {
		tw_log(TW_LOG_ERROR, "out of memory swapping in the new runtime store; "
				     "the previous store stays in use");
		tp_store_free(store);
		return;
	}
	r->store = store;
	atomic_init(&r->refs, 1); /* the server's own reference */
	pthread_mutex_lock(&s->store_lock);
	tw_store_ref *old = s->store;
	s->store = r;
	pthread_mutex_unlock(&s->store_lock);
	tw_server_store_release(old);
	tw_metrics_store_set(store);
}

void tw_server_set_crds(tw_server *s, tp_crds *crds)
{
	tp_crds_ref(crds);
	pthread_mutex_lock(&s->store_lock);
	tp_crds *old = s->crds;
	s->crds = crds;
	pthread_mutex_unlock(&s->store_lock);
	tp_crds_unref(old);
}

tp_crds *tw_server_crds_acquire(tw_server *s)
{
	pthread_mutex_lock(&s->store_lock);
	tp_crds *c = tp_crds_ref(s->crds);
	pthread_mutex_unlock(&s->store_lock);
	return c;
}

void tw_server_set_ready_check(tw_server *s, int slot, tw_ready_fn fn, void *arg)
{
	if (slot < 0 || slot >= TW_READY__COUNT)
		return;
	pthread_mutex_lock(&s->store_lock);
	s->ready[slot] = fn;
	s->ready_arg[slot] = arg;
	pthread_mutex_unlock(&s->store_lock);
}

/* Append "; <what>" (or "<what>" first) to why. */
static void add_reason(char *why, size_t n, size_t *len, const char *what)
{
	if (!why || *len >= n)
		return;
	int w = snprintf(why + *len, n - *len, "%s%s", *len ? "; " : "", what);
	*len += w > 0 ? (size_t)w : 0;
}

bool tw_server_ready(tw_server *s, char *why, size_t whylen)
{
	size_t len = 0;
	char part[1024];
	if (why && whylen)
		why[0] = '\0';
	/* A draining replica is no longer ready: the endpoint goes away while
	 * requests in flight finish. */
	if (atomic_load(&s->draining)) {
		add_reason(why, whylen, &len, "shutting down");
		return false;
	}
	bool ready = true;
	if (!s->opt.tls || tw_tls_not_after(s->opt.tls) <= 0) {
		ready = false;
		add_reason(why, whylen, &len, "no serving certificate loaded yet");
	}
	/* The checks are called under the lock, so that whoever clears one
	 * (before freeing what its arg points to) waits for a probe in progress. */
	pthread_mutex_lock(&s->store_lock);
	if (!s->store) {
		ready = false;
		add_reason(why, whylen, &len, "the runtime store is not loaded");
	}
	for (int i = 0; i < TW_READY__COUNT; i++) {
		part[0] = '\0';
		if (s->ready[i] && !s->ready[i](s->ready_arg[i], part, sizeof(part))) {
			ready = false;
			add_reason(why, whylen, &len, part[0] ? part : "a check is not met");
		}
	}
	pthread_mutex_unlock(&s->store_lock);
	return ready;
}

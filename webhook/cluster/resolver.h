/*
 * webhook/cluster/resolver.h — the tp_lookup a server request decides with.
 *
 * Kinds the watch keeps (runtimes of both scopes, PriorityClasses) are read
 * from the store while the watch says they are fresh (watch_fresh.h); a miss
 * there, a kind that is stale (before its first list, or from a broken watch
 * until its re-list completes), or a kind the server does not cache
 * (TrainJobs, JobSets: their number grows with the cluster), is asked of the
 * API server with a GET inside the request's ?timeout=. A stale kind reads
 * through for hits too: the cache's copy may have been deleted or changed
 * while the watch was away (a runtime deleted, or labelled deprecated,
 * during an API-server restart), and a false allow is worse than a slower
 * answer. Only a 404 means "not found"; no answer, or any other status, is
 * TP_EUNAVAILABLE and the decision becomes an error answer the API server
 * may retry — never the cache's stale copy. Without an API server (offline,
 * --runtimes) the store is the whole truth.
 *
 * A Namespace (the one a TrainJob is in, for its Pod Security labels) is
 * the exception to "404 is not found": the API server refuses any write in
 * a namespace that does not exist (NamespaceLifecycle) before it calls a
 * webhook, so a 404 means the request raced the namespace's deletion or this
 * replica reads another API server than the one calling it. Its labels are
 * then unknown, not absent: TP_EUNAVAILABLE, which the rules answer with a
 * warning that Pod Security was not checked, never as an unlabelled
 * (privileged) namespace.
 *
 * The objects the Pods' admission plugins read (the strict profile's
 * pod/cluster_state.c) are not cached: a ServiceAccount is read by GET per
 * request, as TrainJobs are (every namespace has at least one, so their
 * number grows with the cluster; and the account must exist when the Pods
 * are made); LimitRanges and ResourceQuotas by a list of the namespace per
 * request (list): a quota's status.used moves with every Pod in the
 * namespace, so a cached copy would be stale by design, and a LimitRange
 * refuses Pods as soon as it is made. Without an API server a store given
 * no ServiceAccount cannot say one is missing (TP_EUNAVAILABLE); lists
 * read the store, and with an API server too when the store holds some of
 * the namespace's objects of the kind (the offline commands' inputs).
 *
 * namespaces_of (a hint added to a denial, never a decision) reads the store
 * whether fresh or not.
 *
 * No lock is held while a request waits: objects from the store are taken
 * with counted holds, objects from the API server live in the request's
 * arena; tw_resolver_done lets go of both.
 *
 * Cache-only (the server's first try at a small request, on the thread
 * that reads its connection, where a wait on the API server would hold
 * every other connection of that thread): a lookup that would ask the API
 * server (a miss, a stale kind, a kind the store does not keep) is not
 * made; it answers TP_EUNAVAILABLE and sets needs_api. A decision made with
 * needs_api set is not an answer: its caller throws it away and decides
 * again with a resolver that may ask. A cache-only resolver counts its
 * lookups in /metrics only when the decision is kept (tw_resolver_done), so
 * a decision made twice counts its lookups once.
 */
#ifndef TW_RESOLVER_H
#define TW_RESOLVER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "policy/trainpolicy.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/watch_fresh.h"

typedef struct tw_cluster {
	tw_kubeapi *api;        /* NULL: the store is the whole truth */
	unsigned cached;        /* bit (1u << tp_kind) per kind the store keeps */
	tw_freshness *fresh;    /* which cached kinds are fresh now, same bits (NULL:
				   all of them, always); outlives the server */
	long default_budget_ms; /* for a request without ?timeout= (0: 5000) */
	_Atomic int *kube_minor; /* the cluster's Kubernetes release, re-read when the
				    API server comes back (NULL: the options' own) */
} tw_cluster;

/* What a request keeps a hold on, in its arena. */
struct tw_hold_node;

typedef struct tw_resolver {
	tp_lookup lookup;      /* ctx is this resolver */
	const tw_cluster *cluster;
	const tp_store *store; /* may be NULL: empty */
	tp_arena *arena;
	long long deadline_ms; /* monotonic ms by which lookups must end; 0: none */
	struct tw_hold_node *holds;
	bool cache_only;       /* set after init: never ask the API server */
	bool needs_api;        /* cache-only: a lookup needed the API server */
	/* cache-only: the store's answers by kind and result, counted in
	 * /metrics by tw_resolver_done */
	unsigned counts[TP_KIND__COUNT][3];
} tw_resolver;

/* Lookups end by deadline_ms less a reserve for the answer itself. */
#define TW_RESOLVER_RESERVE_MS 100

void tw_resolver_init(tw_resolver *r, const tw_cluster *c, const tp_store *store,
		      tp_arena *arena, long long deadline_ms);
/* Release every hold (call after the answer has been written) and count
 * the lookups in /metrics, unless needs_api says the decision is thrown
 * away (it is made again, and counted then). */
void tw_resolver_done(tw_resolver *r);

#endif /* TW_RESOLVER_H */

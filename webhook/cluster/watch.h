/*
 * webhook/cluster/watch.h — keeps local copies in step with the API server:
 * for each watched kind a paged list, then a watch from the list's
 * resourceVersion, its objects handed to a sink as events arrive. One
 * background thread (curl multi, one transfer per kind); admission requests
 * never wait on it.
 *
 *   - lists page with limit/continue; a fresh list replaces the kind's
 *     objects without a moment where a kept object is missing (new ones are
 *     put first, then the ones the list no longer has are deleted);
 *   - watches ask for bookmarks and a server-side timeout; BOOKMARK moves the
 *     resourceVersion; a watch the server ends cleanly resumes from it;
 *   - 410 Gone (HTTP status or an ERROR event) re-lists at once, with no
 *     backoff, as client-go's reflector does;
 *   - anything else that breaks a watch (a lost connection, an error status,
 *     an event that cannot be read, another ERROR event) re-lists after a
 *     jittered exponential backoff (backoff_min_ms doubling up to
 *     backoff_max_ms), as does a failed list;
 *   - from such a break until the re-list completes (and before the first
 *     list) the kind is stale: its bit in opts.fresh is clear, and lookups
 *     read through to the API server (watch_fresh.h); readiness is not taken
 *     back (see tw_watch_ready);
 *   - the bearer token file is read again for every request;
 *   - a kind may be optional: its API may be absent (a CRD not installed,
 *     404) or forbidden, and readiness does not wait for it; it is retried
 *     with the same backoff and its sink simply holds no objects.
 */
#ifndef TW_WATCH_H
#define TW_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/trainpolicy.h"
#include "webhook/cluster/kube.h"
#include "webhook/cluster/watch_fresh.h"

/* Where a kind's objects go. Called on the watch thread. */
typedef struct tw_watch_sink {
	void (*put)(void *arg, cJSON *obj);                       /* takes obj */
	void (*del)(void *arg, const char *ns, const char *name); /* ns "": cluster-scoped */
	void *arg;
} tw_watch_sink;

typedef struct tw_watch_kind {
	const char *group;      /* "" for the core API (/api/v1) */
	const char *version;
	const char *plural;     /* "clustertrainingruntimes" */
	const char *kind;       /* "ClusterTrainingRuntime": objects of another kind are ignored */
	bool cluster_scoped;
	const char *namespace_; /* NULL: every namespace */
	const char *name;       /* NULL: every object; else only this one (a field selector) */
	bool optional;          /* readiness does not wait for it */
	unsigned fresh_bit;     /* its bit in opts.fresh (0: none) */
	tw_watch_sink sink;
} tw_watch_kind;

#define TW_WATCH_MAX_KINDS 8

/* A sink that keeps kind k of a store in step (arg: a tw_store_sink). It
 * drops what no rule reads (managedFields, kubectl's last-applied copy). */
typedef struct tw_store_sink {
	tp_store *store;
	tp_kind kind;
} tw_store_sink;
tw_watch_sink tw_watch_store_sink(tw_store_sink *s);

typedef struct tw_watch_opts {
	const tw_kube_config *kube;  /* copied */
	const tw_watch_kind *kinds;  /* copied (the strings must outlive the watch) */
	size_t nkinds;               /* at most TW_WATCH_MAX_KINDS */
	unsigned page_limit;         /* list ?limit= (0: 500) */
	unsigned timeout_s;          /* watch ?timeoutSeconds= (0: 300) */
	unsigned backoff_min_ms;     /* 0: 200 */
	unsigned backoff_max_ms;     /* 0: 30000 */
	size_t max_event;            /* longest watch line (0: 16 MiB) */
	size_t max_page;             /* largest list page body (0: 256 MiB) */
	const char *name;            /* for the log ("runtimes", "certificates"); NULL: "watch" */
	bool metrics;                /* show its kinds in /metrics */
	tw_freshness *fresh;         /* the kinds' fresh bits (NULL: none); outlives the watch */
	/* Called in the watch's thread, at most once a round, after a kind
	 * listed before is listed again (its watch broke: the API server may
	 * have restarted, upgraded); NULL: nothing. */
	void (*relisted)(void *arg);
	void *relisted_arg;
} tw_watch_opts;

typedef struct tw_watch tw_watch;

/* Start the background thread. 0, or TW_EFAILED with the reason in err. */
int tw_watch_start(const tw_watch_opts *o, tw_watch **out, char *err, size_t errlen);
/* Stop the thread (interrupting transfers in flight), join it, free. */
void tw_watch_stop(tw_watch *w);

/* True once every kind's first list has been applied (optional ones too). */
bool tw_watch_synced(const tw_watch *w);
/* True once every required kind has been listed. Otherwise false, and why
 * (may be NULL) names each kind still waiting and what its last list got:
 * "trainingruntimes.trainer.kubeflow.org not listed yet (HTTP 403: ...)".
 * A kind that goes stale after its first list (an API-server restart, a 410)
 * stays ready: its lookups read through to the API server, so its answers
 * stay right, and every replica sees the same restart at once — taking
 * readiness back would empty the Service and, with failurePolicy: Fail,
 * refuse every write of the kinds until the API server is back and listed. */
bool tw_watch_ready(tw_watch *w, char *why, size_t whylen);
/* True once kind i (its index in opts.kinds) has been listed. */
bool tw_watch_kind_synced(const tw_watch *w, size_t i);
/* True while kind i is fresh (listed, its watch unbroken since). */
bool tw_watch_kind_fresh(const tw_watch *w, size_t i);

typedef struct tw_watch_stat {
	bool synced;          /* first list applied */
	bool absent;          /* optional, and its last list answered 404 */
	bool fresh;           /* listed, and its watch unbroken since */
	uint64_t lists;       /* completed lists (the first one included) */
	uint64_t relists;     /* completed lists after the first (410, broken stream) */
	uint64_t backoffs;    /* waits after a failure (a 410 takes none) */
	uint64_t reconnects;  /* watches resumed after the server ended one cleanly */
	uint64_t events;      /* ADDED/MODIFIED/DELETED applied */
	uint64_t bookmarks;
	int64_t last_sync_ms; /* wall clock of the last list or event (ms since epoch) */
	long last_status;     /* HTTP status of the last list attempt (0: none or no answer) */
	char last_error[192]; /* why the last list failed ("" when it did not) */
	char rv[128];         /* the resourceVersion the next watch starts from */
} tw_watch_stat;

/* out has room for opts.nkinds entries. */
void tw_watch_stats(tw_watch *w, tw_watch_stat *out);

#endif /* TW_WATCH_H */

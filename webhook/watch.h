/*
 * watch.h — keeps a store in step with the API server: for each watched
 * resource a paged list, then a watch from the list's resourceVersion,
 * applied to the store as events arrive. One background thread (curl multi,
 * one transfer per resource); admission requests never wait on it.
 *
 *   - lists page with limit/continue; the objects of a fresh list replace
 *     that kind's objects without a moment where a kept object is missing
 *     (new ones are put first, then the ones the list no longer has go);
 *   - watches ask for bookmarks and a server-side timeout; BOOKMARK moves the
 *     resourceVersion; 410 Gone (HTTP status or an ERROR event) re-lists;
 *   - a lost connection or an error reconnects after a jittered exponential
 *     backoff (backoff_min_ms doubling up to backoff_max_ms);
 *   - the bearer token file is read again for every request.
 */
#ifndef TW_WATCH_H
#define TW_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/trainpolicy.h"
#include "webhook/kube.h"

/* The watched resources, in this order. */
enum {
	TW_WATCH_CLUSTER_TRAINING_RUNTIMES = 0,
	TW_WATCH_TRAINING_RUNTIMES,
	TW_WATCH_TRAINJOBS,
	TW_WATCH_JOBSETS,
	TW_WATCH__COUNT
};

typedef struct tw_watch_resource {
	const char *plural;      /* "trainjobs" */
	const char *group;       /* "trainer.kubeflow.org" */
	const char *version;     /* "v1alpha1" */
	const char *kind;        /* "TrainJob" */
	tp_kind tp;              /* TP_KIND_TRAINJOB */
} tw_watch_resource;

extern const tw_watch_resource tw_watch_resources[TW_WATCH__COUNT];

typedef struct tw_watch_opts {
	const tw_kube_config *kube; /* copied */
	tp_store *store;            /* borrowed: must outlive tw_watch_stop */
	unsigned page_limit;        /* list ?limit= (0: 500) */
	unsigned timeout_s;         /* watch ?timeoutSeconds= (0: 300) */
	unsigned backoff_min_ms;    /* 0: 200 */
	unsigned backoff_max_ms;    /* 0: 30000 */
	size_t max_event;           /* longest watch line (0: 16 MiB) */
	size_t max_page;            /* largest list page body (0: 256 MiB) */
} tw_watch_opts;

typedef struct tw_watch tw_watch;

/* Start the background thread. 0, or -1 with the reason in err. */
int tw_watch_start(const tw_watch_opts *o, tw_watch **out, char *err, size_t errlen);
/* Stop the thread (interrupting transfers in flight), join it, free. */
void tw_watch_stop(tw_watch *w);

/* True once every resource's first list has been applied. */
bool tw_watch_synced(const tw_watch *w);
/* For tw_server_set_ready_gate: arg is the tw_watch. */
bool tw_watch_ready_gate(void *arg);

typedef struct tw_watch_stat {
	bool synced;          /* first list applied */
	uint64_t lists;       /* completed lists (the first one included) */
	uint64_t relists;     /* lists after the first (410, broken stream) */
	uint64_t reconnects;  /* watches started again after one ended */
	uint64_t events;      /* ADDED/MODIFIED/DELETED applied */
	uint64_t bookmarks;
	int64_t last_sync_ms; /* wall clock of the last list or event (ms since epoch) */
	char rv[128];         /* the resourceVersion the next watch starts from */
} tw_watch_stat;

void tw_watch_stats(tw_watch *w, tw_watch_stat out[TW_WATCH__COUNT]);

#endif /* TW_WATCH_H */

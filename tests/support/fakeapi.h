/*
 * fakeapi.h — a fake Kubernetes API server for the tests: plain HTTP (or
 * HTTPS) on 127.0.0.1 (a free port) serving a few resources the way
 * kube-apiserver does for our client:
 *   - paged lists (limit/continue), fieldSelector=metadata.name=X,
 *     all-namespace and namespaced collection paths;
 *   - GET, PUT (optimistic concurrency: a stale metadata.resourceVersion is
 *     409 Conflict) and POST (409 AlreadyExists) of one object; every write
 *     bumps a global resourceVersion and is sent to open watches;
 *   - watch streams, fed by writes and by what the test pushes (events,
 *     drops, clean ends, 410), to every watcher of the resource;
 *   - knobs: a bearer token, lists or item GETs answering a status, objects
 *     only GET can see, held lists, a delay, forced conflicts;
 *   - a restart: down (every stream broken, connections refused), then up on
 *     the same port with the same objects; watches from a resourceVersion
 *     older than a floor answered as kube-apiserver does after a restart
 *     (200, then an ERROR event 410 "too old resource version", then the end).
 *   - HTTPS with client certificates (fa_start_tls), for kubeconfigs.
 * It records what the client asked for.
 */
#ifndef TT_FAKEAPI_H
#define TT_FAKEAPI_H

#include <stdbool.h>

/* The resources it serves. */
enum {
	FA_CTR = 0, /* trainer.kubeflow.org/v1alpha1 clustertrainingruntimes */
	FA_TR,      /* trainer.kubeflow.org/v1alpha1 trainingruntimes (namespaced) */
	FA_TJ,      /* trainer.kubeflow.org/v1alpha1 trainjobs (namespaced) */
	FA_JS,      /* jobset.x-k8s.io/v1alpha2 jobsets (namespaced) */
	FA_PC,      /* scheduling.k8s.io/v1 priorityclasses */
	FA_SECRET,  /* v1 secrets (namespaced) */
	FA_VWC,     /* admissionregistration.k8s.io/v1 validatingwebhookconfigurations */
	FA_MWC,     /* admissionregistration.k8s.io/v1 mutatingwebhookconfigurations */
	FA_CM,      /* v1 configmaps (namespaced) */
	FA_CRD,     /* apiextensions.k8s.io/v1 customresourcedefinitions */
	FA_EPS,     /* discovery.k8s.io/v1 endpointslices (namespaced; labelSelector k=v) */
	FA_NS,      /* v1 namespaces (a TrainJob's Pod Security labels) */
	FA_SA,      /* v1 serviceaccounts (namespaced; the Pods' accounts) */
	FA_LR,      /* v1 limitranges (namespaced) */
	FA_RQ,      /* v1 resourcequotas (namespaced) */
	FA_RESOURCES
};

typedef struct fa_server fa_server;

typedef struct fa_stats {
	unsigned lists;          /* list requests answered 200 */
	unsigned continued;      /* ... of which carried a continue token */
	unsigned watches;        /* watch requests answered 200 */
	unsigned gets;           /* item GETs answered (any status) */
	unsigned puts, posts;    /* writes answered 2xx */
	unsigned conflicts;      /* writes answered 409 */
	unsigned unauthorized;   /* requests refused with 401 */
	unsigned gone;           /* watch requests answered 410 */
	unsigned expired;        /* watch requests answered an ERROR event 410 */
	bool watch_open;         /* a watch stream is being served */
	bool list_waiting;       /* a list request is held */
	char last_watch_rv[128]; /* resourceVersion= of the last watch */
	char last_token[256];    /* bearer token of the last request */
	char last_query[512];    /* the last request's query, "k=v&..." */
	char last_path[512];     /* the last request's path */
	char last_user[128];     /* the CN of its client certificate ("": none) */
} fa_stats;

/* 0 or -1. */
int fa_start(fa_server **out);
/* HTTPS instead: the serving pair; with client_ca_pem, a client certificate
 * that CA signed authenticates a request as its CN (fa_stats.last_user), as
 * fa_set_token's token does; a request with neither is refused 401. */
typedef struct fa_tls {
	const char *cert_pem, *key_pem, *client_ca_pem;
} fa_tls;
int fa_start_tls(fa_server **out, const fa_tls *tls);
unsigned short fa_port(const fa_server *f);
/* Ends every stream (as dropped), joins the server's threads, frees. */
void fa_stop(fa_server *f);

/* The token requests must carry (NULL: any). */
void fa_set_token(fa_server *f, const char *token);
/* The objects of resource r: items_json is a JSON array of objects; rv the
 * list's resourceVersion. */
void fa_set_objects(fa_server *f, int r, const char *items_json, const char *rv);
/* Add or replace one object (JSON text) as a client's write would: a new
 * resourceVersion, and a MODIFIED or ADDED event to the watchers. */
void fa_put_object(fa_server *f, int r, const char *json);
/* Remove ns/name (ns NULL for cluster-scoped), as kubectl delete would: a
 * DELETED event to the watchers. */
void fa_delete_object(fa_server *f, int r, const char *ns, const char *name);
/* Every object of r as a JSON array, malloc'd. */
char *fa_list_objects(fa_server *f, int r);
/* One object, visible to a GET only (neither to lists nor to watches): an
 * object whose watch event has not arrived yet. */
void fa_put_hidden(fa_server *f, int r, const char *json);
/* The object ns/name (ns NULL for cluster-scoped) as JSON text, malloc'd;
 * NULL when absent. */
char *fa_get_object(fa_server *f, int r, const char *ns, const char *name);
/* At most n items per page (0: only ?limit= decides). */
void fa_set_page(fa_server *f, int r, unsigned n);
/* Lists and watches of r answer this status with a Status body (0: serve). */
void fa_set_list_status(fa_server *f, int r, unsigned code);
/* Item GETs of r answer this status (0: serve). */
void fa_set_get_status(fa_server *f, int r, unsigned code);
/* The next n writes (PUT/POST) of r answer 409 Conflict. */
void fa_conflict_next(fa_server *f, int r, unsigned n);
/* GET /version answers json (NULL: 404, as before any is set); how many
 * GET /version requests came. */
void fa_set_version(fa_server *f, const char *json);
unsigned fa_version_gets(fa_server *f);
/* Every request waits this long before it is answered (0: none). */
void fa_set_delay(fa_server *f, unsigned ms);
/* Hold list requests of r until released. */
void fa_hold_list(fa_server *f, int r, bool hold);
/* The next watch request of r is answered 410 Gone. */
void fa_gone_next_watch(fa_server *f, int r);
/* Watches of r from a resourceVersion below rv (a number) get 200, an ERROR
 * event with code 410, and the end of the stream (0: none). */
void fa_expire_before(fa_server *f, int r, unsigned long long rv);
/* down: stop listening (every stream ends as dropped, held lists are cut,
 * new connections are refused); up: listen again on the same port. Objects,
 * knobs and stats are kept. */
void fa_set_down(fa_server *f, bool down);

/* Append to r's watch streams: one JSON line (without '\n'); a drop (the
 * connection breaks); a clean end. Sent to every open stream of r, or
 * queued for the next one when none is open. */
void fa_push(fa_server *f, int r, const char *line);
void fa_drop(fa_server *f, int r);
void fa_end(fa_server *f, int r);

void fa_get_stats(fa_server *f, int r, fa_stats *out);

#endif /* TT_FAKEAPI_H */

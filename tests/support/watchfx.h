/*
 * watchfx.h — the fixture of the watch's tests (test_watch.c,
 * test_watch_relist.c): webhook/cluster/watch.c following four kinds of the
 * fake API server (tests/support/fakeapi.c) into one store, in process, its
 * log in a file; objects and events to feed it, and bounded waits for what
 * it does. cmocka: every helper fails the test itself.
 */
#ifndef TT_WATCHFX_H
#define TT_WATCHFX_H

#include <stdbool.h>

#include "tests/support/fakeapi.h"
#include "webhook/cluster/watch.h"

#define WF_WAIT_MS 10000

/* The kinds watched, in the fake's order (FA_CTR, FA_TR, FA_TJ, FA_JS). */
#define WF_NKINDS 4
extern const tw_watch_kind wf_kinds[WF_NKINDS];
extern const tp_kind wf_tp[WF_NKINDS];

typedef struct wf {
	fa_server *fa;
	char dir[64];
	char token_path[128]; /* "token-1" (the fake wants it) */
	tw_kube_config kc;
	tp_store *store;
	tw_watch *w;
	tw_store_sink sinks[WF_NKINDS];
	tw_freshness fresh;   /* bit (1u << tp_kind) per fresh kind */
	char log_path[128];   /* the process's log lines, from wf_setup on */
	int log_fd;
} wf;

/* cmocka setup and teardown: the fake, the token, the store, the log. */
int wf_setup(void **state);
int wf_teardown(void **state);
/* Start the watch; after a failure it waits backoff_min_ms doubling up to
 * backoff_max_ms. wf_start: 50 .. 400 ms. */
void wf_start_backoff(wf *x, unsigned backoff_min_ms, unsigned backoff_max_ms);
void wf_start(wf *x);

/* An object as JSON text (malloc'd), with managedFields; extra: more
 * members after spec, or NULL. ns NULL: cluster-scoped. */
char *wf_obj(const char *kind, const char *ns, const char *name, const char *rv,
	     const char *extra);
/* Push {"type", "object"} to r's watches; frees object. */
void wf_push_event(fa_server *fa, int r, const char *type, char *object);
/* A write through the fake (a new resourceVersion, an event); frees json. */
void wf_put_object(fa_server *fa, int r, char *json);
/* Replace a file as the kubelet does (write aside, rename). */
void wf_write_file(const char *path, const char *text);

bool wf_synced(void *x);
/* The first lists done and the four watches open. */
void wf_wait_watching(wf *x);
/* Wait for ns/name of k to be in the store (want) or not. */
void wf_expect(wf *x, tp_kind k, const char *ns, const char *name, bool want);
/* Wait for ns/name of k to be in the store with spec.<field> == value. */
void wf_expect_field(wf *x, tp_kind k, const char *ns, const char *name, const char *field,
		     const char *value);
/* Wait for the stats of watched kind i to report resourceVersion rv. */
void wf_wait_rv(wf *x, int i, const char *rv);
/* Wait for watch number n of resource r to be open. */
void wf_wait_watch_number(wf *x, int r, unsigned n);

/* The log so far (malloc'd). */
char *wf_log(wf *x);
/* A whole "name{labels} value" line of /metrics is there. */
bool wf_has_metric(const char *line);

#endif

/*
 * apiclient.h — the in-process cluster client the cluster tests hold
 * (test_cluster.c, test_watch_fresh.c, test_pod_security_cluster.c): the
 * fake API server (fakeapi.c) over plain HTTP with no token, a client of it
 * as serve makes one, an empty store and an arena, with the metrics reset.
 * cmocka: every helper fails the test itself.
 */
#ifndef TT_APICLIENT_H
#define TT_APICLIENT_H

#include "tests/support/fakeapi.h"
#include "webhook/cluster/kubeapi.h"

typedef struct tt_apiclient {
	fa_server *fa;
	tw_kube_config kc;
	tw_kubeapi *api;
	tp_store *store;
	tp_arena *arena;
} tt_apiclient;

void tt_apiclient_open(tt_apiclient *c);
/* Stop the fake first (no request of its is left), then free the rest. */
void tt_apiclient_close(tt_apiclient *c);

/* cmocka setup and teardown with *state a calloc'd tt_apiclient. */
int tt_apiclient_setup(void **state);
int tt_apiclient_teardown(void **state);

/* A kubeconfig for c's fake (plain HTTP, a token) written as dir/kubeconfig,
 * for the offline commands' --kubeconfig. */
void tt_apiclient_kubeconfig(const tt_apiclient *c, const char *dir);

#endif

/*
 * cluster_reads.c — the offline commands' reads of the cluster (see
 * cluster_reads.h).
 */
#include "webhook/cli/cluster_reads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/cluster/kube.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/resolver.h"

struct tw_cli_reads {
	tw_kube_config kc;
	tw_kubeapi *api;
	tw_cluster cluster;
	tw_resolver rs;
	tp_arena *arena;  /* what the API server answered, until close */
	tp_lookup lookup; /* the resolver's, with arena entered while it reads */
};

const char *tw_cli_cluster_flag(const tw_cli *c, const char *err)
{
	return c->context && (!c->kubeconfig || strstr(err, "context")) ? "--context"
									 : "--kubeconfig";
}

/* The resolver parses the API server's answers into the current arena (a
 * server request's): here the run's, entered around each read only, so
 * that nothing else a command makes lands in it. */
static int get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
	       char *why, size_t whylen)
{
	tw_cli_reads *x = ctx;
	tp_arena *prev = tp_arena_enter(x->arena);
	int rc = x->rs.lookup.get(x->rs.lookup.ctx, k, ns, name, out, why, whylen);
	tp_arena_leave(prev);
	return rc;
}

static size_t namespaces_of(void *ctx, tp_kind k, const char *name, const char **out,
			    size_t max)
{
	tw_cli_reads *x = ctx;
	return x->rs.lookup.namespaces_of(x->rs.lookup.ctx, k, name, out, max);
}

static int list(void *ctx, tp_kind k, const char *ns, const cJSON **out, size_t max, size_t *n,
		char *why, size_t whylen)
{
	tw_cli_reads *x = ctx;
	tp_arena *prev = tp_arena_enter(x->arena);
	int rc = x->rs.lookup.list(x->rs.lookup.ctx, k, ns, out, max, n, why, whylen);
	tp_arena_leave(prev);
	return rc;
}

/* The connection the CRDs were read with (cli.c), kept for the reads: an
 * exec plugin's credential lives on it, so the plugin runs once a run. */
static struct {
	tw_kube_config kc;
	tw_kubeapi *api;
} kept;

void tw_cli_reads_keep(tw_kube_config *kc, tw_kubeapi *api)
{
	if (!api || kept.api) {
		tw_kubeapi_free(api);
		tw_kube_config_free(kc);
		return;
	}
	kept.kc = *kc;
	kept.api = api;
	memset(kc, 0, sizeof(*kc));
}

/* x's connection: the kept one, else one of its own. */
static int connect_to(tw_cli_reads *x, const tw_cli *c, char *err, size_t n)
{
	if (kept.api) {
		x->kc = kept.kc;
		x->api = kept.api;
		memset(&kept, 0, sizeof(kept));
		return 0;
	}
	return tw_kubeconfig_load(c->kubeconfig, c->context, &x->kc, err, n) ||
	       tw_kubeapi_new(&x->kc, &x->api, err, n);
}

int tw_cli_reads_open(tw_cli_reads **out, tw_cli *c)
{
	*out = NULL;
	if (!c->kubeconfig && !c->context)
		return TP_OK;
	tw_cli_reads *x = calloc(1, sizeof(*x));
	if (!x || tp_arena_new(&x->arena, 0)) {
		free(x);
		return TP_ENOMEM;
	}
	char err[1024] = "";
	if (connect_to(x, c, err, sizeof(err))) {
		fprintf(stderr, "trainer-webhook %s: %s: %s\n", c->cmd, tw_cli_cluster_flag(c, err),
			err);
		tw_cli_reads_close(x, c);
		return TP_EUNAVAILABLE;
	}
	/* every kind from the inputs first; a miss asks the API server */
	x->cluster = (tw_cluster){ .api = x->api, .cached = ~0u };
	tw_resolver_init(&x->rs, &x->cluster, c->store, x->arena, 0);
	x->lookup = (tp_lookup){ get, namespaces_of, x, list };
	c->opt.lookup = &x->lookup;
	*out = x;
	return TP_OK;
}

void tw_cli_reads_close(tw_cli_reads *x, tw_cli *c)
{
	if (!x)
		return;
	if (c->opt.lookup == &x->lookup)
		c->opt.lookup = NULL;
	if (x->api)
		tw_resolver_done(&x->rs);
	tw_kubeapi_free(x->api);
	tw_kube_config_free(&x->kc);
	tp_arena_free(x->arena);
	free(x);
}

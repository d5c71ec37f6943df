/*
 * crds_follow.c — `serve --kube` keeps the CRDs of its kinds as the cluster
 * has them: a watch of each by name (kube_crds.c's list of names), and on
 * every change a new compiled set swapped into the server, which requests
 * that started keep until they finish. A CRD that is absent (or deleted)
 * leaves its kinds to the built-in schema checks. What is kept between
 * changes is each CRD without its descriptions (most of its bytes).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/server/crds_follow.h"
#include "webhook/core/log.h"
#include "webhook/cluster/kubeapi.h"

struct tw_crds_follow {
	tw_server *srv;
	pthread_mutex_t lock;
	cJSON *slot[TW_CRDS_FOLLOW_MAX]; /* one per name, NULL when absent */
	size_t nslots;
};

/* Descriptions, managedFields and kubectl's copy: nothing the schema needs. */
static void strip(cJSON *v, int depth)
{
	if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
		return;
	if (depth < 200)
		for (cJSON *c = v->child; c; c = c->next)
			strip(c, depth + 1);
	if (cJSON_IsObject(v))
		cJSON_DeleteItemFromObjectCaseSensitive(v, "description");
}

static void slim(cJSON *crd)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(crd, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
	cJSON_DeleteItemFromObjectCaseSensitive(crd, "status");
	strip(cJSON_GetObjectItemCaseSensitive(crd, "spec"), 0);
}

/* The slot of a followed CRD by its name; -1 means it is not followed. */
static int slot_of(const char *name)
{
	for (int i = 0; tw_kube_crd_names[i] && i < TW_CRDS_FOLLOW_MAX; i++)
		if (name && !strcmp(tw_kube_crd_names[i], name))
			return i;
	return -1;
}

/* A new set from the slots, into the server (f->lock held). */
static void rebuild(tw_crds_follow *f)
{
	tp_crds *c = NULL;
	if (tp_crds_new(&c)) {
		tw_log(TW_LOG_ERROR, "out of memory compiling the CRDs; the previous ones stay in use");
		return;
	}
	size_t n = 0;
	for (size_t i = 0; i < f->nslots; i++) {
		char why[512] = "";
		if (!f->slot[i])
			continue;
		if (tp_crds_add(c, f->slot[i], why, sizeof(why)))
			tw_log(TW_LOG_WARN, "CRD %s does not compile (%s): its kinds keep the built-in "
			       "schema checks", tw_kube_crd_names[i], why);
		else
			n++;
	}
	tw_server_set_crds(f->srv, n ? c : NULL);
	tp_crds_unref(c);
	tw_log(TW_LOG_INFO, "checking with %zu CRD%s from the cluster", n, n == 1 ? "" : "s");
}

static void on_put(void *arg, cJSON *obj)
{
	tw_crds_follow *f = arg;
	int i = slot_of(tp_meta_name(obj));
	if (i < 0) {
		cJSON_Delete(obj);
		return;
	}
	slim(obj);
	pthread_mutex_lock(&f->lock);
	cJSON_Delete(f->slot[i]);
	f->slot[i] = obj;
	rebuild(f);
	pthread_mutex_unlock(&f->lock);
}

static void on_del(void *arg, const char *ns, const char *name)
{
	(void)ns;
	tw_crds_follow *f = arg;
	int i = slot_of(name);
	if (i < 0)
		return;
	pthread_mutex_lock(&f->lock);
	cJSON_Delete(f->slot[i]);
	f->slot[i] = NULL;
	rebuild(f);
	pthread_mutex_unlock(&f->lock);
}

tw_crds_follow *tw_crds_follow_new(tw_server *srv)
{
	tw_crds_follow *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->srv = srv;
	pthread_mutex_init(&f->lock, NULL);
	while (tw_kube_crd_names[f->nslots] && f->nslots < TW_CRDS_FOLLOW_MAX)
		f->nslots++;
	return f;
}

size_t tw_crds_follow_kinds(tw_crds_follow *f, tw_watch_kind *out)
{
	for (size_t i = 0; i < f->nslots; i++)
		out[i] = (tw_watch_kind){
			.group = "apiextensions.k8s.io", .version = "v1",
			.plural = "customresourcedefinitions", .kind = "CustomResourceDefinition",
			.cluster_scoped = true, .name = tw_kube_crd_names[i],
			.sink = { on_put, on_del, f },
		};
	return f->nslots;
}

void tw_crds_follow_free(tw_crds_follow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nslots; i++)
		cJSON_Delete(f->slot[i]);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

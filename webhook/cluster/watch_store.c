/*
 * watch_store.c — the sink that keeps one kind of a tp_store in step with a
 * watch (see watch.h).
 */
#include "webhook/cluster/watch.h"

#include "webhook/metrics/metrics.h"

static void store_put(void *arg, cJSON *obj)
{
	tw_store_sink *s = arg;
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	/* Large and never read by a rule: managedFields, and kubectl's copy of
	 * the whole object in an annotation. */
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
	cJSON_DeleteItemFromObjectCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(meta, "annotations"),
		"kubectl.kubernetes.io/last-applied-configuration");
	if (tp_kind_of(obj) != s->kind) {
		cJSON_Delete(obj);
		return;
	}
	if (tp_store_put(s->store, obj) != TP_OK)
		cJSON_Delete(obj); /* the store takes it only on success */
	tw_metrics_store_set(s->store);
}

static void store_del(void *arg, const char *ns, const char *name)
{
	tw_store_sink *s = arg;
	tp_store_remove(s->store, s->kind, *ns ? ns : NULL, name);
	tw_metrics_store_set(s->store);
}

tw_watch_sink tw_watch_store_sink(tw_store_sink *s)
{
	return (tw_watch_sink){ store_put, store_del, s };
}

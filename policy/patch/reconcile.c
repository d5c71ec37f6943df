/*
 * patch/reconcile.c — a JobSet the cluster holds, brought to the JobSet the
 * expansion builds.
 *
 * The built fields are laid over the existing object with strategic-merge
 * semantics (replicated jobs, containers, env, volumes by their keys), so
 * what the build does not set stays: the API server's metadata, the
 * defaults JobSet's own webhook filled in (network, successPolicy,
 * completionMode, restartPolicy, ...), the status. Nothing is ever removed,
 * which keeps the mutating webhook's patch to adds and replaces.
 */
#include "policy/core/deadline.h"
#include "policy/core/hash.h"
#include "policy/core/internal.h"
#include "policy/patch/patch.h"

#include <string.h>

static int lay_over(cJSON *parent, const char *key, const cJSON *from)
{
	if (!from)
		return TP_OK;
	cJSON *to = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (cJSON_IsObject(to) && cJSON_IsObject(from))
		return tp__strategic_merge(to, from, NULL);
	cJSON *copy = cJSON_Duplicate(from, 1);
	if (!copy)
		return TP_ENOMEM;
	if (to)
		cJSON_ReplaceItemViaPointer(parent, to, copy);
	else
		cJSON_AddItemToObject(parent, key, copy);
	return TP_OK;
}

/* Every job of the object filed by name, all of them, in order: a built
 * job takes the first one left of its name (a scan of the jobs for each
 * built job before). */
static int file_jobs(const cJSON *jobs, tp_htab *t)
{
	int rc = tp__htab_reserve(t, (size_t)cJSON_GetArraySize(jobs));
	for (const cJSON *j = jobs->child; j && !rc; j = j->next) {
		const char *name = tp_get_str(j, "name");
		if (name)
			rc = tp__htab_put(t, tp__hash_str(name), j);
	}
	return rc;
}

static cJSON *take_job(tp_htab *t, const char *name)
{
	size_t pos = 0;
	uint64_t h = tp__hash_str(name);
	for (const cJSON *j; (j = tp__htab_next(t, h, &pos));)
		if (!strcmp(tp_get_str(j, "name"), name)) {
			tp__htab_replace(t, h, j, NULL);
			return (cJSON *)j;
		}
	return NULL;
}

/* Strategic merge appends jobs the object did not have; JobSet's rules
 * (dependsOn names an earlier job) need the built order. Jobs only the
 * object has keep their order after the built ones. */
static int order_jobs_as_built(cJSON *spec, const cJSON *built_spec)
{
	cJSON *jobs = cJSON_GetObjectItemCaseSensitive(spec, "replicatedJobs");
	if (!cJSON_IsArray(jobs))
		return TP_OK;
	cJSON *front = NULL, *tail = NULL;
	const cJSON *b;
	tp_htab by_name = TP_HTAB_INIT;
	int rc = file_jobs(jobs, &by_name);
	const cJSON *built_jobs = rc ? NULL : tp_get_array(built_spec, "replicatedJobs");
	cJSON_ArrayForEach(b, built_jobs)
	{
		const char *name = tp_get_str(b, "name");
		cJSON *j = name ? take_job(&by_name, name) : NULL;
		if (!j)
			continue;
		cJSON_DetachItemViaPointer(jobs, j);
		if (!front)
			front = j, j->prev = j;
		else
			tail->next = j, j->prev = tail, front->prev = j;
		tail = j;
	}
	tp__htab_free(&by_name);
	if (!front)
		return rc;
	/* front..tail, then what is left of jobs, in cJSON's list shape. */
	tail->next = jobs->child;
	if (jobs->child) {
		front->prev = jobs->child->prev;
		jobs->child->prev = tail;
	}
	jobs->child = front;
	return TP_OK;
}

int tp_jobset_reconcile(const cJSON *existing, const cJSON *built, cJSON **out)
{
	if (!cJSON_IsObject(existing) || !cJSON_IsObject(built) || !out)
		return TP_EINVAL;
	cJSON *t = cJSON_Duplicate(existing, 1);
	if (!t)
		return TP_ENOMEM;
	const cJSON *bmeta = tp_get_object(built, "metadata");
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(t, "metadata");
	int rc = lay_over(t, "spec", tp_get(built, "spec"));
	if (!rc)
		rc = order_jobs_as_built(cJSON_GetObjectItemCaseSensitive(t, "spec"),
					 tp_get(built, "spec"));
	rc = tp__deadline_status(rc);
	if (!rc && cJSON_IsObject(meta))
		rc = lay_over(meta, "labels", tp_get_object(bmeta, "labels"));
	if (!rc && cJSON_IsObject(meta))
		rc = lay_over(meta, "annotations", tp_get_object(bmeta, "annotations"));
	if (rc) {
		cJSON_Delete(t);
		return rc;
	}
	*out = t;
	return TP_OK;
}

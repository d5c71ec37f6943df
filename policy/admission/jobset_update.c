/*
 * admission/jobset_update.c — JobSet's ValidateUpdate (docs/admission-protocol.md
 * §2.3): replicatedJobs and managedBy may not change, except the pod
 * template fields Kueue's admission writes while the JobSet or its old self
 * is suspended.
 *
 * Linear in the two objects: a large object's members and the old jobs are
 * found through indexes (core/index.h), not by a scan each.
 */
#include "policy/admission/jobset.h"
#include "policy/core/deadline.h"
#include "policy/core/index.h"

#include <stdio.h>
#include <string.h>

/* apimachinery's Semantic.DeepEqual over decoded Go values: a nil and an
 * empty slice or map are equal, and null stands for nil. */
static bool empty(const cJSON *v)
{
	return !v || cJSON_IsNull(v) || ((cJSON_IsArray(v) || cJSON_IsObject(v)) && !v->child);
}

static bool semantic_equal(const cJSON *a, const cJSON *b);

/* Members of a found in b and the other way round. Out of memory for an
 * index reads as unequal: the update is refused, never let through. */
static bool same_members(const cJSON *a, const cJSON *b)
{
	tp_index ia, ib;
	int rc = tp__index_members(&ia, a);
	rc |= tp__index_members(&ib, b);
	bool same = rc == TP_OK;
	for (const cJSON *x = a->child; x && same; x = x->next)
		same = !tp__tick(1) && semantic_equal(x, tp__index_member(&ib, x->string));
	for (const cJSON *y = b->child; y && same; y = y->next)
		same = empty(y) || tp__index_member(&ia, y->string);
	tp__index_free(&ia);
	tp__index_free(&ib);
	return same;
}

static bool semantic_equal(const cJSON *a, const cJSON *b)
{
	if (empty(a) || empty(b))
		return empty(a) && empty(b);
	if ((a->type & 0xff) != (b->type & 0xff))
		return false;
	if (cJSON_IsArray(a)) {
		const cJSON *x = a->child, *y = b->child;
		for (; x && y; x = x->next, y = y->next)
			if (tp__tick(1) || !semantic_equal(x, y))
				return false;
		return !x && !y;
	}
	if (!cJSON_IsObject(a))
		return tp_json_equal(a, b);
	return same_members(a, b);
}

/* root[dotted] := a copy of value, creating objects on the way; value NULL
 * removes the member. Parts of the wrong type are left alone. */
static void set_path(cJSON *root, const char *dotted, const cJSON *value)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", dotted);
	cJSON *node = root;
	char *part = buf;
	for (char *dot; (dot = strchr(part, '.')) != NULL; part = dot + 1) {
		*dot = '\0';
		cJSON *next = cJSON_GetObjectItemCaseSensitive(node, part);
		if (!next && value)
			next = cJSON_AddObjectToObject(node, part);
		if (!cJSON_IsObject(next))
			return;
		node = next;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(node, part);
	cJSON *copy = value ? cJSON_Duplicate(value, 1) : NULL;
	if (copy && !cJSON_AddItemToObject(node, part, copy))
		cJSON_Delete(copy);
}

/* While old or new is suspended, these pod-template fields may change
 * (Kueue's admission writes them). */
static const char *const suspend_mutable[] = {
	"template.spec.template.metadata.labels",
	"template.spec.template.metadata.annotations",
	"template.spec.template.spec.nodeSelector",
	"template.spec.template.spec.tolerations",
	"template.spec.template.spec.schedulingGates",
};

/* A copy of the new jobs with the suspend-mutable fields taken from the old
 * job of the same name, so that only the rest is compared. */
static cJSON *munge_jobs(const cJSON *new_jobs, const cJSON *old_jobs)
{
	tp_index old_by_name;
	cJSON *m = cJSON_Duplicate(new_jobs, 1);
	if (tp__index_items(&old_by_name, old_jobs, "name")) {
		cJSON_Delete(m);
		m = NULL;
	}
	for (cJSON *job = m ? m->child : NULL; job; job = job->next) {
		const cJSON *old = tp__index_named(&old_by_name, tp_get_str(job, "name"));
		if (!old || !cJSON_IsObject(job))
			continue;
		for (size_t i = 0; i < sizeof(suspend_mutable) / sizeof(suspend_mutable[0]); i++)
			set_path(job, suspend_mutable[i], tp_get(old, suspend_mutable[i]));
	}
	tp__index_free(&old_by_name);
	return m;
}

int tp__jobset_update(tp_result *res, const cJSON *js, const cJSON *old)
{
	const cJSON *new_jobs = tp_get(js, "spec.replicatedJobs");
	const cJSON *old_jobs = tp_get(old, "spec.replicatedJobs");
	cJSON *munged = NULL;
	if ((tp_get_true(old, "spec.suspend") || tp_get_true(js, "spec.suspend")) &&
	    cJSON_IsArray(new_jobs)) {
		munged = munge_jobs(new_jobs, old_jobs);
		if (!munged)
			return tp__deadline_status(TP_ENOMEM);
	}
	const cJSON *cmp = munged ? munged : new_jobs;
	if (!semantic_equal(cmp, old_jobs))
		tp_result_add(res, TP_FIELD_INVALID, "spec.replicatedJobs", tp_result_value(res, cmp),
			      "field is immutable");
	cJSON_Delete(munged);
	const cJSON *mb = tp_get(js, "spec.managedBy"), *old_mb = tp_get(old, "spec.managedBy");
	bool mb_same = (!mb || cJSON_IsNull(mb)) ? (!old_mb || cJSON_IsNull(old_mb))
						 : (old_mb && tp_json_equal(mb, old_mb));
	if (!mb_same)
		tp_result_add(res, TP_FIELD_INVALID, "spec.managedBy", tp_result_value(res, mb),
			      "field is immutable");
	return tp__deadline_status(TP_OK);
}

/*
 * runtime/requests.c — what a pod asks the scheduler for, and the totals a
 * PodGroup needs (coscheduling and Volcano minMember / minResources).
 *
 * Single-pod requests follow k8s resourcehelpers.PodRequests: the regular
 * containers' requests plus restartable (sidecar) init containers, at least
 * as much as any one-shot init container needs while it runs beside the
 * sidecars started before it, plus the pod overhead. Limits do not count:
 * the template is not defaulted, as upstream's is not.
 */
#include "policy/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

struct rlist {
	struct ritem {
		const char *name; /* points into the template */
		tp_quantity q;
	} *items;
	size_t n, cap;
};

static struct ritem *rlist_slot(struct rlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].name, name))
			return &l->items[i];
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct ritem *p = realloc(l->items, cap * sizeof(*p));
		if (!p)
			return NULL;
		l->items = p;
		l->cap = cap;
	}
	struct ritem *it = &l->items[l->n++];
	it->name = name;
	it->q = (tp_quantity){ 0, 0, TP_QFMT_DECIMAL_SI };
	return it;
}

static int rlist_add(struct rlist *l, const char *name, const tp_quantity *q)
{
	struct ritem *it = rlist_slot(l, name);
	return it ? tp__quantity_add(&it->q, q) : TP_ENOMEM;
}

static int rlist_add_all(struct rlist *l, const struct rlist *o)
{
	for (size_t i = 0; i < o->n; i++) {
		int rc = rlist_add(l, o->items[i].name, &o->items[i].q);
		if (rc)
			return rc;
	}
	return TP_OK;
}

static int rlist_max(struct rlist *l, const struct rlist *o)
{
	for (size_t i = 0; i < o->n; i++) {
		struct ritem *it = rlist_slot(l, o->items[i].name);
		if (!it)
			return TP_ENOMEM;
		if (tp__quantity_cmp(&o->items[i].q, &it->q) > 0)
			it->q = o->items[i].q;
	}
	return TP_OK;
}

/* A ResourceList object into l; values that are no quantity are skipped
 * (the schema layer reports them). */
static int rlist_add_json(struct rlist *l, const cJSON *list)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, list) {
		tp_quantity q;
		if (!r->string || tp__quantity_from_json(r, &q))
			continue;
		int rc = rlist_add(l, r->string, &q);
		if (rc)
			return rc;
	}
	return TP_OK;
}

static int pod_requests(const cJSON *pod_spec, struct rlist *out)
{
	struct rlist sidecars = { 0 }, init_max = { 0 }, one = { 0 };
	int rc = TP_OK;
	const cJSON *c;
	cJSON_ArrayForEach(c, tp_get_array(pod_spec, "containers"))
		if ((rc = rlist_add_json(out, tp_get_object(c, "resources.requests"))))
			goto out;
	cJSON_ArrayForEach(c, tp_get_array(pod_spec, "initContainers")) {
		const cJSON *req = tp_get_object(c, "resources.requests");
		const char *policy = tp_get_str(c, "restartPolicy");
		one.n = 0;
		if (policy && !strcmp(policy, "Always")) {
			if ((rc = rlist_add_json(out, req)) || (rc = rlist_add_json(&sidecars, req)) ||
			    (rc = rlist_add_all(&one, &sidecars)))
				goto out;
		} else if ((rc = rlist_add_json(&one, req)) || (rc = rlist_add_all(&one, &sidecars))) {
			goto out;
		}
		if ((rc = rlist_max(&init_max, &one)))
			goto out;
	}
	if ((rc = rlist_max(out, &init_max)) == TP_OK)
		rc = rlist_add_json(out, tp_get_object(pod_spec, "overhead"));
out:
	free(sidecars.items);
	free(init_max.items);
	free(one.items);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ritem *)a)->name, ((const struct ritem *)b)->name);
}

/* Keys sorted, as Go's encoding/json writes a ResourceList map. */
static int render(struct rlist *l, cJSON **out)
{
	if (l->n > 1)
		qsort(l->items, l->n, sizeof(*l->items), by_name);
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return TP_ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		char buf[TP_QUANTITY_MAX_TEXT];
		int rc = tp__quantity_format(&l->items[i].q, buf, sizeof(buf));
		if (rc == TP_OK && !cJSON_AddStringToObject(o, l->items[i].name, buf))
			rc = TP_ENOMEM;
		if (rc) {
			cJSON_Delete(o);
			return rc;
		}
	}
	*out = o;
	return TP_OK;
}

int tp__x_total_resources(tp_expansion *x, long long *members, cJSON **resources)
{
	struct rlist total = { 0 }, pod = { 0 };
	long long n = 0;
	int rc = TP_OK;
	for (size_t i = 0; i < x->npodsets && rc == TP_OK; i++) {
		const tp_podset *ps = &x->podsets[i];
		n += ps->count;
		pod.n = 0;
		if ((rc = pod_requests(ps->pod_spec, &pod)))
			break;
		for (size_t k = 0; k < pod.n && rc == TP_OK; k++) {
			tp_quantity q = pod.items[k].q;
			if ((rc = tp__quantity_mul(&q, ps->count)) == TP_OK)
				rc = rlist_add(&total, pod.items[k].name, &q);
		}
	}
	if (rc == TP_OK)
		rc = render(&total, resources);
	if (rc == TP_ELIMIT)
		rc = tp__x_fail(x, "spec.trainer.resourcesPerNode", NULL,
			       "the PodGroup's total resource requests do not fit in 64 bits");
	free(total.items);
	free(pod.items);
	*members = n;
	return rc;
}

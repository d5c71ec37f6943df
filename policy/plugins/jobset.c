/*
 * plugins/jobset.c — the JobSet plugin: PreBuildSync (every Job runs count
 * pods: parallelism = completions = count; endpoints) and Build (replicas
 * of the trainer and initializer Jobs, the initializers' storage settings,
 * spec.suspend). The trainer's image/command/args/env were written with the
 * runtime info (expand/info.c); the JobSet object itself is made by
 * expand/expand.c around the finished template.
 */
#include "policy/expand/expand.h"

#include <string.h>

long long tp_x_replicas(const tp_podset *ps)
{
	long long r = 1;
	tp_get_int(ps->job, "replicas", &r);
	return r < 1 ? 1 : r;
}

int tp_x_endpoint(const tp_expansion *x, const tp_podset *ps, long long replica_idx,
		  long long pod_idx, tp_buf *out)
{
	const char *sub = tp_get_str(x->tmpl, "spec.network.subdomain");
	if (!sub || !*sub)
		sub = x->name;
	return tp_buf_addf(out, "%s-%s-%lld-%lld.%s", x->name, ps->name, replica_idx, pod_idx, sub);
}

static int pre_build(tp_expansion *x)
{
	for (size_t i = 0; i < x->npodsets; i++) {
		tp_podset *ps = &x->podsets[i];
		cJSON *spec = (cJSON *)tp_get(ps->job, "template.spec");
		int rc;
		if ((rc = tp_x_set_number(spec, "parallelism", (double)ps->count)) ||
		    (rc = tp_x_set_number(spec, "completions", (double)ps->count)))
			return rc;
	}
	return TP_OK;
}

/* envFrom: [{secretRef: {name}}], once however often expansion runs. */
static int add_env_from_secret(cJSON *container, const char *secret)
{
	cJSON *list = tp_x_array(container, "envFrom");
	if (!list)
		return TP_EINVAL;
	const cJSON *e;
	cJSON_ArrayForEach(e, list) {
		const char *n = tp_get_str(e, "secretRef.name");
		if (n && !strcmp(n, secret))
			return TP_OK;
	}
	cJSON *item = cJSON_CreateObject();
	cJSON *ref = item ? cJSON_AddObjectToObject(item, "secretRef") : NULL;
	if (!ref || !cJSON_AddStringToObject(ref, "name", secret) ||
	    !cJSON_AddItemToArray(list, item)) {
		cJSON_Delete(item);
		return TP_ENOMEM;
	}
	return TP_OK;
}

/* STORAGE_URI, the initializer's env and its secret as envFrom, into the
 * initializer container of every Job of that ancestor step. */
static int initializer(tp_expansion *x, const char *step, const char *which)
{
	char path[48];
	strcpy(path, "spec.initializer.");
	strcat(path, which);
	const cJSON *init = tp_get_object(x->trainjob, path);
	if (!init)
		return TP_OK;
	const char *uri = tp_get_str(init, "storageUri");
	const char *secret = tp_get_str(init, "secretRef.name");
	for (size_t i = 0; i < x->npodsets; i++) {
		tp_podset *ps = &x->podsets[i];
		cJSON *c = ps->ancestor && !strcmp(ps->ancestor, step) ? tp_x_container(ps, step)
								       : NULL;
		if (!c)
			continue;
		int rc;
		if ((uri && (rc = tp_x_env(c, "STORAGE_URI", uri))) ||
		    (rc = tp_x_env_copy(c, tp_get_array(init, "env"))))
			return rc;
		if (secret && (rc = add_env_from_secret(c, secret)))
			return rc;
	}
	return TP_OK;
}

static bool one_job_step(const char *ancestor)
{
	return ancestor && (!strcmp(ancestor, TP_ANCESTOR_TRAINER) ||
			    !strcmp(ancestor, TP_ANCESTOR_DATASET) || !strcmp(ancestor, TP_ANCESTOR_MODEL));
}

static int build(tp_expansion *x)
{
	for (size_t i = 0; i < x->npodsets; i++) {
		if (!one_job_step(x->podsets[i].ancestor))
			continue;
		int rc = tp_x_set_number(x->podsets[i].job, "replicas", 1);
		if (rc)
			return rc;
	}
	int rc;
	if ((rc = initializer(x, TP_ANCESTOR_DATASET, "dataset")) ||
	    (rc = initializer(x, TP_ANCESTOR_MODEL, "model")))
		return rc;
	cJSON *spec = (cJSON *)tp_get(x->tmpl, "spec");
	return tp_x_set(spec, "suspend", cJSON_CreateBool(tp_get_true(x->trainjob, "spec.suspend")));
}

const tp_plugin tp_plugin_jobset = {
	.name = "jobset",
	.pre_build = pre_build,
	.build = build,
};

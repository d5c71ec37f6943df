/*
 * plugins/jobset.c — the JobSet plugin: its TrainJob checks (upstream
 * plugins/jobset/jobset.go Validate: initializer jobs, runtimePatches), and
 * in the expansion PreBuildSync (every Job runs count
 * pods: parallelism = completions = count; endpoints) and Build (replicas
 * of the trainer and initializer Jobs, the initializers' storage settings,
 * spec.suspend). The trainer's image/command/args/env were written with the
 * runtime info (expand/info.c); the JobSet object itself is made by
 * expand/expand.c around the finished template.
 */
#include "policy/core/deadline.h"
#include "policy/core/index.h"
#include "policy/plugins/plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ TrainJob checks */

#define PATCHES "spec.runtimePatches"
#define INITIALIZER_VOLUME "initializer"

static int invalid_ref(tp_tj_ctx *ctx, const char *detail)
{
	return tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.runtimeRef",
			     tp_result_value(ctx->res, tp_get(ctx->job, "spec.runtimeRef")), "%s",
			     detail);
}

/* The initializer named step ("dataset-initializer") must be a job of the
 * patched template, with a container (or initContainer) of that name that
 * mounts "initializer".
 * Upstream checks by job name, not by the ancestor label. */
static int check_initializer(tp_tj_ctx *ctx, const cJSON *inits, const char *member,
			     const char *step, const char *config)
{
	const cJSON *init = tp_get(inits, member);
	if (!cJSON_IsObject(init))
		return TP_OK;
	char d[256];
	const cJSON *rjob = tp__tj_job(ctx->tmpl, step);
	if (!rjob) {
		snprintf(d, sizeof(d), "must have %s job when trainJob is configured with input %s",
			 step, config);
		return invalid_ref(ctx, d);
	}
	/* Upstream's name set is initContainers and containers together. */
	const cJSON *pod = tp__tj_pod_spec(rjob);
	const cJSON *c = tp_find_named(tp_get_array(pod, "containers"), "name", step);
	if (!c)
		c = tp_find_named(tp_get_array(pod, "initContainers"), "name", step);
	if (!c) {
		snprintf(d, sizeof(d), "must have container with name - %s in the %s job", step, step);
		return invalid_ref(ctx, d);
	}
	if (tp_find_named(tp_get_array(c, "volumeMounts"), "name", INITIALIZER_VOLUME))
		return TP_OK;
	snprintf(d, sizeof(d), "must have volumeMount with name - %s in container %s of the %s job",
		 INITIALIZER_VOLUME, step, step);
	return invalid_ref(ctx, d);
}

/* apimachinery's semantic DeepEqual: a nil list equals an empty one. */
static bool no_patches(const cJSON *p)
{
	return !p || cJSON_IsNull(p) || (cJSON_IsArray(p) && !p->child);
}

static bool patches_changed(const tp_tj_ctx *ctx)
{
	const cJSON *a = tp_get(ctx->old, PATCHES), *b = ctx->patches;
	if (no_patches(a) && no_patches(b))
		return false;
	return !tp_json_equal(a, b);
}

/* Changing patches under a running JobSet would change pods mid-flight.
 * Upstream: a JobSet that is not found has nothing active; any other error
 * of the GET is an InternalError at spec.runtimePatches. */
static int check_active_jobset(tp_tj_ctx *ctx)
{
	/* The store files a namespace-less object under "default", as kubectl would. */
	const cJSON *js = NULL;
	char why[512];
	int rc = tp_lookup_get(ctx->opt, TP_KIND_JOBSET, tp_meta_namespace(ctx->job),
			       tp_meta_name(ctx->job), &js, why, sizeof(why));
	if (rc == TP_ENOMEM)
		return rc;
	if (rc == TP_EUNAVAILABLE)
		return tp_result_lookup_failed(ctx->res, PATCHES, TP_KIND_JOBSET,
					       tp_meta_name(ctx->job), why);
	const cJSON *st = tp_get_array(js, "status.replicatedJobsStatus");
	for (const cJSON *s = st ? st->child : NULL; s; s = s->next) {
		long long active;
		if (!tp_get_int(s, "active", &active) || active <= 0)
			continue;
		const char *name = tp_get_str(s, "name");
		rc = tp_result_add(ctx->res, TP_FIELD_FORBIDDEN, PATCHES, NULL,
				   "RuntimePatches cannot be modified when the JobSet's "
				   "ReplicatedJob %s is still active", name ? name : "");
		if (rc)
			return rc;
	}
	return TP_OK;
}

static int check_update(tp_tj_ctx *ctx)
{
	if (ctx->op != TP_OP_UPDATE || !ctx->old || !patches_changed(ctx))
		return TP_OK;
	if (tp_get_true(ctx->old, "spec.suspend") || tp_get_true(ctx->job, "spec.suspend"))
		return check_active_jobset(ctx);
	return tp_result_add(ctx->res, TP_FIELD_FORBIDDEN, PATCHES, NULL,
			     "RuntimePatches can only be modified when the TrainJob is suspended "
			     "before or after the update");
}

/* The runtime's jobs by name and, for each job a patch names, its container
 * and initContainer names: found once each, where a scan of the runtime per
 * patched job and container made a large patch against a large runtime
 * cost their product. */
struct runtime_names {
	tp_index jobs;
	tp_htab containers; /* job address -> struct job_names */
	struct job_names *all;
};

struct job_names {
	const cJSON *job;
	tp_strset names;
	struct job_names *next;
};

static int file_names(tp_strset *set, const cJSON *pod, const char *list)
{
	int rc = TP_OK;
	const cJSON *c;
	cJSON_ArrayForEach(c, tp_get_array(pod, list))
	{
		const char *n = tp_get_str(c, "name");
		if (n && (rc = tp__strset_add(set, n, NULL)))
			break;
	}
	return rc;
}

/* rjob's container names, filed at its first use; NULL (*rc TP_ENOMEM) when
 * memory ran out. */
static const tp_strset *job_names(struct runtime_names *rn, const cJSON *rjob, int *rc)
{
	uint64_t h = tp_hash_bytes(&rjob, sizeof(rjob));
	size_t pos = 0;
	for (const struct job_names *j; (j = tp__htab_next(&rn->containers, h, &pos));)
		if (j->job == rjob)
			return &j->names;
	struct job_names *j = calloc(1, sizeof(*j));
	const cJSON *pod = tp__tj_pod_spec(rjob);
	if (!j || (*rc = file_names(&j->names, pod, "initContainers")) ||
	    (*rc = file_names(&j->names, pod, "containers")) ||
	    (*rc = tp__htab_put(&rn->containers, h, j))) {
		if (j)
			tp__strset_free(&j->names);
		free(j);
		*rc = TP_ENOMEM;
		return NULL;
	}
	j->job = rjob;
	j->next = rn->all;
	rn->all = j;
	return &j->names;
}

static void runtime_names_free(struct runtime_names *rn)
{
	for (struct job_names *j = rn->all, *next; j; j = next) {
		next = j->next;
		tp__strset_free(&j->names);
		free(j);
	}
	tp__htab_free(&rn->containers);
	tp__index_free(&rn->jobs);
}

static bool is_reserved_container(const char *name)
{
	return !strcmp(name, TP_CONTAINER_NODE) || !strcmp(name, TP_CONTAINER_DATASET) ||
	       !strcmp(name, TP_CONTAINER_MODEL);
}

static int invalid_patch(tp_tj_ctx *ctx, const char *value, const char *detail)
{
	return tp_result_add(ctx->res, TP_FIELD_INVALID, PATCHES, tp_result_quote(ctx->res, value),
			     "%s", detail);
}

/* Container patches of one replicated job. The runtime's own (unpatched)
 * names are the reference: merged, an unknown name would just be added. */
static int check_job_patch(tp_tj_ctx *ctx, struct runtime_names *rn, const cJSON *pjob,
			   const char *jname, const cJSON *rjob)
{
	const cJSON *ppod = tp__tj_pod_spec(pjob);
	char d[512];
	int rc = TP_OK;
	const tp_strset *names = job_names(rn, rjob, &rc);
	const char *lists[] = { "initContainers", "containers" };
	for (int l = 0; l < 2 && !rc; l++) {
		const cJSON *arr = tp_get_array(ppod, lists[l]);
		for (const cJSON *c = arr ? arr->child : NULL; c && !rc; c = c->next) {
			const char *cn = tp_get_str(c, "name");
			cn = cn ? cn : "";
			if ((rc = tp__tick(1)))
				break;
			if (!tp__strset_has(names, cn)) {
				snprintf(d, sizeof(d), "must not have %s that doesn't exist in the "
					 "runtime job %s", l ? "container" : "initContainer", jname);
				rc = invalid_patch(ctx, cn, d);
			} else if (l == 1 && is_reserved_container(cn) &&
				   cJSON_GetArraySize(tp_get_array(c, "env")) > 0) {
				rc = invalid_patch(ctx, cn, "must not have envs for the dataset-"
					"initializer, model-initializer, node containers");
			}
		}
	}
	return rc;
}

static int check_patch(tp_tj_ctx *ctx, struct runtime_names *rn, const cJSON *patch)
{
	const char *mgr = tp_get_str(patch, "manager");
	if (tp__check_domain_prefixed_path(ctx->res, PATCHES ".manager", mgr ? mgr : "") < 0)
		return TP_ENOMEM;
	const cJSON *jobs = tp_get_array(patch, "trainingRuntimeSpec.template.spec.replicatedJobs");
	int rc = TP_OK;
	for (const cJSON *j = jobs ? jobs->child : NULL; j && !rc; j = j->next) {
		const char *jname = tp_get_str(j, "name");
		jname = jname ? jname : "";
		const cJSON *rjob = tp__index_named(&rn->jobs, jname);
		if (!rjob)
			rc = invalid_patch(ctx, jname, "must not have replicated job that doesn't "
					   "exist in the runtime job template");
		else
			rc = check_job_patch(ctx, rn, j, jname, rjob);
	}
	return rc;
}

static int check_trainjob(tp_tj_ctx *ctx)
{
	/* spec.initializer looked up once for both of its members */
	const cJSON *inits = ctx->initializer;
	int rc = check_initializer(ctx, inits, "dataset", TP_CONTAINER_DATASET, "datasetConfig");
	if (!rc)
		rc = check_initializer(ctx, inits, "model", TP_CONTAINER_MODEL, "modelConfig");
	if (!rc)
		rc = check_update(ctx);
	const cJSON *patches = cJSON_IsArray(ctx->patches) ? ctx->patches : NULL;
	struct runtime_names rn = { .containers = TP_HTAB_INIT };
	if (!rc && patches && patches->child)
		rc = tp__index_items(&rn.jobs, tp_get_array(ctx->base, "spec.replicatedJobs"), "name");
	else
		tp__index_items(&rn.jobs, NULL, "name");
	for (const cJSON *p = patches ? patches->child : NULL; p && !rc; p = p->next)
		rc = check_patch(ctx, &rn, p);
	runtime_names_free(&rn);
	return rc;
}

/* ------------------------------------------------------ the expansion */

long long tp__x_replicas(const tp_podset *ps)
{
	return ps->replicas;
}

int tp__x_endpoint(const tp_expansion *x, const tp_podset *ps, long long replica_idx,
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
		if ((rc = tp__x_set_number(spec, "parallelism", (double)ps->count)) ||
		    (rc = tp__x_set_number(spec, "completions", (double)ps->count)))
			return rc;
	}
	return TP_OK;
}

/* envFrom: [{secretRef: {name}}], once however often expansion runs. */
static int add_env_from_secret(cJSON *container, const char *secret)
{
	cJSON *list = tp__x_array(container, "envFrom");
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
		cJSON *c = ps->ancestor && !strcmp(ps->ancestor, step) ? tp__x_container(ps, step)
								       : NULL;
		if (!c)
			continue;
		int rc;
		if ((uri && (rc = tp__x_env(c, "STORAGE_URI", uri))) ||
		    (rc = tp__x_env_copy(c, tp_get_array(init, "env"))))
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
		int rc = tp__x_set_number(x->podsets[i].job, "replicas", 1);
		if (rc)
			return rc;
	}
	int rc;
	if ((rc = initializer(x, TP_ANCESTOR_DATASET, "dataset")) ||
	    (rc = initializer(x, TP_ANCESTOR_MODEL, "model")))
		return rc;
	cJSON *spec = (cJSON *)tp_get(x->tmpl, "spec");
	return tp__x_set(spec, "suspend", cJSON_CreateBool(tp_get_true(x->trainjob, "spec.suspend")));
}

const tp_plugin tp__plugin_jobset = {
	.name = "jobset",
	.check_trainjob = check_trainjob,
	.pre_build = pre_build,
	.build = build,
};

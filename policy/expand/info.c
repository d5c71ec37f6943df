/*
 * expand/info.c — upstream's newRuntimeInfo (docs/kubeflow-upstream.md §5.1): the
 * runtime template with runtimePatches merged, one pod set per replicated
 * job with its pod count, the TrainJob's resourcesPerNode merged into the
 * trainer's `node` container, and the trainer settings that upstream's
 * JobSet builder writes (image, command, args, env). Writing those before
 * the plugins run lets the plugins' own env land after the user's, in the
 * order upstream produces.
 */
#include "policy/core/deadline.h"
#include "policy/expand/expand.h"
#include "policy/patch/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

static bool mpi_launcher_as_node(const tp_expansion *x)
{
	return tp_get_true(x->ml, "mpi.runLauncherAsNode");
}

/* template.spec.template.spec of a job, created when absent so that every
 * pod set has somewhere to write. */
static cJSON *pod_spec_of(cJSON *job)
{
	cJSON *t = tp__x_object(job, "template");
	t = t ? tp__x_object(t, "spec") : NULL;
	t = t ? tp__x_object(t, "template") : NULL;
	return t ? tp__x_object(t, "spec") : NULL;
}

static int build_podsets(tp_expansion *x)
{
	cJSON *jobs = (cJSON *)tp_get_array(x->tmpl, "spec.replicatedJobs");
	size_t n = (size_t)cJSON_GetArraySize(jobs);
	x->podsets = n ? calloc(n, sizeof(*x->podsets)) : NULL;
	if (n && !x->podsets)
		return TP_ENOMEM;
	cJSON *job;
	cJSON_ArrayForEach(job, jobs) {
		tp_podset *ps = &x->podsets[x->npodsets];
		ps->index = (int)x->npodsets;
		ps->job = job;
		ps->name = tp_get_str(job, "name");
		ps->ancestor = tp_meta_label(tp_get(job, "template"), TP_LABEL_ANCESTOR);
		if (!(ps->pod_spec = pod_spec_of(job)))
			return TP_ENOMEM;
		long long count = 1;
		tp_get_int(job, "template.spec.parallelism", &count);
		if (is(ps->ancestor, TP_ANCESTOR_TRAINER) && x->ml) {
			count = 1;
			tp_get_int(x->ml, "numNodes", &count);
		}
		ps->count = count < 1 ? 1 : count;
		long long replicas = 1;
		tp_get_int(job, "replicas", &replicas);
		ps->replicas = replicas < 1 ? 1 : replicas;
		x->npodsets++;
	}
	return TP_OK;
}

/* ------------------------------------------------------- resources merge */

/* Quantities as the API server stores them: canonical strings, keys in
 * Go's map order (sorted). Values that are no quantity are kept as they are
 * for the schema layer to report. */
static cJSON *canonical_value(const cJSON *v)
{
	tp_quantity q;
	char buf[TP_QUANTITY_MAX_TEXT];
	if (!tp__quantity_from_json(v, &q) && !tp__quantity_format(&q, buf, sizeof(buf)))
		return cJSON_CreateString(buf);
	return cJSON_Duplicate(v, 1);
}

struct keyed {
	const cJSON *member;
	size_t at; /* its place: of two equal keys, the first is kept */
};

static int by_key(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->member->string, y->member->string);
	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* The list's members sorted by key, each key once: a sort, where picking
 * the next key by a scan each cost 1.9 s for 20,000 resource names. */
static int canonical_list(cJSON *resources, const char *name)
{
	const cJSON *list = tp_get_object(resources, name);
	if (!list)
		return TP_OK;
	size_t n = (size_t)cJSON_GetArraySize(list), k = 0;
	struct keyed *v = n ? malloc(n * sizeof(*v)) : NULL;
	cJSON *sorted = cJSON_CreateObject();
	if ((n && !v) || !sorted) {
		free(v);
		cJSON_Delete(sorted);
		return TP_ENOMEM;
	}
	for (const cJSON *c = list->child; c; c = c->next)
		if (c->string)
			v[k] = (struct keyed){ c, k }, k++;
	if (k > 1) /* an empty list has no array: qsort must not be given NULL */
		qsort(v, k, sizeof(*v), by_key);
	tp__charge(k);
	for (size_t i = 0; i < k; i++) {
		if (i && !strcmp(v[i].member->string, v[i - 1].member->string))
			continue;
		cJSON *val = canonical_value(v[i].member);
		if (!val || !cJSON_AddItemToObject(sorted, v[i].member->string, val)) {
			cJSON_Delete(val);
			cJSON_Delete(sorted);
			free(v);
			return TP_ENOMEM;
		}
	}
	free(v);
	return tp__x_set(resources, name, sorted);
}

static int merge_resources(tp_expansion *x, cJSON *container)
{
	const cJSON *want = tp_get_object(x->trainer, "resourcesPerNode");
	if (!want || !container)
		return TP_OK;
	cJSON *r = tp__x_object(container, "resources");
	if (!r)
		return TP_ENOMEM;
	int rc = tp__strategic_merge(r, want, NULL);
	if (rc == TP_EINVAL)
		return tp__x_fail(x, "spec.trainer.resourcesPerNode", NULL,
				 "does not merge with the runtime's node container resources");
	if (rc == TP_OK && (rc = canonical_list(r, "limits")) == TP_OK)
		rc = canonical_list(r, "requests");
	return rc;
}

/* ------------------------------------------------------ trainer settings */

static int copy_member(cJSON *container, const cJSON *trainer, const char *member)
{
	const cJSON *v = tp_get(trainer, member);
	if (!v || cJSON_IsNull(v))
		return TP_OK;
	return tp__x_set(container, member, cJSON_Duplicate(v, 1));
}

static int apply_trainer(tp_expansion *x, cJSON *container)
{
	int rc;
	if ((rc = copy_member(container, x->trainer, "image")) ||
	    (rc = copy_member(container, x->trainer, "command")) ||
	    (rc = copy_member(container, x->trainer, "args")))
		return rc;
	return tp__x_env_copy(container, tp_get_array(x->trainer, "env"));
}

static int remember_command(tp_expansion *x, const cJSON *container)
{
	const cJSON *cmd = tp_get_array(container, "command");
	if (x->runtime_command || !cmd)
		return TP_OK;
	x->runtime_command = cJSON_Duplicate(cmd, 1);
	return x->runtime_command ? TP_OK : TP_ENOMEM;
}

static int remember_args(tp_podset *ps, const cJSON *container)
{
	const cJSON *args = tp_get_array(container, "args");
	if (!args)
		return TP_OK;
	ps->node_args = cJSON_Duplicate(args, 1);
	return ps->node_args ? TP_OK : TP_ENOMEM;
}

static int apply_trainjob(tp_expansion *x)
{
	for (size_t i = 0; i < x->npodsets; i++) {
		tp_podset *ps = &x->podsets[i];
		cJSON *node = tp__x_container(ps, TP_CONTAINER_NODE);
		bool trainer = is(ps->ancestor, TP_ANCESTOR_TRAINER);
		bool mpi_node = mpi_launcher_as_node(x) && is(ps->name, TP_JOB_NODE);
		if (!node || !(trainer || mpi_node))
			continue;
		int rc;
		if (trainer && ((rc = remember_command(x, node)) || (rc = remember_args(ps, node))))
			return rc;
		if ((rc = merge_resources(x, node)))
			return rc;
		if (!x->trainer)
			continue;
		rc = trainer ? apply_trainer(x, node)
			     : tp__x_env_copy(node, tp_get_array(x->trainer, "env"));
		if (rc)
			return rc;
	}
	return TP_OK;
}

int tp__expand_info(tp_expansion *x)
{
	char err[512];
	int rc = tp__runtime_template(x->runtime, x->trainjob, &x->tmpl, err, sizeof(err));
	if (rc == TP_EINVAL)
		return tp__x_fail(x, "spec.runtimePatches", NULL, err);
	if (rc)
		return rc;
	if (tp__expand_check_template(x))
		return TP_EINVAL;
	if ((rc = build_podsets(x)))
		return rc;
	return apply_trainjob(x);
}

void tp__expand_info_free(tp_expansion *x)
{
	for (size_t i = 0; i < x->npodsets; i++)
		cJSON_Delete(x->podsets[i].node_args);
	free(x->podsets);
	x->podsets = NULL;
	x->npodsets = 0;
	cJSON_Delete(x->tmpl);
	x->tmpl = NULL;
	cJSON_Delete(x->runtime_command);
	x->runtime_command = NULL;
}

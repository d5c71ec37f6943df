/*
 * plugins/checks.c — the small TrainJob plugins (MPI, XGBoost, Volcano)
 * and the helpers every plugin shares.
 *
 * Flux: upstream's flux plugin refuses a reserved "flux-installer" init
 * container, but the spec gives neither its field path nor its text, so it is
 * not emulated here rather than invented.
 */
#include "policy/admission/trainjob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upstream's rules read trainer.numNodes with a default of 1, not the
 * runtime's mlPolicy.numNodes (kubeflow-upstream.md §2.4). */
long long tp__tj_num_nodes(const tp_tj_ctx *ctx)
{
	long long n;
	return tp_get_int(ctx->job, "spec.trainer.numNodes", &n) ? n : 1;
}

const cJSON *tp__tj_job(const cJSON *tmpl, const char *name)
{
	return tp_find_named(tp_get_array(tmpl, "spec.replicatedJobs"), "name", name);
}

const cJSON *tp__tj_pod_spec(const cJSON *rjob)
{
	return tp_get_object(rjob, "template.spec.template.spec");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool listed(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* Go's sets.List of the intersection: sorted, each name once, "[A B]". */
int tp__tj_reserved_envs(tp_tj_ctx *ctx, const char *const *reserved, size_t n)
{
	const char *found[16];
	size_t nfound = 0;
	const cJSON *env = tp_get_array(ctx->job, "spec.trainer.env");
	for (const cJSON *e = env ? env->child : NULL; e; e = e->next) {
		const char *name = tp_get_str(e, "name");
		if (name && listed(reserved, n, name) && !listed(found, nfound, name) &&
		    nfound < sizeof(found) / sizeof(found[0]))
			found[nfound++] = name;
	}
	if (nfound == 0)
		return TP_OK;
	qsort(found, nfound, sizeof(found[0]), cmp_str);
	tp_buf b = TP_BUF_INIT(4096);
	int rc = tp_buf_addc(&b, '[');
	for (size_t i = 0; i < nfound; i++)
		rc |= tp_buf_addf(&b, "%s%s", i ? " " : "", found[i]);
	rc |= tp_buf_addc(&b, ']');
	if (!rc)
		rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.trainer.env",
				   tp_result_value(ctx->res, env),
				   "must not have reserved envs, invalid envs configured: %s", b.data);
	tp_buf_free(&b);
	return rc ? TP_ENOMEM : TP_OK;
}

/* ------------------------------------------------------------------- MPI */

static const char *const mpi_reserved[] = {
	"OMPI_MCA_orte_default_hostfile",
	"OMPI_MCA_plm_rsh_args",
	"OMPI_MCA_orte_keep_fqdn_hostnames",
	"OMPI_MCA_orte_set_default_slots",
};

int tp__tj_mpi(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->runtime, "spec.mlPolicy.mpi"))
		return TP_OK;
	/* With the launcher running as a node, both jobs carry ranks; without
	 * one of them there is nowhere to put a second node. */
	if (tp__tj_num_nodes(ctx) >= 2 &&
	    tp_get_true(ctx->runtime, "spec.mlPolicy.mpi.runLauncherAsNode") &&
	    (!tp__tj_job(ctx->tmpl, TP_JOB_LAUNCHER) || !tp__tj_job(ctx->tmpl, TP_JOB_NODE))) {
		int rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.trainer.numNodes",
				       tp_result_value(ctx->res, tp_get(ctx->job, "spec.trainer.numNodes")),
				       "must have 1 when MPI trainingRuntime with enabled "
				       "runLauncherAsNode does not have either launcher and node");
		if (rc)
			return rc;
	}
	return tp__tj_reserved_envs(ctx, mpi_reserved, sizeof(mpi_reserved) / sizeof(*mpi_reserved));
}

/* --------------------------------------------------------------- XGBoost */

static const char *const xgboost_reserved[] = {
	"DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER",
};

int tp__tj_xgboost(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->runtime, "spec.mlPolicy.xgboost"))
		return TP_OK;
	const cJSON *env = tp_get_array(ctx->job, "spec.trainer.env");
	int i = 0;
	for (const cJSON *e = env ? env->child : NULL; e; e = e->next, i++) {
		const char *name = tp_get_str(e, "name");
		if (!name || !listed(xgboost_reserved, 4, name))
			continue;
		char path[64];
		snprintf(path, sizeof(path), "spec.trainer.env[%d]", i);
		int rc = tp_result_add(ctx->res, TP_FIELD_FORBIDDEN, path, NULL,
				       "%s is reserved for the XGBoost runtime", name);
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* --------------------------------------------------------------- Volcano */

#define VOLCANO_QUEUE "scheduling.volcano.sh/queue-name"

/* Upstream also requires each replicated job's priorityClassName to exist as
 * a PriorityClass. The store holds no PriorityClasses (offline there are
 * none to ask), so that half of the plugin is not checked here. */
int tp__tj_volcano(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->runtime, "spec.podGroupPolicy.volcano"))
		return TP_OK;
	const cJSON *ann = tp_get_object(ctx->tmpl, "metadata.annotations");
	const cJSON *q = ann ? cJSON_GetObjectItemCaseSensitive(ann, VOLCANO_QUEUE) : NULL;
	if (!cJSON_IsString(q) || *q->valuestring)
		return TP_OK;
	return tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.annotations[" VOLCANO_QUEUE "]",
			     "\"\"", "Volcano queue name must not be empty");
}

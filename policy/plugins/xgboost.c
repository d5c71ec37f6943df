/*
 * plugins/xgboost.c — mlPolicy.xgboost: the trainer pod count, and the DMLC
 * tracker environment on the trainer's `node` container. Every GPU of a node
 * runs a worker, so the worker count is nodes × max(1, GPUs per node).
 */
#include "policy/plugins/plugin.h"

#include <stdio.h>

/* ------------------------------------------------------ TrainJob checks */

static const char *const xgboost_reserved[] = {
	"DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER",
};

static int check_trainjob(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->ml, "xgboost"))
		return TP_OK;
	const cJSON *env = tp_get_array(ctx->trainer, "env");
	int i = 0;
	for (const cJSON *e = env ? env->child : NULL; e; e = e->next, i++) {
		const char *name = tp_get_str(e, "name");
		if (!name || !tp__listed(xgboost_reserved, 4, name))
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

/* ------------------------------------------------------ the expansion */

#define PORT_TEXT "29500"

static int enforce_ml_policy(tp_expansion *x)
{
	if (!tp_get_object(x->ml, "xgboost"))
		return TP_OK;
	tp_podset *ps;
	cJSON *c = tp__x_trainer_node(x, &ps);
	/* upstream sets the environment only for a TrainJob with a trainer */
	if (!c || !x->trainer)
		return TP_OK;
	long long gpu = tp__gpu_count(tp__x_resources_per_node(x));
	char workers[32], addr[600];
	long long nworkers;
	if (__builtin_mul_overflow(ps->count, gpu > 1 ? gpu : 1, &nworkers))
		return tp__x_fail(x, "spec.trainer.resourcesPerNode", NULL,
				 "nodes times GPUs per node is too large a worker count");
	snprintf(workers, sizeof(workers), "%lld", nworkers);
	if (tp__x_master_addr(x, 0, addr, sizeof(addr)))
		return tp__x_fail(x, "metadata.name", NULL, "is too long for a tracker address");
	int rc;
	if ((rc = tp__x_env(c, "DMLC_TRACKER_URI", addr)) ||
	    (rc = tp__x_env(c, "DMLC_TRACKER_PORT", PORT_TEXT)) ||
	    (rc = tp__x_env_field(c, "DMLC_TASK_ID", TP_ENV_COMPLETION_INDEX)) ||
	    (rc = tp__x_env(c, "DMLC_NUM_WORKER", workers)))
		return rc;
	return tp__x_port(c, TP_CONTAINER_PORT);
}

const tp_plugin tp__plugin_xgboost = {
	.name = "xgboost",
	.check_trainjob = check_trainjob,
	.enforce_ml_policy = enforce_ml_policy,
};

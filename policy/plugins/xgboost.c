/*
 * plugins/xgboost.c — mlPolicy.xgboost: the trainer pod count, and the DMLC
 * tracker environment on the trainer's `node` container. Every GPU of a node
 * runs a worker, so the worker count is nodes × max(1, GPUs per node).
 */
#include "policy/expand/expand.h"
#include "policy/plugins/torch_facts.h"

#include <stdio.h>

#define PORT_TEXT "29500"

static int enforce_ml_policy(tp_expansion *x)
{
	if (!tp_get_object(x->ml, "xgboost"))
		return TP_OK;
	tp_podset *ps;
	cJSON *c = tp_x_trainer_node(x, &ps);
	if (!c)
		return TP_OK;
	long long gpu = tp_gpu_count(tp_x_resources_per_node(x));
	char workers[32], addr[600];
	long long nworkers;
	if (__builtin_mul_overflow(ps->count, gpu > 1 ? gpu : 1, &nworkers))
		return tp_x_fail(x, "spec.trainer.resourcesPerNode", NULL,
				 "nodes times GPUs per node is too large a worker count");
	snprintf(workers, sizeof(workers), "%lld", nworkers);
	if (tp_x_master_addr(x, 0, addr, sizeof(addr)))
		return tp_x_fail(x, "metadata.name", NULL, "is too long for a tracker address");
	int rc;
	if ((rc = tp_x_env(c, "DMLC_TRACKER_URI", addr)) ||
	    (rc = tp_x_env(c, "DMLC_TRACKER_PORT", PORT_TEXT)) ||
	    (rc = tp_x_env_field(c, "DMLC_TASK_ID", TP_ENV_COMPLETION_INDEX)) ||
	    (rc = tp_x_env(c, "DMLC_NUM_WORKER", workers)))
		return rc;
	return tp_x_port(c, TP_CONTAINER_PORT);
}

const tp_plugin tp_plugin_xgboost = {
	.name = "xgboost",
	.enforce_ml_policy = enforce_ml_policy,
};

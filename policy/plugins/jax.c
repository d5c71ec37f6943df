/*
 * plugins/jax.c — mlPolicy.jax: the trainer pod count, and JAX's distributed
 * environment on the trainer's `node` container (the process count, the
 * process id from the Job completion index, the coordinator at node 0) with
 * the coordinator port.
 */
#include "policy/plugins/plugin.h"

#include <stdio.h>

static int enforce_ml_policy(tp_expansion *x)
{
	if (!tp_get_object(x->ml, "jax"))
		return TP_OK;
	tp_podset *ps;
	cJSON *c = tp__x_trainer_node(x, &ps);
	/* upstream sets the environment only for a TrainJob with a trainer */
	if (!c || !x->trainer)
		return TP_OK;
	char count[32], addr[600];
	snprintf(count, sizeof(count), "%lld", ps->count);
	if (tp__x_master_addr(x, TP_CONTAINER_PORT, addr, sizeof(addr)))
		return tp__x_fail(x, "metadata.name", NULL, "is too long for a coordinator address");
	int rc;
	if ((rc = tp__x_env(c, "JAX_NUM_PROCESSES", count)) ||
	    (rc = tp__x_env_field(c, "JAX_PROCESS_ID", TP_ENV_COMPLETION_INDEX)) ||
	    (rc = tp__x_env(c, "JAX_COORDINATOR_ADDRESS", addr)))
		return rc;
	return tp__x_port(c, TP_CONTAINER_PORT);
}

const tp_plugin tp__plugin_jax = {
	.name = "jax",
	.enforce_ml_policy = enforce_ml_policy,
};

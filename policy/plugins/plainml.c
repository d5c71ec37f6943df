/*
 * plugins/plainml.c — runtimes without a framework policy (no mlPolicy, or one
 * with none of torch, mpi, jax, xgboost): the trainer pod set runs
 * trainer.numNodes pods when the TrainJob sets it. The trainer env was
 * upserted with the runtime info.
 */
#include "policy/plugins/plugin.h"

static int enforce_ml_policy(tp_expansion *x)
{
	static const char *const frameworks[] = { "torch", "mpi", "jax", "xgboost" };
	for (size_t i = 0; i < sizeof(frameworks) / sizeof(frameworks[0]); i++)
		if (tp_get_object(x->ml, frameworks[i]))
			return TP_OK;
	tp_podset *ps = tp__x_podset_by_ancestor(x, TP_ANCESTOR_TRAINER);
	long long n;
	if (ps && tp__x_trainjob_num_nodes(x, &n))
		ps->count = n;
	return TP_OK;
}

const tp_plugin tp__plugin_plainml = {
	.name = "plainml",
	.enforce_ml_policy = enforce_ml_policy,
};

/*
 * admission/runtime_policy.c — mlPolicy and podGroupPolicy as the runtime
 * guides define them (strict profile, docs/rules.md "MLPolicy, as the guides
 * define it" and "podGroupPolicy"): the rules about the policy as a whole
 * here (numNodes; one policy of each kind), then each plugin's rules about
 * its own member (each plugin's check_ml_policy and check_pod_group_policy).
 */
#include "policy/admission/runtime.h"
#include "policy/plugins/plugin.h"

#include <stdio.h>
#include <string.h>

int tp__runtime_strict_ml(const tp__rt_flavor *f, tp_result *res, const cJSON *ml)
{
	static const char *const kinds[] = { "torch", "mpi", "jax", "xgboost", "flux" };
	long long n;
	if (tp__rt_int(res, ml, "numNodes", "spec.mlPolicy", !f->schema, &n))
		tp__rt_at_least(res, "spec.mlPolicy", "numNodes", n, 1,
				"set numNodes to 1 or more, or leave it out");
	/* the trainer group's CEL rule says this itself when the schema layer ran */
	if (f->ome || !f->schema) {
		int count = 0;
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			const cJSON *v = tp_get(ml, kinds[i]);
			count += v && !cJSON_IsNull(v);
		}
		if (count > 1)
			tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy", NULL,
				      "Only one of the policy can be configured; keep a single one "
				      "of torch, mpi, jax, xgboost, flux");
	}
	tp_rt_ctx rc = { .f = f, .res = res, .ml = ml };
	return tp__plugins_check_ml_policy(&rc);
}

int tp__runtime_strict_pod_group(const tp__rt_flavor *f, tp_result *res, const cJSON *pg)
{
	const cJSON *co = tp_get(pg, "coscheduling"), *vo = tp_get(pg, "volcano");
	if (co && !cJSON_IsNull(co) && vo && !cJSON_IsNull(vo))
		tp_result_add(res, TP_FIELD_INVALID, "spec.podGroupPolicy", NULL,
			      "only one of coscheduling and volcano may be set; keep one of them");
	tp_rt_ctx rc = { .f = f, .res = res, .pg = pg };
	return tp__plugins_check_pod_group_policy(&rc);
}

/*
 * plugins/registry.c — the expansion's fixed plugin table and the order its phases
 * run in (kubeflow-upstream.md §5.2).
 *
 * Every plugin's enforce_ml_policy runs first (each acts only on its own
 * mlPolicy; plainml on runtimes with none of them), then every
 * enforce_pod_group_policy (coscheduling, volcano), then every pre_build
 * (jobset: endpoints, parallelism/completions), then every build (jobset's
 * final touches, mpi's ConfigMap and Secret, the PodGroups). Upstream keeps
 * its plugins in a Go map; a fixed table gives the one order that makes the
 * output the same bytes every time: ML plugins before the schedulers, so
 * that counts are settled before a PodGroup sums them, and MPI's companions
 * before the PodGroup in the output list.
 */
#include "policy/expand/expand.h"

const tp_plugin *const tp_expand_plugins[] = {
	&tp_plugin_torch,   &tp_plugin_mpi,          &tp_plugin_plainml, &tp_plugin_jax,
	&tp_plugin_xgboost, &tp_plugin_coscheduling, &tp_plugin_volcano, &tp_plugin_jobset,
	NULL,
};

enum phase { ML_POLICY, POD_GROUP_POLICY, PRE_BUILD, BUILD, PHASES };

static int (*phase_fn(const tp_plugin *p, enum phase ph))(tp_expansion *)
{
	switch (ph) {
	case ML_POLICY: return p->enforce_ml_policy;
	case POD_GROUP_POLICY: return p->enforce_pod_group_policy;
	case PRE_BUILD: return p->pre_build;
	case BUILD: return p->build;
	case PHASES: break;
	}
	return NULL;
}

int tp_expand_run_plugins(tp_expansion *x)
{
	for (int ph = 0; ph < PHASES; ph++)
		for (const tp_plugin *const *p = tp_expand_plugins; *p; p++) {
			int (*fn)(tp_expansion *) = phase_fn(*p, (enum phase)ph);
			int rc = fn ? fn(x) : TP_OK;
			if (rc)
				return rc;
		}
	return TP_OK;
}

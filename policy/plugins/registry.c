/*
 * plugins/registry.c — the one plugin table, and the order its phases run
 * in.
 *
 * The runtime validator (strict profile) runs every check_ml_policy, then
 * every check_pod_group_policy; the TrainJob validator every check_trainjob;
 * the strict profile's look at a TrainJob's Pods every pod_parts on each job;
 * the expansion every enforce_ml_policy (each acts only on its own mlPolicy;
 * plainml on runtimes without torch, mpi, jax or xgboost: Flux's too), then every
 * enforce_pod_group_policy, every pre_build (jobset: endpoints,
 * parallelism/completions), every build (jobset's final touches, MPI's
 * ConfigMap and Secret, the PodGroups) — docs/kubeflow-upstream.md §5.2. Plugins
 * in table order: the ML plugins before the schedulers, so that counts are
 * settled before a PodGroup sums them and MPI's companions come before the
 * PodGroup in the output list.
 */
#include "policy/plugins/plugin.h"

/* One line per plugin (plugins/<name>.c defines tp__plugin_<name>). */
#define PLUGINS(X)        \
	X(jobset)         \
	X(torch)          \
	X(mpi)            \
	X(plainml)        \
	X(jax)            \
	X(xgboost)        \
	X(flux)           \
	X(coscheduling)   \
	X(volcano)

#define DECLARE(name) extern const tp_plugin tp__plugin_##name;
PLUGINS(DECLARE)

#define ENTRY(name) &tp__plugin_##name,
const tp_plugin *const tp__plugins[] = { PLUGINS(ENTRY) NULL };

/* One runtime-check phase over the table: the ML policy's or the pod
 * group policy's. */
static int check_runtime(const tp_rt_ctx *rc, bool pod_group)
{
	for (const tp_plugin *const *p = tp__plugins; *p; p++) {
		int (*fn)(const tp_rt_ctx *) =
			pod_group ? (*p)->check_pod_group_policy : (*p)->check_ml_policy;
		int err = fn ? fn(rc) : TP_OK;
		if (err)
			return err;
	}
	return TP_OK;
}

int tp__plugins_check_ml_policy(const tp_rt_ctx *rc)
{
	return check_runtime(rc, false);
}

int tp__plugins_check_pod_group_policy(const tp_rt_ctx *rc)
{
	return check_runtime(rc, true);
}

int tp__plugins_check_trainjob(tp_tj_ctx *ctx)
{
	for (const tp_plugin *const *p = tp__plugins; *p; p++) {
		int rc = (*p)->check_trainjob ? (*p)->check_trainjob(ctx) : TP_OK;
		if (rc)
			return rc;
	}
	return TP_OK;
}

int tp__plugins_pod_parts(tp_pod_parts *pp)
{
	for (const tp_plugin *const *p = tp__plugins; *p; p++) {
		int rc = (*p)->pod_parts ? (*p)->pod_parts(pp) : TP_OK;
		if (rc)
			return rc;
	}
	return TP_OK;
}

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

int tp__plugins_expand(tp_expansion *x)
{
	for (int ph = 0; ph < PHASES; ph++)
		for (const tp_plugin *const *p = tp__plugins; *p; p++) {
			int (*fn)(tp_expansion *) = phase_fn(*p, (enum phase)ph);
			int rc = fn ? fn(x) : TP_OK;
			if (rc)
				return rc;
		}
	return TP_OK;
}

/*
 * plugins/coscheduling.c — podGroupPolicy.coscheduling (scheduler-plugins):
 * every pod carries the `scheduling.x-k8s.io/pod-group: <tj>` label, and a
 * PodGroup `<tj>` (scheduling.x-k8s.io/v1alpha1) asks for all the pods at
 * once: minMember = Σ count, minResources = Σ count × single-pod requests.
 * Upstream builds it only when absent or the TrainJob is suspended; an
 * expansion has no cluster to look at and always builds it.
 */
#include "policy/plugins/plugin.h"

/* ------------------------------------------------------ runtime checks */

static int check_pod_group_policy(const tp_rt_ctx *rc)
{
	const char *base = "spec.podGroupPolicy.coscheduling";
	const cJSON *co = tp_get(rc->pg, "coscheduling");
	long long n;
	if (tp__rt_int(rc->res, co, "scheduleTimeoutSeconds", base, !rc->f->schema, &n))
		tp__rt_at_least(rc->res, base, "scheduleTimeoutSeconds", n, 1,
				"set scheduleTimeoutSeconds to 1 or more (default 60)");
	return TP_OK;
}

/* ------------------------------------------------------ the expansion */

static const cJSON *policy(const tp_expansion *x)
{
	return tp_get_object(x->pod_group, "coscheduling");
}

static int enforce_pod_group_policy(tp_expansion *x)
{
	if (!policy(x))
		return TP_OK;
	return tp_x_pod_metadata(x, "labels", TP_LABEL_COSCHEDULING, x->name);
}

static int build(tp_expansion *x)
{
	if (!policy(x))
		return TP_OK;
	long long members = 0, timeout = 60;
	tp_get_int(policy(x), "scheduleTimeoutSeconds", &timeout);
	cJSON *resources = NULL;
	int rc = tp_x_total_resources(x, &members, &resources);
	if (rc)
		return rc;
	cJSON *pg = tp_x_companion(x, "scheduling.x-k8s.io/v1alpha1", "PodGroup", x->name);
	cJSON *spec = pg ? cJSON_AddObjectToObject(pg, "spec") : NULL;
	/* Go's PodGroupSpec order: minMember, minResources, scheduleTimeoutSeconds. */
	if (!spec || !cJSON_AddNumberToObject(spec, "minMember", (double)members)) {
		cJSON_Delete(resources);
		return TP_ENOMEM;
	}
	/* always, an empty list too: upstream sets the map it summed */
	rc = tp_x_set(spec, "minResources", resources);
	if (rc == TP_OK && !cJSON_AddNumberToObject(spec, "scheduleTimeoutSeconds", (double)timeout))
		rc = TP_ENOMEM;
	return rc;
}

const tp_plugin tp_plugin_coscheduling = {
	.name = "coscheduling",
	.check_pod_group_policy = check_pod_group_policy,
	.enforce_pod_group_policy = enforce_pod_group_policy,
	.build = build,
};

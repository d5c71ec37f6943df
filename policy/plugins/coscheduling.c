/*
 * plugins/coscheduling.c — podGroupPolicy.coscheduling (scheduler-plugins):
 * every pod carries the `scheduling.x-k8s.io/pod-group: <tj>` label, and a
 * PodGroup `<tj>` (scheduling.x-k8s.io/v1alpha1) asks for all the pods at
 * once: minMember = Σ count, minResources = Σ count × single-pod requests.
 * Upstream builds it only when absent or the TrainJob is suspended; an
 * expansion has no cluster to look at and always builds it.
 */
#include "policy/plugins/plugin.h"

#include <string.h>

/* ------------------------------------------------------ runtime checks */

#define TIMEOUT_PATH "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"
/* kubeflow/trainer#3872's CEL rule "self >= 0" on the field, merged after
 * 8c0f5059, and its message. */
#define TIMEOUT_RULE_MSG "scheduleTimeoutSeconds must be greater than or equal to 0"

/* The CRD's own rule already said it (a CRD that carries #3872, --crds). */
static bool rule_reported(const tp_result *res)
{
	for (size_t i = 0; i < tp_result_error_count(res); i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		if (e->path && !strcmp(e->path, TIMEOUT_PATH) &&
		    !strcmp(e->detail, TIMEOUT_RULE_MSG))
			return true;
	}
	return false;
}

/* A negative timeout is refused with upstream's rule, word for word, until
 * the CRDs in clusters carry it. A 0 passes upstream's rule, and its API
 * comment calls it "the default", but the plugin copies it into the
 * PodGroup and kubernetes-sigs/scheduler-plugins uses a PodGroup's
 * scheduleTimeoutSeconds as it is (pkg/util/podgroup.go,
 * GetWaitTimeDuration): the gang gets 0 seconds. The guides' rule
 * (docs/rules.md: at least 1) keeps refusing it. */
static int check_pod_group_policy(const tp_rt_ctx *rc)
{
	const char *base = "spec.podGroupPolicy.coscheduling";
	const cJSON *co = tp_get(rc->pg, "coscheduling");
	long long n;
	if (!tp__rt_int(rc->res, co, "scheduleTimeoutSeconds", base, !rc->f->schema, &n))
		return TP_OK;
	if (n < 0 && rule_reported(rc->res))
		return TP_OK;
	if (n < 0) {
		/* the value as the API server shows a failed rule on a scalar (v1.32
		 * does, as schema/rules.c; v1.26 showed the type, "integer") */
		const char *v = tp_result_value(rc->res, tp_get(co, "scheduleTimeoutSeconds"));
		return tp_result_add(rc->res, TP_FIELD_INVALID, TIMEOUT_PATH, v, TIMEOUT_RULE_MSG);
	}
	tp__rt_at_least(rc->res, base, "scheduleTimeoutSeconds", n, 1,
			"set scheduleTimeoutSeconds to 1 or more, or leave it out for the default "
			"60 (0 reaches the PodGroup as it is: the scheduler would wait 0 seconds "
			"for the gang)");
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
	return tp__x_pod_metadata(x, "labels", TP_LABEL_COSCHEDULING, x->name);
}

static int build(tp_expansion *x)
{
	if (!policy(x))
		return TP_OK;
	long long members = 0, timeout = 60;
	tp_get_int(policy(x), "scheduleTimeoutSeconds", &timeout);
	cJSON *resources = NULL;
	int rc = tp__x_total_resources(x, &members, &resources);
	if (rc)
		return rc;
	cJSON *pg = tp__x_companion(x, "scheduling.x-k8s.io/v1alpha1", "PodGroup", x->name);
	cJSON *spec = pg ? cJSON_AddObjectToObject(pg, "spec") : NULL;
	/* Go's PodGroupSpec order: minMember, minResources, scheduleTimeoutSeconds. */
	if (!spec || !cJSON_AddNumberToObject(spec, "minMember", (double)members)) {
		cJSON_Delete(resources);
		return TP_ENOMEM;
	}
	/* always, an empty list too: upstream sets the map it summed */
	rc = tp__x_set(spec, "minResources", resources);
	if (rc == TP_OK && !cJSON_AddNumberToObject(spec, "scheduleTimeoutSeconds", (double)timeout))
		rc = TP_ENOMEM;
	return rc;
}

const tp_plugin tp__plugin_coscheduling = {
	.name = "coscheduling",
	.check_pod_group_policy = check_pod_group_policy,
	.enforce_pod_group_policy = enforce_pod_group_policy,
	.build = build,
};

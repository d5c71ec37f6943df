/*
 * plugins/volcano.c — podGroupPolicy.volcano: every pod carries the
 * `scheduling.k8s.io/group-name: <tj>` annotation, and a Volcano PodGroup
 * `<tj>` (scheduling.volcano.sh/v1beta1) holds minMember, minResources, the
 * queue named by the JobSet's `scheduling.volcano.sh/queue-name` annotation,
 * the priorityClassName of the last Job that sets one, and the policy's
 * networkTopology.
 */
#include "policy/expand/expand.h"

static const cJSON *policy(const tp_expansion *x)
{
	return tp_get_object(x->pod_group, "volcano");
}

static int enforce_pod_group_policy(tp_expansion *x)
{
	if (!policy(x))
		return TP_OK;
	return tp_x_pod_metadata(x, "annotations", TP_ANNOT_VOLCANO_GROUP, x->name);
}

static const char *priority_class(const tp_expansion *x)
{
	const char *last = NULL;
	for (size_t i = 0; i < x->npodsets; i++) {
		const char *p = tp_get_str(x->podsets[i].pod_spec, "priorityClassName");
		if (p && *p)
			last = p;
	}
	return last;
}

static int fill_spec(tp_expansion *x, cJSON *spec, long long members, cJSON *resources)
{
	const cJSON *annotations = tp_get_object(x->tmpl, "metadata.annotations");
	/* Annotation keys hold dots: looked up as one member, not a path. */
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(annotations, TP_ANNOT_VOLCANO_QUEUE);
	const char *queue = cJSON_IsString(q) ? q->valuestring : NULL;
	const char *prio = priority_class(x);
	const cJSON *topo = tp_get_object(policy(x), "networkTopology");
	/* Go's volcano PodGroupSpec order. */
	if (!cJSON_AddNumberToObject(spec, "minMember", (double)members) ||
	    (queue && !cJSON_AddStringToObject(spec, "queue", queue)) ||
	    (prio && !cJSON_AddStringToObject(spec, "priorityClassName", prio))) {
		cJSON_Delete(resources);
		return TP_ENOMEM;
	}
	int rc = TP_OK;
	if (resources->child)
		rc = tp_x_set(spec, "minResources", resources);
	else
		cJSON_Delete(resources);
	if (rc == TP_OK && topo)
		rc = tp_x_set(spec, "networkTopology", cJSON_Duplicate(topo, 1));
	return rc;
}

static int build(tp_expansion *x)
{
	if (!policy(x))
		return TP_OK;
	long long members = 0;
	cJSON *resources = NULL;
	int rc = tp_x_total_resources(x, &members, &resources);
	if (rc)
		return rc;
	cJSON *pg = tp_x_companion(x, "scheduling.volcano.sh/v1beta1", "PodGroup", x->name);
	cJSON *spec = pg ? cJSON_AddObjectToObject(pg, "spec") : NULL;
	if (!spec) {
		cJSON_Delete(resources);
		return TP_ENOMEM;
	}
	return fill_spec(x, spec, members, resources);
}

const tp_plugin tp_plugin_volcano = {
	.name = "volcano",
	.enforce_pod_group_policy = enforce_pod_group_policy,
	.build = build,
};

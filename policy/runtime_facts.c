/*
 * runtime_facts.c — small facts about runtimes that several rules share:
 * whether a runtime is deprecated, and upstream's sentence that says so.
 */
#include "policy/internal.h"

#include <string.h>

bool tp_runtime_is_deprecated(const cJSON *runtime)
{
	const char *v = tp_meta_label(runtime, TP_LABEL_SUPPORT);
	return v && !strcmp(v, TP_SUPPORT_DEPRECATED);
}

/* Upstream's text, pkg/util/trainingruntime: the kind, quoted name, and the
 * deprecation-policy URL. OME kinds are named without their "OME " prefix. */
int tp_warn_deprecated(tp_result *res, const char *prefix, tp_kind k, const char *name)
{
	const char *kind = (k == TP_KIND_TRAINING_RUNTIME || k == TP_KIND_OME_TRAINING_RUNTIME)
				   ? "TrainingRuntime"
				   : "ClusterTrainingRuntime";
	return tp_result_warn(res,
			      "%s%s \"%s\" is deprecated and will be removed in a future release of "
			      "Kubeflow Trainer. See runtime deprecation policy: %s",
			      prefix ? prefix : "", kind, name ? name : "", TP_DEPRECATION_POLICY_URL);
}

/* runtimeRef.<member>: absent or null gives the CRD default; another type
 * gives "", which names nothing. */
static const char *ref_member(const cJSON *trainjob, const char *member, const char *dflt)
{
	const cJSON *v = tp_get(tp_get(trainjob, "spec.runtimeRef"), member);
	if (!v || cJSON_IsNull(v))
		return dflt;
	return cJSON_IsString(v) ? v->valuestring : "";
}

const cJSON *tp_store_runtime_for(const tp_store *store, const cJSON *trainjob)
{
	const char *kind = ref_member(trainjob, "kind", "ClusterTrainingRuntime");
	const char *group = ref_member(trainjob, "apiGroup", TP_GROUP_TRAINER);
	const char *name = ref_member(trainjob, "name", "");
	if (strcmp(group, TP_GROUP_TRAINER))
		return NULL;
	if (!strcmp(kind, "ClusterTrainingRuntime"))
		return tp_store_get(store, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, name);
	if (!strcmp(kind, "TrainingRuntime"))
		return tp_store_get(store, TP_KIND_TRAINING_RUNTIME, tp_meta_namespace(trainjob),
				    name);
	return NULL;
}

/*
 * core/runtime_facts.c — small facts about runtimes that several rules share:
 * whether a runtime is deprecated, and upstream's sentence that says so.
 */
#include "policy/core/internal.h"

#include <string.h>

bool tp__runtime_is_deprecated(const cJSON *runtime)
{
	const char *v = tp_meta_label(runtime, TP_LABEL_SUPPORT);
	return v && !strcmp(v, TP_SUPPORT_DEPRECATED);
}

/* Upstream's text, pkg/util/trainingruntime: the kind, quoted name, and the
 * deprecation-policy URL. OME kinds are named without their "OME " prefix. */
int tp__warn_deprecated(tp_result *res, const char *prefix, tp_kind k, const char *name)
{
	const char *kind = (k == TP_KIND_TRAINING_RUNTIME || k == TP_KIND_OME_TRAINING_RUNTIME)
				   ? "TrainingRuntime"
				   : "ClusterTrainingRuntime";
	/* every TrainJob on a deprecated runtime: no printf (4,500 of make
	 * bench's 108,300 instructions a TrainJob review, callgrind) */
	const char *const parts[] = {
		prefix ? prefix : "", kind, " \"", name ? name : "",
		"\" is deprecated and will be removed in a future release of "
		"Kubeflow Trainer. See runtime deprecation policy: ",
		TP_DEPRECATION_POLICY_URL
	};
	return tp__result_warn_parts(res, parts, sizeof(parts) / sizeof(parts[0]));
}

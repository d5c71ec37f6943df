/*
 * core/runtime_facts.c — small facts about runtimes that several rules share:
 * whether a runtime is deprecated, and upstream's sentence that says so.
 */
#include "policy/core/internal.h"

#include <stdlib.h>
#include <string.h>

bool tp__runtime_is_deprecated(const cJSON *runtime)
{
	const char *v = tp_meta_label(runtime, TP_LABEL_SUPPORT);
	return v && !strcmp(v, TP_SUPPORT_DEPRECATED);
}

#define DEPRECATION_PARTS 6

/* Upstream's text, pkg/util/trainingruntime: the kind, quoted name, and the
 * deprecation-policy URL. OME kinds are named without their "OME " prefix. */
static void deprecation_parts(const char **parts, const char *prefix, tp_kind k,
			      const char *name)
{
	const char *kind = (k == TP_KIND_TRAINING_RUNTIME || k == TP_KIND_OME_TRAINING_RUNTIME)
				   ? "TrainingRuntime"
				   : "ClusterTrainingRuntime";
	parts[0] = prefix ? prefix : "";
	parts[1] = kind;
	parts[2] = " \"";
	parts[3] = name ? name : "";
	parts[4] = "\" is deprecated and will be removed in a future release of "
		   "Kubeflow Trainer. See runtime deprecation policy: ";
	parts[5] = TP_DEPRECATION_POLICY_URL;
}

int tp__warn_deprecated(tp_result *res, const char *prefix, tp_kind k, const char *name)
{
	/* every TrainJob on a deprecated runtime: no printf (4,500 of make
	 * bench's 108,300 instructions a TrainJob review, callgrind) */
	const char *parts[DEPRECATION_PARTS];
	deprecation_parts(parts, prefix, k, name);
	return tp__result_warn_parts(res, parts, DEPRECATION_PARTS);
}

char *tp__deprecation_text(const char *prefix, tp_kind k, const char *name)
{
	const char *parts[DEPRECATION_PARTS];
	deprecation_parts(parts, prefix, k, name);
	size_t len = 0;
	for (int i = 0; i < DEPRECATION_PARTS; i++)
		len += strlen(parts[i]);
	char *w = malloc(len + 1), *p = w;
	for (int i = 0; w && i < DEPRECATION_PARTS; i++) {
		size_t n = strlen(parts[i]);
		memcpy(p, parts[i], n);
		p += n;
	}
	if (w) {
		*p = '\0';
		tp__warning_clean(w);
	}
	return w;
}

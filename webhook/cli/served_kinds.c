/*
 * served_kinds.c — what this product serves, for the objects no CRD
 * answers for (--crds none, --no-schema, a group no CRD given holds): the
 * API server's "no matches for kind" with the served versions and kinds, at
 * the field to change. policy/core/kinds.c knows the same kinds;
 * tests/unit/test_findings.c holds this table to it.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/cli/hints.h"
#include "webhook/cli/served_kinds.h"

static const tw_served_kind served[] = {
	{ "trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime", true },
	{ "trainer.kubeflow.org", "v1alpha1", "OptimizationJob", false },
	{ "trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", true },
	{ "trainer.kubeflow.org", "v1alpha1", "TrainJob", true },
	{ "jobset.x-k8s.io", "v1alpha2", "JobSet", true },
	{ "ome.io", "v1beta1", "ClusterTrainingRuntime", true },
	{ "ome.io", "v1beta1", "TrainingRuntime", true },
};
#define NSERVED (sizeof(served) / sizeof(served[0]))

size_t tw_served_kind_count(void)
{
	return NSERVED;
}

const tw_served_kind *tw_served_kind_at(size_t i)
{
	return i < NSERVED ? &served[i] : NULL;
}

/* "trainer.kubeflow.org/v1alpha1" -> group (version after the slash). */
static bool split(const cJSON *obj, char *group, size_t n, const char **version)
{
	const char *av = tp_get_str(obj, "apiVersion"), *slash = av ? strchr(av, '/') : NULL;
	if (!slash)
		return false;
	snprintf(group, n, "%.*s", (int)(slash - av), av);
	*version = slash + 1;
	return true;
}

bool tw_served_kind_crd_only(const cJSON *obj)
{
	char group[128];
	const char *version, *kind = tp_get_str(obj, "kind");
	if (!kind || !split(obj, group, sizeof(group), &version))
		return false;
	for (size_t i = 0; i < NSERVED; i++)
		if (!served[i].checked && !strcmp(served[i].group, group) &&
		    !strcmp(served[i].version, version) && !strcmp(served[i].kind, kind))
			return true;
	return false;
}

bool tw_served_kinds_refuse(const cJSON *obj, tp_result *res)
{
	char group[128], list[1024] = "";
	const char *version, *kind = tp_get_str(obj, "kind"), *near = NULL;
	if (!split(obj, group, sizeof(group), &version))
		return false;
	bool group_served = false, kind_served = false;
	size_t len = 0;
	for (size_t i = 0; i < NSERVED; i++) {
		if (strcmp(served[i].group, group))
			continue;
		if (kind && !strcmp(served[i].version, version) && !strcmp(served[i].kind, kind))
			return false; /* served: not this function's business */
		group_served = true;
		kind_served |= kind && !strcmp(served[i].kind, kind);
		if (kind && !near && (!strcasecmp(served[i].kind, kind) || tw_is_near(kind, served[i].kind)))
			near = served[i].kind;
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s %s/%s",
						len ? ", " : "", served[i].kind, group, served[i].version);
	}
	if (!group_served)
		return false;
	const char *path = kind_served ? "apiVersion" : "kind";
	if (near && !kind_served)
		tp_result_add(res, TP_FIELD_PLAIN, path, NULL,
			      "no matches for kind \"%s\" in version \"%s/%s\": did you mean kind "
			      "\"%s\"? (served: %s)", kind, group, version, near, list);
	else
		tp_result_add(res, TP_FIELD_PLAIN, path, NULL,
			      "no matches for kind \"%s\" in version \"%s/%s\" (served: %s)",
			      kind ? kind : "", group, version, list);
	return true;
}

const char *tw_served_kind_v1_job(const cJSON *obj)
{
	/* Training Operator v1's kinds and the runtime upstream's Trainer v2
	 * ships for each (manifests/base/runtimes) */
	static const char *const v1[][2] = {
		{ "PyTorchJob", "torch-distributed" }, { "JAXJob", "jax-distributed" },
		{ "XGBoostJob", "xgboost-distributed" }, { "MPIJob", NULL }, { "TFJob", NULL },
		{ "PaddleJob", NULL },
	};
	static _Thread_local char text[400];
	const char *av = tp_get_str(obj, "apiVersion"), *kind = tp_get_str(obj, "kind");
	if (!av || !kind || strcmp(av, "kubeflow.org/v1"))
		return NULL;
	for (size_t i = 0; i < sizeof(v1) / sizeof(*v1); i++) {
		if (strcmp(kind, v1[i][0]))
			continue;
		if (v1[i][1])
			snprintf(text, sizeof(text), "a Training Operator v1 %s (kubeflow.org/v1): "
				 "Kubeflow Trainer v2 runs it as a TrainJob (apiVersion "
				 "trainer.kubeflow.org/v1alpha1) with spec.runtimeRef.name: %s; its "
				 "replicas become spec.trainer.numNodes", kind, v1[i][1]);
		else
			snprintf(text, sizeof(text), "a Training Operator v1 %s (kubeflow.org/v1): "
				 "Kubeflow Trainer v2 runs training as a TrainJob (apiVersion "
				 "trainer.kubeflow.org/v1alpha1) with a runtimeRef", kind);
		return text;
	}
	return NULL;
}

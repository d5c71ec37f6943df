/*
 * core/kinds.c — the small enumerations of the public header and their names.
 */
#include "policy/core/internal.h"

#include <string.h>

const char *tp_strerror(int code)
{
	switch (code) {
	case TP_OK: return "no error";
	case TP_ENOMEM: return "out of memory or over a memory limit";
	case TP_EINVAL: return "invalid argument";
	case TP_EPARSE: return "not valid YAML or JSON";
	case TP_ELIMIT: return "input is over a hard limit";
	case TP_ENOTFOUND: return "not found";
	case TP_EUNSUPPORTED: return "unsupported kind, version or operation";
	case TP_ECONFLICT: return "JSON Patch operation does not apply";
	case TP_EIO: return "input/output error";
	case TP_EUNAVAILABLE: return "the cluster could not be asked; the request can be retried";
	case TP_ETIMEDOUT: return "the request's deadline passed before a decision";
	/* The binary's range: the library never returns these, but one enum
	 * means one function names every code. */
	case TW_EFAILED: return "failed (the message beside the code says why)";
	case TW_EEXIST: return "the file exists (pass --force to replace it)";
	case TW_EBAD: return "the certificate pair is unusable";
	case TW_ECRYPTO: return "the cryptographic library failed";
	}
	return "unknown error";
}

static bool group_is(const char *api_version, const char *group_version)
{
	return api_version && !strcmp(api_version, group_version);
}

tp_kind tp_kind_of(const cJSON *obj)
{
	const char *av = tp_get_str(obj, "apiVersion");
	const char *kind = tp_get_str(obj, "kind");
	if (!av || !kind)
		return TP_KIND_UNKNOWN;
	if (group_is(av, TP_APIVERSION_TRAINER)) {
		if (!strcmp(kind, "TrainJob"))
			return TP_KIND_TRAINJOB;
		if (!strcmp(kind, "TrainingRuntime"))
			return TP_KIND_TRAINING_RUNTIME;
		if (!strcmp(kind, "ClusterTrainingRuntime"))
			return TP_KIND_CLUSTER_TRAINING_RUNTIME;
	} else if (group_is(av, TP_APIVERSION_OME)) {
		if (!strcmp(kind, "TrainingRuntime"))
			return TP_KIND_OME_TRAINING_RUNTIME;
		if (!strcmp(kind, "ClusterTrainingRuntime"))
			return TP_KIND_OME_CLUSTER_TRAINING_RUNTIME;
	} else if (group_is(av, TP_APIVERSION_JOBSET)) {
		if (!strcmp(kind, "JobSet"))
			return TP_KIND_JOBSET;
	} else if (group_is(av, TP_APIVERSION_SCHEDULING)) {
		if (!strcmp(kind, "PriorityClass"))
			return TP_KIND_PRIORITY_CLASS;
	} else if (group_is(av, "v1")) {
		if (!strcmp(kind, "ConfigMap"))
			return TP_KIND_CONFIGMAP;
		if (!strcmp(kind, "Namespace"))
			return TP_KIND_NAMESPACE;
		if (!strcmp(kind, "ServiceAccount"))
			return TP_KIND_SERVICE_ACCOUNT;
		if (!strcmp(kind, "LimitRange"))
			return TP_KIND_LIMIT_RANGE;
		if (!strcmp(kind, "ResourceQuota"))
			return TP_KIND_RESOURCE_QUOTA;
	} else if (!strncmp(av, "kubeflow.org/", 13) || !strcmp(av, "trainer.kubeflow.org/v2alpha1") ||
		   !strcmp(av, "trainer.kubeflow.org/v2")) {
		/* The pre-release API of older guides (kubeflow.org/v2alpha1). */
		if (!strcmp(kind, "TrainJob") || !strcmp(kind, "TrainingRuntime") ||
		    !strcmp(kind, "ClusterTrainingRuntime"))
			return TP_KIND_OUTDATED;
	}
	return TP_KIND_UNKNOWN;
}

const char *tp_kind_name(tp_kind k)
{
	switch (k) {
	case TP_KIND_TRAINJOB: return "TrainJob";
	case TP_KIND_TRAINING_RUNTIME: return "TrainingRuntime";
	case TP_KIND_CLUSTER_TRAINING_RUNTIME: return "ClusterTrainingRuntime";
	case TP_KIND_OME_TRAINING_RUNTIME: return "OME TrainingRuntime";
	case TP_KIND_OME_CLUSTER_TRAINING_RUNTIME: return "OME ClusterTrainingRuntime";
	case TP_KIND_JOBSET: return "JobSet";
	case TP_KIND_OUTDATED: return "outdated kubeflow.org object";
	case TP_KIND_PRIORITY_CLASS: return "PriorityClass";
	case TP_KIND_CONFIGMAP: return "ConfigMap";
	case TP_KIND_NAMESPACE: return "Namespace";
	case TP_KIND_SERVICE_ACCOUNT: return "ServiceAccount";
	case TP_KIND_LIMIT_RANGE: return "LimitRange";
	case TP_KIND_RESOURCE_QUOTA: return "ResourceQuota";
	case TP_KIND_UNKNOWN:
	case TP_KIND__COUNT: break;
	}
	return "unknown";
}

bool tp_kind_is_runtime(tp_kind k)
{
	return k == TP_KIND_TRAINING_RUNTIME || k == TP_KIND_CLUSTER_TRAINING_RUNTIME ||
	       k == TP_KIND_OME_TRAINING_RUNTIME || k == TP_KIND_OME_CLUSTER_TRAINING_RUNTIME;
}

bool tp_kind_is_cluster_scoped(tp_kind k)
{
	return k == TP_KIND_CLUSTER_TRAINING_RUNTIME || k == TP_KIND_OME_CLUSTER_TRAINING_RUNTIME ||
	       k == TP_KIND_PRIORITY_CLASS || k == TP_KIND_NAMESPACE;
}

int tp_profile_parse(const char *s, tp_profile *out)
{
	if (s && !strcmp(s, "strict"))
		*out = TP_PROFILE_STRICT;
	else if (s && !strcmp(s, "kubeflow"))
		*out = TP_PROFILE_KUBEFLOW;
	else
		return TP_EINVAL;
	return TP_OK;
}

const char *tp_profile_name(tp_profile p)
{
	return p == TP_PROFILE_KUBEFLOW ? "kubeflow" : "strict";
}

static const char *const op_names[] = { "CREATE", "UPDATE", "DELETE", "CONNECT" };

int tp_operation_parse(const char *s, tp_operation *out)
{
	for (int i = 0; s && i < 4; i++)
		if (!strcmp(s, op_names[i])) {
			*out = (tp_operation)i;
			return TP_OK;
		}
	return TP_EINVAL;
}

const char *tp_operation_name(tp_operation op)
{
	return (unsigned)op < 4 ? op_names[op] : "UNKNOWN";
}

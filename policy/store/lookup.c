/*
 * store/lookup.c — how rules and the expansion find the objects a decision needs:
 * through the caller's tp_lookup (the server: its cache, then the API
 * server), else in the store. Also what a TrainJob's runtimeRef names, and
 * the error an unanswered lookup gives.
 */
#include "policy/core/internal.h"
#include "policy/store/store.h"

#include <string.h>

int tp_lookup_get(const tp_options *opt, tp_kind k, const char *ns, const char *name,
		  const cJSON **out, char *why, size_t whylen)
{
	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (!name)
		return TP_EINVAL;
	if (!*name)
		return TP_ENOTFOUND; /* names nothing; never ask the API server for "" */
	if (opt && opt->lookup && opt->lookup->get)
		return opt->lookup->get(opt->lookup->ctx, k, ns, name, out, why, whylen);
	*out = tp_store_get(opt ? opt->store : NULL, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

int tp_lookup_list(const tp_options *opt, tp_kind k, const char *ns, const cJSON **out,
		   size_t max, size_t *n, char *why, size_t whylen)
{
	*n = 0;
	if (why && whylen)
		why[0] = '\0';
	if (tp_kind_is_cluster_scoped(k))
		return TP_EINVAL;
	if (opt && opt->lookup) {
		return opt->lookup->list ? opt->lookup->list(opt->lookup->ctx, k, ns, out, max, n, why,
							      whylen)
					 : TP_EUNSUPPORTED;
	}
	*n = tp_store_list(opt ? opt->store : NULL, k, ns, out, max);
	return TP_OK;
}

size_t tp__namespaces_of(const tp_options *opt, tp_kind k, const char *name, const char **out,
			 size_t max)
{
	if (!opt)
		return 0;
	if (opt->lookup)
		return opt->lookup->namespaces_of
			       ? opt->lookup->namespaces_of(opt->lookup->ctx, k, name, out, max)
			       : 0;
	return tp_store_namespaces_of(opt->store, k, name, out, max);
}

/* runtimeRef.<member>, ref being the TrainJob's runtimeRef (looked up once
 * by the caller, not per member): absent or null gives the CRD default;
 * another type gives "", which names nothing. */
static const char *ref_member(const cJSON *ref, const char *member, const char *dflt)
{
	const cJSON *v = tp_member(ref, member);
	if (!v || cJSON_IsNull(v))
		return dflt;
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* What a TrainJob's runtimeRef names, with the CRD defaults the API server
 * applies (kind ClusterTrainingRuntime, apiGroup trainer.kubeflow.org).
 * *kind is TP_KIND_UNKNOWN when it names another kind or group; *ns is the
 * TrainJob's namespace for a TrainingRuntime, NULL for a cluster one. */
static void runtime_ref(const cJSON *trainjob, tp_kind *kind, const char **ns, const char **name)
{
	const cJSON *ref = tp_get(trainjob, "spec.runtimeRef");
	const char *k = ref_member(ref, "kind", "ClusterTrainingRuntime");
	const char *group = ref_member(ref, "apiGroup", TP_GROUP_TRAINER);
	*name = ref_member(ref, "name", "");
	*ns = NULL;
	*kind = TP_KIND_UNKNOWN;
	if (strcmp(group, TP_GROUP_TRAINER))
		return;
	if (!strcmp(k, "ClusterTrainingRuntime")) {
		*kind = TP_KIND_CLUSTER_TRAINING_RUNTIME;
	} else if (!strcmp(k, "TrainingRuntime")) {
		*kind = TP_KIND_TRAINING_RUNTIME;
		*ns = tp_meta_namespace(trainjob);
	}
}

const cJSON *tp_store_runtime_for(const tp_store *store, const cJSON *trainjob)
{
	tp_kind kind;
	const char *ns, *name;
	runtime_ref(trainjob, &kind, &ns, &name);
	return kind == TP_KIND_UNKNOWN ? NULL : tp_store_get(store, kind, ns, name);
}

const char *tp__resource_name(tp_kind k)
{
	switch (k) {
	case TP_KIND_TRAINJOB: return "trainjobs." TP_GROUP_TRAINER;
	case TP_KIND_TRAINING_RUNTIME: return "trainingruntimes." TP_GROUP_TRAINER;
	case TP_KIND_CLUSTER_TRAINING_RUNTIME: return "clustertrainingruntimes." TP_GROUP_TRAINER;
	case TP_KIND_OME_TRAINING_RUNTIME: return "trainingruntimes." TP_GROUP_OME;
	case TP_KIND_OME_CLUSTER_TRAINING_RUNTIME: return "clustertrainingruntimes." TP_GROUP_OME;
	case TP_KIND_JOBSET: return "jobsets." TP_GROUP_JOBSET;
	case TP_KIND_PRIORITY_CLASS: return "priorityclasses.scheduling.k8s.io";
	case TP_KIND_CONFIGMAP: return "configmaps";
	case TP_KIND_NAMESPACE: return "namespaces";
	case TP_KIND_SERVICE_ACCOUNT: return "serviceaccounts";
	case TP_KIND_LIMIT_RANGE: return "limitranges";
	case TP_KIND_RESOURCE_QUOTA: return "resourcequotas";
	default: return "objects";
	}
}

int tp_result_lookup_failed(tp_result *res, const char *path, tp_kind k, const char *name,
			    const char *why)
{
	tp_result_set_unavailable(res);
	return tp_result_add(res, TP_FIELD_INTERNAL, path, NULL,
			     "%s \"%s\" could not be looked up: %s; the request can be retried",
			     tp__resource_name(k), name ? name : "",
			     why && *why ? why : tp_strerror(TP_EUNAVAILABLE));
}

int tp__runtime_lookup(const tp_options *opt, const cJSON *trainjob, tp_result *res,
		       const cJSON **out)
{
	tp_kind kind;
	const char *ns, *name;
	char why[512];
	*out = NULL;
	runtime_ref(trainjob, &kind, &ns, &name);
	if (kind == TP_KIND_UNKNOWN)
		return TP_ENOTFOUND;
	int rc = tp_lookup_get(opt, kind, ns, name, out, why, sizeof(why));
	if (rc == TP_EUNAVAILABLE) {
		int arc = tp_result_lookup_failed(res, "spec.runtimeRef", kind, name, why);
		return arc ? arc : TP_EUNAVAILABLE;
	}
	return rc == TP_OK || rc == TP_ENOMEM ? rc : TP_ENOTFOUND;
}

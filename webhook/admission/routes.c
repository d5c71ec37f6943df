/*
 * routes.c — the server's route table (docs/design.md), shared by the server, the
 * `review` command, the metrics and the tests that check the manifests.
 *
 * Paths follow controller-runtime's convention, which Kubeflow uses:
 * /validate-<group with dots as dashes>-<version>-<lowercase kind>.
 */
#include <string.h>

#include "webhook/admission/routes.h"

const tw_route tw_routes[] = {
	{ "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime", TW_ROUTE_VALIDATE,
	  TP_KIND_TRAINING_RUNTIME },
	{ "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime", TW_ROUTE_VALIDATE,
	  TP_KIND_CLUSTER_TRAINING_RUNTIME },
	{ "/validate-trainer-kubeflow-org-v1alpha1-trainjob", TW_ROUTE_VALIDATE, TP_KIND_TRAINJOB },
	{ "/validate-ome-io-v1beta1-trainingruntime", TW_ROUTE_VALIDATE,
	  TP_KIND_OME_TRAINING_RUNTIME },
	{ "/validate-ome-io-v1beta1-clustertrainingruntime", TW_ROUTE_VALIDATE,
	  TP_KIND_OME_CLUSTER_TRAINING_RUNTIME },
	{ "/mutate-trainer-kubeflow-org-v1alpha1-trainjob", TW_ROUTE_MUTATE_TRAINJOB,
	  TP_KIND_TRAINJOB },
	{ "/mutate-jobset-x-k8s-io-v1alpha2-jobset", TW_ROUTE_MUTATE_JOBSET, TP_KIND_JOBSET },
	{ "/expand", TW_ROUTE_EXPAND, TP_KIND_TRAINJOB },
	{ "/healthz", TW_ROUTE_HEALTH, TP_KIND_UNKNOWN },
	{ "/readyz", TW_ROUTE_HEALTH, TP_KIND_UNKNOWN },
	{ NULL, 0, TP_KIND_UNKNOWN },
};

const tw_route *tw_route_find(const char *path)
{
	for (const tw_route *r = tw_routes; path && r->path; r++)
		if (!strcmp(r->path, path))
			return r;
	return NULL;
}

/* The tp_kind a request.kind names. The API server converts the object to the
 * version the webhook registered, so group, version and kind must all fit. */
static tp_kind kind_of_gvk(const char *group, const char *version, const char *kind)
{
	static const struct {
		const char *group, *version, *kind;
		tp_kind k;
	} gvks[] = {
		{ "trainer.kubeflow.org", "v1alpha1", "TrainJob", TP_KIND_TRAINJOB },
		{ "trainer.kubeflow.org", "v1alpha1", "TrainingRuntime", TP_KIND_TRAINING_RUNTIME },
		{ "trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime",
		  TP_KIND_CLUSTER_TRAINING_RUNTIME },
		{ "ome.io", "v1beta1", "TrainingRuntime", TP_KIND_OME_TRAINING_RUNTIME },
		{ "ome.io", "v1beta1", "ClusterTrainingRuntime",
		  TP_KIND_OME_CLUSTER_TRAINING_RUNTIME },
		{ "jobset.x-k8s.io", "v1alpha2", "JobSet", TP_KIND_JOBSET },
	};
	if (!group || !version || !kind)
		return TP_KIND_UNKNOWN;
	for (size_t i = 0; i < sizeof(gvks) / sizeof(gvks[0]); i++)
		if (!strcmp(gvks[i].group, group) && !strcmp(gvks[i].version, version) &&
		    !strcmp(gvks[i].kind, kind))
			return gvks[i].k;
	return TP_KIND_UNKNOWN;
}

tp_kind tw_kind_of_gvk(const char *group, const char *version, const char *kind)
{
	return kind_of_gvk(group, version, kind);
}

const tw_route *tw_route_for_kind(const char *group, const char *version, const char *kind,
				  bool mutating)
{
	tp_kind k = kind_of_gvk(group, version, kind);
	if (k == TP_KIND_UNKNOWN)
		return NULL;
	for (const tw_route *r = tw_routes; r->path; r++) {
		bool m = r->type == TW_ROUTE_MUTATE_TRAINJOB || r->type == TW_ROUTE_MUTATE_JOBSET;
		if (r->kind == k && m == mutating &&
		    (r->type == TW_ROUTE_VALIDATE || m))
			return r;
	}
	return NULL;
}

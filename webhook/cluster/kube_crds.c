/*
 * kube_crds.c — `serve --kube` takes the CRDs the cluster has installed, by
 * name, so that the schema and CEL rules checked are the cluster's own (and
 * follow an upgrade of Kubeflow Trainer at the next start). A CRD that is
 * not installed leaves its kinds to the built-in schema checks; so does one
 * the API server could not give (said in the log), never a refusal.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/cluster/kubeapi.h"
#include "webhook/core/log.h"
#include "policy/trainpolicy.h"

#define CRD_TIMEOUT_MS 10000

/* The CRDs of the kinds this webhook judges (RBAC: get, by these names). */
const char *const tw_kube_crd_names[] = {
	"trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
	"clustertrainingruntimes.trainer.kubeflow.org", "optimizationjobs.trainer.kubeflow.org",
	"jobsets.jobset.x-k8s.io", NULL,
};

static void fetch_one(tw_kubeapi *api, tp_crds *crds, const char *name, size_t *added)
{
	char path[256];
	snprintf(path, sizeof(path), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s", name);
	tw_kube_resp resp;
	tw_kube_resp_init(&resp);
	int rc = tw_kubeapi_call(api, "GET", path, NULL, CRD_TIMEOUT_MS, &resp);
	if (rc || resp.status != 200) {
		if (resp.status == 404)
			tw_log(TW_LOG_INFO, "CRD %s not installed: its kinds keep the built-in schema "
			       "checks", name);
		else
			tw_log(TW_LOG_WARN, "CRD %s could not be read (%s): its kinds keep the built-in "
			       "schema checks", name, resp.error);
		tw_kube_resp_free(&resp);
		return;
	}
	cJSON *crd = cJSON_ParseWithLength(resp.body.data ? resp.body.data : "", resp.body.len);
	char why[512] = "";
	if (!crd || tp_crds_add(crds, crd, why, sizeof(why)))
		tw_log(TW_LOG_WARN, "CRD %s does not compile (%s): its kinds keep the built-in schema "
		       "checks", name, crd ? why : "not JSON");
	else
		++*added;
	cJSON_Delete(crd);
	tw_kube_resp_free(&resp);
}

size_t tw_kube_crds_fetch(tw_kubeapi *api, tp_crds *crds)
{
	size_t added = 0;
	for (size_t i = 0; tw_kube_crd_names[i]; i++)
		fetch_one(api, crds, tw_kube_crd_names[i], &added);
	return added;
}

/*
 * kube_crds.c — the CRDs a cluster has installed, by name, so that the
 * schema and CEL rules checked are the cluster's own: `validate` and `review`
 * with --kubeconfig/--context read them once here; `serve --kube` follows the
 * same names (tw_kube_crd_names) in webhook/server/crds_follow.c. A CRD that is
 * not installed (404) leaves its kinds to the built-in schema checks; one the
 * API server could not give (unreachable, refused, an error) fails the fetch,
 * since judging without it would say "ok" to what the cluster's CRD refuses.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/cluster/kubeapi.h"
#include "webhook/core/json_read.h"
#include "webhook/core/log.h"
#include "policy/trainpolicy.h"

#define CRD_TIMEOUT_MS 10000

/* The CRDs of the kinds this webhook judges (RBAC: get, by these names). */
const char *const tw_kube_crd_names[] = {
	"trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
	"clustertrainingruntimes.trainer.kubeflow.org", "optimizationjobs.trainer.kubeflow.org",
	"jobsets.jobset.x-k8s.io", NULL,
};

/* 0: added, not installed or not compilable (each logged); -1: unreadable,
 * said in err. */
static int fetch_one(tw_kubeapi *api, tp_crds *crds, const char *name, size_t *added, char *err,
		     size_t errlen)
{
	int rc_out = 0;
	char path[256];
	snprintf(path, sizeof(path), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s", name);
	tw_kube_resp resp;
	tw_kube_resp_init(&resp);
	int rc = tw_kubeapi_call(api, "GET", path, NULL, CRD_TIMEOUT_MS, &resp);
	if (rc || resp.status != 200) {
		if (resp.status == 404)
			tw_log(TW_LOG_INFO, "CRD %s not installed: its kinds keep the built-in schema "
			       "checks", name);
		else {
			if (resp.error[0])
				snprintf(err, errlen, "CRD %s could not be read from %s: %s", name,
					 tw_kubeapi_server(api), resp.error);
			else
				snprintf(err, errlen, "CRD %s could not be read from %s: HTTP %ld", name,
					 tw_kubeapi_server(api), resp.status);
			rc_out = TW_EFAILED;
		}
		tw_kube_resp_free(&resp);
		return rc_out;
	}
	cJSON *crd = tw_json_object(resp.body.data, resp.body.len);
	char why[512] = "";
	if (!crd || tp_crds_add(crds, crd, why, sizeof(why)))
		tw_log(TW_LOG_WARN, "CRD %s does not compile (%s): its kinds keep the built-in schema "
		       "checks", name, crd ? why : "not JSON");
	else
		++*added;
	cJSON_Delete(crd);
	tw_kube_resp_free(&resp);
	return rc_out;
}

int tw_kube_crds_fetch(tw_kubeapi *api, tp_crds *crds, size_t *added, char *err, size_t errlen)
{
	*added = 0;
	for (size_t i = 0; tw_kube_crd_names[i]; i++)
		if (fetch_one(api, crds, tw_kube_crd_names[i], added, err, errlen))
			return TP_EUNAVAILABLE;
	return TP_OK;
}

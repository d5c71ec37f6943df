/*
 * kubeapi_json.c — one object read or written as JSON over tw_kubeapi_call
 * (see kubeapi.h), with what its status means to the callers that keep
 * objects (certmgr_objects.c, register_objects.c): a 404 is "absent", a
 * 409 "someone wrote first", anything else not 2xx a failure said in why.
 */
#include "webhook/cluster/kubeapi.h"
#include "webhook/core/json_read.h"

#include <stdio.h>
#include <stdlib.h>

int tw_kubeapi_get_json(tw_kubeapi *k, const char *path, long timeout_ms, cJSON **obj,
			char *why, size_t n)
{
	*obj = NULL;
	tw_kube_resp r;
	tw_kube_resp_init(&r);
	int rc = TW_EFAILED;
	if (tw_kubeapi_call(k, "GET", path, NULL, timeout_ms, &r))
		snprintf(why, n, "%s", r.error);
	else if (r.status == 404)
		rc = 0;
	else if (r.status != 200)
		snprintf(why, n, "GET %s: %s", path, r.error);
	else if (!(*obj = tw_json_object(r.body.data, r.body.len)))
		snprintf(why, n, "GET %s: the answer is not JSON", path);
	else
		rc = 0;
	tw_kube_resp_free(&r);
	return rc;
}

int tw_kubeapi_write_json(tw_kubeapi *k, const char *method, const char *path,
			  const cJSON *obj, long timeout_ms, char *why, size_t n)
{
	char *body = cJSON_PrintUnformatted(obj);
	if (!body)
		return snprintf(why, n, "out of memory"), TP_ENOMEM;
	tw_kube_resp r;
	tw_kube_resp_init(&r);
	int rc = TW_EFAILED;
	if (tw_kubeapi_call(k, method, path, body, timeout_ms, &r))
		snprintf(why, n, "%s", r.error);
	else if (r.status == 409)
		rc = 1;
	else if (r.status < 200 || r.status > 299)
		snprintf(why, n, "%s %s: %s", method, path, r.error);
	else
		rc = 0;
	tw_kube_resp_free(&r);
	free(body);
	return rc;
}

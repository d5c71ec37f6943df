/*
 * webhook/cluster/kubeapi.h — one synchronous call to the API server at a time
 * per caller: GET, PUT or POST of one object, within a time limit. Used by the
 * lookups a request makes inside its ?timeout= (resolver.c) and by the
 * certificate manager (certmgr.c). Thread-safe: each call borrows a libcurl
 * handle from a small pool, so that connections to the API server are reused
 * across calls.
 */
#ifndef TW_KUBEAPI_H
#define TW_KUBEAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/trainpolicy.h"
#include "webhook/cluster/kube.h"

typedef struct tw_kubeapi tw_kubeapi;

/* c is copied. 0, or TW_EFAILED with the reason in err. */
int tw_kubeapi_new(const tw_kube_config *c, tw_kubeapi **out, char *err, size_t errlen);
void tw_kubeapi_free(tw_kubeapi *k);
/* The server URL ("https://10.96.0.1:443"). */
const char *tw_kubeapi_server(const tw_kubeapi *k);

typedef struct tw_kube_resp {
	long status;      /* HTTP status; 0 when no answer arrived */
	tp_buf body;      /* the answer, at most TW_KUBEAPI_MAX_BODY bytes */
	char error[512];  /* a transport failure, or "HTTP 403: <Status.message>" */
} tw_kube_resp;

#define TW_KUBEAPI_MAX_BODY ((size_t)16 << 20)

void tw_kube_resp_init(tw_kube_resp *r);
void tw_kube_resp_free(tw_kube_resp *r);

/* method "GET", "PUT" or "POST"; path from the server root ("/api/v1/...");
 * body NULL or JSON. timeout_ms bounds the whole call (connect included).
 * Returns 0 when an HTTP answer arrived (whatever its status: resp->status),
 * TW_EFAILED when none did (resp->error says why). resp->error also holds, for a
 * non-2xx answer, the status and the Status object's message. */
int tw_kubeapi_call(tw_kubeapi *k, const char *method, const char *path, const char *body,
		    long timeout_ms, tw_kube_resp *resp);

/* (kubeapi_json.c) GET path as JSON into *obj (a malloc'd tree; NULL on a
 * 404). 0, or TW_EFAILED with why: no answer, another status, not JSON. */
int tw_kubeapi_get_json(tw_kubeapi *k, const char *path, long timeout_ms, cJSON **obj,
			char *why, size_t n);
/* PUT or POST obj to path. 0 written, 1 on 409 (someone wrote first, or it
 * exists), TW_EFAILED failed with why. */
int tw_kubeapi_write_json(tw_kubeapi *k, const char *method, const char *path,
			  const cJSON *obj, long timeout_ms, char *why, size_t n);

/* The path of one object, or of the collection when name is NULL:
 * "/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>]", or
 * "/api/v1/..." for the core group (group ""). false when a name or
 * namespace could not name any object (not a DNS-1123 subdomain, so never a
 * path trick like "../secrets") or the path does not fit. */
bool tw_kube_path(char *out, size_t n, const char *group, const char *version,
		  const char *plural, const char *ns, const char *name);

/* The resource of a kind the server looks up (group, version, plural), or
 * false for kinds it never asks the API server about. */
bool tw_kube_resource_of(tp_kind k, const char **group, const char **version,
			 const char **plural);

/* (kube_crds.c) The CRDs of the webhook's kinds, as the cluster has them,
 * GET by name (tw_kube_crd_names, NULL-terminated) into crds; *added says how
 * many. One not installed (404) or not compilable is logged and left out;
 * one the API server does not give (no answer, 401, 403, 5xx) stops the
 * fetch: TP_EUNAVAILABLE, with the CRD, the server and the cause in err. */
extern const char *const tw_kube_crd_names[];
int tw_kube_crds_fetch(tw_kubeapi *api, tp_crds *crds, size_t *added, char *err, size_t errlen);

#endif /* TW_KUBEAPI_H */

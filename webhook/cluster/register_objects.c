/*
 * register_objects.c — what the registrar reads and writes (see
 * register.h): the Service's EndpointSlices (is a replica ready to be
 * called? is this pod being deleted?) and the two webhook configurations,
 * read, compared with what they should hold, and written back with their
 * resourceVersion. A 409 is reported, never retried here: register.c reads
 * everything again.
 */
#include "webhook/cluster/register_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALL_TIMEOUT_MS 5000

static const char *const plural[REG_NCFG] = { "validatingwebhookconfigurations",
					       "mutatingwebhookconfigurations" };
static const char *const kind_name[REG_NCFG] = { "ValidatingWebhookConfiguration",
						  "MutatingWebhookConfiguration" };

/* GET path into *obj (NULL on 404). 0, or -1 with why. */
static int get(tw_register *r, const char *path, cJSON **obj, char *why, size_t n)
{
	return tw_kubeapi_get_json(r->api, path, CALL_TIMEOUT_MS, obj, why, n);
}

/* ------------------------------------------------------------ endpoints */

/* One endpoint of a slice into out. A missing condition reads as the API
 * documents it: ready unknown is ready, terminating unknown is not. */
static void count(tw_register *r, const cJSON *ep, reg_endpoints *out)
{
	const cJSON *ready = tp_get(ep, "conditions.ready");
	const cJSON *term = tp_get(ep, "conditions.terminating");
	bool is_ready = !cJSON_IsFalse(ready) && !cJSON_IsTrue(term);
	const char *pod = tp_get_str(ep, "targetRef.name");
	bool mine = r->pod && pod && !strcmp(pod, r->pod);
	if (mine)
		out->own = cJSON_IsTrue(term) ? OWN_TERMINATING : OWN_SERVING;
	if (is_ready) {
		out->ready++;
		out->others += !mine;
	}
}

int tw__register_endpoints(tw_register *r, reg_endpoints *out, char *why, size_t n)
{
	memset(out, 0, sizeof(*out));
	char path[600];
	if (!tw_kube_path(path, sizeof(path), "discovery.k8s.io", "v1", "endpointslices", r->ns,
			  NULL))
		return snprintf(why, n, "namespace \"%s\" is not a valid name", r->ns),
		       TW_EFAILED;
	size_t len = strlen(path);
	snprintf(path + len, sizeof(path) - len, "?labelSelector=kubernetes.io%%2Fservice-name%%3D%s",
		 r->service);
	cJSON *list = NULL;
	if (get(r, path, &list, why, n))
		return TW_EFAILED;
	const cJSON *slice, *ep;
	cJSON_ArrayForEach(slice, tp_get_array(list, "items"))
	{
		cJSON_ArrayForEach(ep, tp_get_array(slice, "endpoints"))
		{
			count(r, ep, out);
		}
	}
	cJSON_Delete(list);
	return 0;
}

/* ------------------------------------------------------------ webhooks */

/* The webhook of arr named name, or NULL. */
static const cJSON *named(const cJSON *arr, const char *name)
{
	return name ? tp_find_named(arr, "name", name) : NULL;
}

/* Does the live webhook hold every field of the wanted one (and no match
 * condition it lacks)? Fields the API server adds on its own are left
 * alone; caBundle is compared apart. */
static bool holds(const cJSON *live, const cJSON *want)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, want)
	{
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(live, f->string);
		if (!strcmp(f->string, "clientConfig")) {
			const cJSON *ls = tp_get(l, "service"), *ws = tp_get(f, "service");
			const char *lb = tp_get_str(l, "caBundle"), *wb = tp_get_str(f, "caBundle");
			if (!cJSON_Compare(ls, ws, true) || (wb && (!lb || strcmp(lb, wb))))
				return false;
		} else if (!l || !cJSON_Compare(l, f, true)) {
			return false;
		}
	}
	return cJSON_GetObjectItemCaseSensitive(want, "matchConditions") ||
	       !cJSON_GetObjectItemCaseSensitive(live, "matchConditions");
}

static bool same(const cJSON *live, const cJSON *want)
{
	int n = cJSON_GetArraySize(want);
	if (cJSON_GetArraySize(live) != n)
		return false;
	for (int i = 0; i < n; i++)
		if (!holds(cJSON_GetArrayItem(live, i), cJSON_GetArrayItem(want, i)))
			return false;
	return true;
}

/* The caBundle each wanted webhook gets: its live one when it has one
 * (whoever keeps the bundle keeps it), else bundle64 (may be NULL). */
static bool bundles(cJSON *want, const cJSON *live, const char *bundle64)
{
	cJSON *w;
	cJSON_ArrayForEach(w, want)
	{
		const char *cb = tp_get_str(named(live, tp_get_str(w, "name")), "clientConfig.caBundle");
		if (!cb || !*cb)
			cb = bundle64;
		cJSON *cc = cJSON_GetObjectItemCaseSensitive(w, "clientConfig");
		if (cb && !cJSON_AddStringToObject(cc, "caBundle", cb))
			return false;
	}
	return true;
}

static char *bundle64(tw_register *r)
{
	char *pem = r->o.bundle ? r->o.bundle(r->o.bundle_arg) : NULL;
	tp_buf b = TP_BUF_INIT(0);
	if (pem && tp_base64_encode(pem, strlen(pem), &b))
		tp_buf_free(&b);
	free(pem);
	return b.data;
}

/* The webhooks configuration i should hold; NULL when out of memory. */
static cJSON *wanted(tw_register *r, int i, bool fill, const cJSON *live)
{
	if (!fill)
		return cJSON_CreateArray();
	size_t nexempt = 0;
	while (r->exempt && r->exempt[nexempt])
		nexempt++;
	tw_register_spec spec = { .namespace_ = r->ns, .service = r->service,
				  .failure_policy = r->policy, .timeout_s = r->o.timeout_s,
				  .exempt = (const char *const *)r->exempt, .nexempt = nexempt };
	cJSON *want = tw_register_webhooks(&spec, i);
	char *b64 = want ? bundle64(r) : NULL;
	if (want && !bundles(want, live, b64)) {
		cJSON_Delete(want);
		want = NULL;
	}
	free(b64);
	return want;
}

static int put(tw_register *r, const char *path, const cJSON *obj, char *why, size_t n)
{
	return tw_kubeapi_write_json(r->api, "PUT", path, obj, CALL_TIMEOUT_MS, why, n);
}

int tw__register_put(tw_register *r, int i, bool fill, char *why, size_t n)
{
	char path[512];
	if (!tw_kube_path(path, sizeof(path), "admissionregistration.k8s.io", "v1", plural[i], NULL,
			  r->cfg_name[i]))
		return snprintf(why, n, "%s name \"%s\" is not a valid name", kind_name[i],
				r->cfg_name[i]), TW_EFAILED;
	cJSON *cfg = NULL;
	if (get(r, path, &cfg, why, n))
		return TW_EFAILED;
	if (!cfg)
		return snprintf(why, n, "%s \"%s\" does not exist: apply deploy/ (it ships both "
					"configurations, empty, for the server to fill)", kind_name[i],
				r->cfg_name[i]), TW_EFAILED;
	const cJSON *live = tp_get_array(cfg, "webhooks");
	cJSON *want = wanted(r, i, fill, live);
	int rc = 0;
	if (!want) {
		rc = TW_EFAILED;
		snprintf(why, n, "out of memory");
	} else if (!same(live, want)) {
		cJSON_DeleteItemFromObjectCaseSensitive(cfg, "webhooks");
		if (cJSON_AddItemToObject(cfg, "webhooks", want))
			want = NULL;
		rc = want ? (snprintf(why, n, "out of memory"), -1) : put(r, path, cfg, why, n);
	}
	cJSON_Delete(want);
	cJSON_Delete(cfg);
	return rc;
}

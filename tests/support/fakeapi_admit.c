/*
 * fakeapi_admit.c — the API server's admission chain over the fake's
 * objects (see fakeapi_admit.h), with kube-apiserver's wording for what a
 * user sees:
 *   admission webhook "NAME" denied the request: MESSAGE
 *   Internal error occurred: failed calling webhook "NAME": failed to call
 *     webhook: Post "URL": no endpoints available for service "SVC"
 */
#include "tests/support/fakeapi_admit.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"

static const struct res {
	int r;
	const char *group, *version, *plural, *kind;
	bool namespaced;
} resources[] = {
	{ FA_TJ, "trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob", true },
	{ FA_TR, "trainer.kubeflow.org", "v1alpha1", "trainingruntimes", "TrainingRuntime", true },
	{ FA_CTR, "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes",
	  "ClusterTrainingRuntime", false },
	{ FA_JS, "jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true },
};

/* The write being admitted. */
struct write {
	const struct res *res;
	const char *op;
	const cJSON *obj;
	const char *ns;
};

/* ------------------------------------------------------------ matching */

static bool has(const cJSON *list, const char *v)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, list)
		if (cJSON_IsString(e) && (!strcmp(e->valuestring, "*") || !strcmp(e->valuestring, v)))
			return true;
	return false;
}

static bool rules_match(const cJSON *wh, const struct write *w)
{
	const cJSON *rule;
	cJSON_ArrayForEach(rule, tp_get_array(wh, "rules"))
	{
		const char *scope = tp_get_str(rule, "scope");
		bool scope_ok = !scope || !strcmp(scope, "*") ||
				!strcmp(scope, w->res->namespaced ? "Namespaced" : "Cluster");
		if (scope_ok && has(tp_get_array(rule, "operations"), w->op) &&
		    has(tp_get_array(rule, "apiGroups"), w->res->group) &&
		    has(tp_get_array(rule, "apiVersions"), w->res->version) &&
		    has(tp_get_array(rule, "resources"), w->res->plural))
			return true;
	}
	return false;
}

/* A label selector over labels (an object of strings). */
static bool selects(const cJSON *sel, const cJSON *labels)
{
	const cJSON *m, *e;
	cJSON_ArrayForEach(m, tp_get_object(sel, "matchLabels"))
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, m->string);
		if (!cJSON_IsString(v) || !cJSON_IsString(m) || strcmp(v->valuestring, m->valuestring))
			return false;
	}
	cJSON_ArrayForEach(e, tp_get_array(sel, "matchExpressions"))
	{
		const char *key = tp_get_str(e, "key"), *op = tp_get_str(e, "operator");
		const cJSON *v = key ? cJSON_GetObjectItemCaseSensitive(labels, key) : NULL;
		bool present = cJSON_IsString(v);
		bool in = present && has(tp_get_array(e, "values"), v->valuestring);
		if (!op || (!strcmp(op, "In") && !in) || (!strcmp(op, "NotIn") && in) ||
		    (!strcmp(op, "Exists") && !present) || (!strcmp(op, "DoesNotExist") && present))
			return false;
	}
	return true;
}

static bool selectors_match(const cJSON *wh, const struct write *w)
{
	if (!selects(tp_get_object(wh, "objectSelector"), tp_get_object(w->obj, "metadata.labels")))
		return false;
	if (!w->res->namespaced)
		return true; /* the API server ignores namespaceSelector for cluster-scoped kinds */
	cJSON *ns_labels = cJSON_CreateObject();
	cJSON_AddStringToObject(ns_labels, "kubernetes.io/metadata.name", w->ns);
	bool ok = selects(tp_get_object(wh, "namespaceSelector"), ns_labels);
	cJSON_Delete(ns_labels);
	return ok;
}

/* ------------------------------------------------------------ calling */

/* A ready endpoint of Service ns/name: address and port; false when none. */
static bool endpoint(fa_server *f, const char *ns, const char *name, char *addr, size_t n,
		     long *port)
{
	char *text = fa_list_objects(f, FA_EPS);
	cJSON *slices = cJSON_Parse(text ? text : "[]"), *s;
	free(text);
	bool found = false;
	cJSON_ArrayForEach(s, slices)
	{
		const cJSON *lbl = tp_get_object(s, "metadata.labels");
		const cJSON *svc = cJSON_GetObjectItemCaseSensitive(lbl, "kubernetes.io/service-name");
		const char *sns = tp_get_str(s, "metadata.namespace");
		if (found || !cJSON_IsString(svc) || strcmp(svc->valuestring, name) || !sns ||
		    strcmp(sns, ns))
			continue;
		const cJSON *ep;
		cJSON_ArrayForEach(ep, tp_get_array(s, "endpoints"))
		{
			const cJSON *ready = tp_get(ep, "conditions.ready");
			const cJSON *a0 = cJSON_GetArrayItem(tp_get_array(ep, "addresses"), 0);
			const cJSON *p0 = cJSON_GetArrayItem(tp_get_array(s, "ports"), 0);
			if (found || cJSON_IsFalse(ready) || !cJSON_IsString(a0) || !p0)
				continue;
			snprintf(addr, n, "%s", a0->valuestring);
			*port = (long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(p0, "port"));
			found = true;
		}
	}
	cJSON_Delete(slices);
	return found;
}

static char *review(const struct write *w, int seq)
{
	cJSON *ar = cJSON_CreateObject(), *rq;
	cJSON_AddStringToObject(ar, "apiVersion", "admission.k8s.io/v1");
	cJSON_AddStringToObject(ar, "kind", "AdmissionReview");
	rq = cJSON_AddObjectToObject(ar, "request");
	char uid[32];
	snprintf(uid, sizeof(uid), "fake-%d", seq);
	cJSON_AddStringToObject(rq, "uid", uid);
	cJSON *k = cJSON_AddObjectToObject(rq, "kind");
	cJSON_AddStringToObject(k, "group", w->res->group);
	cJSON_AddStringToObject(k, "version", w->res->version);
	cJSON_AddStringToObject(k, "kind", w->res->kind);
	cJSON *r = cJSON_AddObjectToObject(rq, "resource");
	cJSON_AddStringToObject(r, "group", w->res->group);
	cJSON_AddStringToObject(r, "version", w->res->version);
	cJSON_AddStringToObject(r, "resource", w->res->plural);
	cJSON_AddStringToObject(rq, "name", tp_get_str(w->obj, "metadata.name"));
	if (w->res->namespaced)
		cJSON_AddStringToObject(rq, "namespace", w->ns);
	cJSON_AddStringToObject(rq, "operation", w->op);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(rq, "userInfo"), "username", "fake-user");
	cJSON_AddItemToObject(rq, "object", cJSON_Duplicate(w->obj, 1));
	cJSON_AddBoolToObject(rq, "dryRun", false);
	char *text = cJSON_PrintUnformatted(ar);
	cJSON_Delete(ar);
	return text;
}

static size_t collect(char *p, size_t sz, size_t n, void *arg)
{
	return tp_buf_add(arg, p, sz * n) ? 0 : sz * n;
}

/* Call one webhook; false (out says why, the API server's way) when it
 * refused or could not be called, under failurePolicy Fail. */
static bool call(fa_server *f, const cJSON *wh, const struct write *w, fa_verdict *out)
{
	const char *name = tp_get_str(wh, "name");
	const char *svc = tp_get_str(wh, "clientConfig.service.name");
	const char *sns = tp_get_str(wh, "clientConfig.service.namespace");
	const char *path = tp_get_str(wh, "clientConfig.service.path");
	const char *cab = tp_get_str(wh, "clientConfig.caBundle");
	const char *policy = tp_get_str(wh, "failurePolicy");
	const cJSON *to = tp_get(wh, "timeoutSeconds");
	long timeout_s = cJSON_IsNumber(to) ? (long)to->valuedouble : 10;
	bool fail = !policy || !strcmp(policy, "Fail");
	char url[512], addr[64], err[CURL_ERROR_SIZE] = "";
	long port = 0;
	snprintf(url, sizeof(url), "https://%s.%s.svc:443%s?timeout=%lds", svc ? svc : "",
		 sns ? sns : "", path ? path : "", timeout_s);
	out->calls++;
	if (!endpoint(f, sns ? sns : "", svc ? svc : "", addr, sizeof(addr), &port)) {
		snprintf(err, sizeof(err), "no endpoints available for service \"%s\"", svc);
	} else {
		char target[600], resolve[700];
		snprintf(target, sizeof(target), "https://%s.%s.svc:%ld%s?timeout=%lds", svc, sns,
			 port, path ? path : "", timeout_s);
		snprintf(resolve, sizeof(resolve), "%s.%s.svc:%ld:%s", svc, sns, port, addr);
		tp_buf pem = TP_BUF_INIT(0), body = TP_BUF_INIT(0);
		if (cab)
			tp_base64_decode(cab, strlen(cab), &pem);
		char *req = review(w, out->calls);
		CURL *h = curl_easy_init();
		struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
		struct curl_slist *rs = curl_slist_append(NULL, resolve);
		struct curl_blob ca = { pem.data ? pem.data : (void *)"", pem.len, CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_URL, target);
		curl_easy_setopt(h, CURLOPT_RESOLVE, rs);
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, req);
		curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
		curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
		CURLcode cc = curl_easy_perform(h);
		long code = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		cJSON *ans = cc == CURLE_OK && code == 200 && body.data
				     ? cJSON_ParseWithLength(body.data, body.len) : NULL;
		if (cc != CURLE_OK && !err[0])
			snprintf(err, sizeof(err), "%s", curl_easy_strerror(cc));
		else if (cc == CURLE_OK && !ans)
			snprintf(err, sizeof(err), "the server answered HTTP %ld", code);
		curl_slist_free_all(hd);
		curl_slist_free_all(rs);
		curl_easy_cleanup(h);
		free(req);
		tp_buf_free(&pem);
		tp_buf_free(&body);
		if (ans) {
			bool allowed = tp_get_true(ans, "response.allowed");
			const cJSON *c = tp_get(ans, "response.status.code");
			const char *msg = tp_get_str(ans, "response.status.message");
			if (!allowed) {
				out->code = cJSON_IsNumber(c) ? (int)c->valuedouble : 403;
				snprintf(out->message, sizeof(out->message), "admission webhook \"%s\" "
					 "denied the request: %s", name, msg ? msg : "");
			}
			cJSON_Delete(ans);
			return allowed;
		}
	}
	if (!fail)
		return true;
	out->code = 500;
	snprintf(out->message, sizeof(out->message), "Internal error occurred: failed calling "
		 "webhook \"%s\": failed to call webhook: Post \"%s\": %s", name, url, err);
	return false;
}

/* Every matching webhook of every configuration of resource cr, in order;
 * false at the first refusal. */
static bool run_configs(fa_server *f, int cr, const struct write *w, fa_verdict *out)
{
	char *text = fa_list_objects(f, cr);
	cJSON *cfgs = cJSON_Parse(text ? text : "[]"), *cfg, *wh;
	free(text);
	bool ok = true;
	cJSON_ArrayForEach(cfg, cfgs)
	{
		cJSON_ArrayForEach(wh, tp_get_array(cfg, "webhooks"))
		{
			if (ok && rules_match(wh, w) && selectors_match(wh, w))
				ok = call(f, wh, w, out);
		}
	}
	cJSON_Delete(cfgs);
	return ok;
}

void fa_admit(fa_server *f, int r, const char *operation, const char *object_json,
	      fa_verdict *out)
{
	memset(out, 0, sizeof(*out));
	const struct res *res = NULL;
	for (size_t i = 0; i < sizeof(resources) / sizeof(resources[0]); i++)
		if (resources[i].r == r)
			res = &resources[i];
	cJSON *obj = cJSON_Parse(object_json);
	if (!res || !obj)
		abort(); /* a test's mistake */
	const char *ns = tp_get_str(obj, "metadata.namespace");
	struct write w = { res, operation, obj, ns ? ns : "default" };
	out->allowed = run_configs(f, FA_MWC, &w, out) && run_configs(f, FA_VWC, &w, out);
	if (out->allowed)
		out->code = 201;
	cJSON_Delete(obj);
}

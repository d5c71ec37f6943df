/*
 * kubeapi.c — synchronous calls to the API server (see kubeapi.h).
 *
 * A pool of libcurl easy handles: a call takes one (or makes one), uses it,
 * and gives it back, so each handle keeps its connection (and TLS session)
 * to the API server warm for the next call. The credentials come from
 * kubeauth.c; after a 401 they are read again (a rotated token file, an
 * exec plugin run again) and the call is retried once.
 */
#include "webhook/cluster/kubeapi.h"
#include "webhook/core/json_read.h"
#include "webhook/core/clock.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define POOL_MAX 8

struct tw_kubeapi {
	tw_kube_config cfg;
	pthread_mutex_t lock; /* guards pool */
	CURL *pool[POOL_MAX];
	int npool;
};

int tw_kubeapi_new(const tw_kube_config *c, tw_kubeapi **out, char *err, size_t errlen)
{
	*out = NULL;
	tw_kubeapi *k = calloc(1, sizeof(*k));
	if (!k)
		return snprintf(err, errlen, "out of memory"), TP_ENOMEM;
	if (tw_kube_config_copy(&k->cfg, c)) {
		free(k);
		return snprintf(err, errlen, "out of memory"), TP_ENOMEM;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pthread_mutex_init(&k->lock, NULL);
	*out = k;
	return 0;
}

void tw_kubeapi_free(tw_kubeapi *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->npool; i++)
		curl_easy_cleanup(k->pool[i]);
	tw_kube_config_free(&k->cfg);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

const char *tw_kubeapi_server(const tw_kubeapi *k)
{
	return k->cfg.server;
}

void tw_kube_resp_init(tw_kube_resp *r)
{
	r->status = 0;
	r->error[0] = '\0';
	tp_buf_init(&r->body, TW_KUBEAPI_MAX_BODY);
}

void tw_kube_resp_free(tw_kube_resp *r)
{
	tp_buf_free(&r->body);
}

/* ------------------------------------------------------------ handles */

static CURL *take_handle(tw_kubeapi *k)
{
	pthread_mutex_lock(&k->lock);
	CURL *h = k->npool ? k->pool[--k->npool] : NULL;
	pthread_mutex_unlock(&k->lock);
	return h ? h : curl_easy_init();
}

static void give_handle(tw_kubeapi *k, CURL *h)
{
	pthread_mutex_lock(&k->lock);
	if (k->npool < POOL_MAX) {
		k->pool[k->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&k->lock);
	if (h)
		curl_easy_cleanup(h);
}

static size_t on_body(char *p, size_t sz, size_t nm, void *arg)
{
	tw_kube_resp *r = arg;
	return tp_buf_add(&r->body, p, sz * nm) ? 0 : sz * nm;
}

/* The Status object's message of an error answer, if there is one. */
static void error_text(tw_kube_resp *r)
{
	char msg[192] = "";
	tp_arena *prev = tp_arena_enter(NULL);
	cJSON *st = tw_json_object(r->body.data, r->body.len);
	const char *m = tp_get_str(st, "message");
	if (m)
		snprintf(msg, sizeof(msg), "%s", m);
	cJSON_Delete(st);
	tp_arena_leave(prev);
	snprintf(r->error, sizeof(r->error), "HTTP %ld%s%s", r->status, *msg ? ": " : "", msg);
}

static int perform(tw_kubeapi *k, CURL *h, const char *method, const char *url,
		   const char *body, long timeout_ms, bool fresh_token, tw_kube_resp *resp)
{
	struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
	if (body)
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_reset(h);
	tp_buf_reset(&resp->body);
	resp->status = 0;
	resp->error[0] = '\0';
	if (tw_kube_auth_apply(&k->cfg, h, &hdrs, fresh_token ? TW_KUBE_AUTH_REFRESH : 0,
			       resp->error, sizeof(resp->error))) {
		curl_slist_free_all(hdrs);
		return TW_EFAILED;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "trainer-webhook");
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	CURLcode cc = curl_easy_perform(h);
	curl_slist_free_all(hdrs);
	if (cc != CURLE_OK) {
		snprintf(resp->error, sizeof(resp->error), "%s %.200s: %.200s", method, url,
			 errbuf[0] ? errbuf : curl_easy_strerror(cc));
		return TW_EFAILED;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	if (resp->status < 200 || resp->status > 299)
		error_text(resp);
	return 0;
}

int tw_kubeapi_call(tw_kubeapi *k, const char *method, const char *path, const char *body,
		    long timeout_ms, tw_kube_resp *resp)
{
	char url[4096];
	int len = snprintf(url, sizeof(url), "%s%s", k->cfg.server, path);
	if (len < 0 || (size_t)len >= sizeof(url)) {
		snprintf(resp->error, sizeof(resp->error), "the request path is too long");
		resp->status = 0;
		return TW_EFAILED;
	}
	CURL *h = take_handle(k);
	if (!h) {
		snprintf(resp->error, sizeof(resp->error), "out of memory for a libcurl handle");
		return TW_EFAILED;
	}
	long long t0 = tw_mono_ms();
	int rc = perform(k, h, method, url, body, timeout_ms, false, resp);
	/* A rotated token or an expired credential: read it again and retry
	 * once, within the same limit. */
	long left = timeout_ms - (long)(tw_mono_ms() - t0);
	if (rc == 0 && resp->status == 401 && tw_kube_auth_refreshable(&k->cfg) && left > 0)
		rc = perform(k, h, method, url, body, left, true, resp);
	give_handle(k, h);
	return rc;
}

/* ------------------------------------------------------------- paths */

/* A name the API server could hold: a DNS-1123 subdomain (lowercase
 * alphanumerics, '-' and '.', alphanumeric at both ends, at most 253), which
 * every kind this server asks for is named by. Anything else names nothing
 * here, so no name can turn into another path ("../secrets/x", "a?watch"). */
static bool plain_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && ((c != '-' && c != '.') || i == 0 || i == n - 1))
			return false;
	}
	return true;
}

bool tw_kube_path(char *out, size_t n, const char *group, const char *version,
		  const char *plural, const char *ns, const char *name)
{
	if ((ns && *ns && !plain_name(ns)) || (name && !plain_name(name)))
		return false;
	int len;
	if (group && *group)
		len = snprintf(out, n, "/apis/%s/%s", group, version);
	else
		len = snprintf(out, n, "/api/%s", version);
	if (len < 0 || (size_t)len >= n)
		return false;
	int more = snprintf(out + len, n - (size_t)len, "%s%s%s%s%s%s", ns && *ns ? "/namespaces/" : "",
			    ns && *ns ? ns : "", "/", plural, name ? "/" : "", name ? name : "");
	return more >= 0 && (size_t)(len + more) < n;
}

bool tw_kube_resource_of(tp_kind k, const char **group, const char **version,
			 const char **plural)
{
	static const struct {
		tp_kind k;
		const char *g, *v, *p;
	} map[] = {
		{ TP_KIND_CLUSTER_TRAINING_RUNTIME, "trainer.kubeflow.org", "v1alpha1",
		  "clustertrainingruntimes" },
		{ TP_KIND_TRAINING_RUNTIME, "trainer.kubeflow.org", "v1alpha1", "trainingruntimes" },
		{ TP_KIND_TRAINJOB, "trainer.kubeflow.org", "v1alpha1", "trainjobs" },
		{ TP_KIND_JOBSET, "jobset.x-k8s.io", "v1alpha2", "jobsets" },
		{ TP_KIND_PRIORITY_CLASS, "scheduling.k8s.io", "v1", "priorityclasses" },
		{ TP_KIND_CONFIGMAP, "", "v1", "configmaps" },
		/* a TrainJob's namespace: its pod-security.kubernetes.io labels */
		{ TP_KIND_NAMESPACE, "", "v1", "namespaces" },
		/* the Pods' admission: read per request (webhook/cluster/resolver.h) */
		{ TP_KIND_SERVICE_ACCOUNT, "", "v1", "serviceaccounts" },
		{ TP_KIND_LIMIT_RANGE, "", "v1", "limitranges" },
		{ TP_KIND_RESOURCE_QUOTA, "", "v1", "resourcequotas" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].k == k) {
			*group = map[i].g;
			*version = map[i].v;
			*plural = map[i].p;
			return true;
		}
	return false;
}

/*
 * resolver.c — a request's lookups: the store, then the API server (see
 * resolver.h).
 */
#include "webhook/cluster/resolver.h"
#include "webhook/core/json_read.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "webhook/core/clock.h"
#include "webhook/metrics/metrics.h"

#define DEFAULT_BUDGET_MS 5000
#define MAX_NAMESPACES 64

struct tw_hold_node {
	struct tw_hold_node *next;
	tp_store_hold *hold;
};

enum { FOUND = 0, NOT_FOUND = 1, UNKNOWN = 2 };

static bool cached(const tw_cluster *c, tp_kind k)
{
	return !c->api || (c->cached & (1u << k));
}

/* The cache may answer for k: it keeps k, and k is not stale. */
static bool current(const tw_cluster *c, tp_kind k)
{
	return cached(c, k) && (!c->api || !c->fresh || tw_fresh_is(c->fresh, 1u << k));
}

/* From the store, with a hold kept until tw_resolver_done. */
static int from_store(tw_resolver *r, tp_kind k, const char *ns, const char *name,
		      const cJSON **out)
{
	struct tw_hold_node *n = tp_arena_alloc(r->arena, sizeof(*n));
	if (!n)
		return TP_ENOMEM;
	n->hold = tp_store_hold_get(r->store, k, ns, name, out);
	if (!n->hold)
		return TP_ENOTFOUND;
	n->next = r->holds;
	r->holds = n;
	return TP_OK;
}

/* How long this lookup may take: what is left of the request's budget less
 * the reserve for answering; 0 when nothing is left. */
static long budget_ms(const tw_resolver *r)
{
	if (!r->deadline_ms)
		return r->cluster->default_budget_ms ? r->cluster->default_budget_ms
						     : DEFAULT_BUDGET_MS;
	long long left = r->deadline_ms - TW_RESOLVER_RESERVE_MS - tw_mono_ms();
	return left > 0 ? (long)left : 0;
}

/* The decision runs inside the request's arena, so the parsed answer lives
 * (and dies) with the request. */
static int parse_answer(const tw_kube_resp *resp, tp_kind k, const char *path,
			const cJSON **out, char *why, size_t whylen)
{
	cJSON *obj = tw_json_object(resp->body.data, resp->body.len);
	if (tp_kind_of(obj) != k) {
		snprintf(why, whylen, "GET %s: the answer is not a %s", path, tp_kind_name(k));
		if (!tp_arena_current())
			cJSON_Delete(obj);
		return TP_EUNAVAILABLE;
	}
	*out = obj;
	return TP_OK;
}

/* GET path within what is left of the request's budget: TP_OK and resp
 * (whatever its status; the caller frees it), or TP_EUNAVAILABLE with why. */
static int ask(tw_resolver *r, const char *path, tw_kube_resp *resp, char *why, size_t whylen)
{
	tw_kube_resp_init(resp);
	long ms = budget_ms(r);
	if (ms <= 0) {
		snprintf(why, whylen, "no time was left within the request's timeout to ask the "
				      "API server");
		return TP_EUNAVAILABLE;
	}
	if (tw_kubeapi_call(r->cluster->api, "GET", path, NULL, ms, resp)) {
		snprintf(why, whylen, "%s", resp->error);
		resp->status = 0;
		return TP_EUNAVAILABLE;
	}
	return TP_OK;
}

/* *answered: the API server gave an HTTP answer (whatever its status). */
static int from_api(tw_resolver *r, tp_kind k, const char *ns, const char *name,
		    const cJSON **out, char *why, size_t whylen, bool *answered)
{
	const char *group, *version, *plural;
	char path[1024];
	if (!tw_kube_resource_of(k, &group, &version, &plural))
		return TP_ENOTFOUND;
	if (!tp_kind_is_cluster_scoped(k) && !(ns && *ns))
		ns = "default"; /* where the API server files a namespaced object without one */
	if (!tw_kube_path(path, sizeof(path), group, version, plural,
			  tp_kind_is_cluster_scoped(k) ? NULL : ns, name))
		return TP_ENOTFOUND; /* a name no object can have */
	tw_kube_resp resp;
	int rc = ask(r, path, &resp, why, whylen);
	*answered = resp.status != 0;
	if (rc) {
		/* no answer: why says so */
	} else if (resp.status == 404 && k == TP_KIND_NAMESPACE) {
		/* labels unknown, not absent (resolver.h) */
		snprintf(why, whylen, "GET %s: %s", path, resp.error);
		rc = TP_EUNAVAILABLE;
	} else if (resp.status == 404) {
		rc = TP_ENOTFOUND;
	} else if (resp.status == 200) {
		rc = parse_answer(&resp, k, path, out, why, whylen);
	} else {
		snprintf(why, whylen, "GET %s: %s", path, resp.error);
		rc = TP_EUNAVAILABLE;
	}
	tw_kube_resp_free(&resp);
	return rc;
}

/* A lookup the store answered: counted now, or when a cache-only decision
 * is kept. */
static void count_store(tw_resolver *r, tp_kind k, int result)
{
	if (!r->cache_only)
		tw_metrics_lookup(k, false, result);
	else if ((unsigned)k < TP_KIND__COUNT)
		r->counts[k][result]++;
}

/* Without an API server the store is the whole truth, but for the
 * ServiceAccounts of the Pods' namespaces: a store given none (--runtimes
 * of runtimes alone) cannot say one is missing. */
static bool given(const tw_resolver *r, tp_kind k)
{
	if (k != TP_KIND_SERVICE_ACCOUNT)
		return true;
	tp_store_rdlock(r->store);
	size_t n = tp_store_count(r->store, k);
	tp_store_unlock(r->store);
	return n > 0;
}

static int resolve(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		   char *why, size_t whylen)
{
	tw_resolver *r = ctx;
	char dummy[8];
	if (!why || !whylen) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	*out = NULL;
	if (current(r->cluster, k)) {
		int rc = from_store(r, k, ns, name, out);
		if (rc == TP_ENOTFOUND && !r->cluster->api && !given(r, k)) {
			snprintf(why, whylen, "no %s was given", tp_kind_name(k));
			return TP_EUNAVAILABLE;
		}
		if (rc != TP_ENOTFOUND || !r->cluster->api) {
			count_store(r, k, rc == TP_OK ? FOUND : NOT_FOUND);
			return rc;
		}
		/* A miss in a fresh cache may be an event that has not arrived yet:
		 * only the API server can say "not found". */
	}
	if (r->cache_only) { /* the decision is made again, by one that may ask */
		r->needs_api = true;
		snprintf(why, whylen, "the cache cannot answer for this %s", tp_kind_name(k));
		return TP_EUNAVAILABLE;
	}
	/* Not cached, a miss, or a stale kind (hit or miss: see resolver.h). */
	bool answered = false;
	int rc = from_api(r, k, ns, name, out, why, whylen, &answered);
	if (answered && cached(r->cluster, k) && !current(r->cluster, k))
		tw_fresh_answered(r->cluster->fresh);
	tw_metrics_lookup(k, true, rc == TP_OK ? FOUND : rc == TP_ENOTFOUND ? NOT_FOUND : UNKNOWN);
	return rc;
}

/* The items of a list answer, in the request's arena. */
static int list_items(const tw_kube_resp *resp, const char *path, const cJSON **out,
		      size_t max, size_t *n, char *why, size_t whylen)
{
	cJSON *list = tw_json_object(resp->body.data, resp->body.len);
	const cJSON *items = tp_get(list, "items");
	if (!cJSON_IsArray(items) && !(list && cJSON_IsNull(items))) {
		snprintf(why, whylen, "GET %s: the answer is not a list", path);
		if (!tp_arena_current())
			cJSON_Delete(list);
		return TP_EUNAVAILABLE;
	}
	*n = 0;
	for (const cJSON *it = cJSON_IsArray(items) ? items->child : NULL; it; it = it->next) {
		if (*n < max)
			out[*n] = it;
		(*n)++;
	}
	return TP_OK;
}

/* A namespace's objects of kind k, always from the API server: what is
 * listed (LimitRanges, ResourceQuotas: a quota's status.used moves with
 * every Pod) is read per request, never cached. */
static int list(void *ctx, tp_kind k, const char *ns, const cJSON **out, size_t max, size_t *n,
		char *why, size_t whylen)
{
	tw_resolver *r = ctx;
	const char *group, *version, *plural;
	char path[1024], dummy[8];
	if (!why || !whylen) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	/* Without an API server the store is the whole truth; with one, the
	 * offline commands' inputs (webhook/cli/cluster_reads.h) come first
	 * when they hold the namespace's objects of k. The trees are not held:
	 * an offline store does not change, and the server's never holds
	 * LimitRanges or ResourceQuotas. */
	tp_store_rdlock(r->store);
	*n = tp_store_list(r->store, k, ns, out, max);
	tp_store_unlock(r->store);
	if (*n || !r->cluster->api)
		return TP_OK;
	if (!tw_kube_resource_of(k, &group, &version, &plural) ||
	    !tw_kube_path(path, sizeof(path), group, version, plural, ns && *ns ? ns : "default",
			  NULL)) {
		snprintf(why, whylen, "%s cannot be listed", tp_kind_name(k));
		return TP_EUNAVAILABLE;
	}
	if (r->cache_only) {
		r->needs_api = true;
		snprintf(why, whylen, "the cache cannot list %s", plural);
		return TP_EUNAVAILABLE;
	}
	tw_kube_resp resp;
	int rc = ask(r, path, &resp, why, whylen);
	if (rc) {
		/* no answer: why says so */
	} else if (resp.status != 200) {
		snprintf(why, whylen, "GET %s: %s", path, resp.error);
		rc = TP_EUNAVAILABLE;
	} else {
		rc = list_items(&resp, path, out, max, n, why, whylen);
	}
	tw_kube_resp_free(&resp);
	tw_metrics_lookup(k, true, rc == TP_OK ? FOUND : UNKNOWN);
	return rc;
}

static size_t namespaces_of(void *ctx, tp_kind k, const char *name, const char **out,
			    size_t max)
{
	tw_resolver *r = ctx;
	const char *tmp[MAX_NAMESPACES];
	if (!r->store)
		return 0;
	if (max > MAX_NAMESPACES)
		max = MAX_NAMESPACES;
	tp_store_rdlock(r->store);
	size_t total = tp_store_namespaces_of(r->store, k, name, tmp, max);
	size_t shown = total < max ? total : max;
	for (size_t i = 0; i < shown; i++) {
		out[i] = tp_arena_strdup(r->arena, tmp[i]);
		if (!out[i])
			shown = total = i;
	}
	tp_store_unlock(r->store);
	return total;
}

void tw_resolver_init(tw_resolver *r, const tw_cluster *c, const tp_store *store,
		      tp_arena *arena, long long deadline_ms)
{
	memset(r, 0, sizeof(*r));
	r->lookup = (tp_lookup){ resolve, namespaces_of, r, list };
	r->cluster = c;
	r->store = store;
	r->arena = arena;
	r->deadline_ms = deadline_ms;
}

void tw_resolver_done(tw_resolver *r)
{
	for (struct tw_hold_node *n = r->holds; n; n = n->next)
		tp_store_hold_release(n->hold);
	r->holds = NULL;
	if (!r->cache_only || r->needs_api)
		return;
	for (int k = 0; k < TP_KIND__COUNT; k++)
		for (int res = 0; res < 3; res++)
			for (; r->counts[k][res]; r->counts[k][res]--)
				tw_metrics_lookup((tp_kind)k, false, res);
}

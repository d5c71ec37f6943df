/*
 * register_hooks.c — what the webhook configurations hold once filled: one
 * webhook per admission route of webhook/admission/routes.c, named, ruled
 * and selected as upstream Kubeflow Trainer's are (manifests/base/webhook in
 * kubeflow/trainer; its runtime hooks skip objects labelled
 * trainer.kubeflow.org/webhook-validation: disabled, its TrainJob hook does
 * not), with every field the API server would default set, so that what it
 * keeps compares equal to what is built here.
 *
 * The JobSet hook: upstream puts no label on the JobSets it creates, so
 * matchConditions (GA in Kubernetes 1.30) narrow the calls to JobSets a
 * trainer.kubeflow.org TrainJob controls; any other JobSet that reaches it
 * is answered allowed without a patch (webhook/admission/mutate_jobset.c).
 */
#include <stdio.h>
#include <string.h>

#include "webhook/admission/routes.h"
#include "webhook/cluster/register.h"

#define OWNED_BY_A_TRAINJOB                                                          \
	"has(object.metadata.ownerReferences) && "                                      \
	"object.metadata.ownerReferences.exists(r, r.kind == 'TrainJob' && "             \
	"r.apiVersion.startsWith('trainer.kubeflow.org/') && has(r.controller) && "      \
	"r.controller)"

static const struct hook {
	int kind;                 /* 0 validating, 1 mutating */
	const char *name, *path, *group, *version, *resource;
	bool v1beta1;             /* takes admission.k8s.io/v1beta1 reviews too (OME) */
	bool upstream_selector;   /* skips webhook-validation: disabled */
	const char *condition;    /* a matchCondition (NULL: none) */
} hooks[] = {
	{ 0, "validator.clustertrainingruntime.trainer.kubeflow.org",
	  "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime", "trainer.kubeflow.org",
	  "v1alpha1", "clustertrainingruntimes", false, true, NULL },
	{ 0, "validator.trainingruntime.trainer.kubeflow.org",
	  "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime", "trainer.kubeflow.org",
	  "v1alpha1", "trainingruntimes", false, true, NULL },
	{ 0, "validator.trainjob.trainer.kubeflow.org",
	  "/validate-trainer-kubeflow-org-v1alpha1-trainjob", "trainer.kubeflow.org", "v1alpha1",
	  "trainjobs", false, false, NULL },
	{ 0, "validator.trainingruntime.ome.io", "/validate-ome-io-v1beta1-trainingruntime",
	  "ome.io", "v1beta1", "trainingruntimes", true, true, NULL },
	{ 0, "validator.clustertrainingruntime.ome.io",
	  "/validate-ome-io-v1beta1-clustertrainingruntime", "ome.io", "v1beta1",
	  "clustertrainingruntimes", true, true, NULL },
	{ 1, "defaulter.trainjob.trainer.kubeflow.org",
	  "/mutate-trainer-kubeflow-org-v1alpha1-trainjob", "trainer.kubeflow.org", "v1alpha1",
	  "trainjobs", false, false, NULL },
	{ 1, "expander.jobset.trainer.kubeflow.org", "/mutate-jobset-x-k8s-io-v1alpha2-jobset",
	  "jobset.x-k8s.io", "v1alpha2", "jobsets", false, false, OWNED_BY_A_TRAINJOB },
};

/* Every construction step below goes through OK: one failed allocation
 * makes the whole webhook NULL rather than a webhook with a field missing. */
#define OK(x) (ok = ok && (x) != NULL)

static cJSON *strings(const char *const *v, size_t n)
{
	return cJSON_CreateStringArray(v, (int)n);
}

/* Take item into parent under key (an array when key is NULL); false, and
 * item freed, when that fails. */
static bool take(cJSON *parent, const char *key, cJSON *item)
{
	bool done = parent && item && (key ? cJSON_AddItemToObject(parent, key, item)
				 : cJSON_AddItemToArray(parent, item));
	if (!done)
		cJSON_Delete(item);
	return done;
}

/* {matchExpressions: [{key, operator, values}]} into sel. */
static bool expression(cJSON *sel, const char *key, const char *op, const char *const *v,
		       size_t n)
{
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddStringToObject(e, "key", key) ||
	    !cJSON_AddStringToObject(e, "operator", op) || !take(e, "values", strings(v, n))) {
		cJSON_Delete(e);
		return false;
	}
	return take(cJSON_AddArrayToObject(sel, "matchExpressions"), NULL, e);
}

static cJSON *rule_of(const struct hook *h)
{
	static const char *const ops[] = { "CREATE", "UPDATE" };
	bool ok = true;
	cJSON *r = cJSON_CreateObject();
	OK(r);
	ok = ok && take(r, "apiGroups", strings(&h->group, 1)) &&
	     take(r, "apiVersions", strings(&h->version, 1)) &&
	     take(r, "operations", strings(ops, 2)) &&
	     take(r, "resources", strings(&h->resource, 1));
	OK(cJSON_AddStringToObject(r, "scope", "*"));
	if (!ok)
		cJSON_Delete(r);
	return ok ? r : NULL;
}

static cJSON *condition_of(const struct hook *h)
{
	bool ok = true;
	cJSON *list = cJSON_CreateArray(), *c = cJSON_CreateObject();
	OK(list), OK(c);
	OK(cJSON_AddStringToObject(c, "name", "owned-by-a-trainjob"));
	OK(cJSON_AddStringToObject(c, "expression", h->condition));
	if (ok && take(list, NULL, c))
		return list;
	cJSON_Delete(c);
	cJSON_Delete(list);
	return NULL;
}

static cJSON *webhook(const tw_register_spec *s, const struct hook *h)
{
	static const char *const reviews[] = { "v1", "v1beta1" };
	static const char *const disabled[] = { "disabled" };
	bool ok = true;
	cJSON *w = cJSON_CreateObject(), *cc, *svc, *ns, *obj;
	OK(w);
	OK(cJSON_AddStringToObject(w, "name", h->name));
	ok = ok && take(w, "admissionReviewVersions", strings(reviews, h->v1beta1 ? 2 : 1));
	OK(cc = cJSON_AddObjectToObject(w, "clientConfig"));
	OK(svc = cJSON_AddObjectToObject(cc, "service"));
	OK(cJSON_AddStringToObject(svc, "namespace", s->namespace_));
	OK(cJSON_AddStringToObject(svc, "name", s->service));
	OK(cJSON_AddStringToObject(svc, "path", h->path));
	OK(cJSON_AddNumberToObject(svc, "port", 443));
	ok = ok && take(cJSON_AddArrayToObject(w, "rules"), NULL, rule_of(h));
	OK(cJSON_AddStringToObject(w, "failurePolicy", s->failure_policy ? s->failure_policy : "Fail"));
	OK(cJSON_AddStringToObject(w, "matchPolicy", "Equivalent"));
	OK(cJSON_AddStringToObject(w, "sideEffects", "None"));
	OK(cJSON_AddNumberToObject(w, "timeoutSeconds", s->timeout_s ? s->timeout_s : 5));
	OK(ns = cJSON_AddObjectToObject(w, "namespaceSelector"));
	if (ok && s->nexempt)
		ok = expression(ns, "kubernetes.io/metadata.name", "NotIn", s->exempt, s->nexempt);
	OK(obj = cJSON_AddObjectToObject(w, "objectSelector"));
	if (ok && h->upstream_selector)
		ok = expression(obj, "trainer.kubeflow.org/webhook-validation", "NotIn", disabled, 1);
	if (ok && h->condition)
		ok = take(w, "matchConditions", condition_of(h));
	if (ok && h->kind == 1)
		OK(cJSON_AddStringToObject(w, "reinvocationPolicy", "Never"));
	if (!ok) {
		cJSON_Delete(w);
		return NULL;
	}
	return w;
}

cJSON *tw_register_webhooks(const tw_register_spec *s, int kind)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; arr && i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		/* Only what the server answers: a path gone from the route table
		 * is never registered. */
		if (hooks[i].kind != kind || !tw_route_find(hooks[i].path))
			continue;
		if (!take(arr, NULL, webhook(s, &hooks[i]))) {
			cJSON_Delete(arr);
			return NULL;
		}
	}
	return arr;
}

/*
 * deploycheck_rbac_hooks.c — the RBAC of deploy/ against what the server
 * does, verb by verb; the webhook configurations as shipped (empty) and
 * what the server fills them with (webhook/cluster/register_hooks.c, from
 * the install's flags) against its route table.
 */
#include "tests/support/deploycheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/deploycheck_internal.h"
#include "webhook/cli/serve.h"
#include "webhook/admission/routes.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/register.h"

/* ------------------------------------------------------------- RBAC */

/* One rule the server needs, and whether a role grants it. */
struct need {
	const char *group;
	const char *const *resources;
	int nres;
	const char *const *verbs;
	int nverbs;
	const char *name; /* resourceNames: [name], or NULL */
	const char *const *names; /* resourceNames: these (when nnames) */
	int nnames;
};

static bool rule_is(const cJSON *r, const struct need *n)
{
	const cJSON *names = tp_get_array(r, "resourceNames");
	return dc_str_set_is(tp_get_array(r, "apiGroups"), &n->group, 1) &&
	       dc_str_set_is(tp_get_array(r, "resources"), n->resources, n->nres) &&
	       dc_str_set_is(tp_get_array(r, "verbs"), n->verbs, n->nverbs) &&
	       (n->nnames ? dc_str_set_is(names, n->names, n->nnames)
	       : n->name  ? dc_str_set_is(names, &n->name, 1)
			  : !names);
}

static const char *const read_verbs[] = { "get", "list", "watch" };
static const char *const get_only[] = { "get" };
static const char *const write_verbs[] = { "get", "update", "list", "watch" };
static const char *const follow_verbs[] = { "list", "watch" };
static const char *const list_only[] = { "list" };

/* A role's rules are exactly needs[] (any order); problems name the role. */
static void role_is(const cJSON *role, const struct need *needs, int n, const char *what,
		    dc_probs *p)
{
	if (!role) {
		dc_prob(p, "%s: not found", what);
		return;
	}
	const cJSON *rules = tp_get_array(role, "rules");
	int seen = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, rules)
	{
		bool known = false;
		for (int i = 0; i < n && !known; i++)
			known = rule_is(r, &needs[i]);
		if (!known)
			dc_prob(p, "%s: a rule beyond what the server does (groups, resources, verbs "
				   "and names must be exactly its own)", what);
		seen += known;
	}
	if (seen != n || cJSON_GetArraySize(rules) != n)
		dc_prob(p, "%s: want exactly %d rules, one per kind of access the server makes",
			what, n);
}

/* A (Cluster)RoleBinding of kind bkind binds role to the Deployment's SA. */
static void bound(const cJSON *objs, const char *bkind, const cJSON *role, dc_probs *p)
{
	const cJSON *dep = dc_find(objs, "Deployment", 0);
	const char *sa = tp_get_str(dep, "spec.template.spec.serviceAccountName");
	const cJSON *b = NULL;
	for (int i = 0; (b = dc_find(objs, bkind, i)); i++) {
		const char *ref = tp_get_str(b, "roleRef.name");
		if (ref && !strcmp(ref, tp_meta_name(role)))
			break;
	}
	if (!b) {
		dc_prob(p, "%s %s: no %s binds it", tp_get_str(role, "kind"), tp_meta_name(role),
			bkind);
		return;
	}
	const cJSON *subj = cJSON_GetArrayItem(tp_get_array(b, "subjects"), 0);
	const char *sk = tp_get_str(subj, "kind"), *sn = tp_get_str(subj, "name"),
		   *sns = tp_get_str(subj, "namespace");
	if (!sa || !sk || strcmp(sk, "ServiceAccount") || !sn || strcmp(sn, sa) || !sns ||
	    strcmp(sns, tp_meta_namespace(dep)))
		dc_prob(p, "%s %s: subject is not the Deployment's ServiceAccount %s/%s", bkind,
			tp_meta_name(b), tp_meta_namespace(dep), sa ? sa : "(none)");
	if (!strcmp(bkind, "RoleBinding") && strcmp(tp_meta_namespace(b), tp_meta_namespace(dep)))
		dc_prob(p, "RoleBinding %s: in namespace %s, not the server's", tp_meta_name(b),
			tp_meta_namespace(b));
}

const cJSON *dc_role_for(const cJSON *objs, const char *resource)
{
	const cJSON *role;
	for (int i = 0; (role = dc_find(objs, "Role", i)); i++) {
		const cJSON *r;
		cJSON_ArrayForEach(r, tp_get_array(role, "rules"))
			if (dc_str_in(tp_get_array(r, "resources"), resource))
				return role;
	}
	return NULL;
}

/* A namespaced Role's rules are needs[], it is bound and in the server's
 * namespace. */
static void namespaced_role(const cJSON *objs, const podfacts *f, const char *resource,
			    const struct need *needs, const char *what, dc_probs *p)
{
	const cJSON *role = dc_role_for(objs, resource);
	role_is(role, needs, 1, what, p);
	if (!role)
		return;
	bound(objs, "RoleBinding", role, p);
	if (strcmp(tp_meta_namespace(role), tp_meta_namespace(f->dep)))
		dc_prob(p, "Role %s: not in the server's namespace", tp_meta_name(role));
}

const cJSON *dc_cluster_role(const cJSON *objs, bool configurations)
{
	const cJSON *cr;
	for (int i = 0; (cr = dc_find(objs, "ClusterRole", i)); i++) {
		bool admission = false;
		const cJSON *r;
		cJSON_ArrayForEach(r, tp_get_array(cr, "rules"))
			admission |= dc_str_in(tp_get_array(r, "apiGroups"),
					       "admissionregistration.k8s.io");
		if (admission == configurations)
			return cr;
	}
	return NULL;
}

void dc_check_rbac(const cJSON *objs, dc_probs *p)
{
	podfacts f;
	if (!dc_quiet_pod_facts(objs, &f))
		return;
	/* The cluster's state every replica reads. */
	static const char *const runtimes[] = { "clustertrainingruntimes", "trainingruntimes" };
	static const char *const trainjobs[] = { "trainjobs" };
	static const char *const jobsets[] = { "jobsets" };
	static const char *const pcs[] = { "priorityclasses" };
	static const char *const cms[] = { "configmaps" };
	static const char *const nss[] = { "namespaces" };
	static const char *const sas[] = { "serviceaccounts" };
	static const char *const quotas[] = { "limitranges", "resourcequotas" };
	static const char *const crds[] = { "customresourcedefinitions" };
	int ncrd = 0;
	while (tw_kube_crd_names[ncrd])
		ncrd++;
	const struct need reads[] = {
		{ "trainer.kubeflow.org", runtimes, 2, read_verbs, 3, NULL },
		{ "trainer.kubeflow.org", trainjobs, 1, get_only, 1, NULL },
		{ "jobset.x-k8s.io", jobsets, 1, get_only, 1, NULL },
		{ "scheduling.k8s.io", pcs, 1, read_verbs, 3, NULL },
		{ "", cms, 1, get_only, 1, NULL },
		/* a TrainJob's namespace, for its Pod Security labels */
		{ "", nss, 1, get_only, 1, NULL },
		/* the account its Pods name, for the ServiceAccount admission plugin */
		{ "", sas, 1, get_only, 1, NULL },
		/* its namespace's LimitRanges and ResourceQuotas, listed per request */
		{ "", quotas, 2, list_only, 1, NULL },
		/* the CRDs serve --kube follows, by the names it watches them by */
		{ "apiextensions.k8s.io", crds, 1, follow_verbs, 2, NULL, tw_kube_crd_names, ncrd },
	};
	char what[256];
	const cJSON *cr = dc_cluster_role(objs, false);
	snprintf(what, sizeof(what), "ClusterRole %s", cr ? tp_meta_name(cr) : "(the reads)");
	role_is(cr, reads, (int)(sizeof(reads) / sizeof(reads[0])), what, p);
	if (cr)
		bound(objs, "ClusterRoleBinding", cr, p);
	/* Both modes: the two configurations by name (filled, kept, emptied;
	 * the caBundle), and the Service's EndpointSlices (is a replica ready?). */
	static const char *const vwc[] = { "validatingwebhookconfigurations" };
	static const char *const mwc[] = { "mutatingwebhookconfigurations" };
	static const char *const eps[] = { "endpointslices" };
	const struct need cfg_need[] = {
		{ "admissionregistration.k8s.io", vwc, 1, write_verbs, 4, f.validating },
		{ "admissionregistration.k8s.io", mwc, 1, write_verbs, 4, f.mutating },
	};
	const struct need eps_need[] = { { "discovery.k8s.io", eps, 1, list_only, 1, NULL } };
	const cJSON *cfgs = dc_cluster_role(objs, true);
	snprintf(what, sizeof(what), "ClusterRole %s",
		 cfgs ? tp_meta_name(cfgs) : "(the webhook configurations')");
	role_is(cfgs, cfg_need, 2, what, p);
	if (cfgs)
		bound(objs, "ClusterRoleBinding", cfgs, p);
	namespaced_role(objs, &f, "endpointslices", eps_need, "Role (the Service's endpoints)", p);
	int want_cr = 2, want_roles = 1;
	if (f.managed) { /* and the Secret, by name */
		static const char *const secrets[] = { "secrets" };
		const struct need sec_need[] = { { "", secrets, 1, write_verbs, 4, f.secret } };
		namespaced_role(objs, &f, "secrets", sec_need, "Role (the certificate Secret)", p);
		want_roles = 2;
	}
	if (dc_count(objs, "ClusterRole") != want_cr || dc_count(objs, "Role") != want_roles)
		dc_prob(p, "RBAC: want %d ClusterRole(s) and %d Role(s), found %d and %d", want_cr,
			want_roles, dc_count(objs, "ClusterRole"), dc_count(objs, "Role"));
	const char *sa = tp_get_str(f.dep, "spec.template.spec.serviceAccountName");
	if (!dc_find_named(objs, "ServiceAccount", sa))
		dc_prob(p, "no ServiceAccount %s", sa ? sa : "(none)");
}

/* ---------------------------------------------------------- webhooks */

/* The tp_kind of an admission rule (group, version, plural resource). */
static tp_kind kind_of_rule(const char *group, const char *version, const char *resource)
{
	static const struct {
		const char *plural, *kind;
	} kinds[] = {
		{ "trainjobs", "TrainJob" },
		{ "trainingruntimes", "TrainingRuntime" },
		{ "clustertrainingruntimes", "ClusterTrainingRuntime" },
		{ "jobsets", "JobSet" },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].plural, resource))
			return tw_kind_of_gvk(group, version, kinds[i].kind);
	return TP_KIND_UNKNOWN;
}

static bool is_runtime_kind(tp_kind k)
{
	return k == TP_KIND_TRAINING_RUNTIME || k == TP_KIND_CLUSTER_TRAINING_RUNTIME ||
	       k == TP_KIND_OME_TRAINING_RUNTIME || k == TP_KIND_OME_CLUSTER_TRAINING_RUNTIME;
}

static bool has_upstream_selector(const cJSON *hook)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, tp_get_array(hook, "objectSelector.matchExpressions"))
	{
		const char *k = tp_get_str(e, "key"), *op = tp_get_str(e, "operator");
		const cJSON *vals = tp_get_array(e, "values");
		if (k && !strcmp(k, "trainer.kubeflow.org/webhook-validation") && op &&
		    !strcmp(op, "NotIn") && dc_str_set_is(vals, (const char *const[]){ "disabled" }, 1))
			return true;
	}
	return false;
}

static void check_rules(const cJSON *hook, const tw_route *r, const char *name, dc_probs *p)
{
	const cJSON *rules = tp_get_array(hook, "rules");
	if (!rules || !cJSON_GetArraySize(rules))
		dc_prob(p, "%s: no rules", name);
	const cJSON *rule;
	cJSON_ArrayForEach(rule, rules)
	{
		const cJSON *g, *v, *res;
		cJSON_ArrayForEach(g, tp_get_array(rule, "apiGroups"))
			cJSON_ArrayForEach(v, tp_get_array(rule, "apiVersions"))
				cJSON_ArrayForEach(res, tp_get_array(rule, "resources"))
		{
			tp_kind k = kind_of_rule(cJSON_GetStringValue(g), cJSON_GetStringValue(v),
						 cJSON_GetStringValue(res));
			if (k != r->kind)
				dc_prob(p, "%s: rule %s/%s %s is not the kind route %s answers (%s)",
					name, cJSON_GetStringValue(g), cJSON_GetStringValue(v),
					cJSON_GetStringValue(res), r->path, tp_kind_name(r->kind));
		}
		static const char *const ops[] = { "CREATE", "UPDATE" };
		if (!dc_str_set_is(tp_get_array(rule, "operations"), ops, 2))
			dc_prob(p, "%s: operations must be CREATE and UPDATE", name);
	}
}

static void check_hook_settings(const cJSON *hook, const tw_route *r, const char *name,
				dc_probs *p)
{
	const char *fp = tp_get_str(hook, "failurePolicy"), *se = tp_get_str(hook, "sideEffects"),
		   *mp = tp_get_str(hook, "matchPolicy");
	if (!fp || strcmp(fp, "Fail"))
		dc_prob(p, "%s: failurePolicy %s, want Fail", name, fp ? fp : "(default)");
	if (!se || strcmp(se, "None"))
		dc_prob(p, "%s: sideEffects %s, want None", name, se ? se : "(none)");
	if (!mp || strcmp(mp, "Equivalent"))
		dc_prob(p, "%s: matchPolicy %s, want Equivalent", name, mp ? mp : "(default)");
	long long to = 0;
	if (!tp_get_int(hook, "timeoutSeconds", &to) || to != 5)
		dc_prob(p, "%s: timeoutSeconds %lld, want 5", name, to);
	const cJSON *arv = tp_get_array(hook, "admissionReviewVersions");
	const char *first = cJSON_GetStringValue(cJSON_GetArrayItem(arv, 0));
	bool ome = r->kind == TP_KIND_OME_TRAINING_RUNTIME ||
		   r->kind == TP_KIND_OME_CLUSTER_TRAINING_RUNTIME;
	if (!first || strcmp(first, "v1") || (!ome && cJSON_GetArraySize(arv) != 1) ||
	    (ome && cJSON_GetArraySize(arv) > 2))
		dc_prob(p, "%s: admissionReviewVersions must be [v1]%s", name,
			ome ? " or [v1, v1beta1]" : "");
	if (is_runtime_kind(r->kind) != has_upstream_selector(hook))
		dc_prob(p, "%s: the webhook-validation NotIn [disabled] objectSelector belongs on "
			   "the runtime hooks only", name);
	if (r->type == TW_ROUTE_MUTATE_JOBSET) {
		const cJSON *mc = cJSON_GetArrayItem(tp_get_array(hook, "matchConditions"), 0);
		const char *expr = tp_get_str(mc, "expression");
		if (!expr || !strstr(expr, "ownerReferences") || !strstr(expr, "'TrainJob'"))
			dc_prob(p, "%s: want a matchCondition on an owning TrainJob", name);
	}
}

static void check_hook(const cJSON *objs, const cJSON *hook, bool mutating, int *covered,
		       dc_probs *p)
{
	const char *name = tp_get_str(hook, "name");
	name = name ? name : "(unnamed)";
	const char *path = tp_get_str(hook, "clientConfig.service.path");
	const tw_route *r = tw_route_find(path);
	if (!r) {
		dc_prob(p, "%s: path %s is not a route of the server", name, path ? path : "(none)");
		return;
	}
	bool route_mut = r->type == TW_ROUTE_MUTATE_TRAINJOB || r->type == TW_ROUTE_MUTATE_JOBSET;
	if (r->type != TW_ROUTE_VALIDATE && !route_mut)
		dc_prob(p, "%s: %s is not an admission route", name, path);
	else if (route_mut != mutating)
		dc_prob(p, "%s: %s is a %s route in a %s configuration", name, path,
			route_mut ? "mutating" : "validating", mutating ? "mutating" : "validating");
	covered[r - tw_routes]++;
	check_rules(hook, r, name, p);
	check_hook_settings(hook, r, name, p);
	/* the Service it calls is ours */
	const cJSON *svc = dc_find(objs, "Service", 0);
	const char *sn = tp_get_str(hook, "clientConfig.service.name");
	const char *sns = tp_get_str(hook, "clientConfig.service.namespace");
	long long port = 443;
	tp_get_int(hook, "clientConfig.service.port", &port);
	if (!svc || !sn || strcmp(sn, tp_meta_name(svc)) || !sns ||
	    strcmp(sns, tp_meta_namespace(svc)))
		dc_prob(p, "%s: calls Service %s/%s, not the webhook's %s/%s", name, sns ? sns : "",
			sn ? sn : "", tp_meta_namespace(svc), tp_meta_name(svc));
	if (port != 443)
		dc_prob(p, "%s: Service port %lld, want 443", name, port);
	if (tp_get_str(hook, "clientConfig.url"))
		dc_prob(p, "%s: clientConfig.url instead of the Service", name);
}

void dc_check_hooks(const cJSON *objs, const cJSON *const hooks[2], dc_probs *p)
{
	size_t nroutes = 0;
	while (tw_routes[nroutes].path)
		nroutes++;
	int *covered = calloc(nroutes + 1, sizeof(int));
	for (int m = 0; m < 2; m++) {
		const cJSON *hook;
		cJSON_ArrayForEach(hook, hooks[m])
			check_hook(objs, hook, m == 1, covered, p);
	}
	for (size_t i = 0; i < nroutes; i++) {
		tw_route_type t = tw_routes[i].type;
		bool admission = t == TW_ROUTE_VALIDATE || t == TW_ROUTE_MUTATE_TRAINJOB ||
				 t == TW_ROUTE_MUTATE_JOBSET;
		if (admission && covered[i] != 1)
			dc_prob(p, "route %s: registered %d times, want once", tw_routes[i].path,
				covered[i]);
	}
	free(covered);
}

/* The configurations as shipped: one of each, named as the flags name them,
 * with no webhook in them. */
static void check_shipped(const cJSON *objs, const podfacts *f, dc_probs *p)
{
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	const char *names[] = { f->validating, f->mutating };
	const char *flags[] = { "--validating-webhook", "--mutating-webhook" };
	for (int m = 0; m < 2; m++) {
		if (dc_count(objs, kinds[m]) != 1)
			dc_prob(p, "want exactly one %s, found %d", kinds[m], dc_count(objs, kinds[m]));
		const cJSON *cfg = dc_find_named(objs, kinds[m], names[m]);
		if (!cfg)
			dc_prob(p, "%s %s (%s) not found", kinds[m], names[m], flags[m]);
		const cJSON *hook;
		cJSON_ArrayForEach(hook, tp_get_array(cfg, "webhooks"))
			dc_prob(p, "%s %s ships webhook %s: while no replica is ready it refuses "
				   "every write it matches (failurePolicy Fail); ship the "
				   "configuration empty, the server fills it (--register-webhooks)",
				kinds[m], names[m], tp_get_str(hook, "name"));
	}
}

void dc_check_webhooks(const cJSON *objs, dc_probs *p)
{
	podfacts f;
	if (!dc_quiet_pod_facts(objs, &f))
		return;
	check_shipped(objs, &f, p);
	if (!f.registers)
		dc_prob(p, "container: --register-webhooks not passed: the configurations are "
			   "shipped empty and nothing would fill them");
	/* What the server fills them with, from its flags. */
	tw_register_spec spec = { .namespace_ = tp_meta_namespace(f.dep), .service = f.service,
				  .failure_policy = f.failure_policy, .timeout_s = f.timeout_s,
				  .exempt = f.exempt, .nexempt = f.nexempt };
	cJSON *hooks[2] = { tw_register_webhooks(&spec, 0), tw_register_webhooks(&spec, 1) };
	dc_check_hooks(objs, (const cJSON *const *)hooks, p);
	cJSON_Delete(hooks[0]);
	cJSON_Delete(hooks[1]);
}

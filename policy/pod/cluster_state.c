/*
 * pod/cluster_state.c — the strict profile's refusals of a TrainJob's Pods
 * that depend on objects in the cluster, decided as kube-apiserver's
 * admission plugins will decide for each Pod the Job controller creates:
 *   - ServiceAccount (plugin/pkg/admission/serviceaccount/admission.go):
 *     the Pod's serviceAccountName must name a ServiceAccount of its
 *     namespace, or the Pod is forbidden ("error looking up service account
 *     NS/NAME: serviceaccount \"NAME\" not found"), whatever automount says:
 *     Admit looks the account up before it reads automountServiceAccountToken.
 *     "default" (and an empty name, which becomes it) is not looked up: the
 *     ServiceAccount controller makes it in every namespace, and the plugin
 *     waits for it (ten tries) for that reason.
 *   - Priority (plugin/pkg/admission/priority/admission.go): a
 *     priorityClassName must name a PriorityClass ("no PriorityClass with
 *     name X was found"); the Pod's priority is then the class's value,
 *     which JobSet's Pod webhook (pinned 08dfbdfd, pkg/webhooks/pod_webhook.go
 *     Default) copies into the label jobset.sigs.k8s.io/priority: a negative
 *     value is no valid label value, and every Pod is invalid
 *     (kubernetes-sigs/jobset#1291, merged after v0.12, not released).
 *     With Volcano's podGroupPolicy, plugins/volcano.c says a missing class
 *     already.
 *   - LimitRanger and ResourceQuota: pod/cluster_limits.c.
 * Each object is looked up through tp_lookup_get (the server: its cache or
 * the API server; offline: the inputs, or --kubeconfig's cluster), once per
 * name. A finding is shown at the field that set the name: the runtime's
 * template when its own replicated job names it, else spec.runtimePatches.
 * A lookup nobody could answer is a warning that says what was not checked,
 * never a verdict. Without a lookup, a kind the store holds nothing of was
 * not given (validate over TrainJobs alone, without --kubeconfig): it is
 * not checked, silently, as an offline run without Namespaces leaves Pod
 * Security to the defaults; with one ServiceAccount among the inputs, the
 * inputs are the whole truth again.
 */
#include "policy/plugins/plugin.h"
#include "policy/pod/pod.h"
#include "policy/runtime/runtime.h"
#include "policy/store/store.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_SA "default"
#define JOBSET_PRIORITY_LABEL "jobset.sigs.k8s.io/priority"
#define JOBSET_EXCLUSIVE "alpha.jobset.sigs.k8s.io/exclusive-topology"
#define JOBSET_NODE_SELECTOR "alpha.jobset.sigs.k8s.io/node-selector"

/* One lookup's answer, kept for every job that names the same object. */
typedef struct answer {
	int rc;
	const cJSON *obj;
	char why[256];
} answer;

typedef struct base_job {
	const cJSON *job;
	int index;
} base_job;

typedef struct cs_run {
	const tp_tj_ctx *ctx;
	const char *ns;     /* the TrainJob's, "default" when it has none */
	/* made for the first name looked up: most TrainJobs' Pods name no
	 * ServiceAccount but the default and no PriorityClass, and making and
	 * freeing it cost 290 instructions of make bench's TrainJob review
	 * (callgrind) */
	tp_arena *arena;
	tp_nameset answers; /* "<kind>/<name>" -> answer */
	tp_nameset base_jobs;
	bool base_filed;
	int rc;
} cs_run;

/* r's arena and the tables in it, made once. */
static int arena_of(cs_run *r)
{
	if (r->arena)
		return TP_OK;
	if (tp_arena_new(&r->arena, 0))
		return TP_ENOMEM;
	tp__nameset_init(&r->answers, r->arena);
	tp__nameset_init(&r->base_jobs, r->arena);
	return TP_OK;
}

/* plugins/volcano.c looks the PriorityClasses up for Volcano's
 * podGroupPolicy. */
static bool volcano(const cs_run *r)
{
	return tp_get_object(r->ctx->pgp, "volcano") != NULL;
}

/* ------------------------------------------------------------ lookups */

/* Without a lookup the store answers; a kind it holds nothing of was not
 * given, so its absence says nothing. */
static bool given(const tp_options *opt, tp_kind k)
{
	return opt->lookup || tp_store_count(opt->store, k) > 0;
}

static const answer *look(cs_run *r, tp_kind k, const char *name)
{
	if (arena_of(r))
		return NULL;
	const char *key = tp_arena_printf(r->arena, "%d/%s", (int)k, name);
	if (!key)
		return NULL;
	const answer *seen = tp__nameset_get(&r->answers, key);
	if (seen)
		return seen;
	answer *a = tp_arena_alloc(r->arena, sizeof(*a));
	if (!a)
		return NULL;
	a->rc = tp_lookup_get(r->ctx->opt, k, r->ns, name, &a->obj, a->why, sizeof(a->why));
	if (a->rc == TP_ENOTFOUND && !given(r->ctx->opt, k))
		a->rc = TP_EUNSUPPORTED; /* not checked, and not said on every TrainJob */
	return tp__nameset_put(&r->answers, key, a) ? NULL : a;
}

/* ------------------------------------------------------------ origins */

/* The runtime's own replicated job named name (its place in ctx->base),
 * or NULL. */
static const base_job *base_of(cs_run *r, const char *name)
{
	if (!r->base_filed) {
		const cJSON *jobs = tp_get_array(r->ctx->base, "spec.replicatedJobs");
		int i = 0;
		for (const cJSON *j = jobs ? jobs->child : NULL; j; j = j->next, i++) {
			base_job *b = tp_arena_alloc(r->arena, sizeof(*b));
			if (!b || tp__nameset_put(&r->base_jobs, tp__mstr(j, "name"), b)) {
				r->rc = TP_ENOMEM;
				return NULL;
			}
			*b = (base_job){ j, i };
		}
		r->base_filed = true;
	}
	return name ? tp__nameset_get(&r->base_jobs, name) : NULL;
}

static bool is(const char *s, const char *want)
{
	return s && want && !strcmp(s, want);
}

/* The Pod spec's member as the API server reads it; serviceAccountName
 * falls back to the deprecated serviceAccount (pkg/apis/core/v1
 * conversion). *member: which one held it. */
static const char *pod_name_of(const cJSON *spec, const char *member, const char **held)
{
	*held = member;
	const char *v = tp__mstr(spec, member);
	if ((!v || !*v) && !strcmp(member, "serviceAccountName")) {
		*held = "serviceAccount";
		v = tp__mstr(spec, "serviceAccount");
	}
	return v;
}

static const char *kind_of(const cs_run *r)
{
	tp_kind k = tp_kind_of(r->ctx->runtime);
	return k == TP_KIND_UNKNOWN ? "runtime" : tp_kind_name(k);
}

/* f at the field that set job rj's Pod spec member to value: the runtime's
 * template when its own job holds that value, else the runtimePatches.
 * what: how the Pods fare ("forbidden", "invalid"). */
static int report_at(cs_run *r, const cJSON *rj, const char *member, const char *value,
		     const tp_pod_finding *f, const char *what)
{
	const tp_tj_ctx *ctx = r->ctx;
	const char *rjob = tp__mstr(rj, "name");
	const char *tj = tp_meta_name(ctx->job);
	const base_job *b = base_of(r, rjob);
	const char *held;
	if (r->rc)
		return r->rc;
	if (b && is(pod_name_of(tp__tj_pod_spec(b->job), member, &held), value)) {
		const char *path = tp_arena_printf(
			r->arena, "spec.template.spec.replicatedJobs[%d].template.spec.template.spec.%s",
			b->index, held);
		return path ? tp__pod_report(ctx->res, path, f,
					     "in %s \"%s\" (replicated job \"%s\"), so the Pods of "
					     "Job.batch \"%s-%s-0\" would be %s in namespace \"%s\"",
					     kind_of(r), tp_meta_name(ctx->runtime), rjob ? rjob : "",
					     tj, rjob ? rjob : "", what, r->ns)
			    : TP_ENOMEM;
	}
	return tp__pod_report(ctx->res, "spec.runtimePatches", f,
			      "the patched template gives replicated job \"%s\" %s \"%s\", so the "
			      "Pods of Job.batch \"%s-%s-0\" would be %s in namespace \"%s\"",
			      rjob ? rjob : "", member, value, tj, rjob ? rjob : "", what, r->ns);
}

/* What was not checked, at the TrainJob's namespace. */
static int not_checked(cs_run *r, const char *what, const char *rjob, tp_kind k,
		       const char *name, const char *why)
{
	return tp_result_warn_at(r->ctx->res, "metadata.namespace",
				 "%s of the Pods of replicated job \"%s\" was not checked: %s \"%s\" "
				 "could not be looked up: %s",
				 what, rjob ? rjob : "", tp__resource_name(k), name,
				 *why ? why : tp_strerror(TP_EUNAVAILABLE));
}

/* ------------------------------------------------------------ checks */

/* rj's Pod spec: spec. */
static int check_service_account(cs_run *r, const cJSON *rj, const cJSON *spec)
{
	const char *member;
	const char *sa = pod_name_of(spec, "serviceAccountName", &member);
	if (!sa || !*sa || !strcmp(sa, DEFAULT_SA))
		return TP_OK;
	const answer *a = look(r, TP_KIND_SERVICE_ACCOUNT, sa);
	if (!a)
		return TP_ENOMEM;
	const char *rjob = tp__mstr(rj, "name");
	if (a->rc == TP_EUNAVAILABLE) {
		const char *what = tp_arena_printf(r->arena, "ServiceAccount \"%s\"", sa);
		return what ? not_checked(r, what, rjob, TP_KIND_SERVICE_ACCOUNT, sa, a->why)
			    : TP_ENOMEM;
	}
	if (a->rc != TP_ENOTFOUND)
		return a->rc == TP_ENOMEM ? TP_ENOMEM : TP_OK;
	const char *detail = tp_arena_printf(r->arena,
					     "error looking up service account %s/%s: "
					     "serviceaccount \"%s\" not found",
					     r->ns, sa, sa);
	const char *hint = tp_arena_printf(r->arena,
					   "create it first (kubectl create serviceaccount %s -n %s), "
					   "or name an existing one (kubectl get serviceaccounts -n %s)",
					   sa, r->ns, r->ns);
	if (!detail || !hint)
		return TP_ENOMEM;
	tp_pod_finding f = { .type = TP_FIELD_FORBIDDEN, .detail = detail, .hint = hint };
	return report_at(r, rj, "serviceAccountName", sa, &f, "forbidden");
}

/* Does JobSet's Pod webhook leave the priority label out of this job's
 * Pods? It does when exclusive placement uses the node selector strategy
 * (jobset_controller.go copies both annotations to the Pods, from the
 * JobSet or from the replicated job). */
static bool node_selector_strategy(const tp_tj_ctx *ctx, const cJSON *rj)
{
	const cJSON *js = tp_get_object(ctx->tmpl, "metadata.annotations");
	const cJSON *jt = tp_get_object(rj, "template.metadata.annotations");
	const cJSON *pod = tp_get_object(rj, "template.spec.template.metadata.annotations");
	return (tp_member(js, JOBSET_EXCLUSIVE) && tp_member(js, JOBSET_NODE_SELECTOR)) ||
	       (tp_member(jt, JOBSET_EXCLUSIVE) && tp_member(jt, JOBSET_NODE_SELECTOR)) ||
	       tp_member(pod, JOBSET_NODE_SELECTOR);
}

/* A class's value as JobSet's label: a negative one is no label value. */
static int check_priority_value(cs_run *r, const cJSON *rj, const char *pc,
				const cJSON *cls)
{
	long long value;
	if (!tp_get_int(cls, "value", &value) || value >= 0 || node_selector_strategy(r->ctx, rj))
		return TP_OK;
	const char *text = tp_arena_printf(r->arena, "%lld", value);
	const char *msg = text ? tp__check_label_value(text) : NULL;
	if (!text)
		return TP_ENOMEM;
	if (!msg)
		return TP_OK;
	const char *detail = tp_arena_printf(
		r->arena,
		"%s: PriorityClass \"%s\" has value %lld, which JobSet's Pod webhook copies into "
		"the label " JOBSET_PRIORITY_LABEL " of every Pod (kubernetes-sigs/jobset#1291, "
		"fixed after JobSet v0.12)",
		msg, pc, value);
	const char *quoted = tp_result_quote(r->ctx->res, text);
	if (!detail || !quoted)
		return TP_ENOMEM;
	tp_pod_finding f = { .type = TP_FIELD_INVALID, .value = quoted, .detail = detail,
			     .hint = "use a PriorityClass whose value is 0 or more" };
	return report_at(r, rj, "priorityClassName", pc, &f, "invalid at metadata.labels");
}

static int check_priority_class(cs_run *r, const cJSON *rj, const cJSON *spec)
{
	const char *member;
	const char *pc = pod_name_of(spec, "priorityClassName", &member);
	if (!pc || !*pc)
		return TP_OK; /* the global default's, if any: not looked up */
	const answer *a = look(r, TP_KIND_PRIORITY_CLASS, pc);
	if (!a)
		return TP_ENOMEM;
	const char *rjob = tp__mstr(rj, "name");
	if (a->rc == TP_EUNAVAILABLE) {
		if (volcano(r))
			return TP_OK; /* plugins/volcano.c has said so */
		const char *what = tp_arena_printf(r->arena, "PriorityClass \"%s\"", pc);
		return what ? not_checked(r, what, rjob, TP_KIND_PRIORITY_CLASS, pc, a->why)
			    : TP_ENOMEM;
	}
	if (a->rc == TP_OK)
		return check_priority_value(r, rj, pc, a->obj);
	if (a->rc != TP_ENOTFOUND || volcano(r))
		return a->rc == TP_ENOMEM ? TP_ENOMEM : TP_OK;
	const char *detail = tp_arena_printf(r->arena, "no PriorityClass with name %s was found", pc);
	if (!detail)
		return TP_ENOMEM;
	tp_pod_finding f = {
		.type = TP_FIELD_FORBIDDEN, .detail = detail,
		.hint = "create the PriorityClass first, or name an existing one (kubectl get "
			"priorityclasses)"
	};
	return report_at(r, rj, "priorityClassName", pc, &f, "forbidden");
}

int tp__pod_cluster_state(const tp_tj_ctx *ctx, const tp_pod_checked *checked, size_t n)
{
	if (!tp_strict(ctx->opt) || !ctx->tmpl)
		return TP_OK;
	cs_run r = { .ctx = ctx, .ns = *ctx->ns ? ctx->ns : "default" };
	int rc = TP_OK;
	const cJSON *jobs = ctx->jobs;
	for (const cJSON *j = jobs ? jobs->child : NULL; j && !rc; j = j->next) {
		if (!cJSON_IsObject(j))
			continue;
		const cJSON *spec = tp__tj_pod_spec(j); /* once for both */
		rc = check_service_account(&r, j, spec);
		if (!rc)
			rc = check_priority_class(&r, j, spec);
	}
	if (!rc)
		rc = tp__pod_cluster_limits(ctx, r.ns, checked, n);
	tp_arena_free(r.arena);
	return rc ? rc : r.rc;
}

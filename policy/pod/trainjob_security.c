/*
 * pod/trainjob_security.c — Pod Security Admission for the Pods a TrainJob
 * will make, decided as pod-security-admission decides for each Pod
 * (admission.go EvaluatePod): the namespace's enforce level denies, with its
 * "violates PodSecurity ..." text; warn allows with its "would violate
 * PodSecurity ..." warning (none when the answer is a denial); audit adds an
 * audit annotation. The namespace is looked up like any other object
 * (opt->lookup, else the store); one that cannot be read is a warning that
 * says what was not checked, never a verdict. A Namespace that does not
 * exist has no labels: the defaults (opt->pod_security, else privileged).
 */
#include "policy/pod/pod.h"
#include "policy/runtime/runtime.h"

#include <string.h>

typedef struct psa_run {
	const tp_tj_ctx *ctx;
	tp_psa_policy pol;
	const char *ns;
	tp_arena *arena;
	tp_buf audit;    /* the annotation's text */
	tp_buf warnings; /* held back until no job is denied */
	bool denied;
	/* the runtime's own jobs by name, filed at the first denial: a lookup
	 * by a scan for each denied job made a wide runtime O(jobs^2) */
	tp_nameset base_jobs;
	bool base_filed;
	int base_count;
} psa_run;

typedef struct base_job {
	const cJSON *pod;
	int index;
} base_job;

static bool same(const tp_psa_lv *a, const tp_psa_lv *b)
{
	return (a->level == TP_PSA_PRIVILEGED && b->level == TP_PSA_PRIVILEGED) ||
	       (a->level == b->level && a->minor == b->minor);
}

/* Evaluate lv on a Pod template into detail; *allowed. */
static int eval(psa_run *r, const tp_psa_lv *lv, const cJSON *pod, tp_buf *detail, bool *allowed)
{
	tp_buf_reset(detail);
	return tp__psa_evaluate(lv->level, lv->minor, tp_member(pod, "metadata"), tp_member(pod, "spec"),
				r->arena, detail, allowed);
}

/* The runtime's own template for a replicated job name (the first of that
 * name), for telling a violation the runtimePatches brought in; *index its
 * place, or the number of jobs when there is none. TP_OK or TP_ENOMEM. */
static int base_pod(psa_run *r, const char *name, const cJSON **pod, int *index)
{
	if (!r->base_filed) {
		tp__nameset_init(&r->base_jobs, r->arena);
		const cJSON *jobs = tp_get_array(r->ctx->base, "spec.replicatedJobs");
		for (const cJSON *j = jobs ? jobs->child : NULL; j; j = j->next, r->base_count++) {
			base_job *b = tp_arena_alloc(r->arena, sizeof(*b));
			if (!b)
				return TP_ENOMEM;
			*b = (base_job){ tp_get(j, "template.spec.template"), r->base_count };
			if (tp__nameset_put(&r->base_jobs, tp__mstr(j, "name"), b))
				return TP_ENOMEM;
		}
		r->base_filed = true;
	}
	const base_job *b = tp__nameset_get(&r->base_jobs, name);
	*pod = b ? b->pod : NULL;
	*index = b ? b->index : r->base_count;
	return TP_OK;
}

/* Does the enforce level allow pod? */
static int enforce_allows(psa_run *r, const cJSON *pod, bool *ok)
{
	tp_buf d = TP_BUF_INIT(0);
	int rc = eval(r, &r->pol.enforce, pod, &d, ok);
	tp_buf_free(&d);
	return rc;
}

/* What the denial adds of a plugin's part the detail names, or "". */
static const char *part_note(psa_run *r, const tp_pod_checked *c, const char *detail)
{
	if (!c || !c->psa_container || !c->psa_note)
		return "";
	const char *quoted = tp_arena_printf(r->arena, "\"%s\"", c->psa_container);
	return quoted && strstr(detail, quoted) ? tp_arena_printf(r->arena, "; %s", c->psa_note)
						: "";
}

/* The denial of bjob's Pods (c: as checked, or NULL), at the runtimePatches
 * when they brought the violation (the runtime's own Pods pass and the
 * patched ones do not), else at the namespace, naming the runtime's
 * template, or only the namespace when the plugins' parts alone violate
 * the level (the Pods without them pass). */
static int deny(psa_run *r, const cJSON *bjob, const tp_pod_checked *c, const char *level,
		const char *detail)
{
	const tp_tj_ctx *ctx = r->ctx;
	const char *rjob = tp__mstr(bjob, "name");
	int ri;
	const cJSON *base;
	int rc = base_pod(r, rjob, &base, &ri);
	if (rc)
		return rc;
	/* the Pods without the plugins' parts: do they pass? */
	bool own_ok = false, patched = false;
	if (c && c->copy && (rc = enforce_allows(r, tp_get(bjob, "template.spec.template"), &own_ok)))
		return rc;
	if (ctx->tmpl != ctx->base && base && !own_ok && (rc = enforce_allows(r, base, &patched)))
		return rc;
	const char *tj = tp_meta_name(ctx->job);
	const char *note = part_note(r, c, detail);
	tp_kind k = tp_kind_of(ctx->runtime);
	const char *change =
		own_ok ? ""
		: patched
			? "; change the runtimePatches as each check says, or"
			: tp_arena_printf(r->arena,
					  "; change the Pod template of %s \"%s\" "
					  "(spec.template.spec.replicatedJobs[%d].template.spec."
					  "template) as each check says, or",
					  k == TP_KIND_UNKNOWN ? "runtime" : tp_kind_name(k),
					  tp_meta_name(ctx->runtime), ri);
	return tp_result_add(
		ctx->res, TP_FIELD_FORBIDDEN, patched ? "spec.runtimePatches" : "metadata.namespace",
		NULL,
		"violates PodSecurity \"%s\": %s: Pods of replicated job \"%s\" (Job.batch "
		"\"%s-%s-0\") would be forbidden in namespace \"%s\"%s%s%s use a namespace whose "
		"pod-security.kubernetes.io/enforce level admits them",
		level, detail, rjob ? rjob : "", tj, rjob ? rjob : "", r->ns, note ? note : "",
		change ? change : "", own_ok ? ";" : "");
}

typedef struct mode {
	const tp_psa_lv *lv;
	tp_buf detail;
	bool ok;
} mode;

/* m's verdict: that of an earlier mode with the same level and version
 * (EvaluatePod caches them so), else evaluated. */
static int evaluate(psa_run *r, mode *m, const mode *earlier, int n, const cJSON *pod)
{
	for (int i = 0; i < n; i++)
		if (same(m->lv, earlier[i].lv)) {
			m->ok = earlier[i].ok;
			return earlier[i].ok ? TP_OK : tp_buf_adds(&m->detail, earlier[i].detail.data);
		}
	return eval(r, m->lv, pod, &m->detail, &m->ok);
}

/* One replicated job (c: as checked, or NULL): enforce denies, audit
 * annotates, warn warns. */
static int one_job(psa_run *r, const cJSON *bjob, const tp_pod_checked *c)
{
	const cJSON *pod = c && c->copy ? tp_get(c->copy, "spec.template")
					: tp_get(bjob, "template.spec.template");
	const char *rjob = tp__mstr(bjob, "name");
	mode m[3] = { { &r->pol.enforce, TP_BUF_INIT(0), true },
		      { &r->pol.audit, TP_BUF_INIT(0), true },
		      { &r->pol.warn, TP_BUF_INIT(0), true } };
	char lv[64];
	int rc = TP_OK;
	for (int i = 0; i < 3 && !rc; i++)
		rc = evaluate(r, &m[i], m, i, pod);
	if (!rc && !m[0].ok && !(rc = tp_psa_format(m[0].lv, lv, sizeof(lv)))) {
		rc = deny(r, bjob, c, lv, m[0].detail.data);
		r->denied = true;
	}
	if (!rc && !m[1].ok && !(rc = tp_psa_format(m[1].lv, lv, sizeof(lv))))
		rc = tp_buf_addf(&r->audit, "%swould violate PodSecurity \"%s\": %s (replicated job "
				 "\"%s\")", r->audit.len ? "; " : "", lv, m[1].detail.data,
				 rjob ? rjob : "");
	if (!rc && !m[2].ok && !(rc = tp_psa_format(m[2].lv, lv, sizeof(lv))))
		rc = tp_buf_addf(&r->warnings, "would violate PodSecurity \"%s\": %s (replicated job "
				 "\"%s\")", lv, m[2].detail.data, rjob ? rjob : "");
	if (!rc && !m[2].ok)
		rc = tp_buf_add(&r->warnings, "", 1); /* the separator */
	for (int i = 0; i < 3; i++)
		tp_buf_free(&m[i].detail);
	return rc;
}

/* The warnings held back, NUL-separated in r->warnings. */
static int flush_warnings(psa_run *r)
{
	int rc = TP_OK;
	for (size_t off = 0; !rc && off < r->warnings.len; off += strlen(r->warnings.data + off) + 1)
		rc = tp_result_warn_at(r->ctx->res, "metadata.namespace", "%s", r->warnings.data + off);
	return rc;
}

/* The namespace's policy: TP_OK and *known, or not known (a warning says
 * why). */
static int policy(psa_run *r, bool *known)
{
	const tp_tj_ctx *ctx = r->ctx;
	tp_psa_policy defaults, *dp = NULL;
	char why[512];
	*known = false;
	if (ctx->opt->pod_security) {
		if (tp_psa_parse(ctx->opt->pod_security, &defaults.enforce, why, sizeof(why)))
			return tp_result_warn(ctx->res, "Pod Security was not checked: --pod-security "
							"%s", why);
		defaults.audit = defaults.warn = defaults.enforce;
		dp = &defaults;
	}
	const cJSON *nsobj = NULL;
	int rc = tp_lookup_get(ctx->opt, TP_KIND_NAMESPACE, NULL, r->ns, &nsobj, why, sizeof(why));
	if (rc == TP_EUNAVAILABLE)
		return tp_result_warn_at(ctx->res, "metadata.namespace",
					 "Pod Security of namespace \"%s\" was not checked: "
					 "namespaces \"%s\" could not be looked up: %s", r->ns, r->ns,
					 *why ? why : tp_strerror(rc));
	if (rc != TP_OK && rc != TP_ENOTFOUND)
		return rc;
	*known = true;
	return tp_psa_policy_of(tp_get(nsobj, "metadata.labels"), dp, r->ns, &r->pol, ctx->res);
}

int tp__pod_security_trainjob(const tp_tj_ctx *ctx, const tp_pod_checked *checked, size_t n)
{
	psa_run r = { .ctx = ctx, .ns = *ctx->ns ? ctx->ns : "default" };
	bool known;
	int rc = policy(&r, &known);
	if (rc || !known ||
	    (r.pol.enforce.level == TP_PSA_PRIVILEGED && r.pol.audit.level == TP_PSA_PRIVILEGED &&
	     r.pol.warn.level == TP_PSA_PRIVILEGED))
		return rc;
	if (tp_arena_new(&r.arena, 0))
		return TP_ENOMEM;
	tp_buf_init(&r.audit, 0);
	tp_buf_init(&r.warnings, 0);
	const cJSON *jobs = ctx->jobs;
	size_t i = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j && !rc; j = j->next, i++)
		rc = one_job(&r, j, checked && i < n ? &checked[i] : NULL);
	if (!rc && r.audit.len)
		rc = tp_result_annotate(ctx->res, TP_PSA_AUDIT_ANNOTATION, r.audit.data);
	/* as EvaluatePod: no warnings on a request that is refused */
	if (!rc && !r.denied)
		rc = flush_warnings(&r);
	tp_buf_free(&r.audit);
	tp_buf_free(&r.warnings);
	tp_arena_free(r.arena);
	return rc;
}

/*
 * pod/runtime.c — the strict profile's check of a runtime's template: each
 * replicated job as kube-apiserver will check the Job made from it, so that
 * a runtime whose Pods every TrainJob would have refused (a memory request
 * over its limit, a mount of a volume it does not define) is refused
 * itself, at its own field. What a TrainJob always fills in is left to the
 * TrainJob: the trainer's node container may leave its image to
 * spec.trainer.image.
 */
#include "policy/pod/members.h"

static int check_job(tp_podv *v, const tp_options *opt, const cJSON *ml,
		     const tp_pod_jobset *js, const cJSON *job, int i, tp_result *res)
{
	const char *name = tp__mstr(job, "name");
	const cJSON *tmpl = tp_member(job, "template"); /* read once, for each step */
	const char *step = tp__pod_step(job);             /* the same */
	tp__podv_reset(v);
	v->rjob = name;
	/* completions as the builder writes them: a template with parallelism
	 * alone is whole */
	v->pods = tp__pod_runtime_count_at(ml, job, step);
	/* as the API server will see it (a copy only when that differs; the
	 * findings point into it until they are reported) */
	cJSON *copy = NULL;
	int rc = tp__pod_defaults(tmpl, js, &copy);
	/* the template's Job spec and Pod spec read once for both checks of it
	 * (the copy, when there is one, is read apart) */
	tp_pod_tm m;
	tp__pod_tm_fill(&m, tmpl);
	if (!rc && copy)
		tp__pod_check_job(v, copy);
	else if (!rc)
		tp__pod_check_job_tm(v, tmpl, &m);
	/* the template as written: the fields its release drops are named */
	if (!rc)
		tp__pod_check_since_tm(v, opt, &m, res);
	if (!rc)
		rc = v->rc;
	for (size_t k = 0; !rc && k < v->n; k++) {
		const tp_pod_finding *f = &v->items[k];
		if (tp__pod_trainjob_fills(job, f))
			continue;
		const char *path = tp__podv_printf(v, "spec.template.spec.replicatedJobs[%d].template.%s",
						   i, f->path);
		const char *where = tp__pod_where(v, name, f);
		rc = path && where ? tp__pod_report(res, path, f,
						    "the Job.batch of every TrainJob would be "
						    "invalid (%s)", where)
				   : TP_ENOMEM;
	}
	cJSON_Delete(copy);
	/* the Job and Pod names JobSet makes with its name (pod/names.c) */
	return rc ? rc : tp__pod_runtime_names(v, ml, job, step, i, res);
}

/* The JobSet's own labels and annotations, which every TrainJob's JobSet
 * copies from the runtime's spec.template.metadata. */
static int check_jobset_meta(tp_podv *v, const cJSON *tmpl, tp_result *res)
{
	tp__podv_reset(v);
	tp__pod_check_jobset_meta(v, tmpl);
	int rc = v->rc;
	for (size_t k = 0; !rc && k < v->n; k++) {
		const tp_pod_finding *f = &v->items[k];
		const char *path = tp__podv_printf(v, "spec.template.%s", f->path);
		rc = path ? tp__pod_report(res, path, f, "the JobSet of every TrainJob would be "
							 "invalid")
			  : TP_ENOMEM;
	}
	return rc;
}

/* JobSet writes network.subdomain as every Pod's spec.subdomain unless
 * network.enableDNSHostnames is false (its webhook defaults it to true),
 * and ValidatePodSpec wants a DNS-1123 label there. JobSet's own webhook
 * refuses the same names in its words (IsDNS1123Subdomain, IsDNS1035Label,
 * ".spec.network.subdomain is too long, must be less than 63 characters"). */
int tp__pod_check_subdomain(tp_podv *v, const cJSON *jobset_tmpl, const char *context,
			    tp_result *res)
{
	const cJSON *net = tp_get_object(jobset_tmpl, "spec.network");
	const char *sub = tp__mstr(net, "subdomain");
	if (!sub || !*sub || cJSON_IsFalse(tp_member(net, "enableDNSHostnames")))
		return TP_OK;
	tp__podv_reset(v);
	tp__pod_dns_label(v, NULL, sub,
			  "write a lowercase DNS-1123 label of at most 63 characters, or leave it "
			  "unset for the TrainJob's name");
	int rc = v->rc;
	for (size_t k = 0; !rc && k < v->n; k++)
		rc = tp__pod_report(res, "spec.template.spec.network.subdomain", &v->items[k], "%s",
				    context);
	return rc;
}

int tp__pod_check_runtime(const tp_options *opt, tp_kind kind, const cJSON *runtime,
			  tp_result *res)
{
	if (!tp_strict(opt) ||
	    (kind != TP_KIND_TRAINING_RUNTIME && kind != TP_KIND_CLUSTER_TRAINING_RUNTIME))
		return TP_OK;
	/* each path read once, its value passed down */
	const cJSON *spec = tp__mobj(runtime, "spec");
	const cJSON *jobset_tmpl = tp__mobj(spec, "template");
	const cJSON *jobset_spec = tp_member(jobset_tmpl, "spec");
	const cJSON *jobs = tp__marr(jobset_spec, "replicatedJobs");
	if (!jobs || !jobs->child)
		return TP_OK;
	tp_podv v;
	if (tp__podv_init(&v))
		return TP_ENOMEM;
	tp_pod_claims claims;
	int rc = tp__pod_claims_init(&claims, jobset_spec);
	v.claims = &claims;
	const cJSON *ml = tp__mobj(spec, "mlPolicy");
	/* the JobSet's name is each TrainJob's */
	tp_pod_jobset js;
	tp__pod_jobset_of(jobset_spec, NULL, &js);
	rc = check_jobset_meta(&v, jobset_tmpl, res);
	if (!rc)
		rc = tp__pod_check_subdomain(&v, jobset_tmpl,
					     "every Pod of every TrainJob would be invalid (its "
					     "spec.subdomain)",
					     res);
	int i = 0;
	for (const cJSON *j = jobs->child; j && !rc; j = j->next, i++)
		if (cJSON_IsObject(j))
			rc = check_job(&v, opt, ml, &js, j, i, res);
	if (!rc) /* the PersistentVolumeClaims JobSet names with its name (pod/names.c) */
		rc = tp__pod_runtime_claim_names(&v, runtime, res);
	tp__pod_claims_free(&claims);
	tp__podv_free(&v);
	return rc;
}

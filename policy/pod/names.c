/*
 * pod/names.c — the names the controllers make from a TrainJob's name
 * (strict profile). The trainer names its JobSet after the TrainJob; JobSet
 * names each Job "<jobset>-<replicated job>-<job index>", and the Job
 * controller gives each Pod of an Indexed Job the hostname "<job>-<completion
 * index>" and a name with "-" and 5 random characters more. The TrainJob's
 * CRD admits names of up to 63 characters, so a long name is admitted and
 * the TrainJob then never runs:
 *   - JobSet's webhook (jobset@08dfbdfd pkg/webhooks/jobset_webhook.go,
 *     ValidateCreate) refuses the JobSet when its longest Job name (index
 *     replicas-1) or, for an Indexed job with completions, its longest Pod
 *     name (index completions-1, "-abcde" for the random part) is no
 *     DNS-1035 label: jobNameTooLongErrorMsg, podNameTooLongErrorMsg, or
 *     the label's pattern message;
 *   - kube-apiserver refuses a Job whose name is no DNS-1123 subdomain
 *     (ValidateObjectMeta with ValidateReplicationControllerName) or, Indexed
 *     with completions > 0, whose last Pod's hostname is no DNS-1123 label
 *     (Kubernetes' pkg/apis/batch/validation/validation.go ValidateJob:
 *     "will not able to create pod with invalid DNS label").
 * Each rule is reported in its owner's words at the TrainJob's metadata.name,
 * with the longest name this TrainJob may have with its runtime (the Pod
 * name's 5 more characters make JobSet's the rule that binds first); when
 * the replicated job's own name is to blame (a character no label holds, or
 * so long that no TrainJob name fits) at the runtime's path instead. The
 * runtime's own check refuses a job name that leaves no room for any
 * TrainJob's name. The same for the PersistentVolumeClaims of the JobSet's
 * volumeClaimPolicies, which JobSet names "<template>-<jobset>"
 * (pkg/controllers/volume_claim_policy.go GeneratePVCName) and its webhook
 * refuses past 63 characters (maxVolumeClaimLength).
 *
 * runtimePatches are never the cause: a patch may only name the runtime's
 * replicated jobs (plugins/jobset.c refuses others) and the TrainJob CRD
 * gives it no replicas, parallelism, completions, completionMode or
 * volumeClaimPolicies, so the names and counts here are the runtime's and
 * the builder's (numNodes).
 */
#include "policy/pod/pod.h"
#include "policy/runtime/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABEL 63
#define MAX_SUBDOMAIN 253
#define TOO_LONG_LABEL "must be no more than 63 characters"
#define TOO_LONG_SUBDOMAIN "must be no more than 253 characters"
/* JobSet's stand-in for the Job controller's random part of a Pod's name */
#define POD_SUFFIX "-abcde"
#define JOBSET_KIND "JobSet.jobset.x-k8s.io"

#define MSG_JOB_TOO_LONG \
	"JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
#define MSG_POD_TOO_LONG \
	"JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
#define MSG_HOSTNAME "will not able to create pod with invalid DNS label: %s"
#define MSG_CLAIM_TOO_LONG "VolumeClaimPolicies template name is too long"

/* One replicated job as JobSet names it: what it adds to the JobSet's name
 * for its longest Job name and its longest Pod name. */
typedef struct job_shape {
	const char *rjob;
	long long last_job; /* replicas - 1, as JobSet's webhook takes it */
	long long last_pod; /* completions - 1 */
	bool indexed;
	size_t job_tail;    /* strlen("-<rjob>-<last_job>") */
	size_t pod_tail;    /* job_tail + strlen("-<last_pod>-abcde") when Indexed */
} job_shape;

/* The characters of n in decimal. */
static size_t width(long long n)
{
	size_t w = n < 0 ? 2 : 1;
	for (unsigned long long u = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
	     u >= 10; u /= 10)
		w++;
	return w;
}

static bool is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

/* The trainer's JobSet builder sets replicas 1 for the trainer's and the
 * initializers' jobs (plugins/jobset.c); the others keep the runtime's,
 * 1 by JobSet's schema default. */
static long long replicas_of(const cJSON *job, const char *step)
{
	long long n;
	if (is(step, TP_ANCESTOR_TRAINER) || is(step, TP_ANCESTOR_DATASET) ||
	    is(step, TP_ANCESTOR_MODEL) || !tp__mint(job, "replicas", &n))
		return 1;
	return n;
}

/* JobSet's mutating webhook makes an unset completionMode Indexed. */
static bool indexed(const cJSON *job)
{
	const cJSON *mode = tp_member(tp__mobj(tp__mobj(job, "template"), "spec"), "completionMode");
	return !cJSON_IsString(mode) || !strcmp(mode->valuestring, "Indexed");
}

/* pods: the builder's parallelism and completions (1 or more); step: the
 * job's (tp__pod_step). */
static job_shape shape_of(const cJSON *job, const char *step, long long pods)
{
	job_shape s = { .rjob = tp__mstr(job, "name"), .last_job = replicas_of(job, step) - 1,
			.last_pod = pods - 1, .indexed = indexed(job) };
	if (!s.rjob)
		s.rjob = "";
	s.job_tail = 1 + strlen(s.rjob) + 1 + width(s.last_job);
	s.pod_tail = s.job_tail;
	if (s.indexed)
		s.pod_tail += 1 + width(s.last_pod) + strlen(POD_SUFFIX);
	return s;
}

/* The longest JobSet name that leaves both of s's names labels (may be 0
 * or less: none does). */
static long long room(const job_shape *s)
{
	return MAX_LABEL - (long long)s->pod_tail;
}

/* A replicated job name that no TrainJob's name can make good. */
static bool job_to_blame(const job_shape *s)
{
	for (const char *p = s->rjob; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return true;
	return room(s) < 1;
}

/* ------------------------------------------------------------ name rules */

/* Lower-case alphanumerics and '-', alphanumeric at both ends (alpha_first:
 * a letter first). */
static bool label_shape(const char *s, size_t n, bool alpha_first)
{
	if (n == 0 || !((s[n - 1] >= 'a' && s[n - 1] <= 'z') || (s[n - 1] >= '0' && s[n - 1] <= '9')))
		return false;
	if (!(s[0] >= 'a' && s[0] <= 'z') && (alpha_first || !(s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* IsDNS1035Label's messages for s, length first; how many. core/names.c
 * keeps the pattern's text, and gives it for any value that breaks only
 * the pattern ("-"). */
static int dns1035(const char *s, const char *msg[2])
{
	size_t n = strlen(s);
	int k = 0;
	if (n > MAX_LABEL)
		msg[k++] = TOO_LONG_LABEL;
	if (!label_shape(s, n, true))
		msg[k++] = tp__check_dns1035_label("-");
	return k;
}

/* IsDNS1123Subdomain's messages for s: dot-separated RFC 1123 labels. */
static int dns1123_subdomain(const char *s, const char *msg[2])
{
	int k = 0;
	if (strlen(s) > MAX_SUBDOMAIN)
		msg[k++] = TOO_LONG_SUBDOMAIN;
	for (const char *p = s;; p++) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (!label_shape(p, n, false)) {
			msg[k++] = tp__check_dns1123_subdomain("-");
			break;
		}
		if (!dot)
			break;
		p = dot;
	}
	return k;
}

/* ------------------------------------------------------------ findings */

/* JobSet's webhook puts its own words for the length message. */
static bool too_long(const char *msg)
{
	return !strcmp(msg, TOO_LONG_LABEL);
}

/* JobSet's findings for s in a JobSet named js, at "spec.replicatedJobs[i]
 * .name" (i: the job's place), then the API server's for its longest Job,
 * at "metadata.name": all into v with hint. */
static void findings(tp_podv *v, const char *js, const job_shape *s, int i, const char *hint)
{
	const char *job = tp__podv_printf(v, "%s-%s-%lld", js, s->rjob, s->last_job);
	if (!job)
		return;
	const char *q = tp__podv_quote(v, job), *msg[2];
	size_t mark = tp__podv_push_index(v, "spec.replicatedJobs", i);
	tp__podv_push(v, ".name");
	for (int k = 0, n = dns1035(job, msg); k < n; k++)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, q, hint, "%s",
			     too_long(msg[k]) ? MSG_JOB_TOO_LONG : msg[k]);
	const char *pod = s->indexed ? tp__podv_printf(v, "%s-%lld" POD_SUFFIX, job, s->last_pod)
				     : NULL;
	for (int k = 0, n = pod ? dns1035(pod, msg) : 0; k < n; k++)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, q, hint, "%s",
			     too_long(msg[k]) ? MSG_POD_TOO_LONG : msg[k]);
	tp__podv_pop(v, mark);
	tp__podv_push(v, "metadata.name");
	for (int k = 0, n = dns1123_subdomain(job, msg); k < n; k++)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, q, hint, "%s", msg[k]);
	const char *host = s->indexed ? tp__podv_printf(v, "%s-%lld", job, s->last_pod) : NULL;
	if (host && tp__check_dns1123_label(host))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, q, hint, MSG_HOSTNAME, host);
	tp__podv_pop(v, mark);
}

/* Who refuses f: JobSet's webhook the JobSet js, or the API server the Job
 * f's value names. */
static const char *refuser(tp_podv *v, const char *js, const job_shape *s,
			   const tp_pod_finding *f)
{
	if (!strncmp(f->path, "spec.", 5))
		return tp__podv_printf(v, JOBSET_KIND " \"%s\" would be refused at %s", js, f->path);
	return tp__podv_printf(v, "Job.batch \"%s-%s-%lld\" would be invalid at %s", js, s->rjob,
			       s->last_job, f->path);
}

/* ------------------------------------------------------------ claims */

/* What fn is given for each volumeClaimPolicies template of a JobSet spec:
 * its name and place (policy i, template j). */
typedef int (*claim_fn)(void *arg, const char *claim, int i, int j);

static int each_claim(const cJSON *spec, claim_fn fn, void *arg)
{
	const cJSON *policies = tp__marr(spec, "volumeClaimPolicies");
	int i = 0, rc = TP_OK;
	for (const cJSON *p = policies ? policies->child : NULL; p && !rc; p = p->next, i++) {
		const cJSON *templates = tp__marr(p, "templates");
		int j = 0;
		for (const cJSON *t = templates ? templates->child : NULL; t && !rc; t = t->next, j++) {
			const char *name = tp__mstr(tp__mobj(t, "metadata"), "name");
			if (name && *name)
				rc = fn(arg, name, i, j);
		}
	}
	return rc;
}

/* The longest JobSet name that keeps claim's PersistentVolumeClaim name
 * within 63 characters (0 or less: none does). */
static long long claim_room(const char *claim)
{
	return MAX_LABEL - 1 - (long long)strlen(claim);
}

/* ------------------------------------------------------------ TrainJob */

int tp__pod_names_note(tp_pod_names *n, const cJSON *job, const char *step, int index,
		       long long pods)
{
	if (!n->jobs) {
		n->jobs = n->few;
		n->cap = TP_POD_NAMES_FEW;
	}
	if (n->n == n->cap) {
		tp_pod_name_job *more = malloc(2 * n->cap * sizeof(*more));
		if (!more)
			return TP_ENOMEM;
		memcpy(more, n->jobs, n->n * sizeof(*more));
		if (n->jobs != n->few)
			free(n->jobs);
		n->jobs = more;
		n->cap *= 2;
	}
	n->jobs[n->n++] = (tp_pod_name_job){ job, step, index, pods < 1 ? 1 : pods };
	return TP_OK;
}

void tp__pod_names_free(tp_pod_names *n)
{
	if (n->jobs != n->few)
		free(n->jobs);
	n->jobs = NULL;
	n->n = n->cap = 0;
}

typedef struct names_run {
	const tp_tj_ctx *ctx;
	tp_podv *v;
	const char *tj;      /* the TrainJob's name, the JobSet's */
	const char *kind;    /* the runtime's kind and name */
	const char *runtime;
	long long longest;   /* the longest name the TrainJob may have */
	bool refused;        /* a claim's name is too long with the TrainJob's */
} names_run;

/* What to write instead: a shorter TrainJob name, or (blame) another name
 * for the runtime's replicated job. */
static const char *hint_for(names_run *r, const job_shape *s, bool blame)
{
	if (!blame) {
		long long nodes;
		bool set = tp_get_int(r->ctx->job, "spec.trainer.numNodes", &nodes);
		return tp__podv_printf(r->v, "use a name of at most %lld characters with %s \"%s\"%s%s",
				       r->longest, r->kind, r->runtime, set ? " and numNodes " : "",
				       set ? tp__podv_int(r->v, nodes) : "");
	}
	long long most = MAX_LABEL - (long long)strlen(r->tj) -
			 (long long)(s->pod_tail - strlen(s->rjob));
	if (most < 1)
		return "rename the replicated job (lower-case letters, digits and '-') and shorten "
		       "the TrainJob's name";
	return tp__podv_printf(r->v, "rename the replicated job: lower-case letters, digits and "
				     "'-', at most %lld characters with a TrainJob named \"%s\"",
			       most, r->tj);
}

/* j's findings (s: its shape) with the TrainJob's name, into ctx->res. */
static int report_job(names_run *r, const tp_pod_name_job *j, const job_shape *s)
{
	tp_podv *v = r->v;
	tp__podv_reset(v);
	bool blame = job_to_blame(s);
	findings(v, r->tj, s, j->index, hint_for(r, s, blame));
	for (size_t k = 0; !v->rc && k < v->n; k++) {
		const tp_pod_finding *f = &v->items[k];
		const char *who = refuser(v, r->tj, s, f);
		const char *path = blame ? tp__podv_printf(v, "spec.template.spec.replicatedJobs[%d].name",
							   j->index)
					 : "metadata.name";
		if (!who || !path)
			return TP_ENOMEM;
		v->rc = blame ? tp__pod_report(r->ctx->res, path, f, "in %s \"%s\" (replicated job "
							      "\"%s\"), so %s",
					       r->kind, r->runtime, s->rjob, who)
			      : tp__pod_report(r->ctx->res, path, f, "%s (replicated job \"%s\")", who,
					       s->rjob);
	}
	return v->rc;
}

/* First pass: the longest name the claims allow, and whether one refuses. */
static int claim_measure(void *arg, const char *claim, int i, int j)
{
	names_run *r = arg;
	(void)i, (void)j;
	long long room = claim_room(claim);
	if (room >= 1 && room < r->longest)
		r->longest = room;
	r->refused |= (long long)strlen(r->tj) > room;
	return TP_OK;
}

/* JobSet's finding for a claim too long with this TrainJob's name: at the
 * TrainJob's metadata.name, or at the runtime's path when no name fits. */
static int claim_report(void *arg, const char *claim, int i, int j)
{
	names_run *r = arg;
	long long room = claim_room(claim);
	if ((long long)strlen(r->tj) <= room)
		return TP_OK;
	tp_podv *v = r->v;
	bool blame = room < 1;
	long long most = MAX_LABEL - 1 - (long long)strlen(r->tj);
	tp_pod_finding f = {
		.type = TP_FIELD_INVALID, .value = tp__podv_quote(v, claim), .detail = MSG_CLAIM_TOO_LONG,
		.hint = !blame ? hint_for(r, NULL, false)
		       : most >= 1 ? tp__podv_printf(v, "shorten the template's name to at most %lld "
						   "characters with a TrainJob named \"%s\"", most, r->tj)
				   : "shorten the template's name and the TrainJob's"
	};
	const char *who = tp__podv_printf(v, JOBSET_KIND " \"%s\" would be refused at "
					  "spec.volumeClaimPolicies[%d].template[%d].name "
					  "(PersistentVolumeClaim \"%s-%s\")", r->tj, i, j, claim, r->tj);
	const char *path = blame ? tp__podv_printf(v, "spec.template.spec.volumeClaimPolicies[%d]."
						      "templates[%d].metadata.name", i, j)
				 : "metadata.name";
	if (!f.value || !f.hint || !who || !path)
		return TP_ENOMEM;
	if (blame)
		return tp__pod_report(r->ctx->res, path, &f, "in %s \"%s\", so %s", r->kind,
				      r->runtime, who);
	return tp__pod_report(r->ctx->res, path, &f, "%s", who);
}

static size_t count_jobs(const cJSON *tmpl)
{
	size_t n = 0;
	const cJSON *jobs = tp_get_array(tmpl, "spec.replicatedJobs");
	for (const cJSON *j = jobs ? jobs->child : NULL; j; j = j->next)
		n++;
	return n;
}

/* Can a rule refuse j's names with the TrainJob's (tj_ok: a DNS-1035
 * label of tj_len characters)? Counted, not printed: most jobs pass. */
static bool may_refuse(const job_shape *s, size_t tj_len, bool tj_ok)
{
	return !tj_ok || job_to_blame(s) || tj_len + s->pod_tail > MAX_LABEL;
}

int tp__pod_names_check(tp_pod_names *n, const tp_tj_ctx *ctx)
{
	const char *tj = ctx->name;
	if (!tj || !*tj)
		return TP_OK;
	names_run r = { .ctx = ctx, .tj = tj, .longest = MAX_LABEL };
	bool tj_ok = !tp__check_dns1035_label(tj), any = false;
	/* a job only a patch names is refused already (plugins/jobset.c): the
	 * merge appends it after the runtime's own */
	size_t own = ctx->base == ctx->tmpl ? SIZE_MAX : count_jobs(ctx->base);
	for (size_t i = 0; i < n->n; i++) {
		job_shape s = shape_of(n->jobs[i].job, n->jobs[i].step, n->jobs[i].pods);
		if (!job_to_blame(&s) && room(&s) < r.longest)
			r.longest = room(&s);
		any |= (size_t)n->jobs[i].index < own && may_refuse(&s, strlen(tj), tj_ok);
	}
	const cJSON *spec = tp__mobj(ctx->base, "spec");
	each_claim(spec, claim_measure, &r);
	if (!any && !r.refused)
		return TP_OK;
	tp_podv v;
	if (tp__podv_init(&v))
		return TP_ENOMEM;
	tp_kind kind = tp_kind_of(ctx->runtime);
	r.kind = kind == TP_KIND_UNKNOWN ? "runtime" : tp_kind_name(kind);
	r.runtime = tp_meta_name(ctx->runtime);
	r.v = &v;
	int rc = TP_OK;
	for (size_t i = 0; i < n->n && !rc; i++) {
		const tp_pod_name_job *j = &n->jobs[i];
		job_shape s = shape_of(j->job, j->step, j->pods);
		if ((size_t)j->index < own && may_refuse(&s, strlen(tj), tj_ok))
			rc = report_job(&r, j, &s);
	}
	if (!rc && r.refused)
		rc = each_claim(spec, claim_report, &r);
	tp__podv_free(&v);
	return rc;
}

/* ------------------------------------------------------------ runtime */

int tp__pod_runtime_names(tp_podv *v, const cJSON *ml, const cJSON *job, const char *step,
			  int index, tp_result *res)
{
	const char *rjob = tp__mstr(job, "name");
	if (!rjob || tp__check_dns1035_label(rjob)) /* admission/runtime_strict.c says so */
		return TP_OK;
	/* the fewest Pods any TrainJob gives the job: the TrainJob's numNodes
	 * (1 or more) sets a trainer's and MPI's counts */
	long long pods = is(step, TP_ANCESTOR_TRAINER) || tp__mobj(ml, "mpi")
				 ? 1
				 : tp__pod_runtime_count_at(ml, job, step);
	job_shape s = shape_of(job, step, pods);
	if (room(&s) >= 1)
		return TP_OK;
	bool job_long = 1 + s.job_tail > MAX_LABEL;
	tp_pod_finding f = { .type = TP_FIELD_INVALID, .value = tp__podv_quote(v, rjob),
			     .hint = tp__podv_printf(v, "shorten the replicated job's name to at "
							"most %lld characters",
						 MAX_LABEL - 1 - (long long)(s.pod_tail - strlen(rjob))),
			     .detail = job_long ? MSG_JOB_TOO_LONG : MSG_POD_TOO_LONG };
	const char *path = tp__podv_printf(v, "spec.template.spec.replicatedJobs[%d].name", index);
	if (!f.value || !f.hint || !path)
		return TP_ENOMEM;
	int rc = tp__pod_report(res, path, &f,
				"the JobSet of every TrainJob would be refused (replicated job \"%s\": a "
				"TrainJob named \"a\" makes %s names of %zu characters)",
				rjob, job_long ? "Job" : "Pod", 1 + (job_long ? s.job_tail : s.pod_tail));
	if (!rc && job_long && s.indexed) {
		f.detail = MSG_POD_TOO_LONG;
		rc = tp__pod_report(res, path, &f,
				    "the JobSet of every TrainJob would be refused (replicated job "
				    "\"%s\": a TrainJob named \"a\" makes Pod names of %zu characters)",
				    rjob, 1 + s.pod_tail);
	}
	return rc;
}

typedef struct runtime_claims {
	tp_podv *v;
	tp_result *res;
} runtime_claims;

static int runtime_claim(void *arg, const char *claim, int i, int j)
{
	runtime_claims *rc = arg;
	if (claim_room(claim) >= 1)
		return TP_OK;
	tp_pod_finding f = { .type = TP_FIELD_INVALID, .value = tp__podv_quote(rc->v, claim),
			     .detail = MSG_CLAIM_TOO_LONG,
			     .hint = tp__podv_printf(rc->v, "shorten the template's name to at most "
							    "%d characters", MAX_LABEL - 2) };
	const char *path = tp__podv_printf(rc->v, "spec.template.spec.volumeClaimPolicies[%d]."
						  "templates[%d].metadata.name", i, j);
	if (!f.value || !f.hint || !path)
		return TP_ENOMEM;
	return tp__pod_report(rc->res, path, &f,
			      "the JobSet of every TrainJob would be refused (a TrainJob named \"a\" "
			      "makes the PersistentVolumeClaim \"%s-a\" of %zu characters)",
			      claim, strlen(claim) + 2);
}

int tp__pod_runtime_claim_names(tp_podv *v, const cJSON *runtime, tp_result *res)
{
	runtime_claims rc = { v, res };
	return each_claim(tp_get_object(runtime, "spec.template.spec"), runtime_claim, &rc);
}

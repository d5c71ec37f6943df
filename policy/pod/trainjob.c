/*
 * pod/trainjob.c — the strict profile's look ahead at a TrainJob's Pods:
 * each replicated job of the JobSet it becomes is checked as kube-apiserver
 * will check the Job the JobSet controller creates from it, and each
 * finding is shown where it comes from:
 *   - the runtime, when the runtime's own replicated job has the same
 *     finding: at the runtime's path, naming the runtime;
 *   - the TrainJob's runtimePatches, when the patched template has it and
 *     the runtime's does not;
 *   - else the TrainJob field that put the value there
 *     (spec.trainer.resourcesPerNode.limits, spec.trainer.image,
 *     spec.trainer.numNodes, ...), or spec.runtimeRef when no single field
 *     did.
 *
 * The JobSet's Pods differ from the runtime's template with the
 * runtimePatches merged (ctx->tmpl, which the validator has built already)
 * where the expansion writes the trainer's settings (expand/info.c):
 * resourcesPerNode strategic-merged into the trainer job's node container
 * (and MPI's node job's, with runLauncherAsNode), image, command and args
 * set there, env upserted. Those are written into a copy of that job's
 * template with the expansion's own helpers; then each plugin's pod_parts
 * phase writes what its expansion adds that the API server or Pod Security
 * could refuse, with the functions the expansion writes it with (Flux's
 * flux-installer init container, volumes and mounts; MPI's SSH and
 * hostfile volumes and mounts; plugins/plugin.h), and says where a finding
 * in those parts comes from; every job gets the builder's Pod count as
 * parallelism and completions (tp_podv.pods); every other part is read
 * where it is. Building the whole JobSet instead costs more than the review
 * itself (callgrind, per review: 65,700 instructions more on make bench's
 * TrainJob review of 65,276; an MPI one on deepspeed-distributed 76,819 ->
 * 210,183, a Flux one 48,082 -> 178,246). What is still not written in:
 * the environment variables and ports torch, JAX, XGBoost and MPI add
 * (fixed valid names, unnamed ports without hostPort: nothing the API
 * server or Pod Security refuses; test_pod_parts holds findings and
 * verdicts to the expansion's), the commands Flux and TorchTune rewrite,
 * the PodGroup label and annotations of coscheduling and Volcano (the
 * TrainJob's name, a valid label value), and the JobSet plugin's
 * initializer env and envFrom, checked where the TrainJob holds them
 * (check_initializer_env).
 * The runtime's template is checked again only for a job that has
 * findings, to tell the TrainJob's from the runtime's.
 */
#include "policy/patch/patch.h"
#include "policy/plugins/plugin.h"
#include "policy/pod/pod.h"
#include "policy/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rt_job {
	const cJSON *job;
	int index;
} rt_job;

typedef struct tj_pods {
	const tp_tj_ctx *ctx;
	tp_podv built; /* a replicated job as the JobSet will hold it */
	tp_podv other; /* the same job in the runtime's template, or the patched one */
	bool other_ready;
	const cJSON *ml;     /* the runtime's mlPolicy, or NULL */
	bool trainer_seen;   /* the first trainer job has been checked */
	bool nodes_written;  /* this job's Pod count is the TrainJob's numNodes */
	const char *step;    /* the job's ancestor step (tp__pod_step), read once */
	/* The replicated jobs of a long ctx->base and ctx->tmpl by name, filed
	 * once for all the jobs checked (once per job with findings cost
	 * O(jobs^2) for a wide runtime). */
	tp_podv names;
	tp_nameset base_jobs, tmpl_jobs;
	bool names_ready, base_filed, tmpl_filed;
	/* the volumeClaimPolicies of ctx->tmpl and of ctx->base */
	tp_pod_claims tmpl_claims, base_claims;
	/* the plugins' Pod parts of the job being checked (not zeroed with the
	 * rest: build_job sets what it reads), and what they read alike */
	tp_pod_parts *parts;
	tp_pod_parts_cache *parts_cache;
	tp_pod_names gen_names; /* the jobs' generated names (pod/names.c) */
	cJSON *node; /* the node container of parts->copy while it is a shell */
} tj_pods;

static bool is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

static const char *kind_of(const tj_pods *t)
{
	tp_kind k = tp_kind_of(t->ctx->runtime);
	return k == TP_KIND_UNKNOWN ? "runtime" : tp_kind_name(k);
}

static const char *job_name(tj_pods *t, const char *rjob)
{
	const char *tj = tp_meta_name(t->ctx->job);
	return tp__podv_printf(&t->built, "%s-%s-0", *tj ? tj : "<trainjob>", rjob ? rjob : "");
}

/* ------------------------------------------------------------ overlay */

/* ------------------------------------------------------------ the copy */

/* The copy of a job's template the trainer's settings are written into is
 * made only along the path to what they change: every other member is a
 * reference (cJSON_IsReference, its key cJSON_StringIsConst) that reads the
 * runtime's node where it is and is freed without it. A copy of the whole
 * template for every TrainJob cost 4,000 of make bench's 107,200
 * instructions a TrainJob review (callgrind). Whoever writes elsewhere in
 * it makes it whole first (tp__parts_pod_spec, build_job's defaults):
 * cJSON_Duplicate copies through the references. */

/* A node that reads v where it is, under v's key. */
static cJSON *ref_to(const cJSON *v)
{
	cJSON *r = cJSON_CreateNull();
	if (!r)
		return NULL;
	r->type = (v->type & 0xff) | cJSON_IsReference | cJSON_StringIsConst;
	r->valuestring = v->valuestring;
	r->valueint = v->valueint;
	r->valuedouble = v->valuedouble;
	r->child = v->child;
	r->string = v->string;
	return r;
}

/* v's own object or array, under v's key, its members references but
 * the member was, which own (a shell made already, or NULL) stands for.
 * own is the shell's, or freed when there is no memory. */
static cJSON *shell_of(const cJSON *v, const cJSON *was, cJSON *own)
{
	cJSON *s = cJSON_IsArray(v) ? cJSON_CreateArray() : cJSON_CreateObject();
	if (!s) {
		cJSON_Delete(own);
		return NULL;
	}
	s->type |= cJSON_StringIsConst;
	s->string = v->string;
	for (const cJSON *c = v->child; c; c = c->next) {
		cJSON *r = c == was ? own : ref_to(c);
		if (c == was)
			own = NULL; /* the shell's from here */
		if (!r || !cJSON_AddItemToArray(s, r)) {
			cJSON_Delete(r);
			cJSON_Delete(own);
			cJSON_Delete(s);
			return NULL;
		}
	}
	cJSON_Delete(own); /* was is among v's members: NULL by now */
	return s;
}

/* The reference ref of parent made the copy's own, all of it. NULL: no
 * ref, or no memory. */
static cJSON *open_item(cJSON *parent, const cJSON *ref)
{
	if (!ref)
		return NULL;
	cJSON *own = cJSON_Duplicate(ref, 1);
	if (!own)
		return NULL;
	own->type |= cJSON_StringIsConst;
	own->string = ref->string;
	cJSON_ReplaceItemViaPointer(parent, (cJSON *)ref, own);
	return own;
}

/* A shell of tmpl (a job's template) whose members on the path to its node
 * container are shells too, into *copy, and that container's shell, made
 * from the node container up: each level made once, with its shell of the
 * next in place (a shell of each level with references, each reference on
 * the path then replaced by a shell, cost 900 instructions more of make
 * bench's TrainJob review, callgrind). node_index: the container's place
 * when the runtime's plan knows it, else -1. NULL: no memory (the path is
 * there: overlay found the container). */
static cJSON *open_node(const cJSON *tmpl, int node_index, cJSON **copy)
{
	static const char *const spine[] = { "spec", "template", "spec", "containers" };
	const cJSON *at[6] = { tmpl };
	for (int k = 0; k < 4; k++)
		at[k + 1] = tp_member(at[k], spine[k]);
	if (node_index < 0) {
		at[5] = tp_find_named(at[4], "name", TP_CONTAINER_NODE);
	} else {
		at[5] = at[4]->child;
		for (int i = 0; at[5] && i < node_index; i++)
			at[5] = at[5]->next;
	}
	cJSON *node = shell_of(at[5], NULL, NULL), *own = node;
	for (int k = 4; own && k >= 0; k--)
		own = shell_of(at[k], at[k + 1], own);
	*copy = own;
	return own ? node : NULL;
}

/* ------------------------------------------------------------ overlay */

/* Whether job's template has a node container: by the runtime's plan
 * (pj, NULL: none) when it has one, which found it when it was made. */
static bool has_node(const tp_rt_plan_job *pj, const cJSON *tmpl)
{
	if (pj)
		return pj->marks.node != NULL;
	return tp_find_named(tp_get_array(tmpl, "spec.template.spec.containers"), "name",
			     TP_CONTAINER_NODE) != NULL;
}

/* The trainer's settings written into a copy of job's template, as
 * expand/info.c's apply_trainjob writes them: *out NULL when the TrainJob
 * writes nothing into this job, else a copy that refers to the runtime's
 * template for what the settings leave, *node_out its node container.
 * The TrainJob's spec.trainer and the runtime's mlPolicy are the context's,
 * the job's step t->step (each looked up once a review: 1,000 instructions
 * of make bench's TrainJob review looked them up here, callgrind).
 * TP_EINVAL: a setting of a type the schema layer reports. */
static int overlay(const tj_pods *t, const cJSON *job, const tp_rt_plan_job *pj, cJSON **out,
		   cJSON **node_out)
{
	*out = *node_out = NULL;
	const cJSON *trainer = t->ctx->trainer;
	const cJSON *tmpl = tp_member(job, "template");
	bool trainer_job = is(t->step, TP_ANCESTOR_TRAINER);
	bool mpi_node = tp_get_true(t->ml, "mpi.runLauncherAsNode") &&
			is(tp__mstr(job, "name"), TP_JOB_NODE);
	if (!trainer || !(trainer_job || mpi_node) || !has_node(pj, tmpl))
		return TP_OK;
	cJSON *copy = NULL;
	cJSON *node = open_node(tmpl, pj ? pj->node_index : -1, &copy);
	const cJSON *want = tp__mobj(trainer, "resourcesPerNode");
	const cJSON *env = tp__marr(trainer, "env");
	/* what is written into, not replaced: the copy's own */
	if (node && want && tp_member(node, "resources") &&
	    !open_item(node, tp_member(node, "resources")))
		node = NULL;
	if (node && env && env->child && tp_member(node, "env") &&
	    !open_item(node, tp_member(node, "env")))
		node = NULL;
	if (!node) {
		cJSON_Delete(copy);
		return TP_ENOMEM;
	}
	int rc = TP_OK;
	if (want) {
		cJSON *r = tp__x_object(node, "resources");
		rc = r ? tp__strategic_merge(r, want, NULL) : TP_EINVAL;
	}
	static const char *const members[] = { "image", "command", "args" };
	for (int k = 0; !rc && trainer_job && k < 3; k++) {
		const cJSON *v = tp_member(trainer, members[k]);
		if (v && !cJSON_IsNull(v))
			rc = tp__x_set(node, members[k], cJSON_Duplicate(v, 1));
	}
	if (!rc)
		rc = tp__x_env_copy(node, env);
	if (rc) {
		cJSON_Delete(copy);
	} else {
		*out = copy;
		*node_out = node;
	}
	return rc;
}

/* The TrainJob's numNodes (0 runs one node in the strict profile, as
 * expand/util.c counts it): true and *n when it sets one. */
static bool trainjob_nodes(tj_pods *t, long long *n)
{
	if (!tp_get_int(t->ctx->trainer, "numNodes", n))
		return false;
	if (*n < 1)
		*n = 1;
	return true;
}

/* MPI's counts by job name (plugins/mpi.c count_pods, strict profile): one
 * launcher; numNodes nodes, one fewer when the launcher runs as a node.
 * 0 for a job MPI does not count. */
static long long mpi_pods(tj_pods *t, const cJSON *job)
{
	const char *name = tp__mstr(job, "name");
	if (is(name, TP_JOB_LAUNCHER))
		return 1;
	if (!is(name, TP_JOB_NODE))
		return 0;
	long long n = 1;
	if ((t->nodes_written = trainjob_nodes(t, &n)) == false &&
	    (!tp__mint(t->ml, "numNodes", &n) || n < 1))
		n = 1;
	if (tp_get_true(t->ml, "mpi.runLauncherAsNode"))
		n = n - 1 > 1 ? n - 1 : 1;
	return n;
}

/* The Pods the builder gives job (parallelism = completions): MPI's
 * counts; else the TrainJob's numNodes for the first trainer job when it
 * sets one; else what the runtime gives. Sets t->nodes_written. */
static long long pods_of(tj_pods *t, const cJSON *job)
{
	t->nodes_written = false;
	long long n;
	if (tp__mobj(t->ml, "mpi") && (n = mpi_pods(t, job)) > 0)
		return n;
	const char *ancestor = t->step;
	if (!ancestor || strcmp(ancestor, TP_ANCESTOR_TRAINER) || t->trainer_seen)
		return tp__pod_runtime_count_at(t->ml, job, ancestor);
	t->trainer_seen = true;
	if (!(t->nodes_written = trainjob_nodes(t, &n)))
		return tp__pod_runtime_count_at(t->ml, job, ancestor);
	return n;
}

/* ------------------------------------------------------------ parts */

/* t for ctx, the parts of its jobs in parts and cache (the caller's).
 * Member by member: the three tp_podv (a kilobyte each) are made by
 * tp__podv_init where they are first used (other and names behind their
 * flags; built only needs to be freeable), gen_names' few as they are
 * noted; zeroing all of t cost 500 instructions of make bench's TrainJob
 * review (callgrind: a rep stos of 4 KiB). */
static void pods_init(tj_pods *t, const tp_tj_ctx *ctx, tp_pod_parts *parts,
		      tp_pod_parts_cache *cache)
{
	cache->looked = cache->named = cache->flux_read = false;
	t->ctx = ctx;
	t->ml = ctx->ml;
	t->parts = parts;
	t->parts_cache = cache;
	t->built.arena = NULL;
	t->built.items = NULL;
	t->built.n = t->built.cap = 0;
	t->other_ready = t->names_ready = t->base_filed = t->tmpl_filed = false;
	t->trainer_seen = t->nodes_written = false;
	t->step = NULL;
	t->node = NULL;
	t->tmpl_claims = t->base_claims = (tp_pod_claims){ 0 };
	t->gen_names.jobs = NULL;
	t->gen_names.n = t->gen_names.cap = 0;
}

/* The job build_job made, as Pod Security and the tests see it. */
static tp_pod_checked as_checked(const tj_pods *t)
{
	return (tp_pod_checked){ t->parts->copy, t->parts->psa_container, t->parts->psa_note };
}

/* The runtime's plan of job (the index-th of ctx->tmpl) when ctx->tmpl is
 * the plan's template, else NULL. */
static const tp_rt_plan_job *planned(const tj_pods *t, const cJSON *job, int index)
{
	const tp_tj_ctx *ctx = t->ctx;
	if (ctx->tmpl != ctx->base || ctx->base != tp__rt_plan_base(ctx->plan))
		return NULL;
	return tp__rt_plan_job(ctx->plan, job, index);
}

/* job, the index-th, is the one checked next: its step read once for all
 * that asks, from the runtime's plan when the job is the plan's. */
static void pods_enter(tj_pods *t, const cJSON *job, int index)
{
	const tp_rt_plan_job *pj = planned(t, job, index);
	t->step = pj ? pj->step : tp__pod_step(job);
}

/* No default is due in the job build_job made, by the plan: the runtime's
 * template is known to need none and the copy (a shell of it: neither a
 * plugin part nor anything else made it whole) rewrote only the node
 * container, which needs none. */
static bool planned_plain(const tj_pods *t, const cJSON *job, int index)
{
	const tp_rt_plan_job *pj = planned(t, job, index);
	const tp_pod_parts *pp = t->parts;
	return pj && (!pp->copy || pp->shallow) && tp__rt_plan_plain(pj, pp->copy ? t->node : NULL);
}

/* The fields of the job as written that the cluster's release does not
 * know: by the plan, only what the trainer's settings wrote into the node
 * container when the rest is the runtime's template and the release has
 * nothing to say about the fields the template has (tp__pod_check_since
 * walked the whole job: 2,100 instructions of make bench's TrainJob review,
 * 3,700 a job of an MPI one, callgrind). The plugins' Pod parts (MPI's and
 * Flux's volumes, mounts and init container) hold no field of the table. */
static void since_of(tj_pods *t, const cJSON *job, int index, tp_podv *since)
{
	const tp_pod_parts *pp = t->parts;
	const tp_rt_plan_job *pj = planned(t, job, index);
	const tp_options *opt = t->ctx->opt;
	const cJSON *node = t->node; /* NULL: the trainer wrote nothing */
	if (node && !pp->shallow) /* made whole by the plugins' parts: found again */
		node = tp_find_named(tp_get_array(pp->copy, "spec.template.spec.containers"),
				     "name", TP_CONTAINER_NODE);
	if (!pj || (t->node && (!node || pj->node_index < 0)) ||
	    !tp__rt_plan_since_silent(pj, opt))
		tp__pod_check_since(since, opt, pp->copy ? pp->copy : tp_member(job, "template"),
				    t->ctx->res);
	else if (node)
		tp__pod_check_since_trainer(since, opt, node, pj->node_index, t->ctx->res);
}

/* job as the check sees it, in t->parts: the trainer's settings and the
 * plugins' Pod parts written into t->parts->copy (NULL: nothing was), then
 * the API server's defaults; since (NULL: none) is given the job as written,
 * before the defaults drop what its release does not keep. TP_EINVAL as
 * overlay. */
static int build_job(tj_pods *t, const cJSON *job, int index, tp_podv *since)
{
	/* member by member: the origins' buffers need no clearing */
	tp_pod_parts *pp = t->parts;
	pp->ctx = t->ctx;
	pp->ml = t->ml;
	pp->cache = t->parts_cache;
	pp->job = job;
	pp->job_name = tp__mstr(job, "name");
	pp->copy = NULL;
	pp->norigins = 0;
	pp->psa_container = pp->psa_note = NULL;
	int rc = overlay(t, job, planned(t, job, index), &t->parts->copy, &t->node);
	pp->shallow = pp->copy != NULL;
	if (!rc)
		rc = tp__plugins_pod_parts(t->parts);
	if (!rc && since)
		since_of(t, job, index, since);
	if (!rc && planned_plain(t, job, index)) {
		/* the runtime's plan: no default is due (no walk of the template) */
	} else if (!rc) { /* last, as the API server defaults the Job the JobSet makes */
		tp_pod_jobset js;
		tp__pod_jobset_of(tp_member(t->ctx->tmpl, "spec"), t->ctx->name, &js);
		if (pp->shallow) { /* read there; made whole when a default is written */
			cJSON *whole = NULL;
			rc = tp__pod_defaults(pp->copy, &js, &whole);
			if (whole) {
				tp__x_drop(pp->copy);
				pp->copy = whole;
				pp->shallow = false;
			}
		} else {
			rc = tp__pod_defaults(tp_member(job, "template"), &js, &pp->copy);
		}
	}
	if (rc) {
		tp__x_drop(t->parts->copy);
		t->parts->copy = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------ origins */

/* The replicated jobs of a template by name. */
static int index_jobs(tp_podv *v, const cJSON *tmpl, tp_nameset *out)
{
	tp__nameset_init(out, v->arena);
	const cJSON *jobs = tp_get_array(tmpl, "spec.replicatedJobs");
	int i = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j; j = j->next, i++) {
		rt_job *r = tp_arena_alloc(v->arena, sizeof(*r));
		if (!r)
			return TP_ENOMEM;
		*r = (rt_job){ j, i };
		if (tp__nameset_put(out, tp__mstr(j, "name"), r))
			return TP_ENOMEM;
	}
	return TP_OK;
}

#define FEW_JOBS 16

/* The jobs of tmpl by name, into *out: filed again for each job with
 * findings while there are few (no arena to make, as before), filed once in
 * *cached (*filed) for all of them when there are many. */
static int jobs_of(tj_pods *t, const cJSON *tmpl, tp_nameset *cached, bool *filed,
		   tp_nameset *out)
{
	size_t n = 0;
	const cJSON *jobs = tp_get_array(tmpl, "spec.replicatedJobs");
	for (const cJSON *j = jobs ? jobs->child : NULL; j && n <= FEW_JOBS; j = j->next)
		n++;
	if (n <= FEW_JOBS)
		return index_jobs(&t->other, tmpl, out);
	if (!t->names_ready) {
		if (tp__podv_init(&t->names))
			return TP_ENOMEM;
		t->names_ready = true;
	}
	if (!*filed && index_jobs(&t->names, tmpl, cached))
		return TP_ENOMEM;
	*filed = true;
	*out = *cached;
	return TP_OK;
}

/* The findings of the job named name in tmpl, into t->other, keyed. */
static int other_findings(tj_pods *t, const cJSON *tmpl, tp_nameset *cached, bool *filed,
			  const char *name, tp_nameset *keys, const rt_job **job)
{
	tp_nameset jobs;
	*job = NULL;
	tp__nameset_init(keys, t->other.arena);
	if (jobs_of(t, tmpl, cached, filed, &jobs))
		return TP_ENOMEM;
	if (!(*job = tp__nameset_get(&jobs, name)))
		return TP_OK;
	size_t start = t->other.n;
	t->other.claims = tmpl == t->ctx->tmpl ? &t->tmpl_claims : &t->base_claims;
	t->other.rjob = name;
	t->other.pods = tp__pod_runtime_count(t->ml, (*job)->job);
	tp__pod_check_job(&t->other, tp_member((*job)->job, "template"));
	tp__pod_check_since(&t->other, t->ctx->opt, tp_member((*job)->job, "template"), NULL);
	for (size_t i = start; i < t->other.n; i++) {
		const tp_pod_finding *f = &t->other.items[i];
		const char *key = tp__pod_key(&t->other, f);
		if (!key || tp__nameset_put(keys, key, f))
			return TP_ENOMEM;
	}
	return t->other.rc;
}

/* The origin of a finding in a plugin's Pod parts, or NULL. */
static const tp_pod_origin *part_origin(const tj_pods *t, const tp_pod_finding *f)
{
	for (size_t i = 0; i < t->parts->norigins; i++) {
		const tp_pod_origin *o = &t->parts->origins[i];
		if (o->container ? is(f->container, o->container) && f->rel &&
					   !strncmp(f->rel, o->rel, strlen(o->rel))
				 : f->value && !strcmp(f->value, o->value))
			return o;
	}
	return NULL;
}

/* The TrainJob field behind a finding in the copy, or NULL. */
static const char *trainjob_field(tj_pods *t, const tp_pod_finding *f)
{
	const cJSON *trainer = t->ctx->trainer;
	const char *rel = f->rel ? f->rel : "";
	const tp_pod_origin *o = part_origin(t, f);
	if (o)
		return o->field;
	if (t->nodes_written && f->list == TP_POD_NONE &&
	    (is(f->path, "spec.parallelism") || is(f->path, "spec.completions")))
		return "spec.trainer.numNodes";
	if (f->list != TP_POD_CONTAINERS || !is(f->container, TP_CONTAINER_NODE))
		return NULL;
	if (!strncmp(rel, ".resources", 10) && tp_member(trainer, "resourcesPerNode"))
		return tp__podv_printf(&t->built, "spec.trainer.resourcesPerNode%s", rel + 10);
	static const char *const members[] = { "image", "command", "args", "env" };
	for (int k = 0; k < 4; k++) {
		size_t n = strlen(members[k]);
		if (rel[0] == '.' && !strncmp(rel + 1, members[k], n) &&
		    (rel[n + 1] == '\0' || rel[n + 1] == '.' || rel[n + 1] == '[') &&
		    tp_member(trainer, members[k]))
			return tp__podv_printf(&t->built, "spec.trainer.%s", members[k]);
	}
	return NULL;
}

/* A finding of the runtime's own template, at the runtime's path; an image
 * the runtime leaves to the TrainJob at spec.trainer.image. */
static int report_runtime(tj_pods *t, const cJSON *job, int index, const tp_pod_finding *f)
{
	const char *rjob = tp__mstr(job, "name");
	const char *where = tp__pod_where(&t->built, rjob, f);
	if (tp__pod_trainjob_fills(job, f))
		return tp__pod_report(t->ctx->res, "spec.trainer.image", f,
				      "%s \"%s\" leaves the image of the trainer's Pods (%s) to the "
				      "TrainJob; set spec.trainer.image",
				      kind_of(t), tp_meta_name(t->ctx->runtime), where);
	const char *path = tp__podv_printf(
		&t->built, "spec.template.spec.replicatedJobs[%d].template.%s", index, f->path);
	const char *jname = job_name(t, rjob);
	if (!where || !path || !jname)
		return TP_ENOMEM;
	return tp__pod_report(t->ctx->res, path, f,
			      "in %s \"%s\" (%s), so Job.batch \"%s\" would be invalid", kind_of(t),
			      tp_meta_name(t->ctx->runtime), where, jname);
}

static int report_other(tj_pods *t, const char *rjob, const tp_pod_finding *f, bool patches)
{
	const char *where = tp__pod_where(&t->built, rjob, f);
	const char *jname = job_name(t, rjob);
	if (!where || !jname)
		return TP_ENOMEM;
	if (patches)
		return tp__pod_report(t->ctx->res, "spec.runtimePatches", f,
				      "the patched template makes Job.batch \"%s\" invalid at %s (%s)",
				      jname, f->path, where);
	const char *field = trainjob_field(t, f);
	const tp_pod_origin *o = part_origin(t, f);
	tp_pod_finding told = *f;
	if (o && o->hint)
		told.hint = o->hint;
	if (field)
		return tp__pod_report(t->ctx->res, field, &told,
				      "Job.batch \"%s\" would be invalid at %s (%s)", jname, f->path,
				      where);
	return tp__pod_report(t->ctx->res, "spec.runtimeRef", f,
			      "Job.batch \"%s\" built with %s \"%s\" would be invalid at %s (%s)",
			      jname, kind_of(t), tp_meta_name(t->ctx->runtime), f->path, where);
}

/* Where each finding of t->built comes from. index: the job's place in
 * ctx->tmpl; copied: the TrainJob wrote into it (its settings or its
 * numNodes). */
static int attribute(tj_pods *t, const cJSON *job, int index, bool copied)
{
	const char *rjob = tp__mstr(job, "name");
	bool patched = t->ctx->tmpl != t->ctx->base;
	int rc = TP_OK;
	if (!copied && !patched) { /* the runtime's own job, as it is */
		for (size_t i = 0; !rc && i < t->built.n; i++)
			rc = report_runtime(t, job, index, &t->built.items[i]);
		return rc;
	}
	if (!t->other_ready && tp__podv_init(&t->other))
		return TP_ENOMEM;
	t->other_ready = true;
	tp__podv_reset(&t->other);
	tp_nameset base_keys, patched_keys;
	const rt_job *base, *pjob;
	tp__nameset_init(&patched_keys, t->other.arena);
	rc = other_findings(t, t->ctx->base, &t->base_jobs, &t->base_filed, rjob, &base_keys, &base);
	if (!rc && copied && patched)
		rc = other_findings(t, t->ctx->tmpl, &t->tmpl_jobs, &t->tmpl_filed, rjob,
				    &patched_keys, &pjob);
	for (size_t i = 0; !rc && i < t->built.n; i++) {
		const tp_pod_finding *f = &t->built.items[i];
		const char *key = tp__pod_key(&t->built, f);
		const tp_pod_finding *rf = key ? tp__nameset_get(&base_keys, key) : NULL;
		if (!key)
			rc = TP_ENOMEM;
		else if (rf && base)
			rc = report_runtime(t, base->job, base->index, rf);
		else
			rc = report_other(t, rjob, f,
					  !copied || tp__nameset_has(&patched_keys, key));
	}
	return rc;
}

/* The initializer's secretRef becomes an envFrom of its containers
 * (plugins/jobset.c): a Secret's name, a DNS-1123 subdomain. */
static void check_initializer_secret(tp_podv *v, const cJSON *initializer)
{
	const char *name = tp_get_str(initializer, "secretRef.name");
	const char *msg = name && *name ? tp__check_dns1123_subdomain(name) : NULL;
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, ".secretRef.name", tp__podv_quote(v, name),
			     "use the Secret's name", "%s", msg);
}

/* The TrainJob's initializer env and secret go into the initializer
 * containers in the plugins' phase: they are checked where the TrainJob
 * holds them. */
static int check_initializer_env(const tp_tj_ctx *ctx)
{
	static const char *const which[] = { "dataset", "model" };
	const cJSON *init = cJSON_IsObject(ctx->initializer) ? ctx->initializer : NULL;
	if (!init)
		return TP_OK;
	tp_podv v;
	if (tp__podv_init(&v))
		return TP_ENOMEM;
	for (int k = 0; k < 2; k++) {
		tp__podv_reset(&v);
		tp__podv_push(&v, k ? "spec.initializer.model" : "spec.initializer.dataset");
		tp__pod_check_env(&v, tp_member(tp_member(init, which[k]), "env"));
		check_initializer_secret(&v, tp_member(init, which[k]));
		for (size_t i = 0; !v.rc && i < v.n; i++)
			v.rc = tp__pod_report(ctx->res, v.items[i].path, &v.items[i],
					      "the %s-initializer's Pods would be invalid", which[k]);
	}
	int rc = v.rc;
	tp__podv_free(&v);
	return rc;
}

/* The check of the job build_job made, read from the runtime's plan when
 * the job is the runtime's own template with at most the trainer's
 * settings in its node container (no runtimePatches; neither the plugins'
 * parts nor a default written: either makes the copy whole).
 * TP_EUNSUPPORTED: the job is checked whole. */
static int replay(tj_pods *t, const cJSON *job, int index)
{
	const tp_rt_plan_job *pj = planned(t, job, index);
	const cJSON *copy = t->parts->copy;
	if (!pj || (copy && !t->parts->shallow))
		return TP_EUNSUPPORTED;
	return tp__rt_plan_replay(&t->built, pj, copy, copy ? t->node : NULL);
}

/* One replicated job of ctx->tmpl, with the trainer's settings, the
 * plugins' Pod parts and the Pod count written in; *checked keeps the copy
 * for Pod Security. */
static int check_job(tj_pods *t, const cJSON *job, int index, tp_pod_checked *checked)
{
	tp__podv_reset(&t->built);
	pods_enter(t, job, index);
	t->built.claims = &t->tmpl_claims;
	t->built.rjob = tp__mstr(job, "name");
	t->built.pods = pods_of(t, job);
	int rc = build_job(t, job, index, &t->built);
	if (rc)
		return rc == TP_ENOMEM ? rc : TP_OK;
	*checked = as_checked(t);
	cJSON *copy = checked->copy;
	if (tp__pod_names_note(&t->gen_names, job, t->step, index, t->built.pods))
		return TP_ENOMEM;
	if (replay(t, job, index) == TP_EUNSUPPORTED)
		tp__pod_check_job(&t->built, copy ? copy : tp_member(job, "template"));
	rc = t->built.rc;
	if (!rc && t->built.n)
		rc = attribute(t, job, index, copy || t->nodes_written);
	return rc;
}

static size_t count(const cJSON *jobs)
{
	size_t n = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j; j = j->next)
		n++;
	return n;
}

static void release_copies(tp_pod_checked *jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++)
		tp__x_drop(jobs[i].copy);
}

void tp__pod_checked_free(tp_pod_checked *jobs, size_t n)
{
	release_copies(jobs, n);
	free(jobs);
}

int tp__pod_checked_jobs(const tp_tj_ctx *given, tp_pod_checked **out, size_t *n)
{
	/* the tests' context: what admission/trainjob.c looks up once, here */
	tp_tj_ctx c = *given;
	const tp_tj_ctx *ctx = &c;
	c.ml = tp_get_object(c.runtime, "spec.mlPolicy");
	c.pgp = tp_get_object(c.runtime, "spec.podGroupPolicy");
	c.trainer = tp_get_object(c.job, "spec.trainer");
	c.initializer = tp_get(c.job, "spec.initializer");
	c.patches = tp_get(c.job, "spec.runtimePatches");
	c.name = tp_meta_name(c.job);
	c.ns = tp_meta_namespace(c.job);
	c.jobs = tp_get_array(c.tmpl, "spec.replicatedJobs");
	tp_pod_parts parts;
	tp_pod_parts_cache cache;
	tj_pods t;
	pods_init(&t, ctx, &parts, &cache);
	const cJSON *jobs = ctx->jobs;
	*n = count(jobs);
	if (!(*out = calloc(*n ? *n : 1, sizeof(**out))))
		return TP_ENOMEM;
	int rc = TP_OK;
	size_t i = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j && rc != TP_ENOMEM; j = j->next, i++) {
		if (!cJSON_IsObject(j))
			continue;
		pods_enter(&t, j, (int)i);
		if (!(rc = build_job(&t, j, (int)i, NULL)))
			(*out)[i] = as_checked(&t);
	}
	if (rc != TP_ENOMEM)
		return TP_OK;
	tp__pod_checked_free(*out, *n);
	*out = NULL;
	return rc;
}

#define FEW_CHECKED 8

/* Every job checked, then Pod Security of them all as checked. */
/* The JobSet's network.subdomain, which the runtime sets for every Pod. */
static int check_network(tj_pods *t, const tp_tj_ctx *ctx)
{
	const char *context = tp__rt_plan_network(ctx->plan);
	if (!context)
		context = tp__podv_printf(&t->built,
					  "in %s \"%s\": every Pod of the TrainJob would be invalid "
					  "(its spec.subdomain)",
					  tp_kind_name(tp_kind_of(ctx->runtime)),
					  tp_meta_name(ctx->runtime));
	return context ? tp__pod_check_subdomain(&t->built, ctx->tmpl, context, ctx->res)
		       : TP_ENOMEM;
}

static int check_jobs(const tp_tj_ctx *ctx)
{
	tp_pod_parts parts;
	tp_pod_parts_cache cache;
	tj_pods t;
	pods_init(&t, ctx, &parts, &cache);
	const cJSON *jobs = ctx->jobs;
	size_t njobs = count(jobs);
	tp_pod_checked few[FEW_CHECKED];
	tp_pod_checked *checked = njobs <= FEW_CHECKED ? few : calloc(njobs, sizeof(*checked));
	if (!checked)
		return TP_ENOMEM;
	if (checked == few)
		memset(few, 0, njobs * sizeof(*few));
	int rc = tp__pod_claims_init(&t.tmpl_claims, tp_member(ctx->tmpl, "spec"));
	int brc = tp__pod_claims_init(&t.base_claims,
				      ctx->base != ctx->tmpl ? tp_member(ctx->base, "spec") : NULL);
	if (ctx->base == ctx->tmpl)
		t.base_claims = t.tmpl_claims; /* the same policies: shared, freed once */
	if (!rc && !(rc = brc) && tp__podv_init(&t.built))
		rc = TP_ENOMEM;
	int i = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j && !rc; j = j->next, i++)
		if (cJSON_IsObject(j))
			rc = check_job(&t, j, i, &checked[i]);
	if (!rc)
		rc = tp__pod_names_check(&t.gen_names, ctx);
	if (!rc)
		rc = check_network(&t, ctx);
	if (!rc)
		rc = check_initializer_env(ctx);
	if (!rc)
		rc = tp__pod_security_trainjob(ctx, checked, njobs);
	if (!rc) /* what the cluster holds decides */
		rc = tp__pod_cluster_state(ctx, checked, njobs);
	release_copies(checked, njobs);
	if (checked != few)
		free(checked);
	tp__pod_claims_free(&t.tmpl_claims);
	if (ctx->base != ctx->tmpl)
		tp__pod_claims_free(&t.base_claims);
	tp__podv_free(&t.built);
	tp__pod_names_free(&t.gen_names);
	if (t.other_ready)
		tp__podv_free(&t.other);
	if (t.names_ready)
		tp__podv_free(&t.names);
	return rc;
}

int tp__pod_check_trainjob(const tp_tj_ctx *ctx)
{
	if (!tp_strict(ctx->opt) || !ctx->runtime || !ctx->tmpl)
		return TP_OK;
	return check_jobs(ctx);
}

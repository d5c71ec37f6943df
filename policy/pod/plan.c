/*
 * pod/plan.c — what a runtime's Pods are, worked out once per runtime
 * version instead of once per TrainJob (issue 32): its template without
 * runtimePatches (a view of it, or the cleaned copy), the volumeClaimPolicies
 * of that template, and each replicated job's check as kube-apiserver will
 * check the Job (tp__pod_check_job) with the runtime's own Pod count, with
 * the marks of the segments a TrainJob can change (pod.h, tp_pod_marks).
 *
 * The store builds it when it takes a runtime (tp__rt_plan_attach, handed to
 * drops it with the runtime's last reference (tp__rt_plan_detach); a
 * runtime from anywhere else (a snapshot, the API server) gets one for the
 * request (tp__rt_plan_new). Plans are found by the runtime's tree
 * (tp__rt_plan_of): a tree is freed only after its plan is detached, so a
 * tree that is alive never meets another tree's plan.
 *
 * A TrainJob's check of a job whose built template is the runtime's with
 * only the trainer's settings written into the node container reads the
 * plan's findings in place (tp__rt_plan_replay) and checks again only the
 * node container's image, env and resources, and the Job spec's rules that
 * read parallelism and completions when its Pod count is not the
 * runtime's: make bench's TrainJob review checked the whole Job template
 * (10,300 instructions of tp__pod_check_job, callgrind).
 */
#include "policy/patch/patch.h"
#include "policy/pod/pod.h"
#include "policy/store/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct tp_rt_plan {
	const cJSON *runtime;
	const cJSON *base; /* the template without patches, or NULL */
	const cJSON *ml, *pgp; /* spec.mlPolicy, spec.podGroupPolicy, or NULL */
	cJSON *owned;      /* the copy behind base when the view cannot be used */
	tp_pod_claims claims;
	tp_rt_plan_job *jobs;
	size_t njobs;
	tp_kind kind;
	char *deprecation;  /* upstream's warning to a TrainJob, or NULL */
	size_t deprecation_len;
	char *network;      /* pod/trainjob.c's context of spec.subdomain's findings */
	struct tp_rt_plan *next; /* in its bucket of the registry */
};

/* For the tests: jobs read from a plan, and whether plans are read (the
 * check without them is what a plan's answer is held to). */
static atomic_size_t replays;
static atomic_bool replay_off;

size_t tp__rt_plan_replays(void)
{
	return atomic_load(&replays);
}

void tp__rt_plan_set_replay(bool on)
{
	atomic_store(&replay_off, !on);
}

/* One replicated job checked as it is, its segments marked; its findings
 * kept in their arena, which goes when there are none (a runtime without
 * findings costs its plan no arena). */
static int plan_job(tp_rt_plan *p, const cJSON *ml, const cJSON *job, tp_rt_plan_job *pj)
{
	const cJSON *tmpl = tp_member(job, "template"); /* as check_job reads it */
	const cJSON *cs = tp_get_array(tmpl, "spec.template.spec.containers");
	pj->job = job;
	pj->step = tp__pod_step(job);
	pj->pods = tp__pod_runtime_count_at(ml, job, pj->step);
	pj->node_index = -1;
	int i = 0;
	for (const cJSON *c = cs ? cs->child : NULL; c && pj->node_index < 0; c = c->next, i++) {
		const char *name = tp__mstr(c, "name");
		if (name && !strcmp(name, TP_CONTAINER_NODE))
			pj->node_index = i;
	}
	pj->marks = (tp_pod_marks){ .node = tp_find_named(cs, "name", TP_CONTAINER_NODE) };
	const char *sub = tp_get_str(tmpl, "spec.template.spec.subdomain");
	pj->plain = !(sub && *sub) && !tp__pod_defaults_due(tmpl, NULL);
	tp_podv v;
	if (tp__podv_init(&v))
		return TP_ENOMEM;
	v.claims = &p->claims;
	v.rjob = tp__mstr(job, "name");
	v.pods = pj->pods;
	v.marks = &pj->marks;
	int rc = tp__pod_since_fields(&v, tmpl, &pj->since);
	if (!rc)
		rc = tp__pod_check_job(&v, tmpl);
	if (rc || !v.n) {
		tp__podv_free(&v);
		pj->planned = !rc;
		return rc;
	}
	pj->arena = v.arena;
	pj->items = v.items;
	pj->n = v.n;
	pj->planned = true;
	return TP_OK;
}

static int plan_jobs(tp_rt_plan *p)
{
	const cJSON *jobs = tp_get_array(p->base, "spec.replicatedJobs");
	const cJSON *ml = p->ml;
	size_t n = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j; j = j->next)
		n++;
	if (tp__pod_claims_init(&p->claims, tp_member(p->base, "spec")))
		return TP_ENOMEM;
	if (!n)
		return TP_OK;
	if (!(p->jobs = calloc(n, sizeof(*p->jobs))))
		return TP_ENOMEM;
	p->njobs = n;
	size_t i = 0;
	for (const cJSON *j = jobs->child; j; j = j->next, i++) {
		p->jobs[i].job = j;
		if (cJSON_IsObject(j) && plan_job(p, ml, j, &p->jobs[i]))
			return TP_ENOMEM;
	}
	return TP_OK;
}

void tp__rt_plan_free(tp_rt_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->njobs; i++)
		tp_arena_free(p->jobs[i].arena);
	free(p->jobs);
	tp__pod_claims_free(&p->claims);
	cJSON_Delete(p->owned);
	free(p->deprecation);
	free(p->network);
	free(p);
}

/* The texts a TrainJob's answer takes from its runtime alone. */
static int plan_texts(tp_rt_plan *p)
{
	const char *name = tp_meta_name(p->runtime);
	if (tp__runtime_is_deprecated(p->runtime)) {
		if (!(p->deprecation = tp__deprecation_text("Referenced ", p->kind, name)))
			return TP_ENOMEM;
		p->deprecation_len = strlen(p->deprecation);
	}
	static const char fmt[] = "in %s \"%s\": every Pod of the TrainJob would be invalid "
				  "(its spec.subdomain)";
	const char *kind = tp_kind_name(p->kind);
	size_t n = sizeof(fmt) + strlen(kind) + strlen(name);
	if (!(p->network = malloc(n)))
		return TP_ENOMEM;
	snprintf(p->network, n, fmt, kind, name);
	return TP_OK;
}

size_t tp__rt_plan_bytes(const tp_rt_plan *p)
{
	size_t n = sizeof(*p) + p->njobs * sizeof(*p->jobs) + p->deprecation_len +
		   (p->deprecation ? 1 : 0) + (p->network ? strlen(p->network) + 1 : 0);
	for (size_t i = 0; i < p->njobs; i++)
		n += p->jobs[i].arena ? tp_arena_used(p->jobs[i].arena) : 0;
	return n + (p->claims.arena ? tp_arena_used(p->claims.arena) : 0);
}

bool tp__rt_plan_deprecation(const tp_rt_plan *p, tp_kind kind, const char **text, size_t *len)
{
	if (!p || p->kind != kind)
		return false;
	*text = p->deprecation;
	*len = p->deprecation_len;
	return true;
}

const char *tp__rt_plan_network(const tp_rt_plan *p)
{
	return p ? p->network : NULL;
}

int tp__rt_plan_new(const cJSON *runtime, tp_rt_plan **out)
{
	*out = NULL;
	tp_rt_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return TP_ENOMEM;
	p->runtime = runtime;
	p->kind = tp_kind_of(runtime);
	p->ml = tp_get_object(runtime, "spec.mlPolicy");
	p->pgp = tp_get_object(runtime, "spec.podGroupPolicy");
	if (plan_texts(p)) {
		tp__rt_plan_free(p);
		return TP_ENOMEM;
	}
	if (!(p->base = tp__runtime_template_view(runtime))) {
		char err[8];
		int rc = tp__runtime_template(runtime, NULL, &p->owned, err, sizeof(err));
		if (rc == TP_ENOMEM) {
			free(p);
			return rc;
		}
		p->base = p->owned; /* NULL: no template; the validator says why */
	}
	if (p->base && plan_jobs(p)) {
		tp__rt_plan_free(p);
		return TP_ENOMEM;
	}
	*out = p;
	return TP_OK;
}

const cJSON *tp__rt_plan_base(const tp_rt_plan *p)
{
	return p ? p->base : NULL;
}

const cJSON *tp__rt_plan_ml(const tp_rt_plan *p)
{
	return p->ml;
}

const cJSON *tp__rt_plan_pgp(const tp_rt_plan *p)
{
	return p->pgp;
}

const tp_rt_plan_job *tp__rt_plan_job(const tp_rt_plan *p, const cJSON *job, int index)
{
	if (!p || index < 0 || (size_t)index >= p->njobs || p->jobs[index].job != job ||
	    !p->jobs[index].planned)
		return NULL;
	return &p->jobs[index];
}

/* ------------------------------------------------------------ replay */

bool tp__rt_plan_plain(const tp_rt_plan_job *pj, const cJSON *node)
{
	if (!pj->plain || atomic_load(&replay_off))
		return false;
	return !node || !tp__pod_defaults_due(NULL, node);
}

bool tp__rt_plan_since_silent(const tp_rt_plan_job *pj, const tp_options *opt)
{
	return !atomic_load(&replay_off) && tp__pod_since_silent(opt, pj->since);
}

static void append_range(tp_podv *v, const tp_rt_plan_job *pj, size_t from, size_t to)
{
	for (size_t i = from; i < to && !v->rc; i++)
		tp__podv_append(v, &pj->items[i]);
}

/* The marks a replay needs, all recorded. */
static bool marked(const tp_pod_marks *m, bool node)
{
	for (int k = 0; k < TP_MARK__COUNT; k++)
		if (!m->seen[k] && (node || k < TP_MARK_IMAGE_BEGIN))
			return false;
	return true;
}

int tp__rt_plan_replay(tp_podv *v, const tp_rt_plan_job *pj, const cJSON *copy,
		       const cJSON *node)
{
	const tp_pod_marks *m = &pj->marks;
	if (atomic_load(&replay_off) || !marked(m, copy != NULL) ||
	    (copy && (!node || pj->node_index < 0)))
		return TP_EUNSUPPORTED;
	atomic_fetch_add(&replays, 1);
	const cJSON *tmpl = copy ? copy : tp_member(pj->job, "template");
	append_range(v, pj, 0, m->at[TP_MARK_HEAD_BEGIN]);
	if (v->pods == pj->pods)
		append_range(v, pj, m->at[TP_MARK_HEAD_BEGIN], m->at[TP_MARK_HEAD_END]);
	else
		tp__pod_check_job_head(v, tmpl);
	if (!copy) {
		append_range(v, pj, m->at[TP_MARK_HEAD_END], pj->n);
		return v->rc;
	}
	size_t mark = tp__podv_push(v, "spec.template.spec");
	size_t cmark = tp__podv_push_index(v, ".containers", pj->node_index);
	tp__podv_enter(v, TP_POD_CONTAINERS, TP_CONTAINER_NODE);
	append_range(v, pj, m->at[TP_MARK_HEAD_END], m->at[TP_MARK_IMAGE_BEGIN]);
	tp__pod_check_container_image(v, node);
	append_range(v, pj, m->at[TP_MARK_IMAGE_END], m->at[TP_MARK_ENV_BEGIN]);
	tp__pod_check_env(v, tp_member(node, "env"));
	append_range(v, pj, m->at[TP_MARK_ENV_END], m->at[TP_MARK_RES_BEGIN]);
	tp__pod_check_container_resources(v, node);
	append_range(v, pj, m->at[TP_MARK_RES_END], pj->n);
	tp__podv_leave(v);
	tp__podv_pop(v, cmark);
	tp__podv_pop(v, mark);
	return v->rc;
}

/* ------------------------------------------------------------ registry */

#define FIRST_BUCKETS 64

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static tp_rt_plan **buckets;
static size_t nbuckets, count;

static size_t bucket_of(const cJSON *runtime, size_t n)
{
	uintptr_t x = (uintptr_t)runtime;
	x ^= x >> 17;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 20) & (n - 1);
}

/* Twice the buckets once they average one plan; a failed allocation only
 * leaves the chains longer. */
static void grow(void)
{
	size_t n = nbuckets ? nbuckets * 2 : FIRST_BUCKETS;
	if (count < nbuckets)
		return;
	tp_rt_plan **b = calloc(n, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < nbuckets; i++)
		for (tp_rt_plan *p = buckets[i], *next; p; p = next) {
			next = p->next;
			size_t k = bucket_of(p->runtime, n);
			p->next = b[k];
			b[k] = p;
		}
	free(buckets);
	buckets = b;
	nbuckets = n;
}

int tp__rt_plan_attach(const cJSON *runtime)
{
	tp_rt_plan *p;
	int rc = tp__rt_plan_new(runtime, &p);
	if (rc)
		return rc;
	pthread_mutex_lock(&reg_lock);
	grow();
	if (!nbuckets) {
		pthread_mutex_unlock(&reg_lock);
		tp__rt_plan_free(p);
		return TP_ENOMEM;
	}
	size_t k = bucket_of(runtime, nbuckets);
	p->next = buckets[k];
	buckets[k] = p;
	count++;
	pthread_mutex_unlock(&reg_lock);
	return TP_OK;
}

void tp__rt_plan_detach(const cJSON *runtime)
{
	tp_rt_plan *gone = NULL;
	pthread_mutex_lock(&reg_lock);
	for (tp_rt_plan **pp = nbuckets ? &buckets[bucket_of(runtime, nbuckets)] : NULL;
	     pp && *pp; pp = &(*pp)->next)
		if ((*pp)->runtime == runtime) {
			gone = *pp;
			*pp = gone->next;
			count--;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	tp__rt_plan_free(gone);
}

const tp_rt_plan *tp__rt_plan_of(const cJSON *runtime)
{
	const tp_rt_plan *found = NULL;
	pthread_mutex_lock(&reg_lock);
	for (const tp_rt_plan *p = nbuckets ? buckets[bucket_of(runtime, nbuckets)] : NULL; p;
	     p = p->next)
		if (p->runtime == runtime) {
			found = p;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	return found;
}

/* The store is below this layer and cannot call it: the plan hands the
 * store its attach and detach when the program starts, before any runtime
 * is put (a program that links no TrainJob check links no plan, and its
 * store keeps none). */
__attribute__((constructor)) static void plan_with_the_store(void)
{
	static const tp__store_derived d = {
		.put = tp__rt_plan_attach,
		.drop = tp__rt_plan_detach,
	};
	tp__store_set_derived(&d);
}

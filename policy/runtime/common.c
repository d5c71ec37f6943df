/*
 * runtime/common.c — what several plugins read the same way: trainer.numNodes
 * and the template's jobs for the TrainJob checks, reserved environment
 * variables, and the trainer's resources and GPU/CPU counts (which the
 * torch, TorchTune, MPI and XGBoost plugins all derive counts from).
 */
#include "policy/runtime/runtime.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/index.h"
#include "policy/core/quantity.h"

/* ------------------------------------------------------ TrainJob checks */

/* Upstream's rules read trainer.numNodes with a default of 1, not the
 * runtime's mlPolicy.numNodes (docs/kubeflow-upstream.md §2.4). */
long long tp__tj_num_nodes(const tp_tj_ctx *ctx)
{
	long long n;
	return tp_get_int(ctx->job, "spec.trainer.numNodes", &n) ? n : 1;
}

const cJSON *tp__tj_job(const cJSON *tmpl, const char *name)
{
	return tp_find_named(tp_get_array(tmpl, "spec.replicatedJobs"), "name", name);
}

const cJSON *tp__tj_pod_spec(const cJSON *rjob)
{
	return tp_get_object(rjob, "template.spec.template.spec");
}

/* ------------------------------------------------------ containers by job */

struct tp__jc_entry {
	const char *job, *name;
	cJSON *container;
};

static uint64_t jc_hash(const char *job, const char *name)
{
	return tp__hash_str(job) * 0x9e3779b97f4a7c15ull + tp__hash_str(name);
}

/* Calls fn for each container, then each init container, of the first job
 * of each name; the number of calls. */
static size_t jc_walk(tp__job_containers *t, const cJSON *jobs, tp_strset *seen, bool file,
		      int *rc)
{
	static const char *const lists[] = { "containers", "initContainers" };
	size_t n = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j && !*rc; j = j->next) {
		const char *job = tp_get_str(j, "name");
		bool fresh = false;
		if (!job || (*rc = tp__strset_add(seen, job, &fresh)) || !fresh)
			continue;
		for (int k = 0; k < 2; k++) {
			const cJSON *c;
			cJSON_ArrayForEach(c, tp_get_array(tp__tj_pod_spec(j), lists[k])) {
				const char *name = tp_get_str(c, "name");
				if (!name || !file) {
					n += name != NULL;
					continue;
				}
				struct tp__jc_entry *e = &t->entries[t->n++];
				*e = (struct tp__jc_entry){ job, name, (cJSON *)c };
				if ((*rc = tp__htab_put(&t->tab, jc_hash(job, name), e)))
					return n;
			}
		}
	}
	return n;
}

int tp__job_containers_init(tp__job_containers *t, const cJSON *jobs)
{
	*t = (tp__job_containers){ .tab = TP_HTAB_INIT };
	tp_strset seen = TP_STRSET_INIT;
	int rc = TP_OK;
	size_t n = jc_walk(t, jobs, &seen, false, &rc);
	tp__strset_free(&seen);
	if (rc || !n)
		return rc;
	if (!(t->entries = calloc(n, sizeof(*t->entries))) || tp__htab_reserve(&t->tab, n))
		return TP_ENOMEM;
	seen = (tp_strset)TP_STRSET_INIT;
	jc_walk(t, jobs, &seen, true, &rc);
	tp__strset_free(&seen);
	return rc;
}

cJSON *tp__job_containers_get(const tp__job_containers *t, const char *job, const char *name)
{
	if (!job || !name || !t->n)
		return NULL;
	size_t pos = 0;
	for (const struct tp__jc_entry *e; (e = tp__htab_next(&t->tab, jc_hash(job, name), &pos));)
		if (!strcmp(e->job, job) && !strcmp(e->name, name))
			return e->container;
	return NULL;
}

void tp__job_containers_free(tp__job_containers *t)
{
	tp__htab_free(&t->tab);
	free(t->entries);
	*t = (tp__job_containers){ .tab = TP_HTAB_INIT };
}

/* ------------------------------------------------------ names */

void tp__name_after(char *out, size_t n, const char *tj, const char *suffix)
{
	size_t la = strlen(tj), lb = strlen(suffix);
	la = la < n - 1 ? la : n - 1;
	lb = lb < n - 1 - la ? lb : n - 1 - la;
	memcpy(out, tj, la);
	memcpy(out + la, suffix, lb);
	out[la + lb] = '\0';
}

/* ------------------------------------------------------ env names */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool tp__listed(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* Go's sets.List of the intersection: sorted, each name once, "[A B]". */
int tp__tj_reserved_envs(tp_tj_ctx *ctx, const char *const *reserved, size_t n)
{
	const char *found[16];
	size_t nfound = 0;
	const cJSON *env = tp_get_array(ctx->trainer, "env");
	for (const cJSON *e = env ? env->child : NULL; e; e = e->next) {
		const char *name = tp_get_str(e, "name");
		if (name && tp__listed(reserved, n, name) && !tp__listed(found, nfound, name) &&
		    nfound < sizeof(found) / sizeof(found[0]))
			found[nfound++] = name;
	}
	if (nfound == 0)
		return TP_OK;
	qsort(found, nfound, sizeof(found[0]), cmp_str);
	tp_buf b = TP_BUF_INIT(4096);
	int rc = tp_buf_addc(&b, '[');
	for (size_t i = 0; i < nfound; i++)
		rc |= tp_buf_addf(&b, "%s%s", i ? " " : "", found[i]);
	rc |= tp_buf_addc(&b, ']');
	if (!rc)
		rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.trainer.env",
				   tp_result_value(ctx->res, env),
				   "must not have reserved envs, invalid envs configured: %s", b.data);
	tp_buf_free(&b);
	return rc ? TP_ENOMEM : TP_OK;
}

/* ------------------------------------------------------ resources */

const cJSON *tp__trainer_resources(const cJSON *trainer, const cJSON *runtime)
{
	const cJSON *r = tp_get_object(trainer, "resourcesPerNode");
	if (r)
		return r;
	/* The runtime's own (read from the runtime, not from a template that
	 * resourcesPerNode may have been merged into already). */
	const cJSON *jobs = tp_get_array(runtime, "spec.template.spec.replicatedJobs");
	const cJSON *job;
	cJSON_ArrayForEach(job, jobs) {
		const char *anc = tp_meta_label(tp_get(job, "template"), TP_LABEL_ANCESTOR);
		const char *name = tp_get_str(job, "name");
		if (!(name && !strcmp(name, TP_JOB_NODE)) && !(anc && !strcmp(anc, TP_ANCESTOR_TRAINER)))
			continue;
		const cJSON *c = tp_find_named(tp_get(job, "template.spec.template.spec.containers"),
					       "name", TP_CONTAINER_NODE);
		if (c)
			return tp_get_object(c, "resources");
	}
	return NULL;
}

static bool contains_gpu(const char *s)
{
	for (; *s; s++)
		if (tolower((unsigned char)s[0]) == 'g' && tolower((unsigned char)s[1]) == 'p' &&
		    tolower((unsigned char)s[2]) == 'u')
			return true;
	return false;
}

static long long ceil_of(const cJSON *v)
{
	tp_quantity q;
	int64_t n;
	if (tp__quantity_from_json(v, &q) || tp__quantity_ceil(&q, &n) || n < 0)
		return 0;
	return n;
}

long long tp__gpu_count(const cJSON *resources)
{
	static const char *const lists[] = { "requests", "limits" };
	for (int i = 0; i < 2; i++) {
		const cJSON *r;
		cJSON_ArrayForEach(r, tp_get_object(resources, lists[i]))
			if (r->string && contains_gpu(r->string))
				return ceil_of(r);
	}
	return 0;
}

long long tp__cpu_count(const cJSON *resources)
{
	const cJSON *cpu = tp_get(resources, "requests.cpu");
	if (!cpu)
		cpu = tp_get(resources, "limits.cpu");
	return cpu ? ceil_of(cpu) : 0;
}

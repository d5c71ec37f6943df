/*
 * admission/runtime_strict.c — the strict profile's "Rules beyond upstream" for
 * runtimes (docs/rules.md): what the guides promise about a runtime that
 * upstream's webhook does not enforce. Every denial here ends with a hint
 * of what to write instead.
 *
 * Where the schema layer already ran (f->schema) its checks are not
 * repeated; where it did not, the strict rules that mirror a CRD rule still
 * hold, since the guides promise them too.
 */
#include "policy/admission/runtime.h"
#include "policy/core/index.h"
#include "policy/pod/pod.h"

#include <stdio.h>
#include <string.h>

#define PATH_LEN 320
#define FRAMEWORK_PATH "metadata.labels[" TP_LABEL_FRAMEWORK "]"

static const char *const frameworks[] = { "torch", "deepspeed", "mlx", "jax", "xgboost",
					  "torchtune", "mpi", "flux", NULL };

static bool in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* ------------------------------------------------------ metadata */

static void check_framework(tp_result *res, const cJSON *obj)
{
	const char *fw = tp_meta_label(obj, TP_LABEL_FRAMEWORK);
	if (!fw || !*fw) {
		tp_result_add(res, TP_FIELD_REQUIRED, FRAMEWORK_PATH, NULL,
			      "every runtime must name its ML framework; add the label "
			      TP_LABEL_FRAMEWORK ", e.g. \"torch\"");
		return;
	}
	const char *msg = tp__check_label_value(fw);
	if (msg) {
		tp_result_add(res, TP_FIELD_INVALID, FRAMEWORK_PATH, tp_result_quote(res, fw),
			      "%s; use a framework name such as \"torch\"", msg);
		return;
	}
	if (!in_list(fw, frameworks))
		tp_result_warn(res, "metadata.labels[trainer.kubeflow.org/framework]: \"%s\" is not a "
			       "framework the SDK knows (torch, deepspeed, mlx, jax, xgboost, "
			       "torchtune, mpi, flux)", fw);
}

/* ------------------------------------------------------ ancestor steps */

/* Each job labelled with a step an earlier job has: found through the first
 * job of each of the three steps, not a scan of the jobs before it. */
static void check_ancestors(const tp__rt_flavor *f, tp_result *res, const cJSON *jobs)
{
	static const char *const steps[] = { TP_ANCESTOR_DATASET, TP_ANCESTOR_MODEL,
					     TP_ANCESTOR_TRAINER, NULL };
	int first[3] = { -1, -1, -1 };
	char path[PATH_LEN];
	int i = 0;
	for (const cJSON *job = jobs ? jobs->child : NULL; job; job = job->next, i++) {
		const char *step = tp__pod_step(job);
		if (!step)
			continue;
		int s = 0;
		while (steps[s] && strcmp(step, steps[s]))
			s++;
		if (!steps[s]) {
			tp_result_warn(res, "spec.template.spec.replicatedJobs[%d]: unknown "
				       "trainjob-ancestor-step \"%s\" is "
				       "ignored; use dataset-initializer, model-initializer or trainer",
				       i, step);
			continue;
		}
		if (first[s] < 0) {
			first[s] = i;
			continue;
		}
		tp__rt_pathf(path, sizeof(path), "spec.template.spec.replicatedJobs[%d].template."
			     "metadata.labels[" TP_LABEL_ANCESTOR "]", i);
		tp_result_add(res, TP_FIELD_DUPLICATE, path, tp_result_quote(res, step),
			      "replicatedJobs[%d] already has this step; label one replicated "
			      "job per step", first[s]);
	}
	/* OME's controller does not read Kubeflow's ancestor label */
	if (first[2] < 0 && !f->ome)
		tp_result_warn(res, "no replicated job is labelled trainjob-ancestor-step: trainer; "
			       "TrainJob trainer settings will not be applied");
}

/* ------------------------------------------------------ template */

/* The names of the jobs before the one looked at: a walk of those jobs
 * while there are few (no table to make for the usual runtime), a set of
 * them past TP_INDEX_SCAN_MAX, so that a wide runtime stays linear. */
typedef struct earlier {
	const cJSON *first, *upto; /* the jobs [first, upto) */
	bool hashed;
	tp_strset set;
} earlier;

static void earlier_init(earlier *e, const cJSON *jobs)
{
	size_t n = 0;
	for (const cJSON *j = jobs ? jobs->child : NULL; j && n <= TP_INDEX_SCAN_MAX; j = j->next)
		n++;
	*e = (earlier){ jobs ? jobs->child : NULL, jobs ? jobs->child : NULL,
			n > TP_INDEX_SCAN_MAX, TP_STRSET_INIT };
}

static bool earlier_has(const earlier *e, const char *name)
{
	if (e->hashed)
		return tp__strset_has(&e->set, name);
	for (const cJSON *p = e->first; p != e->upto; p = p->next) {
		const char *pn = tp__mstr(p, "name");
		if (pn && !strcmp(pn, name))
			return true;
	}
	return false;
}

/* job, the one looked at, joins the earlier ones: TP_OK or TP_ENOMEM. */
static int earlier_pass(earlier *e, const cJSON *job)
{
	e->upto = job->next;
	const char *name = tp__mstr(job, "name");
	return e->hashed && name ? tp__strset_add(&e->set, name, NULL) : TP_OK;
}

static void check_depends_on(tp_result *res, const earlier *e, const cJSON *job, int i,
			     bool schema)
{
	const cJSON *deps = tp__marr(job, "dependsOn");
	char path[PATH_LEN];
	int k = 0;
	for (const cJSON *d = deps ? deps->child : NULL; d; d = d->next, k++) {
		const char *name = tp__mstr(d, "name");
		if (name && !earlier_has(e, name)) {
			tp__rt_pathf(path, sizeof(path),
				 "spec.template.spec.replicatedJobs[%d].dependsOn[%d].name", i, k);
			tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, name),
				      "must name a replicated job listed before this one; reorder "
				      "replicatedJobs or fix the name");
		}
		const char *status = tp__mstr(d, "status");
		if (!schema && status && strcmp(status, "Ready") && strcmp(status, "Complete")) {
			tp__rt_pathf(path, sizeof(path),
				 "spec.template.spec.replicatedJobs[%d].dependsOn[%d].status", i, k);
			tp_result_add(res, TP_FIELD_UNSUPPORTED, path, tp_result_quote(res, status),
				      "supported values: \"Ready\", \"Complete\"");
		}
	}
}

/* The path of the i-th job's name, printed only when there is something to
 * say about it (snprintf on every job cost 2,230 instructions a review). */
static const char *job_name_path(char *buf, size_t n, int i)
{
	return tp__rt_pathf(buf, n, "spec.template.spec.replicatedJobs[%d].name", i);
}

static int check_job_names(tp_result *res, const cJSON *jobs, bool schema)
{
	char path[PATH_LEN];
	earlier e;
	earlier_init(&e, jobs);
	int rc = TP_OK, i = 0;
	for (const cJSON *job = jobs ? jobs->child : NULL; job && !rc; job = job->next, i++) {
		const char *name = tp__mstr(job, "name");
		const char *msg = name ? tp__check_dns1035_label(name) : NULL;
		if (msg)
			tp_result_add(res, TP_FIELD_INVALID, job_name_path(path, sizeof(path), i),
				      tp_result_quote(res, name),
				      "%s; use a short lower-case name such as \"node\"", msg);
		/* with the schema layer, the list-map key's duplicates are its */
		if (name && !schema && earlier_has(&e, name))
			tp_result_add(res, TP_FIELD_DUPLICATE, job_name_path(path, sizeof(path), i),
				      tp_result_quote(res, name),
				      "replicated job names must be unique; rename one");
		if (!schema)
			rc = earlier_pass(&e, job);
	}
	tp__strset_free(&e.set);
	return rc;
}

static int check_template(const tp__rt_flavor *f, tp_result *res, const cJSON *js)
{
	const cJSON *jobs = tp__marr(js, "replicatedJobs");
	check_ancestors(f, res, jobs);
	int rc = check_job_names(res, jobs, f->schema);
	bool depends = false;
	earlier e;
	earlier_init(&e, jobs);
	int i = 0;
	for (const cJSON *job = jobs ? jobs->child : NULL; job && !rc; job = job->next, i++) {
		depends = depends || tp__marr(job, "dependsOn");
		check_depends_on(res, &e, job, i, f->schema);
		rc = earlier_pass(&e, job);
	}
	tp__strset_free(&e.set);
	if (rc)
		return rc;
	const cJSON *sp = tp__mobj(js, "startupPolicy");
	const char *order = tp__mstr(sp, "startupPolicyOrder");
	/* the CEL rule already speaks for InOrder when the schema layer ran */
	bool cel = f->schema && !f->ome && order && !strcmp(order, "InOrder");
	if (sp && depends && !cel)
		tp_result_add(res, TP_FIELD_INVALID, "spec.template.spec.startupPolicy",
			      tp_result_value(res, sp),
			      "cannot be set together with replicatedJobs[].dependsOn; remove "
			      "startupPolicy and order the jobs with dependsOn");
	return TP_OK;
}

/* ------------------------------------------------------ entry */

int tp__runtime_strict(const tp__rt_flavor *f, tp_operation op, tp_kind kind, const cJSON *obj,
		       tp_result *res)
{
	if (!f->ome)
		check_framework(res, obj);
	if (op == TP_OP_CREATE && tp__runtime_is_deprecated(obj))
		tp__warn_deprecated(res, "", kind, tp_meta_name(obj));
	const cJSON *spec = tp__mobj(obj, "spec");
	const cJSON *ml = tp__mobj(spec, "mlPolicy");
	if (ml)
		tp__runtime_strict_ml(f, res, ml);
	const cJSON *pg = tp__mobj(spec, "podGroupPolicy");
	if (pg)
		tp__runtime_strict_pod_group(f, res, pg);
	/* TP_ENOMEM: a set of job names could not grow (never an allow) */
	return check_template(f, res, tp__mobj(tp__mobj(spec, "template"), "spec"));
}

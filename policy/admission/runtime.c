/*
 * admission/runtime.c — admission of TrainingRuntime and ClusterTrainingRuntime
 * (trainer.kubeflow.org): which layers run for which operation, kind and
 * profile, and upstream's own webhook rule, validateReplicatedJobs.
 *
 * Upstream (docs/kubeflow-upstream.md §2.1, §2.2):
 *   ClusterTrainingRuntime CREATE: deprecation warning + validateReplicatedJobs;
 *   ClusterTrainingRuntime UPDATE: validateReplicatedJobs, no warning;
 *   TrainingRuntime CREATE: validateReplicatedJobs; UPDATE: nothing.
 * The schema/CEL layer runs before all of that, unless no_schema. The strict
 * profile adds admission/runtime_strict.c on top, which also judges TrainingRuntime
 * updates.
 */
#include "policy/admission/runtime.h"
#include "policy/pod/pod.h"
#include "policy/schema/schema.h"

#include <stdio.h>
#include <string.h>

/* The container each ancestor step must hold. */
static const char *required_container(const char *step)
{
	if (!strcmp(step, TP_ANCESTOR_TRAINER))
		return TP_CONTAINER_NODE;
	if (!strcmp(step, TP_ANCESTOR_MODEL))
		return TP_CONTAINER_MODEL;
	if (!strcmp(step, TP_ANCESTOR_DATASET))
		return TP_CONTAINER_DATASET;
	return NULL;
}

/* A job's members read one name at a time (tp__pod_step's label the same
 * way): the dotted paths tp_get splits cost 3,755 instructions of a
 * ClusterTrainingRuntime review of three jobs (callgrind). */
static void check_job(tp_result *res, const cJSON *job, int i)
{
	const char *step = tp__pod_step(job);
	const char *container = step ? required_container(step) : NULL;
	if (!container)
		return; /* unlabelled jobs and unknown steps are not upstream's concern */
	char path[160];
	/* JobSet's schema defaults replicas to 1 */
	const cJSON *replicas = tp_member(job, "replicas");
	long long n = 1;
	if (replicas && !cJSON_IsNull(replicas) && (!tp_json_is_int(replicas, &n) || n != 1)) {
		tp__rt_pathf(path, sizeof(path), "spec.template.spec.replicatedJobs[%d].replicas", i);
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_value(res, replicas),
			      "always must be 1");
	}
	const cJSON *job_spec = tp__mobj(tp__mobj(job, "template"), "spec");
	const cJSON *pod_spec = tp__mobj(tp__mobj(job_spec, "template"), "spec");
	const cJSON *cs = tp__marr(pod_spec, "containers");
	if (tp_find_named(cs, "name", container))
		return;
	tp__rt_pathf(path, sizeof(path),
		 "spec.template.spec.replicatedJobs[%d].template.spec.template.spec.containers", i);
	tp_result_add(res, TP_FIELD_INVALID, path, tp_result_value(res, cs),
		      "must contain the required container for the ancestor: %s", step);
}

int tp__runtime_replicated_jobs(const cJSON *obj, tp_result *res)
{
	const cJSON *jobset = tp__mobj(tp__mobj(obj, "spec"), "template");
	const cJSON *jobs = tp__marr(tp__mobj(jobset, "spec"), "replicatedJobs");
	int i = 0;
	for (const cJSON *job = jobs ? jobs->child : NULL; job; job = job->next, i++)
		if (cJSON_IsObject(job))
			check_job(res, job, i);
	return TP_OK;
}

int tp__validate_trainer_runtime(const tp_options *opt, tp_operation op, tp_kind kind,
				 const cJSON *obj, const cJSON *old_obj, tp_result *res)
{
	if (!obj || !res)
		return TP_EINVAL;
	if (kind != TP_KIND_TRAINING_RUNTIME && kind != TP_KIND_CLUSTER_TRAINING_RUNTIME)
		return TP_EUNSUPPORTED;
	if (op != TP_OP_CREATE && op != TP_OP_UPDATE)
		return TP_OK; /* DELETE and CONNECT are always allowed */
	bool strict = tp_strict(opt);
	bool schema = !(opt && opt->no_schema);
	tp__rt_flavor f = { .ome = false, .guides = strict, .schema = schema };
	bool by_crd = false; /* the CRD's schema ran: the built-in one stands aside */
	int rc = tp__schema_layer(opt, op, obj, old_obj, res, &by_crd);
	if (rc)
		return rc;
	if (schema && !by_crd)
		tp__runtime_schema(&f, op, obj, op == TP_OP_UPDATE ? old_obj : NULL, res);

	bool cluster = kind == TP_KIND_CLUSTER_TRAINING_RUNTIME;
	if (cluster && op == TP_OP_CREATE && tp__runtime_is_deprecated(obj))
		tp__warn_deprecated(res, "", kind, tp_meta_name(obj));
	/* upstream skips TrainingRuntime updates (issue #3686); strict does not */
	if (cluster || op == TP_OP_CREATE || strict)
		tp__runtime_replicated_jobs(obj, res);
	if (strict && (rc = tp__runtime_strict(&f, op, kind, obj, res)))
		return rc;
	/* the Pods every TrainJob of this runtime would have refused */
	return strict ? tp__pod_check_runtime(opt, kind, obj, res) : TP_OK;
}

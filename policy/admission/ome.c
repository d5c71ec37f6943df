/*
 * admission/ome.c — admission of OME's runtimes (ome.io/v1beta1 TrainingRuntime
 * and ClusterTrainingRuntime, docs/admission-protocol.md §3).
 *
 * kubeflow profile: what OME's own validators do — deny when a replicated job
 * has replicas != 1, "replicas for job <i> must be 1, got <n>". OME answers
 * with admission.Denied (a bare message) and stops at the first such job; here
 * the same text is a field error at spec.template.spec.replicatedJobs[i].replicas,
 * the field it is about, and only the first offender is reported, as OME does.
 * An absent replicas is JobSet's schema default, 1.
 *
 * strict profile: that, plus the runtime rules of docs/rules.md with OME's field
 * set (runtime_strict*.c with f->ome), without the framework-label rule.
 * The schema layer checks OME's Go types (there is no CEL in OME's CRDs).
 */
#include "policy/admission/runtime.h"
#include "policy/schema/schema.h"

#include <stdio.h>

static void check_replicas(tp_result *res, const cJSON *obj)
{
	const cJSON *jobs = tp_get_array(obj, "spec.template.spec.replicatedJobs");
	char path[128];
	int i = 0;
	for (const cJSON *job = jobs ? jobs->child : NULL; job; job = job->next, i++) {
		const cJSON *r = tp_get(job, "replicas");
		long long n = 1;
		if (!r || cJSON_IsNull(r) || (tp_json_is_int(r, &n) && n == 1))
			continue;
		const char *shown = tp_result_value(res, r);
		tp__rt_pathf(path, sizeof(path), "spec.template.spec.replicatedJobs[%d].replicas", i);
		tp_result_add(res, TP_FIELD_INVALID, path, shown,
			      "replicas for job %d must be 1, got %s", i, shown);
		return;
	}
}

int tp__validate_ome_runtime(const tp_options *opt, tp_operation op, tp_kind kind,
			     const cJSON *obj, const cJSON *old_obj, tp_result *res)
{
	if (!obj || !res)
		return TP_EINVAL;
	if (kind != TP_KIND_OME_TRAINING_RUNTIME && kind != TP_KIND_OME_CLUSTER_TRAINING_RUNTIME)
		return TP_EUNSUPPORTED;
	if (op != TP_OP_CREATE && op != TP_OP_UPDATE)
		return TP_OK; /* DELETE and CONNECT are always allowed */
	bool strict = tp_strict(opt);
	tp__rt_flavor f = { .ome = true, .guides = strict, .schema = !(opt && opt->no_schema) };
	bool by_crd = false; /* the CRD's schema ran: the built-in one stands aside */
	int rc = tp__schema_layer(opt, op, obj, old_obj, res, &by_crd);
	if (rc)
		return rc;
	if (f.schema && !by_crd)
		tp__runtime_schema(&f, op, obj, op == TP_OP_UPDATE ? old_obj : NULL, res);
	check_replicas(res, obj);
	return strict ? tp__runtime_strict(&f, op, kind, obj, res) : TP_OK;
}

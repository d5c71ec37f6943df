/*
 * admission/validate.c — tp_validate: one entry point that sends an object to the
 * validator of its kind (runtimes of both API groups, TrainJobs, JobSets),
 * and the verdict on objects of the pre-release kubeflow.org API. With
 * opt->crds, the object's CRD is checked (schema/engine.c) in place of the
 * built-in schema layer, by each kind's validator.
 */
#include "policy/admission/runtime.h"
#include "policy/core/deadline.h"
#include "policy/core/internal.h"
#include "policy/schema/schema.h"

#include <string.h>

/* Objects written for the older guides (apiVersion kubeflow.org/v2alpha1) are
 * refused by the API server; offline we say why and what to write instead. */
static void deny_outdated(const cJSON *obj, tp_result *res)
{
	const char *av = tp_get_str(obj, "apiVersion");
	tp_result_add(res, TP_FIELD_INVALID, "apiVersion", tp_result_quote(res, av ? av : ""),
		      "outdated API version of the pre-release guides: use apiVersion "
		      "\"trainer.kubeflow.org/v1alpha1\" (and runtimeRef apiGroup "
		      "\"trainer.kubeflow.org\")");
}

/* On UPDATE the old object must be the same kind of thing: anything else is a
 * caller's mix-up that no rule below could judge. */
static bool old_matches(tp_kind k, const cJSON *old_obj)
{
	return !old_obj || cJSON_IsNull(old_obj) || tp_kind_of(old_obj) == k;
}

static int validate_runtime(const tp_options *opt, tp_operation op, const cJSON *obj,
			    const cJSON *old_obj, tp_result *res)
{
	if (!obj || !res)
		return TP_EINVAL;
	tp_kind k = tp_kind_of(obj);
	if (!old_matches(k, old_obj))
		return TP_EINVAL;
	switch (k) {
	case TP_KIND_TRAINING_RUNTIME:
	case TP_KIND_CLUSTER_TRAINING_RUNTIME:
		return tp__validate_trainer_runtime(opt, op, k, obj, old_obj, res);
	case TP_KIND_OME_TRAINING_RUNTIME:
	case TP_KIND_OME_CLUSTER_TRAINING_RUNTIME:
		return tp__validate_ome_runtime(opt, op, k, obj, old_obj, res);
	default:
		return TP_EUNSUPPORTED;
	}
}

int tp_validate_runtime(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res)
{
	return tp__deadline_status(validate_runtime(opt, op, obj, old_obj, res));
}

static int validate(const tp_options *opt, tp_operation op, const cJSON *obj,
		    const cJSON *old_obj, tp_result *res)
{
	if (!obj || !res)
		return TP_EINVAL;
	tp_kind k = tp_kind_of(obj);
	if (!old_matches(k, old_obj))
		return TP_EINVAL;
	/* DELETE and CONNECT carry nothing upstream checks. */
	if (op == TP_OP_DELETE || op == TP_OP_CONNECT)
		return TP_OK;
	if (op == TP_OP_UPDATE && (!old_obj || cJSON_IsNull(old_obj)))
		old_obj = NULL;
	switch (k) {
	case TP_KIND_TRAINJOB:
		return tp_validate_trainjob(opt, op, obj, old_obj, res);
	case TP_KIND_JOBSET: {
		bool by_crd;
		int rc = tp__schema_layer(opt, op, obj, old_obj, res, &by_crd);
		return rc ? rc : tp_validate_jobset(opt, op, obj, old_obj, res);
	}
	case TP_KIND_OUTDATED:
		deny_outdated(obj, res);
		return TP_OK;
	case TP_KIND_UNKNOWN: {
		/* a kind only its CRD knows (OptimizationJob), or a version or kind
		 * of a served group that no CRD serves */
		bool by_crd;
		int rc = tp__schema_layer(opt, op, obj, old_obj, res, &by_crd);
		return rc ? rc : by_crd ? TP_OK : TP_EUNSUPPORTED;
	}
	case TP_KIND_PRIORITY_CLASS: /* looked up, never validated */
	case TP_KIND_CONFIGMAP:
	case TP_KIND_NAMESPACE:
	case TP_KIND__COUNT:
		return TP_EUNSUPPORTED;
	default:
		return validate_runtime(opt, op, obj, old_obj, res);
	}
}

/* A deadline that passed during the work makes the answer TP_ETIMEDOUT,
 * whatever the layers made of the loops it stopped: never a verdict. */
int tp_validate(const tp_options *opt, tp_operation op, const cJSON *obj, const cJSON *old_obj,
		tp_result *res)
{
	return tp__deadline_status(validate(opt, op, obj, old_obj, res));
}

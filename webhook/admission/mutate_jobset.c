/*
 * mutate_jobset.c — /mutate-jobset-x-k8s-io-v1alpha2-jobset: a JobSet that a
 * TrainJob owns is patched into the JobSet the expansion builds from that
 * TrainJob and its runtime (both from the store).
 *
 * The built fields are laid over the JobSet (tp_jobset_reconcile): what the
 * API server, JobSet's own defaulting and other controllers set stays. The
 * result must pass JobSet's own admission rules, so this webhook never
 * produces a JobSet that JobSet's webhook would refuse.
 *
 * On UPDATE it follows upstream's controller, which rebuilds a JobSet only
 * while the TrainJob or the JobSet is suspended: a running JobSet, or one
 * whose TrainJob is gone (garbage collection on its way), passes untouched.
 */
#include <string.h>

#include "webhook/admission/decide.h"

#define TRAINER_API_PREFIX "trainer.kubeflow.org/"

/* The controller owner reference naming a TrainJob, or NULL. */
static const cJSON *trainjob_owner(const cJSON *jobset)
{
	const cJSON *ref;
	cJSON_ArrayForEach(ref, tp_get_array(jobset, "metadata.ownerReferences"))
	{
		const char *av = tp_get_str(ref, "apiVersion"), *kind = tp_get_str(ref, "kind");
		if (tp_get_true(ref, "controller") && kind && !strcmp(kind, "TrainJob") && av &&
		    !strncmp(av, TRAINER_API_PREFIX, strlen(TRAINER_API_PREFIX)))
			return ref;
	}
	return NULL;
}

static const cJSON *built_jobset(const cJSON *list)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, tp_get_array(list, "items"))
		if (tp_kind_of(item) == TP_KIND_JOBSET)
			return item;
	return NULL;
}

/* Upstream rebuilds an existing JobSet only while it or its TrainJob is
 * suspended. */
static bool rebuilt_on_update(const tw_review *rv, const cJSON *tj)
{
	return tp_get_true(tj, "spec.suspend") || tp_get_true(rv->old_object, "spec.suspend") ||
	       tp_get_true(rv->object, "spec.suspend");
}

int tw_decide_jobset(const tp_options *opt, const tw_review *rv, tw_answer *ans)
{
	if (rv->op != TP_OP_CREATE && rv->op != TP_OP_UPDATE)
		return TP_OK;
	const cJSON *owner = trainjob_owner(rv->object);
	if (!owner)
		return TP_OK; /* not ours: allowed untouched */
	const char *ns = tp_meta_namespace(rv->object);
	const char *name = tp_get_str(owner, "name");
	const cJSON *tj = NULL;
	char why[512];
	int lrc = tp_lookup_get(opt, TP_KIND_TRAINJOB, ns, name ? name : "", &tj, why, sizeof(why));
	if (lrc == TP_ENOMEM)
		return lrc;
	/* The TrainJob could not be read: a CREATE, or an UPDATE that suspension
	 * says upstream would rebuild, cannot be answered; any other UPDATE
	 * passes untouched as it would with the TrainJob at hand. */
	if (lrc == TP_EUNAVAILABLE &&
	    (rv->op == TP_OP_CREATE || tp_get_true(rv->old_object, "spec.suspend") ||
	     tp_get_true(rv->object, "spec.suspend")))
		return tp_result_lookup_failed(ans->res, "metadata.ownerReferences",
					       TP_KIND_TRAINJOB, name, why);
	if (rv->op == TP_OP_UPDATE && (!tj || !rebuilt_on_update(rv, tj)))
		return TP_OK;
	if (!tj)
		return tp_result_add(ans->res, TP_FIELD_NOT_FOUND, "metadata.ownerReferences",
				     tp_result_quote(ans->res, name ? name : ""),
				     "the owning TrainJob %s/%s does not exist: create the TrainJob "
				     "first; its controller creates this JobSet", ns,
				     name ? name : "");
	cJSON *list = NULL, *target = NULL;
	/* The JobSet alone needs no key: the expansion leaves the Secrets out. */
	int rc = tp_expand(opt, tj, NULL, &list, ans->res);
	const cJSON *built = rc ? NULL : built_jobset(list);
	if (rc == TP_ENOMEM)
		goto done;
	if (!built) {
		rc = TP_OK;
		if (tp_result_ok(ans->res))
			tp_result_add(ans->res, TP_FIELD_INTERNAL, "spec", NULL,
				      "the expansion of TrainJob %s/%s built no JobSet", ns, name);
		goto done;
	}
	if ((rc = tp_jobset_reconcile(rv->object, built, &target)) != TP_OK)
		goto done;
	rc = tp_validate_jobset(opt, rv->op, target, rv->old_object, ans->res);
	if (!rc && tp_result_ok(ans->res))
		rc = tp_jsonpatch_diff(rv->object, target, &ans->patch);
done:
	cJSON_Delete(target);
	cJSON_Delete(list);
	return rc;
}

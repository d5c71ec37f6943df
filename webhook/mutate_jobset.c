/*
 * mutate_jobset.c — /mutate-jobset-x-k8s-io-v1alpha2-jobset: a JobSet that a
 * TrainJob owns is patched into the JobSet the expansion builds from that
 * TrainJob and its runtime (both from the store).
 *
 * The JobSet keeps what the API server and other controllers own (its
 * metadata but for labels and annotations the runtime sets, its owner
 * references, its status); its spec becomes the built one. The result must
 * pass JobSet's own admission rules, so this webhook never produces a JobSet
 * that JobSet's webhook would refuse.
 */
#include <string.h>

#include "webhook/admission.h"

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

/* Labels or annotations: the built ones over the object's own. */
static int overlay_map(cJSON *meta, const cJSON *built_meta, const char *key)
{
	const cJSON *from = tp_get_object(built_meta, key);
	if (!from)
		return TP_OK;
	cJSON *to = cJSON_GetObjectItemCaseSensitive(meta, key);
	if (!cJSON_IsObject(to)) {
		cJSON_DeleteItemFromObjectCaseSensitive(meta, key);
		if (!(to = cJSON_AddObjectToObject(meta, key)))
			return TP_ENOMEM;
	}
	const cJSON *kv;
	cJSON_ArrayForEach(kv, from)
	{
		cJSON *v = cJSON_Duplicate(kv, 1);
		if (!v)
			return TP_ENOMEM;
		if (cJSON_GetObjectItemCaseSensitive(to, kv->string))
			cJSON_ReplaceItemInObjectCaseSensitive(to, kv->string, v);
		else
			cJSON_AddItemToObject(to, kv->string, v);
	}
	return TP_OK;
}

/* The request's JobSet with the built spec, labels and annotations. */
static int reconciled(const cJSON *object, const cJSON *built, cJSON **out)
{
	cJSON *t = cJSON_Duplicate(object, 1);
	cJSON *spec = cJSON_Duplicate(tp_get(built, "spec"), 1);
	if (!t || !spec) {
		cJSON_Delete(t);
		cJSON_Delete(spec);
		return TP_ENOMEM;
	}
	if (cJSON_GetObjectItemCaseSensitive(t, "spec"))
		cJSON_ReplaceItemInObjectCaseSensitive(t, "spec", spec);
	else
		cJSON_AddItemToObject(t, "spec", spec);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(t, "metadata");
	const cJSON *bmeta = tp_get_object(built, "metadata");
	int rc = TP_OK;
	if (cJSON_IsObject(meta) && ((rc = overlay_map(meta, bmeta, "labels")) != TP_OK ||
				     (rc = overlay_map(meta, bmeta, "annotations")) != TP_OK)) {
		cJSON_Delete(t);
		return rc;
	}
	*out = t;
	return TP_OK;
}

static const cJSON *built_jobset(const cJSON *list)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, tp_get_array(list, "items"))
		if (tp_kind_of(item) == TP_KIND_JOBSET)
			return item;
	return NULL;
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
	const cJSON *tj = tp_store_get(opt->store, TP_KIND_TRAINJOB, ns, name ? name : "");
	if (!tj)
		return tp_result_add(ans->res, TP_FIELD_NOT_FOUND, "metadata.ownerReferences",
				     tp_result_quote(ans->res, name ? name : ""),
				     "the owning TrainJob %s/%s is not in the webhook's store: "
				     "create the TrainJob first (or wait for the store to sync)",
				     ns, name ? name : "");
	cJSON *list = NULL, *target = NULL;
	/* The JobSet alone needs no SSH key: the expansion leaves the Secret out. */
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
	if ((rc = reconciled(rv->object, built, &target)) != TP_OK)
		goto done;
	rc = tp_validate_jobset(opt, rv->op, target, rv->old_object, ans->res);
	if (!rc && tp_result_ok(ans->res))
		rc = tp_jsonpatch_diff(rv->object, target, &ans->patch);
done:
	cJSON_Delete(target);
	cJSON_Delete(list);
	return rc;
}

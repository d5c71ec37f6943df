/*
 * expand/expand.c — tp_expand and tp_expand_with_runtime: a TrainJob and its
 * runtime into the v1 List of the JobSet upstream's controller would create
 * and the objects that go with it (docs/kubeflow-upstream.md §5).
 *
 * The steps: check the JSON types of what is read (expand/check.c), build the
 * runtime info (expand/info.c), run the plugin phases (plugins/registry.c), then wrap
 * the finished template as a JobSet and list it first, the companions the
 * plugins made (MPI's and Flux's ConfigMap and Secret, PodGroup) after it. Nothing reads a
 * clock, a random source or a hash order, so equal inputs give equal bytes.
 */
#include "policy/core/deadline.h"
#include "policy/expand/expand.h"
#include "policy/plugins/plugin.h"
#include "policy/store/store.h"

#include <string.h>

/* metadata of the JobSet, in Go's ObjectMeta member order. */
static cJSON *jobset_metadata(tp_expansion *x)
{
	cJSON *meta = cJSON_CreateObject();
	if (!meta || !cJSON_AddStringToObject(meta, "name", x->name) ||
	    (*x->ns && !cJSON_AddStringToObject(meta, "namespace", x->ns)))
		goto oom;
	static const char *const maps[][2] = { { "labels", "metadata.labels" },
					       { "annotations", "metadata.annotations" } };
	for (int i = 0; i < 2; i++) {
		const cJSON *m = tp_get_object(x->tmpl, maps[i][1]);
		if (m && m->child && tp__x_set(meta, maps[i][0], cJSON_Duplicate(m, 1)))
			goto oom;
	}
	if (tp__x_set(meta, "ownerReferences", tp__x_owner_refs(x)))
		goto oom;
	return meta;
oom:
	cJSON_Delete(meta);
	return NULL;
}

static cJSON *jobset(tp_expansion *x)
{
	cJSON *js = cJSON_CreateObject();
	if (!js || !cJSON_AddStringToObject(js, "apiVersion", TP_APIVERSION_JOBSET) ||
	    !cJSON_AddStringToObject(js, "kind", "JobSet") ||
	    tp__x_set(js, "metadata", jobset_metadata(x)))
		goto oom;
	/* The spec moves over whole: the pod sets that point into it are done. */
	cJSON *spec = cJSON_DetachItemFromObjectCaseSensitive(x->tmpl, "spec");
	if (!spec || !cJSON_AddItemToObject(js, "spec", spec)) {
		cJSON_Delete(spec);
		goto oom;
	}
	return js;
oom:
	cJSON_Delete(js);
	return NULL;
}

static int assemble(tp_expansion *x, cJSON **out_list)
{
	cJSON *js = jobset(x);
	cJSON *list = js ? cJSON_CreateObject() : NULL;
	cJSON *items = NULL;
	if (!list || !cJSON_AddStringToObject(list, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(list, "kind", "List") ||
	    !(items = cJSON_AddArrayToObject(list, "items"))) {
		cJSON_Delete(js);
		cJSON_Delete(list);
		return TP_ENOMEM;
	}
	cJSON_AddItemToArray(items, js);
	while (x->companions->child)
		cJSON_AddItemToArray(items, cJSON_DetachItemViaPointer(x->companions,
									 x->companions->child));
	*out_list = list;
	return TP_OK;
}

static bool ssh_key_usable(const tp_ssh_key *key)
{
	return key->private_pem && *key->private_pem && key->public_line && *key->public_line;
}

int tp_expand_with_runtime(const tp_options *opt, const cJSON *trainjob, const cJSON *runtime,
			   const tp_keys *keys, cJSON **out_list, tp_result *res)
{
	static const tp_keys no_keys = { NULL, NULL };
	if (!out_list || !res)
		return TP_EINVAL;
	*out_list = NULL;
	tp_expansion x = { .opt = opt, .trainjob = trainjob, .runtime = runtime,
			.keys = keys ? keys : &no_keys, .res = res };
	if (tp__expand_check_inputs(&x))
		return TP_EINVAL;
	x.name = tp_meta_name(trainjob);
	x.ns = tp_meta_namespace(trainjob);
	x.trainer = tp_get_object(trainjob, "spec.trainer");
	x.ml = tp_get_object(runtime, "spec.mlPolicy");
	x.pod_group = tp_get_object(runtime, "spec.podGroupPolicy");
	/* No key at all: the caller wants the JobSet, not the Secret (the mutating
	 * JobSet route); half a key is a mistake. */
	if (tp_get_object(x.ml, "mpi") && x.keys->ssh && !ssh_key_usable(x.keys->ssh)) {
		tp_result_add(res, TP_FIELD_REQUIRED, "spec.runtimeRef", NULL,
			      "an SSH key is required to expand a TrainJob whose runtime has "
			      "mlPolicy.mpi: give both the private PEM and the public line "
			      "(expand --ssh-key FILE)");
		return TP_EINVAL;
	}
	if (!(x.companions = cJSON_CreateArray()))
		return TP_ENOMEM;
	int rc = tp__expand_info(&x);
	if (rc == TP_OK)
		rc = tp__plugins_expand(&x);
	if (rc == TP_OK)
		rc = assemble(&x, out_list);
	if (rc == TP_ENOMEM && tp_result_error_count(res) == 0)
		tp_result_add(res, TP_FIELD_INTERNAL, "spec", NULL, "out of memory");
	tp__expand_info_free(&x);
	cJSON_Delete(x.companions);
	if ((rc = tp__deadline_status(rc)) == TP_ETIMEDOUT) {
		cJSON_Delete(*out_list); /* a list built after the deadline is no answer either */
		*out_list = NULL;
	}
	return rc;
}

/* ----------------------------------------------------------- lookup */

static int not_found(const tp_options *opt, tp_result *res, bool cluster, const char *name)
{
	/* Upstream's text; its ClusterTrainingRuntime path is "spec.RuntimeRef". */
	const char *path = cluster && !tp_strict(opt) ? "spec.RuntimeRef" : "spec.runtimeRef";
	tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, name),
		      "%s.%s \"%s\" not found: specified %s must be created before the TrainJob "
		      "is created",
		      cluster ? "clustertrainingruntimes" : "trainingruntimes", TP_GROUP_TRAINER,
		      name, cluster ? "clusterTrainingRuntime" : "trainingRuntime");
	return TP_ENOTFOUND;
}

int tp_expand(const tp_options *opt, const cJSON *trainjob, const tp_keys *keys,
	      cJSON **out_list, tp_result *res)
{
	if (!out_list || !res)
		return TP_EINVAL;
	*out_list = NULL;
	const cJSON *ref = tp_get(trainjob, "spec.runtimeRef");
	const cJSON *name = tp_get(ref, "name");
	if (!cJSON_IsString(name) || !*name->valuestring) {
		tp_result_add(res, TP_FIELD_REQUIRED, "spec.runtimeRef.name", NULL,
			      "the TrainJob must name its runtime");
		return TP_EINVAL;
	}
	const cJSON *k = tp_get(ref, "kind"), *g = tp_get(ref, "apiGroup");
	const char *kind = cJSON_IsString(k) ? k->valuestring : "ClusterTrainingRuntime";
	const char *group = cJSON_IsString(g) ? g->valuestring : TP_GROUP_TRAINER;
	bool cluster = !strcmp(kind, "ClusterTrainingRuntime");
	if (strcmp(group, TP_GROUP_TRAINER) || (!cluster && strcmp(kind, "TrainingRuntime"))) {
		tp_result_add(res, TP_FIELD_PLAIN, NULL, NULL, "unsupported runtime: %s%s%s", kind,
			      *group ? "." : "", group);
		return TP_EUNSUPPORTED;
	}
	/* the runtime the TrainJob was started with, when upstream kept one */
	cJSON *snapshot = NULL;
	int rc = tp__runtime_snapshot(opt, trainjob, TP_FIELD_INVALID, "spec.runtimeRef", res,
				      &snapshot);
	if (rc == TP_OK) {
		rc = tp_expand_with_runtime(opt, trainjob, snapshot, keys, out_list, res);
		cJSON_Delete(snapshot);
		return rc;
	}
	if (rc != TP_ENOTFOUND)
		return rc;
	const cJSON *rt = NULL;
	rc = tp__runtime_lookup(opt, trainjob, res, &rt);
	if (rc == TP_ENOTFOUND)
		return not_found(opt, res, cluster, name->valuestring);
	if (rc)
		return rc;
	return tp_expand_with_runtime(opt, trainjob, rt, keys, out_list, res);
}

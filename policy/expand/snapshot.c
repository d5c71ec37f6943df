/*
 * expand/snapshot.c — the runtime a TrainJob was started with.
 *
 * Upstream's controller copies the runtime into a ConfigMap
 * `<trainjob>-runtime-snapshot` (data key "runtime", YAML, owned by the
 * TrainJob) the first time it builds the TrainJob's objects, and builds from
 * that copy ever after, so that editing a runtime never changes a TrainJob
 * that already uses it (pkg/runtime/core/snapshot.go at 8c0f5059). The
 * expansion does the same: the snapshot when there is one, else the runtime.
 * A snapshot that is not the TrainJob's, or not its runtime, stops upstream's
 * build, and stops the expansion with upstream's words. TrainJob validation
 * reads the same snapshot (kubeflow/trainer#3960): there such a snapshot is
 * upstream's Internal error at the runtimeRef.
 *
 * Snapshots written before kubeflow/trainer#3922 have no kind and no
 * apiVersion (the controller marshalled a runtime whose TypeMeta client.Get
 * had left empty). Upstream's reader still refuses them as "the wrong
 * runtime", so a TrainJob started under an older controller could never be
 * resumed; here the runtimeRef says what such a snapshot is.
 */
#include "policy/expand/expand.h"

#include <stdio.h>
#include <string.h>

#define SUFFIX TP_RUNTIME_SNAPSHOT_SUFFIX
#define DATA_KEY "runtime"

/* The snapshot's controller owner has the TrainJob's uid. */
static bool owned_by(const cJSON *cm, const cJSON *trainjob)
{
	const char *uid = tp_get_str(trainjob, "metadata.uid");
	const cJSON *ref;
	cJSON_ArrayForEach(ref, tp_get_array(cm, "metadata.ownerReferences")) {
		if (!tp_get_true(ref, "controller"))
			continue;
		const char *owner = tp_get_str(ref, "uid");
		return !strcmp(owner ? owner : "", uid ? uid : "");
	}
	return false;
}

/* How an unusable snapshot is reported (tp__runtime_snapshot's caller). */
typedef struct report {
	const tp_options *opt;
	tp_result *res;
	tp_field_type type;
	const char *path;
} report;

static int invalid(const report *rp, const cJSON *trainjob, const char *detail)
{
	char hint[600] = "";
	if (tp_strict(rp->opt))
		snprintf(hint, sizeof(hint),
			 "; delete ConfigMap %s/%s" SUFFIX " to have the TrainJob built from its "
			 "runtime anew",
			 tp_meta_namespace(trainjob), tp_meta_name(trainjob));
	int rc = tp_result_add(rp->res, rp->type, rp->path, NULL,
			       "unable to get runtime snapshot: invalid runtime snapshot: %s%s", detail,
			       hint);
	return rc ? rc : TP_EINVAL;
}

/* The runtimeRef member, NULL when absent (an unset pointer upstream). */
static const char *ref_member(const cJSON *trainjob, const char *member)
{
	return tp_get_str(tp_get(trainjob, "spec.runtimeRef"), member);
}

/* apiVersion "group/version" → group ("" for the core group). */
static void group_of(const char *api_version, char *out, size_t n)
{
	const char *slash = api_version ? strchr(api_version, '/') : NULL;
	size_t len = slash ? (size_t)(slash - api_version) : 0;
	snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), slash ? api_version : "");
}

/* A string member that says something: absent, null and "" say nothing
 * (Go's TypeMeta reads all three as empty). */
static bool has_text(const cJSON *obj, const char *member)
{
	const char *s = tp_get_str(obj, member);
	return s && *s;
}

static int set_string(cJSON *obj, const char *member, const char *value)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, member);
	return cJSON_AddStringToObject(obj, member, value) ? TP_OK : TP_ENOMEM;
}

/* The runtime kind a runtimeRef names, with the CRD defaults the API server
 * applies (ClusterTrainingRuntime, trainer.kubeflow.org); NULL when it names
 * another kind or group. */
static const char *ref_runtime_kind(const cJSON *trainjob)
{
	const char *kind = ref_member(trainjob, "kind"), *group = ref_member(trainjob, "apiGroup");
	kind = kind ? kind : "ClusterTrainingRuntime";
	if ((group && strcmp(group, TP_GROUP_TRAINER)) ||
	    (strcmp(kind, "ClusterTrainingRuntime") && strcmp(kind, "TrainingRuntime")))
		return NULL;
	return kind;
}

/* A snapshot of an older controller (before kubeflow/trainer#3922): neither
 * kind nor apiVersion, for a runtimeRef that names a runtime kind. It is the
 * runtime the ref names; only its name is checked. */
static bool untyped(const cJSON *rt, const cJSON *trainjob)
{
	return !has_text(rt, "kind") && !has_text(rt, "apiVersion") && ref_runtime_kind(trainjob);
}

/* Write in what an untyped snapshot is, so the rules read a runtime. */
static int infer_type(cJSON *rt, const cJSON *trainjob)
{
	if (!untyped(rt, trainjob))
		return TP_OK;
	int rc = set_string(rt, "apiVersion", TP_APIVERSION_TRAINER);
	return rc ? rc : set_string(rt, "kind", ref_runtime_kind(trainjob));
}

static int check_names(const report *rp, const cJSON *trainjob, const cJSON *rt)
{
	const char *want_name = ref_member(trainjob, "name");
	const char *want_kind = ref_member(trainjob, "kind");
	const char *want_group = ref_member(trainjob, "apiGroup");
	const char *name = tp_meta_name(rt), *kind = tp_get_str(rt, "kind");
	char group[256];
	group_of(tp_get_str(rt, "apiVersion"), group, sizeof(group));
	kind = kind ? kind : "";
	bool type_ok = untyped(rt, trainjob) ||
		       ((!want_kind || !strcmp(kind, want_kind)) &&
			(!want_group || !strcmp(group, want_group)));
	if (type_ok && !strcmp(name, want_name ? want_name : ""))
		return TP_OK;
	char d[1536];
	snprintf(d, sizeof(d),
		 "the snapshot refers to the wrong runtime: expecting a runtime with name, api group "
		 "and kind of \"%s\", \"%s\", \"%s\" but found runtime with name, api group and kind "
		 "of \"%s\", \"%s\", \"%s\"",
		 want_name ? want_name : "", want_group ? want_group : "<any>",
		 want_kind ? want_kind : "<any>", name, group, kind);
	return invalid(rp, trainjob, d);
}

/* The runtime YAML of the snapshot as one object (caller's), or NULL when
 * Go's yaml.Unmarshal would fail. Nothing at all unmarshals into an empty
 * runtime, as it does upstream (whose names then do not match). */
static cJSON *parse_runtime(const char *yaml)
{
	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	cJSON *rt = NULL;
	if (tp_load(yaml, strlen(yaml), NULL, &docs, &err) == TP_OK) {
		if (tp_docs_count(docs) == 0)
			rt = cJSON_CreateObject();
		else if (tp_docs_count(docs) == 1 && cJSON_IsObject(tp_docs_at(docs, 0)->obj))
			rt = tp_docs_take(docs, 0);
	}
	tp_docs_free(docs);
	return rt;
}

int tp__runtime_snapshot(const tp_options *opt, const cJSON *trainjob, tp_field_type type,
			 const char *path, tp_result *res, cJSON **out)
{
	*out = NULL;
	const report rp = { opt, res, type, path };
	const char *tj = tp_meta_name(trainjob), *ns = tp_meta_namespace(trainjob);
	char name[320], why[512];
	int w = snprintf(name, sizeof(name), "%s" SUFFIX, tj);
	if (!*tj || w < 0 || (size_t)w >= sizeof(name))
		return TP_ENOTFOUND;
	const cJSON *cm = NULL;
	int rc = tp_lookup_get(opt, TP_KIND_CONFIGMAP, ns, name, &cm, why, sizeof(why));
	if (rc == TP_ENOTFOUND || rc == TP_ENOMEM)
		return rc;
	if (rc != TP_OK) {
		/* only "not found" falls back to the live runtime (#3960): any
		 * other failure to read the snapshot decides nothing */
		int arc = tp_result_lookup_failed(res, path, TP_KIND_CONFIGMAP, name,
						  rc == TP_EUNAVAILABLE ? why : tp_strerror(rc));
		return arc ? arc : TP_EUNAVAILABLE;
	}
	if (!owned_by(cm, trainjob))
		return invalid(&rp, trainjob,
			       "a snapshot configmap exists but is owned by another object");
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(tp_get(cm, "data"), DATA_KEY);
	if (!cJSON_IsString(data))
		return invalid(&rp, trainjob,
			       "snapshot ConfigMap missing \"" DATA_KEY "\" data key");
	cJSON *rt = parse_runtime(data->valuestring);
	if (!rt)
		return invalid(&rp, trainjob, "unable to unmarshal the snapshot");
	if ((rc = check_names(&rp, trainjob, rt)) || (rc = infer_type(rt, trainjob))) {
		cJSON_Delete(rt);
		return rc;
	}
	*out = rt;
	return TP_OK;
}

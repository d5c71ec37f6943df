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
 * build, and stops the expansion with upstream's words.
 */
#include "policy/expand/expand.h"

#include <stdio.h>
#include <string.h>

#define SUFFIX "-runtime-snapshot"
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

static int invalid(const tp_options *opt, tp_result *res, const cJSON *trainjob,
		   const char *detail)
{
	char hint[600] = "";
	if (tp_strict(opt))
		snprintf(hint, sizeof(hint),
			 "; delete ConfigMap %s/%s" SUFFIX " to have the TrainJob built from its "
			 "runtime anew",
			 tp_meta_namespace(trainjob), tp_meta_name(trainjob));
	int rc = tp_result_add(res, TP_FIELD_INVALID, "spec.runtimeRef", NULL,
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

static int check_names(const tp_options *opt, tp_result *res, const cJSON *trainjob,
		       const cJSON *rt)
{
	const char *want_name = ref_member(trainjob, "name");
	const char *want_kind = ref_member(trainjob, "kind");
	const char *want_group = ref_member(trainjob, "apiGroup");
	const char *name = tp_meta_name(rt), *kind = tp_get_str(rt, "kind");
	char group[256];
	group_of(tp_get_str(rt, "apiVersion"), group, sizeof(group));
	name = name ? name : "";
	kind = kind ? kind : "";
	if ((!want_kind || !strcmp(kind, want_kind)) && (!want_group || !strcmp(group, want_group)) &&
	    !strcmp(name, want_name ? want_name : ""))
		return TP_OK;
	char d[1536];
	snprintf(d, sizeof(d),
		 "the snapshot refers to the wrong runtime: expecting a runtime with name, api group "
		 "and kind of \"%s\", \"%s\", \"%s\" but found runtime with name, api group and kind "
		 "of \"%s\", \"%s\", \"%s\"",
		 want_name ? want_name : "", want_group ? want_group : "<any>",
		 want_kind ? want_kind : "<any>", name, group, kind);
	return invalid(opt, res, trainjob, d);
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

int tp__runtime_snapshot(const tp_options *opt, const cJSON *trainjob, tp_result *res, cJSON **out)
{
	*out = NULL;
	const char *tj = tp_meta_name(trainjob), *ns = tp_meta_namespace(trainjob);
	char name[320], why[512];
	int w = snprintf(name, sizeof(name), "%s" SUFFIX, tj ? tj : "");
	if (!tj || w < 0 || (size_t)w >= sizeof(name))
		return TP_ENOTFOUND;
	const cJSON *cm = NULL;
	int rc = tp_lookup_get(opt, TP_KIND_CONFIGMAP, ns, name, &cm, why, sizeof(why));
	if (rc == TP_EUNAVAILABLE) {
		int arc = tp_result_lookup_failed(res, "spec.runtimeRef", TP_KIND_CONFIGMAP, name, why);
		return arc ? arc : TP_EUNAVAILABLE;
	}
	if (rc != TP_OK)
		return rc == TP_ENOMEM ? rc : TP_ENOTFOUND;
	if (!owned_by(cm, trainjob))
		return invalid(opt, res, trainjob,
			       "a snapshot configmap exists but is owned by another object");
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(tp_get(cm, "data"), DATA_KEY);
	if (!cJSON_IsString(data))
		return invalid(opt, res, trainjob,
			       "snapshot ConfigMap missing \"" DATA_KEY "\" data key");
	cJSON *rt = parse_runtime(data->valuestring);
	if (!rt)
		return invalid(opt, res, trainjob, "unable to unmarshal the snapshot");
	if ((rc = check_names(opt, res, trainjob, rt))) {
		cJSON_Delete(rt);
		return rc;
	}
	*out = rt;
	return TP_OK;
}

/*
 * test_trainjob_snapshot.c — a TrainJob's <trainjob>-runtime-snapshot
 * ConfigMap in validation and expansion, as upstream merged it after
 * 8c0f5059: an UPDATE is validated against the snapshot, the live runtime
 * only when there is none (kubeflow/trainer#3960); an unusable snapshot is an
 * Internal error, an unreadable one an error answer; a snapshot of an older
 * controller, without kind and apiVersion, is accepted (upstream refuses it
 * even after kubeflow/trainer#3922, which only fixed the writer). The store
 * keeps snapshot ConfigMaps, and no other, for offline inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/tj_fixtures.h"

TJ_GROUP_STATE

#define K TP_PROFILE_KUBEFLOW
#define S TP_PROFILE_STRICT
#define TR "TrainingRuntime"
#define CTR "ClusterTrainingRuntime"
#define UID "uid-of-a"
#define TYPED "'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'%s',"

/* A runtime spec whose node container runs `image`. */
#define SPEC(image)                                                                           \
	"'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':[{" \
	"'name':'node','template':{'metadata':{'labels':{"                                     \
	"'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':{"       \
	"'spec':{'containers':[{'name':'node','image':'" image "'}]}}}}}]}}}"

/* The snapshot ConfigMap team-a/<tj>-runtime-snapshot, controller owner
 * owner_uid, holding runtime_json (JSON is YAML) as its "runtime" key; data
 * NULL: no data at all. Allocated outside any arena, for the store. */
static cJSON *snapshot_cm(const char *tj, const char *owner_uid, const char *runtime_json)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s-runtime-snapshot',"
		 "'namespace':'team-a','ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1',"
		 "'kind':'TrainJob','name':'%s','uid':'%s','controller':true}]},'data':{}}",
		 tj, tj, owner_uid);
	cJSON *cm = tt_jsq(text);
	if (runtime_json) {
		cJSON *rt = tt_jsq(runtime_json);
		char *yaml = cJSON_PrintUnformatted(rt);
		cJSON_AddStringToObject(cJSON_GetObjectItem(cm, "data"), "runtime", yaml);
		free(yaml);
		cJSON_Delete(rt);
	}
	return cm;
}

/* A runtime of kind (NULL: no kind and no apiVersion, as controllers before
 * kubeflow/trainer#3922 wrote them) named name, its node image `image`. */
static char *runtime_json(const char *kind, const char *name, const char *labels,
			  const char *image)
{
	static char buf[4][2048];
	static int next;
	char *b = buf[next++ % 4], type[128] = "";
	if (kind)
		snprintf(type, sizeof(type), TYPED, kind);
	char spec[1024];
	snprintf(spec, sizeof(spec), SPEC("%s"), image);
	snprintf(b, sizeof(buf[0]), "{%s'metadata':{'name':'%s','namespace':'team-a','labels':{%s}},%s}",
		 type, name, labels, spec);
	return b;
}

static void put_snapshot(const char *tj, const char *owner, const char *rt)
{
	assert_int_equal(tp_store_put(store, snapshot_cm(tj, owner, rt)), TP_OK);
}

static void drop_snapshot(const char *tj)
{
	char name[128];
	snprintf(name, sizeof(name), "%s-runtime-snapshot", tj);
	assert_int_equal(tp_store_remove(store, TP_KIND_CONFIGMAP, "team-a", name), TP_OK);
}

/* TrainJob team-a/a (uid UID) naming kind/ref. */
static cJSON *job(const char *kind, const char *ref)
{
	cJSON *j = tj_job("a", kind, ref, "");
	cJSON_AddStringToObject(cJSON_GetObjectItem(j, "metadata"), "uid", UID);
	return j;
}

/* Validate op on job (old: the same job) in profile p with opt's lookup. */
static tp_result *check_with(tp_options *opt, tp_profile p, tp_operation op, cJSON *j)
{
	opt->profile = p;
	tp_result_clear(res);
	cJSON *old = op == TP_OP_UPDATE ? cJSON_Duplicate(j, 1) : NULL;
	tp_store_rdlock(store);
	assert_int_equal(tp_validate_trainjob(opt, op, j, old, res), TP_OK);
	tp_store_unlock(store);
	cJSON_Delete(j);
	cJSON_Delete(old);
	tt_dump(res);
	return res;
}

static tp_result *check(tp_profile p, tp_operation op, cJSON *j)
{
	tp_options opt = { .store = store };
	return check_with(&opt, p, op, j);
}

static const tp_field_error *only_error(const tp_result *r)
{
	assert_int_equal(tp_result_error_count(r), 1);
	return tp_result_error_at(r, 0);
}

/* ----------------------------------------------------------- #3960 */

/* The runtime was deleted after the TrainJob started: resuming it (an
 * UPDATE) is validated against the snapshot, not refused as "not found". */
static void update_reads_snapshot_of_deleted_runtime(void **state)
{
	(void)state;
	put_snapshot("a", UID, runtime_json(CTR, "gone", "", "snap"));
	for (tp_profile p = K;; p = S) {
		tp_result *r = check(p, TP_OP_UPDATE, job(CTR, "gone"));
		assert_true(tp_result_ok(r));
		assert_false(tp_result_unavailable(r));
		/* a CREATE has no snapshot of its own: the live runtime, absent */
		r = check(p, TP_OP_CREATE, job(CTR, "gone"));
		/* upstream's Go name in kubeflow, the field as written in strict */
		assert_true(tt_has_error(r, p == S ? "spec.runtimeRef" : "spec.RuntimeRef",
					 "clustertrainingruntimes.trainer."
					 "kubeflow.org \"gone\" not found"));
		if (p == S)
			break;
	}
	drop_snapshot("a");
	put_snapshot("a", UID, runtime_json(TR, "gone-tr", "", "snap"));
	assert_true(tp_result_ok(check(K, TP_OP_UPDATE, job(TR, "gone-tr"))));
	drop_snapshot("a");
}

/* The live runtime was edited (here: labelled deprecated) after the
 * TrainJob started: an UPDATE reads the snapshot's labels, a CREATE the live
 * runtime's. */
static void update_prefers_snapshot_to_edited_runtime(void **state)
{
	(void)state;
	put_snapshot("a", UID, runtime_json(CTR, "torch-distributed", "", "snap"));
	tp_result *r = check(K, TP_OP_UPDATE, job(CTR, "torch-distributed"));
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 0);
	r = check(K, TP_OP_CREATE, job(CTR, "torch-distributed"));
	assert_true(tt_has_warning(r, "Referenced ClusterTrainingRuntime \"torch-distributed\" is "
				      "deprecated"));
	drop_snapshot("a");
	/* and the other way round: a snapshot of a runtime deprecated since */
	put_snapshot("a", UID, runtime_json(CTR, "torch-current", TJ_DEPRECATED, "snap"));
	r = check(K, TP_OP_UPDATE, job(CTR, "torch-current"));
	assert_true(tt_has_warning(r, "Referenced ClusterTrainingRuntime \"torch-current\" is "
				      "deprecated"));
	drop_snapshot("a");
}

/* No snapshot yet (before the first reconcile): the live runtime, as before. */
static void update_without_snapshot_reads_live_runtime(void **state)
{
	(void)state;
	assert_true(tp_result_ok(check(K, TP_OP_UPDATE, job(CTR, "torch-current"))));
	const tp_field_error *e = only_error(check(K, TP_OP_UPDATE, job(CTR, "nope")));
	assert_string_equal(e->path, "spec.RuntimeRef");
	assert_non_null(strstr(e->detail, "specified clusterTrainingRuntime must be created before "
					  "the TrainJob is created"));
	/* a snapshot of another TrainJob is no snapshot of this one */
	put_snapshot("b", "uid-of-b", runtime_json(CTR, "nope", "", "snap"));
	assert_false(tp_result_ok(check(K, TP_OP_UPDATE, job(CTR, "nope"))));
	drop_snapshot("b");
}

/* A lookup over the store that cannot read ConfigMaps: code is its answer. */
struct blind {
	int code;
	int configmap_calls;
};

static int blind_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		     char *why, size_t whylen)
{
	struct blind *b = ctx;
	if (k == TP_KIND_CONFIGMAP) {
		b->configmap_calls++;
		snprintf(why, whylen, "GET /api/v1/namespaces/team-a/configmaps/%s: HTTP 503", name);
		return b->code;
	}
	*out = tp_store_get(store, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

/* Only "not found" falls back to the live runtime: a snapshot nobody could
 * read decides nothing (an error answer the API server may retry), even
 * when the live runtime would pass. */
static void unreadable_snapshot_decides_nothing(void **state)
{
	(void)state;
	struct blind b = { .code = TP_EUNAVAILABLE };
	tp_lookup l = { blind_get, NULL, &b };
	tp_options opt = { .lookup = &l };
	for (int round = 0; round < 2; round++) {
		tp_result *r = check_with(&opt, round ? S : K, TP_OP_UPDATE, job(CTR, "torch-current"));
		assert_true(tp_result_unavailable(r));
		const tp_field_error *e = only_error(r);
		assert_int_equal(e->type, TP_FIELD_INTERNAL);
		assert_string_equal(e->path, round ? "spec.runtimeRef" : "spec.RuntimeRef");
		assert_string_equal(e->detail, "configmaps \"a-runtime-snapshot\" could not be looked "
					       "up: GET /api/v1/namespaces/team-a/configmaps/"
					       "a-runtime-snapshot: HTTP 503; the request can be "
					       "retried");
	}
	/* any other failure of the lookup is no "not found" either */
	b.code = TP_EIO;
	tp_result *r = check_with(&opt, K, TP_OP_UPDATE, job(TR, "team-torch"));
	assert_true(tp_result_unavailable(r));
	assert_true(tt_has_error(r, "spec.runtimeRef", "could not be looked up: input/output error"));
	/* CREATE does not ask for it */
	b.configmap_calls = 0;
	assert_true(tp_result_ok(check_with(&opt, K, TP_OP_CREATE, job(CTR, "torch-current"))));
	assert_int_equal(b.configmap_calls, 0);
}

/* A snapshot that is there but unusable: upstream's Internal error at its
 * runtimeRef path (spec.RuntimeRef for a ClusterTrainingRuntime), with its
 * words; strict says how to get out of it. A verdict, not an error answer. */
static void unusable_snapshot_is_internal_error(void **state)
{
	(void)state;
	put_snapshot("a", "uid-of-another-a", runtime_json(CTR, "torch-current", "", "snap"));
	const char *owned = "unable to get runtime snapshot: invalid runtime snapshot: a snapshot "
			    "configmap exists but is owned by another object";
	tp_result *r = check(K, TP_OP_UPDATE, job(CTR, "torch-current"));
	const tp_field_error *e = only_error(r);
	assert_false(tp_result_unavailable(r));
	assert_int_equal(e->type, TP_FIELD_INTERNAL);
	assert_string_equal(e->path, "spec.RuntimeRef");
	assert_string_equal(e->detail, owned);
	e = only_error(check(K, TP_OP_UPDATE, job(TR, "team-torch")));
	assert_string_equal(e->path, "spec.runtimeRef");
	e = only_error(check(S, TP_OP_UPDATE, job(CTR, "torch-current")));
	assert_non_null(strstr(e->detail, owned));
	assert_non_null(strstr(e->detail, "; delete ConfigMap team-a/a-runtime-snapshot to have the "
					  "TrainJob built from its runtime anew"));
	drop_snapshot("a");
	/* no "runtime" key; another runtime's snapshot */
	put_snapshot("a", UID, NULL);
	e = only_error(check(K, TP_OP_UPDATE, job(CTR, "torch-current")));
	assert_string_equal(e->detail, "unable to get runtime snapshot: invalid runtime snapshot: "
				       "snapshot ConfigMap missing \"runtime\" data key");
	drop_snapshot("a");
	put_snapshot("a", UID, runtime_json(TR, "torch-current", "", "snap"));
	e = only_error(check(K, TP_OP_UPDATE, job(CTR, "torch-current")));
	assert_int_equal(e->type, TP_FIELD_INTERNAL);
	assert_non_null(strstr(e->detail, "the snapshot refers to the wrong runtime"));
	drop_snapshot("a");
}

/* ----------------------------------------------------------- #3922 */

/* A snapshot an older controller wrote, without kind and apiVersion: the
 * runtime the runtimeRef names (upstream refuses it as the wrong runtime).
 * Its name must still match; a half-typed one is not an old controller's. */
static void untyped_snapshot_is_the_referenced_runtime(void **state)
{
	(void)state;
	put_snapshot("a", UID, runtime_json(NULL, "gone", "", "snap"));
	assert_true(tp_result_ok(check(K, TP_OP_UPDATE, job(CTR, "gone"))));
	assert_true(tp_result_ok(check(S, TP_OP_UPDATE, job(CTR, "gone"))));
	/* the TrainingRuntime it names, by the same token */
	assert_true(tp_result_ok(check(K, TP_OP_UPDATE, job(TR, "gone"))));
	const tp_field_error *e = only_error(check(K, TP_OP_UPDATE, job(CTR, "other")));
	assert_non_null(strstr(e->detail, "expecting a runtime with name, api group and kind of "
					  "\"other\", \"trainer.kubeflow.org\", "
					  "\"ClusterTrainingRuntime\" but found runtime with name, "
					  "api group and kind of \"gone\", \"\", \"\""));
	drop_snapshot("a");
	put_snapshot("a", UID, "{'apiVersion':'trainer.kubeflow.org/v1alpha1','metadata':"
			       "{'name':'gone'}," SPEC("snap") "}");
	e = only_error(check(K, TP_OP_UPDATE, job(CTR, "gone")));
	assert_non_null(strstr(e->detail, "found runtime with name, api group and kind of \"gone\", "
					  "\"trainer.kubeflow.org\", \"\""));
	drop_snapshot("a");
}

/* The expansion (the JobSet route, `expand`) builds from it too, and reads
 * it as the kind the ref names. */
static void untyped_snapshot_expands(void **state)
{
	(void)state;
	put_snapshot("a", UID, runtime_json(NULL, "torch-current", "", "from-snapshot"));
	cJSON *j = job(CTR, "torch-current");
	tp_options opt = { .profile = K, .store = store };
	cJSON *list = NULL;
	tp_result_clear(res);
	tp_store_rdlock(store);
	int rc = tp_expand(&opt, j, NULL, &list, res);
	tp_store_unlock(store);
	tt_dump(res);
	assert_int_equal(rc, TP_OK);
	const cJSON *js = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0);
	const cJSON *c = tp_get(js, "spec.replicatedJobs");
	c = tp_get(cJSON_GetArrayItem(c, 0), "template.spec.template.spec.containers");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(c, 0), "image"), "from-snapshot");
	cJSON_Delete(list);
	cJSON_Delete(j);
	drop_snapshot("a");
}

/* ----------------------------------------------------------- the store */

/* Offline inputs may hold a TrainJob's snapshot: the store keeps snapshot
 * ConfigMaps, and refuses every other ConfigMap as a kind it does not hold. */
static void store_keeps_snapshot_configmaps_only(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	cJSON *cm = snapshot_cm("x", "u", NULL);
	assert_int_equal(tp_store_put(s, cm), TP_OK);
	tp_store_rdlock(s);
	assert_true(tp_store_get(s, TP_KIND_CONFIGMAP, "team-a", "x-runtime-snapshot") == cm);
	tp_store_unlock(s);
	static const char *const others[] = { "settings", "-runtime-snapshot",
					      "x-runtime-snapshot-old" };
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
		char text[256];
		snprintf(text, sizeof(text), "{'apiVersion':'v1','kind':'ConfigMap','metadata':"
					     "{'name':'%s'}}", others[i]);
		cJSON *o = tt_jsq(text);
		assert_int_equal(tp_store_put(s, o), TP_EUNSUPPORTED);
		cJSON_Delete(o);
	}
	assert_int_equal(tp_store_count(s, TP_KIND_CONFIGMAP), 1);
	tp_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(update_reads_snapshot_of_deleted_runtime),
		cmocka_unit_test(update_prefers_snapshot_to_edited_runtime),
		cmocka_unit_test(update_without_snapshot_reads_live_runtime),
		cmocka_unit_test(unreadable_snapshot_decides_nothing),
		cmocka_unit_test(unusable_snapshot_is_internal_error),
		cmocka_unit_test(untyped_snapshot_is_the_referenced_runtime),
		cmocka_unit_test(untyped_snapshot_expands),
		cmocka_unit_test(store_keeps_snapshot_configmaps_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

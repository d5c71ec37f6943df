/*
 * test_expand_api.c — the expansion as the binary offers it: POST /expand's
 * answers, and the mutating JobSet route (a JobSet owned by a TrainJob is
 * patched into the JobSet the expansion builds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"
#include "webhook/admission/expand_api.h"

#define ROUTE_JS "/mutate-jobset-x-k8s-io-v1alpha2-jobset"

static const char *runtime_json =
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
	"\"metadata\":{\"name\":\"torch\",\"labels\":{\"trainer.kubeflow.org/framework\":\"torch\"}},"
	"\"spec\":{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"metadata\":{"
	"\"labels\":{\"team\":\"ml\"}},\"spec\":{\"replicatedJobs\":[{\"name\":\"node\","
	"\"template\":{\"metadata\":{\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":"
	"\"trainer\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\","
	"\"image\":\"pytorch\"}]}}}}}]}}}}";

static const char *trainjob_json =
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
	"\"metadata\":{\"name\":\"tj\",\"namespace\":\"ns\",\"uid\":\"u-tj\"},"
	"\"spec\":{\"runtimeRef\":{\"name\":\"torch\"},\"trainer\":{\"numNodes\":3}}}";

static const char *trainjob_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
	"metadata:\n  name: tj\n  namespace: ns\n  uid: u-tj\n"
	"spec:\n  runtimeRef:\n    name: torch\n  trainer:\n    numNodes: 3\n";

static tp_store *store_with(bool trainjob)
{
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(tp_store_put(s, tt_json(runtime_json)), TP_OK);
	if (trainjob)
		assert_int_equal(tp_store_put(s, tt_json(trainjob_json)), TP_OK);
	return s;
}

/* ------------------------------------------------------------ /expand */

struct reply {
	int status;
	cJSON *body;
};

static struct reply post_expand(tp_store *store, const char *body)
{
	tw_config cfg = { .store = store, .max_body = TW_DEFAULT_MAX_BODY };
	tp_arena *arena;
	assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_expand_handle(&cfg, body, strlen(body), arena, &out, &oc), TP_OK);
	struct reply r = { oc.http_status, cJSON_Parse(out.data) };
	assert_non_null(r.body);
	tp_buf_free(&out);
	tp_arena_free(arena);
	return r;
}

static const cJSON *first_item(const cJSON *list, const char *kind)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, tp_get_array(list, "items"))
	{
		const char *k = tp_get_str(it, "kind");
		if (k && !strcmp(k, kind))
			return it;
	}
	return NULL;
}

static void expand_json_and_yaml_alike(void **state)
{
	(void)state;
	tp_store *s = store_with(false);
	struct reply j = post_expand(s, trainjob_json);
	struct reply y = post_expand(s, trainjob_yaml);
	assert_int_equal(j.status, 200);
	assert_int_equal(y.status, 200);
	assert_string_equal(tp_get_str(j.body, "apiVersion"), "v1");
	assert_string_equal(tp_get_str(j.body, "kind"), "List");
	const cJSON *js = first_item(j.body, "JobSet");
	assert_non_null(js);
	assert_string_equal(tp_get_str(js, "metadata.name"), "tj");
	assert_string_equal(tp_get_str(js, "metadata.labels.team"), "ml");
	const cJSON *rj = cJSON_GetArrayItem(tp_get_array(js, "spec.replicatedJobs"), 0);
	long long par = 0;
	assert_true(tp_get_int(rj, "template.spec.parallelism", &par));
	assert_int_equal(par, 3);
	assert_true(tp_json_equal(j.body, y.body));
	cJSON_Delete(j.body);
	cJSON_Delete(y.body);
	tp_store_free(s);
}

static void expand_refuses_invalid_with_422(void **state)
{
	(void)state;
	tp_store *s = store_with(false);
	struct reply r = post_expand(s, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
					"\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"tj\","
					"\"namespace\":\"ns\"},\"spec\":{\"runtimeRef\":{\"name\":"
					"\"torch\"},\"trainer\":{\"env\":[{\"name\":\"PET_NNODES\","
					"\"value\":\"1\"}]}}}");
	assert_int_equal(r.status, 422);
	const cJSON *c0 = cJSON_GetArrayItem(tp_get_array(r.body, "causes"), 0);
	assert_string_equal(tp_get_str(c0, "field"), "spec.trainer.env");
	assert_non_null(strstr(tp_get_str(r.body, "error"), "[PET_NNODES]"));
	cJSON_Delete(r.body);
	/* A missing runtime is a refusal too, naming it. */
	struct reply m = post_expand(s, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
					"\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"tj\","
					"\"namespace\":\"ns\"},\"spec\":{\"runtimeRef\":{\"name\":"
					"\"nope\"}}}");
	assert_int_equal(m.status, 422);
	assert_non_null(strstr(tp_get_str(m.body, "error"), "\"nope\" not found"));
	cJSON_Delete(m.body);
	tp_store_free(s);
}

static void expand_bad_bodies_are_400(void **state)
{
	(void)state;
	tp_store *s = store_with(false);
	const char *bodies[] = { "", "{\"a\":", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}",
				 "kind: TrainJob\n---\nkind: TrainJob\n" };
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		struct reply r = post_expand(s, bodies[i]);
		if (r.status != 400)
			fail_msg("body %zu: status %d", i, r.status);
		assert_non_null(tp_get_str(r.body, "error"));
		assert_null(tp_get(r.body, "items"));
		cJSON_Delete(r.body);
	}
	tp_store_free(s);
}

/* ------------------------------------------------------- mutating JobSet */

struct answer {
	bool allowed;
	cJSON *review;
	cJSON *patched; /* the request's object with the patch applied */
	bool has_patch;
};

static cJSON *decode_patch(const char *b64)
{
	/* A small decoder for the test: the codec under test only encodes. */
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(b64);
	char *out = malloc(n);
	size_t o = 0;
	unsigned v = 0;
	int bits = 0;
	for (size_t i = 0; i < n && b64[i] != '='; i++) {
		const char *p = strchr(tab, b64[i]);
		assert_non_null(p);
		v = (v << 6) | (unsigned)(p - tab);
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[o++] = (char)((v >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	cJSON *ops = cJSON_Parse(out);
	free(out);
	assert_non_null(ops);
	return ops;
}

static struct answer mutate_op(tp_store *store, const cJSON *jobset, const cJSON *old)
{
	char *obj = cJSON_PrintUnformatted(jobset);
	char *oldtext = old ? cJSON_PrintUnformatted(old) : NULL;
	size_t n = strlen(obj) + (oldtext ? strlen(oldtext) : 0) + 512;
	char *body = malloc(n);
	snprintf(body, n,
		 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
		 "{\"uid\":\"u-js\",\"kind\":{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\","
		 "\"kind\":\"JobSet\"},\"namespace\":\"ns\",\"operation\":\"%s\",\"object\":%s,"
		 "\"oldObject\":%s}}",
		 old ? "UPDATE" : "CREATE", obj, oldtext ? oldtext : "null");
	cJSON_free(obj);
	cJSON_free(oldtext);
	tw_config cfg = { .store = store, .max_body = TW_DEFAULT_MAX_BODY };
	tp_arena *arena;
	assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_admission_handle(&cfg, tw_route_find(ROUTE_JS), body, strlen(body),
					     arena, &out, &oc),
			 TP_OK);
	if (oc.http_status != 200)
		fail_msg("HTTP %d: %s", oc.http_status, out.data);
	struct answer a = { .allowed = oc.allowed, .review = cJSON_Parse(out.data) };
	const char *patch = tp_get_str(a.review, "response.patch");
	a.has_patch = patch != NULL;
	if (patch) {
		assert_string_equal(tp_get_str(a.review, "response.patchType"), "JSONPatch");
		cJSON *ops = decode_patch(patch);
		assert_int_equal(tp_jsonpatch_apply(jobset, ops, &a.patched), TP_OK);
		cJSON_Delete(ops);
	}
	tp_buf_free(&out);
	tp_arena_free(arena);
	free(body);
	return a;
}

static struct answer mutate(tp_store *store, const cJSON *jobset)
{
	return mutate_op(store, jobset, NULL);
}

static void answer_free(struct answer *a)
{
	cJSON_Delete(a->review);
	cJSON_Delete(a->patched);
}

/* The JobSet the expansion builds for the stored TrainJob. */
static cJSON *built_jobset(tp_store *s)
{
	tp_options opt = { .store = s };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *list = NULL;
	tp_store_rdlock(s);
	int rc = tp_expand(&opt, tp_store_get(s, TP_KIND_TRAINJOB, "ns", "tj"), NULL, &list, res);
	tp_store_unlock(s);
	assert_int_equal(rc, TP_OK);
	cJSON *js = cJSON_Duplicate(first_item(list, "JobSet"), 1);
	cJSON_Delete(list);
	tp_result_free(res);
	assert_non_null(js);
	return js;
}

static void owned_jobset_is_patched_into_the_built_one(void **state)
{
	(void)state;
	tp_store *s = store_with(true);
	cJSON *built = built_jobset(s);
	/* What a controller might have sent: the right owner, a stale spec, and
	 * metadata of its own that must survive. */
	cJSON *req = cJSON_Duplicate(built, 1);
	cJSON *rj = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(req, "spec"),
							   "replicatedJobs"),
				       0);
	cJSON *tspec = cJSON_GetObjectItem(cJSON_GetObjectItem(rj, "template"), "spec");
	cJSON_ReplaceItemInObject(tspec, "parallelism", cJSON_CreateNumber(1));
	cJSON_AddStringToObject(cJSON_GetObjectItem(req, "metadata"), "resourceVersion", "7");
	struct answer a = mutate(s, req);
	assert_true(a.allowed);
	assert_true(a.has_patch);
	assert_true(tp_json_equal(tp_get(a.patched, "spec"), tp_get(built, "spec")));
	assert_string_equal(tp_get_str(a.patched, "metadata.resourceVersion"), "7");
	answer_free(&a);
	/* Already reconciled: no patch at all. */
	a = mutate(s, built);
	assert_true(a.allowed);
	assert_false(a.has_patch);
	assert_null(tp_get(a.review, "response.patchType"));
	answer_free(&a);
	cJSON_Delete(req);
	cJSON_Delete(built);
	tp_store_free(s);
}

static void unowned_jobset_is_left_alone(void **state)
{
	(void)state;
	tp_store *s = store_with(true);
	cJSON *js = tt_json("{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
			    "\"metadata\":{\"name\":\"other\",\"namespace\":\"ns\"},\"spec\":{"
			    "\"replicatedJobs\":[{\"name\":\"w\",\"template\":{}}]}}");
	struct answer a = mutate(s, js);
	assert_true(a.allowed);
	assert_false(a.has_patch);
	answer_free(&a);
	cJSON_Delete(js);
	tp_store_free(s);
}

static void missing_owner_trainjob_is_denied(void **state)
{
	(void)state;
	tp_store *s = store_with(false);
	cJSON *js = tt_json("{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
			    "\"metadata\":{\"name\":\"tj\",\"namespace\":\"ns\",\"ownerReferences\":"
			    "[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
			    "\"TrainJob\",\"name\":\"tj\",\"uid\":\"u\",\"controller\":true}]},"
			    "\"spec\":{}}");
	struct answer a = mutate(s, js);
	assert_false(a.allowed);
	const char *msg = tp_get_str(a.review, "response.status.message");
	assert_non_null(msg);
	assert_non_null(strstr(msg, "metadata.ownerReferences"));
	assert_non_null(strstr(msg, "the owning TrainJob ns/tj does not exist"));
	answer_free(&a);
	cJSON_Delete(js);
	tp_store_free(s);
}


/* MPI needs no SSH key to reconcile a JobSet: the Secret is not its business. */
static void owned_mpi_jobset_needs_no_key(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(
		tp_store_put(s, tt_json("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
					"\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"torch\"},"
					"\"spec\":{\"mlPolicy\":{\"numNodes\":2,\"mpi\":{"
					"\"numProcPerNode\":2}},\"template\":{\"spec\":{"
					"\"replicatedJobs\":[{\"name\":\"launcher\",\"template\":{"
					"\"metadata\":{\"labels\":{\"trainer.kubeflow.org/"
					"trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":"
					"{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"m\"}]"
					"}}}}},{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{"
					"\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"m\"}]"
					"}}}}}]}}}}")),
		TP_OK);
	assert_int_equal(tp_store_put(s, tt_json(trainjob_json)), TP_OK);
	cJSON *built = built_jobset(s);
	const cJSON *vol = tp_find_named(
		tp_get_array(cJSON_GetArrayItem(tp_get_array(built, "spec.replicatedJobs"), 1),
			     "template.spec.template.spec.volumes"),
		"name", "mpi-ssh-auth");
	assert_non_null(vol); /* the mount is there; the Secret comes from elsewhere */
	struct answer a = mutate(s, built);
	assert_true(a.allowed);
	assert_false(a.has_patch);
	answer_free(&a);
	cJSON_Delete(built);
	tp_store_free(s);
}


static bool patch_removes(const struct answer *a)
{
	const char *b64 = tp_get_str(a->review, "response.patch");
	if (!b64)
		return false;
	cJSON *ops = decode_patch(b64);
	bool removes = false;
	const cJSON *op;
	cJSON_ArrayForEach(op, ops)
		removes |= !strcmp(tp_get_str(op, "op"), "remove");
	cJSON_Delete(ops);
	return removes;
}

/* What JobSet's own webhook defaulted stays; the patch only adds and replaces. */
static void create_keeps_jobset_defaults(void **state)
{
	(void)state;
	tp_store *s = store_with(true);
	cJSON *req = built_jobset(s);
	cJSON *spec = cJSON_GetObjectItem(req, "spec");
	cJSON_AddItemToObject(spec, "network", tt_json("{\"enableDNSHostnames\":true}"));
	cJSON *rj = cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "replicatedJobs"), 0);
	cJSON *tspec = cJSON_GetObjectItem(cJSON_GetObjectItem(rj, "template"), "spec");
	cJSON_AddStringToObject(tspec, "completionMode", "Indexed");
	cJSON_ReplaceItemInObject(tspec, "parallelism", cJSON_CreateNumber(1));
	struct answer a = mutate(s, req);
	assert_true(a.allowed);
	assert_true(a.has_patch);
	assert_false(patch_removes(&a));
	assert_true(tp_get_true(a.patched, "spec.network.enableDNSHostnames"));
	const cJSON *pj = cJSON_GetArrayItem(tp_get_array(a.patched, "spec.replicatedJobs"), 0);
	assert_string_equal(tp_get_str(pj, "template.spec.completionMode"), "Indexed");
	long long par = 0;
	assert_true(tp_get_int(pj, "template.spec.parallelism", &par));
	assert_int_equal(par, 3);
	answer_free(&a);
	cJSON_Delete(req);
	tp_store_free(s);
}

/* Upstream rebuilds an existing JobSet only while suspended: a running one
 * passes any UPDATE untouched, and so does one whose TrainJob is gone. */
static void update_reconciles_only_while_suspended(void **state)
{
	(void)state;
	tp_store *s = store_with(true);
	cJSON *old = built_jobset(s);
	cJSON *stale = cJSON_Duplicate(old, 1);
	cJSON *rj = cJSON_GetArrayItem(tp_get(stale, "spec.replicatedJobs"), 0);
	cJSON *tspec = cJSON_GetObjectItem(cJSON_GetObjectItem(rj, "template"), "spec");
	cJSON_ReplaceItemInObject(tspec, "parallelism", cJSON_CreateNumber(1));
	cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(stale, "metadata"), "labels"),
				"kueue.x-k8s.io/queue-name", "q");
	struct answer a = mutate_op(s, stale, stale);
	assert_true(a.allowed);
	assert_false(a.has_patch);
	answer_free(&a);
	/* The TrainJob suspended: rebuilt (here: spec.suspend follows the
	 * TrainJob), and the label someone else set survives. */
	cJSON *labelled = cJSON_Duplicate(old, 1);
	cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(labelled, "metadata"),
						    "labels"),
				"kueue.x-k8s.io/queue-name", "q");
	cJSON *tj = tt_json(trainjob_json);
	cJSON_AddBoolToObject(cJSON_GetObjectItem(tj, "spec"), "suspend", 1);
	assert_int_equal(tp_store_put(s, tj), TP_OK);
	a = mutate_op(s, labelled, old);
	if (!a.allowed)
		fail_msg("denied: %s", tp_get_str(a.review, "response.status.message"));
	assert_true(a.has_patch);
	assert_true(tp_get_true(a.patched, "spec.suspend"));
	const cJSON *labels = tp_get_object(a.patched, "metadata.labels");
	assert_string_equal(cJSON_GetStringValue(
				    cJSON_GetObjectItem(labels, "kueue.x-k8s.io/queue-name")),
			    "q");
	answer_free(&a);
	cJSON_Delete(labelled);
	/* The TrainJob gone from the store: an UPDATE passes, a CREATE does not. */
	tp_store_remove(s, TP_KIND_TRAINJOB, "ns", "tj");
	a = mutate_op(s, stale, stale);
	assert_true(a.allowed);
	assert_false(a.has_patch);
	answer_free(&a);
	a = mutate(s, stale);
	assert_false(a.allowed);
	answer_free(&a);
	cJSON_Delete(stale);
	cJSON_Delete(old);
	tp_store_free(s);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expand_json_and_yaml_alike),
		cmocka_unit_test(expand_refuses_invalid_with_422),
		cmocka_unit_test(expand_bad_bodies_are_400),
		cmocka_unit_test(owned_jobset_is_patched_into_the_built_one),
		cmocka_unit_test(owned_mpi_jobset_needs_no_key),
		cmocka_unit_test(create_keeps_jobset_defaults),
		cmocka_unit_test(update_reconciles_only_while_suspended),
		cmocka_unit_test(unowned_jobset_is_left_alone),
		cmocka_unit_test(missing_owner_trainjob_is_denied),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

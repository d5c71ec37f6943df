/*
 * test_admission.c — the AdmissionReview codec: envelope checks, routing,
 * the answer's shape, and every sample under ../shared/fixtures/admissionreview
 * answered as its README documents.
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
#include "webhook/core/duration.h"
#include "webhook/server/server.h"
#include "webhook/admission/admission.h"

#define ROUTE_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define ROUTE_TR "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime"
#define ROUTE_CTR "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"
#define ROUTE_MUT "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"

/* One call: the body answered on route (NULL: by request.kind), the answer
 * parsed back (NULL when it is no JSON). */
struct call {
	tw_outcome oc;
	cJSON *answer;
	char *text;
};

static void call_free(struct call *c)
{
	cJSON_Delete(c->answer);
	free(c->text);
}

static struct call answer_on(const char *route, const char *body, tp_store *store,
			     tp_profile profile, const char *now)
{
	struct call c = { 0 };
	tw_config cfg = { .store = store, .max_body = TW_DEFAULT_MAX_BODY };
	cfg.opt.profile = profile;
	cfg.opt.now = now;
	tp_arena *arena;
	assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
	tp_buf out = TP_BUF_INIT(0);
	const tw_route *r = route ? tw_route_find(route) : NULL;
	if (route)
		assert_non_null(r);
	assert_int_equal(tw_admission_handle(&cfg, r, body, strlen(body), arena, &out, &c.oc),
			 TP_OK);
	assert_non_null(out.data);
	assert_true(out.len > 0 && out.data[out.len - 1] == '\n');
	c.text = strdup(out.data);
	c.answer = cJSON_Parse(out.data);
	/* oc's strings live in the arena: keep only what the tests read. */
	c.oc.uid = c.oc.kind = c.oc.namespace_ = c.oc.name = c.oc.operation = c.oc.error = NULL;
	tp_buf_free(&out);
	tp_arena_free(arena);
	return c;
}

static const char *review_tpl =
	"{\"apiVersion\":\"%s\",\"kind\":\"AdmissionReview\",\"request\":{"
	"\"uid\":\"u-1\",\"kind\":{\"group\":\"%s\",\"version\":\"%s\",\"kind\":\"%s\"},"
	"\"operation\":\"%s\",\"dryRun\":%s,\"object\":%s,\"oldObject\":%s}}";

static char *review(const char *av, const char *group, const char *version, const char *kind,
		    const char *op, bool dry, const char *obj, const char *old)
{
	size_t n = strlen(review_tpl) + strlen(av) + strlen(group) + strlen(version) +
		   strlen(kind) + strlen(op) + strlen(obj) + strlen(old) + 16;
	char *s = malloc(n);
	snprintf(s, n, review_tpl, av, group, version, kind, op, dry ? "true" : "false", obj,
		 old);
	return s;
}

static const char *ctr_ok =
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
	"\"metadata\":{\"name\":\"torch\",\"labels\":{\"trainer.kubeflow.org/framework\":\"torch\"}},"
	"\"spec\":{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":{"
	"\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{"
	"\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":{"
	"\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"pytorch\"}]}}}}}]}}}}";

static const char *ctr_bad =
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
	"\"metadata\":{\"name\":\"torch\",\"labels\":{\"trainer.kubeflow.org/framework\":\"torch\"}},"
	"\"spec\":{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":{"
	"\"replicatedJobs\":[{\"name\":\"node\",\"replicas\":3,\"template\":{\"metadata\":{"
	"\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{"
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"p\"}]}}}}}]}}}}";

/* ------------------------------------------------------------ envelope */

static void expect_400(const char *body, const char *part)
{
	struct call c = answer_on(ROUTE_TJ, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_int_equal(c.oc.http_status, 400);
	assert_false(c.oc.allowed);
	assert_non_null(c.answer);
	const char *err = tp_get_str(c.answer, "error");
	assert_non_null(err);
	if (!strstr(err, part))
		fail_msg("error \"%s\" does not say \"%s\"", err, part);
	assert_null(cJSON_GetObjectItem(c.answer, "response"));
	call_free(&c);
}

static void bad_envelopes_are_400(void **state)
{
	(void)state;
	expect_400("not json at all", "body");
	expect_400("{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}", "not an AdmissionReview");
	expect_400("{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v2\","
		   "\"request\":{\"uid\":\"x\"}}",
		   "unsupported AdmissionReview apiVersion");
	expect_400("{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\"}",
		   "no \"request\"");
	expect_400("{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
		   "\"request\":{\"kind\":{\"group\":\"a\",\"version\":\"b\",\"kind\":\"c\"}}}",
		   "request.uid");
	char *noop = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "TrainJob", "PATCH", false, "{}", "null");
	expect_400(noop, "request.operation");
	free(noop);
	char *noold = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			     "ClusterTrainingRuntime", "UPDATE", false, ctr_ok, "null");
	struct call c = answer_on(ROUTE_CTR, noold, NULL, TP_PROFILE_STRICT, NULL);
	assert_int_equal(c.oc.http_status, 400);
	assert_non_null(strstr(tp_get_str(c.answer, "error"), "oldObject"));
	call_free(&c);
	free(noold);
}

/* ------------------------------------------------------------ answers */

static void allow_echoes_uid_and_version(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", "CREATE", false, ctr_ok, "null");
	struct call c = answer_on(ROUTE_CTR, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_int_equal(c.oc.http_status, 200);
	assert_true(c.oc.allowed);
	assert_string_equal(tp_get_str(c.answer, "apiVersion"), "admission.k8s.io/v1");
	assert_string_equal(tp_get_str(c.answer, "kind"), "AdmissionReview");
	assert_string_equal(tp_get_str(c.answer, "response.uid"), "u-1");
	assert_true(tp_get_true(c.answer, "response.allowed"));
	assert_null(tp_get(c.answer, "response.status"));
	assert_null(tp_get(c.answer, "response.patch"));
	call_free(&c);
	free(body);
}

static void denial_is_403_forbidden_with_field_message(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", "CREATE", false, ctr_bad, "null");
	struct call c = answer_on(ROUTE_CTR, body, NULL, TP_PROFILE_KUBEFLOW, NULL);
	assert_int_equal(c.oc.http_status, 200);
	assert_false(c.oc.allowed);
	assert_false(cJSON_IsTrue(tp_get(c.answer, "response.allowed")));
	assert_string_equal(tp_get_str(c.answer, "response.status.status"), "Failure");
	long long code = 0;
	assert_true(tp_get_int(c.answer, "response.status.code", &code));
	assert_int_equal(code, 403);
	assert_string_equal(tp_get_str(c.answer, "response.status.reason"), "Forbidden");
	assert_string_equal(tp_get_str(c.answer, "response.status.message"),
			    "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 3: "
			    "always must be 1");
	call_free(&c);
	free(body);
}

static void v1beta1_gets_v1beta1(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1beta1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", "CREATE", false, ctr_ok, "null");
	struct call c = answer_on(ROUTE_CTR, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_int_equal(c.oc.http_status, 200);
	assert_string_equal(tp_get_str(c.answer, "apiVersion"), "admission.k8s.io/v1beta1");
	call_free(&c);
	free(body);
}

static void wrong_route_names_the_right_one(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", "CREATE", false, ctr_ok, "null");
	struct call c = answer_on(ROUTE_TJ, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_int_equal(c.oc.http_status, 200);
	assert_false(c.oc.allowed);
	const char *msg = tp_get_str(c.answer, "response.status.message");
	assert_non_null(msg);
	assert_non_null(strstr(msg, ROUTE_CTR));
	assert_non_null(strstr(msg, "does not belong on " ROUTE_TJ));
	call_free(&c);
	free(body);
	/* A kind no route takes: denied, and told to fix the configuration. */
	body = review("admission.k8s.io/v1", "", "v1", "Pod", "CREATE", false, "{}", "null");
	c = answer_on(ROUTE_TR, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_false(c.oc.allowed);
	assert_non_null(strstr(tp_get_str(c.answer, "response.status.message"),
			       "not handled by this webhook"));
	call_free(&c);
	free(body);
}

static void object_must_match_request_kind(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "TrainingRuntime", "CREATE", false, ctr_ok, "null");
	struct call c = answer_on(ROUTE_TR, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_false(c.oc.allowed);
	assert_non_null(strstr(tp_get_str(c.answer, "response.status.message"),
			       "they must agree"));
	call_free(&c);
	free(body);
}

/* Metadata of a shape the API server never sends: refused, said clearly. */
static void metadata_of_the_wrong_type(void **state)
{
	(void)state;
	static const struct {
		const char *meta, *says;
	} cases[] = {
		{ "null", "request.object.metadata: must be an object with a name, not null" },
		{ "7", "request.object.metadata: must be an object with a name, not integer" },
		{ "[]", "request.object.metadata: must be an object with a name, not array" },
		{ "{}", "request.object.metadata.name: must be a string (or give generateName), not missing" },
		{ "{\"name\":5}", "request.object.metadata.name: must be a string (or give generateName), not integer" },
		{ "{\"name\":\"x\",\"namespace\":[]}", "request.object.metadata.namespace: must be a string, not array" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char obj[512];
		snprintf(obj, sizeof(obj), "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
			 "\"TrainJob\",\"metadata\":%s,\"spec\":{}}", cases[i].meta);
		char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1", "TrainJob",
				    "CREATE", false, obj, "null");
		struct call c = answer_on(ROUTE_TJ, body, NULL, TP_PROFILE_STRICT, NULL);
		assert_false(c.oc.allowed);
		const char *msg = tp_get_str(c.answer, "response.status.message");
		if (!msg || !strstr(msg, cases[i].says))
			fail_msg("metadata %s: got \"%s\"", cases[i].meta, msg ? msg : "(none)");
		call_free(&c);
		free(body);
	}
	/* generateName stands for a name the API server has not made yet */
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1", "TrainJob",
			    "CREATE", false, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
			    "\"TrainJob\",\"metadata\":{\"generateName\":\"tj-\"},\"spec\":{}}", "null");
	struct call c = answer_on(ROUTE_TJ, body, NULL, TP_PROFILE_STRICT, NULL);
	const char *msg = tp_get_str(c.answer, "response.status.message");
	assert_true(!msg || !strstr(msg, "metadata.name: must be"));
	call_free(&c);
	free(body);
}

/* Sent as application/json, a body must be JSON; numbers and strings as
 * RFC 8259 writes them. */
static void json_bodies_are_json(void **state)
{
	(void)state;
	tw_config cfg = { .max_body = TW_DEFAULT_MAX_BODY, .json_only = true };
	cJSON *out = NULL;
	char err[512];
	const char *yaml = "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\n";
	assert_int_equal(tw_body_parse(&cfg, yaml, strlen(yaml), "AdmissionReview", &out, err,
				       sizeof(err)), TP_EPARSE);
	assert_non_null(strstr(err, "not JSON: a JSON object starts with '{'"));
	cfg.json_only = false; /* review's files may be YAML */
	assert_int_equal(tw_body_parse(&cfg, yaml, strlen(yaml), "AdmissionReview", &out, err,
				       sizeof(err)), TP_OK);
	cJSON_Delete(out);
	expect_400("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"x\":01}",
		   "invalid number: a leading zero");
	expect_400("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"x\":1.}",
		   "invalid number: no digit after the decimal point");
	expect_400("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"x\":"
		   "\"torch\\u0000x\"}", "a string holds \\u0000 (NUL)");
}

static void delete_is_allowed_unchecked(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", "DELETE", false, "null", ctr_bad);
	struct call c = answer_on(ROUTE_CTR, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_int_equal(c.oc.http_status, 200);
	assert_true(c.oc.allowed);
	call_free(&c);
	free(body);
}

static void dry_run_is_annotated(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", "CREATE", true, ctr_ok, "null");
	struct call c = answer_on(ROUTE_CTR, body, NULL, TP_PROFILE_STRICT, NULL);
	assert_true(c.oc.allowed);
	assert_string_equal(tp_get_str(c.answer, "response.auditAnnotations.dry-run"), "true");
	call_free(&c);
	free(body);
}

static void route_picked_by_kind_when_none_given(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", "CREATE", false, ctr_bad, "null");
	struct call c = answer_on(NULL, body, NULL, TP_PROFILE_KUBEFLOW, NULL);
	assert_non_null(c.oc.route);
	assert_string_equal(c.oc.route->path, ROUTE_CTR);
	assert_false(c.oc.allowed);
	call_free(&c);
	free(body);
}

static void go_durations(void **state)
{
	(void)state;
	assert_int_equal(tw_parse_go_duration("10s"), 10000000);
	assert_int_equal(tw_parse_go_duration("1m30s"), 90000000);
	assert_int_equal(tw_parse_go_duration("250ms"), 250000);
	assert_int_equal(tw_parse_go_duration("1.5s"), 1500000);
	assert_int_equal(tw_parse_go_duration("10"), -1);
	assert_int_equal(tw_parse_go_duration("s"), -1);
	assert_int_equal(tw_parse_go_duration(""), -1);
	assert_int_equal(tw_parse_go_duration("-1s"), -1);
	/* Go's grammar only: no exponent, no inf/nan, no zero budget. */
	assert_int_equal(tw_parse_go_duration(".5s"), 500000);
	assert_int_equal(tw_parse_go_duration("2h"), 7200000000LL);
	assert_int_equal(tw_parse_go_duration("1e3s"), -1);
	assert_int_equal(tw_parse_go_duration("nans"), -1);
	assert_int_equal(tw_parse_go_duration("infs"), -1);
	assert_int_equal(tw_parse_go_duration("0s"), -1);
	assert_int_equal(tw_parse_go_duration(".s"), -1);
	assert_int_equal(tw_parse_go_duration("25h"), -1);
}

/* ------------------------------------------------------------ fixtures */

static char *fixture(const char *name)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "fixtures/admissionreview/%s", name);
	char *path = tt_shared_path(rel);
	char *text = tt_read_file(path, NULL);
	free(path);
	assert_non_null(text);
	return text;
}

/* The store the samples assume: 02's ClusterTrainingRuntime (deprecated). */
static tp_store *fixture_store(void)
{
	char *text = fixture("02-create-clustertrainingruntime-deprecated.request.json");
	cJSON *root = cJSON_Parse(text);
	free(text);
	assert_non_null(root);
	cJSON *obj = cJSON_DetachItemFromObject(cJSON_GetObjectItem(root, "request"), "object");
	cJSON_Delete(root);
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(tp_store_put(s, obj), TP_OK);
	return s;
}

static void check_fixture(const char *stem, const char *route, tp_profile profile,
			  bool with_store)
{
	char name[128];
	snprintf(name, sizeof(name), "%s.request.json", stem);
	char *req = fixture(name);
	snprintf(name, sizeof(name), "%s.response.json", stem);
	char *resp = fixture(name);
	cJSON *want = cJSON_Parse(resp);
	assert_non_null(want);
	tp_store *store = with_store ? fixture_store() : NULL;
	struct call c = answer_on(route, req, store, profile, "2026-08-21T10:15:30Z");
	assert_int_equal(c.oc.http_status, 200);
	if (!tp_json_equal(c.answer, want))
		fail_msg("%s: got %s\nwant %s", stem, c.text, resp);
	call_free(&c);
	cJSON_Delete(want);
	tp_store_free(store);
	free(req);
	free(resp);
}

static void fixtures_get_their_documented_answers(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	check_fixture("01-create-trainjob", ROUTE_TJ, TP_PROFILE_STRICT, true);
	check_fixture("01b-mutate-trainjob", ROUTE_MUT, TP_PROFILE_STRICT, true);
	check_fixture("02-create-clustertrainingruntime-deprecated", ROUTE_CTR, TP_PROFILE_STRICT,
		      false);
	check_fixture("03-update-trainingruntime", ROUTE_TR, TP_PROFILE_STRICT, false);
	check_fixture("04-dryrun-create-trainjob", ROUTE_TJ, TP_PROFILE_STRICT, true);
	check_fixture("05-create-ome-trainingruntime-v1beta1",
		      "/validate-ome-io-v1beta1-trainingruntime", TP_PROFILE_STRICT, false);
	/* The same samples by request.kind, as `review` replays them. */
	check_fixture("02-create-clustertrainingruntime-deprecated", NULL, TP_PROFILE_STRICT,
		      false);
}

/* README: in the kubeflow profile 03 is allowed (upstream skips TrainingRuntime
 * updates); without the runtime in the store 01 is denied. */
static void fixtures_profile_and_store_differences(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *req = fixture("03-update-trainingruntime.request.json");
	struct call c = answer_on(ROUTE_TR, req, NULL, TP_PROFILE_KUBEFLOW, NULL);
	assert_true(c.oc.allowed);
	call_free(&c);
	free(req);
	req = fixture("01-create-trainjob.request.json");
	c = answer_on(ROUTE_TJ, req, NULL, TP_PROFILE_KUBEFLOW, NULL);
	assert_false(c.oc.allowed);
	const char *msg = tp_get_str(c.answer, "response.status.message");
	assert_non_null(msg);
	assert_non_null(strstr(msg, "spec.RuntimeRef: Invalid value"));
	assert_non_null(strstr(msg, "specified clusterTrainingRuntime must be created before the "
				    "TrainJob is created"));
	call_free(&c);
	free(req);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_envelopes_are_400),
		cmocka_unit_test(allow_echoes_uid_and_version),
		cmocka_unit_test(denial_is_403_forbidden_with_field_message),
		cmocka_unit_test(v1beta1_gets_v1beta1),
		cmocka_unit_test(wrong_route_names_the_right_one),
		cmocka_unit_test(object_must_match_request_kind),
		cmocka_unit_test(metadata_of_the_wrong_type),
		cmocka_unit_test(json_bodies_are_json),
		cmocka_unit_test(delete_is_allowed_unchecked),
		cmocka_unit_test(dry_run_is_annotated),
		cmocka_unit_test(route_picked_by_kind_when_none_given),
		cmocka_unit_test(go_durations),
		cmocka_unit_test(fixtures_get_their_documented_answers),
		cmocka_unit_test(fixtures_profile_and_store_differences),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

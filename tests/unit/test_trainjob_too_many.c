/*
 * test_trainjob_too_many.c — a TrainJob whose schema finds a list past its
 * maxItems is answered with the API server's "Too many" and nothing else, on
 * every route (validate, mutate, /expand), in both profiles, with the CRDs
 * built in and with the built-in TrainJob schema alone: no route builds on
 * the list (merges it, gives each item a finding, stamps it) first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/tj_fixtures.h"
#include "webhook/admission/admission.h"
#include "webhook/admission/expand_api.h"
#include "webhook/cli/builtin_crds.h"

#define ROUTE_VAL "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define ROUTE_MUT "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
#define JOBS "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs"
#define CONTAINERS JOBS "[0].template.spec.template.spec.containers"
#define NOT_CHECKED "some validation rules were not checked because the object was invalid"

/* store, res, setup and teardown: tj_fixtures.h (TJ_GROUP_STATE). */
TJ_GROUP_STATE

static tp_crds *builtin_crds(void)
{
	tp_crds *crds = NULL;
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	assert_int_equal(tw_builtin_crds_load(crds, stderr), TP_OK);
	return crds;
}

/* A runtimePatch's job "node" with pod (members of its Pod spec). */
#define PATCH(jobs)                                                                        \
	"\"runtimePatches\":[{\"manager\":\"example.com/m\",\"trainingRuntimeSpec\":{"      \
	"\"template\":{\"spec\":{\"replicatedJobs\":" jobs "}}}}]"
#define POD(pod) PATCH("[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{" \
		       "\"spec\":{" pod "}}}}}]")

/* One list of a TrainJob's spec past its maxItems (the CRD's and the
 * built-in schema's), and where the API server reports it: spec holds the
 * list as "%s", item is one item with "%d". The containers and jobs are
 * ones the runtime does not have: upstream's check and the strict Pod
 * checks gave each a finding. */
struct case_ {
	const char *path;
	int max;
	const char *spec;
	const char *item;
};

static const struct case_ cases[] = {
	{ CONTAINERS, 64, POD("\"containers\":[%s]"), "{\"name\":\"c%d\"}" },
	{ JOBS, 100, PATCH("[%s]"), "{\"name\":\"j%d\"}" },
	{ "spec.runtimePatches", 16, "\"runtimePatches\":[%s]", "{\"manager\":\"example.com/m%d\"}" },
	{ JOBS "[0].template.spec.template.spec.initContainers", 64,
	  POD("\"initContainers\":[%s]"), "{\"name\":\"i%d\"}" },
	{ JOBS "[0].template.spec.template.spec.volumes", 128, POD("\"volumes\":[%s]"),
	  "{\"name\":\"v%d\"}" },
	{ JOBS "[0].template.spec.template.spec.tolerations", 128, POD("\"tolerations\":[%s]"),
	  "{\"key\":\"k%d\"}" },
	{ JOBS "[0].template.spec.template.spec.schedulingGates", 16,
	  POD("\"schedulingGates\":[%s]"), "{\"name\":\"g%d\"}" },
	{ "spec.trainer.env", 128, "\"trainer\":{\"env\":[%s]}", "{\"name\":\"E%d\"}" },
	{ "spec.trainer.command", 128, "\"trainer\":{\"command\":[%s]}", "\"c%d\"" },
	{ "spec.trainer.args", 128, "\"trainer\":{\"args\":[%s]}", "\"a%d\"" },
	{ "spec.initializer.model.env", 128, "\"initializer\":{\"model\":{\"env\":[%s]}}",
	  "{\"name\":\"E%d\"}" },
	{ JOBS "[0].template.spec.template.spec.imagePullSecrets", 64,
	  POD("\"imagePullSecrets\":[%s]"), "{\"name\":\"s%d\"}" },
	{ CONTAINERS "[0].env", 128, POD("\"containers\":[{\"name\":\"node\",\"env\":[%s]}]"),
	  "{\"name\":\"E%d\"}" },
	{ JOBS "[0].template.spec.template.spec.initContainers[0].volumeMounts", 128,
	  POD("\"initContainers\":[{\"name\":\"prep\",\"volumeMounts\":[%s]}]"),
	  "{\"name\":\"v%d\",\"mountPath\":\"/m\"}" },
};

/* c's spec with n items in its list. */
static char *spec_of(const struct case_ *c, int n)
{
	tp_buf items = TP_BUF_INIT(0), spec = TP_BUF_INIT(0);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		rc |= tp_buf_adds(&items, i ? "," : "");
		rc |= tp_buf_addf(&items, c->item, i);
	}
	rc |= tp_buf_addf(&spec, c->spec, items.data);
	assert_int_equal(rc, TP_OK);
	char *s = strdup(spec.data);
	tp_buf_free(&items);
	tp_buf_free(&spec);
	return s;
}

/* res is the schema's refusal alone: Too many at c's path, with the count
 * and the limit, then the word that the CEL rules did not run. */
static void assert_refusal(const tp_result *r, const struct case_ *c, int n_items)
{
	tt_dump(r);
	assert_int_equal(tp_result_error_count(r), 2);
	const tp_field_error *e = tp_result_error_at(r, 0);
	char n[16], detail[64];
	snprintf(n, sizeof(n), "%d", n_items);
	snprintf(detail, sizeof(detail), "must have at most %d items", c->max);
	assert_int_equal(e->type, TP_FIELD_TOO_MANY);
	assert_string_equal(e->path, c->path);
	assert_string_equal(e->value, n);
	assert_string_equal(e->detail, detail);
	assert_non_null(strstr(tp_result_error_at(r, 1)->detail, NOT_CHECKED));
}

/* tp_validate_trainjob in both profiles, with the CRDs and without. */
static void validation_ends_at_the_refusal(void **state)
{
	(void)state;
	tp_crds *crds = builtin_crds();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		for (int p = 0; p < 2; p++)
			for (int with_crds = 0; with_crds < 2; with_crds++) {
				tp_options opt = { .profile = p ? TP_PROFILE_STRICT
								: TP_PROFILE_KUBEFLOW,
						   .store = store, .crds = with_crds ? crds : NULL };
				char *spec = spec_of(&cases[i], cases[i].max + 1);
				cJSON *job = tj_job("a", "ClusterTrainingRuntime", "torch-current", spec);
				tp_result_clear(res);
				tp_store_rdlock(store);
				assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, job, NULL, res),
						 TP_OK);
				tp_store_unlock(store);
				assert_refusal(res, &cases[i], cases[i].max + 1);
				cJSON_Delete(job);
				free(spec);
			}
	tp_crds_unref(crds);
}

/* The answer of route to a CREATE review of a TrainJob with spec, parsed;
 * *denial its message (in the answer), NULL when allowed. */
static cJSON *answer(const char *route, const tp_options *opt, const char *spec,
		     const char **denial)
{
	cJSON *job = tj_job("a", "ClusterTrainingRuntime", "torch-current", spec);
	char *obj = cJSON_PrintUnformatted(job);
	size_t n = strlen(obj) + 512;
	char *body = malloc(n);
	snprintf(body, n, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		 "\"request\":{\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
		 "\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},\"namespace\":\"team-a\","
		 "\"operation\":\"CREATE\",\"object\":%s}}", obj);
	tw_config cfg = { .opt = *opt, .store = store, .max_body = TW_DEFAULT_MAX_BODY };
	tp_arena *arena;
	assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_admission_handle(&cfg, tw_route_find(route), body, strlen(body), arena,
					     &out, &oc), TP_OK);
	assert_int_equal(oc.http_status, 200);
	cJSON *a = cJSON_Parse(out.data);
	assert_non_null(a);
	*denial = tp_get_str(a, "response.status.message");
	tp_buf_free(&out);
	tp_arena_free(arena);
	free(body);
	cJSON_free(obj);
	cJSON_Delete(job);
	return a;
}

/* "[<path>: Too many: <n>: must have at most <max> items, <nil>: ...]" */
static void assert_denial(const char *msg, const struct case_ *c, int n)
{
	char want[512];
	snprintf(want, sizeof(want), "[%s: Too many: %d: must have at most %d items, <nil>: "
		 "Invalid value: \"null\": " NOT_CHECKED, c->path, n, c->max);
	assert_non_null(msg);
	assert_true(!strncmp(msg, want, strlen(want)));
	assert_int_equal(msg[strlen(msg) - 1], ']');
	assert_null(strstr(msg + strlen(want), ", ")); /* nothing after the note */
}

/* The validating and the mutating route answer c's list of n items with the
 * same refusal, in the strict profile. */
static void assert_routes_refuse(const tp_crds *crds, const struct case_ *c, int n)
{
	const char *routes[] = { ROUTE_VAL, ROUTE_MUT };
	char *spec = spec_of(c, n);
	for (size_t r = 0; r < 2; r++) {
		tp_options opt = { .profile = TP_PROFILE_STRICT, .crds = crds };
		const char *msg;
		cJSON *a = answer(routes[r], &opt, spec, &msg);
		assert_false(cJSON_IsTrue(tp_get(a, "response.allowed")));
		assert_null(tp_get(a, "response.patch"));
		assert_denial(msg, c, n);
		cJSON_Delete(a);
	}
	free(spec);
}

static void routes_answer_the_refusal(void **state)
{
	(void)state;
	tp_crds *crds = builtin_crds();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		assert_routes_refuse(crds, &cases[i], cases[i].max + 1);
		assert_routes_refuse(NULL, &cases[i], cases[i].max + 1);
	}
	tp_crds_unref(crds);
}

/* 100,000 containers, as the issue sent them: the refusal, not the 64 MiB
 * of findings the strict profile's checks wrote (an out-of-memory error, the
 * server's 413). */
static void one_hundred_thousand_containers(void **state)
{
	(void)state;
	tp_crds *crds = builtin_crds();
	assert_routes_refuse(crds, &cases[0], 100000);
	tp_crds_unref(crds);
}

/* The mutating route still stamps a TrainJob whose schema errors are not a
 * list past its limit (the validating route reports those), and says
 * nothing of them. */
static void mutating_route_keeps_other_schema_errors_to_validation(void **state)
{
	(void)state;
	tp_crds *crds = builtin_crds();
	tp_options opt = { .profile = TP_PROFILE_STRICT, .crds = crds, .now = "2026-01-02T03:04:05Z" };
	const char *msg;
	cJSON *a = answer(ROUTE_MUT, &opt, "\"trainer\":{\"numNodes\":-1},\"runtimePatches\":"
			  "[{\"manager\":\"example.com/m\"}]", &msg);
	assert_true(cJSON_IsTrue(tp_get(a, "response.allowed")));
	assert_null(msg);
	assert_non_null(tp_get_str(a, "response.patch"));
	cJSON_Delete(a);
	/* and tp_trainjob_too_many leaves the result as it was */
	cJSON *job = tj_job("a", "ClusterTrainingRuntime", "torch-current",
			    "\"trainer\":{\"numNodes\":-1}");
	tp_result_clear(res);
	bool refused = true;
	assert_int_equal(tp_trainjob_too_many(&opt, TP_OP_CREATE, job, NULL, res, &refused), TP_OK);
	assert_false(refused);
	assert_true(tp_result_ok(res));
	assert_int_equal(tp_result_warning_count(res), 0);
	cJSON_Delete(job);
	tp_crds_unref(crds);
}

/* expand and POST /expand: the TrainJob is refused with the schema's
 * findings alone, and nothing is expanded. */
static void expansion_is_refused_by_the_schema(void **state)
{
	(void)state;
	tp_crds *crds = builtin_crds();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		for (int with_crds = 0; with_crds < 2; with_crds++) {
			tp_options opt = { .profile = TP_PROFILE_STRICT, .store = store,
					   .crds = with_crds ? crds : NULL };
			char *spec = spec_of(&cases[i], cases[i].max + 1);
			cJSON *job = tj_job("a", "ClusterTrainingRuntime", "torch-current", spec);
			cJSON *list = NULL;
			char err[512] = "";
			tp_result_clear(res);
			tp_store_rdlock(store);
			assert_int_equal(tw_expand_trainjob(&opt, job, NULL, &list, res, err,
							    sizeof(err)), TW_EXPAND_INVALID);
			tp_store_unlock(store);
			assert_null(list);
			assert_refusal(res, &cases[i], cases[i].max + 1);
			cJSON_Delete(job);
			free(spec);
		}
	tp_crds_unref(crds);
}

/* The built-in schema reports a list past its limit where the CRD's does:
 * after its items' errors (kube-openapi's slice validator checks maxItems
 * last), before the note. */
static void builtin_schema_orders_as_the_crd(void **state)
{
	(void)state;
	tp_crds *crds = builtin_crds();
	struct case_ broken[] = {
		{ "spec.trainer.env", 128, "\"trainer\":{\"env\":[{\"value\":\"x\"},%s]}",
		  "{\"name\":\"E%d\"}" },
		{ "spec.trainer.command", 128, "\"trainer\":{\"command\":[7,%s]}", "\"c%d\"" },
		{ "spec.runtimePatches", 16, "\"runtimePatches\":[{},%s]",
		  "{\"manager\":\"example.com/m%d\"}" },
	};
	for (size_t i = 0; i < sizeof(broken) / sizeof(*broken); i++) {
		char *spec = spec_of(&broken[i], broken[i].max);
		tp_result *by[2];
		for (int with_crds = 0; with_crds < 2; with_crds++) {
			tp_options opt = { .profile = TP_PROFILE_KUBEFLOW, .store = store,
					   .crds = with_crds ? crds : NULL };
			cJSON *job = tj_job("a", "ClusterTrainingRuntime", "torch-current", spec);
			assert_int_equal(tp_result_new(&by[with_crds]), TP_OK);
			tp_store_rdlock(store);
			assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, job, NULL,
							      by[with_crds]), TP_OK);
			tp_store_unlock(store);
			tt_dump(by[with_crds]);
			cJSON_Delete(job);
		}
		assert_int_equal(tp_result_error_count(by[0]), 3);
		assert_int_equal(tp_result_error_count(by[1]), 3);
		assert_int_equal(tp_result_error_at(by[0], 1)->type, TP_FIELD_TOO_MANY);
		for (size_t e = 0; e < 3; e++) {
			const tp_field_error *a = tp_result_error_at(by[0], e);
			const tp_field_error *b = tp_result_error_at(by[1], e);
			assert_int_equal(a->type, b->type);
			assert_string_equal(a->path ? a->path : "", b->path ? b->path : "");
			assert_string_equal(a->value ? a->value : "", b->value ? b->value : "");
			assert_string_equal(a->detail, b->detail);
		}
		tp_result_free(by[0]);
		tp_result_free(by[1]);
		free(spec);
	}
	tp_crds_unref(crds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(validation_ends_at_the_refusal),
		cmocka_unit_test(routes_answer_the_refusal),
		cmocka_unit_test(one_hundred_thousand_containers),
		cmocka_unit_test(mutating_route_keeps_other_schema_errors_to_validation),
		cmocka_unit_test(expansion_is_refused_by_the_schema),
		cmocka_unit_test(builtin_schema_orders_as_the_crd),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

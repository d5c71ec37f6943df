/*
 * test_cluster_state.c — the strict profile's refusals of a TrainJob's Pods
 * that depend on the cluster's objects (policy/pod/cluster_state.c), as the
 * server reads them from the fake API server (tests/support/fakeapi.c): in
 * process through the server's own resolver and tw_admission_handle. A
 * ServiceAccount is read by GET at its own path per request, a PriorityClass
 * from the watch's cache or by GET; an object that cannot be read (RBAC's
 * 403, an API server down) is a warning that says what was not checked,
 * never a denial or an error answer. Offline, `validate`, `review` and
 * `expand --kubeconfig` read what their inputs do not hold from the same
 * fake cluster: a folder of TrainJobs alone is checked against it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/apiclient.h"
#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/admission/admission.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/resolver.h"
#include "webhook/core/clock.h"

typedef tt_apiclient fx;

/* A runtime whose trainer Pods name ServiceAccount "trainer" and
 * PriorityClass "urgent". */
#define RUNTIME_JSON                                                                          \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\"," \
	"\"metadata\":{\"name\":\"plain\",\"labels\":{\"trainer.kubeflow.org/framework\":"       \
	"\"torch\"}},\"spec\":{\"mlPolicy\":{\"torch\":{}},\"template\":{\"spec\":{"             \
	"\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{"        \
	"\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":"  \
	"{\"spec\":{\"serviceAccountName\":\"trainer\",\"priorityClassName\":\"urgent\","        \
	"\"containers\":[{\"name\":\"node\",\"image\":\"img\",\"resources\":{\"limits\":"         \
	"{\"cpu\":\"2\",\"memory\":\"4Gi\"}}}]}}}}}]}}}}"

#define TRAINJOB_JSON                                                                         \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":"  \
	"{\"name\":\"tj\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":"         \
	"\"plain\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"},"  \
	"\"trainer\":{\"numNodes\":2}}}"

#define REVIEW                                                                                \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"object\":"   \
	TRAINJOB_JSON ",\"oldObject\":null,\"dryRun\":false}}"

#define SA_JSON                                                                               \
	"{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"trainer\","  \
	"\"namespace\":\"team-a\"}}"
#define PC_JSON(value)                                                                        \
	"{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":"      \
	"{\"name\":\"urgent\"},\"value\":" value "}"

#define V_TRAINJOB "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define SA_PATH "/api/v1/namespaces/team-a/serviceaccounts/trainer"

static int setup(void **state)
{
	tt_apiclient_setup(state);
	fx *x = *state;
	/* the runtime is in the cache, as the watch keeps it */
	assert_int_equal(tp_store_put(x->store, tt_json(RUNTIME_JSON)), TP_OK);
	/* an unlabelled namespace: Pod Security has nothing to say */
	fa_put_object(x->fa, FA_NS,
		      "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
		      "\"team-a\"}}");
	return 0;
}

static int teardown(void **state)
{
	return tt_apiclient_teardown(state);
}

/* The answer the server gives: runtimes (and PriorityClasses, when
 * pc_cached) from the cache, the rest from the API server. */
static cJSON *answer_as(fx *x, tp_profile p, bool pc_cached)
{
	tw_cluster cl = { .api = x->api,
			  .cached = (1u << TP_KIND_CLUSTER_TRAINING_RUNTIME) |
				    (1u << TP_KIND_TRAINING_RUNTIME) |
				    (pc_cached ? 1u << TP_KIND_PRIORITY_CLASS : 0) };
	tw_config cfg = { .opt = { .profile = p, .now = "2026-11-23T10:00:00Z" },
			  .store = x->store };
	tw_resolver rs;
	tw_resolver_init(&rs, &cl, x->store, x->arena, tw_mono_ms() + 5000);
	cfg.opt.lookup = &rs.lookup;
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_admission_handle(&cfg, tw_route_find(V_TRAINJOB), REVIEW,
					     strlen(REVIEW), x->arena, &out, &oc), TP_OK);
	tw_resolver_done(&rs);
	assert_int_equal(oc.http_status, 200);
	cJSON *a = tt_json(out.data);
	tp_buf_free(&out);
	tp_arena_reset(x->arena);
	return a;
}

static cJSON *answer(fx *x)
{
	return answer_as(x, TP_PROFILE_STRICT, false);
}

/* The warnings of an answer, each after a newline (malloc'd). */
static char *warnings(const cJSON *a)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_adds(&b, "\n");
	const cJSON *w;
	cJSON_ArrayForEach(w, tp_get_array(a, "response.warnings"))
		tp_buf_addf(&b, "%s\n", cJSON_GetStringValue(w));
	return b.data;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("want %s\n in: %s", needle, hay ? hay : "(null)");
}

static void assert_denied(const cJSON *a, const char *part)
{
	assert_false(tp_get_true(a, "response.allowed"));
	long long code = 0;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 403);
	assert_contains(tp_get_str(a, "response.status.message"), part);
}

static void assert_clean(const cJSON *a)
{
	assert_true(tp_get_true(a, "response.allowed"));
	assert_null(tp_get(a, "response.status"));
	assert_null(tp_get_array(a, "response.warnings"));
}

static unsigned gets_of(fx *x, int r, const char *path)
{
	fa_stats st;
	fa_get_stats(x->fa, r, &st);
	if (st.gets && path)
		assert_string_equal(st.last_path, path);
	return st.gets;
}

/* ------------------------------------------------------- ServiceAccount */

static void missing_service_account_denies(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_PC, PC_JSON("100"));
	cJSON *a = answer(x);
	assert_denied(a, "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
			 "serviceAccountName: Forbidden: error looking up service account "
			 "team-a/trainer: serviceaccount \"trainer\" not found");
	assert_int_equal(gets_of(x, FA_SA, SA_PATH), 1);
	cJSON_Delete(a);
}

static void existing_service_account_allows(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_PC, PC_JSON("100"));
	fa_put_object(x->fa, FA_SA, SA_JSON);
	cJSON *a = answer(x);
	assert_clean(a);
	cJSON_Delete(a);
	/* read per request: a second review asks again */
	a = answer(x);
	assert_clean(a);
	assert_int_equal(gets_of(x, FA_SA, SA_PATH), 2);
	cJSON_Delete(a);
}

static void forbidden_service_account_is_not_checked(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_PC, PC_JSON("100"));
	fa_set_get_status(x->fa, FA_SA, 403);
	cJSON *a = answer(x);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_null(tp_get(a, "response.status"));
	char *w = warnings(a);
	assert_contains(w, "\nServiceAccount \"trainer\" of the Pods of replicated job \"node\" was "
			   "not checked: serviceaccounts \"trainer\" could not be looked up: GET "
			   SA_PATH ": HTTP 403");
	free(w);
	cJSON_Delete(a);
}

static void api_server_down_is_not_checked(void **state)
{
	fx *x = *state;
	fa_set_down(x->fa, true);
	cJSON *a = answer(x);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_null(tp_get(a, "response.status"));
	char *w = warnings(a);
	assert_contains(w, "\nServiceAccount \"trainer\" of the Pods of replicated job \"node\" was "
			   "not checked: ");
	assert_contains(w, "\nPriorityClass \"urgent\" of the Pods of replicated job \"node\" was "
			   "not checked: ");
	free(w);
	cJSON_Delete(a);
}

/* ------------------------------------------------------- PriorityClass */

static void missing_priority_class_denies(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_SA, SA_JSON);
	cJSON *a = answer(x);
	assert_denied(a, "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
			 "priorityClassName: Forbidden: no PriorityClass with name urgent was found");
	assert_int_equal(gets_of(x, FA_PC, "/apis/scheduling.k8s.io/v1/priorityclasses/urgent"),
			 1);
	cJSON_Delete(a);
}

/* From the watch's cache: no GET. */
static void negative_priority_from_the_cache_denies(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_SA, SA_JSON);
	assert_int_equal(tp_store_put(x->store, tt_json(PC_JSON("-1"))), TP_OK);
	cJSON *a = answer_as(x, TP_PROFILE_STRICT, true);
	assert_denied(a, "priorityClassName: Invalid value: \"-1\": a valid label must be an "
			 "empty string or consist of alphanumeric characters");
	assert_contains(tp_get_str(a, "response.status.message"), "jobset.sigs.k8s.io/priority");
	assert_int_equal(gets_of(x, FA_PC, NULL), 0);
	cJSON_Delete(a);
}

/* ------------------------------------------------------- LimitRange, quota */

#define LR_JSON(item)                                                                         \
	"{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"lr\","         \
	"\"namespace\":\"team-a\"},\"spec\":{\"limits\":[" item "]}}"
#define RQ_JSON(hard, used)                                                                   \
	"{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\","       \
	"\"namespace\":\"team-a\"},\"spec\":{\"hard\":" hard "},\"status\":{\"hard\":" hard     \
	",\"used\":" used "}}"

static unsigned lists_of(fx *x, int r)
{
	fa_stats st;
	fa_get_stats(x->fa, r, &st);
	return st.lists;
}

/* The namespace's LimitRanges, listed per request: a limit over its max
 * denies (the runtime asks for 2 CPUs). */
static void limit_range_denies(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_PC, PC_JSON("100"));
	fa_put_object(x->fa, FA_SA, SA_JSON);
	fa_put_object(x->fa, FA_LR, LR_JSON("{\"type\":\"Container\",\"max\":{\"cpu\":\"1\"}}"));
	cJSON *a = answer(x);
	assert_denied(a, "spec.template.spec.replicatedJobs[0].template.spec.template.spec: "
			 "Forbidden: maximum cpu usage per Container is 1, but limit is 2: LimitRange "
			 "\"lr\" of namespace \"team-a\" refuses the Pods of replicated job \"node\"");
	assert_int_equal(lists_of(x, FA_LR), 1);
	cJSON_Delete(a);
	/* a new LimitRange counts at once: nothing is cached */
	fa_put_object(x->fa, FA_LR, LR_JSON("{\"type\":\"Container\",\"max\":{\"cpu\":\"4\"}}"));
	a = answer(x);
	assert_clean(a);
	assert_int_equal(lists_of(x, FA_LR), 2);
	cJSON_Delete(a);
}

/* 2 nodes of 2 CPUs and 4Gi, 6 CPUs of 8 used: the quota's warning. */
static void quota_short_warns(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_PC, PC_JSON("100"));
	fa_put_object(x->fa, FA_SA, SA_JSON);
	fa_put_object(x->fa, FA_RQ, RQ_JSON("{\"limits.cpu\":\"8\",\"limits.memory\":\"64Gi\"}",
					    "{\"limits.cpu\":\"6\",\"limits.memory\":\"8Gi\"}"));
	cJSON *a = answer(x);
	assert_true(tp_get_true(a, "response.allowed"));
	char *w = warnings(a);
	assert_contains(w, "\nthe 2 Pods of TrainJob \"tj\" together would exceed ResourceQuota "
			   "\"q\" of namespace \"team-a\" by limits.cpu=2: exceeded quota: q, "
			   "requested: limits.cpu=4, used: limits.cpu=6, limited: limits.cpu=8;");
	free(w);
	assert_int_equal(lists_of(x, FA_RQ), 1);
	cJSON_Delete(a);
}

/* RBAC without list: each is a warning that says it was not checked. */
static void unlistable_is_not_checked(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_PC, PC_JSON("100"));
	fa_put_object(x->fa, FA_SA, SA_JSON);
	fa_set_list_status(x->fa, FA_LR, 403);
	fa_set_list_status(x->fa, FA_RQ, 403);
	cJSON *a = answer(x);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_null(tp_get(a, "response.status"));
	char *w = warnings(a);
	assert_contains(w, "\nthe LimitRanges of namespace \"team-a\" were not checked against the "
			   "TrainJob's Pods: limitranges could not be listed: GET "
			   "/api/v1/namespaces/team-a/limitranges: HTTP 403");
	assert_contains(w, "\nthe ResourceQuotas of namespace \"team-a\" were not checked against "
			   "the TrainJob's Pods: resourcequotas could not be listed: GET "
			   "/api/v1/namespaces/team-a/resourcequotas: HTTP 403");
	free(w);
	cJSON_Delete(a);
}

/* Upstream's webhook reads none of it: no GET. */
static void kubeflow_profile_does_not_look(void **state)
{
	fx *x = *state;
	cJSON *a = answer_as(x, TP_PROFILE_KUBEFLOW, false);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_int_equal(gets_of(x, FA_SA, NULL), 0);
	assert_int_equal(gets_of(x, FA_PC, NULL), 0);
	assert_int_equal(lists_of(x, FA_LR) + lists_of(x, FA_RQ), 0);
	cJSON_Delete(a);
}

/* ------------------------------------------------------- offline */

/* A folder with the TrainJob alone and a kubeconfig for the fake (plain
 * HTTP, a token); the cluster holds the runtime and the TrainJob's CRD. */
static void offline_setup(fx *x, char *dir, size_t n)
{
	assert_int_equal(sp_mkdtemp(dir, n, "tw-cluster-state"), 0);
	tt_apiclient_kubeconfig(x, dir);
	assert_int_equal(sp_write(dir, "tj.json", TRAINJOB_JSON), 0);
	assert_int_equal(sp_write(dir, "review.json", REVIEW), 0);
	char *crd = tt_crd_json("trainer.kubeflow.org_trainjobs.yaml");
	fa_put_object(x->fa, FA_CRD, crd);
	free(crd);
	fa_put_object(x->fa, FA_CTR, RUNTIME_JSON);
	fa_put_object(x->fa, FA_PC, PC_JSON("100"));
}

static int run_in(const char *dir, const char *args, char **out, char **err)
{
	char cmd[PATH_MAX + 600], bin[PATH_MAX];
	assert_non_null(realpath(tt_bin(), bin));
	snprintf(cmd, sizeof(cmd), "cd %s && %s %s", dir, bin, args);
	int rc = tt_run(cmd, out, err);
	print_message("$ trainer-webhook %s\n%s%s(exit %d)\n", args, *err ? *err : "",
		      *out ? *out : "", rc);
	return rc;
}

/* A repository of TrainJobs alone: the runtime, the ServiceAccount, the
 * PriorityClass, the Namespace, the LimitRanges come from the cluster. */
static void validate_reads_what_the_inputs_lack(void **state)
{
	TT_REQUIRE_SHARED(); /* the cluster's CRDs are ../shared's */
	fx *x = *state;
	char dir[PATH_MAX], *out = NULL, *err = NULL;
	offline_setup(x, dir, sizeof(dir));
	/* the account is missing: the API server's words, exit 1 */
	assert_int_equal(run_in(dir, "validate --kubeconfig kubeconfig tj.json", &out, &err), 1);
	assert_contains(out, "serviceaccount \"trainer\" not found");
	assert_null(strstr(out, "not found: ClusterTrainingRuntime")); /* the runtime was read */
	assert_null(strstr(err, "Pod Security not checked")); /* the Namespace was read */
	assert_int_equal(gets_of(x, FA_SA, SA_PATH), 1);
	assert_int_equal(gets_of(x, FA_CTR, "/apis/trainer.kubeflow.org/v1alpha1/"
					    "clustertrainingruntimes/plain"),
			 1);
	assert_int_equal(gets_of(x, FA_NS, "/api/v1/namespaces/team-a"), 1);
	free(out);
	free(err);
	/* with it, and a LimitRange the runtime's 2 CPUs break */
	fa_put_object(x->fa, FA_SA, SA_JSON);
	fa_put_object(x->fa, FA_LR, LR_JSON("{\"type\":\"Container\",\"max\":{\"cpu\":\"1\"}}"));
	assert_int_equal(run_in(dir, "validate --kubeconfig kubeconfig tj.json", &out, &err), 1);
	assert_contains(out, "maximum cpu usage per Container is 1, but limit is 2");
	free(out);
	free(err);
	/* a LimitRange among the inputs comes first */
	assert_int_equal(sp_write(dir, "lr.json",
				  LR_JSON("{\"type\":\"Container\",\"max\":{\"cpu\":\"4\"}}")), 0);
	assert_int_equal(run_in(dir, "validate --kubeconfig kubeconfig tj.json lr.json", &out,
				&err), 0);
	free(out);
	free(err);
	sp_rmtree(dir);
}

static void review_and_expand_read_the_cluster(void **state)
{
	TT_REQUIRE_SHARED(); /* the cluster's CRDs are ../shared's */
	fx *x = *state;
	char dir[PATH_MAX], *out = NULL, *err = NULL;
	offline_setup(x, dir, sizeof(dir));
	assert_int_equal(run_in(dir, "review --kubeconfig kubeconfig review.json", &out, &err), 1);
	assert_contains(out, "error looking up service account team-a/trainer");
	free(out);
	free(err);
	fa_put_object(x->fa, FA_SA, SA_JSON);
	assert_int_equal(run_in(dir, "review --kubeconfig kubeconfig review.json", &out, &err), 0);
	free(out);
	free(err);
	/* the runtime from the cluster: before, "runtime not found" */
	assert_int_equal(run_in(dir, "expand --kubeconfig kubeconfig tj.json", &out, &err), 0);
	assert_contains(out, "kind: JobSet");
	free(out);
	free(err);
	sp_rmtree(dir);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(missing_service_account_denies, setup, teardown),
		cmocka_unit_test_setup_teardown(existing_service_account_allows, setup, teardown),
		cmocka_unit_test_setup_teardown(forbidden_service_account_is_not_checked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(api_server_down_is_not_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_priority_class_denies, setup, teardown),
		cmocka_unit_test_setup_teardown(negative_priority_from_the_cache_denies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(limit_range_denies, setup, teardown),
		cmocka_unit_test_setup_teardown(quota_short_warns, setup, teardown),
		cmocka_unit_test_setup_teardown(unlistable_is_not_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(kubeflow_profile_does_not_look, setup, teardown),
		cmocka_unit_test_setup_teardown(validate_reads_what_the_inputs_lack, setup, teardown),
		cmocka_unit_test_setup_teardown(review_and_expand_read_the_cluster, setup, teardown),
	};
	return cmocka_run_group_tests_name("cluster_state", tests, NULL, NULL);
}

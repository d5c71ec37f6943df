/*
 * test_pod_security_cluster.c — the Pod Security of a TrainJob's namespace
 * as the server reads it: the Namespace by GET from the fake API server
 * (tests/support/fakeapi.c), in process through the server's own resolver
 * and tw_admission_handle; and the real `serve --pod-security` against it.
 * Every cluster state has its answer: labels that decide (enforce denies,
 * warn warns, audit annotates), and a Namespace that cannot be read (RBAC's
 * 403, an API server down, a 404) is a warning that says Pod Security was
 * not checked, never a denial, an error answer or a silent pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support/apiclient.h"
#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/admission/admission.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/resolver.h"
#include "webhook/core/clock.h"
#include "webhook/metrics/metrics.h"

typedef tt_apiclient fx;

/* A runtime whose Pods break every restricted check that a bare container
 * breaks (no securityContext) and no baseline one. */
#define RUNTIME_JSON                                                                          \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\"," \
	"\"metadata\":{\"name\":\"plain\",\"labels\":{\"trainer.kubeflow.org/framework\":"       \
	"\"torch\"}},\"spec\":{\"mlPolicy\":{\"torch\":{}},\"template\":{\"spec\":{"             \
	"\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{"        \
	"\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":"  \
	"{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"img\"}]}}}}}]}}}}"

#define TRAINJOB_JSON                                                                         \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":"  \
	"{\"name\":\"tj\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":"         \
	"\"plain\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"},"  \
	"\"trainer\":{\"numNodes\":2}}}"

#define NAMESPACE_JSON(labels)                                                                \
	"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\","       \
	"\"labels\":{" labels "}}}"

#define REVIEW                                                                                \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"object\":"   \
	TRAINJOB_JSON ",\"oldObject\":null,\"dryRun\":false}}"

#define V_TRAINJOB "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define RESTRICTED_TEXT "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"
#define NOT_CHECKED "Pod Security of namespace \"team-a\" was not checked"

static int setup(void **state)
{
	tt_apiclient_setup(state);
	fx *x = *state;
	/* the runtime is in the cache, as the watch keeps it */
	assert_int_equal(tp_store_put(x->store, tt_json(RUNTIME_JSON)), TP_OK);
	return 0;
}

static int teardown(void **state)
{
	return tt_apiclient_teardown(state);
}

typedef struct how {
	tp_profile profile;
	const char *pod_security; /* --pod-security */
	bool strict_warn;         /* --strict-action warn */
} how;

/* The answer the server gives: runtimes from the cache, the rest by GET. */
static cJSON *answer(fx *x, const how *h)
{
	tw_cluster cl = { .api = x->api,
			  .cached = (1u << TP_KIND_CLUSTER_TRAINING_RUNTIME) |
				    (1u << TP_KIND_TRAINING_RUNTIME) };
	tw_config cfg = { .opt = { .profile = h->profile, .now = "2026-11-23T10:00:00Z",
				   .pod_security = h->pod_security },
			  .store = x->store, .strict_warn = h->strict_warn };
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

static const how strict = { TP_PROFILE_STRICT, NULL, false };

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

/* The Namespace was asked for by GET at its own path. */
static void asked_for_namespace(fx *x, unsigned gets)
{
	fa_stats st;
	fa_get_stats(x->fa, FA_NS, &st);
	assert_int_equal(st.gets, gets);
	if (gets)
		assert_string_equal(st.last_path, "/api/v1/namespaces/team-a");
}

static void enforce_label_denies(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_NS,
		      NAMESPACE_JSON("\"pod-security.kubernetes.io/enforce\":\"restricted\""));
	cJSON *a = answer(x, &strict);
	assert_false(tp_get_true(a, "response.allowed"));
	long long code = 0;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 403);
	const char *msg = tp_get_str(a, "response.status.message");
	assert_contains(msg, "metadata.namespace: Forbidden: " RESTRICTED_TEXT);
	assert_contains(msg, "would be forbidden in namespace \"team-a\"");
	asked_for_namespace(x, 1);
	cJSON_Delete(a);
}

static void warn_and_audit_labels_allow(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_NS,
		      NAMESPACE_JSON("\"pod-security.kubernetes.io/warn\":\"restricted\","
				     "\"pod-security.kubernetes.io/audit\":\"restricted\","
				     "\"pod-security.kubernetes.io/audit-version\":\"v1.30\""));
	cJSON *a = answer(x, &strict);
	assert_true(tp_get_true(a, "response.allowed"));
	char *w = warnings(a);
	/* as pod-security-admission words it: kubectl prints "Warning: would violate ..." */
	assert_contains(w, "\nwould violate PodSecurity \"restricted:latest\": "
			   "allowPrivilegeEscalation != false");
	free(w);
	assert_contains(tp_get_str(a, "response.auditAnnotations.pod-security-audit-violations"),
			"would violate PodSecurity \"restricted:v1.30\": ");
	cJSON_Delete(a);
}

static void unlabelled_namespace_takes_the_default_level(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_NS, NAMESPACE_JSON(""));
	cJSON *a = answer(x, &strict);
	assert_true(tp_get_true(a, "response.allowed")); /* privileged, as the API server's */
	assert_null(tp_get_array(a, "response.warnings"));
	cJSON_Delete(a);
	how h = { TP_PROFILE_STRICT, "restricted", false }; /* serve --pod-security restricted */
	a = answer(x, &h);
	assert_false(tp_get_true(a, "response.allowed"));
	assert_contains(tp_get_str(a, "response.status.message"), RESTRICTED_TEXT);
	cJSON_Delete(a);
	asked_for_namespace(x, 2);
}

/* A Namespace that cannot be read: allowed, with the warning that says what
 * was not checked and why — neither a verdict nor an error answer. */
static void assert_not_checked(fx *x, const char *why)
{
	cJSON *a = answer(x, &strict);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_null(tp_get(a, "response.status"));
	char *w = warnings(a);
	assert_contains(w, NOT_CHECKED ": namespaces \"team-a\" could not be looked up: ");
	assert_contains(w, why);
	free(w);
	cJSON_Delete(a);
}

static void namespace_forbidden_by_rbac_is_not_checked(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_NS,
		      NAMESPACE_JSON("\"pod-security.kubernetes.io/enforce\":\"restricted\""));
	fa_set_get_status(x->fa, FA_NS, 403);
	assert_not_checked(x, "GET /api/v1/namespaces/team-a: HTTP 403");
	asked_for_namespace(x, 1);
	tp_buf m = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&m), 0);
	assert_true(sp_metric(m.data, "trainer_webhook_lookups_total{kind=\"Namespace\","
				      "source=\"api\",result=\"error\"}") == 1);
	tp_buf_free(&m);
	fa_set_get_status(x->fa, FA_NS, 0); /* the RBAC is mended: the label decides again */
	cJSON *a = answer(x, &strict);
	assert_false(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
}

static void namespace_not_found_is_not_checked(void **state)
{
	fx *x = *state;
	/* the API server admitted a write in team-a, so a 404 is a race or another
	 * cluster: its labels are unknown, not absent (even with a default level) */
	assert_not_checked(x, "HTTP 404");
	asked_for_namespace(x, 1);
	how h = { TP_PROFILE_STRICT, "restricted", false };
	cJSON *a = answer(x, &h);
	assert_true(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
}

static void api_server_down_is_not_checked(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_NS,
		      NAMESPACE_JSON("\"pod-security.kubernetes.io/enforce\":\"restricted\""));
	fa_set_down(x->fa, true);
	assert_not_checked(x, "GET ");
	fa_set_down(x->fa, false);
}

static void kubeflow_profile_does_not_look(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_NS,
		      NAMESPACE_JSON("\"pod-security.kubernetes.io/enforce\":\"restricted\""));
	how h = { TP_PROFILE_KUBEFLOW, "restricted", false };
	cJSON *a = answer(x, &h);
	assert_true(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
	asked_for_namespace(x, 0);
}

static void strict_action_warn_turns_enforce_into_a_warning(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_NS,
		      NAMESPACE_JSON("\"pod-security.kubernetes.io/enforce\":\"restricted\""));
	how h = { TP_PROFILE_STRICT, NULL, true };
	cJSON *a = answer(x, &h);
	assert_true(tp_get_true(a, "response.allowed"));
	char *w = warnings(a);
	assert_contains(w, "strict: metadata.namespace: Forbidden: " RESTRICTED_TEXT);
	free(w);
	assert_contains(tp_get_str(a, "response.auditAnnotations.strict-violations"),
			RESTRICTED_TEXT);
	cJSON_Delete(a);
}

/* ------------------------------------------------------------ serve */

/* `serve --kube-server URL --pod-security restricted`: the flag reaches the
 * server, and the Namespace is read through its resolver. */
static void serve_pod_security_flag(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_CTR, RUNTIME_JSON);
	fa_put_object(x->fa, FA_NS, NAMESPACE_JSON("\"team\":\"a\""));
	char dir[128], logdir[200], url[64];
	assert_int_equal(sp_mkdtemp(dir, sizeof(dir), "tw-psa"), 0);
	assert_int_equal(sp_certs(dir, false), 0);
	snprintf(logdir, sizeof(logdir), "%s/log", dir);
	assert_int_equal(mkdir(logdir, 0700), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(x->fa));
	const char *extra[] = { "--kube-server", url, "--crds", "none", "--pod-security",
				"restricted:v1.30", "--threads", "1", NULL };
	sp_server s = { 0 };
	assert_int_equal(sp_start(&s, dir, logdir, extra), 0);
	long long end = tt_mono_ms() + 10000 * sp_slow();
	sp_resp r = { 0 };
	for (;;) { /* ready once the runtimes are listed */
		sp_https(NULL, &s, "GET", "/readyz", NULL, NULL, 0, SP_FRESH, &r);
		if (r.status == 200 || tt_mono_ms() > end)
			break;
		sp_resp_free(&r);
		tt_sleep_ms(50);
	}
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	assert_int_equal(sp_https(NULL, &s, "POST", V_TRAINJOB, "application/json", REVIEW,
				  strlen(REVIEW), 0, &r), 0);
	assert_int_equal(r.status, 200);
	cJSON *a = tt_json(r.body);
	assert_false(tp_get_true(a, "response.allowed"));
	assert_contains(tp_get_str(a, "response.status.message"),
			"violates PodSecurity \"restricted:v1.30\": ");
	cJSON_Delete(a);
	sp_resp_free(&r);
	asked_for_namespace(x, 1);
	assert_int_equal(sp_stop_checked(&s), 0);
	sp_rmtree(dir);
}

/* A bad level is a usage error (exit 2) naming the flag, for every command
 * that takes it. */
static void bad_pod_security_flag_is_usage(void **state)
{
	(void)state;
	static const char *const cmds[] = { "validate --pod-security strict x.yaml",
					    "review --pod-security restricted:1.30 -",
					    "serve --pod-security none --dev" };
	for (size_t i = 0; i < 3; i++) {
		char line[256], *err = NULL;
		snprintf(line, sizeof(line), "%s %s", tt_bin(), cmds[i]);
		int rc = tt_run(line, NULL, &err);
		if (rc != 2 || !strstr(err, "--pod-security \""))
			fail_msg("%s: exit %d\n%s", cmds[i], rc, err);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(enforce_label_denies, setup, teardown),
		cmocka_unit_test_setup_teardown(warn_and_audit_labels_allow, setup, teardown),
		cmocka_unit_test_setup_teardown(unlabelled_namespace_takes_the_default_level, setup,
						teardown),
		cmocka_unit_test_setup_teardown(namespace_forbidden_by_rbac_is_not_checked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(namespace_not_found_is_not_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(api_server_down_is_not_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(kubeflow_profile_does_not_look, setup, teardown),
		cmocka_unit_test_setup_teardown(strict_action_warn_turns_enforce_into_a_warning, setup,
						teardown),
		cmocka_unit_test_setup_teardown(serve_pod_security_flag, setup, teardown),
		cmocka_unit_test(bad_pod_security_flag_is_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

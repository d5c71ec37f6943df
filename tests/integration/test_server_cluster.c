/*
 * test_server_cluster.c — the real `serve --kube-server ... ` against the
 * fake API server: managed certificates from nothing, serving and CA
 * rotation while a client keeps sending (every request verified against the
 * caBundle the webhook configuration holds at that moment, as the API server
 * would), two replicas on one Secret, lookups the API server cannot answer,
 * and --strict-action warn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define NS "tw-test"
#define HOST "trainer-webhook." NS ".svc"
#define V_CTR "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"
#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

typedef struct fx {
	fa_server *fa;
	char dir[128];
	char url[64];
	sp_server a, b;
} fx;

#define WEBHOOK(name)                                                                       \
	"{\"name\":\"" name "\",\"clientConfig\":{\"service\":{\"name\":\"trainer-webhook\","   \
	"\"namespace\":\"" NS "\",\"path\":\"/x\"}}}"

static int setup(void **state)
{
	fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(fa_start(&x->fa), 0);
	assert_int_equal(sp_mkdtemp(x->dir, sizeof(x->dir), "tw-cluster"), 0);
	snprintf(x->url, sizeof(x->url), "http://127.0.0.1:%u", fa_port(x->fa));
	fa_put_object(x->fa, FA_VWC,
		      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
		      "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":"
		      "\"trainer-webhook-validator\"},\"webhooks\":[" WEBHOOK("a.example.com") ","
		      WEBHOOK("b.example.com") "]}");
	fa_put_object(x->fa, FA_MWC,
		      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
		      "\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":"
		      "\"trainer-webhook-defaulter\"},\"webhooks\":[" WEBHOOK("c.example.com") "]}");
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	fx *x = *state;
	int rc = sp_stop_checked(&x->a) | sp_stop_checked(&x->b);
	fa_stop(x->fa);
	sp_rmtree(x->dir);
	free(x);
	return rc ? -1 : 0;
}

/* `serve` against the fake with managed certificates (and extra options). */
static void start(fx *x, sp_server *s, const char *logname, const char *const *more)
{
	char logdir[200];
	snprintf(logdir, sizeof(logdir), "%s/%s", x->dir, logname);
	assert_int_equal(mkdir(logdir, 0700), 0);
	const char *extra[32] = { "--kube-server", x->url, "--manage-certs", "--namespace", NS,
				  "--threads", "2", "--shutdown-grace", "2" };
	int n = 9;
	for (int i = 0; more && more[i]; i++)
		extra[n++] = more[i];
	extra[n] = NULL;
	assert_int_equal(sp_start(s, NULL, logdir, extra), 0);
	snprintf(s->host, sizeof(s->host), "%s", HOST);
}

/* The bundle the ValidatingWebhookConfiguration holds now (decoded; malloc'd,
 * "" when none), as the API server would trust it. */
static char *published_bundle(fx *x)
{
	char *text = fa_get_object(x->fa, FA_VWC, NULL, "trainer-webhook-validator");
	cJSON *cfg = tt_json(text);
	const char *b64 = tp_get_str(cJSON_GetArrayItem(tp_get_array(cfg, "webhooks"), 0),
				     "clientConfig.caBundle");
	tp_buf b = TP_BUF_INIT(0);
	if (b64)
		assert_int_equal(tp_base64_decode(b64, strlen(b64), &b), 0);
	else
		tp_buf_adds(&b, "");
	cJSON_Delete(cfg);
	free(text);
	return b.data;
}

/* Write the published bundle where requests take their CA from. */
static void trust_published(fx *x, sp_server *s)
{
	char *b = published_bundle(x);
	snprintf(s->ca, sizeof(s->ca), "%s/trusted.pem", x->dir);
	FILE *fp = fopen(s->ca, "w");
	assert_non_null(fp);
	fputs(b, fp);
	fclose(fp);
	free(b);
}

static bool wait_ready(sp_server *s, int ms)
{
	long long end = tt_mono_ms() + ms;
	while (tt_mono_ms() < end) {
		sp_resp r;
		sp_https(NULL, s, "GET", "/readyz", NULL, NULL, 0, SP_NOVERIFY | SP_FRESH, &r);
		bool ok = r.status == 200;
		sp_resp_free(&r);
		if (ok)
			return true;
		tt_sleep_ms(20);
	}
	return false;
}

static char *bench_review(void)
{
	char *body = tt_read_file("tests/bench/admissionreview-clustertrainingruntime.json", NULL);
	assert_non_null(body);
	return body;
}

static void managed_start_and_rotation_under_load(void **state)
{
	fx *x = *state;
	/* Five-second serving certificates and a ten-second CA: within the run a
	 * serving certificate is renewed, a next CA joins the bundle, is promoted
	 * after the one-second overlap, and the old CA expires. */
	const char *more[] = { "--cert-validity", "5s", "--ca-validity", "10s", "--ca-overlap",
			       "1s", NULL };
	start(x, &x->a, "a", more);
	assert_true(wait_ready(&x->a, 10000 * sp_slow()));
	char *log = sp_log(&x->a);
	assert_non_null(strstr(log, "managed certificates: wrote the Secret"));
	assert_non_null(strstr(log, "wrote the CA bundle into ValidatingWebhookConfiguration "
				    "trainer-webhook-validator"));
	assert_non_null(strstr(log, "wrote the CA bundle into MutatingWebhookConfiguration "
				    "trainer-webhook-defaulter"));
	assert_non_null(strstr(log, "a valid pair is served and every webhook configuration "
				    "carries the CA bundle"));
	free(log);
	char *first_bundle = published_bundle(x);
	char *body = bench_review();
	char serials[16][128];
	int nserials = 0, failures = 0, requests = 0, max_cas = 0;
	char last_error[512] = "";
	CURL *keep = curl_easy_init();
	long long end = tt_mono_ms() + 11500;
	while (tt_mono_ms() < end) {
		trust_published(x, &x->a);
		char *b = published_bundle(x);
		if (tt_count_certs(b) > max_cas)
			max_cas = tt_count_certs(b);
		free(b);
		sp_resp r;
		/* A new connection (a new handshake: the pair served now) and a
		 * kept one, both verified against what the API server trusts. */
		for (int k = 0; k < 2; k++) {
			int rc = sp_https(k ? keep : NULL, &x->a, "POST", V_CTR, "application/json",
					  body, strlen(body), k ? SP_CERTINFO : SP_FRESH | SP_CERTINFO,
					  &r);
			requests++;
			if (rc || r.status != 200) {
				failures++;
				snprintf(last_error, sizeof(last_error), "%ld %s", r.status,
					 r.curl_error);
			}
			bool seen = false;
			for (int i = 0; i < nserials; i++)
				seen |= !strcmp(serials[i], r.serial);
			if (!seen && r.serial[0] && nserials < 16)
				snprintf(serials[nserials++], 128, "%s", r.serial);
			sp_resp_free(&r);
		}
		tt_sleep_ms(25);
	}
	curl_easy_cleanup(keep);
	char *last_bundle = published_bundle(x);
	if (failures)
		print_message("failed: %d of %d, last: %s\n", failures, requests, last_error);
	assert_int_equal(failures, 0);
	assert_true(requests > 50);
	assert_true(nserials >= 3); /* renewals were served without a restart */
	assert_int_equal(max_cas, 2); /* the old CA stayed trusted through the overlap */
	assert_string_not_equal(first_bundle, last_bundle); /* the CA itself was replaced */
	assert_int_equal(tt_count_certs(last_bundle), 1);   /* and the expired one is gone */
	free(first_bundle);
	free(last_bundle);
	free(body);
	sp_resp m;
	assert_int_equal(sp_http_get(x->a.metrics_port, "/metrics", &m), 0);
	assert_true(sp_metric(m.body, "trainer_webhook_certificate_rotations_total{what=\"ca\"}") >= 2);
	/* About four writes per ten-second CA life; the storm of issue 20 was
	 * hundreds a second. */
	double writes = sp_metric(m.body, "trainer_webhook_cert_secret_writes_total");
	assert_true(writes >= 4 && writes <= 20);
	assert_true(sp_metric(m.body, "trainer_webhook_certificate_manager_ready") == 1);
	sp_resp_free(&m);
}

static void two_replicas_share_one_ca(void **state)
{
	fx *x = *state;
	start(x, &x->a, "a", NULL);
	start(x, &x->b, "b", NULL);
	assert_true(wait_ready(&x->a, 10000 * sp_slow()));
	assert_true(wait_ready(&x->b, 10000 * sp_slow()));
	char *bundle = published_bundle(x);
	assert_int_equal(tt_count_certs(bundle), 1);
	free(bundle);
	trust_published(x, &x->a);
	snprintf(x->b.ca, sizeof(x->b.ca), "%s", x->a.ca);
	sp_resp ra, rb;
	assert_int_equal(sp_https(NULL, &x->a, "GET", "/readyz", NULL, NULL, 0, SP_CERTINFO, &ra), 0);
	assert_int_equal(sp_https(NULL, &x->b, "GET", "/readyz", NULL, NULL, 0, SP_CERTINFO, &rb), 0);
	assert_int_equal(ra.status, 200);
	assert_int_equal(rb.status, 200);
	assert_string_equal(ra.serial, rb.serial); /* one pair, from the one Secret */
	sp_resp_free(&ra);
	sp_resp_free(&rb);
}

/* Something keeps breaking the Secret (here its tls.key, every 100 ms for
 * 3 s) right after the replica wrote it: the replica writes it again at most
 * once per write floor (a minute with the default durations), keeps serving
 * the pair it has, and stays ready. Before the floor every change was
 * written back at once: one write per break. */
static void secret_writes_keep_the_floor(void **state)
{
	fx *x = *state;
	start(x, &x->a, "a", NULL);
	assert_true(wait_ready(&x->a, 10000 * sp_slow()));
	trust_published(x, &x->a);
	fa_stats before, after;
	fa_get_stats(x->fa, FA_SECRET, &before);
	for (int i = 0; i < 30; i++) {
		char *text = fa_get_object(x->fa, FA_SECRET, NS, "trainer-webhook-cert");
		cJSON *sec = tt_json(text);
		cJSON *data = cJSON_GetObjectItemCaseSensitive(sec, "data");
		cJSON_DeleteItemFromObjectCaseSensitive(data, "tls.key");
		cJSON_AddStringToObject(data, "tls.key", "Z2FyYmFnZQ=="); /* "garbage" */
		char *broken = cJSON_PrintUnformatted(sec);
		fa_put_object(x->fa, FA_SECRET, broken);
		free(broken);
		cJSON_Delete(sec);
		free(text);
		tt_sleep_ms(100);
	}
	fa_get_stats(x->fa, FA_SECRET, &after);
	assert_int_equal(after.puts + after.posts, before.puts + before.posts);
	sp_resp r;
	assert_int_equal(sp_https(NULL, &x->a, "GET", "/readyz", NULL, NULL, 0, SP_FRESH, &r), 0);
	assert_int_equal(r.status, 200); /* verified against the published bundle */
	sp_resp_free(&r);
	assert_int_equal(sp_http_get(x->a.metrics_port, "/metrics", &r), 0);
	assert_true(sp_metric(r.body, "trainer_webhook_cert_secret_writes_total") == 1);
	sp_resp_free(&r);
	char *log = sp_log(&x->a);
	assert_non_null(strstr(log, "writes it at most once every 60s"));
	free(log);
}

#define TRAINJOB_REVIEW(runtime)                                                            \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"u-7\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"object\":{" \
	"\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{" \
	"\"name\":\"tj\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\""         \
	runtime "\"}}},\"oldObject\":null,\"dryRun\":false}}"


/* serve --kube without --crds follows the cluster's CRDs of its kinds: the
 * schema the answers check is the installed one, and a CRD deleted leaves
 * its kinds to the built-in checks. */
#define QUANTITY_REVIEW                                                                         \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"u-8\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"object\":{" \
	"\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{" \
	"\"name\":\"tj\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"x\"},"     \
	"\"trainer\":{\"resourcesPerNode\":{\"limits\":{\"memory\":\"4gi\"}}}}},"                \
	"\"oldObject\":null,\"dryRun\":false}}"

static bool quantity_refused(sp_server *s)
{
	sp_resp r;
	const char *body = QUANTITY_REVIEW;
	assert_int_equal(sp_https(NULL, s, "POST", V_TJ, "application/json", body, strlen(body), 0,
				  &r), 0);
	cJSON *a = tt_json(r.body);
	const char *msg = tp_get_str(a, "response.status.message");
	bool refused = msg && strstr(msg, "spec.trainer.resourcesPerNode.limits.memory in body "
					  "should match");
	cJSON_Delete(a);
	sp_resp_free(&r);
	return refused;
}

static bool not_refused(void *arg)
{
	return !quantity_refused(arg);
}

static void cluster_crds_are_followed(void **state)
{
	fx *x = *state;
	TT_REQUIRE_SHARED();
	char *crd = tt_crd_json("trainer.kubeflow.org_trainjobs.yaml");
	fa_put_object(x->fa, FA_CRD, crd);
	free(crd);
	start(x, &x->a, "a", NULL);
	assert_true(wait_ready(&x->a, 10000 * sp_slow()));
	trust_published(x, &x->a);
	assert_true(quantity_refused(&x->a));
	/* the CRD goes: the built-in checks, which know no quantity pattern */
	fa_push(x->fa, FA_CRD, "{\"type\":\"DELETED\",\"object\":{\"apiVersion\":"
			       "\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
			       "\"metadata\":{\"name\":\"trainjobs.trainer.kubeflow.org\","
			       "\"resourceVersion\":\"99\"}}}");
	assert_true(tt_wait_until(not_refused, &x->a, 5000 * sp_slow()));
}

static void unanswerable_lookup_is_an_error_answer(void **state)
{
	fx *x = *state;
	start(x, &x->a, "a", NULL);
	assert_true(wait_ready(&x->a, 10000 * sp_slow()));
	trust_published(x, &x->a);
	fa_set_get_status(x->fa, FA_CTR, 503);
	const char *body = TRAINJOB_REVIEW("fresh-runtime");
	sp_resp r;
	assert_int_equal(sp_https(NULL, &x->a, "POST", V_TJ "?timeout=5s", "application/json",
				  body, strlen(body), 0, &r), 0);
	assert_int_equal(r.status, 200);
	cJSON *a = tt_json(r.body);
	assert_false(tp_get_true(a, "response.allowed"));
	long long code;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 500);
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "could not be looked up: GET /apis/trainer.kubeflow.org/v1alpha1/"
			       "clustertrainingruntimes/fresh-runtime: HTTP 503"));
	cJSON_Delete(a);
	sp_resp_free(&r);
	/* The API server answers again, and has the runtime (not yet watched). */
	fa_set_get_status(x->fa, FA_CTR, 0);
	fa_put_hidden(x->fa, FA_CTR,
		      "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		      "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"fresh-runtime\"},"
		      "\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":[]}}}}");
	assert_int_equal(sp_https(NULL, &x->a, "POST", V_TJ, "application/json", body,
				  strlen(body), 0, &r), 0);
	a = tt_json(r.body);
	assert_true(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
	sp_resp_free(&r);
	sp_resp m;
	assert_int_equal(sp_http_get(x->a.metrics_port, "/metrics", &m), 0);
	assert_true(sp_metric(m.body, "trainer_webhook_error_answers_total{reason=\"lookup_failed\"}") == 1);
	sp_resp_free(&m);
}

/* A runtime without the framework label: the strict profile denies it,
 * upstream does not. With --strict-action warn it is allowed, with the
 * violation as a warning and an audit annotation. */
static void strict_action_warn(void **state)
{
	fx *x = *state;
	const char *more[] = { "--strict-action", "warn", NULL };
	start(x, &x->a, "a", more);
	assert_true(wait_ready(&x->a, 10000 * sp_slow()));
	trust_published(x, &x->a);
	const char *body =
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
		"\"uid\":\"u-9\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\","
		"\"kind\":\"ClusterTrainingRuntime\"},\"operation\":\"CREATE\",\"object\":{"
		"\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
		"\"metadata\":{\"name\":\"no-label\"},\"spec\":{\"template\":{\"spec\":{"
		"\"replicatedJobs\":[{\"name\":\"node\",\"replicas\":1,\"template\":{\"metadata\":{"
		"\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{"
		"\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"i\"}]}}}}}]}}}},"
		"\"oldObject\":null,\"dryRun\":false}}";
	sp_resp r;
	assert_int_equal(sp_https(NULL, &x->a, "POST", V_CTR, "application/json", body,
				  strlen(body), 0, &r), 0);
	cJSON *a = tt_json(r.body);
	assert_true(tp_get_true(a, "response.allowed"));
	const cJSON *w = tp_get_array(a, "response.warnings");
	assert_non_null(w);
	bool found = false;
	const cJSON *it;
	cJSON_ArrayForEach(it, w)
		found |= cJSON_IsString(it) &&
			 !strncmp(it->valuestring, "strict: metadata.labels[trainer.kubeflow.org/"
						   "framework]: Required value", 71);
	assert_true(found);
	assert_non_null(strstr(tp_get_str(a, "response.auditAnnotations.strict-violations"),
			       "metadata.labels[trainer.kubeflow.org/framework]"));
	cJSON_Delete(a);
	sp_resp_free(&r);
	/* What upstream denies is still denied (replicas 2 on the trainer job). */
	char *deny = strdup(body);
	char *rep = strstr(deny, "\"replicas\":1");
	rep[11] = '2';
	assert_int_equal(sp_https(NULL, &x->a, "POST", V_CTR, "application/json", deny,
				  strlen(deny), 0, &r), 0);
	a = tt_json(r.body);
	assert_false(tp_get_true(a, "response.allowed"));
	const char *msg = tp_get_str(a, "response.status.message");
	assert_non_null(strstr(msg, "replicas: Invalid value: 2: always must be 1"));
	assert_null(strstr(msg, "framework")); /* the strict-only one is a warning even here */
	cJSON_Delete(a);
	sp_resp_free(&r);
	free(deny);
	sp_resp m;
	assert_int_equal(sp_http_get(x->a.metrics_port, "/metrics", &m), 0);
	assert_true(sp_metric(m.body, "trainer_webhook_strict_warnings_total{route=\"" V_CTR "\"}") >= 2);
	sp_resp_free(&m);
}

/* Certificates from files, issued for namespace "test": a server told it
 * runs in another namespace is not ready, and says why. */
static void file_pair_must_cover_the_service(void **state)
{
	fx *x = *state;
	char certdir[200], logdir[200];
	snprintf(certdir, sizeof(certdir), "%s/certs", x->dir);
	assert_int_equal(mkdir(certdir, 0700), 0);
	assert_int_equal(sp_certs(certdir, false), 0); /* trainer-webhook in namespace test */
	for (int round = 0; round < 2; round++) {
		sp_server *s = round ? &x->b : &x->a;
		snprintf(logdir, sizeof(logdir), "%s/log%d", x->dir, round);
		assert_int_equal(mkdir(logdir, 0700), 0);
		const char *extra[] = { "--kube-server", x->url, "--namespace", round ? "test" : "moved",
					"--shutdown-grace", "1", NULL };
		assert_int_equal(sp_start(s, certdir, logdir, extra), 0);
		sp_resp r;
		long long end = tt_mono_ms() + 10000LL * sp_slow();
		do {
			sp_https(NULL, s, "GET", "/readyz", NULL, NULL, 0, 0, &r);
			if (r.status == (round ? 200 : 503) &&
			    (round || strstr(r.body, "does not cover")))
				break;
			sp_resp_free(&r);
			tt_sleep_ms(20);
		} while (tt_mono_ms() < end);
		if (round) {
			assert_int_equal(r.status, 200);
		} else {
			assert_int_equal(r.status, 503);
			assert_non_null(strstr(r.body, "the serving certificate does not cover "
						       "trainer-webhook.moved.svc"));
		}
		sp_resp_free(&r);
	}
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(managed_start_and_rotation_under_load, setup,
						teardown),
		cmocka_unit_test_setup_teardown(two_replicas_share_one_ca, setup, teardown),
		cmocka_unit_test_setup_teardown(secret_writes_keep_the_floor, setup, teardown),
		cmocka_unit_test_setup_teardown(unanswerable_lookup_is_an_error_answer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(strict_action_warn, setup, teardown),
		cmocka_unit_test_setup_teardown(cluster_crds_are_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(file_pair_must_cover_the_service, setup, teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}

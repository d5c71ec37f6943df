/*
 * test_server_admission.c — the real `trainer-webhook serve` over TLS: every
 * route's answers (validating, mutating, /expand), every HTTP error,
 * keep-alive, ?timeout=, /metrics, /healthz and /readyz. One server for the
 * whole group (started in the group setup, stopped in its teardown), on
 * ports the kernel chose, with certificates made for the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/server/tls.h"

static char tmp[64];
static char certdir[128], rtdir[128];
static sp_server srv;

#define R_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define R_CTR "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"
#define R_OME "/validate-ome-io-v1beta1-trainingruntime"
#define R_MTJ "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
#define R_MJS "/mutate-jobset-x-k8s-io-v1alpha2-jobset"

/* The TrainJob that owns the JobSets of the mutating JobSet tests; it is in
 * the server's store (the --runtimes folder). */
static const char *owner_trainjob_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: TrainJob\n"
	"metadata:\n  name: mnist\n  namespace: test\n"
	"spec:\n  runtimeRef:\n    name: torch-distributed\n  trainer:\n    numNodes: 2\n";

static void contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("\"%s\" not found in:\n%s", needle, hay ? hay : "(null)");
}

static int group_setup(void **state)
{
	(void)state;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	if (sp_mkdtemp(tmp, sizeof(tmp), "tw-srv"))
		return -1;
	snprintf(certdir, sizeof(certdir), "%s/certs", tmp);
	snprintf(rtdir, sizeof(rtdir), "%s/runtimes", tmp);
	if (mkdir(certdir, 0700) || mkdir(rtdir, 0700) || sp_certs(certdir, false) ||
	    sp_copy_runtimes(rtdir) || sp_write(rtdir, "trainjob-mnist.yaml", owner_trainjob_yaml))
		return -1;
	const char *extra[] = { "--runtimes", rtdir, "--max-body", "65536", "--threads", "2", NULL };
	if (sp_start(&srv, certdir, tmp, extra)) {
		char *log = sp_log(&srv);
		fprintf(stderr, "server did not start (status %d):\n%s\n", srv.status, log);
		free(log);
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	if (tmp[0])
		sp_rmtree(tmp);
	curl_global_cleanup();
	return rc;
}

/* ------------------------------------------------------------ helpers */

/* An AdmissionReview around object (JSON text). */
static char *review(const char *api_version, const char *uid, const char *group,
		    const char *version, const char *kind, const char *ns, const char *object)
{
	size_t n = strlen(object) + 1024;
	char *b = malloc(n);
	assert_non_null(b);
	char nsfield[128] = "";
	if (ns)
		snprintf(nsfield, sizeof(nsfield), "\"namespace\":\"%s\",", ns);
	snprintf(b, n,
		 "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"%s\",\"request\":{"
		 "\"uid\":\"%s\",\"kind\":{\"group\":\"%s\",\"version\":\"%s\",\"kind\":\"%s\"},"
		 "\"resource\":{\"group\":\"%s\",\"version\":\"%s\",\"resource\":\"x\"},"
		 "\"name\":\"x\",%s\"operation\":\"CREATE\","
		 "\"userInfo\":{\"username\":\"alice\"},\"object\":%s,\"oldObject\":null,"
		 "\"dryRun\":false}}",
		 api_version, uid, group, version, kind, group, version, nsfield, object);
	return b;
}

static void post(const char *path, const char *ctype, const char *body, sp_resp *r)
{
	int rc = sp_https(NULL, &srv, "POST", path, ctype, body, strlen(body), 0, r);
	if (rc)
		fail_msg("POST %s: curl %d %s", path, rc, r->curl_error);
}

/* The defaulter stamps runtimePatches with the clock: the time the server's
 * patch carries, so that `review --now` replays the very same answer. */
static void patch_time(const char *answer, char *now, size_t n)
{
	cJSON *j = cJSON_Parse(answer);
	const char *b64 = tp_get_str(j, "response.patch");
	char *ops_text = b64 ? sp_base64_decode(b64, NULL) : NULL;
	cJSON *ops = ops_text ? cJSON_Parse(ops_text) : NULL;
	const cJSON *op;
	cJSON_ArrayForEach(op, ops)
	{
		const char *path = tp_get_str(op, "path"), *v = tp_get_str(op, "value");
		size_t pl = path ? strlen(path) : 0;
		if (v && pl >= 5 && !strcmp(path + pl - 5, "/time"))
			snprintf(now, n, "%s", v);
	}
	cJSON_Delete(ops);
	free(ops_text);
	cJSON_Delete(j);
}

/* POST an AdmissionReview; the HTTP answer must be 200 JSON, and must be
 * byte for byte what `review` prints for the same body on the same route. */
static cJSON *admit(const char *path, const char *body)
{
	sp_resp r;
	post(path, "application/json", body, &r);
	if (r.status != 200)
		fail_msg("%s: HTTP %ld: %s", path, r.status, r.body);
	assert_string_equal(r.ctype, "application/json");
	char file[128], cmd[700], now[64] = "";
	snprintf(file, sizeof(file), "%s/review-in.json", tmp);
	assert_int_equal(sp_write(tmp, "review-in.json", body), 0);
	patch_time(r.body, now, sizeof(now));
	snprintf(cmd, sizeof(cmd), "%s review --runtimes %s --path %s %s%s %s", tt_bin(), rtdir,
		 path, *now ? "--now " : "", now, file);
	char *out = NULL;
	int rc = tt_run(cmd, &out, NULL);
	assert_true(rc == 0 || rc == 1);
	if (strcmp(out, r.body))
		fail_msg("server and review differ on %s:\nserver: %s\nreview: %s", path, r.body,
			 out);
	free(out);
	cJSON *j = tt_json(r.body);
	sp_resp_free(&r);
	return j;
}

static const cJSON *resp(const cJSON *j)
{
	const cJSON *r = tp_get_object(j, "response");
	assert_non_null(r);
	return r;
}

/* ------------------------------------------------------------ validating */

static const char *ctr_replicas2 =
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
	"\"metadata\":{\"name\":\"two\",\"labels\":{\"trainer.kubeflow.org/framework\":\"torch\"}},"
	"\"spec\":{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":{"
	"\"replicatedJobs\":[{\"name\":\"node\",\"replicas\":2,\"template\":{\"metadata\":{"
	"\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{"
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"x\"}]}}}}}]}}}}";

static void ctr_replicas_denied_403(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "uid-ctr-1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", NULL, ctr_replicas2);
	cJSON *j = admit(R_CTR, body);
	const cJSON *r = resp(j);
	assert_string_equal(tp_get_str(j, "apiVersion"), "admission.k8s.io/v1");
	assert_string_equal(tp_get_str(j, "kind"), "AdmissionReview");
	assert_string_equal(tp_get_str(r, "uid"), "uid-ctr-1");
	assert_false(tp_get_true(r, "allowed"));
	long long code = 0;
	assert_true(tp_get_int(r, "status.code", &code));
	assert_int_equal(code, 403);
	assert_string_equal(tp_get_str(r, "status.reason"), "Forbidden");
	contains(tp_get_str(r, "status.message"),
		 "spec.template.spec.replicatedJobs[0].replicas");
	contains(tp_get_str(r, "status.message"), "always must be 1");
	assert_null(tp_get(r, "patch"));
	cJSON_Delete(j);
	free(body);
}

static void trainjob_deprecated_runtime_warns(void **state)
{
	(void)state;
	char *body = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	assert_non_null(body);
	cJSON *j = admit(R_TJ, body);
	const cJSON *r = resp(j);
	assert_string_equal(tp_get_str(r, "uid"), "0b6f3a52-7c1d-4e8a-9f20-5d4c3b2a1908");
	assert_true(tp_get_true(r, "allowed"));
	const cJSON *w = tp_get_array(r, "warnings");
	assert_int_equal(cJSON_GetArraySize(w), 1);
	contains(cJSON_GetArrayItem(w, 0)->valuestring,
		 "Referenced ClusterTrainingRuntime \"torch-legacy\" is deprecated");
	cJSON_Delete(j);
	free(body);
}

static const char *tj_plain =
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
	"\"metadata\":{\"name\":\"ok\",\"namespace\":\"test\"},"
	"\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},\"trainer\":{\"numNodes\":2}}}";

static void trainjob_allowed_and_api_version_echo(void **state)
{
	(void)state;
	const char *versions[] = { "admission.k8s.io/v1", "admission.k8s.io/v1beta1" };
	for (int i = 0; i < 2; i++) {
		char uid[32];
		snprintf(uid, sizeof(uid), "uid-tj-%d", i);
		char *body = review(versions[i], uid, "trainer.kubeflow.org", "v1alpha1",
				    "TrainJob", "test", tj_plain);
		cJSON *j = admit(R_TJ, body);
		assert_string_equal(tp_get_str(j, "apiVersion"), versions[i]);
		const cJSON *r = resp(j);
		assert_string_equal(tp_get_str(r, "uid"), uid);
		assert_true(tp_get_true(r, "allowed"));
		assert_null(tp_get(r, "warnings"));
		assert_null(tp_get(r, "status"));
		cJSON_Delete(j);
		free(body);
	}
}

static void trainjob_missing_runtime_denied(void **state)
{
	(void)state;
	const char *obj = "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
			  "\"metadata\":{\"name\":\"lost\",\"namespace\":\"test\"},"
			  "\"spec\":{\"runtimeRef\":{\"name\":\"no-such-runtime\"}}}";
	char *body = review("admission.k8s.io/v1", "uid-tj-lost", "trainer.kubeflow.org",
			    "v1alpha1", "TrainJob", "test", obj);
	cJSON *j = admit(R_TJ, body);
	const cJSON *r = resp(j);
	assert_false(tp_get_true(r, "allowed"));
	contains(tp_get_str(r, "status.message"), "no-such-runtime");
	cJSON_Delete(j);
	free(body);
}

#define OME_WORKER(name, extra)                                                         \
	"{\"name\":\"" name "\"" extra ",\"template\":{\"spec\":{\"template\":{\"spec\":{" \
	"\"containers\":[{\"name\":\"trainer\"}]}}}}}"

static void ome_route_allow_and_deny(void **state)
{
	(void)state;
	const char *fmt = "{\"apiVersion\":\"ome.io/v1beta1\",\"kind\":\"TrainingRuntime\","
			  "\"metadata\":{\"name\":\"pytorch-elastic\",\"namespace\":\"test\"},"
			  "\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":[%s]}}}}";
	char obj[1024];
	snprintf(obj, sizeof(obj), fmt, OME_WORKER("a", "") "," OME_WORKER("b", ",\"replicas\":2"));
	char *body = review("admission.k8s.io/v1beta1", "uid-ome-1", "ome.io", "v1beta1",
			    "TrainingRuntime", "test", obj);
	cJSON *j = admit(R_OME, body);
	assert_string_equal(tp_get_str(j, "apiVersion"), "admission.k8s.io/v1beta1");
	const cJSON *r = resp(j);
	assert_string_equal(tp_get_str(r, "uid"), "uid-ome-1");
	assert_false(tp_get_true(r, "allowed"));
	contains(tp_get_str(r, "status.message"), "replicas for job 1 must be 1, got 2");
	cJSON_Delete(j);
	free(body);

	snprintf(obj, sizeof(obj), fmt, OME_WORKER("a", "") "," OME_WORKER("b", ""));
	body = review("admission.k8s.io/v1beta1", "uid-ome-2", "ome.io", "v1beta1",
		      "TrainingRuntime", "test", obj);
	j = admit(R_OME, body);
	r = resp(j);
	assert_string_equal(tp_get_str(r, "uid"), "uid-ome-2");
	if (!tp_get_true(r, "allowed"))
		fail_msg("OME runtime with replicas 1 denied: %s", tp_get_str(r, "status.message"));
	cJSON_Delete(j);
	free(body);
}

/* ------------------------------------------------------------ HTTP errors */

static void expect_error(const char *method, const char *path, const char *ctype,
			 const char *body, size_t len, long status, const char *part)
{
	sp_resp r;
	int rc = sp_https(NULL, &srv, method, path, ctype, body, len, 0, &r);
	if (rc)
		fail_msg("%s %s: curl %d %s", method, path, rc, r.curl_error);
	if (r.status != status)
		fail_msg("%s %s: HTTP %ld, want %ld: %s", method, path, r.status, status, r.body);
	assert_string_equal(r.ctype, "application/json");
	cJSON *j = tt_json(r.body);
	const char *e = tp_get_str(j, "error");
	assert_non_null(e);
	assert_true(strlen(e) > 0);
	if (part)
		contains(e, part);
	assert_null(tp_get(j, "response"));
	assert_null(strstr(r.body, "\"allowed\""));
	cJSON_Delete(j);
	sp_resp_free(&r);
}

static void http_errors(void **state)
{
	(void)state;
	const char *ar = "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\"}";
	/* not an AdmissionReview at all, and one of a version nobody speaks */
	expect_error("POST", R_TJ, "application/json", "{not json", 9, 400, NULL);
	expect_error("POST", R_TJ, "application/json", "[1,2]", 5, 400, NULL);
	char *v2 = review("admission.k8s.io/v2", "u", "trainer.kubeflow.org", "v1alpha1",
			  "TrainJob", "test", tj_plain);
	expect_error("POST", R_TJ, "application/json", v2, strlen(v2), 400, NULL);
	free(v2);
	/* wrong method, unknown path, wrong content type */
	expect_error("GET", R_TJ, NULL, NULL, 0, 405, NULL);
	expect_error("PUT", R_CTR, "application/json", ar, strlen(ar), 405, NULL);
	expect_error("POST", "/healthz", "application/json", ar, strlen(ar), 405, NULL);
	expect_error("POST", "/validate-nothing", "application/json", ar, strlen(ar), 404, NULL);
	expect_error("GET", "/", NULL, NULL, 0, 404, NULL);
	expect_error("POST", R_TJ, "text/plain", ar, strlen(ar), 415, "application/json");
	expect_error("POST", R_TJ, NULL, ar, strlen(ar), 415, NULL);
	expect_error("POST", R_TJ, "application/yaml", ar, strlen(ar), 415, NULL);
	/* past --max-body (65536 for this server) */
	size_t big = 70000;
	char *huge = malloc(big + 1);
	assert_non_null(huge);
	memset(huge, ' ', big);
	memcpy(huge, ar, strlen(ar));
	huge[big] = '\0';
	expect_error("POST", R_TJ, "application/json", huge, big, 413, "--max-body");
	free(huge);
	/* the server is still fine */
	sp_resp r;
	assert_int_equal(sp_https(NULL, &srv, "GET", "/healthz", NULL, NULL, 0, 0, &r), 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
}

static void timeout_parameter(void **state)
{
	(void)state;
	char *body = review("admission.k8s.io/v1", "uid-to", "trainer.kubeflow.org", "v1alpha1",
			    "TrainJob", "test", tj_plain);
	sp_resp r;
	post(R_TJ "?timeout=1s", "application/json", body, &r);
	assert_int_equal(r.status, 200);
	cJSON *j = tt_json(r.body);
	assert_string_equal(tp_get_str(j, "response.uid"), "uid-to");
	assert_true(tp_get_true(j, "response.allowed"));
	cJSON_Delete(j);
	sp_resp_free(&r);
	post(R_TJ "?timeout=10s", "application/json", body, &r);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	expect_error("POST", R_TJ "?timeout=bogus", "application/json", body, strlen(body), 400,
		     "timeout");
	free(body);
}

static void keep_alive_reuses_the_connection(void **state)
{
	(void)state;
	CURL *h = curl_easy_init();
	assert_non_null(h);
	char *body = review("admission.k8s.io/v1", "uid-ka", "trainer.kubeflow.org", "v1alpha1",
			    "TrainJob", "test", tj_plain);
	sp_resp r1, r2;
	assert_int_equal(sp_https(h, &srv, "POST", R_TJ, "application/json", body, strlen(body),
				  0, &r1), 0);
	assert_int_equal(r1.status, 200);
	assert_int_equal(r1.connects, 1);
	assert_int_equal(sp_https(h, &srv, "POST", R_TJ, "application/json", body, strlen(body),
				  0, &r2), 0);
	assert_int_equal(r2.status, 200);
	assert_int_equal(r2.connects, 0); /* the first connection was reused */
	assert_string_equal(r1.body, r2.body);
	assert_string_equal(r2.connection, ""); /* not draining: no Connection: close */
	sp_resp_free(&r1);
	sp_resp_free(&r2);
	free(body);
	curl_easy_cleanup(h);
}

/* ------------------------------------------------------------ health, metrics */

static void health_and_ready(void **state)
{
	(void)state;
	const char *paths[] = { "/healthz", "/readyz" };
	for (int i = 0; i < 2; i++) {
		sp_resp r;
		assert_int_equal(sp_https(NULL, &srv, "GET", paths[i], NULL, NULL, 0, 0, &r), 0);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.body, "ok\n");
		sp_resp_free(&r);
	}
}

static char *scrape(void)
{
	sp_resp r;
	assert_true(srv.metrics_port != 0);
	assert_int_equal(sp_http_get(srv.metrics_port, "/metrics", &r), 0);
	assert_int_equal(r.status, 200);
	return r.body;
}

/* Poll /metrics until series reaches want (the counter is bumped when
 * libmicrohttpd reports the request complete, which can trail the answer). */
static double metric_reaches(const char *series, double want)
{
	double v = 0;
	for (int i = 0; i < 200 * sp_slow(); i++) {
		char *m = scrape();
		v = sp_metric(m, series);
		free(m);
		if (v >= want)
			return v;
		struct timespec t = { 0, 10 * 1000 * 1000 };
		nanosleep(&t, NULL);
	}
	return v;
}

#define SERIES(route, verdict, code)                                                   \
	"trainer_webhook_requests_total{route=\"" route "\",verdict=\"" verdict "\",code=\"" \
	code "\"}"

static void metrics_count_requests(void **state)
{
	(void)state;
	const char *deny = SERIES(R_CTR, "denied", "200");
	const char *allow = SERIES(R_TJ, "allowed", "200");
	const char *notfound = SERIES("other", "none", "404");
	const char *bad = SERIES(R_TJ, "none", "415");
	const char *warn = "trainer_webhook_warnings_total{route=\"" R_TJ "\"}";
	char *m = scrape();
	double d0 = sp_metric(m, deny), a0 = sp_metric(m, allow), n0 = sp_metric(m, notfound),
	       b0 = sp_metric(m, bad), w0 = sp_metric(m, warn);
	contains(m, "# TYPE trainer_webhook_requests_total counter");
	contains(m, "trainer_webhook_request_duration_seconds_bucket{route=\"" R_TJ "\"");
	free(m);

	char *body = review("admission.k8s.io/v1", "uid-m1", "trainer.kubeflow.org", "v1alpha1",
			    "ClusterTrainingRuntime", NULL, ctr_replicas2);
	sp_resp r;
	post(R_CTR, "application/json", body, &r);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	free(body);
	body = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	post(R_TJ, "application/json", body, &r);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	post(R_TJ, "text/plain", body, &r);
	assert_int_equal(r.status, 415);
	sp_resp_free(&r);
	free(body);
	assert_int_equal(sp_https(NULL, &srv, "GET", "/nowhere", NULL, NULL, 0, 0, &r), 0);
	assert_int_equal(r.status, 404);
	sp_resp_free(&r);

	assert_true(metric_reaches(deny, d0 + 1) == d0 + 1);
	assert_true(metric_reaches(allow, a0 + 1) == a0 + 1);
	assert_true(metric_reaches(warn, w0 + 1) == w0 + 1);
	assert_true(metric_reaches(bad, b0 + 1) == b0 + 1);
	assert_true(metric_reaches(notfound, n0 + 1) == n0 + 1);
	m = scrape();
	assert_true(sp_metric(m, "trainer_webhook_store_objects{kind=\"ClusterTrainingRuntime\"}") >=
		    3);
	assert_true(sp_metric(m, "trainer_webhook_certificate_expiry_timestamp_seconds") >
		    (double)time(NULL));
	free(m);
	/* the metrics port answers only /metrics */
	assert_int_equal(sp_http_get(srv.metrics_port, "/other", &r), 0);
	assert_int_equal(r.status, 404);
	sp_resp_free(&r);
}

/* The log names the metrics port, so --metrics-listen 127.0.0.1:0 is usable
 * (it used to print only the address given, ":0"). */
static void log_names_both_ports(void **state)
{
	(void)state;
	char *log = sp_log(&srv);
	char want[96];
	snprintf(want, sizeof(want), "metrics on 127.0.0.1:0 (port %u)", srv.metrics_port);
	contains(log, want);
	assert_true(srv.metrics_port != 0 && srv.metrics_port != srv.port);
	free(log);
}

/* ------------------------------------------------------------ mutating TrainJob */

static cJSON *apply_patch(const cJSON *r, const cJSON *doc)
{
	assert_string_equal(tp_get_str(r, "patchType"), "JSONPatch");
	const char *b64 = tp_get_str(r, "patch");
	assert_non_null(b64);
	char *text = sp_base64_decode(b64, NULL);
	assert_non_null(text);
	cJSON *ops = tt_json(text);
	assert_true(cJSON_IsArray(ops));
	assert_true(cJSON_GetArraySize(ops) > 0);
	cJSON *out = NULL;
	assert_int_equal(tp_jsonpatch_apply(doc, ops, &out), TP_OK);
	cJSON_Delete(ops);
	free(text);
	return out;
}

static void mutate_trainjob_sets_patch_time(void **state)
{
	(void)state;
	const char *obj = "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
			  "\"metadata\":{\"name\":\"pt\",\"namespace\":\"test\"},"
			  "\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"
			  "\"runtimePatches\":[{\"manager\":\"example.com/tool\"}]}}";
	char *body = review("admission.k8s.io/v1", "uid-mtj", "trainer.kubeflow.org", "v1alpha1",
			    "TrainJob", "test", obj);
	cJSON *j = admit(R_MTJ, body);
	const cJSON *r = resp(j);
	assert_string_equal(tp_get_str(r, "uid"), "uid-mtj");
	assert_true(tp_get_true(r, "allowed"));
	cJSON *in = tt_json(obj);
	cJSON *out = apply_patch(r, in);
	const cJSON *p0 = cJSON_GetArrayItem(tp_get_array(out, "spec.runtimePatches"), 0);
	const char *t = tp_get_str(p0, "time");
	assert_non_null(t);
	/* RFC 3339 in UTC, as metav1.Time writes it */
	assert_int_equal(strlen(t), 20);
	assert_int_equal(t[4], '-');
	assert_int_equal(t[10], 'T');
	assert_int_equal(t[19], 'Z');
	assert_string_equal(tp_get_str(p0, "manager"), "example.com/tool");
	cJSON_Delete(j);
	free(body);

	/* The defaulted object again: nothing to do, no patch. */
	char *again = cJSON_PrintUnformatted(out);
	body = review("admission.k8s.io/v1", "uid-mtj2", "trainer.kubeflow.org", "v1alpha1",
		      "TrainJob", "test", again);
	j = admit(R_MTJ, body);
	r = resp(j);
	assert_true(tp_get_true(r, "allowed"));
	assert_null(tp_get(r, "patch"));
	assert_null(tp_get(r, "patchType"));
	cJSON_Delete(j);
	free(body);
	free(again);
	cJSON_Delete(in);
	cJSON_Delete(out);
}

/* ------------------------------------------------------------ mutating JobSet */

static char *jobset(const char *owner_name, bool owned)
{
	static const char *fmt =
		"{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
		"\"metadata\":{\"name\":\"mnist\",\"namespace\":\"test\"%s},"
		"\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"replicas\":1,\"template\":{"
		"\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{"
		"\"name\":\"node\",\"image\":\"busybox\"}]}}}}}]}}";
	char owner[512] = "";
	if (owned)
		snprintf(owner, sizeof(owner),
			 ",\"ownerReferences\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
			 "\"kind\":\"TrainJob\",\"name\":\"%s\",\"uid\":\"0000-1111\","
			 "\"controller\":true,\"blockOwnerDeletion\":true}]",
			 owner_name);
	char *b = malloc(2048);
	assert_non_null(b);
	snprintf(b, 2048, fmt, owner);
	return b;
}

/* The JobSet `expand` makes of the owner TrainJob. */
static cJSON *expanded_jobset(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "%s expand --runtimes deploy/runtimes -o json %s/trainjob-mnist.yaml",
		 tt_bin(), rtdir);
	char *out = NULL, *err = NULL;
	int rc = tt_run(cmd, &out, &err);
	if (rc)
		fail_msg("expand: exit %d: %s", rc, err);
	cJSON *list = tt_json(out);
	cJSON *js = NULL, *item;
	cJSON_ArrayForEach(item, cJSON_GetObjectItem(list, "items"))
		if (!strcmp(tp_get_str(item, "kind"), "JobSet"))
			js = cJSON_Duplicate(item, 1);
	assert_non_null(js);
	cJSON_Delete(list);
	free(out);
	free(err);
	return js;
}

static void mutate_jobset_owned_is_patched_to_expansion(void **state)
{
	(void)state;
	char *obj = jobset("mnist", true);
	char *body = review("admission.k8s.io/v1", "uid-js1", "jobset.x-k8s.io", "v1alpha2",
			    "JobSet", "test", obj);
	cJSON *j = admit(R_MJS, body);
	const cJSON *r = resp(j);
	assert_string_equal(tp_get_str(r, "uid"), "uid-js1");
	if (!tp_get_true(r, "allowed"))
		fail_msg("denied: %s", tp_get_str(r, "status.message"));
	cJSON *in = tt_json(obj);
	cJSON *out = apply_patch(r, in);
	cJSON *want = expanded_jobset();
	/* Every field expand builds is there with expand's value (laying the
	 * built JobSet over the result changes nothing), in expand's job order;
	 * what only the request had (JobSet defaults, here restartPolicy) stays. */
	cJSON *again_built = NULL;
	assert_int_equal(tp_jobset_reconcile(out, want, &again_built), TP_OK);
	if (!tp_json_equal(again_built, out)) {
		char *a = cJSON_PrintUnformatted(tp_get(out, "spec"));
		char *b = cJSON_PrintUnformatted(tp_get(want, "spec"));
		fail_msg("patched spec is not expand's:\n%s\n%s", a, b);
	}
	cJSON_Delete(again_built);
	const cJSON *wj, *oj = tp_get_array(out, "spec.replicatedJobs")->child;
	cJSON_ArrayForEach(wj, tp_get_array(want, "spec.replicatedJobs"))
	{
		assert_non_null(oj);
		assert_string_equal(tp_get_str(oj, "name"), tp_get_str(wj, "name"));
		oj = oj->next;
	}
	const cJSON *node = tp_find_named(tp_get_array(out, "spec.replicatedJobs"), "name", "node");
	assert_string_equal(tp_get_str(node, "template.spec.template.spec.restartPolicy"), "Never");
	/* what the API server owns stays */
	assert_string_equal(tp_get_str(out, "metadata.name"), "mnist");
	assert_string_equal(
		tp_get_str(cJSON_GetArrayItem(tp_get_array(out, "metadata.ownerReferences"), 0),
			   "uid"),
		"0000-1111");
	cJSON_Delete(j);
	free(body);

	/* The reconciled JobSet again: already matching, no patch. */
	char *again = cJSON_PrintUnformatted(out);
	body = review("admission.k8s.io/v1", "uid-js2", "jobset.x-k8s.io", "v1alpha2", "JobSet",
		      "test", again);
	j = admit(R_MJS, body);
	r = resp(j);
	assert_true(tp_get_true(r, "allowed"));
	assert_null(tp_get(r, "patch"));
	assert_null(tp_get(r, "patchType"));
	cJSON_Delete(j);
	free(body);
	free(again);
	cJSON_Delete(in);
	cJSON_Delete(out);
	cJSON_Delete(want);
	free(obj);
}

static void mutate_jobset_not_owned_untouched(void **state)
{
	(void)state;
	char *obj = jobset(NULL, false);
	char *body = review("admission.k8s.io/v1", "uid-js3", "jobset.x-k8s.io", "v1alpha2",
			    "JobSet", "test", obj);
	cJSON *j = admit(R_MJS, body);
	const cJSON *r = resp(j);
	assert_string_equal(tp_get_str(r, "uid"), "uid-js3");
	assert_true(tp_get_true(r, "allowed"));
	assert_null(tp_get(r, "patch"));
	assert_null(tp_get(r, "patchType"));
	cJSON_Delete(j);
	free(body);
	free(obj);
}

static void mutate_jobset_missing_owner_denied(void **state)
{
	(void)state;
	char *obj = jobset("ghost-trainjob", true);
	char *body = review("admission.k8s.io/v1", "uid-js4", "jobset.x-k8s.io", "v1alpha2",
			    "JobSet", "test", obj);
	cJSON *j = admit(R_MJS, body);
	const cJSON *r = resp(j);
	assert_false(tp_get_true(r, "allowed"));
	contains(tp_get_str(r, "status.message"), "test/ghost-trainjob");
	assert_null(tp_get(r, "patch"));
	cJSON_Delete(j);
	free(body);
	free(obj);
}

/* ------------------------------------------------------------ /expand */

static void check_list(const char *text)
{
	cJSON *j = tt_json(text);
	assert_string_equal(tp_get_str(j, "apiVersion"), "v1");
	assert_string_equal(tp_get_str(j, "kind"), "List");
	int jobsets = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, tp_get_array(j, "items"))
		if (!strcmp(tp_get_str(item, "kind"), "JobSet")) {
			jobsets++;
			assert_string_equal(tp_get_str(item, "apiVersion"),
					    "jobset.x-k8s.io/v1alpha2");
			assert_string_equal(tp_get_str(item, "metadata.name"), "mnist");
			assert_true(cJSON_GetArraySize(tp_get_array(item, "spec.replicatedJobs")) > 0);
		}
	assert_int_equal(jobsets, 1);
	cJSON_Delete(j);
}

static void expand_json_and_yaml(void **state)
{
	(void)state;
	const char *json = "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
			   "\"metadata\":{\"name\":\"mnist\",\"namespace\":\"test\"},"
			   "\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"
			   "\"trainer\":{\"numNodes\":2}}}";
	sp_resp r;
	post("/expand", "application/json", json, &r);
	if (r.status != 200)
		fail_msg("/expand JSON: %ld %s", r.status, r.body);
	check_list(r.body);
	/* the same JobSet as the expand command's */
	cJSON *got = tt_json(r.body), *want = expanded_jobset();
	const cJSON *item, *js = NULL;
	cJSON_ArrayForEach(item, tp_get_array(got, "items"))
		if (!strcmp(tp_get_str(item, "kind"), "JobSet"))
			js = item;
	assert_true(tp_json_equal(tp_get(js, "spec"), tp_get(want, "spec")));
	cJSON_Delete(got);
	cJSON_Delete(want);
	sp_resp_free(&r);
	post("/expand", "application/yaml", owner_trainjob_yaml, &r);
	if (r.status != 200)
		fail_msg("/expand YAML: %ld %s", r.status, r.body);
	check_list(r.body);
	sp_resp_free(&r);
}

static void expand_invalid_is_422(void **state)
{
	(void)state;
	const char *yaml = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
			   "metadata:\n  name: bad\n  namespace: test\n"
			   "spec:\n  runtimeRef:\n    name: torch-distributed\n"
			   "  trainer:\n    numNodes: 2\n"
			   "    env:\n      - name: PET_NNODES\n        value: \"9\"\n";
	sp_resp r;
	post("/expand", "application/yaml", yaml, &r);
	if (r.status != 422)
		fail_msg("/expand invalid: %ld %s", r.status, r.body);
	contains(r.body, "spec.trainer.env");
	contains(r.body, "PET_NNODES");
	cJSON *j = tt_json(r.body);
	assert_null(tp_get(j, "items"));
	cJSON_Delete(j);
	sp_resp_free(&r);
}

/* ------------------------------------------------- one record per answer */

/* Small answers go out corked into one TLS record (webhook/server/tls_record.c):
 * on one keep-alive connection every answer arrives whole, and at once (a
 * socket left in TCP_CORK would hold each for 200 ms: 50 answers in 10 s). */
static void small_answers_whole_and_at_once(void **state)
{
	(void)state;
	CURL *h = curl_easy_init();
	assert_non_null(h);
	char *tj = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	assert_non_null(tj);
	long long t0 = tt_mono_ms();
	long connects = 0;
	for (int i = 0; i < 50; i++) {
		sp_resp r;
		int rc = sp_https(h, &srv, "POST", "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
				  "application/json", tj, strlen(tj), 0, &r);
		if (rc || r.status != 200)
			fail_msg("answer %d: curl %d HTTP %ld", i, rc, r.status);
		cJSON *j = tt_json(r.body);
		assert_true(cJSON_IsTrue(tp_get(j, "response.allowed")));
		cJSON_Delete(j);
		connects += r.connects;
		sp_resp_free(&r);
	}
	long long took = tt_mono_ms() - t0;
	print_message("50 keep-alive answers in %lld ms, %ld connection(s)\n", took, connects);
	assert_int_equal(connects, 1);
	assert_true(took < 5000 * sp_slow());
	free(tj);
	curl_easy_cleanup(h);
}

/* A big /expand answer (past TW_TLS_CORK_MAX, written as libmicrohttpd goes)
 * reaches a slow reader with a small window (the server's sends meet a full
 * pipe and wait), byte for byte what a fast reader gets. */
static void big_answer_to_a_slow_reader(void **state)
{
	(void)state;
	tp_buf y = TP_BUF_INIT(0);
	tp_buf_adds(&y, owner_trainjob_yaml);
	tp_buf_adds(&y, "    env:\n");
	for (int i = 0; i < 120; i++) /* the CRD's most */
		tp_buf_addf(&y, "    - name: VAR_%d\n      value: \"%0300d\"\n", i, i);
	sp_resp fast, slow;
	post("/expand", "application/yaml", y.data, &fast);
	if (fast.status != 200)
		fail_msg("/expand: %ld %s", fast.status, fast.body);
	long long t0 = tt_mono_ms();
	assert_int_equal(sp_https(NULL, &srv, "POST", "/expand", "application/yaml", y.data, y.len,
				  SP_SLOW_READ, &slow), 0);
	print_message("%zu-byte answer read slowly in %lld ms\n", strlen(slow.body),
		      tt_mono_ms() - t0);
	assert_int_equal(slow.status, 200);
	assert_true(strlen(fast.body) > 4 * TW_TLS_CORK_MAX);
	assert_string_equal(slow.body, fast.body);
	sp_resp_free(&fast);
	sp_resp_free(&slow);
	tp_buf_free(&y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ctr_replicas_denied_403),
		cmocka_unit_test(trainjob_deprecated_runtime_warns),
		cmocka_unit_test(trainjob_allowed_and_api_version_echo),
		cmocka_unit_test(trainjob_missing_runtime_denied),
		cmocka_unit_test(ome_route_allow_and_deny),
		cmocka_unit_test(http_errors),
		cmocka_unit_test(timeout_parameter),
		cmocka_unit_test(keep_alive_reuses_the_connection),
		cmocka_unit_test(health_and_ready),
		cmocka_unit_test(metrics_count_requests),
		cmocka_unit_test(log_names_both_ports),
		cmocka_unit_test(mutate_trainjob_sets_patch_time),
		cmocka_unit_test(mutate_jobset_owned_is_patched_to_expansion),
		cmocka_unit_test(mutate_jobset_not_owned_untouched),
		cmocka_unit_test(mutate_jobset_missing_owner_denied),
		cmocka_unit_test(expand_json_and_yaml),
		cmocka_unit_test(expand_invalid_is_422),
		cmocka_unit_test(small_answers_whole_and_at_once),
		cmocka_unit_test(big_answer_to_a_slow_reader),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

/*
 * test_server_deciders.c — a request that takes long to decide (here: a
 * lookup the API server is slow to answer, held by the fake API server)
 * holds no other connection: with one connection thread, keep-alive
 * requests on other connections of that same thread, and new connections,
 * are answered within their ?timeout= while one or two slow requests wait.
 * Before, the decision ran on the connection thread, and every connection
 * of it waited for the slow one (two slow ones stopped all traffic).
 *
 * A small request the cache can answer is decided on its connection thread,
 * so it is answered even while every decider waits on the API server; one
 * whose lookup the cache cannot answer goes to a decider, and its answer
 * is the API server's (an object the watch has not delivered yet is found),
 * never the cache-only try's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "tests/support/tls_client.h"

#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define V_CTR "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"

/* A TrainJob whose runtime the cache does not have: asked of the API server. */
#define SLOW_REVIEW                                                                         \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"slow\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"object\":{"  \
	"\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{"  \
	"\"name\":\"tj\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":"          \
	"\"not-cached\"}}},\"oldObject\":null,\"dryRun\":false}}"

/* A TrainJob of runtime NAME (a ClusterTrainingRuntime). */
#define REVIEW_OF(uid, name)                                                                \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"" uid "\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":"         \
	"\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\"," \
	"\"object\":{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","     \
	"\"metadata\":{\"name\":\"tj\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{"     \
	"\"name\":\"" name "\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":"                 \
	"\"ClusterTrainingRuntime\"},\"trainer\":{\"numNodes\":1}}},\"oldObject\":null,"          \
	"\"dryRun\":false}}"

/* A ClusterTrainingRuntime both profiles accept. */
#define RUNTIME(name)                                                                       \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","  \
	"\"metadata\":{\"name\":\"" name "\",\"resourceVersion\":\"5\"},\"spec\":{\"mlPolicy\":"  \
	"{\"torch\":{}},\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\","         \
	"\"template\":{\"metadata\":{\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":" \
	"\"trainer\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\","   \
	"\"image\":\"img\"}]}}}}}]}}}}"

static fa_server *fa;
static char tmp[64], certdir[128];
static sp_server srv;
static char *fast_body;

static int setup(void **state)
{
	(void)state;
	memset(&srv, 0, sizeof(srv));
	if (fa_start(&fa) || sp_mkdtemp(tmp, sizeof(tmp), "tw-decide"))
		return -1;
	snprintf(certdir, sizeof(certdir), "%s/certs", tmp);
	fast_body = tt_read_file("tests/bench/admissionreview-clustertrainingruntime.json", NULL);
	return !fast_body || mkdir(certdir, 0700) || sp_certs(certdir, false) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	fa_stop(fa);
	sp_rmtree(tmp);
	free(fast_body);
	return rc ? -1 : 0;
}

static bool ready(void *arg)
{
	(void)arg;
	sp_resp r;
	sp_https(NULL, &srv, "GET", "/readyz", NULL, NULL, 0, SP_FRESH, &r);
	bool ok = r.status == 200;
	sp_resp_free(&r);
	return ok;
}

/* serve with ONE connection thread against the fake API server, which has
 * the runtime "cached"; more flags (NULL-terminated), or NULL. */
static void start_with(const char *const *more)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(fa));
	fa_set_objects(fa, FA_CTR, "[" RUNTIME("cached") "]", "5");
	const char *extra[16] = { "--kube-server", url, "--threads", "1", "--service", "" };
	for (size_t i = 0; more && more[i]; i++)
		extra[6 + i] = more[i];
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	assert_true(tt_wait_until(ready, NULL, 10000 * sp_slow()));
}

static void start(void)
{
	start_with(NULL);
}

static void post(tc_conn *c, const char *path, const char *body)
{
	char *req = NULL;
	assert_true(asprintf(&req, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
				   "application/json\r\nContent-Length: %zu\r\n\r\n%s",
			     path, strlen(body), body) > 0);
	assert_int_equal(tc_write(c, req, strlen(req)), 0);
	free(req);
}

/* Nothing has come back on c yet. */
static bool unanswered(tc_conn *c, const sp_server *s)
{
	(void)s;
	tc_answer a;
	bool none = tc_read_answer(c, 0, 0, &a) != 0;
	if (!none)
		print_message("answered early: %s\n", a.status_line);
	tc_answer_free(&a);
	return none;
}

/* The slow requests are in flight: their lookups wait on the API server. */
static bool slow_waiting(void *arg)
{
	sp_resp m;
	if (sp_http_get(srv.metrics_port, "/metrics", &m))
		return false;
	bool ok = sp_metric(m.body, "trainer_webhook_requests_in_flight") >= *(double *)arg;
	sp_resp_free(&m);
	return ok;
}

/* Keep-alive requests on a connection of the same thread, each answered
 * (200, a decision) while the slow ones still wait. */
static void others_answered(tc_conn *keep, tc_conn **slow, int nslow)
{
	for (int i = 0; i < 5; i++) {
		post(keep, V_CTR "?timeout=1s", fast_body);
		tc_answer a;
		assert_int_equal(tc_read_answer(keep, 1000 * sp_slow(), 0, &a), 0);
		assert_int_equal(a.status, 200);
		assert_false(a.closed);
		tc_answer_free(&a);
		for (int k = 0; k < nslow; k++)
			assert_true(unanswered(slow[k], &srv));
	}
	sp_resp r; /* and a new connection */
	assert_int_equal(sp_https(NULL, &srv, "GET", "/healthz", NULL, NULL, 0, SP_FRESH, &r), 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	for (int k = 0; k < nslow; k++)
		assert_true(unanswered(slow[k], &srv));
}

/* The slow ones end at their ?timeout= with an error answer, never a verdict. */
static void slow_ones_end(tc_conn **slow, int nslow)
{
	for (int k = 0; k < nslow; k++) {
		tc_answer a;
		assert_int_equal(tc_read_answer(slow[k], 10000 * sp_slow(), 0, &a), 0);
		print_message("slow request: %s\n", a.status_line);
		assert_true(a.status == 200 || a.status == 504);
		if (a.status == 200) {
			cJSON *j = tt_json(a.body);
			assert_false(tp_get_true(j, "response.allowed"));
			cJSON_Delete(j);
		}
		tc_answer_free(&a);
	}
}

static void slow_requests_hold_no_other_connection(int nslow)
{
	start();
	tc_conn *keep = tc_connect(&srv), *slow[2];
	assert_non_null(keep);
	post(keep, V_CTR, fast_body); /* the kept connection is in use before */
	tc_answer a;
	assert_int_equal(tc_read_answer(keep, 5000 * sp_slow(), 0, &a), 0);
	assert_int_equal(a.status, 200);
	tc_answer_free(&a);
	fa_set_delay(fa, 4000 * (unsigned)sp_slow()); /* the API server is slow from now */
	for (int k = 0; k < nslow; k++) {
		assert_non_null(slow[k] = tc_connect(&srv));
		post(slow[k], V_TJ "?timeout=3s", SLOW_REVIEW);
	}
	double want = nslow;
	assert_true(tt_wait_until(slow_waiting, &want, 3000));
	others_answered(keep, slow, nslow);
	slow_ones_end(slow, nslow);
	fa_set_delay(fa, 0);
	for (int k = 0; k < nslow; k++)
		tc_close(slow[k]);
	tc_close(keep);
}

/* One answer on c to body at path: its status and whether it allowed. */
static int ask(tc_conn *c, const char *path, const char *body, int timeout_ms, bool *allowed)
{
	post(c, path, body);
	tc_answer a;
	assert_int_equal(tc_read_answer(c, timeout_ms, 0, &a), 0);
	int status = a.status;
	if (status == 200 && allowed) {
		cJSON *j = tt_json(a.body);
		*allowed = tp_get_true(j, "response.allowed");
		if (!*allowed)
			print_message("not allowed: %s\n", a.body);
		cJSON_Delete(j);
	}
	tc_answer_free(&a);
	return status;
}

/* The only decider waits on the API server (a runtime the cache misses):
 * a TrainJob whose runtime is cached, and a ClusterTrainingRuntime, are
 * decided on the connection thread meanwhile, within ?timeout=1s. Before,
 * both waited in the deciders' queue behind the slow one: 504. (The
 * kubeflow profile: the strict one reads a TrainJob's Namespace by GET,
 * never from a cache, so its TrainJobs all go to a decider.) */
static void cache_answers_while_every_decider_waits(void **state)
{
	(void)state;
	const char *more[] = { "--decision-threads", "1", "--profile", "kubeflow", NULL };
	start_with(more);
	tc_conn *keep = tc_connect(&srv), *slow = tc_connect(&srv);
	assert_non_null(keep);
	assert_non_null(slow);
	fa_set_delay(fa, 4000 * (unsigned)sp_slow());
	post(slow, V_TJ "?timeout=3s", SLOW_REVIEW);
	double want = 1;
	assert_true(tt_wait_until(slow_waiting, &want, 3000));
	for (int i = 0; i < 3; i++) {
		bool allowed = false;
		assert_int_equal(ask(keep, V_TJ "?timeout=1s", REVIEW_OF("hit", "cached"),
				     1000 * sp_slow(), &allowed), 200);
		assert_true(allowed);
		assert_int_equal(ask(keep, V_CTR "?timeout=1s", fast_body, 1000 * sp_slow(), NULL),
				 200);
		assert_true(unanswered(slow, &srv));
	}
	slow_ones_end(&slow, 1);
	fa_set_delay(fa, 0);
	tc_close(slow);
	tc_close(keep);
}

/* A runtime the watch has not delivered yet (GET sees it, lists do not):
 * the cache-only try misses, and its answer ("not found", or undecided) is
 * never sent; a decider asks the API server, and the TrainJob is allowed.
 * Once per request: a second one asks again (a miss is never cached). */
static void lookup_miss_is_decided_by_the_api_server(void **state)
{
	(void)state;
	start();
	fa_put_hidden(fa, FA_CTR, RUNTIME("late"));
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	for (unsigned i = 1; i <= 2; i++) {
		bool allowed = false;
		assert_int_equal(ask(c, V_TJ, REVIEW_OF("miss", "late"), 5000 * sp_slow(), &allowed),
				 200);
		assert_true(allowed);
		fa_stats st;
		fa_get_stats(fa, FA_CTR, &st);
		assert_int_equal(st.gets, i);
		assert_string_equal(st.last_path,
				    "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/late");
	}
	tc_close(c);
}

/* A body under the connection thread's bound whose decision needs more
 * than its first arena (2,900 labels: some 32 KB of JSON that parses into
 * more than 9 times that) is decided all the same, 200 and allowed, after
 * the budget gives it more. */
static void small_body_that_outgrows_its_arena(void **state)
{
	(void)state;
	const char *more[] = { "--profile", "kubeflow", NULL };
	start_with(more);
	tp_buf labels = TP_BUF_INIT(0);
	for (int i = 0; i < 2900; i++)
		assert_int_equal(tp_buf_addf(&labels, "%s\"k%d\":\"\"", i ? "," : "", i), 0);
	char *body = NULL;
	assert_true(asprintf(&body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
				    "\"AdmissionReview\",\"request\":{\"uid\":\"big\",\"kind\":{"
				    "\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\","
				    "\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":"
				    "\"team-a\",\"object\":{\"apiVersion\":\"trainer.kubeflow.org/"
				    "v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"tj\","
				    "\"namespace\":\"team-a\",\"labels\":{%s}},\"spec\":{\"runtimeRef\":"
				    "{\"name\":\"cached\"}}},\"oldObject\":null,\"dryRun\":false}}",
			     labels.data) > 0);
	assert_true(strlen(body) < 32 * 1024);
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	bool allowed = false;
	assert_int_equal(ask(c, V_TJ, body, 5000 * sp_slow(), &allowed), 200);
	assert_true(allowed);
	tc_close(c);
	free(body);
	tp_buf_free(&labels);
}

static void one_slow_request(void **state)
{
	(void)state;
	slow_requests_hold_no_other_connection(1);
}

static void two_slow_requests(void **state)
{
	(void)state;
	slow_requests_hold_no_other_connection(2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(one_slow_request, setup, teardown),
		cmocka_unit_test_setup_teardown(two_slow_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(cache_answers_while_every_decider_waits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(lookup_miss_is_decided_by_the_api_server, setup,
						teardown),
		cmocka_unit_test_setup_teardown(small_body_that_outgrows_its_arena, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

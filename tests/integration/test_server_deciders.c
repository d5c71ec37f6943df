/*
 * test_server_deciders.c — a request that takes long to decide (here: a
 * lookup the API server is slow to answer, held by the fake API server)
 * holds no other connection: with one connection thread, keep-alive
 * requests on other connections of that same thread, and new connections,
 * are answered within their ?timeout= while one or two slow requests wait.
 * Before, the decision ran on the connection thread, and every connection
 * of it waited for the slow one (two slow ones stopped all traffic).
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

/* serve with ONE connection thread against the fake API server. */
static void start(void)
{
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(fa));
	const char *extra[] = { "--kube-server", url, "--threads", "1", "--service", "", NULL };
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	assert_true(tt_wait_until(ready, NULL, 10000 * sp_slow()));
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

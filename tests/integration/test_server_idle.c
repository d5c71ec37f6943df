/*
 * test_server_idle.c — peers that hold connections and say nothing: a flood
 * of them is bounded and counted, another peer is still answered, and every
 * request gets an answer, however big its body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

static char tmp[256], certdir[300], rtdir[300];
static sp_server srv;

static int setup(void **state)
{
	(void)state;
	if (sp_mkdtemp(tmp, sizeof(tmp), "tw-idle"))
		return -1;
	snprintf(certdir, sizeof(certdir), "%s/certs", tmp);
	snprintf(rtdir, sizeof(rtdir), "%s/runtimes", tmp);
	return mkdir(certdir, 0700) || mkdir(rtdir, 0700) || sp_certs(certdir, false) ||
			       sp_copy_runtimes(rtdir)
		       ? -1
		       : 0;
}

static int teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	sp_rmtree(tmp);
	return rc ? -1 : 0;
}

static int peer(unsigned short port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static bool answers(void)
{
	sp_resp r;
	bool ok = !sp_https(NULL, &srv, "GET", "/healthz", NULL, NULL, 0, SP_FRESH, &r) &&
		  r.status == 200;
	if (ok)
		sp_resp_free(&r);
	return ok;
}

static bool answers_now(void *arg)
{
	(void)arg;
	return answers();
}

static bool refusals_counted(void *arg)
{
	sp_resp m;
	bool ok = !sp_http_get(srv.metrics_port, "/metrics", &m) &&
		  sp_metric(m.body, "trainer_webhook_connections_refused_total") >= *(double *)arg;
	sp_resp_free(&m);
	return ok;
}

/* A flood from one address takes at most its share (half of one worker's):
 * the server keeps its descriptors, another peer (the API server) is still
 * answered, and every refusal is counted. */
static void flood_is_bounded(void **state)
{
	(void)state;
	/* 40 in all, 20 per worker thread: 10 from one peer at most (the default) */
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--max-connections", "40",
				NULL };
	sp_stop_checked(&srv);
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	int fds[60];
	for (int i = 0; i < 60; i++)
		fds[i] = peer(srv.port);
	double want = 50;
	assert_true(tt_wait_until(refusals_counted, &want, 5000));
	sp_server other = srv; /* from 127.0.0.2: the API server's share is left */
	snprintf(other.source, sizeof(other.source), "127.0.0.2");
	sp_resp r;
	assert_int_equal(sp_https(NULL, &other, "GET", "/healthz", NULL, NULL, 0, SP_FRESH, &r), 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	sp_resp m;
	assert_int_equal(sp_http_get(srv.metrics_port, "/metrics", &m), 0);
	assert_true(sp_metric(m.body, "trainer_webhook_connections_max") == 40);
	sp_resp_free(&m);
	for (int i = 0; i < 60; i++)
		close(fds[i]);
	/* the flood gone, everyone again — once the server has seen the closes
	 * (until then its count for this address still holds the slots) */
	assert_true(tt_wait_until(answers_now, NULL, 5000));
}

/* Bodies of about 3 MB of tiny values (each a parsed node): every one gets
 * an answer — 413 with a JSON error past the per-request memory bound, else
 * the verdict — never a silent close. */
static void every_request_is_answered(void **state)
{
	(void)state;
	static const char *const shapes[] = { "0", "{}", "[]", "\"\"", "null", "true" };
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", NULL };
	sp_stop_checked(&srv);
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	for (size_t k = 0; k < sizeof(shapes) / sizeof(*shapes); k++) {
		tp_buf b = TP_BUF_INIT(0);
		tp_buf_adds(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
				"\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
				"\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\","
				"\"object\":{\"a\":[");
		size_t n = 2900000 / (strlen(shapes[k]) + 1);
		for (size_t i = 0; i < n; i++)
			tp_buf_addf(&b, "%s%s", i ? "," : "", shapes[k]);
		tp_buf_adds(&b, "]}}}");
		sp_resp r;
		int rc = sp_https(NULL, &srv, "POST", "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
				  "application/json", b.data, b.len, SP_FRESH, &r);
		tp_buf_free(&b);
		assert_int_equal(rc, 0);
		print_message("%s: HTTP %ld\n", shapes[k], r.status);
		assert_true(r.status == 413 || r.status == 400 || r.status == 200);
		cJSON *j = tt_json(r.body);
		assert_non_null(r.status == 200 ? tp_get(j, "response.allowed") : tp_get(j, "error"));
		cJSON_Delete(j);
		sp_resp_free(&r);
	}
	assert_true(answers());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flood_is_bounded),
		cmocka_unit_test(every_request_is_answered),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_server_ops.c — the real `serve` as an operator sees it: a denied
 * request's log line names the reason (the first finding), the user and
 * dry_run; /metrics counts it by route and reason and has the process_*
 * metrics an alert on memory against the limit reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

#define REVIEW                                                                                \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"u-ops\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"name\":"      \
	"\"mnist\",\"userInfo\":{\"username\":\"alice@example.com\"},\"object\":{\"apiVersion\":" \
	"\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{\"name\":"         \
	"\"mnist\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"nowhere\"}}},"   \
	"\"oldObject\":null,\"dryRun\":true}}"

static void denial_logged_and_counted(void **state)
{
	(void)state;
	char dir[128];
	assert_int_equal(sp_mkdtemp(dir, sizeof(dir), "tw-ops"), 0);
	assert_int_equal(sp_certs(dir, false), 0);
	const char *extra[] = { "--profile", "kubeflow", "--threads", "2", NULL };
	sp_server s;
	assert_int_equal(sp_start(&s, dir, dir, extra), 0);
	sp_resp r;
	const char *body = REVIEW;
	assert_int_equal(sp_https(NULL, &s, "POST", V_TJ, "application/json", body, strlen(body), 0,
				  &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "\"allowed\":false"));
	sp_resp_free(&r);
	/* the log line: who, dry run, and why */
	assert_true(sp_log_wait(&s, "\"uid\":\"u-ops\"", 5000 * sp_slow()));
	char *log = sp_log(&s), *line = strstr(log, "\"uid\":\"u-ops\"");
	char *end = strchr(line, '\n');
	if (end)
		*end = '\0';
	print_message("%s\n", line);
	assert_non_null(strstr(line, "\"verdict\":\"denied\""));
	assert_non_null(strstr(line, "\"user\":\"alice@example.com\""));
	assert_non_null(strstr(line, "\"dry_run\":true"));
	assert_non_null(strstr(line, "\"reason\":\"spec.RuntimeRef: Invalid value: "));
	free(log);
	/* the metrics: the denial by reason, the process */
	assert_int_equal(sp_http_get(s.metrics_port, "/metrics", &r), 0);
	assert_true(sp_metric(r.body, "trainer_webhook_denials_total{route=\"" V_TJ "\","
				      "reason=\"invalid\"}") == 1);
	assert_true(sp_metric(r.body, "process_resident_memory_bytes") > 1 << 20);
	assert_true(sp_metric(r.body, "process_open_fds") > 3);
	assert_true(sp_metric(r.body, "process_start_time_seconds") > 1.6e9);
	sp_resp_free(&r);
	assert_int_equal(sp_stop_checked(&s), 0);
	sp_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(denial_logged_and_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

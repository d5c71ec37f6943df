/*
 * test_metrics_ops.c — what an operator alerts on: the process_* metrics
 * every Prometheus client exports (webhook/metrics/process.c), read from
 * /proc; the denials by route and reason (webhook/metrics/denials.c) with
 * their label kept to a fixed few; and the reason, user and dryRun an
 * admission answer carries for the request log (webhook/admission/outcome.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/testutil.h"
#include "webhook/admission/admission.h"
#include "webhook/metrics/metrics.h"

/* The value of the sample whose line starts with series (-1: absent). */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return atof(p + n + 1);
	return -1;
}

static char *render_process(void)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render_process(&b), 0);
	assert_non_null(b.data);
	return b.data;
}

static void process_metrics_as_every_client(void **state)
{
	(void)state;
	char *text = render_process();
	static const char *const fams[] = {
		"process_cpu_seconds_total counter", "process_max_fds gauge", "process_open_fds gauge",
		"process_resident_memory_bytes gauge", "process_start_time_seconds gauge",
		"process_virtual_memory_bytes gauge",
	};
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		char typed[96];
		snprintf(typed, sizeof(typed), "# TYPE %s\n", fams[i]);
		if (!strstr(text, typed))
			fail_msg("no \"%s\" in:\n%s", typed, text);
	}
	double rss = sample(text, "process_resident_memory_bytes");
	double vsz = sample(text, "process_virtual_memory_bytes");
	assert_true(rss > 1 << 20 && rss < 4.0 * (1 << 30));
	assert_true(vsz >= rss);
	assert_true(sample(text, "process_cpu_seconds_total") >= 0);
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_true(sample(text, "process_max_fds") == (double)rl.rlim_cur);
	/* started a moment ago: between the boot and now */
	double start = sample(text, "process_start_time_seconds");
	double now = (double)time(NULL);
	assert_true(start <= now + 1 && start > now - 3600);
	/* a descriptor opened is one more open */
	double fds = sample(text, "process_open_fds");
	int fd = open("/dev/null", O_RDONLY);
	assert_true(fd >= 0);
	char *after = render_process();
	assert_true(sample(after, "process_open_fds") == fds + 1);
	close(fd);
	free(after);
	free(text);
	/* and they are in /metrics */
	tp_buf all = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&all), 0);
	assert_non_null(strstr(all.data, "\nprocess_resident_memory_bytes "));
	tp_buf_free(&all);
}

static void denials_by_route_and_reason(void **state)
{
	(void)state;
	tw_metrics_reset();
	const tw_route *tj = tw_route_find("/validate-trainer-kubeflow-org-v1alpha1-trainjob");
	const tw_route *ctr = tw_route_find("/validate-trainer-kubeflow-org-v1alpha1-"
					    "clustertrainingruntime");
	tw_metrics_denial(tj, "not_found");
	tw_metrics_denial(tj, "not_found");
	tw_metrics_denial(ctr, "invalid");
	tw_metrics_denial(ctr, "spec.x: Invalid value: \"free text\""); /* never a label */
	tw_metrics_denial(NULL, "invalid");                            /* no route: not counted */
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&b), 0);
	assert_non_null(strstr(b.data, "# TYPE trainer_webhook_denials_total counter\n"));
	assert_true(sample(b.data, "trainer_webhook_denials_total{route=\"/validate-trainer-kubeflow-"
				   "org-v1alpha1-trainjob\",reason=\"not_found\"}") == 2);
	assert_true(sample(b.data, "trainer_webhook_denials_total{route=\"/validate-trainer-kubeflow-"
				   "org-v1alpha1-clustertrainingruntime\",reason=\"invalid\"}") == 1);
	assert_true(sample(b.data, "trainer_webhook_denials_total{route=\"/validate-trainer-kubeflow-"
				   "org-v1alpha1-clustertrainingruntime\",reason=\"other\"}") == 1);
	assert_null(strstr(b.data, "free text"));
	tp_buf_free(&b);
	tw_metrics_reset();
	assert_int_equal(tw_metrics_render(&b), 0);
	assert_null(strstr(b.data, "trainer_webhook_denials_total{"));
	tp_buf_free(&b);
}

#define REVIEW(obj, dry)                                                                      \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"name\":"      \
	"\"j\",\"userInfo\":{\"username\":\"alice@example.com\",\"groups\":[\"dev\"]},"           \
	"\"object\":" obj ",\"oldObject\":null,\"dryRun\":" dry "}}"
#define TRAINJOB(runtime)                                                                       \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{" \
	"\"name\":\"j\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"" runtime  \
	"\"}}}"

/* One answer, decided in process; the outcome. */
static tw_outcome decide(const char *route, const char *body, tp_arena *a)
{
	tw_config cfg = { .opt = { .profile = TP_PROFILE_KUBEFLOW } };
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_admission_handle(&cfg, tw_route_find(route), body, strlen(body), a,
					     &out, &oc), TP_OK);
	tp_buf_free(&out);
	return oc;
}

static void outcome_says_why_and_who(void **state)
{
	(void)state;
	tp_arena *a = NULL;
	assert_int_equal(tp_arena_new(&a, 0), 0);
	/* a runtime that does not exist (upstream words it as an Invalid value of
	 * spec.RuntimeRef): denied, its first finding, dry run */
	tw_outcome oc = decide("/validate-trainer-kubeflow-org-v1alpha1-trainjob",
			       REVIEW(TRAINJOB("nowhere"), "true"), a);
	assert_false(oc.allowed);
	assert_string_equal(oc.user, "alice@example.com");
	assert_true(oc.dry_run);
	assert_string_equal(oc.reason_class, "invalid");
	assert_non_null(strstr(oc.reason, "spec.RuntimeRef: Invalid value: "));
	assert_non_null(strstr(oc.reason, "\"nowhere\" not found"));
	tp_arena_reset(a);
	/* a TrainJob sent to the runtimes' route: a review that cannot be decided as sent */
	oc = decide("/validate-trainer-kubeflow-org-v1alpha1-trainingruntime",
		    REVIEW(TRAINJOB("nowhere"), "false"), a);
	assert_false(oc.allowed);
	assert_false(oc.dry_run);
	assert_string_equal(oc.reason_class, "request");
	assert_non_null(strstr(oc.reason, "does not belong on"));
	tp_arena_reset(a);
	/* allowed: no reason */
	oc = decide("/mutate-trainer-kubeflow-org-v1alpha1-trainjob",
		    REVIEW(TRAINJOB("nowhere"), "false"), a);
	assert_true(oc.allowed);
	assert_null(oc.reason);
	assert_null(oc.reason_class);
	tp_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(process_metrics_as_every_client),
		cmocka_unit_test(denials_by_route_and_reason),
		cmocka_unit_test(outcome_says_why_and_who),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_builtin_crds_used.c — the CRDs built into the binary are what
 * `review` and `serve` check with when no --crds is given: a TrainJob with a
 * misspelt field (numProcPerNod) is denied with the API server's unknown-field
 * error, and --crds none turns them off (the built-in checks allow it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/trainpolicy.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define R_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

static char tmp[64], certdir[128];

static const char typo_review[] =
	"{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{"
	"\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\","
	"\"kind\":\"TrainJob\"},\"resource\":{\"group\":\"trainer.kubeflow.org\",\"version\":"
	"\"v1alpha1\",\"resource\":\"trainjobs\"},\"name\":\"typo\",\"namespace\":\"team-a\","
	"\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"alice\"},\"object\":{\"apiVersion\":"
	"\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"typo\","
	"\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"
	"\"trainer\":{\"numProcPerNod\":4}}},\"oldObject\":null,\"dryRun\":false}}";

#define UNKNOWN "unknown field \\\"spec.trainer.numProcPerNod\\\""

static void contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("\"%s\" not found in:\n%s", needle, hay ? hay : "(null)");
}

static int setup(void **state)
{
	(void)state;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || sp_mkdtemp(tmp, sizeof(tmp), "tw-bcrd"))
		return -1;
	snprintf(certdir, sizeof(certdir), "%s/certs", tmp);
	return mkdir(certdir, 0700) || sp_certs(certdir, false) ||
	       sp_write(tmp, "typo.json", typo_review) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	sp_rmtree(tmp);
	curl_global_cleanup();
	return 0;
}

static void review_uses_builtin_crds(void **state)
{
	(void)state;
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s review --runtimes deploy/runtimes %s/typo.json", tt_bin(), tmp);
	assert_int_equal(tt_run(cmd, &out, NULL), 1);
	contains(out, UNKNOWN);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s review --crds none --runtimes deploy/runtimes %s/typo.json",
		 tt_bin(), tmp);
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	assert_null(strstr(out, "numProcPerNod"));
	free(out);
}

/* The answer of a server started with extra (NULL-terminated) to the typo. */
static char *serve_answer(const char *const *extra)
{
	sp_server srv = { 0 };
	const char *args[8] = { "--runtimes", "deploy/runtimes", "--threads", "1" };
	for (size_t i = 0; extra[i]; i++)
		args[4 + i] = extra[i];
	if (sp_start(&srv, certdir, tmp, args)) {
		char *log = sp_log(&srv);
		fail_msg("server did not start (status %d):\n%s", srv.status, log);
	}
	sp_resp r = { 0 };
	int rc = sp_https(NULL, &srv, "POST", R_TJ, "application/json", typo_review,
			  strlen(typo_review), 0, &r);
	assert_int_equal(sp_stop_checked(&srv), 0);
	if (rc || r.status != 200)
		fail_msg("POST: curl %d, HTTP %ld %s", rc, r.status, r.curl_error);
	char *body = r.body;
	r.body = NULL;
	sp_resp_free(&r);
	return body;
}

static void serve_uses_builtin_crds(void **state)
{
	(void)state;
	char *body = serve_answer((const char *const[]){ NULL });
	contains(body, "\"allowed\":false");
	contains(body, UNKNOWN);
	free(body);
	body = serve_answer((const char *const[]){ "--crds", "none", NULL });
	contains(body, "\"allowed\":true");
	free(body);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(review_uses_builtin_crds),
		cmocka_unit_test(serve_uses_builtin_crds),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

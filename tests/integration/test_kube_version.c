/*
 * test_kube_version.c — the Kubernetes release the checks of the Jobs and
 * Pods follow: in a cluster, the one GET /version of the API server names
 * (the fake API server of tests/support/fakeapi.c), read by
 * webhook/cluster/version.c and used by `serve` for every decision; one
 * that cannot be read is a warning in the log and no field refused for its
 * release; offline, `--kubernetes-version 1.N` (1.32 by default), and an
 * unsupported release is a usage error naming the supported range. When
 * the runtimes' watch lists anew (the API server came back from a restart,
 * perhaps an upgrade), `serve` reads /version again
 * (tw_kube_version_reread) and decides by the new release; one that cannot
 * be read then keeps the release it had.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/apiclient.h"
#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/admission/admission.h"
#include "webhook/cluster/version.h"
#include "webhook/core/log.h"

typedef tt_apiclient fx;

/* A runtime whose trainer container sets appArmorProfile, a 1.30 field. */
#define APPARMOR_RUNTIME                                                                      \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\"," \
	"\"metadata\":{\"name\":\"armored\",\"labels\":{\"trainer.kubeflow.org/framework\":"     \
	"\"torch\"}},\"spec\":{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{"        \
	"\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"metadata\":{"          \
	"\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{"   \
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"img\","          \
	"\"securityContext\":{\"appArmorProfile\":{\"type\":\"RuntimeDefault\"}}}]}}}}}]}}}}"

#define REVIEW                                                                                \
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"     \
	"\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\"," \
	"\"kind\":\"ClusterTrainingRuntime\"},\"operation\":\"CREATE\",\"object\":"              \
	APPARMOR_RUNTIME ",\"oldObject\":null,\"dryRun\":false}}"

#define V_CTR "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"
#define NOT_KNOWN_129                                                                         \
	"unknown field \\\"spec.template.spec.containers[0].securityContext.appArmorProfile\\\": " \
	"not known to Kubernetes 1.29 (added in 1.30)"
#define NOT_KNOWN_129_TEXT                                                                    \
	"unknown field \"spec.template.spec.containers[0].securityContext.appArmorProfile\": "   \
	"not known to Kubernetes 1.29 (added in 1.30)"

/* Long enough for the watch's backoff after a short outage (200 ms, then
 * doubled) on a busy machine; a pass takes well under a second. */
#define WAIT_MS 30000

#define VERSION(minor, git)                                                                   \
	"{\"major\":\"1\",\"minor\":\"" minor "\",\"gitVersion\":\"" git "\",\"platform\":"      \
	"\"linux/amd64\"}"

static int setup(void **state)
{
	return tt_apiclient_setup(state);
}

static int teardown(void **state)
{
	return tt_apiclient_teardown(state);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("want %s\n in: %s", needle, hay ? hay : "(null)");
}

/* The minor the server takes from the fake's /version, and its log. */
static int read_minor(fx *x, char **log)
{
	char path[] = "/tmp/tw-kver-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	tw_log_set_fd(fd);
	int minor = tw_kube_version_minor(x->api, 2000);
	tw_log_set_fd(2);
	close(fd);
	*log = tt_read_file(path, NULL);
	unlink(path);
	return minor;
}

/* The server's answer to the runtime's CREATE at 1.<minor>. */
static cJSON *answer(fx *x, int minor)
{
	tw_config cfg = { .opt = { .profile = TP_PROFILE_STRICT, .kubernetes_minor = minor },
			  .store = x->store };
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_admission_handle(&cfg, tw_route_find(V_CTR), REVIEW, strlen(REVIEW),
					     x->arena, &out, &oc), TP_OK);
	assert_int_equal(oc.http_status, 200);
	cJSON *a = tt_json(out.data);
	tp_buf_free(&out);
	tp_arena_reset(x->arena);
	return a;
}

/* /version says 1.29: the 1.30 field is refused; says 1.30: allowed. */
static void decides_as_the_clusters_version(void **state)
{
	fx *x = *state;
	char *log = NULL;
	fa_set_version(x->fa, VERSION("29", "v1.29.4"));
	int minor = read_minor(x, &log);
	assert_int_equal(minor, 29);
	assert_contains(log, "the Jobs and Pods are checked as the cluster's Kubernetes checks them");
	assert_contains(log, "\"kubernetes\":\"v1.29.4\"");
	assert_contains(log, "\"checks\":\"1.29\"");
	free(log);
	cJSON *a = answer(x, minor);
	assert_false(tp_get_true(a, "response.allowed"));
	assert_contains(tp_get_str(a, "response.status.message"), NOT_KNOWN_129_TEXT);
	cJSON_Delete(a);
	/* a provider's build: "30+" */
	fa_set_version(x->fa, VERSION("30+", "v1.30.2-eks-1a2b3c"));
	minor = read_minor(x, &log);
	assert_int_equal(minor, 30);
	free(log);
	a = answer(x, minor);
	assert_true(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
	assert_int_equal(fa_version_gets(x->fa), 2);
}

/* /version cannot be read: a warning, and no field refused for a release
 * the cluster may not run (the answer the newest release gives, here). */
static void unreadable_version_is_a_warning(void **state)
{
	fx *x = *state;
	char *log = NULL;
	int minor = read_minor(x, &log); /* no /version: 404 */
	assert_int_equal(minor, TP_KUBE_MINOR_UNKNOWN);
	assert_contains(log, "\"level\":\"warn\"");
	assert_contains(log, "cannot read the cluster's Kubernetes version");
	assert_contains(log, "GET /version: HTTP 404");
	assert_contains(log, "\"checks\":\"1.32\"");
	free(log);
	cJSON *a = answer(x, minor);
	assert_true(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
	fa_set_version(x->fa, "{\"major\":\"\",\"minor\":\"\"}");
	assert_int_equal(read_minor(x, &log), TP_KUBE_MINOR_UNKNOWN);
	assert_contains(log, "no Kubernetes 1.N in major");
	free(log);
	fa_set_down(x->fa, true);
	assert_int_equal(read_minor(x, &log), TP_KUBE_MINOR_UNKNOWN);
	assert_contains(log, "cannot read the cluster's Kubernetes version");
	free(log);
	fa_set_down(x->fa, false);
}

/* A release newer than the supported ones keeps its number: its fields
 * are allowed; a warning says so. */
static void newer_release_is_kept(void **state)
{
	fx *x = *state;
	char *log = NULL;
	fa_set_version(x->fa, VERSION("34", "v1.34.1"));
	assert_int_equal(read_minor(x, &log), 34);
	assert_contains(log, "\"level\":\"warn\"");
	assert_contains(log, "newer than the releases the checks know");
	assert_contains(log, "\"supported\":\"1.29 to 1.32\"");
	free(log);
}

/* ------------------------------------------------------------ serve */

/* `serve --kube-server URL`: /version read once at start, every decision
 * as that release. */
static void serve_reads_the_version(void **state)
{
	fx *x = *state;
	fa_set_version(x->fa, VERSION("29", "v1.29.4"));
	char dir[128], logdir[200], url[64];
	assert_int_equal(sp_mkdtemp(dir, sizeof(dir), "tw-kver"), 0);
	assert_int_equal(sp_certs(dir, false), 0);
	snprintf(logdir, sizeof(logdir), "%s/log", dir);
	assert_int_equal(mkdir(logdir, 0700), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(x->fa));
	const char *extra[] = { "--kube-server", url, "--crds", "none", "--threads", "1", NULL };
	sp_server s = { 0 };
	assert_int_equal(sp_start(&s, dir, logdir, extra), 0);
	sp_resp r = { 0 };
	assert_int_equal(sp_https(NULL, &s, "POST", V_CTR, "application/json", REVIEW,
				  strlen(REVIEW), 0, &r), 0);
	assert_int_equal(r.status, 200);
	cJSON *a = tt_json(r.body);
	assert_false(tp_get_true(a, "response.allowed"));
	assert_contains(tp_get_str(a, "response.status.message"), NOT_KNOWN_129_TEXT);
	cJSON_Delete(a);
	sp_resp_free(&r);
	assert_int_equal(fa_version_gets(x->fa), 1);
	char *log = sp_log(&s);
	assert_contains(log, "\"checks\":\"1.29\"");
	free(log);
	assert_int_equal(sp_stop_checked(&s), 0);
	sp_rmtree(dir);
}

/* ------------------------------------------------------------ offline */

static char *runtime_file(char *dir, size_t n)
{
	assert_int_equal(sp_mkdtemp(dir, n, "tw-kver-cli"), 0);
	assert_int_equal(sp_write(dir, "rt.json", APPARMOR_RUNTIME), 0);
	char *path = NULL;
	assert_true(asprintf(&path, "%s/rt.json", dir) > 0);
	return path;
}

/* validate --kubernetes-version 1.29 refuses the 1.30 field; 1.30 and the
 * default (1.32) allow it. */
static void offline_flag_and_default(void **state)
{
	(void)state;
	char dir[128];
	char *path = runtime_file(dir, sizeof(dir));
	char line[2048], *out = NULL;
	snprintf(line, sizeof(line), "%s validate --kubernetes-version 1.29 %s", tt_bin(), path);
	assert_int_equal(tt_run(line, &out, NULL), 1);
	assert_contains(out, NOT_KNOWN_129_TEXT);
	free(out);
	static const char *const allowed[] = { "--kubernetes-version 1.30", "--kubernetes-version "
					       "v1.32", "" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(line, sizeof(line), "%s validate %s %s", tt_bin(), allowed[i], path);
		int rc = tt_run(line, &out, NULL);
		if (rc != 0)
			fail_msg("%s: exit %d\n%s", line, rc, out);
		free(out);
	}
	/* review takes it too */
	assert_int_equal(sp_write(dir, "review.json", REVIEW), 0);
	snprintf(line, sizeof(line), "%s review --kubernetes-version 1.29 %s/review.json", tt_bin(),
		 dir);
	char *err = NULL;
	int rc = tt_run(line, &out, &err);
	if (rc != 1)
		fail_msg("%s: exit %d\n%s%s", line, rc, out, err);
	free(err);
	assert_contains(out, NOT_KNOWN_129);
	free(out);
	free(path);
	sp_rmtree(dir);
}

/* validate --kubeconfig: the cluster's /version decides as serve's does;
 * --kubernetes-version wins over it; an unreadable /version is said once
 * and refuses no field for its release. */
static void offline_kubeconfig_reads_the_version(void **state)
{
	TT_REQUIRE_SHARED(); /* the cluster's CRDs are ../shared's */
	fx *x = *state;
	char dir[128];
	char *path = runtime_file(dir, sizeof(dir));
	tt_apiclient_kubeconfig(x, dir);
	char *crd = tt_crd_json("trainer.kubeflow.org_clustertrainingruntimes.yaml");
	fa_put_object(x->fa, FA_CRD, crd);
	free(crd);
	char line[2048], *out = NULL, *err = NULL;
	/* no /version yet: 404 */
	snprintf(line, sizeof(line), "%s validate --kubeconfig %s/kubeconfig %s", tt_bin(), dir, path);
	int rc = tt_run(line, &out, &err);
	if (rc != 0)
		fail_msg("%s: exit %d\n%s%s", line, rc, out, err);
	assert_contains(err, "the cluster's Kubernetes version could not be read");
	free(out);
	free(err);
	fa_set_version(x->fa, VERSION("29", "v1.29.4"));
	assert_int_equal(tt_run(line, &out, &err), 1);
	assert_contains(out, NOT_KNOWN_129_TEXT);
	assert_contains(err, "Kubernetes v1.29.4 read from");
	free(out);
	free(err);
	snprintf(line, sizeof(line), "%s validate --kubernetes-version 1.30 --kubeconfig %s/kubeconfig %s",
		 tt_bin(), dir, path);
	rc = tt_run(line, &out, &err);
	if (rc != 0)
		fail_msg("%s: exit %d\n%s%s", line, rc, out, err);
	free(out);
	free(err);
	free(path);
	sp_rmtree(dir);
}

/* An unsupported release is a usage error (exit 2) naming the range, for
 * every command that takes the flag. */
static void unsupported_version_is_usage(void **state)
{
	(void)state;
	static const char *const cmds[] = { "validate --kubernetes-version 1.33 x.yaml",
					    "review --kubernetes-version 1.28 -",
					    "expand --kubernetes-version 2.0 tj.yaml",
					    "validate --kubernetes-version latest x.yaml" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char line[256], *err = NULL;
		snprintf(line, sizeof(line), "%s %s", tt_bin(), cmds[i]);
		int rc = tt_run(line, NULL, &err);
		if (rc != 2 || !strstr(err, "--kubernetes-version \"") ||
		    !strstr(err, "use 1.29 to 1.32, the Kubernetes versions supported"))
			fail_msg("%s: exit %d\n%s", cmds[i], rc, err);
		free(err);
	}
	/* serve reads it from the cluster: no such flag */
	char line[256], *err = NULL;
	snprintf(line, sizeof(line), "%s serve --kubernetes-version 1.30 --dev", tt_bin());
	assert_int_equal(tt_run(line, NULL, &err), 2);
	assert_contains(err, "unknown option \"--kubernetes-version\"");
	free(err);
}

/* ------------------------------------------------------------ upgrades */

/* tw_kube_version_reread with its log line (malloc'd into *log). */
static void reread(fx *x, _Atomic int *minor, char **log)
{
	char path[] = "/tmp/tw-kupg-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	tw_log_set_fd(fd);
	tw_kube_version_reread(x->api, 2000, minor);
	tw_log_set_fd(2);
	close(fd);
	*log = tt_read_file(path, NULL);
	unlink(path);
}

/* A new release is taken and said with the one before; the same release
 * again says nothing; one that cannot be read keeps what was there. */
static void reread_takes_keeps_and_says(void **state)
{
	fx *x = *state;
	_Atomic int minor = 29;
	char *log = NULL;
	fa_set_version(x->fa, VERSION("31", "v1.31.2"));
	reread(x, &minor, &log);
	assert_int_equal(atomic_load(&minor), 31);
	assert_contains(log, "\"was\":\"1.29\"");
	assert_contains(log, "\"checks\":\"1.31\"");
	assert_contains(log, "\"kubernetes\":\"v1.31.2\"");
	free(log);

	reread(x, &minor, &log);
	assert_int_equal(atomic_load(&minor), 31);
	assert_true(!log || (!strstr(log, "changed") && !strstr(log, "checks")));
	free(log);

	fa_set_version(x->fa, NULL); /* 404 */
	reread(x, &minor, &log);
	assert_int_equal(atomic_load(&minor), 31);
	assert_contains(log, "cannot read the cluster's Kubernetes version again");
	assert_contains(log, "\"kubernetes\":\"1.31\"");
	free(log);

	/* unknown at the start (unreadable then), known once it answers */
	atomic_store(&minor, TP_KUBE_MINOR_UNKNOWN);
	fa_set_version(x->fa, VERSION("30", "v1.30.0"));
	reread(x, &minor, &log);
	assert_int_equal(atomic_load(&minor), 30);
	assert_contains(log, "\"was\":\"unknown\"");
	free(log);
	assert_int_equal(fa_version_gets(x->fa), 4);
}

/* ------------------------------------------------------------ serve */

struct served {
	fx *x;
	sp_server s;
	char dir[128];
};

static void serve_start(struct served *v)
{
	char logdir[200], url[64];
	assert_int_equal(sp_mkdtemp(v->dir, sizeof(v->dir), "tw-kupg"), 0);
	assert_int_equal(sp_certs(v->dir, false), 0);
	snprintf(logdir, sizeof(logdir), "%s/log", v->dir);
	assert_int_equal(mkdir(logdir, 0700), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(v->x->fa));
	const char *extra[] = { "--kube-server", url, "--crds", "none", "--threads", "1", NULL };
	assert_int_equal(sp_start(&v->s, v->dir, logdir, extra), 0);
	/* ready: every watched kind listed once, so that the restart below
	 * makes a list again, not a first one */
	assert_true(tt_wait_until(sp_is_ready, &v->s, WAIT_MS));
}

static void serve_stop(struct served *v)
{
	assert_int_equal(sp_stop_checked(&v->s), 0);
	sp_rmtree(v->dir);
}

/* The review's status message ("" when allowed), malloc'd. */
static char *verdict(struct served *v)
{
	sp_resp r = { 0 };
	assert_int_equal(sp_https(NULL, &v->s, "POST", V_CTR, "application/json", REVIEW,
				  strlen(REVIEW), 0, &r), 0);
	assert_int_equal(r.status, 200);
	cJSON *a = tt_json(r.body);
	const char *msg = tp_get_true(a, "response.allowed") ? ""
							       : tp_get_str(a, "response.status.message");
	char *out = strdup(msg ? msg : "(no message)");
	cJSON_Delete(a);
	sp_resp_free(&r);
	return out;
}

static bool allowed_now(void *arg)
{
	char *m = verdict(arg);
	bool ok = !*m;
	free(m);
	return ok;
}

static bool log_has_reread_failure(void *arg)
{
	struct served *v = arg;
	char *log = sp_log(&v->s);
	bool has = log && strstr(log, "cannot read the cluster's Kubernetes version again");
	free(log);
	return has;
}

/* An API server that goes away and comes back */
static void restart_api_server(fx *x)
{
	fa_set_down(x->fa, true);
	tt_sleep_ms(300);
	fa_set_down(x->fa, false);
}

/* The cluster is upgraded from 1.29 to 1.30 under a running server: the
 * 1.30 field refused before is allowed once the API server is back. */
static void serve_follows_an_upgrade(void **state)
{
	struct served v = { .x = *state };
	fa_set_version(v.x->fa, VERSION("29", "v1.29.4"));
	serve_start(&v);
	char *m = verdict(&v);
	assert_contains(m, NOT_KNOWN_129_TEXT);
	free(m);

	fa_set_version(v.x->fa, VERSION("30", "v1.30.1"));
	restart_api_server(v.x);
	bool ok = tt_wait_until(allowed_now, &v, WAIT_MS);
	char *log = sp_log(&v.s);
	if (!ok)
		fail_msg("still refused; the log:\n%s", log);
	assert_contains(log, "\"was\":\"1.29\"");
	assert_contains(log, "\"checks\":\"1.30\"");
	free(log);
	serve_stop(&v);
}

/* Back from a restart with /version unreadable: 1.29 stays, the field
 * stays refused, and the log says why. */
static void serve_keeps_the_release_it_cannot_reread(void **state)
{
	struct served v = { .x = *state };
	fa_set_version(v.x->fa, VERSION("29", "v1.29.4"));
	serve_start(&v);
	fa_set_version(v.x->fa, NULL);
	restart_api_server(v.x);
	assert_true(tt_wait_until(log_has_reread_failure, &v, WAIT_MS));
	char *m = verdict(&v);
	assert_contains(m, NOT_KNOWN_129_TEXT);
	free(m);
	serve_stop(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(decides_as_the_clusters_version, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable_version_is_a_warning, setup, teardown),
		cmocka_unit_test_setup_teardown(newer_release_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(offline_kubeconfig_reads_the_version, setup, teardown),
		cmocka_unit_test_setup_teardown(serve_reads_the_version, setup, teardown),
		cmocka_unit_test(offline_flag_and_default),
		cmocka_unit_test(unsupported_version_is_usage),
		cmocka_unit_test_setup_teardown(reread_takes_keeps_and_says, setup, teardown),
		cmocka_unit_test_setup_teardown(serve_follows_an_upgrade, setup, teardown),
		cmocka_unit_test_setup_teardown(serve_keeps_the_release_it_cannot_reread, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

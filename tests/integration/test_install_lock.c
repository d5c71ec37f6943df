/*
 * test_install_lock.c — an install that cannot lock a cluster, on the fake
 * API server: its admission chain (fakeapi_admit.c) answers each write as
 * kube-apiserver would, calling the webhooks the configurations hold through
 * the Service's EndpointSlices. At every step of an install a TrainJob is
 * written, as a user would:
 *
 *   before the install; with deploy/base's configurations applied (shipped
 *   empty) and the pods never scheduled; with a replica running that never
 *   gets ready; ready but with no ready endpoint; ready (the webhook
 *   decides); the replica killed after that (fail-closed); back again; the
 *   Deployment deleted (the last replica empties them); a container restart
 *   and a rolling update (they stay); uninstalled (nothing left); tampered
 *   with (put back); cert-manager's files mode; the failure policy, timeout
 *   and exempted namespaces given by flag.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support/fakeapi.h"
#include "tests/support/fakeapi_admit.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/cluster/register.h"

#define NS "test" /* sp_certs' certificates name trainer-webhook.test.svc */
#define POD "trainer-webhook-0"
#define VALIDATOR "trainer-webhook-validator"
#define DEFAULTER "trainer-webhook-defaulter"

#define RUNTIME                                                                            \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\"," \
	"\"metadata\":{\"name\":\"torch\"},\"spec\":{\"mlPolicy\":{\"torch\":{}},"              \
	"\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{"         \
	"\"metadata\":{\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":"            \
	"\"trainer\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\","   \
	"\"image\":\"img\"}]}}}}}]}}}}"

#define TRAINJOB(ns, runtime)                                                                \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{" \
	"\"name\":\"mnist\",\"namespace\":\"" ns "\"},\"spec\":{\"runtimeRef\":{\"name\":\""     \
	runtime "\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"}}}"
#define GOOD TRAINJOB("team-a", "torch")
#define BAD TRAINJOB("team-a", "nowhere") /* a runtime that does not exist */

typedef struct fx {
	fa_server *fa;
	char dir[128], url[64];
	sp_server s;
	int n; /* servers started, for their log folders */
} fx;

static int setup(void **state)
{
	fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(fa_start(&x->fa), 0);
	assert_int_equal(sp_mkdtemp(x->dir, sizeof(x->dir), "tw-lock"), 0);
	snprintf(x->url, sizeof(x->url), "http://127.0.0.1:%u", fa_port(x->fa));
	fa_put_object(x->fa, FA_CTR, RUNTIME);
	setenv("POD_NAME", POD, 1);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	fx *x = *state;
	int rc = sp_stop_checked(&x->s);
	fa_stop(x->fa);
	sp_rmtree(x->dir);
	unsetenv("POD_NAME");
	free(x);
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------ the install */

/* deploy/base's two webhook configurations, as kubectl apply -k puts them. */
static void apply_shipped_configurations(fx *x)
{
	const char *files[] = { "deploy/base/validatingwebhook.yaml",
				"deploy/base/mutatingwebhook.yaml" };
	int kinds[] = { FA_VWC, FA_MWC };
	for (int i = 0; i < 2; i++) {
		size_t len = 0;
		char *text = tt_read_file(files[i], &len);
		assert_non_null(text);
		tp_docs *docs = NULL;
		assert_int_equal(tp_load(text, len, NULL, &docs, NULL), TP_OK);
		assert_int_equal(tp_docs_count(docs), 1);
		const cJSON *cfg = tp_docs_at(docs, 0)->obj;
		/* shipped empty: nothing in them can refuse a write */
		assert_int_equal(cJSON_GetArraySize(tp_get_array(cfg, "webhooks")), 0);
		char *json = cJSON_PrintUnformatted(cfg);
		fa_put_object(x->fa, kinds[i], json);
		free(json);
		tp_docs_free(docs);
		free(text);
	}
}

/* The Service's EndpointSlice as the endpoints controller writes it: this
 * pod's endpoint (ready, terminating) and maybe another replica's. */
static void endpoints(fx *x, bool ready, bool terminating, bool other_ready)
{
	char *json = NULL;
	assert_true(asprintf(&json,
			     "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\","
			     "\"metadata\":{\"name\":\"trainer-webhook-abcde\",\"namespace\":\"" NS
			     "\",\"labels\":{\"kubernetes.io/service-name\":\"trainer-webhook\"}},"
			     "\"addressType\":\"IPv4\",\"ports\":[{\"name\":\"https\",\"port\":%u,"
			     "\"protocol\":\"TCP\"}],\"endpoints\":[{\"addresses\":[\"127.0.0.1\"],"
			     "\"conditions\":{\"ready\":%s,\"serving\":%s,\"terminating\":%s},"
			     "\"targetRef\":{\"kind\":\"Pod\",\"name\":\"" POD "\",\"namespace\":"
			     "\"" NS "\"}}%s]}",
			     x->s.port, ready ? "true" : "false", ready || terminating ? "true" : "false",
			     terminating ? "true" : "false",
			     other_ready ? ",{\"addresses\":[\"127.0.0.2\"],\"conditions\":{\"ready\":"
					   "true},\"targetRef\":{\"kind\":\"Pod\",\"name\":"
					   "\"trainer-webhook-1\",\"namespace\":\"" NS "\"}}"
					 : "") > 0);
	fa_put_object(x->fa, FA_EPS, json);
	free(json);
}

/* `serve` as deploy/base runs it, against the fake (more: extra flags). */
static void start(fx *x, const char *const *more)
{
	char logdir[200];
	snprintf(logdir, sizeof(logdir), "%s/%d", x->dir, x->n++);
	assert_int_equal(mkdir(logdir, 0700), 0);
	const char *extra[32] = { "--kube-server", x->url, "--manage-certs", "--register-webhooks",
				  "--namespace", NS, "--profile", "kubeflow", "--threads", "2",
				  "--shutdown-grace", "1", "--log-level", "debug" };
	int n = 14;
	for (int i = 0; more && more[i]; i++)
		extra[n++] = more[i];
	extra[n] = NULL;
	assert_int_equal(sp_start(&x->s, NULL, logdir, extra), 0);
}

static int webhooks(fx *x, int kind, const char *name)
{
	char *text = fa_get_object(x->fa, kind, NULL, name);
	cJSON *cfg = tt_json(text ? text : "{}");
	int n = cJSON_GetArraySize(tp_get_array(cfg, "webhooks"));
	cJSON_Delete(cfg);
	free(text);
	return text ? n : -1;
}

static bool filled(void *arg)
{
	fx *x = arg;
	return webhooks(x, FA_VWC, VALIDATOR) == 5 && webhooks(x, FA_MWC, DEFAULTER) == 2;
}

static bool empty(void *arg)
{
	fx *x = arg;
	return webhooks(x, FA_VWC, VALIDATOR) == 0 && webhooks(x, FA_MWC, DEFAULTER) == 0;
}

/* A TrainJob written now, as kubectl would: the API server's answer. */
static fa_verdict write_trainjob(fx *x, const char *step, const char *json)
{
	fa_verdict v;
	fa_admit(x->fa, FA_TJ, "CREATE", json, &v);
	print_message("%-44s %s (%d webhook call%s)%s%s\n", step,
		      v.allowed ? "allowed" : "REFUSED", v.calls, v.calls == 1 ? "" : "s",
		      v.allowed ? "" : ": ", v.allowed ? "" : v.message);
	return v;
}

static void allowed_unchecked(fx *x, const char *step)
{
	fa_verdict v = write_trainjob(x, step, BAD);
	assert_true(v.allowed);
	assert_int_equal(v.calls, 0);
}

/* The webhook decides: the good TrainJob in, the bad one denied by it. */
static void webhook_decides(fx *x, const char *step)
{
	fa_verdict v = write_trainjob(x, step, GOOD);
	assert_true(v.allowed);
	assert_int_equal(v.calls, 2); /* the defaulter and the validator */
	v = write_trainjob(x, step, BAD);
	assert_false(v.allowed);
	assert_int_equal(v.code, 403);
	assert_non_null(strstr(v.message, "admission webhook \"validator.trainjob.trainer."
					  "kubeflow.org\" denied the request: "));
}

static bool readyz(sp_server *s, int want)
{
	sp_resp r;
	sp_https(NULL, s, "GET", "/readyz", NULL, NULL, 0, SP_NOVERIFY | SP_FRESH, &r);
	bool ok = r.status == want;
	sp_resp_free(&r);
	return ok;
}

static bool ready(void *arg)
{
	return readyz(arg, 200);
}

static bool unready(void *arg)
{
	return readyz(arg, 503);
}

/* Ready, endpoint ready, configurations filled. */
static void start_ready(fx *x, const char *const *more)
{
	start(x, more);
	assert_true(tt_wait_until(ready, &x->s, 10000 * sp_slow()));
	endpoints(x, true, false, false);
	assert_true(tt_wait_until(filled, x, 10000 * sp_slow()));
}

/* ------------------------------------------------------------ the tests */

/* The control: configurations shipped filled, as before (every webhook the
 * server registers, failurePolicy Fail), lock the cluster while no replica
 * is ready: the fake's admission chain sees it. */
static void filled_configurations_would_lock(void **state)
{
	fx *x = *state;
	const char *names[] = { VALIDATOR, DEFAULTER };
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	int fa_kinds[] = { FA_VWC, FA_MWC };
	tw_register_spec spec = { .namespace_ = NS, .service = "trainer-webhook" };
	for (int i = 0; i < 2; i++) {
		cJSON *cfg = cJSON_CreateObject();
		cJSON_AddStringToObject(cfg, "apiVersion", "admissionregistration.k8s.io/v1");
		cJSON_AddStringToObject(cfg, "kind", kinds[i]);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(cfg, "metadata"), "name", names[i]);
		cJSON_AddItemToObject(cfg, "webhooks", tw_register_webhooks(&spec, i));
		char *json = cJSON_PrintUnformatted(cfg);
		fa_put_object(x->fa, fa_kinds[i], json);
		free(json);
		cJSON_Delete(cfg);
	}
	fa_verdict v = write_trainjob(x, "shipped filled, pods never scheduled:", GOOD);
	assert_false(v.allowed);
	assert_int_equal(v.code, 500);
	assert_non_null(strstr(v.message, "no endpoints available for service \"trainer-webhook\""));
}

static void never_ready_install_locks_nothing(void **state)
{
	fx *x = *state;
	allowed_unchecked(x, "before the install:");
	apply_shipped_configurations(x);
	allowed_unchecked(x, "installed, pods never scheduled:");
	/* a replica runs but never gets ready (the runtimes cannot be listed) */
	fa_set_list_status(x->fa, FA_CTR, 403);
	start(x, NULL);
	assert_true(sp_log_wait(&x->s, "webhook configurations: waiting for this replica: ",
				5000 * sp_slow()));
	assert_true(tt_wait_until(unready, &x->s, 5000 * sp_slow())); /* it answers: not ready */
	allowed_unchecked(x, "a replica running, never ready:");
	/* ready inside, but the kubelet never marked it ready: no endpoint */
	fa_set_list_status(x->fa, FA_CTR, 0);
	endpoints(x, false, false, false);
	assert_true(tt_wait_until(ready, &x->s, 10000 * sp_slow()));
	assert_true(sp_log_wait(&x->s, "waiting for a ready endpoint of Service test/"
				       "trainer-webhook", 5000 * sp_slow()));
	fa_stats st;
	fa_get_stats(x->fa, FA_EPS, &st);
	unsigned seen = st.lists;
	while (st.lists < seen + 2) /* it looked twice more and found none ready */
		tt_sleep_ms(50), fa_get_stats(x->fa, FA_EPS, &st);
	assert_true(empty(x));
	allowed_unchecked(x, "ready, no ready endpoint:");
	/* the endpoint is ready: the webhooks go in and decide */
	endpoints(x, true, false, false);
	assert_true(tt_wait_until(filled, x, 10000 * sp_slow()));
	assert_true(sp_log_wait(&x->s, "webhook configurations: filled (" VALIDATOR ", "
				       DEFAULTER ")", 1000));
	webhook_decides(x, "ready:");
	/* they went in with the managed bundle: the certificate manager found
	 * nothing to add (a webhook without one would have failed the calls) */
	char *log = sp_log(&x->s);
	assert_null(strstr(log, "wrote the CA bundle into"));
	free(log);
	/* once ready, a failure stays fail-closed: the replica dies */
	sp_signal(&x->s, SIGKILL);
	sp_wait(&x->s, 5000);
	endpoints(x, false, false, false);
	fa_verdict v = write_trainjob(x, "ready once, then killed:", GOOD);
	assert_false(v.allowed);
	assert_int_equal(v.code, 500);
	assert_non_null(strstr(v.message, "failed calling webhook \"defaulter.trainjob.trainer."
					  "kubeflow.org\": failed to call webhook: Post \"https://"
					  "trainer-webhook.test.svc:443/mutate-trainer-kubeflow-org-"
					  "v1alpha1-trainjob?timeout=5s\": no endpoints available for "
					  "service \"trainer-webhook\""));
	/* it comes back */
	start(x, NULL);
	assert_true(tt_wait_until(ready, &x->s, 10000 * sp_slow()));
	endpoints(x, true, false, false);
	webhook_decides(x, "restarted:");
	/* kubectl delete deployment: the pod is deleted, its endpoint
	 * terminating, no other replica: it empties both */
	endpoints(x, false, true, false);
	sp_signal(&x->s, SIGTERM);
	assert_int_equal(sp_wait(&x->s, 10000 * sp_slow()), 0);
	assert_true(empty(x));
	log = sp_log(&x->s);
	assert_non_null(strstr(log, "webhook configurations: emptied by the last replica"));
	free(log);
	allowed_unchecked(x, "Deployment deleted:");
}

static void restart_and_rollout_keep_them(void **state)
{
	fx *x = *state;
	apply_shipped_configurations(x);
	start_ready(x, NULL);
	/* a container restart: the pod stays, its endpoint is not terminating */
	endpoints(x, false, false, false);
	sp_signal(&x->s, SIGTERM);
	assert_int_equal(sp_wait(&x->s, 10000 * sp_slow()), 0);
	assert_true(filled(x));
	assert_true(sp_log_wait(&x->s, "this pod is not being deleted (a container restart): "
				       "they stay", 100));
	/* a rolling update: this pod is deleted, a new replica is ready */
	start_ready(x, NULL);
	endpoints(x, false, true, true);
	sp_signal(&x->s, SIGTERM);
	assert_int_equal(sp_wait(&x->s, 10000 * sp_slow()), 0);
	assert_true(filled(x));
	assert_true(sp_log_wait(&x->s, "1 other replica is ready: they stay", 100));
}

static void uninstall_leaves_nothing(void **state)
{
	fx *x = *state;
	apply_shipped_configurations(x);
	start_ready(x, NULL);
	webhook_decides(x, "installed and ready:");
	/* kubectl delete -k: the configurations go with the rest; the replica
	 * still running never makes them again */
	fa_delete_object(x->fa, FA_VWC, NULL, VALIDATOR);
	fa_delete_object(x->fa, FA_MWC, NULL, DEFAULTER);
	assert_true(sp_log_wait(&x->s, "ValidatingWebhookConfiguration \\\"" VALIDATOR "\\\" does "
				       "not exist: apply deploy/", 5000 * sp_slow()));
	fa_stats st;
	fa_get_stats(x->fa, FA_VWC, &st);
	assert_int_equal(st.posts, 0);
	assert_int_equal(webhooks(x, FA_VWC, VALIDATOR), -1);
	allowed_unchecked(x, "uninstalled:");
	endpoints(x, false, true, false);
	sp_signal(&x->s, SIGTERM);
	assert_int_equal(sp_wait(&x->s, 10000 * sp_slow()), 0);
	allowed_unchecked(x, "uninstalled, pods gone:");
}

static void tampered_configuration_is_put_back(void **state)
{
	fx *x = *state;
	apply_shipped_configurations(x);
	start_ready(x, NULL);
	/* kubectl apply --force (or replace) puts the shipped, empty one back */
	apply_shipped_configurations(x);
	assert_true(tt_wait_until(filled, x, 5000 * sp_slow()));
	webhook_decides(x, "re-applied, put back:");
}

static void cert_manager_mode_fills_with_its_ca(void **state)
{
	fx *x = *state;
	char certs[200], crt[260], key[260];
	snprintf(certs, sizeof(certs), "%s/certs", x->dir);
	assert_int_equal(sp_certs(certs, false), 0); /* ca.crt, tls.crt, tls.key: as cert-manager's */
	snprintf(crt, sizeof(crt), "%s/tls.crt", certs);
	snprintf(key, sizeof(key), "%s/tls.key", certs);
	apply_shipped_configurations(x);
	char logdir[200];
	snprintf(logdir, sizeof(logdir), "%s/files", x->dir);
	assert_int_equal(mkdir(logdir, 0700), 0);
	const char *extra[] = { "--kube-server", x->url, "--register-webhooks", "--namespace", NS,
				"--profile", "kubeflow", "--shutdown-grace", "1", NULL };
	assert_int_equal(sp_start(&x->s, certs, logdir, extra), 0);
	allowed_unchecked(x, "cert-manager mode, not ready yet:");
	assert_true(tt_wait_until(ready, &x->s, 10000 * sp_slow()));
	endpoints(x, true, false, false);
	assert_true(tt_wait_until(filled, x, 10000 * sp_slow()));
	webhook_decides(x, "cert-manager mode, ready:"); /* the bundle is ca.crt beside tls.crt */
	endpoints(x, false, true, false);
	sp_signal(&x->s, SIGTERM);
	assert_int_equal(sp_wait(&x->s, 10000 * sp_slow()), 0);
	assert_true(empty(x));
}

static void flags_reach_every_webhook(void **state)
{
	fx *x = *state;
	apply_shipped_configurations(x);
	const char *more[] = { "--failure-policy", "Ignore", "--webhook-timeout", "3",
			       "--exempt-namespace", "kube-system", "--exempt-namespace", "ci",
			       NULL };
	start_ready(x, more);
	char *text = fa_get_object(x->fa, FA_VWC, NULL, VALIDATOR);
	cJSON *cfg = tt_json(text);
	const cJSON *wh;
	cJSON_ArrayForEach(wh, tp_get_array(cfg, "webhooks"))
	{
		assert_string_equal(tp_get_str(wh, "failurePolicy"), "Ignore");
		long long t = 0;
		assert_true(tp_get_int(wh, "timeoutSeconds", &t));
		assert_int_equal(t, 3);
		const cJSON *e = cJSON_GetArrayItem(tp_get_array(wh, "namespaceSelector.matchExpressions"), 0);
		assert_string_equal(tp_get_str(e, "operator"), "NotIn");
		assert_int_equal(cJSON_GetArraySize(tp_get_array(e, "values")), 2);
		assert_string_equal(tp_get_str(wh, "clientConfig.service.namespace"), NS);
		assert_non_null(tp_get_str(wh, "clientConfig.caBundle"));
	}
	cJSON_Delete(cfg);
	free(text);
	/* an exempted namespace is never sent */
	fa_verdict v = write_trainjob(x, "exempted namespace:", TRAINJOB("ci", "nowhere"));
	assert_true(v.allowed);
	assert_int_equal(v.calls, 0);
	/* Ignore: a replica that dies lets writes through unchecked, by choice */
	sp_signal(&x->s, SIGKILL);
	sp_wait(&x->s, 5000);
	endpoints(x, false, false, false);
	v = write_trainjob(x, "failurePolicy Ignore, killed:", BAD);
	assert_true(v.allowed);
	assert_int_equal(v.calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(filled_configurations_would_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(never_ready_install_locks_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(restart_and_rollout_keep_them, setup, teardown),
		cmocka_unit_test_setup_teardown(uninstall_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(tampered_configuration_is_put_back, setup, teardown),
		cmocka_unit_test_setup_teardown(cert_manager_mode_fills_with_its_ca, setup, teardown),
		cmocka_unit_test_setup_teardown(flags_reach_every_webhook, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

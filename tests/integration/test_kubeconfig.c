/*
 * test_kubeconfig.c — every kubeconfig people have, against the fake API
 * server over HTTPS with client certificates (fakeapi.c's fa_start_tls):
 * client certificates (files, relative to the kubeconfig, and inline data),
 * tokens (inline, tokenFile), exec credential plugins (a shell script
 * written here: its environment, KUBERNETES_EXEC_INFO, a token or a client
 * certificate, kept until expirationTimestamp, run again after a 401,
 * refused when it needs a terminal, killed past the time limit, failures
 * said), $KUBECONFIG's files merged as kubectl merges them, --context, and
 * `validate --kubeconfig` / `serve --kubeconfig` running with them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "certs/certs.h"
#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/cluster/kube_internal.h"
#include "webhook/cluster/kubeapi.h"

typedef struct fx {
	fa_server *fa;
	char dir[128];    /* the kubeconfigs, the plugin, the client certificate */
	char server[64];  /* https://127.0.0.1:PORT */
	char *ca_pem;     /* the fake's CA */
	char *cert_pem, *key_pem; /* the client certificate of "alice" */
} fx;

static char *read_in(const char *dir, const char *name)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *s = tt_read_file(path, NULL);
	assert_non_null(s);
	return s;
}

static char *b64(const char *s)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_base64_encode(s, strlen(s), &b), 0);
	return b.data;
}

static int setup(void **state)
{
	fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(sp_mkdtemp(x->dir, sizeof(x->dir), "tw-kubeconfig"), 0);
	char sdir[200], cdir[200], err[512];
	snprintf(sdir, sizeof(sdir), "%s/server", x->dir);
	snprintf(cdir, sizeof(cdir), "%s/client", x->dir);
	assert_int_equal(sp_certs(sdir, false), 0);
	const char *alice[] = { "alice" };
	tw_certs_gen_opts co = { .dns = alice, .ndns = 1 };
	assert_int_equal(tw_certs_generate(cdir, &co, NULL, err, sizeof(err)), 0);
	x->ca_pem = read_in(sdir, "ca.crt");
	x->cert_pem = read_in(cdir, "tls.crt");
	x->key_pem = read_in(cdir, "tls.key");
	char *srv_cert = read_in(sdir, "tls.crt"), *srv_key = read_in(sdir, "tls.key");
	char *client_ca = read_in(cdir, "ca.crt");
	fa_tls tls = { srv_cert, srv_key, client_ca };
	assert_int_equal(fa_start_tls(&x->fa, &tls), 0);
	free(srv_cert);
	free(srv_key);
	free(client_ca);
	snprintf(x->server, sizeof(x->server), "https://127.0.0.1:%u", fa_port(x->fa));
	fa_put_object(x->fa, FA_PC, "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":"
				    "\"PriorityClass\",\"metadata\":{\"name\":\"high\"},\"value\":10}");
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	fx *x = *state;
	fa_stop(x->fa);
	sp_rmtree(x->dir);
	free(x->ca_pem);
	free(x->cert_pem);
	free(x->key_pem);
	free(x);
	return 0;
}

/* A kubeconfig in x->dir/name: one context "main" (current) over the fake,
 * the fake's CA inline, and the user's fields (YAML lines, 4 spaces in). */
static void kubeconfig(fx *x, const char *name, const char *user_yaml)
{
	char *ca = b64(x->ca_pem);
	char *text = NULL;
	assert_true(asprintf(&text,
			     "apiVersion: v1\nkind: Config\ncurrent-context: main\n"
			     "clusters:\n- name: fake\n  cluster:\n    server: %s\n"
			     "    certificate-authority-data: %s\n"
			     "users:\n- name: me\n  user:\n%s"
			     "contexts:\n- name: main\n  context:\n    cluster: fake\n    user: me\n",
			     x->server, ca, user_yaml) > 0);
	assert_int_equal(sp_write(x->dir, name, text), 0);
	free(text);
	free(ca);
}

/* GET the PriorityClass "high" with the config of kubeconfig name; the
 * HTTP status (0: no answer, err holds why). */
static long get_with(fx *x, const char *name, const char *context, char *err, size_t n)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s", x->dir, name);
	tw_kube_config kc;
	tw_kubeapi *api = NULL;
	if (tw_kubeconfig_load(path, context, &kc, err, n))
		return -1;
	long status = 0;
	if (!tw_kubeapi_new(&kc, &api, err, n)) {
		tw_kube_resp r;
		tw_kube_resp_init(&r);
		if (!tw_kubeapi_call(api, "GET", "/apis/scheduling.k8s.io/v1/priorityclasses/high",
				     NULL, 5000, &r))
			status = r.status;
		snprintf(err, n, "%s", r.error);
		tw_kube_resp_free(&r);
	}
	tw_kubeapi_free(api);
	tw_kube_config_free(&kc);
	return status;
}

/* The CN of the client certificate the last request of resource r brought. */
static void last_user_of(fx *x, int r, const char *user)
{
	fa_stats st;
	fa_get_stats(x->fa, r, &st);
	assert_string_equal(st.last_user, user);
}

static void last_user_is(fx *x, const char *user)
{
	last_user_of(x, FA_PC, user);
}

/* A client from kubeconfig name of x->dir. */
static tw_kubeapi *client(fx *x, const char *name, tw_kube_config *kc)
{
	char path[300], err[1024];
	snprintf(path, sizeof(path), "%s/%s", x->dir, name);
	tw_kubeapi *api = NULL;
	if (tw_kubeconfig_load(path, NULL, kc, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(tw_kubeapi_new(kc, &api, err, sizeof(err)), 0);
	return api;
}

/* n GETs of the PriorityClass, each answered 200. */
static void get_ok(tw_kubeapi *api, int n)
{
	for (int i = 0; i < n; i++) {
		tw_kube_resp r;
		tw_kube_resp_init(&r);
		assert_int_equal(tw_kubeapi_call(api, "GET", "/apis/scheduling.k8s.io/v1/"
						 "priorityclasses/high", NULL, 5000, &r), 0);
		assert_int_equal(r.status, 200);
		tw_kube_resp_free(&r);
	}
}

/* ------------------------------------------------------------ certificates */

static void client_certificate_files(void **state)
{
	fx *x = *state;
	char err[1024];
	assert_int_equal(sp_write(x->dir, "alice.crt", x->cert_pem), 0);
	assert_int_equal(sp_write(x->dir, "alice.key", x->key_pem), 0);
	/* relative to the kubeconfig's folder, as kubectl reads them */
	kubeconfig(x, "files", "    client-certificate: alice.crt\n    client-key: alice.key\n");
	assert_int_equal(get_with(x, "files", NULL, err, sizeof(err)), 200);
	last_user_is(x, "alice");
	/* the same cluster without the certificate: the fake refuses it */
	kubeconfig(x, "anonymous", "    {}\n");
	assert_int_equal(get_with(x, "anonymous", NULL, err, sizeof(err)), 401);
	/* a certificate without its key is said, not sent half */
	kubeconfig(x, "half", "    client-certificate: alice.crt\n");
	assert_int_equal(get_with(x, "half", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "users[me].user: a client certificate needs its key"));
}

static void client_certificate_data(void **state)
{
	fx *x = *state;
	char err[1024], user[8192];
	char *c = b64(x->cert_pem), *k = b64(x->key_pem);
	/* inline data wins over files that do not even exist */
	snprintf(user, sizeof(user),
		 "    client-certificate-data: %s\n    client-key-data: %s\n"
		 "    client-certificate: /nonexistent.crt\n    client-key: /nonexistent.key\n", c, k);
	kubeconfig(x, "data", user);
	assert_int_equal(get_with(x, "data", NULL, err, sizeof(err)), 200);
	last_user_is(x, "alice");
	free(c);
	free(k);
}

/* ------------------------------------------------------------ tokens */

static void tokens_inline_and_file(void **state)
{
	fx *x = *state;
	char err[1024];
	fa_set_token(x->fa, "t-inline");
	kubeconfig(x, "inline", "    token: t-inline\n");
	assert_int_equal(get_with(x, "inline", NULL, err, sizeof(err)), 200);
	/* tokenFile (relative) wins over token, as client-go reads it */
	assert_int_equal(sp_write(x->dir, "token", "t-file\n"), 0);
	kubeconfig(x, "file", "    token: t-inline\n    tokenFile: token\n");
	assert_int_equal(get_with(x, "file", NULL, err, sizeof(err)), 401);
	fa_set_token(x->fa, "t-file");
	assert_int_equal(get_with(x, "file", NULL, err, sizeof(err)), 200);
	fa_stats st;
	fa_get_stats(x->fa, FA_PC, &st);
	assert_string_equal(st.last_token, "t-file");
}

/* ------------------------------------------------------------ exec plugins */

/* The stub plugin: counts its runs, keeps what it was given, prints
 * dir/answer. */
static void write_plugin(fx *x)
{
	char path[300], *text = NULL;
	assert_true(asprintf(&text,
			     "#!/bin/sh\n"
			     "echo run >> '%s/runs'\n"
			     "printf '%%s' \"$KUBERNETES_EXEC_INFO\" > '%s/info'\n"
			     "printf '%%s %%s' \"$GREETING\" \"$1\" > '%s/env'\n"
			     "if [ -f '%s/fail' ]; then echo 'token expired: run gcloud auth login' >&2;"
			     " exit 3; fi\n"
			     "if [ -f '%s/slow' ]; then sleep 30; fi\n"
			     "cat '%s/answer'\n",
			     x->dir, x->dir, x->dir, x->dir, x->dir, x->dir) > 0);
	assert_int_equal(sp_write(x->dir, "plugin.sh", text), 0);
	free(text);
	snprintf(path, sizeof(path), "%s/plugin.sh", x->dir);
	assert_int_equal(chmod(path, 0700), 0);
}

static int runs(fx *x)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/runs", x->dir);
	char *s = tt_read_file(path, NULL);
	int n = 0;
	for (const char *p = s; p && (p = strstr(p, "run")); p += 3)
		n++;
	free(s);
	return n;
}

static void answer_token(fx *x, const char *token, const char *expires)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		 "\"status\":{\"token\":\"%s\"%s%s%s}}",
		 token, expires ? ",\"expirationTimestamp\":\"" : "", expires ? expires : "",
		 expires ? "\"" : "");
	assert_int_equal(sp_write(x->dir, "answer", text), 0);
}

#define EXEC_USER(mode)                                                                  \
	"    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"                   \
	"      command: ./plugin.sh\n      args: [from-args]\n"                             \
	"      env:\n      - name: GREETING\n        value: hello\n"                        \
	"      provideClusterInfo: true\n" mode                                             \
	"      installHint: install plugin.sh from the platform team\n"

static void exec_plugin_token_cached(void **state)
{
	fx *x = *state;
	write_plugin(x);
	fa_set_token(x->fa, "t-exec-1");
	answer_token(x, "t-exec-1", NULL);
	kubeconfig(x, "exec", EXEC_USER("      interactiveMode: IfAvailable\n"));
	/* one config, many calls: the plugin runs once */
	tw_kube_config kc;
	tw_kubeapi *api = client(x, "exec", &kc);
	get_ok(api, 3);
	assert_int_equal(runs(x), 1);
	/* its environment: ours, the kubeconfig's env, its args, the exec info */
	char *env = read_in(x->dir, "env"), *info = read_in(x->dir, "info");
	assert_string_equal(env, "hello from-args");
	cJSON *ec = tt_json(info);
	assert_string_equal(tp_get_str(ec, "apiVersion"), "client.authentication.k8s.io/v1");
	assert_string_equal(tp_get_str(ec, "kind"), "ExecCredential");
	assert_false(tp_get_true(ec, "spec.interactive"));
	assert_string_equal(tp_get_str(ec, "spec.cluster.server"), x->server);
	assert_non_null(tp_get_str(ec, "spec.cluster.certificate-authority-data"));
	cJSON_Delete(ec);
	free(env);
	free(info);
	/* the credential stops working: a 401 runs the plugin again, once */
	fa_set_token(x->fa, "t-exec-2");
	answer_token(x, "t-exec-2", NULL);
	get_ok(api, 1);
	assert_int_equal(runs(x), 2);
	tw_kubeapi_free(api);
	tw_kube_config_free(&kc);
}

static void exec_plugin_kept_until_expiry(void **state)
{
	fx *x = *state;
	char path[300];
	write_plugin(x);
	fa_set_token(x->fa, "t-exp");
	kubeconfig(x, "exec", EXEC_USER("      interactiveMode: Never\n"));
	const char *expiries[] = { "2000-01-01T00:00:00Z", "2999-01-01T00:00:00.5+02:00" };
	int want[] = { 3, 1 }; /* expired: every call runs it; in the future: one run */
	for (int e = 0; e < 2; e++) {
		snprintf(path, sizeof(path), "%s/runs", x->dir);
		unlink(path);
		answer_token(x, "t-exp", expiries[e]);
		tw_kube_config kc;
		tw_kubeapi *api = client(x, "exec", &kc);
		get_ok(api, 3);
		assert_int_equal(runs(x), want[e]);
		tw_kubeapi_free(api);
		tw_kube_config_free(&kc);
	}
}

static void exec_plugin_client_certificate(void **state)
{
	fx *x = *state;
	char err[1024];
	write_plugin(x);
	cJSON *ec = cJSON_CreateObject();
	cJSON_AddStringToObject(ec, "apiVersion", "client.authentication.k8s.io/v1beta1");
	cJSON_AddStringToObject(ec, "kind", "ExecCredential");
	cJSON *st = cJSON_AddObjectToObject(ec, "status");
	cJSON_AddStringToObject(st, "clientCertificateData", x->cert_pem);
	cJSON_AddStringToObject(st, "clientKeyData", x->key_pem);
	char *text = cJSON_PrintUnformatted(ec);
	assert_int_equal(sp_write(x->dir, "answer", text), 0);
	free(text);
	cJSON_Delete(ec);
	/* v1beta1 may leave interactiveMode out (IfAvailable) */
	kubeconfig(x, "exec-cert", "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
				   "      command: ./plugin.sh\n");
	assert_int_equal(get_with(x, "exec-cert", NULL, err, sizeof(err)), 200);
	last_user_is(x, "alice");
}

/* What cannot work is said, naming the user and what to do. */
static void exec_plugin_refusals(void **state)
{
	fx *x = *state;
	char err[1024];
	write_plugin(x);
	answer_token(x, "t", NULL);
	kubeconfig(x, "always", EXEC_USER("      interactiveMode: Always\n"));
	assert_int_equal(get_with(x, "always", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "users[me].user.exec: the plugin \"./plugin.sh\" needs an "
				    "interactive terminal (interactiveMode: Always)"));
	kubeconfig(x, "no-mode", EXEC_USER(""));
	assert_int_equal(get_with(x, "no-mode", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "users[me].user.exec.interactiveMode: Required value"));
	kubeconfig(x, "v1alpha1", "    exec:\n      apiVersion: client.authentication.k8s.io/"
				  "v1alpha1\n      command: ./plugin.sh\n");
	assert_int_equal(get_with(x, "v1alpha1", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exec.apiVersion: Unsupported value: "
				    "\"client.authentication.k8s.io/v1alpha1\""));
	kubeconfig(x, "missing", "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
				 "      command: no-such-plugin-anywhere\n"
				 "      interactiveMode: Never\n      installHint: brew install it\n");
	assert_int_equal(get_with(x, "missing", NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "the credential plugin \"no-such-plugin-anywhere\" was not "
				    "found (PATH, or the path given); brew install it"));
	kubeconfig(x, "auth-provider", "    auth-provider:\n      name: oidc\n");
	assert_int_equal(get_with(x, "auth-provider", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "users[me].user.auth-provider (oidc) is not supported"));
	kubeconfig(x, "basic", "    username: admin\n    password: secret\n");
	assert_int_equal(get_with(x, "basic", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "basic authentication is not supported"));
	/* the plugin fails: its status and the end of its stderr */
	kubeconfig(x, "exec", EXEC_USER("      interactiveMode: Never\n"));
	assert_int_equal(sp_write(x->dir, "fail", "1"), 0);
	assert_int_equal(get_with(x, "exec", NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "failed (exit status 3): token expired: run gcloud auth login"));
	snprintf(err, sizeof(err), "%s/fail", x->dir);
	unlink(err);
	/* an answer that is not an ExecCredential of the asked version */
	assert_int_equal(sp_write(x->dir, "answer", "hello"), 0);
	assert_int_equal(get_with(x, "exec", NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "did not print an ExecCredential"));
	assert_int_equal(sp_write(x->dir, "answer", "{\"apiVersion\":\"client.authentication.k8s.io"
						    "/v1beta1\",\"kind\":\"ExecCredential\","
						    "\"status\":{\"token\":\"t\"}}"), 0);
	assert_int_equal(get_with(x, "exec", NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "answered apiVersion \"client.authentication.k8s.io/v1beta1\" "
				    "where \"client.authentication.k8s.io/v1\" was asked"));
}

static void exec_plugin_timeout(void **state)
{
	fx *x = *state;
	char err[1024], path[300];
	write_plugin(x);
	answer_token(x, "t", NULL);
	assert_int_equal(sp_write(x->dir, "slow", "1"), 0);
	kubeconfig(x, "exec", EXEC_USER("      interactiveMode: Never\n"));
	snprintf(path, sizeof(path), "%s/exec", x->dir);
	tw_kube_config kc;
	assert_int_equal(tw_kubeconfig_load(path, NULL, &kc, err, sizeof(err)), 0);
	tw_kube_exec_cred cred;
	long long t0 = tt_mono_ms();
	assert_int_equal(tw__kube_exec_run(kc.exec, 300, &cred, err, sizeof(err)), TW_EFAILED);
	assert_true(tt_mono_ms() - t0 < 10000); /* killed, not waited for (it sleeps 30 s) */
	assert_non_null(strstr(err, "did not answer within 0 s (killed)"));
	tw_kube_config_free(&kc);
}

/* ------------------------------------------------------------ merging */

static void kubeconfig_env_merged(void **state)
{
	fx *x = *state;
	char err[1024], list[900], *ca = b64(x->ca_pem), *text = NULL;
	/* first: current-context "a", the cluster "fake" and user "u" */
	assert_true(asprintf(&text,
			     "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
			     "clusters:\n- name: fake\n  cluster:\n    server: %s\n"
			     "    certificate-authority-data: %s\n"
			     "users:\n- name: u\n  user:\n    token: first\n"
			     "contexts:\n- name: a\n  context:\n    cluster: fake\n    user: u\n",
			     x->server, ca) > 0);
	assert_int_equal(sp_write(x->dir, "one", text), 0);
	free(text);
	/* second: another current-context and another "u" (both lose), a
	 * context "b" only it has */
	assert_int_equal(sp_write(x->dir, "two",
				  "apiVersion: v1\nkind: Config\ncurrent-context: b\n"
				  "clusters:\n- name: fake\n  cluster:\n    server: https://nowhere.invalid\n"
				  "users:\n- name: u\n  user:\n    token: second\n"
				  "- name: v\n  user:\n    token: third\n"
				  "contexts:\n- name: b\n  context:\n    cluster: fake\n    user: v\n"),
			 0);
	snprintf(list, sizeof(list), "%s/absent:%s/one:%s/two", x->dir, x->dir, x->dir);
	setenv("KUBECONFIG", list, 1);
	tw_kube_config kc;
	assert_int_equal(tw_kubeconfig_load(NULL, NULL, &kc, err, sizeof(err)), 0);
	assert_string_equal(kc.server, x->server);
	assert_string_equal(kc.token, "first");
	tw_kube_config_free(&kc);
	/* --context b: its user v from the second file, the first file's cluster */
	assert_int_equal(tw_kubeconfig_load(NULL, "b", &kc, err, sizeof(err)), 0);
	assert_string_equal(kc.server, x->server);
	assert_string_equal(kc.token, "third");
	tw_kube_config_free(&kc);
	assert_int_equal(tw_kubeconfig_load(NULL, "c", &kc, err, sizeof(err)), TW_EFAILED);
	assert_non_null(strstr(err, "no context \"c\" (contexts: a, b)"));
	assert_non_null(strstr(err, "KUBECONFIG="));
	/* --kubeconfig names one file: no merging */
	snprintf(list, sizeof(list), "%s/two", x->dir);
	assert_int_equal(tw_kubeconfig_load(list, NULL, &kc, err, sizeof(err)), 0);
	assert_string_equal(kc.server, "https://nowhere.invalid");
	tw_kube_config_free(&kc);
	setenv("KUBECONFIG", "/nonexistent/one:/nonexistent/two", 1);
	assert_int_equal(tw_kubeconfig_load(NULL, NULL, &kc, err, sizeof(err)), TW_EFAILED);
	assert_non_null(strstr(err, "none of its files exists"));
	unsetenv("KUBECONFIG");
	free(ca);
}

/* ------------------------------------------------------------ the commands */

/* A CRD of TrainJobs that checks spec.suspend's type, served by the fake. */
#define TRAINJOB_CRD                                                                           \
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","    \
	"\"metadata\":{\"name\":\"trainjobs.trainer.kubeflow.org\"},\"spec\":{\"group\":"       \
	"\"trainer.kubeflow.org\",\"scope\":\"Namespaced\",\"names\":{\"kind\":\"TrainJob\","   \
	"\"plural\":\"trainjobs\",\"singular\":\"trainjob\",\"listKind\":\"TrainJobList\"},"     \
	"\"versions\":[{\"name\":\"v1alpha1\",\"served\":true,\"storage\":true,\"schema\":{"    \
	"\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","\
	"\"x-kubernetes-preserve-unknown-fields\":true,\"properties\":{\"suspend\":{\"type\":"  \
	"\"boolean\"}}}}}}}]}}"

#define SUSPEND_JOB                                                                        \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":" \
	"{\"name\":\"j\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"t\"},"  \
	"\"suspend\":\"yes\"}}"

static void validate_with(fx *x, const char *cfg, const char *user)
{
	char cmd[PATH_MAX + 600], bin[PATH_MAX], *out = NULL, *err = NULL;
	assert_non_null(realpath(tt_bin(), bin));
	snprintf(cmd, sizeof(cmd), "cd %s && %s validate --profile kubeflow --kubeconfig %s "
				   "job.json", x->dir, bin, cfg);
	int rc = tt_run(cmd, &out, &err);
	print_message("$ trainer-webhook validate --profile kubeflow --kubeconfig %s job.json\n", cfg);
	print_message("%s", err);
	print_message("%s", out);
	print_message("(exit %d)\n", rc);
	assert_int_equal(rc, 1);
	char want[200];
	snprintf(want, sizeof(want), "1 CRD read from %s", x->server);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(out, "spec.suspend: Invalid value: \"string\": spec.suspend in "
				    "body must be of type boolean"));
	last_user_of(x, FA_CRD, user);
	free(out);
	free(err);
}

static void validate_kubeconfig_cert_and_exec(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_CRD, TRAINJOB_CRD);
	assert_int_equal(sp_write(x->dir, "job.json", SUSPEND_JOB), 0);
	char *c = b64(x->cert_pem), *k = b64(x->key_pem), user[8192];
	snprintf(user, sizeof(user), "    client-certificate-data: %s\n    client-key-data: %s\n",
		 c, k);
	kubeconfig(x, "kind-like", user);
	validate_with(x, "kind-like", "alice");
	free(c);
	free(k);
	/* an EKS/GKE-like user: the plugin's token */
	write_plugin(x);
	fa_set_token(x->fa, "t-plugin");
	answer_token(x, "t-plugin", NULL);
	kubeconfig(x, "eks-like", EXEC_USER("      interactiveMode: IfAvailable\n"));
	validate_with(x, "eks-like", "");
	assert_int_equal(runs(x), 1);
}

/* A cluster whose CRDs cannot be read judges nothing: with the token the
 * fake refuses (401), and with no API server at the address, validate and
 * review exit 2 naming the CRD, the server and the cause, and print no
 * verdict; "ok" without the cluster's CRDs would pass what they refuse. A
 * CRD not installed (404) is still left to the built-in checks (above). */
static void unreadable_cluster_judges_nothing(void **state)
{
	fx *x = *state;
	char cmd[PATH_MAX + 600], bin[PATH_MAX], *out = NULL, *err = NULL;
	assert_non_null(realpath(tt_bin(), bin));
	fa_put_object(x->fa, FA_CRD, TRAINJOB_CRD);
	assert_int_equal(sp_write(x->dir, "job.json", SUSPEND_JOB), 0);
	fa_set_token(x->fa, "t-right");
	kubeconfig(x, "refused", "    token: t-wrong\n");
	snprintf(cmd, sizeof(cmd), "cd %s && %s validate --kubeconfig refused job.json", x->dir, bin);
	assert_int_equal(tt_run(cmd, &out, &err), 2);
	assert_non_null(strstr(err, "CRD trainjobs.trainer.kubeflow.org could not be read from "));
	assert_non_null(strstr(err, "401"));
	assert_non_null(strstr(err, "nothing was checked"));
	assert_null(strstr(out, "job.json"));
	free(out);
	free(err);
	/* review: no AdmissionReview answer at all, never "allowed": true */
	char review[1024];
	snprintf(review, sizeof(review),
		 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
		 "{\"uid\":\"u1\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":"
		 "\"v1alpha1\",\"kind\":\"TrainJob\"},\"resource\":{\"group\":\"trainer.kubeflow.org\","
		 "\"version\":\"v1alpha1\",\"resource\":\"trainjobs\"},\"namespace\":\"team-a\","
		 "\"operation\":\"CREATE\",\"object\":%s}}", SUSPEND_JOB);
	assert_int_equal(sp_write(x->dir, "review.json", review), 0);
	snprintf(cmd, sizeof(cmd), "cd %s && %s review --kubeconfig refused review.json", x->dir,
		 bin);
	assert_int_equal(tt_run(cmd, &out, &err), 2);
	assert_non_null(strstr(err, "401"));
	assert_null(strstr(out, "\"allowed\""));
	free(out);
	free(err);
	/* nothing listening at the address the kubeconfig names */
	fa_stop(x->fa);
	x->fa = NULL;
	kubeconfig(x, "gone", "    token: t-right\n");
	snprintf(cmd, sizeof(cmd), "cd %s && %s validate --kubeconfig gone job.json", x->dir, bin);
	assert_int_equal(tt_run(cmd, &out, &err), 2);
	assert_non_null(strstr(err, "could not be read from https://127.0.0.1:"));
	assert_null(strstr(out, "job.json"));
	free(out);
	free(err);
}

static void serve_kubeconfig(void **state)
{
	fx *x = *state;
	char logdir[200], cfg[200];
	write_plugin(x);
	fa_set_token(x->fa, "t-serve");
	answer_token(x, "t-serve", NULL);
	kubeconfig(x, "exec", EXEC_USER("      interactiveMode: Never\n"));
	snprintf(logdir, sizeof(logdir), "%s/serve", x->dir);
	snprintf(cfg, sizeof(cfg), "%s/exec", x->dir);
	assert_int_equal(mkdir(logdir, 0700), 0);
	assert_int_equal(sp_certs(logdir, false), 0);
	const char *extra[] = { "--kubeconfig", cfg, "--no-schema", NULL };
	sp_server s;
	assert_int_equal(sp_start(&s, logdir, logdir, extra), 0);
	bool ready = false;
	for (long long end = tt_mono_ms() + 10000 * sp_slow(); !ready && tt_mono_ms() < end;) {
		sp_resp r;
		sp_https(NULL, &s, "GET", "/readyz", NULL, NULL, 0, SP_FRESH, &r);
		ready = r.status == 200;
		sp_resp_free(&r);
		if (!ready)
			tt_sleep_ms(20);
	}
	assert_true(ready); /* the runtimes were listed with the plugin's token */
	fa_stats st;
	fa_get_stats(x->fa, FA_CTR, &st);
	assert_string_equal(st.last_token, "t-serve");
	assert_int_equal(runs(x), 1); /* one run for the watch and the lookups */
	assert_int_equal(sp_stop_checked(&s), 0);
	/* --kubeconfig names the API server: --kube-server beside it is refused */
	char cmd[600], *err = NULL;
	snprintf(cmd, sizeof(cmd), "%s serve --dev --kubeconfig %s --kube-server http://x", tt_bin(),
		 cfg);
	assert_int_equal(tt_run(cmd, NULL, &err), 2);
	assert_non_null(strstr(err, "--kubeconfig and --context name the API server"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(client_certificate_files, setup, teardown),
		cmocka_unit_test_setup_teardown(client_certificate_data, setup, teardown),
		cmocka_unit_test_setup_teardown(tokens_inline_and_file, setup, teardown),
		cmocka_unit_test_setup_teardown(exec_plugin_token_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(exec_plugin_kept_until_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(exec_plugin_client_certificate, setup, teardown),
		cmocka_unit_test_setup_teardown(exec_plugin_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(exec_plugin_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(kubeconfig_env_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(validate_kubeconfig_cert_and_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable_cluster_judges_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(serve_kubeconfig, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

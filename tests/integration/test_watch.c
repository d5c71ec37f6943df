/*
 * test_watch.c — the API-server watch (webhook/cluster/watch.c) against the fake API
 * server (tests/support/fakeapi.c): in process with a real store (the
 * fixture: tests/support/watchfx.c), and through the real binary (`serve
 * --kube-server http://127.0.0.1:PORT`) for /readyz. What breaks a watch and
 * how it re-lists: test_watch_relist.c. Every wait is a bounded poll.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/fakeapi.h"
#include "tests/support/testutil.h"
#include "tests/support/watchfx.h"
#include "webhook/core/jsonlines.h"
#include "webhook/cluster/kube.h"
#include "webhook/metrics/metrics.h"
#include "webhook/cluster/watch.h"

enum { CTR = FA_CTR, TR = FA_TR, TJ = FA_TJ, JS = FA_JS };

/* ------------------------------------------------------------ splitter */

struct lines {
	char got[8][64];
	int n;
};

static int collect(void *arg, const char *line, size_t len)
{
	struct lines *l = arg;
	assert_true(l->n < 8 && len < 64);
	memcpy(l->got[l->n], line, len);
	l->got[l->n++][len] = '\0';
	return 0;
}

static int stop_with(void *arg, const char *line, size_t len)
{
	(void)line, (void)len;
	return *(int *)arg;
}

static void test_jsonlines_split(void **state)
{
	(void)state;
	tw_jsonlines s;
	tw_jsonlines_init(&s, 32);
	struct lines l = { 0 };
	const char *text = "{\"a\":1}\n\r\n{\"b\":\n2}\r\n  \n{\"c\":3}";
	for (const char *p = text; *p; p++) /* one byte per feed */
		assert_int_equal(tw_jsonlines_feed(&s, p, 1, collect, &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.got[0], "{\"a\":1}");
	assert_string_equal(l.got[1], "{\"b\":");
	assert_string_equal(l.got[2], "2}");
	assert_int_equal(tw_jsonlines_pending(&s), 7); /* {"c":3} waits for its newline */
	assert_int_equal(tw_jsonlines_feed(&s, "\nx\ny\n", 5, collect, &l), 0);
	assert_int_equal(l.n, 6);
	assert_string_equal(l.got[3], "{\"c\":3}");
	assert_string_equal(l.got[5], "y");
	/* A line over the bound fails, whole or in pieces. */
	char big[40];
	memset(big, 'x', sizeof(big));
	assert_int_equal(tw_jsonlines_feed(&s, big, 20, collect, &l), 0);
	assert_int_equal(tw_jsonlines_feed(&s, big, 20, collect, &l), TP_ELIMIT);
	tw_jsonlines_reset(&s);
	big[39] = '\n';
	assert_int_equal(tw_jsonlines_feed(&s, big, 40, collect, &l), TP_ELIMIT);
	/* A callback's stop comes back as it is; one that is negative could be
	 * read as the splitter's own failure, and comes back as TP_EINVAL. */
	tw_jsonlines_reset(&s);
	assert_int_equal(tw_jsonlines_feed(&s, "a\nb\n", 4, stop_with, &(int){ 3 }), 3);
	assert_int_equal(tw_jsonlines_feed(&s, "a\n", 2, stop_with, &(int){ TP_ENOMEM }),
			 TP_EINVAL);
	tw_jsonlines_free(&s);
}

static void test_kube_in_cluster(void **state)
{
	(void)state;
	tw_kube_config c;
	char err[256];
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_not_equal(tw_kube_config_in_cluster(&c, NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(tw_kube_config_in_cluster(&c, "sa", err, sizeof(err)), 0);
	assert_string_equal(c.server, "https://[fd00::1]:443");
	assert_string_equal(c.token_file, "sa/token");
	assert_string_equal(c.ca_file, "sa/ca.crt");
	tw_kube_config_free(&c);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	assert_int_equal(tw_kube_config_in_cluster(&c, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.server, "https://10.96.0.1:443");
	assert_string_equal(c.token_file, TW_KUBE_SA_DIR "/token");
	tw_kube_config_free(&c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_not_equal(tw_kube_config_explicit(&c, "ftp://x", NULL, NULL, err, sizeof(err)),
			     0);
}

/* ------------------------------------------------------------ the watch */

static void test_follows_events(void **state)
{
	wf *x = *state;
	char *a = wf_obj("TrainingRuntime", "team-a", "torch", "5", NULL);
	char items[1024];
	snprintf(items, sizeof(items), "[%s]", a);
	free(a);
	fa_set_objects(x->fa, TR, items, "5");
	wf_start(x);
	wf_wait_watching(x);
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "team-a", "torch", true);
	/* managedFields are dropped on the way in. */
	tp_store_rdlock(x->store);
	const cJSON *o = tp_store_get(x->store, TP_KIND_TRAINING_RUNTIME, "team-a", "torch");
	assert_null(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "metadata"), "managedFields"));
	tp_store_unlock(x->store);

	wf_push_event(x->fa, TR, "ADDED", wf_obj("TrainingRuntime", "team-b", "mpi", "6", NULL));
	wf_push_event(x->fa, CTR, "ADDED", wf_obj("ClusterTrainingRuntime", NULL, "global", "7", NULL));
	wf_push_event(x->fa, JS, "ADDED",
		   wf_obj("JobSet", "team-a", "job", "8", "\"status\":{\"restarts\":2}"));
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "team-b", "mpi", true);
	wf_expect(x, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "global", true);
	wf_expect(x, TP_KIND_JOBSET, "team-a", "job", true);
	tp_store_rdlock(x->store); /* the JobSet keeps its status */
	o = tp_store_get(x->store, TP_KIND_JOBSET, "team-a", "job");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(st, "restarts")->valueint, 2);
	tp_store_unlock(x->store);

	/* An event whose object is of another kind is ignored. */
	wf_push_event(x->fa, TR, "MODIFIED", wf_obj("TrainJob", "team-a", "torch", "9", NULL));
	/* MODIFIED replaces the object: the new one carries a marker. */
	char *m = wf_obj("TrainingRuntime", "team-a", "torch", "11", NULL);
	char *p = strstr(m, "\"spec\":{}");
	assert_non_null(p);
	char *mod = NULL;
	assert_true(asprintf(&mod, "%.*s\"spec\":{\"mark\":\"v2\"}%s", (int)(p - m), m,
			     p + strlen("\"spec\":{}")) > 0);
	free(m);
	wf_push_event(x->fa, TR, "MODIFIED", mod);
	wf_expect_field(x, TP_KIND_TRAINING_RUNTIME, "team-a", "torch", "mark", "v2");

	wf_push_event(x->fa, TR, "DELETED", wf_obj("TrainingRuntime", "team-b", "mpi", "12", NULL));
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "team-b", "mpi", false);
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "team-a", "torch", true);
	/* The stats follow the store change a moment later (same thread, after
	 * it): wait for them rather than race them. */
	wf_wait_rv(x, TR, "12");
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(x->w, s);
	assert_string_equal(s[TR].rv, "12");
	assert_true(s[TR].synced);
	assert_int_equal(s[TR].relists, 0);
}

static void test_paged_list(void **state)
{
	wf *x = *state;
	char items[8192] = "[";
	for (int i = 0; i < 7; i++) {
		char name[16];
		snprintf(name, sizeof(name), "job-%d", i);
		char *o = wf_obj("TrainJob", i % 2 ? "ns-odd" : "ns-even", name, "3", NULL);
		strcat(items, i ? "," : "");
		strcat(items, o);
		free(o);
	}
	strcat(items, "]");
	fa_set_objects(x->fa, TJ, items, "40");
	fa_set_page(x->fa, TJ, 3);
	wf_start(x);
	wf_wait_watching(x);
	tp_store_rdlock(x->store);
	assert_int_equal(tp_store_count(x->store, TP_KIND_TRAINJOB), 7);
	assert_non_null(tp_store_get(x->store, TP_KIND_TRAINJOB, "ns-even", "job-6"));
	tp_store_unlock(x->store);
	fa_stats st;
	fa_get_stats(x->fa, TJ, &st);
	assert_int_equal(st.lists, 3);     /* 3 + 3 + 1 */
	assert_int_equal(st.continued, 2);
	assert_string_equal(st.last_watch_rv, "40"); /* the list's resourceVersion */
	assert_non_null(strstr(st.last_query, "allowWatchBookmarks=true"));
	assert_non_null(strstr(st.last_query, "timeoutSeconds="));
}

static void test_bookmark_moves_rv(void **state)
{
	wf *x = *state;
	fa_set_objects(x->fa, JS, "[]", "10");
	wf_start(x);
	wf_wait_watching(x);
	fa_push(x->fa, JS, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"JobSet\",\"apiVersion\":"
			   "\"jobset.x-k8s.io/v1alpha2\",\"metadata\":{\"resourceVersion\":\"777\"}}}");
	fa_end(x->fa, JS);
	wf_wait_watch_number(x, JS, 2);
	fa_stats st;
	fa_get_stats(x->fa, JS, &st);
	assert_string_equal(st.last_watch_rv, "777");
	assert_int_equal(st.lists, 1);
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[JS].bookmarks, 1);
}

static void test_token_reread(void **state)
{
	wf *x = *state;
	wf_start(x);
	wf_wait_watching(x);
	fa_stats st;
	fa_get_stats(x->fa, CTR, &st);
	assert_string_equal(st.last_token, "token-1");
	/* The kubelet rotates the token; the API server wants the new one. */
	fa_set_token(x->fa, "token-2");
	wf_write_file(x->token_path, "token-2\n");
	fa_drop(x->fa, CTR);
	wf_wait_watch_number(x, CTR, 2);
	fa_get_stats(x->fa, CTR, &st);
	assert_string_equal(st.last_token, "token-2");
	assert_int_equal(st.unauthorized, 0);
}

static void test_wrong_token_backs_off(void **state)
{
	wf *x = *state;
	fa_set_token(x->fa, "something-else");
	wf_start(x);
	long long end = tt_mono_ms() + WF_WAIT_MS;
	fa_stats st;
	for (fa_get_stats(x->fa, TJ, &st); st.unauthorized < 3; fa_get_stats(x->fa, TJ, &st)) {
		assert_true(tt_mono_ms() < end);
		tt_sleep_ms(10);
	}
	assert_false(tw_watch_synced(x->w));
	assert_int_equal(st.lists, 0);
	/* The right token arrives: the lists go through. */
	fa_set_token(x->fa, "token-1");
	assert_true(tt_wait_until(wf_synced, x, WF_WAIT_MS));
}

static void test_stop_is_prompt(void **state)
{
	wf *x = *state;
	fa_hold_list(x->fa, JS, true); /* one list hangs, three watches stream */
	wf_start(x);
	long long end = tt_mono_ms() + WF_WAIT_MS;
	fa_stats st;
	for (fa_get_stats(x->fa, JS, &st); !st.list_waiting; fa_get_stats(x->fa, JS, &st)) {
		assert_true(tt_mono_ms() < end);
		tt_sleep_ms(10);
	}
	wf_wait_watch_number(x, TJ, 1);
	assert_false(tw_watch_synced(x->w));
	long long t0 = tt_mono_ms();
	tw_watch_stop(x->w);
	x->w = NULL;
	assert_true(tt_mono_ms() - t0 < 1000);
	fa_hold_list(x->fa, JS, false);
}

/* ------------------------------------------------------------ the binary */

static size_t keep(char *p, size_t s, size_t n, void *arg)
{
	tp_buf *b = arg;
	return tp_buf_add(b, p, s * n) ? 0 : s * n;
}

/* GET /readyz: the status, and the body into body (may be NULL). */
static long readyz(unsigned short port, tp_buf *body)
{
	char url[64];
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/readyz", port);
	tp_buf dummy = TP_BUF_INIT(0);
	if (!body)
		body = &dummy;
	tp_buf_reset(body);
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L); /* loopback, a throwaway pair */
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	long code = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	tp_buf_free(&dummy);
	return code;
}

/* The HTTPS port from the server's "serving https on ... (port N)" line. */
static unsigned short port_from_log(const char *log_path, pid_t pid)
{
	long long end = tt_mono_ms() + WF_WAIT_MS;
	while (tt_mono_ms() < end) {
		char *text = tt_read_file(log_path, NULL);
		const char *p = text ? strstr(text, "(port ") : NULL;
		unsigned port = p ? (unsigned)atoi(p + 6) : 0;
		free(text);
		if (port)
			return (unsigned short)port;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			fail_msg("the server exited early; see %s", log_path);
		tt_sleep_ms(10);
	}
	fail_msg("no port in the server's log");
	return 0;
}

static void wait_watch_open(wf *x, int r, pid_t pid)
{
	long long end = tt_mono_ms() + WF_WAIT_MS;
	fa_stats st;
	for (fa_get_stats(x->fa, r, &st); !st.watch_open; fa_get_stats(x->fa, r, &st)) {
		if (tt_mono_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("resource %d was never watched", r);
		}
		tt_sleep_ms(10);
	}
}

/* The runtimes hold readiness, with a reason that names the kind and its
 * last answer; the optional kinds (PriorityClasses here, their API absent)
 * do not; TrainJobs and JobSets are not listed at all. */
static void test_binary_readyz_waits_for_runtimes(void **state)
{
	wf *x = *state;
	char cmd[1024], log_path[128];
	snprintf(cmd, sizeof(cmd),
		 "%s certs generate --service tw --namespace test --out %s >/dev/null 2>&1",
		 tt_bin(), x->dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	snprintf(log_path, sizeof(log_path), "%s/serve.log", x->dir);
	fa_set_list_status(x->fa, FA_CTR, 403); /* a missing RBAC verb */
	fa_set_list_status(x->fa, FA_PC, 404);  /* an API that is not installed */
	fa_set_list_status(x->fa, FA_JS, 404);
	char url[64], crt[128], key[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(x->fa));
	snprintf(crt, sizeof(crt), "%s/tls.crt", x->dir);
	snprintf(key, sizeof(key), "%s/tls.key", x->dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		dup2(fd, 1);
		execl(tt_bin(), tt_bin(), "serve", "--kube-server", url, "--kube-token-file",
		      x->token_path, "--tls-cert", crt, "--tls-key", key, "--listen",
		      "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--threads", "2",
		      "--shutdown-grace", "2", (char *)NULL);
		_exit(127);
	}
	unsigned short port = port_from_log(log_path, pid);
	wait_watch_open(x, TR, pid);
	tp_buf body = TP_BUF_INIT(0);
	long code = 0;
	long long end = tt_mono_ms() + WF_WAIT_MS;
	/* Until the first 403 has been seen the reason is "no answer yet". */
	while ((code = readyz(port, &body)) == 503 && !strstr(body.data, "HTTP 403") &&
	       tt_mono_ms() < end)
		tt_sleep_ms(10);
	char *first = strdup(body.data ? body.data : "");
	fa_set_list_status(x->fa, FA_CTR, 0);
	long later = 0;
	end = tt_mono_ms() + WF_WAIT_MS;
	while ((later = readyz(port, &body)) != 200 && tt_mono_ms() < end)
		tt_sleep_ms(10);
	fa_stats js, tj, pc;
	fa_get_stats(x->fa, FA_JS, &js);
	fa_get_stats(x->fa, FA_TJ, &tj);
	fa_get_stats(x->fa, FA_PC, &pc);
	kill(pid, SIGTERM);
	int status = -1;
	end = tt_mono_ms() + WF_WAIT_MS;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (tt_mono_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fail_msg("serve did not stop within %d ms of SIGTERM", WF_WAIT_MS);
		}
		tt_sleep_ms(10);
	}
	char *log = tt_read_file(log_path, NULL);
	assert_int_equal(code, 503);
	assert_non_null(strstr(first, "not ready: clustertrainingruntimes.trainer.kubeflow.org "
				      "not listed yet (HTTP 403: fake: Forbidden)"));
	assert_null(strstr(first, "priorityclasses")); /* optional: never holds readiness */
	assert_int_equal(later, 200);
	assert_int_equal(js.lists + tj.lists + js.watches + tj.watches, 0);
	assert_int_equal(pc.lists, 0); /* its API answered 404 every time */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(log);
	assert_non_null(strstr(log, "API-server watch stopped"));
	assert_non_null(strstr(log, "the API server does not serve it"));
	free(first);
	free(log);
	tp_buf_free(&body);
	char f[160];
	const char *names[] = { "tls.crt", "tls.key", "ca.crt", "ca.key", "serve.log" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", x->dir, names[i]);
		unlink(f);
	}
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonlines_split),
		cmocka_unit_test(test_kube_in_cluster),
		cmocka_unit_test_setup_teardown(test_follows_events, wf_setup, wf_teardown),
		cmocka_unit_test_setup_teardown(test_paged_list, wf_setup, wf_teardown),
		cmocka_unit_test_setup_teardown(test_bookmark_moves_rv, wf_setup, wf_teardown),
		cmocka_unit_test_setup_teardown(test_token_reread, wf_setup, wf_teardown),
		cmocka_unit_test_setup_teardown(test_wrong_token_backs_off, wf_setup, wf_teardown),
		cmocka_unit_test_setup_teardown(test_stop_is_prompt, wf_setup, wf_teardown),
		cmocka_unit_test_setup_teardown(test_binary_readyz_waits_for_runtimes, wf_setup,
						wf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}

/*
 * test_server_lifecycle.c — the real `trainer-webhook serve` through its
 * life: certificate rotation while clients keep sending, a broken new pair,
 * SIGTERM with requests in flight, SIGHUP reloading the store, a broken pair
 * refused at start, /readyz from the first moment the port answers.
 *
 * Each test starts its own server (kernel-chosen loopback ports, a fresh
 * certificate folder); the per-test teardown always stops it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define R_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

static char tmp[128], certdir[128], rtdir[128];
static sp_server srv;

static void contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("\"%s\" not found in:\n%s", needle, hay ? hay : "(null)");
}

static int group_setup(void **state)
{
	(void)state;
	return curl_global_init(CURL_GLOBAL_DEFAULT) ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	curl_global_cleanup();
	return 0;
}

static int setup(void **state)
{
	(void)state;
	memset(&srv, 0, sizeof(srv));
	return sp_fixture("tw-life", tmp, certdir, rtdir, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	sp_rmtree(tmp);
	tmp[0] = '\0';
	return rc;
}

static void start(const char *const *more)
{
	const char *extra[32] = { "--runtimes", rtdir, "--threads", "2" };
	int n = 4;
	for (int i = 0; more && more[i] && n < 31; i++)
		extra[n++] = more[i];
	extra[n] = NULL;
	if (sp_start(&srv, certdir, tmp, extra)) {
		char *log = sp_log(&srv);
		fail_msg("server did not start (status %d):\n%s", srv.status, log);
	}
}

static char *trainjob_review(const char *uid, const char *runtime)
{
	char *b = malloc(1024);
	assert_non_null(b);
	snprintf(b, 1024,
		 "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{"
		 "\"uid\":\"%s\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\","
		 "\"kind\":\"TrainJob\"},\"resource\":{\"group\":\"trainer.kubeflow.org\",\"version\":"
		 "\"v1alpha1\",\"resource\":\"trainjobs\"},\"name\":\"j\",\"namespace\":\"test\","
		 "\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"alice\"},\"object\":{"
		 "\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		 "\"metadata\":{\"name\":\"j\",\"namespace\":\"test\"},\"spec\":{\"runtimeRef\":{"
		 "\"name\":\"%s\"},\"trainer\":{\"numNodes\":1}}},\"oldObject\":null,\"dryRun\":false}}",
		 uid, runtime);
	return b;
}

/* POST a TrainJob review; returns the curl code, fills r. */
static int send_tj(CURL *h, int flags, sp_resp *r)
{
	char *body = trainjob_review("uid-life", "torch-distributed");
	int rc = sp_https(h, &srv, "POST", R_TJ, "application/json", body, strlen(body), flags, r);
	free(body);
	return rc;
}

/* An answer that is a proper allow for the TrainJob review. */
static bool good_answer(const sp_resp *r)
{
	if (r->status != 200)
		return false;
	cJSON *j = cJSON_Parse(r->body);
	bool ok = j && tp_get_true(j, "response.allowed") &&
		  !strcmp(tp_get_str(j, "response.uid") ? tp_get_str(j, "response.uid") : "",
			  "uid-life");
	cJSON_Delete(j);
	return ok;
}

static void serial_now(int flags, char *out, size_t n)
{
	sp_resp r;
	int rc = send_tj(NULL, flags | SP_CERTINFO | SP_FRESH, &r);
	if (rc)
		fail_msg("request failed: curl %d %s", rc, r.curl_error);
	assert_true(good_answer(&r));
	assert_true(strlen(r.serial) > 0);
	snprintf(out, n, "%s", r.serial);
	sp_resp_free(&r);
}

/* ------------------------------------------------------------ rotation */

struct rotation_client {
	atomic_bool stop;
	atomic_int sent, failed;
	char old_serial[128];
	atomic_bool saw_new;
	char new_serial[128];
	char first_error[512];
};

static void *rotation_loop(void *arg)
{
	struct rotation_client *c = arg;
	long long limit = tt_mono_ms() + 30000LL * sp_slow();
	while (!atomic_load(&c->stop) && tt_mono_ms() < limit) {
		sp_resp r;
		int rc = send_tj(NULL, SP_NOVERIFY | SP_CERTINFO | SP_FRESH, &r);
		atomic_fetch_add(&c->sent, 1);
		if (rc || !good_answer(&r)) {
			if (atomic_fetch_add(&c->failed, 1) == 0)
				snprintf(c->first_error, sizeof(c->first_error),
					 "curl %d %s; HTTP %ld %.100s", rc, r.curl_error, r.status,
					 r.body ? r.body : "");
		} else if (strcmp(r.serial, c->old_serial) && !atomic_load(&c->saw_new)) {
			snprintf(c->new_serial, sizeof(c->new_serial), "%s", r.serial);
			atomic_store(&c->saw_new, true);
		}
		sp_resp_free(&r);
	}
	return NULL;
}

/* The inotify path, not the 10 s poll: the new serial must show well before
 * the poll could have fired. */
static int rotation_budget_ms(void)
{
	return sp_slow() > 1 ? 8000 : 4000;
}

static void rotation_while_clients_send(void **state)
{
	(void)state;
	start(NULL);
	struct rotation_client c = { 0 };
	serial_now(0, c.old_serial, sizeof(c.old_serial));
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, rotation_loop, &c), 0);
	/* Let the clients get going on the old pair. */
	long long t0 = tt_mono_ms();
	while (atomic_load(&c.sent) < 4 && tt_mono_ms() - t0 < 5000 * sp_slow())
		tt_sleep_ms(5);
	int rc = sp_certs(certdir, true);
	long long swapped = tt_mono_ms();
	while (!atomic_load(&c.saw_new) && tt_mono_ms() - swapped < rotation_budget_ms())
		tt_sleep_ms(10);
	long long took = tt_mono_ms() - swapped;
	/* a few more requests on the new pair */
	int after = atomic_load(&c.sent);
	t0 = tt_mono_ms();
	while (atomic_load(&c.sent) < after + 4 && tt_mono_ms() - t0 < 5000 * sp_slow())
		tt_sleep_ms(5);
	atomic_store(&c.stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(rc, 0);
	if (atomic_load(&c.failed))
		fail_msg("%d of %d requests failed during rotation; first: %s",
			 atomic_load(&c.failed), atomic_load(&c.sent), c.first_error);
	if (!atomic_load(&c.saw_new))
		fail_msg("no handshake saw a new serial within %d ms (old %s)",
			 rotation_budget_ms(), c.old_serial);
	print_message("new serial seen %lld ms after the swap; %d requests\n", took,
		      atomic_load(&c.sent));
	assert_true(sp_log_wait(&srv, "serving certificate reloaded", 1000));
	char *log = sp_log(&srv);
	contains(log, c.new_serial); /* the log names the serial now served */
	free(log);
	/* a fresh client that trusts the new CA verifies it */
	char s2[128];
	serial_now(0, s2, sizeof(s2));
	assert_string_equal(s2, c.new_serial);
}

static void broken_new_pair_keeps_last_good(void **state)
{
	(void)state;
	start(NULL);
	char before[128], after[128];
	serial_now(0, before, sizeof(before));
	char path[200];
	snprintf(path, sizeof(path), "%s/tls.crt", certdir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs("-----BEGIN CERTIFICATE-----\nthis is not base64 at all!!\n"
	      "-----END CERTIFICATE-----\n", f);
	fclose(f);
	if (!sp_log_wait(&srv, "new serving certificate pair is broken; keeping the last good pair",
			 rotation_budget_ms())) {
		char *log = sp_log(&srv);
		fail_msg("no broken-pair message:\n%s", log);
	}
	/* still served, verified against the original CA, same certificate */
	for (int i = 0; i < 3; i++) {
		serial_now(0, after, sizeof(after));
		assert_string_equal(after, before);
	}
	char *log = sp_log(&srv);
	contains(log, "tls.crt");
	free(log);
	sp_resp r;
	assert_int_equal(sp_http_get(srv.metrics_port, "/metrics", &r), 0);
	assert_true(sp_metric(r.body, "trainer_webhook_certificate_reloads_total{result=\"failure\"}") >=
		    1);
	sp_resp_free(&r);
	assert_int_equal(sp_certs(certdir, true), 0);
	/* a good pair again is picked up */
	assert_true(sp_log_wait(&srv, "serving certificate reloaded", rotation_budget_ms()));
}

/* ------------------------------------------------------------ SIGTERM */

struct ka_client {
	atomic_bool stop;
	atomic_int answered, lost, refused;
	char lost_error[512];
};

/* A keep-alive client sending in a loop until it cannot connect any more. */
static void *ka_loop(void *arg)
{
	struct ka_client *c = arg;
	CURL *h = curl_easy_init();
	long long limit = tt_mono_ms() + 30000LL * sp_slow();
	while (h && !atomic_load(&c->stop) && tt_mono_ms() < limit) {
		sp_resp r;
		int rc = send_tj(h, 0, &r);
		if (rc == CURLE_COULDNT_CONNECT) {
			atomic_fetch_add(&c->refused, 1); /* never sent: the port is closed */
			sp_resp_free(&r);
			break;
		}
		if (rc || !good_answer(&r)) {
			if (atomic_fetch_add(&c->lost, 1) == 0)
				snprintf(c->lost_error, sizeof(c->lost_error),
					 "curl %d %s; HTTP %ld", rc, r.curl_error, r.status);
		} else {
			atomic_fetch_add(&c->answered, 1);
		}
		sp_resp_free(&r);
	}
	curl_easy_cleanup(h);
	return NULL;
}

/* A client whose body arrives in two halves, the second after SIGTERM. */
struct slow_client {
	const char *body;
	size_t len, off;
	atomic_bool half_sent, release;
	sp_resp r;
	int rc;
};

static size_t slow_read(char *buf, size_t sz, size_t n, void *ud)
{
	struct slow_client *c = ud;
	size_t half = c->len / 2;
	if (c->off == half) {
		atomic_store(&c->half_sent, true);
		long long limit = tt_mono_ms() + 20000LL * sp_slow();
		while (!atomic_load(&c->release) && tt_mono_ms() < limit)
			tt_sleep_ms(5);
	}
	size_t end = c->off < half ? half : c->len;
	size_t k = end - c->off;
	if (k > sz * n)
		k = sz * n;
	memcpy(buf, c->body + c->off, k);
	c->off += k;
	return k;
}

static void *slow_main(void *arg)
{
	struct slow_client *c = arg;
	CURL *h = curl_easy_init();
	char url[128], resolve[64];
	snprintf(url, sizeof(url), "https://localhost:%u" R_TJ, srv.port);
	snprintf(resolve, sizeof(resolve), "localhost:%u:127.0.0.1", srv.port);
	struct curl_slist *res = curl_slist_append(NULL, resolve);
	struct curl_slist *hs = curl_slist_append(NULL, "Content-Type: application/json");
	hs = curl_slist_append(hs, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_RESOLVE, res);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
	curl_easy_setopt(h, CURLOPT_CAINFO, srv.ca);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->len);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, slow_read);
	curl_easy_setopt(h, CURLOPT_READDATA, c);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sp_curl_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &c->r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, sp_curl_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &c->r);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L * sp_slow());
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->r.curl_error);
	c->rc = (int)curl_easy_perform(h);
	if (!c->rc)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->r.status);
	curl_easy_cleanup(h);
	curl_slist_free_all(hs);
	curl_slist_free_all(res);
	atomic_store(&c->half_sent, true); /* in case it failed before */
	return NULL;
}

static double in_flight(void)
{
	sp_resp r;
	if (sp_http_get(srv.metrics_port, "/metrics", &r))
		return -1;
	double v = sp_metric(r.body, "trainer_webhook_requests_in_flight");
	sp_resp_free(&r);
	return v;
}

static void sigterm_answers_requests_in_flight(void **state)
{
	(void)state;
	const char *more[] = { "--shutdown-grace", "5", NULL };
	start(more);
	struct slow_client slow = { 0 };
	char *body = trainjob_review("uid-life", "torch-distributed");
	slow.body = body;
	slow.len = strlen(body);
	pthread_t st, ka[3];
	struct ka_client kc = { 0 };
	assert_int_equal(pthread_create(&st, NULL, slow_main, &slow), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&ka[i], NULL, ka_loop, &kc), 0);
	/* The slow request is in flight (its headers are in) and the
	 * keep-alive clients have answers. */
	long long t0 = tt_mono_ms();
	while ((!atomic_load(&slow.half_sent) || atomic_load(&kc.answered) < 6 || in_flight() < 1) &&
	       tt_mono_ms() - t0 < 10000 * sp_slow())
		tt_sleep_ms(5);
	bool ready = atomic_load(&slow.half_sent) && atomic_load(&kc.answered) >= 6;
	assert_int_equal(sp_signal(&srv, SIGTERM), 0);
	bool draining = sp_log_wait(&srv, "signal SIGTERM: draining", 5000 * sp_slow());
	long long term = tt_mono_ms();
	atomic_store(&slow.release, true);
	int status = sp_wait(&srv, 9000 * sp_slow());
	long long took = tt_mono_ms() - term;
	atomic_store(&kc.stop, true);
	pthread_join(st, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(ka[i], NULL);
	free(body);
	assert_true(ready);
	assert_true(draining);
	if (slow.rc || slow.r.status != 200)
		fail_msg("the slow request lost: curl %d %s HTTP %ld", slow.rc, slow.r.curl_error,
			 slow.r.status);
	assert_true(good_answer(&slow.r));
	assert_string_equal(slow.r.connection, "close"); /* answered while draining */
	sp_resp_free(&slow.r);
	if (atomic_load(&kc.lost))
		fail_msg("%d keep-alive requests sent but not answered; first: %s",
			 atomic_load(&kc.lost), kc.lost_error);
	assert_int_equal(status, 0);
	assert_true(took < 8000 * sp_slow());
	char *log = sp_log(&srv);
	contains(log, "requests in flight finished; closing connections");
	free(log);
	print_message("%d keep-alive answers, exit after %lld ms\n", atomic_load(&kc.answered),
		      took);
}

/* ------------------------------------------------------------ SIGHUP */

static const char *extra_runtime =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: ClusterTrainingRuntime\n"
	"metadata:\n  name: late-torch\n  labels:\n    trainer.kubeflow.org/framework: torch\n"
	"spec:\n  mlPolicy:\n    numNodes: 1\n    torch: {}\n"
	"  template:\n    spec:\n      replicatedJobs:\n        - name: node\n"
	"          template:\n            metadata:\n              labels:\n"
	"                trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"
	"            spec:\n              template:\n                spec:\n"
	"                  containers:\n                    - name: node\n"
	"                      image: pytorch\n";

static cJSON *post_late(void)
{
	char *body = trainjob_review("uid-late", "late-torch");
	sp_resp r;
	int rc = sp_https(NULL, &srv, "POST", R_TJ, "application/json", body, strlen(body), 0, &r);
	free(body);
	if (rc || r.status != 200)
		fail_msg("curl %d HTTP %ld %s", rc, r.status, r.body);
	cJSON *j = tt_json(r.body);
	sp_resp_free(&r);
	return j;
}

static double store_reloads(const char *result)
{
	char series[128];
	snprintf(series, sizeof(series), "trainer_webhook_store_reloads_total{result=\"%s\"}",
		 result);
	sp_resp r;
	assert_int_equal(sp_http_get(srv.metrics_port, "/metrics", &r), 0);
	assert_int_equal(r.status, 200);
	double v = sp_metric(r.body, series);
	sp_resp_free(&r);
	return v;
}

static void sighup_reloads_the_store(void **state)
{
	(void)state;
	start(NULL);
	/* the start-up load is counted */
	assert_true(store_reloads("success") == 1);
	assert_true(store_reloads("failure") == 0);
	cJSON *j = post_late();
	assert_false(tp_get_true(j, "response.allowed"));
	contains(tp_get_str(j, "response.status.message"), "late-torch");
	cJSON_Delete(j);

	assert_int_equal(sp_write(rtdir, "late-torch.yaml", extra_runtime), 0);
	assert_int_equal(sp_signal(&srv, SIGHUP), 0);
	assert_true(sp_log_wait(&srv, "SIGHUP: runtime store reloaded", 5000 * sp_slow()));
	j = post_late();
	if (!tp_get_true(j, "response.allowed"))
		fail_msg("still denied after SIGHUP: %s", tp_get_str(j, "response.status.message"));
	cJSON_Delete(j);

	/* A broken file: the reload fails, the previous store stays. */
	assert_int_equal(sp_write(rtdir, "zz-broken.yaml", "kind: [unclosed\n  - : :\n"), 0);
	assert_int_equal(sp_signal(&srv, SIGHUP), 0);
	assert_true(sp_log_wait(&srv, "SIGHUP: store reload failed; the previous store stays in use",
				5000 * sp_slow()));
	j = post_late();
	assert_true(tp_get_true(j, "response.allowed"));
	cJSON_Delete(j);
	assert_true(store_reloads("success") == 2);
	assert_true(store_reloads("failure") == 1);
}

/* ------------------------------------------------------------ start-up */

static void broken_pair_refused_at_start(void **state)
{
	(void)state;
	char other[160], mixed[160], cmd[1024];
	snprintf(other, sizeof(other), "%s/other", tmp);
	snprintf(mixed, sizeof(mixed), "%s/mixed", tmp);
	assert_int_equal(mkdir(other, 0700), 0);
	assert_int_equal(mkdir(mixed, 0700), 0);
	assert_int_equal(sp_certs(other, false), 0);
	snprintf(cmd, sizeof(cmd), "cp '%s/tls.crt' '%s/ca.crt' '%s/' && cp '%s/tls.key' '%s/'",
		 certdir, certdir, mixed, other, mixed);
	assert_int_equal(system(cmd), 0);
	const char *extra[] = { "--runtimes", rtdir, NULL };
	assert_int_equal(sp_start(&srv, mixed, tmp, extra), -1);
	assert_int_equal(srv.status, 2);
	char *log = sp_log(&srv);
	contains(log, "refusing the serving pair");
	contains(log, "key");
	assert_null(strstr(log, "serving https on"));
	free(log);
}

static void readyz_from_the_first_answer(void **state)
{
	(void)state;
	int port = sp_free_port();
	assert_true(port > 0);
	char listen[64];
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	const char *extra[] = { "--runtimes", rtdir, "--listen", listen, NULL };
	assert_int_equal(sp_spawn(&srv, certdir, tmp, extra), 0);
	srv.port = (unsigned short)port;
	/* From the moment the port takes connections, /readyz says 200: the
	 * store and the certificates are loaded before it opens. */
	int refused = 0, answers = 0;
	long long t0 = tt_mono_ms();
	while (answers < 3 && tt_mono_ms() - t0 < 10000 * sp_slow()) {
		sp_resp r;
		int rc = sp_https(NULL, &srv, "GET", "/readyz", NULL, NULL, 0, SP_FRESH, &r);
		if (rc == CURLE_COULDNT_CONNECT) {
			refused++;
		} else {
			if (rc)
				fail_msg("/readyz: curl %d %s", rc, r.curl_error);
			if (r.status != 200)
				fail_msg("/readyz answered %ld before ready: %s", r.status, r.body);
			answers++;
		}
		sp_resp_free(&r);
		if (rc == CURLE_COULDNT_CONNECT)
			tt_sleep_ms(2);
	}
	assert_int_equal(answers, 3);
	assert_int_equal(sp_wait_serving(&srv), 0);
	assert_int_equal(srv.port, port);
	print_message("%d refused connections before the first answer\n", refused);
}

/* serve under valgrind's memcheck, started, asked (the access log's first
 * batched line starts the log flusher thread), stopped: every thread it
 * started is joined and nothing is lost, not even "possibly" (the flusher
 * was detached and left 336 bytes of its thread block). */
static void nothing_lost_at_exit(void **state)
{
	(void)state;
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", NULL };
	int rc = sp_memcheck_start(&srv, certdir, tmp, extra);
	if (rc == 1) {
		print_message("valgrind absent or a sanitizer build: skipped\n");
		skip();
	}
	assert_int_equal(rc, 0);
	char *body = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	assert_non_null(body);
	sp_resp r;
	assert_int_equal(sp_https(NULL, &srv, "POST", R_TJ, "application/json", body,
				  strlen(body), 0, &r), 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	free(body);
	assert_true(sp_log_wait(&srv, "\"route\":\"" R_TJ "\"", 5000)); /* flushed by the thread */
	assert_int_equal(sp_memcheck_stop(&srv), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(rotation_while_clients_send, setup, teardown),
		cmocka_unit_test_setup_teardown(broken_new_pair_keeps_last_good, setup, teardown),
		cmocka_unit_test_setup_teardown(sigterm_answers_requests_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(sighup_reloads_the_store, setup, teardown),
		cmocka_unit_test_setup_teardown(broken_pair_refused_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(readyz_from_the_first_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(nothing_lost_at_exit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

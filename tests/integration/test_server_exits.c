/*
 * test_server_exits.c — every way out of a decision, in the real `serve`,
 * with real bodies: the answer is sent, the log line names the request it
 * was for, and the server lives on. Each exit frees the decision's arena;
 * what the answer's log line and metrics read afterwards (the uid, kind,
 * names, the first finding) must have been copied out before (issue 28:
 * on a 504, 413 or 503 the log line read them from the freed arena, and
 * the server died of SIGSEGV).
 *
 * The exits: 504 (?timeout= passed while deciding: the decision is
 * stopped), 413 (the decision needs more than one request may use), 503
 * (it needs more while other requests hold the budget); and the same
 * served under valgrind's memcheck (not in sanitizer builds). The try
 * thrown away on the connection thread when a lookup needs the API server
 * is test_server_deciders.c's lookup_miss_is_decided_by_the_api_server.
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
#include "tests/support/tls_client.h"

#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define M_TJ "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
#define CUT "passed while it was being decided"

static char tmp[128], certdir[128], rtdir[128];
static sp_server srv;

static int setup(void **state)
{
	(void)state;
	memset(&srv, 0, sizeof(srv));
	return sp_fixture("tw-exits", tmp, certdir, rtdir, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv); /* exit 0 on SIGTERM, no sanitizer report */
	sp_rmtree(tmp);
	return rc ? -1 : 0;
}

static void start(const char *budget)
{
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--memory-budget", budget,
				NULL };
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
}

/* The head of a TrainJob review with uid, up to the trainer's members. */
static void review_head(tp_buf *b, const char *uid)
{
	tp_buf_addf(b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		       "\"request\":{\"uid\":\"%s\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
		       "\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\","
		       "\"namespace\":\"team-a\",\"name\":\"exits\",\"object\":{\"apiVersion\":"
		       "\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{"
		       "\"name\":\"exits\",\"namespace\":\"team-a\"",
		    uid);
}

/* A TrainJob with n labels: no list limit, so every one is looked at
 * (some 0.3 s of CPU for 100,000). */
static char *labels_review(const char *uid, size_t n, size_t *len)
{
	tp_buf b = TP_BUF_INIT(0);
	review_head(&b, uid);
	tp_buf_adds(&b, ",\"labels\":{");
	for (size_t i = 0; i < n; i++)
		tp_buf_addf(&b, "%s\"label-%zu\":\"v\"", i ? "," : "", i);
	tp_buf_adds(&b, "}},\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"}}}}}");
	*len = b.len;
	return b.data;
}

static void post(const char *path, const char *body, size_t len, sp_resp *r)
{
	assert_int_equal(sp_https(NULL, &srv, "POST", path, "application/json", body, len, 0, r),
			 0);
}

static void still_serving(void)
{
	sp_resp r;
	assert_int_equal(sp_https(NULL, &srv, "GET", "/healthz", NULL, NULL, 0, SP_FRESH, &r), 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
}

/* Within ms, a log line for the request with this uid and code. */
static bool uid_logged(const char *uid, int code, int ms)
{
	char needle[160];
	snprintf(needle, sizeof(needle), "\"code\":%d,\"uid\":\"%s\",\"kind\":\"TrainJob\"", code,
		 uid);
	return sp_log_wait(&srv, needle, ms);
}

/* The log line of the request with this uid says code and error. */
static void logged(const char *uid, int code, const char *error_part)
{
	if (!uid_logged(uid, code, 5000 * sp_slow())) {
		char *log = sp_log(&srv);
		fail_msg("no log line for %s with code %d in:\n%s", uid, code, log);
	}
	assert_true(sp_log_count(&srv, error_part) >= 1);
}

/* What one try of cut_decision_is_504_and_logged saw. */
enum cut_try { TOO_EARLY, IN_DECISION, TOO_LATE };

static enum cut_try try_cut(const char *prefix, int attempt, size_t n, int ms)
{
	char uid[48], path[160];
	size_t len;
	snprintf(uid, sizeof(uid), "%s-%d-%d", prefix, attempt, ms); /* never one uid twice */
	snprintf(path, sizeof(path), M_TJ "?timeout=%dms", ms);
	char *body = labels_review(uid, n, &len);
	sp_resp r;
	/* a ?timeout= that passes while the body is sent is answered at once
	 * (504), which a client still writing may not read */
	bool sent = !sp_https(NULL, &srv, "POST", path, "application/json", body, len, 0, &r);
	free(body);
	enum cut_try seen = TOO_EARLY;
	if (sent) {
		if (r.status == 504 && strstr(r.body, CUT))
			seen = uid_logged(uid, 504, 2000 * sp_slow()) ? IN_DECISION : TOO_EARLY;
		else if (r.status == 200)
			seen = TOO_LATE;
		else
			assert_int_equal(r.status, 504); /* cut in the parse: no uid yet */
	}
	sp_resp_free(&r); /* sent or not: a failed send may hold a partial answer */
	still_serving();
	return seen;
}

/* A request's ?timeout= passes while its decision runs (the mutating
 * route on n labels, the case): 504, and the log line still names
 * the request. The timeout grows from 4 ms by a quarter until it no longer
 * passes before the decision (a cut inside the parse has no uid yet), then is
 * searched by halves between the last one too early and the first one the
 * decision beat: steps of a quarter alone skipped the window after the parse
 * under valgrind on a loaded machine. */
static void cut_decision_is_504_and_logged(const char *prefix, size_t n)
{
	int early = 0, late = 0; /* the bounds seen; 0: none yet */
	enum cut_try seen = TOO_EARLY;
	for (int ms = 4, tries = 0; seen != IN_DECISION && ms <= 16384 && tries < 64; tries++) {
		seen = try_cut(prefix, tries, n, ms);
		if (seen == TOO_EARLY)
			early = ms;
		else if (seen == TOO_LATE)
			late = ms;
		if (late && late - early <= 1) /* the window moved under load: look again */
			early = early / 2, late = 0;
		ms = late ? early + (late - early) / 2 : ms + ms / 4 + 1;
	}
	assert_int_equal(seen, IN_DECISION);
}

static void timeout_while_deciding(void **state)
{
	(void)state;
	start("1Gi");
	cut_decision_is_504_and_logged("cut", 100000);
}

/* A decision that needs more than the whole budget allows: 413 after it
 * ran out (past the body's parse), naming the limit, and the log line
 * names the request. */
static void too_big_to_decide(void **state)
{
	(void)state;
	start("32Mi"); /* one client's share: 14 MiB */
	size_t len;
	char *body = labels_review("too-big", 60000, &len); /* 1.1 MB: 11 MB budgeted */
	sp_resp r;
	post(M_TJ, body, len, &r);
	assert_int_equal(r.status, 413);
	assert_non_null(strstr(r.body, "needs more memory to decide"));
	sp_resp_free(&r);
	logged("too-big", 413, "needs more memory to decide");
	still_serving();
	free(body);
}

/* Two such decisions at once where the budget holds either, not both with
 * what they need next: one is answered 503 (the other holds the rest),
 * and every log line names its request. */
static void busy_budget_while_deciding(void **state)
{
	(void)state;
	start("64Mi"); /* a client's share of 28 MiB: two of 10 x 1.1 MB fit; one grown by 9 more
			* does not */
	size_t len;
	char *a = labels_review("busy-a", 60000, &len), *b = labels_review("busy-b", 60000, &len);
	char *h = NULL;
	assert_true(asprintf(&h, "POST " M_TJ " HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
				 "application/json\r\nContent-Length: %zu\r\n\r\n", len) > 0);
	tc_conn *ca = tc_connect(&srv), *cb = tc_connect(&srv);
	assert_non_null(ca);
	assert_non_null(cb);
	assert_int_equal(tc_write(ca, h, strlen(h)), 0);
	assert_int_equal(tc_write(cb, h, strlen(h)), 0);
	assert_int_equal(tc_write(ca, a, len - 1), 0);
	assert_int_equal(tc_write(cb, b, len - 1), 0);
	assert_int_equal(tc_write(ca, a + len - 1, 1), 0);
	assert_int_equal(tc_write(cb, b + len - 1, 1), 0);
	tc_answer x, y;
	assert_int_equal(tc_read_answer(ca, 20000 * sp_slow(), 0, &x), 0);
	assert_int_equal(tc_read_answer(cb, 20000 * sp_slow(), 0, &y), 0);
	print_message("answers: %d, %d\n", x.status, y.status);
	assert_true(x.status == 503 || y.status == 503);
	logged(x.status == 503 ? "busy-a" : "busy-b", 503, "needs more to decide");
	tc_answer_free(&x);
	tc_answer_free(&y);
	tc_close(ca);
	tc_close(cb);
	still_serving();
	free(h);
	free(a);
	free(b);
}

/* The same exits served under valgrind's memcheck: no invalid read or
 * write, nothing lost, exit 0 on SIGTERM. */
static void exits_under_valgrind(void **state)
{
	(void)state;
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--memory-budget", "16Mi",
				NULL };
	int rc = sp_memcheck_start(&srv, certdir, tmp, extra);
	if (rc == 1) {
		print_message("valgrind absent or a sanitizer build: skipped\n");
		skip();
	}
	assert_int_equal(rc, 0);
	cut_decision_is_504_and_logged("vg-cut", 5000);
	/* 413: 660 KB budgeted 6.6 MB at first, needing more than a client's 7 MiB */
	size_t len;
	char *body = labels_review("vg-big", 35000, &len);
	sp_resp r;
	post(M_TJ, body, len, &r);
	assert_int_equal(r.status, 413);
	sp_resp_free(&r);
	free(body);
	logged("vg-big", 413, "needs more memory to decide");
	assert_int_equal(sp_memcheck_stop(&srv), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(timeout_while_deciding, setup, teardown),
		cmocka_unit_test_setup_teardown(too_big_to_decide, setup, teardown),
		cmocka_unit_test_setup_teardown(busy_budget_while_deciding, setup, teardown),
		cmocka_unit_test_setup_teardown(exits_under_valgrind, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

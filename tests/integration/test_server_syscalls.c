/*
 * test_server_syscalls.c — what the server costs in system calls per
 * keep-alive request, and that saving them delays no answer.
 *
 * libmicrohttpd 0.9.75 tracks whether it corked a socket (mhd_send.c,
 * sk_corked and sk_nodelay) and, on Linux, pushes each answer of a corked
 * TLS socket by setting TCP_NODELAY: one setsockopt per answer while it
 * believes the socket corked. GnuTLS reads a record's header and its body
 * with a recv each. strace, attached to the running server, counts both
 * over many answers on one connection.
 *
 * The rest times answers on every path an answer takes: one after another
 * on a kept-alive connection, pipelined in one write or in records read
 * together, with Connection: close or the client's close_notify right
 * behind, small and past the size the server gathers into one TLS record,
 * and the early 413. An answer held back by the kernel (Nagle's algorithm
 * waiting for the peer's delayed ACK: 40 ms on Linux; a socket left in
 * TCP_CORK: 200 ms) takes far longer than the bound here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "tests/support/tls_client.h"

extern char **environ;

#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define POST_HEAD "POST " V_TJ " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
/* An answer on loopback takes well under a millisecond of network; what
 * the kernel would hold one back for is 40 ms or more. */
#define BOUND_MS 30
#define ROUNDS 15

static char tmp[128], certdir[128], rtdir[128];
static sp_server srv;

static int group_setup(void **state)
{
	(void)state;
	if (sp_fixture("tw-syscalls", tmp, certdir, rtdir, sizeof(tmp)))
		return -1;
	const char *extra[] = { "--runtimes", rtdir, "--threads", "1", "--max-body", "65536", NULL };
	return sp_start(&srv, certdir, tmp, extra);
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	sp_rmtree(tmp);
	return rc ? -1 : 0;
}

/* The sample review's POST, padded to at least min bytes, with extra
 * header lines (tls_client.h). */
static char *review_post(size_t min, const char *extra)
{
	char *req = tc_review_post(min, extra);
	assert_non_null(req);
	return req;
}

/* The next answer on c, read whole: its status must be status; how long it
 * took from since (monotonic ms). */
static long long answer_after(tc_conn *c, long long since, int status, bool closed)
{
	tc_answer a;
	assert_int_equal(tc_read_answer(c, 5000 * sp_slow(), closed ? 2000 * sp_slow() : 0, &a), 0);
	long long took = tt_mono_ms() - since;
	if (a.status != status)
		fail_msg("%d, not %d:\n%.300s", a.status, status, a.raw);
	assert_int_equal(a.closed, closed);
	tc_answer_free(&a);
	return took;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* The median of n times: one slow answer on a busy machine is noise; the
 * kernel holding answers back holds every one of them. */
static long long median(long long *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_ll);
	return t[n / 2];
}

/* The median time to an answer, m ms, is within bound. */
static void not_held_within(const char *what, long long m, long long bound)
{
	print_message("%s: median %lld ms to the answer\n", what, m);
	assert_in_range(m, 0, bound);
}

static void not_held(const char *what, long long m)
{
	not_held_within(what, m, BOUND_MS);
}

/* ROUNDS requests one after another on one connection, each sent when the
 * answer before it has come: the median time to an answer. */
static long long keepalive_median(const char *req)
{
	long long t[ROUNDS];
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	for (int i = 0; i < ROUNDS; i++) {
		long long t0 = tt_mono_ms();
		assert_int_equal(tc_write(c, req, strlen(req)), 0);
		t[i] = answer_after(c, t0, 200, false);
	}
	tc_close(c);
	return median(t, ROUNDS);
}

/* ------------------------------------------------------- setsockopt */

/* Is every thread of the server traced by tracer (/proc's TracerPid)? */
static bool all_traced(pid_t tracer)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)srv.pid);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool all = true;
	for (struct dirent *e; all && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[400];
		snprintf(path, sizeof(path), "%s/%s/status", dir, e->d_name);
		char *text = tt_read_file(path, NULL);
		const char *t = text ? strstr(text, "TracerPid:") : NULL;
		all = t && atoi(t + strlen("TracerPid:")) == (int)tracer;
		free(text);
	}
	closedir(d);
	return all;
}

/* strace -f attached to every thread of the server, writing the calls of
 * trace (strace's -e trace= list) to path; its pid, or 0 when strace cannot
 * run here (not installed, or ptrace not permitted). */
static pid_t strace_attach(const char *path, const char *trace)
{
	char pid[16], expr[64];
	snprintf(pid, sizeof(pid), "%d", (int)srv.pid);
	snprintf(expr, sizeof(expr), "trace=%s", trace);
	char *argv[] = { "strace", "-f", "-qq", "-o", (char *)path, "-e", expr, "-p", pid, NULL };
	pid_t p;
	if (posix_spawnp(&p, "strace", NULL, NULL, argv, environ))
		return 0;
	long long until = tt_mono_ms() + 5000 * sp_slow();
	while (tt_mono_ms() < until) {
		if (all_traced(p))
			return p;
		int st;
		if (waitpid(p, &st, WNOHANG) == p)
			return 0;
		usleep(20000);
	}
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	return 0;
}

/* Detach strace p (0: already detached) and count the lines of its file
 * that contain needle. */
static int strace_count(pid_t p, const char *path, const char *needle)
{
	if (p) {
		kill(p, SIGINT);
		waitpid(p, NULL, 0);
	}
	char *text = tt_read_file(path, NULL);
	assert_non_null(text);
	int n = 0;
	for (const char *s = text; (s = strstr(s, needle)); s++)
		n++;
	free(text);
	return n;
}

/* 40 answers on one connection, each request sent when the answer before
 * it has come. libmicrohttpd 0.9.75 set TCP_NODELAY to push every answer
 * (40 calls); now the socket is never corked, and it sets TCP_NODELAY
 * once, at the connection's first answer. GnuTLS read each request's
 * record in two recv (header, then body: 80); read ahead, one (40). */
static void syscalls_per_answer(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof(path), "%s/strace.txt", tmp);
	pid_t st = strace_attach(path, "setsockopt,recvfrom");
	if (!st)
		skip();
	char *req = review_post(0, "");
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(tc_write(c, req, strlen(req)), 0);
		answer_after(c, tt_mono_ms(), 200, false);
	}
	tc_close(c);
	free(req);
	int opts = strace_count(st, path, "setsockopt(");
	int reads = strace_count(0, path, "recvfrom(");
	print_message("40 answers on one connection: %d setsockopt, %d recvfrom (with the "
		      "handshake's and the close's)\n",
		      opts, reads);
	assert_in_range(opts, 0, 2);
	assert_in_range(reads, 40, 40 + 10);
}

/* ------------------------------------------------------------ timing */

static void keepalive_answers_not_held(void **state)
{
	(void)state;
	char *req = review_post(0, "");
	not_held("keep-alive", keepalive_median(req));
	free(req);
}

/* A body of 40 KiB: decided on a decider while its connection waits
 * suspended, then answered from the resumed connection. */
static void resumed_answers_not_held(void **state)
{
	(void)state;
	char *req = review_post(40 * 1024, "");
	not_held("resumed", keepalive_median(req));
	free(req);
}

/* An answer of more than TW_TLS_CORK_MAX bytes goes out as libmicrohttpd
 * writes it (tls.h): /expand of the sample TrainJob with 100 variables of
 * 100 characters in its trainer's env (at most 128), each copied into the JobSet it answers. */
static char *big_expand_post(void)
{
	tp_buf env = TP_BUF_INIT(0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(tp_buf_addf(&env, "%s{\"name\":\"VAR_%d\",\"value\":\"%0100d\"}",
					     i ? "," : "", i, i),
				 0);
	char *review = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	assert_non_null(review);
	cJSON *j = tt_json(review);
	free(review);
	cJSON *tj = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "request"), "object");
	cJSON *trainer = cJSON_GetObjectItem(cJSON_GetObjectItem(tj, "spec"), "trainer");
	assert_non_null(trainer);
	char *envtext = NULL;
	assert_true(asprintf(&envtext, "[%s]", env.data) > 0);
	cJSON_DeleteItemFromObject(trainer, "env");
	cJSON_AddItemToObject(trainer, "env", cJSON_Parse(envtext));
	char *body = cJSON_PrintUnformatted(tj);
	char *req = NULL;
	assert_true(asprintf(&req,
			     "POST /expand HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
			     "application/json\r\nContent-Length: %zu\r\n\r\n%s",
			     strlen(body), body) > 0);
	free(body);
	free(envtext);
	cJSON_Delete(j);
	tp_buf_free(&env);
	return req;
}

static void big_answers_not_held(void **state)
{
	(void)state;
	char *req = big_expand_post();
	/* the answer must be one that is not gathered into one record */
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	assert_int_equal(tc_write(c, req, strlen(req)), 0);
	tc_answer a;
	assert_int_equal(tc_read_answer(c, 5000 * sp_slow(), 0, &a), 0);
	print_message("big answer: %d, %zu bytes\n", a.status, a.len);
	assert_int_equal(a.status, 200);
	assert_true(a.len > 8192 + 200);
	tc_answer_free(&a);
	tc_close(c);
	not_held("big answers", keepalive_median(req));
	free(req);
}

/* Three requests in one write: three answers, in order, none held. */
static void pipelined_answers_not_held(void **state)
{
	(void)state;
	char *one = review_post(0, "");
	tp_buf w = TP_BUF_INIT(0);
	long long t[ROUNDS];
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tp_buf_adds(&w, one), 0);
	for (int i = 0; i < ROUNDS; i++) {
		long long t0 = tt_mono_ms();
		assert_int_equal(tc_write(c, w.data, w.len), 0);
		for (int k = 0; k < 3; k++)
			t[i] = answer_after(c, t0, 200, false);
	}
	tc_close(c);
	not_held("pipelined", median(t, ROUNDS));
	tp_buf_free(&w);
	free(one);
}

/* Ten requests in ten TLS records, written one after another before any
 * answer is read: the server reads several records at once (tls_ahead.c),
 * more than libmicrohttpd's buffer takes in one read; each is answered,
 * none waits for bytes the socket no longer has. */
static void pipelined_records_not_held(void **state)
{
	(void)state;
	char *one = review_post(0, "");
	long long t[ROUNDS];
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	for (int i = 0; i < ROUNDS; i++) {
		long long t0 = tt_mono_ms();
		for (int k = 0; k < 10; k++)
			assert_int_equal(tc_write(c, one, strlen(one)), 0);
		for (int k = 0; k < 10; k++)
			t[i] = answer_after(c, t0, 200, false);
	}
	tc_close(c);
	/* ten decisions (under ASan some 2 ms each); a record held would wait
	 * for the 5 s bound */
	not_held_within("ten pipelined records", median(t, ROUNDS), BOUND_MS * sp_slow());
	free(one);
}

/* ROUNDS requests (extra header lines: tls_client.h), each on a new
 * connection, each answered and the connection then closed by the server;
 * with notify the client's close_notify follows its request at once. The
 * median time to the answer and the close. */
static long long closing_median(const char *extra, bool notify)
{
	char *req = review_post(0, extra);
	long long t[ROUNDS];
	for (int i = 0; i < ROUNDS; i++) {
		tc_conn *c = tc_connect(&srv);
		assert_non_null(c);
		long long t0 = tt_mono_ms();
		assert_int_equal(tc_write(c, req, strlen(req)), 0);
		if (notify)
			tc_shutdown_write(c, false);
		t[i] = answer_after(c, t0, 200, true);
		tc_close(c);
	}
	free(req);
	return median(t, ROUNDS);
}

/* A request, then at once the client's close_notify (it sends nothing
 * more): the server reads both in one go; the request is answered, then
 * the connection closes. */
static void close_notify_behind_request(void **state)
{
	(void)state;
	not_held("close_notify behind a request", closing_median("", true));
}

static void closing_answers_not_held(void **state)
{
	(void)state;
	not_held("Connection: close", closing_median("Connection: close\r\n", false));
}

/* The 413 of a body past --max-body, answered from the head, on a
 * connection already kept alive by one answer. */
static void early_answers_not_held(void **state)
{
	(void)state;
	char *req = review_post(0, "");
	const char *big = POST_HEAD "Content-Length: 70000\r\n\r\n";
	long long t[ROUNDS];
	for (int i = 0; i < ROUNDS; i++) {
		tc_conn *c = tc_connect(&srv);
		assert_non_null(c);
		assert_int_equal(tc_write(c, req, strlen(req)), 0);
		answer_after(c, tt_mono_ms(), 200, false);
		long long t0 = tt_mono_ms();
		assert_int_equal(tc_write(c, big, strlen(big)), 0);
		t[i] = answer_after(c, t0, 413, true);
		tc_close(c);
	}
	not_held("413", median(t, ROUNDS));
	free(req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(syscalls_per_answer),
		cmocka_unit_test(keepalive_answers_not_held),
		cmocka_unit_test(resumed_answers_not_held),
		cmocka_unit_test(big_answers_not_held),
		cmocka_unit_test(pipelined_answers_not_held),
		cmocka_unit_test(pipelined_records_not_held),
		cmocka_unit_test(close_notify_behind_request),
		cmocka_unit_test(closing_answers_not_held),
		cmocka_unit_test(early_answers_not_held),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

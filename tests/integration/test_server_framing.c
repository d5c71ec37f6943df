/*
 * test_server_framing.c — requests whose HTTP framing breaks RFC 9112, sent
 * byte for byte over TLS to the real `serve`: each gets one status line, a
 * JSON error naming what is wrong, and the connection closed. Before,
 * libmicrohttpd 0.9.75 parsed them leniently (a smuggled request answered,
 * hangs, two status lines, HTML pages); the last tests document that
 * behaviour of the library on its own, as the reason for the check.
 *
 * Requests pipelined before a malformed one are answered first, in order.
 * An answer given before the body (413, 503, a refusal) reaches a client
 * still writing that body: the server shuts its write side and reads the
 * rest away for a while rather than closing on it (a reset).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "tests/support/tls_client.h"

#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

static char tmp[128], certdir[128], rtdir[128];
static sp_server srv;

static int group_setup(void **state)
{
	(void)state;
	if (sp_fixture("tw-framing", tmp, certdir, rtdir, sizeof(tmp)))
		return -1;
	/* one client may hold 3.5 MiB of the budget: a body of 300,000 bytes with
	 * its decision fits, not beside most of another; bodies held that long
	 * stay within the read timeout */
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--max-body", "1048576",
				"--memory-budget", "8Mi", "--read-timeout", "120", NULL };
	return sp_start(&srv, certdir, tmp, extra);
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	sp_rmtree(tmp);
	return rc ? -1 : 0;
}

/* Send raw (len bytes) on a new connection and read one answer: it must be
 * status with a JSON error containing part, alone on the wire, and the
 * server must close the connection. */
static void refused_n(const char *raw, size_t len, int status, const char *part)
{
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	assert_int_equal(tc_write(c, raw, len), 0);
	tc_answer a;
	if (tc_read_answer(c, 5000 * sp_slow(), 3000 * sp_slow(), &a))
		fail_msg("no answer within 5 s to:\n%.*s", (int)len, raw);
	print_message("%s  %s\n", a.status_line, a.body);
	if (a.status != status)
		fail_msg("%d, not %d, for:\n%.*s\nanswer:\n%s", a.status, status, (int)len, raw, a.raw);
	assert_int_equal(a.status_lines, 1);
	assert_string_equal(a.ctype, "application/json");
	assert_string_equal(a.connection, "close");
	cJSON *j = tt_json(a.body);
	const char *e = tp_get_str(j, "error");
	if (!e || !strstr(e, part))
		fail_msg("no error with \"%s\" in %s", part, a.body);
	cJSON_Delete(j);
	assert_true(a.closed);
	assert_int_equal(a.after, 0);
	tc_answer_free(&a);
	tc_close(c);
}

static void refused(const char *raw, int status, const char *part)
{
	refused_n(raw, strlen(raw), status, part);
}

#define POST_HEAD "POST " V_TJ " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"

/* Content-Length with Transfer-Encoding: before, read by its length and the
 * rest parsed as a second request (a smuggled GET /healthz answered). */
static void length_with_chunked(void **state)
{
	(void)state;
	refused(POST_HEAD "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
		400, "both Content-Length and Transfer-Encoding");
}

static void conflicting_lengths(void **state)
{
	(void)state;
	refused(POST_HEAD "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}", 400,
		"Content-Length headers with different values");
}

/* An unknown coding: before, the server waited for the body's end until
 * the connection timed out. */
static void unknown_coding(void **state)
{
	(void)state;
	refused(POST_HEAD "Transfer-Encoding: gzip, chunked\r\n\r\n", 501,
		"Transfer-Encoding is not implemented");
}

static void identity_with_length(void **state)
{
	(void)state;
	refused(POST_HEAD "Transfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}", 400,
		"both Content-Length and Transfer-Encoding");
}

static void chunked_body(void **state)
{
	(void)state;
	refused(POST_HEAD "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 411,
		"send the body with a Content-Length");
}

/* Before: two 400 status lines on the wire and an HTML page. */
static void malformed_length(void **state)
{
	(void)state;
	refused(POST_HEAD "Content-Length: 5x\r\n\r\n", 400, "Content-Length is not a number");
	refused(POST_HEAD "Content-Length: 99999999999999999999\r\n\r\n", 413,
		"Content-Length is larger");
}

/* A Content-Length over --max-body is refused from the headers: not one
 * byte of the body is sent here, and the 413 comes. */
static void length_over_max_body(void **state)
{
	(void)state;
	/* the limit it enforced, stated (issue 31) */
	refused(POST_HEAD "Content-Length: 1048577\r\n\r\n", 413,
		"larger than --max-body (1048576 bytes)");
}

/* 40 MiB sent by a client that reads while it writes: the 413 arrives
 * (before, the body was cut after 16 MiB with no answer). */
static void forty_mib_body(void **state)
{
	(void)state;
	size_t len = (size_t)40 << 20;
	char *body = malloc(len);
	assert_non_null(body);
	memset(body, ' ', len);
	char head[256];
	snprintf(head, sizeof(head), POST_HEAD "Content-Length: %zu\r\n\r\n", len);
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	assert_int_equal(tc_write(c, head, strlen(head)), 0);
	tc_answer a;
	size_t sent = 0;
	assert_int_equal(tc_send_reading(c, body, len, 10000 * sp_slow(), 3000 * sp_slow(), &sent,
					 &a), 0);
	print_message("%s after %zu bytes of body\n", a.status_line, sent);
	assert_int_equal(a.status, 413);
	assert_true(sent < len);
	assert_true(a.closed);
	tc_answer_free(&a);
	tc_close(c);
	free(body);
}

static void no_host(void **state)
{
	(void)state;
	refused("GET /healthz HTTP/1.1\r\n\r\n", 400, "must have a Host header");
	refused("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "more than one Host");
}

static void bare_lf(void **state)
{
	(void)state;
	refused("GET /healthz HTTP/1.1\nHost: localhost\n\n", 400, "bare LF");
}

static void folded_header(void **state)
{
	(void)state;
	refused("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n b\r\n\r\n", 400,
		"obsolete line folding");
}

static void nul_in_path(void **state)
{
	(void)state;
	static const char raw[] = "GET /healthz\0/../x HTTP/1.1\r\nHost: localhost\r\n\r\n";
	refused_n(raw, sizeof(raw) - 1, 400, "NUL");
}

/* What libmicrohttpd answered with its own HTML pages. */
static void library_errors_are_json(void **state)
{
	(void)state;
	refused("GET /healthz HTTP/2.0\r\nHost: localhost\r\n\r\n", 505, "HTTP/1.1");
	refused("GET /healthz\r\nHost: localhost\r\n\r\n", 400, "no HTTP version");
	char big[9000];
	int n = snprintf(big, sizeof(big), "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX: ");
	memset(big + n, 'a', 8300);
	memcpy(big + n + 8300, "\r\n\r\n", 5);
	refused(big, 431, "headers are larger than 8 KiB");
	memcpy(big, "GET /", 5);
	memset(big + 5, 'a', 8300);
	memcpy(big + 8305, " HTTP/1.1\r\n\r\n", 14);
	refused(big, 414, "request line is longer");
}

/* ---------------------------------------------- pipelined before a refusal */

/* The next answer on c: status, and whether the server closed after it
 * (waiting close_ms for that). Each answer leaves in TLS records of its own,
 * so a read never runs from one into the next. */
static void next_answer(tc_conn *c, int status, bool closed, int close_ms, const char *part)
{
	tc_answer a;
	assert_int_equal(tc_read_answer(c, 5000 * sp_slow(), close_ms, &a), 0);
	print_message("%s  %.60s\n", a.status_line, a.body);
	if (a.status != status)
		fail_msg("%d, not %d:\n%s", a.status, status, a.raw);
	if (part && !strstr(a.body, part))
		fail_msg("no \"%s\" in %s", part, a.body);
	assert_int_equal(a.closed, closed);
	assert_int_equal(a.after, 0); /* nothing between it and the close */
	tc_answer_free(&a);
}

/* reqs (n of them) then a malformed head, in one write: each request is
 * answered in order, then the refusal, then the connection closes. Before,
 * the refusal ended the stream at once: not one answer. */
static void answered_before_refusal(const char *const *reqs, const int *status, int n)
{
	tp_buf w = TP_BUF_INIT(0);
	for (int i = 0; i < n; i++)
		assert_int_equal(tp_buf_adds(&w, reqs[i]), 0);
	assert_int_equal(tp_buf_adds(&w, "GET /healthz HTTP/1.1\nHost: localhost\n\n"), 0);
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	assert_int_equal(tc_write(c, w.data, w.len), 0);
	for (int i = 0; i < n; i++)
		next_answer(c, status[i], false, 0, NULL);
	next_answer(c, 400, true, 3000 * sp_slow(), "bare LF");
	tc_close(c);
	tp_buf_free(&w);
}

/* The sample review's POST, padded to at least min bytes (tls_client.h). */
static char *review_post(size_t min)
{
	char *req = tc_review_post(min, "");
	assert_non_null(req);
	return req;
}

static void pipelined_before_malformed(void **state)
{
	(void)state;
	char *post = review_post(0);
	const char *one[] = { post };
	const int ok[] = { 200, 200, 200 };
	answered_before_refusal(one, ok, 1);
	const char *three[] = { "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", post, post };
	answered_before_refusal(three, ok, 3);
	free(post);
}

/* A body past 32 KiB goes to a decider: its connection waits suspended
 * while the refusal after it is already known. */
static void decided_elsewhere_before_malformed(void **state)
{
	(void)state;
	char *post = review_post(40 * 1024);
	const char *one[] = { post };
	const int ok[] = { 200 };
	answered_before_refusal(one, ok, 1);
	free(post);
}

/* A request answered before its body (415) closes the connection: the
 * malformed one after it is never answered (its answer would follow a
 * Connection: close). */
static void closed_before_malformed(void **state)
{
	(void)state;
	const char *raw = "POST " V_TJ " HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n"
			  "Content-Length: 2\r\n\r\n{}GET /healthz HTTP/1.1\nHost: localhost\n\n";
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	assert_int_equal(tc_write(c, raw, strlen(raw)), 0);
	next_answer(c, 415, true, 3000 * sp_slow(), "Content-Type");
	tc_close(c);
	assert_true(sp_log_wait(&srv, "connection closed unanswered", 2000));
}

/* ------------------------------------------ early answers, body still sent */

#define TRIES 30
#define CHUNK ((size_t)64 * 1024)

/* head, then a body of len bytes, sent TRIES times on new connections by a
 * client that writes the body in chunks of 64 KiB and looks for an answer
 * between chunks and while a write waits: how many times the answer
 * (status, with part in it) reached it before any write of it failed. A
 * write that fails first counts as lost, as with Go's transport, which may
 * report the failed write rather than the answer in its buffer. */
static int answered_while_sending(const char *head, size_t len, int status, const char *part)
{
	char *body = malloc(len);
	assert_non_null(body);
	memset(body, ' ', len);
	int got = 0;
	for (int i = 0; i < TRIES; i++) {
		tc_conn *c = tc_connect(&srv);
		assert_non_null(c);
		assert_int_equal(tc_write(c, head, strlen(head)), 0);
		tc_answer a;
		size_t sent = 0;
		int rc = tc_send_chunks(c, body, len, CHUNK, 10000 * sp_slow(), 3000 * sp_slow(),
					&sent, &a);
		bool ok = rc == 0 && !a.write_failed && a.status == status && a.closed &&
			  strstr(a.body, part);
		if (!ok)
			print_message("try %d: %s after %zu bytes%s\n", i,
				      rc ? "no answer" : a.status_line, sent,
				      a.write_failed ? "; a write failed first" : "");
		got += ok;
		tc_answer_free(&a);
		tc_close(c);
	}
	free(body);
	print_message("%d of %d answered\n", got, TRIES);
	return got;
}

static char *post_head(size_t len)
{
	char *h = NULL;
	assert_true(asprintf(&h, POST_HEAD "Content-Length: %zu\r\n\r\n", len) > 0);
	return h;
}

/* 4 MiB past --max-body (1 MiB): the 413 from the headers. Before, the
 * server closed on the unread body, the kernel reset the connection, and
 * the client's next write failed: 0 to 10 of 30 answered over six runs
 * (the issue: 20 of 29 lost). */
static void past_max_body_while_sending(void **state)
{
	(void)state;
	size_t len = (size_t)4 << 20;
	char *h = post_head(len);
	assert_int_equal(answered_while_sending(h, len, 413, "--max-body"), TRIES);
	free(h);
}

static bool budget_taken(void *arg)
{
	(void)arg;
	return sp_metric_now(&srv, "trainer_webhook_memory_budget_used_bytes") -
		       sp_metric_now(&srv, "trainer_webhook_memory_budget_connections_bytes") >
	       0;
}

/* While most of one body is in (held with its decision: 2.5 of the 3.5 MiB
 * one client may hold of the 8 MiB budget), the same body again: the 503
 * from its headers (before: 2 to 8 of 30). */
static void over_the_budget_while_sending(void **state)
{
	(void)state;
	size_t len = 300000;
	char *h = post_head(len), *part = calloc(1, 250000);
	assert_non_null(part);
	memset(part, ' ', 250000);
	tc_conn *holder = tc_connect(&srv);
	assert_non_null(holder);
	assert_int_equal(tc_write(holder, h, strlen(h)), 0);
	assert_int_equal(tc_write(holder, part, 250000), 0);
	free(part);
	assert_true(tt_wait_until(budget_taken, NULL, 5000 * sp_slow()));
	assert_int_equal(answered_while_sending(h, len, 503, "memory budget"), TRIES);
	tc_close(holder);
	free(h);
}

/* A head the framing check refuses, its body following: the 400 (before:
 * 0 to 4 of 30). */
static void refused_while_sending(void **state)
{
	(void)state;
	const char *h = POST_HEAD "Content-Length: 4194304x\r\n\r\n";
	assert_int_equal(answered_while_sending(h, (size_t)4 << 20, 400, "not a number"), TRIES);
}

/* Each refusal is counted; a well-formed request is still answered. */
static void counted_and_others_served(void **state)
{
	(void)state;
	sp_resp m;
	assert_int_equal(sp_http_get(srv.metrics_port, "/metrics", &m), 0);
	assert_true(sp_metric(m.body, "trainer_webhook_malformed_requests_total{code=\"400\"}") >= 1);
	assert_true(sp_metric(m.body, "trainer_webhook_error_answers_total{reason=\"malformed_http\"}")
		    >= 1);
	sp_resp_free(&m);
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	for (int i = 0; i < 2; i++) { /* kept alive */
		const char *ok = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
		assert_int_equal(tc_write(c, ok, strlen(ok)), 0);
		tc_answer a;
		assert_int_equal(tc_read_answer(c, 5000, 0, &a), 0);
		assert_int_equal(a.status, 200);
		assert_false(a.closed);
		tc_answer_free(&a);
	}
	tc_close(c);
}

/* ------------------------------------------- libmicrohttpd on its own */

/* Every request answered 200 "ok <path>": what libmicrohttpd lets reach
 * an application. */
static enum MHD_Result echo_path(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version, const char *upload,
				 size_t *upload_size, void **req)
{
	(void)cls, (void)method, (void)version, (void)upload;
	if (!*req) {
		*req = c;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	char text[300];
	snprintf(text, sizeof(text), "ok %s", url);
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ok = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ok;
}

/* raw to a plain libmicrohttpd daemon (no check in its path); every byte
 * that came back within wait_ms, or until it closed. malloc'd. */
static char *bare_library(const char *raw, size_t len, int wait_ms)
{
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
						echo_path, NULL, MHD_OPTION_END);
	assert_non_null(d);
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(di->port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(send(fd, raw, len, 0), (ssize_t)len);
	tp_buf got = TP_BUF_INIT(0);
	tp_buf_adds(&got, "");
	long long end = tt_mono_ms() + wait_ms;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = end - tt_mono_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		char buf[4096];
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		tp_buf_add(&got, buf, (size_t)n);
	}
	close(fd);
	MHD_stop_daemon(d);
	return got.data;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* What libmicrohttpd 0.9.75 does with these requests by itself, and no
 * option changes: the reason for webhook/server/http_head.c. When one of
 * these fails, the library has changed: see whether the check can go. */
static void libmicrohttpd_alone(void **state)
{
	(void)state;
	/* a malformed Content-Length: two status lines and an HTML page
	 * without Content-Type */
	const char *bad_cl = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5x\r\n\r\n";
	char *w = bare_library(bad_cl, strlen(bad_cl), 1000);
	print_message("malformed Content-Length:\n%s\n", w);
	assert_int_equal(count(w, "HTTP/1.1 400 Bad Request\r\n"), 2);
	assert_non_null(strstr(w, "<html>"));
	assert_null(strcasestr(w, "Content-Type"));
	free(w);
	/* Content-Length and Transfer-Encoding: what follows is a second
	 * request, answered (smuggled) */
	const char *smuggle = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
			      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
			      "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n";
	w = bare_library(smuggle, strlen(smuggle), 1000);
	assert_non_null(strstr(w, "ok /smuggled"));
	free(w);
	/* a bare LF, a folded header, a NUL that cuts the path: all answered */
	const char *lf = "GET /lf HTTP/1.1\nHost: h\n\n";
	w = bare_library(lf, strlen(lf), 1000);
	assert_non_null(strstr(w, "ok /lf"));
	free(w);
	const char *fold = "GET /fold HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n";
	w = bare_library(fold, strlen(fold), 1000);
	assert_non_null(strstr(w, "ok /fold"));
	free(w);
	static const char nul[] = "GET /healthz\0/x HTTP/1.1\r\nHost: h\r\n\r\n";
	w = bare_library(nul, sizeof(nul) - 1, 1000);
	assert_non_null(strstr(w, "ok /healthz"));
	free(w);
	/* an unknown coding: no answer at all, the body awaited */
	const char *gz = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n"
			 "\r\n";
	w = bare_library(gz, strlen(gz), 1000);
	assert_string_equal(w, "");
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(length_with_chunked),
		cmocka_unit_test(conflicting_lengths),
		cmocka_unit_test(unknown_coding),
		cmocka_unit_test(identity_with_length),
		cmocka_unit_test(chunked_body),
		cmocka_unit_test(malformed_length),
		cmocka_unit_test(length_over_max_body),
		cmocka_unit_test(forty_mib_body),
		cmocka_unit_test(no_host),
		cmocka_unit_test(bare_lf),
		cmocka_unit_test(folded_header),
		cmocka_unit_test(nul_in_path),
		cmocka_unit_test(library_errors_are_json),
		cmocka_unit_test(pipelined_before_malformed),
		cmocka_unit_test(decided_elsewhere_before_malformed),
		cmocka_unit_test(closed_before_malformed),
		cmocka_unit_test(past_max_body_while_sending),
		cmocka_unit_test(over_the_budget_while_sending),
		cmocka_unit_test(refused_while_sending),
		cmocka_unit_test(counted_and_others_served),
		cmocka_unit_test(libmicrohttpd_alone),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

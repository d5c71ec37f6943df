/*
 * test_server_conn_end.c — a request received whole keeps its answer when
 * the connection's stream ends while it is being decided: a malformed
 * request after it, or the peer's half-close (its close_notify, with or
 * without its TCP FIN) while it still reads. The answer is written, then
 * the refusal if any, then the connection closes.
 *
 * Before, libmicrohttpd 0.9.75 read the end of the stream as soon as it
 * resumed the suspended connection, before it sent the decision, and
 * closed it unanswered. The decision is held on a decider here by the fake
 * API server, slow to answer its lookups.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "tests/support/tls_client.h"

#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"

static fa_server *fa;
static char tmp[128], certdir[128], rtdir[128];
static sp_server srv;
static char *post; /* the sample review, as one request */

static int group_setup(void **state)
{
	(void)state;
	char url[64], *review = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	if (!review || fa_start(&fa) || sp_fixture("tw-end", tmp, certdir, rtdir, sizeof(tmp)))
		return -1;
	int n = asprintf(&post, "POST " V_TJ "?timeout=20s HTTP/1.1\r\nHost: localhost\r\n"
				"Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
			 strlen(review), review);
	free(review);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(fa));
	const char *extra[] = { "--kube-server", url, "--threads", "1", "--service", "", NULL };
	if (n < 0 || sp_start(&srv, certdir, tmp, extra) || !tt_wait_until(sp_is_ready, &srv, 10000))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	fa_stop(fa);
	sp_rmtree(tmp);
	free(post);
	return rc ? -1 : 0;
}

static bool deciding(void *arg)
{
	(void)arg;
	return sp_metric_now(&srv, "trainer_webhook_requests_in_flight") >= 1;
}

/* The review sent on a new connection, with more after it in the same
 * write (NULL: nothing), and waiting on the API server (a lookup it answers
 * after 1.5 s) when this returns. */
static tc_conn *review_in_flight(const char *more)
{
	fa_set_delay(fa, 1500 * (unsigned)sp_slow());
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	char *w = NULL;
	assert_true(asprintf(&w, "%s%s", post, more ? more : "") > 0);
	assert_int_equal(tc_write(c, w, strlen(w)), 0);
	free(w);
	assert_true(tt_wait_until(deciding, NULL, 5000 * sp_slow()));
	return c;
}

/* The next answer on c: status, and whether the server closed after it. */
static void next_answer(tc_conn *c, int status, bool closed)
{
	tc_answer a;
	if (tc_read_answer(c, 20000 * sp_slow(), closed ? 5000 * sp_slow() : 0, &a))
		fail_msg("no answer, not %d", status);
	print_message("%s  %.60s\n", a.status_line, a.body);
	assert_int_equal(a.status, status);
	assert_int_equal(a.closed, closed);
	tc_answer_free(&a);
}

static void refusal_while_deciding(void **state)
{
	(void)state;
	tc_conn *c = review_in_flight(NULL);
	const char *bad = "GET /healthz HTTP/1.1\nHost: localhost\n\n";
	assert_int_equal(tc_write(c, bad, strlen(bad)), 0);
	next_answer(c, 200, false);
	next_answer(c, 400, true);
	tc_close(c);
}

/* The review (with more after it in the same write, or NULL), then the
 * peer's close_notify, and its FIN with tcp_too: it is done sending, and
 * reads on. The review is answered, then the connection closes. */
static void half_closed(const char *more, bool tcp_too)
{
	tc_conn *c = review_in_flight(more);
	tc_shutdown_write(c, tcp_too);
	next_answer(c, 200, true);
	tc_close(c);
}

static void half_close_while_deciding(void **state)
{
	(void)state;
	half_closed(NULL, true);
}

/* close_notify alone, the TCP connection open: nothing more comes to read
 * on the socket, yet the server closes after the answer. */
static void close_notify_while_deciding(void **state)
{
	(void)state;
	half_closed(NULL, false);
}

/* Another request after it in the same write, its body cut short by the
 * half-close: the first is answered all the same (the second never can
 * be). */
static void half_close_in_the_next_body(void **state)
{
	(void)state;
	half_closed("POST " V_TJ " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
		    "Content-Length: 10\r\n\r\n{\"a\"", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refusal_while_deciding),
		cmocka_unit_test(half_close_while_deciding),
		cmocka_unit_test(close_notify_while_deciding),
		cmocka_unit_test(half_close_in_the_next_body),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

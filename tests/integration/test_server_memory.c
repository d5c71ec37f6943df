/*
 * test_server_memory.c — the memory the real `serve` holds under big
 * bodies: a budget for every request in flight and every connection
 * together, charged for what has arrived (a body as it comes, its decision
 * once it is in: 503 with Retry-After when the budget has no room now, 413
 * for a body that could never fit), peers that announce bodies they never
 * send holding nothing, a trickled body cut at --read-timeout, one peer's
 * share, the lane of small reviews, thirty peers sending 3 MB each held
 * within the budget, and the memory of big requests given back once they
 * end.
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
#define PEERS 30

static char tmp[128], certdir[128], rtdir[128];
static sp_server srv;

static int setup(void **state)
{
	(void)state;
	memset(&srv, 0, sizeof(srv));
	return sp_fixture("tw-mem", tmp, certdir, rtdir, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	sp_rmtree(tmp);
	return rc ? -1 : 0;
}

/* serve with this budget; bodies held for a long time before their last
 * byte are within the read timeout */
static void start(const char *budget)
{
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--memory-budget", budget,
				"--read-timeout", "120", NULL };
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
}

/* An AdmissionReview of about size bytes: a TrainJob whose command has
 * many 30-character arguments (denied: too many; cheap to decide). */
static char *review(size_t size, size_t *len)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_adds(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			"\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
			"\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\","
			"\"namespace\":\"team-a\",\"object\":{\"apiVersion\":\"trainer.kubeflow.org/"
			"v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"big\",\"namespace\":"
			"\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"
			"\"trainer\":{\"command\":[");
	for (size_t i = 0; b.len + 30 < size; i++)
		tp_buf_addf(&b, "%s\"--argument-%018zu\"", i ? "," : "", i);
	tp_buf_adds(&b, "]}}}}}");
	*len = b.len;
	return b.data;
}

static char *head(size_t len)
{
	char *h = NULL;
	assert_true(asprintf(&h, "POST " V_TJ " HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
				 "application/json\r\nContent-Length: %zu\r\n\r\n", len) > 0);
	return h;
}

static double metric(const char *series)
{
	double v = sp_metric_now(&srv, series);
	assert_true(v >= 0);
	return v;
}

/* What requests hold of the budget (connections left out). */
static double requests_hold(void)
{
	return metric("trainer_webhook_memory_budget_used_bytes") -
	       metric("trainer_webhook_memory_budget_connections_bytes");
}

static bool budget_free(void *arg)
{
	(void)arg;
	return requests_hold() == 0;
}

static bool budget_held(void *arg)
{
	(void)arg;
	return requests_hold() > 0;
}

/* Two requests of 1.4 MB bodies hold 10 times their bodies, 26 MiB and more. */
static bool big_pair_held(void *arg)
{
	(void)arg;
	return requests_hold() >= 26.0 * 1024 * 1024;
}

/* VmRSS or VmHWM of the server, in KiB. */
static long status_kib(const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)srv.pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	long v = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static void is_json_error(const tc_answer *a, const char *part)
{
	cJSON *j = tt_json(a->body);
	const char *e = tp_get_str(j, "error");
	if (!e || !strstr(e, part))
		fail_msg("no error with \"%s\" in:\n%s", part, a->raw);
	cJSON_Delete(j);
	assert_string_equal(a->ctype, "application/json");
}

/* A body is charged as it arrives, and its decision once it is in: half of
 * one sent holds half its bytes; another request whose body and decision
 * do not fit beside it now is answered 503 once its body has come, and
 * counted; once the first has ended, the same request is decided. */
static void budget_charged_as_the_body_arrives(void **state)
{
	(void)state;
	start("16Mi"); /* a share of 7 MiB: one request of 10 x 700,000 fits, not two */
	size_t len;
	char *body = review(700000, &len), *h = head(len);
	tc_conn *a = tc_connect(&srv), *b = tc_connect(&srv);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(tc_write(a, h, strlen(h)), 0);
	assert_int_equal(tc_write(a, body, len / 2), 0); /* half sent: held with its arena */
	assert_true(tt_wait_until(budget_held, NULL, 5000));
	assert_true(requests_hold() <= 10.0 * (double)(len / 2));
	assert_int_equal(tc_write(b, h, strlen(h)), 0);
	size_t sent = 0; /* the rest of the share is 3.8 MB: some 380 KB of b's body */
	tc_answer ans;
	assert_int_equal(tc_send_reading(b, body, len, 5000 * sp_slow(), 2000 * sp_slow(), &sent,
					 &ans), 0);
	print_message("%s\n(after %zu of %zu bytes)\n", ans.raw, sent, len);
	assert_int_equal(ans.status, 503);
	assert_string_equal(ans.retry_after, "1");
	is_json_error(&ans, "memory budget");
	tc_answer_free(&ans);
	tc_close(b);
	assert_true(requests_hold() <= 10.0 * (double)(len / 2));
	assert_true(metric("trainer_webhook_memory_budget_refused_total") == 1);
	assert_true(metric("trainer_webhook_error_answers_total{reason=\"over_budget\"}") == 1);
	/* the first goes on and is decided; its share comes back */
	assert_int_equal(tc_write(a, body + len / 2, len - len / 2), 0);
	assert_int_equal(tc_read_answer(a, 10000 * sp_slow(), 0, &ans), 0);
	assert_int_equal(ans.status, 200);
	tc_answer_free(&ans);
	tc_close(a);
	assert_true(tt_wait_until(budget_free, NULL, 5000));
	sp_resp r;
	assert_int_equal(sp_https(NULL, &srv, "POST", V_TJ, "application/json", body, len, 0, &r),
			 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	free(h);
	free(body);
}

/* A connection from 127.0.0.n (another peer). */
static tc_conn *connect_from(unsigned n)
{
	sp_server from = srv;
	snprintf(from.source, sizeof(from.source), "127.0.0.%u", n);
	tc_conn *c = tc_connect(&from);
	assert_non_null(c);
	return c;
}

/* A review of len bytes (about), sent whole from peer 127.0.0.n: its status. */
static int post_from(unsigned n, size_t size)
{
	size_t len;
	char *body = review(size, &len), *h = head(len);
	tc_conn *c = connect_from(n);
	assert_int_equal(tc_write(c, h, strlen(h)), 0);
	size_t sent = 0;
	tc_answer a;
	assert_int_equal(tc_send_reading(c, body, len, 10000 * sp_slow(), 0, &sent, &a), 0);
	int status = a.status;
	if (status != 200)
		print_message("from 127.0.0.%u: %s\n", n, a.raw);
	tc_answer_free(&a);
	tc_close(c);
	free(h);
	free(body);
	return status;
}

/* The attack: 100 connections from ten addresses announce bodies
 * of 1.1 MB (11 MB with their decisions: three filled the 32 MiB when
 * headers reserved them) and send none of it, or 100 bytes:
 * they hold nothing of the budget but their connections, and a review, a
 * small and a big one, is answered 200 meanwhile (before: their headers
 * took the whole budget, and every other review got 503 until the idle
 * timeout). */
static void announced_bodies_hold_nothing(void **state)
{
	(void)state;
	start("32Mi");
	char *h = head(1118481);
	tc_conn *c[100];
	for (int i = 0; i < 100; i++) {
		c[i] = connect_from(2 + (unsigned)i % 10);
		assert_int_equal(tc_write(c[i], h, strlen(h)), 0);
		if (i % 5 == 0)
			assert_int_equal(tc_write(c[i], "{\"apiVersion\":                       "
							"                                      "
							"                           ",
						  100),
					 0);
	}
	tt_sleep_ms(300);
	print_message("100 announced bodies hold %.0f bytes of requests, %.0f of connections\n",
		      requests_hold(), metric("trainer_webhook_memory_budget_connections_bytes"));
	assert_true(requests_hold() <= 20 * 100 * 10);
	assert_int_equal(post_from(1, 2000), 200);
	assert_int_equal(post_from(1, 700000), 200);
	for (int i = 0; i < 100; i++)
		tc_close(c[i]);
	free(h);
}

/* A body trickled a few bytes at a time is cut at --read-timeout from its
 * headers (closed, logged as 408) and holds nothing after; a silent one is
 * closed too. */
static void trickled_body_cut_at_read_timeout(void **state)
{
	(void)state;
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--memory-budget", "32Mi",
				"--read-timeout", "2", NULL };
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	char *h = head(100000); /* with its decision: 1 MB */
	tc_conn *drip = connect_from(2), *silent = connect_from(3);
	assert_int_equal(tc_write(drip, h, strlen(h)), 0);
	assert_int_equal(tc_write(silent, h, strlen(h)), 0);
	long long t0 = tt_mono_ms();
	tc_answer a = { 0 };
	bool closed = false;
	while (!closed && tt_mono_ms() - t0 < 10000 * sp_slow()) {
		closed = tc_write(drip, "          ", 10) != 0;
		if (!closed && !tc_read_answer(drip, 300, 0, &a))
			fail_msg("the trickled body was answered: %s", a.raw);
		tc_answer_free(&a);
		closed = closed || a.closed;
	}
	long long took = tt_mono_ms() - t0;
	print_message("trickled body closed after %lld ms\n", took);
	assert_true(closed);
	assert_true(took >= 1900);
	assert_true(sp_log_wait(&srv, "\"code\":408", 5000));
	tc_answer s;
	if (!tc_read_answer(silent, 5000 * sp_slow(), 0, &s))
		fail_msg("the silent request was answered: %s", s.raw);
	tc_answer_free(&s);
	assert_true(tt_wait_until(budget_free, NULL, 5000));
	tc_close(drip);
	tc_close(silent);
	free(h);
}

/* One address's requests hold at most its share (7/16 of the budget): its
 * next big request is answered 503 at once, naming the client's share,
 * while another address's is decided. */
static void one_peer_holds_its_share(void **state)
{
	(void)state;
	start("32Mi"); /* a share of 14 MiB */
	size_t len;
	char *body = review(1000000, &len), *h = head(len);
	tc_conn *held = connect_from(2); /* 900 KB in: 9 MB held with its decision */
	assert_int_equal(tc_write(held, h, strlen(h)), 0);
	assert_int_equal(tc_write(held, body, 900000), 0);
	tt_sleep_ms(200);
	tc_conn *more = connect_from(2);
	assert_int_equal(tc_write(more, h, strlen(h)), 0);
	tc_answer a;
	assert_int_equal(tc_read_answer(more, 5000 * sp_slow(), 2000 * sp_slow(), &a), 0);
	assert_int_equal(a.status, 503);
	is_json_error(&a, "this client's requests in flight hold their share");
	tc_answer_free(&a);
	tc_close(more);
	assert_int_equal(post_from(3, 1000000), 200);
	assert_int_equal(tc_write(held, body + 900000, len - 900000), 0);
	assert_int_equal(tc_read_answer(held, 10000 * sp_slow(), 0, &a), 0);
	assert_int_equal(a.status, 200);
	tc_answer_free(&a);
	tc_close(held);
	free(h);
	free(body);
}

/* Big requests of two addresses hold all but the lane: a third big one is
 * answered 503, a small review is decided. */
static void small_reviews_keep_their_lane(void **state)
{
	(void)state;
	start("32Mi"); /* 28 MiB for big requests and connections, 4 MiB more for small ones */
	size_t len;
	char *body = review(1450000, &len), *h = head(len);
	tc_conn *big[2];
	for (unsigned i = 0; i < 2; i++) { /* 14 MB each, with their decisions */
		big[i] = connect_from(2 + i);
		assert_int_equal(tc_write(big[i], h, strlen(h)), 0);
		assert_int_equal(tc_write(big[i], body, 1400000), 0);
	}
	/* their bodies are read as fast as the server gets to them: a busy
	 * machine or a sanitizer build takes longer than any fixed pause */
	assert_true(tt_wait_until(big_pair_held, NULL, 20000 * sp_slow()));
	print_message("two big requests hold %.0f bytes\n", requests_hold());
	assert_int_equal(post_from(4, 200000), 503);
	assert_int_equal(post_from(5, 2000), 200);
	for (unsigned i = 0; i < 2; i++)
		tc_close(big[i]);
	free(h);
	free(body);
}

/* A body whose share is more than the whole budget could never be read:
 * 413 at once, naming --memory-budget. */
static void body_larger_than_the_budget_is_413(void **state)
{
	(void)state;
	start("8Mi");
	char *h = head(1000000); /* 10 MB > 8 MiB */
	tc_conn *c = tc_connect(&srv);
	assert_non_null(c);
	assert_int_equal(tc_write(c, h, strlen(h)), 0);
	tc_answer ans;
	assert_int_equal(tc_read_answer(c, 5000 * sp_slow(), 2000 * sp_slow(), &ans), 0);
	assert_int_equal(ans.status, 413);
	is_json_error(&ans, "--memory-budget");
	is_json_error(&ans, " bytes): send a smaller object"); /* the limit, stated */
	assert_true(ans.closed);
	tc_answer_free(&ans);
	tc_close(c);
	free(h);
}

/* The load: thirty connections each sending a body of 2.9 MB
 * (near the API server's 3 MiB limit) at once, held before their last
 * byte, then finished. Every one gets an answer (decided, or 503 over the
 * budget) and the server's peak stays within the 35 MiB one client may
 * hold of its 80 MiB budget and what it holds at rest (before: 95 MB held,
 * 390 MB peak). */
static void thirty_peers_stay_in_the_budget(void **state)
{
	(void)state;
	start("80Mi");
	long rest = status_kib("VmHWM");
	size_t len;
	char *body = review(2900000, &len), *h = head(len);
	tc_conn *c[PEERS];
	tc_answer ans[PEERS];
	bool early[PEERS] = { false };
	for (int i = 0; i < PEERS; i++) {
		assert_non_null(c[i] = tc_connect(&srv));
		assert_int_equal(tc_write(c[i], h, strlen(h)), 0);
		size_t sent = 0;
		early[i] = !tc_send_reading(c[i], body, len - 1, 20000 * sp_slow(), 0, &sent,
					    &ans[i]);
		if (!early[i])
			tc_answer_free(&ans[i]);
	}
	long held = status_kib("VmRSS");
	int decided = 0, refused = 0, closed = 0;
	for (int i = 0; i < PEERS; i++) {
		if (!early[i]) {
			/* refused halfway through its body (the budget filled meanwhile),
			 * a connection may be closed unanswered: never an allow */
			(void)tc_write(c[i], body + len - 1, 1);
			if (tc_read_answer(c[i], 20000 * sp_slow(), 0, &ans[i]))
				ans[i].status = 0;
		}
		if (ans[i].status == 503)
			is_json_error(&ans[i], "memory budget");
		else if (ans[i].status)
			assert_int_equal(ans[i].status, 200);
		decided += ans[i].status == 200;
		refused += ans[i].status == 503;
		closed += ans[i].status == 0;
		tc_answer_free(&ans[i]);
		tc_close(c[i]);
	}
	long peak = status_kib("VmHWM");
	print_message("%d decided, %d refused, %d closed halfway; VmRSS held %ld KiB, VmHWM %ld "
		      "KiB (%ld at rest)\n",
		      decided, refused, closed, held, peak, rest);
	assert_int_equal(decided + refused + closed, PEERS);
	assert_true(decided >= 1);
	assert_true(peak < rest + 35 * 1024 + 16 * 1024); /* the share, and 16 MiB of slack */
	free(h);
	free(body);
}

/* Sixteen bodies of 2.9 MB decided two at a time: once they have ended, the
 * server holds about what it held before them (before: their bodies and
 * arenas stayed in malloc's heaps, 262 MB after thirty). */
static void memory_comes_back_after_big_requests(void **state)
{
	(void)state;
	if (sp_slow() > 1) { /* a sanitizer's allocator keeps freed memory on purpose */
		print_message("sanitizer build: what malloc gives back is not glibc's: skipped\n");
		skip();
	}
	start("2Gi"); /* sixteen of 29 MB: within one client's share */
	size_t len;
	char *body = review(2900000, &len);
	sp_resp r; /* one small request first: what the server holds when in use */
	assert_int_equal(sp_https(NULL, &srv, "GET", "/healthz", NULL, NULL, 0, 0, &r), 0);
	sp_resp_free(&r);
	long before = status_kib("VmRSS");
	char *h = head(len);
	tc_conn *c[16];
	for (int i = 0; i < 16; i++) {
		assert_non_null(c[i] = tc_connect(&srv));
		assert_int_equal(tc_write(c[i], h, strlen(h)), 0);
		assert_int_equal(tc_write(c[i], body, len - 1), 0);
	}
	long held = status_kib("VmRSS");
	for (int i = 0; i < 16; i++)
		assert_int_equal(tc_write(c[i], body + len - 1, 1), 0);
	for (int i = 0; i < 16; i++) {
		tc_answer a;
		assert_int_equal(tc_read_answer(c[i], 20000 * sp_slow(), 0, &a), 0);
		assert_int_equal(a.status, 200);
		tc_answer_free(&a);
		tc_close(c[i]);
	}
	assert_true(tt_wait_until(budget_free, NULL, 5000));
	long after = status_kib("VmRSS");
	print_message("VmRSS before %ld KiB, with 16 bodies held %ld KiB, after %ld KiB\n", before,
		      held, after);
	assert_true(after < before + 16 * 1024);
	free(h);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(budget_charged_as_the_body_arrives, setup, teardown),
		cmocka_unit_test_setup_teardown(body_larger_than_the_budget_is_413, setup, teardown),
		cmocka_unit_test_setup_teardown(announced_bodies_hold_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(trickled_body_cut_at_read_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(one_peer_holds_its_share, setup, teardown),
		cmocka_unit_test_setup_teardown(small_reviews_keep_their_lane, setup, teardown),
		cmocka_unit_test_setup_teardown(thirty_peers_stay_in_the_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_comes_back_after_big_requests, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

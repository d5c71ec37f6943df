/*
 * test_server_idle.c — peers that hold connections and say nothing: they
 * cost no CPU and are closed after the handshake timeout, a flood of them is
 * bounded and counted, another peer is still answered, thousands of them
 * halfway through their handshakes stay within the memory the shipped pod
 * has and give it back when they go, and every request gets an answer,
 * however big its body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define IDLE_PEERS 500
#define HALF_HANDSHAKES 100
#define HALF_HELLO_PEERS 5000
#define HALF_HELLO_ADDRESSES 50

/* A TLS record header announcing 512 bytes of ClientHello, then 40 of them. */
static const unsigned char half_hello[45] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00,
					      0x01, 0xfc, 0x03, 0x03 };

static char tmp[300], certdir[300], rtdir[300];
static sp_server srv;

static int setup(void **state)
{
	(void)state;
	return sp_fixture("tw-idle", tmp, certdir, rtdir, sizeof(tmp));
}

static int teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	sp_rmtree(tmp);
	return rc ? -1 : 0;
}

static int peer(unsigned short port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* n peers at once, from 127.0.0.2 on (i % addresses), each sending half a
 * ClientHello once connected; fds[i] is -1 for one refused at once. The
 * connects are not waited for one by one: while the server closes those
 * past its budget, its backlog fills, and a SYN it drops is sent again a
 * second later, which made 5,000 blocking connects take 115 s. */
static int half_hellos_at_once(unsigned short port, int *fds, int n, unsigned addresses)
{
	static struct pollfd p[HALF_HELLO_PEERS];
	int open = 0, pending = 0;
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		struct sockaddr_in from = { .sin_family = AF_INET }, a = { .sin_family = AF_INET,
									    .sin_port = htons(port) };
		from.sin_addr.s_addr = htonl(0x7f000002u + (unsigned)i % addresses);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_true(fd >= 0);
		if (bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
		    (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS)) {
			close(fd);
			fd = -1;
		}
		fds[i] = fd;
		p[i] = (struct pollfd){ .fd = fd, .events = POLLOUT };
		pending += fd >= 0;
	}
	long long t0 = tt_mono_ms();
	/* 5 s: a SYN dropped twice is sent again after 1 and 3 s; one still
	 * waiting then counts as refused, as the server meant it */
	while (pending > 0 && tt_mono_ms() - t0 < 5000) {
		if (poll(p, (nfds_t)n, 100) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			int err = 0;
			socklen_t len = sizeof(err);
			if (!getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &len) && !err &&
			    send(p[i].fd, half_hello, sizeof(half_hello), MSG_NOSIGNAL) ==
				    sizeof(half_hello))
				open++;
			p[i].fd = -1; /* done with: poll skips it */
			pending--;
		}
	}
	return open;
}

/* VmRSS of the server, in KiB. */
static long rss_kib(void)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)srv.pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	long v = -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = strtol(line + 6, NULL, 10);
	fclose(f);
	return v;
}

static double metric(const char *series)
{
	double v = sp_metric_now(&srv, series);
	assert_true(v >= 0);
	return v;
}

static bool answers(void)
{
	sp_resp r;
	bool ok = !sp_https(NULL, &srv, "GET", "/healthz", NULL, NULL, 0, SP_FRESH, &r) &&
		  r.status == 200;
	sp_resp_free(&r); /* a failed request has a body to free too */
	return ok;
}

static bool answers_now(void *arg)
{
	(void)arg;
	return answers();
}

/* The server's CPU time so far, in clock ticks (utime + stime). */
static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the fields after the command name */
	long ut = 0, st = 0;
	assert_non_null(p);
	assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st),
			 2);
	return ut + st;
}

/* 500 peers that connect and say nothing, 100 that stop halfway through a
 * ClientHello: waiting for them costs the server no CPU (a busy loop is about
 * 3 s per core in these 3 s), and a real client is still answered. */
static void idle_peers_cost_no_cpu(void **state)
{
	(void)state;
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", NULL };
	sp_stop_checked(&srv);
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	int fds[IDLE_PEERS + HALF_HANDSHAKES];
	for (int i = 0; i < IDLE_PEERS + HALF_HANDSHAKES; i++) {
		fds[i] = peer(srv.port);
		if (i >= IDLE_PEERS)
			assert_int_equal(send(fds[i], half_hello, sizeof(half_hello), 0),
					 (ssize_t)sizeof(half_hello));
	}
	tt_sleep_ms(500); /* every peer accepted */
	long t0 = cpu_ticks(srv.pid);
	tt_sleep_ms(3000);
	long spent = cpu_ticks(srv.pid) - t0;
	long hz = sysconf(_SC_CLK_TCK);
	print_message("server CPU while %d idle and %d half-handshake peers waited 3 s: %.2f s\n",
		      IDLE_PEERS, HALF_HANDSHAKES, (double)spent / (double)hz);
	assert_true(spent * 10 < hz * 3); /* under 0.3 s */
	assert_true(answers());
	for (int i = 0; i < IDLE_PEERS + HALF_HANDSHAKES; i++)
		close(fds[i]);
}

/* Milliseconds until the server closes fd (reads EOF or a reset), or -1 when
 * it is still open after limit_ms. */
static long long closed_within(int fd, long long limit_ms)
{
	long long t0 = tt_mono_ms();
	struct pollfd p = { .fd = fd, .events = POLLIN };
	while (tt_mono_ms() - t0 < limit_ms) {
		if (poll(&p, 1, 50) == 1) {
			char c;
			if (recv(fd, &c, 1, 0) <= 0)
				return tt_mono_ms() - t0;
		}
	}
	return -1;
}

/* A silent new connection goes after --handshake-timeout; one that has made
 * a request lives on to --idle-timeout. */
static void timeouts_handshake_then_idle(void **state)
{
	(void)state;
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--handshake-timeout", "1",
				"--idle-timeout", "3", NULL };
	sp_stop_checked(&srv);
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	int idle = peer(srv.port), half = peer(srv.port);
	assert_int_equal(send(half, half_hello, sizeof(half_hello), 0), (ssize_t)sizeof(half_hello));
	CURL *h = curl_easy_init();
	assert_non_null(h);
	sp_resp r;
	assert_int_equal(sp_https(h, &srv, "GET", "/healthz", NULL, NULL, 0, 0, &r), 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	long long t_idle = closed_within(idle, 5000), t_half = closed_within(half, 5000);
	print_message("silent peer closed after %lld ms, half handshake after %lld more ms\n",
		      t_idle, t_half);
	assert_true(t_idle >= 0 && t_half >= 0);
	close(idle);
	close(half);
	/* 1.5 s after its request, past the handshake timeout: still open */
	tt_sleep_ms(300);
	assert_int_equal(sp_https(h, &srv, "GET", "/healthz", NULL, NULL, 0, 0, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.connects, 0); /* the same connection */
	sp_resp_free(&r);
	/* 4 s of silence, past the idle timeout: closed, the next request connects */
	tt_sleep_ms(4000);
	assert_int_equal(sp_https(h, &srv, "GET", "/healthz", NULL, NULL, 0, 0, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.connects, 1);
	sp_resp_free(&r);
	curl_easy_cleanup(h);
}

static bool refusals_counted(void *arg)
{
	sp_resp m;
	bool ok = !sp_http_get(srv.metrics_port, "/metrics", &m) &&
		  sp_metric(m.body, "trainer_webhook_connections_refused_total") >= *(double *)arg;
	sp_resp_free(&m);
	return ok;
}

/* A flood from one address takes at most its share (half of one worker's):
 * the server keeps its descriptors, another peer (the API server) is still
 * answered, and every refusal is counted. */
static void flood_is_bounded(void **state)
{
	(void)state;
	/* 40 in all, 20 per worker thread: 10 from one peer at most (the default) */
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--max-connections", "40",
				NULL };
	sp_stop_checked(&srv);
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	int fds[60];
	for (int i = 0; i < 60; i++)
		fds[i] = peer(srv.port);
	double want = 50;
	assert_true(tt_wait_until(refusals_counted, &want, 5000));
	sp_server other = srv; /* from 127.0.0.2: the API server's share is left */
	snprintf(other.source, sizeof(other.source), "127.0.0.2");
	sp_resp r;
	assert_int_equal(sp_https(NULL, &other, "GET", "/healthz", NULL, NULL, 0, SP_FRESH, &r), 0);
	assert_int_equal(r.status, 200);
	sp_resp_free(&r);
	sp_resp m;
	assert_int_equal(sp_http_get(srv.metrics_port, "/metrics", &m), 0);
	assert_true(sp_metric(m.body, "trainer_webhook_connections_max") == 40);
	sp_resp_free(&m);
	for (int i = 0; i < 60; i++)
		close(fds[i]);
	/* the flood gone, everyone again — once the server has seen the closes
	 * (until then its count for this address still holds the slots) */
	assert_true(tt_wait_until(answers_now, NULL, 5000));
}

static bool connections_gone(void *arg)
{
	(void)arg;
	return metric("trainer_webhook_memory_budget_connections_bytes") == 0;
}


/* 5,000 peers from 50 addresses, each halfway through a ClientHello, under
 * the budget the shipped pod gets (--memory-budget 32Mi of its 64Mi): the
 * connections hold at most half the budget (341 at 48 KiB), the rest are
 * closed at once, the server stays under the pod's 64 MiB, and once they
 * are gone it gives the memory back (before: 22 KB each, every one
 * accepted, 80 MB for 3,000, and the memory kept after they left). */
static void half_hellos_within_memory(void **state)
{
	(void)state;
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < HALF_HELLO_PEERS + 200) {
		print_message("the open-files limit (%lu) is below %d: skipped\n",
			      (unsigned long)rl.rlim_max, HALF_HELLO_PEERS + 200);
		skip();
	}
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", "--memory-budget", "32Mi",
				NULL };
	sp_stop_checked(&srv);
	/* An ASan server keeps up to 256 MiB of what it freed in its
	 * quarantine (ASan's default), memory that is ASan's and not the
	 * server's: its bound is read with an 8 MiB quarantine, on its growth
	 * over rest (its shadow memory is not the server's either). */
	const char *was = getenv("ASAN_OPTIONS");
	char *asan = NULL;
	if (sp_slow() > 1)
		assert_true(asprintf(&asan, "%s%squarantine_size_mb=8", was ? was : "",
				     was && *was ? ":" : "") > 0);
	char *saved = was ? strdup(was) : NULL;
	if (asan)
		setenv("ASAN_OPTIONS", asan, 1);
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	if (asan) {
		if (saved)
			setenv("ASAN_OPTIONS", saved, 1);
		else
			unsetenv("ASAN_OPTIONS");
	}
	free(asan);
	free(saved);
	assert_true(answers());
	long rest = rss_kib();
	static int fds[HALF_HELLO_PEERS];
	int open = half_hellos_at_once(srv.port, fds, HALF_HELLO_PEERS, HALF_HELLO_ADDRESSES);
	tt_sleep_ms(1000); /* every peer accepted or refused */
	long held = rss_kib();
	double conns = metric("trainer_webhook_memory_budget_connections_bytes");
	print_message("%d peers sent half a hello; the server holds %.0f connections, VmRSS %ld "
		      "KiB (%ld at rest); limit %.0f\n",
		      open, conns / (48 * 1024), held, rest,
		      metric("trainer_webhook_connections_max"));
	assert_true(metric("trainer_webhook_connections_max") == 341);
	assert_true(conns <= 16.0 * 1024 * 1024 + 2 * 48 * 1024); /* half, give or take a thread's */
	if (sp_slow() == 1)
		assert_true(held < 64 * 1024);
	else
		assert_true(held - rest < 32 * 1024);
	for (int i = 0; i < HALF_HELLO_PEERS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	assert_true(tt_wait_until(connections_gone, NULL, 10000 * sp_slow()));
	assert_true(answers());
	long after = rss_kib();
	print_message("after they left: VmRSS %ld KiB\n", after);
	if (sp_slow() == 1) { /* a sanitizer's allocator keeps freed memory on purpose */
		assert_true(after < 64 * 1024);
		assert_true(after < rest + 8 * 1024);
	}
}

/* Bodies of about 3 MB of tiny values (each a parsed node): every one gets
 * an answer — 413 with a JSON error past the per-request memory bound, else
 * the verdict — never a silent close. */
static void every_request_is_answered(void **state)
{
	(void)state;
	static const char *const shapes[] = { "0", "{}", "[]", "\"\"", "null", "true" };
	const char *extra[] = { "--runtimes", rtdir, "--threads", "2", NULL };
	sp_stop_checked(&srv);
	assert_int_equal(sp_start(&srv, certdir, tmp, extra), 0);
	for (size_t k = 0; k < sizeof(shapes) / sizeof(*shapes); k++) {
		tp_buf b = TP_BUF_INIT(0);
		tp_buf_adds(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
				"\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
				"\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\","
				"\"object\":{\"a\":[");
		size_t n = 2900000 / (strlen(shapes[k]) + 1);
		for (size_t i = 0; i < n; i++)
			tp_buf_addf(&b, "%s%s", i ? "," : "", shapes[k]);
		tp_buf_adds(&b, "]}}}");
		sp_resp r;
		int rc = sp_https(NULL, &srv, "POST", "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
				  "application/json", b.data, b.len, SP_FRESH, &r);
		tp_buf_free(&b);
		assert_int_equal(rc, 0);
		print_message("%s: HTTP %ld\n", shapes[k], r.status);
		assert_true(r.status == 413 || r.status == 400 || r.status == 200);
		cJSON *j = tt_json(r.body);
		assert_non_null(r.status == 200 ? tp_get(j, "response.allowed") : tp_get(j, "error"));
		cJSON_Delete(j);
		sp_resp_free(&r);
	}
	assert_true(answers());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idle_peers_cost_no_cpu),
		cmocka_unit_test(timeouts_handshake_then_idle),
		cmocka_unit_test(flood_is_bounded),
		cmocka_unit_test(half_hellos_within_memory),
		cmocka_unit_test(every_request_is_answered),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

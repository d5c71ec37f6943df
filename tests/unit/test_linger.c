/*
 * test_linger.c — the lingering close (webhook/server/tls_linger.c) on real
 * TCP connections over loopback, the server's end handed to tw_linger_add
 * and then closed, as libmicrohttpd closes it.
 *
 * What a peer must see: its writes never fail while the linger holds its
 * socket (the answer it has not read yet is not lost to a reset), a peer
 * that ends after a long body frees its place at once, and a linger that is
 * full makes room for the newest connection, whose peer has not read its
 * answer yet, by closing the one that has had the longest to read its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "webhook/server/tls.h"

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int listener = -1;
static struct sockaddr_in addr;

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addr = (struct sockaddr_in){ .sin_family = AF_INET,
				     .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(listener, (struct sockaddr *)&addr, &len) || listen(listener, 256))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(listener);
	return 0;
}

/* A connection: [0] the server's end, [1] the peer's (non-blocking). */
static void conn_open(int fd[2])
{
	fd[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd[1] >= 0);
	assert_int_equal(connect(fd[1], (struct sockaddr *)&addr, sizeof(addr)), 0);
	fd[0] = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	assert_true(fd[0] >= 0);
	fcntl(fd[1], F_SETFL, fcntl(fd[1], F_GETFL) | O_NONBLOCK);
}

/* The server is done with the connection: the linger takes it, then the
 * server's own descriptor goes, as libmicrohttpd's close does. */
static void server_closes(tw_linger *l, int fd[2])
{
	tw_linger_add(l, fd[0]);
	close(fd[0]);
	fd[0] = -1;
}

/* The peer writes n bytes within ms; how many it wrote, or -1 when a write
 * failed (the server's socket is gone: the kernel answered with a reset). */
static long peer_writes(int fd, size_t n, int ms)
{
	static char chunk[65536];
	size_t off = 0;
	long long until = now_ms() + ms;
	while (off < n && now_ms() < until) {
		size_t want = n - off < sizeof(chunk) ? n - off : sizeof(chunk);
		ssize_t w = write(fd, chunk, want);
		if (w > 0) {
			off += (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			poll(&p, 1, 10);
		} else {
			return -1;
		}
	}
	return (long)off;
}

/* The peer's socket was reset within ms: the server's end is closed. */
static bool peer_reset(int fd, int ms)
{
	long long until = now_ms() + ms;
	while (now_ms() < until) {
		if (write(fd, "x", 1) < 0 && errno != EAGAIN)
			return true; /* EPIPE or ECONNRESET */
		struct pollfd p = { .fd = fd, .events = 0 };
		poll(&p, 1, 20);
	}
	return false;
}

static bool held_becomes(tw_linger *l, int n, int ms)
{
	long long until = now_ms() + ms;
	while (tw_linger_held(l) != n && now_ms() < until) {
		struct timespec ts = { 0, 5 * 1000000 };
		nanosleep(&ts, NULL);
	}
	return tw_linger_held(l) == n;
}

/* A peer still writing a 4 MiB body after its answer: every byte goes in
 * while the linger holds the socket, and the peer's end (it closes after
 * the last byte) frees the place at once, not after TW_LINGER_MS. Before,
 * the linger stopped reading after 64 KiB: the peer's writes waited, and
 * its end, queued behind them, never came; at TW_LINGER_MS the socket was
 * closed on unread bytes and the peer's next write failed. */
static void long_body_read_to_its_end(void **state)
{
	(void)state;
	tw_linger *l = tw_linger_new();
	assert_non_null(l);
	int c[2];
	conn_open(c);
	server_closes(l, c);
	long long t0 = now_ms();
	assert_int_equal(peer_writes(c[1], (size_t)4 << 20, TW_LINGER_MS / 2), 4 << 20);
	shutdown(c[1], SHUT_WR);
	assert_true(held_becomes(l, 0, TW_LINGER_MS / 2));
	assert_true(now_ms() - t0 < TW_LINGER_MS);
	close(c[1]);
	tw_linger_free(l);
}

/* Past the byte bound the linger only waits: the peer's writes wait too,
 * and fail only when the time bound closes the socket. */
static void past_the_byte_bound_only_waits(void **state)
{
	(void)state;
	tw_linger *l = tw_linger_new();
	assert_non_null(l);
	int c[2];
	conn_open(c);
	int small = 65536;
	setsockopt(c[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	server_closes(l, c);
	long w = peer_writes(c[1], TW_LINGER_BYTES + ((size_t)64 << 20), TW_LINGER_MS / 2);
	assert_true(w > (long)TW_LINGER_BYTES);                       /* all it read, */
	assert_true(w < (long)(TW_LINGER_BYTES + ((size_t)64 << 20))); /* then no more */
	assert_int_equal(tw_linger_held(l), 1);
	assert_true(peer_reset(c[1], TW_LINGER_MS * 2));
	assert_int_equal(tw_linger_held(l), 0);
	close(c[1]);
	tw_linger_free(l);
}

/* TW_LINGER_MAX peers that neither write nor end, then one more: it is
 * held, and the first, whose time was nearest its end, is closed for it.
 * Before, the newest was closed at once, and its peer's next write failed
 * before it could read the answer. */
static void full_linger_closes_the_oldest(void **state)
{
	(void)state;
	tw_linger *l = tw_linger_new();
	assert_non_null(l);
	int c[TW_LINGER_MAX + 1][2];
	for (int i = 0; i < TW_LINGER_MAX; i++) {
		conn_open(c[i]);
		server_closes(l, c[i]);
	}
	assert_int_equal(tw_linger_held(l), TW_LINGER_MAX);
	int last = TW_LINGER_MAX;
	conn_open(c[last]);
	server_closes(l, c[last]);
	assert_int_equal(tw_linger_held(l), TW_LINGER_MAX);
	assert_int_equal(peer_writes(c[last][1], 16384, 500), 16384);
	assert_false(peer_reset(c[last][1], 200));
	assert_true(peer_reset(c[0][1], 1000));
	assert_false(peer_reset(c[1][1], 200));
	for (int i = 0; i <= last; i++)
		close(c[i][1]);
	assert_true(held_becomes(l, 0, TW_LINGER_MS));
	tw_linger_free(l);
}

/* The peers' ends (a close) free their places. */
static void ends_free_their_places(void **state)
{
	(void)state;
	tw_linger *l = tw_linger_new();
	assert_non_null(l);
	int c[3][2];
	for (int i = 0; i < 3; i++) {
		conn_open(c[i]);
		server_closes(l, c[i]);
	}
	assert_int_equal(tw_linger_held(l), 3);
	close(c[1][1]);
	assert_true(held_becomes(l, 2, TW_LINGER_MS / 2));
	close(c[0][1]);
	close(c[2][1]);
	assert_true(held_becomes(l, 0, TW_LINGER_MS / 2));
	tw_linger_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(long_body_read_to_its_end),
		cmocka_unit_test(past_the_byte_bound_only_waits),
		cmocka_unit_test(full_linger_closes_the_oldest),
		cmocka_unit_test(ends_free_their_places),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

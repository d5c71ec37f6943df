/*
 * test_tls_record.c — an answer corked into one TLS record (webhook/
 * tls_record.c): it arrives whole as one record, and a peer that reads
 * nothing is cut off after the wait bound instead of holding the thread.
 * Requests read ahead (webhook/server/tls_ahead.c): records read together
 * reach the reader, whether its buffer takes them all or fills first, and
 * a close_notify read with a request comes after it.
 * A GnuTLS client and server in this process, over a socketpair (anonymous
 * key exchange: what is tested is the record layer, not certificates).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/testutil.h"
#include "webhook/server/tls.h"

struct pair {
	int fd[2]; /* 0: server, 1: client */
	gnutls_session_t srv, cli;
	gnutls_anon_server_credentials_t scred;
	gnutls_anon_client_credentials_t ccred;
};

static void pair_open(struct pair *p, int window)
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, p->fd), 0);
	if (window) {
		setsockopt(p->fd[0], SOL_SOCKET, SO_SNDBUF, &window, sizeof(window));
		setsockopt(p->fd[1], SOL_SOCKET, SO_RCVBUF, &window, sizeof(window));
	}
	for (int i = 0; i < 2; i++)
		fcntl(p->fd[i], F_SETFL, fcntl(p->fd[i], F_GETFL) | O_NONBLOCK);
	const char *prio = "NORMAL:-VERS-TLS1.3:+ANON-ECDH";
	assert_int_equal(gnutls_anon_allocate_server_credentials(&p->scred), 0);
	assert_int_equal(gnutls_anon_allocate_client_credentials(&p->ccred), 0);
	assert_int_equal(gnutls_init(&p->srv, GNUTLS_SERVER | GNUTLS_NONBLOCK), 0);
	assert_int_equal(gnutls_init(&p->cli, GNUTLS_CLIENT | GNUTLS_NONBLOCK), 0);
	assert_int_equal(gnutls_priority_set_direct(p->srv, prio, NULL), 0);
	assert_int_equal(gnutls_priority_set_direct(p->cli, prio, NULL), 0);
	assert_int_equal(gnutls_credentials_set(p->srv, GNUTLS_CRD_ANON, p->scred), 0);
	assert_int_equal(gnutls_credentials_set(p->cli, GNUTLS_CRD_ANON, p->ccred), 0);
	gnutls_transport_set_int(p->srv, p->fd[0]);
	gnutls_transport_set_int(p->cli, p->fd[1]);
	int rs = GNUTLS_E_AGAIN, rc = GNUTLS_E_AGAIN;
	for (int i = 0; i < 1000 && (rs || rc); i++) { /* both sides, in turn */
		if (rs)
			rs = gnutls_handshake(p->srv);
		if (rc)
			rc = gnutls_handshake(p->cli);
		if ((rs && gnutls_error_is_fatal(rs)) || (rc && gnutls_error_is_fatal(rc)))
			fail_msg("handshake: %s / %s", gnutls_strerror(rs), gnutls_strerror(rc));
	}
	assert_int_equal(rs, 0);
	assert_int_equal(rc, 0);
}

static void pair_close(struct pair *p)
{
	gnutls_deinit(p->srv);
	gnutls_deinit(p->cli);
	gnutls_anon_free_server_credentials(p->scred);
	gnutls_anon_free_client_credentials(p->ccred);
	close(p->fd[0]);
	close(p->fd[1]);
}

static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n";
#define HEAD_LEN (sizeof(head) - 1)

/* Headers and body written as libmicrohttpd writes them, under the cork. */
static void corked_answer(struct pair *p, const char *body, size_t n)
{
	gnutls_record_cork(p->srv);
	assert_int_equal(gnutls_record_send(p->srv, head, HEAD_LEN), (ssize_t)HEAD_LEN);
	assert_int_equal(gnutls_record_send(p->srv, body, n), (ssize_t)n);
}

static void one_record_arrives_whole(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, 0);
	char body[4096];
	memset(body, 'x', sizeof(body));
	corked_answer(&p, body, sizeof(body));
	char peek[8];
	assert_int_equal(recv(p.fd[1], peek, sizeof(peek), MSG_PEEK), -1); /* nothing yet */
	assert_int_equal(tw_tls_flush_session(p.srv, p.fd[0], 200), 0);
	char got[8192];
	ssize_t n = gnutls_record_recv(p.cli, got, sizeof(got));
	/* one record: headers and body in one read */
	assert_int_equal(n, (ssize_t)(HEAD_LEN + sizeof(body)));
	assert_memory_equal(got, head, HEAD_LEN);
	assert_memory_equal(got + HEAD_LEN, body, sizeof(body));
	assert_int_equal(gnutls_record_recv(p.cli, got, sizeof(got)), GNUTLS_E_AGAIN);
	pair_close(&p);
}

static void peer_that_reads_nothing_is_cut_off(void **state)
{
	(void)state;
	struct pair p;
	pair_open(&p, 32768); /* a few answers fit */
	char body[8192];
	memset(body, 'y', sizeof(body));
	int answers = 0, rc = 0;
	long long t0 = 0;
	while (!rc && answers < 1000) { /* until the pipe is full */
		corked_answer(&p, body, sizeof(body));
		t0 = tt_mono_ms();
		rc = tw_tls_flush_session(p.srv, p.fd[0], 200);
		answers++;
	}
	long long waited = tt_mono_ms() - t0;
	print_message("cut off at answer %d after %lld ms\n", answers, waited);
	assert_int_equal(rc, TW_EFAILED);
	assert_true(waited >= 150); /* it waited for the peer, bounded */
	/* the peer reads what made it, then the end (the socket was shut) */
	char got[16384];
	ssize_t n;
	size_t total = 0;
	long long until = tt_mono_ms() + 5000; /* never read forever */
	while (((n = gnutls_record_recv(p.cli, got, sizeof(got))) > 0 || n == GNUTLS_E_AGAIN) &&
	       tt_mono_ms() < until) {
		if (n > 0)
			total += (size_t)n;
		else
			tt_sleep_ms(1);
	}
	assert_true(total > 0);
	assert_true(n == 0 || n == GNUTLS_E_PREMATURE_TERMINATION ||
		    n == GNUTLS_E_UNEXPECTED_PACKET_LENGTH || n == GNUTLS_E_PULL_ERROR);
	pair_close(&p);
}

/* ---------------------------------------------------- reading ahead */

static const char get[] = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
#define GET_LEN (sizeof(get) - 1)

/* A pair whose server side is one of the server's connections: checked
 * by the framing check (tls_recv.c) and pulling through tls_ahead.c. */
struct served {
	struct pair p;
	tw_tls_conn c;
};

/* The pair, and n requests, one record each, all sent before the server
 * reads. */
static void served_open(struct served *s, int n)
{
	pair_open(&s->p, 0);
	tw_tls_conn *c = &s->c;
	memset(c, 0, sizeof(*c));
	c->session = s->p.srv;
	c->fd = s->p.fd[0];
	c->mhd = (struct MHD_Connection *)c; /* any pointer: the session's is the proof */
	gnutls_session_set_ptr(s->p.srv, c->mhd);
	tw_head_init(&c->head);
	tw_tls_recv_register(c);
	tw_tls_ahead_attach(c);
	for (int i = 0; i < n; i++)
		assert_int_equal(gnutls_record_send(s->p.cli, get, GET_LEN), (ssize_t)GET_LEN);
}

static void served_close(struct served *s)
{
	tw_tls_recv_unregister(&s->c);
	tw_tls_ahead_free(&s->c);
	pair_close(&s->p);
}

/* One read takes the three: before, it took the first, and the others,
 * read ahead, would have waited for a poll that never came. */
static void held_records_in_one_read(void **state)
{
	(void)state;
	struct served s;
	served_open(&s, 3);
	char got[4096];
	assert_int_equal(gnutls_record_recv(s.p.srv, got, sizeof(got)), (ssize_t)(3 * GET_LEN));
	assert_memory_equal(got + 2 * GET_LEN, get, GET_LEN);
	assert_int_equal(gnutls_record_recv(s.p.srv, got, sizeof(got)), GNUTLS_E_AGAIN);
	served_close(&s);
}

/* A reader whose buffer takes one request at a time: while whole records
 * are held, gnutls_record_check_pending says so (libmicrohttpd reads again
 * at once when a read filled its buffer and it does). */
static void full_read_tells_of_held_records(void **state)
{
	(void)state;
	struct served s;
	served_open(&s, 3);
	char got[GET_LEN];
	for (int i = 0; i < 3; i++) {
		assert_int_equal(gnutls_record_recv(s.p.srv, got, sizeof(got)), (ssize_t)GET_LEN);
		assert_int_equal(gnutls_record_check_pending(s.p.srv) > 0, i < 2);
	}
	served_close(&s);
}

/* A request and the client's close_notify, read together: the request,
 * then the end, which the socket polls readable for (libmicrohttpd reads
 * only then). */
static void close_notify_after_held_request(void **state)
{
	(void)state;
	struct served s;
	served_open(&s, 1);
	assert_int_equal(gnutls_bye(s.p.cli, GNUTLS_SHUT_WR), 0);
	char got[4096];
	assert_int_equal(gnutls_record_recv(s.p.srv, got, sizeof(got)), (ssize_t)GET_LEN);
	struct pollfd f = { .fd = s.p.fd[0], .events = POLLIN };
	assert_int_equal(poll(&f, 1, 0), 1);
	assert_int_equal(gnutls_record_recv(s.p.srv, got, sizeof(got)), 0);
	served_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_record_arrives_whole),
		cmocka_unit_test(peer_that_reads_nothing_is_cut_off),
		cmocka_unit_test(held_records_in_one_read),
		cmocka_unit_test(full_read_tells_of_held_records),
		cmocka_unit_test(close_notify_after_held_request),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

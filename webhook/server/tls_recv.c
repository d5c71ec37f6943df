/*
 * tls_recv.c — every byte of a request passes the framing check
 * (http_head.h) on its way from TLS to libmicrohttpd's parser.
 *
 * libmicrohttpd 0.9.75 offers no hook between the socket and its parser,
 * and no option for what it lets through (http_head.h lists it); with TLS
 * the only place a request's bytes pass through code we can reach is
 * GnuTLS's gnutls_record_recv, which libmicrohttpd calls (connection_https.c,
 * recv_tls_adapter) through its dynamic symbol. This file defines that
 * symbol in the binary, which the dynamic linker binds before GnuTLS's own
 * (an executable's definition comes first); it calls GnuTLS's with dlsym
 * (RTLD_NEXT) and hands the bytes to the check when the session is one of
 * the server's, registered when its connection started. Any other session
 * (libcurl's, to the API server) passes untouched. tw_tls_recv_active says
 * whether the binding took, and the server says so at start when not.
 *
 * A request the check refuses is answered here, on the session, before
 * libmicrohttpd has seen its head: the status the check chose, a JSON
 * error, Connection: close; then libmicrohttpd reads an end of stream and
 * closes the connection.
 *
 * The requests before it come first. libmicrohttpd gets every byte up to
 * the refused head and answers those requests in order; only when the last
 * of them is complete (tw_tls_conn_busy) is the refusal answered and the
 * end given. The peer's own end (close_notify, or a close without it) waits
 * the same way for a request it sent whole: libmicrohttpd 0.9.75 reads a
 * resumed connection before it answers it, and closes a request whose end
 * of stream comes first without its answer. Until then libmicrohttpd is
 * told there is nothing yet to read. It reads again only a socket that
 * polls readable, so once the last answer is out the socket's read side is
 * shut, which makes it so; such a connection then closes without lingering
 * (tls_linger.c: the kernel resets a socket shut both ways on new data).
 * A refusal after an answer that closes the connection (Connection: close,
 * or one given before its body) is never answered, as nothing may follow
 * that answer.
 */
#include <dlfcn.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "webhook/admission/admission.h"
#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"
#include "webhook/server/tls.h"

/* -------------------------------------------------------------- registry */

#define BUCKETS 1024

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static tw_tls_conn *buckets[BUCKETS];

static size_t bucket_of(const void *session)
{
	return ((uintptr_t)session >> 4) % BUCKETS;
}

void tw_tls_recv_register(tw_tls_conn *conn)
{
	pthread_mutex_lock(&reg_lock);
	tw_tls_conn **b = &buckets[bucket_of(conn->session)];
	/* A session freed by a connection still closing may have left its
	 * address to this one: the older entry no longer answers for it. */
	for (tw_tls_conn *o = *b; o; o = o->next)
		if (o->session == conn->session)
			o->stale = true;
	conn->next = *b;
	*b = conn;
	pthread_mutex_unlock(&reg_lock);
}

static void log_refusal(const tw_tls_conn *conn);

void tw_tls_recv_unregister(tw_tls_conn *conn)
{
	if (!conn->session)
		return; /* never registered */
	if (conn->head.status && !conn->answered)
		log_refusal(conn); /* a request before it closed the connection */
	pthread_mutex_lock(&reg_lock);
	for (tw_tls_conn **p = &buckets[bucket_of(conn->session)]; *p; p = &(*p)->next) {
		if (*p == conn) {
			*p = conn->next;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
}

/* The server's connection of session s, or NULL (not one of ours). */
static tw_tls_conn *lookup(gnutls_session_t s)
{
	pthread_mutex_lock(&reg_lock);
	tw_tls_conn *c = buckets[bucket_of(s)];
	while (c && (c->session != s || c->stale))
		c = c->next;
	pthread_mutex_unlock(&reg_lock);
	/* A registered address is ours only while libmicrohttpd's connection
	 * is the session's own pointer (a session of libcurl never is). */
	return c && gnutls_session_get_ptr(s) == c->mhd ? c : NULL;
}

tw_tls_conn *tw_tls_recv_lookup(gnutls_session_t s)
{
	return lookup(s);
}

void tw_tls_conn_busy(struct MHD_Connection *c, int delta)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	tw_tls_conn *conn = ci ? ci->socket_context : NULL;
	if (!conn)
		return;
	conn->busy += delta;
	conn->started += delta > 0;
	/* The last answer before a held end is out: libmicrohttpd reads again
	 * only a readable socket, and it should now read that end. */
	if (!conn->busy && conn->held && !conn->rd_shut) {
		shutdown(conn->fd, SHUT_RD);
		conn->rd_shut = true;
	}
}

bool tw_tls_recv_peer_sending(const tw_tls_conn *conn)
{
	if (conn->fd < 0 || conn->rd_shut || (conn->ended && !conn->head.status))
		return false; /* it has ended, or it cannot linger (read side shut) */
	int unread = 0;
	return !tw_head_between(&conn->head) || conn->ahead_len > 0 ||
	       (ioctl(conn->fd, FIONREAD, &unread) == 0 && unread > 0);
}

/* -------------------------------------------------------------- answers */

/* The refusal as one HTTP answer on the session; then the stream ends. */
static void answer(tw_tls_conn *conn)
{
	const tw_head *h = &conn->head;
	tp_buf body = TP_BUF_INIT(0), msg = TP_BUF_INIT(0);
	tp_arena *prev = tp_arena_enter(NULL);
	int rc = tw_json_error(h->error, &body);
	tp_arena_leave(prev);
	if (!rc)
		rc = tp_buf_addf(&msg, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
				       "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				 h->status, tw_head_reason(h->status), body.len, body.data);
	if (!rc) {
		gnutls_record_cork(conn->session);
		gnutls_record_send(conn->session, msg.data, msg.len);
		tw_tls_flush_session(conn->session, conn->fd, TW_TLS_FLUSH_MS);
	}
	tp_buf_free(&body);
	tp_buf_free(&msg);
}

/* Counted when found, answered or not. */
static void count_refusal(const tw_tls_conn *conn)
{
	const tw_head *h = &conn->head;
	tw_metrics_malformed(h->status);
	tw_metrics_request(NULL, TW_VERDICT_NONE, h->status, 0, 0);
	tw_metrics_error_answer(TW_ERR_MALFORMED);
}

static void log_refusal(const tw_tls_conn *conn)
{
	const tw_head *h = &conn->head;
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_WARN, conn->answered
					  ? "malformed request refused; connection closed"
					  : "malformed request after one answered with Connection: "
					    "close; connection closed unanswered");
	tw_log_int(&l, "code", h->status);
	tw_log_str(&l, "error", h->error);
	tw_log_end(&l);
}

/* The request libmicrohttpd is on has all its bytes: the stream is not in
 * a body, or in the body of a request after it (pipelined). */
static bool on_whole_request(const tw_tls_conn *conn)
{
	return !tw_head_in_body(&conn->head) || conn->started < conn->head.heads;
}

/* What libmicrohttpd reads once the stream has ended (conn->ended). A
 * request received whole is still in flight: "nothing yet", and it goes on
 * to answer it (a request cut short by the end gets the end at once: it
 * can never be answered). Then the refusal, if any, is answered, and the
 * end is read. */
static ssize_t stream_end(tw_tls_conn *conn)
{
	if (conn->busy && on_whole_request(conn)) {
		conn->held = true;
		return GNUTLS_E_AGAIN;
	}
	if (conn->head.status && !conn->answered) {
		answer(conn);
		conn->answered = true;
		log_refusal(conn);
	}
	return conn->end_rc;
}

/* ----------------------------------------------------------------- hook */

typedef ssize_t (*recv_fn)(gnutls_session_t, void *, size_t);
static recv_fn gnutls_own;
static pthread_once_t own_once = PTHREAD_ONCE_INIT;

static void find_own(void)
{
	/* RTLD_NEXT: the definition after this one, GnuTLS's. */
	gnutls_own = (recv_fn)dlsym(RTLD_NEXT, "gnutls_record_recv");
}

/* After a read of n > 0 bytes: the records read ahead and held whole
 * (tls_ahead.c), into the rest of data, so that none waits for a poll that
 * would never come. Stops at the first that is not data: its result (the
 * peer's close_notify, a close without it, an error) in *end, and true. */
static bool read_held(recv_fn own, gnutls_session_t session, tw_tls_conn *conn, char *data,
		      size_t size, ssize_t *n, int *end)
{
	while ((size_t)*n < size && tw_tls_ahead_whole(conn)) {
		ssize_t m = own(session, data + *n, size - (size_t)*n);
		if (m > 0) {
			*n += m;
			continue;
		}
		if (m == GNUTLS_E_AGAIN || m == GNUTLS_E_INTERRUPTED)
			return false;
		*end = (int)m;
		return true;
	}
	return false;
}

/* One read of GnuTLS's, reading ahead; then the records held whole. */
static ssize_t read_ahead(recv_fn own, gnutls_session_t session, tw_tls_conn *conn, void *data,
			  size_t size, bool *ended, int *end)
{
	tw_tls_ahead_begin(conn);
	ssize_t n = own(session, data, size);
	if (n > 0)
		*ended = read_held(own, session, conn, data, size, &n, end);
	if (!tw_tls_ahead_end(conn))
		shutdown(conn->fd, SHUT_RDWR); /* bytes lost: the connection cannot go on */
	return n;
}

ssize_t gnutls_record_recv(gnutls_session_t session, void *data, size_t data_size)
{
	pthread_once(&own_once, find_own);
	recv_fn own = gnutls_own;
	if (!own)
		return GNUTLS_E_INTERNAL_ERROR;
	tw_tls_conn *conn = lookup(session);
	if (!conn)
		return own(session, data, data_size); /* not ours */
	if (conn->ended)
		return stream_end(conn);
	bool ended = false;
	int end = 0;
	ssize_t n = read_ahead(own, session, conn, data, data_size, &ended, &end);
	if (n < 0 && n != GNUTLS_E_PREMATURE_TERMINATION)
		return n; /* nothing yet; a broken session */
	if (n <= 0) { /* the peer's end: its close_notify, or a close without it */
		conn->ended = true;
		conn->end_rc = (int)n;
		return stream_end(conn);
	}
	size_t ok = tw_head_feed(&conn->head, data, (size_t)n);
	if (ended) {
		/* The end came in the same read as the bytes before it: those
		 * first. The socket will not poll readable for it (it was read):
		 * shut, it does, as after the peer's own close. */
		conn->ended = true;
		conn->end_rc = end;
		shutdown(conn->fd, SHUT_RD);
		conn->rd_shut = true;
	}
	if (!conn->head.status)
		return n;
	conn->ended = true;
	count_refusal(conn);
	if (ok) { /* the requests before it first; the end waits for their answers */
		conn->held = true;
		return (ssize_t)ok;
	}
	return stream_end(conn);
}

bool tw_tls_recv_active(void)
{
	return dlsym(RTLD_DEFAULT, "gnutls_record_recv") == (void *)gnutls_record_recv;
}

/* ------------------------------------------- gnutls_record_check_pending */

/* libmicrohttpd reads again at once after a read that filled its buffer
 * when GnuTLS holds decrypted bytes; a whole record held by the read-ahead
 * (tls_ahead.c) counts too. */

typedef size_t (*pending_fn)(gnutls_session_t);
static pending_fn gnutls_pending;
static pthread_once_t pending_once = PTHREAD_ONCE_INIT;

static void find_pending(void)
{
	gnutls_pending = (pending_fn)dlsym(RTLD_NEXT, "gnutls_record_check_pending");
}

size_t gnutls_record_check_pending(gnutls_session_t session)
{
	pthread_once(&pending_once, find_pending);
	size_t n = gnutls_pending ? gnutls_pending(session) : 0;
	if (n)
		return n;
	const tw_tls_conn *c = tw_tls_recv_lookup(session);
	return c && tw_tls_ahead_whole(c) ? 1 : 0;
}

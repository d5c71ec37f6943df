/*
 * tls_record.c — an answer in one TLS record and one send.
 *
 * libmicrohttpd 0.9.75 writes an answer's headers and body with two
 * gnutls_record_send calls (mhd_send.c refuses vectored sends on TLS): two
 * records, two encryptions, two sendmsg. On Linux it also keeps every TLS
 * socket in TCP_CORK from its first answer on and pushes each answer out by
 * setting TCP_NODELAY (one setsockopt per answer, post_send_setopt).
 *
 * Here GnuTLS is corked before an answer is queued, so both writes land in
 * its buffer, and tw_tls_flush sends them as one record once libmicrohttpd
 * is done (its request-completed callback). The flush comes after
 * libmicrohttpd's push, so the first flush of a connection takes the socket
 * out of TCP_CORK for good; libmicrohttpd still believes it corked and
 * never corks it again, and every later answer leaves in its one sendmsg.
 */
#include "webhook/server/tls.h"
#include "policy/trainpolicy.h"
#include "webhook/core/clock.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

static gnutls_session_t session_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	return ci ? (gnutls_session_t)ci->tls_session : NULL;
}

bool tw_tls_cork(struct MHD_Connection *c, size_t len)
{
	gnutls_session_t s = len <= TW_TLS_CORK_MAX ? session_of(c) : NULL;
	if (!s)
		return false;
	gnutls_record_cork(s);
	return true;
}

int tw_tls_flush_session(gnutls_session_t s, int fd, unsigned wait_ms)
{
	long long until = tw_mono_ms() + wait_ms;
	int rc;
	/* An answer of a few KiB fits an idle connection's send buffer: the
	 * first call sends it all. Waiting is only for a peer that left earlier
	 * answers unread; past the bound it is cut off. */
	while ((rc = gnutls_record_uncork(s, 0)) == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
		if (tw_mono_ms() >= until)
			break;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		poll(&p, 1, 20);
	}
	if (rc < 0) { /* never a half-sent answer on a live connection */
		shutdown(fd, SHUT_RDWR);
		return TW_EFAILED;
	}
	return 0;
}

void tw_tls_flush(struct MHD_Connection *c)
{
	gnutls_session_t s = session_of(c);
	const union MHD_ConnectionInfo *fi =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *xi =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	tw_tls_conn *conn = xi ? xi->socket_context : NULL;
	if (!s || !fi || tw_tls_flush_session(s, fi->connect_fd, TW_TLS_FLUSH_MS))
		return;
	if (conn && !conn->tcp_uncorked) {
		int off = 0;
		setsockopt(fi->connect_fd, IPPROTO_TCP, TCP_CORK, &off, sizeof(off)); /* pushes it too */
		conn->tcp_uncorked = true;
	}
}

/*
 * tls_record.c — an answer in one TLS record and one send, and no other
 * system call.
 *
 * libmicrohttpd 0.9.75 writes an answer's headers and body with two
 * gnutls_record_send calls (mhd_send.c refuses vectored sends on TLS): two
 * records, two encryptions, two sendmsg. Here GnuTLS is corked before an
 * answer is queued, so both writes land in its buffer, and tw_tls_flush
 * sends them as one record once libmicrohttpd is done (its
 * request-completed callback).
 *
 * libmicrohttpd also tracks whether it corked the socket (sk_corked,
 * sk_nodelay in mhd_send.c): it corks it (TCP_CORK) to write headers it
 * wants held for their body, which it does when the two come together in
 * under 1,400 bytes, and from then on, on Linux, pushes every answer of a
 * TLS connection by setting TCP_NODELAY after its last write: a setsockopt
 * per answer, for as long as it believes the socket corked, which is for
 * good (it never uncorks a socket it can push that way). It neither corks
 * nor pushes when it writes headers alone that it means to push at once
 * (an answer whose body comes later, or past 1,400 bytes) and the socket
 * is uncorked with TCP_NODELAY set, which it sets once, at a connection's
 * first answer. So an answer small enough to be gathered here is given
 * to it as a body it reads from a callback (tw_tls_response): its headers
 * are pushed alone, into GnuTLS's cork, and no socket of the server is ever
 * corked. The socket then sends each answer at once, in its one sendmsg.
 * The listening socket has TCP_NODELAY already (listen.c, inherited at
 * accept), so no write before the first answer waits for an ACK either.
 */
#include "webhook/server/tls.h"
#include "policy/trainpolicy.h"
#include "webhook/core/clock.h"

#include <microhttpd.h>
#include <poll.h>
#include <string.h>
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
	if (s && fi)
		tw_tls_flush_session(s, fi->connect_fd, TW_TLS_FLUSH_MS);
}

/* The body's bytes from pos: libmicrohttpd asks once, for all of them (its
 * block is the body's size). */
static ssize_t read_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	const tp_buf *body = cls;
	size_t n = body->len - (size_t)pos < max ? body->len - (size_t)pos : max;
	memcpy(buf, body->data + pos, n);
	return (ssize_t)n;
}

struct MHD_Response *tw_tls_response(const tp_buf *body)
{
	if (body->len == 0 || body->len > TW_TLS_CORK_MAX) /* headers alone, or past 1,400 */
		return MHD_create_response_from_buffer(body->len, body->data ? body->data : (char *)"",
						       MHD_RESPMEM_PERSISTENT);
	return MHD_create_response_from_callback(body->len, body->len, read_body, (void *)body, NULL);
}

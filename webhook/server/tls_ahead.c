/*
 * tls_ahead.c — one recv per TLS record of a request, not two.
 *
 * GnuTLS reads a record in two calls of its pull function: the 5-byte
 * header, then the body of the length the header gives; by default each is
 * a recv. Here a connection's session pulls through tw_tls_ahead_pull: while
 * libmicrohttpd reads (inside gnutls_record_recv, tls_recv.c), a pull that
 * finds nothing held reads up to TW_TLS_AHEAD bytes at once, and GnuTLS's
 * pulls are answered from them. Outside a read (the handshake) a pull reads
 * what it is asked, as GnuTLS's own does.
 *
 * Bytes held here are invisible to libmicrohttpd, which learns that there
 * is something to read from poll (the socket) or, after a read that filled
 * its buffer, from gnutls_record_check_pending (GnuTLS's decrypted bytes).
 * A request held here would wait for bytes that may never come. So:
 *   - a read goes on into what libmicrohttpd asked for while a whole record
 *     is held (tw_tls_ahead_more): a request pipelined behind another, or
 *     the head of the next request that came with the end of this one,
 *     reaches it in the same read;
 *   - when its buffer is full first, gnutls_record_check_pending (bound
 *     before GnuTLS's in tls_recv.c, as gnutls_record_recv is) counts a
 *     whole record held (tw_tls_ahead_whole), and libmicrohttpd reads
 *     again at once;
 *   - the part of a record whose rest has not come is the one thing left
 *     held between reads, and its rest makes the socket readable.
 * What a record held whole holds (data, the peer's close_notify, an error)
 * is found by decrypting it; an end found so is given after the bytes
 * before it (tls_recv.c).
 *
 * Memory: the read lands in a buffer of the thread; only bytes still held
 * when the read ends (a partial record, or records past a full buffer of
 * libmicrohttpd) are kept per connection, at most TW_TLS_AHEAD.
 */
#include "webhook/server/tls.h"

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define RECORD_HEADER 5

static _Thread_local char scratch[TW_TLS_AHEAD];

ssize_t tw_tls_ahead_pull(gnutls_transport_ptr_t p, void *data, size_t len)
{
	tw_tls_conn *c = p;
	if (!c->ahead_len) {
		if (!c->ahead_on || len >= TW_TLS_AHEAD)
			return recv(c->fd, data, len, 0);
		ssize_t n = recv(c->fd, scratch, TW_TLS_AHEAD, 0);
		if (n <= 0)
			return n;
		c->ahead = scratch;
		c->ahead_len = (size_t)n;
	}
	size_t n = len < c->ahead_len ? len : c->ahead_len;
	memcpy(data, c->ahead, n);
	c->ahead += n;
	c->ahead_len -= n;
	return (ssize_t)n;
}

int tw_tls_ahead_pull_timeout(gnutls_transport_ptr_t p, unsigned ms)
{
	const tw_tls_conn *c = p;
	if (c->ahead_len)
		return 1;
	struct pollfd f = { .fd = c->fd, .events = POLLIN };
	return poll(&f, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
}

bool tw_tls_ahead_whole(const tw_tls_conn *c)
{
	if (c->ahead_len < RECORD_HEADER)
		return false;
	const unsigned char *h = (const unsigned char *)c->ahead;
	return c->ahead_len - RECORD_HEADER >= ((size_t)h[3] << 8 | h[4]);
}

void tw_tls_ahead_begin(tw_tls_conn *c)
{
	c->ahead_on = true;
}

bool tw_tls_ahead_end(tw_tls_conn *c)
{
	c->ahead_on = false;
	if (!c->ahead_len) {
		free(c->kept);
		c->kept = NULL;
		return true;
	}
	if (c->ahead < scratch || c->ahead >= scratch + sizeof(scratch))
		return true; /* still in the connection's own buffer */
	/* What is left in the thread's buffer moves to the connection's. */
	if (!c->kept && !(c->kept = malloc(TW_TLS_AHEAD))) {
		c->ahead_len = 0;
		return false; /* bytes lost: the caller ends the connection */
	}
	memcpy(c->kept, c->ahead, c->ahead_len);
	c->ahead = c->kept;
	return true;
}

void tw_tls_ahead_attach(tw_tls_conn *c)
{
	/* The pull's pointer is the connection; the push's stays the socket
	 * libmicrohttpd gave (gnutls_transport_set_int). */
	gnutls_transport_set_ptr2(c->session, c, (gnutls_transport_ptr_t)(intptr_t)c->fd);
	gnutls_transport_set_pull_function(c->session, tw_tls_ahead_pull);
	gnutls_transport_set_pull_timeout_function(c->session, tw_tls_ahead_pull_timeout);
}

void tw_tls_ahead_free(tw_tls_conn *c)
{
	free(c->kept);
	c->kept = NULL;
	c->ahead_len = 0;
}

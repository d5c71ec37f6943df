/*
 * webhook/server/tls.h — the serving certificate: loading, hot reload, and the
 * hooks that hand it to libmicrohttpd's GnuTLS sessions.
 *
 * The current pair lives in a refcounted credentials object. Each accepted
 * connection takes a reference when it starts (tw_tls_conn_started) and its
 * handshake serves that pair (tw_tls_cert_callback); the reference is
 * dropped when the connection closes. A reload swaps the current pointer
 * under a lock, so new connections get the new pair while established ones
 * keep the old one, which is freed after its last connection is gone.
 */
#ifndef TW_TLS_H
#define TW_TLS_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/trainpolicy.h"
#include "webhook/server/http_head.h"

/* TLS 1.2 minimum, TLS 1.3 preferred, AEAD ciphers with forward secrecy only
 * (what Go's crypto/tls, the API server's client, negotiates).
 *
 * AES-128-GCM first, in the server's order: it is what Go picks first on
 * CPUs with AES instructions, the key exchange gives 128-bit security either
 * way, and TLS 1.3's AES-256 suite brings SHA-384, whose key schedule nettle
 * runs without assembly (10% of a handshake's CPU in perf). Server CPU per
 * new connection under make bench's "Connection: close" load, median of 4
 * runs: 523 -> 440 us. */
#define TW_TLS_PRIORITIES                                                                 \
	"SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:" \
	"+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:"                 \
	"-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:%SERVER_PRECEDENCE"

/* How often the files are re-read when no inotify event came (certwatcher's
 * defaultWatchInterval). */
#define TW_TLS_POLL_MS 10000

typedef struct tw_tls tw_tls;

/* Load the pair at cert_path/key_path (PEM). Fails, with the reason in err,
 * when either file is unreadable, does not parse, or the key does not belong
 * to the certificate: TW_EFAILED. */
int tw_tls_open(tw_tls **out, const char *cert_path, const char *key_path, char *err,
		size_t errlen);
/* A pair that comes from memory (serve --manage-certs: the Secret) rather
 * than files: nothing is served until tw_tls_set_pem. */
int tw_tls_new(tw_tls **out);
/* Serve the PEM pair cert/key from now on (new handshakes; connections keep
 * the pair they started with). 1 when a new pair is served, 0 when it is the
 * pair already seen, TW_EFAILED (< 0) when it is broken (err says why,
 * naming source; the last good pair stays). */
int tw_tls_set_pem(tw_tls *t, const char *cert, const char *key, const char *source,
		   char *err, size_t errlen);
/* tw_tls_set_pem for a tw_pem_sink (cluster/certmgr.h): tls is the tw_tls. */
int tw_tls_serve_pem(void *tls, const char *cert, const char *key, const char *source,
		     char *err, size_t errlen);
/* Stops the watcher if running; frees the current pair. Call after the
 * daemon that uses it has stopped (no connection holds a reference). */
void tw_tls_close(tw_tls *t);

/* Re-read both files. Returns 1 when a new pair is now served, 0 when the
 * files are unchanged since the last attempt, TW_EFAILED (< 0) when the new
 * files are broken (the last good pair stays; the log says why, once per
 * change). */
int tw_tls_reload(tw_tls *t);

/* Watch the files' directories with inotify (re-armed after IN_IGNORED) and
 * re-read every poll_ms as a fallback (0: TW_TLS_POLL_MS), on a thread of its
 * own. TW_EFAILED (logged) when it cannot: the pair then stays as loaded. */
int tw_tls_watch(tw_tls *t, unsigned poll_ms);
void tw_tls_unwatch(tw_tls *t);

/* Does the pair in use cover the DNS name host (its subjectAltNames, as
 * the API server's client checks)? False without a pair. */
bool tw_tls_covers(tw_tls *t, const char *host);

/* The pair in use: notAfter (Unix seconds) and serial (lowercase hex). */
int64_t tw_tls_not_after(tw_tls *t);
void tw_tls_serial(tw_tls *t, char *out, size_t n);

struct MHD_Connection;
/* MHD_OPTION_NOTIFY_CONNECTION hooks: take / drop the connection's
 * reference on the current pair (kept in *socket_context), and register its
 * TLS session for the framing check (tls_recv.c). */
void tw_tls_conn_started(tw_tls *t, struct MHD_Connection *c, void **socket_context);
void tw_tls_conn_closed(void **socket_context);

/* What the server keeps per connection (libmicrohttpd's socket context). */
typedef struct tw_tls_conn {
	struct creds *creds; /* the pair current when it connected (a reference) */
	tw_tls *tls;         /* whose lingering close it closes through */
	/* the framing check (tls_recv.c), on the connection's thread: */
	struct tw_tls_conn *next;   /* the session registry's chain */
	gnutls_session_t session;
	struct MHD_Connection *mhd; /* the session's pointer: proof it is this one */
	bool stale;                 /* its session's address was taken by a newer one */
	int fd;
	int busy;                   /* requests between headers and completion */
	uint32_t started;           /* requests libmicrohttpd began (head.heads: whose
				       heads the check saw end) */
	tw_head head;
	/* the stream's end, held back while requests before it are answered: */
	bool ended;                 /* refused (head.status), or ended by the peer */
	bool held;                  /* libmicrohttpd was told "nothing yet" or given
				       only the bytes before the refusal */
	bool answered;              /* the refusal was written */
	bool rd_shut;               /* its read side was shut to wake libmicrohttpd */
	int end_rc;                 /* gnutls_record_recv's result at the end */
	/* bytes read ahead of GnuTLS's pulls (tls_ahead.c): */
	char *ahead;                /* the next of them, in the thread's buffer or kept */
	size_t ahead_len;           /* how many */
	char *kept;                 /* the connection's buffer, while bytes stay held
				       between reads (TW_TLS_AHEAD bytes) */
	bool ahead_on;              /* inside a read: pulls may read ahead */
} tw_tls_conn;

/* Reading ahead (tls_ahead.c): a record's header and body, and what
 * follows, in one recv of at most TW_TLS_AHEAD bytes, during reads. 4 KiB
 * holds the API server's usual review (1 to 5 KB) in one record; a longer
 * record takes one recv more. */
#define TW_TLS_AHEAD 4096
/* The connection's session pulls through tls_ahead.c from now on. */
void tw_tls_ahead_attach(tw_tls_conn *c);
/* GnuTLS's pull and pull-timeout functions for a connection's session. */
ssize_t tw_tls_ahead_pull(gnutls_transport_ptr_t p, void *data, size_t len);
int tw_tls_ahead_pull_timeout(gnutls_transport_ptr_t p, unsigned ms);
/* A read of libmicrohttpd begins / ends: pulls in between read ahead. At
 * the end what is still held is kept for the next read; false when it
 * could not be (out of memory: bytes were lost, the caller ends it). */
void tw_tls_ahead_begin(tw_tls_conn *c);
bool tw_tls_ahead_end(tw_tls_conn *c);
/* A whole record is held: GnuTLS can take it without a recv. */
bool tw_tls_ahead_whole(const tw_tls_conn *c);
/* The connection closes: its kept bytes go. */
void tw_tls_ahead_free(tw_tls_conn *c);
/* The server's connection of session s (registered), or NULL. */
tw_tls_conn *tw_tls_recv_lookup(gnutls_session_t s);

/* The framing check of every request's bytes as libmicrohttpd reads them
 * out of TLS (tls_recv.c): a session is checked between these two.
 * Unregistered, a connection whose refusal was never answered (a request
 * before it closed the connection) is logged. */
void tw_tls_recv_register(tw_tls_conn *conn);
void tw_tls_recv_unregister(tw_tls_conn *conn);
/* The connection is closing while its peer may still be sending: in a
 * request's head or body, refused, or with bytes unread on its socket. */
bool tw_tls_recv_peer_sending(const tw_tls_conn *conn);
/* False when libmicrohttpd does not read through the check (the binary was
 * linked so that its gnutls_record_recv does not come first). */
bool tw_tls_recv_active(void);
/* A request of c began / ended (http.c). The end of the stream (a refusal,
 * the peer's close) waits for the requests before it to be answered; when
 * the last is, the socket's read side is shut so that libmicrohttpd reads
 * that end (tls_recv.c). */
void tw_tls_conn_busy(struct MHD_Connection *c, int delta);

/* The lingering close (tls_linger.c). A connection closed after an early
 * answer (413 past --max-body, 503 over the memory budget, a refusal of the
 * framing check) may have a peer still writing its body: closed at once
 * with bytes unread, the socket sends a reset, and a client that sees its
 * write fail before it reads (Go's transport may) never sees the answer.
 * Instead the write side is shut after the TLS close_notify (the peer reads
 * the answer, then the end), and the rest the peer sends is read and thrown
 * away for a short, bounded while, as nginx's lingering_close does. */
#define TW_LINGER_MS 2000                 /* at most this long per socket */
#define TW_LINGER_BYTES ((size_t)16 << 20) /* at most this much read, then only waited on */
#define TW_LINGER_MAX 64                  /* sockets at once; past it, the oldest goes */
typedef struct tw_linger tw_linger;
tw_linger *tw_linger_new(void);
/* Close every socket still lingering and stop the thread, if started. */
void tw_linger_free(tw_linger *l);
/* fd's connection is being closed (libmicrohttpd closes fd after this):
 * shut its write side and keep a duplicate of it for the linger thread
 * (started at the first call), which closes it once the peer has ended, or
 * TW_LINGER_MS have passed. When TW_LINGER_MAX sockets linger already, the
 * one nearest its time bound is closed for it. */
void tw_linger_add(tw_linger *l, int fd);
/* How many sockets linger now. */
int tw_linger_held(tw_linger *l);

/* One TLS record per answer (webhook/server/tls_record.c). libmicrohttpd sends an
 * answer's headers and body as two records (two sendmsg calls, two
 * encryptions); corked, GnuTLS keeps both and tw_tls_flush sends them as one
 * when the answer is complete.
 * Only for answers of at most TW_TLS_CORK_MAX bytes: a bigger one goes out as
 * libmicrohttpd writes it, so a slow reader never holds it in our memory. */
#define TW_TLS_CORK_MAX ((size_t)8192)
/* Cork the connection's TLS session for an answer of len body bytes; true
 * when it was corked (tw_tls_flush must follow once the answer is queued). */
bool tw_tls_cork(struct MHD_Connection *c, size_t len);
/* Send what the cork holds. An answer this small fits an idle connection's
 * send buffer, so only a peer that pipelines requests and reads no answers
 * fills it: after TW_TLS_FLUSH_MS of that its connection is shut, and the
 * worker thread (blocked meanwhile) goes back to the others. */
#define TW_TLS_FLUSH_MS 200
void tw_tls_flush(struct MHD_Connection *c);
/* The same on a session and its socket: 0 when all was sent, TW_EFAILED
 * when the peer took nothing for wait_ms (or the connection failed): fd is
 * then shut. */
int tw_tls_flush_session(gnutls_session_t s, int fd, unsigned wait_ms);

/* libmicrohttpd's answer with body (kept by the caller until the request
 * completes), made so that libmicrohttpd never corks the socket and so
 * never pushes with a system call of its own (tls_record.c): a body of at
 * most TW_TLS_CORK_MAX bytes is read from a callback, its headers written
 * alone; a bigger one (its headers and body past 1,400 bytes) is given as
 * it is. NULL when out of memory. */
struct MHD_Response *tw_tls_response(const tp_buf *body);

/* MHD_OPTION_HTTPS_CERT_CALLBACK: serves the pair the connection holds. */
int tw_tls_cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
			 int nreqs, const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
			 gnutls_pcert_st **pcert, unsigned int *pcert_length,
			 gnutls_privkey_t *privkey);

#endif /* TW_TLS_H */

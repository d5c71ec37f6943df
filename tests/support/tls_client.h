/*
 * tls_client.h — a raw HTTPS client for the framing and load tests: it sends
 * exactly the bytes it is given (malformed requests that libcurl would never
 * write) over TLS to the real server (sp_server), and reads exactly what
 * comes back, down to whether the server closed the connection. OpenSSL,
 * so that nothing of the server's GnuTLS is on the client's side.
 */
#ifndef TT_TLS_CLIENT_H
#define TT_TLS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "tests/support/server_proc.h"

typedef struct tc_conn tc_conn;

/* A TLS connection to the server (its CA trusted), or NULL. */
tc_conn *tc_connect(const sp_server *s);
void tc_close(tc_conn *c);
/* Write all of p; 0, or -1 once the server has closed or reset. */
int tc_write(tc_conn *c, const void *p, size_t n);

/* One answer as it arrived. */
typedef struct tc_answer {
	char *raw;          /* every byte read (NUL-terminated), head and body */
	size_t len;
	int status;         /* from the first status line, 0 when none */
	char status_line[128];
	char ctype[128];    /* Content-Type, "" when absent */
	char connection[32];/* Connection */
	char retry_after[32];
	char *body;         /* into raw: after the first blank line */
	int status_lines;   /* how many "HTTP/1." lines start a line of raw */
	bool closed;        /* the server closed (or reset) the connection after it */
	size_t after;       /* bytes that came after it, while the close was awaited */
	bool write_failed;  /* tc_send_*: a write failed (the server had closed or reset)
			       before any answer was read */
} tc_answer;

/* Read one answer: its head, then Content-Length bytes of body; then wait up
 * to close_ms for the server to close (answer->closed; 0: do not wait).
 * 0, or -1 when nothing came within timeout_ms. */
int tc_read_answer(tc_conn *c, int timeout_ms, int close_ms, tc_answer *a);
/* Write n bytes of p while reading: stops writing as soon as an answer
 * arrives (a client that reads while it sends, as Go's does), then reads it
 * as tc_read_answer. *sent: the bytes written before the answer came. A
 * write that fails first is noted (a->write_failed), and what came is read
 * all the same: a client that stops at a failed write (Go's transport may
 * report it rather than the answer) would have lost it. */
int tc_send_reading(tc_conn *c, const void *p, size_t n, int timeout_ms, int close_ms,
		    size_t *sent, tc_answer *a);
/* The same for a client that looks for an answer only between chunks of
 * chunk bytes, and while a write waits (its writes are full chunks). */
int tc_send_chunks(tc_conn *c, const void *p, size_t n, size_t chunk, int timeout_ms,
		   int close_ms, size_t *sent, tc_answer *a);
/* The client is done sending: its close_notify, and with tcp_too its TCP
 * FIN; it reads on. */
void tc_shutdown_write(tc_conn *c, bool tcp_too);
void tc_answer_free(tc_answer *a);

/* The TrainJob route's POST of deploy/samples/admissionreview-trainjob.json,
 * its body padded with spaces to at least min bytes (past 32 KiB it is
 * decided on a decider), with extra header lines before Content-Length
 * (each ending in CRLF; "" for none). malloc'd; NULL when the sample
 * cannot be read. */
char *tc_review_post(size_t min, const char *extra);

#endif

/*
 * webhook/server/http_head.h — the framing of every request on a
 * connection, checked from its bytes as they come out of TLS, before
 * libmicrohttpd parses them (http_head.c; fed by tls_recv.c).
 *
 * libmicrohttpd 0.9.75 takes a bare LF for a line end (a TODO in its
 * parser), joins folded header lines, cuts a path at a NUL, reads a body by
 * its first Content-Length whatever the others say, waits for the end of a
 * Transfer-Encoding it does not know (gzip, identity), sends two status
 * lines for a malformed Content-Length, and answers its own errors with an
 * HTML page without Content-Type; none of it can be configured. Here RFC
 * 9112's rules are applied to the bytes instead: a request that breaks one
 * is refused with a JSON error and the connection is closed.
 *
 * The check is a state machine over the stream, a byte at a time and never
 * a copy of the head: a connection costs this struct whatever its headers.
 * A body is skipped by its Content-Length, so the next head on a kept
 * connection is found.
 */
#ifndef TW_HTTP_HEAD_H
#define TW_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A head longer than this is refused (431; 414 for a request line that
 * long): far above what the API server sends, and below what
 * libmicrohttpd's 16 KiB connection pool holds, so it never meets its own. */
#define TW_HEAD_MAX_BYTES 8192
#define TW_HEAD_MAX_FIELDS 100

typedef struct tw_head {
	uint8_t phase;
	uint8_t which;        /* the field being read: one the check reads, or none */
	uint8_t blank_lines;  /* empty lines before a request line */
	uint8_t ver_len, name_len, val_len;
	bool val_long;        /* the field's value did not fit val */
	bool http11;
	bool has_cl, has_te, te_chunked;
	bool stepwise;        /* every byte through the state machine, no runs: the
	                       * reference tests check the runs against */
	uint8_t hosts;
	uint16_t fields;
	uint32_t head_bytes;  /* of this request's head so far */
	uint64_t cl;
	uint64_t body_left;   /* bytes of body still to come */
	uint32_t heads;       /* requests whose head has ended, on this connection */
	char ver[9];
	char name[20];        /* lowercased, only as long as the names the check reads */
	char val[24];
	/* once refused: */
	int status;           /* 0 while nothing is wrong */
	const char *error;    /* the JSON error's text */
} tw_head;

void tw_head_init(tw_head *h);
/* Check the next n bytes of the stream. Returns n while nothing is wrong;
 * else the offset in p where the refused request's head began (0 when it
 * began in an earlier call), with h->status and h->error set. Once refused,
 * every later call returns 0. */
size_t tw_head_feed(tw_head *h, const char *p, size_t n);
/* Where the stream is: between two requests (nothing of a next one has
 * come), or inside a request's body (more of it to come). Neither: in a
 * head, or refused. */
bool tw_head_between(const tw_head *h);
bool tw_head_in_body(const tw_head *h);
/* The reason phrase of a status the check answers. */
const char *tw_head_reason(int status);

#endif /* TW_HTTP_HEAD_H */

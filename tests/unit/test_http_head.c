/*
 * test_http_head.c — the framing check of webhook/server/http_head.c:
 * requests it lets through (whole, a byte at a time, kept-alive one after
 * another with their bodies), and each malformed framing with the status
 * and error it is refused with, and where the refused request began; where
 * the stream is between the requests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/server/http_head.h"

#define OK_POST                                                                          \
	"POST /validate HTTP/1.1\r\nHost: w\r\nContent-Type: application/json\r\n"        \
	"Content-Length: 5\r\n\r\n{\"a\":"

/* Feed text whole; the return value. */
static size_t feed(tw_head *h, const char *text, size_t len)
{
	tw_head_init(h);
	return tw_head_feed(h, text, len);
}

/* Feed text a byte at a time: every call returns 1 until a refusal. */
static int feed_bytes(tw_head *h, const char *text, size_t len)
{
	tw_head_init(h);
	for (size_t i = 0; i < len; i++)
		if (tw_head_feed(h, text + i, 1) != 1)
			return h->status;
	return 0;
}

static void passes(const char *text)
{
	tw_head h;
	size_t n = strlen(text);
	if (feed(&h, text, n) != n || h.status)
		fail_msg("refused %d (%s): %s", h.status, h.error, text);
	assert_int_equal(feed_bytes(&h, text, n), 0);
}

static void refused(const char *text, int status, const char *part)
{
	tw_head h;
	size_t n = strlen(text);
	size_t at = feed(&h, text, n);
	if (h.status != status || !h.error || !strstr(h.error, part))
		fail_msg("%s\n-> %d %s (want %d \"%s\")", text, h.status, h.error ? h.error : "",
			 status, part);
	assert_int_equal(at, 0);
	assert_int_equal(tw_head_feed(&h, "GET / HTTP/1.1\r\n", 16), 0); /* stays refused */
	assert_int_equal(feed_bytes(&h, text, n), status);
}

static void good_requests(void **state)
{
	(void)state;
	passes("GET /healthz HTTP/1.1\r\nHost: localhost:9443\r\n\r\n");
	passes("GET /healthz HTTP/1.0\r\n\r\n"); /* no Host needed */
	passes(OK_POST);
	passes("\r\nGET / HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nX-Tab:\tv\t\r\n\r\n");
	passes("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-length: 3\r\n\r\n"
	       "abc"); /* the same length twice */
	passes("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n");
	passes("GET /x?timeout=10s&a=%20 HTTP/1.1\r\nHOST: h\r\nUser-Agent: kube-apiserver-"
	       "admission\r\nAccept-Encoding: gzip\r\nX-Obs: caf\xc3\xa9\r\n\r\n");
}

/* Requests on one connection: the body is skipped by its length, and the
 * next head checked; the return value says where a refused one began. */
static void keep_alive_stream(void **state)
{
	(void)state;
	const char *good = OK_POST OK_POST "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
	tw_head h;
	assert_int_equal(feed(&h, good, strlen(good)), strlen(good));
	assert_int_equal(feed_bytes(&h, good, strlen(good)), 0);
	const char *bad = OK_POST "GET /\0x HTTP/1.1\r\nHost: h\r\n\r\n";
	size_t n = strlen(OK_POST) + 30;
	assert_int_equal(feed(&h, bad, n), strlen(OK_POST));
	assert_int_equal(h.status, 400);
	/* a bad head after a body that came in another call: it began here */
	tw_head_init(&h);
	assert_int_equal(tw_head_feed(&h, OK_POST, strlen(OK_POST) - 2), strlen(OK_POST) - 2);
	assert_int_equal(tw_head_feed(&h, "a}GET / HTTP/1.1\n", 17), 2);
	assert_int_equal(h.status, 400);
	const char *second = "GET / HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\n\r\n";
	assert_int_equal(feed(&h, second, strlen(second)), 27);
	assert_non_null(strstr(h.error, "must have a Host"));
}

/* Where the stream is, as the server reads it to hold a connection's end
 * for the requests before it, and to linger on a peer still sending. */
static void where_the_stream_is(void **state)
{
	(void)state;
	tw_head h;
	tw_head_init(&h);
	assert_true(tw_head_between(&h));
	tw_head_feed(&h, "GET / HTTP/1.1\r\nHo", 18);
	assert_false(tw_head_between(&h));
	assert_false(tw_head_in_body(&h));
	tw_head_feed(&h, "st: h\r\n\r\n", 9);
	assert_true(tw_head_between(&h));
	assert_int_equal(h.heads, 1);
	tw_head_feed(&h, OK_POST, strlen(OK_POST) - 2);
	assert_true(tw_head_in_body(&h));
	assert_false(tw_head_between(&h));
	assert_int_equal(h.heads, 2);
	tw_head_feed(&h, "a:", 2);
	assert_true(tw_head_between(&h));
	tw_head_feed(&h, "\r\n", 2); /* an empty line before a request line */
	assert_false(tw_head_between(&h));
	tw_head_feed(&h, "\n", 1);
	assert_int_equal(h.status, 400);
	assert_false(tw_head_between(&h));
	assert_false(tw_head_in_body(&h));
	assert_int_equal(h.heads, 2);
}

static void line_ends(void **state)
{
	(void)state;
	refused("GET / HTTP/1.1\nHost: h\n\n", 400, "bare LF");
	refused("GET / HTTP/1.1\r\nHost: h\n\r\n", 400, "bare LF");
	refused("GET / HTTP/1.1\r\nHost: h\r\n\n", 400, "bare LF");
	refused("\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "bare LF");
	refused("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400, "not followed by LF");
	refused("GET / HTTP/1.1\r\nHost: h\r\n X: folded\r\n\r\n", 400, "line folding");
	refused("GET / HTTP/1.1\r\nHost: h\r\n\tfolded\r\n\r\n", 400, "line folding");
}

static void request_lines(void **state)
{
	(void)state;
	static const char nul[] = "GET /healthz\0/x HTTP/1.1\r\nHost: h\r\n\r\n";
	tw_head h;
	feed(&h, nul, sizeof(nul) - 1);
	assert_int_equal(h.status, 400);
	assert_non_null(strstr(h.error, "NUL"));
	refused("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", 400, "HTTP version");
	refused("GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n", 400, "percent-encode");
	refused("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", 400, "percent-encode");
	refused("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "percent-encode");
	refused("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400, "method");
	refused("GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505, "HTTP/1.1");
	refused("GET / HTTP/1.2\r\nHost: h\r\n\r\n", 505, "HTTP/1.1");
	refused("GET / HTTX/1.1\r\nHost: h\r\n\r\n", 400, "HTTP version");
	refused("GET / HTTP/1.1 x\r\nHost: h\r\n\r\n", 400, "goes on");
	refused("GET /\r\nHost: h\r\n\r\n", 400, "no HTTP version");
}

static void header_lines(void **state)
{
	(void)state;
	refused("GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400, "whitespace before its colon");
	refused("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", 400, "no colon");
	refused("GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", 400, "no name");
	refused("GET / HTTP/1.1\r\nHost: h\r\nX(y: v\r\n\r\n", 400, "token");
	refused("GET / HTTP/1.1\r\nHost: h\r\nX: a\x01" "b\r\n\r\n", 400, "control");
	refused("GET / HTTP/1.1\r\n\r\n", 400, "must have a Host");
	refused("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "more than one Host");
}

static void lengths_and_codings(void **state)
{
	(void)state;
	refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: "
		"chunked\r\n\r\n", 400, "both Content-Length and Transfer-Encoding");
	refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\nContent-Length: "
		"5\r\n\r\n", 400, "both");
	refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		400, "different values");
	refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5x\r\n\r\n", 400,
		"not a number");
	refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400, "not a number");
	refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\n", 400,
		"not a number");
	refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", 400, "not a number");
	refused("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n",
		413, "larger");
	refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", 411,
		"Content-Length");
	refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501,
		"not implemented");
	refused("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: "
		"chunked\r\n\r\n", 501, "not implemented");
}

static void limits(void **state)
{
	(void)state;
	char *big = malloc(TW_HEAD_MAX_BYTES + 100);
	assert_non_null(big);
	/* a head of exactly the limit passes, one byte more is 431 */
	int n = snprintf(big, TW_HEAD_MAX_BYTES + 100, "GET / HTTP/1.1\r\nHost: h\r\nX: ");
	int pad = TW_HEAD_MAX_BYTES - n - 4;
	memset(big + n, 'a', (size_t)pad);
	memcpy(big + n + pad, "\r\n\r\n", 5);
	passes(big);
	memcpy(big + n + pad, "a\r\n\r\n", 6);
	refused(big, 431, "larger than 8 KiB");
	memcpy(big, "GET /", 5);
	memset(big + 5, 'a', TW_HEAD_MAX_BYTES);
	memcpy(big + 5 + TW_HEAD_MAX_BYTES, " HTTP/1.1\r\n\r\n", 14);
	refused(big, 414, "request line");
	free(big);
	char many[4096] = "GET / HTTP/1.1\r\nHost: h\r\n";
	for (int i = 0; i < TW_HEAD_MAX_FIELDS; i++)
		strcat(many, "X: y\r\n");
	strcat(many, "\r\n");
	refused(many, 431, "more than 100 header lines");
	assert_string_equal(tw_head_reason(431), "Request Header Fields Too Large");
	assert_string_equal(tw_head_reason(501), "Not Implemented");
}

/* The check takes runs of ordinary bytes of a target, a header name or a
 * value at once (head_run): fed whole or in pieces of every size, a stream
 * must leave the check in the same state, byte for byte, as a byte at a
 * time through the state machine alone (stepwise), and be refused at the
 * same place. The streams are made of pieces that
 * sit at the runs' edges: names and values longer than the check keeps,
 * upper case, tabs and leading spaces, obs-text, control bytes, bare CR
 * and LF, heads at the 8 KiB limit. */
static const char *const lines[] = { /* request lines, the first ones good */
	"POST /validate-trainer-kubeflow-org-v1alpha1-trainjob?timeout=10s HTTP/1.1\r\n",
	"GET / HTTP/1.1\r\n", "GET /a\x01 HTTP/1.1\r\n", "GET /caf\xc3\xa9 HTTP/1.1\r\n",
	"\nGET / HTTP/1.1\r\n",
};
static const char *const fields[] = { /* header lines, the first ones good */
	"Host: kube\r\n", "HOST:\t h \t\r\n", "Content-Length: 5\r\n", "CONTENT-LENGTH:  5 \r\n",
	"X-A-Very-Long-Header-Name-Longer-Than-Twenty: v\r\n", "X-Obs: caf\xc3\xa9 \xff\r\n",
	"X-Tab: a\tb\r\n", "!#$%&'*+-.^_`|~: v\r\n", "Content-Type: application/json\r\n",
	"content-length: 12345678901234567890123\r\n", "Content-Length: 4\r\n",
	"Transfer-Encoding: chunked\r\n", "Transfer-Encoding: gzip, chunked\r\n",
	"X-Ctl: a\x01b\r\n", "X-Del: a\x7f\r\n", "X-Cr: a\rb\r\n", "X-Lf: a\nb\r\n",
	"Bad Name: v\r\n", "Bad(Name): v\r\n", " folded\r\n",
};
#define GOOD_LINES 2
#define GOOD_FIELDS 9

static bool put(char *out, size_t cap, size_t *len, const char *p, size_t n)
{
	if (*len + n >= cap)
		return false;
	memcpy(out + *len, p, n);
	*len += n;
	return true;
}

/* One to three requests; a piece is bad one time in eight. */
static size_t make_stream(char *out, size_t cap, unsigned *seed)
{
	static char pad[8400];
	size_t len = 0;
	int requests = 1 + (int)(rand_r(seed) % 3);
	for (int q = 0; q < requests; q++) {
		unsigned r = (unsigned)rand_r(seed);
		size_t nl = sizeof(lines) / sizeof(*lines);
		const char *line = lines[r % 8 ? r / 8 % GOOD_LINES : r / 8 % nl];
		if (!put(out, cap, &len, line, strlen(line)))
			break;
		int count = (int)(rand_r(seed) % 6);
		for (int i = 0; i < count; i++) {
			r = (unsigned)rand_r(seed);
			if (r % 32 == 0) { /* a value at the 8 KiB limit, or just past it */
				size_t n = 8000 + rand_r(seed) % 400;
				memset(pad, r & 64 ? 'N' : 'v', n);
				put(out, cap, &len, "X-Big: ", 7);
				put(out, cap, &len, pad, n);
				put(out, cap, &len, "\r\n", 2);
				continue;
			}
			size_t nf = sizeof(fields) / sizeof(*fields);
			const char *f = fields[r % 8 ? r / 8 % GOOD_FIELDS : r / 8 % nf];
			put(out, cap, &len, f, strlen(f));
		}
		put(out, cap, &len, "\r\n{\"a\":", 2 + (rand_r(seed) % 2) * 5);
	}
	return len;
}

static void runs_as_bytes(void **state)
{
	(void)state;
	static char text[32768];
	unsigned seed = 7;
	int refused_any = 0, passed_any = 0;
	for (int round = 0; round < 3000; round++) {
		size_t n = make_stream(text, sizeof(text), &seed);
		tw_head whole, bytes, pieces_of;
		tw_head_init(&whole);
		size_t at = tw_head_feed(&whole, text, n);
		tw_head_init(&bytes);
		bytes.stepwise = true;
		size_t at_b = n;
		for (size_t i = 0; i < n; i++)
			if (tw_head_feed(&bytes, text + i, 1) != 1) {
				at_b = i;
				break;
			}
		tw_head_init(&pieces_of);
		for (size_t i = 0; i < n;) {
			size_t k = 1 + (size_t)rand_r(&seed) % 97;
			if (k > n - i)
				k = n - i;
			tw_head_feed(&pieces_of, text + i, k);
			i += k;
		}
		bytes.stepwise = false;
		if (memcmp(&whole, &bytes, sizeof(whole)) ||
		    memcmp(&whole, &pieces_of, sizeof(whole)))
			fail_msg("round %d: fed whole, in pieces and a byte at a time differ "
				 "(status %d/%d/%d)", round, whole.status, pieces_of.status, bytes.status);
		if (whole.status) {
			/* refused in the byte at at_b, of the request that began at 'at' */
			assert_true(at <= at_b);
			refused_any++;
		} else {
			assert_int_equal(at, n);
			passed_any++;
		}
	}
	if (refused_any < 100 || passed_any < 100)
		fail_msg("refused %d, passed %d: the streams no longer reach both", refused_any,
			 passed_any);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_requests),   cmocka_unit_test(keep_alive_stream),
		cmocka_unit_test(line_ends),	   cmocka_unit_test(request_lines),
		cmocka_unit_test(header_lines),	   cmocka_unit_test(lengths_and_codings),
		cmocka_unit_test(limits),	   cmocka_unit_test(where_the_stream_is),
		cmocka_unit_test(runs_as_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

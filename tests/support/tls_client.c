/*
 * tls_client.c — see tls_client.h.
 */
#include "tests/support/tls_client.h"
#include "tests/support/testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct tc_conn {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
};

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* Wait for fd to be readable (want_write false) or writable, at most ms. */
static void wait_fd(int fd, bool want_write, int ms)
{
	struct pollfd p = { .fd = fd, .events = want_write ? POLLOUT : POLLIN };
	poll(&p, 1, ms);
}

tc_conn *tc_connect(const sp_server *s)
{
	signal(SIGPIPE, SIG_IGN); /* a server that closed is a result here, not a death */
	tc_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fd = -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(s->port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c->ctx = SSL_CTX_new(TLS_client_method());
	struct sockaddr_in from = { .sin_family = AF_INET }; /* another peer: s->source */
	if (c->fd >= 0 && s->source[0] &&
	    (inet_pton(AF_INET, s->source, &from.sin_addr) != 1 ||
	     bind(c->fd, (struct sockaddr *)&from, sizeof(from))))
		goto fail;
	if (c->fd < 0 || !c->ctx || connect(c->fd, (struct sockaddr *)&a, sizeof(a)) ||
	    SSL_CTX_load_verify_locations(c->ctx, s->ca, NULL) != 1 || !(c->ssl = SSL_new(c->ctx)))
		goto fail;
	/* As Go's client (the API server's) does: no write of ours waits for
	 * the server's delayed ACK (a request right after the handshake's
	 * Finished would), so a delay seen is the server's. */
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	SSL_set_verify(c->ssl, SSL_VERIFY_PEER, NULL);
	SSL_set_tlsext_host_name(c->ssl, "localhost");
	SSL_set1_host(c->ssl, "localhost");
	SSL_set_fd(c->ssl, c->fd);
	if (SSL_connect(c->ssl) != 1)
		goto fail;
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	return c;
fail:
	tc_close(c);
	return NULL;
}

void tc_close(tc_conn *c)
{
	if (!c)
		return;
	if (c->ssl)
		SSL_free(c->ssl);
	if (c->ctx)
		SSL_CTX_free(c->ctx);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

/* One SSL_read: bytes read, 0 when nothing yet, -1 when the connection is
 * over (close_notify, EOF or reset). */
static int read_some(tc_conn *c, char *buf, int n)
{
	ERR_clear_error();
	int r = SSL_read(c->ssl, buf, n);
	if (r > 0)
		return r;
	int e = SSL_get_error(c->ssl, r);
	return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

int tc_write(tc_conn *c, const void *p, size_t n)
{
	const char *q = p;
	long long until = now_ms() + 20000 * sp_slow();
	while (n) {
		ERR_clear_error();
		int w = SSL_write(c->ssl, q, n > 16384 ? 16384 : (int)n);
		if (w > 0) {
			q += w;
			n -= (size_t)w;
			continue;
		}
		int e = SSL_get_error(c->ssl, w);
		if ((e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ) || now_ms() > until)
			return -1;
		wait_fd(c->fd, e == SSL_ERROR_WANT_WRITE, 20);
	}
	return 0;
}

static void header_value(const char *head, const char *name, char *out, size_t n)
{
	size_t k = strlen(name);
	out[0] = '\0';
	for (const char *l = strstr(head, "\r\n"); l && l[2] && !(l[2] == '\r' && l[3] == '\n');
	     l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, name, k) || l[2 + k] != ':')
			continue;
		const char *v = l + 3 + k;
		while (*v == ' ')
			v++;
		size_t m = strcspn(v, "\r\n");
		snprintf(out, n, "%.*s", (int)(m < n ? m : n - 1), v);
		return;
	}
}

/* The answer so far is complete: a head and Content-Length bytes after it. */
static bool complete(const tc_answer *a)
{
	const char *end = strstr(a->raw, "\r\n\r\n");
	if (!end)
		return false;
	char cl[32];
	header_value(a->raw, "Content-Length", cl, sizeof(cl));
	return (size_t)(end + 4 - a->raw) + strtoul(cl, NULL, 10) <= a->len;
}

static void parse(tc_answer *a)
{
	sscanf(a->raw, "HTTP/1.%*d %d", &a->status);
	snprintf(a->status_line, sizeof(a->status_line), "%.*s", (int)strcspn(a->raw, "\r\n"),
		 a->raw);
	header_value(a->raw, "Content-Type", a->ctype, sizeof(a->ctype));
	header_value(a->raw, "Connection", a->connection, sizeof(a->connection));
	header_value(a->raw, "Retry-After", a->retry_after, sizeof(a->retry_after));
	char *end = strstr(a->raw, "\r\n\r\n");
	a->body = end ? end + 4 : a->raw + a->len;
	for (const char *p = a->raw; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		a->status_lines += !strncmp(p, "HTTP/1.", 7);
	}
}

/* Read into a until complete (or the connection ends), at most until ms. */
static void read_until(tc_conn *c, tc_answer *a, long long until)
{
	char buf[16384];
	while (!complete(a) && !a->closed && now_ms() < until) {
		int r = read_some(c, buf, sizeof(buf));
		if (r < 0) {
			a->closed = true;
		} else if (r == 0) {
			wait_fd(c->fd, false, 20);
		} else {
			char *raw = realloc(a->raw, a->len + (size_t)r + 1);
			if (!raw)
				return;
			memcpy(raw + a->len, buf, (size_t)r);
			a->raw = raw;
			a->len += (size_t)r;
			a->raw[a->len] = '\0';
		}
	}
}

static int finish(tc_conn *c, tc_answer *a, int close_ms)
{
	long long until = now_ms() + close_ms;
	char buf[4096];
	while (!a->closed && close_ms && now_ms() < until) {
		int r = read_some(c, buf, sizeof(buf));
		if (r < 0)
			a->closed = true;
		else if (r == 0)
			wait_fd(c->fd, false, 20);
		else
			a->after += (size_t)r;
	}
	if (!a->raw)
		a->raw = calloc(1, 1);
	parse(a);
	return a->len ? 0 : -1;
}

int tc_read_answer(tc_conn *c, int timeout_ms, int close_ms, tc_answer *a)
{
	memset(a, 0, sizeof(*a));
	a->raw = calloc(1, 1);
	read_until(c, a, now_ms() + timeout_ms);
	return finish(c, a, close_ms);
}

/* Write n bytes of p, looking for an answer before every `every` bytes
 * written and whenever a write has to wait; stop writing once one begins,
 * then read it as tc_read_answer. */
static int send_looking(tc_conn *c, const char *p, size_t n, size_t every, int timeout_ms,
			int close_ms, size_t *sent, tc_answer *a)
{
	memset(a, 0, sizeof(*a));
	a->raw = calloc(1, 1);
	size_t off = 0;
	bool look = true;
	long long until = now_ms() + timeout_ms;
	char buf[16384];
	while (off < n && !a->len && !a->closed && now_ms() < until) {
		int r = look ? read_some(c, buf, sizeof(buf)) : 0;
		if (r > 0) { /* an answer began: stop sending */
			a->raw = realloc(a->raw, (size_t)r + 1);
			memcpy(a->raw, buf, (size_t)r);
			a->len = (size_t)r;
			a->raw[a->len] = '\0';
			break;
		}
		if (r < 0) {
			a->closed = true;
			break;
		}
		/* up to the next look; a write that waits is retried the same */
		size_t piece = every - off % every;
		piece = piece < 16384 ? piece : 16384;
		piece = piece < n - off ? piece : n - off;
		ERR_clear_error();
		int w = SSL_write(c->ssl, p + off, (int)piece);
		int e = w > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, w);
		if (w > 0) {
			off += (size_t)w;
			look = off % every == 0;
		} else if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
			wait_fd(c->fd, false, 5);
			look = true;
		} else {
			a->write_failed = true;
			break; /* the server is gone: read what it said */
		}
	}
	if (sent)
		*sent = off;
	read_until(c, a, until);
	return finish(c, a, close_ms);
}

int tc_send_reading(tc_conn *c, const void *p, size_t n, int timeout_ms, int close_ms,
		    size_t *sent, tc_answer *a)
{
	return send_looking(c, p, n, 16384, timeout_ms, close_ms, sent, a);
}

int tc_send_chunks(tc_conn *c, const void *p, size_t n, size_t chunk, int timeout_ms,
		   int close_ms, size_t *sent, tc_answer *a)
{
	return send_looking(c, p, n, chunk ? chunk : 1, timeout_ms, close_ms, sent, a);
}

void tc_shutdown_write(tc_conn *c, bool tcp_too)
{
	ERR_clear_error();
	SSL_shutdown(c->ssl); /* sends close_notify; reading goes on */
	if (tcp_too)
		shutdown(c->fd, SHUT_WR);
}

void tc_answer_free(tc_answer *a)
{
	free(a->raw);
	a->raw = NULL;
}

char *tc_review_post(size_t min, const char *extra)
{
	char *review = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	if (!review)
		return NULL;
	size_t len = strlen(review) < min ? min : strlen(review);
	char *req = NULL;
	if (asprintf(&req,
		     "POST /validate-trainer-kubeflow-org-v1alpha1-trainjob HTTP/1.1\r\nHost: "
		     "localhost\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n"
		     "%s%*s",
		     extra, len, review, (int)(len - strlen(review)), "") < 0)
		req = NULL;
	free(review);
	return req;
}

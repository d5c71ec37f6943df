/*
 * http.c — libmicrohttpd's callbacks: one HTTP request from its headers to
 * its answer, on the connection's thread.
 *
 * The headers decide whether the request is read at all: route, method,
 * Content-Type, Content-Length against --max-body and against what one
 * request of its size may ever hold of the memory budget (budget.h), all
 * answered at once, before one byte of the body is read. The body goes into
 * one buffer sized from Content-Length, whose pages the system gives only
 * as they are written; each part is charged to the budget as it arrives,
 * and the decision's arena once the body is in, so that a peer holds only
 * what it has sent, and only until --read-timeout (or its ?timeout=) has
 * passed since its headers began. A small body that the cache has every
 * object for is decided here, at once (http_decide.c); any other is decided
 * on a decider while the connection waits suspended, so a long decision
 * never holds the other connections of this thread; resumed, the answer is
 * sent. Its budget goes back when libmicrohttpd reports the request
 * complete. Nothing a request made outlives it.
 *
 * HTTP errors (docs/admission-protocol.md §1.1): 404 unknown path, 405 wrong
 * method, 415 a content type other than JSON, 413 past --max-body or past
 * what the budget could ever give it, 411 a body without Content-Length, 400
 * a body that is not an AdmissionReview, 503 over the memory budget now (with Retry-After), 504
 * past the API server's ?timeout=. Each has a JSON body {"error": "..."};
 * none of them allows anything. An error answered before the body was all
 * read closes the connection; a body still arriving past its read deadline
 * is closed unanswered (logged as 408).
 */
#include <malloc.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "webhook/server/http.h"
#include "webhook/server/http_internal.h"
#include "webhook/core/duration.h"
#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

/* ------------------------------------------------------------ request */

static void request_free(request *r)
{
	tw_budget_release(&r->s->budget, &r->hold);
	tw_peers_put(r->s->peers, r->hold.peer);
	/* Only after big requests: their pages go back to the system at once,
	 * whatever malloc kept of them (trims of every arena, some
	 * milliseconds, never on the path of the API server's small reviews). */
	bool big = r->body.cap > TW_HTTP_TRIM_AFTER || r->out.cap > TW_HTTP_TRIM_AFTER;
	tp_buf_free(&r->body);
	tp_buf_free(&r->out);
	tp_buf_free(&r->kept);
	free(r);
	if (big)
		malloc_trim(0);
}

/* ------------------------------------------------------------ answers */

static enum MHD_Result send_buf(tw_server *s, struct MHD_Connection *c, request *r, int status,
				const char *type)
{
	struct MHD_Response *resp = tw_tls_response(&r->out);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (r->retry_after)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	/* While draining, tell the API server to stop reusing this connection
	 * (kubernetes#127335): its next call goes to a replica that stays. */
	if (atomic_load(&s->draining))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	r->corked = tw_tls_cork(c, r->out.len);
	enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	r->oc.http_status = status;
	return ok;
}

static tw_error_reason reason_of(const request *r, int status)
{
	switch (status) {
	case 400: return TW_ERR_BAD_REQUEST;
	case 404: return TW_ERR_NOT_FOUND;
	case 405: return TW_ERR_METHOD;
	case 408: return TW_ERR_BAD_REQUEST;
	case 411: return TW_ERR_BAD_REQUEST;
	case 413: return TW_ERR_TOO_LARGE;
	case 415: return TW_ERR_MEDIA_TYPE;
	case 503: return r->retry_after ? TW_ERR_BUSY : TW_ERR_NOT_READY;
	case 504: return TW_ERR_TIMEOUT;
	default: return TW_ERR_INTERNAL;
	}
}

static enum MHD_Result send_error(tw_server *s, struct MHD_Connection *c, request *r, int status,
				  const char *msg)
{
	tp_buf_reset(&r->out);
	/* Outside any arena: the error is a small tree, freed at once. */
	tp_arena *prev = tp_arena_enter(NULL);
	int rc = tw_json_error(msg, &r->out);
	tp_arena_leave(prev);
	if (rc)
		return MHD_NO;
	r->oc.error = msg;
	return send_buf(s, c, r, status, "application/json");
}

/* ------------------------------------------------------------ checks */

static bool json_type(const char *ct, bool yaml_too)
{
	if (!ct)
		return false;
	size_t n = strcspn(ct, "; ");
	if (n == strlen("application/json") && !strncasecmp(ct, "application/json", n))
		return true;
	return yaml_too && ((n == strlen("application/yaml") &&
			     !strncasecmp(ct, "application/yaml", n)) ||
			    (n == strlen("application/x-yaml") &&
			     !strncasecmp(ct, "application/x-yaml", n)));
}

/* A 413 whose text names the limit it enforced, in bytes: formatted into
 * r->kept, which nothing else uses before the decision (that such an answer
 * never reaches) and which lives as long as r (the log line reads the text
 * after the answer). The text without the figure when memory runs out. */
static void too_large(request *r, const char *plain, const char *fmt, size_t limit)
{
	char text[320];
	snprintf(text, sizeof(text), fmt, limit);
	r->status = 413;
	tp_buf_reset(&r->kept);
	r->error = tp_buf_add(&r->kept, text, strlen(text) + 1) ? plain : r->kept.data;
}

/* The 503 or 413 of a request the budget has no room for (a). */
static void refuse(request *r, tw_budget_answer a)
{
	tw_metrics_budget_refused();
	if (a == TW_BUDGET_NEVER) {
		too_large(r,
			  "the body and the memory to decide it (9 times its size) are more than "
			  "one client may hold of --memory-budget (7/16 of it): send a smaller "
			  "object or raise the budget",
			  "the body and the memory to decide it (9 times its size) are more than "
			  "one client may hold of --memory-budget (%zu bytes): send a smaller "
			  "object or raise the budget",
			  tw_budget_most(&r->s->budget, r->hold.cls));
		return;
	}
	r->status = 503;
	r->retry_after = true;
	r->error = a == TW_BUDGET_PEER
			   ? "this client's requests in flight hold their share of the server's "
			     "memory budget (--memory-budget): retry in a second"
			   : "the server's memory budget (--memory-budget) is taken by the requests "
			     "in flight: retry in a second";
}

/* Whether the budget could hold this request, its body and its decision's
 * first arena, beside what is held now: if not, it is answered before its
 * body is read. Nothing is taken before a byte of it arrives. */
static void check_budget(tw_server *s, request *r, size_t len)
{
	r->hold.cls = tw_budget_class_of(len);
	r->allow = tw_budget_arena_for(len);
	tw_budget_answer a = tw_budget_fits_now(&s->budget, &r->hold, len + r->allow);
	if (a != TW_BUDGET_TAKEN)
		refuse(r, a);
}

/* n more bytes of the request held (its body as it arrives, then its
 * arena): false with the answer set when the budget has no room now. */
static bool charge(tw_server *s, request *r, size_t n)
{
	tw_budget_answer a = tw_budget_take(&s->budget, &r->hold, n);
	if (a == TW_BUDGET_TAKEN)
		return true;
	refuse(r, a);
	return false;
}

/* What a request holds once arrived bytes of its body are in, beyond what
 * it holds: each byte with the arena it will need (9 more), up to the body
 * and its whole first allowance. Charged so, a crowd of bodies in progress
 * never takes the memory their own decisions need once they are in. */
static size_t due(const request *r, size_t arrived)
{
	size_t whole = r->length + r->allow;
	size_t want = arrived > whole / (1 + TW_BUDGET_ARENA_FACTOR)
			      ? whole
			      : arrived * (1 + TW_BUDGET_ARENA_FACTOR);
	return want > r->hold.held ? want - r->hold.held : 0;
}

/* A body still arriving past its read deadline: the connection is closed,
 * as nginx's client_body_timeout and Go's ReadTimeout close it (an answer
 * queued halfway through a body is not written by libmicrohttpd 0.9.75);
 * the log line and metrics still say 408, or 504 when the API server's
 * ?timeout= came first. */
static enum MHD_Result read_timed_out(request *r)
{
	bool api = r->read_by_us == r->deadline_us;
	r->oc.http_status = api ? 504 : 408;
	r->oc.error = api ? "the request's ?timeout= passed before its body arrived; closed"
			  : "the body did not arrive within --read-timeout of its headers; closed";
	return MHD_NO;
}

/* The request's headers and body arrive by t0 + --read-timeout, or its
 * ?timeout= when sooner; a silent peer is closed by then (the connection's
 * timeout, counted from its last byte, is what is left of it). */
static void read_deadline(tw_server *s, struct MHD_Connection *c, request *r)
{
	long long us = (long long)s->opt.read_timeout_s * 1000000;
	if (r->deadline_us && r->deadline_us < us)
		us = r->deadline_us;
	r->read_by_us = us;
	long long left = us - tw_http_micros_since(r->t0_ns);
	unsigned secs = left > 0 ? (unsigned)((left + 999999) / 1000000) : 1;
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, secs);
}

/* The answer a request gets before its body is read, if any: method, type,
 * size, budget and timeout checks. Sets r->status and r->error. */
static void check_headers(tw_server *s, struct MHD_Connection *c, request *r, const char *method)
{
	bool health = r->route->type == TW_ROUTE_HEALTH;
	bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	if (health ? !get : strcmp(method, "POST")) {
		r->status = 405;
		r->error = health ? "use GET" : "use POST with an AdmissionReview body";
		return;
	}
	if (health)
		return;
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_TYPE);
	/* application/json is JSON only: a YAML body under it is a client's mistake */
	r->json_body = json_type(ct, false);
	if (!json_type(ct, r->route->type == TW_ROUTE_EXPAND)) {
		r->status = 415;
		r->error = r->route->type == TW_ROUTE_EXPAND
				   ? "Content-Type must be application/json or application/yaml"
				   : "Content-Type must be application/json";
		return;
	}
	/* A body is budgeted by its length before it is read: one that comes
	 * without (chunked) cannot be, and the API server always sends it. The
	 * framing check (http_head.c) refuses it first; this holds without. */
	if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		r->status = 411;
		r->error = "send the body with a Content-Length, not a Transfer-Encoding";
		return;
	}
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long len = cl ? strtoull(cl, NULL, 10) : 0;
	if (len > s->opt.base.max_body) {
		too_large(r, "the body is larger than --max-body: send a smaller object",
			  "the body is larger than --max-body (%zu bytes): send a smaller object",
			  s->opt.base.max_body);
		return;
	}
	const char *to = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeout");
	if (to) {
		long long us = tw_parse_go_duration(to);
		if (us < 0) {
			r->status = 400;
			r->error = "?timeout= is not a duration like 10s";
			return;
		}
		r->deadline_us = us ? us : 1;
	}
	r->length = (size_t)len;
	check_budget(s, r, (size_t)len);
	if (!r->status && len)
		read_deadline(s, c, r);
	/* One allocation for the whole body when its size is known: for any
	 * but a small body its pages come from the system as they are written. */
	if (!r->status && len && tp_buf_reserve(&r->body, (size_t)len)) {
		r->status = 500;
		r->error = "out of memory for the request body";
	}
}

/* ------------------------------------------------------------ routes */

static enum MHD_Result answer_health(tw_server *s, struct MHD_Connection *c, request *r)
{
	char why[2048];
	bool ready = strcmp(r->route->path, "/readyz") ? true
						     : tw_server_ready(s, why, sizeof(why));
	tp_buf_reset(&r->out);
	if (ready)
		tp_buf_adds(&r->out, "ok\n");
	else
		tp_buf_addf(&r->out, "not ready: %s\n", why);
	return send_buf(s, c, r, ready ? 200 : 503, "text/plain; charset=utf-8");
}

static enum MHD_Result answer_decided(tw_server *s, struct MHD_Connection *c, request *r)
{
	if (r->status)
		return send_error(s, c, r, r->status, r->error);
	return send_buf(s, c, r, r->oc.http_status, "application/json");
}

/* The body is in: decided here when that cannot block (http_decide.c),
 * else the decision goes to a decider, and this connection waits suspended
 * (its thread goes on with the others) until it resumes. */
static enum MHD_Result decide_here_or_suspend(tw_server *s, struct MHD_Connection *c, request *r)
{
	if (tw_http_decide_here(r))
		return answer_decided(s, c, r);
	atomic_store(&r->state, REQ_DECIDING);
	r->job.run = tw_http_decide;
	MHD_suspend_connection(c);
	tw_deciders_submit(s->deciders, &r->job);
	return MHD_YES;
}

/* ------------------------------------------------------------ callbacks */

/* A connection's first request: from now on its silence is measured
 * against the idle timeout, no longer the handshake timeout. */
static void conn_in_use(tw_server *s, struct MHD_Connection *c)
{
	if (s->opt.idle_timeout_s == s->opt.handshake_timeout_s)
		return;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_TIMEOUT);
	if (ci && ci->connection_timeout == s->opt.handshake_timeout_s)
		MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
					  s->opt.idle_timeout_s);
}

/* The peer whose share this request's memory counts in. */
static tw_peer *peer_of(tw_server *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	return ci ? tw_peers_get(s->peers, ci->client_addr) : NULL;
}

static request *request_new(tw_server *s, struct MHD_Connection *c, const char *url)
{
	request *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->t0_ns = tw_mono_ns();
	r->s = s;
	r->hold.peer = peer_of(s, c);
	r->conn = c;
	r->route = tw_route_find(url);
	tp_buf_init(&r->body, s->opt.base.max_body);
	tp_buf_init(&r->out, 0);
	tp_buf_init(&r->kept, 0);
	atomic_init(&r->state, REQ_READING);
	tw_tls_conn_busy(c, 1);
	atomic_fetch_add(&s->in_flight, 1);
	tw_metrics_in_flight(1);
	return r;
}

enum MHD_Result tw_http_access(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_size, void **req)
{
	(void)version;
	tw_server *s = cls;
	request *r = *req;
	if (!r) {
		if (!(r = request_new(s, c, url)))
			return MHD_NO;
		*req = r;
		conn_in_use(s, c);
		if (!r->route) {
			r->status = 404;
			r->error = "no such path: see the webhook's routes in docs/design.md";
		} else {
			check_headers(s, c, r, method);
		}
		/* Answered now, before the body: libmicrohttpd then reads none
		 * of it and closes the connection after the answer. */
		return r->status ? send_error(s, c, r, r->status, r->error) : MHD_YES;
	}
	if (atomic_load(&r->state) == REQ_DECIDED)
		return answer_decided(s, c, r);
	if (r->oc.http_status) { /* answered before its body was all read */
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (tw_http_micros_since(r->t0_ns) > r->read_by_us)
			return read_timed_out(r);
		if (!charge(s, r, due(r, r->body.len + n))) /* answered now: the rest is unread */
			return send_error(s, c, r, r->status, r->error);
		/* Content-Length bounds the body, and the buffer holds that much */
		return tp_buf_add(&r->body, upload_data, n) ? MHD_NO : MHD_YES;
	}
	if (r->route->type == TW_ROUTE_HEALTH)
		return answer_health(s, c, r);
	/* the body is in: what its decision's arena needs beyond that is held */
	if (!charge(s, r, due(r, (size_t)-1)))
		return send_error(s, c, r, r->status, r->error);
	return decide_here_or_suspend(s, c, r);
}

static tw_verdict verdict_of(const request *r)
{
	if (r->oc.http_status != 200 || !r->route || r->route->type == TW_ROUTE_HEALTH ||
	    r->oc.unavailable)
		return TW_VERDICT_NONE; /* an undecided answer is no verdict */
	return r->oc.allowed ? TW_VERDICT_ALLOWED : TW_VERDICT_DENIED;
}

static void log_request(const request *r, long long us)
{
	int lvl = r->oc.http_status >= 500 ? TW_LOG_ERROR
		  : r->oc.unavailable	   ? TW_LOG_WARN
					   : TW_LOG_INFO;
	if (!tw_log_enabled(lvl) || (r->route && r->route->type == TW_ROUTE_HEALTH))
		return;
	tw_verdict v = verdict_of(r);
	tw_log_line l;
	tw_log_begin(&l, lvl, "request");
	tw_log_str(&l, "route", r->route ? r->route->path : "other");
	tw_log_int(&l, "code", r->oc.http_status);
	tw_log_str(&l, "uid", r->oc.uid);
	tw_log_str(&l, "kind", r->oc.kind);
	tw_log_str(&l, "operation", r->oc.operation);
	tw_log_str(&l, "namespace", r->oc.namespace_);
	tw_log_str(&l, "name", r->oc.name);
	tw_log_str(&l, "verdict", v == TW_VERDICT_ALLOWED  ? "allowed"
				  : v == TW_VERDICT_DENIED ? "denied"
							   : NULL);
	tw_log_bool(&l, "patched", r->oc.patched);
	tw_log_str(&l, "user", r->oc.user);
	tw_log_bool(&l, "dry_run", r->oc.dry_run);
	tw_log_str(&l, "reason", r->oc.reason); /* not allowed: the first finding */
	if (r->oc.unavailable)
		tw_log_bool(&l, "undecided", true);
	if (r->oc.strict_warned)
		tw_log_int(&l, "strict_warned", (long long)r->oc.strict_warned);
	tw_log_int(&l, "warnings", (long long)r->oc.warnings);
	tw_log_str(&l, "error", r->oc.error);
	tw_log_int(&l, "us", us);
	tw_log_end_batched(&l); /* one write per 100 ms, not per request */
}

void tw_http_completed(void *cls, struct MHD_Connection *c, void **req,
		       enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	tw_server *s = cls;
	request *r = *req;
	if (!r)
		return;
	/* Counted before the answer leaves: whoever has read an answer finds
	 * it in /metrics. The log line, the slower part, waits until after. */
	long long us = tw_http_micros_since(r->t0_ns);
	if (r->oc.http_status) {
		tw_metrics_request(r->route, verdict_of(r), r->oc.http_status, (uint64_t)us,
				   r->oc.warnings);
		if (verdict_of(r) == TW_VERDICT_DENIED)
			tw_metrics_denial(r->route, r->oc.reason_class);
		if (r->oc.unavailable)
			tw_metrics_error_answer(TW_ERR_LOOKUP);
		else if (r->oc.http_status != 200 && !(r->route && r->route->type == TW_ROUTE_HEALTH))
			tw_metrics_error_answer(reason_of(r, r->oc.http_status));
		if (r->oc.strict_warned)
			tw_metrics_strict_warned(r->route, r->oc.strict_warned);
	}
	if (r->corked) /* libmicrohttpd is done writing: the answer goes out now */
		tw_tls_flush(c);
	if (r->read_by_us) /* the read deadline's timeout ends with its request */
		MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->opt.idle_timeout_s);
	if (r->oc.http_status)
		log_request(r, us);
	tw_tls_conn_busy(c, -1);
	atomic_fetch_sub(&s->in_flight, 1);
	tw_metrics_in_flight(-1);
	request_free(r);
	*req = NULL;
}

/*
 * http.c — libmicrohttpd's callbacks: one HTTP request from its headers to
 * its answer.
 *
 * A request takes an arena from its worker thread's small pool when its
 * headers arrive, gathers the body into one buffer sized from
 * Content-Length, is decided once (tw_admission_handle), and gives the
 * arena back, reset, when libmicrohttpd reports it complete. Nothing a
 * request made outlives it.
 *
 * HTTP errors (admission-protocol.md §1.1): 404 unknown path, 405 wrong
 * method, 415 a content type other than JSON, 413 past --max-body, 400 a body
 * that is not an AdmissionReview, 504 past the API server's ?timeout=. Each
 * has a JSON body {"error": "..."}; none of them allows anything.
 */
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "webhook/admission/expand_api.h"
#include "webhook/server/http.h"
#include "webhook/core/duration.h"
#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

/* ------------------------------------------------------------ arenas */

/* Requests of one worker thread share a few arenas; a thread's pool is
 * freed when the thread ends (pthread key destructor). */
#define POOL_SIZE 8

struct arena_pool {
	tp_arena *free[POOL_SIZE];
	int n;
};

static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_destroy(void *p)
{
	struct arena_pool *pool = p;
	for (int i = 0; pool && i < pool->n; i++)
		tp_arena_free(pool->free[i]);
	free(pool);
}

static void pool_key_make(void)
{
	pthread_key_create(&pool_key, pool_destroy);
}

static struct arena_pool *pool_get(void)
{
	pthread_once(&pool_once, pool_key_make);
	struct arena_pool *pool = pthread_getspecific(pool_key);
	if (!pool && (pool = calloc(1, sizeof(*pool))) != NULL)
		pthread_setspecific(pool_key, pool);
	return pool;
}

static tp_arena *arena_take(void)
{
	struct arena_pool *pool = pool_get();
	if (pool && pool->n)
		return pool->free[--pool->n];
	tp_arena *a = NULL;
	tp_arena_new(&a, 0);
	return a;
}

static void arena_give(tp_arena *a)
{
	struct arena_pool *pool = pool_get();
	if (!a)
		return;
	tp_arena_reset(a);
	if (pool && pool->n < POOL_SIZE)
		pool->free[pool->n++] = a;
	else
		tp_arena_free(a);
}

void tw_http_thread_cleanup(void)
{
	pthread_once(&pool_once, pool_key_make);
	pool_destroy(pthread_getspecific(pool_key));
	pthread_setspecific(pool_key, NULL);
}

/* ------------------------------------------------------------ request */

/* Body bytes read and thrown away after an early error before the
 * connection is simply closed: enough for any honest client to get its
 * 413/415 answer, little work for one that sends gigabytes. */
#define DROP_LIMIT ((size_t)16 * 1024 * 1024)

typedef struct request {
	const tw_route *route;
	struct timespec t0;
	long long deadline_us; /* from ?timeout=; 0: none */
	tp_arena *arena;
	tp_buf body;
	tp_buf out;
	size_t dropped;        /* body bytes read and thrown away after an early error */
	int status;            /* 0 until an early answer is chosen */
	const char *error;     /* that answer's text */
	tw_store_ref *store;
	tp_crds *crds; /* the CRDs current when the request started */
	bool json_body; /* sent as application/json */
	bool corked;    /* the answer waits in GnuTLS for tw_tls_flush */
	tw_outcome oc;
} request;

static long long micros_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000LL + (t.tv_nsec - t0->tv_nsec) / 1000;
}

static void request_free(request *r)
{
	tp_buf_free(&r->body);
	tp_buf_free(&r->out);
	tw_server_store_release(r->store);
	tp_crds_unref(r->crds);
	arena_give(r->arena);
	free(r);
}

/* ------------------------------------------------------------ answers */

static enum MHD_Result send_buf(tw_server *s, struct MHD_Connection *c, request *r, int status,
				const char *type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		r->out.len, r->out.data ? r->out.data : (char *)"", MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
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

static tw_error_reason reason_of(int status)
{
	switch (status) {
	case 400: return TW_ERR_BAD_REQUEST;
	case 404: return TW_ERR_NOT_FOUND;
	case 405: return TW_ERR_METHOD;
	case 413: return TW_ERR_TOO_LARGE;
	case 415: return TW_ERR_MEDIA_TYPE;
	case 503: return TW_ERR_NOT_READY;
	case 504: return TW_ERR_TIMEOUT;
	default: return TW_ERR_INTERNAL;
	}
}

static enum MHD_Result send_error(tw_server *s, struct MHD_Connection *c, request *r, int status,
				  const char *msg)
{
	tp_buf_reset(&r->out);
	/* Outside the request's arena: the answer must be written even when the
	 * request used that arena up (the error is a small tree, freed at once). */
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

/* The answer a request gets before its body is read, if any: method, type,
 * size and timeout checks. Sets r->status and r->error. */
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
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long len = cl ? strtoull(cl, NULL, 10) : 0;
	if (len > s->opt.base.max_body) {
		r->status = 413;
		r->error = "the body is larger than --max-body";
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
	/* One allocation for the whole body when its size is known. */
	if (len && tp_buf_reserve(&r->body, (size_t)len)) {
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

/* /expand is a preview API with its own answers; the rest is admission. */
static int route_answer(const tw_config *cfg, const tw_route *route, const char *body, size_t len,
			tp_arena *arena, tp_buf *out, tw_outcome *oc)
{
	if (route->type == TW_ROUTE_EXPAND)
		return tw_expand_handle(cfg, body, len, arena, out, oc);
	return tw_admission_handle(cfg, route, body, len, arena, out, oc);
}

static enum MHD_Result answer_admission(tw_server *s, struct MHD_Connection *c, request *r)
{
	/* A body that took the whole budget to arrive is not worth deciding:
	 * the API server has given up on it already. */
	if (r->deadline_us && micros_since(&r->t0) > r->deadline_us)
		return send_error(s, c, r, 504, "the request's ?timeout= passed before its body "
						"arrived");
	r->store = tw_server_store_acquire(s);
	if (!r->store)
		return send_error(s, c, r, 503, "the runtime store is not loaded yet");
	tw_config cfg = s->opt.base;
	cfg.store = r->store->store;
	cfg.opt.crds = r->crds = tw_server_crds_acquire(s);
	cfg.json_only = r->json_body;
	/* Lookups (the cache, then the API server) end inside the request's
	 * ?timeout=, and hold nothing once the answer is written. */
	tw_resolver rs;
	long long t0_ms = (long long)r->t0.tv_sec * 1000 + r->t0.tv_nsec / 1000000;
	tw_resolver_init(&rs, &s->opt.cluster, cfg.store, r->arena,
			 r->deadline_us ? t0_ms + r->deadline_us / 1000 : 0);
	cfg.opt.lookup = &rs.lookup;
	int rc = route_answer(&cfg, r->route, r->body.data ? r->body.data : "", r->body.len,
				 r->arena, &r->out, &r->oc);
	tw_resolver_done(&rs);
	if (rc == TP_ENOMEM) /* the per-request memory bound: the body is too big to decide */
		return send_error(s, c, r, 413, "the request needs more memory than one request may "
					       "use (64 MiB): send a smaller object");
	if (rc)
		return send_error(s, c, r, 500, tp_strerror(rc));
	if (r->deadline_us && micros_since(&r->t0) > r->deadline_us)
		return send_error(s, c, r, 504, "the request's ?timeout= passed before the answer");
	return send_buf(s, c, r, r->oc.http_status, "application/json");
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

static request *request_new(tw_server *s, const char *url)
{
	request *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	r->route = tw_route_find(url);
	r->arena = arena_take();
	tp_buf_init(&r->body, s->opt.base.max_body);
	tp_buf_init(&r->out, 0);
	if (!r->arena) {
		free(r);
		return NULL;
	}
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
		if (!(r = request_new(s, url)))
			return MHD_NO;
		*req = r;
		conn_in_use(s, c);
		if (!r->route) {
			r->status = 404;
			r->error = "no such path: see the webhook's routes in DESIGN.md";
		} else {
			check_headers(s, c, r, method);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		/* Past the limit the rest is read and dropped, so that the error
		 * can still be sent on a connection in a known state; but only up
		 * to DROP_LIMIT: a client that goes on is cut off. */
		if (!r->status && tp_buf_add(&r->body, upload_data, *upload_size)) {
			r->status = 413;
			r->error = "the body is larger than --max-body";
		}
		if (r->status && (r->dropped += *upload_size) > DROP_LIMIT)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->status)
		return send_error(s, c, r, r->status, r->error);
	if (r->route->type == TW_ROUTE_HEALTH)
		return answer_health(s, c, r);
	return answer_admission(s, c, r);
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
	long long us = micros_since(&r->t0);
	if (r->oc.http_status) {
		tw_metrics_request(r->route, verdict_of(r), r->oc.http_status, (uint64_t)us,
				   r->oc.warnings);
		if (verdict_of(r) == TW_VERDICT_DENIED)
			tw_metrics_denial(r->route, r->oc.reason_class);
		if (r->oc.unavailable)
			tw_metrics_error_answer(TW_ERR_LOOKUP);
		else if (r->oc.http_status != 200 && !(r->route && r->route->type == TW_ROUTE_HEALTH))
			tw_metrics_error_answer(reason_of(r->oc.http_status));
		if (r->oc.strict_warned)
			tw_metrics_strict_warned(r->route, r->oc.strict_warned);
	}
	if (r->corked) /* libmicrohttpd is done writing: the answer goes out now */
		tw_tls_flush(c);
	if (r->oc.http_status)
		log_request(r, us);
	atomic_fetch_sub(&s->in_flight, 1);
	tw_metrics_in_flight(-1);
	request_free(r);
	*req = NULL;
}

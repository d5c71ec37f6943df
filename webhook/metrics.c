/*
 * metrics.c — counters, gauges and latency histograms, and the plain-HTTP
 * daemon that serves them at /metrics.
 *
 * Every value is a relaxed atomic: the request path pays one add per value
 * and never takes a lock. A scrape reads each value once, so a rendering may
 * mix values a few requests apart; Prometheus tolerates that.
 */
#include "webhook/metrics.h"

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webhook/log.h"
#include "webhook/server.h"

#define MAX_ROUTES 32 /* tw_routes has about ten; the last slot is "other" */

static const int codes[] = { 200, 400, 404, 405, 413, 415, 500, 503, 504 };
#define NCODES (sizeof(codes) / sizeof(codes[0]) + 1) /* + "other" */

static const uint64_t bucket_us[TW_METRICS_BUCKETS] = {
	50,	100,	 250,	  500,	   1000,    2500,    5000,     10000,   25000,
	50000,	100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};
static const char *const bucket_le[TW_METRICS_BUCKETS] = {
	"5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025",
	"0.05",	 "0.1",	   "0.25",    "0.5",	"1",	 "2.5",	   "5",	    "10",
};
static const char *const verdict_names[TW_VERDICT__COUNT] = { "allowed", "denied", "none" };

static struct {
	atomic_uint_fast64_t requests[MAX_ROUTES][TW_VERDICT__COUNT][NCODES];
	atomic_uint_fast64_t buckets[MAX_ROUTES][TW_METRICS_BUCKETS + 1];
	atomic_uint_fast64_t sum_us[MAX_ROUTES];
	atomic_uint_fast64_t warnings[MAX_ROUTES];
	atomic_int_fast64_t in_flight;
	atomic_uint_fast64_t store_objects[TP_KIND__COUNT];
	atomic_uint_fast64_t store_reloads[2]; /* [0] failure, [1] success */
	atomic_int_fast64_t cert_not_after;
	atomic_uint_fast64_t cert_reloads[2];
	atomic_bool watch_on;
	atomic_int_fast64_t watch_synced_at[TP_KIND__COUNT];
	atomic_uint_fast64_t watch_relists[TP_KIND__COUNT];
	atomic_uint_fast64_t watch_reconnects[TP_KIND__COUNT];
} reg;

#define ADD(v, n) atomic_fetch_add_explicit(&(v), (n), memory_order_relaxed)
#define GET(v) atomic_load_explicit(&(v), memory_order_relaxed)
#define SET(v, n) atomic_store_explicit(&(v), (n), memory_order_relaxed)

void tw_metrics_reset(void)
{
	memset(&reg, 0, sizeof(reg)); /* atomics of integer type: zero bytes are zero */
}

static size_t route_count(void)
{
	size_t n = 0;
	while (tw_routes[n].path && n < MAX_ROUTES - 1)
		n++;
	return n;
}

/* Index of route in tw_routes, or the "other" slot. */
static size_t route_slot(const tw_route *route)
{
	size_t n = route_count();
	for (size_t i = 0; route && i < n; i++)
		if (&tw_routes[i] == route)
			return i;
	return MAX_ROUTES - 1;
}

static const char *slot_path(size_t slot)
{
	return slot == MAX_ROUTES - 1 ? "other" : tw_routes[slot].path;
}

static size_t code_slot(int code)
{
	for (size_t i = 0; i < NCODES - 1; i++)
		if (codes[i] == code)
			return i;
	return NCODES - 1;
}

void tw_metrics_request(const tw_route *route, tw_verdict verdict, int http_code,
			uint64_t micros, size_t warnings)
{
	size_t r = route_slot(route);
	if ((unsigned)verdict >= TW_VERDICT__COUNT)
		verdict = TW_VERDICT_NONE;
	ADD(reg.requests[r][verdict][code_slot(http_code)], 1);
	size_t b = 0;
	while (b < TW_METRICS_BUCKETS && micros > bucket_us[b])
		b++;
	ADD(reg.buckets[r][b], 1);
	ADD(reg.sum_us[r], micros);
	if (warnings)
		ADD(reg.warnings[r], warnings);
}

void tw_metrics_in_flight(int delta)
{
	ADD(reg.in_flight, delta);
}

void tw_metrics_store_set(const tp_store *store)
{
	if (store)
		tp_store_rdlock(store);
	for (int k = 1; k < TP_KIND__COUNT; k++)
		SET(reg.store_objects[k], store ? tp_store_count(store, (tp_kind)k) : 0);
	if (store)
		tp_store_unlock(store);
}

void tw_metrics_store_reload(bool ok)
{
	ADD(reg.store_reloads[ok], 1);
}

void tw_metrics_watch_enable(void)
{
	SET(reg.watch_on, true);
}

void tw_metrics_watch_synced(tp_kind k, int64_t unix_s)
{
	if ((unsigned)k < TP_KIND__COUNT)
		SET(reg.watch_synced_at[k], unix_s);
}

void tw_metrics_watch_relist(tp_kind k)
{
	if ((unsigned)k < TP_KIND__COUNT)
		ADD(reg.watch_relists[k], 1);
}

void tw_metrics_watch_reconnect(tp_kind k)
{
	if ((unsigned)k < TP_KIND__COUNT)
		ADD(reg.watch_reconnects[k], 1);
}

void tw_metrics_cert_set(int64_t not_after)
{
	SET(reg.cert_not_after, not_after);
}

void tw_metrics_cert_reload(bool ok)
{
	ADD(reg.cert_reloads[ok], 1);
}

/* ------------------------------------------------------------ rendering */

static int render_requests(tp_buf *o)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_requests_total Requests answered, by route, "
				"admission verdict and HTTP status.\n"
				"# TYPE trainer_webhook_requests_total counter\n");
	for (size_t r = 0; r < MAX_ROUTES && !rc; r++) {
		if (r >= route_count() && r != MAX_ROUTES - 1)
			continue;
		for (int v = 0; v < TW_VERDICT__COUNT; v++)
			for (size_t c = 0; c < NCODES && !rc; c++) {
				uint64_t n = GET(reg.requests[r][v][c]);
				if (!n)
					continue;
				char code[8];
				snprintf(code, sizeof(code), "%d", c < NCODES - 1 ? codes[c] : 0);
				rc = tp_buf_addf(o,
						 "trainer_webhook_requests_total{route=\"%s\","
						 "verdict=\"%s\",code=\"%s\"} %llu\n",
						 slot_path(r), verdict_names[v],
						 c < NCODES - 1 ? code : "other", (unsigned long long)n);
			}
	}
	return rc;
}

static int render_histogram(tp_buf *o, size_t r)
{
	const char *path = slot_path(r);
	uint64_t cum = 0;
	int rc = 0;
	for (size_t b = 0; b <= TW_METRICS_BUCKETS && !rc; b++) {
		cum += GET(reg.buckets[r][b]);
		rc = tp_buf_addf(o, "trainer_webhook_request_duration_seconds_bucket{route=\"%s\",le=\"%s\"} %llu\n",
				 path, b < TW_METRICS_BUCKETS ? bucket_le[b] : "+Inf",
				 (unsigned long long)cum);
	}
	if (!rc)
		rc = tp_buf_addf(o, "trainer_webhook_request_duration_seconds_sum{route=\"%s\"} %.6f\n"
				    "trainer_webhook_request_duration_seconds_count{route=\"%s\"} %llu\n",
				 path, (double)GET(reg.sum_us[r]) / 1e6, path, (unsigned long long)cum);
	return rc;
}

static int render_latency(tp_buf *o)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_request_duration_seconds Time from a request's "
				"headers to its answer, by route.\n"
				"# TYPE trainer_webhook_request_duration_seconds histogram\n");
	size_t n = route_count();
	for (size_t r = 0; r < n && !rc; r++)
		rc = render_histogram(o, r);
	if (!rc)
		rc = render_histogram(o, MAX_ROUTES - 1);
	return rc;
}

static int render_warnings(tp_buf *o)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_warnings_total Warnings returned in admission "
				"answers, by route.\n"
				"# TYPE trainer_webhook_warnings_total counter\n");
	size_t n = route_count();
	for (size_t r = 0; r < n && !rc; r++)
		rc = tp_buf_addf(o, "trainer_webhook_warnings_total{route=\"%s\"} %llu\n",
				 slot_path(r), (unsigned long long)GET(reg.warnings[r]));
	return rc;
}

static int render_store(tp_buf *o)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_store_objects Objects in the runtime store, by kind.\n"
				"# TYPE trainer_webhook_store_objects gauge\n");
	for (int k = 1; k < TP_KIND__COUNT && !rc; k++) {
		if (k == TP_KIND_OUTDATED)
			continue; /* never stored */
		rc = tp_buf_addf(o, "trainer_webhook_store_objects{kind=\"%s\"} %llu\n",
				 tp_kind_name((tp_kind)k),
				 (unsigned long long)GET(reg.store_objects[k]));
	}
	if (!rc)
		rc = tp_buf_addf(o, "# HELP trainer_webhook_store_reloads_total Loads of the runtime store "
				    "(start, SIGHUP), by result.\n"
				    "# TYPE trainer_webhook_store_reloads_total counter\n"
				    "trainer_webhook_store_reloads_total{result=\"success\"} %llu\n"
				    "trainer_webhook_store_reloads_total{result=\"failure\"} %llu\n",
				 (unsigned long long)GET(reg.store_reloads[1]),
				 (unsigned long long)GET(reg.store_reloads[0]));
	return rc;
}

/* The watched kinds, in the watch's order. */
static const tp_kind watch_kinds[] = { TP_KIND_CLUSTER_TRAINING_RUNTIME, TP_KIND_TRAINING_RUNTIME,
				       TP_KIND_TRAINJOB, TP_KIND_JOBSET };
#define NWATCH (sizeof(watch_kinds) / sizeof(watch_kinds[0]))

static int render_watch(tp_buf *o)
{
	if (!GET(reg.watch_on))
		return 0;
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_watch_last_sync_timestamp_seconds Last "
				"completed list of the kind from the API server, as a Unix time "
				"(0: not yet).\n"
				"# TYPE trainer_webhook_watch_last_sync_timestamp_seconds gauge\n");
	for (size_t i = 0; i < NWATCH && !rc; i++)
		rc = tp_buf_addf(o, "trainer_webhook_watch_last_sync_timestamp_seconds{kind=\"%s\"} "
				    "%lld\n", tp_kind_name(watch_kinds[i]),
				 (long long)GET(reg.watch_synced_at[watch_kinds[i]]));
	if (!rc)
		rc = tp_buf_adds(o, "# HELP trainer_webhook_watch_relists_total Lists after the first "
				    "(410 Gone, a broken stream), by kind.\n"
				    "# TYPE trainer_webhook_watch_relists_total counter\n");
	for (size_t i = 0; i < NWATCH && !rc; i++)
		rc = tp_buf_addf(o, "trainer_webhook_watch_relists_total{kind=\"%s\"} %llu\n",
				 tp_kind_name(watch_kinds[i]),
				 (unsigned long long)GET(reg.watch_relists[watch_kinds[i]]));
	if (!rc)
		rc = tp_buf_adds(o, "# HELP trainer_webhook_watch_reconnects_total Watches started "
				    "again after one ended, by kind.\n"
				    "# TYPE trainer_webhook_watch_reconnects_total counter\n");
	for (size_t i = 0; i < NWATCH && !rc; i++)
		rc = tp_buf_addf(o, "trainer_webhook_watch_reconnects_total{kind=\"%s\"} %llu\n",
				 tp_kind_name(watch_kinds[i]),
				 (unsigned long long)GET(reg.watch_reconnects[watch_kinds[i]]));
	return rc;
}

static int render_misc(tp_buf *o)
{
	return tp_buf_addf(
		o,
		"# HELP trainer_webhook_certificate_expiry_timestamp_seconds notAfter of the serving "
		"certificate in use, as a Unix time.\n"
		"# TYPE trainer_webhook_certificate_expiry_timestamp_seconds gauge\n"
		"trainer_webhook_certificate_expiry_timestamp_seconds %lld\n"
		"# HELP trainer_webhook_certificate_reloads_total Certificate reload attempts, by result.\n"
		"# TYPE trainer_webhook_certificate_reloads_total counter\n"
		"trainer_webhook_certificate_reloads_total{result=\"success\"} %llu\n"
		"trainer_webhook_certificate_reloads_total{result=\"failure\"} %llu\n"
		"# HELP trainer_webhook_requests_in_flight Requests being read or decided now.\n"
		"# TYPE trainer_webhook_requests_in_flight gauge\n"
		"trainer_webhook_requests_in_flight %lld\n"
		"# HELP trainer_webhook_build_info Build of this binary (value 1).\n"
		"# TYPE trainer_webhook_build_info gauge\n"
		"trainer_webhook_build_info{version=\"%s\",libmicrohttpd=\"%s\",gnutls=\"%s\"} 1\n",
		(long long)GET(reg.cert_not_after), (unsigned long long)GET(reg.cert_reloads[1]),
		(unsigned long long)GET(reg.cert_reloads[0]), (long long)GET(reg.in_flight),
		TW_VERSION, MHD_get_version(), gnutls_check_version(NULL));
}

int tw_metrics_render(tp_buf *out)
{
	int rc = render_requests(out);
	if (!rc)
		rc = render_latency(out);
	if (!rc)
		rc = render_warnings(out);
	if (!rc)
		rc = render_store(out);
	if (!rc)
		rc = render_watch(out);
	if (!rc)
		rc = render_misc(out);
	return rc;
}

/* ------------------------------------------------------------ the daemon */

struct tw_metrics_server {
	struct MHD_Daemon *daemon;
	unsigned short port;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result static_error(struct MHD_Connection *c, unsigned status, const char *json)
{
	return reply(c, status, "application/json", (char *)json, strlen(json),
		     MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result metrics_access(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_size, void **req)
{
	(void)cls, (void)version, (void)upload_data;
	if (!*req) { /* headers only: wait for (and ignore) any body */
		*req = (void *)1;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics"))
		return static_error(c, MHD_HTTP_NOT_FOUND,
				    "{\"error\":\"not found: this port serves only GET /metrics\"}\n");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return static_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "{\"error\":\"method not allowed: use GET /metrics\"}\n");
	tp_buf b = TP_BUF_INIT((size_t)16 << 20);
	if (tw_metrics_render(&b)) {
		tp_buf_free(&b);
		return static_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "{\"error\":\"out of memory while rendering metrics\"}\n");
	}
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len,
		     MHD_RESPMEM_MUST_FREE);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	tw_logv(TW_LOG_WARN, fmt, ap);
}

int tw_metrics_serve(const char *listen, tw_metrics_server **out, char *err, size_t errlen)
{
	int fd;
	unsigned short port;
	if (tw_listen_socket(listen, &fd, &port, err, errlen))
		return -1;
	tw_metrics_server *m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		snprintf(err, errlen, "out of memory starting the metrics server");
		return -1;
	}
	m->port = port;
	m->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL,
				     NULL, metrics_access, NULL, MHD_OPTION_EXTERNAL_LOGGER,
				     mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				     MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_END);
	if (!m->daemon) {
		close(fd);
		free(m);
		snprintf(err, errlen,
			 "libmicrohttpd could not start the metrics server on %s; see the log above",
			 listen);
		return -1;
	}
	*out = m;
	return 0;
}

unsigned short tw_metrics_port(const tw_metrics_server *m)
{
	return m ? m->port : 0;
}

void tw_metrics_stop(tw_metrics_server *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->daemon); /* closes the listen socket it was given */
	free(m);
}

/*
 * webhook/metrics/metrics.c — counters, gauges and latency histograms, and
 * their Prometheus text; server/metrics_http.c serves it at /metrics.
 *
 * Every value is a relaxed atomic: the request path pays one add per value
 * and never takes a lock. A scrape reads each value once, so a rendering may
 * mix values a few requests apart; Prometheus tolerates that.
 */
#include "webhook/metrics/metrics.h"

#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/admission/routes.h"

#define MAX_ROUTES 32 /* tw_routes has about ten; the last slot is "other" */
#define MAX_WATCH 16  /* watched kinds (runtimes, PriorityClasses, the certificate's) */

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
	atomic_uint_fast64_t conns_refused;
	atomic_int_fast64_t conns_max;
	atomic_bool watch_on;
	atomic_int watch_kinds;
	const char *_Atomic watch_name[MAX_WATCH];
	atomic_int_fast64_t watch_synced_at[MAX_WATCH];
	atomic_int_fast64_t watch_status[MAX_WATCH];
	atomic_uint_fast64_t watch_reconnects[MAX_WATCH];
	atomic_uint_fast64_t watch_relists[MAX_WATCH][TW_RELIST__COUNT];
	atomic_bool watch_fresh[MAX_WATCH]; /* zero bytes: stale until the first list */
	atomic_uint_fast64_t errors[TW_ERR__COUNT];
	atomic_uint_fast64_t lookups[TP_KIND__COUNT][2][3];
	atomic_uint_fast64_t strict_warned[MAX_ROUTES];
	atomic_bool certmgr_on;
	atomic_int_fast64_t ca_not_after;
	atomic_uint_fast64_t rotations[2]; /* [0] serving, [1] CA */
	atomic_uint_fast64_t cabundle_writes;
	atomic_uint_fast64_t secret_writes;
	atomic_bool certmgr_ready;
} reg;

static const char *const error_names[TW_ERR__COUNT] = {
	"lookup_failed", "internal", "bad_request", "not_found", "method_not_allowed",
	"too_large", "unsupported_media_type", "not_ready", "timeout", "over_budget",
	"malformed_http",
};
static const char *const lookup_results[3] = { "found", "not_found", "error" };

#define ADD(v, n) atomic_fetch_add_explicit(&(v), (n), memory_order_relaxed)
#define GET(v) atomic_load_explicit(&(v), memory_order_relaxed)
#define SET(v, n) atomic_store_explicit(&(v), (n), memory_order_relaxed)

void tw_metrics_reset(void)
{
	memset(&reg, 0, sizeof(reg)); /* atomics of integer type: zero bytes are zero */
	tw_metrics_denials_reset();
	tw_metrics_limits_reset();
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

/* Names are registered once by the watch's start (a string that outlives
 * the registry: the watch's static kind tables); a lock-free append. The
 * kind's slot; -1 means no slot is left (the kind goes uncounted). */
int tw_metrics_watch_kind(const char *kind)
{
	int n = atomic_load(&reg.watch_kinds);
	for (int i = 0; i < n && i < MAX_WATCH; i++) {
		const char *have = atomic_load(&reg.watch_name[i]);
		if (have && !strcmp(have, kind))
			return i;
	}
	int slot = atomic_fetch_add(&reg.watch_kinds, 1);
	if (slot >= MAX_WATCH)
		return -1;
	atomic_store(&reg.watch_name[slot], kind);
	return slot;
}

void tw_metrics_watch_listed(int slot, int64_t unix_s, long status)
{
	if (slot < 0 || slot >= MAX_WATCH)
		return;
	SET(reg.watch_status[slot], status);
	if (status == 200)
		SET(reg.watch_synced_at[slot], unix_s);
}

void tw_metrics_watch_reconnect(int slot)
{
	if (slot >= 0 && slot < MAX_WATCH)
		ADD(reg.watch_reconnects[slot], 1);
}

/* ---- the watch's re-lists by cause, and its stale kinds ---- */

static const char *const relist_names[TW_RELIST__COUNT] = {
	"gone", "stream_broken", "error_event", "watch_failed",
};

void tw_metrics_watch_relist(int slot, tw_relist_reason why)
{
	if (slot >= 0 && slot < MAX_WATCH && (unsigned)why < TW_RELIST__COUNT)
		ADD(reg.watch_relists[slot][why], 1);
}

void tw_metrics_watch_stale(int slot, bool stale)
{
	if (slot >= 0 && slot < MAX_WATCH)
		SET(reg.watch_fresh[slot], !stale);
}

static int render_watch_relists(tp_buf *o, int n)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_watch_relists_total Re-lists decided "
				"after the first list, by kind and cause (gone: 410; stream_broken: "
				"an unreadable event; error_event: another ERROR event; "
				"watch_failed: a lost connection or an error status).\n"
				"# TYPE trainer_webhook_watch_relists_total counter\n");
	for (int i = 0; i < n && !rc; i++)
		for (int r = 0; r < TW_RELIST__COUNT && !rc; r++) {
			const char *kind = atomic_load(&reg.watch_name[i]);
			if (kind)
				rc = tp_buf_addf(o, "trainer_webhook_watch_relists_total{kind=\"%s\","
						    "reason=\"%s\"} %llu\n", kind, relist_names[r],
						 (unsigned long long)GET(reg.watch_relists[i][r]));
		}
	if (!rc)
		rc = tp_buf_adds(o, "# HELP trainer_webhook_watch_stale 1 while the kind's cache may "
				    "miss changes (before its first list, or from a broken watch "
				    "until the re-list completes): its lookups go to the API server.\n"
				    "# TYPE trainer_webhook_watch_stale gauge\n");
	for (int i = 0; i < n && !rc; i++) {
		const char *kind = atomic_load(&reg.watch_name[i]);
		if (kind)
			rc = tp_buf_addf(o, "trainer_webhook_watch_stale{kind=\"%s\"} %d\n", kind,
					 GET(reg.watch_fresh[i]) ? 0 : 1);
	}
	return rc;
}
/* ---- end of the watch's re-lists and stale kinds ---- */

void tw_metrics_error_answer(tw_error_reason r)
{
	if ((unsigned)r < TW_ERR__COUNT)
		ADD(reg.errors[r], 1);
}

void tw_metrics_lookup(tp_kind k, bool from_api, int result)
{
	if ((unsigned)k < TP_KIND__COUNT && result >= 0 && result < 3)
		ADD(reg.lookups[k][from_api][result], 1);
}

void tw_metrics_strict_warned(const tw_route *route, size_t n)
{
	ADD(reg.strict_warned[route_slot(route)], n);
}

void tw_metrics_certmgr_enable(void)
{
	SET(reg.certmgr_on, true);
}

void tw_metrics_ca_set(int64_t not_after)
{
	SET(reg.ca_not_after, not_after);
}

void tw_metrics_cert_rotated(bool ca)
{
	ADD(reg.rotations[ca], 1);
}

void tw_metrics_cabundle_written(void)
{
	ADD(reg.cabundle_writes, 1);
}

void tw_metrics_cert_secret_written(void)
{
	ADD(reg.secret_writes, 1);
}

void tw_metrics_certmgr_ready(bool ready)
{
	SET(reg.certmgr_ready, ready);
}

void tw_metrics_cert_set(int64_t not_after)
{
	SET(reg.cert_not_after, not_after);
}

void tw_metrics_cert_reload(bool ok)
{
	ADD(reg.cert_reloads[ok], 1);
}

void tw_metrics_connection_refused(void)
{
	ADD(reg.conns_refused, 1);
}

void tw_metrics_connection_limit(int64_t max)
{
	atomic_store(&reg.conns_max, max);
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

static int render_watch(tp_buf *o)
{
	if (!GET(reg.watch_on))
		return 0;
	int n = atomic_load(&reg.watch_kinds);
	n = n > MAX_WATCH ? MAX_WATCH : n;
	static const struct {
		const char *name, *help, *type;
	} fam[] = {
		{ "trainer_webhook_watch_last_sync_timestamp_seconds",
		  "Last completed list of the kind from the API server, as a Unix time (0: not yet).",
		  "gauge" },
		{ "trainer_webhook_watch_last_list_status",
		  "HTTP status of the kind's last list attempt (0: no answer; 404 for an optional "
		  "kind: its API is not installed).", "gauge" },
		{ "trainer_webhook_watch_reconnects_total",
		  "Watches started again after one ended, by kind.", "counter" },
	};
	int rc = 0;
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]) && !rc; f++) {
		rc = tp_buf_addf(o, "# HELP %s %s\n# TYPE %s %s\n", fam[f].name, fam[f].help,
				 fam[f].name, fam[f].type);
		for (int i = 0; i < n && !rc; i++) {
			const char *kind = atomic_load(&reg.watch_name[i]);
			long long v = f == 0   ? (long long)GET(reg.watch_synced_at[i])
				      : f == 1 ? (long long)GET(reg.watch_status[i])
					       : (long long)GET(reg.watch_reconnects[i]);
			if (kind)
				rc = tp_buf_addf(o, "%s{kind=\"%s\"} %lld\n", fam[f].name, kind, v);
		}
	}
	return rc ? rc : render_watch_relists(o, n);
}

static int render_errors(tp_buf *o)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_error_answers_total Answers that are an "
				"error rather than a verdict, by reason.\n"
				"# TYPE trainer_webhook_error_answers_total counter\n");
	for (int r = 0; r < TW_ERR__COUNT && !rc; r++)
		rc = tp_buf_addf(o, "trainer_webhook_error_answers_total{reason=\"%s\"} %llu\n",
				 error_names[r], (unsigned long long)GET(reg.errors[r]));
	if (!rc)
		rc = tp_buf_adds(o, "# HELP trainer_webhook_lookups_total Objects a decision looked "
				    "up, by kind, where (cache or api) and result.\n"
				    "# TYPE trainer_webhook_lookups_total counter\n");
	for (int k = 1; k < TP_KIND__COUNT && !rc; k++)
		for (int a = 0; a < 2 && !rc; a++)
			for (int x = 0; x < 3 && !rc; x++) {
				uint64_t v = GET(reg.lookups[k][a][x]);
				if (v)
					rc = tp_buf_addf(o, "trainer_webhook_lookups_total{kind=\"%s\","
							    "source=\"%s\",result=\"%s\"} %llu\n",
							 tp_kind_name((tp_kind)k), a ? "api" : "cache",
							 lookup_results[x], (unsigned long long)v);
			}
	if (!rc)
		rc = tp_buf_adds(o, "# HELP trainer_webhook_strict_warnings_total Strict-profile "
				    "violations answered as warnings (--strict-action warn), by route.\n"
				    "# TYPE trainer_webhook_strict_warnings_total counter\n");
	size_t nr = route_count();
	for (size_t r = 0; r < nr && !rc; r++)
		if (tw_routes[r].type == TW_ROUTE_VALIDATE)
			rc = tp_buf_addf(o, "trainer_webhook_strict_warnings_total{route=\"%s\"} %llu\n",
					 slot_path(r), (unsigned long long)GET(reg.strict_warned[r]));
	return rc;
}

static int render_certmgr(tp_buf *o)
{
	if (!GET(reg.certmgr_on))
		return 0;
	return tp_buf_addf(
		o,
		"# HELP trainer_webhook_ca_expiry_timestamp_seconds notAfter of the newest CA in the "
		"managed bundle, as a Unix time.\n"
		"# TYPE trainer_webhook_ca_expiry_timestamp_seconds gauge\n"
		"trainer_webhook_ca_expiry_timestamp_seconds %lld\n"
		"# HELP trainer_webhook_certificate_rotations_total Certificates this replica issued "
		"into the Secret, by what.\n"
		"# TYPE trainer_webhook_certificate_rotations_total counter\n"
		"trainer_webhook_certificate_rotations_total{what=\"serving\"} %llu\n"
		"trainer_webhook_certificate_rotations_total{what=\"ca\"} %llu\n"
		"# HELP trainer_webhook_cabundle_writes_total caBundle updates this replica wrote into "
		"the webhook configurations.\n"
		"# TYPE trainer_webhook_cabundle_writes_total counter\n"
		"trainer_webhook_cabundle_writes_total %llu\n"
		"# HELP trainer_webhook_cert_secret_writes_total Writes of the managed certificate "
		"Secret by this replica (at most one per write floor: a tenth of the shortest of "
		"--cert-validity, --ca-validity and --ca-overlap, from 1 s to 60 s).\n"
		"# TYPE trainer_webhook_cert_secret_writes_total counter\n"
		"trainer_webhook_cert_secret_writes_total %llu\n"
		"# HELP trainer_webhook_certificate_manager_ready 1 once a valid pair is served and "
		"every webhook configuration carries the bundle.\n"
		"# TYPE trainer_webhook_certificate_manager_ready gauge\n"
		"trainer_webhook_certificate_manager_ready %d\n",
		(long long)GET(reg.ca_not_after), (unsigned long long)GET(reg.rotations[0]),
		(unsigned long long)GET(reg.rotations[1]), (unsigned long long)GET(reg.cabundle_writes),
		(unsigned long long)GET(reg.secret_writes), GET(reg.certmgr_ready) ? 1 : 0);
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
		"# HELP trainer_webhook_connections_refused_total Connections closed at once: over "
		"--max-connections or --max-connections-per-peer.\n"
		"# TYPE trainer_webhook_connections_refused_total counter\n"
		"trainer_webhook_connections_refused_total %llu\n"
		"# HELP trainer_webhook_connections_max The --max-connections in force.\n"
		"# TYPE trainer_webhook_connections_max gauge\n"
		"trainer_webhook_connections_max %lld\n"
		"# HELP trainer_webhook_requests_in_flight Requests being read or decided now.\n"
		"# TYPE trainer_webhook_requests_in_flight gauge\n"
		"trainer_webhook_requests_in_flight %lld\n"
		"# HELP trainer_webhook_build_info Build of this binary (value 1).\n"
		"# TYPE trainer_webhook_build_info gauge\n"
		"trainer_webhook_build_info{version=\"%s\",libmicrohttpd=\"%s\",gnutls=\"%s\"} 1\n",
		(long long)GET(reg.cert_not_after), (unsigned long long)GET(reg.cert_reloads[1]),
		(unsigned long long)GET(reg.cert_reloads[0]), (unsigned long long)GET(reg.conns_refused),
		(long long)GET(reg.conns_max), (long long)GET(reg.in_flight),
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
		rc = render_errors(out);
	if (!rc)
		rc = render_certmgr(out);
	if (!rc)
		rc = render_misc(out);
	/* Families kept in their own files: denials by reason, the process,
	 * the server's limits. */
	if (!rc)
		rc = tw_metrics_render_denials(out);
	if (!rc)
		rc = tw_metrics_render_process(out);
	if (!rc)
		rc = tw_metrics_render_limits(out);
	return rc;
}

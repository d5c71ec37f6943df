/*
 * certmgr.c — the managed certificates' loop (see certmgr.h): read the
 * Secret and the webhook configurations, let certs/rotation.c decide, write
 * what changed with optimistic concurrency, serve the pair, publish the
 * bundle.
 */
#include "webhook/cluster/certmgr.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "certs/certs.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"
#include "webhook/cluster/resolver.h"
#include "webhook/cluster/watch.h"

#define CALL_TIMEOUT_MS 10000
#define DEFAULT_RESYNC_MS 60000
#define DEFAULT_BACKOFF_MAX_MS 30000
#define BACKOFF_MIN_MS 250
#define CONFLICT_ROUNDS 8 /* re-reads in a row after 409s before backing off */

enum cfg_kind { VALIDATING = 0, MUTATING, NCFG };

static const char *const cfg_plural[NCFG] = { "validatingwebhookconfigurations",
					      "mutatingwebhookconfigurations" };
static const char *const cfg_kind_name[NCFG] = { "ValidatingWebhookConfiguration",
						 "MutatingWebhookConfiguration" };

struct tw_certmgr {
	tw_certmgr_opts o;
	char *ns, *secret, *service, *cfg_name[NCFG];
	tw_kubeapi *api;
	tw_watch *watch;
	pthread_t thread;
	pthread_mutex_t lock; /* guards kick, stop, why */
	pthread_cond_t cv;
	bool kick, stop;
	atomic_bool ready;
	char why[1024];       /* what is missing while not ready */
	unsigned backoff;
};

/* A round's verdict: done (sleep until next due), again (a conflict: read
 * again at once), failed (back off). */
enum round { ROUND_DONE, ROUND_AGAIN, ROUND_FAILED };

/* ------------------------------------------------------------ helpers */

static void set_why(tw_certmgr *m, bool ready, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_why(tw_certmgr *m, bool ready, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&m->lock);
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof(m->why), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&m->lock);
	bool was = atomic_exchange(&m->ready, ready);
	tw_metrics_certmgr_ready(ready);
	if (ready && !was)
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "managed certificates: a valid pair is served "
		       "and every webhook configuration carries the CA bundle");
}

static char *b64(const char *s)
{
	tp_buf b = TP_BUF_INIT(0);
	if (tp_base64_encode(s, strlen(s), &b)) {
		tp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* data[key] of a Secret, decoded; malloc'd, NULL when absent or not base64. */
static char *secret_value(const cJSON *secret, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(tp_get(secret, "data"), key);
	if (!cJSON_IsString(v))
		return NULL;
	tp_buf b = TP_BUF_INIT(0);
	if (tp_base64_decode(v->valuestring, strlen(v->valuestring), &b)) {
		tp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

static int64_t parse_time(const char *s)
{
	struct tm tm = { 0 };
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	return end && !*end ? (int64_t)timegm(&tm) : 0;
}

static void format_time(int64_t t, char *out, size_t n)
{
	struct tm tm;
	time_t tt = (time_t)t;
	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* GET path into *obj (malloc'd tree, NULL on 404). -1 on anything else,
 * with why. */
static int get_object(tw_certmgr *m, const char *path, cJSON **obj, char *why, size_t n)
{
	*obj = NULL;
	tw_kube_resp r;
	tw_kube_resp_init(&r);
	int rc = 0;
	if (tw_kubeapi_call(m->api, "GET", path, NULL, CALL_TIMEOUT_MS, &r)) {
		snprintf(why, n, "%s", r.error);
		rc = -1;
	} else if (r.status == 200) {
		*obj = cJSON_ParseWithLength(r.body.data ? r.body.data : "", r.body.len);
		if (!*obj) {
			snprintf(why, n, "GET %s: the answer is not JSON", path);
			rc = -1;
		}
	} else if (r.status != 404) {
		snprintf(why, n, "GET %s: %s", path, r.error);
		rc = -1;
	}
	tw_kube_resp_free(&r);
	return rc;
}

/* PUT or POST obj. 0 done, 1 conflict (409), -1 failed (why). */
static int write_object(tw_certmgr *m, const char *method, const char *path, const cJSON *obj,
			char *why, size_t n)
{
	char *body = cJSON_PrintUnformatted(obj);
	if (!body) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	tw_kube_resp r;
	tw_kube_resp_init(&r);
	int rc = 0;
	if (tw_kubeapi_call(m->api, method, path, body, CALL_TIMEOUT_MS, &r)) {
		snprintf(why, n, "%s", r.error);
		rc = -1;
	} else if (r.status == 409) {
		rc = 1;
	} else if (r.status < 200 || r.status > 299) {
		snprintf(why, n, "%s %s: %s", method, path, r.error);
		rc = -1;
	}
	tw_kube_resp_free(&r);
	free(body);
	return rc;
}

/* ------------------------------------------------------------ webhooks */

/* Does every webhook of cfg carry bundle64? */
static bool carries(const cJSON *cfg, const char *bundle64)
{
	const cJSON *wh;
	cJSON_ArrayForEach(wh, tp_get_array(cfg, "webhooks"))
	{
		const char *cb = tp_get_str(wh, "clientConfig.caBundle");
		if (!cb || strcmp(cb, bundle64))
			return false;
	}
	return true;
}

static void set_bundle(cJSON *cfg, const char *bundle64)
{
	cJSON *wh;
	cJSON_ArrayForEach(wh, cJSON_GetObjectItemCaseSensitive(cfg, "webhooks"))
	{
		cJSON *cc = cJSON_GetObjectItemCaseSensitive(wh, "clientConfig");
		if (!cJSON_IsObject(cc))
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(cc, "caBundle");
		cJSON_AddStringToObject(cc, "caBundle", bundle64);
	}
}

static bool cfg_path(tw_certmgr *m, int i, char *out, size_t n)
{
	return tw_kube_path(out, n, "admissionregistration.k8s.io", "v1", cfg_plural[i], NULL,
			    m->cfg_name[i]);
}

/* The configurations as they are now (NULL: not configured or absent). */
static int read_configs(tw_certmgr *m, cJSON *cfg[NCFG], char *why, size_t n)
{
	char path[512];
	for (int i = 0; i < NCFG; i++) {
		cfg[i] = NULL;
		if (!m->cfg_name[i])
			continue;
		if (!cfg_path(m, i, path, sizeof(path))) {
			snprintf(why, n, "%s name \"%s\" is not a valid name", cfg_kind_name[i],
				 m->cfg_name[i]);
			return -1;
		}
		if (get_object(m, path, &cfg[i], why, n))
			return -1;
	}
	return 0;
}

static bool published(tw_certmgr *m, cJSON *cfg[NCFG], const char *ca_crt)
{
	char *want = b64(ca_crt ? ca_crt : "");
	bool ok = want != NULL;
	for (int i = 0; ok && i < NCFG; i++)
		if (m->cfg_name[i])
			ok = cfg[i] && carries(cfg[i], want);
	free(want);
	return ok;
}

/* Put the bundle into every webhook that lacks it. ROUND_DONE when both
 * carry it (ready), else a reason in why. */
static enum round publish(tw_certmgr *m, cJSON *cfg[NCFG], const char *ca_crt, char *why,
			  size_t n)
{
	char *want = b64(ca_crt);
	if (!want)
		return snprintf(why, n, "out of memory"), ROUND_FAILED;
	enum round r = ROUND_DONE;
	char path[512];
	for (int i = 0; i < NCFG && r == ROUND_DONE; i++) {
		if (!m->cfg_name[i])
			continue;
		if (!cfg[i]) {
			snprintf(why, n, "%s \"%s\" does not exist: apply deploy/ (it holds both "
				 "webhook configurations)", cfg_kind_name[i], m->cfg_name[i]);
			r = ROUND_FAILED;
			break;
		}
		if (carries(cfg[i], want))
			continue;
		set_bundle(cfg[i], want);
		cfg_path(m, i, path, sizeof(path));
		int w = write_object(m, "PUT", path, cfg[i], why, n);
		if (w > 0) {
			tw_log(TW_LOG_INFO, "managed certificates: %s %s changed meanwhile; "
			       "reading it again", cfg_kind_name[i], m->cfg_name[i]);
			r = ROUND_AGAIN;
		} else if (w < 0) {
			r = ROUND_FAILED;
		} else {
			tw_metrics_cabundle_written();
			tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "managed certificates: wrote the CA "
			       "bundle into %s %s", cfg_kind_name[i], m->cfg_name[i]);
		}
	}
	free(want);
	return r;
}

/* ------------------------------------------------------------ the Secret */

static void read_secret(const cJSON *sec, tw_certs_managed *in)
{
	memset(in, 0, sizeof(*in));
	in->ca_crt = secret_value(sec, "ca.crt");
	in->ca_key = secret_value(sec, "ca.key");
	in->ca_next_key = secret_value(sec, "ca-next.key");
	in->tls_crt = secret_value(sec, "tls.crt");
	in->tls_key = secret_value(sec, "tls.key");
	/* An annotation key holds '/' and '.', so it is read directly, not
	 * through a dotted tp_get path. */
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(tp_get(sec, "metadata.annotations"),
							    TW_CERTMGR_CA_ADDED);
	in->ca_added_at = cJSON_IsString(ann) ? parse_time(ann->valuestring) : 0;
}

static int set_data(cJSON *data, const char *key, const char *value)
{
	char *v = b64(value ? value : "");
	if (!v)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(data, key);
	bool ok = cJSON_AddStringToObject(data, key, v) != NULL;
	free(v);
	return ok ? 0 : -1;
}

static cJSON *child_object(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (cJSON_IsObject(o))
		return o;
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	return cJSON_AddObjectToObject(parent, key);
}

/* The Secret to write: what exists (resourceVersion included) with our four
 * keys and the annotation, or a new one. NULL when out of memory. */
static cJSON *secret_to_write(tw_certmgr *m, const cJSON *old, const tw_certs_managed *out)
{
	cJSON *sec = old ? cJSON_Duplicate(old, 1) : cJSON_CreateObject();
	if (!sec)
		return NULL;
	if (!old) {
		cJSON_AddStringToObject(sec, "apiVersion", "v1");
		cJSON_AddStringToObject(sec, "kind", "Secret");
		cJSON_AddStringToObject(sec, "type", "Opaque");
	}
	cJSON *meta = child_object(sec, "metadata");
	if (!old) {
		cJSON_AddStringToObject(meta, "name", m->secret);
		cJSON_AddStringToObject(meta, "namespace", m->ns);
	}
	cJSON *ann = child_object(meta, "annotations");
	cJSON *data = child_object(sec, "data");
	cJSON_DeleteItemFromObjectCaseSensitive(data, "ca-next.key"); /* only during a rotation */
	char when[32];
	format_time(out->ca_added_at, when, sizeof(when));
	cJSON_DeleteItemFromObjectCaseSensitive(ann, TW_CERTMGR_CA_ADDED);
	if (!meta || !ann || !data || !cJSON_AddStringToObject(ann, TW_CERTMGR_CA_ADDED, when) ||
	    set_data(data, "ca.crt", out->ca_crt) || set_data(data, "ca.key", out->ca_key) ||
	    set_data(data, "tls.crt", out->tls_crt) || set_data(data, "tls.key", out->tls_key) ||
	    (out->ca_next_key && set_data(data, "ca-next.key", out->ca_next_key))) {
		cJSON_Delete(sec);
		return NULL;
	}
	return sec;
}

static enum round write_secret(tw_certmgr *m, const cJSON *old, const tw_certs_managed *out,
			       const tw_certs_plan *plan, char *why, size_t n)
{
	char path[512];
	tw_kube_path(path, sizeof(path), "", "v1", "secrets", m->ns, old ? m->secret : NULL);
	cJSON *sec = secret_to_write(m, old, out);
	if (!sec)
		return snprintf(why, n, "out of memory"), ROUND_FAILED;
	int w = write_object(m, old ? "PUT" : "POST", path, sec, why, n);
	cJSON_Delete(sec);
	if (w > 0) {
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "managed certificates: another replica wrote "
		       "Secret %s/%s first; reading it again", m->ns, m->secret);
		return ROUND_AGAIN;
	}
	if (w < 0)
		return ROUND_FAILED;
	if (plan->new_ca)
		tw_metrics_cert_rotated(true);
	if (plan->new_leaf)
		tw_metrics_cert_rotated(false);
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_INFO | TW_LOG_ALWAYS, "managed certificates: wrote the Secret");
	tw_log_str(&l, "secret", m->secret);
	tw_log_bool(&l, "new_ca", plan->new_ca);
	tw_log_bool(&l, "new_serving_certificate", plan->new_leaf);
	tw_log_str(&l, "why", plan->why);
	tw_log_end(&l);
	return ROUND_DONE;
}

/* ------------------------------------------------------------ a round */

/* Serve the pair the Secret holds now; false (and why) when it is unusable. */
static bool serve_pair(tw_certmgr *m, const tw_certs_managed *cur, char *why, size_t n)
{
	char label[300], err[512];
	snprintf(label, sizeof(label), "Secret %s/%s", m->ns, m->secret);
	if (tw_tls_set_pem(m->o.tls, cur->tls_crt, cur->tls_key, label, err, sizeof(err)) < 0) {
		snprintf(why, n, "the serving pair in %s cannot be served: %s", label, err);
		return false;
	}
	return true;
}

static enum round round_once(tw_certmgr *m, int64_t *next_at, char *why, size_t n)
{
	char path[512];
	cJSON *sec = NULL, *cfg[NCFG] = { NULL };
	tw_certs_managed in = { 0 }, out = { 0 };
	tw_certs_plan plan;
	enum round r = ROUND_FAILED;
	tw_kube_path(path, sizeof(path), "", "v1", "secrets", m->ns, m->secret);
	if (get_object(m, path, &sec, why, n) || read_configs(m, cfg, why, n))
		goto done;
	read_secret(sec, &in);
	tw_certs_policy pol = { .service = m->service, .namespace_ = m->ns,
				.validity = m->o.validity, .ca_validity = m->o.ca_validity,
				.overlap = m->o.overlap,
				.bundle_published = published(m, cfg, in.ca_crt) };
	char err[512];
	if (tw_certs_rotate(&in, &pol, &out, &plan, err, sizeof(err))) {
		snprintf(why, n, "%s", err);
		goto done;
	}
	*next_at = plan.next_at;
	tw_metrics_ca_set(plan.ca_not_after);
	if (plan.changed && (r = write_secret(m, sec, &out, &plan, why, n)) != ROUND_DONE)
		goto done;
	bool pair = serve_pair(m, &out, why, n);
	r = publish(m, cfg, out.ca_crt, why, n);
	if (r == ROUND_DONE && !pair)
		r = ROUND_FAILED;
done:
	tw_certs_managed_free(&in);
	tw_certs_managed_free(&out);
	for (int i = 0; i < NCFG; i++)
		cJSON_Delete(cfg[i]);
	cJSON_Delete(sec);
	return r;
}

/* ------------------------------------------------------------ the thread */

/* Sleep until kicked, stopped, or ms passed. False when stopping. */
static bool wait_for(tw_certmgr *m, long long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&m->lock);
	while (!m->kick && !m->stop)
		if (pthread_cond_timedwait(&m->cv, &m->lock, &ts))
			break;
	m->kick = false;
	bool go_on = !m->stop;
	pthread_mutex_unlock(&m->lock);
	return go_on;
}

static void *run(void *arg)
{
	tw_certmgr *m = arg;
	int conflicts = 0;
	for (;;) {
		char why[1024] = "";
		int64_t next_at = 0;
		enum round r = round_once(m, &next_at, why, sizeof(why));
		long long wait_ms;
		if (r == ROUND_AGAIN && ++conflicts < CONFLICT_ROUNDS) {
			wait_ms = 0;
		} else if (r == ROUND_DONE) {
			conflicts = 0;
			m->backoff = BACKOFF_MIN_MS;
			set_why(m, true, "%s", "");
			struct timespec wall;
			clock_gettime(CLOCK_REALTIME, &wall);
			long long due = next_at * 1000LL -
					((long long)wall.tv_sec * 1000 + wall.tv_nsec / 1000000);
			wait_ms = due < (long long)m->o.resync_ms ? due : (long long)m->o.resync_ms;
		} else {
			conflicts = 0;
			if (r == ROUND_AGAIN)
				snprintf(why, sizeof(why), "the Secret or a webhook configuration keeps "
							   "changing under this replica");
			set_why(m, false, "managed certificates: %s", why);
			tw_log(TW_LOG_WARN, "managed certificates: %s; retrying in %u ms", why,
			       m->backoff);
			wait_ms = m->backoff;
			m->backoff = m->backoff * 2 > m->o.backoff_max_ms ? m->o.backoff_max_ms
									  : m->backoff * 2;
		}
		if (wait_ms > 0 && !wait_for(m, wait_ms))
			break;
		pthread_mutex_lock(&m->lock);
		bool stop = m->stop;
		pthread_mutex_unlock(&m->lock);
		if (stop)
			break;
	}
	return NULL;
}

/* The watch's sinks: any change to the three objects wakes the loop. */
static void kick(tw_certmgr *m)
{
	pthread_mutex_lock(&m->lock);
	m->kick = true;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->lock);
}

static void sink_put(void *arg, cJSON *obj)
{
	cJSON_Delete(obj);
	kick(arg);
}

static void sink_del(void *arg, const char *ns, const char *name)
{
	(void)ns, (void)name;
	kick(arg);
}

static int start_watch(tw_certmgr *m, const tw_kube_config *kube, char *err, size_t errlen)
{
	tw_watch_sink sink = { sink_put, sink_del, m };
	tw_watch_kind kinds[1 + NCFG] = {
		{ .group = "", .version = "v1", .plural = "secrets", .kind = "Secret",
		  .namespace_ = m->ns, .name = m->secret, .optional = true, .sink = sink },
	};
	size_t n = 1;
	for (int i = 0; i < NCFG; i++)
		if (m->cfg_name[i])
			kinds[n++] = (tw_watch_kind){ .group = "admissionregistration.k8s.io",
						      .version = "v1", .plural = cfg_plural[i],
						      .kind = cfg_kind_name[i],
						      .cluster_scoped = true,
						      .name = m->cfg_name[i], .optional = true,
						      .sink = sink };
	tw_watch_opts wo = { .kube = kube, .kinds = kinds, .nkinds = n,
			     .name = "certificates", .backoff_max_ms = m->o.backoff_max_ms };
	return tw_watch_start(&wo, &m->watch, err, errlen);
}

static void certmgr_free(tw_certmgr *m)
{
	tw_watch_stop(m->watch);
	tw_kubeapi_free(m->api);
	free(m->ns);
	free(m->secret);
	free(m->service);
	for (int i = 0; i < NCFG; i++)
		free(m->cfg_name[i]);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static char *dup_name(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

int tw_certmgr_start(const tw_certmgr_opts *o, tw_certmgr **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!o->kube || !o->tls || !o->namespace_ || !o->secret || !o->service) {
		snprintf(err, errlen, "managed certificates need the API server, a namespace, a "
				      "Secret name and a Service name");
		return -1;
	}
	tw_certmgr *m = calloc(1, sizeof(*m));
	if (!m)
		return snprintf(err, errlen, "out of memory"), -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cv, &ca);
	pthread_condattr_destroy(&ca);
	m->o = *o;
	m->o.kube = NULL; /* copied by the client and the watch */
	if (!m->o.resync_ms)
		m->o.resync_ms = DEFAULT_RESYNC_MS;
	if (!m->o.backoff_max_ms)
		m->o.backoff_max_ms = DEFAULT_BACKOFF_MAX_MS;
	m->backoff = BACKOFF_MIN_MS;
	m->ns = dup_name(o->namespace_);
	m->secret = dup_name(o->secret);
	m->service = dup_name(o->service);
	m->cfg_name[VALIDATING] = dup_name(o->validating);
	m->cfg_name[MUTATING] = dup_name(o->mutating);
	snprintf(m->why, sizeof(m->why), "managed certificates: the Secret has not been read yet");
	if (!m->ns || !m->secret || !m->service || tw_kubeapi_new(o->kube, &m->api, err, errlen) ||
	    start_watch(m, o->kube, err, errlen)) {
		if (!err[0])
			snprintf(err, errlen, "out of memory");
		certmgr_free(m);
		return -1;
	}
	tw_metrics_certmgr_enable();
	if (pthread_create(&m->thread, NULL, run, m)) {
		snprintf(err, errlen, "cannot start the certificate manager's thread");
		certmgr_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void tw_certmgr_stop(tw_certmgr *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	certmgr_free(m);
}

bool tw_certmgr_ready(void *arg, char *why, size_t whylen)
{
	tw_certmgr *m = arg;
	if (atomic_load(&m->ready))
		return true;
	pthread_mutex_lock(&m->lock);
	snprintf(why, whylen, "%s", m->why);
	pthread_mutex_unlock(&m->lock);
	return false;
}

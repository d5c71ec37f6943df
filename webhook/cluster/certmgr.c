/*
 * webhook/cluster/certmgr.c — the managed certificates' loop (see
 * certmgr.h): read the Secret and the webhook configurations
 * (certmgr_objects.c), let certs/rotation.c decide, write what changed with
 * optimistic concurrency, serve the pair, publish the bundle; its thread and
 * readiness.
 */
#include "webhook/cluster/certmgr_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

#define DEFAULT_RESYNC_MS 60000
#define DEFAULT_BACKOFF_MAX_MS 30000
#define BACKOFF_MIN_MS 250
#define CONFLICT_ROUNDS 8 /* re-reads in a row after 409s before backing off */

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

/* ------------------------------------------------------------ a round */

/* Serve the pair the Secret holds now; false (and why) when it is unusable. */
static bool serve_pair(tw_certmgr *m, const tw_certs_managed *cur, char *why, size_t n)
{
	char label[300], err[512];
	snprintf(label, sizeof(label), "Secret %s/%s", m->ns, m->secret);
	if (m->o.serve(m->o.serve_arg, cur->tls_crt, cur->tls_key, label, err, sizeof(err)) < 0) {
		snprintf(why, n, "the serving pair in %s cannot be served: %s", label, err);
		return false;
	}
	return true;
}

/* The bundle the Secret holds now, for tw_certmgr_bundle. */
static void remember_bundle(tw_certmgr *m, const char *ca_crt)
{
	char *copy = ca_crt ? strdup(ca_crt) : NULL;
	pthread_mutex_lock(&m->lock);
	if (copy || !ca_crt) {
		free(m->bundle);
		m->bundle = copy;
	}
	pthread_mutex_unlock(&m->lock);
}

static enum round round_once(tw_certmgr *m, int64_t *next_at, char *why, size_t n)
{
	char path[512];
	cJSON *sec = NULL, *cfg[NCFG] = { NULL };
	tw_certs_managed in = { 0 }, out = { 0 };
	tw_certs_plan plan;
	enum round r = ROUND_FAILED;
	tw_kube_path(path, sizeof(path), "", "v1", "secrets", m->ns, m->secret);
	if (tw__certmgr_get(m, path, &sec, why, n) || tw__certmgr_read_configs(m, cfg, why, n))
		goto done;
	tw__certmgr_read_secret(sec, &in);
	tw_certs_policy pol = { .service = m->service, .namespace_ = m->ns,
				.validity = m->o.validity, .ca_validity = m->o.ca_validity,
				.overlap = m->o.overlap, .last_write = m->last_write,
				.bundle_published = tw__certmgr_published(m, cfg, in.ca_crt) };
	char err[512];
	if (tw_certs_rotate(&in, &pol, &out, &plan, err, sizeof(err))) {
		snprintf(why, n, "%s", err);
		goto done;
	}
	*next_at = plan.next_at;
	tw_metrics_ca_set(plan.ca_not_after);
	if (plan.held) { /* what is served and published stays as it is */
		tw_log(TW_LOG_INFO, "managed certificates: %s", plan.why);
		r = ROUND_HELD;
		goto done;
	}
	if (plan.changed && (r = tw__certmgr_write_secret(m, sec, &out, &plan, why, n)) != ROUND_DONE)
		goto done;
	remember_bundle(m, out.ca_crt);
	bool pair = serve_pair(m, &out, why, n);
	r = tw__certmgr_publish(m, cfg, out.ca_crt, why, n);
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
		} else if (r == ROUND_DONE || r == ROUND_HELD) {
			conflicts = 0;
			m->backoff = BACKOFF_MIN_MS;
			if (r == ROUND_DONE)
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
		if ((wait_ms > 0 && !tw_wake_wait(&m->wake, wait_ms)) || tw_wake_stopping(&m->wake))
			break;
	}
	return NULL;
}

static int start_watch(tw_certmgr *m, const tw_kube_config *kube, char *err, size_t errlen)
{
	tw_watch_sink sink = tw_wake_sink(&m->wake); /* any change wakes the loop */
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
	free(m->bundle);
	tw_wake_destroy(&m->wake);
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
	if (!o->kube || !o->serve || !o->namespace_ || !o->secret || !o->service) {
		snprintf(err, errlen, "managed certificates need the API server, a namespace, a "
				      "Secret name and a Service name");
		return TW_EFAILED;
	}
	tw_certmgr *m = calloc(1, sizeof(*m));
	if (!m)
		return snprintf(err, errlen, "out of memory"), TP_ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	tw_wake_init(&m->wake);
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
		return TW_EFAILED;
	}
	tw_metrics_certmgr_enable();
	if (pthread_create(&m->thread, NULL, run, m)) {
		snprintf(err, errlen, "cannot start the certificate manager's thread");
		certmgr_free(m);
		return TW_EFAILED;
	}
	*out = m;
	return 0;
}

void tw_certmgr_stop(tw_certmgr *m)
{
	if (!m)
		return;
	tw_wake_stop(&m->wake);
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

char *tw_certmgr_bundle(void *arg)
{
	tw_certmgr *m = arg;
	pthread_mutex_lock(&m->lock);
	char *b = m->bundle ? strdup(m->bundle) : NULL;
	pthread_mutex_unlock(&m->lock);
	return b;
}

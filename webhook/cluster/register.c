/*
 * register.c — serve --register-webhooks (see register.h): one thread that
 * fills both webhook configurations once the replica is ready and a Service
 * endpoint is, keeps them so (woken by a watch on both, and every
 * resync_ms), and at shutdown empties them when this pod is being deleted
 * and no other replica is ready.
 */
#include "webhook/cluster/register_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/core/log.h"

#define DEFAULT_POLL_MS 1000
#define DEFAULT_RESYNC_MS 30000
#define CONFLICT_TRIES 5

/* Log a state once, when it changes (the loop looks every second). */
static void say(tw_register *r, int lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(tw_register *r, int lvl, const char *fmt, ...)
{
	char line[sizeof(r->said)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!strcmp(line, r->said))
		return;
	snprintf(r->said, sizeof(r->said), "%s", line);
	tw_log(lvl, "webhook configurations: %s", line);
}

/* Both configurations to fill (or empty); conflicts read again. 0, or -1
 * with why. */
static int put_all(tw_register *r, bool fill, char *why, size_t n)
{
	for (int i = 0; i < REG_NCFG; i++) {
		if (!r->cfg_name[i])
			continue;
		int rc = 1;
		for (int t = 0; rc == 1 && t < CONFLICT_TRIES; t++)
			rc = tw__register_put(r, i, fill, why, n);
		if (rc == 1)
			snprintf(why, n, "%s keeps changing under this replica", r->cfg_name[i]);
		if (rc)
			return TW_EFAILED;
	}
	return 0;
}

/* One look: fill when everything is there. True when filled. */
static bool round_once(tw_register *r)
{
	char why[1024] = "";
	reg_endpoints ep;
	if (!r->o.ready(r->o.ready_arg, why, sizeof(why))) {
		say(r, TW_LOG_DEBUG, "waiting for this replica: %s", why);
		return false;
	}
	if (tw__register_endpoints(r, &ep, why, sizeof(why))) {
		say(r, TW_LOG_WARN, "cannot read the endpoints of Service %s/%s: %s", r->ns,
		    r->service, why);
		return false;
	}
	if (!ep.ready) {
		say(r, TW_LOG_INFO, "waiting for a ready endpoint of Service %s/%s before the "
				    "webhooks go in", r->ns, r->service);
		return false;
	}
	if (put_all(r, true, why, sizeof(why))) {
		say(r, TW_LOG_WARN, "cannot fill them: %s", why);
		return false;
	}
	say(r, TW_LOG_INFO | TW_LOG_ALWAYS, "filled (%s, %s): the API server calls this "
	    "webhook from now on", r->cfg_name[REG_VALIDATING] ? r->cfg_name[REG_VALIDATING] : "-",
	    r->cfg_name[REG_MUTATING] ? r->cfg_name[REG_MUTATING] : "-");
	return true;
}

static void *run(void *arg)
{
	tw_register *r = arg;
	do {
		bool filled = round_once(r);
		if (filled)
			atomic_store(&r->filled, true);
		if (!tw_wake_wait(&r->wake, filled ? r->o.resync_ms : r->o.poll_ms))
			break;
	} while (true);
	return NULL;
}

/* ------------------------------------------------------------ the watch */

static int start_watch(tw_register *r, char *err, size_t errlen)
{
	static const char *const plural[REG_NCFG] = { "validatingwebhookconfigurations",
						       "mutatingwebhookconfigurations" };
	static const char *const kind[REG_NCFG] = { "ValidatingWebhookConfiguration",
						     "MutatingWebhookConfiguration" };
	tw_watch_kind kinds[REG_NCFG];
	size_t n = 0;
	for (int i = 0; i < REG_NCFG; i++)
		if (r->cfg_name[i])
			kinds[n++] = (tw_watch_kind){ .group = "admissionregistration.k8s.io",
						      .version = "v1", .plural = plural[i],
						      .kind = kind[i], .cluster_scoped = true,
						      .name = r->cfg_name[i], .optional = true,
						      .sink = tw_wake_sink(&r->wake) };
	tw_watch_opts wo = { .kube = r->o.kube, .kinds = kinds, .nkinds = n,
			     .name = "webhook configurations" };
	return n ? tw_watch_start(&wo, &r->watch, err, errlen) : 0;
}

/* ------------------------------------------------------------ life */

static char *dup_name(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

static void reg_free(tw_register *r)
{
	tw_watch_stop(r->watch);
	tw_kubeapi_free(r->api);
	free(r->ns);
	free(r->service);
	free(r->pod);
	free(r->policy);
	for (int i = 0; i < REG_NCFG; i++)
		free(r->cfg_name[i]);
	for (size_t i = 0; r->exempt && r->exempt[i]; i++)
		free(r->exempt[i]);
	free(r->exempt);
	tw_wake_destroy(&r->wake);
	free(r);
}

static bool copy_opts(tw_register *r, const tw_register_opts *o)
{
	r->o = *o;
	if (!r->o.poll_ms)
		r->o.poll_ms = DEFAULT_POLL_MS;
	if (!r->o.resync_ms)
		r->o.resync_ms = DEFAULT_RESYNC_MS;
	r->ns = dup_name(o->namespace_);
	r->service = dup_name(o->service);
	r->pod = dup_name(o->pod);
	r->policy = strdup(o->failure_policy ? o->failure_policy : "Fail");
	r->cfg_name[REG_VALIDATING] = dup_name(o->validating);
	r->cfg_name[REG_MUTATING] = dup_name(o->mutating);
	r->exempt = calloc(o->nexempt + 1, sizeof(*r->exempt));
	bool ok = r->ns && r->service && r->policy && r->exempt &&
		  (r->pod || !o->pod || !*o->pod) &&
		  (r->cfg_name[REG_VALIDATING] || !o->validating || !*o->validating) &&
		  (r->cfg_name[REG_MUTATING] || !o->mutating || !*o->mutating);
	for (size_t i = 0; ok && i < o->nexempt; i++)
		ok = (r->exempt[i] = strdup(o->exempt[i])) != NULL;
	return ok;
}

int tw_register_start(const tw_register_opts *o, tw_register **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!o->kube || !o->ready || !o->namespace_ || !o->service) {
		snprintf(err, errlen, "registering the webhooks needs the API server, a namespace, "
				      "the Service and a readiness gate");
		return TW_EFAILED;
	}
	tw_register *r = calloc(1, sizeof(*r));
	if (!r)
		return snprintf(err, errlen, "out of memory"), TP_ENOMEM;
	tw_wake_init(&r->wake);
	atomic_init(&r->filled, false);
	if (!copy_opts(r, o)) {
		reg_free(r);
		return snprintf(err, errlen, "out of memory"), TP_ENOMEM;
	}
	if (tw_kubeapi_new(o->kube, &r->api, err, errlen) || start_watch(r, err, errlen)) {
		reg_free(r);
		return TW_EFAILED;
	}
	r->o.kube = NULL; /* copied by the client and the watch */
	if (pthread_create(&r->thread, NULL, run, r)) {
		snprintf(err, errlen, "cannot start the registrar's thread");
		reg_free(r);
		return TW_EFAILED;
	}
	*out = r;
	return 0;
}

/* At shutdown: empty both configurations when this pod is going away and
 * no other replica is ready to answer; else leave them. */
static void unregister(tw_register *r)
{
	char why[1024] = "";
	reg_endpoints ep;
	if (tw__register_endpoints(r, &ep, why, sizeof(why))) {
		tw_log(TW_LOG_WARN | TW_LOG_ALWAYS, "webhook configurations: cannot tell whether "
		       "another replica is ready (%s): they stay as they are (fail-closed)", why);
		return;
	}
	if (ep.others) {
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "webhook configurations: %d other replica%s "
		       "ready: they stay", ep.others, ep.others == 1 ? " is" : "s are");
		return;
	}
	if (ep.own == OWN_SERVING) {
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "webhook configurations: this pod is not being "
		       "deleted (a container restart): they stay");
		return;
	}
	if (put_all(r, false, why, sizeof(why)))
		tw_log(TW_LOG_WARN | TW_LOG_ALWAYS, "webhook configurations: the last replica could "
		       "not empty them: %s", why);
	else
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "webhook configurations: emptied by the last "
		       "replica: no write waits for a webhook that is gone");
}

void tw_register_stop(tw_register *r, bool unregister_them)
{
	if (!r)
		return;
	tw_wake_stop(&r->wake);
	pthread_join(r->thread, NULL);
	tw_watch_stop(r->watch);
	r->watch = NULL;
	if (unregister_them)
		unregister(r);
	reg_free(r);
}

bool tw_register_filled(tw_register *r)
{
	return r && atomic_load(&r->filled);
}

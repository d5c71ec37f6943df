/*
 * watch.c — list-then-watch of API-server kinds into sinks (see watch.h).
 *
 * One thread drives a curl multi handle with one easy handle per kind. Each
 * kind is a small state machine: LIST (page after page) then WATCH (a long
 * response of JSON lines, applied as they arrive from libcurl's write
 * callback). Every transfer's end decides what comes next and when: a
 * continue token goes on at once, a watch the server ended cleanly resumes
 * at once, a 410 re-lists at once, anything else re-lists after a jittered,
 * growing backoff. From a broken watch until the re-list completes the kind
 * is stale (watch_fresh.h): lookups do not trust its cache. The thread
 * sleeps in curl_multi_poll, which tw_watch_stop wakes.
 *
 * Sinks are written in place (the store's own writer lock per put/remove),
 * so the server's readers never wait for the network. To replace a kind's
 * objects after a re-list without a window where kept objects are missing,
 * the watch remembers the keys it put (per kind) and deletes only those the
 * new list no longer has, after putting the new ones.
 */
#include "webhook/cluster/watch_internal.h"
#include "webhook/core/json_read.h"

#include <stdlib.h>
#include <string.h>

#include "webhook/cluster/kubeapi.h"
#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

static void st_reconnect(tw_watch_stat *t, const struct res *s)
{
	(void)s;
	t->reconnects++;
}

/* --------------------------------------------------------- transfers */

static int url_of(struct res *s, char *url, size_t n)
{
	char path[1024], sel[600] = "";
	if (!tw_kube_path(path, sizeof(path), s->k.group, s->k.version, s->k.plural,
			  s->k.namespace_, NULL))
		return TW_EFAILED;
	if (s->k.name) {
		char *v = curl_easy_escape(s->easy, s->k.name, 0);
		snprintf(sel, sizeof(sel), "&fieldSelector=metadata.name%%3D%s", v ? v : "");
		curl_free(v);
	}
	int len;
	if (s->mode == MODE_LIST) {
		char *cont = s->cont ? curl_easy_escape(s->easy, s->cont, 0) : NULL;
		len = snprintf(url, n, "%s%s?limit=%u%s%s%s", s->w->kube.server, path,
			       s->w->o.page_limit, cont ? "&continue=" : "", cont ? cont : "", sel);
		curl_free(cont);
	} else {
		char *rv = curl_easy_escape(s->easy, s->rv, 0);
		len = snprintf(url, n,
			       "%s%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s"
			       "&timeoutSeconds=%u%s",
			       s->w->kube.server, path, rv ? rv : "", s->w->o.timeout_s, sel);
		curl_free(rv);
	}
	return len > 0 && (size_t)len < n ? 0 : TW_EFAILED;
}

static int start(struct res *s)
{
	tw_watch *w = s->w;
	char url[4096];
	CURL *e = s->easy;
	curl_easy_reset(e);
	curl_slist_free_all(s->headers);
	s->headers = NULL;
	tp_buf_reset(&s->body);
	tw_jsonlines_reset(&s->lines);
	s->end = END_NONE;
	s->end_why[0] = '\0';
	s->conn_events = 0;
	s->errbuf[0] = '\0';
	if (url_of(s, url, sizeof(url)))
		return TW_EFAILED;
	s->headers = curl_slist_append(NULL, "Accept: application/json");
	/* The CA, a client certificate, the token (the file read at every
	 * transfer: the kubelet rotates it) or an exec plugin's (kubeauth.c). */
	char why[512];
	if (tw_kube_auth_apply(&w->kube, e, &s->headers, TW_KUBE_AUTH_REREAD, why, sizeof(why))) {
		tw_log(TW_LOG_WARN, "watch %s: %s", s->resource, why);
		return TW_EFAILED;
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, tw__watch_on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(e, CURLOPT_PRIVATE, s);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "trainer-webhook");
	/* A list gets a minute; a watch its server-side timeout and a margin. */
	long limit_ms = s->mode == MODE_LIST ? 60000L : ((long)w->o.timeout_s + 30L) * 1000L;
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, limit_ms);
	s->started = tw__mono_ms();
	if (curl_multi_add_handle(w->multi, e) != CURLM_OK)
		return TW_EFAILED;
	s->busy = true;
	return 0;
}

/* The Status message of an error answer, for the log and readiness. */
static void status_text(struct res *s, long code, CURLcode result, char *out, size_t n)
{
	if (result != CURLE_OK) {
		snprintf(out, n, "%.150s", s->errbuf[0] ? s->errbuf : curl_easy_strerror(result));
		return;
	}
	cJSON *st = tw_json_object(s->body.data, s->body.len);
	const char *msg = tp_get_str(st, "message");
	snprintf(out, n, "HTTP %ld%s%.150s", code, msg ? ": " : "", msg ? msg : "");
	cJSON_Delete(st);
}

static void list_failed(struct res *s, long code, CURLcode result)
{
	char text[192];
	status_text(s, code, result, text, sizeof(text));
	bool absent = s->k.optional && result == CURLE_OK && code == 404;
	pthread_mutex_lock(&s->w->stat_lock);
	tw_watch_stat *t = &s->w->stat[s->idx];
	t->last_status = result == CURLE_OK ? code : 0;
	t->absent = absent;
	snprintf(t->last_error, sizeof(t->last_error), "%s", text);
	pthread_mutex_unlock(&s->w->stat_lock);
	if (s->metric >= 0)
		tw_metrics_watch_listed(s->metric, 0, result == CURLE_OK ? code : 0);
	if (result == CURLE_OK && code == 401) /* an exec plugin's credential expired */
		tw_kube_auth_unauthorized(&s->w->kube);
	/* An optional kind whose API is absent is worth one line, not one per retry. */
	long key = result == CURLE_OK ? code : -2;
	if (absent && s->last_logged != key)
		tw_log(TW_LOG_WARN, "watch %s: the API server does not serve it (%s); rules "
				    "that read it see none until it does; retrying",
		       s->resource, text);
	s->last_logged = key;
	char why[256];
	snprintf(why, sizeof(why), "list: %s", text);
	tw__watch_back_off(s, why);
}

/* The watch broke: the kind is stale until its next list completes. A 410
 * re-lists at once (the API server is there, the resourceVersion is simply
 * too old), anything else after a backoff. */
static void relist(struct res *s, tw_relist_reason reason, const char *why)
{
	tw__watch_start_list_over(s);
	tw__watch_set_fresh(s, false);
	if (s->metric >= 0)
		tw_metrics_watch_relist(s->metric, reason);
	if (reason == TW_RELIST_GONE) {
		tw_log(TW_LOG_INFO, "watch %s: resourceVersion %s is gone (%s): re-listing now",
		       s->resource, s->rv, why);
		s->next_at = tw__mono_ms();
		return;
	}
	char text[256];
	snprintf(text, sizeof(text), "re-list after %s", why);
	tw__watch_back_off(s, text);
}

static void watch_ended(struct res *s, long code, CURLcode result)
{
	char why[256];
	if (code == 410 || s->end == END_GONE) {
		if (code == 410)
			status_text(s, code, result, why, sizeof(why));
		relist(s, TW_RELIST_GONE, code == 410 ? why : s->end_why);
		return;
	}
	if (s->end != END_NONE) {
		relist(s, s->end == END_ERROR_EVENT ? TW_RELIST_ERROR_EVENT
						    : TW_RELIST_STREAM_BROKEN, s->end_why);
		return;
	}
	bool long_enough = tw__mono_ms() - s->started >= 1000;
	if (result == CURLE_OK && code == 200 && (s->conn_events || long_enough)) {
		/* The server closed a healthy watch (its timeoutSeconds): resume. */
		tw__watch_stat(s, st_reconnect);
		if (s->metric >= 0)
			tw_metrics_watch_reconnect(s->metric);
		tw__watch_backoff_reset(s);
		s->next_at = tw__mono_ms();
		return;
	}
	char text[200];
	if (result == CURLE_OK && code == 200)
		snprintf(text, sizeof(text), "it ended at once");
	else
		status_text(s, code, result, text, sizeof(text));
	snprintf(why, sizeof(why), "a failed watch (%s)", text);
	relist(s, TW_RELIST_WATCH_FAILED, why);
}

static void finished(struct res *s, CURLcode result)
{
	long code = 0;
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	curl_multi_remove_handle(s->w->multi, s->easy);
	s->busy = false;
	s->lost = result != CURLE_OK && s->end == END_NONE;
	if (s->mode == MODE_LIST) {
		if (result == CURLE_OK && code == 200) {
			tw__watch_list_page(s);
			return;
		}
		tw__watch_start_list_over(s); /* 410 here: the continue token expired */
		list_failed(s, code, result);
		return;
	}
	watch_ended(s, code, result);
}

/* A read-through found the API server answering: a stale kind whose last
 * attempt was lost in transport (refused, reset, cut) lists now instead of
 * waiting out a backoff grown while the API server was away. One that the
 * API server itself refused (an error status) keeps its backoff. */
static void nudge(tw_watch *w, uint64_t now)
{
	if (!w->o.fresh || !tw_fresh_take_answered(w->o.fresh))
		return;
	for (size_t i = 0; i < w->n; i++) {
		struct res *s = &w->res[i];
		if (s->busy || s->mode != MODE_LIST || !s->lost || s->next_at <= now)
			continue;
		tw_log(TW_LOG_INFO, "watch %s: the API server answers again: listing now",
		       s->resource);
		s->next_at = now;
	}
}

/* ------------------------------------------------------------ thread */

static void *run(void *arg)
{
	tw_watch *w = arg;
	while (!atomic_load(&w->stop)) {
		uint64_t now = tw__mono_ms();
		long wait_ms;
		nudge(w, now);
		for (size_t i = 0; i < w->n; i++) {
			struct res *s = &w->res[i];
			if (!s->busy && now >= s->next_at && start(s))
				tw__watch_back_off(s, "cannot start a request");
		}
		int running = 0;
		curl_multi_perform(w->multi, &running);
		CURLMsg *m;
		int left;
		while ((m = curl_multi_info_read(w->multi, &left)))
			if (m->msg == CURLMSG_DONE) {
				struct res *s = NULL;
				curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
				if (s)
					finished(s, m->data.result);
			}
		if (w->relisted_due && w->o.relisted)
			w->o.relisted(w->o.relisted_arg);
		w->relisted_due = false;
		bool idle_due = false;
		now = tw__mono_ms();
		wait_ms = 1000;
		for (size_t i = 0; i < w->n; i++) {
			struct res *s = &w->res[i];
			if (s->busy)
				continue;
			if (s->next_at <= now)
				idle_due = true;
			else if ((long)(s->next_at - now) < wait_ms)
				wait_ms = (long)(s->next_at - now);
		}
		if (!idle_due && !atomic_load(&w->stop))
			curl_multi_poll(w->multi, NULL, 0, (int)(wait_ms > 0 ? wait_ms : 1), NULL);
	}
	return NULL;
}

static void res_free(struct res *s)
{
	if (s->easy) {
		if (s->busy)
			curl_multi_remove_handle(s->w->multi, s->easy);
		curl_easy_cleanup(s->easy);
	}
	curl_slist_free_all(s->headers);
	free(s->cont);
	tp_buf_free(&s->body);
	tw_jsonlines_free(&s->lines);
	tw_keyset_free(&s->have);
	tw_keyset_free(&s->seen);
}

static void watch_free(tw_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		res_free(&w->res[i]);
	if (w->multi)
		curl_multi_cleanup(w->multi);
	tw_kube_config_free(&w->kube);
	pthread_mutex_destroy(&w->stat_lock);
	free(w);
}

static void defaults(tw_watch_opts *o)
{
	if (!o->page_limit)
		o->page_limit = 500;
	if (!o->timeout_s)
		o->timeout_s = 300;
	if (!o->backoff_min_ms)
		o->backoff_min_ms = 200;
	if (!o->backoff_max_ms)
		o->backoff_max_ms = 30000;
	if (o->backoff_max_ms < o->backoff_min_ms)
		o->backoff_max_ms = o->backoff_min_ms;
	if (!o->max_event)
		o->max_event = (size_t)16 << 20;
	if (!o->max_page)
		o->max_page = (size_t)256 << 20;
	if (!o->name)
		o->name = "watch";
}

static int res_init(tw_watch *w, size_t i)
{
	struct res *s = &w->res[i];
	s->w = w;
	s->k = w->o.kinds[i];
	s->idx = (int)i;
	s->mode = MODE_LIST;
	s->backoff = w->o.backoff_min_ms;
	s->last_logged = -1;
	atomic_init(&s->listed_once, false);
	atomic_init(&s->fresh, false);
	const char *g = s->k.group ? s->k.group : "";
	snprintf(s->api_version, sizeof(s->api_version), "%s%s%s", g, *g ? "/" : "",
		 s->k.version);
	snprintf(s->resource, sizeof(s->resource), "%s%s%s%s%s", s->k.plural, *g ? "." : "", g,
		 s->k.name ? "/" : "", s->k.name ? s->k.name : "");
	s->metric = w->o.metrics ? tw_metrics_watch_kind(s->k.kind) : -1;
	tp_buf_init(&s->body, w->o.max_page);
	tw_jsonlines_init(&s->lines, w->o.max_event);
	return (s->easy = curl_easy_init()) ? 0 : -1;
}

int tw_watch_start(const tw_watch_opts *o, tw_watch **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!o || !o->kube || !o->kinds || !o->nkinds || o->nkinds > TW_WATCH_MAX_KINDS) {
		snprintf(err, errlen, "the watch needs an API server and 1 to %d kinds",
			 TW_WATCH_MAX_KINDS);
		return TW_EFAILED;
	}
	for (size_t i = 0; i < o->nkinds; i++)
		if (!o->kinds[i].sink.put || !o->kinds[i].sink.del || !o->kinds[i].plural ||
		    !o->kinds[i].version || !o->kinds[i].kind) {
			snprintf(err, errlen, "watched kind %zu is incomplete", i);
			return TW_EFAILED;
		}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	tw_watch *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return TW_EFAILED;
	}
	pthread_mutex_init(&w->stat_lock, NULL);
	w->o = *o;
	w->o.kube = NULL;
	defaults(&w->o);
	w->seed = (unsigned)tw__mono_ms() ^ (unsigned)(uintptr_t)w;
	if (tw_kube_config_copy(&w->kube, o->kube)) {
		snprintf(err, errlen, "out of memory");
		watch_free(w);
		return TW_EFAILED;
	}
	int rc = 0;
	w->multi = curl_multi_init();
	for (; !rc && w->n < o->nkinds; w->n++)
		rc = res_init(w, w->n);
	if (!rc && !w->multi)
		rc = TW_EFAILED;
	if (rc) {
		snprintf(err, errlen, "cannot set up libcurl for the watch");
		watch_free(w);
		return TW_EFAILED;
	}
	if (o->metrics)
		tw_metrics_watch_enable();
	w->o.kinds = NULL; /* copied into res[] */
	if (pthread_create(&w->thread, NULL, run, w)) {
		snprintf(err, errlen, "cannot start the watch thread");
		watch_free(w);
		return TW_EFAILED;
	}
	*out = w;
	return 0;
}

void tw_watch_stop(tw_watch *w)
{
	if (!w)
		return;
	atomic_store(&w->stop, true);
	curl_multi_wakeup(w->multi);
	pthread_join(w->thread, NULL);
	watch_free(w);
}

bool tw_watch_kind_synced(const tw_watch *w, size_t i)
{
	return w && i < w->n && atomic_load(&((tw_watch *)w)->res[i].listed_once);
}

bool tw_watch_kind_fresh(const tw_watch *w, size_t i)
{
	return w && i < w->n && atomic_load(&((tw_watch *)w)->res[i].fresh);
}

bool tw_watch_synced(const tw_watch *w)
{
	for (size_t i = 0; w && i < w->n; i++)
		if (!tw_watch_kind_synced(w, i))
			return false;
	return w != NULL;
}

bool tw_watch_ready(tw_watch *w, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	if (!w)
		return false;
	bool ready = true;
	size_t len = 0;
	pthread_mutex_lock(&w->stat_lock);
	for (size_t i = 0; i < w->n; i++) {
		if (w->res[i].k.optional || tw_watch_kind_synced(w, i))
			continue;
		ready = false;
		const tw_watch_stat *t = &w->stat[i];
		if (!why || len >= whylen)
			continue;
		int n = snprintf(why + len, whylen - len, "%s%s not listed yet (%s)",
				 len ? "; " : "", w->res[i].resource,
				 t->last_error[0] ? t->last_error : "no answer yet");
		len += n > 0 ? (size_t)n : 0;
	}
	pthread_mutex_unlock(&w->stat_lock);
	return ready;
}

void tw_watch_stats(tw_watch *w, tw_watch_stat *out)
{
	pthread_mutex_lock(&w->stat_lock);
	memcpy(out, w->stat, w->n * sizeof(*out));
	pthread_mutex_unlock(&w->stat_lock);
}


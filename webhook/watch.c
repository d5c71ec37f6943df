/*
 * watch.c — list-then-watch of the Kubeflow Trainer resources into a store
 * (see watch.h).
 *
 * One thread drives a curl multi handle with one easy handle per resource.
 * Each resource is a small state machine: LIST (page after page) then WATCH
 * (a long response of JSON lines, applied as they arrive from libcurl's write
 * callback). Every transfer's end decides what comes next and when: a
 * continue token or a clean end goes on at once, a 410 re-lists, anything
 * else waits a jittered, growing backoff. The thread sleeps in
 * curl_multi_poll, which tw_watch_stop wakes.
 *
 * The store is written in place (its own writer lock per put/remove), so the
 * server's readers never wait for the network. To replace a kind's objects
 * after a re-list without a window where kept objects are missing, the watch
 * remembers the keys it put (per resource) and removes only those the new
 * list no longer has, after putting the new ones.
 */
#include "webhook/watch.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webhook/jsonlines.h"
#include "webhook/keyset.h"
#include "webhook/log.h"
#include "webhook/metrics.h"

const tw_watch_resource tw_watch_resources[TW_WATCH__COUNT] = {
	{ "clustertrainingruntimes", "trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime",
	  TP_KIND_CLUSTER_TRAINING_RUNTIME },
	{ "trainingruntimes", "trainer.kubeflow.org", "v1alpha1", "TrainingRuntime",
	  TP_KIND_TRAINING_RUNTIME },
	{ "trainjobs", "trainer.kubeflow.org", "v1alpha1", "TrainJob", TP_KIND_TRAINJOB },
	{ "jobsets", "jobset.x-k8s.io", "v1alpha2", "JobSet", TP_KIND_JOBSET },
};

#define ERROR_BODY_MAX 65536

/* ------------------------------------------------------------- state */

enum mode { MODE_LIST, MODE_WATCH };

/* How a transfer ended, decided while it ran. */
enum verdict { V_NONE = 0, V_GONE, V_BROKEN };

struct res {
	struct tw_watch *w;
	const tw_watch_resource *r;
	int idx;
	CURL *easy;
	struct curl_slist *headers;
	bool busy;
	enum mode mode;
	char *cont;           /* continue token of the list in progress */
	char rv[128];         /* resourceVersion to watch from */
	uint64_t next_at;     /* monotonic ms: start the next transfer then */
	unsigned backoff;     /* ms, the next delay's ceiling */
	uint64_t started;     /* monotonic ms of this transfer's start */
	uint64_t conn_events; /* events this watch delivered */
	enum verdict verdict;
	tp_buf body;          /* a list page, or an error answer */
	tw_jsonlines lines;
	tw_keyset have, seen;
	bool listed_once;
	char errbuf[CURL_ERROR_SIZE];
};

struct tw_watch {
	tw_watch_opts o;
	tw_kube_config kube;
	CURLM *multi;
	pthread_t thread;
	atomic_bool stop;
	atomic_int synced_count;
	unsigned seed;
	pthread_mutex_t stat_lock;
	tw_watch_stat stat[TW_WATCH__COUNT];
	struct res res[TW_WATCH__COUNT];
	char *token; /* last token read (kept when a read fails) */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait a random time in [backoff/2, backoff], then double the ceiling. */
static void back_off(struct res *s, const char *why)
{
	tw_watch *w = s->w;
	unsigned half = s->backoff / 2;
	unsigned delay = half + (half ? (unsigned)rand_r(&w->seed) % (half + 1) : 0);
	s->next_at = mono_ms() + delay;
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_WARN, "watch: retrying after a backoff");
	tw_log_str(&l, "resource", s->r->plural);
	tw_log_str(&l, "reason", why);
	tw_log_int(&l, "delay_ms", delay);
	tw_log_end(&l);
	s->backoff = s->backoff * 2 > w->o.backoff_max_ms ? w->o.backoff_max_ms : s->backoff * 2;
}

static void backoff_reset(struct res *s)
{
	s->backoff = s->w->o.backoff_min_ms;
}

static void stat_update(struct res *s, void (*fn)(tw_watch_stat *, const struct res *))
{
	pthread_mutex_lock(&s->w->stat_lock);
	fn(&s->w->stat[s->idx], s);
	pthread_mutex_unlock(&s->w->stat_lock);
}

static void st_rv(tw_watch_stat *t, const struct res *s)
{
	snprintf(t->rv, sizeof(t->rv), "%s", s->rv);
	t->last_sync_ms = wall_ms();
}
static void st_event(tw_watch_stat *t, const struct res *s)
{
	t->events++;
	st_rv(t, s);
}
static void st_bookmark(tw_watch_stat *t, const struct res *s)
{
	t->bookmarks++;
	st_rv(t, s);
}
static void st_listed(tw_watch_stat *t, const struct res *s)
{
	if (t->synced)
		t->relists++;
	t->synced = true;
	t->lists++;
	st_rv(t, s);
}
static void st_reconnect(tw_watch_stat *t, const struct res *s)
{
	(void)s;
	t->reconnects++;
}

/* ----------------------------------------------------------- objects */

static void set_rv(struct res *s, const cJSON *meta)
{
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	if (cJSON_IsString(rv) && rv->valuestring[0] &&
	    strlen(rv->valuestring) < sizeof(s->rv))
		snprintf(s->rv, sizeof(s->rv), "%s", rv->valuestring);
}

static const char *meta_str(const cJSON *meta, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* "namespace/name" of obj, or false when it has no name. */
static bool key_of(const struct res *s, const cJSON *obj, char *key, size_t n)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *name = meta_str(meta, "name");
	const char *ns = tp_kind_is_cluster_scoped(s->r->tp) ? "" : meta_str(meta, "namespace");
	if (!*name || strchr(name, '/') || strchr(ns, '/'))
		return false;
	int len = snprintf(key, n, "%s/%s", *ns ? ns : "default", name);
	return len > 0 && (size_t)len < n;
}

/* List items carry no apiVersion/kind for some servers: add them. Drop
 * managedFields (large, never read). */
static void normalise(const struct res *s, cJSON *obj)
{
	if (!cJSON_GetObjectItemCaseSensitive(obj, "apiVersion")) {
		char av[128];
		snprintf(av, sizeof(av), "%s/%s", s->r->group, s->r->version);
		cJSON_AddStringToObject(obj, "apiVersion", av);
	}
	if (!cJSON_GetObjectItemCaseSensitive(obj, "kind"))
		cJSON_AddStringToObject(obj, "kind", s->r->kind);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (cJSON_IsObject(meta))
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
}

/* Put obj (owned) into the store; its key into ks (append: a list). */
static void put(struct res *s, cJSON *obj, tw_keyset *ks, bool append)
{
	char key[512];
	normalise(s, obj);
	if (tp_kind_of(obj) != s->r->tp || !key_of(s, obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return;
	}
	if (tp_store_put(s->w->o.store, obj)) /* takes obj whatever it answers */
		return;
	if (append)
		tw_keyset_append(ks, key);
	else
		tw_keyset_add(ks, key);
}

static void del(struct res *s, const cJSON *obj)
{
	char key[512];
	if (!key_of(s, obj, key, sizeof(key)))
		return;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *ns = tp_kind_is_cluster_scoped(s->r->tp) ? NULL : meta_str(meta, "namespace");
	tp_store_remove(s->w->o.store, s->r->tp, ns && *ns ? ns : "default",
			meta_str(meta, "name"));
	tw_keyset_del(&s->have, key);
}

/* The end of a list: drop what the list no longer has, keep what it has. */
static void sweep(struct res *s)
{
	tw_keyset_sort(&s->seen);
	for (size_t i = 0; i < s->have.n; i++) {
		bool found;
		tw_keyset_find(&s->seen, s->have.v[i], &found);
		if (found)
			continue;
		char *slash = strchr(s->have.v[i], '/');
		*slash = '\0';
		tp_store_remove(s->w->o.store, s->r->tp,
				tp_kind_is_cluster_scoped(s->r->tp) ? NULL : s->have.v[i], slash + 1);
		*slash = '/';
	}
	tw_keyset tmp = s->have;
	s->have = s->seen;
	s->seen = tmp;
	tw_keyset_clear(&s->seen);
}

/* ------------------------------------------------------------ events */

static int on_line(void *arg, const char *line, size_t len)
{
	struct res *s = arg;
	cJSON *ev = cJSON_ParseWithLength(line, len);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
	cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
	if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
		cJSON_Delete(ev);
		tw_log(TW_LOG_WARN, "watch %s: an event that is not {type, object}: re-listing",
		       s->r->plural);
		s->verdict = V_BROKEN;
		return -1;
	}
	const char *t = type->valuestring;
	int rc = 0;
	if (!strcmp(t, "ADDED") || !strcmp(t, "MODIFIED")) {
		set_rv(s, cJSON_GetObjectItemCaseSensitive(obj, "metadata"));
		cJSON_DetachItemViaPointer(ev, obj);
		put(s, obj, &s->have, false);
		s->conn_events++;
		stat_update(s, st_event);
	} else if (!strcmp(t, "DELETED")) {
		set_rv(s, cJSON_GetObjectItemCaseSensitive(obj, "metadata"));
		del(s, obj);
		s->conn_events++;
		stat_update(s, st_event);
	} else if (!strcmp(t, "BOOKMARK")) {
		set_rv(s, cJSON_GetObjectItemCaseSensitive(obj, "metadata"));
		s->conn_events++;
		stat_update(s, st_bookmark);
	} else if (!strcmp(t, "ERROR")) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
		bool gone = cJSON_IsNumber(code) && code->valueint == 410;
		tw_log(TW_LOG_INFO, "watch %s: ERROR event (code %d): %s", s->r->plural,
		       cJSON_IsNumber(code) ? code->valueint : 0,
		       gone ? "re-listing" : "reconnecting");
		s->verdict = gone ? V_GONE : V_NONE;
		rc = gone ? -1 : 0;
	}
	cJSON_Delete(ev);
	if (!rc)
		tw_metrics_store_set(s->w->o.store);
	return rc;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
	struct res *s = arg;
	size_t n = size * nmemb;
	long code = 0;
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	if (s->mode == MODE_WATCH && code == 200) {
		int rc = tw_jsonlines_feed(&s->lines, data, n, on_line, s);
		if (rc == TP_ELIMIT || rc == TP_ENOMEM) {
			tw_log(TW_LOG_WARN, "watch %s: an event over %zu bytes: re-listing",
			       s->r->plural, s->lines.max);
			s->verdict = V_BROKEN;
		}
		return rc ? 0 : n;
	}
	if (code != 200 && s->body.len + n > ERROR_BODY_MAX)
		return n; /* an error's text: the start is enough */
	return tp_buf_add(&s->body, data, n) ? 0 : n;
}

/* --------------------------------------------------------- transfers */

static int url_of(struct res *s, char *url, size_t n)
{
	const tw_watch_resource *r = s->r;
	int len;
	if (s->mode == MODE_LIST) {
		char *cont = s->cont ? curl_easy_escape(s->easy, s->cont, 0) : NULL;
		len = snprintf(url, n, "%s/apis/%s/%s/%s?limit=%u%s%s", s->w->kube.server, r->group,
			       r->version, r->plural, s->w->o.page_limit, cont ? "&continue=" : "",
			       cont ? cont : "");
		curl_free(cont);
	} else {
		char *rv = curl_easy_escape(s->easy, s->rv, 0);
		len = snprintf(url, n,
			       "%s/apis/%s/%s/%s?watch=1&allowWatchBookmarks=true"
			       "&resourceVersion=%s&timeoutSeconds=%u",
			       s->w->kube.server, r->group, r->version, r->plural, rv ? rv : "",
			       s->w->o.timeout_s);
		curl_free(rv);
	}
	return len > 0 && (size_t)len < n ? 0 : -1;
}

static void refresh_token(tw_watch *w)
{
	char *tok;
	if (!w->kube.token_file)
		return;
	if (tw_kube_read_token(w->kube.token_file, &tok)) {
		tw_log(TW_LOG_WARN, "watch: cannot read the token file %s; %s", w->kube.token_file,
		       w->token ? "keeping the previous token" : "sending no token");
		return;
	}
	free(w->token);
	w->token = tok;
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
	s->verdict = V_NONE;
	s->conn_events = 0;
	s->errbuf[0] = '\0';
	if (url_of(s, url, sizeof(url)))
		return -1;
	refresh_token(w);
	s->headers = curl_slist_append(NULL, "Accept: application/json");
	if (w->token) {
		size_t n = strlen(w->token) + 32;
		char *h = malloc(n);
		if (h) {
			snprintf(h, n, "Authorization: Bearer %s", w->token);
			struct curl_slist *l = curl_slist_append(s->headers, h);
			if (l)
				s->headers = l;
			free(h);
		}
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(e, CURLOPT_PRIVATE, s);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "trainer-webhook");
	if (w->kube.ca_file)
		curl_easy_setopt(e, CURLOPT_CAINFO, w->kube.ca_file);
	/* A list gets a minute; a watch its server-side timeout and a margin. */
	long limit_ms = s->mode == MODE_LIST ? 60000L : ((long)w->o.timeout_s + 30L) * 1000L;
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, limit_ms);
	s->started = mono_ms();
	if (curl_multi_add_handle(w->multi, e) != CURLM_OK)
		return -1;
	s->busy = true;
	return 0;
}

static void start_list_over(struct res *s)
{
	s->mode = MODE_LIST;
	free(s->cont);
	s->cont = NULL;
	tw_keyset_clear(&s->seen);
}

/* A list page arrived whole (HTTP 200). */
static void list_page(struct res *s)
{
	cJSON *list = cJSON_ParseWithLength(s->body.data ? s->body.data : "", s->body.len);
	cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
	if (!cJSON_IsObject(list) || (items && !cJSON_IsArray(items))) {
		cJSON_Delete(list);
		start_list_over(s);
		back_off(s, "a list answer that is not a list");
		return;
	}
	cJSON *it;
	while ((it = cJSON_DetachItemFromArray(items, 0)))
		put(s, it, &s->seen, true);
	const char *cont = meta_str(meta, "continue");
	free(s->cont);
	s->cont = *cont ? strdup(cont) : NULL;
	if (!s->cont) {
		set_rv(s, meta);
		sweep(s);
		s->mode = MODE_WATCH;
		backoff_reset(s);
		stat_update(s, st_listed);
		if (!s->listed_once) {
			s->listed_once = true;
			atomic_fetch_add(&s->w->synced_count, 1);
		} else {
			tw_metrics_watch_relist(s->r->tp);
		}
		tw_metrics_watch_synced(s->r->tp, wall_ms() / 1000);
		tw_metrics_store_set(s->w->o.store);
		tw_log(TW_LOG_INFO, "watch %s: listed %zu objects at resourceVersion %s",
		       s->r->plural, s->have.n, s->rv);
	}
	s->next_at = mono_ms();
	cJSON_Delete(list);
}

static void finished(struct res *s, CURLcode result)
{
	long code = 0;
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	curl_multi_remove_handle(s->w->multi, s->easy);
	s->busy = false;
	char why[CURL_ERROR_SIZE + 64];
	if (s->mode == MODE_LIST) {
		if (result == CURLE_OK && code == 200) {
			list_page(s);
			return;
		}
		start_list_over(s); /* 410 here: the continue token expired */
		snprintf(why, sizeof(why), "list: %s (HTTP %ld)",
			 result ? (s->errbuf[0] ? s->errbuf : curl_easy_strerror(result)) : "answer",
			 code);
		back_off(s, why);
		return;
	}
	/* A watch ended. */
	if (code == 410 || s->verdict == V_GONE || s->verdict == V_BROKEN) {
		start_list_over(s);
		if (s->verdict == V_BROKEN) {
			back_off(s, "a broken watch stream");
		} else {
			tw_log(TW_LOG_INFO, "watch %s: resourceVersion %s is gone: re-listing",
			       s->r->plural, s->rv);
			s->next_at = mono_ms();
		}
		return;
	}
	stat_update(s, st_reconnect);
	tw_metrics_watch_reconnect(s->r->tp);
	bool long_enough = mono_ms() - s->started >= 1000;
	if (result == CURLE_OK && code == 200 && (s->conn_events || long_enough)) {
		backoff_reset(s); /* the server closed a healthy watch: go on */
		s->next_at = mono_ms();
		return;
	}
	snprintf(why, sizeof(why), "watch: %s (HTTP %ld)",
		 result ? (s->errbuf[0] ? s->errbuf : curl_easy_strerror(result))
			: "ended at once",
		 code);
	back_off(s, why);
}

/* ------------------------------------------------------------ thread */

static void *run(void *arg)
{
	tw_watch *w = arg;
	while (!atomic_load(&w->stop)) {
		uint64_t now = mono_ms();
		long wait_ms;
		for (int i = 0; i < TW_WATCH__COUNT; i++) {
			struct res *s = &w->res[i];
			if (!s->busy && now >= s->next_at && start(s))
				back_off(s, "cannot start a request");
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
		bool idle_due = false;
		now = mono_ms();
		wait_ms = 1000;
		for (int i = 0; i < TW_WATCH__COUNT; i++) {
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
	for (int i = 0; i < TW_WATCH__COUNT; i++)
		res_free(&w->res[i]);
	if (w->multi)
		curl_multi_cleanup(w->multi);
	tw_kube_config_free(&w->kube);
	free(w->token);
	pthread_mutex_destroy(&w->stat_lock);
	free(w);
}

int tw_watch_start(const tw_watch_opts *o, tw_watch **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!o || !o->kube || !o->store) {
		snprintf(err, errlen, "the watch needs an API server and a store");
		return -1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	tw_watch *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&w->stat_lock, NULL);
	w->o = *o;
	w->o.kube = NULL;
	if (!w->o.page_limit)
		w->o.page_limit = 500;
	if (!w->o.timeout_s)
		w->o.timeout_s = 300;
	if (!w->o.backoff_min_ms)
		w->o.backoff_min_ms = 200;
	if (!w->o.backoff_max_ms)
		w->o.backoff_max_ms = 30000;
	if (w->o.backoff_max_ms < w->o.backoff_min_ms)
		w->o.backoff_max_ms = w->o.backoff_min_ms;
	if (!w->o.max_event)
		w->o.max_event = (size_t)16 << 20;
	if (!w->o.max_page)
		w->o.max_page = (size_t)256 << 20;
	w->seed = (unsigned)mono_ms() ^ (unsigned)(uintptr_t)w;
	if (tw_kube_config_explicit(&w->kube, o->kube->server, o->kube->token_file,
				    o->kube->ca_file, err, errlen)) {
		watch_free(w);
		return -1;
	}
	int rc = 0;
	w->multi = curl_multi_init();
	for (int i = 0; !rc && i < TW_WATCH__COUNT; i++) {
		struct res *s = &w->res[i];
		s->w = w;
		s->r = &tw_watch_resources[i];
		s->idx = i;
		s->mode = MODE_LIST;
		s->backoff = w->o.backoff_min_ms;
		tp_buf_init(&s->body, w->o.max_page);
		tw_jsonlines_init(&s->lines, w->o.max_event);
		if (!(s->easy = curl_easy_init()))
			rc = -1;
	}
	if (!rc && !w->multi)
		rc = -1;
	if (rc) {
		snprintf(err, errlen, "cannot set up libcurl for the watch");
		watch_free(w);
		return -1;
	}
	tw_metrics_watch_enable();
	if (pthread_create(&w->thread, NULL, run, w)) {
		snprintf(err, errlen, "cannot start the watch thread");
		watch_free(w);
		return -1;
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

bool tw_watch_synced(const tw_watch *w)
{
	return w && atomic_load(&((tw_watch *)w)->synced_count) == TW_WATCH__COUNT;
}

bool tw_watch_ready_gate(void *arg)
{
	return tw_watch_synced(arg);
}

void tw_watch_stats(tw_watch *w, tw_watch_stat out[TW_WATCH__COUNT])
{
	pthread_mutex_lock(&w->stat_lock);
	memcpy(out, w->stat, sizeof(w->stat));
	pthread_mutex_unlock(&w->stat_lock);
}

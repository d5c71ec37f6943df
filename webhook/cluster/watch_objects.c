/*
 * watch_objects.c — what a watch receives (see watch.h): list pages and
 * watch lines, turned into the objects handed to the kind's sink; the keys
 * put, so that a re-list deletes exactly what the API server no longer has.
 */
#include "webhook/cluster/watch_internal.h"
#include "webhook/core/json_read.h"

#include <stdlib.h>
#include <string.h>

#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

/* ------------------------------------------------------------- stats */

static void st_rv(tw_watch_stat *t, const struct res *s)
{
	snprintf(t->rv, sizeof(t->rv), "%s", s->rv);
	t->last_sync_ms = tw__wall_ms();
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
	t->absent = false;
	t->lists++;
	t->last_status = 200;
	t->last_error[0] = '\0';
	st_rv(t, s);
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

/* The object's namespace as the sink is told it: "" for cluster-scoped
 * kinds, "default" for a namespaced object that names none. */
static const char *ns_of(const struct res *s, const cJSON *meta)
{
	if (s->k.cluster_scoped)
		return "";
	const char *ns = meta_str(meta, "namespace");
	return *ns ? ns : "default";
}

/* "namespace/name" of obj, or false when it has no name. */
static bool key_of(const struct res *s, const cJSON *obj, char *key, size_t n)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *name = meta_str(meta, "name");
	const char *ns = ns_of(s, meta);
	if (!*name || strchr(name, '/') || strchr(ns, '/'))
		return false;
	int len = snprintf(key, n, "%s/%s", ns, name);
	return len > 0 && (size_t)len < n;
}

/* List items carry no apiVersion/kind: add them. True when the object is of
 * the watched kind (an event of another kind is ignored). */
static bool normalise(const struct res *s, cJSON *obj)
{
	if (!cJSON_GetObjectItemCaseSensitive(obj, "apiVersion"))
		cJSON_AddStringToObject(obj, "apiVersion", s->api_version);
	if (!cJSON_GetObjectItemCaseSensitive(obj, "kind"))
		cJSON_AddStringToObject(obj, "kind", s->k.kind);
	const char *av = meta_str(obj, "apiVersion"), *kind = meta_str(obj, "kind");
	return !strcmp(av, s->api_version) && !strcmp(kind, s->k.kind);
}

/* Hand obj (owned) to the sink; its key into ks (append: a list). */
static void put(struct res *s, cJSON *obj, tw_keyset *ks, bool append)
{
	char key[512];
	if (!normalise(s, obj) || !key_of(s, obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return;
	}
	s->k.sink.put(s->k.sink.arg, obj); /* takes obj */
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
	s->k.sink.del(s->k.sink.arg, ns_of(s, meta), meta_str(meta, "name"));
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
		s->k.sink.del(s->k.sink.arg, s->have.v[i], slash + 1);
		*slash = '/';
	}
	tw_keyset tmp = s->have;
	s->have = s->seen;
	s->seen = tmp;
	tw_keyset_clear(&s->seen);
}

/* ------------------------------------------------------------ events */

/* An ERROR event: the API server ends the watch with a Status. 410 (or its
 * reasons, as client-go reads them) means the resourceVersion is too old. */
static enum watch_end error_event(struct res *s, const cJSON *status)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");
	const char *reason = meta_str(status, "reason"), *msg = meta_str(status, "message");
	int c = cJSON_IsNumber(code) ? code->valueint : 0;
	if (c == 410 || !strcmp(reason, "Expired") || !strcmp(reason, "Gone")) {
		snprintf(s->end_why, sizeof(s->end_why), "an ERROR event 410 (%.120s)", msg);
		return END_GONE;
	}
	snprintf(s->end_why, sizeof(s->end_why), "an ERROR event (code %d: %.120s)", c, msg);
	return END_ERROR_EVENT;
}

/* One watch line. END_NONE goes on; anything else stops the stream, and
 * finished() in watch.c decides what follows. */
static int on_line(void *arg, const char *line, size_t len)
{
	struct res *s = arg;
	cJSON *ev = tw_json_object(line, len);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
	cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
	enum watch_end end = END_NONE;
	const char *t = cJSON_IsString(type) ? type->valuestring : NULL;
	if (!t || !cJSON_IsObject(obj)) {
		snprintf(s->end_why, sizeof(s->end_why), "an event that is not {type, object}");
		end = END_MALFORMED;
	} else if (!strcmp(t, "ADDED") || !strcmp(t, "MODIFIED")) {
		set_rv(s, cJSON_GetObjectItemCaseSensitive(obj, "metadata"));
		cJSON_DetachItemViaPointer(ev, obj);
		put(s, obj, &s->have, false);
		s->conn_events++;
		tw__watch_stat(s, st_event);
	} else if (!strcmp(t, "DELETED")) {
		set_rv(s, cJSON_GetObjectItemCaseSensitive(obj, "metadata"));
		del(s, obj);
		s->conn_events++;
		tw__watch_stat(s, st_event);
	} else if (!strcmp(t, "BOOKMARK")) {
		set_rv(s, cJSON_GetObjectItemCaseSensitive(obj, "metadata"));
		s->conn_events++;
		tw__watch_stat(s, st_bookmark);
	} else if (!strcmp(t, "ERROR")) {
		end = error_event(s, obj);
	}
	cJSON_Delete(ev);
	return (int)end;
}

size_t tw__watch_on_data(char *data, size_t size, size_t nmemb, void *arg)
{
	struct res *s = arg;
	size_t n = size * nmemb;
	long code = 0;
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
	if (s->mode == MODE_WATCH && code == 200) {
		int rc = tw_jsonlines_feed(&s->lines, data, n, on_line, s);
		if (rc > 0) {
			s->end = (enum watch_end)rc; /* on_line said why */
		} else if (rc == TP_ELIMIT) {
			s->end = END_TOO_LONG;
			snprintf(s->end_why, sizeof(s->end_why), "an event over %zu bytes",
				 s->lines.max);
		} else if (rc) { /* TP_ENOMEM: the splitter's only other failure */
			s->end = END_NO_MEMORY;
			snprintf(s->end_why, sizeof(s->end_why), "no memory for an event");
		}
		return rc ? 0 : n;
	}
	if (code != 200 && s->body.len + n > ERROR_BODY_MAX)
		return n; /* an error's text: the start is enough */
	return tp_buf_add(&s->body, data, n) ? 0 : n;
}

/* ------------------------------------------------------------ lists */

void tw__watch_start_list_over(struct res *s)
{
	s->mode = MODE_LIST;
	free(s->cont);
	s->cont = NULL;
	tw_keyset_clear(&s->seen);
}

static void listed(struct res *s, const cJSON *meta)
{
	set_rv(s, meta);
	sweep(s);
	s->mode = MODE_WATCH;
	s->last_logged = -1;
	tw__watch_backoff_reset(s);
	tw__watch_stat(s, st_listed);
	if (atomic_load(&s->listed_once))
		s->w->relisted_due = true;
	atomic_store(&s->listed_once, true);
	tw__watch_set_fresh(s, true);
	if (s->metric >= 0)
		tw_metrics_watch_listed(s->metric, tw__wall_ms() / 1000, 200);
	tw_log(TW_LOG_INFO, "watch %s: listed %zu objects at resourceVersion %s", s->resource,
	       s->have.n, s->rv);
}

/* A list page arrived whole (HTTP 200). */
void tw__watch_list_page(struct res *s)
{
	cJSON *list = tw_json_object(s->body.data, s->body.len);
	cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
	if (!cJSON_IsObject(list) || (items && !cJSON_IsArray(items))) {
		cJSON_Delete(list);
		tw__watch_start_list_over(s);
		tw__watch_back_off(s, "a list answer that is not a list");
		return;
	}
	cJSON *it;
	while ((it = cJSON_DetachItemFromArray(items, 0)))
		put(s, it, &s->seen, true);
	const char *cont = meta_str(meta, "continue");
	free(s->cont);
	s->cont = *cont ? strdup(cont) : NULL;
	if (!s->cont)
		listed(s, meta);
	s->next_at = tw__mono_ms();
	cJSON_Delete(list);
}


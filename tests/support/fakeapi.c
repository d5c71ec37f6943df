/*
 * fakeapi.c — the fake API server (see fakeapi.h). libmicrohttpd with a
 * thread per connection, so that a held list or a watch stream may block in
 * its handler; every wait is a timed wait that also watches for the stop.
 */
#include "tests/support/fakeapi.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
	const char *path, *list_kind, *api_version;
} fa_res[FA_RESOURCES] = {
	{ "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes",
	  "ClusterTrainingRuntimeList", "trainer.kubeflow.org/v1alpha1" },
	{ "/apis/trainer.kubeflow.org/v1alpha1/trainingruntimes", "TrainingRuntimeList",
	  "trainer.kubeflow.org/v1alpha1" },
	{ "/apis/trainer.kubeflow.org/v1alpha1/trainjobs", "TrainJobList",
	  "trainer.kubeflow.org/v1alpha1" },
	{ "/apis/jobset.x-k8s.io/v1alpha2/jobsets", "JobSetList", "jobset.x-k8s.io/v1alpha2" },
};

enum act_type { ACT_LINE, ACT_DROP, ACT_END };

struct act {
	struct act *next;
	enum act_type type;
	char *text;
};

struct fres {
	cJSON *items;
	char rv[64];
	unsigned page;
	bool hold, gone_next;
	struct act *head, *tail;
	fa_stats st;
};

struct fa_server {
	struct MHD_Daemon *d;
	unsigned short port;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping;
	char *token;
	struct fres r[FA_RESOURCES];
};

/* A watch response's state. */
struct stream {
	fa_server *f;
	int r;
	char *pending;
	size_t off, len;
};

static void timed_wait(fa_server *f)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20 * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&f->cv, &f->mu, &ts);
}

static void push_act(fa_server *f, int r, enum act_type t, const char *text)
{
	struct act *a = calloc(1, sizeof(*a));
	if (!a)
		abort();
	a->type = t;
	a->text = text ? strdup(text) : NULL;
	pthread_mutex_lock(&f->mu);
	if (f->r[r].tail)
		f->r[r].tail->next = a;
	else
		f->r[r].head = a;
	f->r[r].tail = a;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct stream *s = cls;
	fa_server *f = s->f;
	if (s->off < s->len) {
		size_t n = s->len - s->off < max ? s->len - s->off : max;
		memcpy(buf, s->pending + s->off, n);
		s->off += n;
		return (ssize_t)n;
	}
	pthread_mutex_lock(&f->mu);
	struct fres *fr = &f->r[s->r];
	while (!f->stopping && !fr->head)
		timed_wait(f);
	if (f->stopping) {
		pthread_mutex_unlock(&f->mu);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	struct act *a = fr->head;
	fr->head = a->next;
	if (!fr->head)
		fr->tail = NULL;
	pthread_mutex_unlock(&f->mu);
	enum act_type t = a->type;
	if (t == ACT_LINE) {
		free(s->pending);
		s->len = strlen(a->text) + 1;
		s->pending = malloc(s->len);
		if (!s->pending)
			abort();
		memcpy(s->pending, a->text, s->len - 1);
		s->pending[s->len - 1] = '\n';
		s->off = 0;
	}
	free(a->text);
	free(a);
	if (t == ACT_DROP)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (t == ACT_END)
		return MHD_CONTENT_READER_END_OF_STREAM;
	return stream_read(cls, 0, buf, max);
}

static void stream_free(void *cls)
{
	struct stream *s = cls;
	pthread_mutex_lock(&s->f->mu);
	s->f->r[s->r].st.watch_open = false;
	pthread_mutex_unlock(&s->f->mu);
	free(s->pending);
	free(s);
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, char *body)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(c, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result status(struct MHD_Connection *c, unsigned code, const char *reason)
{
	char *b = NULL;
	if (asprintf(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
			 "\"reason\":\"%s\",\"code\":%u}", reason, code) < 0)
		abort();
	return answer(c, code, b);
}

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	(void)kind;
	char *q = cls;
	size_t n = strlen(q);
	snprintf(q + n, 512 - n, "%s%s=%s", n ? "&" : "", key, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result list(fa_server *f, struct MHD_Connection *c, int r)
{
	struct fres *fr = &f->r[r];
	fr->st.list_waiting = true;
	while (fr->hold && !f->stopping)
		timed_wait(f);
	fr->st.list_waiting = false;
	if (f->stopping) {
		pthread_mutex_unlock(&f->mu);
		return MHD_NO;
	}
	const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
	int total = fr->items ? cJSON_GetArraySize(fr->items) : 0;
	int start = cont && !strncmp(cont, "off:", 4) ? atoi(cont + 4) : 0;
	int n = lim ? atoi(lim) : total;
	if (fr->page && (unsigned)n > fr->page)
		n = (int)fr->page;
	if (n <= 0)
		n = total;
	cJSON *out = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(out, "items");
	cJSON_AddStringToObject(out, "apiVersion", fa_res[r].api_version);
	cJSON_AddStringToObject(out, "kind", fa_res[r].list_kind);
	cJSON *meta = cJSON_AddObjectToObject(out, "metadata");
	cJSON_AddStringToObject(meta, "resourceVersion", fr->rv);
	for (int i = start; i < total && i < start + n; i++)
		cJSON_AddItemToArray(items, cJSON_Duplicate(cJSON_GetArrayItem(fr->items, i), 1));
	if (start + n < total) {
		char next[32];
		snprintf(next, sizeof(next), "off:%d", start + n);
		cJSON_AddStringToObject(meta, "continue", next);
	}
	fr->st.lists++;
	if (cont)
		fr->st.continued++;
	pthread_mutex_unlock(&f->mu);
	char *body = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	return answer(c, 200, body);
}

static enum MHD_Result watch(fa_server *f, struct MHD_Connection *c, int r)
{
	struct fres *fr = &f->r[r];
	const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
	snprintf(fr->st.last_watch_rv, sizeof(fr->st.last_watch_rv), "%s", rv ? rv : "");
	if (fr->gone_next) {
		fr->gone_next = false;
		fr->st.gone++;
		pthread_mutex_unlock(&f->mu);
		return status(c, 410, "Expired");
	}
	fr->st.watches++;
	fr->st.watch_open = true;
	pthread_mutex_unlock(&f->mu);
	struct stream *s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	s->f = f;
	s->r = r;
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version, const char *upload,
				 size_t *upload_size, void **req)
{
	(void)version, (void)upload, (void)upload_size, (void)method;
	fa_server *f = cls;
	if (!*req) {
		*req = (void *)1;
		return MHD_YES;
	}
	int r = 0;
	while (r < FA_RESOURCES && strcmp(url, fa_res[r].path))
		r++;
	if (r == FA_RESOURCES)
		return status(c, 404, "NotFound");
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *tok = auth && !strncmp(auth, "Bearer ", 7) ? auth + 7 : "";
	const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
	pthread_mutex_lock(&f->mu);
	struct fres *fr = &f->r[r];
	snprintf(fr->st.last_token, sizeof(fr->st.last_token), "%s", tok);
	fr->st.last_query[0] = '\0';
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_query, fr->st.last_query);
	if (f->token && strcmp(f->token, tok)) {
		fr->st.unauthorized++;
		pthread_mutex_unlock(&f->mu);
		return status(c, 401, "Unauthorized");
	}
	if (w && !strcmp(w, "1"))
		return watch(f, c, r); /* both unlock */
	return list(f, c, r);
}

int fa_start(fa_server **out)
{
	fa_server *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	for (int r = 0; r < FA_RESOURCES; r++) {
		f->r[r].items = cJSON_CreateArray();
		snprintf(f->r[r].rv, sizeof(f->r[r].rv), "1");
	}
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
				NULL, NULL, access_cb, f, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_END);
	if (!f->d) {
		fa_stop(f);
		return -1;
	}
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
	f->port = i ? i->port : 0;
	*out = f;
	return 0;
}

unsigned short fa_port(const fa_server *f)
{
	return f->port;
}

void fa_stop(fa_server *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->stopping = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	if (f->d)
		MHD_stop_daemon(f->d);
	for (int r = 0; r < FA_RESOURCES; r++) {
		cJSON_Delete(f->r[r].items);
		for (struct act *a = f->r[r].head, *n; a; a = n) {
			n = a->next;
			free(a->text);
			free(a);
		}
	}
	free(f->token);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

void fa_set_token(fa_server *f, const char *token)
{
	pthread_mutex_lock(&f->mu);
	free(f->token);
	f->token = token ? strdup(token) : NULL;
	pthread_mutex_unlock(&f->mu);
}

void fa_set_objects(fa_server *f, int r, const char *items_json, const char *rv)
{
	cJSON *items = cJSON_Parse(items_json);
	if (!cJSON_IsArray(items))
		abort(); /* a test's typo */
	pthread_mutex_lock(&f->mu);
	cJSON_Delete(f->r[r].items);
	f->r[r].items = items;
	snprintf(f->r[r].rv, sizeof(f->r[r].rv), "%s", rv);
	pthread_mutex_unlock(&f->mu);
}

void fa_set_page(fa_server *f, int r, unsigned n)
{
	pthread_mutex_lock(&f->mu);
	f->r[r].page = n;
	pthread_mutex_unlock(&f->mu);
}

void fa_hold_list(fa_server *f, int r, bool hold)
{
	pthread_mutex_lock(&f->mu);
	f->r[r].hold = hold;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

void fa_gone_next_watch(fa_server *f, int r)
{
	pthread_mutex_lock(&f->mu);
	f->r[r].gone_next = true;
	pthread_mutex_unlock(&f->mu);
}

void fa_push(fa_server *f, int r, const char *line)
{
	push_act(f, r, ACT_LINE, line);
}

void fa_drop(fa_server *f, int r)
{
	push_act(f, r, ACT_DROP, NULL);
}

void fa_end(fa_server *f, int r)
{
	push_act(f, r, ACT_END, NULL);
}

void fa_get_stats(fa_server *f, int r, fa_stats *out)
{
	pthread_mutex_lock(&f->mu);
	*out = f->r[r].st;
	pthread_mutex_unlock(&f->mu);
}

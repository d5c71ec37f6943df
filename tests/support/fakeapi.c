/*
 * fakeapi.c — the fake API server (see fakeapi.h). libmicrohttpd with a
 * thread per connection, so that a held list or a watch stream may block in
 * its handler; every wait is a timed wait that also watches for the stop.
 */
#include "tests/support/fakeapi.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct fa_def {
	const char *prefix, *plural, *kind, *api_version;
	bool namespaced;
} defs[FA_RESOURCES] = {
	[FA_CTR] = { "/apis/trainer.kubeflow.org/v1alpha1", "clustertrainingruntimes",
		     "ClusterTrainingRuntime", "trainer.kubeflow.org/v1alpha1", false },
	[FA_TR] = { "/apis/trainer.kubeflow.org/v1alpha1", "trainingruntimes", "TrainingRuntime",
		    "trainer.kubeflow.org/v1alpha1", true },
	[FA_TJ] = { "/apis/trainer.kubeflow.org/v1alpha1", "trainjobs", "TrainJob",
		    "trainer.kubeflow.org/v1alpha1", true },
	[FA_JS] = { "/apis/jobset.x-k8s.io/v1alpha2", "jobsets", "JobSet",
		    "jobset.x-k8s.io/v1alpha2", true },
	[FA_PC] = { "/apis/scheduling.k8s.io/v1", "priorityclasses", "PriorityClass",
		    "scheduling.k8s.io/v1", false },
	[FA_SECRET] = { "/api/v1", "secrets", "Secret", "v1", true },
	[FA_VWC] = { "/apis/admissionregistration.k8s.io/v1", "validatingwebhookconfigurations",
		     "ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1", false },
	[FA_MWC] = { "/apis/admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations",
		     "MutatingWebhookConfiguration", "admissionregistration.k8s.io/v1", false },
	[FA_CM] = { "/api/v1", "configmaps", "ConfigMap", "v1", true },
	[FA_CRD] = { "/apis/apiextensions.k8s.io/v1", "customresourcedefinitions",
		     "CustomResourceDefinition", "apiextensions.k8s.io/v1", false },
	[FA_EPS] = { "/apis/discovery.k8s.io/v1", "endpointslices", "EndpointSlice",
		     "discovery.k8s.io/v1", true },
	[FA_NS] = { "/api/v1", "namespaces", "Namespace", "v1", false },
	[FA_SA] = { "/api/v1", "serviceaccounts", "ServiceAccount", "v1", true },
	[FA_LR] = { "/api/v1", "limitranges", "LimitRange", "v1", true },
	[FA_RQ] = { "/api/v1", "resourcequotas", "ResourceQuota", "v1", true },
};

enum act_type { ACT_LINE, ACT_DROP, ACT_END };

struct act {
	struct act *next;
	enum act_type type;
	char *text;
	char ns[256], name[256]; /* the event's object, for field selectors */
};

struct queue {
	struct act *head, *tail;
};

struct stream {
	struct stream *next; /* in its resource's list of open streams */
	fa_server *f;
	int r;
	char ns[256], name[256]; /* the watch's namespace and name filters ("": any) */
	struct queue q;
	char *pending;
	size_t off, len;
};

struct fres {
	cJSON *items, *hidden;
	char rv[64];
	unsigned page, list_status, get_status, conflicts;
	unsigned long long expire_before; /* watches from an older rv get an ERROR 410 */
	bool hold, gone_next;
	struct queue pending; /* for the next stream, when none is open */
	struct stream *streams;
	fa_stats st;
};

struct fa_server {
	struct MHD_Daemon *d;
	unsigned short port;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping;
	char *token;
	bool client_certs;     /* HTTPS: requests must bring a client certificate */
	fa_tls tls;            /* HTTPS (has_tls): its pair, kept for a restart */
	bool has_tls;
	unsigned delay_ms;
	char *version;         /* GET /version's answer (NULL: 404) */
	unsigned version_gets; /* GET /version requests */
	unsigned long long rv; /* the global resourceVersion of writes */
	struct fres r[FA_RESOURCES];
};

/* A request's path, split. */
struct route {
	int r;
	char ns[256], name[256];
};

/* A request's body as it arrives. */
struct reqstate {
	char *body;
	size_t len;
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

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n);
	if (!p)
		abort();
	return p;
}

static const char *meta_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* ------------------------------------------------------------ queues */

static void queue_add(struct queue *q, struct act *a)
{
	if (q->tail)
		q->tail->next = a;
	else
		q->head = a;
	q->tail = a;
}

static void queue_free(struct queue *q)
{
	for (struct act *a = q->head, *n; a; a = n) {
		n = a->next;
		free(a->text);
		free(a);
	}
	q->head = q->tail = NULL;
}

static struct act *act_new(enum act_type t, const char *text, const char *ns, const char *name)
{
	struct act *a = xcalloc(sizeof(*a));
	a->type = t;
	a->text = text ? strdup(text) : NULL;
	snprintf(a->ns, sizeof(a->ns), "%s", ns ? ns : "");
	snprintf(a->name, sizeof(a->name), "%s", name ? name : "");
	return a;
}

static bool wanted(const struct stream *s, const struct act *a)
{
	if (a->type != ACT_LINE)
		return true;
	return (!s->ns[0] || !a->ns[0] || !strcmp(s->ns, a->ns)) &&
	       (!s->name[0] || !a->name[0] || !strcmp(s->name, a->name));
}

/* To every open stream of r, or to the next one. Caller holds mu. */
static void broadcast(fa_server *f, int r, enum act_type t, const char *text, const char *ns,
		      const char *name)
{
	struct fres *fr = &f->r[r];
	if (!fr->streams) {
		queue_add(&fr->pending, act_new(t, text, ns, name));
	} else {
		for (struct stream *s = fr->streams; s; s = s->next) {
			struct act *a = act_new(t, text, ns, name);
			if (wanted(s, a))
				queue_add(&s->q, a);
			else {
				free(a->text);
				free(a);
			}
		}
	}
	pthread_cond_broadcast(&f->cv);
}

static void push_act(fa_server *f, int r, enum act_type t, const char *text)
{
	char ns[256] = "", name[256] = "";
	if (text) { /* the event's object, for the streams' field selectors */
		cJSON *ev = cJSON_Parse(text);
		const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
		snprintf(ns, sizeof(ns), "%s", meta_str(obj, "namespace"));
		snprintf(name, sizeof(name), "%s", meta_str(obj, "name"));
		cJSON_Delete(ev);
	}
	pthread_mutex_lock(&f->mu);
	broadcast(f, r, t, text, ns, name);
	pthread_mutex_unlock(&f->mu);
}

/* An event for a write; caller holds mu. */
static void event_of(fa_server *f, int r, const char *type, const cJSON *obj)
{
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "type", type);
	cJSON_AddItemToObject(ev, "object", cJSON_Duplicate(obj, 1));
	char *text = cJSON_PrintUnformatted(ev);
	broadcast(f, r, ACT_LINE, text, meta_str(obj, "namespace"), meta_str(obj, "name"));
	free(text);
	cJSON_Delete(ev);
}

/* ------------------------------------------------------------ streams */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct stream *s = cls;
	fa_server *f = s->f;
	for (;;) {
		if (s->off < s->len) {
			size_t n = s->len - s->off < max ? s->len - s->off : max;
			memcpy(buf, s->pending + s->off, n);
			s->off += n;
			return (ssize_t)n;
		}
		pthread_mutex_lock(&f->mu);
		while (!f->stopping && !s->q.head)
			timed_wait(f);
		if (f->stopping) {
			pthread_mutex_unlock(&f->mu);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		struct act *a = s->q.head;
		s->q.head = a->next;
		if (!s->q.head)
			s->q.tail = NULL;
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
	}
}

static void stream_free(void *cls)
{
	struct stream *s = cls;
	fa_server *f = s->f;
	pthread_mutex_lock(&f->mu);
	struct fres *fr = &f->r[s->r];
	for (struct stream **pp = &fr->streams; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	fr->st.watch_open = fr->streams != NULL;
	queue_free(&s->q);
	pthread_mutex_unlock(&f->mu);
	free(s->pending);
	free(s);
}

/* ------------------------------------------------------------ answers */

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
			 "\"message\":\"fake: %s\",\"reason\":\"%s\",\"code\":%u}",
		     reason, reason, code) < 0)
		abort();
	return answer(c, code, b);
}

static enum MHD_Result answer_obj(struct MHD_Connection *c, unsigned code, const cJSON *obj)
{
	char *b = cJSON_PrintUnformatted(obj);
	if (!b)
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

/* "/prefix[/namespaces/NS]/plural[/name]" into rt; false when no resource. */
static bool parse_path(const char *url, struct route *rt)
{
	memset(rt, 0, sizeof(*rt));
	for (int r = 0; r < FA_RESOURCES; r++) {
		size_t pl = strlen(defs[r].prefix);
		if (strncmp(url, defs[r].prefix, pl) || url[pl] != '/')
			continue;
		const char *p = url + pl;
		/* /api/v1/namespaces/NAME is the Namespace itself, not a path into it */
		if (defs[r].namespaced && !strncmp(p, "/namespaces/", 12)) {
			const char *slash = strchr(p + 12, '/');
			if (!slash || (size_t)(slash - p - 12) >= sizeof(rt->ns))
				continue;
			memcpy(rt->ns, p + 12, (size_t)(slash - p - 12));
			rt->ns[slash - p - 12] = '\0';
			p = slash;
		}
		size_t n = strlen(defs[r].plural);
		if (p[0] != '/' || strncmp(p + 1, defs[r].plural, n) || (p[1 + n] && p[1 + n] != '/'))
			continue;
		if ((rt->ns[0] && !defs[r].namespaced))
			continue;
		p += 1 + n;
		if (*p == '/')
			snprintf(rt->name, sizeof(rt->name), "%s", p + 1);
		rt->r = r;
		if (!strchr(rt->name, '/'))
			return true;
		/* /api/v1/namespaces/NS/<plural>/...: a resource listed after namespaces */
		memset(rt, 0, sizeof(*rt));
	}
	return false;
}

static bool in_namespace(const cJSON *o, const char *ns)
{
	return !ns[0] || !strcmp(meta_str(o, "namespace"), ns);
}

/* The field selector metadata.name=X of a request, or "". */
static void selected_name(struct MHD_Connection *c, char *out, size_t n)
{
	const char *sel = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fieldSelector");
	out[0] = '\0';
	if (sel && !strncmp(sel, "metadata.name=", 14))
		snprintf(out, n, "%s", sel + 14);
}

static cJSON *find(cJSON *arr, const char *ns, const char *name)
{
	cJSON *o;
	cJSON_ArrayForEach(o, arr)
		if (!strcmp(meta_str(o, "name"), name) && in_namespace(o, ns))
			return o;
	return NULL;
}

/* Whether o has the label a request's labelSelector=k=v asks for (one
 * equality: what the webhook's EndpointSlice list sends). */
static bool labelled(struct MHD_Connection *c, const cJSON *o)
{
	const char *sel = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "labelSelector");
	const char *eq = sel ? strchr(sel, '=') : NULL;
	if (!eq)
		return true;
	char key[256];
	snprintf(key, sizeof(key), "%.*s", (int)(eq - sel), sel);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
						 "labels"),
		key);
	return cJSON_IsString(v) && !strcmp(v->valuestring, eq + 1);
}

/* ------------------------------------------------------------ handlers */

static enum MHD_Result list(fa_server *f, struct MHD_Connection *c, const struct route *rt)
{
	struct fres *fr = &f->r[rt->r];
	fr->st.list_waiting = true;
	while (fr->hold && !f->stopping)
		timed_wait(f);
	fr->st.list_waiting = false;
	if (f->stopping) {
		pthread_mutex_unlock(&f->mu);
		return MHD_NO;
	}
	char name[256];
	selected_name(c, name, sizeof(name));
	const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
	cJSON *all = cJSON_CreateArray(), *o;
	cJSON_ArrayForEach(o, fr->items)
		if (in_namespace(o, rt->ns) && (!name[0] || !strcmp(meta_str(o, "name"), name)) &&
		    labelled(c, o))
			cJSON_AddItemToArray(all, cJSON_Duplicate(o, 1));
	int total = cJSON_GetArraySize(all);
	int start = cont && !strncmp(cont, "off:", 4) ? atoi(cont + 4) : 0;
	int n = lim ? atoi(lim) : total;
	if (fr->page && (unsigned)n > fr->page)
		n = (int)fr->page;
	if (n <= 0)
		n = total;
	cJSON *out = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(out, "items");
	cJSON_AddStringToObject(out, "apiVersion", defs[rt->r].api_version);
	char lk[96];
	snprintf(lk, sizeof(lk), "%sList", defs[rt->r].kind);
	cJSON_AddStringToObject(out, "kind", lk);
	cJSON *meta = cJSON_AddObjectToObject(out, "metadata");
	cJSON_AddStringToObject(meta, "resourceVersion", fr->rv);
	for (int i = start; i < total && i < start + n; i++)
		cJSON_AddItemToArray(items, cJSON_Duplicate(cJSON_GetArrayItem(all, i), 1));
	if (start + n < total) {
		char next[32];
		snprintf(next, sizeof(next), "off:%d", start + n);
		cJSON_AddStringToObject(meta, "continue", next);
	}
	cJSON_Delete(all);
	fr->st.lists++;
	if (cont)
		fr->st.continued++;
	pthread_mutex_unlock(&f->mu);
	enum MHD_Result ret = answer_obj(c, 200, out);
	cJSON_Delete(out);
	return ret;
}

static enum MHD_Result watch(fa_server *f, struct MHD_Connection *c, const struct route *rt)
{
	struct fres *fr = &f->r[rt->r];
	const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
	snprintf(fr->st.last_watch_rv, sizeof(fr->st.last_watch_rv), "%s", rv ? rv : "");
	if (fr->gone_next) {
		fr->gone_next = false;
		fr->st.gone++;
		pthread_mutex_unlock(&f->mu);
		return status(c, 410, "Expired");
	}
	struct stream *s = xcalloc(sizeof(*s));
	s->f = f;
	s->r = rt->r;
	snprintf(s->ns, sizeof(s->ns), "%s", rt->ns);
	selected_name(c, s->name, sizeof(s->name));
	bool expired = fr->expire_before && strtoull(rv ? rv : "0", NULL, 10) < fr->expire_before;
	if (expired) {
		/* kube-apiserver after a restart: its watch cache starts after rv. */
		char *line = NULL;
		if (asprintf(&line, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
				    "\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
				    "\"message\":\"too old resource version: %s (%llu)\",\"reason\":"
				    "\"Expired\",\"code\":410}}", rv ? rv : "", fr->expire_before) < 0)
			abort();
		queue_add(&s->q, act_new(ACT_LINE, line, NULL, NULL));
		queue_add(&s->q, act_new(ACT_END, NULL, NULL, NULL));
		free(line);
		fr->st.expired++;
	}
	/* What was pushed while no stream was open goes to this one (an expired
	 * one ends before it could say any of it: the next one gets it). */
	for (struct act *a = expired ? NULL : fr->pending.head, *n; a; a = n) {
		n = a->next;
		a->next = NULL;
		if (wanted(s, a))
			queue_add(&s->q, a);
		else {
			free(a->text);
			free(a);
		}
	}
	if (!expired)
		fr->pending.head = fr->pending.tail = NULL;
	s->next = fr->streams;
	fr->streams = s;
	fr->st.watches++;
	fr->st.watch_open = true;
	pthread_mutex_unlock(&f->mu);
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result get_item(fa_server *f, struct MHD_Connection *c, const struct route *rt)
{
	struct fres *fr = &f->r[rt->r];
	fr->st.gets++;
	if (fr->get_status) {
		unsigned code = fr->get_status;
		pthread_mutex_unlock(&f->mu);
		return status(c, code, code == 403 ? "Forbidden" : "InternalError");
	}
	cJSON *o = find(fr->items, rt->ns, rt->name);
	if (!o)
		o = find(fr->hidden, rt->ns, rt->name);
	cJSON *copy = o ? cJSON_Duplicate(o, 1) : NULL;
	pthread_mutex_unlock(&f->mu);
	if (!copy)
		return status(c, 404, "NotFound");
	enum MHD_Result ret = answer_obj(c, 200, copy);
	cJSON_Delete(copy);
	return ret;
}

/* Give obj the next resourceVersion and file it (replacing the old one);
 * caller holds mu. */
static void store_obj(fa_server *f, int r, cJSON *obj, cJSON *old)
{
	char rv[32];
	snprintf(rv, sizeof(rv), "%llu", ++f->rv);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	cJSON_AddStringToObject(meta, "resourceVersion", rv);
	snprintf(f->r[r].rv, sizeof(f->r[r].rv), "%s", rv);
	if (old)
		cJSON_ReplaceItemViaPointer(f->r[r].items, old, obj);
	else
		cJSON_AddItemToArray(f->r[r].items, obj);
	event_of(f, r, old ? "MODIFIED" : "ADDED", obj);
}

static enum MHD_Result write_item(fa_server *f, struct MHD_Connection *c, const struct route *rt,
				  bool create, const struct reqstate *rq)
{
	struct fres *fr = &f->r[rt->r];
	cJSON *obj = rq->body ? cJSON_ParseWithLength(rq->body, rq->len) : NULL;
	if (!cJSON_IsObject(obj) || !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(obj, "metadata"))) {
		cJSON_Delete(obj);
		pthread_mutex_unlock(&f->mu);
		return status(c, 400, "BadRequest");
	}
	if (defs[rt->r].namespaced && rt->ns[0] && !meta_str(obj, "namespace")[0])
		cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
					"namespace", rt->ns);
	const char *name = create ? meta_str(obj, "name") : rt->name;
	cJSON *old = find(fr->items, rt->ns, name);
	unsigned code = 0;
	if (fr->conflicts) {
		fr->conflicts--;
		code = 409;
	} else if (create && old) {
		code = 409;
	} else if (!create && !old) {
		code = 404;
	} else if (!create && strcmp(meta_str(obj, "resourceVersion"), meta_str(old, "resourceVersion"))) {
		code = 409; /* optimistic concurrency: someone wrote first */
	}
	if (code) {
		if (code == 409)
			fr->st.conflicts++;
		cJSON_Delete(obj);
		pthread_mutex_unlock(&f->mu);
		return status(c, code, code == 409 ? (create ? "AlreadyExists" : "Conflict")
						   : "NotFound");
	}
	store_obj(f, rt->r, obj, old);
	if (create)
		fr->st.posts++;
	else
		fr->st.puts++;
	cJSON *copy = cJSON_Duplicate(obj, 1);
	pthread_mutex_unlock(&f->mu);
	enum MHD_Result ret = answer_obj(c, create ? 201 : 200, copy);
	cJSON_Delete(copy);
	return ret;
}

static void record(fa_server *f, struct MHD_Connection *c, const struct route *rt,
		   const char *url, const char *tok)
{
	fa_stats *st = &f->r[rt->r].st;
	snprintf(st->last_token, sizeof(st->last_token), "%s", tok);
	snprintf(st->last_path, sizeof(st->last_path), "%s", url);
	st->last_query[0] = '\0';
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_query, st->last_query);
}

static void delay(fa_server *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned ms = f->delay_ms;
	pthread_mutex_unlock(&f->mu);
	if (ms)
		usleep(ms * 1000u);
}

/* ------------------------------------------------------------ client certificates */

/* The verified client certificate's CN into user; false when the request
 * brought none, or one the client CA did not sign. */
static bool client_user(struct MHD_Connection *c, char *user, size_t n)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t tls = ci ? (gnutls_session_t)ci->tls_session : NULL;
	unsigned status = 1, count = 0;
	if (!tls || gnutls_certificate_verify_peers2(tls, &status) || status)
		return false;
	const gnutls_datum_t *peers = gnutls_certificate_get_peers(tls, &count);
	gnutls_x509_crt_t crt;
	if (!peers || !count || gnutls_x509_crt_init(&crt))
		return false;
	size_t len = n;
	bool ok = !gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) &&
		  !gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, user, &len);
	gnutls_x509_crt_deinit(crt);
	return ok;
}

/* GET /version, readable by anyone as the API server's is. */
static enum MHD_Result version_info(fa_server *f, struct MHD_Connection *c)
{
	pthread_mutex_lock(&f->mu);
	f->version_gets++;
	char *body = f->version ? strdup(f->version) : NULL;
	pthread_mutex_unlock(&f->mu);
	return body ? answer(c, 200, body) : status(c, 404, "NotFound");
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *c, const char *url,
				 const char *method, const char *version, const char *upload,
				 size_t *upload_size, void **req)
{
	(void)version;
	fa_server *f = cls;
	struct reqstate *rq = *req;
	if (!rq) {
		*req = xcalloc(sizeof(*rq));
		return MHD_YES;
	}
	if (*upload_size) {
		rq->body = realloc(rq->body, rq->len + *upload_size + 1);
		if (!rq->body)
			abort();
		memcpy(rq->body + rq->len, upload, *upload_size);
		rq->len += *upload_size;
		rq->body[rq->len] = '\0';
		*upload_size = 0;
		return MHD_YES;
	}
	delay(f);
	if (!strcmp(url, "/version"))
		return version_info(f, c);
	struct route rt;
	if (!parse_path(url, &rt))
		return status(c, 404, "NotFound");
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	const char *tok = auth && !strncmp(auth, "Bearer ", 7) ? auth + 7 : "";
	const char *w = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
	/* Who is asking: a client certificate the client CA signed, or the
	 * token; with neither knob set, anyone. */
	char user[128] = "";
	bool cert = f->client_certs && client_user(c, user, sizeof(user));
	pthread_mutex_lock(&f->mu);
	struct fres *fr = &f->r[rt.r];
	record(f, c, &rt, url, tok);
	snprintf(fr->st.last_user, sizeof(fr->st.last_user), "%s", user);
	bool by_token = f->token && !strcmp(f->token, tok);
	if (!cert && !by_token && (f->token || f->client_certs)) {
		fr->st.unauthorized++;
		pthread_mutex_unlock(&f->mu);
		return status(c, 401, "Unauthorized");
	}
	bool item = rt.name[0] != '\0';
	if (!strcmp(method, "PUT") && item)
		return write_item(f, c, &rt, false, rq); /* each handler unlocks */
	if (!strcmp(method, "POST") && !item)
		return write_item(f, c, &rt, true, rq);
	if (strcmp(method, "GET")) {
		pthread_mutex_unlock(&f->mu);
		return status(c, 405, "MethodNotAllowed");
	}
	if (item)
		return get_item(f, c, &rt);
	if (fr->list_status) {
		unsigned code = fr->list_status;
		pthread_mutex_unlock(&f->mu);
		return status(c, code, code == 404 ? "NotFound" : code == 403 ? "Forbidden"
									 : "InternalError");
	}
	if (w && !strcmp(w, "1"))
		return watch(f, c, &rt);
	return list(f, c, &rt);
}

static void request_done(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)c, (void)toe;
	struct reqstate *rq = *req;
	if (rq) {
		free(rq->body);
		free(rq);
	}
	*req = NULL;
}

/* ------------------------------------------------------------ control */

/* Listen on 127.0.0.1:port (0: a free one): plain HTTP, or HTTPS with the
 * pair of f->tls (and client certificates checked against its client_ca). */
static struct MHD_Daemon *listen_on(fa_server *f, unsigned short port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
	const fa_tls *tls = f->has_tls ? &f->tls : NULL;
	if (!tls)
		return MHD_start_daemon(flags, 0, NULL, NULL, access_cb, f, MHD_OPTION_SOCK_ADDR, &sa,
					MHD_OPTION_NOTIFY_COMPLETED, request_done, f,
					MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_END);
	return MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, access_cb, f,
				MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED, request_done,
				f, MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_HTTPS_MEM_CERT,
				tls->cert_pem, MHD_OPTION_HTTPS_MEM_KEY, tls->key_pem,
				tls->client_ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END,
				tls->client_ca_pem, MHD_OPTION_END);
}

/* Stop listening: every handler waiting in a stream or a held list sees
 * stopping and ends (a stream as dropped); then the daemon is joined. */
static void stop_listening(fa_server *f)
{
	pthread_mutex_lock(&f->mu);
	f->stopping = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	if (f->d)
		MHD_stop_daemon(f->d);
	f->d = NULL;
}

int fa_start(fa_server **out)
{
	return fa_start_tls(out, NULL);
}

int fa_start_tls(fa_server **out, const fa_tls *tls)
{
	fa_server *f = xcalloc(sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->rv = 1000;
	for (int r = 0; r < FA_RESOURCES; r++) {
		f->r[r].items = cJSON_CreateArray();
		f->r[r].hidden = cJSON_CreateArray();
		snprintf(f->r[r].rv, sizeof(f->r[r].rv), "1");
	}
	if (tls) { /* the caller's strings, which outlive the server */
		f->tls = *tls;
		f->has_tls = true;
	}
	f->client_certs = tls && tls->client_ca_pem;
	f->d = listen_on(f, 0);
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
	stop_listening(f);
	for (int r = 0; r < FA_RESOURCES; r++) {
		cJSON_Delete(f->r[r].items);
		cJSON_Delete(f->r[r].hidden);
		queue_free(&f->r[r].pending);
	}
	free(f->token);
	free(f->version);
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

static cJSON *parse_or_die(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	if (!o)
		abort(); /* a test's typo */
	return o;
}

void fa_set_objects(fa_server *f, int r, const char *items_json, const char *rv)
{
	cJSON *items = parse_or_die(items_json);
	if (!cJSON_IsArray(items))
		abort();
	pthread_mutex_lock(&f->mu);
	cJSON_Delete(f->r[r].items);
	f->r[r].items = items;
	snprintf(f->r[r].rv, sizeof(f->r[r].rv), "%s", rv);
	pthread_mutex_unlock(&f->mu);
}

void fa_put_object(fa_server *f, int r, const char *json)
{
	cJSON *obj = parse_or_die(json);
	pthread_mutex_lock(&f->mu);
	const char *ns = defs[r].namespaced ? meta_str(obj, "namespace") : "";
	cJSON *old = find(f->r[r].items, ns, meta_str(obj, "name"));
	store_obj(f, r, obj, old);
	pthread_mutex_unlock(&f->mu);
}

void fa_delete_object(fa_server *f, int r, const char *ns, const char *name)
{
	pthread_mutex_lock(&f->mu);
	cJSON *o = find(f->r[r].items, ns ? ns : "", name);
	if (o) {
		cJSON_DetachItemViaPointer(f->r[r].items, o);
		char rv[32];
		snprintf(rv, sizeof(rv), "%llu", ++f->rv);
		snprintf(f->r[r].rv, sizeof(f->r[r].rv), "%s", rv);
		event_of(f, r, "DELETED", o);
		cJSON_Delete(o);
	}
	pthread_mutex_unlock(&f->mu);
}

char *fa_list_objects(fa_server *f, int r)
{
	pthread_mutex_lock(&f->mu);
	char *text = cJSON_PrintUnformatted(f->r[r].items);
	pthread_mutex_unlock(&f->mu);
	return text;
}

void fa_put_hidden(fa_server *f, int r, const char *json)
{
	cJSON *obj = parse_or_die(json);
	pthread_mutex_lock(&f->mu);
	cJSON_AddItemToArray(f->r[r].hidden, obj);
	pthread_mutex_unlock(&f->mu);
}

char *fa_get_object(fa_server *f, int r, const char *ns, const char *name)
{
	pthread_mutex_lock(&f->mu);
	cJSON *o = find(f->r[r].items, ns ? ns : "", name);
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	pthread_mutex_unlock(&f->mu);
	return text;
}

#define SETTER(fn, field, type)                          \
	void fn(fa_server *f, int r, type v)             \
	{                                                \
		pthread_mutex_lock(&f->mu);              \
		f->r[r].field = v;                       \
		pthread_cond_broadcast(&f->cv);          \
		pthread_mutex_unlock(&f->mu);            \
	}

SETTER(fa_set_page, page, unsigned)
SETTER(fa_set_list_status, list_status, unsigned)
SETTER(fa_set_get_status, get_status, unsigned)
SETTER(fa_conflict_next, conflicts, unsigned)
SETTER(fa_hold_list, hold, bool)

void fa_set_version(fa_server *f, const char *json)
{
	pthread_mutex_lock(&f->mu);
	free(f->version);
	f->version = json ? strdup(json) : NULL;
	pthread_mutex_unlock(&f->mu);
}

unsigned fa_version_gets(fa_server *f)
{
	pthread_mutex_lock(&f->mu);
	unsigned n = f->version_gets;
	pthread_mutex_unlock(&f->mu);
	return n;
}

void fa_set_delay(fa_server *f, unsigned ms)
{
	pthread_mutex_lock(&f->mu);
	f->delay_ms = ms;
	pthread_mutex_unlock(&f->mu);
}

void fa_gone_next_watch(fa_server *f, int r)
{
	pthread_mutex_lock(&f->mu);
	f->r[r].gone_next = true;
	pthread_mutex_unlock(&f->mu);
}

void fa_expire_before(fa_server *f, int r, unsigned long long rv)
{
	pthread_mutex_lock(&f->mu);
	f->r[r].expire_before = rv;
	pthread_mutex_unlock(&f->mu);
}

void fa_set_down(fa_server *f, bool down)
{
	if (down) {
		stop_listening(f);
		pthread_mutex_lock(&f->mu);
		f->stopping = false;
		pthread_mutex_unlock(&f->mu);
	} else if (!f->d && !(f->d = listen_on(f, f->port))) {
		abort(); /* the port was taken meanwhile: the test cannot go on */
	}
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

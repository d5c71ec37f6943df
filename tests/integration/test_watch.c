/*
 * test_watch.c — the API-server watch (webhook/cluster/watch.c) against the fake API
 * server (tests/support/fakeapi.c): in process with a real store, and through
 * the real binary (`serve --kube-server http://127.0.0.1:PORT`) for /readyz.
 * Every wait is a bounded poll.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/fakeapi.h"
#include "tests/support/testutil.h"
#include "webhook/core/jsonlines.h"
#include "webhook/cluster/kube.h"
#include "webhook/metrics/metrics.h"
#include "webhook/cluster/watch.h"

#define WAIT_MS 10000

enum { CTR = FA_CTR, TR = FA_TR, TJ = FA_TJ, JS = FA_JS, NKINDS = 4 };

/* The four kinds these tests watch into one store, in the fake's order. */
static const tw_watch_kind test_kinds[NKINDS] = {
	{ "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", "ClusterTrainingRuntime",
	  .cluster_scoped = true },
	{ "trainer.kubeflow.org", "v1alpha1", "trainingruntimes", "TrainingRuntime" },
	{ "trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob" },
	{ "jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet" },
};
static const tp_kind test_tp[NKINDS] = { TP_KIND_CLUSTER_TRAINING_RUNTIME,
					 TP_KIND_TRAINING_RUNTIME, TP_KIND_TRAINJOB,
					 TP_KIND_JOBSET };

/* ------------------------------------------------------------ fixture */

typedef struct fx {
	fa_server *fa;
	char dir[64];
	char token_path[128];
	tw_kube_config kc;
	tp_store *store;
	tw_watch *w;
	tw_store_sink sinks[NKINDS];
} fx;

static void write_file(const char *path, const char *text)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *fp = fopen(tmp, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(rename(tmp, path), 0); /* the kubelet swaps files too */
}

static char *obj(const char *kind, const char *ns, const char *name, const char *rv,
		 const char *extra)
{
	const char *av = strcmp(kind, "JobSet") ? "trainer.kubeflow.org/v1alpha1"
						: "jobset.x-k8s.io/v1alpha2";
	char nsf[128] = "";
	if (ns)
		snprintf(nsf, sizeof(nsf), ",\"namespace\":\"%s\"", ns);
	char *s = NULL;
	assert_true(asprintf(&s,
			     "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"%s,"
			     "\"resourceVersion\":\"%s\",\"managedFields\":[{\"manager\":\"x\"}]},"
			     "\"spec\":{}%s%s}",
			     av, kind, name, nsf, rv, extra ? "," : "", extra ? extra : "") > 0);
	return s;
}

static char *event(const char *type, char *object)
{
	char *s = NULL;
	assert_true(asprintf(&s, "{\"type\":\"%s\",\"object\":%s}", type, object) > 0);
	free(object);
	return s;
}

static void push_event(fa_server *fa, int r, const char *type, char *object)
{
	char *e = event(type, object);
	fa_push(fa, r, e);
	free(e);
}

static int fx_setup(void **state)
{
	fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	snprintf(x->dir, sizeof(x->dir), "/tmp/tw-watch-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->token_path, sizeof(x->token_path), "%s/token", x->dir);
	write_file(x->token_path, "token-1\n");
	assert_int_equal(fa_start(&x->fa), 0);
	fa_set_token(x->fa, "token-1");
	char url[64], err[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(x->fa));
	assert_int_equal(tw_kube_config_explicit(&x->kc, url, x->token_path, NULL, err,
						 sizeof(err)), 0);
	assert_int_equal(tp_store_new(&x->store), 0);
	tw_metrics_reset();
	*state = x;
	return 0;
}

static void fx_start(fx *x)
{
	char err[256];
	tw_watch_kind kinds[NKINDS];
	for (int i = 0; i < NKINDS; i++) {
		kinds[i] = test_kinds[i];
		x->sinks[i] = (tw_store_sink){ x->store, test_tp[i] };
		kinds[i].sink = tw_watch_store_sink(&x->sinks[i]);
	}
	tw_watch_opts o = { .kube = &x->kc, .kinds = kinds, .nkinds = NKINDS,
			    .backoff_min_ms = 50, .backoff_max_ms = 400, .metrics = true };
	assert_int_equal(tw_watch_start(&o, &x->w, err, sizeof(err)), 0);
}

static int fx_teardown(void **state)
{
	fx *x = *state;
	tw_watch_stop(x->w);
	fa_stop(x->fa);
	tp_store_free(x->store);
	tw_kube_config_free(&x->kc);
	unlink(x->token_path);
	rmdir(x->dir);
	free(x);
	return 0;
}

static bool synced(void *arg)
{
	return tw_watch_synced(((fx *)arg)->w);
}

/* Wait for the first lists and the four watches to be open. */
static void wait_watching(fx *x)
{
	assert_true(tt_wait_until(synced, x, WAIT_MS));
	for (int r = 0; r < NKINDS; r++) {
		long long end = tt_mono_ms() + WAIT_MS;
		fa_stats st;
		for (fa_get_stats(x->fa, r, &st); !st.watch_open; fa_get_stats(x->fa, r, &st)) {
			assert_true(tt_mono_ms() < end);
			tt_sleep_ms(10);
		}
	}
}

struct has {
	fx *x;
	tp_kind k;
	const char *ns, *name;
	const char *field, *value; /* spec.<field> == value, when field */
	bool want;
};

/* The watch of one resource has reported resourceVersion rv in its stats. */
struct rv_is {
	fx *x;
	int res;
	const char *rv;
};

static bool rv_is_cond(void *arg)
{
	const struct rv_is *r = arg;
	tw_watch_stat s[NKINDS];
	tw_watch_stats(r->x->w, s);
	return !strcmp(s[r->res].rv, r->rv);
}

static bool has_cond(void *arg)
{
	struct has *h = arg;
	tp_store_rdlock(h->x->store);
	const cJSON *o = tp_store_get(h->x->store, h->k, h->ns, h->name);
	bool ok = o != NULL;
	if (o && h->field) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(o, "spec"), h->field);
		ok = cJSON_IsString(v) && !strcmp(v->valuestring, h->value);
	}
	tp_store_unlock(h->x->store);
	return ok == h->want;
}

static void expect(fx *x, tp_kind k, const char *ns, const char *name, bool want)
{
	struct has h = { x, k, ns, name, NULL, NULL, want };
	if (!tt_wait_until(has_cond, &h, WAIT_MS))
		fail_msg("%s %s/%s: want %s in the store", tp_kind_name(k), ns ? ns : "", name,
			 want ? "present" : "absent");
}

struct watches {
	fx *x;
	int r;
	unsigned n;
};

static bool watches_cond(void *arg)
{
	struct watches *w = arg;
	fa_stats st;
	fa_get_stats(w->x->fa, w->r, &st);
	return st.watches >= w->n && st.watch_open;
}

/* Wait for watch number n of r to be open. */
static void wait_watch_number(fx *x, int r, unsigned n)
{
	struct watches w = { x, r, n };
	if (!tt_wait_until(watches_cond, &w, WAIT_MS))
		fail_msg("watch %u of resource %d never opened", n, r);
}

/* ------------------------------------------------------------ splitter */

struct lines {
	char got[8][64];
	int n;
};

static int collect(void *arg, const char *line, size_t len)
{
	struct lines *l = arg;
	assert_true(l->n < 8 && len < 64);
	memcpy(l->got[l->n], line, len);
	l->got[l->n++][len] = '\0';
	return 0;
}

static void test_jsonlines_split(void **state)
{
	(void)state;
	tw_jsonlines s;
	tw_jsonlines_init(&s, 32);
	struct lines l = { 0 };
	const char *text = "{\"a\":1}\n\r\n{\"b\":\n2}\r\n  \n{\"c\":3}";
	for (const char *p = text; *p; p++) /* one byte per feed */
		assert_int_equal(tw_jsonlines_feed(&s, p, 1, collect, &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.got[0], "{\"a\":1}");
	assert_string_equal(l.got[1], "{\"b\":");
	assert_string_equal(l.got[2], "2}");
	assert_int_equal(tw_jsonlines_pending(&s), 7); /* {"c":3} waits for its newline */
	assert_int_equal(tw_jsonlines_feed(&s, "\nx\ny\n", 5, collect, &l), 0);
	assert_int_equal(l.n, 6);
	assert_string_equal(l.got[3], "{\"c\":3}");
	assert_string_equal(l.got[5], "y");
	/* A line over the bound fails, whole or in pieces. */
	char big[40];
	memset(big, 'x', sizeof(big));
	assert_int_equal(tw_jsonlines_feed(&s, big, 20, collect, &l), 0);
	assert_int_equal(tw_jsonlines_feed(&s, big, 20, collect, &l), TP_ELIMIT);
	tw_jsonlines_reset(&s);
	big[39] = '\n';
	assert_int_equal(tw_jsonlines_feed(&s, big, 40, collect, &l), TP_ELIMIT);
	tw_jsonlines_free(&s);
}

static void test_kube_in_cluster(void **state)
{
	(void)state;
	tw_kube_config c;
	char err[256];
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_not_equal(tw_kube_config_in_cluster(&c, NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(tw_kube_config_in_cluster(&c, "sa", err, sizeof(err)), 0);
	assert_string_equal(c.server, "https://[fd00::1]:443");
	assert_string_equal(c.token_file, "sa/token");
	assert_string_equal(c.ca_file, "sa/ca.crt");
	tw_kube_config_free(&c);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	assert_int_equal(tw_kube_config_in_cluster(&c, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.server, "https://10.96.0.1:443");
	assert_string_equal(c.token_file, TW_KUBE_SA_DIR "/token");
	tw_kube_config_free(&c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_int_not_equal(tw_kube_config_explicit(&c, "ftp://x", NULL, NULL, err, sizeof(err)),
			     0);
}

/* ------------------------------------------------------------ the watch */

static void test_follows_events(void **state)
{
	fx *x = *state;
	char *a = obj("TrainingRuntime", "team-a", "torch", "5", NULL);
	char items[1024];
	snprintf(items, sizeof(items), "[%s]", a);
	free(a);
	fa_set_objects(x->fa, TR, items, "5");
	fx_start(x);
	wait_watching(x);
	expect(x, TP_KIND_TRAINING_RUNTIME, "team-a", "torch", true);
	/* managedFields are dropped on the way in. */
	tp_store_rdlock(x->store);
	const cJSON *o = tp_store_get(x->store, TP_KIND_TRAINING_RUNTIME, "team-a", "torch");
	assert_null(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "metadata"), "managedFields"));
	tp_store_unlock(x->store);

	push_event(x->fa, TR, "ADDED", obj("TrainingRuntime", "team-b", "mpi", "6", NULL));
	push_event(x->fa, CTR, "ADDED", obj("ClusterTrainingRuntime", NULL, "global", "7", NULL));
	push_event(x->fa, JS, "ADDED",
		   obj("JobSet", "team-a", "job", "8", "\"status\":{\"restarts\":2}"));
	expect(x, TP_KIND_TRAINING_RUNTIME, "team-b", "mpi", true);
	expect(x, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "global", true);
	expect(x, TP_KIND_JOBSET, "team-a", "job", true);
	tp_store_rdlock(x->store); /* the JobSet keeps its status */
	o = tp_store_get(x->store, TP_KIND_JOBSET, "team-a", "job");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(st, "restarts")->valueint, 2);
	tp_store_unlock(x->store);

	/* An event whose object is of another kind is ignored. */
	push_event(x->fa, TR, "MODIFIED", obj("TrainJob", "team-a", "torch", "9", NULL));
	/* MODIFIED replaces the object: the new one carries a marker. */
	char *m = obj("TrainingRuntime", "team-a", "torch", "11", NULL);
	char *p = strstr(m, "\"spec\":{}");
	assert_non_null(p);
	char *mod = NULL;
	assert_true(asprintf(&mod, "%.*s\"spec\":{\"mark\":\"v2\"}%s", (int)(p - m), m,
			     p + strlen("\"spec\":{}")) > 0);
	free(m);
	push_event(x->fa, TR, "MODIFIED", mod);
	struct has h = { x, TP_KIND_TRAINING_RUNTIME, "team-a", "torch", "mark", "v2", true };
	assert_true(tt_wait_until(has_cond, &h, WAIT_MS));

	push_event(x->fa, TR, "DELETED", obj("TrainingRuntime", "team-b", "mpi", "12", NULL));
	expect(x, TP_KIND_TRAINING_RUNTIME, "team-b", "mpi", false);
	expect(x, TP_KIND_TRAINING_RUNTIME, "team-a", "torch", true);
	/* The stats follow the store change a moment later (same thread, after
	 * it): wait for them rather than race them. */
	struct rv_is r = { x, TR, "12" };
	assert_true(tt_wait_until(rv_is_cond, &r, WAIT_MS));
	tw_watch_stat s[NKINDS];
	tw_watch_stats(x->w, s);
	assert_string_equal(s[TR].rv, "12");
	assert_true(s[TR].synced);
	assert_int_equal(s[TR].relists, 0);
}

static void test_paged_list(void **state)
{
	fx *x = *state;
	char items[8192] = "[";
	for (int i = 0; i < 7; i++) {
		char name[16];
		snprintf(name, sizeof(name), "job-%d", i);
		char *o = obj("TrainJob", i % 2 ? "ns-odd" : "ns-even", name, "3", NULL);
		strcat(items, i ? "," : "");
		strcat(items, o);
		free(o);
	}
	strcat(items, "]");
	fa_set_objects(x->fa, TJ, items, "40");
	fa_set_page(x->fa, TJ, 3);
	fx_start(x);
	wait_watching(x);
	tp_store_rdlock(x->store);
	assert_int_equal(tp_store_count(x->store, TP_KIND_TRAINJOB), 7);
	assert_non_null(tp_store_get(x->store, TP_KIND_TRAINJOB, "ns-even", "job-6"));
	tp_store_unlock(x->store);
	fa_stats st;
	fa_get_stats(x->fa, TJ, &st);
	assert_int_equal(st.lists, 3);     /* 3 + 3 + 1 */
	assert_int_equal(st.continued, 2);
	assert_string_equal(st.last_watch_rv, "40"); /* the list's resourceVersion */
	assert_non_null(strstr(st.last_query, "allowWatchBookmarks=true"));
	assert_non_null(strstr(st.last_query, "timeoutSeconds="));
}

static void test_reconnects_after_drop(void **state)
{
	fx *x = *state;
	fa_set_objects(x->fa, TJ, "[]", "100");
	fx_start(x);
	wait_watching(x);
	push_event(x->fa, TJ, "ADDED", obj("TrainJob", "a", "one", "101", NULL));
	expect(x, TP_KIND_TRAINJOB, "a", "one", true);
	fa_drop(x->fa, TJ);
	wait_watch_number(x, TJ, 2);
	fa_stats st;
	fa_get_stats(x->fa, TJ, &st);
	assert_string_equal(st.last_watch_rv, "101"); /* resumed, not re-listed */
	assert_int_equal(st.lists, 1);
	push_event(x->fa, TJ, "ADDED", obj("TrainJob", "a", "two", "102", NULL));
	expect(x, TP_KIND_TRAINJOB, "a", "two", true);
	/* A clean end (the server's timeoutSeconds) reconnects as well. */
	fa_end(x->fa, TJ);
	wait_watch_number(x, TJ, 3);
	fa_get_stats(x->fa, TJ, &st);
	assert_string_equal(st.last_watch_rv, "102");
	tw_watch_stat s[NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[TJ].reconnects, 2);
	assert_int_equal(s[TJ].relists, 0);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&b), 0);
	assert_non_null(strstr(b.data, "trainer_webhook_watch_reconnects_total{kind=\"TrainJob\"} 2"));
	tp_buf_free(&b);
}

static void relist_case(fx *x, bool as_event)
{
	char *a = obj("TrainingRuntime", "ns", "old", "5", NULL);
	char *b = obj("TrainingRuntime", "ns", "kept", "5", NULL);
	char items[2048];
	snprintf(items, sizeof(items), "[%s,%s]", a, b);
	free(a);
	free(b);
	fa_set_objects(x->fa, TR, items, "5");
	fx_start(x);
	wait_watching(x);
	expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "old", true);
	/* Meanwhile "old" went away and "new" came, in events the watch missed. */
	b = obj("TrainingRuntime", "ns", "kept", "50", NULL);
	char *c = obj("TrainingRuntime", "ns", "new", "50", NULL);
	snprintf(items, sizeof(items), "[%s,%s]", b, c);
	free(b);
	free(c);
	fa_set_objects(x->fa, TR, items, "60");
	if (as_event) {
		fa_push(x->fa, TR, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
				   "\"v1\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410,"
				   "\"message\":\"too old resource version: 5 (50)\"}}");
		fa_end(x->fa, TR);
	} else {
		fa_gone_next_watch(x->fa, TR);
		fa_drop(x->fa, TR);
	}
	expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "new", true);
	expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "old", false);
	expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "kept", true);
	fa_stats st;
	fa_get_stats(x->fa, TR, &st);
	assert_int_equal(st.lists, 2);
	assert_int_equal(st.gone, as_event ? 0 : 1);
	wait_watch_number(x, TR, 2);
	fa_get_stats(x->fa, TR, &st);
	assert_string_equal(st.last_watch_rv, "60");
	tw_watch_stat s[NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[TR].relists, 1);
	tp_buf mb = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&mb), 0);
	assert_non_null(strstr(mb.data,
			       "trainer_webhook_watch_relists_total{kind=\"TrainingRuntime\"} 1"));
	assert_non_null(strstr(mb.data, "trainer_webhook_store_objects{kind=\"TrainingRuntime\"} 2"));
	tp_buf_free(&mb);
}

static void test_relist_on_410_status(void **state)
{
	relist_case(*state, false);
}

static void test_relist_on_410_error_event(void **state)
{
	relist_case(*state, true);
}

static void test_bookmark_moves_rv(void **state)
{
	fx *x = *state;
	fa_set_objects(x->fa, JS, "[]", "10");
	fx_start(x);
	wait_watching(x);
	fa_push(x->fa, JS, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"JobSet\",\"apiVersion\":"
			   "\"jobset.x-k8s.io/v1alpha2\",\"metadata\":{\"resourceVersion\":\"777\"}}}");
	fa_drop(x->fa, JS);
	wait_watch_number(x, JS, 2);
	fa_stats st;
	fa_get_stats(x->fa, JS, &st);
	assert_string_equal(st.last_watch_rv, "777");
	assert_int_equal(st.lists, 1);
	tw_watch_stat s[NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[JS].bookmarks, 1);
}

static void test_token_reread(void **state)
{
	fx *x = *state;
	fx_start(x);
	wait_watching(x);
	fa_stats st;
	fa_get_stats(x->fa, CTR, &st);
	assert_string_equal(st.last_token, "token-1");
	/* The kubelet rotates the token; the API server wants the new one. */
	fa_set_token(x->fa, "token-2");
	write_file(x->token_path, "token-2\n");
	fa_drop(x->fa, CTR);
	wait_watch_number(x, CTR, 2);
	fa_get_stats(x->fa, CTR, &st);
	assert_string_equal(st.last_token, "token-2");
	assert_int_equal(st.unauthorized, 0);
}

static void test_wrong_token_backs_off(void **state)
{
	fx *x = *state;
	fa_set_token(x->fa, "something-else");
	fx_start(x);
	long long end = tt_mono_ms() + WAIT_MS;
	fa_stats st;
	for (fa_get_stats(x->fa, TJ, &st); st.unauthorized < 3; fa_get_stats(x->fa, TJ, &st)) {
		assert_true(tt_mono_ms() < end);
		tt_sleep_ms(10);
	}
	assert_false(tw_watch_synced(x->w));
	assert_int_equal(st.lists, 0);
	/* The right token arrives: the lists go through. */
	fa_set_token(x->fa, "token-1");
	assert_true(tt_wait_until(synced, x, WAIT_MS));
}

static void test_stop_is_prompt(void **state)
{
	fx *x = *state;
	fa_hold_list(x->fa, JS, true); /* one list hangs, three watches stream */
	fx_start(x);
	long long end = tt_mono_ms() + WAIT_MS;
	fa_stats st;
	for (fa_get_stats(x->fa, JS, &st); !st.list_waiting; fa_get_stats(x->fa, JS, &st)) {
		assert_true(tt_mono_ms() < end);
		tt_sleep_ms(10);
	}
	wait_watch_number(x, TJ, 1);
	assert_false(tw_watch_synced(x->w));
	long long t0 = tt_mono_ms();
	tw_watch_stop(x->w);
	x->w = NULL;
	assert_true(tt_mono_ms() - t0 < 1000);
	fa_hold_list(x->fa, JS, false);
}

/* ------------------------------------------------------------ the binary */

static size_t keep(char *p, size_t s, size_t n, void *arg)
{
	tp_buf *b = arg;
	return tp_buf_add(b, p, s * n) ? 0 : s * n;
}

/* GET /readyz: the status, and the body into body (may be NULL). */
static long readyz(unsigned short port, tp_buf *body)
{
	char url[64];
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/readyz", port);
	tp_buf dummy = TP_BUF_INIT(0);
	if (!body)
		body = &dummy;
	tp_buf_reset(body);
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L); /* loopback, a throwaway pair */
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	long code = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	tp_buf_free(&dummy);
	return code;
}

/* The HTTPS port from the server's "serving https on ... (port N)" line. */
static unsigned short port_from_log(const char *log_path, pid_t pid)
{
	long long end = tt_mono_ms() + WAIT_MS;
	while (tt_mono_ms() < end) {
		char *text = tt_read_file(log_path, NULL);
		const char *p = text ? strstr(text, "(port ") : NULL;
		unsigned port = p ? (unsigned)atoi(p + 6) : 0;
		free(text);
		if (port)
			return (unsigned short)port;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			fail_msg("the server exited early; see %s", log_path);
		tt_sleep_ms(10);
	}
	fail_msg("no port in the server's log");
	return 0;
}

static void wait_watch_open(fx *x, int r, pid_t pid)
{
	long long end = tt_mono_ms() + WAIT_MS;
	fa_stats st;
	for (fa_get_stats(x->fa, r, &st); !st.watch_open; fa_get_stats(x->fa, r, &st)) {
		if (tt_mono_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("resource %d was never watched", r);
		}
		tt_sleep_ms(10);
	}
}

/* The runtimes hold readiness, with a reason that names the kind and its
 * last answer; the optional kinds (PriorityClasses here, their API absent)
 * do not; TrainJobs and JobSets are not listed at all. */
static void test_binary_readyz_waits_for_runtimes(void **state)
{
	fx *x = *state;
	char cmd[1024], log_path[128];
	snprintf(cmd, sizeof(cmd),
		 "%s certs generate --service tw --namespace test --out %s >/dev/null 2>&1",
		 tt_bin(), x->dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	snprintf(log_path, sizeof(log_path), "%s/serve.log", x->dir);
	fa_set_list_status(x->fa, FA_CTR, 403); /* a missing RBAC verb */
	fa_set_list_status(x->fa, FA_PC, 404);  /* an API that is not installed */
	fa_set_list_status(x->fa, FA_JS, 404);
	char url[64], crt[128], key[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(x->fa));
	snprintf(crt, sizeof(crt), "%s/tls.crt", x->dir);
	snprintf(key, sizeof(key), "%s/tls.key", x->dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		dup2(fd, 1);
		execl(tt_bin(), tt_bin(), "serve", "--kube-server", url, "--kube-token-file",
		      x->token_path, "--tls-cert", crt, "--tls-key", key, "--listen",
		      "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--threads", "2",
		      "--shutdown-grace", "2", (char *)NULL);
		_exit(127);
	}
	unsigned short port = port_from_log(log_path, pid);
	wait_watch_open(x, TR, pid);
	tp_buf body = TP_BUF_INIT(0);
	long code = 0;
	long long end = tt_mono_ms() + WAIT_MS;
	/* Until the first 403 has been seen the reason is "no answer yet". */
	while ((code = readyz(port, &body)) == 503 && !strstr(body.data, "HTTP 403") &&
	       tt_mono_ms() < end)
		tt_sleep_ms(10);
	char *first = strdup(body.data ? body.data : "");
	fa_set_list_status(x->fa, FA_CTR, 0);
	long later = 0;
	end = tt_mono_ms() + WAIT_MS;
	while ((later = readyz(port, &body)) != 200 && tt_mono_ms() < end)
		tt_sleep_ms(10);
	fa_stats js, tj, pc;
	fa_get_stats(x->fa, FA_JS, &js);
	fa_get_stats(x->fa, FA_TJ, &tj);
	fa_get_stats(x->fa, FA_PC, &pc);
	kill(pid, SIGTERM);
	int status = -1;
	end = tt_mono_ms() + WAIT_MS;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (tt_mono_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fail_msg("serve did not stop within %d ms of SIGTERM", WAIT_MS);
		}
		tt_sleep_ms(10);
	}
	char *log = tt_read_file(log_path, NULL);
	assert_int_equal(code, 503);
	assert_non_null(strstr(first, "not ready: clustertrainingruntimes.trainer.kubeflow.org "
				      "not listed yet (HTTP 403: fake: Forbidden)"));
	assert_null(strstr(first, "priorityclasses")); /* optional: never holds readiness */
	assert_int_equal(later, 200);
	assert_int_equal(js.lists + tj.lists + js.watches + tj.watches, 0);
	assert_int_equal(pc.lists, 0); /* its API answered 404 every time */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(log);
	assert_non_null(strstr(log, "API-server watch stopped"));
	assert_non_null(strstr(log, "the API server does not serve it"));
	free(first);
	free(log);
	tp_buf_free(&body);
	char f[160];
	const char *names[] = { "tls.crt", "tls.key", "ca.crt", "ca.key", "serve.log" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", x->dir, names[i]);
		unlink(f);
	}
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonlines_split),
		cmocka_unit_test(test_kube_in_cluster),
		cmocka_unit_test_setup_teardown(test_follows_events, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_paged_list, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reconnects_after_drop, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_relist_on_410_status, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_relist_on_410_error_event, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_bookmark_moves_rv, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_token_reread, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_wrong_token_backs_off, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stop_is_prompt, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_binary_readyz_waits_for_runtimes, fx_setup,
						fx_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}

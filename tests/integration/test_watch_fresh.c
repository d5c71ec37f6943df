/*
 * test_watch_fresh.c — answers while the watch's cache may be stale, against
 * the fake API server (tests/support/fakeapi.c) restarted under it: a runtime
 * deleted, and one labelled deprecated, while the API server was down (as
 * through another API server on the same etcd). In process (the watch, the
 * store and the resolver a request decides with) and through the real
 * binary (`serve --kube-server`), which also gives the seconds of stale
 * answers after the restart. And the resolver's cache-only mode, which a
 * stale kind, a miss or an uncached kind sends to the API server by way of
 * a decider thread. Every wait is a bounded poll.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/apiclient.h"
#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/admission/admission.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/resolver.h"
#include "webhook/cluster/watch.h"
#include "webhook/core/clock.h"
#include "webhook/metrics/metrics.h"

#define WAIT_MS 10000
#define V_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define NOT_FOUND_TEXT                                                                      \
	"clustertrainingruntimes.trainer.kubeflow.org \"rt-del\" not found: specified "    \
	"clusterTrainingRuntime must be created before the TrainJob is created"
#define DEPRECATED_TEXT "Referenced ClusterTrainingRuntime \"rt-keep\" is deprecated"

/* A ClusterTrainingRuntime both profiles accept; labels: JSON members or "". */
static char *runtime(const char *name, const char *labels)
{
	char *s = NULL;
	assert_true(asprintf(&s,
			     "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
			     "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"%s\","
			     "\"resourceVersion\":\"5\",\"labels\":{%s}},\"spec\":{\"mlPolicy\":"
			     "{\"torch\":{}},\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":"
			     "\"node\",\"template\":{\"metadata\":{\"labels\":{\"trainer.kubeflow.org/"
			     "trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":{\"spec\":"
			     "{\"containers\":[{\"name\":\"node\",\"image\":\"img\"}]}}}}}]}}}}",
			     name, labels) > 0);
	return s;
}

#define DEPRECATED_LABEL "\"trainer.kubeflow.org/support\":\"deprecated\""

/* The cluster before the restart: rt-keep and rt-del, listed at rv 5. */
static void cluster_before(fa_server *fa)
{
	char *keep = runtime("rt-keep", ""), *del = runtime("rt-del", "");
	char items[4096];
	snprintf(items, sizeof(items), "[%s,%s]", keep, del);
	fa_set_objects(fa, FA_CTR, items, "5");
	free(keep);
	free(del);
}

/* What another API server wrote meanwhile: rt-del deleted, rt-keep labelled
 * deprecated (rv 50); watches from before it are too old for the restarted
 * one. */
static void changed_while_down(fa_server *fa)
{
	char *keep = runtime("rt-keep", DEPRECATED_LABEL);
	char items[4096];
	snprintf(items, sizeof(items), "[%s]", keep);
	fa_set_objects(fa, FA_CTR, items, "50");
	fa_expire_before(fa, FA_CTR, 50);
	free(keep);
}

static char *review(const char *runtime_name)
{
	char *s = NULL;
	assert_true(asprintf(&s,
			     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			     "\"request\":{\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
			     "\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\","
			     "\"namespace\":\"team-a\",\"object\":{\"apiVersion\":\"trainer.kubeflow.org/"
			     "v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"tj\",\"namespace\":"
			     "\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"%s\",\"apiGroup\":"
			     "\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"},\"trainer\":"
			     "{\"numNodes\":1}}},\"oldObject\":null,\"dryRun\":false}}",
			     runtime_name) > 0);
	return s;
}

/* What an answer said, in short. */
typedef struct said {
	bool allowed;
	long long code;      /* response.status.code (0: none) */
	char message[512];   /* response.status.message */
	bool deprecated;     /* a warning that the runtime is deprecated */
} said;

static said said_of(const char *answer_json)
{
	said r = { 0 };
	cJSON *a = tt_json(answer_json);
	r.allowed = tp_get_true(a, "response.allowed");
	tp_get_int(a, "response.status.code", &r.code);
	const char *m = tp_get_str(a, "response.status.message");
	snprintf(r.message, sizeof(r.message), "%s", m ? m : "");
	const cJSON *w;
	cJSON_ArrayForEach(w, tp_get_array(a, "response.warnings"))
		if (cJSON_IsString(w) && strstr(w->valuestring, DEPRECATED_TEXT))
			r.deprecated = true;
	cJSON_Delete(a);
	return r;
}

/* ------------------------------------------------------------ in process */

enum { K_CTR, K_TR, K_COUNT };

typedef struct fx {
	tt_apiclient c;
	tw_watch *w;
	tw_store_sink sinks[K_COUNT];
	tw_freshness fresh;
	tw_cluster cluster;
} fx;

static int setup(void **state)
{
	fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	tt_apiclient_open(&x->c);
	x->cluster = (tw_cluster){ .api = x->c.api,
				   .cached = (1u << TP_KIND_CLUSTER_TRAINING_RUNTIME) |
					     (1u << TP_KIND_TRAINING_RUNTIME),
				   .fresh = &x->fresh };
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	fx *x = *state;
	tw_watch_stop(x->w);
	tt_apiclient_close(&x->c);
	free(x);
	return 0;
}

/* The runtimes of both scopes, as serve watches them; any backoff waits at
 * least 30 s, far beyond every wait here. */
static void watch_runtimes(fx *x)
{
	static const tw_watch_kind kinds[K_COUNT] = {
		[K_CTR] = { "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes",
			    "ClusterTrainingRuntime", .cluster_scoped = true,
			    .fresh_bit = 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME },
		[K_TR] = { "trainer.kubeflow.org", "v1alpha1", "trainingruntimes",
			   "TrainingRuntime", .fresh_bit = 1u << TP_KIND_TRAINING_RUNTIME },
	};
	static const tp_kind tp[K_COUNT] = { TP_KIND_CLUSTER_TRAINING_RUNTIME,
					     TP_KIND_TRAINING_RUNTIME };
	tw_watch_kind k[K_COUNT];
	for (int i = 0; i < K_COUNT; i++) {
		k[i] = kinds[i];
		x->sinks[i] = (tw_store_sink){ x->c.store, tp[i] };
		k[i].sink = tw_watch_store_sink(&x->sinks[i]);
	}
	tw_watch_opts o = { .kube = &x->c.kc, .kinds = k, .nkinds = K_COUNT,
			    .backoff_min_ms = 60000, .backoff_max_ms = 60000, .metrics = true,
			    .fresh = &x->fresh };
	char err[256];
	assert_int_equal(tw_watch_start(&o, &x->w, err, sizeof(err)), 0);
}

/* One answer as the server gives it: the resolver over the store and the
 * fake API server. */
static said answer(fx *x, const char *runtime_name)
{
	tw_config cfg = { .opt = { .profile = TP_PROFILE_KUBEFLOW, .now = "2026-11-23T10:00:00Z" },
			  .store = x->c.store };
	tw_resolver rs;
	tw_resolver_init(&rs, &x->cluster, x->c.store, x->c.arena, tw_mono_ms() + 5000);
	cfg.opt.lookup = &rs.lookup;
	char *body = review(runtime_name);
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_admission_handle(&cfg, tw_route_find(V_TJ), body, strlen(body),
					     x->c.arena, &out, &oc), TP_OK);
	tw_resolver_done(&rs);
	assert_int_equal(oc.http_status, 200);
	said r = said_of(out.data);
	tp_buf_free(&out);
	free(body);
	tp_arena_reset(x->c.arena);
	return r;
}

struct fresh_is {
	fx *x;
	bool want;
};

static bool ctr_fresh(void *arg)
{
	const struct fresh_is *f = arg;
	return tw_fresh_is(&f->x->fresh, 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME) == f->want;
}

static void wait_ctr_fresh(fx *x, bool want)
{
	struct fresh_is f = { x, want };
	if (!tt_wait_until(ctr_fresh, &f, WAIT_MS))
		fail_msg("ClusterTrainingRuntimes never became %s", want ? "fresh" : "stale");
}

static bool watch_ready(void *arg)
{
	fx *x = arg;
	return tw_watch_ready(x->w, NULL, 0);
}

static bool list_held(void *arg)
{
	fa_stats st;
	fa_get_stats(arg, FA_CTR, &st);
	return st.list_waiting;
}

static unsigned gets(fx *x)
{
	fa_stats st;
	fa_get_stats(x->c.fa, FA_CTR, &st);
	return st.gets;
}

/* While stale, a hit is no answer either: rt-del, deleted while the API
 * server was down, is "not found" at once, and rt-keep, labelled deprecated
 * meanwhile, warns — both read through, before the re-list completes. While
 * the API server cannot answer, the answer is an error, never the cache's
 * stale copy. The read-through that found the API server back starts the
 * re-list at once, whatever the backoff. Fresh again, the cache answers. */
static void stale_kind_reads_through(void **state)
{
	fx *x = *state;
	cluster_before(x->c.fa);
	watch_runtimes(x);
	wait_ctr_fresh(x, true);
	/* every kind listed once (on a loaded machine the others may come after
	 * the ClusterTrainingRuntimes): from now on the watch stays ready */
	assert_true(tt_wait_until(watch_ready, x, WAIT_MS));
	said r = answer(x, "rt-del");
	assert_true(r.allowed);
	assert_int_equal(gets(x), 0); /* fresh: from the cache */

	fa_set_down(x->c.fa, true);
	wait_ctr_fresh(x, false);
	r = answer(x, "rt-keep");
	assert_false(r.allowed);
	assert_int_equal(r.code, 500);
	assert_non_null(strstr(r.message, "could not be looked up"));
	char why[256] = "x";
	assert_true(tw_watch_ready(x->w, why, sizeof(why))); /* listed once: stays ready */

	changed_while_down(x->c.fa);
	fa_hold_list(x->c.fa, FA_CTR, true); /* the re-list cannot complete */
	fa_set_down(x->c.fa, false);
	r = answer(x, "rt-del");
	assert_false(r.allowed);
	assert_int_equal(r.code, 403);
	assert_non_null(strstr(r.message, NOT_FOUND_TEXT));
	r = answer(x, "rt-keep");
	assert_true(r.allowed);
	assert_true(r.deprecated);
	assert_int_equal(gets(x), 2);
	assert_false(tw_fresh_is(&x->fresh, 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME));
	/* The API server answered: the re-list is under way, not 30 s away. */
	assert_true(tt_wait_until(list_held, x->c.fa, WAIT_MS));

	fa_hold_list(x->c.fa, FA_CTR, false);
	wait_ctr_fresh(x, true);
	r = answer(x, "rt-keep");
	assert_true(r.allowed);
	assert_true(r.deprecated);
	assert_int_equal(gets(x), 2); /* from the cache again */
	tp_buf m = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&m), 0);
	assert_non_null(strstr(m.data, "trainer_webhook_lookups_total{kind=\"ClusterTrainingRuntime\","
				       "source=\"api\",result=\"not_found\"} 1\n"));
	assert_non_null(strstr(m.data, "trainer_webhook_lookups_total{kind=\"ClusterTrainingRuntime\","
				       "source=\"api\",result=\"found\"} 1\n"));
	assert_non_null(strstr(m.data, "trainer_webhook_watch_relists_total{kind=\""
				       "ClusterTrainingRuntime\",reason=\"watch_failed\"} 1\n"));
	assert_non_null(strstr(m.data, "trainer_webhook_watch_stale{kind=\"ClusterTrainingRuntime\"} "
				       "0\n"));
	tp_buf_free(&m);
}

/* ------------------------------------------------------------ cache-only */

/* Item GETs of every resource so far. */
static unsigned all_gets(fx *x)
{
	unsigned n = 0;
	for (int r = 0; r < FA_RESOURCES; r++) {
		fa_stats st;
		fa_get_stats(x->c.fa, r, &st);
		n += st.gets;
	}
	return n;
}

/* One lookup through a resolver, cache-only or not, then done: its status,
 * and in *needs_api the resolver's mark. In the arena, as a decision looks
 * up (what a GET brings lives there). */
static int look(fx *x, bool cache_only, tp_kind k, const char *ns, const char *name,
		bool *needs_api)
{
	tw_resolver rs;
	tw_resolver_init(&rs, &x->cluster, x->c.store, x->c.arena, tw_mono_ms() + 5000);
	rs.cache_only = cache_only;
	const cJSON *obj = NULL;
	char why[256] = "";
	tp_arena *prev = tp_arena_enter(x->c.arena);
	int rc = rs.lookup.get(rs.lookup.ctx, k, ns, name, &obj, why, sizeof(why));
	tp_arena_leave(prev);
	assert_true(rc == TP_OK ? obj != NULL : obj == NULL);
	if (rc == TP_EUNAVAILABLE)
		assert_true(why[0]); /* a reason, as every unavailable answer has */
	*needs_api = rs.needs_api;
	tw_resolver_done(&rs);
	tp_arena_reset(x->c.arena);
	return rc;
}

/* Only the API server can answer: cache-only asks nothing and marks the
 * decision; the ordinary resolver then finds the object by one GET. */
static void only_the_api_answers(fx *x, tp_kind k, const char *ns, const char *name)
{
	unsigned before = all_gets(x);
	bool mark = false;
	assert_int_equal(look(x, true, k, ns, name, &mark), TP_EUNAVAILABLE);
	assert_true(mark);
	assert_int_equal(all_gets(x), before);
	assert_int_equal(look(x, false, k, ns, name, &mark), TP_OK);
	assert_false(mark);
	assert_int_equal(all_gets(x), before + 1);
}

static double cache_found(void)
{
	tp_buf m = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&m), 0);
	double v = sp_metric(m.data, "trainer_webhook_lookups_total{kind=\"ClusterTrainingRuntime\","
				     "source=\"cache\",result=\"found\"}");
	tp_buf_free(&m);
	return v;
}

/* The server's first try at a small request, on its connection thread
 * (resolver.h, cache-only), never waits on the API server: a miss in a
 * fresh cache ("late": its event has not arrived), a stale kind, and the
 * kinds the store does not keep (a TrainJob, a Namespace's Pod Security
 * labels) answer TP_EUNAVAILABLE and mark the decision, which the server
 * then makes again by a resolver that asks; a fresh hit is answered, and
 * without an API server a miss is "not found". Lookups count in /metrics
 * once: a kept decision's when it is done, a marked one's never. */
static void cache_only_never_asks(void **state)
{
	fx *x = *state;
	char *cached = runtime("rt-cached", ""), *late = runtime("rt-late", ""), items[4096];
	snprintf(items, sizeof(items), "[%s,%s]", cached, late);
	fa_set_objects(x->c.fa, FA_CTR, items, "5");
	fa_set_objects(x->c.fa, FA_NS, "[{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
				     "\"metadata\":{\"name\":\"team-a\"}}]", "5");
	fa_set_objects(x->c.fa, FA_TJ, "[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
				     "\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"tj\","
				     "\"namespace\":\"team-a\"},\"spec\":{}}]", "5");
	assert_int_equal(tp_store_put(x->c.store, cJSON_Parse(cached)), TP_OK);
	tw_fresh_set(&x->fresh, 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME, true);

	bool mark = true;
	assert_int_equal(look(x, true, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "rt-cached", &mark),
			 TP_OK);
	assert_false(mark);
	assert_int_equal(all_gets(x), 0);
	assert_int_equal(cache_found(), 1);
	only_the_api_answers(x, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "rt-late");
	only_the_api_answers(x, TP_KIND_TRAINJOB, "team-a", "tj");
	only_the_api_answers(x, TP_KIND_NAMESPACE, NULL, "team-a");
	tw_fresh_set(&x->fresh, 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME, false);
	only_the_api_answers(x, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "rt-cached");
	tw_fresh_set(&x->fresh, 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME, true);

	/* A hit, then a lookup only the API server answers: thrown away, so
	 * neither counts; the hit of a kept decision counted once (above). */
	tw_resolver rs;
	const cJSON *obj;
	tw_resolver_init(&rs, &x->cluster, x->c.store, x->c.arena, 0);
	rs.cache_only = true;
	assert_int_equal(rs.lookup.get(rs.lookup.ctx, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL,
				       "rt-cached", &obj, NULL, 0), TP_OK);
	assert_int_equal(rs.lookup.get(rs.lookup.ctx, TP_KIND_NAMESPACE, NULL, "team-a", &obj,
				       NULL, 0), TP_EUNAVAILABLE);
	tw_resolver_done(&rs);
	assert_int_equal(cache_found(), 1);

	x->cluster = (tw_cluster){ 0 }; /* offline: the store is the whole truth */
	assert_int_equal(look(x, true, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "rt-late", &mark),
			 TP_ENOTFOUND);
	assert_false(mark);
	free(cached);
	free(late);
}

/* ------------------------------------------------------------ the binary */

typedef struct bfx {
	fa_server *fa;
	char dir[128];
	char url[64];
	sp_server srv;
} bfx;

static int bsetup(void **state)
{
	bfx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(fa_start(&x->fa), 0);
	assert_int_equal(sp_mkdtemp(x->dir, sizeof(x->dir), "tw-fresh"), 0);
	assert_int_equal(sp_certs(x->dir, false), 0);
	snprintf(x->url, sizeof(x->url), "http://127.0.0.1:%u", fa_port(x->fa));
	*state = x;
	return 0;
}

static int bteardown(void **state)
{
	bfx *x = *state;
	int rc = sp_stop_checked(&x->srv);
	fa_stop(x->fa);
	sp_rmtree(x->dir);
	free(x);
	return rc ? -1 : 0;
}

static said post_review(bfx *x, const char *runtime_name)
{
	char *body = review(runtime_name);
	sp_resp r;
	assert_int_equal(sp_https(NULL, &x->srv, "POST", V_TJ "?timeout=5s", "application/json",
				  body, strlen(body), 0, &r), 0);
	assert_int_equal(r.status, 200);
	said s = said_of(r.body);
	sp_resp_free(&r);
	free(body);
	return s;
}

static long readyz(bfx *x)
{
	sp_resp r;
	sp_https(NULL, &x->srv, "GET", "/readyz", NULL, NULL, 0, SP_FRESH, &r);
	long code = r.status;
	sp_resp_free(&r);
	return code;
}

static bool is_ready(void *arg)
{
	return readyz(arg) == 200;
}

static double metric(bfx *x, const char *series)
{
	sp_resp m;
	assert_int_equal(sp_http_get(x->srv.metrics_port, "/metrics", &m), 0);
	double v = sp_metric(m.body, series);
	sp_resp_free(&m);
	return v;
}

static bool relisted(void *arg)
{
	return metric(arg, "trainer_webhook_watch_stale{kind=\"ClusterTrainingRuntime\"}") == 0;
}

/* How long the API server stays down: 3 s, long enough for the watch's
 * backoff to grow as in a real restart; TW_TEST_OUTAGE_MS sets another
 * (to measure, not needed to pass). */
static int outage_ms(void)
{
	const char *e = getenv("TW_TEST_OUTAGE_MS");
	return e && atoi(e) > 0 ? atoi(e) : 3000;
}

/* The sequence on the real binary: the API server restarts; while
 * it is down rt-del is deleted and rt-keep labelled deprecated; it comes
 * back with the webhook's resourceVersion too old. Every TrainJob for rt-del
 * from the first one on is denied (the seconds it was still admitted are
 * printed, and must be none), rt-keep warns, /readyz stays 200 throughout,
 * and the re-list is counted with its cause and no false log line. */
static void restart_has_no_stale_answers(void **state)
{
	bfx *x = *state;
	cluster_before(x->fa);
	const char *extra[] = { "--kube-server", x->url, "--profile", "kubeflow", "--threads",
				"2", "--shutdown-grace", "2", NULL };
	assert_int_equal(sp_start(&x->srv, x->dir, x->dir, extra), 0);
	assert_true(tt_wait_until(is_ready, x, WAIT_MS * sp_slow()));
	said before = post_review(x, "rt-del");

	fa_set_down(x->fa, true);
	tt_sleep_ms(outage_ms() / 2);
	said down = post_review(x, "rt-keep");
	long ready_down = readyz(x);
	changed_while_down(x->fa);
	tt_sleep_ms(outage_ms() - outage_ms() / 2);
	fa_set_down(x->fa, false);

	/* Poll rt-del until it is denied: the time of the last allow is how long
	 * the webhook answered from what the API server no longer has. */
	long long up = tt_mono_ms(), last_allowed = -1, end = up + 45000;
	unsigned answers = 0, allowed = 0;
	said first = { 0 }, r;
	do {
		r = post_review(x, "rt-del");
		if (!answers++)
			first = r;
		if (r.allowed) {
			allowed++;
			last_allowed = tt_mono_ms() - up;
			tt_sleep_ms(100);
		}
	} while (r.allowed && tt_mono_ms() < end);
	print_message("after the restart: %u of %u TrainJobs for the deleted runtime admitted, "
		      "stale answers for %.1f s\n", allowed, answers,
		      last_allowed < 0 ? 0.0 : (double)last_allowed / 1000.0);
	said keep = post_review(x, "rt-keep");
	long ready_up = readyz(x);

	assert_true(before.allowed);
	assert_false(down.allowed); /* not from the stale cache: an error to retry */
	assert_int_equal(down.code, 500);
	assert_int_equal(ready_down, 200);
	assert_int_equal(allowed, 0);
	assert_false(first.allowed);
	assert_non_null(strstr(first.message, NOT_FOUND_TEXT));
	assert_true(keep.allowed);
	assert_true(keep.deprecated);
	assert_int_equal(ready_up, 200);
	assert_true(tt_wait_until(relisted, x, WAIT_MS));
	print_message("re-listed within %.1f s of the restart\n",
		      (double)(tt_mono_ms() - up) / 1000.0);
	assert_true(metric(x, "trainer_webhook_watch_relists_total{kind=\"ClusterTrainingRuntime\","
			      "reason=\"watch_failed\"}") == 1);
	assert_int_equal(sp_log_count(&x->srv, "bytes"), 0);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(stale_kind_reads_through, setup, teardown),
		cmocka_unit_test_setup_teardown(cache_only_never_asks, setup, teardown),
		cmocka_unit_test_setup_teardown(restart_has_no_stale_answers, bsetup, bteardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}

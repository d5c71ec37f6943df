/*
 * watchfx.c — the fixture of the watch's tests (see watchfx.h).
 */
#include "tests/support/watchfx.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/testutil.h"
#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

const tw_watch_kind wf_kinds[WF_NKINDS] = {
	{ "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", "ClusterTrainingRuntime",
	  .cluster_scoped = true },
	{ "trainer.kubeflow.org", "v1alpha1", "trainingruntimes", "TrainingRuntime" },
	{ "trainer.kubeflow.org", "v1alpha1", "trainjobs", "TrainJob" },
	{ "jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet" },
};
const tp_kind wf_tp[WF_NKINDS] = { TP_KIND_CLUSTER_TRAINING_RUNTIME, TP_KIND_TRAINING_RUNTIME,
				   TP_KIND_TRAINJOB, TP_KIND_JOBSET };

void wf_write_file(const char *path, const char *text)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *fp = fopen(tmp, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(rename(tmp, path), 0); /* the kubelet swaps files too */
}

char *wf_obj(const char *kind, const char *ns, const char *name, const char *rv,
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

void wf_push_event(fa_server *fa, int r, const char *type, char *object)
{
	char *e = NULL;
	assert_true(asprintf(&e, "{\"type\":\"%s\",\"object\":%s}", type, object) > 0);
	free(object);
	fa_push(fa, r, e);
	free(e);
}

void wf_put_object(fa_server *fa, int r, char *json)
{
	fa_put_object(fa, r, json);
	free(json);
}

int wf_setup(void **state)
{
	wf *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	snprintf(x->dir, sizeof(x->dir), "/tmp/tw-watch-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->token_path, sizeof(x->token_path), "%s/token", x->dir);
	wf_write_file(x->token_path, "token-1\n");
	assert_int_equal(fa_start(&x->fa), 0);
	fa_set_token(x->fa, "token-1");
	char url[64], err[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(x->fa));
	assert_int_equal(tw_kube_config_explicit(&x->kc, url, x->token_path, NULL, err,
						 sizeof(err)), 0);
	assert_int_equal(tp_store_new(&x->store), 0);
	tw_metrics_reset();
	snprintf(x->log_path, sizeof(x->log_path), "%s/watch.log", x->dir);
	x->log_fd = open(x->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	assert_true(x->log_fd >= 0);
	tw_log_set_fd(x->log_fd);
	tw_log_set_level(TW_LOG_INFO);
	*state = x;
	return 0;
}

int wf_teardown(void **state)
{
	wf *x = *state;
	tw_watch_stop(x->w);
	fa_stop(x->fa);
	tp_store_free(x->store);
	tw_kube_config_free(&x->kc);
	tw_log_set_fd(2);
	close(x->log_fd);
	unlink(x->log_path);
	unlink(x->token_path);
	rmdir(x->dir);
	free(x);
	return 0;
}

void wf_start_backoff(wf *x, unsigned backoff_min_ms, unsigned backoff_max_ms)
{
	char err[256];
	tw_watch_kind kinds[WF_NKINDS];
	for (int i = 0; i < WF_NKINDS; i++) {
		kinds[i] = wf_kinds[i];
		x->sinks[i] = (tw_store_sink){ x->store, wf_tp[i] };
		kinds[i].sink = tw_watch_store_sink(&x->sinks[i]);
		kinds[i].fresh_bit = 1u << wf_tp[i];
	}
	tw_watch_opts o = { .kube = &x->kc, .kinds = kinds, .nkinds = WF_NKINDS,
			    .backoff_min_ms = backoff_min_ms, .backoff_max_ms = backoff_max_ms,
			    .metrics = true, .fresh = &x->fresh };
	assert_int_equal(tw_watch_start(&o, &x->w, err, sizeof(err)), 0);
}

void wf_start(wf *x)
{
	wf_start_backoff(x, 50, 400);
}

char *wf_log(wf *x)
{
	char *t = tt_read_file(x->log_path, NULL);
	assert_non_null(t);
	return t;
}

bool wf_has_metric(const char *line)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&b), 0);
	char want[512];
	snprintf(want, sizeof(want), "\n%s\n", line);
	bool ok = strstr(b.data, want) != NULL;
	tp_buf_free(&b);
	return ok;
}

bool wf_synced(void *x)
{
	return tw_watch_synced(((wf *)x)->w);
}

void wf_wait_watching(wf *x)
{
	assert_true(tt_wait_until(wf_synced, x, WF_WAIT_MS));
	for (int r = 0; r < WF_NKINDS; r++)
		wf_wait_watch_number(x, r, 1);
}

struct has {
	wf *x;
	tp_kind k;
	const char *ns, *name;
	const char *field, *value; /* spec.<field> == value, when field */
	bool want;
};

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

void wf_expect(wf *x, tp_kind k, const char *ns, const char *name, bool want)
{
	struct has h = { x, k, ns, name, NULL, NULL, want };
	if (!tt_wait_until(has_cond, &h, WF_WAIT_MS))
		fail_msg("%s %s/%s: want %s in the store", tp_kind_name(k), ns ? ns : "", name,
			 want ? "present" : "absent");
}

void wf_expect_field(wf *x, tp_kind k, const char *ns, const char *name, const char *field,
		     const char *value)
{
	struct has h = { x, k, ns, name, field, value, true };
	if (!tt_wait_until(has_cond, &h, WF_WAIT_MS))
		fail_msg("%s %s/%s: want spec.%s %s in the store", tp_kind_name(k), ns ? ns : "",
			 name, field, value);
}

struct rv_is {
	wf *x;
	int i;
	const char *rv;
};

static bool rv_is_cond(void *arg)
{
	const struct rv_is *r = arg;
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(r->x->w, s);
	return !strcmp(s[r->i].rv, r->rv);
}

void wf_wait_rv(wf *x, int i, const char *rv)
{
	struct rv_is r = { x, i, rv };
	if (!tt_wait_until(rv_is_cond, &r, WF_WAIT_MS))
		fail_msg("watched kind %d never reported resourceVersion %s", i, rv);
}

struct watches {
	wf *x;
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

void wf_wait_watch_number(wf *x, int r, unsigned n)
{
	struct watches w = { x, r, n };
	if (!tt_wait_until(watches_cond, &w, WF_WAIT_MS))
		fail_msg("watch %u of resource %d never opened", n, r);
}

/*
 * store_rss.c — `make bench`'s memory check of `serve --kube` against a big
 * cluster: the fake API server (tests/support/fakeapi.c) holds 500 runtimes
 * (250 ClusterTrainingRuntimes, 250 TrainingRuntimes over 25 namespaces,
 * each a copy of deploy/runtimes/torch-distributed.yaml), 10,000 TrainJobs
 * and 20,000 JobSets with a status. The server syncs, answers a mix of
 * requests (TrainJob validations; JobSet mutations, whose TrainJob it GETs),
 * and its VmRSS and VmHWM are read; then 10,000 more TrainJobs and 10,000
 * more JobSets appear and the same is read again.
 *
 *   store_rss path/to/trainer-webhook
 *
 * Prints the figures; exit 1 when the high-water mark after sync passes
 * 32 MiB or a request fails (the Deployment's memory request and limit are
 * set from this figure), 2 on bad usage.
 */
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define RUNTIMES 500
#define NAMESPACES 25
#define TRAINJOBS 10000
#define JOBSETS 20000
#define LIMIT_KIB (32 * 1024)

/* VmRSS and VmHWM of pid, in KiB. */
static void memory_of(pid_t pid, long *rss, long *hwm)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	*rss = *hwm = -1;
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "VmRSS: %ld", rss);
		sscanf(line, "VmHWM: %ld", hwm);
	}
	if (f)
		fclose(f);
}

/* The runtime template, as JSON text with NAME and NS to fill in. */
static cJSON *template_runtime(void)
{
	char *text = tt_read_file("deploy/runtimes/torch-distributed.yaml", NULL);
	if (!text) {
		fprintf(stderr, "store_rss: run from the repository's top folder\n");
		exit(2);
	}
	tp_docs *docs = NULL;
	tp_load_error err;
	if (tp_load(text, strlen(text), NULL, &docs, &err) || !tp_docs_count(docs)) {
		fprintf(stderr, "store_rss: deploy/runtimes/torch-distributed.yaml: %s\n", err.msg);
		exit(2);
	}
	cJSON *rt = tp_docs_take(docs, 0);
	tp_docs_free(docs);
	free(text);
	return rt;
}

static void set_meta(cJSON *obj, const char *ns, const char *name, int rv)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(m, "name");
	cJSON_DeleteItemFromObjectCaseSensitive(m, "namespace");
	cJSON_DeleteItemFromObjectCaseSensitive(m, "resourceVersion");
	cJSON_AddStringToObject(m, "name", name);
	if (ns)
		cJSON_AddStringToObject(m, "namespace", ns);
	char v[16];
	snprintf(v, sizeof(v), "%d", rv);
	cJSON_AddStringToObject(m, "resourceVersion", v);
	/* What a real API server adds: the bulk no rule reads. */
	cJSON *mf = cJSON_AddArrayToObject(m, "managedFields");
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "manager", "kubectl-client-side-apply");
	cJSON_AddStringToObject(e, "operation", "Update");
	cJSON_AddItemToObject(e, "fieldsV1", cJSON_Duplicate(cJSON_GetObjectItem(obj, "spec"), 1));
	cJSON_AddItemToArray(mf, e);
}

static void load_runtimes(fa_server *fa)
{
	cJSON *tmpl = template_runtime();
	cJSON *ctrs = cJSON_CreateArray(), *trs = cJSON_CreateArray();
	for (int i = 0; i < RUNTIMES; i++) {
		cJSON *o = cJSON_Duplicate(tmpl, 1);
		char name[64], ns[32];
		snprintf(name, sizeof(name), "torch-%03d", i);
		snprintf(ns, sizeof(ns), "team-%02d", i % NAMESPACES);
		bool cluster = i % 2 == 0;
		cJSON_ReplaceItemInObject(o, "kind", cJSON_CreateString(cluster ? "ClusterTrainingRuntime"
										 : "TrainingRuntime"));
		set_meta(o, cluster ? NULL : ns, name, 10 + i);
		cJSON_AddItemToArray(cluster ? ctrs : trs, o);
	}
	char *a = cJSON_PrintUnformatted(ctrs), *b = cJSON_PrintUnformatted(trs);
	fa_set_objects(fa, FA_CTR, a, "900");
	fa_set_objects(fa, FA_TR, b, "900");
	printf("  runtimes: %d, %zu bytes of JSON each on average\n", RUNTIMES,
	       (strlen(a) + strlen(b)) / RUNTIMES);
	free(a);
	free(b);
	cJSON_Delete(ctrs);
	cJSON_Delete(trs);
	cJSON_Delete(tmpl);
}

static char *trainjob(int i)
{
	char *s = NULL;
	if (asprintf(&s,
		     "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		     "\"metadata\":{\"name\":\"job-%d\",\"namespace\":\"team-%02d\",\"uid\":\"uid-%d\","
		     "\"labels\":{\"team\":\"ml\"}},\"spec\":{\"runtimeRef\":{\"name\":\"torch-%03d\","
		     "\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"},"
		     "\"trainer\":{\"image\":\"docker.io/team/train:v3\",\"numNodes\":2,"
		     "\"command\":[\"torchrun\",\"train.py\"],\"resourcesPerNode\":{\"requests\":"
		     "{\"cpu\":\"4\",\"memory\":\"16Gi\"}}}},\"status\":{\"conditions\":[{\"type\":"
		     "\"Created\",\"status\":\"True\",\"reason\":\"JobSetCreated\"}]}}",
		     i, i % NAMESPACES, i, (i % (RUNTIMES / 2)) * 2) < 0)
		abort();
	return s;
}

static char *jobset(int i)
{
	char *s = NULL;
	if (asprintf(&s,
		     "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{"
		     "\"name\":\"job-%d\",\"namespace\":\"team-%02d\",\"ownerReferences\":[{"
		     "\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"name\":"
		     "\"job-%d\",\"uid\":\"uid-%d\",\"controller\":true}]},\"spec\":{\"replicatedJobs\":"
		     "[{\"name\":\"node\",\"replicas\":1,\"template\":{\"spec\":{\"parallelism\":2,"
		     "\"completions\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\","
		     "\"image\":\"docker.io/team/train:v3\",\"env\":[{\"name\":\"PET_NNODES\",\"value\":"
		     "\"2\"}]}]}}}}}]},\"status\":{\"replicatedJobsStatus\":[{\"name\":\"node\","
		     "\"active\":1,\"ready\":1,\"succeeded\":0,\"failed\":0}]}}",
		     i, i % NAMESPACES, i % TRAINJOBS, i % TRAINJOBS) < 0)
		abort();
	return s;
}

static void load_many(fa_server *fa, int r, int from, int n, char *(*make)(int))
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_addc(&b, '[');
	for (int i = from; i < from + n; i++) {
		char *o = make(i);
		tp_buf_adds(&b, i > from ? "," : "");
		tp_buf_adds(&b, o);
		free(o);
	}
	tp_buf_addc(&b, ']');
	fa_set_objects(fa, r, b.data, "950");
	tp_buf_free(&b);
}

/* n requests of a mix: TrainJob validations, JobSet mutations (the JobSet
 * route GETs the TrainJob). Returns the failures. */
static int requests(sp_server *s, int n, int from)
{
	CURL *h = curl_easy_init();
	int failed = 0;
	for (int i = 0; i < n; i++) {
		char *obj = i % 2 ? jobset(from + i) : trainjob(from + i);
		const char *kind = i % 2 ? "\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\","
					   "\"kind\":\"JobSet\""
					 : "\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\","
					   "\"kind\":\"TrainJob\"";
		char *body = NULL;
		if (asprintf(&body,
			     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			     "\"request\":{\"uid\":\"u-%d\",\"kind\":{%s},\"operation\":\"CREATE\","
			     "\"object\":%s,\"oldObject\":null,\"dryRun\":false}}",
			     i, kind, obj) < 0)
			abort();
		const char *path = i % 2 ? "/mutate-jobset-x-k8s-io-v1alpha2-jobset?timeout=5s"
					 : "/validate-trainer-kubeflow-org-v1alpha1-trainjob?timeout=5s";
		sp_resp r;
		int rc = sp_https(h, s, "POST", path, "application/json", body, strlen(body), 0, &r);
		if (rc || r.status != 200 || !strstr(r.body, "\"uid\":\"u-")) {
			if (failed++ < 3)
				fprintf(stderr, "store_rss: %s: %ld %s %.200s\n", path, r.status,
					r.curl_error, r.body);
		}
		sp_resp_free(&r);
		free(body);
		free(obj);
	}
	curl_easy_cleanup(h);
	return failed;
}

static bool ready(sp_server *s)
{
	long long end = tt_mono_ms() + 60000;
	while (tt_mono_ms() < end) {
		sp_resp r;
		sp_https(NULL, s, "GET", "/readyz", NULL, NULL, 0, 0, &r);
		bool ok = r.status == 200;
		sp_resp_free(&r);
		if (ok)
			return true;
		usleep(50000);
	}
	return false;
}

int main(int argc, char **argv)
{
	if (argc != 2 || access(argv[1], X_OK)) {
		fprintf(stderr, "usage: store_rss path/to/trainer-webhook\n");
		return 2;
	}
	setenv("TW_BIN", argv[1], 1);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	fa_server *fa;
	char dir[128];
	if (fa_start(&fa) || sp_mkdtemp(dir, sizeof(dir), "tw-store-rss") || sp_certs(dir, false)) {
		fprintf(stderr, "store_rss: cannot start the fake API server or make certificates\n");
		return 1;
	}
	printf("store_rss: serve --kube against %d runtimes, %d TrainJobs, %d JobSets\n", RUNTIMES,
	       TRAINJOBS, JOBSETS);
	load_runtimes(fa);
	load_many(fa, FA_TJ, 0, TRAINJOBS, trainjob);
	load_many(fa, FA_JS, 0, JOBSETS, jobset);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(fa));
	const char *extra[] = { "--kube-server", url, "--threads", "2", "--shutdown-grace", "1",
				"--log-level", "warn", NULL };
	sp_server s;
	int code = 1;
	long long t0 = tt_mono_ms();
	if (sp_start(&s, dir, dir, extra) || !ready(&s)) {
		fprintf(stderr, "store_rss: the server did not become ready; see %s\n", s.log_path);
		goto out;
	}
	long long sync_ms = tt_mono_ms() - t0;
	int failed = requests(&s, 400, 0);
	long rss1, hwm1, rss2, hwm2;
	memory_of(s.pid, &rss1, &hwm1);
	/* The cluster grows: no list of TrainJobs or JobSets is ever made. */
	load_many(fa, FA_TJ, 0, 2 * TRAINJOBS, trainjob);
	load_many(fa, FA_JS, 0, JOBSETS + TRAINJOBS, jobset);
	failed += requests(&s, 400, TRAINJOBS);
	memory_of(s.pid, &rss2, &hwm2);
	fa_stats tj, js, ctr;
	fa_get_stats(fa, FA_TJ, &tj);
	fa_get_stats(fa, FA_JS, &js);
	fa_get_stats(fa, FA_CTR, &ctr);
	printf("  ready after %lld ms; 800 requests, %d failed\n", sync_ms, failed);
	printf("  API calls: runtimes listed %u times; TrainJobs: %u lists, %u GETs; JobSets: "
	       "%u lists, %u GETs\n", ctr.lists, tj.lists, tj.gets, js.lists, js.gets);
	printf("  after sync:              VmRSS %.1f MiB, VmHWM %.1f MiB (target <= 32 MiB)\n",
	       rss1 / 1024.0, hwm1 / 1024.0);
	printf("  +10000 TrainJobs/JobSets: VmRSS %.1f MiB, VmHWM %.1f MiB: %+.1f bytes per "
	       "TrainJob\n", rss2 / 1024.0, hwm2 / 1024.0, (rss2 - rss1) * 1024.0 / TRAINJOBS);
	code = failed || hwm1 > LIMIT_KIB || tj.lists || js.lists ? 1 : 0;
	if (hwm1 > LIMIT_KIB)
		fprintf(stderr, "store_rss: FAILED: VmHWM %.1f MiB is over 32 MiB\n", hwm1 / 1024.0);
out:
	sp_stop(&s);
	fa_stop(fa);
	sp_rmtree(dir);
	curl_global_cleanup();
	return code;
}

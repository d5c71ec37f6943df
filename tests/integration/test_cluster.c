/*
 * test_cluster.c — the server's view of a cluster, in process, against the
 * fake API server (tests/support/fakeapi.c): lookups a request makes (the
 * cache, then GET within its deadline; what is an error answer and what a
 * verdict), and the managed certificates (Secret, CA bundle, conflicts,
 * tampering, renewal). Every wait is a bounded poll.
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
#include <time.h>
#include <unistd.h>

#include "certs/certs.h"
#include "tests/support/apiclient.h"
#include "tests/support/fakeapi.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/cluster/certmgr.h"
#include "webhook/core/clock.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/metrics/metrics.h"
#include "webhook/cluster/resolver.h"
#include "webhook/server/tls.h"
#include "webhook/admission/admission.h"

#define WAIT_MS 10000
#define NS "tw-system"

typedef tt_apiclient fx;

static int setup(void **state)
{
	return tt_apiclient_setup(state);
}

static int teardown(void **state)
{
	return tt_apiclient_teardown(state);
}

/* ------------------------------------------------------------ lookups */

#define RUNTIME_JSON(name)                                                                \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\"," \
	"\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"mlPolicy\":{\"torch\":{}},"           \
	"\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{"         \
	"\"metadata\":{\"labels\":{\"trainer.kubeflow.org/trainjob-ancestor-step\":"            \
	"\"trainer\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\","   \
	"\"image\":\"img\"}]}}}}}]}}}}"

#define TRAINJOB_JSON(name, runtime)                                                       \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":" \
	"{\"name\":\"" name "\",\"namespace\":\"team-a\",\"uid\":\"tj-uid\"},\"spec\":{"          \
	"\"runtimeRef\":{\"name\":\"" runtime "\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":" \
	"\"ClusterTrainingRuntime\"},\"trainer\":{\"numNodes\":2}}}"

static char *review(const char *group, const char *version, const char *kind, const char *obj)
{
	char *s = NULL;
	assert_true(asprintf(&s,
			     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			     "\"request\":{\"uid\":\"u-1\",\"kind\":{\"group\":\"%s\",\"version\":"
			     "\"%s\",\"kind\":\"%s\"},\"operation\":\"CREATE\",\"namespace\":"
			     "\"team-a\",\"object\":%s,\"oldObject\":null,\"dryRun\":false}}",
			     group, version, kind, obj) > 0);
	return s;
}

static const tp_crds *answer_crds; /* the CRDs the answers check with (NULL: none) */

/* One admission answer as the server gives it: cache (the store, which
 * keeps the runtimes) then the fake API server, within deadline_ms. */
static cJSON *answer(fx *x, const char *path, const char *body, long deadline_ms)
{
	tw_cluster cl = { .api = x->api,
			  .cached = (1u << TP_KIND_CLUSTER_TRAINING_RUNTIME) |
				    (1u << TP_KIND_TRAINING_RUNTIME) };
	tw_config cfg = { .opt = { .profile = TP_PROFILE_KUBEFLOW, .now = "2026-11-23T10:00:00Z",
				   .crds = answer_crds },
			  .store = x->store };
	tw_resolver rs;
	tw_resolver_init(&rs, &cl, x->store, x->arena,
			 deadline_ms ? tw_mono_ms() + deadline_ms : 0);
	cfg.opt.lookup = &rs.lookup;
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	assert_int_equal(tw_admission_handle(&cfg, tw_route_find(path), body, strlen(body),
					     x->arena, &out, &oc), TP_OK);
	tw_resolver_done(&rs);
	assert_int_equal(oc.http_status, 200);
	cJSON *a = tt_json(out.data);
	tp_buf_free(&out);
	tp_arena_reset(x->arena);
	return a;
}

#define V_TRAINJOB "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define M_JOBSET "/mutate-jobset-x-k8s-io-v1alpha2-jobset"

static void runtime_only_get_can_see_is_found(void **state)
{
	fx *x = *state;
	/* Created a moment ago: its watch event has not reached the cache. */
	fa_put_hidden(x->fa, FA_CTR, RUNTIME_JSON("fresh"));
	char *body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob",
			    TRAINJOB_JSON("tj", "fresh"));
	cJSON *a = answer(x, V_TRAINJOB, body, 5000);
	assert_true(tp_get_true(a, "response.allowed"));
	fa_stats st;
	fa_get_stats(x->fa, FA_CTR, &st);
	assert_int_equal(st.gets, 1);
	assert_string_equal(st.last_path,
			    "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/fresh");
	cJSON_Delete(a);
	/* In the cache: no GET at all. */
	cJSON *rt = cJSON_Parse(RUNTIME_JSON("cached"));
	assert_int_equal(tp_store_put(x->store, rt), TP_OK);
	char *body2 = review("trainer.kubeflow.org", "v1alpha1", "TrainJob",
			     TRAINJOB_JSON("tj", "cached"));
	a = answer(x, V_TRAINJOB, body2, 5000);
	assert_true(tp_get_true(a, "response.allowed"));
	fa_get_stats(x->fa, FA_CTR, &st);
	assert_int_equal(st.gets, 1);
	cJSON_Delete(a);
	tp_buf m = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&m), 0);
	assert_non_null(strstr(m.data, "trainer_webhook_lookups_total{kind=\"ClusterTrainingRuntime\","
				       "source=\"api\",result=\"found\"} 1"));
	assert_non_null(strstr(m.data, "trainer_webhook_lookups_total{kind=\"ClusterTrainingRuntime\","
				       "source=\"cache\",result=\"found\"} 1"));
	tp_buf_free(&m);
	free(body);
	free(body2);
}

static void not_found_is_a_verdict(void **state)
{
	fx *x = *state;
	char *body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob",
			    TRAINJOB_JSON("tj", "nowhere"));
	cJSON *a = answer(x, V_TRAINJOB, body, 5000);
	assert_false(tp_get_true(a, "response.allowed"));
	long long code;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 403);
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "spec.RuntimeRef: Invalid value: {\"name\":\"nowhere\",\"apiGroup\":"
			       "\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"}: "
			       "clustertrainingruntimes.trainer.kubeflow.org \"nowhere\" not found: "
			       "specified clusterTrainingRuntime must be created before the TrainJob "
			       "is created"));
	cJSON_Delete(a);
	free(body);
}

static void api_error_is_an_error_answer(void **state)
{
	fx *x = *state;
	fa_set_get_status(x->fa, FA_CTR, 500);
	char *body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob",
			    TRAINJOB_JSON("tj", "unknowable"));
	cJSON *a = answer(x, V_TRAINJOB, body, 5000);
	assert_false(tp_get_true(a, "response.allowed"));
	long long code;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 500);
	assert_string_equal(tp_get_str(a, "response.status.reason"), "InternalError");
	const char *msg = tp_get_str(a, "response.status.message");
	assert_non_null(strstr(msg, "spec.runtimeRef: Internal error: clustertrainingruntimes."
				    "trainer.kubeflow.org \"unknowable\" could not be looked up: GET "
				    "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/"
				    "unknowable: HTTP 500"));
	assert_non_null(strstr(msg, "the request can be retried"));
	assert_null(strstr(msg, "must be created before")); /* never the definite verdict */
	cJSON_Delete(a);
	free(body);
}

static void slow_api_ends_within_the_deadline(void **state)
{
	fx *x = *state;
	fa_set_delay(x->fa, 3000);
	char *body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob",
			    TRAINJOB_JSON("tj", "slow"));
	long long t0 = tt_mono_ms();
	cJSON *a = answer(x, V_TRAINJOB, body, 800);
	long long took = tt_mono_ms() - t0;
	fa_set_delay(x->fa, 0);
	assert_true(took < 800); /* the answer leaves before the API server's deadline */
	long long code;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 500);
	assert_non_null(strstr(tp_get_str(a, "response.status.message"), "could not be looked up"));
	cJSON_Delete(a);
	free(body);
	/* No time left at all: not even asked. */
	fa_stats before, after;
	fa_get_stats(x->fa, FA_CTR, &before);
	a = answer(x, V_TRAINJOB, body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob",
						  TRAINJOB_JSON("tj", "slow")),
		   TW_RESOLVER_RESERVE_MS / 2);
	fa_get_stats(x->fa, FA_CTR, &after);
	assert_int_equal(after.gets, before.gets);
	assert_non_null(strstr(tp_get_str(a, "response.status.message"), "no time was left"));
	cJSON_Delete(a);
	free(body);
}

static void names_that_are_paths_are_never_sent(void **state)
{
	fx *x = *state;
	char p[256];
	assert_true(tw_kube_path(p, sizeof(p), "", "v1", "secrets", "ns", "x"));
	assert_string_equal(p, "/api/v1/namespaces/ns/secrets/x");
	assert_true(tw_kube_path(p, sizeof(p), "jobset.x-k8s.io", "v1alpha2", "jobsets", NULL,
				 NULL));
	assert_string_equal(p, "/apis/jobset.x-k8s.io/v1alpha2/jobsets");
	const char *bad[] = { "../secrets", "a/b", "Upper", "", "x?watch=1", "-a", "a-" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_false(tw_kube_path(p, sizeof(p), "", "v1", "secrets", "ns", bad[i]));
	assert_false(tw_kube_path(p, sizeof(p), "", "v1", "secrets", "../kube-system", "x"));
	char *body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob",
			    TRAINJOB_JSON("tj", "..%2fsecrets"));
	cJSON *a = answer(x, V_TRAINJOB, body, 5000);
	fa_stats st;
	fa_get_stats(x->fa, FA_CTR, &st);
	assert_int_equal(st.gets, 0);
	assert_false(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
	free(body);
}

#define JOBSET_JSON(owner)                                                                 \
	"{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{"        \
	"\"name\":\"" owner "\",\"namespace\":\"team-a\",\"ownerReferences\":[{\"apiVersion\":"  \
	"\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"name\":\"" owner "\",\"uid\":" \
	"\"tj-uid\",\"controller\":true}]},\"spec\":{}}"

static void jobset_route_reads_its_trainjob_by_get(void **state)
{
	fx *x = *state;
	cJSON *rt = cJSON_Parse(RUNTIME_JSON("torch"));
	assert_int_equal(tp_store_put(x->store, rt), TP_OK);
	fa_put_object(x->fa, FA_TJ, TRAINJOB_JSON("llama", "torch"));
	char *body = review("jobset.x-k8s.io", "v1alpha2", "JobSet", JOBSET_JSON("llama"));
	cJSON *a = answer(x, M_JOBSET, body, 5000);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_string_equal(tp_get_str(a, "response.patchType"), "JSONPatch");
	fa_stats st;
	fa_get_stats(x->fa, FA_TJ, &st);
	assert_int_equal(st.gets, 1);
	assert_string_equal(st.last_path,
			    "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama");
	cJSON_Delete(a);
	free(body);
	/* The TrainJob is gone: a definite answer. */
	body = review("jobset.x-k8s.io", "v1alpha2", "JobSet", JOBSET_JSON("ghost"));
	a = answer(x, M_JOBSET, body, 5000);
	assert_false(tp_get_true(a, "response.allowed"));
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "the owning TrainJob team-a/ghost does not exist"));
	cJSON_Delete(a);
	/* The API server fails: an error answer. */
	fa_set_get_status(x->fa, FA_TJ, 503);
	a = answer(x, M_JOBSET, body, 5000);
	long long code;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 500);
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "trainjobs.trainer.kubeflow.org \"ghost\" could not be looked up"));
	cJSON_Delete(a);
	free(body);
}

/* A JobSet is built from the runtime its TrainJob started with: the
 * snapshot ConfigMap upstream's controller keeps, read by GET, not from the
 * runtime edited since; a snapshot that is not the TrainJob's stops it. */
#define SNAPSHOT_JSON(uid, yaml)                                                           \
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"              \
	"\"llama-runtime-snapshot\",\"namespace\":\"team-a\",\"ownerReferences\":[{"           \
	"\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"name\":"     \
	"\"llama\",\"uid\":\"" uid "\",\"controller\":true}]},\"data\":{\"runtime\":" yaml "}}"
#define SNAPSHOT_YAML                                                                       \
	"\"apiVersion: trainer.kubeflow.org/v1alpha1\\nkind: ClusterTrainingRuntime\\n"       \
	"metadata: {name: torch}\\nspec:\\n  mlPolicy: {torch: {}}\\n  template:\\n"        \
	"    spec:\\n      replicatedJobs:\\n      - name: node\\n        template:\\n"       \
	"          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\\n" \
	"          spec: {template: {spec: {containers: [{name: node, image: snapshot-img}]}}}\\n\""

static const char *patched_image(const cJSON *a)
{
	static char img[64];
	tp_buf b = TP_BUF_INIT(0);
	const char *p64 = tp_get_str(a, "response.patch");
	assert_non_null(p64);
	assert_int_equal(tp_base64_decode(p64, strlen(p64), &b), TP_OK);
	assert_int_equal(tp_buf_add(&b, "", 1), TP_OK);
	const char *hit = strstr(b.data, "snapshot-img") ? "snapshot-img"
			  : strstr(b.data, "\"img\"")   ? "img"
							 : "(none)";
	snprintf(img, sizeof(img), "%s", hit);
	tp_buf_free(&b);
	return img;
}

static void jobset_is_built_from_the_runtime_snapshot(void **state)
{
	fx *x = *state;
	assert_int_equal(tp_store_put(x->store, cJSON_Parse(RUNTIME_JSON("torch"))), TP_OK);
	fa_put_object(x->fa, FA_TJ, TRAINJOB_JSON("llama", "torch"));
	char *body = review("jobset.x-k8s.io", "v1alpha2", "JobSet", JOBSET_JSON("llama"));
	/* no snapshot yet: the runtime as it is */
	cJSON *a = answer(x, M_JOBSET, body, 5000);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_string_equal(patched_image(a), "img");
	cJSON_Delete(a);
	fa_stats st;
	fa_get_stats(x->fa, FA_CM, &st);
	assert_string_equal(st.last_path, "/api/v1/namespaces/team-a/configmaps/"
					  "llama-runtime-snapshot");
	/* the snapshot wins over the runtime edited since */
	fa_put_object(x->fa, FA_CM, SNAPSHOT_JSON("tj-uid", SNAPSHOT_YAML));
	a = answer(x, M_JOBSET, body, 5000);
	assert_true(tp_get_true(a, "response.allowed"));
	assert_string_equal(patched_image(a), "snapshot-img");
	cJSON_Delete(a);
	/* another TrainJob's snapshot: upstream's build stops, so does this */
	fa_put_object(x->fa, FA_CM, SNAPSHOT_JSON("other-uid", SNAPSHOT_YAML));
	a = answer(x, M_JOBSET, body, 5000);
	assert_false(tp_get_true(a, "response.allowed"));
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "unable to get runtime snapshot: invalid runtime snapshot: a snapshot "
			       "configmap exists but is owned by another object"));
	cJSON_Delete(a);
	/* the API server cannot be asked: an error answer, not a JobSet from the
	 * wrong runtime */
	fa_set_get_status(x->fa, FA_CM, 503);
	a = answer(x, M_JOBSET, body, 5000);
	long long code;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 500);
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "configmaps \"llama-runtime-snapshot\" could not be looked up"));
	cJSON_Delete(a);
	free(body);
}

/* Resuming a TrainJob (an UPDATE) whose runtime was deleted since it
 * started: validated against its snapshot, read by GET (kubeflow/trainer#3960);
 * a snapshot the API server cannot give is an error answer, one that is not
 * the TrainJob's a verdict (upstream's Internal error); a CREATE asks for none. */
static void trainjob_update_reads_its_snapshot(void **state)
{
	fx *x = *state;
	char *body = NULL;
	assert_true(asprintf(&body,
			     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			     "\"request\":{\"uid\":\"u-2\",\"kind\":{\"group\":"
			     "\"trainer.kubeflow.org\",\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},"
			     "\"operation\":\"UPDATE\",\"namespace\":\"team-a\",\"object\":%s,"
			     "\"oldObject\":%s}}",
			     TRAINJOB_JSON("llama", "torch"), TRAINJOB_JSON("llama", "torch")) > 0);
	fa_put_object(x->fa, FA_CM, SNAPSHOT_JSON("tj-uid", SNAPSHOT_YAML));
	cJSON *a = answer(x, V_TRAINJOB, body, 5000);
	assert_true(tp_get_true(a, "response.allowed"));
	cJSON_Delete(a);
	fa_stats st;
	fa_get_stats(x->fa, FA_CM, &st);
	assert_int_equal(st.gets, 1);
	/* the API server cannot give it: an error answer, not the live runtime's verdict */
	fa_set_get_status(x->fa, FA_CM, 503);
	a = answer(x, V_TRAINJOB, body, 5000);
	long long code;
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 500);
	const char *msg = tp_get_str(a, "response.status.message");
	assert_non_null(strstr(msg, "spec.RuntimeRef: Internal error: configmaps "
				    "\"llama-runtime-snapshot\" could not be looked up"));
	assert_null(strstr(msg, "must be created before"));
	cJSON_Delete(a);
	fa_set_get_status(x->fa, FA_CM, 0);
	/* another TrainJob's snapshot: upstream's Internal error, as a verdict */
	fa_put_object(x->fa, FA_CM, SNAPSHOT_JSON("other-uid", SNAPSHOT_YAML));
	a = answer(x, V_TRAINJOB, body, 5000);
	assert_false(tp_get_true(a, "response.allowed"));
	assert_true(tp_get_int(a, "response.status.code", &code));
	assert_int_equal(code, 403);
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "spec.RuntimeRef: Internal error: unable to get runtime snapshot: "
			       "invalid runtime snapshot: a snapshot configmap exists but is owned by "
			       "another object"));
	cJSON_Delete(a);
	free(body);
	/* a CREATE reads the live runtime only */
	fa_get_stats(x->fa, FA_CM, &st);
	unsigned before = st.gets;
	body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob", TRAINJOB_JSON("llama", "torch"));
	a = answer(x, V_TRAINJOB, body, 5000);
	assert_false(tp_get_true(a, "response.allowed")); /* no runtime "torch" anywhere */
	fa_get_stats(x->fa, FA_CM, &st);
	assert_int_equal(st.gets, before);
	cJSON_Delete(a);
	free(body);
}

/* ------------------------------------------------------------ certificates */

#define WEBHOOK(name) "{\"name\":\"" name "\",\"clientConfig\":{\"service\":{\"name\":\"tw\"," \
		      "\"namespace\":\"" NS "\",\"path\":\"/x\"}}}"


/* ------------------------------------------------------------ CRDs */

#define QUANTITY_JOB                                                                       \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":" \
	"{\"name\":\"q\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":{\"name\":\"torch\"}," \
	"\"trainer\":{\"resourcesPerNode\":{\"limits\":{\"memory\":\"4gi\"}}}}}"

static void kube_crds_are_the_clusters(void **state)
{
	fx *x = *state;
	TT_REQUIRE_SHARED();
	char *crd = tt_crd_json("trainer.kubeflow.org_trainjobs.yaml");
	fa_put_object(x->fa, FA_CRD, crd);
	free(crd);
	tp_crds *crds = NULL;
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	/* one of the five is installed: the others are 404s, left to the built-in checks */
	size_t added = 0;
	char why[512] = "";
	assert_int_equal(tw_kube_crds_fetch(x->api, crds, &added, why, sizeof(why)), TP_OK);
	assert_int_equal(added, 1);
	assert_true(tp_crds_has_kind(crds, "trainer.kubeflow.org", "TrainJob"));
	assert_false(tp_crds_has_kind(crds, "jobset.x-k8s.io", "JobSet"));
	answer_crds = crds;
	char *body = review("trainer.kubeflow.org", "v1alpha1", "TrainJob", QUANTITY_JOB);
	cJSON *a = answer(x, V_TRAINJOB, body, 5000);
	answer_crds = NULL;
	assert_false(tp_get_true(a, "response.allowed"));
	assert_non_null(strstr(tp_get_str(a, "response.status.message"),
			       "spec.trainer.resourcesPerNode.limits.memory: Invalid value: \"4gi\": "
			       "spec.trainer.resourcesPerNode.limits.memory in body should match"));
	cJSON_Delete(a);
	/* without the CRD the built-in layer does not know quantities' pattern */
	a = answer(x, V_TRAINJOB, body, 5000);
	const char *msg = tp_get_str(a, "response.status.message");
	assert_true(!msg || !strstr(msg, "should match"));
	cJSON_Delete(a);
	free(body);
	tp_crds_unref(crds);
	/* validate --kubeconfig: the same CRD, read by the offline command */
	char dir[] = "/tmp/tw-kc-XXXXXX", cfg[128], job[128], cmd[512];
	assert_non_null(mkdtemp(dir));
	snprintf(cfg, sizeof(cfg), "%s/kubeconfig", dir);
	snprintf(job, sizeof(job), "%s/job.json", dir);
	FILE *f = fopen(cfg, "w");
	fprintf(f, "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
		   "clusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:%u\n"
		   "users:\n- name: me\n  user:\n    token: secret-token\n"
		   "contexts:\n- name: test\n  context:\n    cluster: fake\n    user: me\n",
		fa_port(x->fa));
	fclose(f);
	f = fopen(job, "w");
	fputs(QUANTITY_JOB, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s validate --profile kubeflow --kubeconfig %s %s", tt_bin(), cfg, job);
	char *out = NULL, *err = NULL;
	assert_int_equal(tt_run(cmd, &out, &err), 1);
	assert_non_null(strstr(err, "1 CRD read from http://127.0.0.1:"));
	assert_non_null(strstr(out, "job.json:1:"));
	assert_non_null(strstr(out, "limits.memory in body should match"));
	free(out);
	free(err);
	/* a kubeconfig whose plugin entry is incomplete: said, naming the field, exit 2 */
	f = fopen(cfg, "w");
	fputs("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
	      "    server: https://example.invalid\nusers:\n- name: u\n  user:\n    exec:\n"
	      "      command: gke-gcloud-auth-plugin\ncontexts:\n- name: c\n  context:\n"
	      "    cluster: k\n    user: u\n", f);
	fclose(f);
	assert_int_equal(tt_run(cmd, NULL, &err), 2);
	assert_non_null(strstr(err, "users[u].user.exec.apiVersion: Required value: "
				    "client.authentication.k8s.io/v1"));
	free(err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	/* an API server that cannot answer: nothing added, and said, naming the CRD */
	fa_set_get_status(x->fa, FA_CRD, 500);
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	assert_int_equal(tw_kube_crds_fetch(x->api, crds, &added, why, sizeof(why)),
			 TP_EUNAVAILABLE);
	assert_int_equal(added, 0);
	assert_non_null(strstr(why, "CRD trainjobs.trainer.kubeflow.org could not be read from "));
	assert_non_null(strstr(why, "500"));
	tp_crds_unref(crds);
}

static void put_configs(fx *x)
{
	fa_put_object(x->fa, FA_VWC,
		      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
		      "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"tw-validator\"},"
		      "\"webhooks\":[" WEBHOOK("a.example.com") "," WEBHOOK("b.example.com") "]}");
	fa_put_object(x->fa, FA_MWC,
		      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
		      "\"MutatingWebhookConfiguration\",\"metadata\":{\"name\":\"tw-mutator\"},"
		      "\"webhooks\":[" WEBHOOK("c.example.com") "]}");
}

static tw_certmgr *start_mgr(fx *x, tw_tls **tls, int64_t validity)
{
	assert_int_equal(tw_tls_new(tls), 0);
	tw_certmgr_opts o = { .kube = &x->kc, .namespace_ = NS, .secret = "tw-cert",
			      .service = "tw", .validating = "tw-validator",
			      .mutating = "tw-mutator", .validity = validity, .resync_ms = 200,
			      .backoff_max_ms = 400, .serve = tw_tls_serve_pem,
			      .serve_arg = *tls };
	tw_certmgr *m = NULL;
	char err[256] = "";
	if (tw_certmgr_start(&o, &m, err, sizeof(err)))
		fail_msg("certmgr: %s", err);
	return m;
}

static bool mgr_ready(void *arg)
{
	char why[512];
	return tw_certmgr_ready(arg, why, sizeof(why));
}

/* data.<key> of the Secret, decoded (malloc'd). */
static char *secret_data(fx *x, const char *key)
{
	char *text = fa_get_object(x->fa, FA_SECRET, NS, "tw-cert");
	cJSON *sec = text ? tt_json(text) : NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(tp_get(sec, "data"), key);
	tp_buf b = TP_BUF_INIT(0);
	if (cJSON_IsString(v))
		assert_int_equal(tp_base64_decode(v->valuestring, strlen(v->valuestring), &b), 0);
	cJSON_Delete(sec);
	free(text);
	return b.data;
}

/* Every webhook of both configurations carries base64(ca.crt). */
static bool bundle_in_place(void *arg)
{
	fx *x = arg;
	char *ca = secret_data(x, "ca.crt");
	if (!ca)
		return false;
	tp_buf want = TP_BUF_INIT(0);
	tp_base64_encode(ca, strlen(ca), &want);
	bool ok = true;
	int kinds[2] = { FA_VWC, FA_MWC };
	const char *names[2] = { "tw-validator", "tw-mutator" };
	for (int i = 0; i < 2 && ok; i++) {
		char *text = fa_get_object(x->fa, kinds[i], NULL, names[i]);
		cJSON *cfg = tt_json(text);
		const cJSON *wh;
		cJSON_ArrayForEach(wh, tp_get_array(cfg, "webhooks"))
		{
			const char *cb = tp_get_str(wh, "clientConfig.caBundle");
			ok = ok && cb && !strcmp(cb, want.data);
		}
		cJSON_Delete(cfg);
		free(text);
	}
	tp_buf_free(&want);
	free(ca);
	return ok;
}

static void managed_certs_from_nothing(void **state)
{
	fx *x = *state;
	put_configs(x);
	tw_tls *tls;
	tw_certmgr *m = start_mgr(x, &tls, 0);
	char why[512];
	bool was_ready = tw_certmgr_ready(m, why, sizeof(why));
	assert_true(tt_wait_until(mgr_ready, m, WAIT_MS));
	assert_false(was_ready);
	assert_true(bundle_in_place(x));
	char *ca = secret_data(x, "ca.crt"), *key = secret_data(x, "ca.key");
	assert_int_equal(tt_count_certs(ca), 1);
	assert_non_null(strstr(key, "PRIVATE KEY"));
	char *crt = secret_data(x, "tls.crt"), *tkey = secret_data(x, "tls.key");
	const char *names[] = { "tw." NS ".svc" };
	tw_certs_check_opts o = { .cert_path = "tls.crt", .key_path = "tls.key", .ca_path = "ca",
				  .cert_pem = crt, .key_pem = tkey, .ca_pem = ca, .names = names,
				  .nnames = 1 };
	tw_certs_report rep;
	assert_int_equal(tw_certs_check(&o, &rep), TW_CERTS_OK);
	char serial[80];
	tw_tls_serial(tls, serial, sizeof(serial));
	/* The same number (GnuTLS shows the DER sign byte, OpenSSL does not). */
	const char *a = serial, *b = rep.serial;
	while (*a == '0')
		a++;
	while (*b == '0')
		b++;
	assert_string_equal(a, b); /* the Secret's pair is the one served */
	char *text = fa_get_object(x->fa, FA_SECRET, NS, "tw-cert");
	assert_non_null(strstr(text, TW_CERTMGR_CA_ADDED));
	free(text);
	tw_certmgr_stop(m);
	tw_tls_close(tls);
	free(ca);
	free(key);
	free(crt);
	free(tkey);
}

static void two_replicas_converge_on_one_ca(void **state)
{
	fx *x = *state;
	put_configs(x);
	/* An empty Secret, as deploy/base ships it; and the first writes of
	 * either replica conflict. */
	fa_put_object(x->fa, FA_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
					"{\"name\":\"tw-cert\",\"namespace\":\"" NS "\"}}");
	fa_conflict_next(x->fa, FA_SECRET, 2);
	tw_tls *t1, *t2;
	tw_certmgr *a = start_mgr(x, &t1, 0), *b = start_mgr(x, &t2, 0);
	assert_true(tt_wait_until(mgr_ready, a, WAIT_MS));
	assert_true(tt_wait_until(mgr_ready, b, WAIT_MS));
	assert_true(tt_wait_until(bundle_in_place, x, WAIT_MS));
	char *ca = secret_data(x, "ca.crt");
	assert_int_equal(tt_count_certs(ca), 1); /* never a second CA */
	char s1[80], s2[80];
	tw_tls_serial(t1, s1, sizeof(s1));
	tw_tls_serial(t2, s2, sizeof(s2));
	assert_string_equal(s1, s2); /* both serve the Secret's one pair */
	fa_stats st;
	fa_get_stats(x->fa, FA_SECRET, &st);
	assert_true(st.conflicts >= 2);
	assert_true(st.puts >= 1);
	tw_certmgr_stop(a);
	tw_certmgr_stop(b);
	tw_tls_close(t1);
	tw_tls_close(t2);
	free(ca);
}

struct put_back {
	fx *x;
	unsigned puts_before;
};

/* The validating configuration was written again since, and holds the bundle. */
static bool bundle_put_back(void *arg)
{
	struct put_back *pb = arg;
	fa_stats st;
	fa_get_stats(pb->x->fa, FA_VWC, &st);
	return st.puts > pb->puts_before && bundle_in_place(pb->x);
}

static void tampered_bundle_is_put_back(void **state)
{
	fx *x = *state;
	put_configs(x);
	tw_tls *tls;
	tw_certmgr *m = start_mgr(x, &tls, 0);
	assert_true(tt_wait_until(mgr_ready, m, WAIT_MS));
	assert_true(bundle_in_place(x));
	struct put_back pb = { x, 0 };
	fa_stats st;
	fa_get_stats(x->fa, FA_VWC, &st);
	pb.puts_before = st.puts;
	/* Someone (an older install, a cainjector) writes another bundle. */
	fa_put_object(x->fa, FA_VWC,
		      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
		      "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"tw-validator\"},"
		      "\"webhooks\":[{\"name\":\"a.example.com\",\"clientConfig\":{\"caBundle\":"
		      "\"Cg==\",\"service\":{\"name\":\"tw\",\"namespace\":\"" NS "\"}}}]}");
	/* The manager may put it back before a check here could see it gone:
	 * what proves the repair is a PUT of the configuration after the
	 * tampering, with the bundle in place again. */
	assert_true(tt_wait_until(bundle_put_back, &pb, 5000));
	tw_certmgr_stop(m);
	tw_tls_close(tls);
}

struct serial_change {
	tw_tls *tls;
	char first[80];
};

static bool serial_changed(void *arg)
{
	struct serial_change *s = arg;
	char now[80];
	tw_tls_serial(s->tls, now, sizeof(now));
	return now[0] && strcmp(now, s->first);
}

static void renewal_is_served_without_restart(void **state)
{
	fx *x = *state;
	put_configs(x);
	tw_tls *tls;
	tw_certmgr *m = start_mgr(x, &tls, 3); /* a three-second serving certificate */
	assert_true(tt_wait_until(mgr_ready, m, WAIT_MS));
	struct serial_change sc = { tls, "" };
	tw_tls_serial(tls, sc.first, sizeof(sc.first));
	char *ca = secret_data(x, "ca.crt");
	assert_true(tt_wait_until(serial_changed, &sc, WAIT_MS));
	char *ca2 = secret_data(x, "ca.crt");
	assert_string_equal(ca, ca2); /* the CA stays: the bundle needs no change */
	tp_buf m2 = TP_BUF_INIT(0);
	assert_int_equal(tw_metrics_render(&m2), 0);
	assert_true(sp_metric(m2.data, "trainer_webhook_certificate_rotations_total{what=\"serving\"}") >= 2);
	tp_buf_free(&m2);
	tw_certmgr_stop(m);
	tw_tls_close(tls);
	free(ca);
	free(ca2);
}

static void missing_configuration_holds_readiness(void **state)
{
	fx *x = *state;
	fa_put_object(x->fa, FA_VWC,
		      "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
		      "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"tw-validator\"},"
		      "\"webhooks\":[]}");
	tw_tls *tls;
	tw_certmgr *m = start_mgr(x, &tls, 0);
	char why[512] = "";
	long long end = tt_mono_ms() + WAIT_MS;
	while (!strstr(why, "does not exist") && tt_mono_ms() < end) {
		assert_false(tw_certmgr_ready(m, why, sizeof(why)));
		tt_sleep_ms(10);
	}
	assert_non_null(strstr(why, "MutatingWebhookConfiguration \"tw-mutator\" does not exist"));
	assert_true(tw_tls_not_after(tls) > 0); /* the pair itself is there */
	put_configs(x);
	assert_true(tt_wait_until(mgr_ready, m, WAIT_MS));
	tw_certmgr_stop(m);
	tw_tls_close(tls);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(runtime_only_get_can_see_is_found, setup, teardown),
		cmocka_unit_test_setup_teardown(not_found_is_a_verdict, setup, teardown),
		cmocka_unit_test_setup_teardown(kube_crds_are_the_clusters, setup, teardown),
		cmocka_unit_test_setup_teardown(api_error_is_an_error_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_api_ends_within_the_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(names_that_are_paths_are_never_sent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(jobset_route_reads_its_trainjob_by_get, setup,
						teardown),
		cmocka_unit_test_setup_teardown(jobset_is_built_from_the_runtime_snapshot, setup,
						teardown),
		cmocka_unit_test_setup_teardown(trainjob_update_reads_its_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(managed_certs_from_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(two_replicas_converge_on_one_ca, setup, teardown),
		cmocka_unit_test_setup_teardown(tampered_bundle_is_put_back, setup, teardown),
		cmocka_unit_test_setup_teardown(renewal_is_served_without_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_configuration_holds_readiness, setup,
						teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}

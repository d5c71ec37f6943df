/*
 * test_pod_parts.c — the strict profile's look at a TrainJob's Pods checks
 * each replicated job with the TrainJob's settings and the plugins' Pod
 * parts written in (pod/trainjob.c, the plugins' pod_parts phase), not the
 * JobSet the expansion builds; here the two are held together. For every
 * upstream runtime and example under ../shared/fixtures, and a Flux
 * runtime (upstream ships none there), each job as the check sees it has
 * the init containers, volumes and volume mounts of the same job in the
 * JobSet of tp_expand_with_runtime, kube-apiserver's checks find the same
 * in both, and Pod Security's restricted level says the same of both.
 * Without the parts (a plugin's pod_parts left out) the MPI and Flux jobs
 * differ and the test fails. Skipped when ../shared is absent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/admission/trainjob.h"
#include "policy/patch/patch.h"
#include "policy/pod/pod.h"
#include "tests/support/testutil.h"

/* A TrainJob "tj" of rt: two nodes, a GPU asked for without a limit (a
 * finding both sides must agree on), spec.trainer members more. */
static cJSON *trainjob_for(const cJSON *rt, const char *more)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'tj','namespace':'ns'},'spec':{'runtimeRef':{'name':'%s','kind':'%s'},"
		 "'trainer':{'numNodes':2,'resourcesPerNode':{'requests':{'nvidia.com/gpu':1}}%s}}}",
		 tp_meta_name(rt), tp_kind_name(tp_kind_of(rt)), more);
	return tt_jsq(buf);
}

static const tp_options strict = { .profile = TP_PROFILE_STRICT };

/* ------------------------------------------------------------ comparing */

static bool same(const cJSON *a, const cJSON *b)
{
	return (!a && !b) || (a && b && tp_json_equal(a, b));
}

static void same_json(const cJSON *a, const cJSON *b, const char *what, const char *job)
{
	if (same(a, b))
		return;
	char *sa = a ? cJSON_PrintUnformatted(a) : NULL, *sb = b ? cJSON_PrintUnformatted(b) : NULL;
	fail_msg("job %s: %s differ:\n  checked:  %s\n  expanded: %s", job, what, sa ? sa : "(none)",
		 sb ? sb : "(none)");
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* kube-apiserver's findings of a Job template, one key each, sorted. */
static char *findings(const cJSON *job_template, long long pods, const char *rjob,
		      const tp_pod_claims *claims)
{
	tp_podv v;
	assert_int_equal(tp__podv_init(&v), TP_OK);
	v.pods = pods;
	v.rjob = rjob;
	v.claims = claims;
	tp__pod_check_job(&v, job_template);
	assert_int_equal(v.rc, TP_OK);
	const char **keys = calloc(v.n + 1, sizeof(*keys));
	for (size_t i = 0; i < v.n; i++)
		keys[i] = tp__pod_key(&v, &v.items[i]);
	qsort(keys, v.n, sizeof(*keys), by_text);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_buf_adds(&b, ""), TP_OK);
	for (size_t i = 0; i < v.n; i++)
		assert_int_equal(tp_buf_addf(&b, "%s\n", keys[i]), TP_OK);
	free(keys);
	char *out = strdup(b.data);
	tp_buf_free(&b);
	tp__podv_free(&v);
	return out;
}

/* Pod Security's restricted verdict of a Pod template, as its text. */
static char *restricted(const cJSON *pod)
{
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	tp_buf d = TP_BUF_INIT(0);
	bool ok;
	assert_int_equal(tp__psa_evaluate(TP_PSA_RESTRICTED, -1, tp_get(pod, "metadata"),
					  tp_get(pod, "spec"), a, &d, &ok), TP_OK);
	char *out = strdup(ok ? "allowed" : d.data);
	tp_buf_free(&d);
	tp_arena_free(a);
	return out;
}

/* One job: the checked Pod template (a JobTemplateSpec) against the built
 * replicated job. True when the check wrote plugins' parts into it. */
static bool agree(const cJSON *checked, const cJSON *raw, const cJSON *built,
		  const tp_pod_claims *claims)
{
	const char *name = tp_get_str(built, "name");
	const cJSON *cpod = tp_get(checked, "spec.template.spec");
	const cJSON *bpod = tp_get(built, "template.spec.template.spec");
	same_json(tp_get(cpod, "initContainers"), tp_get(bpod, "initContainers"), "initContainers",
		  name);
	same_json(tp_get(cpod, "volumes"), tp_get(bpod, "volumes"), "volumes", name);
	const cJSON *c;
	cJSON_ArrayForEach(c, tp_get(bpod, "containers")) {
		const cJSON *mine = tp_find_named(tp_get(cpod, "containers"), "name",
						  tp_get_str(c, "name"));
		assert_non_null(mine);
		same_json(tp_get(mine, "volumeMounts"), tp_get(c, "volumeMounts"), "volumeMounts",
			  name);
	}
	long long pods = 1;
	tp_get_int(built, "template.spec.parallelism", &pods);
	char *fc = findings(checked, pods, name, claims);
	char *fb = findings(tp_get(built, "template"), pods, name, claims);
	if (strcmp(fc, fb))
		fail_msg("job %s: findings differ:\n  checked:\n%s  expanded:\n%s", name, fc, fb);
	char *pc = restricted(tp_get(checked, "spec.template"));
	char *pb = restricted(tp_get(built, "template.spec.template"));
	if (strcmp(pc, pb))
		fail_msg("job %s: Pod Security differs:\n  checked:  %s\n  expanded: %s", name, pc, pb);
	free(fc);
	free(fb);
	free(pc);
	free(pb);
	const cJSON *rpod = tp_get(raw, "template.spec.template.spec");
	return !same(tp_get(rpod, "volumes"), tp_get(cpod, "volumes")) ||
	       !same(tp_get(rpod, "initContainers"), tp_get(cpod, "initContainers"));
}

/* The check's jobs against the expansion's, for tj of rt; the number of
 * jobs the plugins wrote parts into. */
static int compare(const cJSON *rt, const cJSON *tj)
{
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *list = NULL;
	if (tp_expand_with_runtime(&strict, tj, rt, NULL, &list, res) != TP_OK) {
		tt_dump(res);
		fail_msg("%s does not expand", tp_meta_name(rt));
	}
	tp_tj_ctx ctx = { .opt = &strict, .op = TP_OP_CREATE, .job = tj, .runtime = rt, .res = res };
	assert_int_equal(tp__runtime_template(rt, NULL, &ctx.owned[0], NULL, 0), TP_OK);
	assert_int_equal(tp__runtime_template(rt, tj, &ctx.owned[1], NULL, 0), TP_OK);
	ctx.base = ctx.owned[0];
	ctx.tmpl = ctx.owned[1];
	tp_pod_checked *jobs;
	size_t n;
	assert_int_equal(tp__pod_checked_jobs(&ctx, &jobs, &n), TP_OK);
	const cJSON *spec = tp_get(cJSON_GetArrayItem(tp_get(list, "items"), 0), "spec");
	const cJSON *built = tp_get(spec, "replicatedJobs");
	assert_int_equal((size_t)cJSON_GetArraySize(built), n);
	tp_pod_claims claims;
	assert_int_equal(tp__pod_claims_init(&claims, spec), TP_OK);
	int with_parts = 0;
	for (size_t i = 0; i < n; i++) {
		const cJSON *raw = cJSON_GetArrayItem(tp_get(ctx.tmpl, "spec.replicatedJobs"), (int)i);
		const cJSON *checked = jobs[i].copy ? jobs[i].copy : tp_get(raw, "template");
		with_parts += agree(checked, raw, cJSON_GetArrayItem(built, (int)i), &claims);
	}
	tp__pod_claims_free(&claims);
	tp__pod_checked_free(jobs, n);
	cJSON_Delete(ctx.owned[0]);
	cJSON_Delete(ctx.owned[1]);
	cJSON_Delete(list);
	tp_result_free(res);
	return with_parts;
}

/* ------------------------------------------------------------ the cases */

static void upstream_runtimes(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	static const struct {
		const char *file, *more;
		int parts; /* jobs the plugins add to */
	} cases[] = {
		{ "torch_distributed.yaml", "", 0 },
		{ "data-cache/torch_distributed_with_cache.yaml", "", 0 },
		{ "deepspeed_distributed.yaml", "", 2 },
		{ "mlx_distributed.yaml", ",'env':[{'name':'E','value':'v'}]", 2 },
		{ "jax_distributed.yaml", "", 0 },
		{ "xgboost_distributed.yaml", "", 0 },
		{ "torchtune/llama3_2/llama3_2_1B.yaml", ",'command':['tune','run']", 0 },
		{ "torchtune/llama3_2/llama3_2_3B.yaml", ",'command':['tune','run']", 0 },
		{ "torchtune/qwen2_5/qwen2_5_1.5B.yaml", ",'command':['tune','run']", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "fixtures/upstream/runtimes/%s", cases[i].file);
		cJSON *rt = tt_shared_object(rel, TP_KIND_CLUSTER_TRAINING_RUNTIME);
		cJSON *tj = trainjob_for(rt, cases[i].more);
		print_message("%s\n", cases[i].file);
		assert_int_equal(compare(rt, tj), cases[i].parts);
		cJSON_Delete(tj);
		cJSON_Delete(rt);
	}
}

static void upstream_examples(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	static const struct {
		const char *file, *runtime;
		tp_kind kind;
	} cases[] = {
		{ "01-multi-node.yaml", "runtimes/torch_distributed.yaml",
		  TP_KIND_CLUSTER_TRAINING_RUNTIME },
		{ "02-runtime-patches.yaml", "runtimes/torch_distributed.yaml",
		  TP_KIND_CLUSTER_TRAINING_RUNTIME },
		{ "03-kueue-integration.yaml", "runtimes/torch_distributed.yaml",
		  TP_KIND_CLUSTER_TRAINING_RUNTIME },
		{ "04-volcano-integration.yaml", "examples/04-volcano-integration.yaml",
		  TP_KIND_CLUSTER_TRAINING_RUNTIME },
		{ "05-multi-step.yaml", "examples/05-multi-step.yaml", TP_KIND_TRAINING_RUNTIME },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "fixtures/upstream/%s", cases[i].runtime);
		cJSON *rt = tt_shared_object(rel, cases[i].kind);
		snprintf(rel, sizeof(rel), "fixtures/upstream/examples/%s", cases[i].file);
		cJSON *tj = tt_shared_object(rel, TP_KIND_TRAINJOB);
		print_message("%s\n", cases[i].file);
		assert_int_equal(compare(rt, tj), 0);
		cJSON_Delete(tj);
		cJSON_Delete(rt);
	}
}

/* Upstream's Flux runtime has no fixture here: one of the same shape, with
 * a TrainJob that empties FLUX_VIEW_IMAGE (both sides lose the image). */
static void flux(void **state)
{
	(void)state;
	cJSON *rt = tt_jsq(
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		"'metadata':{'name':'flux-runtime'},'spec':{'mlPolicy':{'numNodes':1,'flux':"
		"{'numProcPerNode':1}},'template':{'spec':{'replicatedJobs':[{'name':'node',"
		"'template':{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':"
		"'trainer'}},'spec':{'template':{'spec':{'volumes':[{'name':'data','emptyDir':{}}],"
		"'containers':[{'name':'node','image':'lammps','volumeMounts':[{'name':'data',"
		"'mountPath':'/data'},{'name':'data','mountPath':'/dev/shm'}]}]}}}}}]}}}}");
	static const char *const more[] = { "", ",'env':[{'name':'FLUX_VIEW_IMAGE','value':''}]" };
	for (int i = 0; i < 2; i++) {
		cJSON *tj = trainjob_for(rt, more[i]);
		assert_int_equal(compare(rt, tj), 1);
		cJSON_Delete(tj);
	}
	cJSON_Delete(rt);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(upstream_runtimes),
		cmocka_unit_test(upstream_examples),
		cmocka_unit_test(flux),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_expand_fixtures.c — every upstream runtime under
 * ../shared/fixtures/upstream/runtimes, and the upstream examples, expanded
 * with a TrainJob, key JobSet fields asserted. Skipped when ../shared is
 * absent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_expand.h"
#include "webhook/admission/admission.h"

/* How many expansions were also replayed on the mutating JobSet route. */
static int replayed;

static cJSON *runtime(const char *rel)
{
	return tt_shared_object(rel, TP_KIND_CLUSTER_TRAINING_RUNTIME);
}

/* A TrainJob "tj" referring to the runtime, spec members added. */
static cJSON *trainjob_for(const cJSON *rt, const char *members)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'tj','namespace':'ns','uid':'u'},'spec':{'runtimeRef':{'name':'%s'}%s}}",
		 tp_meta_name(rt), members);
	return ex_js(buf);
}

/* RFC 6902 round trip: applying diff(a, b) to a gives b. */
static void round_trip(const cJSON *a, const cJSON *b)
{
	cJSON *ops = NULL, *back = NULL;
	assert_int_equal(tp_jsonpatch_diff(a, b, &ops), TP_OK);
	assert_int_equal(tp_jsonpatch_apply(a, ops, &back), TP_OK);
	assert_true(tp_json_equal(back, b));
	assert_int_equal(cJSON_GetArraySize(ops) == 0, tp_json_equal(a, b));
	cJSON_Delete(ops);
	cJSON_Delete(back);
}

/* What JobSet's own mutating webhook sets on CREATE (admission-protocol
 * §2.2), when the API server happens to call it before ours. */
static cJSON *jobset_defaulted(const cJSON *js)
{
	cJSON *d = cJSON_Duplicate(js, 1);
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(d, "spec");
	if (!cJSON_GetObjectItemCaseSensitive(spec, "successPolicy"))
		cJSON_AddItemToObject(spec, "successPolicy", ex_js("{'operator':'All'}"));
	if (!cJSON_GetObjectItemCaseSensitive(spec, "startupPolicy"))
		cJSON_AddItemToObject(spec, "startupPolicy", ex_js("{'startupPolicyOrder':'AnyOrder'}"));
	cJSON *net = cJSON_GetObjectItemCaseSensitive(spec, "network");
	if (!net)
		net = cJSON_AddObjectToObject(spec, "network");
	if (!cJSON_GetObjectItemCaseSensitive(net, "enableDNSHostnames"))
		cJSON_AddTrueToObject(net, "enableDNSHostnames");
	if (!cJSON_GetObjectItemCaseSensitive(net, "publishNotReadyAddresses"))
		cJSON_AddTrueToObject(net, "publishNotReadyAddresses");
	cJSON *rj;
	cJSON_ArrayForEach(rj, cJSON_GetObjectItemCaseSensitive(spec, "replicatedJobs"))
	{
		cJSON *jspec = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(rj, "template"), "spec");
		if (!cJSON_GetObjectItemCaseSensitive(jspec, "completionMode"))
			cJSON_AddStringToObject(jspec, "completionMode", "Indexed");
		cJSON *pod = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(jspec, "template"), "spec");
		if (pod && !cJSON_GetObjectItemCaseSensitive(pod, "restartPolicy"))
			cJSON_AddStringToObject(pod, "restartPolicy", "OnFailure");
	}
	return d;
}

/* The JobSet route on a JobSet as upstream's controller creates it: no
 * patch, so the route never fights the controller. */
static void route_leaves_alone(const cJSON *tj, const cJSON *rt, const cJSON *js)
{
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tp_store_put(store, cJSON_Duplicate(rt, 1)), TP_OK);
	assert_int_equal(tp_store_put(store, cJSON_Duplicate(tj, 1)), TP_OK);
	tp_store_rdlock(store);
	bool resolves = tp_store_runtime_for(store, tj) != NULL;
	tp_store_unlock(store);
	if (!resolves) { /* the TrainJob names another runtime (an inline one) */
		tp_store_free(store);
		return;
	}
	tw_config cfg = { .opt = { .profile = TP_PROFILE_KUBEFLOW }, .store = store };
	for (int defaulted = 0; defaulted < 2; defaulted++) {
		cJSON *obj = defaulted ? jobset_defaulted(js) : cJSON_Duplicate(js, 1);
		cJSON *review = ex_js("{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview',"
				      "'request':{'uid':'u-js','kind':{'group':'jobset.x-k8s.io',"
				      "'version':'v1alpha2','kind':'JobSet'},'operation':'CREATE',"
				      "'oldObject':null,'dryRun':false}}");
		cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(review, "request"), "object", obj);
		char *body = cJSON_PrintUnformatted(review);
		tp_arena *arena = NULL;
		assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
		tp_buf out = TP_BUF_INIT(0);
		tw_outcome oc;
		assert_int_equal(tw_admission_handle(&cfg,
						     tw_route_find("/mutate-jobset-x-k8s-io-v1alpha2-jobset"),
						     body, strlen(body), arena, &out, &oc), TP_OK);
		cJSON *ans = tt_json(out.data);
		if (!tp_get_true(ans, "response.allowed") || tp_get(ans, "response.patch"))
			fail_msg("JobSet route on the controller's %sJobSet %s: %s",
				 defaulted ? "(JobSet-defaulted) " : "", tp_meta_name(js), out.data);
		cJSON_Delete(ans);
		tp_buf_free(&out);
		tp_arena_free(arena);
		free(body);
		cJSON_Delete(review);
	}
	tp_store_free(store);
	replayed++;
}

static cJSON *expand(const cJSON *tj, const cJSON *rt)
{
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *out = NULL;
	int rc = tp_expand_with_runtime(NULL, tj, rt, &ex_key, &out, res);
	if (rc || !tp_result_ok(res))
		tt_dump(res);
	assert_int_equal(rc, TP_OK);
	assert_true(tp_result_ok(res));
	tp_result_free(res);
	/* and again: the same bytes */
	cJSON *again = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_expand_with_runtime(NULL, tj, rt, &ex_key, &again, res), TP_OK);
	char *a = cJSON_PrintUnformatted(out), *b = cJSON_PrintUnformatted(again);
	assert_string_equal(a, b);
	free(a);
	free(b);
	cJSON_Delete(again);
	tp_result_free(res);
	/* Every expansion is also a JSON Patch test input, both ways. */
	const cJSON *js = cJSON_GetArrayItem(tp_get(out, "items"), 0);
	round_trip(rt, js);
	round_trip(js, rt);
	round_trip(tj, js);
	round_trip(tj, out);
	route_leaves_alone(tj, rt, js);
	return out;
}

/* Runs last: the replays above really happened, for most fixtures. */
static void controller_jobsets_get_no_patch(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	print_message("%d expansions replayed on the JobSet route with no patch\n", replayed);
	assert_true(replayed >= 10);
}

static void torch_distributed(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	cJSON *rt = runtime("fixtures/upstream/runtimes/torch_distributed.yaml");
	cJSON *tj = trainjob_for(rt, ",'trainer':{'numNodes':3,'resourcesPerNode':{'requests':"
				     "{'cpu':'2500m'}}}");
	cJSON *list = expand(tj, rt);
	const cJSON *js = ex_item(list, 0);
	assert_string_equal(tp_get_str(js, "metadata.namespace"), "ns");
	const cJSON *job = ex_job(list, "node");
	assert_int_equal(ex_int(job, "template.spec.parallelism"), 3);
	assert_int_equal(ex_int(job, "replicas"), 1);
	const cJSON *c = ex_container(job, "node");
	assert_string_equal(tp_get_str(c, "image"), "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime");
	assert_string_equal(ex_env(c, "PET_NNODES"), "3");
	assert_string_equal(ex_env(c, "PET_NPROC_PER_NODE"), "3");
	assert_string_equal(ex_env(c, "PET_MASTER_ADDR"), "tj-node-0-0.tj");
	assert_int_equal(cJSON_GetArraySize(tp_get(list, "items")), 1);
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

static void mpi_runtimes(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	const char *files[] = { "fixtures/upstream/runtimes/deepspeed_distributed.yaml",
				"fixtures/upstream/runtimes/mlx_distributed.yaml" };
	for (int i = 0; i < 2; i++) {
		cJSON *rt = runtime(files[i]);
		cJSON *tj = trainjob_for(rt, ",'trainer':{'numNodes':3}");
		cJSON *list = expand(tj, rt);
		/* runLauncherAsNode: two node pods and the launcher */
		assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 2);
		assert_int_equal(ex_int(ex_job(list, "launcher"), "template.spec.parallelism"), 1);
		assert_string_equal(tp_get_str(ex_kind(list, "ConfigMap"), "data.hostfile"),
				    "tj-node-0-0.tj slots=1\ntj-node-0-1.tj slots=1\n"
				    "tj-launcher-0-0.tj slots=1\n");
		assert_string_equal(tp_get_str(ex_kind(list, "Secret"), "type"), "kubernetes.io/ssh-auth");
		const cJSON *lc = ex_container(ex_job(list, "launcher"), "node");
		assert_non_null(tp_find_named(tp_get(lc, "volumeMounts"), "mountPath", "/home/mpiuser/.ssh"));
		assert_non_null(tp_find_named(tp_get(lc, "volumeMounts"), "mountPath", "/etc/mpi"));
		assert_string_equal(ex_env(lc, "OMPI_MCA_orte_set_default_slots"), "1");
		/* the node job keeps sshd */
		ex_assert_json(tp_get(ex_container(ex_job(list, "node"), "node"), "command"),
			       "['/usr/sbin/sshd']");
		/* dependsOn and successPolicy stay */
		assert_non_null(tp_get(ex_job(list, "launcher"), "dependsOn"));
		assert_string_equal(tp_get_str(ex_item(list, 0), "spec.successPolicy.operator"), "All");
		cJSON_Delete(list);
		cJSON_Delete(tj);
		cJSON_Delete(rt);
	}
}

static void jax_and_xgboost(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	cJSON *rt = runtime("fixtures/upstream/runtimes/jax_distributed.yaml");
	cJSON *tj = trainjob_for(rt, ",'trainer':{'numNodes':2}");
	cJSON *list = expand(tj, rt);
	const cJSON *c = ex_container(ex_job(list, "node"), "node");
	assert_string_equal(ex_env(c, "JAX_NUM_PROCESSES"), "2");
	assert_string_equal(ex_env(c, "JAX_COORDINATOR_ADDRESS"), "tj-node-0-0.tj:29500");
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);

	rt = runtime("fixtures/upstream/runtimes/xgboost_distributed.yaml");
	tj = trainjob_for(rt, ",'trainer':{'numNodes':2,'resourcesPerNode':{'limits':"
			      "{'nvidia.com/gpu':2}}}");
	list = expand(tj, rt);
	c = ex_container(ex_job(list, "node"), "node");
	assert_string_equal(ex_env(c, "DMLC_NUM_WORKER"), "4");
	assert_string_equal(ex_env(c, "DMLC_TRACKER_URI"), "tj-node-0-0.tj");
	assert_string_equal(ex_key_str(c, "resources.limits", "nvidia.com/gpu"), "2");
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

static void data_cache(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	cJSON *rt = runtime("fixtures/upstream/runtimes/data-cache/torch_distributed_with_cache.yaml");
	cJSON *tj = trainjob_for(rt, ",'initializer':{'dataset':{'storageUri':'hf://x/y'}},"
				     "'trainer':{'numNodes':2}");
	cJSON *list = expand(tj, rt);
	const cJSON *d = ex_container(ex_job(list, "dataset-initializer"), "dataset-initializer");
	ex_assert_env_names(d, "CACHE_IMAGE,TRAIN_JOB_NAME,STORAGE_URI");
	assert_string_equal(ex_env(d, "STORAGE_URI"), "hf://x/y");
	assert_int_equal(ex_int(ex_job(list, "dataset-initializer"), "replicas"), 1);
	const cJSON *n = ex_container(ex_job(list, "node"), "node");
	ex_assert_env_names(n, "TRAIN_JOB_NAME,PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK,"
			       "PET_MASTER_ADDR,PET_MASTER_PORT");
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.completions"), 2);
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

static void torchtune(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	static const struct {
		const char *file, *config, *extra;
	} cases[] = {
		{ "fixtures/upstream/runtimes/torchtune/llama3_2/llama3_2_1B.yaml", "llama3_2/1B_full",
		  NULL },
		{ "fixtures/upstream/runtimes/torchtune/llama3_2/llama3_2_3B.yaml", "llama3_2/3B_full",
		  NULL },
		{ "fixtures/upstream/runtimes/torchtune/qwen2_5/qwen2_5_1.5B.yaml", "qwen2_5/1.5B_full",
		  "tokenizer.merges_file=/workspace/model/merges.txt" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *rt = runtime(cases[i].file);
		cJSON *tj = trainjob_for(rt, ",'initializer':{'model':{'storageUri':'hf://m'}},"
					     "'trainer':{'command':['tune','run']}");
		cJSON *list = expand(tj, rt);
		const cJSON *cmd = tp_get(ex_container(ex_job(list, "node"), "node"), "command");
		assert_string_equal(cJSON_GetArrayItem(cmd, 0)->valuestring, "tune");
		assert_string_equal(cJSON_GetArrayItem(cmd, 2)->valuestring,
				    "--rdzv_endpoint=tj-node-0-0.tj:29500");
		assert_string_equal(cJSON_GetArrayItem(cmd, 3)->valuestring, "full_finetune_distributed");
		assert_string_equal(cJSON_GetArrayItem(cmd, 5)->valuestring, cases[i].config);
		assert_string_equal(cJSON_GetArrayItem(cmd, 6)->valuestring,
				    "output_dir=/workspace/output");
		bool found = cases[i].extra == NULL;
		const cJSON *it;
		cJSON_ArrayForEach(it, cmd) {
			assert_null(strstr(it->valuestring, "dataset.source")); /* not owned */
			if (cases[i].extra && !strcmp(it->valuestring, cases[i].extra))
				found = true;
		}
		assert_true(found);
		const cJSON *m = ex_container(ex_job(list, "model-initializer"), "model-initializer");
		assert_string_equal(ex_env(m, "STORAGE_URI"), "hf://m");
		/* volumeClaimPolicies stay */
		assert_non_null(tp_get(ex_item(list, 0), "spec.volumeClaimPolicies"));
		cJSON_Delete(list);
		cJSON_Delete(tj);
		cJSON_Delete(rt);
	}
}

/* --------------------------------------------------------------- examples */

static cJSON *example_tj(const char *file)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "fixtures/upstream/examples/%s", file);
	return tt_shared_object(rel, TP_KIND_TRAINJOB);
}

static void example_multi_node_and_kueue(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	cJSON *rt = runtime("fixtures/upstream/runtimes/torch_distributed.yaml");
	cJSON *tj = example_tj("01-multi-node.yaml");
	cJSON *list = expand(tj, rt);
	const cJSON *c = ex_container(ex_job(list, "node"), "node");
	assert_string_equal(ex_env(c, "PET_NNODES"), "3");
	assert_string_equal(ex_env(c, "PET_MASTER_ADDR"), "multi-node-example-node-0-0.multi-node-example");
	assert_string_equal(cJSON_GetArrayItem(tp_get(c, "command"), 0)->valuestring, "torchrun");
	assert_true(cJSON_IsFalse(tp_get(ex_item(list, 0), "spec.suspend")));
	cJSON_Delete(list);
	cJSON_Delete(tj);

	tj = example_tj("03-kueue-integration.yaml");
	list = expand(tj, rt);
	assert_true(cJSON_IsTrue(tp_get(ex_item(list, 0), "spec.suspend")));
	c = ex_container(ex_job(list, "node"), "node");
	assert_string_equal(tp_get_str(c, "image"), "python:3.11-slim");
	assert_string_equal(ex_env(c, "PET_NPROC_PER_NODE"), "2");
	assert_string_equal(tp_get_str(c, "resources.limits.memory"), "8Gi");
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

static void example_runtime_patches(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	cJSON *rt = runtime("fixtures/upstream/runtimes/torch_distributed.yaml");
	cJSON *tj = example_tj("02-runtime-patches.yaml");
	cJSON *list = expand(tj, rt);
	const cJSON *js = ex_item(list, 0);
	assert_string_equal(tp_get_str(js, "metadata.labels.team"), "ml-platform");
	assert_string_equal(ex_key_str(js, "metadata.annotations", "prometheus.io/scrape"), "true");
	const cJSON *job = ex_job(list, "node");
	assert_string_equal(tp_get_str(job, "template.spec.template.spec.serviceAccountName"),
			    "training-sa");
	const cJSON *c = ex_container(job, "node");
	ex_assert_env_names(c, "CUSTOM_VAR,PYTHONUNBUFFERED,PET_NNODES,PET_NPROC_PER_NODE,"
			       "PET_NODE_RANK,PET_MASTER_ADDR,PET_MASTER_PORT");
	ex_assert_json(tp_get(c, "resources"), "{'limits':{'cpu':'4','memory':'8Gi'},"
					       "'requests':{'cpu':'2','memory':'4Gi'}}");
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

static void example_volcano(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	cJSON *rt = tt_shared_object("fixtures/upstream/examples/04-volcano-integration.yaml",
			    TP_KIND_CLUSTER_TRAINING_RUNTIME);
	cJSON *tj = example_tj("04-volcano-integration.yaml");
	cJSON *list = expand(tj, rt);
	const cJSON *pg = ex_kind(list, "PodGroup");
	assert_non_null(pg);
	assert_string_equal(tp_get_str(pg, "apiVersion"), "scheduling.volcano.sh/v1beta1");
	assert_int_equal(ex_int(pg, "spec.minMember"), 4);
	ex_assert_json(tp_get(pg, "spec.minResources"), "{'cpu':'4','memory':'8Gi'}");
	assert_string_equal(ex_key_str(ex_job(list, "node"), "template.spec.template.metadata.annotations",
				       "scheduling.k8s.io/group-name"), "volcano-example");
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

static void example_multi_step(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	cJSON *rt = tt_shared_object("fixtures/upstream/examples/05-multi-step.yaml", TP_KIND_TRAINING_RUNTIME);
	cJSON *tj = example_tj("05-multi-step.yaml");
	cJSON *list = expand(tj, rt);
	const cJSON *d = ex_container(ex_job(list, "dataset-initializer"), "dataset-initializer");
	assert_string_equal(ex_env(d, "STORAGE_URI"), "hf://tatsu-lab/alpaca");
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 2);
	assert_int_equal(ex_int(ex_job(list, "dataset-initializer"), "template.spec.parallelism"), 1);
	cJSON_Delete(list);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torch_distributed),
		cmocka_unit_test(mpi_runtimes),
		cmocka_unit_test(jax_and_xgboost),
		cmocka_unit_test(data_cache),
		cmocka_unit_test(torchtune),
		cmocka_unit_test(example_multi_node_and_kueue),
		cmocka_unit_test(example_runtime_patches),
		cmocka_unit_test(example_volcano),
		cmocka_unit_test(example_multi_step),
		cmocka_unit_test(controller_jobsets_get_no_patch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

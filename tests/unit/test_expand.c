/*
 * test_expand.c — TrainJob + runtime → JobSet List: the reconciliation core
 * and the torch, plainml, jobset and initializer behaviour, determinism,
 * odd input and runtime lookup. MPI, the schedulers, JAX, XGBoost and
 * TorchTune have their own files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"
#include "tests/unit/test_expand.h"

static void list_shape_and_jobset_metadata(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':2}"), RT_TORCH, NULL, TP_OK);
	assert_string_equal(tp_get_str(list, "apiVersion"), "v1");
	assert_string_equal(tp_get_str(list, "kind"), "List");
	assert_int_equal(cJSON_GetArraySize(tp_get(list, "items")), 1);
	const cJSON *js = ex_item(list, 0);
	assert_string_equal(tp_get_str(js, "apiVersion"), "jobset.x-k8s.io/v1alpha2");
	assert_string_equal(tp_get_str(js, "kind"), "JobSet");
	assert_string_equal(tp_get_str(js, "metadata.name"), "tj");
	assert_string_equal(tp_get_str(js, "metadata.namespace"), "team");
	assert_string_equal(tp_get_str(js, "metadata.labels.rl"), "rv");
	assert_string_equal(tp_get_str(js, "metadata.annotations.ra"), "av");
	const cJSON *refs = tp_get_array(js, "metadata.ownerReferences");
	assert_int_equal(cJSON_GetArraySize(refs), 1);
	ex_assert_json(cJSON_GetArrayItem(refs, 0),
		       "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'tj',"
		       "'uid':'u-1','controller':true,'blockOwnerDeletion':true}");
	assert_true(cJSON_IsFalse(tp_get(js, "spec.suspend")));
	/* the runtime object's own labels are not the JobSet's */
	assert_null(ex_key_str(js, "metadata.labels", "trainer.kubeflow.org/framework"));
	assert_int_equal(cJSON_GetArraySize(tp_get(js, "metadata.labels")), 1);
	cJSON_Delete(list);
}

static void torch_four_nodes(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':4,'image':'img:2','command':['torchrun'],"
				   "'args':['a.py'],'env':[{'name':'USER_ENV','value':'u'}]}"),
				RT_TORCH, NULL, TP_OK);
	const cJSON *job = ex_job(list, "node");
	assert_int_equal(ex_int(job, "template.spec.parallelism"), 4);
	assert_int_equal(ex_int(job, "template.spec.completions"), 4);
	assert_int_equal(ex_int(job, "replicas"), 1);
	const cJSON *c = ex_container(job, "node");
	assert_string_equal(tp_get_str(c, "image"), "img:2");
	ex_assert_json(tp_get(c, "command"), "['torchrun']");
	ex_assert_json(tp_get(c, "args"), "['a.py']");
	/* runtime env kept first, then the user's, then PET_* in upstream's order */
	ex_assert_env_names(c, "RT_ENV,USER_ENV,PET_NNODES,PET_NPROC_PER_NODE,PET_NODE_RANK,"
			       "PET_MASTER_ADDR,PET_MASTER_PORT");
	assert_string_equal(ex_env(c, "PET_NNODES"), "4");
	assert_string_equal(ex_env(c, "PET_MASTER_ADDR"), "tj-node-0-0.tj");
	assert_string_equal(ex_env(c, "PET_MASTER_PORT"), "29500");
	ex_assert_json(tp_find_named(tp_get(c, "env"), "name", "PET_NODE_RANK"),
		       "{'name':'PET_NODE_RANK','valueFrom':{'fieldRef':{'fieldPath':"
		       "'metadata.annotations[\\'batch.kubernetes.io/job-completion-index\\']'}}}");
	ex_assert_json(tp_get(c, "ports"), "[{'containerPort':29500}]");
	cJSON_Delete(list);
}

static void torch_num_nodes_precedence(void **state)
{
	(void)state;
	/* runtime mlPolicy.numNodes when the TrainJob sets none */
	cJSON *list = ex_expand(TJ(",'trainer':{'command':['x']}"),
				RT_TORCH_WITH("'numNodes':3,'torch':{}", ""), NULL, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 3);
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "PET_NNODES"), "3");
	cJSON_Delete(list);
	/* the TrainJob's wins */
	list = ex_expand(TJ(",'trainer':{'numNodes':5}"), RT_TORCH_WITH("'numNodes':3,'torch':{}", ""),
			 NULL, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.completions"), 5);
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "PET_NNODES"), "5");
	cJSON_Delete(list);
	/* numNodes 0: the strict profile still runs one node, as its admission
	 * warning says... */
	list = ex_expand(TJ(",'trainer':{'numNodes':0}"), RT_TORCH, NULL, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 1);
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "PET_NNODES"), "1");
	cJSON_Delete(list);
	/* ...the kubeflow profile builds what upstream's controller builds */
	list = ex_expand_in(&ex_kubeflow, TJ(",'trainer':{'numNodes':0}"), RT_TORCH, NULL, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 0);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.completions"), 0);
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "PET_NNODES"), "0");
	cJSON_Delete(list);
}

static const char *nproc_of(const char *trainer, const char *torch_policy)
{
	static char out[32];
	char tj[512], rt[4096];
	snprintf(tj, sizeof(tj), TJ(",'trainer':%s"), trainer);
	snprintf(rt, sizeof(rt), RT_TORCH_WITH("'torch':%s", ""), torch_policy);
	cJSON *list = ex_expand(tj, rt, NULL, TP_OK);
	const char *v = ex_env(ex_container(ex_job(list, "node"), "node"), "PET_NPROC_PER_NODE");
	snprintf(out, sizeof(out), "%s", v ? v : "(none)");
	cJSON_Delete(list);
	return out;
}

static void torch_num_proc_per_node(void **state)
{
	(void)state;
	/* auto with no GPU: CPU count rounded up */
	assert_string_equal(nproc_of("{'resourcesPerNode':{'requests':{'cpu':'2500m'}}}", "{}"), "3");
	assert_string_equal(nproc_of("{'resourcesPerNode':{'limits':{'cpu':'4'}}}", "{}"), "4");
	assert_string_equal(nproc_of("{'resourcesPerNode':{'requests':{'cpu':'500m'}}}", "{}"), "1");
	assert_string_equal(nproc_of("{'resourcesPerNode':{'requests':{'cpu':1.5}}}", "{}"), "2");
	/* no resources at all: at least one */
	assert_string_equal(nproc_of("{'image':'x'}", "{}"), "1");
	/* a GPU: stays auto, also when only limits name it */
	assert_string_equal(nproc_of("{'resourcesPerNode':{'limits':{'nvidia.com/gpu':2,'cpu':'8'}}}",
				     "{}"), "auto");
	assert_string_equal(nproc_of("{'resourcesPerNode':{'requests':{'amd.com/GPU':'1'}}}", "{}"),
			    "auto");
	/* the TrainJob's number */
	assert_string_equal(nproc_of("{'numProcPerNode':6}", "{}"), "6");
	/* the runtime's guides-era value when the TrainJob sets none */
	assert_string_equal(nproc_of("{'image':'x'}", "{'numProcPerNode':4}"), "4");
	assert_string_equal(nproc_of("{'numProcPerNode':2}", "{'numProcPerNode':4}"), "2");
	assert_string_equal(nproc_of("{'resourcesPerNode':{'limits':{'cpu':'3'}}}",
				     "{'numProcPerNode':'cpu'}"), "3");
	assert_string_equal(nproc_of("{'image':'x'}", "{'numProcPerNode':'gpu'}"), "gpu");
}

static void torch_gpu_from_runtime_container(void **state)
{
	(void)state;
	/* no resourcesPerNode: the runtime node container's resources count */
	cJSON *list = ex_expand(TJ(",'trainer':{'image':'x'}"),
				RT_TORCH_WITH("'torch':{}", ",'resources':{'limits':{'nvidia.com/gpu':1}}"),
				NULL, TP_OK);
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "PET_NPROC_PER_NODE"),
			    "auto");
	cJSON_Delete(list);
}

static void resources_merged_per_key(void **state)
{
	(void)state;
	cJSON *list = ex_expand(
		TJ(",'trainer':{'resourcesPerNode':{'requests':{'cpu':'2','memory':'4Gi'},"
		   "'limits':{'cpu':1.5}}}"),
		RT_TORCH_WITH("'torch':{}",
			      ",'resources':{'limits':{'nvidia.com/gpu':1,'cpu':'8'},'requests':{'cpu':'1'}}"),
		NULL, TP_OK);
	const cJSON *r = tp_get(ex_container(ex_job(list, "node"), "node"), "resources");
	ex_assert_json(r, "{'limits':{'cpu':'1500m','nvidia.com/gpu':'1'},"
			  "'requests':{'cpu':'2','memory':'4Gi'}}");
	/* keys sorted, as the API server stores a ResourceList */
	assert_string_equal(tp_get(r, "limits")->child->string, "cpu");
	cJSON_Delete(list);
}

static void torch_needs_a_trainer_for_pet_env(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(""), RT_TORCH, NULL, TP_OK);
	const cJSON *c = ex_container(ex_job(list, "node"), "node");
	assert_null(ex_env(c, "PET_NNODES"));
	assert_non_null(ex_env(c, "RT_ENV"));
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 1);
	cJSON_Delete(list);
}

static void torch_env_injection_targets(void **state)
{
	(void)state;
	cJSON *list = ex_expand(
		TJ(",'trainer':{'numNodes':2}"),
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		"'metadata':{'name':'rt'},'spec':{'mlPolicy':{'torch':{'envInjection':{'targets':"
		"[{'jobName':'node','containerNames':['side','init']}]}}},"
		"'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"
		"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':{'spec':{"
		"'initContainers':[{'name':'init','image':'i'}],"
		"'containers':[{'name':'node','image':'n'},{'name':'side','image':'s'}]}}}}}]}}}}",
		NULL, TP_OK);
	const cJSON *job = ex_job(list, "node");
	const cJSON *side = ex_container(job, "side");
	assert_string_equal(ex_env(side, "PET_NNODES"), "2");
	assert_string_equal(ex_env(side, "PET_MASTER_ADDR"), "tj-node-0-0.tj");
	const cJSON *init = tp_find_named(tp_get(job, "template.spec.template.spec.initContainers"),
					  "name", "init");
	assert_string_equal(ex_env(init, "PET_MASTER_PORT"), "29500");
	assert_null(tp_get(side, "ports")); /* the port is the node container's */
	cJSON_Delete(list);
}

static void plainml_counts_and_env(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':3,'env':[{'name':'A','value':'1'}],"
				   "'resourcesPerNode':{'limits':{'cpu':'2'}}}"),
				RT_PLAIN, NULL, TP_OK);
	const cJSON *job = ex_job(list, "node");
	assert_int_equal(ex_int(job, "template.spec.parallelism"), 3);
	const cJSON *c = ex_container(job, "node");
	assert_string_equal(ex_env(c, "A"), "1");
	assert_null(ex_env(c, "PET_NNODES"));
	assert_null(tp_get(c, "ports"));
	assert_string_equal(tp_get_str(c, "resources.limits.cpu"), "2");
	/* a job without the trainer label keeps its own parallelism */
	assert_int_equal(ex_int(ex_job(list, "aux"), "template.spec.parallelism"), 2);
	assert_int_equal(ex_int(ex_job(list, "aux"), "replicas"), 3);
	cJSON_Delete(list);
}

static void initializers(void **state)
{
	(void)state;
	cJSON *list = ex_expand(
		TJ(",'initializer':{'dataset':{'storageUri':'hf://d','env':[{'name':'E','value':'1'}],"
		   "'secretRef':{'name':'hf'}},'model':{'storageUri':'s3://m'}},"
		   "'trainer':{'numNodes':2}"),
		RT_INIT, NULL, TP_OK);
	const cJSON *d = ex_container(ex_job(list, "dataset-initializer"), "dataset-initializer");
	ex_assert_env_names(d, "STORAGE_URI,KEEP,E");
	assert_string_equal(ex_env(d, "STORAGE_URI"), "hf://d");
	ex_assert_json(tp_get(d, "envFrom"), "[{'secretRef':{'name':'hf'}}]");
	assert_int_equal(ex_int(ex_job(list, "dataset-initializer"), "replicas"), 1);
	const cJSON *m = ex_container(ex_job(list, "model-initializer"), "model-initializer");
	assert_string_equal(ex_env(m, "STORAGE_URI"), "s3://m");
	assert_null(tp_get(m, "envFrom"));
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 2);
	assert_int_equal(ex_int(ex_job(list, "dataset-initializer"), "template.spec.parallelism"), 1);
	/* runtime job order kept */
	const cJSON *jobs = tp_get(ex_item(list, 0), "spec.replicatedJobs");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, 0), "name"), "dataset-initializer");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, 2), "name"), "node");
	cJSON_Delete(list);
}

static void suspend_and_patches(void **state)
{
	(void)state;
	cJSON *list = ex_expand(
		TJ(",'suspend':true,'runtimePatches':[{'manager':'a.io/b','trainingRuntimeSpec':{"
		   "'template':{'metadata':{'labels':{'team':'t'}},'spec':{'replicatedJobs':[{'name':"
		   "'node','template':{'spec':{'template':{'spec':{'nodeSelector':{'k':'v'}}}}}}]}}}}]"),
		RT_TORCH, NULL, TP_OK);
	const cJSON *js = ex_item(list, 0);
	assert_true(cJSON_IsTrue(tp_get(js, "spec.suspend")));
	assert_string_equal(tp_get_str(js, "metadata.labels.team"), "t");
	assert_string_equal(tp_get_str(js, "metadata.labels.rl"), "rv");
	assert_string_equal(tp_get_str(ex_job(list, "node"), "template.spec.template.spec.nodeSelector.k"),
			    "v");
	cJSON_Delete(list);
}

static void deterministic_bytes(void **state)
{
	(void)state;
	const char *tj = TJ(",'trainer':{'numNodes':3,'env':[{'name':'B','value':'2'}],"
			    "'resourcesPerNode':{'requests':{'memory':'1Gi','cpu':'1'}}}");
	char *first = NULL;
	for (int i = 0; i < 3; i++) {
		cJSON *list = ex_expand(tj, RT_TORCH_COSCHED, NULL, TP_OK);
		char *s = cJSON_PrintUnformatted(list);
		assert_non_null(s);
		if (first) {
			assert_string_equal(s, first);
			free(s);
		} else {
			first = s;
		}
		cJSON_Delete(list);
	}
	free(first);
}

static void output_lives_in_the_arena(void **state)
{
	(void)state;
	cJSON *tj = ex_js(TJ(",'trainer':{'numNodes':2}"));
	cJSON *rt = ex_js(RT_TORCH);
	tp_arena *a = NULL;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_arena *prev = tp_arena_enter(a);
	cJSON *list = NULL;
	int rc = tp_expand_with_runtime(NULL, tj, rt, NULL, &list, res);
	tp_arena_leave(prev);
	assert_int_equal(rc, TP_OK);
	assert_true(tp_arena_owns(a, list));
	assert_true(tp_arena_owns(a, ex_item(list, 0)));
	assert_true(tp_arena_owns(a, tp_get(ex_job(list, "node"), "name")->valuestring));
	tp_arena_free(a);
	tp_result_free(res);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

/* ---------------------------------------------------------- odd input */

static void odd_input_is_an_error_naming_the_field(void **state)
{
	(void)state;
	static const struct {
		const char *tj, *rt, *path;
	} cases[] = {
		{ "{'metadata':{'name':'tj'}}", RT_TORCH, "spec" },
		{ "{'metadata':{'name':'tj'},'spec':[]}", RT_TORCH, "spec" },
		{ "{'spec':{}}", RT_TORCH, "metadata.name" },
		{ "{'metadata':{'name':7},'spec':{}}", RT_TORCH, "metadata.name" },
		{ TJ(",'trainer':{'numNodes':'4'}"), RT_TORCH, "spec.trainer.numNodes" },
		{ TJ(",'trainer':{'numNodes':1.5}"), RT_TORCH, "spec.trainer.numNodes" },
		{ TJ(",'trainer':{'env':{'A':'1'}}"), RT_TORCH, "spec.trainer.env" },
		{ TJ(",'trainer':{'env':[{'value':'1'}]}"), RT_TORCH, "spec.trainer.env[0].name" },
		{ TJ(",'trainer':{'env':['A']}"), RT_TORCH, "spec.trainer.env[0]" },
		{ TJ(",'trainer':{'command':'python'}"), RT_TORCH, "spec.trainer.command" },
		{ TJ(",'trainer':{'args':[1]}"), RT_TORCH, "spec.trainer.args[0]" },
		{ TJ(",'trainer':{'resourcesPerNode':{'limits':[]}}"), RT_TORCH,
		  "spec.trainer.resourcesPerNode.limits" },
		{ TJ(",'trainer':{'numProcPerNode':true}"), RT_TORCH, "spec.trainer.numProcPerNode" },
		{ TJ(",'trainer':7"), RT_TORCH, "spec.trainer" },
		{ TJ(",'suspend':'yes'"), RT_TORCH, "spec.suspend" },
		{ TJ(",'initializer':{'dataset':{'secretRef':{}}}"), RT_TORCH,
		  "spec.initializer.dataset.secretRef.name" },
		{ TJ(""), RT_TORCH_WITH("'numNodes':'2','torch':{}", ""), "spec.mlPolicy.numNodes" },
		{ TJ(""), RT_TORCH_WITH("'torch':[]", ""), "spec.mlPolicy.torch" },
		{ TJ(""), "{'spec':{'mlPolicy':{'mpi':{'runLauncherAsNode':'yes'}}}}",
		  "spec.mlPolicy.mpi.runLauncherAsNode" },
		{ TJ(""), "{'spec':{'template':{'spec':{'replicatedJobs':{}}}}}",
		  "spec.template.spec.replicatedJobs" },
		{ TJ(""), "{'spec':{'template':{'spec':{'replicatedJobs':[{'replicas':1}]}}}}",
		  "spec.template.spec.replicatedJobs[0].name" },
		{ TJ(""), "{'spec':{'template':{'spec':{'replicatedJobs':[{'name':'n','template':"
			  "{'spec':{'template':{'spec':{'containers':[{'name':'node','env':7}]}}}}}]}}}}",
		  "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].env" },
		{ TJ(""), "{'spec':{'template':{'spec':{'replicatedJobs':[{'name':'n','template':"
			  "{'spec':{'parallelism':'2'}}}]}}}}",
		  "spec.template.spec.replicatedJobs[0].template.spec.parallelism" },
		{ TJ(",'runtimePatches':[{'manager':'a/b','trainingRuntimeSpec':{'template':{'spec':"
		     "{'replicatedJobs':'x'}}}}]"),
		  RT_TORCH, "spec.runtimePatches" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tp_result *res = ex_expand_fail(cases[i].tj, cases[i].rt, NULL, TP_EINVAL);
		if (!tt_has_error(res, cases[i].path, NULL)) {
			print_message("case %zu: no error at %s\n", i, cases[i].path);
			tt_dump(res);
			fail();
		}
		tp_result_free(res);
	}
}

static void not_objects_at_all(void **state)
{
	(void)state;
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *arr = ex_js("[1,2]");
	cJSON *rt = ex_js(RT_TORCH);
	cJSON *out = (cJSON *)1;
	assert_int_equal(tp_expand_with_runtime(NULL, arr, rt, NULL, &out, res), TP_EINVAL);
	assert_null(out);
	assert_false(tp_result_ok(res));
	tp_result_clear(res);
	assert_int_equal(tp_expand_with_runtime(NULL, NULL, NULL, NULL, &out, res), TP_EINVAL);
	assert_null(out);
	assert_int_equal(tp_expand_with_runtime(NULL, rt, rt, NULL, NULL, res), TP_EINVAL);
	assert_int_equal(tp_expand(NULL, NULL, NULL, &out, res), TP_EINVAL);
	cJSON_Delete(arr);
	cJSON_Delete(rt);
	tp_result_free(res);
}

/* --------------------------------------------------------------- lookup */

static void lookup_in_the_store(void **state)
{
	(void)state;
	tp_store *st = NULL;
	assert_int_equal(tp_store_new(&st), TP_OK);
	assert_int_equal(tp_store_put(st, ex_js(RT_TORCH)), TP_OK); /* ClusterTrainingRuntime "rt" */
	cJSON *tr = ex_js(RT_PLAIN);
	cJSON_ReplaceItemInObject(tr, "kind", cJSON_CreateString("TrainingRuntime"));
	cJSON_AddStringToObject(tp_get_object(tr, "metadata") ? (cJSON *)tp_get(tr, "metadata") : tr,
				"namespace", "team");
	assert_int_equal(tp_store_put(st, tr), TP_OK);
	tp_options opt = { .store = st };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *out = NULL;

	cJSON *tj = ex_js(TJ(",'trainer':{'numNodes':2}"));
	tp_store_rdlock(st);
	assert_int_equal(tp_expand(&opt, tj, NULL, &out, res), TP_OK);
	tp_store_unlock(st);
	assert_string_equal(ex_env(ex_container(ex_job(out, "node"), "node"), "PET_NNODES"), "2");
	cJSON_Delete(out);
	cJSON_Delete(tj);

	/* a namespaced TrainingRuntime in the TrainJob's namespace */
	tj = ex_js("{'metadata':{'name':'tj','namespace':'team'},'spec':{'runtimeRef':{'name':'rt',"
		   "'kind':'TrainingRuntime','apiGroup':'trainer.kubeflow.org'},'trainer':{'numNodes':2}}}");
	assert_int_equal(tp_expand(&opt, tj, NULL, &out, res), TP_OK);
	assert_null(ex_env(ex_container(ex_job(out, "node"), "node"), "PET_NNODES")); /* plain */
	cJSON_Delete(out);
	cJSON_Delete(tj);

	/* not in another namespace */
	tj = ex_js("{'metadata':{'name':'tj','namespace':'other'},'spec':{'runtimeRef':{'name':'rt',"
		   "'kind':'TrainingRuntime'}}}");
	assert_int_equal(tp_expand(&opt, tj, NULL, &out, res), TP_ENOTFOUND);
	assert_null(out);
	assert_true(tt_has_error(res, "spec.runtimeRef", "specified trainingRuntime must be created"));
	tp_result_clear(res);
	cJSON_Delete(tj);

	/* missing cluster runtime, and no store at all */
	tj = ex_js("{'metadata':{'name':'tj'},'spec':{'runtimeRef':{'name':'nope'}}}");
	assert_int_equal(tp_expand(&opt, tj, NULL, &out, res), TP_ENOTFOUND);
	assert_true(tt_has_error(res, "spec.runtimeRef", "clustertrainingruntimes.trainer.kubeflow.org "
				 "\"nope\" not found"));
	tp_result_clear(res);
	assert_int_equal(tp_expand(NULL, tj, NULL, &out, res), TP_ENOTFOUND);
	tp_result_clear(res);
	tp_options kf = { .profile = TP_PROFILE_KUBEFLOW, .store = st };
	assert_int_equal(tp_expand(&kf, tj, NULL, &out, res), TP_ENOTFOUND);
	assert_true(tt_has_error(res, "spec.RuntimeRef", NULL));
	tp_result_clear(res);
	cJSON_Delete(tj);

	/* another group */
	tj = ex_js("{'metadata':{'name':'tj'},'spec':{'runtimeRef':{'name':'rt','apiGroup':'kubeflow.org'}}}");
	assert_int_equal(tp_expand(&opt, tj, NULL, &out, res), TP_EUNSUPPORTED);
	assert_true(tt_has_error(res, NULL, "unsupported runtime: ClusterTrainingRuntime.kubeflow.org"));
	tp_result_clear(res);
	cJSON_Delete(tj);

	/* no runtime name */
	tj = ex_js("{'metadata':{'name':'tj'},'spec':{'runtimeRef':{}}}");
	assert_int_equal(tp_expand(&opt, tj, NULL, &out, res), TP_EINVAL);
	assert_true(tt_has_error(res, "spec.runtimeRef.name", NULL));
	cJSON_Delete(tj);

	tp_result_free(res);
	tp_store_free(st);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(list_shape_and_jobset_metadata),
		cmocka_unit_test(torch_four_nodes),
		cmocka_unit_test(torch_num_nodes_precedence),
		cmocka_unit_test(torch_num_proc_per_node),
		cmocka_unit_test(torch_gpu_from_runtime_container),
		cmocka_unit_test(resources_merged_per_key),
		cmocka_unit_test(torch_needs_a_trainer_for_pet_env),
		cmocka_unit_test(torch_env_injection_targets),
		cmocka_unit_test(plainml_counts_and_env),
		cmocka_unit_test(initializers),
		cmocka_unit_test(suspend_and_patches),
		cmocka_unit_test(deterministic_bytes),
		cmocka_unit_test(output_lives_in_the_arena),
		cmocka_unit_test(odd_input_is_an_error_naming_the_field),
		cmocka_unit_test(not_objects_at_all),
		cmocka_unit_test(lookup_in_the_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

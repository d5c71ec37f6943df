/*
 * test_expand_plugins.c — coscheduling and Volcano PodGroups, JAX, XGBoost
 * and TorchTune.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_expand.h"

/* A runtime with a podGroupPolicy, an initializer job and a trainer job. */
#define RT_PG(policy, annotations)                                                        \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'rt'},'spec':{'mlPolicy':{'numNodes':1,'torch':{}},"           \
	"'podGroupPolicy':{" policy "},'template':{'metadata':{'annotations':{" annotations \
	"}},'spec':{'replicatedJobs':["                                                     \
	"{'name':'init','template':{'metadata':{'labels':"                                  \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'dataset-initializer'}},'spec':"   \
	"{'template':{'spec':{'priorityClassName':'p1','containers':[{'name':"             \
	"'dataset-initializer','resources':{'requests':{'cpu':'500m','memory':'1Gi'}}}]}}}}}," \
	"{'name':'node','template':{'metadata':{'labels':"                                 \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"   \
	"{'spec':{'priorityClassName':'p2','containers':[{'name':'node','image':'n'},"      \
	"{'name':'side','resources':{'requests':{'cpu':'100m'}}}]}}}}}]}}}}"

static void coscheduling_pod_group(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':4,'resourcesPerNode':{'requests':"
				   "{'cpu':'2','memory':'4Gi','nvidia.com/gpu':1}}}"),
				RT_PG("'coscheduling':{'scheduleTimeoutSeconds':120}", ""), NULL, TP_OK);
	const cJSON *pg = ex_item(list, 1);
	/* 1 initializer pod + 4 nodes; cpu 500m + 4 × (2 + 100m) = 8900m */
	ex_assert_json(pg, "{'apiVersion':'scheduling.x-k8s.io/v1alpha1','kind':'PodGroup',"
			   "'metadata':{'name':'tj','namespace':'team','ownerReferences':[{"
			   "'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'tj',"
			   "'uid':'u-1','controller':true,'blockOwnerDeletion':true}]},"
			   "'spec':{'minMember':5,'minResources':{'cpu':'8900m','memory':'17Gi',"
			   "'nvidia.com/gpu':'4'},'scheduleTimeoutSeconds':120}}");
	/* keys sorted */
	assert_string_equal(tp_get(pg, "spec.minResources")->child->string, "cpu");
	for (int i = 0; i < 2; i++) {
		const cJSON *job = cJSON_GetArrayItem(tp_get(ex_item(list, 0), "spec.replicatedJobs"), i);
		assert_string_equal(ex_key_str(job, "template.spec.template.metadata.labels",
					       "scheduling.x-k8s.io/pod-group"), "tj");
	}
	cJSON_Delete(list);
	/* default timeout; no requests: an empty minResources, as upstream sets the
	 * list it summed */
	list = ex_expand(TJ(""), RT_TORCH_COSCHED, NULL, TP_OK);
	assert_int_equal(ex_int(ex_item(list, 1), "spec.scheduleTimeoutSeconds"), 100);
	assert_int_equal(ex_int(ex_item(list, 1), "spec.minMember"), 1);
	ex_assert_json(tp_get(ex_item(list, 1), "spec.minResources"), "{}");
	cJSON_Delete(list);
	list = ex_expand(TJ(""), RT_PG("'coscheduling':{}", ""), NULL, TP_OK);
	assert_int_equal(ex_int(ex_item(list, 1), "spec.scheduleTimeoutSeconds"), 60);
	cJSON_Delete(list);
}

static void init_containers_count_as_upstream_does(void **state)
{
	(void)state;
	/* a one-shot init container larger than the main containers sets the
	 * floor; a sidecar adds up */
	cJSON *list = ex_expand(
		TJ(""),
		"{'metadata':{'name':'rt'},'spec':{'podGroupPolicy':{'coscheduling':{}},'template':{"
		"'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'parallelism':2,"
		"'template':{'spec':{'initContainers':[{'name':'big','resources':{'requests':"
		"{'cpu':'3','memory':'1Gi'}}},{'name':'car','restartPolicy':'Always','resources':"
		"{'requests':{'cpu':'1'}}}],'containers':[{'name':'node','resources':{'requests':"
		"{'cpu':'1','memory':'2Gi'}}}],'overhead':{'cpu':'100m'}}}}}}]}}}}",
		NULL, TP_OK);
	/* per pod: cpu max(1+1, 3) + 100m = 3100m, memory 2Gi; × 2 */
	ex_assert_json(tp_get(ex_item(list, 1), "spec.minResources"),
		       "{'cpu':'6200m','memory':'4Gi'}");
	cJSON_Delete(list);
}

static void volcano_pod_group(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':2}"),
				RT_PG("'volcano':{'networkTopology':{'mode':'hard','highestTierAllowed':1}}",
				      "'scheduling.volcano.sh/queue-name':'q1'"),
				NULL, TP_OK);
	const cJSON *pg = ex_item(list, 1);
	ex_assert_json(pg, "{'apiVersion':'scheduling.volcano.sh/v1beta1','kind':'PodGroup',"
			   "'metadata':{'name':'tj','namespace':'team','ownerReferences':[{"
			   "'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'tj',"
			   "'uid':'u-1','controller':true,'blockOwnerDeletion':true}]},"
			   "'spec':{'minMember':3,'queue':'q1','priorityClassName':'p2',"
			   "'minResources':{'cpu':'700m','memory':'1Gi'},"
			   "'networkTopology':{'mode':'hard','highestTierAllowed':1}}}");
	const cJSON *job = ex_job(list, "node");
	assert_string_equal(ex_key_str(job, "template.spec.template.metadata.annotations",
				       "scheduling.k8s.io/group-name"), "tj");
	assert_null(tp_get(job, "template.spec.template.metadata.labels"));
	assert_string_equal(ex_key_str(ex_item(list, 0), "metadata.annotations",
				       "scheduling.volcano.sh/queue-name"), "q1");
	cJSON_Delete(list);
	/* no queue annotation: no queue */
	list = ex_expand(TJ(""), RT_PG("'volcano':{}", ""), NULL, TP_OK);
	assert_null(tp_get(ex_item(list, 1), "spec.queue"));
	assert_null(tp_get(ex_item(list, 1), "spec.networkTopology"));
	cJSON_Delete(list);
}

static void jax_env(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':3,'env':[{'name':'U','value':'u'}]}"),
				RT_TORCH_WITH("'numNodes':1,'jax':{}", ""), NULL, TP_OK);
	const cJSON *c = ex_container(ex_job(list, "node"), "node");
	ex_assert_env_names(c, "RT_ENV,U,JAX_NUM_PROCESSES,JAX_PROCESS_ID,JAX_COORDINATOR_ADDRESS");
	assert_string_equal(ex_env(c, "JAX_NUM_PROCESSES"), "3");
	assert_string_equal(ex_env(c, "JAX_COORDINATOR_ADDRESS"), "tj-node-0-0.tj:29500");
	ex_assert_json(tp_find_named(tp_get(c, "env"), "name", "JAX_PROCESS_ID"),
		       "{'name':'JAX_PROCESS_ID','valueFrom':{'fieldRef':{'fieldPath':"
		       "'metadata.annotations[\\'batch.kubernetes.io/job-completion-index\\']'}}}");
	ex_assert_json(tp_get(c, "ports"), "[{'containerPort':29500}]");
	assert_null(ex_env(c, "PET_NNODES"));
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 3);
	cJSON_Delete(list);
}

static void xgboost_env(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':2,'resourcesPerNode':{'limits':"
				   "{'nvidia.com/gpu':4}}}"),
				RT_TORCH_WITH("'xgboost':{}", ""), NULL, TP_OK);
	const cJSON *c = ex_container(ex_job(list, "node"), "node");
	ex_assert_env_names(c, "RT_ENV,DMLC_TRACKER_URI,DMLC_TRACKER_PORT,DMLC_TASK_ID,DMLC_NUM_WORKER");
	assert_string_equal(ex_env(c, "DMLC_TRACKER_URI"), "tj-node-0-0.tj");
	assert_string_equal(ex_env(c, "DMLC_TRACKER_PORT"), "29500");
	assert_string_equal(ex_env(c, "DMLC_NUM_WORKER"), "8");
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 2);
	cJSON_Delete(list);
	list = ex_expand(TJ(",'trainer':{'numNodes':3}"), RT_TORCH_WITH("'xgboost':{}", ""), NULL,
			 TP_OK);
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "DMLC_NUM_WORKER"), "3");
	cJSON_Delete(list);
}

/* The torchtune-llama3.2-1b runtime's trainer, trimmed. */
#define RT_TUNE(name, limits)                                                             \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'" name "'},'spec':{'mlPolicy':{'numNodes':1,'torch':{}},"     \
	"'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':"      \
	"{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':"     \
	"{'template':{'spec':{'containers':[{'name':'node','image':'t','command':['tune',"  \
	"'run','--rdzv_endpoint=localhost:29500','full_finetune_distributed','--config',"  \
	"'llama3_2/1B_full','dataset=x','output_dir=/workspace/output',"                   \
	"'tokenizer.path=/workspace/model/original/tokenizer.model',"                      \
	"'checkpointer.checkpoint_dir=/workspace/model'],'resources':{'limits':{" limits    \
	"}}}]}}}}}]}}}}"

#define TJ_TUNE(name, trainer)                                                            \
	"{'metadata':{'name':'tj'},'spec':{'runtimeRef':{'name':'" name "'},"               \
	"'trainer':{'command':['tune','run']" trainer "}}}"

static const char *const OWNED =
	"'output_dir=/workspace/output','tokenizer.path=/workspace/model/original/tokenizer.model',"
	"'checkpointer.checkpoint_dir=/workspace/model'";

static void assert_tune(const char *tj, const char *rt, const char *head)
{
	cJSON *list = ex_expand(tj, rt, NULL, TP_OK);
	const cJSON *c = ex_container(ex_job(list, "node"), "node");
	char want[2048];
	snprintf(want, sizeof(want), "[%s,%s]", head, OWNED);
	ex_assert_json(tp_get(c, "command"), want);
	/* TorchTune does its own rendezvous: no master env */
	assert_null(ex_env(c, "PET_MASTER_ADDR"));
	assert_non_null(ex_env(c, "PET_NNODES"));
	cJSON_Delete(list);
}

static void torchtune_commands(void **state)
{
	(void)state;
	const char *rt = RT_TUNE("torchtune-llama3.2-1b", "'nvidia.com/gpu':2");
	assert_tune(TJ_TUNE("torchtune-llama3.2-1b", ""), rt,
		    "'tune','run','--rdzv_endpoint=tj-node-0-0.tj:29500','full_finetune_distributed',"
		    "'--config','llama3_2/1B_full'");
	assert_tune(TJ_TUNE("torchtune-llama3.2-1b",
			    ",'resourcesPerNode':{'limits':{'nvidia.com/gpu':1}}"), rt,
		    "'tune','run','full_finetune_single_device','--config','llama3_2/1B_full_single_device'");
	assert_tune(TJ_TUNE("torchtune-llama3.2-1b", ",'args':['model.lora_attn_modules=[q_proj]']"),
		    rt, "'tune','run','--rdzv_endpoint=tj-node-0-0.tj:29500','lora_finetune_distributed',"
			"'--config','llama3_2/1B_lora'");
	assert_tune(TJ_TUNE("torchtune-llama3.2-1b",
			    ",'args':['model.lora_attn_modules=[q]','model.quantize_base=True'],"
			    "'resourcesPerNode':{'limits':{'nvidia.com/gpu':1}}"),
		    rt, "'tune','run','lora_finetune_single_device','--config',"
			"'llama3_2/1B_qlora_single_device'");
	/* DoRA turns QLoRA off */
	assert_tune(TJ_TUNE("torchtune-llama3.2-1b",
			    ",'args':['model.lora_attn_modules=[q]','model.quantize_base=true',"
			    "'model.use_dora=true']"),
		    rt, "'tune','run','--rdzv_endpoint=tj-node-0-0.tj:29500','lora_finetune_distributed',"
			"'--config','llama3_2/1B_lora'");
	assert_tune(TJ_TUNE("torchtune-llama3.3-70b", ",'numNodes':2"),
		    RT_TUNE("torchtune-llama3.3-70b", "'nvidia.com/gpu':8"),
		    "'tune','run','--rdzv_endpoint=tj-node-0-0.tj:29500','full_finetune_distributed',"
		    "'--config','llama3_3/70B_full_multinode'");
	/* no GPU: numProcPerNode from the CPUs; one process is single device */
	assert_tune(TJ_TUNE("torchtune-qwen2.5-1.5b", ",'numProcPerNode':1"),
		    RT_TUNE("torchtune-qwen2.5-1.5b", ""),
		    "'tune','run','full_finetune_single_device','--config','qwen2_5/1.5B_full_single_device'");
}

static void torchtune_only_for_tune_run(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ_TUNE("torchtune-llama3.2-1b", ",'args':['x']"),
				RT_TUNE("torchtune-llama3.2-1b", "'nvidia.com/gpu':2"), NULL, TP_OK);
	cJSON_Delete(list);
	/* ['tune','run','x'] is a plain command: kept, with the master env */
	list = ex_expand("{'metadata':{'name':'tj'},'spec':{'trainer':{'command':['tune','run','x']}}}",
			 RT_TUNE("torchtune-llama3.2-1b", "'nvidia.com/gpu':2"), NULL, TP_OK);
	const cJSON *c = ex_container(ex_job(list, "node"), "node");
	ex_assert_json(tp_get(c, "command"), "['tune','run','x']");
	assert_string_equal(ex_env(c, "PET_MASTER_ADDR"), "tj-node-0-0.tj");
	cJSON_Delete(list);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(coscheduling_pod_group),
		cmocka_unit_test(init_containers_count_as_upstream_does),
		cmocka_unit_test(volcano_pod_group),
		cmocka_unit_test(jax_env),
		cmocka_unit_test(xgboost_env),
		cmocka_unit_test(torchtune_commands),
		cmocka_unit_test(torchtune_only_for_tune_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

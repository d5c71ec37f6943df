/*
 * test_up_core.c — upstream's pkg/runtime/core cases, ported:
 * trainingruntime_test.go (TestTrainingRuntimeNewObjects, TestRuntimeInfo),
 * clustertrainingruntime_test.go and snapshot_test.go (TestGetRuntimeSnapshot)
 * at kubeflow/trainer@8c0f5059, each under its upstream name, in the
 * kubeflow profile. NewObjects is tp_expand: the runtime (or its snapshot)
 * looked up for the TrainJob, every plugin run, the JobSet and its
 * companions out; each case checks what upstream's expected objects differ
 * in from the runtime it starts with.
 */
#include "tests/unit/up_cases.h"
#include "tests/unit/test_expand.h"

#define KF TP_PROFILE_KUBEFLOW
#define ANCESTOR "trainer.kubeflow.org/trainjob-ancestor-step"

/* A lookup over a store that also answers for one ConfigMap (the runtime
 * snapshot), as the server's resolver asks the API server for it. */
struct cluster {
	tp_store *store;
	cJSON *configmap; /* or NULL */
};

static int cluster_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		       char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	struct cluster *c = ctx;
	if (k == TP_KIND_CONFIGMAP) {
		bool hit = c->configmap && !strcmp(tp_meta_name(c->configmap), name) &&
			   !strcmp(tp_meta_namespace(c->configmap), ns);
		*out = hit ? c->configmap : NULL;
	} else {
		*out = tp_store_get(c->store, k, ns, name);
	}
	return *out ? TP_OK : TP_ENOTFOUND;
}

/* NewObjects: expand tj with the runtime rt in the cluster (and the
 * snapshot cm, if any); all three are freed. The List, or NULL with *res. */
static cJSON *new_objects(cJSON *rt, cJSON *tj, cJSON *cm, tp_result **res_out)
{
	struct cluster c = { NULL, cm };
	assert_int_equal(tp_store_new(&c.store), TP_OK);
	if (rt)
		assert_int_equal(tp_store_put(c.store, rt), TP_OK);
	tp_lookup l = { cluster_get, NULL, &c };
	tp_options opt = { .profile = KF, .lookup = &l };
	tp_result *res = NULL;
	cJSON *out = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_expand(&opt, tj, &ex_key, &out, res);
	tp_store_free(c.store);
	cJSON_Delete(tj);
	cJSON_Delete(cm);
	if (res_out) {
		*res_out = res;
		return out;
	}
	if (rc || !tp_result_ok(res))
		fail_msg("expansion failed (%d): %s", rc, up_text(res));
	tp_result_free(res);
	return out;
}

#define RES "{'cpu':'1'}"
#define RUNTIME_CMD "['runtime']"

static cJSON *runtime(void)
{
	return up_training_runtime("default", "test-runtime");
}

static cJSON *trainjob(void)
{
	cJSON *tj = up_trainjob("default", "test-job", "TrainingRuntime", "test-runtime");
	up_set(tj, "metadata.uid", "'uid'");
	return tj;
}

/* The runtime with mlPolicy ml (NULL: none) and the node container of the
 * cases: test:runtime, command and args ["runtime"], one CPU. */
static cJSON *node_runtime(const char *ml)
{
	cJSON *rt = runtime();
	if (ml)
		up_set(rt, "spec.mlPolicy", ml);
	up_container(rt, "node", "node", "test:runtime", RUNTIME_CMD, RUNTIME_CMD, RES);
	return rt;
}

static const cJSON *container(const cJSON *l, const char *job, const char *name)
{
	return ex_container(ex_job(l, job), name);
}

static long long parallelism(const cJSON *l, const char *job)
{
	return ex_int(ex_job(l, job), "template.spec.parallelism");
}

/* ============================================ TestTrainingRuntimeNewObjects */

static void no_num_nodes_from_trainjob(void **state)
{
	(void)state;
	cJSON *rt = runtime();
	up_label(rt, "conflictLabel", "overridden");
	up_set(rt, "metadata.annotations", "{'conflictAnnotation':'overridden'}");
	up_set(rt, "spec.mlPolicy", "{'numNodes':100}");
	up_set(rt, "spec.podGroupPolicy", "{'coscheduling':{'scheduleTimeoutSeconds':120}}");
	up_container(rt, "dataset-initializer", "dataset-initializer", "test:runtime", RUNTIME_CMD,
		     RUNTIME_CMD, RES);
	up_container(rt, "model-initializer", "model-initializer", "test:runtime", RUNTIME_CMD,
		     RUNTIME_CMD, RES);
	up_container(rt, "node", "node", "test:runtime", RUNTIME_CMD, RUNTIME_CMD, RES);
	cJSON *tj = trainjob();
	up_set(tj, "spec.suspend", "true");
	up_set(tj, "spec.runtimePatches",
	       "[{'manager':'test.io/manager','trainingRuntimeSpec':{'template':{'metadata':"
	       "{'labels':{'conflictLabel':'override'},'annotations':{'conflictAnnotation':"
	       "'override'}}}}}]");
	up_set(tj, "spec.trainer", "{'numNodes':30}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	const cJSON *js = ex_item(l, 0);
	assert_true(tp_get_true(js, "spec.suspend"));
	assert_string_equal(ex_key_str(js, "metadata.labels", "conflictLabel"), "override");
	assert_string_equal(ex_key_str(js, "metadata.annotations", "conflictAnnotation"), "override");
	assert_int_equal(parallelism(l, "node"), 30);
	assert_int_equal(parallelism(l, "dataset-initializer"), 1);
	assert_string_equal(tp_get_str(container(l, "node", "node"), "image"), "test:runtime");
	assert_string_equal(ex_key_str(ex_job(l, "node"), "template.spec.template.metadata.labels",
				       "scheduling.x-k8s.io/pod-group"), "test-job");
	const cJSON *pg = ex_kind(l, "PodGroup");
	/* 32 pods = 30 trainer nodes + 2 initializers; one CPU each */
	assert_int_equal(ex_int(pg, "spec.minMember"), 32);
	ex_assert_json(tp_get(pg, "spec.minResources"), "{'cpu':'32'}");
	assert_int_equal(ex_int(pg, "spec.scheduleTimeoutSeconds"), 120);
	cJSON_Delete(l);
}

static void num_nodes_from_runtime(void **state)
{
	(void)state;
	cJSON *rt = node_runtime("{'numNodes':100}");
	up_env(rt, "node", "node", "[{'name':'TRAIN_JOB','value':'original'},{'name':'RUNTIME',"
				   "'value':'test:runtime'}]");
	cJSON *tj = trainjob();
	up_set(tj, "spec.trainer", "{'image':'test:trainjob','command':['trainjob'],'args':"
				   "['trainjob'],'resourcesPerNode':{'requests':" RES "},'env':"
				   "[{'name':'TRAIN_JOB','value':'override'},{'name':"
				   "'TRAIN_JOB_CUSTOM','value':'test:trainjob'}]}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	assert_int_equal(parallelism(l, "node"), 100);
	const cJSON *c = container(l, "node", "node");
	assert_string_equal(tp_get_str(c, "image"), "test:trainjob");
	ex_assert_json(tp_get(c, "command"), "['trainjob']");
	assert_string_equal(ex_env(c, "TRAIN_JOB"), "override");
	assert_string_equal(ex_env(c, "TRAIN_JOB_CUSTOM"), "test:trainjob");
	assert_string_equal(ex_env(c, "RUNTIME"), "test:runtime");
	assert_null(ex_kind(l, "PodGroup"));
	cJSON_Delete(l);
}

/* The runtime of the runtimePatches cases: init containers and a second
 * container in the node job. */
static cJSON *patch_runtime(void)
{
	cJSON *rt = runtime();
	up_set(rt, "spec.mlPolicy", "{'numNodes':100}");
	up_init_container(rt, "dataset-initializer", "override-init-container", "test:runtime");
	up_init_container(rt, "node", "override-init-container", "test:runtime");
	up_container(rt, "node", "node", "test:runtime", RUNTIME_CMD, RUNTIME_CMD, RES);
	up_container(rt, "node", "override-container", "test:runtime", RUNTIME_CMD, RUNTIME_CMD, RES);
	return rt;
}

static cJSON *patched_trainjob(const char *patches)
{
	cJSON *tj = trainjob();
	up_set(tj, "spec.trainer", "{'image':'test:trainjob','command':['trainjob'],'args':"
				   "['trainjob'],'resourcesPerNode':{'requests':" RES "}}");
	up_set(tj, "spec.runtimePatches", patches);
	return tj;
}

#define JOB_PATCH(mgr, job, pod)                                                                  \
	"{'manager':'" mgr "','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':'" \
	job "','template':{'spec':{'template':{'spec':" pod "}}}}]}}}}"
#define ZONES                                                                                   \
	"'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"         \
	"{'nodeSelectorTerms':[{'matchExpressions':[{'key':'topology.kubernetes.io/zone',"       \
	"'operator':'In','values':['antarctica-east1','antarctica-west1']}]}]}}}"

static void runtime_patches(void **state)
{
	(void)state;
	cJSON *l = new_objects(
		patch_runtime(),
		patched_trainjob(
			"[" JOB_PATCH("manager-1", "dataset-initializer",
				      "{'initContainers':[{'name':'override-init-container','env':"
				      "[{'name':'INIT_ENV','value':'override_init'},{'name':'NEW_VALUE',"
				      "'value':'from_overrides'}]}],'containers':[{'name':"
				      "'dataset-initializer','volumeMounts':[{'name':'initializer_secret',"
				      "'mountPath':'initializer_secret_mount_path'}]}]," ZONES ","
				      "'nodeSelector':{'node.kubernetes.io/instance-type':'p5.48xlarge'},"
				      "'schedulingGates':[{'name':'kueue.x-k8s.io/admission'}],"
				      "'tolerations':[{'key':'example.com/gpu','operator':'Exists','effect':"
				      "'NoSchedule'}],'volumes':[{'name':'initializer_secret','secret':"
				      "{'secretName':'initializer_secret_name'}}]}")
			"," JOB_PATCH("manager-2", "node",
				      "{'serviceAccountName':'override-sa','initContainers':[{'name':"
				      "'override-init-container','env':[{'name':'INIT_ENV','value':"
				      "'override_init'}]}],'containers':[{'name':'override-container',"
				      "'env':[{'name':'CONTAINER_ENV','value':'override_container'}]}],"
				      "'imagePullSecrets':[{'name':'registry-credential'}]}") "]"),
		NULL, NULL);
	const cJSON *ds = tp_get(ex_job(l, "dataset-initializer"), "template.spec.template.spec");
	const cJSON *init = cJSON_GetArrayItem(tp_get(ds, "initContainers"), 0);
	assert_string_equal(ex_env(init, "INIT_ENV"), "override_init");
	assert_string_equal(ex_env(init, "NEW_VALUE"), "from_overrides");
	assert_non_null(tp_find_named(tp_get(container(l, "dataset-initializer",
						       "dataset-initializer"), "volumeMounts"),
				      "name", "initializer_secret"));
	assert_string_equal(ex_key_str(ds, "nodeSelector", "node.kubernetes.io/instance-type"),
			    "p5.48xlarge");
	assert_non_null(tp_get(ds, "affinity.nodeAffinity"));
	assert_non_null(tp_find_named(tp_get(ds, "tolerations"), "key", "example.com/gpu"));
	assert_non_null(tp_find_named(tp_get(ds, "volumes"), "name", "initializer_secret"));
	const cJSON *node = tp_get(ex_job(l, "node"), "template.spec.template.spec");
	assert_string_equal(tp_get_str(node, "serviceAccountName"), "override-sa");
	assert_string_equal(ex_env(container(l, "node", "override-container"), "CONTAINER_ENV"),
			    "override_container");
	assert_non_null(tp_find_named(tp_get(node, "imagePullSecrets"), "name", "registry-credential"));
	/* the trainer's own settings are the TrainJob's */
	assert_string_equal(tp_get_str(container(l, "node", "node"), "image"), "test:trainjob");
	cJSON_Delete(l);
}

/* A patch without affinity leaves the template's. */
static void nil_affinity(void **state)
{
	(void)state;
	cJSON *rt = patch_runtime();
	up_set(up_job(rt, "node"), "template.spec.template.spec.affinity",
	       "{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{'topologyKey':"
	       "'kubernetes.io/hostname'}]}}");
	cJSON *l = new_objects(rt,
			       patched_trainjob("[" JOB_PATCH("manager-1", "dataset-initializer", "{}")
						"," JOB_PATCH("manager-2", "node", "{}") "]"),
			       NULL, NULL);
	assert_non_null(tp_get(ex_job(l, "node"), "template.spec.template.spec.affinity.podAffinity"));
	assert_null(tp_get(ex_job(l, "dataset-initializer"), "template.spec.template.spec.affinity"));
	cJSON_Delete(l);
}

static void security_context(void **state)
{
	(void)state;
	cJSON *rt = node_runtime("{'numNodes':100}");
	up_container(rt, "node", "sidecar", "test:runtime", RUNTIME_CMD, RUNTIME_CMD, RES);
	cJSON *l = new_objects(
		rt,
		patched_trainjob("[" JOB_PATCH("security-manager", "node",
					       "{'securityContext':{'fsGroup':2000,'runAsUser':1000,"
					       "'runAsGroup':3000,'runAsNonRoot':true},'containers':"
					       "[{'name':'sidecar','securityContext':{"
					       "'allowPrivilegeEscalation':false,"
					       "'readOnlyRootFilesystem':true}}]}") "]"),
		NULL, NULL);
	ex_assert_json(tp_get(ex_job(l, "node"), "template.spec.template.spec.securityContext"),
		       "{'fsGroup':2000,'runAsUser':1000,'runAsGroup':3000,'runAsNonRoot':true}");
	ex_assert_json(tp_get(container(l, "node", "sidecar"), "securityContext"),
		       "{'allowPrivilegeEscalation':false,'readOnlyRootFilesystem':true}");
	cJSON_Delete(l);
}

static void labels_annotations(void **state)
{
	(void)state;
	cJSON *l = new_objects(
		patch_runtime(),
		patched_trainjob(
			"[{'manager':'manager-1','trainingRuntimeSpec':{'template':{'spec':"
			"{'replicatedJobs':[{'name':'dataset-initializer','template':{'metadata':"
			"{'labels':{'job-k1':'job-v1'}},'spec':{'template':{'metadata':{'labels':"
			"{'k1':'v1'},'annotations':{'a1':'v1'}}}}}}]}}}},"
			"{'manager':'manager-2','trainingRuntimeSpec':{'template':{'spec':"
			"{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"
			"{'job-k2':'job-v2'}},'spec':{'template':{'metadata':{'labels':{'k2':'v2'},"
			"'annotations':{'a2':'v2'}}}}}}]}}}}]"),
		NULL, NULL);
	const cJSON *ds = ex_job(l, "dataset-initializer"), *node = ex_job(l, "node");
	assert_string_equal(ex_key_str(ds, "template.metadata.labels", "job-k1"), "job-v1");
	assert_string_equal(ex_key_str(ds, "template.metadata.labels", ANCESTOR),
			    "dataset-initializer");
	assert_string_equal(ex_key_str(ds, "template.spec.template.metadata.labels", "k1"), "v1");
	assert_string_equal(ex_key_str(ds, "template.spec.template.metadata.annotations", "a1"), "v1");
	assert_string_equal(ex_key_str(node, "template.metadata.labels", "job-k2"), "job-v2");
	assert_string_equal(ex_key_str(node, "template.spec.template.metadata.labels", "k2"), "v2");
	assert_string_equal(ex_key_str(node, "template.spec.template.metadata.annotations", "a2"),
			    "v2");
	assert_null(ex_key_str(node, "template.metadata.labels", "job-k1"));
	cJSON_Delete(l);
}

static void duplicate_patches(void **state)
{
	(void)state;
	cJSON *tj = trainjob();
	up_set(tj, "spec.runtimePatches",
	       "[" JOB_PATCH("manager-1", "node", "{'nodeSelector':{'node.kubernetes.io/instance-type':"
						  "'p5.48xlarge'}}")
	       "," JOB_PATCH("manager-1-dup", "node", "{'serviceAccountName':'test-sa'}") "]");
	cJSON *l = new_objects(node_runtime(NULL), tj, NULL, NULL);
	const cJSON *pod = tp_get(ex_job(l, "node"), "template.spec.template.spec");
	assert_string_equal(ex_key_str(pod, "nodeSelector", "node.kubernetes.io/instance-type"),
			    "p5.48xlarge");
	assert_string_equal(tp_get_str(pod, "serviceAccountName"), "test-sa");
	assert_int_equal(parallelism(l, "node"), 1);
	cJSON_Delete(l);
}

static void same_job_different_values(void **state)
{
	(void)state;
	cJSON *tj = trainjob();
	up_set(tj, "spec.runtimePatches",
	       "[" JOB_PATCH("manager-1", "node", "{'nodeSelector':{'node.kubernetes.io/instance-type':"
						  "'p5.48xlarge'}}")
	       "," JOB_PATCH("manager-2", "node", "{'nodeSelector':{'node.kubernetes.io/instance-type':"
						  "'p5en.48xlarge'}}") "]");
	cJSON *l = new_objects(node_runtime(NULL), tj, NULL, NULL);
	assert_string_equal(ex_key_str(tp_get(ex_job(l, "node"), "template.spec.template.spec"),
				       "nodeSelector", "node.kubernetes.io/instance-type"),
			    "p5en.48xlarge");
	cJSON_Delete(l);
}

static void initializers(void **state)
{
	(void)state;
	cJSON *rt = runtime();
	up_set(rt, "spec.mlPolicy", "{'numNodes':100}");
	up_container(rt, "dataset-initializer", "dataset-initializer", "test:runtime", RUNTIME_CMD,
		     RUNTIME_CMD, RES);
	up_container(rt, "model-initializer", "dataset-initializer", "test:runtime", RUNTIME_CMD,
		     RUNTIME_CMD, RES);
	up_container(rt, "node", "node", "test:runtime", RUNTIME_CMD, RUNTIME_CMD, RES);
	cJSON *tj = trainjob();
	up_set(tj, "spec.initializer",
	       "{'dataset':{'storageUri':'hf://trainjob-dataset','env':[{'name':'TRAIN_JOB','value':"
	       "'test:trainjob:dataset'}],'secretRef':{'name':'trainjob-secret-dataset'}},"
	       "'model':{'storageUri':'hf://trainjob-model','env':[{'name':'TRAIN_JOB','value':"
	       "'test:trainjob:model'}],'secretRef':{'name':'trainjob-secret-model'}}}");
	up_set(tj, "spec.trainer", "{}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	const cJSON *ds = container(l, "dataset-initializer", "dataset-initializer");
	assert_string_equal(ex_env(ds, "STORAGE_URI"), "hf://trainjob-dataset");
	assert_string_equal(ex_env(ds, "TRAIN_JOB"), "test:trainjob:dataset");
	ex_assert_json(tp_get(ds, "envFrom"), "[{'secretRef':{'name':'trainjob-secret-dataset'}}]");
	const cJSON *mi = container(l, "model-initializer", "model-initializer");
	assert_string_equal(ex_env(mi, "STORAGE_URI"), "hf://trainjob-model");
	assert_string_equal(ex_env(mi, "TRAIN_JOB"), "test:trainjob:model");
	ex_assert_json(tp_get(mi, "envFrom"), "[{'secretRef':{'name':'trainjob-secret-model'}}]");
	cJSON_Delete(l);
}

/* Torch: the runtime of the torch cases (dependsOn on the initializers). */
static cJSON *torch_runtime(const char *name, int nodes, const char *command)
{
	cJSON *rt = up_training_runtime("default", name);
	char ml[64];
	snprintf(ml, sizeof(ml), "{'numNodes':%d,'torch':{}}", nodes);
	up_set(rt, "spec.mlPolicy", ml);
	up_set(up_job(rt, "node"), "dependsOn",
	       "[{'name':'dataset-initializer','status':'Complete'},{'name':'model-initializer',"
	       "'status':'Complete'}]");
	up_container(rt, "node", "node", "test:runtime", command, RUNTIME_CMD, RES);
	return rt;
}

static void pet(const cJSON *c, const char *nodes, const char *nproc, bool master)
{
	assert_string_equal(ex_env(c, "PET_NNODES"), nodes);
	assert_string_equal(ex_env(c, "PET_NPROC_PER_NODE"), nproc);
	assert_string_equal(ex_env(c, "PET_NODE_RANK"), "(valueFrom)");
	if (master)
		assert_string_equal(ex_env(c, "PET_MASTER_ADDR"), "test-job-node-0-0.test-job");
	else
		assert_null(ex_env(c, "PET_MASTER_ADDR"));
	ex_assert_json(tp_get(c, "ports"), "[{'containerPort':29500}]");
}

static void torch_from_trainjob(void **state)
{
	(void)state;
	cJSON *tj = trainjob();
	up_set(tj, "spec.trainer", "{'numNodes':30,'numProcPerNode':3}");
	cJSON *l = new_objects(torch_runtime("test-runtime", 100, RUNTIME_CMD), tj, NULL, NULL);
	assert_int_equal(parallelism(l, "node"), 30);
	pet(container(l, "node", "node"), "30", "3", true);
	ex_assert_json(tp_get(ex_job(l, "node"), "dependsOn"),
		       "[{'name':'dataset-initializer','status':'Complete'},{'name':"
		       "'model-initializer','status':'Complete'}]");
	cJSON_Delete(l);
}

static void torch_from_runtime(void **state)
{
	(void)state;
	cJSON *rt = torch_runtime("test-runtime", 100, RUNTIME_CMD);
	up_env(rt, "node", "node", "[{'name':'TRAIN_JOB','value':'original'},{'name':'RUNTIME',"
				   "'value':'test:runtime'}]");
	cJSON *tj = trainjob();
	up_set(tj, "spec.trainer", "{'image':'test:trainjob','command':['trainjob'],'args':"
				   "['trainjob'],'resourcesPerNode':{'requests':" RES "},'env':"
				   "[{'name':'TRAIN_JOB','value':'override'},{'name':"
				   "'TRAIN_JOB_CUSTOM','value':'test:trainjob'}]}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	const cJSON *c = container(l, "node", "node");
	pet(c, "100", "1", true);
	assert_string_equal(ex_env(c, "TRAIN_JOB"), "override");
	assert_string_equal(ex_env(c, "RUNTIME"), "test:runtime");
	cJSON_Delete(l);
}

/* TorchTune: the runtime's command holds the recipe and the overrides. */
#define TUNE_RT_CMD(rdzv, recipe, config, data)                                                 \
	"['tune','run'," rdzv "'" recipe "','--config','" config "'," data                       \
	"'output_dir=/workspace/output','tokenizer.path=/workspace/model/original/tokenizer.model',"\
	"'checkpointer.checkpoint_dir=/workspace/model']"
#define DATA "'dataset=torchtune.datasets.instruct_dataset','dataset.source=parquet',"         \
	"'dataset.data_dir=/workspace/dataset/data',"
#define TUNE_ARGS(extra)                                                                        \
	"['dataset.data_dir=/workspace/dataset/data','model.apply_lora_to_mlp=True',"           \
	"'model.lora_attn_modules=[q_proj,k_proj,v_proj,output_proj]'," extra                    \
	"'dataset=torchtune.datasets.instruct_dataset','dataset.source=parquet']"
#define OVERRIDES                                                                               \
	"'output_dir=/workspace/output','tokenizer.path=/workspace/model/original/tokenizer.model',"\
	"'checkpointer.checkpoint_dir=/workspace/model'"

static void tune_case(const char *args, const char *gpu, const char *want_command)
{
	cJSON *rt = torch_runtime("torchtune-llama3.2-1b", 1,
				  TUNE_RT_CMD("'--rdzv_endpoint=localhost:29500',",
					      "full_finetune_distributed", "llama3_2/1B_full", DATA));
	cJSON *tj = up_trainjob("default", "test-job", "TrainingRuntime", "torchtune-llama3.2-1b");
	up_set(tj, "metadata.uid", "'uid'");
	char trainer[1024];
	snprintf(trainer, sizeof(trainer),
		 "{'numNodes':1,'image':'test:trainjob','command':['tune','run'],'args':%s,"
		 "'resourcesPerNode':{'requests':{'cpu':'1','example.com/gpu':'%s'}}}", args, gpu);
	up_set(tj, "spec.trainer", trainer);
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	const cJSON *c = container(l, "node", "node");
	ex_assert_json(tp_get(c, "command"), want_command);
	ex_assert_json(tp_get(c, "args"), args);
	assert_null(ex_env(c, "PET_MASTER_ADDR"));
	cJSON_Delete(l);
}

static void torchtune_full(void **state)
{
	(void)state;
	cJSON *rt = torch_runtime("torchtune-llama3.3-70b", 100,
				  TUNE_RT_CMD("", "full_finetune_distributed",
					      "llama3_3/70B_full_multinode", ""));
	/* the runtime of this case names the model's own directories */
	up_container(rt, "node", "node", "test:runtime",
		     "['tune','run','full_finetune_distributed','--config',"
		     "'llama3_3/70B_full_multinode','output_dir=/workspace/model/llama3_3/70B',"
		     "'tokenizer.path=/workspace/model/original/tokenizer.model',"
		     "'checkpointer.checkpoint_dir=/workspace/model']",
		     RUNTIME_CMD, RES);
	cJSON *tj = up_trainjob("default", "test-job", "TrainingRuntime", "torchtune-llama3.3-70b");
	up_set(tj, "metadata.uid", "'uid'");
	up_set(tj, "spec.trainer",
	       "{'image':'test:trainjob','command':['tune','run'],'args':['dtype=fp16',"
	       "'batch_size=32','epochs=10','loss=torchtune.modules.loss.CEWithChunkedOutputLoss'],"
	       "'resourcesPerNode':{'requests':" RES "},'numNodes':30,'numProcPerNode':3}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	const cJSON *c = container(l, "node", "node");
	ex_assert_json(tp_get(c, "command"),
		       "['tune','run','--rdzv_endpoint=test-job-node-0-0.test-job:29500',"
		       "'full_finetune_distributed','--config','llama3_3/70B_full_multinode',"
		       "'output_dir=/workspace/model/llama3_3/70B',"
		       "'tokenizer.path=/workspace/model/original/tokenizer.model',"
		       "'checkpointer.checkpoint_dir=/workspace/model']");
	pet(c, "30", "3", false);
	assert_int_equal(parallelism(l, "node"), 30);
	cJSON_Delete(l);
}

/* The LoRA, QLoRA and DoRA cases: TrainJob args, GPUs, the command. */
static const char *const tune_rows[][3] = {
	{ TUNE_ARGS(""), "2",
	  "['tune','run','--rdzv_endpoint=test-job-node-0-0.test-job:29500',"
	  "'lora_finetune_distributed','--config','llama3_2/1B_lora'," OVERRIDES "]" },
	{ TUNE_ARGS("'model.quantize_base=True',"), "1",
	  "['tune','run','lora_finetune_single_device','--config',"
	  "'llama3_2/1B_qlora_single_device'," OVERRIDES "]" },
	{ TUNE_ARGS("'model.quantize_base=True','model.use_dora=True',"), "2",
	  "['tune','run','--rdzv_endpoint=test-job-node-0-0.test-job:29500',"
	  "'lora_finetune_distributed','--config','llama3_2/1B_lora'," OVERRIDES "]" },
};

static void torchtune_row(void **state)
{
	const char *const *row = *state;
	tune_case(row[0], row[1], row[2]);
}

static void openmpi(void **state)
{
	(void)state;
	cJSON *rt = node_runtime("{'numNodes':1,'mpi':{'numProcPerNode':1,'mpiImplementation':"
				 "'OpenMPI','sshAuthMountPath':'/root/.ssh','runLauncherAsNode':"
				 "false}}");
	up_launcher_replica(rt);
	up_replicas(rt, 1, "launcher");
	cJSON *tj = trainjob();
	up_set(tj, "spec.trainer", "{'numNodes':2,'numProcPerNode':8}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	assert_string_equal(tp_get_str(ex_kind(l, "ConfigMap"), "data.hostfile"),
			    "test-job-node-0-0.test-job slots=8\ntest-job-node-0-1.test-job slots=8\n");
	const cJSON *s = ex_kind(l, "Secret");
	assert_string_equal(tp_get_str(s, "metadata.name"), "test-job-mpi-ssh-auth");
	assert_true(tp_get_true(s, "immutable"));
	assert_string_equal(tp_get_str(s, "type"), "kubernetes.io/ssh-auth");
	const cJSON *lc = container(l, "launcher", "node");
	assert_string_equal(ex_env(lc, "OMPI_MCA_orte_default_hostfile"), "/etc/mpi/hostfile");
	assert_string_equal(ex_env(lc, "OMPI_MCA_orte_keep_fqdn_hostnames"), "true");
	assert_string_equal(ex_env(lc, "OMPI_MCA_orte_set_default_slots"), "8");
	assert_string_equal(ex_env(lc, "OMPI_MCA_plm_rsh_args"), "-o ConnectionAttempts=10");
	ex_assert_json(tp_get(lc, "volumeMounts"),
		       "[{'name':'mpi-ssh-auth','mountPath':'/root/.ssh'},"
		       "{'name':'mpi-hostfile','mountPath':'/etc/mpi'}]");
	assert_int_equal(parallelism(l, "node"), 2);
	cJSON_Delete(l);
}

static void merged_gpu(void **state)
{
	(void)state;
	cJSON *rt = node_runtime("{'numNodes':1}");
	cJSON *tj = trainjob();
	up_set(tj, "spec.trainer", "{'resourcesPerNode':{'requests':{'nvidia.com/gpu':'4'}}}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	ex_assert_json(tp_get(container(l, "node", "node"), "resources"),
		       "{'requests':{'cpu':'1','nvidia.com/gpu':'4'}}");
	cJSON_Delete(l);
}

static void missing_runtime(void **state)
{
	(void)state;
	tp_result *res = NULL;
	cJSON *l = new_objects(NULL, trainjob(), NULL, &res);
	assert_null(l);
	assert_true(tt_has_error(res, "spec.runtimeRef",
				 "trainingruntimes.trainer.kubeflow.org \"test-runtime\" not found"));
	tp_result_free(res);
}

/* TestRuntimeInfo: a template that is no JobSet spec is refused, naming
 * the field, where upstream answers "unsupported runtimeTemplateSpec". */
static void invalid_template(void **state)
{
	(void)state;
	cJSON *rt = runtime();
	up_set(rt, "spec.template.spec", "'invalid-template-type'");
	tp_result *res = NULL;
	cJSON *l = new_objects(rt, trainjob(), NULL, &res);
	assert_null(l);
	assert_false(tp_result_ok(res));
	assert_non_null(strstr(up_text(res), "spec.template.spec"));
	tp_result_free(res);
}

/* ======================================== TestClusterTrainingRuntimeNewObjects */

static void ctr_new_objects(void **state)
{
	(void)state;
	cJSON *rt = up_cluster_training_runtime("test-runtime");
	up_set(rt, "spec.mlPolicy", "{'numNodes':100}");
	up_set(rt, "spec.podGroupPolicy", "{'coscheduling':{'scheduleTimeoutSeconds':120}}");
	up_job_label(rt, ANCESTOR, "trainer", "node");
	up_job_label(rt, ANCESTOR, "dataset-initializer", "dataset-initializer");
	up_job_label(rt, ANCESTOR, "model-initializer", "model-initializer");
	up_container(rt, "node", "node", "test:runtime", RUNTIME_CMD, RUNTIME_CMD, RES);
	cJSON *tj = up_trainjob("default", "test-job", "ClusterTrainingRuntime", "test-runtime");
	up_set(tj, "metadata.uid", "'uid'");
	up_set(tj, "spec.suspend", "true");
	up_set(tj, "spec.trainer", "{'image':'test:trainjob','command':['trainjob'],'args':"
				   "['trainjob'],'resourcesPerNode':{'requests':" RES "}}");
	cJSON *l = new_objects(rt, tj, NULL, NULL);
	assert_int_equal(parallelism(l, "node"), 100);
	assert_string_equal(tp_get_str(container(l, "node", "node"), "image"), "test:trainjob");
	const cJSON *pg = ex_kind(l, "PodGroup");
	assert_int_equal(ex_int(pg, "spec.minMember"), 102);
	ex_assert_json(tp_get(pg, "spec.minResources"), "{'cpu':'100'}");
	cJSON_Delete(l);
}

static void ctr_missing(void **state)
{
	(void)state;
	tp_result *res = NULL;
	cJSON *tj = up_trainjob("default", "test-job", "ClusterTrainingRuntime", "test-runtime");
	cJSON *l = new_objects(NULL, tj, NULL, &res);
	assert_null(l);
	assert_true(tt_has_error(res, "spec.RuntimeRef",
				 "clustertrainingruntimes.trainer.kubeflow.org \"test-runtime\" not "
				 "found"));
	tp_result_free(res);
}

/* ===================================================== TestGetRuntimeSnapshot */

#define SNAP_UID "uid-test-job-runtime-snapshot"

static cJSON *snapshot(const char *owner_uid, const char *data)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'test-job-runtime-snapshot',"
		 "'namespace':'default'%s%s%s},'data':%s}",
		 owner_uid ? ",'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1',"
			     "'kind':'TrainJob','name':'test-job','uid':'" : "",
		 owner_uid ? owner_uid : "", owner_uid ? "','controller':true}]" : "", data);
	return tt_jsq(buf);
}

static const char *runtime_yaml(const char *kind, const char *name, const char *image)
{
	static char y[1024];
	snprintf(y, sizeof(y),
		 "{'runtime':'apiVersion: trainer.kubeflow.org/v1alpha1\\nkind: %s\\nmetadata:\\n"
		 "  name: %s\\n  namespace: default\\nspec:\\n  template:\\n    spec:\\n"
		 "      replicatedJobs:\\n      - name: node\\n        template:\\n"
		 "          metadata: {labels: {" ANCESTOR ": trainer}}\\n"
		 "          spec: {template: {spec: {containers: [{name: node, image: %s}]}}}\\n'}",
		 kind, name, image);
	return y;
}

/* The TrainJob of kind, uid SNAP_UID, with the cluster's runtime "test-runtime" at
 * image "live" and the snapshot cm. */
static cJSON *with_snapshot(const char *kind, cJSON *cm, tp_result **res)
{
	cJSON *rt = !strcmp(kind, "TrainingRuntime") ? up_training_runtime("default", "test-runtime")
						     : up_cluster_training_runtime("test-runtime");
	up_job_label(rt, ANCESTOR, "trainer", "node");
	up_container(rt, "node", "node", "live", NULL, NULL, NULL);
	cJSON *tj = up_trainjob("default", "test-job", kind, "test-runtime");
	up_set(tj, "metadata.uid", "'" SNAP_UID "'");
	return new_objects(rt, tj, cm, res);
}

/* The snapshot of the TrainJob's kind wins over the live runtime. */
static void snap_found(void **state)
{
	const char *kind = *state;
	cJSON *l = with_snapshot(kind, snapshot(SNAP_UID, runtime_yaml(kind, "test-runtime",
								       "snapshot")),
				 NULL);
	assert_string_equal(tp_get_str(container(l, "node", "node"), "image"), "snapshot");
	cJSON_Delete(l);
}

static void snap_none(void **state)
{
	(void)state;
	cJSON *l = with_snapshot("ClusterTrainingRuntime", NULL, NULL);
	assert_string_equal(tp_get_str(container(l, "node", "node"), "image"), "live");
	cJSON_Delete(l);
}

static void snap_fails(cJSON *cm, const char *kind, const char *want)
{
	tp_result *res = NULL;
	cJSON *l = with_snapshot(kind, cm, &res);
	assert_null(l);
	if (!tt_has_error(res, "spec.runtimeRef", want))
		fail_msg("want %s, got %s", want, up_text(res));
	assert_non_null(strstr(up_text(res), "unable to get runtime snapshot: invalid runtime "
					     "snapshot: "));
	tp_result_free(res);
}

static void snap_not_owned(void **state)
{
	(void)state;
	snap_fails(snapshot(NULL, runtime_yaml("TrainingRuntime", "test-runtime", "s")),
		   "TrainingRuntime", "a snapshot configmap exists but is owned by another object");
}

static void snap_no_key(void **state)
{
	(void)state;
	snap_fails(snapshot(SNAP_UID, "{}"), "ClusterTrainingRuntime",
		   "snapshot ConfigMap missing \"runtime\" data key");
}

static void snap_bad_yaml(void **state)
{
	(void)state;
	snap_fails(snapshot(SNAP_UID, "{'runtime':'invalid: yaml: content:\\n  - broken'}"),
		   "ClusterTrainingRuntime", "unable to unmarshal the snapshot");
}

static void snap_wrong_name(void **state)
{
	(void)state;
	snap_fails(snapshot(SNAP_UID, runtime_yaml("TrainingRuntime", "other-runtime", "s")),
		   "TrainingRuntime",
		   "the snapshot refers to the wrong runtime: expecting a runtime with name, api group "
		   "and kind of \"test-runtime\", \"trainer.kubeflow.org\", \"TrainingRuntime\" but "
		   "found runtime with name, api group and kind of \"other-runtime\", "
		   "\"trainer.kubeflow.org\", \"TrainingRuntime\"");
}

static void snap_wrong_kind(void **state)
{
	(void)state;
	snap_fails(snapshot(SNAP_UID, runtime_yaml("ClusterTrainingRuntime", "test-runtime", "s")),
		   "TrainingRuntime",
		   "expecting a runtime with name, api group and kind of \"test-runtime\", "
		   "\"trainer.kubeflow.org\", \"TrainingRuntime\" but found runtime with name, api "
		   "group and kind of \"test-runtime\", \"trainer.kubeflow.org\", "
		   "\"ClusterTrainingRuntime\"");
}

#define T "TestTrainingRuntimeNewObjects/"

int main(void)
{
	tp_json_init();
	static const up_case cases[] = {
		UP_CASE(T "succeeded to build PodGroup and JobSet with NumNodes from the TrainJob and "
			  "container from the Runtime.", no_num_nodes_from_trainjob),
		UP_CASE(T "succeeded to build JobSet with NumNodes from the Runtime and container from "
			  "the TrainJob.", num_nodes_from_runtime),
		UP_CASE(T "succeeded to build JobSet with TrainJob's RuntimePatches.", runtime_patches),
		UP_CASE(T "succeeded to build JobSet with nil affinity overrides from the TrainJob's "
			  "RuntimePatches.", nil_affinity),
		UP_CASE(T "succeeded to build JobSet with securityContext overrides from the TrainJob's "
			  "RuntimePatches.", security_context),
		UP_CASE(T "succeeded to build JobSet with labels and annotations overrides from the "
			  "TrainJob's RuntimePatches.", labels_annotations),
		UP_CASE(T "succeeded to build JobSet with TrainJob's RuntimePatches containing duplicate "
			  "patches for same job", duplicate_patches),
		UP_CASE(T "succeeded to build JobSet with TrainJob's RuntimePatches targeting the same job "
			  "with different values", same_job_different_values),
		UP_CASE(T "succeeded to build JobSet with dataset and model initializer from the TrainJob.",
			initializers),
		UP_CASE(T "succeeded to build JobSet with Torch values from the TrainJob",
			torch_from_trainjob),
		UP_CASE(T "succeeded to build JobSet with Torch values from the Runtime and envs.",
			torch_from_runtime),
		UP_CASE(T "succeeded to build JobSet with TorchTune values from the TrainJob",
			torchtune_full),
		UP_ROW(T "succeeded to build Jobset with TorchTune values from the TrainJob (LoRA)",
			torchtune_row, tune_rows[0]),
		UP_ROW(T "succeeded to build Jobset with TorchTune values from the TrainJob (QLoRA)",
			torchtune_row, tune_rows[1]),
		UP_ROW(T "succeeded to build Jobset with TorchTune values from the TrainJob (DoRA)",
			torchtune_row, tune_rows[2]),
		UP_CASE(T "succeeded to build JobSet with OpenMPI values from the TrainJob", openmpi),
		UP_CASE(T "merged resourcesPerNode keeps runtime resources when trainjob sets gpu only",
			merged_gpu),
		UP_CASE(T "missing trainingRuntime resource", missing_runtime),
		UP_CASE("TestRuntimeInfo/invalid template type returns error", invalid_template),
		UP_CASE("TestClusterTrainingRuntimeNewObjects/succeeded to build PodGroup and JobSet with "
			"NumNodes from the Runtime and container from the Trainer.", ctr_new_objects),
		UP_CASE("TestClusterTrainingRuntimeNewObjects/missing trainingRuntime resource",
			ctr_missing),
		UP_ROW("TestGetRuntimeSnapshot/successfully retrieves ClusterTrainingRuntime snapshot from "
			"ConfigMap", snap_found, "ClusterTrainingRuntime"),
		UP_ROW("TestGetRuntimeSnapshot/successfully retrieves TrainingRuntime snapshot from "
			"ConfigMap", snap_found, "TrainingRuntime"),
		UP_CASE("TestGetRuntimeSnapshot/returns not found error when ConfigMap does not exist",
			snap_none),
		UP_CASE("TestGetRuntimeSnapshot/returns error when ConfigMap is not owned and controlled by "
			"the TrainJob", snap_not_owned),
		UP_CASE("TestGetRuntimeSnapshot/returns error when ConfigMap is missing runtime data key",
			snap_no_key),
		UP_CASE("TestGetRuntimeSnapshot/returns error when ConfigMap contains invalid YAML",
			snap_bad_yaml),
		UP_CASE("TestGetRuntimeSnapshot/returns error when snapshot runtime name does not match "
			"RuntimeRef", snap_wrong_name),
		UP_CASE("TestGetRuntimeSnapshot/returns error when snapshot runtime kind does not match "
			"RuntimeRef", snap_wrong_kind),
	};
	return UP_RUN("upstream runtime core", cases);
}

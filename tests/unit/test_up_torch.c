/*
 * test_up_torch.c — upstream's torch plugin cases, ported:
 * pkg/runtime/framework/plugins/torch/torch_test.go (TestTorchEnforceMLPolicy,
 * TestTorchValidate) and torchtune_test.go at kubeflow/trainer@8c0f5059, each
 * under its upstream name, in the kubeflow profile.
 *
 * EnforceMLPolicy cases run the whole expansion with a runtime holding the
 * Info's pod sets, and check the trainer's env, port and count; Validate
 * cases run the TrainJob validator with the plugin's rules alone; the
 * TorchTune helpers are called directly (policy/plugins/torch.h).
 */
#include "tests/unit/up_cases.h"
#include "tests/unit/test_expand.h"
#include "policy/plugins/torch.h"

#define KF TP_PROFILE_KUBEFLOW
#define ANCESTOR "'trainer.kubeflow.org/trainjob-ancestor-step'"
#define SETS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* A ClusterTrainingRuntime "name" with mlPolicy ml and the trainer job
 * "node" whose pod spec is pod. */
static cJSON *torch_rt(const char *name, const char *ml, const char *pod)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'%s'},'spec':{'mlPolicy':%s,'template':{'spec':{'replicatedJobs':"
		 "[{'name':'node','template':{'metadata':{'labels':{" ANCESTOR ":'trainer'}},'spec':"
		 "{'template':{'spec':%s}}}}]}}}}",
		 name, ml, pod);
	return tt_jsq(buf);
}

static cJSON *tj(const char *name, const char *runtime, const char *trainer)
{
	cJSON *t = up_trainjob("default", name, "ClusterTrainingRuntime", runtime);
	if (trainer)
		up_set(t, "spec.trainer", trainer);
	return t;
}

/* Expand (both freed); NULL with the result kept in *res_out when it fails. */
static cJSON *expand(cJSON *t, cJSON *rt, tp_result **res_out)
{
	tp_result *res = NULL;
	cJSON *out = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_expand_with_runtime(&ex_kubeflow, t, rt, &ex_key, &out, res);
	cJSON_Delete(t);
	cJSON_Delete(rt);
	if (res_out) {
		*res_out = res;
		return out;
	}
	if (rc || !tp_result_ok(res))
		fail_msg("expansion failed (%d): %s", rc, up_text(res));
	tp_result_free(res);
	return out;
}

static const cJSON *node_container(const cJSON *l)
{
	return ex_container(ex_job(l, "node"), "node");
}

/* The PET_* environment upstream expects on a container. */
static void assert_pet(const cJSON *c, const char *nnodes, const char *nproc, const char *master)
{
	assert_string_equal(ex_env(c, "PET_NNODES"), nnodes);
	assert_string_equal(ex_env(c, "PET_NPROC_PER_NODE"), nproc);
	assert_string_equal(ex_env(c, "PET_NODE_RANK"), "(valueFrom)");
	if (master) {
		assert_string_equal(ex_env(c, "PET_MASTER_ADDR"), master);
		assert_string_equal(ex_env(c, "PET_MASTER_PORT"), "29500");
	} else {
		assert_null(ex_env(c, "PET_MASTER_ADDR"));
		assert_null(ex_env(c, "PET_MASTER_PORT"));
	}
}

#define NODE_POD "{'containers':[{'name':'node'}]}"

/* ============================ TestTorchEnforceMLPolicy (27 of 28) */

/* Without mlPolicy, or with one that has no torch, nothing of torch's. */
static void e_no_policy(void **state)
{
	const char *ml = *state;
	cJSON *l = expand(tj("trainJob", "rt", "{'numNodes':2}"), torch_rt("rt", ml, NODE_POD), NULL);
	assert_null(ex_env(node_container(l), "PET_NNODES"));
	assert_null(tp_get(node_container(l), "ports"));
	cJSON_Delete(l);
}

static void e_num_nodes_from_trainjob(void **state)
{
	(void)state;
	cJSON *l = expand(tj("trainJob", "rt", "{'numNodes':2}"),
			  torch_rt("rt", "{'numNodes':1,'torch':{}}", NODE_POD), NULL);
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 2);
	assert_pet(node_container(l), "2", "1", "trainJob-node-0-0.trainJob");
	ex_assert_json(tp_get(node_container(l), "ports"), "[{'containerPort':29500}]");
	cJSON_Delete(l);
}

/* The nproc_per_node cases: the trainer's resourcesPerNode.requests. */
static void nproc_is(const char *name, const char *trainer, const char *want)
{
	char master[128];
	snprintf(master, sizeof(master), "%s-node-0-0.%s", name, name);
	cJSON *l = expand(tj(name, "rt", trainer), torch_rt("rt", "{'numNodes':1,'torch':{}}", NODE_POD),
			  NULL);
	assert_pet(node_container(l), "1", want, master);
	cJSON_Delete(l);
}

#define REQ(r) "{'image':'test:image','resourcesPerNode':{'requests':" r "}}"

/* The nproc_per_node cases: TrainJob name, trainer, PET_NPROC_PER_NODE. */
struct nproc_row {
	const char *job, *trainer, *want;
};

static const struct nproc_row nproc_rows[] = {
	{ "test-job", REQ("{'cpu':'4'}"), "4" },
	{ "test-job", "{'image':'test:image'}", "1" },
	{ "test-job", REQ("{'cpu':'2'}"), "2" },
	{ "test-job", REQ("{'cpu':'3'}"), "3" },
	{ "test-job", REQ("{'cpu':'2.5'}"), "3" },
	{ "test-job", REQ("{'cpu':'0.7'}"), "1" },
	{ "test-job", REQ("{'example.com/gpu':'2'}"), "auto" },
	{ "test-job", "{'numProcPerNode':3,'image':'test:image','resourcesPerNode':{'requests':"
		      "{'cpu':'8'}}}", "3" },
	{ "test-job", REQ("{'cpu':'2500m'}"), "3" },
	{ "cpu-job", REQ("{'cpu':'4'}"), "4" },
	{ "cpu-gpu-job", REQ("{'cpu':'6','example.com/gpu':'2'}"), "auto" },
	{ "cpu-frac-job", REQ("{'cpu':'3.7'}"), "4" },
};

static void e_nproc(void **state)
{
	const struct nproc_row *r = *state;
	nproc_is(r->job, r->trainer, r->want);
}

static void e_multi_node_multi_gpu(void **state)
{
	(void)state;
	cJSON *l = expand(tj("gpu-job", "rt",
			     "{'numNodes':4,'image':'pytorch/pytorch:2.0.0-cuda11.7-cudnn8-runtime',"
			     "'resourcesPerNode':{'requests':{'cpu':'8','memory':'16Gi',"
			     "'example.com/gpu':'4'}}}"),
			  torch_rt("rt", "{'numNodes':2,'torch':{}}", NODE_POD), NULL);
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 4);
	assert_pet(node_container(l), "4", "auto", "gpu-job-node-0-0.gpu-job");
	cJSON_Delete(l);
}

/* TorchTune: PET_* without the master address (the command carries the
 * rendezvous endpoint), the port, and the `tune run` command. */
#define TUNE_ARGS                                                                               \
	"['dtype=fp16','batch_size=32','epochs=10',"                                            \
	"'loss=torchtune.modules.loss.CEWithChunkedOutputLoss']"

static cJSON *tune(const char *runtime, const char *counts, const char *gpus, int rt_nodes)
{
	char trainer[1024], ml[64];
	snprintf(trainer, sizeof(trainer),
		 "{%s'image':'ghcr.io/kubeflow/trainer/torchtune-trainer','command':['tune','run'],"
		 "'args':" TUNE_ARGS ",'resourcesPerNode':{'requests':{'cpu':'8','memory':'16Gi',"
		 "'example.com/gpu':'%s'}}}",
		 counts, gpus);
	snprintf(ml, sizeof(ml), "{'numNodes':%d,'torch':{}}", rt_nodes);
	return expand(tj("torchtune-job", runtime, trainer), torch_rt(runtime, ml, NODE_POD), NULL);
}

static void e_tune_multi_devices(void **state)
{
	(void)state;
	cJSON *l = tune("torchtune-llama3.2-1b", "'numNodes':1,", "4", 1);
	assert_pet(node_container(l), "1", "auto", NULL);
	ex_assert_json(tp_get(node_container(l), "command"),
		       "['tune','run','--rdzv_endpoint=torchtune-job-node-0-0.torchtune-job:29500',"
		       "'full_finetune_distributed','--config','llama3_2/1B_full']");
	cJSON_Delete(l);
}

static void e_tune_single_device(void **state)
{
	(void)state;
	cJSON *l = tune("torchtune-llama3.2-1b", "'numNodes':1,'numProcPerNode':1,", "1", 1);
	assert_pet(node_container(l), "1", "1", NULL);
	ex_assert_json(tp_get(node_container(l), "command"),
		       "['tune','run','full_finetune_single_device','--config',"
		       "'llama3_2/1B_full_single_device']");
	cJSON_Delete(l);
}

static void e_tune_multi_nodes(void **state)
{
	(void)state;
	cJSON *l = tune("torchtune-llama3.3-70b", "'numNodes':2,'numProcPerNode':8,", "8", 2);
	assert_pet(node_container(l), "2", "8", NULL);
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 2);
	ex_assert_json(tp_get(node_container(l), "command"),
		       "['tune','run','--rdzv_endpoint=torchtune-job-node-0-0.torchtune-job:29500',"
		       "'full_finetune_distributed','--config','llama3_3/70B_full_multinode']");
	cJSON_Delete(l);
}

/* envInjection: the named containers (init or regular) get PET_* with the
 * master address; others are left as they were. */
#define INJECT(targets) "{'numNodes':1,'torch':{'envInjection':{'targets':" targets "}}}"

static void e_inject_init_container(void **state)
{
	(void)state;
	cJSON *l = expand(tj("test-job", "rt", "{'numNodes':2}"),
			  torch_rt("rt", INJECT("[{'jobName':'node','containerNames':['preflight-check']}]"),
				   "{'initContainers':[{'name':'preflight-check'}],'containers':"
				   "[{'name':'node'}]}"),
			  NULL);
	const cJSON *ic = tp_find_named(tp_get(ex_job(l, "node"), "template.spec.template.spec."
							      "initContainers"),
					"name", "preflight-check");
	assert_pet(ic, "2", "1", "test-job-node-0-0.test-job");
	assert_pet(node_container(l), "2", "1", "test-job-node-0-0.test-job");
	cJSON_Delete(l);
}

static void e_inject_missing(const char *targets, const char *pod, const char *want)
{
	tp_result *res = NULL;
	char ml[512];
	snprintf(ml, sizeof(ml), "{'numNodes':1,'torch':{'envInjection':{'targets':%s}}}", targets);
	cJSON *l = expand(tj("test-job", "rt", "{}"), torch_rt("rt", ml, pod), &res);
	assert_null(l);
	if (!tt_has_error(res, "spec.runtimeRef", want))
		fail_msg("want %s, got %s", want, up_text(res));
	tp_result_free(res);
}

static void e_inject_missing_container(void **state)
{
	(void)state;
	e_inject_missing("[{'jobName':'node','containerNames':['non-existent-container']}]",
			 "{'initContainers':[{'name':'preflight-check'}],'containers':[{'name':'node'}]}",
			 "envInjection target podSet \"node\" container \"non-existent-container\" not "
			 "found in runtime template");
}

static void e_inject_tune(void **state)
{
	(void)state;
	cJSON *l = expand(tj("test-job", "torchtune-llama3.3-70b",
			     "{'numNodes':2,'command':['tune','run'],'args':['dtype=fp16'],"
			     "'resourcesPerNode':{'requests':{'cpu':'8','example.com/gpu':'4'}}}"),
			  torch_rt("torchtune-llama3.3-70b",
				   INJECT("[{'jobName':'node','containerNames':['preflight-check']}]"),
				   "{'initContainers':[{'name':'preflight-check'}],'containers':"
				   "[{'name':'node'}]}"),
			  NULL);
	const cJSON *ic = tp_find_named(tp_get(ex_job(l, "node"), "template.spec.template.spec."
							      "initContainers"),
					"name", "preflight-check");
	/* the injected container always gets the master address */
	assert_pet(ic, "2", "auto", "test-job-node-0-0.test-job");
	assert_pet(node_container(l), "2", "auto", NULL);
	cJSON_Delete(l);
}

static void e_inject_two_in_one_job(void **state)
{
	(void)state;
	cJSON *l = expand(tj("test-job", "rt", "{'numNodes':2}"),
			  torch_rt("rt", INJECT("[{'jobName':'node','containerNames':['nccl-check',"
						"'driver-check']}]"),
				   "{'initContainers':[{'name':'nccl-check'},{'name':'driver-check'}],"
				   "'containers':[{'name':'node'}]}"),
			  NULL);
	const cJSON *ics = tp_get(ex_job(l, "node"), "template.spec.template.spec.initContainers");
	assert_pet(tp_find_named(ics, "name", "nccl-check"), "2", "1", "test-job-node-0-0.test-job");
	assert_pet(tp_find_named(ics, "name", "driver-check"), "2", "1", "test-job-node-0-0.test-job");
	cJSON_Delete(l);
}

static void e_inject_sidecar(void **state)
{
	(void)state;
	cJSON *l = expand(tj("test-job", "rt", "{}"),
			  torch_rt("rt", INJECT("[{'jobName':'node','containerNames':['sidecar']}]"),
				   "{'containers':[{'name':'sidecar'},{'name':'node'}]}"),
			  NULL);
	assert_pet(ex_container(ex_job(l, "node"), "sidecar"), "1", "1", "test-job-node-0-0.test-job");
	assert_pet(node_container(l), "1", "1", "test-job-node-0-0.test-job");
	cJSON_Delete(l);
}

static void e_inject_empty_targets(void **state)
{
	(void)state;
	cJSON *l = expand(tj("test-job", "rt", "{}"),
			  torch_rt("rt", INJECT("[]"),
				   "{'initContainers':[{'name':'preflight-check'}],'containers':"
				   "[{'name':'node'}]}"),
			  NULL);
	ex_assert_json(tp_get(ex_job(l, "node"), "template.spec.template.spec.initContainers"),
		       "[{'name':'preflight-check'}]");
	assert_pet(node_container(l), "1", "1", "test-job-node-0-0.test-job");
	cJSON_Delete(l);
}

static void e_inject_missing_job(void **state)
{
	(void)state;
	e_inject_missing("[{'jobName':'missing-job','containerNames':['preflight-check']}]", NODE_POD,
			 "envInjection target podSet \"missing-job\" container \"preflight-check\" not "
			 "found in runtime template");
}

static void e_inject_two_jobs(void **state)
{
	(void)state;
	cJSON *rt = torch_rt("rt", INJECT("[{'jobName':'node','containerNames':['sidecar']},"
					  "{'jobName':'worker','containerNames':['worker-check']}]"),
			     "{'initContainers':[{'name':'preflight-check'}],'containers':"
			     "[{'name':'sidecar'},{'name':'node'}]}");
	cJSON_AddItemToArray(up_jobs(rt),
			     tt_jsq("{'name':'worker','template':{'spec':{'template':{'spec':"
				    "{'initContainers':[{'name':'worker-check'}],'containers':"
				    "[{'name':'worker'}]}}}}}"));
	cJSON *l = expand(tj("test-job", "rt", "{'numNodes':2}"), rt, NULL);
	const char *m = "test-job-node-0-0.test-job";
	assert_pet(ex_container(ex_job(l, "node"), "sidecar"), "2", "1", m);
	assert_pet(node_container(l), "2", "1", m);
	ex_assert_json(tp_get(ex_job(l, "node"), "template.spec.template.spec.initContainers"),
		       "[{'name':'preflight-check'}]");
	assert_pet(tp_find_named(tp_get(ex_job(l, "worker"), "template.spec.template.spec."
							     "initContainers"),
				 "name", "worker-check"),
		   "2", "1", m);
	ex_assert_json(ex_container(ex_job(l, "worker"), "worker"), "{'name':'worker'}");
	cJSON_Delete(l);
}

/* ================================================ TestTorchValidate (14 of 15) */

static tp_result *validate(cJSON *rt, cJSON *t)
{
	cJSON *cluster[] = { rt, NULL };
	tp_result *r = up_validate_failing(KF, TP_OP_CREATE, t, NULL, cluster, TP_KIND_UNKNOWN, true);
	cJSON_Delete(rt);
	cJSON_Delete(t);
	return r;
}

static void v_no_ml_policy(void **state)
{
	(void)state;
	up_allowed(validate(torch_rt("rt", "null", NODE_POD),
			    tj("test", "rt", "{'env':[{'name':'PET_NNODES','value':'1'}]}")));
}

static void v_no_torch_policy(void **state)
{
	(void)state;
	up_allowed(validate(torch_rt("rt", "{}", NODE_POD),
			    tj("test", "rt", "{'env':[{'name':'PET_NNODES','value':'1'}]}")));
}

static void v_inject_target_missing(void **state)
{
	(void)state;
	tp_result *r = validate(torch_rt("rt", INJECT("[{'jobName':'node','containerNames':"
						      "['missing-container']}]"), NODE_POD),
				tj("test", "rt", NULL));
	assert_int_equal(tp_result_error_count(r), 1);
	assert_string_equal(tp_result_error_at(r, 0)->value,
			    "{\"jobName\":\"node\",\"containerNames\":[\"missing-container\"]}");
	up_denied(r, "spec.runtimeRef", "envInjection target podSet \"node\" container "
					"\"missing-container\" not found in runtime template");
}

static void v_no_num_proc(void **state)
{
	(void)state;
	up_allowed(validate(torch_rt("rt", "{'torch':{}}", NODE_POD), tj("test", "rt", "{}")));
}

static void v_valid_env(void **state)
{
	(void)state;
	up_allowed(validate(torch_rt("rt", "{'torch':{}}", NODE_POD),
			    tj("test", "rt", "{'env':[{'name':'test','value':'value'},"
					     "{'name':'test2','value':'value'}]}")));
}

static void v_reserved_env(void **state)
{
	(void)state;
	up_denied(validate(torch_rt("rt", "{'torch':{}}", NODE_POD),
			   tj("test", "rt", "{'env':[{'name':'test','value':'value'},"
					    "{'name':'PET_NPROC_PER_NODE','value':'1'}]}")),
		  "spec.trainer.env",
		  "must not have reserved envs, invalid envs configured: [PET_NPROC_PER_NODE]");
}

/* TorchTune's rules: a runtime named after the model, `tune run`. */
static tp_result *tune_validate(const char *runtime, int nodes, const char *args, const char *gpus)
{
	char trainer[1024];
	snprintf(trainer, sizeof(trainer),
		 "{'numNodes':%d,'image':'ghcr.io/kubeflow/trainer/torchtune-trainer','command':"
		 "['tune','run'],'args':%s,'resourcesPerNode':{'requests':%s}}",
		 nodes, args, gpus);
	return validate(torch_rt(runtime, "{'torch':{}}", NODE_POD), tj("test", runtime, trainer));
}

#define LORA "'model.lora_attn_modules=[q_proj, v_proj, output_proj]'"
#define QLORA LORA ",'model.quantize_base=True'"

static void v_tune_unsupported_model(void **state)
{
	(void)state;
	up_denied(tune_validate("torchtune-llama3.1-70b", 1, "[]", "{}"), "spec.runtimeRef.name",
		  "must have a supported pretrained model, invalid model configured: llama3_1/70B");
}

static void v_tune_multi_node_model(void **state)
{
	(void)state;
	up_denied(tune_validate("torchtune-llama3.2-3b", 2, "[]", "{}"), "spec.trainer.numNodes",
		  "must be 1 for llama3_2/3B model");
}

static void v_tune_qlora_qwen(void **state)
{
	(void)state;
	up_denied(tune_validate("torchtune-qwen2.5-1.5b", 1, "[" QLORA "]", "{}"),
		  "spec.runtimeRef.name", "QLoRA is not supported for qwen2_5/1.5B model");
}

static void v_tune_qlora_devices(void **state)
{
	(void)state;
	tp_result *r = tune_validate("torchtune-llama3.2-1b", 1, "[" QLORA "]",
				     "{'example.com/gpu':'2'}");
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "spec.trainer.numProcPerNode",
				 "must be auto or 1 for llama3_2/1B model when using QLoRA"));
	up_denied(r, "spec.trainer.resourcesPerNode",
		  "must have gpu resource with value 1 for llama3_2/1B model when using QLoRA");
}

static void v_tune_lora_multi_node(void **state)
{
	(void)state;
	up_denied(tune_validate("torchtune-llama3.3-70b", 2, "[" LORA "]", "{}"),
		  "spec.trainer.numNodes",
		  "LoRA fine-tuning is not supported for multi-node training in TorchTune");
}

static void v_tune_lora_single_node(void **state)
{
	(void)state;
	up_allowed(tune_validate("torchtune-llama3.3-70b", 1, "[" LORA "]", "{}"));
}

static void v_tune_immutable(void **state)
{
	(void)state;
	up_denied(tune_validate("torchtune-llama3.2-1b", 1, "['output_dir=/custom/output']", "{}"),
		  "spec.trainer.args[0]", "must not set immutable config \"output_dir\" in trainer "
					  "args; it is managed by the runtime");
}

static void v_tune_immutables(void **state)
{
	(void)state;
	tp_result *r = tune_validate("torchtune-llama3.2-1b", 1,
				     "['output_dir=custom-output','tokenizer.path=/some/path']", "{}");
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "spec.trainer.args[0]", "immutable config \"output_dir\""));
	up_denied(r, "spec.trainer.args[1]", "immutable config \"tokenizer.path\"");
}

/* ================================================ torchtune_test.go (27) */

/* TestGetModelFromRuntimeRef: runtime name → model. */
static const char *const model_rows[][2] = {
	{ "torchtune-llama3.2-1b", "llama3_2/1B" },
	{ "torchtune-qwen2.5-1.5b", "qwen2_5/1.5B" },
	{ "torchtune-llama3.2", "" },
	{ "torchtune-llama3.2-1b-extra", "" },
	{ "", "" },
};

static void m_model(void **state)
{
	const char *const *row = *state;
	char out[64];
	tp__torchtune_model(row[0], out, sizeof(out));
	assert_string_equal(out, row[1]);
}

/* isLoraConfigEnabled / isUseQLoraFinetune through the recipe's flags. */
static tp_tune_recipe recipe_of(const char *args, long long nodes, const char *nproc, long long gpu)
{
	cJSON *a = args ? tt_jsq(args) : NULL;
	tp_tune_recipe r;
	tp__torchtune_recipe(nodes, nproc, gpu, a, &r);
	cJSON_Delete(a);
	return r;
}

/* TestIsLoraConfigEnabled / TestIsUseQLoraFinetune: args → flag. */
struct flag_row {
	const char *args;
	bool qlora; /* which flag: QLoRA, else LoRA */
	bool want;
};

static const struct flag_row flag_rows[] = {
	{ "['batch_size=32','model.lora_attn_modules=[\\'q_proj\\',\\'v_proj\\']']", false, true },
	{ "['batch_size=32','epochs=10']", false, false },
	{ NULL, false, false },
	{ "['model.quantize_base=True']", true, true },
	{ "['model.quantize_base=False']", true, false },
	{ "['model.quantize_base=True','model.use_dora=True']", true, false },
	{ "['model.quantize_base=True','model.use_dora=False']", true, true },
	{ "['batch_size=32']", true, false },
	{ NULL, true, false },
};

static void f_flag(void **state)
{
	const struct flag_row *row = *state;
	tp_tune_recipe r = recipe_of(row->args, 1, "auto", 1);
	assert_int_equal(row->qlora ? r.qlora : r.lora, row->want);
}

/* Upstream trims a boolean's value as strings.TrimSpace does. */
static void f_trimmed(void **state)
{
	(void)state;
	assert_true(recipe_of("['model.quantize_base= TRUE ']", 1, "auto", 1).qlora);
	assert_false(recipe_of("['model.quantize_base=TRUE!']", 1, "auto", 1).qlora);
}

#define LORA_ARGS "['model.lora_attn_modules=[\\'q_proj\\']']"
#define QLORA_ARGS "['model.quantize_base=True']"

/* TestGetRecipeAndConfig: nodes, numProcPerNode, GPUs, args → recipe. */
struct recipe_row {
	long long nodes;
	const char *nproc;
	long long gpu;
	const char *args, *recipe, *suffix;
};

static const struct recipe_row recipe_rows[] = {
	{ 1, "auto", 1, NULL, "full_finetune_single_device", "_full_single_device" },
	{ 1, "auto", 1, LORA_ARGS, "lora_finetune_single_device", "_lora_single_device" },
	{ 1, "auto", 1, QLORA_ARGS, "lora_finetune_single_device", "_qlora_single_device" },
	{ 1, "auto", 4, NULL, "full_finetune_distributed", "_full" },
	{ 1, "auto", 4, LORA_ARGS, "lora_finetune_distributed", "_lora" },
	{ 1, "auto", 4, QLORA_ARGS, "lora_finetune_distributed", "_qlora" },
	{ 2, "auto", 8, NULL, "full_finetune_distributed", "_full_multinode" },
	{ 1, "1", 4, NULL, "full_finetune_single_device", "_full_single_device" },
	{ 1, "4", 4, NULL, "full_finetune_distributed", "_full" },
};

static void r_recipe(void **state)
{
	const struct recipe_row *row = *state;
	tp_tune_recipe r = recipe_of(row->args, row->nodes, row->nproc, row->gpu);
	assert_string_equal(r.recipe, row->recipe);
	assert_string_equal(r.suffix, row->suffix);
}

/* extractOverridesFromRuntime, through the `tune run` command the
 * expansion writes: the immutable items of the runtime's trainer node
 * container's command come last; a trainer node container without them
 * stands for upstream's cases where nothing is found. */
#define IMMUTABLE "'command':['output_dir=/out','tokenizer.path=/tok','batch_size=32']"
#define TRAINER_JOB(pod)                                                                         \
	"{'name':'node','template':{'metadata':{'labels':{" ANCESTOR ":'trainer'}},'spec':"     \
	"{'template':{'spec':" pod "}}}}"

static void overrides_are(const char *jobs, const char *want_tail)
{
	char rt[2048];
	snprintf(rt, sizeof(rt),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'torchtune-llama3.2-1b'},'spec':{'mlPolicy':{'torch':{}},"
		 "'template':{'spec':{'replicatedJobs':%s}}}}",
		 jobs);
	cJSON *l = expand(tj("t", "torchtune-llama3.2-1b",
			     "{'command':['tune','run'],'resourcesPerNode':{'requests':"
			     "{'example.com/gpu':'1'}}}"),
			  tt_jsq(rt), NULL);
	char *got = cJSON_PrintUnformatted(tp_get(node_container(l), "command"));
	size_t n = strlen(got), m = strlen(want_tail);
	if (n < m || strcmp(got + n - m, want_tail))
		fail_msg("command %s does not end in %s", got, want_tail);
	cJSON_free(got);
	cJSON_Delete(l);
}

#define NO_OVERRIDES "\"--config\",\"llama3_2/1B_full_single_device\"]"

static void o_no_template(void **state)
{
	(void)state;
	overrides_are("[" TRAINER_JOB("{'containers':[{'name':'node'}]}") "]", NO_OVERRIDES);
}

static void o_trainer_node(void **state)
{
	(void)state;
	overrides_are("[" TRAINER_JOB("{'containers':[{'name':'node'," IMMUTABLE "}]}") "]",
		      "\"llama3_2/1B_full_single_device\",\"output_dir=/out\",\"tokenizer.path=/tok\"]");
}

static void o_other_ancestor(void **state)
{
	(void)state;
	overrides_are("[" TRAINER_JOB("{'containers':[{'name':'node'}]}") ",{'name':'other',"
		      "'template':{'metadata':{'labels':{" ANCESTOR ":'other'}},'spec':{'template':"
		      "{'spec':{'containers':[{'name':'node'," IMMUTABLE "}]}}}}}]",
		      NO_OVERRIDES);
}

static void o_other_container(void **state)
{
	(void)state;
	overrides_are("[" TRAINER_JOB("{'containers':[{'name':'node'},{'name':'sidecar'," IMMUTABLE
				      "}]}") "]",
		      NO_OVERRIDES);
}

int main(void)
{
	tp_json_init();
	static const up_case cases[] = {
		UP_ROW("TestTorchEnforceMLPolicy/no action when mlPolicySource is nil", e_no_policy, "null"),
		UP_ROW("TestTorchEnforceMLPolicy/no action when mlPolicySource torch is null", e_no_policy, "{}"),
		UP_CASE("TestTorchEnforceMLPolicy/trainJob numNodes is respected rather than mlPolicy one",
			e_num_nodes_from_trainjob),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with CPU limit", e_nproc, &nproc_rows[0]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with no CPU resources", e_nproc, &nproc_rows[1]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with low CPU limit", e_nproc, &nproc_rows[2]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with CPU request but no limit", e_nproc, &nproc_rows[3]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with millicore CPU limit", e_nproc, &nproc_rows[4]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with fractional CPU limit", e_nproc, &nproc_rows[5]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with GPU request should remain auto", e_nproc, &nproc_rows[6]),
		UP_ROW("TestTorchEnforceMLPolicy/explicitly set nproc_per_node should be preserved", e_nproc, &nproc_rows[7]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto with millicore CPU limit in m format", e_nproc, &nproc_rows[8]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=cpu with CPU limit", e_nproc, &nproc_rows[9]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=auto resolves to GPU count when GPU "
			"resources present", e_nproc, &nproc_rows[10]),
		UP_ROW("TestTorchEnforceMLPolicy/nproc_per_node=cpu with fractional CPU", e_nproc, &nproc_rows[11]),
		UP_CASE("TestTorchEnforceMLPolicy/multi-node multi-GPU training with complete info",
			e_multi_node_multi_gpu),
		UP_CASE("TestTorchEnforceMLPolicy/multi-devices full fine-tuning with torchtune",
			e_tune_multi_devices),
		UP_CASE("TestTorchEnforceMLPolicy/single-device full fine-tuning with torchtune",
			e_tune_single_device),
		UP_CASE("TestTorchEnforceMLPolicy/multi-nodes full fine-tuning with torchtune",
			e_tune_multi_nodes),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection with init container", e_inject_init_container),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection target container does not exist",
			e_inject_missing_container),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection with torchtune command", e_inject_tune),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection with multiple containers in same target",
			e_inject_two_in_one_job),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection with sidecar (regular container)",
			e_inject_sidecar),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection with empty targets (no additional injection)",
			e_inject_empty_targets),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection target job does not exist",
			e_inject_missing_job),
		UP_CASE("TestTorchEnforceMLPolicy/envInjection with multiple targets in different jobs "
			"leaves unlisted init container unchanged", e_inject_two_jobs),
		UP_CASE("TestTorchValidate/no action when info does not have MLPolicySource", v_no_ml_policy),
		UP_CASE("TestTorchValidate/no action when info has MLPolicySource but no Torch policy",
			v_no_torch_policy),
		UP_CASE("TestTorchValidate/envInjection target container does not exist",
			v_inject_target_missing),
		UP_CASE("TestTorchValidate/no action when info does not have numProcPerNode", v_no_num_proc),
		UP_CASE("TestTorchValidate/valid environment variable present", v_valid_env),
		UP_CASE("TestTorchValidate/reserved environment variable present", v_reserved_env),
		UP_CASE("TestTorchValidate/unsupported pretrained model", v_tune_unsupported_model),
		UP_CASE("TestTorchValidate/multi-node mode is only enabled for Llama-3.3-70b",
			v_tune_multi_node_model),
		UP_CASE("TestTorchValidate/qlora is not supported for qwen in torchtune", v_tune_qlora_qwen),
		UP_CASE("TestTorchValidate/muti-devices qlora is not supported for llama3.2-1b in torchtune",
			v_tune_qlora_devices),
		UP_CASE("TestTorchValidate/lora is not supported for multi-node training in torchtune",
			v_tune_lora_multi_node),
		UP_CASE("TestTorchValidate/lora is supported for single-node training in torchtune",
			v_tune_lora_single_node),
		UP_CASE("TestTorchValidate/immutable runtime config must not be set in trainer args",
			v_tune_immutable),
		UP_CASE("TestTorchValidate/multiple immutable runtime configs must not be set in trainer "
			"args", v_tune_immutables),
		UP_ROW("TestGetModelFromRuntimeRef/llama3.2 1B is normalized", m_model, model_rows[0]),
		UP_ROW("TestGetModelFromRuntimeRef/qwen2.5 1.5B is normalized", m_model, model_rows[1]),
		UP_ROW("TestGetModelFromRuntimeRef/fewer than three parts returns empty", m_model, model_rows[2]),
		UP_ROW("TestGetModelFromRuntimeRef/more than three parts returns empty", m_model, model_rows[3]),
		UP_ROW("TestGetModelFromRuntimeRef/empty name returns empty", m_model, model_rows[4]),
		UP_ROW("TestIsLoraConfigEnabled/lora attn modules present", f_flag, &flag_rows[0]),
		UP_ROW("TestIsLoraConfigEnabled/no lora args", f_flag, &flag_rows[1]),
		UP_ROW("TestIsLoraConfigEnabled/empty args", f_flag, &flag_rows[2]),
		UP_ROW("TestIsUseQLoraFinetune/quantize base enabled", f_flag, &flag_rows[3]),
		UP_ROW("TestIsUseQLoraFinetune/quantize base explicitly disabled", f_flag, &flag_rows[4]),
		UP_ROW("TestIsUseQLoraFinetune/dora short-circuits even when quantize base is set", f_flag, &flag_rows[5]),
		UP_ROW("TestIsUseQLoraFinetune/dora explicitly disabled with quantize base set", f_flag, &flag_rows[6]),
		UP_ROW("TestIsUseQLoraFinetune/neither quantize base nor dora", f_flag, &flag_rows[7]),
		UP_ROW("TestIsUseQLoraFinetune/empty args", f_flag, &flag_rows[8]),
		UP_CASE("isUseQLoraFinetune trims the value as upstream", f_trimmed),
		UP_ROW("TestGetRecipeAndConfig/single device full", r_recipe, &recipe_rows[0]),
		UP_ROW("TestGetRecipeAndConfig/single device lora", r_recipe, &recipe_rows[1]),
		UP_ROW("TestGetRecipeAndConfig/single device qlora", r_recipe, &recipe_rows[2]),
		UP_ROW("TestGetRecipeAndConfig/single node multi-gpu full", r_recipe, &recipe_rows[3]),
		UP_ROW("TestGetRecipeAndConfig/single node multi-gpu lora", r_recipe, &recipe_rows[4]),
		UP_ROW("TestGetRecipeAndConfig/single node multi-gpu qlora", r_recipe, &recipe_rows[5]),
		UP_ROW("TestGetRecipeAndConfig/multi-node full", r_recipe, &recipe_rows[6]),
		UP_ROW("TestGetRecipeAndConfig/numProcPerNode=1 forces single device even with multiple "
			"gpus", r_recipe, &recipe_rows[7]),
		UP_ROW("TestGetRecipeAndConfig/numProcPerNode>1 uses distributed", r_recipe, &recipe_rows[8]),
		UP_CASE("TestExtractOverridesFromRuntime/no jobset template", o_no_template),
		UP_CASE("TestExtractOverridesFromRuntime/trainer node container returns only immutable "
			"configs", o_trainer_node),
		UP_CASE("TestExtractOverridesFromRuntime/non-trainer ancestor is ignored", o_other_ancestor),
		UP_CASE("TestExtractOverridesFromRuntime/non-node container is ignored", o_other_container),
	};
	return UP_RUN("upstream torch plugin", cases);
}

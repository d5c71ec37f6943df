/*
 * test_torchtune.c — TorchTune's TrainJob rules, one branch at a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/tj_fixtures.h"

/* store, res, setup and teardown: tj_fixtures.h (TJ_GROUP_STATE). */
TJ_GROUP_STATE

/* A "tune run" TrainJob on runtime ref with more trainer members. */
static tp_result *tune(const char *ref, const char *trainer_extra)
{
	char spec[2048];
	snprintf(spec, sizeof(spec), "\"trainer\":{\"command\":[\"tune\",\"run\"]%s%s}",
		 *trainer_extra ? "," : "", trainer_extra);
	cJSON *j = tj_job("ft", "ClusterTrainingRuntime", ref, spec);
	tp_options opt = { .profile = TP_PROFILE_KUBEFLOW, .store = store };
	tp_result_clear(res);
	tp_store_rdlock(store);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, j, NULL, res), TP_OK);
	tp_store_unlock(store);
	cJSON_Delete(j);
	tt_dump(res);
	return res;
}

#define GPU1 "\"resourcesPerNode\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}"
#define GPU4 "\"resourcesPerNode\":{\"limits\":{\"nvidia.com/gpu\":4}}"
/* docs/kubeflow-upstream.md §5.2: LoRA = an arg naming model.lora_attn_modules;
 * QLoRA = model.quantize_base true (any case) without a true model.use_dora. */
#define QLORA "\"args\":[\"model.lora_attn_modules=[q_proj,v_proj]\",\"model.quantize_base=True\"]"
#define LORA "\"args\":[\"model.lora_attn_modules=[q_proj,v_proj]\"]"
#define DORA "\"args\":[\"model.quantize_base=true\",\"model.use_dora=True\"]"

static void supported_models(void **state)
{
	(void)state;
	assert_true(tp_result_ok(tune("torchtune-llama3.2-1b", "")));
	assert_true(tp_result_ok(tune("torchtune-qwen2.5-1.5b", "")));
	tp_result *r = tune("torchtune-gpt-2b", "");
	assert_int_equal(tp_result_error_count(r), 1);
	assert_true(tt_has_error(r, "spec.runtimeRef.name", "must have a supported pretrained model, "
				 "invalid model configured: gpt/2B"));
	/* Not "tune run" exactly: no TorchTune rules at all. */
	cJSON *j = tj_job("ft", "ClusterTrainingRuntime", "torchtune-gpt-2b",
			  "\"trainer\":{\"command\":[\"tune\",\"run\",\"x\"]}");
	tp_options opt = { .profile = TP_PROFILE_KUBEFLOW, .store = store };
	tp_result_clear(res);
	tp_store_rdlock(store);
	tp_validate_trainjob(&opt, TP_OP_CREATE, j, NULL, res);
	tp_store_unlock(store);
	cJSON_Delete(j);
	assert_true(tp_result_ok(res));
}

static void multi_node(void **state)
{
	(void)state;
	tp_result *r = tune("torchtune-llama3.2-3b", "\"numNodes\":2");
	assert_int_equal(tp_result_error_count(r), 1);
	assert_true(tt_has_error(r, "spec.trainer.numNodes", "must be 1 for llama3_2/3B model"));
	assert_true(tp_result_ok(tune("torchtune-llama3.3-70b", "\"numNodes\":4")));
	/* LoRA on several nodes, even for the one multi-node model. */
	r = tune("torchtune-llama3.3-70b", "\"numNodes\":2," LORA);
	assert_int_equal(tp_result_error_count(r), 1);
	assert_true(tt_has_error(r, "spec.trainer.numNodes", "LoRA fine-tuning is not supported for "
				 "multi-node training in TorchTune"));
	assert_true(tp_result_ok(tune("torchtune-llama3.3-70b", "\"numNodes\":1," LORA)));
}

static void qlora(void **state)
{
	(void)state;
	tp_result *r = tune("torchtune-qwen2.5-1.5b", GPU1 "," QLORA);
	assert_int_equal(tp_result_error_count(r), 1);
	assert_true(tt_has_error(r, "spec.runtimeRef.name", "QLoRA is not supported for "
				 "qwen2_5/1.5B model"));
	/* Small llama, QLoRA on 4 GPUs: not single device, two errors. */
	r = tune("torchtune-llama3.2-1b", GPU4 "," QLORA);
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "spec.trainer.numProcPerNode", "must be auto or 1 for "
				 "llama3_2/1B model when using QLoRA"));
	assert_true(tt_has_error(r, "spec.trainer.resourcesPerNode", "must have gpu resource with "
				 "value 1 for llama3_2/1B model when using QLoRA"));
	/* One GPU, one process: the single-device QLoRA config, allowed. */
	assert_true(tp_result_ok(tune("torchtune-llama3.2-1b", GPU1 "," QLORA)));
	assert_true(tp_result_ok(tune("torchtune-llama3.2-3b", "\"numProcPerNode\":1," GPU1 ","
				      QLORA)));
	/* One process and no GPU is a single device too (nproc == 1 or gpu == 1). */
	assert_true(tp_result_ok(tune("torchtune-llama3.2-1b", "\"numProcPerNode\":1," QLORA)));
	/* Two processes on 4 GPUs: distributed QLoRA, refused for small llama. */
	r = tune("torchtune-llama3.2-3b", "\"numProcPerNode\":2," GPU4 "," QLORA);
	assert_int_equal(tp_result_error_count(r), 2);
	/* LoRA without quantization: no QLoRA rule. */
	assert_true(tp_result_ok(tune("torchtune-qwen2.5-1.5b", GPU4 "," LORA)));
	/* DoRA turns QLoRA off: qwen is fine then. */
	assert_true(tp_result_ok(tune("torchtune-qwen2.5-1.5b", GPU4 "," DORA)));
}

static void immutable_args(void **state)
{
	(void)state;
	tp_result *r = tune("torchtune-llama3.2-1b", "\"args\":[\"epochs=2\",\"output_dir=/x\","
			    "\"tokenizer.path=/t\",\"checkpointer.checkpoint_dir=/c\","
			    "\"tokenizer.merges_file=/m\",\"output_dir_extra=1\"]");
	assert_int_equal(tp_result_error_count(r), 4);
	assert_true(tt_has_error(r, "spec.trainer.args[1]", "must not set immutable config "
				 "\"output_dir\" in trainer args; it is managed by the runtime"));
	assert_true(tt_has_error(r, "spec.trainer.args[2]", "\"tokenizer.path\""));
	assert_true(tt_has_error(r, "spec.trainer.args[3]", "\"checkpointer.checkpoint_dir\""));
	assert_true(tt_has_error(r, "spec.trainer.args[4]", "\"tokenizer.merges_file\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(supported_models),
		cmocka_unit_test(multi_node),
		cmocka_unit_test(qlora),
		cmocka_unit_test(immutable_args),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

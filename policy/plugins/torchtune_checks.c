/*
 * plugins/torchtune_checks.c — TorchTune's TrainJob rules (upstream plugins/torch/torchtune.go),
 * run by the Torch plugin when trainer.command is exactly ["tune", "run"].
 *
 * The model name and the recipe config come from plugins/torch_facts.c, the code the
 * expansion builds the `tune run` command with (kubeflow-upstream.md §5.2),
 * so a config admission refuses is exactly the config the JobSet would run.
 */
#include "policy/admission/trainjob.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/plugins/torch_facts.h"

static const char *const supported_models[] = {
	"llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B",
};
#define MULTI_NODE_MODEL "llama3_3/70B"

static const char *const immutable_keys[] = {
	"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file",
};

static bool model_supported(const char *m)
{
	for (size_t i = 0; i < sizeof(supported_models) / sizeof(*supported_models); i++)
		if (!strcmp(m, supported_models[i]))
			return true;
	return false;
}

/* The recipe as the expansion resolves it; nodes as the rules count them
 * (trainer.numNodes, default 1). */
static void resolve_recipe(const tp_tj_ctx *ctx, long long nodes, tp_tune_recipe *r)
{
	const cJSON *trainer = tp_get_object(ctx->job, "spec.trainer");
	const cJSON *resources = tp_trainer_resources(trainer, ctx->runtime);
	long long gpu = tp_gpu_count(resources);
	char nproc[64];
	tp_torch_nproc(trainer, tp_get_object(ctx->runtime, "spec.mlPolicy.torch"), resources, gpu,
		       nproc, sizeof(nproc));
	tp_torchtune_recipe(nodes, nproc, gpu, tp_get_array(trainer, "args"), r);
}

/* Invalid at path, showing the TrainJob's value there. */
static int invalid(tp_tj_ctx *ctx, const char *path, const char *fmt, ...) TP_PRINTF(3, 4);
static int invalid(tp_tj_ctx *ctx, const char *path, const char *fmt, ...)
{
	const cJSON *v = tp_get(ctx->job, path);
	char detail[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return tp_result_add(ctx->res, TP_FIELD_INVALID, path,
			     v ? tp_result_value(ctx->res, v) : "null", "%s", detail);
}

static bool small_llama(const char *model)
{
	return !strcmp(model, "llama3_2/1B") || !strcmp(model, "llama3_2/3B");
}

static int check_qlora(tp_tj_ctx *ctx, const char *model, const char *cfg)
{
	if (!strstr(cfg, "_qlora"))
		return TP_OK;
	if (!strncmp(model, "qwen", 4))
		return invalid(ctx, "spec.runtimeRef.name", "QLoRA is not supported for %s model",
			       model);
	if (strstr(cfg, "_qlora_single_device") || !small_llama(model))
		return TP_OK;
	int rc = invalid(ctx, "spec.trainer.numProcPerNode",
			 "must be auto or 1 for %s model when using QLoRA", model);
	if (!rc)
		rc = invalid(ctx, "spec.trainer.resourcesPerNode",
			     "must have gpu resource with value 1 for %s model when using QLoRA",
			     model);
	return rc;
}

static const char *immutable_key(const char *arg, char *key, size_t n)
{
	size_t len = strcspn(arg, "=");
	if (len >= n)
		return NULL;
	memcpy(key, arg, len);
	key[len] = '\0';
	for (size_t i = 0; i < sizeof(immutable_keys) / sizeof(*immutable_keys); i++)
		if (!strcmp(key, immutable_keys[i]))
			return key;
	return NULL;
}

static int check_args(tp_tj_ctx *ctx)
{
	const cJSON *args = tp_get_array(ctx->job, "spec.trainer.args");
	int i = 0, rc = TP_OK;
	for (const cJSON *a = args ? args->child : NULL; a && !rc; a = a->next, i++) {
		char key[64], path[64];
		if (!cJSON_IsString(a) || !immutable_key(a->valuestring, key, sizeof(key)))
			continue;
		snprintf(path, sizeof(path), "spec.trainer.args[%d]", i);
		rc = tp_result_add(ctx->res, TP_FIELD_INVALID, path, tp_result_value(ctx->res, a),
				   "must not set immutable config \"%s\" in trainer args; it is "
				   "managed by the runtime", key);
	}
	return rc;
}

int tp__tj_torchtune(tp_tj_ctx *ctx)
{
	char model[256], cfg[512];
	tp_torchtune_model(tp_get_str(ctx->job, "spec.runtimeRef.name"), model, sizeof(model));
	/* Every rule below is about a known model; one error says it all. */
	if (!model_supported(model))
		return invalid(ctx, "spec.runtimeRef.name",
			       "must have a supported pretrained model, invalid model configured: %s",
			       model);
	long long nodes = tp__tj_num_nodes(ctx);
	int rc = TP_OK;
	if (nodes > 1 && strcmp(model, MULTI_NODE_MODEL))
		rc = invalid(ctx, "spec.trainer.numNodes", "must be 1 for %s model", model);
	tp_tune_recipe recipe;
	resolve_recipe(ctx, nodes, &recipe);
	snprintf(cfg, sizeof(cfg), "%s%s", model, recipe.suffix);
	if (!rc)
		rc = check_qlora(ctx, model, cfg);
	if (!rc && nodes > 1 && (recipe.lora || recipe.qlora))
		rc = invalid(ctx, "spec.trainer.numNodes",
			     "LoRA fine-tuning is not supported for multi-node training in "
			     "TorchTune");
	if (!rc)
		rc = check_args(ctx);
	return rc;
}

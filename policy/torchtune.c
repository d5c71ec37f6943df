/*
 * torchtune.c — TorchTune's TrainJob rules (upstream plugins/torch/torchtune.go),
 * run by the Torch plugin when trainer.command is exactly ["tune", "run"].
 *
 * How the recipe config is resolved (the spec names the rule, not the
 * resolution, so this is ours, written to agree with the rules' wording):
 *  - "--config X" or "--config=X" in trainer.args wins;
 *  - else "<model>_<kind>[_single_device]" where kind is "qlora" when the args
 *    quantize the base model (model.quantize_base=True), "lora" when they set
 *    LoRA parameters (model.lora_* / model.apply_lora_*), else "full"; and
 *    single device means one node, numProcPerNode unset/auto/1 and one GPU.
 */
#include "policy/validate_trainjob.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const supported_models[] = {
	"llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B",
};
#define MULTI_NODE_MODEL "llama3_3/70B"

static const char *const immutable_keys[] = {
	"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file",
};

/* "torchtune-llama3.2-1b" -> "llama3_2/1B": exactly three '-' parts. */
static void model_of(const char *ref, char *out, size_t n)
{
	out[0] = '\0';
	const char *d1 = strchr(ref, '-'), *d2 = d1 ? strchr(d1 + 1, '-') : NULL;
	if (!d2 || strchr(d2 + 1, '-'))
		return;
	size_t len = 0;
	for (const char *p = d1 + 1; p < d2 && len + 1 < n; p++)
		out[len++] = *p == '.' ? '_' : *p;
	if (len + 1 < n)
		out[len++] = '/';
	for (const char *p = d2 + 1; *p && len + 1 < n; p++)
		out[len++] = (char)toupper((unsigned char)*p);
	out[len] = '\0';
}

static bool model_supported(const char *m)
{
	for (size_t i = 0; i < sizeof(supported_models) / sizeof(*supported_models); i++)
		if (!strcmp(m, supported_models[i]))
			return true;
	return false;
}

static bool arg_has_prefix(const cJSON *args, const char *prefix)
{
	for (const cJSON *a = args ? args->child : NULL; a; a = a->next)
		if (cJSON_IsString(a) && !strncmp(a->valuestring, prefix, strlen(prefix)))
			return true;
	return false;
}

static bool uses_qlora(const cJSON *args)
{
	for (const cJSON *a = args ? args->child : NULL; a; a = a->next)
		if (cJSON_IsString(a) && !strcasecmp(a->valuestring, "model.quantize_base=True"))
			return true;
	return false;
}

static bool uses_lora(const cJSON *args)
{
	return uses_qlora(args) || arg_has_prefix(args, "model.lora_") ||
	       arg_has_prefix(args, "model.apply_lora_");
}

static const char *explicit_config(const cJSON *args)
{
	for (const cJSON *a = args ? args->child : NULL; a; a = a->next) {
		if (!cJSON_IsString(a))
			continue;
		if (!strncmp(a->valuestring, "--config=", 9))
			return a->valuestring + 9;
		if (!strcmp(a->valuestring, "--config") && cJSON_IsString(a->next))
			return a->next->valuestring;
	}
	return NULL;
}

/* A quantity of exactly 1 (number or string). */
static bool is_one(const cJSON *v)
{
	long long n;
	if (tp_json_is_int(v, &n))
		return n == 1;
	return cJSON_IsString(v) && !strcmp(v->valuestring, "1");
}

static bool one_gpu(const cJSON *job)
{
	const cJSON *res = tp_get_object(job, "spec.trainer.resourcesPerNode");
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(tp_get_object(res, "limits"),
							    "nvidia.com/gpu");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(tp_get_object(res, "requests"),
							    "nvidia.com/gpu");
	return lim ? is_one(lim) : is_one(req);
}

static bool one_proc(const cJSON *job)
{
	const cJSON *v = tp_get(job, "spec.trainer.numProcPerNode");
	return !v || cJSON_IsNull(v) || is_one(v) ||
	       (cJSON_IsString(v) && !strcmp(v->valuestring, "auto"));
}

static void resolve_config(const tp_tj_ctx *ctx, const char *model, char *out, size_t n)
{
	const cJSON *args = tp_get_array(ctx->job, "spec.trainer.args");
	const char *cfg = explicit_config(args);
	if (cfg) {
		snprintf(out, n, "%s", cfg);
		return;
	}
	const char *kind = uses_qlora(args) ? "qlora" : uses_lora(args) ? "lora" : "full";
	bool single = tp__tj_num_nodes(ctx) == 1 && one_proc(ctx->job) && one_gpu(ctx->job);
	snprintf(out, n, "%s_%s%s", model, kind, single ? "_single_device" : "");
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
	const char *ref = tp_get_str(ctx->job, "spec.runtimeRef.name");
	model_of(ref ? ref : "", model, sizeof(model));
	/* Every rule below is about a known model; one error says it all. */
	if (!model_supported(model))
		return invalid(ctx, "spec.runtimeRef.name",
			       "must have a supported pretrained model, invalid model configured: %s",
			       model);
	long long nodes = tp__tj_num_nodes(ctx);
	int rc = TP_OK;
	if (nodes > 1 && strcmp(model, MULTI_NODE_MODEL))
		rc = invalid(ctx, "spec.trainer.numNodes", "must be 1 for %s model", model);
	resolve_config(ctx, model, cfg, sizeof(cfg));
	if (!rc)
		rc = check_qlora(ctx, model, cfg);
	if (!rc && nodes > 1 && uses_lora(tp_get_array(ctx->job, "spec.trainer.args")))
		rc = invalid(ctx, "spec.trainer.numNodes",
			     "LoRA fine-tuning is not supported for multi-node training in "
			     "TorchTune");
	if (!rc)
		rc = check_args(ctx);
	return rc;
}

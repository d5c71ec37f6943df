/*
 * plugins/torchtune.c — TorchTune, part of the torch plugin: its TrainJob
 * rules (upstream plugins/torch/torchtune.go) and its `tune run` command,
 * from one model and recipe resolution, so a config admission refuses is
 * exactly the config the JobSet would run. When the TrainJob's command is exactly ["tune", "run"], the
 * trainer's command becomes
 *   tune run [--rdzv_endpoint=<master>:29500] <recipe> --config <model><suffix>
 *   <the runtime command's items that the runtime owns (output_dir=...)>
 * with the recipe chosen from the node count, processes, GPUs and the
 * LoRA / QLoRA arguments (docs/kubeflow-upstream.md §5.2).
 */
#include "policy/plugins/torch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const immutable_keys[] = {
	"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file",
};

bool tp__torchtune_is_command(const cJSON *command)
{
	return cJSON_GetArraySize(command) == 2 &&
	       cJSON_IsString(cJSON_GetArrayItem(command, 0)) &&
	       cJSON_IsString(cJSON_GetArrayItem(command, 1)) &&
	       !strcmp(cJSON_GetArrayItem(command, 0)->valuestring, "tune") &&
	       !strcmp(cJSON_GetArrayItem(command, 1)->valuestring, "run");
}




static bool is_immutable(const char *item)
{
	const char *eq = strchr(item, '=');
	size_t klen = eq ? (size_t)(eq - item) : strlen(item);
	for (size_t i = 0; i < sizeof(immutable_keys) / sizeof(immutable_keys[0]); i++)
		if (strlen(immutable_keys[i]) == klen && !strncmp(item, immutable_keys[i], klen))
			return true;
	return false;
}

static int push(cJSON *arr, const char *s)
{
	cJSON *v = cJSON_CreateString(s);
	if (!v || !cJSON_AddItemToArray(arr, v)) {
		cJSON_Delete(v);
		return TP_ENOMEM;
	}
	return TP_OK;
}

int tp__torchtune_command(tp_expansion *x, cJSON *container, long long num_nodes, const char *nproc,
			 long long gpu)
{
	tp_tune_recipe r;
	tp__torchtune_recipe(num_nodes, nproc, gpu, tp_get_array(x->trainer, "args"), &r);
	char model[256], config[300], rdzv[700], addr[600];
	tp__torchtune_model(tp_get_str(x->trainjob, "spec.runtimeRef.name"), model, sizeof(model));
	snprintf(config, sizeof(config), "%s%s", model, r.suffix);
	if (tp__x_master_addr(x, TP_CONTAINER_PORT, addr, sizeof(addr)))
		return tp__x_fail(x, "metadata.name", NULL, "is too long for a master address");
	snprintf(rdzv, sizeof(rdzv), "--rdzv_endpoint=%s", addr);

	cJSON *cmd = cJSON_CreateArray();
	int rc = cmd ? TP_OK : TP_ENOMEM;
	if (rc || (rc = push(cmd, "tune")) || (rc = push(cmd, "run")) ||
	    (r.distributed && (rc = push(cmd, rdzv))) || (rc = push(cmd, r.recipe)) ||
	    (rc = push(cmd, "--config")) || (rc = push(cmd, config))) {
		cJSON_Delete(cmd);
		return rc;
	}
	const cJSON *item;
	cJSON_ArrayForEach(item, x->runtime_command) {
		if (cJSON_IsString(item) && is_immutable(item->valuestring) &&
		    (rc = push(cmd, item->valuestring))) {
			cJSON_Delete(cmd);
			return rc;
		}
	}
	return tp__x_set(container, "command", cmd);
}

/* ------------------------------------------------------ model and recipe */

void tp__torchtune_model(const char *runtime_name, char *out, size_t n)
{
	out[0] = '\0';
	const char *a = runtime_name ? strchr(runtime_name, '-') : NULL;
	const char *b = a ? strchr(a + 1, '-') : NULL;
	if (!b || strchr(b + 1, '-') || (size_t)(b - a) + strlen(b) + 2 > n)
		return;
	size_t k = 0;
	for (const char *p = a + 1; p < b; p++)
		out[k++] = *p == '.' ? '_' : *p;
	out[k++] = '/';
	for (const char *p = b + 1; *p; p++)
		out[k++] = (char)toupper((unsigned char)*p);
	out[k] = '\0';
}

/* An arg "key=value" whose key contains part and whose value is "true" in
 * any case, white space around it ignored (upstream's isBoolArgEnabled). */
static bool arg_true(const char *arg, const char *part)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return false;
	size_t klen = (size_t)(eq - arg);
	const char *hit = strstr(arg, part);
	size_t off, len;
	tp__go_trim_space(eq + 1, strlen(eq + 1), &off, &len);
	return hit && (size_t)(hit - arg) + strlen(part) <= klen && len == 4 &&
	       !strncasecmp(eq + 1 + off, "true", 4);
}

/* LoRA: an arg naming model.lora_attn_modules; QLoRA: model.quantize_base
 * true (any case) unless model.use_dora is true too. */
static void scan_args(const cJSON *args, tp_tune_recipe *t)
{
	t->lora = t->qlora = false;
	bool dora = false;
	const cJSON *a;
	cJSON_ArrayForEach(a, args) {
		if (!cJSON_IsString(a))
			continue;
		if (strstr(a->valuestring, "model.lora_attn_modules"))
			t->lora = true;
		if (arg_true(a->valuestring, "model.quantize_base"))
			t->qlora = true;
		if (arg_true(a->valuestring, "model.use_dora"))
			dora = true;
	}
	t->qlora = t->qlora && !dora;
}

void tp__torchtune_recipe(long long nodes, const char *nproc, long long gpu, const cJSON *args,
			 tp_tune_recipe *r)
{
	bool is_auto = !strcmp(nproc, "auto");
	char *end = NULL;
	long long np = strtoll(nproc, &end, 10);
	if (!*nproc || *end)
		np = -1;
	scan_args(args, r);
	bool lora = r->lora || r->qlora;
	if (nodes == 1 && (np == 1 || gpu == 1)) {
		r->recipe = lora ? "lora_finetune_single_device" : "full_finetune_single_device";
		r->suffix = r->qlora  ? "_qlora_single_device"
			    : r->lora ? "_lora_single_device"
				      : "_full_single_device";
	} else if (nodes == 1 && lora) {
		r->recipe = "lora_finetune_distributed";
		r->suffix = r->qlora ? "_qlora" : "_lora";
	} else {
		r->recipe = "full_finetune_distributed";
		r->suffix = nodes > 1 ? "_full_multinode" : "_full";
	}
	r->distributed = nodes > 1 || np > 1 || (is_auto && gpu > 1);
}

/* ------------------------------------------------------ TrainJob rules */

static const char *const supported_models[] = {
	"llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B",
};
#define MULTI_NODE_MODEL "llama3_3/70B"

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
	const cJSON *trainer = ctx->trainer;
	const cJSON *resources = tp__trainer_resources(trainer, ctx->runtime);
	long long gpu = tp__gpu_count(resources);
	char nproc[64];
	tp__torch_nproc(trainer, tp_get_object(ctx->ml, "torch"), resources, gpu,
		       nproc, sizeof(nproc));
	tp__torchtune_recipe(nodes, nproc, gpu, tp_get_array(trainer, "args"), r);
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
	const cJSON *args = tp_get_array(ctx->trainer, "args");
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

int tp__torchtune_check(tp_tj_ctx *ctx)
{
	char model[256], cfg[512];
	tp__torchtune_model(tp_get_str(ctx->job, "spec.runtimeRef.name"), model, sizeof(model));
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

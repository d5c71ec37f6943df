/*
 * plugin_torchtune.c — TorchTune's `tune run` command, part of the torch
 * plugin: when the TrainJob's command is exactly ["tune", "run"], the
 * trainer's command becomes
 *   tune run [--rdzv_endpoint=<master>:29500] <recipe> --config <model><suffix>
 *   <the runtime command's items that the runtime owns (output_dir=...)>
 * with the recipe chosen from the node count, processes, GPUs and the
 * LoRA / QLoRA arguments (kubeflow-upstream.md §5.2).
 */
#include "policy/expand.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const immutable_keys[] = {
	"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file",
};

bool tp_torchtune_is_command(const cJSON *command)
{
	return cJSON_GetArraySize(command) == 2 &&
	       cJSON_IsString(cJSON_GetArrayItem(command, 0)) &&
	       cJSON_IsString(cJSON_GetArrayItem(command, 1)) &&
	       !strcmp(cJSON_GetArrayItem(command, 0)->valuestring, "tune") &&
	       !strcmp(cJSON_GetArrayItem(command, 1)->valuestring, "run");
}

/* "torchtune-llama3.2-1b" → "llama3_2/1B"; "" unless exactly three parts. */
static void model_of(const char *runtime_name, char *out, size_t n)
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
 * any case. */
static bool arg_true(const char *arg, const char *part)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return false;
	size_t klen = (size_t)(eq - arg);
	const char *hit = strstr(arg, part);
	return hit && (size_t)(hit - arg) + strlen(part) <= klen && !strcasecmp(eq + 1, "true");
}

struct tune_args {
	bool lora, qlora;
};

static struct tune_args scan_args(const cJSON *args)
{
	struct tune_args t = { false, false };
	bool dora = false;
	const cJSON *a;
	cJSON_ArrayForEach(a, args) {
		if (strstr(a->valuestring, "model.lora_attn_modules"))
			t.lora = true;
		if (arg_true(a->valuestring, "model.quantize_base"))
			t.qlora = true;
		if (arg_true(a->valuestring, "model.use_dora"))
			dora = true;
	}
	t.qlora = t.qlora && !dora;
	return t;
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

int tp_torchtune_command(tp_expansion *x, cJSON *container, long long num_nodes, const char *nproc,
			 long long gpu)
{
	bool is_auto = !strcmp(nproc, "auto");
	char *end = NULL;
	long long np = strtoll(nproc, &end, 10);
	if (!*nproc || *end)
		np = -1;
	struct tune_args t = scan_args(tp_get_array(x->trainer, "args"));
	bool single = num_nodes == 1 && (np == 1 || gpu == 1);
	const char *recipe, *suffix;
	if (single) {
		recipe = t.qlora || t.lora ? "lora_finetune_single_device" : "full_finetune_single_device";
		suffix = t.qlora ? "_qlora_single_device" : t.lora ? "_lora_single_device"
								   : "_full_single_device";
	} else if (num_nodes == 1 && (t.qlora || t.lora)) {
		recipe = "lora_finetune_distributed";
		suffix = t.qlora ? "_qlora" : "_lora";
	} else {
		recipe = "full_finetune_distributed";
		suffix = num_nodes > 1 ? "_full_multinode" : "_full";
	}
	char model[256], config[300], rdzv[700], addr[600];
	model_of(tp_get_str(x->trainjob, "spec.runtimeRef.name"), model, sizeof(model));
	snprintf(config, sizeof(config), "%s%s", model, suffix);
	if (tp_x_master_addr(x, TP_CONTAINER_PORT, addr, sizeof(addr)))
		return tp_x_fail(x, "metadata.name", NULL, "is too long for a master address");
	snprintf(rdzv, sizeof(rdzv), "--rdzv_endpoint=%s", addr);

	cJSON *cmd = cJSON_CreateArray();
	int rc = cmd ? TP_OK : TP_ENOMEM;
	bool distributed = num_nodes > 1 || np > 1 || (is_auto && gpu > 1);
	if (rc || (rc = push(cmd, "tune")) || (rc = push(cmd, "run")) ||
	    (distributed && (rc = push(cmd, rdzv))) || (rc = push(cmd, recipe)) ||
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
	return tp_x_set(container, "command", cmd);
}

/*
 * plugins/torchtune.c — TorchTune's `tune run` command, part of the torch
 * plugin: when the TrainJob's command is exactly ["tune", "run"], the
 * trainer's command becomes
 *   tune run [--rdzv_endpoint=<master>:29500] <recipe> --config <model><suffix>
 *   <the runtime command's items that the runtime owns (output_dir=...)>
 * with the recipe chosen from the node count, processes, GPUs and the
 * LoRA / QLoRA arguments (kubeflow-upstream.md §5.2).
 */
#include "policy/expand/expand.h"
#include "policy/plugins/torch_facts.h"

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
	tp_tune_recipe r;
	tp_torchtune_recipe(num_nodes, nproc, gpu, tp_get_array(x->trainer, "args"), &r);
	char model[256], config[300], rdzv[700], addr[600];
	tp_torchtune_model(tp_get_str(x->trainjob, "spec.runtimeRef.name"), model, sizeof(model));
	snprintf(config, sizeof(config), "%s%s", model, r.suffix);
	if (tp_x_master_addr(x, TP_CONTAINER_PORT, addr, sizeof(addr)))
		return tp_x_fail(x, "metadata.name", NULL, "is too long for a master address");
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
	return tp_x_set(container, "command", cmd);
}

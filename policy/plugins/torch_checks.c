/*
 * plugins/torch_checks.c — the Torch plugin's TrainJob checks (upstream
 * plugins/torch/torch.go Validate): envInjection targets and reserved PET_*
 * envs; TorchTune's rules live in plugins/torchtune_checks.c.
 */
#include "policy/admission/trainjob.h"

#include <stdio.h>
#include <string.h>

static const char *const pet_reserved[] = {
	"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT",
};

/* A target container is looked for among containers, then initContainers. */
static bool has_container(const cJSON *rjob, const char *name)
{
	const cJSON *pod = tp__tj_pod_spec(rjob);
	return tp_find_named(tp_get_array(pod, "containers"), "name", name) ||
	       tp_find_named(tp_get_array(pod, "initContainers"), "name", name);
}

static int check_target(tp_tj_ctx *ctx, const cJSON *target)
{
	const char *job = tp_get_str(target, "jobName");
	job = job ? job : "";
	const cJSON *rjob = tp__tj_job(ctx->tmpl, job);
	const cJSON *names = tp_get_array(target, "containerNames");
	for (const cJSON *n = names ? names->child : NULL; n; n = n->next) {
		const char *c = cJSON_IsString(n) ? n->valuestring : "";
		if (rjob && has_container(rjob, c))
			continue;
		int rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.runtimeRef",
				       tp_result_value(ctx->res, tp_get(ctx->job, "spec.runtimeRef")),
				       "envInjection target podSet \"%s\" container \"%s\" not found in "
				       "runtime template", job, c);
		if (rc)
			return rc;
	}
	return TP_OK;
}

static bool is_torchtune(const cJSON *job)
{
	const cJSON *cmd = tp_get_array(job, "spec.trainer.command");
	const cJSON *a = cmd ? cmd->child : NULL, *b = a ? a->next : NULL;
	return cJSON_IsString(a) && cJSON_IsString(b) && !b->next &&
	       !strcmp(a->valuestring, "tune") && !strcmp(b->valuestring, "run");
}

int tp__tj_torch(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->runtime, "spec.mlPolicy.torch"))
		return TP_OK;
	const cJSON *targets = tp_get_array(ctx->runtime, "spec.mlPolicy.torch.envInjection.targets");
	int rc = TP_OK;
	for (const cJSON *t = targets ? targets->child : NULL; t && !rc; t = t->next)
		rc = check_target(ctx, t);
	if (!rc)
		rc = tp__tj_reserved_envs(ctx, pet_reserved,
					  sizeof(pet_reserved) / sizeof(pet_reserved[0]));
	if (!rc && is_torchtune(ctx->job))
		rc = tp__tj_torchtune(ctx);
	return rc;
}

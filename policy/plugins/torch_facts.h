/*
 * plugins/torch_facts.h — what the Torch/TorchTune validator and the expansion must
 * agree on, computed in one place (plugins/torch_facts.c): the trainer's resources
 * and GPU/CPU counts, numProcPerNode's resolution, TorchTune's model name
 * and recipe (kubeflow-upstream.md §5.2).
 */
#ifndef TP_TORCH_FACTS_H
#define TP_TORCH_FACTS_H

#include "policy/core/internal.h"

/* Resources per node: trainer.resourcesPerNode when set, else the runtime's
 * trainer node container's (job `node` or the trainer-ancestor job). */
const cJSON *tp_trainer_resources(const cJSON *trainer, const cJSON *runtime);
/* GPUs per node: the first resource whose name contains "gpu" (any case) in
 * requests, else in limits, rounded up; 0 when none. */
long long tp_gpu_count(const cJSON *resources);
/* CPUs per node rounded up: requests.cpu, else limits.cpu, else 0. */
long long tp_cpu_count(const cJSON *resources);

/* numProcPerNode as torchrun gets it: the TrainJob's, else the runtime's
 * guides-era torch.numProcPerNode, else "auto"; "auto" without a GPU (and
 * the guides' "cpu") become the CPU count, at least 1. */
void tp_torch_nproc(const cJSON *trainer, const cJSON *torch, const cJSON *resources,
		    long long gpu, char *out, size_t n);

/* "torchtune-llama3.2-1b" -> "llama3_2/1B"; "" unless exactly three parts. */
void tp_torchtune_model(const char *runtime_name, char *out, size_t n);

typedef struct tp_tune_recipe {
	const char *recipe; /* "lora_finetune_single_device", ... */
	const char *suffix; /* "_qlora_single_device", ... appended to the model */
	bool lora, qlora;   /* what the args ask for */
	bool distributed;   /* the command gets --rdzv_endpoint */
} tp_tune_recipe;

/* Recipe and config suffix from nodes, the resolved nproc ("auto" or
 * digits), GPUs per node and trainer.args. */
void tp_torchtune_recipe(long long nodes, const char *nproc, long long gpu, const cJSON *args,
			 tp_tune_recipe *out);

#endif /* TP_TORCH_FACTS_H */

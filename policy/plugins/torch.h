/*
 * plugins/torch.h — what the torch plugin and its TorchTune part share
 * (plugins/torch.c, plugins/torchtune.c): numProcPerNode's resolution and
 * TorchTune's model, recipe, rules and command, computed once for the
 * validator and the expansion alike (docs/kubeflow-upstream.md §5.2).
 */
#ifndef TP_TORCH_H
#define TP_TORCH_H

#include "policy/plugins/plugin.h"

/* numProcPerNode as torchrun gets it: the TrainJob's, else the runtime's
 * guides-era torch.numProcPerNode, else "auto"; "auto" without a GPU (and
 * the guides' "cpu") become the CPU count, at least 1. */
void tp__torch_nproc(const cJSON *trainer, const cJSON *torch, const cJSON *resources,
		    long long gpu, char *out, size_t n);

/* "torchtune-llama3.2-1b" -> "llama3_2/1B"; "" unless exactly three parts. */
void tp__torchtune_model(const char *runtime_name, char *out, size_t n);

typedef struct tp_tune_recipe {
	const char *recipe; /* "lora_finetune_single_device", ... */
	const char *suffix; /* "_qlora_single_device", ... appended to the model */
	bool lora, qlora;   /* what the args ask for */
	bool distributed;   /* the command gets --rdzv_endpoint */
} tp_tune_recipe;

/* Recipe and config suffix from nodes, the resolved nproc ("auto" or
 * digits), GPUs per node and trainer.args. */
void tp__torchtune_recipe(long long nodes, const char *nproc, long long gpu, const cJSON *args,
			 tp_tune_recipe *out);

/* Is the TrainJob's command exactly ["tune", "run"]? */
bool tp__torchtune_is_command(const cJSON *command);
/* TorchTune's rules of a TrainJob (upstream torchtune.go). */
int tp__torchtune_check(tp_tj_ctx *ctx);
/* The `tune run` command for the trainer's container. */
int tp__torchtune_command(tp_expansion *x, cJSON *container, long long num_nodes,
			 const char *nproc, long long gpu);

#endif /* TP_TORCH_H */

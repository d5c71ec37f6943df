/*
 * admission/trainjob.h — what the TrainJob validator's files share.
 * Private to admission/trainjob.c, trainjob_*.c and plugins/torchtune_checks.c; tests may
 * include it to reach one layer at a time.
 */
#ifndef TP_VALIDATE_TRAINJOB_H
#define TP_VALIDATE_TRAINJOB_H

#include "policy/core/internal.h"

/* One TrainJob admission, as the plugins see it (upstream's runtime Info). */
typedef struct tp_tj_ctx {
	const tp_options *opt;
	tp_operation op;
	const cJSON *job;     /* the TrainJob */
	const cJSON *old;     /* the old TrainJob on UPDATE, else NULL */
	const cJSON *runtime; /* the referenced runtime, from the store */
	cJSON *tmpl;          /* runtime.spec.template with runtimePatches merged */
	cJSON *base;          /* runtime.spec.template without the patches */
	tp_result *res;
} tp_tj_ctx;

/* The CRD schema and CEL layer (admission/trainjob_schema.c). */
int tp__trainjob_schema(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res);

/* The plugins' CustomValidation, in the fixed order admission/trainjob.c runs
 * them. Each adds to ctx->res and returns 0 or TP_ENOMEM. */
int tp__tj_jobset(tp_tj_ctx *ctx);    /* plugins/jobset_checks.c */
int tp__tj_torch(tp_tj_ctx *ctx);     /* plugins/torch_checks.c */
int tp__tj_torchtune(tp_tj_ctx *ctx); /* plugins/torchtune_checks.c, called by the torch plugin */
int tp__tj_mpi(tp_tj_ctx *ctx);       /* plugins/checks.c */
int tp__tj_xgboost(tp_tj_ctx *ctx);
int tp__tj_volcano(tp_tj_ctx *ctx);

/* Helpers the plugins share (plugins/checks.c). */

/* trainer.numNodes, else the runtime's mlPolicy.numNodes, else 1. */
long long tp__tj_num_nodes(const tp_tj_ctx *ctx);
/* The replicated job named name in a JobSet template, or NULL. */
const cJSON *tp__tj_job(const cJSON *tmpl, const char *name);
/* The pod spec of a replicated job (template.spec.template.spec), or NULL. */
const cJSON *tp__tj_pod_spec(const cJSON *rjob);
/* Invalid at spec.trainer.env when trainer.env names any of reserved[]:
 * "must not have reserved envs, invalid envs configured: [A B]" (sorted). */
int tp__tj_reserved_envs(tp_tj_ctx *ctx, const char *const *reserved, size_t n);

#endif

/*
 * admission/trainjob.h — what the TrainJob validator's files share.
 * Private to admission/trainjob*.c and the plugins' TrainJob checks; tests
 * may include it to reach one layer at a time.
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
	const cJSON *tmpl;    /* runtime.spec.template with runtimePatches merged; the
			       * same tree as base when there are none */
	const cJSON *base;    /* runtime.spec.template without the patches: the
			       * runtime's own tree when it needs no copy */
	cJSON *owned[2];      /* the copies behind tmpl and base, freed after */
	tp_result *res;
} tp_tj_ctx;

/* The CRD schema and CEL layer (admission/trainjob_schema.c). */
int tp__trainjob_schema(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res);

#endif

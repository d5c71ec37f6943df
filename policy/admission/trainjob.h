/*
 * admission/trainjob.h — what the TrainJob validator's files share.
 * Private to admission/trainjob*.c and the plugins' TrainJob checks; tests
 * may include it to reach one layer at a time.
 */
#ifndef TP_VALIDATE_TRAINJOB_H
#define TP_VALIDATE_TRAINJOB_H

#include "policy/runtime/runtime.h"

/* The CRD schema and CEL layer (admission/trainjob_schema.c). */
int tp__trainjob_schema(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res);

#endif

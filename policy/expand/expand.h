/*
 * expand/expand.h — what the expansion's files (check.c, info.c, expand.c,
 * snapshot.c) share, and the runtime snapshot TrainJob validation reads
 * too. The types they work on and the builders the plugins write with are
 * runtime/runtime.h's. Private to policy/.
 */
#ifndef TP_EXPAND_H
#define TP_EXPAND_H

#include "policy/runtime/runtime.h"

/* Type checks of everything the expansion reads (expand/check.c). Adds
 * errors to res; returns their number. */
int tp__expand_check_inputs(tp_expansion *x);
int tp__expand_check_template(tp_expansion *x);

/* Runtime info (expand/info.c): template, pod sets, counts, resources
 * merge and the trainer's image/command/args. */
int tp__expand_info(tp_expansion *x);
void tp__expand_info_free(tp_expansion *x);

/* The TrainJob's runtime snapshot (expand/snapshot.c): TP_OK and *out (the
 * caller's), TP_ENOTFOUND when there is none (use the live runtime), or an
 * error in res at path: TP_EINVAL (a snapshot that is not the TrainJob's
 * runtime, an error of the given type), TP_EUNAVAILABLE (it could not be
 * read: tp_result_lookup_failed). The expansion reports an unusable snapshot
 * as Invalid at spec.runtimeRef, TrainJob validation as upstream's Internal
 * error at its runtimeRef path. */
int tp__runtime_snapshot(const tp_options *opt, const cJSON *trainjob, tp_field_type type,
			 const char *path, tp_result *res, cJSON **out);

#endif

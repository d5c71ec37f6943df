/*
 * admission/runtime.h — what the runtime validators (admission/runtime.c,
 * admission/runtime_schema.c, admission/runtime_strict.c, admission/ome.c)
 * share, and their entry points for admission/validate.c. Private to them.
 */
#ifndef TP_VALIDATE_RUNTIME_H
#define TP_VALIDATE_RUNTIME_H

#include "policy/runtime/runtime.h"

/* Entry points the dispatcher (admission/validate.c) calls; one module each. */
int tp__validate_trainer_runtime(const tp_options *opt, tp_operation op, tp_kind kind,
				 const cJSON *obj, const cJSON *old_obj, tp_result *res);
int tp__validate_ome_runtime(const tp_options *opt, tp_operation op, tp_kind kind,
			     const cJSON *obj, const cJSON *old_obj, tp_result *res);

/* The CRD schema and CEL rules of a runtime (structure, types, enums,
 * minimums, immutability on UPDATE against old_obj). */
int tp__runtime_schema(const tp__rt_flavor *f, tp_operation op, const cJSON *obj,
		       const cJSON *old_obj, tp_result *res);

/* Upstream's validateReplicatedJobs (docs/kubeflow-upstream.md §2.2). */
int tp__runtime_replicated_jobs(const cJSON *obj, tp_result *res);

/* The strict profile's "Rules beyond upstream" for runtimes of both groups. */
int tp__runtime_strict(const tp__rt_flavor *f, tp_operation op, tp_kind kind, const cJSON *obj,
		       tp_result *res);

/* Its parts (admission/runtime_policy.c): mlPolicy and podGroupPolicy as the
 * guides define them, the plugins' own rules included. */
int tp__runtime_strict_ml(const tp__rt_flavor *f, tp_result *res, const cJSON *ml);
int tp__runtime_strict_pod_group(const tp__rt_flavor *f, tp_result *res, const cJSON *pg);

#endif

/*
 * admission/runtime.h — what the runtime validators (admission/runtime.c,
 * admission/runtime_schema.c, admission/runtime_strict.c, admission/ome.c) share. Private to them.
 */
#ifndef TP_VALIDATE_RUNTIME_H
#define TP_VALIDATE_RUNTIME_H

#include "policy/core/internal.h"

/* Which field set a runtime is judged against. */
typedef struct tp__rt_flavor {
	bool ome;    /* ome.io/v1beta1: OME's types, no CEL of Kubeflow's CRD */
	bool guides; /* strict profile: the guides' fields (torch.numProcPerNode, elasticPolicy,
		      * Intel/MPICH, OME volcano) are accepted here and checked by admission/runtime_strict.c */
	bool schema; /* the schema layer runs: admission/runtime_strict.c need not repeat its checks */
} tp__rt_flavor;

/* JSON types as the OpenAPI schema names them. */
typedef enum tp__rt_type {
	TP_RT_OBJECT,
	TP_RT_ARRAY,
	TP_RT_STRING,
	TP_RT_INTEGER,
	TP_RT_BOOLEAN,
} tp__rt_type;

/* parent[key] when present and of type want; NULL when absent or null (the
 * API server prunes nulls). A value of another type adds the API server's
 * "<path> in body must be of type <want>" error and gives NULL. */
const cJSON *tp__rt_typed(tp_result *res, const cJSON *parent, const char *key,
			  const char *path, tp__rt_type want);

/* "<base>.<key>" into buf (truncated to n). Returns buf. */
const char *tp__rt_path(char *buf, size_t n, const char *base, const char *key);
/* A printf-built path into buf; a path too long for buf is cut short, which
 * only ever shortens a message. Returns buf. */
const char *tp__rt_pathf(char *buf, size_t n, const char *fmt, ...) TP_PRINTF(3, 4);
/* base + "[i]" into buf (buf may be base itself). */
const char *tp__rt_index(char *buf, size_t n, const char *base, int i);

/* The CRD schema and CEL rules of a runtime (structure, types, enums,
 * minimums, immutability on UPDATE against old_obj). */
int tp__runtime_schema(const tp__rt_flavor *f, tp_operation op, const cJSON *obj,
		       const cJSON *old_obj, tp_result *res);

/* Upstream's validateReplicatedJobs (kubeflow-upstream.md §2.2). */
int tp__runtime_replicated_jobs(const cJSON *obj, tp_result *res);

/* The strict profile's "Rules beyond upstream" for runtimes of both groups. */
int tp__runtime_strict(const tp__rt_flavor *f, tp_operation op, tp_kind kind, const cJSON *obj,
		       tp_result *res);

/* Its parts (admission/runtime_policy.c): mlPolicy and podGroupPolicy as the
 * guides define them, the plugins' own rules included. */
int tp__runtime_strict_ml(const tp__rt_flavor *f, tp_result *res, const cJSON *ml);
int tp__runtime_strict_pod_group(const tp__rt_flavor *f, tp_result *res, const cJSON *pg);

/* An integer member parent.key: true with *n when it is one; another type is
 * reported ("<base>.<key> in body must be of type integer") when asked to,
 * i.e. when the schema layer does not speak for the member. */
bool tp__rt_int(tp_result *res, const cJSON *parent, const char *key, const char *base,
		bool report_type, long long *n);
/* Invalid at <base>.<key> unless n >= min: "must be greater than or equal to
 * <min>; <hint>". */
void tp__rt_at_least(tp_result *res, const char *base, const char *key, long long n,
		     long long min, const char *hint);

#endif

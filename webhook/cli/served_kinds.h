/*
 * webhook/cli/served_kinds.h — the API groups this product serves, and the
 * versions and kinds of each the built-in checks know (served_kinds.c): an
 * object of a served group with another version or kind is an error naming
 * the served ones, never a silent skip, with or without CRDs.
 */
#ifndef TW_SERVED_KINDS_H
#define TW_SERVED_KINDS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/trainpolicy.h"

typedef struct tw_served_kind {
	const char *group, *version, *kind;
	bool checked; /* the built-in checks judge it (else only its CRD does) */
} tw_served_kind;

size_t tw_served_kind_count(void);
const tw_served_kind *tw_served_kind_at(size_t i);

/* obj is of a served group but no served version and kind: the error (at
 * apiVersion when the kind is served in another version, else at kind) is
 * added to res and true returned. */
bool tw_served_kinds_refuse(const cJSON *obj, tp_result *res);

/* obj is a served kind only its CRD checks (OptimizationJob). */
bool tw_served_kind_crd_only(const cJSON *obj);

/* obj is a job of Training Operator v1 (apiVersion kubeflow.org/v1:
 * PyTorchJob, TFJob, MPIJob, ...): what Kubeflow Trainer v2 runs in its
 * place, in words; else NULL. */
const char *tw_served_kind_v1_job(const cJSON *obj);

#endif /* TW_SERVED_KINDS_H */

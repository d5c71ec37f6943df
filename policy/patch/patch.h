/*
 * patch/patch.h — what the rest of policy/ asks of patch/: the JobSet
 * template of a runtime with a TrainJob's runtimePatches applied
 * (docs/kubeflow-upstream.md §5.1 steps 1-2, merge.c), which the TrainJob
 * validators and the expansion read; strategic merge; upstream's pkg/apply
 * upserts (upsert.c). Private to policy/.
 */
#ifndef TP_PATCH_H
#define TP_PATCH_H

#include "policy/core/internal.h"

/* A fresh copy (current arena) of runtime.spec.template with every
 * trainjob.spec.runtimePatches[].trainingRuntimeSpec.template merged in list
 * order: metadata labels/annotations overlaid, spec strategic-merged, the
 * runtime's replicatedJobs order kept. trainjob may be NULL (no patches).
 * TP_EINVAL with a detail in err (may be NULL) when a patch cannot merge. */
int tp__runtime_template(const cJSON *runtime, const cJSON *trainjob, cJSON **out,
			char *err, size_t errlen);

/* runtime.spec.template itself when tp__runtime_template(runtime, NULL, ...)
 * would only copy it: an object, metadata and spec objects when present,
 * labels and annotations too, and no null anywhere (the copy drops nulls).
 * A reader sees the same fields in both; NULL when the copy would differ or
 * fail, so the caller copies. */
const cJSON *tp__runtime_template_view(const cJSON *runtime);

/* Strategic merge patch of a JobSetSpec-shaped tree: patch onto dst in place
 * (dst in the current arena). Lists merged by their Kubernetes patch keys:
 * replicatedJobs/containers/initContainers/volumes/env/imagePullSecrets by
 * name, volumeMounts by mountPath, ports by containerPort; maps merged;
 * tolerations and other lists replaced. A JSON null in patch deletes. */
int tp__strategic_merge(cJSON *dst, const cJSON *patch, const char *list_context);

/* Upsert helpers with upstream's pkg/apply semantics (patch/upsert.c, for the expansion). */
int tp__upsert_named(cJSON *arr, const char *key, cJSON *item); /* takes item */
/* A copy of each item of items upserted into arr in turn, through one index
 * of arr (an upsert each, scanning arr, cost 65 s for 100,000 env items).
 * TP_EINVAL for an item without key (those before it are in). */
int tp__upsert_all(cJSON *arr, const char *key, const cJSON *items);

#endif /* TP_PATCH_H */

/*
 * admission/jobset.h — what the JobSet validator's two files share
 * (admission/jobset.c, CREATE and the entry; admission/jobset_update.c).
 * Private to policy/.
 */
#ifndef TP_ADMISSION_JOBSET_H
#define TP_ADMISSION_JOBSET_H

#include "policy/core/internal.h"

/* ValidateUpdate: replicatedJobs immutable (but for the pod-template
 * fields Kueue writes while suspended), managedBy immutable. */
int tp__jobset_update(tp_result *res, const cJSON *js, const cJSON *old);

#endif

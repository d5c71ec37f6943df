/*
 * admission.h — the AdmissionReview codec's insides, shared by admission.c
 * and the deciders of each route (mutating JobSets live in their own file).
 */
#ifndef TW_ADMISSION_H
#define TW_ADMISSION_H

#include "webhook/webhook.h"

/* A request as read from the body; strings point into the parsed body. */
typedef struct tw_review {
	const char *api_version; /* admission.k8s.io/v1 or v1beta1: the answer's too */
	const cJSON *req;
	const char *uid;
	const char *group, *version, *kind; /* request.kind */
	tp_operation op;
	const cJSON *object;     /* NULL on DELETE */
	const cJSON *old_object; /* NULL unless UPDATE (or DELETE) */
	bool dry_run;
} tw_review;

/* What a route decided. */
typedef struct tw_answer {
	bool allowed;
	const char *message; /* the denial's text when it is not res's errors */
	tp_result *res;      /* field errors, warnings, audit annotations */
	cJSON *patch;        /* JSON Patch operations; NULL or empty: no patch */
} tw_answer;

#endif /* TW_ADMISSION_H */

/*
 * webhook/admission/decide.h — the AdmissionReview codec's insides, shared by
 * admission.c and the deciders of each route (mutating JobSets and
 * --strict-action warn live in their own files). Not for other folders: the
 * public face is admission.h.
 */
#ifndef TW_DECIDE_H
#define TW_DECIDE_H

#include "webhook/admission/admission.h"

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

/* --strict-action warn (strict_action.c): *res holds the strict profile's
 * errors; the violations the kubeflow profile does not share become one
 * warning each ("strict: <error>"), plus an audit annotation, so that only
 * what upstream would deny is denied. *res may be replaced; *warned gets the
 * number of violations turned into warnings. */
int tw_strict_as_warnings(const tp_options *opt, const tw_review *rv, tp_result **res,
			  size_t *warned);

/* (outcome.c) The first finding of a refusal and its class into oc: res's
 * first error, else message. */
void tw_outcome_reason(const tw_answer *ans, tw_outcome *oc);

#endif /* TW_DECIDE_H */

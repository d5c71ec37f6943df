/*
 * fakeapi_admit.h — what kube-apiserver's admission would answer a write,
 * from the webhook configurations and EndpointSlices the fake API server
 * holds (fakeapi_admit.c): a test asks "would this TrainJob be created
 * now?" at each step of an install, as a user's kubectl would.
 */
#ifndef TT_FAKEAPI_ADMIT_H
#define TT_FAKEAPI_ADMIT_H

#include <stdbool.h>

#include "tests/support/fakeapi.h"

typedef struct fa_verdict {
	bool allowed;
	int code;            /* 201 when allowed, else the refusal's status */
	char message[1536];  /* the refusal, as the API server words it */
	int calls;           /* webhooks called */
} fa_verdict;

/* A write (operation "CREATE" or "UPDATE") of object (JSON) of resource r
 * (FA_TJ, FA_TR, FA_CTR or FA_JS): every mutating, then every validating
 * webhook of the configurations the fake holds whose rules, namespace and
 * object selectors match, called through its Service (a ready endpoint of
 * the Service's EndpointSlices: its address and the slice's port) over
 * HTTPS trusting the webhook's caBundle, as kube-apiserver calls it. A
 * webhook nobody answers refuses the write under failurePolicy Fail (the
 * default), and is skipped under Ignore. A matchCondition counts as true
 * (the fake has no CEL) and patches are not applied. */
void fa_admit(fa_server *f, int r, const char *operation, const char *object_json,
	      fa_verdict *out);

#endif

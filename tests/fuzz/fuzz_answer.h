/*
 * fuzz_answer.h — what a decided answer must look like, for the targets that
 * decide requests: fuzz_admission.c and fuzz_expand.c call the deciders
 * themselves, fuzz_server.c goes through the server's request path.
 *
 * Only included by tests/fuzz/fuzz_*.c; every function is static inline.
 */
#ifndef FUZZ_ANSWER_H
#define FUZZ_ANSWER_H

#include "tests/fuzz/fuzz_common.h"
#include "webhook/admission/admission.h"

/* The answer's body: one JSON object, whatever the status. */
static inline cJSON *fz_answer_object(const tp_buf *out)
{
	FZ_ASSERT(out->data && out->len > 0);
	cJSON *root = cJSON_ParseWithLength(out->data, out->len);
	FZ_ASSERT(root && cJSON_IsObject(root));
	return root;
}

/* An error answer says what is wrong: a non-empty "error". */
static inline void fz_assert_error(const cJSON *root)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
	FZ_ASSERT(cJSON_IsString(e) && *e->valuestring);
}

/* An admission route's answer: a 200 is an AdmissionReview whose response
 * has the request's uid and a boolean allowed; any other status is a 4xx
 * with {"error": "..."} alone. */
static inline void fz_check_admission(const tw_outcome *oc, const tp_buf *out)
{
	cJSON *root = fz_answer_object(out);
	if (oc->http_status == 200) {
		const cJSON *resp = cJSON_GetObjectItemCaseSensitive(root, "response");
		FZ_ASSERT(cJSON_IsObject(resp));
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(resp, "uid");
		FZ_ASSERT(cJSON_IsString(uid));
		FZ_ASSERT(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(resp, "allowed")));
		FZ_ASSERT(oc->uid && !strcmp(oc->uid, uid->valuestring));
		FZ_ASSERT(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "allowed")) ==
			  oc->allowed);
	} else {
		FZ_ASSERT(oc->http_status >= 400 && oc->http_status < 500);
		fz_assert_error(root);
		FZ_ASSERT(cJSON_GetArraySize(root) == 1);
	}
	cJSON_Delete(root);
}

/* POST /expand's answer: 200 is a JSON List, 422 and 400 are JSON objects
 * with a non-empty "error". */
static inline void fz_check_expand(const tw_outcome *oc, const tp_buf *out)
{
	cJSON *root = fz_answer_object(out);
	if (oc->http_status == 200) {
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
		FZ_ASSERT(cJSON_IsString(kind) && !strcmp(kind->valuestring, "List"));
		FZ_ASSERT(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "items")));
	} else {
		FZ_ASSERT(oc->http_status == 400 || oc->http_status == 422);
		fz_assert_error(root);
	}
	cJSON_Delete(root);
}

#endif /* FUZZ_ANSWER_H */

/*
 * fuzz_admission.c — tw_admission_handle on every admission route (and
 * route NULL, as `review` calls it) with the bytes as the body. Invariants:
 * it returns 0 or TP_ENOMEM; a 200 answer is an AdmissionReview whose
 * response has the request's uid and a boolean allowed; any other status
 * comes with {"error": "..."}.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_common.h"
#include "webhook/admission/admission.h"

static tw_config cfg;
static tp_arena *arena;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cfg.store = fz_store_new(0);
	cfg.opt.now = "2026-08-21T10:15:30Z";
	FZ_ASSERT(tp_arena_new(&arena, 0) == TP_OK);
	return 0;
}

static void check_answer(const tw_outcome *oc, const tp_buf *out)
{
	FZ_ASSERT(out->data && out->len > 0);
	cJSON *root = cJSON_ParseWithLength(out->data, out->len);
	FZ_ASSERT(root && cJSON_IsObject(root));
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
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
		FZ_ASSERT(cJSON_IsString(e) && *e->valuestring);
		FZ_ASSERT(cJSON_GetArraySize(root) == 1);
	}
	cJSON_Delete(root);
}

static void one(const tw_route *route, const uint8_t *data, size_t size)
{
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	int rc = tw_admission_handle(&cfg, route, (const char *)data, size, arena, &out, &oc);
	FZ_ASSERT(rc == TP_OK || rc == TP_ENOMEM);
	if (rc == TP_OK)
		check_answer(&oc, &out);
	tp_buf_free(&out);
	tp_arena_reset(arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(NULL, data, size);
	for (const tw_route *r = tw_routes; r->path; r++)
		if (r->type == TW_ROUTE_VALIDATE || r->type == TW_ROUTE_MUTATE_TRAINJOB ||
		    r->type == TW_ROUTE_MUTATE_JOBSET)
			one(r, data, size);
	return 0;
}

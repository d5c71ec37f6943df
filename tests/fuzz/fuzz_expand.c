/*
 * fuzz_expand.c — tw_expand_handle (POST /expand) on arbitrary bytes.
 * Invariants: it returns 0 or TP_ENOMEM; 200 is a JSON List, 422 and 400
 * are JSON objects with a non-empty "error".
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_common.h"
#include "webhook/admission/expand_api.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	cfg.opt.profile = size & 1 ? TP_PROFILE_KUBEFLOW : TP_PROFILE_STRICT;
	int rc = tw_expand_handle(&cfg, (const char *)data, size, arena, &out, &oc);
	FZ_ASSERT(rc == TP_OK || rc == TP_ENOMEM);
	if (rc == TP_OK) {
		FZ_ASSERT(out.data && out.len > 0);
		cJSON *root = cJSON_ParseWithLength(out.data, out.len);
		FZ_ASSERT(root && cJSON_IsObject(root));
		if (oc.http_status == 200) {
			const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
			FZ_ASSERT(cJSON_IsString(kind) && !strcmp(kind->valuestring, "List"));
			FZ_ASSERT(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "items")));
		} else {
			FZ_ASSERT(oc.http_status == 400 || oc.http_status == 422);
			const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
			FZ_ASSERT(cJSON_IsString(e) && *e->valuestring);
		}
		cJSON_Delete(root);
	}
	tp_buf_free(&out);
	tp_arena_reset(arena);
	return 0;
}

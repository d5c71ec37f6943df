/*
 * fuzz_expand.c — tw_expand_handle (POST /expand) on arbitrary bytes.
 * Invariants: it returns 0 or TP_ENOMEM, and the answer is one
 * fz_check_expand (fuzz_answer.h) accepts.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_answer.h"
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
	if (rc == TP_OK)
		fz_check_expand(&oc, &out);
	tp_buf_free(&out);
	tp_arena_reset(arena);
	return 0;
}

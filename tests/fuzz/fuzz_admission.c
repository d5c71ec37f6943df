/*
 * fuzz_admission.c — tw_admission_handle on every admission route (and
 * route NULL, as `review` calls it) with the bytes as the body. Invariants:
 * it returns 0 or TP_ENOMEM, and the answer is one fz_check_admission
 * (fuzz_answer.h) accepts.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_answer.h"

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

static void one(const tw_route *route, const uint8_t *data, size_t size)
{
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	int rc = tw_admission_handle(&cfg, route, (const char *)data, size, arena, &out, &oc);
	FZ_ASSERT(rc == TP_OK || rc == TP_ENOMEM);
	if (rc == TP_OK)
		fz_check_admission(&oc, &out);
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

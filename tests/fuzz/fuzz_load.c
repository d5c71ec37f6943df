/*
 * fuzz_load.c — tp_load on arbitrary bytes (YAML or JSON), every document
 * then validated (CREATE, both profiles) and, when it is a TrainJob, expanded.
 * Half of the inputs (by a hash of the bytes) run inside an arena, as the
 * server does; the other half on malloc, as the CLI does.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_common.h"

static tp_store *store;
static tp_arena *arena;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	store = fz_store_new(4); /* the four runtimes */
	FZ_ASSERT(tp_arena_new(&arena, 0) == TP_OK);
	return 0;
}

static void check_doc(const cJSON *obj)
{
	static const tp_profile profiles[] = { TP_PROFILE_STRICT, TP_PROFILE_KUBEFLOW };
	for (size_t p = 0; p < 2; p++) {
		tp_options opt = { .profile = profiles[p], .store = store,
				   .now = "2026-08-21T10:15:30Z" };
		tp_result *res = NULL;
		if (tp_result_new(&res) != TP_OK)
			return;
		tp_store_rdlock(store);
		int rc = tp_validate(&opt, TP_OP_CREATE, obj, NULL, res);
		FZ_ASSERT(rc == TP_OK || rc == TP_EUNSUPPORTED || rc == TP_ENOMEM);
		tp_buf msg = TP_BUF_INIT(0);
		if (!tp_result_ok(res))
			FZ_ASSERT(tp_result_format(res, &msg) == TP_OK && msg.data && *msg.data);
		tp_buf_free(&msg);
		if (tp_kind_of(obj) == TP_KIND_TRAINJOB) {
			tp_result_clear(res);
			cJSON *list = NULL;
			rc = tp_expand(&opt, obj, p ? NULL : &fz_keys, &list, res);
			/* TP_ENOTFOUND, TP_EINVAL, TP_EUNSUPPORTED (a runtimeRef of
			 * another group or kind): each with its reason in res. */
			FZ_ASSERT(rc == TP_OK || rc == TP_ENOTFOUND || rc == TP_EINVAL ||
				  rc == TP_EUNSUPPORTED || rc == TP_ENOMEM);
			if (rc == TP_OK)
				FZ_ASSERT(list && cJSON_IsObject(list));
			else
				FZ_ASSERT(rc == TP_ENOMEM || !tp_result_ok(res));
			cJSON_Delete(list);
		}
		tp_store_unlock(store);
		tp_result_free(res);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned h = 0;
	for (size_t i = 0; i < size; i++)
		h = h * 31 + data[i];
	bool in_arena = h & 1;
	tp_arena *prev = in_arena ? tp_arena_enter(arena) : NULL;

	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	int rc = tp_load((const char *)data, size, NULL, &docs, &err);
	if (rc == TP_OK) {
		for (size_t i = 0; i < tp_docs_count(docs); i++) {
			const tp_doc *d = tp_docs_at(docs, i);
			FZ_ASSERT(d && d->obj);
			check_doc(d->obj);
		}
	} else {
		FZ_ASSERT(rc < 0);
		tp_buf b = TP_BUF_INIT(0);
		FZ_ASSERT(tp_load_error_format(&err, "input", &b) == TP_OK && b.data);
		tp_buf_free(&b);
	}
	tp_docs_free(docs);

	if (in_arena) {
		tp_arena_leave(prev);
		tp_arena_reset(arena);
	}
	return 0;
}

/*
 * fuzz_jsonpatch.c — the input is two JSON documents separated by a NUL byte
 * (no NUL: the first half and the second half). Both are loaded with tp_load;
 * when each is exactly one document, tp_jsonpatch_diff(a, b) applied to a
 * with tp_jsonpatch_apply must give b back (tp_json_equal).
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tp_json_init();
	return 0;
}

/* One JSON document, or NULL. Only JSON (the first non-blank byte is { or [). */
static cJSON *load_one(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\t' || p[i] == '\r'))
		i++;
	if (i == n || (p[i] != '{' && p[i] != '['))
		return NULL;
	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	cJSON *obj = NULL;
	if (tp_load(p, n, NULL, &docs, &err) == TP_OK && tp_docs_count(docs) == 1)
		obj = tp_docs_take(docs, 0);
	tp_docs_free(docs);
	return obj;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, '\0', size);
	size_t n1 = nul ? (size_t)(nul - p) : size / 2;
	size_t off2 = nul ? n1 + 1 : n1;
	cJSON *a = load_one(p, n1), *b = a ? load_one(p + off2, size - off2) : NULL;
	if (a && b) {
		cJSON *ops = NULL, *got = NULL;
		int rc = tp_jsonpatch_diff(a, b, &ops);
		FZ_ASSERT(rc == TP_OK || rc == TP_ENOMEM);
		if (rc == TP_OK) {
			FZ_ASSERT(cJSON_IsArray(ops));
			rc = tp_jsonpatch_apply(a, ops, &got);
			if (rc != TP_OK && rc != TP_ENOMEM) {
				char *t = cJSON_PrintUnformatted(ops);
				fprintf(stderr, "apply failed (%s) on ops %s\n", tp_strerror(rc),
					t ? t : "?");
				cJSON_free(t);
			}
			FZ_ASSERT(rc == TP_OK || rc == TP_ENOMEM);
			if (rc == TP_OK) {
				if (!tp_json_equal(got, b)) {
					char *t = cJSON_PrintUnformatted(ops);
					char *g = cJSON_PrintUnformatted(got);
					fprintf(stderr, "ops %s\ngave %s\n", t ? t : "?", g ? g : "?");
					cJSON_free(t);
					cJSON_free(g);
				}
				FZ_ASSERT(tp_json_equal(got, b));
			}
		}
		cJSON_Delete(ops);
		cJSON_Delete(got);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	return 0;
}

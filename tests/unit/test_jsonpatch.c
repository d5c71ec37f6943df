/*
 * test_jsonpatch.c — RFC 6901 pointers, RFC 6902 diff and apply.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

/* JSON written with single quotes, for readability in C strings. */
#define js tt_jsq

static void assert_text(const cJSON *got, const char *want_single_quoted)
{
	char *g = cJSON_PrintUnformatted(got);
	char *w = tt_dq(want_single_quoted);
	if (strcmp(g, w))
		print_message("got:  %s\nwant: %s\n", g, w);
	assert_string_equal(g, w);
	free(g);
	free(w);
}

/* diff(from, to) must be exactly want (a JSON array text) and turn from into to. */
static void check_diff(const char *from_text, const char *to_text, const char *want)
{
	cJSON *from = js(from_text), *to = js(to_text), *ops = NULL, *out = NULL;
	assert_int_equal(tp_jsonpatch_diff(from, to, &ops), TP_OK);
	assert_text(ops, want);
	assert_int_equal(tp_jsonpatch_apply(from, ops, &out), TP_OK);
	assert_true(tp_json_equal(out, to));
	cJSON_Delete(from);
	cJSON_Delete(to);
	cJSON_Delete(ops);
	cJSON_Delete(out);
}

static void pointer_escaping(void **state)
{
	(void)state;
	tp_buf b = TP_BUF_INIT(256);
	assert_int_equal(tp_jsonpointer_escape("trainer.kubeflow.org/framework", &b), TP_OK);
	assert_string_equal(b.data, "trainer.kubeflow.org~1framework");
	tp_buf_reset(&b);
	assert_int_equal(tp_jsonpointer_escape("a~b", &b), TP_OK);
	assert_string_equal(b.data, "a~0b");
	tp_buf_reset(&b);
	assert_int_equal(tp_jsonpointer_escape("~/~1", &b), TP_OK);
	assert_string_equal(b.data, "~0~1~01");
	tp_buf_free(&b);
	assert_int_equal(tp_jsonpointer_escape(NULL, &b), TP_EINVAL);
}

static void diff_escapes_label_keys(void **state)
{
	(void)state;
	check_diff("{'metadata':{'labels':{'a~b':'1','keep':'k'}}}",
		   "{'metadata':{'labels':{'keep':'k','trainer.kubeflow.org/framework':'torch'}}}",
		   "[{'op':'remove','path':'/metadata/labels/a~0b'},"
		   "{'op':'add','path':'/metadata/labels/trainer.kubeflow.org~1framework','value':'torch'}]");
}

static void diff_arrays_grow_and_shrink(void **state)
{
	(void)state;
	check_diff("[1,2]", "[1,2,3,4]",
		   "[{'op':'add','path':'/2','value':3},{'op':'add','path':'/3','value':4}]");
	check_diff("{'a':[1,2,3,4]}", "{'a':[1,9]}",
		   "[{'op':'replace','path':'/a/1','value':9},{'op':'remove','path':'/a/3'},"
		   "{'op':'remove','path':'/a/2'}]");
	check_diff("[{'n':1},{'n':2}]", "[{'n':1,'m':0}]",
		   "[{'op':'add','path':'/0/m','value':0},{'op':'remove','path':'/1'}]");
	check_diff("[]", "[[]]", "[{'op':'add','path':'/0','value':[]}]");
}

static void diff_type_changes_and_root(void **state)
{
	(void)state;
	check_diff("{'a':1}", "{'a':'1'}", "[{'op':'replace','path':'/a','value':'1'}]");
	check_diff("{'a':{}}", "{'a':[]}", "[{'op':'replace','path':'/a','value':[]}]");
	check_diff("{'a':true}", "{'a':false}", "[{'op':'replace','path':'/a','value':false}]");
	check_diff("{'a':null}", "{'a':0}", "[{'op':'replace','path':'/a','value':0}]");
	check_diff("1", "'x'", "[{'op':'replace','path':'','value':'x'}]");
	check_diff("{'a':1}", "[1]", "[{'op':'replace','path':'','value':[1]}]");
	check_diff("{'':1}", "{'':2}", "[{'op':'replace','path':'/','value':2}]");
	/* numbers compare by value; equal trees give no ops */
	check_diff("{'a':1.0,'b':[1,{'c':null}]}", "{'b':[1,{'c':null}],'a':1}", "[]");
}

/* The defaulter's answer in ../shared/fixtures/admissionreview/01b-*.json,
 * decoded: [{"op":"add","path":"/spec/runtimePatches/0/time","value":...}]. */
static void diff_matches_the_defaulter_sample(void **state)
{
	(void)state;
	cJSON *from = js("{'spec':{'runtimePatches':[{'manager':'m'}]}}");
	cJSON *to = cJSON_Duplicate(from, 1);
	cJSON_AddStringToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(to, "spec"),
								       "runtimePatches"), 0),
				"time", "2026-08-21T10:15:30Z");
	cJSON *ops = NULL;
	assert_int_equal(tp_jsonpatch_diff(from, to, &ops), TP_OK);
	assert_text(ops, "[{'op':'add','path':'/spec/runtimePatches/0/time','value':'2026-08-21T10:15:30Z'}]");
	cJSON_Delete(ops);
	cJSON_Delete(from);
	cJSON_Delete(to);
}

/* apply(doc, ops) gives want, or (want NULL) fails with rc. */
static void check_apply(const char *doc_text, const char *ops_text, const char *want, int rc)
{
	cJSON *doc = js(doc_text), *ops = js(ops_text), *out = NULL;
	cJSON *before = cJSON_Duplicate(doc, 1);
	assert_int_equal(tp_jsonpatch_apply(doc, ops, &out), rc);
	if (want) {
		cJSON *w = js(want);
		if (!tp_json_equal(out, w))
			assert_text(out, want);
		cJSON_Delete(w);
	} else {
		assert_null(out);
	}
	assert_true(tp_json_equal(doc, before)); /* the input is never touched */
	cJSON_Delete(doc);
	cJSON_Delete(ops);
	cJSON_Delete(out);
	cJSON_Delete(before);
}

static void apply_rfc_semantics(void **state)
{
	(void)state;
	check_apply("{'a':[1,3]}", "[{'op':'add','path':'/a/1','value':2}]", "{'a':[1,2,3]}", TP_OK);
	check_apply("{'a':[1]}", "[{'op':'add','path':'/a/-','value':2}]", "{'a':[1,2]}", TP_OK);
	check_apply("{'a':[1]}", "[{'op':'add','path':'/a/1','value':2}]", "{'a':[1,2]}", TP_OK);
	check_apply("{'a':1}", "[{'op':'add','path':'/a','value':2}]", "{'a':2}", TP_OK);
	check_apply("{'a/b':{'c~d':1}}", "[{'op':'replace','path':'/a~1b/c~0d','value':2}]",
		    "{'a/b':{'c~d':2}}", TP_OK);
	check_apply("{'~1':1}", "[{'op':'remove','path':'/~01'}]", "{}", TP_OK);
	check_apply("{'a':[1,2,3]}", "[{'op':'replace','path':'/a/1','value':9}]", "{'a':[1,9,3]}", TP_OK);
	check_apply("{'a':{'b':1},'c':{}}", "[{'op':'move','from':'/a/b','path':'/c/d'}]",
		    "{'a':{},'c':{'d':1}}", TP_OK);
	check_apply("{'a':[1,2]}", "[{'op':'copy','from':'/a','path':'/b'}]", "{'a':[1,2],'b':[1,2]}", TP_OK);
	check_apply("{'a':[1,{'b':2}]}", "[{'op':'test','path':'/a/1','value':{'b':2.0}}]",
		    "{'a':[1,{'b':2}]}", TP_OK);
	check_apply("{'a':1}", "[{'op':'replace','path':'','value':[0]}]", "[0]", TP_OK);
	check_apply("{'a':1}", "[{'op':'add','path':'','value':{'b':1}}]", "{'b':1}", TP_OK);
	check_apply("{'a':1}", "[]", "{'a':1}", TP_OK);
}

static void apply_failures_conflict(void **state)
{
	(void)state;
	const char *bad[] = {
		"[{'op':'add','path':'/a/01','value':0}]",      /* leading zero */
		"[{'op':'add','path':'/a/3','value':0}]",       /* past the end */
		"[{'op':'replace','path':'/a/-','value':0}]",   /* '-' names nothing */
		"[{'op':'remove','path':'/a/2'}]",
		"[{'op':'remove','path':'/missing'}]",
		"[{'op':'remove','path':''}]",
		"[{'op':'replace','path':'/missing','value':0}]",
		"[{'op':'add','path':'/missing/x','value':0}]",
		"[{'op':'add','path':'a','value':0}]",          /* no leading slash */
		"[{'op':'add','path':'/x~2','value':0}]",       /* bad escape */
		"[{'op':'add','path':'/x'}]",                   /* no value */
		"[{'op':'test','path':'/o/k','value':2}]",
		"[{'op':'test','path':'/nope','value':null}]",
		"[{'op':'move','from':'/o','path':'/o/k/deeper'}]",
		"[{'op':'move','from':'/nope','path':'/x'}]",
		"[{'op':'copy','from':'/nope','path':'/x'}]",
		"[{'op':'frobnicate','path':'/x'}]",
		"[{'path':'/x'}]",
		"[{'op':'add','value':1}]",
		"['not an op']",
		"[{'op':'add','path':'/x','value':1},{'op':'remove','path':'/y'}]", /* all or nothing */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_apply("{'a':[1,2],'o':{'k':1}}", bad[i], NULL, TP_ECONFLICT);
	cJSON *doc = js("{}"), *out = NULL, *notlist = js("{}");
	assert_int_equal(tp_jsonpatch_apply(doc, notlist, &out), TP_EINVAL);
	assert_int_equal(tp_jsonpatch_apply(doc, NULL, &out), TP_EINVAL);
	assert_int_equal(tp_jsonpatch_diff(doc, NULL, &out), TP_EINVAL);
	cJSON_Delete(doc);
	cJSON_Delete(notlist);
}

/* ------------------------------------------------------------ round trips */

/* apply(a, diff(a, b)) == b, and diff(a, a) is empty; inside an arena, as
 * the server runs it. Returns nothing: failures fail the test. */
static void round_trip(const cJSON *a, const cJSON *b)
{
	tp_arena *arena;
	assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
	tp_arena *prev = tp_arena_enter(arena);
	cJSON *ops = NULL, *out = NULL, *none = NULL;
	assert_int_equal(tp_jsonpatch_diff(a, b, &ops), TP_OK);
	assert_int_equal(tp_jsonpatch_apply(a, ops, &out), TP_OK);
	bool same = tp_json_equal(out, b);
	assert_int_equal(tp_jsonpatch_diff(a, a, &none), TP_OK);
	int nnone = cJSON_GetArraySize(none);
	bool empty_iff_equal = (cJSON_GetArraySize(ops) == 0) == tp_json_equal(a, b);
	tp_arena_leave(prev);
	tp_arena_free(arena);
	assert_true(same);
	assert_int_equal(nnone, 0);
	assert_true(empty_iff_equal);
}

struct pool {
	cJSON *items[64];
	size_t n;
	cJSON *owned[32];
	size_t nowned;
};

static void pool_add(struct pool *p, cJSON *v)
{
	if (v && !cJSON_IsNull(v) && p->n < 64)
		p->items[p->n++] = v;
}

static void load_admission_reviews(struct pool *p)
{
	char *dir = tt_shared_path("fixtures/admissionreview");
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL && p->nowned < 32) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 5, ".json"))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char *text = tt_read_file(path, NULL);
		assert_non_null(text);
		cJSON *doc = tt_json(text);
		free(text);
		p->owned[p->nowned++] = doc;
		pool_add(p, doc);
		pool_add(p, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "request"), "object"));
		pool_add(p, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "request"), "oldObject"));
	}
	closedir(d);
	free(dir);
}

static void round_trip_over_fixtures(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	struct pool p = { 0 };
	load_admission_reviews(&p);
	assert_true(p.n >= 12);
	for (size_t i = 0; i < p.n; i++)
		for (size_t j = 0; j < p.n; j++)
			round_trip(p.items[i], p.items[j]);
	for (size_t i = 0; i < p.nowned; i++)
		cJSON_Delete(p.owned[i]);
}

/* Hand-made pairs: small random trees from a fixed seed, and edits of them. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static cJSON *gen(uint32_t *s, int depth)
{
	static const char *keys[] = { "a", "b", "a/b", "~", "~1", "", "name", "x.y/z" };
	int kind = depth <= 0 ? (int)(rnd(s) % 4) : (int)(rnd(s) % 6);
	switch (kind) {
	case 0: return cJSON_CreateNumber((double)(rnd(s) % 5));
	case 1: return cJSON_CreateString(keys[rnd(s) % 8]);
	case 2: return rnd(s) % 2 ? cJSON_CreateBool(rnd(s) % 2) : cJSON_CreateNull();
	case 3: return cJSON_CreateNumber(0.5);
	case 4: {
		cJSON *a = cJSON_CreateArray();
		for (uint32_t i = rnd(s) % 5; i > 0; i--)
			cJSON_AddItemToArray(a, gen(s, depth - 1));
		return a;
	}
	default: {
		cJSON *o = cJSON_CreateObject();
		for (uint32_t i = rnd(s) % 5; i > 0; i--) {
			const char *k = keys[rnd(s) % 8];
			if (!cJSON_GetObjectItemCaseSensitive(o, k))
				cJSON_AddItemToObject(o, k, gen(s, depth - 1));
		}
		return o;
	}
	}
}

static void round_trip_over_generated_pairs(void **state)
{
	(void)state;
	uint32_t seed = 2463534242u;
	for (int i = 0; i < 400; i++) {
		cJSON *a = gen(&seed, 4);
		cJSON *b = gen(&seed, 4);
		round_trip(a, b);
		round_trip(b, a);
		/* a near copy: only one subtree differs */
		cJSON *c = cJSON_Duplicate(a, 1);
		if (cJSON_IsObject(c) && c->child)
			cJSON_ReplaceItemInObjectCaseSensitive(c, c->child->string, gen(&seed, 2));
		else if (cJSON_IsArray(c))
			cJSON_AddItemToArray(c, gen(&seed, 2));
		round_trip(a, c);
		round_trip(c, a);
		cJSON_Delete(a);
		cJSON_Delete(b);
		cJSON_Delete(c);
	}
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pointer_escaping),
		cmocka_unit_test(diff_escapes_label_keys),
		cmocka_unit_test(diff_arrays_grow_and_shrink),
		cmocka_unit_test(diff_type_changes_and_root),
		cmocka_unit_test(diff_matches_the_defaulter_sample),
		cmocka_unit_test(apply_rfc_semantics),
		cmocka_unit_test(apply_failures_conflict),
		cmocka_unit_test(round_trip_over_fixtures),
		cmocka_unit_test(round_trip_over_generated_pairs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

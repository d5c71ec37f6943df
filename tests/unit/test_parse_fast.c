/*
 * test_parse_fast.c — the fast paths of a review's parse and answer (issue
 * 32) give what the plain ones gave: the answer written straight into its
 * buffer is byte for byte the text cJSON printed of the tree it was built
 * as before; a string's escapes, found 16 bytes a step, are cJSON's; the
 * reader's quick test of a new member name (a bit by its length and first
 * byte) refuses every name written twice and no other; the check that the
 * input is text, 64 bytes a step, names the first byte that is not; tp_get,
 * which compares a path's segment with strncmp once its first byte fits,
 * finds the member it found comparing byte by byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"
#include "webhook/admission/admission.h"

#define ROUTE_TJ "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
#define ROUTE_CTR "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime"
#define ROUTE_MUT "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"

/* The answer to body on route (NULL: by request.kind), malloc'd. */
static char *answer(const char *route, const char *body, tp_store *store)
{
	tw_config cfg = { .store = store, .max_body = TW_DEFAULT_MAX_BODY };
	cfg.opt.profile = TP_PROFILE_STRICT;
	cfg.opt.now = "2026-08-21T10:15:30Z";
	tp_arena *arena;
	assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	const tw_route *r = route ? tw_route_find(route) : NULL;
	assert_int_equal(tw_admission_handle(&cfg, r, body, strlen(body), arena, &out, &oc), TP_OK);
	assert_int_equal(oc.http_status, 200);
	char *text = strdup(out.data);
	tp_buf_free(&out);
	tp_arena_free(arena);
	return text;
}

/* text is one line: what cJSON_PrintUnformatted prints of the tree it
 * parses into (the bytes the answer was made of before it was written
 * straight), then a line break. */
static void assert_printed_by_cjson(const char *text)
{
	size_t n = strlen(text);
	assert_true(n > 0 && text[n - 1] == '\n');
	cJSON *tree = cJSON_Parse(text);
	assert_non_null(tree);
	char *printed = cJSON_PrintUnformatted(tree);
	if (strlen(printed) != n - 1 || memcmp(printed, text, n - 1))
		fail_msg("written: %s\nprinted: %s", text, printed);
	cJSON_free(printed);
	cJSON_Delete(tree);
}

static void expect_answer(const char *route, const char *body, const char *want)
{
	char *got = answer(route, body, NULL);
	assert_printed_by_cjson(got);
	if (strcmp(got, want))
		fail_msg("got  %swant %s", got, want);
	free(got);
}

#define OLD_TJ "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\"," \
	       "\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"}}"
#define TJ_KIND "{\"group\":\"trainer.kubeflow.org\",\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"}"

/* Allowed, no status: a DELETE (nothing is checked), in both apiVersions;
 * dry-run adds auditAnnotations {"dry-run": "true"}. The uid is echoed
 * escaped (a quote, a backslash, a control byte) and UTF-8 kept as it is. */
static void allowed_answers(void **state)
{
	(void)state;
	expect_answer(ROUTE_TJ,
		      "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
		      "\"request\":{\"uid\":\"u-1\",\"kind\":" TJ_KIND ",\"operation\":\"DELETE\","
		      "\"oldObject\":" OLD_TJ "}}",
		      "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\","
		      "\"response\":{\"uid\":\"u-1\",\"allowed\":true}}\n");
	expect_answer(ROUTE_TJ,
		      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		      "\"request\":{\"uid\":\"q\\\"b\\\\s\\u0001\\u00e9\",\"kind\":" TJ_KIND ","
		      "\"operation\":\"DELETE\",\"dryRun\":true,\"oldObject\":" OLD_TJ "}}",
		      "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
		      "\"response\":{\"uid\":\"q\\\"b\\\\s\\u0001\xc3\xa9\",\"allowed\":true,"
		      "\"auditAnnotations\":{\"dry-run\":\"true\"}}}\n");
}

/* Refused: status {metadata: {}, status: Failure, code: 403, reason:
 * Forbidden, message}, the message's quotes escaped. */
static void refused_answer(void **state)
{
	(void)state;
	expect_answer(ROUTE_CTR,
		      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		      "\"request\":{\"uid\":\"u-2\",\"kind\":" TJ_KIND ",\"operation\":\"CREATE\","
		      "\"object\":" OLD_TJ "}}",
		      "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
		      "\"response\":{\"uid\":\"u-2\",\"allowed\":false,\"status\":{\"metadata\":{},"
		      "\"status\":\"Failure\",\"code\":403,\"reason\":\"Forbidden\",\"message\":"
		      "\"TrainJob (trainer.kubeflow.org/v1alpha1) does not belong on " ROUTE_CTR
		      ": send it to " ROUTE_TJ " (fix the rules of the webhook configuration)\"}}}\n");
}

/* The parts only a real decision makes: a patch (the mutating route's
 * defaults), warnings (a deprecated runtime), a dry run's annotation. */
static void patch_and_warnings(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	static const struct {
		const char *file, *route, *has;
	} cases[] = {
		{ "01b-mutate-trainjob.request.json", ROUTE_MUT, "\"patchType\":\"JSONPatch\",\"patch\":\"" },
		{ "02-create-clustertrainingruntime-deprecated.request.json", NULL, "\"warnings\":[\"" },
		{ "04-dryrun-create-trainjob.request.json", ROUTE_TJ, "\"dry-run\":\"true\"" },
		{ "05-create-ome-trainingruntime-v1beta1.request.json", NULL, "v1beta1" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "fixtures/admissionreview/%s", cases[i].file);
		char *path = tt_shared_path(rel), *body = tt_read_file(path, NULL);
		free(path);
		assert_non_null(body);
		char *got = answer(cases[i].route, body, NULL);
		assert_printed_by_cjson(got);
		if (!strstr(got, cases[i].has))
			fail_msg("%s: no %s in %s", cases[i].file, cases[i].has, got);
		free(got);
		free(body);
	}
}

/* Each byte that needs an escape (and some that do not: DEL, UTF-8, '/'),
 * at every place of strings 1 to 40 bytes long, so that it falls in a
 * 16-byte step and in the byte-a-step tail: tp_json_write writes what
 * cJSON_PrintUnformatted prints, in a buffer with room and in one without. */
static void string_escapes_are_cjsons(void **state)
{
	(void)state;
	static const unsigned char odd[] = { '"', '\\', '\b', '\f', '\n', '\r', '\t', 0x01,
					     0x1f, 0x7f, 0xc3, '/' };
	char text[48];
	for (size_t len = 1; len <= 40; len++)
		for (size_t at = 0; at < len; at++)
			for (size_t k = 0; k < sizeof(odd); k++) {
				memset(text, 'a', len);
				text[len] = '\0';
				text[at] = (char)odd[k];
				cJSON *v = cJSON_CreateString(text);
				char *want = cJSON_PrintUnformatted(v);
				tp_buf roomy = TP_BUF_INIT(0), tight = TP_BUF_INIT(0);
				assert_int_equal(tp_buf_reserve(&roomy, 512), TP_OK);
				assert_int_equal(tp_json_write(v, &roomy), TP_OK);
				assert_int_equal(tp_json_write(v, &tight), TP_OK);
				assert_string_equal(roomy.data, want);
				assert_string_equal(tight.data, want);
				tp_buf_free(&roomy);
				tp_buf_free(&tight);
				cJSON_free(want);
				cJSON_Delete(v);
			}
}

/* text (len bytes) loaded under lim, in an arena or not: its rc, its error
 * in *err, and what cJSON prints of the first object into printed (may be
 * NULL). */
static int load_with(const char *text, size_t len, bool in_arena, const tp_load_limits *lim,
		     tp_load_error *err, char **printed)
{
	tp_arena *arena = NULL; /* none: the reader's nodes from cJSON_malloc */
	if (in_arena)
		assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
	tp_arena *prev = tp_arena_enter(arena);
	tp_docs *docs = NULL;
	int rc = tp_load(text, len, lim, &docs, err);
	tp_arena_leave(prev); /* printed from cJSON_malloc, past the arena */
	if (printed)
		*printed = rc ? NULL : cJSON_PrintUnformatted(tp_docs_at(docs, 0)->obj);
	tp_docs_free(docs);
	tp_arena_free(arena);
	return rc;
}

/* text loaded as the body of a review is (in an arena, or not): its rc, and
 * the message of its error. */
static int load_text(const char *text, bool in_arena, char *msg, size_t msglen)
{
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.json_only = true;
	tp_load_error err = { 0 };
	int rc = load_with(text, strlen(text), in_arena, &lim, &err, NULL);
	snprintf(msg, msglen, "%s", err.msg);
	return rc;
}

static void expect_duplicate(const char *text, const char *name)
{
	char msg[300], want[64];
	snprintf(want, sizeof(want), "duplicate field \"%s\"", name);
	for (int in_arena = 0; in_arena < 2; in_arena++) {
		if (load_text(text, in_arena, msg, sizeof(msg)) != TP_EPARSE || !strstr(msg, want))
			fail_msg("%s (arena %d): want %s, got %s", text, in_arena, want, msg);
	}
}

static void expect_loads(const char *text)
{
	char msg[300];
	for (int in_arena = 0; in_arena < 2; in_arena++)
		if (load_text(text, in_arena, msg, sizeof(msg)) != TP_OK)
			fail_msg("%s (arena %d): %s", text, in_arena, msg);
}

/* Names alike in length and first byte (one bit for all) are told apart;
 * each name written again, as the 2nd to the 21st member, is refused, on
 * both sides of the 16 names the quick test covers; an escape or UTF-8 is
 * compared as its text ("\u0061" is "a"). */
static void duplicate_names(void **state)
{
	(void)state;
	char text[512], names[21][4];
	for (int n = 0; n < 21; n++)
		snprintf(names[n], sizeof(names[n]), "k%c", 'a' + n);
	for (int count = 1; count <= 20; count++) {
		size_t len = (size_t)snprintf(text, sizeof(text), "{");
		for (int k = 0; k < count; k++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\"%s\":%d",
						k ? "," : "", names[k], k);
		expect_loads(strcat(text, "}"));
		text[len] = '\0';
		for (int again = 0; again < count; again++) {
			char dup[600];
			snprintf(dup, sizeof(dup), "%s,\"%s\":0}", text, names[again]);
			expect_duplicate(dup, names[again]);
		}
	}
	expect_duplicate("{\"a\":1,\"\\u0061\":2}", "a");
	expect_duplicate("{\"\\u0061b\":1,\"ab\":2}", "ab");
	expect_duplicate("{\"\xc3\xa9\":1,\"\\u00e9\":2}", "\xc3\xa9");
	expect_duplicate("{\"\":1,\"x\":2,\"\":3}", "");
	expect_loads("{\"\xc3\xa9\":1,\"\xc3\xa8\":2,\"e\":3,\"\":4,\"a\\\"\":5,\"a\\\\\":6}");
}

/* A NUL, a byte that starts no UTF-8 sequence, and a valid two-byte
 * sequence at each place of inputs up to 200 bytes (in a 64-byte step, a
 * 16-byte one and the tail): the first two are refused at their offset, the
 * third is read. */
static void text_check_names_the_byte(void **state)
{
	(void)state;
	char text[256], msg[300], want[64];
	for (size_t len = 10; len <= 200; len++)
		for (size_t at = 7; at + 2 < len - 2; at++) {
			memset(text, 'x', len);
			memcpy(text, "{\"a\":\"", 6);
			memcpy(text + len - 2, "\"}", 3);
			text[at] = '\xff';
			snprintf(want, sizeof(want), "invalid UTF-8 at byte %zu ", at);
			if (load_text(text, true, msg, sizeof(msg)) != TP_EPARSE || !strstr(msg, want))
				fail_msg("0xff at %zu of %zu: %s", at, len, msg);
			text[at] = '\0';
			snprintf(want, sizeof(want), "NUL byte at offset %zu", at);
			tp_load_error err = { 0 };
			tp_docs *docs = NULL;
			tp_load_limits lim;
			tp_load_limits_default(&lim);
			if (tp_load(text, len, &lim, &docs, &err) != TP_EPARSE || !strstr(err.msg, want))
				fail_msg("NUL at %zu of %zu: %s", at, len, err.msg);
			tp_docs_free(docs);
			memcpy(text + at, "\xc3\xa9", 2);
			if (load_text(text, true, msg, sizeof(msg)) != TP_OK)
				fail_msg("e-acute at %zu of %zu: %s", at, len, msg);
		}
}

/* A member named as a dotted path, or as a prefix of another, an empty
 * name, UTF-8: each path finds what a comparison byte by byte found (the
 * value as its number, -1 for none, 0 for an object). */
static void dotted_paths(void **state)
{
	(void)state;
	cJSON *obj = cJSON_Parse("{\"a\":{\"b\":1,\"b.c\":2,\"\":3,\"bc\":8},\"ab\":4,\"a.b\":5,"
				 "\"\":{\"x\":6},\"\xc3\xa9\":{\"\xc3\xbc\":7},\"name\":9,"
				 "\"namespace\":10}");
	assert_non_null(obj);
	static const struct {
		const char *path;
		int want;
	} cases[] = {
		{ "a.b", 1 }, { "ab", 4 }, { "a", 0 }, { "a.b.c", -1 }, { "a.", 3 }, { "a..", -1 },
		{ ".x", -1 }, { "\xc3\xa9.\xc3\xbc", 7 }, { "abc", -1 }, { "a.bc", 8 },
		{ "a.bcd", -1 }, { "name", 9 }, { "namespace", 10 }, { "nam", -1 },
		{ "names", -1 }, { "b", -1 }, { ".", -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const cJSON *v = tp_get(obj, cases[i].path);
		int got = !v ? -1 : cJSON_IsObject(v) ? 0 : v->valueint;
		if (got != cases[i].want)
			fail_msg("%s: got %d, want %d", cases[i].path, got, cases[i].want);
	}
	assert_ptr_equal(tp_get(obj, ""), obj);
	cJSON_Delete(obj);
}

/* text loaded with a document limit of max_doc (0: the default): its rc,
 * and its error formatted with its place or the object cJSON prints. */
static int load_placed(const char *text, size_t len, bool in_arena, size_t max_doc, char *msg,
		       size_t msglen)
{
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.max_doc_bytes = max_doc;
	tp_load_error err = { 0 };
	char *printed = NULL;
	int rc = load_with(text, len, in_arena, &lim, &err, &printed);
	tp_buf b = TP_BUF_INIT(0);
	if (rc)
		assert_int_equal(tp_load_error_format(&err, NULL, &b), TP_OK);
	snprintf(msg, msglen, "%s", rc ? b.data : printed);
	tp_buf_free(&b);
	cJSON_free(printed);
	return rc;
}

/* A string value is read inline where a member's value or an array's item
 * is (not through the reader's call for any value): each string, good or
 * broken (a string that ends, so that what follows it cannot matter),
 * loads there as cJSON reads it, or fails as it does as the only member's
 * value, {"a":S} (the same error, moved by the columns before it; in an
 * arena and not, the document limit falling inside the string or not). */
static void string_values_inline(void **state)
{
	(void)state;
	static const char *strings[] = {
		"\"plain\"", "\"\"", "\"a\\nb\\u00e9\\ud83d\\ude00\\\"\"", "\"0123456789abcdefghij\"",
		"\"line\nbreak\"", "\"tab\there\"", "\"bad \\x escape\"", "\"nul \\u0000\"",
		"\"short \\u12\"",
	};
	static const struct {
		const char *before, *after;
	} places[] = {
		{ "{\"a\":", "}" }, { "{\"k\":1,\"a\":", ",\"z\":2}" }, { "{\"a\":[", "]}" },
		{ "{\"a\":[1,", ",2]}" }, { "{\"b\":{\"a\":", "}}" }, { "{\"a\" : ", " }" },
		{ "{\"a\":[ ", " ]}" },
	};
	for (size_t s = 0; s < sizeof(strings) / sizeof(*strings); s++)
		for (int in_arena = 0; in_arena < 2; in_arena++)
			for (size_t cut = 0; cut < 2; cut++) {
				char text[128], want[300], got[300];
				char plain[128];
				size_t n0 = (size_t)snprintf(plain, sizeof(plain), "{\"a\":%s}",
							     strings[s]);
				size_t limit0 = cut ? n0 - 3 : 0;
				int rc0 = load_placed(plain, n0, in_arena, limit0, want, sizeof(want));
				cJSON *alone = cJSON_Parse(strings[s]);
				char *value = alone ? cJSON_PrintUnformatted(alone) : NULL;
				bool good = !rc0 && alone;
				for (size_t p = 1; p < sizeof(places) / sizeof(*places); p++) {
					int n = snprintf(text, sizeof(text), "%s%s%s", places[p].before,
							 strings[s], places[p].after);
					size_t shift = strlen(places[p].before) - 5;
					int rc = load_placed(text, (size_t)n, in_arena,
							     cut ? limit0 + shift : 0, got, sizeof(got));
					char moved[300];
					snprintf(moved, sizeof(moved), "%s", want);
					char *col = strstr(moved, "column ");
					if (strstr(want, "over the limit"))
						snprintf(strstr(moved, "of "), 40, "of %zu bytes",
							 limit0 + shift);
					else if (col)
						snprintf(col, sizeof(moved) - (size_t)(col - moved),
							 "column %d%s", atoi(col + 7) + (int)shift,
							 strchr(strstr(want, "column "), ':'));
					if (good ? rc || !strstr(got, value) : rc != rc0 || strcmp(got, moved))
						fail_msg("%s in %s...%s (arena %d, cut %zu): got %s, want %s",
							 strings[s], places[p].before, places[p].after,
							 in_arena, cut, got, good ? value : moved);
				}
				cJSON_free(value);
				cJSON_Delete(alone);
			}
}

/* Every container of v keeps cJSON's links: each child's prev is the one
 * before it, the first child's prev the last, the last's next NULL. */
static void assert_links(const cJSON *v)
{
	const cJSON *last = NULL;
	for (const cJSON *c = v->child; c; last = c, c = c->next) {
		if (c != v->child)
			assert_ptr_equal(c->prev, last);
		assert_links(c);
	}
	if (v->child)
		assert_ptr_equal(v->child->prev, last);
}

/* The reader links each child once and sets the first child's prev (cJSON's
 * last child) when its container closes: objects and arrays of 1 to 20
 * members or items, nested, in an arena and not, keep cJSON's links, and
 * cJSON_AddItemToArray and cJSON_AddItemToObject append after the last. */
static void links_are_cjsons(void **state)
{
	(void)state;
	for (int count = 0; count <= 20; count++)
		for (int in_arena = 0; in_arena < 2; in_arena++) {
			char text[1024];
			size_t len = (size_t)snprintf(text, sizeof(text), "{");
			for (int k = 0; k < count; k++)
				len += (size_t)snprintf(text + len, sizeof(text) - len,
							"%s\"m%d\":[%d,{\"a\":[]},\"s\"]", k ? "," : "", k, k);
			snprintf(text + len, sizeof(text) - len, "%s\"z\":{}}", count ? "," : "");
			tp_arena *arena = NULL;
			if (in_arena)
				assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
			tp_arena *prev = tp_arena_enter(arena);
			tp_load_limits lim;
			tp_load_limits_default(&lim);
			tp_docs *docs = NULL;
			assert_int_equal(tp_load(text, strlen(text), &lim, &docs, NULL), TP_OK);
			cJSON *obj = tp_docs_at(docs, 0)->obj;
			assert_links(obj);
			assert_true(cJSON_AddItemToObject(obj, "added", cJSON_CreateArray()));
			cJSON *added = cJSON_GetObjectItemCaseSensitive(obj, "added");
			assert_ptr_equal(obj->child->prev, added);
			assert_null(added->next);
			for (cJSON *m = obj->child; m != added; m = m->next)
				if (cJSON_IsArray(m)) {
					assert_true(cJSON_AddItemToArray(m, cJSON_CreateNull()));
					assert_int_equal(cJSON_GetArraySize(m), 4);
					assert_true(cJSON_IsNull(cJSON_GetArrayItem(m, 3)));
				}
			assert_links(obj);
			tp_docs_free(docs);
			tp_arena_leave(prev);
			tp_arena_free(arena);
		}
}

/* text under a document limit: its rc and err. */
static int load_limited(const char *text, size_t limit, bool in_arena, tp_load_error *err)
{
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.max_doc_bytes = limit;
	return load_with(text, strlen(text), in_arena, &lim, err, NULL);
}

/* The reader peeks at the next token without a bound, in its copy of the
 * input whose byte at the document limit is set below ' ' while a document
 * is read, and put back for the next one. With the limit at every byte of
 * two documents (tokens, spaces and line breaks on either side of it), in an
 * arena and not: a document loads if and only if it fits, and the pair
 * fails as its first document that does not fails alone (the same code and
 * message), or loads. */
static void limit_byte_is_put_back(void **state)
{
	(void)state;
	static const char *inputs[][2] = {
		{ "{\"a\":1}", "{\"b\":[true,null,\"s\"]}" },
		{ "{ \"a\" : [ 1 , -2.5e3 ] }", "\n{\"b\" :{\"c\":false} }" },
		{ "{\"a\":\"x\"}", "{}" },
	};
	for (size_t k = 0; k < sizeof(inputs) / sizeof(*inputs); k++)
		for (int in_arena = 0; in_arena < 2; in_arena++) {
			char text[128];
			snprintf(text, sizeof(text), "%s%s", inputs[k][0], inputs[k][1]);
			for (size_t limit = 1; limit <= strlen(text) + 1; limit++) {
				tp_load_error err = { 0 }, alone = { 0 };
				int rc = load_limited(text, limit, in_arena, &err), rc_alone = TP_OK;
				int doc = 0;
				for (int d = 0; d < 2 && !rc_alone; d++) {
					const char *one = inputs[k][d];
					rc_alone = load_limited(one, limit, in_arena, &alone);
					size_t fits = strlen(one) - strspn(one, " \n");
					if ((rc_alone == TP_OK) != (limit >= fits))
						fail_msg("%s alone, limit %zu (arena %d): %s", one, limit,
							 in_arena, alone.msg);
					doc = rc_alone ? d + 1 : 0;
				}
				if (rc != rc_alone || (doc && (err.doc != doc ||
							       strcmp(err.msg, alone.msg))))
					fail_msg("%s, limit %zu (arena %d): rc %d, document %d: %s; "
						 "alone: rc %d, %s", text, limit, in_arena, rc, err.doc,
						 err.msg, rc_alone, alone.msg);
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allowed_answers),
		cmocka_unit_test(refused_answer),
		cmocka_unit_test(patch_and_warnings),
		cmocka_unit_test(string_escapes_are_cjsons),
		cmocka_unit_test(duplicate_names),
		cmocka_unit_test(text_check_names_the_byte),
		cmocka_unit_test(dotted_paths),
		cmocka_unit_test(string_values_inline),
		cmocka_unit_test(links_are_cjsons),
		cmocka_unit_test(limit_byte_is_put_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

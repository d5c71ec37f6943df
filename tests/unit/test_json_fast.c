/*
 * test_json_fast.c — the JSON reader's fast paths (policy/load/json_value.c)
 * give what the plain paths give, byte for byte.
 *
 * Inside an arena the reader ends strings in place in one copy of the input
 * and compares a new member name with the first ones by length; without an
 * arena it allocates each string as before. Both must load the same trees
 * and refuse bad input with the same error (code, document, line, column,
 * text): every fixture and deploy/ JSON file (YAML ones printed as JSON), every byte cut of the two review bodies of
 * make bench, escapes and surrogates, duplicates at every member, and
 * numbers, which must also equal cJSON's (strtod's) bit for bit.
 */
#include "policy/trainpolicy.h"
#include "tests/support/testutil.h"

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* One load as text: its code, error and every document printed. */
static char *outcome(const char *data, size_t len, bool in_arena)
{
	tp_arena *a = NULL, *prev = NULL;
	if (in_arena) {
		assert_int_equal(tp_arena_new(&a, 0), TP_OK);
		prev = tp_arena_enter(a);
	}
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	tp_load_error err = { 0 };
	tp_docs *docs = NULL;
	int rc = tp_load(data, len, &lim, &docs, &err);
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	assert_non_null(f);
	fprintf(f, "rc=%d doc=%d line=%d col=%d msg=%s\n", rc, err.doc, err.line, err.column,
		rc ? err.msg : "");
	for (size_t i = 0; !rc && i < tp_docs_count(docs); i++) {
		char *s = cJSON_PrintUnformatted(tp_docs_at(docs, i)->obj);
		assert_non_null(s);
		fprintf(f, "%s\n", s);
		cJSON_free(s);
	}
	fclose(f);
	tp_docs_free(docs);
	if (in_arena) {
		tp_arena_leave(prev);
		tp_arena_free(a);
	}
	return text;
}

/* The arena's load equals the plain one; returns the text (caller frees). */
static char *same_both_ways(const char *data, size_t len, const char *what)
{
	char *fast = outcome(data, len, true), *plain = outcome(data, len, false);
	if (strcmp(fast, plain)) {
		print_error("%s: arena and plain loads differ:\n%s---\n%s", what, fast, plain);
		fail();
	}
	free(plain);
	return fast;
}

/* Where cJSON reads the text as one value too, the trees print alike. */
static void same_as_cjson(const char *data, size_t len, const char *loaded, const char *what)
{
	if (strncmp(loaded, "rc=0 ", 5))
		return;
	cJSON *c = cJSON_ParseWithLength(data, len);
	if (!c)
		return; /* a lone surrogate: Go's U+FFFD, which cJSON refuses */
	char *s = cJSON_PrintUnformatted(c);
	const char *tree = strchr(loaded, '\n') + 1;
	if (strncmp(tree, s, strlen(s)) || tree[strlen(s)] != '\n') {
		print_error("%s: cJSON reads\n%s\nthe loader\n%s", what, s, tree);
		fail();
	}
	cJSON_free(s);
	cJSON_Delete(c);
}

static void check_text(const char *data, const char *what)
{
	char *t = same_both_ways(data, strlen(data), what);
	same_as_cjson(data, strlen(data), t, what);
	free(t);
}

/* ------------------------------------------------------------ files */

static size_t files_seen;

static void check_bytes(const char *data, size_t len, const char *what)
{
	char *t = same_both_ways(data, len, what);
	same_as_cjson(data, len, t, what);
	free(t);
	files_seen++;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && !strcmp(s + n - m, end);
}

/* A JSON file as it is; a YAML one as JSON: each of its documents printed
 * indented, then as the API server sends them, compact. */
static int one_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	bool json = ends_with(path, ".json");
	if (flag != FTW_F || !(json || ends_with(path, ".yaml") || ends_with(path, ".yml")))
		return 0;
	size_t len = 0;
	char *data = tt_read_file(path, &len);
	assert_non_null(data);
	if (json) {
		check_bytes(data, len, path);
	} else {
		tp_load_limits lim;
		tp_load_limits_default(&lim);
		tp_load_error err = { 0 };
		tp_docs *docs = NULL;
		int rc = tp_load(data, len, &lim, &docs, &err);
		for (size_t i = 0; !rc && i < tp_docs_count(docs); i++) {
			char *s = cJSON_Print(tp_docs_at(docs, i)->obj);
			check_bytes(s, strlen(s), path);
			cJSON_free(s);
			s = cJSON_PrintUnformatted(tp_docs_at(docs, i)->obj);
			check_bytes(s, strlen(s), path);
			cJSON_free(s);
		}
		tp_docs_free(docs);
	}
	free(data);
	return 0;
}

static void test_every_fixture_file(void **state)
{
	(void)state;
	assert_int_equal(nftw("deploy", one_file, 16, FTW_PHYS), 0);
	assert_true(files_seen > 0);
	TT_REQUIRE_SHARED(); /* deploy/ is read; upstream's fixtures need ../shared */
	char *fx = tt_shared_path("fixtures");
	assert_int_equal(nftw(fx, one_file, 16, FTW_PHYS), 0);
	free(fx);
	assert_true(files_seen > 100);
}

/* Every prefix of a body: each error (unterminated string, escape cut in
 * two, missing value...) at the same place with the same words. */
static void cuts_of(const char *path)
{
	size_t len = 0;
	char *data = tt_read_file(path, &len);
	assert_non_null(data);
	size_t refused = 0;
	for (size_t k = 0; k <= len; k++) {
		char *cut = malloc(k + 1);
		memcpy(cut, data, k);
		char *t = same_both_ways(cut, k, path);
		refused += strncmp(t, "rc=0 ", 5) != 0;
		free(t);
		free(cut);
	}
	assert_true(refused > len / 2);
	free(data);
}

static void test_every_byte_cut(void **state)
{
	(void)state;
	cuts_of("deploy/samples/admissionreview-trainjob.json");
	cuts_of("tests/bench/admissionreview-clustertrainingruntime.json");
}

/* ----------------------------------------------------------- strings */

static void test_escapes_and_surrogates(void **state)
{
	(void)state;
	static const char *const strings[] = {
		"", "a", "plain text of some length, past sixteen bytes", "\\\"", "\\\\", "\\/",
		"\\b\\f\\n\\r\\t", "a\\nb", "\\u0041", "\\u00e9", "\\u20ac", "\\uFFFF",
		"\\ud83d\\ude00", "x\\ud83d\\ude00y", "\\ud800", "\\udc00", "\\ud800x",
		"\\ud800\\u0041", "\\ud800\\ud800", "\\udbff\\udfff", "caf\xc3\xa9",
		"\\u0000", "\\x", "\\u12", "\\u12g4", "tab\there", "line\nbreak", "\\",
		"long \\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9 escapes \\n\\n\\n\\n",
	};
	for (size_t i = 0; i < sizeof(strings) / sizeof(*strings); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf), "{\"k\": \"%s\", \"%s\": [\"%s\", 1]}", strings[i],
			 strings[i], strings[i]);
		check_text(buf, strings[i]);
		snprintf(buf, sizeof(buf), "{\"%s\": 1, \"%s\": 2}", strings[i], strings[i]);
		check_text(buf, strings[i]); /* its own duplicate */
	}
}

/* ---------------------------------------------------------- duplicates */

/* An object of n members, one a line, member dup (< n) named as member
 * first: the message names the first's line, at the second's. */
static char *members_text(size_t n, size_t first, size_t dup)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fputs("{\n", f);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "\"k%zu\": %zu%s\n", k == dup ? first : k, k, k + 1 < n ? "," : "");
	fputs("}\n", f);
	fclose(f);
	return text;
}

static void test_duplicates_at_every_member(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 40; n++) {
		char *text = members_text(n, 0, n); /* no duplicate */
		char *t = same_both_ways(text, strlen(text), "no duplicate");
		assert_true(strncmp(t, "rc=0 ", 5) == 0);
		free(t);
		free(text);
		for (size_t dup = 1; dup < n; dup++) {
			size_t first = dup * 7 % dup; /* 0 .. dup-1, varied */
			first = (first + n) % dup;
			text = members_text(n, first, dup);
			t = same_both_ways(text, strlen(text), "duplicate");
			char want[256];
			snprintf(want, sizeof(want), "rc=%d doc=1 line=%zu col=1 msg=duplicate field "
				 "\"k%zu\" (already defined at line %zu)\n", TP_EPARSE, dup + 2,
				 first, first + 2);
			assert_string_equal(t, want);
			free(t);
			free(text);
		}
	}
	/* same length and first byte, other bytes: not duplicates */
	check_text("{\"ab\":1,\"ac\":2,\"ba\":3,\"a\":4,\"abc\":5,\"\":6}", "near names");
	check_text("{\"ab\":1,\"ac\":2,\"\":3,\"\":4}", "empty twice");
}

/* ------------------------------------------------------------- numbers */

static void check_number(const char *num)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "{\"n\": %s}", num);
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	tp_load_error err = { 0 };
	tp_docs *docs = NULL;
	assert_int_equal(tp_load(buf, strlen(buf), &lim, &docs, &err), TP_OK);
	const cJSON *ours = cJSON_GetObjectItemCaseSensitive(tp_docs_at(docs, 0)->obj, "n");
	cJSON *theirs = cJSON_Parse(num);
	assert_non_null(theirs);
	if (memcmp(&ours->valuedouble, &theirs->valuedouble, sizeof(double)) ||
	    ours->valueint != theirs->valueint) {
		print_error("%s: %.17g/%d, cJSON %.17g/%d\n", num, ours->valuedouble, ours->valueint,
			    theirs->valuedouble, theirs->valueint);
		fail();
	}
	cJSON_Delete(theirs);
	tp_docs_free(docs);
	check_text(buf, num);
}

static void test_numbers_as_strtod(void **state)
{
	(void)state;
	static const char *const fixed[] = {
		"0", "-0", "1", "-1", "0.0", "-0.0", "1e0", "1E+2", "1e-2", "2147483647",
		"2147483648", "-2147483648", "-2147483649", "9007199254740993",
		"123456789012345678901234567890", "1.7976931348623157e308", "1e400", "-1e400",
		"4.9e-324", "1e-400", "0.1", "3.141592653589793238", "100000000000000000000",
		"999999999999999", "9999999999999999", "-999999999999999", "1.5e3", "12.5E-1",
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
		check_number(fixed[i]);
	/* integers of 1 to 20 digits, and as fractions and exponents */
	unsigned long long x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 3000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int digits = 1 + i % 20;
		char num[64];
		int n = snprintf(num, sizeof(num), "%s%llu", i & 1 ? "-" : "", x >> (i % 40));
		size_t lead = (size_t)(i & 1);
		if ((size_t)n > lead + (size_t)digits)
			num[lead + (size_t)digits] = '\0';
		check_number(num);
		char more[96];
		snprintf(more, sizeof(more), "%s.%d", num, i % 97);
		check_number(more);
		snprintf(more, sizeof(more), "%se%d", num, i % 50 - 25);
		check_number(more);
	}
	/* refused numbers: the same words both ways */
	static const char *const bad[] = { "-", "01", "1.", "1.e2", "1e", "1e+", "-a", ".5", "+1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "{\"n\": %s}", bad[i]);
		char *t = same_both_ways(buf, strlen(buf), bad[i]);
		assert_true(strncmp(t, "rc=0 ", 5) != 0);
		free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_fixture_file),
		cmocka_unit_test(test_every_byte_cut),
		cmocka_unit_test(test_escapes_and_surrogates),
		cmocka_unit_test(test_duplicates_at_every_member),
		cmocka_unit_test(test_numbers_as_strtod),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

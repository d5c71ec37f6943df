/*
 * test_foundation.c — arena, buffer, result rendering and object access.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/arena.h"
#include "policy/core/internal.h"
#include "tests/support/testutil.h"

static void arena_routes_cjson_and_frees_at_once(void **state)
{
	(void)state;
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	tp_arena *prev = tp_arena_enter(a);
	cJSON *j = cJSON_Parse("{\"a\":[1,2,3],\"b\":{\"c\":\"d\"}}");
	assert_non_null(j);
	assert_true(tp_arena_owns(a, j));
	assert_true(tp_arena_owns(a, j->child));
	cJSON_Delete(j); /* a no-op inside the arena: must not crash */
	tp_arena_leave(prev);
	assert_true(tp_arena_used(a) > 0);
	tp_arena_reset(a);
	assert_int_equal(tp_arena_used(a), 0);
	cJSON *k = cJSON_Parse("[1]");
	assert_false(tp_arena_owns(a, k));
	cJSON_Delete(k);
	tp_arena_free(a);
}

static void arena_limit_is_hard(void **state)
{
	(void)state;
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 64 * 1024), TP_OK);
	assert_non_null(tp_arena_alloc(a, 1000));
	assert_null(tp_arena_alloc(a, 128 * 1024));
	tp_arena_free(a);
}

static size_t arena_blocks(const tp_arena *a)
{
	size_t n = 0;
	for (const struct tp__arena_block *b = a->head; b; b = b->next)
		n++;
	return n;
}

/* A working size past the first block settles into one block at reset, so
 * the next request like it needs no malloc; a huge one is not kept. */
static void arena_settles_at_its_working_size(void **state)
{
	(void)state;
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 600; i++)
			assert_non_null(tp_arena_alloc(a, 64)); /* 38,400 bytes */
		assert_int_equal(arena_blocks(a), round == 0 ? 2 : 1);
		tp_arena_reset(a);
		assert_int_equal(tp_arena_used(a), 0);
		assert_int_equal(arena_blocks(a), 1);
	}
	assert_non_null(tp_arena_alloc(a, 2 * 1024 * 1024));
	tp_arena_reset(a);
	assert_int_equal(arena_blocks(a), 1);
	assert_true(a->total <= 64 * 1024); /* not the 2 MiB */
	tp_arena_free(a);
}

static void buf_limit_is_hard(void **state)
{
	(void)state;
	tp_buf b = TP_BUF_INIT(8);
	assert_int_equal(tp_buf_adds(&b, "1234"), TP_OK);
	assert_int_equal(tp_buf_addf(&b, "%d", 5678), TP_OK);
	assert_string_equal(b.data, "12345678");
	assert_int_equal(tp_buf_addc(&b, 'x'), TP_ELIMIT);
	assert_int_equal(b.len, 8);
	tp_buf_free(&b);
}

static void result_renders_like_upstream(void **state)
{
	(void)state;
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	tp_result_add(r, TP_FIELD_INVALID, "spec.template.spec.replicatedJobs[1].replicas", "2",
		      "always must be 1");
	tp_buf b = TP_BUF_INIT(4096);
	tp_result_format(r, &b);
	assert_string_equal(b.data,
			    "spec.template.spec.replicatedJobs[1].replicas: Invalid value: 2: always must be 1");
	tp_result_add(r, TP_FIELD_FORBIDDEN, "spec.runtimePatches", NULL, "x");
	tp_result_add(r, TP_FIELD_REQUIRED, "spec.runtimePatches.manager", NULL, "%s", "");
	tp_buf_reset(&b);
	tp_result_format(r, &b);
	assert_string_equal(b.data,
			    "[spec.template.spec.replicatedJobs[1].replicas: Invalid value: 2: always must be 1, "
			    "spec.runtimePatches: Forbidden: x, spec.runtimePatches.manager: Required value]");
	tp_buf_free(&b);
	assert_int_equal(tp_result_warn(r, "line one\nline two"), TP_OK);
	assert_int_equal(tp_result_warn(r, "line one\nline two"), TP_OK);
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0), "line one line two");
	assert_string_equal(tp_result_quote(r, "a\"b"), "\"a\\\"b\"");
	tp_result_free(r);
}

/* Go's %q, as strconv.Quote writes it; the one quoting every message uses
 * (tp_result_quote, the Pod checks' tp__podv_quote) */
static void quoted_like_go(void **state)
{
	(void)state;
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_buf_add_quoted(&b, "a\"b\\c\nd\te\rf\x01g\x7f\xc3\xa9"), TP_OK);
	assert_string_equal(b.data, "\"a\\\"b\\\\c\\nd\\te\\rf\\x01g\\x7f\xc3\xa9\"");
	tp_buf_reset(&b);
	assert_int_equal(tp_buf_add_quoted(&b, NULL), TP_OK);
	assert_string_equal(b.data, "\"\"");
	tp_buf_free(&b);
	tp_buf small = TP_BUF_INIT(4);
	assert_int_equal(tp_buf_add_quoted(&small, "abcdef"), TP_ELIMIT);
	tp_buf_free(&small);
}

static void object_access(void **state)
{
	(void)state;
	cJSON *j = tt_json("{\"metadata\":{\"name\":\"x\",\"labels\":{\"a/b\":\"c\"}},"
			   "\"spec\":{\"n\":3,\"f\":1.5,\"t\":true,\"l\":[{\"name\":\"p\"},{\"name\":\"q\"}]}}");
	long long n = 0;
	assert_true(tp_get_int(j, "spec.n", &n));
	assert_int_equal(n, 3);
	assert_false(tp_get_int(j, "spec.f", &n));
	assert_true(tp_get_true(j, "spec.t"));
	assert_null(tp_get(j, "spec.missing.deeper"));
	assert_string_equal(tp_meta_name(j), "x");
	assert_string_equal(tp_meta_namespace(j), "");
	assert_string_equal(tp_meta_label(j, "a/b"), "c");
	assert_non_null(tp_find_named(tp_get(j, "spec.l"), "name", "q"));
	/* A path segment names a member whole: not its prefix, not a name with a
	 * dot in it, not through an array or a scalar. */
	cJSON *p = tt_json("{\"ab\":{\"c\":1},\"a\":{\"cd\":2},\"a.c\":3,\"s\":\"x\",\"l\":[{\"c\":4}]}");
	assert_true(tp_get_int(p, "ab.c", &n));
	assert_int_equal(n, 1);
	assert_null(tp_get(p, "a.c"));
	assert_null(tp_get(p, "a.cde"));
	assert_true(tp_get_int(p, "a.cd", &n));
	assert_int_equal(n, 2);
	assert_null(tp_get(p, "abc"));
	assert_null(tp_get(p, "s.c"));
	assert_null(tp_get(p, "l.c"));
	assert_ptr_equal(tp_get(p, ""), p);
	cJSON_Delete(p);
	cJSON *k = tt_json("{\"spec\":{\"l\":[{\"name\":\"p\"},{\"name\":\"q\"}],\"t\":true,\"f\":1.5,\"n\":3},"
			   "\"metadata\":{\"labels\":{\"a/b\":\"c\"},\"name\":\"x\"}}");
	assert_true(tp_json_equal(j, k));
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(k, "spec"), "n", cJSON_CreateNumber(4));
	assert_false(tp_json_equal(j, k));
	assert_true(tp_json_equal_except(cJSON_GetObjectItem(j, "spec"), cJSON_GetObjectItem(k, "spec"), "n"));
	cJSON_Delete(j);
	cJSON_Delete(k);
}

static void names(void **state)
{
	(void)state;
	assert_null(tp__check_dns1035_label("my-job"));
	assert_non_null(tp__check_dns1035_label("1job"));
	assert_non_null(tp__check_dns1035_label("Job"));
	assert_null(tp__check_dns1123_subdomain("acme.io"));
	assert_non_null(tp__check_dns1123_subdomain("acme..io"));
	assert_null(tp__check_label_value(""));
	assert_non_null(tp__check_label_value("-x"));
	tp_result *r;
	tp_result_new(&r);
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", "example.io/platform-team"), 0);
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", "noslash"), 1);
	assert_true(tt_has_error(r, "m", "must be a domain-prefixed path"));
	tp_result_free(r);
}

/* apimachinery v0.36.3 IsDomainPrefixedPath, error by error: the host's
 * errors carry the host, the path's the path, in that order. */
static void domain_prefixed_path_texts(void **state)
{
	(void)state;
	tp_result *r;
	tp_result_new(&r);
	assert_int_equal(tp__check_domain_prefixed_path(r, "spec.runtimePatches[0].manager",
						       "Acme.io/a b"), 2);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_result_format(r, &b), TP_OK);
	assert_string_equal(
		b.data,
		"[spec.runtimePatches[0].manager: Invalid value: \"Acme.io\": a lowercase RFC 1123 "
		"subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
		"start and end with an alphanumeric character (e.g. 'example.com', regex used for "
		"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
		"spec.runtimePatches[0].manager: Invalid value: \"a b\": Invalid path (regex used for "
		"validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')]");
	tp_buf_free(&b);
	tp_result_clear(r);
	/* a host over 253 characters: its length, and its shape when wrong too */
	char longhost[300];
	memset(longhost, 'a', 254);
	snprintf(longhost + 254, sizeof(longhost) - 254, "/p");
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", longhost), 1);
	assert_true(tt_has_error(r, "m", "must be no more than 253 characters"));
	longhost[0] = '-';
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", longhost), 2);
	tp_result_clear(r);
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", ""), 1);
	assert_int_equal(tp_result_error_at(r, 0)->type, TP_FIELD_REQUIRED);
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", "acme.io/"), 1);
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", "/x"), 1);
	assert_int_equal(tp__check_domain_prefixed_path(r, "m", "acme.io/a/b:c~%"), 0);
	tp_result_free(r);
}

static void base64_round_trip_and_refusals(void **state)
{
	(void)state;
	const char *texts[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar",
				"-----BEGIN CERTIFICATE-----\nMIIB\n" };
	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
		tp_buf enc = TP_BUF_INIT(0), dec = TP_BUF_INIT(0);
		assert_int_equal(tp_base64_encode(texts[i], strlen(texts[i]), &enc), TP_OK);
		assert_int_equal(tp_base64_decode(enc.data, enc.len, &dec), TP_OK);
		assert_int_equal(dec.len, strlen(texts[i]));
		assert_memory_equal(dec.data, texts[i], dec.len);
		tp_buf_free(&enc);
		tp_buf_free(&dec);
	}
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_base64_decode("Zm9vYmFy", 8, &b), TP_OK);
	assert_string_equal(b.data, "foobar");
	/* Not base64 the way the API server writes it: each is refused. */
	const char *bad[] = { "Zm9", "Zm9v\n", "Zm=v", "Z===", "Zm9v-_", "Zg=a", "=Zg=" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		tp_buf_reset(&b);
		assert_int_equal(tp_base64_decode(bad[i], strlen(bad[i]), &b), TP_EPARSE);
	}
	tp_buf_free(&b);
}

/* tp_json_write makes the bytes cJSON_PrintUnformatted makes. */
static void same_as_cjson(const cJSON *v)
{
	char *want = cJSON_PrintUnformatted(v);
	tp_buf got = TP_BUF_INIT(0);
	assert_non_null(want);
	assert_int_equal(tp_json_write(v, &got), TP_OK);
	assert_int_equal(tp_buf_addc(&got, '\0'), TP_OK);
	assert_string_equal(got.data, want);
	free(want);
	tp_buf_free(&got);
}

static void json_write_like_cjson(void **state)
{
	(void)state;
	cJSON *j = tt_json("{\"s\":\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0001\\u001f \\u007f / \\u00e9\","
			   "\"n\":[0,-0,1,-1,2147483647,-2147483648,2147483648,-2147483649,1e300,"
			   "0.1,1.5,-2.25,3.0000000000000004,123456789012345678,1e-7,0.30000000000000004],"
			   "\"l\":[true,false,null,{},[],\"\"],\"o\":{\"a\":{\"b\":[{}]}}}");
	same_as_cjson(j);
	cJSON_Delete(j);
	/* every number cJSON would print one way or another, and odd nodes */
	cJSON *a = cJSON_CreateArray();
	double nums[] = { 1.0 / 3, 2.0 / 3, 1e21, 1e-300, 6.02214076e23, -0.0, 4294967296.5,
			  9007199254740993.0, 1.7976931348623157e308 };
	for (size_t i = 0; i < sizeof(nums) / sizeof(*nums); i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(nums[i]));
	cJSON_AddItemToArray(a, cJSON_CreateRaw("{\"raw\":1}"));
	cJSON *nan = cJSON_CreateNumber(0);
	nan->valuedouble = NAN;
	cJSON_AddItemToArray(a, nan);
	same_as_cjson(a);
	cJSON_Delete(a);
	/* every byte but NUL, alone and inside a run, escaped as cJSON does */
	char all[256 * 3 + 1];
	size_t n = 0;
	for (int c = 1; c < 256; c++) {
		char one[2] = { (char)c, 0 };
		cJSON *v = cJSON_CreateString(one);
		same_as_cjson(v);
		cJSON_Delete(v);
		all[n++] = 'a', all[n++] = (char)c, all[n++] = 'b';
	}
	all[n] = '\0';
	cJSON *v = cJSON_CreateString(all);
	same_as_cjson(v);
	cJSON_Delete(v);
	/* the sample AdmissionReview, whole */
	char *text = tt_read_file("deploy/samples/admissionreview-trainjob.json", NULL);
	assert_non_null(text);
	j = tt_json(text);
	same_as_cjson(j);
	cJSON_Delete(j);
	free(text);
	/* past the buffer's limit: the limit's error, not a cut text */
	tp_buf small = TP_BUF_INIT(8);
	j = tt_json("{\"a\":\"0123456789\"}");
	assert_int_equal(tp_json_write(j, &small), TP_ELIMIT);
	cJSON_Delete(j);
	tp_buf_free(&small);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(arena_routes_cjson_and_frees_at_once),
		cmocka_unit_test(arena_limit_is_hard),
		cmocka_unit_test(arena_settles_at_its_working_size),
		cmocka_unit_test(buf_limit_is_hard),
		cmocka_unit_test(result_renders_like_upstream),
		cmocka_unit_test(quoted_like_go),
		cmocka_unit_test(object_access),
		cmocka_unit_test(names),
		cmocka_unit_test(domain_prefixed_path_texts),
		cmocka_unit_test(base64_round_trip_and_refusals),
		cmocka_unit_test(json_write_like_cjson),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_load.c — tp_load: YAML and JSON into objects, scalar typing, limits
 * and the errors bad input gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "policy/core/internal.h"
#include "policy/load/load.h"
#include "tests/support/testutil.h"

/* ---------------------------------------------------------------- helpers */

static tp_docs *load_ok(const char *text)
{
	tp_docs *d = NULL;
	tp_load_error err;
	int rc = tp_load(text, strlen(text), NULL, &d, &err);
	if (rc)
		fail_msg("tp_load failed (%d): doc %d line %d: %s", rc, err.doc, err.line, err.msg);
	return d;
}

/* tp_load must fail with code; err is returned for further checks. */
static tp_load_error load_fail_n(const char *text, size_t len, const tp_load_limits *lim, int code)
{
	tp_docs *d = (tp_docs *)1;
	tp_load_error err;
	int rc = tp_load(text, len, lim, &d, &err);
	if (rc != code)
		fail_msg("expected %d, got %d (%s)", code, rc, rc ? err.msg : "no error");
	assert_null(d);
	assert_int_equal(err.code, code);
	assert_true(err.msg[0] != '\0');
	return err;
}

static tp_load_error load_fail(const char *text, int code)
{
	return load_fail_n(text, strlen(text), NULL, code);
}

static void assert_msg_has(const tp_load_error *e, const char *part)
{
	if (!strstr(e->msg, part))
		fail_msg("message \"%s\" lacks \"%s\"", e->msg, part);
}

static const cJSON *obj_at(const tp_docs *d, size_t i)
{
	const tp_doc *doc = tp_docs_at(d, i);
	assert_non_null(doc);
	return doc->obj;
}

static char *repeat(const char *unit, size_t times, const char *head, const char *tail)
{
	size_t u = strlen(unit), h = strlen(head), t = strlen(tail);
	char *s = malloc(h + u * times + t + 1);
	assert_non_null(s);
	memcpy(s, head, h);
	for (size_t i = 0; i < times; i++)
		memcpy(s + h + i * u, unit, u);
	memcpy(s + h + u * times, tail, t + 1);
	return s;
}

/* ------------------------------------------------------------- good input */

static void yaml_many_documents(void **state)
{
	(void)state;
	tp_docs *d = load_ok("# leading comment\n"
			     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
			     "---\n# only a comment\n"
			     "---\n"
			     "---\nkind: Secret\nmetadata:\n  name: b\n"
			     "...\n");
	assert_int_equal(tp_docs_count(d), 2);
	assert_string_equal(tp_get_str(obj_at(d, 0), "metadata.name"), "a");
	assert_int_equal(tp_docs_at(d, 0)->index, 1);
	assert_int_equal(tp_docs_at(d, 0)->line, 2);
	assert_string_equal(tp_get_str(obj_at(d, 1), "kind"), "Secret");
	assert_int_equal(tp_docs_at(d, 1)->index, 4);
	assert_int_equal(tp_docs_at(d, 1)->line, 9);
	tp_docs_free(d);
}

static void yaml_list_expanded(void **state)
{
	(void)state;
	tp_docs *d = load_ok("kind: A\n---\n"
			     "apiVersion: v1\nkind: List\nitems:\n"
			     "- {kind: B, n: 1}\n- kind: C\n");
	assert_int_equal(tp_docs_count(d), 3);
	assert_string_equal(tp_get_str(obj_at(d, 1), "kind"), "B");
	assert_int_equal(tp_docs_at(d, 1)->index, 2);
	assert_int_equal(tp_docs_at(d, 1)->item, 1);
	assert_string_equal(tp_get_str(obj_at(d, 2), "kind"), "C");
	assert_int_equal(tp_docs_at(d, 2)->item, 2);
	assert_int_equal(tp_docs_at(d, 0)->item, 0);
	tp_docs_free(d);
}

static void json_fast_path(void **state)
{
	(void)state;
	tp_docs *d = load_ok("\xEF\xBB\xBF  {\"kind\": \"TrainJob\", \"spec\": {\"n\": 2, \"s\": \"1\"}}\n"
			     "{\"kind\": \"Second\"}");
	assert_int_equal(tp_docs_count(d), 2);
	long long n;
	assert_true(tp_get_int(obj_at(d, 0), "spec.n", &n));
	assert_int_equal(n, 2);
	assert_string_equal(tp_get_str(obj_at(d, 0), "spec.s"), "1");
	assert_int_equal(tp_docs_at(d, 1)->index, 2);
	assert_int_equal(tp_docs_at(d, 1)->line, 2);
	tp_docs_free(d);

	d = load_ok("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"kind\":\"X\"},{\"kind\":\"Y\"}]}");
	assert_int_equal(tp_docs_count(d), 2);
	assert_string_equal(tp_get_str(obj_at(d, 1), "kind"), "Y");
	tp_docs_free(d);
}

/* Valid JSON reads into the very tree cJSON's own parser makes. */
static void assert_same_as_cjson(const char *text)
{
	tp_docs *d = load_ok(text);
	cJSON *ref = cJSON_Parse(text);
	assert_non_null(ref);
	if (!cJSON_Compare(obj_at(d, 0), ref, true))
		fail_msg("tp_load and cJSON read differently: %.200s", text);
	cJSON_Delete(ref);
	tp_docs_free(d);
}

static void json_values(void **state)
{
	(void)state;
	assert_same_as_cjson("{\"s\": \"\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\\"\\\\x\", "
			     "\"n\": [0, -0, 7, -42, 1e5, 1.5E-3, 0.1, 123456789012345678, "
			     "-9007199254740993, 2147483648, 1e300],"
			     "\"l\": [true, false, null, {}, [], \"\"], \"u\": \"\\u0041\\u00DF\\u20AC\"}");
	/* A lone surrogate is U+FFFD, as Go's decoder reads it (cJSON refuses it). */
	tp_docs *d = load_ok("{\"a\": \"x\\ud800y\", \"b\": \"\\udc00\"}");
	assert_string_equal(tp_get_str(obj_at(d, 0), "a"), "x\xef\xbf\xbdy");
	assert_string_equal(tp_get_str(obj_at(d, 0), "b"), "\xef\xbf\xbd");
	tp_docs_free(d);
	/* Escapes outside JSON's set, and literals that are almost one. */
	tp_load_error e = load_fail("{\"a\": \"\\x41\"}", TP_EPARSE);
	assert_msg_has(&e, "invalid escape in a string: JSON knows");
	assert_int_equal(e.column, 8);
	e = load_fail("{\"a\": \"\\u12G4\"}", TP_EPARSE);
	assert_msg_has(&e, "invalid escape");
	e = load_fail("{\"a\": tru}", TP_EPARSE);
	assert_msg_has(&e, "invalid JSON near 'tru}'");
	e = load_fail("{\"a\": +1}", TP_EPARSE);
	assert_msg_has(&e, "invalid JSON near '+1}'");
	e = load_fail("{\"a\": 1,}", TP_EPARSE);
	assert_msg_has(&e, "invalid JSON near '}'");
	e = load_fail("{\"a\" 1}", TP_EPARSE);
	assert_msg_has(&e, "invalid JSON near '1}'");
	e = load_fail("{\"a\": [1 2]}", TP_EPARSE);
	assert_msg_has(&e, "invalid JSON near '2]}'");
	/* An escape or a control character is found at every offset. */
	for (int len = 0; len < 24; len++) {
		for (int at = 0; at <= len; at++) {
			char text[96], want[64];
			snprintf(text, sizeof(text), "{\"k\": \"%.*s\\\"%.*s\"}", at,
				 "aaaaaaaaaaaaaaaaaaaaaaaa", len - at, "bbbbbbbbbbbbbbbbbbbbbbbb");
			snprintf(want, sizeof(want), "%.*s\"%.*s", at, "aaaaaaaaaaaaaaaaaaaaaaaa",
				 len - at, "bbbbbbbbbbbbbbbbbbbbbbbb");
			d = load_ok(text);
			assert_string_equal(tp_get_str(obj_at(d, 0), "k"), want);
			tp_docs_free(d);
			snprintf(text, sizeof(text), "{\"k\": \"%.*s\x01%.*s\"}", at,
				 "aaaaaaaaaaaaaaaaaaaaaaaa", len - at, "bbbbbbbbbbbbbbbbbbbbbbbb");
			e = load_fail(text, TP_EPARSE);
			assert_msg_has(&e, "a control character (U+0001)");
			assert_int_equal(e.column, 8 + at);
		}
	}
	/* A duplicate deep inside is named where it is written. */
	e = load_fail("{\"a\": [{\"x\": 1}, {\"y\": \"{\\\"\", \"z\": 2,\n  \"y\": 3}]}", TP_EPARSE);
	assert_msg_has(&e, "duplicate field \"y\" (already defined at line 1)");
	assert_int_equal(e.line, 2);
	assert_int_equal(e.column, 3);
}

/* tp_load over a heap copy of exactly len bytes, no NUL after them: a scan
 * that reads past the input is caught by ASan. */
static int load_exact(const char *text, size_t len, tp_docs **d, tp_load_error *e)
{
	char *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, text, len);
	int rc = tp_load(copy, len, NULL, d, e);
	free(copy);
	return rc;
}

/* The reader scans whitespace and strings 16 bytes a step where it can, a
 * byte at a time near the end: whatever stops a scan is found at every
 * offset of a run, on both sides of a 16-byte step. */
static void json_scans_every_offset(void **state)
{
	(void)state;
	static const char ws[] = " \n\t\r   \n        \t  \r\n                 \n   ";
	static const char plain[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ";
	static const char utf8[] = "abcdefghij\xc3\xa9klmnopqrstuvwxyz0123456789ABCDEFGHIJ";
	for (int len = 0; len < 40; len++) {
		char text[320], want[128];
		tp_docs *d = NULL;
		tp_load_error e;
		/* whitespace of every length before a member, after it and at the end */
		int n = snprintf(text, sizeof(text), "{%.*s\"k\"%.*s:%.*s1%.*s}%.*s", len, ws, len, ws,
				 len, ws, len, ws, len, ws);
		assert_true(n > 0 && (size_t)n < sizeof(text));
		if (load_exact(text, (size_t)n, &d, &e))
			fail_msg("%d bytes of whitespace: %s", len, e.msg);
		long long one = 0;
		assert_true(tp_get_int(obj_at(d, 0), "k", &one));
		assert_int_equal(one, 1);
		tp_docs_free(d);
		for (int at = 0; at <= len; at++) {
			/* a vertical tab is not JSON whitespace, wherever it is */
			n = snprintf(text, sizeof(text), "{\"k\": 1%.*s\v%.*s}", at, ws, len - at, ws);
			assert_int_equal(load_exact(text, (size_t)n, &d, &e), TP_EPARSE);
			assert_msg_has(&e, "invalid JSON near '\v");
			/* a string of plain bytes (UTF-8 too, é never cut in half) ends at its quote */
			int cut = len - ((unsigned char)utf8[len] >= 0x80 && (unsigned char)utf8[len] < 0xc0);
			snprintf(want, sizeof(want), "%.*s", cut, utf8);
			n = snprintf(text, sizeof(text), "{\"%s\": \"%s\"}", want, want);
			assert_int_equal(load_exact(text, (size_t)n, &d, &e), TP_OK);
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj_at(d, 0), want);
			assert_true(cJSON_IsString(v));
			assert_string_equal(v->valuestring, want);
			tp_docs_free(d);
			/* a backslash, a raw line break and U+001F are seen at every offset */
			const char *stops[] = { "\\\\", "\n", "\x1f" };
			for (size_t k = 0; k < 3; k++) {
				n = snprintf(text, sizeof(text), "{\"k\": \"%.*s%s%.*s\"}", at, plain,
					     stops[k], len - at, plain);
				int rc = load_exact(text, (size_t)n, &d, &e);
				if (k == 0) {
					assert_int_equal(rc, TP_OK);
					snprintf(want, sizeof(want), "%.*s\\%.*s", at, plain, len - at, plain);
					assert_string_equal(tp_get_str(obj_at(d, 0), "k"), want);
					tp_docs_free(d);
					continue;
				}
				assert_int_equal(rc, TP_EPARSE);
				assert_msg_has(&e, k == 1 ? "unterminated string: the line ends"
							 : "a control character (U+001F)");
				assert_int_equal(e.column, k == 1 ? 7 : 8 + at);
			}
			/* cut short anywhere: an unterminated string, never a read past the end */
			n = snprintf(text, sizeof(text), "{\"k\": \"%.*s", at, plain);
			assert_int_equal(load_exact(text, (size_t)n, &d, &e), TP_EPARSE);
			assert_msg_has(&e, "unterminated string");
		}
	}
}

/* Every JSON fixture (AdmissionReviews from the API server) and sample reads
 * into the same tree as with cJSON. */
static void json_fixtures_as_cjson(void **state)
{
	(void)state;
	const char *local[] = { "deploy/samples/admissionreview-trainjob.json",
				"tests/bench/admissionreview-clustertrainingruntime.json" };
	size_t n = 0;
	for (size_t i = 0; i < sizeof(local) / sizeof(*local); i++, n++) {
		char *text = tt_read_file(local[i], NULL);
		assert_non_null(text);
		assert_same_as_cjson(text);
		free(text);
	}
	if (tt_shared_dir()) {
		char *dir = tt_shared_path("fixtures/admissionreview");
		DIR *d = opendir(dir);
		assert_non_null(d);
		for (struct dirent *e; (e = readdir(d)) != NULL;) {
			if (!strstr(e->d_name, ".json"))
				continue;
			char path[1024];
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			char *text = tt_read_file(path, NULL);
			assert_non_null(text);
			assert_same_as_cjson(text);
			free(text);
			n++;
		}
		closedir(d);
		free(dir);
	}
	print_message("%zu JSON files read as cJSON reads them\n", n);
}

static void yaml_bom_skipped(void **state)
{
	(void)state;
	tp_docs *d = load_ok("\xEF\xBB\xBFkind: X\n");
	assert_string_equal(tp_get_str(obj_at(d, 0), "kind"), "X");
	tp_docs_free(d);
}

static void yaml_scalars_typed(void **state)
{
	(void)state;
	tp_docs *d = load_ok("q: \"1\"\np: 1\nyes_: yes\noff_: Off\nhex: 0x1F\noct: 0o17\nold: 017\n"
			     "bin: 0b101\nus: 1_000\nneg: -42\nexp: 1e3\nfl: 2.5\nn1: ~\nn2: null\n"
			     "n3:\nword: yesterday\nstr: !!str 12\nint: !!int \"7\"\nf: !!float 3\n"
			     "eight: 08\nsq: '0x10'\nbig: 18446744073709551615\n");
	const cJSON *o = obj_at(d, 0);
	assert_true(cJSON_IsString(tp_get(o, "q")));
	assert_true(cJSON_IsNumber(tp_get(o, "p")));
	assert_true(cJSON_IsTrue(tp_get(o, "yes_")));
	assert_true(cJSON_IsFalse(tp_get(o, "off_")));
	long long v;
	assert_true(tp_get_int(o, "hex", &v));
	assert_int_equal(v, 31);
	assert_true(tp_get_int(o, "oct", &v));
	assert_int_equal(v, 15);
	assert_true(tp_get_int(o, "old", &v));
	assert_int_equal(v, 15);
	assert_true(tp_get_int(o, "bin", &v));
	assert_int_equal(v, 5);
	assert_true(tp_get_int(o, "us", &v));
	assert_int_equal(v, 1000);
	assert_true(tp_get_int(o, "neg", &v));
	assert_int_equal(v, -42);
	assert_true(tp_get_int(o, "exp", &v));
	assert_int_equal(v, 1000);
	assert_true(tp_get(o, "fl")->valuedouble == 2.5);
	assert_true(cJSON_IsNull(tp_get(o, "n1")));
	assert_true(cJSON_IsNull(tp_get(o, "n2")));
	assert_true(cJSON_IsNull(tp_get(o, "n3")));
	assert_string_equal(tp_get_str(o, "word"), "yesterday");
	assert_string_equal(tp_get_str(o, "str"), "12");
	assert_true(tp_get_int(o, "int", &v));
	assert_int_equal(v, 7);
	assert_true(tp_get_int(o, "f", &v));
	assert_int_equal(v, 3);
	assert_true(tp_get_int(o, "eight", &v)); /* go-yaml: not octal, so a float */
	assert_int_equal(v, 8);
	assert_string_equal(tp_get_str(o, "sq"), "0x10");
	assert_true(tp_get(o, "big")->valuedouble == 18446744073709551615.0);
	tp_docs_free(d);
}

static void scalar_resolver(void **state)
{
	(void)state;
	tp_yaml_scalar sc;
	char msg[128];
	static const struct {
		const char *s;
		tp_yaml_type t;
	} cases[] = {
		{ "y", TP_YAML_BOOL },	   { "NO", TP_YAML_BOOL },	{ "oN", TP_YAML_STR },
		{ "TRUE", TP_YAML_BOOL },  { "tRUE", TP_YAML_STR },	{ "Null", TP_YAML_NULL },
		{ "", TP_YAML_NULL },	   { ".inf", TP_YAML_FLOAT },	{ "-.Inf", TP_YAML_FLOAT },
		{ ".NaN", TP_YAML_FLOAT }, { ".nAn", TP_YAML_STR },	{ "+12", TP_YAML_INT },
		{ "0x", TP_YAML_STR },	   { "1.", TP_YAML_FLOAT },	{ ".5", TP_YAML_FLOAT },
		{ "1e400", TP_YAML_STR },  { "<<", TP_YAML_MERGE },	{ "0xFFFFFFFFFFFFFFFFF", TP_YAML_STR },
		{ "2024-01-02", TP_YAML_STR }, { "1_0.5", TP_YAML_FLOAT }, { "-0b11", TP_YAML_INT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(tp__yaml_resolve(cases[i].s, strlen(cases[i].s), NULL, true, &sc,
						  msg, sizeof(msg)),
				 TP_OK);
		if (sc.type != cases[i].t)
			fail_msg("\"%s\": type %d, want %d", cases[i].s, sc.type, cases[i].t);
	}
	assert_int_equal(tp__yaml_resolve("-0b11", 5, NULL, true, &sc, msg, sizeof(msg)), TP_OK);
	assert_int_equal(sc.i, -3);
	assert_int_equal(tp__yaml_resolve("-9223372036854775808", 20, NULL, true, &sc, msg, 128), 0);
	assert_true(sc.type == TP_YAML_INT && sc.i == INT64_MIN);
	assert_int_equal(tp__yaml_resolve("9223372036854775808", 19, NULL, true, &sc, msg, 128), 0);
	assert_true(sc.type == TP_YAML_INT && sc.is_uint && sc.u == 9223372036854775808ULL);
	assert_int_equal(tp__yaml_resolve("-9223372036854775809", 20, NULL, true, &sc, msg, 128), 0);
	assert_int_equal(sc.type, TP_YAML_FLOAT);
	assert_int_equal(tp__yaml_resolve(".inf", 4, NULL, true, &sc, msg, 128), 0);
	assert_true(isinf(sc.d) && sc.d > 0);
	assert_int_equal(tp__yaml_resolve("yes", 3, NULL, false, &sc, msg, 128), 0);
	assert_int_equal(sc.type, TP_YAML_STR); /* quoted */

	assert_int_equal(tp__yaml_resolve("1.5", 3, "tag:yaml.org,2002:int", true, &sc, msg, 128),
			 TP_EPARSE);
	assert_string_equal(msg, "cannot decode !!float `1.5` as a !!int");
	assert_int_equal(tp__yaml_resolve("abc", 3, "tag:yaml.org,2002:bool", true, &sc, msg, 128),
			 TP_EPARSE);
	assert_string_equal(msg, "cannot decode !!str `abc` as a !!bool");
	assert_int_equal(tp__yaml_resolve("x", 1, "tag:yaml.org,2002:null", true, &sc, msg, 128),
			 TP_EPARSE);
	assert_int_equal(tp__yaml_resolve("~", 1, "tag:yaml.org,2002:null", true, &sc, msg, 128), 0);
	assert_int_equal(sc.type, TP_YAML_NULL);
	assert_int_equal(tp__yaml_resolve("on", 2, "tag:yaml.org,2002:bool", false, &sc, msg, 128), 0);
	assert_true(sc.type == TP_YAML_BOOL && sc.b);
	assert_int_equal(tp__yaml_resolve("12", 2, "!custom", true, &sc, msg, 128), 0);
	assert_int_equal(sc.type, TP_YAML_STR);
}

static void key_text(void **state)
{
	(void)state;
	char buf[64];
	tp_yaml_scalar sc = { .type = TP_YAML_FLOAT, .d = 1.5 };
	assert_int_equal(tp__yaml_key_text(&sc, buf, sizeof(buf)), 3);
	assert_string_equal(buf, "1.5");
	sc.d = 1e6;
	tp__yaml_key_text(&sc, buf, sizeof(buf));
	assert_string_equal(buf, "1e+06");
	sc.d = 100;
	tp__yaml_key_text(&sc, buf, sizeof(buf));
	assert_string_equal(buf, "100");
	sc.d = 0.1; /* float32 precision, as sigs.k8s.io/yaml formats keys */
	tp__yaml_key_text(&sc, buf, sizeof(buf));
	assert_string_equal(buf, "0.1");
	/* Finite doubles past float32's range are Go's +Inf/-Inf keys (fuzz_load
	 * found the crash: "%e" of inf has no 'e'). */
	sc.d = 1e308;
	tp__yaml_key_text(&sc, buf, sizeof(buf));
	assert_string_equal(buf, ".inf");
	sc.d = -1e39;
	tp__yaml_key_text(&sc, buf, sizeof(buf));
	assert_string_equal(buf, "-.inf");
	sc = (tp_yaml_scalar){ .type = TP_YAML_BOOL, .b = true };
	tp__yaml_key_text(&sc, buf, sizeof(buf));
	assert_string_equal(buf, "true");
	sc = (tp_yaml_scalar){ .type = TP_YAML_NULL };
	assert_int_equal(tp__yaml_key_text(&sc, buf, sizeof(buf)), -1);

	tp_docs *d = load_ok("m:\n  1: a\n  on: b\n  0x10: c\n  2.5: d\n");
	const cJSON *m = tp_get(obj_at(d, 0), "m");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(m, "1")->valuestring, "a");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(m, "true")->valuestring, "b");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(m, "16")->valuestring, "c");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(m, "2.5")->valuestring, "d");
	tp_docs_free(d);

	d = load_ok("1e308: x\n");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(obj_at(d, 0), ".inf")->valuestring,
			    "x");
	tp_docs_free(d);
}

static void anchors_and_merge_keys(void **state)
{
	(void)state;
	tp_docs *d = load_ok("base: &b {image: x, cpu: 1}\n"
			     "other: &o {mem: 2, cpu: 9}\n"
			     "use: *b\n"
			     "m:\n  <<: [*b, *o]\n  image: z\n"
			     "one:\n  <<: *o\n"
			     "lst: &l [1, 2]\nlst2: *l\n"
			     "name: &n hello\ncopy: *n\n");
	const cJSON *o = obj_at(d, 0);
	assert_string_equal(tp_get_str(o, "use.image"), "x");
	assert_string_equal(tp_get_str(o, "m.image"), "z"); /* written key wins */
	long long v;
	assert_true(tp_get_int(o, "m.cpu", &v));
	assert_int_equal(v, 1); /* earlier merged map wins */
	assert_true(tp_get_int(o, "m.mem", &v));
	assert_int_equal(v, 2);
	assert_null(tp_get(o, "m.<<"));
	assert_int_equal(cJSON_GetArraySize(tp_get(o, "m")), 3);
	assert_true(tp_get_int(o, "one.mem", &v));
	assert_int_equal(cJSON_GetArraySize(tp_get(o, "lst2")), 2);
	assert_string_equal(tp_get_str(o, "copy"), "hello");
	/* The copy is a separate tree, not a shared node. */
	assert_ptr_not_equal(tp_get(o, "use"), tp_get(o, "base"));
	tp_docs_free(d);

	tp_load_error e = load_fail("a: &x 1\n---\nb: *x\n", TP_EPARSE);
	assert_msg_has(&e, "unknown anchor 'x'");
	assert_int_equal(e.doc, 2);
	e = load_fail("a: 1\nm:\n  <<: 5\n", TP_EPARSE);
	assert_msg_has(&e, "map merge requires");
	assert_int_equal(e.line, 3);
}

static void duplicate_keys_refused(void **state)
{
	(void)state;
	tp_load_error e = load_fail("kind: A\nmetadata:\n  name: x\n  name: y\n", TP_EPARSE);
	assert_msg_has(&e, "mapping key \"name\" already defined at line 3");
	assert_int_equal(e.doc, 1);
	assert_int_equal(e.line, 4);

	/* A big mapping goes through the hash set. */
	tp_buf b = TP_BUF_INIT(1 << 20);
	for (int i = 0; i < 40; i++)
		tp_buf_addf(&b, "k%d: %d\n", i, i);
	tp_buf_adds(&b, "k7: again\n");
	e = load_fail(b.data, TP_EPARSE);
	assert_msg_has(&e, "\"k7\" already defined at line 8");
	assert_int_equal(e.line, 41);
	tp_buf_free(&b);

	e = load_fail("{\"kind\": \"A\",\n \"spec\": {\"a\": 1,\n  \"a\": 2}}", TP_EPARSE);
	assert_msg_has(&e, "duplicate field \"a\" (already defined at line 2)");
	assert_int_equal(e.line, 3);
	assert_int_equal(e.column, 3);

	/* Merged keys are not duplicates: the written one wins. */
	tp_docs *d = load_ok("b: &b {x: 1}\nm:\n  x: 2\n  <<: *b\n");
	long long v;
	assert_true(tp_get_int(obj_at(d, 0), "m.x", &v));
	assert_int_equal(v, 2);
	tp_docs_free(d);
}

/* -------------------------------------------------------------- bad input */

static void empty_input(void **state)
{
	(void)state;
	/* Empty input is an error (TP_EPARSE, "no ... document"), never 0 objects. */
	tp_load_error e = load_fail("", TP_EPARSE);
	assert_msg_has(&e, "no YAML or JSON document");
	e = load_fail("# nothing\n---\n---\n", TP_EPARSE);
	assert_msg_has(&e, "no YAML or JSON document");
	tp_docs *d = (tp_docs *)1;
	assert_int_equal(tp_load(NULL, 0, NULL, &d, NULL), TP_EPARSE);
	assert_null(d);
}

static void binary_and_encoding(void **state)
{
	(void)state;
	static const char garbage[] = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR";
	tp_load_error e = load_fail_n(garbage, sizeof(garbage) - 1, NULL, TP_EPARSE);
	assert_true(strstr(e.msg, "UTF-8") || strstr(e.msg, "NUL"));
	e = load_fail_n("kind: A\nb: \"x\0y\"\n", 17, NULL, TP_EPARSE);
	assert_msg_has(&e, "NUL byte at offset 13");
	e = load_fail("kind: A\nname: caf\xE9\n", TP_EPARSE);
	assert_msg_has(&e, "invalid UTF-8");
	assert_msg_has(&e, "line 2");
	e = load_fail("kind: A\nx: \x01\n", TP_EPARSE); /* a control character */
	assert_int_equal(e.line, 2);
	/* The first NUL or bad UTF-8 byte is found at every offset, on both sides
	 * of the 16-byte steps of the check. */
	for (int at = 0; at < 48; at++) {
		char text[80];
		tp_docs *d = NULL;
		int n = snprintf(text, sizeof(text), "{\"k\": \"%.*s", at,
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
		memcpy(text + n, "\xC3\xA9\"}", 4); /* é: valid */
		assert_int_equal(load_exact(text, (size_t)n + 4, &d, &e), TP_OK);
		tp_docs_free(d);
		text[n + 1] = 0x41; /* a lead byte without its continuation */
		assert_int_equal(load_exact(text, (size_t)n + 4, &d, &e), TP_EPARSE);
		char want[64];
		snprintf(want, sizeof(want), "invalid UTF-8 at byte %d (line 1)", n);
		assert_msg_has(&e, want);
		text[n] = '\0';
		assert_int_equal(load_exact(text, (size_t)n + 4, &d, &e), TP_EPARSE);
		snprintf(want, sizeof(want), "binary data: NUL byte at offset %d", n);
		assert_msg_has(&e, want);
	}
}

/* tp_load must refuse text as nested too deep (the speed of the refusal
 * is the benchmark's business, not a test's). */
static tp_load_error too_deep(const char *text, size_t len)
{
	return load_fail_n(text, len, NULL, TP_ELIMIT);
}

static void deep_nesting(void **state)
{
	(void)state;
	char *s = repeat("[", 10000, "", "");
	tp_load_error e = too_deep(s, strlen(s));
	assert_msg_has(&e, "nesting deeper than 100");
	assert_int_equal(e.column, 101);
	free(s);
	s = repeat("{\"a\":", 10000, "", "1");
	e = too_deep(s, strlen(s));
	assert_msg_has(&e, "nesting deeper than 100");
	free(s);
	s = repeat("[", 10000, "a: ", "");
	e = too_deep(s, strlen(s));
	assert_msg_has(&e, "nesting deeper than 100");
	assert_int_equal(e.doc, 1);
	assert_int_equal(e.line, 1);
	free(s);
	s = repeat("- ", 10000, "a:\n", "x\n");
	e = too_deep(s, strlen(s));
	assert_msg_has(&e, "nesting deeper than 100");
	free(s);
	/* Block mappings, every level indented one more space (about 50 MB). */
	size_t levels = 10000, len = 0;
	s = malloc(levels * (levels + 1) / 2 + 3 * levels + 1);
	assert_non_null(s);
	for (size_t i = 0; i < levels; i++) {
		memset(s + len, ' ', i);
		memcpy(s + len + i, "k:\n", 3);
		len += i + 3;
	}
	e = too_deep(s, len);
	assert_msg_has(&e, "nesting deeper than 100");
	assert_int_equal(e.line, 101);
	free(s);

	/* Exactly at the limit is fine. */
	tp_load_limits lim = { .max_depth = 3 };
	tp_docs *d = NULL;
	tp_load_error err;
	assert_int_equal(tp_load("{\"a\":[{}]}", 10, &lim, &d, &err), TP_OK);
	tp_docs_free(d);
	load_fail_n("{\"a\":[[{}]]}", 12, &lim, TP_ELIMIT);
	assert_int_equal(tp_load("a: [{}]", 7, &lim, &d, &err), TP_OK);
	tp_docs_free(d);
	load_fail_n("a: [[{}]]", 9, &lim, TP_ELIMIT);
}

static void alias_bomb(void **state)
{
	(void)state;
	static const char bomb[] =
		"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
		"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
		"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
		"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
		"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
		"g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
		"h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
		"i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
	tp_load_error e = load_fail(bomb, TP_ELIMIT);
	assert_msg_has(&e, "more than 100000 nodes");
	assert_true(e.line >= 6);

	/* The alias count limit, across documents. */
	tp_load_limits lim = { .max_aliases = 3 };
	const char *many = "a: &x 1\nb: *x\nc: *x\n---\nd: &y 2\ne: *y\nf: *y\n";
	e = load_fail_n(many, strlen(many), &lim, TP_ELIMIT);
	assert_msg_has(&e, "more than 3 aliases");
	assert_int_equal(e.doc, 2);
	assert_int_equal(e.line, 7); /* lines count from the start of the input */
}

static void big_documents(void **state)
{
	(void)state;
	size_t n = (size_t)50 << 20;
	char *s = malloc(n + 1);
	assert_non_null(s);
	for (size_t i = 0; i < n; i += 8)
		memcpy(s + i, "k: vvv\n#", 8);
	memcpy(s, "a: b\nc:\n", 8);
	s[n] = '\0';
	tp_load_error e = load_fail_n(s, n, NULL, TP_ELIMIT);
	assert_msg_has(&e, "over the limit of 3145728 bytes");
	assert_int_equal(e.doc, 1);
	/* One big JSON document. */
	memset(s, ' ', n);
	memcpy(s, "{\"a\": \"", 7);
	memcpy(s + n - 2, "\"}", 2);
	e = load_fail_n(s, n, NULL, TP_ELIMIT);
	assert_msg_has(&e, "over the limit");
	/* And past the whole-input limit, refused before parsing. */
	tp_load_limits lim = { .max_total_bytes = 1 << 20 };
	e = load_fail_n(s, n, &lim, TP_ELIMIT);
	assert_msg_has(&e, "over the limit of 1048576 bytes");
	free(s);
}

static void too_many_documents(void **state)
{
	(void)state;
	tp_load_limits lim = { .max_docs = 5 };
	char *s = repeat("---\nkind: A\n", 6, "", "");
	tp_load_error e = load_fail_n(s, strlen(s), &lim, TP_ELIMIT);
	assert_msg_has(&e, "more than 5 objects");
	assert_int_equal(e.doc, 6);
	free(s);
	const char *list = "apiVersion: v1\nkind: List\nitems: [{a: 1},{a: 2},{a: 3},{a: 4},{a: 5},{a: 6}]\n";
	e = load_fail_n(list, strlen(list), &lim, TP_ELIMIT);
	assert_msg_has(&e, "more than 5 objects");
}

static void not_a_mapping(void **state)
{
	(void)state;
	tp_load_error e = load_fail("- a\n- b\n", TP_EPARSE);
	assert_msg_has(&e, "a sequence, not a Kubernetes object");
	assert_int_equal(e.doc, 1);
	e = load_fail("kind: A\n---\n42\n", TP_EPARSE);
	assert_msg_has(&e, "a scalar, not a Kubernetes object");
	assert_int_equal(e.doc, 2);
	assert_int_equal(e.line, 3);
	e = load_fail("[1, 2]", TP_EPARSE);
	assert_msg_has(&e, "an array, not a Kubernetes object");
	e = load_fail("{\"a\": 1} 42", TP_EPARSE);
	assert_msg_has(&e, "unexpected text after the JSON document");
	e = load_fail("{\"a\": 1}\n---\nb: 2\n", TP_EPARSE);
	assert_int_equal(e.line, 2);
	e = load_fail("a: [1, 2]: 3\n", TP_EPARSE);
	e = load_fail("? [1, 2]\n: 3\n", TP_EPARSE);
	assert_msg_has(&e, "cannot be a mapping key");
	e = load_fail("? \n: 3\n", TP_EPARSE);
	assert_msg_has(&e, "key is null");
	e = load_fail("a: .inf\n", TP_EPARSE);
	assert_msg_has(&e, "cannot be represented in JSON");
	e = load_fail("a: !!int abc\n", TP_EPARSE);
	assert_msg_has(&e, "cannot decode !!str `abc` as a !!int");
	assert_int_equal(e.line, 1);
}

static void unterminated_and_syntax(void **state)
{
	(void)state;
	tp_load_error e = load_fail("{\"kind\": \"TrainJob,\n \"x\": 1}\n", TP_EPARSE);
	/* A line break cannot be inside a JSON string (RFC 8259, Go's decoder):
	 * the missing quote is named on its own line, not where the text next
	 * stops making sense. */
	assert_msg_has(&e, "unterminated string: the line ends before its closing quote");
	assert_int_equal(e.line, 1);
	assert_int_equal(e.column, 10);
	e = load_fail("{\"kind\": \"Train\tJob\"}", TP_EPARSE);
	assert_msg_has(&e, "a control character (U+0009) inside a string: write it escaped");
	assert_int_equal(e.column, 16);
	e = load_fail("{\"kind\": \"TrainJob}\n", TP_EPARSE);
	assert_msg_has(&e, "unterminated string");
	assert_int_equal(e.line, 1);
	assert_int_equal(e.column, 10);
	e = load_fail("{\"kind\": [1, 2}\n", TP_EPARSE);
	assert_msg_has(&e, "invalid JSON near '}'");
	e = load_fail("{\"kind\": [1, 2]\n", TP_EPARSE);
	assert_msg_has(&e, "unexpected end of JSON input");
	e = load_fail("kind: A\n---\nname: \"abc\nmore: 1\n", TP_EPARSE);
	assert_msg_has(&e, "found unexpected end of stream");
	assert_int_equal(e.doc, 2);
	e = load_fail("a: 1\n b: 2\n", TP_EPARSE);
	assert_int_equal(e.doc, 1);
	assert_int_equal(e.line, 2);
	tp_buf b = TP_BUF_INIT(4096);
	tp_load_error_format(&e, "x.yaml", &b);
	assert_non_null(strstr(b.data, "x.yaml: document 1, line 2, column "));
	tp_buf_free(&b);
}

/* -------------------------------------------------------------- fixtures */

static int load_file(const char *path, tp_docs **out, tp_load_error *err)
{
	size_t len;
	char *s = tt_read_file(path, &len);
	if (!s)
		fail_msg("cannot read %s", path);
	int rc = tp_load(s, len, NULL, out, err);
	free(s);
	return rc;
}

/* Every file named *ext under dir loads; returns how many did. */
static size_t load_tree(const char *dir, const char *ext, size_t *refused)
{
	DIR *d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s", dir);
	size_t files = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			files += load_tree(path, ext, refused);
			continue;
		}
		size_t n = strlen(de->d_name), e = strlen(ext);
		if (n < e || strcmp(de->d_name + n - e, ext))
			continue;
		tp_docs *docs = NULL;
		tp_load_error err;
		int rc = load_file(path, &docs, &err);
		if (rc && strstr(err.msg, "a sequence, not a Kubernetes object") && err.doc == 1) {
			/* kustomize's JSON 6902 patches (webhook/patch_*.yaml) are a
			 * list of operations, not objects: refusing them is right. */
			(*refused)++;
			continue;
		}
		if (rc)
			fail_msg("%s: document %d line %d: %s", path, err.doc, err.line, err.msg);
		assert_true(tp_docs_count(docs) > 0);
		tp_docs_free(docs);
		files++;
	}
	closedir(d);
	return files;
}

static void fixtures_load(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *up = tt_shared_path("fixtures/upstream");
	char *ar = tt_shared_path("fixtures/admissionreview");
	size_t refused = 0;
	assert_true(load_tree(up, ".yaml", &refused) >= 20);
	assert_true(refused <= 2);
	assert_true(load_tree(ar, ".json", &refused) >= 10);
	assert_true(refused <= 2);
	free(up);
	free(ar);
}

static void fixture_torch_runtime(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *p = tt_shared_path("fixtures/upstream/runtimes/torch_distributed.yaml");
	tp_docs *d = NULL;
	tp_load_error err;
	assert_int_equal(load_file(p, &d, &err), TP_OK);
	free(p);
	const cJSON *rt = obj_at(d, 0);
	assert_string_equal(tp_get_str(rt, "kind"), "ClusterTrainingRuntime");
	assert_string_equal(tp_get_str(rt, "metadata.name"), "torch-distributed");
	long long n;
	assert_true(tp_get_int(rt, "spec.mlPolicy.numNodes", &n));
	assert_int_equal(n, 1);
	assert_int_equal(tp_kind_of(rt), TP_KIND_CLUSTER_TRAINING_RUNTIME);
	tp_docs_free(d);
}

/* ---------------------------------------------------------------- arenas */

static void arena_loads_free_at_once(void **state)
{
	(void)state;
	static const char *inputs[] = {
		"a: &b {x: 1}\nm:\n  <<: *b\n  y: [1, 2, {z: 3}]\n---\nkind: B\n",
		"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"a\":1},{\"b\":[2]}]}",
		"a: 1\na: 2\n", /* an error midway */
		"x: [[[",
		"{\"a\": {\"b\": 1, \"b\": 2}}",
	};
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		tp_arena *prev = tp_arena_enter(a);
		tp_docs *d = NULL;
		tp_load_error err;
		int rc = tp_load(inputs[i], strlen(inputs[i]), NULL, &d, &err);
		assert_int_equal(rc, i < 2 ? TP_OK : TP_EPARSE);
		if (d)
			assert_true(tp_arena_owns(a, obj_at(d, 0)));
		tp_docs_free(d);
		tp_arena_leave(prev);
		tp_arena_reset(a);
	}
	if (!tt_shared_dir()) { /* the CRD below needs ../shared: free before skipping */
		tp_arena_free(a);
		TT_REQUIRE_SHARED();
	}
	char *p = tt_shared_path("fixtures/upstream/crds/trainer.kubeflow.org_trainjobs.yaml");
	tp_arena *prev = tp_arena_enter(a);
	tp_docs *d = NULL;
	tp_load_error err;
	assert_int_equal(load_file(p, &d, &err), TP_OK);
	tp_docs_free(d);
	tp_arena_leave(prev);
	free(p);
	tp_arena_free(a);
}


/* Positions (tp_load_limits.positions): a member at its key, an item where
 * it starts; paths from error messages resolve to the deepest node. */
static void pos_is(const tp_docs *d, const cJSON *root, const char *path, int line, int col)
{
	int l = 0, c = 0;
	assert_true(tp_docs_path_position(d, root, path, &l, &c));
	if (l != line || c != col)
		print_message("%s: got %d:%d, want %d:%d\n", path, l, c, line, col);
	assert_int_equal(l, line);
	assert_int_equal(c, col);
}

static void positions_yaml_and_json(void **state)
{
	(void)state;
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.positions = true;
	const char *yaml = "apiVersion: v1\n"
			   "kind: X\n"
			   "metadata:\n"
			   "  labels:\n"
			   "    trainer.kubeflow.org/framework: torch\n"
			   "spec:\n"
			   "  list:\n"
			   "    - name: a\n"
			   "    - name: b\n"
			   "      value: \"\xc3\xa9t\xc3\xa9\"\n";
	tp_docs *d = NULL;
	assert_int_equal(tp_load(yaml, strlen(yaml), &lim, &d, NULL), TP_OK);
	const cJSON *o = tp_docs_at(d, 0)->obj;
	pos_is(d, o, "kind", 2, 1);
	pos_is(d, o, "metadata.labels.trainer.kubeflow.org/framework", 5, 5);
	pos_is(d, o, "spec.list[1]", 9, 7);
	pos_is(d, o, "spec.list[1].value", 10, 7);
	pos_is(d, o, "spec.list[1].missing.deeper", 9, 7); /* the deepest that exists */
	pos_is(d, o, "Spec.List", 7, 3);                        /* Go-cased paths of upstream */
	tp_docs_free(d);

	const char *json = "{\"apiVersion\": \"v1\", \"kind\": \"X\",\n"
			   " \"spec\": {\"a\": [1, {\"b\": \"\xc3\xa9\"}, 3],\n"
			   "   \"c\": {\"d\": true}}}";
	assert_int_equal(tp_load(json, strlen(json), &lim, &d, NULL), TP_OK);
	o = tp_docs_at(d, 0)->obj;
	pos_is(d, o, "kind", 1, 22);
	pos_is(d, o, "spec.a[1].b", 2, 21);
	pos_is(d, o, "spec.a[2]", 2, 32); /* columns count characters: é is one */
	pos_is(d, o, "spec.c.d", 3, 10);
	tp_docs_free(d);

	/* not asked: nothing recorded */
	assert_int_equal(tp_load(json, strlen(json), NULL, &d, NULL), TP_OK);
	int l, c;
	assert_false(tp_docs_path_position(d, tp_docs_at(d, 0)->obj, "kind", &l, &c));
	tp_docs_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(positions_yaml_and_json),
		cmocka_unit_test(yaml_many_documents),
		cmocka_unit_test(yaml_list_expanded),
		cmocka_unit_test(json_fast_path),
		cmocka_unit_test(json_values),
		cmocka_unit_test(json_fixtures_as_cjson),
		cmocka_unit_test(yaml_bom_skipped),
		cmocka_unit_test(yaml_scalars_typed),
		cmocka_unit_test(scalar_resolver),
		cmocka_unit_test(key_text),
		cmocka_unit_test(anchors_and_merge_keys),
		cmocka_unit_test(duplicate_keys_refused),
		cmocka_unit_test(empty_input),
		cmocka_unit_test(binary_and_encoding),
		cmocka_unit_test(deep_nesting),
		cmocka_unit_test(alias_bomb),
		cmocka_unit_test(big_documents),
		cmocka_unit_test(too_many_documents),
		cmocka_unit_test(not_a_mapping),
		cmocka_unit_test(unterminated_and_syntax),
		cmocka_unit_test(json_scans_every_offset),
		cmocka_unit_test(fixtures_load),
		cmocka_unit_test(fixture_torch_runtime),
		cmocka_unit_test(arena_loads_free_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

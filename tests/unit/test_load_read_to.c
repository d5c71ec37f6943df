/*
 * test_load_read_to.c — tp_load_limits.read_to: the loader tells how far it
 * has read, every step, in the byte checks and again in YAML's parser, and
 * loads the same objects as without it; JSON is told of the byte checks only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/load/load.h"
#include "tests/support/testutil.h"

typedef struct told {
	const char *data;
	size_t v[256];
	size_t n;
} told;

static void record(void *arg, const char *data, size_t upto)
{
	told *t = arg;
	assert_ptr_equal(data, t->data);
	assert_true(t->n < sizeof(t->v) / sizeof(t->v[0]));
	t->v[t->n++] = upto;
}

/* A text of about n bytes: one document, many members, one non-ASCII. */
static char *big_text(size_t n, bool json)
{
	char *s = malloc(n + 256);
	assert_non_null(s);
	size_t len = (size_t)sprintf(s, json ? "{\"kind\": \"Big\", \"note\": \"caf\xC3\xA9\"" :
					       "kind: Big\nnote: caf\xC3\xA9\n");
	for (int i = 0; len < n; i++)
		len += (size_t)sprintf(s + len, json ? ", \"k%d\": \"value %d\"" : "k%d: value %d\n",
				       i, i);
	if (json)
		strcpy(s + len, "}");
	return s;
}

static char *loaded(const char *text, const tp_load_limits *lim)
{
	tp_docs *d = NULL;
	tp_load_error err;
	int rc = tp_load(text, strlen(text), lim, &d, &err);
	if (rc)
		fail_msg("tp_load: %s", err.msg);
	char *out = cJSON_PrintUnformatted(tp_docs_at(d, 0)->obj);
	tp_docs_free(d);
	return out;
}

/* The passes told: runs of growing offsets, each ending at the text's end. */
static size_t passes(const told *t, size_t len)
{
	size_t runs = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (i && t->v[i] <= t->v[i - 1] && t->v[i - 1] != len)
			fail_msg("told %zu after %zu, before the end (%zu)", t->v[i], t->v[i - 1], len);
		if (i && t->v[i] > t->v[i - 1] && t->v[i] - t->v[i - 1] > TP_LOAD_READ_STEP + 16)
			fail_msg("told %zu after %zu: more than a step", t->v[i], t->v[i - 1]);
		runs += t->v[i] == len;
	}
	return runs;
}

static void check(bool json, size_t want_passes)
{
	char *text = big_text(5 * TP_LOAD_READ_STEP / 2, json);
	told t = { .data = text };
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	char *plain = loaded(text, &lim);
	lim.read_to = record;
	lim.read_arg = &t;
	char *followed = loaded(text, &lim);
	assert_string_equal(plain, followed);
	assert_int_equal(passes(&t, strlen(text)), want_passes);
	assert_true(t.n >= 3 * want_passes); /* 2.5 steps: three calls a pass */
	free(plain);
	free(followed);
	free(text);
}

static void yaml_is_followed_in_both_passes(void **state)
{
	(void)state;
	check(false, 2);
}

static void json_is_followed_in_the_byte_checks(void **state)
{
	(void)state;
	check(true, 1);
}

/* An error past what was told is still placed: its line is read again. */
static void errors_are_placed_after_telling(void **state)
{
	(void)state;
	char *text = big_text(3 * TP_LOAD_READ_STEP, false);
	size_t lines = 0;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	strcat(text, "bad: [unclosed\n");
	told t = { .data = text };
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.read_to = record;
	lim.read_arg = &t;
	tp_docs *d = NULL;
	tp_load_error err;
	assert_int_equal(tp_load(text, strlen(text), &lim, &d, &err), TP_EPARSE);
	assert_true(err.line > (int)lines);
	assert_true(t.n > 3);
	free(text);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(yaml_is_followed_in_both_passes),
		cmocka_unit_test(json_is_followed_in_the_byte_checks),
		cmocka_unit_test(errors_are_placed_after_telling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

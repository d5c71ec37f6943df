/*
 * test_yaml_out.c — expand's YAML writer: what it writes reads back as the
 * same JSON, and strings that look like other types stay strings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"
#include "webhook/cli/yaml_out.h"

/* Write j as YAML, read it back with the project's loader, compare. */
static void assert_round_trip(const char *json)
{
	cJSON *j = tt_json(json);
	tp_buf out = TP_BUF_INIT(1 << 20);
	assert_int_equal(tw_yaml_write(j, &out), TP_OK);
	tp_docs *docs = NULL;
	tp_load_error err;
	int rc = tp_load(out.data, out.len, NULL, &docs, &err);
	if (rc)
		fail_msg("YAML does not load back (%s): %s\n%s", tp_strerror(rc), err.msg, out.data);
	assert_int_equal(tp_docs_count(docs), 1);
	if (!tp_json_equal(j, tp_docs_at(docs, 0)->obj))
		fail_msg("round trip changed the value:\n%s", out.data);
	tp_docs_free(docs);
	tp_buf_free(&out);
	cJSON_Delete(j);
}

static void strings_that_look_like_other_types_stay_strings(void **state)
{
	(void)state;
	assert_round_trip("{\"a\":\"true\",\"b\":\"yes\",\"c\":\"1\",\"d\":\"0x10\",\"e\":\"null\","
			  "\"f\":\"~\",\"g\":\"\",\"h\":\"1.5\",\"i\":\"-3\",\"j\":\".inf\",\"k\":\"on\","
			  "\"l\":\"2026-08-21T10:15:30Z\",\"m\":\"Off\"}");
}

static void numbers_booleans_null_and_nesting(void **state)
{
	(void)state;
	assert_round_trip("{\"n\":29500,\"neg\":-1,\"f\":0.25,\"t\":true,\"x\":false,\"z\":null,"
			  "\"l\":[1,\"two\",{\"three\":3}],\"e\":{},\"ea\":[],"
			  "\"deep\":{\"a\":{\"b\":[[1,2],[3]]}}}");
}

static void special_characters_and_multiline(void **state)
{
	(void)state;
	assert_round_trip("{\"cmd\":[\"/bin/bash\",\"-c\",\"echo \\\"hi\\\"\\nenv | grep PET_\\n\"],"
			  "\"colon\":\"a: b\",\"hash\":\"# not a comment\",\"dash\":\"- x\","
			  "\"key/with.dots\":\"v\",\"quote'\":\"it's\",\"unicode\":\"caf\\u00e9\","
			  "\"star\":\"*alias\",\"amp\":\"&anchor\",\"brace\":\"{x}\"}");
}

static void long_lines_are_not_folded(void **state)
{
	(void)state;
	char json[800];
	char word[600];
	memset(word, 'x', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	snprintf(json, sizeof(json), "{\"long\":\"%s with spaces %s\"}", word, "end");
	cJSON *j = tt_json(json);
	tp_buf out = TP_BUF_INIT(1 << 20);
	assert_int_equal(tw_yaml_write(j, &out), TP_OK);
	/* the key and its long value on one line: the only newline ends it */
	assert_non_null(strstr(out.data, "long: xxxx"));
	size_t newlines = 0;
	for (size_t i = 0; i < out.len; i++)
		newlines += out.data[i] == '\n';
	assert_int_equal(newlines, 1);
	tp_buf_free(&out);
	cJSON_Delete(j);
	assert_round_trip(json);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_that_look_like_other_types_stay_strings),
		cmocka_unit_test(numbers_booleans_null_and_nesting),
		cmocka_unit_test(special_characters_and_multiline),
		cmocka_unit_test(long_lines_are_not_folded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

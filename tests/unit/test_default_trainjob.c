/*
 * test_default_trainjob.c — the TrainJob defaulter: runtimePatches[].time on
 * CREATE and UPDATE, and the 01b fixture's JSON Patch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

#define NOW "2026-08-21T10:15:30Z"

static const char *time_of(const cJSON *job, int i)
{
	const cJSON *p = cJSON_GetArrayItem(tp_get_array(job, "spec.runtimePatches"), i);
	return tp_get_str(p, "time");
}

static cJSON *defaulted(tp_operation op, const char *job, const char *old, const char *now)
{
	tp_options opt = { .now = now };
	cJSON *j = tt_json(job), *o = old ? tt_json(old) : NULL, *out = NULL;
	assert_int_equal(tp_default_trainjob(&opt, op, j, o, &out), TP_OK);
	assert_non_null(out);
	assert_ptr_not_equal(out, j);
	cJSON_Delete(j);
	cJSON_Delete(o);
	return out;
}

#define JOB(patches) "{\"spec\":{\"runtimeRef\":{\"name\":\"r\"},\"runtimePatches\":[" patches "]}}"
#define P(mgr, extra) "{\"manager\":\"" mgr "\"" extra "}"
#define SEL(v) ",\"trainingRuntimeSpec\":{\"template\":{\"metadata\":{\"labels\":{\"a\":\"" v "\"}}}}"

static void create_sets_missing_times(void **state)
{
	(void)state;
	cJSON *out = defaulted(TP_OP_CREATE, JOB(P("a.io/x", "") "," P("b.io/y", ",\"time\":\"2020-01-01T00:00:00Z\"")
					       "," P("c.io/z", ",\"time\":null")), NULL, NOW);
	assert_string_equal(time_of(out, 0), NOW);
	assert_string_equal(time_of(out, 1), "2020-01-01T00:00:00Z");
	assert_string_equal(time_of(out, 2), NOW);
	cJSON_Delete(out);
	/* No patches: the object comes back equal. */
	cJSON *in = tt_json("{\"spec\":{\"runtimeRef\":{\"name\":\"r\"}}}");
	out = defaulted(TP_OP_CREATE, "{\"spec\":{\"runtimeRef\":{\"name\":\"r\"}}}", NULL, NOW);
	assert_true(tp_json_equal(in, out));
	cJSON_Delete(in);
	cJSON_Delete(out);
}

static void update_keeps_or_restamps(void **state)
{
	(void)state;
	const char *old = JOB(P("a.io/x", ",\"time\":\"2020-01-01T00:00:00Z\"" SEL("1")) ","
			      P("b.io/y", ",\"time\":\"2020-02-02T00:00:00Z\"" SEL("1")) ","
			      P("d.io/w", SEL("1")));
	/* a unchanged (time dropped by the client), b changed, c new, d unchanged without time. */
	const char *now = JOB(P("a.io/x", SEL("1")) "," P("b.io/y", ",\"time\":\"2020-02-02T00:00:00Z\"" SEL("2"))
			      "," P("c.io/z", SEL("1")) "," P("d.io/w", ",\"time\":\"2024-01-01T00:00:00Z\"" SEL("1")));
	cJSON *out = defaulted(TP_OP_UPDATE, now, old, NOW);
	assert_string_equal(time_of(out, 0), "2020-01-01T00:00:00Z");
	assert_string_equal(time_of(out, 1), NOW);
	assert_string_equal(time_of(out, 2), NOW);
	assert_null(time_of(out, 3)); /* upstream copies the old (absent) time */
	cJSON_Delete(out);
	/* A new manager that brings its own time keeps it. */
	out = defaulted(TP_OP_UPDATE, JOB(P("e.io/v", ",\"time\":\"2021-01-01T00:00:00Z\"")), old, NOW);
	assert_string_equal(time_of(out, 0), "2021-01-01T00:00:00Z");
	cJSON_Delete(out);
}

static void clock_when_no_now(void **state)
{
	(void)state;
	cJSON *out = defaulted(TP_OP_CREATE, JOB(P("a.io/x", "")), NULL, NULL);
	const char *t = time_of(out, 0);
	assert_non_null(t);
	assert_int_equal(strlen(t), 20);
	assert_true(t[4] == '-' && t[10] == 'T' && t[19] == 'Z');
	assert_true(strcmp(t, "2025-01-01T00:00:00Z") > 0);
	cJSON_Delete(out);
	/* Odd shapes are left alone, never a crash. */
	out = defaulted(TP_OP_CREATE, "{\"spec\":{\"runtimePatches\":[7,\"x\",{}]}}", NULL, NOW);
	assert_string_equal(time_of(out, 2), NOW);
	cJSON_Delete(out);
	out = defaulted(TP_OP_UPDATE, "{\"spec\":{\"runtimePatches\":{}}}", "[]", NOW);
	cJSON_Delete(out);
	cJSON *o = NULL;
	assert_int_equal(tp_default_trainjob(NULL, TP_OP_CREATE, NULL, NULL, &o), TP_EINVAL);
}

/* 01b: the object the mutating hook sees, defaulted, diffs to the response's patch. */
static void fixture_01b_patch(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *path = tt_shared_path("fixtures/admissionreview/01b-mutate-trainjob.request.json");
	char *text = tt_read_file(path, NULL);
	free(path);
	assert_non_null(text);
	cJSON *review = cJSON_Parse(text);
	free(text);
	const cJSON *obj = tp_get(review, "request.object");
	assert_non_null(obj);
	tp_options opt = { .now = NOW };
	cJSON *out = NULL, *ops = NULL;
	assert_int_equal(tp_default_trainjob(&opt, TP_OP_CREATE, obj, NULL, &out), TP_OK);
	assert_int_equal(tp_jsonpatch_diff(obj, out, &ops), TP_OK);
	char *got = cJSON_PrintUnformatted(ops);
	assert_string_equal(got, "[{\"op\":\"add\",\"path\":\"/spec/runtimePatches/0/time\","
				 "\"value\":\"2026-08-21T10:15:30Z\"}]");
	free(got);
	cJSON_Delete(ops);
	cJSON_Delete(out);
	cJSON_Delete(review);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create_sets_missing_times),
		cmocka_unit_test(update_keeps_or_restamps),
		cmocka_unit_test(clock_when_no_now),
		cmocka_unit_test(fixture_01b_patch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

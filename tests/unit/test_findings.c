/*
 * test_findings.c — the offline findings (webhook/cli/findings.c, hints.c,
 * finding_rules.c, served_kinds.c) on hand-made results: where each is
 * reported, that a restating rule is no second finding, the hints, the
 * kinds of finding, and the served kinds held to policy's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"
#include "webhook/cli/findings.h"
#include "webhook/cli/hints.h"
#include "webhook/cli/served_kinds.h"

static void hint_is(const char *field, const char *value, const char *want)
{
	char out[512];
	tw_hint_quantity(field, value, out, sizeof(out));
	if (!strstr(out, want))
		fail_msg("%s \"%s\": hint \"%s\" lacks \"%s\"", field, value, out, want);
}

static void quantity_hints(void **state)
{
	(void)state;
	hint_is("limits.memory", "4GB", "use 4Gi or 4G");
	hint_is("limits.memory", "4gb", "use 4Gi or 4G");
	hint_is("limits.memory", "4Gib", "did you mean 4Gi?");
	hint_is("limits.memory", "4GiB", "did you mean 4Gi?");
	hint_is("limits.memory", "4gi", "did you mean 4Gi?");
	hint_is("limits.memory", "512MB", "use 512Mi or 512M");
	hint_is("limits.memory", "4K", "did you mean 4k or 4Ki?");
	hint_is("limits.memory", "100B", "use 100 ");
	hint_is("limits.memory", "4 ", "did you mean 4?");
	hint_is("limits.cpu", "two", "use 2 ");
	hint_is("limits.cpu", "fast", "a number of cores");
	hint_is("limits.nvidia.com/gpu", "1.5x", "\"x\" is no unit");
	hint_is("limits.nvidia.com/gpu", "1.5x", "whole number of devices");
	hint_is("limits.memory", "4 Gi", "did you mean 4Gi?");
}

static void name_hints(void **state)
{
	(void)state;
	char out[512];
	tw_hint_name("TrainJob", true, "Bad_Name", out, sizeof(out));
	assert_non_null(strstr(out, "try \"bad-name\""));
	assert_non_null(strstr(out, "starting with a letter"));
	tw_hint_name("TrainJob", true, "9lives", out, sizeof(out));
	assert_non_null(strstr(out, "try \"lives\""));
	tw_hint_name("ClusterTrainingRuntime", false, "My.Runtime_", out, sizeof(out));
	assert_non_null(strstr(out, "try \"my.runtime\""));
	tw_hint_name("TrainJob", true, NULL, out, sizeof(out));
	assert_non_null(strstr(out, "give the TrainJob a metadata.name"));
}

static void near_names(void **state)
{
	(void)state;
	assert_int_equal(tw_edit_distance("torch-distribted", "torch-distributed", 3), 1);
	assert_int_equal(tw_edit_distance("abc", "acb", 3), 1); /* a swap is one */
	assert_int_equal(tw_edit_distance("abc", "xyzabc", 2), 3); /* past max: max + 1 */
	assert_true(tw_is_near("torch-distribted", "torch-distributed"));
	assert_false(tw_is_near("torch", "mpi"));
	assert_false(tw_is_near("same", "same"));
}

/* Every served kind the built-in checks judge is one policy knows. */
static void served_kinds_are_policys(void **state)
{
	(void)state;
	for (size_t i = 0; i < tw_served_kind_count(); i++) {
		const tw_served_kind *k = tw_served_kind_at(i);
		char av[128];
		snprintf(av, sizeof(av), "%s/%s", k->group, k->version);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "apiVersion", av);
		cJSON_AddStringToObject(o, "kind", k->kind);
		tp_kind pk = tp_kind_of(o);
		if (k->checked != (pk != TP_KIND_UNKNOWN))
			fail_msg("%s %s: served table says checked=%d, policy's kind is %d", av,
				 k->kind, k->checked, pk);
		cJSON_Delete(o);
	}
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *o = tt_json("{\"apiVersion\":\"trainer.kubeflow.org/v1\",\"kind\":\"TrainJob\"}");
	assert_true(tw_served_kinds_refuse(o, res));
	assert_true(tt_has_error(res, "apiVersion", "no matches for kind \"TrainJob\" in version "
						   "\"trainer.kubeflow.org/v1\" (served: "));
	cJSON_Delete(o);
	tp_result_clear(res);
	o = tt_json("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"Trainjob\"}");
	assert_true(tw_served_kinds_refuse(o, res));
	assert_true(tt_has_error(res, "kind", "did you mean kind \"TrainJob\"?"));
	cJSON_Delete(o);
	tp_result_clear(res);
	o = tt_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}");
	assert_false(tw_served_kinds_refuse(o, res));
	cJSON_Delete(o);
	tp_result_free(res);
}

static const cJSON *only(const cJSON *arr)
{
	if (cJSON_GetArraySize(arr) != 1) {
		char *t = cJSON_Print(arr);
		fail_msg("want one finding, got %s", t);
	}
	return cJSON_GetArrayItem(arr, 0);
}

/* A CRD rule of the whole object about metadata.name: at metadata.name's
 * line, its text the API server's ("<nil>: Invalid value: \"object\": ...");
 * beside ObjectMeta's error at the field, both (the API server lists both);
 * with no name at all, the Required error alone. */
static void root_rules_at_their_field(void **state)
{
	(void)state;
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *o = tt_json("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
			   "\"metadata\":{\"name\":\"1abc\"}}");
	tw_finding_ctx fc = { .obj = o, .line = 1 };
	tp_result_add(res, TP_FIELD_INVALID, NULL, "\"object\"", "metadata.name must match RFC 1035 "
								 "DNS label format");
	cJSON *errs = cJSON_CreateArray(), *warns = cJSON_CreateArray();
	assert_int_equal(tw_findings_add(&fc, res, errs, warns), TP_OK);
	const cJSON *f = only(errs);
	assert_string_equal(tp_get_str(f, "field"), "metadata.name");
	assert_string_equal(tp_get_str(f, "rule"), "invalid-name");
	assert_string_equal(tp_get_str(f, "message"), "<nil>: Invalid value: \"object\": "
						       "metadata.name must match RFC 1035 DNS label format");
	assert_non_null(strstr(tp_get_str(f, "hint"), "try \"abc\""));
	cJSON_Delete(errs);
	/* the same rule beside ObjectMeta's error at the field: both, as the
	 * API server lists them (kube-apiserver v1.32.13 for name "Ex":
	 * "metadata.name: Invalid value: \"Ex\": a lowercase RFC 1123 subdomain
	 * ..." and "<nil>: Invalid value: \"object\": metadata.name must match
	 * RFC 1035 DNS label format") */
	tp_result_add(res, TP_FIELD_INVALID, "metadata.name", "\"1abc\"", "a lowercase RFC 1123 ...");
	errs = cJSON_CreateArray();
	assert_int_equal(tw_findings_add(&fc, res, errs, warns), TP_OK);
	assert_int_equal(cJSON_GetArraySize(errs), 2);
	cJSON_Delete(errs);
	/* two keys with the same text are two findings (ValidateLabels lists both) */
	tp_result_clear(res);
	tp_result_add(res, TP_FIELD_INVALID, "metadata.labels", "\"bad key!\"", "name part must ...");
	tp_result_add(res, TP_FIELD_INVALID, "metadata.labels", "\"-x\"", "name part must ...");
	tp_result_add(res, TP_FIELD_INVALID, "metadata.labels", "\"-x\"", "name part must ...");
	errs = cJSON_CreateArray();
	assert_int_equal(tw_findings_add(&fc, res, errs, warns), TP_OK);
	assert_int_equal(cJSON_GetArraySize(errs), 2);
	cJSON_Delete(errs);
	cJSON_Delete(o);
	/* no name: Required, and the rules that failed on the missing key fold */
	tp_result_clear(res);
	o = tt_json("{\"kind\":\"TrainJob\",\"metadata\":{\"namespace\":\"a\"}}");
	fc.obj = o;
	tp_result_add(res, TP_FIELD_REQUIRED, "metadata.name", NULL, "name or generateName is required");
	tp_result_add(res, TP_FIELD_INVALID, NULL, "\"object\"", "no such key: name evaluating rule: "
								 "metadata.name must match RFC 1035 DNS label format");
	tp_result_add(res, TP_FIELD_INVALID, NULL, "\"object\"", "no such key: name evaluating rule: "
								 "metadata.name must be no more than 63 characters");
	errs = cJSON_CreateArray();
	assert_int_equal(tw_findings_add(&fc, res, errs, warns), TP_OK);
	f = only(errs);
	assert_string_equal(tp_get_str(f, "field"), "metadata.name");
	assert_non_null(strstr(tp_get_str(f, "hint"), "give the TrainJob a metadata.name"));
	cJSON_Delete(errs);
	cJSON_Delete(warns);
	cJSON_Delete(o);
	tp_result_free(res);
}

/* Upstream's Go-cased path in the user's spelling; the runtime's near name
 * among those the run knows; every finding has a field and a rule. */
static void runtime_not_found_hint(void **state)
{
	(void)state;
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	cJSON *o = tt_json("{\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"a\",\"namespace\":\"t\"},"
			   "\"spec\":{\"runtimeRef\":{\"name\":\"torch-distribted\"}}}");
	cJSON *known = tt_json("[{\"kind\":\"ClusterTrainingRuntime\",\"namespace\":\"\","
			       "\"name\":\"torch-distributed\"},{\"kind\":\"TrainingRuntime\","
			       "\"namespace\":\"other\",\"name\":\"torch-distribute\"}]");
	tw_finding_ctx fc = { .obj = o, .line = 1, .known = known, .give_runtime = "use --runtimes" };
	tp_result_add(res, TP_FIELD_INVALID, "spec.RuntimeRef", "{}",
		      "clustertrainingruntimes.trainer.kubeflow.org \"torch-distribted\" not found: "
		      "specified clusterTrainingRuntime must be created before the TrainJob is created");
	cJSON *errs = cJSON_CreateArray(), *warns = cJSON_CreateArray();
	assert_int_equal(tw_findings_add(&fc, res, errs, warns), TP_OK);
	const cJSON *f = only(errs);
	assert_string_equal(tp_get_str(f, "field"), "spec.runtimeRef");
	assert_string_equal(tp_get_str(f, "rule"), "runtime-not-found");
	assert_true(!strncmp(tp_get_str(f, "message"), "spec.runtimeRef: Invalid value: {}: ", 36));
	assert_string_equal(tp_get_str(f, "hint"), "did you mean \"torch-distributed\"?");
	cJSON_Delete(errs);
	/* nothing near: how to give one */
	cJSON_Delete(known);
	fc.known = known = tt_json("[]");
	errs = cJSON_CreateArray();
	assert_int_equal(tw_findings_add(&fc, res, errs, warns), TP_OK);
	assert_string_equal(tp_get_str(only(errs), "hint"), "use --runtimes");
	cJSON_Delete(errs);
	cJSON_Delete(warns);
	cJSON_Delete(known);
	cJSON_Delete(o);
	tp_result_free(res);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantity_hints),
		cmocka_unit_test(name_hints),
		cmocka_unit_test(near_names),
		cmocka_unit_test(served_kinds_are_policys),
		cmocka_unit_test(root_rules_at_their_field),
		cmocka_unit_test(runtime_not_found_hint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_trainjob_schema.c — the TrainJob CRD schema and CEL layer, and that
 * no_schema turns it off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/tj_fixtures.h"

/* store, res, setup and teardown: tj_fixtures.h (TJ_GROUP_STATE). */
TJ_GROUP_STATE

static tp_result *run(bool no_schema, tp_operation op, cJSON *job, cJSON *old)
{
	tp_options opt = { .profile = TP_PROFILE_KUBEFLOW, .store = store, .no_schema = no_schema };
	tp_result_clear(res);
	tp_store_rdlock(store);
	assert_int_equal(tp_validate_trainjob(&opt, op, job, old, res), TP_OK);
	tp_store_unlock(store);
	cJSON_Delete(job);
	cJSON_Delete(old);
	tt_dump(res);
	return res;
}

static tp_result *create(const char *name, const char *extra)
{
	return run(false, TP_OP_CREATE, tj_job(name, "ClusterTrainingRuntime", "torch-current", extra),
		   NULL);
}

static void name_rules(void **state)
{
	(void)state;
	assert_true(tp_result_ok(create("ok-name-1", "")));
	tp_result *r = create("1bad", "");
	assert_true(tt_has_error(r, "", "metadata.name must match RFC 1035 DNS label format"));
	r = create("a234567890123456789012345678901234567890123456789012345678901234", "");
	assert_true(tt_has_error(r, "", "metadata.name must be no more than 63 characters"));
	assert_false(tt_has_error(r, "", "RFC 1035"));
	/* no_schema: none of it. */
	r = run(true, TP_OP_CREATE, tj_job("1bad", "ClusterTrainingRuntime", "torch-current", ""), NULL);
	assert_true(tp_result_ok(r));
}

static void field_limits(void **state)
{
	(void)state;
	tp_result *r = create("a", "\"trainer\":{\"numNodes\":-1,\"numProcPerNode\":0},"
			      "\"activeDeadlineSeconds\":0,\"managedBy\":\"me\"");
	assert_true(tt_has_error(r, "spec.trainer.numNodes", "spec.trainer.numNodes in body should be "
				 "greater than or equal to 0"));
	assert_true(tt_has_error(r, "spec.trainer.numProcPerNode", "numProcPerNode must be greater "
				 "than or equal to 1"));
	assert_true(tt_has_error(r, "spec.activeDeadlineSeconds", "should be greater than or equal to 1"));
	assert_true(tt_has_error(r, "spec.managedBy", "ManagedBy must be trainer.kubeflow.org/"
				 "trainjob-controller or kueue.x-k8s.io/multikueue if set"));
	/* The schema's minimum is no blocking error; the CEL rules come after it. */
	assert_int_equal(tp_result_error_at(r, 0)->type, TP_FIELD_INVALID);
	assert_string_equal(tp_result_error_at(r, 2)->path, "spec.trainer.numProcPerNode");
	/* A wrong type blocks the CEL rules, as the API server's hasBlockingErr does. */
	r = create("a", "\"trainer\":{\"numProcPerNode\":0},\"managedBy\":\"me\",\"suspend\":\"yes\"");
	assert_true(tt_has_error(r, "spec.suspend", "must be of type boolean"));
	assert_false(tt_has_error(r, "spec.trainer.numProcPerNode", NULL));
	assert_false(tt_has_error(r, "spec.managedBy", NULL));
	assert_true(tt_has_error(r, NULL, "some validation rules were not checked because the object "
				 "was invalid; correct the existing errors to complete validation"));
	assert_true(tp_result_ok(create("a", "\"trainer\":{\"numNodes\":0,\"numProcPerNode\":1},"
					"\"activeDeadlineSeconds\":1,\"managedBy\":"
					"\"kueue.x-k8s.io/multikueue\",\"suspend\":true")));
	r = create("a", "\"initializer\":{\"dataset\":{\"storageUri\":\"no-scheme\"},"
		   "\"model\":{\"storageUri\":\"\"}}");
	assert_int_equal(tp_result_error_count(r), 2); /* the URI, and the missing model job */
	assert_true(tt_has_error(r, "spec.initializer.dataset.storageUri", "storageUri may be empty, "
				 "or it must be a valid URI (scheme://...)"));
	char big[400];
	memset(big, 'x', 300);
	big[300] = '\0';
	char extra[1024];
	snprintf(extra, sizeof(extra), "\"trainer\":{\"image\":\"%s\"},\"managedBy\":\"%s\"", big, big);
	r = create("a", extra);
	assert_false(tt_has_error(r, "spec.trainer.image", NULL)); /* 300 <= 500 */
	assert_true(tt_has_error(r, "spec.managedBy", "may not be more than 253 bytes"));
}

static void runtime_ref_and_lists(void **state)
{
	(void)state;
	tp_result *r = run(false, TP_OP_CREATE, tt_json("{\"metadata\":{\"name\":\"a\"},\"spec\":{}}"),
			   NULL);
	assert_true(tt_has_error(r, "spec.runtimeRef", NULL));
	assert_int_equal(tp_result_error_at(r, 0)->type, TP_FIELD_REQUIRED);
	r = run(false, TP_OP_CREATE, tt_json("{\"metadata\":{\"name\":\"a\"},\"spec\":{\"runtimeRef\""
					     ":{\"name\":\"\"}}}"), NULL);
	assert_true(tt_has_error(r, "spec.runtimeRef.name", "should be at least 1 chars long"));
	/* The schema's errors, then the list-map keys' (each repeated key once, at
	 * its first repetition), as the API server orders them. */
	r = create("a", "\"runtimePatches\":[{\"manager\":\"a.io/x\"},{\"manager\":\"a.io/x\"},{},"
		   "{\"manager\":\"a.io/x\"}]");
	assert_string_equal(tp_result_error_at(r, 0)->path, "spec.runtimePatches[2].manager");
	assert_int_equal(tp_result_error_at(r, 0)->type, TP_FIELD_REQUIRED);
	assert_string_equal(tp_result_error_at(r, 1)->path, "spec.runtimePatches[1]");
	assert_int_equal(tp_result_error_at(r, 1)->type, TP_FIELD_DUPLICATE);
	assert_string_equal(tp_result_error_at(r, 1)->value, "{\"manager\":\"a.io/x\"}");
	assert_false(tt_has_error(r, "spec.runtimePatches[3]", NULL));
	char extra[4096] = "\"trainer\":{\"env\":[";
	for (int i = 0; i < 129; i++)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "%s{\"name\":\"E%d\"}",
			 i ? "," : "", i);
	strcat(extra, "]}");
	r = create("a", extra);
	assert_true(tt_has_error(r, "spec.trainer.env", "must have at most 128 items"));
	assert_string_equal(tp_result_error_at(r, 0)->value, "129"); /* "Too many: 129: ..." */
}

#define PODPATCH(pod)                                                                       \
	"\"runtimePatches\":[{\"manager\":\"a.io/x\",\"trainingRuntimeSpec\":{\"template\":{" \
	"\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":" \
	"{\"spec\":" pod "}}}}]}}}}]"

static void immutability(void **state)
{
	(void)state;
	const char *CTR = "ClusterTrainingRuntime";
	tp_result *r = run(false, TP_OP_UPDATE, tj_job("a", CTR, "torch-current",
			   "\"trainer\":{\"image\":\"b\"},\"managedBy\":\"kueue.x-k8s.io/multikueue\""),
			   tj_job("a", CTR, "torch-distributed", "\"trainer\":{\"image\":\"a\"}"));
	assert_true(tt_has_error(r, "spec.runtimeRef", "field is immutable"));
	assert_true(tt_has_error(r, "spec.trainer", "field is immutable"));
	assert_false(tt_has_error(r, "spec.managedBy", NULL)); /* absent before: no transition */
	/* Defaults count: an old object without apiGroup/kind is the same reference. */
	cJSON *old = tt_json("{\"metadata\":{\"name\":\"a\",\"namespace\":\"team-a\"},\"spec\":"
			     "{\"runtimeRef\":{\"name\":\"torch-current\"}}}");
	r = run(false, TP_OP_UPDATE, tj_job("a", CTR, "torch-current", ""), old);
	assert_true(tp_result_ok(r));
	/* Pod fields of a patch: containers immutable, nodeSelector not (both suspended). */
	r = run(false, TP_OP_UPDATE,
		tj_job("a", CTR, "torch-current", "\"suspend\":true," PODPATCH(
			"{\"nodeSelector\":{\"a\":\"2\"},\"containers\":[{\"name\":\"node\","
			"\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/b\"}]}]}")),
		tj_job("a", CTR, "torch-current", "\"suspend\":true," PODPATCH(
			"{\"nodeSelector\":{\"a\":\"1\"},\"containers\":[{\"name\":\"node\","
			"\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/a\"}]}]}")));
	assert_int_equal(tp_result_error_count(r), 1);
	assert_true(tt_has_error(r, "spec.runtimePatches[0].trainingRuntimeSpec.template.spec."
				 "replicatedJobs[0].template.spec.template.spec.containers",
				 "field is immutable"));
	r = run(false, TP_OP_UPDATE,
		tj_job("a", CTR, "torch-current", "\"suspend\":true," PODPATCH("{\"nodeSelector\":{\"a\":\"2\"}}")),
		tj_job("a", CTR, "torch-current", "\"suspend\":true," PODPATCH("{\"nodeSelector\":{\"a\":\"1\"}}")));
	assert_true(tp_result_ok(r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(name_rules),
		cmocka_unit_test(field_limits),
		cmocka_unit_test(runtime_ref_and_lists),
		cmocka_unit_test(immutability),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_validate_ome.c — OME (ome.io/v1beta1) runtime admission.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/admission/runtime.h"
#include "policy/core/internal.h"
#include "tests/support/testutil.h"

#define OTR TP_KIND_OME_TRAINING_RUNTIME
#define OCTR TP_KIND_OME_CLUSTER_TRAINING_RUNTIME
#define RJ "spec.template.spec.replicatedJobs"
#define WORKER(name, extra) \
	"{\"name\":\"" name "\"" extra ",\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"trainer\"}]}}}}}"

static cJSON *ome(const char *labels, const char *spec)
{
	static char buf[8192];
	snprintf(buf, sizeof(buf), "{\"apiVersion\":\"ome.io/v1beta1\",\"kind\":\"TrainingRuntime\","
		 "\"metadata\":{\"name\":\"pytorch-elastic\",\"labels\":{%s}},\"spec\":%s}", labels, spec);
	return tt_json(buf);
}

static tp_result *check(tp_profile p, tp_operation op, tp_kind k, const char *labels,
			const char *spec, size_t nerr)
{
	cJSON *obj = ome(labels, spec);
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_options opt = { .profile = p };
	assert_int_equal(tp__validate_ome_runtime(&opt, op, k, obj, op == TP_OP_UPDATE ? obj : NULL, res), TP_OK);
	if (tp_result_error_count(res) != nerr)
		tt_dump(res);
	assert_int_equal(tp_result_error_count(res), nerr);
	cJSON_Delete(obj);
	return res;
}

#define KF TP_PROFILE_KUBEFLOW
#define ST TP_PROFILE_STRICT
#define C TP_OP_CREATE

static void replicas_must_be_one(void **state)
{
	(void)state;
	const char *spec = "{\"template\":{\"spec\":{\"replicatedJobs\":[" WORKER("a", "") ","
			   WORKER("b", ",\"replicas\":2") "," WORKER("c", ",\"replicas\":3") "]}}}";
	for (int p = 0; p < 2; p++) {
		tp_result *res = check(p ? ST : KF, C, OCTR, "", spec, 1);
		assert_true(tt_has_error(res, RJ "[1].replicas", "replicas for job 1 must be 1, got 2"));
		tp_result_free(res);
	}
	tp_result *res = check(KF, TP_OP_UPDATE, OTR, "", spec, 1);
	tp_result_free(res);
	res = check(KF, TP_OP_DELETE, OTR, "", spec, 0);
	tp_result_free(res);
	res = check(KF, C, OTR, "", "{\"template\":{\"spec\":{\"replicatedJobs\":[" WORKER("a", ",\"replicas\":1") "]}}}", 0);
	tp_result_free(res);
}

static void no_framework_label_and_no_kubeflow_rules(void **state)
{
	(void)state;
	/* a Kubeflow trainer label without a node container: not OME's concern */
	const char *spec = "{\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"w\",\"template\":{\"metadata\":{\"labels\":"
			   "{\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},\"spec\":{\"template\":{\"spec\":"
			   "{\"containers\":[{\"name\":\"x\"}]}}}}}]}}}";
	for (int p = 0; p < 2; p++) {
		tp_result *res = check(p ? ST : KF, C, OTR, "", spec, 0);
		assert_int_equal(tp_result_warning_count(res), 0);
		tp_result_free(res);
	}
}

static void num_proc_per_node(void **state)
{
	(void)state;
	tp_result_free(check(ST, C, OTR, "", "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":\"gpu\"}}}", 0));
	tp_result_free(check(ST, C, OTR, "", "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":4}}}", 0));
	tp_result *res = check(ST, C, OTR, "", "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":\"x\"}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.torch.numProcPerNode", "supported values: \"auto\", \"cpu\", \"gpu\""));
	tp_result_free(res);
	/* OME's Go type is *string: the schema refuses a number; the value is unchecked */
	res = check(KF, C, OTR, "", "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":4}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.torch.numProcPerNode", "must be of type string: \"integer\""));
	tp_result_free(res);
	tp_result_free(check(KF, C, OTR, "", "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":\"x\"}}}", 0));
}

static void mpi_and_one_policy(void **state)
{
	(void)state;
	tp_result *res = check(KF, C, OTR, "", "{\"mlPolicy\":{\"mpi\":{\"mpiImplementation\":\"Intel\"}}}", 0);
	assert_int_equal(tp_result_warning_count(res), 0);
	tp_result_free(res);
	res = check(ST, C, OTR, "", "{\"mlPolicy\":{\"mpi\":{\"mpiImplementation\":\"MPICH\",\"numProcPerNode\":0}}}", 1);
	assert_true(tt_has_warning(res, "mpiImplementation MPICH: the controller builds OpenMPI hostfiles only"));
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.numProcPerNode", "set numProcPerNode to 1 or more"));
	tp_result_free(res);
	res = check(KF, C, OTR, "", "{\"mlPolicy\":{\"mpi\":{\"mpiImplementation\":\"Foo\"}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.mpiImplementation", "supported values: \"OpenMPI\", \"Intel\", \"MPICH\""));
	tp_result_free(res);
	const char *both = "{\"mlPolicy\":{\"torch\":{},\"mpi\":{}}}";
	tp_result_free(check(KF, C, OTR, "", both, 0)); /* no CEL in OME */
	res = check(ST, C, OTR, "", both, 1);
	assert_true(tt_has_error(res, "spec.mlPolicy", "Only one of the policy can be configured; keep a single one"));
	tp_result_free(res);
}

static void volcano_and_elastic(void **state)
{
	(void)state;
	const char *vo = "{\"podGroupPolicy\":{\"volcano\":{\"minMember\":0,\"queue\":\"Bad_Q\",\"priorityClassName\":\"high-priority\"}}}";
	tp_result *res = check(ST, C, OTR, "", vo, 2);
	assert_true(tt_has_error(res, "spec.podGroupPolicy.volcano.minMember", "set minMember to 1 or more"));
	assert_true(tt_has_error(res, "spec.podGroupPolicy.volcano.queue", "use a lower-case name"));
	tp_result_free(res);
	tp_result_free(check(KF, C, OTR, "", vo, 0)); /* OME has no volcano: pruned */
	tp_result_free(check(ST, C, OTR, "", "{\"podGroupPolicy\":{\"volcano\":{\"minMember\":4,\"queue\":\"training-queue\"}}}", 0));
	const char *ep = "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":\"gpu\",\"elasticPolicy\":{\"minNodes\":2,\"maxNodes\":8,"
			 "\"maxRestarts\":5,\"metrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\"}}]}}}}";
	tp_result_free(check(ST, C, OTR, "", ep, 0));
	tp_result_free(check(KF, C, OTR, "", ep, 0));
	res = check(KF, C, OTR, "", "{\"mlPolicy\":{\"torch\":{\"elasticPolicy\":{\"minNodes\":\"2\"}}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.torch.elasticPolicy.minNodes", "must be of type integer"));
	tp_result_free(res);
}

static void deprecation_and_wrong_types(void **state)
{
	(void)state;
	const char *dep = "\"trainer.kubeflow.org/support\":\"deprecated\"";
	tp_result *res = check(ST, C, OCTR, dep, "{}", 0);
	assert_true(tt_has_warning(res, "ClusterTrainingRuntime \"pytorch-elastic\" is deprecated"));
	tp_result_free(res);
	res = check(KF, C, OCTR, dep, "{}", 0);
	assert_int_equal(tp_result_warning_count(res), 0);
	tp_result_free(res);
	for (int p = 0; p < 2; p++) {
		res = check(p ? ST : KF, C, OTR, "", "{\"mlPolicy\":\"x\",\"template\":{\"spec\":{\"replicatedJobs\":{}}}}", 2);
		assert_true(tt_has_error(res, "spec.mlPolicy", "must be of type object: \"string\""));
		assert_true(tt_has_error(res, RJ, "must be of type array: \"object\""));
		tp_result_free(res);
	}
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replicas_must_be_one),
		cmocka_unit_test(no_framework_label_and_no_kubeflow_rules),
		cmocka_unit_test(num_proc_per_node),
		cmocka_unit_test(mpi_and_one_policy),
		cmocka_unit_test(volcano_and_elastic),
		cmocka_unit_test(deprecation_and_wrong_types),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

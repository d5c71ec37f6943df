/*
 * test_validate_runtime.c — TrainingRuntime / ClusterTrainingRuntime admission:
 * upstream's webhook rule, the CRD schema/CEL layer and the strict rules.
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

#define KF TP_PROFILE_KUBEFLOW
#define ST TP_PROFILE_STRICT
#define CTR TP_KIND_CLUSTER_TRAINING_RUNTIME
#define TR TP_KIND_TRAINING_RUNTIME
#define ANC "trainer.kubeflow.org/trainjob-ancestor-step"
#define FW "\"trainer.kubeflow.org/framework\":\"torch\""

/* A replicated job: name, ancestor step ("" for none), container name, extra members.
 * The container has an image: the strict profile refuses Pods without one. */
#define JOB(name, step, ctr, extra)                                                          \
	"{\"name\":\"" name "\"" extra ",\"template\":{\"metadata\":{\"labels\":{" step "}},"     \
	"\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"" ctr "\",\"image\":\"img\"}]}}}}}"
#define STEP(s) "\"" ANC "\":\"" s "\""
#define TRAINER_JOB JOB("node", STEP("trainer"), "node", "")
#define SPEC_JOBS(jobs) "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":{\"replicatedJobs\":[" jobs "]}}}"
#define GOOD_SPEC SPEC_JOBS(TRAINER_JOB)

/* A runtime named "torch" with the given labels (inside {}) and spec. */
static cJSON *runtime(const char *labels, const char *spec)
{
	static char buf[16384];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
		 "\"metadata\":{\"name\":\"torch\",\"labels\":{%s}},\"spec\":%s}", labels, spec);
	return tt_json(buf);
}

struct run {
	tp_profile profile;
	bool no_schema;
	tp_operation op;
	tp_kind kind;
};

static tp_result *judge(struct run r, const cJSON *obj, const cJSON *old)
{
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_options opt = { .profile = r.profile, .no_schema = r.no_schema };
	assert_int_equal(tp__validate_trainer_runtime(&opt, r.op, r.kind, obj, old, res), TP_OK);
	return res;
}

/* Judge labels+spec once; assert the error count, and keep the result. */
static tp_result *check(struct run r, const char *labels, const char *spec, size_t nerr)
{
	cJSON *obj = runtime(labels, spec);
	tp_result *res = judge(r, obj, r.op == TP_OP_UPDATE ? obj : NULL);
	if (tp_result_error_count(res) != nerr)
		tt_dump(res);
	assert_int_equal(tp_result_error_count(res), nerr);
	cJSON_Delete(obj);
	return res;
}

static const struct run kf_ctr_create = { KF, false, TP_OP_CREATE, CTR };
static const struct run st_ctr_create = { ST, false, TP_OP_CREATE, CTR };

/* ------------------------------------------------------------ upstream */

static void good_runtime_passes_everywhere(void **state)
{
	(void)state;
	tp_profile profiles[] = { KF, ST };
	tp_kind kinds[] = { CTR, TR };
	tp_operation ops[] = { TP_OP_CREATE, TP_OP_UPDATE };
	for (int p = 0; p < 2; p++)
		for (int k = 0; k < 2; k++)
			for (int o = 0; o < 2; o++) {
				struct run r = { profiles[p], false, ops[o], kinds[k] };
				tp_result *res = check(r, FW, GOOD_SPEC, 0);
				assert_int_equal(tp_result_warning_count(res), 0);
				tp_result_free(res);
			}
}

#define DEPRECATED FW ",\"trainer.kubeflow.org/support\":\"deprecated\""
#define CTR_WARNING "ClusterTrainingRuntime \"torch\" is deprecated and will be removed in a " \
	"future release of Kubeflow Trainer. See runtime deprecation policy: "                  \
	"https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
#define TR_WARNING "TrainingRuntime \"torch\" is deprecated"

static size_t warnings_for(struct run r)
{
	tp_result *res = check(r, DEPRECATED, GOOD_SPEC, 0);
	size_t n = tp_result_warning_count(res);
	if (n)
		assert_true(tt_has_warning(res, r.kind == CTR ? CTR_WARNING : TR_WARNING));
	tp_result_free(res);
	return n;
}

static void deprecation_warnings_per_kind_op_profile(void **state)
{
	(void)state;
	assert_int_equal(warnings_for((struct run){ KF, false, TP_OP_CREATE, CTR }), 1);
	assert_int_equal(warnings_for((struct run){ KF, false, TP_OP_UPDATE, CTR }), 0);
	assert_int_equal(warnings_for((struct run){ KF, false, TP_OP_CREATE, TR }), 0);
	assert_int_equal(warnings_for((struct run){ KF, false, TP_OP_UPDATE, TR }), 0);
	assert_int_equal(warnings_for((struct run){ ST, false, TP_OP_CREATE, CTR }), 1);
	assert_int_equal(warnings_for((struct run){ ST, false, TP_OP_UPDATE, CTR }), 0);
	assert_int_equal(warnings_for((struct run){ ST, false, TP_OP_CREATE, TR }), 1);
	assert_int_equal(warnings_for((struct run){ ST, false, TP_OP_UPDATE, TR }), 0);
}

#define RJ "spec.template.spec.replicatedJobs"
#define BAD_JOBS SPEC_JOBS(JOB("node", STEP("trainer"), "main", ",\"replicas\":2") ","            \
			   JOB("model", STEP("model-initializer"), "x", "") ","                    \
			   JOB("extra", "", "x", ",\"replicas\":3") ","                             \
			   JOB("data", STEP("dataset-initializer"), "dataset-initializer", ",\"replicas\":1"))

static void replicated_jobs_errors_aggregate(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, BAD_JOBS, 3);
	assert_true(tt_has_error(res, RJ "[0].replicas", "always must be 1"));
	assert_true(tt_has_error(res, RJ "[0].template.spec.template.spec.containers",
				 "must contain the required container for the ancestor: trainer"));
	assert_true(tt_has_error(res, RJ "[1].template.spec.template.spec.containers",
				 "must contain the required container for the ancestor: model-initializer"));
	assert_false(tt_has_error(res, RJ "[2].replicas", NULL)); /* unlabelled: skipped */
	tp_buf b = TP_BUF_INIT(1 << 16);
	tp_result_format(res, &b);
	assert_non_null(strstr(b.data, RJ "[0].replicas: Invalid value: 2: always must be 1"));
	assert_true(b.data[0] == '[');
	tp_buf_free(&b);
	tp_result_free(res);
}

static void trainingruntime_update_skipped_upstream_not_strict(void **state)
{
	(void)state;
	tp_result *res = check((struct run){ KF, false, TP_OP_UPDATE, TR }, FW, BAD_JOBS, 0);
	tp_result_free(res);
	res = check((struct run){ KF, false, TP_OP_UPDATE, CTR }, FW, BAD_JOBS, 3);
	tp_result_free(res);
	res = check((struct run){ ST, false, TP_OP_UPDATE, TR }, FW, BAD_JOBS, 3);
	assert_true(tt_has_error(res, RJ "[0].replicas", "always must be 1"));
	tp_result_free(res);
	res = check((struct run){ KF, false, TP_OP_CREATE, TR }, FW, BAD_JOBS, 3);
	tp_result_free(res);
	res = check((struct run){ KF, false, TP_OP_DELETE, CTR }, FW, BAD_JOBS, 0);
	tp_result_free(res);
}

/* ------------------------------------------------------------ schema */

static void wrong_types_are_field_errors(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *path, *detail;
	} cases[] = {
		{ "{\"template\":{\"spec\":{\"replicatedJobs\":\"x\"}}}", RJ,
		  RJ " in body must be of type array: \"string\"" },
		{ "{\"mlPolicy\":5}", "spec.mlPolicy", "spec.mlPolicy in body must be of type object: \"integer\"" },
		{ "\"x\"", "spec", "spec in body must be of type object: \"string\"" },
		{ "{\"template\":{\"spec\":{\"replicatedJobs\":[\"x\"]}}}", RJ "[0]", "must be of type object" },
		{ "{\"template\":[]}", "spec.template", "must be of type object: \"array\"" },
		{ "{\"mlPolicy\":{\"numNodes\":\"2\"}}", "spec.mlPolicy.numNodes", "must be of type integer" },
		{ "{\"mlPolicy\":{\"mpi\":{\"runLauncherAsNode\":\"yes\"}}}", "spec.mlPolicy.mpi.runLauncherAsNode",
		  "must be of type boolean" },
		{ SPEC_JOBS("{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":\"x\"}}}}}"),
		  RJ "[0].template.spec.template.spec.containers", "must be of type array" },
		{ SPEC_JOBS("{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{\"a\":1}}}}"),
		  RJ "[0].template.metadata.labels.a", "must be of type string" },
		{ SPEC_JOBS("{\"name\":\"node\",\"replicas\":1.5,\"template\":{}}"), RJ "[0].replicas",
		  "must be of type integer: \"number\"" },
		{ "{\"podGroupPolicy\":{\"coscheduling\":[]}}", "spec.podGroupPolicy.coscheduling",
		  "must be of type object" },
		/* past int32, and a map's later item: paths built only for messages */
		{ "{\"mlPolicy\":{\"numNodes\":3000000000}}", "spec.mlPolicy.numNodes",
		  "spec.mlPolicy.numNodes in body should be less than or equal to 2147483647" },
		{ SPEC_JOBS("{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{\"a\":\"x\",\"b\":[]}}}}"),
		  RJ "[0].template.metadata.labels.b", "must be of type string: \"array\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int p = 0; p < 2; p++) {
			cJSON *obj = runtime(FW, cases[i].spec);
			tp_result *res = judge((struct run){ p ? ST : KF, false, TP_OP_CREATE, CTR }, obj, NULL);
			if (!tt_has_error(res, cases[i].path, cases[i].detail))
				tt_dump(res);
			assert_true(tt_has_error(res, cases[i].path, cases[i].detail));
			tp_result_free(res);
			/* without the schema layer: no crash */
			res = judge((struct run){ p ? ST : KF, true, TP_OP_UPDATE, TR }, obj, obj);
			tp_result_free(res);
			cJSON_Delete(obj);
		}
	}
}

static void required_members(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, SPEC_JOBS("{\"replicas\":1}"), 2);
	assert_true(tt_has_error(res, RJ "[0].name", NULL));
	assert_true(tt_has_error(res, RJ "[0].template", NULL));
	assert_int_equal(tp_result_error_at(res, 0)->type, TP_FIELD_REQUIRED);
	tp_result_free(res);
	res = check(kf_ctr_create, FW, SPEC_JOBS(TRAINER_JOB "," TRAINER_JOB), 1);
	assert_true(tt_has_error(res, RJ "[1]", NULL));
	assert_int_equal(tp_result_error_at(res, 0)->type, TP_FIELD_DUPLICATE);
	tp_result_free(res);
}

static void min_properties(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, "{}", 1);
	assert_true(tt_has_error(res, "spec", "spec in body should have at least 1 properties"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"template\":{}}", 1);
	assert_true(tt_has_error(res, "spec.template", "should have at least 1 properties"));
	tp_result_free(res);
}

static void cel_only_one_policy(void **state)
{
	(void)state;
	const char *spec = "{\"mlPolicy\":{\"torch\":{},\"mpi\":{}},\"template\":{\"spec\":{\"replicatedJobs\":[" TRAINER_JOB "]}}}";
	tp_result *res = check(kf_ctr_create, FW, spec, 1);
	assert_true(tt_has_error(res, "spec.mlPolicy", "Only one of the policy can be configured"));
	tp_result_free(res);
	res = check(st_ctr_create, FW, spec, 1);
	tp_result_free(res);
	/* no_schema turns the CEL layer off */
	res = check((struct run){ KF, true, TP_OP_CREATE, CTR }, FW, spec, 0);
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"jax\":{}}}", 0);
	tp_result_free(res);
}

static void cel_num_proc_per_node(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"numProcPerNode\":0}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.numProcPerNode", "NumProcPerNode in mpiPolicy must be >= 1"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"flux\":{\"numProcPerNode\":-1}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.flux.numProcPerNode", "NumProcPerNode in fluxPolicy must be >= 1"));
	tp_result_free(res);
	res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"numProcPerNode\":0}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.numProcPerNode", "NumProcPerNode in mpiPolicy must be >= 1"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"numProcPerNode\":2},\"numNodes\":1}}", 0);
	tp_result_free(res);
}

/* CEL failures as apiextensions-apiserver v0.36.3 renders them: a scalar's
 * value is shown, an object's left out. */
static void cel_failure_texts(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"numProcPerNode\":0}}}", 1);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_result_format(res, &b), TP_OK);
	assert_string_equal(b.data, "spec.mlPolicy.mpi.numProcPerNode: Invalid value: 0: "
				    "NumProcPerNode in mpiPolicy must be >= 1");
	tp_buf_reset(&b);
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{},\"torch\":{}}}", 1);
	assert_int_equal(tp_result_format(res, &b), TP_OK);
	assert_string_equal(b.data, "spec.mlPolicy: Invalid value: Only one of the policy can be "
				    "configured");
	tp_buf_free(&b);
	tp_result_free(res);
}

static void mpi_implementation_per_profile(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"mpiImplementation\":\"Intel\"}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.mpiImplementation", "supported values: \"OpenMPI\", \"\""));
	assert_int_equal(tp_result_error_at(res, 0)->type, TP_FIELD_UNSUPPORTED);
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"mpiImplementation\":\"\"}}}", 0);
	tp_result_free(res);
	res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"mpiImplementation\":\"MPICH\"}}}", 0);
	assert_true(tt_has_warning(res, "mpiImplementation MPICH: the controller builds OpenMPI hostfiles only"));
	tp_result_free(res);
	res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"mpiImplementation\":\"Foo\"}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.mpiImplementation",
				 "supported values: \"OpenMPI\", \"Intel\", \"MPICH\""));
	tp_result_free(res);
}

#define ENV(targets) "{\"mlPolicy\":{\"torch\":{\"envInjection\":{\"targets\":" targets "}}}}"
#define ET "spec.mlPolicy.torch.envInjection.targets"

static void torch_env_injection(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, ENV("[{\"jobName\":\"node\",\"containerNames\":[\"sidecar\"]}]"), 0);
	tp_result_free(res);
	res = check(kf_ctr_create, FW, ENV("[{\"jobName\":\"node\",\"containerNames\":[\"a\",\"node\"]}]"), 1);
	assert_true(tt_has_error(res, ET "[0].containerNames",
				 "containerNames must not include the main node container because PET_* envs "
				 "are always injected into it"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, ENV("[{\"jobName\":\"node\",\"containerNames\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]}]"), 1);
	assert_true(tt_has_error(res, ET "[0].containerNames", "must have at most 8 items"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, ENV("[{\"jobName\":\"node\",\"containerNames\":[]}]"), 1);
	assert_true(tt_has_error(res, ET "[0].containerNames", "should have at least 1 items"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, ENV("[{\"jobName\":\"n\",\"containerNames\":[\"a234567890123456789012345678901234567890123456789012345678901234\"]}]"), 1);
	assert_true(tt_has_error(res, ET "[0].containerNames[0]", "may not be more than 63 bytes"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, ENV("[{\"jobName\":\"n\",\"containerNames\":[\"a\"]},{\"jobName\":\"n\",\"containerNames\":[\"b\"]},{\"containerNames\":[\"c\"]}]"), 2);
	assert_true(tt_has_error(res, ET "[1]", NULL));
	assert_true(tt_has_error(res, ET "[2].jobName", NULL));
	tp_result_free(res);
}

static void startup_policy_and_depends_on(void **state)
{
	(void)state;
	char spec[4096];
	const char *jobs = "[" JOB("init", STEP("dataset-initializer"), "dataset-initializer", "") ","
			   JOB("node", STEP("trainer"), "node", ",\"dependsOn\":[{\"name\":\"init\",\"status\":\"Complete\"}]") "]";
	snprintf(spec, sizeof(spec), "{\"template\":{\"spec\":{\"startupPolicy\":{\"startupPolicyOrder\":\"InOrder\"},\"replicatedJobs\":%s}}}", jobs);
	tp_result *res = check(kf_ctr_create, FW, spec, 1);
	assert_true(tt_has_error(res, "spec.template.spec", "StartupPolicy and DependsOn APIs are mutually exclusive"));
	tp_result_free(res);
	res = check(st_ctr_create, FW, spec, 1);
	tp_result_free(res);
	snprintf(spec, sizeof(spec), "{\"template\":{\"spec\":{\"startupPolicy\":{\"startupPolicyOrder\":\"AnyOrder\"},\"replicatedJobs\":%s}}}", jobs);
	res = check(kf_ctr_create, FW, spec, 0);
	tp_result_free(res);
	res = check(st_ctr_create, FW, spec, 1);
	assert_true(tt_has_error(res, "spec.template.spec.startupPolicy",
				 "cannot be set together with replicatedJobs[].dependsOn; remove startupPolicy"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"template\":{\"spec\":{\"startupPolicy\":{\"startupPolicyOrder\":\"Sometimes\"}}}}", 1);
	assert_true(tt_has_error(res, "spec.template.spec.startupPolicy.startupPolicyOrder", "supported values: \"AnyOrder\", \"InOrder\""));
	tp_result_free(res);
}

static void volume_claim_namespace(void **state)
{
	(void)state;
	tp_result *res = check(kf_ctr_create, FW, "{\"template\":{\"spec\":{\"volumeClaimPolicies\":[{\"templates\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\"}}]}]}}}", 1);
	assert_true(tt_has_error(res, "spec.template.spec.volumeClaimPolicies[0]", "namespace cannot be set for VolumeClaimPolicies templates"));
	tp_result_free(res);
	res = check(kf_ctr_create, FW, "{\"template\":{\"spec\":{\"volumeClaimPolicies\":[{\"templates\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"\"}}]}]}}}", 0);
	tp_result_free(res);
}

static void immutable_on_update(void **state)
{
	(void)state;
	const char *old_spec = "{\"template\":{\"spec\":{\"failurePolicy\":{\"maxRestarts\":1},\"replicatedJobs\":["
		JOB("init", "", "x", "") "," JOB("node", STEP("trainer"), "node", ",\"dependsOn\":[{\"name\":\"init\",\"status\":\"Ready\"}]") "]}}}";
	const char *new_spec = "{\"template\":{\"spec\":{\"failurePolicy\":{\"maxRestarts\":2},\"network\":{\"subdomain\":\"s\"},\"replicatedJobs\":["
		JOB("init", "", "x", "") "," JOB("node", STEP("trainer"), "node", ",\"dependsOn\":[{\"name\":\"init\",\"status\":\"Complete\"}]") "]}}}";
	cJSON *old = runtime(FW, old_spec), *now = runtime(FW, new_spec);
	tp_result *res = judge((struct run){ KF, false, TP_OP_UPDATE, TR }, now, old);
	assert_int_equal(tp_result_error_count(res), 2);
	assert_true(tt_has_error(res, "spec.template.spec.failurePolicy", "Value is immutable"));
	assert_true(tt_has_error(res, RJ "[1].dependsOn", "Value is immutable"));
	assert_false(tt_has_error(res, "spec.template.spec.network", NULL)); /* added: no oldSelf */
	tp_result_free(res);
	res = judge((struct run){ KF, false, TP_OP_CREATE, TR }, now, NULL);
	assert_int_equal(tp_result_error_count(res), 0);
	tp_result_free(res);
	res = judge((struct run){ KF, true, TP_OP_UPDATE, TR }, now, old);
	assert_int_equal(tp_result_error_count(res), 0);
	tp_result_free(res);
	res = judge((struct run){ KF, false, TP_OP_UPDATE, CTR }, old, old);
	assert_int_equal(tp_result_error_count(res), 0);
	tp_result_free(res);
	cJSON_Delete(old);
	cJSON_Delete(now);
}

/* ------------------------------------------------------------ strict */

#define FWL "metadata.labels[trainer.kubeflow.org/framework]"

static void framework_label(void **state)
{
	(void)state;
	tp_result *res = check(st_ctr_create, "", GOOD_SPEC, 1);
	assert_true(tt_has_error(res, FWL, "add the label trainer.kubeflow.org/framework, e.g. \"torch\""));
	assert_int_equal(tp_result_error_at(res, 0)->type, TP_FIELD_REQUIRED);
	tp_result_free(res);
	res = check((struct run){ ST, false, TP_OP_UPDATE, TR }, "\"trainer.kubeflow.org/framework\":\"\"", GOOD_SPEC, 1);
	assert_true(tt_has_error(res, FWL, "every runtime must name its ML framework"));
	tp_result_free(res);
	res = check(st_ctr_create, "\"trainer.kubeflow.org/framework\":\"-x\"", GOOD_SPEC, 1);
	assert_true(tt_has_error(res, FWL, "; use a framework name such as \"torch\""));
	tp_result_free(res);
	res = check(st_ctr_create, "\"trainer.kubeflow.org/framework\":\"paddle\"", GOOD_SPEC, 0);
	assert_true(tt_has_warning(res, "metadata.labels[trainer.kubeflow.org/framework]: "
				   "\"paddle\" is not a framework the SDK knows"));
	tp_result_free(res);
	res = check(kf_ctr_create, "", GOOD_SPEC, 0);
	assert_int_equal(tp_result_warning_count(res), 0);
	tp_result_free(res);
}

static void ancestor_steps(void **state)
{
	(void)state;
	const char *spec = SPEC_JOBS(JOB("prep", STEP("preprocess"), "x", "") "," TRAINER_JOB ","
				     JOB("node2", STEP("trainer"), "node", ""));
	tp_result *res = check(st_ctr_create, FW, spec, 1);
	assert_true(tt_has_warning(res, "spec.template.spec.replicatedJobs[0]: unknown trainjob-ancestor-step \"preprocess\" is ignored; "
				   "use dataset-initializer, model-initializer or trainer"));
	assert_true(tt_has_error(res, RJ "[2].template.metadata.labels[" ANC "]", "replicatedJobs[1] already has this step"));
	assert_int_equal(tp_result_error_at(res, 0)->type, TP_FIELD_DUPLICATE);
	tp_result_free(res);
	res = check(kf_ctr_create, FW, spec, 0);
	assert_int_equal(tp_result_warning_count(res), 0);
	tp_result_free(res);
	res = check(st_ctr_create, FW, SPEC_JOBS(JOB("node", "", "node", "")), 0);
	assert_true(tt_has_warning(res, "no replicated job is labelled trainjob-ancestor-step: trainer"));
	tp_result_free(res);
}

static void torch_guides_fields(void **state)
{
	(void)state;
	static const char *good[] = { "\"auto\"", "\"cpu\"", "\"gpu\"", "4", "\"8\"" };
	static const char *bad[] = { "\"many\"", "0", "\"0\"", "true", "\"-1\"", "1.5", "\"99999999999\"" };
	char spec[512];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(spec, sizeof(spec), "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":%s}}}", good[i]);
		tp_result_free(check(st_ctr_create, FW, spec, 0));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(spec, sizeof(spec), "{\"mlPolicy\":{\"torch\":{\"numProcPerNode\":%s}}}", bad[i]);
		tp_result *res = check(st_ctr_create, FW, spec, 1);
		assert_true(tt_has_error(res, "spec.mlPolicy.torch.numProcPerNode",
					 "supported values: \"auto\", \"cpu\", \"gpu\", or an integer >= 1"));
		assert_int_equal(tp_result_error_at(res, 0)->type, TP_FIELD_UNSUPPORTED);
		tp_result_free(res);
		/* upstream's schema has no such field: pruned, ignored */
		tp_result_free(check(kf_ctr_create, FW, spec, 0));
	}
}

#define EP "spec.mlPolicy.torch.elasticPolicy"

static void elastic_policy(void **state)
{
	(void)state;
	tp_result_free(check(st_ctr_create, FW, "{\"mlPolicy\":{\"numNodes\":4,\"torch\":{\"elasticPolicy\":{\"minNodes\":2,"
			     "\"maxNodes\":8,\"maxRestarts\":3,\"metrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\"}}]}}}}", 0));
	tp_result *res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"numNodes\":9,\"torch\":{\"elasticPolicy\":{\"minNodes\":0,"
			       "\"maxNodes\":8,\"maxRestarts\":-1}}}}", 3);
	assert_true(tt_has_error(res, EP ".minNodes", "must be greater than or equal to 1; set minNodes to 1 or more"));
	assert_true(tt_has_error(res, EP ".maxRestarts", "must be greater than or equal to 0"));
	assert_true(tt_has_error(res, "spec.mlPolicy.numNodes", "must lie within elasticPolicy's [minNodes, maxNodes]"));
	tp_result_free(res);
	res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"torch\":{\"elasticPolicy\":{\"minNodes\":4,\"maxNodes\":2,"
		    "\"metrics\":[{\"type\":\"Pods\"},{\"type\":\"Cpu\"},7]}}}}", 4);
	assert_true(tt_has_error(res, EP ".maxNodes", "must be greater than or equal to minNodes (4)"));
	assert_true(tt_has_error(res, EP ".metrics[0].pods", "a metric of type Pods needs its pods member"));
	assert_true(tt_has_error(res, EP ".metrics[1].type", "supported values: \"Resource\", \"Pods\""));
	assert_true(tt_has_error(res, EP ".metrics[2]", "must be a MetricSpec object"));
	tp_result_free(res);
	res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"torch\":{\"elasticPolicy\":{\"minNodes\":\"2\"}}}}", 1);
	assert_true(tt_has_error(res, EP ".minNodes", "must be of type integer"));
	tp_result_free(res);
	tp_result_free(check(kf_ctr_create, FW, "{\"mlPolicy\":{\"torch\":{\"elasticPolicy\":{\"minNodes\":0}}}}", 0));
}

static void mlpolicy_strict_values(void **state)
{
	(void)state;
	tp_result *res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"numNodes\":0}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.numNodes", "must be greater than or equal to 1; set numNodes to 1 or more"));
	tp_result_free(res);
	tp_result_free(check(kf_ctr_create, FW, "{\"mlPolicy\":{\"numNodes\":0}}", 0));
	res = check(st_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"sshAuthMountPath\":\"root/.ssh\"}}}", 1);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.sshAuthMountPath", "must be an absolute path; write it from the root"));
	tp_result_free(res);
	tp_result_free(check(kf_ctr_create, FW, "{\"mlPolicy\":{\"mpi\":{\"sshAuthMountPath\":\"root/.ssh\"}}}", 0));
	/* strict rules mirror the CRD's when the schema layer is off */
	res = check((struct run){ ST, true, TP_OP_CREATE, CTR }, FW,
		    "{\"mlPolicy\":{\"torch\":{},\"jax\":{},\"mpi\":{\"numProcPerNode\":0,\"runLauncherAsNode\":1}}}", 3);
	assert_true(tt_has_error(res, "spec.mlPolicy", "Only one of the policy can be configured; keep a single one"));
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.numProcPerNode", "NumProcPerNode in mpiPolicy must be >= 1"));
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.runLauncherAsNode", "must be of type boolean"));
	tp_result_free(res);
}

static void pod_group_policy(void **state)
{
	(void)state;
	const char *both = "{\"podGroupPolicy\":{\"coscheduling\":{\"scheduleTimeoutSeconds\":0},\"volcano\":{}}}";
	tp_result *res = check(st_ctr_create, FW, both, 2);
	assert_true(tt_has_error(res, "spec.podGroupPolicy", "only one of coscheduling and volcano may be set; keep one"));
	assert_true(tt_has_error(res, "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds",
				 "must be greater than or equal to 1; set scheduleTimeoutSeconds to 1 or more"));
	tp_result_free(res);
	tp_result_free(check(kf_ctr_create, FW, both, 0));
	tp_result_free(check(st_ctr_create, FW, "{\"podGroupPolicy\":{\"coscheduling\":{\"scheduleTimeoutSeconds\":60}}}", 0));
	res = check(kf_ctr_create, FW, "{\"podGroupPolicy\":{\"volcano\":{\"networkTopology\":{\"mode\":\"firm\"}}}}", 1);
	assert_true(tt_has_error(res, "spec.podGroupPolicy.volcano.networkTopology.mode", "supported values: \"hard\", \"soft\""));
	tp_result_free(res);
}

static void template_names_and_depends_on(void **state)
{
	(void)state;
	const char *spec = SPEC_JOBS(JOB("Node_1", STEP("trainer"), "node", ",\"dependsOn\":[{\"name\":\"later\",\"status\":\"Ready\"}]") ","
				     JOB("later", "", "x", ""));
	tp_result *res = check(st_ctr_create, FW, spec, 2);
	assert_true(tt_has_error(res, RJ "[0].name", "; use a short lower-case name such as \"node\""));
	assert_true(tt_has_error(res, RJ "[0].dependsOn[0].name", "must name a replicated job listed before this one"));
	tp_result_free(res);
	tp_result_free(check(kf_ctr_create, FW, spec, 0));
	res = check(kf_ctr_create, FW, SPEC_JOBS(JOB("a", "", "x", "") "," JOB("node", STEP("trainer"), "node",
		    ",\"dependsOn\":[{\"name\":\"a\",\"status\":\"Running\"}]")), 1);
	assert_true(tt_has_error(res, RJ "[1].dependsOn[0].status", "supported values: \"Ready\", \"Complete\""));
	tp_result_free(res);
	tp_result_free(check(st_ctr_create, FW, SPEC_JOBS(JOB("a", "", "x", "") "," JOB("node", STEP("trainer"), "node",
			     ",\"dependsOn\":[{\"name\":\"a\",\"status\":\"Ready\"}]")), 0));
	/* the path names the job's own index, not the first one's */
	res = check(st_ctr_create, FW, SPEC_JOBS(JOB("node", STEP("trainer"), "node", "") "," JOB("Bad_1", "", "x", "")), 1);
	assert_true(tt_has_error(res, RJ "[1].name", "; use a short lower-case name such as \"node\""));
	tp_result_free(res);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_runtime_passes_everywhere),
		cmocka_unit_test(deprecation_warnings_per_kind_op_profile),
		cmocka_unit_test(replicated_jobs_errors_aggregate),
		cmocka_unit_test(trainingruntime_update_skipped_upstream_not_strict),
		cmocka_unit_test(wrong_types_are_field_errors),
		cmocka_unit_test(required_members),
		cmocka_unit_test(min_properties),
		cmocka_unit_test(cel_only_one_policy),
		cmocka_unit_test(cel_num_proc_per_node),
		cmocka_unit_test(cel_failure_texts),
		cmocka_unit_test(mpi_implementation_per_profile),
		cmocka_unit_test(torch_env_injection),
		cmocka_unit_test(startup_policy_and_depends_on),
		cmocka_unit_test(volume_claim_namespace),
		cmocka_unit_test(immutable_on_update),
		cmocka_unit_test(framework_label),
		cmocka_unit_test(ancestor_steps),
		cmocka_unit_test(torch_guides_fields),
		cmocka_unit_test(elastic_policy),
		cmocka_unit_test(mlpolicy_strict_values),
		cmocka_unit_test(pod_group_policy),
		cmocka_unit_test(template_names_and_depends_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

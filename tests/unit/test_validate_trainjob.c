/*
 * test_validate_trainjob.c — the TrainJob validator: runtimeRef lookup and
 * scoping, deprecation warnings, the JobSet/Torch/MPI/XGBoost/Volcano plugin
 * rules, strict-only extras, and odd input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/tj_fixtures.h"

/* store, res, setup and teardown: tj_fixtures.h (TJ_GROUP_STATE). */
TJ_GROUP_STATE

/* Validate job (old on UPDATE) in profile p; the job trees are freed here. */
static tp_result *check(tp_profile p, tp_operation op, cJSON *job, cJSON *old)
{
	tp_options opt = { .profile = p, .store = store };
	tp_result_clear(res);
	tp_store_rdlock(store);
	assert_int_equal(tp_validate_trainjob(&opt, op, job, old, res), TP_OK);
	tp_store_unlock(store);
	cJSON_Delete(job);
	cJSON_Delete(old);
	tt_dump(res);
	return res;
}

static tp_result *create(tp_profile p, cJSON *job)
{
	return check(p, TP_OP_CREATE, job, NULL);
}

#define K TP_PROFILE_KUBEFLOW
#define S TP_PROFILE_STRICT
#define TR "TrainingRuntime"
#define CTR "ClusterTrainingRuntime"

static const tp_field_error *only_error(const tp_result *r)
{
	assert_int_equal(tp_result_error_count(r), 1);
	return tp_result_error_at(r, 0);
}

/* ---------------------------------------------------------- runtimeRef */

static void registry_key(void **state)
{
	(void)state;
	cJSON *j = tj_job("a", CTR, "torch-current", "");
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j->child->next->next->next, "runtimeRef"),
				  "apiGroup", cJSON_CreateString("kubeflow.org"));
	/* tj_job's members: apiVersion, kind, metadata, spec */
	const tp_field_error *e = only_error(create(K, cJSON_Duplicate(j, 1)));
	assert_int_equal(e->type, TP_FIELD_PLAIN);
	assert_string_equal(e->detail, "unsupported runtime: ClusterTrainingRuntime.kubeflow.org");
	e = only_error(create(S, j));
	assert_string_equal(e->detail, "unsupported runtime: ClusterTrainingRuntime.kubeflow.org: "
				       "use apiGroup \"trainer.kubeflow.org\"");
	/* Another group: no hint in either profile. */
	j = tt_json("{\"metadata\":{\"name\":\"a\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":"
		    "{\"name\":\"x\",\"apiGroup\":\"\",\"kind\":\"Foo\"}}}");
	e = only_error(create(S, j));
	assert_string_equal(e->detail, "unsupported runtime: Foo");
	/* Defaults: no apiGroup/kind means ClusterTrainingRuntime.trainer.kubeflow.org. */
	j = tt_json("{\"metadata\":{\"name\":\"a\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":"
		    "{\"name\":\"torch-current\"}}}");
	assert_true(tp_result_ok(create(S, j)));
}

static void not_found_texts(void **state)
{
	(void)state;
	tp_result *r = create(K, tj_job("a", CTR, "nope", ""));
	assert_true(tt_has_error(r, "spec.RuntimeRef", "clustertrainingruntimes.trainer.kubeflow.org "
				 "\"nope\" not found: specified clusterTrainingRuntime must be created "
				 "before the TrainJob is created"));
	r = create(K, tj_job("a", TR, "nope", ""));
	const tp_field_error *e = only_error(r);
	assert_string_equal(e->path, "spec.runtimeRef");
	assert_string_equal(e->detail, "trainingruntimes.trainer.kubeflow.org \"nope\" not found: "
				       "specified trainingRuntime must be created before the TrainJob "
				       "is created");
	assert_true(tp_result_ok(create(K, tj_job("a", TR, "team-torch", ""))));
}

static void namespace_scoping(void **state)
{
	(void)state;
	const char *base = "trainingruntimes.trainer.kubeflow.org \"elsewhere\" not found: specified "
			   "trainingRuntime must be created before the TrainJob is created";
	const tp_field_error *e = only_error(create(K, tj_job("a", TR, "elsewhere", "")));
	assert_string_equal(e->detail, base); /* upstream: nothing more */
	e = only_error(create(S, tj_job("a", TR, "elsewhere", "")));
	assert_string_equal(e->path, "spec.runtimeRef");
	assert_non_null(strstr(e->detail, base));
	assert_non_null(strstr(e->detail, "exists only in namespaces team-b, team-c"));
	assert_non_null(strstr(e->detail, "use a ClusterTrainingRuntime to share a runtime across "
				          "namespaces"));
	/* Absent everywhere: the plain text, even in strict. */
	e = only_error(create(S, tj_job("a", TR, "ghost", "")));
	assert_null(strstr(e->detail, "exists only"));
}

static void deprecation_warnings(void **state)
{
	(void)state;
	const char *w = "Referenced ClusterTrainingRuntime \"torch-distributed\" is deprecated and "
			"will be removed in a future release of Kubeflow Trainer. See runtime "
			"deprecation policy: https://trainer.kubeflow.org/en/latest/operator-guides/"
			"runtime.html#runtime-deprecation-policy";
	tp_result *r = create(K, tj_job("a", CTR, "torch-distributed", ""));
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0), w);
	r = check(K, TP_OP_UPDATE, tj_job("a", CTR, "torch-distributed", ""),
		  tj_job("a", CTR, "torch-distributed", ""));
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0), w);
	/* A non-deprecated runtime: silent. */
	assert_int_equal(tp_result_warning_count(create(S, tj_job("a", CTR, "torch-current", ""))), 0);
	/* A deprecated TrainingRuntime: strict warns, kubeflow does not. */
	assert_int_equal(tp_result_warning_count(create(K, tj_job("a", TR, "old-torch", ""))), 0);
	r = create(S, tj_job("a", TR, "old-torch", ""));
	assert_true(tt_has_warning(r, "Referenced TrainingRuntime \"old-torch\" is deprecated"));
	/* DELETE is never validated. */
	r = check(S, TP_OP_DELETE, tj_job("a", CTR, "nope", ""), NULL);
	assert_int_equal(tp_result_error_count(r), 0);
}

static void num_nodes_zero_strict_warning(void **state)
{
	(void)state;
	tp_result *r = create(K, tj_job("a", CTR, "torch-current", "\"trainer\":{\"numNodes\":0}"));
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 0);
	r = create(S, tj_job("a", CTR, "torch-current", "\"trainer\":{\"numNodes\":0}"));
	assert_true(tp_result_ok(r));
	assert_true(tt_has_warning(r, "spec.trainer.numNodes is 0, but the JobSet will still run "
				      "one node"));
	r = create(S, tj_job("a", CTR, "torch-current", "\"trainer\":{\"numNodes\":2}"));
	assert_int_equal(tp_result_warning_count(r), 0);
}

/* ----------------------------------------------------------- JobSet plugin */

static void initializer_jobs(void **state)
{
	(void)state;
	const char *ds = "\"initializer\":{\"dataset\":{\"storageUri\":\"hf://a/b\"}}";
	const char *md = "\"initializer\":{\"model\":{\"storageUri\":\"hf://a/b\"}}";
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "torch-current", ds))));
	tp_result *r = create(K, tj_job("a", CTR, "torch-current", md));
	assert_true(tt_has_error(r, "spec.runtimeRef", "must have model-initializer job when "
				 "trainJob is configured with input modelConfig"));
	r = create(K, tj_job("a", CTR, "xgb", ds));
	assert_true(tt_has_error(r, "spec.runtimeRef", "must have dataset-initializer job when "
				 "trainJob is configured with input datasetConfig"));
	/* The job is there, but a patch of mounts is not enough to fix a wrong container:
	 * a runtime whose dataset-initializer job runs a container of another name. */
	tj_put(store, TJ_RUNTIME("ClusterTrainingRuntime", "", "bad-init", "",
				 "{\"template\":{\"spec\":{\"replicatedJobs\":["
				 TJ_JOB("dataset-initializer", "dataset-initializer", "other") ","
				 TJ_JOB("model-initializer", "model-initializer", "model-initializer")
				 "]}}}"));
	r = create(K, tj_job("a", CTR, "bad-init", ds));
	assert_true(tt_has_error(r, "spec.runtimeRef", "must have container with name - "
				 "dataset-initializer in the dataset-initializer job"));
	tj_put(store, TJ_RUNTIME("ClusterTrainingRuntime", "", "no-mount", "",
				 "{\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":"
				 "\"model-initializer\",\"template\":{\"spec\":{\"template\":{\"spec\":"
				 "{\"containers\":[{\"name\":\"model-initializer\"}]}}}}}]}}}"));
	r = create(K, tj_job("a", CTR, "no-mount", md));
	assert_true(tt_has_error(r, "spec.runtimeRef", "must have volumeMount with name - "
				 "initializer in container model-initializer of the model-initializer job"));
	/* Upstream's container set is initContainers and containers: an
	 * initializer that runs as an initContainer is found. */
	tj_put(store, TJ_RUNTIME("ClusterTrainingRuntime", "", "init-as-init", "",
				 "{\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":"
				 "\"model-initializer\",\"template\":{\"spec\":{\"template\":{\"spec\":"
				 "{\"initContainers\":[{\"name\":\"model-initializer\",\"volumeMounts\":"
				 "[{\"name\":\"initializer\",\"mountPath\":\"/w\"}]}],\"containers\":"
				 "[{\"name\":\"main\"}]}}}}}]}}}"));
	r = create(K, tj_job("a", CTR, "init-as-init", md));
	if (!tp_result_ok(r))
		tt_dump(r);
	assert_true(tp_result_ok(r));
}

#define PATCH(mgr, body)                                                                  \
	"{\"manager\":\"" mgr "\",\"trainingRuntimeSpec\":{\"template\":{\"spec\":{"       \
	"\"replicatedJobs\":[" body "]}}}}"
#define PJOB(name, pod) \
	"{\"name\":\"" name "\",\"template\":{\"spec\":{\"template\":{\"spec\":" pod "}}}}"

static void runtime_patch_contents(void **state)
{
	(void)state;
	const char *ok = "\"runtimePatches\":[" PATCH("kueue.x-k8s.io/manager",
		PJOB("node", "{\"nodeSelector\":{\"a\":\"b\"},\"containers\":[{\"name\":\"node\","
			     "\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":\"/x\"}]}],"
			     "\"initContainers\":[{\"name\":\"prep\",\"env\":[{\"name\":\"A\"}]}]}")) "]";
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "torch-current", ok))));
	tp_result *r = create(K, tj_job("a", CTR, "torch-current", "\"runtimePatches\":["
		PATCH("kueue.x-k8s.io/manager", PJOB("ghost", "{}")) "]"));
	assert_true(tt_has_error(r, "spec.runtimePatches", "must not have replicated job that "
				 "doesn't exist in the runtime job template"));
	r = create(K, tj_job("a", CTR, "torch-current", "\"runtimePatches\":["
		PATCH("kueue.x-k8s.io/manager", PJOB("node", "{\"initContainers\":[{\"name\":"
						     "\"ghost\"}],\"containers\":[{\"name\":\"sidecar\"}]}"))
		"]"));
	assert_true(tt_has_error(r, "spec.runtimePatches", "must not have initContainer that "
				 "doesn't exist in the runtime job node"));
	assert_true(tt_has_error(r, "spec.runtimePatches", "must not have container that "
				 "doesn't exist in the runtime job node"));
	r = create(K, tj_job("a", CTR, "torch-current", "\"runtimePatches\":["
		PATCH("kueue.x-k8s.io/manager", PJOB("node", "{\"containers\":[{\"name\":\"node\","
						     "\"env\":[{\"name\":\"A\",\"value\":\"1\"}]}]}")) "]"));
	assert_true(tt_has_error(r, "spec.runtimePatches", "must not have envs for the "
				 "dataset-initializer, model-initializer, node containers"));
}

static void runtime_patch_manager(void **state)
{
	(void)state;
	tp_result *r = create(K, tj_job("a", CTR, "torch-current", "\"runtimePatches\":["
					PATCH("kueue", "") "]"));
	assert_true(tt_has_error(r, "spec.runtimePatches.manager", "must be a domain-prefixed path "
				 "(such as \"acme.io/foo\")"));
	r = create(K, tj_job("a", CTR, "torch-current", "\"runtimePatches\":["
			     PATCH("Bad_Host/x", "") "]"));
	assert_true(tt_has_error(r, "spec.runtimePatches.manager", "a lowercase RFC 1123 subdomain"));
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "torch-current", "\"runtimePatches\":["
						  PATCH("example.com/team", "") "]"))));
}

static void runtime_patch_updates(void **state)
{
	(void)state;
	const char *p1 = "\"runtimePatches\":[" PATCH("example.com/m",
		PJOB("node", "{\"nodeSelector\":{\"a\":\"1\"}}")) "]";
	const char *p2 = "\"runtimePatches\":[" PATCH("example.com/m",
		PJOB("node", "{\"nodeSelector\":{\"a\":\"2\"}}")) "]";
	char run2[512], sus1[512], sus2[512];
	snprintf(sus1, sizeof(sus1), "\"suspend\":true,%s", p1);
	snprintf(sus2, sizeof(sus2), "\"suspend\":true,%s", p2);
	snprintf(run2, sizeof(run2), "\"suspend\":false,%s", p2);
	/* Unchanged: allowed while running. */
	tp_result *r = check(K, TP_OP_UPDATE, tj_job("idle", CTR, "torch-current", p1),
			     tj_job("idle", CTR, "torch-current", p1));
	assert_true(tp_result_ok(r));
	/* Changed while running. */
	r = check(K, TP_OP_UPDATE, tj_job("idle", CTR, "torch-current", run2),
		  tj_job("idle", CTR, "torch-current", p1));
	const tp_field_error *e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_FORBIDDEN);
	assert_string_equal(e->path, "spec.runtimePatches");
	assert_string_equal(e->detail, "RuntimePatches can only be modified when the TrainJob is "
				       "suspended before or after the update");
	/* Changed while suspended, no JobSet in the store: allowed. */
	r = check(K, TP_OP_UPDATE, tj_job("idle", CTR, "torch-current", sus2),
		  tj_job("idle", CTR, "torch-current", sus1));
	assert_true(tp_result_ok(r));
	/* Suspended after the update, JobSet busy still has an active node job. */
	r = check(K, TP_OP_UPDATE, tj_job("busy", CTR, "torch-current", sus2),
		  tj_job("busy", CTR, "torch-current", p1));
	e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_FORBIDDEN);
	assert_string_equal(e->detail, "RuntimePatches cannot be modified when the JobSet's "
				       "ReplicatedJob node is still active");
	/* Patches removed while running count as a change too; none before and [] now do not. */
	r = check(K, TP_OP_UPDATE, tj_job("idle", CTR, "torch-current", ""),
		  tj_job("idle", CTR, "torch-current", p1));
	assert_true(tt_has_error(r, "spec.runtimePatches", "can only be modified"));
	r = check(K, TP_OP_UPDATE, tj_job("idle", CTR, "torch-current", "\"runtimePatches\":[]"),
		  tj_job("idle", CTR, "torch-current", ""));
	assert_true(tp_result_ok(r));
}

static void runtime_patch_merge_failure(void **state)
{
	(void)state;
	/* replicatedJobs must be a list: the merge fails, denied in both profiles. */
	const char *bad = "\"runtimePatches\":[{\"manager\":\"example.com/m\",\"trainingRuntimeSpec\":"
			  "{\"template\":{\"spec\":{\"replicatedJobs\":{\"name\":\"node\"}}}}}]";
	for (int p = 0; p < 2; p++) {
		tp_options opt = { .profile = p ? S : K, .store = store, .no_schema = true };
		cJSON *j = tj_job("a", CTR, "torch-current", bad);
		tp_result_clear(res);
		tp_store_rdlock(store);
		assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, j, NULL, res), TP_OK);
		tp_store_unlock(store);
		cJSON_Delete(j);
		const tp_field_error *e = only_error(res);
		assert_string_equal(e->path, "spec.runtimePatches");
		assert_non_null(strstr(e->detail, "cannot be applied to the runtime template of "
						  "torch-current"));
	}
}

/* ------------------------------------------------------------ Torch plugin */

static void torch_reserved_envs(void **state)
{
	(void)state;
	tp_result *r = create(K, tj_job("a", CTR, "torch-current", "\"trainer\":{\"env\":["
		"{\"name\":\"PET_NODE_RANK\"},{\"name\":\"OK\"},{\"name\":\"PET_MASTER_ADDR\"}]}"));
	const tp_field_error *e = only_error(r);
	assert_string_equal(e->path, "spec.trainer.env");
	assert_string_equal(e->detail, "must not have reserved envs, invalid envs configured: "
				       "[PET_MASTER_ADDR PET_NODE_RANK]");
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "torch-current",
					"\"trainer\":{\"env\":[{\"name\":\"OK\"}]}"))));
	/* Not a torch runtime: PET_* is nobody's business. */
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "volcano-queue",
					"\"trainer\":{\"env\":[{\"name\":\"PET_NNODES\"}]}"))));
}

static void torch_env_injection(void **state)
{
	(void)state;
	/* The fixture's target (node, prep) exists as an init container. */
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "torch-current", ""))));
	tj_put(store, TJ_RUNTIME("ClusterTrainingRuntime", "", "inject-ghost", "",
				 "{\"mlPolicy\":{\"torch\":{\"envInjection\":{\"targets\":[{\"jobName\":"
				 "\"node\",\"containerNames\":[\"prep\",\"ghost\"]},{\"jobName\":"
				 "\"nojob\",\"containerNames\":[\"c\"]}]}}},\"template\":{\"spec\":{"
				 "\"replicatedJobs\":[" TJ_JOB("node", "trainer", "node") "]}}}"));
	tp_result *r = create(K, tj_job("a", CTR, "inject-ghost", ""));
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "spec.runtimeRef", "envInjection target podSet \"node\" "
				 "container \"ghost\" not found in runtime template"));
	assert_true(tt_has_error(r, "spec.runtimeRef", "envInjection target podSet \"nojob\" "
				 "container \"c\" not found in runtime template"));
}

/* -------------------------------------------------------- MPI, XGBoost, Volcano */

static void mpi_rules(void **state)
{
	(void)state;
	tp_result *r = create(K, tj_job("a", CTR, "mpi-solo", "\"trainer\":{\"numNodes\":2}"));
	const tp_field_error *e = only_error(r);
	assert_string_equal(e->path, "spec.trainer.numNodes");
	assert_string_equal(e->detail, "must have 1 when MPI trainingRuntime with enabled "
				       "runLauncherAsNode does not have either launcher and node");
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "mpi-solo", "\"trainer\":{\"numNodes\":1}"))));
	/* The rule reads trainer.numNodes (default 1), not the runtime's numNodes. */
	tj_put(store, TJ_RUNTIME("ClusterTrainingRuntime", "", "mpi-solo-2", "",
				 "{\"mlPolicy\":{\"numNodes\":2,\"mpi\":{\"runLauncherAsNode\":true}},"
				 "\"template\":{\"spec\":{\"replicatedJobs\":["
				 TJ_JOB("node", "trainer", "node") "]}}}"));
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "mpi-solo-2", "\"trainer\":{}"))));
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "mpi-pair", "\"trainer\":{\"numNodes\":3}"))));
	r = create(K, tj_job("a", CTR, "mpi-pair", "\"trainer\":{\"env\":[{\"name\":"
			     "\"OMPI_MCA_plm_rsh_args\"},{\"name\":\"OMPI_MCA_orte_default_hostfile\"}]}"));
	assert_true(tt_has_error(r, "spec.trainer.env", "must not have reserved envs, invalid envs "
				 "configured: [OMPI_MCA_orte_default_hostfile OMPI_MCA_plm_rsh_args]"));
}

static void xgboost_rules(void **state)
{
	(void)state;
	tp_result *r = create(K, tj_job("a", CTR, "xgb", "\"trainer\":{\"env\":[{\"name\":\"OK\"},"
					"{\"name\":\"DMLC_TASK_ID\",\"value\":\"1\"}]}"));
	const tp_field_error *e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_FORBIDDEN);
	assert_string_equal(e->path, "spec.trainer.env[1]");
	assert_string_equal(e->detail, "DMLC_TASK_ID is reserved for the XGBoost runtime");
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "xgb",
					"\"trainer\":{\"env\":[{\"name\":\"DMLC_OTHER\"}]}"))));
}

static void volcano_rules(void **state)
{
	(void)state;
	const tp_field_error *e = only_error(create(K, tj_job("a", CTR, "volcano-empty", "")));
	assert_string_equal(e->path, "spec.annotations[scheduling.volcano.sh/queue-name]");
	assert_string_equal(e->detail, "Volcano queue name must not be empty");
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "volcano-queue", ""))));
	/* A runtime patch can set the queue and so fix it. */
	const char *fix = "\"runtimePatches\":[{\"manager\":\"example.com/m\",\"trainingRuntimeSpec\":"
			  "{\"template\":{\"metadata\":{\"annotations\":{\"scheduling.volcano.sh/"
			  "queue-name\":\"q\"}}}}}]";
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "volcano-empty", fix))));
}

/* Upstream's volcano_test.go TestValidate: "priorityClassName does not
 * exist" (every job's class is looked up, in the template with the
 * TrainJob's patches), "priorityClassName exists"; a built-in class ends
 * the check, as upstream returns there. */
static void test_TestValidate_priorityClassName_does_not_exist(void **state)
{
	(void)state;
	const tp_field_error *e = only_error(create(K, tj_job("a", CTR, "volcano-pc", "")));
	assert_int_equal(e->type, TP_FIELD_INVALID);
	assert_string_equal(e->path, "spec.templateSpec.priorityClassName");
	assert_string_equal(e->value, "\"low\"");
	assert_string_equal(e->detail, "PriorityClass \"low\" doesn't exist: "
				       "priorityclasses.scheduling.k8s.io \"low\" not found");
	e = only_error(create(S, tj_job("a", CTR, "volcano-pc", "")));
	assert_non_null(strstr(e->detail, "not found; create the PriorityClass first"));
	/* a patch naming an existing class fixes it */
	const char *fix = "\"runtimePatches\":[{\"manager\":\"example.com/m\",\"trainingRuntimeSpec\":"
			  "{\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"b\",\"template\":"
			  "{\"spec\":{\"template\":{\"spec\":{\"priorityClassName\":\"high\"}}}}}]}}}}]";
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "volcano-pc", fix))));
}

static void test_TestValidate_priorityClassName_exists(void **state)
{
	(void)state;
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "volcano-pc-ok", ""))));
	assert_true(tp_result_ok(create(K, tj_job("a", CTR, "volcano-pc-system", ""))));
}

/* ------------------------------------------------------------- odd input */

static void odd_input_never_crashes(void **state)
{
	(void)state;
	const char *odd[] = {
		"{}",
		"{\"spec\":[]}",
		"{\"spec\":{\"runtimeRef\":7}}",
		"{\"metadata\":{\"name\":5},\"spec\":{\"runtimeRef\":{\"name\":[],\"kind\":{}}}}",
		"{\"spec\":{\"runtimeRef\":{\"name\":\"torch-current\"},\"trainer\":{\"env\":\"x\","
		"\"numNodes\":\"2\",\"command\":[\"tune\",\"run\"],\"args\":[1,null]},"
		"\"initializer\":{\"dataset\":[]},\"runtimePatches\":[7,{\"manager\":3}]}}",
		"{\"spec\":{\"runtimeRef\":{\"name\":\"torch-current\"},\"runtimePatches\":{}}}",
	};
	for (size_t i = 0; i < sizeof(odd) / sizeof(*odd); i++) {
		tp_result *r = create(S, tt_json(odd[i]));
		assert_true(tp_result_error_count(r) > 0);
		for (size_t k = 0; k < tp_result_error_count(r); k++) {
			const tp_field_error *e = tp_result_error_at(r, k);
			/* the API server's note that the CEL rules did not run has no path */
			bool note = !e->path && strstr(e->detail, "rules were not checked");
			assert_true(e->type == TP_FIELD_PLAIN || note || (e->path && e->detail));
		}
	}
	tp_result *r = create(S, tt_json("{\"spec\":{\"runtimeRef\":{\"name\":\"torch-current\"},"
					 "\"trainer\":{\"numNodes\":\"2\"}}}"));
	assert_true(tt_has_error(r, "spec.trainer.numNodes", "spec.trainer.numNodes in body must be "
				 "of type integer: \"string\""));
}

/* The fixture's 01 TrainJob against a deprecated torch-distributed: allowed, one warning. */
static void fixture_01_allowed_with_warning(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *path = tt_shared_path("fixtures/admissionreview/01-create-trainjob.request.json");
	char *text = tt_read_file(path, NULL);
	free(path);
	assert_non_null(text);
	cJSON *review = cJSON_Parse(text);
	free(text);
	assert_non_null(review);
	cJSON *obj = cJSON_DetachItemFromObject(cJSON_GetObjectItem(review, "request"), "object");
	cJSON_Delete(review);
	tp_result *r = create(S, obj);
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_true(tt_has_warning(r, "Referenced ClusterTrainingRuntime \"torch-distributed\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry_key),
		cmocka_unit_test(not_found_texts),
		cmocka_unit_test(namespace_scoping),
		cmocka_unit_test(deprecation_warnings),
		cmocka_unit_test(num_nodes_zero_strict_warning),
		cmocka_unit_test(initializer_jobs),
		cmocka_unit_test(runtime_patch_contents),
		cmocka_unit_test(runtime_patch_manager),
		cmocka_unit_test(runtime_patch_updates),
		cmocka_unit_test(runtime_patch_merge_failure),
		cmocka_unit_test(torch_reserved_envs),
		cmocka_unit_test(torch_env_injection),
		cmocka_unit_test(mpi_rules),
		cmocka_unit_test(xgboost_rules),
		cmocka_unit_test(volcano_rules),
		cmocka_unit_test(test_TestValidate_priorityClassName_does_not_exist),
		cmocka_unit_test(test_TestValidate_priorityClassName_exists),
		cmocka_unit_test(odd_input_never_crashes),
		cmocka_unit_test(fixture_01_allowed_with_warning),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

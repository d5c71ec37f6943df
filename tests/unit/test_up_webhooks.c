/*
 * test_up_webhooks.c — upstream's webhook cases, ported: pkg/webhooks/
 * (clustertrainingruntime, trainingruntime, trainjob _test.go) and
 * test/integration/webhooks/ (the same three kinds against an API server),
 * at kubeflow/trainer@8c0f5059, each under its upstream name. An
 * integration case's "BeInvalidError" is the CRD schema's denial and
 * "BeForbiddenError" the webhook's; both are denials here, checked at the
 * field upstream names. All in the kubeflow profile.
 */
#include "tests/unit/up_cases.h"

#include <stdio.h>
#include <string.h>

#define KF TP_PROFILE_KUBEFLOW
#define NS "trainjob-webhook-x"
#define DEPRECATION_URL                                                                    \
	"https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html"              \
	"#runtime-deprecation-policy"

static tp_result *create(const cJSON *obj, cJSON *const *cluster)
{
	return up_validate(KF, TP_OP_CREATE, obj, NULL, cluster);
}

/* Validate a CREATE of obj against cluster, freeing obj. */
static tp_result *create_free(cJSON *obj, cJSON *const *cluster)
{
	tp_result *r = create(obj, cluster);
	cJSON_Delete(obj);
	return r;
}

/* ================================================ pkg/webhooks (16) */

/* TestClusterTrainingRuntimeValidateCreate: the runtime of
 * MakeJobSetWrapper with replicas 1, with or without the label. */
static cJSON *ctr_with_replicas(void)
{
	cJSON *rt = up_cluster_training_runtime("test-runtime");
	up_set(rt, "spec.template.spec", NULL);
	cJSON_AddItemToObject((cJSON *)tp_get(rt, "spec.template"), "spec", up_jobset_spec());
	up_replicas(rt, 1, "dataset-initializer,model-initializer,node");
	return rt;
}

static void ctr_no_deprecation_label(void **state)
{
	(void)state;
	tp_result *r = create_free(ctr_with_replicas(), NULL);
	assert_int_equal(tp_result_warning_count(r), 0);
	up_allowed(r);
}

static void ctr_support_deprecated(void **state)
{
	(void)state;
	cJSON *rt = ctr_with_replicas();
	up_label(rt, "trainer.kubeflow.org/support", "deprecated");
	tp_result *r = create_free(rt, NULL);
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0),
			    "ClusterTrainingRuntime \"test-runtime\" is deprecated and will be removed "
			    "in a future release of Kubeflow Trainer. See runtime deprecation policy: "
			    DEPRECATION_URL);
	up_allowed(r);
}

/* TestValidateReplicatedJobs, through a TrainingRuntime holding the jobs. */
static cJSON *tr_jobs(void)
{
	cJSON *rt = up_training_runtime("ns", "valid");
	return rt;
}

static void rjobs_valid(void **state)
{
	(void)state;
	cJSON *rt = tr_jobs();
	up_launcher_replica(rt);
	up_replicas(rt, 1, "launcher,node,dataset-initializer,model-initializer");
	up_allowed(create_free(rt, NULL));
}

static void rjobs_valid_unknown_ancestor(void **state)
{
	(void)state;
	cJSON *rt = tr_jobs();
	up_job_label(rt, "trainer.kubeflow.org/trainjob-ancestor-step", "user-specified",
		     "node,dataset-initializer,model-initializer");
	up_replicas(rt, 2, "node,dataset-initializer,model-initializer");
	up_allowed(create_free(rt, NULL));
}

static void rjobs_invalid_replicas(void **state)
{
	(void)state;
	cJSON *rt = tr_jobs();
	up_launcher_replica(rt);
	up_replicas(rt, 2, "launcher,node,dataset-initializer,model-initializer");
	tp_result *r = create_free(rt, NULL);
	/* the launcher (index 2) carries no ancestor label: its replicas are free */
	assert_int_equal(tp_result_error_count(r), 3);
	const char *paths[] = { "spec.template.spec.replicatedJobs[0].replicas",
				"spec.template.spec.replicatedJobs[1].replicas",
				"spec.template.spec.replicatedJobs[3].replicas" };
	for (int i = 0; i < 3; i++)
		if (!tt_has_error(r, paths[i], NULL))
			fail_msg("no error at %s: %s", paths[i], up_text(r));
	tp_result_free(r);
}

static void rjobs_missing_required_container(void **state)
{
	(void)state;
	cJSON *rt = tr_jobs();
	up_replicas(rt, 1, "launcher,node,dataset-initializer,model-initializer");
	up_replace_container(rt, "dataset-initializer", "dataset-initializer", "test", "");
	up_replace_container(rt, "model-initializer", "model-initializer", "test", "");
	up_replace_container(rt, "node", "node", "test", "");
	tp_result *r = create_free(rt, NULL);
	assert_int_equal(tp_result_error_count(r), 3);
	for (int i = 0; i < 3; i++) {
		char path[128];
		snprintf(path, sizeof(path),
			 "spec.template.spec.replicatedJobs[%d].template.spec.template.spec.containers", i);
		if (!tt_has_error(r, path, NULL))
			fail_msg("no error at %s: %s", path, up_text(r));
	}
	tp_result_free(r);
}

/* TestDefault: runtimePatches[].time at a fixed clock. */
#define NOW "2025-06-15T12:00:00Z"
#define OLD "2025-01-01T00:00:00Z"
#define SA_PATCH(sa)                                                                           \
	",'trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':'node','template':" \
	"{'spec':{'template':{'spec':{'serviceAccountName':'" sa "'}}}}}]}}}"

static cJSON *defaulted(const char *patches, const char *old_patches)
{
	cJSON *tj = up_trainjob("default", "test", "ClusterTrainingRuntime", "test-runtime");
	up_set(tj, "spec.runtimePatches", patches);
	cJSON *old = NULL;
	if (old_patches) {
		old = up_trainjob("default", "test", "ClusterTrainingRuntime", "test-runtime");
		up_set(old, "spec.runtimePatches", old_patches);
	}
	tp_options opt = { .profile = KF, .now = NOW };
	cJSON *out = NULL;
	assert_int_equal(tp_default_trainjob(&opt, old ? TP_OP_UPDATE : TP_OP_CREATE, tj, old, &out),
			 TP_OK);
	cJSON_Delete(tj);
	cJSON_Delete(old);
	return out;
}

static const char *time_at(const cJSON *tj, int i)
{
	return tp_get_str(cJSON_GetArrayItem(tp_get(tj, "spec.runtimePatches"), i), "time");
}

static void default_create_all_timestamped(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/one'},{'manager':'acme.io/two'}]", NULL);
	assert_string_equal(time_at(tj, 0), NOW);
	assert_string_equal(time_at(tj, 1), NOW);
	cJSON_Delete(tj);
}

static void default_update_unchanged_preserved(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/one'" SA_PATCH("sa") "}]",
			      "[{'manager':'acme.io/one','time':'" OLD "'" SA_PATCH("sa") "}]");
	assert_string_equal(time_at(tj, 0), OLD);
	cJSON_Delete(tj);
}

static void default_update_changed_updated(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/one'" SA_PATCH("new-sa") "}]",
			      "[{'manager':'acme.io/one','time':'" OLD "'" SA_PATCH("old-sa") "}]");
	assert_string_equal(time_at(tj, 0), NOW);
	cJSON_Delete(tj);
}

static void default_create_external_time_preserved(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/one','time':'" OLD "'},{'manager':'acme.io/two'}]",
			      NULL);
	assert_string_equal(time_at(tj, 0), OLD);
	assert_string_equal(time_at(tj, 1), NOW);
	cJSON_Delete(tj);
}

static void default_update_changed_with_time_updated(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/one','time':'" OLD "','trainingRuntimeSpec':"
			      "{'template':{'spec':{'replicatedJobs':[{'name':'node'}]}}}}]",
			      "[{'manager':'acme.io/one','time':'" OLD "'}]");
	assert_string_equal(time_at(tj, 0), NOW);
	cJSON_Delete(tj);
}

static void default_update_new_beside_unchanged(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/existing'},{'manager':'acme.io/new'}]",
			      "[{'manager':'acme.io/existing','time':'" OLD "'}]");
	assert_string_equal(time_at(tj, 0), OLD);
	assert_string_equal(time_at(tj, 1), NOW);
	cJSON_Delete(tj);
}

static void default_update_new_with_external_time(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/existing'},{'manager':'acme.io/new','time':'" OLD
			      "'}]",
			      "[{'manager':'acme.io/existing','time':'" OLD "'}]");
	assert_string_equal(time_at(tj, 0), OLD);
	assert_string_equal(time_at(tj, 1), OLD);
	cJSON_Delete(tj);
}

/* TestValidateCreate: a ClusterTrainingRuntime of MakeJobSetWrapper's spec. */
static cJSON *ctr_jobset(const char *name)
{
	cJSON *rt = up_cluster_training_runtime(name);
	up_set(rt, "spec.template.spec", NULL);
	cJSON_AddItemToObject((cJSON *)tp_get(rt, "spec.template"), "spec", up_jobset_spec());
	return rt;
}

static void validate_create_rfc1035_name(void **state)
{
	(void)state;
	cJSON *rt = ctr_jobset("test-runtime");
	cJSON *cluster[] = { rt, NULL };
	tp_result *r = create_free(up_trainjob("default", "valid-job-name", "ClusterTrainingRuntime",
					       "test-runtime"), cluster);
	assert_int_equal(tp_result_warning_count(r), 0);
	up_allowed(r);
	cJSON_Delete(rt);
}

static void validate_create_unsupported_runtime(void **state)
{
	(void)state;
	tp_result *r = create_free(up_trainjob("default", "valid-job-name", "ClusterTrainingRuntime",
					       "unsupported-runtime"), NULL);
	assert_int_equal(tp_result_error_count(r), 1);
	const tp_field_error *e = tp_result_error_at(r, 0);
	assert_int_equal(e->type, TP_FIELD_INVALID);
	assert_string_equal(e->path, "spec.RuntimeRef");
	assert_string_equal(e->value, "{\"name\":\"unsupported-runtime\",\"apiGroup\":"
				      "\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"}");
	tp_result_free(r);
}

static void validate_create_deprecated_runtime(void **state)
{
	(void)state;
	cJSON *rt = ctr_jobset("test-runtime");
	up_label(rt, "trainer.kubeflow.org/support", "deprecated");
	cJSON *cluster[] = { rt, NULL };
	tp_result *r = create_free(up_trainjob("default", "valid-job-name", "ClusterTrainingRuntime",
					       "test-runtime"), cluster);
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0),
			    "Referenced ClusterTrainingRuntime \"test-runtime\" is deprecated and will "
			    "be removed in a future release of Kubeflow Trainer. See runtime deprecation "
			    "policy: " DEPRECATION_URL);
	up_allowed(r);
	cJSON_Delete(rt);
}

/* ============================ test/integration/webhooks: runtimes (12) */

static void it_create_cluster_training_runtime(void **state)
{
	(void)state;
	up_allowed(create_free(up_cluster_training_runtime("test-clustertrainingruntime"), NULL));
}

static void it_create_training_runtime(void **state)
{
	(void)state;
	up_allowed(create_free(up_training_runtime(NS, "test-trainingruntime"), NULL));
}

/* The runtime with spec.mlPolicy set to ml. */
static tp_result *runtime_with_policy(const char *ml)
{
	cJSON *rt = up_training_runtime(NS, "runtime");
	up_set(rt, "spec.mlPolicy", ml);
	return create_free(rt, NULL);
}

#define ONLY_ONE "Only one of the policy can be configured"

static void it_runtime_plain(void **state)
{
	(void)state;
	up_allowed(create_free(up_training_runtime(NS, "runtime"), NULL));
}

static void it_runtime_mpi_torch(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'torch':{},'mpi':{}}"), "spec.mlPolicy", ONLY_ONE);
}

static void it_runtime_jax_torch(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'torch':{},'jax':{}}"), "spec.mlPolicy", ONLY_ONE);
}

static void it_runtime_torch_flux(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'torch':{},'flux':{}}"), "spec.mlPolicy", ONLY_ONE);
}

static void it_runtime_mpi_flux(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'mpi':{},'flux':{}}"), "spec.mlPolicy", ONLY_ONE);
}

static void it_runtime_jax_flux(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'flux':{},'jax':{}}"), "spec.mlPolicy", ONLY_ONE);
}

static void it_runtime_jax_mpi(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'mpi':{},'jax':{}}"), "spec.mlPolicy", ONLY_ONE);
}

static void it_runtime_all_four(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'torch':{},'mpi':{},'jax':{},'flux':{}}"), "spec.mlPolicy",
		  ONLY_ONE);
}

static void it_runtime_mpi_implementation(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'mpi':{'mpiImplementation':'invalid'}}"),
		  "spec.mlPolicy.mpi.mpiImplementation", "supported values: \"OpenMPI\"");
}

static void it_runtime_mpi_num_proc(void **state)
{
	(void)state;
	up_denied(runtime_with_policy("{'mpi':{'numProcPerNode':0,'mpiImplementation':'OpenMPI'}}"),
		  "spec.mlPolicy.mpi.numProcPerNode", "NumProcPerNode in mpiPolicy must be >= 1");
}

/* ============================= test/integration/webhooks: TrainJobs */

/* The cluster of "TrainJob Webhook": TrainingRuntime and
 * ClusterTrainingRuntime "training-runtime" of upstream's wrappers. */
typedef struct it_cluster {
	cJSON *tr, *ctr;
	cJSON *list[3];
} it_cluster;

static void it_cluster_init(it_cluster *c, const char *name)
{
	c->tr = up_training_runtime(NS, name);
	c->ctr = up_cluster_training_runtime(name);
	c->list[0] = c->tr;
	c->list[1] = c->ctr;
	c->list[2] = NULL;
}

static void it_cluster_free(it_cluster *c)
{
	cJSON_Delete(c->tr);
	cJSON_Delete(c->ctr);
}

#define RT_NAME "training-runtime"
#define JOB_NAME "train-job"

/* A TrainJob of kind (TrainingRuntime or ClusterTrainingRuntime) with
 * spec members set from pairs {path, value}, validated against a fresh
 * cluster that edit (may be NULL) changes first. */
static tp_result *it_trainjob(const char *name, const char *kind, const char *runtime,
			      void (*edit)(it_cluster *), const char *const *sets)
{
	it_cluster c;
	it_cluster_init(&c, RT_NAME);
	if (edit)
		edit(&c);
	cJSON *tj = up_trainjob(NS, name, kind, runtime);
	for (const char *const *s = sets; s && *s; s += 2)
		up_set(tj, s[0], s[1]);
	tp_result *r = create_free(tj, c.list);
	it_cluster_free(&c);
	return r;
}

#define TR "TrainingRuntime"
#define CTR "ClusterTrainingRuntime"
#define SETS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void it_tj_namespaced_runtime(void **state)
{
	(void)state;
	up_allowed(it_trainjob(JOB_NAME, TR, RT_NAME, NULL, NULL));
}

static void it_tj_runtime_not_in_namespace(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, "invalid", NULL, NULL), "spec.runtimeRef",
		  "trainingruntimes.trainer.kubeflow.org \"invalid\" not found");
}

static void it_tj_negative_num_nodes(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, NULL, SETS("spec.trainer", "{'numNodes':-1}")),
		  "spec.trainer.numNodes", NULL);
}

static void it_tj_zero_num_nodes(void **state)
{
	(void)state;
	up_allowed(it_trainjob(JOB_NAME, TR, RT_NAME, NULL, SETS("spec.trainer", "{'numNodes':0}")));
}

static void it_tj_negative_num_proc(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, NULL,
			      SETS("spec.trainer", "{'numProcPerNode':-5}")),
		  "spec.trainer.numProcPerNode", "numProcPerNode must be greater than or equal to 1");
}

static void it_tj_zero_num_proc(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, NULL,
			      SETS("spec.trainer", "{'numProcPerNode':0}")),
		  "spec.trainer.numProcPerNode", "numProcPerNode must be greater than or equal to 1");
}

static void it_tj_positive_counts(void **state)
{
	(void)state;
	up_allowed(it_trainjob(JOB_NAME, TR, RT_NAME, NULL,
			       SETS("spec.trainer", "{'numNodes':1,'numProcPerNode':1}")));
}

static void it_tj_cluster_runtime(void **state)
{
	(void)state;
	up_allowed(it_trainjob(JOB_NAME, CTR, RT_NAME, NULL, NULL));
}

/* Drop the container named name from the runtime's job at index i. */
static void drop_container(cJSON *rt, int i, const char *name)
{
	cJSON *list = (cJSON *)tp_get(cJSON_GetArrayItem(up_jobs(rt), i),
				      "template.spec.template.spec.containers");
	cJSON *c = (cJSON *)tp_find_named(list, "name", name);
	cJSON_Delete(cJSON_DetachItemViaPointer(list, c));
}

static void no_model_container(it_cluster *c)
{
	drop_container(c->tr, 1, "model-initializer");
}

static void no_dataset_container(it_cluster *c)
{
	drop_container(c->tr, 0, "dataset-initializer");
}

static void it_tj_model_without_initializer(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, no_model_container,
			      SETS("spec.initializer", "{'model':{'storageUri':'hf://trainjob-model'}}")),
		  "spec.runtimeRef",
		  "must have container with name - model-initializer in the model-initializer job");
}

static void it_tj_dataset_without_initializer(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, no_dataset_container,
			      SETS("spec.initializer",
				   "{'dataset':{'storageUri':'hf://trainjob-model'}}")),
		  "spec.runtimeRef",
		  "must have container with name - dataset-initializer in the dataset-initializer "
		  "job");
}

static void it_tj_dataset_with_cluster_initializer(void **state)
{
	(void)state;
	up_allowed(it_trainjob(JOB_NAME, CTR, RT_NAME, NULL,
			       SETS("spec.initializer",
				    "{'dataset':{'storageUri':'hf://trainjob-model'}}")));
}

static void torch_policy(it_cluster *c)
{
	up_set(c->tr, "spec.mlPolicy", "{'torch':{}}");
}

static void it_tj_torch_trainer(void **state)
{
	(void)state;
	up_allowed(it_trainjob(JOB_NAME, TR, RT_NAME, torch_policy,
			       SETS("spec.trainer", "{'numProcPerNode':4}")));
}

static void it_tj_reserved_env(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, torch_policy,
			      SETS("spec.trainer", "{'env':[{'name':'PET_NODE_RANK','value':'1'}]}")),
		  "spec.trainer.env", "must not have reserved envs, invalid envs configured: "
				      "[PET_NODE_RANK]");
}

static void flux_policy(it_cluster *c)
{
	up_set(c->tr, "spec.mlPolicy", "{'flux':{}}");
}

static void flux_installer(it_cluster *c)
{
	flux_policy(c);
	up_init_container(c->tr, "node", "flux-installer", "ubuntu:22.04");
}

static void it_tj_flux_num_proc(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, flux_policy,
			      SETS("spec.trainer", "{'numProcPerNode':0}")),
		  "spec.trainer.numProcPerNode", "numProcPerNode must be greater than or equal to 1");
}

static void it_tj_flux_installer(void **state)
{
	(void)state;
	up_denied(it_trainjob(JOB_NAME, TR, RT_NAME, flux_installer, NULL),
		  "spec.trainer.initContainers", "InitContainer 'flux-installer' is reserved");
}

static tp_result *with_storage(const char *member, const char *uri)
{
	char v[256];
	snprintf(v, sizeof(v), "{'%s':{'storageUri':'%s'}}", member, uri);
	return it_trainjob(JOB_NAME, CTR, RT_NAME, NULL, SETS("spec.initializer", v));
}

static void it_tj_invalid_dataset_uri(void **state)
{
	(void)state;
	up_denied(with_storage("dataset", "invalid-uri"), "spec.initializer.dataset.storageUri", NULL);
}

static void it_tj_empty_dataset_uri(void **state)
{
	(void)state;
	up_allowed(with_storage("dataset", ""));
}

static void it_tj_dataset_uri_missing_path(void **state)
{
	(void)state;
	up_denied(with_storage("dataset", "s3://"), "spec.initializer.dataset.storageUri", NULL);
}

static void it_tj_valid_dataset_uri(void **state)
{
	(void)state;
	up_allowed(with_storage("dataset", "s3://bucket/path"));
}

static void it_tj_invalid_model_uri(void **state)
{
	(void)state;
	up_denied(with_storage("model", "invalid-uri"), "spec.initializer.model.storageUri", NULL);
}

static void it_tj_valid_model_uri(void **state)
{
	(void)state;
	up_allowed(with_storage("model", "gs://bucket/model"));
}

/* trainer.command / .args with one item of n characters. */
static tp_result *long_item(const char *member, size_t n)
{
	char *big = malloc(n + 32);
	assert_non_null(big);
	memset(big, 'a', n);
	big[n] = '\0';
	it_cluster c;
	it_cluster_init(&c, RT_NAME);
	cJSON *tj = up_trainjob(NS, JOB_NAME, CTR, RT_NAME);
	cJSON *t = cJSON_AddObjectToObject((cJSON *)tp_get(tj, "spec"), "trainer");
	cJSON *list = cJSON_AddArrayToObject(t, member);
	cJSON_AddItemToArray(list, cJSON_CreateString(big));
	free(big);
	tp_result *r = create_free(tj, c.list);
	it_cluster_free(&c);
	return r;
}

#define MIB 1048576

static void it_tj_command_max(void **state)
{
	(void)state;
	up_allowed(long_item("command", MIB));
}

static void it_tj_command_over(void **state)
{
	(void)state;
	up_denied(long_item("command", MIB + 1), "spec.trainer.command[0]", NULL);
}

static void it_tj_args_max(void **state)
{
	(void)state;
	up_allowed(long_item("args", MIB));
}

static void it_tj_args_over(void **state)
{
	(void)state;
	up_denied(long_item("args", MIB + 1), "spec.trainer.args[0]", NULL);
}

/* RFC1035-compliant TrainJob name validation: the CRD's rules on the whole
 * object, which the API server reports at a nil path with the schema's type
 * ("<nil>: Invalid value: \"object\": ...", kube-apiserver v1.32.13). */
#define NAME_RULE "<nil>: Invalid value: \"object\": metadata.name must match RFC 1035 DNS label format"

static void it_name_valid(void **state)
{
	(void)state;
	up_allowed(it_trainjob("valid-job-name", CTR, RT_NAME, NULL, NULL));
}

static void it_name_63(void **state)
{
	(void)state;
	up_allowed(it_trainjob("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk", CTR,
			       RT_NAME, NULL, NULL));
}

static void it_name_uppercase(void **state)
{
	(void)state;
	up_denied_text(it_trainjob("Invalid-job-name", CTR, RT_NAME, NULL, NULL), NAME_RULE);
}

static void it_name_digit(void **state)
{
	(void)state;
	up_denied_text(it_trainjob("1jobname", CTR, RT_NAME, NULL, NULL), NAME_RULE);
}

static void it_name_hyphen(void **state)
{
	(void)state;
	up_denied_text(it_trainjob("jobname-", CTR, RT_NAME, NULL, NULL), NAME_RULE);
}

static void it_name_too_long(void **state)
{
	(void)state;
	up_denied_text(it_trainjob("this-name-is-way-too-long-for-a-rfc1035-label-and-should-fail-"
				   "validation", CTR, RT_NAME, NULL, NULL),
		       "<nil>: Invalid value: \"object\": metadata.name must be no more than 63 characters");
}

/* "TrainJob marker validations and defaulting": runtimes named "testing". */
static tp_result *marker(const char *name, const char *kind, const char *const *sets)
{
	it_cluster c;
	it_cluster_init(&c, "testing");
	cJSON *tj = up_trainjob(NS, name, kind, "testing");
	for (const char *const *s = sets; s && *s; s += 2)
		up_set(tj, s[0], s[1]);
	tp_result *r = create_free(tj, c.list);
	it_cluster_free(&c);
	return r;
}

static void it_managed_by_trainer(void **state)
{
	(void)state;
	up_allowed(marker("managed-by-trainjob-controller", TR,
			  SETS("spec.managedBy", "'trainer.kubeflow.org/trainjob-controller'")));
}

static void it_managed_by_multikueue(void **state)
{
	(void)state;
	up_allowed(marker("managed-by-trainjob-controller", TR,
			  SETS("spec.managedBy", "'kueue.x-k8s.io/multikueue'")));
}

static void it_managed_by_invalid(void **state)
{
	(void)state;
	up_denied(marker("invalid-managed-by", TR, SETS("spec.managedBy", "'invalid'")),
		  "spec.managedBy", NULL);
}

#define NODE_POD_PATCH(mgr, pod)                                                               \
	"{'manager':'" mgr "','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':" \
	"'node','template':{'spec':{'template':{'spec':" pod "}}}}]}}}}"

static void it_two_rjob_patches(void **state)
{
	(void)state;
	up_allowed(marker("two-rjob-patches", TR,
			  SETS("spec.runtimePatches",
			       "[" NODE_POD_PATCH("acme.io/manager-one", "{'serviceAccountName':'custom-sa'}")
			       "," NODE_POD_PATCH("acme.io/manager-two",
						  "{'serviceAccountName':'custom-sa-two'}") "]")));
}

static void it_valid_patch_manager(void **state)
{
	(void)state;
	up_allowed(marker("valid-runtimepatches-manager", TR,
			  SETS("spec.runtimePatches", "[{'manager':'kueue.k8s.io/manager'}]")));
}

static void it_invalid_patch_manager(void **state)
{
	(void)state;
	up_denied(marker("invalid-runtimepatches-manager", TR,
			 SETS("spec.runtimePatches", "[{'manager':'kueue.k8s.io/'}]")),
		  "spec.runtimePatches.manager", /* upstream's path has no index */
		  "must be a domain-prefixed path (such as \"acme.io/foo\")");
}

static void it_grace_period_valid(void **state)
{
	(void)state;
	up_allowed(marker("valid-termination-grace-period", TR,
			  SETS("spec.runtimePatches",
			       "[" NODE_POD_PATCH("acme.io/manager",
						  "{'terminationGracePeriodSeconds':300}") "]")));
}

static void it_grace_period_negative(void **state)
{
	(void)state;
	tp_result *r = marker("invalid-termination-grace-period", TR,
			      SETS("spec.runtimePatches",
				   "[" NODE_POD_PATCH("acme.io/manager",
						      "{'terminationGracePeriodSeconds':-1}") "]"));
	if (tp_result_ok(r))
		fail_msg("a negative terminationGracePeriodSeconds was allowed");
	tp_result_free(r);
}

static void it_grace_period_zero(void **state)
{
	(void)state;
	up_allowed(marker("zero-termination-grace-period", TR,
			  SETS("spec.runtimePatches",
			       "[" NODE_POD_PATCH("acme.io/manager",
						  "{'terminationGracePeriodSeconds':0}") "]")));
}

/* "Should set Time on each RuntimePatch when creating a TrainJob": the
 * mutating webhook's CREATE. */
static void it_time_on_each_patch(void **state)
{
	(void)state;
	cJSON *tj = defaulted("[{'manager':'acme.io/manager-one'},{'manager':'acme.io/manager-two'}]",
			      NULL);
	assert_non_null(time_at(tj, 0));
	assert_non_null(time_at(tj, 1));
	cJSON_Delete(tj);
}

/* "Updating TrainJob": old created, then new = edit(old). */
static tp_result *update(const char *name, const char *const *sets, const char *const *edits)
{
	it_cluster c;
	it_cluster_init(&c, "testing");
	cJSON *old = up_trainjob(NS, name, TR, "testing");
	for (const char *const *s = sets; s && *s; s += 2)
		up_set(old, s[0], s[1]);
	cJSON *nw = cJSON_Duplicate(old, 1);
	for (const char *const *s = edits; s && *s; s += 2)
		up_set(nw, s[0], s[1]);
	tp_result *r = up_validate(KF, TP_OP_UPDATE, nw, old, c.list);
	cJSON_Delete(old);
	cJSON_Delete(nw);
	it_cluster_free(&c);
	return r;
}

static void it_update_managed_by(void **state)
{
	(void)state;
	up_denied(update("valid-managed-by",
			 SETS("spec.managedBy", "'trainer.kubeflow.org/trainjob-controller'"),
			 SETS("spec.managedBy", "'kueue.x-k8s.io/multikueue'")),
		  "spec.managedBy", "field is immutable");
}

static void it_update_runtime_ref(void **state)
{
	(void)state;
	up_denied(update("valid-runtimeref", NULL, SETS("spec.runtimeRef.name", "'forbidden-update'")),
		  "spec.runtimeRef", "field is immutable");
}

static void it_update_initializer(void **state)
{
	(void)state;
	up_denied(update("valid-initializer",
			 SETS("spec.initializer", "{'model':{'storageUri':'s3://test/path'}}"),
			 SETS("spec.initializer.model.storageUri", "'s3://forbidden-update'")),
		  "spec.initializer", "field is immutable");
}

static void it_update_trainer(void **state)
{
	(void)state;
	up_denied(update("valid-trainer", SETS("spec.trainer", "{'image':'test-image'}"),
			 SETS("spec.trainer.image", "'forbidden-update'")),
		  "spec.trainer", "field is immutable");
}

static void it_update_patches_suspended(void **state)
{
	(void)state;
	up_allowed(update("valid-runtimepatches",
			  SETS("spec.suspend", "true", "spec.runtimePatches",
			       "[" NODE_POD_PATCH("test.io/manager", "{'nodeSelector':{'test':'test'}}")
			       "]"),
			  SETS("spec.runtimePatches",
			       "[" NODE_POD_PATCH("test.io/manager", "{'nodeSelector':{'allow':'update'}}")
			       "]")));
}

static void it_update_grace_period(void **state)
{
	(void)state;
	tp_result *r = update(
		"immutable-termination-grace-period",
		SETS("spec.runtimePatches",
		     "[" NODE_POD_PATCH("acme.io/manager", "{'terminationGracePeriodSeconds':300}") "]"),
		SETS("spec.runtimePatches",
		     "[" NODE_POD_PATCH("acme.io/manager", "{'terminationGracePeriodSeconds':600}") "]"));
	if (tp_result_ok(r))
		fail_msg("runtimePatches changed on a running TrainJob was allowed");
	tp_result_free(r);
}

int main(void)
{
	tp_json_init();
	static const up_case cases[] = {
		/* pkg/webhooks/clustertrainingruntime_webhook_test.go */
		UP_CASE("TestClusterTrainingRuntimeValidateCreate/no deprecation label",
			ctr_no_deprecation_label),
		UP_CASE("TestClusterTrainingRuntimeValidateCreate/support=deprecated",
			ctr_support_deprecated),
		/* pkg/webhooks/trainingruntime_webhook_test.go */
		UP_CASE("TestValidateReplicatedJobs/valid replicatedJobs", rjobs_valid),
		UP_CASE("TestValidateReplicatedJobs/valid replicatedJobs with unknown user-specified "
			"ancestor", rjobs_valid_unknown_ancestor),
		UP_CASE("TestValidateReplicatedJobs/invalid replicas", rjobs_invalid_replicas),
		UP_CASE("TestValidateReplicatedJobs/missing required container in replicatedJobs",
			rjobs_missing_required_container),
		/* pkg/webhooks/trainjob_webhook_test.go */
		UP_CASE("TestDefault/CREATE: all patches get timestamped", default_create_all_timestamped),
		UP_CASE("TestDefault/UPDATE, patch unchanged: Time preserved",
			default_update_unchanged_preserved),
		UP_CASE("TestDefault/UPDATE, patch changed: Time updated", default_update_changed_updated),
		UP_CASE("TestDefault/CREATE: externally-set Time is preserved",
			default_create_external_time_preserved),
		UP_CASE("TestDefault/UPDATE, patch changed with pre-existing Time: Time updated",
			default_update_changed_with_time_updated),
		UP_CASE("TestDefault/UPDATE, new patch added alongside unchanged patch",
			default_update_new_beside_unchanged),
		UP_CASE("TestDefault/UPDATE, new patch added with externally-set Time: Time preserved",
			default_update_new_with_external_time),
		UP_CASE("TestValidateCreate/valid trainjob name compliant with RFC 1035",
			validate_create_rfc1035_name),
		UP_CASE("TestValidateCreate/unsupported runtime", validate_create_unsupported_runtime),
		UP_CASE("TestValidateCreate/deprecated runtime referenced",
			validate_create_deprecated_runtime),
		/* test/integration/webhooks/clustertrainingruntime_webhook_test.go */
		UP_CASE("Should succeed to create ClusterTrainingRuntime",
			it_create_cluster_training_runtime),
		/* test/integration/webhooks/trainingruntime_webhook_test.go */
		UP_CASE("Should succeed to create TrainingRuntime", it_create_training_runtime),
		UP_CASE("Should succeed to create trainingRuntime", it_runtime_plain),
		UP_CASE("Should fail to create trainingRuntime with both MPI and Torch runtimes",
			it_runtime_mpi_torch),
		UP_CASE("Should fail to create trainingRuntime with both JAX and Torch runtimes",
			it_runtime_jax_torch),
		UP_CASE("Should fail to create trainingRuntime with both Torch and Flux runtimes",
			it_runtime_torch_flux),
		UP_CASE("Should fail to create trainingRuntime with both MPI and Flux runtimes",
			it_runtime_mpi_flux),
		UP_CASE("Should fail to create trainingRuntime with both JAX and Flux runtimes",
			it_runtime_jax_flux),
		UP_CASE("Should fail to create trainingRuntime with both JAX and MPI runtimes",
			it_runtime_jax_mpi),
		UP_CASE("Should fail to create trainingRuntime with all four runtimes configured",
			it_runtime_all_four),
		UP_CASE("Should fail to create trainingRuntime with non-supported mpi.mpiImplementation",
			it_runtime_mpi_implementation),
		UP_CASE("Should fail to create trainingRuntime with mpi.numProcPerNode < 1",
			it_runtime_mpi_num_proc),
		/* test/integration/webhooks/trainjob_test.go */
		UP_CASE("Should succeed in creating trainJob with namespace scoped trainingRuntime",
			it_tj_namespaced_runtime),
		UP_CASE("Should fail in creating trainJob referencing trainingRuntime not present in the "
			"namespace", it_tj_runtime_not_in_namespace),
		UP_CASE("Should fail in creating trainJob with negative numNodes", it_tj_negative_num_nodes),
		UP_CASE("Should succeed in creating trainJob with zero numNodes", it_tj_zero_num_nodes),
		UP_CASE("Should fail in creating trainJob with negative numProcPerNode",
			it_tj_negative_num_proc),
		UP_CASE("Should fail in creating trainJob with zero numProcPerNode", it_tj_zero_num_proc),
		UP_CASE("Should succeed in creating trainJob with positive numNodes and numProcPerNode",
			it_tj_positive_counts),
		UP_CASE("Should succeed in creating trainJob with namespace scoped trainingRuntime "
			"(ClusterTrainingRuntime)", it_tj_cluster_runtime),
		UP_CASE("Should fail in creating trainJob with pre-trained model config when referencing a "
			"trainingRuntime without an initializer", it_tj_model_without_initializer),
		UP_CASE("Should fail in creating trainJob with dataset initializer when referencing a "
			"trainingRuntime without an initializer", it_tj_dataset_without_initializer),
		UP_CASE("Should succeed in creating trainJob with dataset initializer when referencing a "
			"ClusterTrainingRuntime with an initializer", it_tj_dataset_with_cluster_initializer),
		UP_CASE("Should succeed in creating trainJob with valid trainer config for torch runtime",
			it_tj_torch_trainer),
		UP_CASE("Should fail in creating trainJob with trainer config having envs with reserved "
			"env names", it_tj_reserved_env),
		UP_CASE("Should fail in creating TrainJob with Flux numProcPerNode < 1", it_tj_flux_num_proc),
		UP_CASE("Should fail in creating TrainJob with reserved flux-installer init container",
			it_tj_flux_installer),
		UP_CASE("Should fail with invalid dataset storageUri", it_tj_invalid_dataset_uri),
		UP_CASE("Should succeed with empty dataset storageUri", it_tj_empty_dataset_uri),
		UP_CASE("Should fail with dataset storageUri missing path", it_tj_dataset_uri_missing_path),
		UP_CASE("Should succeed with valid dataset storageUri", it_tj_valid_dataset_uri),
		UP_CASE("Should fail with invalid model storageUri", it_tj_invalid_model_uri),
		UP_CASE("Should succeed with valid model storageUri", it_tj_valid_model_uri),
		UP_CASE("Should succeed to create TrainJob with trainer command item at the max length",
			it_tj_command_max),
		UP_CASE("Should fail to create TrainJob with trainer command item exceeding the max "
			"length", it_tj_command_over),
		UP_CASE("Should succeed to create TrainJob with trainer args item at the max length",
			it_tj_args_max),
		UP_CASE("Should fail to create TrainJob with trainer args item exceeding the max length",
			it_tj_args_over),
		UP_CASE("Should succeed to create TrainJob with valid RFC1035-compliant name",
			it_name_valid),
		UP_CASE("Should succeed to create TrainJob with name exactly 63 characters", it_name_63),
		UP_CASE("Should fail to create TrainJob with uppercase letters in name", it_name_uppercase),
		UP_CASE("Should fail to create TrainJob starting with a digit", it_name_digit),
		UP_CASE("Should fail to create TrainJob ending with a hyphen", it_name_hyphen),
		UP_CASE("Should fail to create TrainJob with name exceeding 63 characters",
			it_name_too_long),
		UP_CASE("Should succeed to create TrainJob with 'managedBy: "
			"trainer.kubeflow.org/trainjob-controller'", it_managed_by_trainer),
		UP_CASE("Should succeed to create TrainJob with 'managedBy: kueue.x-k8s.io/multukueue'",
			it_managed_by_multikueue),
		UP_CASE("Should fail to create TrainJob with invalid managedBy", it_managed_by_invalid),
		UP_CASE("Should succeed to create trainJob with runtimePatches containing two replicated "
			"job patches", it_two_rjob_patches),
		UP_CASE("Should succeed to create trainJob with valid RuntimePatches manager",
			it_valid_patch_manager),
		UP_CASE("Should fail to create trainJob with invalid RuntimePatches manager",
			it_invalid_patch_manager),
		UP_CASE("Should succeed to create TrainJob with valid terminationGracePeriodSeconds in "
			"RuntimePatches", it_grace_period_valid),
		UP_CASE("Should fail to create TrainJob with negative terminationGracePeriodSeconds",
			it_grace_period_negative),
		UP_CASE("Should succeed to create TrainJob with zero terminationGracePeriodSeconds",
			it_grace_period_zero),
		UP_CASE("Should set Time on each RuntimePatch when creating a TrainJob",
			it_time_on_each_patch),
		UP_CASE("Should fail to update managedBy", it_update_managed_by),
		UP_CASE("Should fail to update runtimeRef", it_update_runtime_ref),
		UP_CASE("Should fail to update initializer", it_update_initializer),
		UP_CASE("Should fail to update trainer", it_update_trainer),
		UP_CASE("Should succeed to update runtimePatches when suspend is true",
			it_update_patches_suspended),
		UP_CASE("Should fail to update TrainJob terminationGracePeriodSeconds after creation",
			it_update_grace_period),
	};
	return UP_RUN("upstream webhooks", cases);
}

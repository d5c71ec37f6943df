/*
 * test_up_jobset.c — upstream's JobSet plugin cases, ported:
 * pkg/runtime/framework/plugins/jobset/jobset_test.go (TestJobSet,
 * TestValidate, TestBuild) and builder_test.go at kubeflow/trainer@8c0f5059,
 * each under its upstream name, in the kubeflow profile.
 *
 * Upstream calls one plugin method on a hand-made runtime.Info; here the
 * same inputs go through the whole TrainJob validator or expansion, with
 * the runtime's template standing for the Info's JobSet spec, and the
 * outcome upstream asserts is checked in what comes out.
 */
#include "tests/unit/up_cases.h"
#include "tests/unit/test_expand.h"

#define KF TP_PROFILE_KUBEFLOW
#define ANCESTOR "'trainer.kubeflow.org/trainjob-ancestor-step'"

/* A ClusterTrainingRuntime "rt" of the JobSet spec (single-quoted JSON),
 * mlPolicy ml ("" for none). */
static cJSON *rt_of(const char *ml, const char *spec)
{
	cJSON *rt = tt_jsq("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
			   "'metadata':{'name':'rt'},'spec':{'template':{}}}");
	up_set(rt, "spec.template.spec", spec);
	if (*ml)
		up_set(rt, "spec.mlPolicy", ml);
	return rt;
}

/* TrainJob default/<name> of "rt" with spec members from pairs. */
static cJSON *tj_of(const char *name, const char *const *sets)
{
	cJSON *tj = up_trainjob("default", name, "ClusterTrainingRuntime", "rt");
	for (const char *const *s = sets; s && *s; s += 2)
		up_set(tj, s[0], s[1]);
	return tj;
}

#define SETS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Validate tj (old on UPDATE) against rt and the extra cluster object. */
static tp_result *check(cJSON *tj, cJSON *old, cJSON *rt, cJSON *extra, tp_kind failing)
{
	cJSON *cluster[] = { rt, extra, NULL };
	/* the plugin's rules alone, as upstream's unit test calls them (the CRD
	 * would also hold some patch fields immutable) */
	tp_result *r = up_validate_failing(KF, old ? TP_OP_UPDATE : TP_OP_CREATE, tj, old, cluster,
					   failing, true);
	cJSON_Delete(tj);
	cJSON_Delete(old);
	cJSON_Delete(rt);
	cJSON_Delete(extra);
	return r;
}

/* Expand tj with rt (both freed); the List is the caller's. */
static cJSON *expand(cJSON *tj, cJSON *rt)
{
	tp_result *res = NULL;
	cJSON *out = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_expand_with_runtime(&ex_kubeflow, tj, rt, &ex_key, &out, res);
	if (rc || !tp_result_ok(res))
		fail_msg("expansion failed (%d): %s", rc, up_text(res));
	tp_result_free(res);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
	return out;
}

#define JOB(name, extra, pod)                                                                  \
	"{'name':'" name "'" extra ",'template':{'spec':{'template':{'spec':" pod "}}}}"
#define LABELLED(name, ancestor, extra, pod)                                                   \
	"{'name':'" name "'" extra ",'template':{'metadata':{'labels':{" ANCESTOR ":'" ancestor     \
	"'}},'spec':{'template':{'spec':" pod "}}}}"
#define ONE(c) "{'containers':[{'name':'" c "'}]}"

/* ================================================ TestJobSet (4 of 7) */

static void jobset_node_count_rather_than_parallelism(void **state)
{
	(void)state;
	/* the node job's count (2) makes its completions and its endpoints */
	cJSON *l;
	l = expand(tj_of("trainJob", NULL),
		   rt_of("{'mpi':{'mpiImplementation':'OpenMPI'}}",
			 "{'replicatedJobs':["
			 "{'name':'launcher','template':{'spec':{'parallelism':1,'template':{'spec':"
			 "{'containers':[{'name':'sidecar'},{'name':'node'}]}}}}},"
			 "{'name':'node','template':{'spec':{'parallelism':2,'template':{'spec':"
			 ONE("node") "}}}}]}"));
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 2);
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.completions"), 2);
	assert_string_equal(tp_get_str(ex_kind(l, "ConfigMap"), "data.hostfile"),
			    "trainJob-node-0-0.trainJob slots=1\ntrainJob-node-0-1.trainJob slots=1\n");
	cJSON_Delete(l);
}

static void jobset_subdomain_used_in_endpoints(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("trainJob", NULL),
			  rt_of("{'mpi':{'mpiImplementation':'OpenMPI','runLauncherAsNode':true}}",
				"{'network':{'subdomain':'kubeflow.org'},'replicatedJobs':["
				JOB("launcher", "", ONE("node")) "," JOB("node", "", ONE("node")) "]}"));
	assert_string_equal(tp_get_str(ex_kind(l, "ConfigMap"), "data.hostfile"),
			    "trainJob-launcher-0-0.kubeflow.org slots=1\n"
			    "trainJob-node-0-0.kubeflow.org slots=1\n");
	cJSON_Delete(l);
}

static void jobset_parallelism_synced_by_name(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("trainJob", SETS("spec.trainer", "{'numNodes':5}")),
			  rt_of("",
				"{'replicatedJobs':["
				"{'name':'launcher','template':{'spec':{'parallelism':1,'completions':1,"
				"'template':{'spec':" ONE("node") "}}}},"
				"{'name':'node','template':{'metadata':{'labels':{" ANCESTOR ":'trainer'}},"
				"'spec':{'parallelism':2,'completions':2,'template':{'spec':" ONE("node")
				"}}}}]}"));
	assert_int_equal(ex_int(ex_job(l, "launcher"), "template.spec.parallelism"), 1);
	assert_int_equal(ex_int(ex_job(l, "launcher"), "template.spec.completions"), 1);
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 5);
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.completions"), 5);
	cJSON_Delete(l);
}

/* ================================================ TestValidate (27) */

#define INIT(members) "{" members "}"
static tp_result *validate_init(const char *spec, const char *initializer)
{
	return check(tj_of("test", SETS("spec.initializer", initializer)), NULL, rt_of("", spec), NULL,
		     TP_KIND_UNKNOWN);
}

static void v_no_initializer_job(void **state)
{
	(void)state;
	up_allowed(check(tj_of("test", NULL), NULL, rt_of("", "{}"), NULL, TP_KIND_UNKNOWN));
}

static void v_no_dataset_initializer_job(void **state)
{
	(void)state;
	up_allowed(validate_init("{}", "{}"));
}

#define RANDOM_JOB JOB("random", "", ONE("random"))

static void v_dataset_job_required(void **state)
{
	(void)state;
	up_denied(validate_init("{'replicatedJobs':[" RANDOM_JOB "]}", "{'dataset':{}}"),
		  "spec.runtimeRef", "must have dataset-initializer job when trainJob is configured "
				     "with input datasetConfig");
}

static void v_dataset_container_required(void **state)
{
	(void)state;
	up_denied(validate_init("{'replicatedJobs':[" JOB("dataset-initializer", "",
							       "{'containers':[]}") "]}",
				"{'dataset':{}}"),
		  "spec.runtimeRef",
		  "must have container with name - dataset-initializer in the dataset-initializer job");
}

static void v_no_model_initializer_job(void **state)
{
	(void)state;
	up_allowed(validate_init("{'replicatedJobs':[" JOB("dataset-initializer", "",
							   ONE("dataset-initializer")) "]}",
				 "{}"));
}

static void v_model_job_required(void **state)
{
	(void)state;
	up_denied(validate_init("{'replicatedJobs':[" RANDOM_JOB "]}", "{'model':{}}"),
		  "spec.runtimeRef", "must have model-initializer job when trainJob is configured "
				     "with input modelConfig");
}

static void v_model_container_required(void **state)
{
	(void)state;
	up_denied(validate_init("{'replicatedJobs':[" JOB("model-initializer", "",
							       "{'containers':[]}") "]}",
				"{'model':{}}"),
		  "spec.runtimeRef",
		  "must have container with name - model-initializer in the model-initializer job");
}

#define VCP "'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'initializer'}}]}],"
#define MOUNTED(c) "{'containers':[{'name':'" c "','volumeMounts':[{'name':'initializer'}]}]}"

static void v_dataset_with_claim_policies(void **state)
{
	(void)state;
	up_allowed(validate_init("{" VCP "'replicatedJobs':["
				 JOB("dataset-initializer", "", MOUNTED("dataset-initializer")) "]}",
				 "{'dataset':{}}"));
}

static void v_model_with_claim_policies(void **state)
{
	(void)state;
	up_allowed(validate_init("{" VCP "'replicatedJobs':["
				 JOB("model-initializer", "", MOUNTED("model-initializer")) "]}",
				 "{'model':{}}"));
}

static void v_both_initializers(void **state)
{
	(void)state;
	up_allowed(validate_init("{" VCP "'replicatedJobs':["
				 JOB("dataset-initializer", "", MOUNTED("dataset-initializer")) ","
				 JOB("model-initializer", "", MOUNTED("model-initializer")) "]}",
				 "{'dataset':{},'model':{}}"));
}

static void v_dataset_mount_required(void **state)
{
	(void)state;
	up_denied(validate_init("{'replicatedJobs':[" JOB("dataset-initializer", "",
							       ONE("dataset-initializer")) "]}",
				"{'dataset':{}}"),
		  "spec.runtimeRef", "must have volumeMount with name - initializer in container "
				     "dataset-initializer of the dataset-initializer job");
}

static void v_model_mount_required(void **state)
{
	(void)state;
	up_denied(validate_init("{'replicatedJobs':[" JOB("model-initializer", "",
							       ONE("model-initializer")) "]}",
				"{'model':{}}"),
		  "spec.runtimeRef", "must have volumeMount with name - initializer in container "
				     "model-initializer of the model-initializer job");
}

#define PATCH(job_patch)                                                                       \
	"[{'manager':'test.io/manager','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[" \
	job_patch "]}}}}]"
#define POD_PATCH(pod) "{'name':'node','template':{'spec':{'template':{'spec':" pod "}}}}"

static tp_result *with_patches(const char *spec, const char *patches)
{
	return check(tj_of("test", SETS("spec.runtimePatches", patches)), NULL, rt_of("", spec), NULL,
		     TP_KIND_UNKNOWN);
}

#define NODE_ONLY "{'replicatedJobs':[" JOB("node", "", ONE("node")) "]}"

static void v_patch_invalid_job(void **state)
{
	(void)state;
	up_denied(with_patches("{'replicatedJobs':[" JOB("node", "", "{'containers':[]}") "]}",
			       PATCH("{'name':'invalid'}")),
		  "spec.runtimePatches",
		  "must not have replicated job that doesn't exist in the runtime job template");
}

static void v_patch_invalid_init_container(void **state)
{
	(void)state;
	up_denied(with_patches("{'replicatedJobs':[" JOB("node", "", "{'initContainers':[{'name':"
								 "'custom-init'}]}") "]}",
			       PATCH(POD_PATCH("{'initContainers':[{'name':'invalid'}]}"))),
		  "spec.runtimePatches",
		  "must not have initContainer that doesn't exist in the runtime job node");
}

static void v_patch_invalid_container(void **state)
{
	(void)state;
	up_denied(with_patches(NODE_ONLY, PATCH(POD_PATCH("{'containers':[{'name':'invalid'}]}"))),
		  "spec.runtimePatches",
		  "must not have container that doesn't exist in the runtime job node");
}

static void v_patch_reserved_env(void **state)
{
	(void)state;
	up_denied(with_patches(NODE_ONLY,
			       PATCH(POD_PATCH("{'containers':[{'name':'node','env':[{'name':"
					       "'ENV_NAME','value':'OVERRIDE'}]}]}"))),
		  "spec.runtimePatches",
		  "must not have envs for the dataset-initializer, model-initializer, node containers");
}

#define SA(sa) PATCH(POD_PATCH("{'serviceAccountName':'" sa "'}"))

static void v_patch_on_create(void **state)
{
	(void)state;
	up_allowed(with_patches(NODE_ONLY, SA("service-account")));
}

/* UPDATE from old (suspend s_old, patches p_old) to new; js: the cluster's
 * JobSet "default/test" or NULL; failing: a kind the lookup cannot answer. */
static tp_result *update(const char *s_old, const char *p_old, const char *s_new,
			 const char *p_new, const char *spec, cJSON *js, tp_kind failing)
{
	cJSON *old = tj_of("test", SETS("spec.runtimePatches", p_old));
	cJSON *nw = tj_of("test", SETS("spec.runtimePatches", p_new));
	if (s_old)
		up_set(old, "spec.suspend", s_old);
	if (s_new)
		up_set(nw, "spec.suspend", s_new);
	return check(nw, old, rt_of("", spec), js, failing);
}

#define DS_NODE                                                                                \
	"{'replicatedJobs':[" JOB("dataset-initializer", "", ONE("dataset-initializer")) ","     \
	JOB("node", "", ONE("node")) "]}"

static cJSON *jobset_status(const char *statuses)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'jobset.x-k8s.io/v1alpha2','kind':'JobSet','metadata':{'name':'test',"
		 "'namespace':'default'},'status':{'replicatedJobsStatus':%s}}", statuses);
	return tt_jsq(buf);
}

#define PATCHES_PATH "spec.runtimePatches"

static void v_update_unchanged(void **state)
{
	(void)state;
	up_allowed(update(NULL, SA("service-account"), NULL, SA("service-account"), NODE_ONLY, NULL,
			  TP_KIND_UNKNOWN));
}

static void v_update_not_suspended(void **state)
{
	(void)state;
	up_denied(update("false", SA("service-account"), "false", SA("service-account-updated"),
			 NODE_ONLY, NULL, TP_KIND_UNKNOWN),
		  PATCHES_PATH, "RuntimePatches can only be modified when the TrainJob is suspended "
				"before or after the update");
}

static void v_update_suspended_no_jobset(void **state)
{
	(void)state;
	up_allowed(update("true", SA("service-account"), "true", SA("service-account-updated"),
			  NODE_ONLY, NULL, TP_KIND_UNKNOWN));
}

static void v_update_unsuspend_atomic(void **state)
{
	(void)state;
	up_allowed(update("true", SA("service-account"), "false",
			  PATCH(POD_PATCH("{'nodeSelector':{'injected':'by-kueue'}}")), NODE_ONLY, NULL,
			  TP_KIND_UNKNOWN));
}

static void v_update_suspend_atomic(void **state)
{
	(void)state;
	up_allowed(update("false", SA("service-account"), "true", SA("service-account-updated"),
			  NODE_ONLY, NULL, TP_KIND_UNKNOWN));
}

static void v_update_jobset_inactive(void **state)
{
	(void)state;
	up_allowed(update("true", SA("service-account"), "true", SA("service-account-updated"), DS_NODE,
			  jobset_status("[{'name':'dataset-initializer','active':0},"
					"{'name':'node','active':0}]"),
			  TP_KIND_UNKNOWN));
}

#define STILL_ACTIVE(job) "RuntimePatches cannot be modified when the JobSet's ReplicatedJob " job \
	" is still active"

static void v_update_jobset_active(void **state)
{
	(void)state;
	tp_result *r = update("true", SA("service-account"), "true", SA("service-account-updated"),
			      DS_NODE,
			      jobset_status("[{'name':'dataset-initializer','active':0},"
					    "{'name':'node','active':2}]"),
			      TP_KIND_UNKNOWN);
	assert_int_equal(tp_result_error_count(r), 1);
	assert_int_equal(tp_result_error_at(r, 0)->type, TP_FIELD_FORBIDDEN);
	up_denied(r, PATCHES_PATH, STILL_ACTIVE("node"));
}

static void v_update_suspend_atomic_active(void **state)
{
	(void)state;
	up_denied(update("false", SA("service-account"), "true", SA("service-account-updated"),
			 NODE_ONLY, jobset_status("[{'name':'node','active':2}]"), TP_KIND_UNKNOWN),
		  PATCHES_PATH, STILL_ACTIVE("node"));
}

static void v_update_multiple_active(void **state)
{
	(void)state;
	tp_result *r = update("true", SA("service-account"), "true", SA("service-account-updated"),
			      DS_NODE,
			      jobset_status("[{'name':'dataset-initializer','active':1},"
					    "{'name':'node','active':2}]"),
			      TP_KIND_UNKNOWN);
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, PATCHES_PATH, STILL_ACTIVE("dataset-initializer")));
	up_denied(r, PATCHES_PATH, STILL_ACTIVE("node"));
}

/* Upstream answers field.InternalError(spec.runtimePatches, err); here the
 * same Internal error at the same path, worded as every unanswered lookup
 * is, and the request undecided rather than denied. */
static void v_update_client_error(void **state)
{
	(void)state;
	tp_result *r = update("true", SA("service-account"), "true", SA("service-account-updated"),
			      NODE_ONLY, NULL, TP_KIND_JOBSET);
	assert_true(tp_result_unavailable(r));
	assert_int_equal(tp_result_error_at(r, 0)->type, TP_FIELD_INTERNAL);
	up_denied(r, PATCHES_PATH, "could not be looked up: client error");
}

/* ================================================ TestBuild (3 of 4) */

static void build_init_containers_synced(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("test-job", NULL),
			  rt_of("", "{'replicatedJobs':[" JOB("node", "",
							      "{'initContainers':[{'name':'preflight-check',"
							      "'image':'preflight:latest','command':['/bin/sh','-c'],"
							      "'env':[{'name':'PET_NNODES','value':'2'},{'name':"
							      "'PET_MASTER_ADDR','value':'test-job-node-0-0.test-job'}]}],"
							      "'containers':[{'name':'node','image':'pytorch:latest'}]}")
				"]}"));
	ex_assert_json(tp_get(ex_job(l, "node"), "template.spec.template.spec.initContainers"),
		       "[{'name':'preflight-check','image':'preflight:latest','command':['/bin/sh','-c'],"
		       "'env':[{'name':'PET_NNODES','value':'2'},{'name':'PET_MASTER_ADDR','value':"
		       "'test-job-node-0-0.test-job'}]}]");
	cJSON_Delete(l);
}

static void build_init_container_ports_mounts(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("test-job", NULL),
			  rt_of("", "{'replicatedJobs':[" JOB("node", "",
							      "{'initContainers':[{'name':'nccl-check','image':"
							      "'nccl-test:latest','command':['/nccl-test'],'ports':"
							      "[{'name':'http','containerPort':8080}],'volumeMounts':"
							      "[{'name':'mount','mountPath':'/data'}]}],"
							      "'containers':[{'name':'node','image':'train:latest'}]}")
				"]}"));
	ex_assert_json(tp_get(ex_job(l, "node"), "template.spec.template.spec.initContainers"),
		       "[{'name':'nccl-check','image':'nccl-test:latest','command':['/nccl-test'],"
		       "'ports':[{'name':'http','containerPort':8080}],'volumeMounts':"
		       "[{'name':'mount','mountPath':'/data'}]}]");
	cJSON_Delete(l);
}

static void build_multiple_init_containers(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("test-job", SETS("spec.trainer", "{'numNodes':3}")),
			  rt_of("", "{'replicatedJobs':[" LABELLED("node", "trainer", "",
								   "{'initContainers':[{'name':'driver-check',"
								   "'image':'driver:latest','command':"
								   "['/check-driver']},{'name':'nccl-check',"
								   "'image':'nccl:latest','command':"
								   "['/check-nccl']}],'containers':[{'name':"
								   "'node','image':'train:latest'}]}")
				"]}"));
	ex_assert_json(tp_get(ex_job(l, "node"), "template.spec.template.spec.initContainers"),
		       "[{'name':'driver-check','image':'driver:latest','command':['/check-driver']},"
		       "{'name':'nccl-check','image':'nccl:latest','command':['/check-nccl']}]");
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 3);
	cJSON_Delete(l);
}

/* ================================================ builder_test.go (21) */

/* makeJobSet(ancestor, container, replicas, job) as a runtime template. */
static cJSON *made(const char *ancestor, const char *container, int replicas, const char *job)
{
	char spec[1024];
	snprintf(spec, sizeof(spec),
		 "{'replicatedJobs':[{'name':'%s','replicas':%d,'template':{'metadata':{'labels':{"
		 ANCESTOR ":'%s'}},'spec':{'template':{'spec':{'containers':[{'name':'%s'}]}}}}}]}",
		 job, replicas, ancestor, container);
	return rt_of("", spec);
}

static const cJSON *first_job(const cJSON *list)
{
	return cJSON_GetArrayItem(tp_get(ex_item(list, 0), "spec.replicatedJobs"), 0);
}

static const cJSON *first_container(const cJSON *list)
{
	return cJSON_GetArrayItem(tp_get(first_job(list), "template.spec.template.spec.containers"),
				  0);
}

static void bi_dataset_uri_and_secret(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", SETS("spec.initializer",
					  "{'dataset':{'storageUri':'hf://my-org/my-dataset',"
					  "'secretRef':{'name':'hf-token-secret'}}}")),
			  made("dataset-initializer", "dataset-initializer", 3, "initializer-job"));
	ex_assert_json(tp_get(first_container(l), "env"),
		       "[{'name':'STORAGE_URI','value':'hf://my-org/my-dataset'}]");
	ex_assert_json(tp_get(first_container(l), "envFrom"),
		       "[{'secretRef':{'name':'hf-token-secret'}}]");
	assert_int_equal(ex_int(first_job(l), "replicas"), 1);
	cJSON_Delete(l);
}

static void bi_model_uri_and_secret(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", SETS("spec.initializer",
					  "{'model':{'storageUri':'hf://meta-llama/Llama-3',"
					  "'secretRef':{'name':'model-secret'}}}")),
			  made("model-initializer", "model-initializer", 2, "initializer-job"));
	ex_assert_json(tp_get(first_container(l), "env"),
		       "[{'name':'STORAGE_URI','value':'hf://meta-llama/Llama-3'}]");
	ex_assert_json(tp_get(first_container(l), "envFrom"), "[{'secretRef':{'name':'model-secret'}}]");
	assert_int_equal(ex_int(first_job(l), "replicas"), 1);
	cJSON_Delete(l);
}

static void bi_dataset_env_merge(void **state)
{
	(void)state;
	cJSON *rt = made("dataset-initializer", "dataset-initializer", 3, "initializer-job");
	up_env(rt, "initializer-job", "dataset-initializer",
	       "[{'name':'PRE_EXISTING','value':'from-runtime-template'},"
	       "{'name':'OTHER','value':'keep-me'}]");
	cJSON *l = expand(tj_of("t", SETS("spec.initializer",
					  "{'dataset':{'storageUri':'hf://my-org/my-dataset','env':["
					  "{'name':'CUSTOM_FROM_USER','value':'user-value'},"
					  "{'name':'PRE_EXISTING','value':'overridden-by-trainjob'}]}}")),
			  rt);
	ex_assert_json(tp_get(first_container(l), "env"),
		       "[{'name':'PRE_EXISTING','value':'overridden-by-trainjob'},"
		       "{'name':'OTHER','value':'keep-me'},"
		       "{'name':'STORAGE_URI','value':'hf://my-org/my-dataset'},"
		       "{'name':'CUSTOM_FROM_USER','value':'user-value'}]");
	cJSON_Delete(l);
}

static void bi_dataset_uri_only(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", SETS("spec.initializer",
					  "{'dataset':{'storageUri':'s3://bucket/dataset'}}")),
			  made("dataset-initializer", "dataset-initializer", 2, "initializer-job"));
	ex_assert_json(tp_get(first_container(l), "env"),
		       "[{'name':'STORAGE_URI','value':'s3://bucket/dataset'}]");
	assert_null(tp_get(first_container(l), "envFrom"));
	cJSON_Delete(l);
}

static void bi_nil_initializer_replicas(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", NULL),
			  made("dataset-initializer", "dataset-initializer", 3, "initializer-job"));
	assert_int_equal(ex_int(first_job(l), "replicas"), 1);
	assert_null(tp_get(first_container(l), "env"));
	cJSON_Delete(l);
}

static void bi_no_ancestor_unchanged(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", SETS("spec.initializer", "{'dataset':{'storageUri':'hf://dataset'}}")),
			  rt_of("", "{'replicatedJobs':[{'name':'worker','replicas':4,'template':{'spec':"
				    "{'template':{'spec':" ONE("some-container") "}}}}]}"));
	assert_int_equal(ex_int(first_job(l), "replicas"), 4);
	ex_assert_json(first_container(l), "{'name':'some-container'}");
	cJSON_Delete(l);
}

static void bt_image_command_args(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", SETS("spec.trainer",
					  "{'image':'docker.io/my-org/train:latest','command':"
					  "['torchrun','--nproc_per_node=4'],'args':['train.py',"
					  "'--epochs=10']}")),
			  made("trainer", "node", 4, "node"));
	const cJSON *c = first_container(l);
	assert_string_equal(tp_get_str(c, "image"), "docker.io/my-org/train:latest");
	ex_assert_json(tp_get(c, "command"), "['torchrun','--nproc_per_node=4']");
	ex_assert_json(tp_get(c, "args"), "['train.py','--epochs=10']");
	assert_int_equal(ex_int(first_job(l), "replicas"), 1);
	cJSON_Delete(l);
}

static void bt_env_merge(void **state)
{
	(void)state;
	cJSON *rt = made("trainer", "node", 4, "node");
	up_env(rt, "node", "node",
	       "[{'name':'FROM_TEMPLATE','value':'template-value'},"
	       "{'name':'OVERRIDE_ME','value':'old-value'}]");
	cJSON *l = expand(tj_of("t", SETS("spec.trainer", "{'env':[{'name':'OVERRIDE_ME','value':"
							  "'new-value'},{'name':'NEW_FROM_TRAINER',"
							  "'value':'trainer-value'}]}")),
			  rt);
	ex_assert_json(tp_get(first_container(l), "env"),
		       "[{'name':'FROM_TEMPLATE','value':'template-value'},"
		       "{'name':'OVERRIDE_ME','value':'new-value'},"
		       "{'name':'NEW_FROM_TRAINER','value':'trainer-value'}]");
	cJSON_Delete(l);
}

/* Upstream's builder leaves resourcesPerNode to the runtime info, which
 * merges it once: the container ends with the merged resources, once. */
static void bt_resources_left_to_runtime(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", SETS("spec.trainer", "{'resourcesPerNode':{'limits':"
							  "{'nvidia.com/gpu':'2'}}}")),
			  made("trainer", "node", 4, "node"));
	ex_assert_json(tp_get(first_container(l), "resources"), "{'limits':{'nvidia.com/gpu':'2'}}");
	cJSON_Delete(l);
}

static void bt_nil_trainer_replicas(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", NULL), made("trainer", "node", 3, "node"));
	assert_int_equal(ex_int(first_job(l), "replicas"), 1);
	ex_assert_json(first_container(l), "{'name':'node'}");
	cJSON_Delete(l);
}

static void bt_mpi_launcher_as_node_once(void **state)
{
	(void)state;
	cJSON *rt = made("trainer", "node", 3, "node");
	up_set(rt, "spec.mlPolicy", "{'mpi':{'runLauncherAsNode':true}}");
	up_env(rt, "node", "node",
	       "[{'name':'FROM_MPI_TEMPLATE','value':'mpi-template'},"
	       "{'name':'CLASH_KEY','value':'from-template'}]");
	cJSON *l = expand(tj_of("t", SETS("spec.trainer",
					  "{'image':'registry.example/train:combined','command':['mpirun'],"
					  "'env':[{'name':'CLASH_KEY','value':'from-trainer'},"
					  "{'name':'EXTRA_MPI_ENV','value':'present-once'}],"
					  "'resourcesPerNode':{'limits':{'memory':'48Gi'}}}")),
			  rt);
	const cJSON *c = first_container(l);
	assert_string_equal(tp_get_str(c, "image"), "registry.example/train:combined");
	ex_assert_json(tp_get(c, "command"), "['mpirun']");
	/* the trainer's env once, over the template's, before MPI's own */
	ex_assert_env_names(c, "FROM_MPI_TEMPLATE,CLASH_KEY,EXTRA_MPI_ENV");
	assert_string_equal(ex_env(c, "CLASH_KEY"), "from-trainer");
	ex_assert_json(tp_get(c, "resources"), "{'limits':{'memory':'48Gi'}}");
	cJSON_Delete(l);
}

static void bt_non_trainer_untouched(void **state)
{
	(void)state;
	cJSON *l = expand(tj_of("t", SETS("spec.trainer", "{'image':'should-not-be-applied',"
							  "'command':['should-not-be-applied']}")),
			  made("dataset-initializer", "node", 2, "node"));
	ex_assert_json(first_container(l), "{'name':'node'}");
	cJSON_Delete(l);
}

static void bt_mpi_resources_to_node(void **state)
{
	(void)state;
	cJSON *rt = rt_of("{'mpi':{'runLauncherAsNode':true}}",
			  "{'replicatedJobs':[{'name':'node','replicas':2,'template':{'metadata':"
			  "{'labels':{}},'spec':{'template':{'spec':" ONE("node") "}}}}]}");
	cJSON *l = expand(tj_of("t", SETS("spec.trainer", "{'resourcesPerNode':{'limits':"
							  "{'memory':'32Gi'}}}")),
			  rt);
	ex_assert_json(tp_get(first_container(l), "resources"), "{'limits':{'memory':'32Gi'}}");
	assert_int_equal(ex_int(first_job(l), "replicas"), 2);
	cJSON_Delete(l);
}

static void bt_mpi_env_to_node(void **state)
{
	(void)state;
	cJSON *rt = rt_of("{'mpi':{'runLauncherAsNode':true}}",
			  "{'replicatedJobs':[{'name':'node','replicas':2,'template':{'metadata':"
			  "{'labels':{}},'spec':{'template':{'spec':{'containers':[{'name':'node','env':"
			  "[{'name':'MPI_RANK_FILE','value':'/etc/mpi/rank'}]}]}}}}}]}");
	cJSON *l = expand(tj_of("t", SETS("spec.trainer", "{'env':[{'name':'WORLD_SIZE_OVERRIDE',"
							  "'value':'8'}]}")),
			  rt);
	const cJSON *c = first_container(l);
	assert_string_equal(ex_env(c, "MPI_RANK_FILE"), "/etc/mpi/rank");
	assert_string_equal(ex_env(c, "WORLD_SIZE_OVERRIDE"), "8");
	cJSON_Delete(l);
}

/* PodLabels / PodAnnotations: the schedulers' pod metadata on every job. */
static void check_every_pod(const char *jobs, const char *map, const char *key, const char *value)
{
	cJSON *rt = rt_of("", jobs);
	up_set(rt, "spec.podGroupPolicy", "{'coscheduling':{}}");
	cJSON *l = expand(tj_of("t", NULL), rt);
	const cJSON *j;
	int n = 0;
	cJSON_ArrayForEach(j, tp_get(ex_item(l, 0), "spec.replicatedJobs")) {
		assert_string_equal(ex_key_str(j, map, key), value);
		n++;
	}
	assert_true(n >= 1);
	cJSON_Delete(l);
}

#define WORKER JOB("worker", "", ONE("w"))
#define LAUNCHER JOB("launcher", "", ONE("l"))

static void bl_labels_one(void **state)
{
	(void)state;
	check_every_pod("{'replicatedJobs':[" WORKER "]}", "template.spec.template.metadata.labels",
			"scheduling.x-k8s.io/pod-group", "t");
}

static void bl_labels_many(void **state)
{
	(void)state;
	check_every_pod("{'replicatedJobs':[" WORKER "," LAUNCHER "]}",
			"template.spec.template.metadata.labels", "scheduling.x-k8s.io/pod-group", "t");
}

static void check_every_annotation(const char *jobs)
{
	cJSON *rt = rt_of("", jobs);
	up_set(rt, "spec.podGroupPolicy", "{'volcano':{}}");
	cJSON *l = expand(tj_of("t", NULL), rt);
	const cJSON *j;
	cJSON_ArrayForEach(j, tp_get(ex_item(l, 0), "spec.replicatedJobs"))
		assert_string_equal(ex_key_str(j, "template.spec.template.metadata.annotations",
					       "scheduling.k8s.io/group-name"), "t");
	cJSON_Delete(l);
}

static void ba_annotations_one(void **state)
{
	(void)state;
	check_every_annotation("{'replicatedJobs':[" WORKER "]}");
}

static void ba_annotations_many(void **state)
{
	(void)state;
	check_every_annotation("{'replicatedJobs':[" WORKER "," LAUNCHER "]}");
}

/* Suspend: the TrainJob's spec.suspend, over the template's. */
static void suspend_is(const char *tj_suspend, const char *rt_suspend, bool want)
{
	cJSON *rt = rt_of("", "{'replicatedJobs':[" WORKER "]}");
	if (rt_suspend)
		up_set(rt, "spec.template.spec.suspend", rt_suspend);
	cJSON *l = expand(tj_of("t", tj_suspend ? SETS("spec.suspend", tj_suspend) : NULL), rt);
	const cJSON *s = tp_get(ex_item(l, 0), "spec.suspend");
	assert_true(cJSON_IsBool(s));
	assert_int_equal(cJSON_IsTrue(s), want);
	cJSON_Delete(l);
}

static void bs_true(void **state)
{
	(void)state;
	suspend_is("true", NULL, true);
}

static void bs_false(void **state)
{
	(void)state;
	suspend_is("false", NULL, false);
}

/* Upstream's builder writes a nil suspend as nil; a TrainJob never has
 * one in a cluster (its CRD defaults suspend to false), and the expansion
 * writes that default, over the template's true. */
static void bs_nil(void **state)
{
	(void)state;
	suspend_is(NULL, "true", false);
}

int main(void)
{
	tp_json_init();
	static const up_case cases[] = {
		UP_CASE("TestJobSet/trainer numNodes is respected rather than parallelism when "
			"replicatedJob name is node", jobset_node_count_rather_than_parallelism),
		UP_CASE("TestJobSet/subDomain in jobSetSpec is used to endpoint",
			jobset_subdomain_used_in_endpoints),
		UP_CASE("TestJobSet/parallelism and completions are synced for multiple podSets matched "
			"by replicatedJob name", jobset_parallelism_synced_by_name),
		UP_CASE("TestValidate/no initializer job", v_no_initializer_job),
		UP_CASE("TestValidate/no dataset initializer job", v_no_dataset_initializer_job),
		UP_CASE("TestValidate/must have dataset initializer job when trainJob is configured with "
			"input datasetConfig", v_dataset_job_required),
		UP_CASE("TestValidate/must have container with name - dataset initializer in the dataset "
			"initializer job", v_dataset_container_required),
		UP_CASE("TestValidate/no model initializer job", v_no_model_initializer_job),
		UP_CASE("TestValidate/must have model initializer job when trainJob is configured with "
			"input modelConfig", v_model_job_required),
		UP_CASE("TestValidate/must have container with name - model initializer in the model "
			"initializer job", v_model_container_required),
		UP_CASE("TestValidate/valid dataset initializer with volumeClaimPolicies and volumeMount "
			"passes", v_dataset_with_claim_policies),
		UP_CASE("TestValidate/valid model initializer with volumeClaimPolicies and volumeMount "
			"passes", v_model_with_claim_policies),
		UP_CASE("TestValidate/valid dataset and model initializers together pass",
			v_both_initializers),
		UP_CASE("TestValidate/must have volumeMount with name - initializer in the dataset "
			"initializer container", v_dataset_mount_required),
		UP_CASE("TestValidate/must have volumeMount with name - initializer in the model "
			"initializer container", v_model_mount_required),
		UP_CASE("TestValidate/runtimePatches contain invalid replicated job", v_patch_invalid_job),
		UP_CASE("TestValidate/runtimePatches contain invalid initContainer",
			v_patch_invalid_init_container),
		UP_CASE("TestValidate/runtimePatches contain invalid container", v_patch_invalid_container),
		UP_CASE("TestValidate/runtimePatches contain envs for reserved container",
			v_patch_reserved_env),
		UP_CASE("TestValidate/allow runtimePatches when creating a new trainJob", v_patch_on_create),
		UP_CASE("TestValidate/allow updates to trainJob with no changes to runtimePatches",
			v_update_unchanged),
		UP_CASE("TestValidate/forbid changes to runtimePatches when trainJob is not suspended",
			v_update_not_suspended),
		UP_CASE("TestValidate/allow changes to runtimePatches when trainJob is suspended and "
			"jobSet does not exist", v_update_suspended_no_jobset),
		UP_CASE("TestValidate/allow atomic update: modify runtimePatches and unsuspend trainJob in "
			"a single request", v_update_unsuspend_atomic),
		UP_CASE("TestValidate/allow atomic update: modify runtimePatches and suspend trainJob in a "
			"single request", v_update_suspend_atomic),
		UP_CASE("TestValidate/allow changes to runtimePatches when trainJob is suspended and "
			"jobSet exists but is inactive", v_update_jobset_inactive),
		UP_CASE("TestValidate/forbid changes to runtimePatches when trainJob is suspended but "
			"jobSet has an active replicatedJob", v_update_jobset_active),
		UP_CASE("TestValidate/forbid atomic update: suspending trainJob with runtimePatches change "
			"is rejected when jobSet has an active replicatedJob",
			v_update_suspend_atomic_active),
		UP_CASE("TestValidate/forbid changes to runtimePatches when trainJob is suspended but has "
			"multiple active replicatedJobs", v_update_multiple_active),
		UP_CASE("TestValidate/forbid changes to runtimePatches when trainJob is suspended but "
			"jobSet cannot be checked due to a client error", v_update_client_error),
		UP_CASE("TestBuild/init containers synced to JobSet replicated jobs",
			build_init_containers_synced),
		UP_CASE("TestBuild/init container with ports and volume mounts synced",
			build_init_container_ports_mounts),
		UP_CASE("TestBuild/multiple init containers synced", build_multiple_init_containers),
		UP_CASE("TestBuilderInitializer/dataset initializer with storageUri and secretRef",
			bi_dataset_uri_and_secret),
		UP_CASE("TestBuilderInitializer/model initializer with storageUri and secretRef",
			bi_model_uri_and_secret),
		UP_CASE("TestBuilderInitializer/dataset initializer merges Dataset.Env with storageUri and "
			"upserts pre-existing container env", bi_dataset_env_merge),
		UP_CASE("TestBuilderInitializer/dataset initializer without secretRef only injects "
			"storageUri", bi_dataset_uri_only),
		UP_CASE("TestBuilderInitializer/dataset initializer ancestor with nil Initializer spec "
			"sets replicas to 1", bi_nil_initializer_replicas),
		UP_CASE("TestBuilderInitializer/no ancestor label skips modification",
			bi_no_ancestor_unchanged),
		UP_CASE("TestBuilderTrainer/trainer ancestor with image command and args",
			bt_image_command_args),
		UP_CASE("TestBuilderTrainer/trainer ancestor merges Trainer.Env and upserts duplicate "
			"container env keys", bt_env_merge),
		UP_CASE("TestBuilderTrainer/trainer ancestor with resourcesPerNode leaves merge to "
			"trainingruntime", bt_resources_left_to_runtime),
		UP_CASE("TestBuilderTrainer/trainer ancestor with nil Trainer spec sets replicas to 1",
			bt_nil_trainer_replicas),
		UP_CASE("TestBuilderTrainer/trainer ancestor with MPI runLauncherAsNode composes trainer "
			"fields without duplication", bt_mpi_launcher_as_node_once),
		UP_CASE("TestBuilderTrainer/non-trainer ancestor is not modified", bt_non_trainer_untouched),
		UP_CASE("TestBuilderTrainer/MPI runLauncherAsNode applies resources to node job",
			bt_mpi_resources_to_node),
		UP_CASE("TestBuilderTrainer/MPI runLauncherAsNode injects Trainer.Env into node container",
			bt_mpi_env_to_node),
		UP_CASE("TestBuilderPodLabels/labels applied to all replicated jobs", bl_labels_one),
		UP_CASE("TestBuilderPodLabels/labels applied to every replicated job pod template when "
			"multiple replicated jobs exist", bl_labels_many),
		UP_CASE("TestBuilderPodAnnotations/annotations applied to all replicated jobs",
			ba_annotations_one),
		UP_CASE("TestBuilderPodAnnotations/annotations applied to every replicated job pod template "
			"when multiple replicated jobs exist", ba_annotations_many),
		UP_CASE("TestBuilderSuspend/suspend set to true", bs_true),
		UP_CASE("TestBuilderSuspend/suspend set to false", bs_false),
		UP_CASE("TestBuilderSuspend/suspend set to nil leaves field unset", bs_nil),
	};
	return UP_RUN("upstream jobset plugin", cases);
}

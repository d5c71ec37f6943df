/*
 * test_pod_trainjob.c — the strict profile's look ahead at the Jobs and
 * Pods a TrainJob becomes (policy/pod/trainjob.c, trainjob_security.c) and
 * at a runtime's own Pods (policy/pod/runtime.c): where each finding is
 * shown (the TrainJob field that caused it, the runtime's path, the
 * runtimePatches), the namespace's Pod Security labels in each mode, a
 * namespace that cannot be read, and the kubeflow profile left as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

#define SP TP_PROFILE_STRICT
#define KF TP_PROFILE_KUBEFLOW

/* A ClusterTrainingRuntime "rt" with mlPolicy ml, jobs before its trainer
 * job (each "{...}," or ""), and one trainer job "node" whose Pod spec is
 * pod (single-quoted JSON). */
static cJSON *runtime_of(const char *ml, const char *jobs, const char *pod)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':%s,'template':{'spec':{'replicatedJobs':"
		 "[%s{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':%s}}}}]}}}}",
		 ml, jobs, pod);
	return tt_jsq(buf);
}

static cJSON *runtime_with(const char *pod)
{
	return runtime_of("{'numNodes':1,'torch':{}}", "", pod);
}

#define GOOD_POD "{'containers':[{'name':'node','image':'pytorch'}]}"

/* TrainJob team-a/train of "rt" with spec.trainer (single-quoted JSON, or
 * NULL) and more spec members. */
static cJSON *trainjob(const char *trainer, const char *more)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'train','namespace':'team-a'},'spec':{'runtimeRef':{'name':'rt'}%s%s%s%s}}",
		 trainer ? ",'trainer':" : "", trainer ? trainer : "", more ? "," : "",
		 more ? more : "");
	return tt_jsq(buf);
}

/* The cluster a test sees: a store, and a lookup that cannot read
 * Namespaces when namespaces_down is set. */
struct cluster {
	tp_store *store;
	bool namespaces_down;
};

static int cluster_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		       char *why, size_t whylen)
{
	struct cluster *c = ctx;
	if (k == TP_KIND_NAMESPACE && c->namespaces_down) {
		snprintf(why, whylen, "GET /api/v1/namespaces/%s: HTTP 403: namespaces is forbidden",
			 name);
		return TP_EUNAVAILABLE;
	}
	*out = tp_store_get(c->store, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

static tp_result *review(tp_profile p, cJSON *rt, cJSON *ns, cJSON *tj, struct cluster *c,
			 const char *pod_security)
{
	struct cluster own = { NULL, false };
	if (!c)
		c = &own;
	assert_int_equal(tp_store_new(&c->store), TP_OK);
	assert_int_equal(tp_store_put(c->store, rt), TP_OK);
	if (ns)
		assert_int_equal(tp_store_put(c->store, ns), TP_OK);
	tp_lookup lookup = { cluster_get, NULL, c };
	tp_options opt = { .profile = p, .lookup = &lookup, .pod_security = pod_security };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, res), TP_OK);
	tt_dump(res);
	tp_store_free(c->store);
	cJSON_Delete(tj);
	return res;
}

static const tp_field_error *only_error(const tp_result *r)
{
	if (tp_result_error_count(r) != 1)
		fail_msg("%zu errors, want 1", tp_result_error_count(r));
	return tp_result_error_at(r, 0);
}

static void text_is(const tp_field_error *e, const char *want)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_field_error_format(e, &b), TP_OK);
	assert_string_equal(b.data, want);
	tp_buf_free(&b);
}

/* ------------------------------------------------------- attribution */

/* kubeflow/trainer#2363: a GPU request without a limit is refused when the
 * Job is created; here at the TrainJob field that asked for it. */
static void gpu_request_without_limit_at_the_trainjob(void **state)
{
	(void)state;
	tp_result *r = review(SP, runtime_with(GOOD_POD), NULL,
			      trainjob("{'resourcesPerNode':{'requests':{'nvidia.com/gpu':2}}}", NULL),
			      NULL, NULL);
	text_is(only_error(r),
		"spec.trainer.resourcesPerNode.limits: Required value: Limit must be set for non "
		"overcommitable resources: Job.batch \"train-node-0\" would be invalid at "
		"spec.template.spec.containers[0].resources.limits (replicated job \"node\", container "
		"\"node\"); set limits[nvidia.com/gpu] to 2, equal to its request");
	tp_result_free(r);
	/* the same TrainJob, upstream's answer: nothing to say */
	r = review(KF, runtime_with(GOOD_POD), NULL,
		   trainjob("{'resourcesPerNode':{'requests':{'nvidia.com/gpu':2}}}", NULL), NULL, NULL);
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 0);
	tp_result_free(r);
}

/* The TrainJob's request over the runtime's limit: the request is the
 * TrainJob's doing, the API server reports it at requests. */
static void request_over_the_runtimes_limit(void **state)
{
	(void)state;
	tp_result *r = review(SP,
			      runtime_with("{'containers':[{'name':'node','image':'pytorch','resources':"
					   "{'limits':{'cpu':'2'}}}]}"),
			      NULL, trainjob("{'resourcesPerNode':{'requests':{'cpu':4}}}", NULL), NULL,
			      NULL);
	text_is(only_error(r),
		"spec.trainer.resourcesPerNode.requests: Invalid value: \"4\": must be less than or "
		"equal to cpu limit of 2: Job.batch \"train-node-0\" would be invalid at "
		"spec.template.spec.containers[0].resources.requests (replicated job \"node\", container "
		"\"node\"); request at most 2 of cpu, or raise its limit");
	tp_result_free(r);
}

/* A mount of a volume the runtime does not define: every TrainJob of it is
 * refused at the runtime's path, and the runtime itself is. */
static void runtime_mount_of_a_missing_volume(void **state)
{
	(void)state;
	const char *pod = "{'containers':[{'name':'node','image':'pytorch','volumeMounts':"
			  "[{'name':'data','mountPath':'/data'}]}]}";
	tp_result *r = review(SP, runtime_with(pod), NULL, trainjob(NULL, NULL), NULL, NULL);
	text_is(only_error(r),
		"spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]."
		"volumeMounts[0].name: Not found: \"data\": in ClusterTrainingRuntime \"rt\" (replicated "
		"job \"node\", container \"node\"), so Job.batch \"train-node-0\" would be invalid; add a "
		"volume named \"data\" to the Pod template's volumes, or mount one it defines");
	tp_result_free(r);

	cJSON *rt = runtime_with(pod);
	tp_options opt = { .profile = SP };
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	text_is(only_error(r),
		"spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]."
		"volumeMounts[0].name: Not found: \"data\": the Job.batch of every TrainJob would be "
		"invalid (replicated job \"node\", container \"node\"); add a volume named \"data\" to the "
		"Pod template's volumes, or mount one it defines");
	tp_result_clear(r);
	opt.profile = KF;
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	cJSON_Delete(rt);
}

/* JobSet's volumeClaimPolicies give the Pods volumes the template does not
 * list: a policy without targets to every replicated job, one with
 * targetReplicatedJobs to those only (pod/claims.c). */
static void claim_templates_are_volumes(void **state)
{
	(void)state;
	cJSON *rt = tt_jsq(
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		"'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		"'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{"
		"'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'shared'}}]},"
		"{'targetReplicatedJobs':['prep'],'templates':[{'metadata':{'name':'scratch'}}]}],"
		"'replicatedJobs':[{'name':'prep','template':{'spec':{'template':{'spec':"
		"{'containers':[{'name':'prep','image':'i','volumeMounts':[{'name':'shared',"
		"'mountPath':'/s'},{'name':'scratch','mountPath':'/t'}]}]}}}}},"
		"{'name':'node','template':{'metadata':{'labels':"
		"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		"{'spec':{'containers':[{'name':'node','image':'i','volumeMounts':[{'name':'shared',"
		"'mountPath':'/s'},{'name':'scratch','mountPath':'/t'}]}]}}}}}]}}}}");
	tp_options opt = { .profile = SP };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	tt_dump(r);
	const tp_field_error *e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_NOT_FOUND);
	assert_string_equal(e->path, "spec.template.spec.replicatedJobs[1].template.spec.template."
				     "spec.containers[0].volumeMounts[1].name");
	assert_string_equal(e->value, "\"scratch\"");
	tp_result_free(r);
	cJSON_Delete(rt);
}

/* A runtime memory request over its own limit: the runtime is refused at
 * its field (issue 24, "Runtimes too"). */
static void runtime_memory_request_over_its_limit(void **state)
{
	(void)state;
	cJSON *rt = runtime_with("{'containers':[{'name':'node','image':'pytorch','resources':"
				 "{'requests':{'memory':'8Gi'},'limits':{'memory':'4Gi'}}}]}");
	tp_options opt = { .profile = SP };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_UPDATE, rt, rt, r), TP_OK);
	assert_true(tt_has_error(r, "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
				 "containers[0].resources.requests",
				 "must be less than or equal to memory limit of 4Gi"));
	tp_result_free(r);
	cJSON_Delete(rt);
}

/* The trainer's image may be left to the TrainJob: the runtime passes, a
 * TrainJob that gives one passes, one that does not is told to. */
static void image_left_to_the_trainjob(void **state)
{
	(void)state;
	const char *pod = "{'containers':[{'name':'node'}]}";
	cJSON *rt = runtime_with(pod);
	tp_options opt = { .profile = SP };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	cJSON_Delete(rt);
	r = review(SP, runtime_with(pod), NULL, trainjob("{'image':'my/train:1'}", NULL), NULL, NULL);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review(SP, runtime_with(pod), NULL, trainjob(NULL, NULL), NULL, NULL);
	assert_true(tt_has_error(r, "spec.trainer.image",
				 "ClusterTrainingRuntime \"rt\" leaves the image of the trainer's Pods"));
	tp_result_free(r);
}

/* A finding the TrainJob's runtimePatches bring in is shown there. */
static void finding_of_the_runtime_patches(void **state)
{
	(void)state;
	tp_result *r = review(
		SP, runtime_with(GOOD_POD), NULL,
		trainjob(NULL, "'runtimePatches':[{'manager':'kueue.x-k8s.io/m','trainingRuntimeSpec':"
			       "{'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':"
			       "{'template':{'spec':{'containers':[{'name':'node','ports':"
			       "[{'containerPort':70000}]}]}}}}}]}}}}]"),
		NULL, NULL);
	const tp_field_error *e = only_error(r);
	assert_string_equal(e->path, "spec.runtimePatches");
	assert_string_equal(e->value, "70000");
	assert_non_null(strstr(e->detail, "must be between 1 and 65535, inclusive: the patched "
					  "template makes Job.batch \"train-node-0\" invalid at "
					  "spec.template.spec.containers[0].ports[0].containerPort"));
	tp_result_free(r);
}

/* Env names are checked where the TrainJob holds them. */
/* runtime_with(GOOD_POD) and a dataset-initializer job. */
static cJSON *runtime_with_initializer(void)
{
	cJSON *rt = runtime_with(GOOD_POD);
	cJSON *jobs = (cJSON *)tp_get_array(rt, "spec.template.spec.replicatedJobs");
	cJSON_AddItemToArray(jobs, tt_jsq("{'name':'dataset-initializer','template':{'metadata':"
					  "{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':"
					  "'dataset-initializer'}},'spec':{'template':{'spec':"
					  "{'containers':[{'name':'dataset-initializer','image':'i',"
					  "'volumeMounts':[{'name':'initializer','mountPath':'/w'}]}],"
					  "'volumes':[{'name':'initializer','emptyDir':{}}]}}}}}"));
	return rt;
}

static void trainer_and_initializer_env(void **state)
{
	(void)state;
	tp_result *r = review(SP, runtime_with(GOOD_POD), NULL,
			      trainjob("{'env':[{'name':'A=B','value':'x'}]}", NULL), NULL, NULL);
	assert_true(tt_has_error(r, "spec.trainer.env", "a valid environment variable name must "
				 "consist only of printable ASCII characters other than '='"));
	assert_int_equal(tp_result_error_count(r), 1);
	tp_result_free(r);
	r = review(SP, runtime_with_initializer(), NULL,
		   trainjob(NULL, "'initializer':{'dataset':{'env':[{'name':'X=1'}]}}"), NULL, NULL);
	assert_true(tt_has_error(r, "spec.initializer.dataset.env[0].name",
				 "the dataset-initializer's Pods would be invalid"));
	assert_int_equal(tp_result_error_count(r), 1);
	tp_result_free(r);
}

/* The initializer's secretRef becomes an envFrom of its Pods: a Secret's
 * name, which the API server checks there. */
static void initializer_secret_name(void **state)
{
	(void)state;
	tp_result *r = review(SP, runtime_with_initializer(), NULL,
			      trainjob(NULL, "'initializer':{'dataset':{'storageUri':'hf://x',"
					     "'secretRef':{'name':'HF_Token'}}}"),
			      NULL, NULL);
	text_is(only_error(r),
		"spec.initializer.dataset.secretRef.name: Invalid value: \"HF_Token\": a lowercase RFC "
		"1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
		"must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
		"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'): "
		"the dataset-initializer's Pods would be invalid; use the Secret's name");
	tp_result_free(r);
	r = review(SP, runtime_with_initializer(), NULL,
		   trainjob(NULL, "'initializer':{'dataset':{'secretRef':{'name':'hf-token'}}}"), NULL,
		   NULL);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* ------------------------------------------------------- Pod Security */

static cJSON *ns_with(const char *labels)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team-a',"
				   "'labels':%s}}", labels);
	return tt_jsq(buf);
}

static void enforce_restricted_denies(void **state)
{
	(void)state;
	tp_result *r = review(SP, runtime_with(GOOD_POD),
			      ns_with("{'pod-security.kubernetes.io/enforce':'restricted'}"),
			      trainjob(NULL, NULL), NULL, NULL);
	const tp_field_error *e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_FORBIDDEN);
	assert_string_equal(e->path, "metadata.namespace");
	assert_non_null(strstr(
		e->detail, "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != "
			   "false (container \"node\" must set securityContext.allowPrivilegeEscalation"
			   "=false), unrestricted capabilities (container \"node\" must set "
			   "securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or "
			   "container \"node\" must set securityContext.runAsNonRoot=true), "
			   "seccompProfile (pod or container \"node\" must set "
			   "securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"): "
			   "Pods of replicated job \"node\" (Job.batch \"train-node-0\") would be "
			   "forbidden in namespace \"team-a\""));
	/* enforce denies: no warning on top, as pod-security-admission */
	assert_int_equal(tp_result_warning_count(r), 0);
	tp_result_free(r);
	/* the kubeflow profile does not look */
	r = review(KF, runtime_with(GOOD_POD),
		   ns_with("{'pod-security.kubernetes.io/enforce':'restricted'}"), trainjob(NULL, NULL),
		   NULL, NULL);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

static void warn_and_audit_allow(void **state)
{
	(void)state;
	const char *pod = "{'hostNetwork':true,'containers':[{'name':'node','image':'pytorch'}]}";
	tp_result *r = review(SP, runtime_with(pod),
			      ns_with("{'pod-security.kubernetes.io/warn':'baseline',"
				      "'pod-security.kubernetes.io/audit':'baseline',"
				      "'pod-security.kubernetes.io/audit-version':'v1.30'}"),
			      trainjob(NULL, NULL), NULL, NULL);
	assert_true(tp_result_ok(r));
	assert_true(tt_has_warning(r, "would violate PodSecurity \"baseline:latest\": host namespaces "
				      "(hostNetwork=true) (replicated job \"node\")"));
	assert_int_equal(tp_result_annotation_count(r), 1);
	const char *k, *v;
	tp_result_annotation_at(r, 0, &k, &v);
	assert_string_equal(k, TP_PSA_AUDIT_ANNOTATION);
	assert_string_equal(v, "would violate PodSecurity \"baseline:v1.30\": host namespaces "
			       "(hostNetwork=true) (replicated job \"node\")");
	tp_result_free(r);
}

/* A version label pins the checks: runAsUser=0 is a restricted violation
 * from v1.23 on. */
static void enforce_version_pins_checks(void **state)
{
	(void)state;
	const char *pod = "{'securityContext':{'runAsUser':0,'runAsNonRoot':true,'seccompProfile':"
			  "{'type':'RuntimeDefault'}},'containers':[{'name':'node','image':'pytorch',"
			  "'securityContext':{'allowPrivilegeEscalation':false,'capabilities':"
			  "{'drop':['ALL']}}}]}";
	tp_result *r = review(SP, runtime_with(pod),
			      ns_with("{'pod-security.kubernetes.io/enforce':'restricted',"
				      "'pod-security.kubernetes.io/enforce-version':'v1.22'}"),
			      trainjob(NULL, NULL), NULL, NULL);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review(SP, runtime_with(pod), ns_with("{'pod-security.kubernetes.io/enforce':'restricted'}"),
		   trainjob(NULL, NULL), NULL, NULL);
	assert_true(tt_has_error(r, "metadata.namespace", "runAsUser=0 (pod must not set runAsUser=0)"));
	tp_result_free(r);
}

/* A Namespace the lookup cannot read decides nothing: the TrainJob is
 * judged on the rest, and a warning says what was not checked. */
static void namespace_that_cannot_be_read(void **state)
{
	(void)state;
	struct cluster c = { NULL, true };
	tp_result *r = review(SP, runtime_with(GOOD_POD),
			      ns_with("{'pod-security.kubernetes.io/enforce':'restricted'}"),
			      trainjob(NULL, NULL), &c, NULL);
	assert_true(tp_result_ok(r));
	assert_false(tp_result_unavailable(r));
	assert_true(tt_has_warning(r, "Pod Security of namespace \"team-a\" was not checked: "
				      "namespaces \"team-a\" could not be looked up: GET "
				      "/api/v1/namespaces/team-a: HTTP 403: namespaces is forbidden"));
	tp_result_free(r);
}

/* No Namespace object: its labels are unknown, the defaults apply
 * (privileged, or the level given for every namespace). */
static void default_level_for_every_namespace(void **state)
{
	(void)state;
	tp_result *r = review(SP, runtime_with(GOOD_POD), NULL, trainjob(NULL, NULL), NULL, NULL);
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 0);
	tp_result_free(r);
	r = review(SP, runtime_with(GOOD_POD), NULL, trainjob(NULL, NULL), NULL, "baseline");
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review(SP, runtime_with(GOOD_POD), NULL, trainjob(NULL, NULL), NULL, "restricted:v1.30");
	assert_true(tt_has_error(r, "metadata.namespace", "violates PodSecurity \"restricted:v1.30\""));
	tp_result_free(r);
	/* a label wins over the default of its mode */
	r = review(SP, runtime_with(GOOD_POD),
		   ns_with("{'pod-security.kubernetes.io/enforce':'privileged'}"), trainjob(NULL, NULL),
		   NULL, "restricted");
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* ---------------------------------------------------- counts, built JobSet */

/* The trainer's node job asked for 100001 Pods. */
#define OVER_THE_INDEXED_LIMIT                                                                \
	"spec.trainer.numNodes: Invalid value: 100001: must be less than or equal to 100000 when " \
	"completion mode is Indexed: Job.batch \"train-node-0\" would be invalid at "            \
	"spec.parallelism (replicated job \"node\"); run at most 100000 Pods of an Indexed Job " \
	"at once"

/* numNodes becomes the trainer Job's parallelism and completions: an
 * Indexed Job runs at most 100000 Pods at once. */
static void num_nodes_over_the_indexed_limit(void **state)
{
	(void)state;
	tp_result *r = review(SP, runtime_with(GOOD_POD), NULL, trainjob("{'numNodes':100001}", NULL),
			      NULL, NULL);
	text_is(only_error(r), OVER_THE_INDEXED_LIMIT);
	tp_result_free(r);
	r = review(SP, runtime_with(GOOD_POD), NULL, trainjob("{'numNodes':100000}", NULL), NULL,
		   NULL);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* The JobSet builder writes every job's count as both parallelism and
 * completions: a job with parallelism alone is whole, in the runtime and in
 * its TrainJobs. */
static void counts_are_the_builders(void **state)
{
	(void)state;
	const char *helper = "{'name':'helper','template':{'spec':{'parallelism':2,'template':{'spec':"
			     "{'containers':[{'name':'helper','image':'busybox'}]}}}}},";
	cJSON *rt = runtime_of("{'numNodes':1,'torch':{}}", helper, GOOD_POD);
	tp_options opt = { .profile = SP };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	tt_dump(r);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review(SP, rt, NULL, trainjob("{'numNodes':3}", NULL), NULL, NULL);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* An MPI runtime as upstream's deepspeed-distributed: a node job (its
 * container's resources are resources) and the trainer's launcher job. */
static cJSON *mpi_runtime(const char *resources)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt'},'spec':{'mlPolicy':{'numNodes':1,'mpi':"
		 "{'numProcPerNode':1,'runLauncherAsNode':true}},'template':{'spec':{'replicatedJobs':["
		 "{'name':'node','template':{'spec':{'template':{'spec':{'containers':[{'name':'node',"
		 "'image':'mpi','resources':%s}]}}}}},"
		 "{'name':'launcher','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':{'containers':[{'name':'node','image':'mpi'}]}}}}}]}}}}",
		 resources);
	return tt_jsq(buf);
}

/* MPI with runLauncherAsNode: a finding is told apart in each job, the
 * runtime's at its path, the TrainJob's at its field in each job it
 * reaches (the launcher runs as a node: both get resourcesPerNode); the
 * Pod counts are MPI's. */
static void mpi_counts_and_attribution(void **state)
{
	(void)state;
	tp_result *r = review(SP, mpi_runtime("{'requests':{'memory':'8Gi'},'limits':{'memory':'4Gi'}}"),
			      NULL, trainjob("{'numNodes':3}", NULL), NULL, NULL);
	text_is(only_error(r),
		"spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]."
		"resources.requests: Invalid value: \"8Gi\": must be less than or equal to memory limit "
		"of 4Gi: in ClusterTrainingRuntime \"rt\" (replicated job \"node\", container "
		"\"node\"), so Job.batch \"train-node-0\" would be invalid; request at most 4Gi of "
		"memory, or raise its limit");
	tp_result_free(r);
	r = review(SP, mpi_runtime("{}"), NULL,
		   trainjob("{'numNodes':3,'resourcesPerNode':{'requests':{'nvidia.com/gpu':1}}}",
			    NULL),
		   NULL, NULL);
	assert_int_equal(tp_result_error_count(r), 2);
	for (size_t i = 0; i < 2; i++)
		assert_string_equal(tp_result_error_at(r, i)->path,
				    "spec.trainer.resourcesPerNode.limits");
	assert_true(tt_has_error(r, "spec.trainer.resourcesPerNode.limits",
				 "Job.batch \"train-launcher-0\" would be invalid"));
	tp_result_free(r);
	/* MPI's counts: one launcher, numNodes - 1 nodes */
	r = review(SP, mpi_runtime("{}"), NULL, trainjob("{'numNodes':100001}", NULL), NULL, NULL);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review(SP, mpi_runtime("{}"), NULL, trainjob("{'numNodes':100002}", NULL), NULL, NULL);
	text_is(only_error(r), OVER_THE_INDEXED_LIMIT);
	tp_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpu_request_without_limit_at_the_trainjob),
		cmocka_unit_test(request_over_the_runtimes_limit),
		cmocka_unit_test(runtime_mount_of_a_missing_volume),
		cmocka_unit_test(claim_templates_are_volumes),
		cmocka_unit_test(runtime_memory_request_over_its_limit),
		cmocka_unit_test(image_left_to_the_trainjob),
		cmocka_unit_test(finding_of_the_runtime_patches),
		cmocka_unit_test(trainer_and_initializer_env),
		cmocka_unit_test(initializer_secret_name),
		cmocka_unit_test(enforce_restricted_denies),
		cmocka_unit_test(warn_and_audit_allow),
		cmocka_unit_test(enforce_version_pins_checks),
		cmocka_unit_test(namespace_that_cannot_be_read),
		cmocka_unit_test(default_level_for_every_namespace),
		cmocka_unit_test(num_nodes_over_the_indexed_limit),
		cmocka_unit_test(counts_are_the_builders),
		cmocka_unit_test(mpi_counts_and_attribution),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

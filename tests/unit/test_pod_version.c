/*
 * test_pod_version.c — the strict profile checks the Jobs and Pods a
 * TrainJob becomes as the cluster's Kubernetes release does
 * (policy/pod/fields_since.c, tp_options.kubernetes_minor): a field that
 * release does not know is refused (its API server creates the Job
 * without it), a field it drops behind a gate off by default is a
 * warning, and 0 is the newest supported release. The gates' cases follow
 * Kubernetes' own tests of the dropping: pkg/api/pod/util_test.go
 * (TestDropPodLevelResources, TestDropDisabledPodLifecycleSleepAction,
 * TestDropRecursiveReadOnly... "feature disabled, field set, not in use in
 * the old object": dropped) and pkg/registry/batch/job/strategy_test.go
 * (TestJobStrategy_PrepareForCreate: managedBy and successPolicy dropped
 * with their gates off).
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

#define RJOB "spec.template.spec.replicatedJobs[0].template."

/* A ClusterTrainingRuntime "rt" whose trainer job "node" has the Job spec
 * members job ("" or "'x':1,") and the Pod spec pod (single-quoted JSON). */
static cJSON *runtime_of(const char *job, const char *pod)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		 "[{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{%s'template':"
		 "{'spec':%s}}}}]}}}}",
		 job, pod);
	return tt_jsq(buf);
}

static cJSON *runtime_with(const char *pod)
{
	return runtime_of("", pod);
}

/* The runtime's own review at 1.<minor> (0: the default). */
static tp_result *check_runtime(tp_profile p, int minor, cJSON *rt)
{
	tp_options opt = { .profile = p, .kubernetes_minor = minor };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	tt_dump(r);
	cJSON_Delete(rt);
	return r;
}

/* A TrainJob of "rt" (trainer: spec.trainer, single-quoted JSON or NULL)
 * at 1.<minor>, with rt in the store. */
static tp_result *check_trainjob(int minor, cJSON *rt, const char *trainer)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'train','namespace':'team-a'},'spec':{'runtimeRef':{'name':'rt'}%s%s}}",
		 trainer ? ",'trainer':" : "", trainer ? trainer : "");
	cJSON *tj = tt_jsq(buf);
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tp_store_put(store, rt), TP_OK);
	tp_options opt = { .profile = SP, .store = store, .kubernetes_minor = minor };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, r), TP_OK);
	tt_dump(r);
	tp_store_free(store);
	cJSON_Delete(tj);
	return r;
}

/* r holds one error, and it reads want as the API server prints it. */
static void only_error_is(const tp_result *r, const char *want)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_result_error_count(r), 1);
	assert_int_equal(tp_field_error_format(tp_result_error_at(r, 0), &b), TP_OK);
	assert_string_equal(b.data, want);
	tp_buf_free(&b);
}

static void no_word(const tp_result *r)
{
	assert_int_equal(tp_result_error_count(r), 0);
	assert_int_equal(tp_result_warning_count(r), 0);
}

static void only_warning(const tp_result *r, const char *want)
{
	assert_int_equal(tp_result_error_count(r), 0);
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0), want);
}

#define GOOD_POD "{'containers':[{'name':'node','image':'pytorch'}]}"
#define HOSTNAME_POD "{'hostnameOverride':'n0','containers':[{'name':'node','image':'pytorch'}]}"

#define HOSTNAME_DETAIL(minor)                                                                \
	"unknown field \"spec.template.spec.hostnameOverride\": not known to Kubernetes 1." minor \
	" (added in 1.34), whose API server creates the Job without it"

/* ------------------------------------------------------------ unknown */

/* The built-in JobSet CRD carries hostnameOverride (a 1.34 Pod field): a
 * v1.32 API server does not know it. */
static void hostname_override_refused_on_1_32(void **state)
{
	(void)state;
	tp_result *r = check_runtime(SP, 32, runtime_with(HOSTNAME_POD));
	only_error_is(r, RJOB "spec.template.spec.hostnameOverride: Forbidden: "
		      HOSTNAME_DETAIL("32") ": the Job.batch of every TrainJob would be invalid "
		      "(replicated job \"node\"); remove it, or run the Pods on Kubernetes 1.34 or "
		      "newer");
	tp_result_free(r);
	/* upstream's answer: nothing to say */
	r = check_runtime(KF, 32, runtime_with(HOSTNAME_POD));
	no_word(r);
	tp_result_free(r);
}

/* 0 is the newest supported release, 1.32. */
static void default_is_the_newest(void **state)
{
	(void)state;
	tp_options opt = { 0 };
	assert_int_equal(tp_kube_minor(&opt), TP_KUBE_MINOR_NEWEST);
	assert_int_equal(tp_kube_minor(NULL), 32);
	tp_result *r = check_runtime(SP, 0, runtime_with(HOSTNAME_POD));
	assert_true(tt_has_error(r, RJOB "spec.template.spec.hostnameOverride",
				 "not known to Kubernetes 1.32 (added in 1.34)"));
	tp_result_free(r);
	/* a 1.30 field is known to it */
	r = check_runtime(SP, 0,
			  runtime_with("{'securityContext':{'appArmorProfile':{'type':'RuntimeDefault'}},"
				       "'containers':[{'name':'node','image':'pytorch'}]}"));
	no_word(r);
	tp_result_free(r);
	r = check_runtime(SP, 0, runtime_with(GOOD_POD));
	no_word(r);
	tp_result_free(r);
}

/* A cluster whose version could not be read: no field is judged by its
 * release (the cluster may have it), the rest is checked as the newest. */
static void unknown_version_judges_no_field(void **state)
{
	(void)state;
	assert_int_equal(tp_kube_minor(&(tp_options){ .kubernetes_minor = TP_KUBE_MINOR_UNKNOWN }),
			 TP_KUBE_MINOR_NEWEST);
	tp_result *r = check_runtime(SP, TP_KUBE_MINOR_UNKNOWN, runtime_with(HOSTNAME_POD));
	no_word(r);
	tp_result_free(r);
	r = check_runtime(SP, TP_KUBE_MINOR_UNKNOWN,
			  runtime_with("{'resources':{'limits':{'cpu':'4'}},'containers':[{'name':"
				       "'node','image':'pytorch','resources':{'limits':{'memory':"
				       "'1Gi'},'requests':{'memory':'2Gi'}}}]}"));
	assert_int_equal(tp_result_warning_count(r), 0);
	assert_true(tt_has_error(r, RJOB "spec.template.spec.containers[0].resources.requests",
				 "must be less than or equal to memory limit of 1Gi"));
	tp_result_free(r);
}

/* appArmorProfile came in 1.30 (its gate AppArmorFields beta, on): a 1.29
 * API server does not know it, a 1.30 one does. */
static void apparmor_profile_since_1_30(void **state)
{
	(void)state;
	const char *pod = "{'containers':[{'name':'node','image':'pytorch','securityContext':"
			  "{'appArmorProfile':{'type':'RuntimeDefault'}}}]}";
	tp_result *r = check_runtime(SP, 29, runtime_with(pod));
	only_error_is(r, RJOB "spec.template.spec.containers[0].securityContext.appArmorProfile: "
		      "Forbidden: unknown field \"spec.template.spec.containers[0].securityContext."
		      "appArmorProfile\": not known to Kubernetes 1.29 (added in 1.30), whose API "
		      "server creates the Job without it: the Job.batch of every TrainJob would be "
		      "invalid (replicated job \"node\", container \"node\"); remove it, or run the "
		      "Pods on Kubernetes 1.30 or newer");
	tp_result_free(r);
	r = check_runtime(SP, 30, runtime_with(pod));
	no_word(r);
	tp_result_free(r);
}

/* managedBy (a Job field) came in 1.30. */
static void job_field_since_1_30(void **state)
{
	(void)state;
	const char *job = "'managedBy':'kueue.x-k8s.io/multikueue',";
	tp_result *r = check_runtime(SP, 29, runtime_of(job, GOOD_POD));
	assert_true(tt_has_error(r, RJOB "spec.managedBy",
				 "unknown field \"spec.managedBy\": not known to Kubernetes 1.29 "
				 "(added in 1.30)"));
	assert_int_equal(tp_result_error_count(r), 1);
	tp_result_free(r);
	r = check_runtime(SP, 32, runtime_of(job, GOOD_POD));
	no_word(r);
	tp_result_free(r);
}

/* A TrainJob of a runtime with the field: at the runtime's path, whether
 * the TrainJob writes into the job (its image) or not. */
static void trainjob_of_such_a_runtime(void **state)
{
	(void)state;
	static const char *const trainers[] = { NULL, "{'image':'pytorch:2'}" };
	for (int k = 0; k < 2; k++) {
		tp_result *r = check_trainjob(32, runtime_with(HOSTNAME_POD), trainers[k]);
		assert_int_equal(tp_result_error_count(r), 1);
		assert_true(tt_has_error(r, RJOB "spec.template.spec.hostnameOverride",
					 HOSTNAME_DETAIL("32") ": in ClusterTrainingRuntime \"rt\""));
		tp_result_free(r);
	}
	tp_result *r = check_trainjob(32, runtime_with(GOOD_POD), "{'image':'pytorch:2'}");
	no_word(r);
	tp_result_free(r);
}

/* ------------------------------------------------------------ gates */

/* Pod-level resources came in 1.32 behind PodLevelResources (alpha, off):
 * dropped, which only the cluster's gates decide: a warning. */
static void pod_level_resources_warn_on_1_32(void **state)
{
	(void)state;
	const char *pod = "{'resources':{'limits':{'cpu':'4'}},'containers':[{'name':'node',"
			  "'image':'pytorch'}]}";
	tp_result *r = check_runtime(SP, 32, runtime_with(pod));
	only_warning(r, "replicated job \"node\": spec.template.spec.resources is dropped by "
			"Kubernetes 1.32 unless the cluster turns its PodLevelResources feature gate on "
			"(off by default): the Job and its Pods would be created without it");
	tp_result_free(r);
	r = check_runtime(SP, 31, runtime_with(pod));
	assert_true(tt_has_error(r, RJOB "spec.template.spec.resources",
				 "not known to Kubernetes 1.31 (added in 1.32)"));
	tp_result_free(r);
}

/* recursiveReadOnly: alpha (off) in 1.30, beta (on) in 1.31;
 * successPolicy the same; sleep: alpha in 1.29, beta in 1.30. */
static void gates_on_by_default_later(void **state)
{
	(void)state;
	const char *mount = "{'volumes':[{'name':'data','emptyDir':{}}],'containers':[{'name':"
			    "'node','image':'pytorch','volumeMounts':[{'name':'data','mountPath':"
			    "'/data','readOnly':true,'recursiveReadOnly':'IfPossible'}]}]}";
	tp_result *r = check_runtime(SP, 30, runtime_with(mount));
	only_warning(r, "replicated job \"node\": spec.template.spec.containers[0].volumeMounts[0]."
			"recursiveReadOnly is dropped by Kubernetes 1.30 unless the cluster turns its "
			"RecursiveReadOnlyMounts feature gate on (off by default): the Job and its Pods "
			"would be created without it");
	tp_result_free(r);
	r = check_runtime(SP, 31, runtime_with(mount));
	no_word(r);
	tp_result_free(r);
	const char *job = "'successPolicy':{'rules':[{'succeededCount':1}]},";
	r = check_runtime(SP, 30, runtime_of(job, GOOD_POD));
	assert_int_equal(tp_result_error_count(r), 0);
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_non_null(strstr(tp_result_warning_at(r, 0), "spec.successPolicy is dropped by "
							  "Kubernetes 1.30 unless the cluster turns "
							  "its JobSuccessPolicy feature gate on"));
	tp_result_free(r);
	r = check_runtime(SP, 31, runtime_of(job, GOOD_POD));
	no_word(r);
	tp_result_free(r);
	const char *sleep = "{'containers':[{'name':'node','image':'pytorch','lifecycle':"
			    "{'preStop':{'sleep':{'seconds':5}}}}]}";
	r = check_runtime(SP, 29, runtime_with(sleep));
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_non_null(strstr(tp_result_warning_at(r, 0),
			       "spec.template.spec.containers[0].lifecycle.preStop.sleep is dropped "
			       "by Kubernetes 1.29 unless the cluster turns its "
			       "PodLifecycleSleepAction feature gate on"));
	tp_result_free(r);
	r = check_runtime(SP, 30, runtime_with(sleep));
	no_word(r);
	tp_result_free(r);
}

/* A null member is no field at all. */
static void null_is_absent(void **state)
{
	(void)state;
	tp_result *r = check_runtime(SP, 29, runtime_with("{'hostnameOverride':null,'containers':"
							  "[{'name':'node','image':'pytorch'}]}"));
	no_word(r);
	tp_result_free(r);
}

/* ------------------------------------------------------------ parsing */

static void version_parse(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int minor;
	} good[] = { { "1.29", 29 }, { "v1.30", 30 }, { "1.32.4", 32 }, { "1.31", 31 } };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int m = 0;
		char why[160] = "";
		assert_int_equal(tp_kube_version_parse(good[i].in, &m, why, sizeof(why)), TP_OK);
		assert_int_equal(m, good[i].minor);
	}
	static const char *const bad[] = { "1.28", "1.33", "2.30", "1.x", "1.", "132", "",
					   "1.30.", "1.30x", "v1.3a" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int m = -7;
		char why[160] = "";
		assert_int_equal(tp_kube_version_parse(bad[i], &m, why, sizeof(why)), TP_EINVAL);
		assert_int_equal(m, -7);
		assert_non_null(strstr(why, "use 1.29 to 1.32, the Kubernetes versions supported"));
	}
	char why[160];
	int m;
	tp_kube_version_parse("1.33", &m, why, sizeof(why));
	assert_string_equal(why, "not a supported Kubernetes version: use 1.29 to 1.32, the "
				 "Kubernetes versions supported");
	assert_int_equal(tp_kube_version_parse(NULL, &m, NULL, 0), TP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostname_override_refused_on_1_32),
		cmocka_unit_test(default_is_the_newest),
		cmocka_unit_test(unknown_version_judges_no_field),
		cmocka_unit_test(apparmor_profile_since_1_30),
		cmocka_unit_test(job_field_since_1_30),
		cmocka_unit_test(trainjob_of_such_a_runtime),
		cmocka_unit_test(pod_level_resources_warn_on_1_32),
		cmocka_unit_test(gates_on_by_default_later),
		cmocka_unit_test(null_is_absent),
		cmocka_unit_test(version_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

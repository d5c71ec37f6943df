/*
 * test_runtime_fast.c — the ClusterTrainingRuntime review's shortcuts
 * (issue 32) give the answers of the long way: upstream's
 * validateReplicatedJobs and the strict rules read each job's members one
 * name at a time instead of by dotted path, and the name rules of
 * apimachinery's pkg/util/validation run off a table of byte classes. Each
 * answer is held to the texts the API server and the checks give, on the
 * shapes where a member read and a path read could differ (a member of
 * the wrong type on the way, a member given twice).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/admission/runtime.h"
#include "policy/core/internal.h"
#include "tests/support/testutil.h"

#define ANC "'trainer.kubeflow.org/trainjob-ancestor-step'"

/* The answer (tt_result_text) to a ClusterTrainingRuntime CREATE with the
 * given replicatedJobs (single-quoted JSON), in the strict profile, with
 * the schema layer or without it. */
static char *answer_at(const char *jobs, bool no_schema, int minor)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{"
		 "'replicatedJobs':%s}}}}",
		 jobs);
	cJSON *obj = tt_jsq(buf);
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_options opt = { .profile = TP_PROFILE_STRICT, .no_schema = no_schema,
			   .kubernetes_minor = minor };
	assert_int_equal(tp__validate_trainer_runtime(&opt, TP_OP_CREATE,
						      TP_KIND_CLUSTER_TRAINING_RUNTIME, obj, NULL, res),
			 TP_OK);
	char *a = tt_result_text(res);
	tp_result_free(res);
	cJSON_Delete(obj);
	return a;
}

static char *answer(const char *jobs, bool no_schema)
{
	return answer_at(jobs, no_schema, 0);
}

static void has(const char *answer_text, const char *want)
{
	if (!strstr(answer_text, want))
		fail_msg("no \"%s\" in\n%s", want, answer_text);
}

static void lacks(const char *answer_text, const char *unwanted)
{
	if (strstr(answer_text, unwanted))
		fail_msg("\"%s\" in\n%s", unwanted, answer_text);
}

/* validateReplicatedJobs (docs/kubeflow-upstream.md §2.2): the trainer's
 * job with two replicas and without its node container. */
static void replicated_jobs_rule(void **state)
{
	(void)state;
	char *a = answer("[{'name':'node','replicas':2,'template':{'metadata':{'labels':{" ANC
			 ":'trainer'}},'spec':{'template':{'spec':{'containers':"
			 "[{'name':'main','image':'img'}]}}}}}]",
			 true);
	has(a, "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1");
	has(a, "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: "
	       "Invalid value: ");
	has(a, "must contain the required container for the ancestor: trainer");
	free(a);
	/* replicas null is JobSet's default of 1; the node container there */
	a = answer("[{'name':'node','replicas':null,'template':{'metadata':{'labels':{" ANC
		   ":'trainer'}},'spec':{'template':{'spec':{'containers':"
		   "[{'name':'node','image':'img'}]}}}}}]",
		   true);
	lacks(a, "always must be 1");
	lacks(a, "required container");
	free(a);
}

/* Members of the wrong type on the way to the step label and the
 * containers: a path read found nothing there, so neither does a member
 * read. */
static void wrong_types_on_the_way(void **state)
{
	(void)state;
	/* labels an array: no step, so no required container */
	char *a = answer("[{'name':'node','template':{'metadata':{'labels':[" ANC
			 "]},'spec':{'template':{'spec':{'containers':[{'name':'x','image':'i'}]}}}}}]",
			 true);
	lacks(a, "required container");
	has(a, "no replicated job is labelled trainjob-ancestor-step: trainer");
	free(a);
	/* containers an object: the container is not found, the value is the object's absence */
	a = answer("[{'name':'node','template':{'metadata':{'labels':{" ANC
		   ":'trainer'}},'spec':{'template':{'spec':{'containers':{'name':'node'}}}}}}]",
		   true);
	has(a, "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: "
	       "Invalid value: null: must contain the required container for the ancestor: trainer");
	free(a);
}

/* A member given twice: the first one counts, for the step label as for
 * the job's name (cJSON_GetObjectItemCaseSensitive's and tp_get's
 * choice). */
static void first_member_wins(void **state)
{
	(void)state;
	char *a = answer("[{'name':'node','name':'Bad_Name','template':{'metadata':{'labels':{" ANC
			 ":'trainer'," ANC ":'dataset-initializer'}},'spec':{'template':{'spec':"
			 "{'containers':[{'name':'node','image':'i'}]}}}}}]",
			 true);
	lacks(a, "Bad_Name");
	lacks(a, "required container");
	lacks(a, "no replicated job is labelled");
	free(a);
}

/* The strict rules on the jobs: a step twice, a dependsOn naming a later
 * job, a status outside the enum (without the schema layer), a job name
 * that is not a DNS-1035 label, a duplicate name (without the schema
 * layer), startupPolicy beside dependsOn. */
static void strict_job_rules(void **state)
{
	(void)state;
	char *a = answer(
		"[{'name':'node','dependsOn':[{'name':'later','status':'Done'}],'template':{'metadata':"
		"{'labels':{" ANC ":'trainer'}},'spec':{'template':{'spec':{'containers':"
		"[{'name':'node','image':'i'}]}}}}},"
		"{'name':'later','template':{'metadata':{'labels':{" ANC ":'trainer'}},'spec':"
		"{'template':{'spec':{'containers':[{'name':'node','image':'i'}]}}}}},"
		"{'name':'1st','template':{'spec':{'template':{'spec':{'containers':"
		"[{'name':'c','image':'i'}]}}}}},"
		"{'name':'later','template':{'spec':{'template':{'spec':{'containers':"
		"[{'name':'c','image':'i'}]}}}}}]",
		true);
	has(a, "spec.template.spec.replicatedJobs[1].template.metadata.labels"
	       "[trainer.kubeflow.org/trainjob-ancestor-step]: Duplicate value: \"trainer\": "
	       "replicatedJobs[0] already has this step");
	has(a, "spec.template.spec.replicatedJobs[0].dependsOn[0].name: Invalid value: \"later\": "
	       "must name a replicated job listed before this one");
	has(a, "spec.template.spec.replicatedJobs[0].dependsOn[0].status: Unsupported value: "
	       "\"Done\": supported values: \"Ready\", \"Complete\"");
	has(a, "spec.template.spec.replicatedJobs[2].name: Invalid value: \"1st\": a DNS-1035 label");
	has(a, "spec.template.spec.replicatedJobs[3].name: Duplicate value: \"later\": replicated "
	       "job names must be unique");
	free(a);
}

/* The fields a release does not know (pod/fields_since.c), looked for
 * first without a path and then said at their own: in the second
 * container's second mount, in the first volume, in an init container, a
 * gated one in the Job spec; nothing said where there is nothing. */
static void fields_since_at_their_paths(void **state)
{
	(void)state;
	const char *jobs =
		"[{'name':'node','template':{'metadata':{'labels':{" ANC ":'trainer'}},'spec':"
		"{'successPolicy':{'rules':[{'succeededCount':1}]},'template':{'spec':{"
		"'volumes':[{'name':'v','image':{'reference':'r'}},{'name':'w','emptyDir':{}}],"
		"'initContainers':[{'name':'init','image':'i','restartPolicy':'Always'}],"
		"'containers':[{'name':'node','image':'i'},{'name':'side','image':'i',"
		"'volumeMounts':[{'name':'w','mountPath':'/w'},{'name':'v','mountPath':'/v',"
		"'readOnly':true,'recursiveReadOnly':'Enabled'}]}]}}}}}]";
	char *a = answer_at(jobs, true, 28);
	const char *pod = "spec.template.spec.replicatedJobs[0].template.spec.template.spec.";
	char want[512];
	snprintf(want, sizeof(want), "%scontainers[1].volumeMounts[1].recursiveReadOnly: Forbidden: "
		 "unknown field \"spec.template.spec.containers[1].volumeMounts[1]."
		 "recursiveReadOnly\": not known to Kubernetes 1.28 (added in 1.30)", pod);
	has(a, want);
	snprintf(want, sizeof(want), "%svolumes[0].image: Forbidden: unknown field "
		 "\"spec.template.spec.volumes[0].image\"", pod);
	has(a, want);
	has(a, "spec.template.spec.replicatedJobs[0].template.spec.successPolicy: Forbidden: "
	       "unknown field \"spec.successPolicy\"");
	has(a, "replicated job \"node\": spec.template.spec.initContainers[0].restartPolicy is "
	       "dropped by Kubernetes 1.28 unless the cluster turns its SidecarContainers feature "
	       "gate on");
	lacks(a, "containers[0].");
	free(a);
	a = answer_at(jobs, true, 36);
	lacks(a, "unknown field");
	lacks(a, "is dropped by Kubernetes");
	free(a);
}

/* A container's mounts (validation_test.go TestValidateVolumeMounts: a
 * path mounted twice, mountPropagation and recursiveReadOnly of a mount):
 * the paths are remembered for the mounts after each, the modes checked
 * at the list's path where a mount gives one. */
static void mounts_paths_and_modes(void **state)
{
	(void)state;
	char *a = answer("[{'name':'node','template':{'metadata':{'labels':{" ANC ":'trainer'}},"
			 "'spec':{'template':{'spec':{'volumes':[{'name':'v','emptyDir':{}}],"
			 "'containers':[{'name':'node','image':'i','volumeMounts':["
			 "{'name':'v','mountPath':'/a'},{'name':'v','mountPath':'/b',"
			 "'mountPropagation':'Bidirectional'},{'name':'v','mountPath':'/a',"
			 "'recursiveReadOnly':'Enabled'},{'name':'v','mountPath':'/b'}]}]}}}}}]",
			 true);
	const char *c = "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
			"containers[0].volumeMounts";
	char want[512];
	snprintf(want, sizeof(want), "%s[2].mountPath: Invalid value: \"/a\": must be unique", c);
	has(a, want);
	snprintf(want, sizeof(want), "%s[3].mountPath: Invalid value: \"/b\": must be unique", c);
	has(a, want);
	lacks(a, "volumeMounts[1].mountPath");
	snprintf(want, sizeof(want), "%s.mountPropagation: Forbidden: Bidirectional mount "
		 "propagation is available only to privileged containers", c);
	has(a, want);
	snprintf(want, sizeof(want), "%s.recursiveReadOnly: Forbidden: may only be specified "
		 "when readOnly is true", c);
	has(a, want);
	free(a);
}

/* The step label's key passes without its check (pod/meta.c): it is a
 * good qualified name, and a key that only starts like it is still
 * checked (validation_test.go TestValidateLabels' shapes). */
static void step_key_and_its_neighbours(void **state)
{
	(void)state;
	const char *msgs[TP_NAME_MSGS_MAX];
	assert_int_equal(tp__qualified_name_msgs(TP_LABEL_ANCESTOR, msgs), 0);
	char *a = answer("[{'name':'node','template':{'metadata':{'labels':{" ANC ":'trainer',"
			 "'trainer.kubeflow.org/trainjob-ancestor-step-':'x','t':'-x'}},"
			 "'spec':{'template':{'spec':{'containers':[{'name':'node','image':'i'}]}}}}}]",
			 true);
	has(a, "spec.template.spec.replicatedJobs[0].template.metadata.labels: Invalid value: "
	       "\"trainer.kubeflow.org/trainjob-ancestor-step-\": name part must consist of");
	has(a, "spec.template.spec.replicatedJobs[0].template.metadata.labels: Invalid value: "
	       "\"-x\": a valid label must be an empty string");
	lacks(a, "Invalid value: \"" TP_LABEL_ANCESTOR "\"");
	free(a);
}

/* Containers' names and host ports (validation_test.go
 * TestValidateContainers' duplicate names, TestValidateInitContainers'
 * name of a regular container, TestValidatePodSpec's duplicate host
 * ports): each set of names or ports holds what a later container or an
 * init container looks up; a container without ports is passed by. */
static void container_names_and_ports(void **state)
{
	(void)state;
	char *a = answer("[{'name':'node','template':{'metadata':{'labels':{" ANC ":'trainer'}},"
			 "'spec':{'template':{'spec':{'initContainers':[{'name':'b','image':'i'},"
			 "{'name':'init','image':'i'},{'name':'init','image':'i'}],"
			 "'containers':[{'name':'node','image':'i'},{'name':'b','image':'i',"
			 "'ports':[{'containerPort':80,'hostPort':8080}]},{'name':'node','image':'i'},"
			 "{'name':'d','image':'i','ports':[{'containerPort':81,'hostPort':8080}]}]}}}}}]",
			 true);
	const char *p = "spec.template.spec.replicatedJobs[0].template.spec.template.spec.";
	char want[512];
	snprintf(want, sizeof(want), "%scontainers[2].name: Duplicate value: \"node\"", p);
	has(a, want);
	snprintf(want, sizeof(want), "%sinitContainers[0].name: Duplicate value: \"b\"", p);
	has(a, want);
	snprintf(want, sizeof(want), "%sinitContainers[2].name: Duplicate value: \"init\"", p);
	has(a, want);
	snprintf(want, sizeof(want), "%scontainers[3].ports[0].hostPort: Duplicate value: "
		 "\"TCP//8080\"", p);
	has(a, want);
	lacks(a, "containers[0].name");
	lacks(a, "containers[1].ports");
	free(a);
}

/* A job's template read once for the Job's check and its release's
 * (pod/runtime.c), or its defaulted copy for the Job's check: both say
 * the same of a container's imagePullPolicy (validation_test.go
 * TestValidateContainers, an unsupported pull policy) and of a field
 * Kubernetes 1.28 does not know, with a copy (an onPodConditions rule
 * without status, which the API server defaults) or without. */
static void job_and_release_from_one_read(void **state)
{
	(void)state;
	static const char *const extra[] = {
		"",
		"'podFailurePolicy':{'rules':[{'action':'Ignore','onPodConditions':"
		"[{'type':'DisruptionTarget'}]}]},",
	};
	for (int k = 0; k < 2; k++) {
		char jobs[1024];
		snprintf(jobs, sizeof(jobs),
			 "[{'name':'node','template':{'metadata':{'labels':{" ANC ":'trainer'}},"
			 "'spec':{%s'successPolicy':{'rules':[{'succeededCount':1}]},'template':"
			 "{'spec':{'restartPolicy':'Never','containers':[{'name':'node','image':'i',"
			 "'imagePullPolicy':'Sometimes'}]}}}}}]",
			 extra[k]);
		char *a = answer_at(jobs, true, 28);
		has(a, "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
		       "containers[0].imagePullPolicy: Unsupported value: \"Sometimes\"");
		has(a, "spec.template.spec.replicatedJobs[0].template.spec.successPolicy: "
		       "Forbidden: unknown field \"spec.successPolicy\"");
		free(a);
	}
}

/* IsDNS1035Label's and IsDNS1123Subdomain's cases (apimachinery
 * pkg/util/validation/validation_test.go TestIsDNS1035Label,
 * TestIsDNS1123Subdomain), on the table of byte classes. */
static void dns_names(void **state)
{
	(void)state;
	static const char *const l_good[] = { "a", "ab", "abc", "a1", "a-1", "a--1--2--b", NULL };
	static const char *const l_bad[] = { "0", "01", "012", "1a", "1-a", "1--a--b--2", "", "A",
					     "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-",
					     "-1", "_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".",
					     "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a",
					     "a b", "1 ", " 1", "1 2", "\xc3\xa9", NULL };
	for (size_t i = 0; l_good[i]; i++)
		assert_null(tp__check_dns1035_label(l_good[i]));
	for (size_t i = 0; l_bad[i]; i++)
		if (!tp__check_dns1035_label(l_bad[i]))
			fail_msg("\"%s\" passed as a DNS-1035 label", l_bad[i]);
	static const char *const s_good[] = { "a", "0", "1--a--b--2", "a.a", "a--1--2--b.1", "0.1",
					      "1--a--b--2.1", "a.b.c.d.e", "11.22.33.44.55", NULL };
	static const char *const s_bad[] = { "", "A", "aBc", "-", "a-", "-a", "_", "a_b", ".",
					     "a.", ".a", "a..b", "1..2", " ", "a b", "A.a", "ab.A",
					     "a.B.c.d.e", "a@b", "a:b", "a.-b", "a-.b", NULL };
	for (size_t i = 0; s_good[i]; i++)
		assert_null(tp__check_dns1123_subdomain(s_good[i]));
	for (size_t i = 0; s_bad[i]; i++)
		if (!tp__check_dns1123_subdomain(s_bad[i]))
			fail_msg("\"%s\" passed as a DNS-1123 subdomain", s_bad[i]);
	char longest[256];
	memset(longest, 'a', 253);
	longest[253] = '\0';
	assert_null(tp__check_dns1123_subdomain(longest));
	longest[253] = 'a';
	longest[254] = '\0';
	assert_string_equal(tp__check_dns1123_subdomain(longest),
			    "must be no more than 253 characters");
}

/* IsValidLabelValue's cases (validation_test.go TestIsValidLabelValue) and
 * a qualified name's prefix with a dot beside a dash (TestIsQualifiedName's
 * shapes). */
static void label_values_and_keys(void **state)
{
	(void)state;
	const char *msgs[TP_NAME_MSGS_MAX];
	static const char *const good[] = { "simple", "now-with-dashes", "1-starts-with-num",
					    "end-with-num-1", "1234", "", "a_b.C", NULL };
	static const char *const bad[] = { "nospecialchars%^=@", "Tama-nui-te-r\xc4\x81.is.M\xc4\x81ori.sun",
					   "\\backslashes\\are\\bad", "-starts-with-dash",
					   "ends-with-dash-", ".starts.with.dot", "ends.with.dot.",
					   NULL };
	for (size_t i = 0; good[i]; i++)
		assert_int_equal(tp__label_value_msgs(good[i], msgs), 0);
	for (size_t i = 0; bad[i]; i++)
		if (tp__label_value_msgs(bad[i], msgs) != 1)
			fail_msg("\"%s\" not refused once as a label value", bad[i]);
	static const char *const keys_good[] = { "trainer.kubeflow.org/trainjob-ancestor-step",
						 "1.2.3.4/5678", "example.com/Uppercase_Is_OK_123",
						 "requests.storage-foo", NULL };
	static const char *const keys_bad[] = { "a.-b/x", "a-.b/x", "a..b/x", ".a/x", "a./x",
						"A.b/x", "a/-x", "a/x_", "a/x y", NULL };
	for (size_t i = 0; keys_good[i]; i++)
		assert_int_equal(tp__qualified_name_msgs(keys_good[i], msgs), 0);
	for (size_t i = 0; keys_bad[i]; i++)
		if (tp__qualified_name_msgs(keys_bad[i], msgs) != 1)
			fail_msg("\"%s\" not refused once as a qualified name", keys_bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replicated_jobs_rule),
		cmocka_unit_test(wrong_types_on_the_way),
		cmocka_unit_test(first_member_wins),
		cmocka_unit_test(strict_job_rules),
		cmocka_unit_test(fields_since_at_their_paths),
		cmocka_unit_test(mounts_paths_and_modes),
		cmocka_unit_test(step_key_and_its_neighbours),
		cmocka_unit_test(container_names_and_ports),
		cmocka_unit_test(job_and_release_from_one_read),
		cmocka_unit_test(dns_names),
		cmocka_unit_test(label_values_and_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

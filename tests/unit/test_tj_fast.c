/*
 * test_tj_fast.c — the TrainJob review's shortcuts (issue 32) give the
 * answers of the long way: the TrainJob's fields looked up once into its
 * context (spec.trainer, spec.initializer, spec.runtimePatches, its name
 * and namespace, the template's replicatedJobs), the runtime's plan's step
 * and node container, and the job copy made from the node container up.
 * Each answer is held to the texts the API server and the checks give, with
 * the plan read and without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/pod/pod.h"
#include "tests/support/testutil.h"

/* A ClusterTrainingRuntime "rt" whose trainer job "node" has the Pod spec
 * pod (single-quoted JSON). */
static cJSON *runtime_with(const char *pod)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		 "[{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':%s}}}}]}}}}",
		 pod);
	return tt_jsq(buf);
}

/* TrainJob <name> of runtime rt with spec members spec (single-quoted,
 * after runtimeRef: "" or ",'k':v") and metadata members meta. */
static cJSON *trainjob_of(const char *meta, const char *spec)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{%s},'spec':{'runtimeRef':{'kind':'ClusterTrainingRuntime','name':'rt'}%s}}",
		 meta, spec);
	return tt_jsq(buf);
}

/* The strict answer to tj with store s (tt_result_text: its errors and
 * warnings). */
static char *review_once(tp_store *s, const cJSON *tj)
{
	tp_options opt = { .profile = TP_PROFILE_STRICT, .store = s };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, r), TP_OK);
	char *a = tt_result_text(r);
	tp_result_free(r);
	return a;
}

/* The strict answer to tj with rt in the store, the same with the plan
 * read and without it (the caller frees it; tj and rt are taken). */
static char *review(cJSON *rt, cJSON *tj)
{
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(tp_store_put(s, rt), TP_OK);
	tp__rt_plan_set_replay(false);
	char *whole = review_once(s, tj);
	tp__rt_plan_set_replay(true);
	char *planned = review_once(s, tj);
	if (strcmp(whole, planned))
		fail_msg("the plan answers\n%s\nthe whole check\n%s", planned, whole);
	free(whole);
	tp_store_free(s);
	cJSON_Delete(tj);
	return planned;
}

static void has(const char *answer, const char *want)
{
	if (!strstr(answer, want))
		fail_msg("no \"%s\" in\n%s", want, answer);
}

static void lacks(const char *answer, const char *unwanted)
{
	if (strstr(answer, unwanted))
		fail_msg("\"%s\" in\n%s", unwanted, answer);
}

/* The node container after another: the trainer's image is written into
 * the second container (the plan's node_index, the copy's path opened to
 * it), as Kubernetes' validateContainers checks it (validation_test.go
 * TestValidateContainers, "leading or trailing whitespace" image). */
static void node_container_after_another(void **state)
{
	(void)state;
	const char *pod = "{'containers':[{'name':'sidecar','image':'busybox:1'},"
			  "{'name':'node','image':'pytorch:2'}]}";
	char *a = review(runtime_with(pod),
			 trainjob_of("'name':'tj','namespace':'team-a'",
				     ",'trainer':{'image':' docker.io/me/train:1 '}"));
	has(a, "spec.trainer.image");
	has(a, "spec.template.spec.containers[1].image");
	lacks(a, "containers[0]");
	free(a);
	a = review(runtime_with(pod), trainjob_of("'name':'tj','namespace':'team-a'",
						   ",'trainer':{'image':'docker.io/me/train:1'}"));
	lacks(a, "spec.trainer.image");
	free(a);
}

/* The trainer's resources merged into the node container when it is not
 * the first (validation_test.go TestValidateResourceRequirements: a
 * request above its limit). */
static void resources_into_second_container(void **state)
{
	(void)state;
	const char *pod = "{'containers':[{'name':'sidecar','image':'busybox:1'},"
			  "{'name':'node','image':'pytorch:2','resources':{'limits':{'cpu':'1'}}}]}";
	char *a = review(runtime_with(pod),
			 trainjob_of("'name':'tj','namespace':'team-a'",
				     ",'trainer':{'resourcesPerNode':{'requests':{'cpu':'2'}}}"));
	has(a, "spec.trainer.resourcesPerNode.requests");
	has(a, "must be less than or equal to cpu limit of 1");
	has(a, "containers[1].resources.requests");
	free(a);
}

/* The initializer's env, read from the context's spec.initializer, is
 * checked where the TrainJob holds it (validation_test.go TestValidateEnv:
 * an invalid name). */
static void initializer_env_from_the_context(void **state)
{
	(void)state;
	const char *pod = "{'containers':[{'name':'node','image':'pytorch:2'}]}";
	char *a = review(runtime_with(pod),
			 trainjob_of("'name':'tj','namespace':'team-a'",
				     ",'initializer':{'dataset':{'env':[{'name':'a=b','value':'x'}]}}"));
	has(a, "spec.initializer.dataset.env[0].name");
	has(a, "the dataset-initializer's Pods would be invalid");
	free(a);
}

/* The TrainJob's name, read once into the context, names its Jobs: one too
 * long for JobSet's Pod names is refused at metadata.name (jobset
 * pkg/webhooks/jobset_webhook.go podNameTooLongErrorMsg). */
static void name_from_the_context(void **state)
{
	(void)state;
	const char *pod = "{'containers':[{'name':'node','image':'pytorch:2'}]}";
	char *a = review(runtime_with(pod),
			 trainjob_of("'name':'a-very-long-trainjob-name-that-fills-most-of-the-63-chars',"
				     "'namespace':'team-a'",
				     ""));
	has(a, "metadata.name");
	has(a, "JobSet name is too long");
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(node_container_after_another),
		cmocka_unit_test(resources_into_second_container),
		cmocka_unit_test(initializer_env_from_the_context),
		cmocka_unit_test(name_from_the_context),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

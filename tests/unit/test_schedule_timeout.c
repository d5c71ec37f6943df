/*
 * test_schedule_timeout.c — podGroupPolicy.coscheduling.scheduleTimeoutSeconds
 * after kubeflow/trainer#3872 (a CEL rule "self >= 0", merged after 8c0f5059):
 * the strict profile refuses a negative value with upstream's message now;
 * with a CRD that carries the rule the message is said once; the kubeflow
 * profile's built-in schema is the pinned CRD's, without it; a 0 stays
 * refused by the guides' rule (docs/rules.md: at least 1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"

#define PATH "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"
#define RULE "scheduleTimeoutSeconds must be greater than or equal to 0"

/* Errors of a ClusterTrainingRuntime whose coscheduling timeout is timeout,
 * created in profile p with crds (NULL: the built-in schema). */
static tp_result *verdict(tp_profile p, const tp_crds *crds, long timeout)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'gang','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'podGroupPolicy':{'coscheduling':{'scheduleTimeoutSeconds':%ld}},"
		 "'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':"
		 "{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':"
		 "{'template':{'spec':{'containers':[{'name':'node','image':'i'}]}}}}}]}}}}",
		 timeout);
	cJSON *obj = tt_jsq(text);
	tp_options opt = { .profile = p, .crds = crds };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate(&opt, TP_OP_CREATE, obj, NULL, res), TP_OK);
	cJSON_Delete(obj);
	tt_dump(res);
	return res;
}

/* How many errors res has at PATH. */
static size_t at_path(const tp_result *res)
{
	size_t n = 0;
	for (size_t i = 0; i < tp_result_error_count(res); i++)
		n += !strcmp(tp_result_error_at(res, i)->path ? tp_result_error_at(res, i)->path : "",
			     PATH);
	return n;
}

static void strict_refuses_negative_with_upstreams_rule(void **state)
{
	(void)state;
	tp_result *res = verdict(TP_PROFILE_STRICT, NULL, -1);
	assert_int_equal(at_path(res), 1);
	const tp_field_error *e = tp_result_error_at(res, 0);
	assert_int_equal(e->type, TP_FIELD_INVALID);
	assert_string_equal(e->value, "-1"); /* as the API server shows a failed rule's scalar */
	assert_string_equal(e->detail, RULE);
	tp_result_free(res);
	/* the pinned CRD has no such rule: the kubeflow profile lets it through */
	res = verdict(TP_PROFILE_KUBEFLOW, NULL, -1);
	assert_int_equal(at_path(res), 0);
	tp_result_free(res);
}

static void strict_still_refuses_zero(void **state)
{
	(void)state;
	tp_result *res = verdict(TP_PROFILE_STRICT, NULL, 0);
	assert_int_equal(at_path(res), 1);
	assert_true(tt_has_error(res, PATH, "must be greater than or equal to 1; set "
				 "scheduleTimeoutSeconds to 1 or more, or leave it out for the "
				 "default 60"));
	tp_result_free(res);
	res = verdict(TP_PROFILE_STRICT, NULL, 60);
	assert_int_equal(at_path(res), 0);
	tp_result_free(res);
	res = verdict(TP_PROFILE_KUBEFLOW, NULL, 0);
	assert_int_equal(at_path(res), 0);
	tp_result_free(res);
}

/* Upstream's ClusterTrainingRuntime CRD with #3872's rule on the field. */
static tp_crds *crds_with_rule(void)
{
	char *json = tt_crd_json("trainer.kubeflow.org_clustertrainingruntimes.yaml");
	cJSON *crd = tt_json(json);
	free(json);
	cJSON *field = (cJSON *)tp_get(cJSON_GetArrayItem(tp_get(crd, "spec.versions"), 0),
				       "schema.openAPIV3Schema.properties.spec.properties."
				       "podGroupPolicy.properties.coscheduling.properties."
				       "scheduleTimeoutSeconds");
	assert_non_null(field);
	assert_null(tp_get(field, "x-kubernetes-validations")); /* not in the pinned CRD */
	cJSON_AddItemToObject(field, "x-kubernetes-validations",
			      tt_jsq("[{'message':'" RULE "','rule':'self >= 0'}]"));
	tp_crds *crds = NULL;
	char why[256] = "";
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	assert_int_equal(tp_crds_add(crds, crd, why, sizeof(why)), TP_OK);
	cJSON_Delete(crd);
	return crds;
}

/* Once the CRD carries the rule, the refusal is the CRD's, in both
 * profiles, and strict does not say it a second time. */
static void crd_rule_said_once(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	tp_crds *crds = crds_with_rule();
	for (int strict = 0; strict < 2; strict++) {
		tp_result *res = verdict(strict ? TP_PROFILE_STRICT : TP_PROFILE_KUBEFLOW, crds, -1);
		assert_int_equal(at_path(res), 1);
		assert_true(tt_has_error(res, PATH, RULE));
		tp_result_free(res);
	}
	tp_crds_unref(crds);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strict_refuses_negative_with_upstreams_rule),
		cmocka_unit_test(strict_still_refuses_zero),
		cmocka_unit_test(crd_rule_said_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

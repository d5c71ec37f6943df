/*
 * test_schema_kinds.c — which kinds the CRDs answer for. The CRDs claim a
 * kind, not its whole group: with only the runtime CRDs of
 * trainer.kubeflow.org loaded (the TrainJob CRD deleted), a TrainJob is
 * checked by the built-in schema, while a kind or version that only a CRD
 * could serve is still "no matches for kind", as the API server says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/tj_fixtures.h"

/* A one-version CRD of trainer.kubeflow.org: spec is an object that keeps
 * whatever it is given, except numNodes, which must be 5 (a rule only this
 * CRD has, so a verdict shows which layer gave it). */
static void add_crd(tp_crds *c, const char *kind, const char *plural, const char *scope)
{
	char text[2048], why[256] = "";
	snprintf(text, sizeof(text),
		 "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
		 "'metadata':{'name':'%s.trainer.kubeflow.org'},'spec':{'group':'trainer.kubeflow.org',"
		 "'names':{'kind':'%s','plural':'%s'},'scope':'%s','versions':[{'name':'v1alpha1',"
		 "'served':true,'schema':{'openAPIV3Schema':{'type':'object','properties':{"
		 "'spec':{'type':'object','x-kubernetes-preserve-unknown-fields':true,'properties':{"
		 "'numNodes':{'type':'integer','minimum':5}}}}}}}]}}",
		 plural, kind, plural, scope);
	cJSON *crd = tt_jsq(text);
	int rc = tp_crds_add(c, crd, why, sizeof(why));
	if (rc)
		print_message("%s\n", why);
	assert_int_equal(rc, TP_OK);
	cJSON_Delete(crd);
}

/* The runtime CRDs only: the TrainJob CRD is deleted. */
static tp_crds *runtimes_only(void)
{
	tp_crds *c = NULL;
	assert_int_equal(tp_crds_new(&c), TP_OK);
	add_crd(c, "TrainingRuntime", "trainingruntimes", "Namespaced");
	add_crd(c, "ClusterTrainingRuntime", "clustertrainingruntimes", "Cluster");
	return c;
}

struct world {
	tp_crds *crds;
	tp_store *store;
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	w->crds = runtimes_only();
	w->store = tj_store();
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	tp_crds_unref(w->crds);
	tp_store_free(w->store);
	free(w);
	return 0;
}

/* tp_validate's verdict on text (CREATE, strict, the world's CRDs and store). */
static tp_result *verdict(const struct world *w, const char *text, int want_rc)
{
	cJSON *obj = tt_jsq(text);
	tp_options opt = { .crds = w->crds, .store = w->store };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_store_rdlock(w->store);
	assert_int_equal(tp_validate(&opt, TP_OP_CREATE, obj, NULL, res), want_rc);
	tp_store_unlock(w->store);
	cJSON_Delete(obj);
	return res;
}

static bool says_no_matches(const tp_result *res)
{
	for (size_t i = 0; i < tp_result_error_count(res); i++)
		if (strstr(tp_result_error_at(res, i)->detail, "no matches for kind"))
			return true;
	return false;
}

#define TRAINJOB(av, kind, spec)                                                              \
	"{'apiVersion':'" av "','kind':'" kind "','metadata':{'name':'tj','namespace':'team-a'}," \
	"'spec':{'runtimeRef':{'name':'torch-current'}" spec "}}"

/* A TrainJob, its CRD deleted: the built-in checks, not "no matches". */
static void trainjob_falls_back_to_builtins(void **state)
{
	struct world *w = *state;
	tp_result *res = verdict(w, TRAINJOB("trainer.kubeflow.org/v1alpha1", "TrainJob", ""), TP_OK);
	tt_dump(res);
	assert_true(tp_result_ok(res));
	tp_result_free(res);
	/* the built-in TrainJob schema speaks: numProcPerNode must be >= 1 */
	res = verdict(w, TRAINJOB("trainer.kubeflow.org/v1alpha1", "TrainJob",
				  ",'trainer':{'numProcPerNode':0}"), TP_OK);
	assert_false(says_no_matches(res));
	assert_true(tt_has_error(res, "spec.trainer.numProcPerNode",
				 "numProcPerNode must be greater than or equal to 1"));
	tp_result_free(res);
}

/* The runtimes' own CRDs still answer for them (their rule, not the built-in one). */
static void runtimes_keep_their_crds(void **state)
{
	struct world *w = *state;
	tp_result *res = verdict(w, "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':"
				    "'TrainingRuntime','metadata':{'name':'rt','namespace':'team-a',"
				    "'labels':{'trainer.kubeflow.org/framework':'torch'}},"
				    "'spec':{'numNodes':1}}", TP_OK);
	assert_true(tt_has_error(res, "spec.numNodes", "should be greater than or equal to 5"));
	tp_result_free(res);
}

/* What only a CRD could check is still reported, as the API server would. */
static void unknown_kinds_and_versions_still_reported(void **state)
{
	struct world *w = *state;
	/* a version no CRD serves, of a kind that has none */
	tp_result *res = verdict(w, TRAINJOB("trainer.kubeflow.org/v1", "TrainJob", ""), TP_OK);
	assert_true(tt_has_error(res, "kind", "no matches for kind \"TrainJob\" in version "
				 "\"trainer.kubeflow.org/v1\" (served: TrainingRuntime "
				 "trainer.kubeflow.org/v1alpha1, ClusterTrainingRuntime "
				 "trainer.kubeflow.org/v1alpha1)"));
	tp_result_free(res);
	/* a kind only its (absent) CRD knows */
	res = verdict(w, "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'OptimizationJob',"
			 "'metadata':{'name':'o'},'spec':{}}", TP_OK);
	assert_true(tt_has_error(res, "kind", "no matches for kind \"OptimizationJob\""));
	tp_result_free(res);
	/* a misspelt kind, with the hint */
	res = verdict(w, "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'Trainingruntime',"
			 "'metadata':{'name':'r'},'spec':{}}", TP_OK);
	assert_true(tt_has_error(res, "kind", "did you mean kind \"TrainingRuntime\"?"));
	tp_result_free(res);
	/* a version the runtime's CRD does not serve: at apiVersion */
	res = verdict(w, "{'apiVersion':'trainer.kubeflow.org/v1','kind':'TrainingRuntime',"
			 "'metadata':{'name':'r'},'spec':{}}", TP_OK);
	assert_true(tt_has_error(res, "apiVersion", "no matches for kind \"TrainingRuntime\" in "
				 "version \"trainer.kubeflow.org/v1\""));
	tp_result_free(res);
}

/* With the TrainJob CRD back, it answers for TrainJobs again. */
static void trainjob_crd_claims_its_kind(void **state)
{
	struct world *w = *state;
	add_crd(w->crds, "TrainJob", "trainjobs", "Namespaced");
	tp_result *res = verdict(w, TRAINJOB("trainer.kubeflow.org/v1alpha1", "TrainJob",
					     ",'numNodes':1"), TP_OK);
	assert_true(tt_has_error(res, "spec.numNodes", "should be greater than or equal to 5"));
	tp_result_free(res);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(trainjob_falls_back_to_builtins, setup, teardown),
		cmocka_unit_test_setup_teardown(runtimes_keep_their_crds, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_kinds_and_versions_still_reported, setup,
						teardown),
		cmocka_unit_test_setup_teardown(trainjob_crd_claims_its_kind, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

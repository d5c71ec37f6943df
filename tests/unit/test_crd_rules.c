/*
 * test_crd_rules.c — every x-kubernetes-validations rule of the shipped CRDs
 * (../shared/fixtures/upstream/crds: trainer.kubeflow.org's four and JobSet's)
 * compiles, and each distinct rule allows one object and refuses another
 * with the CRD's message at the CRD's path; plus the schema mistakes a user
 * makes (a typo, a bad quantity, a wrong version or kind).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"
#include "webhook/cli/crds.h"

static tp_crds *crds;

/* The shipped CRDs, as `--crds ../shared/fixtures/upstream/crds` loads them. */
static int load_crds(void **state)
{
	(void)state;
	if (!tt_shared_dir())
		return 0;
	char *dir = tt_shared_path("fixtures/upstream/crds");
	size_t added = 0;
	int rc = tp_crds_new(&crds) || tw_crds_load(crds, dir, stderr, &added) || added != 5;
	free(dir);
	return rc ? -1 : 0;
}

static int free_crds(void **state)
{
	(void)state;
	tp_crds_unref(crds);
	return 0;
}

static void every_rule_compiles(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	size_t rules, unsupported;
	tp_crds_rule_counts(crds, &rules, &unsupported);
	assert_int_equal(rules, 78);
	assert_int_equal(unsupported, 0);
	assert_int_equal(tp_crds_count(crds), 5);
}

/* Validate obj (UPDATE from old when given) with the CRDs only. */
static tp_result *check(const char *obj_text, const char *old_text)
{
	cJSON *obj = tt_jsq(obj_text), *old = old_text ? tt_jsq(old_text) : NULL;
	tp_options opt = { .crds = crds, .profile = TP_PROFILE_KUBEFLOW };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_validate(&opt, old ? TP_OP_UPDATE : TP_OP_CREATE, obj, old, res);
	assert_true(rc == TP_OK || rc == TP_EUNSUPPORTED);
	cJSON_Delete(obj);
	cJSON_Delete(old);
	return res;
}

typedef struct rule_case {
	const char *good, *bad, *old; /* old: both are UPDATEs from it */
	const char *path, *detail;    /* the refusal of bad */
} rule_case;

#define TJ(spec) "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':" \
		 "{'name':'tj','namespace':'default'},'spec':{'runtimeRef':{'name':'torch'}" spec "}}"
#define TJN(name) "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':" \
		  "{'name':'" name "'},'spec':{'runtimeRef':{'name':'torch'}}}"
#define RT(spec) "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime','metadata':" \
		 "{'name':'rt'},'spec':{" spec "}}"
#define JS(spec) "{'apiVersion':'jobset.x-k8s.io/v1alpha2','kind':'JobSet','metadata':" \
		 "{'name':'js'},'spec':{" spec "}}"
#define OJ(spec) "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'OptimizationJob','metadata':" \
		 "{'name':'oj'},'spec':{" spec "'trainJobTemplate':{'spec':{'runtimeRef':{'name':'torch'}}}," \
		 "'numTrials':4,'parallelTrials':2,'searchAlgorithm':{'random':{}},'objectives':[{'metric':'loss'}]," \
		 "'parameters':[{'name':'lr','searchSpace':{'uniform':{'min':'0.1','max':'0.5'}}}]}}"

static const rule_case cases[] = {
	/* TrainJob */
	{ TJN("ok-name"), TJN("Bad_Name"), NULL, "<nil>",
	  "metadata.name must match RFC 1035 DNS label format" },
	{ TJN("a"), TJN("a234567890123456789012345678901234567890123456789012345678901234"), NULL,
	  "<nil>", "metadata.name must be no more than 63 characters" },
	{ TJ(",'managedBy':'kueue.x-k8s.io/multikueue'"), TJ(",'managedBy':'me'"), NULL,
	  "spec.managedBy", "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue" },
	{ TJ(",'trainer':{'numProcPerNode':1}"), TJ(",'trainer':{'numProcPerNode':0}"), NULL,
	  "spec.trainer.numProcPerNode", "numProcPerNode must be greater than or equal to 1" },
	{ TJ(",'initializer':{'dataset':{'storageUri':'hf://x'}}"),
	  TJ(",'initializer':{'dataset':{'storageUri':'x'}}"), NULL,
	  "spec.initializer.dataset.storageUri", "storageUri may be empty, or it must be a valid URI" },
	{ TJ(",'initializer':{'model':{'storageUri':''}}"),
	  TJ(",'initializer':{'model':{'storageUri':'://'}}"), NULL,
	  "spec.initializer.model.storageUri", "storageUri may be empty, or it must be a valid URI" },
	{ TJ(",'activeDeadlineSeconds':5"), TJ(",'activeDeadlineSeconds':6"), TJ(",'activeDeadlineSeconds':5"),
	  "spec.activeDeadlineSeconds", "field is immutable" },
	{ TJ(",'managedBy':'kueue.x-k8s.io/multikueue'"), TJ(",'managedBy':'trainer.kubeflow.org/trainjob-controller'"),
	  TJ(",'managedBy':'kueue.x-k8s.io/multikueue'"), "spec.managedBy", "field is immutable" },
	{ TJ(",'trainer':{'numNodes':2}"), TJ(",'trainer':{'numNodes':3}"), TJ(",'trainer':{'numNodes':2}"),
	  "spec.trainer", "field is immutable" },
	{ TJ(",'initializer':{'model':{'storageUri':'hf://a'}}"), TJ(",'initializer':{'model':{'storageUri':'hf://b'}}"),
	  TJ(",'initializer':{'model':{'storageUri':'hf://a'}}"), "spec.initializer", "field is immutable" },
	/* TrainingRuntime (ClusterTrainingRuntime shares the schema) */
	{ RT("'mlPolicy':{'torch':{}}"), RT("'mlPolicy':{'torch':{},'mpi':{}}"), NULL, "spec.mlPolicy",
	  "Only one of the policy can be configured" },
	{ RT("'mlPolicy':{'mpi':{'numProcPerNode':1}}"), RT("'mlPolicy':{'mpi':{'numProcPerNode':0}}"), NULL,
	  "spec.mlPolicy.mpi.numProcPerNode", "NumProcPerNode in mpiPolicy must be >= 1" },
	{ RT("'mlPolicy':{'flux':{'numProcPerNode':2}}"), RT("'mlPolicy':{'flux':{'numProcPerNode':0}}"), NULL,
	  "spec.mlPolicy.flux.numProcPerNode", "NumProcPerNode in fluxPolicy must be >= 1" },
	{ RT("'mlPolicy':{'torch':{'envInjection':{'targets':[{'jobName':'node','containerNames':['trainer']}]}}}"),
	  RT("'mlPolicy':{'torch':{'envInjection':{'targets':[{'jobName':'node','containerNames':['node']}]}}}"), NULL,
	  "spec.mlPolicy.torch.envInjection.targets[0].containerNames",
	  "containerNames must not include the main node container" },
	{ RT("'template':{'spec':{'startupPolicy':{'startupPolicyOrder':'AnyOrder'},'replicatedJobs':"
	     "[{'name':'a','template':{}},{'name':'b','dependsOn':[{'name':'a','status':'Ready'}],'template':{}}]}}"),
	  RT("'template':{'spec':{'startupPolicy':{'startupPolicyOrder':'InOrder'},'replicatedJobs':"
	     "[{'name':'a','template':{}},{'name':'b','dependsOn':[{'name':'a','status':'Ready'}],'template':{}}]}}"),
	  NULL, "spec.template.spec", "StartupPolicy and DependsOn APIs are mutually exclusive" },
	{ RT("'template':{'spec':{'network':{'subdomain':'a'}}}"), RT("'template':{'spec':{'network':{'subdomain':'b'}}}"),
	  RT("'template':{'spec':{'network':{'subdomain':'a'}}}"), "spec.template.spec.network", "Value is immutable" },
	{ RT("'template':{'spec':{'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'v'}}]}]}}"),
	  RT("'template':{'spec':{'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'v','namespace':'x'}}]}]}}"),
	  NULL, "spec.template.spec.volumeClaimPolicies[0]", "namespace cannot be set for VolumeClaimPolicies templates" },
	/* JobSet */
	{ JS("'replicatedJobs':[{'name':'a','template':{}}],'successPolicy':{'operator':'All'}"),
	  JS("'replicatedJobs':[{'name':'a','template':{}}],'successPolicy':{'operator':'Any'}"),
	  JS("'replicatedJobs':[{'name':'a','template':{}}],'successPolicy':{'operator':'All'}"),
	  "spec.successPolicy", "Value is immutable" },
	{ JS("'replicatedJobs':[{'name':'b','template':{},'dependsOn':[{'name':'a','status':'Ready'}]}]"),
	  JS("'replicatedJobs':[{'name':'b','template':{},'dependsOn':[{'name':'a','status':'Complete'}]}]"),
	  JS("'replicatedJobs':[{'name':'b','template':{},'dependsOn':[{'name':'a','status':'Ready'}]}]"),
	  "spec.replicatedJobs[0].dependsOn", "Value is immutable" },
	/* OptimizationJob: a member given first wins over the default after it
	 * (cJSON reads the first of duplicate names) */
	{ OJ(""), OJ("'numTrials':1,"), NULL, "spec", "parallelTrials cannot exceed numTrials" },
	{ OJ(""), OJ("'searchAlgorithm':{'random':{},'grid':{}},"), NULL, "spec.searchAlgorithm",
	  "exactly one of the fields in [random grid] must be set" },
	{ OJ("'searchAlgorithm':{'grid':{}},'parameters':[{'name':'a','searchSpace':{'categorical':{'list':['x']}}}],"),
	  OJ("'searchAlgorithm':{'grid':{}},"), NULL, "spec", "Grid search requires all parameters to be Categorical" },
	{ OJ(""), OJ("'parameters':[{'name':'lr','searchSpace':{'uniform':{'min':'0.5','max':'0.1'}}}],"), NULL,
	  "spec.parameters[0].searchSpace.uniform", "min must be strictly less than max" },
	{ OJ("'parameters':[{'name':'lr','searchSpace':{'logUniform':{'min':'0.1','max':'1'}}}],"),
	  OJ("'parameters':[{'name':'lr','searchSpace':{'logUniform':{'min':'0','max':'1'}}}],"), NULL,
	  "spec.parameters[0].searchSpace.logUniform", "min must be strictly greater than 0" },
	{ OJ(""), OJ("'parameters':[{'name':'lr','searchSpace':{}}],"), NULL,
	  "spec.parameters[0].searchSpace", "exactly one of the fields in [uniform logUniform categorical" },
	{ OJ(""), OJ("'trainJobTemplate':{'metadata':{'name':'x'},'spec':{'runtimeRef':{'name':'torch'}}},"), NULL,
	  "spec.trainJobTemplate.metadata", "name and namespace cannot be set in a template." },
	{ OJ(""), OJ("'numTrials':5,"), OJ(""), "spec", "OptimizationJobSpec is immutable" },
};

static void shipped_rules(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const rule_case *c = &cases[i];
		tp_result *good = check(c->good, c->old ? c->old : NULL);
		tp_result *bad = check(c->bad, c->old ? c->old : NULL);
		bool refused = tt_has_error(bad, strcmp(c->path, "<nil>") ? c->path : "", c->detail);
		bool allowed = !tt_has_error(good, strcmp(c->path, "<nil>") ? c->path : "", c->detail);
		if (!refused || !allowed) {
			print_message("case %zu (%s): allowed %d refused %d\n", i, c->detail, allowed, refused);
			tt_dump(good);
			tt_dump(bad);
		}
		tp_result_free(good);
		tp_result_free(bad);
		assert_true(refused && allowed);
	}
}

/* spec.trainer of a TrainJob with n resource limits and n env items (a
 * list-map), in order or reversed, one value changed when change. */
static char *trainer_of(int n, bool reversed, bool change)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_adds(&b, "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
			"{'name':'tj','namespace':'default'},'spec':{'runtimeRef':{'name':'torch'},"
			"'trainer':{'resourcesPerNode':{'limits':{");
	for (int k = 0; k < n; k++) {
		int i = reversed ? n - 1 - k : k;
		tp_buf_addf(&b, "%s'example.com/r%d':'%d'", k ? "," : "", i, change && i == 3 ? 99 : i);
	}
	tp_buf_adds(&b, "}},'env':[");
	for (int k = 0; k < n; k++) {
		int i = reversed ? n - 1 - k : k;
		tp_buf_addf(&b, "%s{'name':'E%d','value':'v'}", k ? "," : "", i);
	}
	tp_buf_adds(&b, "]}}}");
	return b.data;
}

/* self == oldSelf over maps and list-maps, short and past the point where
 * they are compared through a table: members in any order, list-map items
 * in any order (listType map compares unordered), one value changed seen. */
static void transition_rules_on_large_values(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	static const int sizes[] = { 5, 100 };
	for (size_t s = 0; s < 2; s++) {
		char *old = trainer_of(sizes[s], false, false);
		char *same = trainer_of(sizes[s], true, false);
		char *changed = trainer_of(sizes[s], true, true);
		tp_result *r = check(same, old);
		assert_false(tt_has_error(r, "spec.trainer", "field is immutable"));
		tp_result_free(r);
		r = check(changed, old);
		assert_true(tt_has_error(r, "spec.trainer", "field is immutable"));
		tp_result_free(r);
		free(old);
		free(same);
		free(changed);
	}
}

/* The fields the runtime guides document beyond upstream's CRD: known in
 * strict (with a warning each), unknown to kubeflow; no error said twice. */
static void guide_fields_in_strict(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	const char *rt = RT("'mlPolicy':{'torch':{'numProcPerNode':'auto','elasticPolicy':{'minNodes':1,"
			    "'maxNodes':2}}},'template':{'spec':{}}");
	cJSON *obj = tt_jsq(rt);
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_options strict = { .crds = crds, .profile = TP_PROFILE_STRICT };
	assert_int_equal(tp_validate(&strict, TP_OP_CREATE, obj, NULL, res), TP_OK);
	/* the CRD in force lacks them: refused in both profiles, as kubectl's
	 * strict field validation refuses them (issue 30: strict refuses all
	 * that kubeflow refuses) */
	assert_true(tt_has_error(res, "spec.mlPolicy.torch.numProcPerNode",
				 "unknown field \"spec.mlPolicy.torch.numProcPerNode\""));
	assert_true(tt_has_error(res, "spec.mlPolicy.torch.elasticPolicy",
				 "unknown field \"spec.mlPolicy.torch.elasticPolicy\""));
	tp_result_clear(res);
	tp_options kf = { .crds = crds, .profile = TP_PROFILE_KUBEFLOW };
	assert_int_equal(tp_validate(&kf, TP_OP_CREATE, obj, NULL, res), TP_OK);
	assert_true(tt_has_error(res, "spec.mlPolicy.torch.numProcPerNode",
				 "unknown field \"spec.mlPolicy.torch.numProcPerNode\""));
	cJSON_Delete(obj);
	/* mpiImplementation Intel: the guides' value, which this CRD does not
	 * list: refused in both profiles */
	obj = tt_jsq(RT("'mlPolicy':{'mpi':{'mpiImplementation':'Intel'}},'template':{'spec':{}}"));
	tp_result_clear(res);
	assert_int_equal(tp_validate(&strict, TP_OP_CREATE, obj, NULL, res), TP_OK);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.mpiImplementation", "supported values: "));
	tp_result_clear(res);
	assert_int_equal(tp_validate(&kf, TP_OP_CREATE, obj, NULL, res), TP_OK);
	assert_true(tt_has_error(res, "spec.mlPolicy.mpi.mpiImplementation", "supported values: \"OpenMPI\", \"\""));
	cJSON_Delete(obj);
	/* one policy too many: said once, by the CRD's rule */
	obj = tt_jsq(RT("'mlPolicy':{'torch':{},'mpi':{}},'template':{'spec':{}}"));
	tp_result_clear(res);
	assert_int_equal(tp_validate(&strict, TP_OP_CREATE, obj, NULL, res), TP_OK);
	size_t n = 0;
	for (size_t i = 0; i < tp_result_error_count(res); i++)
		n += strstr(tp_result_error_at(res, i)->detail, "Only one of the policy") != NULL;
	assert_int_equal(n, 1);
	cJSON_Delete(obj);
	tp_result_free(res);
}

/* ObjectMeta's own rules, before the schema (apimachinery's words). */
static void object_meta(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	static const struct {
		const char *obj, *path, *detail;
	} metas[] = {
		{ "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime','metadata':"
		  "{'name':'Bad_Name'},'spec':{}}", "metadata.name", "a lowercase RFC 1123 subdomain" },
		{ "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime','metadata':"
		  "{},'spec':{}}", "metadata.name", "name or generateName is required" },
		{ "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime','metadata':"
		  "{'name':'r','labels':{'a':1}},'spec':{}}", "metadata.labels.a",
		  "metadata.labels.a in body must be of type string: \"integer\"" },
		{ "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime','metadata':"
		  "{'name':'r','labels':{'a':'not ok!'}},'spec':{}}", "metadata.labels",
		  "a valid label must be" }, /* ValidateLabels: at the map's path */
	};
	for (size_t i = 0; i < sizeof(metas) / sizeof(*metas); i++) {
		tp_result *res = check(metas[i].obj, NULL);
		bool found = tt_has_error(res, metas[i].path, metas[i].detail);
		if (!found)
			tt_dump(res);
		tp_result_free(res);
		assert_true(found);
	}
	tp_result *res = check("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainingRuntime',"
			       "'metadata':{'name':'ok','namespace':'team-a','labels':{'x':'y'}},"
			       "'spec':{}}", NULL);
	assert_false(tt_has_error(res, "metadata.name", NULL));
	assert_false(tt_has_error(res, "metadata.namespace", NULL));
	tp_result_free(res);
	/* a cluster-scoped kind's namespace is cleared by the API server, not refused */
	res = check("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		    "'metadata':{'name':'c','namespace':'team-a'},'spec':{}}", NULL);
	assert_false(tt_has_error(res, "metadata.namespace", NULL));
	assert_true(tt_has_warning(res, "metadata.namespace: \"team-a\" is cleared"));
	tp_result_free(res);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_rule_compiles),
		cmocka_unit_test(shipped_rules),
		cmocka_unit_test(transition_rules_on_large_values),
		cmocka_unit_test(guide_fields_in_strict),
		cmocka_unit_test(object_meta),
	};
	return cmocka_run_group_tests(tests, load_crds, free_crds);
}

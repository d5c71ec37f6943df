/*
 * test_merge.c — runtime template + runtimePatches, strategic merge, upsert.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "policy/patch/patch.h"
#include "tests/support/testutil.h"

/* JSON written with single quotes, for readability in C strings. */
#define js tt_jsq

static void assert_json(const cJSON *got, const char *want_text)
{
	cJSON *want = js(want_text);
	if (!tp_json_equal(got, want)) {
		char *g = cJSON_PrintUnformatted(got);
		print_message("got:  %s\nwant: %s\n", g ? g : "(null)", want_text);
		free(g);
		cJSON_Delete(want);
		fail();
	}
	cJSON_Delete(want);
}

/* A runtime whose spec.template is tmpl, a TrainJob whose runtimePatches
 * carry the given templates, and the merged result (malloc'd). */
static cJSON *merged(const char *tmpl, const char *patches, int want_rc, char *err, size_t n)
{
	char buf[8192];
	snprintf(buf, sizeof(buf), "{'spec':{'template':%s}}", tmpl);
	cJSON *rt = js(buf);
	cJSON *tj = NULL;
	if (patches) {
		snprintf(buf, sizeof(buf), "{'spec':{'runtimePatches':%s}}", patches);
		tj = js(buf);
	}
	cJSON *out = NULL;
	assert_int_equal(tp__runtime_template(rt, tj, &out, err, n), want_rc);
	cJSON_Delete(rt);
	cJSON_Delete(tj);
	return out;
}

static void metadata_overlay_in_patch_order(void **state)
{
	(void)state;
	cJSON *t = merged("{'metadata':{'labels':{'a':'1','b':'1'}},'spec':{}}",
			  "[{'manager':'m1','trainingRuntimeSpec':{'template':{'metadata':"
			  "{'labels':{'b':'2','c':'2'}}}}},"
			  "{'manager':'m2','trainingRuntimeSpec':{'template':{'metadata':"
			  "{'labels':{'c':'3'},'annotations':{'x/y':'z'}}}}}]",
			  TP_OK, NULL, 0);
	assert_json(t, "{'metadata':{'labels':{'a':'1','b':'2','c':'3'},'annotations':{'x/y':'z'}},"
		       "'spec':{}}");
	cJSON_Delete(t);
}

static void no_patches_copies_template(void **state)
{
	(void)state;
	cJSON *t = merged("{'spec':{'replicatedJobs':[{'name':'node'}]}}", NULL, TP_OK, NULL, 0);
	assert_json(t, "{'metadata':{},'spec':{'replicatedJobs':[{'name':'node'}]}}");
	cJSON_Delete(t);
	cJSON *rt = js("{'spec':{}}");
	cJSON *out = NULL;
	assert_int_equal(tp__runtime_template(rt, NULL, &out, NULL, 0), TP_OK);
	assert_json(out, "{'metadata':{},'spec':{}}");
	cJSON_Delete(out);
	cJSON_Delete(rt);
}

/* The view is the runtime's own template exactly when the copy would hold
 * the same fields; otherwise NULL, and the caller copies. */
static void template_view_only_when_no_copy_differs(void **state)
{
	(void)state;
	static const struct {
		const char *tmpl;
		bool view;
	} cases[] = {
		{ "{'spec':{'replicatedJobs':[{'name':'node','replicas':1}]}}", true },
		{ "{'metadata':{'labels':{'a':'1'},'annotations':{}},'spec':{}}", true },
		{ "{}", true },
		{ "{'spec':{'replicatedJobs':[{'name':'node','template':null}]}}", false },
		{ "{'spec':{'replicatedJobs':[[null]]}}", false },
		{ "{'metadata':{'labels':{'a':null}},'spec':{}}", false },
		{ "{'metadata':{'labels':'a=1'},'spec':{}}", false },
		{ "{'metadata':[],'spec':{}}", false },
		{ "{'spec':'x'}", false },
		{ "[]", false },
		{ "null", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf), "{'spec':{'template':%s}}", cases[i].tmpl);
		cJSON *rt = js(buf);
		const cJSON *view = tp__runtime_template_view(rt);
		/* 10 * case + 1 for a view: a failure names its case */
		assert_int_equal(10 * i + (view != NULL), 10 * i + cases[i].view);
		if (!view) {
			cJSON_Delete(rt);
			continue;
		}
		assert_ptr_equal(view, tp_get(rt, "spec.template"));
		cJSON *copy = NULL;
		assert_int_equal(tp__runtime_template(rt, NULL, &copy, NULL, 0), TP_OK);
		const char *paths[] = { "spec.replicatedJobs", "metadata.labels", "metadata.annotations" };
		for (size_t k = 0; k < 3; k++) {
			const cJSON *a = tp_get(view, paths[k]), *b = tp_get(copy, paths[k]);
			assert_true(a ? b && tp_json_equal(a, b) : !b);
		}
		cJSON_Delete(copy);
		cJSON_Delete(rt);
	}
	assert_null(tp__runtime_template_view(NULL));
}

#define JOBS_TMPL                                                                          \
	"{'spec':{'replicatedJobs':["                                                      \
	"{'name':'init','template':{'spec':{'template':{'spec':{'containers':"             \
	"[{'name':'dataset-initializer','image':'i'}]}}}}},"                               \
	"{'name':'node','replicas':1,'template':{'spec':{'template':{'spec':{"              \
	"'nodeSelector':{'a':'1'},'tolerations':[{'key':'t1'},{'key':'t2'}],"              \
	"'containers':[{'name':'node','image':'n','env':[{'name':'E1','value':'1'},"       \
	"{'name':'E2','value':'2'}],'volumeMounts':[{'name':'v','mountPath':'/a'}],"       \
	"'ports':[{'containerPort':29500,'name':'p'}]},{'name':'side','image':'s'}]}}}}}"  \
	"]}}"

static void replicated_jobs_merge_by_name_keep_order(void **state)
{
	(void)state;
	cJSON *t = merged(JOBS_TMPL,
			  "[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':["
			  "{'name':'node','template':{'metadata':{'labels':{'l':'v'}}}},"
			  "{'name':'init','template':{'spec':{'template':{'spec':"
			  "{'serviceAccountName':'sa'}}}}}]}}}}]",
			  TP_OK, NULL, 0);
	const cJSON *jobs = tp_get(t, "spec.replicatedJobs");
	assert_int_equal(cJSON_GetArraySize(jobs), 2);
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, 0), "name"), "init");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, 1), "name"), "node");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, 0),
				       "template.spec.template.spec.serviceAccountName"), "sa");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, 1), "template.metadata.labels.l"), "v");
	/* untouched parts stay */
	assert_non_null(tp_get(cJSON_GetArrayItem(jobs, 0), "template.spec.template.spec.containers"));
	assert_int_equal(cJSON_GetArraySize(tp_get(cJSON_GetArrayItem(jobs, 1),
				"template.spec.template.spec.containers")), 2);
	cJSON_Delete(t);
}

static const cJSON *node_pod(const cJSON *t)
{
	return tp_get(tp_find_named(tp_get(t, "spec.replicatedJobs"), "name", "node"),
		      "template.spec.template.spec");
}

#define NODE_PATCH(pod)                                                                 \
	"[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[" \
	"{'name':'node','template':{'spec':{'template':{'spec':" pod "}}}}]}}}}]"

static void containers_env_mounts_merge_by_key(void **state)
{
	(void)state;
	cJSON *t = merged(JOBS_TMPL,
			  NODE_PATCH("{'containers':[{'name':'side','image':'s2'},"
				     "{'name':'node','env':[{'name':'E2','value':'two'},{'name':'E3','value':'3'}],"
				     "'volumeMounts':[{'name':'w','mountPath':'/a'},{'name':'x','mountPath':'/b'}],"
				     "'ports':[{'containerPort':29500,'protocol':'TCP'},{'containerPort':8080}]},"
				     "{'name':'new','image':'z'}]}"),
			  TP_OK, NULL, 0);
	assert_json(tp_get(node_pod(t), "containers"),
		    "[{'name':'node','image':'n','env':[{'name':'E1','value':'1'},"
		    "{'name':'E2','value':'two'},{'name':'E3','value':'3'}],"
		    "'volumeMounts':[{'name':'w','mountPath':'/a'},{'name':'x','mountPath':'/b'}],"
		    "'ports':[{'containerPort':29500,'name':'p','protocol':'TCP'},{'containerPort':8080}]},"
		    "{'name':'side','image':'s2'},{'name':'new','image':'z'}]");
	/* order: existing elements first in their order, then new ones */
	const cJSON *c = tp_get(node_pod(t), "containers");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(c, 0), "name"), "node");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(c, 2), "name"), "new");
	const cJSON *env = tp_get(cJSON_GetArrayItem(c, 0), "env");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(env, 2), "name"), "E3");
	cJSON_Delete(t);
}

static void tolerations_replaced_node_selector_merged(void **state)
{
	(void)state;
	cJSON *t = merged(JOBS_TMPL,
			  NODE_PATCH("{'tolerations':[{'key':'t3'}],'nodeSelector':{'b':'2'}}"),
			  TP_OK, NULL, 0);
	assert_json(tp_get(node_pod(t), "tolerations"), "[{'key':'t3'}]");
	assert_json(tp_get(node_pod(t), "nodeSelector"), "{'a':'1','b':'2'}");
	cJSON_Delete(t);
}

static void null_deletes(void **state)
{
	(void)state;
	cJSON *t = merged(JOBS_TMPL,
			  NODE_PATCH("{'nodeSelector':{'a':null,'c':'3'},'tolerations':null,"
				     "'affinity':{'x':null,'y':{'z':null,'w':1}}}"),
			  TP_OK, NULL, 0);
	assert_json(tp_get(node_pod(t), "nodeSelector"), "{'c':'3'}");
	assert_null(tp_get(node_pod(t), "tolerations"));
	/* nulls in a subtree new to the template mean nothing */
	assert_json(tp_get(node_pod(t), "affinity"), "{'y':{'w':1}}");
	cJSON_Delete(t);
}

static void unknown_job_appended(void **state)
{
	(void)state;
	cJSON *t = merged(JOBS_TMPL,
			  "[{'manager':'a','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':"
			  "[{'name':'extra'},{'name':'node','replicas':1}]}}}},"
			  "{'manager':'b','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':"
			  "[{'name':'more'},{'name':'extra','replicas':3}]}}}}]",
			  TP_OK, NULL, 0);
	const cJSON *jobs = tp_get(t, "spec.replicatedJobs");
	assert_int_equal(cJSON_GetArraySize(jobs), 4);
	const char *want[] = { "init", "node", "extra", "more" };
	for (int i = 0; i < 4; i++)
		assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, i), "name"), want[i]);
	long long r = 0;
	assert_true(tp_get_int(cJSON_GetArrayItem(jobs, 2), "replicas", &r));
	assert_int_equal(r, 3);
	cJSON_Delete(t);
}

static void wrong_type_is_an_error_naming_the_path(void **state)
{
	(void)state;
	char err[512];
	cJSON *t = merged(JOBS_TMPL,
			  "[{'manager':'a'},{'manager':'b','trainingRuntimeSpec':{'template':{'spec':"
			  "{'replicatedJobs':[{'name':'node','template':{'spec':{'template':'oops'}}}]}}}}]",
			  TP_EINVAL, err, sizeof(err));
	assert_null(t);
	assert_string_equal(err, "spec.runtimePatches[1].trainingRuntimeSpec.template.spec."
				 "replicatedJobs[0].template.spec.template: must be an object");
	t = merged(JOBS_TMPL, NODE_PATCH("{'tolerations':{'key':'x'}}"), TP_EINVAL, err, sizeof(err));
	assert_string_equal(err, "spec.runtimePatches[0].trainingRuntimeSpec.template.spec."
				 "replicatedJobs[0].template.spec.template.spec.tolerations: must be a list");
	t = merged(JOBS_TMPL, NODE_PATCH("{'containers':[{'image':'x'}]}"), TP_EINVAL, err, sizeof(err));
	assert_non_null(strstr(err, "containers[0]: does not contain the merge key \"name\""));
	t = merged(JOBS_TMPL,
		   "[{'manager':'a','trainingRuntimeSpec':{'template':{'metadata':{'labels':{'k':1}}}}}]",
		   TP_EINVAL, err, sizeof(err));
	assert_string_equal(err, "spec.runtimePatches[0].trainingRuntimeSpec.template.metadata."
				 "labels[k]: must be a string");
	t = merged(JOBS_TMPL, "{'not':'a list'}", TP_EINVAL, err, sizeof(err));
	assert_string_equal(err, "spec.runtimePatches: must be a list");
	t = merged("'text'", NULL, TP_EINVAL, err, sizeof(err));
	assert_string_equal(err, "spec.template: must be an object");
}

static void result_lives_in_the_current_arena(void **state)
{
	(void)state;
	cJSON *rt = js("{'spec':{'template':" JOBS_TMPL "}}");
	cJSON *tj = js("{'spec':{'runtimePatches':" NODE_PATCH("{'nodeSelector':{'b':'2'}}") "}}");
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	tp_arena *prev = tp_arena_enter(a);
	cJSON *out = NULL;
	assert_int_equal(tp__runtime_template(rt, tj, &out, NULL, 0), TP_OK);
	assert_true(tp_arena_owns(a, out));
	assert_true(tp_arena_owns(a, tp_get(node_pod(out), "nodeSelector.b")));
	tp_arena_leave(prev);
	/* the inputs are untouched */
	assert_null(tp_get(tp_find_named(tp_get(rt, "spec.template.spec.replicatedJobs"), "name", "node"),
			   "template.spec.template.spec.nodeSelector.b"));
	tp_arena_free(a);
	cJSON_Delete(rt);
	cJSON_Delete(tj);
}

static void strategic_merge_on_lists_and_maps(void **state)
{
	(void)state;
	cJSON *ports = js("[{'containerPort':1,'name':'a'},{'containerPort':2}]");
	cJSON *p = js("[{'containerPort':2,'name':'b'},{'containerPort':3}]");
	assert_int_equal(tp__strategic_merge(ports, p, "ports"), TP_OK);
	assert_json(ports, "[{'containerPort':1,'name':'a'},{'containerPort':2,'name':'b'},"
			   "{'containerPort':3}]");
	cJSON_Delete(p);
	p = js("[{'containerPort':9}]");
	assert_int_equal(tp__strategic_merge(ports, p, "args"), TP_OK); /* atomic list */
	assert_json(ports, "[{'containerPort':9}]");
	cJSON_Delete(p);
	cJSON_Delete(ports);

	cJSON *res = js("{'limits':{'cpu':'1','memory':'1Gi'},'claims':[{'name':'gpu'}]}");
	p = js("{'limits':{'cpu':'2'},'requests':{'cpu':'1'},'claims':[{'name':'gpu','request':'r'},"
	       "{'name':'x'}]}");
	assert_int_equal(tp__strategic_merge(res, p, NULL), TP_OK);
	assert_json(res, "{'limits':{'cpu':'2','memory':'1Gi'},'requests':{'cpu':'1'},"
			 "'claims':[{'name':'gpu','request':'r'},{'name':'x'}]}");
	cJSON_Delete(p);
	p = js("[1]");
	assert_int_equal(tp__strategic_merge(res, p, NULL), TP_EINVAL);
	cJSON_Delete(p);
	cJSON_Delete(res);
}

static void upsert_named_replaces_or_appends(void **state)
{
	(void)state;
	cJSON *env = js("[{'name':'A','value':'1'},{'name':'B','value':'2'}]");
	assert_int_equal(tp__upsert_named(env, "name", js("{'name':'A','value':'x'}")), TP_OK);
	assert_int_equal(tp__upsert_named(env, "name", js("{'name':'C','value':'3'}")), TP_OK);
	assert_json(env, "[{'name':'A','value':'x'},{'name':'B','value':'2'},{'name':'C','value':'3'}]");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(env, 0), "value"), "x");
	/* the item is taken even when refused (ASan would report a leak) */
	assert_int_equal(tp__upsert_named(env, "name", js("{'value':'nameless'}")), TP_EINVAL);
	assert_int_equal(tp__upsert_named(NULL, "name", js("{'name':'A'}")), TP_EINVAL);
	assert_int_equal(cJSON_GetArraySize(env), 3);
	cJSON_Delete(env);
}

/* The upstream example 02-runtime-patches.yaml onto torch_distributed.yaml
 * (their content written out as JSON). */
static void upstream_runtime_patches_example(void **state)
{
	(void)state;
	cJSON *t = merged(
		"{'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"
		"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':{'spec':"
		"{'containers':[{'name':'node','image':'pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime'}]}}}}}]}}",
		"[{'manager':'example.io/platform-team','trainingRuntimeSpec':{'template':{"
		"'metadata':{'labels':{'team':'ml-platform','cost-center':'research'},"
		"'annotations':{'prometheus.io/scrape':'true','prometheus.io/port':'8080'}},"
		"'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
		"'serviceAccountName':'training-sa','nodeSelector':{'node-type':'training'},"
		"'tolerations':[{'key':'training-workload','operator':'Equal','value':'true',"
		"'effect':'NoSchedule'}]}}}}}]}}}}]",
		TP_OK, NULL, 0);
	assert_json(t,
		    "{'metadata':{'labels':{'team':'ml-platform','cost-center':'research'},"
		    "'annotations':{'prometheus.io/scrape':'true','prometheus.io/port':'8080'}},"
		    "'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"
		    "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':{'spec':{"
		    "'containers':[{'name':'node','image':'pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime'}],"
		    "'serviceAccountName':'training-sa','nodeSelector':{'node-type':'training'},"
		    "'tolerations':[{'key':'training-workload','operator':'Equal','value':'true',"
		    "'effect':'NoSchedule'}]}}}}}]}}");
	cJSON_Delete(t);
}

/* Lists and maps past TP_INDEX_SCAN_MAX are merged through indexes kept
 * for the whole merge: what a later patch finds, what an earlier one
 * appended, a member deleted, come out as for short ones. */
static void large_lists_merge_as_short_ones(void **state)
{
	(void)state;
	tp_buf rt = TP_BUF_INIT(0);
	tp_buf_adds(&rt, "{'spec':{'template':{'spec':{'replicatedJobs':[");
	for (int i = 0; i < 40; i++)
		tp_buf_addf(&rt, "%s{'name':'j%d','template':{'spec':{'template':{'spec':{"
				 "'containers':[{'name':'c','image':'i'}]%s}}}}}", i ? "," : "", i,
			    i ? "" : ",'nodeSelector':{'k0':'v','k1':'v','k2':'v','k3':'v','k4':'v',"
				     "'k5':'v','k6':'v','k7':'v','k8':'v','k9':'v','k10':'v','k11':'v',"
				     "'k12':'v','k13':'v','k14':'v','k15':'v','k16':'v','k17':'v'}");
	tp_buf_adds(&rt, "]}}}}");
	cJSON *runtime = js(rt.data);
	tp_buf_free(&rt);
	cJSON *tj = js("{'spec':{'runtimePatches':["
		       "{'manager':'a.io/1','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':["
		       "{'name':'j5','template':{'spec':{'template':{'spec':{'containers':[{'name':'c',"
		       "'image':'x5'}]}}}}},{'name':'jnew'},{'name':'jnew','replicas':2},"
		       "{'name':'j0','template':{'spec':{'template':{'spec':{'nodeSelector':"
		       "{'k3':null,'k4':'z','knew':'v'}}}}}}]}}}},"
		       "{'manager':'a.io/2','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':["
		       "{'name':'jnew','replicas':3},{'name':'j39','replicas':4}]}}}}]}}");
	cJSON *t = NULL;
	assert_int_equal(tp__runtime_template(runtime, tj, &t, NULL, 0), TP_OK);
	const cJSON *jobs = tp_get_array(t, "spec.replicatedJobs");
	assert_int_equal(cJSON_GetArraySize(jobs), 41);
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(jobs, 40), "name"), "jnew");
	long long n = 0;
	assert_true(tp_get_int(cJSON_GetArrayItem(jobs, 40), "replicas", &n) && n == 3);
	assert_true(tp_get_int(cJSON_GetArrayItem(jobs, 39), "replicas", &n) && n == 4);
	assert_json(tp_get(cJSON_GetArrayItem(jobs, 5), "template.spec.template.spec.containers"),
		    "[{'name':'c','image':'x5'}]");
	const cJSON *sel = tp_get_object(cJSON_GetArrayItem(jobs, 0),
					 "template.spec.template.spec.nodeSelector");
	assert_int_equal(cJSON_GetArraySize(sel), 18);
	assert_null(tp_member(sel, "k3"));
	assert_string_equal(tp_get_str(sel, "k4"), "z");
	assert_string_equal(sel->child->prev->string, "knew"); /* appended last */
	cJSON_Delete(t);
	cJSON_Delete(tj);
	cJSON_Delete(runtime);
}

/* tp__upsert_all: one index for all the items; the same as an upsert each. */
static void upsert_all_as_upsert_each(void **state)
{
	(void)state;
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_adds(&b, "[");
	for (int i = 0; i < 30; i++)
		tp_buf_addf(&b, "%s{'name':'E%d','value':'old'}", i ? "," : "", i);
	tp_buf_adds(&b, "]");
	cJSON *one = js(b.data), *all = js(b.data);
	tp_buf_free(&b);
	cJSON *items = js("[{'name':'E3','value':'new'},{'name':'F'},{'name':'F','value':'2'},"
			  "{'name':'E29','value':'new'}]");
	const cJSON *it;
	cJSON_ArrayForEach(it, items)
		assert_int_equal(tp__upsert_named(one, "name", cJSON_Duplicate(it, 1)), TP_OK);
	assert_int_equal(tp__upsert_all(all, "name", items), TP_OK);
	assert_true(tp_json_equal(one, all));
	assert_int_equal(cJSON_GetArraySize(all), 31);
	cJSON *bad = js("[{'name':'G'},{'value':'no name'}]");
	assert_int_equal(tp__upsert_all(all, "name", bad), TP_EINVAL);
	cJSON_Delete(bad);
	cJSON_Delete(items);
	cJSON_Delete(one);
	cJSON_Delete(all);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metadata_overlay_in_patch_order),
		cmocka_unit_test(no_patches_copies_template),
		cmocka_unit_test(template_view_only_when_no_copy_differs),
		cmocka_unit_test(replicated_jobs_merge_by_name_keep_order),
		cmocka_unit_test(containers_env_mounts_merge_by_key),
		cmocka_unit_test(tolerations_replaced_node_selector_merged),
		cmocka_unit_test(null_deletes),
		cmocka_unit_test(unknown_job_appended),
		cmocka_unit_test(wrong_type_is_an_error_naming_the_path),
		cmocka_unit_test(result_lives_in_the_current_arena),
		cmocka_unit_test(strategic_merge_on_lists_and_maps),
		cmocka_unit_test(upsert_named_replaces_or_appends),
		cmocka_unit_test(upstream_runtime_patches_example),
		cmocka_unit_test(large_lists_merge_as_short_ones),
		cmocka_unit_test(upsert_all_as_upsert_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

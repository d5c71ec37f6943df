/*
 * test_runtime_cache.c — a runtime's plan (policy/pod/plan.c): what its Pods
 * are, worked out once per runtime version when the store takes it, and a
 * TrainJob's check read from it. Its answers are held to the whole check's
 * (the plan not read) over every shipped and upstream runtime and runtimes
 * with findings in each segment a TrainJob rewrites; a runtime replaced in
 * the store answers with its new findings; two TrainJobs read one plan, the
 * runtime's own template (no copy of it per TrainJob); a runtime the store
 * does not hold gets a plan for the request; a removed runtime's plan goes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/pod/pod.h"
#include "tests/support/testutil.h"

/* A ClusterTrainingRuntime "rt" with mlPolicy ml, jobs before its trainer
 * job (each "{...}," or ""), and a trainer job "node" with Job spec members
 * job ("" or "'k':v,") and Pod spec pod (single-quoted JSON). */
static cJSON *runtime_of(const char *ml, const char *jobs, const char *job, const char *pod)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':%s,'template':{'spec':{'replicatedJobs':"
		 "[%s{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{%s'template':"
		 "{'spec':%s}}}}]}}}}",
		 ml, jobs, job, pod);
	return tt_jsq(buf);
}

static cJSON *runtime_with(const char *pod)
{
	return runtime_of("{'numNodes':1,'torch':{}}", "", "", pod);
}

/* TrainJob team-a/<name> of runtime ref (kind, name) with spec.trainer
 * (single-quoted JSON, or NULL). */
static cJSON *trainjob_of(const char *name, const char *kind, const char *ref,
			  const char *trainer)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'%s','namespace':'team-a'},'spec':{'runtimeRef':{'kind':'%s','name':'%s'}"
		 "%s%s}}",
		 name, kind, ref, trainer ? ",'trainer':" : "", trainer ? trainer : "");
	return tt_jsq(buf);
}

/* Every error and warning of r, formatted, one a line: what a plan's
 * answer must equal byte for byte. */
static char *answer_of(const tp_result *r)
{
	tp_buf b = TP_BUF_INIT(0);
	for (size_t i = 0; i < tp_result_error_count(r); i++) {
		assert_int_equal(tp_field_error_format(tp_result_error_at(r, i), &b), TP_OK);
		assert_int_equal(tp_buf_add(&b, "\n", 1), TP_OK);
	}
	for (size_t i = 0; i < tp_result_warning_count(r); i++) {
		const char *w = tp_result_warning_at(r, i);
		assert_int_equal(tp_buf_add(&b, "warning: ", 9), TP_OK);
		assert_int_equal(tp_buf_add(&b, w, strlen(w)), TP_OK);
		assert_int_equal(tp_buf_add(&b, "\n", 1), TP_OK);
	}
	assert_int_equal(tp_buf_add(&b, "", 1), TP_OK);
	return b.data;
}

/* The strict answer to tj (not freed) with store s. */
static char *review(tp_store *s, const cJSON *tj)
{
	tp_options opt = { .profile = TP_PROFILE_STRICT, .store = s };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, r), TP_OK);
	char *a = answer_of(r);
	tp_result_free(r);
	return a;
}

/* tj's answer with the plan read and without it must be the same; returns
 * how many jobs were read from the plan. */
static size_t same_with_and_without(tp_store *s, const cJSON *tj, const char *what)
{
	tp__rt_plan_set_replay(false);
	char *whole = review(s, tj);
	tp__rt_plan_set_replay(true);
	size_t before = tp__rt_plan_replays();
	char *planned = review(s, tj);
	if (strcmp(whole, planned))
		fail_msg("%s: the plan answers\n%s\nthe whole check\n%s", what, planned, whole);
	free(whole);
	free(planned);
	return tp__rt_plan_replays() - before;
}

/* What TrainJobs rewrite in a runtime's jobs: nothing; each of the
 * trainer's settings, valid and not; numNodes; all at once. */
static const char *const trainers[] = {
	NULL,
	"{'image':'docker.io/me/train:1'}",
	"{'image':' docker.io/me/train:1 '}",
	"{'command':['python','train.py'],'args':['--epochs','2']}",
	"{'env':[{'name':'LR','value':'0.1'},{'name':'a=b','value':'x'}]}",
	"{'env':[{'name':'POD','valueFrom':{'fieldRef':{'fieldPath':'spec.bogus'}}}]}",
	"{'resourcesPerNode':{'requests':{'cpu':'2','memory':'4Gi'}}}",
	"{'resourcesPerNode':{'requests':{'nvidia.com/gpu':2}}}",
	"{'resourcesPerNode':{'requests':{'cpu':'64'},'limits':{'cpu':'2'}}}",
	"{'resourcesPerNode':{'requests':{'cpu':'1500u'},'limits':{'cpu':'1m'}}}",
	"{'numNodes':3}",
	"{'numNodes':0}",
	"{'numNodes':200000}",
	"{'image':'x','numNodes':4,'env':[{'name':'A','value':'b'}],"
	"'resourcesPerNode':{'limits':{'memory':'1Gi'},'requests':{'memory':'2Gi'}}}",
	/* fields Kubernetes 1.32 drops (claims, gate off) or does not know */
	"{'resourcesPerNode':{'claims':[{'name':'gpu'}]}}",
	"{'env':[{'name':'F','valueFrom':{'fileKeyRef':{'path':'p','key':'k',"
	"'volumeName':'v'}}}]}",
};

/* Every TrainJob of trainers on runtime rt (stored), both answers alike. */
static size_t sweep(cJSON *rt)
{
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	const char *kind = tp_kind_name(tp_kind_of(rt));
	char name[256];
	snprintf(name, sizeof(name), "%s", tp_meta_name(rt));
	if (tp_kind_of(rt) == TP_KIND_TRAINING_RUNTIME) {
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(rt, "metadata");
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
		cJSON_AddStringToObject(meta, "namespace", "team-a");
	}
	assert_int_equal(tp_store_put(s, rt), TP_OK);
	size_t replayed = 0;
	for (size_t i = 0; i < sizeof(trainers) / sizeof(trainers[0]); i++) {
		cJSON *tj = trainjob_of("train", kind, name, trainers[i]);
		char what[512];
		snprintf(what, sizeof(what), "%s %s, trainer %s", kind, name,
			 trainers[i] ? trainers[i] : "(none)");
		replayed += same_with_and_without(s, tj, what);
		cJSON_Delete(tj);
	}
	tp_store_free(s);
	return replayed;
}

/* Every runtime of the files matching pattern, swept. */
static size_t sweep_files(const char *pattern)
{
	glob_t g;
	size_t replayed = 0, runtimes = 0;
	if (glob(pattern, 0, NULL, &g))
		return 0;
	for (size_t f = 0; f < g.gl_pathc; f++) {
		size_t len;
		char *data = tt_read_file(g.gl_pathv[f], &len);
		assert_non_null(data);
		tp_docs *docs = NULL;
		tp_load_error err;
		if (tp_load(data, len, NULL, &docs, &err) == TP_OK)
			for (size_t i = 0; i < tp_docs_count(docs); i++) {
				const tp_doc *d = tp_docs_at(docs, i);
				if (!d->obj || !tp_kind_is_runtime(tp_kind_of(d->obj)))
					continue;
				runtimes++;
				replayed += sweep(tp_docs_take(docs, i));
			}
		tp_docs_free(docs);
		free(data);
	}
	globfree(&g);
	assert_true(runtimes > 0);
	return replayed;
}

/* ------------------------------------------------------------ tests */

/* The shipped runtimes and upstream's: every TrainJob of trainers answered
 * alike, and read from the plan. */
static void shipped_runtimes_answer_alike(void **state)
{
	(void)state;
	assert_true(sweep_files("deploy/runtimes/*.yaml") > 0);
	TT_REQUIRE_SHARED(); /* the shipped runtimes are swept; upstream's need ../shared */
	char *up = tt_shared_path("fixtures/upstream/runtimes");
	char pattern[1024];
	snprintf(pattern, sizeof(pattern), "%s/*.yaml", up);
	assert_true(sweep_files(pattern) > 0);
	snprintf(pattern, sizeof(pattern), "%s/*/*.yaml", up);
	sweep_files(pattern);
	free(up);
}

/* Runtimes with findings before, between and after the segments a TrainJob
 * rewrites (the Job spec's counts, the node container's image, env and
 * resources), in other containers and jobs: each answered alike. */
static void runtimes_with_findings_answer_alike(void **state)
{
	(void)state;
	static const char *const pods[] = {
		"{'containers':[{'name':'node','image':'pytorch'}]}",
		"{'containers':[{'name':'node'}]}",
		"{'containers':[{'name':'Side','image':' x'},{'name':'node','image':'pytorch',"
		"'env':[{'name':'a b','value':'1'}],'ports':[{'containerPort':0}],"
		"'volumeMounts':[{'name':'gone','mountPath':'/x'}],"
		"'resources':{'requests':{'memory':'8Gi'},'limits':{'memory':'4Gi'}},"
		"'imagePullPolicy':'Sometimes'}],'nodeSelector':{'bad key!':'v'},"
		"'restartPolicy':'Sometimes'}",
		"{'initContainers':[{'name':'node','image':'busybox'}],"
		"'containers':[{'name':'node','image':'pytorch','terminationMessagePolicy':'Loud',"
		"'env':[{'name':'X','valueFrom':{'fieldRef':{'fieldPath':'metadata.nope'}}}]}]}",
		"{'containers':[{'name':'other','image':'a'}]}",
		"{'hostNetwork':true,'containers':[{'name':'node','image':'pytorch','ports':"
		"[{'containerPort':80},{'containerPort':80}]}],'volumes':[{'name':'V'}]}",
		/* fields 1.32 drops or does not know, in and out of the node container */
		"{'containers':[{'name':'node','image':'pytorch','resizePolicy':"
		"[{'resourceName':'cpu','restartPolicy':'NotRequired'}]}]}",
		"{'hostUsers':false,'containers':[{'name':'side','image':'a','env':[{'name':'F',"
		"'valueFrom':{'fileKeyRef':{'path':'p','key':'k','volumeName':'v'}}}]},"
		"{'name':'node','image':'pytorch'}]}",
	};
	static const char *const jobs[] = {
		"",
		"'completionMode':'Sometimes','parallelism':-1,'backoffLimit':-2,",
		"'maxFailedIndexes':5,",
		"'completions':3,'successPolicy':{'rules':[{'succeededCount':9}]},",
	};
	/* Flux writes its parts into the node job (a copy made whole): its
	 * answers alike too (none read from the plan) */
	for (size_t p = 0; p < sizeof(pods) / sizeof(pods[0]); p++)
		sweep(runtime_of("{'numNodes':2,'flux':{}}", "", "", pods[p]));
	for (size_t p = 0; p < sizeof(pods) / sizeof(pods[0]); p++)
		for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
			assert_true(sweep(runtime_of("{'numNodes':2,'torch':{}}",
						     "{'name':'dataset-initializer','template':"
						     "{'spec':{'parallelism':-3,'template':{'spec':"
						     "{'containers':[{'name':'d'}]}}}}},",
						     jobs[j], pods[p])) > 0);
		}
}

/* The store takes a new version of a runtime: TrainJobs are answered with
 * its findings, from its own plan. */
static void replaced_runtime_gives_new_findings(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	cJSON *v1 = runtime_with("{'containers':[{'name':'node','image':'pytorch'}]}");
	assert_int_equal(tp_store_put(s, v1), TP_OK);
	assert_non_null(tp__rt_plan_of(v1));
	cJSON *tj = trainjob_of("train", "ClusterTrainingRuntime", "rt", "{'image':'x'}");
	char *a = review(s, tj);
	assert_string_equal(a, "");
	free(a);
	cJSON *v2 = runtime_with("{'containers':[{'name':'node','image':'pytorch',"
				 "'volumeMounts':[{'name':'gone','mountPath':'/x'}]}]}");
	assert_int_equal(tp_store_put(s, v2), TP_OK);
	assert_null(tp__rt_plan_of(v1)); /* gone with its tree (compared, not read) */
	assert_non_null(tp__rt_plan_of(v2));
	size_t before = tp__rt_plan_replays();
	a = review(s, tj);
	assert_int_equal(tp__rt_plan_replays(), before + 1);
	assert_non_null(strstr(a, "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
				  "containers[0].volumeMounts[0].name: Not found: \"gone\""));
	free(a);
	assert_int_equal(same_with_and_without(s, tj, "v2"), 1);
	cJSON_Delete(tj);
	tp_store_free(s);
}

/* Two TrainJobs of one runtime read one plan: the runtime's own template,
 * no copy of it, each job read once; both answered as without the plan. */
static void two_trainjobs_read_one_plan(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	cJSON *rt = runtime_of("{'numNodes':2,'torch':{}}",
			       "{'name':'dataset-initializer','template':{'spec':{'template':"
			       "{'spec':{'containers':[{'name':'d','image':'i'}]}}}}},",
			       "", "{'containers':[{'name':'node','image':'pytorch'}]}");
	assert_int_equal(tp_store_put(s, rt), TP_OK);
	const tp_rt_plan *plan = tp__rt_plan_of(rt);
	assert_non_null(plan);
	assert_ptr_equal(tp__rt_plan_base(plan), tp_get(rt, "spec.template"));
	/* a runtime without findings: no arena, a few hundred bytes */
	print_message("the plan of a runtime of two jobs: %zu bytes\n", tp__rt_plan_bytes(plan));
	assert_true(tp__rt_plan_bytes(plan) < 1024);
	cJSON *a = trainjob_of("a", "ClusterTrainingRuntime", "rt",
			       "{'numNodes':3,'resourcesPerNode':{'requests':{'cpu':'1'}}}");
	cJSON *b = trainjob_of("b", "ClusterTrainingRuntime", "rt",
			       "{'image':'y','env':[{'name':'a=b','value':'x'}]}");
	size_t before = tp__rt_plan_replays();
	assert_int_equal(same_with_and_without(s, a, "a"), 2);
	assert_int_equal(same_with_and_without(s, b, "b"), 2);
	assert_int_equal(tp__rt_plan_replays(), before + 4);
	assert_ptr_equal(tp__rt_plan_of(rt), plan); /* the same plan: not rebuilt */
	char *ab = review(s, b);
	assert_non_null(strstr(ab, "spec.trainer.env: Invalid value: \"a=b\""));
	free(ab);
	cJSON_Delete(a);
	cJSON_Delete(b);
	tp_store_free(s);
}

/* A runtime the store does not hold (here given by the caller's lookup):
 * a plan for the request, read the same way, not kept. */
static const cJSON *outside;

static int lookup_outside(void *ctx, tp_kind k, const char *ns, const char *name,
			  const cJSON **out, char *why, size_t whylen)
{
	(void)ctx, (void)ns, (void)why, (void)whylen;
	*out = k == TP_KIND_CLUSTER_TRAINING_RUNTIME && !strcmp(name, "rt") ? outside : NULL;
	return *out ? TP_OK : TP_ENOTFOUND;
}

static void runtime_outside_the_store(void **state)
{
	(void)state;
	cJSON *rt = runtime_with("{'containers':[{'name':'node','image':'pytorch',"
				 "'resources':{'limits':{'cpu':'1'}}}]}");
	outside = rt;
	tp_lookup lookup = { lookup_outside, NULL, NULL };
	tp_options opt = { .profile = TP_PROFILE_STRICT, .lookup = &lookup };
	cJSON *tj = trainjob_of("train", "ClusterTrainingRuntime", "rt",
				"{'resourcesPerNode':{'requests':{'cpu':'2'}}}");
	size_t before = tp__rt_plan_replays();
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, r), TP_OK);
	assert_int_equal(tp__rt_plan_replays(), before + 1);
	assert_null(tp__rt_plan_of(rt));
	assert_true(tt_has_error(r, "spec.trainer.resourcesPerNode.requests",
				 "must be less than or equal to cpu limit of 1"));
	tp_result_free(r);
	cJSON_Delete(tj);
	cJSON_Delete(rt);
}

/* A runtime removed from the store takes its plan along. */
static void removed_runtime_takes_its_plan(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	cJSON *rt = runtime_with("{'containers':[{'name':'node','image':'pytorch'}]}");
	assert_int_equal(tp_store_put(s, rt), TP_OK);
	assert_non_null(tp__rt_plan_of(rt));
	assert_int_equal(tp_store_remove(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "rt"), TP_OK);
	assert_null(tp__rt_plan_of(rt)); /* compared, not read */
	tp_store_free(s);
}

/* pod/fields_since.c walks only the places where the release has a field to
 * refuse or warn about. A Job template with every field of its table, at
 * every place, answers at each supported minor with the findings the table
 * gives by hand (errors: the minor predates the field; warnings: its gate is
 * still off by default); a place or field the walk wrongly left out would
 * change a count. */
static void since_walk_skips_only_silent_places(void **state)
{
	(void)state;
	static const char ctr[] =
		"'resizePolicy':[],'restartPolicyRules':[],'securityContext':{'appArmorProfile':{}},"
		"'lifecycle':{'stopSignal':'SIGTERM','postStart':{'sleep':{}},'preStop':{'sleep':{}}},"
		"'volumeMounts':[{'name':'d','mountPath':'/d','recursiveReadOnly':'IfPossible'}],"
		"'env':[{'name':'a','valueFrom':{'fileKeyRef':{}}}],'resources':{'claims':[]}";
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'spec':{'podReplacementPolicy':'Failed','backoffLimitPerIndex':1,"
		 "'maxFailedIndexes':1,'managedBy':'x','successPolicy':{},'template':{'spec':{"
		 "'hostUsers':false,'resourceClaims':[],'resources':{},'hostnameOverride':'h',"
		 "'schedulingGroup':{},'securityContext':{'appArmorProfile':{},"
		 "'supplementalGroupsPolicy':'Merge','seLinuxChangePolicy':'Recursive'},"
		 "'volumes':[{'name':'d','image':{}}],'containers':[{'name':'c',%s}],"
		 "'initContainers':[{'name':'i','restartPolicy':'Always',%s}]}}}}",
		 ctr, ctr);
	cJSON *tmpl = tt_jsq(buf);
	/* by hand from the table: 1.29 ... 1.32 */
	static const struct { int minor; size_t errors, warnings; } want[] = {
		{ 29, 19, 10 }, { 30, 12, 10 }, { 31, 10, 9 }, { 32, 8, 10 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		tp_options opt = { .kubernetes_minor = want[i].minor };
		tp_podv v;
		tp_result *warnings;
		assert_int_equal(tp__podv_init(&v), TP_OK);
		assert_int_equal(tp_result_new(&warnings), TP_OK);
		v.rjob = "node";
		assert_int_equal(tp__pod_check_since(&v, &opt, tmpl, warnings), TP_OK);
		if (v.n != want[i].errors || tp_result_warning_count(warnings) != want[i].warnings)
			fail_msg("1.%d: %zu errors, %zu warnings; want %zu, %zu", want[i].minor, v.n,
				 tp_result_warning_count(warnings), want[i].errors,
				 want[i].warnings);
		tp_result_free(warnings);
		tp__podv_free(&v);
	}
	/* what a plan notes: every field of the table, whatever the release;
	 * 1.32 has something to say about some, the newest of none */
	tp_podv v;
	uint32_t present = 0, none = 1;
	assert_int_equal(tp__podv_init(&v), TP_OK);
	assert_int_equal(tp__pod_since_fields(&v, tmpl, &present), TP_OK);
	cJSON *plain = tt_jsq("{'spec':{'template':{'spec':{'containers':[{'name':'c'}]}}}}");
	assert_int_equal(tp__pod_since_fields(&v, plain, &none), TP_OK);
	assert_int_equal(v.n, 0);
	assert_int_equal(v.len, 0);
	assert_int_equal(__builtin_popcount(present), 23);
	assert_int_equal(none, 0);
	tp_options at32 = { .kubernetes_minor = 32 };
	assert_false(tp__pod_since_silent(&at32, present));
	assert_true(tp__pod_since_silent(&at32, none));
	assert_true(tp__pod_since_silent(&at32, present & UINT32_C(0x1f))); /* the JobSpec's */
	tp__podv_free(&v);
	cJSON_Delete(plain);
	cJSON_Delete(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shipped_runtimes_answer_alike),
		cmocka_unit_test(runtimes_with_findings_answer_alike),
		cmocka_unit_test(replaced_runtime_gives_new_findings),
		cmocka_unit_test(two_trainjobs_read_one_plan),
		cmocka_unit_test(runtime_outside_the_store),
		cmocka_unit_test(removed_runtime_takes_its_plan),
		cmocka_unit_test(since_walk_skips_only_silent_places),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

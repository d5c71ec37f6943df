/*
 * test_pod_cluster_state.c — the strict profile's refusals of a TrainJob's
 * Pods that depend on objects in the cluster (policy/pod/cluster_state.c),
 * decided from a store, through a lookup, or not at all:
 *   - ServiceAccount: kube's plugin/pkg/admission/serviceaccount
 *     admission_test.go TestFetchesUncachedServiceAccount (a missing account
 *     is forbidden, "error looking up service account ...") and
 *     TestAssignsDefaultServiceAccountAndBoundTokenWithNoSecretTokens (an
 *     empty name is "default", which the controller makes);
 *   - Priority: plugin/pkg/admission/priority admission_test.go
 *     TestPodAdmission "pod with a non-existing priority class" ("no
 *     PriorityClass with name ... was found") and "pod with a system
 *     priority class";
 *   - a negative PriorityClass value made into JobSet's priority label
 *     (kubernetes-sigs/jobset#1291);
 *   - what cannot be told: a warning, never a verdict;
 *   - the kubeflow profile left as it was;
 *   - tp_store_list and tp_lookup_list.
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

/* A ClusterTrainingRuntime "rt" with one trainer job "node" whose Pod spec
 * has containers (a single-quoted JSON array) and more (members, or ""). */
static cJSON *runtime_pod(const char *containers, const char *more)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		 "[{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':{'containers':%s%s%s}}}}}]}}}}",
		 containers, *more ? "," : "", more);
	return tt_jsq(buf);
}

static cJSON *runtime_with(const char *more)
{
	return runtime_pod("[{'name':'node','image':'pytorch'}]", more);
}

/* TrainJob team-a/train of "rt", with more spec members (or NULL). */
static cJSON *trainjob(const char *more)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'train','namespace':'team-a'},'spec':{'runtimeRef':{'name':'rt'}%s%s}}",
		 more ? "," : "", more ? more : "");
	return tt_jsq(buf);
}

/* runtimePatches giving the node job's Pods pod spec members (single
 * quoted JSON, no braces). */
#define PATCH(members)                                                                     \
	"'runtimePatches':[{'manager':'example.com/test','trainingRuntimeSpec':{'template':{'spec':"   \
	"{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"       \
	members "}}}}}]}}}}]"

static cJSON *sa(const char *ns, const char *name)
{
	char buf[256];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'v1','kind':'ServiceAccount','metadata':{'name':'%s',"
		 "'namespace':'%s'}}", name, ns);
	return tt_jsq(buf);
}

static cJSON *priority_class(const char *name, long long value)
{
	char buf[256];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','metadata':"
		 "{'name':'%s'},'value':%lld}", name, value);
	return tt_jsq(buf);
}

/* The cluster a test sees: a store, and (with a lookup) kinds it cannot
 * read. */
struct cluster {
	tp_store *store;
	tp_kind down; /* TP_KIND_UNKNOWN: none */
	int gets;     /* lookups of ServiceAccounts */
};

static int cluster_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		       char *why, size_t whylen)
{
	struct cluster *c = ctx;
	c->gets += k == TP_KIND_SERVICE_ACCOUNT;
	if (k == c->down) {
		snprintf(why, whylen, "GET %s: HTTP 403: forbidden", name);
		return TP_EUNAVAILABLE;
	}
	*out = tp_store_get(c->store, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

enum how { STORE, LOOKUP, LOOKUP_LIST };

static int cluster_list(void *ctx, tp_kind k, const char *ns, const cJSON **out, size_t max,
			size_t *n, char *why, size_t whylen)
{
	struct cluster *c = ctx;
	if (k == c->down) {
		snprintf(why, whylen, "GET /api/v1/namespaces/%s/%s: HTTP 403: forbidden", ns,
			 k == TP_KIND_LIMIT_RANGE ? "limitranges" : "resourcequotas");
		return TP_EUNAVAILABLE;
	}
	*n = tp_store_list(c->store, k, ns, out, max);
	return TP_OK;
}

/* Validate tj (CREATE) with rt and the objects objs (NULL-ended) in the
 * cluster, read from the store or through a lookup. */
static tp_result *review_in(tp_profile p, enum how how, struct cluster *c, cJSON *rt, cJSON *tj,
			    cJSON **objs)
{
	assert_int_equal(tp_store_new(&c->store), TP_OK);
	assert_int_equal(tp_store_put(c->store, rt), TP_OK);
	for (; objs && *objs; objs++)
		assert_int_equal(tp_store_put(c->store, *objs), TP_OK);
	tp_lookup lookup = { cluster_get, NULL, c, how == LOOKUP_LIST ? cluster_list : NULL };
	tp_options opt = { .profile = p };
	if (how != STORE)
		opt.lookup = &lookup;
	else
		opt.store = c->store;
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_store_rdlock(c->store);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, res), TP_OK);
	tp_store_unlock(c->store);
	tt_dump(res);
	tp_store_free(c->store);
	cJSON_Delete(tj);
	return res;
}

static tp_result *review(tp_profile p, enum how how, cJSON *rt, cJSON *tj, cJSON **objs)
{
	struct cluster c = { NULL, TP_KIND_UNKNOWN, 0 };
	return review_in(p, how, &c, rt, tj, objs);
}

static void only_error_is(const tp_result *r, const char *want)
{
	if (tp_result_error_count(r) != 1)
		fail_msg("%zu errors, want 1", tp_result_error_count(r));
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_field_error_format(tp_result_error_at(r, 0), &b), TP_OK);
	assert_string_equal(b.data, want);
	tp_buf_free(&b);
}

static void clean(tp_result *r)
{
	assert_true(tp_result_ok(r));
	assert_false(tp_result_unavailable(r));
	assert_int_equal(tp_result_warning_count(r), 0);
	tp_result_free(r);
}

/* ------------------------------------------------------- ServiceAccount */

#define SA_MISSING_RUNTIME                                                                     \
	"spec.template.spec.replicatedJobs[0].template.spec.template.spec.serviceAccountName: "  \
	"Forbidden: error looking up service account team-a/trainer: serviceaccount \"trainer\" " \
	"not found: in ClusterTrainingRuntime \"rt\" (replicated job \"node\"), so the Pods of "   \
	"Job.batch \"train-node-0\" would be forbidden in namespace \"team-a\"; create it first "  \
	"(kubectl create serviceaccount trainer -n team-a), or name an existing one (kubectl get " \
	"serviceaccounts -n team-a)"

/* TestFetchesUncachedServiceAccount's converse: the account is in no cache
 * and not on the server. Shown at the runtime's field. */
static void missing_service_account_at_the_runtime(void **state)
{
	(void)state;
	cJSON *other[] = { sa("team-b", "trainer"), NULL }; /* another namespace's */
	tp_result *r = review(SP, STORE, runtime_with("'serviceAccountName':'trainer'"), trainjob(NULL),
			      other);
	only_error_is(r, SA_MISSING_RUNTIME);
	tp_result_free(r);
	cJSON *lookup_other[] = { sa("team-b", "trainer"), NULL };
	r = review(SP, LOOKUP, runtime_with("'serviceAccountName':'trainer'"), trainjob(NULL),
		   lookup_other);
	only_error_is(r, SA_MISSING_RUNTIME);
	tp_result_free(r);
}

/* TestFetchesUncachedServiceAccount: the account exists: allowed. */
static void existing_service_account_allowed(void **state)
{
	(void)state;
	cJSON *objs[] = { sa("team-a", "trainer"), NULL };
	clean(review(SP, LOOKUP, runtime_with("'serviceAccountName':'trainer'"), trainjob(NULL),
		     objs));
	cJSON *objs2[] = { sa("team-a", "trainer"), NULL };
	clean(review(SP, STORE, runtime_with("'serviceAccountName':'trainer'"), trainjob(NULL),
		     objs2));
}

/* The deprecated serviceAccount stands for serviceAccountName when that is
 * empty (pkg/apis/core/v1 conversion). */
static void deprecated_service_account_member(void **state)
{
	(void)state;
	cJSON *objs[] = { sa("team-b", "x"), NULL };
	tp_result *r = review(SP, STORE, runtime_with("'serviceAccount':'trainer'"), trainjob(NULL),
			      objs);
	assert_int_equal(tp_result_error_count(r), 1);
	assert_true(tt_has_error(r, "spec.template.spec.replicatedJobs[0].template.spec.template."
				    "spec.serviceAccount",
				 "serviceaccount \"trainer\" not found"));
	tp_result_free(r);
}

/* TestAssignsDefaultServiceAccount...: no name is "default", and "default"
 * is made by the ServiceAccount controller in every namespace: never looked
 * up. */
static void default_service_account_not_looked_up(void **state)
{
	(void)state;
	struct cluster c = { NULL, TP_KIND_UNKNOWN, 0 };
	clean(review_in(SP, LOOKUP, &c, runtime_with("'serviceAccountName':'default'"),
			trainjob(NULL), NULL));
	assert_int_equal(c.gets, 0);
	clean(review_in(SP, LOOKUP, &c, runtime_with(""), trainjob(NULL), NULL));
	assert_int_equal(c.gets, 0);
}

/* A name the runtimePatches bring: shown there. */
static void missing_service_account_at_the_patches(void **state)
{
	(void)state;
	tp_result *r = review(SP, LOOKUP, runtime_with(""),
			      trainjob(PATCH("'serviceAccountName':'patched'")), NULL);
	only_error_is(r, "spec.runtimePatches: Forbidden: error looking up service account "
			 "team-a/patched: serviceaccount \"patched\" not found: the patched template "
			 "gives replicated job \"node\" serviceAccountName \"patched\", so the Pods of "
			 "Job.batch \"train-node-0\" would be forbidden in namespace \"team-a\"; create "
			 "it first (kubectl create serviceaccount patched -n team-a), or name an "
			 "existing one (kubectl get serviceaccounts -n team-a)");
	tp_result_free(r);
}

/* Nobody could tell: a warning that says what was not checked. */
static void unreadable_service_account_warns(void **state)
{
	(void)state;
	struct cluster c = { NULL, TP_KIND_SERVICE_ACCOUNT, 0 };
	tp_result *r = review_in(SP, LOOKUP, &c, runtime_with("'serviceAccountName':'trainer'"),
				 trainjob(NULL), NULL);
	assert_true(tp_result_ok(r));
	assert_false(tp_result_unavailable(r));
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0),
			    "ServiceAccount \"trainer\" of the Pods of replicated job \"node\" was not "
			    "checked: serviceaccounts \"trainer\" could not be looked up: GET trainer: "
			    "HTTP 403: forbidden");
	assert_string_equal(tp_result_warning_path_at(r, 0), "metadata.namespace");
	tp_result_free(r);
}

/* Without a lookup, a store that holds no ServiceAccount at all was not
 * given them (validate over TrainJobs alone): not checked, and not said on
 * every TrainJob; no PriorityClass given alike. */
static void store_without_service_accounts_says_nothing(void **state)
{
	(void)state;
	clean(review(SP, STORE, runtime_with("'serviceAccountName':'trainer',"
					     "'priorityClassName':'urgent'"),
		     trainjob(NULL), NULL));
}

/* Two jobs naming one account: looked up once, refused for each. */
static void one_lookup_per_account(void **state)
{
	(void)state;
	struct cluster c = { NULL, TP_KIND_UNKNOWN, 0 };
	cJSON *rt = tt_jsq(
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		"'metadata':{'name':'rt'},'spec':{'template':{'spec':{'replicatedJobs':["
		"{'name':'a','template':{'spec':{'template':{'spec':{'serviceAccountName':'s',"
		"'containers':[{'name':'c','image':'i'}]}}}}},"
		"{'name':'b','template':{'spec':{'template':{'spec':{'serviceAccountName':'s',"
		"'containers':[{'name':'c','image':'i'}]}}}}}]}}}}");
	tp_result *r = review_in(SP, LOOKUP, &c, rt, trainjob(NULL), NULL);
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "spec.template.spec.replicatedJobs[1].template.spec.template."
				    "spec.serviceAccountName",
				 "Job.batch \"train-b-0\" would be forbidden"));
	assert_int_equal(c.gets, 1);
	tp_result_free(r);
}

/* ------------------------------------------------------- PriorityClass */

/* TestPodAdmission "pod with a non-existing priority class". */
static void missing_priority_class(void **state)
{
	(void)state;
	cJSON *objs[] = { priority_class("other", 10), NULL };
	tp_result *r = review(SP, STORE, runtime_with("'priorityClassName':'urgent'"), trainjob(NULL),
			      objs);
	only_error_is(r, "spec.template.spec.replicatedJobs[0].template.spec.template.spec."
			 "priorityClassName: Forbidden: no PriorityClass with name urgent was found: "
			 "in ClusterTrainingRuntime \"rt\" (replicated job \"node\"), so the Pods of "
			 "Job.batch \"train-node-0\" would be forbidden in namespace \"team-a\"; create "
			 "the PriorityClass first, or name an existing one (kubectl get "
			 "priorityclasses)");
	tp_result_free(r);
}

/* TestPodAdmission "pod with a system priority class", and a class that
 * exists with a value of 0 or more. */
static void existing_priority_class_allowed(void **state)
{
	(void)state;
	cJSON *objs[] = { priority_class("urgent", 1000), priority_class("zero", 0),
			  priority_class("system-node-critical", 2000001000), NULL };
	clean(review(SP, LOOKUP, runtime_with("'priorityClassName':'urgent'"),
		     trainjob(PATCH("'priorityClassName':'system-node-critical'")), objs));
}

#define NEGATIVE_LABEL                                                                       \
	"spec.template.spec.replicatedJobs[0].template.spec.template.spec.priorityClassName: "  \
	"Invalid value: \"-5\": a valid label must be an empty string or consist of "           \
	"alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " \
	"character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'): PriorityClass \"low\" has value -5, "  \
	"which JobSet's Pod webhook copies into the label jobset.sigs.k8s.io/priority of every " \
	"Pod (kubernetes-sigs/jobset#1291, fixed after JobSet v0.12): in ClusterTrainingRuntime " \
	"\"rt\" (replicated job \"node\"), so the Pods of Job.batch \"train-node-0\" would be "   \
	"invalid at metadata.labels in namespace \"team-a\"; use a PriorityClass whose value is " \
	"0 or more"

/* kubernetes-sigs/jobset#1291: a negative value is no label value. */
static void negative_priority_makes_the_label_invalid(void **state)
{
	(void)state;
	cJSON *objs[] = { priority_class("low", -5), NULL };
	tp_result *r = review(SP, LOOKUP, runtime_with("'priorityClassName':'low'"), trainjob(NULL),
			      objs);
	only_error_is(r, NEGATIVE_LABEL);
	tp_result_free(r);
	/* exclusive placement by node selector: the webhook adds no label */
	cJSON *objs2[] = { priority_class("low", -5), NULL };
	clean(review(SP, LOOKUP,
		     runtime_with("'priorityClassName':'low'"),
		     trainjob(PATCH("'priorityClassName':'low'},'metadata':{'annotations':{"
				    "'alpha.jobset.sigs.k8s.io/node-selector':'true'}")),
		     objs2));
}

static void unreadable_priority_class_warns(void **state)
{
	(void)state;
	struct cluster c = { NULL, TP_KIND_PRIORITY_CLASS, 0 };
	tp_result *r = review_in(SP, LOOKUP, &c, runtime_with("'priorityClassName':'urgent'"),
				 trainjob(NULL), NULL);
	assert_true(tp_result_ok(r));
	assert_false(tp_result_unavailable(r));
	assert_true(tt_has_warning(r, "PriorityClass \"urgent\" of the Pods of replicated job "
				      "\"node\" was not checked: priorityclasses.scheduling.k8s.io "
				      "\"urgent\" could not be looked up: GET urgent: HTTP 403"));
	tp_result_free(r);
}

/* ------------------------------------------------------- profiles */

/* Upstream's webhook reads none of this. */
static void kubeflow_profile_unchanged(void **state)
{
	(void)state;
	cJSON *objs[] = { priority_class("low", -5), NULL };
	clean(review(KF, LOOKUP,
		     runtime_with("'serviceAccountName':'trainer','priorityClassName':'low'"),
		     trainjob(PATCH("'serviceAccountName':'nobody'")), objs));
}

/* ------------------------------------------------------- LimitRange */

/* A LimitRange "lr" of team-a with one item (single-quoted JSON). */
static cJSON *limits(const char *item)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'v1','kind':'LimitRange','metadata':{'name':'lr','namespace':"
		 "'team-a'},'spec':{'limits':[%s]}}", item);
	return tt_jsq(buf);
}

#define NODE(res) "[{'name':'node','image':'pytorch','resources':" res "}]"
#define LR_HINT "; ask for resources within it (kubectl describe limitrange lr -n team-a)"
#define LR_CONTEXT(job) \
	": LimitRange \"lr\" of namespace \"team-a\" refuses the Pods of replicated job \"" job \
	"\" (Job.batch \"train-" job "-0\"), its defaults applied" LR_HINT

/* TestPodLimitFunc "ctr-max-cpu-limit" turned over: the TrainJob's limit
 * over the max. The runtime's own Pods get the max as their default limit
 * (SetDefaults_LimitRangeItem) and pass: the TrainJob's field is shown. */
static void container_max_at_the_trainjob(void **state)
{
	(void)state;
	cJSON *objs[] = { limits("{'type':'Container','max':{'cpu':'2'}}"), NULL };
	tp_result *r = review(SP, STORE, runtime_with(""),
			      trainjob("'trainer':{'resourcesPerNode':{'limits':{'cpu':'4'}}}"),
			      objs);
	only_error_is(r, "spec.trainer.resourcesPerNode: Forbidden: maximum cpu usage per "
			 "Container is 2, but limit is 4" LR_CONTEXT("node"));
	tp_result_free(r);
	cJSON *ok[] = { limits("{'type':'Container','max':{'cpu':'2'}}"), NULL };
	clean(review(SP, STORE, runtime_with(""),
		     trainjob("'trainer':{'resourcesPerNode':{'limits':{'cpu':'1500m'}}}"), ok));
}

/* TestPodLimitFunc "ctr-min-memory-request" turned over: the runtime's own
 * request under the min, shown at the runtime. */
static void container_min_at_the_runtime(void **state)
{
	(void)state;
	cJSON *objs[] = { limits("{'type':'Container','min':{'memory':'1Gi'}}"), NULL };
	tp_result *r = review(SP, LOOKUP_LIST,
			      runtime_pod(NODE("{'requests':{'memory':'100Mi'}}"), ""),
			      trainjob(NULL), objs);
	only_error_is(r, "spec.template.spec.replicatedJobs[0].template.spec.template.spec: "
			 "Forbidden: minimum memory usage per Container is 1Gi, but request is "
			 "100Mi" LR_CONTEXT("node"));
	tp_result_free(r);
}

/* TestPodLimitFunc "ctr-max-cpu-ratio" turned over, and its %f. */
static void container_ratio(void **state)
{
	(void)state;
	cJSON *objs[] = { limits("{'type':'Container','maxLimitRequestRatio':{'cpu':'2'}}"),
			  NULL };
	tp_result *r = review(SP, STORE,
			      runtime_pod(NODE("{'requests':{'cpu':'1'},'limits':{'cpu':'4'}}"), ""),
			      trainjob(NULL), objs);
	only_error_is(r, "spec.template.spec.replicatedJobs[0].template.spec.template.spec: "
			 "Forbidden: cpu max limit to request ratio per Container is 2, but provided "
			 "ratio is 4.000000" LR_CONTEXT("node"));
	tp_result_free(r);
}

/* TestPodLimitFunc "pod-max-mem-limit" turned over: the Pod's total. */
static void pod_max_of_the_total(void **state)
{
	(void)state;
	cJSON *objs[] = { limits("{'type':'Pod','max':{'memory':'1Gi'}}"), NULL };
	tp_result *r = review(
		SP, STORE,
		runtime_pod("[{'name':'node','image':'i','resources':{'limits':{'memory':'600Mi'}}},"
			    "{'name':'side','image':'i','resources':{'limits':{'memory':'600Mi'}}}]",
			    ""),
		trainjob(NULL), objs);
	only_error_is(r, "spec.template.spec.replicatedJobs[0].template.spec.template.spec: "
			 "Forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi"
			 LR_CONTEXT("node"));
	tp_result_free(r);
}

/* TestPodLimitFuncApplyDefault / TestMergePodResourceRequirements: the
 * defaults fill what a container leaves unset before the checks; several
 * errors aggregate as "[e1, e2]" (resource names in order). */
static void defaults_applied_then_checked(void **state)
{
	(void)state;
	const char *lr = "{'type':'Container','max':{'cpu':'1','memory':'1Gi'},"
			 "'default':{'cpu':'1'},'defaultRequest':{'cpu':'500m'}}";
	cJSON *objs[] = { limits(lr), NULL };
	clean(review(SP, STORE, runtime_with(""), trainjob(NULL), objs)); /* all defaulted */
	cJSON *objs2[] = { limits(lr), NULL };
	tp_result *r = review(SP, STORE,
			      runtime_pod(NODE("{'requests':{'cpu':'2','memory':'2Gi'}}"), ""),
			      trainjob(NULL), objs2);
	only_error_is(r, "spec.template.spec.replicatedJobs[0].template.spec.template.spec: "
			 "Forbidden: [maximum cpu usage per Container is 1, but request is 2, maximum "
			 "memory usage per Container is 1Gi, but request is 2Gi]" LR_CONTEXT("node"));
	tp_result_free(r);
}

static void unlistable_limit_ranges_warn(void **state)
{
	(void)state;
	cJSON *objs[] = { limits("{'type':'Container','max':{'cpu':'1'}}"), NULL };
	struct cluster c = { NULL, TP_KIND_LIMIT_RANGE, 0 };
	tp_result *r = review_in(SP, LOOKUP_LIST, &c, runtime_with(""), trainjob(NULL), objs);
	assert_true(tp_result_ok(r));
	assert_false(tp_result_unavailable(r));
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0),
			    "the LimitRanges of namespace \"team-a\" were not checked against the "
			    "TrainJob's Pods: limitranges could not be listed: GET /api/v1/namespaces/"
			    "team-a/limitranges: HTTP 403: forbidden");
	tp_result_free(r);
	/* a lookup that offers no lists: nothing listed, nothing said */
	cJSON *objs2[] = { limits("{'type':'Container','max':{'cpu':'1'}}"), NULL };
	clean(review(SP, LOOKUP, runtime_with(""), trainjob(NULL), objs2));
}

/* ------------------------------------------------------- ResourceQuota */

static cJSON *quota(const char *spec_status)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'v1','kind':'ResourceQuota','metadata':{'name':'q','namespace':"
		 "'team-a'},%s}", spec_status);
	return tt_jsq(buf);
}

/* The admission controller's "exceeded quota: ..." for the TrainJob's
 * Pods together (2 nodes of 2 CPUs; 1 used of 4): a warning. */
static void quota_exceeded_warns(void **state)
{
	(void)state;
	cJSON *objs[] = { quota("'spec':{'hard':{'requests.cpu':'4','pods':'10'}},'status':"
				"{'hard':{'requests.cpu':'4','pods':'10'},'used':{'requests.cpu':"
				"'1','pods':'3'}}"),
			  NULL };
	tp_result *r = review(SP, LOOKUP_LIST, runtime_pod(NODE("{'limits':{'cpu':'2'}}"), ""),
			      trainjob("'trainer':{'numNodes':2}"), objs);
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 1);
	assert_string_equal(tp_result_warning_at(r, 0),
			    "the 2 Pods of TrainJob \"train\" together would exceed ResourceQuota "
			    "\"q\" of namespace \"team-a\" by requests.cpu=1: exceeded quota: q, "
			    "requested: requests.cpu=4, used: requests.cpu=1, limited: "
			    "requests.cpu=4; the Pods past it are refused until the quota frees up "
			    "(kubectl describe resourcequota q -n team-a)");
	tp_result_free(r);
}

static void quota_that_fits_or_is_scoped_says_nothing(void **state)
{
	(void)state;
	cJSON *objs[] = { quota("'status':{'hard':{'cpu':'8','count/pods':'2'},'used':"
				"{'cpu':'4'}}"),
			  NULL };
	clean(review(SP, STORE, runtime_pod(NODE("{'limits':{'cpu':'2'}}"), ""),
		     trainjob("'trainer':{'numNodes':2}"), objs));
	cJSON *scoped[] = { quota("'spec':{'scopes':['BestEffort'],'hard':{'pods':'0'}}"), NULL };
	clean(review(SP, STORE, runtime_with(""), trainjob(NULL), scoped));
}

/* ------------------------------------------------------- listing */

static cJSON *limit_range(const char *ns, const char *name)
{
	char buf[256];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'v1','kind':'LimitRange','metadata':{'name':'%s','namespace':'%s'},"
		 "'spec':{'limits':[]}}", name, ns);
	return tt_jsq(buf);
}

static void store_lists_a_namespace_by_name(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(tp_store_put(s, limit_range("team-a", "zeta")), TP_OK);
	assert_int_equal(tp_store_put(s, limit_range("team-a", "alpha")), TP_OK);
	assert_int_equal(tp_store_put(s, limit_range("team-b", "beta")), TP_OK);
	assert_int_equal(tp_store_put(s, limit_range("default", "d")), TP_OK);
	assert_int_equal(tp_store_put(s, sa("team-a", "gamma")), TP_OK);
	const cJSON *got[4];
	tp_store_rdlock(s);
	assert_int_equal(tp_store_list(s, TP_KIND_LIMIT_RANGE, "team-a", got, 4), 2);
	assert_string_equal(tp_meta_name(got[0]), "alpha");
	assert_string_equal(tp_meta_name(got[1]), "zeta");
	assert_int_equal(tp_store_list(s, TP_KIND_LIMIT_RANGE, "team-a", got, 1), 2);
	assert_string_equal(tp_meta_name(got[0]), "alpha");
	assert_int_equal(tp_store_list(s, TP_KIND_LIMIT_RANGE, "", got, 4), 1);
	assert_string_equal(tp_meta_name(got[0]), "d");
	assert_int_equal(tp_store_list(s, TP_KIND_RESOURCE_QUOTA, "team-a", got, 4), 0);
	tp_options opt = { .store = s };
	size_t n;
	assert_int_equal(tp_lookup_list(&opt, TP_KIND_LIMIT_RANGE, "team-b", got, 4, &n, NULL, 0),
			 TP_OK);
	assert_int_equal(n, 1);
	assert_int_equal(tp_lookup_list(&opt, TP_KIND_PRIORITY_CLASS, NULL, got, 4, &n, NULL, 0),
			 TP_EINVAL);
	tp_store_unlock(s);
	/* a lookup that cannot list says so */
	tp_lookup l = { cluster_get, NULL, NULL, NULL };
	opt = (tp_options){ .lookup = &l };
	assert_int_equal(tp_lookup_list(&opt, TP_KIND_LIMIT_RANGE, "team-a", got, 4, &n, NULL, 0),
			 TP_EUNSUPPORTED);
	tp_store_free(s);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_service_account_at_the_runtime),
		cmocka_unit_test(existing_service_account_allowed),
		cmocka_unit_test(deprecated_service_account_member),
		cmocka_unit_test(default_service_account_not_looked_up),
		cmocka_unit_test(missing_service_account_at_the_patches),
		cmocka_unit_test(unreadable_service_account_warns),
		cmocka_unit_test(store_without_service_accounts_says_nothing),
		cmocka_unit_test(one_lookup_per_account),
		cmocka_unit_test(missing_priority_class),
		cmocka_unit_test(existing_priority_class_allowed),
		cmocka_unit_test(negative_priority_makes_the_label_invalid),
		cmocka_unit_test(unreadable_priority_class_warns),
		cmocka_unit_test(kubeflow_profile_unchanged),
		cmocka_unit_test(container_max_at_the_trainjob),
		cmocka_unit_test(container_min_at_the_runtime),
		cmocka_unit_test(container_ratio),
		cmocka_unit_test(pod_max_of_the_total),
		cmocka_unit_test(defaults_applied_then_checked),
		cmocka_unit_test(unlistable_limit_ranges_warn),
		cmocka_unit_test(quota_exceeded_warns),
		cmocka_unit_test(quota_that_fits_or_is_scoped_says_nothing),
		cmocka_unit_test(store_lists_a_namespace_by_name),
	};
	return cmocka_run_group_tests_name("pod_cluster_state", tests, NULL, NULL);
}

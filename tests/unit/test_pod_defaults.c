/*
 * test_pod_defaults.c — the strict profile checks a replicated job as the
 * API server will see it (policy/pod/defaults.c): with what JobSet's
 * webhook and controller write into it, then Kubernetes v1.32's defaulting
 * of the Job (pkg/apis/batch/v1 SetObjectDefaults_Job) and what its feature
 * gates drop (pkg/api/pod/util.go dropDisabledFields). First the three
 * false denials of issue 29 as a runtime's own check, a TrainJob's check
 * and Pod Security see them (a volume without a source, the subdomain
 * JobSet overwrites, procMount on a cluster without ProcMountType), with
 * pod-security-admission's fixture restrictedvolumes0; then each default
 * the pass writes, each it leaves, and that a template with nothing to
 * write is not copied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/admission/trainjob.h"
#include "policy/patch/patch.h"
#include "policy/pod/pod.h"
#include "tests/support/testutil.h"

#define SP TP_PROFILE_STRICT

/* Trees a test reads to its end, deleted after it (teardown). */
static cJSON *kept[32];
static size_t nkept;

static cJSON *keep(cJSON *j)
{
	assert_true(nkept < sizeof(kept) / sizeof(kept[0]));
	return kept[nkept++] = j;
}

static int release_kept(void **state)
{
	(void)state;
	while (nkept)
		cJSON_Delete(kept[--nkept]);
	return 0;
}

/* What restricted Pod Security asks of every container. */
#define SC                                                                                      \
	"'securityContext':{'allowPrivilegeEscalation':false,'capabilities':{'drop':['ALL']},"  \
	"'runAsNonRoot':true,'seccompProfile':{'type':'RuntimeDefault'}}"

/* A ClusterTrainingRuntime "rt" (torch) with spec.template.spec members
 * net ("" or "'network':{...},") and one trainer job "node" whose Pod spec
 * is pod (single-quoted JSON). */
static cJSON *runtime_of(const char *net, const char *pod)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{%s"
		 "'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':%s}}}}]}}}}",
		 net, pod);
	return tt_jsq(buf);
}

static cJSON *trainjob(void)
{
	return tt_jsq("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		      "{'name':'train','namespace':'team-a'},'spec':{'runtimeRef':{'name':'rt'},"
		      "'trainer':{'numNodes':2}}}");
}

/* got is the JSON want (single-quoted). */
static void json_is(const cJSON *got, const char *want)
{
	cJSON *w = tt_jsq(want);
	if (!tp_json_equal(got, w)) {
		char *g = got ? cJSON_PrintUnformatted(got) : NULL;
		fail_msg("got %s, want %s", g ? g : "(none)", want);
	}
	cJSON_Delete(w);
}

/* Namespace team-a with Pod Security enforcing level (NULL: no labels). */
static cJSON *namespace_of(const char *level)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team-a'%s%s%s}}",
		 level ? ",'labels':{'pod-security.kubernetes.io/enforce':'" : "",
		 level ? level : "", level ? "'}" : "");
	return tt_jsq(buf);
}

static int store_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		     char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	*out = tp_store_get(ctx, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

/* The strict review of TrainJob "train" of rt in namespace ns (NULL: no
 * Namespace). Takes ns. */
static tp_result *review(const cJSON *rt, cJSON *ns)
{
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tp_store_put(store, cJSON_Duplicate(rt, 1)), TP_OK);
	if (ns)
		assert_int_equal(tp_store_put(store, ns), TP_OK);
	tp_lookup lookup = { store_get, NULL, store };
	tp_options opt = { .profile = SP, .lookup = &lookup };
	cJSON *tj = trainjob();
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, res), TP_OK);
	tt_dump(res);
	tp_store_free(store);
	cJSON_Delete(tj);
	return res;
}

/* The strict check of rt itself. */
static tp_result *runtime_review(const cJSON *rt)
{
	tp_options opt = { .profile = SP };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, res), TP_OK);
	tt_dump(res);
	return res;
}

/* Neither the runtime's check nor the TrainJob's (in ns, at level, or
 * without a Namespace) has anything to say about Pod Security or errors. */
static void all_allowed(const cJSON *rt, const char *level)
{
	tp_result *r = runtime_review(rt);
	assert_int_equal(tp_result_error_count(r), 0);
	tp_result_free(r);
	r = review(rt, NULL);
	assert_int_equal(tp_result_error_count(r), 0);
	tp_result_free(r);
	if (!level)
		return;
	r = review(rt, namespace_of(level));
	assert_int_equal(tp_result_error_count(r), 0);
	assert_false(tt_has_warning(r, "PodSecurity"));
	tp_result_free(r);
}

/* The TrainJob's jobs as its check sees them; the first one's Pod spec. */
typedef struct checked {
	tp_tj_ctx ctx;
	tp_result *res;
	tp_pod_checked *jobs;
	size_t n;
} checked;

static const tp_options strict = { .profile = SP };

static const cJSON *checked_pod(checked *c, const cJSON *rt, cJSON *tj)
{
	assert_int_equal(tp_result_new(&c->res), TP_OK);
	c->ctx = (tp_tj_ctx){ .opt = &strict, .op = TP_OP_CREATE, .job = tj, .runtime = rt,
			      .res = c->res };
	assert_int_equal(tp__runtime_template(rt, NULL, &c->ctx.owned[0], NULL, 0), TP_OK);
	assert_int_equal(tp__runtime_template(rt, tj, &c->ctx.owned[1], NULL, 0), TP_OK);
	c->ctx.base = c->ctx.owned[0];
	c->ctx.tmpl = c->ctx.owned[1];
	assert_int_equal(tp__pod_checked_jobs(&c->ctx, &c->jobs, &c->n), TP_OK);
	assert_int_equal(c->n, 1);
	assert_non_null(c->jobs[0].copy);
	return tp_get(c->jobs[0].copy, "spec.template.spec");
}

/* The Pod spec's first container. */
static const cJSON *node(const cJSON *pod)
{
	return cJSON_GetArrayItem(tp_get(pod, "containers"), 0);
}

static void checked_free(checked *c)
{
	tp__pod_checked_free(c->jobs, c->n);
	cJSON_Delete(c->ctx.owned[0]);
	cJSON_Delete(c->ctx.owned[1]);
	cJSON_Delete((cJSON *)c->ctx.job);
	tp_result_free(c->res);
}

/* ------------------------------------------------ issue 29's denials */

/* SetDefaults_Volume: a volume with no source is an emptyDir. Before, the
 * core check said "must specify a volume type" (and its mount "Not
 * found"), and restricted Pod Security "restricted volume types ...
 * unknown". */
static void volume_without_source_is_an_empty_dir(void **state)
{
	(void)state;
	cJSON *rt = runtime_of("", "{'volumes':[{'name':'scratch'}],'containers':[{'name':'node',"
				   "'image':'pytorch'," SC ",'volumeMounts':[{'name':'scratch',"
				   "'mountPath':'/scratch'}]}]}");
	all_allowed(rt, "restricted");
	checked c;
	const cJSON *pod = checked_pod(&c, rt, trainjob());
	json_is(tp_get(pod, "volumes"), "[{'name':'scratch','emptyDir':{}}]");
	checked_free(&c);
	cJSON_Delete(rt);
}

/* pod-security-admission test/testdata/restricted/v1.29/pass/
 * restrictedvolumes0.yaml (the same for v1.32): its volume0 has no source;
 * the one fixture of the suite the strict profile refused. Its container1
 * is named node here: a trainer job must have one. */
static void psa_fixture_restrictedvolumes0(void **state)
{
	(void)state;
	cJSON *rt = runtime_of(
		"",
		"{'containers':[{'image':'registry.k8s.io/pause','name':'node',"
		"'securityContext':{'allowPrivilegeEscalation':false,'capabilities':{'drop':['ALL']}}}],"
		"'initContainers':[{'image':'registry.k8s.io/pause','name':'initcontainer1',"
		"'securityContext':{'allowPrivilegeEscalation':false,'capabilities':{'drop':['ALL']}}}],"
		"'securityContext':{'runAsNonRoot':true,'seccompProfile':{'type':'RuntimeDefault'}},"
		"'volumes':[{'name':'volume0'},{'emptyDir':{},'name':'volume1'},{'name':'volume2',"
		"'secret':{'secretName':'test'}},{'name':'volume3','persistentVolumeClaim':"
		"{'claimName':'test'}},{'downwardAPI':{'items':[{'fieldRef':{'fieldPath':"
		"'metadata.labels'},'path':'labels'}]},'name':'volume4'},{'configMap':{'name':'test'},"
		"'name':'volume5'},{'name':'volume6','projected':{'sources':[]}}]}");
	all_allowed(rt, "restricted");
	/* the Pods as Pod Security sees them, at every version it has */
	checked c;
	const cJSON *pod = checked_pod(&c, rt, trainjob());
	tp_buf d = TP_BUF_INIT(0);
	tp_psa_lv lv = { TP_PSA_RESTRICTED, TP_PSA_LATEST };
	bool ok = false;
	cJSON *tmpl = keep(cJSON_CreateObject());
	assert_true(cJSON_AddItemReferenceToObject(tmpl, "spec", (cJSON *)pod));
	assert_int_equal(tp_psa_check_template(&lv, tmpl, &d, &ok), TP_OK);
	assert_true(ok);
	tp_buf_free(&d);
	checked_free(&c);
	cJSON_Delete(rt);
}

/* JobSet's constructJob writes the JobSet's subdomain (network.subdomain,
 * else its name, the TrainJob's) over the template's when DNS hostnames
 * are on, as they are unless network.enableDNSHostnames is false: a bad
 * one in the template never reaches the API server. */
static void subdomain_is_the_jobsets(void **state)
{
	(void)state;
	static const char pod[] = "{'subdomain':'Not_A_Label','containers':[{'name':'node',"
				  "'image':'pytorch'}]}";
	cJSON *rt = runtime_of("", pod);
	all_allowed(rt, NULL);
	checked c;
	assert_string_equal(tp_get_str(checked_pod(&c, rt, trainjob()), "subdomain"), "train");
	checked_free(&c);
	cJSON_Delete(rt);

	rt = runtime_of("'network':{'subdomain':'svc'},", pod);
	all_allowed(rt, NULL);
	assert_string_equal(tp_get_str(checked_pod(&c, rt, trainjob()), "subdomain"), "svc");
	checked_free(&c);
	cJSON_Delete(rt);

	/* without DNS hostnames the template's own reaches the API server */
	rt = runtime_of("'network':{'enableDNSHostnames':false},", pod);
	tp_result *r = runtime_review(rt);
	assert_true(tt_has_error(r, "spec.template.spec.replicatedJobs[0].template.spec.template."
				 "spec.subdomain", "RFC 1123 label"));
	tp_result_free(r);
	r = review(rt, NULL);
	assert_int_equal(tp_result_error_count(r), 1);
	tp_result_free(r);
	cJSON_Delete(rt);
}

/* ProcMountType is off by default in v1.32: dropDisabledProcMountField
 * makes a procMount that is set "Default", so baseline Pod Security sees
 * no Unmasked, and the core check no value outside its enumeration. */
static void proc_mount_as_v1_32_drops_it(void **state)
{
	(void)state;
	cJSON *rt = runtime_of("", "{'containers':[{'name':'node','image':'pytorch',"
				   "'securityContext':{'procMount':'Unmasked'}}]}");
	all_allowed(rt, "baseline");
	checked c;
	assert_string_equal(tp_get_str(node(checked_pod(&c, rt, trainjob())),
				       "securityContext.procMount"),
			    "Default");
	checked_free(&c);
	cJSON_Delete(rt);

	rt = runtime_of("", "{'containers':[{'name':'node','image':'pytorch',"
			    "'securityContext':{'procMount':'Masked'}}]}");
	all_allowed(rt, "baseline");
	cJSON_Delete(rt);
}

/* SetDefaults_ResourceList rounds each quantity up to 1m before the
 * request is held to its limit: 1.0002 and 1.0001 are both 1001m. One a
 * whole milli over its limit is still refused. */
static void quantities_rounded_up_to_milli(void **state)
{
	(void)state;
	cJSON *rt = runtime_of("", "{'containers':[{'name':'node','image':'pytorch','resources':"
				   "{'limits':{'cpu':'1.0001','memory':1e-4,'example.com/big':1e30},"
				   "'requests':{'cpu':'1.0002','memory':'0.0002'}}}]}");
	all_allowed(rt, NULL);
	checked c;
	const cJSON *res = tp_get(node(checked_pod(&c, rt, trainjob())), "resources");
	json_is(res, "{'limits':{'cpu':'1001m','memory':'1m','example.com/big':1e30},"
						      "'requests':{'cpu':'1001m','memory':'1m'}}");
	checked_free(&c);
	cJSON_Delete(rt);

	rt = runtime_of("", "{'containers':[{'name':'node','image':'pytorch','resources':"
			    "{'limits':{'cpu':'1.001'},'requests':{'cpu':'1.0011'}}}]}");
	tp_result *r = runtime_review(rt);
	assert_true(tt_has_error(r, "spec.template.spec.replicatedJobs[0].template.spec.template."
				 "spec.containers[0].resources.requests",
				 "must be less than or equal to cpu limit of 1001m"));
	tp_result_free(r);
	cJSON_Delete(rt);
}

/* ImageVolume is off by default in v1.32: dropImageVolumes takes the
 * volume and its mounts away, so restricted Pod Security sees no volume
 * of a type it does not know. */
static void image_volume_dropped_with_its_mounts(void **state)
{
	(void)state;
	cJSON *rt = runtime_of("", "{'volumes':[{'name':'model','image':{'reference':'quay.io/m:1'}},"
				   "{'name':'data','emptyDir':{}}],'containers':[{'name':'node',"
				   "'image':'pytorch'," SC ",'volumeMounts':[{'name':'model',"
				   "'mountPath':'/model'},{'name':'data','mountPath':'/data'}]}]}");
	all_allowed(rt, "restricted");
	checked c;
	const cJSON *pod = checked_pod(&c, rt, trainjob());
	json_is(tp_get(pod, "volumes"), "[{'name':'data','emptyDir':{}}]");
	json_is(tp_get(node(pod), "volumeMounts"), "[{'name':'data','mountPath':'/data'}]");
	checked_free(&c);
	cJSON_Delete(rt);
}

/* ---------------------------------------------- the pass, default by default */

static const tp_pod_jobset hostnames = { true, "train" };

/* The defaults of a JobTemplateSpec whose Pod spec is pod and whose Job
 * spec has more members (job: "" or "'x':...,"): the copy, or NULL. */
static cJSON *defaulted(const char *job, const char *pod)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "{'spec':{%s'template':{'spec':%s}}}", job, pod);
	cJSON *tmpl = keep(tt_jsq(buf));
	cJSON *copy = NULL;
	assert_int_equal(tp__pod_defaults(tmpl, &hostnames, &copy), TP_OK);
	return copy ? keep(copy) : NULL;
}

/* Nothing a verdict depends on: no copy (the check reads the runtime's
 * template where it is). What the checks read as filled in is not written:
 * completionMode and restartPolicy (JobSet's), backoffLimit 6 (validateJobSpec
 * holds a set one to >= 0, which the default is), dnsPolicy, imagePullPolicy,
 * terminationMessagePolicy, terminationGracePeriodSeconds, a readiness
 * probe's thresholds, defaultMode. */
static void nothing_to_write_is_not_copied(void **state)
{
	(void)state;
	assert_null(defaulted("'parallelism':2,",
			      "{'volumes':[{'name':'a','emptyDir':{}},{'name':'b','secret':"
			      "{'secretName':'s'}}],'containers':[{'name':'node','image':'x',"
			      "'ports':[{'containerPort':80,'protocol':'TCP'}],'env':[{'name':'N',"
			      "'valueFrom':{'fieldRef':{'apiVersion':'v1','fieldPath':'metadata.name'}}}],"
			      "'readinessProbe':{'tcpSocket':{'port':2222},'initialDelaySeconds':5},"
			      "'livenessProbe':{'exec':{'command':['true']},'successThreshold':1},"
			      "'resources':{'limits':{'cpu':'1500m','memory':'4Gi'}}}]}"));
	/* a subdomain the JobSet writes itself */
	assert_null(defaulted("", "{'subdomain':'train','containers':[{'name':'node'}]}"));
}

/* No shipped runtime needs a copy: their jobs are checked where they are,
 * as before the pass, in a TrainJob's check and in their own. */
static void shipped_runtimes_are_not_copied(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	static const char *const files[] = {
		"torch_distributed.yaml", "data-cache/torch_distributed_with_cache.yaml",
		"deepspeed_distributed.yaml", "mlx_distributed.yaml", "jax_distributed.yaml",
		"xgboost_distributed.yaml", "torchtune/llama3_2/llama3_2_1B.yaml",
		"torchtune/llama3_2/llama3_2_3B.yaml", "torchtune/qwen2_5/qwen2_5_1.5B.yaml",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "fixtures/upstream/runtimes/%s", files[i]);
		cJSON *rt = tt_shared_object(rel, TP_KIND_CLUSTER_TRAINING_RUNTIME);
		const cJSON *spec = tp_get(rt, "spec.template.spec");
		tp_pod_jobset js;
		tp__pod_jobset_of(spec, tp_meta_name(rt), &js);
		const cJSON *j;
		cJSON_ArrayForEach(j, tp_get(spec, "replicatedJobs")) {
			cJSON *copy = NULL;
			assert_int_equal(tp__pod_defaults(tp_get(j, "template"), &js, &copy), TP_OK);
			if (copy)
				fail_msg("%s: job %s copied", files[i], tp_get_str(j, "name"));
		}
		cJSON_Delete(rt);
	}
}

/* SetDefaults_Probe's successThreshold 1, which validateLivenessProbe and
 * validateStartupProbe hold to "must be 1"; timeoutSeconds, periodSeconds
 * and failureThreshold are only held to >= 0, which 0 and their defaults
 * both are. SetDefaults_HTTPGetAction's path "/" (Required) and scheme
 * HTTP (Unsupported when ""), in probes and lifecycle handlers. */
static void probes_and_http_get(void **state)
{
	(void)state;
	cJSON *c = defaulted("", "{'containers':[{'name':'node','livenessProbe':{'httpGet':"
				 "{'port':80}},'startupProbe':{'exec':{'command':['x']},"
				 "'successThreshold':0},'readinessProbe':{'httpGet':{'port':80,"
				 "'path':'/ready','scheme':'HTTPS'}}},{'name':'b','livenessProbe':"
				 "{'exec':{'command':['x']},'successThreshold':3},'lifecycle':"
				 "{'preStop':{'httpGet':{'port':80,'path':''}}}}]}");
	json_is(tp_get(c, "spec.template.spec.containers"),
		"[{'name':'node','livenessProbe':{'httpGet':{'port':80,'path':'/','scheme':'HTTP'},"
		"'successThreshold':1},'startupProbe':{'exec':{'command':['x']},"
		"'successThreshold':1},'readinessProbe':{'httpGet':{'port':80,'path':'/ready',"
		"'scheme':'HTTPS'}}},{'name':'b','livenessProbe':{'exec':{'command':['x']},"
		"'successThreshold':3},'lifecycle':{'preStop':{'httpGet':{'port':80,'path':'/',"
		"'scheme':'HTTP'}}}}]");
}

/* A port's protocol TCP (validateContainerPorts: Required; the host
 * ports' uniqueness compares it); SetDefaults_ObjectFieldSelector's
 * apiVersion v1 (validateObjectFieldSelector: Required, and the fieldPath
 * is converted by it) in env, downwardAPI and projected volumes;
 * SetDefaults_ServiceAccountTokenProjection's expirationSeconds 3600 (0 is
 * "may not specify a duration less than 10 minutes"). */
static void ports_field_refs_and_tokens(void **state)
{
	(void)state;
	cJSON *c = defaulted(
		"", "{'volumes':[{'name':'d','downwardAPI':{'items':[{'path':'l','fieldRef':"
		    "{'fieldPath':'metadata.labels'}}]}},{'name':'p','projected':{'sources':["
		    "{'serviceAccountToken':{'path':'t'}},{'serviceAccountToken':{'path':'u',"
		    "'expirationSeconds':0}},{'downwardAPI':{'items':[{'path':'n','fieldRef':"
		    "{'fieldPath':'metadata.name'}}]}}]}}],'initContainers':[{'name':'i',"
		    "'ports':[{'containerPort':80},{'containerPort':81,'protocol':'UDP'}],"
		    "'env':[{'name':'N','valueFrom':{'fieldRef':{'fieldPath':'metadata.name'}}}]}]}");
	const cJSON *pod = tp_get(c, "spec.template.spec");
	json_is(tp_get(pod, "volumes"),
		"[{'name':'d','downwardAPI':{'items':[{'path':'l','fieldRef':{'fieldPath':"
		"'metadata.labels','apiVersion':'v1'}}]}},{'name':'p','projected':{'sources':["
		"{'serviceAccountToken':{'path':'t','expirationSeconds':3600}},{'serviceAccountToken':"
		"{'path':'u','expirationSeconds':0}},{'downwardAPI':{'items':[{'path':'n','fieldRef':"
		"{'fieldPath':'metadata.name','apiVersion':'v1'}}]}}]}}]");
	json_is(tp_get(pod, "initContainers"),
		"[{'name':'i','ports':[{'containerPort':80,'protocol':'TCP'},{'containerPort':81,"
		"'protocol':'UDP'}],'env':[{'name':'N','valueFrom':{'fieldRef':{'fieldPath':"
		"'metadata.name','apiVersion':'v1'}}}]}]");
}

/* SetDefaults_Job: an onPodConditions pattern's status True
 * (validatePodFailurePolicyRuleOnPodConditions: Required); backoffLimit is
 * left (see nothing_to_write_is_not_copied). */
static void pod_failure_policy_status(void **state)
{
	(void)state;
	cJSON *c = defaulted("'podFailurePolicy':{'rules':[{'action':'Ignore','onPodConditions':"
			     "[{'type':'DisruptionTarget'},{'type':'X','status':'False'}]}]},",
			     "{'containers':[{'name':'node'}]}");
	json_is(tp_get(c, "spec.podFailurePolicy"),
		"{'rules':[{'action':'Ignore','onPodConditions':[{'type':'DisruptionTarget',"
		"'status':'True'},{'type':'X','status':'False'}]}]}");
	assert_null(tp_get(c, "spec.backoffLimit"));
}

/* dropDisabledFields with v1.32's gates: hostUsers (UserNamespacesSupport),
 * supplementalGroupsPolicy (SupplementalGroupsPolicy), seLinuxChangePolicy
 * (SELinuxChangePolicy), the Pod's resources (PodLevelResources),
 * resourceClaims and the containers' claims (DynamicResourceAllocation),
 * resizePolicy (InPlacePodVerticalScaling), a projection's
 * clusterTrustBundle (ClusterTrustBundleProjection) are dropped; what the
 * gates on by default guard (a sidecar's restartPolicy, recursiveReadOnly,
 * a sleep action) stays. */
static void fields_of_gates_v1_32_has_off(void **state)
{
	(void)state;
	cJSON *c = defaulted(
		"", "{'securityContext':{'hostUsers':false,'supplementalGroupsPolicy':'Strict',"
		    "'seLinuxChangePolicy':'Recursive','runAsNonRoot':true},'resources':{'limits':"
		    "{'cpu':'1'}},'resourceClaims':[{'name':'gpu'}],'terminationGracePeriodSeconds':"
		    "60,'volumes':[{'name':'p','projected':{'sources':[{'clusterTrustBundle':"
		    "{'path':'b'}},{'configMap':{'name':'m'}}]}}],'initContainers':[{'name':'s',"
		    "'restartPolicy':'Always','volumeMounts':[{'name':'p','mountPath':'/p',"
		    "'recursiveReadOnly':'Enabled','readOnly':true}]}],'containers':[{'name':'node',"
		    "'resizePolicy':[{'resourceName':'cpu','restartPolicy':'NotRequired'}],"
		    "'resources':{'claims':[{'name':'gpu'}],'limits':{'cpu':'1'}},'lifecycle':"
		    "{'preStop':{'sleep':{'seconds':5}}}}]}");
	json_is(tp_get(c, "spec.template.spec"),
		"{'securityContext':{'runAsNonRoot':true},'terminationGracePeriodSeconds':60,"
		"'volumes':[{'name':'p','projected':{'sources':[{},{'configMap':{'name':'m'}}]}}],"
		"'initContainers':[{'name':'s','restartPolicy':'Always','volumeMounts':[{'name':'p',"
		"'mountPath':'/p','recursiveReadOnly':'Enabled','readOnly':true}]}],'containers':"
		"[{'name':'node','resources':{'limits':{'cpu':'1'}},'lifecycle':{'preStop':{'sleep':"
		"{'seconds':5}}}}]}");
}

/* SetDefaults_PodSpec's terminationGracePeriodSeconds 30 bounds a sleep
 * action (validateSleepAction): written where there is one. */
static void grace_period_under_a_sleep_action(void **state)
{
	(void)state;
	cJSON *c = defaulted("", "{'containers':[{'name':'node','lifecycle':{'postStart':{'sleep':"
				 "{'seconds':45}}}}]}");
	json_is(tp_get(c, "spec.template.spec.terminationGracePeriodSeconds"), "30");
}

/* A copy the caller has (the TrainJob's settings written in) takes the
 * defaults itself; without DNS hostnames the template's subdomain stays;
 * with a JobSet name not known (a runtime's own check) it goes. */
static void into_the_callers_copy(void **state)
{
	(void)state;
	cJSON *mine = keep(tt_jsq("{'spec':{'template':{'spec':{'subdomain':'s','volumes':"
				     "[{'name':'v'}],'containers':[{'name':'node'}]}}}}"));
	cJSON *copy = mine;
	assert_int_equal(tp__pod_defaults(mine, &hostnames, &copy), TP_OK);
	assert_ptr_equal(copy, mine);
	json_is(tp_get(mine, "spec.template.spec"),
		"{'subdomain':'train','volumes':[{'name':'v','emptyDir':{}}],'containers':"
		"[{'name':'node'}]}");

	const cJSON *t = keep(tt_jsq("{'spec':{'template':{'spec':{'subdomain':'Own'}}}}"));
	tp_pod_jobset off, unknown;
	tp__pod_jobset_of(keep(tt_jsq("{'network':{'enableDNSHostnames':false}}")), "tj", &off);
	tp__pod_jobset_of(keep(tt_jsq("{'network':{'enableDNSHostnames':true}}")), NULL, &unknown);
	copy = NULL;
	assert_int_equal(tp__pod_defaults(t, &off, &copy), TP_OK);
	assert_null(copy);
	assert_int_equal(tp__pod_defaults(t, &unknown, &copy), TP_OK);
	assert_non_null(copy);
	json_is(tp_get(copy, "spec.template.spec"), "{}");
	cJSON_Delete(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(volume_without_source_is_an_empty_dir, release_kept),
		cmocka_unit_test_teardown(psa_fixture_restrictedvolumes0, release_kept),
		cmocka_unit_test_teardown(subdomain_is_the_jobsets, release_kept),
		cmocka_unit_test_teardown(proc_mount_as_v1_32_drops_it, release_kept),
		cmocka_unit_test_teardown(quantities_rounded_up_to_milli, release_kept),
		cmocka_unit_test_teardown(image_volume_dropped_with_its_mounts, release_kept),
		cmocka_unit_test_teardown(nothing_to_write_is_not_copied, release_kept),
		cmocka_unit_test_teardown(shipped_runtimes_are_not_copied, release_kept),
		cmocka_unit_test_teardown(probes_and_http_get, release_kept),
		cmocka_unit_test_teardown(ports_field_refs_and_tokens, release_kept),
		cmocka_unit_test_teardown(pod_failure_policy_status, release_kept),
		cmocka_unit_test_teardown(fields_of_gates_v1_32_has_off, release_kept),
		cmocka_unit_test_teardown(grace_period_under_a_sleep_action, release_kept),
		cmocka_unit_test_teardown(into_the_callers_copy, release_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

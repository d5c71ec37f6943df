/*
 * test_pod_names.c — the names the controllers make from a TrainJob's name
 * (policy/pod/names.c, strict profile): JobSet's webhook refuses a JobSet
 * whose longest Job name "<jobset>-<replicated job>-<replicas-1>" or
 * longest Pod name "<job>-<completions-1>-abcde" is no DNS-1035 label
 * (pkg/webhooks/jobset_webhook.go ValidateCreate, jobNameTooLongErrorMsg
 * and podNameTooLongErrorMsg), and kube-apiserver a Job whose last Pod
 * hostname "<job>-<completions-1>" is no DNS-1123 label (Kubernetes'
 * pkg/apis/batch/validation/validation.go ValidateJob). The shipped torch
 * runtime, numNodes 11, a runtime with a dataset initializer, replicated
 * job names of 64 characters or with an upper-case letter, the runtime's
 * own check, and the kubeflow profile left as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

#define SP TP_PROFILE_STRICT
#define KF TP_PROFILE_KUBEFLOW

#define MSG_JOB "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
#define MSG_POD "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
#define MSG_HOST "will not able to create pod with invalid DNS label: "

/* A TrainJob name of n characters (5 <= n < 100): "train" and x's. */
static const char *name_of(int n, char buf[100])
{
	memcpy(buf, "train", 5);
	memset(buf + 5, 'x', (size_t)n - 5);
	buf[n] = '\0';
	return buf;
}

/* n times c (n < 100). */
static const char *repeat(char c, int n, char buf[100])
{
	memset(buf, c, (size_t)n);
	buf[n] = '\0';
	return buf;
}

/* A replicated job name of n characters: s's. */
static const char *rjob_of(int n, char buf[100])
{
	return repeat('s', n, buf);
}

/* TrainJob team-a/<name> of runtime rt with more spec members (single-
 * quoted JSON, or NULL). */
static cJSON *trainjob(const char *name, const char *rt, const char *more)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'%s','namespace':'team-a'},'spec':{'runtimeRef':{'name':'%s'}%s%s}}",
		 name, rt, more ? "," : "", more ? more : "");
	return tt_jsq(buf);
}

static cJSON *upstream_torch(void)
{
	return tt_shared_object("fixtures/upstream/runtimes/torch_distributed.yaml",
				TP_KIND_CLUSTER_TRAINING_RUNTIME);
}

/* The repository's own torch runtime: dataset and model initializers
 * before the trainer's job. */
static cJSON *deploy_torch(void)
{
	char *text = tt_read_file("deploy/runtimes/torch-distributed.yaml", NULL);
	assert_non_null(text);
	tp_docs *docs = NULL;
	tp_load_error err;
	assert_int_equal(tp_load(text, strlen(text), NULL, &docs, &err), TP_OK);
	cJSON *rt = tp_docs_take(docs, 0);
	tp_docs_free(docs);
	free(text);
	return rt;
}

/* A ClusterTrainingRuntime "rt" (torch, numNodes 1) with a job named rjob
 * (no ancestor, parallelism 1, replicas as given) before its trainer job
 * "node". */
static cJSON *runtime_with_replicas(const char *rjob, int replicas)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		 "[{'name':'%s','replicas':%d,'template':{'spec':{'template':{'spec':{'containers':"
		 "[{'name':'side','image':'busybox'}]}}}}},"
		 "{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':{'containers':[{'name':'node','image':'pytorch'}]}}}}}]}}}}",
		 rjob, replicas);
	return tt_jsq(buf);
}

static cJSON *runtime_with_job(const char *rjob)
{
	return runtime_with_replicas(rjob, 1);
}

static tp_result *review(tp_profile p, cJSON *rt, cJSON *tj)
{
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tp_store_put(store, rt), TP_OK);
	tp_options opt = { .profile = p, .store = store };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, res), TP_OK);
	tt_dump(res);
	tp_store_free(store);
	cJSON_Delete(tj);
	return res;
}

static cJSON *runtime_with_job(const char *rjob);

/* TrainJob "train" of runtime_with_job(rjob). */
static tp_result *review_job(tp_profile p, const char *rjob)
{
	return review(p, runtime_with_job(rjob), trainjob("train", "rt", NULL));
}

static void text_is(const tp_result *r, size_t i, const char *want)
{
	assert_true(i < tp_result_error_count(r));
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_field_error_format(tp_result_error_at(r, i), &b), TP_OK);
	assert_string_equal(b.data, want);
	tp_buf_free(&b);
}

static char *printed(const char *fmt, ...) TP_PRINTF(1, 2);
static char *printed(const char *fmt, ...)
{
	static char buf[8][2048];
	static int next;
	char *b = buf[next++ % 8];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(buf[0]), fmt, ap);
	va_end(ap);
	return b;
}

/* ------------------------------------------------- the shipped runtime */

/* Upstream's torch-distributed: the Pods of a TrainJob named tj are
 * tj-node-0-0, their names tj-node-0-0-<5 random characters>. JobSet's
 * webhook refuses from 49 characters (a Pod name of 64); the API server
 * from 55 (a hostname of 64), as the issue saw on kube-apiserver v1.32.13. */
static void torch_48_passes(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED(); /* upstream's runtime */
	char n[100];
	tp_result *r = review(SP, upstream_torch(), trainjob(name_of(48, n), "torch-distributed", NULL));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

static void torch_54_jobset_refuses(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED(); /* upstream's runtime */
	char n[100];
	name_of(54, n);
	tp_result *r = review(SP, upstream_torch(), trainjob(n, "torch-distributed", NULL));
	/* the hostname n-node-0-0 is 63 characters: the API server's rule passes */
	assert_int_equal(tp_result_error_count(r), 1);
	text_is(r, 0,
		printed("metadata.name: Invalid value: \"%s-node-0\": " MSG_POD
			": JobSet.jobset.x-k8s.io \"%s\" would be refused at "
			"spec.replicatedJobs[0].name (replicated job \"node\"); use a name of at most "
			"48 characters with ClusterTrainingRuntime \"torch-distributed\"",
			n, n));
	tp_result_free(r);
}

static void torch_55_api_server_refuses(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED(); /* upstream's runtime */
	char n[100];
	name_of(55, n);
	tp_result *r = review(SP, upstream_torch(), trainjob(n, "torch-distributed", NULL));
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "metadata.name", MSG_POD));
	text_is(r, 1,
		printed("metadata.name: Invalid value: \"%s-node-0\": " MSG_HOST
			"%s-node-0-0: Job.batch \"%s-node-0\" would be invalid at metadata.name "
			"(replicated job \"node\"); use a name of at most 48 characters with "
			"ClusterTrainingRuntime \"torch-distributed\"",
			n, n, n));
	tp_result_free(r);
	/* upstream's answer: nothing to say */
	r = review(KF, upstream_torch(), trainjob(n, "torch-distributed", NULL));
	assert_true(tp_result_ok(r));
	assert_int_equal(tp_result_warning_count(r), 0);
	tp_result_free(r);
}

/* numNodes 11: the last completion index is 10, one digit more. */
static void num_nodes_eleven(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED(); /* upstream's runtime */
	char n[100];
	const char *more = "'trainer':{'numNodes':11}";
	tp_result *r = review(SP, upstream_torch(), trainjob(name_of(47, n), "torch-distributed", more));
	assert_true(tp_result_ok(r));
	tp_result_free(r);

	r = review(SP, upstream_torch(), trainjob(name_of(53, n), "torch-distributed", more));
	assert_int_equal(tp_result_error_count(r), 1);
	text_is(r, 0,
		printed("metadata.name: Invalid value: \"%s-node-0\": " MSG_POD
			": JobSet.jobset.x-k8s.io \"%s\" would be refused at "
			"spec.replicatedJobs[0].name (replicated job \"node\"); use a name of at most "
			"47 characters with ClusterTrainingRuntime \"torch-distributed\" and numNodes 11",
			n, n));
	tp_result_free(r);

	r = review(SP, upstream_torch(), trainjob(name_of(54, n), "torch-distributed", more));
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "metadata.name", printed(MSG_HOST "%s-node-0-10:", n)));
	tp_result_free(r);
}

/* deploy/runtimes/torch-distributed.yaml: dataset-initializer, the
 * longest job name, makes tj-dataset-initializer-0-0: the API server
 * refuses from 40 characters, JobSet's webhook from 34 (and for
 * model-initializer from 36). */
static void dataset_initializer(void **state)
{
	(void)state;
	char n[100];
	tp_result *r = review(SP, deploy_torch(), trainjob(name_of(33, n), "torch-distributed", NULL));
	assert_true(tp_result_ok(r));
	tp_result_free(r);

	r = review(SP, deploy_torch(), trainjob(name_of(39, n), "torch-distributed", NULL));
	assert_int_equal(tp_result_error_count(r), 2); /* the two initializers' Pod names */
	text_is(r, 0,
		printed("metadata.name: Invalid value: \"%s-dataset-initializer-0\": " MSG_POD
			": JobSet.jobset.x-k8s.io \"%s\" would be refused at "
			"spec.replicatedJobs[0].name (replicated job \"dataset-initializer\"); use a name "
			"of at most 33 characters with ClusterTrainingRuntime \"torch-distributed\"",
			n, n));
	assert_false(tt_has_error(r, "metadata.name", MSG_HOST));
	tp_result_free(r);

	r = review(SP, deploy_torch(), trainjob(name_of(40, n), "torch-distributed", NULL));
	assert_int_equal(tp_result_error_count(r), 3);
	assert_true(tt_has_error(r, "metadata.name",
				 printed(MSG_HOST "%s-dataset-initializer-0-0:", n)));
	tp_result_free(r);
}

/* runtimePatches change neither names nor counts: a patched node job is
 * named as the runtime's; a job only a patch names (refused by the JobSet
 * plugin) gets no findings of its own here. */
static void runtime_patches(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED(); /* upstream's runtime */
	char n[100], extra[100];
	char more[1024];
	snprintf(more, sizeof(more),
		 "'runtimePatches':[{'manager':'example.io/team','trainingRuntimeSpec':{'template':"
		 "{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':"
		 "{'nodeSelector':{'node-type':'training'}}}}}}]}}}}]");
	tp_result *r = review(SP, upstream_torch(), trainjob(name_of(55, n), "torch-distributed", more));
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "metadata.name", MSG_POD));
	assert_true(tt_has_error(r, "metadata.name", printed(MSG_HOST "%s-node-0-0:", n)));
	tp_result_free(r);

	snprintf(more, sizeof(more),
		 "'runtimePatches':[{'manager':'example.io/team','trainingRuntimeSpec':{'template':"
		 "{'spec':{'replicatedJobs':[{'name':'%s'}]}}}}]",
		 rjob_of(60, extra));
	r = review(SP, upstream_torch(), trainjob("train", "torch-distributed", more));
	assert_true(tt_has_error(r, "spec.runtimePatches", "must not have replicated job"));
	for (size_t i = 0; i < tp_result_error_count(r); i++)
		assert_string_equal(tp_result_error_at(r, i)->path, "spec.runtimePatches");
	assert_false(tt_has_error(r, "spec.runtimePatches", "JobSet name is too long"));
	assert_false(tt_has_error(r, "spec.runtimePatches", "will not able to create pod"));
	tp_result_free(r);
}

/* A runtime of more jobs than the check notes without allocating (8):
 * twelve side jobs j0..j11 and the trainer's node, a name of 55
 * characters. Each job's Pod name is too long for JobSet; for the API
 * server only node's hostname <name>-node-0-0 (64 characters; j11's 63). */
static void many_jobs(void **state)
{
	(void)state;
	char jobs[4096] = "", *p = jobs;
	for (int i = 0; i < 12; i++)
		p += sprintf(p, "{'name':'j%d','template':{'spec':{'template':{'spec':{'containers':"
				"[{'name':'side','image':'busybox'}]}}}}},", i);
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		 "[%s{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':{'containers':[{'name':'node','image':'pytorch'}]}}}}}]}}}}",
		 jobs);
	char n[100];
	tp_result *r = review(SP, tt_jsq(buf), trainjob(name_of(55, n), "rt", NULL));
	assert_int_equal(tp_result_error_count(r), 14);
	text_is(r, 11,
		printed("metadata.name: Invalid value: \"%s-j11-0\": " MSG_POD
			": JobSet.jobset.x-k8s.io \"%s\" would be refused at "
			"spec.replicatedJobs[11].name (replicated job \"j11\"); use a name of at most 48 "
			"characters with ClusterTrainingRuntime \"rt\"",
			n, n));
	assert_true(tt_has_error(r, "metadata.name", printed(MSG_HOST "%s-node-0-0:", n)));
	tp_result_free(r);
}

/* ------------------------------------------- volumeClaimPolicies */

#define MSG_CLAIM "VolumeClaimPolicies template name is too long"

/* runtime_with_job("side") with a volumeClaimPolicies template named claim,
 * which the trainer's node mounts. */
static cJSON *runtime_with_claim(const char *claim)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{"
		 "'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'%s'},'spec':"
		 "{'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}}}]}],"
		 "'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':{'containers':[{'name':'node','image':'pytorch','volumeMounts':"
		 "[{'name':'%s','mountPath':'/data'}]}]}}}}}]}}}}",
		 claim, claim);
	return tt_jsq(buf);
}

/* JobSet names a template's PersistentVolumeClaim <template>-<jobset>
 * (pkg/controllers/volume_claim_policy.go GeneratePVCName) and refuses one
 * past 63 characters: with a template of 20 characters, a TrainJob name
 * of 42 passes and one of 43 is refused (node's Pod names allow 48). */
static void claim_name_too_long(void **state)
{
	(void)state;
	char n[100], claim[100];
	repeat('c', 20, claim);
	tp_result *r = review(SP, runtime_with_claim(claim), trainjob(name_of(42, n), "rt", NULL));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review(SP, runtime_with_claim(claim), trainjob(name_of(43, n), "rt", NULL));
	assert_int_equal(tp_result_error_count(r), 1);
	text_is(r, 0,
		printed("metadata.name: Invalid value: \"%s\": " MSG_CLAIM ": JobSet.jobset.x-k8s.io "
			"\"%s\" would be refused at spec.volumeClaimPolicies[0].template[0].name "
			"(PersistentVolumeClaim \"%s-%s\"); use a name of at most 42 characters with "
			"ClusterTrainingRuntime \"rt\"",
			claim, n, claim, n));
	tp_result_free(r);
	r = review(KF, runtime_with_claim(claim), trainjob(name_of(43, n), "rt", NULL));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* A template name of 62 characters leaves no room for any TrainJob's
 * name: the TrainJob is told at the runtime's path, and the runtime's own
 * check refuses it (61 passes). */
static void claim_leaves_no_room(void **state)
{
	(void)state;
	char claim[100];
	repeat('c', 62, claim);
	const char *path = "spec.template.spec.volumeClaimPolicies[0].templates[0].metadata.name";
	tp_result *r = review(SP, runtime_with_claim(claim), trainjob("train", "rt", NULL));
	assert_int_equal(tp_result_error_count(r), 1);
	text_is(r, 0,
		printed("%s: Invalid value: \"%s\": " MSG_CLAIM ": in ClusterTrainingRuntime \"rt\", "
			"so JobSet.jobset.x-k8s.io \"train\" would be refused at "
			"spec.volumeClaimPolicies[0].template[0].name (PersistentVolumeClaim \"%s-train\"); "
			"shorten the template's name to at most 57 characters with a TrainJob named "
			"\"train\"",
			path, claim, claim));
	tp_result_free(r);

	tp_options opt = { .profile = SP };
	assert_int_equal(tp_result_new(&r), TP_OK);
	cJSON *rt = runtime_with_claim(claim);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	tt_dump(r);
	assert_int_equal(tp_result_error_count(r), 1);
	text_is(r, 0,
		printed("%s: Invalid value: \"%s\": " MSG_CLAIM ": the JobSet of every TrainJob would "
			"be refused (a TrainJob named \"a\" makes the PersistentVolumeClaim \"%s-a\" of "
			"64 characters); shorten the template's name to at most 61 characters",
			path, claim, claim));
	tp_result_clear(r);
	cJSON_Delete(rt);
	rt = runtime_with_claim(repeat('c', 61, claim));
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	assert_true(tp_result_ok(r));
	cJSON_Delete(rt);
	tp_result_free(r);
}

/* ------------------------------------------- the runtime's job names */

/* A replicated job name of 64 characters: no TrainJob name fits, so the
 * findings are the runtime's, at its path. */
static void job_name_of_64(void **state)
{
	(void)state;
	char rjob[100];
	tp_result *r = review_job(SP, rjob_of(64, rjob));
	assert_int_equal(tp_result_error_count(r), 3);
	text_is(r, 0,
		printed("spec.template.spec.replicatedJobs[0].name: Invalid value: \"train-%s-0\": "
			MSG_JOB ": in ClusterTrainingRuntime \"rt\" (replicated job \"%s\"), so "
			"JobSet.jobset.x-k8s.io \"train\" would be refused at spec.replicatedJobs[0].name; "
			"rename the replicated job: lower-case letters, digits and '-', at most 47 "
			"characters with a TrainJob named \"train\"",
			rjob, rjob));
	assert_true(tt_has_error(r, "spec.template.spec.replicatedJobs[0].name", MSG_POD));
	assert_true(tt_has_error(r, "spec.template.spec.replicatedJobs[0].name",
				 printed(MSG_HOST "train-%s-0-0:", rjob)));
	assert_false(tt_has_error(r, "metadata.name", NULL));
	tp_result_free(r);

	r = review_job(KF, rjob);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* An upper-case letter: JobSet's pattern messages for the Job and the Pod
 * name, the API server's for the Job's name and its Pods' hostname. */
static void job_name_with_upper_case(void **state)
{
	(void)state;
	tp_result *r = review_job(SP, "Side");
	const char *path = "spec.template.spec.replicatedJobs[0].name";
	assert_int_equal(tp_result_error_count(r), 4);
	text_is(r, 0,
		"spec.template.spec.replicatedJobs[0].name: Invalid value: \"train-Side-0\": a "
		"DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
		"an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
		"'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?'): in "
		"ClusterTrainingRuntime \"rt\" (replicated job \"Side\"), so JobSet.jobset.x-k8s.io "
		"\"train\" would be refused at spec.replicatedJobs[0].name; rename the replicated job: "
		"lower-case letters, digits and '-', at most 47 characters with a TrainJob named "
		"\"train\"");
	assert_true(tt_has_error(r, path, "a lowercase RFC 1123 subdomain must consist of"));
	assert_true(tt_has_error(r, path, MSG_HOST "train-Side-0-0:"));
	tp_result_free(r);
}

/* jobset@08dfbdfd pkg/webhooks/jobset_webhook_test.go TestValidateCreate
 * "jobset name with invalid character": a replicated job "username.llama65b"
 * makes Job and Pod names that are no DNS-1035 label; the Job's name is a
 * subdomain, its Pods' hostname no label. */
static void jobset_name_with_invalid_character(void **state)
{
	(void)state;
	tp_result *r = review_job(SP, "username.llama65b");
	const char *path = "spec.template.spec.replicatedJobs[0].name";
	assert_int_equal(tp_result_error_count(r), 3);
	assert_true(tt_has_error(r, path, "a DNS-1035 label must consist of"));
	assert_true(tt_has_error(r, path, MSG_HOST "train-username.llama65b-0-0:"));
	assert_false(tt_has_error(r, path, "RFC 1123 subdomain"));
	tp_result_free(r);
}

/* The same file's "jobset name will result in job name being too long": a
 * name of 62 characters and a replicated job "rj" of 101 replicas, so the
 * last Job is <name>-rj-100 (and its Pod <name>-rj-100-0-abcde: 48
 * characters at most, as with the trainer's node-0-0). */
static void job_name_too_long_with_replicas(void **state)
{
	(void)state;
	char n[100];
	repeat('a', 62, n);
	tp_result *r = review(SP, runtime_with_replicas("rj", 101), trainjob(n, "rt", NULL));
	text_is(r, 0,
		printed("metadata.name: Invalid value: \"%s-rj-100\": " MSG_JOB
			": JobSet.jobset.x-k8s.io \"%s\" would be refused at "
			"spec.replicatedJobs[0].name (replicated job \"rj\"); use a name of at most 48 "
			"characters with ClusterTrainingRuntime \"rt\"",
			n, n));
	assert_true(tt_has_error(r, "metadata.name", printed(MSG_HOST "%s-rj-100-0:", n)));
	tp_result_free(r);
}

/* The same file's "jobset name will result in a pod name being too long":
 * 56 characters, "rj" of one replica and one completion: the Job name
 * (61) passes, the Pod name (69) does not. */
static void pod_name_too_long(void **state)
{
	(void)state;
	char n[100];
	repeat('a', 56, n);
	tp_result *r = review(SP, runtime_with_job("rj"), trainjob(n, "rt", NULL));
	text_is(r, 0,
		printed("metadata.name: Invalid value: \"%s-rj-0\": " MSG_POD
			": JobSet.jobset.x-k8s.io \"%s\" would be refused at "
			"spec.replicatedJobs[0].name (replicated job \"rj\"); use a name of at most 48 "
			"characters with ClusterTrainingRuntime \"rt\"",
			n, n));
	assert_false(tt_has_error(r, "metadata.name", MSG_JOB));
	tp_result_free(r);
}

/* The boundary: a TrainJob name and a replicated job name that make a Pod
 * name of exactly 63 characters pass; one more and JobSet refuses (at the
 * TrainJob's name, which can still be made short enough). */
static void exactly_63_passes(void **state)
{
	(void)state;
	/* "train-" + 47 + "-0-0-abcde" = 63 */
	char rjob[100];
	tp_result *r = review_job(SP, rjob_of(47, rjob));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review_job(SP, rjob_of(48, rjob));
	/* a TrainJob name of 4 characters would do: the TrainJob's to change */
	assert_int_equal(tp_result_error_count(r), 1);
	text_is(r, 0,
		printed("metadata.name: Invalid value: \"train-%s-0\": " MSG_POD
			": JobSet.jobset.x-k8s.io \"train\" would be refused at "
			"spec.replicatedJobs[0].name (replicated job \"%s\"); use a name of at most 4 "
			"characters with ClusterTrainingRuntime \"rt\"",
			rjob, rjob));
	tp_result_free(r);
}

/* The runtime's own check: a replicated job name that leaves no room for
 * a TrainJob's name (a Pod name of 64 with a one-character TrainJob) is
 * refused; one character less passes. */
static void runtime_leaves_no_room(void **state)
{
	(void)state;
	char rjob[100];
	rjob_of(52, rjob);
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	tp_options opt = { .profile = SP };
	cJSON *rt = runtime_with_job(rjob);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	tt_dump(r);
	assert_int_equal(tp_result_error_count(r), 1);
	text_is(r, 0,
		printed("spec.template.spec.replicatedJobs[0].name: Invalid value: \"%s\": " MSG_POD
			": the JobSet of every TrainJob would be refused (replicated job \"%s\": a "
			"TrainJob named \"a\" makes Pod names of 64 characters); shorten the replicated "
			"job's name to at most 51 characters",
			rjob, rjob));
	tp_result_clear(r);
	opt.profile = KF;
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	assert_true(tp_result_ok(r));
	tp_result_clear(r);
	cJSON_Delete(rt);

	rt = runtime_with_job(rjob_of(51, rjob));
	opt.profile = SP;
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	assert_true(tp_result_ok(r));
	cJSON_Delete(rt);
	tp_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torch_48_passes),
		cmocka_unit_test(torch_54_jobset_refuses),
		cmocka_unit_test(torch_55_api_server_refuses),
		cmocka_unit_test(num_nodes_eleven),
		cmocka_unit_test(dataset_initializer),
		cmocka_unit_test(runtime_patches),
		cmocka_unit_test(many_jobs),
		cmocka_unit_test(claim_name_too_long),
		cmocka_unit_test(claim_leaves_no_room),
		cmocka_unit_test(job_name_of_64),
		cmocka_unit_test(job_name_with_upper_case),
		cmocka_unit_test(jobset_name_with_invalid_character),
		cmocka_unit_test(job_name_too_long_with_replicas),
		cmocka_unit_test(pod_name_too_long),
		cmocka_unit_test(exactly_63_passes),
		cmocka_unit_test(runtime_leaves_no_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

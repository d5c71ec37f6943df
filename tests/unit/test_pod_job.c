/*
 * test_pod_job.c — the Job-level rules of the Jobs a JobSet makes
 * (policy/pod/job.c: Kubernetes' pkg/apis/batch/validation validateJobSpec,
 * validatePodFailurePolicy, validateSuccessPolicy, validatePodReplacementPolicy,
 * ValidateJobSpec's selector) and the metadata of the Job, its Pod template
 * and the JobSet (policy/pod/meta.c: apimachinery's ValidateLabels and
 * ValidateAnnotations), through the strict profile's entry points: a
 * ClusterTrainingRuntime whose replicated job holds the mistake, and a
 * TrainJob whose runtimePatches bring it in. Each case names the case of
 * pkg/apis/batch/validation/validation_test.go (TestValidateJob unless
 * said) it is ported from; the value, path, type and detail are the API
 * server's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "policy/pod/pod.h"
#include "tests/support/testutil.h"

/* apimachinery's IsQualifiedName and IsValidLabelValue shape errors */
#define NAME_PART_MSG                                                                           \
	"name part must consist of alphanumeric characters, '-', '_' or '.', and must start and " \
	"end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex " \
	"used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_VALUE_MSG                                                                          \
	"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "    \
	"'my_value',  or '12345', regex used for validation is "                                  \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

/* ------------------------------------------------------------ inputs */

/* The parts of a runtime's one trainer job "node" (single-quoted JSON). */
typedef struct job_parts {
	const char *nodes;      /* mlPolicy.numNodes: the Job's parallelism and completions */
	const char *job_meta;   /* members after the Job template's labels (",'annotations':{}") */
	const char *job_labels; /* labels after the trainer's ancestor label (",'k':'v'") */
	const char *spec;       /* Job spec members before its template, each with a comma */
	const char *pod_meta;   /* "'metadata':{...}," of the Pod template */
	const char *pod;        /* the Pod spec */
} job_parts;

#define POD_NEVER "{'restartPolicy':'Never','containers':[{'name':'node','image':'pytorch'}]}"

static char *strf(const char *fmt, ...) TP_PRINTF(1, 2);
static char *strf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	assert_non_null(s);
	return s;
}

static const char *or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

/* head, n items (item_fmt of 0 .. n-1, comma-separated), tail; malloc'd. */
static char *repeated(const char *head, const char *item_fmt, int n, const char *tail)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_buf_adds(&b, head), TP_OK);
	for (int i = 0; i < n; i++) {
		if (i)
			assert_int_equal(tp_buf_addc(&b, ','), TP_OK);
		assert_int_equal(tp_buf_addf(&b, item_fmt, i), TP_OK);
	}
	assert_int_equal(tp_buf_adds(&b, tail), TP_OK);
	char *s = strf("%s", b.data);
	tp_buf_free(&b);
	return s;
}

static cJSON *runtime_of(const job_parts *p)
{
	char *text = strf(
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		"'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		"'spec':{'mlPolicy':{'numNodes':%s,'torch':{}},'template':{'spec':{'replicatedJobs':"
		"[{'name':'node','template':{'metadata':{'labels':"
		"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'%s}%s},'spec':{%s'template':"
		"{%s'spec':%s}}}}]}}}}",
		or(p->nodes, "1"), or(p->job_labels, ""), or(p->job_meta, ""), or(p->spec, ""),
		or(p->pod_meta, ""), or(p->pod, POD_NEVER));
	cJSON *rt = tt_jsq(text);
	free(text);
	return rt;
}

static tp_result *validate_runtime(cJSON *rt)
{
	tp_options opt = { .profile = TP_PROFILE_STRICT };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, r), TP_OK);
	cJSON_Delete(rt);
	return r;
}

static int store_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		     char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	*out = tp_store_get(ctx, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

/* TrainJob team-a/train of rt (taken) with one runtimePatch's
 * trainingRuntimeSpec (single-quoted). */
static tp_result *validate_trainjob(cJSON *rt, const char *patches)
{
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tp_store_put(store, rt), TP_OK);
	char *text = strf("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
			  "{'name':'train','namespace':'team-a'},'spec':{'runtimeRef':{'name':'rt'},"
			  "'runtimePatches':[{'manager':'example.com/m','trainingRuntimeSpec':%s}]}}",
			  patches);
	cJSON *tj = tt_jsq(text);
	free(text);
	tp_lookup lookup = { store_get, NULL, store };
	tp_options opt = { .profile = TP_PROFILE_STRICT, .lookup = &lookup };
	tp_result *r;
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, r), TP_OK);
	tp_store_free(store); /* and rt, which it took */
	cJSON_Delete(tj);
	return r;
}

/* ------------------------------------------------------------ checks */

/* The error at path of type with value (NULL: none) whose detail is the
 * API server's detail, then ": " and context (the detail "" has none). */
static const tp_field_error *find(const tp_result *r, const char *path, tp_field_type type,
				  const char *value, const char *detail, const char *context)
{
	char *want = *detail ? strf("%s: %s", detail, context) : strf("%s", context);
	const tp_field_error *found = NULL;
	for (size_t i = 0; !found && i < tp_result_error_count(r); i++) {
		const tp_field_error *e = tp_result_error_at(r, i);
		if (e->type == type && !strcmp(e->path, path) &&
		    (value ? e->value && !strcmp(e->value, value) : !e->value) &&
		    !strncmp(e->detail, want, strlen(want)))
			found = e;
	}
	if (!found) {
		tt_dump(r);
		fail_msg("no error of type %d at %s: %s (value %s)", (int)type, path, want,
			 value ? value : "none");
	}
	free(want);
	return found;
}

#define RT_JOB "spec.template.spec.replicatedJobs[0].template."
#define RT_CONTEXT "the Job.batch of every TrainJob would be invalid (replicated job \"node\")"

/* One finding of the runtime's job, at the runtime's path. */
static void runtime_finds(const job_parts *p, const char *path, tp_field_type type,
			  const char *value, const char *detail)
{
	tp_result *r = validate_runtime(runtime_of(p));
	char *full = strf(RT_JOB "%s", path);
	find(r, full, type, value, detail, RT_CONTEXT);
	free(full);
	tp_result_free(r);
}

static void runtime_allows(const job_parts *p)
{
	tp_result *r = validate_runtime(runtime_of(p));
	if (!tp_result_ok(r)) {
		tt_dump(r);
		fail_msg("the runtime is refused");
	}
	tp_result_free(r);
}

/* --------------------------------------------- podFailurePolicy */

#define PFP(rules) "'podFailurePolicy':{'rules':[" rules "]},"
#define EXIT_RULE(op, values) \
	"{'action':'FailJob','onExitCodes':{'operator':'" op "','values':" values "}}"

/* "valid pod failure policy" and "valid pod failure policy with negative
 * exitCodes - need for Windows support"; the containers ctr and def of the
 * first are the template's node and an init container. */
static void pod_failure_policy_valid(void **state)
{
	(void)state;
	job_parts p = {
		.spec = PFP("{'action':'Ignore','onPodConditions':[{'type':'DisruptionTarget',"
			    "'status':'True'}]},{'action':'FailJob','onPodConditions':[{'type':"
			    "'CustomConditionType','status':'False'}]},{'action':'Count','onExitCodes':"
			    "{'containerName':'node','operator':'In','values':[1,2,3]}},{'action':"
			    "'Ignore','onExitCodes':{'containerName':'init','operator':'In','values':"
			    "[4]}},{'action':'FailJob','onExitCodes':{'operator':'NotIn','values':"
			    "[5,6,7]}},{'action':'FailJob','onExitCodes':{'operator':'NotIn','values':"
			    "[-1073741819,-1073741676,-1073741510]}}"),
		.pod = "{'restartPolicy':'Never','initContainers':[{'name':'init','image':'i'}],"
		       "'containers':[{'name':'node','image':'pytorch'}]}",
	};
	runtime_allows(&p);
	/* "valid pod failure policy with FailIndex"; a condition without a
	 * status is defaulted to True (pkg/apis/batch/v1 SetDefaults_Job) */
	p.spec = "'backoffLimitPerIndex':1," PFP("{'action':'FailIndex','onPodConditions':"
						 "[{'type':'DisruptionTarget'}]}");
	runtime_allows(&p);
}

/* `spec.template.spec.restartPolicy: Invalid value: "OnFailure": only
 * "Never" is supported when podFailurePolicy is specified`, also when the
 * template says nothing: JobSet's webhook makes an empty one OnFailure. */
static void pod_failure_policy_needs_never(void **state)
{
	(void)state;
	static const char *const pods[] = {
		"{'restartPolicy':'OnFailure','containers':[{'name':'node','image':'pytorch'}]}",
		"{'containers':[{'name':'node','image':'pytorch'}]}",
	};
	for (int i = 0; i < 2; i++) {
		job_parts p = { .spec = PFP(EXIT_RULE("In", "[1]")), .pod = pods[i] };
		runtime_finds(&p, "spec.template.spec.restartPolicy", TP_FIELD_INVALID,
			      "\"OnFailure\"",
			      "only \"Never\" is supported when podFailurePolicy is specified");
	}
}

/* A runtime whose Job spec members are spec and whose Pod template is
 * POD_NEVER has the finding (path from the Job). */
typedef struct spec_case {
	const char *spec, *path;
	tp_field_type type;
	const char *value, *detail;
} spec_case;

static void run_cases(const spec_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		job_parts p = { .spec = cases[i].spec };
		runtime_finds(&p, cases[i].path, cases[i].type, cases[i].value, cases[i].detail);
	}
}

#define RULE0 "spec.podFailurePolicy.rules[0]"

static void pod_failure_policy_rules(void **state)
{
	(void)state;
	static const spec_case cases[] = {
		/* `spec.podFailurePolicy.rules[0]: Invalid value: specifying one of
		 * OnExitCodes and OnPodConditions is required` */
		{ PFP("{'action':'FailJob'}"), RULE0, TP_FIELD_INVALID, NULL,
		  "specifying one of OnExitCodes and OnPodConditions is required" },
		/* `...rules[0]: Invalid value: specifying both OnExitCodes and
		 * OnPodConditions is not supported` */
		{ PFP("{'action':'FailJob','onExitCodes':{'operator':'In','values':[11]},"
		      "'onPodConditions':[{'type':'DisruptionTarget','status':'True'}]}"),
		  RULE0, TP_FIELD_INVALID, NULL,
		  "specifying both OnExitCodes and OnPodConditions is not supported" },
		/* `...rules[0].action: Required value: valid values: ["Count"
		 * "FailIndex" "FailJob" "Ignore"]` */
		{ PFP("{'onExitCodes':{'operator':'In','values':[1]}}"), RULE0 ".action",
		  TP_FIELD_REQUIRED, NULL,
		  "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]" },
		/* `...rules[0].action: Unsupported value: "UnknownAction":
		 * supported values: "Count", "FailIndex", "FailJob", "Ignore"` */
		{ PFP("{'action':'UnknownAction','onExitCodes':{'operator':'In','values':[1]}}"),
		  RULE0 ".action", TP_FIELD_UNSUPPORTED, "\"UnknownAction\"",
		  "supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"" },
		/* validatePodFailurePolicyRule: FailIndex without backoffLimitPerIndex */
		{ PFP("{'action':'FailIndex','onExitCodes':{'operator':'In','values':[1]}}"),
		  RULE0 ".action", TP_FIELD_INVALID, "\"FailIndex\"",
		  "requires the backoffLimitPerIndex to be set" },
		/* `...onPodConditions[0].status: Unsupported value: "UnknownStatus":
		 * supported values: "False", "True", "Unknown"` */
		{ PFP("{'action':'FailJob','onPodConditions':[{'type':'DisruptionTarget',"
		      "'status':'UnknownStatus'}]}"),
		  RULE0 ".onPodConditions[0].status", TP_FIELD_UNSUPPORTED, "\"UnknownStatus\"",
		  "supported values: \"False\", \"True\", \"Unknown\"" },
		/* `...onPodConditions[0].type: Invalid value: "": name part must be
		 * non-empty` */
		{ PFP("{'action':'FailJob','onPodConditions':[{'status':'True'}]}"),
		  RULE0 ".onPodConditions[0].type", TP_FIELD_INVALID, "\"\"",
		  "name part must be non-empty" },
		/* `...type: Invalid value: "Invalid Condition Type": name part must
		 * consist of alphanumeric characters, ...` */
		{ PFP("{'action':'FailJob','onPodConditions':[{'type':'Invalid Condition Type',"
		      "'status':'True'}]}"),
		  RULE0 ".onPodConditions[0].type", TP_FIELD_INVALID, "\"Invalid Condition Type\"",
		  NAME_PART_MSG },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

#define EXIT_CODES "spec.podFailurePolicy.rules[0].onExitCodes"

/* `spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items`,
 * `...rules[0].onPodConditions: Too many: 21: must have at most 20 items`,
 * `...rules[0].onExitCodes.values: Too many: 256: must have at most 255
 * items` */
static void pod_failure_policy_too_many(void **state)
{
	(void)state;
	static const struct {
		const char *head, *item, *tail;
		int n;
		const char *path, *count, *detail;
	} cases[] = {
		{ "'podFailurePolicy':{'rules':[", EXIT_RULE("NotIn", "[%d]"), "]},", 21,
		  "spec.podFailurePolicy.rules", "21", "must have at most 20 items" },
		{ "'podFailurePolicy':{'rules':[{'action':'FailJob','onPodConditions':[",
		  "{'type':'T%d','status':'True'}", "]}]},", 21,
		  "spec.podFailurePolicy.rules[0].onPodConditions", "21", "must have at most 20 items" },
		{ "'podFailurePolicy':{'rules':[{'action':'FailJob','onExitCodes':{'operator':'In',"
		  "'values':[",
		  "%d", "]}}]},", 256, EXIT_CODES ".values", "256", "must have at most 255 items" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *spec = repeated(cases[i].head, cases[i].item, cases[i].n, cases[i].tail);
		job_parts p = { .spec = spec };
		runtime_finds(&p, cases[i].path, TP_FIELD_TOO_MANY, cases[i].count, cases[i].detail);
		free(spec);
	}
}

static void pod_failure_policy_exit_codes(void **state)
{
	(void)state;
	static const spec_case cases[] = {
		/* `...rules[0].onExitCodes.values[1]: Duplicate value: 11` */
		{ PFP(EXIT_RULE("In", "[11,11]")), EXIT_CODES ".values[1]", TP_FIELD_DUPLICATE,
		  "11", "" },
		/* `...values[2]: Duplicate value: 13` ([11, 13, 13]) */
		{ PFP(EXIT_RULE("In", "[11,13,13]")), EXIT_CODES ".values[2]", TP_FIELD_DUPLICATE,
		  "13", "" },
		/* `...values: Invalid value: []int32{19, 11}: must be ordered` */
		{ PFP(EXIT_RULE("In", "[19,11]")), EXIT_CODES ".values", TP_FIELD_INVALID,
		  "[]int32{19, 11}", "must be ordered" },
		/* `...values: Invalid value: []int32{}: at least one value is required` */
		{ PFP(EXIT_RULE("In", "[]")), EXIT_CODES ".values", TP_FIELD_INVALID, "[]int32{}",
		  "at least one value is required" },
		/* the same without values: a nil slice */
		{ PFP("{'action':'FailJob','onExitCodes':{'operator':'In'}}"), EXIT_CODES ".values",
		  TP_FIELD_INVALID, "[]int32(nil)", "at least one value is required" },
		/* `...values[1]: Invalid value: 0: must not be 0 for the In operator` */
		{ PFP(EXIT_RULE("In", "[-1,0,2]")), EXIT_CODES ".values[1]", TP_FIELD_INVALID, "0",
		  "must not be 0 for the In operator" },
		/* `...onExitCodes.operator: Required value: valid values: ["In" "NotIn"]` */
		{ PFP("{'action':'FailJob','onExitCodes':{'values':[1,2,3]}}"), EXIT_CODES ".operator",
		  TP_FIELD_REQUIRED, NULL, "valid values: [\"In\" \"NotIn\"]" },
		/* `...operator: Unsupported value: "UnknownOperator": supported
		 * values: "In", "NotIn"` */
		{ PFP(EXIT_RULE("UnknownOperator", "[1,2,3]")), EXIT_CODES ".operator",
		  TP_FIELD_UNSUPPORTED, "\"UnknownOperator\"", "supported values: \"In\", \"NotIn\"" },
		/* `spec.podFailurePolicy.rules[1].onExitCodes.containerName: Invalid
		 * value: "xyz": must be one of the container or initContainer names
		 * in the pod template` */
		{ PFP("{'action':'FailJob','onExitCodes':{'containerName':'node','operator':'In',"
		      "'values':[1]}},{'action':'FailJob','onExitCodes':{'containerName':'xyz',"
		      "'operator':'In','values':[5,6,7]}}"),
		  "spec.podFailurePolicy.rules[1].onExitCodes.containerName", TP_FIELD_INVALID,
		  "\"xyz\"",
		  "must be one of the container or initContainer names in the pod template" },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* `spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed":
 * supported values: "Failed"` and `spec.podReplacementPolicy: Unsupported
 * value: "": supported values: "Failed", "TerminatingOrFailed"`; "valid pod
 * replacement" and "valid pod replacement with failed" */
static void pod_replacement_policy(void **state)
{
	(void)state;
	job_parts p = { .spec = "'podReplacementPolicy':'TerminatingOrFailed',"
				PFP(EXIT_RULE("In", "[1]")) };
	runtime_finds(&p, "spec.podReplacementPolicy", TP_FIELD_UNSUPPORTED,
		      "\"TerminatingOrFailed\"", "supported values: \"Failed\"");
	p.spec = "'podReplacementPolicy':'',";
	runtime_finds(&p, "spec.podReplacementPolicy", TP_FIELD_UNSUPPORTED, "\"\"",
		      "supported values: \"Failed\", \"TerminatingOrFailed\"");
	p.spec = "'podReplacementPolicy':'TerminatingOrFailed',";
	runtime_allows(&p);
	p.spec = "'podReplacementPolicy':'Failed'," PFP(EXIT_RULE("In", "[1]"));
	runtime_allows(&p);
}

/* --------------------------------------------- successPolicy */

#define SP(rules) "'successPolicy':{'rules':[" rules "]},"

/* "valid success policy": completions 10 (the builder's count, numNodes) */
static void success_policy_valid(void **state)
{
	(void)state;
	job_parts p = { .nodes = "10",
			.spec = SP("{'succeededCount':1,'succeededIndexes':'0,2,4'},"
				   "{'succeededIndexes':'1,3,5-9'}") };
	runtime_allows(&p);
}

static void success_policy_rules(void **state)
{
	(void)state;
	/* `spec.successPolicy.rules: Required value: at least one rules must be
	 * specified when the successPolicy is specified` */
	job_parts p = { .nodes = "5", .spec = SP("") };
	runtime_finds(&p, "spec.successPolicy.rules", TP_FIELD_REQUIRED, NULL,
		      "at least one rules must be specified when the successPolicy is specified");
	/* `spec.successPolicy.rules[0]: Required value: at least one of
	 * succeededCount or succeededIndexes must be specified` */
	p.spec = SP("{}");
	runtime_finds(&p, "spec.successPolicy.rules[0]", TP_FIELD_REQUIRED, NULL,
		      "at least one of succeededCount or succeededIndexes must be specified");
	/* `spec.successPolicy.rules: Too many: 21: must have at most 20 items` */
	char *spec = repeated("'successPolicy':{'rules':[", "{'succeededCount':%d}", 21, "]},");
	p.spec = spec;
	runtime_finds(&p, "spec.successPolicy.rules", TP_FIELD_TOO_MANY, "21",
		      "must have at most 20 items");
	free(spec);
}

static void success_policy_counts(void **state)
{
	(void)state;
	/* `spec.successPolicy.rules[0].succeededCount: must be greater than or
	 * equal to 0` */
	job_parts p = { .nodes = "5", .spec = SP("{'succeededCount':-1}") };
	runtime_finds(&p, "spec.successPolicy.rules[0].succeededCount", TP_FIELD_INVALID, "-1",
		      "must be greater than or equal to 0");
	/* `...succeededCount: Invalid value: 6: must be less than or equal to 5
	 * (the number of specified completions)` */
	p.spec = SP("{'succeededCount':6}");
	runtime_finds(&p, "spec.successPolicy.rules[0].succeededCount", TP_FIELD_INVALID, "6",
		      "must be less than or equal to 5 (the number of specified completions)");
	/* `...succeededCount: Invalid value: 4: must be less than or equal to 3
	 * (the number of indexes in the specified succeededIndexes field)` */
	p.spec = SP("{'succeededCount':4,'succeededIndexes':'0-2'}");
	runtime_finds(&p, "spec.successPolicy.rules[0].succeededCount", TP_FIELD_INVALID, "4",
		      "must be less than or equal to 3 (the number of indexes in the specified "
		      "succeededIndexes field)");
}

/* `spec.successPolicy.rules[0].succeededIndexes: Invalid value:
 * "invalid-format": error parsing succeededIndexes: cannot convert string
 * to integer for index: "invalid"`, the errors of TestValidateIndexesString,
 * and `...succeededIndexes: Too long: may not be more than 65536 bytes` */
static void success_policy_indexes(void **state)
{
	(void)state;
	static const struct {
		const char *nodes, *indexes, *error;
	} cases[] = {
		{ "5", "invalid-format", "cannot convert string to integer for index: \"invalid\"" },
		{ "6", "0,1-3, 5", "cannot convert string to integer for index: \" 5\"" },
		{ "5", "0,1-3,5", "too large index: \"5\"" },
		{ "6", "1-3,0,5", "non-increasing order, previous: 3, current: 0" },
		{ "6", "0,0,5", "non-increasing order, previous: 0, current: 0" },
		{ "6", "0,1-1,5", "non-increasing order, previous: 1, current: 1" },
		{ "6", "-1,0", "cannot convert string to integer for index: \"\"" },
		{ "6", "0,1-", "cannot convert string to integer for index: \"\"" },
		{ "6", "0,1--3", "the fragment \"1--3\" violates the requirement that an index "
				 "interval can have at most two parts separated by '-'" },
		{ "6", "0,,1,3", "cannot convert string to integer for index: \"\"" },
		{ "6", "1-99999999999999999999", "cannot convert string to integer for index: "
						 "\"99999999999999999999\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *spec = strf(SP("{'succeededIndexes':'%s'}"), cases[i].indexes);
		char *value = strf("\"%s\"", cases[i].indexes);
		char *detail = strf("error parsing succeededIndexes: %s", cases[i].error);
		job_parts p = { .nodes = cases[i].nodes, .spec = spec };
		runtime_finds(&p, "spec.successPolicy.rules[0].succeededIndexes", TP_FIELD_INVALID,
			      value, detail);
		free(spec);
		free(value);
		free(detail);
	}
	/* "mixed intervals valid", "single number is valid", a leading + (Atoi) */
	static const char *const good[] = { "0,1-3,5,7-10", "1", "+1-3" };
	for (int i = 0; i < 3; i++) {
		char *spec = strf(SP("{'succeededIndexes':'%s'}"), good[i]);
		job_parts p = { .nodes = "12", .spec = spec };
		runtime_allows(&p);
		free(spec);
	}
	char *spec = malloc(65537 + 64);
	assert_non_null(spec);
	int n = sprintf(spec, "'successPolicy':{'rules':[{'succeededIndexes':'");
	memset(spec + n, '1', 65537);
	strcpy(spec + n + 65537, "'}]},");
	job_parts p = { .nodes = "5", .spec = spec };
	runtime_finds(&p, "spec.successPolicy.rules[0].succeededIndexes", TP_FIELD_TOO_LONG, NULL,
		      "may not be more than 65536 bytes");
	free(spec);
}

/* --------------------------------------------- counts of an Indexed Job */

static void indexed_limits(void **state)
{
	(void)state;
	/* "spec.maxFailedIndexes: Invalid value: 11: must be less than or equal
	 * to completions" */
	job_parts p = { .nodes = "10", .spec = "'backoffLimitPerIndex':1,'maxFailedIndexes':11," };
	runtime_finds(&p, "spec.maxFailedIndexes", TP_FIELD_INVALID, "11",
		      "must be less than or equal to completions");
	/* "spec.maxFailedIndexes: Required value: must be specified when
	 * completions is above 100000" */
	p = (job_parts){ .nodes = "100001", .spec = "'backoffLimitPerIndex':1," };
	runtime_finds(&p, "spec.maxFailedIndexes", TP_FIELD_REQUIRED, NULL,
		      "must be specified when completions is above 100000");
	/* "spec.parallelism: Invalid value: 50000: must be less than or equal to
	 * 10000 when completions are above 100000 and used with backoff limit
	 * per index": here the builder's parallelism is the completions */
	p.spec = "'backoffLimitPerIndex':1,'maxFailedIndexes':1,";
	runtime_finds(&p, "spec.parallelism", TP_FIELD_INVALID, "100001",
		      "must be less than or equal to 10000 when completions are above 100000 and "
		      "used with backoff limit per index");
	/* "spec.maxFailedIndexes: Invalid value: 100001: must be less than or
	 * equal to 100000" */
	p.spec = "'backoffLimitPerIndex':1,'maxFailedIndexes':100001,";
	runtime_finds(&p, "spec.maxFailedIndexes", TP_FIELD_INVALID, "100001",
		      "must be less than or equal to 100000");
	/* "spec.maxFailedIndexes: Invalid value: 50000: must be less than or
	 * equal to 10000 when completions are above 100000 and used with backoff
	 * limit per index" */
	p.spec = "'backoffLimitPerIndex':1,'maxFailedIndexes':50000,";
	runtime_finds(&p, "spec.maxFailedIndexes", TP_FIELD_INVALID, "50000",
		      "must be less than or equal to 10000 when completions are above 100000 and "
		      "used with backoff limit per index");
	/* "valid parallelism and maxFailedIndexes for high completions when
	 * backoffLimitPerIndex is used" (completions 100001 would be parallelism
	 * 100001 here: 10000 each) */
	p = (job_parts){ .nodes = "10000", .spec = "'backoffLimitPerIndex':1,'maxFailedIndexes':10000," };
	runtime_allows(&p);
}

/* --------------------------------------------- selector, managedBy */

/* "spec.selector:Required value": manualSelector without a selector (the
 * API server generates none then); "valid manual selector" */
static void manual_selector_needs_a_selector(void **state)
{
	(void)state;
	job_parts p = { .spec = "'manualSelector':true," };
	runtime_finds(&p, "spec.selector", TP_FIELD_REQUIRED, NULL, "");
	p.spec = "'manualSelector':false,";
	runtime_allows(&p);
	p = (job_parts){ .spec = "'manualSelector':true,'selector':{'matchLabels':{'a':'b'}},",
			 .pod_meta = "'metadata':{'labels':{'a':'b'}}," };
	runtime_allows(&p);
}

#define MANUAL(selector) "'manualSelector':true,'selector':" selector ","
#define EXPR0 "spec.selector.matchExpressions[0]"

/* ValidateLabelSelector of the Job's selector: apimachinery's
 * TestLabelSelectorMatchExpression ("MatchExpression's key name isn't
 * valid", "... operator isn't valid", "... value name isn't valid") and
 * ValidateLabelSelectorRequirement's values rules. */
static void selector_shape(void **state)
{
	(void)state;
	static const spec_case cases[] = {
		{ MANUAL("{'matchExpressions':[{'key':'-key','operator':'In','values':['value']}]}"),
		  EXPR0 ".key", TP_FIELD_INVALID, "\"-key\"", NAME_PART_MSG },
		{ MANUAL("{'matchExpressions':[{'key':'key','operator':'abc','values':['value']}]}"),
		  EXPR0 ".operator", TP_FIELD_INVALID, "\"abc\"", "not a valid selector operator" },
		{ MANUAL("{'matchExpressions':[{'key':'key','operator':'In','values':['-value']}]}"),
		  EXPR0 ".values[0]", TP_FIELD_INVALID, "\"-value\"", LABEL_VALUE_MSG },
		{ MANUAL("{'matchExpressions':[{'key':'key','operator':'NotIn'}]}"), EXPR0 ".values",
		  TP_FIELD_REQUIRED, NULL, "must be specified when `operator` is 'In' or 'NotIn'" },
		{ MANUAL("{'matchExpressions':[{'key':'key','operator':'Exists','values':['v']}]}"),
		  EXPR0 ".values", TP_FIELD_FORBIDDEN, NULL,
		  "may not be specified when `operator` is 'Exists' or 'DoesNotExist'" },
		{ MANUAL("{'matchLabels':{'a':'bad,value'}}"), "spec.selector.matchLabels",
		  TP_FIELD_INVALID, "\"bad,value\"", LABEL_VALUE_MSG },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
	/* "Valid LabelSelector" */
	job_parts p = { .spec = MANUAL("{'matchExpressions':[{'key':'key','operator':'In',"
				       "'values':['value']}]}"),
			.pod_meta = "'metadata':{'labels':{'key':'value'}}," };
	runtime_allows(&p);
}

/* `spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"},
 * ...}: `selector` not auto-generated` (the value here is the template's
 * selector as JSON: the API server's holds the controller-uid it adds);
 * a selector that asks nothing of the Pods' labels stays allowed. */
static void selector_not_generated(void **state)
{
	(void)state;
	static const spec_case cases[] = {
		{ "'selector':{'matchLabels':{'a':'b'}},", "spec.selector", TP_FIELD_INVALID,
		  "{\"matchLabels\":{\"a\":\"b\"}}", "`selector` not auto-generated" },
		{ "'selector':{'matchExpressions':[{'key':'team','operator':'Exists'}]},",
		  "spec.selector", TP_FIELD_INVALID,
		  "{\"matchExpressions\":[{\"key\":\"team\",\"operator\":\"Exists\"}]}",
		  "`selector` not auto-generated" },
		{ "'manualSelector':false,'selector':{'matchLabels':{'controller-uid':'1a2b3c'}},",
		  "spec.selector", TP_FIELD_INVALID, "{\"matchLabels\":{\"controller-uid\":\"1a2b3c\"}}",
		  "`selector` not auto-generated" },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
	job_parts p = { .spec = "'selector':{},", .pod = NULL };
	runtime_allows(&p);
	p.spec = "'selector':{'matchExpressions':[{'key':'team','operator':'DoesNotExist'}]},";
	runtime_allows(&p);
}

/* `spec.template.metadata.labels: Invalid value: map[string]string{"y":"z"}:
 * `selector` does not match template `labels`` (the value here is the
 * template's labels as JSON: the API server's holds JobSet's too); "valid
 * manual selector" */
static void manual_selector_matches_the_labels(void **state)
{
	(void)state;
	static const char *const pod_meta[] = { "'metadata':{'labels':{'y':'z'}},",
						"'metadata':{'labels':{'a':'c','y':'z'}}," };
	static const char *const values[] = { "{\"y\":\"z\"}", "{\"a\":\"c\",\"y\":\"z\"}" };
	for (int i = 0; i < 2; i++) {
		job_parts p = { .spec = MANUAL("{'matchLabels':{'a':'b'}}"), .pod_meta = pod_meta[i] };
		runtime_finds(&p, "spec.template.metadata.labels", TP_FIELD_INVALID, values[i],
			      "`selector` does not match template `labels`");
	}
	job_parts p = { .spec = MANUAL("{'matchExpressions':[{'key':'team','operator':'Exists'}]}"),
			.pod_meta = "'metadata':{'labels':{'y':'z'}}," };
	runtime_finds(&p, "spec.template.metadata.labels", TP_FIELD_INVALID, "{\"y\":\"z\"}",
		      "`selector` does not match template `labels`");
	/* JobSet's own labels are the Pods' too */
	p = (job_parts){ .spec = MANUAL("{'matchLabels':{'a':'b','jobset.sigs.k8s.io/"
					"replicatedjob-name':'node'}}"),
			 .pod_meta = "'metadata':{'labels':{'a':'b'}}," };
	runtime_allows(&p);
}

/* `spec.managedBy: Too long: may not be more than 63 bytes`,
 * `spec.managedBy: Invalid value: "invalid custom controller name": must be
 * a domain-prefixed path (such as "acme.io/foo")`, "valid managedBy field" */
static void managed_by(void **state)
{
	(void)state;
	char *spec = strf("'managedBy':'example.com/%064d',", 0);
	job_parts p = { .spec = spec };
	runtime_finds(&p, "spec.managedBy", TP_FIELD_TOO_LONG, NULL,
		      "may not be more than 63 bytes");
	free(spec);
	p.spec = "'managedBy':'invalid custom controller name',";
	runtime_finds(&p, "spec.managedBy", TP_FIELD_INVALID, "\"invalid custom controller name\"",
		      "must be a domain-prefixed path (such as \"acme.io/foo\")");
	p.spec = "'managedBy':'example.com/foo',";
	runtime_allows(&p);
}

/* --------------------------------------------- metadata */


/* The Job's labels are its template's (JobSet's constructJob), checked by
 * ValidateObjectMeta at metadata.labels: apimachinery's TestValidateLabels
 * ("nospecialchars^=@", "cantendwithadash-", a 254-character key, the value
 * "bad,value"); its success cases stay allowed. */
static void job_labels(void **state)
{
	(void)state;
	static const char *const keys[] = { "nospecialchars^=@", "cantendwithadash-" };
	for (int i = 0; i < 2; i++) {
		char *labels = strf(",'%s':'bar'", keys[i]);
		char *value = strf("\"%s\"", keys[i]);
		job_parts p = { .job_labels = labels };
		runtime_finds(&p, "metadata.labels", TP_FIELD_INVALID, value, NAME_PART_MSG);
		free(labels);
		free(value);
	}
	char *labels = strf(",'%0254d':'bar'", 0);
	char *value = strf("\"%0254d\"", 0);
	job_parts p = { .job_labels = labels };
	runtime_finds(&p, "metadata.labels", TP_FIELD_INVALID, value,
		      "name part must be no more than 63 characters");
	free(labels);
	free(value);
	p.job_labels = ",'nocommasallowed':'bad,value'";
	runtime_finds(&p, "metadata.labels", TP_FIELD_INVALID, "\"bad,value\"", LABEL_VALUE_MSG);
	p.job_labels = ",'simple/simple':'bar','1.2.3.4/5678':'bar','UpperCaseAreOK123':'bar',"
		       "'goodvalue':'123_-.BaR'";
	runtime_allows(&p);
}

/* Annotations: apimachinery's TestValidateAnnotations, at the Job's
 * metadata.annotations and the Pod template's spec.template.annotations
 * (ValidatePodTemplateSpec); case does not matter in a key. */
static void annotations(void **state)
{
	(void)state;
	job_parts p = { .job_meta = ",'annotations':{'cantendwithadash-':'bar'}" };
	runtime_finds(&p, "metadata.annotations", TP_FIELD_INVALID, "\"cantendwithadash-\"",
		      NAME_PART_MSG);
	p = (job_parts){ .pod_meta = "'metadata':{'annotations':{'nospecialchars^=@':'bar'}}," };
	runtime_finds(&p, "spec.template.annotations", TP_FIELD_INVALID, "\"nospecialchars^=@\"",
		      NAME_PART_MSG);
	p = (job_parts){ .job_meta = ",'annotations':{'UpperCase123':'bar','1234/5678':'bar'}",
			 .pod_meta = "'metadata':{'annotations':{'now.with.dots/simple':'bar'}}," };
	runtime_allows(&p);
}

/* TotalAnnotationSizeLimitB: 262144 bytes of keys and values, TestValidateAnnotations'
 * {"a": 262144 b's} refused; {"a": 262143 b's} is allowed there, but
 * JobSet adds its own annotations to the Pod template (some hundred bytes
 * this check does not count), so 1 KiB less is the allowed case here. */
static void annotations_size(void **state)
{
	(void)state;
	for (int over = 0; over < 2; over++) {
		size_t n = over ? 262144 : 262144 - 1024; /* the value of key "a" */
		char *big = malloc(n + 64);
		assert_non_null(big);
		int k = sprintf(big, "'metadata':{'annotations':{'a':'");
		memset(big + k, 'b', n);
		strcpy(big + k + n, "'}},");
		job_parts p = { .pod_meta = big };
		if (over)
			runtime_finds(&p, "spec.template.annotations", TP_FIELD_TOO_LONG, NULL,
				      "may not be more than 262144 bytes");
		else
			runtime_allows(&p);
		free(big);
	}
}

/* The JobSet's own labels and annotations (the runtime's
 * spec.template.metadata, which the JobSet is made with): ValidateObjectMeta
 * of the JobSet at metadata.labels and metadata.annotations. */
static void jobset_metadata(void **state)
{
	(void)state;
	cJSON *tmpl = tt_jsq("{'metadata':{'labels':{'cantendwithadash-':'bar','ok':'bad,value'},"
			     "'annotations':{'nospecialchars^=@':'bar'}},'spec':{}}");
	tp_podv v;
	assert_int_equal(tp__podv_init(&v), TP_OK);
	assert_int_equal(tp__pod_check_jobset_meta(&v, tmpl), TP_OK);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.items[0].path, "metadata.labels");
	assert_string_equal(v.items[0].value, "\"cantendwithadash-\"");
	assert_string_equal(v.items[0].detail, NAME_PART_MSG);
	assert_string_equal(v.items[1].path, "metadata.labels");
	assert_string_equal(v.items[1].value, "\"bad,value\"");
	assert_string_equal(v.items[1].detail, LABEL_VALUE_MSG);
	assert_string_equal(v.items[2].path, "metadata.annotations");
	assert_string_equal(v.items[2].value, "\"nospecialchars^=@\"");
	tp__podv_free(&v);
	cJSON_Delete(tmpl);
}

/* --------------------------------------------- through runtimePatches */

#define PATCH_JOB(job_meta, pod_meta)                                                     \
	"{'template':{'spec':{'replicatedJobs':[{'name':'node','template':{" job_meta "'spec':" \
	"{'template':{" pod_meta "'spec':{}}}}}]}}}"

/* The key of a bad label or annotation the patch brings in (value), shown
 * at spec.runtimePatches for the Job's path at. */
static void patch_finds(const char *patch, const char *value, const char *at)
{
	job_parts good = { 0 };
	tp_result *r = validate_trainjob(runtime_of(&good), patch);
	char *context = strf("the patched template makes Job.batch \"train-node-0\" invalid at %s "
			     "(replicated job \"node\")",
			     at);
	find(r, "spec.runtimePatches", TP_FIELD_INVALID, value, NAME_PART_MSG, context);
	free(context);
	tp_result_free(r);
}

/* A TrainJob's runtimePatches set the Job template's labels and the Pod
 * template's annotations: the patched Job is refused, shown at the
 * patches. */
static void runtime_patches_metadata(void **state)
{
	(void)state;
	patch_finds(PATCH_JOB("'metadata':{'labels':{'cantendwithadash-':'bar'}},", ""),
		    "\"cantendwithadash-\"", "metadata.labels");
	patch_finds(PATCH_JOB("", "'metadata':{'annotations':{'nospecialchars^=@':'x'}},"),
		    "\"nospecialchars^=@\"", "spec.template.annotations");
	job_parts good = { 0 };
	tp_result *r = validate_trainjob(runtime_of(&good),
			      PATCH_JOB("'metadata':{'labels':{'team':'a'}},",
					"'metadata':{'annotations':{'example.com/note':'x'}},"));
	if (!tp_result_ok(r)) {
		tt_dump(r);
		fail_msg("a valid patch is refused");
	}
	tp_result_free(r);
}

/* A runtime's podFailurePolicy without restartPolicy Never is the
 * runtime's finding on a TrainJob too, at the runtime's path. */
static void trainjob_of_a_bad_runtime(void **state)
{
	(void)state;
	job_parts p = { .spec = PFP(EXIT_RULE("In", "[1]")),
			.pod = "{'containers':[{'name':'node','image':'pytorch'}]}" };
	tp_result *r = validate_trainjob(
		runtime_of(&p), PATCH_JOB("'metadata':{'labels':{'team':'a'}},", ""));
	find(r, RT_JOB "spec.template.spec.restartPolicy", TP_FIELD_INVALID, "\"OnFailure\"",
	     "only \"Never\" is supported when podFailurePolicy is specified",
	     "in ClusterTrainingRuntime \"rt\" (replicated job \"node\")");
	tp_result_free(r);
}

/* A runtime's own JobSet labels (spec.template.metadata), which every
 * TrainJob's JobSet copies: refused at their path, the kubeflow profile
 * (upstream's webhook) unchanged. TestValidateLabels: "cantendwithadash-". */
static void runtime_jobset_labels(void **state)
{
	(void)state;
	job_parts p = { 0 };
	cJSON *rt = runtime_of(&p);
	cJSON *meta = tt_jsq("{'labels':{'cantendwithadash-':'bar'}}");
	cJSON_AddItemToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(rt, "spec"), "template"), "metadata",
			      meta);
	cJSON *copy = cJSON_Duplicate(rt, 1);
	tp_result *r = validate_runtime(rt);
	find(r, "spec.template.metadata.labels", TP_FIELD_INVALID, "\"cantendwithadash-\"",
	     NAME_PART_MSG, "the JobSet of every TrainJob would be invalid");
	tp_result_free(r);
	tp_options kf = { .profile = TP_PROFILE_KUBEFLOW };
	assert_int_equal(tp_result_new(&r), TP_OK);
	assert_int_equal(tp_validate_runtime(&kf, TP_OP_CREATE, copy, NULL, r), TP_OK);
	assert_int_equal(tp_result_error_count(r), 0);
	tp_result_free(r);
	cJSON_Delete(copy);
}

/* The runtime's JobSet network.subdomain becomes every Pod's spec.subdomain:
 * a TrainJob of a runtime stored with a bad one is refused at the runtime's
 * path (the runtime's own check refuses it too). */
static void trainjob_of_a_runtime_with_bad_subdomain(void **state)
{
	(void)state;
	job_parts p = { 0 };
	cJSON *rt = runtime_of(&p);
	cJSON_AddItemToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(rt, "spec"),
								      "template"),
						  "spec"),
			      "network", tt_jsq("{'subdomain':'Bad_Sub'}"));
	cJSON *copy = cJSON_Duplicate(rt, 1);
	tp_result *r = validate_trainjob(rt, "{}");
	find(r, "spec.template.spec.network.subdomain", TP_FIELD_INVALID, "\"Bad_Sub\"",
	     "", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters");
	tp_result_free(r);
	r = validate_runtime(copy);
	find(r, "spec.template.spec.network.subdomain", TP_FIELD_INVALID, "\"Bad_Sub\"",
	     "", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters");
	tp_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pod_failure_policy_valid),
		cmocka_unit_test(pod_failure_policy_needs_never),
		cmocka_unit_test(pod_failure_policy_rules),
		cmocka_unit_test(pod_failure_policy_too_many),
		cmocka_unit_test(pod_failure_policy_exit_codes),
		cmocka_unit_test(pod_replacement_policy),
		cmocka_unit_test(success_policy_valid),
		cmocka_unit_test(success_policy_rules),
		cmocka_unit_test(success_policy_counts),
		cmocka_unit_test(success_policy_indexes),
		cmocka_unit_test(indexed_limits),
		cmocka_unit_test(manual_selector_needs_a_selector),
		cmocka_unit_test(selector_shape),
		cmocka_unit_test(selector_not_generated),
		cmocka_unit_test(manual_selector_matches_the_labels),
		cmocka_unit_test(managed_by),
		cmocka_unit_test(job_labels),
		cmocka_unit_test(annotations),
		cmocka_unit_test(annotations_size),
		cmocka_unit_test(jobset_metadata),
		cmocka_unit_test(runtime_patches_metadata),
		cmocka_unit_test(trainjob_of_a_bad_runtime),
		cmocka_unit_test(runtime_jobset_labels),
		cmocka_unit_test(trainjob_of_a_runtime_with_bad_subdomain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

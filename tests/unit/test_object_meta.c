/*
 * test_object_meta.c — where kube-apiserver v1.32 and the CRD layer of
 * `validate` disagreed (issue 30, section 1), each case with the built-in
 * CRDs (webhook/cli/crds/) in both profiles, asserting the finding's text
 * exactly. Every "API server:" comment quotes what a kube-apiserver
 * v1.32.13 answered to `kubectl create --dry-run=server --validate=strict`
 * for the same object.
 *
 * ObjectMeta cases are ported from apimachinery's
 * pkg/api/validation/objectmeta_test.go (TestValidateObjectMetaOwnerReferences,
 * TestValidateObjectMetaUpdateIgnoresCreationTimestamp's neighbours
 * TestValidateAnnotations, TestValidateFinalizersUpdate's name checks,
 * TestValidateObjectMetaTrimsTrailingSlash's generateName masking).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tests/support/testutil.h"
#include "webhook/cli/builtin_crds.h"

static tp_crds *crds;

static int load(void **state)
{
	(void)state;
	return tp_crds_new(&crds) || tw_builtin_crds_load(crds, stderr) ? -1 : 0;
}

static int unload(void **state)
{
	(void)state;
	tp_crds_unref(crds);
	return 0;
}

/* obj (single-quoted JSON) created with the built-in CRDs in profile p. */
static tp_result *create(tp_profile p, const char *obj_text)
{
	cJSON *obj = tt_jsq(obj_text);
	tp_options opt = { .crds = crds, .profile = p, .pod_security = "privileged" };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_validate(&opt, TP_OP_CREATE, obj, NULL, res);
	assert_true(rc == TP_OK || rc == TP_EUNSUPPORTED || rc == TP_EUNAVAILABLE);
	cJSON_Delete(obj);
	return res;
}

/* Whether an error renders exactly as text (field.Error.Error()). */
static bool has(const tp_result *res, const char *text)
{
	bool found = false;
	for (size_t i = 0; i < tp_result_error_count(res) && !found; i++) {
		tp_buf b = TP_BUF_INIT(1 << 20);
		assert_int_equal(tp_field_error_format(tp_result_error_at(res, i), &b), TP_OK);
		found = !strcmp(b.data ? b.data : "", text);
		tp_buf_free(&b);
	}
	return found;
}

/* Errors other than the runtime lookup's (upstream's "spec.RuntimeRef": no
 * runtime is given here). */
static size_t own_errors(const tp_result *res)
{
	size_t n = 0;
	for (size_t i = 0; i < tp_result_error_count(res); i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		n += !(e->path && !strcasecmp(e->path, "spec.runtimeRef"));
	}
	return n;
}

static void want(tp_profile p, const char *obj, const char *const *texts)
{
	tp_result *res = create(p, obj);
	size_t n = 0;
	for (; texts[n]; n++)
		if (!has(res, texts[n])) {
			tt_dump(res);
			fail_msg("missing: %s", texts[n]);
		}
	if (own_errors(res) != n) {
		tt_dump(res);
		fail_msg("want %zu errors, got %zu", n, own_errors(res));
	}
	tp_result_free(res);
}

/* Both profiles refuse obj with exactly these errors (NULL-terminated). */
#define REFUSED(obj, ...)                                                         \
	do {                                                                      \
		const char *const t_[] = { __VA_ARGS__, NULL };                   \
		want(TP_PROFILE_KUBEFLOW, obj, t_);                               \
		want(TP_PROFILE_STRICT, obj, t_);                                 \
	} while (0)

static void admitted(tp_profile p, const char *obj)
{
	const char *const none[] = { NULL };
	want(p, obj, none);
}

#define TJM(meta) "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{" \
		  meta "},'spec':{'runtimeRef':{'name':'torch-distributed'},'trainer':{'numNodes':2}}}"
#define TJ(name, trainer) "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':" \
			  "{'name':'" name "'},'spec':{'runtimeRef':{'name':'torch-distributed'}," \
			  "'trainer':" trainer "}}"
#define CTR(meta) "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime'," \
		  "'metadata':{" meta "},'spec':{'mlPolicy':{'numNodes':1,'torch':{}}}}"

#define NULL_LINE "<nil>: Invalid value: \"null\": some validation rules were not checked because " \
		  "the object was invalid; correct the existing errors to complete validation"
#define QUALIFIED_PART "name part must consist of alphanumeric characters, '-', '_' or '.', and " \
		       "must start and end with an alphanumeric character (e.g. 'MyName',  or "   \
		       "'my.name',  or '123-abc', regex used for validation is "                   \
		       "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define SUBDOMAIN "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "    \
		  "characters, '-' or '.', and must start and end with an alphanumeric character " \
		  "(e.g. 'example.com', regex used for validation is "                             \
		  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

/* ------------------------------------------------ admitted, but refused */

/* API server: strict decoding error: unknown field "status.bogus" (and
 * "status.conditions[0].bogus"): the status subresource is dropped after
 * decoding, not before. */
static void unknown_field_under_status(void **state)
{
	(void)state;
	REFUSED("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'a'},"
		"'spec':{'runtimeRef':{'name':'torch-distributed'}},'status':{'bogus':1}}",
		"unknown field \"status.bogus\"");
	REFUSED("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'a'},"
		"'spec':{'runtimeRef':{'name':'torch-distributed'}},'status':{'conditions':[{'type':'X',"
		"'status':'True','lastTransitionTime':'2024-01-01T00:00:00Z','reason':'R','message':'m',"
		"'bogus':2}]}}",
		"unknown field \"status.conditions[0].bogus\"");
	/* a status the schema knows stays unchecked on the main resource */
	admitted(TP_PROFILE_KUBEFLOW,
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'a'},"
		 "'spec':{'runtimeRef':{'name':'torch-distributed'}},'status':{'conditions':'x'}}");
}

/* API server: metadata.annotations: Too long: may not be more than 262144
 * bytes, then the null line (TooLong blocks the CEL rules).
 * TestValidateAnnotations: keys and values count, 256 KiB exactly passes. */
static void annotations_over_256k(void **state)
{
	(void)state;
	size_t n = 262144 - 2; /* "a" and "b" as keys */
	char *big = malloc(n + 1), *obj = malloc(n + 256);
	memset(big, 'x', n);
	big[n] = '\0';
	snprintf(obj, n + 256, TJM("'name':'a','annotations':{'a':'%.*s','b':'%s'}"), (int)(n - 1), big,
		 "x");
	admitted(TP_PROFILE_KUBEFLOW, obj);
	snprintf(obj, n + 256, TJM("'name':'a','annotations':{'a':'%s','b':'x'}"), big);
	REFUSED(obj, "metadata.annotations: Too long: may not be more than 262144 bytes", NULL_LINE);
	free(big);
	free(obj);
	/* keys are checked lowercased: an upper-case prefix passes */
	admitted(TP_PROFILE_KUBEFLOW, TJM("'name':'a','annotations':{'Example.COM/Key':'v'}"));
	/* API server: metadata.annotations: Invalid value: "bad key!": name part must ... */
	REFUSED(TJM("'name':'a','annotations':{'bad key!':'v'}"),
		"metadata.annotations: Invalid value: \"bad key!\": " QUALIFIED_PART);
}

/* API server: metadata.finalizers: Invalid value: "bad finalizer!": name
 * part must consist of ...; a name with no domain is admitted with
 * 'Warning: metadata.finalizers: "foo": prefer a domain-qualified finalizer
 * name to avoid accidental conflicts with other finalizer writers'. */
static void finalizers(void **state)
{
	(void)state;
	REFUSED(TJM("'name':'a','finalizers':['example.com/ok','bad finalizer!']"),
		"metadata.finalizers: Invalid value: \"bad finalizer!\": " QUALIFIED_PART);
	tp_result *res = create(TP_PROFILE_KUBEFLOW, TJM("'name':'a','finalizers':['foo','orphan']"));
	assert_int_equal(own_errors(res), 0);
	assert_true(tt_has_warning(res, "metadata.finalizers: \"foo\": prefer a domain-qualified finalizer "
				   "name to avoid accidental conflicts with other finalizer writers"));
	assert_false(tt_has_warning(res, "\"orphan\""));
	tp_result_free(res);
	/* ValidateFinalizers: orphan and foregroundDeletion together */
	REFUSED(TJM("'name':'a','finalizers':['orphan','foregroundDeletion']"),
		"metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer "
		"orphan and foregroundDeletion cannot be both set");
}

/* TestValidateObjectMetaOwnerReferences. API server, for an ownerReference
 * with nothing but a name missing its uid:
 *   metadata.ownerReferences.uid: Invalid value: "": uid must not be empty
 * and for {}: the version, kind, name and uid lines, in that order. */
static void owner_references(void **state)
{
	(void)state;
	REFUSED(TJM("'name':'a','ownerReferences':[{'apiVersion':'v1','kind':'ConfigMap','name':'cm'}]"),
		"metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty");
	REFUSED(TJM("'name':'a','ownerReferences':[{}]"),
		"metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
		"metadata.ownerReferences.kind: Invalid value: \"\": kind must not be empty",
		"metadata.ownerReferences.name: Invalid value: \"\": name must not be empty",
		"metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty");
	/* a group with an empty version; more than one slash parses to none */
	REFUSED(TJM("'name':'a','ownerReferences':[{'apiVersion':'apps/','kind':'K','name':'n','uid':'u'},"
		    "{'apiVersion':'a/b/c','kind':'K','name':'n','uid':'u'}]"),
		"metadata.ownerReferences.apiVersion: Invalid value: \"apps/\": version must not be empty",
		"metadata.ownerReferences.apiVersion: Invalid value: \"a/b/c\": version must not be empty");
	/* BannedOwners: a core Event */
	REFUSED(TJM("'name':'a','ownerReferences':[{'apiVersion':'v1','kind':'Event','name':'n','uid':'u'}]"),
		"metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\","
		"\"name\":\"n\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner");
	admitted(TP_PROFILE_STRICT,
		 TJM("'name':'a','ownerReferences':[{'apiVersion':'v1','kind':'ConfigMap','name':'cm',"
		     "'uid':'u1','controller':true},{'apiVersion':'v1','kind':'ConfigMap','name':'b',"
		     "'uid':'u2','controller':false}]"));
}

/* API server:
 *   metadata.ownerReferences: Invalid value: []v1.OwnerReference{...,
 *   Controller:(*bool)(0xc009ab396c), ...}: Only one reference can have
 *   Controller set to true. Found "true" in references for ConfigMap/a and
 *   ConfigMap/b
 * The Go dump (with pointers that change every request) is the list as
 * JSON here. */
static void two_controllers(void **state)
{
	(void)state;
	REFUSED(TJM("'name':'a','ownerReferences':[{'apiVersion':'v1','kind':'ConfigMap','name':'a',"
		    "'uid':'u1','controller':true},{'apiVersion':'v1','kind':'ConfigMap','name':'b',"
		    "'uid':'u2','controller':true}]"),
		"metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		"\"name\":\"a\",\"uid\":\"u1\",\"controller\":true},{\"apiVersion\":\"v1\",\"kind\":"
		"\"ConfigMap\",\"name\":\"b\",\"uid\":\"u2\",\"controller\":true}]: Only one reference "
		"can have Controller set to true. Found \"true\" in references for ConfigMap/a and "
		"ConfigMap/b");
}

/* ------------------------------------------------ refused, but admitted */

/* API server: admitted as trainjob.trainer.kubeflow.org/ex-zhl27: the name
 * is made before the CEL rules on metadata.name run, and they pass. With a
 * bad prefix:
 *   metadata.generateName: Invalid value: "Ex_": a lowercase RFC 1123 subdomain ...
 *   metadata.name: Invalid value: "Ex_bt46j": a lowercase RFC 1123 subdomain ...
 *   <nil>: Invalid value: "object": metadata.name must match RFC 1035 DNS label format
 * (the five random characters are "xxxxx" here). */
static void generate_name(void **state)
{
	(void)state;
	admitted(TP_PROFILE_KUBEFLOW, TJM("'generateName':'ex-'"));
	admitted(TP_PROFILE_STRICT, TJM("'generateName':'ex-'"));
	REFUSED(TJM("'generateName':'Ex_'"),
		"metadata.generateName: Invalid value: \"Ex_\": " SUBDOMAIN,
		"metadata.name: Invalid value: \"Ex_xxxxx\": " SUBDOMAIN,
		"<nil>: Invalid value: \"object\": metadata.name must match RFC 1035 DNS label format");
	/* maskTrailingDash: "a-" is checked as "a" (its last two bytes become "a") */
	admitted(TP_PROFILE_KUBEFLOW, TJM("'generateName':'a-'"));
	/* a long prefix is cut to 58: the generated name fits the 63 of the CEL rule */
	admitted(TP_PROFILE_KUBEFLOW,
		 TJM("'generateName':'a123456789a123456789a123456789a123456789a123456789a123456789a-'"));
	/* neither: Required, which blocks the CEL rules */
	REFUSED(TJM("'namespace':'default'"),
		"metadata.name: Required value: name or generateName is required", NULL_LINE);
}

/* API server: admitted (rest.BeforeCreate clears a cluster-scoped object's
 * namespace before validation): a warning here, not a denial. */
static void namespace_on_cluster_scoped_kind(void **state)
{
	(void)state;
	tp_result *res = create(TP_PROFILE_KUBEFLOW, CTR("'name':'rt','namespace':'default'"));
	assert_int_equal(own_errors(res), 0);
	assert_true(tt_has_warning(res, "metadata.namespace: \"default\" is cleared: a "
				   "ClusterTrainingRuntime is cluster-scoped, so the API server "
				   "ignores its namespace; remove the line"));
	tp_result_free(res);
}

/* API server: admitted (apiextensions drops format int32 before
 * validating). The strict profile refuses what the controller's int32
 * cannot hold; no finding is "<nil>: Invalid value: """. */
static void int32_overflow(void **state)
{
	(void)state;
	admitted(TP_PROFILE_KUBEFLOW, TJ("a", "{'numNodes':3000000000}"));
	tp_result *res = create(TP_PROFILE_STRICT, TJ("a", "{'numNodes':3000000000}"));
	assert_true(has(res, "spec.trainer.numNodes: Invalid value: 3000000000: must be no more than "
			     "2147483647 (format: int32): the API server stores it, but the controller "
			     "reads it into an int32 and cannot read it"));
	assert_false(tt_has_error(res, NULL, NULL));
	tp_result_free(res);
	res = create(TP_PROFILE_STRICT, TJ("a", "{'numProcPerNode':-3000000000}"));
	assert_true(has(res, "spec.trainer.numProcPerNode: Invalid value: -3000000000: must be no less "
			     "than -2147483648 (format: int32): the API server stores it, but the "
			     "controller reads it into an int32 and cannot read it"));
	tp_result_free(res);
}

/* ------------------------------------------------ paths and words */

/* API server:
 *   spec.trainer.numNodes: Invalid value: "number": spec.trainer.numNodes in body must be of type integer: "number"
 *   <nil>: Invalid value: "null": some validation rules were not checked ...
 */
static void float_for_int32(void **state)
{
	(void)state;
	REFUSED(TJ("a", "{'numNodes':1.5}"),
		"spec.trainer.numNodes: Invalid value: \"number\": spec.trainer.numNodes in body must be "
		"of type integer: \"number\"",
		NULL_LINE);
}

/* API server:
 *   spec.trainer.resourcesPerNode.limits.memory: Invalid value: "boolean": ... must be of type integer,string: "boolean"
 *   <nil>: Invalid value: "": "spec.trainer.resourcesPerNode.limits.memory" must validate at least one schema (anyOf)
 *   spec.trainer.resourcesPerNode.limits.memory: Invalid value: "boolean": ... must be of type integer: "boolean"
 *   <nil>: Invalid value: "null": some validation rules were not checked ...
 */
static void int_or_string(void **state)
{
	(void)state;
	REFUSED(TJ("a", "{'resourcesPerNode':{'limits':{'memory':true}}}"),
		"spec.trainer.resourcesPerNode.limits.memory: Invalid value: \"boolean\": "
		"spec.trainer.resourcesPerNode.limits.memory in body must be of type integer,string: "
		"\"boolean\"",
		"<nil>: Invalid value: \"\": \"spec.trainer.resourcesPerNode.limits.memory\" must "
		"validate at least one schema (anyOf)",
		"spec.trainer.resourcesPerNode.limits.memory: Invalid value: \"boolean\": "
		"spec.trainer.resourcesPerNode.limits.memory in body must be of type integer: \"boolean\"",
		NULL_LINE);
}

/* API server: CEL failures show the schema's type name:
 *   spec.managedBy: Invalid value: "string": ManagedBy must be ... if set
 *   spec.trainer.numProcPerNode: Invalid value: "integer": numProcPerNode must be greater than or equal to 1
 *   <nil>: Invalid value: "object": metadata.name must be no more than 63 characters
 */
static void cel_shows_the_type(void **state)
{
	(void)state;
	REFUSED("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'a'},"
		"'spec':{'runtimeRef':{'name':'torch-distributed'},'managedBy':'foo'}}",
		"spec.managedBy: Invalid value: \"string\": ManagedBy must be "
		"trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set");
	REFUSED(TJ("a", "{'numProcPerNode':0}"),
		"spec.trainer.numProcPerNode: Invalid value: \"integer\": numProcPerNode must be greater "
		"than or equal to 1");
	/* the name rule beside ObjectMeta's: both, as the API server lists them */
	want(TP_PROFILE_KUBEFLOW, TJ("Ex", "{}"),
	     (const char *const[]){ "metadata.name: Invalid value: \"Ex\": " SUBDOMAIN,
				    "<nil>: Invalid value: \"object\": metadata.name must match RFC "
				    "1035 DNS label format", NULL });
}

/* API server, ValidateLabels: key and value errors at "metadata.labels",
 * the value's too:
 *   metadata.labels: Invalid value: "bad value!": a valid label must be an empty string or ...
 *   metadata.labels: Invalid value: "-x": name part must consist of ...
 */
static void label_keys_and_values(void **state)
{
	(void)state;
	REFUSED(TJM("'name':'a','labels':{'k':'bad value!'}"),
		"metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or "
		"consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
		"alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
		"validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
	REFUSED(TJM("'name':'a','labels':{'bad key!':'v','-x':'v'}"),
		"metadata.labels: Invalid value: \"bad key!\": " QUALIFIED_PART,
		"metadata.labels: Invalid value: \"-x\": " QUALIFIED_PART);
}

/* API server:
 *   spec.mlPolicy.torch.envInjection.targets[0].containerNames[1]: Duplicate value: "a"
 *   spec.template.spec.replicatedJobs[1]: Duplicate value: map[string]interface {}{"name":"node"}
 * the second (a Go dump) as the item's keys in JSON. */
static void duplicate_values(void **state)
{
	(void)state;
	REFUSED("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime','metadata':"
		"{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},'spec':{'mlPolicy':"
		"{'torch':{'envInjection':{'targets':[{'jobName':'node','containerNames':['a','a']}]}}}}}",
		"spec.mlPolicy.torch.envInjection.targets[0].containerNames[1]: Duplicate value: \"a\"");
	want(TP_PROFILE_KUBEFLOW,
	     "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime','metadata':"
	     "{'name':'rt'},'spec':{'template':{'spec':{'replicatedJobs':[{'name':'node','template':{}},"
	     "{'name':'node','template':{}}]}}}}",
	     (const char *const[]){ "spec.template.spec.replicatedJobs[1]: Duplicate value: "
				    "{\"name\":\"node\"}", NULL });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unknown_field_under_status),
		cmocka_unit_test(annotations_over_256k),
		cmocka_unit_test(finalizers),
		cmocka_unit_test(owner_references),
		cmocka_unit_test(two_controllers),
		cmocka_unit_test(generate_name),
		cmocka_unit_test(namespace_on_cluster_scoped_kind),
		cmocka_unit_test(int32_overflow),
		cmocka_unit_test(float_for_int32),
		cmocka_unit_test(int_or_string),
		cmocka_unit_test(cel_shows_the_type),
		cmocka_unit_test(label_keys_and_values),
		cmocka_unit_test(duplicate_values),
	};
	return cmocka_run_group_tests(tests, load, unload);
}

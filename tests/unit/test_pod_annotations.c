/*
 * test_pod_annotations.c — what a Pod template's annotations mean to the
 * API server (policy/pod/annotations.c: ValidatePodSpecificAnnotations,
 * validateSeccompAnnotationsAndFields, validateAppArmorAnnotationsAnd-
 * FieldsMatchOnCreate) and the Pods' subdomain a runtime's
 * network.subdomain becomes (policy/pod/runtime.c), through the strict
 * profile's entry point: a ClusterTrainingRuntime whose trainer job's Pod
 * template breaks one rule is refused at the runtime's path. The cases are
 * Kubernetes v1.32's, under their names in
 * pkg/apis/core/validation/validation_test.go (TestValidatePod,
 * TestValidateAppArmorProfileFormat, TestValidateSeccompAnnotationsAnd-
 * FieldsMatch), and those a differential test against kube-apiserver
 * v1.32.13 found ("kube-apiserver/..."). A case wants exactly its errors,
 * in order, by type, path, value and the API server's detail.
 */
#include "tests/unit/up_cases.h"

#include <stdio.h>

#define PFX "spec.template.spec.replicatedJobs[0].template.spec.template"
#define CONTEXT "the Job.batch of every TrainJob would be invalid"
#define AA "container.apparmor.security.beta.kubernetes.io/"
#define SC "container.seccomp.security.alpha.kubernetes.io/"
#define SP "seccomp.security.alpha.kubernetes.io/pod"
#define COST "controller.kubernetes.io/pod-deletion-cost"

typedef struct want {
	tp_field_type type;
	const char *path;   /* after PFX, or whole when it starts with "spec.template.spec.network" */
	const char *value;  /* NULL: not checked */
	const char *detail; /* the API server's start of the detail; NULL: not checked */
} want;

typedef struct row {
	const char *annotations; /* single-quoted JSON */
	const char *spec;        /* the Pod spec, single-quoted JSON */
	const char *network;     /* the JobSet's network, or NULL */
	want errs[4];            /* ends at the first with path NULL */
} row;

/* A ClusterTrainingRuntime "rt" whose trainer job's Pod template has
 * these annotations and spec. */
static cJSON *runtime_with(const row *r)
{
	static const char fmt[] =
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		"'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		"'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{%s%s%s'replicatedJobs':"
		"[{'name':'node','template':{'metadata':{'labels':"
		"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		"{'metadata':{'annotations':%s},'spec':%s}}}}]}}}}";
	const char *net = r->network ? r->network : "";
	size_t n = sizeof(fmt) + strlen(net) + strlen(r->annotations) + strlen(r->spec) + 16;
	char *buf = malloc(n);
	assert_non_null(buf);
	snprintf(buf, n, fmt, r->network ? "'network':" : "", net, r->network ? "," : "",
		 r->annotations, r->spec);
	cJSON *rt = tt_jsq(buf);
	free(buf);
	return rt;
}

static void expect(const row *r, const want *errs, size_t n, tp_profile profile)
{
	cJSON *rt = runtime_with(r);
	assert_non_null(rt);
	tp_options opt = { .profile = profile };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, res), TP_OK);
	if (tp_result_error_count(res) != n) {
		tt_dump(res);
		fail_msg("%zu errors, want %zu", tp_result_error_count(res), n);
	}
	for (size_t i = 0; i < n; i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		const want *w = &errs[i];
		char path[512];
		bool whole = !strncmp(w->path, "spec.template.spec.network", 26);
		snprintf(path, sizeof(path), "%s%s", whole ? "" : PFX, w->path);
		bool ok = e->type == w->type && !strcmp(e->path, path);
		if (w->value)
			ok &= e->value && !strcmp(e->value, w->value);
		if (w->detail)
			ok &= !strncmp(e->detail, w->detail, strlen(w->detail));
		if (!whole && w->detail)
			ok &= strstr(e->detail, CONTEXT) != NULL;
		if (!ok) {
			tt_dump(res);
			fail_msg("error %zu: want %d at %s, value %s, detail %s", i, (int)w->type, path,
				 w->value ? w->value : "(any)", w->detail ? w->detail : "(any)");
		}
	}
	tp_result_free(res);
	cJSON_Delete(rt);
}

static size_t count(const row *r)
{
	size_t n = 0;
	while (n < 4 && r->errs[n].path)
		n++;
	return n;
}

static void run_row(void **state)
{
	const row *r = *state;
	expect(r, r->errs, count(r), TP_PROFILE_STRICT);
}

#define ROW(name, ann, spec, net, ...) \
	UP_ROW(name, run_row, (&(const row){ ann, spec, net, { __VA_ARGS__ } }))
/* The Pod spec: the trainer's container "node", then members. */
#define S(members) "{'containers':[{'name':'node','image':'pytorch'" members "}]}"
#define SPOD(members) "{'containers':[{'name':'node','image':'pytorch'}]" members "}"
#define CTR_SC(sc) S(",'securityContext':" sc)
#define OK(name, ann, spec) ROW(name, ann, spec, NULL, { 0 })
#define BAD(name, ann, spec, ...) ROW(name, ann, spec, NULL, __VA_ARGS__)
#define E(type, path, value, detail) { TP_FIELD_##type, path, value, detail }
#define KEY(k) ".annotations[" k "]"
#define POD_SECCOMP ".spec.securityContext.seccompProfile"
#define CTR_SECCOMP ".spec.containers[0].securityContext.seccompProfile"
#define CTR_AA ".spec.containers[0].securityContext.appArmorProfile"
#define MATCH_SECCOMP "seccomp type in annotation and field must match"
#define MATCH_AA "apparmor type in annotation and field must match"

/* ----------------------------------------- ValidatePodSpecificAnnotations */

static const up_case specific[] = {
	OK("TestValidatePod/valid: seccomp annotations", "{'" SP "':'runtime/default','" SC
	   "node':'localhost/profiles/a.json'}", S("")),
	OK("TestValidatePod/valid: docker/default and unconfined seccomp",
	   "{'" SP "':'docker/default','" SC "node':'unconfined'}", S("")),
	OK("TestValidatePod/valid: pod-deletion-cost", "{'" COST "':'-10'}", S("")),
	OK("GetDeletionCostFromPodAnnotations/0 and the int32 bounds",
	   "{'" COST "':'0'}", S("")),
	OK("GetDeletionCostFromPodAnnotations/2147483647", "{'" COST "':'2147483647'}", S("")),
	OK("GetDeletionCostFromPodAnnotations/-2147483648", "{'" COST "':'-2147483648'}", S("")),
	OK("TestValidatePod/valid: mirror pod with nodeName",
	   "{'kubernetes.io/config.mirror':'x'}", SPOD(",'nodeName':'n1'")),
	BAD("TestValidatePod/must be a valid container seccomp profile", "{'" SC "node':'foo'}",
	    S(""), E(INVALID, ".annotations." SC "node", "\"foo\"", "must be a valid seccomp profile")),
	BAD("TestValidatePod/must be a non-empty container profile in seccomp annotation",
	    "{'" SC "node':''}", S(""),
	    E(INVALID, ".annotations." SC "node", "\"\"", "must be a valid seccomp profile")),
	BAD("TestValidatePod/must be a relative path in a node-local seccomp profile annotation",
	    "{'" SP "':'localhost//foo'}", S(""),
	    E(INVALID, ".annotations." SP, "\"/foo\"", "must be a relative path")),
	BAD("TestValidatePod/must not start with '../'", "{'" SP "':'localhost/../foo'}", S(""),
	    E(INVALID, ".annotations." SP, "\"../foo\"", "must not contain '..'")),
	OK("validatePathNoBacksteps/a..b is a name", "{'" SP "':'localhost/a..b/c'}", S("")),
	BAD("TestValidatePod/AppArmor profile must apply to a container",
	    "{'" AA "node':'runtime/default','" AA "init':'runtime/default','" AA
	    "fake-ctr':'runtime/default'}",
	    "{'initContainers':[{'name':'init','image':'busybox'}],"
	    "'containers':[{'name':'node','image':'pytorch'}]}",
	    E(INVALID, KEY(AA "fake-ctr"), "\"fake-ctr\"", "container not found")),
	BAD("TestValidatePod/AppArmor profile format must be valid", "{'" AA "node':'bad-name'}",
	    S(""),
	    E(INVALID, KEY(AA "node"), "\"bad-name\"", "invalid AppArmor profile name: \"bad-name\"")),
	BAD("TestValidatePod/only default AppArmor profile may start with runtime/",
	    "{'" AA "node':'runtime/foo'}", S(""),
	    E(INVALID, KEY(AA "node"), "\"runtime/foo\"", "invalid AppArmor profile name")),
	OK("TestValidateAppArmorProfileFormat/empty", "{'" AA "node':''}", S("")),
	OK("TestValidateAppArmorProfileFormat/runtime/default", "{'" AA "node':'runtime/default'}",
	   S("")),
	OK("TestValidateAppArmorProfileFormat/unconfined", "{'" AA "node':'unconfined'}", S("")),
	BAD("TestValidateAppArmorProfileFormat/baz", "{'" AA "node':'baz'}", S(""),
	    E(INVALID, KEY(AA "node"), "\"baz\"", "invalid AppArmor profile name: \"baz\"")),
	OK("TestValidateAppArmorProfileFormat/localhost//usr/sbin/ntpd",
	   "{'" AA "node':'localhost//usr/sbin/ntpd'}", S("")),
	OK("TestValidateAppArmorProfileFormat/localhost/foo-bar", "{'" AA "node':'localhost/foo-bar'}",
	   S("")),
	BAD("TestValidatePod/mirror-pod present without nodeName",
	    "{'kubernetes.io/config.mirror':''}", S(""),
	    E(INVALID, KEY("kubernetes.io/config.mirror"), "\"\"",
	      "must set spec.nodeName if mirror pod annotation is set")),
	BAD("TestValidatePod/mirror-pod populated without nodeName",
	    "{'kubernetes.io/config.mirror':'foo'}", S(""),
	    E(INVALID, KEY("kubernetes.io/config.mirror"), "\"foo\"",
	      "must set spec.nodeName if mirror pod annotation is set")),
	BAD("TestValidatePod/invalid pod-deletion-cost", "{'" COST "':'text'}", S(""),
	    E(INVALID, KEY(COST), "\"text\"", "must be a 32bit integer")),
	BAD("TestValidatePod/invalid leading zeros pod-deletion-cost", "{'" COST "':'008'}", S(""),
	    E(INVALID, KEY(COST), "\"008\"", "must be a 32bit integer")),
	BAD("TestValidatePod/invalid leading plus sign pod-deletion-cost", "{'" COST "':'+10'}",
	    S(""), E(INVALID, KEY(COST), "\"+10\"", "must be a 32bit integer")),
	BAD("GetDeletionCostFromPodAnnotations/over int32", "{'" COST "':'2147483648'}", S(""),
	    E(INVALID, KEY(COST), "\"2147483648\"", "must be a 32bit integer")),
	BAD("GetDeletionCostFromPodAnnotations/a sign alone", "{'" COST "':'-'}", S(""),
	    E(INVALID, KEY(COST), "\"-\"", "must be a 32bit integer")),
	BAD("kube-apiserver/AppArmor annotation foo", "{'" AA "node':'foo'}", S(""),
	    E(INVALID, KEY(AA "node"), "\"foo\"", "invalid AppArmor profile name: \"foo\"")),
	BAD("kube-apiserver/AppArmor annotation for no container", "{'" AA "nosuch':'runtime/default'}",
	    S(""), E(INVALID, KEY(AA "nosuch"), "\"nosuch\"", "container not found")),
};

/* ------------------------------------- annotations against their fields */

static const up_case matches[] = {
	BAD("TestValidatePod/must match seccomp profile type and pod annotation",
	    "{'" SP "':'unconfined'}", SPOD(",'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}}"),
	    E(FORBIDDEN, POD_SECCOMP ".type", NULL, MATCH_SECCOMP)),
	BAD("TestValidatePod/must match seccomp profile type and container annotation",
	    "{'" SC "node':'unconfined'}", CTR_SC("{'seccompProfile':{'type':'RuntimeDefault'}}"),
	    E(FORBIDDEN, CTR_SECCOMP ".type", NULL, MATCH_SECCOMP)),
	OK("TestValidateSeccompAnnotationsAndFieldsMatch/unconfined annotation and "
	   "SeccompProfileTypeUnconfined should return empty",
	   "{'" SP "':'unconfined'}", SPOD(",'securityContext':{'seccompProfile':{'type':'Unconfined'}}")),
	OK("TestValidateSeccompAnnotationsAndFieldsMatch/runtime/default annotation and "
	   "SeccompProfileTypeRuntimeDefault should return empty",
	   "{'" SC "node':'runtime/default'}", CTR_SC("{'seccompProfile':{'type':'RuntimeDefault'}}")),
	OK("TestValidateSeccompAnnotationsAndFieldsMatch/docker/default annotation and "
	   "SeccompProfileTypeRuntimeDefault should return empty",
	   "{'" SP "':'docker/default'}", SPOD(",'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}}")),
	OK("TestValidateSeccompAnnotationsAndFieldsMatch/localhost/test.json annotation and "
	   "SeccompProfileTypeLocalhost with correct profile should return empty",
	   "{'" SP "':'localhost/test.json'}",
	   SPOD(",'securityContext':{'seccompProfile':{'type':'Localhost','localhostProfile':'test.json'}}")),
	BAD("TestValidateSeccompAnnotationsAndFieldsMatch/localhost/test.json annotation and "
	    "SeccompProfileTypeLocalhost with different profile should error",
	    "{'" SP "':'localhost/test.json'}",
	    SPOD(",'securityContext':{'seccompProfile':{'type':'Localhost','localhostProfile':'different.json'}}"),
	    E(FORBIDDEN, POD_SECCOMP ".localhostProfile", NULL,
	      "seccomp profile in annotation and field must match")),
	BAD("TestValidateSeccompAnnotationsAndFieldsMatch/localhost/test.json annotation and "
	    "SeccompProfileTypeUnconfined with different profile should error",
	    "{'" SC "node':'localhost/test.json'}", CTR_SC("{'seccompProfile':{'type':'Unconfined'}}"),
	    E(FORBIDDEN, CTR_SECCOMP ".type", NULL, MATCH_SECCOMP)),
	BAD("TestValidateSeccompAnnotationsAndFieldsMatch/localhost/test.json annotation and "
	    "SeccompProfileTypeRuntimeDefault with different profile should error",
	    "{'" SP "':'localhost/test.json'}",
	    SPOD(",'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}}"),
	    E(FORBIDDEN, POD_SECCOMP ".type", NULL, MATCH_SECCOMP)),
	OK("validateSeccompAnnotationsAndFields/the Pod's field does not reach a container's "
	   "annotation", "{'" SC "node':'unconfined'}",
	   SPOD(",'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}}")),
	BAD("TestValidatePod/mismatched AppArmor field and annotation types",
	    "{'" AA "node':'runtime/default'}", CTR_SC("{'appArmorProfile':{'type':'Unconfined'}}"),
	    E(FORBIDDEN, CTR_AA ".type", NULL, MATCH_AA)),
	BAD("TestValidatePod/mismatched AppArmor pod field and annotation types",
	    "{'" AA "node':'runtime/default'}",
	    SPOD(",'securityContext':{'appArmorProfile':{'type':'Unconfined'}}"),
	    E(FORBIDDEN, CTR_AA ".type", NULL, MATCH_AA)),
	BAD("TestValidatePod/mismatched AppArmor localhost profiles", "{'" AA "node':'localhost/foo'}",
	    CTR_SC("{'appArmorProfile':{'type':'Localhost','localhostProfile':'bar'}}"),
	    E(FORBIDDEN, CTR_AA ".localhostProfile", NULL,
	      "apparmor profile in annotation and field must match")),
	OK("TestValidatePod/matching AppArmor field and annotation", "{'" AA "node':'localhost/foo'}",
	   CTR_SC("{'appArmorProfile':{'type':'Localhost','localhostProfile':'foo'}}")),
	/* the field itself is refused on Windows (validateWindows), not the mismatch */
	BAD("validateAppArmorAnnotationsAndFieldsMatchOnCreate/windows pods are skipped",
	    "{'" AA "node':'runtime/default'}",
	    SPOD(",'os':{'name':'windows'},'securityContext':{'appArmorProfile':{'type':'Unconfined'}}"),
	    E(FORBIDDEN, ".spec.securityContext.appArmorProfile", NULL,
	      "cannot be set for a windows pod")),
	BAD("kube-apiserver/seccomp annotation unconfined, field RuntimeDefault",
	    "{'" SP "':'unconfined'}", SPOD(",'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}}"),
	    E(FORBIDDEN, POD_SECCOMP ".type", NULL, MATCH_SECCOMP)),
};

/* ------------------------------------------- the JobSet's network.subdomain */

#define NET "spec.template.spec.network.subdomain"
#define LONG64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const up_case subdomain[] = {
	ROW("ValidatePodSpec/a subdomain that is a label", "{}", S(""), "{'subdomain':'workers'}",
	    { 0 }),
	ROW("kube-apiserver/subdomain Bad_Sub", "{}", S(""), "{'subdomain':'Bad_Sub'}",
	    E(INVALID, NET, "\"Bad_Sub\"", "a lowercase RFC 1123 label must consist of")),
	ROW("kube-apiserver/subdomain of 64 characters", "{}", S(""),
	    "{'subdomain':'" LONG64 "'}",
	    E(INVALID, NET, "\"" LONG64 "\"", "must be no more than 63 characters")),
	ROW("ValidateDNS1123Label/a subdomain with dots", "{}", S(""), "{'subdomain':'a.b'}",
	    E(INVALID, NET, "\"a.b\"", "must not contain dots")),
};

/* --------------------------------------------------- the kubeflow profile */

static void kubeflow_unchanged(void **state)
{
	(void)state;
	static const row r = { "{'" AA "nosuch':'foo','" COST "':'x'}",
			       SPOD(",'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}}"),
			       "{'subdomain':'Bad_Sub'}", { { 0 } } };
	expect(&r, NULL, 0, TP_PROFILE_KUBEFLOW);
}

static const up_case profiles[] = {
	UP_CASE("the kubeflow profile does not look at them", kubeflow_unchanged),
};

int main(void)
{
	int rc = UP_RUN("ValidatePodSpecificAnnotations", specific);
	rc |= UP_RUN("annotations against fields", matches);
	rc |= UP_RUN("network.subdomain", subdomain);
	rc |= UP_RUN("profiles", profiles);
	return rc;
}

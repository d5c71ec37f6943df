/*
 * test_pod_onepass.c — the Pod checks read a container's, a Pod spec's, a
 * volume mount's and a Job spec's members in one walk each
 * (policy/pod/members.h) instead of one lookup by name each, and must say
 * what the lookups said:
 *   - of two members of one name the FIRST counts, as tp_member finds it
 *     (a JSON object may repeat a name; cJSON keeps both);
 *   - members in any order give the same findings, in the same order;
 *   - an absent member, a null one and one of the wrong type read as they
 *     did: absent and null are unset, a string where an object belongs is
 *     no object, a number where a string belongs is no string.
 * pod/fields_since.c's look for the fields a release does not know reads
 * the same structs. The cases are kube-apiserver's rules of pkg/apis/core/validation
 * (validateContainers' "image" Required, validateInitContainers' Forbidden
 * probes, validateRestartPolicy, ValidateVolumeMounts' mountPath Required)
 * and pkg/apis/batch/validation (validateJobSpec's completionMode), as
 * test_pod_validation ports them; here only the reading is at stake.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/pod/pod.h"
#include "tests/support/testutil.h"

/* Every finding of a Job template (job) or Pod template, one line each, in
 * the order given. */
static char *findings_of(const char *object, bool job)
{
	cJSON *obj = tt_jsq(object);
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(job ? tp_pod_validate_job_template(obj, res)
			     : tp_pod_validate_template(obj, NULL, res),
			 TP_OK);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_buf_adds(&b, ""), TP_OK);
	for (size_t i = 0; i < tp_result_error_count(res); i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		assert_int_equal(tp_buf_addf(&b, "%d %s %s %s\n", (int)e->type,
					     e->path ? e->path : "-", e->value ? e->value : "-",
					     e->detail),
				 TP_OK);
	}
	tp_result_free(res);
	cJSON_Delete(obj);
	return b.data;
}

static char *pod_findings(const char *spec)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "{'spec':%s}", spec);
	return findings_of(buf, false);
}

static void same_findings(const char *a, const char *b, bool job)
{
	char *fa = findings_of(a, job), *fb = findings_of(b, job);
	if (strcmp(fa, fb))
		fail_msg("findings differ:\n%s---\n%s", fa, fb);
	free(fa);
	free(fb);
}

static bool has(const char *findings, const char *part)
{
	return strstr(findings, part) != NULL;
}

/* ------------------------------------------------ the first member wins */

/* TestValidateContainers "zero-length image": the first image counts. */
static void container_first_member_wins(void **state)
{
	(void)state;
	char *f = pod_findings("{'containers':[{'name':'c','image':'img','image':''}]}");
	assert_false(has(f, "containers[0].image"));
	free(f);
	f = pod_findings("{'containers':[{'name':'c','image':'','image':'img'}]}");
	assert_true(has(f, "0 spec.containers[0].image - \n")); /* TP_FIELD_REQUIRED */
	free(f);
	/* the container's name: its findings name the first */
	f = pod_findings("{'containers':[{'name':'Bad_Name','name':'c','image':'i'}]}");
	assert_true(has(f, "spec.containers[0].name \"Bad_Name\""));
	free(f);
	/* TestValidateInitContainers: probes forbidden without restartPolicy
	 * Always, the first restartPolicy deciding */
	f = pod_findings("{'containers':[{'name':'c','image':'i'}],'initContainers':[{'name':'i',"
			 "'image':'i','restartPolicy':'Always','restartPolicy':'Never',"
			 "'livenessProbe':{'exec':{'command':['true']}}}]}");
	assert_false(has(f, "livenessProbe"));
	free(f);
	f = pod_findings("{'containers':[{'name':'c','image':'i'}],'initContainers':[{'name':'i',"
			 "'image':'i','restartPolicy':'Never','restartPolicy':'Always',"
			 "'livenessProbe':{'exec':{'command':['true']}}}]}");
	assert_true(has(f, "spec.initContainers[0].livenessProbe"));
	free(f);
}

/* ValidateVolumeMounts "empty mountpath": the first mountPath counts. */
static void mount_first_member_wins(void **state)
{
	(void)state;
	const char *vols = "'volumes':[{'name':'v','emptyDir':{}}]";
	char buf[1024];
	snprintf(buf, sizeof(buf), "{%s,'containers':[{'name':'c','image':'i','volumeMounts':"
		 "[{'name':'v','mountPath':'/m','mountPath':''}]}]}", vols);
	char *f = pod_findings(buf);
	assert_false(has(f, "mountPath"));
	free(f);
	snprintf(buf, sizeof(buf), "{%s,'containers':[{'name':'c','image':'i','volumeMounts':"
		 "[{'name':'v','mountPath':'','mountPath':'/m'}]}]}", vols);
	f = pod_findings(buf);
	assert_true(has(f, "spec.containers[0].volumeMounts[0].mountPath"));
	free(f);
}

/* TestValidateVolumes "name not a DNS label": the volume's first name,
 * read in the walk over its sources. */
static void volume_first_member_wins(void **state)
{
	(void)state;
	char *f = pod_findings("{'volumes':[{'emptyDir':{},'name':'Bad_Vol','name':'v'}],"
			       "'containers':[{'name':'c','image':'i'}]}");
	assert_true(has(f, "spec.volumes[0].name \"Bad_Vol\""));
	free(f);
	f = pod_findings("{'volumes':[{'name':'v','emptyDir':{},'name':'Bad_Vol'}],"
			 "'containers':[{'name':'c','image':'i'}]}");
	assert_string_equal(f, "");
	free(f);
	/* a name that is no string: Required */
	f = pod_findings("{'volumes':[{'name':5,'emptyDir':{}}],"
			 "'containers':[{'name':'c','image':'i'}]}");
	assert_true(has(f, "0 spec.volumes[0].name - \n"));
	free(f);
}

/* TestValidateRestartPolicy, and the first containers list. */
static void pod_spec_first_member_wins(void **state)
{
	(void)state;
	char *f = pod_findings("{'restartPolicy':'Sometimes','restartPolicy':'Never',"
			       "'containers':[{'name':'c','image':'i'}]}");
	assert_true(has(f, "spec.restartPolicy \"Sometimes\""));
	free(f);
	f = pod_findings("{'restartPolicy':'Never','restartPolicy':'Sometimes',"
			 "'containers':[{'name':'c','image':'i'}]}");
	assert_false(has(f, "restartPolicy"));
	free(f);
	/* the Pod-wide checks (ValidatePodSpec's securityContext, dnsConfig)
	 * read the same members */
	f = pod_findings("{'shareProcessNamespace':true,'hostPID':false,'hostPID':true,"
			 "'dnsPolicy':'ClusterFirst','dnsPolicy':'None',"
			 "'containers':[{'name':'c','image':'i'}]}");
	assert_string_equal(f, "");
	free(f);
	f = pod_findings("{'shareProcessNamespace':true,'hostPID':true,'hostPID':false,"
			 "'dnsPolicy':'None','dnsPolicy':'ClusterFirst',"
			 "'containers':[{'name':'c','image':'i'}]}");
	assert_true(has(f, "spec.securityContext.shareProcessNamespace"));
	assert_true(has(f, "spec.dnsConfig"));
	free(f);
	f = pod_findings("{'containers':[{'name':'c','image':'i'}],'containers':[{'name':'d'}]}");
	assert_string_equal(f, "");
	free(f);
	f = pod_findings("{'containers':[{'name':'d'}],'containers':[{'name':'c','image':'i'}]}");
	assert_true(has(f, "spec.containers[0].image"));
	free(f);
}

/* validateJobSpec: completionMode read from the first member. */
static void job_spec_first_member_wins(void **state)
{
	(void)state;
	const char *pod = "'template':{'spec':{'restartPolicy':'Never','containers':"
			  "[{'name':'c','image':'i'}]}}";
	char buf[1024];
	snprintf(buf, sizeof(buf), "{'spec':{'completionMode':'Sometimes',"
		 "'completionMode':'Indexed','completions':1,%s}}", pod);
	char *f = findings_of(buf, true);
	assert_true(has(f, "spec.completionMode \"Sometimes\""));
	free(f);
	snprintf(buf, sizeof(buf), "{'spec':{'completionMode':'Indexed',"
		 "'completionMode':'Sometimes','completions':1,%s}}", pod);
	f = findings_of(buf, true);
	assert_false(has(f, "completionMode"));
	free(f);
}

/* The defaults pass (pod/defaults.c) reads the first ports list. */
static void defaults_first_member_wins(void **state)
{
	(void)state;
	cJSON *a = tt_jsq("{'spec':{'template':{'spec':{'containers':[{'name':'c','image':'i',"
			  "'ports':[],'ports':[{'containerPort':80}]}]}}}}");
	cJSON *b = tt_jsq("{'spec':{'template':{'spec':{'containers':[{'name':'c','image':'i',"
			  "'ports':[{'containerPort':80}],'ports':[]}]}}}}");
	assert_false(tp__pod_defaults_due(a, NULL)); /* nothing to write in [] */
	assert_true(tp__pod_defaults_due(b, NULL));  /* protocol TCP to write */
	cJSON_Delete(a);
	cJSON_Delete(b);
}

/* pod/fields_since.c at Kubernetes minor: the findings (unknown fields)
 * and the warnings (gated off) of a Job template, counted. */
static void since_counts(const char *job_template, int minor, size_t *findings,
			 size_t *warnings)
{
	cJSON *job = tt_jsq(job_template);
	tp_podv v;
	assert_int_equal(tp__podv_init(&v), TP_OK);
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_options opt = { .kubernetes_minor = minor };
	assert_int_equal(tp__pod_check_since(&v, &opt, job, res), TP_OK);
	*findings = v.n;
	*warnings = tp_result_warning_count(res);
	tp_result_free(res);
	tp__podv_free(&v);
	cJSON_Delete(job);
}

/* The release check reads the Job spec, the Pod spec and each container
 * through their structs: the first member of a name, null as absent. */
static void since_first_member_wins(void **state)
{
	(void)state;
	static const struct {
		const char *first, *second; /* as written, the first null */
		int minor;
		bool unknown; /* a finding, else a warning */
	} cases[] = {
		/* JobManagedBy: added in 1.30 */
		{ "{'spec':{'managedBy':null,'managedBy':'x/y','template':{'spec':{}}}}",
		  "{'spec':{'managedBy':'x/y','managedBy':null,'template':{'spec':{}}}}", 29, true },
		/* HostnameOverride: added in 1.34 */
		{ "{'spec':{'template':{'spec':{'hostnameOverride':null,'hostnameOverride':'h'}}}}",
		  "{'spec':{'template':{'spec':{'hostnameOverride':'h','hostnameOverride':null}}}}", 32,
		  true },
		/* InPlacePodVerticalScaling: on by default from 1.33 */
		{ "{'spec':{'template':{'spec':{'containers':[{'name':'c','resizePolicy':null,"
		  "'resizePolicy':[]}]}}}}",
		  "{'spec':{'template':{'spec':{'containers':[{'name':'c','resizePolicy':[],"
		  "'resizePolicy':null}]}}}}", 32, false },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t f, w;
		since_counts(cases[k].first, cases[k].minor, &f, &w);
		assert_int_equal(f + w, 0);
		since_counts(cases[k].second, cases[k].minor, &f, &w);
		assert_int_equal(f, cases[k].unknown ? 1 : 0);
		assert_int_equal(w, cases[k].unknown ? 0 : 1);
	}
}

/* ------------------------------------------------ members in any order */

/* A container and a Pod spec with a finding in many members, written in
 * two orders: the same findings in the same order (the checks' order, not
 * the members'). */
static void any_order_same_findings(void **state)
{
	(void)state;
	same_findings("{'spec':{'restartPolicy':'Sometimes','dnsPolicy':'Nope','hostname':'A_B',"
		      "'volumes':[{'name':'v','emptyDir':{}}],'containers':[{'name':'Bad',"
		      "'image':' i','imagePullPolicy':'Sometimes','terminationMessagePolicy':'X',"
		      "'volumeMounts':[{'name':'w','mountPath':''}],'restartPolicy':'Always',"
		      "'ports':[{'containerPort':0}],'env':[{'name':''}],"
		      "'livenessProbe':{'successThreshold':2,'exec':{'command':['t']}}}]}}",
		      "{'spec':{'containers':[{'livenessProbe':{'exec':{'command':['t']},"
		      "'successThreshold':2},'env':[{'name':''}],'ports':[{'containerPort':0}],"
		      "'restartPolicy':'Always','volumeMounts':[{'mountPath':'','name':'w'}],"
		      "'terminationMessagePolicy':'X','imagePullPolicy':'Sometimes','image':' i',"
		      "'name':'Bad'}],'volumes':[{'name':'v','emptyDir':{}}],'hostname':'A_B',"
		      "'dnsPolicy':'Nope','restartPolicy':'Sometimes'}}",
		      false);
	const char *pod = "{'spec':{'containers':[{'name':'c','image':'i'}]}}";
	char a[1024], b[1024];
	snprintf(a, sizeof(a), "{'spec':{'completionMode':'X','parallelism':-1,'backoffLimit':-1,"
		 "'maxFailedIndexes':1,'template':%s}}", pod);
	snprintf(b, sizeof(b), "{'spec':{'template':%s,'maxFailedIndexes':1,'backoffLimit':-1,"
		 "'parallelism':-1,'completionMode':'X'}}", pod);
	same_findings(a, b, true);
}

/* ------------------------------------------------ absent, null, wrong type */

static void absent_null_wrong_type(void **state)
{
	(void)state;
	/* image: absent, null, a number: each Required */
	const char *images[] = { "", ",'image':null", ",'image':5" };
	for (int k = 0; k < 3; k++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "{'containers':[{'name':'c'%s}]}", images[k]);
		char *f = pod_findings(buf);
		assert_string_equal(f, "0 spec.containers[0].image - \n"); /* TP_FIELD_REQUIRED */
		free(f);
	}
	/* a regular container's restartPolicy: null is unset, 5 is set */
	char *f = pod_findings("{'containers':[{'name':'c','image':'i','restartPolicy':null}]}");
	assert_string_equal(f, "");
	free(f);
	f = pod_findings("{'containers':[{'name':'c','image':'i','restartPolicy':5}]}");
	assert_true(has(f, "spec.containers[0].restartPolicy"));
	free(f);
	/* an init container's probe: null is unset, {} and "x" are set */
	const char *probes[] = { "null", "{}", "'x'" };
	for (int k = 0; k < 3; k++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "{'containers':[{'name':'c','image':'i'}],"
			 "'initContainers':[{'name':'i','image':'i','startupProbe':%s}]}", probes[k]);
		f = pod_findings(buf);
		assert_true(has(f, "spec.initContainers[0].startupProbe") == (k > 0));
		free(f);
	}
	/* a Pod spec's containers that are not a list: none (Required) */
	f = pod_findings("{'containers':{'name':'c','image':'i'}}");
	assert_true(has(f, "spec.containers - "));
	free(f);
	/* a container that is not an object: its name and image missing */
	f = pod_findings("{'containers':['c']}");
	assert_true(has(f, "spec.containers[0].name"));
	assert_true(has(f, "spec.containers[0].image"));
	free(f);
	/* a mount's readOnly: recursiveReadOnly wants it true, "true" is not */
	f = pod_findings("{'volumes':[{'name':'v','emptyDir':{}}],'containers':[{'name':'c',"
			 "'image':'i','volumeMounts':[{'name':'v','mountPath':'/m',"
			 "'recursiveReadOnly':'Enabled','readOnly':'true'}]}]}");
	assert_true(has(f, "volumeMounts.recursiveReadOnly"));
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(container_first_member_wins),
		cmocka_unit_test(mount_first_member_wins),
		cmocka_unit_test(volume_first_member_wins),
		cmocka_unit_test(pod_spec_first_member_wins),
		cmocka_unit_test(job_spec_first_member_wins),
		cmocka_unit_test(defaults_first_member_wins),
		cmocka_unit_test(since_first_member_wins),
		cmocka_unit_test(any_order_same_findings),
		cmocka_unit_test(absent_null_wrong_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_validate_jobset.c — JobSet's own admission rules (admission/jobset.c,
 * admission/jobset_update.c) on JobSets short and long: the rules that look
 * a name up (dependsOn, successPolicy and failure-policy targets, rule
 * names, claim templates against volumes and mounts, the old job of the
 * same name) go through indexes past 16 entries, and must answer as the
 * scans they replaced, with upstream's words.
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

/* A JobSet of n jobs j0..j<n-1>; job i mounts "t<i>" and has volume
 * "v<i>". extra: more spec members (JSON, may be ""). */
static cJSON *jobset(int n, const char *extra, const char *job_extra_at_5)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_adds(&b, "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
			"\"metadata\":{\"name\":\"js\",\"namespace\":\"default\"},\"spec\":{");
	tp_buf_adds(&b, extra);
	tp_buf_adds(&b, "\"replicatedJobs\":[");
	for (int i = 0; i < n; i++)
		tp_buf_addf(&b, "%s{\"name\":\"j%d\",%s\"template\":{\"spec\":{\"template\":{"
				"\"metadata\":{\"labels\":{\"l\":\"%d\"}},\"spec\":{\"volumes\":"
				"[{\"name\":\"v%d\"}],\"containers\":[{\"name\":\"c\",\"volumeMounts\":"
				"[{\"name\":\"t%d\",\"mountPath\":\"/m\"}]}]}}}}}",
			    i ? "," : "", i, i == 5 ? job_extra_at_5 : "", i, i, i);
	tp_buf_adds(&b, "]}}");
	cJSON *js = cJSON_Parse(b.data);
	tp_buf_free(&b);
	assert_non_null(js);
	return js;
}

static tp_result *res;

static tp_result *check(tp_operation op, cJSON *js, cJSON *old)
{
	tp_result_clear(res);
	assert_int_equal(tp_validate_jobset(NULL, op, js, old, res), TP_OK);
	cJSON_Delete(js);
	cJSON_Delete(old);
	return res;
}

static bool has(const tp_result *r, const char *path, const char *detail)
{
	for (size_t i = 0; i < tp_result_error_count(r); i++) {
		const tp_field_error *e = tp_result_error_at(r, i);
		bool path_ok = path ? e->path && !strcmp(e->path, path) : !e->path;
		if (path_ok && !strcmp(e->detail, detail))
			return true;
	}
	return false;
}

static const int sizes[] = { 8, 40 };

static void depends_on_earlier_jobs_only(void **state)
{
	(void)state;
	for (size_t s = 0; s < 2; s++) {
		tp_result *r = check(TP_OP_CREATE, jobset(sizes[s], "",
			"\"dependsOn\":[{\"name\":\"j4\"},{\"name\":\"j5\"},{\"name\":\"j6\"},"
			"{\"name\":\"nope\"}],"), NULL);
		assert_false(has(r, NULL, "replicatedJob: j5 cannot depend on replicatedJob: j4"));
		assert_false(has(r, NULL, "replicatedJob: j5 cannot depend on replicatedJob: j5"));
		assert_true(has(r, NULL, "replicatedJob: j5 cannot depend on replicatedJob: j6"));
		assert_true(has(r, NULL, "replicatedJob: j5 cannot depend on replicatedJob: nope"));
		assert_int_equal(tp_result_error_count(r), 2);
	}
}

static void targets_name_existing_jobs(void **state)
{
	(void)state;
	for (size_t s = 0; s < 2; s++) {
		char extra[512];
		snprintf(extra, sizeof(extra),
			 "\"successPolicy\":{\"operator\":\"All\",\"targetReplicatedJobs\":"
			 "[\"j%d\",\"x\"]},\"failurePolicy\":{\"rules\":[{\"name\":\"r\",\"action\":"
			 "\"FailJobSet\",\"targetReplicatedJobs\":[\"j0\",\"y\"]}]},", sizes[s] - 1);
		tp_result *r = check(TP_OP_CREATE, jobset(sizes[s], extra, ""), NULL);
		assert_true(has(r, NULL, "invalid replicatedJob name 'x' does not appear in "
					 ".spec.ReplicatedJobs"));
		assert_true(has(r, NULL, "invalid replicatedJob name 'y' in failure policy does not "
					 "appear in .spec.ReplicatedJobs"));
		assert_int_equal(tp_result_error_count(r), 2);
	}
}

/* Unnamed rules are named failurePolicyRule<i> first; each repeated name
 * once, with all its indices, in order of first use. */
static void rule_names_unique(void **state)
{
	(void)state;
	for (size_t s = 0; s < 2; s++) {
		int n = sizes[s] * 2;
		tp_buf b = TP_BUF_INIT(0);
		tp_buf_adds(&b, "\"failurePolicy\":{\"rules\":[");
		for (int i = 0; i < n; i++)
			tp_buf_addf(&b, "%s{%s\"action\":\"FailJobSet\"}", i ? "," : "",
				    i == 1 ? "" : i == 3 ? "\"name\":\"failurePolicyRule1\","
				    : i % 5 == 0 ? "\"name\":\"a\"," : "\"name\":\"u\",");
		tp_buf_adds(&b, "]},");
		/* rule 2, 4, 6, ... are all "u" but for the multiples of 5 */
		tp_result *r = check(TP_OP_CREATE, jobset(4, b.data, ""), NULL);
		tp_buf_free(&b);
		tp_buf want = TP_BUF_INIT(0);
		tp_buf_adds(&want, "rule names are not unique, rules with indices [0");
		for (int i = 5; i < n; i += 5)
			tp_buf_addf(&want, " %d", i);
		tp_buf_adds(&want, "] all have the same name 'a'");
		assert_true(has(r, NULL, want.data));
		assert_true(has(r, NULL, "rule names are not unique, rules with indices [1 3] all "
					 "have the same name 'failurePolicyRule1'"));
		tp_buf_free(&want);
		assert_int_equal(tp_result_error_count(r), 3);
	}
}

/* Claim templates: unique names, no pod volume of the name, some mount. */
static void claim_templates(void **state)
{
	(void)state;
	for (size_t s = 0; s < 2; s++) {
		char extra[512];
		snprintf(extra, sizeof(extra),
			 "\"volumeClaimPolicies\":[{\"templates\":[{\"metadata\":{\"name\":\"t1\"}},"
			 "{\"metadata\":{\"name\":\"v%d\"}}]},{\"templates\":[{\"metadata\":"
			 "{\"name\":\"t1\"}}]}],", sizes[s] - 1);
		tp_result *r = check(TP_OP_CREATE, jobset(sizes[s], extra, ""), NULL);
		char path[160];
		snprintf(path, sizeof(path), "spec.replicatedJobs[%d].template.spec.template.spec."
			 "volumes[0].name", sizes[s] - 1);
		char detail[160];
		snprintf(detail, sizeof(detail), "volume name conflicts with VolumeClaimPolicy template "
			 "name: v%d", sizes[s] - 1);
		assert_true(has(r, path, detail));
		snprintf(detail, sizeof(detail), "replicatedJob containers don't have a matching "
			 "volumeMount: v%d from VolumeClaimPolicies", sizes[s] - 1);
		assert_true(has(r, "spec.replicatedJobs", detail));
		assert_true(has(r, "spec.volumeClaimPolicies[1].template[0].name",
				"names must be unique for VolumeClaimPolicies template"));
		assert_false(has(r, "spec.volumeClaimPolicies[0].template[0].name",
				 "names must be unique for VolumeClaimPolicies template"));
		assert_int_equal(tp_result_error_count(r), 3);
	}
}

/* UPDATE: the jobs may not change, but for the suspend-mutable pod fields
 * while suspended, matched to the old job of the same name. */
static void update_compares_jobs_by_name(void **state)
{
	(void)state;
	for (size_t s = 0; s < 2; s++) {
		int n = sizes[s];
		assert_true(tp_result_ok(check(TP_OP_UPDATE, jobset(n, "", ""), jobset(n, "", ""))));
		/* a label changed: immutable while running, fine while suspended */
		cJSON *js = jobset(n, "", "");
		cJSON *labels = (cJSON *)tp_get_object(cJSON_GetArrayItem(tp_get(js,
			"spec.replicatedJobs"), n - 1), "template.spec.template.metadata.labels");
		cJSON_ReplaceItemInObject(labels, "l", cJSON_CreateString("changed"));
		cJSON *js2 = cJSON_Duplicate(js, 1);
		tp_result *r = check(TP_OP_UPDATE, js, jobset(n, "", ""));
		assert_true(has(r, "spec.replicatedJobs", "field is immutable"));
		cJSON_AddTrueToObject((cJSON *)tp_get(js2, "spec"), "suspend");
		assert_true(tp_result_ok(check(TP_OP_UPDATE, js2, jobset(n, "", ""))));
		/* members of a large object compared by name, in any order */
		cJSON *a = jobset(n, "", ""), *b = jobset(n, "", "");
		cJSON *sel = cJSON_AddObjectToObject(
			(cJSON *)tp_get(cJSON_GetArrayItem(tp_get(a, "spec.replicatedJobs"), 0),
					"template.spec.template.spec"), "nodeSelector");
		cJSON *osel = cJSON_AddObjectToObject(
			(cJSON *)tp_get(cJSON_GetArrayItem(tp_get(b, "spec.replicatedJobs"), 0),
					"template.spec.template.spec"), "nodeSelector");
		for (int i = 0; i < 30; i++) {
			char k[16];
			snprintf(k, sizeof(k), "k%d", i);
			cJSON_AddStringToObject(sel, k, "v");
			snprintf(k, sizeof(k), "k%d", 29 - i);
			cJSON_AddStringToObject(osel, k, "v");
		}
		cJSON_AddArrayToObject(osel, "empty"); /* empty counts as absent */
		assert_true(tp_result_ok(check(TP_OP_UPDATE, a, b)));
	}
}

static int setup(void **state)
{
	(void)state;
	return tp_result_new(&res);
}

static int teardown(void **state)
{
	(void)state;
	tp_result_free(res);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(depends_on_earlier_jobs_only),
		cmocka_unit_test(targets_name_existing_jobs),
		cmocka_unit_test(rule_names_unique),
		cmocka_unit_test(claim_templates),
		cmocka_unit_test(update_compares_jobs_by_name),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

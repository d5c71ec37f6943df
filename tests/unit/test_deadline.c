/*
 * test_deadline.c — the caller's deadline (tp_deadline): a budget of steps
 * or a monotonic time past which the library's long loops stop and every
 * public entry point answers TP_ETIMEDOUT, never a verdict; the step count
 * itself, which grows with the input as the work does; the loader
 * (tp_load), whose members, items and YAML events count too; and the
 * admission glue, which never turns a cut decision into an allow.
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
#include "webhook/admission/admission.h"

static tp_store *store;

/* ------------------------------------------------------------ inputs */

static void items(tp_buf *b, int n, const char *fmt)
{
	for (int i = 0; i < n; i++) {
		if (i)
			tp_buf_addc(b, ',');
		tp_buf_addf(b, fmt, i, i);
	}
}

/* A TrainJob with n trainer env items and n runtimePatches. */
static cJSON *big_trainjob(int n)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_adds(&b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
			"\"metadata\":{\"name\":\"big\",\"namespace\":\"default\",\"labels\":{");
	items(&b, n, "\"k%d\":\"v%d\"");
	tp_buf_adds(&b, "}},\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"
			"\"trainer\":{\"image\":\"x\",\"env\":[");
	items(&b, n, "{\"name\":\"E%d\",\"value\":\"v%d\"}");
	tp_buf_adds(&b, "]},\"runtimePatches\":[");
	items(&b, n, "{\"manager\":\"example.com/m%d\",\"trainingRuntimeSpec\":{\"template\":"
		     "{\"spec\":{\"replicatedJobs\":[{\"name\":\"j%d\"}]}}}}");
	tp_buf_adds(&b, "]}}");
	cJSON *j = cJSON_Parse(b.data);
	tp_buf_free(&b);
	assert_non_null(j);
	return j;
}

/* A ClusterTrainingRuntime or a JobSet of n replicated jobs. */
static cJSON *big_jobs(int n, bool runtime)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_addf(&b, runtime ? "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
				  "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"big\"},"
				  "\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":["
				: "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
				  "\"metadata\":{\"name\":\"js\",\"namespace\":\"default\"},"
				  "\"spec\":{\"replicatedJobs\":[");
	items(&b, n, "{\"name\":\"j%d\",\"template\":{\"spec\":{\"template\":{\"spec\":"
		     "{\"containers\":[{\"name\":\"c%d\"}]}}}}}");
	tp_buf_adds(&b, runtime ? "]}}}}" : "]}}");
	cJSON *j = cJSON_Parse(b.data);
	tp_buf_free(&b);
	assert_non_null(j);
	return j;
}

static tp_options options(bool no_schema)
{
	return (tp_options){ .profile = TP_PROFILE_KUBEFLOW, .store = store,
			     .no_schema = no_schema, .now = "2026-08-21T10:15:30Z" };
}

/* ------------------------------------------------------------ runs */

/* What one public call did under d: its code, and d's steps. */
enum entry { VALIDATE_TJ, VALIDATE_RUNTIME, VALIDATE_JOBSET, DEFAULT_UPDATE, EXPAND, DIFF,
	     RECONCILE, ENTRIES };

static const char *const entry_names[] = { "tp_validate (TrainJob)", "tp_validate (runtime)",
					   "tp_validate (JobSet)", "tp_default_trainjob (UPDATE)",
					   "tp_expand", "tp_jsonpatch_diff",
					   "tp_jobset_reconcile" };

static int run(enum entry e, int n, tp_deadline *d)
{
	cJSON *obj = e == VALIDATE_RUNTIME ? big_jobs(n, true)
		   : e == VALIDATE_JOBSET || e == RECONCILE ? big_jobs(n, false) : big_trainjob(n);
	cJSON *other = e == DIFF || e == RECONCILE ? cJSON_Duplicate(obj, 1) : NULL;
	if (other) /* something to tell apart */
		cJSON_AddStringToObject(other, "extra", "x");
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_options opt = options(e == EXPAND);
	cJSON *out = NULL;
	tp_deadline *prev = tp_deadline_enter(d);
	tp_store_rdlock(store);
	int rc;
	switch (e) {
	case VALIDATE_TJ:
	case VALIDATE_RUNTIME:
	case VALIDATE_JOBSET:
		rc = tp_validate(&opt, TP_OP_CREATE, obj, NULL, res);
		break;
	case DEFAULT_UPDATE:
		rc = tp_default_trainjob(&opt, TP_OP_UPDATE, obj, obj, &out);
		break;
	case EXPAND:
		rc = tp_expand(&opt, obj, NULL, &out, res);
		break;
	case DIFF:
		rc = tp_jsonpatch_diff(obj, other, &out);
		break;
	default:
		rc = tp_jobset_reconcile(obj, other, &out);
		break;
	}
	tp_store_unlock(store);
	tp_deadline_leave(prev);
	if (rc == TP_ETIMEDOUT)
		assert_null(out); /* a cut answer is no answer */
	cJSON_Delete(out);
	cJSON_Delete(other);
	cJSON_Delete(obj);
	tp_result_free(res);
	return rc;
}

/* ------------------------------------------------------------ tests */

/* Without limits a deadline only counts; with a budget below the work, every
 * entry point stops soon after it and says TP_ETIMEDOUT. */
static void budget_stops_every_entry_point(void **state)
{
	(void)state;
	for (int e = 0; e < ENTRIES; e++) {
		tp_deadline free_run = { 0 };
		int rc = run(e, 3000, &free_run);
		assert_int_not_equal(rc, TP_ETIMEDOUT);
		assert_false(free_run.expired);
		tp_deadline cut = { .budget = free_run.steps / 10 };
		assert_int_equal(run(e, 3000, &cut), TP_ETIMEDOUT);
		assert_true(cut.expired);
		print_message("  %-30s %8llu steps; stopped at %8llu of a %llu budget\n",
			      entry_names[e], (unsigned long long)free_run.steps,
			      (unsigned long long)cut.steps, (unsigned long long)cut.budget);
		/* the loops noticed soon: far from the whole work */
		assert_true(cut.steps < free_run.steps / 2);
	}
}

/* The server's case: a time already past stops at the first check. */
static void a_past_time_stops_at_once(void **state)
{
	(void)state;
	for (int e = 0; e < ENTRIES; e++) {
		tp_deadline d = { .at_ns = tp_monotonic_ns() - 1 };
		assert_int_equal(run(e, 3000, &d), TP_ETIMEDOUT);
		tp_deadline later = { .at_ns = tp_monotonic_ns() + 3600 * 1000000000LL };
		assert_int_not_equal(run(e, 300, &later), TP_ETIMEDOUT);
	}
}

/* The steps follow the work: 10x the items, about 10x the steps, on every
 * entry point (the instructions themselves: tests/integration/test_linear_cost.c). */
static void steps_grow_with_the_input(void **state)
{
	(void)state;
	for (int e = 0; e < ENTRIES; e++) {
		tp_deadline small = { 0 }, big = { 0 };
		run(e, 300, &small);
		run(e, 3000, &big);
		double ratio = (double)big.steps / (double)small.steps;
		print_message("  %-30s %8llu -> %9llu steps: x%.1f\n", entry_names[e],
			      (unsigned long long)small.steps, (unsigned long long)big.steps,
			      ratio);
		assert_true(ratio > 5 && ratio < 15);
	}
}

/* A TrainJob of n annotations, as JSON or as YAML text. */
static char *annotated(int n, bool yaml)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_buf_adds(&b, yaml ? "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
			       "metadata:\n  name: big\n  annotations:\n"
			     : "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
			       "\"TrainJob\",\"metadata\":{\"name\":\"big\",\"annotations\":{");
	for (int i = 0; i < n; i++)
		if (yaml)
			tp_buf_addf(&b, "    k%d: v\n", i);
		else
			tp_buf_addf(&b, "%s\"k%d\":\"v\"", i ? "," : "", i);
	tp_buf_adds(&b, yaml ? "spec: {}\n" : "}},\"spec\":{}}");
	return b.data;
}

/* tp_load of text under d: its code, and the error it gave. */
static int load(const char *text, tp_deadline *d, tp_load_error *err)
{
	tp_docs *docs = NULL;
	tp_deadline *prev = tp_deadline_enter(d);
	int rc = tp_load(text, strlen(text), NULL, &docs, err);
	tp_deadline_leave(prev);
	if (rc)
		assert_null(docs); /* a cut load hands back nothing */
	tp_docs_free(docs);
	return rc;
}

/* The loader counts a step a member, item or YAML event, as the other long
 * loops count theirs: a body of many keys stops soon after a budget, or at
 * once past a time, with TP_ETIMEDOUT and a message that says so, and its
 * steps grow with the body (they were none: tp_load never stopped). */
static void load_stops_at_the_deadline(void **state)
{
	(void)state;
	for (int yaml = 0; yaml < 2; yaml++) {
		char *small = annotated(3000, yaml), *big = annotated(30000, yaml);
		tp_load_error err;
		tp_deadline few = { 0 }, many = { 0 };
		assert_int_equal(load(small, &few, &err), TP_OK);
		assert_int_equal(load(big, &many, &err), TP_OK);
		double ratio = (double)many.steps / (double)(few.steps ? few.steps : 1);
		print_message("  tp_load (%s): %llu -> %llu steps: x%.1f\n", yaml ? "YAML" : "JSON",
			      (unsigned long long)few.steps, (unsigned long long)many.steps, ratio);
		assert_true(many.steps >= 30000);
		assert_true(ratio > 5 && ratio < 15);

		tp_deadline cut = { .budget = many.steps / 10 };
		assert_int_equal(load(big, &cut, &err), TP_ETIMEDOUT);
		assert_true(cut.expired);
		assert_true(cut.steps < many.steps / 2); /* noticed soon */
		assert_int_equal(err.code, TP_ETIMEDOUT);
		assert_non_null(strstr(err.msg, tp_strerror(TP_ETIMEDOUT)));

		tp_deadline past = { .at_ns = tp_monotonic_ns() - 1 };
		assert_int_equal(load(big, &past, &err), TP_ETIMEDOUT);
		assert_true(past.steps < many.steps / 100);
		free(small);
		free(big);
	}
}

static void enter_and_leave_nest(void **state)
{
	(void)state;
	tp_deadline a = { 0 }, b = { 0 };
	assert_null(tp_deadline_enter(&a));
	assert_ptr_equal(tp_deadline_enter(&b), &a);
	tp_deadline_leave(&a);
	assert_ptr_equal(tp_deadline_enter(NULL), &a);
	tp_deadline_leave(NULL);
	assert_string_equal(tp_strerror(TP_ETIMEDOUT),
			    "the request's deadline passed before a decision");
}

/* The admission glue: a decision the deadline cut is never an allow, on
 * the validating or the mutating route; the server answers 504 in its
 * place (webhook/http.c). */
static void admission_never_allows_a_cut_decision(void **state)
{
	(void)state;
	static const char *const routes[] = { "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
					      "/mutate-trainer-kubeflow-org-v1alpha1-trainjob" };
	cJSON *job = big_trainjob(2000);
	char *obj = cJSON_PrintUnformatted(job);
	cJSON_Delete(job);
	size_t n = 2 * strlen(obj) + 512;
	char *body = malloc(n);
	snprintf(body, n, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			  "\"request\":{\"uid\":\"u-1\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
			  "\"version\":\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"UPDATE\","
			  "\"object\":%s,\"oldObject\":%s}}", obj, obj);
	for (size_t i = 0; i < 2; i++) {
		tw_config cfg = { .store = store, .max_body = 64 << 20, .opt = options(false) };
		tp_arena *arena;
		assert_int_equal(tp_arena_new(&arena, 0), TP_OK);
		tp_buf out = TP_BUF_INIT(0);
		tw_outcome oc;
		tp_deadline d = { .budget = 1000 };
		tp_deadline *prev = tp_deadline_enter(&d);
		int rc = tw_admission_handle(&cfg, tw_route_find(routes[i]), body, strlen(body), arena,
					     &out, &oc);
		tp_deadline_leave(prev);
		assert_true(d.expired);
		assert_true(rc == TP_OK || rc == TP_ETIMEDOUT);
		assert_false(oc.allowed);
		if (rc == TP_OK) /* and it says why, for the log: the server answers 504 */
			assert_non_null(strstr(out.data, "the request's deadline passed before a "
							 "decision"));
		tp_buf_free(&out);
		tp_arena_free(arena);
	}
	free(body);
	free(obj);
}

static int setup(void **state)
{
	(void)state;
	if (tp_store_new(&store))
		return -1;
	char *rt = tt_read_file("deploy/runtimes/torch-distributed.yaml", NULL);
	tp_docs *docs = NULL;
	tp_load_error err;
	int rc = rt ? tp_load(rt, strlen(rt), NULL, &docs, &err) : TP_EIO;
	if (!rc)
		rc = tp_store_put(store, tp_docs_take(docs, 0));
	tp_docs_free(docs);
	free(rt);
	return rc ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	tp_store_free(store);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(budget_stops_every_entry_point),
		cmocka_unit_test(a_past_time_stops_at_once),
		cmocka_unit_test(steps_grow_with_the_input),
		cmocka_unit_test(load_stops_at_the_deadline),
		cmocka_unit_test(enter_and_leave_nest),
		cmocka_unit_test(admission_never_allows_a_cut_decision),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

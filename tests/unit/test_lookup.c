/*
 * test_lookup.c — how decisions find the objects they need: a caller's
 * tp_lookup (found, not found, cannot tell), the store's counted holds, and
 * the undecided result an unanswered lookup gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/tj_fixtures.h"

TJ_GROUP_STATE

/* A lookup over a second store that can be told to fail, counting calls. */
struct fake {
	tp_store *store;
	int fail;        /* answer TP_EUNAVAILABLE for every call */
	int fail_pc;     /* ... for PriorityClasses only */
	int calls;
	tp_kind last_kind;
	char last_ns[64], last_name[64];
};

static int fake_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		    char *why, size_t whylen)
{
	struct fake *f = ctx;
	f->calls++;
	f->last_kind = k;
	snprintf(f->last_ns, sizeof(f->last_ns), "%s", ns ? ns : "(null)");
	snprintf(f->last_name, sizeof(f->last_name), "%s", name);
	if (f->fail || (f->fail_pc && k == TP_KIND_PRIORITY_CLASS)) {
		snprintf(why, whylen, "Get \"https://api/x\": context deadline exceeded");
		return TP_EUNAVAILABLE;
	}
	*out = tp_store_get(f->store, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

static size_t fake_namespaces(void *ctx, tp_kind k, const char *name, const char **out,
			      size_t max)
{
	struct fake *f = ctx;
	return tp_store_namespaces_of(f->store, k, name, out, max);
}

static tp_options with_lookup(struct fake *f, tp_lookup *l, tp_profile p)
{
	*l = (tp_lookup){ fake_get, fake_namespaces, f };
	tp_options o = { .profile = p, .lookup = l };
	return o;
}

static void runtime_only_the_lookup_knows(void **state)
{
	(void)state;
	struct fake f = { .store = store };
	tp_lookup l;
	tp_options o = with_lookup(&f, &l, TP_PROFILE_KUBEFLOW);
	cJSON *job = tj_job("a", "TrainingRuntime", "team-torch", "");
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_CREATE, job, NULL, res), TP_OK);
	tt_dump(res);
	assert_true(tp_result_ok(res));
	assert_false(tp_result_unavailable(res));
	assert_int_equal(f.calls, 1);
	assert_int_equal(f.last_kind, TP_KIND_TRAINING_RUNTIME);
	assert_string_equal(f.last_ns, "team-a");
	assert_string_equal(f.last_name, "team-torch");
	cJSON_Delete(job);
}

static void lookup_that_cannot_answer_decides_nothing(void **state)
{
	(void)state;
	struct fake f = { .store = store, .fail = 1 };
	tp_lookup l;
	for (int p = 0; p < 2; p++) {
		tp_options o = with_lookup(&f, &l, p ? TP_PROFILE_KUBEFLOW : TP_PROFILE_STRICT);
		cJSON *job = tj_job("a", "ClusterTrainingRuntime", "torch-current", "");
		tp_result_clear(res);
		assert_int_equal(tp_validate_trainjob(&o, TP_OP_CREATE, job, NULL, res), TP_OK);
		assert_true(tp_result_unavailable(res));
		assert_int_equal(tp_result_error_count(res), 1);
		tp_buf b = TP_BUF_INIT(0);
		assert_int_equal(tp_result_format(res, &b), TP_OK);
		assert_string_equal(b.data,
				    "spec.runtimeRef: Internal error: clustertrainingruntimes."
				    "trainer.kubeflow.org \"torch-current\" could not be looked up: "
				    "Get \"https://api/x\": context deadline exceeded; the request can "
				    "be retried");
		tp_buf_free(&b);
		cJSON_Delete(job);
	}
	/* tp_result_clear forgets the mark. */
	tp_result_clear(res);
	assert_false(tp_result_unavailable(res));
}

/* Volcano's PriorityClass rule through the lookup: found, not found, and
 * a lookup nobody could answer, which decides nothing. */
static void priority_class_through_the_lookup(void **state)
{
	(void)state;
	struct fake f = { .store = store, .fail_pc = 1 };
	tp_lookup l;
	tp_options o = with_lookup(&f, &l, TP_PROFILE_KUBEFLOW);
	cJSON *job = tj_job("a", "ClusterTrainingRuntime", "volcano-pc-ok", "");
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_CREATE, job, NULL, res), TP_OK);
	assert_true(tp_result_unavailable(res));
	assert_true(tt_has_error(res, "spec.templateSpec.priorityClassName",
				 "priorityclasses.scheduling.k8s.io \"high\" could not be looked up: "
				 "Get \"https://api/x\": context deadline exceeded; the request can be "
				 "retried"));
	assert_int_equal(f.last_kind, TP_KIND_PRIORITY_CLASS);
	f.fail_pc = 0;
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_CREATE, job, NULL, res), TP_OK);
	assert_true(tp_result_ok(res));
	cJSON_Delete(job);
}

static void not_found_keeps_upstream_text(void **state)
{
	(void)state;
	struct fake f = { .store = store };
	tp_lookup l;
	tp_options o = with_lookup(&f, &l, TP_PROFILE_KUBEFLOW);
	cJSON *job = tj_job("a", "ClusterTrainingRuntime", "nowhere", "");
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_CREATE, job, NULL, res), TP_OK);
	assert_false(tp_result_unavailable(res));
	assert_true(tt_has_error(res, "spec.RuntimeRef",
				 "clustertrainingruntimes.trainer.kubeflow.org \"nowhere\" not found: "
				 "specified clusterTrainingRuntime must be created before the TrainJob "
				 "is created"));
	cJSON_Delete(job);
}

static void empty_name_is_never_asked(void **state)
{
	(void)state;
	struct fake f = { .store = store };
	tp_lookup l;
	tp_options o = with_lookup(&f, &l, TP_PROFILE_KUBEFLOW);
	const cJSON *out = (const cJSON *)1;
	assert_int_equal(tp_lookup_get(&o, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "", &out, NULL,
				       0), TP_ENOTFOUND);
	assert_null(out);
	assert_int_equal(f.calls, 0);
	/* Without a lookup the store answers. */
	tp_options plain = { .store = store };
	tp_store_rdlock(store);
	assert_int_equal(tp_lookup_get(&plain, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL,
				       "torch-current", &out, NULL, 0), TP_OK);
	assert_non_null(out);
	assert_int_equal(tp_lookup_get(&plain, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "gone",
				       &out, NULL, 0), TP_ENOTFOUND);
	tp_store_unlock(store);
}

static void scoping_hint_through_the_lookup(void **state)
{
	(void)state;
	struct fake f = { .store = store };
	tp_lookup l;
	tp_options o = with_lookup(&f, &l, TP_PROFILE_STRICT);
	cJSON *job = tj_job("a", "TrainingRuntime", "elsewhere", "");
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_CREATE, job, NULL, res), TP_OK);
	assert_true(tt_has_error(res, "spec.runtimeRef",
				 "exists only in namespaces team-b, team-c"));
	cJSON_Delete(job);
}

static void jobset_found_through_the_lookup(void **state)
{
	(void)state;
	struct fake f = { .store = store };
	tp_lookup l;
	tp_options o = with_lookup(&f, &l, TP_PROFILE_KUBEFLOW);
	const char *patch = "\"suspend\":true,\"runtimePatches\":[{\"manager\":\"x.io/m\","
			    "\"trainingRuntimeSpec\":{\"template\":{\"metadata\":{\"labels\":"
			    "{\"a\":\"%s\"}}}}}]";
	char a[512], b[512];
	snprintf(a, sizeof(a), patch, "1");
	snprintf(b, sizeof(b), patch, "2");
	cJSON *old = tj_job("busy", "ClusterTrainingRuntime", "torch-current", a);
	cJSON *job = tj_job("busy", "ClusterTrainingRuntime", "torch-current", b);
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_UPDATE, job, old, res), TP_OK);
	assert_true(tt_has_error(res, "spec.runtimePatches",
				 "ReplicatedJob node is still active"));
	assert_false(tp_result_unavailable(res));
	assert_int_equal(f.last_kind, TP_KIND_JOBSET); /* the JobSet came from the lookup */
	assert_string_equal(f.last_ns, "team-a");
	assert_string_equal(f.last_name, "busy");
	cJSON_Delete(job);
	cJSON_Delete(old);
}

/* A lookup that answers the runtime but cannot reach the API for a JobSet. */
static int jobset_down_get(void *ctx, tp_kind k, const char *ns, const char *name,
			   const cJSON **out, char *why, size_t whylen)
{
	if (k == TP_KIND_JOBSET) {
		snprintf(why, whylen, "connection refused");
		return TP_EUNAVAILABLE;
	}
	return fake_get(ctx, k, ns, name, out, why, whylen);
}

static void jobset_unreachable_is_undecided(void **state)
{
	(void)state;
	struct fake f = { .store = store };
	tp_lookup l = { jobset_down_get, NULL, &f };
	tp_options o = { .profile = TP_PROFILE_KUBEFLOW, .lookup = &l };
	const char *patch = "\"suspend\":true,\"runtimePatches\":[{\"manager\":\"x.io/m\","
			    "\"trainingRuntimeSpec\":{\"template\":{\"metadata\":{\"labels\":"
			    "{\"a\":\"%s\"}}}}}]";
	char a[512], b[512];
	snprintf(a, sizeof(a), patch, "1");
	snprintf(b, sizeof(b), patch, "2");
	cJSON *old = tj_job("busy", "ClusterTrainingRuntime", "torch-current", a);
	cJSON *job = tj_job("busy", "ClusterTrainingRuntime", "torch-current", b);
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_UPDATE, job, old, res), TP_OK);
	assert_true(tp_result_unavailable(res));
	assert_true(tt_has_error(res, "spec.runtimePatches",
				 "jobsets.jobset.x-k8s.io \"busy\" could not be looked up: "
				 "connection refused; the request can be retried"));
	/* Patches unchanged: the JobSet is never asked, nothing is undecided. */
	tp_result_clear(res);
	assert_int_equal(tp_validate_trainjob(&o, TP_OP_UPDATE, job, job, res), TP_OK);
	assert_false(tp_result_unavailable(res));
	cJSON_Delete(job);
	cJSON_Delete(old);
}

static void expand_reports_unavailable(void **state)
{
	(void)state;
	struct fake f = { .store = store, .fail = 1 };
	tp_lookup l;
	tp_options o = with_lookup(&f, &l, TP_PROFILE_KUBEFLOW);
	cJSON *job = tj_job("a", "ClusterTrainingRuntime", "torch-current", "");
	cJSON *list = NULL;
	tp_result_clear(res);
	assert_int_equal(tp_expand(&o, job, NULL, &list, res), TP_EUNAVAILABLE);
	assert_null(list);
	assert_true(tp_result_unavailable(res));
	assert_true(tt_has_error(res, "spec.runtimeRef", "could not be looked up"));
	f.fail = 0;
	tp_result_clear(res);
	assert_int_equal(tp_expand(&o, job, NULL, &list, res), TP_OK);
	assert_non_null(list);
	cJSON_Delete(list);
	cJSON_Delete(job);
}

/* ------------------------------------------------------------ holds */

static cJSON *ctr_obj(const char *name, const char *marker)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		 "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"%s\"},\"spec\":{\"marker\":"
		 "\"%s\"}}", name, marker);
	return cJSON_Parse(buf);
}

static void hold_outlives_replace_and_remove(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(tp_store_put(s, ctr_obj("rt", "v1")), TP_OK);
	const cJSON *a = NULL, *b = NULL;
	tp_store_hold *ha = tp_store_hold_get(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "rt", &a);
	assert_non_null(ha);
	assert_string_equal(tp_get_str(a, "spec.marker"), "v1");
	/* A writer replaces it: the held tree stays whole and unchanged. */
	assert_int_equal(tp_store_put(s, ctr_obj("rt", "v2")), TP_OK);
	assert_string_equal(tp_get_str(a, "spec.marker"), "v1");
	tp_store_hold *hb = tp_store_hold_get(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, "ignored", "rt",
					      &b);
	assert_string_equal(tp_get_str(b, "spec.marker"), "v2");
	/* Removed, cleared, even the store freed: both holds still read. */
	assert_int_equal(tp_store_remove(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "rt"), TP_OK);
	tp_store_clear_kind(s, TP_KIND_CLUSTER_TRAINING_RUNTIME);
	tp_store_free(s);
	assert_string_equal(tp_get_str(b, "spec.marker"), "v2");
	assert_string_equal(tp_get_str(a, "spec.marker"), "v1");
	tp_store_hold_release(ha); /* ASan: each tree freed exactly once, none leaked */
	tp_store_hold_release(hb);
	tp_store_hold_release(NULL);
	/* Absent: no hold, no object. */
	assert_int_equal(tp_store_new(&s), TP_OK);
	a = (const cJSON *)1;
	assert_null(tp_store_hold_get(s, TP_KIND_TRAINJOB, "x", "y", &a));
	assert_null(a);
	tp_store_free(s);
}

static void priority_classes_are_stored_cluster_wide(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	cJSON *pc = tt_json("{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
			    "\"metadata\":{\"name\":\"high\"},\"value\":1000}");
	assert_int_equal(tp_kind_of(pc), TP_KIND_PRIORITY_CLASS);
	assert_true(tp_kind_is_cluster_scoped(TP_KIND_PRIORITY_CLASS));
	assert_int_equal(tp_store_put(s, pc), TP_OK);
	tp_store_rdlock(s);
	assert_non_null(tp_store_get(s, TP_KIND_PRIORITY_CLASS, "any-namespace", "high"));
	assert_int_equal(tp_store_count(s, TP_KIND_PRIORITY_CLASS), 1);
	tp_store_unlock(s);
	tp_result_clear(res);
	assert_int_equal(tp_validate(NULL, TP_OP_CREATE, pc, NULL, res), TP_EUNSUPPORTED);
	tp_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runtime_only_the_lookup_knows),
		cmocka_unit_test(lookup_that_cannot_answer_decides_nothing),
		cmocka_unit_test(not_found_keeps_upstream_text),
		cmocka_unit_test(priority_class_through_the_lookup),
		cmocka_unit_test(empty_name_is_never_asked),
		cmocka_unit_test(scoping_hint_through_the_lookup),
		cmocka_unit_test(jobset_found_through_the_lookup),
		cmocka_unit_test(jobset_unreachable_is_undecided),
		cmocka_unit_test(expand_reports_unavailable),
		cmocka_unit_test(hold_outlives_replace_and_remove),
		cmocka_unit_test(priority_classes_are_stored_cluster_wide),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * pod/job.c — a JobSet's replicated job as the Job kube-apiserver will be
 * asked to create (pkg/apis/batch/validation validateJobSpec, v1.32; the
 * same texts in v1.26, which had no backoffLimitPerIndex, maxFailedIndexes
 * or successPolicy yet), after JobSet's own defaulting (completionMode
 * Indexed, restartPolicy OnFailure when empty) and the Job's (parallelism
 * and completions 1 when both are unset), with the trainer's JobSet
 * builder's count as both when the caller gives one (tp_podv.pods). Also
 * the two public entry points, which take a template as it is.
 */
#include "policy/pod/pod.h"

#include <string.h>

#define NONNEG "must be greater than or equal to 0"
#define MAX_INDEXED_PARALLELISM 100000

static bool int_of(const cJSON *spec, const char *member, long long *out)
{
	return tp__mint(spec, member, out);
}

static void check_nonnegative(tp_podv *v, const cJSON *spec, const char *member)
{
	long long n;
	if (int_of(spec, member, &n) && n < 0)
		tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", member),
			     tp__podv_int(v, n), "use 0 or more", NONNEG);
}

/* parallelism or completions as the Job gets it: the builder's count
 * (v->pods) when there is one, else the template's. */
static bool count_of(const tp_podv *v, const cJSON *spec, const char *member, long long *out)
{
	if (v->pods > 0) {
		*out = v->pods;
		return true;
	}
	return int_of(spec, member, out);
}

static void check_completion_mode(tp_podv *v, const cJSON *spec, const char *mode)
{
	long long n;
	if (strcmp(mode, "NonIndexed") && strcmp(mode, "Indexed")) {
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".completionMode", tp__podv_quote(v, mode), NULL,
			     "supported values: \"NonIndexed\", \"Indexed\"");
		return;
	}
	bool indexed = !strcmp(mode, "Indexed");
	bool has_completions = count_of(v, spec, "completions", &n);
	bool has_parallelism = v->pods > 0 || (tp_member(spec, "parallelism") &&
						!cJSON_IsNull(tp_member(spec, "parallelism")));
	/* the Job's defaulting sets both to 1 only when both are unset */
	if (indexed && !has_completions && has_parallelism)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".completions", NULL,
			     "set completions (the number of indexes)",
			     "when completion mode is Indexed");
	if (indexed && count_of(v, spec, "parallelism", &n) && n > MAX_INDEXED_PARALLELISM)
		tp__podv_add(v, TP_FIELD_INVALID, ".parallelism", tp__podv_int(v, n),
			     "run at most 100000 Pods of an Indexed Job at once",
			     "must be less than or equal to %d when completion mode is Indexed",
			     MAX_INDEXED_PARALLELISM);
	static const char *const per_index[] = { "backoffLimitPerIndex", "maxFailedIndexes" };
	for (int k = 0; !indexed && k < 2; k++)
		if (int_of(spec, per_index[k], &n))
			tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", per_index[k]),
				     tp__podv_int(v, n), "use completionMode Indexed, or drop it",
				     "requires indexed completion mode");
	if (!indexed && tp__mobj(spec, "successPolicy"))
		tp__podv_add(v, TP_FIELD_INVALID, ".successPolicy",
			     tp__podv_json(v, tp_member(spec, "successPolicy")),
			     "use completionMode Indexed, or drop it",
			     "requires indexed completion mode");
}

/* The Job's rule on its Pods' restartPolicy (JobSet defaults "" to
 * OnFailure). */
static void check_restart_policy(tp_podv *v, const cJSON *spec)
{
	const char *rp = tp_get_str(spec, "template.spec.restartPolicy");
	if (!rp || !*rp)
		return;
	size_t mark = tp__podv_push(v, ".template.spec.restartPolicy");
	if (!strcmp(rp, "Always"))
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL,
			     "use restartPolicy OnFailure or Never: a Job's Pods end",
			     "valid values: \"OnFailure\", \"Never\"");
	else if (strcmp(rp, "OnFailure") && strcmp(rp, "Never"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, NULL, tp__podv_quote(v, rp),
			     "use restartPolicy OnFailure or Never",
			     "supported values: \"OnFailure\", \"Never\"");
	else if (tp__mobj(spec, "podFailurePolicy") && strcmp(rp, "Never"))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, rp),
			     "use restartPolicy Never with a podFailurePolicy",
			     "only \"Never\" is supported when podFailurePolicy is specified");
	tp__podv_pop(v, mark);
}

int tp__pod_check_job(tp_podv *v, const cJSON *job_template)
{
	static const char *const counts[] = { "parallelism", "completions", "activeDeadlineSeconds",
					      "backoffLimit", "ttlSecondsAfterFinished",
					      "backoffLimitPerIndex", "maxFailedIndexes" };
	const cJSON *spec = tp__mobj(job_template, "spec");
	size_t mark = tp__podv_push(v, "spec");
	/* the builder's count (v->pods) is 1 or more: its two members need no check */
	for (size_t i = v->pods > 0 ? 2 : 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		check_nonnegative(v, spec, counts[i]);
	long long n;
	if (int_of(spec, "maxFailedIndexes", &n) && !tp_member(spec, "backoffLimitPerIndex"))
		tp__podv_add(v, TP_FIELD_REQUIRED, ".backoffLimitPerIndex", NULL,
			     "set backoffLimitPerIndex too", "when maxFailedIndexes is specified");
	const cJSON *mode = tp_member(spec, "completionMode");
	check_completion_mode(v, spec, cJSON_IsString(mode) ? mode->valuestring : "Indexed");
	size_t tmark = tp__podv_push(v, ".template");
	tp__pod_check_template(v, tp_member(spec, "template"));
	tp__podv_pop(v, tmark);
	check_restart_policy(v, spec);
	tp__podv_pop(v, mark);
	return v->rc;
}

/* ------------------------------------------------------- public entries */

static int run(const cJSON *obj, const char *prefix, bool job, tp_result *res)
{
	if (!obj || !res)
		return TP_EINVAL;
	tp_podv v;
	if (tp__podv_init(&v))
		return TP_ENOMEM;
	if (job) {
		tp__pod_check_job(&v, obj);
	} else {
		tp__podv_push(&v, prefix ? prefix : "");
		tp__pod_check_template(&v, obj);
	}
	int rc = tp__podv_to_result(&v, res);
	tp__podv_free(&v);
	return rc;
}

int tp_pod_validate_job_template(const cJSON *job_template, tp_result *res)
{
	return run(job_template, NULL, true, res);
}

int tp_pod_validate_template(const cJSON *pod_template, const char *prefix, tp_result *res)
{
	return run(pod_template, prefix, false, res);
}

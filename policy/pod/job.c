/*
 * pod/job.c — a JobSet's replicated job as the Job kube-apiserver will be
 * asked to create (pkg/apis/batch/validation ValidateJob, v1.32: the Job's
 * metadata as its template's (pod/meta.c), validateJobSpec with
 * validatePodFailurePolicy, validateSuccessPolicy and
 * validatePodReplacementPolicy, ValidateJobSpec's selector), after JobSet's
 * own defaulting (completionMode Indexed, restartPolicy OnFailure when empty)
 * and the Job's (pkg/apis/batch/v1 SetDefaults_Job: parallelism and
 * completions 1 when both are unset, parallelism 1 when it alone is, an
 * onPodConditions pattern's status True), with the trainer's JobSet
 * builder's count as both when the caller gives one (tp_podv.pods). Every
 * feature gate these rules need (JobPodFailurePolicy, GA; JobBackoffLimitPerIndex,
 * JobSuccessPolicy, JobPodReplacementPolicy, JobManagedBy, beta) is on by
 * default in v1.32, so no field is dropped before validation. v1.26 had no
 * backoffLimitPerIndex, maxFailedIndexes, successPolicy, podReplacementPolicy
 * or managedBy yet. Also the two public entry points, which take a template
 * as it is.
 */
#include "policy/pod/members.h"

#include <string.h>

#define NONNEG "must be greater than or equal to 0"
#define MAX_INDEXED_PARALLELISM 100000
#define MAX_FAILED_INDEXES 100000
#define COMPLETIONS_SOFT_LIMIT 100000 /* above it, per-index backoff has limits of its own */
#define HIGH_COMPLETIONS_LIMIT 10000   /* parallelism and maxFailedIndexes then */
#define MAX_MANAGED_BY 63
#define HIGH_COMPLETIONS_MSG                                                             \
	"must be less than or equal to %d when completions are above %d and used with " \
	"backoff limit per index"

/* m: the Job spec's member (pod/members.h tp_pod_jm), read as tp__mint. */
static bool int_of(const cJSON *m, long long *out)
{
	return m && tp_json_is_int(m, out);
}

static void check_nonnegative(tp_podv *v, const cJSON *m, const char *member)
{
	long long n;
	if (int_of(m, &n) && n < 0)
		tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", member),
			     tp__podv_int(v, n), "use 0 or more", NONNEG);
}

/* parallelism or completions as the Job gets it: the builder's count
 * (v->pods) when there is one, else the template's. */
static bool count_of(const tp_podv *v, const cJSON *m, long long *out)
{
	if (v->pods > 0) {
		*out = v->pods;
		return true;
	}
	return int_of(m, out);
}

/* The Job's counts after SetDefaults_Job. */
typedef struct job_counts {
	bool has_completions;
	long long completions, parallelism;
} job_counts;

static job_counts counts_of(const tp_podv *v, const tp_pod_jm *j)
{
	job_counts c = { 0 };
	bool has_parallelism = count_of(v, j->parallelism, &c.parallelism);
	c.has_completions = count_of(v, j->completions, &c.completions);
	if (!has_parallelism && !c.has_completions)
		c.has_completions = true, c.completions = 1;
	if (!has_parallelism)
		c.parallelism = 1;
	return c;
}

/* validateJobSpec's limits of an Indexed Job on maxFailedIndexes and, above
 * 100000 completions with a per-index backoff, on parallelism. */
static void check_indexed_limits(tp_podv *v, const tp_pod_jm *j, const job_counts *c)
{
	long long failed, n;
	bool has_failed = int_of(j->max_failed_indexes, &failed);
	static const char hint[] = "allow fewer failed indexes";
	if (has_failed && c->has_completions && failed > c->completions)
		tp__podv_add(v, TP_FIELD_INVALID, ".maxFailedIndexes", tp__podv_int(v, failed), hint,
			     "must be less than or equal to completions");
	if (has_failed && failed > MAX_FAILED_INDEXES)
		tp__podv_add(v, TP_FIELD_INVALID, ".maxFailedIndexes", tp__podv_int(v, failed), hint,
			     "must be less than or equal to %d", MAX_FAILED_INDEXES);
	if (!c->has_completions || c->completions <= COMPLETIONS_SOFT_LIMIT ||
	    !int_of(j->backoff_limit_per_index, &n))
		return;
	if (!has_failed)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".maxFailedIndexes", NULL,
			     "set maxFailedIndexes (at most 10000)",
			     "must be specified when completions is above %d", COMPLETIONS_SOFT_LIMIT);
	if (c->parallelism > HIGH_COMPLETIONS_LIMIT)
		tp__podv_add(v, TP_FIELD_INVALID, ".parallelism", tp__podv_int(v, c->parallelism),
			     "run at most 10000 Pods at once, or drop backoffLimitPerIndex",
			     HIGH_COMPLETIONS_MSG, HIGH_COMPLETIONS_LIMIT, COMPLETIONS_SOFT_LIMIT);
	if (has_failed && failed > HIGH_COMPLETIONS_LIMIT)
		tp__podv_add(v, TP_FIELD_INVALID, ".maxFailedIndexes", tp__podv_int(v, failed), hint,
			     HIGH_COMPLETIONS_MSG, HIGH_COMPLETIONS_LIMIT, COMPLETIONS_SOFT_LIMIT);
}

static bool check_completion_mode(tp_podv *v, const tp_pod_jm *j, const char *mode)
{
	long long n;
	if (strcmp(mode, "NonIndexed") && strcmp(mode, "Indexed")) {
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".completionMode", tp__podv_quote(v, mode), NULL,
			     "supported values: \"NonIndexed\", \"Indexed\"");
		return false;
	}
	bool indexed = !strcmp(mode, "Indexed");
	bool has_completions = count_of(v, j->completions, &n);
	bool has_parallelism = v->pods > 0 || tp__vset(j->parallelism);
	/* the Job's defaulting sets both to 1 only when both are unset */
	if (indexed && !has_completions && has_parallelism)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".completions", NULL,
			     "set completions (the number of indexes)",
			     "when completion mode is Indexed");
	if (indexed && count_of(v, j->parallelism, &n) && n > MAX_INDEXED_PARALLELISM)
		tp__podv_add(v, TP_FIELD_INVALID, ".parallelism", tp__podv_int(v, n),
			     "run at most 100000 Pods of an Indexed Job at once",
			     "must be less than or equal to %d when completion mode is Indexed",
			     MAX_INDEXED_PARALLELISM);
	if (indexed) {
		job_counts c = counts_of(v, j);
		check_indexed_limits(v, j, &c);
	}
	static const char *const per_index[] = { "backoffLimitPerIndex", "maxFailedIndexes" };
	const cJSON *const per_index_m[] = { j->backoff_limit_per_index, j->max_failed_indexes };
	for (int k = 0; !indexed && k < 2; k++)
		if (int_of(per_index_m[k], &n))
			tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", per_index[k]),
				     tp__podv_int(v, n), "use completionMode Indexed, or drop it",
				     "requires indexed completion mode");
	return indexed;
}

/* managedBy: IsDomainPrefixedPath's errors (policy/core/names.c writes them
 * into a result, taken over here), and at most 63 characters. */
static void check_managed_by(tp_podv *v, const tp_pod_jm *j)
{
	const char *by = tp__vstr(j->managed_by);
	if (!by)
		return;
	static const char hint[] = "name the Job's controller as a domain-prefixed path "
				   "(\"kubernetes.io/job-controller\"), or drop managedBy";
	tp_result *r;
	if (tp_result_new(&r)) {
		v->rc = TP_ENOMEM;
		return;
	}
	if (tp__check_domain_prefixed_path(r, "spec.managedBy", by) < 0)
		v->rc = TP_ENOMEM;
	for (size_t i = 0; i < tp_result_error_count(r); i++) {
		const tp_field_error *e = tp_result_error_at(r, i);
		tp__podv_add(v, e->type, ".managedBy", e->value, hint, "%s", e->detail);
	}
	tp_result_free(r);
	if (strlen(by) > MAX_MANAGED_BY)
		tp__podv_add(v, TP_FIELD_TOO_LONG, ".managedBy", NULL, hint,
			     "may not be more than %d bytes", MAX_MANAGED_BY);
}

/* validatePodReplacementPolicy: Failed only with a podFailurePolicy. */
static void check_pod_replacement(tp_podv *v, const tp_pod_jm *j)
{
	const char *p = tp__vstr(j->pod_replacement_policy);
	if (!p)
		return;
	if (tp__vobj(j->pod_failure_policy)) {
		if (strcmp(p, "Failed"))
			tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".podReplacementPolicy",
				     tp__podv_quote(v, p),
				     "use podReplacementPolicy Failed with a podFailurePolicy, or drop it",
				     "supported values: \"Failed\"");
	} else if (strcmp(p, "Failed") && strcmp(p, "TerminatingOrFailed")) {
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".podReplacementPolicy", tp__podv_quote(v, p),
			     NULL, "supported values: \"Failed\", \"TerminatingOrFailed\"");
	}
}

/* ------------------------------------------------------------ selector */

#define SELECTOR_HINT "select Pods by label keys and values that are valid labels"

/* ValidateLabelSelectorRequirement at the current path. */
static void check_requirement(tp_podv *v, const cJSON *req)
{
	const char *op = tp__mstr(req, "operator");
	const cJSON *values = tp__marr(req, "values");
	bool has_values = values && values->child;
	if (!op)
		op = "";
	if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
		if (!has_values)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".values", NULL, "list the values to match",
				     "must be specified when `operator` is 'In' or 'NotIn'");
	} else if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
		if (has_values)
			tp__podv_add(v, TP_FIELD_FORBIDDEN, ".values", NULL,
				     "drop the values, or use operator In or NotIn",
				     "may not be specified when `operator` is 'Exists' or "
				     "'DoesNotExist'");
	} else {
		tp__podv_add(v, TP_FIELD_INVALID, ".operator", tp__podv_quote(v, op),
			     "use operator In, NotIn, Exists or DoesNotExist",
			     "not a valid selector operator");
	}
	const char *key = tp__mstr(req, "key");
	tp__pod_qualified_name(v, ".key", key ? key : "", SELECTOR_HINT);
	int j = 0;
	for (const cJSON *x = values ? values->child : NULL; x; x = x->next, j++) {
		const char *msg = cJSON_IsString(x) ? tp__check_label_value(x->valuestring) : NULL;
		if (msg)
			tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".values[%d]", j),
				     tp__podv_quote(v, x->valuestring), SELECTOR_HINT, "%s", msg);
	}
}

/* ValidateLabelSelector of spec.selector: false when it found something. */
static bool check_label_selector(tp_podv *v, const cJSON *selector)
{
	size_t before = v->n;
	size_t mark = tp__podv_push(v, ".selector");
	tp__pod_check_labels(v, ".matchLabels", tp_member(selector, "matchLabels"));
	const cJSON *reqs = tp__marr(selector, "matchExpressions");
	int i = 0;
	for (const cJSON *r = reqs ? reqs->child : NULL; r; r = r->next, i++) {
		size_t rmark = tp__podv_push_index(v, ".matchExpressions", i);
		check_requirement(v, r);
		tp__podv_pop(v, rmark);
	}
	tp__podv_pop(v, mark);
	return v->n == before;
}

/* The labels the API server generates for a Job's Pods and selects them by
 * (pkg/registry/batch/job generateSelector): their values are the Job's
 * name and uid. */
static bool generated_label(const char *key)
{
	static const char *const keys[] = { "controller-uid", "batch.kubernetes.io/controller-uid",
					    "job-name", "batch.kubernetes.io/job-name" };
	for (int k = 0; k < 4; k++)
		if (!strcmp(key, keys[k]))
			return true;
	return false;
}

/* validateGeneratedSelector: the selector, completed with the Job's uid,
 * must select the generated labels alone. What surely does not: a label
 * other than those, or a controller-uid (the uid is new); a job-name value,
 * and an expression on a generated label, are left (the name may be it). */
static bool selects_other_labels(const cJSON *selector)
{
	const cJSON *labels = tp__mobj(selector, "matchLabels");
	for (const cJSON *l = labels ? labels->child : NULL; l; l = l->next)
		if (!generated_label(l->string) || strstr(l->string, "controller-uid"))
			return true;
	const cJSON *reqs = tp__marr(selector, "matchExpressions");
	for (const cJSON *r = reqs ? reqs->child : NULL; r; r = r->next) {
		const char *key = tp__mstr(r, "key"), *op = tp__mstr(r, "operator");
		if (key && op && !generated_label(key) && (!strcmp(op, "In") || !strcmp(op, "Exists")))
			return true;
	}
	return false;
}

/* Labels others write into the Pod template after it is written here: JobSet's
 * (labelAndAnnotateObject) and the trainer's scheduler plugins', values
 * this check cannot know. */
static bool label_added_later(const char *key)
{
	static const char *const prefixes[] = { "jobset.sigs.k8s.io/", "scheduling.x-k8s.io/",
						"volcano.sh/" };
	for (int k = 0; k < 3; k++)
		if (!strncmp(key, prefixes[k], strlen(prefixes[k])))
			return true;
	return false;
}

/* With manualSelector, ValidateJobSpec's "selector must match the template's
 * labels": what surely does not is a matchLabels entry the labels lack or
 * hold another value of, or an In or Exists expression on a key they lack. */
static bool misses_template_labels(const cJSON *selector, const cJSON *labels)
{
	const cJSON *want = tp__mobj(selector, "matchLabels");
	for (const cJSON *l = want ? want->child : NULL; l; l = l->next) {
		const char *have = tp__mstr(labels, l->string);
		if (!label_added_later(l->string) && cJSON_IsString(l) &&
		    (!have || strcmp(have, l->valuestring)))
			return true;
	}
	const cJSON *reqs = tp__marr(selector, "matchExpressions");
	for (const cJSON *r = reqs ? reqs->child : NULL; r; r = r->next) {
		const char *key = tp__mstr(r, "key"), *op = tp__mstr(r, "operator");
		if (key && op && !label_added_later(key) && !tp_member(labels, key) &&
		    (!strcmp(op, "In") || !strcmp(op, "Exists")))
			return true;
	}
	return false;
}

/* ValidateJobSpec's selector (with manualSelector the API server generates
 * none, so one must be given, and it must match the template's labels) and
 * validateGeneratedSelector's. */
static void check_selector(tp_podv *v, const tp_pod_jm *j)
{
	const cJSON *selector = tp__vobj(j->selector);
	bool manual = cJSON_IsTrue(j->manual_selector);
	if (!selector) {
		if (manual)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".selector", NULL,
				     "drop manualSelector (the Job then selects its own Pods), or "
				     "give a selector that matches the Pod template's labels",
				     "%s", "");
		return;
	}
	if (!check_label_selector(v, selector))
		return;
	if (!manual && selects_other_labels(selector))
		tp__podv_add(v, TP_FIELD_INVALID, ".selector", tp__podv_json(v, selector),
			     "drop the selector: the API server selects a Job's Pods by the labels "
			     "it generates (the value shown is the template's selector, without the "
			     "controller-uid the API server adds)",
			     "`selector` not auto-generated");
	const cJSON *labels = tp_get_object(j->self, "template.metadata.labels");
	if (manual && misses_template_labels(selector, labels))
		tp__podv_add(v, TP_FIELD_INVALID, ".template.metadata.labels",
			     labels ? tp__podv_json(v, labels) : "{}",
			     "give the Pod template the labels the selector selects (the value shown "
			     "is the template's labels, without those JobSet adds)",
			     "`selector` does not match template `labels`");
}

/* The Job's rule on its Pods' restartPolicy. JobSet's webhook makes an
 * empty one OnFailure, which the Job allows unless it has a
 * podFailurePolicy. */
static void check_restart_policy(tp_podv *v, const tp_pod_jm *j)
{
	/* template.spec.restartPolicy, member by member (a dotted path is
	 * parsed each time) */
	const char *rp = tp__mstr(tp__mobj(tp__vobj(j->template_), "spec"), "restartPolicy");
	bool defaulted = !rp || !*rp;
	if (defaulted)
		rp = "OnFailure";
	size_t mark = tp__podv_push(v, ".template.spec.restartPolicy");
	if (!strcmp(rp, "Always"))
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL,
			     "use restartPolicy OnFailure or Never: a Job's Pods end",
			     "valid values: \"OnFailure\", \"Never\"");
	else if (strcmp(rp, "OnFailure") && strcmp(rp, "Never"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, NULL, tp__podv_quote(v, rp),
			     "use restartPolicy OnFailure or Never",
			     "supported values: \"OnFailure\", \"Never\"");
	else if (tp__vobj(j->pod_failure_policy) && strcmp(rp, "Never"))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, rp),
			     defaulted ? "set restartPolicy: Never in the Pod template (JobSet makes "
					 "an empty one OnFailure)"
				   : "use restartPolicy Never with a podFailurePolicy",
			     "only \"Never\" is supported when podFailurePolicy is specified");
	tp__podv_pop(v, mark);
}

/* ----------------------------------------------------- podFailurePolicy
 * validatePodFailurePolicy and its rules' checks. */

#define MAX_FAILURE_RULES 20
#define MAX_EXIT_CODES 255
#define MAX_CONDITIONS 20

static int count_items(const cJSON *list)
{
	int n = 0;
	for (const cJSON *i = list ? list->child : NULL; i; i = i->next)
		n++;
	return n;
}

/* TooMany at suffix when list has more than max items. */
static void check_too_many(tp_podv *v, const char *suffix, const cJSON *list, int max,
			   const char *hint)
{
	int n = count_items(list);
	if (n > max)
		tp__podv_add(v, TP_FIELD_TOO_MANY, suffix, tp__podv_int(v, n), hint,
			     "must have at most %d items", max);
}

static void check_action(tp_podv *v, const cJSON *rule, const cJSON *spec)
{
	const char *a = tp__mstr(rule, "action");
	long long per_index;
	static const char hint[] = "use action Count, FailIndex, FailJob or Ignore";
	if (!a || !*a)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".action", NULL, hint,
			     "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]");
	else if (!strcmp(a, "FailIndex") && !tp__mint(spec, "backoffLimitPerIndex", &per_index))
		tp__podv_add(v, TP_FIELD_INVALID, ".action", tp__podv_quote(v, a),
			     "set backoffLimitPerIndex, or use action FailJob",
			     "requires the backoffLimitPerIndex to be set");
	else if (strcmp(a, "Count") && strcmp(a, "FailIndex") && strcmp(a, "FailJob") &&
		 strcmp(a, "Ignore"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".action", tp__podv_quote(v, a), hint,
			     "supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"");
}

/* The values as Go's %#v prints an []int32: "[]int32{1, 3, 2}", an empty
 * list "[]int32{}", none "[]int32(nil)". */
static const char *int32s(tp_podv *v, const cJSON *values)
{
	if (!values)
		return "[]int32(nil)";
	tp_buf b = TP_BUF_INIT(1 << 16);
	int rc = tp_buf_adds(&b, "[]int32{");
	long long n;
	for (const cJSON *x = values->child; x && !rc; x = x->next)
		if (tp_json_is_int(x, &n))
			rc = tp_buf_addf(&b, "%s%lld", x == values->child ? "" : ", ", n);
	const char *s = rc || tp_buf_addc(&b, '}') ? "[]int32{...}" : tp__podv_printf(v, "%s", b.data);
	tp_buf_free(&b);
	return s;
}

static void check_exit_code_values(tp_podv *v, const cJSON *values, bool in)
{
	static const char hint[] = "list distinct exit codes in increasing order (0 only with NotIn)";
	int n = count_items(values);
	if (n == 0)
		tp__podv_add(v, TP_FIELD_INVALID, ".values", int32s(v, values), hint,
			     "at least one value is required");
	check_too_many(v, ".values", values, MAX_EXIT_CODES, hint);
	tp_nameset seen;
	tp__nameset_init(&seen, v->arena);
	bool ordered = true, has_prev = false;
	long long prev = 0, x;
	int j = 0;
	for (const cJSON *c = values ? values->child : NULL; c && !v->rc; c = c->next, j++) {
		if (!tp_json_is_int(c, &x))
			continue; /* the schema layer reports it */
		const char *key = tp__podv_int(v, x);
		size_t mark = tp__podv_push_index(v, ".values", j);
		if (in && x == 0)
			tp__podv_add(v, TP_FIELD_INVALID, NULL, key, hint,
				     "must not be 0 for the In operator");
		if (key && tp__nameset_has(&seen, key))
			tp__podv_add(v, TP_FIELD_DUPLICATE, NULL, key, hint, "%s", "");
		else if (key && tp__nameset_add(&seen, key))
			v->rc = TP_ENOMEM;
		tp__podv_pop(v, mark);
		ordered &= !has_prev || prev <= x;
		prev = x;
		has_prev = true;
	}
	if (!ordered)
		tp__podv_add(v, TP_FIELD_INVALID, ".values", int32s(v, values), hint,
			     "must be ordered");
}

static void check_on_exit_codes(tp_podv *v, const cJSON *req, const tp_nameset *containers)
{
	size_t mark = tp__podv_push(v, ".onExitCodes");
	const char *op = tp__mstr(req, "operator");
	static const char hint[] = "use operator In or NotIn";
	if (!op || !*op)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".operator", NULL, hint,
			     "valid values: [\"In\" \"NotIn\"]");
	else if (strcmp(op, "In") && strcmp(op, "NotIn"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".operator", tp__podv_quote(v, op), hint,
			     "supported values: \"In\", \"NotIn\"");
	const char *name = tp__mstr(req, "containerName");
	if (name && !tp__nameset_has(containers, name))
		tp__podv_add(v, TP_FIELD_INVALID, ".containerName", tp__podv_quote(v, name),
			     "name a container or init container of the Pod template, or drop "
			     "containerName",
			     "must be one of the container or initContainer names in the pod template");
	const cJSON *values = tp_member(req, "values");
	check_exit_code_values(v, cJSON_IsArray(values) ? values : NULL, op && !strcmp(op, "In"));
	tp__podv_pop(v, mark);
}

static void check_on_pod_conditions(tp_podv *v, const cJSON *patterns)
{
	check_too_many(v, ".onPodConditions", patterns, MAX_CONDITIONS,
		       "match at most 20 Pod conditions in one rule");
	static const char type_hint[] = "use a Pod condition type such as DisruptionTarget";
	int j = 0;
	for (const cJSON *p = patterns->child; p; p = p->next, j++) {
		size_t mark = tp__podv_push_index(v, ".onPodConditions", j);
		const char *type = tp__mstr(p, "type");
		tp__pod_qualified_name(v, ".type", type ? type : "", type_hint);
		/* an empty status is defaulted to True (SetDefaults_Job) */
		const char *status = tp__mstr(p, "status");
		if (status && *status && strcmp(status, "True") && strcmp(status, "False") &&
		    strcmp(status, "Unknown"))
			tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".status", tp__podv_quote(v, status),
				     "use status True, False or Unknown",
				     "supported values: \"False\", \"True\", \"Unknown\"");
		tp__podv_pop(v, mark);
	}
}

static void check_failure_rule(tp_podv *v, const cJSON *rule, const cJSON *spec,
			       const tp_nameset *containers)
{
	check_action(v, rule, spec);
	const cJSON *exit_codes = tp__mobj(rule, "onExitCodes");
	const cJSON *conditions = tp__marr(rule, "onPodConditions");
	bool has_conditions = conditions && conditions->child;
	if (exit_codes)
		check_on_exit_codes(v, exit_codes, containers);
	if (has_conditions)
		check_on_pod_conditions(v, conditions);
	if (exit_codes && has_conditions)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, NULL,
			     "split the rule in two: one on exit codes, one on Pod conditions",
			     "specifying both OnExitCodes and OnPodConditions is not supported");
	if (!exit_codes && !has_conditions)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, NULL,
			     "add onExitCodes or onPodConditions to say which failures the rule is "
			     "about",
			     "specifying one of OnExitCodes and OnPodConditions is required");
}

/* The names of the Pod template's containers and init containers. */
static void container_names(tp_podv *v, const cJSON *spec, tp_nameset *names)
{
	static const char *const lists[] = { "template.spec.containers",
					     "template.spec.initContainers" };
	tp__nameset_init(names, v->arena);
	for (int k = 0; k < 2; k++) {
		const cJSON *list = tp_get_array(spec, lists[k]);
		for (const cJSON *c = list ? list->child : NULL; c; c = c->next) {
			const char *name = tp__mstr(c, "name");
			if (name && tp__nameset_add(names, name))
				v->rc = TP_ENOMEM;
		}
	}
}

static void check_failure_policy(tp_podv *v, const tp_pod_jm *j)
{
	const cJSON *spec = j->self;
	const cJSON *policy = tp__vobj(j->pod_failure_policy);
	if (!policy)
		return;
	size_t mark = tp__podv_push(v, ".podFailurePolicy");
	const cJSON *rules = tp__marr(policy, "rules");
	check_too_many(v, ".rules", rules, MAX_FAILURE_RULES,
		       "keep at most 20 rules: one rule can match several exit codes");
	tp_nameset containers;
	container_names(v, spec, &containers);
	int i = 0;
	for (const cJSON *r = rules ? rules->child : NULL; r && !v->rc; r = r->next, i++) {
		size_t rmark = tp__podv_push_index(v, ".rules", i);
		if (cJSON_IsObject(r))
			check_failure_rule(v, r, spec, &containers);
		tp__podv_pop(v, rmark);
	}
	tp__podv_pop(v, mark);
}

/* ------------------------------------------------------- successPolicy
 * validateSuccessPolicy, and validateIndexesFormat's reading of
 * succeededIndexes ("0,2-4,7": intervals in increasing order). */

#define MAX_SUCCESS_RULES 20
#define MAX_SUCCEEDED_INDEXES (64 * 1024)

/* strconv.Atoi of s[0..n): an optional sign, then decimal digits, within
 * int64. */
static bool atoi_of(const char *s, size_t n, long long *out)
{
	size_t i = s[0] == '+' || s[0] == '-' ? 1 : 0;
	bool neg = n > 0 && s[0] == '-';
	unsigned long long x = 0, limit = neg ? 9223372036854775808ULL : 9223372036854775807ULL;
	if (i >= n)
		return false;
	for (; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9 || x > (limit - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*out = neg ? (long long)(0 - x) : (long long)x;
	return true;
}

/* One index of an interval, or the reason it is none. */
static const char *index_of(tp_podv *v, const char *s, size_t n, long long completions,
			    long long *out)
{
	const char *why;
	if (!atoi_of(s, n, out))
		why = "cannot convert string to integer for index: ";
	else if (*out >= completions)
		why = "too large index: ";
	else
		return NULL;
	const char *part = tp__podv_printf(v, "%.*s", (int)n, s);
	return tp__podv_printf(v, "%s%s", why, tp__podv_quote(v, part ? part : ""));
}

/* parseIndexInterval: "x" or "x-y" with x < y < completions. */
static const char *parse_interval(tp_podv *v, const char *s, size_t n, long long completions,
				  long long *x, long long *y)
{
	const char *dash = memchr(s, '-', n);
	size_t n0 = dash ? (size_t)(dash - s) : n;
	*x = *y = 0;
	if (dash && memchr(dash + 1, '-', n - n0 - 1)) {
		const char *fragment = tp__podv_printf(v, "%.*s", (int)n, s);
		return tp__podv_printf(v,
				       "the fragment %s violates the requirement that an index "
				       "interval can have at most two parts separated by '-'",
				       tp__podv_quote(v, fragment ? fragment : ""));
	}
	const char *err = index_of(v, s, n0, completions, x);
	if (err || !dash) {
		*y = *x;
		return err;
	}
	if ((err = index_of(v, dash + 1, n - n0 - 1, completions, y)))
		return err;
	if (*x >= *y)
		return tp__podv_printf(v, "non-increasing order, previous: %lld, current: %lld", *x,
				       *y);
	return NULL;
}

/* validateIndexesFormat: *total the indexes listed, or the first error. */
static const char *indexes_format(tp_podv *v, const char *s, long long completions,
				  long long *total)
{
	*total = 0;
	bool has_last = false;
	long long last = 0, x, y;
	if (!*s)
		return NULL;
	for (const char *p = s;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *err = parse_interval(v, p, n, completions, &x, &y);
		if (!err && has_last && last >= x)
			err = tp__podv_printf(v, "non-increasing order, previous: %lld, current: %lld",
					      last, x);
		if (err) {
			*total = 0;
			return err;
		}
		*total += y - x + 1;
		last = y;
		has_last = true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return NULL;
}

/* completions: the Job's, or NULL when it has none (an Indexed Job without
 * completions is refused already; upstream would read a nil pointer). */
static void check_success_rule(tp_podv *v, const cJSON *rule, const long long *completions)
{
	const char *indexes = tp__mstr(rule, "succeededIndexes");
	long long count, total = 0;
	bool has_count = tp__mint(rule, "succeededCount", &count);
	if (!indexes && !has_count)
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL,
			     "set succeededCount, succeededIndexes or both",
			     "at least one of succeededCount or succeededIndexes must be specified");
	static const char hint[] = "list indexes below completions as \"0,2-4,7\", in increasing "
				   "order";
	if (indexes && strlen(indexes) > MAX_SUCCEEDED_INDEXES)
		tp__podv_add(v, TP_FIELD_TOO_LONG, ".succeededIndexes", NULL, hint,
			     "may not be more than %d bytes", MAX_SUCCEEDED_INDEXES);
	const char *err = indexes && completions
				  ? indexes_format(v, indexes, *completions, &total)
				  : NULL;
	if (err)
		tp__podv_add(v, TP_FIELD_INVALID, ".succeededIndexes", tp__podv_quote(v, indexes),
			     hint, "error parsing succeededIndexes: %s", err);
	if (!has_count)
		return;
	static const char count_hint[] = "ask for at most as many succeeded Pods as there are";
	const char *n = tp__podv_int(v, count);
	if (count < 0)
		tp__podv_add(v, TP_FIELD_INVALID, ".succeededCount", n, "use 0 or more", NONNEG);
	if (completions && count > *completions)
		tp__podv_add(v, TP_FIELD_INVALID, ".succeededCount", n, count_hint,
			     "must be less than or equal to %lld (the number of specified "
			     "completions)",
			     *completions);
	if (completions && indexes && count > total)
		tp__podv_add(v, TP_FIELD_INVALID, ".succeededCount", n, count_hint,
			     "must be less than or equal to %lld (the number of indexes in the "
			     "specified succeededIndexes field)",
			     total);
}

static void check_success_policy(tp_podv *v, const tp_pod_jm *j, bool indexed,
				 const long long *completions)
{
	const cJSON *policy = tp__vobj(j->success_policy);
	if (!policy)
		return;
	if (!indexed) {
		tp__podv_add(v, TP_FIELD_INVALID, ".successPolicy", tp__podv_json(v, policy),
			     "use completionMode Indexed, or drop it",
			     "requires indexed completion mode");
		return;
	}
	size_t mark = tp__podv_push(v, ".successPolicy");
	const cJSON *rules = tp__marr(policy, "rules");
	if (!rules || !rules->child)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".rules", NULL,
			     "add a rule (succeededIndexes, succeededCount), or drop successPolicy",
			     "at least one rules must be specified when the successPolicy is "
			     "specified");
	check_too_many(v, ".rules", rules, MAX_SUCCESS_RULES, "keep at most 20 rules");
	int i = 0;
	for (const cJSON *r = rules ? rules->child : NULL; r && !v->rc; r = r->next, i++) {
		size_t rmark = tp__podv_push_index(v, ".rules", i);
		if (cJSON_IsObject(r))
			check_success_rule(v, r, completions);
		tp__podv_pop(v, rmark);
	}
	tp__podv_pop(v, mark);
}

/* ------------------------------------------------------------ the Job */

/* validateJobSpec up to the Pod template, at the current path: what
 * parallelism and completions (the builder's count) decide. */
static void check_head(tp_podv *v, const tp_pod_jm *j)
{
	static const char *const counts[] = { "parallelism", "completions", "activeDeadlineSeconds",
					      "backoffLimit", "ttlSecondsAfterFinished",
					      "backoffLimitPerIndex", "maxFailedIndexes" };
	const cJSON *const members[] = { j->parallelism, j->completions,
					 j->active_deadline_seconds, j->backoff_limit,
					 j->ttl_seconds_after_finished, j->backoff_limit_per_index,
					 j->max_failed_indexes };
	/* the builder's count (v->pods) is 1 or more: its two members need no check */
	for (size_t i = v->pods > 0 ? 2 : 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		check_nonnegative(v, members[i], counts[i]);
	long long n;
	if (int_of(j->max_failed_indexes, &n) && !j->backoff_limit_per_index)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".backoffLimitPerIndex", NULL,
			     "set backoffLimitPerIndex too", "when maxFailedIndexes is specified");
	check_managed_by(v, j);
	const char *mode = tp__vstr(j->completion_mode);
	bool indexed = check_completion_mode(v, j, mode ? mode : "Indexed");
	check_failure_policy(v, j);
	job_counts c = counts_of(v, j);
	check_success_policy(v, j, indexed, c.has_completions ? &c.completions : NULL);
	check_pod_replacement(v, j);
}

void tp__pod_check_job_head(tp_podv *v, const cJSON *job_template)
{
	tp_pod_jm j;
	tp__pod_jm_fill(&j, tp__mobj(job_template, "spec"));
	size_t mark = tp__podv_push(v, "spec");
	check_head(v, &j);
	tp__podv_pop(v, mark);
}

int tp__pod_check_job(tp_podv *v, const cJSON *job_template)
{
	/* the Job spec's and the Pod spec's members read once for all checks */
	tp_pod_tm m;
	tp__pod_tm_fill(&m, job_template);
	return tp__pod_check_job_tm(v, job_template, &m);
}

int tp__pod_check_job_tm(tp_podv *v, const cJSON *job_template, const tp_pod_tm *m)
{
	tp__pod_check_job_meta(v, job_template);
	const tp_pod_jm *jm = &m->job;
	size_t mark = tp__podv_push(v, "spec");
	tp__podv_mark(v, NULL, TP_MARK_HEAD_BEGIN);
	check_head(v, jm);
	tp__podv_mark(v, NULL, TP_MARK_HEAD_END);
	size_t tmark = tp__podv_push(v, ".template");
	const cJSON *tmpl = jm->template_;
	tp__pod_check_template_sm(v, tmpl, &m->pod);
	/* metadata.annotations of any type, as tp_get finds it */
	tp__pod_check_annotations(v, ".annotations", tp_member(tp__mobj(tmpl, "metadata"),
							       "annotations"));
	tp__podv_pop(v, tmark);
	check_restart_policy(v, jm);
	check_selector(v, jm);
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

/*
 * pod/scheduling.c — where a Pod may run, as kube-apiserver checks it
 * (pkg/apis/core/validation validateAffinity with ValidateNodeSelector,
 * ValidatePreferredSchedulingTerms and validatePodAffinityTerm,
 * validateTopologySpreadConstraints, validateSchedulingGates and
 * ValidatePreemptionPolicy, v1.32; label selectors as apimachinery's
 * ValidateLabelSelector). v1.32's defaults: the node affinity's label
 * values are not checked (upstream passes true for it), a Pod affinity
 * term's and a spread constraint's are; matchLabelKeys, mismatchLabelKeys,
 * nodeAffinityPolicy and nodeTaintsPolicy are kept (their gates are on).
 * A Pod template's selectors are checked as written: the API server merges
 * matchLabelKeys into a selector for Pods only. Upstream's paths are kept,
 * slips included: a namespace of a Pod affinity term is reported at
 * ".namespace", a matchLabelKey found in the selector twice at the term's
 * path with the key's index after it.
 */
#include "policy/pod/members.h"

#include <string.h>

#define WEIGHT "must be in the range 1-100"
#define NOT_POSITIVE "must be greater than zero"
#define LABEL_HINT "use a qualified name as key and a label value of up to 63 characters"
#define NO_SELECTOR "must not be specified when labelSelector is not set"

static bool str_is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

static int count(const cJSON *list)
{
	return cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
}

static const char *str_of(const cJSON *s)
{
	return cJSON_IsString(s) ? s->valuestring : "";
}

/* ValidateLabelName: every one of IsQualifiedName's errors (pod/meta.c). */
static void label_name(tp_podv *v, const char *suffix, const char *key, const char *hint)
{
	tp__pod_qualified_name(v, suffix, key, hint);
}

/* ------------------------------------------------------ node affinity */

/* The rule of a selector requirement's operator on its n values, for
 * node selectors (gt_lt: Gt and Lt too) and label selectors. False: no
 * such operator. */
static bool operator_values(tp_podv *v, const char *op, int n, bool gt_lt)
{
	if (str_is(op, "In") || str_is(op, "NotIn")) {
		if (!n)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".values", NULL, "list the values to match",
				     "must be specified when `operator` is 'In' or 'NotIn'");
	} else if (str_is(op, "Exists") || str_is(op, "DoesNotExist")) {
		if (n)
			tp__podv_add(v, TP_FIELD_FORBIDDEN, ".values", NULL, "drop the values",
				     "may not be specified when `operator` is 'Exists' or "
				     "'DoesNotExist'");
	} else if (gt_lt && (str_is(op, "Gt") || str_is(op, "Lt"))) {
		if (n != 1)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".values", NULL, "give exactly one number",
				     "must be specified single value when `operator` is 'Lt' or 'Gt'");
	} else {
		return false;
	}
	return true;
}

/* ValidateNodeSelectorRequirement, label values allowed as they are. */
static void node_requirement(tp_podv *v, const cJSON *rq)
{
	const char *op = tp__mstr(rq, "operator");
	if (!operator_values(v, op, count(tp_member(rq, "values")), true))
		tp__podv_add(v, TP_FIELD_INVALID, ".operator", tp__podv_quote(v, op ? op : ""),
			     "use In, NotIn, Exists, DoesNotExist, Gt or Lt",
			     "not a valid selector operator");
	const char *key = tp__mstr(rq, "key");
	label_name(v, ".key", key ? key : "", LABEL_HINT);
}

/* ValidateNodeFieldSelectorRequirement: metadata.name only. */
static void node_field_requirement(tp_podv *v, const cJSON *rq)
{
	const char *op = tp__mstr(rq, "operator");
	const cJSON *values = tp_member(rq, "values");
	if (str_is(op, "In") || str_is(op, "NotIn")) {
		if (count(values) != 1)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".values", NULL, "give one node name",
				     "must be only one value when `operator` is 'In' or 'NotIn' for "
				     "node field selector");
	} else {
		tp__podv_add(v, TP_FIELD_INVALID, ".operator", tp__podv_quote(v, op ? op : ""),
			     "use In or NotIn", "not a valid selector operator");
	}
	const char *key = tp__mstr(rq, "key");
	if (!str_is(key, "metadata.name")) {
		tp__podv_add(v, TP_FIELD_INVALID, ".key", tp__podv_quote(v, key ? key : ""),
			     "use the key metadata.name", "not a valid field selector key");
		return;
	}
	int i = 0;
	for (const cJSON *s = cJSON_IsArray(values) ? values->child : NULL; s; s = s->next, i++) {
		const char *msg = tp__check_dns1123_subdomain(str_of(s));
		if (!msg)
			continue;
		size_t mark = tp__podv_push_index(v, ".values", i);
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, str_of(s)),
			     "use a node's name", "%s", msg);
		tp__podv_pop(v, mark);
	}
}

typedef void (*item_check)(tp_podv *v, const cJSON *item);

static void each(tp_podv *v, const cJSON *list, const char *member, item_check check)
{
	int i = 0;
	for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e; e = e->next, i++) {
		size_t mark = tp__podv_push_index(v, member, i);
		check(v, e);
		tp__podv_pop(v, mark);
	}
}

/* ValidateNodeSelectorTerm. */
static void node_term(tp_podv *v, const cJSON *term)
{
	each(v, tp_member(term, "matchExpressions"), ".matchExpressions", node_requirement);
	each(v, tp_member(term, "matchFields"), ".matchFields", node_field_requirement);
}

static void check_weight(tp_podv *v, const cJSON *item)
{
	long long w = 0;
	tp__mint(item, "weight", &w);
	if (w < 1 || w > 100)
		tp__podv_add(v, TP_FIELD_INVALID, ".weight", tp__podv_int(v, w),
			     "give a weight from 1 to 100", WEIGHT);
}

static void preferred_node_term(tp_podv *v, const cJSON *item)
{
	check_weight(v, item);
	size_t mark = tp__podv_push(v, ".preference");
	node_term(v, tp__mobj(item, "preference"));
	tp__podv_pop(v, mark);
}

static void node_affinity(tp_podv *v, const cJSON *na)
{
	const cJSON *req = tp__mobj(na, "requiredDuringSchedulingIgnoredDuringExecution");
	if (req) {
		size_t mark = tp__podv_push(v, ".requiredDuringSchedulingIgnoredDuringExecution");
		if (!count(tp_member(req, "nodeSelectorTerms")))
			tp__podv_add(v, TP_FIELD_REQUIRED, ".nodeSelectorTerms", NULL,
				     "give at least one term with matchExpressions or matchFields, "
				     "or drop requiredDuringSchedulingIgnoredDuringExecution",
				     "must have at least one node selector term");
		else
			each(v, tp_member(req, "nodeSelectorTerms"), ".nodeSelectorTerms", node_term);
		tp__podv_pop(v, mark);
	}
	each(v, tp_member(na, "preferredDuringSchedulingIgnoredDuringExecution"),
	     ".preferredDuringSchedulingIgnoredDuringExecution", preferred_node_term);
}

/* ---------------------------------------------------- label selectors */

/* ValidateLabelSelectorRequirement, label values checked. */
static void selector_requirement(tp_podv *v, const cJSON *rq)
{
	const char *op = tp__mstr(rq, "operator");
	const cJSON *values = tp_member(rq, "values");
	int n = count(values);
	if (!operator_values(v, op, n, false))
		tp__podv_add(v, TP_FIELD_INVALID, ".operator", tp__podv_quote(v, op ? op : ""),
			     "use In, NotIn, Exists or DoesNotExist", "not a valid selector operator");
	const char *key = tp__mstr(rq, "key");
	label_name(v, ".key", key ? key : "", LABEL_HINT);
	int i = 0;
	for (const cJSON *s = n ? values->child : NULL; s; s = s->next, i++) {
		const char *msg = tp__check_label_value(str_of(s));
		if (!msg)
			continue;
		size_t mark = tp__podv_push_index(v, ".values", i);
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, str_of(s)), LABEL_HINT,
			     "%s", msg);
		tp__podv_pop(v, mark);
	}
}

static void label_selector(tp_podv *v, const cJSON *sel, const char *member)
{
	if (!sel)
		return;
	size_t mark = tp__podv_push(v, member);
	tp__pod_check_labels(v, ".matchLabels", tp_member(sel, "matchLabels"));
	each(v, tp_member(sel, "matchExpressions"), ".matchExpressions", selector_requirement);
	tp__podv_pop(v, mark);
}

/* Every key sel names, in matchLabels and matchExpressions. */
static void selector_keys(const cJSON *sel, tp_nameset *keys, tp_podv *v)
{
	const cJSON *ml = tp__mobj(sel, "matchLabels");
	for (const cJSON *l = ml ? ml->child : NULL; l; l = l->next)
		if (tp__nameset_add(keys, l->string))
			v->rc = TP_ENOMEM;
	const cJSON *exprs = tp__marr(sel, "matchExpressions");
	for (const cJSON *e = exprs ? exprs->child : NULL; e; e = e->next)
		if (tp__nameset_add(keys, tp__mstr(e, "key")))
			v->rc = TP_ENOMEM;
}

/* ------------------------------------------------------- pod affinity */

/* validateLabelKeys. */
static void label_keys(tp_podv *v, const cJSON *keys, const char *member, const cJSON *sel)
{
	if (!count(keys))
		return;
	if (!sel) {
		tp__podv_add(v, TP_FIELD_FORBIDDEN, member, NULL, "give a labelSelector, or drop them",
			     NO_SELECTOR);
		return;
	}
	int i = 0;
	for (const cJSON *k = keys->child; k; k = k->next, i++) {
		size_t mark = tp__podv_push_index(v, member, i);
		label_name(v, NULL, str_of(k), LABEL_HINT);
		tp__podv_pop(v, mark);
	}
}

/* validateMatchLabelKeysAndMismatchLabelKeys's second rule: a matchLabelKey
 * the selector names twice (the API server added it once for a Pod). */
static void keys_in_selector(tp_podv *v, const cJSON *match, const cJSON *sel)
{
	if (!sel || !count(match))
		return;
	tp_nameset index, seen;
	tp__nameset_init(&index, v->arena);
	tp__nameset_init(&seen, v->arena);
	int i = 0;
	for (const cJSON *k = match->child; k; k = k->next, i++) {
		int *at = tp_arena_alloc(v->arena, sizeof(*at));
		if (!at) {
			v->rc = TP_ENOMEM;
			return;
		}
		*at = i;
		/* the last index of a key, as upstream's map keeps it */
		const char *key = str_of(k);
		if (tp__nameset_has(&index, key))
			*(int *)tp__nameset_get(&index, key) = i;
		else if (tp__nameset_put(&index, key, at))
			v->rc = TP_ENOMEM;
	}
	const cJSON *ml = tp__mobj(sel, "matchLabels");
	for (const cJSON *l = ml ? ml->child : NULL; l; l = l->next)
		if (tp__nameset_add(&seen, l->string))
			v->rc = TP_ENOMEM;
	const cJSON *exprs = tp__marr(sel, "matchExpressions");
	for (const cJSON *e = exprs ? exprs->child : NULL; e; e = e->next) {
		const char *key = tp__mstr(e, "key");
		const int *at = tp__nameset_get(&index, key ? key : "");
		if (at && tp__nameset_has(&seen, key)) {
			size_t mark = tp__podv_push_index(v, "", *at);
			tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, key),
				     "drop the key from matchLabelKeys or from the labelSelector",
				     "exists in both matchLabelKeys and labelSelector");
			tp__podv_pop(v, mark);
		}
		if (key && tp__nameset_add(&seen, key))
			v->rc = TP_ENOMEM;
	}
}

static void match_and_mismatch(tp_podv *v, const cJSON *term, const cJSON *sel)
{
	const cJSON *match = tp__marr(term, "matchLabelKeys");
	const cJSON *mismatch = tp__marr(term, "mismatchLabelKeys");
	label_keys(v, match, ".matchLabelKeys", sel);
	label_keys(v, mismatch, ".mismatchLabelKeys", sel);
	keys_in_selector(v, match, sel);
	if (!count(match) || !count(mismatch))
		return;
	tp_nameset mis;
	tp__nameset_init(&mis, v->arena);
	for (const cJSON *k = mismatch->child; k; k = k->next)
		if (tp__nameset_add(&mis, str_of(k)))
			v->rc = TP_ENOMEM;
	int i = 0;
	for (const cJSON *k = match->child; k; k = k->next, i++) {
		if (!tp__nameset_has(&mis, str_of(k)))
			continue;
		size_t mark = tp__podv_push_index(v, ".matchLabelKeys", i);
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, str_of(k)),
			     "keep the key in one of matchLabelKeys and mismatchLabelKeys",
			     "exists in both matchLabelKeys and mismatchLabelKeys");
		tp__podv_pop(v, mark);
	}
}

/* validatePodAffinityTerm. */
static void pod_term(tp_podv *v, const cJSON *term)
{
	const cJSON *sel = tp__mobj(term, "labelSelector");
	label_selector(v, sel, ".labelSelector");
	label_selector(v, tp__mobj(term, "namespaceSelector"), ".namespaceSelector");
	const cJSON *nss = tp__marr(term, "namespaces");
	for (const cJSON *ns = nss ? nss->child : NULL; ns; ns = ns->next) {
		const char *msg = tp__check_dns1123_label(str_of(ns));
		if (msg)
			tp__podv_add(v, TP_FIELD_INVALID, ".namespace", tp__podv_quote(v, str_of(ns)),
				     "use a namespace's name", "%s", msg);
	}
	match_and_mismatch(v, term, sel);
	const char *key = tp__mstr(term, "topologyKey");
	if (!key || !*key)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".topologyKey", NULL,
			     "name the node label to group by (\"kubernetes.io/hostname\", "
			     "\"topology.kubernetes.io/zone\")",
			     "can not be empty");
	label_name(v, ".topologyKey", key ? key : "", LABEL_HINT);
}

static void weighted_pod_term(tp_podv *v, const cJSON *item)
{
	check_weight(v, item);
	size_t mark = tp__podv_push(v, ".podAffinityTerm");
	pod_term(v, tp__mobj(item, "podAffinityTerm"));
	tp__podv_pop(v, mark);
}

static void pod_affinity(tp_podv *v, const cJSON *pa)
{
	each(v, tp_member(pa, "requiredDuringSchedulingIgnoredDuringExecution"),
	     ".requiredDuringSchedulingIgnoredDuringExecution", pod_term);
	each(v, tp_member(pa, "preferredDuringSchedulingIgnoredDuringExecution"),
	     ".preferredDuringSchedulingIgnoredDuringExecution", weighted_pod_term);
}

static void check_affinity(tp_podv *v, const cJSON *aff)
{
	static const char *const kinds[] = { "nodeAffinity", "podAffinity", "podAntiAffinity" };
	if (!aff)
		return;
	size_t mark = tp__podv_push(v, ".affinity");
	for (int k = 0; k < 3; k++) {
		const cJSON *a = tp__mobj(aff, kinds[k]);
		if (!a)
			continue;
		size_t inner = tp__podv_push_member(v, kinds[k]);
		if (k == 0)
			node_affinity(v, a);
		else
			pod_affinity(v, a);
		tp__podv_pop(v, inner);
	}
	tp__podv_pop(v, mark);
}

/* ------------------------------------------------- topology spreading */

static void node_policy(tp_podv *v, const cJSON *c, const char *member)
{
	const cJSON *p = tp_member(c, member);
	if (!cJSON_IsString(p) || !strcmp(p->valuestring, "Honor") ||
	    !strcmp(p->valuestring, "Ignore"))
		return;
	tp__podv_add(v, TP_FIELD_UNSUPPORTED, tp__podv_printf(v, ".%s", member),
		     tp__podv_quote(v, p->valuestring), NULL, "supported values: \"Honor\", \"Ignore\"");
}

static void min_domains(tp_podv *v, const cJSON *c, const char *action)
{
	const cJSON *m = tp_member(c, "minDomains");
	long long n;
	if (!m || !tp_json_is_int(m, &n))
		return;
	if (n <= 0)
		tp__podv_add(v, TP_FIELD_INVALID, ".minDomains", tp__podv_int(v, n),
			     "use 1 or more, or drop minDomains", NOT_POSITIVE);
	if (strcmp(action, "DoNotSchedule"))
		tp__podv_add(v, TP_FIELD_INVALID, ".minDomains", tp__podv_int(v, n),
			     "use whenUnsatisfiable DoNotSchedule with minDomains",
			     "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not %s",
			     action);
}

/* validateMatchLabelKeysInTopologySpread. */
static void spread_label_keys(tp_podv *v, const cJSON *c)
{
	const cJSON *keys = tp__marr(c, "matchLabelKeys");
	const cJSON *sel = tp__mobj(c, "labelSelector");
	if (!count(keys))
		return;
	tp_nameset in_sel;
	tp__nameset_init(&in_sel, v->arena);
	if (sel)
		selector_keys(sel, &in_sel, v);
	else
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".matchLabelKeys", NULL,
			     "give a labelSelector, or drop matchLabelKeys", NO_SELECTOR);
	int i = 0;
	for (const cJSON *k = keys->child; k; k = k->next, i++) {
		size_t mark = tp__podv_push_index(v, ".matchLabelKeys", i);
		label_name(v, NULL, str_of(k), LABEL_HINT);
		if (tp__nameset_has(&in_sel, str_of(k)))
			tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, str_of(k)),
				     "drop the key from matchLabelKeys or from the labelSelector",
				     "exists in both matchLabelKeys and labelSelector");
		tp__podv_pop(v, mark);
	}
}

static const char *spread_pair(tp_podv *v, const cJSON *c)
{
	const char *key = tp__mstr(c, "topologyKey"), *action = tp__mstr(c, "whenUnsatisfiable");
	return tp__podv_printf(v, "%s\x1f%s", key ? key : "", action ? action : "");
}

static void spread_constraint(tp_podv *v, const cJSON *c, bool repeated)
{
	long long skew = 0;
	tp__mint(c, "maxSkew", &skew);
	if (skew <= 0)
		tp__podv_add(v, TP_FIELD_INVALID, ".maxSkew", tp__podv_int(v, skew),
			     "use a maxSkew of 1 or more", NOT_POSITIVE);
	const char *key = tp__mstr(c, "topologyKey");
	if (!key || !*key)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".topologyKey", NULL,
			     "name the node label to spread over (\"topology.kubernetes.io/zone\")",
			     "can not be empty");
	const char *action = tp__mstr(c, "whenUnsatisfiable");
	if (!str_is(action, "DoNotSchedule") && !str_is(action, "ScheduleAnyway"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".whenUnsatisfiable",
			     tp__podv_quote(v, action ? action : ""), NULL,
			     "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
	if (repeated)
		tp__podv_add(v, TP_FIELD_DUPLICATE, ".{topologyKey, whenUnsatisfiable}",
			     tp__podv_quote(v, tp__podv_printf(v, "{%s, %s}", key ? key : "",
							      action ? action : "")),
			     "merge the constraints with this topologyKey and whenUnsatisfiable",
			     "%s", "");
	min_domains(v, c, action ? action : "");
	node_policy(v, c, "nodeAffinityPolicy");
	node_policy(v, c, "nodeTaintsPolicy");
	spread_label_keys(v, c);
	label_selector(v, tp__mobj(c, "labelSelector"), ".labelSelector");
}

static void check_spread(tp_podv *v, const cJSON *list)
{
	int n = count(list);
	if (!n)
		return;
	/* a constraint repeats when a later one has its pair: found from the
	 * end, one set lookup each */
	bool *repeated = tp_arena_alloc(v->arena, (size_t)n * sizeof(*repeated));
	const cJSON **items = tp_arena_alloc(v->arena, (size_t)n * sizeof(*items));
	if (!repeated || !items) {
		v->rc = TP_ENOMEM;
		return;
	}
	int i = 0;
	for (const cJSON *c = list->child; c; c = c->next)
		items[i++] = c;
	tp_nameset later;
	tp__nameset_init(&later, v->arena);
	for (i = n - 1; i >= 0; i--) {
		const char *pair = spread_pair(v, items[i]);
		repeated[i] = pair && tp__nameset_has(&later, pair);
		if (pair && tp__nameset_add(&later, pair))
			v->rc = TP_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		size_t mark = tp__podv_push_index(v, ".topologySpreadConstraints", i);
		spread_constraint(v, items[i], repeated[i]);
		tp__podv_pop(v, mark);
	}
}

/* ------------------------------------------------------------- the rest */

/* validateSchedulingGates: qualified names, each once. */
static void check_scheduling_gates(tp_podv *v, const cJSON *list)
{
	tp_nameset seen;
	tp__nameset_init(&seen, v->arena);
	int i = 0;
	for (const cJSON *g = cJSON_IsArray(list) ? list->child : NULL; g; g = g->next, i++) {
		const char *name = tp__mstr(g, "name");
		if (!name)
			name = "";
		size_t mark = tp__podv_push_index(v, ".schedulingGates", i);
		label_name(v, NULL, name, "name the gate with a qualified name (\"example.com/quota\")");
		if (tp__nameset_has(&seen, name))
			tp__podv_add(v, TP_FIELD_DUPLICATE, NULL, tp__podv_quote(v, name),
				     "list each scheduling gate once", "%s", "");
		else if (tp__nameset_add(&seen, name))
			v->rc = TP_ENOMEM;
		tp__podv_pop(v, mark);
	}
}

int tp__pod_check_affinity(tp_podv *v, const tp_pod_sm *spec)
{
	check_affinity(v, tp__vobj(spec->affinity));
	return v->rc;
}

int tp__pod_check_scheduling(tp_podv *v, const tp_pod_sm *spec)
{
	check_scheduling_gates(v, spec->scheduling_gates);
	check_spread(v, spec->topology_spread_constraints);
	return v->rc;
}

int tp__pod_check_preemption(tp_podv *v, const tp_pod_sm *spec)
{
	const cJSON *p = spec->preemption_policy;
	if (!cJSON_IsString(p))
		return v->rc;
	if (!*p->valuestring)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".preemptionPolicy", NULL,
			     "use PreemptLowerPriority or Never, or drop preemptionPolicy", "%s", "");
	else if (strcmp(p->valuestring, "PreemptLowerPriority") && strcmp(p->valuestring, "Never"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".preemptionPolicy",
			     tp__podv_quote(v, p->valuestring), NULL,
			     "supported values: \"PreemptLowerPriority\", \"Never\"");
	return v->rc;
}

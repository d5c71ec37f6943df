/*
 * schema/rules.c — x-kubernetes-validations, as apiextensions' CEL validator
 * runs them: pre-order over the object, each node's rules with self (and
 * oldSelf where the old object correlates: same property, same map key, the
 * list-map item with the same keys), in the words of its messages:
 *   - a false rule: Invalid (or the rule's reason) at the node (plus
 *     fieldPath) with message, messageExpression or "failed rule: <rule>",
 *     showing the schema's type name ("string", "object") as the value;
 *   - an evaluation error: "<error> evaluating rule: <rule>", the overload
 *     and cost-limit errors with their longer sentences;
 *   - the object's cost budget spent: no further rule runs.
 * Ratcheting (UPDATE): a rule without oldSelf that fails on a value equal to
 * its old value warns instead of denying, as the API server's ratcheting does.
 * A rule this interpreter cannot run gives a warning naming it, never a pass.
 */
#include "policy/core/deadline.h"
#include "policy/core/index.h"
#include "policy/schema/schema.h"

#include <stdio.h>
#include <string.h>

typedef struct rules_walk {
	tp_sch_walk *w;
	tp_arena *a;     /* the temporaries of one rule evaluation */
	tp_cel_budget *budget;
	bool stopped;    /* the budget ran out: nothing more runs */
	bool reset;      /* a is ours: reset after each rule */
} rules_walk;

static const char *rule_text(tp_arena *a, const tp_sch_rule *r)
{
	const char *s = r->message && *r->message ? r->message : r->rule;
	size_t off, len;
	tp__go_trim_space(s, strlen(s), &off, &len);
	return tp_arena_strndup(a, s + off, len);
}

/* The schema's type name, the value apiextensions shows for rule errors. */
static const char *type_value(tp_result *res, const tp_sch *s)
{
	return tp_result_quote(res, s->type_name);
}

static void add(rules_walk *rw, bool ratchet, tp_field_type type, const char *path,
		const char *value, const char *detail)
{
	tp_sch_walk *w = rw->w;
	if (!ratchet) {
		w->rc |= tp_result_add(w->res, type, path, value, "%s", detail);
		return;
	}
	/* The text the error would have had, as a warning. */
	tp_result *tmp = NULL;
	tp_buf b = TP_BUF_INIT(1 << 16);
	if (!tp_result_new(&tmp) && !tp_result_add(tmp, type, path, value, "%s", detail) &&
	    !tp_field_error_format(tp_result_error_at(tmp, 0), &b))
		w->rc |= tp_result_warn_at(w->res, path, "%s", b.data);
	tp_buf_free(&b);
	tp_result_free(tmp);
}

/* "spec.x" + fieldPath ".a.b" -> "spec.x.a.b" (fieldPath is relative). */
static const char *rule_path(tp_arena *a, const char *base, const tp_sch_rule *r)
{
	if (!r->field_path || !*r->field_path)
		return base;
	const char *fp = r->field_path + (r->field_path[0] == '.');
	if (!*base)
		return fp;
	return tp_arena_printf(a, "%s%s%s", base, fp[0] == '[' ? "" : ".", fp);
}

/* The detail of a false rule: messageExpression when it gives a usable
 * string, else the message, else "failed rule: <rule>". */
static const char *false_detail(rules_walk *rw, const tp_sch_rule *r, const tp_sch *s,
				const cJSON *v, const cJSON *old)
{
	if (r->message_expr) {
		tp_cel_val m;
		long long cost = 0;
		if (!tp__cel_eval(r->message_expr, rw->a, v, old, s, rw->budget->per_call, &cost, &m) &&
		    m.kind == TP_CEL_STRING) {
			size_t off, len;
			tp__go_trim_space(m.s, m.n, &off, &len);
			rw->budget->remaining -= cost;
			if (len && !memchr(m.s + off, '\n', len))
				return tp_arena_strndup(rw->a, m.s + off, len);
		}
	}
	if (r->message && *r->message)
		return rule_text(rw->a, r);
	return tp_arena_printf(rw->a, "failed rule: %s", rule_text(rw->a, r));
}

static void rule_failed(rules_walk *rw, const tp_sch_rule *r, const tp_sch *s, const cJSON *v,
			const cJSON *old, bool ratchet)
{
	tp_sch_walk *w = rw->w;
	const char *base = tp__sch_path(w);
	const char *path = rule_path(rw->a, base, r);
	const char *detail = false_detail(rw, r, s, v, old);
	/* fieldErrorForReason(fldPath, sts.Type, ...): the schema's type name,
	 * never the value ("spec.managedBy: Invalid value: \"string\": ...") */
	const char *value = type_value(w->res, s);
	switch (r->reason) {
	case TP_FIELD_FORBIDDEN:
	case TP_FIELD_REQUIRED:
		add(rw, ratchet, r->reason, path, NULL, detail);
		break;
	case TP_FIELD_DUPLICATE:
		add(rw, ratchet, r->reason, path, value, "");
		break;
	default:
		add(rw, ratchet, TP_FIELD_INVALID, path, value, detail);
	}
}

static void rule_error(rules_walk *rw, const tp_sch_rule *r, const tp_sch *s, const char *err,
		       bool ratchet)
{
	tp_sch_walk *w = rw->w;
	const char *path = tp__sch_path(w);
	const char *text = rule_text(rw->a, r), *detail;
	if (!strncmp(err, "no such overload", 16))
		detail = tp_arena_printf(rw->a, "'%s': call arguments did not match a supported operator, "
					 "function or macro signature for rule: %s", err, text);
	else
		detail = tp_arena_printf(rw->a, "%s evaluating rule: %s", err, text);
	add(rw, ratchet, TP_FIELD_INVALID, path, type_value(w->res, s), detail);
}

static void run_rule(rules_walk *rw, const tp_sch_rule *r, const tp_sch *s, const cJSON *v,
		     const cJSON *old)
{
	tp_sch_walk *w = rw->w;
	/* the path is written out only for a finding: most rules pass */
	if (!r->expr) {
		const char *path = tp__sch_path(w);
		w->rc |= tp_result_warn_at(w->res, path, "%s: the x-kubernetes-validations rule %s was not "
					"checked (%s)", *path ? path : "<root>", r->rule ? r->rule : "",
					r->unsupported ? r->unsupported : "no rule");
		return;
	}
	if (r->transition && !old && !r->optional_old_self)
		return; /* transition rules need an old value to compare */
	if (rw->budget->remaining <= 0) {
		w->rc |= tp_result_add(w->res, TP_FIELD_INVALID, tp__sch_path(w), type_value(w->res, s), "%s",
				       "validation failed due to running out of cost budget, no further "
				       "validation rules will be run");
		rw->stopped = true;
		return;
	}
	tp_cel_val out;
	long long cost = 0;
	int rc = tp__cel_eval(r->expr, rw->a, v, r->transition || r->optional_old_self ? old : NULL, s,
			     rw->budget->per_call, &cost, &out);
	bool ratchet = !r->transition && old && tp_json_equal(v, old);
	if (rc == TP_ELIMIT) {
		w->rc |= tp_result_add(w->res, TP_FIELD_INVALID, tp__sch_path(w), type_value(w->res, s),
				       "'operation cancelled: actual cost limit exceeded': no further "
				       "validation rules will be run due to call cost exceeds limit for "
				       "rule: %s", rule_text(rw->a, r));
		rw->stopped = true;
		return;
	}
	if (cost > rw->budget->remaining) {
		w->rc |= tp_result_add(w->res, TP_FIELD_INVALID, tp__sch_path(w), type_value(w->res, s), "%s",
				       "validation failed due to running out of cost budget, no further "
				       "validation rules will be run");
		rw->stopped = true;
		return;
	}
	rw->budget->remaining -= cost;
	if (out.kind == TP_CEL_BOOL && out.b)
		return;
	if (out.kind == TP_CEL_ERROR)
		rule_error(rw, r, s, out.s, ratchet);
	else if (out.kind != TP_CEL_BOOL)
		rule_error(rw, r, s, "no such overload", ratchet);
	else
		rule_failed(rw, r, s, v, old, ratchet);
}

/* A list-map item's keys, hashed (absent ones too). */
static uint64_t keys_hash(const tp_sch *s, const cJSON *item)
{
	uint64_t h = 0;
	for (size_t k = 0; k < s->nmap_keys; k++) {
		const cJSON *f = tp_member(item, s->map_keys[k]);
		h = h * 31 + (f ? tp__hash_json(f) : 0x9e3779b97f4a7c15ull);
	}
	return h;
}

static bool same_keys(const tp_sch *s, const cJSON *a, const cJSON *b)
{
	for (size_t k = 0; k < s->nmap_keys; k++) {
		const cJSON *x = tp_member(a, s->map_keys[k]), *y = tp_member(b, s->map_keys[k]);
		if ((x == NULL) != (y == NULL) || (x && !tp_json_equal(x, y)))
			return false;
	}
	return true;
}

/* The old list-map's object items by their keys, filed once a list (a
 * scan of the old list for each item made an update of n items O(n^2)).
 * Nothing is filed for other lists: no item of theirs has an old self. */
static int file_old_items(const tp_sch *s, const cJSON *old_list, tp_htab *t)
{
	if (s->list_type != TP_LIST_MAP || !cJSON_IsArray(old_list))
		return TP_OK;
	int rc = tp__htab_reserve(t, (size_t)cJSON_GetArraySize(old_list));
	for (const cJSON *o = old_list->child; o && !rc; o = o->next)
		if (cJSON_IsObject(o))
			rc = tp__htab_put(t, keys_hash(s, o), o);
	return rc;
}

/* The old item with the keys of item, the first one, or NULL. */
static const cJSON *old_item(const tp_sch *s, const tp_htab *t, const cJSON *item)
{
	if (!t->count || !cJSON_IsObject(item))
		return NULL;
	size_t pos = 0;
	uint64_t h = keys_hash(s, item);
	for (const cJSON *o; (o = tp__htab_next(t, h, &pos));)
		if (same_keys(s, item, o))
			return o;
	return NULL;
}

/* The schema of member name of an object with schema s when rules lie
 * under it, else NULL; *key when it is additionalProperties' (a map key,
 * "[name]" in paths). Only the few properties with rules are compared,
 * unless the map's values have rules: a lookup among all of them for
 * every member walked cost 1,400 instructions a TrainJob review. */
static const tp_sch *member_with_rules(const tp_sch *s, const char *name, bool *key)
{
	*key = false;
	if (s->additional && s->additional->rules_below) {
		const tp_sch *p = tp__sch_prop(s, name);
		*key = !p;
		p = p ? p : s->additional;
		return p->rules_below ? p : NULL;
	}
	for (size_t i = 0; i < s->nrule_props; i++)
		if (s->rule_props[i].name[0] == name[0] && !strcmp(s->rule_props[i].name, name))
			return s->rule_props[i].schema;
	return NULL;
}

static void walk(rules_walk *rw, const tp_sch *s, const cJSON *v, const cJSON *old)
{
	tp_sch_walk *w = rw->w;
	/* with no old value only the rules that run without one matter */
	if (!s || !(old ? s->rules_below : s->new_rules_below) || !v || cJSON_IsNull(v) ||
	    rw->stopped)
		return;
	for (size_t i = 0; i < s->nrules && !rw->stopped; i++) {
		run_rule(rw, &s->rules[i], s, v, old);
		if (rw->reset)
			tp_arena_reset(rw->a);
	}
	for (size_t i = 0; i < s->nall_of && !rw->stopped; i++)
		walk(rw, s->all_of[i], v, old);
	if (cJSON_IsArray(v)) {
		long i = 0;
		tp_htab olds = TP_HTAB_INIT;
		if (old && s->items)
			w->rc |= file_old_items(s, old, &olds);
		/* no item has an old value (only a list-map's do): as for members */
		bool items = s->items && (olds.count || s->items->new_rules_below);
		for (const cJSON *it = v->child; it && items && !rw->stopped; it = it->next, i++) {
			size_t len = tp__sch_push_index(w, i);
			rw->stopped = tp__tick(1) != TP_OK; /* tp_validate answers TP_ETIMEDOUT */
			walk(rw, s->items, it, old_item(s, &olds, it));
			tp__sch_pop(w, len);
		}
		tp__htab_free(&olds);
		return;
	}
	if (!cJSON_IsObject(v))
		return;
	/* the old object's members by name: only on UPDATE, when there is one */
	tp_index old_members;
	bool has_old = cJSON_IsObject(old);
	if (has_old)
		w->rc |= tp__index_members(&old_members, old);
	for (const cJSON *m = v->child; m && !rw->stopped; m = m->next) {
		bool key;
		const tp_sch *p = member_with_rules(s, m->string, &key);
		if (!p || tp__sch_skipped(w, m->string))
			continue;
		const cJSON *om = has_old ? tp__index_member(&old_members, m->string) : NULL;
		if (!om && !p->new_rules_below)
			continue; /* only rules on oldSelf below, and no old value */
		size_t len = key ? tp__sch_push_key(w, m->string) : tp__sch_push_name(w, m->string);
		walk(rw, p, m, om);
		tp__sch_pop(w, len);
	}
	if (has_old)
		tp__index_free(&old_members);
}

void tp__sch_rules(tp_sch_walk *w, const tp_sch *s, const cJSON *v, const cJSON *old,
		   tp_cel_budget *budget)
{
	/* temporaries in the request's arena when there is one (freed with it) */
	rules_walk rw = { .w = w, .budget = budget, .a = tp_arena_current() };
	tp_arena *own = NULL;
	if (!rw.a && tp_arena_new(&own, 16 << 20)) {
		w->rc |= TP_ENOMEM;
		return;
	}
	if (own)
		rw.a = own;
	rw.reset = own != NULL;
	walk(&rw, s, v, old);
	tp_arena_free(own);
}

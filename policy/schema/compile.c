/*
 * schema/compile.c — CustomResourceDefinitions into tp_sch trees (tp_crds).
 *
 * Each served version's openAPIV3Schema is compiled once: the keywords
 * validation reads are lifted out of the JSON (descriptions are not kept),
 * properties sorted for binary search, patterns and CEL rules compiled.
 * enum and default values are copied into the set's arena, so the CRD object
 * itself can be freed as soon as tp_crds_add returns.
 */
#include "policy/schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CRDS_ARENA_LIMIT ((size_t)512 << 20)

typedef struct comp {
	tp_crds *c;
	char *why;
	size_t whylen;
	int rc;
} comp;

static int comp_fail(comp *k, int rc, const char *fmt, ...) TP_PRINTF(3, 4);
static int comp_fail(comp *k, int rc, const char *fmt, ...)
{
	if (!k->rc && k->why && k->whylen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(k->why, k->whylen, fmt, ap);
		va_end(ap);
	}
	if (!k->rc)
		k->rc = rc;
	return rc;
}

static const char *dup_str(comp *k, const cJSON *v)
{
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
	char *d = s ? tp_arena_strdup(k->c->arena, s) : NULL;
	if (s && !d)
		comp_fail(k, TP_ENOMEM, "out of memory");
	return d;
}

static long long int_or(const cJSON *obj, const char *name, long long dflt)
{
	long long v;
	return tp_json_is_int(cJSON_GetObjectItemCaseSensitive(obj, name), &v) ? v : dflt;
}

static bool flag(const cJSON *obj, const char *name)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, name));
}

static unsigned type_bits(const char *t)
{
	static const struct { const char *n; unsigned b; } types[] = {
		{ "object", TP_SCH_OBJECT }, { "array", TP_SCH_ARRAY }, { "string", TP_SCH_STRING },
		{ "integer", TP_SCH_INTEGER }, { "number", TP_SCH_NUMBER }, { "boolean", TP_SCH_BOOLEAN },
	};
	for (size_t i = 0; t && i < sizeof(types) / sizeof(*types); i++)
		if (!strcmp(t, types[i].n))
			return types[i].b;
	return 0;
}

/* The compiled pattern for text, shared by every schema node that writes
 * the same one (CRDs repeat the quantity pattern a hundred times). */
static tp_regex *pattern_of(comp *k, const char *text)
{
	tp_crds *c = k->c;
	for (size_t i = 0; i < c->regexes_n; i++)
		if (!strcmp(c->regex_texts[i], text))
			return c->regexes[i];
	if (c->regexes_n == c->regexes_cap) {
		size_t cap = c->regexes_cap ? c->regexes_cap * 2 : 64;
		tp_regex **v = realloc(c->regexes, cap * sizeof(*v));
		if (v)
			c->regexes = v;
		const char **t = v ? realloc(c->regex_texts, cap * sizeof(*t)) : NULL;
		if (!t) {
			comp_fail(k, TP_ENOMEM, "out of memory");
			return NULL;
		}
		c->regex_texts = t;
		c->regexes_cap = cap;
	}
	char why[256];
	tp_regex *re = NULL;
	if (tp__regex_compile(text, &re, why, sizeof(why))) {
		comp_fail(k, TP_EINVAL, "pattern %s: %s", text, why);
		return NULL;
	}
	c->regexes[c->regexes_n] = re;
	c->regex_texts[c->regexes_n++] = tp_arena_strdup(c->arena, text);
	return re;
}

/* CEL trees hold compiled regular expressions outside the arena: each is
 * listed as soon as it is parsed, released with the set. */
static int keep_expr(comp *k, tp_cel_expr *e)
{
	tp_crds *c = k->c;
	if (c->exprs_n == c->exprs_cap) {
		size_t cap = c->exprs_cap ? c->exprs_cap * 2 : 64;
		tp_cel_expr **v = realloc(c->exprs, cap * sizeof(*v));
		if (!v) {
			tp__cel_release(e);
			return comp_fail(k, TP_ENOMEM, "out of memory");
		}
		c->exprs = v;
		c->exprs_cap = cap;
	}
	c->exprs[c->exprs_n++] = e;
	return TP_OK;
}

static tp_sch *compile_node(comp *k, const cJSON *j, int depth);
static tp_sch *compile_fresh(comp *k, const cJSON *j, int depth);

static int by_name(const void *a, const void *b)
{
	return strcmp(((const tp_sch_prop *)a)->name, ((const tp_sch_prop *)b)->name);
}

/* The first-byte index of the sorted props (cel/sch.h's tp__sch_prop_at):
 * lead[i] is the first prop whose first byte is lead_lo + i or more. */
static int index_lead(comp *k, tp_sch *s)
{
	if (s->nprops <= TP_SCH_SCAN_MAX || s->nprops > UINT32_MAX)
		return TP_OK;
	unsigned lo = (unsigned char)s->props[0].name[0];
	unsigned n = (unsigned char)s->props[s->nprops - 1].name[0] - lo + 1;
	if (!(s->lead = tp_arena_alloc(k->c->arena, (n + 1) * sizeof(*s->lead))))
		return TP_ENOMEM;
	size_t p = 0;
	for (unsigned i = 0; i <= n; i++) {
		while (p < s->nprops && (unsigned char)s->props[p].name[0] < lo + i)
			p++;
		s->lead[i] = (uint32_t)p;
	}
	s->lead_lo = lo;
	s->lead_n = n;
	return TP_OK;
}

/* The required names' props and bits (cel/sch.h), when each is a distinct
 * property and there are at most 64 of them. */
static int required_bits(comp *k, tp_sch *s)
{
	if (!s->nrequired || s->nrequired > 64)
		return TP_OK;
	const tp_sch_prop **rp = tp_arena_alloc(k->c->arena, s->nrequired * sizeof(*rp));
	if (!rp)
		return TP_ENOMEM;
	for (size_t i = 0; i < s->nrequired; i++) {
		rp[i] = tp__sch_prop_at(s, s->required[i]);
		if (!rp[i] || rp[i]->req_bit)
			goto by_name;
		((tp_sch_prop *)rp[i])->req_bit = (uint64_t)1 << i;
	}
	s->required_props = rp;
	return TP_OK;
by_name:
	for (size_t i = 0; i < s->nprops; i++)
		s->props[i].req_bit = 0;
	return TP_OK;
}

static void compile_props(comp *k, tp_sch *s, const cJSON *props, int depth)
{
	size_t n = (size_t)cJSON_GetArraySize(props);
	s->props = tp_arena_alloc(k->c->arena, (n ? n : 1) * sizeof(*s->props));
	if (!s->props) {
		comp_fail(k, TP_ENOMEM, "out of memory");
		return;
	}
	for (const cJSON *p = props->child; p && !k->rc; p = p->next) {
		tp_sch_prop *pr = &s->props[s->nprops++];
		pr->req_bit = 0; /* required_bits sets it */
		pr->name = tp_arena_strdup(k->c->arena, p->string);
		pr->schema = compile_node(k, p, depth + 1);
	}
	qsort(s->props, s->nprops, sizeof(*s->props), by_name);
	for (size_t i = 0; i < s->nprops; i++)
		s->props[i].len = strlen(s->props[i].name);
	if (index_lead(k, s))
		comp_fail(k, TP_ENOMEM, "out of memory");
}

static tp_sch **compile_list(comp *k, const cJSON *arr, size_t *n, int depth)
{
	*n = (size_t)cJSON_GetArraySize(arr);
	if (!*n)
		return NULL;
	tp_sch **v = tp_arena_alloc(k->c->arena, *n * sizeof(*v));
	if (!v) {
		comp_fail(k, TP_ENOMEM, "out of memory");
		return NULL;
	}
	size_t i = 0;
	for (const cJSON *it = arr->child; it && !k->rc; it = it->next)
		v[i++] = compile_node(k, it, depth + 1);
	return v;
}

static const char **string_list(comp *k, const cJSON *arr, size_t *n)
{
	*n = 0;
	if (!cJSON_IsArray(arr) || !arr->child)
		return NULL;
	const char **v = tp_arena_alloc(k->c->arena, (size_t)cJSON_GetArraySize(arr) * sizeof(*v));
	if (!v) {
		comp_fail(k, TP_ENOMEM, "out of memory");
		return NULL;
	}
	for (const cJSON *it = arr->child; it; it = it->next)
		if (cJSON_IsString(it))
			v[(*n)++] = dup_str(k, it);
	return v;
}

static tp_field_type rule_reason(const char *r)
{
	if (!r)
		return TP_FIELD_INVALID;
	if (!strcmp(r, "FieldValueForbidden"))
		return TP_FIELD_FORBIDDEN;
	if (!strcmp(r, "FieldValueRequired"))
		return TP_FIELD_REQUIRED;
	if (!strcmp(r, "FieldValueDuplicate"))
		return TP_FIELD_DUPLICATE;
	return TP_FIELD_INVALID;
}

/* One x-kubernetes-validations entry; a rule we cannot run keeps its reason. */
static void compile_rule(comp *k, tp_sch_rule *r, const cJSON *j)
{
	char why[256] = "";
	r->rule = dup_str(k, cJSON_GetObjectItemCaseSensitive(j, "rule"));
	r->message = dup_str(k, cJSON_GetObjectItemCaseSensitive(j, "message"));
	r->field_path = dup_str(k, cJSON_GetObjectItemCaseSensitive(j, "fieldPath"));
	r->reason = rule_reason(tp_get_str(j, "reason"));
	r->optional_old_self = flag(j, "optionalOldSelf");
	k->c->rules++;
	if (!r->rule)
		return;
	int rc = tp__cel_parse(k->c->arena, r->rule, &r->expr, why, sizeof(why));
	if (rc == TP_ENOMEM) {
		comp_fail(k, rc, "out of memory");
		return;
	}
	if (rc) {
		r->expr = NULL;
		r->unsupported = tp_arena_strdup(k->c->arena, why);
		k->c->rules_unsupported++;
		return;
	}
	keep_expr(k, r->expr);
	r->transition = tp__cel_uses(r->expr, "oldSelf");
	const char *mx = tp_get_str(j, "messageExpression");
	if (mx && tp__cel_parse(k->c->arena, mx, &r->message_expr, why, sizeof(why)))
		r->message_expr = NULL; /* the static message (or the default) stands */
	else if (mx)
		keep_expr(k, r->message_expr);
}

static void compile_rules(comp *k, tp_sch *s, const cJSON *rules)
{
	size_t n = (size_t)cJSON_GetArraySize(rules);
	if (!n)
		return;
	if (!(s->rules = tp_arena_alloc(k->c->arena, n * sizeof(*s->rules)))) {
		comp_fail(k, TP_ENOMEM, "out of memory");
		return;
	}
	memset(s->rules, 0, n * sizeof(*s->rules));
	for (const cJSON *r = rules->child; r && !k->rc; r = r->next)
		compile_rule(k, &s->rules[s->nrules++], r);
}

static void compile_value_checks(comp *k, tp_sch *s, const cJSON *j)
{
	const cJSON *v;
	s->min_len = int_or(j, "minLength", -1);
	s->max_len = int_or(j, "maxLength", -1);
	s->min_items = int_or(j, "minItems", -1);
	s->max_items = int_or(j, "maxItems", -1);
	s->min_props = int_or(j, "minProperties", -1);
	s->max_props = int_or(j, "maxProperties", -1);
	s->unique = flag(j, "uniqueItems");
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "minimum")))
		s->has_min = true, s->min = v->valuedouble;
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "maximum")))
		s->has_max = true, s->max = v->valuedouble;
	s->excl_min = flag(j, "exclusiveMinimum");
	s->excl_max = flag(j, "exclusiveMaximum");
	if (cJSON_IsArray(v = cJSON_GetObjectItemCaseSensitive(j, "enum")))
		s->enum_values = cJSON_Duplicate(v, true);
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "default"))) {
		s->default_value = cJSON_Duplicate(v, true);
	}
	const char *pat = tp_get_str(j, "pattern");
	if (pat) {
		s->pattern_text = tp_arena_strdup(k->c->arena, pat);
		s->pattern = pattern_of(k, pat);
		s->quantity = tp__sch_is_quantity_pattern(pat);
	}
}

static void below_from(tp_sch *s, const tp_sch *child)
{
	if (child) {
		s->rules_below |= child->rules_below;
		s->new_rules_below |= child->new_rules_below;
		s->lists_below |= child->lists_below;
	}
}

/* Whether rules.c runs r with no old value: a transition rule (oldSelf,
 * not optional) is skipped without one; a rule we cannot run warns. */
static bool runs_without_old(const tp_sch_rule *r)
{
	return !r->expr || !r->transition || r->optional_old_self;
}

/* Which walks need to go under this node (the CEL and list-type walks skip
 * the subtrees that hold nothing for them). */
static void mark_below(comp *k, tp_sch *s)
{
	s->rules_below = s->nrules > 0;
	for (size_t i = 0; i < s->nrules; i++)
		s->new_rules_below |= runs_without_old(&s->rules[i]);
	s->lists_below = s->list_type != TP_LIST_ATOMIC;
	size_t with_rules = 0;
	for (size_t i = 0; i < s->nprops; i++) {
		below_from(s, s->props[i].schema);
		with_rules += s->props[i].schema->rules_below;
	}
	below_from(s, s->additional);
	below_from(s, s->items);
	for (size_t i = 0; i < s->nall_of; i++)
		below_from(s, s->all_of[i]);
	if (!with_rules)
		return;
	s->rule_props = tp_arena_alloc(k->c->arena, with_rules * sizeof(*s->rule_props));
	if (!s->rule_props) {
		comp_fail(k, TP_ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < s->nprops; i++)
		if (s->props[i].schema->rules_below)
			s->rule_props[s->nrule_props++] = s->props[i];
}

static tp_sch *compile_node(comp *k, const cJSON *j, int depth)
{
	if (!cJSON_IsObject(j)) {
		comp_fail(k, TP_EINVAL, "a schema is not an object");
		return NULL;
	}
	if (depth > TP_SCH_MAX_DEPTH) {
		comp_fail(k, TP_ELIMIT, "schema nested deeper than %d", TP_SCH_MAX_DEPTH);
		return NULL;
	}
	tp_sch_memo_key key;
	tp__sch_memo_key(j, &key);
	const tp_sch *same = tp__sch_memo_get(k->c, &key, depth);
	if (same)
		return (tp_sch *)same; /* read-only from here on, like every compiled node */
	size_t rules = k->c->rules, unsupported = k->c->rules_unsupported;
	tp_sch *s = compile_fresh(k, j, depth);
	if (s && tp__sch_memo_put(k->c, &key, s, k->c->rules - rules,
				  k->c->rules_unsupported - unsupported))
		comp_fail(k, TP_ENOMEM, "out of memory");
	return k->rc ? NULL : s;
}

/* apiextensions keeps only these formats (stripUnsupportedFormatsPostProcess,
 * its supportedFormats): int32, int64, float and double are dropped before
 * kube-openapi sees the schema, so "integer, format: int32" checks as
 * "integer" (1.5 is 'must be of type integer: "number"'; 3000000000 passes).
 * Decided here once, not at every value checked (a strcmp per kept format
 * per node before). */
static const char *checked_format(const char *format)
{
	static const char *const kept[] = {
		"bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
		"uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn",
		"hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime",
		"date-time",
	};
	for (size_t i = 0; *format && i < sizeof(kept) / sizeof(*kept); i++)
		if (!strcmp(format, kept[i]))
			return format;
	return "";
}

/* A node compiled from its JSON (compile_node looks for a copy first). */
static tp_sch *compile_fresh(comp *k, const cJSON *j, int depth)
{
	tp_sch *s = tp_arena_alloc(k->c->arena, sizeof(*s));
	if (!s) {
		comp_fail(k, TP_ENOMEM, "out of memory");
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	const char *type = tp_get_str(j, "type");
	s->type_name = type ? tp_arena_strdup(k->c->arena, type) : "";
	s->types = type_bits(type);
	s->format = tp_get_str(j, "format") ? dup_str(k, cJSON_GetObjectItemCaseSensitive(j, "format")) : "";
	s->checked_format = checked_format(s->format);
	s->date_time = !strcmp(s->format, "date-time") || !strcmp(s->format, "datetime");
	s->int32 = (s->types & TP_SCH_INTEGER) && !strcmp(s->format, "int32");
	s->nullable = flag(j, "nullable");
	s->int_or_string = flag(j, "x-kubernetes-int-or-string");
	s->preserve_unknown = flag(j, "x-kubernetes-preserve-unknown-fields");
	s->embedded = flag(j, "x-kubernetes-embedded-resource");
	compile_value_checks(k, s, j);

	const cJSON *v;
	if (cJSON_IsObject(v = cJSON_GetObjectItemCaseSensitive(j, "properties")))
		compile_props(k, s, v, depth);
	if (cJSON_IsObject(v = cJSON_GetObjectItemCaseSensitive(j, "additionalProperties")) && !k->rc) {
		s->additional = compile_node(k, v, depth + 1);
	}
	if (cJSON_IsObject(v = cJSON_GetObjectItemCaseSensitive(j, "items")) && !k->rc) {
		s->items = compile_node(k, v, depth + 1);
	}
	s->required = string_list(k, cJSON_GetObjectItemCaseSensitive(j, "required"), &s->nrequired);
	if (!k->rc && required_bits(k, s))
		comp_fail(k, TP_ENOMEM, "out of memory");
	const char *lt = tp_get_str(j, "x-kubernetes-list-type");
	s->list_type = !lt ? TP_LIST_ATOMIC : !strcmp(lt, "set") ? TP_LIST_SET
		     : !strcmp(lt, "map") ? TP_LIST_MAP : TP_LIST_ATOMIC;
	s->map_keys = string_list(k, cJSON_GetObjectItemCaseSensitive(j, "x-kubernetes-list-map-keys"),
				  &s->nmap_keys);
	s->all_of = compile_list(k, cJSON_GetObjectItemCaseSensitive(j, "allOf"), &s->nall_of, depth);
	s->any_of = compile_list(k, cJSON_GetObjectItemCaseSensitive(j, "anyOf"), &s->nany_of, depth);
	s->one_of = compile_list(k, cJSON_GetObjectItemCaseSensitive(j, "oneOf"), &s->none_of, depth);
	if (cJSON_IsObject(v = cJSON_GetObjectItemCaseSensitive(j, "not")) && !k->rc)
		s->not_schema = compile_node(k, v, depth + 1);
	if (cJSON_IsArray(v = cJSON_GetObjectItemCaseSensitive(j, "x-kubernetes-validations")))
		compile_rules(k, s, v);
	if (!k->rc)
		mark_below(k, s);
	s->type_ok = tp__sch_type_ok(s);
	s->checks = tp__sch_checks(s);
	s->pass_ok = tp__sch_pass_ok(s);
	return k->rc ? NULL : s;
}

/* ------------------------------------------------------------ the set */

int tp_crds_new(tp_crds **out)
{
	if (!out)
		return TP_EINVAL;
	tp_crds *c = calloc(1, sizeof(*c));
	if (!c || tp_arena_new(&c->arena, CRDS_ARENA_LIMIT)) {
		free(c);
		return TP_ENOMEM;
	}
	c->refs = 1;
	*out = c;
	return TP_OK;
}

static void crds_free(tp_crds *c)
{
	for (size_t i = 0; i < c->exprs_n; i++)
		tp__cel_release(c->exprs[i]);
	free(c->exprs);
	for (size_t i = 0; i < c->regexes_n; i++)
		tp__regex_free(c->regexes[i]);
	free(c->regexes);
	free(c->regex_texts);
	free(c->memo);
	free(c->v);
	tp_arena_free(c->arena);
	free(c);
}

tp_crds *tp_crds_ref(tp_crds *c)
{
	if (c)
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void tp_crds_unref(tp_crds *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		crds_free(c);
}

size_t tp_crds_count(const tp_crds *c)
{
	return c ? c->n : 0;
}

void tp_crds_rule_counts(const tp_crds *c, size_t *rules, size_t *unsupported)
{
	*rules = c ? c->rules : 0;
	*unsupported = c ? c->rules_unsupported : 0;
}

const tp_crd_version *tp__crds_find(const tp_crds *c, const char *group, const char *version,
				    const char *kind)
{
	for (size_t i = 0; c && i < c->n; i++) {
		const tp_crd_version *v = &c->v[i];
		if (!strcmp(v->group, group) && (!version || !strcmp(v->version, version)) &&
		    (!kind || !strcmp(v->kind, kind)))
			return v;
	}
	return NULL;
}

bool tp_crds_has_kind(const tp_crds *c, const char *group, const char *kind)
{
	return group && kind && tp__crds_find(c, group, NULL, kind) != NULL;
}

static int add_version(comp *k, const cJSON *crd, const cJSON *ver)
{
	tp_crds *c = k->c;
	const char *group = tp_get_str(crd, "spec.group"), *kind = tp_get_str(crd, "spec.names.kind");
	const char *name = tp_get_str(ver, "name");
	if (!name)
		return comp_fail(k, TP_EINVAL, "spec.versions[].name is missing");
	tp_crd_version nv = {
		.group = tp_arena_strdup(c->arena, group), .version = tp_arena_strdup(c->arena, name),
		.kind = tp_arena_strdup(c->arena, kind),
		.plural = tp_arena_strdup(c->arena, tp_get_str(crd, "spec.names.plural") ?
					  tp_get_str(crd, "spec.names.plural") : ""),
		.namespaced = !tp_get_str(crd, "spec.scope") ||
			      strcmp(tp_get_str(crd, "spec.scope"), "Cluster") != 0,
		.status_subresource = tp_get_object(ver, "subresources.status") != NULL,
	};
	const cJSON *schema = tp_get_object(ver, "schema.openAPIV3Schema");
	if (schema && !(nv.root = compile_node(k, schema, 0)))
		return k->rc;
	nv.has_rules = nv.root && nv.root->rules_below;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].group, group) && !strcmp(c->v[i].version, name) &&
		    !strcmp(c->v[i].kind, kind)) {
			c->v[i] = nv; /* the old tree stays in the arena until the set goes */
			return TP_OK;
		}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		tp_crd_version *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return comp_fail(k, TP_ENOMEM, "out of memory");
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = nv;
	return TP_OK;
}

int tp_crds_add(tp_crds *c, const cJSON *crd, char *why, size_t whylen)
{
	if (!c || !crd)
		return TP_EINVAL;
	comp k = { .c = c, .why = why, .whylen = whylen };
	const char *av = tp_get_str(crd, "apiVersion"), *kind = tp_get_str(crd, "kind");
	if (!av || !kind || strcmp(av, "apiextensions.k8s.io/v1") ||
	    strcmp(kind, "CustomResourceDefinition"))
		return comp_fail(&k, TP_EINVAL, "not an apiextensions.k8s.io/v1 CustomResourceDefinition");
	if (!tp_get_str(crd, "spec.group") || !tp_get_str(crd, "spec.names.kind"))
		return comp_fail(&k, TP_EINVAL, "CustomResourceDefinition %s: spec.group and "
				 "spec.names.kind are required", tp_meta_name(crd));
	tp_arena *prev = tp_arena_enter(c->arena); /* enum and default copies live in the set */
	const cJSON *vers = tp_get_array(crd, "spec.versions");
	for (const cJSON *v = vers ? vers->child : NULL; v && !k.rc; v = v->next)
		if (!cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(v, "served")))
			add_version(&k, crd, v);
	tp_arena_leave(prev);
	if (k.rc && why && whylen && !strstr(why, tp_meta_name(crd))) {
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%s", why);
		snprintf(why, whylen, "CustomResourceDefinition %s: %s", tp_meta_name(crd), tmp);
	}
	return k.rc;
}

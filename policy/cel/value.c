/*
 * cel/value.c — CEL values over JSON: typing by schema, equality and
 * ordering (heterogeneous, as the API server's CEL environment has them),
 * lists and maps whether read from JSON or made by the expression, and
 * string() of a value.
 */
#include "policy/core/deadline.h"
#include "policy/core/index.h"
#include "policy/cel/sch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tp_cel_val tp__cel_bool(bool b) { return (tp_cel_val){ .kind = TP_CEL_BOOL, .b = b }; }
tp_cel_val tp__cel_int(long long i) { return (tp_cel_val){ .kind = TP_CEL_INT, .i = i }; }
tp_cel_val tp__cel_double(double d) { return (tp_cel_val){ .kind = TP_CEL_DOUBLE, .d = d }; }

tp_cel_val tp__cel_string(const char *s, size_t n)
{
	return (tp_cel_val){ .kind = TP_CEL_STRING, .s = s, .n = n };
}

tp_cel_val tp__cel_error(tp_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = tp_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return (tp_cel_val){ .kind = TP_CEL_ERROR, .s = s ? s : "out of memory",
			     .n = s ? strlen(s) : 13 };
}

tp_cel_val tp__cel_from_json(const cJSON *v, const tp_sch *sch)
{
	/* cel/sch.h's inline type tests: a field read makes one conversion */
	if (!v || tp__sch_is(v, cJSON_NULL))
		return (tp_cel_val){ .kind = TP_CEL_NULL };
	if (tp__sch_is_any(v, cJSON_True | cJSON_False))
		return tp__cel_bool(tp__sch_is(v, cJSON_True));
	if (tp__sch_is(v, cJSON_String))
		return tp__cel_string(v->valuestring, strlen(v->valuestring));
	if (tp__sch_is(v, cJSON_Number)) {
		long long i;
		bool number = sch && (sch->types & TP_SCH_NUMBER) && !(sch->types & TP_SCH_INTEGER);
		if (!number && tp_json_is_int(v, &i))
			return tp__cel_int(i);
		return tp__cel_double(v->valuedouble);
	}
	tp_cel_val out = { .kind = tp__sch_is(v, cJSON_Array) ? TP_CEL_LIST : TP_CEL_MAP };
	out.json = v;
	out.sch = sch;
	return out;
}

/* ------------------------------------------------------------ containers */

size_t tp__cel_size(const tp_cel_val *v)
{
	if (v->json)
		return (size_t)cJSON_GetArraySize(v->json);
	return v->kind == TP_CEL_MAP ? v->count / 2 : v->count;
}

tp_cel_val tp__cel_list_at(const tp_cel_val *v, size_t i)
{
	if (!v->json)
		return v->items[i];
	const cJSON *it = v->json->child;
	while (i-- && it)
		it = it->next;
	return tp__cel_from_json(it, v->sch ? v->sch->items : NULL);
}

tp_cel_val tp__cel_map_key_at(const tp_cel_val *m, size_t i)
{
	if (!m->json)
		return m->items[2 * i];
	const cJSON *it = m->json->child;
	while (i-- && it)
		it = it->next;
	return it ? tp__cel_string(it->string, strlen(it->string)) : (tp_cel_val){ 0 };
}

tp_cel_val tp__cel_list_next(const tp_cel_val *v, size_t k, const cJSON **cur)
{
	if (!v->json)
		return v->items[k];
	*cur = *cur ? (*cur)->next : v->json->child;
	tp__charge(1);
	return tp__cel_from_json(*cur, v->sch ? v->sch->items : NULL);
}

tp_cel_val tp__cel_map_key_next(const tp_cel_val *m, size_t k, const cJSON **cur)
{
	if (!m->json)
		return m->items[2 * k];
	*cur = *cur ? (*cur)->next : m->json->child;
	tp__charge(1);
	return *cur ? tp__cel_string((*cur)->string, strlen((*cur)->string)) : (tp_cel_val){ 0 };
}

/* k8s escapes property names that are no CEL identifiers: "__dash__" for
 * '-', "__dot__", "__slash__", "__underscores__", and "__<keyword>__". */
static const char *unescape_field(char *buf, size_t len, const char *name)
{
	static const struct { const char *from, *to; } esc[] = {
		{ "__underscores__", "__" }, { "__dot__", "." }, { "__dash__", "-" },
		{ "__slash__", "/" },
	};
	size_t o = 0;
	size_t n = strlen(name);
	if (n > 4 && !strncmp(name, "__", 2) && !strcmp(name + n - 2, "__") && n - 4 < len &&
	    !strchr(name + 2, '.')) {
		/* "__namespace__" and the other reserved words */
		bool plain = true;
		for (size_t k = 2; k < n - 2; k++)
			plain &= name[k] != '_';
		if (plain) {
			memcpy(buf, name + 2, n - 4);
			buf[n - 4] = '\0';
			return buf;
		}
	}
	for (size_t i = 0; name[i] && o + 3 < len;) {
		size_t k;
		for (k = 0; k < sizeof(esc) / sizeof(*esc); k++)
			if (!strncmp(name + i, esc[k].from, strlen(esc[k].from)))
				break;
		if (k < sizeof(esc) / sizeof(*esc)) {
			o += (size_t)snprintf(buf + o, len - o, "%s", esc[k].to);
			i += strlen(esc[k].from);
		} else {
			buf[o++] = name[i++];
		}
	}
	buf[o] = '\0';
	return buf;
}

/* The first byte before strcmp: a rule's field reads scan their object's
 * members (a TrainJob's root has four, its metadata as many). */
static const cJSON *json_member(const cJSON *obj, const char *name)
{
	for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next)
		if (c->string && c->string[0] == name[0] && !strcmp(c->string, name))
			return c;
	return NULL;
}

/* Whether name holds "__" (an escape), as strstr answers: asked of every
 * absent field a rule reads (has(self.torch), has(self.mpi), ...). */
static bool escaped(const char *name)
{
	for (; *name; name++)
		if (name[0] == '_' && name[1] == '_')
			return true;
	return false;
}

/* The member of a JSON object by its CEL field name (escapes undone). */
static const cJSON *field_member(const cJSON *obj, const char *name, const char **real)
{
	const cJSON *m = json_member(obj, name);
	*real = name;
	if (!m && escaped(name)) {
		static _Thread_local char buf[256];
		*real = unescape_field(buf, sizeof(buf), name);
		m = json_member(obj, *real);
	}
	return m;
}

/* An absent property whose schema has a default: the API server would have
 * written it before any rule runs (structural defaulting), so it is there. */
static const tp_sch *defaulted(const tp_cel_val *m, const char *real)
{
	const tp_sch *p = tp__sch_prop(m->sch, real);
	return p && p->default_value ? p : NULL;
}

bool tp__cel_has_field(const tp_cel_val *m, const char *name)
{
	if (m->kind != TP_CEL_MAP)
		return false;
	const char *real;
	if (m->json)
		return field_member(m->json, name, &real) != NULL || defaulted(m, real) != NULL;
	tp_cel_val key = tp__cel_string(name, strlen(name)), v;
	return tp__cel_map_get(m, &key, &v) == 1;
}

int tp__cel_field(const tp_cel_val *m, const char *name, tp_cel_val *out)
{
	if (m->json) {
		const char *real;
		const cJSON *v = field_member(m->json, name, &real);
		const tp_sch *d = v ? NULL : defaulted(m, real);
		if (!v && !d)
			return 0;
		*out = tp__cel_from_json(v ? v : d->default_value, v ? tp__sch_member(m->sch, real) : d);
		return 1;
	}
	tp_cel_val key = tp__cel_string(name, strlen(name));
	return tp__cel_map_get(m, &key, out);
}

int tp__cel_map_get(const tp_cel_val *m, const tp_cel_val *key, tp_cel_val *out)
{
	if (m->json) {
		if (key->kind != TP_CEL_STRING || memchr(key->s, '\0', key->n))
			return 0;
		char buf[512];
		if (key->n >= sizeof(buf))
			return 0;
		memcpy(buf, key->s, key->n);
		buf[key->n] = '\0';
		const cJSON *v = json_member(m->json, buf);
		const tp_sch *d = v ? NULL : defaulted(m, buf);
		if (!v && !d)
			return 0;
		*out = tp__cel_from_json(v ? v : d->default_value, v ? tp__sch_member(m->sch, buf) : d);
		return 1;
	}
	for (size_t i = 0; i + 1 < m->count; i += 2)
		if (tp__cel_equal(&m->items[i], key) == 1) {
			*out = m->items[i + 1];
			return 1;
		}
	return 0;
}

/* ------------------------------------------------------------ equality */

static bool is_number(const tp_cel_val *v)
{
	return v->kind == TP_CEL_INT || v->kind == TP_CEL_UINT || v->kind == TP_CEL_DOUBLE;
}

/* Numbers of any kind compared by value (CEL's heterogeneous comparison). */
static int compare_numbers(const tp_cel_val *a, const tp_cel_val *b)
{
	if (a->kind == TP_CEL_INT && b->kind == TP_CEL_INT)
		return (a->i > b->i) - (a->i < b->i);
	if (a->kind == TP_CEL_UINT && b->kind == TP_CEL_UINT)
		return (a->u > b->u) - (a->u < b->u);
	if (a->kind == TP_CEL_INT && b->kind == TP_CEL_UINT)
		return a->i < 0 ? -1 : ((unsigned long long)a->i > b->u) - ((unsigned long long)a->i < b->u);
	if (a->kind == TP_CEL_UINT && b->kind == TP_CEL_INT)
		return -compare_numbers(b, a);
	double x = a->kind == TP_CEL_DOUBLE ? a->d : a->kind == TP_CEL_INT ? (double)a->i : (double)a->u;
	double y = b->kind == TP_CEL_DOUBLE ? b->d : b->kind == TP_CEL_INT ? (double)b->i : (double)b->u;
	if (isnan(x) || isnan(y))
		return 2;
	return (x > y) - (x < y);
}

int tp__cel_compare(const tp_cel_val *a, const tp_cel_val *b)
{
	if (is_number(a) && is_number(b))
		return compare_numbers(a, b);
	if (a->kind != b->kind)
		return 2;
	if (a->kind == TP_CEL_BOOL)
		return (a->b > b->b) - (a->b < b->b);
	if (a->kind == TP_CEL_STRING || a->kind == TP_CEL_BYTES) {
		size_t n = a->n < b->n ? a->n : b->n;
		int c = memcmp(a->s, b->s, n);
		return c ? (c > 0) - (c < 0) : (a->n > b->n) - (a->n < b->n);
	}
	return 2;
}

/* Lists with x-kubernetes-list-type set or map compare without order. */
static bool unordered(const tp_cel_val *v)
{
	return v->json && v->sch && v->sch->list_type != TP_LIST_ATOMIC;
}

/* What tp__cel_equal compares of a JSON list's element, hashed so that
 * equal elements hash equal: a number by its value (1 == 1.0), a string,
 * a list-map item by its keys (defaults written in, as map_get reads
 * them); other objects and lists only by their kind. */
static uint64_t scalar_hash(const cJSON *v)
{
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble == 0 ? 0.0 : v->valuedouble;
		return tp_hash_bytes(&d, sizeof(d));
	}
	if (cJSON_IsString(v))
		return tp__hash_str(v->valuestring) ^ 1;
	return (uint64_t)(v ? v->type & 0xff : 0) * 0x9e3779b97f4a7c15ull;
}

static uint64_t element_hash(const tp_cel_val *list, const cJSON *e)
{
	const tp_sch *s = list->sch;
	if (!s || s->list_type != TP_LIST_MAP || !cJSON_IsObject(e) || !s->items)
		return scalar_hash(e);
	uint64_t h = 0;
	for (size_t i = 0; i < s->nmap_keys; i++) {
		const cJSON *f = json_member(e, s->map_keys[i]);
		const tp_sch *p = f ? NULL : tp__sch_prop(s->items, s->map_keys[i]);
		h = h * 31 + scalar_hash(f ? f : p ? p->default_value : NULL);
	}
	return h;
}

/* Unordered (list-type set or map) JSON lists: each element of a is
 * looked for among the elements of b of its hash. */
static int unordered_equal(const tp_cel_val *a, const tp_cel_val *b)
{
	tp_htab tab = TP_HTAB_INIT;
	int eq = tp__htab_reserve(&tab, tp__cel_size(b)) ? -1 : 1;
	for (const cJSON *y = b->json->child; y && eq == 1; y = y->next)
		if (tp__htab_put(&tab, element_hash(b, y), y))
			eq = -1;
	const tp_sch *as = a->sch ? a->sch->items : NULL, *bs = b->sch ? b->sch->items : NULL;
	for (const cJSON *x = a->json->child; x && eq == 1; x = x->next) {
		tp_cel_val xv = tp__cel_from_json(x, as);
		uint64_t h = element_hash(a, x);
		size_t pos = 0;
		eq = 0;
		for (const cJSON *y; eq != 1 && (y = tp__htab_next(&tab, h, &pos));) {
			tp_cel_val yv = tp__cel_from_json(y, bs);
			eq = tp__cel_equal(&xv, &yv);
		}
	}
	tp__htab_free(&tab);
	return eq;
}

static int lists_equal(const tp_cel_val *a, const tp_cel_val *b)
{
	size_t n = tp__cel_size(a);
	if (n != tp__cel_size(b))
		return 0;
	if (unordered(a) && unordered(b))
		return unordered_equal(a, b);
	const cJSON *ca = NULL, *cb = NULL;
	for (size_t i = 0; i < n; i++) {
		tp_cel_val x = tp__cel_list_next(a, i, &ca), y = tp__cel_list_next(b, i, &cb);
		int eq = tp__cel_equal(&x, &y);
		if (eq != 1)
			return eq;
	}
	return 1;
}

/* b's value of a's member x: b's member of that name (through ib when
 * b is large), else the schema's default, as tp__cel_map_get reads it. */
static int json_map_get(const tp_cel_val *b, const tp_index *ib, const char *name,
			tp_cel_val *out)
{
	if (strlen(name) >= 512)
		return 0; /* tp__cel_map_get finds no such key either */
	const cJSON *v = tp__index_member(ib, name);
	const tp_sch *d = v ? NULL : defaulted(b, name);
	if (!v && !d)
		return 0;
	*out = tp__cel_from_json(v ? v : d->default_value, v ? tp__sch_member(b->sch, name) : d);
	return 1;
}

static int maps_equal(const tp_cel_val *a, const tp_cel_val *b)
{
	size_t n = tp__cel_size(a);
	if (n != tp__cel_size(b))
		return 0;
	if (a->json && b->json) {
		tp_index ia, ib;
		int eq = tp__index_members(&ia, a->json) || tp__index_members(&ib, b->json) ? -1 : 1;
		if (eq == -1)
			tp__index_members(&ib, NULL);
		for (const cJSON *m = a->json->child; m && eq == 1; m = m->next) {
			tp_cel_val x, y;
			eq = json_map_get(a, &ia, m->string, &x) && json_map_get(b, &ib, m->string, &y)
				     ? tp__cel_equal(&x, &y) : 0;
		}
		tp__index_free(&ia);
		tp__index_free(&ib);
		return eq;
	}
	const cJSON *cur = NULL;
	for (size_t i = 0; i < n; i++) {
		tp_cel_val k = tp__cel_map_key_next(a, i, &cur), x, y;
		if (!tp__cel_map_get(a, &k, &x) || !tp__cel_map_get(b, &k, &y))
			return 0;
		int eq = tp__cel_equal(&x, &y);
		if (eq != 1)
			return eq;
	}
	return 1;
}

int tp__cel_equal(const tp_cel_val *a, const tp_cel_val *b)
{
	if (is_number(a) && is_number(b))
		return compare_numbers(a, b) == 0;
	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case TP_CEL_NULL: return 1;
	case TP_CEL_LIST: return lists_equal(a, b);
	case TP_CEL_MAP: return maps_equal(a, b);
	case TP_CEL_ERROR: return -1;
	default: return tp__cel_compare(a, b) == 0;
	}
}

/* ------------------------------------------------------------ string() */

/* Go's strconv.FormatFloat(d, 'g', -1, 64) shape: the shortest digits that
 * read back as d, %e past the exponent threshold (6 there; fmt's %v uses 21). */
int tp__cel_format_double(double d, int threshold, char *buf, size_t len)
{
	if (isnan(d))
		return snprintf(buf, len, "NaN");
	if (isinf(d))
		return snprintf(buf, len, d > 0 ? "+Inf" : "-Inf");
	int p = 1;
	for (; p < 17; p++) {
		snprintf(buf, len, "%.*e", p - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	snprintf(buf, len, "%.*e", p - 1, d);
	int exp = atoi(strchr(buf, 'e') + 1);
	if (exp < -4 || exp >= threshold)
		return (int)strlen(buf);
	int frac = p - 1 - exp;
	return snprintf(buf, len, "%.*f", frac > 0 ? frac : 0, d);
}

const char *tp__cel_to_string(tp_arena *a, const tp_cel_val *v, size_t *n)
{
	char buf[64];
	const char *s = NULL;
	switch (v->kind) {
	case TP_CEL_STRING:
	case TP_CEL_BYTES:
		*n = v->n;
		return v->s;
	case TP_CEL_BOOL: s = v->b ? "true" : "false"; break;
	case TP_CEL_INT: snprintf(buf, sizeof(buf), "%lld", v->i); s = buf; break;
	case TP_CEL_UINT: snprintf(buf, sizeof(buf), "%llu", v->u); s = buf; break;
	case TP_CEL_DOUBLE: tp__cel_format_double(v->d, 6, buf, sizeof(buf)); s = buf; break;
	default: return NULL;
	}
	*n = strlen(s);
	return tp_arena_strdup(a, s);
}

/*
 * schema/check.c — kube-openapi's SchemaValidator, as kube-apiserver runs it
 * on a custom resource: per node the type, allOf/anyOf/oneOf/not, string,
 * format, number, array, enum and object validators, in that order, each
 * applying by the kind of the data; and apiextensions' mapping of the
 * results to field errors (kubeOpenAPIResultToFieldErrors): Required,
 * NotSupported for enum, TooLong, TooMany, TypeInvalid, else Invalid with
 * kube-openapi's sentence ("spec.x in body should be greater than or equal
 * to 1"); composite messages (anyOf, oneOf, allOf, not) on the nil path.
 */
#include "policy/schema/schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *path_of(tp_sch_walk *w)
{
	return tp__sch_path(w);
}

/* ------------------------------------------------------------ errors */

/* A walk without a result only asks whether the value passes (anyOf,
 * oneOf, not): the first error ends it, nothing is formatted or allocated. */
static int add(tp_sch_walk *w, tp_field_type type, const char *path, const char *value,
	       const char *fmt, ...) TP_PRINTF(5, 6);
static int add(tp_sch_walk *w, tp_field_type type, const char *path, const char *value,
	       const char *fmt, ...)
{
	tp_result *out = tp__sch_out(w, false);
	if (!out) {
		w->failed = true;
		return TP_OK;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tp_result_add(out, type, path, value, "%s", msg);
}

static const char *val(tp_sch_walk *w, const cJSON *v)
{
	tp_result *out = tp__sch_out(w, false);
	return out ? tp_result_value(out, v) : NULL;
}

static const char *quote(tp_sch_walk *w, const char *s)
{
	tp_result *out = tp__sch_out(w, false);
	return out ? tp_result_quote(out, s) : NULL;
}

/* Invalid with kube-openapi's sentence "<path> in body <fmt>". */
static void invalid(tp_sch_walk *w, const cJSON *v, const char *fmt, ...) TP_PRINTF(3, 4);
static void invalid(tp_sch_walk *w, const cJSON *v, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->rc |= add(w, TP_FIELD_INVALID, path_of(w),
			       v ? val(w, v) : "\"\"", "%s in body %s", path_of(w), msg);
}

/* A composite error (anyOf, oneOf, range): field.Invalid(nil, "", msg). */
static void composite(tp_sch_walk *w, const char *fmt, ...) TP_PRINTF(2, 3);
static void composite(tp_sch_walk *w, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->rc |= add(w, TP_FIELD_INVALID, NULL, "\"\"", "%s", msg);
}

static void type_invalid(tp_sch_walk *w, const char *want, const char *got)
{
	w->blocking = true;
	w->rc |= add(w, TP_FIELD_INVALID, path_of(w), quote(w, got),
			       "%s in body must be of type %s: \"%s\"", path_of(w), want, got);
}

/* %v of a float64 bound, as fmt prints it. */
static const char *num(char *buf, size_t n, double d)
{
	tp__cel_format_double(d, 21, buf, n);
	return buf;
}

/* ------------------------------------------------------------ type */

/* The data's OpenAPI type as a TP_SCH_* bit, and its name. */
static unsigned data_bit(const cJSON *v)
{
	switch (v->type & 0xff) {
	case cJSON_Object:
		return TP_SCH_OBJECT;
	case cJSON_Array:
		return TP_SCH_ARRAY;
	case cJSON_String:
		return TP_SCH_STRING;
	case cJSON_True:
	case cJSON_False:
		return TP_SCH_BOOLEAN;
	case cJSON_Number:
		return tp_json_is_int(v, NULL) ? TP_SCH_INTEGER : TP_SCH_NUMBER;
	default:
		return 0;
	}
}

/* Whether v fails s's type test: *want and *got the words of its message.
 * It reads only v's kind (null, boolean, integer, number, string, array,
 * object), so that compile.c can ask it once per kind (tp__sch_type_ok). */
static bool type_wrong(const tp_sch *s, const cJSON *v, const char **want, const char **got)
{
	/* x-kubernetes-int-or-string with no type is given both by apiextensions */
	unsigned types = s->types;
	const char *type_name = s->type_name, *format = s->checked_format;
	if (!types && s->int_or_string)
		types = TP_SCH_INTEGER | TP_SCH_STRING, type_name = "integer,string";
	if (!types && !*format)
		return false;
	*want = type_name;
	if (tp__sch_is(v, cJSON_NULL)) {
		*got = "null";
		return types && !s->nullable;
	}
	unsigned bit = data_bit(v);
	bool numeric = types & (TP_SCH_INTEGER | TP_SCH_NUMBER);
	/* an integer is a number too (kube-openapi's isIntFloat) */
	bool ok = (types & bit) || (bit == TP_SCH_INTEGER && (types & TP_SCH_NUMBER));
	if (bit & (TP_SCH_INTEGER | TP_SCH_NUMBER) && *format) {
		/* JSON numbers decode as int64 or float64: never a "lower" format */
		const char *fmt = bit == TP_SCH_INTEGER ? "int64" : "double";
		if (!ok && strcmp(fmt, format)) {
			*want = format;
			*got = fmt;
			return true;
		}
	}
	if (!numeric && *format && (bit & (TP_SCH_STRING | TP_SCH_ARRAY)))
		return false;
	*got = tp_json_type_name(v);
	return !ok;
}

static bool check_type(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	const char *want, *got;
	if (!type_wrong(s, v, &want, &got))
		return true;
	type_invalid(w, want, got);
	return false;
}

unsigned tp__sch_type_ok(const tp_sch *s)
{
	/* one value of each kind; a number passes only if both of its do */
	static const struct {
		int type;
		double d;
	} kinds[] = { { cJSON_NULL, 0 },   { cJSON_False, 0 },  { cJSON_True, 0 },
		      { cJSON_Number, 1 }, { cJSON_Number, 0.5 }, { cJSON_String, 0 },
		      { cJSON_Array, 0 },  { cJSON_Object, 0 } };
	unsigned ok = cJSON_Number, fails = 0;
	const char *want, *got;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		cJSON v = { .type = kinds[i].type, .valuedouble = kinds[i].d };
		if (type_wrong(s, &v, &want, &got))
			fails |= (unsigned)kinds[i].type;
		else
			ok |= (unsigned)kinds[i].type;
	}
	return ok & ~fails;
}

unsigned tp__sch_pass_ok(const tp_sch *s)
{
	/* tp__sch_check's tests, by the kind of the data: the type (type_ok),
	 * then for null only the enum, for the rest the combinators and the
	 * enum, and the validator of their own type */
	unsigned ck = tp__sch_checks(s), ok = 0;
	if (!(ck & TP_SCH_CK_ENUM))
		ok |= cJSON_NULL;
	if (!(ck & (TP_SCH_CK_ENUM | TP_SCH_CK_COMBINATORS))) {
		ok |= cJSON_True | cJSON_False;
		ok |= ck & TP_SCH_CK_STRING ? 0 : cJSON_String;
		ok |= ck & TP_SCH_CK_NUMBER ? 0 : cJSON_Number;
	}
	return ok & tp__sch_type_ok(s);
}

unsigned tp__sch_checks(const tp_sch *s)
{
	unsigned ck = 0;
	if (s->nany_of || s->none_of || s->nall_of || s->not_schema)
		ck |= TP_SCH_CK_COMBINATORS;
	if (s->max_len >= 0 || s->min_len >= 0 || s->pattern || s->date_time)
		ck |= TP_SCH_CK_STRING;
	if (s->int32 || s->has_max || s->has_min)
		ck |= TP_SCH_CK_NUMBER;
	if (s->list_type != TP_LIST_ATOMIC || s->items || s->min_items >= 0 || s->max_items >= 0 ||
	    s->unique)
		ck |= TP_SCH_CK_ARRAY;
	if (s->enum_values)
		ck |= TP_SCH_CK_ENUM;
	return ck;
}

/* ------------------------------------------------------------ combinators */

static void check_branches(tp_sch_walk *w, const tp_sch *s, const cJSON *v);

/* The branches' own reasons are schema checks only: the unknown fields and
 * list types of the value are the walk's, found once. */
static void check_combinators(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	bool unknown = w->unknown, lists = w->lists;
	w->unknown = w->lists = false;
	check_branches(w, s, v);
	w->unknown = unknown;
	w->lists = lists;
}

static void check_branches(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	/* x-kubernetes-int-or-string's anyOf [integer, string]: decided by type */
	bool int_or_string = s->int_or_string && (cJSON_IsString(v) || tp_json_is_int(v, NULL));
	if (s->nany_of && !int_or_string) {
		size_t i;
		for (i = 0; i < s->nany_of && !tp__sch_passes(s->any_of[i], v); i++)
			;
		if (i == s->nany_of) {
			composite(w, "\"%s\" must validate at least one schema (anyOf)", path_of(w));
			tp__sch_check(w, s->any_of[0], v); /* the first failure's reasons */
		}
	}
	if (s->none_of) {
		size_t ok = 0;
		for (size_t i = 0; i < s->none_of; i++)
			ok += tp__sch_passes(s->one_of[i], v);
		if (ok != 1) {
			char more[48];
			snprintf(more, sizeof(more), ok ? "Found %zu valid alternatives" : "Found none valid",
				 ok);
			composite(w, "\"%s\" must validate one and only one schema (oneOf). %s",
				  path_of(w), more);
			if (!ok)
				tp__sch_check(w, s->one_of[0], v);
		}
	}
	if (s->nall_of) {
		size_t bad = 0;
		for (size_t i = 0; i < s->nall_of; i++)
			bad += !tp__sch_passes(s->all_of[i], v);
		if (bad) {
			composite(w, "\"%s\" must validate all the schemas (allOf)", path_of(w));
			for (size_t i = 0; i < s->nall_of; i++)
				tp__sch_check(w, s->all_of[i], v);
		}
	}
	if (s->not_schema && tp__sch_passes(s->not_schema, v))
		composite(w, "\"%s\" must not validate the schema (not)", path_of(w));
}

/* ------------------------------------------------------------ string */

/* Whether s holds more than k runes (UTF-8 sequences: the bytes that do
 * not continue one), counted only as far as the k + 1st: the bounds are
 * asked of every bounded string, and a name's minLength 1 is settled by
 * its first byte. */
static bool runes_past(const char *s, unsigned long long k)
{
	unsigned long long n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80 && ++n > k)
			return true;
	return false;
}

/* Whether str matches s's pattern: resource.Quantity's by its grammar. */
static bool matches(const tp_sch *s, const char *str, size_t bytes)
{
	if (s->quantity && bytes <= TP_SCH_QUANTITY_MAX)
		return tp__sch_quantity_match(str);
	return tp__regex_match(s->pattern, str, bytes) == 1;
}

static void check_string(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	/* a rune is at least a byte: a string no longer in bytes is not too long */
	size_t bytes = strlen(v->valuestring);
	if (s->max_len >= 0 && bytes > (unsigned long long)s->max_len &&
	    runes_past(v->valuestring, (unsigned long long)s->max_len) && (w->blocking = true))
		w->rc |= add(w, TP_FIELD_TOO_LONG, path_of(w), NULL,
				       "may not be more than %lld byte%s", s->max_len,
				       s->max_len == 1 ? "" : "s");
	if (s->min_len > 0 && !runes_past(v->valuestring, (unsigned long long)s->min_len - 1))
		invalid(w, v, "should be at least %lld chars long", s->min_len);
	if (s->pattern && !matches(s, v->valuestring, bytes))
		invalid(w, v, "should match '%s'", s->pattern_text);
}

/* RFC 3339 date-time as strfmt's ParseDateTime takes it. */
static bool is_date_time(const char *s)
{
	int y, mo, d, h, mi, sec, n = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return false;
	if ((s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    sscanf(s + 11, "%2d:%2d:%2d%n", &h, &mi, &sec, &n) != 3 || n != 8)
		return false;
	const char *p = s + 19;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (*p == 'Z' || *p == 'z')
		p++;
	else if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d%n", &h, &mi, &n) == 2 && n == 5)
		p += 6;
	return !*p && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && sec < 61;
}

static void check_format(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	if (s->date_time) {
		if (!is_date_time(v->valuestring))
			w->rc |= add(w, TP_FIELD_INVALID, path_of(w),
					       val(w, v),
					       "%s in body must be of type %s: \"%s\"", path_of(w),
					       s->format, v->valuestring),
			w->blocking = true;
	}
}

/* ------------------------------------------------------------ number */

static void check_number(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	char b[64];
	double d = v->valuedouble;
	/* v1.32 stores it (the format is not validated, above); the strict
	 * profile refuses what the controller's int32 field cannot hold */
	if (w->strict && s->int32 &&
	    (d < -2147483648.0 || d > 2147483647.0))
		w->rc |= add(w, TP_FIELD_INVALID, path_of(w), val(w, v),
			     "must be %s (format: int32): the API server stores it, but the "
			     "controller reads it into an int32 and cannot read it",
			     d < 0 ? "no less than -2147483648" : "no more than 2147483647");
	if (s->has_max && (s->excl_max ? d >= s->max : d > s->max))
		invalid(w, v, "should be less than %s%s", s->excl_max ? "" : "or equal to ",
			num(b, sizeof(b), s->max));
	if (s->has_min && (s->excl_min ? d <= s->min : d < s->min))
		invalid(w, v, "should be greater than %s%s", s->excl_min ? "" : "or equal to ",
			num(b, sizeof(b), s->min));
}

/* ------------------------------------------------------------ array */

/* obj's member called name (obj's members, not cJSON's call per lookup). */
static const cJSON *member(const cJSON *obj, const char *name)
{
	for (const cJSON *m = obj->child; m; m = m->next)
		if (m->string && m->string[0] == name[0] && !strcmp(m->string, name))
			return m;
	return NULL;
}

static long long count(const cJSON *v)
{
	long long n = 0;
	for (const cJSON *c = v->child; c; c = c->next)
		n++;
	return n;
}


static void check_array(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	long i = 0;
	if (w->lists && s->list_type != TP_LIST_ATOMIC)
		tp__sch_list_check(w, s, v); /* before the lists below, as listtype.c's walk */
	if (s->items)
		for (const cJSON *it = v->child; it; it = it->next, i++) {
			/* "[i]" is at most 22 bytes */
			if ((s->items->pass_ok & (unsigned)it->type) && tp__sch_room(w, 22))
				continue;
			size_t len = tp__sch_push_index(w, i);
			tp__sch_check(w, s->items, it);
			tp__sch_pop(w, len);
		}
	long long n = s->min_items >= 0 || s->max_items >= 0 ? count(v) : 0;
	if (s->min_items >= 0 && n < s->min_items)
		invalid(w, v, "should have at least %lld items", s->min_items);
	if (s->max_items >= 0 && n > s->max_items) {
		char actual[32];
		w->blocking = true;
		snprintf(actual, sizeof(actual), "%lld", n);
		w->rc |= add(w, TP_FIELD_TOO_MANY, path_of(w), actual,
				       "must have at most %lld item%s", s->max_items,
				       s->max_items == 1 ? "" : "s");
	}
	if (s->unique)
		for (const cJSON *a = v->child; a; a = a->next)
			for (const cJSON *b = a->next; b; b = b->next)
				if (tp_json_equal(a, b)) {
					invalid(w, v, "shouldn't contain duplicates");
					return;
				}
}

/* ------------------------------------------------------------ enum */

static void check_enum(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	for (const cJSON *e = s->enum_values->child; e; e = e->next)
		if (tp_json_equal(e, v))
			return;
	if (!tp__sch_out(w, false)) {
		w->failed = true;
		return;
	}
	tp_buf b = TP_BUF_INIT(1 << 16);
	int rc = tp_buf_adds(&b, "supported values: ");
	for (const cJSON *e = s->enum_values->child; e; e = e->next) {
		rc |= tp_buf_adds(&b, e == s->enum_values->child ? "" : ", ");
		rc |= tp_buf_adds(&b, val(w, e));
	}
	w->blocking = true;
	if (!rc)
		w->rc |= add(w, TP_FIELD_UNSUPPORTED, path_of(w),
				       val(w, v), "%s", b.data);
	tp_buf_free(&b);
	w->rc |= rc;
}

/* ------------------------------------------------------------ object */

static bool pruned_null(const tp_sch *p, const cJSON *m)
{
	return tp__sch_is(m, cJSON_NULL) && p && !p->nullable; /* the API server drops it */
}

static void check_object(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	long long n = s->min_props >= 0 || s->max_props >= 0 ? count(v) : 0;
	if (s->min_props >= 0 && n < s->min_props)
		invalid(w, v, "should have at least %lld properties", s->min_props);
	if (s->max_props >= 0 && n > s->max_props) {
		char actual[32];
		w->blocking = true;
		snprintf(actual, sizeof(actual), "%lld", n);
		w->rc |= add(w, TP_FIELD_TOO_MANY, path_of(w), actual,
				       "must have at most %lld item%s", s->max_props,
				       s->max_props == 1 ? "" : "s");
	}
	bool unknown = w->unknown, resource = !w->depth || s->embedded;
	bool status_skipped = w->skip_status && !w->len; /* tp__sch_skipped, asked once */
	size_t found = 0;
	uint64_t seen = 0, present = 0; /* required members met, and not pruned */
	for (const cJSON *m = v->child; m; m = m->next) {
		const tp_sch_prop *prop = tp__sch_prop_at(s, m->string);
		const tp_sch *p = prop ? prop->schema : s->additional;
		if (prop && (prop->req_bit & ~seen)) { /* the first of the name, as member() */
			seen |= prop->req_bit;
			present |= pruned_null(p, m) ? 0 : prop->req_bit;
		}
		/* a known member of a plain object: nothing to report, nothing to call */
		w->unknown = unknown &&
			     ((p && !resource) || tp__sch_unknown_member(w, s, p, m, resource, &found));
		if (!p || pruned_null(p, m))
			continue;
		bool skipped = status_skipped && !strcmp(m->string, "status");
		if (skipped && !w->unknown)
			continue;
		if ((p->pass_ok & (unsigned)m->type) &&
		    tp__sch_room(w, (prop ? prop->len : strlen(m->string)) + !!w->len))
			continue; /* a scalar with nothing to check (a label's value too) */
		size_t len = prop ? tp__sch_push_name_len(w, m->string, prop->len)
				  : tp__sch_push_name(w, m->string);
		if (skipped) /* the status: strict decoding still reads it */
			tp__sch_unknown_fields(w, p, m, false);
		else
			tp__sch_check(w, p, m);
		tp__sch_pop(w, len);
	}
	w->unknown = unknown;
	for (size_t i = 0; i < s->nrequired; i++) {
		const tp_sch *p;
		if (s->required_props) {
			if (present & ((uint64_t)1 << i))
				continue;
			p = s->required_props[i]->schema;
		} else {
			const cJSON *m = member(v, s->required[i]);
			p = tp__sch_prop(s, s->required[i]);
			if (m && !pruned_null(p, m))
				continue;
		}
		if (p && p->default_value)
			continue; /* the API server writes the default first */
		size_t len = tp__sch_push_name(w, s->required[i]);
		w->blocking = true;
		w->rc |= add(w, TP_FIELD_REQUIRED, path_of(w), NULL, "%s", "");
		tp__sch_pop(w, len);
	}
}

/* ------------------------------------------------------------ entry */

void tp__sch_check(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	if (!s || !v || w->failed)
		return;
	int type = v->type & 0xff;
	if (!(s->type_ok & (unsigned)type))
		check_type(w, s, v);
	unsigned ck = s->checks;
	if (type == cJSON_NULL) {
		if (ck & TP_SCH_CK_ENUM)
			check_enum(w, s, v);
		return;
	}
	if (ck) {
		if (ck & TP_SCH_CK_COMBINATORS)
			check_combinators(w, s, v);
		if (type == cJSON_String && (ck & TP_SCH_CK_STRING)) {
			check_string(w, s, v);
			if (*s->format)
				check_format(w, s, v);
		} else if (type == cJSON_Number && (ck & TP_SCH_CK_NUMBER)) {
			check_number(w, s, v);
		} else if (type == cJSON_Array && (ck & TP_SCH_CK_ARRAY)) {
			check_array(w, s, v);
		}
		if (ck & TP_SCH_CK_ENUM)
			check_enum(w, s, v);
	}
	if (type == cJSON_Object)
		check_object(w, s, v);
}

bool tp__sch_passes(const tp_sch *s, const cJSON *v)
{
	tp_sch_walk w = { .res = NULL, .path = TP_BUF_INIT(1 << 16) };
	tp__sch_check(&w, s, v);
	tp__sch_walk_free(&w);
	return !w.failed;
}

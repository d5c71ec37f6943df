/*
 * cel/lib.c — the functions CRD rules call: size, the conversions (int,
 * uint, double, string, dyn), the string tests (matches, startsWith,
 * endsWith, contains) and Kubernetes' string library's common members
 * (lowerAscii, upperAscii, trim, indexOf, join). Errors carry cel-go's words.
 */
#include "policy/cel/cel.h"
#include "policy/core/internal.h"
#include "policy/core/regex.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tp_cel_val (*cel_fn)(tp_arena *a, const tp_cel_val *args, size_t argc,
			     const tp_regex *re, long long *cost);

static tp_cel_val no_overload(tp_arena *a)
{
	return tp__cel_error(a, "no such overload");
}

/* Code points in UTF-8 text (CEL's size of a string). */
static size_t code_points(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static tp_cel_val fn_size(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			  long long *cost)
{
	(void)argc, (void)re, (void)cost;
	switch (v->kind) {
	case TP_CEL_STRING: return tp__cel_int((long long)code_points(v->s, v->n));
	case TP_CEL_BYTES: return tp__cel_int((long long)v->n);
	case TP_CEL_LIST:
	case TP_CEL_MAP: return tp__cel_int((long long)tp__cel_size(v));
	default: return no_overload(a);
	}
}

static tp_cel_val fn_int(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			 long long *cost)
{
	(void)argc, (void)re, (void)cost;
	switch (v->kind) {
	case TP_CEL_INT: return *v;
	case TP_CEL_UINT:
		if (v->u > (unsigned long long)LLONG_MAX)
			return tp__cel_error(a, "integer overflow");
		return tp__cel_int((long long)v->u);
	case TP_CEL_DOUBLE:
		if (!(v->d > -9223372036854775808.0 && v->d < 9223372036854775808.0))
			return tp__cel_error(a, "integer overflow");
		return tp__cel_int((long long)v->d);
	case TP_CEL_STRING: {
		char *s = tp_arena_strndup(a, v->s, v->n), *end;
		errno = 0;
		long long i = s ? strtoll(s, &end, 10) : 0;
		if (!s || !*s || *end || errno || isspace((unsigned char)*s))
			return tp__cel_error(a, "cannot convert %s to int", tp_arena_strndup(a, v->s, v->n));
		return tp__cel_int(i);
	}
	default: return no_overload(a);
	}
}

static tp_cel_val fn_uint(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			  long long *cost)
{
	(void)argc, (void)re, (void)cost;
	switch (v->kind) {
	case TP_CEL_UINT: return *v;
	case TP_CEL_INT:
		if (v->i < 0)
			return tp__cel_error(a, "unsigned integer overflow");
		return (tp_cel_val){ .kind = TP_CEL_UINT, .u = (unsigned long long)v->i };
	case TP_CEL_DOUBLE:
		if (!(v->d > -1.0 && v->d < 18446744073709551616.0))
			return tp__cel_error(a, "unsigned integer overflow");
		return (tp_cel_val){ .kind = TP_CEL_UINT, .u = (unsigned long long)v->d };
	default: return no_overload(a);
	}
}

static tp_cel_val fn_double(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			    long long *cost)
{
	(void)argc, (void)re, (void)cost;
	switch (v->kind) {
	case TP_CEL_DOUBLE: return *v;
	case TP_CEL_INT: return tp__cel_double((double)v->i);
	case TP_CEL_UINT: return tp__cel_double((double)v->u);
	case TP_CEL_STRING: {
		char *s = tp_arena_strndup(a, v->s, v->n), *end;
		double d = s ? strtod(s, &end) : 0;
		if (!s || !*s || *end || isspace((unsigned char)*s) || !strncasecmp(s, "0x", 2))
			return tp__cel_error(a, "cannot convert %s to double",
					    tp_arena_strndup(a, v->s, v->n));
		return tp__cel_double(d);
	}
	default: return no_overload(a);
	}
}

static tp_cel_val fn_string(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			    long long *cost)
{
	(void)argc, (void)re, (void)cost;
	size_t n;
	const char *s = tp__cel_to_string(a, v, &n);
	return s ? tp__cel_string(s, n) : no_overload(a);
}

static tp_cel_val fn_dyn(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			 long long *cost)
{
	(void)a, (void)argc, (void)re, (void)cost;
	return *v;
}

static bool strings2(const tp_cel_val *v)
{
	return v[0].kind == TP_CEL_STRING && v[1].kind == TP_CEL_STRING;
}

static tp_cel_val fn_matches(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			     long long *cost)
{
	(void)argc;
	if (!strings2(v))
		return no_overload(a);
	tp_regex *own = NULL;
	if (!re) {
		char why[256];
		char *pat = tp_arena_strndup(a, v[1].s, v[1].n);
		if (!pat || tp__regex_compile(pat, &own, why, sizeof(why)))
			return tp__cel_error(a, "error parsing regexp: %s", pat ? why : "out of memory");
		re = own;
	}
	*cost += (long long)v[0].n;
	int m = tp__regex_match(re, v[0].s, v[0].n);
	tp__regex_free(own);
	return m < 0 ? tp__cel_error(a, "regular expression match gave up (backtracking limit)")
		     : tp__cel_bool(m == 1);
}

static tp_cel_val fn_starts(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			    long long *cost)
{
	(void)argc, (void)re;
	if (!strings2(v))
		return no_overload(a);
	*cost += (long long)v[1].n;
	return tp__cel_bool(v[1].n <= v[0].n && !memcmp(v[0].s, v[1].s, v[1].n));
}

static tp_cel_val fn_ends(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			  long long *cost)
{
	(void)argc, (void)re;
	if (!strings2(v))
		return no_overload(a);
	*cost += (long long)v[1].n;
	return tp__cel_bool(v[1].n <= v[0].n && !memcmp(v[0].s + v[0].n - v[1].n, v[1].s, v[1].n));
}

/* Byte offset of needle in hay, or -1. */
static long find(const tp_cel_val *hay, const tp_cel_val *needle)
{
	if (!needle->n)
		return 0;
	for (size_t i = 0; i + needle->n <= hay->n; i++)
		if (!memcmp(hay->s + i, needle->s, needle->n))
			return (long)i;
	return -1;
}

static tp_cel_val fn_contains(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			      long long *cost)
{
	(void)argc, (void)re;
	if (!strings2(v))
		return no_overload(a);
	*cost += (long long)(v[0].n + v[1].n);
	return tp__cel_bool(find(&v[0], &v[1]) >= 0);
}

static tp_cel_val fn_index_of(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			      long long *cost)
{
	(void)argc, (void)re;
	if (!strings2(v))
		return no_overload(a);
	*cost += (long long)(v[0].n + v[1].n);
	long at = find(&v[0], &v[1]);
	return tp__cel_int(at < 0 ? -1 : (long long)code_points(v[0].s, (size_t)at));
}

static tp_cel_val fn_case(tp_arena *a, const tp_cel_val *v, bool upper, long long *cost)
{
	if (v->kind != TP_CEL_STRING)
		return no_overload(a);
	char *s = tp_arena_strndup(a, v->s, v->n);
	if (!s)
		return tp__cel_error(a, "out of memory");
	for (size_t i = 0; i < v->n; i++)
		if ((unsigned char)s[i] < 0x80)
			s[i] = (char)(upper ? toupper((unsigned char)s[i]) : tolower((unsigned char)s[i]));
	*cost += (long long)v->n;
	return tp__cel_string(s, v->n);
}

static tp_cel_val fn_lower(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			   long long *cost)
{
	(void)argc, (void)re;
	return fn_case(a, v, false, cost);
}

static tp_cel_val fn_upper(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			   long long *cost)
{
	(void)argc, (void)re;
	return fn_case(a, v, true, cost);
}

static tp_cel_val fn_trim(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			  long long *cost)
{
	(void)argc, (void)re;
	if (v->kind != TP_CEL_STRING)
		return no_overload(a);
	size_t off, len;
	tp__go_trim_space(v->s, v->n, &off, &len);
	*cost += (long long)v->n;
	return tp__cel_string(v->s + off, len);
}

static tp_cel_val fn_join(tp_arena *a, const tp_cel_val *v, size_t argc, const tp_regex *re,
			  long long *cost)
{
	(void)re;
	if (v[0].kind != TP_CEL_LIST || (argc == 2 && v[1].kind != TP_CEL_STRING))
		return no_overload(a);
	tp_buf b = TP_BUF_INIT(1 << 20);
	size_t n = tp__cel_size(&v[0]);
	int rc = tp_buf_reserve(&b, 1);
	const cJSON *cur = NULL;
	for (size_t i = 0; !rc && i < n; i++) {
		tp_cel_val it = tp__cel_list_next(&v[0], i, &cur);
		if (it.kind != TP_CEL_STRING) {
			tp_buf_free(&b);
			return no_overload(a);
		}
		if (i && argc == 2)
			rc |= tp_buf_add(&b, v[1].s, v[1].n);
		rc |= tp_buf_add(&b, it.s, it.n);
	}
	char *s = rc ? NULL : tp_arena_strndup(a, b.data, b.len);
	size_t len = b.len;
	tp_buf_free(&b);
	*cost += (long long)len;
	return s ? tp__cel_string(s, len) : tp__cel_error(a, "out of memory");
}

static const struct tp_cel_fn {
	const char *name;
	bool receiver;
	size_t min, max; /* arguments, the receiver counted */
	cel_fn fn;
} functions[] = {
	{ "size", false, 1, 1, fn_size },      { "size", true, 1, 1, fn_size },
	{ "int", false, 1, 1, fn_int },        { "uint", false, 1, 1, fn_uint },
	{ "double", false, 1, 1, fn_double },  { "string", false, 1, 1, fn_string },
	{ "dyn", false, 1, 1, fn_dyn },        { "matches", false, 2, 2, fn_matches },
	{ "matches", true, 2, 2, fn_matches }, { "startsWith", true, 2, 2, fn_starts },
	{ "endsWith", true, 2, 2, fn_ends },   { "contains", true, 2, 2, fn_contains },
	{ "indexOf", true, 2, 2, fn_index_of }, { "lowerAscii", true, 1, 1, fn_lower },
	{ "upperAscii", true, 1, 1, fn_upper }, { "trim", true, 1, 1, fn_trim },
	{ "join", true, 1, 2, fn_join },
};

const tp_cel_fn *tp__cel_function(const char *name, bool receiver, size_t argc)
{
	for (size_t k = 0; k < sizeof(functions) / sizeof(*functions); k++)
		if (functions[k].receiver == receiver && !strcmp(functions[k].name, name) &&
		    argc >= functions[k].min && argc <= functions[k].max)
			return &functions[k];
	return NULL;
}

tp_cel_val tp__cel_call(tp_arena *a, const tp_cel_fn *f, const tp_cel_val *args, size_t argc,
		       const tp_regex *compiled, long long *cost)
{
	for (size_t i = 0; i < argc; i++)
		if (args[i].kind == TP_CEL_ERROR)
			return args[i];
	return f ? f->fn(a, args, argc, compiled, cost) : no_overload(a);
}

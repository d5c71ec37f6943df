/*
 * core/object.c — reading Kubernetes objects held as cJSON trees.
 */
#include "policy/core/internal.h"

#include <math.h>
#include <string.h>

/* cJSON's type tests without a call into libcjson: these run for every
 * field a validator reads (96,791 -> 95,268 instructions for make bench's
 * ClusterTrainingRuntime review, callgrind). */
static inline bool has_type(const cJSON *v, int type)
{
	return v && (v->type & 0xff) == type;
}

/* The member of obj whose name is the path segment at p (up to the next '.'
 * or the end), and where the segment ends in *end. Compared inline, the
 * first byte ruling out most members: every validator reads its fields
 * through here (strchr, strlen and strncmp per segment before: 12,570 ->
 * 10,520 instructions a ClusterTrainingRuntime review of make bench,
 * callgrind). */
static const cJSON *segment(const cJSON *obj, const char *p, const char **end)
{
	if (!has_type(obj, cJSON_Object))
		return NULL;
	for (const cJSON *c = obj->child; c; c = c->next) {
		const char *k = c->string, *q = p;
		if (!k || k[0] != q[0])
			continue;
		while (*q && *q != '.' && *k == *q)
			k++, q++;
		if (*k == '\0' && (*q == '.' || *q == '\0')) {
			*end = q;
			return c;
		}
	}
	return NULL;
}

const cJSON *tp_get(const cJSON *obj, const char *dotted)
{
	if (!dotted || !*dotted)
		return obj;
	for (const char *p = dotted;; p++) {
		obj = segment(obj, p, &p);
		if (!obj || *p == '\0')
			return obj;
	}
}

const char *tp_get_str(const cJSON *obj, const char *dotted)
{
	const cJSON *v = tp_get(obj, dotted);
	return has_type(v, cJSON_String) ? v->valuestring : NULL;
}

bool tp_json_is_int(const cJSON *v, long long *out)
{
	if (!cJSON_IsNumber(v))
		return false;
	double d = v->valuedouble;
	if (!isfinite(d) || d != floor(d) || fabs(d) > 9.007199254740992e15)
		return false;
	if (out)
		*out = (long long)d;
	return true;
}

bool tp_get_int(const cJSON *obj, const char *dotted, long long *out)
{
	return tp_json_is_int(tp_get(obj, dotted), out);
}

bool tp_get_true(const cJSON *obj, const char *dotted)
{
	return cJSON_IsTrue(tp_get(obj, dotted));
}

const cJSON *tp_get_object(const cJSON *obj, const char *dotted)
{
	const cJSON *v = tp_get(obj, dotted);
	return has_type(v, cJSON_Object) ? v : NULL;
}

const cJSON *tp_get_array(const cJSON *obj, const char *dotted)
{
	const cJSON *v = tp_get(obj, dotted);
	return has_type(v, cJSON_Array) ? v : NULL;
}

const cJSON *tp_find_named(const cJSON *arr, const char *key, const char *name)
{
	if (!has_type(arr, cJSON_Array) || !name)
		return NULL;
	for (const cJSON *it = arr->child; it; it = it->next) {
		const char *n = tp_get_str(it, key);
		if (n && !strcmp(n, name))
			return it;
	}
	return NULL;
}

const cJSON *tp_member(const cJSON *obj, const char *key)
{
	if (!has_type(obj, cJSON_Object))
		return NULL;
	/* the first byte rules out most members before a call, as in tp_get */
	for (const cJSON *c = obj->child; c; c = c->next)
		if (c->string && c->string[0] == key[0] && !strcmp(c->string, key))
			return c;
	return NULL;
}

static bool equal(const cJSON *a, const cJSON *b, const char *skip)
{
	if (!a || !b)
		return a == b;
	int ta = a->type & 0xff, tb = b->type & 0xff;
	if (ta != tb)
		return false;
	switch (ta) {
	case cJSON_False:
	case cJSON_True:
	case cJSON_NULL:
		return true;
	case cJSON_Number:
		return a->valuedouble == b->valuedouble;
	case cJSON_String:
	case cJSON_Raw:
		return !strcmp(a->valuestring ? a->valuestring : "", b->valuestring ? b->valuestring : "");
	case cJSON_Array: {
		const cJSON *x = a->child, *y = b->child;
		for (; x && y; x = x->next, y = y->next)
			if (!equal(x, y, NULL))
				return false;
		return !x && !y;
	}
	case cJSON_Object: {
		size_t na = 0, nb = 0;
		for (const cJSON *x = a->child; x; x = x->next) {
			if (skip && x->string && !strcmp(x->string, skip))
				continue;
			na++;
			const cJSON *y = tp_member(b, x->string ? x->string : "");
			if (!y || !equal(x, y, NULL))
				return false;
		}
		for (const cJSON *y = b->child; y; y = y->next)
			if (!(skip && y->string && !strcmp(y->string, skip)))
				nb++;
		return na == nb;
	}
	}
	return false;
}

bool tp_json_equal(const cJSON *a, const cJSON *b)
{
	return equal(a, b, NULL);
}

bool tp_json_equal_except(const cJSON *a, const cJSON *b, const char *skip)
{
	return equal(a, b, skip);
}

const char *tp_meta_name(const cJSON *obj)
{
	const char *s = tp_get_str(obj, "metadata.name");
	return s ? s : "";
}

const char *tp_meta_namespace(const cJSON *obj)
{
	const char *s = tp_get_str(obj, "metadata.namespace");
	return s ? s : "";
}

const char *tp_meta_label(const cJSON *obj, const char *key)
{
	const cJSON *labels = tp_get_object(obj, "metadata.labels");
	if (!labels)
		return NULL;
	const cJSON *v = tp_member(labels, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *tp_json_type_name(const cJSON *v)
{
	if (cJSON_IsObject(v))
		return "object";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsNumber(v))
		return tp_json_is_int(v, NULL) ? "integer" : "number";
	return "null";
}

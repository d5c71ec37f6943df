/*
 * core/object.c — reading Kubernetes objects held as cJSON trees.
 */
#include "policy/core/deadline.h"
#include "policy/core/hash.h"
#include "policy/core/internal.h"

#include <math.h>
#include <string.h>

/* The lookups by name (tp_get, tp_member, tp_find_named) count nothing into
 * the thread's deadline: they are the hottest code of every review, and
 * counting the members they pass cost 800 instructions of make bench's
 * ClusterTrainingRuntime review (callgrind); the loops that call them are
 * counted. A comparison of large objects is counted whole. */
#define UNCOUNTED_SCAN 16

static inline void charge_scan(size_t scanned)
{
	if (scanned > UNCOUNTED_SCAN)
		tp__charge(scanned);
}

/* Objects with more members than this are compared through a table of
 * one side's members (a scan of b for each member of a before: 100,000
 * labels took 36 s of the mutate route's diff). */
#define EQUAL_SCAN_MAX 16

/* cJSON's type tests without a call into libcjson: these run for every
 * field a validator reads (96,791 -> 95,268 instructions for make bench's
 * ClusterTrainingRuntime review, callgrind). */
static inline bool has_type(const cJSON *v, int type)
{
	return v && (v->type & 0xff) == type;
}

/* The member of obj whose name is the path segment at p (up to the next '.'
 * or the end), and where the segment ends in *end. The first byte rules out
 * most members inline: every validator reads its fields through here
 * (strchr, strlen and strncmp per segment before: 12,570 -> 10,520
 * instructions a ClusterTrainingRuntime review of make bench, callgrind).
 * A member whose first byte fits is compared by strncmp, the segment's end
 * found once by strchrnul: a loop a byte, testing for '.' and NUL, cost more
 * for the names that match whole (make bench's reviews, instructions a
 * request: ClusterTrainingRuntime 144,818 -> 144,650, TrainJob(mpi)
 * 148,686 -> 147,749). */
static const cJSON *segment(const cJSON *obj, const char *p, const char **end)
{
	if (!has_type(obj, cJSON_Object))
		return NULL;
	const char *e = NULL; /* where the segment ends, once a first byte fits */
	for (const cJSON *c = obj->child; c; c = c->next) {
		const char *k = c->string;
		if (!k || k[0] != p[0])
			continue;
		if (!e)
			e = strchrnul(p, '.');
		size_t n = (size_t)(e - p);
		if (!strncmp(k, p, n) && k[n] == '\0') {
			*end = e;
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

static bool equal(const cJSON *a, const cJSON *b, const char *skip);

static bool skipped(const cJSON *m, const char *skip)
{
	return skip && m->string && !strcmp(m->string, skip);
}

/* b's member of that name, the first one, through its table. */
static const cJSON *member_in(const tp_htab *t, const char *name)
{
	size_t pos = 0;
	uint64_t h = tp__hash_str(name);
	for (const cJSON *c; (c = tp__htab_next(t, h, &pos));)
		if (!strcmp(c->string, name))
			return c;
	return NULL;
}

/* Large objects: b's members in a table, then each of a's looked up. Only
 * the first member of a name is filed, as tp_member finds only that one.
 * Out of memory: 0, and the caller scans. */
static int equal_members_hashed(const cJSON *a, const cJSON *b, const char *skip, size_t nb)
{
	tp_htab t = TP_HTAB_INIT;
	if (tp__htab_reserve(&t, nb))
		return 0;
	int rc = 1;
	for (const cJSON *y = b->child; y && rc; y = y->next)
		if (y->string && !member_in(&t, y->string) &&
		    tp__htab_put(&t, tp__hash_str(y->string), y))
			rc = 0;
	for (const cJSON *x = a->child; x && rc > 0; x = x->next) {
		if (skipped(x, skip))
			continue;
		const cJSON *y = x->string ? member_in(&t, x->string) : NULL;
		if (!y || !equal(x, y, NULL))
			rc = -1;
	}
	tp__htab_free(&t);
	return rc;
}

static bool equal_members(const cJSON *a, const cJSON *b, const char *skip)
{
	size_t na = 0, nb = 0;
	for (const cJSON *x = a->child; x; x = x->next)
		na += !skipped(x, skip);
	for (const cJSON *y = b->child; y; y = y->next)
		nb += !skipped(y, skip);
	charge_scan(na + nb);
	if (na != nb)
		return false;
	if (nb > EQUAL_SCAN_MAX) {
		int rc = equal_members_hashed(a, b, skip, nb);
		if (rc)
			return rc > 0;
	}
	for (const cJSON *x = a->child; x; x = x->next) {
		if (skipped(x, skip))
			continue;
		const cJSON *y = tp_member(b, x->string ? x->string : "");
		if (!y || !equal(x, y, NULL))
			return false;
	}
	return true;
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
		size_t n = 0;
		for (; x && y; x = x->next, y = y->next, n++)
			if (!equal(x, y, NULL)) {
				charge_scan(n);
				return false;
			}
		charge_scan(n);
		return !x && !y;
	}
	case cJSON_Object:
		return equal_members(a, b, skip);
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

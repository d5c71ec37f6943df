/*
 * runtime/fields.c — the checks of a runtime's fields that the runtime
 * validators (admission/runtime*.c) and the plugins' runtime rules share:
 * typed members with the API server's type error, and the paths they are
 * reported at.
 */
#include "policy/runtime/runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PATH_MAX_LEN 320

static const char *const type_names[] = { "object", "array", "string", "integer", "boolean" };

const char *tp__rt_pathf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return buf;
}

/* Paths are built for every field visited, errors or not: plain copies
 * here, not printf, keep that cheap. Too long a path is cut, never overrun. */
static size_t put_str(char *buf, size_t n, size_t at, const char *s)
{
	size_t len = strlen(s);
	if (at + len >= n)
		len = at < n ? n - 1 - at : 0;
	memcpy(buf + at, s, len);
	buf[at + len] = '\0';
	return at + len;
}

const char *tp__rt_path(char *buf, size_t n, const char *base, const char *key)
{
	if (!n)
		return buf;
	size_t at = buf == base ? strlen(base) : put_str(buf, n, 0, base);
	if (*base)
		at = put_str(buf, n, at, ".");
	put_str(buf, n, at, key);
	return buf;
}

const char *tp__rt_index(char *buf, size_t n, const char *base, int i)
{
	char num[16], *p = num + sizeof(num);
	unsigned u = i < 0 ? 0u : (unsigned)i;
	*--p = '\0';
	*--p = ']';
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	*--p = '[';
	if (!n)
		return buf;
	size_t at = buf == base ? strlen(base) : put_str(buf, n, 0, base);
	put_str(buf, n, at, p);
	return buf;
}

static const cJSON *member(const cJSON *parent, const char *key)
{
	const cJSON *v = tp_member(parent, key);
	return cJSON_IsNull(v) ? NULL : v;
}

const cJSON *tp__rt_typed(tp_result *res, const cJSON *parent, const char *key,
			  const char *path, tp__rt_type want)
{
	const cJSON *v = member(parent, key);
	if (!v || tp__rt_has_type(v, want))
		return v;
	const char *got = tp_json_type_name(v);
	tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, got),
		      "%s in body must be of type %s: \"%s\"", path, type_names[want], got);
	return NULL;
}

bool tp__rt_int(tp_result *res, const cJSON *parent, const char *key, const char *base,
		bool report_type, long long *n)
{
	char path[PATH_MAX_LEN];
	tp__rt_path(path, sizeof(path), base, key);
	const cJSON *v = report_type ? tp__rt_typed(res, parent, key, path, TP_RT_INTEGER)
				     : tp_get(parent, key);
	return v && tp_json_is_int(v, n);
}

void tp__rt_at_least(tp_result *res, const char *base, const char *key, long long n,
		     long long min, const char *hint)
{
	char path[PATH_MAX_LEN], value[32];
	if (n >= min)
		return;
	tp__rt_pathf(value, sizeof(value), "%lld", n);
	tp_result_add(res, TP_FIELD_INVALID, tp__rt_path(path, sizeof(path), base, key), value,
		      "must be greater than or equal to %lld; %s", min, hint);
}

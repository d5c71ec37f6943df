/*
 * core/result.c — field errors and warnings, Kubernetes field.ErrorList style.
 *
 * Rendering follows apimachinery's field.Error.Error():
 *   "<path>: <Type>[: <value>][: <detail>]"
 * where Required, Forbidden, Too long, Too many and Internal error show no
 * value, and an aggregate of several errors is "[e1, e2]".
 */
#include "policy/trainpolicy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upstream's warning recorder keeps 4096 runes in all; past a handful the
 * user learns nothing more, so a result holds at most this many. */
#define MAX_WARNINGS 10

struct annotation {
	const char *key, *value;
};

struct tp_result {
	tp_arena *arena;
	tp_field_error *errors;
	size_t nerrors, caperrors;
	const char **warnings;
	const char **warning_paths; /* the field each is about, or NULL */
	size_t nwarnings, capwarnings, cappaths;
	struct annotation *annotations;
	size_t nannotations, capannotations;
	bool unavailable; /* a lookup could not be answered: decides nothing */
};

int tp_result_new(tp_result **out)
{
	if (!out)
		return TP_EINVAL;
	tp_result *r = calloc(1, sizeof(*r));
	if (!r)
		return TP_ENOMEM;
	if (tp_arena_new(&r->arena, 0)) {
		free(r);
		return TP_ENOMEM;
	}
	*out = r;
	return TP_OK;
}

void tp_result_free(tp_result *r)
{
	if (!r)
		return;
	tp_arena_free(r->arena);
	free(r);
}

void tp_result_clear(tp_result *r)
{
	tp_arena_reset(r->arena);
	r->errors = NULL;
	r->warnings = NULL;
	r->warning_paths = NULL;
	r->cappaths = 0;
	r->annotations = NULL;
	r->nerrors = r->caperrors = 0;
	r->nwarnings = r->capwarnings = 0;
	r->nannotations = r->capannotations = 0;
	r->unavailable = false;
}

void tp_result_set_unavailable(tp_result *r)
{
	if (r)
		r->unavailable = true;
}

bool tp_result_unavailable(const tp_result *r)
{
	return r && r->unavailable;
}

/* Grow an arena-backed array: the old copy stays in the arena until reset. */
static void *grow(tp_arena *a, void *arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return arr;
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p = tp_arena_alloc(a, ncap * elem);
	if (!p)
		return NULL;
	if (arr)
		memcpy(p, arr, n * elem);
	*cap = ncap;
	return p;
}

size_t tp_result_error_count(const tp_result *r)
{
	return r ? r->nerrors : 0;
}

const tp_field_error *tp_result_error_at(const tp_result *r, size_t i)
{
	return r && i < r->nerrors ? &r->errors[i] : NULL;
}

size_t tp_result_warning_count(const tp_result *r)
{
	return r ? r->nwarnings : 0;
}

const char *tp_result_warning_at(const tp_result *r, size_t i)
{
	return r && i < r->nwarnings ? r->warnings[i] : NULL;
}

size_t tp_result_annotation_count(const tp_result *r)
{
	return r ? r->nannotations : 0;
}

void tp_result_annotation_at(const tp_result *r, size_t i, const char **key, const char **value)
{
	*key = *value = NULL;
	if (r && i < r->nannotations) {
		*key = r->annotations[i].key;
		*value = r->annotations[i].value;
	}
}

int tp_result_annotate(tp_result *r, const char *key, const char *value)
{
	for (size_t i = 0; i < r->nannotations; i++)
		if (!strcmp(r->annotations[i].key, key)) {
			r->annotations[i].value = tp_arena_strdup(r->arena, value);
			return r->annotations[i].value ? TP_OK : TP_ENOMEM;
		}
	struct annotation *arr = grow(r->arena, r->annotations, r->nannotations,
				      &r->capannotations, sizeof(*arr));
	if (!arr)
		return TP_ENOMEM;
	r->annotations = arr;
	arr[r->nannotations].key = tp_arena_strdup(r->arena, key);
	arr[r->nannotations].value = tp_arena_strdup(r->arena, value);
	if (!arr[r->nannotations].key || !arr[r->nannotations].value)
		return TP_ENOMEM;
	r->nannotations++;
	return TP_OK;
}

int tp_result_add(tp_result *r, tp_field_type type, const char *path, const char *value,
		  const char *detail_fmt, ...)
{
	tp_field_error *arr = grow(r->arena, r->errors, r->nerrors, &r->caperrors, sizeof(*arr));
	if (!arr)
		return TP_ENOMEM;
	r->errors = arr;
	tp_field_error *e = &arr[r->nerrors];
	e->type = type;
	e->path = path ? tp_arena_strdup(r->arena, path) : NULL;
	e->value = value ? tp_arena_strdup(r->arena, value) : NULL;
	va_list ap;
	va_start(ap, detail_fmt);
	e->detail = tp_arena_vprintf(r->arena, detail_fmt ? detail_fmt : "", ap);
	va_end(ap);
	if (!e->detail || (path && !e->path) || (value && !e->value))
		return TP_ENOMEM;
	r->nerrors++;
	return TP_OK;
}

/* w, written in r's arena, kept as a warning at path. */
/* The API server drops a warning that holds a control character. */
void tp__warning_clean(char *w)
{
	for (char *p = w; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
}

/* w (the result's, cleaned) kept unless it is there already or there are
 * enough. */
static int keep_clean(tp_result *r, const char *path, char *w)
{
	for (size_t i = 0; i < r->nwarnings; i++)
		if (!strcmp(r->warnings[i], w))
			return TP_OK;
	if (r->nwarnings >= MAX_WARNINGS)
		return TP_OK;
	const char **arr = grow(r->arena, r->warnings, r->nwarnings, &r->capwarnings, sizeof(*arr));
	if (!arr)
		return TP_ENOMEM;
	r->warnings = arr;
	const char **paths = grow(r->arena, r->warning_paths, r->nwarnings, &r->cappaths,
				  sizeof(*paths));
	if (!paths)
		return TP_ENOMEM;
	r->warning_paths = paths;
	paths[r->nwarnings] = path ? tp_arena_strdup(r->arena, path) : NULL;
	arr[r->nwarnings++] = w;
	return TP_OK;
}

static int keep_warning(tp_result *r, const char *path, char *w)
{
	if (!w)
		return TP_ENOMEM;
	tp__warning_clean(w);
	return keep_clean(r, path, w);
}

int tp__result_warn_clean(tp_result *r, const char *w, size_t len)
{
	char *own = tp_arena_alloc(r->arena, len + 1);
	if (!own)
		return TP_ENOMEM;
	memcpy(own, w, len + 1);
	return keep_clean(r, NULL, own);
}

static int warn_v(tp_result *r, const char *path, const char *fmt, va_list ap)
{
	return keep_warning(r, path, tp_arena_vprintf(r->arena, fmt, ap));
}

int tp__result_warn_parts(tp_result *r, const char *const *parts, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(parts[i]);
	char *w = tp_arena_alloc(r->arena, len + 1), *p = w;
	for (size_t i = 0; w && i < n; i++) {
		size_t k = strlen(parts[i]);
		memcpy(p, parts[i], k);
		p += k;
	}
	if (w)
		*p = '\0';
	return keep_warning(r, NULL, w);
}

int tp_result_warn(tp_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = warn_v(r, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

int tp_result_warn_at(tp_result *r, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = warn_v(r, path, fmt, ap);
	va_end(ap);
	return rc;
}

const char *tp_result_warning_path_at(const tp_result *r, size_t i)
{
	return r && i < r->nwarnings ? r->warning_paths[i] : NULL;
}

int tp_result_append(tp_result *r, const tp_result *from)
{
	int rc = TP_OK;
	for (size_t i = 0; !rc && i < tp_result_error_count(from); i++) {
		const tp_field_error *e = &from->errors[i];
		rc = tp_result_add(r, e->type, e->path, e->value, "%s", e->detail);
	}
	for (size_t i = 0; !rc && i < tp_result_warning_count(from); i++)
		rc = tp_result_warn_at(r, from->warning_paths[i], "%s", from->warnings[i]);
	return rc;
}

static const char *type_words(tp_field_type t)
{
	switch (t) {
	case TP_FIELD_REQUIRED: return "Required value";
	case TP_FIELD_INVALID: return "Invalid value";
	case TP_FIELD_UNSUPPORTED: return "Unsupported value";
	case TP_FIELD_FORBIDDEN: return "Forbidden";
	case TP_FIELD_DUPLICATE: return "Duplicate value";
	case TP_FIELD_TOO_LONG: return "Too long";
	case TP_FIELD_TOO_MANY: return "Too many";
	case TP_FIELD_NOT_FOUND: return "Not found";
	case TP_FIELD_INTERNAL: return "Internal error";
	case TP_FIELD_PLAIN: return "";
	}
	return "";
}

int tp_field_error_format(const tp_field_error *e, tp_buf *out)
{
	int rc = 0;
	if (e->type == TP_FIELD_PLAIN)
		return tp_buf_adds(out, e->detail ? e->detail : "");
	/* no path: a rule of the whole object; a nil field.Path prints "<nil>" */
	rc |= tp_buf_addf(out, "%s: %s", e->path && *e->path ? e->path : "<nil>",
			  type_words(e->type));
	if (e->value)
		rc |= tp_buf_addf(out, ": %s", e->value);
	if (e->detail && *e->detail)
		rc |= tp_buf_addf(out, ": %s", e->detail);
	return rc ? TP_ENOMEM : TP_OK;
}

int tp_result_format(const tp_result *r, tp_buf *out)
{
	int rc = 0;
	if (r->nerrors > 1)
		rc |= tp_buf_addc(out, '[');
	for (size_t i = 0; i < r->nerrors; i++) {
		if (i)
			rc |= tp_buf_adds(out, ", ");
		rc |= tp_field_error_format(&r->errors[i], out);
	}
	if (r->nerrors > 1)
		rc |= tp_buf_addc(out, ']');
	return rc ? TP_ENOMEM : TP_OK;
}

/* Go's %q (tp_buf_add_quoted), in the result's arena. */
const char *tp_result_quote(tp_result *r, const char *s)
{
	tp_buf b = TP_BUF_INIT(1 << 20);
	int rc = tp_buf_add_quoted(&b, s);
	const char *q = rc ? "\"...\"" : tp_arena_strdup(r->arena, b.data);
	tp_buf_free(&b);
	return q;
}

const char *tp_result_value(tp_result *r, const cJSON *v)
{
	if (!v || cJSON_IsNull(v))
		return "null";
	if (cJSON_IsString(v))
		return tp_result_quote(r, v->valuestring);
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? "true" : "false";
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (isfinite(d) && d == floor(d) && fabs(d) < 9.2e18)
			return tp_arena_printf(r->arena, "%lld", (long long)d);
		return tp_arena_printf(r->arena, "%g", d);
	}
	/* Objects and arrays: compact JSON, printed outside any request arena
	 * because the text must outlive it. */
	tp_arena *prev = tp_arena_enter(NULL);
	char *s = cJSON_PrintUnformatted(v);
	tp_arena_leave(prev);
	const char *out = s ? tp_arena_strdup(r->arena, s) : "{...}";
	free(s);
	return out;
}

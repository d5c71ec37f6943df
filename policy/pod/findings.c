/*
 * pod/findings.c — the collector the Pod checks write into (pod/pod.h): the
 * path of the field being looked at, built by push and pop without printing,
 * the findings in an arena, and a hashed name set for the "unique" and
 * "exists" rules. The set hashes with core/hash.h's keyed SipHash: an
 * unkeyed hash (FNV-1a before) lets whoever writes the names make them
 * share a slot, and every lookup of the set then walks all of them.
 */
#include "policy/core/hash.h"
#include "policy/pod/pod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 8

int tp__podv_init(tp_podv *v)
{
	memset(v, 0, sizeof(*v));
	return tp_arena_new(&v->arena, 0);
}

void tp__podv_free(tp_podv *v)
{
	tp_arena_free(v->arena);
	v->arena = NULL;
	v->items = NULL;
	v->n = v->cap = 0;
}

void tp__podv_reset(tp_podv *v)
{
	tp_arena_reset(v->arena);
	v->items = NULL;
	v->n = v->cap = 0;
	v->len = 0;
	v->path[0] = '\0';
	v->list = TP_POD_NONE;
	v->container = NULL;
	v->container_len = 0;
	v->rc = TP_OK;
	/* claims and rjob are the caller's, set per job */
}

/* Append n bytes of s; a path that does not fit ends in "..." instead. */
static void append(tp_podv *v, const char *s, size_t n)
{
	if (v->len + n + 4 >= sizeof(v->path)) {
		memcpy(v->path + v->len, "...", 4);
		v->len += 3;
		return;
	}
	memcpy(v->path + v->len, s, n);
	v->len += n;
	v->path[v->len] = '\0';
}

size_t tp__podv_push(tp_podv *v, const char *member)
{
	size_t old = v->len;
	append(v, member, strlen(member));
	return old;
}

size_t tp__podv_push_member(tp_podv *v, const char *name)
{
	size_t old = v->len;
	append(v, ".", 1);
	append(v, name, strlen(name));
	return old;
}

size_t tp__podv_push_index(tp_podv *v, const char *member, int i)
{
	size_t old = v->len;
	char idx[24], *p = idx + sizeof(idx);
	unsigned u = i < 0 ? 0 : (unsigned)i;
	*--p = ']';
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	*--p = '[';
	append(v, member, strlen(member));
	append(v, p, (size_t)(idx + sizeof(idx) - p));
	return old;
}

size_t tp__podv_push_key(tp_podv *v, const char *member, const char *key)
{
	size_t old = v->len;
	append(v, member, strlen(member));
	append(v, "[", 1);
	append(v, key, strlen(key));
	append(v, "]", 1);
	return old;
}

static const char *dup(tp_podv *v, const char *s)
{
	if (!s)
		return NULL;
	const char *d = tp_arena_strdup(v->arena, s);
	if (!d)
		v->rc = TP_ENOMEM;
	return d;
}

static tp_pod_finding *slot(tp_podv *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : MIN_CAP;
		tp_pod_finding *p = tp_arena_alloc(v->arena, cap * sizeof(*p));
		if (!p)
			return NULL;
		if (v->n)
			memcpy(p, v->items, v->n * sizeof(*p));
		v->items = p;
		v->cap = cap;
	}
	return &v->items[v->n];
}

int tp__podv_add(tp_podv *v, tp_field_type type, const char *suffix, const char *value,
		 const char *hint, const char *detail_fmt, ...)
{
	size_t mark = v->len;
	if (suffix)
		append(v, suffix, strlen(suffix));
	tp_pod_finding *f = slot(v);
	va_list ap;
	va_start(ap, detail_fmt);
	const char *detail = tp_arena_vprintf(v->arena, detail_fmt, ap);
	va_end(ap);
	if (f && detail) {
		*f = (tp_pod_finding){ .type = type, .detail = detail, .list = v->list,
				       .container = v->container };
		f->path = dup(v, v->path);
		f->value = dup(v, value);
		f->hint = dup(v, hint);
		f->rel = f->path && v->container ? f->path + v->container_len : NULL;
		if (f->path)
			v->n++;
	} else {
		v->rc = TP_ENOMEM;
	}
	tp__podv_pop(v, mark);
	return v->rc;
}

int tp__podv_append(tp_podv *v, const tp_pod_finding *f)
{
	tp_pod_finding *at = slot(v);
	if (!at)
		return v->rc = TP_ENOMEM;
	*at = *f;
	v->n++;
	return v->rc;
}

const char *tp__podv_printf(tp_podv *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const char *s = tp_arena_vprintf(v->arena, fmt, ap);
	va_end(ap);
	if (!s)
		v->rc = TP_ENOMEM;
	return s;
}

/* Go's %q (tp_buf_add_quoted) for the texts manifests hold. */
const char *tp__podv_quote(tp_podv *v, const char *s)
{
	tp_buf b = TP_BUF_INIT(1 << 16);
	const char *q = tp_buf_add_quoted(&b, s) ? "\"...\"" : dup(v, b.data);
	tp_buf_free(&b);
	return q;
}

const char *tp__podv_int(tp_podv *v, long long n)
{
	return tp__podv_printf(v, "%lld", n);
}

const char *tp__podv_json(tp_podv *v, const cJSON *j)
{
	tp_buf b = TP_BUF_INIT(1 << 16);
	const char *s = tp_json_write(j, &b) == TP_OK ? dup(v, b.data) : "{...}";
	tp_buf_free(&b);
	return s;
}

int tp__podv_to_result(const tp_podv *v, tp_result *res)
{
	int rc = v->rc;
	for (size_t i = 0; !rc && i < v->n; i++) {
		const tp_pod_finding *f = &v->items[i];
		/* a template checked without a prefix: "spec.containers...", no dot */
		const char *path = f->path[0] == '.' ? f->path + 1 : f->path;
		rc = tp_result_add(res, f->type, path, f->value, "%s", f->detail);
	}
	return rc;
}

/* ------------------------------------------------------------ DNS labels */

static bool label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static bool alnum_end(char c)
{
	return label_char(c) && c != '-';
}

/* The shape of a label ([a-z0-9]([-a-z0-9]*[a-z0-9])?), any length. */
static bool label_shape(const char *s, size_t n)
{
	if (!n || !alnum_end(s[0]) || !alnum_end(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!label_char(s[i]))
			return false;
	return true;
}

static bool subdomain_shape(const char *s)
{
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (!label_shape(p, n))
			return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

#define DNS1123_LABEL_MSG                                                                      \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " \
	"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', " \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

/* A good name (all but every one) passes core/names.c's check, a table
 * lookup a byte; the shapes above only word what is wrong with a bad one. */
int tp__pod_dns_label(tp_podv *v, const char *suffix, const char *name, const char *hint)
{
	if (!tp__check_dns1123_label(name))
		return v->rc;
	size_t n = strlen(name);
	const char *q = tp__podv_quote(v, name);
	if (n > 63)
		tp__podv_add(v, TP_FIELD_INVALID, suffix, q, hint, "must be no more than 63 characters");
	if (!label_shape(name, n))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, q, hint, "%s",
			     subdomain_shape(name) ? "must not contain dots" : DNS1123_LABEL_MSG);
	return v->rc;
}

/* ------------------------------------------------------------ name sets */

void tp__nameset_init(tp_nameset *s, tp_arena *a)
{
	*s = (tp_nameset){ .arena = a };
}

/* A set of up to 8 names (16 slots, half full at most) is a walk of its
 * filled slots, which come first: no hash to compute for a Pod's usual few
 * containers, volumes and ports. */
#define WALKED_CAP 16

static size_t find(const char **slots, size_t cap, const char *name)
{
	size_t i = 0;
	if (cap <= WALKED_CAP) {
		while (slots[i] && strcmp(slots[i], name))
			i++;
		return i;
	}
	i = (size_t)tp__hash_str(name) & (cap - 1);
	while (slots[i] && strcmp(slots[i], name))
		i = (i + 1) & (cap - 1);
	return i;
}

bool tp__nameset_has(const tp_nameset *s, const char *name)
{
	return s->cap && name && s->slots[find(s->slots, s->cap, name)];
}

const void *tp__nameset_get(const tp_nameset *s, const char *name)
{
	if (!s->cap || !name)
		return NULL;
	size_t i = find(s->slots, s->cap, name);
	return s->slots[i] ? s->vals[i] : NULL;
}

static int grow(tp_nameset *s)
{
	size_t cap = s->cap ? s->cap * 2 : WALKED_CAP;
	const char **slots = tp_arena_alloc(s->arena, cap * sizeof(*slots));
	const void **vals = tp_arena_alloc(s->arena, cap * sizeof(*vals));
	if (!slots || !vals)
		return TP_ENOMEM;
	memset(slots, 0, cap * sizeof(*slots));
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i]) {
			size_t at = find(slots, cap, s->slots[i]);
			slots[at] = s->slots[i];
			vals[at] = s->vals[i];
		}
	s->slots = slots;
	s->vals = vals;
	s->cap = cap;
	return TP_OK;
}

int tp__nameset_put(tp_nameset *s, const char *name, const void *val)
{
	if (!name)
		return TP_OK;
	if ((s->n + 1) * 2 > s->cap && grow(s))
		return TP_ENOMEM;
	size_t at = find(s->slots, s->cap, name);
	if (!s->slots[at]) {
		s->slots[at] = name;
		s->vals[at] = val;
		s->n++;
	}
	return TP_OK;
}

int tp__nameset_add(tp_nameset *s, const char *name)
{
	return tp__nameset_put(s, name, name);
}

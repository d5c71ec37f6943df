/*
 * load/load.c — tp_load: YAML or JSON bytes into Kubernetes objects.
 *
 * Everything that does not depend on the syntax lives here: the hard limits
 * checked before any parsing (total size, NUL bytes, UTF-8), the choice
 * between the JSON fast path and libyaml, and what happens to each parsed
 * document (it must be a mapping; kind: List is expanded into its items).
 */
#include "policy/load/load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1024 * 1024)

void tp_load_limits_default(tp_load_limits *l)
{
	if (!l)
		return;
	l->max_doc_bytes = 3 * MIB;
	l->max_total_bytes = 64 * MIB;
	l->max_depth = 100;
	l->max_aliases = 100;
	l->max_docs = 10000;
}

/* A zero field keeps its default, so callers may set only what they mean. */
static void limits_resolve(tp_load_limits *out, const tp_load_limits *in)
{
	tp_load_limits_default(out);
	if (!in)
		return;
	if (in->max_doc_bytes)
		out->max_doc_bytes = in->max_doc_bytes;
	if (in->max_total_bytes)
		out->max_total_bytes = in->max_total_bytes;
	if (in->max_depth > 0)
		out->max_depth = in->max_depth;
	if (in->max_aliases)
		out->max_aliases = in->max_aliases;
	if (in->max_docs)
		out->max_docs = in->max_docs;
}

int tp__load_fail(tp_loader *ld, int code, int doc, int line, int col, const char *fmt, ...)
{
	tp_load_error *e = ld->err;
	e->code = code;
	e->doc = doc;
	e->line = line;
	e->column = col;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void tp__load_position(const char *data, size_t off, int *line, int *col)
{
	int l = 1;
	size_t bol = 0;
	for (const char *p = data; (p = memchr(p, '\n', off - (size_t)(p - data))) != NULL; p++) {
		l++;
		bol = (size_t)(p - data) + 1;
	}
	int c = 1;
	for (size_t i = bol; i < off; i++)
		if (((unsigned char)data[i] & 0xC0) != 0x80) /* count characters, not bytes */
			c++;
	*line = l;
	*col = c;
}

/* ------------------------------------------------------------ the result */

static int docs_push(tp_docs *d, cJSON *obj, int doc, int item, int line)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		tp_doc *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return TP_ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = (tp_doc){ .obj = obj, .index = doc, .item = item, .line = line };
	return TP_OK;
}

static void json_delete(const tp_loader *ld, cJSON *obj)
{
	/* In an arena cJSON_Delete would only walk the tree to free nothing. */
	if (!ld->docs->in_arena)
		cJSON_Delete(obj);
}

static int count_object(tp_loader *ld, int doc)
{
	if (++ld->objects > ld->lim.max_docs)
		return tp__load_fail(ld, TP_ELIMIT, doc, 0, 0,
				     "more than %zu objects (the limit); split the input into smaller files",
				     ld->lim.max_docs);
	return TP_OK;
}

static bool is_v1_list(const cJSON *obj)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	const cJSON *api = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
	return cJSON_IsString(kind) && !strcmp(kind->valuestring, "List") && cJSON_IsString(api) &&
	       !strcmp(api->valuestring, "v1");
}

static const char *json_type_name(const cJSON *v)
{
	if (cJSON_IsArray(v))
		return "a sequence";
	if (cJSON_IsNull(v))
		return "null";
	return "a scalar";
}

/* kind: List (apiVersion v1), as kubectl reads it: every item one object. */
static int add_list(tp_loader *ld, cJSON *list, int doc, int line)
{
	cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
	if (items && !cJSON_IsArray(items) && !cJSON_IsNull(items)) {
		json_delete(ld, list);
		return tp__load_fail(ld, TP_EPARSE, doc, line, 0,
				     "items of a kind: List must be a list of objects");
	}
	int n = 0;
	for (cJSON *it = items ? items->child : NULL; it; it = it->next) {
		n++;
		if (!cJSON_IsObject(it)) {
			const char *what = json_type_name(it);
			json_delete(ld, list);
			return tp__load_fail(ld, TP_EPARSE, doc, line, 0,
					     "item %d of the List is %s, not a Kubernetes object (a mapping)",
					     n, what);
		}
	}
	n = 0;
	while (items && items->child) {
		cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
		int rc = count_object(ld, doc);
		if (!rc)
			rc = docs_push(ld->docs, it, doc, ++n, line);
		if (rc) {
			json_delete(ld, it);
			json_delete(ld, list);
			return rc == TP_ENOMEM ? tp__load_fail(ld, rc, doc, line, 0, "out of memory") : rc;
		}
	}
	json_delete(ld, list);
	return TP_OK;
}

int tp__load_add(tp_loader *ld, cJSON *obj, int doc, int line)
{
	ld->nonempty++;
	if (is_v1_list(obj))
		return add_list(ld, obj, doc, line);
	int rc = count_object(ld, doc);
	if (!rc)
		rc = docs_push(ld->docs, obj, doc, 0, line);
	if (rc) {
		json_delete(ld, obj);
		if (rc == TP_ENOMEM)
			tp__load_fail(ld, rc, doc, line, 0, "out of memory");
	}
	return rc;
}

/* ------------------------------------------------------ whole-input checks */

static bool word_has_high_or_zero(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	return ((w | ((w - ones) & ~w)) & highs) != 0;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one:
 * overlong forms, surrogates and code points past U+10FFFF are refused. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (left < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* One linear pass: no NUL byte, valid UTF-8. Offsets in the messages are
 * 0-based byte offsets, as hexdump and cmp show them. */
static int check_bytes(tp_loader *ld)
{
	const unsigned char *p = (const unsigned char *)ld->data;
	size_t len = ld->len, i = 0;
	while (i < len) {
		if (len - i >= 8 && !word_has_high_or_zero(p + i)) {
			i += 8;
			continue;
		}
		if (p[i] == 0)
			return tp__load_fail(ld, TP_EPARSE, 0, 0, 0,
					     "binary data: NUL byte at offset %zu", i);
		size_t n = utf8_seq(p + i, len - i);
		if (n == 0) {
			int line, col;
			tp__load_position(ld->data, i, &line, &col);
			return tp__load_fail(ld, TP_EPARSE, 0, 0, 0,
					     "invalid UTF-8 at byte %zu (line %d)", i, line);
		}
		i += n;
	}
	return TP_OK;
}

static size_t skip_bom(const char *d, size_t len)
{
	return len >= 3 && !memcmp(d, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

/* JSON when the first meaningful byte opens an object or array, the same
 * sniff Kubernetes' YAMLOrJSONDecoder uses. */
static bool looks_like_json(const char *d, size_t len, size_t start)
{
	for (size_t i = start; i < len; i++) {
		char c = d[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		return c == '{' || c == '[';
	}
	return false;
}

/* ------------------------------------------------------------- public API */

static void docs_clear(tp_docs *d)
{
	if (!d->in_arena)
		for (size_t i = 0; i < d->n; i++)
			cJSON_Delete(d->v[i].obj);
	d->n = 0;
}

int tp_load(const char *data, size_t len, const tp_load_limits *limits, tp_docs **out,
	    tp_load_error *err)
{
	tp_load_error scratch;
	if (!err)
		err = &scratch;
	memset(err, 0, sizeof(*err));
	if (out)
		*out = NULL;
	tp_loader ld = { .data = data, .len = len, .err = err };
	if (!out || (!data && len)) {
		return tp__load_fail(&ld, TP_EINVAL, 0, 0, 0, "no input given");
	}
	limits_resolve(&ld.lim, limits);
	if (len > ld.lim.max_total_bytes)
		return tp__load_fail(&ld, TP_ELIMIT, 0, 0, 0,
				     "the input is %zu bytes, over the limit of %zu bytes",
				     len, ld.lim.max_total_bytes);
	tp_json_init();
	ld.docs = calloc(1, sizeof(*ld.docs));
	if (!ld.docs)
		return tp__load_fail(&ld, TP_ENOMEM, 0, 0, 0, "out of memory");
	ld.docs->in_arena = tp_arena_current() != NULL;
	if (!data)
		data = ld.data = "";

	int rc = check_bytes(&ld);
	if (!rc) {
		size_t start = skip_bom(data, len);
		rc = looks_like_json(data, len, start) ? tp__load_json(&ld, start)
						       : tp__load_yaml(&ld, start);
	}
	if (!rc && ld.nonempty == 0)
		rc = tp__load_fail(&ld, TP_EPARSE, 0, 0, 0,
				   "no YAML or JSON document found (the input is empty)");
	if (rc) {
		tp_docs_free(ld.docs);
		return rc;
	}
	*out = ld.docs;
	return TP_OK;
}

size_t tp_docs_count(const tp_docs *d)
{
	return d ? d->n : 0;
}

const tp_doc *tp_docs_at(const tp_docs *d, size_t i)
{
	return d && i < d->n ? &d->v[i] : NULL;
}

cJSON *tp_docs_take(tp_docs *d, size_t i)
{
	if (!d || i >= d->n)
		return NULL;
	cJSON *o = d->v[i].obj;
	d->v[i].obj = NULL;
	return o;
}

void tp_docs_free(tp_docs *d)
{
	if (!d)
		return;
	docs_clear(d);
	free(d->v);
	free(d);
}

int tp_load_error_format(const tp_load_error *err, const char *name, tp_buf *out)
{
	if (!err || !out)
		return TP_EINVAL;
	int rc = TP_OK;
	if (name && *name)
		rc = tp_buf_addf(out, "%s: ", name);
	if (!rc && err->doc > 0)
		rc = tp_buf_addf(out, "document %d", err->doc);
	if (!rc && err->line > 0)
		rc = tp_buf_addf(out, "%sline %d", err->doc > 0 ? ", " : "", err->line);
	if (!rc && err->line > 0 && err->column > 0)
		rc = tp_buf_addf(out, ", column %d", err->column);
	if (!rc && (err->doc > 0 || err->line > 0))
		rc = tp_buf_adds(out, ": ");
	if (!rc)
		rc = tp_buf_adds(out, err->msg[0] ? err->msg : tp_strerror(err->code));
	return rc;
}

/* ----------------------------------------------------- shared small tools */

void tp__json_link(cJSON *parent, cJSON **tail, cJSON *item)
{
	item->next = NULL;
	if (!parent->child) {
		parent->child = item;
		item->prev = item;
	} else {
		cJSON *last = *tail ? *tail : parent->child->prev;
		last->next = item;
		item->prev = last;
		parent->child->prev = item;
	}
	*tail = item;
}

static size_t str_hash(const char *s)
{
	size_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int keyset_grow(tp_keyset *ks)
{
	size_t cap = ks->cap ? ks->cap * 2 : 32;
	const char **slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return TP_ENOMEM;
	for (size_t i = 0; i < ks->cap; i++) {
		if (!ks->slot[i])
			continue;
		size_t j = str_hash(ks->slot[i]) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = ks->slot[i];
	}
	free(ks->slot);
	ks->slot = slot;
	ks->cap = cap;
	return TP_OK;
}

int tp__keyset_put(tp_keyset *ks, const char *key)
{
	if ((ks->n + 1) * 2 > ks->cap && keyset_grow(ks))
		return TP_ENOMEM;
	size_t j = str_hash(key) & (ks->cap - 1);
	for (; ks->slot[j]; j = (j + 1) & (ks->cap - 1))
		if (!strcmp(ks->slot[j], key))
			return 0;
	ks->slot[j] = key;
	ks->n++;
	return 1;
}

void tp__keyset_free(tp_keyset *ks)
{
	free(ks->slot);
	ks->slot = NULL;
	ks->cap = ks->n = 0;
}

#define KEYSET_FROM 16 /* members before a hash set beats a linear scan */

int tp__key_is_new(const cJSON *obj, size_t count, tp_keyset *ks, const char *key)
{
	if (count < KEYSET_FROM) {
		for (const cJSON *c = obj->child; c; c = c->next)
			if (c->string && !strcmp(c->string, key))
				return 0;
		return 1;
	}
	if (ks->n == 0)
		for (const cJSON *c = obj->child; c; c = c->next)
			if (c->string && tp__keyset_put(ks, c->string) < 0)
				return TP_ENOMEM;
	return tp__keyset_put(ks, key);
}

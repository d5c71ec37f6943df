/*
 * load/common.c — what both parsers (load/json.c, load/yaml.c) hand their
 * work to, below them: errors with their position, each document's root
 * object into the result (kind: List expanded, the object count checked),
 * and the small tools they share (linking children, duplicate keys).
 * load/load.c, the dispatcher above the parsers, never calls back down here
 * but through them.
 */
#include "policy/load/load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ errors */

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

/* ----------------------------------------------------- shared small tools */

#define KEYSET_FROM 16 /* members before a hash set beats a linear scan */

int tp__key_is_new(const cJSON *obj, size_t count, tp_strset *ks, const char *key)
{
	if (count < KEYSET_FROM) {
		/* tp_member's loop, inline: the first byte settles most pairs
		 * without a call (a call to tp_member per member read cost 2,000
		 * instructions a ClusterTrainingRuntime review, callgrind) */
		for (const cJSON *c = obj->child; c; c = c->next)
			if (c->string && c->string[0] == key[0] && !strcmp(c->string, key))
				return 0;
		return 1;
	}
	if (ks->tab.count == 0)
		for (const cJSON *c = obj->child; c; c = c->next)
			if (c->string && tp__strset_add(ks, c->string, NULL))
				return TP_ENOMEM;
	bool fresh;
	return tp__strset_add(ks, key, &fresh) ? TP_ENOMEM : fresh;
}

int tp__load_late(tp_loader *ld)
{
	return tp__load_fail(ld, TP_ETIMEDOUT, 0, 0, 0,
			     "%s, while the input (%zu bytes) was read: allow more time, or "
			     "send a smaller input", tp_strerror(TP_ETIMEDOUT), ld->len);
}

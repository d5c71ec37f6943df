/*
 * patch/jsonpatch.c — RFC 6902 JSON Patch (diff and apply) over RFC 6901 JSON
 * Pointers: what a mutating webhook answers with, and what tests and the
 * CLI use to check an answer.
 *
 * The diff is plain and deterministic rather than minimal: members are
 * visited in the source object's order (removes and recursion), then the
 * target's new members in its order; arrays are compared index by index
 * over their common prefix, then shrink from the end or grow at the end.
 * Every op's value is a fresh copy, so the ops never share nodes with the
 * inputs.
 */
#include "policy/core/deadline.h"
#include "policy/core/index.h"
#include "policy/core/internal.h"

#include <stdlib.h>
#include <string.h>

#define PATH_LIMIT (1u << 20)

int tp_jsonpointer_escape(const char *token, tp_buf *out)
{
	if (!token || !out)
		return TP_EINVAL;
	for (const char *p = token; *p; p++) {
		int rc = *p == '~' ? tp_buf_adds(out, "~0")
			 : *p == '/' ? tp_buf_adds(out, "~1")
				     : tp_buf_addc(out, *p);
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* ------------------------------------------------------------------ diff */

struct differ {
	tp_buf path;
	cJSON *ops;
};

static int add_op(struct differ *d, const char *op, const cJSON *value)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(d->ops, o)) {
		cJSON_Delete(o);
		return TP_ENOMEM;
	}
	if (!cJSON_AddStringToObject(o, "op", op) ||
	    !cJSON_AddStringToObject(o, "path", d->path.data ? d->path.data : ""))
		return TP_ENOMEM;
	if (value) {
		cJSON *v = cJSON_Duplicate(value, 1);
		if (!v || !cJSON_AddItemToObject(o, "value", v)) {
			cJSON_Delete(v);
			return TP_ENOMEM;
		}
	}
	return TP_OK;
}

static void path_cut(struct differ *d, size_t mark)
{
	if (d->path.data) {
		d->path.len = mark;
		d->path.data[mark] = '\0';
	}
}

static int path_member(struct differ *d, const char *name)
{
	int rc = tp_buf_addc(&d->path, '/');
	return rc ? rc : tp_jsonpointer_escape(name, &d->path);
}

static int diff_value(struct differ *d, const cJSON *a, const cJSON *b);

static int diff_member(struct differ *d, const char *name, const char *op, const cJSON *a,
		       const cJSON *b)
{
	size_t mark = d->path.len;
	int rc = path_member(d, name);
	if (rc == TP_OK)
		rc = a ? diff_value(d, a, b) : add_op(d, op, b);
	path_cut(d, mark);
	return rc;
}

/* Each side's members are found through an index of the other: a scan of
 * b for every member of a made 100,000 labels cost 36 s of the mutate
 * route. */
static int diff_object(struct differ *d, const cJSON *a, const cJSON *b)
{
	tp_index ia, ib;
	int rc = tp__index_members(&ib, b);
	if (!rc)
		rc = tp__index_members(&ia, a);
	else
		tp__index_members(&ia, NULL);
	for (const cJSON *x = a->child; x && !rc; x = x->next) {
		if (!x->string || (rc = tp__tick(1)))
			continue;
		const cJSON *y = tp__index_member(&ib, x->string);
		rc = y ? diff_member(d, x->string, NULL, x, y)
		       : diff_member(d, x->string, "remove", NULL, NULL);
	}
	for (const cJSON *y = b->child; y && !rc; y = y->next)
		if (y->string && !(rc = tp__tick(1)) && !tp__index_member(&ia, y->string))
			rc = diff_member(d, y->string, "add", NULL, y);
	tp__index_free(&ia);
	tp__index_free(&ib);
	return rc;
}

static int diff_index(struct differ *d, int i, const char *op, const cJSON *a, const cJSON *b)
{
	size_t mark = d->path.len;
	int rc = tp_buf_addf(&d->path, "/%d", i);
	if (rc == TP_OK)
		rc = a ? diff_value(d, a, b) : add_op(d, op, b);
	path_cut(d, mark);
	return rc;
}

static int diff_array(struct differ *d, const cJSON *a, const cJSON *b)
{
	const cJSON *x = a->child, *y = b->child;
	int i = 0, rc = TP_OK;
	for (; x && y && !rc; x = x->next, y = y->next, i++)
		if (!(rc = tp__tick(1)))
			rc = diff_index(d, i, NULL, x, y);
	if (rc)
		return rc;
	/* Surplus elements go from the end backwards, so each index is still
	 * valid when its remove applies. */
	int na = cJSON_GetArraySize(a);
	for (int j = na - 1; j >= i && !rc; j--)
		if (!(rc = tp__tick(1)))
			rc = diff_index(d, j, "remove", NULL, NULL);
	for (; y && !rc; y = y->next, i++)
		if (!(rc = tp__tick(1)))
			rc = diff_index(d, i, "add", NULL, y);
	return rc;
}

static int type_of(const cJSON *v)
{
	return v->type & 0xff;
}

static int diff_value(struct differ *d, const cJSON *a, const cJSON *b)
{
	if (type_of(a) == type_of(b)) {
		if (cJSON_IsObject(a))
			return diff_object(d, a, b);
		if (cJSON_IsArray(a))
			return diff_array(d, a, b);
		if (tp_json_equal(a, b))
			return TP_OK;
	}
	return add_op(d, "replace", b);
}

int tp_jsonpatch_diff(const cJSON *from, const cJSON *to, cJSON **out)
{
	if (!out)
		return TP_EINVAL;
	*out = NULL;
	if (!from || !to)
		return TP_EINVAL;
	struct differ d = { .path = TP_BUF_INIT(PATH_LIMIT), .ops = cJSON_CreateArray() };
	if (!d.ops)
		return TP_ENOMEM;
	int rc = tp__deadline_status(diff_value(&d, from, to));
	tp_buf_free(&d.path);
	if (rc) {
		cJSON_Delete(d.ops);
		return rc;
	}
	*out = d.ops;
	return TP_OK;
}

/* ----------------------------------------------------------------- apply */

/* A parsed JSON Pointer: the tokens, unescaped, in one buffer. */
struct pointer {
	char *buf;
	char **tok;
	size_t n;
};

static void pointer_free(struct pointer *p)
{
	free(p->buf);
	free(p->tok);
}

/* Unescape one token in place: "~1" -> "/", "~0" -> "~" in one left-to-right
 * pass (so "~01" is "~1", as RFC 6901's order of replacements demands). */
static bool unescape(char *t)
{
	char *w = t;
	for (const char *r = t; *r; r++) {
		if (*r != '~') {
			*w++ = *r;
			continue;
		}
		if (r[1] != '0' && r[1] != '1')
			return false;
		*w++ = r[1] == '0' ? '~' : '/';
		r++;
	}
	*w = '\0';
	return true;
}

static int pointer_parse(const char *s, struct pointer *p)
{
	memset(p, 0, sizeof(*p));
	if (!s || (*s && *s != '/'))
		return TP_ECONFLICT;
	if (!*s)
		return TP_OK; /* the whole document */
	size_t n = 0;
	for (const char *c = s; *c; c++)
		n += *c == '/';
	p->buf = strdup(s + 1);
	p->tok = calloc(n, sizeof(*p->tok));
	if (!p->buf || !p->tok) {
		pointer_free(p);
		return TP_ENOMEM;
	}
	char *t = p->buf;
	for (size_t i = 0; i < n; i++) {
		char *slash = strchr(t, '/');
		if (slash)
			*slash = '\0';
		p->tok[p->n++] = t;
		if (!unescape(t)) {
			pointer_free(p);
			return TP_ECONFLICT;
		}
		t = slash ? slash + 1 : t + strlen(t);
	}
	return TP_OK;
}

/* An array index token: digits, no leading zero, within [0, limit]. */
static bool parse_index(const char *t, int limit, int *out)
{
	if (!*t || (t[0] == '0' && t[1]))
		return false;
	long v = 0;
	for (const char *c = t; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (*c - '0');
		if (v > limit)
			return false;
	}
	*out = (int)v;
	return true;
}

static cJSON *child_of(cJSON *node, const char *tok)
{
	if (cJSON_IsObject(node))
		return cJSON_GetObjectItemCaseSensitive(node, tok);
	int i;
	if (cJSON_IsArray(node) && parse_index(tok, cJSON_GetArraySize(node) - 1, &i))
		return cJSON_GetArrayItem(node, i);
	return NULL;
}

/* The node the first n tokens name, or NULL. */
static cJSON *walk(cJSON *root, const struct pointer *p, size_t n)
{
	cJSON *node = root;
	for (size_t i = 0; node && i < n; i++)
		node = child_of(node, p->tok[i]);
	return node;
}

/* Insert value at index i of an array of size elements. Debian's cJSON
 * 1.7.15 build refuses cJSON_InsertItemInArray in the middle of an array,
 * so: append, then rotate the elements that were at i.. behind it. */
static bool insert_at(cJSON *arr, int i, int size, cJSON *value)
{
	if (!cJSON_AddItemToArray(arr, value))
		return false;
	for (int k = i; k < size; k++)
		if (!cJSON_AddItemToArray(arr, cJSON_DetachItemFromArray(arr, i)))
			return false;
	return true;
}

/* Put value (taken) at p: the add operation. */
static int put_at(cJSON **root, const struct pointer *p, cJSON *value)
{
	if (p->n == 0) {
		cJSON_Delete(*root);
		*root = value;
		return TP_OK;
	}
	cJSON *parent = walk(*root, p, p->n - 1);
	const char *last = p->tok[p->n - 1];
	bool ok = false;
	if (cJSON_IsObject(parent)) {
		ok = cJSON_GetObjectItemCaseSensitive(parent, last)
			     ? cJSON_ReplaceItemInObjectCaseSensitive(parent, last, value)
			     : cJSON_AddItemToObject(parent, last, value);
	} else if (cJSON_IsArray(parent)) {
		int size = cJSON_GetArraySize(parent), i;
		if (!strcmp(last, "-"))
			ok = cJSON_AddItemToArray(parent, value);
		else if (parse_index(last, size, &i))
			ok = insert_at(parent, i, size, value);
	}
	if (!ok) {
		cJSON_Delete(value);
		return TP_ECONFLICT;
	}
	return TP_OK;
}

/* Swap the node at p, which must exist, for value (taken): replace. */
static int replace_at(cJSON **root, const struct pointer *p, cJSON *value)
{
	if (p->n == 0)
		return put_at(root, p, value);
	cJSON *parent = walk(*root, p, p->n - 1);
	cJSON *node = child_of(parent, p->tok[p->n - 1]);
	bool ok = false;
	if (node && cJSON_IsObject(parent))
		ok = cJSON_ReplaceItemInObjectCaseSensitive(parent, p->tok[p->n - 1], value);
	else if (node)
		ok = cJSON_ReplaceItemViaPointer(parent, node, value);
	if (!ok) {
		cJSON_Delete(value);
		return TP_ECONFLICT;
	}
	return TP_OK;
}

/* Detach the node at p (which must exist and not be the root). */
static cJSON *take_at(cJSON *root, const struct pointer *p)
{
	if (p->n == 0)
		return NULL;
	cJSON *parent = walk(root, p, p->n - 1);
	cJSON *node = child_of(parent, p->tok[p->n - 1]);
	return node ? cJSON_DetachItemViaPointer(parent, node) : NULL;
}

static const char *op_str(const cJSON *op, const char *member)
{
	return tp_get_str(op, member);
}

/* A copy of op.value, or of the node at op.from; NULL when neither is there. */
static cJSON *value_copy(cJSON *root, const cJSON *op, bool from)
{
	const cJSON *v = NULL;
	if (!from) {
		v = cJSON_GetObjectItemCaseSensitive(op, "value");
	} else {
		struct pointer f;
		if (pointer_parse(op_str(op, "from"), &f))
			return NULL;
		v = walk(root, &f, f.n);
		pointer_free(&f);
	}
	return v ? cJSON_Duplicate(v, 1) : NULL;
}

/* A location cannot be moved into one of its own children. */
static bool moves_into_itself(const char *from, const char *path)
{
	size_t n = strlen(from);
	return !strncmp(from, path, n) && path[n] == '/';
}

static int do_move(cJSON **root, const cJSON *op, const struct pointer *p)
{
	const char *from = op_str(op, "from");
	if (!from || moves_into_itself(from, op_str(op, "path")))
		return TP_ECONFLICT;
	struct pointer f;
	int rc = pointer_parse(from, &f);
	if (rc)
		return rc;
	cJSON *v = f.n == 0 ? NULL : take_at(*root, &f);
	pointer_free(&f);
	if (!v)
		return TP_ECONFLICT;
	return put_at(root, p, v);
}

static int do_op(cJSON **root, const cJSON *op, const struct pointer *p)
{
	const char *name = op_str(op, "op");
	if (!name)
		return TP_ECONFLICT;
	if (!strcmp(name, "add") || !strcmp(name, "copy")) {
		cJSON *v = value_copy(*root, op, name[0] == 'c');
		return v ? put_at(root, p, v) : TP_ECONFLICT;
	}
	if (!strcmp(name, "remove")) {
		cJSON *v = take_at(*root, p);
		cJSON_Delete(v);
		return v ? TP_OK : TP_ECONFLICT;
	}
	if (!strcmp(name, "replace")) {
		cJSON *v = value_copy(*root, op, false);
		return v ? replace_at(root, p, v) : TP_ECONFLICT;
	}
	if (!strcmp(name, "move"))
		return do_move(root, op, p);
	if (!strcmp(name, "test")) {
		const cJSON *want = cJSON_GetObjectItemCaseSensitive(op, "value");
		const cJSON *have = walk(*root, p, p->n);
		return want && have && tp_json_equal(want, have) ? TP_OK : TP_ECONFLICT;
	}
	return TP_ECONFLICT;
}

static int apply_one(cJSON **root, const cJSON *op)
{
	if (!cJSON_IsObject(op))
		return TP_ECONFLICT;
	struct pointer p;
	int rc = pointer_parse(op_str(op, "path"), &p);
	if (rc)
		return rc == TP_ENOMEM ? rc : TP_ECONFLICT;
	rc = do_op(root, op, &p);
	pointer_free(&p);
	return rc;
}

int tp_jsonpatch_apply(const cJSON *doc, const cJSON *ops, cJSON **out)
{
	if (!out)
		return TP_EINVAL;
	*out = NULL;
	if (!doc || !cJSON_IsArray(ops))
		return TP_EINVAL;
	cJSON *root = cJSON_Duplicate(doc, 1);
	if (!root)
		return TP_ENOMEM;
	int rc = TP_OK;
	for (const cJSON *op = ops->child; op && !rc; op = op->next)
		if (!(rc = tp__tick(1)))
			rc = apply_one(&root, op);
	if (rc) {
		cJSON_Delete(root);
		return rc == TP_ENOMEM || rc == TP_ETIMEDOUT ? rc : TP_ECONFLICT;
	}
	*out = root;
	return TP_OK;
}

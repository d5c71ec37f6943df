/*
 * load/yaml.c — YAML documents into cJSON, through libyaml's event parser.
 *
 * libyaml reads the caller's bytes in place and hands out one event at a
 * time; the tree is built with an explicit stack of open containers, so no
 * input can make this code recurse deeper than max_depth. What the loader
 * does, and why:
 *
 *  - scalars are typed as sigs.k8s.io/yaml (go-yaml v2) types them
 *    (load/scalar.c); non-string mapping keys become their text ("true");
 *  - anchors live for one document; an alias copies its node. Alias uses
 *    are capped by max_aliases and copied nodes by TP_LOAD_MAX_ALIAS_NODES,
 *    so a "billion laughs" document fails after a bounded amount of work
 *    (load/yaml_anchors.c);
 *  - merge keys (<<) follow the YAML merge spec: keys written in the mapping
 *    win over merged ones, and earlier merged mappings over later ones
 *    (load/yaml_anchors.c);
 *  - a key written twice in one mapping is an error, as in sigs.k8s.io/yaml's
 *    strict mode: mapping key "x" already defined at line N;
 *  - each event counts a step of the thread's deadline (core/deadline.h):
 *    a long input stops with TP_ETIMEDOUT once it has passed;
 *  - a document that is empty (only comments, or null) is skipped;
 *  - values JSON cannot hold (.inf, .nan, strings with a NUL) are errors, as
 *    sigs.k8s.io/yaml's JSON conversion fails on them too;
 *  - with tp_load_limits.skip, string members the caller has no use for are
 *    never built (a CRD's schema descriptions: most of its text); their keys
 *    are kept with the mapping, so a duplicate is still one;
 *  - integers are stored as doubles, like every cJSON number: beyond 2^53
 *    they round, exactly as the JSON path rounds them.
 *
 * Each document's size is its span in the input, from libyaml's marks
 * (which count characters: bytes for ASCII text). The builder's state and
 * memory are load/yaml_build.h's and load/yaml_build.c's.
 */
#include "policy/load/yaml_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* ------------------------------------------------------------ the builder */

static bool wants_key(const ybuild *b)
{
	const frame *f = b->depth ? &b->st[b->depth - 1] : NULL;
	return f && cJSON_IsObject(f->node) && !f->key && !f->key_merge;
}

static int key_line_push(ybuild *b, frame *f, int line)
{
	if (grow((void **)&f->key_lines, f->count, &f->key_lines_cap, sizeof(int)))
		return oom(b);
	f->key_lines[f->count] = line;
	return TP_OK;
}

/* A root that is not a mapping: the document is not a Kubernetes object. */
static int not_a_mapping(ybuild *b, const char *what)
{
	return tp__yaml_fail(b, TP_EPARSE,
			     "the document is %s, not a Kubernetes object (a mapping)", what);
}

/* A finished node goes to its parent (takes v). */
static int put_value(ybuild *b, cJSON *v, int line, int col)
{
	frame *f = top(b);
	/* where it was written: a member at its key, an item or a root where it starts */
	bool member = f && !cJSON_IsArray(f->node) && !f->key_merge;
	if (tp__pos_put(b->ld->pos, v, member ? f->key_line : line, member ? f->key_col : col)) {
		cJSON_Delete(v);
		return oom(b);
	}
	if (!f) {
		if (cJSON_IsNull(v)) { /* an empty document */
			cJSON_Delete(v);
			return TP_OK;
		}
		if (!cJSON_IsObject(v)) {
			cJSON_Delete(v);
			return not_a_mapping(b, "a scalar");
		}
		b->root = v;
		b->root_line = line;
		return TP_OK;
	}
	if (cJSON_IsArray(f->node)) {
		tp__json_link(f->node, &f->tail, v);
		f->count++;
		return TP_OK;
	}
	if (f->key_merge)
		return tp__yaml_merge_add(b, f, v, true);
	int rc = key_line_push(b, f, f->key_line);
	if (rc) {
		cJSON_Delete(v);
		return rc;
	}
	v->string = f->key;
	f->key = NULL;
	tp__json_link(f->node, &f->tail, v);
	f->count++;
	return TP_OK;
}

static int dup_key(ybuild *b, frame *f, const char *key)
{
	size_t i = 0;
	const cJSON *c = f->node->child;
	for (; c && strcmp(c->string, key); c = c->next)
		i++;
	int first = c && i < f->count ? f->key_lines[i] : left_out_line(f, key);
	return tp__yaml_fail(b, TP_EPARSE, "mapping key \"%.100s\" already defined at line %d", key,
			     first);
}

/* A mapping key (key is cJSON memory; taken). */
static int set_key(ybuild *b, char *key)
{
	frame *f = top(b);
	int fresh = left_out_line(f, key) ? 0 : tp__key_is_new(f->node, f->count, &f->ks, key);
	if (fresh != 1) {
		int rc = fresh < 0 ? oom(b) : dup_key(b, f, key);
		cJSON_free(key);
		return rc;
	}
	f->key = key;
	f->key_line = (int)b->mark.line + 1;
	f->key_col = (int)b->mark.column + 1;
	return TP_OK;
}

/* ------------------------------------------------------ members left out */

/* The context of a node opening under the top frame (tp_load_skip). */
static int skip_ctx(ybuild *b, bool map, bool anchored)
{
	const tp_load_skip *sk = b->ld->lim.skip;
	const frame *f = top(b);
	int parent = f ? f->ctx : TP_LOAD_SKIP_ROOT;
	if (!sk || anchored || parent == TP_LOAD_SKIP_NONE || (f && f->key_merge))
		return TP_LOAD_SKIP_NONE;
	return sk->open(parent, f && cJSON_IsObject(f->node) ? f->key : NULL, map);
}

/* Whether the string scalar s, the value of the top frame's pending key,
 * is left out. Never one with an anchor (an alias may copy it) or with a
 * NUL (the error stands). */
static bool skipped(ybuild *b, const tp_yaml_scalar *sc, const char *s, size_t n, bool anchored)
{
	const tp_load_skip *sk = b->ld->lim.skip;
	const frame *f = top(b);
	return sk && f && f->ctx != TP_LOAD_SKIP_NONE && f->key && !anchored &&
	       sc->type == TP_YAML_STR && !memchr(s, '\0', n) && sk->drop(f->ctx, f->key);
}

/* The pending key's member is left out: the frame keeps the key. */
static int leave_out(ybuild *b)
{
	frame *f = top(b);
	if (grow((void **)&f->left_out, f->nleft_out, &f->left_out_cap, sizeof(*f->left_out)))
		return oom(b);
	f->left_out[f->nleft_out++] = (struct left_out){ .key = f->key, .line = f->key_line };
	f->key = NULL;
	return TP_OK;
}

/* --------------------------------------------------------------- events */

static int on_start(ybuild *b, const yaml_event_t *ev, bool map)
{
	if (wants_key(b))
		return tp__yaml_fail(b, TP_EPARSE,
				     "a %s cannot be a mapping key (JSON keys are strings)",
				     map ? "mapping" : "sequence");
	if (!b->depth && !map)
		return not_a_mapping(b, "a sequence");
	if ((int)b->depth + 1 > b->ld->lim.max_depth)
		return tp__yaml_fail(b, TP_ELIMIT, "nesting deeper than %d levels",
				     b->ld->lim.max_depth);
	if (grow((void **)&b->st, b->depth, &b->st_cap, sizeof(*b->st)))
		return oom(b);
	const yaml_char_t *an = map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
	int ctx = skip_ctx(b, map, an != NULL);
	frame *f = &b->st[b->depth];
	*f = (frame){ .node = map ? cJSON_CreateObject() : cJSON_CreateArray(),
		      .line = (int)ev->start_mark.line + 1,
		      .col = (int)ev->start_mark.column + 1,
		      .ctx = ctx };
	if (an)
		f->anchor = strdup((const char *)an);
	if (!f->node || (an && !f->anchor)) {
		tp__yaml_frame_release(f);
		return oom(b);
	}
	b->depth++;
	return TP_OK;
}

static int on_end(ybuild *b)
{
	frame *f = top(b);
	int rc = f->nmerges ? tp__yaml_merge_run(b, f) : TP_OK;
	if (rc)
		return rc;
	cJSON *v = f->node;
	f->node = NULL;
	char *an = f->anchor;
	f->anchor = NULL;
	int line = f->line, col = f->col;
	tp__yaml_frame_release(f);
	b->depth--;
	if (an && (rc = tp__yaml_anchor_add(b, an, v))) {
		cJSON_Delete(v);
		return rc;
	}
	return put_value(b, v, line, col);
}

static cJSON *scalar_json(ybuild *b, const tp_yaml_scalar *sc, const char *s, size_t n, int *rc)
{
	cJSON *v = NULL;
	switch (sc->type) {
	case TP_YAML_NULL:
		v = cJSON_CreateNull();
		break;
	case TP_YAML_BOOL:
		v = cJSON_CreateBool(sc->b);
		break;
	case TP_YAML_INT:
		v = cJSON_CreateNumber(sc->is_uint ? (double)sc->u : (double)sc->i);
		break;
	case TP_YAML_FLOAT:
		if (!isfinite(sc->d)) {
			*rc = tp__yaml_fail(b, TP_EPARSE, "%.*s cannot be represented in JSON",
					    (int)n, s);
			return NULL;
		}
		v = cJSON_CreateNumber(sc->d);
		break;
	case TP_YAML_STR:
	case TP_YAML_MERGE: /* << as a value is just text */
		if (memchr(s, '\0', n)) {
			*rc = tp__yaml_fail(b, TP_EPARSE, "a string holds a NUL character");
			return NULL;
		}
		v = cJSON_CreateString(s);
		break;
	}
	if (!v)
		*rc = oom(b);
	return v;
}

/* The text a scalar stands for as a key, in cJSON memory. */
static int key_of_scalar(ybuild *b, const tp_yaml_scalar *sc, const char *s, size_t n, char **out)
{
	char buf[64];
	int len = (int)n;
	if (sc->type == TP_YAML_STR) {
		if (memchr(s, '\0', n))
			return tp__yaml_fail(b, TP_EPARSE, "a mapping key holds a NUL character");
	} else {
		len = tp__yaml_key_text(sc, buf, sizeof(buf));
		if (len < 0)
			return tp__yaml_fail(b, TP_EPARSE,
					     "a mapping key is null (JSON keys are strings)");
		s = buf;
	}
	*out = json_strndup(s, (size_t)len);
	return *out ? TP_OK : oom(b);
}

static int on_scalar(ybuild *b, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	const char *an = (const char *)ev->data.scalar.anchor;
	tp_yaml_scalar sc;
	char msg[160];
	if (tp__yaml_resolve(s, n, tag, ev->data.scalar.plain_implicit, &sc, msg, sizeof(msg)))
		return tp__yaml_fail(b, TP_EPARSE, "%s", msg);
	int rc = TP_OK;
	if (wants_key(b)) {
		if (sc.type == TP_YAML_MERGE) {
			top(b)->key_merge = true;
			return TP_OK;
		}
		char *key;
		if ((rc = key_of_scalar(b, &sc, s, n, &key)))
			return rc;
		if (an) { /* an anchored key: keep its value for aliases */
			cJSON *k = cJSON_CreateString(key);
			if (!k || (rc = tp__yaml_bury(b, k)) ||
			    (rc = tp__yaml_anchor_add_copy(b, an, k))) {
				cJSON_free(key);
				return rc ? rc : oom(b);
			}
		}
		return set_key(b, key);
	}
	if (skipped(b, &sc, s, n, an != NULL))
		return leave_out(b);
	cJSON *v = scalar_json(b, &sc, s, n, &rc);
	if (!v)
		return rc;
	if (an && (rc = tp__yaml_anchor_add_copy(b, an, v))) {
		cJSON_Delete(v);
		return rc;
	}
	return put_value(b, v, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
}

/* An alias used as a key: only scalars can stand for a JSON member name. */
static int alias_key(ybuild *b, const cJSON *v)
{
	tp_yaml_scalar sc = { .type = TP_YAML_STR };
	const char *s = cJSON_IsString(v) ? v->valuestring : "";
	if (cJSON_IsNull(v))
		sc.type = TP_YAML_NULL;
	else if (cJSON_IsBool(v))
		sc = (tp_yaml_scalar){ .type = TP_YAML_BOOL, .b = cJSON_IsTrue(v) };
	else if (cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble)
		sc = (tp_yaml_scalar){ .type = TP_YAML_INT, .i = (long long)v->valuedouble };
	else if (cJSON_IsNumber(v))
		sc = (tp_yaml_scalar){ .type = TP_YAML_FLOAT, .d = v->valuedouble };
	else if (!cJSON_IsString(v))
		return tp__yaml_fail(b, TP_EPARSE, "an alias to a %s cannot be a mapping key",
				     cJSON_IsArray(v) ? "sequence" : "mapping");
	char *key;
	int rc = key_of_scalar(b, &sc, s, strlen(s), &key);
	return rc ? rc : set_key(b, key);
}

static int on_alias(ybuild *b, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	if (++b->aliases > b->ld->lim.max_aliases)
		return tp__yaml_fail(b, TP_ELIMIT, "more than %zu aliases (the limit)",
				     b->ld->lim.max_aliases);
	const cJSON *target = tp__yaml_anchor_find(b, name);
	if (!target)
		return tp__yaml_fail(b, TP_EPARSE, "unknown anchor '%.100s' referenced", name);
	frame *f = top(b);
	if (wants_key(b))
		return alias_key(b, target);
	if (f && f->key_merge) /* merged from in place: no copy needed */
		return tp__yaml_merge_add(b, f, target, false);
	int rc = TP_OK;
	cJSON *v = tp__yaml_copy_node(b, target, (int)b->depth + 1, &rc);
	return v ? put_value(b, v, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1) : rc;
}

static int on_document_end(ybuild *b)
{
	b->in_doc = false;
	cJSON *root = b->root;
	b->root = NULL;
	int rc = root ? tp__load_add(b->ld, root, b->doc, b->root_line) : TP_OK;
	tp__yaml_doc_reset(b);
	return rc;
}

static int on_event(ybuild *b, const yaml_event_t *ev)
{
	b->mark = ev->start_mark;
	if (b->in_doc && ev->end_mark.index - b->doc_start > b->ld->lim.max_doc_bytes)
		return tp__yaml_fail(b, TP_ELIMIT, "the document is over the limit of %zu bytes",
				     b->ld->lim.max_doc_bytes);
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		b->doc++;
		b->in_doc = true;
		b->doc_start = ev->start_mark.index;
		return TP_OK;
	case YAML_DOCUMENT_END_EVENT:
		return on_document_end(b);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, true);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, false);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		return on_end(b);
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_ALIAS_EVENT:
		return on_alias(b, ev);
	default:
		return TP_OK;
	}
}

/* libyaml's input when the caller follows the reading: the bytes, copied
 * as libyaml's string input copies them, and how far they are read. */
typedef struct yreader {
	const tp_loader *ld;
	size_t pos, told;
} yreader;

static int read_input(void *data, unsigned char *buf, size_t size, size_t *size_read)
{
	yreader *r = data;
	size_t n = r->ld->len - r->pos < size ? r->ld->len - r->pos : size;
	memcpy(buf, r->ld->data + r->pos, n);
	r->pos += n;
	*size_read = n;
	if (r->pos - r->told >= TP_LOAD_READ_STEP || (n && r->pos == r->ld->len)) {
		r->ld->lim.read_to(r->ld->lim.read_arg, r->ld->data, r->pos);
		r->told = r->pos;
	}
	return 1;
}

int tp__load_yaml(tp_loader *ld, size_t start)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return tp__load_fail(ld, TP_ENOMEM, 0, 0, 0, "out of memory");
	yreader rd = { .ld = ld, .pos = start, .told = start };
	if (ld->lim.read_to)
		yaml_parser_set_input(&p, read_input, &rd);
	else
		yaml_parser_set_input_string(&p, (const unsigned char *)ld->data + start,
					     ld->len - start);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	ybuild b = { .ld = ld };
	int rc = TP_OK;
	for (bool done = false; !done && !rc;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = tp__yaml_syntax_error(&b, &p, start);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = tp__load_tick(ld);
		if (!rc)
			rc = on_event(&b, &ev);
		yaml_event_delete(&ev);
	}
	tp__yaml_build_free(&b);
	yaml_parser_delete(&p);
	return rc;
}

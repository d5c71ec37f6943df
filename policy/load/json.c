/*
 * load/json.c — the JSON fast path of tp_load.
 *
 * cJSON parses straight from the caller's bytes (length-bounded, no copy).
 * cJSON recurses once per nesting level, so a cheap scan of the brackets
 * outside strings runs first: it refuses input nested deeper than max_depth
 * and documents over max_doc_bytes before cJSON sees them, and it names an
 * unterminated string by where it starts, which cJSON cannot.
 *
 * Like Kubernetes' YAMLOrJSONDecoder (a json.Decoder stream), the input may
 * hold several JSON objects one after another; each is one document. Any
 * other text after a value is an error.
 *
 * Duplicate member names are refused. Kubernetes' strict decoding (kubectl's
 * default field validation) answers 'duplicate field "x"'; silently keeping
 * one of the two would hide a real mistake, and cJSON would keep the first
 * while Go keeps the last, so no choice here could agree with every reader.
 */
#include "policy/load/load.h"

#include <stdio.h>
#include <string.h>

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static size_t skip_ws(const tp_loader *ld, size_t i)
{
	while (i < ld->len && is_ws(ld->data[i]))
		i++;
	return i;
}

static int fail_at(tp_loader *ld, int code, int doc, size_t off, const char *fmt, ...)
	TP_PRINTF(5, 6);

/* Fail with the line and column of byte offset off. */
static int fail_at(tp_loader *ld, int code, int doc, size_t off, const char *fmt, ...)
{
	char msg[sizeof(ld->err->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int line, col;
	tp__load_position(ld->data, off, &line, &col);
	return tp__load_fail(ld, code, doc, line, col, "%s", msg);
}

/* ------------------------------------------------------------ the pre-scan */

/* What the pre-scan stops at; every other byte is skipped by one table load,
 * which keeps the scan to a small share of a request's time. */
enum { SC_NONE = 0, SC_QUOTE, SC_OPEN, SC_CLOSE, SC_NUMBER };

static const unsigned char scan_class[256] = {
	['"'] = SC_QUOTE, ['{'] = SC_OPEN, ['['] = SC_OPEN, ['}'] = SC_CLOSE, [']'] = SC_CLOSE,
	['-'] = SC_NUMBER, ['0'] = SC_NUMBER, ['1'] = SC_NUMBER, ['2'] = SC_NUMBER,
	['3'] = SC_NUMBER, ['4'] = SC_NUMBER, ['5'] = SC_NUMBER, ['6'] = SC_NUMBER,
	['7'] = SC_NUMBER, ['8'] = SC_NUMBER, ['9'] = SC_NUMBER,
};

/* The closing quote of the string opened at d[open], searched before end;
 * end when there is none. memchr finds candidates; a quote preceded by an odd
 * run of backslashes is escaped. */
static size_t string_end(const char *d, size_t open, size_t end)
{
	size_t i = open + 1;
	for (;;) {
		const char *q = i < end ? memchr(d + i, '"', end - i) : NULL;
		if (!q)
			return end;
		size_t at = (size_t)(q - d), bs = 0;
		while (at - bs > open + 1 && d[at - bs - 1] == '\\')
			bs++;
		if (bs % 2 == 0)
			return at;
		i = at + 1;
	}
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A number at d[i] as RFC 8259 (and Go's decoder) writes it:
 * -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?. cJSON reads more
 * ("01", "1.", "+1"); the API server would refuse those. The length, or 0
 * with why set. */
static size_t number_len(const char *d, size_t i, size_t end, const char **why)
{
	size_t j = i + (d[i] == '-');
	if (j >= end || !digit(d[j]))
		return *why = "a minus sign without digits", 0;
	if (d[j] == '0' && j + 1 < end && digit(d[j + 1]))
		return *why = "a leading zero (write the number without it)", 0;
	while (j < end && digit(d[j]))
		j++;
	if (j < end && d[j] == '.') {
		if (++j >= end || !digit(d[j]))
			return *why = "no digit after the decimal point (write 1 or 1.0)", 0;
		while (j < end && digit(d[j]))
			j++;
	}
	if (j < end && (d[j] == 'e' || d[j] == 'E')) {
		j += j + 1 < end && (d[j + 1] == '+' || d[j + 1] == '-');
		if (++j >= end || !digit(d[j]))
			return *why = "no digit in the exponent", 0;
		while (j < end && digit(d[j]))
			j++;
	}
	return j - i;
}

/* A \u0000 escape (an unescaped backslash before it) inside d[open..close):
 * its offset, or 0. C strings end at a NUL, so a string holding one would
 * be judged by its prefix: refused instead. */
static size_t nul_escape(const char *d, size_t open, size_t close)
{
	for (size_t i = open + 1; i + 5 < close; i++) {
		if (d[i] != '\\')
			continue;
		if (!memcmp(d + i + 1, "u0000", 5))
			return i;
		i++; /* the escaped character */
	}
	return 0;
}

/* Walk one value from its first byte: depth and size limits, unterminated
 * strings, numbers as RFC 8259 writes them, no NUL in a string. Other syntax
 * is cJSON's business. */
static int prescan(tp_loader *ld, int doc, size_t from)
{
	const char *d = ld->data;
	size_t max = ld->lim.max_doc_bytes, end = ld->len;
	size_t stop = end - from > max ? from + max : end; /* past it: over the limit */
	int depth = 0;
	for (size_t i = from; i < stop; i++) {
		switch (scan_class[(unsigned char)d[i]]) {
		case SC_QUOTE: {
			size_t s = i;
			i = string_end(d, s, stop);
			if (i >= stop && stop < end)
				goto over;
			if (i >= stop)
				return fail_at(ld, TP_EPARSE, doc, s, "unterminated string");
			size_t nul = memchr(d + s, '\\', i - s) ? nul_escape(d, s, i) : 0;
			if (nul)
				return fail_at(ld, TP_EPARSE, doc, nul, "a string holds \\u0000 (NUL): "
					       "no Kubernetes field can hold it");
			break;
		}
		case SC_NUMBER: {
			const char *why = NULL;
			size_t n = number_len(d, i, stop, &why);
			if (!n)
				return fail_at(ld, TP_EPARSE, doc, i, "invalid number: %s", why);
			i += n - 1;
			break;
		}
		case SC_OPEN:
			if (++depth > ld->lim.max_depth)
				return fail_at(ld, TP_ELIMIT, doc, i, "nesting deeper than %d levels",
					       ld->lim.max_depth);
			break;
		case SC_CLOSE:
			if (--depth <= 0)
				return TP_OK;
			break;
		default:
			break;
		}
	}
	if (stop == end)
		return TP_OK; /* unclosed: cJSON reports it at the end */
over:
	return fail_at(ld, TP_ELIMIT, doc, from, "the document is over the limit of %zu bytes",
		       max);
}

/* ------------------------------------------------------- duplicate members */

/* Where the member names of the k-th object (counted in document order, as
 * its '{' appear) start: the offsets of members a and b. */
static void locate_members(const tp_loader *ld, size_t from, size_t k, size_t a, size_t b,
			   size_t *oa, size_t *ob)
{
	const char *d = ld->data;
	size_t objects = 0, member = 0;
	int depth = 0; /* relative to the object once found; 0 before */
	bool found = false, expect_key = false;
	*oa = *ob = from;
	for (size_t i = from; i < ld->len; i++) {
		char c = d[i];
		if (c == '"') {
			if (found && depth == 1 && expect_key) {
				if (member == a)
					*oa = i;
				if (member == b) {
					*ob = i;
					return;
				}
				member++;
				expect_key = false;
			}
			for (i++; i < ld->len && d[i] != '"'; i++)
				i += d[i] == '\\';
		} else if (c == '{' || c == '[') {
			if (found)
				depth++;
			else if (c == '{' && objects++ == k)
				found = true, depth = 1, expect_key = true;
		} else if (c == '}' || c == ']') {
			if (found && --depth == 0)
				return;
		} else if (c == ',' && found && depth == 1) {
			expect_key = true;
		}
	}
}

static size_t index_of(const cJSON *obj, const char *key)
{
	size_t j = 0;
	for (const cJSON *p = obj->child; strcmp(p->string, key); p = p->next)
		j++;
	return j;
}

/* 1 and the positions of the first member named twice, 0 when none, or
 * TP_ENOMEM. Large objects use a hash set instead of comparing every pair. */
static int find_duplicate(const cJSON *obj, size_t *first, size_t *second)
{
	size_t n = (size_t)cJSON_GetArraySize(obj), i = 0;
	tp_keyset ks = { 0 };
	int rc = 0;
	for (const cJSON *c = obj->child; c && !rc; c = c->next, i++) {
		int fresh = 1;
		if (n > 16)
			fresh = tp__keyset_put(&ks, c->string);
		else
			for (const cJSON *p = obj->child; p != c && fresh; p = p->next)
				fresh = strcmp(p->string, c->string) != 0;
		if (fresh < 0)
			rc = fresh;
		else if (!fresh) {
			*first = index_of(obj, c->string);
			*second = i;
			rc = 1;
		}
	}
	tp__keyset_free(&ks);
	return rc;
}

typedef struct dup_walk {
	size_t objects; /* objects seen so far, in document order */
	const cJSON *obj;
	size_t ordinal, first, second;
} dup_walk;

/* Depth is bounded by the pre-scan, so recursion is safe here. */
static int walk_duplicates(const cJSON *v, dup_walk *w)
{
	if (cJSON_IsObject(v)) {
		size_t ordinal = w->objects++;
		int rc = find_duplicate(v, &w->first, &w->second);
		if (rc) {
			w->obj = v;
			w->ordinal = ordinal;
			return rc;
		}
	}
	for (const cJSON *c = v->child; c; c = c->next) {
		int rc = walk_duplicates(c, w);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_duplicates(tp_loader *ld, int doc, size_t from, const cJSON *root)
{
	dup_walk w = { 0 };
	int rc = walk_duplicates(root, &w);
	if (rc < 0)
		return tp__load_fail(ld, TP_ENOMEM, doc, 0, 0, "out of memory");
	if (rc == 0)
		return TP_OK;
	size_t oa, ob;
	locate_members(ld, from, w.ordinal, w.first, w.second, &oa, &ob);
	const cJSON *dup = w.obj->child;
	for (size_t i = 0; i < w.second; i++)
		dup = dup->next;
	int la, ca, lb, cb;
	tp__load_position(ld->data, oa, &la, &ca);
	tp__load_position(ld->data, ob, &lb, &cb);
	return tp__load_fail(ld, TP_EPARSE, doc, lb, cb,
			     "duplicate field \"%.100s\" (already defined at line %d)", dup->string, la);
}

/* ------------------------------------------------------------- documents */

static int syntax_error(tp_loader *ld, int doc, size_t off)
{
	size_t at = skip_ws(ld, off);
	if (at >= ld->len)
		return fail_at(ld, TP_EPARSE, doc, ld->len, "unexpected end of JSON input");
	char near[24];
	size_t n = 0;
	for (size_t i = at; i < ld->len && n < 16 && ld->data[i] != '\n'; i++)
		near[n++] = ld->data[i];
	near[n] = '\0';
	return fail_at(ld, TP_EPARSE, doc, at, "invalid JSON near '%s'", near);
}

static int not_an_object(tp_loader *ld, int doc, size_t off, const cJSON *root)
{
	return fail_at(ld, TP_EPARSE, doc, off, "the document is %s, not a Kubernetes object (a mapping)",
		       cJSON_IsArray(root) ? "an array" : "a scalar");
}

/* One value starting at *pos; *pos moves past it. */
static int load_one(tp_loader *ld, int doc, size_t *pos)
{
	size_t from = *pos;
	int rc = prescan(ld, doc, from);
	if (rc)
		return rc;
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(ld->data + from, ld->len - from, &end, 0);
	if (!root)
		return syntax_error(ld, doc, end ? (size_t)(end - ld->data) : from);
	*pos = (size_t)(end - ld->data);
	if (*pos - from > ld->lim.max_doc_bytes)
		rc = fail_at(ld, TP_ELIMIT, doc, from, "the document is over the limit of %zu bytes",
			     ld->lim.max_doc_bytes);
	if (!rc && !cJSON_IsObject(root))
		rc = not_an_object(ld, doc, from, root);
	if (!rc)
		rc = check_duplicates(ld, doc, from, root);
	if (!rc && ld->pos)
		rc = tp__pos_json(ld->pos, ld->data, from, *pos, root);
	if (rc) {
		cJSON_Delete(root);
		return rc;
	}
	int line, col;
	tp__load_position(ld->data, from, &line, &col);
	return tp__load_add(ld, root, doc, line);
}

int tp__load_json(tp_loader *ld, size_t start)
{
	size_t pos = skip_ws(ld, start);
	for (int doc = 1; pos < ld->len; doc++) {
		char c = ld->data[pos];
		if (doc > 1 && c != '{' && c != '[')
			return fail_at(ld, TP_EPARSE, doc - 1, pos,
				       "unexpected text after the JSON document");
		int rc = load_one(ld, doc, &pos);
		if (rc)
			return rc;
		pos = skip_ws(ld, pos);
	}
	return TP_OK;
}

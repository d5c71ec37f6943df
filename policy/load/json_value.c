/*
 * load/json_value.c — one JSON value, read in a single pass into cJSON nodes.
 *
 * The grammar is RFC 8259's, as the API server's decoder (Go's
 * encoding/json) reads it: numbers without leading zeros or a bare '.',
 * no raw control characters inside strings, escapes only from the JSON set.
 * Where Go is lenient the same leniency is kept (a lone UTF-16 surrogate
 * becomes U+FFFD). Two rules are stricter, because C strings could not carry
 * the value whole or because keeping one of two members would hide a
 * mistake: \u0000 and member names written twice are refused.
 *
 * The limits are checked as the bytes are read, so a document nested too
 * deep or longer than max_doc_bytes is refused at the byte that breaks the
 * limit, before anything past it is built. Each member and item counts a
 * step of the thread's deadline (core/deadline.h), so that a long input
 * stops with TP_ETIMEDOUT once it has passed, as the library's other long
 * loops do. Nodes and strings come from the current arena (else
 * cJSON_malloc), so the arena (or cJSON_Delete) frees them.
 */
#include "policy/load/load.h"
#include "policy/core/arena.h"
#include "policy/core/scan.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Recursion depth at most, whatever max_depth asks: the C stack's bound. */
#define JSON_MAX_DEPTH 1000

typedef struct jp {
	tp_loader *ld;
	const char *d;
	size_t i;       /* the next byte */
	size_t from;    /* where the document starts */
	size_t stop;    /* from + max_doc_bytes, or the end of the input */
	int doc, depth, max_depth;
	size_t objects; /* objects opened so far, in document order */
	tp_arena *arena; /* the current arena (NULL: cJSON_malloc) */
	char *copy;      /* with an arena, a copy of the input: strings end in place */
	const unsigned char *b; /* a copy of the input, b[stop] a byte below ' ' */
} jp;

static int fail_at(jp *p, int code, size_t off, const char *fmt, ...) TP_PRINTF(4, 5);

static int fail_at(jp *p, int code, size_t off, const char *fmt, ...)
{
	char msg[sizeof(p->ld->err->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int line, col;
	tp__load_position(p->d, off, &line, &col);
	return tp__load_fail(p->ld, code, p->doc, line, col, "%s", msg);
}

/* The byte at p->i is not what JSON allows there (or there is none). */
static int unexpected(jp *p)
{
	if (p->i >= p->stop && p->stop < p->ld->len)
		return fail_at(p, TP_ELIMIT, p->from, "the document is over the limit of %zu bytes",
			       p->ld->lim.max_doc_bytes);
	if (p->i >= p->ld->len)
		return fail_at(p, TP_EPARSE, p->ld->len, "unexpected end of JSON input");
	char near[24];
	size_t n = 0;
	for (size_t k = p->i; k < p->ld->len && n < 16 && p->d[k] != '\n'; k++)
		near[n++] = p->d[k];
	near[n] = '\0';
	return fail_at(p, TP_EPARSE, p->i, "invalid JSON near '%s'", near);
}

static int nomem(jp *p)
{
	return tp__load_fail(p->ld, TP_ENOMEM, p->doc, 0, 0, "out of memory");
}

/* Nodes and strings straight from the current arena, as cJSON's hooks would
 * give them but without two calls and a thread-local read each (139,188 ->
 * 137,627 instructions for make bench's ClusterTrainingRuntime review); without
 * an arena, cJSON_malloc. Either way cJSON_Delete and the arena agree. */
static void *mem(jp *p, size_t n)
{
	return p->arena ? tp__arena_take(p->arena, n) : cJSON_malloc(n);
}

static inline cJSON *node(jp *p, int type)
{
	cJSON *v = mem(p, sizeof(*v));
	if (v) {
		memset(v, 0, sizeof(*v));
		v->type = type;
	}
	return v;
}

/* The next byte that is not whitespace, or -1 at the end.
 *
 * Scans walk local pointers, not p->i: a char load may alias p->i, which
 * would make the compiler store and reload it every byte (99,870 -> 95,077
 * instructions to read the 5.5 KB ClusterTrainingRuntime review of make
 * bench, with string()). */
static int skip_ws(jp *p);

/* Most calls land on the token itself, or one space before it: answered
 * inline, no loop. They read p->b, whose byte at the limit is below ' ', so
 * they need no bound: 9 -> 5 instructions a call for a token, about 420
 * calls in the ClusterTrainingRuntime review. */
static inline int peek(jp *p)
{
	const unsigned char *s = p->b + p->i;
	if (s[0] > ' ')
		return s[0];
	if (s[0] == ' ' && s[1] > ' ') {
		p->i++;
		return s[1];
	}
	return skip_ws(p);
}

static int skip_ws(jp *p)
{
	const unsigned char *d = (const unsigned char *)p->d;
	const unsigned char *s = tp__scan_ws(d + p->i, d + p->stop);
	p->i = (size_t)(s - d);
	return p->i < p->stop ? *s : -1;
}

/* ---------------------------------------------------------------- strings */


static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	for (int k = 0; k < 4; k++) {
		char c = s[k];
		unsigned h = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16u;
		if (h == 16)
			return -1;
		v = v << 4 | h;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80)
		return o[0] = (char)cp, 1;
	if (cp < 0x800)
		return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3f)), 2;
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The \u escape at s (s[0] == '\\', s[1] == 'u', validated by the scan):
 * its code point and the bytes it spans; a surrogate pair is one code point,
 * a lone surrogate U+FFFD, as Go decodes them. */
static unsigned unicode_escape(const char *s, const char *end, size_t *span)
{
	unsigned hi, lo;
	hex4(s + 2, &hi);
	*span = 6;
	if (hi < 0xd800 || hi > 0xdfff)
		return hi;
	if (hi < 0xdc00 && end - s >= 12 && s[6] == '\\' && s[7] == 'u' && !hex4(s + 8, &lo) &&
	    lo >= 0xdc00 && lo <= 0xdfff) {
		*span = 12;
		return 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	}
	return 0xfffd;
}

/* Decode the escapes of s[0..n) (checked by the scan) into o. */
static size_t unescape(const char *s, size_t n, char *o)
{
	const char *end = s + n;
	size_t len = 0;
	while (s < end) {
		if (*s != '\\') {
			o[len++] = *s++;
			continue;
		}
		char c = s[1];
		if (c == 'u') {
			size_t span;
			len += put_utf8(o + len, unicode_escape(s, end, &span));
			s += span;
			continue;
		}
		o[len++] = c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r'
			 : c == 't' ? '\t' : c; /* \" \\ \/ */
		s += 2;
	}
	return len;
}

/* The escape at p->i (a backslash, with a byte after it): its length in *n,
 * or why it is refused. */
static int check_escape(jp *p, size_t *n)
{
	const char *s = p->d + p->i;
	size_t left = p->stop - p->i;
	unsigned cp;
	switch (s[1]) {
	case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
		*n = 2;
		return TP_OK;
	case 'u':
		if (left < 6 || hex4(s + 2, &cp))
			break;
		if (cp == 0)
			return fail_at(p, TP_EPARSE, p->i, "a string holds \\u0000 (NUL): "
				       "no Kubernetes field can hold it");
		*n = 6;
		return TP_OK;
	default:
		break;
	}
	return fail_at(p, TP_EPARSE, p->i, "invalid escape in a string: JSON knows \\\" \\\\ \\/ "
		       "\\b \\f \\n \\r \\t and \\u followed by 4 hex digits");
}

/* The string whose opening quote is at p->i, decoded, in cJSON memory, and
 * its length: every case, string()'s fast one included. */
static int string_slow(jp *p, char **out, size_t *len)
{
	size_t open = p->i++, escapes = 0;
	for (;;) {
		if (p->i >= p->stop) {
			if (p->stop < p->ld->len)
				return unexpected(p); /* over the document limit */
			return fail_at(p, TP_EPARSE, open, "unterminated string");
		}
		const unsigned char *s = (const unsigned char *)p->d + p->i;
		const unsigned char *end = (const unsigned char *)p->d + p->stop;
		s = tp__scan_string(s, end);
		p->i = (size_t)(s - (const unsigned char *)p->d);
		if (s == end)
			continue;
		unsigned char c = *s;
		if (c == '"') {
			break;
		} else if (c == '\\') {
			if (p->stop - p->i < 2) {
				p->i = p->stop;
				continue; /* unterminated, or over the limit */
			}
			size_t n = 0;
			int rc = check_escape(p, &n);
			if (rc)
				return rc;
			p->i += n;
			escapes++;
		} else if (c == '\n' || c == '\r') {
			/* Most likely a quote forgotten: named where the string opens. */
			return fail_at(p, TP_EPARSE, open, "unterminated string: the line ends before "
				       "its closing quote (inside a string, write a line break as \\n)");
		} else {
			return fail_at(p, TP_EPARSE, p->i, "a control character (U+%04X) inside a "
				       "string: write it escaped (\\t or \\u%04X)", c, c);
		}
	}
	const char *s = p->d + open + 1;
	size_t n = p->i - open - 1;
	p->i++; /* the closing quote */
	char *v;
	if (p->copy) {
		/* In place in the arena's copy of the input: the closing quote
		 * becomes the NUL, no allocation and no copy a string. Unescaped
		 * text is never longer than its escapes, so it fits too. */
		v = p->copy + open + 1;
		if (escapes)
			n = unescape(s, n, v);
	} else {
		if (!(v = mem(p, n + 1)))
			return nomem(p);
		if (escapes)
			n = unescape(s, n, v);
		else
			memcpy(v, s, n);
	}
	v[n] = '\0';
	*out = v;
	*len = n;
	return TP_OK;
}

/* string_slow's common case inline: inside an arena, a string without
 * escapes whose closing quote is before the limit is ended in place, with no
 * call. Anything else goes to string_slow from the opening quote again. The
 * scan reads the copy p->b (the arena's copy, then), up to and with the NUL
 * at the limit: it stops there at the latest, and not on a quote, so the
 * quote's test is the limit's too (reading the ClusterTrainingRuntime
 * review's body 24,023 -> 23,721 instructions). */
static inline int string(jp *p, char **out, size_t *len)
{
	const unsigned char *b = p->b;
	size_t open = p->i;
	const unsigned char *s = tp__scan_string(b + open + 1, b + p->stop + 1);
	if (*s != '"' || !p->copy)
		return string_slow(p, out, len);
	size_t close = (size_t)(s - b);
	*len = close - open - 1;
	*out = p->copy + open + 1;
	p->copy[close] = '\0';
	p->i = close + 1;
	return TP_OK;
}

/* ---------------------------------------------------------------- numbers */

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? at p->i. */
static int number(jp *p, cJSON **out)
{
	const char *d = p->d;
	size_t start = p->i, j = start + (d[start] == '-'), end = p->stop;
	const char *why = NULL;
	bool integer = true;
	if (j >= end || !digit(d[j]))
		why = "a minus sign without digits";
	else if (d[j] == '0' && j + 1 < end && digit(d[j + 1]))
		why = "a leading zero (write the number without it)";
	while (!why && j < end && digit(d[j]))
		j++;
	if (!why && j < end && d[j] == '.') {
		integer = false;
		if (++j >= end || !digit(d[j]))
			why = "no digit after the decimal point (write 1 or 1.0)";
		while (!why && j < end && digit(d[j]))
			j++;
	}
	if (!why && j < end && (d[j] == 'e' || d[j] == 'E')) {
		integer = false;
		j += j + 1 < end && (d[j + 1] == '+' || d[j + 1] == '-');
		if (++j >= end || !digit(d[j]))
			why = "no digit in the exponent";
		while (!why && j < end && digit(d[j]))
			j++;
	}
	if (why)
		return fail_at(p, TP_EPARSE, start, "invalid number: %s", why);
	p->i = j;
	double v;
	size_t n = j - start;
	if (integer && n <= 16) { /* up to 15 digits: exact in a double */
		long long x = 0;
		for (size_t k = start + (d[start] == '-'); k < j; k++)
			x = x * 10 + (d[k] - '0');
		v = d[start] == '-' ? -(double)x : (double)x; /* "-0" is -0.0 */
	} else {
		char buf[64], *s = n < sizeof(buf) ? buf : malloc(n + 1);
		if (!s)
			return nomem(p);
		memcpy(s, d + start, n);
		s[n] = '\0';
		v = strtod(s, NULL);
		if (s != buf)
			free(s);
	}
	if (!(*out = node(p, cJSON_Number)))
		return nomem(p);
	(*out)->valuedouble = v; /* valueint saturated, as cJSON_CreateNumber does */
	(*out)->valueint = v >= INT_MAX ? INT_MAX : v <= (double)INT_MIN ? INT_MIN : (int)v;
	return TP_OK;
}

/* ------------------------------------------------------------- containers */

static int value(jp *p, cJSON **out);

/* v as the next child of parent after *tail (NULL: none yet). The
 * reader's nodes come zeroed, its containers empty and tail in hand, so of
 * tp__json_link's work only the two links are left, and child->prev (cJSON's
 * last child), which link_last() sets once the container is read (reading
 * the ClusterTrainingRuntime review's body 26,153 -> 25,838 instructions). */
static inline void link_next(cJSON *parent, cJSON **tail, cJSON *v)
{
	if (*tail) {
		(*tail)->next = v;
		v->prev = *tail;
	} else {
		parent->child = v;
	}
	*tail = v;
}

static inline void link_last(cJSON *parent, cJSON *tail)
{
	if (tail)
		parent->child->prev = tail;
}

/* The string value at p->i (its opening quote), as a node. */
static inline int string_value(jp *p, cJSON **out)
{
	char *s = NULL;
	size_t n;
	int rc = string(p, &s, &n);
	if (rc)
		return rc;
	cJSON *v = node(p, cJSON_String);
	if (!v) {
		cJSON_free(s);
		return nomem(p);
	}
	v->valuestring = s;
	*out = v;
	return TP_OK;
}

/* value() with its most common case, a string (half the values of a
 * ClusterTrainingRuntime review), read inline: value() is a call with a
 * large frame, as it holds members() and array() (the review's body read
 * in 26,747 -> 26,153 instructions, callgrind). */
static inline int value_inline(jp *p, cJSON **out)
{
	return peek(p) == '"' ? string_value(p, out) : value(p, out);
}

static int enter(jp *p)
{
	if (++p->depth > p->max_depth)
		return fail_at(p, TP_ELIMIT, p->i, "nesting deeper than %d levels", p->max_depth);
	p->i++;
	return TP_OK;
}

/* Where the member names of the k-th object (counted in document order, as
 * its '{' appear, strings skipped) start: the offsets of members a and b.
 * Only for the message of a duplicate, so a second walk of the text. */
static void locate_members(const jp *p, size_t k, size_t a, size_t b, size_t *oa, size_t *ob)
{
	const char *d = p->d;
	size_t objects = 0, member = 0, len = p->ld->len;
	int depth = 0; /* relative to the object once found; 0 before */
	bool found = false, expect_key = false;
	*oa = *ob = p->from;
	for (size_t i = p->from; i < len; i++) {
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
			for (i++; i < len && d[i] != '"'; i++)
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

/* The first definition of the key at member index second of the ordinal-th
 * object, for the message: where it was written. */
static int duplicate(jp *p, const cJSON *obj, size_t ordinal, size_t second, const char *key)
{
	size_t first = 0;
	for (const cJSON *c = obj->child; strcmp(c->string, key); c = c->next)
		first++;
	size_t oa, ob;
	locate_members(p, ordinal, first, second, &oa, &ob);
	int la, ca;
	tp__load_position(p->d, oa, &la, &ca);
	return fail_at(p, TP_EPARSE, ob, "duplicate field \"%.100s\" (already defined at line %d)",
		       key, la);
}

/* Members whose names' lengths members() keeps, to compare a new name with
 * them without a call; past them tp__key_is_new (linear, then its keyed
 * set). Small, as members() recurses once a level of nesting. */
#define KEYS_BY_LENGTH 16

/* Whether key (len bytes) is new among the first count (< KEYS_BY_LENGTH)
 * members of o, whose lengths are lens: the length and first byte settle
 * most pairs. Names hold no NUL (\u0000 is refused), so memcmp is strcmp. */
static bool key_is_new_short(const cJSON *o, const size_t *lens, size_t count, const char *key,
			     size_t len)
{
	const cJSON *c = o->child;
	for (size_t k = 0; k < count; k++, c = c->next)
		if (lens[k] == len && c->string[0] == key[0] && !memcmp(c->string, key, len))
			return false;
	return true;
}

/* One of 64 bits for a name, by its length and first byte: a new name whose
 * bit no earlier name of its object set is new without a comparison. Most
 * are (the first 16 names compared with each earlier one before: reading
 * make bench's ClusterTrainingRuntime review 28,060 -> 27,440 instructions,
 * callgrind). */
static inline uint64_t name_bit(const char *key, size_t len)
{
	return (uint64_t)1 << ((len * 5 + (unsigned char)key[0]) & 63);
}

static int members(jp *p, cJSON *o, size_t ordinal)
{
	tp_strset ks = TP_STRSET_INIT;
	size_t lens[KEYS_BY_LENGTH];
	uint64_t seen = 0; /* name_bit of each of the first names */
	cJSON *tail = NULL;
	int rc = TP_OK;
	size_t count = 0;
	for (; !rc && !(rc = tp__load_tick(p->ld)); count++) {
		char *key = NULL;
		size_t len = 0;
		cJSON *v = NULL;
		if (peek(p) != '"')
			rc = unexpected(p);
		if (!rc)
			rc = string(p, &key, &len);
		int fresh = 0;
		if (!rc && count < KEYS_BY_LENGTH) {
			uint64_t bit = name_bit(key, len);
			fresh = !(seen & bit) || key_is_new_short(o, lens, count, key, len);
			seen |= bit;
		} else if (!rc) {
			fresh = tp__key_is_new(o, count, &ks, key);
		}
		if (!rc && fresh <= 0)
			rc = fresh < 0 ? nomem(p) : duplicate(p, o, ordinal, count, key);
		if (!rc && peek(p) != ':')
			rc = unexpected(p);
		if (!rc) {
			p->i++;
			rc = value_inline(p, &v);
		}
		if (rc) {
			cJSON_free(key);
			break;
		}
		if (count < KEYS_BY_LENGTH)
			lens[count] = len;
		v->string = key;
		link_next(o, &tail, v);
		int c = peek(p);
		if (c == '}') {
			p->i++;
			break;
		}
		if (c != ',')
			rc = unexpected(p);
		p->i++;
	}
	if (count >= KEYS_BY_LENGTH) /* the set is only made past them */
		tp__strset_free(&ks);
	link_last(o, tail);
	return rc;
}

static int object(jp *p, cJSON **out)
{
	int rc = enter(p);
	if (rc)
		return rc;
	size_t ordinal = p->objects++;
	cJSON *o = node(p, cJSON_Object);
	if (!o)
		return nomem(p);
	if (peek(p) == '}')
		p->i++;
	else if ((rc = members(p, o, ordinal))) {
		cJSON_Delete(o);
		return rc;
	}
	p->depth--;
	*out = o;
	return TP_OK;
}

static int array(jp *p, cJSON **out)
{
	int rc = enter(p);
	if (rc)
		return rc;
	cJSON *a = node(p, cJSON_Array), *tail = NULL;
	if (!a)
		return nomem(p);
	if (peek(p) == ']') {
		p->i++;
	} else {
		for (;;) {
			cJSON *v = NULL;
			if ((rc = tp__load_tick(p->ld)) || (rc = value_inline(p, &v)))
				break;
			link_next(a, &tail, v);
			int c = peek(p);
			if (c == ']') {
				p->i++;
				break;
			}
			if (c != ',') {
				rc = unexpected(p);
				break;
			}
			p->i++;
		}
	}
	if (rc) {
		cJSON_Delete(a);
		return rc;
	}
	link_last(a, tail);
	p->depth--;
	*out = a;
	return TP_OK;
}

static int literal(jp *p, const char *word, size_t n, int type, cJSON **out)
{
	if (p->stop - p->i < n || memcmp(p->d + p->i, word, n))
		return unexpected(p);
	p->i += n;
	return (*out = node(p, type)) ? TP_OK : nomem(p);
}

static int value(jp *p, cJSON **out)
{
	int c = peek(p);
	if (c == '{')
		return object(p, out);
	if (c == '[')
		return array(p, out);
	if (c == '"')
		return string_value(p, out);
	if (c == '-' || (c >= '0' && c <= '9'))
		return number(p, out);
	if (c == 't')
		return literal(p, "true", 4, cJSON_True, out);
	if (c == 'f')
		return literal(p, "false", 5, cJSON_False, out);
	if (c == 'n')
		return literal(p, "null", 4, cJSON_NULL, out);
	return unexpected(p);
}

int tp__json_value(tp_loader *ld, int doc, size_t *pos, cJSON **out)
{
	size_t max = ld->lim.max_doc_bytes, from = *pos;
	jp p = { .ld = ld, .d = ld->data, .i = from, .from = from, .doc = doc,
		 .stop = ld->len - from > max ? from + max : ld->len,
		 .max_depth = ld->lim.max_depth < JSON_MAX_DEPTH ? ld->lim.max_depth : JSON_MAX_DEPTH,
		 .arena = tp_arena_current() };
	if (!ld->scan) { /* once for all the documents */
		if (p.arena && (ld->copy = tp__arena_take(p.arena, ld->len + 1)))
			ld->scan = ld->copy;
		else if (!(ld->scan = ld->scan_own = malloc(ld->len + 1)))
			return nomem(&p);
		memcpy(ld->scan, ld->data, ld->len);
		ld->scan[ld->len] = '\0';
	}
	p.copy = ld->copy;
	p.b = (const unsigned char *)ld->scan;
	/* The limit's byte, while this document is read (a later one may
	 * start there); no string read in place holds it. */
	char at_stop = ld->scan[p.stop];
	ld->scan[p.stop] = '\0';
	*out = NULL;
	int rc = value(&p, out);
	ld->scan[p.stop] = at_stop;
	if (rc)
		return rc;
	*pos = p.i;
	return TP_OK;
}

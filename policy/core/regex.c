/*
 * core/regex.c — RE2 syntax on PCRE2 (see core/regex.h for why).
 *
 * Where the two syntaxes mean different things the pattern is rewritten:
 *   \s   RE2: [\t\n\f\r ]; PCRE2 adds \v          -> the RE2 set, spelled out
 *   \v   RE2: the VT character; PCRE2: a class    -> \x{0b}
 *   \a   RE2: BEL; PCRE2 too, but spelled out     -> \x{07}
 *   \123 RE2: octal; PCRE2: may be a backreference -> \x{53}
 *   $    RE2 (no m flag): end of text only        -> PCRE2_DOLLAR_ENDONLY
 *   \Q..\E is kept literal by escaping each character.
 * What Go's regexp/syntax refuses is refused with its words: lookaround,
 * atomic groups and other (?..) forms, backreferences, possessive and
 * nested repetition (a*+, a**), repeat counts over 1000, unknown escapes.
 */
#include "policy/core/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEAT 1000 /* Go's regexp/syntax limit on {n,m} */
#define MATCH_LIMIT 1000000
#define DEPTH_LIMIT 10000

struct tp_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
	/* a match block kept for the next match: one match at a time takes it
	 * (decider threads share the compiled CRDs), the others make their own.
	 * A block made and freed for every match was 670 instructions of each
	 * CEL matches() call, most of the call (callgrind). A cache, not state:
	 * what a match returns does not depend on it. */
	_Atomic(pcre2_match_data *) spare;
};

struct re_tr {
	const char *p; /* the RE2 pattern */
	size_t i;      /* next byte to read */
	tp_buf *out;
	char *why;
	size_t whylen;
};

static int fail(struct re_tr *t, const char *code, size_t from, size_t to)
{
	if (t->why && t->whylen)
		snprintf(t->why, t->whylen, "%s: `%.*s`", code, (int)(to - from), t->p + from);
	return TP_EPARSE;
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_hex(char c)
{
	return hex_value(c) >= 0;
}

/* \x7F or \x{10FFFF}, t->i just past the 'x'. */
static int hex_escape(struct re_tr *t, size_t start)
{
	const char *p = t->p;
	if (p[t->i] == '{') {
		size_t j = t->i + 1;
		unsigned long v = 0;
		while (is_hex(p[j]) && v <= 0x10FFFF)
			v = v * 16 + (unsigned long)hex_value(p[j++]);
		if (p[j] != '}' || j == t->i + 1 || v > 0x10FFFF)
			return fail(t, "invalid escape sequence", start, p[j] ? j + 1 : j);
		t->i = j + 1;
		return tp_buf_addf(t->out, "\\x{%lx}", v);
	}
	if (!is_hex(p[t->i]) || !is_hex(p[t->i + 1]))
		return fail(t, "invalid escape sequence", start,
			    t->i + (p[t->i] ? 1 : 0) + (p[t->i] && p[t->i + 1] ? 1 : 0));
	int rc = tp_buf_addf(t->out, "\\x{%c%c}", p[t->i], p[t->i + 1]);
	t->i += 2;
	return rc;
}

/* \1..\7 followed by an octal digit, or \0: up to three octal digits. */
static int octal_escape(struct re_tr *t, size_t start)
{
	const char *p = t->p;
	size_t j = t->i;
	if (p[j] != '0' && !is_octal(p[j + 1]))
		return fail(t, "invalid escape sequence", start, j + 1); /* a backreference */
	unsigned v = 0;
	for (int n = 0; n < 3 && is_octal(p[j]); n++)
		v = v * 8 + (unsigned)(p[j++] - '0');
	t->i = j;
	return tp_buf_addf(t->out, "\\x{%x}", v);
}

/* \Q...\E: every character literal. */
static int quoted(struct re_tr *t)
{
	const char *p = t->p;
	const char *end = strstr(p + t->i, "\\E");
	size_t stop = end ? (size_t)(end - p) : strlen(p);
	int rc = 0;
	for (; t->i < stop && !rc; t->i++) {
		unsigned char c = (unsigned char)p[t->i];
		rc = c < 0x80 && !is_alnum((char)c) ? tp_buf_addf(t->out, "\\x{%x}", c)
						   : tp_buf_addc(t->out, (char)c);
	}
	t->i = end ? stop + 2 : stop;
	return rc;
}

/* \p{Greek}, \pL, \P{^Lu}: Unicode classes, the same in both. */
static int unicode_class(struct re_tr *t, size_t start)
{
	const char *p = t->p;
	size_t j = t->i + 1; /* past 'p' or 'P' */
	if (p[j] == '{') {
		const char *close = strchr(p + j, '}');
		if (!close)
			return fail(t, "invalid character class range", start, strlen(p));
		j = (size_t)(close - p) + 1;
	} else if (p[j]) {
		j++;
	} else {
		return fail(t, "invalid character class range", start, j);
	}
	int rc = tp_buf_addc(t->out, '\\') | tp_buf_add(t->out, p + t->i, j - t->i);
	t->i = j;
	return rc ? TP_ENOMEM : TP_OK;
}

/* One escape; t->i at the backslash. */
static int escape(struct re_tr *t, bool in_class)
{
	const char *p = t->p;
	size_t start = t->i++;
	char c = p[t->i];
	if (!c)
		return fail(t, "trailing backslash at end of expression", start, start);
	if ((unsigned char)c < 0x80 && !is_alnum(c)) { /* escaped punctuation: literal */
		t->i++;
		return tp_buf_add(t->out, p + start, 2);
	}
	switch (c) {
	case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
		return octal_escape(t, start);
	case 'x':
		t->i++;
		return hex_escape(t, start);
	case 'a': t->i++; return tp_buf_adds(t->out, "\\x{07}");
	case 'v': t->i++; return tp_buf_adds(t->out, "\\x{0b}");
	case 'f': case 't': case 'n': case 'r':
	case 'd': case 'D': case 'w': case 'W':
		t->i++;
		return tp_buf_add(t->out, p + start, 2);
	case 's':
		t->i++;
		return tp_buf_adds(t->out, in_class ? "\\t\\n\\f\\r\\x{20}" : "[\\t\\n\\f\\r\\x{20}]");
	case 'S':
		t->i++;
		return tp_buf_adds(t->out, in_class ? "\\x{0}-\\x{8}\\x{b}\\x{e}-\\x{1f}\\x{21}-\\x{10ffff}"
						     : "[^\\t\\n\\f\\r\\x{20}]");
	case 'p': case 'P':
		return unicode_class(t, start);
	case 'A': case 'b': case 'B': case 'z':
		if (in_class)
			break;
		t->i++;
		return tp_buf_add(t->out, p + start, 2);
	case 'Q':
		if (in_class)
			break;
		t->i++;
		return quoted(t);
	default:
		break;
	}
	/* one whole UTF-8 character in the message */
	size_t end = t->i + 1;
	while (((unsigned char)p[end] & 0xC0) == 0x80)
		end++;
	return fail(t, "invalid escape sequence", start, end);
}

/* [...]: t->i at '['. */
static int char_class(struct re_tr *t)
{
	const char *p = t->p;
	size_t start = t->i++;
	int rc = tp_buf_addc(t->out, '[');
	if (p[t->i] == '^')
		rc |= tp_buf_addc(t->out, p[t->i++]);
	if (p[t->i] == ']') /* a leading ] is literal */
		rc |= tp_buf_adds(t->out, "\\]"), t->i++;
	while (!rc && p[t->i] && p[t->i] != ']') {
		if (p[t->i] == '\\') {
			rc = escape(t, true);
		} else if (p[t->i] == '[' && p[t->i + 1] == ':') { /* [:alpha:] */
			const char *close = strstr(p + t->i + 2, ":]");
			if (!close)
				return fail(t, "missing closing ]", start, strlen(p));
			size_t n = (size_t)(close - (p + t->i)) + 2;
			rc = tp_buf_add(t->out, p + t->i, n);
			t->i += n;
		} else if (p[t->i] == '[') {
			rc = tp_buf_adds(t->out, "\\[");
			t->i++;
		} else {
			rc = tp_buf_addc(t->out, p[t->i++]);
		}
	}
	if (rc)
		return rc;
	if (p[t->i] != ']')
		return fail(t, "missing closing ]", start, strlen(p));
	t->i++;
	return tp_buf_addc(t->out, ']');
}

/* "(?" forms Go knows: (?:, (?P<name>, (?<name>, (?flags) and (?flags:. */
static int group_open(struct re_tr *t)
{
	const char *p = t->p;
	size_t start = t->i;
	if (p[t->i + 1] != '?') {
		t->i++;
		return tp_buf_addc(t->out, '(');
	}
	size_t j = t->i + 2;
	if (p[j] == ':' || (p[j] == 'P' && p[j + 1] == '<') || (p[j] == '<' && p[j + 1] != '=' &&
								 p[j + 1] != '!')) {
		size_t n = p[j] == ':' ? 3 : p[j] == 'P' ? 4 : 3;
		int rc = tp_buf_add(t->out, p + t->i, n);
		t->i += n;
		return rc;
	}
	while (p[j] && strchr("imsU-", p[j]))
		j++;
	if (j > t->i + 2 && (p[j] == ')' || p[j] == ':')) {
		int rc = tp_buf_add(t->out, p + t->i, j + 1 - t->i);
		t->i = j + 1;
		return rc;
	}
	return fail(t, "invalid or unsupported Perl syntax", start, p[j] ? j + 1 : j);
}

/* {n}, {n,} or {n,m}: the length of a well-formed repeat at p, else 0
 * (then '{' is a literal, as in Go). */
static size_t repeat_len(const char *p, long *n, long *m)
{
	size_t j = 1;
	*n = *m = 0;
	if (p[j] < '0' || p[j] > '9')
		return 0;
	while (p[j] >= '0' && p[j] <= '9')
		*n = *n > 100000 ? *n : *n * 10 + (p[j++] - '0');
	*m = *n;
	if (p[j] == ',') {
		j++;
		*m = -1;
		if (p[j] >= '0' && p[j] <= '9')
			for (*m = 0; p[j] >= '0' && p[j] <= '9';)
				*m = *m > 100000 ? *m : *m * 10 + (p[j++] - '0');
	}
	return p[j] == '}' ? j + 1 : 0;
}

/* A repetition operator at t->i; Go refuses a second one right after
 * (possessive a*+, nested a**), allowing only the lazy '?'. */
static int repetition(struct re_tr *t, size_t len)
{
	const char *p = t->p;
	size_t start = t->i;
	int rc = tp_buf_add(t->out, p + t->i, len);
	t->i += len;
	if (p[t->i] == '?')
		rc |= tp_buf_addc(t->out, p[t->i++]);
	if (!rc && (p[t->i] == '*' || p[t->i] == '+' || p[t->i] == '?' ||
		    (p[t->i] == '{' && repeat_len(p + t->i, &(long){ 0 }, &(long){ 0 }))))
		return fail(t, "invalid nested repetition operator", start, t->i + 1);
	return rc;
}

int tp__regex_translate(const char *pattern, tp_buf *out, char *why, size_t whylen)
{
	struct re_tr t = { .p = pattern, .out = out, .why = why, .whylen = whylen };
	int rc = 0;
	size_t depth = 0; /* open groups: Go names the whole pattern when they do not balance */
	bool operand = false; /* something a repetition may apply to was just written */
	while (!rc && pattern[t.i]) {
		char c = pattern[t.i];
		long n, m;
		size_t len = c == '{' ? repeat_len(pattern + t.i, &n, &m) : 0;
		bool repeat = c == '*' || c == '+' || c == '?' || len;
		if (repeat && !operand)
			return fail(&t, "missing argument to repetition operator", t.i,
				    t.i + (len ? len : 1));
		operand = !repeat || operand;
		if (c == '\\')
			rc = escape(&t, false);
		else if (c == '[')
			rc = char_class(&t);
		else if (c == '(') {
			rc = group_open(&t);
			/* "(?i)" sets flags and opens nothing: it was written whole */
			bool flags_only = !rc && t.out->data[t.out->len - 1] == ')';
			depth += !flags_only;
			operand = flags_only && operand;
		} else if (c == '|') {
			operand = false;
			rc = tp_buf_addc(out, c);
			t.i++;
		} else if (c == ')') {
			if (!depth)
				return fail(&t, "unexpected )", 0, strlen(pattern));
			depth--;
			rc = tp_buf_addc(out, c);
			t.i++;
		}
		else if (c == '*' || c == '+' || c == '?')
			rc = repetition(&t, 1);
		else if (len) {
			if (n > MAX_REPEAT || m > MAX_REPEAT || (m >= 0 && m < n))
				return fail(&t, "invalid repeat count", t.i, t.i + len);
			rc = repetition(&t, len);
		} else {
			rc = tp_buf_addc(out, c);
			t.i++;
		}
	}
	if (!rc && depth)
		return fail(&t, "missing closing )", 0, strlen(pattern));
	return rc;
}

int tp__regex_compile(const char *pattern, tp_regex **out, char *why, size_t whylen)
{
	if (!pattern || !out)
		return TP_EINVAL;
	*out = NULL;
	tp_buf b = TP_BUF_INIT(1 << 20);
	int rc = tp__regex_translate(pattern, &b, why, whylen);
	if (!rc)
		rc = tp_buf_addc(&b, '\0');
	if (rc) {
		tp_buf_free(&b);
		return rc;
	}
	pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
	if (cctx)
		pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);
	int err = 0;
	PCRE2_SIZE off = 0;
	pcre2_code *code = cctx ? pcre2_compile((PCRE2_SPTR)b.data, b.len - 1,
						PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
							PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C,
						&err, &off, cctx)
				: NULL;
	pcre2_compile_context_free(cctx);
	tp_buf_free(&b);
	if (!code) {
		if (!err)
			return TP_ENOMEM;
		PCRE2_UCHAR msg[160];
		pcre2_get_error_message(err, msg, sizeof(msg));
		if (why && whylen)
			snprintf(why, whylen, "%s: `%s`", (const char *)msg, pattern);
		return TP_EPARSE;
	}
	pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* the interpreter if JIT is unavailable */
	tp_regex *re = calloc(1, sizeof(*re));
	pcre2_match_context *mctx = pcre2_match_context_create(NULL);
	if (!re || !mctx) {
		free(re);
		pcre2_match_context_free(mctx);
		pcre2_code_free(code);
		return TP_ENOMEM;
	}
	pcre2_set_match_limit(mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(mctx, DEPTH_LIMIT);
	re->code = code;
	re->mctx = mctx;
	*out = re;
	return TP_OK;
}

int tp__regex_match(const tp_regex *re, const char *s, size_t n)
{
	struct tp_regex *cache = (struct tp_regex *)re; /* only its spare block */
	pcre2_match_data *md = atomic_exchange(&cache->spare, NULL);
	if (!md && !(md = pcre2_match_data_create(1, NULL)))
		return TP_ENOMEM;
	int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, 0, md, re->mctx);
	pcre2_match_data *none = NULL;
	if (!atomic_compare_exchange_strong(&cache->spare, &none, md))
		pcre2_match_data_free(md); /* another match put its block back first */
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	return rc == PCRE2_ERROR_NOMEMORY ? TP_ENOMEM : TP_ELIMIT;
}

void tp__regex_free(tp_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(atomic_load(&re->spare));
	pcre2_code_free(re->code);
	pcre2_match_context_free(re->mctx);
	free(re);
}

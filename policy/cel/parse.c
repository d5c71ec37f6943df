/*
 * cel/parse.c — CEL text to a tree: a lexer and a recursive-descent parser of
 * CEL's grammar (cel-spec's langdef), with the macros (has, all, exists,
 * exists_one, filter, map) recognised here as cel-go's parser does.
 *
 * The tree lives in the caller's arena. Anything outside the subset the
 * evaluator runs (unknown functions, variables other than self/oldSelf and
 * macro variables, the optional syntax .? and [?]) is refused here with a
 * reason, so an unsupported rule is known when its CRD is compiled.
 */
#include "policy/cel/ast.h"
#include "policy/core/regex.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 250 /* cel-go's default recursion limit */
#define MAX_VARS 16

typedef enum tok {
	T_EOF, T_INT, T_UINT, T_DOUBLE, T_STRING, T_BYTES, T_IDENT,
	T_TRUE, T_FALSE, T_NULL, T_IN,
	T_LPAREN, T_RPAREN, T_LBRACKET, T_RBRACKET, T_LBRACE, T_RBRACE,
	T_DOT, T_COMMA, T_COLON, T_QUESTION, T_NOT, T_PLUS, T_MINUS, T_STAR, T_SLASH,
	T_PERCENT, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND, T_OR, T_ERROR,
} tok;

typedef struct parser {
	tp_arena *a;
	const char *src;
	size_t i;       /* lexer position */
	tok t;          /* current token */
	size_t start;   /* where it starts */
	const char *text; /* identifier name or string value (arena) */
	size_t textn;
	long long ival;
	unsigned long long uval;
	double dval;
	int depth;
	const char *vars[MAX_VARS]; /* macro variables in scope */
	int nvars;
	struct tp_regex *compiled[32]; /* freed again if the parse fails */
	int ncompiled;
	int rc;
	char *why;
	size_t whylen;
} parser;

static void *fail(parser *p, int rc, const char *fmt, ...) TP_PRINTF(3, 4);
static void *fail(parser *p, int rc, const char *fmt, ...)
{
	if (p->rc)
		return NULL;
	p->rc = rc;
	if (p->why && p->whylen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->why, p->whylen, fmt, ap);
		va_end(ap);
	}
	return NULL;
}

/* ------------------------------------------------------------ lexer */

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : isxdigit((unsigned char)c) ? (tolower(c) - 'a' + 10) : -1;
}

/* Put code point cp in UTF-8 at out; returns the bytes written. */
static size_t utf8_put(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* One escape sequence after a backslash at s[*j]; writes into out. */
static bool unescape_one(const char *s, size_t *j, char *out, size_t *o)
{
	char c = s[(*j)++];
	static const char simple_from[] = "abfnrtv\\'\"`?";
	static const char simple_to[] = "\a\b\f\n\r\t\v\\'\"`?";
	const char *k = c ? strchr(simple_from, c) : NULL;
	if (k) {
		out[(*o)++] = simple_to[k - simple_from];
		return true;
	}
	int digits = c == 'x' || c == 'X' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
	unsigned long cp = 0;
	if (digits) {
		for (int d = 0; d < digits; d++) {
			int h = hexval(s[*j]);
			if (h < 0)
				return false;
			cp = cp * 16 + (unsigned long)h;
			(*j)++;
		}
		if (digits == 2) {
			*o += utf8_put(out + *o, cp);
			return true;
		}
	} else if (c >= '0' && c <= '3') {
		cp = (unsigned long)(c - '0');
		for (int d = 0; d < 2; d++, (*j)++) {
			if (s[*j] < '0' || s[*j] > '7')
				return false;
			cp = cp * 8 + (unsigned long)(s[*j] - '0');
		}
	} else {
		return false;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		return false;
	*o += utf8_put(out + *o, cp);
	return true;
}

/* A quoted literal at p->i (the quote character; raw when r'...'). */
static tok lex_string(parser *p, bool raw, bool bytes)
{
	const char *s = p->src;
	char q = s[p->i];
	bool triple = s[p->i + 1] == q && s[p->i + 2] == q;
	size_t j = p->i + (triple ? 3 : 1);
	char *out = tp_arena_alloc(p->a, strlen(s + j) + 1);
	size_t o = 0;
	if (!out)
		return fail(p, TP_ENOMEM, "out of memory"), T_ERROR;
	for (;;) {
		if (!s[j] || (!triple && s[j] == '\n'))
			return fail(p, TP_EPARSE, "unterminated string at %zu", p->start), T_ERROR;
		if (s[j] == q && (!triple || (s[j + 1] == q && s[j + 2] == q))) {
			j += triple ? 3 : 1;
			break;
		}
		if (s[j] == '\\' && !raw) {
			j++;
			if (!unescape_one(s, &j, out, &o))
				return fail(p, TP_EPARSE, "invalid escape sequence at %zu", j), T_ERROR;
			continue;
		}
		out[o++] = s[j++];
	}
	out[o] = '\0';
	p->text = out;
	p->textn = o;
	p->i = j;
	return bytes ? T_BYTES : T_STRING;
}

static tok lex_number(parser *p)
{
	const char *s = p->src + p->i;
	char *end;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		p->uval = strtoull(s + 2, &end, 16);
	} else {
		size_t n = strspn(s, "0123456789");
		bool frac = s[n] == '.' && isdigit((unsigned char)s[n + 1]);
		bool exp = s[n] == 'e' || s[n] == 'E';
		if (frac || exp) {
			p->dval = strtod(s, &end);
			p->i += (size_t)(end - s);
			return T_DOUBLE;
		}
		p->uval = strtoull(s, &end, 10);
	}
	bool over = errno == ERANGE;
	p->i += (size_t)(end - s);
	if (p->src[p->i] == 'u' || p->src[p->i] == 'U') {
		p->i++;
		if (over)
			return fail(p, TP_EPARSE, "invalid uint literal at %zu", p->start), T_ERROR;
		return T_UINT;
	}
	/* -9223372036854775808 is folded by the unary minus (see unary()) */
	if (over || p->uval > 9223372036854775808ULL)
		return fail(p, TP_EPARSE, "invalid int literal at %zu", p->start), T_ERROR;
	p->ival = (long long)p->uval;
	return T_INT;
}

static tok lex_word(parser *p)
{
	const char *s = p->src + p->i;
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	if ((n == 1 || n == 2) && (s[n] == '"' || s[n] == '\'')) {
		bool raw = memchr(s, 'r', n) || memchr(s, 'R', n);
		bool bytes = memchr(s, 'b', n) || memchr(s, 'B', n);
		if ((raw || bytes) && (n == 1 || (raw && bytes))) {
			p->i += n;
			return lex_string(p, raw, bytes);
		}
	}
	p->i += n;
	if (n == 4 && !memcmp(s, "true", 4))
		return T_TRUE;
	if (n == 5 && !memcmp(s, "false", 5))
		return T_FALSE;
	if (n == 4 && !memcmp(s, "null", 4))
		return T_NULL;
	if (n == 2 && !memcmp(s, "in", 2))
		return T_IN;
	p->text = tp_arena_strndup(p->a, s, n);
	p->textn = n;
	return p->text ? T_IDENT : (fail(p, TP_ENOMEM, "out of memory"), T_ERROR);
}

static tok lex_punct(parser *p)
{
	static const struct { const char *s; tok t; } ops[] = {
		{ "==", T_EQ }, { "!=", T_NE }, { "<=", T_LE }, { ">=", T_GE }, { "&&", T_AND },
		{ "||", T_OR }, { "(", T_LPAREN }, { ")", T_RPAREN }, { "[", T_LBRACKET },
		{ "]", T_RBRACKET }, { "{", T_LBRACE }, { "}", T_RBRACE }, { ".", T_DOT },
		{ ",", T_COMMA }, { ":", T_COLON }, { "?", T_QUESTION }, { "!", T_NOT },
		{ "+", T_PLUS }, { "-", T_MINUS }, { "*", T_STAR }, { "/", T_SLASH },
		{ "%", T_PERCENT }, { "<", T_LT }, { ">", T_GT },
	};
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = strlen(ops[k].s);
		if (!strncmp(p->src + p->i, ops[k].s, n)) {
			p->i += n;
			return ops[k].t;
		}
	}
	return fail(p, TP_EPARSE, "Syntax error: token recognition error at: '%c' (offset %zu)",
		    p->src[p->i], p->i), T_ERROR;
}

static void next(parser *p)
{
	const char *s = p->src;
	for (;;) {
		while (isspace((unsigned char)s[p->i]))
			p->i++;
		if (s[p->i] == '/' && s[p->i + 1] == '/') {
			while (s[p->i] && s[p->i] != '\n')
				p->i++;
			continue;
		}
		break;
	}
	p->start = p->i;
	char c = s[p->i];
	if (!c)
		p->t = T_EOF;
	else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[p->i + 1])))
		p->t = lex_number(p);
	else if (isalpha((unsigned char)c) || c == '_')
		p->t = lex_word(p);
	else if (c == '"' || c == '\'')
		p->t = lex_string(p, false, false);
	else
		p->t = lex_punct(p);
}

static bool accept(parser *p, tok t)
{
	if (p->t != t)
		return false;
	next(p);
	return true;
}

static bool expect(parser *p, tok t, const char *what)
{
	if (accept(p, t))
		return true;
	fail(p, TP_EPARSE, "Syntax error: expected %s at offset %zu", what, p->start);
	return false;
}

/* ------------------------------------------------------------ tree */

static tp_cel_expr *node(parser *p, tp_cel_node kind, size_t pos)
{
	tp_cel_expr *e = tp_arena_alloc(p->a, sizeof(*e));
	if (!e)
		return fail(p, TP_ENOMEM, "out of memory");
	memset(e, 0, sizeof(*e));
	e->node = kind;
	e->pos = (int)pos;
	return e;
}

static tp_cel_expr *expr(parser *p);

/* Comma-separated expressions up to close; *out an arena array. */
static bool expr_list(parser *p, tok close, tp_cel_expr ***out, size_t *n)
{
	tp_cel_expr *tmp[64];
	*n = 0;
	if (!accept(p, close)) {
		do {
			if (p->t == close)
				break; /* a trailing comma */
			if (*n == 64)
				return fail(p, TP_EUNSUPPORTED, "more than 64 elements in one list"), false;
			if (!(tmp[(*n)++] = expr(p)))
				return false;
		} while (accept(p, T_COMMA));
		if (!expect(p, close, close == T_RPAREN ? "')'" : "']'"))
			return false;
	}
	*out = tp_arena_alloc(p->a, (*n ? *n : 1) * sizeof(**out));
	if (!*out)
		return fail(p, TP_ENOMEM, "out of memory"), false;
	memcpy(*out, tmp, *n * sizeof(**out));
	return true;
}

static bool var_in_scope(const parser *p, const char *name)
{
	for (int k = 0; k < p->nvars; k++)
		if (!strcmp(p->vars[k], name))
			return true;
	return !strcmp(name, "self") || !strcmp(name, "oldSelf");
}

/* has(a.f): the argument must be a field selection. */
static tp_cel_expr *has_macro(parser *p, tp_cel_expr *call)
{
	if (call->nargs != 1 || call->args[0]->node != TP_N_SELECT)
		return fail(p, TP_EPARSE, "invalid argument to has() macro (offset %d)", call->pos);
	tp_cel_expr *sel = call->args[0];
	sel->node = TP_N_HAS;
	return sel;
}

static const char *const macros[] = { "all", "exists", "exists_one", "filter", "map" };

/* recv.macro(v, pred[, transform]): the iteration variable must be a plain
 * name; it is in scope for the predicate (parsed before we knew it was a
 * macro: check names after the fact). */
static tp_cel_expr *receiver_macro(parser *p, tp_cel_expr *call)
{
	size_t n = call->nargs - 1; /* args[0] is the receiver */
	bool is_map = !strcmp(call->name, "map");
	if (n != 2 && !(is_map && n == 3))
		return fail(p, TP_EPARSE, "%s() macro takes 2%s arguments (offset %d)", call->name,
			    is_map ? " or 3" : "", call->pos);
	if (call->args[1]->node != TP_N_IDENT)
		return fail(p, TP_EPARSE, "argument is not an identifier (offset %d)", call->pos);
	call->node = TP_N_MACRO;
	call->var = call->args[1]->name;
	call->a = call->args[0];
	call->b = call->args[2];
	call->c = n == 3 ? call->args[3] : NULL;
	return call;
}

/* A call after its name (and receiver, if any): name '(' args ')'. The
 * macros' iteration variables are put in scope before their bodies are
 * parsed, so that unknown names can be refused on sight. */
static tp_cel_expr *call(parser *p, tp_cel_expr *recv, const char *name, size_t pos)
{
	tp_cel_expr *e = node(p, TP_N_CALL, pos);
	if (!e)
		return NULL;
	e->name = name;
	e->receiver = recv != NULL;
	bool macro = false;
	for (size_t k = 0; recv && k < sizeof(macros) / sizeof(*macros); k++)
		macro |= !strcmp(name, macros[k]);
	tp_cel_expr *tmp[8];
	size_t n = 0;
	if (recv)
		tmp[n++] = recv;
	int vars = p->nvars;
	if (!accept(p, T_RPAREN)) {
		do {
			if (n == 8)
				return fail(p, TP_EUNSUPPORTED, "too many arguments to %s()", name);
			if (macro && n == 1 && p->t == T_IDENT) {
				/* the iteration variable: a name being declared */
				if (!(tmp[n] = node(p, TP_N_IDENT, p->start)))
					return NULL;
				tmp[n++]->name = p->text;
				next(p);
			} else if (!(tmp[n++] = expr(p))) {
				return NULL;
			}
			if (macro && n == 2 && tmp[1]->node == TP_N_IDENT && p->nvars < MAX_VARS)
				p->vars[p->nvars++] = tmp[1]->name;
		} while (accept(p, T_COMMA));
		if (!expect(p, T_RPAREN, "')'"))
			return NULL;
	}
	p->nvars = vars;
	e->nargs = n;
	e->args = tp_arena_alloc(p->a, (n ? n : 1) * sizeof(*e->args));
	if (!e->args)
		return fail(p, TP_ENOMEM, "out of memory");
	memcpy(e->args, tmp, n * sizeof(*tmp));
	if (!recv && !strcmp(name, "has"))
		return has_macro(p, e);
	if (macro)
		return receiver_macro(p, e);
	if (!(e->fn = tp__cel_function(name, recv != NULL, n)))
		return fail(p, TP_EUNSUPPORTED, "function '%s' with %zu argument%s is not supported",
			    name, n, n == 1 ? "" : "s");
	const tp_cel_expr *pat = e->args[n - 1];
	if (!strcmp(name, "matches") && pat->node == TP_N_LITERAL && pat->lit.kind == TP_CEL_STRING &&
	    !memchr(pat->lit.s, '\0', pat->lit.n) && p->ncompiled < 32) {
		char why[256];
		if (tp__regex_compile(pat->lit.s, &e->re, why, sizeof(why)))
			return fail(p, TP_EPARSE, "compilation failed: error parsing regexp: %s", why);
		p->compiled[p->ncompiled++] = e->re;
	}
	return e;
}

void tp__cel_release(tp_cel_expr *e)
{
	if (!e)
		return;
	tp__regex_free(e->re);
	e->re = NULL;
	for (size_t k = 0; k < e->nargs; k++)
		tp__cel_release(e->args[k]);
	if (e->node != TP_N_CALL && e->node != TP_N_MACRO && e->node != TP_N_LIST &&
	    e->node != TP_N_MAP) {
		tp__cel_release(e->a);
		tp__cel_release(e->b);
		tp__cel_release(e->c);
	}
}

static tp_cel_expr *literal(parser *p, tp_cel_val v)
{
	tp_cel_expr *e = node(p, TP_N_LITERAL, p->start);
	if (e)
		e->lit = v;
	next(p);
	return e;
}

/* A list or map literal whose entries are all constants is made here, once,
 * in the tree's arena: evaluating it then returns the value, charging what
 * evaluating each entry would have charged. Values made by the expression
 * are read only, so the one value can be handed out again. */
static tp_cel_expr *fold(parser *p, tp_cel_expr *e)
{
	long long steps = 1;
	for (size_t k = 0; k < e->nargs; k++) {
		const tp_cel_expr *arg = e->args[k];
		if (arg->node == TP_N_LITERAL)
			steps++;
		else if (arg->folded)
			steps += arg->folded;
		else
			return e;
	}
	tp_cel_val *items = tp_arena_alloc(p->a, (e->nargs ? e->nargs : 1) * sizeof(*items));
	if (!items)
		return e; /* built on every evaluation, as before */
	for (size_t k = 0; k < e->nargs; k++)
		items[k] = e->args[k]->lit;
	e->lit = (tp_cel_val){ .kind = e->node == TP_N_MAP ? TP_CEL_MAP : TP_CEL_LIST };
	e->lit.items = items;
	e->lit.count = e->nargs;
	e->folded = steps;
	return e;
}

static tp_cel_expr *primary(parser *p)
{
	size_t pos = p->start;
	switch (p->t) {
	case T_INT: return literal(p, (tp_cel_val){ .kind = TP_CEL_INT, .i = p->ival });
	case T_UINT: return literal(p, (tp_cel_val){ .kind = TP_CEL_UINT, .u = p->uval });
	case T_DOUBLE: return literal(p, (tp_cel_val){ .kind = TP_CEL_DOUBLE, .d = p->dval });
	case T_STRING:
	case T_BYTES:
		return literal(p, (tp_cel_val){ .kind = p->t == T_STRING ? TP_CEL_STRING : TP_CEL_BYTES,
						.s = p->text, .n = p->textn });
	case T_TRUE:
	case T_FALSE: return literal(p, (tp_cel_val){ .kind = TP_CEL_BOOL, .b = p->t == T_TRUE });
	case T_NULL: return literal(p, (tp_cel_val){ .kind = TP_CEL_NULL });
	case T_LPAREN: {
		next(p);
		tp_cel_expr *e = expr(p);
		return e && expect(p, T_RPAREN, "')'") ? e : NULL;
	}
	case T_LBRACKET: {
		next(p);
		tp_cel_expr *e = node(p, TP_N_LIST, pos);
		return e && expr_list(p, T_RBRACKET, &e->args, &e->nargs) ? fold(p, e) : NULL;
	}
	case T_LBRACE: {
		next(p);
		tp_cel_expr *e = node(p, TP_N_MAP, pos);
		tp_cel_expr *tmp[64];
		size_t n = 0;
		while (e && p->t != T_RBRACE) {
			if (n == 64)
				return fail(p, TP_EUNSUPPORTED, "more than 32 entries in one map");
			if (!(tmp[n++] = expr(p)) || !expect(p, T_COLON, "':'") || !(tmp[n++] = expr(p)))
				return NULL;
			if (!accept(p, T_COMMA))
				break;
		}
		if (!e || !expect(p, T_RBRACE, "'}'"))
			return NULL;
		e->nargs = n;
		e->args = tp_arena_alloc(p->a, (n ? n : 1) * sizeof(*e->args));
		if (!e->args)
			return fail(p, TP_ENOMEM, "out of memory");
		memcpy(e->args, tmp, n * sizeof(*tmp));
		return fold(p, e);
	}
	case T_DOT:
		return fail(p, TP_EUNSUPPORTED, "qualified names (leading '.') are not supported");
	case T_IDENT: {
		const char *name = p->text;
		next(p);
		if (accept(p, T_LPAREN))
			return call(p, NULL, name, pos);
		if (!var_in_scope(p, name))
			return fail(p, TP_EUNSUPPORTED, "undeclared reference to '%s'", name);
		tp_cel_expr *e = node(p, TP_N_IDENT, pos);
		if (e)
			e->name = name;
		return e;
	}
	case T_ERROR:
		return NULL;
	default:
		return fail(p, TP_EPARSE, "Syntax error: unexpected %s at offset %zu",
			    p->t == T_EOF ? "end of expression" : "token", pos);
	}
}

static tp_cel_expr *member(parser *p)
{
	tp_cel_expr *e = primary(p);
	while (e) {
		size_t pos = p->start;
		if (accept(p, T_DOT)) {
			if (p->t == T_QUESTION)
				return fail(p, TP_EUNSUPPORTED, "optional field selection '.?' is not supported");
			if (p->t != T_IDENT && p->t != T_IN && p->t != T_TRUE && p->t != T_FALSE &&
			    p->t != T_NULL)
				return fail(p, TP_EPARSE, "Syntax error: no field name at offset %zu", pos);
			const char *name = p->t == T_IDENT ? p->text
					 : tp_arena_strndup(p->a, p->src + p->start, p->i - p->start);
			next(p);
			if (accept(p, T_LPAREN)) {
				e = call(p, e, name, pos);
				continue;
			}
			tp_cel_expr *s = node(p, TP_N_SELECT, pos);
			if (s) {
				s->a = e;
				s->name = name;
			}
			e = s;
		} else if (accept(p, T_LBRACKET)) {
			if (p->t == T_QUESTION)
				return fail(p, TP_EUNSUPPORTED, "optional index '[?' is not supported");
			tp_cel_expr *x = node(p, TP_N_INDEX, pos);
			if (!x || !(x->a = e, x->b = expr(p)) || !expect(p, T_RBRACKET, "']'"))
				return NULL;
			e = x;
		} else {
			break;
		}
	}
	return e;
}

static tp_cel_expr *unary(parser *p)
{
	size_t pos = p->start;
	if (accept(p, T_NOT)) {
		tp_cel_expr *e = node(p, TP_N_NOT, pos);
		return e && (e->a = unary(p)) ? e : NULL;
	}
	if (accept(p, T_MINUS)) {
		/* a literal folds: -9223372036854775808 is an int */
		if (p->t == T_INT || p->t == T_DOUBLE) {
			tp_cel_expr *lit = primary(p);
			if (lit && lit->lit.kind == TP_CEL_INT)
				lit->lit.i = (long long)(0ULL - (unsigned long long)lit->lit.i);
			else if (lit)
				lit->lit.d = -lit->lit.d;
			return lit;
		}
		tp_cel_expr *e = node(p, TP_N_NEG, pos);
		return e && (e->a = unary(p)) ? e : NULL;
	}
	tp_cel_expr *e = member(p);
	if (e && e->node == TP_N_LITERAL && e->lit.kind == TP_CEL_INT && e->lit.i < 0)
		return fail(p, TP_EPARSE, "invalid int literal at offset %d", e->pos);
	return e;
}

/* Binary levels, loosest last: each entry's operators and how they build. */
static tp_cel_expr *binary(parser *p, int level);

static int binop(tok t, int level)
{
	static const struct { tok t; int op, level; } ops[] = {
		{ T_STAR, TP_OP_MUL, 0 }, { T_SLASH, TP_OP_DIV, 0 }, { T_PERCENT, TP_OP_MOD, 0 },
		{ T_PLUS, TP_OP_ADD, 1 }, { T_MINUS, TP_OP_SUB, 1 },
		{ T_EQ, TP_OP_EQ, 2 }, { T_NE, TP_OP_NE, 2 }, { T_LT, TP_OP_LT, 2 },
		{ T_LE, TP_OP_LE, 2 }, { T_GT, TP_OP_GT, 2 }, { T_GE, TP_OP_GE, 2 },
		{ T_IN, TP_OP_IN, 2 },
	};
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (ops[k].t == t && ops[k].level == level)
			return ops[k].op;
	return 0;
}

static tp_cel_expr *binary(parser *p, int level)
{
	if (level < 0)
		return unary(p);
	tp_cel_expr *e = binary(p, level - 1);
	for (;;) {
		size_t pos = p->start;
		int op = 0;
		tp_cel_node kind = TP_N_BINARY;
		if (level == 3 && p->t == T_AND)
			kind = TP_N_AND;
		else if (level == 4 && p->t == T_OR)
			kind = TP_N_OR;
		else if (level > 2 || !(op = binop(p->t, level)))
			return e;
		if (!e)
			return NULL;
		next(p);
		tp_cel_expr *b = node(p, kind, pos);
		if (!b || !(b->b = binary(p, level - 1)))
			return NULL;
		b->a = e;
		b->op = op;
		e = b;
	}
}

static tp_cel_expr *expr(parser *p)
{
	if (++p->depth > MAX_DEPTH)
		return fail(p, TP_ELIMIT, "expression recursion limit exceeded: %d", MAX_DEPTH);
	size_t pos = p->start;
	tp_cel_expr *e = binary(p, 4);
	if (e && accept(p, T_QUESTION)) {
		tp_cel_expr *c = node(p, TP_N_COND, pos);
		if (!c || !(c->b = binary(p, 4)) || !expect(p, T_COLON, "':'") || !(c->c = expr(p)))
			return NULL;
		c->a = e;
		e = c;
	}
	p->depth--;
	return e;
}

int tp__cel_parse(tp_arena *a, const char *src, tp_cel_expr **out, char *why, size_t whylen)
{
	if (!a || !src || !out)
		return TP_EINVAL;
	parser p = { .a = a, .src = src, .why = why, .whylen = whylen };
	*out = NULL;
	next(&p);
	tp_cel_expr *e = p.rc ? NULL : expr(&p);
	if (e && p.t != T_EOF)
		fail(&p, TP_EPARSE, "Syntax error: unexpected input at offset %zu", p.start);
	if (p.rc) {
		for (int k = 0; k < p.ncompiled; k++)
			tp__regex_free(p.compiled[k]);
		return p.rc;
	}
	*out = e;
	return TP_OK;
}

bool tp__cel_uses(const tp_cel_expr *e, const char *variable)
{
	if (!e)
		return false;
	if (e->node == TP_N_IDENT && !strcmp(e->name, variable))
		return true;
	if (e->node == TP_N_MACRO && e->var && !strcmp(e->var, variable))
		return false; /* shadowed inside; the range (a) was checked as an arg */
	for (size_t k = 0; k < e->nargs; k++)
		if (tp__cel_uses(e->args[k], variable))
			return true;
	return (e->node != TP_N_CALL && e->node != TP_N_MACRO && e->node != TP_N_LIST &&
		e->node != TP_N_MAP) &&
	       (tp__cel_uses(e->a, variable) || tp__cel_uses(e->b, variable) ||
		tp__cel_uses(e->c, variable));
}

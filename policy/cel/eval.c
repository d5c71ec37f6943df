/*
 * cel/eval.c — walking the tree: variables (self, oldSelf, macro variables),
 * field selection and indexing, the operators with CEL's rules (errors are
 * values; && and || absorb an error when the other side decides; int
 * arithmetic checks overflow), the macros, and the cost bound that stops a
 * rule that runs too long.
 */
#include "policy/cel/ast.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define MAX_SCOPE 16

typedef struct ev {
	tp_arena *a;
	const char *names[MAX_SCOPE];
	tp_cel_val vals[MAX_SCOPE];
	int n;
	long long cost, limit;
	bool over;
} ev;

static tp_cel_val eval(ev *x, const tp_cel_expr *e);

static tp_cel_val overload(ev *x)
{
	return tp__cel_error(x->a, "no such overload");
}

static bool charge(ev *x, long long n)
{
	x->cost += n;
	if (x->cost > x->limit)
		x->over = true;
	return !x->over;
}

static tp_cel_val variable(ev *x, const char *name)
{
	for (int k = x->n - 1; k >= 0; k--)
		if (!strcmp(x->names[k], name))
			return x->vals[k];
	return tp__cel_error(x->a, "no such attribute(s): %s", name);
}

static tp_cel_val select_field(ev *x, const tp_cel_expr *e)
{
	tp_cel_val v = eval(x, e->a), out;
	if (v.kind == TP_CEL_ERROR)
		return v;
	if (v.kind != TP_CEL_MAP)
		return overload(x);
	if (e->node == TP_N_HAS)
		return tp__cel_bool(tp__cel_has_field(&v, e->name));
	if (!tp__cel_field(&v, e->name, &out))
		return tp__cel_error(x->a, "no such key: %s", e->name);
	return out;
}

static tp_cel_val index_of(ev *x, const tp_cel_expr *e)
{
	tp_cel_val v = eval(x, e->a), k = eval(x, e->b), out;
	if (v.kind == TP_CEL_ERROR)
		return v;
	if (k.kind == TP_CEL_ERROR)
		return k;
	if (v.kind == TP_CEL_MAP) {
		if (tp__cel_map_get(&v, &k, &out))
			return out;
		size_t n;
		const char *s = tp__cel_to_string(x->a, &k, &n);
		return tp__cel_error(x->a, "no such key: %.*s", (int)(s ? n : 0), s ? s : "");
	}
	if (v.kind != TP_CEL_LIST)
		return overload(x);
	long long i;
	if (k.kind == TP_CEL_INT)
		i = k.i;
	else if (k.kind == TP_CEL_UINT && k.u < (unsigned long long)LLONG_MAX)
		i = (long long)k.u;
	else if (k.kind == TP_CEL_DOUBLE && k.d == floor(k.d) && fabs(k.d) < 9e18)
		i = (long long)k.d;
	else
		return overload(x);
	size_t size = tp__cel_size(&v);
	if (i < 0 || (size_t)i >= size)
		return tp__cel_error(x->a, "index '%lld' out of range in list size '%zu'", i, size);
	return tp__cel_list_at(&v, (size_t)i);
}

/* && and ||: the deciding value wins over an error on the other side. */
static tp_cel_val logic(ev *x, const tp_cel_expr *e, bool is_and)
{
	tp_cel_val l = eval(x, e->a);
	if (l.kind == TP_CEL_BOOL && l.b != is_and)
		return l;
	tp_cel_val r = eval(x, e->b);
	if (r.kind == TP_CEL_BOOL && r.b != is_and)
		return r;
	if (l.kind == TP_CEL_BOOL && r.kind == TP_CEL_BOOL)
		return l;
	if (l.kind == TP_CEL_ERROR)
		return l;
	return r.kind == TP_CEL_ERROR ? r : overload(x);
}

static tp_cel_val make_list(ev *x, tp_cel_val *items, size_t n)
{
	tp_cel_val out = { .kind = TP_CEL_LIST };
	out.items = tp_arena_alloc(x->a, (n ? n : 1) * sizeof(*items));
	if (!out.items)
		return tp__cel_error(x->a, "out of memory");
	memcpy(out.items, items, n * sizeof(*items));
	out.count = n;
	return out;
}

static tp_cel_val literal_list(ev *x, const tp_cel_expr *e, bool is_map)
{
	/* folded when parsed; near the limit it is built, to stop where it stopped */
	if (e->folded && x->cost + e->folded - 1 <= x->limit) {
		x->cost += e->folded - 1;
		return e->lit;
	}
	tp_cel_val *items = tp_arena_alloc(x->a, (e->nargs ? e->nargs : 1) * sizeof(*items));
	if (!items)
		return tp__cel_error(x->a, "out of memory");
	for (size_t k = 0; k < e->nargs; k++)
		if ((items[k] = eval(x, e->args[k])).kind == TP_CEL_ERROR)
			return items[k];
	tp_cel_val out = make_list(x, items, e->nargs);
	if (is_map && out.kind == TP_CEL_LIST)
		out.kind = TP_CEL_MAP;
	return out;
}

static tp_cel_val int_arith(ev *x, int op, long long a, long long b)
{
	long long r = 0;
	bool over = false;
	switch (op) {
	case TP_OP_ADD: over = __builtin_add_overflow(a, b, &r); break;
	case TP_OP_SUB: over = __builtin_sub_overflow(a, b, &r); break;
	case TP_OP_MUL: over = __builtin_mul_overflow(a, b, &r); break;
	case TP_OP_DIV:
	case TP_OP_MOD:
		if (!b)
			return tp__cel_error(x->a, op == TP_OP_DIV ? "division by zero" : "modulus by zero");
		over = a == LLONG_MIN && b == -1;
		r = over ? 0 : op == TP_OP_DIV ? a / b : a % b;
		break;
	}
	return over ? tp__cel_error(x->a, "integer overflow") : tp__cel_int(r);
}

static tp_cel_val double_arith(ev *x, int op, double a, double b)
{
	switch (op) {
	case TP_OP_ADD: return tp__cel_double(a + b);
	case TP_OP_SUB: return tp__cel_double(a - b);
	case TP_OP_MUL: return tp__cel_double(a * b);
	case TP_OP_DIV: return tp__cel_double(a / b);
	default: return overload(x);
	}
}

static tp_cel_val concat(ev *x, const tp_cel_val *l, const tp_cel_val *r)
{
	if (l->kind == TP_CEL_LIST) {
		size_t n = tp__cel_size(l), m = tp__cel_size(r);
		tp_cel_val *items = tp_arena_alloc(x->a, (n + m ? n + m : 1) * sizeof(*items));
		if (!items)
			return tp__cel_error(x->a, "out of memory");
		const cJSON *cl = NULL, *cr = NULL;
		for (size_t k = 0; k < n; k++)
			items[k] = tp__cel_list_next(l, k, &cl);
		for (size_t k = 0; k < m; k++)
			items[n + k] = tp__cel_list_next(r, k, &cr);
		charge(x, (long long)(n + m));
		return make_list(x, items, n + m);
	}
	char *s = tp_arena_alloc(x->a, l->n + r->n + 1);
	if (!s)
		return tp__cel_error(x->a, "out of memory");
	memcpy(s, l->s, l->n);
	memcpy(s + l->n, r->s, r->n);
	s[l->n + r->n] = '\0';
	charge(x, (long long)(l->n + r->n) / 10 + 1);
	tp_cel_val out = *l;
	out.s = s;
	out.n = l->n + r->n;
	return out;
}

static tp_cel_val membership(ev *x, const tp_cel_val *item, const tp_cel_val *in)
{
	tp_cel_val out;
	if (in->kind == TP_CEL_MAP)
		return tp__cel_bool(tp__cel_map_get(in, item, &out) == 1);
	if (in->kind != TP_CEL_LIST)
		return overload(x);
	size_t n = tp__cel_size(in);
	charge(x, (long long)n);
	const cJSON *cur = NULL;
	for (size_t k = 0; k < n; k++) {
		tp_cel_val it = tp__cel_list_next(in, k, &cur);
		if (tp__cel_equal(item, &it) == 1)
			return tp__cel_bool(true);
	}
	return tp__cel_bool(false);
}

static tp_cel_val binary(ev *x, const tp_cel_expr *e)
{
	tp_cel_val l = eval(x, e->a);
	if (l.kind == TP_CEL_ERROR)
		return l;
	tp_cel_val r = eval(x, e->b);
	if (r.kind == TP_CEL_ERROR)
		return r;
	int op = e->op, c;
	switch (op) {
	case TP_OP_EQ:
	case TP_OP_NE:
		c = tp__cel_equal(&l, &r);
		return c < 0 ? overload(x) : tp__cel_bool((c == 1) == (op == TP_OP_EQ));
	case TP_OP_LT:
	case TP_OP_LE:
	case TP_OP_GT:
	case TP_OP_GE:
		if ((c = tp__cel_compare(&l, &r)) == 2)
			return overload(x);
		return tp__cel_bool(op == TP_OP_LT ? c < 0 : op == TP_OP_LE ? c <= 0
				   : op == TP_OP_GT ? c > 0 : c >= 0);
	case TP_OP_IN:
		return membership(x, &l, &r);
	}
	if (l.kind != r.kind)
		return overload(x);
	if (l.kind == TP_CEL_INT)
		return int_arith(x, op, l.i, r.i);
	if (l.kind == TP_CEL_DOUBLE)
		return double_arith(x, op, l.d, r.d);
	if (l.kind == TP_CEL_UINT && op != TP_OP_SUB && (op == TP_OP_ADD || r.u)) {
		unsigned long long u = op == TP_OP_ADD ? l.u + r.u : op == TP_OP_MUL ? l.u * r.u
				       : op == TP_OP_DIV ? l.u / r.u : l.u % r.u;
		return (tp_cel_val){ .kind = TP_CEL_UINT, .u = u };
	}
	if (op == TP_OP_ADD && (l.kind == TP_CEL_STRING || l.kind == TP_CEL_BYTES ||
				l.kind == TP_CEL_LIST))
		return concat(x, &l, &r);
	return overload(x);
}

/* all, exists, exists_one, filter, map over a list's elements or a map's
 * keys. all/exists: the deciding value wins over an error elsewhere. */
static tp_cel_val macro(ev *x, const tp_cel_expr *e)
{
	tp_cel_val range = eval(x, e->a);
	if (range.kind == TP_CEL_ERROR)
		return range;
	if ((range.kind != TP_CEL_LIST && range.kind != TP_CEL_MAP) || x->n == MAX_SCOPE)
		return overload(x);
	const char *m = e->name;
	bool all = !strcmp(m, "all"), exists = !strcmp(m, "exists"), one = !strcmp(m, "exists_one");
	bool filter = !strcmp(m, "filter"), map = !strcmp(m, "map");
	size_t n = tp__cel_size(&range), hits = 0, made = 0;
	tp_cel_val *out = NULL, err = { .kind = TP_CEL_NULL };
	if ((filter || map) && !(out = tp_arena_alloc(x->a, (n ? n : 1) * sizeof(*out))))
		return tp__cel_error(x->a, "out of memory");
	int slot = x->n++;
	x->names[slot] = e->var;
	const cJSON *cur = NULL; /* the place in a JSON range: one walk, not one per element */
	for (size_t k = 0; k < n && !x->over && err.kind == TP_CEL_NULL; k++) {
		tp_cel_val it = range.kind == TP_CEL_LIST ? tp__cel_list_next(&range, k, &cur)
							  : tp__cel_map_key_next(&range, k, &cur);
		x->vals[slot] = it;
		tp_cel_val p = eval(x, e->b);
		if (map && !e->c) {
			out[made] = p; /* map(v, transform) */
		} else if (p.kind != TP_CEL_BOOL) {
			err = p.kind == TP_CEL_ERROR ? p : overload(x);
		} else if (map) {
			if (p.b)
				out[made] = eval(x, e->c); /* map(v, predicate, transform) */
			else
				continue;
		} else if (filter) {
			if (p.b)
				out[made++] = it;
			continue;
		} else {
			hits += p.b;
			if ((all && !p.b) || (exists && p.b)) {
				x->n--;
				return tp__cel_bool(exists);
			}
			continue;
		}
		if (map && out[made].kind == TP_CEL_ERROR)
			err = out[made];
		made += map && err.kind == TP_CEL_NULL;
		if ((all || exists) && err.kind == TP_CEL_ERROR) {
			/* remember the first error, keep looking for the deciding value */
			tp_cel_val first = err;
			err.kind = TP_CEL_NULL;
			for (k++; k < n && !x->over; k++) {
				x->vals[slot] = range.kind == TP_CEL_LIST
							? tp__cel_list_next(&range, k, &cur)
							: tp__cel_map_key_next(&range, k, &cur);
				p = eval(x, e->b);
				if (p.kind == TP_CEL_BOOL && p.b == exists) {
					x->n--;
					return tp__cel_bool(exists);
				}
			}
			err = first;
		}
	}
	x->n--;
	if (x->over)
		return tp__cel_error(x->a, "operation cancelled: actual cost limit exceeded");
	if (err.kind != TP_CEL_NULL)
		return err;
	if (out)
		return make_list(x, out, made);
	return tp__cel_bool(one ? hits == 1 : all);
}

static tp_cel_val call(ev *x, const tp_cel_expr *e)
{
	tp_cel_val args[8];
	for (size_t k = 0; k < e->nargs; k++)
		if ((args[k] = eval(x, e->args[k])).kind == TP_CEL_ERROR)
			return args[k];
	long long extra = 0;
	tp_cel_val v = tp__cel_call(x->a, e->fn, args, e->nargs, e->re, &extra);
	charge(x, extra / 10);
	return v;
}

static tp_cel_val eval(ev *x, const tp_cel_expr *e)
{
	if (!charge(x, 1))
		return tp__cel_error(x->a, "operation cancelled: actual cost limit exceeded");
	tp_cel_val v;
	switch (e->node) {
	case TP_N_LITERAL: return e->lit;
	case TP_N_IDENT: return variable(x, e->name);
	case TP_N_SELECT:
	case TP_N_HAS: return select_field(x, e);
	case TP_N_INDEX: return index_of(x, e);
	case TP_N_CALL: return call(x, e);
	case TP_N_LIST: return literal_list(x, e, false);
	case TP_N_MAP: return literal_list(x, e, true);
	case TP_N_NOT:
		v = eval(x, e->a);
		return v.kind == TP_CEL_BOOL ? tp__cel_bool(!v.b) : v.kind == TP_CEL_ERROR ? v : overload(x);
	case TP_N_NEG:
		v = eval(x, e->a);
		if (v.kind == TP_CEL_INT)
			return v.i == LLONG_MIN ? tp__cel_error(x->a, "integer overflow") : tp__cel_int(-v.i);
		if (v.kind == TP_CEL_DOUBLE)
			return tp__cel_double(-v.d);
		return v.kind == TP_CEL_ERROR ? v : overload(x);
	case TP_N_BINARY: return binary(x, e);
	case TP_N_AND: return logic(x, e, true);
	case TP_N_OR: return logic(x, e, false);
	case TP_N_COND:
		v = eval(x, e->a);
		if (v.kind != TP_CEL_BOOL)
			return v.kind == TP_CEL_ERROR ? v : overload(x);
		return eval(x, v.b ? e->b : e->c);
	case TP_N_MACRO: return macro(x, e);
	}
	return overload(x);
}

int tp__cel_eval(const tp_cel_expr *e, tp_arena *a, const cJSON *self, const cJSON *old,
		const struct tp_sch *sch, long long per_call, long long *cost, tp_cel_val *out)
{
	ev x = { .a = a, .limit = per_call > 0 ? per_call : TP_CEL_PER_CALL_LIMIT };
	x.names[x.n] = "self";
	x.vals[x.n++] = tp__cel_from_json(self, sch);
	if (old) {
		x.names[x.n] = "oldSelf";
		x.vals[x.n++] = tp__cel_from_json(old, sch);
	}
	*out = eval(&x, e);
	if (cost)
		*cost = x.cost;
	return x.over ? TP_ELIMIT : TP_OK;
}

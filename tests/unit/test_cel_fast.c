/*
 * test_cel_fast.c — constants the CEL parser folds once (issue 32): a list
 * or map literal whose entries are all constants is made when the rule is
 * compiled, not on every evaluation. Folded or not, every operator must
 * give the same value, spend the same cost and stop at the same point of
 * the cost limit as when the literal was built per evaluation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "policy/cel/ast.h"
#include "policy/cel/cel.h"
#include "tests/support/testutil.h"

typedef struct outcome {
	int rc;
	tp_cel_val v;
	long long cost;
} outcome;

/* Parse src into a (which keeps the tree), evaluate it on self. */
static outcome run(tp_arena *a, const char *src, const char *self, long long limit,
		   tp_cel_expr **tree)
{
	char why[256] = "";
	tp_cel_expr *e = NULL;
	assert_int_equal(tp__cel_parse(a, src, &e, why, sizeof(why)), TP_OK);
	outcome o = { 0 };
	cJSON *json = self ? tt_jsq(self) : NULL;
	o.rc = tp__cel_eval(e, a, json, NULL, NULL, limit, &o.cost, &o.v);
	if (tree)
		*tree = e;
	else
		tp__cel_release(e);
	cJSON_Delete(json);
	return o;
}

typedef struct want {
	const char *src, *self;
	tp_cel_kind kind;
	long long value; /* bool or int; for errors, ignored */
	long long cost;
} want;

/* Every operator a constant list or map meets, with the value and cost
 * the per-evaluation literal gave (checked before the folding). */
static const want cases[] = {
	{ "self in ['a', 'b', 'c']", "'b'", TP_CEL_BOOL, 1, 9 },
	{ "self in ['a', 'b', 'c']", "'z'", TP_CEL_BOOL, 0, 9 },
	{ "self in []", "'z'", TP_CEL_BOOL, 0, 3 },
	{ "self in {'a': 1, 'b': 2}", "'a'", TP_CEL_BOOL, 1, 7 },
	{ "self in {'a': 1, 'b': 2}", "'c'", TP_CEL_BOOL, 0, 7 },
	{ "{'a': 1, 'b': 2}[self]", "'b'", TP_CEL_INT, 2, 7 },
	{ "{'a': 1, 'b': 2}[self]", "'c'", TP_CEL_ERROR, 0, 7 },
	{ "['x', 'y'][self] == 'y'", "1", TP_CEL_BOOL, 1, 7 },
	{ "self == ['a', 'b']", "['a','b']", TP_CEL_BOOL, 1, 5 },
	{ "self != ['a', 'b']", "['a','c']", TP_CEL_BOOL, 1, 5 },
	{ "size(self + [1, 2, 3])", "[4]", TP_CEL_INT, 4, 11 },
	{ "size([[1, 2], [3], []])", NULL, TP_CEL_INT, 3, 8 },
	{ "[[1, 2], [3]][0][1] == 2", NULL, TP_CEL_BOOL, 1, 12 },
	{ "self in [[1, 2], [3]]", "[3]", TP_CEL_BOOL, 1, 10 },
	{ "[1, 2, 3].all(x, x > 0)", NULL, TP_CEL_BOOL, 1, 14 },
	{ "[1, 2, 3].exists(x, x == self)", "2", TP_CEL_BOOL, 1, 11 },
	{ "{'k': [1, 2]}['k'][1] == 2", NULL, TP_CEL_BOOL, 1, 11 },
	{ "self in [self, 'b']", "'b'", TP_CEL_BOOL, 1, 7 },
	{ "self in [-1, 2]", "-1", TP_CEL_BOOL, 1, 7 },
	{ "self in [1 + 1, 3]", "2", TP_CEL_BOOL, 1, 9 },
};

/* w evaluated in an arena of its own: its value, and its cost unless
 * that is -1. */
static void expect_case(const want *w)
{
	tp_arena *a = NULL;
	assert_int_equal(tp_arena_new(&a, 1 << 20), TP_OK);
	outcome o = run(a, w->src, w->self, 0, NULL);
	if (o.rc != TP_OK || o.v.kind != w->kind)
		print_message("%s on %s: rc %d kind %d\n", w->src, w->self ? w->self : "-", o.rc,
			      o.v.kind);
	assert_int_equal(o.rc, TP_OK);
	assert_int_equal(o.v.kind, w->kind);
	if (w->kind == TP_CEL_BOOL && w->value >= 0)
		assert_int_equal(o.v.b, w->value);
	if (w->kind == TP_CEL_INT)
		assert_int_equal(o.v.i, w->value);
	if (w->cost >= 0)
		assert_int_equal(o.cost, w->cost);
	tp_arena_free(a);
}

static void folded_same_answers(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(*cases); k++)
		expect_case(&cases[k]);
}

/* The literal is made once: two evaluations of the same tree give the
 * same items, and the evaluation arena is not touched for it. */
static void folded_once(void **state)
{
	(void)state;
	tp_arena *a = NULL;
	assert_int_equal(tp_arena_new(&a, 1 << 20), TP_OK);
	tp_cel_expr *e = NULL;
	outcome o1 = run(a, "[1, 'a', [2.5, true], {'k': null}]", NULL, 0, &e);
	assert_int_equal(o1.v.kind, TP_CEL_LIST);
	assert_int_equal(tp__cel_size(&o1.v), 4);
	tp_cel_val v2;
	long long cost = 0;
	assert_int_equal(tp__cel_eval(e, a, NULL, NULL, NULL, 0, &cost, &v2), TP_OK);
	assert_int_equal(cost, o1.cost);
	assert_ptr_equal(v2.items, o1.v.items);
	assert_int_equal(tp__cel_equal(&o1.v, &v2), 1);
	/* a list with one element that is no constant is made each time */
	outcome o3 = run(a, "[1, self]", "2", 0, &e);
	cJSON *two = tt_jsq("2");
	assert_int_equal(tp__cel_eval(e, a, two, NULL, NULL, 0, &cost, &v2), TP_OK);
	assert_ptr_not_equal(v2.items, o3.v.items);
	cJSON_Delete(two);
	tp__cel_release(e);
	tp_arena_free(a);
}

/* The cost limit stops a folded literal where it stopped the built one:
 * the same cost spent and the same error, at every limit around it. */
static void folded_cost_limit(void **state)
{
	(void)state;
	/* membership charges the list's length after the literal: past the
	 * limit there, the bool is kept and TP_ELIMIT returned */
	static const int want_rc[] = { TP_ELIMIT, TP_ELIMIT, TP_ELIMIT, TP_ELIMIT, TP_ELIMIT,
				       TP_ELIMIT, TP_ELIMIT, TP_ELIMIT, TP_OK, TP_OK };
	static const long long want_cost[] = { 2, 3, 4, 5, 6, 9, 9, 9, 9, 9 };
	static const tp_cel_kind want_kind[] = { TP_CEL_ERROR, TP_CEL_ERROR, TP_CEL_ERROR,
						 TP_CEL_ERROR, TP_CEL_ERROR, TP_CEL_BOOL, TP_CEL_BOOL,
						 TP_CEL_BOOL, TP_CEL_BOOL, TP_CEL_BOOL };
	for (long long limit = 1; limit <= 10; limit++) {
		tp_arena *a = NULL;
		assert_int_equal(tp_arena_new(&a, 1 << 20), TP_OK);
		outcome o = run(a, "self in ['a', 'b', 'c']", "'c'", limit, NULL);
		assert_int_equal(o.rc, want_rc[limit - 1]);
		assert_int_equal(o.cost, want_cost[limit - 1]);
		assert_int_equal(o.v.kind, want_kind[limit - 1]);
		if (o.v.kind == TP_CEL_ERROR)
			assert_memory_equal(o.v.s, "operation cancelled", 19);
		tp_arena_free(a);
	}
}

/* Field reads and has() on JSON (cel/value.c): members found among names
 * that share their first byte, escaped names ("__dash__", "__dot__", a
 * reserved word) undone only for a name that holds "__", every JSON type
 * converted as before. */
static const want fields[] = {
	{ "self.metadata.name == 'x'", "{'mode':1,'metadata':{'namespace':'n','name':'x'},'m':2}",
	  TP_CEL_BOOL, 1, -1 },
	{ "has(self.mode) && has(self.m) && !has(self.mod) && !has(self.modes)",
	  "{'metadata':{},'m':2,'mode':1}", TP_CEL_BOOL, 1, -1 },
	{ "self.a__dash__b == 1 && has(self.a__dot__b) && self.a__slash__b == 3",
	  "{'a-b':1,'a.b':2,'a/b':3}", TP_CEL_BOOL, 1, -1 },
	{ "has(self.x__y) && self.__namespace__ == 4", "{'x__y':1,'namespace':4}", TP_CEL_BOOL, 1,
	  -1 },
	{ "has(self.a__dash__b)", "{'a_b':1}", TP_CEL_BOOL, 0, -1 },
	{ "self.t && !self.f && self.n == null && self.s == 's' && self.d == 1.5 && "
	  "size(self.l) == 2 && size(self.o) == 1",
	  "{'t':true,'f':false,'n':null,'s':'s','d':1.5,'l':[1,2],'o':{'k':1}}", TP_CEL_BOOL, 1,
	  -1 },
	{ "self.i + 1", "{'i':41}", TP_CEL_INT, 42, -1 },
	{ "has(self.torch) || has(self.mpi)", "{'numNodes':1}", TP_CEL_BOOL, 0, -1 },
	{ "self.absent", "{'absence':1}", TP_CEL_ERROR, 0, -1 },
};

static void field_reads(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(fields) / sizeof(*fields); k++)
		expect_case(&fields[k]);
}

/* Each call's function is found once, when the rule is parsed (the tree
 * keeps it): evaluating looks no name up, and gives what it gave. */
static const want calls[] = {
	{ "size(self) == 2 && self.size() == 2", "'ab'", TP_CEL_BOOL, 1, -1 },
	{ "self.matches('^a') && matches(self, 'b$') && self.startsWith('a') && "
	  "self.endsWith('b') && self.contains('b') && self.indexOf('b') == 1",
	  "'ab'", TP_CEL_BOOL, 1, -1 },
	{ "self.lowerAscii() == 'ab' && self.upperAscii() == 'AB' && ' x '.trim() == 'x' && "
	  "['a', 'b'].join('-') == 'a-b' && ['a'].join() == 'a'",
	  "'aB'", TP_CEL_BOOL, 1, -1 },
	{ "int(self) + 1", "'41'", TP_CEL_INT, 42, -1 },
	{ "string(dyn(self)) == '1' && double(self) == 1.0 && uint(self) == 1u", "1", TP_CEL_BOOL,
	  1, -1 },
	{ "size(self)", "[1, 2, 3]", TP_CEL_INT, 3, 2 },
};

static void functions_resolved_when_parsed(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(calls) / sizeof(*calls); k++)
		expect_case(&calls[k]);
	tp_arena *a = NULL;
	assert_int_equal(tp_arena_new(&a, 1 << 20), TP_OK);
	tp_cel_expr *e = NULL;
	char why[256] = "";
	assert_int_equal(tp__cel_parse(a, "size(self)", &e, why, sizeof(why)), TP_OK);
	assert_int_equal(e->node, TP_N_CALL);
	assert_ptr_equal(e->fn, tp__cel_function("size", false, 1));
	tp__cel_release(e);
	/* no such function, or not with so many arguments: refused when parsed */
	static const char *const unknown[] = { "self.frobnicate()", "size(self, 1)",
					       "self.startsWith()" };
	static const char *const words[] = {
		"function 'frobnicate' with 1 argument is not supported",
		"function 'size' with 2 arguments is not supported",
		"function 'startsWith' with 1 argument is not supported",
	};
	for (size_t k = 0; k < sizeof(unknown) / sizeof(*unknown); k++) {
		e = NULL;
		assert_int_equal(tp__cel_parse(a, unknown[k], &e, why, sizeof(why)), TP_EUNSUPPORTED);
		assert_null(e);
		assert_non_null(strstr(why, words[k]));
	}
	tp_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folded_same_answers),
		cmocka_unit_test(folded_once),
		cmocka_unit_test(folded_cost_limit),
		cmocka_unit_test(field_reads),
		cmocka_unit_test(functions_resolved_when_parsed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * cel/ast.h — the parsed form of an expression, shared by cel/parse.c (which
 * builds it) and cel/eval.c (which walks it). Internal to cel/.
 */
#ifndef TP_CEL_AST_H
#define TP_CEL_AST_H

#include "policy/cel/cel.h"

typedef enum tp_cel_node {
	TP_N_LITERAL,  /* lit */
	TP_N_IDENT,    /* name */
	TP_N_SELECT,   /* a.name */
	TP_N_HAS,      /* has(a.name) */
	TP_N_INDEX,    /* a[b] */
	TP_N_CALL,     /* name(args...), receiver-style when receiver: args[0] is it */
	TP_N_LIST,     /* [args...] */
	TP_N_MAP,      /* {args[0]: args[1], ...} */
	TP_N_NOT,      /* !a */
	TP_N_NEG,      /* -a */
	TP_N_BINARY,   /* a op b: + - * / % == != < <= > >= in */
	TP_N_AND,      /* a && b */
	TP_N_OR,       /* a || b */
	TP_N_COND,     /* a ? b : c */
	TP_N_MACRO,    /* a.name(var, b[, c]): all exists exists_one filter map */
} tp_cel_node;

struct tp_cel_expr {
	tp_cel_node node;
	int op;             /* TP_N_BINARY: the token of the operator */
	const char *name;   /* identifier, field, function or macro name */
	const char *var;    /* TP_N_MACRO: the iteration variable */
	bool receiver;      /* TP_N_CALL */
	tp_cel_expr *a, *b, *c;
	tp_cel_expr **args;
	size_t nargs;
	tp_cel_val lit;      /* TP_N_LITERAL; a folded TP_N_LIST or TP_N_MAP: its value */
	long long folded;    /* a list or map of constants only: the steps evaluating it
			      * would charge (itself and every node below), 0 if not */
	struct tp_regex *re; /* matches() with a literal pattern: compiled once */
	const tp_cel_fn *fn; /* TP_N_CALL: the function, found when parsed */
	int pos;            /* offset in the source, for messages */
};

/* Binary operator tokens (TP_N_BINARY's op). */
enum {
	TP_OP_ADD = 1, TP_OP_SUB, TP_OP_MUL, TP_OP_DIV, TP_OP_MOD,
	TP_OP_EQ, TP_OP_NE, TP_OP_LT, TP_OP_LE, TP_OP_GT, TP_OP_GE, TP_OP_IN,
};

#endif /* TP_CEL_AST_H */

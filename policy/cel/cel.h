/*
 * cel/cel.h — the Common Expression Language, as much of it as CRD
 * x-kubernetes-validations rules use. Internal to policy/; tests may include it.
 *
 * Files, bottom up: cel/value.c (values over JSON and the schema that types
 * them, equality, rendering), cel/parse.c (text -> tree; macros expanded),
 * cel/lib.c (the functions: size, matches, startsWith, int, double, ...),
 * cel/eval.c (the tree walk, errors as values, the cost bound).
 *
 * A JSON value is typed by its schema as the API server types it: "integer"
 * is int, "number" is double, an object with properties is an object whose
 * absent fields has() sees, an object with additionalProperties is a map,
 * x-kubernetes-int-or-string is int or string by what it holds.
 *
 * What is outside the subset (an unknown function or variable, optional
 * syntax, timestamps) is refused when the rule is compiled, with a reason:
 * the caller warns that the rule was not checked, never passes it silently.
 */
#ifndef TP_CEL_H
#define TP_CEL_H

#include "policy/trainpolicy.h"

struct tp_sch; /* schema/schema.h: what types a JSON value */

typedef struct tp_cel_expr tp_cel_expr;

/* Parse src into a tree allocated in a (which owns it). TP_OK and *out;
 * TP_EPARSE with cel-go's kind of words in why for a syntax error;
 * TP_EUNSUPPORTED with why when src uses what this interpreter lacks. */
int tp__cel_parse(tp_arena *a, const char *src, tp_cel_expr **out, char *why, size_t whylen);
/* Release what the tree holds outside its arena (the regular expressions of
 * matches() calls with a literal pattern, compiled once when parsed). */
void tp__cel_release(tp_cel_expr *e);
/* Whether the expression names the variable oldSelf (a transition rule). */
bool tp__cel_uses(const tp_cel_expr *e, const char *variable);

typedef enum tp_cel_kind {
	TP_CEL_NULL,
	TP_CEL_BOOL,
	TP_CEL_INT,
	TP_CEL_UINT,
	TP_CEL_DOUBLE,
	TP_CEL_STRING,
	TP_CEL_BYTES,
	TP_CEL_LIST,   /* a JSON array, or values made by the expression */
	TP_CEL_MAP,    /* a JSON object (object or map by its schema), or a literal map */
	TP_CEL_ERROR,  /* an evaluation error: the message in s */
} tp_cel_kind;

typedef struct tp_cel_val tp_cel_val;
struct tp_cel_val {
	tp_cel_kind kind;
	union {
		bool b;
		long long i;
		unsigned long long u;
		double d;
		struct {
			const char *s; /* strings and bytes: not NUL-terminated */
			size_t n;
		};
		struct {
			const cJSON *json;         /* a JSON array/object, or NULL */
			const struct tp_sch *sch;  /* its schema (NULL: untyped) */
			tp_cel_val *items;         /* made lists; made maps: key, value pairs */
			size_t count;
		};
	};
};

/* The cost bound: what every evaluation step takes from (cel-go's runtime
 * cost, approximately: one per operation, plus the size of what string and
 * list functions traverse). */
typedef struct tp_cel_budget {
	long long per_call;  /* one rule's limit (the API server: 1,000,000) */
	long long remaining; /* the whole object's (RuntimeCELCostBudget: 10,000,000) */
} tp_cel_budget;

#define TP_CEL_PER_CALL_LIMIT 1000000LL
#define TP_CEL_RUNTIME_BUDGET 10000000LL

/* Evaluate e with self (and oldSelf when old is not NULL) typed by sch.
 * Temporaries in a. The outcome in *out: TP_CEL_ERROR carries the error's
 * text ("no such key: x"). Returns TP_ELIMIT when the per-call limit was
 * exceeded (cost then says how much was spent), else TP_OK. */
int tp__cel_eval(const tp_cel_expr *e, tp_arena *a, const cJSON *self, const cJSON *old,
		const struct tp_sch *sch, long long per_call, long long *cost, tp_cel_val *out);

/* ------------------------------------------------------ values (value.c) */

/* A JSON value as CEL sees it under schema sch. */
tp_cel_val tp__cel_from_json(const cJSON *v, const struct tp_sch *sch);
tp_cel_val tp__cel_error(tp_arena *a, const char *fmt, ...) TP_PRINTF(2, 3);
tp_cel_val tp__cel_bool(bool b);
tp_cel_val tp__cel_int(long long i);
tp_cel_val tp__cel_double(double d);
tp_cel_val tp__cel_string(const char *s, size_t n);

/* Heterogeneous equality (1 equal, 0 not, -1 incomparable: no such overload). */
int tp__cel_equal(const tp_cel_val *a, const tp_cel_val *b);
/* Ordering of numbers and strings (-1, 0, 1), or 2 when not comparable. */
int tp__cel_compare(const tp_cel_val *a, const tp_cel_val *b);
/* Lists and maps: how many elements; element i (lists); member lookup (maps:
 * 1 found, 0 not). */
size_t tp__cel_size(const tp_cel_val *v);
tp_cel_val tp__cel_list_at(const tp_cel_val *v, size_t i);
int tp__cel_map_get(const tp_cel_val *m, const tp_cel_val *key, tp_cel_val *out);
/* A map's key i (for macros over maps). */
tp_cel_val tp__cel_map_key_at(const tp_cel_val *m, size_t i);
/* Element k of a list, key k of a map, visited in order k = 0, 1, ...:
 * *cur (NULL before the first) keeps the place in a JSON one, so a walk
 * costs O(n) where tp__cel_list_at would cost O(n^2). */
tp_cel_val tp__cel_list_next(const tp_cel_val *v, size_t k, const cJSON **cur);
tp_cel_val tp__cel_map_key_next(const tp_cel_val *m, size_t k, const cJSON **cur);
/* Whether a map/object member is present (has()). */
bool tp__cel_has_field(const tp_cel_val *m, const char *name);
/* The member of an object named name (field selection): 1 found, 0 not. */
int tp__cel_field(const tp_cel_val *m, const char *name, tp_cel_val *out);
/* CEL's string() of a value, in a; NULL when it has none. */
const char *tp__cel_to_string(tp_arena *a, const tp_cel_val *v, size_t *n);
/* d as Go's strconv.FormatFloat(d, 'g', -1, 64) writes it when threshold is
 * 6 (CEL's string(double)), as fmt's %v when 21 (the schema messages). */
int tp__cel_format_double(double d, int threshold, char *buf, size_t len);

/* ------------------------------------------------------ functions (lib.c) */

/* The function (global or receiver style) taking argc arguments (the
 * receiver counted), or NULL when there is none: parse.c resolves each call
 * once, so that evaluating it looks no name up. */
typedef struct tp_cel_fn tp_cel_fn;
const tp_cel_fn *tp__cel_function(const char *name, bool receiver, size_t argc);
/* compiled: for matches(), the pattern already compiled (or NULL). */
/* Call f: args[0] is the receiver for receiver-style calls. *cost grows by
 * what the call traverses. */
struct tp_regex;
tp_cel_val tp__cel_call(tp_arena *a, const tp_cel_fn *f, const tp_cel_val *args, size_t argc,
		       const struct tp_regex *compiled, long long *cost);

#endif /* TP_CEL_H */

/*
 * cel/sch.h — the compiled schema node (tp_sch) and its member lookups:
 * the type CEL values are typed by (cel/value.c) and schema/ compiles and
 * walks. It lives here, below schema/, as upstream keeps the structural
 * schema (apiextensions-apiserver's pkg/apiserver/schema) below the CEL
 * code that reads it; schema/schema.h includes it. Internal to policy/.
 */
#ifndef TP_CEL_SCH_H
#define TP_CEL_SCH_H

#include "policy/cel/cel.h"
#include "policy/core/hash.h"
#include "policy/core/internal.h"
#include "policy/core/regex.h"

#include <stdint.h>
#include <string.h>

/* OpenAPI types a node admits (a bit set: int-or-string admits two). */
enum {
	TP_SCH_OBJECT = 1 << 0,
	TP_SCH_ARRAY = 1 << 1,
	TP_SCH_STRING = 1 << 2,
	TP_SCH_INTEGER = 1 << 3,
	TP_SCH_NUMBER = 1 << 4,
	TP_SCH_BOOLEAN = 1 << 5,
};

typedef enum tp_sch_list { TP_LIST_ATOMIC = 0, TP_LIST_SET, TP_LIST_MAP } tp_sch_list;

/* Which of kube-openapi's validators have something to check at a node
 * (tp_sch.checks, set by compile.c from schema/check.c's own tests): a node
 * without them costs its walk a type test and nothing more. */
enum {
	TP_SCH_CK_COMBINATORS = 1 << 0, /* allOf, anyOf, oneOf, not */
	TP_SCH_CK_STRING = 1 << 1,      /* minLength, maxLength, pattern, a date-time format */
	TP_SCH_CK_NUMBER = 1 << 2,      /* minimum, maximum, the strict profile's int32 */
	TP_SCH_CK_ARRAY = 1 << 3,       /* items, minItems, maxItems, uniqueItems, a list type */
	TP_SCH_CK_ENUM = 1 << 4,
};

typedef struct tp_sch tp_sch;

typedef struct tp_sch_prop {
	const char *name;
	tp_sch *schema;
	size_t len; /* strlen(name): a path step's length without a strlen per member */
	uint64_t req_bit; /* its bit when it is required (tp_sch.required_props), else 0 */
} tp_sch_prop;

/* One x-kubernetes-validations entry. */
typedef struct tp_sch_rule {
	const char *rule;        /* the source text, as the CRD wrote it */
	tp_cel_expr *expr;       /* NULL when the rule uses what we do not support */
	const char *unsupported; /* why expr is NULL */
	const char *message;     /* NULL: "failed rule: <rule>" */
	tp_cel_expr *message_expr;
	const char *field_path;  /* ".spec.x" relative to the node, or NULL */
	tp_field_type reason;    /* Invalid (default), Forbidden, Required, Duplicate */
	bool transition;         /* refers to oldSelf */
	bool optional_old_self;
} tp_sch_rule;

struct tp_sch {
	unsigned types;        /* 0: any type (x-kubernetes-preserve-unknown-fields, int-or-string) */
	const char *type_name; /* "integer", as written ("" when none) */
	const char *format;    /* "" when none */
	const char *checked_format; /* format when kube-openapi validates it, else "" (compile.c) */
	bool date_time;        /* checked_format is date-time or datetime */
	bool int32;            /* an integer of format int32 (the strict profile's bound) */
	bool nullable, int_or_string, preserve_unknown, embedded;
	bool rules_below;      /* this node or one under it has x-kubernetes-validations */
	bool new_rules_below;  /* ... one that runs with no old value (CREATE, or a member
				* the old object lacks): not a rule on oldSelf alone, which
				* needs one; the CEL walk skips what has none */
	bool lists_below;      /* ... an x-kubernetes-list-type set or map */
	unsigned checks;       /* TP_SCH_CK_*: what the node checks beyond type and members */
	/* The cJSON types (cJSON_Object, cJSON_String, ...: v->type & 0xff)
	 * whose every value passes the node's type test; cJSON_Number only
	 * when both integers and fractions do. The walk makes the test only
	 * for the others (check.c decides it here once, per compiled node). */
	unsigned type_ok;
	/* The scalar cJSON types (string, number, boolean, null) whose values
	 * pass the node with nothing to check: tp__sch_check would make no
	 * finding and no call, so the walk of their object or array leaves
	 * them out, path step and all. */
	unsigned pass_ok;

	tp_sch_prop *props; /* sorted by name (strcmp: bytes unsigned) */
	size_t nprops;
	/* The props by first byte: those starting with byte lead_lo + i are
	 * props[lead[i] .. lead[i + 1]), for i < lead_n (NULL: a scan). */
	uint32_t *lead;
	unsigned lead_lo, lead_n;
	tp_sch_prop *rule_props; /* the props with rules_below, in props' order */
	size_t nrule_props;
	tp_sch *additional; /* additionalProperties schema (maps), or NULL */
	tp_sch *items;
	const char **required;
	size_t nrequired;
	/* required[i]'s prop, its bit req_bit 1 << i: the walk of an object
	 * marks the required members it meets, and looks none up again. NULL
	 * (each looked up) when one is no property, named twice or past 64. */
	const tp_sch_prop **required_props;
	const cJSON *enum_values; /* array, or NULL */
	const cJSON *default_value;

	tp_regex *pattern;
	const char *pattern_text;
	bool quantity; /* pattern is resource.Quantity's, matched without the
			* regex engine (schema/pattern.c) */
	bool has_min, has_max, excl_min, excl_max;
	double min, max;
	long long min_len, max_len, min_items, max_items, min_props, max_props; /* -1: none */
	bool unique;

	tp_sch_list list_type;
	const char **map_keys;
	size_t nmap_keys;

	tp_sch **all_of, **any_of, **one_of;
	size_t nall_of, nany_of, none_of;
	tp_sch *not_schema;

	tp_sch_rule *rules;
	size_t nrules;
};

/* cJSON's type tests without a call into libcjson (each walk asks them at
 * every node): v's type is exactly t, or one of the bits of t. */
static inline bool tp__sch_is(const cJSON *v, int t)
{
	return v && (v->type & 0xff) == t;
}
static inline bool tp__sch_is_any(const cJSON *v, int t)
{
	return v && (v->type & 0xff & t);
}

/* Up to this many properties a lookup scans them (their first byte
 * first): an index costs more than it saves. */
#define TP_SCH_SCAN_MAX 4
/* Up to this many properties with the same first byte are scanned, more
 * are searched by halves: a lookup costs at most log2(nprops) strcmp's
 * whatever names a CRD gives its properties. */
#define TP_SCH_BUCKET_SCAN 8

/* The property name of an object schema, or NULL. The props that start
 * with name's first byte, found by one subtraction, are scanned or
 * searched by halves: no hash to compute (the keyed hash this replaced cost
 * about 135 instructions a lookup in the schemas of more than 16
 * properties, PodSpec's and Container's; make bench's
 * ClusterTrainingRuntime review made 30 of them and 6,600 lookups in all).
 * Inline so that cel/ reads schemas without calling into schema/. */
static inline const tp_sch_prop *tp__sch_prop_at(const tp_sch *s, const char *name)
{
	if (!s || !s->nprops)
		return NULL;
	size_t lo = 0, hi = s->nprops;
	if (s->lead) {
		unsigned b = (unsigned char)name[0] - s->lead_lo;
		if (b >= s->lead_n)
			return NULL;
		lo = s->lead[b];
		hi = s->lead[b + 1];
	}
	while (hi - lo > TP_SCH_BUCKET_SCAN) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->props[mid].name, name);
		if (!c)
			return &s->props[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the second byte before strcmp: with an index every prop scanned
	 * shares the first, and most names differ at the second */
	for (size_t i = lo; i < hi; i++) {
		const char *p = s->props[i].name;
		if (p[0] == name[0] && (!p[0] || (p[1] == name[1] && !strcmp(p + 1, name + 1))))
			return &s->props[i];
	}
	return NULL;
}

static inline const tp_sch *tp__sch_prop(const tp_sch *s, const char *name)
{
	const tp_sch_prop *p = tp__sch_prop_at(s, name);
	return p ? p->schema : NULL;
}

/* The schema of a member of an object with schema s: a property, else
 * additionalProperties, else NULL (unknown). */
static inline const tp_sch *tp__sch_member(const tp_sch *s, const char *name)
{
	const tp_sch *p = tp__sch_prop(s, name);
	return p ? p : s ? s->additional : NULL;
}

#endif /* TP_CEL_SCH_H */

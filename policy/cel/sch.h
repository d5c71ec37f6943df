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

typedef struct tp_sch tp_sch;

typedef struct tp_sch_prop {
	const char *name;
	tp_sch *schema;
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
	bool lists_below;      /* ... an x-kubernetes-list-type set or map */

	tp_sch_prop *props; /* sorted by name */
	size_t nprops;
	uint32_t *htab;     /* open addressing: 1 + index into props, 0 empty */
	uint32_t hcap;      /* a power of two, at least twice nprops */
	tp_sch_prop *rule_props; /* the props with rules_below, in props' order */
	size_t nrule_props;
	tp_sch *additional; /* additionalProperties schema (maps), or NULL */
	tp_sch *items;
	const char **required;
	size_t nrequired;
	const cJSON *enum_values; /* array, or NULL */
	const cJSON *default_value;

	tp_regex *pattern;
	const char *pattern_text;
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

/* The slot of a property name in the props' hash table: core/hash.h's
 * keyed hash, so that no CRD can be written with property names that share
 * a slot (each lookup would walk them all). */
static inline uint32_t tp__sch_hash(const char *name)
{
	return (uint32_t)tp__hash_str(name);
}

/* Up to this many properties a lookup compares names (their first byte
 * first) and computes no hash, as core/index.h scans up to
 * TP_INDEX_SCAN_MAX: the keyed hash costs about a hundred instructions, and
 * most lookups are in schemas this small (make bench's reviews, built-in
 * CRDs, instructions: TrainJob 103,482 hashing every lookup -> 95,643,
 * ClusterTrainingRuntime 213,374 -> 191,273; scanning up to 8 instead of
 * 16, 192,457 for the ClusterTrainingRuntime). A scan costs at most 16
 * comparisons whatever the CRD. */
#define TP_SCH_SCAN_MAX 16

/* The property name of an object schema, or NULL: a scan of a few names,
 * else one hash and usually one strcmp (inline so that cel/ reads schemas
 * without calling into schema/). */
static inline const tp_sch *tp__sch_prop(const tp_sch *s, const char *name)
{
	if (!s || !s->nprops)
		return NULL;
	if (s->nprops <= TP_SCH_SCAN_MAX) {
		for (size_t i = 0; i < s->nprops; i++)
			if (s->props[i].name[0] == name[0] && !strcmp(s->props[i].name, name))
				return s->props[i].schema;
		return NULL;
	}
	uint32_t mask = s->hcap - 1;
	for (uint32_t i = tp__sch_hash(name) & mask;; i = (i + 1) & mask) {
		uint32_t slot = s->htab[i];
		if (!slot)
			return NULL;
		const tp_sch_prop *p = &s->props[slot - 1];
		if (p->name[0] == name[0] && !strcmp(p->name, name))
			return p->schema;
	}
}

/* The schema of a member of an object with schema s: a property, else
 * additionalProperties, else NULL (unknown). */
static inline const tp_sch *tp__sch_member(const tp_sch *s, const char *name)
{
	const tp_sch *p = tp__sch_prop(s, name);
	return p ? p : s ? s->additional : NULL;
}

#endif /* TP_CEL_SCH_H */

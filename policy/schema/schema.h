/*
 * schema/schema.h — CustomResourceDefinition schemas compiled for checking,
 * the API server's way. Internal to policy/; tests may include it.
 *
 * A CRD's openAPIV3Schema is compiled once (schema/compile.c) into a tree of
 * tp_sch nodes that keep only what validation reads: no descriptions, the
 * patterns compiled, the properties sorted for binary search, the CEL rules
 * parsed. Everything lives in the tp_crds' arena and is never written again,
 * so any number of threads read it at once.
 *
 * The files, bottom up: load_skip.c (what loading a CRD may leave out),
 * compile.c (CRD -> tree, tp_crds), check.c (the
 * kube-openapi validators, in their order and words), pattern.c
 * (resource.Quantity's pattern without the regex engine), prune.c (unknown fields
 * and "did you mean"), listtype.c
 * (x-kubernetes-list-type set/map), rules.c (x-kubernetes-validations),
 * engine.c (the strategy: what runs when, as apiextensions' strategy.go).
 */
#ifndef TP_SCHEMA_H
#define TP_SCHEMA_H

#include "policy/cel/cel.h"
#include "policy/cel/sch.h"
#include "policy/core/hash.h"
#include "policy/core/internal.h"
#include "policy/core/regex.h"

#include <stdint.h>
#include <string.h>

/* One served version of one kind. */
/* Schema nesting at most (deeper CRDs are refused). */
#define TP_SCH_MAX_DEPTH 64

/* Compiled subtrees shared between identical schemas (schema/memo.c). */
typedef struct tp_sch_memo tp_sch_memo;
typedef struct tp_sch_memo_key {
	uint64_t a, b; /* the subtree's hash, descriptions left out */
	int height;    /* schema levels below it */
} tp_sch_memo_key;

typedef struct tp_crd_version {
	const char *group, *version, *kind, *plural;
	bool namespaced, status_subresource;
	bool has_rules; /* the schema holds x-kubernetes-validations (a CEL validator) */
	tp_sch *root; /* NULL: the version has no schema */
} tp_crd_version;

/* The set (public as tp_crds). */
struct tp_crds {
	tp_arena *arena;
	tp_crd_version *v;
	size_t n, cap;
	int refs; /* atomically counted */
	size_t regexes_n, regexes_cap;
	tp_regex **regexes; /* owned, freed with the set; one per distinct pattern */
	const char **regex_texts; /* their patterns */
	tp_cel_expr **exprs; /* every parsed rule, released with the set */
	size_t exprs_n, exprs_cap;
	size_t rules, rules_unsupported;
	tp_sch_memo *memo; /* compiled subtrees by hash (open addressing) */
	size_t memo_n, memo_cap;
};

/* Which members of a schema object hold schemas, as compile reads them: 1
 * one schema (items, additionalProperties, not), 2 a map or an array of
 * them (properties, allOf, anyOf, oneOf), 0 a plain value (memo.c). */
int tp__sch_member_kind(const char *key);

void tp__sch_memo_key(const cJSON *j, tp_sch_memo_key *out);
/* The tree compiled for an identical schema (its rules counted again), or
 * NULL when there is none or it would nest too deep at depth. */
const tp_sch *tp__sch_memo_get(tp_crds *c, const tp_sch_memo_key *k, int depth);
/* Remember s, with the rules compiled under it. TP_OK or TP_ENOMEM. */
int tp__sch_memo_put(tp_crds *c, const tp_sch_memo_key *k, tp_sch *s, size_t rules,
		     size_t unsupported);

/* The served version of group/version/kind, or NULL. */
const tp_crd_version *tp__crds_find(const tp_crds *c, const char *group, const char *version,
				    const char *kind);

/* ---------------------------------------------------------- the checks */

/* One step of the path being walked: a member's name, an item's index or
 * a map's key in brackets. */
typedef struct tp_sch_step {
	const char *name; /* not copied: the walked object's or the schema's */
	long index;
	size_t len;       /* the path's length before this step */
	char kind;        /* '.' name, '[' index, 'k' key */
} tp_sch_step;

/* Checking state shared by the walks: where errors go, the path being
 * walked ("spec.trainer.numNodes", "[0]"), and what to leave out. The path
 * is kept as steps and written out as text only when a finding needs it
 * (tp__sch_path): writing it at every node visited cost 11,000 of make
 * bench's 111,500 instructions a TrainJob review (callgrind). */
typedef struct tp_sch_walk {
	tp_result *res;
	tp_buf path;          /* the text of the first `written` steps */
	tp_sch_step *steps;   /* steps[0..depth) */
	size_t depth, cap, written;
	size_t len;           /* the length of the whole path's text */
	bool skip_status; /* the status subresource: not validated on the main resource
			   * (its unknown fields are still refused: strict decoding
			   * reads the whole body) */
	bool strict;      /* the strict profile: what the controller cannot read is refused */
	bool failed;      /* a walk without res (does it pass?) met an error */
	bool blocking;    /* an error that stops the CEL rules (apiextensions' hasBlockingErr:
			   * Required, NotSupported, TooLong, TooMany, TypeInvalid) */
	/* One pass (engine.c): tp__sch_check also finds the unknown fields
	 * (into res at once: they come first) and the list-type duplicates.
	 * The schema checks' findings wait in checks, the lists' in lists
	 * (each made on its first finding), to follow ObjectMeta's in the
	 * order of apiextensions' strategy. */
	bool one_pass;
	bool unknown;     /* one pass: this subtree's unknown fields are looked for */
	bool lists;       /* one pass: this subtree's list types are checked */
	tp_result *checks_res, *lists_res;
	int rc;
} tp_sch_walk;

/* Where the schema checks' (lists: the list types') findings go: res, or
 * in one pass the stream's own result, made on the first finding. NULL in a
 * walk that only asks whether a value passes. */
tp_result *tp__sch_out(tp_sch_walk *w, bool lists);

/* The root's status, when the CRD has a status subresource: the main
 * resource's checks leave it alone (every walk asks at each member). */
static inline bool tp__sch_skipped(const tp_sch_walk *w, const char *member)
{
	return w->skip_status && !w->len && !strcmp(member, "status");
}

/* The path's length grows at each push as the text's would, and fails
 * where its tp_buf would have (w->path.max), so that a walk ends the same
 * whether or not its path is ever written out. */
static inline void tp__sch_grow(tp_sch_walk *w, size_t n)
{
	size_t max = w->path.max ? w->path.max : TP_BUF_DEFAULT_MAX;
	if (n > max - w->len || w->len > max)
		w->rc |= TP_ELIMIT;
	else
		w->len += n;
}

bool tp__sch_more_steps(tp_sch_walk *w);

static inline size_t tp__sch_push(tp_sch_walk *w, char kind, const char *name, long index)
{
	size_t depth = w->depth;
	if (depth == w->cap && !tp__sch_more_steps(w))
		return depth;
	w->steps[depth] = (tp_sch_step){ .name = name, .index = index, .len = w->len, .kind = kind };
	w->depth++;
	return depth;
}

/* Push ".name" (or "name" at the root) / "[i]" / "[key]" on the path; pop
 * back to what the push returned. name is not copied: it must live as long
 * as the step. Inline: a push for every member of every object walked. */
static inline size_t tp__sch_push_name_len(tp_sch_walk *w, const char *name, size_t len)
{
	size_t depth = tp__sch_push(w, '.', name, 0);
	if (w->len)
		tp__sch_grow(w, 1);
	tp__sch_grow(w, len);
	return depth;
}
/* Whether a push of a step of n bytes (its '.' or brackets included) and
 * its pop would change nothing but the path: room for the step and for its
 * text. A walk leaves out the push and pop of a member it has nothing to
 * check at; where this is false it makes them, to fail as they do. */
static inline bool tp__sch_room(const tp_sch_walk *w, size_t n)
{
	size_t max = w->path.max ? w->path.max : TP_BUF_DEFAULT_MAX;
	return w->depth < w->cap && w->len <= max && n <= max - w->len;
}
static inline size_t tp__sch_push_name(tp_sch_walk *w, const char *name)
{
	return tp__sch_push_name_len(w, name, strlen(name));
}
size_t tp__sch_push_index(tp_sch_walk *w, long i);
size_t tp__sch_push_key(tp_sch_walk *w, const char *key);
/* The pop of a path that was written out (walk.c): its text cut back. */
void tp__sch_pop_written(tp_sch_walk *w, size_t depth);
/* Inline, as the pushes: a pop for every member walked, and the path is
 * seldom written out (a call per pop cost 1,000 instructions a
 * ClusterTrainingRuntime review). */
static inline void tp__sch_pop(tp_sch_walk *w, size_t depth)
{
	if (depth >= w->depth)
		return;
	w->depth = depth;
	w->len = w->steps[depth].len;
	if (w->written > depth) /* a path handed out ends here again */
		tp__sch_pop_written(w, depth);
}
/* The path's text ("" at the root), valid until the next push or pop.
 * Asked for only when a finding is made. */
const char *tp__sch_path(tp_sch_walk *w);
/* How many times this thread has asked (tests: a valid object none). */
size_t tp__sch_paths_written(void);
/* What a walk holds. */
void tp__sch_walk_free(tp_sch_walk *w);

/* resource.Quantity's pattern (schema/pattern.c): whether text is it, and
 * whether s matches it, as the regex engine answers for a string of at
 * most TP_SCH_QUANTITY_MAX bytes. */
#define TP_SCH_QUANTITY_MAX 256
bool tp__sch_is_quantity_pattern(const char *text);
bool tp__sch_quantity_match(const char *s);

/* kube-openapi's SchemaValidator over v (which must not be NULL). */
void tp__sch_check(tp_sch_walk *w, const tp_sch *s, const cJSON *v);
/* For compile.c, from check.c's own tests: the cJSON types whose values
 * pass s's type test (tp_sch.type_ok), and the validators that have
 * something to check at s (tp_sch.checks). */
unsigned tp__sch_type_ok(const tp_sch *s);
unsigned tp__sch_checks(const tp_sch *s);
/* ... and the scalar cJSON types that pass s with nothing to check
 * (tp_sch.pass_ok). */
unsigned tp__sch_pass_ok(const tp_sch *s);
/* True when v would pass s (anyOf/oneOf/not branches), no errors written. */
bool tp__sch_passes(const tp_sch *s, const cJSON *v);

/* Unknown members below obj: 'unknown field "<path>"' (+ did you mean),
 * as plain errors carrying the path. Returns how many. */
size_t tp__sch_unknown_fields(tp_sch_walk *w, const tp_sch *s, const cJSON *v, bool root);
/* The unknown-fields step for member m of an object with schema s, whose
 * own schema is p (NULL: none), resource when the object is the root or an
 * embedded resource: m reported, or (metadata) its members looked at.
 * True when m's members are to be looked at in turn. Adds to *n. */
bool tp__sch_unknown_member(tp_sch_walk *w, const tp_sch *s, const tp_sch *p, const cJSON *m,
			    bool resource, size_t *n);

/* The list-type duplicates of the array v itself (not of lists below it). */
void tp__sch_list_check(tp_sch_walk *w, const tp_sch *s, const cJSON *v);

/* x-kubernetes-list-type set/map duplicates (Duplicate value). */
void tp__sch_list_types(tp_sch_walk *w, const tp_sch *s, const cJSON *v);

/* x-kubernetes-validations over v (old: the correlated old value or NULL). */
void tp__sch_rules(tp_sch_walk *w, const tp_sch *s, const cJSON *v, const cJSON *old,
		   tp_cel_budget *budget);

/* ObjectMeta's own rules on a custom resource (schema/meta.c), into w->res;
 * w->blocking set by the errors that stop the CEL rules. */
void tp__sch_object_meta(tp_sch_walk *w, const tp_crd_version *v, const cJSON *obj);

/* The schema layer's CRD half, for the kinds' validators: nothing when
 * opt->no_schema; else tp__schema_validate. *by_crd true when the CRDs
 * answered for obj's kind (then the built-in schema checks stand aside). */
int tp__schema_layer(const tp_options *opt, tp_operation op, const cJSON *obj,
		     const cJSON *old_obj, tp_result *res, bool *by_crd);

/* Engine entry (schema/engine.c): validate obj against the CRD of its kind.
 * *handled false (nothing done) when no CRD in opt->crds serves obj's group,
 * or when obj is of a kind the built-in checks know and its own CRD is
 * absent. An unknown kind or version of a served group is reported
 * ("no matches for kind"), *handled true. */
int tp__schema_validate(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res, bool *handled);

#endif /* TP_SCHEMA_H */

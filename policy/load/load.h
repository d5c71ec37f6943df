/*
 * load/load.h — what the loader's files share. Internal to policy/; tests
 * may include it.
 *
 * The loader turns bytes into cJSON objects, in three layers that call only
 * downwards: load/load.c (the public face, tp_load and tp_docs_*, and the
 * whole-input checks: size, NUL bytes, UTF-8) picks a parser; load/json.c
 * (with load/json_value.c) and load/yaml.c (with load/yaml_anchors.c and
 * load/yaml_build.c, which share load/yaml_build.h) each parse one syntax
 * (load/scalar.c types YAML plain scalars the way Kubernetes does);
 * load/common.c takes what they parsed (errors with positions, the step
 * every document goes through: mapping check, kind: List expansion,
 * document count) and the tools they share.
 */
#ifndef TP_LOAD_H
#define TP_LOAD_H

#include "policy/core/deadline.h"
#include "policy/core/index.h"
#include "policy/trainpolicy.h"

/* Nodes that YAML alias and merge-key expansion may copy per input. Billion
 * laughs documents are refused once this many nodes would be copied, long
 * before they cost much memory (a cJSON node is about 64 bytes). */
#define TP_LOAD_MAX_ALIAS_NODES ((size_t)100000)

/* How often tp_load_limits.read_to is told, in bytes read. */
#define TP_LOAD_READ_STEP ((size_t)64 * 1024)

/* Node positions (load/positions.c): a side table, node -> line, column. */
typedef struct tp_posmap tp_posmap;
tp_posmap *tp__pos_new(void);
void tp__pos_free(tp_posmap *m);
/* Record (or overwrite) where node was written. TP_OK or TP_ENOMEM; a NULL
 * map records nothing. */
int tp__pos_put(tp_posmap *m, const cJSON *node, int line, int col);
/* Every node of root, parsed from data[from..end), placed by a walk of the
 * text (the text must be the valid JSON root came from). */
int tp__pos_json(tp_posmap *m, const char *data, size_t from, size_t end, const cJSON *root);

/* The object list tp_load hands back. */
struct tp_docs {
	tp_doc *v;
	size_t n, cap;
	bool in_arena; /* objects were made in an arena: never cJSON_Delete them */
	tp_posmap *pos; /* when positions were asked for */
};

/* One tp_load call: the input, the limits in force and where results go.
 * A limit field left 0 by the caller means its default. */
typedef struct tp_loader {
	const char *data;
	size_t len;
	tp_load_limits lim;
	tp_load_error *err;
	tp_docs *docs;
	size_t objects; /* objects added so far, List items counted */
	size_t nonempty; /* documents that were not empty */
	tp_posmap *pos;  /* where nodes go when positions are recorded, else NULL */
	char *copy;      /* the JSON reader's arena copy of data (load/json_value.c), else NULL */
	char *scan;      /* the JSON reader's copy of data it peeks in: copy, or scan_own */
	char *scan_own;  /* without an arena, scan from malloc (tp_load frees it) */
} tp_loader;

/* Record the error (code, 1-based document/line/column or 0) and return code. */
int tp__load_fail(tp_loader *ld, int code, int doc, int line, int col, const char *fmt, ...)
	TP_PRINTF(6, 7);

/* Hand one document's root object to the result (takes it): kind: List is
 * expanded into its items, the object count is checked against max_docs. */
int tp__load_add(tp_loader *ld, cJSON *obj, int doc, int line);

/* 1-based line and column of byte offset off (columns count characters). */
void tp__load_position(const char *data, size_t off, int *line, int *col);

/* Link item as the last child of parent in O(1). tail caches the last child
 * (NULL while parent is empty); cJSON's own child->prev invariant is kept so
 * that cJSON_AddItemTo* keeps working on the result. Inline: the JSON reader
 * links every node it makes. */
static inline void tp__json_link(cJSON *parent, cJSON **tail, cJSON *item)
{
	item->next = NULL;
	if (!parent->child) {
		parent->child = item;
		item->prev = item;
	} else {
		cJSON *last = *tail ? *tail : parent->child->prev;
		last->next = item;
		item->prev = last;
		parent->child->prev = item;
	}
	*tail = item;
}

/* Whether obj (with count members so far) already has key. Linear while the
 * object is small, a set of its keys once it grows (ks must start
 * TP_STRSET_INIT; the set hashes with core/hash.h's keyed SipHash, so no
 * input can be made of keys that share a slot). Returns 1 when key is new
 * (and remembers it if the set is in use), 0 for a duplicate, TP_ENOMEM.
 * The key pointer must stay valid while ks is used. */
int tp__key_is_new(const cJSON *obj, size_t count, tp_strset *ks, const char *key);

/* One element (a member, an item, a YAML event) counted into the thread's
 * deadline (core/deadline.h), as the library's other long loops count
 * theirs: TP_OK, or TP_ETIMEDOUT recorded in ld->err once it has passed. */
int tp__load_late(tp_loader *ld);
static inline int tp__load_tick(tp_loader *ld)
{
	return tp__tick(1) ? tp__load_late(ld) : TP_OK;
}

/* One JSON value at *pos (load/json_value.c), limits checked as it is read:
 * TP_OK with the value in *out (cJSON memory) and *pos past it, or the error
 * recorded with its position. */
int tp__json_value(tp_loader *ld, int doc, size_t *pos, cJSON **out);

/* The two syntaxes. start is the offset of the first byte after a UTF-8 BOM. */
int tp__load_json(tp_loader *ld, size_t start);
int tp__load_yaml(tp_loader *ld, size_t start);

/* ------------------------------------------------------- YAML scalar types */

typedef enum tp_yaml_type {
	TP_YAML_NULL,
	TP_YAML_BOOL,
	TP_YAML_INT,   /* fits in int64 (or uint64 when is_uint) */
	TP_YAML_FLOAT,
	TP_YAML_STR,
	TP_YAML_MERGE, /* the merge key << */
} tp_yaml_type;

typedef struct tp_yaml_scalar {
	tp_yaml_type type;
	bool b;
	bool is_uint;
	long long i;
	unsigned long long u;
	double d;
} tp_yaml_scalar;

/* Type one scalar as go-yaml v2 (YAML 1.1) does for sigs.k8s.io/yaml.
 * tag is libyaml's expanded tag or NULL; plain is libyaml's plain_implicit.
 * TP_EPARSE with go-yaml's "cannot decode ..." text in msg when an explicit
 * tag does not fit the value. */
int tp__yaml_resolve(const char *s, size_t n, const char *tag, bool plain, tp_yaml_scalar *out,
		     char *msg, size_t msglen);

/* A scalar's value as a mapping key, the way sigs.k8s.io/yaml turns non-string
 * keys into JSON member names (1 -> "1", true -> "true", 1.5 -> "1.5").
 * s/n is the source text, used for strings. Returns the length written, or -1
 * for null (which no JSON member name can stand for). */
int tp__yaml_key_text(const tp_yaml_scalar *sc, char *buf, size_t buflen);

#endif /* TP_LOAD_H */

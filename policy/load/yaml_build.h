/*
 * load/yaml_build.h — what the YAML loader's files (load/yaml*.c) share.
 * Internal to policy/load.
 *
 * The builder's state (the stack of open mappings and sequences, the
 * document's anchors, the nodes kept until the document ends) and the small
 * tools every event uses, inline since they are on the path of every node.
 * Calls go one way, down: load/yaml.c (libyaml's events, the tree, the
 * members tp_load_limits.skip leaves out) calls load/yaml_anchors.c
 * (anchors, aliases' copies, merge keys), and both call load/yaml_build.c
 * (errors, the builder's memory).
 */
#ifndef TP_LOAD_YAML_BUILD_H
#define TP_LOAD_YAML_BUILD_H

#include "policy/load/load.h"

#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* ------------------------------------------------------------------ state */

typedef struct merge_src {
	const cJSON *node;
	bool owned; /* an inline value, buried once merged; else an anchor's node */
} merge_src;

/* One open mapping or sequence. */
typedef struct frame {
	cJSON *node;
	cJSON *tail;
	size_t count;  /* members or items linked so far */
	char *anchor;  /* malloc'd name, recorded once the node is complete */
	int line, col; /* where the node starts */
	/* mappings only */
	char *key;      /* pending key (cJSON memory), NULL when a key comes next */
	bool key_merge; /* the pending key is << */
	int key_line, key_col;
	int *key_lines; /* line of each member's key, for duplicate messages */
	size_t key_lines_cap;
	tp_strset ks;
	merge_src *merges;
	size_t nmerges, merges_cap;
	int ctx; /* tp_load_skip's context, TP_LOAD_SKIP_NONE without one */
	struct left_out {
		char *key; /* cJSON memory, owned here */
		int line;
	} *left_out; /* members left out, by key */
	size_t nleft_out, left_out_cap;
} frame;

typedef struct anchor {
	char *name;
	const cJSON *node;
} anchor;

typedef struct ybuild {
	tp_loader *ld;
	frame *st;
	size_t depth, st_cap;
	anchor *anchors;
	size_t nanchors, anchors_cap;
	cJSON **grave; /* nodes that must outlive the document's building */
	size_t ngrave, grave_cap;
	cJSON *root;
	int root_line;
	int doc; /* 1-based number of the current document */
	bool in_doc;
	size_t doc_start;
	yaml_mark_t mark; /* of the current event, for messages */
	size_t aliases;   /* alias uses, all documents */
	size_t copied;    /* nodes copied by aliases and merges, all documents */
} ybuild;

/* ---------------------------------- load/yaml_build.c: errors and memory */

/* Record the error at the current event's mark, in the current document. */
int tp__yaml_fail(ybuild *b, int code, const char *fmt, ...) TP_PRINTF(3, 4);
/* libyaml's own words, with where it looked (start: where the input began). */
int tp__yaml_syntax_error(ybuild *b, const yaml_parser_t *p, size_t start);

/* Keep node (taken) until the document ends, for the anchors that may
 * point to it: an anchored key, an inline mapping once merged. */
int tp__yaml_bury(ybuild *b, cJSON *node);
void tp__yaml_frame_release(frame *f);
/* Everything one document built; anchors do not outlive their document. */
void tp__yaml_doc_reset(ybuild *b);
void tp__yaml_build_free(ybuild *b);

/* ------------------------------------- tools on every event's path, inline */

static inline int oom(ybuild *b)
{
	return tp__yaml_fail(b, TP_ENOMEM, "out of memory");
}

/* Grow *v (n used, *cap slots of size sz) to hold one more. */
static inline int grow(void **v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return TP_OK;
	size_t c = *cap ? *cap * 2 : 8;
	void *p = realloc(*v, c * sz);
	if (!p)
		return TP_ENOMEM;
	*v = p;
	*cap = c;
	return TP_OK;
}

static inline char *json_strndup(const char *s, size_t n)
{
	char *p = cJSON_malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static inline frame *top(ybuild *b)
{
	return b->depth ? &b->st[b->depth - 1] : NULL;
}

/* The line of key's member left out of f, or 0. */
static inline int left_out_line(const frame *f, const char *key)
{
	for (size_t i = 0; i < f->nleft_out; i++)
		if (!strcmp(f->left_out[i].key, key))
			return f->left_out[i].line;
	return 0;
}

/* ------------------------- load/yaml_anchors.c: anchors, aliases, merges */

/* Record an anchor (name malloc'd, taken) for node. */
int tp__yaml_anchor_add(ybuild *b, char *name, const cJSON *node);
int tp__yaml_anchor_add_copy(ybuild *b, const char *name, const cJSON *node);
/* The node of the latest anchor called name, or NULL. */
const cJSON *tp__yaml_anchor_find(const ybuild *b, const char *name);
/* A copy of src placed at depth, counted against TP_LOAD_MAX_ALIAS_NODES;
 * NULL with the error in *rc. */
cJSON *tp__yaml_copy_node(ybuild *b, const cJSON *src, int depth, int *rc);
/* The value of f's pending << key (taken when owned). */
int tp__yaml_merge_add(ybuild *b, frame *f, const cJSON *v, bool owned);
/* Merge every pending << source into the finished mapping f. */
int tp__yaml_merge_run(ybuild *b, frame *f);

#endif /* TP_LOAD_YAML_BUILD_H */

/*
 * core/index.h — keyed lookups into one object or list that a loop asks
 * many times: an object's members by name, a list's items by the value of
 * a key member (Kubernetes' list-map keys: name, manager, mountPath,
 * containerPort, ...). Private to policy/.
 *
 * Small containers are scanned, as tp_member and tp_find_named do; from
 * TP_INDEX_SCAN_MAX entries on, the index hashes them (core/hash.h), so a
 * loop over n elements that looks each one up costs O(n), not O(n^2). The
 * answers are the scan's: the first member of that name, the first item
 * whose key is tp_json_equal to the one asked for.
 */
#ifndef TP_CORE_INDEX_H
#define TP_CORE_INDEX_H

#include "policy/core/hash.h"

#define TP_INDEX_SCAN_MAX 16

typedef struct tp_index {
	const cJSON *of; /* the object or list indexed; NULL: empty */
	const char *key; /* items: the member that keys them; NULL: members by name */
	size_t n;        /* entries: members, or items that are objects */
	bool hashed;     /* past TP_INDEX_SCAN_MAX: lookups go through tab */
	tp_htab tab;
} tp_index;

/* The members of obj (anything else: none) by name. TP_OK, TP_ENOMEM or
 * TP_ETIMEDOUT (the thread's deadline passed while filing); the index is
 * usable, scanning, and must be freed either way. */
int tp__index_members(tp_index *ix, const cJSON *obj);
const cJSON *tp__index_member(const tp_index *ix, const char *name);

/* The items of arr that are objects, by the value of their member key (an
 * item without one is found by nothing). */
int tp__index_items(tp_index *ix, const cJSON *arr, const char *key);
const cJSON *tp__index_item(const tp_index *ix, const cJSON *value);
/* tp__index_item with a string value. */
const cJSON *tp__index_named(const tp_index *ix, const char *name);

/* What was appended to the container after the index was made: a member
 * (by its name) or an item (by its key). TP_OK, TP_ENOMEM or TP_ETIMEDOUT. */
int tp__index_add(tp_index *ix, const cJSON *element);

/* The element old, still in the container, gives its place to now, of the
 * same name or key (a member replaced where it stands). */
void tp__index_swap(tp_index *ix, const cJSON *old, const cJSON *now);
/* The element e, still in the container, is about to leave it. A later
 * element equal to it stays unfiled: trees made by tp_load repeat no
 * member name, and lists lose no items this way. */
void tp__index_remove(tp_index *ix, const cJSON *e);

void tp__index_free(tp_index *ix);

/* The items of arr whose string member key repeats an earlier item's for
 * the first time, as the API server reports a list-map's duplicates (once
 * a key): fn(ctx, item, i) for each, in order. Items without a string key
 * take no part. TP_OK, TP_ENOMEM or TP_ETIMEDOUT (then fn has seen some
 * of them). */
int tp__index_first_repeats(const cJSON *arr, const char *key,
			   void (*fn)(void *ctx, const cJSON *item, int i), void *ctx);

/* A set of strings, which it does not copy: they must outlive it. */
typedef struct tp_strset {
	tp_htab tab;
} tp_strset;

#define TP_STRSET_INIT { TP_HTAB_INIT }

/* TP_OK or TP_ENOMEM; *added (may be NULL) says whether s was new. */
int tp__strset_add(tp_strset *set, const char *s, bool *added);
bool tp__strset_has(const tp_strset *set, const char *s);
void tp__strset_free(tp_strset *set);

#endif

/*
 * webhook/core/keyset.h — a sorted set of "namespace/name" strings: the keys
 * the watch put into the store per resource, so that a re-list removes exactly
 * the objects the API server no longer has.
 */
#ifndef TW_KEYSET_H
#define TW_KEYSET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tw_keyset {
	char **v; /* sorted, owned */
	size_t n, cap;
} tw_keyset;

/* Index of key, or where it would go; *found says which. */
size_t tw_keyset_find(const tw_keyset *k, const char *key, bool *found);
/* Insert in order (no-op if present). Out of memory leaves the set as it was. */
void tw_keyset_add(tw_keyset *k, const char *key);
/* Append without ordering (a list in progress); tw_keyset_sort before lookups. */
void tw_keyset_append(tw_keyset *k, const char *key);
/* Sort and drop duplicates (an object seen on two pages). */
void tw_keyset_sort(tw_keyset *k);
void tw_keyset_del(tw_keyset *k, const char *key);
void tw_keyset_clear(tw_keyset *k);
void tw_keyset_free(tw_keyset *k);

#endif /* TW_KEYSET_H */

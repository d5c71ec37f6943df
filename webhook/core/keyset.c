/*
 * keyset.c — a sorted set of strings (see keyset.h).
 */
#include "webhook/core/keyset.h"

#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tw_keyset_find(const tw_keyset *k, const char *key, bool *found)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(k->v[mid], key);
		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* Room for one more. */
static int reserve(tw_keyset *k)
{
	if (k->n < k->cap)
		return 0;
	size_t cap = k->cap ? k->cap * 2 : 64;
	char **v = realloc(k->v, cap * sizeof(*v));
	if (!v)
		return TP_ENOMEM;
	k->v = v;
	k->cap = cap;
	return 0;
}

void tw_keyset_add(tw_keyset *k, const char *key)
{
	bool found;
	size_t at = tw_keyset_find(k, key, &found);
	if (found || reserve(k))
		return;
	char *d = strdup(key);
	if (!d)
		return;
	memmove(k->v + at + 1, k->v + at, (k->n - at) * sizeof(*k->v));
	k->v[at] = d;
	k->n++;
}

/* Unsorted append (a list in progress); tw_keyset_sort before lookups. */
void tw_keyset_append(tw_keyset *k, const char *key)
{
	char *d;
	if (reserve(k) || !(d = strdup(key)))
		return;
	k->v[k->n++] = d;
}

void tw_keyset_sort(tw_keyset *k)
{
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), key_cmp);
	size_t o = 0; /* drop duplicates (an object seen on two pages) */
	for (size_t i = 0; i < k->n; i++) {
		if (o && !strcmp(k->v[o - 1], k->v[i]))
			free(k->v[i]);
		else
			k->v[o++] = k->v[i];
	}
	k->n = o;
}

void tw_keyset_del(tw_keyset *k, const char *key)
{
	bool found;
	size_t at = tw_keyset_find(k, key, &found);
	if (!found)
		return;
	free(k->v[at]);
	memmove(k->v + at, k->v + at + 1, (k->n - at - 1) * sizeof(*k->v));
	k->n--;
}

void tw_keyset_clear(tw_keyset *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i]);
	k->n = 0;
}

void tw_keyset_free(tw_keyset *k)
{
	tw_keyset_clear(k);
	free(k->v);
	memset(k, 0, sizeof(*k));
}

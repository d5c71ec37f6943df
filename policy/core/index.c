/*
 * core/index.c — the keyed lookups of core/index.h: a scan while the
 * container is small, a hash table (core/hash.c) once it is not.
 */
#include "policy/core/index.h"
#include "policy/core/deadline.h"

#include <string.h>

static const cJSON *key_of(const tp_index *ix, const cJSON *item)
{
	return cJSON_IsObject(item) ? tp_member(item, ix->key) : NULL;
}

/* The hash an element is filed under: its name, or its key's value. */
static uint64_t hash_of(const tp_index *ix, const cJSON *e)
{
	return ix->key ? tp__hash_json(key_of(ix, e)) : tp__hash_str(e->string);
}

static bool counts(const tp_index *ix, const cJSON *e)
{
	return ix->key ? key_of(ix, e) != NULL : e->string != NULL;
}

/* File e unless an equal entry is there already: the first one wins, as
 * for a scan. */
static int file(tp_index *ix, const cJSON *e)
{
	uint64_t h = hash_of(ix, e);
	size_t pos = 0;
	for (const cJSON *c; (c = tp__htab_next(&ix->tab, h, &pos));)
		if (ix->key ? tp_json_equal(key_of(ix, c), key_of(ix, e))
			    : !strcmp(c->string, e->string))
			return TP_OK;
	return tp__htab_put(&ix->tab, h, e);
}

/* TP_OK, TP_ENOMEM, or TP_ETIMEDOUT when the thread's deadline passed:
 * then lookups scan (the caller is to stop anyway). */
static int hash_all(tp_index *ix)
{
	int rc = tp__htab_reserve(&ix->tab, ix->n);
	for (const cJSON *e = ix->of->child; e && !rc; e = e->next)
		if (counts(ix, e) && !(rc = tp__tick(1)))
			rc = file(ix, e);
	ix->hashed = rc == TP_OK;
	if (rc)
		tp__htab_free(&ix->tab);
	return rc;
}

static int build(tp_index *ix, const cJSON *of, const char *key)
{
	*ix = (tp_index){ .of = of, .key = key, .tab = TP_HTAB_INIT };
	for (const cJSON *e = of ? of->child : NULL; e; e = e->next)
		ix->n += counts(ix, e);
	tp__charge(ix->n);
	return ix->n > TP_INDEX_SCAN_MAX ? hash_all(ix) : TP_OK;
}

int tp__index_members(tp_index *ix, const cJSON *obj)
{
	return build(ix, cJSON_IsObject(obj) ? obj : NULL, NULL);
}

int tp__index_items(tp_index *ix, const cJSON *arr, const char *key)
{
	return build(ix, cJSON_IsArray(arr) && key ? arr : NULL, key);
}

const cJSON *tp__index_member(const tp_index *ix, const char *name)
{
	if (!ix->of || ix->key || !name)
		return NULL;
	if (!ix->hashed)
		return tp_member(ix->of, name);
	size_t pos = 0;
	uint64_t h = tp__hash_str(name);
	for (const cJSON *c; (c = tp__htab_next(&ix->tab, h, &pos));)
		if (!strcmp(c->string, name))
			return c;
	return NULL;
}

const cJSON *tp__index_item(const tp_index *ix, const cJSON *value)
{
	if (!ix->of || !ix->key || !value)
		return NULL;
	if (!ix->hashed) {
		size_t scanned = 0;
		for (const cJSON *e = ix->of->child; e; e = e->next, scanned++)
			if (tp_json_equal(key_of(ix, e), value)) {
				tp__charge(scanned);
				return e;
			}
		tp__charge(scanned);
		return NULL;
	}
	size_t pos = 0;
	uint64_t h = tp__hash_json(value);
	for (const cJSON *c; (c = tp__htab_next(&ix->tab, h, &pos));)
		if (tp_json_equal(key_of(ix, c), value))
			return c;
	return NULL;
}

const cJSON *tp__index_named(const tp_index *ix, const char *name)
{
	if (!name)
		return NULL;
	cJSON probe = { .type = cJSON_String, .valuestring = (char *)name };
	return tp__index_item(ix, &probe);
}

int tp__index_add(tp_index *ix, const cJSON *element)
{
	if (!ix->of || !element || !counts(ix, element))
		return TP_OK;
	ix->n++;
	if (ix->hashed)
		return file(ix, element);
	return ix->n > TP_INDEX_SCAN_MAX ? hash_all(ix) : TP_OK;
}

void tp__index_swap(tp_index *ix, const cJSON *old, const cJSON *now)
{
	if (ix->hashed && old && counts(ix, old))
		tp__htab_replace(&ix->tab, hash_of(ix, old), old, now);
}

void tp__index_remove(tp_index *ix, const cJSON *e)
{
	if (!ix->of || !e || !counts(ix, e))
		return;
	ix->n--;
	if (ix->hashed)
		tp__htab_replace(&ix->tab, hash_of(ix, e), e, NULL);
}

void tp__index_free(tp_index *ix)
{
	tp__htab_free(&ix->tab);
	ix->hashed = false;
	ix->of = NULL;
}

static const char *string_key(const cJSON *it, const char *key)
{
	if (!it || (it->type & 0xff) != cJSON_Object)
		return NULL;
	const cJSON *k = tp_member(it, key);
	return k && (k->type & 0xff) == cJSON_String ? k->valuestring : NULL;
}

/* A short list: each key against the ones before it, no table to make
 * (the common case: a few replicated jobs or containers). */
static void first_repeats_short(const cJSON *arr, const char *key, size_t n,
				void (*fn)(void *ctx, const cJSON *item, int i), void *ctx)
{
	const char *keys[TP_INDEX_SCAN_MAX];
	const cJSON *it = arr->child;
	for (size_t i = 0; i < n; i++, it = it->next) {
		keys[i] = string_key(it, key);
		size_t found = 0;
		for (size_t j = 0; keys[i] && j < i && found < 2; j++)
			found += keys[j] && !strcmp(keys[j], keys[i]);
		if (found == 1)
			fn(ctx, it, (int)i);
	}
}

/* A long list: a key seen once is filed once; at its first repetition it
 * is filed again, so that a third sighting finds two and says nothing. */
int tp__index_first_repeats(const cJSON *arr, const char *key,
			   void (*fn)(void *ctx, const cJSON *item, int i), void *ctx)
{
	if (!arr || (arr->type & 0xff) != cJSON_Array)
		return TP_OK;
	size_t n = 0;
	for (const cJSON *it = arr->child; it && n <= TP_INDEX_SCAN_MAX; it = it->next)
		n++;
	if (n <= TP_INDEX_SCAN_MAX) {
		first_repeats_short(arr, key, n, fn, ctx);
		return TP_OK;
	}
	tp_htab seen = TP_HTAB_INIT;
	int rc = TP_OK, i = 0;
	for (const cJSON *it = arr->child; it && !(rc = rc ? rc : tp__tick(1)); it = it->next, i++) {
		const char *k = string_key(it, key);
		if (!k)
			continue;
		size_t pos = 0, found = 0;
		uint64_t h = tp__hash_str(k);
		for (const cJSON *c; found < 2 && (c = tp__htab_next(&seen, h, &pos));)
			found += !strcmp(string_key(c, key), k);
		if (found == 1)
			fn(ctx, it, i);
		if (found < 2)
			rc = tp__htab_put(&seen, h, it);
	}
	tp__htab_free(&seen);
	return rc;
}

/* ------------------------------------------------------------ string set */

bool tp__strset_has(const tp_strset *set, const char *s)
{
	size_t pos = 0;
	uint64_t h = tp__hash_str(s);
	for (const char *c; (c = tp__htab_next(&set->tab, h, &pos));)
		if (!strcmp(c, s))
			return true;
	return false;
}

int tp__strset_add(tp_strset *set, const char *s, bool *added)
{
	bool fresh = !tp__strset_has(set, s);
	if (added)
		*added = fresh;
	return fresh ? tp__htab_put(&set->tab, tp__hash_str(s), s) : TP_OK;
}

void tp__strset_free(tp_strset *set)
{
	tp__htab_free(&set->tab);
}

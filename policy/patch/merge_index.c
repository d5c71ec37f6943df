/*
 * patch/merge_index.c — the destination's indexes of a strategic merge
 * (patch/merge_index.h): one per large container, found by its address.
 */
#include "policy/patch/merge_index.h"

#include <stdlib.h>
#include <string.h>

struct tp__merge_lookup {
	const cJSON *of;
	tp_index ix;
	struct tp__merge_lookup *next;
};

void tp__merge_index_init(tp__merge_index *mi)
{
	*mi = (tp__merge_index){ .by_container = TP_HTAB_INIT };
}

void tp__merge_index_free(tp__merge_index *mi)
{
	for (struct tp__merge_lookup *l = mi->all, *next; l; l = next) {
		next = l->next;
		tp__index_free(&l->ix);
		free(l);
	}
	tp__htab_free(&mi->by_container);
	cJSON_Delete(mi->graveyard);
	*mi = (tp__merge_index){ .by_container = TP_HTAB_INIT };
}

static uint64_t address_hash(const cJSON *of)
{
	return tp_hash_bytes(&of, sizeof(of));
}

static struct tp__merge_lookup *cached(const tp__merge_index *mi, const cJSON *of)
{
	if (!mi->all)
		return NULL;
	size_t pos = 0;
	uint64_t h = address_hash(of);
	for (struct tp__merge_lookup *l;
	     (l = (struct tp__merge_lookup *)tp__htab_next(&mi->by_container, h, &pos));)
		if (l->of == of)
			return l;
	return NULL;
}

/* of's index (members when key is NULL, else items by key), made now; NULL
 * (*rc TP_ENOMEM) when memory ran out. */
static tp_index *index_of(tp__merge_index *mi, const cJSON *of, const char *key, int *rc)
{
	struct tp__merge_lookup *l = malloc(sizeof(*l));
	if (!l) {
		*rc = TP_ENOMEM;
		return NULL;
	}
	l->of = of;
	int irc = key ? tp__index_items(&l->ix, of, key) : tp__index_members(&l->ix, of);
	if (irc || tp__htab_put(&mi->by_container, address_hash(of), l)) {
		tp__index_free(&l->ix);
		free(l);
		*rc = irc == TP_ETIMEDOUT ? irc : TP_ENOMEM;
		return NULL;
	}
	l->next = mi->all;
	mi->all = l;
	return &l->ix;
}

/* The first TP_INDEX_SCAN_MAX elements of a container without an index are
 * scanned; past them it gets one (a scan that stops there costs what
 * telling a small container from a large one would). */
cJSON *tp__merge_member(tp__merge_index *mi, cJSON *obj, const char *name, int *rc)
{
	struct tp__merge_lookup *l = cached(mi, obj);
	if (l)
		return (cJSON *)tp__index_member(&l->ix, name);
	size_t n = 0;
	for (cJSON *c = obj->child; c; c = c->next) {
		if (++n > TP_INDEX_SCAN_MAX) {
			tp_index *ix = index_of(mi, obj, NULL, rc);
			return ix ? (cJSON *)tp__index_member(ix, name) : NULL;
		}
		if (c->string && !strcmp(c->string, name))
			return c;
	}
	return NULL;
}

cJSON *tp__merge_item(tp__merge_index *mi, cJSON *arr, const char *key, const cJSON *value,
		      int *rc)
{
	struct tp__merge_lookup *l = cached(mi, arr);
	if (l)
		return (cJSON *)tp__index_item(&l->ix, value);
	size_t n = 0;
	for (cJSON *e = arr->child; e; e = e->next) {
		if (++n > TP_INDEX_SCAN_MAX) {
			tp_index *ix = index_of(mi, arr, key, rc);
			return ix ? (cJSON *)tp__index_item(ix, value) : NULL;
		}
		if (cJSON_IsObject(e) && tp_json_equal(tp_member(e, key), value))
			return e;
	}
	return NULL;
}

int tp__merge_added(tp__merge_index *mi, const cJSON *of, const cJSON *e)
{
	struct tp__merge_lookup *l = cached(mi, of);
	return l ? tp__index_add(&l->ix, e) : TP_OK;
}

void tp__merge_swapped(tp__merge_index *mi, const cJSON *of, const cJSON *old, const cJSON *now)
{
	struct tp__merge_lookup *l = cached(mi, of);
	if (l)
		tp__index_swap(&l->ix, old, now);
}

void tp__merge_bury(tp__merge_index *mi, cJSON *of, cJSON *e)
{
	struct tp__merge_lookup *l = cached(mi, of);
	if (l)
		tp__index_remove(&l->ix, e);
	cJSON_DetachItemViaPointer(of, e);
	if (!mi->graveyard)
		mi->graveyard = cJSON_CreateArray();
	if (!mi->graveyard || !cJSON_AddItemToArray(mi->graveyard, e))
		cJSON_Delete(e); /* no memory left: the merge fails at its next allocation */
}

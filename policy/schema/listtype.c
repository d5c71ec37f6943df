/*
 * schema/listtype.c — the x-kubernetes-list-type invariants
 * (apiextensions' structurallisttype): a set holds no value twice, a map no
 * two items with the same keys. Each repeated value is reported once, at
 * its first repetition, as Duplicate value.
 *
 * Items are filed in a hash table by their keys (a set's by their whole
 * value), so a list costs O(n): a scan of the earlier items for each item
 * made 100,000 TrainJob env items cost minutes with the CRD's schema.
 */
#include "policy/core/deadline.h"
#include "policy/core/hash.h"
#include "policy/schema/schema.h"

#include <string.h>

/* Lists of at most this many items are scanned for repeats. */
#define SHORT_LIST 16

/* Two list-map items have equal keys: each key field absent in both or
 * present in both with equal values (a null item has no keys). */
/* A key field of an item, its schema's default when absent (the API server
 * writes defaults before this check: ports' protocol "TCP"). */
static const cJSON *key_field(const tp_sch *s, const cJSON *item, const char *key)
{
	const cJSON *f = cJSON_IsObject(item) ? cJSON_GetObjectItemCaseSensitive(item, key) : NULL;
	const tp_sch *p = f || !cJSON_IsObject(item) ? NULL : tp__sch_prop(s->items, key);
	return f ? f : p ? p->default_value : NULL;
}

static bool same_keys(const tp_sch *s, const cJSON *x, const cJSON *y)
{
	for (size_t i = 0; i < s->nmap_keys; i++) {
		const cJSON *fx = key_field(s, x, s->map_keys[i]);
		const cJSON *fy = key_field(s, y, s->map_keys[i]);
		if ((fx == NULL) != (fy == NULL) || (fx && !tp_json_equal(fx, fy)))
			return false;
	}
	return true;
}

static bool same(const tp_sch *s, const cJSON *x, const cJSON *y)
{
	return s->list_type == TP_LIST_MAP ? same_keys(s, x, y) : tp_json_equal(x, y);
}

/* What same() compares, hashed: equal items hash equal. */
static uint64_t item_hash(const tp_sch *s, const cJSON *item)
{
	if (s->list_type != TP_LIST_MAP)
		return tp__hash_json(item);
	uint64_t h = 0;
	for (size_t i = 0; i < s->nmap_keys; i++) {
		const cJSON *f = key_field(s, item, s->map_keys[i]);
		h = h * 31 + (f ? tp__hash_json(f) : 0x9e3779b97f4a7c15ull);
	}
	return h;
}

/* Whether item repeats an earlier one for the first time (a value seen
 * twice before was reported already). A short list (seen NULL) is scanned,
 * with no table to make: most lists hold a few items. A long one files a
 * value at its first and its second sighting, so a third one finds two.
 * TP_ENOMEM in *rc. */
static bool first_repeat(const tp_sch *s, const cJSON *list, tp_htab *seen, const cJSON *item,
			 int *rc)
{
	if (!seen) {
		int found = 0;
		for (const cJSON *it = list->child; it != item && found < 2; it = it->next)
			found += same(s, it, item);
		return found == 1;
	}
	uint64_t h = item_hash(s, item);
	size_t pos = 0, found = 0;
	for (const cJSON *c; found < 2 && (c = tp__htab_next(seen, h, &pos));)
		found += same(s, c, item);
	if (found < 2)
		*rc |= tp__htab_put(seen, h, item);
	return found == 1;
}

/* A list-map item's key, as the message shows it: {"name":"x"}. */
static void duplicate_key(tp_sch_walk *w, tp_result *out, const tp_sch *s, long i,
			  const cJSON *item)
{
	tp_buf b = TP_BUF_INIT(1 << 16);
	int rc = tp_buf_addc(&b, '{');
	for (size_t k = 0; k < s->nmap_keys; k++) {
		const cJSON *f = key_field(s, item, s->map_keys[k]);
		if (!f)
			continue;
		rc |= tp_buf_addf(&b, "%s\"%s\":%s", b.len > 1 ? "," : "", s->map_keys[k],
				  tp_result_value(out, f));
	}
	rc |= tp_buf_addc(&b, '}');
	size_t len = tp__sch_push_index(w, i);
	if (!rc)
		w->rc |= tp_result_add(out, TP_FIELD_DUPLICATE, tp__sch_path(w), b.data, "%s", "");
	tp__sch_pop(w, len);
	tp_buf_free(&b);
	w->rc |= rc;
}

void tp__sch_list_check(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	long i = 0;
	if (!v->child || !v->child->next)
		return;
	if (s->list_type == TP_LIST_MAP)
		for (const cJSON *it = v->child; it; it = it->next, i++)
			if (!cJSON_IsObject(it) && !cJSON_IsNull(it)) {
				tp_result *out = tp__sch_out(w, true);
				if (!out)
					return;
				size_t len = tp__sch_push_index(w, i);
				w->rc |= tp_result_add(out, TP_FIELD_INVALID, tp__sch_path(w),
						       tp_result_value(out, it),
						       "must be an object for an array of list-type map");
				tp__sch_pop(w, len);
				return;
			}
	tp_htab seen = TP_HTAB_INIT;
	int rc = TP_OK, n = 0;
	for (const cJSON *it = v->child; it && n <= SHORT_LIST; it = it->next)
		n++;
	i = 0;
	/* A deadline that passes stops the walk; tp_validate then answers
	 * TP_ETIMEDOUT, whatever was found. */
	for (const cJSON *it = v->child; it && !rc && !tp__tick(1); it = it->next, i++) {
		if (!first_repeat(s, v, n > SHORT_LIST ? &seen : NULL, it, &rc))
			continue;
		tp_result *out = tp__sch_out(w, true);
		if (!out)
			break;
		if (s->list_type == TP_LIST_MAP) {
			duplicate_key(w, out, s, i, it);
			continue;
		}
		size_t len = tp__sch_push_index(w, i);
		w->rc |= tp_result_add(out, TP_FIELD_DUPLICATE, tp__sch_path(w),
				       tp_result_value(out, it), "%s", "");
		tp__sch_pop(w, len);
	}
	tp__htab_free(&seen);
	w->rc |= rc;
}

void tp__sch_list_types(tp_sch_walk *w, const tp_sch *s, const cJSON *v)
{
	if (!s || !s->lists_below || !v)
		return;
	if (cJSON_IsArray(v)) {
		if (s->list_type != TP_LIST_ATOMIC)
			tp__sch_list_check(w, s, v);
		long i = 0;
		for (const cJSON *it = v->child; it && s->items; it = it->next, i++) {
			size_t len = tp__sch_push_index(w, i);
			tp__sch_list_types(w, s->items, it);
			tp__sch_pop(w, len);
		}
		return;
	}
	if (!cJSON_IsObject(v))
		return;
	for (const cJSON *m = v->child; m; m = m->next) {
		const tp_sch *p = tp__sch_member(s, m->string);
		if (!p || tp__sch_skipped(w, m->string))
			continue;
		size_t len = tp__sch_push_name(w, m->string);
		tp__sch_list_types(w, p, m);
		tp__sch_pop(w, len);
	}
}

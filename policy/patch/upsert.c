/*
 * patch/upsert.c — upstream's pkg/apply upserts, which the expansion uses
 * to write env, ports, mounts and volumes: an item with the same key is
 * replaced where it stands, a new one is appended, so the order of the
 * runtime's lists survives.
 */
#include "policy/core/deadline.h"
#include "policy/core/index.h"
#include "policy/core/internal.h"
#include "policy/patch/patch.h"

int tp__upsert_named(cJSON *arr, const char *key, cJSON *item)
{
	const cJSON *kv = key && cJSON_IsObject(item) ? tp_member(item, key) : NULL;
	if (!cJSON_IsArray(arr) || !kv) {
		cJSON_Delete(item); /* the contract: item is always taken */
		return TP_EINVAL;
	}
	cJSON *old = NULL;
	for (cJSON *e = arr->child; e && !old; e = e->next)
		if (cJSON_IsObject(e) && tp_json_equal(tp_member(e, key), kv))
			old = e;
	if (old)
		return cJSON_ReplaceItemViaPointer(arr, old, item) ? TP_OK : TP_ENOMEM;
	if (!cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		return TP_ENOMEM;
	}
	return TP_OK;
}

int tp__upsert_all(cJSON *arr, const char *key, const cJSON *items)
{
	tp_index ix;
	if (!cJSON_IsArray(arr) || !key)
		return TP_EINVAL;
	int rc = tp__index_items(&ix, arr, key);
	for (const cJSON *e = items ? items->child : NULL; e && !rc; e = e->next) {
		cJSON *item = (rc = tp__tick(1)) ? NULL : cJSON_Duplicate(e, 1);
		const cJSON *kv = cJSON_IsObject(item) ? tp_member(item, key) : NULL;
		cJSON *old = kv ? (cJSON *)tp__index_item(&ix, kv) : NULL;
		if (rc) {
			break;
		} else if (!kv) {
			rc = item ? TP_EINVAL : TP_ENOMEM;
			cJSON_Delete(item);
		} else if (old) {
			tp__index_swap(&ix, old, item);
			cJSON_ReplaceItemViaPointer(arr, old, item);
		} else if (!cJSON_AddItemToArray(arr, item)) {
			cJSON_Delete(item);
			rc = TP_ENOMEM;
		} else {
			rc = tp__index_add(&ix, item);
		}
	}
	tp__index_free(&ix);
	return rc;
}

/*
 * schema/defaults.c — structural defaulting, as the API server applies it
 * before validation: a property absent (or null and not nullable) whose
 * schema has a default gets a copy of it, recursively, array items and map
 * values included. Only branches marked defaults_below are walked, so an
 * object that already carries its defaults (what the server is sent) costs
 * a short walk and no copy.
 */
#include "policy/schema/schema.h"

#include <string.h>

static bool wants_default(const tp_sch *p, const cJSON *m)
{
	return p && p->default_value && (!m || (cJSON_IsNull(m) && !p->nullable));
}

bool tp__sch_needs_defaults(const tp_sch *s, const cJSON *v)
{
	if (!s || !s->defaults_below || !v)
		return false;
	if (cJSON_IsArray(v)) {
		for (const cJSON *it = v->child; it; it = it->next)
			if (tp__sch_needs_defaults(s->items, it))
				return true;
		return false;
	}
	if (!cJSON_IsObject(v))
		return false;
	for (size_t i = 0; i < s->nprops; i++) {
		const tp_sch *p = s->props[i].schema;
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, s->props[i].name);
		if (wants_default(p, m) || (m && tp__sch_needs_defaults(p, m)))
			return true;
	}
	if (s->additional && s->additional->defaults_below)
		for (const cJSON *m = v->child; m; m = m->next)
			if (!tp__sch_prop(s, m->string) && tp__sch_needs_defaults(s->additional, m))
				return true;
	return false;
}

int tp__sch_apply_defaults(const tp_sch *s, cJSON *v)
{
	int rc = TP_OK;
	if (!s || !s->defaults_below || !v)
		return TP_OK;
	if (cJSON_IsArray(v)) {
		for (cJSON *it = v->child; it && !rc; it = it->next)
			rc = tp__sch_apply_defaults(s->items, it);
		return rc;
	}
	if (!cJSON_IsObject(v))
		return TP_OK;
	for (size_t i = 0; i < s->nprops && !rc; i++) {
		const tp_sch *p = s->props[i].schema;
		const char *name = s->props[i].name;
		cJSON *m = cJSON_GetObjectItemCaseSensitive(v, name);
		if (wants_default(p, m)) {
			cJSON *d = cJSON_Duplicate(p->default_value, true);
			if (!d)
				return TP_ENOMEM;
			if (m)
				cJSON_ReplaceItemViaPointer(v, m, d);
			else
				cJSON_AddItemToObject(v, name, d);
			m = d;
		}
		if (m)
			rc = tp__sch_apply_defaults(p, m);
	}
	if (s->additional && s->additional->defaults_below)
		for (cJSON *m = v->child; m && !rc; m = m->next)
			if (!tp__sch_prop(s, m->string))
				rc = tp__sch_apply_defaults(s->additional, m);
	return rc;
}

/*
 * schema/meta.c — what the API server checks of a custom resource's
 * ObjectMeta before its schema (apimachinery's ValidateObjectMetaAccessor
 * with apiextensions' name rule): a name or generateName, the name a DNS-1123
 * subdomain, no namespace on a cluster-scoped kind, labels and annotations
 * maps of strings with valid keys (and label values). The CRD's schema says
 * only "metadata: object"; these are ObjectMeta's own rules.
 */
#include "policy/schema/schema.h"

#include <stdio.h>
#include <string.h>

static void string_map(tp_result *res, const cJSON *meta, const char *key, bool label_values)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(meta, key);
	char path[512];
	if (!m || cJSON_IsNull(m))
		return;
	snprintf(path, sizeof(path), "metadata.%s", key);
	if (!cJSON_IsObject(m)) {
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, "object"),
			      "%s in body must be of type object", path);
		return;
	}
	for (const cJSON *v = m->child; v; v = v->next) {
		const char *msgs[TP_NAME_MSGS_MAX];
		size_t n = tp_qualified_name_msgs(v->string, msgs);
		for (size_t i = 0; i < n; i++)
			tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, v->string), "%s",
				      msgs[i]);
		snprintf(path, sizeof(path), "metadata.%s.%s", key, v->string);
		const char *type = tp_json_type_name(v);
		if (!cJSON_IsString(v)) /* the built-in layer's words, and quotes fix it */
			tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, type),
				      "%s in body must be of type string: \"%s\"", path, type);
		else if (label_values && (n = tp_label_value_msgs(v->valuestring, msgs)))
			for (size_t i = 0; i < n; i++)
				tp_result_add(res, TP_FIELD_INVALID, path,
					      tp_result_quote(res, v->valuestring), "%s", msgs[i]);
		snprintf(path, sizeof(path), "metadata.%s", key);
	}
}

void tp__sch_object_meta(const tp_crd_version *v, const cJSON *obj, tp_result *res)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (!cJSON_IsObject(meta)) {
		tp_result_add(res, TP_FIELD_REQUIRED, "metadata.name", NULL,
			      "name or generateName is required");
		return;
	}
	const char *name = tp_get_str(meta, "name");
	const char *gen = tp_get_str(meta, "generateName");
	const char *why;
	if ((!name || !*name) && (!gen || !*gen))
		tp_result_add(res, TP_FIELD_REQUIRED, "metadata.name", NULL,
			      "name or generateName is required");
	else if (name && *name && (why = tp_check_dns1123_subdomain(name)))
		tp_result_add(res, TP_FIELD_INVALID, "metadata.name", tp_result_quote(res, name), "%s",
			      why);
	const char *ns = tp_get_str(meta, "namespace");
	if (!v->namespaced && ns && *ns)
		tp_result_add(res, TP_FIELD_FORBIDDEN, "metadata.namespace", NULL,
			      "not allowed on this type");
	else if (v->namespaced && ns && *ns && (why = tp_check_dns1123_label(ns)))
		tp_result_add(res, TP_FIELD_INVALID, "metadata.namespace", tp_result_quote(res, ns),
			      "%s", why);
	string_map(res, meta, "labels", true);
	string_map(res, meta, "annotations", false);
}

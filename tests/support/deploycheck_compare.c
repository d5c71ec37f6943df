/*
 * deploycheck_compare.c — two renders of the install (kustomize's and the
 * Helm chart's) compared object by object, field by field, once the labels
 * only Helm sets are put aside.
 */
#include "tests/support/deploycheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The labels Helm's convention adds; kustomize's render has none of them. */
static const char *const helm_labels[] = { "helm.sh/chart", "app.kubernetes.io/managed-by",
					   "app.kubernetes.io/instance",
					   "app.kubernetes.io/version" };

/* Those label keys out of every map of o, at any depth (labels, selectors). */
static void strip_helm_labels(cJSON *o)
{
	for (size_t i = 0; i < sizeof(helm_labels) / sizeof(helm_labels[0]); i++)
		if (cJSON_IsObject(o))
			cJSON_DeleteItemFromObjectCaseSensitive(o, helm_labels[i]);
	cJSON *c;
	cJSON_ArrayForEach(c, o)
		strip_helm_labels(c);
}

static void key_of(const cJSON *o, char *out, size_t n)
{
	snprintf(out, n, "%s %s/%s", tp_get_str(o, "kind"), tp_meta_namespace(o), tp_meta_name(o));
}

static const cJSON *find_key(const cJSON *objs, const char *key)
{
	const cJSON *o;
	cJSON_ArrayForEach(o, objs)
	{
		char k[512];
		key_of(o, k, sizeof(k));
		if (!strcmp(k, key))
			return o;
	}
	return NULL;
}

static void short_text(const cJSON *v, char *out, size_t n)
{
	char *t = v ? cJSON_PrintUnformatted(v) : NULL;
	snprintf(out, n, "%.100s%s", t ? t : "(absent)", t && strlen(t) > 100 ? "..." : "");
	free(t);
}

/* Every difference of a (kustomize) and b (chart) under path, into p. */
static void diff(const char *key, const char *path, const cJSON *a, const cJSON *b, dc_probs *p)
{
	char sa[128], sb[128], sub[512];
	bool same_type = a && b && (a->type & 0xFF) == (b->type & 0xFF);
	if (same_type && cJSON_IsObject(a)) {
		const cJSON *c;
		cJSON_ArrayForEach(c, a)
		{
			snprintf(sub, sizeof(sub), "%s.%s", path, c->string);
			diff(key, sub, c, cJSON_GetObjectItemCaseSensitive(b, c->string), p);
		}
		cJSON_ArrayForEach(c, b)
			if (!cJSON_GetObjectItemCaseSensitive(a, c->string)) {
				snprintf(sub, sizeof(sub), "%s.%s", path, c->string);
				diff(key, sub, NULL, c, p);
			}
		return;
	}
	if (same_type && cJSON_IsArray(a) && cJSON_GetArraySize(a) == cJSON_GetArraySize(b)) {
		for (int i = 0; i < cJSON_GetArraySize(a); i++) {
			snprintf(sub, sizeof(sub), "%s[%d]", path, i);
			diff(key, sub, cJSON_GetArrayItem(a, i), cJSON_GetArrayItem(b, i), p);
		}
		return;
	}
	if (same_type && cJSON_Compare(a, b, true))
		return;
	short_text(a, sa, sizeof(sa));
	short_text(b, sb, sizeof(sb));
	dc_prob(p, "%s: %s: kustomize %s, chart %s", key, path + 1, sa, sb);
}

void dc_compare_renders(const cJSON *kustomize, const cJSON *chart, dc_probs *p)
{
	cJSON *a = cJSON_Duplicate(kustomize, true), *b = cJSON_Duplicate(chart, true);
	strip_helm_labels(a);
	strip_helm_labels(b);
	const cJSON *o;
	char key[512];
	cJSON_ArrayForEach(o, a)
	{
		key_of(o, key, sizeof(key));
		const cJSON *other = find_key(b, key);
		if (!other)
			dc_prob(p, "%s: rendered by kustomize, not by the chart", key);
		else
			diff(key, "", o, other, p);
	}
	cJSON_ArrayForEach(o, b)
	{
		key_of(o, key, sizeof(key));
		if (!find_key(a, key))
			dc_prob(p, "%s: rendered by the chart, not by kustomize", key);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
}

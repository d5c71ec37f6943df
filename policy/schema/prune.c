/*
 * schema/prune.c — the fields a schema does not know, worded as the API
 * server's strict field validation words them (kubectl's default):
 * unknown field "spec.trainer.numProcPerNod", with "did you mean" when a
 * known name of the same object is a small edit away. Paths are built as
 * the pruning step builds them: "a.b[0].c".
 *
 * apiVersion, kind and metadata are every object's at the root and in an
 * x-kubernetes-embedded-resource; metadata's members are ObjectMeta's. The
 * status is walked too, subresource or not: strict decoding reads the whole
 * body before the strategy drops the status ("status.bogus" is refused).
 */
#include "policy/schema/schema.h"

#include <stdio.h>
#include <string.h>

static const char *const object_meta[] = {
	"annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp",
	"finalizers", "generateName", "generation", "labels", "managedFields", "name",
	"namespace", "ownerReferences", "resourceVersion", "selfLink", "uid",
};
#define N_META (sizeof(object_meta) / sizeof(*object_meta))

/* Levenshtein distance, capped: names are short. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 64;
	size_t row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0]++;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

/* The closest of n names (a case-only difference counts as closest), if
 * close enough to be a typo: at most 2 edits, and fewer than half the name. */
static const char *closest(const char *name, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bestd = 3;
	for (size_t i = 0; i < n; i++) {
		size_t d = strcasecmp(name, names[i]) ? distance(name, names[i]) : 0;
		if (d < bestd && d * 2 < strlen(names[i])) {
			best = names[i];
			bestd = d;
		}
	}
	return best;
}

static void unknown(tp_sch_walk *w, const char *hint)
{
	const char *path = tp__sch_path(w);
	if (hint)
		w->rc |= tp_result_add(w->res, TP_FIELD_PLAIN, path, NULL,
				       "unknown field \"%s\"; did you mean \"%s\"?", path, hint);
	else
		w->rc |= tp_result_add(w->res, TP_FIELD_PLAIN, path, NULL, "unknown field \"%s\"", path);
}

static size_t unknown_meta(tp_sch_walk *w, const cJSON *meta)
{
	size_t n = 0;
	if (!cJSON_IsObject(meta))
		return 0;
	for (const cJSON *m = meta->child; m; m = m->next) {
		size_t k;
		/* the first byte before strcmp: every custom resource's metadata
		 * is looked at, and its name is the tenth of the list */
		for (k = 0; k < N_META && (object_meta[k][0] != m->string[0] ||
					   strcmp(m->string, object_meta[k]));
		     k++)
			;
		if (k < N_META)
			continue;
		size_t len = tp__sch_push_name(w, "metadata");
		tp__sch_push_name(w, m->string);
		unknown(w, closest(m->string, object_meta, N_META));
		tp__sch_pop(w, len);
		n++;
	}
	return n;
}

static const char *closest_prop(const tp_sch *s, const char *name)
{
	const char *names[256];
	size_t n = s->nprops < 256 ? s->nprops : 256;
	for (size_t i = 0; i < n; i++)
		names[i] = s->props[i].name;
	return closest(name, names, n);
}

static bool object_member(const char *name)
{
	switch (name[0]) { /* asked at every member of a resource: spec, status */
	case 'a':
		return !strcmp(name, "apiVersion");
	case 'k':
		return !strcmp(name, "kind");
	case 'm':
		return !strcmp(name, "metadata");
	default:
		return false;
	}
}

size_t tp__sch_unknown_fields(tp_sch_walk *w, const tp_sch *s, const cJSON *v, bool root)
{
	size_t n = 0;
	if (!s || !v)
		return 0;
	if (cJSON_IsArray(v)) {
		long i = 0;
		for (const cJSON *it = v->child; it && s->items; it = it->next, i++) {
			size_t len = tp__sch_push_index(w, i);
			n += tp__sch_unknown_fields(w, s->items, it, false);
			tp__sch_pop(w, len);
		}
		return n;
	}
	if (!cJSON_IsObject(v))
		return 0;
	bool resource = root || s->embedded;
	for (const cJSON *m = v->child; m; m = m->next) {
		const tp_sch *p = tp__sch_member(s, m->string);
		if (!tp__sch_unknown_member(w, s, p, m, resource, &n))
			continue;
		size_t len = tp__sch_push_name(w, m->string);
		n += tp__sch_unknown_fields(w, p, m, false);
		tp__sch_pop(w, len);
	}
	return n;
}

bool tp__sch_unknown_member(tp_sch_walk *w, const tp_sch *s, const tp_sch *p, const cJSON *m,
			    bool resource, size_t *n)
{
	if (resource && object_member(m->string)) {
		if (!strcmp(m->string, "metadata"))
			*n += unknown_meta(w, m);
		return false;
	}
	if (p)
		return true;
	if (!s->preserve_unknown) {
		size_t len = tp__sch_push_name(w, m->string);
		unknown(w, closest_prop(s, m->string));
		tp__sch_pop(w, len);
		++*n;
	}
	return false;
}

/*
 * pod/meta.c — the metadata of the objects a runtime's template becomes, as
 * kube-apiserver checks it (v1.32): apimachinery's ValidateLabels (each key
 * a qualified name, each value a label value) and ValidateAnnotations (each
 * key a qualified name once lower-cased, all keys and values together at
 * most 256 KiB), both reported at the map's path with the key or value as
 * the bad value. Where they apply:
 *   - the Job: JobSet's constructJob gives it its template's labels and
 *     annotations (replicatedJobs[].template.metadata), which
 *     ValidateObjectMeta checks at metadata.labels and metadata.annotations;
 *   - its Pod template: ValidatePodTemplateSpec's annotations at
 *     spec.template.annotations (its labels are pod/spec.c's);
 *   - the JobSet: the trainer makes it with the runtime's
 *     spec.template.metadata, which ValidateObjectMeta checks at
 *     metadata.labels and metadata.annotations of the JobSet.
 * JobSet adds its own labels and annotations (jobset.sigs.k8s.io/...) to the
 * Job and the Pod template: valid keys, and some hundred bytes the size
 * limit here does not count.
 */
#include "policy/pod/pod.h"

#include <ctype.h>
#include <string.h>

#define LABEL_HINT "use a qualified name as key and a label value of up to 63 characters"
#define ANNOTATION_HINT \
	"use a qualified name (an optional DNS subdomain and '/', then a name) as key"
#define ANNOTATION_SIZE_MAX 262144 /* apimachinery TotalAnnotationSizeLimitB */

/* The step label's key, on each job of every runtime (three times a review
 * of the usual one), is a good qualified name: a comparison instead of its
 * check (400 instructions a job, callgrind). */
static bool known_good(const char *name)
{
	return name[0] == 't' && !strcmp(name, TP_LABEL_ANCESTOR);
}

int tp__pod_qualified_name(tp_podv *v, const char *suffix, const char *name, const char *hint)
{
	if (known_good(name))
		return v->rc;
	const char *msgs[TP_NAME_MSGS_MAX];
	size_t n = tp__qualified_name_msgs(name, msgs);
	for (size_t i = 0; i < n; i++)
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, name), hint, "%s",
			     msgs[i]);
	return v->rc;
}

int tp__pod_check_labels(tp_podv *v, const char *suffix, const cJSON *labels)
{
	if (!cJSON_IsObject(labels))
		return v->rc;
	for (const cJSON *l = labels->child; l; l = l->next) {
		tp__pod_qualified_name(v, suffix, l->string, LABEL_HINT);
		const char *msgs[TP_NAME_MSGS_MAX];
		size_t n = cJSON_IsString(l) ? tp__label_value_msgs(l->valuestring, msgs) : 0;
		for (size_t i = 0; i < n; i++)
			tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, l->valuestring),
				     LABEL_HINT, "%s", msgs[i]);
	}
	return v->rc;
}

/* An annotation key's case does not matter: the rule is checked on its
 * lower-cased copy (in v's arena; NULL when memory ran out). */
static const char *lower(tp_podv *v, const char *s)
{
	size_t n = 0;
	bool upper = false;
	for (; s[n]; n++)
		upper |= isupper((unsigned char)s[n]) != 0;
	if (!upper)
		return s;
	char *low = tp_arena_alloc(v->arena, n + 1);
	if (!low) {
		v->rc = TP_ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	return low;
}

int tp__pod_check_annotations(tp_podv *v, const char *suffix, const cJSON *annotations)
{
	if (!cJSON_IsObject(annotations))
		return v->rc;
	size_t total = 0;
	for (const cJSON *a = annotations->child; a && !v->rc; a = a->next) {
		total += strlen(a->string) + (cJSON_IsString(a) ? strlen(a->valuestring) : 0);
		const char *key = lower(v, a->string), *msgs[TP_NAME_MSGS_MAX];
		size_t n = key ? tp__qualified_name_msgs(key, msgs) : 0;
		for (size_t i = 0; i < n; i++)
			tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, a->string),
				     ANNOTATION_HINT, "%s", msgs[i]);
	}
	if (total > ANNOTATION_SIZE_MAX)
		tp__podv_add(v, TP_FIELD_TOO_LONG, suffix, NULL,
			     "keep annotations to 256 KiB in all: put large data in a ConfigMap",
			     "may not be more than %d bytes", ANNOTATION_SIZE_MAX);
	return v->rc;
}

/* ValidateObjectMeta's labels and annotations of meta, at "metadata". */
static int check_object_meta(tp_podv *v, const cJSON *meta)
{
	size_t mark = tp__podv_push(v, "metadata");
	tp__pod_check_labels(v, ".labels", tp_member(meta, "labels"));
	tp__pod_check_annotations(v, ".annotations", tp_member(meta, "annotations"));
	tp__podv_pop(v, mark);
	return v->rc;
}

int tp__pod_check_job_meta(tp_podv *v, const cJSON *job_template)
{
	return check_object_meta(v, tp__mobj(job_template, "metadata"));
}

int tp__pod_check_jobset_meta(tp_podv *v, const cJSON *jobset_template)
{
	return check_object_meta(v, tp__mobj(jobset_template, "metadata"));
}

/*
 * patch/merge.c — the runtime's JobSet template with a TrainJob's runtimePatches
 * applied (docs/kubeflow-upstream.md §5.1 steps 1-2), and the Kubernetes strategic
 * merge patch (SMP) it rests on.
 *
 * SMP needs the Go types to know how each list merges. We have no schema, so
 * the list's member name decides (merge_keys below): the JobSetSpec and
 * PodSpec fields that carry a patchMergeKey merge element by element, every
 * other list is replaced whole. Elements of a keyed list keep the order they
 * had in the destination; elements only in the patch are appended in patch
 * order (upstream restores the runtime's replicatedJobs order after its SMP,
 * and appending keeps jobs that exist only in a patch visible to the
 * validator that reports them).
 */
#include "policy/core/deadline.h"
#include "policy/core/internal.h"
#include "policy/patch/merge_index.h"
#include "policy/patch/patch.h"

#include <stdio.h>
#include <string.h>

/* Where an error message points: a path in the patch, grown and cut back as
 * the merge descends; and the destination's lookups (patch/merge_index.h). */
struct merge {
	tp_buf path;
	char *err;
	size_t errlen;
	tp__merge_index dst;
};

/* Kubernetes patchMergeKey by list member name (JobSetSpec, PodSpec,
 * Container, ResourceRequirements). */
static const struct {
	const char *list;
	const char *key;
} merge_keys[] = {
	{ "replicatedJobs", "name" },
	{ "dependsOn", "name" },
	{ "containers", "name" },
	{ "initContainers", "name" },
	{ "ephemeralContainers", "name" },
	{ "volumes", "name" },
	{ "env", "name" },
	{ "imagePullSecrets", "name" },
	{ "resourceClaims", "name" },
	{ "schedulingGates", "name" },
	{ "claims", "name" },
	{ "hostAliases", "ip" },
	{ "topologySpreadConstraints", "topologyKey" },
	{ "ports", "containerPort" },
	{ "volumeMounts", "mountPath" },
	{ "volumeDevices", "devicePath" },
};

static const char *list_key(const char *list_context)
{
	if (!list_context)
		return NULL;
	for (size_t i = 0; i < sizeof(merge_keys) / sizeof(merge_keys[0]); i++)
		if (!strcmp(merge_keys[i].list, list_context))
			return merge_keys[i].key;
	return NULL;
}

/* ------------------------------------------------------------ messages */

static size_t path_mark(const struct merge *m)
{
	return m->path.len;
}

static void path_cut(struct merge *m, size_t mark)
{
	if (m->path.data && mark <= m->path.len) {
		m->path.len = mark;
		m->path.data[mark] = '\0';
	}
}

/* A path that no longer fits only makes the message shorter; the merge
 * itself goes on, so append errors are ignored here. */
static void path_member(struct merge *m, const char *name)
{
	if (m->path.len)
		(void)tp_buf_addc(&m->path, '.');
	(void)tp_buf_adds(&m->path, name);
}

static void path_index(struct merge *m, int i)
{
	(void)tp_buf_addf(&m->path, "[%d]", i);
}

static int fail(struct merge *m, const char *detail)
{
	if (m->err && m->errlen)
		snprintf(m->err, m->errlen, "%s: %s",
			 m->path.data && m->path.len ? m->path.data : "<root>", detail);
	return TP_EINVAL;
}

static int fail_oom(struct merge *m)
{
	if (m->err && m->errlen)
		snprintf(m->err, m->errlen, "out of memory while merging runtimePatches");
	return TP_ENOMEM;
}

static cJSON *member_of(struct merge *m, cJSON *obj, const char *name, int *rc)
{
	cJSON *d = tp__merge_member(&m->dst, obj, name, rc);
	if (*rc)
		*rc = fail_oom(m);
	return d;
}

static void merge_init(struct merge *m, char *err, size_t errlen)
{
	*m = (struct merge){ .path = TP_BUF_INIT(4096), .err = err, .errlen = errlen };
	tp__merge_index_init(&m->dst);
}

static void merge_done(struct merge *m)
{
	tp__merge_index_free(&m->dst);
	tp_buf_free(&m->path);
}

/* ------------------------------------------------------------ copying */

/* A JSON null in a patch means "delete"; where there is nothing to delete
 * (a subtree new to the destination) it means nothing, as SMP's
 * IgnoreUnmatchedNulls does. */
static void strip_nulls(cJSON *v)
{
	if (cJSON_IsObject(v)) {
		cJSON *c = v->child;
		while (c) {
			cJSON *next = c->next;
			if (cJSON_IsNull(c))
				cJSON_Delete(cJSON_DetachItemViaPointer(v, c));
			else
				strip_nulls(c);
			c = next;
		}
	} else if (cJSON_IsArray(v)) {
		for (cJSON *c = v->child; c; c = c->next)
			strip_nulls(c);
	}
}

static cJSON *dup_clean(const cJSON *v)
{
	cJSON *d = cJSON_Duplicate(v, 1);
	if (d)
		strip_nulls(d);
	return d;
}

/* obj's member d gives its place to v (taken; NULL: out of memory), which
 * gets d's name: cJSON_ReplaceItemInObjectCaseSensitive would look d up
 * again by a scan. d is freed: it is a scalar, a null or a label's value,
 * never a container the merge has looked into, so no lookup names it. */
static int replace_member(struct merge *m, cJSON *obj, cJSON *d, cJSON *v)
{
	if (v && !v->string) {
		size_t n = strlen(d->string) + 1;
		if ((v->string = cJSON_malloc(n)))
			memcpy(v->string, d->string, n);
		v->type &= ~cJSON_StringIsConst;
	}
	if (!v || !v->string) {
		cJSON_Delete(v);
		return fail_oom(m);
	}
	tp__merge_swapped(&m->dst, obj, d, v);
	cJSON_ReplaceItemViaPointer(obj, d, v);
	return TP_OK;
}

static int add_member(struct merge *m, cJSON *obj, const char *name, cJSON *v)
{
	if (!v || !cJSON_AddItemToObject(obj, name, v)) {
		cJSON_Delete(v);
		return fail_oom(m);
	}
	return tp__merge_added(&m->dst, obj, v) ? fail_oom(m) : TP_OK;
}

static int add_element(struct merge *m, cJSON *arr, cJSON *v)
{
	if (!v || !cJSON_AddItemToArray(arr, v)) {
		cJSON_Delete(v);
		return fail_oom(m);
	}
	return tp__merge_added(&m->dst, arr, v) ? fail_oom(m) : TP_OK;
}

static int kind_mismatch(struct merge *m, const cJSON *dst)
{
	if (cJSON_IsObject(dst))
		return fail(m, "must be an object");
	if (cJSON_IsArray(dst))
		return fail(m, "must be a list");
	return fail(m, "must not be an object or a list");
}

/* Drop dst's elements and take copies of src's: an atomic list. */
static int replace_children(struct merge *m, cJSON *dst, const cJSON *src)
{
	while (dst->child)
		tp__merge_bury(&m->dst, dst, dst->child);
	for (const cJSON *e = src->child; e; e = e->next) {
		int rc = tp__tick(1);
		if (rc || (rc = add_element(m, dst, dup_clean(e))))
			return rc;
	}
	return TP_OK;
}

/* ------------------------------------------------------------ merging */

static int merge_object(struct merge *m, cJSON *dst, const cJSON *patch);
static int merge_list(struct merge *m, cJSON *dst, const cJSON *patch, const char *context);

static bool both_kind(const cJSON *a, const cJSON *b, int kind)
{
	return (a->type & 0xff) == kind && (b->type & 0xff) == kind;
}

/* One member of patch onto dst (both objects), dst's member d present. */
static int merge_member(struct merge *m, cJSON *dst, cJSON *d, const cJSON *p)
{
	if (both_kind(d, p, cJSON_Object))
		return merge_object(m, d, p);
	if (both_kind(d, p, cJSON_Array))
		return merge_list(m, d, p, p->string);
	bool d_scalar = !cJSON_IsObject(d) && !cJSON_IsArray(d);
	bool p_scalar = !cJSON_IsObject(p) && !cJSON_IsArray(p);
	/* A scalar for a scalar replaces it; a null in the destination holds no
	 * type, so anything may take its place. */
	if ((d_scalar && p_scalar) || cJSON_IsNull(d)) {
		return replace_member(m, dst, d, dup_clean(p));
	}
	return kind_mismatch(m, d);
}

static int merge_object(struct merge *m, cJSON *dst, const cJSON *patch)
{
	for (const cJSON *p = patch->child; p; p = p->next) {
		if (!p->string)
			continue;
		int rc = tp__tick(1);
		cJSON *d = rc ? NULL : member_of(m, dst, p->string, &rc);
		if (rc)
			return rc;
		if (cJSON_IsNull(p)) {
			if (d)
				tp__merge_bury(&m->dst, dst, d);
			continue;
		}
		if (!d) {
			rc = add_member(m, dst, p->string, dup_clean(p));
		} else {
			size_t mark = path_mark(m);
			path_member(m, p->string);
			rc = merge_member(m, dst, d, p);
			if (rc == TP_OK)
				path_cut(m, mark);
		}
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* One element of a keyed list: merged into its match, else appended. */
static int merge_element(struct merge *m, cJSON *dst, const cJSON *e, const char *key)
{
	if (!cJSON_IsObject(e))
		return fail(m, "must be an object");
	const cJSON *kv = tp_member(e, key);
	if (!kv || cJSON_IsNull(kv)) {
		char detail[96];
		snprintf(detail, sizeof(detail), "does not contain the merge key \"%s\"", key);
		return fail(m, detail);
	}
	int rc = TP_OK;
	cJSON *t = tp__merge_item(&m->dst, dst, key, kv, &rc);
	if (rc)
		return fail_oom(m);
	if (t)
		return merge_object(m, t, e);
	return add_element(m, dst, dup_clean(e));
}

static int merge_list(struct merge *m, cJSON *dst, const cJSON *patch, const char *context)
{
	const char *key = list_key(context);
	if (!key)
		return replace_children(m, dst, patch);
	int i = 0;
	for (const cJSON *e = patch->child; e; e = e->next, i++) {
		size_t mark = path_mark(m);
		path_index(m, i);
		int rc = tp__tick(1);
		if (rc || (rc = merge_element(m, dst, e, key)))
			return rc;
		path_cut(m, mark);
	}
	return TP_OK;
}

/* ------------------------------------------------------------ public */

int tp__strategic_merge(cJSON *dst, const cJSON *patch, const char *list_context)
{
	if (!dst || !patch)
		return TP_EINVAL;
	struct merge m;
	merge_init(&m, NULL, 0);
	int rc;
	if (both_kind(dst, patch, cJSON_Object))
		rc = merge_object(&m, dst, patch);
	else if (both_kind(dst, patch, cJSON_Array))
		rc = merge_list(&m, dst, patch, list_context);
	else
		rc = TP_EINVAL;
	merge_done(&m);
	return rc;
}

/* ------------------------------------------------------------ runtime info */

/* obj[name] as an object, created when absent; NULL (and an error) when it
 * holds something else. */
static cJSON *object_member(struct merge *m, cJSON *obj, const char *name, int *rc)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (cJSON_IsObject(v))
		return v;
	size_t mark = path_mark(m);
	path_member(m, name);
	if (v) {
		*rc = fail(m, "must be an object");
		return NULL;
	}
	path_cut(m, mark);
	v = cJSON_CreateObject();
	if (!v || !cJSON_AddItemToObject(obj, name, v)) {
		cJSON_Delete(v);
		*rc = fail_oom(m);
		return NULL;
	}
	return v;
}

/* Labels or annotations of a patch overlaid onto the template's (later
 * wins). Only strings are map values; a null stands for nothing. */
static int overlay_map(struct merge *m, cJSON *meta, const cJSON *pmeta, const char *name)
{
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(pmeta, name);
	if (!src || cJSON_IsNull(src))
		return TP_OK;
	size_t mark = path_mark(m);
	path_member(m, name);
	if (!cJSON_IsObject(src))
		return fail(m, "must be an object");
	path_cut(m, mark);
	int rc = TP_OK;
	cJSON *dst = object_member(m, meta, name, &rc);
	if (!dst)
		return rc;
	for (const cJSON *v = src->child; v; v = v->next) {
		if (cJSON_IsNull(v) || !v->string)
			continue;
		if (!cJSON_IsString(v)) {
			path_member(m, name);
			(void)tp_buf_addf(&m->path, "[%s]", v->string);
			return fail(m, "must be a string");
		}
		cJSON *d = (rc = tp__tick(1)) ? NULL : member_of(m, dst, v->string, &rc);
		if (!rc)
			rc = d ? replace_member(m, dst, d, cJSON_CreateString(v->valuestring))
			       : add_member(m, dst, v->string, cJSON_CreateString(v->valuestring));
		if (rc)
			return rc;
	}
	return TP_OK;
}

static int apply_patch(struct merge *m, cJSON *tmpl, const cJSON *patch)
{
	const cJSON *pt = tp_get(patch, "trainingRuntimeSpec.template");
	if (!pt || cJSON_IsNull(pt))
		return TP_OK;
	path_member(m, "trainingRuntimeSpec.template");
	if (!cJSON_IsObject(pt))
		return fail(m, "must be an object");
	int rc = TP_OK;
	size_t mark = path_mark(m);
	const cJSON *pmeta = cJSON_GetObjectItemCaseSensitive(pt, "metadata");
	if (pmeta && !cJSON_IsNull(pmeta)) {
		path_member(m, "metadata");
		if (!cJSON_IsObject(pmeta))
			return fail(m, "must be an object");
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(tmpl, "metadata");
		if ((rc = overlay_map(m, meta, pmeta, "labels")) ||
		    (rc = overlay_map(m, meta, pmeta, "annotations")))
			return rc;
		path_cut(m, mark);
	}
	const cJSON *pspec = cJSON_GetObjectItemCaseSensitive(pt, "spec");
	if (!pspec || cJSON_IsNull(pspec))
		return TP_OK;
	path_member(m, "spec");
	if (!cJSON_IsObject(pspec))
		return fail(m, "must be an object");
	return merge_object(m, cJSON_GetObjectItemCaseSensitive(tmpl, "spec"), pspec);
}

static int apply_patches(struct merge *m, cJSON *tmpl, const cJSON *trainjob)
{
	const cJSON *patches = tp_get(trainjob, "spec.runtimePatches");
	if (!patches || cJSON_IsNull(patches))
		return TP_OK;
	(void)tp_buf_adds(&m->path, "spec.runtimePatches");
	if (!cJSON_IsArray(patches))
		return fail(m, "must be a list");
	int i = 0;
	for (const cJSON *p = patches->child; p; p = p->next, i++) {
		size_t mark = path_mark(m);
		path_index(m, i);
		int rc = apply_patch(m, tmpl, p);
		if (rc)
			return rc;
		path_cut(m, mark);
	}
	return TP_OK;
}

/* The runtime's spec.template, copied, with metadata and spec objects
 * always present so that patches have somewhere to land. */
static int copy_template(struct merge *m, const cJSON *runtime, cJSON **out)
{
	const cJSON *src = tp_get(runtime, "spec.template");
	(void)tp_buf_adds(&m->path, "spec.template");
	if (src && !cJSON_IsObject(src) && !cJSON_IsNull(src))
		return fail(m, "must be an object");
	cJSON *t = cJSON_IsObject(src) ? dup_clean(src) : cJSON_CreateObject();
	if (!t)
		return fail_oom(m);
	int rc = TP_OK;
	if (!object_member(m, t, "metadata", &rc) || !object_member(m, t, "spec", &rc)) {
		cJSON_Delete(t);
		return rc;
	}
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(t, "metadata");
	const char *maps[] = { "labels", "annotations" };
	for (int i = 0; i < 2; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, maps[i]);
		if (v && !cJSON_IsObject(v)) {
			path_member(m, "metadata");
			path_member(m, maps[i]);
			cJSON_Delete(t);
			return fail(m, "must be an object");
		}
	}
	path_cut(m, 0);
	*out = t;
	return TP_OK;
}

static bool has_null(const cJSON *v)
{
	for (const cJSON *c = v->child; c; c = c->next)
		if (cJSON_IsNull(c) || ((cJSON_IsObject(c) || cJSON_IsArray(c)) && has_null(c)))
			return true;
	return false;
}

static bool absent_or_object(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	return !v || cJSON_IsObject(v);
}

const cJSON *tp__runtime_template_view(const cJSON *runtime)
{
	const cJSON *t = tp_get(runtime, "spec.template");
	if (!cJSON_IsObject(t) || !absent_or_object(t, "metadata") || !absent_or_object(t, "spec"))
		return NULL;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(t, "metadata");
	if (meta && (!absent_or_object(meta, "labels") || !absent_or_object(meta, "annotations")))
		return NULL;
	return has_null(t) ? NULL : t;
}

int tp__runtime_template(const cJSON *runtime, const cJSON *trainjob, cJSON **out,
			char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return TP_EINVAL;
	*out = NULL;
	struct merge m;
	merge_init(&m, err, errlen);
	cJSON *t = NULL;
	int rc = copy_template(&m, runtime, &t);
	if (rc == TP_OK)
		rc = apply_patches(&m, t, trainjob);
	merge_done(&m);
	if (rc) {
		cJSON_Delete(t);
		return rc;
	}
	*out = t;
	return TP_OK;
}

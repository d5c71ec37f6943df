/*
 * schema/meta.c — what the API server checks of a custom resource's
 * ObjectMeta before its schema: apimachinery's ValidateObjectMetaAccessor
 * (pkg/api/validation/objectmeta.go) with apiextensions' name rule
 * (NameIsDNSSubdomain, generic.go), in its order and words:
 *   - generateName as a prefix, then the name (after rest.BeforeCreate has
 *     made one from generateName: schema/engine.c hands it in);
 *   - the namespace: a cluster-scoped kind's is cleared before validation
 *     (rest.BeforeCreate), which we say as a warning;
 *   - labels (ValidateLabels: key and value errors at "metadata.labels"),
 *     annotations (keys lowercased, then IsQualifiedName; 256 KiB in all),
 *     ownerReferences (each one's version, kind, name and uid; one
 *     controller), finalizers (qualified names; orphan and foregroundDeletion
 *     not both), and the finalizer warning apiextensions' strategy gives.
 * The CRD's schema says only "metadata: object"; these are ObjectMeta's own.
 * Where the API server prints a Go value (%#v of an OwnerReference list),
 * the value is shown as JSON, as every other object or list value is.
 */
#include "policy/schema/schema.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* apimachinery's TotalAnnotationSizeLimitB: 256 kB of keys and values. */
#define ANNOTATIONS_MAX (256 * 1024)

typedef struct meta_walk {
	tp_sch_walk *w;
	const cJSON *meta;
} meta_walk;

static void add(meta_walk *m, tp_field_type type, const char *path, const char *value,
		const char *fmt, ...) TP_PRINTF(5, 6);
static void add(meta_walk *m, tp_field_type type, const char *path, const char *value,
		const char *fmt, ...)
{
	char detail[2048]; /* the texts are short; a kind/name pair is the user's */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	/* apiextensions' hasBlockingErr: these stop the CEL rules */
	if (type == TP_FIELD_REQUIRED || type == TP_FIELD_TOO_LONG)
		m->w->blocking = true;
	m->w->rc |= tp_result_add(m->w->res, type, path, value, "%s", detail);
}

/* NameIsDNSSubdomain(name, prefix): a prefix's trailing '-' is masked as
 * maskTrailingDash does (its last two bytes become "a"). A prefix too long
 * for buf is too long for a subdomain either way. */
static const char *subdomain_msg(const char *name, bool prefix)
{
	char buf[300];
	size_t n = strlen(name);
	if (prefix && n > 1 && n < sizeof(buf) && name[n - 1] == '-') {
		snprintf(buf, sizeof(buf), "%.*sa", (int)(n - 2), name);
		name = buf;
	}
	return tp__check_dns1123_subdomain(name);
}

static void names(meta_walk *m)
{
	tp_result *res = m->w->res;
	const char *name = tp_get_str(m->meta, "name");
	const char *gen = tp_get_str(m->meta, "generateName");
	const char *why;
	if (gen && *gen && (why = subdomain_msg(gen, true)))
		add(m, TP_FIELD_INVALID, "metadata.generateName", tp_result_quote(res, gen), "%s", why);
	if (!name || !*name)
		add(m, TP_FIELD_REQUIRED, "metadata.name", NULL, "%s", "name or generateName is required");
	else if ((why = subdomain_msg(name, false)))
		add(m, TP_FIELD_INVALID, "metadata.name", tp_result_quote(res, name), "%s", why);
}

static void namespace(meta_walk *m, const tp_crd_version *v)
{
	tp_result *res = m->w->res;
	const char *ns = tp_get_str(m->meta, "namespace");
	const char *why;
	if (!ns || !*ns)
		return;
	if (!v->namespaced)
		m->w->rc |= tp_result_warn_at(res, "metadata.namespace",
					      "metadata.namespace: %s is cleared: a %s is cluster-scoped, "
					      "so the API server ignores its namespace; remove the line",
					      tp_result_quote(res, ns), v->kind);
	else if ((why = tp__check_dns1123_label(ns)))
		add(m, TP_FIELD_INVALID, "metadata.namespace", tp_result_quote(res, ns), "%s", why);
}

/* IsQualifiedName of each key (lowered first for annotations, as
 * ValidateAnnotations does), the errors at the map's path. */
static void key_msgs(meta_walk *m, const char *path, const char *key, bool lower)
{
	tp_result *res = m->w->res;
	const char *msgs[TP_NAME_MSGS_MAX];
	tp_buf low = TP_BUF_INIT(1 << 20);
	if (lower && !tp_buf_adds(&low, key))
		for (char *p = low.data; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	size_t n = tp__qualified_name_msgs(low.data ? low.data : key, msgs);
	for (size_t i = 0; i < n; i++)
		add(m, TP_FIELD_INVALID, path, tp_result_quote(res, key), "%s", msgs[i]);
	tp_buf_free(&low);
}

static void string_map(meta_walk *m, const char *key, bool labels)
{
	tp_result *res = m->w->res;
	const cJSON *map = cJSON_GetObjectItemCaseSensitive(m->meta, key);
	char path[64], member[512];
	if (!map || cJSON_IsNull(map))
		return;
	snprintf(path, sizeof(path), "metadata.%s", key);
	if (!cJSON_IsObject(map)) {
		m->w->rc |= tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, "object"),
					  "%s in body must be of type object", path);
		return;
	}
	size_t total = 0;
	for (const cJSON *v = map->child; v; v = v->next) {
		key_msgs(m, path, v->string, !labels);
		const char *msgs[TP_NAME_MSGS_MAX];
		size_t n;
		if (!cJSON_IsString(v)) { /* the built-in layer's words, and quotes fix it */
			const char *type = tp_json_type_name(v);
			snprintf(member, sizeof(member), "%s.%s", path, v->string);
			m->w->rc |= tp_result_add(res, TP_FIELD_INVALID, member, tp_result_quote(res, type),
						  "%s in body must be of type string: \"%s\"", member,
						  type);
			continue;
		}
		total += strlen(v->string) + strlen(v->valuestring);
		if (labels && (n = tp__label_value_msgs(v->valuestring, msgs)))
			for (size_t i = 0; i < n; i++)
				add(m, TP_FIELD_INVALID, path, tp_result_quote(res, v->valuestring),
				    "%s", msgs[i]);
	}
	if (!labels && total > ANNOTATIONS_MAX)
		add(m, TP_FIELD_TOO_LONG, path, NULL, "may not be more than %d bytes", ANNOTATIONS_MAX);
}

/* ---------------------------------------------------------- ownerReferences */

static const char *str_or_empty(const cJSON *o, const char *key)
{
	const char *s = tp_get_str(o, key);
	return s ? s : "";
}

/* validateOwnerReference: schema.FromAPIVersionAndKind's version (a
 * "group/version" with more slashes parses to none) and kind, the name,
 * the uid, and no core/v1 Event as an owner. */
static void owner_reference(meta_walk *m, const char *path, const cJSON *ref)
{
	tp_result *res = m->w->res;
	char at[64];
	const char *av = str_or_empty(ref, "apiVersion"), *kind = str_or_empty(ref, "kind");
	const char *slash = strchr(av, '/');
	const char *version = !slash ? av : strchr(slash + 1, '/') ? "" : slash + 1;
	bool core = !slash && *av;
	if (!*version)
		add(m, TP_FIELD_INVALID, strcat(strcpy(at, path), ".apiVersion"),
		    tp_result_quote(res, av), "version must not be empty");
	if (!*kind)
		add(m, TP_FIELD_INVALID, strcat(strcpy(at, path), ".kind"), tp_result_quote(res, kind),
		    "kind must not be empty");
	static const char *const fields[] = { "name", "uid" };
	for (size_t i = 0; i < 2; i++)
		if (!*str_or_empty(ref, fields[i])) {
			snprintf(at, sizeof(at), "%s.%s", path, fields[i]);
			add(m, TP_FIELD_INVALID, at, "\"\"", "%s must not be empty", fields[i]);
		}
	if (core && !strcmp(av, "v1") && !strcmp(kind, "Event"))
		add(m, TP_FIELD_INVALID, path, tp_result_value(res, ref), "%s",
		    "/v1, Kind=Event is disallowed from being an owner");
}

/* ValidateOwnerReferences: the errors carry no index (fldPath is the
 * list's); a second controller names the first and itself. */
static void owner_references(meta_walk *m)
{
	tp_result *res = m->w->res;
	const char *path = "metadata.ownerReferences";
	const cJSON *refs = cJSON_GetObjectItemCaseSensitive(m->meta, "ownerReferences");
	const cJSON *first = NULL; /* the first controller */
	if (!cJSON_IsArray(refs))
		return;
	for (const cJSON *ref = refs->child; ref; ref = ref->next) {
		if (!cJSON_IsObject(ref))
			continue;
		owner_reference(m, path, ref);
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
			continue;
		if (!first) {
			first = ref;
			continue;
		}
		add(m, TP_FIELD_INVALID, path, tp_result_value(res, refs),
		    "Only one reference can have Controller set to true. Found \"true\" in "
		    "references for %s/%s and %s/%s", str_or_empty(first, "kind"),
		    str_or_empty(first, "name"), str_or_empty(ref, "kind"), str_or_empty(ref, "name"));
	}
}

/* ---------------------------------------------------------- finalizers */

/* core.FinalizerKubernetes and metav1's two: no domain needed. */
static bool standard_finalizer(const char *f)
{
	return !strcmp(f, "kubernetes") || !strcmp(f, "orphan") || !strcmp(f, "foregroundDeletion");
}

/* ValidateFinalizers, then apiextensions' warning for a name without a
 * domain (validateKubeFinalizerName in its strategy's WarningsOnCreate). */
static void finalizers(meta_walk *m)
{
	tp_result *res = m->w->res;
	const char *path = "metadata.finalizers";
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(m->meta, "finalizers");
	bool orphan = false, foreground = false;
	if (!cJSON_IsArray(list))
		return;
	for (const cJSON *f = list->child; f; f = f->next) {
		if (!cJSON_IsString(f))
			continue;
		const char *msgs[TP_NAME_MSGS_MAX];
		size_t n = tp__qualified_name_msgs(f->valuestring, msgs);
		for (size_t i = 0; i < n; i++)
			add(m, TP_FIELD_INVALID, path, tp_result_quote(res, f->valuestring), "%s",
			    msgs[i]);
		orphan |= !strcmp(f->valuestring, "orphan");
		foreground |= !strcmp(f->valuestring, "foregroundDeletion");
		if (!n && !strchr(f->valuestring, '/') && !standard_finalizer(f->valuestring))
			m->w->rc |= tp_result_warn_at(res, path, "%s: %s: prefer a domain-qualified "
						      "finalizer name to avoid accidental conflicts "
						      "with other finalizer writers", path,
						      tp_result_quote(res, f->valuestring));
	}
	if (orphan && foreground)
		add(m, TP_FIELD_INVALID, path, tp_result_value(res, list), "%s",
		    "finalizer orphan and foregroundDeletion cannot be both set");
}

void tp__sch_object_meta(tp_sch_walk *w, const tp_crd_version *v, const cJSON *obj)
{
	meta_walk m = { .w = w, .meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata") };
	if (!cJSON_IsObject(m.meta)) {
		add(&m, TP_FIELD_REQUIRED, "metadata.name", NULL, "%s", "name or generateName is required");
		return;
	}
	names(&m);
	namespace(&m, v);
	string_map(&m, "labels", true);
	string_map(&m, "annotations", false);
	owner_references(&m);
	finalizers(&m);
}

/*
 * pod/annotations.c — what a Pod template's annotations mean to the API
 * server, beyond ValidateAnnotations' keys and size (pod/meta.c): Kubernetes
 * v1.32's ValidatePodTemplateSpec runs, for a Job's template as for a Pod,
 *   - ValidatePodSpecificAnnotations: the mirror-pod annotation wants a
 *     spec.nodeName, the pod-deletion-cost one a 32-bit integer (the
 *     PodDeletionCost gate is on), the seccomp annotations a seccomp profile
 *     (ValidateSeccompPodAnnotations), the AppArmor annotations a container
 *     of the Pod and a profile (ValidateAppArmorPodAnnotations,
 *     ValidateAppArmorProfileFormat);
 *   - validateSeccompAnnotationsAndFields and
 *     validateAppArmorAnnotationsAndFieldsMatchOnCreate: an annotation and
 *     the field of the same profile must say the same.
 * Paths as upstream gives them: fldPath.Key for the mirror, deletion-cost
 * and AppArmor annotations, fldPath.Child (a dot) for the seccomp ones.
 * Not ported: ValidateTolerationsInPodAnnotations (the alpha tolerations
 * annotation is read by no scheduler since v1.6; its JSON decoding errors
 * are Go's encoding/json's words).
 */
#include "policy/pod/pod.h"

#include <string.h>

#define MIRROR_KEY "kubernetes.io/config.mirror"
#define DELETION_COST_KEY "controller.kubernetes.io/pod-deletion-cost"
#define SECCOMP_POD_KEY "seccomp.security.alpha.kubernetes.io/pod"
#define SECCOMP_CONTAINER_PREFIX "container.seccomp.security.alpha.kubernetes.io/"
#define APPARMOR_PREFIX "container.apparmor.security.beta.kubernetes.io/"
#define LOCALHOST "localhost/" /* both annotations' prefix of a node's profile */

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* ------------------------------------------------- the annotations' own */

/* GetDeletionCostFromPodAnnotations: "-" or a digit other than a leading
 * zero first ("0" alone is fine), then strconv.ParseInt(value, 10, 32). */
static bool int32_text(const char *s)
{
	bool neg = *s == '-';
	const char *d = s + neg;
	if (!*s || (!neg && (*d < '0' || *d > '9' || (*d == '0' && d[1]))))
		return false;
	if (!*d)
		return false;
	long long n = 0;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return false;
		n = n * 10 + (*d - '0');
		if (n > 2147483648LL)
			return false;
	}
	return neg || n <= 2147483647LL;
}

/* validateLocalDescendingPath of a seccomp annotation's localhost profile. */
static void check_profile_path(tp_podv *v, const char *value, const char *rest)
{
	if (*rest == '/')
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, rest),
			     "name the profile by its path relative to the kubelet's seccomp directory",
			     "must be a relative path");
	for (const char *p = rest; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, rest),
				     tp__podv_printf(v, "write %s without '..'", value),
				     "must not contain '..'");
			break;
		}
		p += n + (p[n] == '/');
	}
}

/* ValidateSeccompProfile of one seccomp annotation, at ".<key>". */
static void check_seccomp_value(tp_podv *v, const char *key, const char *value)
{
	if (!strcmp(value, "runtime/default") || !strcmp(value, "docker/default") ||
	    !strcmp(value, "unconfined"))
		return;
	size_t mark = tp__podv_push_member(v, key);
	if (has_prefix(value, LOCALHOST))
		check_profile_path(v, value, value + strlen(LOCALHOST));
	else
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, value),
			     "write runtime/default, unconfined or localhost/<profile>, or better "
			     "set securityContext.seccompProfile and drop the annotation",
			     "must be a valid seccomp profile");
	tp__podv_pop(v, mark);
}

/* VisitContainersWithPath's lists, in its order. */
static const char *const container_lists[] = { "initContainers", "containers",
						"ephemeralContainers" };
#define NLISTS (sizeof(container_lists) / sizeof(container_lists[0]))

/* The names podSpecHasContainer looks for, filed once. */
static void container_names(tp_podv *v, const cJSON *spec, tp_nameset *names)
{
	tp__nameset_init(names, v->arena);
	for (size_t l = 0; l < NLISTS; l++) {
		const cJSON *list = tp__marr(spec, container_lists[l]);
		for (const cJSON *c = list ? list->child : NULL; c; c = c->next) {
			const char *n = tp__mstr(c, "name");
			if (n && tp__nameset_add(names, n))
				v->rc = TP_ENOMEM;
		}
	}
}

/* ValidateAppArmorPodAnnotations of one annotation, at "[<key>]". */
static void check_apparmor_value(tp_podv *v, const tp_nameset *containers, const char *key,
				 const char *value)
{
	const char *name = key + strlen(APPARMOR_PREFIX);
	size_t mark = tp__podv_push_key(v, "", key);
	if (!tp__nameset_has(containers, name))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, name),
			     "name a container of the Pod after the prefix, or drop the annotation",
			     "container not found");
	/* ValidateAppArmorProfileFormat */
	if (*value && strcmp(value, "runtime/default") && strcmp(value, "unconfined") &&
	    !has_prefix(value, LOCALHOST))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, value),
			     "write runtime/default, unconfined or localhost/<profile>, or better set "
			     "securityContext.appArmorProfile and drop the annotation",
			     "invalid AppArmor profile name: %s", tp__podv_quote(v, value));
	tp__podv_pop(v, mark);
}

/* ValidatePodSpecificAnnotations, at ".annotations" (no "metadata", as
 * upstream's fldPath.Child("annotations") of the template). */
static void check_specific(tp_podv *v, const cJSON *annotations, const cJSON *spec)
{
	size_t mark = tp__podv_push(v, ".annotations");
	const char *mirror = tp__mstr(annotations, MIRROR_KEY);
	const char *node = tp__mstr(spec, "nodeName");
	if (mirror && (!node || !*node))
		tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, "[%s]", MIRROR_KEY),
			     tp__podv_quote(v, mirror),
			     "drop the annotation: the kubelet sets it on the mirror Pods it makes",
			     "must set spec.nodeName if mirror pod annotation is set");
	const char *cost = tp__mstr(annotations, DELETION_COST_KEY);
	if (cost && !int32_text(cost))
		tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, "[%s]", DELETION_COST_KEY),
			     tp__podv_quote(v, cost),
			     "write an integer from -2147483648 to 2147483647, without '+' or "
			     "leading zeros",
			     "must be a 32bit integer");
	/* the Pod's seccomp annotation first, then each container's */
	const char *pod_seccomp = tp__mstr(annotations, SECCOMP_POD_KEY);
	if (pod_seccomp)
		check_seccomp_value(v, SECCOMP_POD_KEY, pod_seccomp);
	for (const cJSON *a = annotations->child; a; a = a->next)
		if (cJSON_IsString(a) && has_prefix(a->string, SECCOMP_CONTAINER_PREFIX))
			check_seccomp_value(v, a->string, a->valuestring);
	tp_nameset containers = { 0 };
	for (const cJSON *a = annotations->child; a; a = a->next) {
		if (!cJSON_IsString(a) || !has_prefix(a->string, APPARMOR_PREFIX))
			continue;
		if (!containers.arena)
			container_names(v, spec, &containers);
		check_apparmor_value(v, &containers, a->string, a->valuestring);
	}
	tp__podv_pop(v, mark);
}

/* ------------------------------------------- annotations against fields */

/* validateSeccompAnnotationsAndFieldsMatch, and the same switch in
 * validateAppArmorAnnotationsAndFieldsMatchOnCreate, at the current path
 * (the profile field's): what is "seccomp" or "apparmor", as in the
 * messages; seccomp's RuntimeDefault also takes docker/default. */
static void profile_match(tp_podv *v, const char *what, const char *annotation,
			  const cJSON *profile)
{
	const char *type = tp__mstr(profile, "type");
	if (!annotation || !type)
		return;
	bool seccomp = what[0] == 's';
	const char *hint = tp__podv_printf(v, "drop the %s annotation: the field is enough",
					   seccomp ? "seccomp" : "AppArmor");
	bool ok = true;
	if (!strcmp(type, "Unconfined"))
		ok = !strcmp(annotation, "unconfined");
	else if (!strcmp(type, "RuntimeDefault"))
		ok = !strcmp(annotation, "runtime/default") ||
		     (seccomp && !strcmp(annotation, "docker/default"));
	else if (!strcmp(type, "Localhost") && has_prefix(annotation, LOCALHOST)) {
		const char *local = tp__mstr(profile, "localhostProfile");
		if (!local || strcmp(annotation + strlen(LOCALHOST), local))
			tp__podv_add(v, TP_FIELD_FORBIDDEN, ".localhostProfile", NULL, hint,
				     "%s profile in annotation and field must match", what);
		return;
	} else if (!strcmp(type, "Localhost"))
		ok = false;
	if (!ok)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".type", NULL, hint,
			     "%s type in annotation and field must match", what);
}

/* The annotation prefix + name, or NULL (no such annotation). */
static const char *annotation_of(tp_podv *v, const cJSON *annotations, const char *prefix,
				 const char *name)
{
	const char *key = tp__podv_printf(v, "%s%s", prefix, name);
	return key ? tp__mstr(annotations, key) : NULL;
}

/* A container's profile beside its annotation, at the container's path
 * (VisitContainersWithPath's). AppArmor's profile falls back on the Pod's,
 * seccomp's does not. */
static void match_container(tp_podv *v, const cJSON *annotations, const cJSON *c,
			    const cJSON *pod_apparmor, bool windows)
{
	const char *name = tp__mstr(c, "name");
	if (!name)
		return;
	const cJSON *sc = tp__mobj(c, "securityContext");
	const cJSON *seccomp = tp__mobj(sc, "seccompProfile");
	if (seccomp) {
		size_t mark = tp__podv_push(v, ".securityContext.seccompProfile");
		profile_match(v, "seccomp",
			      annotation_of(v, annotations, SECCOMP_CONTAINER_PREFIX, name), seccomp);
		tp__podv_pop(v, mark);
	}
	const cJSON *apparmor = tp__mobj(sc, "appArmorProfile");
	if (!apparmor)
		apparmor = pod_apparmor;
	if (apparmor && !windows) {
		size_t mark = tp__podv_push(v, ".securityContext.appArmorProfile");
		profile_match(v, "apparmor", annotation_of(v, annotations, APPARMOR_PREFIX, name),
			      apparmor);
		tp__podv_pop(v, mark);
	}
}

/* validateSeccompAnnotationsAndFields, then (for a Pod not on Windows)
 * validateAppArmorAnnotationsAndFieldsMatchOnCreate, at ".spec". */
static void check_matches(tp_podv *v, const cJSON *annotations, const cJSON *spec)
{
	size_t mark = tp__podv_push(v, ".spec");
	const cJSON *psc = tp__mobj(spec, "securityContext");
	const cJSON *pod_seccomp = tp__mobj(psc, "seccompProfile");
	if (pod_seccomp) {
		size_t m = tp__podv_push(v, ".securityContext.seccompProfile");
		profile_match(v, "seccomp", tp__mstr(annotations, SECCOMP_POD_KEY), pod_seccomp);
		tp__podv_pop(v, m);
	}
	const char *os = tp__mstr(tp__mobj(spec, "os"), "name");
	bool windows = os && !strcmp(os, "windows");
	const cJSON *pod_apparmor = tp__mobj(psc, "appArmorProfile");
	for (size_t l = 0; l < NLISTS; l++) {
		const cJSON *list = tp__marr(spec, container_lists[l]);
		size_t m = tp__podv_push_member(v, container_lists[l]);
		int i = 0;
		for (const cJSON *c = list ? list->child : NULL; c; c = c->next, i++) {
			size_t mi = tp__podv_push_index(v, "", i);
			match_container(v, annotations, c, pod_apparmor, windows);
			tp__podv_pop(v, mi);
		}
		tp__podv_pop(v, m);
	}
	tp__podv_pop(v, mark);
}

int tp__pod_check_pod_annotations(tp_podv *v, const cJSON *tmpl)
{
	const cJSON *annotations = tp__mobj(tp__mobj(tmpl, "metadata"), "annotations");
	if (!annotations || !annotations->child)
		return v->rc;
	const cJSON *spec = tp__mobj(tmpl, "spec");
	check_specific(v, annotations, spec);
	check_matches(v, annotations, spec);
	return v->rc;
}

/*
 * pod/containers.c — spec.containers and spec.initContainers as
 * kube-apiserver checks them (pkg/apis/core/validation validateContainers,
 * validateInitContainers, validateContainerCommon; v1.32, same texts in
 * v1.26 less the sidecar rules): at least one container, names that are
 * DNS-1123 labels and unique across both lists, an image, the enumerations
 * the API server's defaulting leaves alone when they are set, and what only
 * one kind of container may carry (probes and lifecycle for init containers
 * only with restartPolicy Always; restartPolicy for init containers only).
 */
#include "policy/pod/pod.h"

#include <string.h>

#define NAME_HINT "use a lower-case DNS-1123 label (\"node\", \"dataset-initializer\")"
#define INIT_ONLY "may not be set for init containers without restartPolicy=Always"

static void enter(tp_podv *v, tp_pod_list list, const char *name)
{
	v->list = list;
	v->container = name;
	v->container_len = v->len;
}

static void leave(tp_podv *v)
{
	v->list = TP_POD_NONE;
	v->container = NULL;
	v->container_len = 0;
}

/* An enumeration the API server defaults when unset or "": only a value
 * outside the list is an error. */
static void check_enum(tp_podv *v, const cJSON *c, const char *member, const char *const *ok,
		       const char *supported)
{
	const char *s = tp__mstr(c, member);
	if (!s || !*s)
		return;
	for (; *ok; ok++)
		if (!strcmp(s, *ok))
			return;
	tp__podv_add(v, TP_FIELD_UNSUPPORTED, tp__podv_printf(v, ".%s", member),
		     tp__podv_quote(v, s), NULL, "supported values: %s", supported);
}

static void check_name(tp_podv *v, const char *name)
{
	if (!name || !*name) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the container", "%s", "");
		return;
	}
	tp__pod_dns_label(v, ".name", name, NAME_HINT);
}

/* validateContainerCommon. */
static void check_common(tp_podv *v, const cJSON *c, const tp_nameset *volumes)
{
	static const char *const tmp[] = { "File", "FallbackToLogsOnError", NULL };
	static const char *const pull[] = { "Always", "IfNotPresent", "Never", NULL };
	const char *image = tp__mstr(c, "image");
	check_name(v, tp__mstr(c, "name"));
	if (!image || !*image)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".image", NULL, "give the container an image", "%s",
			     "");
	check_enum(v, c, "terminationMessagePolicy", tmp, "\"File\", \"FallbackToLogsOnError\"");
	tp__pod_check_ports(v, tp_member(c, "ports"));
	tp__pod_check_env(v, tp_member(c, "env"));
	tp__pod_check_env_from(v, tp_member(c, "envFrom"));
	tp__pod_check_mounts(v, tp_member(c, "volumeMounts"), volumes);
	check_enum(v, c, "imagePullPolicy", pull, "\"Always\", \"IfNotPresent\", \"Never\"");
	const cJSON *res = tp__mobj(c, "resources");
	if (res) {
		size_t mark = tp__podv_push(v, ".resources");
		tp__pod_check_resources(v, res);
		tp__podv_pop(v, mark);
	}
	tp__pod_check_security_context(v, tp_member(c, "securityContext"));
}

static bool present(const cJSON *c, const char *member)
{
	const cJSON *m = tp_member(c, member);
	return m && !cJSON_IsNull(m);
}

/* The name against those seen before: regular containers against each
 * other, init containers against all. */
static void check_unique(tp_podv *v, tp_nameset *seen, const char *name)
{
	if (!name)
		name = "";
	if (tp__nameset_has(seen, name))
		tp__podv_add(v, TP_FIELD_DUPLICATE, ".name", tp__podv_quote(v, name),
			     "give each container and init container of the Pod its own name", "%s",
			     "");
	else if (*name && tp__nameset_add(seen, name))
		v->rc = TP_ENOMEM;
}

static void check_regular(tp_podv *v, const cJSON *c, int i, const tp_nameset *volumes,
			  tp_nameset *seen)
{
	size_t mark = tp__podv_push_index(v, ".containers", i);
	const char *name = tp__mstr(c, "name");
	enter(v, TP_POD_CONTAINERS, name);
	check_common(v, c, volumes);
	/* regular containers: "" is a name like any other for uniqueness */
	if (tp__nameset_has(seen, name ? name : ""))
		tp__podv_add(v, TP_FIELD_DUPLICATE, ".name", tp__podv_quote(v, name ? name : ""),
			     "give each container of the Pod its own name", "%s", "");
	else if (tp__nameset_add(seen, name ? name : ""))
		v->rc = TP_ENOMEM;
	if (present(c, "restartPolicy"))
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".restartPolicy", NULL,
			     "set restartPolicy on init containers only",
			     "may not be set for non-init containers");
	leave(v);
	tp__podv_pop(v, mark);
}

static void check_init(tp_podv *v, const cJSON *c, int i, const tp_nameset *volumes,
		       tp_nameset *seen)
{
	static const char *const only_always[] = { "lifecycle", "livenessProbe", "readinessProbe",
						   "startupProbe" };
	size_t mark = tp__podv_push_index(v, ".initContainers", i);
	const char *name = tp__mstr(c, "name");
	enter(v, TP_POD_INIT, name);
	check_common(v, c, volumes);
	bool always = false;
	const char *rp = tp__mstr(c, "restartPolicy");
	if (rp) {
		always = !strcmp(rp, "Always");
		if (!always)
			tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".restartPolicy", tp__podv_quote(v, rp),
				     NULL, "supported values: \"Always\"");
	}
	check_unique(v, seen, name);
	for (int k = 0; !always && k < 4; k++)
		if (present(c, only_always[k]))
			tp__podv_add(v, TP_FIELD_FORBIDDEN, tp__podv_printf(v, ".%s", only_always[k]),
				     NULL,
				     "drop it, or make the init container a sidecar "
				     "(restartPolicy: Always)",
				     INIT_ONLY);
	leave(v);
	tp__podv_pop(v, mark);
}

int tp__pod_check_containers(tp_podv *v, const cJSON *spec, const tp_nameset *volumes)
{
	const cJSON *cs = tp__marr(spec, "containers");
	tp_nameset regular, all;
	tp__nameset_init(&regular, v->arena);
	tp__nameset_init(&all, v->arena);
	if (!cs || !cs->child)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".containers", NULL,
			     "give the Pod template at least one container", "%s", "");
	int i = 0;
	for (const cJSON *c = cs ? cs->child : NULL; c; c = c->next, i++) {
		check_regular(v, c, i, volumes, &regular);
		const char *name = tp__mstr(c, "name");
		if (name && tp__nameset_add(&all, name))
			v->rc = TP_ENOMEM;
	}
	const cJSON *init = tp__marr(spec, "initContainers");
	i = 0;
	for (const cJSON *c = init ? init->child : NULL; c; c = c->next, i++)
		check_init(v, c, i, volumes, &all);
	return v->rc;
}

/*
 * pod/pod_os.c — spec.os as kube-apiserver checks it (pkg/apis/core/
 * validation validateOS, validateLinux and validateWindows, v1.32): a name,
 * linux or windows; a linux Pod sets no windowsOptions, a windows Pod none
 * of the Linux-only fields, in its securityContext or any container's
 * (init containers first, as upstream visits them). The fields the gates
 * off by default in v1.32 drop before validation (hostUsers,
 * supplementalGroupsPolicy, seLinuxChangePolicy) never reach the rule; a
 * container's procMount does, set to Default, whenever it is written.
 */
#include "policy/pod/members.h"

#include <string.h>

#define WINDOWS "cannot be set for a windows pod"
#define WINDOWS_HINT "drop it, or run the Pod on Linux (os.name: linux)"
#define LINUX "windows options cannot be set for a linux pod"
#define LINUX_HINT "drop windowsOptions, or run the Pod on Windows (os.name: windows)"

void tp__podv_enter(tp_podv *v, tp_pod_list list, const char *name)
{
	v->list = list;
	v->container = name;
	v->container_len = v->len;
}

void tp__podv_leave(tp_podv *v)
{
	v->list = TP_POD_NONE;
	v->container = NULL;
	v->container_len = 0;
}

static bool set(const cJSON *obj, const char *member)
{
	const cJSON *m = tp_member(obj, member);
	return m && !cJSON_IsNull(m);
}

/* Each member of obj in names that is set: Forbidden at "." + member. */
static void forbid_set(tp_podv *v, const cJSON *obj, const char *const *names, size_t n,
		       const char *detail, const char *hint)
{
	for (size_t i = 0; i < n; i++)
		if (set(obj, names[i]))
			tp__podv_add(v, TP_FIELD_FORBIDDEN, tp__podv_printf(v, ".%s", names[i]), NULL,
				     hint, "%s", detail);
}

typedef void (*container_rule)(tp_podv *v, const cJSON *sc);

/* The rule on each container's securityContext, init containers first. */
static void each_container(tp_podv *v, const cJSON *spec, container_rule rule)
{
	static const char *const lists[] = { "initContainers", "containers" };
	for (int k = 0; k < 2; k++) {
		const cJSON *cs = tp__marr(spec, lists[k]);
		int i = 0;
		for (const cJSON *c = cs ? cs->child : NULL; c; c = c->next, i++) {
			const cJSON *sc = tp__mobj(c, "securityContext");
			if (!sc)
				continue;
			size_t mark = tp__podv_push_index(v, k ? ".containers" : ".initContainers", i);
			tp__podv_enter(v, k ? TP_POD_CONTAINERS : TP_POD_INIT, tp__mstr(c, "name"));
			tp__podv_push(v, ".securityContext");
			rule(v, sc);
			tp__podv_leave(v);
			tp__podv_pop(v, mark);
		}
	}
}

static void linux_container(tp_podv *v, const cJSON *sc)
{
	static const char *const windows_only[] = { "windowsOptions" };
	forbid_set(v, sc, windows_only, 1, LINUX, LINUX_HINT);
}

static void windows_container(tp_podv *v, const cJSON *sc)
{
	static const char *const linux_only[] = {
		"appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities",
		"readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation", "procMount",
		"runAsUser", "runAsGroup",
	};
	forbid_set(v, sc, linux_only, sizeof(linux_only) / sizeof(linux_only[0]), WINDOWS,
		   WINDOWS_HINT);
}

static void check_linux(tp_podv *v, const cJSON *spec)
{
	size_t mark = tp__podv_push(v, ".securityContext");
	linux_container(v, tp__mobj(spec, "securityContext"));
	tp__podv_pop(v, mark);
	each_container(v, spec, linux_container);
}

static void check_windows(tp_podv *v, const cJSON *spec)
{
	static const char *const pod_sc[] = { "appArmorProfile", "seLinuxOptions" };
	static const char *const pod_sc2[] = { "seccompProfile", "fsGroup", "fsGroupChangePolicy" };
	static const char *const pod_sc3[] = { "runAsUser", "runAsGroup", "supplementalGroups" };
	const cJSON *sc = tp__mobj(spec, "securityContext");
	size_t mark = tp__podv_push(v, ".securityContext");
	forbid_set(v, sc, pod_sc, 2, WINDOWS, WINDOWS_HINT);
	tp__podv_pop(v, mark);
	/* upstream's order: the host namespaces (kept in the internal
	 * securityContext, named at the spec) between the others */
	if (cJSON_IsTrue(tp_member(spec, "hostPID")))
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".hostPID", NULL, WINDOWS_HINT, WINDOWS);
	if (cJSON_IsTrue(tp_member(spec, "hostIPC")))
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".hostIPC", NULL, WINDOWS_HINT, WINDOWS);
	mark = tp__podv_push(v, ".securityContext");
	forbid_set(v, sc, pod_sc2, 3, WINDOWS, WINDOWS_HINT);
	const cJSON *sysctls = tp__marr(sc, "sysctls");
	if (sysctls && sysctls->child)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".sysctls", NULL, WINDOWS_HINT, WINDOWS);
	tp__podv_pop(v, mark);
	if (set(spec, "shareProcessNamespace"))
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".shareProcessNamespace", NULL, WINDOWS_HINT,
			     WINDOWS);
	mark = tp__podv_push(v, ".securityContext");
	forbid_set(v, sc, pod_sc3, 3, WINDOWS, WINDOWS_HINT);
	tp__podv_pop(v, mark);
	each_container(v, spec, windows_container);
}

int tp__pod_check_os(tp_podv *v, const tp_pod_sm *s)
{
	const cJSON *spec = s->self;
	const cJSON *os = tp__vobj(s->os);
	if (!os)
		return v->rc;
	const char *name = tp__mstr(os, "name");
	if (!name || !*name)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".os.name", NULL, "set os.name to linux or windows",
			     "cannot be empty");
	else if (!strcmp(name, "linux"))
		check_linux(v, spec);
	else if (!strcmp(name, "windows"))
		check_windows(v, spec);
	else
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".os", tp__podv_quote(v, name), NULL,
			     "supported values: \"linux\", \"windows\"");
	return v->rc;
}

/*
 * pod/pod_security_context.c — the Pod's securityContext as kube-apiserver
 * checks it (pkg/apis/core/validation validatePodSpecSecurityContext,
 * validateSysctls, ValidateHostSysctl, validateFSGroupChangePolicy,
 * validateSeccompProfileField, validateWindowsSecurityContextOptions
 * (pod/windows.c), ValidateAppArmorProfileField and
 * validatePodHostNetworkDeps, v1.32). The API server's internal Pod keeps
 * hostNetwork, hostPID, hostIPC and shareProcessNamespace inside the
 * securityContext, so the rules that join them are here, with upstream's
 * paths: "securityContext.shareProcessNamespace" though a manifest writes
 * spec.shareProcessNamespace. These rules hold in every namespace, whatever
 * Pod Security says. Left out: what the gates off by default in v1.32
 * drop before validation (hostUsers, supplementalGroupsPolicy,
 * seLinuxChangePolicy).
 */
#include "policy/pod/members.h"

#include <string.h>

#define ID_RANGE "must be between 0 and 2147483647, inclusive"
#define ID_MAX 2147483647LL
#define SYSCTL_MAX 253
#define SYSCTL_REGEX "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
#define PROFILE_TYPES "supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\""
#define APPARMOR_PATH_MAX 4095

/* IsValidUserID / IsValidGroupID. */
static void check_id(tp_podv *v, const char *suffix, const cJSON *n)
{
	long long id;
	if (n && tp_json_is_int(n, &id) && (id < 0 || id > ID_MAX))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_int(v, id),
			     "use an ID from 0 to 2147483647", ID_RANGE);
}

static void check_ids(tp_podv *v, const cJSON *sc)
{
	check_id(v, ".fsGroup", tp_member(sc, "fsGroup"));
	check_id(v, ".runAsUser", tp_member(sc, "runAsUser"));
	check_id(v, ".runAsGroup", tp_member(sc, "runAsGroup"));
	const cJSON *groups = tp__marr(sc, "supplementalGroups");
	int i = 0;
	for (const cJSON *g = groups ? groups->child : NULL; g; g = g->next, i++) {
		size_t mark = tp__podv_push_index(v, ".supplementalGroups", i);
		check_id(v, NULL, g);
		tp__podv_pop(v, mark);
	}
}

/* ------------------------------------------------------------ sysctls */

static bool sysctl_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static bool sysctl_end(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* IsValidSysctlName: segments of [a-z0-9]([-_a-z0-9]*[a-z0-9])? joined by
 * '.' or '/', 253 characters at most. */
static bool sysctl_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > SYSCTL_MAX)
		return false;
	for (const char *seg = s;;) {
		size_t len = strcspn(seg, "./");
		if (!len || !sysctl_end(seg[0]) || !sysctl_end(seg[len - 1]))
			return false;
		for (size_t i = 0; i < len; i++)
			if (!sysctl_char(seg[i]))
				return false;
		if (!seg[len])
			return true;
		seg += len + 1;
	}
}

typedef enum { NS_NONE, NS_NET, NS_IPC } sysctl_ns;

/* component-helpers' GetNamespace (the v1.32 one): the name with '.' as
 * separator (a name whose first separator is '/' has '.' and '/'
 * swapped), up to a '*', then the IPC names, or the net. and fs.mqueue.
 * prefixes. */
static sysctl_ns sysctl_namespace(const char *name)
{
	static const char *const ipc[] = { "kernel.sem", "kernel.shmall", "kernel.shmmax",
					   "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.shm",
					   "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",
					   "kernel.msg" };
	char norm[SYSCTL_MAX + 1];
	size_t n = strcspn(name, "*");
	if (n > SYSCTL_MAX)
		return NS_NONE; /* no namespaced name is that long */
	size_t sep = strcspn(name, "./");
	bool swap = name[sep] == '/';
	for (size_t i = 0; i < n; i++)
		norm[i] = !swap ? name[i] : name[i] == '.' ? '/' : name[i] == '/' ? '.' : name[i];
	norm[n] = '\0';
	for (size_t i = 0; i < sizeof(ipc) / sizeof(ipc[0]); i++)
		if (!strcmp(norm, ipc[i]))
			return NS_IPC;
	if (!strncmp(norm, "net.", 4))
		return NS_NET;
	if (!strncmp(norm, "fs.mqueue.", 10))
		return NS_IPC;
	return NS_NONE;
}

static void check_host_sysctl(tp_podv *v, const tp_pod_sm *spec, const char *name)
{
	sysctl_ns ns = sysctl_namespace(name);
	if (ns == NS_NET && cJSON_IsTrue(spec->host_network))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, name),
			     "drop the sysctl: with hostNetwork it would change the node's network "
			     "stack", "may not be specified when 'hostNetwork' is true");
	else if (ns == NS_IPC && cJSON_IsTrue(spec->host_ipc))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, name),
			     "drop the sysctl: with hostIPC it would change the node's IPC namespace",
			     "may not be specified when 'hostIPC' is true");
}

static void check_sysctls(tp_podv *v, const tp_pod_sm *spec, const cJSON *list)
{
	tp_nameset seen;
	tp__nameset_init(&seen, v->arena);
	int i = 0;
	for (const cJSON *s = list ? list->child : NULL; s; s = s->next, i++) {
		const char *name = tp__mstr(s, "name");
		if (!name)
			name = "";
		size_t mark = tp__podv_push_index(v, ".sysctls", i);
		tp__podv_push(v, ".name");
		if (!*name)
			tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL, "name the sysctl", "%s", "");
		else if (!sysctl_name_ok(name))
			tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, name),
				     "write a sysctl name such as net.core.somaxconn",
				     "must have at most %d characters and match regex %s", SYSCTL_MAX,
				     SYSCTL_REGEX);
		else if (tp__nameset_has(&seen, name))
			tp__podv_add(v, TP_FIELD_DUPLICATE, NULL, tp__podv_quote(v, name),
				     "set each sysctl once", "%s", "");
		check_host_sysctl(v, spec, name);
		if (tp__nameset_add(&seen, name))
			v->rc = TP_ENOMEM;
		tp__podv_pop(v, mark);
	}
}

/* ----------------------------------------------------------- profiles */

/* validateLocalDescendingPath. */
static void check_descending(tp_podv *v, const char *suffix, const char *p)
{
	if (*p == '/')
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, p),
			     "write the profile's path relative to the kubelet's seccomp directory",
			     "must be a relative path");
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/')) {
			tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, p),
				     "write the path without '..'", "must not contain '..'");
			break;
		}
}

int tp__pod_check_seccomp_profile(tp_podv *v, const cJSON *sp)
{
	if (!cJSON_IsObject(sp))
		return v->rc;
	size_t mark = tp__podv_push(v, ".seccompProfile");
	const char *type = tp__mstr(sp, "type");
	const cJSON *local = tp_member(sp, "localhostProfile");
	bool has_local = local && !cJSON_IsNull(local);
	if (!type || !*type)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".type", NULL,
			     "set type RuntimeDefault, Localhost or Unconfined",
			     "type is required when seccompProfile is set");
	else if (strcmp(type, "Localhost") && strcmp(type, "RuntimeDefault") &&
		 strcmp(type, "Unconfined"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".type", tp__podv_quote(v, type), NULL,
			     PROFILE_TYPES);
	if (type && !strcmp(type, "Localhost")) {
		if (!has_local)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".localhostProfile", NULL,
				     "name the profile file on the node (\"profiles/train.json\")",
				     "must be set when seccomp type is Localhost");
		else if (cJSON_IsString(local))
			check_descending(v, ".localhostProfile", local->valuestring);
	} else if (has_local) {
		tp__podv_add(v, TP_FIELD_INVALID, ".localhostProfile", tp__podv_json(v, sp),
			     "drop localhostProfile, or use type Localhost",
			     "can only be set when seccomp type is Localhost");
	}
	tp__podv_pop(v, mark);
	return v->rc;
}

static bool space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void check_apparmor_localhost(tp_podv *v, const cJSON *local)
{
	static const char hint[] = "name the AppArmor profile loaded on the node";
	if (!local || cJSON_IsNull(local)) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".localhostProfile", NULL, hint,
			     "must be set when AppArmor type is Localhost");
		return;
	}
	const char *p = cJSON_IsString(local) ? local->valuestring : "";
	size_t n = strlen(p);
	if (n && (space(p[0]) || space(p[n - 1])))
		tp__podv_add(v, TP_FIELD_INVALID, ".localhostProfile", tp__podv_quote(v, p),
			     "write the profile name without surrounding spaces",
			     "must not be padded with whitespace");
	else if (!n)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".localhostProfile", NULL, hint,
			     "must be set when AppArmor type is Localhost");
	if (n > APPARMOR_PATH_MAX)
		tp__podv_add(v, TP_FIELD_TOO_LONG, ".localhostProfile", NULL,
			     "use a profile name of at most 4095 bytes", "may not be more than %d bytes",
			     APPARMOR_PATH_MAX);
}

int tp__pod_check_apparmor_profile(tp_podv *v, const cJSON *ap)
{
	if (!cJSON_IsObject(ap))
		return v->rc;
	size_t mark = tp__podv_push(v, ".appArmorProfile");
	const char *type = tp__mstr(ap, "type");
	const cJSON *local = tp_member(ap, "localhostProfile");
	if (type && !strcmp(type, "Localhost")) {
		check_apparmor_localhost(v, local);
	} else if (type && (!strcmp(type, "RuntimeDefault") || !strcmp(type, "Unconfined"))) {
		if (local && !cJSON_IsNull(local))
			tp__podv_add(v, TP_FIELD_INVALID, ".localhostProfile",
				     cJSON_IsString(local) ? tp__podv_quote(v, local->valuestring)
							   : "null",
				     "drop localhostProfile, or use type Localhost",
				     "can only be set when AppArmor type is Localhost");
	} else if (!type || !*type) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".type", NULL,
			     "set type RuntimeDefault, Localhost or Unconfined",
			     "type is required when appArmorProfile is set");
	} else {
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".type", tp__podv_quote(v, type), NULL,
			     PROFILE_TYPES);
	}
	tp__podv_pop(v, mark);
	return v->rc;
}

/* ------------------------------------------------------------- the Pod */

static void check_fs_group_change(tp_podv *v, const cJSON *sc)
{
	const cJSON *p = tp_member(sc, "fsGroupChangePolicy");
	if (!cJSON_IsString(p) || !strcmp(p->valuestring, "OnRootMismatch") ||
	    !strcmp(p->valuestring, "Always"))
		return;
	tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".fsGroupChangePolicy",
		     tp__podv_quote(v, p->valuestring), NULL,
		     "supported values: \"Always\", \"OnRootMismatch\"");
}

/* validatePodHostNetworkDeps for a template: a hostPort, when given, is the
 * containerPort (the Pod's defaulting fills in the ones left out). */
static void check_host_network_ports(tp_podv *v, const tp_pod_sm *spec)
{
	if (!cJSON_IsTrue(spec->host_network))
		return;
	const cJSON *cs = tp__varr(spec->containers);
	int i = 0;
	for (const cJSON *c = cs ? cs->child : NULL; c; c = c->next, i++) {
		const cJSON *ports = tp__marr(c, "ports");
		int j = 0;
		for (const cJSON *p = ports ? ports->child : NULL; p; p = p->next, j++) {
			long long hp = 0, cp = 0;
			tp__mint(p, "containerPort", &cp);
			if (!tp__mint(p, "hostPort", &hp) || !hp || hp == cp)
				continue;
			size_t mark = tp__podv_push_index(v, ".containers", i);
			tp__podv_enter(v, TP_POD_CONTAINERS, tp__mstr(c, "name"));
			tp__podv_push_index(v, ".ports", j);
			tp__podv_add(v, TP_FIELD_INVALID, ".hostPort", tp__podv_int(v, hp),
				     tp__podv_printf(v, "drop hostPort, or set it to %lld: with "
							"hostNetwork the container listens on the "
							"node", cp),
				     "must match `containerPort` when `hostNetwork` is true");
			tp__podv_leave(v);
			tp__podv_pop(v, mark);
		}
	}
}

int tp__pod_check_pod_security_context(tp_podv *v, const tp_pod_sm *spec)
{
	check_host_network_ports(v, spec);
	const cJSON *sc = tp__vobj(spec->security_context);
	size_t mark = tp__podv_push(v, ".securityContext");
	check_ids(v, sc);
	if (cJSON_IsTrue(spec->share_process_namespace) && cJSON_IsTrue(spec->host_pid))
		tp__podv_add(v, TP_FIELD_INVALID, ".shareProcessNamespace", "true",
			     "drop shareProcessNamespace or hostPID: a Pod shares the node's "
			     "processes or its own, not both",
			     "ShareProcessNamespace and HostPID cannot both be enabled");
	check_sysctls(v, spec, tp__marr(sc, "sysctls"));
	check_fs_group_change(v, sc);
	tp__pod_check_seccomp_profile(v, tp_member(sc, "seccompProfile"));
	tp__pod_check_windows_options(v, tp_member(sc, "windowsOptions"));
	tp__pod_check_apparmor_profile(v, tp_member(sc, "appArmorProfile"));
	tp__podv_pop(v, mark);
	return v->rc;
}

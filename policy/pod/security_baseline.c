/*
 * pod/security_baseline.c — the baseline checks of
 * k8s.io/pod-security-admission/policy (v1.32 check_*.go): reasons and
 * details are upstream's, plurals and quoting included. Where v1.26
 * differs: its sysctls check had the v1.0 list only, its seLinuxOptions
 * check no container_engine_t (v1.31), and its appArmorProfile check read
 * the annotations only (the fields came with v1.30).
 */
#include "policy/pod/psa.h"

#include <stdlib.h>

static bool allowed_apparmor_type(const char *t)
{
	return t && (!strcmp(t, "RuntimeDefault") || !strcmp(t, "Localhost"));
}

bool tp__psa_app_armor(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs setters = { 0 }, values = { 0 }, bad = { 0 }, annots = { 0 };
	const cJSON *pp = tp_get_object(tp__psa_sc(c->spec), "appArmorProfile");
	if (pp && !allowed_apparmor_type(tp__mstr(pp, "type"))) {
		tp__psa_add(c, &setters, "pod");
		tp__psa_add(c, &values, tp__mstr(pp, "type"));
	}
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *p = tp_get_object(tp__psa_sc(c->containers[i]), "appArmorProfile");
		if (p && !allowed_apparmor_type(tp__mstr(p, "type"))) {
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
			tp__psa_add(c, &values, tp__mstr(p, "type"));
		}
	}
	if (bad.n)
		tp__psa_add(c, &setters, tp__psa_containers(c, &bad));
	static const char prefix[] = "container.apparmor.security.beta.kubernetes.io/";
	const cJSON *an = tp__mobj(c->meta, "annotations");
	for (const cJSON *a = an ? an->child : NULL; a; a = a->next) {
		const char *v = cJSON_IsString(a) ? a->valuestring : "";
		if (strncmp(a->string, prefix, sizeof(prefix) - 1) || !*v ||
		    !strcmp(v, "runtime/default") || !strncmp(v, "localhost/", 10))
			continue;
		tp__psa_add(c, &annots, tp__psa_fmt(c, "%s=\"%s\"", a->string, v));
	}
	tp__psa_sort_unique(&values);
	if (annots.n) {
		qsort(annots.v, annots.n, sizeof(*annots.v), tp__psa_cmp);
		for (size_t i = 0; i < annots.n; i++)
			tp__psa_add(c, &values, annots.v[i]);
		tp__psa_add(c, &setters, tp__psa_plural("annotation", "annotations", annots.n));
	}
	if (!setters.n)
		return true;
	return tp__psa_forbid(out, tp__psa_plural("forbidden AppArmor profile", "forbidden AppArmor profiles",
				  values.n),
		      tp__psa_fmt(c, "%s must not set AppArmor profile type to %s",
			  tp__psa_join(c, &setters, " and ", false), tp__psa_jq(c, &values)));
}

bool tp__psa_capabilities_baseline(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	static const char *const allowed[] = { "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER",
					       "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
					       "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
					       NULL };
	strs bad = { 0 }, caps = { 0 };
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *addl = tp_get_array(tp__psa_sc(c->containers[i]), "capabilities.add");
		bool ok = true;
		for (const cJSON *x = addl ? addl->child : NULL; x; x = x->next) {
			const char *cap = cJSON_IsString(x) ? x->valuestring : "";
			if (!tp__psa_in_list(cap, allowed)) {
				ok = false;
				tp__psa_add(c, &caps, cap);
			}
		}
		if (!ok)
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
	}
	if (!bad.n)
		return true;
	tp__psa_sort_unique(&caps);
	return tp__psa_forbid(out, "non-default capabilities",
		      tp__psa_fmt(c, "%s must not include %s in securityContext.capabilities.add",
			  tp__psa_containers(c, &bad), tp__psa_jq(c, &caps)));
}

bool tp__psa_host_namespaces(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs ns = { 0 };
	static const char *const keys[] = { "hostNetwork", "hostPID", "hostIPC" };
	for (int k = 0; k < 3; k++)
		if (cJSON_IsTrue(tp_member(c->spec, keys[k])))
			tp__psa_add(c, &ns, tp__psa_fmt(c, "%s=true", keys[k]));
	if (!ns.n)
		return true;
	return tp__psa_forbid(out, "host namespaces", tp__psa_join(c, &ns, ", ", false));
}

bool tp__psa_host_path_volumes(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs bad = { 0 };
	const cJSON *vols = tp__marr(c->spec, "volumes");
	for (const cJSON *v = vols ? vols->child : NULL; v; v = v->next)
		if (tp__mobj(v, "hostPath"))
			tp__psa_add(c, &bad, tp__mstr(v, "name"));
	if (!bad.n)
		return true;
	return tp__psa_forbid(out, "hostPath volumes",
		      tp__psa_fmt(c, "%s %s", tp__psa_plural("volume", "volumes", bad.n), tp__psa_jq(c, &bad)));
}

bool tp__psa_host_ports(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs bad = { 0 }, ports = { 0 };
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *ps = tp__marr(c->containers[i], "ports");
		bool ok = true;
		for (const cJSON *p = ps ? ps->child : NULL; p; p = p->next) {
			long long hp;
			if (tp__mint(p, "hostPort", &hp) && hp != 0) {
				ok = false;
				tp__psa_add(c, &ports, tp__psa_fmt(c, "%lld", hp));
			}
		}
		if (!ok)
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
	}
	if (!bad.n)
		return true;
	tp__psa_sort_unique(&ports);
	return tp__psa_forbid(out, "hostPort",
		      tp__psa_fmt(c, "%s %s %s %s", tp__psa_containers(c, &bad),
			  tp__psa_plural("uses", "use", bad.n), tp__psa_plural("hostPort", "hostPorts", ports.n),
			  tp__psa_join(c, &ports, ", ", false)));
}

bool tp__psa_privileged(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs bad = { 0 };
	for (size_t i = 0; i < c->ncontainers; i++)
		if (cJSON_IsTrue(tp_member(tp__psa_sc(c->containers[i]), "privileged")))
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
	if (!bad.n)
		return true;
	return tp__psa_forbid(out, "privileged",
		      tp__psa_fmt(c, "%s must not set securityContext.privileged=true",
			  tp__psa_containers(c, &bad)));
}

bool tp__psa_proc_mount(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs bad = { 0 }, types = { 0 };
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *pm = tp_member(tp__psa_sc(c->containers[i]), "procMount");
		if (!cJSON_IsString(pm) || !strcmp(pm->valuestring, "Default"))
			continue;
		tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
		tp__psa_add(c, &types, pm->valuestring);
	}
	if (!bad.n)
		return true;
	tp__psa_sort_unique(&types);
	return tp__psa_forbid(out, "procMount",
		      tp__psa_fmt(c, "%s must not set securityContext.procMount to %s",
			  tp__psa_containers(c, &bad), tp__psa_jq(c, &types)));
}

/* variant 0: v1.0's types; 1: v1.31 adds container_engine_t. */
static bool selinux_ok(psa_ctx *c, const cJSON *o, int variant, strs *types, bool *user,
		       bool *role)
{
	static const char *const t10[] = { "", "container_t", "container_init_t",
					   "container_kvm_t", NULL };
	const char *t = tp__mstr(o, "type");
	const char *u = tp__mstr(o, "user"), *r = tp__mstr(o, "role");
	bool ok = true;
	if (!t)
		t = "";
	if (!tp__psa_in_list(t, t10) && !(variant == 1 && !strcmp(t, "container_engine_t"))) {
		ok = false;
		tp__psa_add(c, types, t);
	}
	if (u && *u) {
		ok = false;
		*user = true;
	}
	if (r && *r) {
		ok = false;
		*role = true;
	}
	return ok;
}

bool tp__psa_se_linux(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	strs setters = { 0 }, bad = { 0 }, types = { 0 }, data = { 0 };
	bool user = false, role = false;
	const cJSON *po = tp_get_object(tp__psa_sc(c->spec), "seLinuxOptions");
	if (po && !selinux_ok(c, po, variant, &types, &user, &role))
		tp__psa_add(c, &setters, "pod");
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *o = tp_get_object(tp__psa_sc(c->containers[i]), "seLinuxOptions");
		if (o && !selinux_ok(c, o, variant, &types, &user, &role))
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
	}
	if (bad.n)
		tp__psa_add(c, &setters, tp__psa_containers(c, &bad));
	if (!setters.n)
		return true;
	tp__psa_sort_unique(&types);
	if (types.n)
		tp__psa_add(c, &data, tp__psa_fmt(c, "%s %s", tp__psa_plural("type", "types", types.n), tp__psa_jq(c, &types)));
	if (user)
		tp__psa_add(c, &data, "user may not be set");
	if (role)
		tp__psa_add(c, &data, "role may not be set");
	return tp__psa_forbid(out, "seLinuxOptions",
		      tp__psa_fmt(c, "%s set forbidden securityContext.seLinuxOptions: %s",
			  tp__psa_join(c, &setters, " and ", false), tp__psa_join(c, &data, "; ", false)));
}

static bool seccomp_valid(const cJSON *profile)
{
	const char *t = tp__mstr(profile, "type");
	return t && (!strcmp(t, "Localhost") || !strcmp(t, "RuntimeDefault"));
}

static bool seccomp_annotation_ok(const char *v)
{
	return !strcmp(v, "runtime/default") || !strcmp(v, "docker/default") ||
	       !strncmp(v, "localhost/", 10);
}

/* v1.0: the annotations. */
static bool seccomp_annotations(psa_ctx *c, tp_psa_verdict *out)
{
	static const char pod_key[] = "seccomp.security.alpha.kubernetes.io/pod";
	strs bad = { 0 };
	const cJSON *an = tp__mobj(c->meta, "annotations");
	const cJSON *p = tp_member(an, pod_key);
	if (cJSON_IsString(p) && !seccomp_annotation_ok(p->valuestring))
		tp__psa_add(c, &bad, tp__psa_fmt(c, "%s=\"%s\"", pod_key, p->valuestring));
	for (size_t i = 0; i < c->ncontainers; i++) {
		const char *key = tp__psa_fmt(c, "container.seccomp.security.alpha.kubernetes.io/%s",
				      tp__psa_name(c->containers[i]));
		const cJSON *cv = tp_member(an, key);
		if (cJSON_IsString(cv) && !seccomp_annotation_ok(cv->valuestring))
			tp__psa_add(c, &bad, tp__psa_fmt(c, "%s=\"%s\"", key, cv->valuestring));
	}
	if (!bad.n)
		return true;
	tp__psa_sort_unique(&bad);
	return tp__psa_forbid(out, "seccompProfile",
		      tp__psa_fmt(c, "forbidden %s %s", tp__psa_plural("annotation", "annotations", bad.n),
			  tp__psa_join(c, &bad, ", ", false)));
}

/* The explicit settings of the field checks (v1.19 on); *pod_set when the
 * pod sets a valid profile, *implicit the containers that set none. */
void tp__psa_seccomp_fields(psa_ctx *c, strs *setters, strs *values, strs *implicit)
{
	strs bad = { 0 };
	bool pod_set = false;
	const cJSON *pp = tp_get_object(tp__psa_sc(c->spec), "seccompProfile");
	if (pp && !seccomp_valid(pp)) {
		tp__psa_add(c, setters, "pod");
		tp__psa_add(c, values, tp__mstr(pp, "type"));
	} else if (pp) {
		pod_set = true;
	}
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *p = tp_get_object(tp__psa_sc(c->containers[i]), "seccompProfile");
		if (p && !seccomp_valid(p)) {
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
			tp__psa_add(c, values, tp__mstr(p, "type"));
		} else if (!p && !pod_set && implicit) {
			tp__psa_add(c, implicit, tp__psa_name(c->containers[i]));
		}
	}
	if (bad.n)
		tp__psa_add(c, setters, tp__psa_containers(c, &bad));
	tp__psa_sort_unique(values);
}

bool tp__psa_seccomp_baseline(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	if (variant == 0)
		return seccomp_annotations(c, out);
	strs setters = { 0 }, values = { 0 };
	tp__psa_seccomp_fields(c, &setters, &values, NULL);
	if (!setters.n)
		return true;
	return tp__psa_forbid(out, "seccompProfile",
		      tp__psa_fmt(c, "%s must not set securityContext.seccompProfile.type to %s",
			  tp__psa_join(c, &setters, " and ", false), tp__psa_jq(c, &values)));
}

/* variant: 0 v1.0, 1 v1.27, 2 v1.29, 3 v1.32 (each adds to the one before). */
bool tp__psa_sysctls(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	static const char *const lists[4][6] = {
		{ "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
		  "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
		  "net.ipv4.ip_unprivileged_port_start", NULL },
		{ "net.ipv4.ip_local_reserved_ports", NULL },
		{ "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
		  "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", NULL },
		{ "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", NULL },
	};
	strs bad = { 0 };
	const cJSON *list = tp_get_array(tp__psa_sc(c->spec), "sysctls");
	for (const cJSON *s = list ? list->child : NULL; s; s = s->next) {
		const char *name = tp__mstr(s, "name");
		bool ok = false;
		for (int k = 0; !ok && k <= variant; k++)
			ok = tp__psa_in_list(name ? name : "", lists[k]);
		if (!ok)
			tp__psa_add(c, &bad, name);
	}
	if (!bad.n)
		return true;
	return tp__psa_forbid(out, "forbidden sysctls", tp__psa_join(c, &bad, ", ", false));
}

bool tp__psa_windows_host_process(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs setters = { 0 }, bad = { 0 };
	for (size_t i = 0; i < c->ncontainers; i++)
		if (tp_get_true(tp__psa_sc(c->containers[i]), "windowsOptions.hostProcess"))
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
	if (tp_get_true(tp__psa_sc(c->spec), "windowsOptions.hostProcess"))
		tp__psa_add(c, &setters, "pod");
	if (bad.n)
		tp__psa_add(c, &setters, tp__psa_containers(c, &bad));
	if (!setters.n)
		return true;
	return tp__psa_forbid(out, "hostProcess",
		      tp__psa_fmt(c, "%s must not set securityContext.windowsOptions.hostProcess=true",
			  tp__psa_join(c, &setters, " and ", false)));
}


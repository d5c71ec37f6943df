/*
 * pod/security_restricted.c — the restricted checks of
 * k8s.io/pod-security-admission/policy (v1.32 check_*.go, the same in
 * v1.26): reasons and details are upstream's. From v1.25 a Pod with
 * spec.os.name windows is exempt from allowPrivilegeEscalation,
 * capabilities and seccompProfile.
 */
#include "policy/pod/psa.h"

bool tp__psa_allow_privilege_escalation(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	if (variant == 1 && tp__psa_windows(c))
		return true;
	strs bad = { 0 };
	for (size_t i = 0; i < c->ncontainers; i++)
		if (!cJSON_IsFalse(tp_member(tp__psa_sc(c->containers[i]), "allowPrivilegeEscalation")))
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
	if (!bad.n)
		return true;
	return tp__psa_forbid(out, "allowPrivilegeEscalation != false",
		      tp__psa_fmt(c, "%s must set securityContext.allowPrivilegeEscalation=false",
			  tp__psa_containers(c, &bad)));
}

bool tp__psa_capabilities_restricted(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	if (variant == 1 && tp__psa_windows(c))
		return true;
	strs missing = { 0 }, adding = { 0 }, caps = { 0 }, details = { 0 };
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *cap = tp_get_object(tp__psa_sc(c->containers[i]), "capabilities");
		const char *name = tp__psa_name(c->containers[i]);
		if (!cap) {
			tp__psa_add(c, &missing, name);
			continue;
		}
		bool dropped = false, forbidden = false;
		const cJSON *drop = tp__marr(cap, "drop"), *addl = tp__marr(cap, "add");
		for (const cJSON *x = drop ? drop->child : NULL; x && !dropped; x = x->next)
			dropped = cJSON_IsString(x) && !strcmp(x->valuestring, "ALL");
		if (!dropped)
			tp__psa_add(c, &missing, name);
		for (const cJSON *x = addl ? addl->child : NULL; x; x = x->next) {
			const char *s = cJSON_IsString(x) ? x->valuestring : "";
			if (strcmp(s, "NET_BIND_SERVICE")) {
				forbidden = true;
				tp__psa_add(c, &caps, s);
			}
		}
		if (forbidden)
			tp__psa_add(c, &adding, name);
	}
	if (missing.n)
		tp__psa_add(c, &details, tp__psa_fmt(c, "%s must set securityContext.capabilities.drop=[\"ALL\"]",
				     tp__psa_containers(c, &missing)));
	if (adding.n) {
		tp__psa_sort_unique(&caps);
		tp__psa_add(c, &details, tp__psa_fmt(c, "%s must not include %s in securityContext.capabilities.add",
				     tp__psa_containers(c, &adding), tp__psa_jq(c, &caps)));
	}
	if (!details.n)
		return true;
	return tp__psa_forbid(out, "unrestricted capabilities", tp__psa_join(c, &details, "; ", false));
}

bool tp__psa_restricted_volumes(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	static const char *const allowed[] = { "configMap", "csi", "downwardAPI", "emptyDir",
					       "ephemeral", "persistentVolumeClaim", "projected",
					       "secret", NULL };
	/* the switch's order: the first present names the type */
	static const char *const known[] = {
		"hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
		"glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
		"vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
		"scaleIO", "storageos", NULL };
	strs bad = { 0 }, types = { 0 };
	const cJSON *vols = tp__marr(c->spec, "volumes");
	for (const cJSON *v = vols ? vols->child : NULL; v; v = v->next) {
		bool ok = false;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = tp_get_object(v, *a) != NULL;
		if (ok)
			continue;
		tp__psa_add(c, &bad, tp__mstr(v, "name"));
		const char *type = "unknown";
		for (const char *const *k = known; *k; k++)
			if (tp_get_object(v, *k)) {
				type = *k;
				break;
			}
		tp__psa_add(c, &types, type);
	}
	if (!bad.n)
		return true;
	tp__psa_sort_unique(&types);
	return tp__psa_forbid(out, "restricted volume types",
		      tp__psa_fmt(c, "%s %s %s %s %s", tp__psa_plural("volume", "volumes", bad.n), tp__psa_jq(c, &bad),
			  tp__psa_plural("uses", "use", bad.n),
			  tp__psa_plural("restricted volume type", "restricted volume types", types.n),
			  tp__psa_jq(c, &types)));
}

bool tp__psa_run_as_non_root(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs setters = { 0 }, bad = { 0 }, implicit = { 0 };
	const cJSON *p = tp_member(tp__psa_sc(c->spec), "runAsNonRoot");
	bool pod_ok = cJSON_IsTrue(p);
	if (cJSON_IsFalse(p))
		tp__psa_add(c, &setters, "pod");
	for (size_t i = 0; i < c->ncontainers; i++) {
		const cJSON *v = tp_member(tp__psa_sc(c->containers[i]), "runAsNonRoot");
		if (cJSON_IsBool(v)) {
			if (cJSON_IsFalse(v))
				tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
		} else if (!pod_ok) {
			tp__psa_add(c, &implicit, tp__psa_name(c->containers[i]));
		}
	}
	if (bad.n)
		tp__psa_add(c, &setters, tp__psa_containers(c, &bad));
	if (setters.n)
		return tp__psa_forbid(out, "runAsNonRoot != true",
			      tp__psa_fmt(c, "%s must not set securityContext.runAsNonRoot=false",
				  tp__psa_join(c, &setters, " and ", false)));
	if (implicit.n)
		return tp__psa_forbid(out, "runAsNonRoot != true",
			      tp__psa_fmt(c, "pod or %s must set securityContext.runAsNonRoot=true",
				  tp__psa_containers(c, &implicit)));
	return true;
}

bool tp__psa_run_as_user(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	(void)variant;
	strs setters = { 0 }, bad = { 0 };
	long long uid;
	if (tp__mint(tp__psa_sc(c->spec), "runAsUser", &uid) && uid == 0)
		tp__psa_add(c, &setters, "pod");
	for (size_t i = 0; i < c->ncontainers; i++)
		if (tp__mint(tp__psa_sc(c->containers[i]), "runAsUser", &uid) && uid == 0)
			tp__psa_add(c, &bad, tp__psa_name(c->containers[i]));
	if (bad.n)
		tp__psa_add(c, &setters, tp__psa_containers(c, &bad));
	if (!setters.n)
		return true;
	return tp__psa_forbid(out, "runAsUser=0",
		      tp__psa_fmt(c, "%s must not set runAsUser=0", tp__psa_join(c, &setters, " and ", false)));
}

bool tp__psa_seccomp_restricted(psa_ctx *c, int variant, tp_psa_verdict *out)
{
	if (variant == 1 && tp__psa_windows(c))
		return true;
	strs setters = { 0 }, values = { 0 }, implicit = { 0 };
	tp__psa_seccomp_fields(c, &setters, &values, &implicit);
	if (setters.n)
		return tp__psa_forbid(out, "seccompProfile",
			      tp__psa_fmt(c, "%s must not set securityContext.seccompProfile.type to %s",
				  tp__psa_join(c, &setters, " and ", false), tp__psa_jq(c, &values)));
	if (implicit.n)
		return tp__psa_forbid(out, "seccompProfile",
			      tp__psa_fmt(c, "pod or %s must set securityContext.seccompProfile.type to "
				     "\"RuntimeDefault\" or \"Localhost\"",
				  tp__psa_containers(c, &implicit)));
	return true;
}


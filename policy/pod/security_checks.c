/*
 * pod/security_checks.c — the registry of k8s.io/pod-security-admission's
 * checks (pod/security_baseline.c, pod/security_restricted.c): each with the
 * versions it has, and the order and overrides its registry gives them
 * (registry.go): baseline checks sorted by
 * ID, then restricted ones; at the restricted level a restricted check
 * replaces the baseline check it overrides from its first version on.
 * Reasons and details are upstream's, plurals and quoting included.
 *
 * Versions: a pinned version newer than the newest check (v1.32) or
 * "latest" evaluates as v1.32. Where v1.26 differs: it stopped at v1.25
 * (no sysctls v1.27/v1.29/v1.32 lists, no seLinuxOptions container_engine_t
 * from v1.31), and its appArmorProfile check read the annotations only.
 * The user-namespace relaxation (feature gate UserNamespacesPodSecurity
 * Standards, off by default) is not applied.
 */
#include "policy/pod/psa.h"

#define MAX_MINOR 32

typedef struct check {
	const char *id;
	tp_psa_level level;
	tp__psa_check_fn fn;
	int versions[4]; /* the minor of each version's minimum, ascending (v1.0: 0) */
	int nversions;
	const char *overrides; /* the baseline check it replaces (restricted only) */
} check;

/* In pod-security-admission's order: baseline IDs sorted, then restricted. */
static const check checks[] = {
	{ "appArmorProfile", TP_PSA_BASELINE, tp__psa_app_armor, { 0 }, 1, NULL },
	{ "capabilities_baseline", TP_PSA_BASELINE, tp__psa_capabilities_baseline, { 0 }, 1, NULL },
	{ "hostNamespaces", TP_PSA_BASELINE, tp__psa_host_namespaces, { 0 }, 1, NULL },
	{ "hostPathVolumes", TP_PSA_BASELINE, tp__psa_host_path_volumes, { 0 }, 1, NULL },
	{ "hostPorts", TP_PSA_BASELINE, tp__psa_host_ports, { 0 }, 1, NULL },
	{ "privileged", TP_PSA_BASELINE, tp__psa_privileged, { 0 }, 1, NULL },
	{ "procMount", TP_PSA_BASELINE, tp__psa_proc_mount, { 0 }, 1, NULL },
	{ "seLinuxOptions", TP_PSA_BASELINE, tp__psa_se_linux, { 0, 31 }, 2, NULL },
	{ "seccompProfile_baseline", TP_PSA_BASELINE, tp__psa_seccomp_baseline, { 0, 19 }, 2, NULL },
	{ "sysctls", TP_PSA_BASELINE, tp__psa_sysctls, { 0, 27, 29, 32 }, 4, NULL },
	{ "windowsHostProcess", TP_PSA_BASELINE, tp__psa_windows_host_process, { 0 }, 1, NULL },
	{ "allowPrivilegeEscalation", TP_PSA_RESTRICTED, tp__psa_allow_privilege_escalation, { 8, 25 }, 2,
	  NULL },
	{ "capabilities_restricted", TP_PSA_RESTRICTED, tp__psa_capabilities_restricted, { 22, 25 }, 2,
	  "capabilities_baseline" },
	{ "restrictedVolumes", TP_PSA_RESTRICTED, tp__psa_restricted_volumes, { 0 }, 1,
	  "hostPathVolumes" },
	{ "runAsNonRoot", TP_PSA_RESTRICTED, tp__psa_run_as_non_root, { 0 }, 1, NULL },
	{ "runAsUser", TP_PSA_RESTRICTED, tp__psa_run_as_user, { 23 }, 1, NULL },
	{ "seccompProfile_restricted", TP_PSA_RESTRICTED, tp__psa_seccomp_restricted, { 19, 25 }, 2,
	  "seccompProfile_baseline" },
};

#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

/* The version of k that applies at minor: its index, or -1 (none yet). */
static int variant_at(const check *k, int minor)
{
	int v = -1;
	for (int i = 0; i < k->nversions; i++)
		if (k->versions[i] <= minor)
			v = i;
	return v;
}

static bool overridden(const char *id, tp_psa_level level, int minor)
{
	if (level != TP_PSA_RESTRICTED)
		return false;
	for (size_t i = 0; i < NCHECKS; i++)
		if (checks[i].overrides && !strcmp(checks[i].overrides, id) &&
		    variant_at(&checks[i], minor) >= 0)
			return true;
	return false;
}

int tp__psa_ctx_init(psa_ctx *c, const cJSON *meta, const cJSON *spec, tp_arena *a)
{
	*c = (psa_ctx){ .meta = meta, .spec = spec, .a = a };
	static const char *const lists[] = { "initContainers", "containers",
					     "ephemeralContainers" };
	size_t n = 0;
	for (int k = 0; k < 3; k++)
		n += (size_t)cJSON_GetArraySize(tp_get_array(c->spec, lists[k]));
	c->containers = tp_arena_alloc(c->a, (n ? n : 1) * sizeof(*c->containers));
	if (!c->containers)
		return TP_ENOMEM;
	for (int k = 0; k < 3; k++) {
		const cJSON *l = tp_get_array(c->spec, lists[k]);
		for (const cJSON *x = l ? l->child : NULL; x; x = x->next)
			c->containers[c->ncontainers++] = x;
	}
	return TP_OK;
}

int tp__psa_evaluate(tp_psa_level level, int minor, const cJSON *pod_meta, const cJSON *pod_spec,
		     tp_arena *a, tp_buf *detail, bool *allowed)
{
	*allowed = true;
	if (level == TP_PSA_PRIVILEGED)
		return TP_OK;
	if (minor < 0 || minor > MAX_MINOR)
		minor = MAX_MINOR;
	psa_ctx c;
	if (tp__psa_ctx_init(&c, pod_meta, pod_spec, a))
		return TP_ENOMEM;
	int rc = TP_OK;
	for (size_t i = 0; i < NCHECKS && !rc; i++) {
		const check *k = &checks[i];
		int variant = variant_at(k, minor);
		if (k->level > level || variant < 0 || overridden(k->id, level, minor))
			continue;
		tp_psa_verdict out;
		if (k->fn(&c, variant, &out))
			continue;
		rc = tp_buf_addf(detail, "%s%s", *allowed ? "" : ", ", out.reason);
		if (!rc && out.detail && *out.detail)
			rc = tp_buf_addf(detail, " (%s)", out.detail);
		*allowed = false;
	}
	return rc ? rc : c.rc;
}

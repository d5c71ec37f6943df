/*
 * pod/psa.h — what the files of pod-security-admission's checks share
 * (pod/security_*.c): the Pod being looked at, the string lists the checks
 * build their details from, and the checks themselves. Private to them.
 */
#ifndef TP_POD_PSA_H
#define TP_POD_PSA_H

#include "policy/pod/pod.h"

#include <string.h>

/* A list of strings in the arena (Go's []string and sets.String). */
typedef struct strs {
	const char **v;
	size_t n, cap;
} strs;

typedef struct psa_ctx {
	const cJSON *meta, *spec;
	const cJSON **containers; /* init, regular, ephemeral: visitContainers' order */
	size_t ncontainers;
	tp_arena *a;
	int rc; /* TP_ENOMEM once memory ran out */
} psa_ctx;

/* A Pod's metadata and spec to check, its containers gathered in
 * visitContainers' order (pod/security_checks.c). */
int tp__psa_ctx_init(psa_ctx *c, const cJSON *meta, const cJSON *spec, tp_arena *a);

/* pod/security_text.c: the lists and upstream's phrases. */
void tp__psa_add(psa_ctx *c, strs *s, const char *x);
int tp__psa_cmp(const void *a, const void *b);
void tp__psa_sort_unique(strs *s); /* sets.NewString(...).List() */
const char *tp__psa_join(psa_ctx *c, const strs *s, const char *sep, bool quote);
const char *tp__psa_jq(psa_ctx *c, const strs *s); /* joinQuote: "a", "b" */
const char *tp__psa_fmt(psa_ctx *c, const char *f, ...) TP_PRINTF(2, 3);
/* "container \"a\"" / "containers \"a\", \"b\"" */
const char *tp__psa_containers(psa_ctx *c, const strs *names);
bool tp__psa_in_list(const char *s, const char *const *list);

static inline const char *tp__psa_plural(const char *one, const char *many, size_t n)
{
	return n == 1 ? one : many;
}

static inline bool tp__psa_forbid(tp_psa_verdict *out, const char *reason, const char *detail)
{
	*out = (tp_psa_verdict){ false, reason, detail };
	return false;
}

static inline const cJSON *tp__psa_sc(const cJSON *x)
{
	return tp__mobj(x, "securityContext");
}

static inline const char *tp__psa_name(const cJSON *container)
{
	const char *n = tp__mstr(container, "name");
	return n ? n : "";
}

static inline bool tp__psa_windows(const psa_ctx *c)
{
	const char *os = tp_get_str(c->spec, "os.name");
	return os && !strcmp(os, "windows");
}

/* The checks: true when the Pod passes, else *out says why. variant is
 * the index of the check's version in force. */
typedef bool (*tp__psa_check_fn)(psa_ctx *c, int variant, tp_psa_verdict *out);

/* pod/security_baseline.c */
bool tp__psa_app_armor(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_capabilities_baseline(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_host_namespaces(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_host_path_volumes(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_host_ports(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_privileged(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_proc_mount(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_se_linux(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_seccomp_baseline(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_sysctls(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_windows_host_process(psa_ctx *c, int variant, tp_psa_verdict *out);
/* The seccompProfile fields' explicit settings (pod, containers) and, when
 * implicit is given, the containers that set none without a pod profile. */
void tp__psa_seccomp_fields(psa_ctx *c, strs *setters, strs *values, strs *implicit);

/* pod/security_restricted.c */
bool tp__psa_allow_privilege_escalation(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_capabilities_restricted(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_restricted_volumes(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_run_as_non_root(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_run_as_user(psa_ctx *c, int variant, tp_psa_verdict *out);
bool tp__psa_seccomp_restricted(psa_ctx *c, int variant, tp_psa_verdict *out);

#endif

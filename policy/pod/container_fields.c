/*
 * pod/container_fields.c — the parts of one container kube-apiserver checks
 * (pkg/apis/core/validation, v1.32): ports (validateContainerPorts), env and
 * envFrom (ValidateEnv, ValidateEnvFrom: v1.32's relaxed names, on by
 * default since then; v1.26 wanted C-like names), volumeMounts
 * (ValidateVolumeMounts: a defined volume, unique mount paths) and the
 * securityContext conflicts (ValidateSecurityContext). Paths are those of
 * upstream, its slips included (a subPath error names the list, not the
 * item).
 */
#include "policy/pod/pod.h"

#include <string.h>

#define PORT_RANGE "must be between 1 and 65535, inclusive"
#define PORT_HINT "use a port between 1 and 65535"

/* IsValidPortName's messages, in its order. */
static void check_port_name(tp_podv *v, const char *name)
{
	static const char hint[] = "name ports with up to 15 lower-case letters, digits and "
				   "single hyphens, with at least one letter (\"http\", \"c10d\")";
	const char *q = tp__podv_quote(v, name);
	size_t n = strlen(name);
	bool charset = n > 0, letter = false;
	for (const char *p = name; *p; p++) {
		charset &= (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-';
		letter |= *p >= 'a' && *p <= 'z';
	}
	if (n > 15)
		tp__podv_add(v, TP_FIELD_INVALID, ".name", q, hint, "must be no more than 15 characters");
	if (!charset)
		tp__podv_add(v, TP_FIELD_INVALID, ".name", q, hint,
			     "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
	if (!letter)
		tp__podv_add(v, TP_FIELD_INVALID, ".name", q, hint, "must contain at least one letter (a-z)");
	if (strstr(name, "--"))
		tp__podv_add(v, TP_FIELD_INVALID, ".name", q, hint, "must not contain consecutive hyphens");
	if (n && (name[0] == '-' || name[n - 1] == '-'))
		tp__podv_add(v, TP_FIELD_INVALID, ".name", q, hint, "must not begin or end with a hyphen");
}

static bool port_name_ok(const char *name)
{
	size_t n = strlen(name);
	bool letter = false;
	if (n == 0 || n > 15 || name[0] == '-' || name[n - 1] == '-' || strstr(name, "--"))
		return false;
	for (const char *p = name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
		letter |= *p >= 'a' && *p <= 'z';
	}
	return letter;
}

static void check_port_number(tp_podv *v, const cJSON *port, const char *member, bool required)
{
	long long n = 0;
	if (!tp__mint(port, member, &n) || n == 0) {
		if (required)
			tp__podv_add(v, TP_FIELD_REQUIRED, tp__podv_printf(v, ".%s", member), NULL,
				     "give the port the container listens on", "%s", "");
		return;
	}
	if (n < 1 || n > 65535)
		tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", member),
			     tp__podv_int(v, n), PORT_HINT, PORT_RANGE);
}

int tp__pod_check_ports(tp_podv *v, const cJSON *ports)
{
	tp_nameset names;
	tp__nameset_init(&names, v->arena);
	int i = 0;
	for (const cJSON *p = cJSON_IsArray(ports) ? ports->child : NULL; p; p = p->next, i++) {
		size_t mark = tp__podv_push_index(v, ".ports", i);
		const char *name = tp__mstr(p, "name");
		if (name && *name) {
			if (!port_name_ok(name))
				check_port_name(v, name);
			else if (tp__nameset_has(&names, name))
				tp__podv_add(v, TP_FIELD_DUPLICATE, ".name", tp__podv_quote(v, name),
					     "give each port of a container its own name", "%s", "");
			else if (tp__nameset_add(&names, name))
				v->rc = TP_ENOMEM;
		}
		check_port_number(v, p, "containerPort", true);
		check_port_number(v, p, "hostPort", false);
		const char *proto = tp__mstr(p, "protocol");
		if (proto && *proto && strcmp(proto, "TCP") && strcmp(proto, "UDP") &&
		    strcmp(proto, "SCTP"))
			tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".protocol", tp__podv_quote(v, proto),
				     NULL, "supported values: \"SCTP\", \"TCP\", \"UDP\"");
		tp__podv_pop(v, mark);
	}
	return v->rc;
}

/* IsRelaxedEnvVarName (v1.32): printable ASCII, no '='. */
static bool env_name_ok(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '=')
			return false;
	return true;
}

#define ENV_NAME_MSG \
	"a valid environment variable name must consist only of printable ASCII characters " \
	"other than '='"
#define ENV_NAME_HINT "use printable ASCII without '=' (\"MASTER_PORT\")"

static void check_env_name(tp_podv *v, const char *name, const char *suffix)
{
	if (!env_name_ok(name))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, name), ENV_NAME_HINT,
			     ENV_NAME_MSG);
}

static bool empty_or_absent(const cJSON *obj, const char *member)
{
	const char *s = tp__mstr(obj, member);
	return !s || !*s;
}

static void check_key_ref(tp_podv *v, const cJSON *ref)
{
	const char *name = tp__mstr(ref, "name");
	const char *msg = tp_check_dns1123_subdomain(name ? name : "");
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, ".name", tp__podv_quote(v, name ? name : ""),
			     "name the object that holds the key", "%s", msg);
	const char *key = tp__mstr(ref, "key");
	if (!key || !*key)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".key", NULL, "name the key to read", "%s", "");
}

/* validateEnvVarValueFrom: one source, and no value beside it. */
static void check_value_from(tp_podv *v, const cJSON *ev)
{
	const cJSON *from = tp__mobj(ev, "valueFrom");
	if (!from)
		return;
	static const char *const kinds[] = { "fieldRef", "resourceFieldRef", "configMapKeyRef",
					     "secretKeyRef" };
	size_t mark = tp__podv_push(v, ".valueFrom");
	int n = 0;
	for (int k = 0; k < 4; k++) {
		const cJSON *src = tp_get_object(from, kinds[k]);
		if (!src)
			continue;
		n++;
		size_t inner = tp__podv_push_member(v, kinds[k]);
		if (k >= 2)
			check_key_ref(v, src);
		else if (empty_or_absent(src, k == 0 ? "fieldPath" : "resource"))
			tp__podv_add(v, TP_FIELD_REQUIRED, k == 0 ? ".fieldPath" : ".resource", NULL,
				     "say which field to read", "%s", "");
		tp__podv_pop(v, inner);
	}
	const char *value = tp__mstr(ev, "value");
	if (n == 0)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, "\"\"", "give one source",
			     "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` "
			     "or `secretKeyRef`");
	else if (value && *value)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, "\"\"", "keep either value or valueFrom",
			     "may not be specified when `value` is not empty");
	else if (n > 1)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, "\"\"", "keep one source",
			     "may not have more than one field specified at a time");
	tp__podv_pop(v, mark);
}

int tp__pod_check_env(tp_podv *v, const cJSON *env)
{
	int i = 0;
	for (const cJSON *ev = cJSON_IsArray(env) ? env->child : NULL; ev; ev = ev->next, i++) {
		size_t mark = tp__podv_push_index(v, ".env", i);
		const char *name = tp__mstr(ev, "name");
		if (!name || !*name)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the variable", "%s", "");
		else
			check_env_name(v, name, ".name");
		check_value_from(v, ev);
		tp__podv_pop(v, mark);
	}
	return v->rc;
}

static void check_env_source(tp_podv *v, const cJSON *src)
{
	const char *name = tp__mstr(src, "name");
	if (!name || !*name) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the object to read", "%s", "");
		return;
	}
	const char *msg = tp_check_dns1123_subdomain(name);
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, ".name", tp__podv_quote(v, name),
			     "use the object's name", "%s", msg);
}

int tp__pod_check_env_from(tp_podv *v, const cJSON *list)
{
	int i = 0;
	for (const cJSON *ev = cJSON_IsArray(list) ? list->child : NULL; ev; ev = ev->next, i++) {
		size_t mark = tp__podv_push_index(v, ".envFrom", i);
		const char *prefix = tp__mstr(ev, "prefix");
		if (prefix && *prefix)
			check_env_name(v, prefix, ".prefix");
		int n = 0;
		static const char *const kinds[] = { "configMapRef", "secretRef" };
		for (int k = 0; k < 2; k++) {
			const cJSON *src = tp_get_object(ev, kinds[k]);
			if (!src)
				continue;
			n++;
			size_t inner = tp__podv_push(v, k ? ".secretRef" : ".configMapRef");
			check_env_source(v, src);
			tp__podv_pop(v, inner);
		}
		tp__podv_pop(v, mark);
		/* upstream names the list here, not the item */
		size_t list_mark = tp__podv_push(v, ".envFrom");
		if (n == 0)
			tp__podv_add(v, TP_FIELD_INVALID, NULL, "\"\"", "give configMapRef or secretRef",
				     "must specify one of: `configMapRef` or `secretRef`");
		else if (n > 1)
			tp__podv_add(v, TP_FIELD_INVALID, NULL, "\"\"", "keep one of them",
				     "may not have more than one field specified at a time");
		tp__podv_pop(v, list_mark);
	}
	return v->rc;
}

/* validateLocalDescendingPath, at the list's path as upstream has it: the
 * item's "[i]" is taken off the path for it and put back after. */
static void check_sub_path(tp_podv *v, size_t list_len, const char *member, const char *p)
{
	char item[32];
	if (v->len < list_len)
		return; /* a path cut short: nothing sensible to name */
	size_t n = v->len - list_len;
	if (n >= sizeof(item))
		n = sizeof(item) - 1;
	memcpy(item, v->path + list_len, n);
	tp__podv_pop(v, list_len);
	const char *suffix = tp__podv_printf(v, ".%s", member);
	if (*p == '/')
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, p),
			     "write a path relative to the volume", "must be a relative path");
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/')) {
			tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, p),
				     "write the path without '..'", "must not contain '..'");
			break;
		}
	memcpy(v->path + list_len, item, n);
	v->len = list_len + n;
	v->path[v->len] = '\0';
}

static void check_mount(tp_podv *v, const cJSON *m, const tp_nameset *volumes,
			tp_nameset *paths, size_t list_len)
{
	const char *name = tp__mstr(m, "name");
	const char *mp = tp__mstr(m, "mountPath");
	if (!name || !*name)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the volume to mount", "%s", "");
	/* the volumes of the template, or of a volumeClaimPolicy (pod/claims.c) */
	if (!tp__nameset_has(volumes, name ? name : "") &&
	    !tp__pod_claims_has(v->claims, v->rjob, name))
		tp__podv_add(v, TP_FIELD_NOT_FOUND, ".name", tp__podv_quote(v, name ? name : ""),
			     tp__podv_printf(v, "add a volume named \"%s\" to the Pod template's "
						"volumes, or mount one it defines",
					     name ? name : ""),
			     "%s", "");
	if (!mp || !*mp)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".mountPath", NULL, "say where to mount it", "%s",
			     "");
	if (tp__nameset_has(paths, mp ? mp : ""))
		tp__podv_add(v, TP_FIELD_INVALID, ".mountPath", tp__podv_quote(v, mp ? mp : ""),
			     "mount each volume at its own path", "must be unique");
	else if (tp__nameset_add(paths, mp ? mp : ""))
		v->rc = TP_ENOMEM;
	const char *sub = tp__mstr(m, "subPath");
	const char *expr = tp__mstr(m, "subPathExpr");
	if (sub && *sub)
		check_sub_path(v, list_len, "subPath", sub);
	if (expr && *expr) {
		if (sub && *sub)
			tp__podv_add(v, TP_FIELD_INVALID, ".subPathExpr", tp__podv_quote(v, expr),
				     "keep one of subPath and subPathExpr",
				     "subPathExpr and subPath are mutually exclusive");
		check_sub_path(v, list_len, "subPathExpr", expr);
	}
}

int tp__pod_check_mounts(tp_podv *v, const cJSON *mounts, const tp_nameset *volumes)
{
	tp_nameset paths;
	tp__nameset_init(&paths, v->arena);
	size_t list_end = v->len + strlen(".volumeMounts");
	int i = 0;
	for (const cJSON *m = cJSON_IsArray(mounts) ? mounts->child : NULL; m; m = m->next, i++) {
		size_t mark = tp__podv_push_index(v, ".volumeMounts", i);
		check_mount(v, m, volumes, &paths, list_end);
		tp__podv_pop(v, mark);
	}
	return v->rc;
}

/* ValidateSecurityContext's rules a template can break. */
int tp__pod_check_security_context(tp_podv *v, const cJSON *sc)
{
	if (!cJSON_IsObject(sc))
		return v->rc;
	size_t mark = tp__podv_push(v, ".securityContext");
	static const char *const ids[] = { "runAsUser", "runAsGroup" };
	for (int k = 0; k < 2; k++) {
		long long id;
		if (tp__mint(sc, ids[k], &id) && (id < 0 || id > 2147483647LL))
			tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", ids[k]),
				     tp__podv_int(v, id), "use an ID from 0 to 2147483647",
				     "must be between 0 and 2147483647, inclusive");
	}
	const cJSON *ape = tp_member(sc, "allowPrivilegeEscalation");
	if (cJSON_IsFalse(ape)) {
		if (cJSON_IsTrue(tp_member(sc, "privileged")))
			tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_json(v, sc),
				     "a privileged container always escalates: drop one of the two",
				     "cannot set `allowPrivilegeEscalation` to false and `privileged` "
				     "to true");
		const cJSON *add = tp_get_array(sc, "capabilities.add");
		for (const cJSON *c = add ? add->child : NULL; c; c = c->next)
			if (cJSON_IsString(c) && !strcmp(c->valuestring, "CAP_SYS_ADMIN"))
				tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_json(v, sc),
					     "drop CAP_SYS_ADMIN or allow privilege escalation",
					     "cannot set `allowPrivilegeEscalation` to false and "
					     "`capabilities.Add` CAP_SYS_ADMIN");
	}
	const char *pm = tp__mstr(sc, "procMount");
	if (pm && strcmp(pm, "Default") && strcmp(pm, "Unmasked"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".procMount", tp__podv_quote(v, pm), NULL,
			     "supported values: \"Default\", \"Unmasked\"");
	tp__podv_pop(v, mark);
	return v->rc;
}

/*
 * pod/container_fields.c — the parts of one container kube-apiserver checks
 * (pkg/apis/core/validation, v1.32): ports (validateContainerPorts), env and
 * envFrom (ValidateEnv, ValidateEnvFrom: v1.32's relaxed names, on by
 * default since then; v1.26 wanted C-like names; validateEnvVarValueFrom:
 * the downward API fields and container resources an env var may read),
 * volumeMounts (ValidateVolumeMounts: a defined volume, unique mount paths,
 * mountPropagation, recursiveReadOnly with RecursiveReadOnlyMounts on as
 * v1.32 has it), volumeDevices (ValidateVolumeDevices) and the
 * securityContext (ValidateSecurityContext: IDs, conflicts, the seccomp and
 * AppArmor profiles through pod/pod_security_context.c, the Windows options
 * through pod/windows.c; procMount is forced to Default while ProcMountType
 * is off, v1.32's default, so never checked).
 * Paths are those of upstream, its slips included (a subPath, mountPropagation
 * or recursiveReadOnly error names the list, not the item). v1.26 had no
 * recursiveReadOnly or appArmorProfile fields yet (both v1.30).
 */
#include "policy/pod/members.h"

#include <ctype.h>
#include <string.h>

#include "policy/core/quantity.h"

#define PORT_RANGE "must be between 1 and 65535, inclusive"
#define PORT_HINT "use a port between 1 and 65535"
#define PORT_NAME_HINT \
	"name ports with up to 15 lower-case letters, digits and single hyphens, with at least " \
	"one letter (\"http\", \"c10d\")"

/* IsValidPortName's messages, in its order. */
void tp__pod_port_name(tp_podv *v, const char *suffix, const char *name, const char *hint)
{
	const char *q = tp__podv_quote(v, name);
	size_t n = strlen(name);
	bool charset = n > 0, letter = false;
	for (const char *p = name; *p; p++) {
		charset &= (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-';
		letter |= *p >= 'a' && *p <= 'z';
	}
	if (n > 15)
		tp__podv_add(v, TP_FIELD_INVALID, suffix, q, hint, "must be no more than 15 characters");
	if (!charset)
		tp__podv_add(v, TP_FIELD_INVALID, suffix, q, hint,
			     "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
	if (!letter)
		tp__podv_add(v, TP_FIELD_INVALID, suffix, q, hint, "must contain at least one letter (a-z)");
	if (strstr(name, "--"))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, q, hint, "must not contain consecutive hyphens");
	if (n && (name[0] == '-' || name[n - 1] == '-'))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, q, hint, "must not begin or end with a hyphen");
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
				tp__pod_port_name(v, ".name", name, PORT_NAME_HINT);
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

/* IsConfigMapKey's messages, in its order. */
static void check_config_key(tp_podv *v, const char *key)
{
	static const char hint[] = "use the key's name: letters, digits, '-', '_' and '.'";
	const char *q = tp__podv_quote(v, key);
	size_t n = strlen(key);
	if (n > 253)
		tp__podv_add(v, TP_FIELD_INVALID, ".key", q, hint, "must be no more than 253 characters");
	if (strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") != n)
		tp__podv_add(v, TP_FIELD_INVALID, ".key", q, hint,
			     "a valid config key must consist of alphanumeric characters, '-', '_' or "
			     "'.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
			     "validation is '[-._a-zA-Z0-9]+')");
	if (!strcmp(key, ".") || !strcmp(key, ".."))
		tp__podv_add(v, TP_FIELD_INVALID, ".key", q, hint, "must not be '%s'", key);
	else if (!strncmp(key, "..", 2))
		tp__podv_add(v, TP_FIELD_INVALID, ".key", q, hint, "must not start with '..'");
}

static void check_key_ref(tp_podv *v, const cJSON *ref)
{
	const char *name = tp__mstr(ref, "name");
	const char *msg = tp__check_dns1123_subdomain(name ? name : "");
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, ".name", tp__podv_quote(v, name ? name : ""),
			     "name the object that holds the key", "%s", msg);
	const char *key = tp__mstr(ref, "key");
	if (!key || !*key)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".key", NULL, "name the key to read", "%s", "");
	else
		check_config_key(v, key);
}


#define FIELD_HINT "read one of the supported fields, or a label or annotation by key " \
	"(\"metadata.labels['app']\")"

/* The fields pkg/apis/core/pods ConvertDownwardAPIFieldLabel knows (it
 * reads spec.host, a v1 client's spec.nodeName, as spec.nodeName): a known
 * field the list at hand does not hold is Unsupported, an unknown one an
 * error converting it. */
static const char *const known_fields[] = {
	"metadata.annotations", "metadata.labels",	     "metadata.name",	  "metadata.namespace",
	"metadata.uid",		"spec.nodeName",	     "spec.restartPolicy", "spec.serviceAccountName",
	"spec.schedulerName",	"status.phase",		     "status.hostIP",	  "status.hostIPs",
	"status.podIP",		"status.podIPs",	     NULL
};

const char *const tp__pod_env_fields[] = { "metadata.name",	      "metadata.namespace",
					    "metadata.uid",	      "spec.nodeName",
					    "spec.serviceAccountName", "status.hostIP",
					    "status.hostIPs",	      "status.podIP",
					    "status.podIPs",	      NULL };
const char *const tp__pod_volume_fields[] = { "metadata.name", "metadata.namespace",
					       "metadata.labels", "metadata.annotations",
					       "metadata.uid", NULL };

static bool listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

/* A subscripted fieldPath ("metadata.labels['app']") as fieldpath
 * SplitMaybeSubscriptedPath splits it: its path's length and the subscript
 * (copied into v's arena), or false. */
static bool split_subscript(tp_podv *v, const char *fp, size_t *path_len, const char **sub)
{
	size_t n = strlen(fp);
	const char *open = strstr(fp, "['");
	if (n < 2 || strcmp(fp + n - 2, "']") || !open || open == fp || open + 2 > fp + n - 2)
		return false;
	*path_len = (size_t)(open - fp);
	*sub = tp__podv_printf(v, "%.*s", (int)(fp + n - 2 - (open + 2)), open + 2);
	return *sub != NULL;
}

/* A label or annotation key a subscripted fieldPath reads: a qualified
 * name (an annotation's in lower case), at the fieldRef's own path. */
static void check_subscript(tp_podv *v, bool annotation, const char *sub)
{
	char *key = (char *)sub;
	for (char *p = key; annotation && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	const char *msg = tp__check_qualified_name(key);
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, key),
			     "use a key of the form [prefix/]name", "%s", msg);
}

/* "supported values: ..." as field.NotSupported lists a field list: sorted. */
static const char *supported_fields(tp_podv *v, const char *const *fields)
{
	const char *sorted[16];
	size_t n = 0;
	for (; fields[n] && n < 16; n++) {
		size_t j = n;
		for (; j && strcmp(sorted[j - 1], fields[n]) > 0; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = fields[n];
	}
	const char *out = "supported values: ";
	for (size_t i = 0; out && i < n; i++)
		out = tp__podv_printf(v, "%s%s\"%s\"", out, i ? ", " : "", sorted[i]);
	return out;
}

void tp__pod_check_field_selector(tp_podv *v, const cJSON *ref, const char *const *fields)
{
	const char *api = tp__mstr(ref, "apiVersion"); /* "" is defaulted to v1 */
	const char *fp = tp__mstr(ref, "fieldPath");
	if (!fp || !*fp) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".fieldPath", NULL, "say which field to read",
			     "%s", "");
		return;
	}
	const char *q = tp__podv_quote(v, fp);
	if (api && *api && strcmp(api, "v1")) {
		tp__podv_add(v, TP_FIELD_INVALID, ".fieldPath", q, "drop apiVersion, or write v1",
			     "error converting fieldPath: unsupported pod version: %s", api);
		return;
	}
	size_t plen;
	const char *sub;
	if (split_subscript(v, fp, &plen, &sub)) {
		bool labels = plen == 15 && !strncmp(fp, "metadata.labels", plen);
		bool annotations = plen == 20 && !strncmp(fp, "metadata.annotations", plen);
		if (labels || annotations)
			check_subscript(v, annotations, sub);
		else
			tp__podv_add(v, TP_FIELD_INVALID, ".fieldPath", q, FIELD_HINT,
				     "error converting fieldPath: field label does not support "
				     "subscript: %s",
				     fp);
		return;
	}
	if (!strcmp(fp, "spec.host")) {
		fp = "spec.nodeName";
		q = tp__podv_quote(v, fp);
	} else if (!listed(known_fields, fp)) {
		tp__podv_add(v, TP_FIELD_INVALID, ".fieldPath", q, FIELD_HINT,
			     "error converting fieldPath: field label not supported: %s", fp);
		return;
	}
	if (!listed(fields, fp))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".fieldPath", q, FIELD_HINT, "%s",
			     supported_fields(v, fields));
}

/* validContainerResourceFieldPathExpressions, and the divisors each kind of
 * resource allows (validateContainerResourceDivisor). */
static const char *const env_resources[] = { "limits.cpu",
					     "limits.memory",
					     "limits.ephemeral-storage",
					     "requests.cpu",
					     "requests.memory",
					     "requests.ephemeral-storage",
					     NULL };
static const char *const cpu_divisors[] = { "1m", "1", NULL };
static const char *const byte_divisors[] = { "1",   "1k",  "1M",  "1G",  "1T",	"1P",  "1E",
					     "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei", NULL };
#define BYTE_DIVISORS "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, " \
	"1Ei are supported with the %s resource"

static void check_divisor(tp_podv *v, const char *res, const cJSON *divisor)
{
	tp_quantity q;
	char text[TP_QUANTITY_MAX_TEXT];
	if (!divisor || tp__quantity_from_json(divisor, &q) || tp__quantity_is_zero(&q) ||
	    tp__quantity_format(&q, text, sizeof(text)))
		return; /* unset (zero), or the schema's to report */
	const char *qres = tp__podv_quote(v, res);
	const char *hint = "use a divisor the resource supports, or none";
	if (!strcmp(res, "limits.cpu") || !strcmp(res, "requests.cpu")) {
		if (!listed(cpu_divisors, text))
			tp__podv_add(v, TP_FIELD_INVALID, ".divisor", qres, hint,
				     "only divisor's values 1m and 1 are supported with the cpu "
				     "resource");
	} else if (!strcmp(res, "limits.memory") || !strcmp(res, "requests.memory")) {
		if (!listed(byte_divisors, text))
			tp__podv_add(v, TP_FIELD_INVALID, ".divisor", qres, hint, BYTE_DIVISORS,
				     "memory");
	} else if (!strcmp(res, "limits.ephemeral-storage") ||
		   !strcmp(res, "requests.ephemeral-storage")) {
		if (!listed(byte_divisors, text))
			tp__podv_add(v, TP_FIELD_INVALID, ".divisor", qres, hint, BYTE_DIVISORS,
				     "local ephemeral storage");
	}
	if ((!strncmp(res, "requests.hugepages-", 19) || !strncmp(res, "limits.hugepages-", 17)) &&
	    !listed(byte_divisors, text))
		tp__podv_add(v, TP_FIELD_INVALID, ".divisor", qres, hint, BYTE_DIVISORS, "hugepages");
}

void tp__pod_check_resource_selector(tp_podv *v, const cJSON *ref, bool volume)
{
	const char *res = tp__mstr(ref, "resource");
	const char *name = tp__mstr(ref, "containerName");
	if (volume && (!name || !*name))
		tp__podv_add(v, TP_FIELD_REQUIRED, ".containerName", NULL,
			     "name the container whose resources the file shows", "%s", "");
	else if (!res || !*res)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".resource", NULL, "say which resource to read",
			     "%s", "");
	else if (!listed(env_resources, res) && strncmp(res, "requests.hugepages-", 19) &&
		 strncmp(res, "limits.hugepages-", 17))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".resource", tp__podv_quote(v, res),
			     "read the container's cpu, memory, ephemeral-storage or hugepages-<size>",
			     "supported values: \"limits.cpu\", \"limits.ephemeral-storage\", "
			     "\"limits.memory\", \"requests.cpu\", \"requests.ephemeral-storage\", "
			     "\"requests.memory\"");
	check_divisor(v, res ? res : "", tp_member(ref, "divisor"));
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
		else if (k == 0)
			tp__pod_check_field_selector(v, src, tp__pod_env_fields);
		else
			tp__pod_check_resource_selector(v, src, false);
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
	const char *msg = tp__check_dns1123_subdomain(name);
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

/* validatePathNoBacksteps: no ".." between slashes. */
static bool has_backsteps(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

void tp__pod_local_path(tp_podv *v, const char *suffix, const char *p, const char *what)
{
	if (*p == '/')
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, p),
			     tp__podv_printf(v, "write a path relative to %s", what),
			     "must be a relative path");
	if (has_backsteps(p))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, p),
			     "write the path without '..'", "must not contain '..'");
}

/* A mount's errors upstream reports at the list's path, not the item's:
 * the item's "[i]" is taken off the path (kept in *item) and put back. */
typedef struct item_suffix {
	char text[32];
	size_t n, list_len;
} item_suffix;

static bool to_list(tp_podv *v, size_t list_len, item_suffix *item)
{
	if (v->len < list_len)
		return false; /* a path cut short: nothing sensible to name */
	item->list_len = list_len;
	item->n = v->len - list_len;
	if (item->n >= sizeof(item->text))
		item->n = sizeof(item->text) - 1;
	memcpy(item->text, v->path + list_len, item->n);
	tp__podv_pop(v, list_len);
	return true;
}

static void back_to_item(tp_podv *v, const item_suffix *item)
{
	memcpy(v->path + item->list_len, item->text, item->n);
	v->len = item->list_len + item->n;
	v->path[v->len] = '\0';
}

/* validateMountPropagation and validateMountRecursiveReadOnly, at the
 * list's path. c: the container, or NULL when unknown (upstream then
 * leaves Bidirectional to the Pod's own check). */
static void check_mount_modes(tp_podv *v, const tp_pod_mm *m, const cJSON *c)
{
	const char *prop = tp__vstr(m->mount_propagation);
	const char *rro = tp__vstr(m->recursive_read_only);
	if (prop) {
		if (strcmp(prop, "Bidirectional") && strcmp(prop, "HostToContainer") &&
		    strcmp(prop, "None"))
			tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".mountPropagation",
				     tp__podv_quote(v, prop), NULL,
				     "supported values: \"Bidirectional\", \"HostToContainer\", "
				     "\"None\"");
		if (c && !strcmp(prop, "Bidirectional") &&
		    !cJSON_IsTrue(tp_get(c, "securityContext.privileged")))
			tp__podv_add(v, TP_FIELD_FORBIDDEN, ".mountPropagation", NULL,
				     "use HostToContainer, or make the container privileged",
				     "Bidirectional mount propagation is available only to privileged "
				     "containers");
	}
	if (!rro || !strcmp(rro, "Disabled"))
		return;
	if (strcmp(rro, "Enabled") && strcmp(rro, "IfPossible")) {
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".recursiveReadOnly", tp__podv_quote(v, rro),
			     NULL, "supported values: \"Disabled\", \"Enabled\", \"IfPossible\"");
		return;
	}
	if (!cJSON_IsTrue(m->read_only))
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".recursiveReadOnly", NULL,
			     "set readOnly: true on the mount, or drop recursiveReadOnly",
			     "may only be specified when readOnly is true");
	if (prop && strcmp(prop, "None"))
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".recursiveReadOnly", NULL,
			     "drop mountPropagation, or recursiveReadOnly",
			     "may only be specified when mountPropagation is None or not specified");
}

/* GetVolumeMountMap or GetVolumeDeviceMap of container c (member: its
 * list, path: the member holding each item's path): each name with its
 * last item, as a Go map keeps it, and the set of those items' paths. */
typedef struct path_map {
	tp_nameset last;  /* name -> the last item of that name */
	tp_nameset paths; /* the paths of those last items */
} path_map;

static void path_map_of(tp_podv *v, const cJSON *list, const char *path, path_map *pm)
{
	tp__nameset_init(&pm->last, v->arena);
	tp__nameset_init(&pm->paths, v->arena);
	/* a name's slot is taken by its first item: keep the last in a box */
	for (const cJSON *it = list ? list->child : NULL; it; it = it->next) {
		const char *name = tp__mstr(it, "name");
		const cJSON **box = (const cJSON **)tp__nameset_get(&pm->last, name ? name : "");
		if (!box) {
			box = tp_arena_alloc(v->arena, sizeof(*box));
			if (!box || tp__nameset_put(&pm->last, name ? name : "", box)) {
				v->rc = TP_ENOMEM;
				return;
			}
		}
		*box = it;
	}
	for (const cJSON *it = list ? list->child : NULL; it; it = it->next) {
		const char *name = tp__mstr(it, "name");
		const cJSON *const *box = tp__nameset_get(&pm->last, name ? name : "");
		const char *p = tp__mstr(it, path);
		if (box && *box == it && tp__nameset_add(&pm->paths, p ? p : ""))
			v->rc = TP_ENOMEM;
	}
}

/* What a mount or device is checked against besides its own list. */
typedef struct mount_ctx {
	const cJSON *c;            /* the container, or NULL when unknown */
	const tp_nameset *volumes; /* the Pod's valid volumes by name */
	path_map other;            /* the container's devices (for a mount), or mounts */
	tp_nameset paths, names;   /* those of the list seen so far */
	size_t list_len;           /* the path length of the list */
} mount_ctx;

static void check_mount(tp_podv *v, const cJSON *mount, mount_ctx *mc)
{
	tp_pod_mm m;
	tp__pod_mm_fill(&m, mount);
	const char *name = tp__vstr(m.name);
	const char *mp = tp__vstr(m.mount_path);
	if (!name || !*name)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the volume to mount", "%s", "");
	/* the volumes of the template, or of a volumeClaimPolicy (pod/claims.c) */
	if (!tp__nameset_has(mc->volumes, name ? name : "") &&
	    !tp__pod_claims_has(v->claims, v->rjob, name))
		tp__podv_add(v, TP_FIELD_NOT_FOUND, ".name", tp__podv_quote(v, name ? name : ""),
			     tp__podv_printf(v, "add a volume named \"%s\" to the Pod template's "
						"volumes, or mount one it defines",
					     name ? name : ""),
			     "%s", "");
	if (!mp || !*mp)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".mountPath", NULL, "say where to mount it", "%s",
			     "");
	/* the paths are for the mounts after this one to look up: the last
	 * (most often the only one) makes no set */
	if (tp__nameset_has(&mc->paths, mp ? mp : ""))
		tp__podv_add(v, TP_FIELD_INVALID, ".mountPath", tp__podv_quote(v, mp ? mp : ""),
			     "mount each volume at its own path", "must be unique");
	else if (mount->next && tp__nameset_add(&mc->paths, mp ? mp : ""))
		v->rc = TP_ENOMEM;
	if (tp__nameset_has(&mc->other.last, name ? name : ""))
		tp__podv_add(v, TP_FIELD_INVALID, ".name", tp__podv_quote(v, name ? name : ""),
			     "use a volume either as a mount or as a block device",
			     "must not already exist in volumeDevices");
	if (tp__nameset_has(&mc->other.paths, mp ? mp : ""))
		tp__podv_add(v, TP_FIELD_INVALID, ".mountPath", tp__podv_quote(v, mp ? mp : ""),
			     "mount it away from the container's block devices",
			     "must not already exist as a path in volumeDevices");
	const char *sub = tp__vstr(m.sub_path);
	const char *expr = tp__vstr(m.sub_path_expr);
	item_suffix item;
	if (sub && *sub && to_list(v, mc->list_len, &item)) {
		tp__pod_local_path(v, ".subPath", sub, "the volume");
		back_to_item(v, &item);
	}
	if (expr && *expr) {
		if (sub && *sub)
			tp__podv_add(v, TP_FIELD_INVALID, ".subPathExpr", tp__podv_quote(v, expr),
				     "keep one of subPath and subPathExpr",
				     "subPathExpr and subPath are mutually exclusive");
		if (to_list(v, mc->list_len, &item)) {
			tp__pod_local_path(v, ".subPathExpr", expr, "the volume");
			back_to_item(v, &item);
		}
	}
	/* the path taken off and put back only when there are modes to check */
	bool modes = tp__vstr(m.mount_propagation) || tp__vstr(m.recursive_read_only);
	if (modes && to_list(v, mc->list_len, &item)) {
		check_mount_modes(v, &m, mc->c);
		back_to_item(v, &item);
	}
}

/* devices: the container's volumeDevices when an array, else NULL. */
static int check_mount_list(tp_podv *v, const cJSON *mounts, const cJSON *devices,
			    const cJSON *c, const tp_nameset *volumes)
{
	mount_ctx mc = { .c = c, .volumes = volumes, .list_len = v->len + strlen(".volumeMounts") };
	tp__nameset_init(&mc.paths, v->arena);
	path_map_of(v, devices, "devicePath", &mc.other);
	int i = 0;
	for (const cJSON *m = cJSON_IsArray(mounts) ? mounts->child : NULL; m; m = m->next, i++) {
		size_t mark = tp__podv_push_index(v, ".volumeMounts", i);
		check_mount(v, m, &mc);
		tp__podv_pop(v, mark);
	}
	return v->rc;
}

int tp__pod_check_mounts(tp_podv *v, const cJSON *mounts, const tp_nameset *volumes)
{
	return check_mount_list(v, mounts, NULL, NULL, volumes);
}

int tp__pod_check_container_mounts(tp_podv *v, const cJSON *c, const tp_nameset *volumes)
{
	tp_pod_cm m;
	tp__pod_cm_fill(&m, c);
	return tp__pod_check_cm_mounts(v, &m, volumes);
}

int tp__pod_check_cm_mounts(tp_podv *v, const tp_pod_cm *c, const tp_nameset *volumes)
{
	return check_mount_list(v, c->volume_mounts, tp__varr(c->volume_devices), c->self,
				volumes);
}

/* isMatchedDevice: a block device needs a volume of a claim, a
 * PersistentVolumeClaim or an ephemeral one (or one a volumeClaimPolicy
 * gives: a claim). 0: no such volume, 1: one of another kind, 2: a claim. */
static int device_volume(tp_podv *v, const mount_ctx *mc, const tp_nameset *sources,
			 const char *name)
{
	if (tp__pod_claims_has(v->claims, v->rjob, name))
		return 2;
	if (!tp__nameset_has(mc->volumes, name))
		return 0;
	const cJSON *vol = tp__nameset_get(sources, name);
	return tp__mobj(vol, "persistentVolumeClaim") || tp__mobj(vol, "ephemeral") ? 2 : 1;
}

static void check_device(tp_podv *v, const cJSON *d, mount_ctx *mc, const tp_nameset *sources)
{
	const char *name = tp__mstr(d, "name"), *dp = tp__mstr(d, "devicePath");
	name = name ? name : "";
	dp = dp ? dp : "";
	const char *qn = tp__podv_quote(v, name), *qp = tp__podv_quote(v, dp);
	int found = device_volume(v, mc, sources, name);
	if (!*name)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the volume", "%s", "");
	if (tp__nameset_has(&mc->names, name))
		tp__podv_add(v, TP_FIELD_INVALID, ".name", qn, "use each volume as one device",
			     "must be unique");
	if (found == 1)
		tp__podv_add(v, TP_FIELD_INVALID, ".name", qn,
			     "use a persistentVolumeClaim or ephemeral volume as a block device",
			     "can only use volume source type of PersistentVolumeClaim or Ephemeral "
			     "for block mode");
	if (!found)
		tp__podv_add(v, TP_FIELD_NOT_FOUND, ".name", qn,
			     tp__podv_printf(v, "add a persistentVolumeClaim volume named \"%s\" to "
						"the Pod template's volumes",
					     name),
			     "%s", "");
	if (!*dp)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".devicePath", NULL,
			     "say where the device appears in the container", "%s", "");
	if (tp__nameset_has(&mc->paths, dp))
		tp__podv_add(v, TP_FIELD_INVALID, ".devicePath", qp, "give each device its own path",
			     "must be unique");
	if (*dp && has_backsteps(dp))
		tp__podv_add(v, TP_FIELD_INVALID, ".devicePath", qp, "write the path without '..'",
			     "can not contain backsteps ('..')");
	else if (tp__nameset_add(&mc->paths, dp))
		v->rc = TP_ENOMEM;
	if (tp__nameset_has(&mc->other.last, name))
		tp__podv_add(v, TP_FIELD_INVALID, ".name", qn,
			     "use a volume either as a mount or as a block device",
			     "must not already exist in volumeMounts");
	if (tp__nameset_has(&mc->other.paths, dp))
		tp__podv_add(v, TP_FIELD_INVALID, ".devicePath", qp,
			     "put the device away from the container's mounts",
			     "must not already exist as a path in volumeMounts");
	if (*name && tp__nameset_add(&mc->names, name))
		v->rc = TP_ENOMEM;
}

int tp__pod_check_devices(tp_podv *v, const cJSON *c, const tp_nameset *volumes,
			  const tp_nameset *sources)
{
	const cJSON *devices = tp__marr(c, "volumeDevices");
	if (!devices || !devices->child)
		return v->rc;
	mount_ctx mc = { .c = c, .volumes = volumes };
	tp__nameset_init(&mc.paths, v->arena);
	tp__nameset_init(&mc.names, v->arena);
	path_map_of(v, tp__marr(c, "volumeMounts"), "mountPath", &mc.other);
	int i = 0;
	for (const cJSON *d = devices->child; d; d = d->next, i++) {
		size_t mark = tp__podv_push_index(v, ".volumeDevices", i);
		check_device(v, d, &mc, sources);
		tp__podv_pop(v, mark);
	}
	return v->rc;
}

/* ValidateSecurityContext's rules a template can break. procMount is not
 * one in v1.32: with ProcMountType off (its default) the API server forces
 * it to Default (pkg/api/pod/util.go dropDisabledProcMountField). */
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
	tp__pod_check_seccomp_profile(v, tp__mobj(sc, "seccompProfile"));
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
	tp__pod_check_windows_options(v, tp__mobj(sc, "windowsOptions")); /* pod/windows.c */
	tp__pod_check_apparmor_profile(v, tp__mobj(sc, "appArmorProfile"));
	tp__podv_pop(v, mark);
	return v->rc;
}

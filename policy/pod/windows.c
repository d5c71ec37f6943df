/*
 * pod/windows.c — a Pod's Windows settings as kube-apiserver checks them
 * (pkg/apis/core/validation validateWindowsSecurityContextOptions and
 * validateWindowsHostProcessPod, v1.32): a windowsOptions' GMSA
 * credential spec name and contents and its runAsUserName ("DOMAIN\USER",
 * the domain a NetBios or DNS name); and hostProcess, the same for the
 * Pod and each container that sets it, on every container or none, with
 * hostNetwork. Upstream's rule that hostProcess containers need the API
 * server's --allow-privileged is a cluster setting, left out as the
 * privileged containers' one is. Lengths are counted in bytes, as Go's
 * len() does (its NetBios regex counts characters: the same for ASCII).
 */
#include "policy/pod/members.h"

#include <string.h>

#define GMSA_SPEC_MAX (64 * 1024)
#define DOMAIN_MAX 256
#define USER_MAX 104
#define USER_HINT "write runAsUserName as USER or DOMAIN\\USER (\"NT AUTHORITY\\NETWORK SERVICE\")"

static bool has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* ^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$ */
static bool netbios(const char *d, size_t n)
{
	if (!n || n > 15 || d[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (strchr("\\/:*?\"<>|", d[i]))
			return false;
	return true;
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Labels of [a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])? joined by dots. */
static bool dns_domain(const char *d, size_t n)
{
	for (size_t start = 0;;) {
		size_t end = start;
		while (end < n && d[end] != '.')
			end++;
		size_t len = end - start;
		if (!len || len > 63 || !alnum(d[start]) || !alnum(d[end - 1]))
			return false;
		for (size_t i = start; i < end; i++)
			if (!alnum(d[i]) && d[i] != '-')
				return false;
		if (end == n)
			return true;
		start = end + 1;
	}
}

static bool only_dots_and_spaces(const char *u)
{
	if (!*u)
		return false;
	for (; *u; u++)
		if (*u != '.' && *u != ' ')
			return false;
	return true;
}

static void bad_user(tp_podv *v, const char *name, const char *detail)
{
	tp__podv_add(v, TP_FIELD_INVALID, ".runAsUserName", tp__podv_quote(v, name), USER_HINT, "%s",
		     detail);
}

/* The domain and user of a name with at most one backslash. */
static void check_user_parts(tp_podv *v, const char *name)
{
	const char *slash = strchr(name, '\\');
	const char *user = slash ? slash + 1 : name;
	size_t dn = slash ? (size_t)(slash - name) : 0;
	size_t un = strlen(user);
	if (dn >= DOMAIN_MAX)
		bad_user(v, name, "runAsUserName's Domain length must be under 256 characters");
	if (slash && !netbios(name, dn) && !dns_domain(name, dn))
		bad_user(v, name, "runAsUserName's Domain doesn't match the NetBios nor the DNS format");
	if (!un)
		bad_user(v, name, "runAsUserName's User cannot be empty");
	else if (un > USER_MAX)
		bad_user(v, name, "runAsUserName's User length must not be longer than 104 characters");
	if (only_dots_and_spaces(user))
		bad_user(v, name, "runAsUserName's User cannot contain only periods or spaces");
	if (strpbrk(user, "\"/\\:;|=,+*?<>@[]"))
		bad_user(v, name, "runAsUserName's User cannot contain the following characters: "
				  "\"/\\:;|=,+*?<>@[]");
}

static void check_user_name(tp_podv *v, const char *name)
{
	const char *slash = strchr(name, '\\');
	if (!*name)
		bad_user(v, name, "runAsUserName cannot be an empty string");
	else if (has_control(name))
		bad_user(v, name, "runAsUserName cannot contain control characters");
	else if (slash && strchr(slash + 1, '\\'))
		bad_user(v, name, "runAsUserName cannot contain more than one backslash");
	else
		check_user_parts(v, name);
}

int tp__pod_check_windows_options(tp_podv *v, const cJSON *wo)
{
	if (!cJSON_IsObject(wo))
		return v->rc;
	size_t mark = tp__podv_push(v, ".windowsOptions");
	const char *name = tp__mstr(wo, "gmsaCredentialSpecName");
	const char *msg = name ? tp__check_dns1123_subdomain(name) : NULL;
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, ".gmsaCredentialSpecName", tp__podv_quote(v, name),
			     "name the GMSACredentialSpec resource", "%s", msg);
	const char *spec = tp__mstr(wo, "gmsaCredentialSpec");
	if (spec && !*spec)
		tp__podv_add(v, TP_FIELD_INVALID, ".gmsaCredentialSpec", "\"\"",
			     "give the credential spec's contents, or drop it",
			     "gmsaCredentialSpec cannot be an empty string");
	else if (spec && strlen(spec) > GMSA_SPEC_MAX)
		tp__podv_add(v, TP_FIELD_INVALID, ".gmsaCredentialSpec", tp__podv_quote(v, spec),
			     "keep the credential spec under 64 KiB",
			     "gmsaCredentialSpec size must be under 64 KiB");
	const char *user = tp__mstr(wo, "runAsUserName");
	if (user)
		check_user_name(v, user);
	tp__podv_pop(v, mark);
	return v->rc;
}

/* ------------------------------------------------------------ hostProcess */

/* hostProcess as set in a securityContext's windowsOptions (sc: the
 * member, of any type): 1 true, 0 false, -1 not set. */
static int host_process(const cJSON *sc)
{
	const cJSON *hp = tp_member(tp__mobj(tp__vobj(sc), "windowsOptions"), "hostProcess");
	return cJSON_IsBool(hp) ? cJSON_IsTrue(hp) : -1;
}

int tp__pod_check_host_process(tp_podv *v, const tp_pod_sm *spec)
{
	int pod = host_process(spec->security_context);
	int containers = 0, host = 0;
	const cJSON *const lists[] = { tp__varr(spec->init_containers),
				       tp__varr(spec->containers) };
	for (int k = 0; k < 2; k++) {
		const cJSON *cs = lists[k];
		int i = 0;
		for (const cJSON *c = cs ? cs->child : NULL; c; c = c->next, i++) {
			int mine = host_process(tp_member(c, "securityContext"));
			containers++;
			host += mine == 1 || (mine < 0 && pod == 1);
			if (pod < 0 || mine < 0 || pod == mine)
				continue;
			size_t mark = tp__podv_push_index(v, k ? ".containers" : ".initContainers", i);
			tp__podv_enter(v, k ? TP_POD_CONTAINERS : TP_POD_INIT, tp__mstr(c, "name"));
			tp__podv_add(v, TP_FIELD_INVALID, ".securityContext.windowsOptions.hostProcess",
				     mine ? "true" : "false",
				     "set hostProcess as the Pod does, or leave it to the Pod",
				     "pod hostProcess value must be identical if both are specified, "
				     "was %s", pod ? "true" : "false");
			tp__podv_leave(v);
			tp__podv_pop(v, mark);
		}
	}
	if (!host)
		return v->rc;
	if (host != containers)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, "\"\"",
			     "make every container a hostProcess container, or none",
			     "If pod contains any hostProcess containers then all containers must be "
			     "HostProcess containers");
	if (!cJSON_IsTrue(spec->host_network))
		tp__podv_add(v, TP_FIELD_INVALID, ".hostNetwork", "false",
			     "set hostNetwork: true for hostProcess containers",
			     "hostNetwork must be true if pod contains any hostProcess containers");
	return v->rc;
}

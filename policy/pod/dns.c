/*
 * pod/dns.c — how a Pod resolves names, as kube-apiserver checks it
 * (pkg/apis/core/validation validatePodDNSConfig and ValidateHostAliases,
 * v1.32): dnsPolicy None wants a dnsConfig with a nameserver; at most 3
 * nameservers, each an IP address; at most 32 search domains of at most
 * 2048 characters joined by spaces, each a DNS-1123 subdomain once a
 * trailing dot is taken off (the RelaxedDNSSearchValidation gate, which
 * would allow "_" and ".", is off by default in v1.32); each option named;
 * each host alias an IP address with DNS-1123 subdomains as hostnames.
 */
#include "policy/pod/members.h"

#include <ctype.h>
#include <string.h>

#define MAX_NAMESERVERS 3
#define MAX_SEARCH_PATHS 32
#define MAX_SEARCH_CHARS 2048
#define IP_MSG "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"

/* ------------------------------------------------ IP addresses
 * k8s.io/utils/net ParseIPSloppy, which the API server's IsValidIP uses:
 * Go 1.16's net.ParseIP, where an IPv4 part may have leading zeros
 * ("010.1.1.1" is 10.1.1.1) and an IPv6 group any number of hex digits
 * as long as its value fits 16 bits. No zone, no brackets. */

/* Decimal digits at s: their value (capped) and count. */
static size_t digits(const char *s, unsigned long *n)
{
	size_t i = 0;
	for (*n = 0; s[i] >= '0' && s[i] <= '9'; i++)
		if ((*n = *n * 10 + (unsigned long)(s[i] - '0')) >= 0xFFFFFF)
			return 0;
	return i;
}

static int hexval(char c)
{
	static const char hex[] = "0123456789abcdef";
	const char *d = c ? strchr(hex, tolower((unsigned char)c)) : NULL;
	return d ? (int)(d - hex) : -1;
}

static size_t hexdigits(const char *s, unsigned long *n)
{
	size_t i = 0;
	for (*n = 0; hexval(s[i]) >= 0; i++)
		if ((*n = *n * 16 + (unsigned long)hexval(s[i])) >= 0xFFFFFF)
			return 0;
	return i;
}

/* Four dotted parts of 0..255 that use all of s. */
static bool ipv4(const char *s)
{
	for (int part = 0; part < 4; part++) {
		if (part && *s++ != '.')
			return false;
		unsigned long n;
		size_t c = digits(s, &n);
		if (!c || n > 0xFF)
			return false;
		s += c;
	}
	return !*s;
}

/* Groups of 16 bits separated by ':', one "::" at most standing for one
 * group or more, the last 32 bits perhaps written as IPv4. */
static bool ipv6(const char *s)
{
	int groups = 0;
	bool ellipsis = false;
	if (s[0] == ':' && s[1] == ':') {
		ellipsis = true;
		s += 2;
		if (!*s)
			return true;
	}
	while (groups < 8) {
		unsigned long n;
		size_t c = hexdigits(s, &n);
		if (!c || n > 0xFFFF)
			return false;
		if (s[c] == '.') {
			if ((!ellipsis && groups != 6) || groups + 2 > 8 || !ipv4(s))
				return false;
			groups += 2;
			s += strlen(s);
			break;
		}
		groups++;
		s += c;
		if (!*s)
			break;
		if (*s != ':' || !s[1])
			return false;
		s++;
		if (*s == ':') {
			if (ellipsis)
				return false;
			ellipsis = true;
			if (!*++s)
				break;
		}
	}
	if (*s)
		return false;
	return groups < 8 ? ellipsis : !ellipsis;
}

bool tp__pod_is_ip(const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '.')
			return ipv4(s);
		if (*p == ':')
			return ipv6(s);
	}
	return false;
}

static void check_ip(tp_podv *v, const char *suffix, const char *ip)
{
	if (!tp__pod_is_ip(ip))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, ip),
			     "write an IPv4 or IPv6 address (10.9.8.7, 2001:db8::ffff)", IP_MSG);
}

/* ValidateDNS1123Subdomain: an Invalid with IsDNS1123Subdomain's message. */
static void check_subdomain(tp_podv *v, const char *suffix, const char *s, const char *hint)
{
	const char *msg = tp__check_dns1123_subdomain(s);
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, s), hint, "%s", msg);
}

/* A []string as Go's %#v prints it: []string{"a", "b"}. */
static const char *go_strings(tp_podv *v, const cJSON *list)
{
	tp_buf b = TP_BUF_INIT(1 << 16);
	int rc = tp_buf_adds(&b, "[]string{");
	for (const cJSON *s = list->child; s && !rc; s = s->next) {
		if (s != list->child)
			rc = tp_buf_adds(&b, ", ");
		if (!rc)
			rc = tp_buf_add_quoted(&b, cJSON_IsString(s) ? s->valuestring : "");
	}
	if (!rc)
		rc = tp_buf_addc(&b, '}');
	const char *out = rc ? "[]string{...}" : tp__podv_printf(v, "%s", b.data);
	tp_buf_free(&b);
	return out;
}

static int count(const cJSON *list)
{
	return cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 0;
}

static void check_nameservers(tp_podv *v, const cJSON *list)
{
	if (count(list) > MAX_NAMESERVERS)
		tp__podv_add(v, TP_FIELD_INVALID, ".nameservers", go_strings(v, list),
			     "keep at most 3 nameservers (the resolver reads no more)",
			     "must not have more than %d nameservers", MAX_NAMESERVERS);
	int i = 0;
	for (const cJSON *s = list ? list->child : NULL; s; s = s->next, i++) {
		size_t mark = tp__podv_push_index(v, ".nameservers", i);
		check_ip(v, NULL, cJSON_IsString(s) ? s->valuestring : "");
		tp__podv_pop(v, mark);
	}
}

static void check_searches(tp_podv *v, const cJSON *list)
{
	if (!list)
		return;
	size_t chars = 0;
	int n = 0;
	for (const cJSON *s = list->child; s; s = s->next, n++)
		chars += (n ? 1 : 0) + (cJSON_IsString(s) ? strlen(s->valuestring) : 0);
	if (n > MAX_SEARCH_PATHS)
		tp__podv_add(v, TP_FIELD_INVALID, ".searches", go_strings(v, list),
			     "keep at most 32 search domains",
			     "must not have more than %d search paths", MAX_SEARCH_PATHS);
	if (chars > MAX_SEARCH_CHARS)
		tp__podv_add(v, TP_FIELD_INVALID, ".searches", go_strings(v, list),
			     "shorten the search list to 2048 characters or fewer",
			     "must not have more than %d characters (including spaces) in the search "
			     "list", MAX_SEARCH_CHARS);
	int i = 0;
	for (const cJSON *s = list->child; s; s = s->next, i++) {
		const char *d = cJSON_IsString(s) ? s->valuestring : "";
		size_t len = strlen(d);
		/* a trailing dot (a fully qualified name) is allowed */
		const char *bare = len && d[len - 1] == '.' ? tp__podv_printf(v, "%.*s", (int)(len - 1), d)
							   : d;
		size_t mark = tp__podv_push_index(v, ".searches", i);
		if (bare)
			check_subdomain(v, NULL, bare, "use a lower-case DNS domain (\"svc.cluster.local\")");
		tp__podv_pop(v, mark);
	}
}

static void check_options(tp_podv *v, const cJSON *list)
{
	int i = 0;
	for (const cJSON *o = list ? list->child : NULL; o; o = o->next, i++) {
		const char *name = tp__mstr(o, "name");
		if (name && *name)
			continue;
		size_t mark = tp__podv_push_index(v, ".options", i);
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL, "name the resolver option (\"ndots\")",
			     "must not be empty");
		tp__podv_pop(v, mark);
	}
}

/* validatePodDNSConfig at spec: dnsPolicy as the API server's defaulting
 * leaves it (unset is ClusterFirst). */
int tp__pod_check_dns_config(tp_podv *v, const tp_pod_sm *spec)
{
	const cJSON *cfg = tp__vobj(spec->dns_config);
	const char *policy = tp__vstr(spec->dns_policy);
	const cJSON *ns = tp__marr(cfg, "nameservers");
	size_t mark = tp__podv_push(v, ".dnsConfig");
	if (policy && !strcmp(policy, "None") && !cfg) {
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL,
			     "give dnsConfig with at least one nameserver, or use another dnsPolicy",
			     "must provide `dnsConfig` when `dnsPolicy` is None");
	} else if (policy && !strcmp(policy, "None") && !count(ns)) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".nameservers", NULL,
			     "list at least one nameserver, or use another dnsPolicy",
			     "must provide at least one DNS nameserver when `dnsPolicy` is None");
	} else if (cfg) {
		check_nameservers(v, ns);
		check_searches(v, tp__marr(cfg, "searches"));
		check_options(v, tp__marr(cfg, "options"));
	}
	tp__podv_pop(v, mark);
	return v->rc;
}

/* ValidateHostAliases. */
int tp__pod_check_host_aliases(tp_podv *v, const tp_pod_sm *spec)
{
	const cJSON *list = tp__varr(spec->host_aliases);
	int i = 0;
	for (const cJSON *a = list ? list->child : NULL; a; a = a->next, i++) {
		size_t mark = tp__podv_push_index(v, ".hostAliases", i);
		const char *ip = tp__mstr(a, "ip");
		check_ip(v, ".ip", ip ? ip : "");
		const cJSON *names = tp__marr(a, "hostnames");
		int j = 0;
		for (const cJSON *h = names ? names->child : NULL; h; h = h->next, j++) {
			size_t inner = tp__podv_push_index(v, ".hostnames", j);
			check_subdomain(v, NULL, cJSON_IsString(h) ? h->valuestring : "",
					"use a lower-case host name (\"db.local\")");
			tp__podv_pop(v, inner);
		}
		tp__podv_pop(v, mark);
	}
	return v->rc;
}

/*
 * deploycheck_names.c — the names an install holds besides each object's
 * own: the namespace everything is in, the cert-manager overlay's Issuer,
 * Certificate, Secret, DNS names and annotations, and the scan that finds a
 * default name left behind under a namePrefix, nameSuffix or namespace.
 */
#include "tests/support/deploycheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/deploycheck_internal.h"

void dc_check_namespace(const cJSON *objs, const char *ns, dc_probs *p)
{
	const char *namespaced[] = { "Deployment",	   "Service",	     "ServiceAccount",
				     "PodDisruptionBudget", "Secret",	     "Role",
				     "RoleBinding",	   "Certificate",    "Issuer",
				     "ServiceMonitor",	   "PrometheusRule", "NetworkPolicy",
				     "ConfigMap" };
	for (size_t i = 0; i < sizeof(namespaced) / sizeof(namespaced[0]); i++) {
		const cJSON *o;
		for (int k = 0; (o = dc_find(objs, namespaced[i], k)); k++)
			if (strcmp(tp_meta_namespace(o), ns))
				dc_prob(p, "%s %s in namespace %s, want %s", namespaced[i],
					tp_meta_name(o), tp_meta_namespace(o), ns);
	}
	/* deploy/base creates none; components/namespace (opt-in) this one */
	const cJSON *n = dc_find(objs, "Namespace", 0);
	if (n && strcmp(tp_meta_name(n), ns))
		dc_prob(p, "Namespace %s, want %s", tp_meta_name(n), ns);
}

/* The Certificate's DNS names are the Service's where it is. */
static void check_dns_names(const cJSON *cert, const cJSON *svc, dc_probs *p)
{
	char want[4][256];
	const char *s = tp_meta_name(svc), *ns = tp_meta_namespace(svc);
	snprintf(want[0], sizeof(want[0]), "%s", s);
	snprintf(want[1], sizeof(want[1]), "%s.%s", s, ns);
	snprintf(want[2], sizeof(want[2]), "%s.%s.svc", s, ns);
	snprintf(want[3], sizeof(want[3]), "%s.%s.svc.cluster.local", s, ns);
	for (int i = 0; i < 4; i++)
		if (!dc_str_in(tp_get_array(cert, "spec.dnsNames"), want[i]))
			dc_prob(p, "Certificate: dnsNames lacks %s", want[i]);
	const char *cn = tp_get_str(cert, "spec.commonName");
	if (!cn || strcmp(cn, want[2]))
		dc_prob(p, "Certificate: commonName %s, want %s", cn ? cn : "(none)", want[2]);
	if (strcmp(tp_meta_namespace(cert), ns))
		dc_prob(p, "Certificate in namespace %s, not the Service's %s",
			tp_meta_namespace(cert), ns);
}

void dc_check_cert_manager(const cJSON *objs, dc_probs *p)
{
	dc_check_all(objs, p);
	const cJSON *cert = dc_find(objs, "Certificate", 0);
	const cJSON *issuer = dc_find(objs, "Issuer", 0);
	const cJSON *dep = dc_find(objs, "Deployment", 0);
	if (!issuer || !tp_get_object(issuer, "spec.selfSigned"))
		dc_prob(p, "no self-signed Issuer");
	const char *iref = tp_get_str(cert, "spec.issuerRef.name");
	if (!cert || !iref || strcmp(iref, tp_meta_name(issuer)))
		dc_prob(p, "Certificate: issuerRef %s is not the Issuer %s", iref ? iref : "(none)",
			issuer ? tp_meta_name(issuer) : "(none)");
	if (dc_arg(objs, "--manage-certs") || dc_find(objs, "Secret", 0) ||
	    dc_role_for(objs, "secrets"))
		dc_prob(p, "the managed mode's flag, Secret or RBAC is still there");
	const char *secret = tp_get_str(cert, "spec.secretName");
	const cJSON *vol;
	bool mounted = false;
	cJSON_ArrayForEach(vol, tp_get_array(dep, "spec.template.spec.volumes"))
	{
		const char *sn = tp_get_str(vol, "secret.secretName");
		mounted |= sn && secret && !strcmp(sn, secret);
	}
	if (!mounted)
		dc_prob(p, "Certificate secretName %s is not mounted by the Deployment",
			secret ? secret : "(none)");
	check_dns_names(cert, dc_find(objs, "Service", 0), p);
	char inject[512];
	snprintf(inject, sizeof(inject), "%s/%s", tp_meta_namespace(cert), tp_meta_name(cert));
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	for (int i = 0; i < 2; i++) {
		const cJSON *ann = tp_get_object(dc_find(objs, kinds[i], 0), "metadata.annotations");
		const char *v = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(ann, "cert-manager.io/inject-ca-from"));
		if (!v || strcmp(v, inject))
			dc_prob(p, "%s: cert-manager.io/inject-ca-from %s, want %s", kinds[i],
				v ? v : "(none)", inject);
	}
}

/* ------------------------------------------------ default names left */

/* Fields that hold no object's name: label keys and values (a prefix leaves
 * labels alone), images, and an alert group's name and its prose. path is
 * dotted, without list indices. */
static bool holds_no_name(const char *kind, const char *path)
{
	if (strstr(path, "labels.") || strstr(path, "Labels.") ||
	    !strcmp(path, "spec.template.spec.containers.image"))
		return true;
	if (!strcmp(kind, "Service") && !strncmp(path, "spec.selector.", 14))
		return true;
	return !strcmp(kind, "PrometheusRule") &&
	       (!strcmp(path, "spec.groups.name") || strstr(path, ".annotations."));
}

typedef struct scan {
	const cJSON *defaults; /* array of the default names */
	const cJSON *obj;
	dc_probs *p;
} scan;

/* A string's words (split where a name ends inside a DNS name, a path, a
 * PromQL selector, JSON, an annotation's ns/name) against the defaults. */
static void scan_string(const scan *s, const char *path, const char *v)
{
	static const char *const seps = " \t\n./\"'=,{}()[]:;@";
	const char *w = v;
	for (w += strspn(w, seps); *w; w += strspn(w, seps)) {
		size_t n = strcspn(w, seps);
		const cJSON *d;
		cJSON_ArrayForEach(d, s->defaults)
			if (strlen(d->valuestring) == n && !strncmp(w, d->valuestring, n)) {
				dc_prob(s->p, "%s %s: %s \"%.80s\" still names %s",
					tp_get_str(s->obj, "kind"), tp_meta_name(s->obj), path, v,
					d->valuestring);
				return;
			}
		w += n;
	}
}

static void scan_value(const scan *s, const cJSON *v, char *path, size_t len, size_t cap)
{
	const char *kind = tp_get_str(s->obj, "kind");
	if (holds_no_name(kind ? kind : "", path))
		return;
	if (cJSON_IsString(v)) {
		scan_string(s, path, v->valuestring);
		return;
	}
	const cJSON *c;
	cJSON_ArrayForEach(c, v)
	{
		size_t l = len;
		if (cJSON_IsObject(v))
			l += snprintf(path + len, cap - len, "%s%s", len ? "." : "", c->string);
		path[l < cap ? l : cap - 1] = '\0';
		scan_value(s, c, path, l < cap ? l : cap - 1, cap);
		path[len] = '\0';
	}
}

/* Every object's name and namespace in defaults, once each. */
static cJSON *default_names(const cJSON *defaults)
{
	cJSON *names = cJSON_CreateArray();
	const cJSON *o;
	cJSON_ArrayForEach(o, defaults)
	{
		const char *two[] = { tp_meta_name(o), tp_meta_namespace(o) };
		for (int i = 0; i < 2; i++)
			if (two[i] && two[i][0] && !dc_str_in(names, two[i]))
				cJSON_AddItemToArray(names, cJSON_CreateString(two[i]));
	}
	return names;
}

void dc_check_names_follow(const cJSON *defaults, const cJSON *objs, dc_probs *p)
{
	cJSON *names = default_names(defaults);
	const cJSON *o;
	cJSON_ArrayForEach(o, objs)
	{
		scan s = { names, o, p };
		char path[1024] = "";
		scan_value(&s, o, path, 0, sizeof(path));
	}
	cJSON_Delete(names);
}

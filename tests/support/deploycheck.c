/*
 * deploycheck.c — the checks of deploy/ (see deploycheck.h): the
 * Deployment's pod, the Service and the PodDisruptionBudget. RBAC and the
 * webhook configurations: deploycheck_rbac_hooks.c.
 */
#include "tests/support/deploycheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/deploycheck_internal.h"
#include "tests/support/testutil.h"
#include "webhook/cli/serve.h"

/* ------------------------------------------------------------ problems */

void dc_probs_init(dc_probs *p)
{
	p->n = 0;
	tp_buf_init(&p->text, 1 << 20);
}

void dc_prob(dc_probs *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tp_buf_adds(&p->text, "  - ");
	tp_buf_vaddf(&p->text, fmt, ap);
	tp_buf_addc(&p->text, '\n');
	va_end(ap);
	p->n++;
}

bool dc_probs_has(const dc_probs *p, const char *part)
{
	return p->text.data && strstr(p->text.data, part);
}

/* ------------------------------------------------- the Deployment's pod */


/* Value after flag in the container's args (or command), or NULL. */
const char *dc_arg_value(const cJSON *ctr, const char *flag)
{
	const char *lists[] = { "command", "args" };
	for (int l = 0; l < 2; l++) {
		const cJSON *a = tp_get_array(ctr, lists[l]);
		for (int i = 0; a && i + 1 < cJSON_GetArraySize(a); i++) {
			const char *s = cJSON_GetStringValue(cJSON_GetArrayItem(a, i));
			if (s && !strcmp(s, flag))
				return cJSON_GetStringValue(cJSON_GetArrayItem(a, i + 1));
		}
	}
	return NULL;
}

static bool has_arg(const cJSON *ctr, const char *s)
{
	return dc_str_in(tp_get_array(ctr, "args"), s) || dc_str_in(tp_get_array(ctr, "command"), s);
}

static const cJSON *container(const cJSON *objs)
{
	return cJSON_GetArrayItem(tp_get_array(dc_find(objs, "Deployment", 0),
					       "spec.template.spec.containers"), 0);
}

const char *dc_arg(const cJSON *objs, const char *flag)
{
	return dc_arg_value(container(objs), flag);
}

static long long port_of_addr(const char *addr)
{
	const char *c = addr ? strrchr(addr, ':') : NULL;
	return c ? atoll(c + 1) : -1;
}

/* A container port by name or number ("webhook" or 9443) → its number, or -1. */
static long long resolve_port(const cJSON *ctr, const cJSON *port)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, tp_get_array(ctr, "ports"))
	{
		long long n = -1;
		tp_get_int(p, "containerPort", &n);
		if (cJSON_IsNumber(port) && port->valuedouble == (double)n)
			return n;
		const char *name = tp_get_str(p, "name");
		if (cJSON_IsString(port) && name && !strcmp(name, port->valuestring))
			return n;
	}
	return -1;
}

static long long named_port(const cJSON *ctr, const char *name)
{
	cJSON *s = cJSON_CreateString(name);
	long long n = resolve_port(ctr, s);
	cJSON_Delete(s);
	return n;
}

static const char *or_default(const char *v, const char *dflt)
{
	return v ? v : dflt;
}


/* The pod's facts for a checker that leaves reporting their absence to
 * check_deployment. */
bool dc_quiet_pod_facts(const cJSON *objs, podfacts *f)
{
	dc_probs quiet;
	dc_probs_init(&quiet);
	bool ok = dc_pod_facts(objs, f, &quiet);
	tp_buf_free(&quiet.text);
	return ok;
}

bool dc_pod_facts(const cJSON *objs, podfacts *f, dc_probs *p)
{
	memset(f, 0, sizeof(*f));
	if (dc_count(objs, "Deployment") != 1) {
		dc_prob(p, "want exactly one Deployment, found %d", dc_count(objs, "Deployment"));
		return false;
	}
	f->dep = dc_find(objs, "Deployment", 0);
	f->pod = tp_get_object(f->dep, "spec.template.spec");
	const cJSON *ctrs = tp_get_array(f->pod, "containers");
	if (!ctrs || cJSON_GetArraySize(ctrs) != 1) {
		dc_prob(p, "Deployment: want one container");
		return false;
	}
	f->ctr = cJSON_GetArrayItem(ctrs, 0);
	f->listen = or_default(dc_arg_value(f->ctr, "--listen"), ":9443"); /* serve's defaults */
	f->metrics_listen = or_default(dc_arg_value(f->ctr, "--metrics-listen"), ":8080");
	f->cert = dc_arg_value(f->ctr, "--tls-cert");
	f->key = dc_arg_value(f->ctr, "--tls-key");
	f->managed = has_arg(f->ctr, "--manage-certs");
	f->secret = or_default(dc_arg_value(f->ctr, "--cert-secret"), TW_SERVE_SECRET);
	f->service = or_default(dc_arg_value(f->ctr, "--service"), TW_SERVE_SERVICE);
	f->validating = or_default(dc_arg_value(f->ctr, "--validating-webhook"), TW_SERVE_VALIDATING);
	f->mutating = or_default(dc_arg_value(f->ctr, "--mutating-webhook"), TW_SERVE_MUTATING);
	const char *g = dc_arg_value(f->ctr, "--shutdown-grace");
	f->grace = g ? atoll(g) : 10;
	f->registers = has_arg(f->ctr, "--register-webhooks");
	f->failure_policy = or_default(dc_arg_value(f->ctr, "--failure-policy"), "Fail");
	const char *t = dc_arg_value(f->ctr, "--webhook-timeout");
	f->timeout_s = t ? (unsigned)atoi(t) : 5;
	const cJSON *args = tp_get_array(f->ctr, "args");
	for (int i = 0; i + 1 < cJSON_GetArraySize(args) && f->nexempt < 16; i++) {
		const char *a = cJSON_GetStringValue(cJSON_GetArrayItem(args, i));
		if (a && !strcmp(a, "--exempt-namespace"))
			f->exempt[f->nexempt++] = cJSON_GetStringValue(cJSON_GetArrayItem(args, i + 1));
	}
	f->webhook_port = port_of_addr(f->listen);
	f->metrics_port = port_of_addr(f->metrics_listen);
	return true;
}

/* Liveness on the plain metrics port (it answers before a managed pair
 * exists), readiness on the TLS port (it says whether the pair is served). */
static void check_probe(const podfacts *f, const char *which, const char *path, bool tls,
			dc_probs *p)
{
	const cJSON *pr = tp_get_object(f->ctr, which);
	const char *got = tp_get_str(pr, "httpGet.path");
	const char *scheme = tp_get_str(pr, "httpGet.scheme");
	if (!got || strcmp(got, path))
		dc_prob(p, "%s: path %s, want %s", which, got ? got : "(none)", path);
	if (strcmp(scheme ? scheme : "HTTP", tls ? "HTTPS" : "HTTP"))
		dc_prob(p, "%s: scheme %s, want %s", which, scheme ? scheme : "(none, HTTP)",
			tls ? "HTTPS (the TLS port)" : "HTTP (the metrics port)");
	long long port = resolve_port(f->ctr, tp_get(pr, "httpGet.port"));
	long long want = tls ? f->webhook_port : f->metrics_port;
	if (port != want)
		dc_prob(p, "%s: port %lld, want the %s port %lld", which, port,
			tls ? "--listen" : "--metrics-listen", want);
}

/* A securityContext field, from the container or else the pod. */
static const cJSON *sec(const podfacts *f, const char *field)
{
	char path[128];
	snprintf(path, sizeof(path), "securityContext.%s", field);
	const cJSON *v = tp_get(f->ctr, path);
	return v ? v : tp_get(f->pod, path);
}

/* Files mode: a read-only Secret mounted where --tls-cert points. */
static void check_file_certs(const podfacts *f, dc_probs *p)
{
	if (!f->cert || !f->key)
		dc_prob(p, "container: want --manage-certs, or --tls-cert and --tls-key");
	const cJSON *m;
	bool mounted = false;
	cJSON_ArrayForEach(m, tp_get_array(f->ctr, "volumeMounts"))
	{
		const char *mp = tp_get_str(m, "mountPath"), *vn = tp_get_str(m, "name");
		if (!mp || !vn || !f->cert || strncmp(f->cert, mp, strlen(mp)))
			continue;
		const cJSON *vol = tp_find_named(tp_get_array(f->pod, "volumes"), "name", vn);
		if (!tp_get_str(vol, "secret.secretName"))
			dc_prob(p, "volume %s: want a Secret", vn);
		else if (!tp_get_true(m, "readOnly"))
			dc_prob(p, "volumeMount %s: want readOnly: true", mp);
		else
			mounted = true;
	}
	if (!mounted)
		dc_prob(p, "container: no read-only Secret mounted where --tls-cert points");
}

/* Managed mode: what the flags name exists, no certificate files at all. */
static void check_managed_certs(const cJSON *objs, const podfacts *f, dc_probs *p)
{
	if (f->cert || f->key || tp_get_array(f->ctr, "volumeMounts"))
		dc_prob(p, "container: --manage-certs takes the pair from the API, no --tls-cert, "
			   "--tls-key or mounted files");
	const cJSON *s = dc_find_named(objs, "Secret", f->secret);
	if (!s)
		dc_prob(p, "Secret %s (--cert-secret) not found: the server never creates it",
			f->secret);
	else if (strcmp(tp_meta_namespace(s), tp_meta_namespace(f->dep)))
		dc_prob(p, "Secret %s in namespace %s, not the server's %s", f->secret,
			tp_meta_namespace(s), tp_meta_namespace(f->dep));
	else if (tp_get(s, "data") || tp_get(s, "stringData"))
		dc_prob(p, "Secret %s: ship it empty (the server fills it; an apply must not "
			   "overwrite its CA)", f->secret);
	if (!dc_find_named(objs, "Service", f->service))
		dc_prob(p, "Service %s (--service: the certificate's name) not found", f->service);
}

static void check_security(const podfacts *f, dc_probs *p)
{
	if (!cJSON_IsTrue(sec(f, "runAsNonRoot")))
		dc_prob(p, "securityContext: want runAsNonRoot: true");
	const cJSON *uid = sec(f, "runAsUser");
	if (uid && (!cJSON_IsNumber(uid) || uid->valuedouble == 0))
		dc_prob(p, "securityContext: runAsUser must be a non-zero number");
	if (!tp_get_true(f->ctr, "securityContext.readOnlyRootFilesystem"))
		dc_prob(p, "container securityContext: want readOnlyRootFilesystem: true");
	const cJSON *ape = tp_get(f->ctr, "securityContext.allowPrivilegeEscalation");
	if (!cJSON_IsFalse(ape))
		dc_prob(p, "container securityContext: want allowPrivilegeEscalation: false");
	const cJSON *drop = tp_get_array(f->ctr, "securityContext.capabilities.drop");
	if (!dc_str_in(drop, "ALL"))
		dc_prob(p, "container securityContext: want capabilities.drop [ALL]");
	if (tp_get(f->ctr, "securityContext.capabilities.add"))
		dc_prob(p, "container securityContext: no capabilities may be added");
	if (tp_get_true(f->ctr, "securityContext.privileged"))
		dc_prob(p, "container securityContext: privileged");
	const char *sc = tp_get_str(f->ctr, "securityContext.seccompProfile.type");
	sc = sc ? sc : tp_get_str(f->pod, "securityContext.seccompProfile.type");
	if (!sc || strcmp(sc, "RuntimeDefault"))
		dc_prob(p, "securityContext: want seccompProfile RuntimeDefault");
}

static void check_lifecycle(const podfacts *f, dc_probs *p)
{
	const char *req[] = { "resources.requests.cpu", "resources.requests.memory",
			      "resources.limits.memory" };
	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (!tp_get_str(f->ctr, req[i]))
			dc_prob(p, "container: %s not set", req[i]);
	/* shutdown: preStop wait + --shutdown-grace must fit in the grace period */
	long long tgps = 30, pre = 0;
	tp_get_int(f->pod, "terminationGracePeriodSeconds", &tgps);
	if (tp_get(f->ctr, "lifecycle.preStop.exec"))
		dc_prob(p, "container: a preStop exec hook, but the image has no shell or sleep "
			   "binary: use lifecycle.preStop.sleep");
	else if (!tp_get_int(f->ctr, "lifecycle.preStop.sleep.seconds", &pre))
		dc_prob(p, "container: no preStop hook (endpoints must drop the pod before SIGTERM)");
	if (tgps < pre + f->grace)
		dc_prob(p, "terminationGracePeriodSeconds %lld < preStop %lld s + --shutdown-grace "
			   "%lld s", tgps, pre, f->grace);
	/* spread over nodes */
	bool spread = false;
	const cJSON *t;
	cJSON_ArrayForEach(t, tp_get_array(f->pod, "topologySpreadConstraints"))
	{
		const char *k = tp_get_str(t, "topologyKey");
		spread |= k && !strcmp(k, "kubernetes.io/hostname");
	}
	const char *aa[] = { "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
			     "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution" };
	for (int i = 0; i < 2; i++)
		cJSON_ArrayForEach(t, tp_get_array(f->pod, aa[i]))
		{
			const char *k = tp_get_str(t, "topologyKey");
			k = k ? k : tp_get_str(t, "podAffinityTerm.topologyKey");
			spread |= k && !strcmp(k, "kubernetes.io/hostname");
		}
	if (!spread)
		dc_prob(p, "pod: no topology spread or anti-affinity over kubernetes.io/hostname");
}

/* The names the server uses (the Service its certificate covers; managed:
 * the Secret and the configurations it writes), passed as flags: a default
 * the server falls back on follows no namePrefix, nameSuffix or chart
 * fullname, and kustomize can only rewrite what is written down. */
static void check_names_passed(const podfacts *f, dc_probs *p)
{
	static const struct {
		const char *flag, *dflt;
		bool managed_only;
	} names[] = {
		{ "--service", TW_SERVE_SERVICE, false },
		{ "--cert-secret", TW_SERVE_SECRET, true },
		{ "--validating-webhook", TW_SERVE_VALIDATING, false },
		{ "--mutating-webhook", TW_SERVE_MUTATING, false },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((f->managed || !names[i].managed_only) && !dc_arg_value(f->ctr, names[i].flag))
			dc_prob(p, "container: %s not passed: the server's default %s would not "
				   "follow a namePrefix, nameSuffix or the chart's fullname",
				names[i].flag, names[i].dflt);
}

static void check_deployment(const cJSON *objs, dc_probs *p)
{
	podfacts f;
	if (!dc_pod_facts(objs, &f, p))
		return;
	long long replicas = 0;
	if (!tp_get_int(f.dep, "spec.replicas", &replicas) || replicas != 2)
		dc_prob(p, "Deployment: replicas %lld, want 2", replicas);
	if (!has_arg(f.ctr, "serve") || !has_arg(f.ctr, "--kube"))
		dc_prob(p, "container: want `serve --kube`");
	if (f.webhook_port != 9443 || named_port(f.ctr, "webhook") != f.webhook_port)
		dc_prob(p, "container: port `webhook` %lld does not match --listen %s (9443)",
			named_port(f.ctr, "webhook"), f.listen);
	if (named_port(f.ctr, "metrics") != f.metrics_port || f.metrics_port != 8080)
		dc_prob(p, "container: port `metrics` %lld does not match --metrics-listen %s",
			named_port(f.ctr, "metrics"), f.metrics_listen);
	check_probe(&f, "livenessProbe", "/healthz", false, p);
	check_probe(&f, "readinessProbe", "/readyz", true, p);
	check_names_passed(&f, p);
	if (f.managed)
		check_managed_certs(objs, &f, p);
	else
		check_file_certs(&f, p);
	check_security(&f, p);
	check_lifecycle(&f, p);
}

/* Every label of selector is on the pod template. */
static bool selects_pods(const cJSON *selector, const cJSON *dep)
{
	const cJSON *labels = tp_get_object(dep, "spec.template.metadata.labels");
	const cJSON *l;
	if (!cJSON_IsObject(selector) || !cJSON_GetArraySize(selector))
		return false;
	cJSON_ArrayForEach(l, selector)
	{
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, l->string));
		if (!v || !cJSON_IsString(l) || strcmp(v, l->valuestring))
			return false;
	}
	return true;
}

static void check_service_pdb(const cJSON *objs, dc_probs *p)
{
	podfacts f;
	if (!dc_quiet_pod_facts(objs, &f))
		return;
	const cJSON *svc = dc_find(objs, "Service", 0);
	if (!svc || dc_count(objs, "Service") != 1) {
		dc_prob(p, "want exactly one Service");
		return;
	}
	if (!selects_pods(tp_get_object(svc, "spec.selector"), f.dep))
		dc_prob(p, "Service: selector does not select the Deployment's pods");
	bool https = false, metrics = false;
	const cJSON *sp;
	cJSON_ArrayForEach(sp, tp_get_array(svc, "spec.ports"))
	{
		long long port = 0;
		tp_get_int(sp, "port", &port);
		long long target = resolve_port(f.ctr, tp_get(sp, "targetPort"));
		if (port == 443)
			https = target == f.webhook_port;
		if (port == 8080)
			metrics = target == f.metrics_port;
	}
	if (!https)
		dc_prob(p, "Service: port 443 does not reach the container port of --listen %s",
			f.listen);
	if (!metrics)
		dc_prob(p, "Service: port 8080 does not reach --metrics-listen %s", f.metrics_listen);
	const char *sns = tp_meta_namespace(svc), *dns = tp_meta_namespace(f.dep);
	if (strcmp(sns, dns))
		dc_prob(p, "Service namespace %s differs from the Deployment's %s", sns, dns);
	const cJSON *pdb = dc_find(objs, "PodDisruptionBudget", 0);
	long long min = -1;
	if (!pdb || !tp_get_int(pdb, "spec.minAvailable", &min) || min != 1)
		dc_prob(p, "PodDisruptionBudget: want minAvailable: 1 (got %lld)", min);
	else if (!selects_pods(tp_get_object(pdb, "spec.selector.matchLabels"), f.dep))
		dc_prob(p, "PodDisruptionBudget: selector does not select the Deployment's pods");
}

/* The Namespace enforces Pod Security's restricted level, and the pod is one
 * it admits: besides check_security's fields, no host namespaces or ports
 * and only the volume types the level allows. */
static void check_restricted(const cJSON *objs, dc_probs *p)
{
	const cJSON *ns = dc_find(objs, "Namespace", 0);
	static const char *const modes[] = { "enforce", "audit", "warn" };
	for (int i = 0; ns && i < 3; i++) {
		char key[64];
		snprintf(key, sizeof(key), "pod-security.kubernetes.io/%s", modes[i]);
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			tp_get_object(ns, "metadata.labels"), key));
		if (!v || strcmp(v, "restricted"))
			dc_prob(p, "Namespace %s: label %s is %s, want restricted", tp_meta_name(ns),
				key, v ? v : "(none)");
	}
	podfacts f;
	if (!dc_quiet_pod_facts(objs, &f))
		return;
	static const char *const host[] = { "hostNetwork", "hostPID", "hostIPC" };
	for (int i = 0; i < 3; i++)
		if (tp_get_true(f.pod, host[i]))
			dc_prob(p, "pod: %s is not allowed at the restricted level", host[i]);
	const cJSON *it;
	cJSON_ArrayForEach(it, tp_get_array(f.ctr, "ports"))
		if (tp_get(it, "hostPort"))
			dc_prob(p, "container: hostPort is not allowed at the restricted level");
	static const char *const allowed[] = { "name",	    "secret",	 "configMap", "emptyDir",
					       "projected", "downwardAPI", "ephemeral",
					       "persistentVolumeClaim", "csi" };
	cJSON_ArrayForEach(it, tp_get_array(f.pod, "volumes"))
	{
		const cJSON *field;
		cJSON_ArrayForEach(field, it)
		{
			bool ok = false;
			for (size_t k = 0; k < sizeof(allowed) / sizeof(allowed[0]); k++)
				ok |= !strcmp(field->string, allowed[k]);
			if (!ok)
				dc_prob(p, "volume %s: %s is not allowed at the restricted level",
					tp_get_str(it, "name"), field->string);
		}
	}
}

void dc_check_all(const cJSON *objs, dc_probs *p)
{
	/* deploy/base creates none; components/namespace (opt-in) one */
	if (dc_count(objs, "Namespace") > 1)
		dc_prob(p, "want at most one Namespace");
	check_restricted(objs, p);
	check_deployment(objs, p);
	check_service_pdb(objs, p);
	dc_check_rbac(objs, p);
	dc_check_webhooks(objs, p);
}


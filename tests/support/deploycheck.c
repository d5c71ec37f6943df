/*
 * deploycheck.c — the checks of deploy/ (see deploycheck.h).
 */
#include "tests/support/deploycheck.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/testutil.h"
#include "webhook/cli/serve.h"
#include "webhook/admission/routes.h"
#include "webhook/cluster/kubeapi.h"

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

/* ---------------------------------------------------------- loading */

/* Objects of text appended to arr; false (and a message) on a parse error. */
static bool load_into(cJSON *arr, const char *text, size_t len, const char *name)
{
	tp_docs *docs = NULL;
	tp_load_error err;
	if (tp_load(text, len, NULL, &docs, &err)) {
		fprintf(stderr, "%s: document %d, line %d: %s\n", name, err.doc, err.line, err.msg);
		return false;
	}
	for (size_t i = 0; i < tp_docs_count(docs); i++) {
		cJSON *o = tp_docs_take(docs, i);
		if (o)
			cJSON_AddItemToArray(arr, o);
	}
	tp_docs_free(docs);
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

cJSON *dc_load_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	cJSON *arr = cJSON_CreateArray();
	char *names[64];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 64) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml") &&
		    strcmp(e->d_name, "kustomization.yaml") && strcmp(e->d_name, "kustomizeconfig.yaml"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		size_t len;
		char *text = tt_read_file(path, &len);
		ok = ok && text && load_into(arr, text, len, path);
		free(text);
		free(names[i]);
	}
	if (!ok) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

const char *dc_tool(const char *name)
{
	static char paths[2][64];
	int i = strcmp(name, "kubectl") != 0;
	snprintf(paths[i], sizeof(paths[i]), DC_TOOLS_DIR "/%s", name);
	if (access(paths[i], X_OK))
		snprintf(paths[i], sizeof(paths[i]), "%s", name);
	return paths[i];
}

/* The first line of cmd's output that starts with prefix, after it; "" if none. */
static void version_line(const char *cmd, const char *prefix, char *out, size_t n)
{
	char *text = NULL;
	out[0] = '\0';
	if (tt_run(cmd, &text, NULL) == 0 && text) {
		size_t plen = strlen(prefix);
		for (const char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0'))
			if (!strncmp(l, prefix, plen)) {
				snprintf(out, n, "%.*s", (int)strcspn(l + plen, "\n"), l + plen);
				break;
			}
	}
	free(text);
}

/* kubectl before 1.28 prints version.Info{..., GitVersion:"v1.20.2", ...}:
 * keep the version alone. */
static void keep_git_version(char *v)
{
	const char *gv = strstr(v, "GitVersion:\"");
	if (gv) {
		gv += strlen("GitVersion:\"");
		size_t n = strcspn(gv, "\"");
		memmove(v, gv, n);
		v[n] = '\0';
	}
}

static dc_tool_state kubectl_state(char *why, size_t n)
{
	char cmd[256], v[512];
	snprintf(cmd, sizeof(cmd), "'%s' version --client 2>/dev/null", dc_tool("kubectl"));
	version_line(cmd, "Kustomize Version: v", v, sizeof(v));
	if (atoi(v) >= 5)
		return DC_TOOL_OK;
	version_line(cmd, "Client Version: ", v, sizeof(v));
	keep_git_version(v);
	if (!v[0]) {
		snprintf(why, n, "no kubectl (%s)", dc_tool("kubectl"));
		return DC_TOOL_ABSENT;
	}
	snprintf(why, n, "%s is kubectl %.40s, whose kustomize cannot render deploy/ (kustomize v5, "
		 "kubectl 1.27 or newer, needed): run sh tests/deps.sh, which puts kubectl 1.32 in "
		 DC_TOOLS_DIR, dc_tool("kubectl"), v);
	return DC_TOOL_OLD;
}

static dc_tool_state helm_state(char *why, size_t n)
{
	char cmd[256], v[64];
	snprintf(cmd, sizeof(cmd), "'%s' version --template 'helm {{.Version}}' 2>/dev/null",
		 dc_tool("helm"));
	version_line(cmd, "helm v", v, sizeof(v));
	if (!v[0]) {
		snprintf(why, n, "no helm (%s)", dc_tool("helm"));
		return DC_TOOL_ABSENT;
	}
	const char *minor = strchr(v, '.');
	if (atoi(v) == 3 && minor && atoi(minor + 1) >= 8)
		return DC_TOOL_OK;
	snprintf(why, n, "%s is helm v%s, not Helm 3.8 or a newer 3: run sh tests/deps.sh, which puts Helm 3.17 in "
		 DC_TOOLS_DIR, dc_tool("helm"), v);
	return DC_TOOL_OLD;
}

/* Each tool is asked once per test binary. */
dc_tool_state dc_kubectl(char *why, size_t n)
{
	static int state = -1;
	static char text[512];
	if (state < 0)
		state = kubectl_state(text, sizeof(text));
	snprintf(why, n, "%s", text);
	return (dc_tool_state)state;
}

dc_tool_state dc_helm(char *why, size_t n)
{
	static int state = -1;
	static char text[512];
	if (state < 0)
		state = helm_state(text, sizeof(text));
	snprintf(why, n, "%s", text);
	return (dc_tool_state)state;
}

cJSON *dc_parse(const char *text, const char *name)
{
	cJSON *arr = cJSON_CreateArray();
	if (!load_into(arr, text, strlen(text), name)) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

cJSON *dc_render(const char *dir, char *err, size_t errlen)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "'%s' kustomize '%s'", dc_tool("kubectl"), dir);
	return dc_run_render(cmd, err, errlen);
}

cJSON *dc_run_render(const char *cmd, char *err, size_t errlen)
{
	char *out = NULL, *e = NULL;
	int rc = tt_run(cmd, &out, &e);
	cJSON *arr = NULL;
	if (rc != 0)
		snprintf(err, errlen, "%s: exit %d: %s", cmd, rc, e ? e : "");
	else if (!(arr = dc_parse(out, cmd)))
		snprintf(err, errlen, "%s: output does not parse", cmd);
	free(out);
	free(e);
	return arr;
}

const cJSON *dc_find(const cJSON *objs, const char *kind, int nth)
{
	const cJSON *o;
	cJSON_ArrayForEach(o, objs)
	{
		const char *k = tp_get_str(o, "kind");
		if (k && !strcmp(k, kind) && nth-- == 0)
			return o;
	}
	return NULL;
}

const cJSON *dc_find_named(const cJSON *objs, const char *kind, const char *name)
{
	const cJSON *o;
	for (int i = 0; (o = dc_find(objs, kind, i)); i++)
		if (name && !strcmp(tp_meta_name(o), name))
			return o;
	return NULL;
}

int dc_count(const cJSON *objs, const char *kind)
{
	int n = 0;
	while (dc_find(objs, kind, n))
		n++;
	return n;
}

bool dc_str_in(const cJSON *arr, const char *s)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, s))
			return true;
	return false;
}

/* The set of strings of arr is exactly the n given. */
static bool str_set_is(const cJSON *arr, const char *const *want, int n)
{
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n)
		return false;
	for (int i = 0; i < n; i++)
		if (!dc_str_in(arr, want[i]))
			return false;
	return true;
}

/* ------------------------------------------------- the Deployment's pod */

typedef struct podfacts {
	const cJSON *dep, *pod, *ctr;
	const char *listen, *metrics_listen, *cert, *key;
	bool managed; /* --manage-certs */
	const char *secret, *service, *validating, *mutating; /* as the flags name them */
	long long grace; /* --shutdown-grace */
	long long webhook_port, metrics_port;
} podfacts;

/* Value after flag in the container's args (or command), or NULL. */
static const char *arg_value(const cJSON *ctr, const char *flag)
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
	return arg_value(container(objs), flag);
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

static bool pod_facts(const cJSON *objs, podfacts *f, dc_probs *p);

/* The pod's facts for a checker that leaves reporting their absence to
 * check_deployment. */
static bool quiet_pod_facts(const cJSON *objs, podfacts *f)
{
	dc_probs quiet;
	dc_probs_init(&quiet);
	bool ok = pod_facts(objs, f, &quiet);
	tp_buf_free(&quiet.text);
	return ok;
}

static bool pod_facts(const cJSON *objs, podfacts *f, dc_probs *p)
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
	f->listen = or_default(arg_value(f->ctr, "--listen"), ":9443"); /* serve's defaults */
	f->metrics_listen = or_default(arg_value(f->ctr, "--metrics-listen"), ":8080");
	f->cert = arg_value(f->ctr, "--tls-cert");
	f->key = arg_value(f->ctr, "--tls-key");
	f->managed = has_arg(f->ctr, "--manage-certs");
	f->secret = or_default(arg_value(f->ctr, "--cert-secret"), TW_SERVE_SECRET);
	f->service = or_default(arg_value(f->ctr, "--service"), TW_SERVE_SERVICE);
	f->validating = or_default(arg_value(f->ctr, "--validating-webhook"), TW_SERVE_VALIDATING);
	f->mutating = or_default(arg_value(f->ctr, "--mutating-webhook"), TW_SERVE_MUTATING);
	const char *g = arg_value(f->ctr, "--shutdown-grace");
	f->grace = g ? atoll(g) : 10;
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
	if (!dc_find_named(objs, "ValidatingWebhookConfiguration", f->validating))
		dc_prob(p, "ValidatingWebhookConfiguration %s (--validating-webhook) not found",
			f->validating);
	if (!dc_find_named(objs, "MutatingWebhookConfiguration", f->mutating))
		dc_prob(p, "MutatingWebhookConfiguration %s (--mutating-webhook) not found",
			f->mutating);
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
	const cJSON *cmd = tp_get_array(f->ctr, "lifecycle.preStop.exec.command");
	if (cmd) {
		const cJSON *last = cJSON_GetArrayItem(cmd, cJSON_GetArraySize(cmd) - 1);
		pre = cJSON_IsString(last) ? atoll(last->valuestring) : 0;
	} else if (!tp_get_int(f->ctr, "lifecycle.preStop.sleep.seconds", &pre)) {
		dc_prob(p, "container: no preStop hook (endpoints must drop the pod before SIGTERM)");
	}
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

static void check_deployment(const cJSON *objs, dc_probs *p)
{
	podfacts f;
	if (!pod_facts(objs, &f, p))
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
	if (!quiet_pod_facts(objs, &f))
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

/* ------------------------------------------------------------- RBAC */

/* One rule the server needs, and whether a role grants it. */
struct need {
	const char *group;
	const char *const *resources;
	int nres;
	const char *const *verbs;
	int nverbs;
	const char *name; /* resourceNames: [name], or NULL */
	const char *const *names; /* resourceNames: these (when nnames) */
	int nnames;
};

static bool rule_is(const cJSON *r, const struct need *n)
{
	const cJSON *names = tp_get_array(r, "resourceNames");
	return str_set_is(tp_get_array(r, "apiGroups"), &n->group, 1) &&
	       str_set_is(tp_get_array(r, "resources"), n->resources, n->nres) &&
	       str_set_is(tp_get_array(r, "verbs"), n->verbs, n->nverbs) &&
	       (n->nnames ? str_set_is(names, n->names, n->nnames)
	       : n->name  ? str_set_is(names, &n->name, 1)
			  : !names);
}

static const char *const read_verbs[] = { "get", "list", "watch" };
static const char *const get_only[] = { "get" };
static const char *const write_verbs[] = { "get", "update", "list", "watch" };
static const char *const follow_verbs[] = { "list", "watch" };

/* A role's rules are exactly needs[] (any order); problems name the role. */
static void role_is(const cJSON *role, const struct need *needs, int n, const char *what,
		    dc_probs *p)
{
	if (!role) {
		dc_prob(p, "%s: not found", what);
		return;
	}
	const cJSON *rules = tp_get_array(role, "rules");
	int seen = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, rules)
	{
		bool known = false;
		for (int i = 0; i < n && !known; i++)
			known = rule_is(r, &needs[i]);
		if (!known)
			dc_prob(p, "%s: a rule beyond what the server does (groups, resources, verbs "
				   "and names must be exactly its own)", what);
		seen += known;
	}
	if (seen != n || cJSON_GetArraySize(rules) != n)
		dc_prob(p, "%s: want exactly %d rules, one per kind of access the server makes",
			what, n);
}

/* A (Cluster)RoleBinding of kind bkind binds role to the Deployment's SA. */
static void bound(const cJSON *objs, const char *bkind, const cJSON *role, dc_probs *p)
{
	const cJSON *dep = dc_find(objs, "Deployment", 0);
	const char *sa = tp_get_str(dep, "spec.template.spec.serviceAccountName");
	const cJSON *b = NULL;
	for (int i = 0; (b = dc_find(objs, bkind, i)); i++) {
		const char *ref = tp_get_str(b, "roleRef.name");
		if (ref && !strcmp(ref, tp_meta_name(role)))
			break;
	}
	if (!b) {
		dc_prob(p, "%s %s: no %s binds it", tp_get_str(role, "kind"), tp_meta_name(role),
			bkind);
		return;
	}
	const cJSON *subj = cJSON_GetArrayItem(tp_get_array(b, "subjects"), 0);
	const char *sk = tp_get_str(subj, "kind"), *sn = tp_get_str(subj, "name"),
		   *sns = tp_get_str(subj, "namespace");
	if (!sa || !sk || strcmp(sk, "ServiceAccount") || !sn || strcmp(sn, sa) || !sns ||
	    strcmp(sns, tp_meta_namespace(dep)))
		dc_prob(p, "%s %s: subject is not the Deployment's ServiceAccount %s/%s", bkind,
			tp_meta_name(b), tp_meta_namespace(dep), sa ? sa : "(none)");
	if (!strcmp(bkind, "RoleBinding") && strcmp(tp_meta_namespace(b), tp_meta_namespace(dep)))
		dc_prob(p, "RoleBinding %s: in namespace %s, not the server's", tp_meta_name(b),
			tp_meta_namespace(b));
}

static void check_rbac(const cJSON *objs, dc_probs *p)
{
	podfacts f;
	if (!quiet_pod_facts(objs, &f))
		return;
	/* The cluster's state every replica reads. */
	static const char *const runtimes[] = { "clustertrainingruntimes", "trainingruntimes" };
	static const char *const trainjobs[] = { "trainjobs" };
	static const char *const jobsets[] = { "jobsets" };
	static const char *const pcs[] = { "priorityclasses" };
	static const char *const cms[] = { "configmaps" };
	static const char *const crds[] = { "customresourcedefinitions" };
	int ncrd = 0;
	while (tw_kube_crd_names[ncrd])
		ncrd++;
	const struct need reads[] = {
		{ "trainer.kubeflow.org", runtimes, 2, read_verbs, 3, NULL },
		{ "trainer.kubeflow.org", trainjobs, 1, get_only, 1, NULL },
		{ "jobset.x-k8s.io", jobsets, 1, get_only, 1, NULL },
		{ "scheduling.k8s.io", pcs, 1, read_verbs, 3, NULL },
		{ "", cms, 1, get_only, 1, NULL },
		/* the CRDs serve --kube follows, by the names it watches them by */
		{ "apiextensions.k8s.io", crds, 1, follow_verbs, 2, NULL, tw_kube_crd_names, ncrd },
	};
	const cJSON *cr = dc_find_named(objs, "ClusterRole", "trainer-webhook");
	role_is(cr, reads, 6, "ClusterRole trainer-webhook", p);
	if (cr)
		bound(objs, "ClusterRoleBinding", cr, p);
	int want_cr = 1, want_roles = 0;
	if (f.managed) { /* the Secret and the two configurations, by name */
		static const char *const secrets[] = { "secrets" };
		static const char *const vwc[] = { "validatingwebhookconfigurations" };
		static const char *const mwc[] = { "mutatingwebhookconfigurations" };
		const struct need sec_need[] = { { "", secrets, 1, write_verbs, 4, f.secret } };
		const struct need cfg_need[] = {
			{ "admissionregistration.k8s.io", vwc, 1, write_verbs, 4, f.validating },
			{ "admissionregistration.k8s.io", mwc, 1, write_verbs, 4, f.mutating },
		};
		const cJSON *role = dc_find(objs, "Role", 0);
		role_is(role, sec_need, 1, "Role (the certificate Secret)", p);
		if (role) {
			bound(objs, "RoleBinding", role, p);
			if (strcmp(tp_meta_namespace(role), tp_meta_namespace(f.dep)))
				dc_prob(p, "Role %s: not in the server's namespace", tp_meta_name(role));
		}
		const cJSON *cab = dc_find_named(objs, "ClusterRole", "trainer-webhook-cabundle");
		role_is(cab, cfg_need, 2, "ClusterRole trainer-webhook-cabundle", p);
		if (cab)
			bound(objs, "ClusterRoleBinding", cab, p);
		want_cr = 2;
		want_roles = 1;
	}
	if (dc_count(objs, "ClusterRole") != want_cr || dc_count(objs, "Role") != want_roles)
		dc_prob(p, "RBAC: want %d ClusterRole(s) and %d Role(s), found %d and %d", want_cr,
			want_roles, dc_count(objs, "ClusterRole"), dc_count(objs, "Role"));
	const char *sa = tp_get_str(f.dep, "spec.template.spec.serviceAccountName");
	if (!dc_find_named(objs, "ServiceAccount", sa))
		dc_prob(p, "no ServiceAccount %s", sa ? sa : "(none)");
}

/* ---------------------------------------------------------- webhooks */

/* The tp_kind of an admission rule (group, version, plural resource). */
static tp_kind kind_of_rule(const char *group, const char *version, const char *resource)
{
	static const struct {
		const char *plural, *kind;
	} kinds[] = {
		{ "trainjobs", "TrainJob" },
		{ "trainingruntimes", "TrainingRuntime" },
		{ "clustertrainingruntimes", "ClusterTrainingRuntime" },
		{ "jobsets", "JobSet" },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].plural, resource))
			return tw_kind_of_gvk(group, version, kinds[i].kind);
	return TP_KIND_UNKNOWN;
}

static bool is_runtime_kind(tp_kind k)
{
	return k == TP_KIND_TRAINING_RUNTIME || k == TP_KIND_CLUSTER_TRAINING_RUNTIME ||
	       k == TP_KIND_OME_TRAINING_RUNTIME || k == TP_KIND_OME_CLUSTER_TRAINING_RUNTIME;
}

static bool has_upstream_selector(const cJSON *hook)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, tp_get_array(hook, "objectSelector.matchExpressions"))
	{
		const char *k = tp_get_str(e, "key"), *op = tp_get_str(e, "operator");
		const cJSON *vals = tp_get_array(e, "values");
		if (k && !strcmp(k, "trainer.kubeflow.org/webhook-validation") && op &&
		    !strcmp(op, "NotIn") && str_set_is(vals, (const char *const[]){ "disabled" }, 1))
			return true;
	}
	return false;
}

static void check_rules(const cJSON *hook, const tw_route *r, const char *name, dc_probs *p)
{
	const cJSON *rules = tp_get_array(hook, "rules");
	if (!rules || !cJSON_GetArraySize(rules))
		dc_prob(p, "%s: no rules", name);
	const cJSON *rule;
	cJSON_ArrayForEach(rule, rules)
	{
		const cJSON *g, *v, *res;
		cJSON_ArrayForEach(g, tp_get_array(rule, "apiGroups"))
			cJSON_ArrayForEach(v, tp_get_array(rule, "apiVersions"))
				cJSON_ArrayForEach(res, tp_get_array(rule, "resources"))
		{
			tp_kind k = kind_of_rule(cJSON_GetStringValue(g), cJSON_GetStringValue(v),
						 cJSON_GetStringValue(res));
			if (k != r->kind)
				dc_prob(p, "%s: rule %s/%s %s is not the kind route %s answers (%s)",
					name, cJSON_GetStringValue(g), cJSON_GetStringValue(v),
					cJSON_GetStringValue(res), r->path, tp_kind_name(r->kind));
		}
		static const char *const ops[] = { "CREATE", "UPDATE" };
		if (!str_set_is(tp_get_array(rule, "operations"), ops, 2))
			dc_prob(p, "%s: operations must be CREATE and UPDATE", name);
	}
}

static void check_hook_settings(const cJSON *hook, const tw_route *r, const char *name,
				dc_probs *p)
{
	const char *fp = tp_get_str(hook, "failurePolicy"), *se = tp_get_str(hook, "sideEffects"),
		   *mp = tp_get_str(hook, "matchPolicy");
	if (!fp || strcmp(fp, "Fail"))
		dc_prob(p, "%s: failurePolicy %s, want Fail", name, fp ? fp : "(default)");
	if (!se || strcmp(se, "None"))
		dc_prob(p, "%s: sideEffects %s, want None", name, se ? se : "(none)");
	if (!mp || strcmp(mp, "Equivalent"))
		dc_prob(p, "%s: matchPolicy %s, want Equivalent", name, mp ? mp : "(default)");
	long long to = 0;
	if (!tp_get_int(hook, "timeoutSeconds", &to) || to != 5)
		dc_prob(p, "%s: timeoutSeconds %lld, want 5", name, to);
	const cJSON *arv = tp_get_array(hook, "admissionReviewVersions");
	const char *first = cJSON_GetStringValue(cJSON_GetArrayItem(arv, 0));
	bool ome = r->kind == TP_KIND_OME_TRAINING_RUNTIME ||
		   r->kind == TP_KIND_OME_CLUSTER_TRAINING_RUNTIME;
	if (!first || strcmp(first, "v1") || (!ome && cJSON_GetArraySize(arv) != 1) ||
	    (ome && cJSON_GetArraySize(arv) > 2))
		dc_prob(p, "%s: admissionReviewVersions must be [v1]%s", name,
			ome ? " or [v1, v1beta1]" : "");
	if (is_runtime_kind(r->kind) != has_upstream_selector(hook))
		dc_prob(p, "%s: the webhook-validation NotIn [disabled] objectSelector belongs on "
			   "the runtime hooks only", name);
	if (r->type == TW_ROUTE_MUTATE_JOBSET) {
		const cJSON *mc = cJSON_GetArrayItem(tp_get_array(hook, "matchConditions"), 0);
		const char *expr = tp_get_str(mc, "expression");
		if (!expr || !strstr(expr, "ownerReferences") || !strstr(expr, "'TrainJob'"))
			dc_prob(p, "%s: want a matchCondition on an owning TrainJob", name);
	}
}

static void check_hook(const cJSON *objs, const cJSON *hook, bool mutating, int *covered,
		       dc_probs *p)
{
	const char *name = tp_get_str(hook, "name");
	name = name ? name : "(unnamed)";
	const char *path = tp_get_str(hook, "clientConfig.service.path");
	const tw_route *r = tw_route_find(path);
	if (!r) {
		dc_prob(p, "%s: path %s is not a route of the server", name, path ? path : "(none)");
		return;
	}
	bool route_mut = r->type == TW_ROUTE_MUTATE_TRAINJOB || r->type == TW_ROUTE_MUTATE_JOBSET;
	if (r->type != TW_ROUTE_VALIDATE && !route_mut)
		dc_prob(p, "%s: %s is not an admission route", name, path);
	else if (route_mut != mutating)
		dc_prob(p, "%s: %s is a %s route in a %s configuration", name, path,
			route_mut ? "mutating" : "validating", mutating ? "mutating" : "validating");
	covered[r - tw_routes]++;
	check_rules(hook, r, name, p);
	check_hook_settings(hook, r, name, p);
	/* the Service it calls is ours */
	const cJSON *svc = dc_find(objs, "Service", 0);
	const char *sn = tp_get_str(hook, "clientConfig.service.name");
	const char *sns = tp_get_str(hook, "clientConfig.service.namespace");
	long long port = 443;
	tp_get_int(hook, "clientConfig.service.port", &port);
	if (!svc || !sn || strcmp(sn, tp_meta_name(svc)) || !sns ||
	    strcmp(sns, tp_meta_namespace(svc)))
		dc_prob(p, "%s: calls Service %s/%s, not the webhook's %s/%s", name, sns ? sns : "",
			sn ? sn : "", tp_meta_namespace(svc), tp_meta_name(svc));
	if (port != 443)
		dc_prob(p, "%s: Service port %lld, want 443", name, port);
	if (tp_get_str(hook, "clientConfig.url"))
		dc_prob(p, "%s: clientConfig.url instead of the Service", name);
}

static void check_webhooks(const cJSON *objs, dc_probs *p)
{
	size_t nroutes = 0;
	while (tw_routes[nroutes].path)
		nroutes++;
	int *covered = calloc(nroutes + 1, sizeof(int));
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	for (int m = 0; m < 2; m++) {
		if (dc_count(objs, kinds[m]) != 1)
			dc_prob(p, "want exactly one %s, found %d", kinds[m], dc_count(objs, kinds[m]));
		const cJSON *cfg = dc_find(objs, kinds[m], 0);
		const cJSON *hook;
		cJSON_ArrayForEach(hook, tp_get_array(cfg, "webhooks"))
			check_hook(objs, hook, m == 1, covered, p);
	}
	for (size_t i = 0; i < nroutes; i++) {
		tw_route_type t = tw_routes[i].type;
		bool admission = t == TW_ROUTE_VALIDATE || t == TW_ROUTE_MUTATE_TRAINJOB ||
				 t == TW_ROUTE_MUTATE_JOBSET;
		if (admission && covered[i] != 1)
			dc_prob(p, "route %s: registered %d times, want once", tw_routes[i].path,
				covered[i]);
	}
	free(covered);
}

void dc_check_all(const cJSON *objs, dc_probs *p)
{
	if (dc_count(objs, "Namespace") != 1)
		dc_prob(p, "want one Namespace");
	check_deployment(objs, p);
	check_service_pdb(objs, p);
	check_rbac(objs, p);
	check_webhooks(objs, p);
}

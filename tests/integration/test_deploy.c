/*
 * test_deploy.c — the Kubernetes manifests under deploy/ against the server
 * they install: every webhook path is a route of the route table with the
 * kind its rule names, the Service reaches the port `serve --listen` opens,
 * probes, RBAC, security context, replicas, PodDisruptionBudget, shutdown.
 *
 * The raw files of deploy/base are checked always (parsed with tp_load). When
 * kubectl (with its built-in kustomize) is on PATH, deploy/base and both
 * overlays are also rendered and checked; the self-signed overlay is rendered
 * from a temporary copy of deploy/ so that no key is ever written into the
 * tree. The Dockerfile's build stage must run what CI runs.
 *
 * Every checker collects problems instead of asserting, so that the tests
 * below can also show it catches broken manifests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "tests/support/testutil.h"
#include "webhook/webhook.h"

#define BASE "deploy/base"
#define SELF_SIGNED_NS "team-x"

/* ------------------------------------------------------------ problems */

typedef struct probs {
	int n;
	tp_buf text;
} probs;

static void prob(probs *p, const char *fmt, ...) TP_PRINTF(2, 3);
static void prob(probs *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tp_buf_adds(&p->text, "  - ");
	tp_buf_vaddf(&p->text, fmt, ap);
	tp_buf_addc(&p->text, '\n');
	va_end(ap);
	p->n++;
}

static void probs_init(probs *p)
{
	p->n = 0;
	tp_buf_init(&p->text, 1 << 20);
}

static bool probs_has(const probs *p, const char *part)
{
	return p->text.data && strstr(p->text.data, part);
}

static void assert_no_probs(probs *p, const char *where)
{
	if (p->n)
		fail_msg("%s: %d problem(s):\n%s", where, p->n, p->text.data);
	tp_buf_free(&p->text);
}

/* ---------------------------------------------------------- loading */

/* Objects of text appended to arr; false (and a message) on a parse error. */
static bool load_into(cJSON *arr, const char *text, size_t len, const char *name)
{
	tp_docs *docs = NULL;
	tp_load_error err;
	if (tp_load(text, len, NULL, &docs, &err)) {
		print_message("%s: document %d, line %d: %s\n", name, err.doc, err.line, err.msg);
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

/* Every *.yaml of deploy/base (kustomize's own files left out). */
static cJSON *load_base_files(void)
{
	cJSON *arr = cJSON_CreateArray();
	DIR *d = opendir(BASE);
	assert_non_null(d);
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
	for (size_t i = 0; i < n; i++) {
		char path[512];
		snprintf(path, sizeof(path), BASE "/%s", names[i]);
		size_t len;
		char *text = tt_read_file(path, &len);
		assert_non_null(text);
		assert_true(load_into(arr, text, len, path));
		free(text);
		free(names[i]);
	}
	return arr;
}

static const cJSON *find_kind(const cJSON *objs, const char *kind, int nth)
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

static int count_kind(const cJSON *objs, const char *kind)
{
	int n = 0;
	while (find_kind(objs, kind, n))
		n++;
	return n;
}

static bool str_in(const cJSON *arr, const char *s)
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
		if (!str_in(arr, want[i]))
			return false;
	return true;
}

/* ------------------------------------------------- the Deployment's pod */

typedef struct podfacts {
	const cJSON *dep, *pod, *ctr;
	const char *listen, *metrics_listen, *cert, *key;
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
	return str_in(tp_get_array(ctr, "args"), s) || str_in(tp_get_array(ctr, "command"), s);
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

static bool pod_facts(const cJSON *objs, podfacts *f, probs *p)
{
	memset(f, 0, sizeof(*f));
	if (count_kind(objs, "Deployment") != 1) {
		prob(p, "want exactly one Deployment, found %d", count_kind(objs, "Deployment"));
		return false;
	}
	f->dep = find_kind(objs, "Deployment", 0);
	f->pod = tp_get_object(f->dep, "spec.template.spec");
	const cJSON *ctrs = tp_get_array(f->pod, "containers");
	if (!ctrs || cJSON_GetArraySize(ctrs) != 1) {
		prob(p, "Deployment: want one container");
		return false;
	}
	f->ctr = cJSON_GetArrayItem(ctrs, 0);
	f->listen = arg_value(f->ctr, "--listen");
	f->listen = f->listen ? f->listen : ":9443"; /* serve's default */
	f->metrics_listen = arg_value(f->ctr, "--metrics-listen");
	f->metrics_listen = f->metrics_listen ? f->metrics_listen : ":8080";
	f->cert = arg_value(f->ctr, "--tls-cert");
	f->key = arg_value(f->ctr, "--tls-key");
	const char *g = arg_value(f->ctr, "--shutdown-grace");
	f->grace = g ? atoll(g) : 10;
	f->webhook_port = port_of_addr(f->listen);
	f->metrics_port = port_of_addr(f->metrics_listen);
	return true;
}

static void check_probe(const podfacts *f, const char *which, const char *path, probs *p)
{
	const cJSON *pr = tp_get_object(f->ctr, which);
	const char *got = tp_get_str(pr, "httpGet.path");
	const char *scheme = tp_get_str(pr, "httpGet.scheme");
	if (!got || strcmp(got, path))
		prob(p, "%s: path %s, want %s", which, got ? got : "(none)", path);
	if (!scheme || strcmp(scheme, "HTTPS"))
		prob(p, "%s: scheme %s, want HTTPS (the health routes are on the TLS port)", which,
		     scheme ? scheme : "(none, HTTP)");
	long long port = resolve_port(f->ctr, tp_get(pr, "httpGet.port"));
	if (port != f->webhook_port)
		prob(p, "%s: port %lld, want the --listen port %lld", which, port, f->webhook_port);
}

/* A securityContext field, from the container or else the pod. */
static const cJSON *sec(const podfacts *f, const char *field)
{
	char path[128];
	snprintf(path, sizeof(path), "securityContext.%s", field);
	const cJSON *v = tp_get(f->ctr, path);
	return v ? v : tp_get(f->pod, path);
}

static void check_deployment(const cJSON *objs, probs *p)
{
	podfacts f;
	if (!pod_facts(objs, &f, p))
		return;
	long long replicas = 0;
	if (!tp_get_int(f.dep, "spec.replicas", &replicas) || replicas != 2)
		prob(p, "Deployment: replicas %lld, want 2", replicas);
	if (!has_arg(f.ctr, "serve") || !has_arg(f.ctr, "--kube"))
		prob(p, "container: want `serve --kube`");
	if (!f.cert || strcmp(f.cert, "/certs/tls.crt") || !f.key || strcmp(f.key, "/certs/tls.key"))
		prob(p, "container: want --tls-cert /certs/tls.crt --tls-key /certs/tls.key");
	if (f.webhook_port != 9443 || named_port(f.ctr, "webhook") != f.webhook_port)
		prob(p, "container: port `webhook` %lld does not match --listen %s (9443)",
		     named_port(f.ctr, "webhook"), f.listen);
	if (named_port(f.ctr, "metrics") != f.metrics_port || f.metrics_port != 8080)
		prob(p, "container: port `metrics` %lld does not match --metrics-listen %s",
		     named_port(f.ctr, "metrics"), f.metrics_listen);
	check_probe(&f, "livenessProbe", "/healthz", p);
	check_probe(&f, "readinessProbe", "/readyz", p);

	/* the certificate Secret, mounted read-only where the flags point */
	const cJSON *m;
	bool mounted = false;
	cJSON_ArrayForEach(m, tp_get_array(f.ctr, "volumeMounts"))
	{
		const char *mp = tp_get_str(m, "mountPath"), *vn = tp_get_str(m, "name");
		if (!mp || !vn || !f.cert || strncmp(f.cert, mp, strlen(mp)))
			continue;
		const cJSON *vol = tp_find_named(tp_get_array(f.pod, "volumes"), "name", vn);
		if (!tp_get_str(vol, "secret.secretName"))
			prob(p, "volume %s: want a Secret", vn);
		else if (!tp_get_true(m, "readOnly"))
			prob(p, "volumeMount %s: want readOnly: true", mp);
		else
			mounted = true;
	}
	if (!mounted)
		prob(p, "container: no read-only Secret mounted where --tls-cert points");

	/* security */
	if (!cJSON_IsTrue(sec(&f, "runAsNonRoot")))
		prob(p, "securityContext: want runAsNonRoot: true");
	const cJSON *uid = sec(&f, "runAsUser");
	if (uid && (!cJSON_IsNumber(uid) || uid->valuedouble == 0))
		prob(p, "securityContext: runAsUser must be a non-zero number");
	if (!tp_get_true(f.ctr, "securityContext.readOnlyRootFilesystem"))
		prob(p, "container securityContext: want readOnlyRootFilesystem: true");
	const cJSON *ape = tp_get(f.ctr, "securityContext.allowPrivilegeEscalation");
	if (!cJSON_IsFalse(ape))
		prob(p, "container securityContext: want allowPrivilegeEscalation: false");
	const cJSON *drop = tp_get_array(f.ctr, "securityContext.capabilities.drop");
	if (!str_in(drop, "ALL"))
		prob(p, "container securityContext: want capabilities.drop [ALL]");
	if (tp_get(f.ctr, "securityContext.capabilities.add"))
		prob(p, "container securityContext: no capabilities may be added");
	if (tp_get_true(f.ctr, "securityContext.privileged"))
		prob(p, "container securityContext: privileged");
	const char *sc = tp_get_str(f.ctr, "securityContext.seccompProfile.type");
	sc = sc ? sc : tp_get_str(f.pod, "securityContext.seccompProfile.type");
	if (!sc || strcmp(sc, "RuntimeDefault"))
		prob(p, "securityContext: want seccompProfile RuntimeDefault");

	/* resources */
	const char *req[] = { "resources.requests.cpu", "resources.requests.memory",
			      "resources.limits.memory" };
	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (!tp_get_str(f.ctr, req[i]))
			prob(p, "container: %s not set", req[i]);

	/* shutdown: preStop wait + --shutdown-grace must fit in the grace period */
	long long tgps = 30, pre = 0;
	tp_get_int(f.pod, "terminationGracePeriodSeconds", &tgps);
	const cJSON *cmd = tp_get_array(f.ctr, "lifecycle.preStop.exec.command");
	if (cmd) {
		const cJSON *last = cJSON_GetArrayItem(cmd, cJSON_GetArraySize(cmd) - 1);
		pre = cJSON_IsString(last) ? atoll(last->valuestring) : 0;
	} else if (!tp_get_int(f.ctr, "lifecycle.preStop.sleep.seconds", &pre)) {
		prob(p, "container: no preStop hook (endpoints must drop the pod before SIGTERM)");
	}
	if (tgps < pre + f.grace)
		prob(p, "terminationGracePeriodSeconds %lld < preStop %lld s + --shutdown-grace %lld s",
		     tgps, pre, f.grace);

	/* spread over nodes */
	bool spread = false;
	const cJSON *t;
	cJSON_ArrayForEach(t, tp_get_array(f.pod, "topologySpreadConstraints"))
	{
		const char *k = tp_get_str(t, "topologyKey");
		spread |= k && !strcmp(k, "kubernetes.io/hostname");
	}
	const char *aa[] = { "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
			     "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution" };
	for (int i = 0; i < 2; i++)
		cJSON_ArrayForEach(t, tp_get_array(f.pod, aa[i]))
		{
			const char *k = tp_get_str(t, "topologyKey");
			k = k ? k : tp_get_str(t, "podAffinityTerm.topologyKey");
			spread |= k && !strcmp(k, "kubernetes.io/hostname");
		}
	if (!spread)
		prob(p, "pod: no topology spread or anti-affinity over kubernetes.io/hostname");
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

static void check_service_pdb(const cJSON *objs, probs *p)
{
	podfacts f;
	probs quiet;
	probs_init(&quiet);
	bool ok = pod_facts(objs, &f, &quiet);
	tp_buf_free(&quiet.text);
	if (!ok)
		return;
	const cJSON *svc = find_kind(objs, "Service", 0);
	if (!svc || count_kind(objs, "Service") != 1) {
		prob(p, "want exactly one Service");
		return;
	}
	if (!selects_pods(tp_get_object(svc, "spec.selector"), f.dep))
		prob(p, "Service: selector does not select the Deployment's pods");
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
		prob(p, "Service: port 443 does not reach the container port of --listen %s", f.listen);
	if (!metrics)
		prob(p, "Service: port 8080 does not reach --metrics-listen %s", f.metrics_listen);
	const char *sns = tp_meta_namespace(svc), *dns = tp_meta_namespace(f.dep);
	if (strcmp(sns, dns))
		prob(p, "Service namespace %s differs from the Deployment's %s", sns, dns);

	const cJSON *pdb = find_kind(objs, "PodDisruptionBudget", 0);
	long long min = -1;
	if (!pdb || !tp_get_int(pdb, "spec.minAvailable", &min) || min != 1)
		prob(p, "PodDisruptionBudget: want minAvailable: 1 (got %lld)", min);
	else if (!selects_pods(tp_get_object(pdb, "spec.selector.matchLabels"), f.dep))
		prob(p, "PodDisruptionBudget: selector does not select the Deployment's pods");
}

static void check_rbac(const cJSON *objs, probs *p)
{
	if (count_kind(objs, "Role") || count_kind(objs, "RoleBinding"))
		prob(p, "RBAC: no namespaced Role/RoleBinding wanted");
	if (count_kind(objs, "ClusterRole") != 1) {
		prob(p, "RBAC: want exactly one ClusterRole, found %d", count_kind(objs, "ClusterRole"));
		return;
	}
	const cJSON *cr = find_kind(objs, "ClusterRole", 0);
	static const char *const verbs[] = { "get", "list", "watch" };
	static const char *const trainer_res[] = { "clustertrainingruntimes", "trainingruntimes",
						   "trainjobs" };
	static const char *const jobset_res[] = { "jobsets" };
	int seen_trainer = 0, seen_jobset = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, tp_get_array(cr, "rules"))
	{
		const cJSON *groups = tp_get_array(r, "apiGroups");
		const cJSON *res = tp_get_array(r, "resources");
		if (tp_get(r, "nonResourceURLs") || tp_get(r, "resourceNames"))
			prob(p, "ClusterRole: nonResourceURLs/resourceNames not wanted");
		if (!str_set_is(tp_get_array(r, "verbs"), verbs, 3))
			prob(p, "ClusterRole: verbs must be exactly get, list, watch");
		if (str_set_is(groups, (const char *const[]){ "trainer.kubeflow.org" }, 1) &&
		    str_set_is(res, trainer_res, 3))
			seen_trainer++;
		else if (str_set_is(groups, (const char *const[]){ "jobset.x-k8s.io" }, 1) &&
			 str_set_is(res, jobset_res, 1))
			seen_jobset++;
		else
			prob(p, "ClusterRole: a rule beyond the watched resources (trainer.kubeflow.org "
				"clustertrainingruntimes, trainingruntimes, trainjobs; jobset.x-k8s.io "
				"jobsets)");
	}
	if (seen_trainer != 1 || seen_jobset != 1)
		prob(p, "ClusterRole: want one rule for trainer.kubeflow.org and one for "
			"jobset.x-k8s.io");

	const cJSON *crb = find_kind(objs, "ClusterRoleBinding", 0);
	const char *ref = tp_get_str(crb, "roleRef.name");
	if (!crb || !ref || strcmp(ref, tp_meta_name(cr)))
		prob(p, "ClusterRoleBinding: does not bind the ClusterRole");
	const cJSON *dep = find_kind(objs, "Deployment", 0);
	const char *sa = tp_get_str(dep, "spec.template.spec.serviceAccountName");
	const cJSON *subj = cJSON_GetArrayItem(tp_get_array(crb, "subjects"), 0);
	const char *sk = tp_get_str(subj, "kind"), *sn = tp_get_str(subj, "name"),
		   *sns = tp_get_str(subj, "namespace");
	if (!sa || !sk || strcmp(sk, "ServiceAccount") || !sn || strcmp(sn, sa) || !sns ||
	    strcmp(sns, tp_meta_namespace(dep)))
		prob(p, "ClusterRoleBinding: subject is not the Deployment's ServiceAccount %s/%s",
		     tp_meta_namespace(dep), sa ? sa : "(none)");
	bool have_sa = false;
	for (int i = 0; find_kind(objs, "ServiceAccount", i); i++)
		have_sa |= sa && !strcmp(tp_meta_name(find_kind(objs, "ServiceAccount", i)), sa);
	if (!have_sa)
		prob(p, "no ServiceAccount %s", sa ? sa : "(none)");
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

static void check_hook(const cJSON *objs, const cJSON *hook, bool mutating, int *covered,
		       probs *p)
{
	const char *name = tp_get_str(hook, "name");
	name = name ? name : "(unnamed)";
	const char *path = tp_get_str(hook, "clientConfig.service.path");
	const tw_route *r = tw_route_find(path);
	if (!r) {
		prob(p, "%s: path %s is not a route of the server", name, path ? path : "(none)");
		return;
	}
	bool route_mut = r->type == TW_ROUTE_MUTATE_TRAINJOB || r->type == TW_ROUTE_MUTATE_JOBSET;
	if (r->type != TW_ROUTE_VALIDATE && !route_mut)
		prob(p, "%s: %s is not an admission route", name, path);
	else if (route_mut != mutating)
		prob(p, "%s: %s is a %s route in a %s configuration", name, path,
		     route_mut ? "mutating" : "validating", mutating ? "mutating" : "validating");
	covered[r - tw_routes]++;

	const cJSON *rules = tp_get_array(hook, "rules");
	if (!rules || !cJSON_GetArraySize(rules))
		prob(p, "%s: no rules", name);
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
				prob(p, "%s: rule %s/%s %s is not the kind route %s answers (%s)", name,
				     cJSON_GetStringValue(g), cJSON_GetStringValue(v),
				     cJSON_GetStringValue(res), path, tp_kind_name(r->kind));
		}
		static const char *const ops[] = { "CREATE", "UPDATE" };
		if (!str_set_is(tp_get_array(rule, "operations"), ops, 2))
			prob(p, "%s: operations must be CREATE and UPDATE", name);
	}
	const char *fp = tp_get_str(hook, "failurePolicy"), *se = tp_get_str(hook, "sideEffects"),
		   *mp = tp_get_str(hook, "matchPolicy");
	if (!fp || strcmp(fp, "Fail"))
		prob(p, "%s: failurePolicy %s, want Fail", name, fp ? fp : "(default)");
	if (!se || strcmp(se, "None"))
		prob(p, "%s: sideEffects %s, want None", name, se ? se : "(none)");
	if (!mp || strcmp(mp, "Equivalent"))
		prob(p, "%s: matchPolicy %s, want Equivalent", name, mp ? mp : "(default)");
	long long to = 0;
	if (!tp_get_int(hook, "timeoutSeconds", &to) || to != 5)
		prob(p, "%s: timeoutSeconds %lld, want 5", name, to);
	const cJSON *arv = tp_get_array(hook, "admissionReviewVersions");
	const char *first = cJSON_GetStringValue(cJSON_GetArrayItem(arv, 0));
	bool ome = r->kind == TP_KIND_OME_TRAINING_RUNTIME ||
		   r->kind == TP_KIND_OME_CLUSTER_TRAINING_RUNTIME;
	if (!first || strcmp(first, "v1") ||
	    (!ome && cJSON_GetArraySize(arv) != 1) || (ome && cJSON_GetArraySize(arv) > 2))
		prob(p, "%s: admissionReviewVersions must be [v1]%s", name,
		     ome ? " or [v1, v1beta1]" : "");
	if (is_runtime_kind(r->kind) != has_upstream_selector(hook))
		prob(p, "%s: the webhook-validation NotIn [disabled] objectSelector belongs on the "
			"runtime hooks only",
		     name);
	if (r->type == TW_ROUTE_MUTATE_JOBSET) {
		const cJSON *mc = cJSON_GetArrayItem(tp_get_array(hook, "matchConditions"), 0);
		const char *expr = tp_get_str(mc, "expression");
		if (!expr || !strstr(expr, "ownerReferences") || !strstr(expr, "'TrainJob'"))
			prob(p, "%s: want a matchCondition on an owning TrainJob", name);
	}

	/* the Service it calls is ours */
	const cJSON *svc = find_kind(objs, "Service", 0);
	const char *sn = tp_get_str(hook, "clientConfig.service.name");
	const char *sns = tp_get_str(hook, "clientConfig.service.namespace");
	long long port = 443;
	tp_get_int(hook, "clientConfig.service.port", &port);
	if (!svc || !sn || strcmp(sn, tp_meta_name(svc)) || !sns ||
	    strcmp(sns, tp_meta_namespace(svc)))
		prob(p, "%s: calls Service %s/%s, not the webhook's %s/%s", name, sns ? sns : "",
		     sn ? sn : "", tp_meta_namespace(svc), tp_meta_name(svc));
	if (port != 443)
		prob(p, "%s: Service port %lld, want 443", name, port);
	if (tp_get_str(hook, "clientConfig.url"))
		prob(p, "%s: clientConfig.url instead of the Service", name);
}

static void check_webhooks(const cJSON *objs, probs *p)
{
	size_t nroutes = 0;
	while (tw_routes[nroutes].path)
		nroutes++;
	int *covered = calloc(nroutes + 1, sizeof(int));
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	for (int m = 0; m < 2; m++) {
		if (count_kind(objs, kinds[m]) != 1)
			prob(p, "want exactly one %s, found %d", kinds[m], count_kind(objs, kinds[m]));
		const cJSON *cfg = find_kind(objs, kinds[m], 0);
		const cJSON *hook;
		cJSON_ArrayForEach(hook, tp_get_array(cfg, "webhooks"))
			check_hook(objs, hook, m == 1, covered, p);
	}
	for (size_t i = 0; i < nroutes; i++) {
		tw_route_type t = tw_routes[i].type;
		bool admission = t == TW_ROUTE_VALIDATE || t == TW_ROUTE_MUTATE_TRAINJOB ||
				 t == TW_ROUTE_MUTATE_JOBSET;
		if (admission && covered[i] != 1)
			prob(p, "route %s: registered %d times, want once", tw_routes[i].path,
			     covered[i]);
	}
	free(covered);
}

static void check_all(const cJSON *objs, probs *p)
{
	if (count_kind(objs, "Namespace") != 1)
		prob(p, "want one Namespace");
	check_deployment(objs, p);
	check_service_pdb(objs, p);
	check_rbac(objs, p);
	check_webhooks(objs, p);
}

/* ----------------------------------------------------- raw base files */

static void base_files_pass(void **state)
{
	(void)state;
	cJSON *objs = load_base_files();
	probs p;
	probs_init(&p);
	check_all(objs, &p);
	const cJSON *ns = find_kind(objs, "Namespace", 0);
	if (strcmp(tp_meta_name(ns), "trainer-webhook-system"))
		prob(&p, "Namespace %s, want trainer-webhook-system", tp_meta_name(ns));
	assert_no_probs(&p, "deploy/base");
	cJSON_Delete(objs);
}

/* The checker on a broken copy: each mutation must be reported. */
static void expect_caught(void (*mutate)(cJSON *), const char *part)
{
	cJSON *objs = load_base_files();
	mutate(objs);
	probs p;
	probs_init(&p);
	check_all(objs, &p);
	if (!probs_has(&p, part))
		fail_msg("broken manifest not caught: want \"%s\" among:\n%s", part,
			 p.text.data ? p.text.data : "(no problems)");
	tp_buf_free(&p.text);
	cJSON_Delete(objs);
}

static cJSON *mut(cJSON *objs, const char *kind)
{
	return (cJSON *)find_kind(objs, kind, 0);
}

static cJSON *ctr0(cJSON *objs)
{
	return cJSON_GetArrayItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
						mut(objs, "Deployment"), "spec"), "template"), "spec"),
				    "containers"),
		0);
}

static cJSON *hook_n(cJSON *objs, const char *kind, int i)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItem(mut(objs, kind), "webhooks"), i);
}

static void m_path(cJSON *o)
{
	cJSON *svc = cJSON_GetObjectItem(
		cJSON_GetObjectItem(hook_n(o, "ValidatingWebhookConfiguration", 0), "clientConfig"),
		"service");
	cJSON_ReplaceItemInObject(svc, "path", cJSON_CreateString("/validate-nothing"));
}
static void m_kind(cJSON *o)
{
	/* the TrainJob validator registered for trainingruntimes */
	for (int i = 0; hook_n(o, "ValidatingWebhookConfiguration", i); i++) {
		cJSON *h = hook_n(o, "ValidatingWebhookConfiguration", i);
		const char *pth = tp_get_str(h, "clientConfig.service.path");
		if (pth && strstr(pth, "-trainjob")) {
			cJSON *rule = cJSON_GetArrayItem(cJSON_GetObjectItem(h, "rules"), 0);
			cJSON_ReplaceItemInObject(rule, "resources",
						  cJSON_CreateStringArray((const char *[]){
										  "trainingruntimes" },
									  1));
		}
	}
}
static void m_verb(cJSON *o)
{
	cJSON *rule = cJSON_GetArrayItem(cJSON_GetObjectItem(mut(o, "ClusterRole"), "rules"), 0);
	cJSON_AddItemToArray(cJSON_GetObjectItem(rule, "verbs"), cJSON_CreateString("create"));
}
static void m_secrets(cJSON *o)
{
	cJSON *rules = cJSON_GetObjectItem(mut(o, "ClusterRole"), "rules");
	cJSON *r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "apiGroups", cJSON_CreateStringArray((const char *[]){ "" }, 1));
	cJSON_AddItemToObject(r, "resources",
			      cJSON_CreateStringArray((const char *[]){ "secrets" }, 1));
	cJSON_AddItemToObject(r, "verbs", cJSON_CreateStringArray((const char *[]){ "get" }, 1));
	cJSON_AddItemToArray(rules, r);
}
static void m_replicas(cJSON *o)
{
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(mut(o, "Deployment"), "spec"), "replicas",
				  cJSON_CreateNumber(1));
}
static void m_listen(cJSON *o)
{
	cJSON *args = cJSON_GetObjectItem(ctr0(o), "args");
	cJSON *it;
	cJSON_ArrayForEach(it, args)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, ":9443"))
			cJSON_SetValuestring(it, ":10443");
}
static void m_rofs(cJSON *o)
{
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(ctr0(o), "securityContext"),
				  "readOnlyRootFilesystem", cJSON_CreateFalse());
}
static void m_probe(cJSON *o)
{
	cJSON *hg = cJSON_GetObjectItem(cJSON_GetObjectItem(ctr0(o), "readinessProbe"), "httpGet");
	cJSON_ReplaceItemInObject(hg, "path", cJSON_CreateString("/healthz"));
}
static void m_pdb(cJSON *o)
{
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(mut(o, "PodDisruptionBudget"), "spec"),
				  "minAvailable", cJSON_CreateNumber(0));
}
static void m_selector(cJSON *o)
{
	cJSON_DeleteItemFromObject(hook_n(o, "ValidatingWebhookConfiguration", 0),
				   "objectSelector");
}
static void m_failopen(cJSON *o)
{
	cJSON_ReplaceItemInObject(hook_n(o, "MutatingWebhookConfiguration", 0), "failurePolicy",
				  cJSON_CreateString("Ignore"));
}
static void m_grace(cJSON *o)
{
	cJSON *pod = cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(mut(o, "Deployment"), "spec"), "template"),
		"spec");
	cJSON_ReplaceItemInObject(pod, "terminationGracePeriodSeconds", cJSON_CreateNumber(5));
}
static void m_drop_hook(cJSON *o)
{
	cJSON_DeleteItemFromArray(cJSON_GetObjectItem(mut(o, "MutatingWebhookConfiguration"),
						      "webhooks"),
				  1);
}

static void broken_manifests_caught(void **state)
{
	(void)state;
	expect_caught(m_path, "is not a route of the server");
	expect_caught(m_kind, "is not the kind route");
	expect_caught(m_verb, "verbs must be exactly get, list, watch");
	expect_caught(m_secrets, "a rule beyond the watched resources");
	expect_caught(m_replicas, "replicas 1, want 2");
	expect_caught(m_listen, "does not match --listen");
	expect_caught(m_rofs, "readOnlyRootFilesystem");
	expect_caught(m_probe, "readinessProbe: path /healthz, want /readyz");
	expect_caught(m_pdb, "minAvailable: 1");
	expect_caught(m_selector, "objectSelector belongs on the runtime hooks");
	expect_caught(m_failopen, "failurePolicy Ignore");
	expect_caught(m_grace, "terminationGracePeriodSeconds 5");
	expect_caught(m_drop_hook, "/mutate-jobset-x-k8s-io-v1alpha2-jobset: registered 0 times");
}

/* ----------------------------------------------------------- kubectl */

static bool have_kubectl(void)
{
	static int have = -1;
	if (have < 0) {
		char *out = NULL;
		have = tt_run("kubectl version --client >/dev/null 2>&1 && "
			      "kubectl kustomize --help >/dev/null 2>&1",
			      &out, NULL) == 0;
		free(out);
	}
	return have;
}

#define REQUIRE_KUBECTL()                                                             \
	do {                                                                          \
		if (!have_kubectl()) {                                                \
			print_message("kubectl with kustomize not on PATH (sh tests/deps.sh " \
				      "installs Debian's kubernetes-client): skipped\n"); \
			skip();                                                       \
		}                                                                     \
	} while (0)

static cJSON *render(const char *dir)
{
	char cmd[1024];
	char *out = NULL, *err = NULL;
	snprintf(cmd, sizeof(cmd), "kubectl kustomize '%s'", dir);
	int rc = tt_run(cmd, &out, &err);
	if (rc != 0)
		fail_msg("%s: exit %d:\n%s", cmd, rc, err ? err : "");
	cJSON *arr = cJSON_CreateArray();
	assert_true(load_into(arr, out, strlen(out), dir));
	free(out);
	free(err);
	return arr;
}

static void rendered_base_passes(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	cJSON *objs = render(BASE);
	probs p;
	probs_init(&p);
	check_all(objs, &p);
	assert_no_probs(&p, "kubectl kustomize deploy/base");
	cJSON_Delete(objs);
}

static void rendered_cert_manager(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	cJSON *objs = render("deploy/overlays/cert-manager");
	probs p;
	probs_init(&p);
	check_all(objs, &p);
	const cJSON *cert = find_kind(objs, "Certificate", 0);
	const cJSON *issuer = find_kind(objs, "Issuer", 0);
	const cJSON *svc = find_kind(objs, "Service", 0);
	const cJSON *dep = find_kind(objs, "Deployment", 0);
	if (!issuer || !tp_get_object(issuer, "spec.selfSigned"))
		prob(&p, "no self-signed Issuer");
	const char *iref = tp_get_str(cert, "spec.issuerRef.name");
	if (!cert || !iref || strcmp(iref, tp_meta_name(issuer)))
		prob(&p, "Certificate: does not use the Issuer");
	/* the Secret it writes is the one the Deployment mounts */
	const char *secret = tp_get_str(cert, "spec.secretName");
	const cJSON *vol;
	bool mounted = false;
	cJSON_ArrayForEach(vol, tp_get_array(dep, "spec.template.spec.volumes"))
	{
		const char *sn = tp_get_str(vol, "secret.secretName");
		mounted |= sn && secret && !strcmp(sn, secret);
	}
	if (!mounted)
		prob(&p, "Certificate secretName %s is not mounted by the Deployment",
		     secret ? secret : "(none)");
	/* dnsNames: svc, svc.ns, svc.ns.svc, svc.ns.svc.cluster.local */
	char want[4][256];
	const char *s = tp_meta_name(svc), *ns = tp_meta_namespace(svc);
	snprintf(want[0], sizeof(want[0]), "%s", s);
	snprintf(want[1], sizeof(want[1]), "%s.%s", s, ns);
	snprintf(want[2], sizeof(want[2]), "%s.%s.svc", s, ns);
	snprintf(want[3], sizeof(want[3]), "%s.%s.svc.cluster.local", s, ns);
	for (int i = 0; i < 4; i++)
		if (!str_in(tp_get_array(cert, "spec.dnsNames"), want[i]))
			prob(&p, "Certificate: dnsNames lacks %s", want[i]);
	if (strcmp(tp_meta_namespace(cert), ns))
		prob(&p, "Certificate in namespace %s, not the Service's %s", tp_meta_namespace(cert),
		     ns);
	char inject[512];
	snprintf(inject, sizeof(inject), "%s/%s", tp_meta_namespace(cert), tp_meta_name(cert));
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	for (int i = 0; i < 2; i++) {
		const cJSON *cfg = find_kind(objs, kinds[i], 0);
		const cJSON *ann = tp_get_object(cfg, "metadata.annotations");
		const char *v = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(ann, "cert-manager.io/inject-ca-from"));
		if (!v || strcmp(v, inject))
			prob(&p, "%s: cert-manager.io/inject-ca-from %s, want %s", kinds[i],
			     v ? v : "(none)", inject);
	}
	assert_no_probs(&p, "kubectl kustomize deploy/overlays/cert-manager");
	cJSON_Delete(objs);
}

static bool b64_is(const char *b64, const char *path)
{
	size_t n;
	char *raw = tt_read_file(path, &n);
	if (!raw)
		return false;
	tp_buf b = TP_BUF_INIT(1 << 20);
	tp_base64_encode(raw, n, &b);
	/* kustomize may fold a long value over lines: compare without whitespace */
	bool same = b64 && b.data;
	const char *q = b.data;
	for (const char *c = b64; same && *c; c++)
		if (!strchr(" \t\r\n", *c))
			same = *q && *q++ == *c;
	same = same && q && !*q;
	tp_buf_free(&b);
	free(raw);
	return same;
}

static void rendered_self_signed(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	char tmp[] = "/tmp/tw-deploy-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	char cmd[2048], dir[512], gen[600], path[700];
	snprintf(dir, sizeof(dir), "%s/deploy/overlays/self-signed", tmp);
	snprintf(gen, sizeof(gen), "%s/generated", dir);
	/* a copy of deploy/ without any generated/ of the tree, then the make target's script */
	snprintf(cmd, sizeof(cmd),
		 "cp -R deploy '%s/' && rm -rf '%s' && sh '%s/generate.sh' '%s' " SELF_SIGNED_NS
		 " >/dev/null",
		 tmp, gen, dir, tt_bin());
	char *err = NULL;
	int rc = tt_run(cmd, NULL, &err);
	if (rc != 0)
		fail_msg("%s: exit %d:\n%s", cmd, rc, err ? err : "");
	free(err);
	cJSON *objs = render(dir);
	probs p;
	probs_init(&p);
	check_all(objs, &p);

	/* everything namespaced moved to NS, the Namespace too */
	const cJSON *ns = find_kind(objs, "Namespace", 0);
	if (strcmp(tp_meta_name(ns), SELF_SIGNED_NS))
		prob(&p, "Namespace %s, want " SELF_SIGNED_NS, tp_meta_name(ns));
	const char *namespaced[] = { "Deployment", "Service", "ServiceAccount",
				     "PodDisruptionBudget", "Secret" };
	for (size_t i = 0; i < sizeof(namespaced) / sizeof(namespaced[0]); i++) {
		const cJSON *o = find_kind(objs, namespaced[i], 0);
		if (!o || strcmp(tp_meta_namespace(o), SELF_SIGNED_NS))
			prob(&p, "%s not in namespace " SELF_SIGNED_NS, namespaced[i]);
	}
	/* the TLS Secret from the generated files, as the Deployment mounts it */
	const cJSON *sec = find_kind(objs, "Secret", 0);
	const char *type = tp_get_str(sec, "type");
	if (!type || strcmp(type, "kubernetes.io/tls"))
		prob(&p, "Secret: type %s, want kubernetes.io/tls", type ? type : "(none)");
	if (strcmp(tp_meta_name(sec), "trainer-webhook-cert"))
		prob(&p, "Secret: name %s, want trainer-webhook-cert (no hash suffix)",
		     tp_meta_name(sec));
	const char *files[] = { "tls.crt", "tls.key", "ca.crt" };
	for (int i = 0; i < 3; i++) {
		/* tp_get splits on dots: look the key up directly */
		const cJSON *data = tp_get_object(sec, "data");
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, files[i]));
		snprintf(path, sizeof(path), "%s/%s", gen, files[i]);
		if (!b64_is(v, path))
			prob(&p, "Secret: %s is not the generated file", files[i]);
	}
	if (cJSON_GetObjectItemCaseSensitive(tp_get_object(sec, "data"), "ca.key"))
		prob(&p, "Secret: holds the CA key");
	/* caBundle on every webhook = base64 of the generated ca.crt */
	snprintf(path, sizeof(path), "%s/ca.crt", gen);
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	for (int i = 0; i < 2; i++) {
		const cJSON *hook;
		cJSON_ArrayForEach(hook, tp_get_array(find_kind(objs, kinds[i], 0), "webhooks"))
			if (!b64_is(tp_get_str(hook, "clientConfig.caBundle"), path))
				prob(&p, "%s: caBundle is not the generated ca.crt",
				     tp_get_str(hook, "name"));
	}
	/* the serving pair covers the Service's name in NS */
	snprintf(cmd, sizeof(cmd),
		 "%s certs check --tls-cert '%s/tls.crt' --tls-key '%s/tls.key' --ca '%s/ca.crt' "
		 "--dns trainer-webhook." SELF_SIGNED_NS ".svc",
		 tt_bin(), gen, gen, gen);
	err = NULL;
	if (tt_run(cmd, NULL, &err) != 0)
		prob(&p, "certs check: %s", err ? err : "");
	free(err);
	cJSON_Delete(objs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
	assert_no_probs(&p, "kubectl kustomize deploy/overlays/self-signed (generated, ns "
			    SELF_SIGNED_NS ")");
}

static void tree_has_no_generated_keys(void **state)
{
	(void)state;
	/* the tests above never write into the tree's generated/ (make may, by hand) */
	char *out = NULL;
	int rc = tt_run("git ls-files 'deploy/**/*.key' 'deploy/**/*.crt' "
			"'deploy/overlays/self-signed/generated'",
			&out, NULL);
	if (rc == 0 && out && *out)
		fail_msg("keys or generated files committed under deploy/:\n%s", out);
	free(out);
}

/* ------------------------------------------------------------- Dockerfile */

/* RUN commands of the stage named `stage` (NULL: the last stage), joined. */
static char *stage_text(const char *df, const char *stage, char *from_line, size_t fl)
{
	tp_buf b = TP_BUF_INIT(1 << 20);
	bool in = false;
	const char *line = df;
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		if (!strncmp(line, "FROM ", 5)) {
			char buf[256];
			snprintf(buf, sizeof(buf), "%.*s", (int)(n < 255 ? n : 255), line);
			bool named = stage && strstr(buf, " AS ") && !strcmp(strstr(buf, " AS ") + 4, stage);
			if (named || !stage) {
				in = true;
				tp_buf_reset(&b);
				snprintf(from_line, fl, "%s", buf);
			} else {
				in = false;
			}
		} else if (in) {
			tp_buf_add(&b, line, n);
			tp_buf_addc(&b, '\n');
		}
		line = eol ? eol + 1 : NULL;
	}
	tp_buf_addc(&b, '\0');
	return b.data;
}

static void dockerfile_builds_like_ci(void **state)
{
	(void)state;
	size_t n;
	char *df = tt_read_file("Dockerfile", &n);
	char *ci = tt_read_file(".ci/run", &n);
	char *mk = tt_read_file("Makefile", &n);
	assert_non_null(df);
	assert_non_null(ci);
	assert_non_null(mk);
	char from[256] = "";
	char *build = stage_text(df, "build", from, sizeof(from));
	if (!strstr(from, "debian:bookworm"))
		fail_msg("build stage: %s, want FROM debian:bookworm AS build", from);
	/* what CI runs: deps, then make (test depends on all) */
	assert_non_null(strstr(ci, "sh tests/deps.sh"));
	assert_non_null(strstr(ci, "make test"));
	assert_non_null(strstr(mk, "\ntest: deps all"));
	assert_non_null(strstr(mk, "\nall: "));
	/* the build stage: RUN sh tests/deps.sh && make (no other target) */
	const char *run = strstr(build, "RUN sh tests/deps.sh");
	if (!run)
		fail_msg("build stage does not run `sh tests/deps.sh`:\n%s", build);
	const char *mkc = strstr(run, "make");
	if (!mkc)
		fail_msg("build stage does not run make after deps:\n%s", build);
	char rest[64] = "";
	sscanf(mkc + 4, "%63[^\n\\&;]", rest);
	for (char *e = rest + strlen(rest); e > rest && e[-1] == ' '; e--)
		e[-1] = '\0';
	if (rest[0] && strcmp(rest, " all"))
		fail_msg("build stage runs `make%s`, want `make` (all) as CI", rest);
	free(build);

	char *rt = stage_text(df, NULL, from, sizeof(from));
	if (!strstr(from, "debian:bookworm-slim"))
		fail_msg("runtime stage: %s, want debian:bookworm-slim", from);
	const char *libs[] = { "libmicrohttpd12", "libcjson1", "libyaml-0-2", "libcurl4",
			       "libssl3",	  "libgnutls30" };
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strstr(rt, libs[i]))
			fail_msg("runtime stage lacks %s", libs[i]);
	if (strstr(rt, "-dev ") || strstr(rt, "build-essential"))
		fail_msg("runtime stage installs build packages");
	if (!strstr(rt, "COPY --from=build /src/build/trainer-webhook /usr/local/bin/trainer-webhook"))
		fail_msg("runtime stage does not copy the binary to /usr/local/bin");
	const char *user = strstr(rt, "\nUSER ");
	if (!user || atoi(user + 6) <= 0)
		fail_msg("runtime stage: want USER with a numeric non-root UID");
	if (!strstr(rt, "ENTRYPOINT [\"/usr/local/bin/trainer-webhook\"]"))
		fail_msg("runtime stage: ENTRYPOINT");
	if (!strstr(rt, "CMD [\"serve\", \"--kube\""))
		fail_msg("runtime stage: CMD serve --kube");
	free(rt);
	free(df);
	free(ci);
	free(mk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(base_files_pass),
		cmocka_unit_test(broken_manifests_caught),
		cmocka_unit_test(rendered_base_passes),
		cmocka_unit_test(rendered_cert_manager),
		cmocka_unit_test(rendered_self_signed),
		cmocka_unit_test(tree_has_no_generated_keys),
		cmocka_unit_test(dockerfile_builds_like_ci),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_deploy_chart.c — the Helm chart (charts/trainer-webhook): `helm lint
 * --strict` clean for its value sets; `helm template` renders the objects
 * kustomize renders for the same settings, object by object (deploy/base,
 * the cert-manager overlay, the monitoring and network-policy components,
 * and both under another name and namespace), and passes deploy/'s checks;
 * the values with no kustomize counterpart reach the objects they set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/deploycheck.h"
#include "tests/support/testutil.h"
#include "webhook/cluster/register.h"

#define CHART "charts/trainer-webhook"
#define NS "ml-platform"
/* What makes the chart's defaults deploy/base's: the release's name and
 * namespace (neither creates the namespace; the image is the released one in
 * both). */
#define AS_BASE ""
#define MONITORING                                                                          \
	"--set serviceMonitor.enabled=true --set prometheusRule.enabled=true "             \
	"--set grafanaDashboard.enabled=true --set networkPolicy.enabled=true"

static void assert_no_probs(dc_probs *p, const char *where)
{
	if (p->n)
		fail_msg("%s: %d problem(s):\n%s", where, p->n, p->text.data);
	tp_buf_free(&p->text);
}

/* The oldest Kubernetes the chart supports (Chart.yaml's kubeVersion), given
 * to helm template and lint: without it they check the chart against the
 * version Helm was built with, 1.20 in some builds. */
#define KUBE "--kube-version 1.30.0"

/* `helm template` of the chart as release `release` in ns, with flags. */
static cJSON *helm_render(const char *release, const char *ns, const char *flags)
{
	char cmd[2048], err[4096];
	snprintf(cmd, sizeof(cmd), "'%s' template %s " CHART " " KUBE " --namespace %s %s",
		 dc_tool("helm"), release, ns, flags);
	cJSON *objs = dc_run_render(cmd, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	return objs;
}

/* `kubectl kustomize` of a kustomization of one's own over deploy/. */
static cJSON *kustomize_render(const char *kustomization)
{
	char err[4096];
	cJSON *objs = dc_render_own(kustomization, NULL, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	return objs;
}

/* The chart's render and kustomize's are the same objects, and the chart's
 * passes deploy/'s own checks. */
static void expect_same(const char *kustomization, const char *release, const char *ns,
			const char *flags, bool cert_manager)
{
	cJSON *k = kustomize_render(kustomization);
	cJSON *h = helm_render(release, ns, flags);
	dc_probs p;
	dc_probs_init(&p);
	dc_compare_renders(k, h, &p);
	if (cert_manager)
		dc_check_cert_manager(h, &p);
	else
		dc_check_all(h, &p);
	dc_check_namespace(h, ns, &p);
	char where[2048];
	snprintf(where, sizeof(where), "kustomize of\n%s\nagainst helm template %s --namespace %s %s",
		 kustomization, release, ns, flags);
	assert_no_probs(&p, where);
	cJSON_Delete(k);
	cJSON_Delete(h);
}

static void chart_lints_clean(void **state)
{
	(void)state;
	DC_REQUIRE(dc_helm);
	const char *value_sets[] = {
		"",
		"--set certificates.mode=cert-manager",
		"--set certificates.mode=cert-manager "
		"--set certificates.certManager.issuerRef.kind=ClusterIssuer "
		"--set certificates.certManager.issuerRef.name=ca",
		MONITORING " --set namespace.create=true",
		"--set webhook.failurePolicy=Ignore --set webhook.exemptNamespaces={kube-system} "
		"--set podDisruptionBudget.enabled=false --set image.digest=sha256:" \
		"0000000000000000000000000000000000000000000000000000000000000000",
	};
	for (size_t i = 0; i < sizeof(value_sets) / sizeof(value_sets[0]); i++) {
		char cmd[1024];
		char *out = NULL;
		snprintf(cmd, sizeof(cmd), "'%s' lint --strict " KUBE " " CHART " %s 2>&1",
			 dc_tool("helm"), value_sets[i]);
		if (tt_run(cmd, &out, NULL) != 0 || !strstr(out, "0 chart(s) failed") ||
		    strstr(out, "[WARNING]") || strstr(out, "[ERROR]"))
			fail_msg("%s:\n%s", cmd, out ? out : "");
		free(out);
	}
	/* values.schema.json refuses a value the templates would pass on */
	char cmd[512];
	char *out = NULL;
	snprintf(cmd, sizeof(cmd), "'%s' lint --strict " KUBE " " CHART
		 " --set webhook.failurePolicy=fail 2>&1", dc_tool("helm"));
	assert_int_not_equal(tt_run(cmd, &out, NULL), 0);
	assert_non_null(strstr(out, "webhook.failurePolicy must be one of the following: \"Fail\", "
				    "\"Ignore\""));
	free(out);
}

static void chart_renders_the_base(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	DC_REQUIRE(dc_helm);
	expect_same("resources:\n- ../deploy/base\n", "trainer-webhook", "trainer-webhook-system",
		    AS_BASE, false);
	/* the comparison sees a difference */
	cJSON *k = kustomize_render("resources:\n- ../deploy/base\n");
	cJSON *h = helm_render("trainer-webhook", "trainer-webhook-system",
			       AS_BASE " --set replicaCount=3 --set profile=kubeflow");
	dc_probs p;
	dc_probs_init(&p);
	dc_compare_renders(k, h, &p);
	assert_true(dc_probs_has(&p, "Deployment trainer-webhook-system/trainer-webhook: "
				     "spec.replicas: kustomize 2, chart 3"));
	assert_true(dc_probs_has(&p, "spec.template.spec.containers[0].args[17]: kustomize "
				     "\"strict\", chart \"kubeflow\""));
	tp_buf_free(&p.text);
	cJSON_Delete(h);
	h = helm_render("trainer-webhook", "trainer-webhook-system", "--set namespace.create=true");
	dc_probs_init(&p);
	dc_compare_renders(k, h, &p);
	assert_true(dc_probs_has(&p, "Namespace /trainer-webhook-system: rendered by the chart, "
				     "not by kustomize"));
	tp_buf_free(&p.text);
	cJSON_Delete(h);
	cJSON_Delete(k);
}

static void chart_renders_the_cert_manager_overlay(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	DC_REQUIRE(dc_helm);
	expect_same("resources:\n- ../deploy/overlays/cert-manager\n", "trainer-webhook",
		    "trainer-webhook-system", AS_BASE " --set certificates.mode=cert-manager", true);
}

static void chart_renders_the_components(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	DC_REQUIRE(dc_helm);
	/* the namespace, opt-in in both */
	expect_same("resources:\n- ../deploy/base\ncomponents:\n- ../deploy/components/namespace\n",
		    "trainer-webhook", "trainer-webhook-system", "--set namespace.create=true", false);
	expect_same("resources:\n- ../deploy/base\ncomponents:\n- ../deploy/components/monitoring\n"
		    "- ../deploy/components/network-policy\n",
		    "trainer-webhook", "trainer-webhook-system", AS_BASE " " MONITORING, false);
}

/* A fullname and a namespace are a namePrefix and a namespace: the same
 * objects, every name the server is given and the alert included. */
static void chart_follows_a_name_and_namespace(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	DC_REQUIRE(dc_helm);
	expect_same("namespace: " NS "\nnamePrefix: team-a-\nresources:\n- ../deploy/base\n"
		    "components:\n- ../deploy/components/monitoring\n"
		    "- ../deploy/components/network-policy\n"
		    "transformers:\n- ../deploy/components/monitoring/follow-names\n",
		    "team-a", NS, AS_BASE " " MONITORING, false);
	expect_same("namespace: " NS "\nnamePrefix: team-a-\nresources:\n"
		    "- ../deploy/overlays/cert-manager\n"
		    "transformers:\n- ../deploy/overlays/cert-manager/follow-names\n",
		    "any", NS,
		    AS_BASE " --set certificates.mode=cert-manager "
			    "--set fullnameOverride=team-a-trainer-webhook",
		    true);
}

/* One rendered object of kind (and name, when given) or a failed test. */
static const cJSON *must_find(const cJSON *objs, const char *kind, const char *name)
{
	const cJSON *o = name ? dc_find_named(objs, kind, name) : dc_find(objs, kind, 0);
	if (!o)
		fail_msg("the chart rendered no %s %s", kind, name ? name : "");
	return o;
}

/* Every webhook the server fills the configurations with, given the
 * chart's flags (the shipped configurations are empty), has field. */
static void every_hook_has(const cJSON *objs, const char *field, const char *want_json)
{
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	const char *exempt[8];
	size_t nexempt = 0;
	const cJSON *args = tp_get_array(cJSON_GetArrayItem(tp_get_array(
		must_find(objs, "Deployment", NULL), "spec.template.spec.containers"), 0), "args");
	for (int i = 0; i + 1 < cJSON_GetArraySize(args) && nexempt < 8; i++)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(args, i)), "--exempt-namespace"))
			exempt[nexempt++] = cJSON_GetStringValue(cJSON_GetArrayItem(args, i + 1));
	const char *timeout = dc_arg(objs, "--webhook-timeout");
	tw_register_spec spec = { .namespace_ = tp_meta_namespace(must_find(objs, "Service", NULL)),
				  .service = dc_arg(objs, "--service"),
				  .failure_policy = dc_arg(objs, "--failure-policy"),
				  .timeout_s = timeout ? (unsigned)atoi(timeout) : 0,
				  .exempt = exempt, .nexempt = nexempt };
	assert_true(dc_str_in(args, "--register-webhooks"));
	cJSON *want = cJSON_Parse(want_json);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(cJSON_GetArraySize(tp_get_array(must_find(objs, kinds[k], NULL),
								 "webhooks")), 0);
		cJSON *hooks = tw_register_webhooks(&spec, k);
		const cJSON *hook;
		cJSON_ArrayForEach(hook, hooks)
			if (!cJSON_Compare(tp_get(hook, field), want, true))
				fail_msg("%s: %s is not %s", tp_get_str(hook, "name"), field, want_json);
		cJSON_Delete(hooks);
	}
	cJSON_Delete(want);
}

static void chart_values_reach_their_objects(void **state)
{
	(void)state;
	DC_REQUIRE(dc_helm);
	cJSON *h = helm_render(
		"tw", "platform",
		"--set webhook.failurePolicy=Ignore --set webhook.timeoutSeconds=10 "
		"--set webhook.exemptNamespaces={kube-system,sandbox} --set replicaCount=3 "
		"--set priorityClassName=system-cluster-critical --set nodeSelector.pool=infra "
		"--set tolerations[0].key=infra --set tolerations[0].operator=Exists "
		"--set affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		"nodeSelectorTerms[0].matchExpressions[0].key=pool "
		"--set affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
		"nodeSelectorTerms[0].matchExpressions[0].operator=Exists "
		"--set resources.limits.memory=128Mi --set strictAction=warn "
		"--set image.repository=registry.example.com/trainer-webhook "
		"--set image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef "
		"--set podDisruptionBudget.enabled=false --set certificates.mode=cert-manager "
		"--set certificates.certManager.issuerRef.kind=ClusterIssuer "
		"--set certificates.certManager.issuerRef.name=corp-ca "
		"--set grafanaDashboard.enabled=true --set grafanaDashboard.namespace=grafana "
		"--set serviceMonitor.enabled=true --set serviceMonitor.labels.release=prom");
	every_hook_has(h, "failurePolicy", "\"Ignore\"");
	every_hook_has(h, "timeoutSeconds", "10");
	every_hook_has(h, "namespaceSelector",
		       "{\"matchExpressions\": [{\"key\": \"kubernetes.io/metadata.name\", "
		       "\"operator\": \"NotIn\", \"values\": [\"kube-system\", \"sandbox\"]}]}");
	const cJSON *dep = must_find(h, "Deployment", "tw-trainer-webhook");
	const cJSON *pod = tp_get_object(dep, "spec.template.spec");
	long long replicas = 0;
	tp_get_int(dep, "spec.replicas", &replicas);
	assert_int_equal(replicas, 3);
	assert_string_equal(tp_get_str(pod, "priorityClassName"), "system-cluster-critical");
	assert_string_equal(tp_get_str(pod, "nodeSelector.pool"), "infra");
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(tp_get_array(pod, "tolerations"), 0), "key"),
			    "infra");
	assert_non_null(tp_get(pod, "affinity.nodeAffinity"));
	assert_null(tp_get(pod, "affinity.podAntiAffinity")); /* replaced, not merged */
	const cJSON *ctr = cJSON_GetArrayItem(tp_get_array(pod, "containers"), 0);
	assert_string_equal(tp_get_str(ctr, "resources.limits.memory"), "128Mi");
	assert_string_equal(tp_get_str(ctr, "image"),
			    "registry.example.com/trainer-webhook@sha256:"
			    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	assert_string_equal(dc_arg(h, "--strict-action"), "warn");
	assert_string_equal(dc_arg(h, "--service"), "tw-trainer-webhook");
	assert_null(dc_find(h, "PodDisruptionBudget", 0));
	assert_null(dc_find(h, "Issuer", 0));
	const cJSON *cert = must_find(h, "Certificate", "tw-trainer-webhook-cert");
	assert_string_equal(tp_get_str(cert, "spec.issuerRef.kind"), "ClusterIssuer");
	assert_string_equal(tp_get_str(cert, "spec.issuerRef.name"), "corp-ca");
	assert_string_equal(tp_meta_namespace(must_find(h, "ConfigMap", "tw-trainer-webhook-dashboard")),
			    "grafana");
	const cJSON *sm = must_find(h, "ServiceMonitor", NULL);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
				    tp_get_object(sm, "metadata.labels"), "release")),
			    "prom");
	cJSON_Delete(h);
}

/* The chart's version and appVersion are the release number (the file
 * VERSION; tests/integration/test_release_sources.c checks every other
 * mention). */
static void chart_version_is_the_release(void **state)
{
	(void)state;
	size_t n;
	char *mk = tt_read_file("VERSION", &n), *chart = tt_read_file(CHART "/Chart.yaml", &n);
	assert_non_null(mk);
	assert_non_null(chart);
	char version[64] = "", want[160];
	assert_int_equal(sscanf(mk, "%63s", version), 1);
	snprintf(want, sizeof(want), "\nversion: %s\n", version);
	if (!strstr(chart, want))
		fail_msg(CHART "/Chart.yaml: want version %s, the file VERSION's", version);
	snprintf(want, sizeof(want), "\nappVersion: \"%s\"\n", version);
	if (!strstr(chart, want))
		fail_msg(CHART "/Chart.yaml: want appVersion \"%s\"", version);
	free(mk);
	free(chart);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chart_lints_clean),
		cmocka_unit_test(chart_renders_the_base),
		cmocka_unit_test(chart_renders_the_cert_manager_overlay),
		cmocka_unit_test(chart_renders_the_components),
		cmocka_unit_test(chart_follows_a_name_and_namespace),
		cmocka_unit_test(chart_values_reach_their_objects),
		cmocka_unit_test(chart_version_is_the_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

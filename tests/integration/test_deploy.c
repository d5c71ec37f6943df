/*
 * test_deploy.c — deploy/base's files, parsed as they are (no kustomize
 * needed), against the server they install (tests/support/deploycheck.c),
 * and the checker itself on broken copies: every mutation below must be
 * reported, and the dashboard's queries against the server's metrics.
 * Rendered overlays and components: test_deploy_render.c; the image:
 * test_deploy_image.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"
#include "tests/support/deploycheck.h"
#include "tests/support/testutil.h"

#define BASE "deploy/base"

static void assert_no_probs(dc_probs *p, const char *where)
{
	if (p->n)
		fail_msg("%s: %d problem(s):\n%s", where, p->n, p->text.data);
	tp_buf_free(&p->text);
}

static cJSON *load_base_files(void)
{
	cJSON *objs = dc_load_files(BASE);
	assert_non_null(objs);
	return objs;
}

static const cJSON *find_kind(const cJSON *objs, const char *kind, int nth)
{
	return dc_find(objs, kind, nth);
}

/* ----------------------------------------------------- raw base files */

static void base_files_pass(void **state)
{
	(void)state;
	cJSON *objs = load_base_files();
	dc_probs p;
	dc_probs_init(&p);
	dc_check_all(objs, &p);
	const cJSON *ns = find_kind(objs, "Namespace", 0);
	if (strcmp(tp_meta_name(ns), "trainer-webhook-system"))
		dc_prob(&p, "Namespace %s, want trainer-webhook-system", tp_meta_name(ns));
	if (!dc_str_in(tp_get_array(cJSON_GetArrayItem(tp_get_array(find_kind(objs, "Deployment", 0),
								    "spec.template.spec.containers"),
						  0),
				  "args"),
		       "--manage-certs"))
		dc_prob(&p, "deploy/base: the default install manages its certificates");
	assert_no_probs(&p, "deploy/base");
	cJSON_Delete(objs);
}

/* The checker on a broken copy: each mutation must be reported. */
static void expect_caught(void (*mutate)(cJSON *), const char *part)
{
	cJSON *objs = load_base_files();
	mutate(objs);
	dc_probs p;
	dc_probs_init(&p);
	dc_check_all(objs, &p);
	if (!dc_probs_has(&p, part))
		fail_msg("broken manifest not caught: want \"%s\" among:\n%s", part,
			 p.text.data ? p.text.data : "(no problems)");
	tp_buf_free(&p.text);
	cJSON_Delete(objs);
}

static cJSON *mut(cJSON *objs, const char *kind)
{
	return (cJSON *)find_kind(objs, kind, 0);
}

static cJSON *mut_named(cJSON *objs, const char *kind, const char *name)
{
	return (cJSON *)dc_find_named(objs, kind, name);
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
	cJSON *rule = cJSON_GetArrayItem(
		cJSON_GetObjectItem(mut_named(o, "ClusterRole", "trainer-webhook"), "rules"), 0);
	cJSON_AddItemToArray(cJSON_GetObjectItem(rule, "verbs"), cJSON_CreateString("create"));
}
static void m_secrets(cJSON *o)
{
	cJSON *rules = cJSON_GetObjectItem(mut_named(o, "ClusterRole", "trainer-webhook"), "rules");
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
static void m_prestop_exec(cJSON *o)
{
	cJSON *pre = cJSON_GetObjectItem(cJSON_GetObjectItem(ctr0(o), "lifecycle"), "preStop");
	cJSON_DeleteItemFromObject(pre, "sleep");
	cJSON_AddItemToObject(pre, "exec", tt_jsq("{'command': ['/bin/sleep', '5']}"));
}
static void m_drop_hook(cJSON *o)
{
	cJSON_DeleteItemFromArray(cJSON_GetObjectItem(mut(o, "MutatingWebhookConfiguration"),
						      "webhooks"),
				  1);
}

static void m_secret_gone(cJSON *o)
{
	cJSON *s = mut(o, "Secret");
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(s, "metadata"), "name",
				  cJSON_CreateString("other-cert"));
}
static void m_secret_data(cJSON *o)
{
	cJSON *d = cJSON_AddObjectToObject(mut(o, "Secret"), "data");
	cJSON_AddStringToObject(d, "ca.crt", "Cg==");
}
static void m_role_name(cJSON *o)
{
	cJSON *rule = cJSON_GetArrayItem(cJSON_GetObjectItem(mut(o, "Role"), "rules"), 0);
	cJSON_ReplaceItemInObject(rule, "resourceNames",
				  cJSON_CreateStringArray((const char *[]){ "some-secret" }, 1));
}
static void m_cabundle_any(cJSON *o)
{
	cJSON *rule = cJSON_GetArrayItem(
		cJSON_GetObjectItem(mut_named(o, "ClusterRole", "trainer-webhook-cabundle"), "rules"),
		0);
	cJSON_DeleteItemFromObject(rule, "resourceNames");
}
static void m_liveness_tls(cJSON *o)
{
	cJSON *hg = cJSON_GetObjectItem(cJSON_GetObjectItem(ctr0(o), "livenessProbe"), "httpGet");
	cJSON_ReplaceItemInObject(hg, "port", cJSON_CreateString("webhook"));
	cJSON_ReplaceItemInObject(hg, "scheme", cJSON_CreateString("HTTPS"));
}
static void m_config_name(cJSON *o)
{
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(mut(o, "MutatingWebhookConfiguration"),
						      "metadata"),
				  "name", cJSON_CreateString("renamed"));
}

/* The container without flag and its value. */
static void drop_flag(cJSON *o, const char *flag)
{
	cJSON *args = cJSON_GetObjectItem(ctr0(o), "args");
	for (int i = 0; i < cJSON_GetArraySize(args); i++)
		if (!strcmp(cJSON_GetArrayItem(args, i)->valuestring, flag)) {
			cJSON_DeleteItemFromArray(args, i);
			cJSON_DeleteItemFromArray(args, i);
			return;
		}
	fail_msg("deploy/base passes no %s", flag);
}
static void m_service_default(cJSON *o)
{
	drop_flag(o, "--service");
}
static void m_config_default(cJSON *o)
{
	drop_flag(o, "--mutating-webhook");
}

static void m_psa_baseline(cJSON *o)
{
	cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(mut(o, "Namespace"), "metadata"),
					    "labels");
	cJSON_ReplaceItemInObject(labels, "pod-security.kubernetes.io/enforce",
				  cJSON_CreateString("baseline"));
}
static void m_hostpath(cJSON *o)
{
	cJSON *pod = cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(mut(o, "Deployment"), "spec"), "template"),
		"spec");
	cJSON *v = cJSON_CreateObject();
	cJSON_AddStringToObject(v, "name", "host");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(v, "hostPath"), "path", "/var/run");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(pod, "volumes"), v);
}

static void broken_manifests_caught(void **state)
{
	(void)state;
	expect_caught(m_path, "is not a route of the server");
	expect_caught(m_kind, "is not the kind route");
	expect_caught(m_verb, "ClusterRole trainer-webhook: a rule beyond what the server does");
	expect_caught(m_secrets, "ClusterRole trainer-webhook: a rule beyond what the server does");
	expect_caught(m_secret_gone, "Secret trainer-webhook-cert (--cert-secret) not found");
	expect_caught(m_secret_data, "ship it empty");
	expect_caught(m_role_name, "Role (the certificate Secret): a rule beyond");
	expect_caught(m_cabundle_any, "ClusterRole trainer-webhook-cabundle: a rule beyond");
	expect_caught(m_liveness_tls, "livenessProbe: scheme HTTPS, want HTTP");
	expect_caught(m_config_name, "MutatingWebhookConfiguration trainer-webhook-defaulter "
				     "(--mutating-webhook) not found");
	expect_caught(m_service_default, "--service not passed: the server's default trainer-webhook");
	expect_caught(m_config_default, "--mutating-webhook not passed");
	expect_caught(m_psa_baseline, "label pod-security.kubernetes.io/enforce is baseline, "
				      "want restricted");
	expect_caught(m_hostpath, "volume host: hostPath is not allowed at the restricted level");
	expect_caught(m_replicas, "replicas 1, want 2");
	expect_caught(m_listen, "does not match --listen");
	expect_caught(m_rofs, "readOnlyRootFilesystem");
	expect_caught(m_probe, "readinessProbe: path /healthz, want /readyz");
	expect_caught(m_pdb, "minAvailable: 1");
	expect_caught(m_selector, "objectSelector belongs on the runtime hooks");
	expect_caught(m_failopen, "failurePolicy Ignore");
	expect_caught(m_grace, "terminationGracePeriodSeconds 5");
	expect_caught(m_prestop_exec, "a preStop exec hook, but the image has no shell");
	expect_caught(m_drop_hook, "/mutate-jobset-x-k8s-io-v1alpha2-jobset: registered 0 times");
}

/* ------------------------------------------------------------ dashboard */

#define DASHBOARD "deploy/components/monitoring/dashboard.json"

/* The dashboard's ConfigMap as the monitoring component makes it, with
 * from (when given) replaced by to in its JSON. */
static cJSON *dashboard_cm(const char *from, const char *to, bool labelled)
{
	size_t n;
	char *text = tt_read_file(DASHBOARD, &n);
	assert_non_null(text);
	tp_buf b = TP_BUF_INIT(0);
	const char *at = from ? strstr(text, from) : NULL;
	if (from && !at)
		fail_msg(DASHBOARD " holds no \"%s\"", from);
	if (at) {
		tp_buf_add(&b, text, (size_t)(at - text));
		tp_buf_adds(&b, to);
		tp_buf_adds(&b, at + strlen(from));
	} else {
		tp_buf_adds(&b, text);
	}
	tp_buf_addc(&b, '\0');
	cJSON *cm = tt_jsq("{'kind': 'ConfigMap', 'metadata': {'name': 'trainer-webhook-dashboard', "
			   "'labels': {}}, 'data': {}}");
	if (labelled)
		cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "metadata"), "labels"),
					"grafana_dashboard", "1");
	cJSON_AddStringToObject(cJSON_GetObjectItem(cm, "data"), "trainer-webhook.json", b.data);
	tp_buf_free(&b);
	free(text);
	return cm;
}

static void expect_dashboard(const char *from, const char *to, bool labelled, const char *part)
{
	cJSON *cm = dashboard_cm(from, to, labelled);
	dc_probs p;
	dc_probs_init(&p);
	dc_check_dashboard(cm, &p);
	if (!part && p.n)
		fail_msg(DASHBOARD ": %d problem(s):\n%s", p.n, p.text.data);
	if (part && !dc_probs_has(&p, part))
		fail_msg("broken dashboard not caught: want \"%s\" among:\n%s", part,
			 p.text.data ? p.text.data : "(no problems)");
	tp_buf_free(&p.text);
	cJSON_Delete(cm);
}

static void dashboard_shows_the_servers_metrics(void **state)
{
	(void)state;
	expect_dashboard(NULL, NULL, true, NULL);
	expect_dashboard("rate(trainer_webhook_lookups_total", "rate(trainer_webhook_lookup_total", true,
			 "metric trainer_webhook_lookup_total is not one the server");
	expect_dashboard("process_resident_memory_bytes{namespace=~\\\"$namespace\\\", ",
			 "process_resident_memory_bytes{", true,
			 "process_resident_memory_bytes not selected by the $namespace variable");
	expect_dashboard("histogram_quantile(0.99, sum by (le) (",
			 "histogram_quantile(0.98, sum by (le) (", true,
			 "no panel shows latency quantiles");
	expect_dashboard("max(kube_pod_container_resource_limits",
			 "max(kube_pod_container_resource_requests", true,
			 "kube_pod_container_resource_requests is not one");
	expect_dashboard(NULL, NULL, false, "want the label grafana_dashboard");
}

static void tree_has_no_generated_keys(void **state)
{
	(void)state;
	/* the server keeps its keys in a Secret; none may ever be committed */
	char *out = NULL;
	int rc = tt_run("git ls-files 'deploy/**/*.key' 'deploy/**/*.crt' 'deploy/**/*.pem'",
			&out, NULL);
	if (rc == 0 && out && *out)
		fail_msg("keys or generated files committed under deploy/:\n%s", out);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(base_files_pass),
		cmocka_unit_test(broken_manifests_caught),
		cmocka_unit_test(dashboard_shows_the_servers_metrics),
		cmocka_unit_test(tree_has_no_generated_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_deploy.c — deploy/base's files, parsed as they are (no kustomize
 * needed), against the server they install (tests/support/deploycheck.c),
 * and the checker itself on broken copies: every mutation below must be
 * reported, of the manifests and of the webhooks the server fills the
 * shipped-empty configurations with; and the dashboard's queries against
 * the server's metrics.
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
#include "webhook/cluster/register.h"

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
	/* the base owns no namespace (components/namespace creates one, opt-in) */
	if (find_kind(objs, "Namespace", 0))
		dc_prob(&p, "deploy/base: a Namespace, which a namespace: over it would rename");
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
static void m_configurations_any(cJSON *o)
{
	cJSON *rule = cJSON_GetArrayItem(
		cJSON_GetObjectItem(mut_named(o, "ClusterRole", "trainer-webhook-configurations"),
				    "rules"),
		0);
	cJSON_DeleteItemFromObject(rule, "resourceNames");
}
static void m_configurations_create(cJSON *o)
{
	cJSON *rule = cJSON_GetArrayItem(
		cJSON_GetObjectItem(mut_named(o, "ClusterRole", "trainer-webhook-configurations"),
				    "rules"),
		1);
	cJSON_AddItemToArray(cJSON_GetObjectItem(rule, "verbs"), cJSON_CreateString("create"));
}
static void m_endpoints_watch(cJSON *o)
{
	cJSON *rule = cJSON_GetArrayItem(
		cJSON_GetObjectItem(mut_named(o, "Role", "trainer-webhook-endpoints"), "rules"), 0);
	cJSON_AddItemToArray(cJSON_GetObjectItem(rule, "verbs"), cJSON_CreateString("watch"));
}
static void m_endpoints_gone(cJSON *o)
{
	cJSON_Delete(cJSON_DetachItemViaPointer(o, mut_named(o, "Role", "trainer-webhook-endpoints")));
}
/* A webhook in the shipped configuration: an install that never gets ready
 * would refuse every TrainJob write. */
static void m_shipped_hook(cJSON *o)
{
	cJSON_AddItemToArray(cJSON_GetObjectItem(mut(o, "ValidatingWebhookConfiguration"),
						 "webhooks"),
			     tt_jsq("{'name': 'validator.trainjob.trainer.kubeflow.org', "
				    "'failurePolicy': 'Fail', 'clientConfig': {'service': "
				    "{'name': 'trainer-webhook', 'namespace': 'trainer-webhook-system', "
				    "'path': '/validate-trainer-kubeflow-org-v1alpha1-trainjob'}}}"));
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
static void m_no_register(cJSON *o)
{
	cJSON *args = cJSON_GetObjectItem(ctr0(o), "args");
	for (int i = 0; i < cJSON_GetArraySize(args); i++)
		if (!strcmp(cJSON_GetArrayItem(args, i)->valuestring, "--register-webhooks"))
			cJSON_DeleteItemFromArray(args, i);
}
static void set_flag(cJSON *o, const char *flag, const char *value)
{
	cJSON *args = cJSON_GetObjectItem(ctr0(o), "args");
	for (int i = 0; i + 1 < cJSON_GetArraySize(args); i++)
		if (!strcmp(cJSON_GetArrayItem(args, i)->valuestring, flag)) {
			cJSON_SetValuestring(cJSON_GetArrayItem(args, i + 1), value);
			return;
		}
	fail_msg("deploy/base passes no %s", flag);
}
static void m_failopen(cJSON *o)
{
	set_flag(o, "--failure-policy", "Ignore");
}
static void m_timeout(cJSON *o)
{
	set_flag(o, "--webhook-timeout", "30");
}

/* components/namespace's Namespace, beside the base's objects, at baseline */
static void m_psa_baseline(cJSON *o)
{
	cJSON *ns = dc_load_files("deploy/components/namespace");
	assert_non_null(ns);
	cJSON_AddItemToArray(o, cJSON_DetachItemFromArray(ns, 0));
	cJSON_Delete(ns);
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
	expect_caught(m_shipped_hook, "ValidatingWebhookConfiguration trainer-webhook-validator "
				      "ships webhook validator.trainjob.trainer.kubeflow.org: while "
				      "no replica is ready it refuses every write");
	expect_caught(m_no_register, "--register-webhooks not passed");
	expect_caught(m_failopen, "failurePolicy Ignore, want Fail");
	expect_caught(m_timeout, "timeoutSeconds 30, want 5");
	expect_caught(m_configurations_create, "ClusterRole trainer-webhook-configurations: a rule "
					       "beyond");
	expect_caught(m_endpoints_watch, "Role (the Service's endpoints): a rule beyond");
	expect_caught(m_endpoints_gone, "Role (the Service's endpoints): not found");
	expect_caught(m_verb, "ClusterRole trainer-webhook: a rule beyond what the server does");
	expect_caught(m_secrets, "ClusterRole trainer-webhook: a rule beyond what the server does");
	expect_caught(m_secret_gone, "Secret trainer-webhook-cert (--cert-secret) not found");
	expect_caught(m_secret_data, "ship it empty");
	expect_caught(m_role_name, "Role (the certificate Secret): a rule beyond");
	expect_caught(m_configurations_any, "ClusterRole trainer-webhook-configurations: a rule "
					    "beyond");
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
	expect_caught(m_grace, "terminationGracePeriodSeconds 5");
	expect_caught(m_prestop_exec, "a preStop exec hook, but the image has no shell");
}

/* ------------------------------------------- what the server registers */

/* The webhooks the server fills the configurations with, for deploy/base's
 * flags (webhook/cluster/register_hooks.c), changed by mutate, checked. */
static void expect_hooks_caught(void (*mutate)(cJSON *hooks[2]), const char *part)
{
	cJSON *objs = load_base_files();
	tw_register_spec spec = { .namespace_ = "trainer-webhook-system",
				  .service = "trainer-webhook" };
	cJSON *hooks[2] = { tw_register_webhooks(&spec, 0), tw_register_webhooks(&spec, 1) };
	if (mutate)
		mutate(hooks);
	dc_probs p;
	dc_probs_init(&p);
	dc_check_hooks(objs, (const cJSON *const *)hooks, &p);
	if (!part && p.n)
		fail_msg("the server's webhooks: %d problem(s):\n%s", p.n, p.text.data);
	if (part && !dc_probs_has(&p, part))
		fail_msg("broken webhooks not caught: want \"%s\" among:\n%s", part,
			 p.text.data ? p.text.data : "(no problems)");
	tp_buf_free(&p.text);
	cJSON_Delete(hooks[0]);
	cJSON_Delete(hooks[1]);
	cJSON_Delete(objs);
}

static cJSON *hook_at(cJSON *hooks[2], int m, const char *path_part)
{
	cJSON *h;
	cJSON_ArrayForEach(h, hooks[m])
	{
		const char *pth = tp_get_str(h, "clientConfig.service.path");
		if (pth && strstr(pth, path_part))
			return h;
	}
	fail_msg("the server registers no webhook for *%s*", path_part);
	return NULL;
}

static void h_path(cJSON *hooks[2])
{
	cJSON *svc = cJSON_GetObjectItem(cJSON_GetObjectItem(hook_at(hooks, 0, "-trainjob"),
							     "clientConfig"), "service");
	cJSON_ReplaceItemInObject(svc, "path", cJSON_CreateString("/validate-nothing"));
}
static void h_kind(cJSON *hooks[2])
{
	cJSON *rule = cJSON_GetArrayItem(cJSON_GetObjectItem(hook_at(hooks, 0, "-v1alpha1-trainjob"),
							     "rules"), 0);
	cJSON_ReplaceItemInObject(rule, "resources",
				  cJSON_CreateStringArray((const char *[]){ "trainingruntimes" }, 1));
}
static void h_selector(cJSON *hooks[2])
{
	cJSON_DeleteItemFromObject(hook_at(hooks, 0, "-trainingruntime"), "objectSelector");
}
static void h_drop_jobset(cJSON *hooks[2])
{
	cJSON_Delete(cJSON_DetachItemViaPointer(hooks[1], hook_at(hooks, 1, "jobset")));
}
static void h_condition(cJSON *hooks[2])
{
	cJSON_DeleteItemFromObject(hook_at(hooks, 1, "jobset"), "matchConditions");
}
static void h_other_service(cJSON *hooks[2])
{
	cJSON *svc = cJSON_GetObjectItem(cJSON_GetObjectItem(hook_at(hooks, 1, "-trainjob"),
							     "clientConfig"), "service");
	cJSON_ReplaceItemInObject(svc, "name", cJSON_CreateString("elsewhere"));
}

static void registered_webhooks_checked(void **state)
{
	(void)state;
	expect_hooks_caught(NULL, NULL); /* what the server registers passes */
	expect_hooks_caught(h_path, "is not a route of the server");
	expect_hooks_caught(h_kind, "is not the kind route");
	expect_hooks_caught(h_selector, "objectSelector belongs on the runtime hooks");
	expect_hooks_caught(h_drop_jobset, "/mutate-jobset-x-k8s-io-v1alpha2-jobset: registered 0 "
					   "times");
	expect_hooks_caught(h_condition, "want a matchCondition on an owning TrainJob");
	expect_hooks_caught(h_other_service, "calls Service trainer-webhook-system/elsewhere");
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
	expect_dashboard("sum by (reason) (rate(trainer_webhook_denials_total",
			 "sum by (route) (rate(trainer_webhook_denials_total", true,
			 "no panel shows denials by reason");
	/* process_* are checked against the server's own exposition now */
	expect_dashboard("\"expr\": \"process_resident_memory_bytes{",
			 "\"expr\": \"process_resident_memory_byte{",
			 true, "metric process_resident_memory_byte is not one the server");
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
		cmocka_unit_test(registered_webhooks_checked),
		cmocka_unit_test(dashboard_shows_the_servers_metrics),
		cmocka_unit_test(tree_has_no_generated_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

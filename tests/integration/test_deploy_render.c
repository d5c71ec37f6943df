/*
 * test_deploy_render.c — every overlay and component of deploy/, rendered by
 * `kubectl kustomize` (skipped without kubectl) and checked against the
 * server (tests/support/deploycheck.c), also under a `namespace:` override,
 * with names that line up: the Certificate's DNS names and the Service, the
 * inject-ca-from annotations and the Certificate, the alerts' metrics and
 * the server's /metrics. Overrides are rendered from a copy of deploy/ in a
 * temporary folder, never in the tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support/deploycheck.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define NS "ml-platform"

#define REQUIRE_KUBECTL() DC_REQUIRE(dc_kubectl)

static void assert_no_probs(dc_probs *p, const char *where)
{
	if (p->n)
		fail_msg("%s: %d problem(s):\n%s", where, p->n, p->text.data);
	tp_buf_free(&p->text);
}

static cJSON *render(const char *dir)
{
	char err[4096];
	cJSON *objs = dc_render(dir, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	return objs;
}

/* A copy of deploy/ with a kustomization of ours (tests/support). */
typedef dc_sandbox sandbox;

static void sandbox_make(sandbox *s, const char *kustomization)
{
	assert_int_equal(dc_sandbox_make(s, kustomization), 0);
}

static cJSON *sandbox_render(sandbox *s)
{
	char err[4096];
	cJSON *objs = dc_sandbox_render(s, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	return objs;
}

static void rendered_base_passes(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	cJSON *objs = render("deploy/base");
	dc_probs p;
	dc_probs_init(&p);
	dc_check_all(objs, &p);
	dc_check_namespace(objs, "trainer-webhook-system", &p);
	assert_no_probs(&p, "kubectl kustomize deploy/base");
	cJSON_Delete(objs);
}

static void base_follows_a_namespace_override(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	sandbox s;
	sandbox_make(&s, "namespace: " NS "\nresources:\n- ../deploy/base\n");
	cJSON *objs = sandbox_render(&s);
	dc_probs p;
	dc_probs_init(&p);
	dc_check_all(objs, &p); /* the webhooks call the Service where it now is */
	dc_check_namespace(objs, NS, &p);
	assert_no_probs(&p, "deploy/base under namespace: " NS);
	cJSON_Delete(objs);
	dc_sandbox_free(&s);
}

static void rendered_cert_manager(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	cJSON *objs = render("deploy/overlays/cert-manager");
	dc_probs p;
	dc_probs_init(&p);
	dc_check_cert_manager(objs, &p);
	dc_check_namespace(objs, "trainer-webhook-system", &p);
	assert_no_probs(&p, "kubectl kustomize deploy/overlays/cert-manager");
	cJSON_Delete(objs);
}

static void cert_manager_follows_a_namespace_override(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	/* A kustomization of one's own, as the overlay says: namespace and the
	 * follow-names transformer. */
	sandbox s;
	sandbox_make(&s, "namespace: " NS "\nresources:\n- ../deploy/overlays/cert-manager\n"
			 "transformers:\n- ../deploy/overlays/cert-manager/follow-names\n");
	cJSON *objs = sandbox_render(&s);
	dc_probs p;
	dc_probs_init(&p);
	dc_check_cert_manager(objs, &p);
	dc_check_namespace(objs, NS, &p);
	assert_no_probs(&p, "cert-manager overlay under namespace: " NS " with follow-names");
	cJSON_Delete(objs);
	/* The overlay's own namespace changed (kustomize edit set namespace). */
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "sed -i 's/^namespace: trainer-webhook-system$/namespace: " NS "/' "
		 "'%s/deploy/overlays/cert-manager/kustomization.yaml'", s.dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/deploy/overlays/cert-manager", s.dir);
	objs = render(path);
	dc_probs_init(&p);
	dc_check_cert_manager(objs, &p);
	dc_check_namespace(objs, NS, &p);
	assert_no_probs(&p, "cert-manager overlay with its own namespace: " NS);
	cJSON_Delete(objs);
	dc_sandbox_free(&s);
	/* Without the transformer the names cannot follow (kustomize runs an
	 * outer namespace: after the overlay's replacements): the checker sees
	 * what the README warns about. */
	sandbox_make(&s, "namespace: " NS "\nresources:\n- ../deploy/overlays/cert-manager\n");
	objs = sandbox_render(&s);
	dc_probs_init(&p);
	dc_check_cert_manager(objs, &p);
	assert_true(dc_probs_has(&p, "Certificate: dnsNames lacks trainer-webhook." NS ".svc"));
	tp_buf_free(&p.text);
	cJSON_Delete(objs);
	dc_sandbox_free(&s);
}

static void production_example(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	cJSON *objs = render("deploy/overlays/production");
	dc_probs p;
	dc_probs_init(&p);
	dc_check_all(objs, &p);
	const cJSON *dep = dc_find(objs, "Deployment", 0);
	const char *img = tp_get_str(cJSON_GetArrayItem(tp_get_array(dep, "spec.template.spec."
									 "containers"), 0),
				     "image");
	/* the overlay's images: entry, tagged with the release (VERSION) */
	size_t n;
	char *vf = tt_read_file("VERSION", &n), want_img[128] = "";
	if (vf)
		snprintf(want_img, sizeof(want_img), "registry.example.com/trainer-webhook:%.*s",
			 (int)strcspn(vf, "\n"), vf);
	free(vf);
	if (!img || strcmp(img, want_img))
		dc_prob(&p, "image %s, want %s (the overlay's images: entry)", img ? img : "(none)",
			want_img);
	/* ServiceMonitor: the Service's metrics port */
	const cJSON *sm = dc_find(objs, "ServiceMonitor", 0), *svc = dc_find(objs, "Service", 0);
	const char *smport = tp_get_str(cJSON_GetArrayItem(tp_get_array(sm, "spec.endpoints"), 0),
					"port");
	/* label keys hold dots: read them directly, not through a dotted path */
	const char *want = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		tp_get_object(sm, "spec.selector.matchLabels"), "app.kubernetes.io/name"));
	const char *have = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		tp_get_object(svc, "metadata.labels"), "app.kubernetes.io/name"));
	bool port_ok = false;
	const cJSON *sp;
	cJSON_ArrayForEach(sp, tp_get_array(svc, "spec.ports"))
		port_ok |= smport && tp_get_str(sp, "name") && !strcmp(tp_get_str(sp, "name"), smport);
	if (!sm || !port_ok || !want || !have || strcmp(want, have))
		dc_prob(&p, "ServiceMonitor: does not select the Service's metrics port");
	dc_check_alerts(dc_find(objs, "PrometheusRule", 0), &p);
	dc_check_dashboard(dc_find_named(objs, "ConfigMap", "trainer-webhook-dashboard"), &p);
	/* NetworkPolicy: selects the pods, lets the webhook and metrics ports in */
	const cJSON *np = dc_find(objs, "NetworkPolicy", 0);
	const cJSON *sel = tp_get_object(np, "spec.podSelector.matchLabels"), *l;
	const cJSON *labels = tp_get_object(dep, "spec.template.metadata.labels");
	cJSON_ArrayForEach(l, sel)
		if (!cJSON_GetObjectItemCaseSensitive(labels, l->string))
			dc_prob(&p, "NetworkPolicy: selects label %s the pods lack", l->string);
	char *text = cJSON_PrintUnformatted(np);
	if (!np || !strstr(text, "\"port\":9443") || !strstr(text, "\"port\":8080"))
		dc_prob(&p, "NetworkPolicy: want ingress on 9443 and 8080");
	free(text);
	assert_no_probs(&p, "kubectl kustomize deploy/overlays/production");
	cJSON_Delete(objs);
}

/* Upstream's own manifests and ours in one kustomization, with the
 * component: upstream's four webhooks never match, ours are untouched. */
static void replace_upstream_component(void **state)
{
	(void)state;
	REQUIRE_KUBECTL();
	TT_REQUIRE_SHARED();
	sandbox s;
	sandbox_make(&s, "resources:\n- ../upstream\n- ../deploy/base\ncomponents:\n"
			 "- ../deploy/components/replace-upstream\n");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cp -R '%s/fixtures/upstream/webhook' '%s/upstream'",
		 tt_shared_dir(), s.dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	cJSON *objs = sandbox_render(&s);
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	int off = 0, ours = 0, ours_cfgs = 0;
	for (int k = 0; k < 2; k++) {
		const cJSON *cfg;
		for (int i = 0; (cfg = dc_find(objs, kinds[k], i)); i++) {
			bool upstream = strstr(tp_meta_name(cfg), ".trainer.kubeflow.org") != NULL;
			ours_cfgs += !upstream;
			const cJSON *hook;
			cJSON_ArrayForEach(hook, tp_get_array(cfg, "webhooks"))
			{
				const cJSON *mc = tp_find_named(tp_get_array(hook, "matchConditions"),
								"name", "handled-by-trainer-webhook");
				const char *expr = tp_get_str(mc, "expression");
				if (upstream) {
					assert_non_null(expr);
					assert_string_equal(expr, "false");
					off++;
				} else {
					assert_null(mc);
					ours++;
				}
			}
		}
	}
	assert_int_equal(off, 4); /* upstream's three validators and its defaulter */
	assert_int_equal(ours_cfgs, 2); /* ours, untouched: shipped empty for the server to fill */
	assert_int_equal(ours, 0);
	cJSON_Delete(objs);
	dc_sandbox_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rendered_base_passes),
		cmocka_unit_test(base_follows_a_namespace_override),
		cmocka_unit_test(rendered_cert_manager),
		cmocka_unit_test(cert_manager_follows_a_namespace_override),
		cmocka_unit_test(production_example),
		cmocka_unit_test(replace_upstream_component),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

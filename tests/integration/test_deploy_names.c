/*
 * test_deploy_names.c — names that follow the install: deploy/base, the
 * cert-manager overlay and the monitoring component rendered under a
 * namePrefix, a nameSuffix and a namespace (a kustomization of one's own,
 * as their headers say to write it) leave no string naming a default
 * object: the server's flags, RBAC resourceNames, the webhooks' Service, the
 * Certificate's DNS names, Secret and Issuer, the inject-ca-from annotations,
 * the alert on the Deployment. And the scan itself, on renders that lack
 * what makes a name follow.
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

#define NS "ml-platform"
#define RENAMED "namespace: " NS "\nnamePrefix: team-a-\nnameSuffix: -x\n"
#define CM_FOLLOW "- ../deploy/overlays/cert-manager/follow-names\n"
#define MON_FOLLOW "- ../deploy/components/monitoring/follow-names\n"

static cJSON *render_sandbox(const char *kustomization, const char *edit)
{
	char err[4096];
	cJSON *objs = dc_render_own(kustomization, edit, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	return objs;
}

static cJSON *render_dir(const char *dir)
{
	char err[4096];
	cJSON *objs = dc_render(dir, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	return objs;
}

/* The problems of the renamed install, against the defaults. */
static void check_renamed(const cJSON *defaults, const cJSON *objs, bool cert_manager,
			  dc_probs *p)
{
	dc_probs_init(p);
	if (cert_manager)
		dc_check_cert_manager(objs, p);
	else
		dc_check_all(objs, p);
	dc_check_namespace(objs, NS, p);
	dc_check_names_follow(defaults, objs, p);
}

static void assert_no_probs(dc_probs *p, const char *where)
{
	if (p->n)
		fail_msg("%s: %d problem(s):\n%s", where, p->n, p->text.data);
	tp_buf_free(&p->text);
}

static void expect_prob(dc_probs *p, const char *part)
{
	if (!dc_probs_has(p, part))
		fail_msg("want \"%s\" among:\n%s", part, p->text.data ? p->text.data : "(none)");
	tp_buf_free(&p->text);
}

static void base_names_follow(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	cJSON *defaults = render_dir("deploy/base");
	cJSON *objs = render_sandbox(RENAMED "resources:\n- ../deploy/base\n", NULL);
	dc_probs p;
	check_renamed(defaults, objs, false, &p);
	/* what the flags name, by its new name */
	const char *svc = dc_arg(objs, "--service"), *sec = dc_arg(objs, "--cert-secret");
	assert_string_equal(svc, "team-a-trainer-webhook-x");
	assert_string_equal(sec, "team-a-trainer-webhook-cert-x");
	assert_string_equal(dc_arg(objs, "--validating-webhook"), "team-a-trainer-webhook-validator-x");
	assert_string_equal(dc_arg(objs, "--mutating-webhook"), "team-a-trainer-webhook-defaulter-x");
	assert_no_probs(&p, "deploy/base renamed");
	cJSON_Delete(objs);
	/* Without the base's nameReference configuration the flags and the
	 * configurations' role keep the defaults: the checks see it. */
	objs = render_sandbox(RENAMED "resources:\n- ../deploy/base\n",
			      "sed -i '/^nameReference:/,$d' deploy/base/kustomizeconfig.yaml");
	check_renamed(defaults, objs, false, &p);
	expect_prob(&p, "Deployment team-a-trainer-webhook-x: spec.template.spec.containers.args "
			"\"trainer-webhook-cert\" still names trainer-webhook-cert");
	check_renamed(defaults, objs, false, &p);
	expect_prob(&p, "ClusterRole team-a-trainer-webhook-configurations-x: rules.resourceNames "
			"\"trainer-webhook-validator\" still names trainer-webhook-validator");
	check_renamed(defaults, objs, false, &p);
	expect_prob(&p, "Secret trainer-webhook-cert (--cert-secret) not found");
	cJSON_Delete(objs);
	cJSON_Delete(defaults);
}

static void cert_manager_names_follow(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	cJSON *defaults = render_dir("deploy/overlays/cert-manager");
	cJSON *objs = render_sandbox(RENAMED "resources:\n- ../deploy/overlays/cert-manager\n"
					     "transformers:\n" CM_FOLLOW,
				     NULL);
	dc_probs p;
	check_renamed(defaults, objs, true, &p);
	const cJSON *cert = dc_find(objs, "Certificate", 0);
	assert_string_equal(tp_get_str(cert, "spec.secretName"), "team-a-trainer-webhook-cert-x");
	assert_string_equal(tp_get_str(cert, "spec.issuerRef.name"),
			    "team-a-trainer-webhook-selfsigned-x");
	assert_no_probs(&p, "cert-manager overlay renamed, with follow-names");
	cJSON_Delete(objs);
	/* Without the transformer (as the overlay's header warns). */
	objs = render_sandbox(RENAMED "resources:\n- ../deploy/overlays/cert-manager\n", NULL);
	check_renamed(defaults, objs, true, &p);
	expect_prob(&p, "Certificate: dnsNames lacks team-a-trainer-webhook-x." NS ".svc");
	check_renamed(defaults, objs, true, &p);
	expect_prob(&p, "Certificate team-a-trainer-webhook-cert-x: spec.secretName "
			"\"trainer-webhook-cert\" still names trainer-webhook-cert");
	check_renamed(defaults, objs, true, &p);
	expect_prob(&p, "cert-manager.io/inject-ca-from \"trainer-webhook-system/"
			"trainer-webhook-cert\" still names trainer-webhook-system");
	cJSON_Delete(objs);
	cJSON_Delete(defaults);
}

/* The monitoring component and the NetworkPolicy, over either install. */
static void monitoring_names_follow(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	const char *with = "resources:\n- ../deploy/overlays/cert-manager\ncomponents:\n"
			   "- ../deploy/components/monitoring\n- ../deploy/components/network-policy\n";
	cJSON *defaults = render_sandbox(with, NULL);
	char k[1024];
	snprintf(k, sizeof(k), RENAMED "%stransformers:\n" CM_FOLLOW MON_FOLLOW, with);
	cJSON *objs = render_sandbox(k, NULL);
	dc_probs p;
	check_renamed(defaults, objs, true, &p);
	assert_int_equal(dc_count(objs, "PrometheusRule"), 1);
	assert_int_equal(dc_count(objs, "NetworkPolicy"), 1);
	assert_no_probs(&p, "cert-manager, monitoring and network-policy renamed");
	cJSON_Delete(objs);
	snprintf(k, sizeof(k), RENAMED "%stransformers:\n" CM_FOLLOW, with);
	objs = render_sandbox(k, NULL);
	check_renamed(defaults, objs, true, &p);
	expect_prob(&p, "PrometheusRule team-a-trainer-webhook-x: spec.groups.rules.expr");
	cJSON_Delete(objs);
	cJSON_Delete(defaults);
}

/* The production example takes a namePrefix of its own edit. */
static void production_names_follow(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	cJSON *defaults = render_dir("deploy/overlays/production");
	cJSON *objs = render_sandbox(
		"resources:\n- ../deploy/base\n",
		"printf 'namespace: " NS "\\nnamePrefix: team-a-\\nnameSuffix: -x\\n' >> "
		"deploy/overlays/production/kustomization.yaml && "
		"sed -i 's#../deploy/base#../deploy/overlays/production#' mine/kustomization.yaml");
	dc_probs p;
	check_renamed(defaults, objs, false, &p);
	assert_no_probs(&p, "deploy/overlays/production with its own namespace, prefix, suffix");
	cJSON_Delete(objs);
	cJSON_Delete(defaults);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(base_names_follow),
		cmocka_unit_test(cert_manager_names_follow),
		cmocka_unit_test(monitoring_names_follow),
		cmocka_unit_test(production_names_follow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

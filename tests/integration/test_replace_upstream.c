/*
 * test_replace_upstream.c — upstream Kubeflow Trainer's own webhooks switched
 * off by name, by kustomize and by Helm alike (issue 31, part 4):
 * deploy/components/replace-upstream over upstream's configurations (their
 * webhooks in another order, and one it does not replace first), and the
 * chart's replaceUpstream.enabled patches applied to the same configurations
 * as its hook Job applies them (`kubectl patch --type=strategic`, here
 * --local), give the same webhooks; the chart's patches are the component's
 * files, and its Job and ClusterRole name the configurations those patch.
 * Changing the chart's list of webhooks makes the comparison fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/deploycheck.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define CHART "charts/trainer-webhook"
#define KUBE "--kube-version 1.30.0"
#define COMPONENT "deploy/components/replace-upstream"

/* Upstream's configurations, one per file, with their webhooks in another
 * order than its manifests' and one (optimizationjob) that is not replaced
 * first. */
#define HOOK(name) "- {name: " name ".trainer.kubeflow.org, clientConfig: {service: {name: s}}}\n"
#define VALIDATOR                                                                  \
	"apiVersion: admissionregistration.k8s.io/v1\n"                            \
	"kind: ValidatingWebhookConfiguration\n"                                   \
	"metadata: {name: validator.trainer.kubeflow.org}\n"                       \
	"webhooks:\n" HOOK("validator.optimizationjob") HOOK("validator.trainjob") \
	HOOK("validator.trainingruntime") HOOK("validator.clustertrainingruntime")
#define DEFAULTER                                              \
	"apiVersion: admissionregistration.k8s.io/v1\n"        \
	"kind: MutatingWebhookConfiguration\n"                 \
	"metadata: {name: defaulter.trainer.kubeflow.org}\n"   \
	"webhooks:\n" HOOK("defaulter.trainjob")

static const char *const files[2] = { "validator-off.yaml", "defaulter-off.yaml" };
static const char *const kinds[2] = { "ValidatingWebhookConfiguration",
				      "MutatingWebhookConfiguration" };

/* The chart rendered with replaceUpstream.enabled and flags. */
static cJSON *chart(const char *flags)
{
	char cmd[2048], err[4096];
	snprintf(cmd, sizeof(cmd),
		 "'%s' template tw " CHART " " KUBE " --namespace shared "
		 "--set replaceUpstream.enabled=true %s",
		 dc_tool("helm"), flags);
	cJSON *objs = dc_run_render(cmd, err, sizeof(err));
	if (!objs)
		fail_msg("helm template: %s", err);
	return objs;
}

/* The hook's ConfigMap (the patches). */
static const cJSON *patches(const cJSON *objs)
{
	const cJSON *cm = dc_find_named(objs, "ConfigMap", "tw-trainer-webhook-replace-upstream");
	if (!cm)
		fail_msg("helm template --set replaceUpstream.enabled=true: no ConfigMap "
			 "tw-trainer-webhook-replace-upstream");
	return cm;
}

/* The ConfigMap's data[file] (a key with dots: no tp_get path). */
static const char *patch_text(const cJSON *cm, const char *file)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tp_get(cm, "data"), file));
}

/* Upstream's two configurations with the chart's patches applied, as its Job
 * applies them (kubectl patch --type=strategic), offline: [validator,
 * defaulter]; NULL when kubectl refuses. */
static cJSON *apply_chart_patches(const cJSON *objs)
{
	char tmp[128], cmd[1024], err[4096];
	assert_int_equal(sp_mkdtemp(tmp, sizeof(tmp), "tw-replace"), 0);
	assert_int_equal(sp_write(tmp, "validator.yaml", VALIDATOR), 0);
	assert_int_equal(sp_write(tmp, "defaulter.yaml", DEFAULTER), 0);
	const cJSON *cm = patches(objs);
	for (int i = 0; i < 2; i++) {
		const char *patch = patch_text(cm, files[i]);
		if (!patch)
			fail_msg("the chart's ConfigMap: no data.%s", files[i]);
		assert_int_equal(sp_write(tmp, files[i], patch), 0);
	}
	snprintf(cmd, sizeof(cmd),
		 "k='%s'; case $k in */*) k=$PWD/$k ;; esac; cd '%s' && "
		 "for c in validator defaulter; do \"$k\" patch --local -o yaml "
		 "--type=strategic -f $c.yaml --patch-file $c-off.yaml && echo ---; done",
		 dc_tool("kubectl"), tmp);
	cJSON *out = dc_run_render(cmd, err, sizeof(err));
	if (!out)
		print_message("kubectl patch --local: %s\n", err);
	sp_rmtree(tmp);
	return out;
}

/* The same webhooks, each the same by its name, in the two renders of kind.
 * Not in the same order: kustomize's strategic merge puts the patched ones
 * first, the API server's (kubectl patch) keeps upstream's order. */
static bool same_webhooks(const cJSON *a, const cJSON *b, const char *kind)
{
	const cJSON *ca = dc_find(a, kind, 0), *cb = dc_find(b, kind, 0), *hook, *other;
	assert_non_null(ca);
	assert_non_null(cb);
	const cJSON *la = tp_get(ca, "webhooks"), *lb = tp_get(cb, "webhooks");
	if (cJSON_GetArraySize(la) != cJSON_GetArraySize(lb))
		return false;
	cJSON_ArrayForEach(hook, la)
	{
		bool found = false;
		cJSON_ArrayForEach(other, lb)
		{
			if (!strcmp(tp_get_str(hook, "name"), tp_get_str(other, "name"))) {
				found = cJSON_Compare(hook, other, true);
				break;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

static void chart_and_component_switch_off_the_same(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	DC_REQUIRE(dc_helm);
	char err[4096];
	cJSON *kust = dc_render_own("resources:\n- upstream.yaml\ncomponents:\n"
				    "- ../deploy/components/replace-upstream\n",
				    "cat > mine/upstream.yaml <<'EOF'\n" VALIDATOR "---\n" DEFAULTER
				    "EOF\n",
				    err, sizeof(err));
	if (!kust)
		fail_msg("kustomize with " COMPONENT ": %s", err);
	cJSON *objs = chart(""), *helm = apply_chart_patches(objs);
	assert_non_null(helm);
	for (int k = 0; k < 2; k++) {
		if (!same_webhooks(kust, helm, kinds[k]))
			fail_msg("%s: kustomize's component and the chart's patch differ:\n%s\nvs\n%s",
				 kinds[k], cJSON_Print(tp_get(dc_find(kust, kinds[k], 0), "webhooks")),
				 cJSON_Print(tp_get(dc_find(helm, kinds[k], 0), "webhooks")));
		/* and they switch off what they should, by name */
		const cJSON *hook;
		cJSON_ArrayForEach(hook, tp_get(dc_find(helm, kinds[k], 0), "webhooks"))
		{
			const cJSON *mc = cJSON_GetArrayItem(tp_get(hook, "matchConditions"), 0);
			bool ours = !strstr(tp_get_str(hook, "name"), "optimizationjob");
			assert_true(ours == (mc && !strcmp(tp_get_str(mc, "expression"), "false")));
		}
	}
	/* the chart's patches are the component's files, object for object */
	const cJSON *cm = patches(objs);
	for (int i = 0; i < 2; i++) {
		char path[128];
		snprintf(path, sizeof(path), COMPONENT "/%s", files[i]);
		char *text = tt_read_file(path, NULL);
		assert_non_null(text);
		cJSON *mine = dc_parse(text, path), *theirs = dc_parse(patch_text(cm, files[i]), files[i]);
		assert_non_null(mine);
		assert_non_null(theirs);
		if (!cJSON_Compare(mine, theirs, true))
			fail_msg("%s and the chart's data.%s differ", path, files[i]);
		cJSON_Delete(mine);
		cJSON_Delete(theirs);
		free(text);
	}
	/* the Job patches those configurations, the ClusterRole allows only them */
	const cJSON *job = dc_find_named(objs, "Job", "tw-trainer-webhook-replace-upstream");
	const cJSON *role = dc_find_named(objs, "ClusterRole", "tw-trainer-webhook-replace-upstream");
	assert_non_null(job);
	assert_non_null(role);
	char *jtext = cJSON_PrintUnformatted(job), *rtext = cJSON_PrintUnformatted(role);
	const char *want[] = { "\"validatingwebhookconfiguration\",\"validator.trainer.kubeflow.org\"",
			       "\"mutatingwebhookconfiguration\",\"defaulter.trainer.kubeflow.org\"",
			       "--patch-file=/patches/validator-off.yaml",
			       "--patch-file=/patches/defaulter-off.yaml" };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(jtext, want[i]))
			fail_msg("the replace-upstream Job: no %s in %s", want[i], jtext);
	assert_non_null(strstr(rtext, "\"resourceNames\":[\"validator.trainer.kubeflow.org\"]"));
	assert_non_null(strstr(rtext, "\"resourceNames\":[\"defaulter.trainer.kubeflow.org\"]"));
	free(jtext);
	free(rtext);
	/* the Job's pod meets Pod Security's restricted level, as the chart's
	 * namespace may enforce it */
	const cJSON *pod = tp_get(job, "spec.template.spec"), *c;
	assert_true(cJSON_IsTrue(tp_get(pod, "securityContext.runAsNonRoot")));
	assert_string_equal(tp_get_str(pod, "securityContext.seccompProfile.type"), "RuntimeDefault");
	int containers = 0;
	const char *lists[] = { "initContainers", "containers" };
	for (int l = 0; l < 2; l++)
		cJSON_ArrayForEach(c, tp_get(pod, lists[l]))
		{
			assert_true(cJSON_IsFalse(tp_get(c, "securityContext.allowPrivilegeEscalation")));
			assert_true(dc_str_in(tp_get(c, "securityContext.capabilities.drop"), "ALL"));
			containers++;
		}
	assert_int_equal(containers, 2);
	cJSON_Delete(objs);
	cJSON_Delete(helm);
	/* the comparison can fail: the chart told to switch off one webhook only */
	objs = chart("--set 'replaceUpstream.validating.webhooks={validator.trainjob.trainer.kubeflow.org}'");
	helm = apply_chart_patches(objs);
	assert_non_null(helm);
	assert_false(same_webhooks(kust, helm, kinds[0]));
	assert_true(same_webhooks(kust, helm, kinds[1]));
	cJSON_Delete(objs);
	cJSON_Delete(helm);
	cJSON_Delete(kust);
}

/* Off by default: the chart renders none of it. */
static void chart_leaves_upstream_alone_by_default(void **state)
{
	(void)state;
	DC_REQUIRE(dc_helm);
	char cmd[1024], err[4096];
	snprintf(cmd, sizeof(cmd), "'%s' template tw " CHART " " KUBE " --namespace shared",
		 dc_tool("helm"));
	cJSON *objs = dc_run_render(cmd, err, sizeof(err));
	assert_non_null(objs);
	assert_int_equal(dc_count(objs, "Job"), 0);
	assert_null(dc_find_named(objs, "ConfigMap", "tw-trainer-webhook-replace-upstream"));
	cJSON_Delete(objs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chart_and_component_switch_off_the_same),
		cmocka_unit_test(chart_leaves_upstream_alone_by_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

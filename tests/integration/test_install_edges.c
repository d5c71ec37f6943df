/*
 * test_install_edges.c — an install with no sharp edges (issue 31, part 4):
 * a `namespace:` over deploy/base renames no Namespace object of the base's
 * (it creates none; components/namespace does, opt-in), nor does the chart
 * unless asked; the chart renders no PodDisruptionBudget for one replica and
 * refuses a minAvailable that could never let a pod go; the component that
 * turns off upstream's webhooks finds them by name, whatever their order;
 * `serve --dev` runs from any folder and writes nothing there.
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

#include "tests/support/deploycheck.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"
#include "webhook/cli/dev_state.h"

#define CHART "charts/trainer-webhook"
#define KUBE "--kube-version 1.30.0"

static cJSON *kustomize(const char *kustomization, const char *edit)
{
	char err[4096];
	cJSON *objs = dc_render_own(kustomization, edit, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	return objs;
}

static int helm(const char *flags, cJSON **objs, char *err, size_t errlen)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "'%s' template tw " CHART " " KUBE " --namespace shared %s",
		 dc_tool("helm"), flags);
	*objs = dc_run_render(cmd, err, errlen);
	return *objs ? 0 : -1;
}

/* ------------------------------------------------------------ namespace */

/* The install: `namespace: shared` over deploy/base. Before, the
 * base's Namespace became "shared", labelled Pod Security restricted, and
 * `kubectl delete -k` deleted it. */
static void namespace_over_the_base_owns_none(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	cJSON *objs = kustomize("namespace: shared\nresources:\n- ../deploy/base\n", NULL);
	if (dc_count(objs, "Namespace"))
		fail_msg("namespace: shared over deploy/base renders Namespace %s",
			 tp_meta_name(dc_find(objs, "Namespace", 0)));
	assert_string_equal(tp_meta_namespace(dc_find(objs, "Deployment", 0)), "shared");
	cJSON_Delete(objs);
	/* the component creates the webhook's own, labelled, when asked */
	objs = kustomize("resources:\n- ../deploy/base\ncomponents:\n"
			 "- ../deploy/components/namespace\n",
			 NULL);
	const cJSON *ns = dc_find(objs, "Namespace", 0);
	assert_non_null(ns);
	assert_string_equal(tp_meta_name(ns), "trainer-webhook-system");
	dc_probs p;
	dc_probs_init(&p);
	dc_check_all(objs, &p);
	if (p.n)
		fail_msg("base + components/namespace: %s", p.text.data);
	tp_buf_free(&p.text);
	cJSON_Delete(objs);
}

static void chart_creates_no_namespace_unless_asked(void **state)
{
	(void)state;
	DC_REQUIRE(dc_helm);
	char err[4096];
	cJSON *objs;
	assert_int_equal(helm("", &objs, err, sizeof(err)), 0);
	assert_int_equal(dc_count(objs, "Namespace"), 0);
	cJSON_Delete(objs);
	assert_int_equal(helm("--set namespace.create=true", &objs, err, sizeof(err)), 0);
	assert_int_equal(dc_count(objs, "Namespace"), 1);
	cJSON_Delete(objs);
}

/* ------------------------------------------------------------------ PDB */

static void chart_pdb_never_blocks_a_drain(void **state)
{
	(void)state;
	DC_REQUIRE(dc_helm);
	char err[4096];
	cJSON *objs;
	/* one replica: minAvailable 1 of 1 would block every drain; none */
	assert_int_equal(helm("--set replicaCount=1", &objs, err, sizeof(err)), 0);
	assert_null(dc_find(objs, "PodDisruptionBudget", 0));
	cJSON_Delete(objs);
	/* two: minAvailable 1 */
	assert_int_equal(helm("", &objs, err, sizeof(err)), 0);
	long long min = 0;
	assert_true(tp_get_int(dc_find(objs, "PodDisruptionBudget", 0), "spec.minAvailable", &min));
	assert_int_equal(min, 1);
	cJSON_Delete(objs);
	/* minAvailable at replicaCount: refused, saying why */
	assert_int_equal(helm("--set replicaCount=2 --set podDisruptionBudget.minAvailable=2", &objs,
			      err, sizeof(err)),
			 -1);
	if (!strstr(err, "blocks every node drain"))
		fail_msg("helm template: %s", err);
}

/* ----------------------------------------------------- replace-upstream */

/* Upstream's configurations with their webhooks in another order than its
 * manifests', and a webhook this project does not replace first (as a
 * later upstream might add): a patch by list position switches off that
 * one and leaves a replaced one called. */
/* (Short: dc_render_own's command holds 1 KiB; only what kustomize needs.) */
#define HOOK(name) "- {name: " name ".trainer.kubeflow.org, clientConfig: {service: {name: s}}}\n"
#define UPSTREAM                                                                   \
	"apiVersion: admissionregistration.k8s.io/v1\n"                            \
	"kind: ValidatingWebhookConfiguration\n"                                   \
	"metadata: {name: validator.trainer.kubeflow.org}\n"                       \
	"webhooks:\n" HOOK("validator.optimizationjob") HOOK("validator.trainjob") \
	HOOK("validator.trainingruntime") HOOK("validator.clustertrainingruntime") \
	"---\n"                                                                     \
	"apiVersion: admissionregistration.k8s.io/v1\n"                            \
	"kind: MutatingWebhookConfiguration\n"                                     \
	"metadata: {name: defaulter.trainer.kubeflow.org}\n"                       \
	"webhooks:\n" HOOK("defaulter.trainjob")

static void replace_upstream_by_name(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	cJSON *objs = kustomize("resources:\n- upstream.yaml\ncomponents:\n"
				"- ../deploy/components/replace-upstream\n",
				"cat > mine/upstream.yaml <<'EOF'\n" UPSTREAM "EOF\n");
	const char *kinds[] = { "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration" };
	const int want[] = { 4, 1 };
	for (int k = 0; k < 2; k++) {
		const cJSON *conf = dc_find(objs, kinds[k], 0), *hook;
		assert_non_null(conf);
		/* no webhook added; every one replaced switched off, only those */
		assert_int_equal(cJSON_GetArraySize(tp_get(conf, "webhooks")), want[k]);
		cJSON_ArrayForEach(hook, tp_get(conf, "webhooks"))
		{
			const cJSON *mc = cJSON_GetArrayItem(tp_get(hook, "matchConditions"), 0);
			bool ours = !strstr(tp_get_str(hook, "name"), "optimizationjob");
			if (!ours && mc)
				fail_msg("%s: webhook %s switched off", kinds[k], tp_get_str(hook, "name"));
			if (ours && (!mc || strcmp(tp_get_str(mc, "expression"), "false")))
				fail_msg("%s: webhook %s still called", kinds[k],
					 tp_get_str(hook, "name"));
			assert_non_null(tp_get_str(hook, "clientConfig.service.name"));
		}
	}
	cJSON_Delete(objs);
	/* the component's patches name every webhook, and no list position */
	size_t n;
	char *v = tt_read_file("deploy/components/replace-upstream/validator-off.yaml", &n);
	assert_non_null(v);
	assert_null(strstr(v, "/webhooks/"));
	assert_non_null(strstr(v, "- name: validator.trainjob.trainer.kubeflow.org\n"));
	free(v);
}

/* ---------------------------------------------------------- serve --dev */

/* Names of the entries of dir, sorted, joined with spaces. */
static void listing(const char *dir, char *out, size_t n)
{
	char cmd[512], *ls = NULL;
	/* in parentheses: tt_run's redirections apply to the whole */
	snprintf(cmd, sizeof(cmd), "(ls -A '%s' | tr '\\n' ' ')", dir);
	tt_run(cmd, &ls, NULL);
	snprintf(out, n, "%s", ls ? ls : "");
	free(ls);
}

/* serve --dev started from an empty folder outside the checkout: it serves
 * the built-in runtimes (deploy/runtimes' files, byte for byte), its
 * certificates in a private folder under XDG_STATE_HOME, and its curl line
 * works; the folder it ran from stays empty. Before: certs/dev written
 * there, then "cannot load --runtimes". */
static void dev_runs_anywhere(void **state)
{
	(void)state;
	char tmp[128], cwd[192], st[192], cmd[4096], *out = NULL, *err = NULL;
	assert_int_equal(sp_mkdtemp(tmp, sizeof(tmp), "tw-dev"), 0);
	snprintf(cwd, sizeof(cwd), "%s/cwd", tmp);
	snprintf(st, sizeof(st), "%s/state", tmp);
	assert_int_equal(mkdir(cwd, 0755), 0);
	int port = sp_free_port();
	/* the server in the background of one shell, which stops it (its own
	 * child, by $!) once the curl line has run */
	snprintf(cmd, sizeof(cmd),
		 "(cd '%s' && XDG_STATE_HOME='%s' '%s' serve --dev --listen 127.0.0.1:%d "
		 "--metrics-listen 127.0.0.1:0 2>../serve.log & pid=$!; "
		 "i=0; while [ $i -lt %d ] && ! grep -q 'Try it' '%s/serve.log'; do "
		 "sleep 0.1; i=$((i+1)); done; "
		 "line=$(grep '^  curl ' '%s/serve.log'); sh -c \"$line\"; rc=$?; "
		 "kill $pid; wait $pid; echo; echo \"curl $rc\")",
		 cwd, st, tt_bin(), port, 300 * sp_slow(), tmp, tmp);
	tt_run(cmd, &out, &err);
	char log[256], *text;
	snprintf(log, sizeof(log), "%s/serve.log", tmp);
	size_t n;
	text = tt_read_file(log, &n);
	if (!out || !strstr(out, "\"allowed\":true") || !strstr(out, "curl 0"))
		fail_msg("serve --dev from %s: %s\nlog:\n%s", cwd, out ? out : "",
			 text ? text : "");
	/* the log names the private folder and how to stop */
	assert_non_null(strstr(text, "Stop it with Ctrl-C"));
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/trainer-webhook/dev", st);
	assert_non_null(strstr(text, dir));
	free(text);
	/* nothing written where it ran */
	char ls[1024];
	listing(cwd, ls, sizeof(ls));
	assert_string_equal(ls, "");
	/* a private folder; the CA key in it */
	struct stat sb;
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	char key[320];
	snprintf(key, sizeof(key), "%s/certs/ca.key", dir);
	assert_int_equal(stat(key, &sb), 0);
	/* the runtimes it carries are deploy/runtimes' */
	for (size_t i = 0; i < tw_dev_runtimes_count(); i++) {
		const char *name;
		size_t len, flen;
		const char *text_in = tw_dev_runtime(i, &name, &len);
		char path[320];
		snprintf(path, sizeof(path), "deploy/runtimes/%s", name);
		char *file = tt_read_file(path, &flen);
		if (!file || flen != len || memcmp(file, text_in, len))
			fail_msg("built-in runtime %s differs from %s", name, path);
		free(file);
	}
	listing("deploy/runtimes", ls, sizeof(ls));
	size_t files = 0;
	for (char *s = ls; (s = strstr(s, ".yaml ")); s++)
		files++;
	assert_int_equal(files, tw_dev_runtimes_count());
	free(out);
	free(err);
	sp_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(namespace_over_the_base_owns_none),
		cmocka_unit_test(chart_creates_no_namespace_unless_asked),
		cmocka_unit_test(chart_pdb_never_blocks_a_drain),
		cmocka_unit_test(replace_upstream_by_name),
		cmocka_unit_test(dev_runs_anywhere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

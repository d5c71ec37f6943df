/*
 * test_finding_places.c — every finding at its place, in every format
 * (issue 30, section 4): warnings and root errors at the field they are
 * about rather than the object's first line, JUnit's counts and the lines of
 * files that do not load, expand's JSON, the errors for a folder and a
 * missing file, YAML's indentation hint, Training Operator v1 jobs, the
 * --context label, and --help as the user ran the binary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#define TT_CLI_SHORT_NAMES
#include "tests/support/clicheck.h"
#include "tests/support/testutil.h"

TT_CLI_GROUP("tw-places")

static const char gpu_yaml[] =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"      /* 1 */
	"kind: TrainJob\n"
	"metadata:\n  name: gpu\n  namespace: team-a\n"    /* 3-5 */
	"spec:\n  runtimeRef:\n    name: torch-distributed\n" /* 6-8 */
	"  trainer:\n"                                     /* 9 */
	"    numNodes: 0\n"                                /* 10 */
	"    resourcesPerNode:\n      limits:\n"           /* 11-12 */
	"        nvidia.com/gpu: 1.5\n";                   /* 13 */

static const char old_yaml[] =
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
	"metadata:\n  name: old\n  namespace: team-a\n"
	"spec:\n  runtimeRef:\n    name: torch-legacy\n"; /* 8 */

/* ------------------------------------------------------------ text */

static void findings_at_their_fields(void **state)
{
	(void)state;
	write_text("gpu.yaml", gpu_yaml);
	write_text("old.yaml", old_yaml);
	char *out = NULL;
	int rc = run(&out, NULL, "validate --pod-security baseline --runtimes deploy/runtimes %s %s "
				 "deploy/runtimes/torch-legacy-deprecated.yaml",
		     tpath("gpu.yaml"), tpath("old.yaml"));
	assert_int_equal(rc, 1);
	/* numNodes: 0, at spec.trainer.numNodes */
	contains(out, "gpu.yaml:10:5: TrainJob/team-a/gpu: warning: spec.trainer.numNodes is 0");
	/* nvidia.com/gpu: 1.5: each finding at the field, none printing <nil> as its field */
	contains(out, "gpu.yaml:13:9: TrainJob/team-a/gpu: denied: "
		      "spec.trainer.resourcesPerNode.limits.nvidia.com/gpu: Invalid value: \"\": "
		      "\"spec.trainer.resourcesPerNode.limits.nvidia.com/gpu\" must validate at least "
		      "one schema (anyOf)");
	/* the rules not checked: where the field that stopped them is (its text
	 * is the API server's, whose field is <nil>) */
	const char *nc = strstr(out, "some validation rules were not checked");
	assert_non_null(nc);
	while (nc > out && nc[-1] != '\n')
		nc--;
	if (strncmp(strstr(nc, "gpu.yaml:"), "gpu.yaml:13:9: ", 15))
		fail_msg("not at 13:9: %.200s", nc);
	lacks(out, "<nil>: Invalid value: \"\"");
	lacks(out, "gpu.yaml:1:1:");
	/* a deprecated runtime: the TrainJob's at its runtimeRef.name, the
	 * runtime's at its support label */
	contains(out, "old.yaml:8:5: TrainJob/team-a/old: warning: Referenced ClusterTrainingRuntime "
		      "\"torch-legacy\" is deprecated");
	contains(out, "torch-legacy-deprecated.yaml:8:5: ClusterTrainingRuntime/torch-legacy: warning: "
		      "ClusterTrainingRuntime \"torch-legacy\" is deprecated");
	lacks(out, "old.yaml:1:1:");
	lacks(out, "torch-legacy-deprecated.yaml:2:1:");
	free(out);
	/* GitHub annotations and SARIF carry the same lines */
	rc = run(&out, NULL, "validate -o github --pod-security baseline --runtimes deploy/runtimes %s",
		 tpath("gpu.yaml"));
	contains(out, "gpu.yaml,line=10,col=5,title=TrainJob/team-a/gpu::spec.trainer.numNodes is 0");
	lacks(out, "line=1,col=1");
	free(out);
}

/* ------------------------------------------------------------ JUnit */

static void junit_counts_and_lines(void **state)
{
	(void)state;
	write_text("gpu.yaml", gpu_yaml);
	write_text("indent.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   labels: {}\n");
	char *out = NULL;
	int rc = run(&out, NULL, "validate -o junit --pod-security baseline --runtimes deploy/runtimes "
				 "%s %s deploy/runtimes", tpath("gpu.yaml"), tpath("indent.yaml"));
	assert_int_equal(rc, 2);
	char want[64];
	snprintf(want, sizeof(want), "tests=\"%zu\"", count_of(out, "<testcase "));
	assert_int_equal(count_of(out, want), 2); /* testsuites and testsuite */
	/* the file that does not load: its line, in the name and the text */
	contains(out, "name=\"read (line 5)\"");
	contains(out, "indent.yaml:5:10: mapping values are not allowed in this context");
	free(out);
}

/* ------------------------------------------------------------ expand */

static void expand_json_layout(void **state)
{
	(void)state;
	write_text("tj.yaml", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
			      "metadata:\n  name: mnist\n  namespace: team-a\n"
			      "spec:\n  runtimeRef:\n    name: torch-distributed\n");
	char *out = NULL;
	int rc = run(&out, NULL, "expand -o json --runtimes deploy/runtimes %s", tpath("tj.yaml"));
	assert_int_equal(rc, 0);
	lacks(out, "\t");
	lacks(out, "\"uid\": \"\"");
	contains(out, "\n  \"kind\": \"List\",\n");
	cJSON *j = tt_json(out);
	const cJSON *ref = cJSON_GetArrayItem(
		tp_get_array(cJSON_GetArrayItem(tp_get_array(j, "items"), 0), "metadata.ownerReferences"), 0);
	assert_string_equal(tp_get_str(ref, "name"), "mnist");
	assert_null(tp_get(ref, "uid"));
	cJSON_Delete(j);
	free(out);
	/* with a uid, it is kept; YAML likewise drops an empty one */
	rc = run(&out, NULL, "expand --runtimes deploy/runtimes %s", tpath("tj.yaml"));
	assert_int_equal(rc, 0);
	lacks(out, "uid: \"\"");
	free(out);
}

/* ------------------------------------------------------------ reading */

static void folder_and_missing_file(void **state)
{
	(void)state;
	mkdir(tpath("dir"), 0755);
	char *err = NULL;
	assert_int_equal(run(NULL, &err, "expand %s", tpath("dir")), 2);
	contains(err, "dir: a folder, not a file");
	free(err);
	assert_int_equal(run(NULL, &err, "expand %s", tpath("nothing.yaml")), 2);
	contains(err, "nothing.yaml: no such file");
	lacks(err, "a folder");
	free(err);
	char *out = NULL;
	assert_int_equal(run(NULL, &err, "review %s", tpath("dir")), 2);
	contains(err, "a folder, not a file");
	free(err);
	assert_int_equal(run(NULL, &err, "review %s", tpath("nothing.json")), 2);
	contains(err, "nothing.json: no such file");
	free(err);
	free(out);
}

static void yaml_indentation_hint(void **state)
{
	(void)state;
	write_text("indent.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   labels: {}\n");
	char *out = NULL, *err = NULL;
	assert_int_equal(run(&out, NULL, "validate %s", tpath("indent.yaml")), 2);
	contains(out, "indent.yaml:5:10: unreadable: mapping values are not allowed in this context; "
		      "check the indentation of this line and the ones above it");
	free(out);
	assert_int_equal(run(&out, NULL, "validate -o json %s", tpath("indent.yaml")), 2);
	contains(out, "\"hint\":");
	contains(out, "check the indentation");
	free(out);
	assert_int_equal(run(NULL, &err, "expand %s", tpath("indent.yaml")), 2);
	contains(err, "mapping values are not allowed in this context; check the indentation");
	free(err);
}

static void training_operator_v1_job(void **state)
{
	(void)state;
	write_text("ptj.yaml", "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: old\n"
			       "spec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n");
	char *out = NULL, *err = NULL;
	run(&out, NULL, "validate %s", tpath("ptj.yaml"));
	contains(out, "PyTorchJob/old: skipped: a Training Operator v1 PyTorchJob (kubeflow.org/v1): "
		      "Kubeflow Trainer v2 runs it as a TrainJob (apiVersion "
		      "trainer.kubeflow.org/v1alpha1) with spec.runtimeRef.name: torch-distributed");
	free(out);
	assert_int_equal(run(NULL, &err, "expand %s", tpath("ptj.yaml")), 2);
	contains(err, "spec.runtimeRef.name: torch-distributed");
	free(err);
}

/* An object the API server names from its generateName reads
 * "TrainJob/team-a/ex-(generated)", and a bad prefix's hint is about the
 * prefix, not "give the TrainJob a metadata.name". */
static void generated_name_shown_and_hinted(void **state)
{
	(void)state;
	write_text("gen.yaml", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
			       "metadata:\n  generateName: Ex_\n  namespace: team-a\nspec:\n"
			       "  runtimeRef:\n    name: torch-distributed\n");
	char *out = NULL;
	assert_int_equal(run(&out, NULL, "validate %s", tpath("gen.yaml")), 1);
	contains(out, "TrainJob/team-a/Ex_(generated): denied: metadata.name: Invalid value: "
		      "\"Ex_xxxxx\"");
	contains(out, "its name will be metadata.generateName and five random characters: a "
		      "TrainJob name is a DNS label");
	contains(out, "try \"ex\"");
	tt_lacks(out, "give the TrainJob a metadata.name");
	free(out);
	run(&out, NULL, "validate -o json %s", tpath("gen.yaml"));
	contains(out, "\"generateName\":\t\"Ex_\"");
	free(out);
}

/* ------------------------------------------------------------ flags */

static void context_error_says_context(void **state)
{
	(void)state;
	write_text("kc.yaml", "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
			      "    server: https://127.0.0.1:1\ncontexts:\n- name: a\n  context:\n"
			      "    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: t\n"
			      "current-context: a\n");
	write_text("tj.yaml", old_yaml);
	char *err = NULL;
	assert_int_equal(run(NULL, &err, "validate --kubeconfig %s --context nope %s", tpath("kc.yaml"),
			     tpath("tj.yaml")), 2);
	contains(err, "trainer-webhook validate: --context: ");
	lacks(err, "--kubeconfig: ");
	free(err);
	/* --context alone, with no kubeconfig anywhere */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "HOME=%s KUBECONFIG= %s validate --context nope %s", tmp, tt_bin(),
		 tpath("tj.yaml"));
	assert_int_equal(tt_run(cmd, NULL, &err), 2);
	contains(err, "trainer-webhook validate: --context: ");
	free(err);
}

static void help_lists_commands(void **state)
{
	(void)state;
	char *out = NULL;
	assert_int_equal(run(&out, NULL, "--help"), 0);
	contains(out, "\ncommands:\n");
	static const char *const names[] = { "validate", "review", "expand", "serve", "certs",
					     "completion" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char line[64];
		snprintf(line, sizeof(line), "\n  %-11s ", names[i]);
		contains(out, line);
	}
	free(out);
}

static void kubectl_trainer_names_itself(void **state)
{
	(void)state;
	char bin[PATH_MAX], cmd[PATH_MAX * 2];
	assert_non_null(realpath(tt_bin(), bin));
	snprintf(cmd, sizeof(cmd), "TRAINER_WEBHOOK=%s deploy/kubectl-plugin/kubectl-trainer --help", bin);
	char *out = NULL, *err = NULL;
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	contains(out, "usage: kubectl trainer COMMAND [FLAGS]  (kubectl trainer COMMAND --help");
	contains(out, "\nkubectl trainer validate [--profile");
	lacks(out, "trainer-webhook validate [");
	free(out);
	snprintf(cmd, sizeof(cmd), "TRAINER_WEBHOOK=%s deploy/kubectl-plugin/kubectl-trainer validate "
				   "--help", bin);
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	contains(out, "usage: kubectl trainer validate [--profile");
	free(out);
	snprintf(cmd, sizeof(cmd), "TRAINER_WEBHOOK=%s deploy/kubectl-plugin/kubectl-trainer validate "
				   "--bogus", bin);
	assert_int_equal(tt_run(cmd, NULL, &err), 2);
	contains(err, "kubectl trainer validate: unknown option \"--bogus\"");
	free(err);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(findings_at_their_fields),
		cmocka_unit_test(junit_counts_and_lines),
		cmocka_unit_test(expand_json_layout),
		cmocka_unit_test(folder_and_missing_file),
		cmocka_unit_test(yaml_indentation_hint),
		cmocka_unit_test(training_operator_v1_job),
		cmocka_unit_test(context_error_says_context),
		cmocka_unit_test(help_lists_commands),
		cmocka_unit_test(kubectl_trainer_names_itself),
		cmocka_unit_test(generated_name_shown_and_hinted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

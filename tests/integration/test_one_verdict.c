/*
 * test_one_verdict.c — one verdict in every command and profile (issue 30,
 * sections 2 and 3): expand refuses what validate refuses, with validate's
 * findings; the strict profile refuses all that the kubeflow profile refuses,
 * over every fixture; the guides' runtime fields follow the CRDs in force;
 * review and validate say how to give runtimes; and a repository of
 * TrainJobs alone (the pre-commit hook's case) is judged without them.
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

TT_CLI_GROUP("tw-verdict")

/* A TrainJob of deploy/runtimes' torch-distributed with the given resources. */
#define TRAINJOB(name, cpu, memory)                                                         \
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"                       \
	"metadata:\n  name: " name "\n  namespace: team-a\n"                                \
	"spec:\n  runtimeRef:\n    name: torch-distributed\n"                               \
	"  trainer:\n    numNodes: 2\n    resourcesPerNode:\n      requests:\n"             \
	"        cpu: \"" cpu "\"\n        memory: \"" memory "\"\n"

/* A ClusterTrainingRuntime with mlPolicy.torch's extra lines. */
#define RUNTIME(name, torch)                                                                \
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"         \
	"metadata:\n  name: " name "\n  labels:\n    trainer.kubeflow.org/framework: torch\n" \
	"spec:\n  mlPolicy:\n    numNodes: 1\n    torch:\n" torch                           \
	"  template:\n    spec:\n      replicatedJobs:\n        - name: node\n"             \
	"          template:\n            metadata:\n              labels:\n"               \
	"                trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"            \
	"            spec:\n              template:\n                spec:\n"               \
	"                  containers:\n                    - name: node\n"                 \
	"                      image: pytorch/pytorch\n"

/* ------------------------------------------------------------ expand */

/* Every "denied" line of validate's text report is in expand's stderr, and
 * expand previews nothing: both profiles. */
static void expand_refuses_what_validate_refuses(void **state)
{
	(void)state;
	write_text("cores.yaml", TRAINJOB("mnist", "8 cores", "64GB"));
	static const char *const profiles[] = { "strict", "kubeflow" };
	for (size_t p = 0; p < 2; p++) {
		char *vout = NULL, *out = NULL, *err = NULL;
		int rc = run(&vout, NULL, "validate --profile %s --runtimes deploy/runtimes %s",
			     profiles[p], tpath("cores.yaml"));
		assert_int_equal(rc, 1);
		rc = run(&out, &err, "expand --profile %s --runtimes deploy/runtimes %s", profiles[p],
			 tpath("cores.yaml"));
		if (rc != 1)
			fail_msg("expand --profile %s: exit %d\n%s%s", profiles[p], rc, out, err);
		assert_string_equal(out, ""); /* nothing previewed */
		size_t denied = 0;
		for (char *line = strtok(vout, "\n"); line; line = strtok(NULL, "\n"))
			if (strstr(line, ": denied: ")) {
				contains(err, line);
				denied++;
			}
		assert_int_equal(denied, 2); /* cpu and memory */
		contains(err, "\"cores\" is no unit of a quantity");
		contains(err, "use 64Gi or 64G");
		free(vout);
		free(out);
		free(err);
	}
	/* what validate admits, expand previews */
	write_text("fine.yaml", TRAINJOB("mnist", "8", "64Gi"));
	char *out = NULL;
	assert_int_equal(run(&out, NULL, "expand --runtimes deploy/runtimes %s", tpath("fine.yaml")),
			 0);
	contains(out, "kind: JobSet");
	free(out);
}

/* A runtime in the TrainJob's file that validate refuses: nothing to
 * preview either. */
static void expand_refuses_a_refused_runtime_in_its_file(void **state)
{
	(void)state;
	write_text("both.yaml", RUNTIME("torch-distributed", "      numProcPerNode: 4\n")
		   "---\n" TRAINJOB("mnist", "8", "64Gi"));
	char *out = NULL, *err = NULL;
	int rc = run(&out, &err, "expand %s", tpath("both.yaml"));
	assert_int_equal(rc, 1);
	assert_string_equal(out, "");
	contains(err, "ClusterTrainingRuntime/torch-distributed: denied: unknown field "
		      "\"spec.mlPolicy.torch.numProcPerNode\"");
	free(out);
	free(err);
}

/* expand takes --crds as validate does; --crds none as well. */
static void expand_takes_crds(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *crds = tt_shared_path("fixtures/upstream/crds"), *out = NULL, *err = NULL;
	write_text("cores.yaml", TRAINJOB("mnist", "8 cores", "64GB"));
	int rc = run(&out, &err, "expand --crds %s --runtimes deploy/runtimes %s", crds,
		     tpath("cores.yaml"));
	assert_int_equal(rc, 1);
	contains(err, "spec.trainer.resourcesPerNode.requests.cpu: Invalid value: \"8 cores\"");
	free(out);
	free(err);
	free(crds);
	write_text("fine.yaml", TRAINJOB("mnist", "8", "64Gi"));
	rc = run(&out, &err, "expand --crds none --runtimes deploy/runtimes %s", tpath("fine.yaml"));
	assert_int_equal(rc, 0);
	free(out);
	free(err);
}

/* ------------------------------------------------------------ the guides' fields */

/* The built-in CRDs (Trainer v2.3.0) have no runtime torch.numProcPerNode:
 * both profiles refuse it as kubectl's strict field validation does, and
 * say where it lives now and what to write. */
static void num_proc_per_node_follows_the_crds(void **state)
{
	(void)state;
	write_text("guide.yaml", RUNTIME("guide", "      numProcPerNode: 4\n"));
	static const char *const profiles[] = { "strict", "kubeflow" };
	for (size_t p = 0; p < 2; p++) {
		char *out = NULL;
		int rc = run(&out, NULL, "validate --profile %s %s", profiles[p], tpath("guide.yaml"));
		if (rc != 1)
			fail_msg("--profile %s: exit %d\n%s", profiles[p], rc, out);
		contains(out, "guide.yaml:11:7: ClusterTrainingRuntime/guide: denied: unknown field "
			      "\"spec.mlPolicy.torch.numProcPerNode\"; the Trainer of these CRDs takes "
			      "it from each TrainJob: remove it here and write "
			      "spec.trainer.numProcPerNode: 4 in the TrainJobs (an integer");
		lacks(out, "the API server drops it");
		free(out);
	}
	/* "auto" has no integer to carry over: the hint says what N is */
	write_text("auto.yaml", RUNTIME("auto", "      numProcPerNode: auto\n"));
	char *out = NULL;
	assert_int_equal(run(&out, NULL, "validate %s", tpath("auto.yaml")), 1);
	contains(out, "write spec.trainer.numProcPerNode: N in the TrainJobs (an integer, the "
		      "processes per node, such as the GPUs of a node)");
	free(out);
	/* elasticPolicy and the guides' MPI implementations: the same */
	write_text("elastic.yaml", RUNTIME("elastic", "      elasticPolicy:\n        maxNodes: 4\n"));
	assert_int_equal(run(&out, NULL, "validate %s", tpath("elastic.yaml")), 1);
	contains(out, "denied: unknown field \"spec.mlPolicy.torch.elasticPolicy\"; the Trainer of "
		      "these CRDs has no elastic training");
	free(out);
}

/* The shipped CRD with the guides' torch.numProcPerNode added: an older
 * Trainer's cluster. strict checks it as the guides define, kubeflow
 * admits what the CRD admits. */
static void num_proc_per_node_with_crds_that_have_it(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *src = tt_shared_path("fixtures/upstream/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml");
	char *text = tt_read_file(src, NULL);
	assert_non_null(text);
	static const char anchor[] = "description: torch defines the configuration for the PyTorch "
				     "runtime.\n                    properties:\n";
	char *at = strstr(text, anchor);
	assert_non_null(at);
	at += strlen(anchor);
	mkdir(tpath("older"), 0755);
	FILE *f = fopen(tpath("older/ctr.yaml"), "w");
	assert_non_null(f);
	fprintf(f, "%.*s                      numProcPerNode:\n"
		   "                        x-kubernetes-int-or-string: true\n%s",
		(int)(at - text), text, at);
	fclose(f);
	free(text);
	free(src);
	write_text("four.yaml", RUNTIME("four", "      numProcPerNode: 4\n"));
	write_text("bad.yaml", RUNTIME("bad", "      numProcPerNode: many\n"));
	char *out = NULL;
	int rc = run(&out, NULL, "validate --crds %s %s", tpath("older"), tpath("four.yaml"));
	if (rc != 0)
		fail_msg("exit %d\n%s", rc, out);
	free(out);
	rc = run(&out, NULL, "validate --crds %s %s", tpath("older"), tpath("bad.yaml"));
	assert_int_equal(rc, 1);
	contains(out, "spec.mlPolicy.torch.numProcPerNode");
	lacks(out, "unknown field");
	free(out);
	rc = run(&out, NULL, "validate --profile kubeflow --crds %s %s", tpath("older"),
		 tpath("four.yaml"));
	assert_int_equal(rc, 0);
	free(out);
}

/* ------------------------------------------------------------ strict >= kubeflow */

/* file#document#item of every object validate -o json denied, each a line. */
static char *denied_keys(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	if (!j)
		fail_msg("not JSON:\n%s", json);
	tp_buf b = TP_BUF_INIT(0);
	const cJSON *o;
	cJSON_ArrayForEach(o, tp_get_array(j, "objects")) {
		long long doc = 0, item = 0;
		tp_get_int(o, "document", &doc);
		tp_get_int(o, "item", &item);
		if (!strcmp(tp_get_str(o, "verdict"), "denied"))
			tp_buf_addf(&b, "%s#%lld#%lld\n", tp_get_str(o, "file"), doc, item);
	}
	cJSON_Delete(j);
	char *s = strdup(b.data ? b.data : "");
	tp_buf_free(&b);
	return s;
}

/* Every object kubeflow denies under args, strict denies too. */
static size_t strict_includes(const char *args)
{
	char *kout = NULL, *sout = NULL;
	run(&kout, NULL, "validate --profile kubeflow -o json %s", args);
	run(&sout, NULL, "validate --profile strict -o json %s", args);
	char *k = denied_keys(kout), *s = denied_keys(sout);
	size_t n = 0;
	for (char *line = strtok(k, "\n"); line; line = strtok(NULL, "\n"), n++) {
		char want[PATH_MAX + 64];
		snprintf(want, sizeof(want), "%s\n", line);
		if (!strstr(s, want))
			fail_msg("%s: denied by kubeflow, not by strict (%s)", line, args);
	}
	free(k), free(s), free(kout), free(sout);
	return n;
}

static void strict_denies_all_kubeflow_denies(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *up = tt_shared_path("fixtures/upstream"), *rts = tt_shared_path("fixtures/upstream/runtimes");
	char args[PATH_MAX * 4];
	/* the guides' objects, which the strict profile used to admit */
	mkdir(tpath("guides"), 0755);
	write_text("guides/nproc.yaml", RUNTIME("nproc", "      numProcPerNode: 4\n"));
	write_text("guides/auto.yaml", RUNTIME("auto", "      numProcPerNode: auto\n"));
	write_text("guides/elastic.yaml", RUNTIME("elastic", "      elasticPolicy:\n        maxNodes: 4\n"));
	write_text("guides/intel.yaml",
		   "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
		   "metadata:\n  name: intel\n  labels:\n    trainer.kubeflow.org/framework: mpi\n"
		   "spec:\n  mlPolicy:\n    numNodes: 1\n    mpi:\n      mpiImplementation: Intel\n"
		   "  template:\n    spec:\n      replicatedJobs: []\n");
	snprintf(args, sizeof(args), "%s", tpath("guides"));
	assert_int_equal(strict_includes(args), 4);
	/* every fixture and shipped object, alone and with the runtimes */
	snprintf(args, sizeof(args), "%s deploy/runtimes deploy/samples", up);
	strict_includes(args);
	snprintf(args, sizeof(args), "--runtimes %s --runtimes deploy/runtimes %s deploy/runtimes "
				     "deploy/samples", rts, up);
	strict_includes(args);
	/* review: every AdmissionReview of the fixtures and the sample */
	static const char *const reviews[] = {
		"01-create-trainjob", "01b-mutate-trainjob", "02-create-clustertrainingruntime-deprecated",
		"03-update-trainingruntime", "04-dryrun-create-trainjob",
		"05-create-ome-trainingruntime-v1beta1",
	};
	for (size_t i = 0; i <= sizeof(reviews) / sizeof(*reviews); i++) {
		char rel[128], *file;
		if (i < sizeof(reviews) / sizeof(*reviews)) {
			snprintf(rel, sizeof(rel), "fixtures/admissionreview/%s.request.json", reviews[i]);
			file = tt_shared_path(rel);
		} else {
			file = strdup("deploy/samples/admissionreview-trainjob.json");
		}
		for (int with = 0; with < 2; with++) {
			snprintf(args, sizeof(args), "%s%s%s %s", with ? "--runtimes " : "", with ? rts : "",
				 with ? " --runtimes deploy/runtimes" : "", file);
			int k = run(NULL, NULL, "review --profile kubeflow %s", args);
			int s = run(NULL, NULL, "review --profile strict %s", args);
			if (k == 1 && s != 1)
				fail_msg("review %s: kubeflow denies, strict exits %d", args, s);
		}
		free(file);
	}
	free(up);
	free(rts);
}

/* ------------------------------------------------------------ hints */

static void review_of_the_sample_says_how_to_give_runtimes(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	int rc = run(&out, &err, "review deploy/samples/admissionreview-trainjob.json");
	assert_int_equal(rc, 1);
	contains(out, "must be created before the TrainJob is created"); /* the server's answer */
	contains(err, "no runtimes were given");
	contains(err, "give --runtimes DIR");
	contains(err, "--kubeconfig");
	free(out);
	free(err);
	rc = run(&out, &err, "review --runtimes deploy/runtimes "
			     "deploy/samples/admissionreview-trainjob.json");
	assert_int_equal(rc, 0);
	lacks(err, "no runtimes were given");
	free(out);
	free(err);
}

static void cross_namespace_runtime_hint(void **state)
{
	(void)state;
	write_text("xns.yaml",
		   "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\n"
		   "metadata:\n  name: my-rt\n  namespace: team-b\n  labels:\n"
		   "    trainer.kubeflow.org/framework: torch\n"
		   "spec:\n  mlPolicy:\n    numNodes: 1\n    torch: {}\n"
		   "  template:\n    spec:\n      replicatedJobs:\n        - name: node\n"
		   "          template:\n            metadata:\n              labels:\n"
		   "                trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"
		   "            spec:\n              template:\n                spec:\n"
		   "                  containers:\n                    - name: node\n"
		   "                      image: pytorch/pytorch\n"
		   "---\n"
		   "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
		   "metadata:\n  name: xns\n  namespace: team-a\n"
		   "spec:\n  runtimeRef:\n    name: my-rt\n    kind: TrainingRuntime\n");
	char *out = NULL;
	int rc = run(&out, NULL, "validate --pod-security baseline %s", tpath("xns.yaml"));
	assert_int_equal(rc, 1);
	contains(out, "TrainJob/team-a/xns: denied: spec.runtimeRef");
	contains(out, "create the TrainJob in namespace \"team-b\", or a TrainingRuntime \"my-rt\" "
		      "in namespace \"team-a\"");
	lacks(out, "give the runtime");
	free(out);
}

/* ------------------------------------------------------------ TrainJobs alone */

static void trainjobs_alone_are_judged_without_runtimes(void **state)
{
	(void)state;
	mkdir(tpath("alone"), 0755);
	write_text("alone/a.yaml", TRAINJOB("a", "8", "64Gi"));
	write_text("alone/b.yaml", TRAINJOB("b", "8", "64Gi"));
	char *out = NULL, *err = NULL;
	int rc = run(&out, &err, "validate --pod-security baseline %s", tpath("alone"));
	if (rc != 0)
		fail_msg("exit %d\n%s%s", rc, out, err);
	lacks(out, "must be created before");
	assert_int_equal(count_of(err, "runtimes not checked: give --runtimes DIR or --kubeconfig"), 1);
	free(out);
	free(err);
	/* the rest is judged */
	write_text("alone/c.yaml", TRAINJOB("c", "8 cores", "64Gi"));
	rc = run(&out, &err, "validate --pod-security baseline %s", tpath("alone"));
	assert_int_equal(rc, 1);
	contains(out, "TrainJob/team-a/c: denied: spec.trainer.resourcesPerNode.requests.cpu");
	lacks(out, "must be created before");
	free(out);
	free(err);
	/* runtimes given, the name not among them: denied as before */
	rc = run(&out, &err, "validate --pod-security baseline --runtimes "
			     "deploy/runtimes/mpi-team-a.yaml %s", tpath("alone/a.yaml"));
	assert_int_equal(rc, 1);
	contains(out, "must be created before the TrainJob is created");
	lacks(err, "runtimes not checked");
	free(out);
	free(err);
	/* a runtime among the inputs is a source too */
	write_text("alone/other-rt.yaml", RUNTIME("other", ""));
	rc = run(&out, &err, "validate --pod-security baseline %s", tpath("alone"));
	assert_int_equal(rc, 1);
	contains(out, "TrainJob/team-a/a: denied: spec.runtimeRef");
	free(out);
	free(err);
}

/* The shipped pre-commit hook on a git repository of TrainJobs alone:
 * through pre-commit when it is installed, else its entry as pre-commit
 * runs it (entry, args, then the files). */
static void pre_commit_on_trainjobs_alone(void **state)
{
	(void)state;
	char root[PATH_MAX], bin[PATH_MAX], cmd[PATH_MAX * 4];
	assert_non_null(getcwd(root, sizeof(root)));
	assert_non_null(realpath(tt_bin(), bin));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bin %s/tjrepo && ln -sf %s %s/bin/trainer-webhook",
		 tmp, tmp, bin, tmp);
	assert_int_equal(system(cmd), 0);
	write_text("tjrepo/train.yaml", TRAINJOB("mnist", "8", "64Gi"));
	char *out = NULL, *err = NULL;
	int rc;
	snprintf(cmd, sizeof(cmd), "git -C %s rev-parse >/dev/null 2>&1 && command -v pre-commit "
				   ">/dev/null", root);
	if (!system(cmd)) {
		snprintf(cmd, sizeof(cmd), "cd %s/tjrepo && git init -q && git add train.yaml && "
					   "PATH=%s/bin:$PATH PRE_COMMIT_HOME=%s/pc pre-commit try-repo %s "
					   "trainer-webhook-validate --verbose --files train.yaml", tmp, tmp, tmp,
			 root);
	} else {
		print_message("no pre-commit: running the hook's entry as pre-commit would\n");
		char *text = tt_read_file(".pre-commit-hooks.yaml", NULL);
		tp_docs *docs = NULL;
		tp_load_error lerr;
		assert_int_equal(tp_load(text, strlen(text), NULL, &docs, &lerr), TP_OK);
		const cJSON *hook = cJSON_GetArrayItem(tp_docs_at(docs, 0)->obj, 0), *a;
		char args[512] = "";
		cJSON_ArrayForEach(a, tp_get_array(hook, "args"))
			snprintf(args + strlen(args), sizeof(args) - strlen(args), " %s", a->valuestring);
		snprintf(cmd, sizeof(cmd), "cd %s/tjrepo && git init -q && git add train.yaml && "
					   "PATH=%s/bin:$PATH %s%s train.yaml", tmp, tmp,
			 tp_get_str(hook, "entry"), args);
		tp_docs_free(docs);
		free(text);
	}
	rc = tt_run(cmd, &out, &err);
	print_message("%s%s", out, err);
	if (rc != 0)
		fail_msg("the hook failed (exit %d) on TrainJobs alone:\n%s%s", rc, out, err);
	char both[8192];
	snprintf(both, sizeof(both), "%s%s", out, err);
	contains(both, "runtimes not checked: give --runtimes DIR or --kubeconfig");
	free(out);
	free(err);
	/* the documented configuration says how to give them */
	char *hooks = tt_read_file(".pre-commit-hooks.yaml", NULL), *action = tt_read_file("action.yml", NULL);
	char *usage = tt_read_file("docs/usage.md", NULL);
	contains(hooks, "args: [--quiet, --runtimes, DIR]");
	contains(hooks, "--kubeconfig");
	contains(action, "--runtimes DIR");
	contains(action, "--kubeconfig");
	contains(usage, "args: [--quiet, --runtimes, runtimes/]");
	contains(usage, "args: --runtimes runtimes/");
	free(hooks), free(action), free(usage);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expand_refuses_what_validate_refuses),
		cmocka_unit_test(expand_refuses_a_refused_runtime_in_its_file),
		cmocka_unit_test(expand_takes_crds),
		cmocka_unit_test(num_proc_per_node_follows_the_crds),
		cmocka_unit_test(num_proc_per_node_with_crds_that_have_it),
		cmocka_unit_test(strict_denies_all_kubeflow_denies),
		cmocka_unit_test(review_of_the_sample_says_how_to_give_runtimes),
		cmocka_unit_test(cross_namespace_runtime_hint),
		cmocka_unit_test(trainjobs_alone_are_judged_without_runtimes),
		cmocka_unit_test(pre_commit_on_trainjobs_alone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

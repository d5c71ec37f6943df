/*
 * test_cli.c — the offline commands as a user runs them: `validate` and
 * `review` on real files, their exit codes and output, and bad input of
 * every kind answered with a clear error and exit 2, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "tests/support/clicheck.h"
#include "tests/support/testutil.h"

static char tmp[64];

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmp, name);
	return buf[i];
}

static void write_file(const char *name, const void *data, size_t n)
{
	FILE *f = fopen(tpath(name), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
}

static void write_text(const char *name, const char *text)
{
	write_file(name, text, strlen(text));
}


static void contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("\"%s\" not found in:\n%s", needle, hay ? hay : "(null)");
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/tw-cli-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *trainjob_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: TrainJob\n"
	"metadata:\n  name: mnist\n  namespace: team-a\n"
	"spec:\n"
	"  runtimeRef:\n    name: local-torch\n    kind: ClusterTrainingRuntime\n"
	"  trainer:\n    numNodes: 2\n"
	"    env:\n      - name: PET_NNODES\n        value: \"9\"\n";

static const char *runtime_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: ClusterTrainingRuntime\n"
	"metadata:\n  name: local-torch\n  labels:\n    trainer.kubeflow.org/framework: torch\n"
	"spec:\n  mlPolicy:\n    numNodes: 1\n    torch: {}\n"
	"  template:\n    spec:\n      replicatedJobs:\n        - name: node\n"
	"          template:\n            metadata:\n              labels:\n"
	"                trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"
	"            spec:\n              template:\n                spec:\n"
	"                  containers:\n                    - name: node\n"
	"                      image: pytorch\n";


/* ------------------------------------------------------------ CI output */

/* The mistakes a new user makes, each on a known line. */
static const char *mistakes_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"            /* 1 */
	"kind: TrainJob\n"
	"metadata:\n  name: typo\n"
	"spec:\n"                                                /* 5 */
	"  runtimeRef:\n    name: torch-distributed\n"
	"  trainer:\n"                                           /* 8 */
	"    numProcPerNod: 4\n"                                 /* 9 */
	"    resourcesPerNode:\n      limits:\n"
	"        memory: 4gi\n"                                  /* 12 */
	"        cpu: \"two\"\n"                                 /* 13 */
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1\n"                  /* 15 */
	"kind: TrainJob\nmetadata:\n  name: wrong-version\n"
	"spec:\n  runtimeRef:\n    name: torch-distributed\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"            /* 23 */
	"kind: Trainjob\n"                                       /* 24 */
	"metadata:\n  name: wrong-kind\n";

/* The folder m/ with the mistakes; the shipped CRDs' folder (malloc'd). */
static char *mistakes_folder(void)
{
	mkdir(tpath("m"), 0755);
	write_text("m/bad.yaml", mistakes_yaml);
	return tt_shared_path("fixtures/upstream/crds");
}

static void validate_crds_positions_text(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *crds = mistakes_folder(), *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "validate --crds %s %s", crds, tpath("m"));
	assert_int_equal(rc, 1);
	contains(out, "bad.yaml:9:5: TrainJob/typo: denied: unknown field \"spec.trainer.numProcPerNod\"; "
		      "did you mean \"numProcPerNode\"?");
	contains(out, "bad.yaml:12:9: TrainJob/typo: denied: spec.trainer.resourcesPerNode.limits.memory: "
		      "Invalid value: \"4gi\": spec.trainer.resourcesPerNode.limits.memory in body should match '^(\\+|-)?");
	contains(out, "bad.yaml:13:9: TrainJob/typo: denied: spec.trainer.resourcesPerNode.limits.cpu: "
		      "Invalid value: \"two\"");
	contains(out, "bad.yaml:15:1: TrainJob/wrong-version: denied: no matches for kind \"TrainJob\" in "
		      "version \"trainer.kubeflow.org/v1\"");
	contains(out, "bad.yaml:24:1: Trainjob/wrong-kind: denied: no matches for kind \"Trainjob\" in version "
		      "\"trainer.kubeflow.org/v1alpha1\": did you mean kind \"TrainJob\"?");
	contains(out, "3 objects in 1 file: 0 allowed, 3 denied, 0 with warnings, 0 skipped");
	assert_null(strstr(err, "without --crds"));
	free(out);
	free(err);
	/* the guides' runtime field the CRDs lack: denied at its position (issue 30) */
	write_text("guide.yaml", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\n"
				 "metadata:\n  name: guide\nspec:\n  mlPolicy:\n    torch:\n"
				 "      numProcPerNode: auto\n");
	tt_cli_run(&out, &err, "validate --crds %s %s", crds, tpath("guide.yaml"));
	contains(out, "guide.yaml:8:7: TrainingRuntime/guide: denied: unknown field "
		      "\"spec.mlPolicy.torch.numProcPerNode\"; the Trainer of these CRDs takes it");
	free(out);
	free(err);
	/* no flag: the CRDs built in find the same, at the same lines */
	rc = tt_cli_run(&out, &err, "validate %s", tpath("m"));
	assert_int_equal(rc, 1);
	contains(out, "bad.yaml:9:5: TrainJob/typo: denied: unknown field \"spec.trainer.numProcPerNod\"");
	contains(out, "bad.yaml:12:9: TrainJob/typo: denied: spec.trainer.resourcesPerNode.limits.memory: "
		      "Invalid value: \"4gi\"");
	contains(out, "bad.yaml:13:9: TrainJob/typo: denied: spec.trainer.resourcesPerNode.limits.cpu: "
		      "Invalid value: \"two\"");
	contains(out, "bad.yaml:15:1: TrainJob/wrong-version: denied: no matches for kind \"TrainJob\"");
	contains(out, "bad.yaml:24:1: Trainjob/wrong-kind: denied: no matches for kind \"Trainjob\"");
	assert_null(strstr(err, "without --crds"));
	free(out);
	free(err);
	/* --crds none: the built-in checks only; with another --crds it makes no sense */
	rc = tt_cli_run(&out, &err, "validate --crds none %s", tpath("m"));
	assert_null(strstr(out, "numProcPerNod"));
	free(out);
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "validate --crds none --crds %s %s", crds, tpath("m")), 2);
	contains(err, "--crds none turns the CRDs off");
	free(err);
	free(crds);
}

/* The trial: a new user's mistakes, no flag at all. */
static const char *trial_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"      /* 1 */
	"kind: TrainJob\n"
	"metadata:\n  name: Bad_Name\n"                   /* 4 */
	"spec:\n"
	"  runtimeRef:\n    name: torch-distribted\n"     /* 7 */
	"  trainer:\n"
	"    comand: [python]\n"                          /* 9 */
	"    resourcesPerNode:\n      limits:\n"
	"        memory: 4GB\n"                           /* 12 */
	"        nvidia.com/gpu: \"1.5x\"\n"              /* 13 */
	"      requests:\n        memory: 4Gib\n"         /* 15 */
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"      /* 17 */
	"kind: TrainingJob\n"                             /* 18 */
	"metadata: {name: wrong-kind}\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"      /* 21 */
	"kind: TrainJob\n"
	"metadata:\n  namespace: team-a\n"                /* 23 */
	"spec: {runtimeRef: {name: torch-distributed}}\n";

static void validate_trial_findings(void **state)
{
	(void)state;
	mkdir(tpath("trial"), 0755);
	write_text("trial/jobs.yaml", trial_yaml);
	write_text("trial/dup.yaml", "kind: TrainJob\nmetadata:\n  name: a\n  name: b\n");
	write_text("trial/tab.yaml", "kind: TrainJob\nmetadata:\n\tname: a\n");
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "validate deploy/runtimes %s", tpath("trial"));
	assert_int_equal(rc, 2); /* two files do not load */
	/* each at its line, the API server's text, then what to write */
	contains(out, "jobs.yaml:4:3: TrainJob/Bad_Name: denied: metadata.name: Invalid value: "
		      "\"Bad_Name\": ");
	contains(out, "try \"bad-name\"\n");
	contains(out, "jobs.yaml:6:3: TrainJob/Bad_Name: denied: spec.runtimeRef: Invalid value: ");
	contains(out, "must be created before the TrainJob is created; did you mean "
		      "\"torch-distributed\"?\n");
	contains(out, "jobs.yaml:9:5: TrainJob/Bad_Name: denied: unknown field \"spec.trainer.comand\"; "
		      "did you mean \"command\"?\n");
	contains(out, "jobs.yaml:12:9: TrainJob/Bad_Name: denied: spec.trainer.resourcesPerNode.limits."
		      "memory: Invalid value: \"4GB\": ");
	contains(out, "; use 4Gi or 4G\n");
	contains(out, "jobs.yaml:13:9: ");
	contains(out, "\"x\" is no unit of a quantity");
	contains(out, "jobs.yaml:15:9: ");
	contains(out, "; did you mean 4Gi?\n");
	assert_int_equal(tt_count_of(out, "limits.memory"), 2); /* once per field: text and path */
	contains(out, "jobs.yaml:18:1: TrainingJob/wrong-kind: denied: no matches for kind "
		      "\"TrainingJob\" in version \"trainer.kubeflow.org/v1alpha1\" (served: ");
	/* a missing name: the Required error at metadata, then the API server's
	 * line for the CEL rules it blocked (kube-apiserver v1.32.13: "<nil>:
	 * Invalid value: \"null\": some validation rules were not checked ...") */
	contains(out, "jobs.yaml:23:1: TrainJob/team-a/: denied: metadata.name: Required value: ");
	contains(out, "TrainJob/team-a/: denied: <nil>: Invalid value: \"null\": some validation rules "
		      "were not checked");
	assert_int_equal(tt_count_of(out, "TrainJob/team-a/: denied"), 2);
	assert_null(strstr(out, "no such key"));
	/* files that do not load: in the same stream, counted */
	contains(out, "dup.yaml:4:3: unreadable: mapping key \"name\" already defined at line 3");
	contains(out, "tab.yaml:3:1: unreadable: ");
	contains(out, "; YAML indents with spaces, never tabs\n");
	contains(out, " in 7 files: 4 allowed, 3 denied, 1 with warnings, 0 skipped, 2 unreadable\n");
	free(out);
	free(err);
	/* --crds none: the built-in checks, and still no silent skip */
	tt_cli_run(&out, &err, "validate --crds none %s", tpath("trial/jobs.yaml"));
	contains(out, "jobs.yaml:18:1: TrainingJob/wrong-kind: denied: no matches for kind ");
	free(out);
	free(err);
	/* expand says the same of the runtime */
	assert_int_equal(tt_cli_run(NULL, &err, "expand --runtimes deploy/runtimes %s", tpath("trial/jobs.yaml")), 2);
	free(err);
	write_text("one.yaml", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
			       "metadata: {name: one}\nspec:\n  runtimeRef:\n    name: torch-distribted\n");
	assert_int_equal(tt_cli_run(NULL, &err, "expand --runtimes deploy/runtimes %s", tpath("one.yaml")), 1);
	/* validate's findings, as validate prints them (issue 30: one verdict) */
	contains(err, "one.yaml:5:3: TrainJob/one: denied: spec.runtimeRef: Invalid value: ");
	contains(err, "; did you mean \"torch-distributed\"?");
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "expand %s", tpath("one.yaml")), 1);
	contains(err, "give the runtime as well: in the TrainJob's file, or --runtimes DIR");
	free(err);
}

/* CI's quiet modes: -o json --quiet lists only what failed; --summary is
 * one line. */
static void validate_quiet_and_summary(void **state)
{
	(void)state;
	mkdir(tpath("q"), 0755);
	write_text("q/rt.yaml", runtime_yaml);
	write_text("q/job.yaml", trainjob_yaml);
	char *out = NULL;
	assert_int_equal(tt_cli_run(&out, NULL, "validate -o json --quiet %s", tpath("q")), 1);
	cJSON *j = tt_json(out);
	const cJSON *objs = tp_get_array(j, "objects");
	assert_int_equal(cJSON_GetArraySize(objs), 1);
	assert_string_equal(tp_get_str(cJSON_GetArrayItem(objs, 0), "verdict"), "denied");
	long long allowed = 0;
	assert_true(tp_get_int(j, "summary.allowed", &allowed) && allowed == 1);
	cJSON_Delete(j);
	free(out);
	assert_int_equal(tt_cli_run(&out, NULL, "validate --summary %s", tpath("q")), 1);
	assert_string_equal(out, "2 objects in 2 files: 1 allowed, 1 denied, 0 with warnings, "
				 "0 skipped\n");
	free(out);
	assert_int_equal(tt_cli_run(&out, NULL, "validate -o json --summary %s", tpath("q")), 1);
	assert_int_equal(tt_count_of(out, "\n"), 1);
	contains(out, "{\"summary\":{\"objects\":2,");
	free(out);
}

/* --version: the release (the file VERSION's) and the commit, and the CRDs
 * built in. */
static void version_names_release_and_crds(void **state)
{
	(void)state;
	char *out = NULL, *commit = NULL, release[64] = "", want[96];
	size_t n;
	char *vf = tt_read_file("VERSION", &n);
	assert_non_null(vf);
	assert_int_equal(sscanf(vf, "%63s", release), 1);
	free(vf);
	assert_int_equal(tt_cli_run(&out, NULL, "--version"), 0);
	snprintf(want, sizeof(want), "trainer-webhook %s\n", release);
	if (strncmp(out, want, strlen(want) - 1) || (out[strlen(want) - 1] != '\n' && out[strlen(want) - 1] != ' '))
		fail_msg("--version: %s, want \"trainer-webhook %s\" first", out, release);
	contains(out, "built-in CRDs: kubeflow/trainer v2.3.0 (8c0f5059)");
	contains(out, "kubernetes-sigs/jobset 08dfbdfd");
	/* built in a git checkout: the commit it was built from */
	if (tt_run("git rev-parse --short=7 HEAD", &commit, NULL) == 0 && commit && *commit) {
		commit[strcspn(commit, "\n")] = '\0';
		snprintf(want, sizeof(want), "trainer-webhook %s (%s", release, commit);
		contains(out, want);
	}
	free(commit);
	free(out);
}

static void validate_github_and_sarif(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *crds = mistakes_folder(), *out = NULL;
	assert_int_equal(tt_cli_run(&out, NULL, "validate -o github --crds %s %s", crds, tpath("m")), 1);
	contains(out, "bad.yaml,line=9,col=5,title=TrainJob/typo::unknown field \"spec.trainer.numProcPerNod\"");
	contains(out, "::error file=");
	free(out);
	assert_int_equal(tt_cli_run(&out, NULL, "validate -o sarif --crds %s %s", crds, tpath("m")), 1);
	cJSON *s = tt_json(out);
	assert_string_equal(tp_get_str(s, "version"), "2.1.0");
	const cJSON *run0 = cJSON_GetArrayItem(tp_get_array(s, "runs"), 0);
	assert_string_equal(tp_get_str(run0, "tool.driver.name"), "trainer-webhook");
	const cJSON *rules = tp_get_array(run0, "tool.driver.rules");
	const cJSON *results = tp_get_array(run0, "results"), *r;
	/* the typo's object has 3 (its runtimeRef is not checked: no runtimes in the run) */
	assert_int_equal(cJSON_GetArraySize(results), 5);
	int unknown_field = 0, quantity = 0, unknown_kind = 0;
	cJSON_ArrayForEach(r, results) {
		/* one rule per kind of finding, with its help, found by index */
		const char *id = tp_get_str(r, "ruleId");
		long long idx = -1;
		assert_true(tp_get_int(r, "ruleIndex", &idx));
		const cJSON *rule = cJSON_GetArrayItem(rules, (int)idx);
		assert_string_equal(tp_get_str(rule, "id"), id);
		assert_non_null(tp_get_str(rule, "help.text"));
		unknown_field += !strcmp(id, "unknown-field");
		quantity += !strcmp(id, "invalid-quantity");
		unknown_kind += !strcmp(id, "unknown-kind");
		assert_string_equal(tp_get_str(r, "level"), "error");
		assert_non_null(tp_get_str(r, "message.text"));
		const cJSON *loc = cJSON_GetArrayItem(tp_get_array(r, "locations"), 0);
		assert_non_null(strstr(tp_get_str(loc, "physicalLocation.artifactLocation.uri"), "bad.yaml"));
		long long line = 0;
		assert_true(tp_get_int(loc, "physicalLocation.region.startLine", &line) && line >= 1);
	}
	assert_int_equal(unknown_field, 1);
	assert_int_equal(quantity, 2);
	assert_int_equal(unknown_kind, 2);
	cJSON_Delete(s);
	free(out);
	/* inside the repository: paths relative to it, with its base */
	assert_int_equal(tt_cli_run(&out, NULL, "validate -o sarif deploy/runtimes"), 0);
	s = tt_json(out);
	run0 = cJSON_GetArrayItem(tp_get_array(s, "runs"), 0);
	r = cJSON_GetArrayItem(tp_get_array(run0, "results"), 0);
	const cJSON *art = tp_get(cJSON_GetArrayItem(tp_get_array(r, "locations"), 0),
				  "physicalLocation.artifactLocation");
	assert_string_equal(tp_get_str(art, "uri"), "deploy/runtimes/torch-legacy-deprecated.yaml");
	assert_string_equal(tp_get_str(art, "uriBaseId"), "%SRCROOT%");
	assert_string_equal(tp_get_str(r, "ruleId"), "deprecated-runtime");
	const char *base = tp_get_str(run0, "originalUriBaseIds.%SRCROOT%.uri");
	assert_non_null(base);
	assert_true(!strncmp(base, "file:///", 8) && base[strlen(base) - 1] == '/');
	cJSON_Delete(s);
	free(out);
	free(crds);
}

static void validate_junit_against_schema(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *crds = mistakes_folder(), cmd[1024], *junit = NULL;
	write_text("m/rt.yaml", runtime_yaml);
	assert_int_equal(tt_cli_run(&junit, NULL, "validate -o junit --crds %s %s", crds, tpath("m")), 1);
	write_text("junit.xml", junit);
	free(junit);
	char *xsd = realpath("tests/support/junit.xsd", NULL);
	assert_non_null(xsd);
	snprintf(cmd, sizeof(cmd), "xmllint --noout --schema %s %s", xsd, tpath("junit.xml"));
	char *err = NULL;
	int rc = tt_run(cmd, NULL, &err);
	if (rc)
		print_message("%s\n", err);
	assert_int_equal(rc, 0);
	char *xml = tt_read_file(tpath("junit.xml"), NULL);
	contains(xml, "tests=\"4\" failures=\"3\"");
	contains(xml, "<failure type=\"denied\"");
	free(xml);
	free(err);
	free(xsd);
	free(crds);
}

static void validate_json_positions_and_unreadable(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *crds = mistakes_folder(), *out = NULL;
	write_text("m/broken.yaml", "kind: [\n");
	assert_int_equal(tt_cli_run(&out, NULL, "validate -o json --crds %s %s", crds, tpath("m")), 2);
	cJSON *j = tt_json(out);
	const cJSON *first = cJSON_GetArrayItem(tp_get_array(j, "objects"), 0);
	const cJSON *e = cJSON_GetArrayItem(tp_get_array(first, "errors"), 0);
	long long line = 0, col = 0;
	assert_true(tp_get_int(e, "line", &line) && tp_get_int(e, "column", &col));
	assert_int_equal(line, 9);
	assert_int_equal(col, 5);
	const cJSON *u = cJSON_GetArrayItem(tp_get_array(j, "unreadable"), 0);
	assert_non_null(strstr(tp_get_str(u, "file"), "broken.yaml"));
	assert_non_null(tp_get_str(u, "reason"));
	cJSON_Delete(j);
	free(out);
	free(crds);
}

static void validate_filters_and_edges(void **state)
{
	(void)state;
	mkdir(tpath("f"), 0755);
	write_text("f/rt.yaml", runtime_yaml);
	write_text("f/job.yaml", trainjob_yaml);
	write_text("f/chart.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n");
	char *out = NULL, *err = NULL;
	/* --quiet: problems only; --exclude and --skip-kinds */
	assert_int_equal(tt_cli_run(&out, &err, "validate --quiet %s", tpath("f")), 1);
	assert_null(strstr(out, ": ok"));
	contains(out, "TrainJob/team-a/mnist: denied");
	contains(err, "chart.yaml: a Helm template ({{ ... }}): skipped");
	free(out);
	free(err);
	assert_int_equal(tt_cli_run(&out, NULL, "validate --exclude 'job.*' %s", tpath("f")), 0);
	assert_null(strstr(out, "mnist"));
	free(out);
	assert_int_equal(tt_cli_run(&out, NULL, "validate --skip-kinds TrainJob,Foo %s", tpath("f")), 0);
	contains(out, "1 skipped");
	free(out);
	/* an input with no manifest at all */
	mkdir(tpath("empty"), 0755);
	write_text("empty/notes.yaml", "# nothing here\n");
	assert_int_equal(tt_cli_run(NULL, &err, "validate %s", tpath("empty")), 2);
	contains(err, "no manifests found");
	free(err);
	assert_int_equal(tt_cli_run(&out, NULL, "--version"), 0);
	contains(out, "trainer-webhook ");
	free(out);
	assert_int_equal(tt_cli_run(&out, NULL, "completion bash"), 0);
	contains(out, "complete -o filenames -F _trainer_webhook trainer-webhook");
	free(out);
	assert_int_equal(tt_cli_run(&out, NULL, "completion zsh"), 0);
	contains(out, "#compdef trainer-webhook");
	free(out);
	assert_int_equal(tt_cli_run(NULL, NULL, "completion fish"), 2);
}

/* ------------------------------------------------------------ validate */

static void validate_example_runtimes_pass(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "validate deploy/runtimes");
	if (rc != 0)
		fail_msg("exit %d\n%s%s", rc, out, err);
	contains(out, "ClusterTrainingRuntime/torch-distributed: ok");
	contains(out, "ClusterTrainingRuntime/torch-legacy: warning: ClusterTrainingRuntime "
		      "\"torch-legacy\" is deprecated");
	contains(out, "TrainingRuntime/team-a/mpi-openmpi: ok");
	free(out);
	free(err);
}

static void validate_resolves_runtimes_among_inputs(void **state)
{
	(void)state;
	write_text("runtime.yaml", runtime_yaml);
	write_text("job.yaml", trainjob_yaml);
	char *out = NULL, *err = NULL;
	/* The runtime is found in the other input: the denial is the torch rule,
	 * not "must be created before". */
	int rc = tt_cli_run(&out, &err, "validate %s %s", tpath("job.yaml"), tpath("runtime.yaml"));
	assert_int_equal(rc, 1);
	/* file:line:col of the field the error names (spec.trainer.env) */
	contains(out, "job.yaml:12:5: TrainJob/team-a/mnist: denied: spec.trainer.env: Invalid value: ");
	contains(out, "must not have reserved envs, invalid envs configured: [PET_NNODES]");
	free(out);
	free(err);
	/* Alone, with no source of runtimes at all, its runtimeRef is not
	 * checked, said once (issue 30, section 3)... */
	rc = tt_cli_run(&out, &err, "validate --profile kubeflow %s", tpath("job.yaml"));
	assert_int_equal(rc, 0);
	contains(err, "runtimes not checked: give --runtimes DIR or --kubeconfig");
	free(out);
	free(err);
	/* ...while runtimes given without its name still deny it. */
	rc = tt_cli_run(&out, &err, "validate --profile kubeflow --runtimes deploy/runtimes %s",
		 tpath("job.yaml"));
	assert_int_equal(rc, 1);
	contains(out, "specified clusterTrainingRuntime must be created before the TrainJob is "
		      "created");
	free(out);
	free(err);
	/* --runtimes supplies it as well. */
	rc = tt_cli_run(&out, &err, "validate --runtimes %s %s", tpath("runtime.yaml"),
		 tpath("job.yaml"));
	assert_int_equal(rc, 1);
	contains(out, "[PET_NNODES]");
	free(out);
	free(err);
}

/* Volcano's PriorityClass rule offline: a PriorityClass among the inputs
 * (or under --runtimes) exists; without one the TrainJob is denied. */
static void validate_priority_classes_among_inputs(void **state)
{
	(void)state;
	write_text("volcano-rt.yaml",
		   "apiVersion: trainer.kubeflow.org/v1alpha1\n"
		   "kind: ClusterTrainingRuntime\n"
		   "metadata: {name: gang, labels: {trainer.kubeflow.org/framework: torch}}\n"
		   "spec:\n"
		   "  mlPolicy: {numNodes: 1, torch: {}}\n"
		   "  podGroupPolicy: {volcano: {}}\n"
		   "  template:\n"
		   "    spec:\n"
		   "      replicatedJobs:\n"
		   "      - name: node\n"
		   "        template:\n"
		   "          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
		   "          spec: {template: {spec: {priorityClassName: batch-high,\n"
		   "                 containers: [{name: node, image: 'pytorch/pytorch'}]}}}\n"
		   "---\n"
		   "apiVersion: trainer.kubeflow.org/v1alpha1\n"
		   "kind: TrainJob\n"
		   "metadata: {name: gang-job, namespace: team-a}\n"
		   "spec: {runtimeRef: {name: gang}}\n");
	write_text("pc.yaml", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
			      "metadata: {name: batch-high}\nvalue: 1000\n");
	char *out = NULL;
	assert_int_equal(tt_cli_run(&out, NULL, "validate --profile kubeflow %s", tpath("volcano-rt.yaml")), 1);
	contains(out, "spec.templateSpec.priorityClassName: Invalid value: \"batch-high\": "
		      "PriorityClass \"batch-high\" doesn't exist: priorityclasses.scheduling.k8s.io "
		      "\"batch-high\" not found");
	free(out);
	assert_int_equal(tt_cli_run(NULL, NULL, "validate --profile kubeflow %s %s", tpath("pc.yaml"),
			     tpath("volcano-rt.yaml")),
			 0);
	assert_int_equal(tt_cli_run(NULL, NULL, "validate --profile kubeflow --runtimes %s %s",
			     tpath("pc.yaml"), tpath("volcano-rt.yaml")),
			 0);
}

static void validate_json_output(void **state)
{
	(void)state;
	write_text("runtime.yaml", runtime_yaml);
	write_text("job.yaml", trainjob_yaml);
	char *out = NULL;
	int rc = tt_cli_run(&out, NULL, "validate -o json %s %s", tpath("runtime.yaml"),
		     tpath("job.yaml"));
	assert_int_equal(rc, 1);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	const cJSON *objs = tp_get_array(j, "objects");
	assert_int_equal(cJSON_GetArraySize(objs), 2);
	const cJSON *job = cJSON_GetArrayItem(objs, 1);
	assert_string_equal(tp_get_str(job, "verdict"), "denied");
	assert_string_equal(tp_get_str(job, "kind"), "TrainJob");
	const cJSON *e0 = cJSON_GetArrayItem(tp_get_array(job, "errors"), 0);
	assert_string_equal(tp_get_str(e0, "field"), "spec.trainer.env");
	long long denied = 0;
	assert_true(tp_get_int(j, "summary.denied", &denied)); /* one summary */
	assert_int_equal(denied, 1);
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "denied"));
	/* a field and a kind of finding on every error */
	const cJSON *o, *e;
	cJSON_ArrayForEach(o, objs)
		cJSON_ArrayForEach(e, tp_get_array(o, "errors")) {
			assert_non_null(tp_get_str(e, "field"));
			assert_non_null(tp_get_str(e, "rule"));
		}
	cJSON_Delete(j);
	free(out);
}

static void validate_outdated_api_version(void **state)
{
	(void)state;
	write_text("old.yaml", "apiVersion: kubeflow.org/v2alpha1\nkind: TrainJob\n"
			       "metadata:\n  name: old\nspec: {}\n");
	char *out = NULL;
	assert_int_equal(tt_cli_run(&out, NULL, "validate %s", tpath("old.yaml")), 1);
	contains(out, "apiVersion: Invalid value: \"kubeflow.org/v2alpha1\"");
	contains(out, "trainer.kubeflow.org/v1alpha1");
	free(out);
}

/* Exit 2, and part said on stdout (a file that does not load is a finding
 * in the report's stream) or stderr (a path that cannot be read). */
static void expect_exit2(const char *file, const char *part)
{
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "validate %s", tpath(file));
	if (rc != 2)
		fail_msg("%s: exit %d, want 2\n%s%s", file, rc, out, err);
	if (!strstr(out, part))
		contains(err, part);
	free(out);
	free(err);
}

static void validate_bad_input_exits_2(void **state)
{
	(void)state;
	write_text("empty.yaml", "");
	expect_exit2("empty.yaml", "no manifests found"); /* nothing to judge: exit 2 */
	unsigned char garbage[4096];
	for (size_t i = 0; i < sizeof(garbage); i++)
		garbage[i] = (unsigned char)(i * 2654435761u >> 13);
	write_file("garbage.yaml", garbage, sizeof(garbage));
	expect_exit2("garbage.yaml", "garbage.yaml");
	write_text("utf8.yaml", "kind: TrainJob\nmetadata:\n  name: \xc3\x28\n");
	expect_exit2("utf8.yaml", "UTF-8");
	expect_exit2("missing.yaml", "missing.yaml");

	size_t depth = 10000;
	char *deep = malloc(2 * depth + 1);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	deep[2 * depth] = '\0';
	write_text("deep.json", deep);
	expect_exit2("deep.json", "deep.json");
	/* The same depth as YAML block mappings would take a big file; flow style: */
	write_text("deep.yaml", deep);
	expect_exit2("deep.yaml", "deep.yaml");
	free(deep);

	write_text("bomb.yaml",
		   "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
		   "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
		   "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
		   "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
		   "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n");
	expect_exit2("bomb.yaml", "bomb.yaml");

	/* A 50 MiB document: one huge string value. */
	size_t big = (size_t)50 * 1024 * 1024;
	char *doc = malloc(big + 64);
	int head = snprintf(doc, 64, "kind: TrainJob\ndata: \"");
	memset(doc + head, 'x', big);
	memcpy(doc + head + big, "\"\n", 3);
	write_text("big.yaml", doc);
	free(doc);
	expect_exit2("big.yaml", "big.yaml");
}

static void validate_usage_errors_exit_2(void **state)
{
	(void)state;
	char *err = NULL;
	assert_int_equal(tt_cli_run(NULL, &err, "validate"), 2);
	contains(err, "PATH");
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "validate --profile loose x.yaml"), 2);
	contains(err, "--profile");
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "validate -o xml x.yaml"), 2);
	contains(err, "-o");
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "nosuchcommand"), 2);
	contains(err, "unknown command");
	free(err);
	/* serve's timeouts: whole seconds, never 0 (that would be no timeout) */
	assert_int_equal(tt_cli_run(NULL, &err, "serve --dev --handshake-timeout 0"), 2);
	contains(err, "--handshake-timeout \"0\": want a whole number from 1 to 3600");
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "serve --dev --idle-timeout 2m"), 2);
	contains(err, "--idle-timeout \"2m\": want a whole number from 1 to 86400");
	free(err);
}


/* Every upstream runtime and example, judged as upstream's webhook judges
 * them: all allowed but 05's TrainJob, whose inlined runtime lacks the
 * `initializer` volumeMount upstream's JobSet plugin requires. */
/* serve --manage-certs refuses certificate durations that cannot renew
 * calmly, before it calls any API server (issue 20: --ca-validity 60s wrote
 * the Secret 931 times in 5 s). */
static void serve_refuses_certificate_durations(void **state)
{
	(void)state;
	char *err = NULL;
	/* Were the durations taken, the missing --runtimes would end it at once. */
	const char *base = "serve --manage-certs --kube-server http://127.0.0.1:1 --namespace ns "
			   "--runtimes /nonexistent/x.yaml --listen 127.0.0.1:0 "
			   "--metrics-listen 127.0.0.1:0";
	assert_int_equal(tt_cli_run(NULL, &err, "%s --ca-validity 60s", base), 2);
	contains(err, "--cert-validity \"8760h\" (the default) is longer than --ca-validity "
		      "\"1m\"");
	contains(err, "--ca-validity \"1m\" is too short for --ca-overlap \"1h\" (the default)");
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "%s --cert-validity 4s --ca-validity 10s --ca-overlap 1s",
			     base), 2);
	contains(err, "give --cert-validity \"5s\" or more");
	free(err);
}

static void validate_upstream_fixtures_as_upstream(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *rt = tt_shared_path("fixtures/upstream/runtimes");
	char *ex = tt_shared_path("fixtures/upstream/examples");
	const char *profiles[] = { "kubeflow", "strict" };
	for (size_t i = 0; i < 2; i++) {
		char *out = NULL, *err = NULL;
		int rc = tt_cli_run(&out, &err, "validate --profile %s %s %s", profiles[i], rt, ex);
		if (rc != 1)
			fail_msg("%s: exit %d\n%s%s", profiles[i], rc, out, err);
		assert_int_equal(tt_count_of(out, ": denied: "), 1);
		contains(out, "TrainJob/multi-step-example: denied: spec.runtimeRef: Invalid value: ");
		contains(out, "must have volumeMount with name - initializer in container "
			      "dataset-initializer of the dataset-initializer job");
		/* 9 runtimes, 1 runtime and 4 TrainJobs among the examples, 1 more runtime. */
		assert_int_equal(tt_count_of(out, ": ok\n"), 15);
		assert_int_equal(tt_count_of(out, ": skipped: "), 3); /* kustomization.yaml files */
		free(out);
		free(err);
	}
	free(rt);
	free(ex);
}

/* ------------------------------------------------------------ review */

static void review_deny_and_allow(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "review --runtimes deploy/runtimes "
				 "deploy/samples/admissionreview-trainjob.json");
	if (rc != 0)
		fail_msg("exit %d\n%s%s", rc, out, err);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	assert_string_equal(tp_get_str(j, "response.uid"), "0b6f3a52-7c1d-4e8a-9f20-5d4c3b2a1908");
	assert_true(tp_get_true(j, "response.allowed"));
	const cJSON *w = tp_get_array(j, "response.warnings");
	assert_int_equal(cJSON_GetArraySize(w), 1);
	contains(cJSON_GetArrayItem(w, 0)->valuestring,
		 "Referenced ClusterTrainingRuntime \"torch-legacy\" is deprecated");
	cJSON_Delete(j);
	free(out);
	free(err);
	/* Without the runtimes, the same TrainJob is denied: exit 1. */
	rc = tt_cli_run(&out, &err, "review deploy/samples/admissionreview-trainjob.json");
	assert_int_equal(rc, 1);
	contains(out, "\"allowed\":false");
	contains(out, "must be created before the TrainJob is created");
	free(out);
	free(err);
}

/* The server's --strict-action, replayed: a runtime without the framework
 * label is denied by the strict profile, allowed with a warning under warn. */
static void review_strict_action(void **state)
{
	(void)state;
	char *rt_json = NULL;
	assert_true(asprintf(&rt_json,
			     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
			     "\"request\":{\"uid\":\"u-9\",\"kind\":{\"group\":\"trainer.kubeflow.org\","
			     "\"version\":\"v1alpha1\",\"kind\":\"ClusterTrainingRuntime\"},"
			     "\"operation\":\"CREATE\",\"object\":{\"apiVersion\":"
			     "\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
			     "\"metadata\":{\"name\":\"no-label\"},\"spec\":{\"template\":{\"spec\":{"
			     "\"replicatedJobs\":[]}}}},\"oldObject\":null,\"dryRun\":false}}") > 0);
	write_text("nolabel.json", rt_json);
	free(rt_json);
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "review %s", tpath("nolabel.json"));
	assert_int_equal(rc, 1);
	contains(out, "metadata.labels[trainer.kubeflow.org/framework]: Required value");
	free(out);
	free(err);
	rc = tt_cli_run(&out, &err, "review --strict-action warn %s", tpath("nolabel.json"));
	assert_int_equal(rc, 0);
	contains(out, "\"allowed\":true");
	contains(out, "\"strict: metadata.labels[trainer.kubeflow.org/framework]: Required value");
	contains(out, "\"auditAnnotations\":{\"strict-violations\":");
	free(out);
	free(err);
	rc = tt_cli_run(&out, &err, "review --strict-action maybe %s", tpath("nolabel.json"));
	assert_int_equal(rc, 2);
	contains(err, "--strict-action: use deny or warn");
	free(out);
	free(err);
}

static void review_reads_stdin(void **state)
{
	(void)state;
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "%s review - < deploy/samples/admissionreview-trainjob.json",
		 tt_bin());
	/* tt_run sends /dev/null to stdin after our redirection: use a subshell. */
	char sh[600];
	snprintf(sh, sizeof(sh), "sh -c '%s'", cmd);
	assert_int_equal(tt_run(sh, &out, NULL), 1);
	contains(out, "\"uid\":\"0b6f3a52-7c1d-4e8a-9f20-5d4c3b2a1908\"");
	free(out);
}

static void review_bad_input_exits_2(void **state)
{
	(void)state;
	write_text("norequest.json",
		   "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}");
	write_text("nouid.json",
		   "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		   "\"request\":{\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":"
		   "\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"object\":{}}}");
	write_text("empty.json", "");
	const char *files[] = { "norequest.json", "nouid.json", "empty.json", "missing.json" };
	const char *says[] = { "no \\\"request\\\"", "request.uid", "empty.json", "missing.json" };
	for (size_t i = 0; i < 4; i++) {
		char *out = NULL, *err = NULL;
		int rc = tt_cli_run(&out, &err, "review %s", tpath(files[i]));
		if (rc != 2)
			fail_msg("%s: exit %d\n%s%s", files[i], rc, out, err);
		assert_true(!out || !*out);
		cJSON *e = cJSON_Parse(err);
		if (!e)
			fail_msg("%s: stderr is no JSON error: %s", files[i], err);
		assert_non_null(tp_get_str(e, "error"));
		contains(err, says[i]);
		cJSON_Delete(e);
		free(out);
		free(err);
	}
	char *err = NULL;
	assert_int_equal(tt_cli_run(NULL, &err, "review --path /nope x.json"), 2);
	contains(err, "--path");
	free(err);
}

static void review_replays_fixtures(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	/* The store the samples assume: 02's object as a manifest. */
	char *path = tt_shared_path(
		"fixtures/admissionreview/02-create-clustertrainingruntime-deprecated.request.json");
	char *text = tt_read_file(path, NULL);
	free(path);
	cJSON *root = cJSON_Parse(text);
	free(text);
	char *rt = cJSON_Print(tp_get(root, "request.object"));
	write_text("ctr.json", rt);
	cJSON_free(rt);
	cJSON_Delete(root);
	static const char *const stems[] = {
		"01-create-trainjob", "01b-mutate-trainjob",
		"02-create-clustertrainingruntime-deprecated", "03-update-trainingruntime",
		"04-dryrun-create-trainjob", "05-create-ome-trainingruntime-v1beta1",
	};
	for (size_t i = 0; i < sizeof(stems) / sizeof(stems[0]); i++) {
		char rel[200];
		snprintf(rel, sizeof(rel), "fixtures/admissionreview/%s.request.json", stems[i]);
		char *req = tt_shared_path(rel);
		snprintf(rel, sizeof(rel), "fixtures/admissionreview/%s.response.json", stems[i]);
		char *resp = tt_shared_path(rel);
		char *want_text = tt_read_file(resp, NULL);
		cJSON *want = cJSON_Parse(want_text);
		char *out = NULL, *err = NULL;
		int rc = tt_cli_run(&out, &err, "review --runtimes %s --now 2026-08-21T10:15:30Z %s %s",
			     tpath("ctr.json"),
			     strstr(stems[i], "mutate") ? "--path "
							  "/mutate-trainer-kubeflow-org-v1alpha1-"
							  "trainjob"
							: "",
			     req);
		cJSON *got = cJSON_Parse(out ? out : "");
		bool allowed = tp_get_true(want, "response.allowed");
		if (rc != (allowed ? 0 : 1) || !tp_json_equal(got, want))
			fail_msg("%s: exit %d\ngot  %s\nwant %s\n%s", stems[i], rc, out, want_text,
				 err);
		cJSON_Delete(got);
		cJSON_Delete(want);
		free(want_text);
		free(out);
		free(err);
		free(req);
		free(resp);
	}
}


/* ------------------------------------------------------------ expand */

static const char *tj4_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
	"metadata:\n  name: llama\n  namespace: team-a\n  uid: u-llama\n"
	"spec:\n  runtimeRef:\n    name: torch-distributed\n"
	"  trainer:\n    numNodes: 4\n    resourcesPerNode:\n      requests:\n"
	"        cpu: 2500m\n";

static const char *mpi_yaml =
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
	"metadata:\n  name: pi\n  namespace: team-a\n"
	"spec:\n  runtimeRef:\n    name: mpi-openmpi\n    kind: TrainingRuntime\n"
	"  trainer:\n    numNodes: 3\n";

static void expand_torch_four_nodes(void **state)
{
	(void)state;
	write_text("tj4.yaml", tj4_yaml);
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "expand --runtimes deploy/runtimes %s", tpath("tj4.yaml"));
	if (rc != 0)
		fail_msg("exit %d\n%s", rc, err);
	contains(out, "kind: JobSet\n");
	contains(out, "- name: PET_NNODES\n                value: \"4\"\n");
	contains(out, "- name: PET_NPROC_PER_NODE\n                value: \"3\"\n");
	contains(out, "value: llama-node-0-0.llama\n");
	contains(out, "parallelism: 4\n");
	free(out);
	free(err);
	rc = tt_cli_run(&out, &err, "expand -o json --runtimes deploy/runtimes %s", tpath("tj4.yaml"));
	assert_int_equal(rc, 0);
	cJSON *list = cJSON_Parse(out);
	assert_non_null(list);
	assert_string_equal(tp_get_str(list, "kind"), "List");
	const cJSON *js = cJSON_GetArrayItem(tp_get_array(list, "items"), 0);
	assert_string_equal(tp_get_str(js, "kind"), "JobSet");
	const cJSON *owner = cJSON_GetArrayItem(tp_get(js, "metadata.ownerReferences"), 0);
	assert_string_equal(tp_get_str(owner, "uid"), "u-llama");
	cJSON_Delete(list);
	free(out);
	free(err);
}

static void expand_refuses_and_reports(void **state)
{
	(void)state;
	write_text("bad.yaml", trainjob_yaml); /* reserved PET_NNODES env */
	write_text("runtime.yaml", runtime_yaml);
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "expand --runtimes %s %s", tpath("runtime.yaml"),
		     tpath("bad.yaml"));
	assert_int_equal(rc, 1);
	contains(err, "spec.trainer.env: Invalid value");
	assert_true(!out || !*out);
	free(out);
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "expand %s", tpath("nope.yaml")), 2);
	contains(err, "nope.yaml");
	free(err);
	assert_int_equal(tt_cli_run(NULL, &err, "expand -o xml %s", tpath("bad.yaml")), 2);
	free(err);
}

static void expand_mpi_key_repeatable(void **state)
{
	(void)state;
	write_text("mpi.yaml", mpi_yaml);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "openssl ecparam -name secp521r1 -genkey -noout -out %s",
		 tpath("key.pem"));
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	char *a = NULL, *b = NULL, *c = NULL, *err = NULL;
	assert_int_equal(tt_cli_run(&a, &err, "expand --runtimes deploy/runtimes --ssh-key %s %s",
			     tpath("key.pem"), tpath("mpi.yaml")),
			 0);
	free(err);
	assert_int_equal(tt_cli_run(&b, NULL, "expand --runtimes deploy/runtimes --ssh-key %s %s",
			     tpath("key.pem"), tpath("mpi.yaml")),
			 0);
	assert_string_equal(a, b); /* the same key: the same bytes */
	contains(a, "kind: Secret\n");
	contains(a, "name: pi-mpi-ssh-auth\n");
	contains(a, "type: kubernetes.io/ssh-auth\n");
	contains(a, "kind: ConfigMap\n");
	contains(a, "pi-node-0-0.pi slots=2");
	/* Without --ssh-key a fresh key each time: only the Secret differs. */
	assert_int_equal(tt_cli_run(&c, NULL, "expand --runtimes deploy/runtimes %s", tpath("mpi.yaml")),
			 0);
	contains(c, "ssh-privatekey: ");
	assert_string_not_equal(a, c);
	free(a);
	free(b);
	free(c);
}

static const char flux_yaml[] =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: ClusterTrainingRuntime\n"
	"metadata: {name: flux-distributed, labels: {trainer.kubeflow.org/framework: flux}}\n"
	"spec:\n"
	"  mlPolicy: {numNodes: 1, flux: {}}\n"
	"  template:\n"
	"    spec:\n"
	"      replicatedJobs:\n"
	"      - name: node\n"
	"        template:\n"
	"          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
	"          spec: {template: {spec: {containers: [{name: node, image: 'ubuntu:jammy'}]}}}\n"
	"---\n"
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: TrainJob\n"
	"metadata: {name: lammps, namespace: default%s}\n"
	"spec:\n"
	"  runtimeRef: {name: flux-distributed}\n"
	"  trainer: {numNodes: 2, command: [lmp, -in, in.reaxc.hns]}\n";

/* Flux: the CURVE key of --curve-key, else the one upstream derives from
 * metadata.uid, else a fresh one; a file that is no X25519 key is refused. */
static void expand_flux_curve_key(void **state)
{
	(void)state;
	char text[sizeof(flux_yaml) + 32];
	snprintf(text, sizeof(text), flux_yaml, "");
	write_text("flux.yaml", text);
	snprintf(text, sizeof(text), flux_yaml, ", uid: 5f1c-77");
	write_text("flux-uid.yaml", text);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "openssl genpkey -algorithm X25519 -out %s", tpath("curve.pem"));
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL, *err = NULL;
	const char *with_key = "expand --profile kubeflow --curve-key %s %s";
	assert_int_equal(tt_cli_run(&a, &err, with_key, tpath("curve.pem"), tpath("flux.yaml")), 0);
	free(err);
	assert_int_equal(tt_cli_run(&b, NULL, with_key, tpath("curve.pem"), tpath("flux.yaml")), 0);
	assert_string_equal(a, b);
	contains(a, "name: lammps-flux-curve\n");
	contains(a, "name: lammps-flux-entrypoint\n");
	contains(a, "- lmp -in in.reaxc.hns\n");
	/* no key, no uid: a fresh key each time */
	assert_int_equal(tt_cli_run(&c, NULL, "expand --profile kubeflow %s", tpath("flux.yaml")), 0);
	assert_int_equal(tt_cli_run(&d, NULL, "expand --profile kubeflow %s", tpath("flux.yaml")), 0);
	assert_string_not_equal(c, d);
	/* a uid: upstream's key, the same each time */
	assert_int_equal(tt_cli_run(&e, NULL, "expand --profile kubeflow %s", tpath("flux-uid.yaml")), 0);
	assert_int_equal(tt_cli_run(&f, NULL, "expand --profile kubeflow %s", tpath("flux-uid.yaml")), 0);
	assert_string_equal(e, f);
	assert_int_equal(tt_cli_run(NULL, &err, with_key, tpath("flux.yaml"), tpath("flux.yaml")), 2);
	contains(err, "not an X25519 private key in PEM");
	free(err);
	char *all[] = { a, b, c, d, e, f };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

/* ---------------------------------------------------- runtime snapshots */

/* The runtime snapshot of TrainJob team-a/resume, as a controller older than
 * kubeflow/trainer#3922 wrote it (no kind, no apiVersion), of the
 * ClusterTrainingRuntime "retired", which no longer exists. */
static const char snapshot_yaml[] =
	"apiVersion: v1\nkind: ConfigMap\n"
	"metadata:\n  name: resume-runtime-snapshot\n  namespace: team-a\n"
	"  ownerReferences:\n  - {apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob,"
	" name: resume, uid: u-resume, controller: true}\n"
	"data:\n  runtime: |\n    metadata:\n      name: retired\n"
	"    spec:\n      mlPolicy: {numNodes: 1, torch: {}}\n"
	"      template:\n        spec:\n          replicatedJobs:\n          - name: node\n"
	"            template:\n              metadata:\n"
	"                labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
	"              spec:\n                template:\n                  spec:\n"
	"                    containers: [{name: node, image: from-snapshot}]\n";

#define RESUME_JOB(suspend)                                                                  \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":" \
	"{\"name\":\"resume\",\"namespace\":\"team-a\",\"uid\":\"u-resume\"},\"spec\":{"         \
	"\"suspend\":" suspend ",\"runtimeRef\":{\"name\":\"retired\",\"apiGroup\":"             \
	"\"trainer.kubeflow.org\",\"kind\":\"ClusterTrainingRuntime\"}}}"

/* Resuming a TrainJob whose runtime was deleted: the UPDATE is validated
 * against its snapshot, which review finds among --runtimes (#3960). */
static void review_update_reads_snapshot(void **state)
{
	(void)state;
	write_text("snapshot.yaml", snapshot_yaml);
	write_text("resume.json",
		   "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
		   "{\"uid\":\"u-r\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":"
		   "\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"UPDATE\",\"namespace\":"
		   "\"team-a\",\"object\":" RESUME_JOB("false") ",\"oldObject\":" RESUME_JOB("true")
		   "}}");
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "review --profile kubeflow --runtimes %s %s", tpath("snapshot.yaml"),
		     tpath("resume.json"));
	if (rc != 0)
		fail_msg("exit %d\n%s%s", rc, out, err);
	contains(out, "\"allowed\":true");
	free(out);
	free(err);
	rc = tt_cli_run(&out, &err, "review --profile kubeflow %s", tpath("resume.json"));
	assert_int_equal(rc, 1);
	contains(out, "clustertrainingruntimes.trainer.kubeflow.org \\\"retired\\\" not found");
	free(out);
	free(err);
}

/* expand builds from a snapshot given beside the TrainJob, not from the
 * runtime as it is now. */
static void expand_reads_snapshot_among_inputs(void **state)
{
	(void)state;
	char *all = NULL;
	assert_true(asprintf(&all, "%s---\n" RESUME_JOB("false") "\n---\n%s", snapshot_yaml,
			     runtime_yaml) > 0);
	/* the live runtime, renamed to the one the TrainJob names */
	char *at = strstr(all, "name: local-torch");
	assert_non_null(at);
	memcpy(at, "name: retired    ", strlen("name: local-torch"));
	write_text("resume-and-snapshot.yaml", all);
	free(all);
	char *out = NULL, *err = NULL;
	int rc = tt_cli_run(&out, &err, "expand %s", tpath("resume-and-snapshot.yaml"));
	if (rc != 0)
		fail_msg("exit %d\n%s", rc, err);
	contains(out, "image: from-snapshot\n");
	assert_null(strstr(out, "image: pytorch"));
	free(out);
	free(err);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(validate_example_runtimes_pass),
		cmocka_unit_test(validate_resolves_runtimes_among_inputs),
		cmocka_unit_test(validate_priority_classes_among_inputs),
		cmocka_unit_test(validate_json_output),
		cmocka_unit_test(validate_outdated_api_version),
		cmocka_unit_test(validate_upstream_fixtures_as_upstream),
		cmocka_unit_test(validate_bad_input_exits_2),
		cmocka_unit_test(validate_usage_errors_exit_2),
		cmocka_unit_test(serve_refuses_certificate_durations),
		cmocka_unit_test(validate_crds_positions_text),
		cmocka_unit_test(validate_github_and_sarif),
		cmocka_unit_test(version_names_release_and_crds),
		cmocka_unit_test(validate_trial_findings),
		cmocka_unit_test(validate_quiet_and_summary),
		cmocka_unit_test(validate_junit_against_schema),
		cmocka_unit_test(validate_json_positions_and_unreadable),
		cmocka_unit_test(validate_filters_and_edges),
		cmocka_unit_test(review_deny_and_allow),
		cmocka_unit_test(review_strict_action),
		cmocka_unit_test(review_reads_stdin),
		cmocka_unit_test(review_bad_input_exits_2),
		cmocka_unit_test(review_replays_fixtures),
		cmocka_unit_test(expand_torch_four_nodes),
		cmocka_unit_test(expand_refuses_and_reports),
		cmocka_unit_test(expand_mpi_key_repeatable),
		cmocka_unit_test(expand_flux_curve_key),
		cmocka_unit_test(review_update_reads_snapshot),
		cmocka_unit_test(expand_reads_snapshot_among_inputs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

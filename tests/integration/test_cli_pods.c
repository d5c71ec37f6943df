/*
 * test_cli_pods.c — issue 24 offline, as a user runs it: `validate --profile
 * strict` on a folder holding the TrainJobs and runtimes whose Pods the API
 * server would refuse and a Namespace whose Pod Security level would, each
 * refused at its line; `--pod-security` for namespaces without a manifest;
 * and `review` of the same TrainJobs with the runtimes and Namespaces of
 * --runtimes, answering as the server would (the denial's message, the
 * "would violate PodSecurity" warnings, the audit annotation).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "tests/support/testutil.h"

static char tmp[64];
static char root[PATH_MAX]; /* the repository: deploy/runtimes */
static char bin[PATH_MAX];  /* the binary, by its absolute path (commands run in tmp) */

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/tw-pods-XXXXXX");
	if (!getcwd(root, sizeof(root)) || !realpath(tt_bin(), bin))
		return -1;
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_text(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	fclose(f);
}

/* The command in tmp; its stdout in *out, stderr in *err (NULL: dropped). */
static int run(char **out, char **err, const char *fmt, ...) TP_PRINTF(3, 4);
static int run(char **out, char **err, const char *fmt, ...)
{
	char args[1024], cmd[1024 + 2 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd %s && %s %s", tmp, bin, args);
	return tt_run(cmd, out, err);
}

static void contains(const char *hay, const char *needle)
{
	if (hay && strstr(hay, needle))
		return;
	fprintf(stderr, "--- output:\n%s\n---\n", hay ? hay : "(null)"); /* fail_msg cuts it */
	fail_msg("\"%s\" not found", needle);
}

/* The TrainJob (kubeflow/trainer#2363): GPUs requested without a
 * limit, cpu requested over its limit, on the shipped torch-distributed. */
static const char gpu_trainjob[] =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: TrainJob\n"
	"metadata:\n"
	"  name: llm-finetune\n"
	"  namespace: team-a\n"
	"spec:\n"
	"  runtimeRef:\n"
	"    name: torch-distributed\n"
	"  trainer:\n"
	"    image: docker.io/team-a/llm:v3\n"
	"    numNodes: 2\n"
	"    resourcesPerNode:\n"
	"      requests:\n"       /* 13 */
	"        nvidia.com/gpu: 2\n"
	"        cpu: 4\n"
	"      limits:\n"         /* 16 */
	"        cpu: 2\n";

static const char missing_volume_runtime[] =
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"
	"kind: ClusterTrainingRuntime\n"
	"metadata:\n"
	"  name: torch-with-data\n"
	"  labels:\n"
	"    trainer.kubeflow.org/framework: torch\n"
	"spec:\n"
	"  mlPolicy:\n"
	"    numNodes: 1\n"
	"    torch: {}\n"
	"  template:\n"
	"    spec:\n"
	"      replicatedJobs:\n"
	"        - name: node\n"
	"          template:\n"
	"            metadata:\n"
	"              labels:\n"
	"                trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"
	"            spec:\n"
	"              template:\n"
	"                spec:\n"
	"                  containers:\n"
	"                    - name: node\n"
	"                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime\n"
	"                      volumeMounts:\n"
	"                        - name: data\n" /* 26, column 27 */
	"                          mountPath: /data\n";

static const char namespaces[] =
	"apiVersion: v1\n"
	"kind: Namespace\n"
	"metadata:\n"
	"  name: secure\n"
	"  labels:\n"
	"    pod-security.kubernetes.io/enforce: restricted\n"
	"---\n"
	"apiVersion: v1\n"
	"kind: Namespace\n"
	"metadata:\n"
	"  name: research\n"
	"  labels:\n"
	"    pod-security.kubernetes.io/warn: restricted\n"
	"    pod-security.kubernetes.io/audit: restricted\n"
	"    pod-security.kubernetes.io/audit-version: v1.30\n";

#define TRAINJOB_IN(ns)                                                                     \
	"apiVersion: trainer.kubeflow.org/v1alpha1\n"                                         \
	"kind: TrainJob\n"                                                                    \
	"metadata:\n"                                                                         \
	"  name: mnist\n"                                                                     \
	"  namespace: " ns "\n" /* 5, column 3 */                                             \
	"spec:\n"                                                                             \
	"  runtimeRef:\n"                                                                     \
	"    name: torch-distributed\n"                                                       \
	"  trainer:\n"                                                                        \
	"    image: docker.io/kubeflow/pytorch-mnist:v1\n"

static const char restricted_text[] =
	"violates PodSecurity \\\"restricted:latest\\\": allowPrivilegeEscalation != false "
	"(container \\\"node\\\" must set securityContext.allowPrivilegeEscalation=false)";

/* The folder of the "Done when", beside the shipped runtimes. */
static void write_folder(void)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/team", tmp);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_text("team/gpu-trainjob.yaml", gpu_trainjob);
	write_text("team/runtime-missing-volume.yaml", missing_volume_runtime);
	write_text("team/namespaces.yaml", namespaces);
	write_text("team/secure-trainjob.yaml", TRAINJOB_IN("secure"));
	write_text("team/research-trainjob.yaml", TRAINJOB_IN("research"));
	char *rt = tt_read_file("deploy/runtimes/torch-distributed.yaml", NULL);
	assert_non_null(rt);
	write_text("team/torch-distributed.yaml", rt);
	free(rt);
}

static void validate_refuses_each_at_its_line(void **state)
{
	(void)state;
	write_folder();
	char *out = NULL;
	int rc = run(&out, NULL, "validate --profile strict team");
	assert_int_equal(rc, 1);
	contains(out, "team/gpu-trainjob.yaml:16:7: TrainJob/team-a/llm-finetune: denied: "
		      "spec.trainer.resourcesPerNode.limits: Required value: Limit must be set for "
		      "non overcommitable resources: Job.batch \"llm-finetune-node-0\" would be "
		      "invalid at spec.template.spec.containers[0].resources.limits");
	contains(out, "set limits[nvidia.com/gpu] to 2, equal to its request");
	contains(out, "team/gpu-trainjob.yaml:13:7: TrainJob/team-a/llm-finetune: denied: "
		      "spec.trainer.resourcesPerNode.requests: Invalid value: \"4\": must be less "
		      "than or equal to cpu limit of 2");
	contains(out, "team/runtime-missing-volume.yaml:26:27: ClusterTrainingRuntime/"
		      "torch-with-data: denied: spec.template.spec.replicatedJobs[0].template.spec."
		      "template.spec.containers[0].volumeMounts[0].name: Not found: \"data\"");
	contains(out, "team/secure-trainjob.yaml:5:3: TrainJob/secure/mnist: denied: "
		      "metadata.namespace: Forbidden: violates PodSecurity \"restricted:latest\": "
		      "allowPrivilegeEscalation != false (container \"node\" must set "
		      "securityContext.allowPrivilegeEscalation=false)");
	contains(out, "team/research-trainjob.yaml:5:3: TrainJob/research/mnist: warning: "
		      "would violate PodSecurity \"restricted:latest\": ");
	contains(out, "Namespace/secure: skipped: its pod-security.kubernetes.io labels apply");
	contains(out, "team/torch-distributed.yaml:3:1: ClusterTrainingRuntime/torch-distributed: ok");
	contains(out, "7 objects in 6 files: 2 allowed, 3 denied, 1 with warnings, 2 skipped");
	free(out);
	/* upstream's webhook looks at none of it */
	rc = run(&out, NULL, "validate --profile kubeflow team");
	assert_int_equal(rc, 0);
	free(out);
}

static void validate_pod_security_flag(void **state)
{
	(void)state;
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/plain", tmp);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_text("plain/tj.yaml", TRAINJOB_IN("other"));
	char *out = NULL, *err = NULL;
	/* no Namespace manifest: nothing to apply, said once on stderr */
	assert_int_equal(run(&out, &err, "validate --runtimes %s/deploy/runtimes plain",
			     root), 0);
	contains(out, "plain/tj.yaml:1:1: TrainJob/other/mnist: ok");
	contains(err, "Pod Security not checked for the TrainJobs in namespace \"other\": no "
		      "Namespace among the inputs; give its manifest");
	free(out);
	free(err);
	/* not said by the kubeflow profile (no such check), --quiet or --pod-security */
	const char *quiet[] = { "--profile kubeflow", "--quiet", "--pod-security privileged" };
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		assert_int_equal(run(&out, &err, "validate %s --runtimes %s/deploy/runtimes plain",
				     quiet[i], root), 0);
		assert_null(strstr(err, "Pod Security not checked"));
		free(out);
		free(err);
	}
	assert_int_equal(run(&out, NULL, "validate --pod-security restricted --runtimes %s/deploy/runtimes "
				   "plain", root), 1);
	contains(out, "plain/tj.yaml:5:3: TrainJob/other/mnist: denied: metadata.namespace: "
		      "Forbidden: violates PodSecurity \"restricted:latest\"");
	free(out);
	assert_int_equal(run(&out, NULL, "validate --pod-security baseline:v1.30 --runtimes "
				   "%s/deploy/runtimes plain", root), 0);
	free(out);
	/* a Namespace's own label wins over the default */
	write_text("plain/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n"
				    "  labels:\n    pod-security.kubernetes.io/enforce: privileged\n");
	assert_int_equal(run(&out, NULL, "validate --pod-security restricted --runtimes %s/deploy/runtimes "
				   "plain", root), 0);
	free(out);
	/* ... nor with the Namespace among the inputs */
	assert_int_equal(run(&out, &err, "validate --runtimes %s/deploy/runtimes plain", root), 0);
	assert_null(strstr(err, "Pod Security not checked"));
	free(out);
	free(err);
	assert_int_equal(run(&out, &err, "validate --pod-security strict plain"), 2);
	free(out);
	out = err;
	contains(out, "--pod-security \"strict\": level \"strict\": must be one of privileged, "
		      "baseline, restricted");
	free(out);
}

static void write_review(const char *name, const char *ns)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
		 "{\"uid\":\"u-%s\",\"kind\":{\"group\":\"trainer.kubeflow.org\",\"version\":"
		 "\"v1alpha1\",\"kind\":\"TrainJob\"},\"operation\":\"CREATE\",\"namespace\":\"%s\","
		 "\"object\":{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		 "\"metadata\":{\"name\":\"mnist\",\"namespace\":\"%s\"},\"spec\":{\"runtimeRef\":"
		 "{\"name\":\"torch-distributed\"},\"trainer\":{\"image\":\"img\"}}},"
		 "\"oldObject\":null,\"dryRun\":false}}",
		 ns, ns, ns);
	write_text(name, text);
}

static void review_reads_namespaces_of_runtimes(void **state)
{
	(void)state;
	write_folder();
	write_review("secure.json", "secure");
	write_review("research.json", "research");
	write_review("other.json", "other");
	char *out = NULL;
	/* enforce: the denial the API server would relay */
	assert_int_equal(run(&out, NULL, "review --runtimes team secure.json"), 1);
	contains(out, "\"code\":403");
	contains(out, "metadata.namespace: Forbidden: ");
	contains(out, restricted_text);
	free(out);
	/* warn and audit: allowed, with pod-security-admission's warning and annotation */
	assert_int_equal(run(&out, NULL, "review --runtimes team research.json"), 0);
	contains(out, "\"allowed\":true");
	contains(out, "\"warnings\":[\"would violate PodSecurity \\\"restricted:latest\\\": ");
	contains(out, "\"auditAnnotations\":{\"pod-security-audit-violations\":\"would violate "
		      "PodSecurity \\\"restricted:v1.30\\\"");
	free(out);
	/* no Namespace: the --pod-security default, else privileged */
	assert_int_equal(run(&out, NULL, "review --runtimes team other.json"), 0);
	free(out);
	assert_int_equal(run(&out, NULL, "review --pod-security restricted --runtimes team other.json"), 1);
	contains(out, restricted_text);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(validate_refuses_each_at_its_line, setup, teardown),
		cmocka_unit_test_setup_teardown(validate_pod_security_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(review_reads_namespaces_of_runtimes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

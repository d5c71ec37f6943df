/*
 * test_release_arm64.c — trainer-webhook for linux/arm64, cross-built here
 * (issue 31, sections 2 and 3): `make ARCH=arm64 krew` builds it with
 * Debian's gcc-aarch64-linux-gnu against a sysroot of Debian's arm64 packages
 * (deploy/release/sysroot.sh) into build-arm64/, with its release tarball;
 * the binary, run under qemu-aarch64-static with the sysroot, says
 * --version, validates the shipped runtimes and denies a bad TrainJob, and
 * answers the sample AdmissionReview; the tarball carries every library its
 * ELF files name (read with the cross readelf: ldd cannot run a foreign
 * binary), all of them arm64, and runs through its own wrapper and loader
 * under qemu with an empty environment; the krew manifest names its sha256;
 * the Action's fetch step on an arm64 runner takes this tarball.
 * It needs the cross compiler and qemu (sh tests/deps.sh cross; .ci/run
 * installs them); without them, or in a sanitizer build (the cross build has
 * no sanitizers: it would only be built again), it skips and says why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

/* make in a test that make started: none of the outer make's flags, the
 * release build (BUILD unset). */
#define MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD make --no-print-directory"
#define QEMU "qemu-aarch64-static"
#define SYSROOT "build/sysroot-arm64"
#define BIN "build-arm64/trainer-webhook"

static bool ready;     /* the tools are here and the build is the release one */
static bool built;     /* make ARCH=arm64 krew succeeded */
static char release[64], tarball[160];

static int setup(void **state)
{
	(void)state;
	const char *build = getenv("BUILD");
	if (build && strcmp(build, "build")) {
		print_message("test_release_arm64: skipped: BUILD=%s (the arm64 build has no "
			      "sanitizers; make test runs it)\n",
			      build);
		return 0;
	}
	const char *tools[] = { "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-readelf", QEMU,
				"apt-get", "dpkg-deb" };
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "command -v %s", tools[i]);
		if (tt_run(cmd, NULL, NULL)) {
			print_message("test_release_arm64: skipped: no %s (apt-get install "
				      "gcc-aarch64-linux-gnu qemu-user-static, or sh tests/deps.sh "
				      "cross)\n",
				      tools[i]);
			return 0;
		}
	}
	char *v = tt_read_file("VERSION", NULL);
	assert_non_null(v);
	snprintf(release, sizeof(release), "%.*s", (int)strcspn(v, "\n"), v);
	free(v);
	snprintf(tarball, sizeof(tarball), "build-arm64/krew/trainer-webhook_%s_linux_arm64.tar.gz",
		 release);
	ready = true;
	return 0;
}

/* make ARCH=arm64 krew once (the sysroot, the binary, the tarball), through
 * its manifest's file target: only what changed since the last run is made
 * again (a fresh tree: the whole cross build, about 70 CPU-seconds; the
 * tarball alone: 6). */
static void build_arm64(void)
{
	if (!ready)
		skip();
	if (built)
		return;
	char *out = NULL, *err = NULL;
	long long t0 = tt_mono_ms();
	int rc = tt_run(MAKE " -s -j2 ARCH=arm64 build-arm64/krew/trainer.yaml", &out, &err);
	if (rc)
		fail_msg("make ARCH=arm64 krew: exit %d\n%s%s", rc, out ? out : "", err ? err : "");
	print_message("make ARCH=arm64 build-arm64/krew/trainer.yaml: %.1f s\n",
		      (tt_mono_ms() - t0) / 1000.0);
	free(out);
	free(err);
	built = true;
}

/* cmd's exit status, its stdout in *out (printed, for the record). */
static int run_shown(const char *cmd, char **out)
{
	char *err = NULL;
	int rc = tt_run(cmd, out, &err);
	print_message("$ %s\n%s%s(exit %d)\n", cmd, *out ? *out : "", err ? err : "", rc);
	free(err);
	return rc;
}

static void binary_runs_under_qemu(void **state)
{
	(void)state;
	build_arm64();
	char *out = NULL, want[96];
	/* it is an arm64 ELF file, not this machine's */
	assert_int_equal(tt_run("aarch64-linux-gnu-readelf -h " BIN, &out, NULL), 0);
	assert_non_null(strstr(out, "AArch64"));
	free(out);
	out = NULL;
	assert_int_equal(run_shown(QEMU " -L " SYSROOT " " BIN " --version", &out), 0);
	snprintf(want, sizeof(want), "trainer-webhook %s", release);
	assert_non_null(strstr(out, want));
	free(out);
	out = NULL;
	assert_int_equal(run_shown(QEMU " -L " SYSROOT " " BIN " validate deploy/runtimes", &out),
			 0);
	assert_non_null(strstr(out, "4 allowed, 0 denied"));
	free(out);
	out = NULL;
	/* a bad one is denied (exit 1), with the API server's words */
	char tmp[128], cmd[512];
	assert_int_equal(sp_mkdtemp(tmp, sizeof(tmp), "tw-arm64"), 0);
	assert_int_equal(sp_write(tmp, "bad.yaml",
				  "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
				  "metadata:\n  name: Bad_Name\n  namespace: default\n"
				  "spec:\n  runtimeRef:\n    name: torch-distributed\n"),
			 0);
	snprintf(cmd, sizeof(cmd),
		 QEMU " -L " SYSROOT " " BIN " validate --runtimes deploy/runtimes --summary '%s/bad.yaml'",
		 tmp);
	assert_int_equal(run_shown(cmd, &out), 1);
	assert_non_null(strstr(out, "0 allowed, 1 denied"));
	free(out);
	out = NULL;
	sp_rmtree(tmp);
	assert_int_equal(run_shown(QEMU " -L " SYSROOT " " BIN
				   " review --runtimes deploy/runtimes "
				   "deploy/samples/admissionreview-trainjob.json",
				   &out),
			 0);
	cJSON *review = tt_json(out);
	const cJSON *resp = tp_get(review, "response");
	assert_non_null(resp);
	assert_true(cJSON_IsTrue(tp_get(resp, "allowed")));
	assert_string_equal(tp_get_str(resp, "uid"), "0b6f3a52-7c1d-4e8a-9f20-5d4c3b2a1908");
	cJSON_Delete(review);
	free(out);
}

static void tarball_carries_its_arm64_libraries(void **state)
{
	(void)state;
	build_arm64();
	char tmp[128], cmd[4096], *out = NULL, *err = NULL;
	assert_int_equal(sp_mkdtemp(tmp, sizeof(tmp), "tw-arm64-tar"), 0);
	snprintf(cmd, sizeof(cmd), "tar -C '%s' -xzf '%s'", tmp, tarball);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	/* every ELF file in lib/ is arm64, and every library one names is there
	 * (the loader, named by its PT_INTERP, too) */
	snprintf(cmd, sizeof(cmd),
		 "(cd '%s/trainer-webhook/lib' && for f in *; do "
		 "aarch64-linux-gnu-readelf -h \"$f\" | grep -q 'Machine:.*AArch64' || echo \"not arm64: $f\"; "
		 "for n in $(aarch64-linux-gnu-readelf -d \"$f\" | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]$/\\1/p'); do "
		 "[ -e \"$n\" ] || echo \"missing: $n (NEEDED by $f)\"; done; done; "
		 "i=$(aarch64-linux-gnu-readelf -l trainer-webhook | sed -n 's/.*interpreter: \\(.*\\)]$/\\1/p'); "
		 "[ -e \"${i##*/}\" ] || echo \"missing: the loader $i\"; ls | wc -l)",
		 tmp);
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	if (strstr(out, "missing") || strstr(out, "not arm64"))
		fail_msg("the arm64 tarball's lib/:\n%s", out);
	if (atoi(out) <= 10)
		fail_msg("the arm64 tarball's lib/ holds %s files", out);
	free(out);
	out = NULL;
	/* its own wrapper, with qemu in front of the loader it runs (no binfmt
	 * here), from an empty environment: nothing of the sysroot's */
	snprintf(cmd, sizeof(cmd),
		 "(cd '%s/trainer-webhook' && grep -q '^exec \"$here/lib/ld-linux-aarch64.so.1\" ' "
		 "trainer-webhook && sed 's|^exec \"|exec " QEMU " \"|' trainer-webhook > tw-qemu && "
		 "chmod +x tw-qemu)",
		 tmp);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	snprintf(cmd, sizeof(cmd), "env -i PATH=\"$PATH\" '%s/trainer-webhook/tw-qemu' --version", tmp);
	assert_int_equal(run_shown(cmd, &out), 0);
	char want[96];
	snprintf(want, sizeof(want), "trainer-webhook %s", release);
	assert_non_null(strstr(out, want));
	free(out);
	out = NULL;
	snprintf(cmd, sizeof(cmd),
		 "env -i PATH=\"$PATH\" '%s/trainer-webhook/tw-qemu' validate "
		 "deploy/runtimes/torch-distributed.yaml",
		 tmp);
	assert_int_equal(run_shown(cmd, &out), 0);
	assert_non_null(strstr(out, "ClusterTrainingRuntime/torch-distributed: ok"));
	free(out);
	out = NULL;
	/* the krew manifest make krew wrote names this tarball's sha256 for arm64 */
	snprintf(cmd, sizeof(cmd), "(sha256sum '%s' | cut -d' ' -f1)", tarball);
	assert_int_equal(tt_run(cmd, &out, &err), 0);
	out[strcspn(out, "\n")] = '\0';
	char *krew = tt_read_file("build-arm64/krew/trainer.yaml", NULL);
	assert_non_null(krew);
	char line[160];
	snprintf(line, sizeof(line), "      sha256: %s\n", out);
	if (!strstr(krew, line) || !strstr(krew, "arch: arm64") || strstr(krew, "arch: amd64"))
		fail_msg("build-arm64/krew/trainer.yaml: want arm64 alone, with %s", line);
	free(krew);
	free(out);
	free(err);
	sp_rmtree(tmp);
}

/* The Action on an arm64 runner: its fetch step (action.yml's first run
 * block, as GitHub runs it with bash), with uname saying aarch64 and the
 * release's files served from a folder (TW_RELEASES=file://...), takes the
 * arm64 tarball make krew wrote, checks it against SHA256SUMS, and unpacks
 * it in the tool cache, where the binary is arm64 and runs under qemu. */
static void action_fetches_the_arm64_tarball(void **state)
{
	(void)state;
	build_arm64();
	char tmp[128], cmd[4096], *out = NULL, *err = NULL;
	assert_int_equal(sp_mkdtemp(tmp, sizeof(tmp), "tw-arm64-action"), 0);
	snprintf(cmd, sizeof(cmd),
		 "(set -e; cd '%s'; mkdir -p bin cache rel/v%s; "
		 "printf '#!/bin/sh\\n[ \"$1\" = -m ] && echo aarch64 || exec /bin/uname \"$@\"\\n' > bin/uname; "
		 "chmod +x bin/uname; cp \"$OLDPWD/%s\" rel/v%s/; "
		 "(cd rel/v%s && sha256sum *.tar.gz > SHA256SUMS); "
		 "awk '/^      run: \\|$/ { on = 1; next } on && /^    - / { exit } on { sub(/^        /, \"\"); print }' "
		 "\"$OLDPWD/action.yml\" > fetch.sh; "
		 "PATH=\"$PWD/bin:$PATH\" GITHUB_ACTION_PATH=\"$OLDPWD\" RUNNER_TOOL_CACHE=\"$PWD/cache\" "
		 "TW_RELEASES=\"file://$PWD/rel\" bash -e fetch.sh; "
		 "find cache -path '*/trainer-webhook/lib/trainer-webhook')",
		 tmp, release, tarball, release, release);
	if (tt_run(cmd, &out, &err))
		fail_msg("the Action's fetch step on arm64: %s%s", out ? out : "", err ? err : "");
	char want[256];
	snprintf(want, sizeof(want), "cache/trainer-webhook/%s/arm64/trainer-webhook/lib/trainer-webhook",
		 release);
	if (!strstr(out, want))
		fail_msg("the Action's fetch step put no arm64 binary at %s: %s", want, out);
	free(out);
	free(err);
	out = NULL;
	snprintf(cmd, sizeof(cmd),
		 "(cd '%s/cache/trainer-webhook/%s/arm64/trainer-webhook' && aarch64-linux-gnu-readelf -h "
		 "lib/trainer-webhook | grep -c AArch64 && " QEMU " lib/ld-linux-aarch64.so.1 "
		 "--library-path lib lib/trainer-webhook --version)",
		 tmp, release);
	assert_int_equal(run_shown(cmd, &out), 0);
	snprintf(want, sizeof(want), "trainer-webhook %s", release);
	assert_non_null(strstr(out, want));
	free(out);
	sp_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(binary_runs_under_qemu),
		cmocka_unit_test(tarball_carries_its_arm64_libraries),
		cmocka_unit_test(action_fetches_the_arm64_tarball),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

/*
 * test_image_run.c — the image, built and run here (issue 31, section 2):
 * `make image` twice gives one image ID (reproducible: SOURCE_DATE_EPOCH,
 * fixed modes and mtimes); its SBOM names every library's Debian package
 * with its version, and the binary; the image started with `podman run
 * --network host --read-only` answers an AdmissionReview over TLS, says
 * --version, and runs as 65532. It needs podman (tests/deps.sh image
 * installs it, .ci/run runs it); without it, or in a sanitizer build (whose
 * binary is not the one shipped), it skips and says why.
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

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

/* make in a test that make started: none of the outer make's flags, the
 * release build (BUILD unset). */
#define MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD make --no-print-directory"
#define TAG "localhost/trainer-webhook-test:run"

static char podman[1024]; /* podman with the Makefile's engine settings */

static int setup(void **state)
{
	(void)state;
	const char *build = getenv("BUILD");
	if (build && strcmp(build, "build")) {
		print_message("test_image_run: skipped: BUILD=%s (the image holds the release "
			      "build's binary)\n",
			      build);
		return 0;
	}
	char *out = NULL;
	if (tt_run("command -v podman", NULL, NULL)) {
		print_message("test_image_run: skipped: no podman (apt-get install podman runc, or "
			      "sh tests/deps.sh image)\n");
		return 0;
	}
	assert_int_equal(tt_run(MAKE " -s podman-flags", &out, NULL), 0);
	out[strcspn(out, "\n")] = '\0';
	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(podman, sizeof(podman), "env CONTAINERS_CONF=%s/deploy/image/containers.conf podman %s",
		 cwd, out);
	free(out);
	return 0;
}

#define REQUIRE_PODMAN()           \
	do {                       \
		if (!podman[0])    \
			skip();    \
	} while (0)

/* make image IMAGE=TAG; its image ID into id. */
static void make_image(char *id, size_t n)
{
	char *out = NULL, *err = NULL;
	int rc = tt_run(MAKE " -s image IMAGE=" TAG " BUILDER=podman", &out, &err);
	if (rc)
		fail_msg("make image: exit %d\n%s%s", rc, out ? out : "", err ? err : "");
	print_message("%s", out);
	size_t len;
	char *f = tt_read_file("build/image/id", &len);
	assert_non_null(f);
	snprintf(id, n, "%.*s", (int)strcspn(f, "\n"), f);
	assert_int_equal(strlen(id), 64);
	free(f);
	free(out);
	free(err);
}

static void image_is_reproducible_and_has_an_sbom(void **state)
{
	(void)state;
	REQUIRE_PODMAN();
	char first[96], second[96];
	make_image(first, sizeof(first));
	make_image(second, sizeof(second));
	print_message("image IDs: %s %s\n", first, second);
	assert_string_equal(first, second);
	/* the SBOM: the binary and each library's package, from dpkg */
	size_t n;
	char *sbom = tt_read_file("build/image/context/sbom.spdx.json", &n);
	assert_non_null(sbom);
	cJSON *doc = tt_json(sbom);
	assert_string_equal(tp_get_str(doc, "spdxVersion"), "SPDX-2.3");
	const cJSON *pkg;
	bool bin = false, libc = false, ca = false;
	cJSON_ArrayForEach(pkg, tp_get(doc, "packages"))
	{
		const char *name = tp_get_str(pkg, "name"), *v = tp_get_str(pkg, "versionInfo");
		assert_non_null(v);
		assert_true(*v);
		bin |= !strcmp(name, "trainer-webhook");
		libc |= !strcmp(name, "libc6");
		ca |= !strcmp(name, "ca-certificates");
	}
	assert_true(bin && libc && ca);
	cJSON_Delete(doc);
	free(sbom);
}

static void image_answers_an_admission_review(void **state)
{
	(void)state;
	REQUIRE_PODMAN();
	char id[96], exists[1200];
	snprintf(exists, sizeof(exists), "%s image exists " TAG, podman);
	if (tt_run(exists, NULL, NULL)) /* not built by the test before */
		make_image(id, sizeof(id));
	char tmp[128], certs[192], rt[192], cmd[4096], *out = NULL, *err = NULL;
	assert_int_equal(sp_fixture("tw-image", tmp, certs, rt, sizeof(certs)), 0);
	/* readable by the image's user */
	snprintf(cmd, sizeof(cmd), "chmod -R a+rX '%s'", tmp);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	/* --version */
	snprintf(cmd, sizeof(cmd), "%s run --rm " TAG " --version", podman);
	assert_int_equal(tt_run(cmd, &out, &err), 0);
	char *vf = tt_read_file("VERSION", NULL), want[96];
	snprintf(want, sizeof(want), "trainer-webhook %.*s", (int)strcspn(vf, "\n"), vf);
	free(vf);
	if (!strstr(out, want))
		fail_msg("--version in the image: %s%s", out, err ? err : "");
	free(out);
	free(err);
	/* serve, read-only, on the host's network; one shell starts it, asks,
	 * reads its user and stops it (the container it started, by name) */
	int port = sp_free_port();
	char name[64];
	snprintf(name, sizeof(name), "tw-image-test-%d", port);
	snprintf(cmd, sizeof(cmd),
		 "(P=\"%s\"; $P run -d --name %s --network host --read-only -v '%s:/work:ro' " TAG
		 " serve --tls-cert /work/certs/tls.crt --tls-key /work/certs/tls.key "
		 "--runtimes /work/runtimes --listen 127.0.0.1:%d --metrics-listen 127.0.0.1:0 "
		 ">/dev/null; i=0; while [ $i -lt %d ] && ! $P logs %s 2>&1 | grep -q 'serving https';"
		 " do sleep 0.2; i=$((i+1)); done; "
		 "curl -s --cacert '%s/ca.crt' -H 'Content-Type: application/json' "
		 "--data @deploy/samples/admissionreview-trainjob.json "
		 "https://localhost:%d/validate-trainer-kubeflow-org-v1alpha1-trainjob; echo; "
		 "pid=$($P inspect --format '{{.State.Pid}}' %s); grep '^Uid:' /proc/$pid/status; "
		 "$P inspect --format 'readonly={{.HostConfig.ReadonlyRootfs}}' %s; "
		 "$P logs %s 2>&1 | tail -3; $P rm -f -t 5 %s >/dev/null)",
		 podman, name, tmp, port, 150 * sp_slow(), name, certs, port, name, name, name,
		 name);
	tt_run(cmd, &out, &err);
	print_message("%s", out ? out : "");
	if (!out || !strstr(out, "\"allowed\":true"))
		fail_msg("no AdmissionReview answer from the image:\n%s%s", out ? out : "",
			 err ? err : "");
	if (!strstr(out, "Uid:\t65532\t65532\t65532\t65532"))
		fail_msg("the image's process is not 65532:\n%s", out);
	assert_non_null(strstr(out, "readonly=true"));
	free(out);
	free(err);
	sp_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(image_is_reproducible_and_has_an_sbom),
		cmocka_unit_test(image_answers_an_admission_review),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

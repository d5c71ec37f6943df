/*
 * test_debian11.c — the release tarball runs on the oldest glibc it claims
 * (issue 31, section 3: Debian 11, Ubuntu 20.04 and later, glibc 2.31): in
 * a Debian 11 chroot made with `debootstrap --variant=minbase bullseye`, the
 * tarball deploy/release/tarball.sh makes from this build says --version,
 * validates a shipped runtime and denies a bad TrainJob, while the binary
 * with the chroot's own glibc does not start (it needs this machine's newer
 * one: so the chroot is the old glibc, and the test can fail). The chroot is
 * TW_DEBIAN11_ROOT, else build/debian11 (sh tests/deps.sh debian11 makes
 * it); without one, without root (chroot), or in a sanitizer build, it skips
 * and says why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

static char root[256]; /* the chroot; "" when the test skips */
static char release[64];

static int setup(void **state)
{
	(void)state;
	const char *build = getenv("BUILD");
	if (build && strcmp(build, "build")) {
		print_message("test_debian11: skipped: BUILD=%s (the release tarball holds the "
			      "release build's binary)\n",
			      build);
		return 0;
	}
	const char *r = getenv("TW_DEBIAN11_ROOT");
	if (!r || !*r)
		r = "build/debian11";
	char path[320];
	snprintf(path, sizeof(path), "%s/etc/debian_version", r);
	char *v = tt_read_file(path, NULL);
	if (!v || strncmp(v, "11.", 3)) {
		print_message("test_debian11: skipped: no Debian 11 chroot at %s (sh tests/deps.sh "
			      "debian11, or TW_DEBIAN11_ROOT=DIR made with debootstrap "
			      "--variant=minbase bullseye DIR)\n",
			      r);
		free(v);
		return 0;
	}
	free(v);
	if (geteuid()) {
		print_message("test_debian11: skipped: chroot needs root\n");
		return 0;
	}
	snprintf(root, sizeof(root), "%s", r);
	v = tt_read_file("VERSION", NULL);
	assert_non_null(v);
	snprintf(release, sizeof(release), "%.*s", (int)strcspn(v, "\n"), v);
	free(v);
	return 0;
}

/* cmd's exit status; its stdout and stderr in *out, printed for the record. */
static int run_shown(const char *cmd, char **out)
{
	char *err = NULL;
	int rc = tt_run(cmd, out, &err);
	print_message("$ %s\n%s%s(exit %d)\n", cmd, *out ? *out : "", err ? err : "", rc);
	if (err) {
		size_t n = *out ? strlen(*out) : 0;
		*out = realloc(*out, n + strlen(err) + 1);
		memcpy(*out + n, err, strlen(err) + 1);
		free(err);
	}
	return rc;
}

static void tarball_validates_on_glibc_2_31(void **state)
{
	(void)state;
	if (!root[0])
		skip();
	char dir[300], cmd[4096], *out = NULL;
	/* a folder of the test's inside the chroot's /tmp; in parentheses:
	 * tt_run's redirections apply to the whole */
	snprintf(dir, sizeof(dir), "%s/tmp/tw-debian11-XXXXXX", root);
	assert_non_null(mkdtemp(dir));
	const char *in = dir + strlen(root); /* its path inside the chroot */
	snprintf(cmd, sizeof(cmd),
		 "(SOURCE_DATE_EPOCH=0 sh deploy/release/tarball.sh '%s' %s '%s/t.tar.gz' && "
		 "tar -C '%s' -xzf '%s/t.tar.gz' && cp deploy/runtimes/torch-distributed.yaml "
		 "'%s/' && printf 'apiVersion: trainer.kubeflow.org/v1alpha1\\n"
		 "kind: TrainJob\\nmetadata:\\n  name: Bad_Name\\n  namespace: default\\nspec:\\n"
		 "  runtimeRef:\\n    name: torch-distributed\\n' > '%s/bad.yaml')",
		 tt_bin(), release, dir, dir, dir, dir, dir);
	if (tt_run(cmd, NULL, &out))
		fail_msg("the tarball into the chroot: %s", out ? out : "");
	free(out);
	out = NULL;
	/* the chroot's glibc */
	snprintf(cmd, sizeof(cmd), "chroot '%s' getconf GNU_LIBC_VERSION", root);
	assert_int_equal(run_shown(cmd, &out), 0);
	assert_non_null(strstr(out, "glibc 2.31"));
	free(out);
	out = NULL;
	/* the binary needs a newer glibc than the chroot's: with the tarball's
	 * other libraries but the chroot's glibc and loader, it does not start */
	snprintf(cmd, sizeof(cmd),
		 "mkdir '%s/noglibc' && cp '%s'/trainer-webhook/lib/*.so* '%s/noglibc/' && "
		 "rm '%s'/noglibc/libc.so.* '%s'/noglibc/ld-linux*",
		 dir, dir, dir, dir, dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	snprintf(cmd, sizeof(cmd),
		 "chroot '%s' /lib64/ld-linux-x86-64.so.2 --library-path '%s/noglibc' "
		 "'%s/trainer-webhook/lib/trainer-webhook' --version",
		 root, in, in);
	assert_int_not_equal(run_shown(cmd, &out), 0);
	assert_non_null(strstr(out, "version `GLIBC_2."));
	free(out);
	out = NULL;
	/* the tarball's, through its wrapper, from an empty environment */
	char want[96];
	snprintf(want, sizeof(want), "trainer-webhook %s", release);
	snprintf(cmd, sizeof(cmd), "chroot '%s' /usr/bin/env -i '%s/trainer-webhook/trainer-webhook' --version",
		 root, in);
	assert_int_equal(run_shown(cmd, &out), 0);
	assert_non_null(strstr(out, want));
	free(out);
	out = NULL;
	snprintf(cmd, sizeof(cmd),
		 "chroot '%s' /usr/bin/env -i '%s/trainer-webhook/trainer-webhook' validate "
		 "'%s/torch-distributed.yaml'",
		 root, in, in);
	assert_int_equal(run_shown(cmd, &out), 0);
	assert_non_null(strstr(out, "ClusterTrainingRuntime/torch-distributed: ok"));
	free(out);
	out = NULL;
	/* kubectl-trainer, the krew plugin, runs it from beside itself */
	snprintf(cmd, sizeof(cmd),
		 "chroot '%s' /usr/bin/env -i '%s/trainer-webhook/kubectl-trainer' validate --summary "
		 "--runtimes '%s/torch-distributed.yaml' '%s/bad.yaml'",
		 root, in, in, in);
	assert_int_equal(run_shown(cmd, &out), 1);
	assert_non_null(strstr(out, "0 allowed, 1 denied"));
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tarball_validates_on_glibc_2_31),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}

